/*
 * podevents: one pending pod at a time, each group's template tried with
 * sched_fits_group() (a new node: labels, taints, room less its DaemonSets,
 * the pod's relations to others, its volumes); the accepted scale-ups decide between the two
 * Events, the fit results and the groups' state make the message.
 */
#include "engine/podevents.h"

#include <stdio.h>
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
	size_t i, told = 0;

	for (i = 0; i < s->n_pending && (!max_pods || told < max_pods); i++) {
		const struct pod *p = &s->pods[s->pending[i]];

		if (!(p->flags & POD_UNSCHEDULABLE))
			continue;
		explain_one(s, accepted, p, fn, ctx);
		told++;
	}
	return told;
}
