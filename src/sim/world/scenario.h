/*
 * sim/scenario: a simulated day in YAML (ytree; errors as file:line:col) and
 * the world built from it — cloud, cluster and the workloads' arrivals on an
 * executor. The format is described at the top of examples/scenarios/smoke.yaml.
 */
#ifndef LUASCALE_SIM_SCENARIO_H
#define LUASCALE_SIM_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "errbuf.h"
#include "model.h"
#include "runtime/executor.h"
#include "sim/clouds/cloud.h"
#include "sim/clouds/sim_cloud_kind.h"
#include "sim/world/cluster.h"

/* Pods of one spec arriving over time. */
struct sim_workload {
	struct sim_pod_spec spec;
	int64_t at_ns;              /* first wave, from the start */
	int count;                  /* pods per wave */
	int64_t interval_ns;        /* between the pods of a wave (0: all at once) */
	int64_t spread_ns;          /* or: each pod at a random time in [at, at + spread) */
	int64_t every_ns;           /* waves repeat this often (0: one wave) */
	int times;                  /* number of waves; 0 with 'every': until the scenario ends */
	int64_t duration_spread_ns; /* each pod runs duration + uniform [0, spread) */
	int line, col;              /* where it is defined */
};

struct sim_initial_nodes {
	const char *group;
	int count;
};

struct sim_scenario {
	struct arena *arena;            /* owns everything below but 'config' */
	const char *source;
	const char *title;              /* a name for reports, or NULL */
	const char *description;        /* a paragraph for reports, or NULL */
	uint64_t seed;                  /* the world draws every random number from it */
	int64_t start_wall;             /* unix seconds at time 0 (give it to vclock_new) */
	int64_t duration_ns;            /* how long a run lasts */
	struct config *config;          /* the luascale config it names, or NULL (owned) */
	const struct node_group *groups;/* inline, or the config's */
	size_t n_groups;
	const struct label_selector *protected_pods; /* NULL: none */
	const char *protected_text;     /* the same as written, or NULL */
	int64_t max_nodes_total;        /* safety limits for the run (0: the default) */
	int64_t max_scale_down_per_round;
	struct sim_cloud_opts cloud;
	struct sim_cluster_opts cluster;
	struct sim_initial_nodes *initial;
	size_t n_initial;
	struct sim_workload *workloads;
	size_t n_workloads;
	struct pdb *pdbs;
	size_t n_pdbs;
	struct sim_fault *faults;
	size_t n_faults;
	/* the cloud whose section it has (`aws:`, `gce:`, ...: one at most) and
	 * that section as the cloud parsed it; NULL: the plain simulator */
	const struct sim_cloud_kind *flavour_kind;
	const void *flavour_conf;
	int64_t expect_max_pending_ns;  /* expect.max_pending: no pod may wait longer to be
					 * bound (0: no bound) */
};

/*
 * Parses a scenario. 'source' names it in messages and is where a
 * 'config:' path is resolved from (its directory). A named config is read
 * offline (no cluster or policy needed) and without environment overrides,
 * so a run depends on the files only. Returns the scenario (free with
 * sim_scenario_free) or NULL with "source:line:col: path: message".
 */
struct sim_scenario *sim_scenario_parse(const char *text, size_t len, const char *source,
					struct errbuf *err);

/*
 * The section of cloud 'k' (a struct sim_aws_conf for sim_cloud_aws, ...),
 * or NULL when the scenario has none of k's.
 */
const void *sim_scenario_cloud(const struct sim_scenario *sc, const struct sim_cloud_kind *k);

/* Scenario files larger than this are refused. */
#define SCENARIO_MAX_SIZE (16u << 20)

/* Reads 'path' (at most SCENARIO_MAX_SIZE) and parses it. */
struct sim_scenario *sim_scenario_load(const char *path, struct errbuf *err);

void sim_scenario_free(struct sim_scenario *sc);

/*
 * A simulated world built from a scenario: the cloud, the cluster on it,
 * and the workloads' arrivals queued on the executor, times counted from
 * the executor's clock when it is built (create the vclock with
 * sc->start_wall, build the world at time 0).
 */
struct sim_world {
	const struct sim_scenario *sc; /* borrowed */
	struct sim_cloud *cloud;
	struct sim_cluster *cluster;
	const struct sim_cloud_kind *flavour_kind; /* the scenario's, or NULL */
	void *flavour;                 /* its flavour of the cloud (struct sim_aws, ...), or NULL */
	struct sim_life *life;
	uint64_t rng;
	int64_t t0;
	int *spec_handles;             /* per workload: its handle in the cluster */
};

/*
 * Builds the world on 'ex' (borrowed; free the world before or after the
 * executor shuts down, the scenario after the world). NULL with a message.
 */
struct sim_world *sim_world_new(const struct sim_scenario *sc, struct executor *ex,
				struct errbuf *err);

void sim_world_free(struct sim_world *w);

/*
 * The flavour of cloud 'k' (a struct sim_aws * for sim_cloud_aws, ...),
 * borrowed, or NULL when the world is not k's.
 */
void *sim_world_flavour(const struct sim_world *w, const struct sim_cloud_kind *k);

#endif
