/*
 * safety: holds a plan to the invariants. Tracks, per round, how much each
 * group grows or shrinks, which nodes are being removed and how many
 * disruptions those removals cause under each PDB; the per-node checks
 * (protected pods, safe-to-evict) come from sched.c, the opt-out
 * annotations (do_not_disrupt_annotations) are read here.
 */
#include "engine/safety.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/budget.h"
#include "k8sname.h"
#include "sched.h"

void verdict_init(struct verdict *v)
{
	memset(v, 0, sizeof(*v));
	plan_init(&v->accepted);
}

void verdict_free(struct verdict *v)
{
	size_t i;

	for (i = 0; i < v->n_rejected; i++) {
		action_free(&v->rejected[i].action);
		free(v->rejected[i].why);
	}
	free(v->rejected);
	plan_free(&v->accepted);
	verdict_init(v);
}

static int reject(struct verdict *v, const struct action *a, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int reject(struct verdict *v, const struct action *a, const char *fmt, ...)
{
	struct rejection *r;
	char why[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (v->n_rejected == v->cap_rejected) {
		size_t cap = v->cap_rejected ? v->cap_rejected * 2 : 8;
		struct rejection *n = realloc(v->rejected, cap * sizeof(*n));

		if (!n)
			return -1;
		v->rejected = n;
		v->cap_rejected = cap;
	}
	r = &v->rejected[v->n_rejected];
	if (action_copy(&r->action, a) < 0)
		return -1;
	r->why = strdup(why);
	if (!r->why) {
		action_free(&r->action);
		return -1;
	}
	v->n_rejected++;
	return 0;
}

/* What a removal this round has counted a node against (round.removing). */
#define REMOVAL_EVICTS 1 /* per-round cap and PDBs: drain, delete or NoExecute taint */
#define REMOVAL_SHRINKS 2 /* the group's min: drain or delete */
#define REMOVAL_REPLACED 4 /* a replace: nothing else may touch the node this round */

/* Round state: what accepted actions so far have used up. */
struct round {
	int64_t *grow;          /* per group: nodes added */
	int64_t *shrink;        /* per group: nodes being removed */
	uint8_t *removing;      /* per node: REMOVAL_* flags this round */
	uint8_t *evicting;      /* per node: 1 when a removal this round evicts its pods */
	uint8_t *cordon_state;  /* per node: 0 none, 1 cordon, 2 uncordon */
	int64_t *pdb_used;      /* per PDB: disruptions the round's removals cause */
	int64_t *pdb_node;      /* per PDB: scratch, disruptions of the node being checked */
	int64_t total_grow;
	int64_t removed_nodes;
	uint8_t *disrupted;     /* per node: counted against its group's budgets this round */
	int64_t *disrupting;    /* per group: nodes this plan disrupts */
};

/* Does node 'n' run no pod but DaemonSets', mirror pods and finished or
 * terminating ones? */
static bool node_empty(const struct snapshot *s, size_t n)
{
	const struct node *node = &s->nodes[n];
	size_t i;

	for (i = 0; i < node->n_pods; i++) {
		const struct pod *p = &s->pods[node->pods[i]];

		if (!(p->flags & (POD_DAEMONSET | POD_MIRROR | POD_TERMINATING)) && !pod_finished(p))
			return false;
	}
	return true;
}


/*
 * The disruption budgets of node 'n''s group (lim->budgets), for a
 * cordon, drain, delete or NoExecute taint 'a': a node counts once a
 * round, under the action's disruption reason (else empty or
 * underutilized, by its pods). What a reason allows at s->now, less the
 * group's nodes being drained or deleted and those this plan disrupted
 * already (for any reason, as Karpenter counts them), must leave room.
 * Returns 1 (counted), 0 (rejected), -1 on OOM.
 */
int64_t safety_budget_left(const struct snapshot *s, const struct config *c, size_t group,
			   enum disruption_reason reason)
{
	const struct node_group *g = &s->groups[group];
	const struct disruption_budget *list;
	int64_t allowed;
	size_t nb;

	if (!c)
		return -1;
	list = config_group_budgets(c, g->name, &nb);
	allowed = budget_allowed(list, nb, reason, g->current, s->now);
	if (allowed == BUDGET_UNLIMITED)
		return -1;
	return allowed > g->removing + g->replacing ? allowed - g->removing - g->replacing : 0;
}

static int check_budget(const struct snapshot *s, const struct safety_limits *lim,
			struct round *r, size_t n, const struct action *a, struct verdict *v)
{
	const struct node *node = &s->nodes[n];
	const struct node_group *g = &s->groups[node->group];
	const struct disruption_budget *list;
	enum disruption_reason reason;
	int64_t allowed, busy;
	size_t nb, which;
	char desc[256];

	if (!lim->budgets || r->disrupted[n])
		return 1;
	if (!a->disruption || disruption_reason_parse(a->disruption, &reason) < 0)
		reason = node_empty(s, n) ? DISRUPTION_EMPTY : DISRUPTION_UNDERUTILIZED;
	list = config_group_budgets(lim->budgets, g->name, &nb);
	allowed = budget_allowed_which(list, nb, reason, g->current, s->now, &which);
	busy = (int64_t)g->removing + g->replacing + r->disrupting[node->group];
	if (allowed != BUDGET_UNLIMITED && busy >= allowed) {
		char repl[48] = "";

		if (g->replacing)
			snprintf(repl, sizeof(repl), ", %d being replaced", g->replacing);
		return reject(v, a, "disruption budget of group %s for %s (%s) allows %lld of its %d node%s at once, and %lld %s being disrupted (%d drained or deleted%s, %lld by this plan)",
			      g->name, disruption_reason_name(reason),
			      budget_describe(&list[which], desc, sizeof(desc)), (long long)allowed,
			      g->current, g->current == 1 ? "" : "s", (long long)busy,
			      busy == 1 ? "is" : "are", g->removing, repl,
			      (long long)r->disrupting[node->group]) < 0 ? -1 : 0;
	}
	r->disrupted[n] = 1;
	r->disrupting[node->group]++;
	return 1;
}

/*
 * How many of 'want' new nodes group 'g' takes: its max less its nodes
 * registered or coming and those this plan added, then the global cap.
 * When fewer, 'why' says which limit.
 */
static int64_t group_room(const struct snapshot *s, const struct safety_limits *lim,
			  const struct round *r, size_t g, int64_t want, char *why, size_t why_len)
{
	const struct node_group *grp = &s->groups[g];
	int64_t room, allowed, total;

	room = (int64_t)grp->max - (grp->target > grp->current ? grp->target : grp->current) -
	       r->grow[g];
	if (room < 0)
		room = 0;
	allowed = want < room ? want : room;
	if (allowed < want)
		snprintf(why, why_len, "group %s is at its max of %d (%d registered, %d coming, %lld added this round)",
			 grp->name, grp->max, grp->current,
			 grp->target > grp->current ? grp->target - grp->current : 0,
			 (long long)r->grow[g]);
	if (lim->max_nodes_total > 0) {
		size_t i;

		total = (int64_t)s->n_nodes + r->total_grow;
		for (i = 0; i < s->n_groups; i++)
			if (s->groups[i].target > s->groups[i].current)
				total += s->groups[i].target - s->groups[i].current;
		if (total + allowed > lim->max_nodes_total) {
			int64_t cap = lim->max_nodes_total - total;

			allowed = cap < 0 ? 0 : cap;
			snprintf(why, why_len, "max_nodes_total is %lld and the cluster has %lld nodes registered or coming",
				 (long long)lim->max_nodes_total, (long long)total);
		}
	}
	return allowed;
}

/* Are the action's instance types all group 'grp''s? Rejects it when not:
 * 1 yes, 0 rejected, -1 OOM. */
static int check_instance_types(const struct node_group *grp, const struct action *a,
				struct verdict *v)
{
	for (size_t t = 0; t < a->n_instance_types; t++) {
		size_t k;

		for (k = 0; k < grp->n_types &&
			    (!grp->types[k].instance_type || strcmp(grp->types[k].instance_type, a->instance_types[t])); k++)
			;
		if (k == grp->n_types)
			return reject(v, a, grp->n_types ? "instance type %s is not one of group %s's instance types"
							 : "instance type %s named, but group %s launches one type only: name none",
				      a->instance_types[t], grp->name) < 0 ? -1 : 0;
	}
	return 1;
}

static int check_scale_up(const struct snapshot *s, const struct safety_limits *lim,
			  struct round *r, const struct action *a, struct verdict *v)
{
	int32_t g = snapshot_find_group(s, a->group);
	const struct node_group *grp;
	int64_t allowed;
	struct action part;
	char why[256] = "";
	int ok;

	if (g < 0)
		return reject(v, a, "no node group named \"%s\"", a->group);
	grp = &s->groups[g];
	if ((ok = check_instance_types(grp, a, v)) <= 0)
		return ok;
	if (grp->backoff_until > s->now)
		return reject(v, a, "group %s is backed off for %llds more after a failed launch: %s",
			      grp->name, (long long)(grp->backoff_until - s->now),
			      grp->backoff_reason[0] ? grp->backoff_reason : "no reason recorded");
	allowed = group_room(s, lim, r, (size_t)g, a->count, why, sizeof(why));
	if (allowed < a->count) {
		part = *a;
		part.count = a->count - allowed;
		if (reject(v, &part, "%s", why) < 0)
			return -1;
	}
	if (allowed > 0) {
		part = *a;
		part.count = allowed;
		if (plan_add(&v->accepted, &part) < 0)
			return -1;
		r->grow[g] += allowed;
		r->total_grow += allowed;
	}
	return 0;
}

/*
 * The group whose label selector uses 'key', or NULL. A label there moves
 * a node between groups (or out of every group, orphaning its instance);
 * annotations and taints of that key are refused too, so no action of a
 * plan ever writes a key the engine reads group membership from.
 */
static const struct node_group *selector_owner(const struct snapshot *s, const char *key)
{
	size_t g, i;

	for (g = 0; g < s->n_groups; g++)
		for (i = 0; i < s->groups[g].selector.n; i++)
			if (strcmp(s->groups[g].selector.items[i].key, key) == 0)
				return &s->groups[g];
	return NULL;
}

/* "1h30m", "30m", "45s": a positive number of seconds, for a message. */
static void fmt_left(int64_t secs, char *out, size_t len)
{
	int64_t h = secs / 3600, m = secs % 3600 / 60, sec = secs % 60;
	int n = 0;

	out[0] = '\0';
	if (h && n >= 0 && (size_t)n < len)
		n += snprintf(out + n, len - (size_t)n, "%lldh", (long long)h);
	if (m && n >= 0 && (size_t)n < len)
		n += snprintf(out + n, len - (size_t)n, "%lldm", (long long)m);
	if ((sec || !(h || m)) && n >= 0 && (size_t)n < len)
		snprintf(out + n, len - (size_t)n, "%llds", (long long)sec);
}

/*
 * Whether pod 'p''s value 'v' of opt-out 'o' holds at 'now': the value
 * configured, or, where "true" is, a duration the pod has not lived yet
 * (then 'left' says for how long; else it is ""). A pod without a
 * creation time is held for the whole duration.
 */
static bool pod_optout_holds(const struct config_optout *o, const struct pod *p, const char *v,
			     int64_t now, char *left, size_t left_len)
{
	int64_t ms, rest;

	left[0] = '\0';
	if (strcmp(v, o->value) == 0)
		return true;
	if (strcmp(o->value, "true") != 0 || config_parse_duration(v, &ms) < 0)
		return false;
	if (ms > INT64_MAX / 2)
		return true; /* longer than any clock runs: held */
	rest = (ms + 999) / 1000; /* seconds, as times are */
	if (p->created > 0)
		rest += p->created - now;
	if (rest <= 0)
		return false;
	fmt_left(rest, left, left_len);
	return true;
}

bool safety_node_opted_out(const struct snapshot *s, const struct safety_limits *lim, size_t n,
			   char *why, size_t why_len)
{
	const struct node *node = &s->nodes[n];
	char left[48];
	size_t i, k;

	for (k = 0; k < lim->n_optouts; k++) {
		const struct config_optout *o = &lim->optouts[k];
		const char *v;

		if (o->pod)
			continue;
		v = kvlist_get(&node->annotations, o->key);
		if (v && strcmp(v, o->value) == 0) {
			snprintf(why, why_len, "node %s has the annotation %s: \"%s\" (safety.do_not_disrupt_annotations)",
				 node->name, o->key, v);
			return true;
		}
	}
	for (i = 0; i < node->n_pods; i++) {
		const struct pod *p = &s->pods[node->pods[i]];

		if (pod_finished(p) || (p->flags & POD_TERMINATING))
			continue;
		for (k = 0; k < lim->n_optouts; k++) {
			const struct config_optout *o = &lim->optouts[k];
			const char *v;

			if (!o->pod || !(v = kvlist_get(&p->annotations, o->key)) ||
			    !pod_optout_holds(o, p, v, s->now, left, sizeof(left)))
				continue;
			snprintf(why, why_len, "pod %s/%s on node %s has the annotation %s: \"%s\"%s%s%s (safety.do_not_disrupt_annotations)",
				 p->ns ? p->ns : "", p->name ? p->name : "", node->name, o->key, v,
				 left[0] ? " (" : "", left, left[0] ? " more)" : "");
			return true;
		}
	}
	return false;
}

/* Is 'a' the answer to an interruption notice (disruption "interrupted")? */
static bool interrupted(const struct action *a)
{
	return a->disruption && strcmp(a->disruption, "interrupted") == 0;
}

/*
 * Would every pod that removing node 'n' evicts land somewhere, together
 * with the pods of the round's earlier evicting removals, on the nodes
 * that stay (Ready, schedulable, not removed), under every scheduling
 * rule sched_drainable() knows (resources, selectors, affinity, taints,
 * pod relations, host ports, volumes)? The rules of 'o' that block a
 * drain outright were checked before; 'why' says which pod has no room.
 */
static bool evicted_pods_fit(const struct snapshot *s, struct round *r, size_t n,
			     const struct drain_opts *o, char *why, size_t why_len)
{
	struct drain_opts all = *o;
	bool ok;

	r->evicting[n] = 1;
	all.excluded = r->evicting;
	all.move_excluded = true;
	ok = sched_drainable(s, n, &all, why, why_len);
	r->evicting[n] = 0;
	return ok;
}

/*
 * A drain, delete or NoExecute taint of node 'n': opt-out annotations, protected pods,
 * safe-to-evict, then the PDBs over all of the round's removals together,
 * the per-round cap and (drain and delete) the group's min. Returns 1 when
 * the action may go ahead (and counts it), 0 when rejected, -1 on OOM.
 */
static int check_removal(const struct snapshot *s, const struct safety_limits *lim,
			 struct round *r, size_t n, const struct action *a,
			 struct verdict *v)
{
	const struct node *node = &s->nodes[n];
	const struct node_group *g = &s->groups[node->group];
	bool evicts = !(r->removing[n] & REMOVAL_EVICTS);
	/* a replace within the node's own group leaves its size as it is */
	bool shrinks = a->type != ACTION_TAINT &&
		       !(a->type == ACTION_REPLACE && !strcmp(a->group, g->name)) &&
		       !(r->removing[n] & REMOVAL_SHRINKS);
	const char *what = a->type == ACTION_TAINT ? "a NoExecute taint would evict pods: " : "";
	struct drain_opts o;
	char why[512];
	size_t i, j;

	/* the opt-outs keep a node from voluntary disruption; the cloud
	 * takes an interrupted one anyway (as Karpenter reads them) */
	if (!interrupted(a) && safety_node_opted_out(s, lim, n, why, sizeof(why)))
		return reject(v, a, "%s%s", what, why) < 0 ? -1 : 0;
	drain_opts_default(&o);
	o.protected_pods = lim->protected_pods;
	o.local_storage_blocks = false;
	o.unreplicated_blocks = false;
	if (!sched_node_blockers(s, n, &o, why, sizeof(why)))
		return reject(v, a, "%s%s", what, why) < 0 ? -1 : 0;
	if (evicts) {
		/* a NoExecute taint evicts without asking PDBs, and drains of
		 * several nodes each see the PDB's allowance as it is now: count
		 * the disruptions of every removal this round against it */
		for (j = 0; j < s->n_pdbs; j++) {
			const struct pdb *b = &s->pdbs[j];
			const struct pod *first = NULL;

			r->pdb_node[j] = 0;
			for (i = 0; i < node->n_pods; i++) {
				const struct pod *p = &s->pods[node->pods[i]];

				if (!sched_pod_evictable(p) || !pdb_matches(b, p))
					continue;
				if (!first)
					first = p;
				r->pdb_node[j]++;
			}
			if (r->pdb_node[j] && r->pdb_used[j] + r->pdb_node[j] > b->disruptions_allowed)
				return reject(v, a, "%spod %s/%s: PodDisruptionBudget %s/%s allows %d disruption%s, and this round's removals would cause %lld (%lld by earlier removals in this plan)",
					      what, first->ns ? first->ns : "", first->name ? first->name : "",
					      b->ns ? b->ns : "", b->name ? b->name : "",
					      (int)b->disruptions_allowed,
					      b->disruptions_allowed == 1 ? "" : "s",
					      (long long)(r->pdb_used[j] + r->pdb_node[j]),
					      (long long)r->pdb_used[j]) < 0 ? -1 : 0;
		}
		/* the cloud takes an interrupted node whatever the cap: its
		 * drain is not held back (it still counts against the others) */
		if (!interrupted(a) && r->removed_nodes >= lim->max_scale_down_per_round)
			return reject(v, a, "max_scale_down_per_round (%lld) reached: %lld node(s) already being removed this round (drains, deletes and NoExecute taints count)",
				      (long long)lim->max_scale_down_per_round,
				      (long long)r->removed_nodes) < 0 ? -1 : 0;
		/* a replace's pods have its new node to go to, which the
		 * nodes that stay do not show yet; an interrupted node's
		 * pods die with it at the deadline wherever they may go */
		if (lim->evicted_pods_must_fit && a->type != ACTION_REPLACE && !interrupted(a) &&
		    !evicted_pods_fit(s, r, n, &o, why, sizeof(why)))
			return reject(v, a, "%sits pods would not all find room on the nodes that stay (with the pods of this plan's earlier removals): %s (safety.evicted_pods_must_fit)",
				      what, why) < 0 ? -1 : 0;
	}
	if (shrinks) {
		int64_t size = (int64_t)(g->target > g->current ? g->target : g->current) +
			       r->grow[node->group] - r->shrink[node->group] - g->removing;

		if (size - 1 < g->min)
			return reject(v, a, "group %s would go below its min of %d (size %lld)",
				      g->name, g->min, (long long)size) < 0 ? -1 : 0;
	}
	{
		int ok = check_budget(s, lim, r, n, a, v);

		if (ok <= 0)
			return ok;
	}
	if (evicts) {
		for (j = 0; j < s->n_pdbs; j++)
			r->pdb_used[j] += r->pdb_node[j];
		r->removed_nodes++;
		r->removing[n] |= REMOVAL_EVICTS;
		r->evicting[n] = 1;
	}
	if (shrinks) {
		r->shrink[node->group]++;
		r->removing[n] |= REMOVAL_SHRINKS;
	}
	return 1;
}

static int check_node_action(const struct snapshot *s, const struct safety_limits *lim,
			     struct round *r, const struct action *a, struct verdict *v)
{
	int32_t n = snapshot_find_node(s, a->node);
	const struct node *node;
	const struct node_group *owner;
	char why[512];
	int ok;

	if (n < 0)
		return reject(v, a, "no node named \"%s\" in the cluster", a->node);
	node = &s->nodes[n];
	if (node->group < 0)
		return reject(v, a, "node %s is not in a managed node group", a->node);
	/* "interrupted" waives budgets and opt-outs: only for a node the
	 * cloud is taking, never on a policy's word alone */
	if (interrupted(a) && !node->interruption_kind)
		return reject(v, a, "disruption \"interrupted\" on node %s, which has no interruption notice (node.interruption is nil): budgets and opt-outs are waived only for a node its cloud is taking",
			      a->node);
	if (node->removing)
		return reject(v, a, "node %s is already being drained or deleted", a->node);
	if (node->replacing && a->type != ACTION_LABEL && a->type != ACTION_ANNOTATE &&
	    !(a->type == ACTION_TAINT && !action_evicts(a)))
		return reject(v, a, "node %s is being replaced: its new node is on its way, and it is removed once that one is Ready",
			      a->node);
	if ((r->removing[n] & REMOVAL_REPLACED) && a->type != ACTION_LABEL &&
	    a->type != ACTION_ANNOTATE && !(a->type == ACTION_TAINT && !action_evicts(a)))
		return reject(v, a, "node %s is replaced by an earlier action of this plan: it stays as it is until its new node is Ready",
			      a->node);

	switch (a->type) {
	case ACTION_CORDON:
	case ACTION_UNCORDON: {
		uint8_t want = a->type == ACTION_CORDON ? 1 : 2;

		if (r->cordon_state[n] && r->cordon_state[n] != want)
			return reject(v, a, "conflicts with an earlier %s of %s in this plan",
				      want == 1 ? "uncordon" : "cordon", a->node);
		if (r->cordon_state[n] == want)
			return reject(v, a, "duplicate %s of %s in this plan",
				      action_type_str(a->type), a->node);
		if (a->type == ACTION_UNCORDON && r->removing[n])
			return reject(v, a, "node %s is being removed in this plan", a->node);
		/* a cordon is the first step of a removal */
		if (a->type == ACTION_CORDON && !interrupted(a) &&
		    safety_node_opted_out(s, lim, (size_t)n, why, sizeof(why)))
			return reject(v, a, "%s", why);
		if (a->type == ACTION_CORDON && !node->unschedulable &&
		    (ok = check_budget(s, lim, r, (size_t)n, a, v)) <= 0)
			return ok;
		r->cordon_state[n] = want;
		break;
	}
	case ACTION_LABEL:
	case ACTION_ANNOTATE:
	case ACTION_TAINT:
		if (!k8sname_valid_qualified_name(a->key, why, sizeof(why)))
			return reject(v, a, "invalid key \"%s\": %s", a->key, why);
		owner = selector_owner(s, a->key);
		if (owner)
			return reject(v, a, "%s %s key %s: node group %s selects its nodes by that label key; no plan may set or remove it as a label, annotation or taint",
				      action_type_str(a->type), a->remove ? "removes" : "sets",
				      a->key, owner->name);
		if (a->type == ACTION_LABEL && a->value && !k8sname_valid_label_value(a->value))
			return reject(v, a, "invalid label value \"%s\": at most 63 characters, alphanumeric at both ends, '-', '_' or '.' inside",
				      a->value);
		if (a->type == ACTION_TAINT && a->value && !k8sname_valid_label_value(a->value))
			return reject(v, a, "invalid taint value \"%s\"", a->value);
		if (a->type == ACTION_ANNOTATE && a->value && strlen(a->value) > PLAN_MAX_ANNOTATION)
			return reject(v, a, "annotation value is larger than 64 KiB");
		if (action_evicts(a)) {
			/* taint-based eviction does not go through the Eviction
			 * API: a NoExecute taint is a removal */
			ok = check_removal(s, lim, r, (size_t)n, a, v);
			if (ok <= 0)
				return ok;
		}
		break;
	case ACTION_DRAIN:
	case ACTION_DELETE:
		if (r->cordon_state[n] == 2)
			return reject(v, a, "node %s is uncordoned in this plan", a->node);
		if (a->type == ACTION_DRAIN) {
			/* drain then delete of one node is one removal; a second drain is a duplicate */
			size_t i;

			for (i = 0; i < v->accepted.n_actions; i++)
				if (v->accepted.actions[i].type == ACTION_DRAIN &&
				    strcmp(v->accepted.actions[i].node, a->node) == 0)
					return reject(v, a, "duplicate drain of %s in this plan", a->node);
		}
		ok = check_removal(s, lim, r, (size_t)n, a, v);
		if (ok <= 0)
			return ok;
		break;
	case ACTION_REPLACE: {
		int32_t g = snapshot_find_group(s, a->group);

		if (g < 0)
			return reject(v, a, "no node group named \"%s\"", a->group);
		if (r->cordon_state[n])
			return reject(v, a, "node %s is %s in this plan; a replace leaves it as it is until its new node is Ready",
				      a->node, r->cordon_state[n] == 1 ? "cordoned" : "uncordoned");
		if (r->removing[n])
			return reject(v, a, "node %s is removed by an earlier action of this plan", a->node);
		if ((ok = check_instance_types(&s->groups[g], a, v)) <= 0)
			return ok;
		if (s->groups[g].backoff_until > s->now)
			return reject(v, a, "group %s is backed off for %llds more after a failed launch: %s",
				      s->groups[g].name, (long long)(s->groups[g].backoff_until - s->now),
				      s->groups[g].backoff_reason[0] ? s->groups[g].backoff_reason
								      : "no reason recorded");
		if (group_room(s, lim, r, (size_t)g, 1, why, sizeof(why)) < 1)
			return reject(v, a, "its new node does not fit: %s", why);
		ok = check_removal(s, lim, r, (size_t)n, a, v);
		if (ok <= 0)
			return ok;
		r->grow[g]++;
		r->total_grow++;
		r->removing[n] |= REMOVAL_REPLACED;
		break;
	}
	case ACTION_SCALE_UP:
		break;
	}
	if (plan_add(&v->accepted, a) < 0)
		return -1;
	/* a disruption says its reason downstream (the actuator, the
	 * metrics): the policy's, else what the node's pods make it; and
	 * the budget that held it (the Events) */
	if (a->type == ACTION_CORDON || a->type == ACTION_DRAIN || a->type == ACTION_DELETE ||
	    action_evicts(a)) {
		struct action *got = &v->accepted.actions[v->accepted.n_actions - 1];
		enum disruption_reason reason;

		if (!a->disruption) {
			got->disruption = strdup(node_empty(s, (size_t)n) ? "empty" : "underutilized");
			if (!got->disruption)
				return -1;
		}
		free(got->budget);
		got->budget = NULL;
		if (lim->budgets && disruption_reason_parse(got->disruption, &reason) == 0) {
			const struct node_group *g = &s->groups[node->group];
			const struct disruption_budget *list;
			char desc[200], text[320];
			int64_t allowed;
			size_t nb, which;

			list = config_group_budgets(lim->budgets, g->name, &nb);
			allowed = budget_allowed_which(list, nb, reason, g->current, s->now, &which);
			if (allowed != BUDGET_UNLIMITED) {
				snprintf(text, sizeof(text), "%s: %lld of %d node%s at once",
					 budget_describe(&list[which], desc, sizeof(desc)),
					 (long long)allowed, g->current, g->current == 1 ? "" : "s");
				if (!(got->budget = strdup(text)))
					return -1;
			}
		}
	}
	return 0;
}

int safety_plan_size(const struct plan *p, const struct safety_limits *lim,
		     struct errbuf *err)
{
	if (lim->max_actions_per_round > 0 &&
	    (int64_t)p->n_actions > lim->max_actions_per_round)
		return errbuf_set(err, "the plan has %zu actions, more than safety.max_actions_per_round (%lld); the whole plan is refused",
				  p->n_actions, (long long)lim->max_actions_per_round);
	return 0;
}

int safety_check(const struct snapshot *s, const struct safety_limits *lim,
		 const struct plan *in, struct verdict *out, struct errbuf *err)
{
	struct round r;
	size_t i;
	int rc = -1;

	verdict_init(out);
	memset(&r, 0, sizeof(r));
	r.grow = calloc(s->n_groups + 1, sizeof(*r.grow));
	r.shrink = calloc(s->n_groups + 1, sizeof(*r.shrink));
	r.removing = calloc(s->n_nodes + 1, 1);
	r.evicting = calloc(s->n_nodes + 1, 1);
	r.cordon_state = calloc(s->n_nodes + 1, 1);
	r.pdb_used = calloc(s->n_pdbs + 1, sizeof(*r.pdb_used));
	r.pdb_node = calloc(s->n_pdbs + 1, sizeof(*r.pdb_node));
	r.disrupted = calloc(s->n_nodes + 1, 1);
	r.disrupting = calloc(s->n_groups + 1, sizeof(*r.disrupting));
	if (!r.grow || !r.shrink || !r.removing || !r.evicting || !r.cordon_state || !r.pdb_used ||
	    !r.pdb_node || !r.disrupted || !r.disrupting)
		goto oom;
	for (i = 0; i < in->n_actions; i++) {
		const struct action *a = &in->actions[i];
		int ok = a->type == ACTION_SCALE_UP ? check_scale_up(s, lim, &r, a, out)
						    : check_node_action(s, lim, &r, a, out);

		if (ok < 0)
			goto oom;
	}
	for (i = 0; i < in->n_notes; i++)
		if (plan_note(&out->accepted, in->notes[i].node, in->notes[i].candidate,
			      in->notes[i].why) < 0)
			goto oom;
	for (i = 0; i < in->n_messages; i++)
		if (plan_message(&out->accepted, in->messages[i]) < 0)
			goto oom;
	plan_sort_notes(&out->accepted);
	rc = 0;
	goto out;
oom:
	errbuf_set(err, "out of memory while checking the plan");
	verdict_free(out);
out:
	free(r.grow);
	free(r.shrink);
	free(r.removing);
	free(r.evicting);
	free(r.cordon_state);
	free(r.pdb_used);
	free(r.pdb_node);
	free(r.disrupted);
	free(r.disrupting);
	return rc;
}
