/*
 * Actuator, in virtual time with a fake cloud and a fake Kubernetes: launches
 * run in parallel and report each instance as it exists, in-flight capacity
 * is counted so nothing is launched twice, instances that never become
 * nodes are terminated and their group backed off, drains evict through the
 * Eviction API (retrying what a PDB refused), delete only after the drain,
 * dry runs do nothing, and a shutdown leaves nothing unaccounted for.
 * Drains re-check every pod as fetched (protected, safe-to-evict) before
 * evicting, stop when the cordon fails, give back luascale's cordons when
 * a removal does not finish (also after a restart), never act twice on a
 * node deleted while the cache lags, and respect max_concurrent_drains.
 * On the daemon's pool (real time), slow launch calls, more than its base
 * threads, are all in the cloud at once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "engine/actuator.h"
#include "engine/safety.h"
#include "arena.h"
#include "model.h"
#include "runtime/clock.h"
#include "sched.h"
#include "runtime/executor.h"

#define S CLOCK_NS_PER_S
#define WALL0 1796032800

/* ---- a fake cloud: a launch takes 'call_s'; instances appear one per second ---- */

struct fake_cloud {
	struct provider prov;
	struct executor *ex;
	int64_t call_s;
	int64_t step_ns; /* between instances, and the call's own latency when call_s is 0 */
	pthread_mutex_t mu; /* the real-time test launches from several threads */
	enum provider_error fail; /* the next launches fail with this */
	bool give_back;           /* launches report their instances, then give them back (a stockout) */
	int created;
	char ids[64][128];
	int terminated;
	char terminated_ids[64][128];
	int terminate_fails;            /* the next terminates fail ... */
	enum provider_error terminate_code; /* ... with this */
	int64_t terminate_retry_after;  /* ... saying Retry-After (s) */
	int terminate_calls;
	int deleted_at_terminate;       /* kube deletes seen when the first terminate succeeded */
	int *kube_deleted;              /* the fake API's delete count */
	struct provider_group *groups;  /* what list_groups would say (the sweep) */
	size_t n_groups;
	int launches_running, max_parallel;
};

struct fake_launch {
	struct fake_cloud *c;
	char group[64];
	int count, made, first;
	provider_instance_cb on_instance;
	provider_done_cb on_done;
	void *ctx;
};

static void fake_launch_step(void *arg, bool cancelled)
{
	struct fake_launch *l = arg;
	struct fake_cloud *c = l->c;
	struct provider_status st = {.code = PROVIDER_OK};

	pthread_mutex_lock(&c->mu);
	if (cancelled || c->fail != PROVIDER_OK) {
		st.code = cancelled ? PROVIDER_CANCELLED : c->fail;
		snprintf(st.message, sizeof(st.message), "%s", cancelled ? "cancelled" : "InsufficientInstanceCapacity");
		c->launches_running--;
		pthread_mutex_unlock(&c->mu);
		l->on_done(l->ctx, l->made, &st);
		free(l);
		return;
	}
	if (l->made < l->count) {
		struct provider_instance inst;

		memset(&inst, 0, sizeof(inst));
		snprintf(inst.id, sizeof(inst.id), "i-%d", c->created);
		snprintf(inst.provider_id, sizeof(inst.provider_id), "fake://%s/i-%d", l->group, c->created);
		snprintf(inst.group, sizeof(inst.group), "%s", l->group);
		snprintf(c->ids[c->created % 64], sizeof(c->ids[0]), "%s", inst.id);
		c->created++;
		l->made++;
		pthread_mutex_unlock(&c->mu);
		l->on_instance(l->ctx, &inst);
		executor_after(c->ex, c->step_ns, fake_launch_step, l);
		return;
	}
	c->launches_running--;
	pthread_mutex_unlock(&c->mu);
	if (c->give_back) {
		int i;

		for (i = 0; i < l->made; i++) {
			struct provider_instance inst;

			memset(&inst, 0, sizeof(inst));
			snprintf(inst.id, sizeof(inst.id), "i-%d", l->first + i);
			snprintf(inst.group, sizeof(inst.group), "%s", l->group);
			inst.state = INSTANCE_GONE;
			l->on_instance(l->ctx, &inst);
		}
		st.code = PROVIDER_NO_CAPACITY;
		snprintf(st.message, sizeof(st.message), "ZONE_RESOURCE_POOL_EXHAUSTED");
		l->on_done(l->ctx, 0, &st);
		free(l);
		return;
	}
	l->on_done(l->ctx, l->made, &st);
	free(l);
}

static void fake_launch(struct provider *p, const char *group, int count,
			provider_instance_cb on_instance, provider_done_cb on_done, void *ctx)
{
	struct fake_cloud *c = p->impl;
	struct fake_launch *l = calloc(1, sizeof(*l));

	l->c = c;
	snprintf(l->group, sizeof(l->group), "%s", group);
	l->count = count;
	l->on_instance = on_instance;
	l->on_done = on_done;
	l->ctx = ctx;
	pthread_mutex_lock(&c->mu);
	l->first = c->created;
	c->launches_running++;
	if (c->launches_running > c->max_parallel)
		c->max_parallel = c->launches_running;
	pthread_mutex_unlock(&c->mu);
	/* the call itself takes call_s before the first instance exists */
	executor_after(c->ex, c->call_s ? c->call_s * S : c->step_ns, fake_launch_step, l);
}

static void fake_terminate(struct provider *p, const char *group, const char *const *ids, size_t n,
			   provider_done_cb on_done, void *ctx)
{
	struct fake_cloud *c = p->impl;
	struct provider_status st = {.code = PROVIDER_OK};
	size_t i;

	(void)group;
	c->terminate_calls++;
	if (c->terminate_fails > 0) {
		c->terminate_fails--;
		st.code = c->terminate_code;
		st.retry_after_s = c->terminate_retry_after;
		snprintf(st.message, sizeof(st.message), "TerminateInstances: 403 AccessDenied");
		on_done(ctx, 0, &st);
		return;
	}
	if (c->terminated == 0 && c->kube_deleted)
		c->deleted_at_terminate = *c->kube_deleted;
	for (i = 0; i < n; i++)
		snprintf(c->terminated_ids[c->terminated++ % 64], sizeof(c->terminated_ids[0]), "%s", ids[i]);
	on_done(ctx, (int)n, &st);
}

static int fake_map_node(struct provider *p, const char *provider_id, char *group, size_t glen,
			 char *instance, size_t ilen)
{
	const char *g, *slash;

	(void)p;
	if (strncmp(provider_id, "fake://", 7) != 0)
		return -1;
	g = provider_id + 7;
	slash = strchr(g, '/');
	if (!slash)
		return -1;
	snprintf(group, glen, "%.*s", (int)(slash - g), g);
	snprintf(instance, ilen, "%s", slash + 1);
	return 0;
}

static const struct provider_ops fake_provider_ops = {
	.kind = "fake",
	.launch = fake_launch,
	.terminate = fake_terminate,
	.map_node = fake_map_node,
};

/* ---- a fake Kubernetes: one node's pods, PDB refusing the first N evictions ---- */

struct fake_pod {
	char name[32];
	bool daemonset;
	bool present;
	int refusals; /* evictions to refuse with 429 first */
	const char *json; /* the pod as the API would serve it; NULL: a plain ReplicaSet pod */
};

struct fake_kube {
	struct fake_pod pods[8];
	size_t n_pods;
	bool cordoned;
	bool marked;           /* carries luascale.io/cordoned-by */
	int cordon_fails;      /* the next cordons fail with a 500 */
	int delete_fails;      /* the next deletes fail with a 500 */
	bool throttle;         /* refusals are the API server's 429s, not a PDB's */
	int evict_fails;       /* the next evictions fail with a 500 */
	int cordons, uncordons;
	int evictions, refused, deleted, labels, events;
	char last_event_reason[64];
	char event_log[8192]; /* "node reason: message" lines */
};

static int fk_cordon(void *ctx, const char *node, bool on, struct kube_status *st)
{
	struct fake_kube *k = ctx;

	(void)node;
	if (k->cordon_fails > 0) {
		k->cordon_fails--;
		st->code = KUBE_ERROR;
		snprintf(st->message, sizeof(st->message), "cordon node %s: 500 InternalError", node);
		return -1;
	}
	k->cordoned = on;
	if (on)
		k->cordons++;
	else
		k->uncordons++;
	st->code = KUBE_OK;
	return 0;
}

static int fk_label(void *ctx, const char *node, const char *key, const char *value,
		    struct kube_status *st)
{
	struct fake_kube *k = ctx;

	(void)node;
	if (strcmp(key, ACTUATOR_CORDON_MARK) == 0)
		k->marked = value != NULL;
	else
		k->labels++;
	st->code = KUBE_OK;
	return 0;
}

static int fk_taint(void *ctx, const char *node, const char *key, const char *value,
		    enum taint_effect e, bool remove, struct kube_status *st)
{
	(void)ctx;
	(void)node;
	(void)key;
	(void)value;
	(void)e;
	(void)remove;
	st->code = KUBE_OK;
	return 0;
}

static int fk_evict(void *ctx, const char *ns, const char *pod, int64_t grace, struct kube_status *st)
{
	struct fake_kube *k = ctx;
	size_t i;

	(void)ns;
	(void)grace;
	for (i = 0; i < k->n_pods; i++) {
		if (!k->pods[i].present || strcmp(k->pods[i].name, pod) != 0)
			continue;
		assert_false(k->pods[i].daemonset); /* never evict a DaemonSet pod */
		if (k->evict_fails > 0) {
			k->evict_fails--;
			st->code = KUBE_ERROR;
			snprintf(st->message, sizeof(st->message), "500 Internal Server Error");
			return 0;
		}
		if (k->pods[i].refusals > 0) {
			k->pods[i].refusals--;
			k->refused++;
			st->code = k->throttle ? KUBE_THROTTLED : KUBE_PDB_BLOCKED;
			snprintf(st->message, sizeof(st->message), "%s", k->throttle ?
				 "429 TooManyRequests: the server is busy" :
				 "Cannot evict pod as it would violate the pod's disruption budget.");
			st->retry_after_s = k->throttle ? 7 : 0;
			return 0;
		}
		k->pods[i].present = false;
		k->evictions++;
		st->code = KUBE_OK;
		return 0;
	}
	st->code = KUBE_NOT_FOUND;
	return 0;
}

static int fk_delete(void *ctx, const char *node, struct kube_status *st)
{
	struct fake_kube *k = ctx;
	size_t i;

	(void)node;
	for (i = 0; i < k->n_pods; i++)
		assert_false(k->pods[i].present && !k->pods[i].daemonset); /* only after the drain */
	if (k->delete_fails > 0) {
		k->delete_fails--;
		st->code = KUBE_ERROR;
		snprintf(st->message, sizeof(st->message), "delete node %s: 500 InternalError", node);
		return -1;
	}
	k->deleted++;
	st->code = KUBE_OK;
	return 0;
}

/* The pod decoded by the model, as kubeops_http decodes what it lists. */
static struct pod *fake_pod_decode(const struct fake_pod *fp)
{
	char json[2048];
	struct snapshot *s = snapshot_new();
	struct errbuf err;
	struct pod *p;

	if (fp->json)
		snprintf(json, sizeof(json), "%s", fp->json);
	else
		snprintf(json, sizeof(json),
			 "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\","
			 "\"ownerReferences\":[{\"kind\":\"%s\",\"name\":\"x\",\"controller\":true}]},"
			 "\"spec\":{\"nodeName\":\"n0\",\"containers\":[{\"name\":\"c\"}]},"
			 "\"status\":{\"phase\":\"Running\"}}",
			 fp->name, fp->daemonset ? "DaemonSet" : "ReplicaSet");
	if (snapshot_add_json(s, json, strlen(json), "fake pod", &err) < 0 || s->n_pods != 1)
		fail_msg("fake pod %s: %s", fp->name, err.msg);
	p = pod_clone(&s->pods[0]);
	snapshot_free(s);
	return p;
}

static int fk_node_pods(void *ctx, const char *node, struct kube_pod_ref **out, size_t *n,
			struct kube_status *st)
{
	struct fake_kube *k = ctx;
	size_t i, m = 0;

	(void)node;
	*out = calloc(k->n_pods + 1, sizeof(**out));
	for (i = 0; i < k->n_pods; i++) {
		if (!k->pods[i].present)
			continue;
		(*out)[m].pod = fake_pod_decode(&k->pods[i]);
		snprintf((*out)[m].ns, sizeof((*out)[m].ns), "%s", (*out)[m].pod->ns);
		snprintf((*out)[m].name, sizeof((*out)[m].name), "%s", k->pods[i].name);
		(*out)[m].evictable = sched_pod_evictable((*out)[m].pod);
		m++;
	}
	*n = m;
	st->code = KUBE_OK;
	return 0;
}

static int fk_event(void *ctx, const char *node, const char *type, const char *reason, const char *msg)
{
	struct fake_kube *k = ctx;

	size_t used = strlen(k->event_log);

	(void)type;
	k->events++;
	snprintf(k->last_event_reason, sizeof(k->last_event_reason), "%s", reason);
	snprintf(k->event_log + used, sizeof(k->event_log) - used, "%s %s: %s\n", node, reason, msg);
	return 0;
}

static const struct kubeops_ops fake_kube_ops = {
	.cordon = fk_cordon,
	.label = fk_label,
	.annotate = fk_label,
	.taint = fk_taint,
	.evict = fk_evict,
	.delete_node = fk_delete,
	.node_pods = fk_node_pods,
	.event = fk_event,
};

/* ---- fixture ---- */

struct world {
	struct clock *clock;
	struct executor *ex;
	struct fake_cloud cloud;
	struct fake_kube kube;
	struct kubeops kops;
	struct actuator *act;
	struct logger log;
	int log_lines;       /* at info and above */
	char last_log[1024];
	char all_log[32768]; /* every line, newline-separated (the first 32 KiB) */
};

static void capture(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct world *w = ctx;

	(void)wall;
	if (level >= LOG_INFO)
		w->log_lines++;
	snprintf(w->last_log, sizeof(w->last_log), "%s", msg);
	{
		size_t used = strlen(w->all_log);

		snprintf(w->all_log + used, sizeof(w->all_log) - used, "%s\n", msg);
	}
}

static struct world *world_new_cfg(const struct actuator_config *given)
{
	struct world *w = calloc(1, sizeof(*w));
	struct actuator_config cfg = *given;

	w->clock = vclock_new(WALL0);
	w->ex = executor_new_virtual(w->clock);
	w->cloud.prov.ops = &fake_provider_ops;
	w->cloud.prov.impl = &w->cloud;
	w->cloud.prov.ex = w->ex;
	w->cloud.ex = w->ex;
	w->cloud.call_s = 2;
	w->cloud.step_ns = S;
	pthread_mutex_init(&w->cloud.mu, NULL);
	w->kops.ops = &fake_kube_ops;
	w->kops.ctx = &w->kube;
	w->cloud.kube_deleted = &w->kube.deleted;
	w->log.write = capture;
	w->log.ctx = w;
	w->log.min_level = LOG_DEBUG;
	w->act = actuator_new(w->ex, &w->cloud.prov, &w->kops, &cfg, &w->log);
	return w;
}

static struct world *world_new(bool dry_run)
{
	struct actuator_config cfg;

	actuator_config_default(&cfg);
	cfg.dry_run = dry_run;
	return world_new_cfg(&cfg);
}

static void world_free(struct world *w)
{
	executor_shutdown(w->ex, clock_now(w->clock));
	actuator_free(w->act);
	vclock_free(w->clock);
	free(w);
}

static void run_for(struct world *w, int64_t seconds)
{
	executor_run_until(w->ex, clock_now(w->clock) + seconds * S);
}

static void add_action(struct plan *p, enum action_type t, const char *target, int64_t count)
{
	struct action a;

	memset(&a, 0, sizeof(a));
	a.type = t;
	if (t == ACTION_SCALE_UP) {
		a.group = (char *)target;
		a.count = count;
	} else {
		a.node = (char *)target;
	}
	a.reason = "test";
	a.where = "";
	assert_int_equal(plan_add(p, &a), 0);
}

/* A snapshot with groups g1, g2 and the given nodes (JSON items). */
static struct snapshot *snap(struct world *w, const char *items)
{
	char json[8192];
	struct node_group g[2];
	struct kv s1 = {"luascale.io/node-group", "g1"}, s2 = {"luascale.io/node-group", "g2"};
	struct snapshot *s = snapshot_new();
	struct errbuf err;

	memset(g, 0, sizeof(g));
	g[0].name = "g1";
	g[0].max = 10;
	g[0].selector.items = &s1;
	g[0].selector.n = 1;
	g[0].target = -1;
	g[0].tmpl.allocatable.cpu_m = 4000;
	g[0].tmpl.allocatable.memory = 16LL << 30;
	g[0].tmpl.allocatable.pods = 110;
	g[1] = g[0];
	g[1].name = "g2";
	g[1].selector.items = &s2;
	snprintf(json, sizeof(json), "{\"kind\":\"List\",\"items\":[%s]}", items);
	if (snapshot_add_json(s, json, strlen(json), "test", &err) < 0 ||
	    snapshot_set_groups(s, g, 2, &err) < 0 ||
	    snapshot_finish(s, clock_wall(w->clock), &err) < 0)
		fail_msg("%s", err.msg);
	actuator_observe(w->act, s);
	return s;
}

#define NODE_JSON(name, group, pid) \
	"{\"kind\":\"Node\",\"metadata\":{\"name\":\"" name "\",\"labels\":{\"luascale.io/node-group\":\"" group "\"}}," \
	"\"spec\":{\"providerID\":\"" pid "\"},\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"16Gi\",\"pods\":\"110\"}," \
	"\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}"

/* ---- tests ---- */

static void test_launches_run_in_parallel_and_report_each_instance(void **state)
{
	struct world *w = world_new(false);
	struct actuator_stats st;
	struct plan p;
	struct snapshot *s = snap(w, "");

	(void)state;
	plan_init(&p);
	add_action(&p, ACTION_SCALE_UP, "g1", 2);
	add_action(&p, ACTION_SCALE_UP, "g2", 2);
	assert_int_equal(actuator_execute(w->act, &p, s), 0);
	run_for(w, 2); /* both calls take 2 s: the first instance of each exists now */
	actuator_get_stats(w->act, &st);
	assert_int_equal(w->cloud.max_parallel, 2);
	assert_int_equal(st.instances_created, 2);
	assert_int_equal(st.in_flight_instances, 2);
	assert_int_equal(st.in_flight_requested, 2); /* one more asked in each group */
	run_for(w, 2);
	actuator_get_stats(w->act, &st);
	assert_int_equal(st.instances_created, 4);
	assert_int_equal(st.launch_requests, 2);
	assert_int_equal(st.busy, 0);
	plan_free(&p);
	snapshot_free(s);
	world_free(w);
}

static void test_in_flight_counts_as_upcoming(void **state)
{
	struct world *w = world_new(false);
	struct plan p;
	struct snapshot *s = snap(w, "");

	(void)state;
	plan_init(&p);
	add_action(&p, ACTION_SCALE_UP, "g1", 3);
	actuator_execute(w->act, &p, s);
	snapshot_free(s);
	/* before the cloud answered: all 3 are asked for */
	s = snap(w, "");
	assert_int_equal(s->groups[0].current, 0);
	assert_int_equal(s->groups[0].target, 3);
	snapshot_free(s);
	run_for(w, 10);
	/* two registered, one still booting */
	s = snap(w, NODE_JSON("n0", "g1", "fake://g1/i-0") "," NODE_JSON("n1", "g1", "fake://g1/i-1"));
	assert_int_equal(s->groups[0].current, 2);
	assert_int_equal(s->groups[0].target, 3);
	assert_int_equal(s->groups[1].target, 0);
	snapshot_free(s);
	s = snap(w, NODE_JSON("n0", "g1", "fake://g1/i-0") "," NODE_JSON("n1", "g1", "fake://g1/i-1") ","
		    NODE_JSON("n2", "g1", "fake://g1/i-2"));
	assert_int_equal(s->groups[0].target, 3);
	{
		struct actuator_stats st;

		actuator_get_stats(w->act, &st);
		assert_int_equal(st.instances_registered, 3);
		assert_int_equal(st.in_flight_instances, 0);
	}
	plan_free(&p);
	snapshot_free(s);
	world_free(w);
}

static void test_instance_never_ready_is_terminated_and_group_backed_off(void **state)
{
	struct world *w = world_new(false);
	struct snapshot *s = snap(w, "");
	struct plan p;
	struct safety_limits lim = {.max_scale_down_per_round = 1};
	struct verdict v;
	struct errbuf err;

	(void)state;
	plan_init(&p);
	add_action(&p, ACTION_SCALE_UP, "g1", 1);
	actuator_execute(w->act, &p, s);
	snapshot_free(s);
	run_for(w, 14 * 60);
	s = snap(w, "");
	assert_int_equal(w->cloud.terminated, 0);
	assert_int_equal(s->groups[0].target, 1);
	snapshot_free(s);
	run_for(w, 60 + 3);
	s = snap(w, "");
	run_for(w, 1); /* the terminate call runs on the work queue */
	assert_int_equal(w->cloud.terminated, 1);
	assert_string_equal(w->cloud.terminated_ids[0], "i-0");
	assert_int_equal(s->groups[0].target, 0); /* no longer counted as capacity */
	assert_true(s->groups[0].backoff_until >= clock_wall(w->clock) + 5 * 60 - 1);
	assert_non_null(strstr(s->groups[0].backoff_reason, "did not become a Ready node"));
	/* the safety checks refuse to grow a backed-off group */
	assert_int_equal(safety_check(s, &lim, &p, &v, &err), 0);
	assert_int_equal(v.accepted.n_actions, 0);
	verdict_free(&v);
	plan_free(&p);
	snapshot_free(s);
	world_free(w);
}

/* A slow scale-up of 6 whose instances all time out backs the group off
 * once (the first step of the backoff), not six times in a row. */
static void test_timed_out_launch_backs_off_once(void **state)
{
	struct world *w = world_new(false);
	struct snapshot *s = snap(w, "");
	struct plan p;
	struct actuator_stats st;
	int64_t left;

	(void)state;
	plan_init(&p);
	add_action(&p, ACTION_SCALE_UP, "g1", 6);
	actuator_execute(w->act, &p, s);
	snapshot_free(s);
	run_for(w, 17 * 60); /* all six past max_provision_time at this observe */
	s = snap(w, "");
	actuator_get_stats(w->act, &st);
	assert_int_equal(st.instances_timed_out, 6);
	left = s->groups[0].backoff_until - clock_wall(w->clock);
	assert_true(left >= 5 * 60 - 5 && left <= 5 * 60); /* 5m: one failure, not 6 (16 m) */
	plan_free(&p);
	snapshot_free(s);
	world_free(w);
}

/* A launch failing with a transient error (5xx, a capacity the cloud
 * could not read) backs its group off too: it is not asked again every
 * round. A throttled one does not (the rate limiter slows down). */
static void test_transient_launch_failure_backs_off(void **state)
{
	struct world *w = world_new(false);
	struct snapshot *s = snap(w, "");
	struct plan p;

	(void)state;
	w->cloud.fail = PROVIDER_TRANSIENT;
	plan_init(&p);
	add_action(&p, ACTION_SCALE_UP, "g1", 1);
	actuator_execute(w->act, &p, s);
	snapshot_free(s);
	run_for(w, 3);
	s = snap(w, "");
	assert_true(s->groups[0].backoff_until > clock_wall(w->clock));
	snapshot_free(s);
	world_free(w);
	w = world_new(false);
	s = snap(w, "");
	w->cloud.fail = PROVIDER_THROTTLED;
	actuator_execute(w->act, &p, s);
	snapshot_free(s);
	run_for(w, 3);
	s = snap(w, "");
	assert_true(s->groups[0].backoff_until <= clock_wall(w->clock));
	plan_free(&p);
	snapshot_free(s);
	world_free(w);
}

static void test_given_back_instances_are_not_upcoming(void **state)
{
	struct world *w = world_new(false);
	struct snapshot *s = snap(w, "");
	struct plan p;
	struct actuator_stats st;

	(void)state;
	w->cloud.give_back = true;
	plan_init(&p);
	add_action(&p, ACTION_SCALE_UP, "g1", 3);
	actuator_execute(w->act, &p, s);
	snapshot_free(s);
	run_for(w, 10);
	/* the names were reported, then the cloud could not make them */
	s = snap(w, "");
	assert_int_equal(s->groups[0].target, 0);
	assert_true(s->groups[0].backoff_until > clock_wall(w->clock));
	assert_non_null(strstr(s->groups[0].backoff_reason, "ZONE_RESOURCE_POOL_EXHAUSTED"));
	actuator_get_stats(w->act, &st);
	assert_int_equal(st.in_flight_instances, 0);
	snapshot_free(s);
	/* nothing waits for them: no provision timeout, no terminate */
	run_for(w, 16 * 60);
	s = snap(w, "");
	assert_int_equal(w->cloud.terminated, 0);
	actuator_get_stats(w->act, &st);
	assert_int_equal(st.instances_timed_out, 0);
	plan_free(&p);
	snapshot_free(s);
	world_free(w);
}

static void test_failed_launch_backs_off_doubling(void **state)
{
	struct world *w = world_new(false);
	struct snapshot *s = snap(w, "");
	struct plan p;
	int64_t first;

	(void)state;
	w->cloud.fail = PROVIDER_NO_CAPACITY;
	plan_init(&p);
	add_action(&p, ACTION_SCALE_UP, "g1", 2);
	actuator_execute(w->act, &p, s);
	snapshot_free(s);
	run_for(w, 3);
	s = snap(w, "");
	first = s->groups[0].backoff_until - clock_wall(w->clock);
	assert_true(first >= 5 * 60 - 1 && first <= 5 * 60);
	assert_int_equal(s->groups[0].target, 0);
	assert_non_null(strstr(s->groups[0].backoff_reason, "InsufficientInstanceCapacity"));
	actuator_execute(w->act, &p, s); /* asked again (the safety checks would refuse; test the doubling) */
	snapshot_free(s);
	run_for(w, 3);
	s = snap(w, "");
	assert_true(s->groups[0].backoff_until - clock_wall(w->clock) >= 10 * 60 - 1);
	plan_free(&p);
	snapshot_free(s);
	world_free(w);
}

static void test_drain_evicts_retries_pdb_then_deletes(void **state)
{
	struct world *w = world_new(false);
	struct snapshot *s = snap(w, NODE_JSON("n0", "g1", "fake://g1/i-7"));
	struct actuator_stats st;
	struct plan p;

	(void)state;
	w->kube.n_pods = 3;
	snprintf(w->kube.pods[0].name, 32, "web-1");
	w->kube.pods[0].present = true;
	w->kube.pods[0].refusals = 2; /* a PDB says no twice */
	snprintf(w->kube.pods[1].name, 32, "ds-1");
	w->kube.pods[1].present = true;
	w->kube.pods[1].daemonset = true;
	snprintf(w->kube.pods[2].name, 32, "job-1");
	w->kube.pods[2].present = true;
	plan_init(&p);
	add_action(&p, ACTION_CORDON, "n0", 0);
	add_action(&p, ACTION_DRAIN, "n0", 0);
	add_action(&p, ACTION_DELETE, "n0", 0);
	actuator_execute(w->act, &p, s);
	run_for(w, 1);
	assert_true(w->kube.cordoned);
	assert_int_equal(w->kube.evictions, 1);
	assert_int_equal(w->kube.deleted, 0);
	run_for(w, 30);
	assert_int_equal(w->kube.refused, 2);
	assert_int_equal(w->kube.evictions, 2);
	assert_int_equal(w->kube.deleted, 1);
	assert_int_equal(w->cloud.terminated, 1);
	assert_string_equal(w->cloud.terminated_ids[0], "i-7");
	assert_true(w->kube.pods[1].present); /* the DaemonSet pod stayed */
	actuator_get_stats(w->act, &st);
	assert_int_equal(st.drains_done, 1);
	assert_int_equal(st.nodes_deleted, 1);
	assert_int_equal(st.busy, 0);
	plan_free(&p);
	snapshot_free(s);
	world_free(w);
}

/* An eviction the API server answers with another error (a 500) is
 * counted as failed and tried again; the drain then finishes. */
static void test_failed_eviction_counted_and_retried(void **state)
{
	struct world *w = world_new(false);
	struct snapshot *s = snap(w, NODE_JSON("n0", "g1", "fake://g1/i-7"));
	struct actuator_stats st;
	struct plan p;

	(void)state;
	w->kube.n_pods = 1;
	snprintf(w->kube.pods[0].name, 32, "web-1");
	w->kube.pods[0].present = true;
	w->kube.evict_fails = 2;
	plan_init(&p);
	add_action(&p, ACTION_DRAIN, "n0", 0);
	add_action(&p, ACTION_DELETE, "n0", 0);
	actuator_execute(w->act, &p, s);
	run_for(w, 60);
	actuator_get_stats(w->act, &st);
	assert_int_equal(st.evictions_failed, 2);
	assert_int_equal(st.evictions_refused, 0);
	assert_int_equal(st.evictions, 1);
	assert_int_equal(st.drains_done, 1);
	assert_int_equal(w->kube.deleted, 1);
	plan_free(&p);
	snapshot_free(s);
	world_free(w);
}

/* The instance goes first, the node object after (as Karpenter's
 * finalizer does); a terminate the cloud refuses (403) is retried with
 * backoff, an Event and a metric say so, and the node is deleted only
 * once its instance is gone: never a billed machine without a node. */
static void test_delete_terminates_first_and_retries(void **state)
{
	struct world *w = world_new(false);
	struct snapshot *s = snap(w, NODE_JSON("n0", "g1", "fake://g1/i-7"));
	struct actuator_stats st;
	struct plan p;

	(void)state;
	w->cloud.terminate_fails = 3;
	w->cloud.terminate_code = PROVIDER_AUTH;
	plan_init(&p);
	add_action(&p, ACTION_DRAIN, "n0", 0);
	add_action(&p, ACTION_DELETE, "n0", 0);
	actuator_execute(w->act, &p, s);
	run_for(w, 5);
	assert_int_equal(w->cloud.terminate_calls, 1);
	assert_int_equal(w->kube.deleted, 0); /* the node stays while its instance does */
	assert_string_equal(w->kube.last_event_reason, "LuascaleTerminateFailed");
	assert_non_null(strstr(w->all_log, "terminating instance i-7 failed (attempt 1)"));
	run_for(w, 10); /* 10 s after the first failure */
	assert_int_equal(w->cloud.terminate_calls, 2);
	run_for(w, 20); /* then 20 s */
	assert_int_equal(w->cloud.terminate_calls, 3);
	assert_int_equal(w->kube.deleted, 0);
	run_for(w, 40); /* then 40 s: it goes through */
	assert_int_equal(w->cloud.terminate_calls, 4);
	assert_int_equal(w->cloud.terminated, 1);
	assert_int_equal(w->cloud.deleted_at_terminate, 0); /* terminated before the delete */
	assert_int_equal(w->kube.deleted, 1);
	actuator_get_stats(w->act, &st);
	assert_int_equal(st.terminate_failures, 3);
	assert_int_equal(st.nodes_deleted, 1);
	assert_int_equal(st.busy, 0);
	plan_free(&p);
	snapshot_free(s);
	world_free(w);
}

/* A Retry-After on a failed terminate holds every write to the cloud: the
 * retry and a launch both wait for it. */
static void test_retry_after_holds_the_cloud(void **state)
{
	struct world *w = world_new(false);
	struct snapshot *s = snap(w, NODE_JSON("n0", "g1", "fake://g1/i-7"));
	struct plan p, up;

	(void)state;
	w->cloud.terminate_fails = 1;
	w->cloud.terminate_code = PROVIDER_THROTTLED;
	w->cloud.terminate_retry_after = 120;
	plan_init(&p);
	add_action(&p, ACTION_DELETE, "n0", 0);
	actuator_execute(w->act, &p, s);
	run_for(w, 5);
	assert_int_equal(w->cloud.terminate_calls, 1);
	plan_init(&up);
	add_action(&up, ACTION_SCALE_UP, "g1", 1);
	actuator_execute(w->act, &up, s);
	run_for(w, 100);
	assert_int_equal(w->cloud.terminate_calls, 1);
	assert_int_equal(w->cloud.created, 0); /* the launch waits too */
	run_for(w, 30);
	assert_int_equal(w->cloud.terminate_calls, 2);
	assert_int_equal(w->kube.deleted, 1);
	assert_true(w->cloud.created >= 1);
	plan_free(&p);
	plan_free(&up);
	snapshot_free(s);
	world_free(w);
}

/* A timed-out instance whose terminate fails is not forgotten: it is
 * retried until it is gone, and is never upcoming capacity meanwhile. */
static void test_timed_out_terminate_is_retried(void **state)
{
	struct world *w = world_new(false);
	struct snapshot *s = snap(w, "");
	struct actuator_stats st;
	struct plan p;

	(void)state;
	plan_init(&p);
	add_action(&p, ACTION_SCALE_UP, "g1", 1);
	actuator_execute(w->act, &p, s);
	snapshot_free(s);
	run_for(w, 10);
	w->cloud.terminate_fails = 2;
	w->cloud.terminate_code = PROVIDER_AUTH;
	run_for(w, 15 * 60);
	s = snap(w, ""); /* the timeout: the first terminate fails */
	run_for(w, 1);   /* (the call runs on the work queue) */
	assert_int_equal(w->cloud.terminate_calls, 1);
	assert_int_equal(s->groups[0].target, 0);
	actuator_get_stats(w->act, &st);
	assert_int_equal(st.terminating, 1);
	snapshot_free(s);
	run_for(w, 11);
	s = snap(w, "");
	run_for(w, 1);
	assert_int_equal(w->cloud.terminate_calls, 2);
	assert_int_equal(s->groups[0].target, 0);
	snapshot_free(s);
	run_for(w, 21);
	s = snap(w, "");
	run_for(w, 1);
	assert_int_equal(w->cloud.terminate_calls, 3);
	assert_int_equal(w->cloud.terminated, 1);
	actuator_get_stats(w->act, &st);
	assert_int_equal(st.terminating, 0);
	plan_free(&p);
	snapshot_free(s);
	world_free(w);
}

/* The sweep: an instance the cloud lists for a managed group with no node
 * past max_provision_s by the cloud's launch time — launched before a
 * restart, so this process never knew it — is terminated, stops counting
 * as upcoming, and backs its group off once. One whose node exists, a
 * young one, and one whose launch time is unknown stay. */
static void test_sweep_terminates_instances_without_nodes(void **state)
{
	struct world *w = world_new(false);
	struct provider_group g;
	struct provider_instance inst[4];
	struct snapshot *s;
	struct actuator_stats st;
	int64_t now = WALL0;

	(void)state;
	memset(&g, 0, sizeof(g));
	memset(inst, 0, sizeof(inst));
	snprintf(g.name, sizeof(g.name), "g1");
	g.instances = inst;
	g.n_instances = 4;
	snprintf(inst[0].id, sizeof(inst[0].id), "i-old"); /* no node, 20 min old */
	inst[0].state = INSTANCE_RUNNING;
	inst[0].launched_wall = now - 20 * 60;
	snprintf(inst[1].id, sizeof(inst[1].id), "i-7"); /* n0's, old */
	inst[1].state = INSTANCE_RUNNING;
	inst[1].launched_wall = now - 60 * 60;
	snprintf(inst[2].id, sizeof(inst[2].id), "i-young"); /* no node yet, 5 min */
	inst[2].state = INSTANCE_PENDING;
	inst[2].launched_wall = now - 5 * 60;
	snprintf(inst[3].id, sizeof(inst[3].id), "i-unknown"); /* no launch time */
	inst[3].state = INSTANCE_RUNNING;
	actuator_cloud_instances(w->act, &g, 1);
	s = snap(w, NODE_JSON("n0", "g1", "fake://g1/i-7"));
	run_for(w, 1);
	assert_int_equal(w->cloud.terminated, 1);
	assert_string_equal(w->cloud.terminated_ids[0], "i-old");
	assert_true(s->groups[0].backoff_until > now);
	assert_non_null(strstr(w->all_log, "instance i-old of group g1 has no node"));
	actuator_get_stats(w->act, &st);
	assert_int_equal(st.orphans_found, 1);
	snapshot_free(s);
	/* listed again (the cloud is slow to drop it): not terminated twice */
	actuator_cloud_instances(w->act, &g, 1);
	s = snap(w, NODE_JSON("n0", "g1", "fake://g1/i-7"));
	run_for(w, 1);
	assert_int_equal(w->cloud.terminated, 1);
	snapshot_free(s);
	world_free(w);
}

/* A cache or providerID fault (most of a group's instances without nodes
 * at once) terminates nothing and says why. */
static void test_sweep_refuses_a_mass_termination(void **state)
{
	struct world *w = world_new(false);
	struct provider_group g;
	struct provider_instance inst[4];
	struct snapshot *s;
	int k;

	(void)state;
	memset(&g, 0, sizeof(g));
	memset(inst, 0, sizeof(inst));
	snprintf(g.name, sizeof(g.name), "g1");
	g.instances = inst;
	g.n_instances = 4;
	for (k = 0; k < 4; k++) {
		snprintf(inst[k].id, sizeof(inst[k].id), "i-%d", k + 100);
		inst[k].state = INSTANCE_RUNNING;
		inst[k].launched_wall = WALL0 - 3600;
	}
	actuator_cloud_instances(w->act, &g, 1);
	s = snap(w, "");
	run_for(w, 1);
	assert_int_equal(w->cloud.terminate_calls, 0);
	assert_non_null(strstr(w->all_log, "not terminating them"));
	snapshot_free(s);
	world_free(w);
}

static void test_delete_waits_for_drain_and_gives_up(void **state)
{
	struct world *w = world_new(false);
	struct snapshot *s = snap(w, NODE_JSON("n0", "g1", "fake://g1/i-7"));
	struct actuator_stats st;
	struct plan p;

	(void)state;
	w->kube.n_pods = 1;
	snprintf(w->kube.pods[0].name, 32, "db-0");
	w->kube.pods[0].present = true;
	w->kube.pods[0].refusals = 1000000; /* the PDB never allows it */
	plan_init(&p);
	add_action(&p, ACTION_DELETE, "n0", 0); /* delete alone drains first */
	actuator_execute(w->act, &p, s);
	run_for(w, 11 * 60);
	assert_int_equal(w->kube.deleted, 0);
	assert_int_equal(w->cloud.terminated, 0);
	actuator_get_stats(w->act, &st);
	assert_int_equal(st.drains_failed, 1);
	assert_int_equal(st.nodes_deleted, 0);
	assert_int_equal(st.busy, 0);
	assert_non_null(strstr(w->last_log, "not done: the drain did not finish"));
	/* the cordon the drain made is given back */
	assert_false(w->kube.cordoned);
	assert_false(w->kube.marked);
	assert_int_equal(st.uncordoned, 1);
	plan_free(&p);
	snapshot_free(s);
	world_free(w);
}

static void test_dry_run_does_nothing(void **state)
{
	struct world *w = world_new(true);
	struct snapshot *s = snap(w, NODE_JSON("n0", "g1", "fake://g1/i-7"));
	struct plan p;

	(void)state;
	plan_init(&p);
	add_action(&p, ACTION_SCALE_UP, "g1", 2);
	add_action(&p, ACTION_CORDON, "n0", 0);
	add_action(&p, ACTION_DELETE, "n0", 0);
	actuator_execute(w->act, &p, s);
	run_for(w, 60);
	assert_int_equal(w->cloud.created, 0);
	assert_false(w->kube.cordoned);
	assert_int_equal(w->kube.deleted, 0);
	assert_int_equal(w->log_lines, 3);
	assert_non_null(strstr(w->last_log, "dry-run: would delete n0"));
	plan_free(&p);
	snapshot_free(s);
	world_free(w);
}

/* A node cordoned by someone: 'ann' is its metadata.annotations JSON. */
#define CORDONED_JSON(name, group, pid, ann) \
	"{\"kind\":\"Node\",\"metadata\":{\"name\":\"" name "\",\"labels\":{\"luascale.io/node-group\":\"" group "\"}," \
	"\"annotations\":" ann "}," \
	"\"spec\":{\"providerID\":\"" pid "\",\"unschedulable\":true},\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"16Gi\",\"pods\":\"110\"}," \
	"\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}"

#define PROTECTED_POD \
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"hub-0\",\"namespace\":\"hub\",\"labels\":{\"critical\":\"true\"}," \
	"\"ownerReferences\":[{\"kind\":\"StatefulSet\",\"name\":\"hub\",\"controller\":true}]}," \
	"\"spec\":{\"nodeName\":\"n0\",\"containers\":[{\"name\":\"c\"}]},\"status\":{\"phase\":\"Running\"}}"

#define NO_EVICT_POD \
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"db-0\",\"namespace\":\"default\"," \
	"\"annotations\":{\"cluster-autoscaler.kubernetes.io/safe-to-evict\":\"false\"}," \
	"\"ownerReferences\":[{\"kind\":\"StatefulSet\",\"name\":\"db\",\"controller\":true}]}," \
	"\"spec\":{\"nodeName\":\"n0\",\"containers\":[{\"name\":\"c\"}]},\"status\":{\"phase\":\"Running\"}}"

#define MIRROR_POD \
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"kube-proxy-n0\",\"namespace\":\"kube-system\"," \
	"\"annotations\":{\"kubernetes.io/config.mirror\":\"abc\",\"kubernetes.io/config.source\":\"file\"}}," \
	"\"spec\":{\"nodeName\":\"n0\",\"containers\":[{\"name\":\"c\"}]},\"status\":{\"phase\":\"Running\"}}"

static void add_pod(struct world *w, const char *name, const char *json, int refusals)
{
	struct fake_pod *p = &w->kube.pods[w->kube.n_pods++];

	snprintf(p->name, sizeof(p->name), "%s", name);
	p->present = true;
	p->json = json;
	p->refusals = refusals;
}

static void plan_removal(struct plan *p, const char *node)
{
	plan_init(p);
	add_action(p, ACTION_DRAIN, node, 0);
	add_action(p, ACTION_DELETE, node, 0);
}

static struct label_selector critical_sel(struct arena **ar)
{
	struct label_selector sel;
	struct errbuf err;

	*ar = arena_new();
	assert_non_null(*ar);
	if (label_selector_parse(*ar, "critical=true", &sel, &err) < 0)
		fail_msg("%s", err.msg);
	return sel;
}

/*
 * The plan was made on a stale cache that showed n0 empty; the drain lists
 * its pods fresh and finds a protected pod (or one with safe-to-evict
 * "false"): nothing is evicted, the node is given back, the reason named.
 * A DaemonSet pod and a mirror pod are left alone, never evicted.
 */
static void test_drain_rechecks_each_pod_as_fetched(void **state)
{
	static const struct {
		const char *name, *json, *rule;
	} cases[] = {
		{"hub-0", PROTECTED_POD, "pod hub/hub-0 is protected (matches selector critical=true)"},
		{"db-0", NO_EVICT_POD, "pod default/db-0 has safe-to-evict=false"},
	};
	size_t c;

	(void)state;
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct actuator_config cfg;
		struct arena *ar;
		struct label_selector sel = critical_sel(&ar);
		struct world *w;
		struct snapshot *s;
		struct actuator_stats st;
		struct plan p;

		actuator_config_default(&cfg);
		cfg.protected_pods = &sel;
		w = world_new_cfg(&cfg);
		s = snap(w, NODE_JSON("n0", "g1", "fake://g1/i-7"));
		add_pod(w, "web-1", NULL, 0);
		add_pod(w, "ds-1", NULL, 0);
		w->kube.pods[1].daemonset = true;
		add_pod(w, "kube-proxy-n0", MIRROR_POD, 0);
		add_pod(w, cases[c].name, cases[c].json, 0);
		plan_removal(&p, "n0");
		actuator_execute(w->act, &p, s);
		run_for(w, 15 * 60);
		assert_int_equal(w->kube.evictions, 0);
		assert_int_equal(w->kube.deleted, 0);
		assert_int_equal(w->cloud.terminated, 0);
		assert_int_equal(w->kube.cordons, 1);
		assert_false(w->kube.cordoned); /* given back */
		assert_false(w->kube.marked);
		actuator_get_stats(w->act, &st);
		assert_int_equal(st.drains_failed, 1);
		assert_int_equal(st.uncordoned, 1);
		assert_int_equal(st.busy, 0);
		assert_non_null(strstr(w->all_log, "drain n0 gave up: pod "));
		assert_non_null(strstr(w->all_log, cases[c].rule));
		assert_non_null(strstr(w->all_log, "node n0 uncordoned: its drain gave up"));
		plan_free(&p);
		snapshot_free(s);
		world_free(w);
		arena_free(ar);
	}
}

/* As kubectl drain: without the cordon there is no drain. */
static void test_failed_cordon_aborts_the_drain(void **state)
{
	struct world *w = world_new(false);
	struct snapshot *s = snap(w, NODE_JSON("n0", "g1", "fake://g1/i-7"));
	struct actuator_stats st;
	struct plan p;

	(void)state;
	add_pod(w, "web-1", NULL, 0);
	w->kube.cordon_fails = 1;
	plan_removal(&p, "n0");
	actuator_execute(w->act, &p, s);
	run_for(w, 60);
	assert_int_equal(w->kube.evictions, 0);
	assert_int_equal(w->kube.deleted, 0);
	assert_false(w->kube.cordoned);
	actuator_get_stats(w->act, &st);
	assert_int_equal(st.drains_failed, 1);
	assert_int_equal(st.evictions, 0);
	assert_int_equal(st.busy, 0);
	assert_non_null(strstr(w->all_log, "drain n0 aborted: cordon failed: cordon node n0: 500 InternalError; no pod evicted"));
	plan_free(&p);
	snapshot_free(s);
	world_free(w);
}

/* A stale cache still shows the deleted node: its removal is not repeated
 * (no second delete, no second termination) until the cache shows it gone. */
static void test_deleted_node_is_never_acted_on_again(void **state)
{
	struct world *w = world_new(false);
	struct snapshot *s = snap(w, NODE_JSON("n0", "g1", "fake://g1/i-7"));
	struct actuator_stats st;
	struct plan p;
	int round;

	(void)state;
	plan_removal(&p, "n0");
	actuator_execute(w->act, &p, s);
	run_for(w, 30);
	snapshot_free(s);
	assert_int_equal(w->kube.deleted, 1);
	assert_int_equal(w->cloud.terminated, 1);
	for (round = 0; round < 5; round++) {
		s = snap(w, NODE_JSON("n0", "g1", "fake://g1/i-7")); /* the cache has not caught up */
		assert_true(s->nodes[0].removing);
		assert_int_equal(s->groups[0].removing, 1);
		actuator_execute(w->act, &p, s);
		run_for(w, 30);
		snapshot_free(s);
	}
	assert_int_equal(w->kube.deleted, 1);
	assert_int_equal(w->cloud.terminated, 1);
	actuator_get_stats(w->act, &st);
	assert_int_equal(st.nodes_deleted, 1);
	assert_int_equal(st.actions_dropped, 10);
	assert_non_null(strstr(w->all_log, "node n0: 2 action(s) dropped: luascale deleted it at"));
	/* once the cache shows it gone, a new node of that name is a new node */
	s = snap(w, NODE_JSON("n1", "g1", "fake://g1/i-8"));
	snapshot_free(s);
	s = snap(w, NODE_JSON("n0", "g1", "fake://g1/i-9"));
	assert_false(s->nodes[0].removing);
	actuator_execute(w->act, &p, s);
	run_for(w, 30);
	assert_int_equal(w->kube.deleted, 2);
	assert_int_equal(w->cloud.terminated, 2);
	assert_string_equal(w->cloud.terminated_ids[1], "i-9");
	plan_free(&p);
	snapshot_free(s);
	world_free(w);
}

/* The cordon luascale made is given back when the removal does not finish:
 * a failed delete, shutdown in the middle of the drain; someone else's
 * cordon is never undone. */
static void test_cordon_given_back_when_removal_does_not_finish(void **state)
{
	struct world *w = world_new(false);
	struct snapshot *s = snap(w, NODE_JSON("n0", "g1", "other://g1/i-7"));
	struct actuator_stats st;
	struct plan p;
	int refused;

	(void)state;
	/* the delete of a node with no instance of this cloud fails (a node
	 * with one is deleted after its instance is gone: nothing to give
	 * back then) */
	w->kube.delete_fails = 1;
	plan_removal(&p, "n0");
	actuator_execute(w->act, &p, s);
	run_for(w, 30);
	assert_int_equal(w->kube.deleted, 0);
	assert_false(w->kube.cordoned);
	assert_false(w->kube.marked);
	assert_non_null(strstr(w->all_log, "node n0 uncordoned: its delete failed"));
	snapshot_free(s);

	/* someone else's cordon stays, whatever happens */
	s = snap(w, CORDONED_JSON("n0", "g1", "other://g1/i-7", "{}"));
	w->kube.cordoned = true;
	w->kube.delete_fails = 1;
	actuator_execute(w->act, &p, s);
	run_for(w, 30);
	assert_true(w->kube.cordoned);
	assert_false(w->kube.marked);
	actuator_get_stats(w->act, &st);
	assert_int_equal(st.uncordoned, 1);
	snapshot_free(s);

	/* shutdown while the drain waits for a PDB */
	w->kube.cordoned = false;
	s = snap(w, NODE_JSON("n0", "g1", "fake://g1/i-7"));
	add_pod(w, "web-1", NULL, 1000000);
	actuator_execute(w->act, &p, s);
	run_for(w, 20);
	assert_true(w->kube.cordoned);
	assert_true(w->kube.marked);
	refused = w->kube.refused;
	actuator_stop(w->act);
	executor_shutdown(w->ex, clock_now(w->clock) + 10 * S);
	w->ex = NULL;
	assert_int_equal(w->kube.refused, refused); /* no eviction tried after the stop */
	assert_false(w->kube.cordoned);
	assert_false(w->kube.marked);
	assert_non_null(strstr(w->all_log, "node n0 uncordoned: its removal was abandoned"));
	actuator_get_stats(w->act, &st);
	assert_int_equal(st.uncordoned, 2);
	assert_int_equal(st.busy, 0);
	plan_free(&p);
	snapshot_free(s);
	actuator_free(w->act);
	vclock_free(w->clock);
	free(w);
}

/* After a restart: a node that carries luascale's cordon mark, with no
 * removal running, is uncordoned; a node cordoned without the mark is not. */
static void test_restart_gives_back_abandoned_cordons(void **state)
{
	struct world *w = world_new(false);
	struct snapshot *s;
	struct actuator_stats st;

	(void)state;
	w->kube.cordoned = true;
	w->kube.marked = true;
	s = snap(w, CORDONED_JSON("n0", "g1", "fake://g1/i-7",
				  "{\"" ACTUATOR_CORDON_MARK "\":\"" ACTUATOR_CORDON_MARK_VALUE "\","
				  "\"" ACTUATOR_CORDON_TIME "\":\"2026-11-30T08:00:00Z\"}") ","
		    CORDONED_JSON("n1", "g1", "fake://g1/i-8", "{\"other\":\"x\"}"));
	run_for(w, 5);
	snapshot_free(s);
	assert_false(w->kube.cordoned);
	assert_false(w->kube.marked);
	assert_int_equal(w->kube.uncordons, 1); /* n0 only */
	assert_non_null(strstr(w->all_log, "node n0: luascale cordoned it at 2026-11-30T08:00:00Z for a removal that is not running; uncordoning it"));
	assert_null(strstr(w->all_log, "node n1"));
	/* the cache has not caught up: not given back twice */
	s = snap(w, CORDONED_JSON("n0", "g1", "fake://g1/i-7",
				  "{\"" ACTUATOR_CORDON_MARK "\":\"" ACTUATOR_CORDON_MARK_VALUE "\"}"));
	run_for(w, 5);
	snapshot_free(s);
	assert_int_equal(w->kube.uncordons, 1);
	actuator_get_stats(w->act, &st);
	assert_int_equal(st.uncordoned, 1);
	assert_int_equal(st.busy, 0);
	world_free(w);
}

/* safety.max_concurrent_drains: a removal beyond it is not started this
 * round, and is started in a later one once a slot is free. */
static void test_max_concurrent_drains(void **state)
{
	struct world *w = world_new(false);
	struct snapshot *s = snap(w, NODE_JSON("n0", "g1", "fake://g1/i-0") ","
				     NODE_JSON("n1", "g1", "fake://g1/i-1"));
	struct actuator_stats st;
	struct plan p;

	(void)state;
	add_pod(w, "web-1", NULL, 2); /* the first drain takes a while */
	plan_init(&p);
	add_action(&p, ACTION_DRAIN, "n0", 0);
	add_action(&p, ACTION_DELETE, "n0", 0);
	add_action(&p, ACTION_DRAIN, "n1", 0);
	add_action(&p, ACTION_DELETE, "n1", 0);
	actuator_execute(w->act, &p, s);
	run_for(w, 1);
	actuator_get_stats(w->act, &st);
	assert_int_equal(st.drains_deferred, 1);
	assert_int_equal(w->kube.cordons, 1);
	assert_non_null(strstr(w->all_log, "node n1: removal not started: max_concurrent_drains (1) reached, 1 drain(s) running; its 2 action(s) are left for a later round"));
	/* asked again while it waits: said once, not every round */
	actuator_execute(w->act, &p, s);
	run_for(w, 1);
	assert_non_null(strstr(w->all_log, "node n1: removal not started again"));
	assert_null(strstr(strstr(w->all_log, "node n1: removal not started:") + 1,
			   "node n1: removal not started:"));
	run_for(w, 60);
	snapshot_free(s);
	assert_int_equal(w->kube.deleted, 1);
	plan_free(&p);
	s = snap(w, NODE_JSON("n1", "g1", "fake://g1/i-1"));
	plan_removal(&p, "n1"); /* the next round asks again */
	actuator_execute(w->act, &p, s);
	run_for(w, 60);
	assert_int_equal(w->kube.deleted, 2);
	actuator_get_stats(w->act, &st);
	assert_int_equal(st.drains_deferred, 2);
	assert_int_equal(st.drains_done, 2);
	plan_free(&p);
	snapshot_free(s);
	world_free(w);
}

/* An eviction refused by the API server's own limits is not blamed on a
 * PodDisruptionBudget, and waits as long as the server asked. */
static void test_throttled_eviction_says_what_the_server_said(void **state)
{
	struct world *w = world_new(false);
	struct snapshot *s = snap(w, NODE_JSON("n0", "g1", "fake://g1/i-7"));
	struct actuator_stats st;
	struct plan p;

	(void)state;
	add_pod(w, "web-1", NULL, 1);
	w->kube.throttle = true;
	plan_removal(&p, "n0");
	actuator_execute(w->act, &p, s);
	run_for(w, 6);
	assert_int_equal(w->kube.evictions, 0); /* retryAfterSeconds 7 > eviction_retry_s 5 */
	run_for(w, 10);
	assert_int_equal(w->kube.evictions, 1);
	assert_non_null(strstr(w->all_log, "drain n0: the API server refused evicting default/web-1 for now (429 TooManyRequests: the server is busy); retrying in 7s"));
	assert_null(strstr(w->all_log, "PodDisruptionBudget"));
	actuator_get_stats(w->act, &st);
	assert_int_equal(st.evictions_throttled, 1);
	assert_int_equal(st.evictions_refused, 0);
	plan_free(&p);
	snapshot_free(s);
	world_free(w);
}

struct tally {
	int n;
	char ids[64][128];
};

static void tally_flight(void *ctx, const char *group, const char *id, const char *pid, int64_t t)
{
	struct tally *ta = ctx;

	(void)group;
	(void)pid;
	(void)t;
	snprintf(ta->ids[ta->n++], sizeof(ta->ids[0]), "%s", id);
}

static void test_shutdown_mid_launch_accounts_for_everything(void **state)
{
	struct world *w = world_new(false);
	struct snapshot *s = snap(w, "");
	struct actuator_stats st;
	struct tally ta = {0};
	struct plan p;
	int i, k;

	(void)state;
	plan_init(&p);
	add_action(&p, ACTION_SCALE_UP, "g1", 5);
	add_action(&p, ACTION_SCALE_UP, "g2", 5);
	actuator_execute(w->act, &p, s);
	run_for(w, 4); /* some instances exist, the rest are still coming */
	executor_shutdown(w->ex, clock_now(w->clock));
	w->ex = executor_new_virtual(w->clock); /* world_free shuts this one down */
	actuator_get_stats(w->act, &st);
	assert_int_equal(st.busy, 0);
	assert_int_equal((int)st.instances_created, w->cloud.created);
	/* every instance the cloud made is known to the actuator */
	actuator_each_in_flight(w->act, tally_flight, &ta);
	assert_int_equal(ta.n, w->cloud.created);
	for (i = 0; i < w->cloud.created; i++) {
		bool found = false;

		for (k = 0; k < ta.n; k++)
			found = found || strcmp(ta.ids[k], w->cloud.ids[i]) == 0;
		assert_true(found);
	}
	assert_int_equal(st.in_flight_requested, 0);
	plan_free(&p);
	snapshot_free(s);
	world_free(w);
}

/* The same actuator on the real thread pool: launches from worker threads,
 * instance callbacks racing with observe(). ThreadSanitizer runs this. */
static void test_real_pool(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	struct actuator_config cfg;
	struct actuator_stats st;
	struct plan p;
	struct snapshot *s;
	int i, polls;

	(void)state;
	w->clock = clock_real();
	w->ex = executor_new_pool(4, 256);
	w->cloud.prov.ops = &fake_provider_ops;
	w->cloud.prov.impl = &w->cloud;
	w->cloud.ex = w->ex;
	w->cloud.call_s = 0;
	w->cloud.step_ns = 1000000; /* 1 ms */
	pthread_mutex_init(&w->cloud.mu, NULL);
	w->kops.ops = &fake_kube_ops;
	w->kops.ctx = &w->kube;
	actuator_config_default(&cfg);
	w->act = actuator_new(w->ex, &w->cloud.prov, &w->kops, &cfg, NULL);
	plan_init(&p);
	for (i = 0; i < 8; i++)
		add_action(&p, ACTION_SCALE_UP, i % 2 ? "g1" : "g2", 3);
	s = snapshot_new();
	{
		struct errbuf err;

		snapshot_finish(s, clock_wall(w->clock), &err);
	}
	actuator_execute(w->act, &p, s);
	/* wait for the launches (a condition with a deadline, not a fixed sleep) */
	for (polls = 0; polls < 5000; polls++) {
		struct timespec ts = {0, 1000000};

		actuator_observe(w->act, s);
		actuator_get_stats(w->act, &st);
		if (st.busy == 0)
			break;
		nanosleep(&ts, NULL);
	}
	assert_int_equal(st.busy, 0);
	assert_int_equal(st.instances_created, 24);
	assert_int_equal(st.in_flight_instances, 24);
	assert_int_equal(st.in_flight_requested, 0);
	assert_true(w->cloud.max_parallel >= 2);
	executor_shutdown(w->ex, clock_now(w->clock) + CLOCK_NS_PER_S);
	actuator_free(w->act);
	plan_free(&p);
	snapshot_free(s);
	free(w);
}

/* ---- slow calls on the daemon's pool ---- */

/* A cloud whose launch call blocks its thread until 'want' calls are inside
 * at once (or a deadline passes): it can only return in time if the pool
 * runs all of them together. */
struct slow_cloud {
	struct provider prov;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int want, inside, most, met, done;
	int64_t deadline; /* CLOCK_MONOTONIC ns */
};

static void slow_launch(struct provider *p, const char *group, int count,
			provider_instance_cb on_instance, provider_done_cb on_done, void *ctx)
{
	struct slow_cloud *c = p->impl;
	struct timespec ts = {(time_t)(c->deadline / S), (long)(c->deadline % S)};
	struct provider_status st = {.code = PROVIDER_OK};
	struct provider_instance inst;
	bool met;

	pthread_mutex_lock(&c->mu);
	c->inside++;
	if (c->inside > c->most)
		c->most = c->inside;
	pthread_cond_broadcast(&c->cv);
	while (c->most < c->want && pthread_cond_timedwait(&c->cv, &c->mu, &ts) == 0)
		;
	met = c->most >= c->want;
	c->met += met;
	c->inside--;
	pthread_mutex_unlock(&c->mu);
	memset(&inst, 0, sizeof(inst));
	snprintf(inst.id, sizeof(inst.id), "i-%s", group);
	snprintf(inst.provider_id, sizeof(inst.provider_id), "fake://%s/i-%s", group, group);
	snprintf(inst.group, sizeof(inst.group), "%s", group);
	if (met)
		on_instance(ctx, &inst);
	else
		snprintf(st.message, sizeof(st.message), "the calls were made one pool-full at a time");
	st.code = met ? PROVIDER_OK : PROVIDER_TRANSIENT;
	on_done(ctx, met ? 1 : 0, &st);
	(void)count;
	pthread_mutex_lock(&c->mu);
	c->done++;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
}

static const struct provider_ops slow_provider_ops = {
	.kind = "slow",
	.launch = slow_launch,
	.terminate = fake_terminate,
	.map_node = fake_map_node,
};

/*
 * The daemon's pool (actuator_pool_opts) for a provider allowed 20 calls a
 * second with 20 saved: three times as many slow launch calls as the pool
 * has base workers are all in the cloud at once; none waits for another's
 * thread.
 */
static void test_slow_launches_do_not_wait_for_threads(void **state)
{
	enum { N = 3 * ACTUATOR_BASE_WORKERS };
	struct provider_limits lim = {20, 20, 20, 40};
	struct executor_pool_opts po;
	struct slow_cloud c;
	struct actuator_config cfg;
	struct actuator_stats st;
	struct executor_stats es;
	struct executor *ex;
	struct actuator *a;
	struct snapshot *s;
	struct errbuf err;
	struct plan p;
	struct timespec ts;
	char groups[N][16];
	int i;

	(void)state;
	actuator_pool_opts(&po, &lim, 4096);
	assert_int_equal(po.workers, ACTUATOR_BASE_WORKERS);
	assert_true(po.max_workers >= ACTUATOR_BASE_WORKERS + 20 + 20 * 2);
	ex = executor_new_pool_opts(&po);
	assert_non_null(ex);
	memset(&c, 0, sizeof(c));
	c.prov.ops = &slow_provider_ops;
	c.prov.impl = &c;
	c.prov.ex = ex;
	c.want = N;
	c.deadline = clock_now(clock_real()) + 20 * S;
	pthread_mutex_init(&c.mu, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&c.cv, &ca);
		pthread_condattr_destroy(&ca);
	}
	actuator_config_default(&cfg);
	a = actuator_new(ex, &c.prov, NULL, &cfg, NULL);
	plan_init(&p);
	for (i = 0; i < N; i++) {
		snprintf(groups[i], sizeof(groups[i]), "g%d", i);
		add_action(&p, ACTION_SCALE_UP, groups[i], 1);
	}
	s = snapshot_new();
	snapshot_finish(s, clock_wall(clock_real()), &err);
	actuator_execute(a, &p, s);
	/* every call has returned (a condition with a deadline) */
	ts.tv_sec = (time_t)((c.deadline + 10 * S) / S);
	ts.tv_nsec = 0;
	pthread_mutex_lock(&c.mu);
	while (c.done < N && pthread_cond_timedwait(&c.cv, &c.mu, &ts) == 0)
		;
	pthread_mutex_unlock(&c.mu);
	assert_true(executor_wait_idle(ex, clock_now(clock_real()) + 10 * S));
	assert_int_equal(c.done, N);
	assert_int_equal(c.most, N);
	assert_int_equal(c.met, N);
	executor_stats(ex, &es);
	assert_true(es.peak >= N);
	actuator_get_stats(a, &st);
	assert_int_equal(st.busy, 0);
	assert_int_equal(st.launch_requests, N);
	assert_int_equal(st.instances_created, N);
	assert_int_equal(st.launch_failures, 0);
	executor_shutdown(ex, clock_now(clock_real()) + S);
	actuator_free(a);
	plan_free(&p);
	snapshot_free(s);
	pthread_cond_destroy(&c.cv);
	pthread_mutex_destroy(&c.mu);
}

/* The leader gate: once it closes nothing new starts — no launch call, no
 * eviction, no delete, no give-back write — and what is in flight is named. */
static bool gate_open;

static bool gate(void *ctx)
{
	(void)ctx;
	return gate_open;
}

static void add_replace(struct plan *p, const char *node, const char *group, const char *disruption)
{
	struct action a;

	memset(&a, 0, sizeof(a));
	a.type = ACTION_REPLACE;
	a.node = (char *)node;
	a.group = (char *)group;
	a.count = 1;
	a.disruption = (char *)disruption;
	a.reason = "cheaper";
	a.where = "";
	assert_int_equal(plan_add(p, &a), 0);
}

#define OLD_NODE NODE_JSON("old", "g1", "fake://g1/i-old")

/* A replace asks for the new node first and leaves the old one alone
 * (policies see it replacing, the budgets count it); once the new node
 * is Ready the old one is cordoned, drained and deleted, with Events
 * saying so. */
static void test_replace_launches_first_then_removes(void **state)
{
	struct world *w = world_new(false);
	struct snapshot *s = snap(w, OLD_NODE);
	struct actuator_stats st;
	struct plan p;

	(void)state;
	w->kube.n_pods = 1;
	snprintf(w->kube.pods[0].name, 32, "web-1");
	w->kube.pods[0].present = true;
	plan_init(&p);
	add_replace(&p, "old", "g2", "drifted");
	assert_int_equal(actuator_execute(w->act, &p, s), 0);
	snapshot_free(s);
	run_for(w, 5); /* the new instance exists; no node yet */
	s = snap(w, OLD_NODE);
	assert_true(s->nodes[0].replacing);
	assert_false(s->nodes[0].removing);
	assert_int_equal(s->groups[0].replacing, 1);
	assert_int_equal(s->groups[1].target, 1); /* the new node counts as upcoming in g2 */
	assert_int_equal(w->kube.cordons, 0);
	assert_int_equal(w->kube.evictions, 0);
	assert_non_null(strstr(w->kube.event_log, "old LuascaleReplace: replacing it with a node of group g2"));
	actuator_get_stats(w->act, &st);
	assert_int_equal(st.replaces_started, 1);
	assert_int_equal(st.replacing, 1);
	snapshot_free(s);
	/* booting, not Ready: still nothing done to the old node */
	run_for(w, 60);
	s = snap(w, OLD_NODE ",{\"kind\":\"Node\",\"metadata\":{\"name\":\"new\",\"labels\":{\"luascale.io/node-group\":\"g2\"}},"
		    "\"spec\":{\"providerID\":\"fake://g2/i-0\"},\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"}]}}");
	assert_true(s->nodes[0].replacing);
	run_for(w, 30);
	assert_int_equal(w->kube.cordons, 0);
	snapshot_free(s);
	/* Ready: the old node goes */
	s = snap(w, OLD_NODE "," NODE_JSON("new", "g2", "fake://g2/i-0"));
	run_for(w, 30);
	assert_true(w->kube.cordons >= 1);
	assert_int_equal(w->kube.evictions, 1);
	assert_int_equal(w->kube.deleted, 1);
	assert_int_equal(w->cloud.terminated, 1);
	assert_string_equal(w->cloud.terminated_ids[0], "i-old");
	assert_non_null(strstr(w->kube.event_log, "old LuascaleReplaced: replaced by node new of group g2"));
	assert_non_null(strstr(w->kube.event_log, "disruption: drifted"));
	actuator_get_stats(w->act, &st);
	assert_int_equal(st.replaces_done, 1);
	assert_int_equal(st.replaces_failed, 0);
	assert_int_equal(st.replacing, 0);
	assert_int_equal(st.nodes_deleted, 1);
	plan_free(&p);
	snapshot_free(s);
	world_free(w);
}

/* A replace whose new node cannot be launched, or is not a Ready node in
 * max_provision_s, leaves the old node exactly as it was: never
 * cordoned; an Event says why. */
static void test_replace_that_fails_leaves_the_node(void **state)
{
	struct world *w = world_new(false);
	struct snapshot *s = snap(w, OLD_NODE);
	struct actuator_stats st;
	struct plan p;

	(void)state;
	plan_init(&p);
	/* the launch fails */
	w->cloud.fail = PROVIDER_NO_CAPACITY;
	add_replace(&p, "old", "g2", NULL);
	actuator_execute(w->act, &p, s);
	snapshot_free(s);
	run_for(w, 5);
	s = snap(w, OLD_NODE);
	assert_false(s->nodes[0].replacing);
	assert_int_equal(s->groups[0].replacing, 0);
	assert_non_null(strstr(w->kube.event_log, "old LuascaleReplaceFailed: replace failed: its new node's launch in group g2 failed: InsufficientInstanceCapacity"));
	actuator_get_stats(w->act, &st);
	assert_int_equal(st.replaces_failed, 1);
	assert_int_equal(st.replacing, 0);
	snapshot_free(s);

	/* the new node never becomes Ready */
	w->cloud.fail = PROVIDER_OK;
	w->kube.event_log[0] = '\0';
	s = snap(w, OLD_NODE);
	actuator_execute(w->act, &p, s);
	snapshot_free(s);
	run_for(w, 14 * 60);
	s = snap(w, OLD_NODE);
	assert_true(s->nodes[0].replacing);
	snapshot_free(s);
	run_for(w, 2 * 60);
	s = snap(w, OLD_NODE);
	assert_false(s->nodes[0].replacing);
	run_for(w, 2);
	assert_int_equal(w->cloud.terminated, 1); /* the new instance, not the old one */
	assert_string_equal(w->cloud.terminated_ids[0], "i-0");
	assert_non_null(strstr(w->kube.event_log, "old LuascaleReplaceFailed: replace failed: instance i-0 did not become a Ready node in 900s"));
	assert_int_equal(w->kube.cordons, 0);
	assert_int_equal(w->kube.evictions, 0);
	assert_int_equal(w->kube.deleted, 0);
	actuator_get_stats(w->act, &st);
	assert_int_equal(st.replaces_failed, 2);
	assert_int_equal(st.replaces_done, 0);
	plan_free(&p);
	snapshot_free(s);
	world_free(w);
}

static void test_lost_leadership_starts_nothing_new(void **state)
{
	struct actuator_config cfg;
	struct world *w;
	struct snapshot *s;
	struct actuator_stats st;
	struct plan p, q;
	size_t named;

	(void)state;
	actuator_config_default(&cfg);
	cfg.may_act = gate;
	gate_open = true;
	w = world_new_cfg(&cfg);
	s = snap(w, NODE_JSON("n0", "g1", "fake://g1/i-7"));
	w->kube.n_pods = 1;
	snprintf(w->kube.pods[0].name, 32, "web-1");
	w->kube.pods[0].present = true;
	w->kube.pods[0].refusals = 3; /* the drain takes several passes */
	plan_init(&p);
	add_action(&p, ACTION_SCALE_UP, "g1", 2);
	add_action(&p, ACTION_CORDON, "n0", 0);
	add_action(&p, ACTION_DRAIN, "n0", 0);
	add_action(&p, ACTION_DELETE, "n0", 0);
	actuator_execute(w->act, &p, s);
	run_for(w, 1);
	assert_true(w->kube.cordoned);
	assert_int_equal(w->kube.refused, 1);
	/* leadership is lost: what is in flight is named */
	gate_open = false;
	named = actuator_log_in_flight(w->act, "leadership lost");
	assert_int_equal(named, 2);
	assert_non_null(strstr(w->all_log, "leadership lost: a cloud call is in flight: scale_up g1, 2 instance(s)"));
	assert_non_null(strstr(w->all_log, "leadership lost: the removal of node n0 is in flight"));
	/* a plan handed over now starts nothing */
	plan_init(&q);
	add_action(&q, ACTION_SCALE_UP, "g2", 1);
	actuator_execute(w->act, &q, s);
	run_for(w, 60);
	assert_int_equal(w->kube.refused, 1);   /* no eviction after the gate closed */
	assert_int_equal(w->kube.evictions, 0);
	assert_int_equal(w->kube.deleted, 0);
	assert_int_equal(w->kube.uncordons, 0); /* no give-back: the next leader's */
	assert_true(w->kube.cordoned);
	assert_int_equal(w->cloud.created, 2);  /* g1's call was already made: it ends */
	assert_non_null(strstr(w->all_log, "scale_up g2 +1 not started: this process no longer leads"));
	if (!strstr(w->all_log, "n0 not done: this process no longer leads (drain in progress"))
		print_message("%s", w->all_log);
	assert_non_null(strstr(w->all_log, "n0 not done: this process no longer leads (drain in progress"));
	actuator_get_stats(w->act, &st);
	assert_int_equal(st.launch_requests, 2);
	assert_int_equal(st.busy, 0);
	assert_true(st.actions_abandoned >= 3); /* drain, delete, g2's launch */
	plan_free(&p);
	plan_free(&q);
	snapshot_free(s);
	world_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lost_leadership_starts_nothing_new),
		cmocka_unit_test(test_replace_launches_first_then_removes),
		cmocka_unit_test(test_replace_that_fails_leaves_the_node),
		cmocka_unit_test(test_launches_run_in_parallel_and_report_each_instance),
		cmocka_unit_test(test_in_flight_counts_as_upcoming),
		cmocka_unit_test(test_instance_never_ready_is_terminated_and_group_backed_off),
		cmocka_unit_test(test_timed_out_launch_backs_off_once),
		cmocka_unit_test(test_transient_launch_failure_backs_off),
		cmocka_unit_test(test_given_back_instances_are_not_upcoming),
		cmocka_unit_test(test_failed_launch_backs_off_doubling),
		cmocka_unit_test(test_drain_evicts_retries_pdb_then_deletes),
		cmocka_unit_test(test_failed_eviction_counted_and_retried),
		cmocka_unit_test(test_delete_waits_for_drain_and_gives_up),
		cmocka_unit_test(test_delete_terminates_first_and_retries),
		cmocka_unit_test(test_retry_after_holds_the_cloud),
		cmocka_unit_test(test_timed_out_terminate_is_retried),
		cmocka_unit_test(test_sweep_terminates_instances_without_nodes),
		cmocka_unit_test(test_sweep_refuses_a_mass_termination),
		cmocka_unit_test(test_dry_run_does_nothing),
		cmocka_unit_test(test_shutdown_mid_launch_accounts_for_everything),
		cmocka_unit_test(test_real_pool),
		cmocka_unit_test(test_slow_launches_do_not_wait_for_threads),
		cmocka_unit_test(test_drain_rechecks_each_pod_as_fetched),
		cmocka_unit_test(test_failed_cordon_aborts_the_drain),
		cmocka_unit_test(test_deleted_node_is_never_acted_on_again),
		cmocka_unit_test(test_cordon_given_back_when_removal_does_not_finish),
		cmocka_unit_test(test_restart_gives_back_abandoned_cordons),
		cmocka_unit_test(test_max_concurrent_drains),
		cmocka_unit_test(test_throttled_eviction_says_what_the_server_said),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
