/*
 * sim/replay: one run of a scenario with one policy, in virtual time,
 * through the same reconciler, safety checks and actuator as the daemon,
 * against the simulated cloud and cluster. It samples time series for the
 * report, sums up the run (cost, waits, actions) and checks the whole run
 * against the safety invariants. Printing and the report are the callers'.
 */
#ifndef LUASCALE_SIM_REPLAY_H
#define LUASCALE_SIM_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"
#include "log.h"
#include "sim/world/cluster.h"
#include "sim/world/scenario.h"

/* A run sampled over time: n samples of n_groups groups each. */
struct sim_series {
	size_t n, cap;
	size_t n_groups;
	int64_t *t_ns;     /* sample time, from the start */
	int *nodes;        /* [i * n_groups + g]: registered nodes of group g */
	int *booting;      /* [i * n_groups + g]: instances of group g not yet nodes */
	int *pending;      /* pods waiting for a node (unbound, not finished) */
	double *util_cpu;  /* requested / allocatable cpu over Ready nodes, 0 when none */
	double *util_mem;  /* the same for memory */
	double *cost;      /* cumulative cost so far (instance time x group price) */
	int *launched;     /* [i * n_groups + g]: instances group g's cloud created since
			    * the previous sample (the group grew) */
	int *removed;      /* [i * n_groups + g]: nodes of group g that left the cluster
			    * since the previous sample */
};

/* At most this many points on a run's wait curve. */
#define SIM_CDF_POINTS 512

/*
 * How long pods waited, as a cumulative distribution: every bound pod's
 * wait and every pod still pending at the end (with its wait so far). The
 * points lie on the exact curve (at most 1/SIM_CDF_POINTS of the pods
 * between two); the percentiles in sim_result are exact.
 */
struct sim_wait_cdf {
	size_t pods;       /* waits counted */
	size_t n;          /* points */
	double *wait_s;    /* ascending, seconds */
	double *frac;      /* share of the pods that waited at most wait_s[i]; the last is 1 */
};

/* A node group's share of a run's instance time and cost. */
struct sim_group_cost {
	double node_hours, cost;
};

/* A param the policy ran with, as text (see policy/param_text.h). */
struct sim_param {
	char *key;
	char *value;        /* what reconcile() got */
	char *dflt;         /* the policy's own default, NULL when it declares none */
	bool from_config;   /* set by the config's policy.params */
};

/* What went against an invariant; each counts occurrences. */
struct sim_violations {
	uint64_t over_max;         /* a group's instances above its max */
	uint64_t over_total;       /* all instances above safety.max_nodes_total */
	uint64_t under_min;        /* a removal took a group's size (instances) below its min */
	uint64_t over_removals;    /* a round started more removals than max_scale_down_per_round */
	uint64_t over_budget;      /* a group had more nodes being disrupted than its
				    * disruption budgets allowed */
	uint64_t protected_hit;    /* protected pods evicted or killed */
	uint64_t extra_instances;  /* instances created beyond what accepted plans asked for */
	uint64_t stuck_pending;    /* pods pending at the end, for longer than the settle
				    * time, that fit a group with room left */
	uint64_t over_wait;        /* pods that waited longer than the scenario's
				    * expect.max_pending to be bound (or still wait) */
	char first[256];           /* the first one, in words ("" when none) */
};

struct sim_result {
	char policy[256];          /* the policy path */
	double node_hours, cost;   /* instance time (launch to gone), and x price */
	double wait_p50, wait_p95, wait_max; /* seconds a pod waited to be bound */
	double wait_p90, wait_p99;
	int peak_nodes;            /* most registered nodes at once */
	uint64_t launches;         /* instances asked for */
	uint64_t unused;           /* launched nodes removed without having run a pod
				    * (DaemonSet pods aside): bought for nothing */
	uint64_t removed;          /* nodes deleted */
	uint64_t replaces;         /* replaces started (plan:replace) ... */
	uint64_t replaced;         /* ... whose new node was Ready: the old one's removal started */
	uint64_t replace_failed;   /* ... whose new node failed: the old one left as it was */
	uint64_t evictions;        /* accepted by the Eviction API */
	uint64_t killed;           /* unfinished pods that died without an eviction */
	uint64_t lost;             /* evicted or killed pods no controller recreates */
	uint64_t protected_killed; /* evicted or killed protected pods */
	uint64_t interrupted;      /* nodes gone whose instance an interrupt fault reclaimed */
	uint64_t moved;            /* their pods evicted (a drain) before they went */
	uint64_t died;             /* their pods that died with them (no eviction) */
	uint64_t policy_failures;  /* rounds where the policy failed */
	uint64_t rejected;         /* actions the safety checks refused */
	uint64_t rounds;
	double policy_ms;          /* real time in the policy (view, call, decode);
				    * for benchmarks, not reproducible */
	struct sim_violations v;
	struct sim_series series;
	struct sim_wait_cdf waits;
	struct sim_group_cost *group_cost; /* per scenario group; they add up to cost */
	size_t n_group_cost;
	struct sim_param *params;  /* sorted by key */
	size_t n_params;
	char params_from[256];     /* the config whose policy.params applied, "" none */
};

/* Called after each round: 'frac' of the run done, the cluster now. */
typedef void (*sim_progress_fn)(void *ud, double frac, const struct sim_counts *now);

struct sim_replay_opts {
	const struct sim_scenario *sc; /* borrowed; its seed is the run's */
	const char *policy_path;
	size_t max_samples;            /* series length at most (0: 1440) */
	int64_t settle_ns;             /* stuck_pending counts pods older than this (0: 30m) */
	sim_progress_fn progress;      /* may be NULL */
	void *progress_ud;
	const struct logger *log;      /* the engine's log lines, stamped in virtual
					* time (NULL: errors to stderr) */
};

/*
 * Runs the scenario once with the policy. The luascale config is the
 * scenario's (its policy params go to its own policy only; others run with
 * their defaults), or one made of the scenario's protected_pods and
 * defaults. Fills 'out' (free its series with sim_result_free) and returns
 * 0; -1 with a message when the scenario or policy cannot run at all
 * (including a policy that fails in each of the first 30 rounds). A policy
 * that fails in some rounds is not an error: see policy_failures.
 */
int sim_replay(const struct sim_replay_opts *o, struct sim_result *out, struct errbuf *err);

/* Frees what sim_replay allocated in 'r' (not 'r'). */
void sim_result_free(struct sim_result *r);

/* Sum of v's counters. */
uint64_t sim_violations_total(const struct sim_violations *v);

#endif
