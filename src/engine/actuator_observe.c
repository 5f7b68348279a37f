/*
 * actuator: between reconciles: replaces settling, the instances in
 * flight against the cloud's listing, the orphan sweep, and the instances
 * doomed to be terminated until they are gone.
 * The state is actuator_internal.h's.
 */
#include "engine/actuator.h"
#include "engine/actuator_internal.h"

#include "config.h"
#include "sched.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- between reconciles ---- */

/* The old node of a replace whose new node is Ready: its removal (cordon
 * with luascale's mark, drain, delete) as a node job. Returns 1 started,
 * 0 not now (a drain slot, a job on the node: tried again next time). */
static int replace_remove(struct actuator *a, const struct replacement *r, const struct snapshot *s)
{
	struct plan p;
	struct action d = r->act;
	char reason[PLAN_MAX_REASON + 600];
	int rc;

	snprintf(reason, sizeof(reason), "replaced by node %s of group %s: %s", r->new_node,
		 r->act.group, r->act.reason);
	d.group = NULL;
	d.instance_types = NULL;
	d.n_instance_types = 0;
	d.count = 0;
	d.reason = reason;
	plan_init(&p);
	d.type = ACTION_DRAIN;
	rc = plan_add(&p, &d);
	d.type = ACTION_DELETE;
	if (rc == 0)
		rc = plan_add(&p, &d);
	rc = rc == 0 ? act_start_node_job(a, &p, s, r->node) : 0;
	plan_free(&p);
	return rc > 0;
}

/*
 * Replaces that came to an end since the last look: those whose new node
 * is Ready start the old node's removal, those that failed leave the old
 * node as it is (an Event says why), those whose node went away end.
 * While this process does not lead, every replace is given up without a
 * write. Runs outside the lock.
 */
static void replaces_settle(struct actuator *a, const struct snapshot *s, int64_t now)
{
	struct replacement *over = NULL, **pp, *r;
	bool leading = !a->cfg.may_act || a->cfg.may_act(a->cfg.may_act_ctx);

	pthread_mutex_lock(&a->mu);
	for (pp = &a->replacements; (r = *pp);) {
		if (!leading && (r->state == REP_ASKED || r->state == REP_BOOTING || r->state == REP_READY)) {
			r->state = REP_FAILED;
			snprintf(r->why, sizeof(r->why), "this process no longer leads");
		}
		if (r->state == REP_READY || r->state == REP_FAILED || r->state == REP_GONE) {
			*pp = r->next;
			r->next = over;
			over = r;
			continue;
		}
		pp = &r->next;
	}
	pthread_mutex_unlock(&a->mu);
	while ((r = over)) {
		const char *grp = r->node_group[0] ? r->node_group : "unknown";
		char msg[PLAN_MAX_REASON + 800];

		over = r->next;
		r->next = NULL;
		switch (r->state) {
		case REP_READY:
			if (!replace_remove(a, r, s)) {
				pthread_mutex_lock(&a->mu);
				r->next = a->replacements;
				a->replacements = r;
				pthread_mutex_unlock(&a->mu);
				continue;
			}
			log_at(a->log, LOG_INFO, now, "replace %s: its new node %s (group %s) is Ready after %llds; removing %s (%s)",
			       r->node, r->new_node, r->act.group, (long long)(now - r->started), r->node,
			       r->act.reason);
			snprintf(msg, sizeof(msg), "replaced by node %s of group %s, Ready after %llds: removing it (%s; disruption: %s; budget: %s)",
				 r->new_node, r->act.group, (long long)(now - r->started), r->act.reason,
				 r->act.disruption ? r->act.disruption : "underutilized",
				 r->act.budget ? r->act.budget : "none limits it");
			act_node_event(a, r->node, "Normal", "LuascaleReplaced", msg);
			if (a->cfg.ins) {
				const char *v[3] = {grp, r->act.disruption ? r->act.disruption : "underutilized",
						    "replace"};

				metric_inc2(a->cfg.ins->replacements, grp, "replaced");
				metric_add(a->cfg.ins->disruptions, v, 1);
			}
			act_count(a, &a->st.replaces_done);
			break;
		case REP_FAILED:
			log_at(a->log, LOG_WARN, now, "replace %s failed after %llds: %s; %s is left as it was (not cordoned)",
			       r->node, (long long)(now - r->started), r->why, r->node);
			snprintf(msg, sizeof(msg), "replace failed: %s; the node is left as it was", r->why);
			act_node_event(a, r->node, "Warning", "LuascaleReplaceFailed", msg);
			if (a->cfg.ins)
				metric_inc2(a->cfg.ins->replacements, grp, "failed");
			act_count(a, &a->st.replaces_failed);
			break;
		default:
			log_at(a->log, LOG_INFO, now, "replace %s over: the node is gone or being removed before its new node was Ready%s%s",
			       r->node, r->inst[0] ? "; its new instance stays: " : "", r->inst);
			if (a->cfg.ins)
				metric_inc2(a->cfg.ins->replacements, grp, "gone");
			break;
		}
		act_rep_free(r);
	}
}

/* A terminate of a doomed instance ended: gone (dropped from the list),
 * or tried again later. */
static void doomed_done(void *ctx, int count_, const struct provider_status *st)
{
	struct flight *f = ctx;
	struct actuator *a = f->a;
	int64_t now = clock_now(a->clock);

	(void)count_;
	act_count_termination(a, f->group, st);
	pthread_mutex_lock(&a->mu);
	f->in_call = false;
	if (st->code == PROVIDER_OK || st->code == PROVIDER_NOT_FOUND) {
		struct flight **pp;

		for (pp = &a->doomed; *pp; pp = &(*pp)->next)
			if (*pp == f) {
				*pp = f->next;
				break;
			}
		/* remembered until a list of the cloud no longer shows it */
		f->next = a->gone;
		a->gone = f;
		pthread_mutex_unlock(&a->mu);
		LOG(a, LOG_INFO, "instance %s of group %s terminated%s (%s)", f->id, f->group,
		    st->code == PROVIDER_NOT_FOUND ? ": the cloud no longer had it" : "", f->why);
		return;
	}
	f->attempts++;
	f->next_try_ns = act_term_retry_at(a, f->attempts, st, now);
	pthread_mutex_unlock(&a->mu);
	LOG(a, LOG_WARN, "terminating instance %s of group %s failed (attempt %d): %s: %s; retrying in %.0fs (%s)",
	    f->id, f->group, f->attempts, provider_error_str(st->code), st->message,
	    (double)(f->next_try_ns - now) / CLOCK_NS_PER_S, f->why);
	if (a->cfg.ins)
		metric_inc1(a->cfg.ins->failed, "terminate");
}

/* Adds an instance without a node to the doomed list. Lock held. */
static void doom(struct actuator *a, struct flight *f, const char *why, int64_t now_ns)
{
	f->a = a;
	f->terminating = true;
	f->in_call = false;
	f->next_try_ns = now_ns;
	snprintf(f->why, sizeof(f->why), "%s", why);
	f->next = a->doomed;
	a->doomed = f;
}

/* Whether the instance (group, id) is known here: in flight, or doomed. Lock held. */
static bool known_instance(struct actuator *a, const char *group, const char *id)
{
	struct flight *f;

	for (f = a->flights; f; f = f->next)
		if (strcmp(f->id, id) == 0 && strcmp(f->group, group) == 0)
			return true;
	for (f = a->doomed; f; f = f->next)
		if (strcmp(f->id, id) == 0 && strcmp(f->group, group) == 0)
			return true;
	for (f = a->gone; f; f = f->next)
		if (strcmp(f->id, id) == 0 && strcmp(f->group, group) == 0)
			return true;
	return false;
}

void actuator_cloud_instances(struct actuator *a, const struct provider_group *groups, size_t n)
{
	struct cloud_inst *v;
	size_t i, k, total = 0, m = 0;

	for (i = 0; i < n; i++)
		total += groups[i].n_instances;
	v = calloc(total ? total : 1, sizeof(*v));
	if (!v)
		return; /* the next list tries again; nothing is swept meanwhile */
	for (i = 0; i < n; i++)
		for (k = 0; k < groups[i].n_instances; k++) {
			const struct provider_instance *in = &groups[i].instances[k];

			snprintf(v[m].group, sizeof(v[m].group), "%s", groups[i].name);
			snprintf(v[m].id, sizeof(v[m].id), "%s", in->id);
			v[m].launched_wall = in->launched_wall;
			v[m].state = in->state;
			m++;
		}
	pthread_mutex_lock(&a->mu);
	free(a->cloud);
	a->cloud = v;
	a->n_cloud = m;
	a->cloud_known = true;
	/* terminated instances the cloud no longer lists are forgotten */
	{
		struct flight **pp = &a->gone, *f;

		while ((f = *pp)) {
			bool listed = false;

			for (i = 0; i < m && !listed; i++)
				listed = strcmp(v[i].id, f->id) == 0 && strcmp(v[i].group, f->group) == 0;
			if (listed) {
				pp = &f->next;
				continue;
			}
			*pp = f->next;
			free(f);
		}
	}
	pthread_mutex_unlock(&a->mu);
}

/* The instance ids the snapshot's nodes map to, by the provider (so a
 * providerID written in another form still matches). Caller frees. */
static char (*node_instances(struct actuator *a, const struct snapshot *s, size_t *n))[128]
{
	char (*ids)[128] = calloc(s->n_nodes ? s->n_nodes : 1, sizeof(*ids));
	char group[64];
	size_t i;

	*n = 0;
	for (i = 0; ids && i < s->n_nodes; i++)
		if (s->nodes[i].provider_id[0] &&
		    a->prov->ops->map_node(a->prov, s->nodes[i].provider_id, group, sizeof(group),
					   ids[*n], sizeof(ids[0])) == 0)
			(*n)++;
	return ids;
}

/* Is cloud instance 'c' of group 'gname' an orphan at 'now': live, no
 * node maps to it, launched past max_provision_s by the cloud's clock, and
 * not known here (in flight, doomed or gone)? Lock held. */
static bool orphan_of(struct actuator *a, const struct cloud_inst *c, const char *gname,
		      char (*ids)[128], size_t n_ids, int64_t now)
{
	size_t k;

	if (strcmp(c->group, gname) != 0 ||
	    (c->state != INSTANCE_PENDING && c->state != INSTANCE_RUNNING) ||
	    c->launched_wall <= 0 || now - c->launched_wall < a->cfg.max_provision_s ||
	    known_instance(a, gname, c->id))
		return false;
	for (k = 0; k < n_ids; k++)
		if (strcmp(ids[k], c->id) == 0)
			return false;
	return true;
}

/*
 * The act_sweep (see actuator_cloud_instances): dooms the cloud's instances of
 * managed groups that have no node past max_provision_s by the cloud's
 * launch time. Lock held; 'ids' are the node-mapped instance ids.
 */
void act_sweep(struct actuator *a, struct snapshot *s, char (*ids)[128], size_t n_ids,
		  int64_t now, int64_t now_ns)
{
	size_t gi, i, *found = a->n_cloud ? malloc(a->n_cloud * sizeof(*found)) : NULL;

	for (gi = 0; found && gi < s->n_groups; gi++) {
		const char *gname = s->groups[gi].name;
		size_t listed = 0, n_found = 0;
		struct gstate *g;
		char why[420];

		for (i = 0; i < a->n_cloud; i++) {
			const struct cloud_inst *c = &a->cloud[i];

			if (strcmp(c->group, gname) != 0 ||
			    (c->state != INSTANCE_PENDING && c->state != INSTANCE_RUNNING))
				continue;
			listed++;
			if (orphan_of(a, c, gname, ids, n_ids, now))
				found[n_found++] = i;
		}
		if (!n_found)
			continue;
		if (n_found > 2 && (double)n_found > SWEEP_MAX_SHARE * (double)listed) {
			LOG(a, LOG_ERROR, "group %s: %zu of its %zu instances have no node %llds after their "
			    "launch; not terminating them: so many at once looks like a cache or "
			    "providerID fault (check that the nodes' spec.providerID name these instances)",
			    gname, n_found, listed, (long long)a->cfg.max_provision_s);
			continue;
		}
		g = act_group_state(a, gname);
		for (i = 0; i < n_found; i++) {
			const struct cloud_inst *c = &a->cloud[found[i]];
			struct flight *f = calloc(1, sizeof(*f));

			if (!f)
				continue;
			snprintf(f->group, sizeof(f->group), "%s", gname);
			snprintf(f->id, sizeof(f->id), "%s", c->id);
			f->launched = c->launched_wall;
			f->orphan = true;
			snprintf(why, sizeof(why), "instance %s of group %s has no node %llds after its launch "
				 "(by the cloud's launch time)", c->id, gname,
				 (long long)(now - c->launched_wall));
			doom(a, f, why, now_ns);
			a->st.orphans_found++;
			LOG(a, LOG_WARN, "%s: terminating it", why);
		}
		/* once for what this sweep found, not per instance */
		if (g && g->backoff_until <= now) {
			int64_t delay;

			snprintf(why, sizeof(why), "%zu instance(s) never became nodes", n_found);
			delay = act_back_off(a, g, why);
			LOG(a, LOG_WARN, "group %s backed off for %llds: %s", gname, (long long)delay, why);
		}
	}
	free(found);
}

/* One doomed instance's terminate call, on the work queue. Cancelled at
 * shutdown: not made (the next process's sweep finds the instance). */
static void doomed_task(void *arg, bool cancelled)
{
	struct flight *f = arg;
	struct actuator *a = f->a;
	const char *ids[1] = {f->id};

	if (cancelled) {
		pthread_mutex_lock(&a->mu);
		f->in_call = false;
		pthread_mutex_unlock(&a->mu);
		return;
	}
	a->prov->ops->terminate(a->prov, f->group, ids, 1, doomed_done, f);
}

/* Calls terminate for every doomed instance that is due (not while the
 * cloud's Retry-After holds). Without the lock. */
static void pump_doomed(struct actuator *a, int64_t now_ns)
{
	struct flight **due = NULL, *f;
	size_t n = 0, i;

	if (!a->prov)
		return;
	pthread_mutex_lock(&a->mu);
	if (now_ns >= a->cloud_hold_ns) {
		for (f = a->doomed; f; f = f->next)
			if (!f->in_call && f->next_try_ns <= now_ns)
				n++;
		due = n ? calloc(n, sizeof(*due)) : NULL;
		n = 0;
		for (f = a->doomed; due && f; f = f->next)
			if (!f->in_call && f->next_try_ns <= now_ns) {
				f->in_call = true;
				due[n++] = f;
			}
	}
	pthread_mutex_unlock(&a->mu);
	/* on the work queue, as launches: a terminate that blocks (a slow
	 * cloud, a lost answer waiting for its timeout) never holds the loop */
	for (i = 0; i < n; i++)
		if (!a->ex || executor_submit(a->ex, doomed_task, due[i]) != 0)
			doomed_task(due[i], false);
	free(due);
}

/* Does the node carry luascale's cordon mark? */
static bool is_marked(const struct node *nd)
{
	const char *v = kvlist_get(&nd->annotations, ACTUATOR_CORDON_MARK);

	return v && strcmp(v, ACTUATOR_CORDON_MARK_VALUE) == 0;
}

void actuator_observe(struct actuator *a, struct snapshot *s)
{
	int64_t now = clock_wall(a->clock), now_ns = clock_now(a->clock);
	struct flight **pp, *f;
	size_t i, n, n_release = 0, *release = NULL, n_node_ids = 0;
	char (*node_ids)[128] = NULL;

	if (a->cloud_known && a->prov && !a->cfg.dry_run)
		node_ids = node_instances(a, s, &n_node_ids); /* provider calls: before the lock */
	pthread_mutex_lock(&a->mu);
	pp = &a->flights;
	while ((f = *pp)) {
		bool registered = false;
		size_t at = 0; /* the Ready node it became */

		for (i = 0; i < s->n_nodes && !registered; i++)
			if ((registered = s->nodes[i].ready && s->nodes[i].provider_id[0] &&
					  strcmp(s->nodes[i].provider_id, f->provider_id) == 0))
				at = i;
		if (registered && !f->terminating) {
			*pp = f->next;
			if (f->replace_of[0]) {
				struct replacement *r = act_rep_find(a, f->replace_of);

				if (r && (r->state == REP_ASKED || r->state == REP_BOOTING)) {
					snprintf(r->new_node, sizeof(r->new_node), "%s", s->nodes[at].name);
					r->state = REP_READY;
				}
			}
			a->st.instances_registered++;
			if (a->cfg.ins && now >= f->launched)
				metric_observe1(a->cfg.ins->launch_to_ready, f->group, (double)(now - f->launched));
			log_at(a->log, LOG_INFO, now, "instance %s of group %s is a Ready node, %llds after it was created",
			       f->id, f->group, (long long)(now - f->launched));
			free(f);
			continue;
		}
		if (!f->terminating && now - f->launched >= a->cfg.max_provision_s) {
			struct gstate *g = act_group_state(a, f->group);
			char reason[400];
			int64_t delay = 0;

			snprintf(reason, sizeof(reason), "instance %s did not become a Ready node in %llds",
				 f->id, (long long)a->cfg.max_provision_s);
			/* once per launch request, not once per instance of it */
			if (g && g->backed_off_seq != f->launch_seq) {
				delay = act_back_off(a, g, reason);
				g->backed_off_seq = f->launch_seq;
			} else if (g) {
				delay = g->backoff_until > now ? g->backoff_until - now : 0;
			}
			a->st.instances_timed_out++;
			*pp = f->next;
			if (f->replace_of[0])
				act_rep_fail(a, f->replace_of, reason);
			doom(a, f, reason, now_ns);
			log_at(a->log, LOG_WARN, now, "%s: terminating it; group %s backed off for %llds",
			       reason, f->group, (long long)delay);
			continue;
		}
		pp = &f->next;
	}
	/* what the cache does not show yet: forget it once the cache does */
	{
		struct memo **mp = &a->memos, *m;

		while ((m = *mp)) {
			int32_t k = snapshot_find_node(s, m->name);
			const struct node *nd = k >= 0 ? &s->nodes[k] : NULL;
			bool gone;

			if (m->kind == MEMO_REMOVED)
				gone = !nd || (nd->provider_id[0] && m->provider_id[0] &&
					       strcmp(nd->provider_id, m->provider_id) != 0) ||
				       nd->created > m->at;
			else
				gone = !nd || !is_marked(nd);
			if (gone) {
				log_at(a->log, LOG_DEBUG, now, "node %s: the cluster cache shows it %s now",
				       m->name, m->kind == MEMO_REMOVED ? "gone" : "uncordoned");
				*mp = m->next;
				free(m);
				continue;
			}
			mp = &m->next;
		}
	}
	/* nodes being drained or deleted (or deleted already, as far as the
	 * cache does not know), and how many per group */
	for (i = 0; i < s->n_nodes; i++) {
		struct busy_node *b = act_busy_find(a, s->nodes[i].name);
		struct memo *m = act_memo_find(a, s->nodes[i].name);

		if ((b && b->removing) || (m && m->kind == MEMO_REMOVED)) {
			s->nodes[i].removing = true;
			if (s->nodes[i].group >= 0)
				s->groups[s->nodes[i].group].removing++;
		} else if (!b && !m && is_marked(&s->nodes[i])) {
			n_release++;
		}
	}
	/* replaces: the old node stays as it is while its new node is on its
	 * way; policies see it replacing, and the budgets count it */
	{
		struct replacement *r;

		for (r = a->replacements; r; r = r->next) {
			int32_t k = snapshot_find_node(s, r->node);

			if (r->state == REP_FAILED || r->state == REP_GONE)
				continue;
			if (k < 0 || s->nodes[k].removing) {
				r->state = REP_GONE;
				continue;
			}
			s->nodes[k].replacing = true;
			if (s->nodes[k].group >= 0)
				s->groups[s->nodes[k].group].replacing++;
		}
	}
	if (n_release) {
		release = calloc(n_release, sizeof(*release));
		n_release = 0;
		for (i = 0; release && i < s->n_nodes; i++)
			if (!s->nodes[i].removing && !act_busy_find(a, s->nodes[i].name) &&
			    !act_memo_find(a, s->nodes[i].name) && is_marked(&s->nodes[i]))
				release[n_release++] = i;
	}
	/* instances without nodes the cloud lists: the orphan sweep */
	if (node_ids)
		act_sweep(a, s, node_ids, n_node_ids, now, now_ns);
	/* groups: target = registered + in flight, less what is being
	 * terminated (the cloud's size may still count it); backoff */
	for (i = 0; i < s->n_groups; i++) {
		struct node_group *grp = &s->groups[i];
		struct gstate *g = act_group_state(a, grp->name);
		int doomed = 0;

		n = 0;
		for (f = a->flights; f; f = f->next)
			if (!f->terminating && strcmp(f->group, grp->name) == 0)
				n++;
		for (f = a->doomed; f; f = f->next)
			doomed += strcmp(f->group, grp->name) == 0;
		if (g)
			n += (size_t)g->requested;
		if (doomed && grp->target - doomed >= grp->current + (int)n)
			grp->target -= doomed;
		else if (doomed && grp->target > grp->current + (int)n)
			grp->target = grp->current + (int)n;
		if (grp->target < grp->current + (int)n)
			grp->target = grp->current + (int)n;
		if (g && g->backoff_until > now) {
			grp->backoff_until = g->backoff_until;
			snprintf(grp->backoff_reason, sizeof(grp->backoff_reason), "%s", g->reason);
		}
	}
	pthread_mutex_unlock(&a->mu);

	replaces_settle(a, s, now);

	/* cordons luascale left behind (a failed uncordon, an earlier process) */
	for (i = 0; i < n_release; i++) {
		const struct node *nd = &s->nodes[release[i]];
		const char *since = kvlist_get(&nd->annotations, ACTUATOR_CORDON_TIME);

		if (a->cfg.dry_run)
			log_at(a->log, LOG_INFO, now, "dry-run: would uncordon %s: luascale cordoned it%s%s for a removal that is not running",
			       nd->name, since ? " at " : "", since ? since : "");
		else if (a->kube)
			act_start_release(a, nd->name, nd->provider_id, since ? since : "");
	}
	free(release);

	free(node_ids);
	if (a->log && a->log->min_level <= LOG_DEBUG) {
		size_t n_flight = 0, n_doomed = 0, busy;

		pthread_mutex_lock(&a->mu);
		for (f = a->flights; f; f = f->next)
			n_flight++;
		for (f = a->doomed; f; f = f->next)
			n_doomed++;
		busy = a->st.busy;
		pthread_mutex_unlock(&a->mu);
		log_at(a->log, LOG_DEBUG, now, "actuator: %zu instance(s) in flight, %zu to terminate, "
		       "%zu node job(s) and launch(es) running", n_flight, n_doomed, busy);
	}
	/* terminations due (timed out, swept, or failed before), outside the lock */
	if (!a->cfg.dry_run)
		pump_doomed(a, now_ns);
}
