/*
 * Tests for what sim/replay records for the report beyond the series'
 * levels: every pod's wait as a distribution (exact percentiles, bounded
 * points on the exact curve), the scale-ups and removals per group and
 * sample, the cost of each group adding up to the run's, and the params
 * the policy ran with (its defaults, and what the scenario's config set).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <math.h>
#include <unistd.h>

#include "runtime/clock.h"
#include "sim/runs/replay.h"
#include "sim/world/scenario.h"
#include "test_scenario.h"

#define SMOKE SOURCE_DIR "/examples/scenarios/smoke.yaml"
#define DEFAULT_POLICY SOURCE_DIR "/policies/default.lua"
#define BINPACK_POLICY SOURCE_DIR "/policies/binpack.lua"

static void run(const struct sim_scenario *sc, const char *policy, struct sim_result *out)
{
	struct sim_replay_opts o;
	struct errbuf err;

	memset(&o, 0, sizeof(o));
	o.sc = sc;
	o.policy_path = policy;
	if (sim_replay(&o, out, &err) < 0)
		fail_msg("%s", err.msg);
}

/* The curve: ascending waits, rising shares ending at 1, the longest wait
 * last, and each percentile where the curve says it is. */
static void assert_cdf_sound(const struct sim_result *r)
{
	const struct sim_wait_cdf *c = &r->waits;
	const double pct[] = {0.50, 0.90, 0.95, 0.99};
	const double val[] = {r->wait_p50, r->wait_p90, r->wait_p95, r->wait_p99};
	size_t i, k;

	assert_true(c->pods > 0);
	assert_true(c->n > 0 && c->n <= SIM_CDF_POINTS);
	assert_true(c->n <= c->pods);
	for (i = 1; i < c->n; i++) {
		assert_true(c->wait_s[i] > c->wait_s[i - 1]);
		assert_true(c->frac[i] > c->frac[i - 1]);
	}
	assert_true(c->frac[c->n - 1] == 1.0);
	assert_true(fabs(c->wait_s[c->n - 1] - r->wait_max) < 1e-9);
	assert_true(r->wait_p50 <= r->wait_p90 && r->wait_p90 <= r->wait_p95 &&
		    r->wait_p95 <= r->wait_p99 && r->wait_p99 <= r->wait_max);
	/* the share of pods that waited less than a percentile is at most it,
	 * and at most that long at least it (within a rank) */
	for (k = 0; k < 4; k++) {
		double below = 0, upto = 0;

		for (i = 0; i < c->n; i++) {
			if (c->wait_s[i] < val[k])
				below = c->frac[i];
			if (c->wait_s[i] <= val[k])
				upto = c->frac[i];
		}
		assert_true(below <= pct[k] + 1.0 / (double)c->pods);
		if (c->n == c->pods || upto > 0)
			assert_true(upto >= pct[k] - 1.0 / (double)c->pods - 1.0 / SIM_CDF_POINTS);
	}
}

static long series_sum(const int *a, const struct sim_series *s, size_t g)
{
	long sum = 0;
	size_t i;

	for (i = 0; i < s->n; i++)
		sum += a[i * s->n_groups + g];
	return sum;
}

static void test_smoke_waits_and_events(void **state)
{
	struct sim_scenario *sc = load(SMOKE);
	struct sim_result r;
	long up, down;

	(void)state;
	run(sc, DEFAULT_POLICY, &r);
	assert_cdf_sound(&r);
	/* 3 web pods, 48 jobs, a node-agent per node that ever ran */
	assert_true(r.waits.pods >= 51);
	assert_int_equal(r.waits.n <= r.waits.pods, 1);
	/* launches include the calls the fault refused; removals are the deletes */
	assert_non_null(r.series.launched);
	assert_non_null(r.series.removed);
	up = series_sum(r.series.launched, &r.series, 0);
	down = series_sum(r.series.removed, &r.series, 0);
	assert_true(up > 0);
	assert_true((uint64_t)up <= r.launches);
	assert_int_equal(down, r.removed);
	/* the two initial nodes are neither */
	assert_int_equal(r.series.launched[0], 0);
	sim_result_free(&r);
	sim_scenario_free(sc);
}

/* Two groups, no launch fault: every launch asked for is one made, each in
 * its group's column; the groups' costs add up to the run's. */
static const char two_groups[] =
	"seed: 5\n"
	"start: \"2024-05-06T08:00:00Z\"\n"
	"duration: 40m\n"
	"node_groups:\n"
	"  - {name: small, min: 0, max: 6, price_per_hour: 0.1, template: {allocatable: {cpu: 2, memory: 8Gi}}}\n"
	"  - {name: big, min: 1, max: 4, price_per_hour: 0.9, template: {allocatable: {cpu: 16, memory: 64Gi}, labels: {size: big}}}\n"
	"initial_nodes: [{group: big, count: 1}]\n"
	"workloads:\n"
	"  - {name: wide, controller: job, at: 2m, count: 6, requests: {cpu: '6', memory: 1Gi}, node_selector: {size: big}, duration: 10m}\n"
	"  - {name: narrow, controller: job, at: 3m, count: 700, spread: 5m, requests: {cpu: 100m, memory: 64Mi}, duration: 4m}\n";

static void test_groups_events_and_costs(void **state)
{
	struct sim_scenario *sc = parse(two_groups);
	struct sim_result r;
	double sum_cost = 0, sum_hours = 0;
	long up = 0, down = 0;
	size_t g;

	(void)state;
	run(sc, DEFAULT_POLICY, &r);
	assert_int_equal(r.n_group_cost, 2);
	for (g = 0; g < 2; g++) {
		sum_cost += r.group_cost[g].cost;
		sum_hours += r.group_cost[g].node_hours;
		assert_true(r.group_cost[g].cost ==
			    r.group_cost[g].node_hours * sc->groups[g].price_per_hour);
		up += series_sum(r.series.launched, &r.series, g);
		down += series_sum(r.series.removed, &r.series, g);
	}
	assert_true(sum_cost == r.cost); /* summed in the same order: exactly */
	assert_true(sum_hours == r.node_hours);
	assert_true(r.group_cost[1].node_hours > 0);
	/* the big pods needed big nodes */
	assert_true(series_sum(r.series.launched, &r.series, 1) > 0);
	assert_int_equal((uint64_t)up, r.launches);
	assert_int_equal((uint64_t)down, r.removed);
	/* 700 + 6 pods and more: the curve has its bound of points, exact ones */
	assert_true(r.waits.pods > SIM_CDF_POINTS);
	assert_int_equal(r.waits.n <= SIM_CDF_POINTS, 1);
	assert_cdf_sound(&r);
	sim_result_free(&r);
	sim_scenario_free(sc);
}

static const struct sim_param *param(const struct sim_result *r, const char *key)
{
	size_t i;

	for (i = 0; i < r->n_params; i++)
		if (strcmp(r->params[i].key, key) == 0)
			return &r->params[i];
	fail_msg("no param %s", key);
	return NULL;
}

static void test_params(void **state)
{
	char dir[] = "/tmp/test_sim_run_record.XXXXXX", cfg[96], scen[96];
	struct sim_scenario *sc;
	struct sim_result a, b;
	const struct sim_param *p;
	struct errbuf err;
	FILE *f;
	size_t i;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(cfg, sizeof(cfg), "%s/config.yaml", dir);
	snprintf(scen, sizeof(scen), "%s/day.yaml", dir);
	f = fopen(cfg, "w");
	assert_non_null(f);
	fprintf(f, "node_groups:\n"
		   "  - {name: workers, min: 1, max: 3, price_per_hour: 0.2, template: {allocatable: {cpu: 4, memory: 16Gi}}}\n"
		   "policy:\n  path: %s\n  params: {unneeded_for: 3m, max_scale_down: 2}\n",
		DEFAULT_POLICY);
	fclose(f);
	f = fopen(scen, "w");
	assert_non_null(f);
	fputs("duration: 5m\nconfig: config.yaml\ninitial_nodes: [{group: workers, count: 1}]\n", f);
	fclose(f);
	sc = sim_scenario_load(scen, &err);
	if (!sc)
		fail_msg("%s", err.msg);

	/* the config's own policy: its params over the policy's defaults */
	run(sc, DEFAULT_POLICY, &a);
	assert_string_equal(a.params_from, cfg);
	assert_int_equal(a.n_params, 9);
	for (i = 1; i < a.n_params; i++)
		assert_true(strcmp(a.params[i - 1].key, a.params[i].key) < 0);
	p = param(&a, "unneeded_for");
	assert_string_equal(p->value, "3m");
	assert_string_equal(p->dflt, "10m");
	assert_true(p->from_config);
	p = param(&a, "max_scale_down");
	assert_string_equal(p->value, "2");
	assert_string_equal(p->dflt, "1");
	assert_true(p->from_config);
	p = param(&a, "drain_on_rebalance");
	assert_string_equal(p->value, "false");
	assert_false(p->from_config);
	p = param(&a, "consolidation");
	assert_string_equal(p->value, "false");
	assert_false(p->from_config);
	p = param(&a, "replace_drifted");
	assert_string_equal(p->value, "true");
	assert_false(p->from_config);
	p = param(&a, "scale_down_utilization");
	assert_string_equal(p->value, "0.5");
	assert_string_equal(p->dflt, "0.5");
	assert_false(p->from_config);

	/* another policy runs with its defaults */
	run(sc, BINPACK_POLICY, &b);
	assert_string_equal(b.params_from, "");
	assert_true(b.n_params > 0);
	for (i = 0; i < b.n_params; i++) {
		assert_false(b.params[i].from_config);
		assert_string_equal(b.params[i].value, b.params[i].dflt);
	}
	sim_result_free(&a);
	sim_result_free(&b);
	sim_scenario_free(sc);
	unlink(scen);
	unlink(cfg);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_smoke_waits_and_events),
		cmocka_unit_test(test_groups_events_and_costs),
		cmocka_unit_test(test_params),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
