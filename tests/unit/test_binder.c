/*
 * Binder (provisioning.bind_pods), in virtual time through the actuator,
 * a fake cloud and a fake Kubernetes that records Bindings: the pods of a
 * packing are bound to the node launched for them once it is Ready; pods
 * that no longer fit it (its bound pods counted), that are bound already
 * or were recreated are skipped; a 409 is left to the scheduler and not
 * retried; a tainted node is waited for; a node never ready is given up;
 * and with the key off (the default) nothing is bound at all.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "buf.h"
#include "config.h"
#include "engine/actuator.h"
#include "engine/binder.h"
#include "engine/instruments.h"
#include "model.h"
#include "runtime/clock.h"
#include "runtime/executor.h"
#include "runtime/metrics.h"

#define S CLOCK_NS_PER_S
#define WALL0 1796032800

/* ---- a fake cloud: a launch reports its instances at once ---- */

struct fake_cloud {
	struct provider prov;
	int created;
};

static void fc_launch(struct provider *p, const char *group, int count,
		      provider_instance_cb on_instance, provider_done_cb on_done, void *ctx)
{
	struct fake_cloud *c = p->impl;
	struct provider_status st = {.code = PROVIDER_OK};
	int i;

	for (i = 0; i < count; i++) {
		struct provider_instance inst;

		memset(&inst, 0, sizeof(inst));
		snprintf(inst.id, sizeof(inst.id), "i-%d", c->created);
		snprintf(inst.provider_id, sizeof(inst.provider_id), "fake://%s/i-%d", group, c->created);
		snprintf(inst.group, sizeof(inst.group), "%s", group);
		c->created++;
		on_instance(ctx, &inst);
	}
	on_done(ctx, count, &st);
}

static void fc_terminate(struct provider *p, const char *group, const char *const *ids, size_t n,
			 provider_done_cb on_done, void *ctx)
{
	struct provider_status st = {.code = PROVIDER_OK};

	(void)p;
	(void)group;
	(void)ids;
	on_done(ctx, (int)n, &st);
}

static const struct provider_ops fake_provider_ops = {
	.kind = "fake",
	.launch = fc_launch,
	.terminate = fc_terminate,
};

/* ---- a fake Kubernetes that records Bindings ---- */

struct fake_kube {
	int binds;
	char bound[16][300];      /* "ns/name@node uid" */
	const char *conflict_pod; /* answer 409 for this pod */
	const char *error_pod;    /* answer 500 for this pod */
};

static int fk_bind(void *ctx, const char *ns, const char *pod, const char *uid, const char *node,
		   struct kube_status *st)
{
	struct fake_kube *k = ctx;

	if (k->conflict_pod && strcmp(pod, k->conflict_pod) == 0) {
		k->binds++;
		st->code = KUBE_CONFLICT;
		snprintf(st->message, sizeof(st->message), "pod %s is already assigned to node \"n0\"", pod);
		return -1;
	}
	if (k->error_pod && strcmp(pod, k->error_pod) == 0) {
		k->binds++;
		st->code = KUBE_ERROR;
		snprintf(st->message, sizeof(st->message), "bind pod %s/%s: 500 InternalError", ns, pod);
		return -1;
	}
	snprintf(k->bound[k->binds++ % 16], sizeof(k->bound[0]), "%s/%s@%s %s", ns, pod, node,
		 uid ? uid : "");
	st->code = KUBE_OK;
	return 0;
}

static const struct kubeops_ops fake_kube_ops = {
	.bind = fk_bind,
};

/* ---- fixture ---- */

struct world {
	struct clock *clock;
	struct executor *ex;
	struct fake_cloud cloud;
	struct fake_kube kube;
	struct kubeops kops;
	struct metrics *m;
	struct instruments ins;
	struct binder *b;
	struct actuator *act;
	struct logger log;
	char all_log[16384];
};

static void capture(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct world *w = ctx;
	size_t used = strlen(w->all_log);

	(void)level;
	(void)wall;
	snprintf(w->all_log + used, sizeof(w->all_log) - used, "%s\n", msg);
}

static struct world *world_new(bool enabled)
{
	struct world *w = calloc(1, sizeof(*w));
	struct actuator_config acfg;
	struct binder_config bcfg;

	w->clock = vclock_new(WALL0);
	w->ex = executor_new_virtual(w->clock);
	w->cloud.prov.ops = &fake_provider_ops;
	w->cloud.prov.impl = &w->cloud;
	w->cloud.prov.ex = w->ex;
	w->kops.ops = &fake_kube_ops;
	w->kops.ctx = &w->kube;
	w->log.write = capture;
	w->log.ctx = w;
	w->log.min_level = LOG_DEBUG;
	w->m = metrics_new();
	assert_int_equal(instruments_init(&w->ins, w->m, "test"), 0);
	binder_config_default(&bcfg);
	bcfg.enabled = enabled;
	bcfg.max_wait_s = 600;
	bcfg.ins = &w->ins;
	w->b = binder_new(w->ex, &w->kops, &bcfg, &w->log);
	assert_non_null(w->b);
	actuator_config_default(&acfg);
	acfg.hooks = binder_hooks(w->b);
	w->act = actuator_new(w->ex, &w->cloud.prov, &w->kops, &acfg, &w->log);
	return w;
}

static void world_free(struct world *w)
{
	executor_shutdown(w->ex, clock_now(w->clock));
	actuator_free(w->act);
	binder_free(w->b);
	metrics_free(w->m);
	vclock_free(w->clock);
	free(w);
}

static void run_for(struct world *w, int64_t seconds)
{
	executor_run_until(w->ex, clock_now(w->clock) + seconds * S);
}

/* The counter luascale_pod_bindings_total{outcome}, -1 when absent. */
static double bindings(struct world *w, const char *outcome)
{
	struct buf b = BUF_INIT;
	char key[128];
	const char *at;
	double v = -1;

	assert_int_equal(metrics_render(w->m, &b), 0);
	snprintf(key, sizeof(key), "\nluascale_pod_bindings_total{outcome=\"%s\"} ", outcome);
	at = strstr(b.data, key);
	if (at)
		v = strtod(at + strlen(key), NULL);
	buf_free(&b);
	return v;
}

/* A snapshot with group g1 (4 cpu, 16Gi, 110 pods; label pool=a) and
 * 'items' (JSON), observed by the actuator and the binder as a round does. */
static struct snapshot *snap(struct world *w, const char *items, const char *tmpl_taint)
{
	char json[16384];
	struct node_group g;
	struct kv sel = {"luascale.io/node-group", "g1"};
	struct kv lab[2] = {{"luascale.io/node-group", "g1"}, {"pool", "a"}};
	struct taint t = {tmpl_taint, "", TAINT_NO_SCHEDULE};
	struct snapshot *s = snapshot_new();
	struct errbuf err;

	memset(&g, 0, sizeof(g));
	g.name = "g1";
	g.max = 10;
	g.selector.items = &sel;
	g.selector.n = 1;
	g.target = -1;
	g.tmpl.allocatable.cpu_m = 4000;
	g.tmpl.allocatable.memory = 16LL << 30;
	g.tmpl.allocatable.pods = 110;
	g.tmpl.labels.items = lab;
	g.tmpl.labels.n = 2;
	if (tmpl_taint) {
		g.tmpl.taints = &t;
		g.tmpl.n_taints = 1;
	}
	snprintf(json, sizeof(json), "{\"kind\":\"List\",\"items\":[%s]}", items);
	if (snapshot_add_json(s, json, strlen(json), "test", &err) < 0 ||
	    snapshot_set_groups(s, &g, 1, &err) < 0 ||
	    snapshot_finish(s, clock_wall(w->clock), &err) < 0)
		fail_msg("%s", err.msg);
	actuator_observe(w->act, s);
	binder_observe(w->b, s);
	return s;
}

/* One round: the cluster 'items' observed, then 'seconds' of the executor. */
static void observe_for(struct world *w, const char *items, int64_t seconds)
{
	struct snapshot *s = snap(w, items, NULL);

	run_for(w, seconds);
	snapshot_free(s);
}

/* A pending pod the scheduler marked Unschedulable ('cpu' e.g. "1500m"),
 * selecting pool=a; 'node' "" for unbound. */
static void pod_json(char *out, size_t len, const char *name, const char *uid, const char *cpu,
		     const char *node, const char *tolerate)
{
	char tol[160] = "";

	if (tolerate)
		snprintf(tol, sizeof(tol), ",\"tolerations\":[{\"key\":\"%s\",\"operator\":\"Exists\"}]",
			 tolerate);
	snprintf(out, len,
		 "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"%s\","
		 "\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"rs\",\"controller\":true}]},"
		 "\"spec\":{\"nodeName\":\"%s\",\"nodeSelector\":{\"pool\":\"a\"}%s,\"containers\":[{\"name\":\"c\","
		 "\"resources\":{\"requests\":{\"cpu\":\"%s\",\"memory\":\"1Gi\"}}}]},"
		 "\"status\":{\"phase\":\"%s\"%s}}",
		 name, uid, node, tol, cpu, node[0] ? "Running" : "Pending",
		 node[0] ? "" : ",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\"}]");
}

/* The node of instance i-'k' of g1: Ready, pool=a, 4 cpu, optional taint. */
static void node_json(char *out, size_t len, const char *name, int k, bool ready, const char *taint,
		      const char *pool)
{
	char t[200] = "";

	if (taint)
		snprintf(t, sizeof(t), ",\"taints\":[{\"key\":\"%s\",\"effect\":\"NoSchedule\"}]", taint);
	snprintf(out, len,
		 "{\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"labels\":{\"luascale.io/node-group\":\"g1\",\"pool\":\"%s\"}},"
		 "\"spec\":{\"providerID\":\"fake://g1/i-%d\"%s},\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"16Gi\",\"pods\":\"110\"},"
		 "\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\"}]}}",
		 name, pool, k, t, ready ? "True" : "False");
}

/* Plans and runs scale_up g1 +'count' on 's'. */
static void scale_up(struct world *w, const struct snapshot *s, int count)
{
	struct plan p;
	struct action a;

	memset(&a, 0, sizeof(a));
	a.type = ACTION_SCALE_UP;
	a.group = "g1";
	a.count = count;
	a.reason = "pending pods";
	a.where = "";
	plan_init(&p);
	assert_int_equal(plan_add(&p, &a), 0);
	assert_int_equal(actuator_execute(w->act, &p, s), 0);
	plan_free(&p);
	run_for(w, 1);
}

/* Two pending pods of 1.5 cpu each: one packing for one new node. */
static struct snapshot *two_pending(struct world *w, char *items, size_t len)
{
	char p1[1024], p2[1024];

	pod_json(p1, sizeof(p1), "web-1", "u1", "1500m", "", NULL);
	pod_json(p2, sizeof(p2), "web-2", "u2", "1500m", "", NULL);
	snprintf(items, len, "%s,%s", p1, p2);
	return snap(w, items, NULL);
}

static bool was_bound(const struct world *w, const char *what)
{
	int i;

	for (i = 0; i < w->kube.binds && i < 16; i++)
		if (strcmp(w->kube.bound[i], what) == 0)
			return true;
	return false;
}

/* ---- tests ---- */

static void test_binds_the_packing_when_its_node_is_ready(void **state)
{
	struct world *w = world_new(true);
	char items[8192], nd[1024], pods[4096];
	struct binder_stats st;
	struct snapshot *s;

	(void)state;
	s = two_pending(w, pods, sizeof(pods));
	scale_up(w, s, 1);
	snapshot_free(s);
	binder_get_stats(w->b, &st);
	assert_int_equal(st.followed, 2);
	/* registered, not Ready yet: nothing */
	node_json(nd, sizeof(nd), "n1", 0, false, NULL, "a");
	snprintf(items, sizeof(items), "%s,%s", pods, nd);
	observe_for(w, items, 1);
	assert_int_equal(w->kube.binds, 0);
	/* Ready: both bound to it, with their uids */
	node_json(nd, sizeof(nd), "n1", 0, true, NULL, "a");
	snprintf(items, sizeof(items), "%s,%s", pods, nd);
	observe_for(w, items, 1);
	assert_int_equal(w->kube.binds, 2);
	assert_true(was_bound(w, "default/web-1@n1 u1"));
	assert_true(was_bound(w, "default/web-2@n1 u2"));
	binder_get_stats(w->b, &st);
	assert_int_equal(st.bound, 2);
	assert_int_equal(st.followed, 0);
	assert_true(bindings(w, "bound") == 2);
	assert_non_null(strstr(w->all_log, "bind_pods: bound pod default/web-1 to node n1"));
	/* the association is gone: a later round binds nothing more */
	observe_for(w, items, 1);
	assert_int_equal(w->kube.binds, 2);
	world_free(w);
}

static void test_skips_pods_that_no_longer_fit(void **state)
{
	struct world *w = world_new(true);
	char items[8192], nd[1024], pods[4096], other[1024];
	struct binder_stats st;
	struct snapshot *s;

	(void)state;
	s = two_pending(w, pods, sizeof(pods));
	scale_up(w, s, 1);
	snapshot_free(s);
	/* by now a pod of 2 cpu runs on the new node: room for one of the two */
	node_json(nd, sizeof(nd), "n1", 0, true, NULL, "a");
	pod_json(other, sizeof(other), "db-0", "u9", "2", "n1", NULL);
	snprintf(items, sizeof(items), "%s,%s,%s", pods, nd, other);
	observe_for(w, items, 1);
	assert_int_equal(w->kube.binds, 1);
	assert_true(was_bound(w, "default/web-1@n1 u1"));
	binder_get_stats(w->b, &st);
	assert_int_equal(st.bound, 1);
	assert_int_equal(st.skipped, 1);
	assert_true(bindings(w, "skipped") == 1);
	assert_non_null(strstr(w->all_log, "pod default/web-2 no longer fits node n1 (insufficient cpu"));
	world_free(w);
}

static void test_skips_pods_whose_node_lost_a_label_they_select(void **state)
{
	struct world *w = world_new(true);
	char items[8192], nd[1024], pods[4096];
	struct binder_stats st;
	struct snapshot *s;

	(void)state;
	s = two_pending(w, pods, sizeof(pods));
	scale_up(w, s, 1);
	snapshot_free(s);
	/* the node came up in another pool than its template said */
	node_json(nd, sizeof(nd), "n1", 0, true, NULL, "b");
	snprintf(items, sizeof(items), "%s,%s", pods, nd);
	observe_for(w, items, 1);
	assert_int_equal(w->kube.binds, 0);
	binder_get_stats(w->b, &st);
	assert_int_equal(st.skipped, 2);
	assert_int_equal(st.followed, 0);
	world_free(w);
}

static void test_skips_pods_bound_already_or_recreated(void **state)
{
	struct world *w = world_new(true);
	char items[8192], nd[1024], n0[1024], pods[4096], p1[1024], p2[1024];
	struct binder_stats st;
	struct snapshot *s;

	(void)state;
	s = two_pending(w, pods, sizeof(pods));
	scale_up(w, s, 1);
	snapshot_free(s);
	/* the scheduler put web-1 on n0; web-2 was deleted and made again */
	node_json(n0, sizeof(n0), "n0", 99, true, NULL, "a");
	node_json(nd, sizeof(nd), "n1", 0, true, NULL, "a");
	pod_json(p1, sizeof(p1), "web-1", "u1", "1500m", "n0", NULL);
	pod_json(p2, sizeof(p2), "web-2", "u2-new", "1500m", "", NULL);
	snprintf(items, sizeof(items), "%s,%s,%s,%s", p1, p2, n0, nd);
	observe_for(w, items, 1);
	assert_int_equal(w->kube.binds, 0);
	binder_get_stats(w->b, &st);
	assert_int_equal(st.skipped, 2);
	assert_int_equal(st.bound, 0);
	assert_non_null(strstr(w->all_log, "web-1 no longer pending"));
	assert_non_null(strstr(w->all_log, "web-2 was recreated"));
	world_free(w);
}

static void test_conflict_is_left_to_the_scheduler(void **state)
{
	struct world *w = world_new(true);
	char items[8192], nd[1024], pods[4096];
	struct binder_stats st;
	struct snapshot *s;

	(void)state;
	s = two_pending(w, pods, sizeof(pods));
	scale_up(w, s, 1);
	snapshot_free(s);
	w->kube.conflict_pod = "web-1"; /* the scheduler got there first */
	node_json(nd, sizeof(nd), "n1", 0, true, NULL, "a");
	snprintf(items, sizeof(items), "%s,%s", pods, nd);
	observe_for(w, items, 1);
	assert_int_equal(w->kube.binds, 2); /* the conflict does not stop the others */
	assert_true(was_bound(w, "default/web-2@n1 u2"));
	binder_get_stats(w->b, &st);
	assert_int_equal(st.conflicts, 1);
	assert_int_equal(st.bound, 1);
	assert_true(bindings(w, "conflict") == 1);
	assert_non_null(strstr(w->all_log, "pod default/web-1 not bound to node n1: pod web-1 is already assigned"));
	assert_non_null(strstr(w->all_log, "left to the scheduler"));
	/* nothing is retried, however many rounds follow */
	observe_for(w, items, 30);
	assert_int_equal(w->kube.binds, 2);
	world_free(w);
}

static void test_error_stops_the_pass_without_retry(void **state)
{
	struct world *w = world_new(true);
	char items[8192], nd[1024], pods[4096];
	struct binder_stats st;
	struct snapshot *s;

	(void)state;
	s = two_pending(w, pods, sizeof(pods));
	scale_up(w, s, 1);
	snapshot_free(s);
	w->kube.error_pod = "web-1";
	node_json(nd, sizeof(nd), "n1", 0, true, NULL, "a");
	snprintf(items, sizeof(items), "%s,%s", pods, nd);
	observe_for(w, items, 1);
	assert_int_equal(w->kube.binds, 1); /* web-1 failed: web-2 is not tried */
	binder_get_stats(w->b, &st);
	assert_int_equal(st.errors, 1);
	assert_int_equal(st.skipped, 1);
	assert_non_null(strstr(w->all_log, "binding pod default/web-1 to node n1 failed: bind pod default/web-1: 500 InternalError"));
	observe_for(w, items, 30);
	assert_int_equal(w->kube.binds, 1);
	world_free(w);
}

static void test_tainted_node_is_waited_for_then_bound(void **state)
{
	struct world *w = world_new(true);
	char items[8192], nd[1024], pods[4096], p1[1024], p2[1024];
	struct snapshot *s;

	(void)state;
	/* the group's template taint is expected (the pods tolerate it);
	 * a startup taint is not */
	pod_json(p1, sizeof(p1), "web-1", "u1", "1500m", "", "dedicated");
	pod_json(p2, sizeof(p2), "web-2", "u2", "1500m", "", "dedicated");
	snprintf(pods, sizeof(pods), "%s,%s", p1, p2);
	s = snap(w, pods, "dedicated");
	scale_up(w, s, 1);
	snapshot_free(s);
	node_json(nd, sizeof(nd), "n1", 0, true, "node.cloudprovider.kubernetes.io/uninitialized", "a");
	snprintf(items, sizeof(items), "%s,%s", pods, nd);
	s = snap(w, items, "dedicated");
	run_for(w, 1);
	snapshot_free(s);
	assert_int_equal(w->kube.binds, 0);
	node_json(nd, sizeof(nd), "n1", 0, true, "dedicated", "a");
	snprintf(items, sizeof(items), "%s,%s", pods, nd);
	s = snap(w, items, "dedicated");
	run_for(w, 1);
	snapshot_free(s);
	assert_int_equal(w->kube.binds, 2);
	world_free(w);
}

static void test_node_never_ready_is_given_up(void **state)
{
	struct world *w = world_new(true);
	char pods[4096];
	struct binder_stats st;
	struct snapshot *s;

	(void)state;
	s = two_pending(w, pods, sizeof(pods));
	scale_up(w, s, 1);
	snapshot_free(s);
	run_for(w, 601);
	s = snap(w, pods, NULL);
	snapshot_free(s);
	binder_get_stats(w->b, &st);
	assert_int_equal(st.followed, 0);
	assert_int_equal(st.skipped, 2);
	assert_int_equal(w->kube.binds, 0);
	assert_non_null(strstr(w->all_log, "its 2 pod(s) are left to the scheduler"));
	world_free(w);
}

static void test_later_packing_does_not_take_followed_pods(void **state)
{
	struct world *w = world_new(true);
	char pods[4096], items[8192], nd[1024], nd2[1024];
	struct binder_stats st;
	struct snapshot *s;

	(void)state;
	s = two_pending(w, pods, sizeof(pods));
	scale_up(w, s, 1);
	/* the next round, still pending: another launch carries nothing */
	scale_up(w, s, 1);
	snapshot_free(s);
	binder_get_stats(w->b, &st);
	assert_int_equal(st.followed, 2);
	node_json(nd, sizeof(nd), "n1", 0, true, NULL, "a");
	node_json(nd2, sizeof(nd2), "n2", 1, true, NULL, "a");
	snprintf(items, sizeof(items), "%s,%s,%s", pods, nd2, nd);
	observe_for(w, items, 1);
	assert_int_equal(w->kube.binds, 2);
	assert_true(was_bound(w, "default/web-1@n1 u1"));
	assert_true(was_bound(w, "default/web-2@n1 u2"));
	world_free(w);
}

/* 'pod' with 'extra' spliced into its spec ("\"schedulerName\":\"x\"," ...). */
static void pod_json_extra(char *out, size_t len, const char *name, const char *extra)
{
	char base[1024];
	const char *at;

	pod_json(base, sizeof(base), name, name, "1", "", NULL);
	at = strstr(base, "\"spec\":{") + strlen("\"spec\":{");
	snprintf(out, len, "%.*s%s%s", (int)(at - base), base, extra, at);
}

static void test_never_binds_what_only_the_scheduler_evaluates(void **state)
{
	static const char *const extras[] = {
		"\"schedulerName\":\"volcano\",",
		"\"affinity\":{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[]}},",
		"\"topologySpreadConstraints\":[{\"maxSkew\":1,\"topologyKey\":\"zone\",\"whenUnsatisfiable\":\"DoNotSchedule\"}],",
		"\"volumes\":[{\"name\":\"data\",\"persistentVolumeClaim\":{\"claimName\":\"data-0\"}}],",
	};
	struct world *w = world_new(true);
	char pods[8192], items[12288], nd[1024], one[1200], plain[1024];
	struct binder_stats st;
	struct snapshot *s;
	size_t i, used = 0;

	(void)state;
	pod_json(plain, sizeof(plain), "plain", "u0", "1", "", NULL);
	used = (size_t)snprintf(pods, sizeof(pods), "%s", plain);
	for (i = 0; i < sizeof(extras) / sizeof(extras[0]); i++) {
		char name[16];

		snprintf(name, sizeof(name), "odd-%zu", i);
		pod_json_extra(one, sizeof(one), name, extras[i]);
		used += (size_t)snprintf(pods + used, sizeof(pods) - used, ",%s", one);
	}
	s = snap(w, pods, NULL);
	for (i = 0; i < s->n_pods; i++)
		assert_int_equal(!!(s->pods[i].flags & POD_SCHEDULER_ONLY),
				 strcmp(s->pods[i].name, "plain") != 0);
	scale_up(w, s, 1);
	snapshot_free(s);
	binder_get_stats(w->b, &st);
	assert_int_equal(st.followed, 1); /* only the plain pod */
	node_json(nd, sizeof(nd), "n1", 0, true, NULL, "a");
	snprintf(items, sizeof(items), "%s,%s", pods, nd);
	observe_for(w, items, 1);
	assert_int_equal(w->kube.binds, 1);
	assert_true(was_bound(w, "default/plain@n1 u0"));
	world_free(w);
}

static void test_off_by_default_binds_nothing(void **state)
{
	static const char yaml[] =
		"cluster: {kubeconfig: /etc/kube/config, context: prod}\n"
		"policy: {path: /policies/p.lua}\n"
		"node_groups:\n  - {name: w, max: 5, template: {allocatable: {cpu: 4, memory: 16Gi}}}\n";
	struct world *w;
	char items[8192], nd[1024], pods[4096];
	struct binder_config bc;
	struct binder_stats st;
	struct snapshot *s;
	struct errbuf err;
	struct config *c;

	(void)state;
	c = config_parse(yaml, strlen(yaml), "config.yaml", NULL, NULL, &err);
	assert_non_null(c);
	assert_false(c->bind_pods);
	config_free(c);
	binder_config_default(&bc);
	assert_false(bc.enabled);
	w = world_new(bc.enabled);
	assert_null(binder_hooks(w->b));
	s = two_pending(w, pods, sizeof(pods));
	scale_up(w, s, 1);
	snapshot_free(s);
	node_json(nd, sizeof(nd), "n1", 0, true, NULL, "a");
	snprintf(items, sizeof(items), "%s,%s", pods, nd);
	observe_for(w, items, 1);
	assert_int_equal(w->kube.binds, 0);
	binder_get_stats(w->b, &st);
	assert_int_equal(st.followed, 0);
	assert_int_equal(st.bound + st.skipped + st.conflicts + st.errors, 0);
	world_free(w);
}

static void test_config_key_is_validated(void **state)
{
	static const char on[] =
		"cluster: {kubeconfig: /etc/kube/config, context: prod}\n"
		"policy: {path: /policies/p.lua}\n"
		"provisioning: {bind_pods: true}\n";
	static const char bad[] =
		"cluster: {kubeconfig: /etc/kube/config, context: prod}\n"
		"policy: {path: /policies/p.lua}\n"
		"provisioning: {bind_pods: sometimes}\n";
	struct errbuf err;
	struct config *c;

	(void)state;
	c = config_parse(on, strlen(on), "config.yaml", NULL, NULL, &err);
	assert_non_null(c);
	assert_true(c->bind_pods);
	config_free(c);
	c = config_parse(bad, strlen(bad), "config.yaml", NULL, NULL, &err);
	assert_null(c);
	assert_non_null(strstr(err.msg, "config.yaml:3:"));
	assert_non_null(strstr(err.msg, "bind_pods"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_binds_the_packing_when_its_node_is_ready),
		cmocka_unit_test(test_skips_pods_that_no_longer_fit),
		cmocka_unit_test(test_skips_pods_whose_node_lost_a_label_they_select),
		cmocka_unit_test(test_skips_pods_bound_already_or_recreated),
		cmocka_unit_test(test_conflict_is_left_to_the_scheduler),
		cmocka_unit_test(test_error_stops_the_pass_without_retry),
		cmocka_unit_test(test_tainted_node_is_waited_for_then_bound),
		cmocka_unit_test(test_node_never_ready_is_given_up),
		cmocka_unit_test(test_later_packing_does_not_take_followed_pods),
		cmocka_unit_test(test_never_binds_what_only_the_scheduler_evaluates),
		cmocka_unit_test(test_off_by_default_binds_nothing),
		cmocka_unit_test(test_config_key_is_validated),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
