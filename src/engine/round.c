/*
 * round: observe, decide, log, hold removals on a stale cache, execute —
 * the body of every live loop.
 */
#include "engine/round.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Whether an earlier removal in 'p' names the node of action 'i'. */
static bool removal_seen(const struct plan *p, size_t i)
{
	size_t k;

	for (k = 0; k < i; k++)
		if (action_evicts(&p->actions[k]) &&
		    strcmp(p->actions[k].node, p->actions[i].node) == 0)
			return true;
	return false;
}

bool round_is_removal(const struct action *a)
{
	return a->type == ACTION_CORDON || action_evicts(a);
}

ssize_t round_hold_removals(struct plan *p, const char *why, const struct logger *log,
			    int64_t now)
{
	struct plan kept;
	struct action *tmp;
	size_t i, n, held = 0;
	char desc[512];
	bool oom = false;

	for (i = 0; i < p->n_actions; i++)
		held += round_is_removal(&p->actions[i]);
	if (!held)
		return 0;
	log_at(log, LOG_WARN, now,
	       "no scale-down this round: the cluster cache is stale (%s); %zu removal(s) held "
	       "back, scale-ups go on", why, held);
	plan_init(&kept);
	for (i = 0; i < p->n_actions; i++) {
		const struct action *ac = &p->actions[i];

		if (round_is_removal(ac)) {
			struct log_field f[ACTION_LOG_FIELDS + 2];
			char cnt[24];
			size_t nf = action_log_fields(ac, f, cnt);

			f[nf++] = (struct log_field){"outcome", "held"};
			f[nf++] = (struct log_field){"why", why};
			action_describe(ac, desc, sizeof(desc));
			log_fields(log, LOG_INFO, now, f, nf, "held: %s: the cache is stale (asked: %s)",
				   desc, ac->reason);
		} else if (!oom && plan_add(&kept, ac) < 0) {
			oom = true;
		}
	}
	/* the kept actions take the place of the plan's; the rest of the
	 * plan (notes, messages) stays */
	tmp = p->actions;
	p->actions = kept.actions;
	kept.actions = tmp;
	n = p->n_actions;
	p->n_actions = kept.n_actions;
	kept.n_actions = n;
	n = p->cap_actions;
	p->cap_actions = kept.cap_actions;
	kept.cap_actions = n;
	plan_free(&kept);
	return oom ? -1 : (ssize_t)held;
}

int round_run(struct reconciler *r, struct actuator *a, struct snapshot *s,
	      const struct logger *log, struct round_stats *st, struct errbuf *err)
{
	return round_run_opts(r, a, s, NULL, log, st, err);
}

int round_run_opts(struct reconciler *r, struct actuator *a, struct snapshot *s,
		   const struct round_opts *o, const struct logger *log, struct round_stats *st,
		   struct errbuf *err)
{
	struct reload_result rr;
	struct round_stats local;
	struct decision d;
	struct plan *p;
	char desc[512];
	size_t i;

	if (!st)
		st = &local;
	memset(st, 0, sizeof(*st));
	actuator_observe(a, s);
	if (o && o->binder)
		binder_observe(o->binder, s);
	if (reconciler_run(r, s, o && o->explain, &d, &rr, err) < 0)
		return -1;
	if (rr.attempted) {
		st->reloaded = rr.ok;
		reload_result_log(&rr, reconciler_policy_path(r), log, s->now);
	}
	st->policy_ms = d.stats.view_ms + d.stats.call_ms + d.stats.decode_ms;
	if (o && o->ins) {
		metric_observe0(o->ins->policy_seconds, st->policy_ms / 1000.0);
		metric_observe0(o->ins->policy_instructions, (double)d.stats.instructions);
		if (rr.attempted)
			metric_inc1(o->ins->policy_reloads, reload_result_outcome(&rr));
	}
	if (!d.ok) {
		st->policy_failed = true;
		snprintf(st->error, sizeof(st->error), "%.*s", (int)sizeof(st->error) - 1, d.error);
		log_at(log, LOG_ERROR, s->now, "policy failed, no actions this round: %s", d.error);
	}
	p = &d.verdict.accepted;
	for (i = 0; i < p->n_messages; i++)
		log_at(log, LOG_INFO, s->now, "policy: %s", p->messages[i]);
	if (o && o->stale && o->stale[0]) {
		ssize_t held = round_hold_removals(p, o->stale, log, s->now);

		if (held < 0) {
			decision_free(&d);
			return errbuf_set(err, "out of memory");
		}
		st->held = (size_t)held;
	}
	for (i = 0; i < p->n_actions; i++) {
		struct log_field f[ACTION_LOG_FIELDS + 1];
		char cnt[24];
		size_t nf = action_log_fields(&p->actions[i], f, cnt);

		f[nf++] = (struct log_field){"outcome", "planned"};
		action_describe(&p->actions[i], desc, sizeof(desc));
		log_fields(log, LOG_INFO, s->now, f, nf, "plan: %s: %s%s%s%s", desc,
			   p->actions[i].reason, p->actions[i].where[0] ? " [" : "",
			   p->actions[i].where, p->actions[i].where[0] ? "]" : "");
	}
	for (i = 0; i < d.verdict.n_rejected; i++) {
		const struct rejection *rj = &d.verdict.rejected[i];
		struct log_field f[ACTION_LOG_FIELDS + 2];
		char cnt[24];
		size_t nf = action_log_fields(&rj->action, f, cnt);

		f[nf++] = (struct log_field){"outcome", "rejected"};
		f[nf++] = (struct log_field){"why", rj->why};
		action_describe(&rj->action, desc, sizeof(desc));
		/* a disruption budget holding a removal back is the operator's
		 * design working, not a fault: said at info */
		log_fields(log, strcmp(instruments_invariant(rj->why), "disruption_budget") ? LOG_WARN : LOG_INFO,
			   s->now, f, nf, "rejected: %s: %s (asked: %s)", desc, rj->why, rj->action.reason);
	}
	st->actions = p->n_actions;
	for (i = 0; i < p->n_actions; i++) {
		const struct action *ac = &p->actions[i];

		if (ac->type == ACTION_SCALE_UP || ac->type == ACTION_REPLACE)
			st->instances += ac->count;
		if (ac->type != ACTION_SCALE_UP && action_evicts(ac))
			st->removals += !removal_seen(p, i);
	}
	st->rejected = d.verdict.n_rejected;
	if (o && o->observe) {
		struct round_view v = {p, &d.verdict, d.ok ? NULL : d.error,
				       rr.attempted ? &rr : NULL, d.nodes, d.n_nodes,
				       st->held ? o->stale : NULL};

		o->observe(o->observe_ctx, s, &v);
	}
	if (o && o->ins) {
		for (i = 0; i < p->n_actions; i++)
			metric_inc1(o->ins->planned, action_type_str(p->actions[i].type));
		for (i = 0; i < d.verdict.n_rejected; i++)
			metric_inc1(o->ins->rejections, instruments_invariant(d.verdict.rejected[i].why));
		instruments_verdict(o->ins, &d.verdict);
		instruments_budgets(o->ins, s, reconciler_config(r));
	}
	if (p->n_actions)
		actuator_execute(a, p, s);
	decision_free(&d);
	return 0;
}
