/*
 * batcher: the reconcile trigger — an idle/max batching window over watch
 * events plus a periodic resync, as pure logic on passed-in times, and a
 * mutex/condition-variable wrapper whose waits are timed on CLOCK_MONOTONIC
 * (the real clock's base) and cut short by events and stop requests.
 */
#include "engine/batcher.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "runtime/clock.h"

#define DEFAULT_IDLE (1 * CLOCK_NS_PER_S)
#define DEFAULT_MAX (10 * CLOCK_NS_PER_S)
#define DEFAULT_INTERVAL (10 * CLOCK_NS_PER_S)
#define DEFAULT_NEW_POD (100 * CLOCK_NS_PER_MS)

const char *batcher_reason_str(enum batcher_reason r)
{
	switch (r) {
	case BATCH_NONE:
		return "none";
	case BATCH_REQUESTED:
		return "requested";
	case BATCH_FIRST:
		return "first";
	case BATCH_MAX:
		return "max";
	case BATCH_IDLE:
		return "idle";
	case BATCH_NEW_POD:
		return "new_pod";
	case BATCH_RESYNC:
		return "resync";
	}
	return "?";
}

/* ---- the window ---- */

void batcher_window_init(struct batcher_window *w, const struct batcher_policy *p)
{
	struct batcher_policy d = {0};

	if (p)
		d = *p;
	if (d.idle_ns <= 0)
		d.idle_ns = DEFAULT_IDLE;
	if (d.max_ns <= 0)
		d.max_ns = DEFAULT_MAX;
	if (d.idle_ns > d.max_ns)
		d.idle_ns = d.max_ns;
	if (d.interval_ns == 0)
		d.interval_ns = DEFAULT_INTERVAL;
	if (d.new_pod_ns == 0)
		d.new_pod_ns = DEFAULT_NEW_POD;
	if (d.new_pod_ns > d.idle_ns)
		d.new_pod_ns = d.idle_ns;
	*w = (struct batcher_window){.p = d};
}

void batcher_window_event(struct batcher_window *w, int64_t now)
{
	if (!w->dirty) {
		w->dirty = true;
		w->first_ns = w->last_ns = now;
	} else if (now > w->last_ns) {
		w->last_ns = now;
	}
}

void batcher_window_new_pod(struct batcher_window *w, int64_t now)
{
	batcher_window_event(w, now);
	if (w->p.new_pod_ns < 0)
		return;
	if (!w->new_pod || now < w->new_pod_first_ns) {
		w->new_pod = true;
		w->new_pod_first_ns = now;
	}
}

void batcher_window_request(struct batcher_window *w)
{
	w->requested = true;
}

/* a - b, saturating (times may be anywhere on a clock's range). */
static int64_t since(int64_t a, int64_t b)
{
	if (b < 0 && a > INT64_MAX + b)
		return INT64_MAX;
	if (b > 0 && a < INT64_MIN + b)
		return INT64_MIN;
	return a - b;
}

static int64_t after(int64_t t, int64_t d)
{
	return d > 0 && t > INT64_MAX - d ? INT64_MAX : t + d;
}

enum batcher_reason batcher_window_due(const struct batcher_window *w, int64_t now)
{
	if (w->requested)
		return BATCH_REQUESTED;
	if (!w->ran)
		return BATCH_FIRST;
	if (w->dirty) {
		if (w->new_pod && since(now, w->new_pod_first_ns) >= w->p.new_pod_ns)
			return BATCH_NEW_POD;
		if (since(now, w->first_ns) >= w->p.max_ns)
			return BATCH_MAX;
		if (since(now, w->last_ns) >= w->p.idle_ns)
			return BATCH_IDLE;
	}
	if (w->p.interval_ns > 0 && since(now, w->last_run_ns) >= w->p.interval_ns)
		return BATCH_RESYNC;
	return BATCH_NONE;
}

int64_t batcher_window_next(const struct batcher_window *w, int64_t now)
{
	int64_t t = INT64_MAX, u;

	if (batcher_window_due(w, now) != BATCH_NONE)
		return now;
	if (w->dirty) {
		t = after(w->last_ns, w->p.idle_ns);
		u = after(w->first_ns, w->p.max_ns);
		if (u < t)
			t = u;
		if (w->new_pod) {
			u = after(w->new_pod_first_ns, w->p.new_pod_ns);
			if (u < t)
				t = u;
		}
	}
	if (w->p.interval_ns > 0) {
		u = after(w->last_run_ns, w->p.interval_ns);
		if (u < t)
			t = u;
	}
	return t;
}

void batcher_window_ran(struct batcher_window *w, int64_t now)
{
	w->dirty = false;
	w->new_pod = false;
	w->requested = false;
	w->ran = true;
	w->last_run_ns = now;
}

/* ---- the threaded wrapper ---- */

struct batcher {
	pthread_mutex_t mu;
	pthread_cond_t cv; /* the deadline moved earlier, or stop */
	struct batcher_window w;
	bool stop;
	uint64_t events;
};

static int64_t now_ns(void)
{
	return clock_now(clock_real());
}

struct batcher *batcher_new(const struct batcher_policy *p, struct errbuf *err)
{
	struct batcher *b = calloc(1, sizeof(*b));
	pthread_condattr_t attr;
	int rc;

	if (!b) {
		errbuf_set(err, "out of memory");
		return NULL;
	}
	batcher_window_init(&b->w, p);
	if (pthread_mutex_init(&b->mu, NULL) != 0) {
		free(b);
		errbuf_set(err, "batcher: cannot create a mutex");
		return NULL;
	}
	rc = pthread_condattr_init(&attr);
	if (rc == 0) {
		rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
		if (rc == 0)
			rc = pthread_cond_init(&b->cv, &attr);
		pthread_condattr_destroy(&attr);
	}
	if (rc != 0) {
		pthread_mutex_destroy(&b->mu);
		free(b);
		errbuf_set(err, "batcher: cannot create a condition variable");
		return NULL;
	}
	return b;
}

void batcher_free(struct batcher *b)
{
	if (!b)
		return;
	pthread_cond_destroy(&b->cv);
	pthread_mutex_destroy(&b->mu);
	free(b);
}

void batcher_event(struct batcher *b)
{
	int64_t now = now_ns();
	bool wake;

	pthread_mutex_lock(&b->mu);
	/* later events only push the idle deadline back: the waiter finds
	 * that out when it wakes, so only the first one needs to wake it */
	wake = !b->w.dirty;
	batcher_window_event(&b->w, now);
	b->events++;
	if (wake)
		pthread_cond_signal(&b->cv);
	pthread_mutex_unlock(&b->mu);
}

void batcher_new_pod(struct batcher *b)
{
	int64_t now = now_ns();
	int64_t before;

	pthread_mutex_lock(&b->mu);
	/* wake the waiter when this brings the deadline forward */
	before = batcher_window_next(&b->w, now);
	batcher_window_new_pod(&b->w, now);
	b->events++;
	if (batcher_window_next(&b->w, now) < before)
		pthread_cond_signal(&b->cv);
	pthread_mutex_unlock(&b->mu);
}

void batcher_request(struct batcher *b)
{
	pthread_mutex_lock(&b->mu);
	batcher_window_request(&b->w);
	pthread_cond_signal(&b->cv);
	pthread_mutex_unlock(&b->mu);
}

void batcher_stop(struct batcher *b)
{
	pthread_mutex_lock(&b->mu);
	b->stop = true;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
}

enum batcher_reason batcher_wait(struct batcher *b)
{
	enum batcher_reason r = BATCH_NONE;

	pthread_mutex_lock(&b->mu);
	while (!b->stop) {
		int64_t now = now_ns(), t;

		r = batcher_window_due(&b->w, now);
		if (r != BATCH_NONE) {
			batcher_window_ran(&b->w, now);
			break;
		}
		t = batcher_window_next(&b->w, now);
		if (t == INT64_MAX) {
			pthread_cond_wait(&b->cv, &b->mu);
		} else {
			struct timespec ts = {.tv_sec = (time_t)(t / CLOCK_NS_PER_S),
					      .tv_nsec = (long)(t % CLOCK_NS_PER_S)};

			pthread_cond_timedwait(&b->cv, &b->mu, &ts);
		}
	}
	if (b->stop)
		r = BATCH_NONE;
	pthread_mutex_unlock(&b->mu);
	return r;
}

uint64_t batcher_events(struct batcher *b)
{
	uint64_t n;

	pthread_mutex_lock(&b->mu);
	n = b->events;
	pthread_mutex_unlock(&b->mu);
	return n;
}
