/*
 * reconciler: what every front end runs each round — the loaded policy, its
 * limits from the config, and the reloads that happen between two rounds.
 * A reload is one path whatever asked for it (SIGHUP, a changed config or
 * policy file): the config file read again when the reconciler follows
 * one, the policy it names loaded and tried, then swapped in; its outcome
 * is reported by the round that follows (log, metric, status). It owns the
 * policy and the configs it read again; the first config and the
 * snapshots are borrowed.
 */
#ifndef LUASCALE_RECONCILER_H
#define LUASCALE_RECONCILER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "config_reload.h"
#include "engine/decide.h"
#include "errbuf.h"
#include "log.h"
#include "model.h"

struct reconciler;

/* What happened to a reload asked for with reconciler_request_reload(). */
struct reload_result {
	bool attempted;          /* a reload was pending at this round */
	bool ok;                 /* the new policy (and config) is in place */
	bool config_read;        /* the config file was read again ... */
	bool config_changed;     /* ... and says something else than the one in use */
	bool config_failed;      /* it could not be read or is not valid: nothing was tried */
	char config_path[256];   /* the file read again, when config_read */
	char message[ERRBUF_MAX]; /* why it failed, or what the store lost */
	char restart[512];       /* settings changed that need a restart (kept as they run) */
	struct config_loosened loosened[CONFIG_LOOSENED_MAX]; /* safety values loosened */
	size_t n_loosened;       /* how many (may be more than those listed) */
};

/*
 * Logs what a reload did at 'now' to 'log': a line for its outcome (INFO
 * "policy reloaded from ..." with "config reloaded from ..." when the
 * config changed; ERROR "config reload failed, the config in use stays:
 * ..." or "policy reload failed, ... stays in place: ..."), then a WARN
 * naming the settings that need a restart and a WARN for each safety value
 * loosened (old -> new). 'policy' is the policy path in place.
 */
void reload_result_log(const struct reload_result *rr, const char *policy,
		       const struct logger *log, int64_t now);

/* The outcome label of luascale_policy_reloads_total for 'rr': "ok",
 * "loosened" (in place, and some safety value loosened) or "failed". */
const char *reload_result_outcome(const struct reload_result *rr);

/*
 * Loads the policy at 'policy_path' (NULL: the config's) with the config's
 * params and limits. 'cfg' must outlive the reconciler. NULL with a message
 * when the policy does not load.
 */
struct reconciler *reconciler_new(const struct config *cfg, const char *policy_path,
				  struct errbuf *err);

/*
 * reconciler_new() whose policy calls (rounds, and the trial run of a
 * reload) end early once '*cancel' is true: the daemon sets it on SIGTERM
 * so that a policy in the middle of a long call does not hold shutdown.
 * 'cancel' (may be NULL) is borrowed and must outlive the reconciler.
 */
struct reconciler *reconciler_new_cancellable(const struct config *cfg,
					      const char *policy_path,
					      const atomic_bool *cancel, struct errbuf *err);

void reconciler_free(struct reconciler *r);

/* The path of the policy in place. */
const char *reconciler_policy_path(const struct reconciler *r);

/* Asks for a reload before the next round (SIGHUP, the file watcher,
 * whoever): the config file too when followed (reconciler_follow_config),
 * else the policy file. Any thread (an atomic store); async-signal-safe too. */
void reconciler_request_reload(struct reconciler *r);

/*
 * From now on each reload reads the config file at 'path' (copied) again
 * first and puts it in place with its policy (reconciler_apply_config);
 * settings that need a restart keep their running values. Without it a
 * reload is the policy file's alone. Returns 0, or -1 when out of memory.
 */
int reconciler_follow_config(struct reconciler *r, const char *path, struct errbuf *err);

/* The config in use: the first one, or the last one a reload put in place
 * (owned by the reconciler: valid until reconciler_free). */
const struct config *reconciler_config(const struct reconciler *r);

/*
 * The reload, at a round boundary, whatever asked for it: when one is
 * requested (and the outcome of an earlier one has been reported), it is
 * done now on 's' (the trial) and its outcome kept for the next
 * reconciler_run() to report. Returns 1 when it put in place a config that
 * says something new (a snapshot made from the old one may miss its
 * groups), 0 otherwise (nothing pending, the same config, or a failure).
 */
int reconciler_reload_pending(struct reconciler *r, const struct snapshot *s);

/*
 * Reloads now: the file at 'path' (NULL: the one in place) is loaded in a
 * fresh sandbox, tried on 's' (may be NULL: no trial), and swapped in with
 * the store carried over. On failure the policy in place stays and -1 is
 * returned with why. 'dropped' (may be NULL) lists store entries that
 * could not be carried.
 */
int reconciler_reload(struct reconciler *r, const char *path, const struct snapshot *s,
		      char *dropped, size_t dropped_len, struct errbuf *err);

/*
 * Puts config 'cfg' in place of the one in use (reload of a changed
 * config): the policy at cfg's policy path is loaded with cfg's params and
 * limits, tried on 's' (may be NULL: no trial) and swapped in with the
 * store carried over, and the safety limits become cfg's. On failure
 * nothing changes and -1 is returned with why. 'cfg' must outlive the
 * reconciler (or the next call); the old config is no longer read.
 */
int reconciler_apply_config(struct reconciler *r, const struct config *cfg,
			    const struct snapshot *s, char *dropped, size_t dropped_len,
			    struct errbuf *err);

/*
 * One round on 's': a pending reload is applied first (at this boundary,
 * tried on 's', unless reconciler_reload_pending() did it already) and its
 * outcome reported in 'rr' (may be NULL), then the policy decides and the
 * plan is checked. Same contract as engine_decide(): a policy
 * failure is out->ok == false, -1 only on out of memory.
 */
int reconciler_run(struct reconciler *r, const struct snapshot *s, bool node_reports,
		   struct decision *out, struct reload_result *rr, struct errbuf *err);

#endif
