/*
 * Tests for sim/runs/replay.c: a run is the same for the same seed and differs
 * for another, the series are sampled as asked, and the whole-run
 * invariant checks both hold for policies that try to break them (the
 * safety checks stop them) and catch what they are meant to catch.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/clock.h"
#include "sim/runs/replay.h"
#include "sim/world/scenario.h"
#include "test_scenario.h"

#define SMOKE SOURCE_DIR "/examples/scenarios/smoke.yaml"
#define DEFAULT_POLICY SOURCE_DIR "/policies/default.lua"
#define RECKLESS SOURCE_DIR "/tests/policies/fixtures/reckless.lua"
#define IDLE SOURCE_DIR "/tests/policies/fixtures/idle.lua"

static void run(const struct sim_scenario *sc, const char *policy, size_t max_samples,
		struct sim_result *out)
{
	struct sim_replay_opts o;
	struct errbuf err;

	memset(&o, 0, sizeof(o));
	o.sc = sc;
	o.policy_path = policy;
	o.max_samples = max_samples;
	if (sim_replay(&o, out, &err) < 0)
		fail_msg("%s", err.msg);
}

static bool same_series(const struct sim_series *a, const struct sim_series *b)
{
	size_t n = a->n, g = a->n_groups;

	return a->n == b->n && a->n_groups == b->n_groups &&
	       memcmp(a->t_ns, b->t_ns, n * sizeof(*a->t_ns)) == 0 &&
	       memcmp(a->nodes, b->nodes, n * g * sizeof(*a->nodes)) == 0 &&
	       memcmp(a->booting, b->booting, n * g * sizeof(*a->booting)) == 0 &&
	       memcmp(a->pending, b->pending, n * sizeof(*a->pending)) == 0 &&
	       memcmp(a->util_cpu, b->util_cpu, n * sizeof(*a->util_cpu)) == 0 &&
	       memcmp(a->cost, b->cost, n * sizeof(*a->cost)) == 0;
}

static void test_same_seed_same_run(void **state)
{
	struct sim_scenario *sc = load(SMOKE);
	struct sim_result a, b;

	(void)state;
	run(sc, DEFAULT_POLICY, 0, &a);
	run(sc, DEFAULT_POLICY, 0, &b);
	assert_true(same_series(&a.series, &b.series));
	assert_true(a.cost == b.cost);
	assert_true(a.wait_p95 == b.wait_p95);
	assert_int_equal(a.launches, b.launches);
	assert_int_equal(a.removed, b.removed);
	assert_int_equal(a.peak_nodes, b.peak_nodes);
	/* and the run did something worth comparing */
	assert_true(a.launches > 0);
	assert_true(a.removed > 0);
	sim_result_free(&a);
	sim_result_free(&b);
	sim_scenario_free(sc);
}

static void test_other_seed_other_run(void **state)
{
	struct sim_scenario *sc = load(SMOKE);
	struct sim_result a, b;

	(void)state;
	run(sc, DEFAULT_POLICY, 0, &a);
	sc->seed = 7;
	run(sc, DEFAULT_POLICY, 0, &b);
	assert_false(same_series(&a.series, &b.series));
	sim_result_free(&a);
	sim_result_free(&b);
	sim_scenario_free(sc);
}

static void test_smoke_holds_invariants(void **state)
{
	struct sim_scenario *sc = load(SMOKE);
	struct sim_result r;

	(void)state;
	run(sc, DEFAULT_POLICY, 0, &r);
	if (sim_violations_total(&r.v))
		fail_msg("%s", r.v.first);
	assert_int_equal(r.rounds, 360); /* an hour, every 10s */
	assert_int_equal(r.policy_failures, 0);
	assert_true(r.peak_nodes <= 8);
	sim_result_free(&r);
	sim_scenario_free(sc);
}

/* The series: sampled every k rounds so at most max_samples (+ the end),
 * times rising, cost never falling, the last sample at the end. */
static void test_series_sampled(void **state)
{
	struct sim_scenario *sc = load(SMOKE);
	struct sim_result r;
	size_t i;

	(void)state;
	run(sc, DEFAULT_POLICY, 100, &r);
	assert_true(r.series.n <= 101);
	assert_true(r.series.n >= 80);
	assert_int_equal(r.series.n_groups, 1);
	for (i = 1; i < r.series.n; i++) {
		assert_true(r.series.t_ns[i] > r.series.t_ns[i - 1]);
		assert_true(r.series.cost[i] >= r.series.cost[i - 1]);
		assert_true(r.series.util_cpu[i] >= 0 && r.series.util_cpu[i] <= 1.0);
	}
	assert_int_equal(r.series.t_ns[r.series.n - 1], 3600 * CLOCK_NS_PER_S);
	assert_true(r.series.cost[r.series.n - 1] == r.cost);
	sim_result_free(&r);
	sim_scenario_free(sc);
}

/* A policy that scales every group by 1000 and drains every node every
 * round: the safety checks hold it to max, min, one removal per round and
 * the protected pod's node. */
static void test_reckless_policy_breaks_nothing(void **state)
{
	struct sim_scenario *sc = parse(
		"duration: 2h\n"
		"protected_pods: \"app=hub\"\n"
		"node_groups:\n"
		"  - {name: workers, min: 2, max: 5, price_per_hour: 1,\n"
		"     template: {allocatable: {cpu: 4, memory: 16Gi}}}\n"
		"initial_nodes: [{group: workers, count: 3}]\n"
		"workloads:\n"
		"  - {name: hub, controller: replicaset, count: 1, labels: {app: hub},\n"
		"     requests: {cpu: 500m, memory: 1Gi}}\n"
		"  - {name: web, controller: replicaset, count: 6, requests: {cpu: 1, memory: 1Gi}}\n");
	struct sim_result r;

	(void)state;
	run(sc, RECKLESS, 0, &r);
	if (sim_violations_total(&r.v))
		fail_msg("%s", r.v.first);
	assert_true(r.rejected > 0);
	assert_true(r.removed > 0);      /* it did remove nodes, within the limits */
	assert_true(r.peak_nodes <= 5);
	assert_int_equal(r.protected_killed, 0);
	sim_result_free(&r);
	sim_scenario_free(sc);
}

/* Nodes above a group's max (there from the start) are counted. */
static void test_checker_sees_over_max(void **state)
{
	struct sim_scenario *sc = parse(
		"duration: 10m\n"
		"node_groups:\n"
		"  - {name: workers, min: 0, max: 2, price_per_hour: 1,\n"
		"     template: {allocatable: {cpu: 4, memory: 16Gi}}}\n"
		"initial_nodes: [{group: workers, count: 3}]\n");
	struct sim_result r;

	(void)state;
	run(sc, IDLE, 0, &r);
	assert_true(r.v.over_max > 0);
	assert_non_null(strstr(r.v.first, "group workers has 3 instances, above its max of 2"));
	sim_result_free(&r);
	sim_scenario_free(sc);
}

/* More instances than safety.max_nodes_total (there from the start) are counted. */
static void test_checker_sees_over_total(void **state)
{
	struct sim_scenario *sc = parse(
		"duration: 5m\n"
		"safety: {max_nodes_total: 3}\n"
		"node_groups:\n"
		"  - {name: a, min: 0, max: 5, price_per_hour: 1,\n"
		"     template: {allocatable: {cpu: 4, memory: 16Gi}}}\n"
		"  - {name: b, min: 0, max: 5, price_per_hour: 1,\n"
		"     template: {allocatable: {cpu: 4, memory: 16Gi}}}\n"
		"initial_nodes: [{group: a, count: 2}, {group: b, count: 2}]\n");
	struct sim_result r;

	(void)state;
	run(sc, IDLE, 0, &r);
	assert_int_equal(r.v.over_max, 0);
	assert_true(r.v.over_total > 0);
	assert_non_null(strstr(r.v.first, "4 instances, above max_nodes_total 3"));
	sim_result_free(&r);
	sim_scenario_free(sc);
}

/* A policy that never scales up leaves pods that a group could run
 * pending: counted at the end; a pod no group fits is not. */
static void test_checker_sees_stuck_pods(void **state)
{
	struct sim_scenario *sc = parse(
		"duration: 1h\n"
		"node_groups:\n"
		"  - {name: workers, min: 0, max: 4, price_per_hour: 1,\n"
		"     template: {allocatable: {cpu: 4, memory: 16Gi}}}\n"
		"initial_nodes: [{group: workers, count: 1}]\n"
		"workloads:\n"
		"  - {name: fits, controller: job, at: 5m, count: 3, requests: {cpu: 3, memory: 1Gi}}\n"
		"  - {name: huge, controller: job, at: 5m, count: 1, requests: {cpu: 64, memory: 1Gi}}\n"
		"  - {name: late, controller: job, at: 50m, count: 2, requests: {cpu: 3, memory: 1Gi}}\n");
	struct sim_result r;

	(void)state;
	run(sc, IDLE, 0, &r);
	/* one 'fits' pod runs on the node; two wait 55m; 'late' waited 10m
	 * (under the 30m settle time) and 'huge' fits no group */
	assert_int_equal(r.v.stuck_pending, 2);
	assert_non_null(strstr(r.v.first, "pending for 3300s"));
	assert_true(r.wait_max >= 3300);
	sim_result_free(&r);

	run(sc, DEFAULT_POLICY, 0, &r);
	if (sim_violations_total(&r.v))
		fail_msg("%s", r.v.first);
	sim_result_free(&r);
	sim_scenario_free(sc);
}

/* expect.max_pending: a pod bound after waiting longer, or still waiting
 * at the end, breaks the run; the first names the one that waited longest. */
static void test_checker_sees_long_waits(void **state)
{
	static const char base[] =
		"duration: 1h\n"
		"node_groups:\n"
		"  - {name: workers, min: 1, max: 1, price_per_hour: 1,\n"
		"     template: {allocatable: {cpu: 4, memory: 16Gi}}}\n"
		"initial_nodes: [{group: workers, count: 1}]\n"
		"workloads:\n"
		"  - {name: first, controller: job, count: 1, duration: 40m, requests: {cpu: 3, memory: 1Gi}}\n"
		"  - {name: second, controller: job, count: 1, requests: {cpu: 3, memory: 1Gi}}\n"
		"  - {name: third, controller: job, count: 1, requests: {cpu: 3, memory: 1Gi}}\n"
		"  - {name: late, controller: job, at: 50m, count: 1, requests: {cpu: 3, memory: 1Gi}}\n";
	char text[1024];
	struct sim_scenario *sc;
	struct sim_result r;

	(void)state;
	/* 'second' waits 40m for 'first' to end, 'third' and 'late' wait to
	 * the end (60m and 10m): two over 30m */
	snprintf(text, sizeof(text), "%sexpect: {max_pending: 30m}\n", base);
	sc = parse(text);
	run(sc, IDLE, 0, &r);
	assert_int_equal(r.v.over_wait, 2);
	assert_int_equal(r.v.stuck_pending, 0); /* no group has room left */
	assert_int_equal(sim_violations_total(&r.v), 2);
	assert_string_equal(r.v.first,
			    "at 01:00:00: pod default/third-1 is still pending after 1h00m, the scenario expects at most 30m00s (expect.max_pending); 2 pod(s) waited longer than that");
	sim_result_free(&r);
	sim_scenario_free(sc);

	/* 45m: only 'third' */
	snprintf(text, sizeof(text), "%sexpect: {max_pending: 45m}\n", base);
	sc = parse(text);
	run(sc, IDLE, 0, &r);
	assert_int_equal(r.v.over_wait, 1);
	sim_result_free(&r);
	sim_scenario_free(sc);

	/* no 'third': 'second' was bound at 00:40 after 40m */
	snprintf(text, sizeof(text), "%sexpect: {max_pending: 30m}\n", base);
	*strstr(text, "  - {name: third") = '\0';
	snprintf(text + strlen(text), sizeof(text) - strlen(text), "expect: {max_pending: 30m}\n");
	sc = parse(text);
	run(sc, IDLE, 0, &r);
	assert_int_equal(r.v.over_wait, 1);
	assert_string_equal(r.v.first,
			    "at 00:40:00: pod default/second-1 was bound after waiting 40m00s, the scenario expects at most 30m00s (expect.max_pending); 1 pod(s) waited longer than that");
	sim_result_free(&r);
	sim_scenario_free(sc);

	/* without expect, no bound */
	sc = parse(base);
	run(sc, IDLE, 0, &r);
	assert_int_equal(r.v.over_wait, 0);
	sim_result_free(&r);
	sim_scenario_free(sc);
}

static void test_missing_policy_fails(void **state)
{
	struct sim_scenario *sc = load(SMOKE);
	struct sim_replay_opts o;
	struct sim_result r;
	struct errbuf err;

	(void)state;
	memset(&o, 0, sizeof(o));
	o.sc = sc;
	o.policy_path = "/nonexistent/policy.lua";
	assert_int_equal(sim_replay(&o, &r, &err), -1);
	assert_non_null(strstr(err.msg, "/nonexistent/policy.lua"));
	sim_scenario_free(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_seed_same_run),
		cmocka_unit_test(test_other_seed_other_run),
		cmocka_unit_test(test_smoke_holds_invariants),
		cmocka_unit_test(test_series_sampled),
		cmocka_unit_test(test_reckless_policy_breaks_nothing),
		cmocka_unit_test(test_checker_sees_over_max),
		cmocka_unit_test(test_checker_sees_over_total),
		cmocka_unit_test(test_checker_sees_stuck_pods),
		cmocka_unit_test(test_checker_sees_long_waits),
		cmocka_unit_test(test_missing_policy_fails),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
