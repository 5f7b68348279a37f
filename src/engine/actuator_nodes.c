/*
 * actuator: node jobs: cordon, drain, delete (instance, then Node), give
 * back, replace, each a task stepping on the executor; and the memos of
 * what the cache does not show yet.
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

/* ---- what the cache does not show yet ---- */

/* The memo of 'node', or NULL. Lock held. */
struct memo *act_memo_find(struct actuator *a, const char *node)
{
	struct memo *m;

	for (m = a->memos; m; m = m->next)
		if (strcmp(m->name, node) == 0)
			return m;
	return NULL;
}

/* Drops the memo of 'node', if any. Lock held. */
static void memo_drop(struct actuator *a, const char *node)
{
	struct memo **pp, *m;

	for (pp = &a->memos; (m = *pp); pp = &m->next) {
		if (strcmp(m->name, node) == 0) {
			*pp = m->next;
			free(m);
			return;
		}
	}
}

/* Remembers 'node' as 'kind' (replacing what was remembered). Takes the lock. */
static void memo_set(struct actuator *a, enum memo_kind kind, const char *node,
		     const char *provider_id)
{
	struct memo *m;

	pthread_mutex_lock(&a->mu);
	m = act_memo_find(a, node);
	if (!m) {
		m = calloc(1, sizeof(*m));
		if (m) {
			m->next = a->memos;
			a->memos = m;
		}
	}
	if (m) {
		m->kind = kind;
		snprintf(m->name, sizeof(m->name), "%s", node);
		snprintf(m->provider_id, sizeof(m->provider_id), "%s", provider_id ? provider_id : "");
		m->at = clock_wall(a->clock);
	}
	pthread_mutex_unlock(&a->mu);
}

/* ---- node jobs ---- */

static void job_free(struct node_job *j)
{
	size_t i;

	for (i = 0; i < j->n; i++)
		action_free(&j->actions[i]);
	free(j->actions);
	free(j);
}

/* Frees the job's drain slot, if it holds one. Lock held. */
static void release_slot(struct node_job *j)
{
	if (j->holds_slot) {
		j->holds_slot = false;
		j->a->drains--;
	}
}

static void job_finish(struct node_job *j)
{
	struct actuator *a = j->a;
	struct busy_node **pp, *b;

	pthread_mutex_lock(&a->mu);
	a->st.busy--;
	release_slot(j);
	for (pp = &a->busy_nodes; (b = *pp); pp = &b->next) {
		if (strcmp(b->name, j->node) == 0) {
			*pp = b->next;
			free(b);
			break;
		}
	}
	pthread_mutex_unlock(&a->mu);
	job_free(j);
}

/* The busy entry of 'node', or NULL. Lock held. */
struct busy_node *act_busy_find(struct actuator *a, const char *node)
{
	struct busy_node *b;

	for (b = a->busy_nodes; b; b = b->next)
		if (strcmp(b->name, node) == 0)
			return b;
	return NULL;
}

void act_count(struct actuator *a, uint64_t *field)
{
	pthread_mutex_lock(&a->mu);
	(*field)++;
	pthread_mutex_unlock(&a->mu);
}

/*
 * Cordons or uncordons the job's node and, in the same write when kubeops
 * can, sets luascale's mark (who and when) or removes it ('mark'). Returns
 * 0 or -1, with 'st' filled either way.
 */
static int mark_cordon(struct node_job *j, bool on, bool mark, struct kube_status *st)
{
	struct actuator *a = j->a;
	const struct kubeops_ops *k = a->kube->ops;
	char ts[32];
	struct kv marks[2];
	size_t i;

	model_format_time(clock_wall(a->clock), ts, sizeof(ts));
	marks[0].key = ACTUATOR_CORDON_MARK;
	marks[0].value = mark ? ACTUATOR_CORDON_MARK_VALUE : NULL;
	marks[1].key = ACTUATOR_CORDON_TIME;
	marks[1].value = mark ? ts : NULL;
	st->code = KUBE_OK;
	st->message[0] = '\0';
	if (k->cordon_mark) {
		k->cordon_mark(a->kube->ctx, j->node, on, marks, 2, st);
		return st->code == KUBE_OK ? 0 : -1;
	}
	/* no single write: the mark goes on before the cordon and comes off
	 * after it changed, so luascale's cordon never stands unmarked (a
	 * mark alone is cleaned up later) */
	if (!mark) {
		k->cordon(a->kube->ctx, j->node, on, st);
		if (st->code != KUBE_OK)
			return -1;
	}
	for (i = 0; i < 2; i++) {
		k->annotate(a->kube->ctx, j->node, marks[i].key, marks[i].value, st);
		if (st->code != KUBE_OK)
			return -1;
	}
	if (mark)
		k->cordon(a->kube->ctx, j->node, on, st);
	return st->code == KUBE_OK ? 0 : -1;
}

static void note_event(struct node_job *j, const char *type, const char *reason, const char *msg)
{
	if (j->a->kube && j->a->kube->ops->event)
		j->a->kube->ops->event(j->a->kube->ctx, j->node, type, reason, msg);
}

/* An Event's message for disrupting action 'act': its reason, then the
 * disruption reason and the budget that held it, when known. */
static const char *disruption_msg(const struct action *act, char *out, size_t len)
{
	if (!act->disruption)
		return act->reason;
	snprintf(out, len, "%s (disruption: %s; budget: %s)", act->reason, act->disruption,
		 act->budget ? act->budget : "none limits it");
	return out;
}

/*
 * Uncordons the job's node when luascale cordoned it and the removal did
 * not finish ('why' says what happened). A failed uncordon leaves the mark
 * on the node, so actuator_observe() tries again.
 */
static void give_back(struct node_job *j, const char *why)
{
	struct actuator *a = j->a;
	struct kube_status st = {KUBE_OK, "", 0};

	if (!j->ours || j->deleted || !a->kube)
		return;
	j->ours = false;
	if (mark_cordon(j, false, false, &st) < 0 && st.code != KUBE_NOT_FOUND) {
		LOG(a, LOG_WARN, "node %s: uncordoning it failed after %s: %s; it stays cordoned, marked %s=%s, and is uncordoned when luascale next sees it",
		    j->node, why, st.message[0] ? st.message : "error", ACTUATOR_CORDON_MARK,
		    ACTUATOR_CORDON_MARK_VALUE);
		j->ours = true;
		return;
	}
	act_count(a, &a->st.uncordoned);
	memo_set(a, MEMO_RELEASED, j->node, j->provider_id);
	LOG(a, LOG_INFO, "node %s uncordoned: %s (luascale had cordoned it to remove it)", j->node, why);
	note_event(j, "Normal", "LuascaleUncordon", why);
}

/* Ends the job early (the executor refuses work): logs what is left, gives
 * the node back, accounts for it. */
static void job_abandon(struct node_job *j, const char *when)
{
	struct actuator *a = j->a;
	size_t i;

	for (i = j->next; i < j->n; i++) {
		char desc[512];

		action_describe(&j->actions[i], desc, sizeof(desc));
		LOG(a, LOG_WARN, "%s abandoned %s%s", desc, when,
		    j->draining && i == j->next ? " (drain in progress)" : "");
	}
	pthread_mutex_lock(&a->mu);
	a->st.actions_abandoned += j->n - j->next;
	pthread_mutex_unlock(&a->mu);
	if (j->removal)
		give_back(j, "its removal was abandoned");
	job_finish(j);
}

/* Ends the job without another write: this process no longer leads.
 * What is left is logged; a cordon of luascale's stays for the next
 * leader to give back (it carries the mark). */
static void job_drop(struct node_job *j)
{
	struct actuator *a = j->a;
	size_t i;

	for (i = j->next; i < j->n; i++) {
		char desc[512];

		action_describe(&j->actions[i], desc, sizeof(desc));
		LOG(a, LOG_WARN, "%s not done: this process no longer leads%s", desc,
		    j->draining && i == j->next ? " (drain in progress: no more evictions)" : "");
		if (a->cfg.ins)
			metric_inc1(a->cfg.ins->failed, action_type_str(j->actions[i].type));
	}
	pthread_mutex_lock(&a->mu);
	a->st.actions_abandoned += j->n - j->next;
	pthread_mutex_unlock(&a->mu);
	job_finish(j);
}

static void node_step(void *arg, bool cancelled);

/* Runs the job's next step now, or after 'delay_ns'. */
static void job_continue(struct node_job *j, int64_t delay_ns)
{
	if (executor_after(j->a->ex, delay_ns, node_step, j) < 0)
		job_abandon(j, "(the work queue is full or shutting down)");
}

/* Cordons for a removal: with the mark when the node was schedulable
 * (luascale's cordon, given back if the removal fails), plainly when
 * someone had cordoned it already (theirs; never undone). */
static int removal_cordon(struct node_job *j, struct kube_status *st)
{
	struct actuator *a = j->a;

	if (j->ours)
		return 0;
	if (j->was_cordoned) {
		if (j->marked)
			j->ours = true; /* an earlier cordon of luascale's */
		a->kube->ops->cordon(a->kube->ctx, j->node, true, st);
		return st->code == KUBE_OK || st->code == KUBE_NOT_FOUND ? 0 : -1;
	}
	if (mark_cordon(j, true, true, st) < 0)
		return st->code == KUBE_NOT_FOUND ? 0 : -1;
	j->ours = true;
	pthread_mutex_lock(&a->mu);
	memo_drop(a, j->node); /* a cordon to give back again if need be */
	pthread_mutex_unlock(&a->mu);
	return 0;
}

/* luascale_disruptions_total: a disrupting action of job 'j' done. */
static void count_disruption(struct actuator *a, const struct node_job *j, const struct action *act)
{
	const char *v[3];

	if (!a->cfg.ins || !act->disruption)
		return;
	v[0] = j->node_group[0] ? j->node_group : j->group[0] ? j->group : "unknown";
	v[1] = act->disruption;
	v[2] = action_type_str(act->type);
	metric_add(a->cfg.ins->disruptions, v, 1);
}

/* cordon, uncordon, label, annotate, taint. */
static void simple_action(struct node_job *j, const struct action *act)
{
	struct actuator *a = j->a;
	const struct kubeops_ops *k = a->kube->ops;
	void *ctx = a->kube->ctx;
	struct kube_status st = {KUBE_OK, "", 0};
	char desc[512];
	int rc = -1;

	action_describe(act, desc, sizeof(desc));
	switch (act->type) {
	case ACTION_CORDON:
		if (j->removal)
			rc = removal_cordon(j, &st);
		else if (j->marked)
			rc = mark_cordon(j, true, false, &st); /* the plan's cordon now */
		else
			rc = k->cordon(ctx, act->node, true, &st);
		break;
	case ACTION_UNCORDON:
		if (j->marked || j->ours) {
			rc = mark_cordon(j, false, false, &st);
			if (rc == 0)
				j->ours = false;
		} else {
			rc = k->cordon(ctx, act->node, false, &st);
		}
		break;
	case ACTION_LABEL:
		rc = k->label(ctx, act->node, act->key, act->remove ? NULL : act->value, &st);
		break;
	case ACTION_ANNOTATE:
		rc = k->annotate(ctx, act->node, act->key, act->remove ? NULL : act->value, &st);
		break;
	case ACTION_TAINT:
		rc = k->taint(ctx, act->node, act->key, act->value ? act->value : "",
			      (enum taint_effect)act->effect, act->remove, &st);
		break;
	default:
		break;
	}
	if (a->cfg.ins)
		metric_inc1(rc == 0 && st.code == KUBE_OK ? a->cfg.ins->executed : a->cfg.ins->failed,
			    action_type_str(act->type));
	if (rc == 0 && st.code == KUBE_OK &&
	    ((act->type == ACTION_CORDON && !j->was_cordoned) || action_evicts(act)))
		count_disruption(a, j, act);
	{
		struct log_field f[ACTION_LOG_FIELDS + 2];
		char cnt[24];
		size_t nf = action_log_fields(act, f, cnt);
		bool ok = rc == 0 && st.code == KUBE_OK;

		f[nf++] = (struct log_field){"outcome", ok ? "done" : "failed"};
		f[nf++] = (struct log_field){"error", ok ? NULL : st.message[0] ? st.message : "error"};
		if (ok) {
			act_count(a, &a->st.node_actions);
			log_fields(a->log, LOG_INFO, clock_wall(a->clock), f, nf, "%s done in %.2fs: %s",
				   desc, act_secs_since(a, j->step_start_ns), act->reason);
			{
				char msg[PLAN_MAX_REASON + 400];

				note_event(j, "Normal", "Luascale", disruption_msg(act, msg, sizeof(msg)));
			}
		} else {
			act_count(a, &a->st.actions_failed);
			log_fields(a->log, LOG_WARN, clock_wall(a->clock), f, nf,
				   "%s failed after %.2fs: %s (asked: %s)", desc,
				   act_secs_since(a, j->step_start_ns), st.message[0] ? st.message : "error",
				   act->reason);
		}
	}
}

/*
 * One look at a draining node: first every pod on it, as fetched now, is
 * checked against the rules the plan was checked against (a protected
 * pod, safe-to-evict "false": the cache the plan came from may have been
 * stale); one that may not leave ends the drain before anything is
 * evicted in this pass. Then evicts what must leave (again, for pods a 429
 * refused, once eviction_retry_s has passed); DaemonSet, mirror and static
 * pods are left alone. Returns 1 when the node is empty of pods that must
 * leave, 0 to look again later, -1 when the drain gave up.
 */
static int drain_pass(struct node_job *j)
{
	struct actuator *a = j->a;
	struct kube_pod_ref *pods = NULL;
	struct kube_status st = {KUBE_OK, "", 0};
	size_t n = 0, i, left = 0;
	int64_t now = clock_now(a->clock);
	bool retry = (j->last_evict_ns == 0 ||
		      now - j->last_evict_ns >= a->cfg.eviction_retry_s * CLOCK_NS_PER_S) &&
		     now >= j->hold_until_ns;
	char first[320] = "";

	if (a->kube->ops->node_pods(a->kube->ctx, j->node, &pods, &n, &st) < 0 ||
	    st.code != KUBE_OK) {
		kube_pod_refs_free(pods, n);
		if (st.code == KUBE_NOT_FOUND)
			return 1; /* the node is gone already */
		LOG(a, LOG_WARN, "drain %s: cannot list its pods: %s", j->node, st.message);
		pods = NULL;
		n = 0;
		left = 1;
	}
	for (i = 0; i < n; i++) {
		char why[512];

		if (!pods[i].pod) {
			if (!pods[i].evictable || pods[i].terminating)
				continue;
			snprintf(why, sizeof(why), "its labels and annotations are unknown, so it cannot be checked");
		} else if (!sched_pod_blocks_drain(NULL, pods[i].pod, &a->evict_opts, why, sizeof(why))) {
			continue;
		}
		LOG(a, LOG_WARN, "drain %s gave up: pod %s/%s may not be evicted: %s; %s (%llu pod(s) evicted before)",
		    j->node, pods[i].ns, pods[i].name, why,
		    "nothing evicted in this pass", (unsigned long long)j->evicted);
		kube_pod_refs_free(pods, n);
		return -1;
	}
	for (i = 0; i < n; i++) {
		struct kube_status es = {KUBE_OK, "", 0};
		int64_t wait_s;

		if (!pods[i].evictable)
			continue; /* DaemonSet, mirror, static: as kubectl drain --ignore-daemonsets */
		left++;
		if (!first[0])
			snprintf(first, sizeof(first), "%s/%s", pods[i].ns, pods[i].name);
		if (pods[i].terminating || !retry)
			continue;
		/* asked before each eviction, not once per pass: a pass over a
		 * full node outlasts a lease when writes are rate limited */
		if (a->cfg.may_act && !a->cfg.may_act(a->cfg.may_act_ctx)) {
			LOG(a, LOG_WARN, "drain %s: stopped before evicting %s/%s: not leading any more",
			    j->node, pods[i].ns, pods[i].name);
			break;
		}
		a->kube->ops->evict(a->kube->ctx, pods[i].ns, pods[i].name, a->cfg.eviction_grace_s, &es);
		wait_s = es.retry_after_s > a->cfg.eviction_retry_s ? es.retry_after_s
								    : a->cfg.eviction_retry_s;
		switch (es.code) {
		case KUBE_OK:
		case KUBE_NOT_FOUND:
			j->evicted++;
			act_count(a, &a->st.evictions);
			LOG(a, LOG_INFO, "drain %s: evicted pod %s/%s", j->node, pods[i].ns, pods[i].name);
			break;
		case KUBE_PDB_BLOCKED:
			act_count(a, &a->st.evictions_refused);
			LOG(a, LOG_INFO, "drain %s: a PodDisruptionBudget refused evicting %s/%s for now (%s); retrying in %llds",
			    j->node, pods[i].ns, pods[i].name, es.message[0] ? es.message : "429",
			    (long long)wait_s);
			break;
		case KUBE_THROTTLED:
			act_count(a, &a->st.evictions_throttled);
			LOG(a, LOG_INFO, "drain %s: the API server refused evicting %s/%s for now (%s); retrying in %llds",
			    j->node, pods[i].ns, pods[i].name, es.message[0] ? es.message : "429",
			    (long long)wait_s);
			break;
		default:
			act_count(a, &a->st.evictions_failed);
			LOG(a, LOG_WARN, "drain %s: evicting %s/%s failed: %s", j->node, pods[i].ns,
			    pods[i].name, es.message);
		}
		if (es.retry_after_s > 0 && now + es.retry_after_s * CLOCK_NS_PER_S > j->hold_until_ns)
			j->hold_until_ns = now + es.retry_after_s * CLOCK_NS_PER_S;
	}
	kube_pod_refs_free(pods, n);
	if (retry)
		j->last_evict_ns = now;
	if (left == 0)
		return 1;
	if (now - j->drain_start_ns >= a->cfg.drain_timeout_s * CLOCK_NS_PER_S) {
		LOG(a, LOG_WARN, "drain %s gave up after %.0fs: %zu pod(s) still to leave (first: %s)",
		    j->node, act_secs_since(a, j->drain_start_ns), left, first[0] ? first : "?");
		return -1;
	}
	return 0;
}

/* When a failed terminate is tried again: 10 s doubling up to 5 min after
 * 'attempts' failures, or later when the cloud said Retry-After (which
 * then holds every write to the cloud). Lock held. */
int64_t act_term_retry_at(struct actuator *a, int attempts, const struct provider_status *st,
			     int64_t now)
{
	int64_t d = TERM_RETRY_INITIAL_NS;
	int i;

	for (i = 1; i < attempts && d < TERM_RETRY_MAX_NS; i++)
		d *= 2;
	if (d > TERM_RETRY_MAX_NS)
		d = TERM_RETRY_MAX_NS;
	if (st->retry_after_s > 0) {
		int64_t ra = st->retry_after_s * CLOCK_NS_PER_S;

		if (now + ra > a->cloud_hold_ns)
			a->cloud_hold_ns = now + ra;
		if (ra > d)
			d = ra;
	}
	return now + d;
}

/* A terminate call ended: counted by group and outcome. */
void act_count_termination(struct actuator *a, const char *group, const struct provider_status *st)
{
	if (a->cfg.ins)
		metric_inc2(a->cfg.ins->terminations, group,
			    st->code == PROVIDER_OK ? "ok" : provider_error_str(st->code));
	if (st->code != PROVIDER_OK && st->code != PROVIDER_NOT_FOUND)
		act_count(a, &a->st.terminate_failures);
}

/* Deletes the node object (its instance is gone, or there is none to
 * terminate); the node is remembered as removed until the cache shows it
 * gone. Returns false when the delete failed (logged). */
static bool delete_node_object(struct node_job *j, const struct action *act, bool terminated)
{
	struct actuator *a = j->a;
	struct kube_status st = {KUBE_OK, "", 0};

	a->kube->ops->delete_node(a->kube->ctx, j->node, &st);
	if (st.code != KUBE_OK && st.code != KUBE_NOT_FOUND) {
		act_count(a, &a->st.actions_failed);
		struct log_field f[] = {
			{"action", "delete"}, {"node", j->node}, {"outcome", "failed"},
			{"reason", act->reason}, {"where", act->where}, {"error", st.message},
		};

		if (!terminated) {
			LOGF(a, LOG_WARN, f, "delete %s failed: %s (asked: %s)", j->node, st.message,
			     act->reason);
			give_back(j, "its delete failed");
			return false;
		}
		/* the machine is gone: the node object is an empty shell the
		 * cloud's node controller removes; nothing to give back */
		LOGF(a, LOG_WARN, f, "delete %s: its instance is terminated, but deleting the node "
		     "object failed: %s (the cloud's node lifecycle controller removes it)",
		     j->node, st.message);
	}
	j->deleted = true;
	j->ours = false;
	memo_set(a, MEMO_REMOVED, j->node, j->provider_id);
	act_count(a, &a->st.nodes_deleted);
	if (a->cfg.ins)
		metric_inc1(a->cfg.ins->executed, "delete");
	count_disruption(a, j, act);
	instruments_removed(a->cfg.ins, j->group, act->reason, j->drained ?
			    (double)(clock_now(a->clock) - j->drain_start_ns) / CLOCK_NS_PER_S : -1);
	{
		struct log_field f[] = {
			{"action", "delete"}, {"node", j->node}, {"outcome", "done"},
			{"reason", act->reason}, {"where", act->where},
		};

		LOGF(a, LOG_INFO, f, "delete %s done: %s", j->node, act->reason);
	}
	return true;
}

static void terminate_done(void *ctx, int count_, const struct provider_status *st)
{
	struct node_job *j = ctx;
	struct actuator *a = j->a;
	const struct action *act = &j->actions[j->next];
	int64_t now = clock_now(a->clock), at;
	char msg[PROVIDER_MESSAGE_MAX + 400];

	(void)count_;
	act_count_termination(a, j->group, st);
	if (st->code == PROVIDER_OK || st->code == PROVIDER_NOT_FOUND) {
		LOG(a, LOG_INFO, "instance %s of node %s terminated%s", j->term_id, j->node,
		    st->code == PROVIDER_NOT_FOUND ? " (the cloud no longer had it)" : "");
		delete_node_object(j, act, true);
		job_finish(j);
		return;
	}
	pthread_mutex_lock(&a->mu);
	j->term_attempts++;
	at = act_term_retry_at(a, j->term_attempts, st, now);
	pthread_mutex_unlock(&a->mu);
	snprintf(msg, sizeof(msg), "terminating instance %s failed (attempt %d): %s: %s; the node stays "
		 "cordoned and drained, and is deleted once its instance is gone; retrying in %.0fs",
		 j->term_id, j->term_attempts, provider_error_str(st->code), st->message,
		 (double)(at - now) / CLOCK_NS_PER_S);
	LOG(a, LOG_WARN, "delete %s: %s", j->node, msg);
	note_event(j, "Warning", "LuascaleTerminateFailed", msg);
	if (a->cfg.ins)
		metric_inc1(a->cfg.ins->failed, "terminate");
	job_continue(j, at - now);
}

/* Terminates the node's instance first and deletes the node object once
 * the cloud says it is gone (as Karpenter's finalizer does), so a failed
 * terminate never leaves a billed machine without a node: it is retried
 * (terminate_done). Returns true when the job waits for the cloud. */
static bool delete_node(struct node_job *j, const struct action *act)
{
	struct actuator *a = j->a;
	int64_t now = clock_now(a->clock), hold;
	char group[64], id[128];

	if (!j->terminating) {
		if (!a->prov || !j->provider_id[0] ||
		    a->prov->ops->map_node(a->prov, j->provider_id, group, sizeof(group), id,
					   sizeof(id)) < 0) {
			LOG(a, LOG_WARN, "delete %s: no cloud instance found for providerID \"%s\"; only the node object is removed",
			    j->node, j->provider_id);
			delete_node_object(j, act, false);
			return false;
		}
		snprintf(j->group, sizeof(j->group), "%s", group);
		snprintf(j->term_id, sizeof(j->term_id), "%s", id);
		j->terminating = true;
		LOG(a, LOG_INFO, "delete %s: terminating its instance %s of group %s first", j->node, id,
		    group);
	}
	pthread_mutex_lock(&a->mu);
	hold = a->cloud_hold_ns;
	pthread_mutex_unlock(&a->mu);
	if (now < hold) {
		LOG(a, LOG_INFO, "delete %s: the cloud asked to wait (Retry-After): terminating in %.0fs",
		    j->node, (double)(hold - now) / CLOCK_NS_PER_S);
		job_continue(j, hold - now);
		return true;
	}
	{
		const char *ids[1] = {j->term_id};

		/* the job stays alive until the provider calls back */
		a->prov->ops->terminate(a->prov, j->group, ids, 1, terminate_done, j);
	}
	return true;
}

/* The drain of a job ended (done or given up): its slot goes to the next. */
static void drain_ended(struct node_job *j)
{
	pthread_mutex_lock(&j->a->mu);
	release_slot(j);
	pthread_mutex_unlock(&j->a->mu);
}

static void node_step(void *arg, bool cancelled)
{
	struct node_job *j = arg;
	struct actuator *a = j->a;
	const struct action *act;

	pthread_mutex_lock(&a->mu);
	if (a->stopping)
		cancelled = true;
	pthread_mutex_unlock(&a->mu);
	if (cancelled) {
		job_abandon(j, "at shutdown");
		return;
	}
	if (a->cfg.may_act && !a->cfg.may_act(a->cfg.may_act_ctx)) {
		job_drop(j);
		return;
	}
	if (j->release) {
		give_back(j, "no removal of it is running (luascale cordoned it earlier, e.g. before a restart)");
		job_finish(j);
		return;
	}
	while (j->next < j->n) {
		act = &j->actions[j->next];
		if (!j->draining) {
			j->step_start_ns = clock_now(a->clock);
			LOG(a, LOG_DEBUG, "node %s: step %zu of %zu: %s", j->node, j->next + 1, j->n,
			    action_type_str(act->type));
		}
		if (!a->kube) {
			LOG(a, LOG_WARN, "%s %s skipped: no Kubernetes client", action_type_str(act->type), j->node);
			act_count(a, &a->st.actions_failed);
			j->next++;
			continue;
		}
		if (act->type == ACTION_DRAIN || (act->type == ACTION_DELETE && !j->drained)) {
			int r;

			if (j->drain_failed) {
				LOG(a, LOG_WARN, "%s %s not done: the drain did not finish (asked: %s)",
				    action_type_str(act->type), j->node, act->reason);
				act_count(a, &a->st.actions_failed);
				j->next++;
				continue;
			}
			if (!j->draining) {
				struct kube_status cs = {KUBE_OK, "", 0};

				j->drain_start_ns = clock_now(a->clock);
				j->last_evict_ns = 0;
				j->hold_until_ns = 0;
				j->evicted = 0;
				/* cordon first, as kubectl drain does: evicted pods
				 * must not come back to this node; without the
				 * cordon there is no drain */
				if (removal_cordon(j, &cs) < 0) {
					LOG(a, LOG_WARN, "drain %s aborted: cordon failed: %s; no pod evicted (asked: %s)",
					    j->node, cs.message[0] ? cs.message : "error", act->reason);
					note_event(j, "Warning", "LuascaleDrainFailed", "cordon failed: drain aborted");
					act_count(a, &a->st.drains_failed);
					drain_ended(j);
					j->drain_failed = true;
					if (act->type == ACTION_DRAIN)
						j->next++;
					continue;
				}
				j->draining = true;
				{
					struct log_field f[] = {
						{"action", "drain"}, {"node", j->node}, {"outcome", "started"},
						{"reason", act->reason}, {"where", act->where},
					};

					LOGF(a, LOG_INFO, f, "drain %s: started (%s)", j->node, act->reason);
				}
				{
					char msg[PLAN_MAX_REASON + 400];

					note_event(j, "Normal", "LuascaleDrain",
						   disruption_msg(act, msg, sizeof(msg)));
				}
			}
			r = drain_pass(j);
			if (r == 0) {
				job_continue(j, a->cfg.drain_poll_s * CLOCK_NS_PER_S);
				return;
			}
			j->draining = false;
			drain_ended(j);
			if (r < 0) {
				j->drain_failed = true;
				act_count(a, &a->st.drains_failed);
				if (a->cfg.ins)
					metric_inc1(a->cfg.ins->failed, "drain");
				note_event(j, "Warning", "LuascaleDrainFailed", "drain gave up");
				give_back(j, "its drain gave up");
				if (act->type == ACTION_DRAIN)
					j->next++;
				continue;
			}
			j->drained = true;
			act_count(a, &a->st.drains_done);
			if (a->cfg.ins)
				metric_inc1(a->cfg.ins->executed, "drain");
			count_disruption(a, j, act);
			{
				struct log_field f[] = {
					{"action", "drain"}, {"node", j->node}, {"outcome", "done"},
					{"reason", act->reason}, {"where", act->where},
				};

				LOGF(a, LOG_INFO, f, "drain %s done in %.1fs: %llu pod(s) evicted", j->node,
				     act_secs_since(a, j->drain_start_ns), (unsigned long long)j->evicted);
			}
			if (act->type == ACTION_DRAIN)
				j->next++;
			continue;
		}
		if (act->type == ACTION_DELETE) {
			if (!j->terminating) {
				char msg[PLAN_MAX_REASON + 400];

				note_event(j, "Normal", "LuascaleDelete", disruption_msg(act, msg, sizeof(msg)));
			}
			if (delete_node(j, act))
				return; /* terminate_done ends the job, or retries */
			j->next++;
			continue;
		}
		simple_action(j, act);
		j->next++;
	}
	if (j->removal && !j->deleted && !j->drain_failed && j->drained && j->ours) {
		/* drained, and the plan asked for no delete: the node stays
		 * cordoned as the plan's, no longer a cordon to give back */
		struct kube_status st = {KUBE_OK, "", 0};

		if (mark_cordon(j, true, false, &st) < 0)
			LOG(a, LOG_WARN, "node %s: drained, but removing the %s annotation failed: %s; it will be uncordoned when luascale next sees it",
			    j->node, ACTUATOR_CORDON_MARK, st.message);
		j->ours = false;
	}
	job_finish(j);
}

/* Forgets a deferred removal (it started). Lock held. */
static void deferred_drop(struct actuator *a, const char *node)
{
	struct deferred **pp, *d;

	for (pp = &a->deferred; (d = *pp); pp = &d->next)
		if (strcmp(d->name, node) == 0) {
			*pp = d->next;
			free(d);
			return;
		}
}

/* A round begins (mark) or ends (sweep): removals no plan deferred again
 * this round are forgotten, so a node deferred later is said again. */
void act_deferred_round(struct actuator *a, bool begin)
{
	struct deferred **pp, *d;

	pthread_mutex_lock(&a->mu);
	for (pp = &a->deferred; (d = *pp);) {
		if (begin) {
			d->seen = false;
			pp = &d->next;
		} else if (!d->seen) {
			*pp = d->next;
			free(d);
		} else {
			pp = &d->next;
		}
	}
	pthread_mutex_unlock(&a->mu);
}

/* Adds 'node' to the busy list. Lock held. */
static void busy_add(struct actuator *a, const char *node, bool removing)
{
	struct busy_node *b = calloc(1, sizeof(*b));

	if (b) {
		snprintf(b->name, sizeof(b->name), "%s", node);
		b->removing = removing;
		b->next = a->busy_nodes;
		a->busy_nodes = b;
	}
}

/* Starts the job of 'node''s actions in 'p'. Returns 1 when it runs, 0
 * when it was not started (dropped, skipped or deferred: logged), -1 on
 * failure (logged). */
int act_start_node_job(struct actuator *a, const struct plan *p, const struct snapshot *s,
			  const char *node)
{
	struct node_job *j = calloc(1, sizeof(*j));
	struct memo *m;
	size_t i, k = 0, n = 0;
	int32_t idx;

	if (!j)
		return -1;
	for (i = 0; i < p->n_actions; i++)
		if (p->actions[i].node && strcmp(p->actions[i].node, node) == 0)
			n++;
	j->actions = calloc(n ? n : 1, sizeof(*j->actions));
	if (!j->actions) {
		free(j);
		return -1;
	}
	j->a = a;
	snprintf(j->node, sizeof(j->node), "%s", node);
	idx = s ? snapshot_find_node(s, node) : -1;
	if (idx >= 0) {
		const char *mark = kvlist_get(&s->nodes[idx].annotations, ACTUATOR_CORDON_MARK);

		snprintf(j->provider_id, sizeof(j->provider_id), "%s", s->nodes[idx].provider_id);
		if (s->nodes[idx].group >= 0)
			snprintf(j->node_group, sizeof(j->node_group), "%s",
				 s->groups[s->nodes[idx].group].name);
		j->was_cordoned = s->nodes[idx].unschedulable;
		j->marked = mark && strcmp(mark, ACTUATOR_CORDON_MARK_VALUE) == 0;
	}
	for (i = 0; i < p->n_actions; i++)
		if (p->actions[i].node && strcmp(p->actions[i].node, node) == 0)
			if (action_copy(&j->actions[k], &p->actions[i]) == 0)
				k++;
	j->n = k;
	for (i = 0; i < j->n; i++)
		if (j->actions[i].type == ACTION_DRAIN || j->actions[i].type == ACTION_DELETE)
			j->removal = true;
	pthread_mutex_lock(&a->mu);
	m = act_memo_find(a, node);
	if (m && m->kind == MEMO_REMOVED) {
		char when[32];

		a->st.actions_dropped += j->n;
		pthread_mutex_unlock(&a->mu);
		model_format_time(m->at, when, sizeof(when));
		LOG(a, LOG_INFO, "node %s: %zu action(s) dropped: luascale deleted it at %s and terminated its instance; the cluster cache does not show that yet",
		    node, j->n, when);
		job_free(j);
		return 0;
	}
	if (act_busy_find(a, node)) {
		/* one job per node: an earlier plan's actions are still running */
		a->st.actions_abandoned += j->n;
		pthread_mutex_unlock(&a->mu);
		LOG(a, LOG_WARN, "node %s: %zu action(s) skipped: actions of an earlier round are still running on it",
		    node, j->n);
		job_free(j);
		return 0;
	}
	if (j->removal) {
		if (a->drains >= a->cfg.max_concurrent_drains) {
			int64_t running = a->drains;
			struct deferred *d;
			bool first = false;

			a->st.drains_deferred++;
			for (d = a->deferred; d && strcmp(d->name, node) != 0; d = d->next)
				;
			if (!d && (d = calloc(1, sizeof(*d)))) {
				snprintf(d->name, sizeof(d->name), "%s", node);
				d->next = a->deferred;
				a->deferred = d;
				first = true;
			}
			if (d)
				d->seen = true;
			pthread_mutex_unlock(&a->mu);
			/* said once when it starts waiting; each round after at debug level */
			LOG(a, first ? LOG_INFO : LOG_DEBUG, "node %s: removal not started%s: max_concurrent_drains (%lld) reached, %lld drain(s) running; its %zu action(s) are left for a later round",
			    node, first ? "" : " again", (long long)a->cfg.max_concurrent_drains,
			    (long long)running, j->n);
			job_free(j);
			return 0;
		}
		deferred_drop(a, node);
		a->drains++;
		j->holds_slot = true;
	}
	busy_add(a, node, j->removal);
	a->st.busy++;
	pthread_mutex_unlock(&a->mu);
	if (executor_submit(a->ex, node_step, j) < 0) {
		LOG(a, LOG_WARN, "node %s: %zu action(s) not started: the work queue is full or shutting down",
		    node, j->n);
		pthread_mutex_lock(&a->mu);
		a->st.actions_abandoned += j->n;
		pthread_mutex_unlock(&a->mu);
		job_finish(j);
		return -1;
	}
	return 1;
}

/* Starts a job that gives back the cordon luascale left on 'node'. */
void act_start_release(struct actuator *a, const char *node, const char *provider_id,
			  const char *since)
{
	struct node_job *j = calloc(1, sizeof(*j));

	if (!j)
		return;
	j->a = a;
	j->release = true;
	j->ours = true;
	snprintf(j->node, sizeof(j->node), "%s", node);
	snprintf(j->provider_id, sizeof(j->provider_id), "%s", provider_id);
	pthread_mutex_lock(&a->mu);
	if (act_busy_find(a, node)) {
		pthread_mutex_unlock(&a->mu);
		free(j);
		return;
	}
	busy_add(a, node, false);
	a->st.busy++;
	pthread_mutex_unlock(&a->mu);
	LOG(a, LOG_INFO, "node %s: luascale cordoned it%s%s for a removal that is not running; uncordoning it",
	    node, since[0] ? " at " : "", since);
	if (executor_submit(a->ex, node_step, j) < 0)
		job_finish(j);
}

/* An Event on node 'node' (no job of it running, e.g. a replace's). */
void act_node_event(struct actuator *a, const char *node, const char *type, const char *reason,
		       const char *msg)
{
	if (a->kube && a->kube->ops->event && (!a->cfg.may_act || a->cfg.may_act(a->cfg.may_act_ctx)))
		a->kube->ops->event(a->kube->ctx, node, type, reason, msg);
}

/*
 * A replace: asks for the new node and remembers the replace; the old
 * node is left as it is until the new node is Ready (actuator_observe).
 * Returns 0, or -1 when it could not start (logged).
 */
int act_start_replace(struct actuator *a, const struct action *act, const struct snapshot *s)
{
	struct replacement *r = calloc(1, sizeof(*r));
	int32_t idx = s ? snapshot_find_node(s, act->node) : -1;
	struct memo *m;
	const char *skip = NULL;

	if (!r || action_copy(&r->act, act) < 0) {
		free(r);
		LOG(a, LOG_WARN, "replace %s not started: out of memory", act->node);
		return -1;
	}
	snprintf(r->node, sizeof(r->node), "%s", act->node);
	if (idx >= 0 && s->nodes[idx].group >= 0)
		snprintf(r->node_group, sizeof(r->node_group), "%s", s->groups[s->nodes[idx].group].name);
	r->started = clock_wall(a->clock);
	pthread_mutex_lock(&a->mu);
	m = act_memo_find(a, act->node);
	if (m && m->kind == MEMO_REMOVED)
		skip = "luascale deleted it already; the cluster cache does not show that yet";
	else if (act_busy_find(a, act->node))
		skip = "actions of an earlier round are still running on it";
	else if (act_rep_find(a, act->node))
		skip = "a replace of it is under way already";
	if (!skip) {
		r->next = a->replacements;
		a->replacements = r;
	} else {
		a->st.actions_abandoned++;
	}
	pthread_mutex_unlock(&a->mu);
	if (skip) {
		LOG(a, LOG_WARN, "replace %s skipped: %s", act->node, skip);
		act_rep_free(r);
		return 0;
	}
	{
		struct log_field f[ACTION_LOG_FIELDS + 1];
		char cnt[24];
		size_t nf = action_log_fields(act, f, cnt);

		f[nf++] = (struct log_field){"outcome", "started"};
		log_fields(a->log, LOG_INFO, clock_wall(a->clock), f, nf,
			   "replace %s: asking for a node of group %s; %s stays as it is until that one is Ready (%s)",
			   act->node, act->group, act->node, act->reason);
	}
	if (a->cfg.ins)
		metric_inc2(a->cfg.ins->replacements, r->node_group[0] ? r->node_group : "unknown",
			    "started");
	pthread_mutex_lock(&a->mu);
	a->st.replaces_started++;
	pthread_mutex_unlock(&a->mu);
	{
		char msg[PLAN_MAX_REASON + 800];

		snprintf(msg, sizeof(msg), "replacing it with a node of group %s; it stays as it is until that one is Ready (%s; disruption: %s; budget: %s)",
			 act->group, act->reason, act->disruption ? act->disruption : "underutilized",
			 act->budget ? act->budget : "none limits it");
		act_node_event(a, act->node, "Normal", "LuascaleReplace", msg);
	}
	if (act_start_launch(a, act, "", 0, s, act->node) < 0) {
		/* the next actuator_observe() says it failed */
		pthread_mutex_lock(&a->mu);
		act_rep_fail(a, act->node, "its new node's launch could not be queued (out of memory, or the work queue is full)");
		pthread_mutex_unlock(&a->mu);
		return -1;
	}
	return 0;
}
