/*
 * sim/cloud: the simulated cloud — groups, instances and their life cycle
 * (pending, running, stopping, gone) as timed events on an executor, fault
 * injection, the cloud's own API limit, billing counters, the event
 * plumbing (sim_life) the cluster shares, and the managed groups a cloud
 * flavour keeps (sim_managed: a MIG's or a scale set's members, made,
 * retried and deleted as one). No Kubernetes here.
 */
#include "sim/clouds/cloud.h"

#include <assert.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/backoff.h"

/* ---- events that outlive their owner ---- */

struct sim_life {
	_Atomic int refs;
	_Atomic bool dead;
	void *owner;
};

struct sim_life *sim_life_new(void *owner)
{
	struct sim_life *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	atomic_init(&l->refs, 1);
	atomic_init(&l->dead, false);
	l->owner = owner;
	return l;
}

static void life_put(struct sim_life *l)
{
	if (atomic_fetch_sub(&l->refs, 1) == 1)
		free(l);
}

void sim_life_end(struct sim_life *l)
{
	if (!l)
		return;
	atomic_store(&l->dead, true);
	life_put(l);
}

struct sim_ev {
	struct sim_life *life;
	sim_event_fn fn;
	void *data;
	uint64_t id;
};

static void ev_task(void *arg, bool cancelled)
{
	struct sim_ev ev = *(struct sim_ev *)arg;
	bool alive = !cancelled && !atomic_load(&ev.life->dead);

	free(arg);
	ev.fn(alive ? ev.life->owner : NULL, ev.data, ev.id, alive);
	life_put(ev.life);
}

int sim_after(struct executor *ex, struct sim_life *l, int64_t delay_ns, sim_event_fn fn,
	      void *data, uint64_t id)
{
	struct sim_ev *ev = malloc(sizeof(*ev));

	if (!ev)
		return -1;
	ev->life = l;
	ev->fn = fn;
	ev->data = data;
	ev->id = id;
	atomic_fetch_add(&l->refs, 1);
	if (executor_after(ex, delay_ns, ev_task, ev) != 0) {
		atomic_fetch_sub(&l->refs, 1); /* the owner still holds one */
		free(ev);
		return -1;
	}
	return 0;
}

/* ---- the cloud ---- */

struct fault {
	struct sim_fault f;        /* its image is image[] below */
	int group; /* -1: every group */
	int fired;
	char image[SIM_IMAGE_MAX]; /* IMAGE */
};

struct group {
	const struct node_group *def;
	char image[SIM_IMAGE_MAX];  /* what it launches now */
	struct sim_instance **live; /* pending, running, stopping; oldest first */
	size_t n_live, cap_live;
	int pending_running;        /* live minus stopping */
	int reserved;               /* asked for by launches in flight, not created yet */
	uint64_t next_n;            /* instance numbering */
	int64_t gone_ns;            /* billable time of instances already gone */
	struct sim_group_stats st;
};

struct sim_cloud {
	struct executor *ex;
	struct clock *clock;
	struct sim_cloud_opts o;
	pthread_mutex_t mu;
	struct sim_life *life;
	uint64_t rng;

	struct group *groups;
	size_t n_groups;
	struct fault *faults;
	size_t n_faults;

	struct sim_instance **all; /* every instance ever made, for lookup and free */
	size_t n_all, cap_all;
	size_t *index;             /* open addressing on id: 1-based into 'all' */
	size_t index_cap;          /* power of two */

	double api_tokens;
	int64_t api_last;
	uint64_t calls;

	sim_cloud_observer_fn observer;
	void *observer_ud;
	sim_trace_fn trace;
	void *trace_ud;
	sim_cloud_namer_fn namer;
	void *namer_ud;
	sim_cloud_interrupt_fn interrupter;
	void *interrupter_ud;
	sim_cloud_image_fn imager;
	void *imager_ud;
	struct sim_notice *notices; /* given, not taken yet (sim_cloud_take_notices) */
	size_t n_notices;
};

void sim_cloud_opts_default(struct sim_cloud_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->seed = 1;
	o->launch_latency_ns = 1 * CLOCK_NS_PER_S;
	o->terminate_latency_ns = 1 * CLOCK_NS_PER_S;
	o->boot_delay_ns = 60 * CLOCK_NS_PER_S;
	o->boot_jitter_ns = 20 * CLOCK_NS_PER_S;
	o->shutdown_delay_ns = 20 * CLOCK_NS_PER_S;
}

static const char *const fault_names[] = {
	[SIM_FAULT_LAUNCH_ERROR] = "launch_error",
	[SIM_FAULT_THROTTLE] = "throttle",
	[SIM_FAULT_STUCK_BOOT] = "stuck_boot",
	[SIM_FAULT_SLOW_BOOT] = "slow_boot",
	[SIM_FAULT_SLOW_CALL] = "slow_call",
	[SIM_FAULT_SLOW_RESIZE] = "slow_resize",
	[SIM_FAULT_TERMINATE_ERROR] = "terminate_error",
	[SIM_FAULT_LOST_ANSWER] = "lost_answer",
	[SIM_FAULT_INTERRUPT] = "interrupt",
	[SIM_FAULT_IMAGE] = "image",
};

int sim_fault_kind_parse(const char *s, enum sim_fault_kind *out)
{
	size_t i;

	for (i = 0; i < sizeof(fault_names) / sizeof(fault_names[0]); i++) {
		if (strcmp(s, fault_names[i]) == 0) {
			*out = (enum sim_fault_kind)i;
			return 0;
		}
	}
	return -1;
}

const char *sim_fault_kind_str(enum sim_fault_kind k)
{
	if ((size_t)k < sizeof(fault_names) / sizeof(fault_names[0]))
		return fault_names[k];
	return "?";
}

static uint64_t hash_id(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

struct sim_cloud *sim_cloud_new(struct executor *ex, const struct node_group *groups, size_t n,
				const struct sim_cloud_opts *o, struct errbuf *err)
{
	pthread_mutexattr_t attr;
	struct sim_cloud *c;
	size_t i, j;

	if (!ex) {
		errbuf_set(err, "sim cloud: no executor");
		return NULL;
	}
	for (i = 0; i < n; i++) {
		if (!groups[i].name || !groups[i].name[0]) {
			errbuf_set(err, "sim cloud: node group %zu has no name", i);
			return NULL;
		}
		if (strlen(groups[i].name) > 48) {
			errbuf_set(err, "sim cloud: node group name \"%s\" is too long", groups[i].name);
			return NULL;
		}
		for (j = 0; j < i; j++) {
			if (strcmp(groups[i].name, groups[j].name) == 0) {
				errbuf_set(err, "sim cloud: duplicate node group \"%s\"", groups[i].name);
				return NULL;
			}
		}
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		goto oom;
	if (o)
		c->o = *o;
	else
		sim_cloud_opts_default(&c->o);
	if (c->o.launch_latency_ns < 0 || c->o.terminate_latency_ns < 0 ||
	    c->o.boot_delay_ns < 0 || c->o.boot_jitter_ns < 0 || c->o.shutdown_delay_ns < 0 ||
	    c->o.api_qps < 0 || (c->o.api_qps > 0 && c->o.api_burst < 1)) {
		free(c);
		errbuf_set(err, "sim cloud: delays must not be negative, and an API limit needs qps > 0 and burst >= 1");
		return NULL;
	}
	c->ex = ex;
	c->clock = executor_clock(ex);
	c->rng = c->o.seed;
	c->api_tokens = c->o.api_burst;
	c->api_last = clock_now(c->clock);
	if (pthread_mutexattr_init(&attr) != 0) {
		free(c);
		goto oom;
	}
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	if (pthread_mutex_init(&c->mu, &attr) != 0) {
		pthread_mutexattr_destroy(&attr);
		free(c);
		goto oom;
	}
	pthread_mutexattr_destroy(&attr);
	c->life = sim_life_new(c);
	c->groups = n ? calloc(n, sizeof(*c->groups)) : NULL;
	if (!c->life || (n && !c->groups)) {
		sim_cloud_free(c);
		goto oom;
	}
	c->n_groups = n;
	for (i = 0; i < n; i++) {
		c->groups[i].def = &groups[i];
		snprintf(c->groups[i].image, sizeof(c->groups[i].image), "%s", SIM_IMAGE_DEFAULT);
		c->groups[i].next_n = 1;
	}
	return c;
oom:
	errbuf_set(err, "out of memory");
	return NULL;
}

void sim_cloud_free(struct sim_cloud *c)
{
	size_t i;

	if (!c)
		return;
	sim_life_end(c->life);
	for (i = 0; i < c->n_all; i++)
		free(c->all[i]);
	for (i = 0; i < c->n_groups; i++) {
		free(c->groups[i].live);
	}
	free(c->groups);
	free(c->all);
	free(c->index);
	free(c->faults);
	free(c->notices);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

void sim_cloud_lock(struct sim_cloud *c)
{
	pthread_mutex_lock(&c->mu);
}

void sim_cloud_unlock(struct sim_cloud *c)
{
	pthread_mutex_unlock(&c->mu);
}

struct executor *sim_cloud_executor(const struct sim_cloud *c)
{
	return c->ex;
}

int64_t sim_cloud_now(const struct sim_cloud *c)
{
	return clock_now(c->clock);
}

void sim_cloud_set_observer(struct sim_cloud *c, sim_cloud_observer_fn fn, void *ud)
{
	c->observer = fn;
	c->observer_ud = ud;
}

bool sim_cloud_flavoured(const struct sim_cloud *c)
{
	return c->namer != NULL;
}

void sim_cloud_set_namer(struct sim_cloud *c, sim_cloud_namer_fn fn, void *ud)
{
	c->namer = fn;
	c->namer_ud = ud;
}

void sim_cloud_set_trace(struct sim_cloud *c, sim_trace_fn fn, void *ud)
{
	c->trace = fn;
	c->trace_ud = ud;
}

bool sim_cloud_tracing(const struct sim_cloud *c)
{
	return c->trace != NULL;
}

void sim_cloud_tracef(struct sim_cloud *c, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!c->trace)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	c->trace(c->trace_ud, clock_now(c->clock), line);
}

double sim_cloud_rand(struct sim_cloud *c)
{
	return (double)(backoff_rand(&c->rng) >> 11) * (1.0 / 9007199254740992.0);
}

size_t sim_cloud_n_groups(const struct sim_cloud *c)
{
	return c->n_groups;
}

const struct node_group *sim_cloud_group(const struct sim_cloud *c, size_t i)
{
	assert(i < c->n_groups);
	return c->groups[i].def;
}

int sim_cloud_find_group(const struct sim_cloud *c, const char *name)
{
	size_t i;

	if (!name)
		return -1;
	for (i = 0; i < c->n_groups; i++)
		if (strcmp(c->groups[i].def->name, name) == 0)
			return (int)i;
	return -1;
}

struct sim_instance *const *sim_cloud_instances(const struct sim_cloud *c, size_t i, size_t *n)
{
	assert(i < c->n_groups);
	*n = c->groups[i].n_live;
	return c->groups[i].live;
}

int sim_cloud_target(const struct sim_cloud *c, size_t i)
{
	assert(i < c->n_groups);
	return c->groups[i].pending_running;
}

size_t sim_cloud_n_all(const struct sim_cloud *c)
{
	return c->n_all;
}

struct sim_instance *sim_cloud_all_at(const struct sim_cloud *c, size_t i)
{
	assert(i < c->n_all);
	return c->all[i];
}

struct sim_instance *sim_cloud_find_instance(const struct sim_cloud *c, const char *id)
{
	size_t j, mask;

	if (!c->index_cap || !id)
		return NULL;
	mask = c->index_cap - 1;
	for (j = hash_id(id) & mask; c->index[j]; j = (j + 1) & mask)
		if (strcmp(c->all[c->index[j] - 1]->id, id) == 0)
			return c->all[c->index[j] - 1];
	return NULL;
}

void sim_cloud_group_stats(struct sim_cloud *c, size_t i, struct sim_group_stats *out)
{
	struct group *g;
	int64_t now;
	size_t k;

	sim_cloud_lock(c);
	assert(i < c->n_groups);
	g = &c->groups[i];
	now = clock_now(c->clock);
	*out = g->st;
	out->instance_ns = g->gone_ns;
	for (k = 0; k < g->n_live; k++)
		out->instance_ns += now - g->live[k]->created_ns;
	out->live = (int)g->n_live;
	sim_cloud_unlock(c);
}

static void stop_instance(struct sim_cloud *c, struct sim_instance *in);
static void notify(struct sim_cloud *c, struct sim_instance *in, enum sim_instance_event ev);

void sim_cloud_set_interrupter(struct sim_cloud *c, sim_cloud_interrupt_fn fn, void *ud)
{
	c->interrupter = fn;
	c->interrupter_ud = ud;
}

int sim_cloud_take_notices(struct sim_cloud *c, struct sim_notice **out, size_t *n)
{
	sim_cloud_lock(c);
	*out = c->notices;
	*n = c->n_notices;
	c->notices = NULL;
	c->n_notices = 0;
	sim_cloud_unlock(c);
	return 0;
}

/* Keeps the notice of instance 'in' for the in-process provider. Lock held. */
static void keep_notice(struct sim_cloud *c, const struct sim_instance *in)
{
	struct sim_notice *nv, *nt;

	if (c->n_notices >= SIM_NOTICES_MAX) {
		sim_cloud_tracef(c, "instance %s: its notice is dropped (%d not taken)", in->id,
				 SIM_NOTICES_MAX);
		return;
	}
	nv = realloc(c->notices, (c->n_notices + 1) * sizeof(*nv));
	if (!nv)
		return;
	c->notices = nv;
	nt = &nv[c->n_notices++];
	memset(nt, 0, sizeof(*nt));
	snprintf(nt->id, sizeof(nt->id), "%s", in->id);
	snprintf(nt->provider_id, sizeof(nt->provider_id), "%s", in->provider_id);
	snprintf(nt->group, sizeof(nt->group), "%s", c->groups[in->group].def->name);
	nt->deadline_wall = in->interrupted_wall;
	nt->at_wall = clock_wall(c->clock);
}

/* An interrupted instance's warning is over: it is reclaimed. */
static void interrupt_reclaim(void *owner, void *data, uint64_t id, bool alive)
{
	struct sim_cloud *c = owner;
	struct sim_instance *in = data;

	(void)id;
	if (!alive)
		return;
	sim_cloud_lock(c);
	if (in->state == INSTANCE_PENDING || in->state == INSTANCE_RUNNING) {
		sim_cloud_tracef(c, "instance %s reclaimed (interrupt fault)", in->id);
		if (!c->interrupter ||
		    !c->interrupter(c->interrupter_ud, in, SIM_INTERRUPT_RECLAIM, 0))
			stop_instance(c, in);
	}
	sim_cloud_unlock(c);
}

/* An interrupt fault's time: its instances chosen, told, reclaimed later. */
static void interrupt_fire(void *owner, void *data, uint64_t id, bool alive)
{
	struct sim_cloud *c = owner;
	struct sim_instance **pick = NULL;
	struct fault *f;
	size_t g, k, n = 0, want;

	(void)data;
	if (!alive)
		return;
	sim_cloud_lock(c);
	if (id >= c->n_faults)
		goto out;
	f = &c->faults[id];
	for (g = 0; g < c->n_groups; g++) /* the running instances, oldest first */
		if (f->group < 0 || (size_t)f->group == g)
			for (k = 0; k < c->groups[g].n_live; k++)
				n += c->groups[g].live[k]->state == INSTANCE_RUNNING;
	pick = n ? calloc(n, sizeof(*pick)) : NULL;
	if (!pick)
		goto out;
	n = 0;
	for (g = 0; g < c->n_groups; g++)
		if (f->group < 0 || (size_t)f->group == g)
			for (k = 0; k < c->groups[g].n_live; k++)
				if (c->groups[g].live[k]->state == INSTANCE_RUNNING)
					pick[n++] = c->groups[g].live[k];
	want = f->f.count > 0 ? (size_t)f->f.count : (size_t)(f->f.rate * (double)n + 0.999999);
	if (want > n)
		want = n;
	for (k = 0; k < want; k++) { /* a seeded partial shuffle: the first 'want' are chosen */
		size_t j = k + (size_t)(sim_cloud_rand(c) * (double)(n - k));
		struct sim_instance *t;

		if (j >= n)
			j = n - 1;
		t = pick[k];
		pick[k] = pick[j];
		pick[j] = t;
		sim_cloud_tracef(c, "instance %s interrupted: reclaimed in %.3fs (interrupt fault)",
				 pick[k]->id, (double)f->f.delay_ns / CLOCK_NS_PER_S);
		pick[k]->interrupted_wall = clock_wall(c->clock) +
					    (f->f.delay_ns + CLOCK_NS_PER_S - 1) / CLOCK_NS_PER_S;
		keep_notice(c, pick[k]);
		notify(c, pick[k], SIM_INSTANCE_INTERRUPTED);
		if (c->interrupter)
			c->interrupter(c->interrupter_ud, pick[k], SIM_INTERRUPT_NOTICE, f->f.delay_ns);
		if (sim_after(c->ex, c->life, f->f.delay_ns, interrupt_reclaim, pick[k], 0) < 0)
			sim_cloud_tracef(c, "instance %s: executor refused its reclaim", pick[k]->id);
	}
	f->fired += (int)want;
out:
	free(pick);
	sim_cloud_unlock(c);
}

/* ---- images ---- */

void sim_cloud_set_imager(struct sim_cloud *c, sim_cloud_image_fn fn, void *ud)
{
	c->imager = fn;
	c->imager_ud = ud;
}

const char *sim_cloud_group_image(const struct sim_cloud *c, size_t i)
{
	assert(i < c->n_groups);
	return c->groups[i].image;
}

bool sim_cloud_instance_outdated(const struct sim_cloud *c, const struct sim_instance *in, char *out,
				 size_t len)
{
	const struct group *g = &c->groups[in->group];

	if (len)
		out[0] = '\0';
	if (!in->image[0] || !g->image[0] || !strcmp(in->image, g->image))
		return false;
	snprintf(out, len, "image %s is not group %s's %s", in->image, g->def->name, g->image);
	return true;
}

int sim_cloud_set_image(struct sim_cloud *c, size_t i, const char *image, struct errbuf *err)
{
	if (i >= c->n_groups)
		return errbuf_set(err, "image: no node group %zu", i);
	if (!image || !image[0] || strlen(image) >= SIM_IMAGE_MAX)
		return errbuf_set(err, "image: expected 1 to %d characters", SIM_IMAGE_MAX - 1);
	sim_cloud_lock(c);
	if (strcmp(c->groups[i].image, image)) {
		sim_cloud_tracef(c, "group %s launches image %s from now on (was %s)",
				 c->groups[i].def->name, image, c->groups[i].image);
		snprintf(c->groups[i].image, sizeof(c->groups[i].image), "%s", image);
	}
	sim_cloud_unlock(c);
	return 0;
}

/* An image fault's time: each of its groups launches the image from now on. */
static void image_fire(void *owner, void *data, uint64_t id, bool alive)
{
	struct sim_cloud *c = owner;
	struct errbuf err;
	size_t g;

	(void)data;
	if (!alive)
		return;
	sim_cloud_lock(c);
	for (g = 0; id < c->n_faults && g < c->n_groups; g++) {
		const struct fault *f = &c->faults[id];

		if (f->group >= 0 && (size_t)f->group != g)
			continue;
		sim_cloud_tracef(c, "group %s: image %s (image fault)", c->groups[g].def->name, f->image);
		if (!c->imager || !c->imager(c->imager_ud, g, f->image))
			if (sim_cloud_set_image(c, g, f->image, &err) < 0)
				sim_cloud_tracef(c, "group %s: %s", c->groups[g].def->name, err.msg);
	}
	if (id < c->n_faults)
		c->faults[id].fired++;
	sim_cloud_unlock(c);
}

/* Schedules fault 'id' (the last added) when it fires at one time (an
 * interrupt, an image): 0, or -1 when the executor refused it. Lock held. */
static int fault_schedule(struct sim_cloud *c, size_t id)
{
	const struct fault *f = &c->faults[id];
	int64_t at = f->f.from_ns - clock_now(c->clock);

	if (f->f.kind == SIM_FAULT_INTERRUPT)
		return sim_after(c->ex, c->life, at > 0 ? at : 0, interrupt_fire, NULL, id);
	if (f->f.kind == SIM_FAULT_IMAGE)
		return sim_after(c->ex, c->life, at > 0 ? at : 0, image_fire, NULL, id);
	return 0;
}

int sim_cloud_add_fault(struct sim_cloud *c, const struct sim_fault *f, struct errbuf *err)
{
	struct fault *nf;
	int gi = -1;

	if (f->group && f->group[0]) {
		gi = sim_cloud_find_group(c, f->group);
		if (gi < 0)
			return errbuf_set(err, "fault: no node group \"%s\"", f->group);
	}
	if (f->rate < 0 || f->rate > 1)
		return errbuf_set(err, "fault: rate must be between 0 and 1");
	if (f->delay_ns < 0 || f->count < 0)
		return errbuf_set(err, "fault: delay and count must not be negative");
	if ((unsigned)f->kind > SIM_FAULT_IMAGE)
		return errbuf_set(err, "fault: unknown kind");
	if (f->kind == SIM_FAULT_IMAGE && (!f->image || !f->image[0] || strlen(f->image) >= SIM_IMAGE_MAX))
		return errbuf_set(err, "fault: an image fault names an image of 1 to %d characters",
				  SIM_IMAGE_MAX - 1);
	sim_cloud_lock(c);
	nf = realloc(c->faults, (c->n_faults + 1) * sizeof(*nf));
	if (!nf) {
		sim_cloud_unlock(c);
		return errbuf_set(err, "out of memory");
	}
	c->faults = nf;
	nf[c->n_faults].f = *f;
	nf[c->n_faults].f.group = NULL; /* not kept: the index says it */
	if (nf[c->n_faults].f.rate == 0)
		nf[c->n_faults].f.rate = 1;
	if (f->kind == SIM_FAULT_LAUNCH_ERROR && f->error == PROVIDER_OK)
		nf[c->n_faults].f.error = PROVIDER_NO_CAPACITY;
	if (f->kind == SIM_FAULT_TERMINATE_ERROR && f->error == PROVIDER_OK)
		nf[c->n_faults].f.error = PROVIDER_AUTH;
	nf[c->n_faults].group = gi;
	nf[c->n_faults].fired = 0;
	snprintf(nf[c->n_faults].image, sizeof(nf[0].image), "%s", f->image ? f->image : "");
	nf[c->n_faults].f.image = NULL; /* not kept: image[] says it */
	c->n_faults++;
	if (fault_schedule(c, c->n_faults - 1) < 0) {
		c->n_faults--;
		sim_cloud_unlock(c);
		return errbuf_set(err, "fault: the executor refused the %s", sim_fault_kind_str(f->kind));
	}
	sim_cloud_unlock(c);
	return 0;
}

/* ---- instances ---- */

static bool fault_active(const struct fault *f, enum sim_fault_kind kind, int group, int64_t now)
{
	if (f->f.kind != kind || (f->group >= 0 && group >= 0 && f->group != group))
		return false;
	if (now < f->f.from_ns || (f->f.until_ns > 0 && now >= f->f.until_ns))
		return false;
	return f->f.count <= 0 || f->fired < f->f.count;
}

/* Does a launch of 'type' into 'zone' (NULL: not said), spot or not, meet
 * the fault's instance_type, zone and capacity_type? */
static bool fault_matches_spec(const struct fault *f, const char *type, const char *zone,
			       bool spot)
{
	if (f->f.instance_type && (!type || strcmp(f->f.instance_type, type) != 0))
		return false;
	if (f->f.capacity != SIM_CAPACITY_ANY &&
	    (f->f.capacity == SIM_CAPACITY_SPOT) != spot)
		return false;
	return !f->f.zone || (zone && strcmp(f->f.zone, zone) == 0);
}

/* Does a fault of 'kind' fire now for 'group' (a launch of 'type' into
 * 'zone', NULL when not said)? Draws for each active one. */
static struct fault *fault_fires_at(struct sim_cloud *c, enum sim_fault_kind kind, int group,
				    const char *type, const char *zone, bool spot)
{
	int64_t now = clock_now(c->clock);
	size_t i;

	for (i = 0; i < c->n_faults; i++) {
		struct fault *f = &c->faults[i];

		if (!fault_active(f, kind, group, now) || !fault_matches_spec(f, type, zone, spot))
			continue;
		if (f->f.rate >= 1 || sim_cloud_rand(c) < f->f.rate) {
			f->fired++;
			return f;
		}
	}
	return NULL;
}

static struct fault *fault_fires(struct sim_cloud *c, enum sim_fault_kind kind, int group)
{
	return fault_fires_at(c, kind, group, NULL, NULL, false);
}

static int64_t fault_delay(struct sim_cloud *c, enum sim_fault_kind kind, int group)
{
	struct fault *f = fault_fires(c, kind, group);

	return f ? f->f.delay_ns : -1;
}

int64_t sim_cloud_call_delay(struct sim_cloud *c, const char *group)
{
	int64_t d;

	sim_cloud_lock(c);
	d = fault_delay(c, SIM_FAULT_SLOW_CALL, group ? sim_cloud_find_group(c, group) : -1);
	sim_cloud_unlock(c);
	return d;
}

int64_t sim_cloud_resize_delay(struct sim_cloud *c, const char *group)
{
	int64_t d;

	sim_cloud_lock(c);
	d = fault_delay(c, SIM_FAULT_SLOW_RESIZE, group ? sim_cloud_find_group(c, group) : -1);
	sim_cloud_unlock(c);
	return d > 0 ? d : 0;
}

/* A terminate_error fault firing for group index 'gi' (-1: any), or NULL. Lock held. */
static struct fault *terminate_fault(struct sim_cloud *c, int gi)
{
	struct fault *f = fault_fires(c, SIM_FAULT_TERMINATE_ERROR, gi);

	if (f)
		sim_cloud_tracef(c, "terminate for %s refused: %s (fault)",
				 gi >= 0 ? c->groups[gi].def->name : "the cloud", provider_error_str(f->f.error));
	return f;
}

bool sim_cloud_terminate_fault(struct sim_cloud *c, const char *group, enum provider_error *error,
			       int64_t *retry_after_ns)
{
	struct fault *f;

	sim_cloud_lock(c);
	f = terminate_fault(c, group ? sim_cloud_find_group(c, group) : -1);
	if (f && error)
		*error = f->f.error;
	if (f && retry_after_ns)
		*retry_after_ns = f->f.delay_ns;
	sim_cloud_unlock(c);
	return f != NULL;
}

bool sim_cloud_lose_answer(struct sim_cloud *c, const char *group)
{
	bool lost;

	sim_cloud_lock(c);
	lost = fault_fires(c, SIM_FAULT_LOST_ANSWER, group ? sim_cloud_find_group(c, group) : -1) != NULL;
	if (lost)
		sim_cloud_tracef(c, "the answer to a call for %s is lost (fault)", group ? group : "the cloud");
	sim_cloud_unlock(c);
	return lost;
}

bool sim_cloud_launch_fault(struct sim_cloud *c, const char *group, enum provider_error error)
{
	int gi = group ? sim_cloud_find_group(c, group) : -1;
	int64_t now;
	bool fired = false;
	size_t i;

	sim_cloud_lock(c);
	now = clock_now(c->clock);
	for (i = 0; i < c->n_faults && !fired; i++) {
		struct fault *f = &c->faults[i];

		if (f->f.error != error || !fault_active(f, SIM_FAULT_LAUNCH_ERROR, gi, now))
			continue;
		if (f->f.rate >= 1 || sim_cloud_rand(c) < f->f.rate) {
			f->fired++;
			fired = true;
		}
	}
	sim_cloud_unlock(c);
	return fired;
}

static void notify(struct sim_cloud *c, struct sim_instance *in, enum sim_instance_event ev)
{
	if (c->observer)
		c->observer(c->observer_ud, in, ev);
}

static int index_put(struct sim_cloud *c, size_t pos)
{
	size_t j, mask;

	if ((c->n_all + 1) * 2 > c->index_cap) {
		size_t cap = c->index_cap ? c->index_cap * 2 : 64, k;
		size_t *ni = calloc(cap, sizeof(*ni));

		if (!ni)
			return -1;
		for (k = 0; k < c->n_all; k++) {
			for (j = hash_id(c->all[k]->id) & (cap - 1); ni[j]; j = (j + 1) & (cap - 1))
				;
			ni[j] = k + 1;
		}
		free(c->index);
		c->index = ni;
		c->index_cap = cap;
	}
	mask = c->index_cap - 1;
	for (j = hash_id(c->all[pos]->id) & mask; c->index[j]; j = (j + 1) & mask)
		;
	c->index[j] = pos + 1;
	return 0;
}

/* A new pending instance of group 'gi' (NULL when out of memory or the
 * namer refused it). */
static struct sim_instance *instance_new(struct sim_cloud *c, size_t gi,
					 const struct sim_launch_spec *spec)
{
	struct group *g = &c->groups[gi];
	struct sim_instance *in;

	if (c->n_all == c->cap_all) {
		size_t cap = c->cap_all ? c->cap_all * 2 : 64;
		struct sim_instance **na = realloc(c->all, cap * sizeof(*na));

		if (!na)
			return NULL;
		c->all = na;
		c->cap_all = cap;
	}
	if (g->n_live == g->cap_live) {
		size_t cap = g->cap_live ? g->cap_live * 2 : 16;
		struct sim_instance **nl = realloc(g->live, cap * sizeof(*nl));

		if (!nl)
			return NULL;
		g->live = nl;
		g->cap_live = cap;
	}
	in = calloc(1, sizeof(*in));
	if (!in)
		return NULL;
	snprintf(in->id, sizeof(in->id), "%s-%llu", g->def->name, (unsigned long long)g->next_n);
	snprintf(in->provider_id, sizeof(in->provider_id), "sim://%s/%s", g->def->name, in->id);
	snprintf(in->node_name, sizeof(in->node_name), "%s", in->id);
	snprintf(in->image, sizeof(in->image), "%s", g->image);
	in->group = gi;
	if (c->namer && c->namer(c->namer_ud, c, gi, spec, in) < 0) {
		free(in);
		return NULL;
	}
	c->all[c->n_all] = in;
	if (index_put(c, c->n_all) < 0) {
		free(in);
		return NULL;
	}
	c->n_all++;
	g->next_n++;
	in->group = gi;
	in->state = INSTANCE_PENDING;
	in->created_ns = clock_now(c->clock);
	in->created_wall = clock_wall(c->clock);
	in->running_ns = in->stopping_ns = in->gone_ns = -1;
	g->live[g->n_live++] = in;
	g->pending_running++;
	g->st.launched++;
	if ((int)g->n_live > g->st.peak)
		g->st.peak = (int)g->n_live;
	return in;
}

static void boot_done(void *owner, void *data, uint64_t id, bool alive)
{
	struct sim_cloud *c = owner;
	struct sim_instance *in = data;

	(void)id;
	if (!alive)
		return;
	sim_cloud_lock(c);
	if (in->state == INSTANCE_PENDING) {
		in->state = INSTANCE_RUNNING;
		in->running_ns = clock_now(c->clock);
		sim_cloud_tracef(c, "instance %s running%s", in->id, in->stuck ? " (stuck: no node will register)" : "");
		notify(c, in, SIM_INSTANCE_RUNNING);
	}
	sim_cloud_unlock(c);
}

/* Creates one instance of a launch and starts its boot. */
static struct sim_instance *launch_one(struct sim_cloud *c, size_t gi,
				       const struct sim_launch_spec *spec)
{
	struct sim_instance *in = instance_new(c, gi, spec);
	int64_t delay, slow;

	if (!in)
		return NULL;
	delay = c->o.boot_delay_ns;
	if (c->o.boot_jitter_ns > 0)
		delay += (int64_t)(sim_cloud_rand(c) * (double)c->o.boot_jitter_ns);
	slow = fault_delay(c, SIM_FAULT_SLOW_BOOT, (int)gi);
	if (slow > 0)
		delay += slow;
	if (fault_fires(c, SIM_FAULT_STUCK_BOOT, (int)gi)) {
		in->stuck = true;
		c->groups[gi].st.stuck++;
	}
	sim_cloud_tracef(c, "instance %s created (boots in %.3fs)", in->id,
			 (double)delay / CLOCK_NS_PER_S);
	if (sim_after(c->ex, c->life, delay, boot_done, in, 0) < 0)
		sim_cloud_tracef(c, "instance %s: executor refused its boot", in->id);
	return in;
}

static void instance_gone(void *owner, void *data, uint64_t id, bool alive)
{
	struct sim_cloud *c = owner;
	struct sim_instance *in = data;
	struct group *g;
	size_t k;

	(void)id;
	if (!alive)
		return;
	sim_cloud_lock(c);
	if (in->state != INSTANCE_STOPPING) {
		sim_cloud_unlock(c);
		return;
	}
	g = &c->groups[in->group];
	in->state = INSTANCE_GONE;
	in->gone_ns = clock_now(c->clock);
	g->gone_ns += in->gone_ns - in->created_ns;
	for (k = 0; k < g->n_live; k++) {
		if (g->live[k] == in) {
			memmove(&g->live[k], &g->live[k + 1], (g->n_live - k - 1) * sizeof(*g->live));
			g->n_live--;
			break;
		}
	}
	sim_cloud_tracef(c, "instance %s gone", in->id);
	notify(c, in, SIM_INSTANCE_GONE);
	sim_cloud_unlock(c);
}

/* Pending or running -> stopping; gone after shutdown_delay. */
static void stop_instance(struct sim_cloud *c, struct sim_instance *in)
{
	struct group *g = &c->groups[in->group];

	if (in->state != INSTANCE_PENDING && in->state != INSTANCE_RUNNING)
		return;
	in->state = INSTANCE_STOPPING;
	in->stopping_ns = clock_now(c->clock);
	g->pending_running--;
	g->st.terminated++;
	sim_cloud_tracef(c, "instance %s stopping", in->id);
	notify(c, in, SIM_INSTANCE_STOPPING);
	if (sim_after(c->ex, c->life, c->o.shutdown_delay_ns, instance_gone, in, 0) < 0)
		sim_cloud_tracef(c, "instance %s: executor refused its shutdown", in->id);
}

void sim_cloud_terminate_instance(struct sim_cloud *c, struct sim_instance *inst)
{
	sim_cloud_lock(c);
	stop_instance(c, inst);
	sim_cloud_unlock(c);
}

int sim_cloud_add_running(struct sim_cloud *c, const char *group, int n, struct errbuf *err)
{
	int gi, i, rc = 0;

	sim_cloud_lock(c);
	gi = sim_cloud_find_group(c, group);
	if (gi < 0) {
		rc = errbuf_set(err, "no node group \"%s\"", group ? group : "");
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct sim_instance *in = instance_new(c, (size_t)gi, NULL);

		if (!in) {
			rc = errbuf_set(err, "out of memory");
			goto out;
		}
		c->groups[gi].st.launched--; /* not a launch */
		in->preexisting = true;
		in->state = INSTANCE_RUNNING;
		in->running_ns = in->created_ns;
		sim_cloud_tracef(c, "instance %s running (preexisting)", in->id);
		notify(c, in, SIM_INSTANCE_RUNNING);
	}
out:
	sim_cloud_unlock(c);
	return rc;
}

/* The cloud's API limit and throttle faults. Returns true when the call may go. */
static bool api_admit(struct sim_cloud *c, int group)
{
	int64_t now = clock_now(c->clock);

	if (c->o.api_qps > 0) {
		c->api_tokens += (double)(now - c->api_last) * c->o.api_qps / CLOCK_NS_PER_S;
		if (c->api_tokens > c->o.api_burst)
			c->api_tokens = c->o.api_burst;
		c->api_last = now;
		if (c->api_tokens < 1)
			return false;
		c->api_tokens -= 1;
	}
	return fault_fires(c, SIM_FAULT_THROTTLE, group) == NULL;
}

bool sim_cloud_admit(struct sim_cloud *c, const char *group)
{
	int gi = group ? sim_cloud_find_group(c, group) : -1;
	bool ok;

	sim_cloud_lock(c);
	ok = api_admit(c, gi);
	if (!ok) {
		if (gi >= 0)
			c->groups[gi].st.throttled++;
		sim_cloud_tracef(c, "call for %s throttled", group ? group : "the cloud");
	}
	sim_cloud_unlock(c);
	return ok;
}

int sim_cloud_read_call(struct sim_cloud *c, const char *group, struct provider_status *st)
{
	int gi = group ? sim_cloud_find_group(c, group) : -1;
	bool ok;

	sim_cloud_lock(c);
	ok = api_admit(c, gi);
	if (!ok)
		sim_cloud_tracef(c, "read call throttled");
	sim_cloud_unlock(c);
	if (ok)
		return 0;
	st->code = PROVIDER_THROTTLED;
	snprintf(st->message, sizeof(st->message), "RequestLimitExceeded: request limit exceeded");
	return -1;
}

/* ---- calls ---- */

struct call {
	uint64_t no;           /* call number, for traces */
	int group;             /* -1: unknown group */
	int count;             /* launch: asked for */
	int64_t started, latency;
	/* launch: per instance, fails with this (OK: is made) */
	enum provider_error *fail;
	int next;              /* next instance to make */
	int made;
	/* launch: where and what (copied from the spec) */
	struct sim_launch_spec spec;
	bool has_spec;
	char zone[32], type[32];
	/* terminate */
	char **ids;
	size_t n_ids;
	struct provider_status st;
	sim_instance_fn on_instance;
	sim_done_fn on_done;
	void *ctx;
};

static void call_free(struct call *k)
{
	size_t i;

	for (i = 0; i < k->n_ids; i++)
		free(k->ids[i]);
	free(k->ids);
	free(k->fail);
	free(k);
}

/* Ends a call: on_done outside the lock, then frees it. */
static void call_finish(struct sim_cloud *c, struct call *k)
{
	if (c)
		sim_cloud_unlock(c);
	if (k->on_done)
		k->on_done(k->ctx, k->made, &k->st);
	call_free(k);
	if (c)
		sim_cloud_lock(c);
}

static void status_set(struct provider_status *st, enum provider_error code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void status_set(struct provider_status *st, enum provider_error code, const char *fmt, ...)
{
	va_list ap;

	st->code = code;
	va_start(ap, fmt);
	vsnprintf(st->message, sizeof(st->message), fmt, ap);
	va_end(ap);
}

/* What a cloud would say for an error. */
static const char *cloud_words(enum provider_error e)
{
	switch (e) {
	case PROVIDER_NO_CAPACITY: return "InsufficientInstanceCapacity";
	case PROVIDER_QUOTA: return "VcpuLimitExceeded";
	case PROVIDER_THROTTLED: return "RequestLimitExceeded";
	case PROVIDER_TRANSIENT: return "InternalError";
	case PROVIDER_INVALID: return "ValidationError";
	case PROVIDER_NOT_FOUND: return "NotFound";
	case PROVIDER_AUTH: return "AuthFailure";
	default: return provider_error_str(e);
	}
}

/* The next instance of a launch is due: make it, then wait for the next or the end. */
static void launch_step(void *owner, void *data, uint64_t id, bool alive)
{
	struct sim_cloud *c = owner;
	struct call *k = data;
	struct group *g;
	int64_t now, due;

	(void)id;
	if (!alive) {
		/* the cloud or the executor is going away: the rest is not made */
		if (k->st.code == PROVIDER_OK)
			status_set(&k->st, PROVIDER_CANCELLED,
				   "shut down before %d of %d instances were made",
				   k->count - k->made, k->count);
		call_finish(NULL, k);
		return;
	}
	sim_cloud_lock(c);
	g = &c->groups[k->group];
	now = clock_now(c->clock);
	if (k->next < k->count) {
		struct sim_instance *in = NULL, copy;
		int i = k->next++;

		g->reserved--;
		in = launch_one(c, (size_t)k->group, k->has_spec ? &k->spec : NULL);
		if (in) {
			k->made++;
			copy = *in;
			if (k->on_instance) {
				sim_cloud_unlock(c);
				k->on_instance(k->ctx, &copy);
				sim_cloud_lock(c);
			}
		} else {
			k->fail[i] = PROVIDER_TRANSIENT;
			g->st.launch_failed++;
			if (k->st.code == PROVIDER_OK)
				status_set(&k->st, PROVIDER_TRANSIENT, "InternalError: out of memory");
		}
	}
	/* skip to the next instance that will be made */
	while (k->next < k->count && k->fail[k->next] != PROVIDER_OK)
		k->next++;
	if (k->next < k->count)
		due = k->started + k->latency * (k->next + 1) / k->count;
	else
		due = k->started + k->latency;
	if (k->next >= k->count && due <= now) {
		sim_cloud_tracef(c, "call %llu: launch %s done: %d made",
				 (unsigned long long)k->no, g->def->name, k->made);
		call_finish(c, k);
		sim_cloud_unlock(c);
		return;
	}
	if (sim_after(c->ex, c->life, due - now, launch_step, k, 0) < 0) {
		g->reserved -= k->count - k->next;
		status_set(&k->st, PROVIDER_CANCELLED, "executor refused the call");
		call_finish(c, k);
	}
	sim_cloud_unlock(c);
}

/* A call that fails as a whole: on_done from a task, right away. */
static void call_fail_step(void *owner, void *data, uint64_t id, bool alive)
{
	(void)owner;
	(void)id;
	(void)alive;
	call_finish(NULL, data);
}

static struct call *call_new(struct sim_cloud *c, sim_instance_fn on_instance, sim_done_fn on_done,
			     void *ctx)
{
	struct call *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	k->no = ++c->calls;
	k->on_instance = on_instance;
	k->on_done = on_done;
	k->ctx = ctx;
	k->started = clock_now(c->clock);
	k->st.code = PROVIDER_OK;
	return k;
}

int sim_cloud_launch(struct sim_cloud *c, const char *group, int count,
		     sim_instance_fn on_instance, sim_done_fn on_done, void *ctx)
{
	return sim_cloud_launch_spec(c, group, count, NULL, on_instance, on_done, ctx);
}

int sim_cloud_launch_spec(struct sim_cloud *c, const char *group, int count,
			  const struct sim_launch_spec *spec, sim_instance_fn on_instance,
			  sim_done_fn on_done, void *ctx)
{
	struct call *k;
	struct group *g;
	int64_t slow;
	int i, failed = 0, rc = 0;
	enum provider_error first = PROVIDER_OK;

	sim_cloud_lock(c);
	k = call_new(c, on_instance, on_done, ctx);
	if (!k) {
		sim_cloud_unlock(c);
		return -1;
	}
	k->count = count;
	k->group = sim_cloud_find_group(c, group);
	if (k->group < 0) {
		status_set(&k->st, PROVIDER_NOT_FOUND, "NotFound: no node group \"%s\"",
			   group ? group : "");
		goto fail;
	}
	g = &c->groups[k->group];
	if (spec) {
		k->has_spec = true;
		k->spec.admitted = spec->admitted;
		k->spec.spot = spec->spot;
		k->spec.arg = spec->arg;
		if (spec->zone) {
			snprintf(k->zone, sizeof(k->zone), "%s", spec->zone);
			k->spec.zone = k->zone;
		}
		if (spec->instance_type) {
			snprintf(k->type, sizeof(k->type), "%s", spec->instance_type);
			k->spec.instance_type = k->type;
		}
	}
	if (!(spec && spec->admitted) && !api_admit(c, k->group)) {
		g->st.throttled++;
		status_set(&k->st, PROVIDER_THROTTLED, "RequestLimitExceeded: request limit exceeded");
		sim_cloud_tracef(c, "call %llu: launch %s %d throttled", (unsigned long long)k->no,
				 g->def->name, count);
		goto fail;
	}
	if (count <= 0) {
		status_set(&k->st, PROVIDER_INVALID, "ValidationError: count must be positive, got %d",
			   count);
		goto fail;
	}
	if (g->def->max >= 0 && g->pending_running + g->reserved + count > g->def->max) {
		status_set(&k->st, PROVIDER_INVALID,
			   "ValidationError: %d more instances would take group %s to %d, above its max %d",
			   count, g->def->name, g->pending_running + g->reserved + count,
			   g->def->max);
		sim_cloud_tracef(c, "call %llu: launch %s %d refused: above max",
				 (unsigned long long)k->no, g->def->name, count);
		goto fail;
	}
	g->st.launch_calls++;
	k->fail = calloc((size_t)count, sizeof(*k->fail));
	if (!k->fail) {
		status_set(&k->st, PROVIDER_TRANSIENT, "InternalError: out of memory");
		goto fail;
	}
	slow = fault_delay(c, SIM_FAULT_SLOW_CALL, k->group);
	k->latency = slow >= 0 ? slow : c->o.launch_latency_ns;
	for (i = 0; i < count; i++) {
		struct fault *f = fault_fires_at(c, SIM_FAULT_LAUNCH_ERROR, k->group,
						  k->spec.instance_type, k->spec.zone, k->spec.spot);

		if (f) {
			k->fail[i] = f->f.error;
			if (first == PROVIDER_OK)
				first = f->f.error;
			failed++;
		}
	}
	g->st.launch_failed += (uint64_t)failed;
	if (failed)
		status_set(&k->st, first, "%s: %d of %d instances could not be launched in group %s",
			   cloud_words(first), failed, count, g->def->name);
	g->reserved += count - failed;
	sim_cloud_tracef(c, "call %llu: launch %s %d (%d will fail%s%s), takes %.3fs",
			 (unsigned long long)k->no, g->def->name, count, failed,
			 failed ? ": " : "", failed ? provider_error_str(first) : "",
			 (double)k->latency / CLOCK_NS_PER_S);
	/* the first step runs at the first instance's time (or the end) */
	k->next = 0;
	while (k->next < count && k->fail[k->next] != PROVIDER_OK)
		k->next++;
	{
		int64_t due = k->next < count ? k->latency * (k->next + 1) / count : k->latency;

		if (sim_after(c->ex, c->life, due, launch_step, k, 0) < 0) {
			g->reserved -= count - failed;
			rc = -1;
			call_free(k);
		}
	}
	sim_cloud_unlock(c);
	return rc;
fail:
	if (sim_after(c->ex, c->life, 0, call_fail_step, k, 0) < 0) {
		call_free(k);
		rc = -1;
	}
	sim_cloud_unlock(c);
	return rc;
}

static void terminate_step(void *owner, void *data, uint64_t id, bool alive)
{
	struct sim_cloud *c = owner;
	struct call *k = data;
	size_t i, missing = 0;

	(void)id;
	if (!alive) {
		status_set(&k->st, PROVIDER_CANCELLED, "shut down before the call was made");
		call_finish(NULL, k);
		return;
	}
	sim_cloud_lock(c);
	for (i = 0; i < k->n_ids; i++) {
		struct sim_instance *in = sim_cloud_find_instance(c, k->ids[i]);

		if (!in || (int)in->group != k->group) {
			if (!missing++)
				status_set(&k->st, PROVIDER_NOT_FOUND,
					   "InvalidInstanceID.NotFound: %s is not an instance of group %s",
					   k->ids[i], c->groups[k->group].def->name);
			continue;
		}
		stop_instance(c, in);
		k->made++;
	}
	sim_cloud_tracef(c, "call %llu: terminate %s done: %d terminated, %zu not found",
			 (unsigned long long)k->no, c->groups[k->group].def->name, k->made, missing);
	call_finish(c, k);
	sim_cloud_unlock(c);
}

int sim_cloud_terminate(struct sim_cloud *c, const char *group, const char *const *ids, size_t n,
			sim_done_fn on_done, void *ctx)
{
	struct call *k;
	size_t i;
	int rc = 0;

	sim_cloud_lock(c);
	k = call_new(c, NULL, on_done, ctx);
	if (!k) {
		sim_cloud_unlock(c);
		return -1;
	}
	k->group = sim_cloud_find_group(c, group);
	if (k->group < 0) {
		status_set(&k->st, PROVIDER_NOT_FOUND, "NotFound: no node group \"%s\"",
			   group ? group : "");
		goto fail;
	}
	if (!api_admit(c, k->group)) {
		c->groups[k->group].st.throttled++;
		status_set(&k->st, PROVIDER_THROTTLED, "RequestLimitExceeded: request limit exceeded");
		sim_cloud_tracef(c, "call %llu: terminate %s throttled", (unsigned long long)k->no,
				 group);
		goto fail;
	}
	{
		struct fault *f = terminate_fault(c, k->group);

		if (f) {
			status_set(&k->st, f->f.error, "%s: terminate refused (a terminate_error fault)",
				   cloud_words(f->f.error));
			if (f->f.error == PROVIDER_THROTTLED && f->f.delay_ns > 0)
				k->st.retry_after_s = (f->f.delay_ns + CLOCK_NS_PER_S - 1) / CLOCK_NS_PER_S;
			goto fail;
		}
	}
	k->ids = n ? calloc(n, sizeof(*k->ids)) : NULL;
	if (n && !k->ids) {
		status_set(&k->st, PROVIDER_TRANSIENT, "InternalError: out of memory");
		goto fail;
	}
	for (i = 0; i < n; i++) {
		k->ids[i] = strdup(ids[i] ? ids[i] : "");
		if (!k->ids[i]) {
			status_set(&k->st, PROVIDER_TRANSIENT, "InternalError: out of memory");
			goto fail;
		}
		k->n_ids = i + 1;
	}
	sim_cloud_tracef(c, "call %llu: terminate %s %zu instance(s)", (unsigned long long)k->no,
			 group, n);
	if (sim_after(c->ex, c->life, c->o.terminate_latency_ns, terminate_step, k, 0) < 0) {
		call_free(k);
		rc = -1;
	}
	sim_cloud_unlock(c);
	return rc;
fail:
	if (sim_after(c->ex, c->life, 0, call_fail_step, k, 0) < 0) {
		call_free(k);
		rc = -1;
	}
	sim_cloud_unlock(c);
	return rc;
}

/* ---- managed groups ---- */

struct mgroup {
	struct sim_member *m;
	size_t n, cap;
	int target;
	bool retry_queued;
	const char *const *zones;
	size_t n_zones;
};

struct sim_managed {
	_Atomic int refs;          /* the flavour + every creation in flight */
	_Atomic bool dead;
	struct sim_cloud *c;
	struct sim_managed_ops ops;
	struct sim_managed_opts o;
	void *ud;
	struct sim_life *life;     /* retry events */
	struct mgroup *g;
	size_t n_groups;
};

/* One creation, for its callbacks. */
struct attempt {
	struct sim_managed *m;
	size_t gi;
	char name[96];
};

static void managed_put(struct sim_managed *m)
{
	size_t i;

	if (atomic_fetch_sub(&m->refs, 1) != 1)
		return;
	if (m->ops.destroy)
		m->ops.destroy(m->ud);
	for (i = 0; i < m->n_groups; i++)
		free(m->g[i].m);
	free(m->g);
	free(m);
}

struct sim_managed *sim_managed_new(struct sim_cloud *c, const struct sim_managed_ops *ops,
				    const struct sim_managed_opts *o, void *ud)
{
	struct sim_managed *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	atomic_init(&m->refs, 1);
	atomic_init(&m->dead, false);
	m->c = c;
	m->ops = *ops;
	if (o)
		m->o = *o;
	m->ud = ud;
	m->n_groups = c->n_groups;
	m->g = m->n_groups ? calloc(m->n_groups, sizeof(*m->g)) : NULL;
	m->life = sim_life_new(m);
	if ((m->n_groups && !m->g) || !m->life) {
		sim_life_end(m->life);
		free(m->g);
		free(m);
		return NULL;
	}
	return m;
}

void sim_managed_free(struct sim_managed *m)
{
	if (!m)
		return;
	atomic_store(&m->dead, true);
	sim_life_end(m->life);
	managed_put(m);
}

void sim_managed_set_zones(struct sim_managed *m, size_t gi, const char *const *zones, size_t n)
{
	m->g[gi].zones = zones;
	m->g[gi].n_zones = n;
}

int sim_managed_target(const struct sim_managed *m, size_t gi)
{
	return m->g[gi].target;
}

void sim_managed_set_target(struct sim_managed *m, size_t gi, int target)
{
	m->g[gi].target = target;
}

struct sim_member *sim_managed_find(struct sim_managed *m, size_t gi, const char *name)
{
	size_t k;

	for (k = 0; name && k < m->g[gi].n; k++)
		if (strcmp(m->g[gi].m[k].name, name) == 0)
			return &m->g[gi].m[k];
	return NULL;
}

static void member_remove(struct sim_managed *m, size_t gi, size_t k)
{
	struct mgroup *g = &m->g[gi];

	memmove(&g->m[k], &g->m[k + 1], (g->n - k - 1) * sizeof(*g->m));
	g->n--;
}

struct sim_member *sim_managed_add(struct sim_managed *m, size_t gi, const char *name,
				   const char *zone)
{
	struct mgroup *g = &m->g[gi];
	struct sim_member *mem;

	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 16;
		struct sim_member *nm = realloc(g->m, cap * sizeof(*nm));

		if (!nm)
			return NULL;
		g->m = nm;
		g->cap = cap;
	}
	mem = &g->m[g->n++];
	memset(mem, 0, sizeof(*mem));
	snprintf(mem->name, sizeof(mem->name), "%.95s", name ? name : "");
	snprintf(mem->zone, sizeof(mem->zone), "%.31s", zone ? zone : "");
	mem->state = SIM_MEMBER_CREATING;
	return mem;
}

void sim_managed_refresh(struct sim_managed *m, size_t gi)
{
	struct mgroup *g = &m->g[gi];
	size_t k = 0;

	while (k < g->n) {
		struct sim_member *mem = &g->m[k];

		if (mem->state == SIM_MEMBER_DELETING && (!mem->in || mem->in->state == INSTANCE_GONE)) {
			member_remove(m, gi, k);
			continue;
		}
		if (mem->in && mem->state != SIM_MEMBER_DELETING &&
		    (mem->in->state == INSTANCE_STOPPING || mem->in->state == INSTANCE_GONE)) {
			struct sim_member gone = *mem;

			member_remove(m, gi, k);
			if (m->ops.lost)
				m->ops.lost(m->ud, gi, &gone);
			continue;
		}
		if (mem->in && mem->state == SIM_MEMBER_CREATING && mem->in->state == INSTANCE_RUNNING)
			mem->state = SIM_MEMBER_RUNNING;
		k++;
	}
}

struct sim_member *sim_managed_members(struct sim_managed *m, size_t gi, size_t *n)
{
	*n = m->g[gi].n;
	return m->g[gi].m;
}

int sim_managed_live(const struct sim_managed *m, size_t gi)
{
	size_t k;
	int n = 0;

	for (k = 0; k < m->g[gi].n; k++)
		if (m->g[gi].m[k].state != SIM_MEMBER_DELETING)
			n++;
	return n;
}

const char *sim_managed_spread_zone(const struct sim_managed *m, size_t gi)
{
	const struct mgroup *g = &m->g[gi];
	size_t z, k, best = 0;
	int best_n = -1;

	if (!g->n_zones)
		return "";
	for (z = 0; z < g->n_zones; z++) {
		int count = 0;

		for (k = 0; k < g->n; k++)
			if (g->m[k].state != SIM_MEMBER_DELETING && strcmp(g->m[k].zone, g->zones[z]) == 0)
				count++;
		if (best_n < 0 || count < best_n) {
			best_n = count;
			best = z;
		}
	}
	return g->zones[best];
}

static void attempt_instance(void *ctx, const struct sim_instance *copy)
{
	struct attempt *a = ctx;
	struct sim_managed *m = a->m;
	struct sim_member *mem;

	if (atomic_load(&m->dead))
		return;
	sim_cloud_lock(m->c);
	mem = sim_managed_find(m, a->gi, a->name);
	if (mem) {
		mem->in = sim_cloud_find_instance(m->c, copy->id);
		mem->error_code[0] = '\0';
		mem->error_message[0] = '\0';
	} else {
		/* deleted while being made: it goes at once */
		struct sim_instance *in = sim_cloud_find_instance(m->c, copy->id);

		if (in)
			sim_cloud_terminate_instance(m->c, in);
	}
	sim_cloud_unlock(m->c);
}

static void retry_fn(void *owner, void *data, uint64_t id, bool alive)
{
	struct sim_managed *m = owner;
	size_t gi = (size_t)id, k;

	(void)data;
	if (!alive)
		return;
	sim_cloud_lock(m->c);
	m->g[gi].retry_queued = false;
	for (k = 0; k < m->g[gi].n; k++) {
		struct sim_member *mem = &m->g[gi].m[k];

		if (mem->state == SIM_MEMBER_CREATING && !mem->in && !mem->launching)
			sim_managed_launch(m, gi, mem);
	}
	sim_cloud_unlock(m->c);
}

static void attempt_done(void *ctx, int count, const struct provider_status *st)
{
	struct attempt *a = ctx;
	struct sim_managed *m = a->m;
	struct sim_member *mem;

	if (atomic_load(&m->dead) || !st || st->code == PROVIDER_CANCELLED) {
		free(a);
		managed_put(m);
		return;
	}
	sim_cloud_lock(m->c);
	mem = sim_managed_find(m, a->gi, a->name);
	if (mem)
		mem->launching = false;
	if (mem && count < 1 && mem->state == SIM_MEMBER_CREATING) {
		struct mgroup *g = &m->g[a->gi];

		if (m->o.retry_ns <= 0)
			mem->state = SIM_MEMBER_FAILED;
		m->ops.failed(m->ud, a->gi, mem, st->code);
		if (m->o.retry_ns > 0 && !g->retry_queued &&
		    sim_after(m->c->ex, m->life, m->o.retry_ns, retry_fn, NULL, a->gi) == 0)
			g->retry_queued = true;
	}
	sim_cloud_unlock(m->c);
	free(a);
	managed_put(m);
}

void sim_managed_launch(struct sim_managed *m, size_t gi, struct sim_member *mem)
{
	struct attempt *a = calloc(1, sizeof(*a));
	struct sim_launch_spec spec;

	if (!a)
		return;
	a->m = m;
	a->gi = gi;
	snprintf(a->name, sizeof(a->name), "%s", mem->name);
	memset(&spec, 0, sizeof(spec));
	if (m->o.place)
		spec.zone = mem->zone;
	spec.admitted = true;
	spec.arg = a->name; /* the namer finds the member by name (under the lock) */
	atomic_fetch_add(&m->refs, 1);
	mem->launching = true;
	if (sim_cloud_launch_spec(m->c, m->c->groups[gi].def->name, 1, &spec, attempt_instance,
				  attempt_done, a) < 0) {
		mem->launching = false;
		atomic_fetch_sub(&m->refs, 1);
		free(a);
	}
}

void sim_managed_delete(struct sim_managed *m, size_t gi, struct sim_member *mem, uint64_t op)
{
	if (!mem->in) {
		/* never made (or still being made: attempt_instance stops it) */
		member_remove(m, gi, (size_t)(mem - m->g[gi].m));
		return;
	}
	mem->state = SIM_MEMBER_DELETING;
	mem->op = op;
	sim_cloud_terminate_instance(m->c, mem->in);
}

int sim_managed_resize(struct sim_managed *m, size_t gi, int size, uint64_t op)
{
	struct mgroup *g = &m->g[gi];
	int live = sim_managed_live(m, gi);

	g->target = size;
	while (live < size) {
		struct sim_member *mem = sim_managed_add(m, gi, NULL, sim_managed_spread_zone(m, gi));

		if (!mem)
			return -1;
		mem->op = op;
		m->ops.name(m->ud, gi, mem);
		sim_managed_launch(m, gi, mem);
		live++;
	}
	while (live > size) {
		size_t k = g->n;

		while (k > 0 && g->m[k - 1].state == SIM_MEMBER_DELETING)
			k--;
		if (k == 0)
			break;
		sim_managed_delete(m, gi, &g->m[k - 1], op);
		live--;
	}
	return 0;
}

void sim_managed_adopt(struct sim_managed *m, size_t gi)
{
	struct sim_instance *const *inst;
	size_t k, n;

	inst = sim_cloud_instances(m->c, gi, &n);
	for (k = 0; k < n; k++) {
		struct sim_member *mem = sim_managed_add(m, gi, inst[k]->id, inst[k]->zone);

		if (!mem)
			break;
		mem->in = inst[k];
		mem->state = inst[k]->state == INSTANCE_RUNNING ? SIM_MEMBER_RUNNING
							       : SIM_MEMBER_CREATING;
	}
	m->g[gi].target = (int)m->g[gi].n;
}

void sim_managed_op_times(const struct sim_managed *m, size_t gi, int64_t default_ns,
			  int64_t *start_ns, int64_t *start_wall, int64_t *done_ns)
{
	int64_t delay = sim_cloud_call_delay(m->c, m->c->groups[gi].def->name);

	*start_ns = sim_cloud_now(m->c);
	*start_wall = clock_wall(executor_clock(m->c->ex));
	*done_ns = *start_ns + (delay >= 0 ? delay : default_ns);
}

uint32_t sim_cloud_next_ip(uint32_t *next, unsigned lowest)
{
	uint32_t n;

	do {
		n = (*next)++;
	} while ((n & 255) < lowest || (n & 255) == 255);
	return n;
}
