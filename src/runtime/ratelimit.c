/*
 * ratelimit: a token bucket kept as a reservation schedule. 'tat' is the
 * time at which the bucket would be full again given every reservation so
 * far; a new reservation goes ahead at tat - (burst - 1) * interval (or now),
 * so callers are served in the order they reserved. Does not own the clock
 * or the executor it schedules on.
 */
#include "runtime/ratelimit.h"

#include "runtime/fence.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

struct ratelimit {
	struct clock *clock;
	pthread_mutex_t mu;
	int64_t interval;  /* ns per token: 1e9 / qps rounded up, never faster */
	int64_t tolerance; /* (burst - 1) * interval: how far ahead a grant may be */
	int64_t tat;       /* theoretical arrival time of the next token */
	int burst;
	double qps_base;   /* the configured rate */
	double qps_now;    /* the rate in force: lower after the server throttled */
	_Atomic uint64_t granted;
	_Atomic int64_t waited_ns; /* sum of the waits granted reservations imposed */
	struct fence *fence;       /* the writes it paces go out only while it holds; NULL none */
};

/* The slowest a throttled bucket gets, as a fraction of its rate, and how
 * much of the configured rate each call that went through gives back. */
#define SLOWEST 16.0
#define RECOVER_STEP 0.1

/* Sets the rate in force (under the lock). */
static void set_rate(struct ratelimit *rl, double qps)
{
	double interval = ceil((double)CLOCK_NS_PER_S / qps);

	rl->qps_now = qps;
	rl->interval = interval < 1 ? 1 : (int64_t)interval;
	rl->tolerance = (int64_t)(rl->burst - 1) * rl->interval;
}

/*
 * Returns a full bucket of 'burst' tokens refilled at 'qps' a second on
 * clock 'c' (borrowed), or NULL when qps is not a positive finite number
 * (or so small that one token would take centuries), burst < 1, or out of
 * memory. Free with ratelimit_free().
 */
struct ratelimit *ratelimit_new(struct clock *c, double qps, int burst)
{
	struct ratelimit *rl;
	double interval;

	if (!c || !isfinite(qps) || qps <= 0 || burst < 1)
		return NULL;
	interval = ceil((double)CLOCK_NS_PER_S / qps);
	if (interval < 1)
		interval = 1;
	/* keep interval * burst and tat arithmetic far from overflow, also
	 * when a throttled bucket slows down */
	if (interval * SLOWEST > (double)(INT64_MAX / 4) / burst)
		return NULL;
	rl = calloc(1, sizeof(*rl));
	if (!rl)
		return NULL;
	if (pthread_mutex_init(&rl->mu, NULL) != 0) {
		free(rl);
		return NULL;
	}
	rl->clock = c;
	rl->burst = burst;
	rl->qps_base = qps;
	set_rate(rl, qps);
	rl->tat = clock_now(c); /* a tat in the past means a full bucket */
	atomic_init(&rl->granted, 0);
	atomic_init(&rl->waited_ns, 0);
	return rl;
}

/* Frees a bucket; NULL is ignored. No acquire may be in progress. */
void ratelimit_free(struct ratelimit *rl)
{
	if (!rl)
		return;
	pthread_mutex_destroy(&rl->mu);
	free(rl);
}

/* A reservation, with what it takes to undo it. */
struct resv {
	int64_t at;      /* when the caller may go ahead; -1: refused */
	int64_t old_tat; /* before it */
	int64_t new_tat; /* after it */
};

static struct resv reserve(struct ratelimit *rl, int64_t now, int64_t deadline)
{
	struct resv r;
	int64_t t0;

	pthread_mutex_lock(&rl->mu);
	r.old_tat = rl->tat;
	t0 = rl->tat > now ? rl->tat : now;
	r.at = t0 - rl->tolerance;
	if (r.at < now)
		r.at = now;
	if (r.at > deadline) {
		r.at = -1;
		r.new_tat = rl->tat;
	} else {
		rl->tat = t0 + rl->interval;
		r.new_tat = rl->tat;
		atomic_fetch_add(&rl->granted, 1);
		atomic_fetch_add(&rl->waited_ns, r.at - now);
	}
	pthread_mutex_unlock(&rl->mu);
	return r;
}

/* Gives a reservation back when it could not be used. The token returns to
 * the bucket only if nobody reserved after it (the schedule of later callers
 * never moves); otherwise its slot is simply lost, which errs on the safe
 * side of the limit. */
static void unreserve(struct ratelimit *rl, const struct resv *r)
{
	pthread_mutex_lock(&rl->mu);
	if (rl->tat == r->new_tat)
		rl->tat = r->old_tat;
	atomic_fetch_sub(&rl->granted, 1);
	pthread_mutex_unlock(&rl->mu);
}

/* See ratelimit.h. Thread-safe. */
int64_t ratelimit_reserve(struct ratelimit *rl, int64_t deadline_ns)
{
	return reserve(rl, clock_now(rl->clock), deadline_ns).at;
}

/* See ratelimit.h. Thread-safe; sleeps outside the lock, so callers queue
 * by reservation, not by lock order. On a clock that cannot sleep (virtual)
 * it succeeds only when a token is there now. */
void ratelimit_set_fence(struct ratelimit *rl, struct fence *f)
{
	rl->fence = f;
}

int ratelimit_acquire(struct ratelimit *rl, int64_t deadline_ns)
{
	int64_t now = clock_now(rl->clock);
	struct resv r;

	if (!fence_holds(rl->fence)) {
		fence_count_refusal(rl->fence);
		return RATELIMIT_FENCED;
	}
	r = reserve(rl, now, deadline_ns);
	if (r.at < 0)
		return -1;
	if (rl->fence) {
		/* the wait ends at once when the fence closes or lapses; a
		 * token given back then is no loss: nothing more is sent */
		if (fence_sleep_until(rl->fence, rl->clock, r.at) < 0 || !fence_holds(rl->fence)) {
			unreserve(rl, &r);
			fence_count_refusal(rl->fence);
			return RATELIMIT_FENCED;
		}
		return 0;
	}
	if (r.at > now && rl->clock->ops->sleep_until(rl->clock, r.at) != 0) {
		unreserve(rl, &r);
		return -1;
	}
	return 0;
}

/* An asynchronous grant through a fence: fn runs cancelled when the fence
 * no longer holds at the reserved time. */
struct fenced {
	struct ratelimit *rl;
	task_fn fn;
	void *arg;
};

static void run_fenced(void *p, bool cancelled)
{
	struct fenced g = *(struct fenced *)p;

	free(p);
	if (!cancelled && !fence_holds(g.rl->fence)) {
		fence_count_refusal(g.rl->fence);
		cancelled = true;
	}
	g.fn(g.arg, cancelled);
}

/* fn(arg, true) as a task, for an acquire whose deadline would pass. */
struct expired {
	task_fn fn;
	void *arg;
};

static void run_expired(void *p, bool cancelled)
{
	struct expired e = *(struct expired *)p;

	(void)cancelled;
	free(p);
	e.fn(e.arg, true);
}

/*
 * See ratelimit.h. 'ex' should run on the bucket's clock. fn never runs on
 * the caller's stack: on success it is scheduled for the reserved time;
 * when the deadline would pass it is submitted to run at once with
 * cancelled = true. Thread-safe.
 */
int ratelimit_acquire_async(struct ratelimit *rl, struct executor *ex, int64_t deadline_ns,
			    task_fn fn, void *arg)
{
	int64_t now = clock_now(rl->clock);
	struct resv r = reserve(rl, now, deadline_ns);

	if (r.at < 0) {
		struct expired *e = malloc(sizeof(*e));

		if (!e)
			return -1;
		e->fn = fn;
		e->arg = arg;
		if (executor_submit(ex, run_expired, e) != 0) {
			free(e);
			return -1;
		}
		return 0;
	}
	if (rl->fence) {
		struct fenced *g = malloc(sizeof(*g));

		if (!g) {
			unreserve(rl, &r);
			return -1;
		}
		g->rl = rl;
		g->fn = fn;
		g->arg = arg;
		if (executor_after(ex, r.at - now, run_fenced, g) != 0) {
			free(g);
			unreserve(rl, &r);
			return -1;
		}
		return 0;
	}
	if (executor_after(ex, r.at - now, fn, arg) != 0) {
		unreserve(rl, &r);
		return -1;
	}
	return 0;
}

/* Reservations granted so far (including ones whose time has not come). */
uint64_t ratelimit_granted(const struct ratelimit *rl)
{
	return atomic_load(&((struct ratelimit *)rl)->granted);
}

/* See ratelimit.h. Thread-safe. */
void ratelimit_throttled(struct ratelimit *rl)
{
	int64_t now = clock_now(rl->clock);
	double qps;

	pthread_mutex_lock(&rl->mu);
	qps = rl->qps_now / 2;
	if (qps < rl->qps_base / SLOWEST)
		qps = rl->qps_base / SLOWEST;
	set_rate(rl, qps);
	/* the tokens saved up are gone: the next call waits a whole interval */
	if (rl->tat < now + rl->tolerance + rl->interval)
		rl->tat = now + rl->tolerance + rl->interval;
	pthread_mutex_unlock(&rl->mu);
}

/* See ratelimit.h. Thread-safe. */
void ratelimit_succeeded(struct ratelimit *rl)
{
	pthread_mutex_lock(&rl->mu);
	if (rl->qps_now < rl->qps_base) {
		double qps = rl->qps_now + rl->qps_base * RECOVER_STEP;

		set_rate(rl, qps > rl->qps_base ? rl->qps_base : qps);
	}
	pthread_mutex_unlock(&rl->mu);
}

/* See ratelimit.h. Thread-safe. */
double ratelimit_rate(struct ratelimit *rl)
{
	double qps;

	pthread_mutex_lock(&rl->mu);
	qps = rl->qps_now;
	pthread_mutex_unlock(&rl->mu);
	return qps;
}

/* See ratelimit.h. Thread-safe. */
int64_t ratelimit_waited_ns(const struct ratelimit *rl)
{
	return atomic_load(&((struct ratelimit *)rl)->waited_ns);
}
