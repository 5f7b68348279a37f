/*
 * cli/run_ops: the daemon's operations parts beside its loop — reloads on
 * file changes (the reconciler's one reload path, SIGHUP's too), done
 * between two rounds, the status ConfigMap and the Events on pods, written
 * by the process that acts.
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

/* Frees it. Stops the watcher first. NULL is a no-op. */
void run_ops_free(struct run_ops *o);

/*
 * Makes every reload of 'rec' read the config file again
 * (reconciler_follow_config), SIGHUP's too, and starts following the
 * config file and the policy file (reload.watch; not when off): a change
 * of either asks 'rec' for a reload (as SIGHUP does) and 'batch' for a
 * round. Returns 0, or -1 with why (the daemon then logs it and runs on
 * without watching).
 */
int run_ops_watch(struct run_ops *o, struct reconciler *rec, struct batcher *batch,
		  struct errbuf *err);

/* Stops the file watcher (before the reconciler and batcher it calls are
 * freed). Safe to call twice, and without a watcher. */
void run_ops_stop(struct run_ops *o);

/* Asks for a reload (the config read again when run_ops_watch has been
 * called, and the policy) before the next round, and for that round.
 * Any thread. */
void run_ops_request_config(struct run_ops *o);

/*
 * At a round boundary: the reload pending, if any, whatever asked for it
 * (reconciler_reload_pending: the config read again and validated,
 * settings that need a restart kept as they run, the policy tried on 's';
 * on failure everything stays as it was). The round that follows logs,
 * counts and shows its outcome. Returns 1 when a config that says
 * something new is in place (run_ops_config() then returns it), 0 else.
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

/* A dry run's reporting: no status ConfigMap and no Events are written;
 * the status text is logged each time it changes. Returns 0, or -1 with
 * why. */
int run_ops_report_dry(struct run_ops *o, struct errbuf *err);

/* Whether this process acts (the leader): a standby reports nothing.
 * Any thread. */
void run_ops_set_active(struct run_ops *o, bool active);

struct clock;
struct explainer;

/*
 * Explains every node now and then (intervals.explain of the config in
 * use, by 'clock''s monotonic time): the rounds run_ops_round_opts()
 * prepares ask for it when 'e' says it is due, and each such round's
 * pass goes to 'e' (/debug/nodes) and its summary to the status. Both
 * borrowed; 'e' must outlive this.
 */
void run_ops_explain(struct run_ops *o, struct explainer *e, struct clock *clock);

/* Sets 'ro''s observer to the reporting's (status, Events, the node
 * explanations) and whether this round explains every node. */
void run_ops_round_opts(struct run_ops *o, struct round_opts *ro);

/* The config in use: the first one, or the last one put in place. */
const struct config *run_ops_config(const struct run_ops *o);

#endif
