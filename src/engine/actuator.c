/*
 * actuator: carries out checked plans and keeps track of what is in flight.
 * Launches and node jobs are tasks on the executor; callbacks from the
 * provider may arrive on any thread, so the state is under one mutex, never
 * held while calling out (provider, kubeops, logger). It also remembers the
 * nodes it deleted and the cordons it gave back until the cache catches up.
 */
#include "engine/actuator.h"
#include "engine/actuator_internal.h"

#include "config.h"
#include "sched.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void act_launch_free(struct launch *l)
{
	size_t i;

	for (i = 0; i < l->n_types; i++)
		free(l->types[i]);
	free(l->types);
	free(l);
}

void act_rep_free(struct replacement *r)
{
	action_free(&r->act);
	free(r);
}

void actuator_config_default(struct actuator_config *c)
{
	memset(c, 0, sizeof(*c));
	c->max_provision_s = 15 * 60;
	c->group_backoff.initial_ns = 5 * 60 * CLOCK_NS_PER_S;
	c->group_backoff.max_ns = 30 * 60 * CLOCK_NS_PER_S;
	c->group_backoff.factor = 2;
	c->group_backoff.jitter = 0;
	c->drain_timeout_s = 10 * 60;
	c->eviction_retry_s = 5;
	c->drain_poll_s = 2;
	c->eviction_grace_s = -1;
	c->max_concurrent_drains = 1;
	c->seed = 1;
}

void actuator_config_from(struct actuator_config *out, const struct config *c)
{
	actuator_config_default(out);
	out->max_provision_s = c->max_provision_ms / 1000;
	out->group_backoff.initial_ns = c->backoff_initial_ms * CLOCK_NS_PER_MS;
	out->group_backoff.max_ns = c->backoff_max_ms * CLOCK_NS_PER_MS;
	out->drain_timeout_s = c->drain_timeout_ms / 1000;
	out->max_concurrent_drains = c->max_concurrent_drains;
	out->protected_pods = c->protected_pods.n ? &c->protected_pods : NULL;
}

void actuator_pool_opts(struct executor_pool_opts *o, const struct provider_limits *lim,
			size_t queue_cap)
{
	executor_pool_opts_default(o, ACTUATOR_BASE_WORKERS, queue_cap);
	if (lim && lim->mutating_qps > 0)
		o->max_workers = executor_workers_for_rate(ACTUATOR_BASE_WORKERS, lim->mutating_qps,
							   lim->mutating_burst, EXECUTOR_CALL_LATENCY_NS);
	else
		o->max_workers = EXECUTOR_MAX_WORKERS;
}

double act_secs_since(struct actuator *a, int64_t start_ns)
{
	return (double)(clock_now(a->clock) - start_ns) / (double)CLOCK_NS_PER_S;
}

struct actuator *actuator_new(struct executor *ex, struct provider *prov,
			      const struct kubeops *kube, const struct actuator_config *cfg,
			      const struct logger *log)
{
	struct actuator *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	pthread_mutex_init(&a->mu, NULL);
	a->ex = ex;
	a->clock = executor_clock(ex);
	a->prov = prov;
	a->kube = kube;
	if (cfg)
		a->cfg = *cfg;
	else
		actuator_config_default(&a->cfg);
	a->log = log;
	a->rng = a->cfg.seed ? a->cfg.seed : 1;
	if (a->cfg.max_concurrent_drains < 1)
		a->cfg.max_concurrent_drains = 1;
	/* the rules safety.c holds a removal to at plan time, so plan time and
	 * eviction time agree: protected pods, safe-to-evict "false" */
	drain_opts_default(&a->evict_opts);
	a->evict_opts.protected_pods = a->cfg.protected_pods;
	a->evict_opts.local_storage_blocks = false;
	a->evict_opts.unreplicated_blocks = false;
	return a;
}

void actuator_free(struct actuator *a)
{
	struct flight *f, *fn;
	struct gstate *g, *gn;

	if (!a)
		return;
	for (f = a->flights; f; f = fn) {
		fn = f->next;
		LOG(a, LOG_WARN, "at shutdown instance %s of group %s was still in flight (launched %llds ago%s)",
		    f->id, f->group, (long long)(clock_wall(a->clock) - f->launched),
		    f->terminating ? ", being terminated" : "");
		free(f);
	}
	for (f = a->doomed; f; f = fn) {
		fn = f->next;
		LOG(a, LOG_WARN, "at shutdown instance %s of group %s was still to be terminated (%d "
		    "failed attempt(s); %s); the next process's sweep finds it", f->id, f->group,
		    f->attempts, f->why);
		free(f);
	}
	for (f = a->gone; f; f = fn) {
		fn = f->next;
		free(f);
	}
	while (a->deferred) {
		struct deferred *d = a->deferred;

		a->deferred = d->next;
		free(d);
	}
	free(a->cloud);
	for (g = a->groups; g; g = gn) {
		gn = g->next;
		free(g);
	}
	while (a->busy_nodes) {
		struct busy_node *b = a->busy_nodes;

		a->busy_nodes = b->next;
		free(b);
	}
	while (a->memos) {
		struct memo *m = a->memos;

		a->memos = m->next;
		free(m);
	}
	while (a->replacements) {
		struct replacement *r = a->replacements;

		a->replacements = r->next;
		LOG(a, LOG_WARN, "at shutdown node %s was being replaced with a node of group %s (%s); it stays as it is",
		    r->node, r->act.group, r->state == REP_ASKED ? "its new node asked for"
					   : r->state == REP_BOOTING ? "its new node booting"
								     : "its removal not started");
		act_rep_free(r);
	}
	pthread_mutex_destroy(&a->mu);
	free(a);
}

/* The group's state, created on first use. Called with the lock held. */
struct gstate *act_group_state(struct actuator *a, const char *name)
{
	struct gstate *g;

	for (g = a->groups; g; g = g->next)
		if (strcmp(g->name, name) == 0)
			return g;
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	snprintf(g->name, sizeof(g->name), "%s", name);
	g->next = a->groups;
	a->groups = g;
	return g;
}

/* The replace of node 'node' under way, or NULL. Lock held. */
struct replacement *act_rep_find(struct actuator *a, const char *node)
{
	struct replacement *r;

	for (r = a->replacements; r; r = r->next)
		if (strcmp(r->node, node) == 0)
			return r;
	return NULL;
}

/* Ends the replace of 'node' while it waits for its new node (asked for
 * or booting) with 'why'. Lock held. */
void act_rep_fail(struct actuator *a, const char *node, const char *why)
{
	struct replacement *r = act_rep_find(a, node);

	if (r && (r->state == REP_ASKED || r->state == REP_BOOTING)) {
		r->state = REP_FAILED;
		snprintf(r->why, sizeof(r->why), "%s", why);
	}
}

/* Whether a failed launch backs its group off: every failure but a
 * throttled call (the rate limiter slows down instead) and a launch not
 * made (shutdown, leadership lost). A transient error (5xx, a timeout, a
 * capacity the cloud could not read) backs off too, so a group that keeps
 * failing is not asked again every round. */
bool act_launch_failure_backs_off(enum provider_error e)
{
	return e != PROVIDER_OK && e != PROVIDER_THROTTLED && e != PROVIDER_CANCELLED;
}

/* Backs a group off after a failure. Lock held. Returns the delay (s). */
int64_t act_back_off(struct actuator *a, struct gstate *g, const char *reason)
{
	int64_t delay_ns;

	g->failures++;
	delay_ns = backoff_delay(&a->cfg.group_backoff, g->failures, &a->rng);
	g->backoff_until = clock_wall(a->clock) + (delay_ns + CLOCK_NS_PER_S - 1) / CLOCK_NS_PER_S;
	snprintf(g->reason, sizeof(g->reason), "%.*s", (int)sizeof(g->reason) - 1, reason);
	return (delay_ns + CLOCK_NS_PER_S - 1) / CLOCK_NS_PER_S;
}


int actuator_execute(struct actuator *a, const struct plan *p, const struct snapshot *s)
{
	char pods[256];
	size_t i, k;
	int failed = 0;
	int64_t oldest = 0;

	if (a->cfg.dry_run) {
		for (i = 0; i < p->n_actions; i++) {
			char desc[512];

			action_describe(&p->actions[i], desc, sizeof(desc));
			LOG(a, LOG_INFO, "dry-run: would %s: %s", desc, p->actions[i].reason);
		}
		return 0;
	}
	/* what the launches are for: the pods the scheduler could not place */
	pods[0] = '\0';
	if (s) {
		size_t shown = 0, total = 0, used = 0;

		for (i = 0; i < s->n_pending; i++) {
			const struct pod *pd = &s->pods[s->pending[i]];

			if (!(pd->flags & POD_UNSCHEDULABLE))
				continue;
			if (pd->created > 0 && (!oldest || pd->created < oldest))
				oldest = pd->created;
			if (shown < 3 && used < sizeof(pods) - 1) {
				used += (size_t)snprintf(pods + used, sizeof(pods) - used, "%s%s/%s",
							 shown ? ", " : "", pd->ns, pd->name);
				if (used >= sizeof(pods))
					used = sizeof(pods) - 1;
				shown++;
			}
			total++;
		}
		if (total > shown && used < sizeof(pods) - 1)
			snprintf(pods + used, sizeof(pods) - used, " and %zu more", total - shown);
	}
	for (i = 0; i < p->n_actions; i++)
		if (p->actions[i].type == ACTION_SCALE_UP &&
		    act_start_launch(a, &p->actions[i], pods, oldest, s, NULL) < 0)
			failed++;
		else if (p->actions[i].type == ACTION_REPLACE && act_start_replace(a, &p->actions[i], s) < 0)
			failed++;
	/* one job per node, in the order nodes first appear in the plan */
	act_deferred_round(a, true);
	for (i = 0; i < p->n_actions; i++) {
		const char *node = p->actions[i].node;
		bool seen = false;

		if (p->actions[i].type == ACTION_SCALE_UP || p->actions[i].type == ACTION_REPLACE ||
		    !node)
			continue;
		for (k = 0; k < i && !seen; k++)
			seen = p->actions[k].node && strcmp(p->actions[k].node, node) == 0;
		if (!seen && act_start_node_job(a, p, s, node) < 0)
			failed++;
	}
	act_deferred_round(a, false);
	return failed && (size_t)failed == p->n_actions ? -1 : 0;
}


void actuator_stop(struct actuator *a)
{
	pthread_mutex_lock(&a->mu);
	a->stopping = true;
	pthread_mutex_unlock(&a->mu);
}

void actuator_get_stats(struct actuator *a, struct actuator_stats *out)
{
	struct flight *f;
	struct gstate *g;

	pthread_mutex_lock(&a->mu);
	*out = a->st;
	out->in_flight_instances = 0;
	for (f = a->flights; f; f = f->next)
		if (!f->terminating)
			out->in_flight_instances++;
	out->in_flight_requested = 0;
	for (g = a->groups; g; g = g->next)
		out->in_flight_requested += (size_t)g->requested;
	out->terminating = 0;
	for (f = a->doomed; f; f = f->next)
		out->terminating++;
	out->replacing = 0;
	for (struct replacement *r = a->replacements; r; r = r->next)
		out->replacing++;
	pthread_mutex_unlock(&a->mu);
}

void actuator_each_in_flight(struct actuator *a,
			     void (*fn)(void *ctx, const char *group, const char *id,
					const char *provider_id, int64_t launched),
			     void *ctx)
{
	struct flight *f;

	pthread_mutex_lock(&a->mu);
	for (f = a->flights; f; f = f->next)
		fn(ctx, f->group, f->id, f->provider_id, f->launched);
	pthread_mutex_unlock(&a->mu);
}

size_t actuator_log_in_flight(struct actuator *a, const char *why)
{
	const struct gstate *g;
	const struct busy_node *b;
	const struct flight *f;
	size_t named = 0, booting = 0;

	pthread_mutex_lock(&a->mu);
	for (g = a->groups; g; g = g->next) {
		if (g->requested > 0) {
			LOG(a, LOG_WARN, "%s: a cloud call is in flight: scale_up %s, %d instance(s) asked for and not yet created; the cloud finishes it whoever leads",
			    why, g->name, g->requested);
			named++;
		}
	}
	for (b = a->busy_nodes; b; b = b->next) {
		if (b->removing) {
			LOG(a, LOG_WARN, "%s: the removal of node %s is in flight (drain or delete): it stops at its next step",
			    why, b->name);
			named++;
		}
	}
	for (f = a->flights; f; f = f->next)
		booting += !f->terminating;
	if (booting)
		LOG(a, LOG_INFO, "%s: %zu instance(s) launched here are still booting", why, booting);
	pthread_mutex_unlock(&a->mu);
	return named;
}
