/*
 * safety: the invariants every plan is held to before anything happens,
 * whatever the policy returned (DESIGN.md invariants 1, 2 and 4):
 * group min/max and the global node cap, no removal (drain, delete or
 * NoExecute taint) of a node with a protected pod or outside managed
 * groups, PDBs held over all of a round's removals together, at most
 * max_scale_down_per_round removals and max_actions_per_round actions per
 * round, no removal or cordon of a node that an opt-out annotation
 * keeps (safety.do_not_disrupt_annotations, on the node or one of its
 * pods), and no plan writing a key a group selects its nodes by. Pure:
 * snapshot and plan in, accepted and rejected actions out.
 */
#ifndef LUASCALE_SAFETY_H
#define LUASCALE_SAFETY_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "engine/budget.h"
#include "errbuf.h"
#include "model.h"
#include "policy/plan.h"

struct safety_limits {
	int64_t max_nodes_total;          /* 0: no global cap */
	int64_t max_scale_down_per_round; /* nodes drained, deleted or NoExecute-tainted per round */
	int64_t max_actions_per_round;    /* 0: no cap; a plan over it is refused whole */
	const struct label_selector *protected_pods; /* NULL: none */
	/* safety.do_not_disrupt_annotations (borrowed); none when 0 */
	const struct config_optout *optouts;
	size_t n_optouts;
	/* safety.evicted_pods_must_fit: a drain, delete or NoExecute taint
	 * is refused when a pod it evicts, with those of the plan's earlier
	 * removals, would find no room on the nodes that stay */
	bool evicted_pods_must_fit;
	/* the config whose disruption budgets (config_group_budgets) hold
	 * every cordon, drain, delete, NoExecute taint and replace, each
	 * node once, under its reason (the action's, else empty or
	 * underutilized); interruptions are never held. A group without
	 * budgets of its own or at the top level has the default, nodes 10 %.
	 * NULL: no budget (borrowed) */
	const struct config *budgets;
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

/*
 * What the disruption budgets of 'c' (the group's own, else the top
 * level's, else the default of 10 %) leave group 'group' of 's' for
 * 'reason' now: the smallest active budget's allowance less the group's
 * nodes being drained, deleted or replaced, never below 0; -1 when no
 * budget limits it (none active, or interrupted).
 */
int64_t safety_budget_left(const struct snapshot *s, const struct config *c, size_t group,
			   enum disruption_reason reason);

void verdict_init(struct verdict *v);
void verdict_free(struct verdict *v);

/*
 * Is the plan within lim->max_actions_per_round? Returns 0, or -1 with
 * 'err' saying how many actions the plan has and the cap. A plan over the
 * cap is refused whole, not cut: which of its actions the policy meant to
 * come first is not known, and half of a plan may break what the whole
 * would have kept (a drain without the scale-up that made room for it).
 */
int safety_plan_size(const struct plan *p, const struct safety_limits *lim,
		     struct errbuf *err);

/*
 * Whether an opt-out annotation of 'lim' keeps node 'n' of 's': the node
 * carries one with its value, or a pod bound to it that has neither
 * finished nor is terminating does. On a pod, a value that is a duration
 * ("90m", "1h30m") where "true" is configured keeps the node until the
 * pod is that old (from its creation), as Karpenter reads it. Returns
 * true with 'why' naming the annotation, its value and the object;
 * false leaves 'why' as it was.
 */
bool safety_node_opted_out(const struct snapshot *s, const struct safety_limits *lim, size_t n,
			   char *why, size_t why_len);

/*
 * Checks 'in' against 's' and 'lim'. Actions are taken in plan order; each
 * accepted action counts against the limits of the ones after it. A
 * scale_up above a group's max or the global cap is trimmed to what fits
 * and the excess rejected. A drain, delete or NoExecute taint is a removal:
 * it counts against max_scale_down_per_round (several of one node count
 * once) and its evictions, added to those of the round's earlier removals,
 * must stay within every PDB's allowance. A removal or a cordon of a node
 * an opt-out annotation keeps (safety_node_opted_out) is refused for that
 * node alone. Notes are copied to the accepted plan.
 * Returns 0 (out filled; free with verdict_free) or -1 on out of memory.
 */
int safety_check(const struct snapshot *s, const struct safety_limits *lim,
		 const struct plan *in, struct verdict *out, struct errbuf *err);

#endif
