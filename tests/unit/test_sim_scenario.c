/*
 * Tests for sim/world/scenario.c: the example scenario parses into what it says,
 * the world built from it runs (arrivals at their times, waves, daemon
 * pods, initial nodes) and is the same for the same seed, node groups come
 * from a named luascale config, and bad scenarios fail with file:line:col
 * and the path of the key.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "buf.h"
#include "luascale_clouds.h"
#include "runtime/clock.h"
#include "runtime/executor.h"
#include "sim/clouds/sim_cloud_kind.h"
#include "sim/world/scenario.h"

#define S CLOCK_NS_PER_S
#define SMOKE SOURCE_DIR "/examples/scenarios/smoke.yaml"

static void test_smoke_parses(void **state)
{
	struct errbuf err;
	struct sim_scenario *sc = sim_scenario_load(SMOKE, &err);
	const struct sim_workload *w;

	(void)state;
	if (!sc)
		fail_msg("%s", err.msg);
	assert_int_equal(sc->seed, 42);
	assert_int_equal(sc->start_wall, 1714982400); /* 2024-05-06T08:00:00Z */
	assert_int_equal(sc->duration_ns, 3600 * S);
	assert_int_equal(sc->n_groups, 1);
	assert_string_equal(sc->groups[0].name, "workers");
	assert_int_equal(sc->groups[0].max, 8);
	assert_int_equal(sc->groups[0].tmpl.allocatable.cpu_m, 4000);
	assert_string_equal(kvlist_get(&sc->groups[0].tmpl.labels, "luascale.io/node-group"),
			    "workers");
	assert_int_equal(sc->cloud.launch_latency_ns, 2 * S);
	assert_int_equal(sc->cluster.register_delay_ns, 10 * S);
	assert_int_equal(sc->n_initial, 1);
	assert_int_equal(sc->initial[0].count, 2);
	assert_int_equal(sc->n_workloads, 3);
	w = &sc->workloads[0];
	assert_int_equal(w->spec.controller, SIM_CTRL_DAEMONSET);
	assert_string_equal(w->spec.ns, "kube-system");
	w = &sc->workloads[2];
	assert_string_equal(w->spec.name, "batch");
	assert_int_equal(w->spec.controller, SIM_CTRL_JOB);
	assert_int_equal(w->at_ns, 300 * S); /* "08:05" on a start at 08:00 */
	assert_int_equal(w->count, 24);
	assert_int_equal(w->spread_ns, 120 * S);
	assert_int_equal(w->every_ns, 1800 * S);
	assert_int_equal(w->times, 2);
	assert_int_equal(w->spec.requests.cpu_m, 1000);
	assert_int_equal(w->spec.requests.memory, 2LL << 30);
	assert_int_equal(w->spec.duration_ns, 600 * S);
	assert_int_equal(w->spec.grace_ns, 30 * S);
	assert_int_equal(sc->n_pdbs, 1);
	assert_string_equal(sc->pdbs[0].min_available, "2");
	assert_int_equal(sc->n_faults, 1);
	assert_int_equal(sc->faults[0].kind, SIM_FAULT_LAUNCH_ERROR);
	assert_int_equal(sc->faults[0].error, PROVIDER_NO_CAPACITY);
	assert_int_equal(sc->faults[0].from_ns, 300 * S);
	assert_int_equal(sc->faults[0].until_ns, 480 * S);
	sim_scenario_free(sc);
}

static void trace_fn(void *ud, int64_t now, const char *line)
{
	buf_printf(ud, "%lld %s\n", (long long)now, line);
}

struct run {
	struct clock *clk;
	struct executor *ex;
	struct sim_world *w;
	struct buf trace;
};

static void run_start(struct run *r, const struct sim_scenario *sc)
{
	struct errbuf err;

	memset(r, 0, sizeof(*r));
	r->clk = vclock_new(sc->start_wall);
	r->ex = executor_new_virtual(r->clk);
	r->w = sim_world_new(sc, r->ex, &err);
	if (!r->w)
		fail_msg("%s", err.msg);
	sim_cloud_set_trace(r->w->cloud, trace_fn, &r->trace);
}

static void run_end(struct run *r)
{
	executor_shutdown(r->ex, clock_now(r->clk));
	sim_world_free(r->w);
	vclock_free(r->clk);
	buf_free(&r->trace);
}

static int count_prefix(struct sim_cluster *c, const char *ns, const char *prefix, int upto)
{
	struct sim_pod_info info;
	char name[64];
	int i, n = 0;

	for (i = 1; i <= upto; i++) {
		snprintf(name, sizeof(name), "%s-%d", prefix, i);
		if (sim_cluster_pod(c, ns, name, &info) == 0)
			n++;
	}
	return n;
}

static void test_smoke_world_runs(void **state)
{
	struct errbuf err;
	struct sim_scenario *sc = sim_scenario_load(SMOKE, &err);
	struct sim_counts cnt;
	struct sim_stats st;
	struct run r;

	(void)state;
	assert_non_null(sc);
	run_start(&r, sc);
	executor_run_until(r.ex, 0);
	assert_int_equal(count_prefix(r.w->cluster, "default", "web", 10), 3);
	assert_int_equal(count_prefix(r.w->cluster, "kube-system", "node-agent", 10), 2);
	sim_cluster_counts(r.w->cluster, &cnt);
	assert_int_equal(cnt.nodes_ready, 2);
	assert_int_equal(cnt.pods_running, 5);

	executor_run_until(r.ex, 300 * S - 1);
	assert_int_equal(count_prefix(r.w->cluster, "default", "batch", 100), 0);
	executor_run_until(r.ex, 420 * S); /* the first wave is in */
	assert_int_equal(count_prefix(r.w->cluster, "default", "batch", 100), 24);
	sim_cluster_counts(r.w->cluster, &cnt);
	/* 8 cores, 0.2 for agents, 1.5 for web: 2.4 + 3.9 cores free, five 1-core jobs fit */
	assert_int_equal(cnt.pods_running, 5 + 5);
	assert_int_equal(cnt.pods_unschedulable, 19);

	executor_run_until(r.ex, 2100 * S - 1); /* the second wave starts at 08:35 */
	sim_cluster_get_stats(r.w->cluster, &st);
	assert_int_equal(st.pods_created, 3 + 2 + 24);
	executor_run_until(r.ex, 3600 * S);
	sim_cluster_get_stats(r.w->cluster, &st);
	assert_int_equal(st.pods_created, 3 + 2 + 48);
	assert_true(st.pods_succeeded > 6);
	run_end(&r);
	sim_scenario_free(sc);
}

static char *smoke_trace(uint64_t seed)
{
	struct errbuf err;
	struct sim_scenario *sc = sim_scenario_load(SMOKE, &err);
	struct run r;
	char *out;

	assert_non_null(sc);
	sc->seed = seed;
	run_start(&r, sc);
	/* launch through the cloud during the fault window and after it */
	assert_int_equal(sim_cloud_launch(r.w->cloud, "workers", 2, NULL, NULL, NULL), 0);
	executor_run_until(r.ex, 360 * S);
	assert_int_equal(sim_cloud_launch(r.w->cloud, "workers", 2, NULL, NULL, NULL), 0);
	executor_run_until(r.ex, 600 * S);
	assert_int_equal(sim_cloud_launch(r.w->cloud, "workers", 2, NULL, NULL, NULL), 0);
	executor_run_until(r.ex, 3600 * S);
	out = buf_take(&r.trace);
	run_end(&r);
	sim_scenario_free(sc);
	return out;
}

static void test_same_seed_same_day(void **state)
{
	char *a = smoke_trace(42), *b = smoke_trace(42), *c = smoke_trace(43);

	(void)state;
	assert_non_null(strstr(a, "launch workers 2 (2 will fail: no capacity)")); /* 08:06 */
	assert_non_null(strstr(a, "launch workers 2 (0 will fail)"));
	assert_non_null(strstr(a, "pod default/batch-48 created"));
	assert_string_equal(a, b);
	assert_true(strcmp(a, c) != 0);
	free(a);
	free(b);
	free(c);
}

/*
 * `luascale sim` runs on the machine's monotonic clock, which does not
 * start at 0 (it counts from boot): smoke.yaml's launch error window
 * (from 5m to 8m) must still be measured from the world's start.
 */
static void test_fault_windows_count_from_the_start(void **state)
{
	struct errbuf err;
	struct sim_scenario *sc = sim_scenario_load(SMOKE, &err);
	struct run r;
	int64_t boot = 3 * 86400 * S + 12345; /* three days of uptime */

	(void)state;
	assert_non_null(sc);
	memset(&r, 0, sizeof(r));
	r.clk = vclock_new(sc->start_wall);
	vclock_set(r.clk, boot);
	r.ex = executor_new_virtual(r.clk);
	r.w = sim_world_new(sc, r.ex, &err);
	if (!r.w)
		fail_msg("%s", err.msg);
	sim_cloud_set_trace(r.w->cloud, trace_fn, &r.trace);
	executor_run_until(r.ex, boot + 240 * S);  /* 4m: before the window */
	assert_int_equal(sim_cloud_launch(r.w->cloud, "workers", 1, NULL, NULL, NULL), 0);
	executor_run_until(r.ex, boot + 360 * S);  /* 6m: inside it */
	assert_int_equal(sim_cloud_launch(r.w->cloud, "workers", 2, NULL, NULL, NULL), 0);
	executor_run_until(r.ex, boot + 600 * S);  /* 10m: after it */
	assert_int_equal(sim_cloud_launch(r.w->cloud, "workers", 3, NULL, NULL, NULL), 0);
	executor_run_until(r.ex, boot + 700 * S);
	buf_puts(&r.trace, "");
	if (!strstr(r.trace.data, "launch workers 1 (0 will fail)") ||
	    !strstr(r.trace.data, "launch workers 2 (2 will fail: no capacity)") ||
	    !strstr(r.trace.data, "launch workers 3 (0 will fail)"))
		fail_msg("the launch error did not fire in its window only:\n%s", r.trace.data);
	run_end(&r);
	sim_scenario_free(sc);
}

static struct sim_scenario *parse(const char *text, struct errbuf *err)
{
	return sim_scenario_parse(text, strlen(text), "day.yaml", err);
}

static const char *const groups_yaml =
	"node_groups:\n"
	"  - name: workers\n"
	"    max: 4\n"
	"    template:\n"
	"      allocatable: {cpu: 4, memory: 16Gi}\n";

static void expect_error(const char *body, const char *want)
{
	char text[2048];
	struct errbuf err;
	struct sim_scenario *sc;

	snprintf(text, sizeof(text), "%s%s", groups_yaml, body);
	err.msg[0] = '\0';
	sc = parse(text, &err);
	if (sc) {
		sim_scenario_free(sc);
		fail_msg("parsed, expected an error containing: %s", want);
	}
	if (!strstr(err.msg, want))
		fail_msg("error \"%s\" does not contain \"%s\"", err.msg, want);
}

/*
 * Pods that arrive together meet the scheduler together: with a threaded
 * executor (as `luascale sim` runs) the pass that the first pod queues runs
 * only once the last of the burst exists, so after it every pod of the burst
 * is bound or marked Unschedulable; none waits, unseen, for the next pass a
 * minute later.
 */
static void test_burst_meets_one_pass(void **state)
{
	static const char yaml[] =
	    "seed: 1\nstart: \"2026-12-01T08:00:00Z\"\nduration: 1h\n"
	    "cluster: {register_delay: 0s, scheduler_interval: 60s}\n"
	    "initial_nodes: [{group: workers, count: 1}]\n"
	    "node_groups:\n"
	    "  - {name: workers, min: 1, max: 5, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}\n"
	    "workloads:\n"
	    "  - {name: web, at: 0s, count: 400, requests: {cpu: 3, memory: 1Gi}}\n";
	struct errbuf err;
	struct sim_scenario *sc = sim_scenario_parse(yaml, sizeof(yaml) - 1, "burst.yaml", &err);
	struct executor *ex;
	struct sim_world *w;
	struct sim_pod_info info;
	char name[32];
	int i, seen = 0;

	(void)state;
	if (!sc)
		fail_msg("%s", err.msg);
	ex = executor_new_pool(4, 1u << 12);
	assert_non_null(ex);
	w = sim_world_new(sc, ex, &err);
	if (!w)
		fail_msg("%s", err.msg);
	/* the arrival and the pass it queues are due now; the next pass is a
	 * minute away, so idle means both have run */
	assert_true(executor_wait_idle(ex, clock_now(executor_clock(ex)) + 60 * S));
	for (i = 1; i <= 400; i++) {
		snprintf(name, sizeof(name), "web-%d", i);
		assert_int_equal(sim_cluster_pod(w->cluster, "default", name, &info), 0);
		if (info.node[0] == '\0' && !info.unschedulable)
			fail_msg("%s is pending and was never tried by the scheduler", name);
		seen++;
	}
	assert_int_equal(seen, 400);
	executor_shutdown(ex, clock_now(executor_clock(ex)));
	sim_world_free(w);
	sim_scenario_free(sc);
}

static void test_parse_errors(void **state)
{
	(void)state;
	/* line 6 is the first after the groups */
	expect_error("workload: []\n", "day.yaml:6:1: unknown key \"workload\"");
	expect_error("workloads:\n  - name: web\n    duration: forever\n",
		     "day.yaml:8:15: workloads[0].duration: expected a duration like");
	expect_error("workloads:\n  - name: web\n    requests: {cpu: lots}\n",
		     "day.yaml:8:21: workloads[0].requests.cpu:");
	expect_error("workloads:\n  - name: web\n    requests: {gpu: 1}\n",
		     "day.yaml:8:16: workloads[0].requests.gpu: unknown resource \"gpu\"");
	expect_error("workloads:\n  - name: web\n    count: 3\n    interval: 1s\n    spread: 1m\n",
		     "day.yaml:7:5: workloads[0]: interval and spread exclude each other");
	expect_error("workloads:\n  - name: web\n    controller: deployment\n",
		     "day.yaml:8:17: workloads[0].controller: expected none, replicaset");
	expect_error("workloads:\n  - name: web\n    at: \"25:00\"\n",
		     "day.yaml:8:9: workloads[0].at: expected a time");
	expect_error("start: \"2024-05-06T08:00:00Z\"\nworkloads:\n  - name: web\n    at: \"07:00\"\n",
		     "day.yaml:9:9: workloads[0].at: 07:00 is before the scenario's start");
	expect_error("workloads:\n  - name: web\n  - name: web\n",
		     "day.yaml:8:5: workloads[1]: a workload named default/web is defined at line 7");
	expect_error("workloads:\n  - name: web\n    tolerations: [{operator: Maybe}]\n",
		     "workloads[0].tolerations[0].operator: expected Equal or Exists");
	expect_error("initial_nodes:\n  - group: gpus\n",
		     "day.yaml:7:12: initial_nodes[0].group: no node group \"gpus\"");
	expect_error("faults:\n  - kind: meteor\n",
		     "day.yaml:7:11: faults[0].kind: expected launch_error, throttle");
	expect_error("faults:\n  - kind: slow_boot\n", "day.yaml:7:5: faults[0]: delay is required");
	expect_error("faults:\n  - kind: throttle\n    error: quota\n",
		     "faults[0]: error is for launch_error and terminate_error faults only");
	expect_error("faults:\n  - kind: launch_error\n    rate: 2\n",
		     "day.yaml:8:11: faults[0].rate: 2 is out of range");
	expect_error("pdbs:\n  - name: web\n    selector: {app: web}\n    min_available: 1\n    max_unavailable: 1\n",
		     "day.yaml:7:5: pdbs[0]: give exactly one of min_available and max_unavailable");
	expect_error("pdbs:\n  - name: web\n    min_available: 1\n",
		     "day.yaml:7:5: pdbs[0]: selector is required");
	expect_error("pdbs:\n  - name: web\n    selector: {app: web}\n    min_available: \"150%\"\n",
		     "day.yaml:9:20: pdbs[0].min_available: expected a count like 2");
	expect_error("cluster:\n  scheduler: best\n",
		     "day.yaml:7:14: cluster.scheduler: expected first-fit or least-allocated");
	expect_error("cloud:\n  boot_delay: [1]\n", "day.yaml:7:15: cloud.boot_delay: expected a duration");
	expect_error("seed: -1\n", "day.yaml:6:7: seed: -1 is out of range");
	expect_error("workloads:\n  - name: web\n    labels: {app: [x]}\n",
		     "day.yaml:8:19: workloads[0].labels.app: expected a string, got a list");
	expect_error("workloads: [\n", "day.yaml:7:1");
}

static void test_parse_errors_groups(void **state)
{
	struct errbuf err;

	(void)state;
	assert_null(parse("seed: 1\n", &err));
	assert_non_null(strstr(err.msg, "day.yaml:1:1: node_groups (or a config that has them) is required"));
	assert_null(parse("node_groups:\n  - name: Workers\n    max: 1\n    template: {allocatable: {cpu: 1}}\n",
			  &err));
	assert_non_null(strstr(err.msg, "day.yaml:2:11: node_groups[0].name: invalid node group name"));
	assert_null(parse("node_groups:\n  - name: w\n    template: {allocatable: {cpu: 1}}\n", &err));
	assert_non_null(strstr(err.msg, "day.yaml:2:5: node_groups[0]: max is required"));
	assert_null(parse("node_groups:\n  - name: w\n    max: 2\n    template:\n      taints: [{key: k, effect: Never}]\n",
			  &err));
	assert_non_null(strstr(err.msg, "node_groups[0].template: allocatable is required"));
	assert_null(parse("node_groups:\n  - name: w\n    max: 2\n    template:\n      allocatable: {cpu: 1}\n      taints: [{key: k, effect: Never}]\n",
			  &err));
	assert_non_null(strstr(err.msg, "day.yaml:6:33: node_groups[0].template.taints[0].effect: expected NoSchedule"));
	assert_null(parse("config: x.yaml\nnode_groups: []\n", &err));
	assert_non_null(strstr(err.msg, "day.yaml:2:14: node_groups: give node_groups or config, not both"));
	assert_null(parse("", &err));
	assert_non_null(strstr(err.msg, "empty"));
	/* a config that is an endless device is not a file: refused unread */
	assert_null(parse("config: /dev/zero\n", &err));
	assert_non_null(strstr(err.msg, "day.yaml:1:9: config: cannot read /dev/zero: a character device, not a regular file"));
	assert_null(parse("config: /nonexistent/c.yaml\n", &err));
	assert_non_null(strstr(err.msg, "day.yaml:1:9: config: cannot read /nonexistent/c.yaml: No such file"));
	/* the run's safety limits */
	{
		struct sim_scenario *sc = parse("title: Day\nsafety: {max_nodes_total: 9, max_scale_down_per_round: 3}\n"
						"node_groups:\n  - name: w\n    max: 2\n    template: {allocatable: {cpu: 1}}\n",
						&err);

		if (!sc)
			fail_msg("%s", err.msg);
		assert_int_equal(sc->max_nodes_total, 9);
		assert_int_equal(sc->max_scale_down_per_round, 3);
		assert_string_equal(sc->title, "Day");
		sim_scenario_free(sc);
	}
	assert_null(parse("safety: {max_scale_down_per_round: 0}\n" "node_groups:\n  - name: w\n    max: 2\n    template: {allocatable: {cpu: 1}}\n", &err));
	assert_non_null(strstr(err.msg, "safety.max_scale_down_per_round: 0 is out of range"));
}

/* Two groups in zones a and b, then 'body' (line 12 is its first). */
static const char *const zoned_yaml =
	"node_groups:\n"
	"  - name: zone-a\n"
	"    max: 4\n"
	"    template:\n"
	"      allocatable: {cpu: 4, memory: 16Gi}\n"
	"      labels: {topology.kubernetes.io/zone: a}\n"
	"  - name: zone-b\n"
	"    max: 4\n"
	"    template:\n"
	"      allocatable: {cpu: 4, memory: 16Gi}\n"
	"      labels: {topology.kubernetes.io/zone: b}\n";

static void expect_zoned_error(const char *body, const char *want)
{
	char text[2048];
	struct errbuf err;
	struct sim_scenario *sc;

	snprintf(text, sizeof(text), "%s%s", zoned_yaml, body);
	err.msg[0] = '\0';
	sc = parse(text, &err);
	if (sc) {
		sim_scenario_free(sc);
		fail_msg("parsed, expected an error containing: %s", want);
	}
	if (!strstr(err.msg, want))
		fail_msg("error \"%s\" does not contain \"%s\"", err.msg, want);
}

/* The keys that relate a workload's pods to each other and to zones. */
static void test_relations_parse(void **state)
{
	static const char body[] =
		"expect: {max_pending: 30m}\n"
		"workloads:\n"
		"  - name: coord\n"
		"    controller: statefulset\n"
		"    labels: {app: coord}\n"
		"    anti_affinity: hostname\n"
		"    volume: {claim: data, zones: [b, a]}\n"
		"  - name: api\n"
		"    labels: {app: api, tier: web}\n"
		"    topology_spread: {topology: zone, max_skew: 2, min_domains: 2}\n"
		"    pod_affinity: {topology: zone, labels: {app: coord}}\n"
		"    host_port: 8443\n";
	char text[2048];
	struct errbuf err;
	struct sim_scenario *sc;
	const struct sim_pod_spec *coord, *api;

	(void)state;
	snprintf(text, sizeof(text), "%s%s", zoned_yaml, body);
	sc = parse(text, &err);
	if (!sc)
		fail_msg("%s", err.msg);
	assert_int_equal(sc->expect_max_pending_ns, 30LL * 60 * CLOCK_NS_PER_S);
	coord = &sc->workloads[0].spec;
	assert_int_equal(coord->n_anti_terms, 1);
	assert_string_equal(coord->anti_terms[0].topology_key, "kubernetes.io/hostname");
	assert_int_equal(coord->anti_terms[0].selector.n, 1);
	assert_string_equal(coord->anti_terms[0].selector.reqs[0].key, "app");
	assert_string_equal(coord->anti_terms[0].selector.reqs[0].values[0], "coord");
	assert_non_null(coord->volume);
	assert_string_equal(coord->volume->claim, "data");
	assert_string_equal(coord->volume->storage_class, "zonal");
	assert_string_equal(coord->volume->zone_key, "topology.kubernetes.io/zone");
	assert_int_equal(coord->volume->n_zones, 2);
	assert_string_equal(coord->volume->zones[0], "b");
	api = &sc->workloads[1].spec;
	assert_int_equal(api->n_spread, 1);
	assert_int_equal(api->spread[0].max_skew, 2);
	assert_int_equal(api->spread[0].min_domains, 2);
	assert_string_equal(api->spread[0].topology_key, "topology.kubernetes.io/zone");
	assert_int_equal(api->spread[0].selector.n, 2); /* its labels */
	assert_true(api->spread[0].honor_affinity);
	assert_false(api->spread[0].honor_taints);
	assert_int_equal(api->n_affinity_terms, 1);
	assert_string_equal(api->affinity_terms[0].selector.reqs[0].values[0], "coord");
	assert_int_equal(api->n_host_ports, 1);
	assert_int_equal(api->host_ports[0].port, 8443);
	assert_int_equal(api->host_ports[0].protocol, PORT_TCP);
	assert_null(api->volume);
	sim_scenario_free(sc);
}

static void test_relations_errors(void **state)
{
	(void)state;
	/* line 12 is the first after the zoned groups */
	expect_zoned_error("workloads:\n  - name: web\n    anti_affinity: hostname\n",
			   "day.yaml:14:20: workloads[0].anti_affinity: needs the workload's labels");
	expect_zoned_error("workloads:\n  - name: web\n    labels: {app: web}\n    anti_affinity: \"a b\"\n",
			   "day.yaml:15:20: workloads[0].anti_affinity: expected hostname, zone, region or a node label key, got \"a b\"");
	expect_zoned_error("workloads:\n  - name: web\n    labels: {app: web}\n    anti_affinity: region\n",
			   "workloads[0].anti_affinity: no node group's template has the label topology.kubernetes.io/region");
	expect_zoned_error("workloads:\n  - name: web\n    labels: {app: web}\n    topology_spread: {topology: zone, max_skew: 0}\n",
			   "day.yaml:15:49: workloads[0].topology_spread.max_skew: 0 is out of range");
	expect_zoned_error("workloads:\n  - name: web\n    labels: {app: web}\n    topology_spread: [{max_skew: 1}]\n",
			   "workloads[0].topology_spread[0]: topology is required");
	expect_zoned_error("workloads:\n  - name: web\n    labels: {app: web}\n    topology_spread: {topology: zone, skew: 1}\n",
			   "workloads[0].topology_spread: unknown key \"skew\"");
	expect_zoned_error("workloads:\n  - name: web\n    topology_spread: {topology: zone}\n",
			   "workloads[0].topology_spread: needs the workload's labels");
	expect_zoned_error("workloads:\n  - name: web\n    labels: {app: web}\n    topology_spread: zone\n",
			   "workloads[0].topology_spread: expected a mapping {topology: zone, max_skew: 1} or a list of them");
	expect_zoned_error("workloads:\n  - name: web\n    host_port: 70000\n",
			   "day.yaml:14:16: workloads[0].host_port: 70000 is out of range [1, 65535]");
	expect_zoned_error("workloads:\n  - name: web\n    pod_affinity: {topology: zone}\n",
			   "workloads[0].pod_affinity: labels is required");
	expect_zoned_error("workloads:\n  - name: db\n    volume: {zones: [a]}\n",
			   "day.yaml:14:13: workloads[0].volume: a volume per replica needs controller: statefulset");
	expect_zoned_error("workloads:\n  - name: db\n    controller: statefulset\n    volume: {zones: [a, c]}\n",
			   "day.yaml:15:25: workloads[0].volume.zones[1]: no node group's template is in zone \"c\"");
	expect_zoned_error("workloads:\n  - name: db\n    controller: statefulset\n    volume: {claim: Data}\n",
			   "workloads[0].volume.claim: invalid name \"Data\"");
	expect_zoned_error("workloads:\n  - name: db\n    controller: statefulset\n    volume: {size: 10Gi}\n",
			   "workloads[0].volume: unknown key \"size\"");
	expect_zoned_error("workloads:\n  - name: agent\n    controller: daemonset\n    host_port: 9100\n",
			   "workloads[0]: a daemonset's pods come with the nodes");
	expect_zoned_error("expect: {max_pending: 0s}\n",
			   "day.yaml:12:23: expect.max_pending: must be longer than 0");
	expect_zoned_error("expect: {max_wait: 1m}\n",
			   "day.yaml:12:10: expect: unknown key \"max_wait\" (known: max_pending)");
	/* a zone volume or spread needs groups in zones */
	expect_error("workloads:\n  - name: db\n    controller: statefulset\n    volume: {}\n",
		     "workloads[0].volume: no node group's template has the label topology.kubernetes.io/zone");
	expect_error("workloads:\n  - name: web\n    labels: {app: web}\n    topology_spread: {topology: zone}\n",
		     "workloads[0].topology_spread.topology: no node group's template has the label topology.kubernetes.io/zone");
}

static void test_times_and_waves(void **state)
{
	struct errbuf err;
	char text[1024];
	struct sim_scenario *sc;
	struct run r;

	(void)state;
	snprintf(text, sizeof(text), "%s%s", groups_yaml,
		 "start: \"2024-05-06T08:30:00Z\"\n"
		 "duration: 2h\n"
		 "initial_nodes: [{group: workers, count: 1}]\n"
		 "workloads:\n"
		 "  - name: tick\n"
		 "    controller: job\n"
		 "    at: \"09:00\"\n"
		 "    count: 2\n"
		 "    interval: 10s\n"
		 "    every: 30m\n"
		 "    requests: {cpu: 100m}\n"
		 "    duration: 1m\n");
	sc = parse(text, &err);
	if (!sc)
		fail_msg("%s", err.msg);
	assert_int_equal(sc->workloads[0].at_ns, 1800 * S);
	assert_int_equal(sc->workloads[0].times, 0); /* until the end */
	run_start(&r, sc);
	executor_run_until(r.ex, 1800 * S);
	assert_int_equal(count_prefix(r.w->cluster, "default", "tick", 20), 1);
	executor_run_until(r.ex, 1810 * S);
	assert_int_equal(count_prefix(r.w->cluster, "default", "tick", 20), 2);
	executor_run_until(r.ex, 7200 * S);
	/* waves at 09:00, 09:30, 10:00, 10:30 (the run ends at 10:30) */
	assert_int_equal(r.w->cloud ? 1 : 0, 1);
	{
		struct sim_stats st;

		sim_cluster_get_stats(r.w->cluster, &st);
		assert_int_equal(st.pods_created, 6);
	}
	run_end(&r);
	sim_scenario_free(sc);
}

static void test_config_reference(void **state)
{
	char dir[] = "/tmp/simscenXXXXXX", path[256], cfg[256];
	struct errbuf err;
	struct sim_scenario *sc;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(cfg, sizeof(cfg), "%s/config.yaml", dir);
	f = fopen(cfg, "w");
	assert_non_null(f);
	fputs("node_groups:\n"
	      "  - name: big\n"
	      "    max: 3\n"
	      "    price_per_hour: 2.5\n"
	      "    template:\n"
	      "      allocatable: {cpu: 16, memory: 64Gi}\n"
	      "safety:\n"
	      "  protected_pod_selector: \"app=hub\"\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/day.yaml", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("config: config.yaml\ninitial_nodes: [{group: big}]\n", f);
	fclose(f);
	sc = sim_scenario_load(path, &err);
	if (!sc)
		fail_msg("%s", err.msg);
	assert_non_null(sc->config);
	assert_int_equal(sc->n_groups, 1);
	assert_string_equal(sc->groups[0].name, "big");
	assert_true(sc->groups[0].price_per_hour == 2.5);
	assert_non_null(sc->protected_pods);
	assert_int_equal(sc->initial[0].count, 1);
	sim_scenario_free(sc);

	f = fopen(path, "w");
	assert_non_null(f);
	fputs("config: missing.yaml\n", f);
	fclose(f);
	assert_null(sim_scenario_load(path, &err));
	assert_non_null(strstr(err.msg, "day.yaml:1:9: config: cannot read"));
	unlink(path);
	unlink(cfg);
	rmdir(dir);
}

/* The simulated clouds of this build, by the generated list only. */
#define X(k) extern const struct sim_cloud_kind sim_cloud_##k; extern const struct sim_cloud_face sim_face_##k;
LUASCALE_SIM_CLOUDS(X)
#undef X

/* A section cloud 'name' parses (its defaults; AWS wants credentials). */
static const char *cloud_section(const char *name)
{
	if (strcmp(name, "aws") == 0)
		return "{credentials: {access_key_id: AKIDSIM, secret_access_key: sim-secret}}";
	return "{}";
}

/* groups_yaml with the sections of 'a' then 'b' (b NULL: a's alone); NULL or its error. */
static struct sim_scenario *with_clouds(const char *a, const char *b, struct errbuf *err)
{
	char text[2048];

	snprintf(text, sizeof(text), "%s%s: %s\n%s%s%s\n", groups_yaml, a, cloud_section(a),
		 b ? b : "", b ? ": " : "", b ? cloud_section(b) : "");
	err->msg[0] = '\0';
	return parse(text, err);
}

/*
 * Registering a cloud is its only wiring: the table is exactly the
 * generated list, walked by rank; each cloud's section is a root key of
 * a scenario, parses into that cloud's flavour of the world, and is
 * refused after another cloud's with the message it always had.
 */
static void test_clouds_registered(void **state)
{
	static const struct {
		const char *first, *second, *want;
	} before[] = {
		{"aws", "gce", "gce: a scenario has an aws: or a gce: section, not both"},
		{"aws", "azure", "azure: a scenario has one of aws:, gce: and azure:"},
		{"gce", "azure", "azure: a scenario has one of aws:, gce: and azure:"},
	};
	static const struct {
		const char *name;
		const struct sim_cloud_kind *kind;
		const struct sim_cloud_face *face;
	} listed[] = {
#define X(k) {#k, &sim_cloud_##k, &sim_face_##k},
		LUASCALE_SIM_CLOUDS(X)
#undef X
		{NULL, NULL, NULL},
	};
	const struct sim_cloud_kind *k, *k2;
	const struct sim_cloud_face *f;
	size_t n = 0, walked = 0, i;
	struct sim_scenario *sc;
	struct errbuf err;
	int rank = 0;

	(void)state;
	for (n = 0; listed[n].name; n++) {
		k = listed[n].kind;
		assert_ptr_equal(sim_cloud_kind_find(listed[n].name), k);
		assert_string_equal(k->name, listed[n].name);
		assert_non_null(k->parse);
		assert_non_null(k->flavour_new);
		assert_non_null(k->flavour_start);
		assert_non_null(k->flavour_free);
		f = listed[n].face;
		assert_ptr_equal(f->kind, k);
		assert_true(f->n_opts >= 1 && f->n_opts <= SIM_CLOUD_MAX_OPTS);
		assert_true(f->opts[0].port);
		assert_int_equal(f->opts[0].dflt_port, -1);
		assert_non_null(f->face_serve);
		assert_non_null(f->face_announce);
		assert_non_null(f->face_free);
	}
	assert_true(n >= 3); /* aws, gce and azure at least */
	assert_null(sim_cloud_kind_find("nocloud"));
	for (k = sim_cloud_kind_next(NULL); k; k = sim_cloud_kind_next(k), walked++) {
		assert_true(k->rank > rank);
		rank = k->rank;
		for (i = 0; listed[i].name && listed[i].kind != k; i++)
			;
		assert_non_null(listed[i].name);
	}
	assert_int_equal(walked, n);
	/* the faces come in their clouds' order */
	for (f = sim_cloud_face_next(NULL), k = sim_cloud_kind_next(NULL), walked = 0; f;
	     f = sim_cloud_face_next(f), k = sim_cloud_kind_next(k), walked++)
		assert_ptr_equal(f->kind, k);
	assert_int_equal(walked, n);

	for (k = sim_cloud_kind_next(NULL); k; k = sim_cloud_kind_next(k)) {
		struct run r;
		char want[160];

		/* alone: the scenario's and the world's flavour are k's */
		sc = with_clouds(k->name, NULL, &err);
		if (!sc)
			fail_msg("%s alone: %s", k->name, err.msg);
		for (k2 = sim_cloud_kind_next(NULL); k2; k2 = sim_cloud_kind_next(k2))
			assert_true(!sim_scenario_cloud(sc, k2) == (k2 != k));
		run_start(&r, sc);
		for (k2 = sim_cloud_kind_next(NULL); k2; k2 = sim_cloud_kind_next(k2))
			assert_true(!sim_world_flavour(r.w, k2) == (k2 != k));
		run_end(&r);
		sim_scenario_free(sc);
		/* an unknown root key's message lists it */
		snprintf(want, sizeof(want), ", %s, ", k->name);
		sc = with_clouds(k->name, "nocloud", &err);
		assert_null(sc);
		if (!strstr(err.msg, "unknown key \"nocloud\"") || !strstr(err.msg, want))
			fail_msg("%s", err.msg);
		/* with a cloud of lower rank, in either order, it is refused */
		for (k2 = sim_cloud_kind_next(NULL); k2 != k; k2 = sim_cloud_kind_next(k2)) {
			if (k->refusal)
				snprintf(want, sizeof(want), "%s: %s", k->name, k->refusal);
			else
				snprintf(want, sizeof(want), "%s: a scenario has one cloud section, not both %s: and %s:",
					 k->name, k2->name, k->name);
			for (i = 0; i < 2; i++) {
				sc = with_clouds(i ? k->name : k2->name, i ? k2->name : k->name, &err);
				assert_null(sc);
				if (!strstr(err.msg, want))
					fail_msg("%s with %s: \"%s\", expected \"%s\"", k2->name, k->name, err.msg,
						 want);
			}
		}
	}
	for (i = 0; i < sizeof(before) / sizeof(before[0]); i++) {
		sc = with_clouds(before[i].first, before[i].second, &err);
		assert_null(sc);
		if (!strstr(err.msg, before[i].want))
			fail_msg("\"%s\", expected \"%s\"", err.msg, before[i].want);
		sc = with_clouds(before[i].second, before[i].first, &err);
		assert_null(sc);
		if (!strstr(err.msg, before[i].want))
			fail_msg("\"%s\", expected \"%s\"", err.msg, before[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_smoke_parses),
		cmocka_unit_test(test_smoke_world_runs),
		cmocka_unit_test(test_same_seed_same_day),
		cmocka_unit_test(test_fault_windows_count_from_the_start),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_errors_groups),
		cmocka_unit_test(test_relations_parse),
		cmocka_unit_test(test_relations_errors),
		cmocka_unit_test(test_times_and_waves),
		cmocka_unit_test(test_config_reference),
		cmocka_unit_test(test_burst_meets_one_pass),
		cmocka_unit_test(test_clouds_registered),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
