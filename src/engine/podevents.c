/*
 * podevents: one pending pod at a time, each group's template tried with
 * sched_fits_group() (a new node: labels, taints, room less its DaemonSets,
 * the pod's relations to others, its volumes); the accepted scale-ups decide between the two
 * Events, the fit results and the groups' state make the message.
 */
#include "engine/podevents.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "sched.h"

#define MESSAGE_MAX 1024

/* The index of group 'name' in 's', or -1. */
static int group_index(const struct snapshot *s, const char *name)
{
	size_t i;

	for (i = 0; name && i < s->n_groups; i++)
		if (strcmp(s->groups[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* The resource a fit failure names ("nvidia.com/gpu" from "insufficient
 * nvidia.com/gpu: needs 1, free 0"), into 'out'; "" when none. */
static void resource_of(enum sched_fit f, const char *detail, char *out, size_t len)
{
	const char *p = detail, *colon;

	out[0] = '\0';
	switch (f) {
	case SCHED_NO_CPU: snprintf(out, len, "cpu"); return;
	case SCHED_NO_MEMORY: snprintf(out, len, "memory"); return;
	case SCHED_NO_EPHEMERAL: snprintf(out, len, "ephemeral-storage"); return;
	case SCHED_NO_PODS: snprintf(out, len, "pods"); return;
	case SCHED_NO_EXTENDED: break;
	default: return;
	}
	if (strncmp(p, "insufficient ", 13) != 0)
		return;
	p += 13;
	colon = strchr(p, ':');
	if (colon)
		snprintf(out, len, "%.*s", (int)(colon - p), p);
}

/* Why group 'g', whose template fits the pod, did not grow for it. */
static void held_back(const struct snapshot *s, const struct node_group *g, struct buf *m)
{
	if (g->backoff_until > s->now) {
		char ts[32];

		model_format_time(g->backoff_until, ts, sizeof(ts));
		buf_printf(m, "%s: backed off until %s (%s)", g->name, ts,
			   g->backoff_reason[0] ? g->backoff_reason : "a launch failed");
	} else if (g->target >= g->max) {
		buf_printf(m, "%s: at its max size (%d)", g->name, g->max);
	} else {
		buf_printf(m, "%s: fits, but the policy planned no scale-up for it", g->name);
	}
}

/* Where the unschedulable pods wait for capacity already on its way: per
 * pod, the group whose upcoming nodes the packing puts it on (-1: none)
 * and the starting node it lands on (-1: an instance not yet a node), or
 * the existing node that takes it once those count (-1: none; a spread
 * whose least count they raise). */
struct waiting {
	int32_t *group;
	int32_t *node;
	int32_t *existing;
};

/* As the policies' luascale.packing.on_the_way(): every group's nodes on
 * their way in one packing (at most 64 groups), existing nodes taking
 * what those let them. */
static int on_the_way(const struct snapshot *s, const uint32_t *pods, size_t n,
		      struct waiting *w)
{
	uint32_t gl[64];
	int max_new[64], first[64], total;
	size_t gi, k, ng = 0;
	struct sched_cache *cache;
	struct pack_result r;
	struct errbuf err;
	int rc;

	w->group = malloc((n ? n : 1) * sizeof(*w->group));
	w->node = malloc((n ? n : 1) * sizeof(*w->node));
	w->existing = malloc((n ? n : 1) * sizeof(*w->existing));
	if (!w->group || !w->node || !w->existing)
		return -1;
	for (k = 0; k < n; k++)
		w->group[k] = w->node[k] = w->existing[k] = -1;
	/* the upcoming bins come group after group, each group's target -
	 * current of them: a bin's place in its group is b - first[gi] */
	for (gi = 0, total = 0; gi < s->n_groups && ng < 64; gi++)
		if (s->groups[gi].target > s->groups[gi].current) {
			first[ng] = total;
			total += s->groups[gi].target - s->groups[gi].current;
			max_new[ng] = 0;
			gl[ng++] = (uint32_t)gi;
		}
	if (!n || !ng)
		return 0;
	if (!(cache = sched_cache_new(s)))
		return -1;
	rc = sched_pack_together(cache, pods, n, gl, ng, max_new, true, NULL, 0, true, &r, &err);
	sched_cache_free(cache);
	if (rc < 0)
		return -1;
	for (k = 0; k < n; k++) {
		int32_t b = r.placement[k];

		if (r.on_node && r.on_node[k] >= 0)
			w->existing[k] = r.on_node[k];
		if (b < 0 || b >= r.upcoming || (size_t)b >= r.n_bins)
			continue;
		w->group[k] = r.bin_group[b];
		for (gi = 0; gi < ng && gl[gi] != (uint32_t)r.bin_group[b]; gi++)
			;
		if (gi < ng)
			w->node[k] = sched_upcoming_node(s, (size_t)r.bin_group[b], b - first[gi]);
	}
	pack_result_free(&r);
	return 0;
}

/* Whether an accepted scale-up is for a group whose template fits 'p'. */
static bool triggered(const struct snapshot *s, const struct plan *accepted, const struct pod *p)
{
	size_t i;

	for (i = 0; accepted && i < accepted->n_actions; i++) {
		const struct action *a = &accepted->actions[i];
		int g = a->type == ACTION_SCALE_UP ? group_index(s, a->group) : -1;

		if (g >= 0 && sched_fits_template(p, &s->groups[g], NULL, 0) == SCHED_FITS)
			return true;
	}
	return false;
}

/* A pod that waits for a node on its way: no NotTriggerScaleUp, the node
 * (or the group's instances) it waits for; or the existing node that
 * takes it once those nodes count. */
static void explain_waiting(const struct snapshot *s, const struct pod *p, int32_t g,
			    int32_t node, int32_t existing, podevents_fn fn, void *ctx)
{
	struct buf m = BUF_INIT;
	const struct node_group *grp = g >= 0 ? &s->groups[g] : NULL;

	if (!grp)
		buf_printf(&m, "pod waits for the nodes on their way: once they count, node %s takes it "
			   "(its topology spread or pod affinity refuses it there until then)",
			   s->nodes[existing].name);
	else if (node >= 0)
		buf_printf(&m, "pod waits for node %s of group %s, starting (not Ready yet)",
			   s->nodes[node].name, grp->name);
	else
		buf_printf(&m, "pod waits for a node on its way: group %s has %d launched and not "
			   "registered yet (%d starting; %d->%d)", grp->name,
			   grp->target - grp->current - grp->starting, grp->starting, grp->current,
			   grp->target);
	if (!m.oom && m.data)
		fn(ctx, p, "Normal", PODEVENT_WAITING, m.data);
	buf_free(&m);
}

static void explain_one(const struct snapshot *s, const struct plan *accepted,
			const struct pod *p, podevents_fn fn, void *ctx)
{
	struct buf m = BUF_INIT, why = BUF_INIT;
	char detail[256], res[128], common[128] = "";
	size_t i, n_fit = 0, n_up = 0;
	bool same = true;

	/* the accepted scale-ups whose new nodes it fits */
	for (i = 0; accepted && i < accepted->n_actions; i++) {
		const struct action *a = &accepted->actions[i];
		int g = a->type == ACTION_SCALE_UP ? group_index(s, a->group) : -1;

		if (g < 0 || sched_fits_template(p, &s->groups[g], NULL, 0) != SCHED_FITS)
			continue;
		buf_puts(&m, n_up++ ? ", " : "pod triggered scale-up: ");
		buf_printf(&m, "%s %d->%lld (max: %d)", s->groups[g].name, s->groups[g].target,
			   (long long)(s->groups[g].target + a->count), s->groups[g].max);
	}
	if (n_up) {
		if (!m.oom)
			fn(ctx, p, "Normal", PODEVENT_TRIGGERED, m.data);
		buf_free(&m);
		return;
	}
	/* why not: each group's answer */
	for (i = 0; i < s->n_groups; i++) {
		const struct node_group *g = &s->groups[i];
		enum sched_fit f;

		detail[0] = '\0';
		f = sched_fits_group(s, p, i, detail, sizeof(detail));
		if (f == SCHED_FITS) {
			if (n_fit++)
				buf_puts(&why, "; ");
			held_back(s, g, &why);
			continue;
		}
		resource_of(f, detail, res, sizeof(res));
		if (i == 0)
			snprintf(common, sizeof(common), "%s", res);
		else if (strcmp(common, res) != 0)
			same = false;
	}
	if (n_fit) {
		buf_puts(&m, "pod didn't trigger scale-up: ");
		buf_append(&m, why.data ? why.data : "", why.len);
	} else {
		buf_puts(&m, "fits no group");
		if (!s->n_groups)
			buf_puts(&m, ": no node groups are configured");
		else if (same && common[0])
			buf_printf(&m, ": needs %s", common);
		buf_puts(&m, s->n_groups ? " (" : "");
		for (i = 0; i < s->n_groups; i++) {
			detail[0] = '\0';
			sched_fits_group(s, p, i, detail, sizeof(detail));
			buf_printf(&m, "%s%s: %s", i ? "; " : "", s->groups[i].name,
				   detail[0] ? detail : "does not fit");
		}
		buf_puts(&m, s->n_groups ? ")" : "");
	}
	if (!m.oom && m.data) {
		if (m.len > MESSAGE_MAX)
			m.data[MESSAGE_MAX] = '\0'; /* the recorder cuts on a character */
		fn(ctx, p, "Normal", PODEVENT_NOT_TRIGGERED, m.data);
	}
	buf_free(&m);
	buf_free(&why);
}

size_t podevents_explain(const struct snapshot *s, const struct plan *accepted, size_t max_pods,
			 podevents_fn fn, void *ctx)
{
	size_t i, n = 0, told = 0;
	uint32_t *pods = malloc((s->n_pending ? s->n_pending : 1) * sizeof(*pods));
	struct waiting w = {NULL, NULL, NULL};
	bool known;

	for (i = 0; pods && i < s->n_pending; i++)
		if (s->pods[s->pending[i]].flags & POD_UNSCHEDULABLE)
			pods[n++] = s->pending[i];
	/* capacity on its way takes the pods it fits first, as the policy's
	 * packing does: those pods wait for it and are told so */
	known = pods && n && on_the_way(s, pods, n, &w) == 0;
	for (i = 0; pods && i < n && (!max_pods || told < max_pods); i++) {
		const struct pod *p = &s->pods[pods[i]];

		/* a scale-up made for it this round says more than the wait */
		if (known && (w.group[i] >= 0 || w.existing[i] >= 0) && !triggered(s, accepted, p))
			explain_waiting(s, p, w.group[i], w.node[i], w.existing[i], fn, ctx);
		else
			explain_one(s, accepted, p, fn, ctx);
		told++;
	}
	free(w.group);
	free(w.node);
	free(w.existing);
	free(pods);
	return told;
}
