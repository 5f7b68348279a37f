/*
 * cli/simulate: `luascale simulate` — replays a scenario in virtual time
 * through the same engine, actuator and simulated cloud and cluster the
 * tests use, once per policy, and prints a comparison: node-hours and cost,
 * how long pods waited, peak nodes, scale actions, evictions and pods
 * killed. A day passes in seconds; the same seed gives the same run.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "config.h"
#include "engine/actuator.h"
#include "engine/reconciler.h"
#include "engine/round.h"
#include "log.h"
#include "providers/sim/sim.h"
#include "runtime/clock.h"
#include "runtime/executor.h"
#include "sim/cloud.h"
#include "sim/cluster.h"
#include "sim/scenario.h"

#define MAX_POLICIES 8

struct result {
	const char *policy;
	double node_hours, cost;
	double pending_p50, pending_p95, pending_max; /* seconds */
	int peak_nodes;
	uint64_t launches, removed, evictions, killed, protected_killed;
	uint64_t policy_failures, rejected;
};

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static double percentile(int64_t *v, size_t n, double p)
{
	size_t i;

	if (n == 0)
		return 0;
	i = (size_t)(p * (double)(n - 1) + 0.5);
	return (double)v[i] / (double)CLOCK_NS_PER_S;
}

static void progress(bool tty, const char *policy, double frac, const struct sim_counts *c,
		     int *last)
{
	int pct = (int)(frac * 100.0);

	if (tty) {
		int i, bar = pct / 4;

		fprintf(stderr, "\r%-24.24s [", policy);
		for (i = 0; i < 25; i++)
			fputc(i < bar ? '#' : '.', stderr);
		fprintf(stderr, "] %3d%%  %4d nodes  %5d pods pending ", pct, c->nodes, c->pods_pending);
		if (pct >= 100)
			fputc('\n', stderr);
	} else if (pct / 10 != *last / 10 || pct == 100) {
		fprintf(stderr, "%s: %d%% (%d nodes, %d pods pending)\n", policy, pct, c->nodes,
			c->pods_pending);
	}
	*last = pct;
}

/* Runs the scenario once with 'policy_path'. 0, or -1 with a message. */
static int run_one(const char *scenario_path, const char *policy_path, bool have_seed,
		   uint64_t seed, struct result *out, struct errbuf *err)
{
	struct sim_scenario *sc = sim_scenario_load(scenario_path, err);
	struct config *own_cfg = NULL;
	const struct config *cfg;
	struct clock *clock = NULL;
	struct executor *ex = NULL;
	struct sim_world *w = NULL;
	struct provider *prov = NULL;
	struct provider_limits lim;
	struct kubeops kops;
	struct reconciler *rec = NULL;
	struct actuator *act = NULL;
	struct actuator_config acfg;
	struct actuator_stats ast;
	struct logger log = log_stderr(LOG_ERROR);
	struct sim_stats ss;
	struct sim_counts counts;
	int64_t step, t, end;
	bool tty = isatty(STDERR_FILENO);
	int last = -1, rc = -1;
	size_t i;

	memset(out, 0, sizeof(*out));
	out->policy = policy_path;
	if (!sc)
		return -1;
	if (have_seed)
		sc->seed = seed;
	if (sc->config) {
		cfg = sc->config;
	} else {
		char text[4200];
		struct config_opts o = {NULL, NULL, NULL, CONFIG_OFFLINE};

		snprintf(text, sizeof(text), "policy: {path: \"%s\"}\n", policy_path);
		own_cfg = config_parse_opts(text, strlen(text), "simulate", &o, err);
		if (!own_cfg)
			goto out;
		cfg = own_cfg;
	}
	rec = reconciler_new(cfg, policy_path, err);
	if (!rec)
		goto out;
	clock = vclock_new(sc->start_wall);
	ex = executor_new_virtual(clock);
	w = sim_world_new(sc, ex, err);
	if (!w)
		goto out;
	provider_limits_from(&lim, cfg);
	prov = sim_provider_new(w->cloud, &lim, err);
	if (!prov)
		goto out;
	sim_cluster_kubeops(w->cluster, &kops);
	actuator_config_from(&acfg, cfg);
	acfg.seed = sc->seed;
	act = actuator_new(ex, prov, &kops, &acfg, &log);

	step = cfg->reconcile_interval_ms * CLOCK_NS_PER_MS;
	end = clock_now(clock) + sc->duration_ns;
	for (t = clock_now(clock); t < end; t += step) {
		struct snapshot *s = NULL;
		struct round_stats rs;

		executor_run_until(ex, t);
		if (sim_cluster_snapshot(w->cluster, false, &s, err) < 0)
			goto out;
		if (round_run(rec, act, s, &log, &rs, err) < 0) {
			snapshot_free(s);
			goto out;
		}
		out->policy_failures += rs.policy_failed;
		out->rejected += rs.rejected;
		snapshot_free(s);
		sim_cluster_counts(w->cluster, &counts);
		if (counts.nodes > out->peak_nodes)
			out->peak_nodes = counts.nodes;
		progress(tty, policy_path, (double)(t + step - (end - sc->duration_ns)) / (double)sc->duration_ns,
			 &counts, &last);
	}
	executor_run_until(ex, end);

	for (i = 0; i < sc->n_groups; i++) {
		int64_t node_ns = 0;

		sim_cluster_group_nodes(w->cluster, i, &node_ns);
		out->node_hours += (double)node_ns / 3600e9;
		out->cost += (double)node_ns / 3600e9 * sc->groups[i].price_per_hour;
	}
	sim_cluster_get_stats(w->cluster, &ss);
	if (ss.n_pending_ns) {
		int64_t *v = malloc(ss.n_pending_ns * sizeof(*v));

		if (v) {
			memcpy(v, ss.pending_ns, ss.n_pending_ns * sizeof(*v));
			qsort(v, ss.n_pending_ns, sizeof(*v), cmp_i64);
			out->pending_p50 = percentile(v, ss.n_pending_ns, 0.50);
			out->pending_p95 = percentile(v, ss.n_pending_ns, 0.95);
			free(v);
		}
	}
	out->pending_max = (double)ss.pending_ns_max / (double)CLOCK_NS_PER_S;
	out->evictions = ss.evictions;
	out->killed = ss.pods_killed;
	out->protected_killed = ss.protected_disrupted;
	actuator_get_stats(act, &ast);
	out->launches = ast.launch_requests;
	out->removed = ast.nodes_deleted;
	rc = 0;
out:
	if (ex)
		executor_shutdown(ex, clock_now(clock));
	actuator_free(act);
	provider_free(prov);
	sim_world_free(w);
	reconciler_free(rec);
	config_free(own_cfg);
	sim_scenario_free(sc);
	if (clock)
		vclock_free(clock);
	return rc;
}

static void simulate_usage(FILE *f)
{
	fputs("usage: luascale simulate --scenario FILE --policy FILE [--policy FILE ...] [--seed N]\n"
	      "\n"
	      "Replays the scenario in virtual time (a day in seconds) through the engine,\n"
	      "the actuator and the simulated cloud and cluster, once per policy, and\n"
	      "prints a comparison: node-hours and cost, pod pending time (p50, p95, max),\n"
	      "peak nodes, scale actions, evictions, and pods killed. The same seed gives\n"
	      "the same run. Scenarios: examples/scenarios/.\n",
	      f);
}

int cli_simulate(int argc, char **argv)
{
	static const struct option opts[] = {
		{"scenario", required_argument, NULL, 's'},
		{"policy", required_argument, NULL, 'p'},
		{"seed", required_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *scenario = NULL, *policies[MAX_POLICIES];
	struct result results[MAX_POLICIES];
	size_t n = 0, i;
	bool have_seed = false;
	uint64_t seed = 0;
	struct errbuf err;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "s:p:S:h", opts, NULL)) != -1) {
		switch (opt) {
		case 's': scenario = optarg; break;
		case 'p':
			if (n == MAX_POLICIES) {
				fprintf(stderr, "luascale simulate: at most %d policies\n", MAX_POLICIES);
				return EXIT_USAGE;
			}
			policies[n++] = optarg;
			break;
		case 'S': {
			char *endp;

			seed = strtoull(optarg, &endp, 10);
			if (!*optarg || *endp) {
				fprintf(stderr, "luascale simulate: --seed must be a number, not \"%s\"\n", optarg);
				return EXIT_USAGE;
			}
			have_seed = true;
			break;
		}
		case 'h': simulate_usage(stdout); return EXIT_OK;
		default: simulate_usage(stderr); return EXIT_USAGE;
		}
	}
	if (!scenario || n == 0) {
		fprintf(stderr, "luascale simulate: --scenario FILE and at least one --policy FILE are required\n");
		simulate_usage(stderr);
		return EXIT_USAGE;
	}
	for (i = 0; i < n; i++) {
		if (run_one(scenario, policies[i], have_seed, seed, &results[i], &err) < 0) {
			fprintf(stderr, "luascale simulate: %s: %s\n", policies[i], err.msg);
			return EXIT_INPUT;
		}
	}
	printf("\n%-28s %10s %9s %9s %9s %9s %6s %8s %8s %9s %7s %9s\n", "policy", "node-hours",
	       "cost", "wait p50", "wait p95", "wait max", "peak", "launches", "removed",
	       "evictions", "killed", "protected");
	for (i = 0; i < n; i++) {
		const struct result *r = &results[i];

		printf("%-28.28s %10.1f %9.2f %8.0fs %8.0fs %8.0fs %6d %8llu %8llu %9llu %7llu %9llu\n",
		       r->policy, r->node_hours, r->cost, r->pending_p50, r->pending_p95,
		       r->pending_max, r->peak_nodes, (unsigned long long)r->launches,
		       (unsigned long long)r->removed, (unsigned long long)r->evictions,
		       (unsigned long long)r->killed, (unsigned long long)r->protected_killed);
		if (r->policy_failures || r->rejected)
			printf("  (%llu round(s) where the policy failed, %llu action(s) rejected by the safety checks)\n",
			       (unsigned long long)r->policy_failures, (unsigned long long)r->rejected);
	}
	return EXIT_OK;
}
