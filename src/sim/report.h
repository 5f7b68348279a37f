/*
 * sim/report: the HTML report of a simulation — one self-contained file
 * (inline CSS and SVG, no script, nothing fetched) with the comparison
 * table and, side by side per policy, charts over time of nodes per
 * group, pending pods, utilization and cumulative cost. It writes files
 * only; running the simulation is sim/replay's.
 */
#ifndef LUASCALE_SIM_REPORT_H
#define LUASCALE_SIM_REPORT_H

#include <stddef.h>

#include "errbuf.h"
#include "sim/replay.h"
#include "sim/scenario.h"

/*
 * Writes 'dir'/index.html for the runs of scenario 'sc' (one per policy,
 * in the order given, each with its series) and 'dir'/series.csv with
 * every sample of every run. Creates 'dir' (not its parents) when missing.
 * Replaces the files atomically (written beside, then renamed). Returns 0,
 * or -1 with a message naming the file.
 */
int sim_report_write(const char *dir, const struct sim_scenario *sc,
		     const struct sim_result *runs, size_t n, struct errbuf *err);

#endif
