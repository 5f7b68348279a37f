/*
 * config_reload: what a config read again while running may change. The
 * settings the running process was built from (the cluster connection, the
 * provider, the actuator's and the loop's settings) need a restart: they
 * are named and kept as they run. Parsing and validation are config.c's.
 */
#ifndef LUASCALE_CONFIG_RELOAD_H
#define LUASCALE_CONFIG_RELOAD_H

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

#endif
