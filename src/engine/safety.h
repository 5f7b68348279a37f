/*
 * safety: the invariants every plan is held to before anything happens,
 * whatever the policy returned (DESIGN.md invariants 1, 2 and 4):
 * group min/max and the global node cap, no drain/delete of a node with a
 * protected pod or a PDB that forbids it or outside managed groups, and at
 * most max_scale_down_per_round nodes removed per round. Pure: snapshot and
 * plan in, accepted and rejected actions out.
 */
#ifndef LUASCALE_SAFETY_H
#define LUASCALE_SAFETY_H

#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"
#include "model.h"
#include "policy/plan.h"

struct safety_limits {
	int64_t max_nodes_total;          /* 0: no global cap */
	int64_t max_scale_down_per_round; /* nodes drained or deleted per round */
	const struct label_selector *protected_pods; /* NULL: none */
};

struct rejection {
	struct action action; /* owned copy; for a trimmed scale_up, the part refused */
	char *why;
};

struct verdict {
	struct plan accepted;  /* actions to carry out, possibly trimmed */
	struct rejection *rejected;
	size_t n_rejected;
	size_t cap_rejected;
};

void verdict_init(struct verdict *v);
void verdict_free(struct verdict *v);

/*
 * Checks 'in' against 's' and 'lim'. Actions are taken in plan order; each
 * accepted action counts against the limits of the ones after it. A
 * scale_up above a group's max or the global cap is trimmed to what fits
 * and the excess rejected. Notes are copied to the accepted plan.
 * Returns 0 (out filled; free with verdict_free) or -1 on out of memory.
 */
int safety_check(const struct snapshot *s, const struct safety_limits *lim,
		 const struct plan *in, struct verdict *out, struct errbuf *err);

#endif
