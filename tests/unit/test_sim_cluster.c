/*
 * Tests for sim/world/cluster.c in virtual time: nodes register after their
 * instance boots (never when stuck), the scheduler binds pods where they fit
 * and not where they do not (resources, taints, selectors, cordons), pods
 * complete after their duration, evictions honour PDBs, controllers bring
 * evicted pods back, node deletion, NoExecute taints, DaemonSets, the
 * snapshot the engine sees, and determinism of the event trace.
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
#include "runtime/clock.h"
#include "runtime/executor.h"
#include "sched.h"
#include "sim/clouds/cloud.h"
#include "sim/world/cluster.h"

#define S CLOCK_NS_PER_S
#define GI (1LL << 30)
#define WALL0 1700000000

static struct kv workers_labels[] = {{"luascale.io/node-group", "workers"}};
static struct kv gpu_labels[] = {{"luascale.io/node-group", "gpu"}, {"accelerator", "gpu"}};
static struct taint gpu_taints[] = {{"nvidia.com/gpu", "present", TAINT_NO_SCHEDULE}};
static struct res_ext gpu_ext[] = {{"nvidia.com/gpu", 1}};

static const struct node_group groups[] = {
	{.name = "workers", .min = 0, .max = 20, .price_per_hour = 0.2,
	 .selector = {workers_labels, 1},
	 .tmpl = {.allocatable = {.cpu_m = 4000, .memory = 16 * GI, .pods = 110},
		  .labels = {workers_labels, 1}}},
	{.name = "gpu", .min = 0, .max = 4, .price_per_hour = 1.5,
	 .selector = {gpu_labels, 1},
	 .tmpl = {.allocatable = {.cpu_m = 8000, .memory = 32 * GI, .pods = 110,
				  .ext = gpu_ext, .n_ext = 1},
		  .labels = {gpu_labels, 2}, .taints = gpu_taints, .n_taints = 1}},
};

static struct kv app_web[] = {{"app", "web"}};
static struct kv app_hub[] = {{"app", "hub"}};
static struct kv sel_gpu[] = {{"accelerator", "gpu"}};
static struct kv sel_zone[] = {{"zone", "a"}};
static struct toleration tol_gpu[] = {{"nvidia.com/gpu", "", TOLERATION_EXISTS, -1}};
static struct res_ext one_gpu[] = {{"nvidia.com/gpu", 1}};

struct world {
	struct clock *clk;
	struct executor *ex;
	struct sim_cloud *cloud;
	struct sim_cluster *cl;
	struct kubeops kube;
	struct sim_pod_spec specs[16];
	int n_specs;
	struct buf trace;
};

static void trace_fn(void *ud, int64_t now, const char *line)
{
	struct world *w = ud;

	buf_printf(&w->trace, "%.3f %s\n", (double)now / S, line);
}

static struct world *world_new_opts(const struct sim_cloud_opts *co,
				    const struct sim_cluster_opts *clo)
{
	struct world *w = calloc(1, sizeof(*w));
	struct sim_cloud_opts o;
	struct errbuf err;

	assert_non_null(w);
	sim_cloud_opts_default(&o);
	o.boot_delay_ns = 60 * S;
	o.boot_jitter_ns = 0;
	o.launch_latency_ns = 0;
	w->clk = vclock_new(WALL0);
	w->ex = executor_new_virtual(w->clk);
	w->cloud = sim_cloud_new(w->ex, groups, 2, co ? co : &o, &err);
	assert_non_null(w->cloud);
	sim_cloud_set_trace(w->cloud, trace_fn, w);
	w->cl = sim_cluster_new(w->cloud, clo, &err);
	assert_non_null(w->cl);
	sim_cluster_kubeops(w->cl, &w->kube);
	return w;
}

static struct world *world_new(void)
{
	return world_new_opts(NULL, NULL);
}

static void world_free(struct world *w)
{
	executor_shutdown(w->ex, clock_now(w->clk));
	sim_cluster_free(w->cl);
	sim_cloud_free(w->cloud);
	vclock_free(w->clk);
	buf_free(&w->trace);
	free(w);
}

static void run_to(struct world *w, int64_t t_s)
{
	executor_run_until(w->ex, t_s * S);
}

/* A spec that lives as long as the world. */
static int add_spec(struct world *w, const char *name, int64_t cpu_m, int64_t mem,
		    enum sim_controller ctrl, int64_t duration_s)
{
	struct sim_pod_spec *sp;
	struct errbuf err;
	int h;

	assert_true(w->n_specs < 16);
	sp = &w->specs[w->n_specs++];
	memset(sp, 0, sizeof(*sp));
	sp->name = name;
	sp->ns = "default";
	sp->requests.cpu_m = cpu_m;
	sp->requests.memory = mem;
	sp->controller = ctrl;
	sp->duration_ns = duration_s * S;
	sp->grace_ns = 30 * S;
	h = sim_cluster_add_spec(w->cl, sp, &err);
	assert_true(h >= 0);
	return h;
}

/* Same, changed by the caller before it is added. */
static struct sim_pod_spec *new_spec(struct world *w, const char *name, int64_t cpu_m,
				     enum sim_controller ctrl)
{
	struct sim_pod_spec *sp;

	assert_true(w->n_specs < 16);
	sp = &w->specs[w->n_specs++];
	memset(sp, 0, sizeof(*sp));
	sp->name = name;
	sp->ns = "default";
	sp->requests.cpu_m = cpu_m;
	sp->requests.memory = GI;
	sp->controller = ctrl;
	sp->grace_ns = 30 * S;
	return sp;
}

static int reg(struct world *w, struct sim_pod_spec *sp)
{
	struct errbuf err;
	int h = sim_cluster_add_spec(w->cl, sp, &err);

	assert_true(h >= 0);
	return h;
}

static void create(struct world *w, int spec, int count)
{
	struct errbuf err;

	assert_int_equal(sim_cluster_create_pods(w->cl, spec, count, 0, &err), 0);
}

static void nodes(struct world *w, const char *group, int n)
{
	struct errbuf err;

	assert_int_equal(sim_cluster_add_nodes(w->cl, group, n, &err), 0);
}

static struct sim_pod_info pod(struct world *w, const char *name)
{
	struct sim_pod_info info;

	memset(&info, 0, sizeof(info));
	assert_int_equal(sim_cluster_pod(w->cl, "default", name, &info), 0);
	return info;
}

static bool pod_exists(struct world *w, const char *name)
{
	struct sim_pod_info info;

	return sim_cluster_pod(w->cl, "default", name, &info) == 0;
}

static int evict(struct world *w, const char *name, struct kube_status *st)
{
	return w->kube.ops->evict(w->kube.ctx, "default", name, -1, st);
}

/* ---- nodes ---- */

static void test_nodes_register_after_boot(void **state)
{
	struct world *w = world_new();
	struct sim_node_info ni;
	struct sim_fault f = {0};
	struct errbuf err;
	int64_t node_ns;

	(void)state;
	assert_int_equal(sim_cloud_launch(w->cloud, "workers", 1, NULL, NULL, NULL), 0);
	run_to(w, 69);
	assert_int_equal(sim_cluster_node(w->cl, "workers-1", &ni), -1);
	run_to(w, 70); /* boot 60 s + kubelet 10 s */
	assert_int_equal(sim_cluster_node(w->cl, "workers-1", &ni), 0);
	assert_true(ni.ready);
	assert_false(ni.unschedulable);
	assert_string_equal(ni.group, "workers");
	assert_int_equal(ni.free_cpu_m, 4000);
	run_to(w, 100);
	assert_int_equal(sim_cluster_group_nodes(w->cl, 0, &node_ns), 1);
	assert_int_equal(node_ns, 30 * S);

	/* a stuck boot: the instance runs, no node ever registers */
	f.kind = SIM_FAULT_STUCK_BOOT;
	assert_int_equal(sim_cloud_add_fault(w->cloud, &f, &err), 0);
	assert_int_equal(sim_cloud_launch(w->cloud, "workers", 1, NULL, NULL, NULL), 0);
	run_to(w, 10000);
	assert_int_equal(sim_cluster_node(w->cl, "workers-2", &ni), -1);
	assert_int_equal(sim_cloud_target(w->cloud, 0), 2);
	assert_int_equal(sim_cluster_group_nodes(w->cl, 0, NULL), 1);
	world_free(w);
}

/* ---- the scheduler ---- */

static void test_scheduler_fits(void **state)
{
	struct world *w = world_new();
	struct sim_pod_spec *gpu_job, *zoned;
	struct sim_pod_info p;
	int small, big, hg, hz;

	(void)state;
	nodes(w, "workers", 1);
	nodes(w, "gpu", 1);
	small = add_spec(w, "small", 1000, GI, SIM_CTRL_REPLICASET, 0);
	big = add_spec(w, "big", 3000, GI, SIM_CTRL_REPLICASET, 0);
	gpu_job = new_spec(w, "train", 1000, SIM_CTRL_JOB);
	gpu_job->tolerations = tol_gpu;
	gpu_job->n_tolerations = 1;
	gpu_job->node_selector.items = sel_gpu;
	gpu_job->node_selector.n = 1;
	gpu_job->requests.ext = one_gpu;
	gpu_job->requests.n_ext = 1;
	hg = reg(w, gpu_job);
	zoned = new_spec(w, "zoned", 100, SIM_CTRL_REPLICASET);
	zoned->node_selector.items = sel_zone;
	zoned->node_selector.n = 1;
	hz = reg(w, zoned);

	create(w, small, 3);
	create(w, big, 1);
	create(w, hg, 2);
	create(w, hz, 1);
	run_to(w, 0);
	/* small pods fill the worker, never the tainted gpu node */
	assert_string_equal(pod(w, "small-1").node, "workers-1");
	assert_string_equal(pod(w, "small-3").node, "workers-1");
	assert_int_equal(pod(w, "small-3").phase, POD_RUNNING);
	/* big: no cpu left on the worker, the gpu node's taint */
	p = pod(w, "big-1");
	assert_string_equal(p.node, "");
	assert_int_equal(p.phase, POD_PENDING);
	assert_true(p.unschedulable);
	assert_string_equal(p.message,
			    "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint.");
	/* tolerates the taint and selects the gpu node; one gpu only */
	assert_string_equal(pod(w, "train-1").node, "gpu-1");
	p = pod(w, "train-2");
	assert_true(p.unschedulable);
	assert_non_null(strstr(p.message, "Insufficient extended resources"));
	p = pod(w, "zoned-1");
	assert_true(p.unschedulable);
	assert_non_null(strstr(p.message, "2 node(s) didn't match Pod's node affinity/selector"));

	/* a new worker: big fits there */
	assert_int_equal(sim_cloud_launch(w->cloud, "workers", 1, NULL, NULL, NULL), 0);
	run_to(w, 69);
	assert_true(pod(w, "big-1").unschedulable);
	run_to(w, 71);
	p = pod(w, "big-1");
	assert_string_equal(p.node, "workers-2");
	assert_false(p.unschedulable);
	assert_string_equal(p.message, "");
	assert_int_equal(p.bound_ns, 70 * S);
	world_free(w);
}

static void test_scheduler_interval_and_priority(void **state)
{
	struct world *w = world_new();
	struct sim_pod_spec *hi;
	int lo, h;

	(void)state;
	nodes(w, "workers", 1);
	lo = add_spec(w, "lo", 3000, GI, SIM_CTRL_REPLICASET, 0);
	hi = new_spec(w, "hi", 3000, SIM_CTRL_REPLICASET);
	hi->priority = 1000;
	h = reg(w, hi);
	/* both wait for the same pass: the higher priority wins the room */
	run_to(w, 5);
	create(w, lo, 1);
	create(w, h, 1);
	run_to(w, 5);
	assert_string_equal(pod(w, "hi-1").node, "workers-1");
	assert_true(pod(w, "lo-1").unschedulable);
	world_free(w);

	w = world_new();
	nodes(w, "workers", 1);
	lo = add_spec(w, "lo", 3000, GI, SIM_CTRL_REPLICASET, 0);
	hi = new_spec(w, "hi", 3000, SIM_CTRL_REPLICASET);
	hi->priority = 1000;
	h = reg(w, hi);
	create(w, lo, 1); /* bound in the pass at 0 */
	run_to(w, 0);
	create(w, lo, 1);
	create(w, h, 1);
	/* no pass before 1 s: at most one per interval */
	run_to(w, 0);
	assert_string_equal(pod(w, "lo-2").node, "");
	assert_false(pod(w, "lo-2").unschedulable);
	world_free(w);
}

static void test_least_allocated(void **state)
{
	struct sim_cluster_opts co;
	struct world *w;
	int h;

	(void)state;
	w = world_new();
	nodes(w, "workers", 2);
	h = add_spec(w, "p", 500, GI, SIM_CTRL_REPLICASET, 0);
	create(w, h, 4);
	run_to(w, 0);
	assert_string_equal(pod(w, "p-4").node, "workers-1"); /* first fit packs */
	world_free(w);

	sim_cluster_opts_default(&co);
	co.sched = SIM_SCHED_LEAST_ALLOCATED;
	w = world_new_opts(NULL, &co);
	nodes(w, "workers", 2);
	h = add_spec(w, "p", 500, GI, SIM_CTRL_REPLICASET, 0);
	create(w, h, 4);
	run_to(w, 0);
	assert_string_equal(pod(w, "p-1").node, "workers-1");
	assert_string_equal(pod(w, "p-2").node, "workers-2");
	assert_string_equal(pod(w, "p-3").node, "workers-1");
	assert_string_equal(pod(w, "p-4").node, "workers-2");
	world_free(w);
}

static void test_pods_complete(void **state)
{
	struct world *w = world_new();
	struct sim_node_info ni;
	struct sim_stats st;
	int h;

	(void)state;
	nodes(w, "workers", 1);
	h = add_spec(w, "job", 1000, GI, SIM_CTRL_JOB, 100);
	create(w, h, 1);
	run_to(w, 99);
	assert_int_equal(pod(w, "job-1").phase, POD_RUNNING);
	run_to(w, 100);
	assert_int_equal(pod(w, "job-1").phase, POD_SUCCEEDED);
	assert_string_equal(pod(w, "job-1").node, "workers-1"); /* still listed */
	assert_int_equal(sim_cluster_node(w->cl, "workers-1", &ni), 0);
	assert_int_equal(ni.free_cpu_m, 4000); /* finished pods hold nothing */
	assert_int_equal(ni.n_pods, 1);
	run_to(w, 100 + 299);
	assert_true(pod_exists(w, "job-1"));
	run_to(w, 100 + 300); /* finished_ttl */
	assert_false(pod_exists(w, "job-1"));
	sim_cluster_get_stats(w->cl, &st);
	assert_int_equal(st.pods_succeeded, 1);
	assert_int_equal(st.n_pending_ns, 1);
	assert_int_equal(st.pending_ns[0], 0);
	world_free(w);
}

/* ---- evictions and controllers ---- */

static void test_eviction_honours_pdb(void **state)
{
	struct world *w = world_new();
	struct kube_status st;
	struct pdb b;
	struct errbuf err;
	struct sim_pod_spec *web;
	struct snapshot *s;
	int h;

	(void)state;
	nodes(w, "workers", 2);
	web = new_spec(w, "web", 500, SIM_CTRL_REPLICASET);
	web->labels.items = app_web;
	web->labels.n = 1;
	h = reg(w, web);
	memset(&b, 0, sizeof(b));
	b.ns = "default";
	b.name = "web";
	b.selector.reqs = (struct selector_req[]){{"app", SELECTOR_IN, (const char *[]){"web"}, 1}};
	b.selector.n = 1;
	b.min_available = "2";
	assert_int_equal(sim_cluster_add_pdb(w->cl, &b, &err), 0);
	create(w, h, 3);
	run_to(w, 0);

	assert_int_equal(sim_cluster_snapshot(w->cl, false, &s, &err), 0);
	assert_int_equal(s->n_pdbs, 1);
	assert_int_equal(s->pdbs[0].disruptions_allowed, 1);
	snapshot_free(s);

	assert_int_equal(evict(w, "web-1", &st), 0);
	assert_int_equal(st.code, KUBE_OK);
	assert_true(pod(w, "web-1").terminating);
	assert_int_equal(evict(w, "web-2", &st), -1);
	assert_int_equal(st.code, KUBE_PDB_BLOCKED);
	assert_non_null(strstr(st.message, "disruption budget default/web"));
	assert_int_equal(pod(w, "web-2").phase, POD_RUNNING);
	/* evicting a pod being evicted is fine */
	assert_int_equal(evict(w, "web-1", &st), 0);

	/* the replacement runs: one more disruption is allowed */
	run_to(w, 1);
	assert_string_equal(pod(w, "web-4").node, "workers-1");
	assert_int_equal(evict(w, "web-2", &st), 0);
	assert_int_equal(evict(w, "web-3", &st), -1);
	assert_int_equal(st.code, KUBE_PDB_BLOCKED);
	assert_int_equal(evict(w, "nope", &st), -1);
	assert_int_equal(st.code, KUBE_NOT_FOUND);
	{
		struct sim_stats ss;

		sim_cluster_get_stats(w->cl, &ss);
		assert_int_equal(ss.evictions, 2);
		assert_int_equal(ss.evictions_blocked, 2);
	}
	world_free(w);
}

static void test_pdb_max_unavailable_percent(void **state)
{
	struct world *w = world_new();
	struct kube_status st;
	struct pdb b;
	struct errbuf err;
	struct sim_pod_spec *web;
	int h, i, ok = 0;
	char name[32];

	(void)state;
	nodes(w, "workers", 2);
	web = new_spec(w, "web", 100, SIM_CTRL_REPLICASET);
	web->labels.items = app_web;
	web->labels.n = 1;
	h = reg(w, web);
	memset(&b, 0, sizeof(b));
	b.ns = "default";
	b.name = "web";
	b.selects_all = true;
	b.max_unavailable = "25%"; /* of 10: 3 (rounded up) */
	assert_int_equal(sim_cluster_add_pdb(w->cl, &b, &err), 0);
	b.max_unavailable = "x";
	assert_int_equal(sim_cluster_add_pdb(w->cl, &b, &err), -1);
	b.min_available = "1";
	b.max_unavailable = "1";
	assert_int_equal(sim_cluster_add_pdb(w->cl, &b, &err), -1);
	create(w, h, 10);
	run_to(w, 0);
	for (i = 1; i <= 10; i++) {
		snprintf(name, sizeof(name), "web-%d", i);
		if (evict(w, name, &st) == 0)
			ok++;
	}
	assert_int_equal(ok, 3);
	world_free(w);
}

static void test_evicted_pods_come_back(void **state)
{
	struct world *w = world_new();
	struct kube_status st;
	struct sim_stats ss;
	struct sim_pod_info p;
	int rs, sts, job, bare, svc;

	(void)state;
	nodes(w, "workers", 2);
	rs = add_spec(w, "rs", 100, GI, SIM_CTRL_REPLICASET, 0);
	sts = add_spec(w, "db", 100, GI, SIM_CTRL_STATEFULSET, 0);
	job = add_spec(w, "job", 100, GI, SIM_CTRL_JOB, 100);
	bare = add_spec(w, "bare", 100, GI, SIM_CTRL_NONE, 0);
	svc = add_spec(w, "svc", 100, GI, SIM_CTRL_REPLICASET, 100);
	create(w, rs, 1);
	create(w, sts, 1);
	create(w, job, 1);
	create(w, bare, 1);
	create(w, svc, 1);
	run_to(w, 60);

	/* ReplicaSet: a new pod at once, pending; the old one terminates over its grace */
	assert_int_equal(evict(w, "rs-1", &st), 0);
	p = pod(w, "rs-2");
	assert_int_equal(p.phase, POD_PENDING);
	assert_string_equal(p.node, "");
	assert_true(pod(w, "rs-1").terminating);
	/* StatefulSet: same name, once the old one is gone */
	assert_int_equal(evict(w, "db-1", &st), 0);
	assert_true(pod(w, "db-1").terminating);
	/* Job: the work starts over */
	assert_int_equal(evict(w, "job-1", &st), 0);
	/* bare: gone for good */
	assert_int_equal(evict(w, "bare-1", &st), 0);
	/* a service pod that had 40 s left */
	assert_int_equal(evict(w, "svc-1", &st), 0);

	/* the next scheduling pass binds the replacements */
	run_to(w, 61);
	assert_string_equal(pod(w, "rs-2").node, "workers-1");
	assert_int_equal(pod(w, "job-2").bound_ns, 60 * S);
	assert_int_equal(pod(w, "svc-2").bound_ns, 60 * S);
	run_to(w, 89);
	assert_true(pod(w, "db-1").terminating);
	assert_true(pod(w, "rs-1").terminating);
	run_to(w, 90); /* grace periods over */
	assert_false(pod_exists(w, "rs-1"));
	assert_false(pod_exists(w, "bare-1"));
	assert_false(pod_exists(w, "bare-2"));
	p = pod(w, "db-1");
	assert_false(p.terminating);
	assert_int_equal(p.created_ns, 90 * S);
	assert_int_equal(p.phase, POD_RUNNING);

	run_to(w, 99);
	assert_int_equal(pod(w, "svc-2").phase, POD_RUNNING);
	run_to(w, 100);
	assert_int_equal(pod(w, "svc-2").phase, POD_SUCCEEDED); /* the 40 s that were left */
	run_to(w, 159);
	assert_int_equal(pod(w, "job-2").phase, POD_RUNNING);
	run_to(w, 160);
	assert_int_equal(pod(w, "job-2").phase, POD_SUCCEEDED); /* all 100 s again */

	sim_cluster_get_stats(w->cl, &ss);
	assert_int_equal(ss.evictions, 5);
	assert_int_equal(ss.pods_recreated, 4);
	assert_int_equal(ss.bare_pods_lost, 1);
	assert_int_equal(ss.pods_killed, 0);
	world_free(w);
}

/* ---- node operations ---- */

static void test_delete_node(void **state)
{
	struct world *w = world_new();
	struct kube_status st;
	struct kube_pod_ref *refs;
	struct sim_stats ss;
	struct sim_node_info ni;
	struct sim_instance *in;
	struct sim_pod_spec *hub, *ds;
	struct label_selector prot;
	size_t n, i;
	int rs, bare, hh;

	(void)state;
	nodes(w, "workers", 2);
	ds = new_spec(w, "agent", 100, SIM_CTRL_DAEMONSET);
	reg(w, ds);
	rs = add_spec(w, "rs", 1000, GI, SIM_CTRL_REPLICASET, 0);
	bare = add_spec(w, "bare", 1000, GI, SIM_CTRL_NONE, 0);
	hub = new_spec(w, "hub", 1000, SIM_CTRL_STATEFULSET);
	hub->labels.items = app_hub;
	hub->labels.n = 1;
	hh = reg(w, hub);
	prot.reqs = (struct selector_req[]){{"app", SELECTOR_IN, (const char *[]){"hub"}, 1}};
	prot.n = 1;
	sim_cluster_set_protected(w->cl, &prot);
	create(w, rs, 1);
	create(w, bare, 1);
	create(w, hh, 1);
	run_to(w, 0);
	assert_string_equal(pod(w, "hub-1").node, "workers-1");

	assert_int_equal(w->kube.ops->node_pods(w->kube.ctx, "workers-1", &refs, &n, &st), 0);
	assert_int_equal(n, 4);
	for (i = 0; i < n; i++)
		assert_int_equal(refs[i].evictable, strncmp(refs[i].name, "agent-", 6) != 0);
	kube_pod_refs_free(refs, n);

	assert_int_equal(w->kube.ops->delete_node(w->kube.ctx, "workers-1", &st), 0);
	assert_int_equal(st.code, KUBE_OK);
	assert_int_equal(sim_cluster_node(w->cl, "workers-1", &ni), -1);
	assert_int_equal(w->kube.ops->node_pods(w->kube.ctx, "workers-1", &refs, &n, &st), -1);
	assert_int_equal(st.code, KUBE_NOT_FOUND);
	assert_int_equal(w->kube.ops->delete_node(w->kube.ctx, "workers-1", &st), -1);
	assert_int_equal(st.code, KUBE_NOT_FOUND);
	/* the machine goes too */
	in = sim_cloud_find_instance(w->cloud, "workers-1");
	assert_int_equal(in->state, INSTANCE_STOPPING);
	assert_int_equal(sim_cloud_target(w->cloud, 0), 1);

	/* controller pods come back pending and land on the other node */
	assert_int_equal(pod(w, "rs-2").phase, POD_PENDING);
	assert_int_equal(pod(w, "hub-1").phase, POD_PENDING);
	assert_false(pod_exists(w, "bare-1"));
	assert_false(pod_exists(w, "agent-1"));
	run_to(w, 1);
	assert_string_equal(pod(w, "rs-2").node, "workers-2");
	assert_string_equal(pod(w, "hub-1").node, "workers-2");
	sim_cluster_get_stats(w->cl, &ss);
	assert_int_equal(ss.pods_killed, 3);
	assert_int_equal(ss.protected_disrupted, 1);
	assert_int_equal(ss.bare_pods_lost, 1);
	assert_int_equal(ss.node_deletes, 1);
	assert_int_equal(ss.nodes_removed, 1);
	run_to(w, 100);
	assert_int_equal(in->state, INSTANCE_GONE);
	world_free(w);
}

static void test_instance_gone_removes_node(void **state)
{
	struct world *w = world_new();
	struct sim_node_info ni;
	const char *ids[] = {"workers-1"};
	int rs;

	(void)state;
	nodes(w, "workers", 1);
	rs = add_spec(w, "rs", 1000, GI, SIM_CTRL_REPLICASET, 0);
	create(w, rs, 1);
	run_to(w, 0);
	assert_int_equal(sim_cloud_terminate(w->cloud, "workers", ids, 1, NULL, NULL), 0);
	run_to(w, 1); /* terminate latency: stopping, NotReady */
	assert_int_equal(sim_cluster_node(w->cl, "workers-1", &ni), 0);
	assert_false(ni.ready);
	run_to(w, 21); /* gone: the node and its pods go */
	assert_int_equal(sim_cluster_node(w->cl, "workers-1", &ni), -1);
	assert_true(pod(w, "rs-2").unschedulable);
	world_free(w);
}

static void test_cordon_label_taint(void **state)
{
	struct world *w = world_new();
	struct kube_status st;
	struct sim_pod_spec *zoned, *tol;
	struct sim_stats ss;
	int h, hz, ht;

	(void)state;
	nodes(w, "workers", 1);
	assert_int_equal(w->kube.ops->cordon(w->kube.ctx, "workers-1", true, &st), 0);
	h = add_spec(w, "p", 100, GI, SIM_CTRL_REPLICASET, 0);
	create(w, h, 1);
	run_to(w, 5);
	assert_true(pod(w, "p-1").unschedulable);
	assert_non_null(strstr(pod(w, "p-1").message, "node(s) were unschedulable"));
	assert_int_equal(w->kube.ops->cordon(w->kube.ctx, "workers-1", false, &st), 0);
	run_to(w, 6);
	assert_string_equal(pod(w, "p-1").node, "workers-1");

	/* a label makes a selector match */
	zoned = new_spec(w, "zoned", 100, SIM_CTRL_REPLICASET);
	zoned->node_selector.items = sel_zone;
	zoned->node_selector.n = 1;
	hz = reg(w, zoned);
	create(w, hz, 1);
	run_to(w, 10);
	assert_true(pod(w, "zoned-1").unschedulable);
	assert_int_equal(w->kube.ops->label(w->kube.ctx, "workers-1", "zone", "a", &st), 0);
	run_to(w, 11);
	assert_string_equal(pod(w, "zoned-1").node, "workers-1");

	/* NoExecute: pods that do not tolerate it go (controllers replace them) */
	tol = new_spec(w, "tol", 100, SIM_CTRL_REPLICASET);
	tol->tolerations = (struct toleration[]){{"dedicated", "", TOLERATION_EXISTS, -1}};
	tol->n_tolerations = 1;
	ht = reg(w, tol);
	create(w, ht, 1);
	run_to(w, 12);
	assert_int_equal(w->kube.ops->taint(w->kube.ctx, "workers-1", "dedicated", "x",
					    TAINT_NO_EXECUTE, false, &st), 0);
	assert_true(pod(w, "p-1").terminating);
	assert_true(pod(w, "zoned-1").terminating);
	assert_false(pod(w, "tol-1").terminating);
	run_to(w, 13);
	assert_true(pod(w, "p-2").unschedulable);
	assert_non_null(strstr(pod(w, "p-2").message, "untolerated taint"));
	assert_int_equal(w->kube.ops->taint(w->kube.ctx, "workers-1", "dedicated", NULL,
					    TAINT_NO_EXECUTE, true, &st), 0);
	run_to(w, 14);
	assert_string_equal(pod(w, "p-2").node, "workers-1");

	assert_int_equal(w->kube.ops->annotate(w->kube.ctx, "workers-1", "a/b", "c", &st), 0);
	assert_int_equal(w->kube.ops->label(w->kube.ctx, "nope", "zone", "a", &st), -1);
	assert_int_equal(st.code, KUBE_NOT_FOUND);
	assert_int_equal(w->kube.ops->event(w->kube.ctx, "workers-1", "Normal", "ScaleDown", "x"), 0);
	sim_cluster_get_stats(w->cl, &ss);
	assert_int_equal(ss.cordons, 1);
	assert_int_equal(ss.uncordons, 1);
	assert_int_equal(ss.labels, 1);
	assert_int_equal(ss.taints, 2);
	assert_int_equal(ss.annotations, 1);
	assert_int_equal(ss.events, 1);
	assert_int_equal(ss.pods_killed, 2);
	world_free(w);
}

static void test_daemonset(void **state)
{
	struct world *w = world_new();
	struct sim_pod_spec *ds;
	struct sim_node_info ni;
	struct errbuf err;

	(void)state;
	nodes(w, "workers", 1);
	nodes(w, "gpu", 1);
	ds = new_spec(w, "agent", 200, SIM_CTRL_DAEMONSET);
	reg(w, ds); /* on the worker; the gpu node's taint is not tolerated */
	assert_string_equal(pod(w, "agent-1").node, "workers-1");
	assert_false(pod_exists(w, "agent-2"));
	assert_int_equal(sim_cluster_create_pods(w->cl, 0, 1, 0, &err), -1);
	assert_int_equal(sim_cloud_launch(w->cloud, "workers", 1, NULL, NULL, NULL), 0);
	run_to(w, 70);
	assert_string_equal(pod(w, "agent-2").node, "workers-2");
	assert_int_equal(sim_cluster_node(w->cl, "workers-2", &ni), 0);
	assert_int_equal(ni.free_cpu_m, 3800);
	/* an evicted daemon pod comes back on its node once it is gone */
	{
		struct kube_status st;

		assert_int_equal(evict(w, "agent-1", &st), 0);
		run_to(w, 99);
		assert_true(pod(w, "agent-1").terminating);
		run_to(w, 100);
		assert_false(pod_exists(w, "agent-1"));
		assert_string_equal(pod(w, "agent-3").node, "workers-1");
	}
	world_free(w);
}

/* ---- what the engine sees ---- */

static void test_snapshot_round_trip(void **state)
{
	struct world *w = world_new();
	struct snapshot *s;
	struct errbuf err;
	struct pdb b;
	int32_t ni;
	int h, big, i;
	size_t k;

	(void)state;
	nodes(w, "workers", 2);
	h = add_spec(w, "web", 1000, 2 * GI, SIM_CTRL_REPLICASET, 0);
	big = add_spec(w, "big", 5000, GI, SIM_CTRL_REPLICASET, 0);
	memset(&b, 0, sizeof(b));
	b.ns = "default";
	b.name = "all";
	b.selects_all = true;
	b.min_available = "50%";
	assert_int_equal(sim_cluster_add_pdb(w->cl, &b, &err), 0);
	create(w, h, 5);
	create(w, big, 1);
	assert_int_equal(sim_cloud_launch(w->cloud, "workers", 1, NULL, NULL, NULL), 0);
	run_to(w, 2);

	assert_int_equal(sim_cluster_snapshot(w->cl, true, &s, &err), 0);
	assert_int_equal(s->now, WALL0 + 2);
	assert_int_equal(s->n_nodes, 2);
	assert_int_equal(s->n_pods, 6);
	assert_int_equal(s->n_groups, 2);
	assert_string_equal(s->groups[0].name, "workers");
	assert_int_equal(s->groups[0].current, 2);
	assert_int_equal(s->groups[0].target, 3); /* one instance booting */
	assert_int_equal(s->groups[1].current, 0);
	ni = snapshot_find_node(s, "workers-1");
	assert_true(ni >= 0);
	assert_int_equal(s->nodes[ni].group, 0);
	assert_string_equal(s->nodes[ni].provider_id, "sim://workers/workers-1");
	assert_true(s->nodes[ni].ready);
	assert_string_equal(kvlist_get(&s->nodes[ni].labels, "kubernetes.io/hostname"), "workers-1");
	assert_int_equal(s->nodes[ni].requested.cpu_m, 4000); /* four web pods */
	assert_int_equal(s->nodes[ni].n_pods, 4);
	/* pending: the big pod, tried and unschedulable, as the scheduler says */
	assert_int_equal(s->n_pending, 1);
	{
		const struct pod *p = &s->pods[s->pending[0]];
		char why[256];

		assert_string_equal(p->name, "big-1");
		assert_true(p->flags & POD_UNSCHEDULABLE);
		assert_string_equal(p->sched_message,
				    "0/2 nodes are available: 2 Insufficient cpu.");
		assert_string_equal(p->controller_kind, "ReplicaSet");
		assert_int_equal(p->requests.cpu_m, 5000);
		/* the engine's own predicates agree with the simulator's */
		for (k = 0; k < s->n_nodes; k++)
			assert_int_equal(sched_fits_node(s, p, k, why, sizeof(why)), SCHED_NO_CPU);
		assert_int_equal(sched_fits_template(p, &s->groups[0], why, sizeof(why)),
				 SCHED_NO_CPU);
	}
	for (i = 0; i < (int)s->n_pods; i++) {
		const struct pod *p = &s->pods[i];

		if (strcmp(p->name, "big-1") == 0)
			continue;
		assert_int_equal(p->phase, POD_RUNNING);
		assert_true(p->node >= 0);
		assert_int_equal(p->created, WALL0);
	}
	assert_int_equal(s->n_pdbs, 1);
	/* 6 pods expected, 5 healthy, 3 must stay */
	assert_int_equal(s->pdbs[0].disruptions_allowed, 2);
	snapshot_free(s);

	assert_int_equal(sim_cluster_snapshot(w->cl, false, &s, &err), 0);
	assert_int_equal(s->groups[0].target, 2);
	snapshot_free(s);
	world_free(w);
}

/* ---- determinism ---- */

/* After a group's image changes, a snapshot says its instances on the old
 * image have drifted (the cloud's word) and a new instance has not. */
static void test_snapshot_image_drift(void **state)
{
	struct world *w = world_new();
	struct snapshot *s;
	struct errbuf err;
	char why[192];
	size_t k, drifted = 0;

	(void)state;
	nodes(w, "workers", 2);
	assert_int_equal(sim_cloud_set_image(w->cloud, 0, "ami-0new", &err), 0);
	assert_int_equal(sim_cloud_launch(w->cloud, "workers", 1, NULL, NULL, NULL), 0);
	run_to(w, 120);
	assert_int_equal(sim_cluster_snapshot(w->cl, false, &s, &err), 0);
	assert_int_equal(s->n_nodes, 3);
	for (k = 0; k < s->n_nodes; k++) {
		bool d = snapshot_node_drift(s, k, why, sizeof(why));

		if (!strcmp(s->nodes[k].name, "workers-3")) {
			assert_false(d);
			continue;
		}
		assert_true(d);
		assert_string_equal(why, "image " SIM_IMAGE_DEFAULT " is not group workers's ami-0new");
		drifted++;
	}
	assert_int_equal(drifted, 2);
	snapshot_free(s);
	world_free(w);
}

static char *traced_run(uint64_t seed)
{
	struct sim_cloud_opts co;
	struct world *w;
	struct kube_status st;
	int h, job;
	char *out;

	sim_cloud_opts_default(&co);
	co.seed = seed;
	co.boot_jitter_ns = 30 * S;
	w = world_new_opts(&co, NULL);
	nodes(w, "workers", 1);
	h = add_spec(w, "web", 1500, GI, SIM_CTRL_REPLICASET, 600);
	job = add_spec(w, "job", 1000, GI, SIM_CTRL_JOB, 300);
	create(w, h, 6);
	create(w, job, 4);
	assert_int_equal(sim_cloud_launch(w->cloud, "workers", 3, NULL, NULL, NULL), 0);
	run_to(w, 200);
	w->kube.ops->evict(w->kube.ctx, "default", "web-1", -1, &st);
	w->kube.ops->cordon(w->kube.ctx, "workers-2", true, &st);
	run_to(w, 3600);
	out = buf_take(&w->trace);
	world_free(w);
	return out;
}

static void test_same_seed_same_trace(void **state)
{
	char *a = traced_run(3), *b = traced_run(3), *c = traced_run(4);

	(void)state;
	assert_non_null(strstr(a, "pod default/job-4 succeeded"));
	assert_string_equal(a, b);
	assert_true(strcmp(a, c) != 0);
	free(a);
	free(b);
	free(c);
}

static void test_bad_specs_and_free_early(void **state)
{
	struct world *w = world_new();
	struct sim_pod_spec *sp;
	struct errbuf err;
	int h;

	(void)state;
	h = add_spec(w, "web", 100, GI, SIM_CTRL_REPLICASET, 10);
	sp = new_spec(w, "web", 100, SIM_CTRL_JOB);
	assert_int_equal(sim_cluster_add_spec(w->cl, sp, &err), -1);
	assert_non_null(strstr(err.msg, "default/web"));
	sp->ns = NULL;
	assert_int_equal(sim_cluster_add_spec(w->cl, sp, &err), -1);
	assert_int_equal(sim_cluster_create_pods(w->cl, 7, 1, 0, &err), -1);
	assert_int_equal(sim_cluster_add_nodes(w->cl, "nope", 1, &err), -1);

	/* the cluster goes first, its events after it */
	nodes(w, "workers", 1);
	create(w, h, 3);
	run_to(w, 1);
	sim_cluster_free(w->cl);
	w->cl = NULL;
	run_to(w, 1000);
	assert_int_equal(executor_pending(w->ex), 0);
	world_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nodes_register_after_boot),
		cmocka_unit_test(test_snapshot_image_drift),
		cmocka_unit_test(test_scheduler_fits),
		cmocka_unit_test(test_scheduler_interval_and_priority),
		cmocka_unit_test(test_least_allocated),
		cmocka_unit_test(test_pods_complete),
		cmocka_unit_test(test_eviction_honours_pdb),
		cmocka_unit_test(test_pdb_max_unavailable_percent),
		cmocka_unit_test(test_evicted_pods_come_back),
		cmocka_unit_test(test_delete_node),
		cmocka_unit_test(test_instance_gone_removes_node),
		cmocka_unit_test(test_cordon_label_taint),
		cmocka_unit_test(test_daemonset),
		cmocka_unit_test(test_snapshot_round_trip),
		cmocka_unit_test(test_same_seed_same_trace),
		cmocka_unit_test(test_bad_specs_and_free_early),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
