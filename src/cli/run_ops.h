/*
 * cli/run_ops: the daemon's operations parts beside its loop — reloads on
 * file changes, the config put in place between two rounds, the status
 * ConfigMap and the Events on pods, written by the process that acts.
 */
#ifndef LUASCALE_RUN_OPS_H
#define LUASCALE_RUN_OPS_H

#include <stdatomic.h>
#include <stdbool.h>

#include "config.h"
#include "engine/batcher.h"
#include "engine/reconciler.h"
#include "engine/round.h"
#include "kube/client.h"
#include "log.h"
#include "model.h"

struct run_ops;

/*
 * The operations parts for a daemon started with 'cfg' read from
 * 'config_path' (both borrowed; 'cfg' stays the caller's and must outlive
 * this). 'log' borrowed. NULL when out of memory.
 */
struct run_ops *run_ops_new(const char *config_path, const struct config *cfg,
			    const struct logger *log);

/* Frees it, and every config it read (free it after the reconciler that
 * reads the config in place). Stops the watcher first. NULL is a no-op. */
void run_ops_free(struct run_ops *o);

/*
 * Starts following the config file and the policy file (reload.watch;
 * a no-op when off): a changed policy asks 'rec' for a reload (as SIGHUP
 * does) and 'batch' for a round; a changed config is read again before
 * the next round (run_ops_apply_config). Returns 0, or -1 with why (the
 * daemon then logs it and runs on without watching).
 */
int run_ops_watch(struct run_ops *o, struct reconciler *rec, struct batcher *batch,
		  struct errbuf *err);

/* Stops the file watcher (before the reconciler and batcher it calls are
 * freed). Safe to call twice, and without a watcher. */
void run_ops_stop(struct run_ops *o);

/* Asks for the config to be read again before the next round (tests, and
 * a config change seen by the watcher). Any thread. */
void run_ops_request_config(struct run_ops *o);

/*
 * At a round boundary: when a config change is pending, reads the config
 * file again and validates it (an error is logged and the config in use
 * stays), keeps the settings that need a restart as they run (logged as
 * such), and puts the rest in place through reconciler_apply_config (the
 * policy tried on 's', may be NULL; on failure everything stays as it
 * was). Returns 1 when a new config is in place (run_ops_config() then
 * returns it), 0 when nothing changed.
 */
int run_ops_apply_config(struct run_ops *o, struct reconciler *rec, const struct snapshot *s,
			 int64_t now);

/*
 * Starts the reporting to the API server through 'client' (borrowed): the
 * status ConfigMap (status.enabled) and Events on pods (events.enabled),
 * each on a thread of its own so that a round never waits for them. Both
 * write only while active (run_ops_set_active; active from the start).
 * Returns 0, or -1 with why.
 */
int run_ops_report(struct run_ops *o, struct kube_client *client, struct errbuf *err);

/* Whether this process acts (the leader): a standby reports nothing.
 * Any thread. */
void run_ops_set_active(struct run_ops *o, bool active);

/* Sets 'ro''s observer to the reporting's (status, Events). */
void run_ops_round_opts(struct run_ops *o, struct round_opts *ro);

/* The config in use: the first one, or the last one put in place. */
const struct config *run_ops_config(const struct run_ops *o);

#endif
