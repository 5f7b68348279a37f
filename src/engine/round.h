/*
 * round: one reconcile as every live front end runs it (the daemon, the
 * simulator): the actuator's in-flight state into the snapshot, the policy
 * and the safety checks, every decision logged, then the accepted plan to
 * the actuator. The snapshot and its source are the caller's.
 */
#ifndef LUASCALE_ROUND_H
#define LUASCALE_ROUND_H

#include <stdbool.h>

#include "engine/actuator.h"
#include "engine/decide.h"
#include "engine/reconciler.h"
#include "log.h"
#include "model.h"

struct round_stats {
	size_t actions;   /* accepted and handed to the actuator */
	size_t rejected;  /* refused by the safety checks */
	int64_t instances;/* instances the accepted scale-ups ask for */
	size_t removals;  /* nodes the accepted drains and deletes remove */
	bool policy_failed;
	char error[256];  /* why the policy failed (truncated), "" otherwise */
	bool reloaded;    /* a pending reload was applied this round */
	double policy_ms; /* view + policy + decode */
};

/*
 * Runs one round on 's' (finished; the actuator writes group targets and
 * backoff into it). Logs each accepted action with its reason and the
 * policy line, each rejection with why, the policy's own log lines, a
 * failed policy, and the outcome of a pending reload. Returns 0, or -1 on
 * out of memory. 'st' may be NULL.
 */
int round_run(struct reconciler *r, struct actuator *a, struct snapshot *s,
	      const struct logger *log, struct round_stats *st, struct errbuf *err);

#endif
