/*
 * reconciler: what every front end runs each round — the loaded policy, its
 * limits from the config, and the policy reloads that happen between two
 * rounds (requested from the signal thread, tried before they are swapped
 * in). It owns the policy; the config and the snapshots are borrowed.
 */
#ifndef LUASCALE_RECONCILER_H
#define LUASCALE_RECONCILER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "engine/decide.h"
#include "errbuf.h"
#include "model.h"

struct reconciler;

/* What happened to a reload asked for with reconciler_request_reload(). */
struct reload_result {
	bool attempted;          /* a reload was pending at this round */
	bool ok;                 /* the new policy is in place */
	char message[ERRBUF_MAX]; /* why it failed, or what the store lost */
};

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

/* Asks for the policy file to be reloaded before the next round. Any
 * thread (an atomic store); async-signal-safe too. */
void reconciler_request_reload(struct reconciler *r);

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
 * tried on 's'; reported in 'rr', may be NULL), then the policy decides
 * and the plan is checked. Same contract as engine_decide(): a policy
 * failure is out->ok == false, -1 only on out of memory.
 */
int reconciler_run(struct reconciler *r, const struct snapshot *s, bool node_reports,
		   struct decision *out, struct reload_result *rr, struct errbuf *err);

#endif
