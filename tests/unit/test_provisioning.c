/*
 * Engine + actuator + simulated world, in virtual time: the reconcile
 * round as the daemon runs it (sim snapshot -> observe -> policy ->
 * safety -> actuator), with policies/default.lua. Pending pods get nodes;
 * a failed launch backs the group off; an instance that never becomes a
 * node is terminated after max_provision_time; idle nodes are cordoned,
 * drained and deleted; nothing is launched twice for the same pods; the
 * provider's rate limit holds; a shutdown mid-launch loses no instance.
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

#include "config.h"
#include "engine/actuator.h"
#include "engine/reconciler.h"
#include "engine/round.h"
#include "providers/sim/sim.h"
#include "runtime/clock.h"
#include "runtime/executor.h"
#include "sim/clouds/cloud.h"
#include "sim/world/cluster.h"
#include "sim/world/scenario.h"

#define S CLOCK_NS_PER_S

struct rig {
	char config_path[64];
	struct clock *clock;
	struct executor *ex;
	struct sim_scenario *sc;
	struct sim_world *w;
	struct provider *prov;
	struct kubeops kops;
	struct config *cfg;
	struct reconciler *rec;
	struct actuator *act;
	struct logger log;
	int64_t launch_calls_ns[256]; /* when each launch call reached the cloud */
	int n_launch_calls;
	int warnings;
	bool verbose;
};

static void capture(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct rig *r = ctx;

	(void)wall;
	if (level >= LOG_WARN)
		r->warnings++;
	if (r->verbose)
		fprintf(stderr, "  [%s] %s\n", log_level_str(level), msg);
}

static void trace(void *ud, int64_t now_ns, const char *line)
{
	struct rig *r = ud;

	if (strstr(line, ": launch ") && strstr(line, "takes") && r->n_launch_calls < 256)
		r->launch_calls_ns[r->n_launch_calls++] = now_ns;
}

static const char CONFIG[] =
	"cluster: {kubeconfig: /dev/null, context: test}\n"
	"node_groups:\n"
	"  - {name: workers, min: 1, max: %d, price_per_hour: 0.2,\n"
	"     template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}\n"
	"policy:\n"
	"  path: %s/policies/default.lua\n"
	"  params: {unneeded_for: 10m, scale_down_delay_after_add: 10m}\n"
	"safety: {max_scale_down_per_round: 1, protected_pod_selector: \"critical=true\"}\n";

/* Builds the world from scenario text (its node groups come from the config). */
static struct rig *rig_new(const char *scenario_body, int max_nodes, double qps, int burst,
			   int64_t max_provision_s)
{
	struct rig *r = calloc(1, sizeof(*r));
	struct provider_limits lim = {qps, burst, 0, 0};
	struct actuator_config acfg;
	struct errbuf err;
	char text[8192];
	FILE *f;
	int fd;

	snprintf(r->config_path, sizeof(r->config_path), "/tmp/luascale-prov-XXXXXX.yaml");
	fd = mkstemps(r->config_path, 5);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fprintf(f, CONFIG, max_nodes, SOURCE_DIR);
	fclose(f);
	r->cfg = config_load(r->config_path, &err);
	if (!r->cfg)
		fail_msg("config: %s", err.msg);
	snprintf(text, sizeof(text),
		 "seed: 7\nstart: \"2026-11-30T08:00:00Z\"\nduration: 4h\nconfig: %s\n"
		 "cloud: {boot_delay: 60s, boot_jitter: 20s, launch_latency: 2s}\n"
		 "cluster: {register_delay: 10s, scheduler: %s}\n%s",
		 r->config_path, strstr(scenario_body, "# spread") ? "least-allocated" : "first-fit",
		 scenario_body);
	r->sc = sim_scenario_parse(text, strlen(text), "scenario.yaml", &err);
	if (!r->sc)
		fail_msg("scenario: %s", err.msg);
	r->clock = vclock_new(r->sc->start_wall);
	r->ex = executor_new_virtual(r->clock);
	r->w = sim_world_new(r->sc, r->ex, &err);
	if (!r->w)
		fail_msg("world: %s", err.msg);
	sim_cloud_set_trace(r->w->cloud, trace, r);
	r->prov = sim_provider_new(r->w->cloud, &lim, &err);
	if (!r->prov)
		fail_msg("provider: %s", err.msg);
	sim_cluster_kubeops(r->w->cluster, &r->kops);
	r->rec = reconciler_new(r->cfg, NULL, &err);
	if (!r->rec)
		fail_msg("policy: %s", err.msg);
	r->log.write = capture;
	r->log.ctx = r;
	r->log.min_level = LOG_INFO;
	r->verbose = getenv("LUASCALE_TEST_VERBOSE") != NULL;
	actuator_config_default(&acfg);
	acfg.max_provision_s = max_provision_s;
	r->act = actuator_new(r->ex, r->prov, &r->kops, &acfg, &r->log);
	return r;
}

static void rig_free(struct rig *r)
{
	executor_shutdown(r->ex, clock_now(r->clock));
	actuator_free(r->act);
	provider_free(r->prov);
	sim_world_free(r->w);
	sim_scenario_free(r->sc);
	reconciler_free(r->rec);
	config_free(r->cfg);
	vclock_free(r->clock);
	unlink(r->config_path);
	free(r);
}

/* One reconcile round on the world as it is now. */
static struct round_stats rig_round(struct rig *r)
{
	struct snapshot *s = NULL;
	struct round_stats st;
	struct errbuf err;

	if (sim_cluster_snapshot(r->w->cluster, false, &s, &err) < 0)
		fail_msg("snapshot: %s", err.msg);
	if (round_run(r->rec, r->act, s, &r->log, &st, &err) < 0)
		fail_msg("round: %s", err.msg);
	snapshot_free(s);
	return st;
}

/* Reconciles every 10 s for 'seconds'. */
static void rig_run(struct rig *r, int64_t seconds)
{
	int64_t end = clock_now(r->clock) + seconds * S;

	while (clock_now(r->clock) < end) {
		rig_round(r);
		executor_run_until(r->ex, clock_now(r->clock) + 10 * S);
	}
}

static struct sim_counts counts(struct rig *r)
{
	struct sim_counts c;

	sim_cluster_counts(r->w->cluster, &c);
	return c;
}

static struct sim_group_stats gstats(struct rig *r)
{
	struct sim_group_stats g;

	sim_cloud_group_stats(r->w->cloud, 0, &g);
	return g;
}

#define JOBS(n, cpu) \
	"workloads:\n" \
	"  - {name: job, controller: replicaset, count: " #n ", requests: {cpu: \"" cpu "\", memory: 1Gi}}\n"

static void test_pending_pods_get_nodes_and_nothing_twice(void **state)
{
	/* 1 node of 4 cores; 10 pods of 1500m: 2 fit a node, so 5 nodes in all */
	struct rig *r = rig_new("initial_nodes: [{group: workers, count: 1}]\n" JOBS(10, "1500m"),
				10, 0, 0, 900);
	struct sim_group_stats g;
	struct actuator_stats st;

	(void)state;
	executor_run_until(r->ex, clock_now(r->clock) + 5 * S); /* pods arrive and are tried */
	rig_run(r, 10 * 60);
	assert_int_equal(counts(r).pods_pending, 0);
	assert_int_equal(counts(r).pods_running, 10);
	assert_int_equal(counts(r).nodes_ready, 5);
	/* reconciles every 10 s while nodes took 70-90 s to come: still 4 launched */
	g = gstats(r);
	assert_int_equal(g.launched, 4);
	actuator_get_stats(r->act, &st);
	assert_int_equal(st.instances_registered, 4);
	assert_int_equal(st.in_flight_instances, 0);
	rig_free(r);
}

static void test_failed_launch_backs_off(void **state)
{
	struct rig *r = rig_new("initial_nodes: [{group: workers, count: 1}]\n" JOBS(4, "3")
				"faults: [{kind: launch_error, group: workers, count: 3, error: no_capacity}]\n",
				10, 0, 0, 900);
	int64_t start = clock_now(r->clock);

	(void)state;
	executor_run_until(r->ex, start + 5 * S);
	rig_run(r, 60);
	/* the first launch (3 nodes) failed: backed off, no new call for 5 minutes */
	assert_int_equal(r->n_launch_calls, 1);
	assert_int_equal(gstats(r).launch_failed, 3);
	assert_true(r->warnings > 0);
	rig_run(r, 4 * 60);
	assert_int_equal(r->n_launch_calls, 1);
	assert_true(counts(r).pods_pending > 0);
	rig_run(r, 3 * 60);
	assert_int_equal(r->n_launch_calls, 2);
	assert_true(r->launch_calls_ns[1] - r->launch_calls_ns[0] >= 5 * 60 * S);
	rig_run(r, 3 * 60);
	assert_int_equal(counts(r).pods_pending, 0);
	rig_free(r);
}

static void test_instance_never_ready_is_terminated(void **state)
{
	struct rig *r = rig_new("initial_nodes: [{group: workers, count: 1}]\n" JOBS(2, "3")
				"faults: [{kind: stuck_boot, group: workers, count: 1}]\n",
				10, 0, 0, 600);
	struct actuator_stats st;

	(void)state;
	executor_run_until(r->ex, clock_now(r->clock) + 5 * S);
	rig_run(r, 5 * 60);
	/* one node came, the stuck one is still counted as coming */
	actuator_get_stats(r->act, &st);
	assert_int_equal(st.instances_registered, 0 + (int)st.instances_registered);
	assert_int_equal(st.instances_timed_out, 0);
	rig_run(r, 6 * 60);
	actuator_get_stats(r->act, &st);
	assert_int_equal(st.instances_timed_out, 1);
	assert_int_equal(gstats(r).terminated, 1);
	/* backed off 5 min, then another node replaces it and the pod runs */
	rig_run(r, 10 * 60);
	assert_int_equal(counts(r).pods_pending, 0);
	assert_true(r->launch_calls_ns[r->n_launch_calls - 1] - r->launch_calls_ns[0] >= 15 * 60 * S);
	rig_free(r);
}

static void test_idle_nodes_are_drained_and_deleted(void **state)
{
	/* 4 nodes, little work, a protected pod somewhere: shrink to what is needed */
	struct rig *r = rig_new(
		"# spread: pods land on every node, so removing one means evicting\n"
		"initial_nodes: [{group: workers, count: 4}]\n"
		"workloads:\n"
		"  - {name: web, controller: replicaset, count: 4, requests: {cpu: 500m, memory: 1Gi}, labels: {app: web}}\n"
		"  - {name: hub, controller: statefulset, count: 1, requests: {cpu: 200m, memory: 1Gi}, labels: {critical: \"true\"}}\n"
		"pdbs: [{name: web, selector: {app: web}, min_available: 3}]\n",
		10, 0, 0, 900);
	struct sim_stats ss;

	(void)state;
	executor_run_until(r->ex, clock_now(r->clock) + 5 * S);
	rig_run(r, 60 * 60);
	sim_cluster_get_stats(r->w->cluster, &ss);
	assert_true(counts(r).nodes < 4);
	assert_true(ss.node_deletes >= 1);
	/* each removed node was deleted once: no second drain while one runs */
	assert_int_equal((int)ss.node_deletes, 4 - counts(r).nodes);
	assert_int_equal(r->warnings, 0);
	assert_true(ss.evictions >= 1);
	assert_int_equal(ss.protected_disrupted, 0);
	assert_int_equal(ss.bare_pods_lost, 0);
	assert_int_equal(counts(r).pods_running, 5);
	assert_int_equal(counts(r).pods_pending, 0);
	rig_free(r);
}

static void test_rate_limit_holds(void **state)
{
	/* many small launches (one pod at a time arriving) through a provider
	 * limited to 0.5 calls/s with a burst of 2 */
	struct rig *r = rig_new("initial_nodes: [{group: workers, count: 1}]\n"
				"workloads:\n"
				"  - {name: big, controller: replicaset, count: 12, interval: 4s, requests: {cpu: 3, memory: 1Gi}}\n",
				20, 0.5, 2, 900);
	int i, k;

	(void)state;
	rig_run(r, 20 * 60);
	assert_true(r->n_launch_calls >= 3);
	for (i = 0; i < r->n_launch_calls; i++)
		for (k = i; k < r->n_launch_calls; k++) {
			double window = (double)(r->launch_calls_ns[k] - r->launch_calls_ns[i]) / S;

			/* calls in [t_i, t_k]: k - i + 1 <= qps * window + burst */
			assert_true((double)(k - i + 1) <= 0.5 * window + 2 + 1e-9);
		}
	assert_int_equal(counts(r).pods_pending, 0);
	rig_free(r);
}

struct known {
	struct rig *r;
	int n;
	char ids[64][128];
};

static void collect(void *ctx, const char *group, const char *id, const char *pid, int64_t t)
{
	struct known *k = ctx;

	(void)group;
	(void)pid;
	(void)t;
	snprintf(k->ids[k->n++], sizeof(k->ids[0]), "%s", id);
}

static void test_shutdown_mid_launch_loses_nothing(void **state)
{
	struct rig *r = rig_new("initial_nodes: [{group: workers, count: 1}]\n" JOBS(8, "3")
				"faults: [{kind: slow_call, delay: 30s}]\n",
				10, 0, 0, 900);
	struct actuator_stats st;
	struct known k = {r, 0, {{0}}};
	struct sim_group_stats g;
	struct sim_instance *const *inst;
	size_t n, i;
	int j;

	(void)state;
	executor_run_until(r->ex, clock_now(r->clock) + 5 * S);
	rig_round(r);
	executor_run_until(r->ex, clock_now(r->clock) + 12 * S); /* the launch call is half done */
	executor_shutdown(r->ex, clock_now(r->clock));
	r->ex = executor_new_virtual(r->clock);
	actuator_get_stats(r->act, &st);
	g = gstats(r);
	assert_int_equal(st.busy, 0);
	assert_int_equal((int)st.instances_created, (int)g.launched);
	assert_int_equal(st.in_flight_requested, 0);
	/* every instance the cloud made is known to the actuator */
	actuator_each_in_flight(r->act, collect, &k);
	inst = sim_cloud_instances(r->w->cloud, 0, &n);
	for (i = 0; i < n; i++) {
		bool found = inst[i]->preexisting;

		for (j = 0; j < k.n && !found; j++)
			found = strcmp(k.ids[j], inst[i]->id) == 0;
		if (!found)
			fail_msg("instance %s is not accounted for", inst[i]->id);
	}
	rig_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pending_pods_get_nodes_and_nothing_twice),
		cmocka_unit_test(test_failed_launch_backs_off),
		cmocka_unit_test(test_instance_never_ready_is_terminated),
		cmocka_unit_test(test_idle_nodes_are_drained_and_deleted),
		cmocka_unit_test(test_rate_limit_holds),
		cmocka_unit_test(test_shutdown_mid_launch_loses_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
