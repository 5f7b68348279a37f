/*
 * actuator: carries out checked plans and keeps track of what is in flight.
 * Launches and node jobs are tasks on the executor; callbacks from the
 * provider may arrive on any thread, so the state is under one mutex, never
 * held while calling out (provider, kubeops, logger). It also remembers the
 * nodes it deleted and the cordons it gave back until the cache catches up.
 */
#include "engine/actuator.h"

#include "config.h"
#include "sched.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An instance the cloud created that is not a Ready node yet. */
struct flight {
	char group[64];
	char id[128];
	char provider_id[256];
	char pods[256];    /* the pods it was launched for (as the plan saw them) */
	int64_t launched;  /* wall seconds */
	uint64_t launch_seq; /* the launch request that made it */
	struct actuator *a;  /* on the doomed list: its actuator */
	bool terminating;  /* given up: being terminated, no longer capacity */
	/* on the doomed list (an instance to terminate that has no node) */
	int attempts;      /* terminate calls that failed */
	int64_t next_try_ns; /* no call before this (backoff, Retry-After) */
	bool in_call;      /* a terminate call is out */
	bool orphan;       /* found by the sweep, not launched by this process */
	char why[420];     /* why it is terminated */
	char replace_of[256]; /* the node it replaces (a replace's new node), "" none */
	struct flight *next;
};

/* What the actuator knows of a node group. */
struct gstate {
	char name[64];
	int failures;          /* consecutive failed launches */
	int64_t backoff_until; /* wall seconds */
	uint64_t backed_off_seq; /* the launch request it was last backed off for: one
				  * request backs off once, however many of its
				  * instances fail */
	char reason[160];
	int requested;         /* asked for by running launches, not created yet */
	struct gstate *next;
};

struct launch {
	struct actuator *a;
	char group[64];
	int count;
	int created;
	int given_back; /* reported, then given back by the cloud (INSTANCE_GONE) */
	int64_t start_ns;
	char reason[256];
	char pods[256]; /* unschedulable pods when the plan was made: "ns/a, ns/b and 3 more" */
	int64_t oldest_pod;   /* wall seconds: the oldest of them was created, 0: none */
	int64_t call_start_ns;/* the cloud was asked, 0: not yet */
	void *hook;           /* the launch hooks' token, NULL: none */
	uint64_t seq;         /* this request's number (from 1) */
	char **types;         /* the instance types the plan accepts; NULL: any */
	size_t n_types;
	char replace_of[256]; /* a replace's launch: the node it replaces; "" none */
};

static void launch_free(struct launch *l)
{
	size_t i;

	for (i = 0; i < l->n_types; i++)
		free(l->types[i]);
	free(l->types);
	free(l);
}

struct node_job {
	struct actuator *a;
	char node[256];
	char provider_id[256];
	char group[64];        /* its instance's group, once a delete maps it */
	char node_group[64];   /* its node's group in the plan's snapshot, "" when none */
	struct action *actions;
	size_t n, next;
	bool removal;          /* it drains or deletes the node */
	bool release;          /* it only gives back a cordon luascale left behind */
	bool holds_slot;       /* counts against max_concurrent_drains */
	bool was_cordoned;     /* unschedulable in the snapshot the plan was made on */
	bool marked;           /* ... and carrying luascale's cordon mark */
	bool ours;             /* cordoned by luascale (with the mark): give it back
				* if the removal does not finish */
	bool deleted;          /* the node object is gone */
	bool drained;          /* a drain of this job finished */
	bool drain_failed;
	bool draining;
	int64_t drain_start_ns;
	int64_t last_evict_ns;
	int64_t hold_until_ns; /* no eviction before this (a 429's retryAfterSeconds) */
	uint64_t evicted;
	int64_t step_start_ns;
	bool terminating;      /* its delete asked the cloud to terminate the instance */
	int term_attempts;     /* terminate calls that failed */
	char term_id[128];     /* the instance being terminated */
};

/* An instance as the cloud last listed it. */
struct cloud_inst {
	char group[64];
	char id[128];
	int64_t launched_wall;
	enum instance_state state;
};

/* A failed terminate is tried again after 10 s, doubling up to 5 min (or
 * when the cloud's Retry-After says). */
#define TERM_RETRY_INITIAL_NS (10 * CLOCK_NS_PER_S)
#define TERM_RETRY_MAX_NS (5 * 60 * CLOCK_NS_PER_S)

/* The sweep never terminates more than this share of a group's listed
 * instances at once (above 2): that many nodes missing at once looks like
 * a cache or mapping fault, not orphans. */
#define SWEEP_MAX_SHARE 0.5

/* A removal not started for want of a drain slot: logged once when it
 * starts waiting, not every round. */
struct deferred {
	char name[256];
	bool seen;               /* deferred again in this round */
	struct deferred *next;
};

/* A node with a job running (its actions of an earlier plan). */
struct busy_node {
	char name[256];
	bool removing; /* the job drains or deletes it */
	struct busy_node *next;
};

/*
 * A replace under way. The new node is asked for (REP_ASKED), then its
 * instance exists (REP_BOOTING); once it is a Ready node (REP_READY) the
 * old node's removal (cordon, drain, delete) starts as a node job, and
 * the replace is over. Until then the old node is untouched. A launch
 * that fails or an instance not Ready in max_provision_s ends it
 * (REP_FAILED); so does the old node going away (REP_GONE).
 */
enum rep_state { REP_ASKED, REP_BOOTING, REP_READY, REP_FAILED, REP_GONE };

struct replacement {
	char node[256];        /* the node replaced */
	char node_group[64];   /* its group (the snapshot's) */
	struct action act;     /* the plan's replace (owned) */
	char inst[128];        /* the new instance, once it exists */
	char new_node[256];    /* the new node, once Ready */
	enum rep_state state;
	char why[420];         /* REP_FAILED: why */
	int64_t started;       /* wall seconds */
	struct replacement *next;
};

static void rep_free(struct replacement *r)
{
	action_free(&r->act);
	free(r);
}

/* What the cache may not show yet: a node deleted, or a cordon given back. */
enum memo_kind {
	MEMO_REMOVED,  /* deleted (and its instance terminated): never act on it again */
	MEMO_RELEASED, /* uncordoned and unmarked: do not give it back again */
};

struct memo {
	enum memo_kind kind;
	char name[256];
	char provider_id[256];
	int64_t at; /* wall seconds */
	struct memo *next;
};

struct actuator {
	pthread_mutex_t mu;
	struct busy_node *busy_nodes;
	struct executor *ex;
	struct clock *clock;
	struct provider *prov;
	const struct kubeops *kube;
	struct actuator_config cfg;
	const struct logger *log;
	struct flight *flights;
	struct flight *doomed;      /* instances without a node to terminate, retried until gone */
	struct flight *gone;        /* terminated: not swept again while the cloud still lists them */
	struct cloud_inst *cloud;   /* the instances the cloud last listed (the orphan sweep) */
	size_t n_cloud;
	bool cloud_known;
	int64_t cloud_hold_ns;      /* the cloud said Retry-After: no write to it before this */
	struct gstate *groups;
	struct deferred *deferred;  /* removals waiting for a drain slot (logged once) */
	uint64_t launch_seq;        /* launch requests made (their numbers) */
	struct memo *memos;
	struct replacement *replacements; /* replaces under way */
	int64_t drains;            /* jobs holding a drain slot */
	bool stopping;             /* actuator_stop(): node jobs end at their next step */
	struct drain_opts evict_opts; /* what every eviction is checked against */
	struct actuator_stats st;
	uint64_t rng;
};

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

#define LOG(a, lvl, ...) log_at((a)->log, (lvl), clock_wall((a)->clock), __VA_ARGS__)
/* A line with an action's fields (log_fields): 'f' an array of them. */
#define LOGF(a, lvl, f, ...) \
	log_fields((a)->log, (lvl), clock_wall((a)->clock), (f), sizeof(f) / sizeof((f)[0]), __VA_ARGS__)

static double secs_since(struct actuator *a, int64_t start_ns)
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
		rep_free(r);
	}
	pthread_mutex_destroy(&a->mu);
	free(a);
}

/* The group's state, created on first use. Called with the lock held. */
static struct gstate *group_state(struct actuator *a, const char *name)
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
static struct replacement *rep_find(struct actuator *a, const char *node)
{
	struct replacement *r;

	for (r = a->replacements; r; r = r->next)
		if (strcmp(r->node, node) == 0)
			return r;
	return NULL;
}

/* Ends the replace of 'node' while it waits for its new node (asked for
 * or booting) with 'why'. Lock held. */
static void rep_fail(struct actuator *a, const char *node, const char *why)
{
	struct replacement *r = rep_find(a, node);

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
static bool launch_failure_backs_off(enum provider_error e)
{
	return e != PROVIDER_OK && e != PROVIDER_THROTTLED && e != PROVIDER_CANCELLED;
}

/* Backs a group off after a failure. Lock held. Returns the delay (s). */
static int64_t back_off(struct actuator *a, struct gstate *g, const char *reason)
{
	int64_t delay_ns;

	g->failures++;
	delay_ns = backoff_delay(&a->cfg.group_backoff, g->failures, &a->rng);
	g->backoff_until = clock_wall(a->clock) + (delay_ns + CLOCK_NS_PER_S - 1) / CLOCK_NS_PER_S;
	snprintf(g->reason, sizeof(g->reason), "%.*s", (int)sizeof(g->reason) - 1, reason);
	return (delay_ns + CLOCK_NS_PER_S - 1) / CLOCK_NS_PER_S;
}

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
				rep_fail(a, f->replace_of, why);
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
			struct replacement *r = rep_find(a, l->replace_of);

			memcpy(f->replace_of, l->replace_of, sizeof(f->replace_of));
			if (r && r->state == REP_ASKED) {
				snprintf(r->inst, sizeof(r->inst), "%s", inst->id);
				r->state = REP_BOOTING;
			}
		}
		f->next = a->flights;
		a->flights = f;
	}
	g = group_state(a, l->group);
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
	    inst->id, l->group, secs_since(a, l->start_ns), l->created, l->count,
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
	g = group_state(a, l->group);
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
		if (g && launch_failure_backs_off(st->code) && g->backed_off_seq != l->seq) {
			delay = back_off(a, g, st->message[0] ? st->message : provider_error_str(st->code));
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
		rep_fail(a, l->replace_of, why);
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
			     l->group, l->count, secs_since(a, l->start_ns), l->created, l->reason);
		else if (delay > 0)
			LOGF(a, LOG_WARN, f, "scale_up %s +%d failed after %.1fs: %d of %d created; %s: %s; group backed off for %llds",
			     l->group, l->count, secs_since(a, l->start_ns), kept, l->count,
			     provider_error_str(st->code), st->message, (long long)delay);
		else
			LOGF(a, LOG_WARN, f, "scale_up %s +%d ended after %.1fs with %d of %d created; %s: %s",
			     l->group, l->count, secs_since(a, l->start_ns), kept, l->count,
			     provider_error_str(st->code), st->message);
	}
	if (l->hook)
		a->cfg.hooks->done(a->cfg.hooks->ctx, l->hook);
	launch_free(l);
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

static int start_launch(struct actuator *a, const struct action *act, const char *pods,
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
			launch_free(l);
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
	g = group_state(a, l->group);
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

/* ---- what the cache does not show yet ---- */

/* The memo of 'node', or NULL. Lock held. */
static struct memo *memo_find(struct actuator *a, const char *node)
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
	m = memo_find(a, node);
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
static struct busy_node *busy_find(struct actuator *a, const char *node)
{
	struct busy_node *b;

	for (b = a->busy_nodes; b; b = b->next)
		if (strcmp(b->name, node) == 0)
			return b;
	return NULL;
}

static void count(struct actuator *a, uint64_t *field)
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
	count(a, &a->st.uncordoned);
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
			count(a, &a->st.node_actions);
			log_fields(a->log, LOG_INFO, clock_wall(a->clock), f, nf, "%s done in %.2fs: %s",
				   desc, secs_since(a, j->step_start_ns), act->reason);
			{
				char msg[PLAN_MAX_REASON + 400];

				note_event(j, "Normal", "Luascale", disruption_msg(act, msg, sizeof(msg)));
			}
		} else {
			count(a, &a->st.actions_failed);
			log_fields(a->log, LOG_WARN, clock_wall(a->clock), f, nf,
				   "%s failed after %.2fs: %s (asked: %s)", desc,
				   secs_since(a, j->step_start_ns), st.message[0] ? st.message : "error",
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
			count(a, &a->st.evictions);
			LOG(a, LOG_INFO, "drain %s: evicted pod %s/%s", j->node, pods[i].ns, pods[i].name);
			break;
		case KUBE_PDB_BLOCKED:
			count(a, &a->st.evictions_refused);
			LOG(a, LOG_INFO, "drain %s: a PodDisruptionBudget refused evicting %s/%s for now (%s); retrying in %llds",
			    j->node, pods[i].ns, pods[i].name, es.message[0] ? es.message : "429",
			    (long long)wait_s);
			break;
		case KUBE_THROTTLED:
			count(a, &a->st.evictions_throttled);
			LOG(a, LOG_INFO, "drain %s: the API server refused evicting %s/%s for now (%s); retrying in %llds",
			    j->node, pods[i].ns, pods[i].name, es.message[0] ? es.message : "429",
			    (long long)wait_s);
			break;
		default:
			count(a, &a->st.evictions_failed);
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
		    j->node, secs_since(a, j->drain_start_ns), left, first[0] ? first : "?");
		return -1;
	}
	return 0;
}

/* When a failed terminate is tried again: 10 s doubling up to 5 min after
 * 'attempts' failures, or later when the cloud said Retry-After (which
 * then holds every write to the cloud). Lock held. */
static int64_t term_retry_at(struct actuator *a, int attempts, const struct provider_status *st,
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
static void count_termination(struct actuator *a, const char *group, const struct provider_status *st)
{
	if (a->cfg.ins)
		metric_inc2(a->cfg.ins->terminations, group,
			    st->code == PROVIDER_OK ? "ok" : provider_error_str(st->code));
	if (st->code != PROVIDER_OK && st->code != PROVIDER_NOT_FOUND)
		count(a, &a->st.terminate_failures);
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
		count(a, &a->st.actions_failed);
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
	count(a, &a->st.nodes_deleted);
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
	count_termination(a, j->group, st);
	if (st->code == PROVIDER_OK || st->code == PROVIDER_NOT_FOUND) {
		LOG(a, LOG_INFO, "instance %s of node %s terminated%s", j->term_id, j->node,
		    st->code == PROVIDER_NOT_FOUND ? " (the cloud no longer had it)" : "");
		delete_node_object(j, act, true);
		job_finish(j);
		return;
	}
	pthread_mutex_lock(&a->mu);
	j->term_attempts++;
	at = term_retry_at(a, j->term_attempts, st, now);
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
			count(a, &a->st.actions_failed);
			j->next++;
			continue;
		}
		if (act->type == ACTION_DRAIN || (act->type == ACTION_DELETE && !j->drained)) {
			int r;

			if (j->drain_failed) {
				LOG(a, LOG_WARN, "%s %s not done: the drain did not finish (asked: %s)",
				    action_type_str(act->type), j->node, act->reason);
				count(a, &a->st.actions_failed);
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
					count(a, &a->st.drains_failed);
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
				count(a, &a->st.drains_failed);
				if (a->cfg.ins)
					metric_inc1(a->cfg.ins->failed, "drain");
				note_event(j, "Warning", "LuascaleDrainFailed", "drain gave up");
				give_back(j, "its drain gave up");
				if (act->type == ACTION_DRAIN)
					j->next++;
				continue;
			}
			j->drained = true;
			count(a, &a->st.drains_done);
			if (a->cfg.ins)
				metric_inc1(a->cfg.ins->executed, "drain");
			count_disruption(a, j, act);
			{
				struct log_field f[] = {
					{"action", "drain"}, {"node", j->node}, {"outcome", "done"},
					{"reason", act->reason}, {"where", act->where},
				};

				LOGF(a, LOG_INFO, f, "drain %s done in %.1fs: %llu pod(s) evicted", j->node,
				     secs_since(a, j->drain_start_ns), (unsigned long long)j->evicted);
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
static void deferred_round(struct actuator *a, bool begin)
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
static int start_node_job(struct actuator *a, const struct plan *p, const struct snapshot *s,
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
	m = memo_find(a, node);
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
	if (busy_find(a, node)) {
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
static void start_release(struct actuator *a, const char *node, const char *provider_id,
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
	if (busy_find(a, node)) {
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
static void node_event(struct actuator *a, const char *node, const char *type, const char *reason,
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
static int start_replace(struct actuator *a, const struct action *act, const struct snapshot *s)
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
	m = memo_find(a, act->node);
	if (m && m->kind == MEMO_REMOVED)
		skip = "luascale deleted it already; the cluster cache does not show that yet";
	else if (busy_find(a, act->node))
		skip = "actions of an earlier round are still running on it";
	else if (rep_find(a, act->node))
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
		rep_free(r);
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
		node_event(a, act->node, "Normal", "LuascaleReplace", msg);
	}
	if (start_launch(a, act, "", 0, s, act->node) < 0) {
		/* the next actuator_observe() says it failed */
		pthread_mutex_lock(&a->mu);
		rep_fail(a, act->node, "its new node's launch could not be queued (out of memory, or the work queue is full)");
		pthread_mutex_unlock(&a->mu);
		return -1;
	}
	return 0;
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
		    start_launch(a, &p->actions[i], pods, oldest, s, NULL) < 0)
			failed++;
		else if (p->actions[i].type == ACTION_REPLACE && start_replace(a, &p->actions[i], s) < 0)
			failed++;
	/* one job per node, in the order nodes first appear in the plan */
	deferred_round(a, true);
	for (i = 0; i < p->n_actions; i++) {
		const char *node = p->actions[i].node;
		bool seen = false;

		if (p->actions[i].type == ACTION_SCALE_UP || p->actions[i].type == ACTION_REPLACE ||
		    !node)
			continue;
		for (k = 0; k < i && !seen; k++)
			seen = p->actions[k].node && strcmp(p->actions[k].node, node) == 0;
		if (!seen && start_node_job(a, p, s, node) < 0)
			failed++;
	}
	deferred_round(a, false);
	return failed && (size_t)failed == p->n_actions ? -1 : 0;
}

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
	rc = rc == 0 ? start_node_job(a, &p, s, r->node) : 0;
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
			node_event(a, r->node, "Normal", "LuascaleReplaced", msg);
			if (a->cfg.ins) {
				const char *v[3] = {grp, r->act.disruption ? r->act.disruption : "underutilized",
						    "replace"};

				metric_inc2(a->cfg.ins->replacements, grp, "replaced");
				metric_add(a->cfg.ins->disruptions, v, 1);
			}
			count(a, &a->st.replaces_done);
			break;
		case REP_FAILED:
			log_at(a->log, LOG_WARN, now, "replace %s failed after %llds: %s; %s is left as it was (not cordoned)",
			       r->node, (long long)(now - r->started), r->why, r->node);
			snprintf(msg, sizeof(msg), "replace failed: %s; the node is left as it was", r->why);
			node_event(a, r->node, "Warning", "LuascaleReplaceFailed", msg);
			if (a->cfg.ins)
				metric_inc2(a->cfg.ins->replacements, grp, "failed");
			count(a, &a->st.replaces_failed);
			break;
		default:
			log_at(a->log, LOG_INFO, now, "replace %s over: the node is gone or being removed before its new node was Ready%s%s",
			       r->node, r->inst[0] ? "; its new instance stays: " : "", r->inst);
			if (a->cfg.ins)
				metric_inc2(a->cfg.ins->replacements, grp, "gone");
			break;
		}
		rep_free(r);
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
	count_termination(a, f->group, st);
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
	f->next_try_ns = term_retry_at(a, f->attempts, st, now);
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
 * The sweep (see actuator_cloud_instances): dooms the cloud's instances of
 * managed groups that have no node past max_provision_s by the cloud's
 * launch time. Lock held; 'ids' are the node-mapped instance ids.
 */
static void sweep(struct actuator *a, struct snapshot *s, char (*ids)[128], size_t n_ids,
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
		g = group_state(a, gname);
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
			delay = back_off(a, g, why);
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
				struct replacement *r = rep_find(a, f->replace_of);

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
			struct gstate *g = group_state(a, f->group);
			char reason[400];
			int64_t delay = 0;

			snprintf(reason, sizeof(reason), "instance %s did not become a Ready node in %llds",
				 f->id, (long long)a->cfg.max_provision_s);
			/* once per launch request, not once per instance of it */
			if (g && g->backed_off_seq != f->launch_seq) {
				delay = back_off(a, g, reason);
				g->backed_off_seq = f->launch_seq;
			} else if (g) {
				delay = g->backoff_until > now ? g->backoff_until - now : 0;
			}
			a->st.instances_timed_out++;
			*pp = f->next;
			if (f->replace_of[0])
				rep_fail(a, f->replace_of, reason);
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
		struct busy_node *b = busy_find(a, s->nodes[i].name);
		struct memo *m = memo_find(a, s->nodes[i].name);

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
			if (!s->nodes[i].removing && !busy_find(a, s->nodes[i].name) &&
			    !memo_find(a, s->nodes[i].name) && is_marked(&s->nodes[i]))
				release[n_release++] = i;
	}
	/* instances without nodes the cloud lists: the orphan sweep */
	if (node_ids)
		sweep(a, s, node_ids, n_node_ids, now, now_ns);
	/* groups: target = registered + in flight, less what is being
	 * terminated (the cloud's size may still count it); backoff */
	for (i = 0; i < s->n_groups; i++) {
		struct node_group *grp = &s->groups[i];
		struct gstate *g = group_state(a, grp->name);
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
			start_release(a, nd->name, nd->provider_id, since ? since : "");
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
