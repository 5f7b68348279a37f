/*
 * explain: why each node stays. Now and then (intervals.explain) a round
 * explains every node (round_opts.explain: the policy's per-node notes
 * read, engine_decide's node reports); this keeps what came of the last
 * such pass — per node its state, the reason, and since when it has had
 * that same state and reason — for /debug/nodes (every node, JSON) and the
 * status ConfigMap (a bounded summary). It decides nothing and runs no
 * policy; no I/O. One thread records, any thread reads.
 */
#ifndef LUASCALE_EXPLAIN_H
#define LUASCALE_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "engine/round.h"
#include "model.h"

/* What luascale does with a node, as of the last pass. */
enum explain_state {
	EXPLAIN_KEPT = 0,   /* stays: the reason says why */
	EXPLAIN_CANDIDATE,  /* the policy would remove it and the safety checks let it, but no
			     * removal was started (a per-round limit, a stale cache) */
	EXPLAIN_REMOVING,   /* a removal was accepted this pass, or a drain or delete runs */
	EXPLAIN_STATES
};

/* A reason is kept up to this many bytes (a longer one is cut at a
 * character boundary to end in "..." within them). */
#define EXPLAIN_REASON_MAX 512
/* The summary's reasons: how many, and how long each. */
#define EXPLAIN_TOP 10
#define EXPLAIN_SUMMARY_REASON 200

/* "kept", "candidate", "removing". */
const char *explain_state_str(enum explain_state s);

/*
 * The status ConfigMap's part: counts by state and the most common
 * reasons. Reasons are grouped with their numbers shown as "#"
 * ("utilization # is not below #"), so that nodes held for the same cause
 * count together; each names one node as an example. Fixed size.
 */
struct explain_summary {
	int64_t interval_ms;        /* intervals.explain; 0: explanations are off */
	int64_t built_at;           /* unix seconds of the last pass; 0: none yet */
	size_t nodes;               /* nodes explained */
	size_t by_state[EXPLAIN_STATES];
	struct explain_reason {
		enum explain_state state;
		size_t count;
		char reason[EXPLAIN_SUMMARY_REASON + 1]; /* numbers as "#", cut */
		char example[254];                       /* one node with it */
	} top[EXPLAIN_TOP];         /* the most common first */
	size_t n_top;
	size_t more_reasons;        /* grouped reasons beyond the top ones */
};

struct explainer;

/* An explainer that explains every 'interval_ns' (0: never). NULL when
 * out of memory. */
struct explainer *explainer_new(int64_t interval_ns);

/* Frees it. NULL is a no-op. */
void explainer_free(struct explainer *e);

/* Changes the interval (a config reload); the next pass is due
 * 'interval_ns' after the last one. Any thread. */
void explainer_set_interval(struct explainer *e, int64_t interval_ns);

/*
 * Whether the round at monotonic time 'now_ns' (the injected clock's)
 * should explain every node: explanations are on and no pass was tried in
 * the last interval (the first round always is). Any thread.
 */
bool explainer_due(struct explainer *e, int64_t now_ns);

/*
 * Takes in the pass of a round that explained (v->nodes set; a round
 * without is ignored and 0 returned) on snapshot 's' at monotonic
 * 'now_ns'. A node's state comes from the accepted plan (a removal of it:
 * removing), the snapshot (a drain or delete in progress: removing), the
 * safety checks (a removal refused: kept, with why) and its report
 * (removable: candidate, else kept, with the policy's note or what the
 * checks say). 'since' is kept from the last pass when the node's state
 * and reason are the same, else it is s->now. Nodes no longer in the
 * snapshot are forgotten. When the policy failed, the nodes stay as they
 * were and the failure is shown; the next pass is due an interval later
 * either way. Returns 0, or -1 when out of memory (the last pass stays).
 */
int explainer_record(struct explainer *e, const struct snapshot *s, const struct round_view *v,
		     int64_t now_ns);

/*
 * /debug/nodes: appends the last pass as JSON to 'body' and returns the
 * HTTP status: 200 with {"time","intervalSeconds","passes","counts",
 * "nodes":[{"name","group","state","reason","since"}]} (and "policyError"
 * when the last try failed), 503 with {"error","intervalSeconds"} before
 * the first pass, 404 with {"error"} when explanations are off. Every
 * string is escaped (buf_json_string). Any thread.
 */
int explainer_json(struct explainer *e, struct buf *body);

/* The summary of the last pass into 'out'. Any thread. */
void explainer_summary(struct explainer *e, struct explain_summary *out);

/* How many passes were taken in (tests). */
uint64_t explainer_passes(struct explainer *e);

#endif
