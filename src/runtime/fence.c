/*
 * fence: see fence.h. The deadline is an atomic read on every ask; the
 * mutex and condition variable serve only the waits and the listeners.
 */
#include "runtime/fence.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define VIRTUAL_POLL_NS (10 * CLOCK_NS_PER_MS)

struct listener {
	void (*fn)(void *ctx);
	void *ctx;
};

struct fence {
	struct clock *clock;
	atomic_llong until;        /* INT64_MIN: closed */
	atomic_ullong refused;
	pthread_mutex_t mu;
	pthread_cond_t cv;         /* CLOCK_MONOTONIC */
	struct listener listeners[FENCE_MAX_LISTENERS];
	size_t n_listeners;
	int closing;               /* fence_close() calls listeners outside the lock */
};

struct fence *fence_new(struct clock *c)
{
	struct fence *f = calloc(1, sizeof(*f));
	pthread_condattr_t a;

	if (!f)
		return NULL;
	f->clock = c;
	atomic_init(&f->until, INT64_MIN);
	atomic_init(&f->refused, 0);
	pthread_mutex_init(&f->mu, NULL);
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&f->cv, &a);
	pthread_condattr_destroy(&a);
	return f;
}

void fence_free(struct fence *f)
{
	if (!f)
		return;
	pthread_cond_destroy(&f->cv);
	pthread_mutex_destroy(&f->mu);
	free(f);
}

void fence_open_until(struct fence *f, int64_t until_ns)
{
	pthread_mutex_lock(&f->mu);
	atomic_store(&f->until, until_ns);
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
}

void fence_close(struct fence *f)
{
	struct listener l[FENCE_MAX_LISTENERS];
	size_t n, i;

	pthread_mutex_lock(&f->mu);
	atomic_store(&f->until, INT64_MIN);
	pthread_cond_broadcast(&f->cv);
	n = f->n_listeners;
	for (i = 0; i < n; i++)
		l[i] = f->listeners[i];
	f->closing++;
	pthread_mutex_unlock(&f->mu);
	for (i = 0; i < n; i++)
		l[i].fn(l[i].ctx);
	pthread_mutex_lock(&f->mu);
	f->closing--;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
}

bool fence_holds(const struct fence *f)
{
	if (!f)
		return true;
	return clock_now(f->clock) < atomic_load(&((struct fence *)f)->until);
}

int64_t fence_deadline(const struct fence *f)
{
	return f ? atomic_load(&((struct fence *)f)->until) : INT64_MAX;
}

void fence_why(const struct fence *f, char *out, size_t outlen)
{
	int64_t until = fence_deadline(f), now;

	if (!f || until == INT64_MIN) {
		snprintf(out, outlen, "this process does not hold the leader Lease");
		return;
	}
	now = clock_now(f->clock);
	if (now < until)
		snprintf(out, outlen, "this process holds the leader Lease");
	else
		snprintf(out, outlen,
			 "this process's hold on the leader Lease lapsed %.1f s ago (not renewed "
			 "within the renew deadline)",
			 (double)(now - until) / CLOCK_NS_PER_S);
}

int fence_listen(struct fence *f, void (*fn)(void *ctx), void *ctx)
{
	int rc = -1;

	pthread_mutex_lock(&f->mu);
	if (f->n_listeners < FENCE_MAX_LISTENERS) {
		f->listeners[f->n_listeners].fn = fn;
		f->listeners[f->n_listeners].ctx = ctx;
		f->n_listeners++;
		rc = 0;
	}
	pthread_mutex_unlock(&f->mu);
	return rc;
}

void fence_unlisten(struct fence *f, void (*fn)(void *ctx), void *ctx)
{
	size_t i;

	pthread_mutex_lock(&f->mu);
	for (i = 0; i < f->n_listeners; i++) {
		if (f->listeners[i].fn == fn && f->listeners[i].ctx == ctx) {
			f->listeners[i] = f->listeners[--f->n_listeners];
			break;
		}
	}
	/* a fence_close() that copied the list may still be calling it */
	while (f->closing)
		pthread_cond_wait(&f->cv, &f->mu);
	pthread_mutex_unlock(&f->mu);
}

/* CLOCK_MONOTONIC 'ns' from now, as a timespec for the condition variable. */
static struct timespec real_after(int64_t ns)
{
	struct timespec ts;
	int64_t t;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	t = (int64_t)ts.tv_sec * CLOCK_NS_PER_S + ts.tv_nsec + ns;
	ts.tv_sec = (time_t)(t / CLOCK_NS_PER_S);
	ts.tv_nsec = (long)(t % CLOCK_NS_PER_S);
	return ts;
}

int fence_sleep_until(struct fence *f, struct clock *c, int64_t at_ns)
{
	bool real = c == clock_real();
	int rc = 0;

	if (!f) {
		int64_t now;

		while ((now = clock_now(c)) < at_ns) {
			struct timespec ts;
			int64_t step = at_ns - now;

			if (real)
				return c->ops->sleep_until(c, at_ns) == 0 ? 0 : -1;
			if (step > VIRTUAL_POLL_NS)
				step = VIRTUAL_POLL_NS;
			ts.tv_sec = (time_t)(step / CLOCK_NS_PER_S);
			ts.tv_nsec = (long)(step % CLOCK_NS_PER_S);
			nanosleep(&ts, NULL);
		}
		return 0;
	}
	pthread_mutex_lock(&f->mu);
	for (;;) {
		int64_t now = clock_now(c), nowf = clock_now(f->clock);
		int64_t until = atomic_load(&f->until), wake;
		struct timespec ts;

		if (nowf >= until) {
			rc = -1;
			break;
		}
		if (now >= at_ns)
			break;
		/* wake at the earlier of the reserved time and the lapse */
		wake = at_ns - now < until - nowf ? at_ns - now : until - nowf;
		if (!real && wake > VIRTUAL_POLL_NS)
			wake = VIRTUAL_POLL_NS;
		ts = real_after(wake);
		pthread_cond_timedwait(&f->cv, &f->mu, &ts);
	}
	pthread_mutex_unlock(&f->mu);
	return rc;
}

uint64_t fence_refused(const struct fence *f)
{
	return f ? atomic_load(&((struct fence *)f)->refused) : 0;
}

void fence_count_refusal(struct fence *f)
{
	if (f)
		atomic_fetch_add(&f->refused, 1);
}
