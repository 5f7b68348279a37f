/*
 * decide: runs policy + safety on a snapshot and explains every node.
 * Rendering (text, JSON) lives here too so that the CLI and the Lua test
 * module print the same thing.
 */
#include "engine/decide.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "model.h"
#include "quantity.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double fraction(int64_t a, int64_t b)
{
	return b > 0 ? (double)a / (double)b : 0.0;
}

/* The accepted removal of node 'name', if any. */
static const struct action *removal_of(const struct plan *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->n_actions; i++)
		if (action_evicts(&p->actions[i]) && strcmp(p->actions[i].node, name) == 0)
			return &p->actions[i];
	return NULL;
}

static int report_node(const struct snapshot *s, size_t i, const struct decide_opts *o,
		       const struct plan *accepted, struct node_report *r)
{
	const struct node *n = &s->nodes[i];
	const struct node_note *note = plan_find_note(accepted, n->name);
	const struct action *rm = removal_of(accepted, n->name);
	char why[1024], c_why[512] = "";
	struct drain_opts safety_only = *o->drain;

	/* what safety.c holds a removal to: protected pods, PDBs, safe-to-evict */
	safety_only.local_storage_blocks = false;
	safety_only.unreplicated_blocks = false;
	safety_only.kube_system_needs_pdb = false;

	r->name = n->name;
	r->group = n->group >= 0 ? s->groups[n->group].name : NULL;
	r->cpu = fraction(n->requested.cpu_m, n->allocatable.cpu_m);
	r->memory = fraction(n->requested.memory, n->allocatable.memory);
	r->removable = false;
	if (rm) {
		r->removable = true;
		snprintf(why, sizeof(why), "being removed (%s): %s", action_type_str(rm->type),
			 rm->reason);
	} else if (n->group < 0) {
		snprintf(why, sizeof(why), "not in a managed node group");
	} else if (note && !note->candidate) {
		snprintf(why, sizeof(why), "%s", note->why[0] ? note->why : "the policy keeps it");
	} else if (note && safety_node_opted_out(s, o->limits, i, c_why, sizeof(c_why))) {
		snprintf(why, sizeof(why), "%s, but %s", note->why, c_why);
	} else if (note && !sched_node_blockers(s, i, &safety_only, c_why, sizeof(c_why))) {
		/* the policy would remove it: say what the safety checks would refuse */
		snprintf(why, sizeof(why), "%s, but %s", note->why, c_why);
	} else if (!note && !sched_drainable(s, i, o->drain, c_why, sizeof(c_why))) {
		snprintf(why, sizeof(why), "%s", c_why);
	} else if (s->groups[n->group].current <= s->groups[n->group].min) {
		snprintf(why, sizeof(why), "group %s is at its min size of %d",
			 s->groups[n->group].name, s->groups[n->group].min);
	} else if (note) {
		r->removable = true;
		snprintf(why, sizeof(why), "%s", note->why[0] ? note->why : "the policy marks it removable");
	} else {
		snprintf(why, sizeof(why), "its pods could move, but the policy gave no verdict on it");
	}
	r->why = strdup(why);
	return r->why ? 0 : -1;
}

void decide_limits(const struct config *c, struct safety_limits *lim,
		   struct drain_opts *d)
{
	memset(lim, 0, sizeof(*lim));
	lim->max_nodes_total = c->max_nodes_total;
	lim->max_scale_down_per_round = c->max_scale_down_per_round;
	lim->max_actions_per_round = c->max_actions_per_round;
	lim->protected_pods = c->protected_pods.n ? &c->protected_pods : NULL;
	lim->optouts = c->optouts;
	lim->n_optouts = c->n_optouts;
	lim->evicted_pods_must_fit = c->evicted_pods_must_fit;
	lim->budgets = c;
	drain_opts_default(d);
	d->protected_pods = lim->protected_pods;
}

int engine_decide(struct policy *pol, const struct snapshot *s,
		  const struct decide_opts *o, struct decision *out,
		  struct errbuf *err)
{
	struct plan plan;
	struct errbuf perr;
	double t0;
	size_t i;

	memset(out, 0, sizeof(*out));
	verdict_init(&out->verdict);
	policy_set_notes(pol, o->node_reports); /* only the node reports read them */
	if (policy_reconcile(pol, s, o->drain, &plan, &out->stats, &perr) < 0) {
		out->ok = false;
		snprintf(out->error, sizeof(out->error), "%s", perr.msg);
		plan_init(&plan);
	} else if (safety_plan_size(&plan, o->limits, &perr) < 0) {
		out->ok = false;
		errbuf_prefix(&perr, "%s: reconcile returned a malformed plan", policy_path(pol));
		snprintf(out->error, sizeof(out->error), "%s", perr.msg);
		plan_free(&plan);
	} else {
		out->ok = true;
	}
	t0 = now_ms();
	if (safety_check(s, o->limits, &plan, &out->verdict, err) < 0) {
		plan_free(&plan);
		return -1;
	}
	out->safety_ms = now_ms() - t0;
	plan_free(&plan);
	if (!o->node_reports)
		return 0;
	out->nodes = calloc(s->n_nodes ? s->n_nodes : 1, sizeof(*out->nodes));
	if (!out->nodes)
		goto oom;
	for (i = 0; i < s->n_nodes; i++) {
		if (report_node(s, i, o, &out->verdict.accepted, &out->nodes[i]) < 0)
			goto oom;
		out->n_nodes++;
	}
	return 0;
oom:
	errbuf_set(err, "out of memory while explaining nodes");
	decision_free(out);
	return -1;
}

void decision_free(struct decision *d)
{
	size_t i;

	verdict_free(&d->verdict);
	for (i = 0; i < d->n_nodes; i++)
		free(d->nodes[i].why);
	free(d->nodes);
	d->nodes = NULL;
	d->n_nodes = 0;
}

/* Rounds a fraction to 4 decimals for printing. */
static double round4(double x)
{
	return (double)(long long)(x * 10000.0 + (x >= 0 ? 0.5 : -0.5)) / 10000.0;
}

void decision_to_json(const struct decision *d, struct buf *b)
{
	const struct plan *p = &d->verdict.accepted;
	size_t i;

	buf_puts(b, "{\"actions\":[");
	for (i = 0; i < p->n_actions; i++) {
		if (i)
			buf_puts(b, ",");
		action_to_json(&p->actions[i], b);
	}
	buf_puts(b, "],\"rejected\":[");
	for (i = 0; i < d->verdict.n_rejected; i++) {
		if (i)
			buf_puts(b, ",");
		buf_puts(b, "{\"action\":");
		action_to_json(&d->verdict.rejected[i].action, b);
		buf_puts(b, ",\"why\":");
		buf_json_string(b, d->verdict.rejected[i].why);
		buf_puts(b, "}");
	}
	buf_puts(b, "],\"nodes\":[");
	for (i = 0; i < d->n_nodes; i++) {
		const struct node_report *r = &d->nodes[i];

		if (i)
			buf_puts(b, ",");
		buf_puts(b, "{\"name\":");
		buf_json_string(b, r->name);
		buf_puts(b, ",\"group\":");
		if (r->group)
			buf_json_string(b, r->group);
		else
			buf_puts(b, "null");
		buf_printf(b, ",\"utilization\":{\"cpu\":%.4g,\"memory\":%.4g}", round4(r->cpu),
			   round4(r->memory));
		buf_printf(b, ",\"removable\":%s,\"why\":", r->removable ? "true" : "false");
		buf_json_string(b, r->why);
		buf_puts(b, "}");
	}
	buf_puts(b, "],\"log\":[");
	for (i = 0; i < p->n_messages; i++) {
		if (i)
			buf_puts(b, ",");
		buf_json_string(b, p->messages[i]);
	}
	buf_puts(b, "]");
	if (!d->ok) {
		buf_puts(b, ",\"error\":");
		buf_json_string(b, d->error);
	}
	buf_puts(b, "}\n");
}

/*
 * Text for a person's terminal: every string from the state or the policy
 * (a node name, a reason, a policy message) is escaped as the log escapes
 * it (control characters, bytes that are not UTF-8), so none can forge
 * lines or send terminal escapes. put_esc() appends 's' escaped, padded
 * with spaces to 'width' columns ('b' NULL: only measures; 's' NULL: "") and
 * returns the escaped length; esc_width() is the wider of that length
 * (at most 4096) and 'min'.
 */
static size_t put_esc(struct buf *b, const char *s, int width)
{
	char small[1024], *o;
	size_t n, cap, len;

	if (!s)
		s = "";
	n = strlen(s);
	cap = 4 * n + 1;
	o = cap <= sizeof(small) ? small : malloc(cap);
	if (!o) {
		if (b)
			b->oom = 1;
		return 0;
	}
	len = log_escape(s, n, o, cap);
	if (b)
		buf_append(b, o, len);
	if (o != small)
		free(o);
	for (n = len; b && width > 0 && n < (size_t)width; n++)
		buf_append(b, " ", 1);
	return len;
}

static int esc_width(const char *s, int min)
{
	size_t n = put_esc(NULL, s, 0);

	return n > (size_t)min ? (int)(n > 4096 ? 4096 : n) : min;
}

void decision_to_text(const struct decision *d, const struct snapshot *s, struct buf *b)
{
	const struct plan *p = &d->verdict.accepted;
	char desc[512], ts[64];
	int w = 8, wn = 4, wg = 5;
	size_t i;

	model_format_time(s->now, ts, sizeof(ts));
	buf_printf(b, "cluster at %s: %zu nodes, %zu pods, %zu pending, %zu node groups\n", ts,
		   s->n_nodes, s->n_pods, s->n_pending, s->n_groups);
	if (!d->ok) {
		buf_puts(b, "\npolicy failed, no actions: ");
		put_esc(b, d->error, 0);
		buf_puts(b, "\n");
	}

	for (i = 0; i < p->n_actions; i++) {
		action_describe(&p->actions[i], desc, sizeof(desc));
		w = esc_width(desc, w);
	}
	for (i = 0; i < d->verdict.n_rejected; i++) {
		action_describe(&d->verdict.rejected[i].action, desc, sizeof(desc));
		w = esc_width(desc, w);
	}
	buf_printf(b, "\nplan: %zu action%s\n", p->n_actions, p->n_actions == 1 ? "" : "s");
	for (i = 0; i < p->n_actions; i++) {
		const struct action *a = &p->actions[i];

		action_describe(a, desc, sizeof(desc));
		buf_puts(b, "  ");
		put_esc(b, desc, w);
		buf_puts(b, "  ");
		put_esc(b, a->reason, 0);
		if (a->where && a->where[0]) {
			buf_puts(b, "  [");
			put_esc(b, a->where, 0);
			buf_puts(b, "]");
		}
		buf_puts(b, "\n");
	}
	if (p->n_messages) {
		buf_puts(b, "\npolicy log:\n");
		for (i = 0; i < p->n_messages; i++) {
			buf_puts(b, "  ");
			put_esc(b, p->messages[i], 0);
			buf_puts(b, "\n");
		}
	}
	buf_printf(b, "\nrejected: %zu action%s\n", d->verdict.n_rejected,
		   d->verdict.n_rejected == 1 ? "" : "s");
	for (i = 0; i < d->verdict.n_rejected; i++) {
		const struct rejection *r = &d->verdict.rejected[i];

		action_describe(&r->action, desc, sizeof(desc));
		buf_puts(b, "  ");
		put_esc(b, desc, w);
		buf_puts(b, "  ");
		put_esc(b, r->why, 0);
		buf_puts(b, " (asked: ");
		put_esc(b, r->action.reason, 0);
		buf_puts(b, ")\n");
	}
	if (!d->n_nodes)
		return;
	for (i = 0; i < d->n_nodes; i++) {
		wn = esc_width(d->nodes[i].name, wn);
		wg = esc_width(d->nodes[i].group ? d->nodes[i].group : "-", wg);
	}
	buf_printf(b, "\nnodes:\n  %-*s  %-*s  %5s  %5s  %-9s  %s\n", wn, "NAME", wg, "GROUP",
		   "CPU", "MEM", "REMOVABLE", "WHY");
	for (i = 0; i < d->n_nodes; i++) {
		const struct node_report *r = &d->nodes[i];

		buf_puts(b, "  ");
		put_esc(b, r->name, wn);
		buf_puts(b, "  ");
		put_esc(b, r->group ? r->group : "-", wg);
		buf_printf(b, "  %4.0f%%  %4.0f%%  %-9s  ", r->cpu * 100.0, r->memory * 100.0,
			   r->removable ? "yes" : "no");
		put_esc(b, r->why, 0);
		buf_puts(b, "\n");
	}
}
