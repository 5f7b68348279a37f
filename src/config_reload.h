/*
 * config_reload: what a config read again while running may change. The
 * settings the running process was built from (the cluster connection, the
 * provider, the actuator's and the loop's settings) need a restart: they
 * are named and kept as they run. Parsing and validation are config.c's.
 */
#ifndef LUASCALE_CONFIG_RELOAD_H
#define LUASCALE_CONFIG_RELOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

/*
 * Compares 'next' (a config just read) with 'running' (the one in use).
 * Each setting that only a restart applies and that differs is named in
 * 'report' ("provider.kind, cluster.context"; "" when none, truncated
 * with "..." when long) and set in 'next' back to running's value: 'next'
 * then borrows strings and selectors from 'running', which must outlive
 * it. Returns how many settings were kept.
 */
size_t config_keep_restart_only(const struct config *running, struct config *next,
				char *report, size_t report_len);

/* A safety value that a reread config loosens: its YAML key, the running
 * value and the new one as a person reads them ("0 (no cap)"). */
struct config_loosened {
	char key[48];
	char from[256];
	char to[256];
	bool restart;  /* only a restart applies it: the running value stays till then */
};

#define CONFIG_LOOSENED_MAX 8

/*
 * Compares the safety section of 'next' with 'running' (call it before
 * config_keep_restart_only, which puts restart-only values back) and
 * writes each value that 'next' loosens into 'out' (at most 'max'): a
 * higher max_nodes_total or none, a higher max_scale_down_per_round,
 * max_actions_per_round or max_concurrent_drains, a longer
 * max_cache_staleness, a protected_pod_selector removed or changed (it may
 * protect other pods), a do_not_disrupt_annotations entry gone. Returns
 * how many values loosen (possibly more than 'max').
 */
size_t config_safety_loosened(const struct config *running, const struct config *next,
			      struct config_loosened *out, size_t max);

#endif
