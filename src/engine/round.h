/*
 * round: one reconcile as every live front end runs it (the daemon, the
 * simulator): the actuator's in-flight state into the snapshot, the policy
 * and the safety checks, every decision logged, then the accepted plan to
 * the actuator; on a stale cache (the caller says so) no removal at all.
 * The snapshot and its source are the caller's.
 */
#ifndef LUASCALE_ROUND_H
#define LUASCALE_ROUND_H

#include <stdbool.h>
#include <sys/types.h>

#include "engine/actuator.h"
#include "engine/binder.h"
#include "engine/decide.h"
#include "engine/instruments.h"
#include "engine/reconciler.h"
#include "log.h"
#include "model.h"

struct round_stats {
	size_t actions;   /* accepted and handed to the actuator */
	size_t rejected;  /* refused by the safety checks */
	int64_t instances;/* instances the accepted scale-ups and replaces ask for */
	size_t removals;  /* nodes the accepted removals (action_evicts) take away */
	bool policy_failed;
	char error[256];  /* why the policy failed (truncated), "" otherwise */
	bool reloaded;    /* a pending reload was applied this round */
	size_t held;      /* accepted removals held back: the cache was stale */
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

/* What a round decided, for those who report on it (the status ConfigMap,
 * Events). Everything is borrowed for the call. */
struct round_view {
	const struct plan *accepted;      /* after the safety checks and a stale hold */
	const struct verdict *verdict;    /* its rejections */
	const char *policy_error;         /* the policy failed: why; else NULL */
	const struct reload_result *reload; /* a reload tried at this round, or NULL */
	/* round_opts.explain: a word on every node of the snapshot, in its
	 * order (engine_decide's node reports, made before a stale hold);
	 * else NULL and 0 */
	const struct node_report *nodes;
	size_t n_nodes;
	const char *held;                 /* removals were held back: why (stale); else NULL */
};

/* What a live front end knows about a round beyond its snapshot. */
struct round_opts {
	/* Called once per round after the decision and before the actuator
	 * gets the plan, with the snapshot (group targets and backoff filled
	 * in); NULL: nobody. It must not block (it runs on the loop). */
	void (*observe)(void *ctx, const struct snapshot *s, const struct round_view *v);
	void *observe_ctx;
	/* Non-empty: the snapshot's source has not been in sync for longer
	 * than the configured bound, and why (which cache, since when). The
	 * round then plans no scale-down at all (see round_hold_removals);
	 * scale-ups and other actions go on. NULL or "": fresh. */
	const char *stale;
	/* Where the round's metrics go (policy time and instructions,
	 * reloads, actions planned by type, rejections by invariant); NULL:
	 * none. Borrowed. */
	const struct instruments *ins;
	/* Binds the pods of a packing to their node once it is Ready
	 * (provisioning.bind_pods); observes the snapshot right after the
	 * actuator. NULL: none. Borrowed. */
	struct binder *binder;
	/* Explain every node this round: the policy's per-node notes are read
	 * (plan:explain) and the round_view carries a node report each (it
	 * costs a drain simulation per node: ask now and then, not every
	 * round). */
	bool explain;
};

/* round_run() with 'o' (may be NULL: as round_run). */
int round_run_opts(struct reconciler *r, struct actuator *a, struct snapshot *s,
		   const struct round_opts *o, const struct logger *log, struct round_stats *st,
		   struct errbuf *err);

/* Whether 'a' takes a node away or starts to: drain, delete, cordon (the
 * first step of a removal) or a NoExecute taint (evicts the node's pods). */
bool round_is_removal(const struct action *a);

/*
 * Takes every removal (round_is_removal) out of 'p', logging each at 'now'
 * as held back because of 'why', and one warning for the round when any
 * was. Returns how many were held, or -1 when out of memory ('p' is then
 * left without any removal either: it keeps only what could be copied,
 * never a removal).
 */
ssize_t round_hold_removals(struct plan *p, const char *why, const struct logger *log,
			    int64_t now);

#endif
