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
#include "sim/runs/replay.h"
#include "sim/world/scenario.h"

/*
 * Writes 'dir'/index.html for the runs of scenario 'sc' (one per policy,
 * in the order given, each with its series) and 'dir'/series.csv with
 * every sample of every run. Creates 'dir' (not its parents) when missing.
 * Replaces the files atomically (written beside, then renamed). Returns 0,
 * or -1 with a message naming the file.
 */
int sim_report_write(const char *dir, const struct sim_scenario *sc,
		     const struct sim_result *runs, size_t n, struct errbuf *err);

/*
 * The name a run goes by in the table and the report: its policy's file
 * name without ".lua", with " (2)", " (3)" when an earlier run among
 * runs[0..k-1] has the same one. Written into 'out' (truncated to 'len').
 */
void sim_report_label(const struct sim_result *runs, size_t k, char *out, size_t len);

/* A wait in seconds as "45s", "3m10s" or "1h02m" ("2.5s" under 10s). */
void sim_report_format_wait(char *out, size_t len, double seconds);

#endif
