/*
 * clock: the real clock (CLOCK_MONOTONIC for intervals, CLOCK_REALTIME for
 * wall time) and virtual clocks that move only when told to. Does not own
 * any scheduling: the executor decides when a virtual clock moves.
 */
#include "runtime/clock.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

static int64_t ts_to_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * CLOCK_NS_PER_S + ts->tv_nsec;
}

static int64_t real_now_ns(const struct clock *c)
{
	struct timespec ts;

	(void)c;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts_to_ns(&ts);
}

static int64_t real_wall_s(const struct clock *c)
{
	struct timespec ts;

	(void)c;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec;
}

static int real_sleep_until(struct clock *c, int64_t t)
{
	struct timespec ts;
	int rc;

	(void)c;
	if (t <= 0)
		return 0;
	ts.tv_sec = (time_t)(t / CLOCK_NS_PER_S);
	ts.tv_nsec = (long)(t % CLOCK_NS_PER_S);
	/* absolute sleeps restart cleanly after a signal */
	do
		rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	while (rc == EINTR);
	return rc == 0 ? 0 : -1;
}

static const struct clock_ops real_ops = {
	.now_ns = real_now_ns,
	.wall_s = real_wall_s,
	.sleep_until = real_sleep_until,
};

static struct clock real_clock = { .ops = &real_ops };

struct clock *clock_real(void)
{
	return &real_clock;
}

/* A virtual clock. 'now' is atomic so that a thread other than the one that
 * moves it (a metrics reader, a test) may read it without a data race. */
struct vclock {
	struct clock base; /* first: a struct clock * is a struct vclock * */
	_Atomic int64_t now;
	int64_t wall_start;
};

static int64_t v_now_ns(const struct clock *c)
{
	const struct vclock *v = (const struct vclock *)c;

	return atomic_load(&((struct vclock *)v)->now);
}

static int64_t v_wall_s(const struct clock *c)
{
	const struct vclock *v = (const struct vclock *)c;

	return v->wall_start + v_now_ns(c) / CLOCK_NS_PER_S;
}

static int v_sleep_until(struct clock *c, int64_t t)
{
	return t <= v_now_ns(c) ? 0 : -1;
}

static const struct clock_ops virtual_ops = {
	.now_ns = v_now_ns,
	.wall_s = v_wall_s,
	.sleep_until = v_sleep_until,
};

/* Returns a virtual clock starting at monotonic 0 and wall time
 * 'wall_start' (unix seconds), or NULL when out of memory. The caller
 * frees it with vclock_free(). */
struct clock *vclock_new(int64_t wall_start)
{
	struct vclock *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	v->base.ops = &virtual_ops;
	atomic_init(&v->now, 0);
	v->wall_start = wall_start;
	return &v->base;
}

/* Frees a clock from vclock_new(); NULL and the real clock are ignored. */
void vclock_free(struct clock *c)
{
	if (!c || c->ops != &virtual_ops)
		return;
	free(c);
}

/* Moves a virtual clock forward to 't'; an earlier 't' is ignored, as is a
 * clock that is not virtual. Safe against concurrent readers and setters. */
void vclock_set(struct clock *c, int64_t t)
{
	struct vclock *v = (struct vclock *)c;
	int64_t cur;

	if (!c || c->ops != &virtual_ops)
		return;
	cur = atomic_load(&v->now);
	while (t > cur && !atomic_compare_exchange_weak(&v->now, &cur, t))
		;
}
