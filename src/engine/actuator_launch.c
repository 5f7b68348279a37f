/*
 * actuator: launches: asking the cloud for instances and following each one
 * until its node is Ready (or the launch fails and the group backs off).
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

/* ---- launches ---- */

/* An instance this launch reported that the cloud gave back: it is no
 * longer upcoming capacity (its launch's on_done says why). */
static void on_instance_gone(struct launch *l, const struct provider_instance *inst)
{
	struct actuator *a = l->a;
	struct flight **pp, *f;
	bool found = false;

	pthread_mutex_lock(&a->mu);
	for (pp = &a->flights; (f = *pp); pp = &f->next)
		if (!f->terminating && strcmp(f->group, l->group) == 0 && strcmp(f->id, inst->id) == 0) {
			*pp = f->next;
			if (f->replace_of[0]) {
				char why[300];

				snprintf(why, sizeof(why), "the cloud gave back its new instance %s", f->id);
				act_rep_fail(a, f->replace_of, why);
			}
			free(f);
			found = true;
			break;
		}
	if (found)
		l->given_back++;
	pthread_mutex_unlock(&a->mu);
	if (found)
		LOG(a, LOG_INFO, "instance %s of group %s was given back by the cloud; no longer upcoming",
		    inst->id, l->group);
}

static void on_instance(void *ctx, const struct provider_instance *inst)
{
	struct launch *l = ctx;
	struct actuator *a = l->a;
	struct flight *f;
	struct gstate *g;

	if (inst->state == INSTANCE_GONE) {
		on_instance_gone(l, inst);
		return;
	}
	f = calloc(1, sizeof(*f));
	pthread_mutex_lock(&a->mu);
	if (f) {
		snprintf(f->group, sizeof(f->group), "%s", l->group);
		snprintf(f->id, sizeof(f->id), "%s", inst->id);
		snprintf(f->provider_id, sizeof(f->provider_id), "%s", inst->provider_id);
		memcpy(f->pods, l->pods, sizeof(f->pods));
		f->launched = clock_wall(a->clock);
		f->launch_seq = l->seq;
		if (l->replace_of[0]) {
			struct replacement *r = act_rep_find(a, l->replace_of);

			memcpy(f->replace_of, l->replace_of, sizeof(f->replace_of));
			if (r && r->state == REP_ASKED) {
				snprintf(r->inst, sizeof(r->inst), "%s", inst->id);
				r->state = REP_BOOTING;
			}
		}
		f->next = a->flights;
		a->flights = f;
	}
	g = act_group_state(a, l->group);
	if (g && g->requested > 0)
		g->requested--;
	l->created++;
	a->st.instances_created++;
	pthread_mutex_unlock(&a->mu);
	if (l->hook)
		a->cfg.hooks->instance(a->cfg.hooks->ctx, l->hook, inst);
	if (a->cfg.ins)
		metric_inc1(a->cfg.ins->launched, l->group);
	LOG(a, LOG_INFO, "instance %s of group %s exists, %.1fs after the request (%d of %d)%s%s",
	    inst->id, l->group, act_secs_since(a, l->start_ns), l->created, l->count,
	    l->pods[0] ? "; for pods " : "", l->pods);
}

static void on_launch_done(void *ctx, int count, const struct provider_status *st)
{
	struct launch *l = ctx;
	struct actuator *a = l->a;
	struct gstate *g;
	int64_t delay = 0;
	int missing, kept;

	(void)count;
	pthread_mutex_lock(&a->mu);
	g = act_group_state(a, l->group);
	missing = l->count - l->created;
	kept = l->created - l->given_back;
	if (g) {
		g->requested -= missing;
		if (g->requested < 0)
			g->requested = 0;
	}
	if (st->code != PROVIDER_OK) {
		a->st.launch_failures++;
		if (st->retry_after_s > 0 &&
		    clock_now(a->clock) + st->retry_after_s * CLOCK_NS_PER_S > a->cloud_hold_ns)
			a->cloud_hold_ns = clock_now(a->clock) + st->retry_after_s * CLOCK_NS_PER_S;
		if (g && act_launch_failure_backs_off(st->code) && g->backed_off_seq != l->seq) {
			delay = act_back_off(a, g, st->message[0] ? st->message : provider_error_str(st->code));
			g->backed_off_seq = l->seq;
		}
	} else if (g && missing == 0 && l->given_back == 0) {
		g->failures = 0;
	}
	if (l->replace_of[0] && kept <= 0) {
		char why[420];

		snprintf(why, sizeof(why), "its new node's launch in group %s failed: %.290s", l->group,
			 st->code == PROVIDER_OK ? "the cloud made no instance"
			 : st->message[0] ? st->message : provider_error_str(st->code));
		act_rep_fail(a, l->replace_of, why);
	}
	a->st.busy--;
	l->call_start_ns = 0;
	pthread_mutex_unlock(&a->mu);
	if (a->cfg.ins && st->code != PROVIDER_CANCELLED) {
		metric_inc2(a->cfg.ins->launches, l->group,
			    st->code != PROVIDER_OK ? provider_error_str(st->code) : missing || l->given_back ? "partial" : "ok");
		metric_inc1(st->code == PROVIDER_OK && missing == 0 && !l->given_back ? a->cfg.ins->executed : a->cfg.ins->failed,
			    "scale_up");
	} else if (a->cfg.ins) {
		metric_inc1(a->cfg.ins->failed, "scale_up");
	}
	{
		char cnt[16], made[16];
		bool ok = st->code == PROVIDER_OK && missing == 0 && l->given_back == 0;
		struct log_field f[] = {
			{"action", "scale_up"}, {"group", l->group}, {"count", cnt}, {"created", made},
			{"outcome", ok ? "done" : "failed"}, {"reason", l->reason},
			{"error", ok ? NULL : st->message[0] ? st->message : provider_error_str(st->code)},
		};

		snprintf(cnt, sizeof(cnt), "%d", l->count);
		snprintf(made, sizeof(made), "%d", kept);
		if (ok)
			LOGF(a, LOG_INFO, f, "scale_up %s +%d done in %.1fs: %d instance(s) created (%s)",
			     l->group, l->count, act_secs_since(a, l->start_ns), l->created, l->reason);
		else if (delay > 0)
			LOGF(a, LOG_WARN, f, "scale_up %s +%d failed after %.1fs: %d of %d created; %s: %s; group backed off for %llds",
			     l->group, l->count, act_secs_since(a, l->start_ns), kept, l->count,
			     provider_error_str(st->code), st->message, (long long)delay);
		else
			LOGF(a, LOG_WARN, f, "scale_up %s +%d ended after %.1fs with %d of %d created; %s: %s",
			     l->group, l->count, act_secs_since(a, l->start_ns), kept, l->count,
			     provider_error_str(st->code), st->message);
	}
	if (l->hook)
		a->cfg.hooks->done(a->cfg.hooks->ctx, l->hook);
	act_launch_free(l);
}

static void launch_task(void *arg, bool cancelled)
{
	struct launch *l = arg;
	struct actuator *a = l->a;

	bool lost = !cancelled && a->cfg.may_act && !a->cfg.may_act(a->cfg.may_act_ctx);

	if (cancelled || lost || !a->prov) {
		struct provider_status st = {.code = cancelled || lost ? PROVIDER_CANCELLED : PROVIDER_INVALID};

		snprintf(st.message, sizeof(st.message), "%s",
			 cancelled ? "shut down before the launch was made"
			 : lost ? "not leading any more: the launch was not made"
				: "no cloud provider configured");
		if (lost)
			LOG(a, LOG_WARN, "scale_up %s +%d not started: this process no longer leads (%s)",
			    l->group, l->count, l->reason);
		if (cancelled || lost) {
			pthread_mutex_lock(&a->mu);
			a->st.actions_abandoned++;
			pthread_mutex_unlock(&a->mu);
		}
		on_launch_done(l, 0, &st);
		return;
	}
	{
		int64_t now = clock_now(a->clock), hold;

		pthread_mutex_lock(&a->mu);
		hold = a->cloud_hold_ns;
		pthread_mutex_unlock(&a->mu);
		if (now < hold && executor_after(a->ex, hold - now, launch_task, l) == 0) {
			LOG(a, LOG_INFO, "scale_up %s +%d: the cloud asked to wait (Retry-After): asking in %.0fs",
			    l->group, l->count, (double)(hold - now) / CLOCK_NS_PER_S);
			return;
		}
	}
	{
		char cnt[16], types[512] = "";
		struct log_field f[] = {
			{"action", "scale_up"}, {"group", l->group}, {"count", cnt},
			{"outcome", "started"}, {"reason", l->reason}, {"instance_types", types},
		};
		size_t i, k = 0;

		snprintf(cnt, sizeof(cnt), "%d", l->count);
		for (i = 0; i < l->n_types && k < sizeof(types); i++)
			k += (size_t)snprintf(types + k, sizeof(types) - k, "%s%s", i ? "," : "", l->types[i]);
		/* the instance_types field only when the plan named some */
		log_fields(a->log, LOG_INFO, clock_wall(a->clock), f,
			   sizeof(f) / sizeof(f[0]) - (l->n_types ? 0 : 1),
			   "scale_up %s +%d%s%s: asking the cloud (%s)", l->group, l->count,
			   l->n_types ? " of " : "", types, l->reason);
	}
	pthread_mutex_lock(&a->mu);
	l->call_start_ns = clock_now(a->clock);
	pthread_mutex_unlock(&a->mu);
	if (a->cfg.ins && l->oldest_pod > 0 && clock_wall(a->clock) >= l->oldest_pod)
		metric_observe0(a->cfg.ins->pending_to_launch, (double)(clock_wall(a->clock) - l->oldest_pod));
	if (l->n_types && a->prov->ops->launch_types)
		a->prov->ops->launch_types(a->prov, l->group, l->count, (const char *const *)l->types,
					   l->n_types, on_instance, on_launch_done, l);
	else
		a->prov->ops->launch(a->prov, l->group, l->count, on_instance, on_launch_done, l);
}

int act_start_launch(struct actuator *a, const struct action *act, const char *pods,
			int64_t oldest_pod, const struct snapshot *s, const char *replace_of)
{
	struct launch *l = calloc(1, sizeof(*l));
	struct gstate *g;

	if (!l)
		return -1;
	if (act->n_instance_types) {
		size_t i;

		l->types = calloc(act->n_instance_types, sizeof(*l->types));
		for (i = 0; l->types && i < act->n_instance_types; i++, l->n_types++)
			if (!(l->types[i] = strdup(act->instance_types[i])))
				break;
		if (l->n_types < act->n_instance_types) {
			act_launch_free(l);
			return -1;
		}
	}
	l->a = a;
	pthread_mutex_lock(&a->mu);
	l->seq = ++a->launch_seq;
	pthread_mutex_unlock(&a->mu);
	/* a replace's new node is for the old node's pods, not for a packing */
	if (a->cfg.hooks && s && !replace_of)
		l->hook = a->cfg.hooks->planned(a->cfg.hooks->ctx, act->group, (int)act->count, s);
	snprintf(l->group, sizeof(l->group), "%s", act->group);
	l->count = replace_of ? 1 : (int)act->count;
	l->start_ns = clock_now(a->clock);
	if (replace_of) {
		snprintf(l->replace_of, sizeof(l->replace_of), "%s", replace_of);
		snprintf(l->reason, sizeof(l->reason), "to replace node %s: %s", replace_of, act->reason);
	} else {
		snprintf(l->reason, sizeof(l->reason), "%s", act->reason);
	}
	snprintf(l->pods, sizeof(l->pods), "%s", pods);
	l->oldest_pod = oldest_pod;
	pthread_mutex_lock(&a->mu);
	g = act_group_state(a, l->group);
	if (g)
		g->requested += l->count;
	a->st.launch_requests++;
	a->st.busy++;
	pthread_mutex_unlock(&a->mu);
	if (executor_submit(a->ex, launch_task, l) < 0) {
		struct provider_status st = {.code = PROVIDER_CANCELLED, .message = "the work queue is full or shutting down"};

		on_launch_done(l, 0, &st);
		return -1;
	}
	return 0;
}
