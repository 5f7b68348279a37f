/*
 * bench_simulate: one simulated run, measured. Replays a scenario (default
 * examples/scenarios/scale-day.yaml: 2,000 nodes, 60,000 pods over 24 h)
 * with one policy (default policies/default.lua) and prints the wall time,
 * rounds and time per round, the share spent in the policy (view, Lua,
 * plan decoding) against the rest (simulated world, snapshots, safety
 * checks, actuator), the simulated day's outcome and the peak RSS.
 *   build/bench/bench_simulate [SCENARIO [POLICY]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "runtime/memtune.h"
#include "sim/runs/replay.h"
#include "sim/world/scenario.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	const char *scenario = argc > 1 ? argv[1] : LUASCALE_SOURCE "/examples/scenarios/scale-day.yaml";
	const char *policy = argc > 2 ? argv[2] : LUASCALE_SOURCE "/policies/default.lua";
	struct sim_replay_opts o = {0};
	struct sim_scenario *sc;
	struct sim_result r;
	struct errbuf err;
	struct rusage ru;
	double t0, load_ms, run_ms;

	/* as the luascale command does */
	memtune_keep_freed();
	t0 = now_ms();
	sc = sim_scenario_load(scenario, &err);
	if (!sc) {
		fprintf(stderr, "bench_simulate: %s\n", err.msg);
		return 1;
	}
	load_ms = now_ms() - t0;
	o.sc = sc;
	o.policy_path = policy;
	t0 = now_ms();
	if (sim_replay(&o, &r, &err) < 0) {
		fprintf(stderr, "bench_simulate: %s\n", err.msg);
		sim_scenario_free(sc);
		return 1;
	}
	run_ms = now_ms() - t0;
	getrusage(RUSAGE_SELF, &ru);
	printf("scenario         %s\n", scenario);
	printf("policy           %s\n", policy);
	printf("simulated        %.1f h, %llu rounds\n", (double)sc->duration_ns / 3600e9,
	       (unsigned long long)r.rounds);
	printf("load             %.1f ms\n", load_ms);
	printf("run              %.2f s wall (%.2f ms per round)\n", run_ms / 1e3,
	       r.rounds ? run_ms / (double)r.rounds : 0);
	printf("  policy         %.2f s (%.0f %%)\n", r.policy_ms / 1e3,
	       run_ms > 0 ? 100.0 * r.policy_ms / run_ms : 0);
	printf("  the rest       %.2f s (world, snapshots, safety, actuator)\n",
	       (run_ms - r.policy_ms) / 1e3);
	printf("outcome          peak %d nodes, %llu launched, %llu removed, wait p95 %.0f s, %llu violations\n",
	       r.peak_nodes, (unsigned long long)r.launches, (unsigned long long)r.removed,
	       r.wait_p95, (unsigned long long)sim_violations_total(&r.v));
	printf("peak RSS         %.1f MB\n", (double)ru.ru_maxrss / 1024.0);
	sim_result_free(&r);
	sim_scenario_free(sc);
	return 0;
}
