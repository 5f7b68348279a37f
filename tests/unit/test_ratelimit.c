/*
 * Tests for ratelimit: burst then steady rate, refill, deadlines (nothing
 * taken on a refusal), FIFO order of reservations, asynchronous acquires on
 * the virtual executor, the limit itself ("in any window of length t, at
 * most qps * t + burst grants") over a long virtual run with many clients,
 * and blocking/asynchronous acquires from real threads (counted, never
 * timed).
 */
#include <pthread.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/backoff.h"
#include "runtime/clock.h"
#include "runtime/executor.h"
#include "runtime/ratelimit.h"

#define MS CLOCK_NS_PER_MS
#define SEC CLOCK_NS_PER_S
#define NEVER INT64_MAX
#define WAIT (30 * SEC) /* real-thread fallback: reached only on a bug */

static void test_new_rejects_bad_values(void **state)
{
	struct clock *c = vclock_new(0);

	(void)state;
	assert_null(ratelimit_new(c, 0, 1));
	assert_null(ratelimit_new(c, -1, 1));
	assert_null(ratelimit_new(c, NAN, 1));
	assert_null(ratelimit_new(c, INFINITY, 1));
	assert_null(ratelimit_new(c, 10, 0));
	assert_null(ratelimit_new(c, 10, -3));
	assert_null(ratelimit_new(c, 1e-30, 1)); /* one token in 3e13 years */
	assert_null(ratelimit_new(NULL, 10, 1));
	ratelimit_free(NULL);
	vclock_free(c);
}

static void test_burst_then_steady(void **state)
{
	struct clock *c = vclock_new(0);
	struct ratelimit *rl = ratelimit_new(c, 10, 5);
	int i;

	(void)state;
	for (i = 0; i < 5; i++)
		assert_int_equal(ratelimit_reserve(rl, NEVER), 0);
	for (i = 1; i <= 5; i++)
		assert_int_equal(ratelimit_reserve(rl, NEVER), i * 100 * MS);
	assert_int_equal(ratelimit_granted(rl), 10);

	/* long idle: full again, and never more than full */
	vclock_set(c, 10 * SEC);
	for (i = 0; i < 5; i++)
		assert_int_equal(ratelimit_reserve(rl, NEVER), 10 * SEC);
	assert_int_equal(ratelimit_reserve(rl, NEVER), 10 * SEC + 100 * MS);
	ratelimit_free(rl);
	vclock_free(c);
}

static void test_partial_refill(void **state)
{
	struct clock *c = vclock_new(0);
	struct ratelimit *rl = ratelimit_new(c, 10, 5);
	int i;

	(void)state;
	for (i = 0; i < 5; i++)
		assert_int_equal(ratelimit_reserve(rl, NEVER), 0);
	/* 250 ms later 2.5 tokens came back: two now, the third at 300 ms */
	vclock_set(c, 250 * MS);
	assert_int_equal(ratelimit_reserve(rl, NEVER), 250 * MS);
	assert_int_equal(ratelimit_reserve(rl, NEVER), 250 * MS);
	assert_int_equal(ratelimit_reserve(rl, NEVER), 300 * MS);
	ratelimit_free(rl);
	vclock_free(c);
}

static void test_fractional_rate_never_faster(void **state)
{
	struct clock *c = vclock_new(0);
	struct ratelimit *rl = ratelimit_new(c, 3, 1);
	int64_t prev = -1;
	int k;

	(void)state;
	for (k = 0; k < 3000; k++) {
		int64_t at = ratelimit_reserve(rl, NEVER);

		assert_true(at > prev);
		/* k + 1 grants in [0, at]: at most 3 * at + 1 */
		assert_true((double)(k + 1) <= 3.0 * (double)at / SEC + 1 + 1e-9);
		prev = at;
	}
	/* and not much slower than asked: 3000 grants within 1000 s + 1 ms */
	assert_true(prev <= 1000 * SEC + MS);
	ratelimit_free(rl);
	vclock_free(c);
}

static void test_deadline_takes_nothing(void **state)
{
	struct clock *c = vclock_new(0);
	struct ratelimit *rl = ratelimit_new(c, 10, 1);

	(void)state;
	assert_int_equal(ratelimit_reserve(rl, NEVER), 0);
	/* the next token comes at 100 ms */
	assert_int_equal(ratelimit_reserve(rl, 50 * MS), -1);
	assert_int_equal(ratelimit_reserve(rl, 99 * MS), -1);
	assert_int_equal(ratelimit_granted(rl), 1);
	assert_int_equal(ratelimit_reserve(rl, 100 * MS), 100 * MS); /* the same slot */
	assert_int_equal(ratelimit_reserve(rl, NEVER), 200 * MS);

	/* a deadline already past refuses even a saved token */
	vclock_set(c, 10 * SEC);
	assert_int_equal(ratelimit_reserve(rl, 10 * SEC - 1), -1);
	assert_int_equal(ratelimit_reserve(rl, 10 * SEC), 10 * SEC);
	ratelimit_free(rl);
	vclock_free(c);
}

static void test_blocking_acquire_on_virtual_clock(void **state)
{
	struct clock *c = vclock_new(0);
	struct ratelimit *rl = ratelimit_new(c, 10, 2);

	(void)state;
	assert_int_equal(ratelimit_acquire(rl, NEVER), 0);
	assert_int_equal(ratelimit_acquire(rl, NEVER), 0);
	/* a virtual clock cannot be slept on: refused, and no token taken */
	assert_int_equal(ratelimit_acquire(rl, NEVER), -1);
	assert_int_equal(ratelimit_acquire(rl, 50 * MS), -1);
	assert_int_equal(ratelimit_granted(rl), 2);
	assert_int_equal(ratelimit_reserve(rl, NEVER), 100 * MS);
	ratelimit_free(rl);
	vclock_free(c);
}

/* ---- asynchronous, virtual -------------------------------------------- */

struct waiter {
	struct executor *ex;
	int id;
	int *order, *n;
	int64_t at;
	bool cancelled;
	int calls;
};

static void waiter_task(void *arg, bool cancelled)
{
	struct waiter *w = arg;

	w->calls++;
	w->cancelled = cancelled;
	w->at = clock_now(executor_clock(w->ex));
	w->order[(*w->n)++] = w->id;
}

static void test_async_fifo(void **state)
{
	struct clock *c = vclock_new(0);
	struct executor *ex = executor_new_virtual(c);
	struct ratelimit *rl = ratelimit_new(c, 10, 2);
	struct waiter w[10];
	int order[10], n = 0, i;

	(void)state;
	for (i = 0; i < 10; i++) {
		w[i] = (struct waiter){ .ex = ex, .id = i, .order = order, .n = &n };
		assert_int_equal(ratelimit_acquire_async(rl, ex, NEVER, waiter_task, &w[i]), 0);
	}
	assert_int_equal(n, 0); /* never on the caller's stack */
	assert_int_equal(executor_run_all(ex), 10);
	for (i = 0; i < 10; i++) {
		assert_int_equal(order[i], i);
		assert_int_equal(w[i].calls, 1);
		assert_false(w[i].cancelled);
		assert_int_equal(w[i].at, i < 2 ? 0 : (i - 1) * 100 * MS);
	}
	executor_shutdown(ex, NEVER);
	ratelimit_free(rl);
	vclock_free(c);
}

static void test_async_deadline(void **state)
{
	struct clock *c = vclock_new(0);
	struct executor *ex = executor_new_virtual(c);
	struct ratelimit *rl = ratelimit_new(c, 10, 1);
	struct waiter w[3];
	int order[3], n = 0, i;

	(void)state;
	for (i = 0; i < 3; i++)
		w[i] = (struct waiter){ .ex = ex, .id = i, .order = order, .n = &n };
	assert_int_equal(ratelimit_acquire_async(rl, ex, NEVER, waiter_task, &w[0]), 0);
	/* the next slot is at 100 ms: a 50 ms deadline gives up at once */
	assert_int_equal(ratelimit_acquire_async(rl, ex, 50 * MS, waiter_task, &w[1]), 0);
	assert_int_equal(ratelimit_granted(rl), 1);
	assert_int_equal(ratelimit_acquire_async(rl, ex, 100 * MS, waiter_task, &w[2]), 0);
	assert_int_equal(executor_run_all(ex), 3);
	assert_int_equal(order[0], 0);
	assert_int_equal(order[1], 1);
	assert_int_equal(order[2], 2);
	assert_true(w[1].cancelled);
	assert_int_equal(w[1].at, 0);
	assert_false(w[2].cancelled);
	assert_int_equal(w[2].at, 100 * MS); /* took the slot the timeout left */
	assert_int_equal(ratelimit_granted(rl), 2);
	executor_shutdown(ex, NEVER);
	ratelimit_free(rl);
	vclock_free(c);
}

/* An acquire attempted while the executor shuts down: refused, token kept. */
struct late {
	struct ratelimit *rl;
	struct executor *ex;
	struct waiter w;
	int rc;
};

static void late_task(void *arg, bool cancelled)
{
	struct late *l = arg;

	(void)cancelled;
	l->rc = ratelimit_acquire_async(l->rl, l->ex, NEVER, waiter_task, &l->w);
}

static void test_async_refused_by_executor(void **state)
{
	struct clock *c = vclock_new(0);
	struct executor *ex = executor_new_virtual(c);
	struct ratelimit *rl = ratelimit_new(c, 10, 1);
	int order[1], n = 0;
	struct late l = { rl, ex, { .ex = ex, .order = order, .n = &n }, 1 };

	(void)state;
	assert_int_equal(executor_after(ex, 10 * MS, late_task, &l), 0);
	assert_int_equal(executor_shutdown(ex, SEC), 0);
	assert_int_equal(l.rc, -1);
	assert_int_equal(l.w.calls, 0);
	assert_int_equal(ratelimit_granted(rl), 0);
	assert_int_equal(ratelimit_reserve(rl, NEVER), 10 * MS); /* the token is still there */
	ratelimit_free(rl);
	vclock_free(c);
}

/*
 * The limit over a long run: 60 clients think for a random while, then
 * acquire with either a short deadline (often refused) or a long one, and
 * do it again, for ten virtual minutes. Every pair of grants (i, j) must
 * satisfy j - i + 1 <= qps * (t_j - t_i) + burst.
 */
#define QPS 7.5
#define BURST 4
#define CLIENTS 60
#define HORIZON (600 * SEC)
#define MAX_GRANTS 6000

struct world {
	struct executor *ex;
	struct ratelimit *rl;
	uint64_t rng;
	int64_t grants[MAX_GRANTS];
	int n_grants, n_timeouts;
	int errors; /* checked after the run */
};

struct client {
	struct world *w;
	int64_t tried_at, deadline;
	bool waiting;
};

static void client_try(void *arg, bool cancelled);

static void client_think(struct client *cl)
{
	struct world *w = cl->w;
	int64_t now = clock_now(executor_clock(w->ex));

	if (now >= HORIZON)
		return;
	if (executor_after(w->ex, (int64_t)(backoff_rand(&w->rng) % (2 * SEC)), client_try, cl))
		w->errors++;
}

static void client_done(void *arg, bool cancelled)
{
	struct client *cl = arg;
	struct world *w = cl->w;
	int64_t now = clock_now(executor_clock(w->ex));

	if (!cl->waiting)
		w->errors++; /* called twice */
	cl->waiting = false;
	if (cancelled) {
		w->n_timeouts++;
		if (now != cl->tried_at)
			w->errors++; /* a refusal is known at once */
	} else {
		if (now < cl->tried_at || now > cl->deadline)
			w->errors++;
		if (w->n_grants < MAX_GRANTS)
			w->grants[w->n_grants++] = now;
		else
			w->errors++;
	}
	client_think(cl);
}

static void client_try(void *arg, bool cancelled)
{
	struct client *cl = arg;
	struct world *w = cl->w;
	uint64_t r = backoff_rand(&w->rng);

	(void)cancelled;
	cl->tried_at = clock_now(executor_clock(w->ex));
	cl->deadline = cl->tried_at + (r % 4 == 0 ? (int64_t)(r >> 8) % (200 * MS) : 60 * SEC);
	cl->waiting = true;
	if (ratelimit_acquire_async(w->rl, w->ex, cl->deadline, client_done, cl) != 0)
		w->errors++;
}

static void test_limit_holds_in_every_window(void **state)
{
	static struct world w;
	struct clock *c = vclock_new(0);
	struct client cl[CLIENTS];
	int i, j;

	(void)state;
	memset(&w, 0, sizeof(w));
	w.ex = executor_new_virtual(c);
	w.rl = ratelimit_new(c, QPS, BURST);
	w.rng = 7;
	for (i = 0; i < CLIENTS; i++) {
		cl[i] = (struct client){ .w = &w };
		client_think(&cl[i]);
	}
	executor_run_all(w.ex);
	assert_int_equal(w.errors, 0);
	assert_int_equal(executor_pending(w.ex), 0);
	assert_int_equal(ratelimit_granted(w.rl), (uint64_t)w.n_grants);
	assert_true(w.n_timeouts > 0);
	/* demand far above the rate: the bucket is used, not just obeyed */
	assert_true(w.n_grants >= (int)(QPS * 600 * 0.95));

	for (i = 0; i < w.n_grants; i++) {
		for (j = i; j < w.n_grants; j++) {
			double window = (double)(w.grants[j] - w.grants[i]) / SEC;

			if ((double)(j - i + 1) > QPS * window + BURST + 1e-9)
				fail_msg("%d grants in %.9f s (grants %d..%d)", j - i + 1, window, i, j);
		}
	}
	executor_shutdown(w.ex, NEVER);
	ratelimit_free(w.rl);
	vclock_free(c);
}

/* ---- real threads ----------------------------------------------------- */

struct racer {
	struct ratelimit *rl;
	int n;
	int ok, refused;
};

static void *racer_main(void *arg)
{
	struct racer *r = arg;
	int i;

	for (i = 0; i < r->n; i++) {
		if (ratelimit_acquire(r->rl, clock_now(clock_real()) + WAIT) == 0)
			r->ok++;
		else
			r->refused++;
	}
	return NULL;
}

static void test_blocking_acquire_threads(void **state)
{
	enum { T = 8, EACH = 50 };
	struct ratelimit *rl = ratelimit_new(clock_real(), 5000, 10);
	struct racer r[T];
	pthread_t th[T];
	int i, ok = 0;

	(void)state;
	for (i = 0; i < T; i++) {
		r[i] = (struct racer){ .rl = rl, .n = EACH };
		assert_int_equal(pthread_create(&th[i], NULL, racer_main, &r[i]), 0);
	}
	for (i = 0; i < T; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(r[i].refused, 0);
		ok += r[i].ok;
	}
	assert_int_equal(ok, T * EACH);
	assert_int_equal(ratelimit_granted(rl), T * EACH);
	/* a deadline already past is refused without waiting or taking */
	assert_int_equal(ratelimit_acquire(rl, clock_now(clock_real()) - 1), -1);
	assert_int_equal(ratelimit_granted(rl), T * EACH);
	ratelimit_free(rl);
}

struct tally {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int granted, cancelled;
};

static void tally_task(void *arg, bool cancelled)
{
	struct tally *t = arg;

	pthread_mutex_lock(&t->mu);
	if (cancelled)
		t->cancelled++;
	else
		t->granted++;
	pthread_cond_broadcast(&t->cv);
	pthread_mutex_unlock(&t->mu);
}

struct async_racer {
	struct ratelimit *rl;
	struct executor *ex;
	struct tally *t;
	int n, rc_errors;
};

static void *async_racer_main(void *arg)
{
	struct async_racer *a = arg;
	int i;

	for (i = 0; i < a->n; i++)
		if (ratelimit_acquire_async(a->rl, a->ex, clock_now(clock_real()) + WAIT,
					    tally_task, a->t) != 0)
			a->rc_errors++;
	return NULL;
}

static void test_async_acquire_on_pool(void **state)
{
	enum { T = 4, EACH = 50 };
	struct executor *ex = executor_new_pool(4, 256);
	struct ratelimit *rl = ratelimit_new(clock_real(), 5000, 5);
	struct tally t = { .granted = 0 };
	struct async_racer a[T];
	pthread_t th[T];
	pthread_condattr_t attr;
	struct timespec ts;
	int64_t until;
	int i;

	(void)state;
	pthread_mutex_init(&t.mu, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&t.cv, &attr);
	pthread_condattr_destroy(&attr);
	for (i = 0; i < T; i++) {
		a[i] = (struct async_racer){ rl, ex, &t, EACH, 0 };
		assert_int_equal(pthread_create(&th[i], NULL, async_racer_main, &a[i]), 0);
	}
	for (i = 0; i < T; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(a[i].rc_errors, 0);
	}
	until = clock_now(clock_real()) + WAIT;
	ts.tv_sec = (time_t)(until / SEC);
	ts.tv_nsec = (long)(until % SEC);
	pthread_mutex_lock(&t.mu);
	while (t.granted + t.cancelled < T * EACH &&
	       pthread_cond_timedwait(&t.cv, &t.mu, &ts) == 0)
		;
	pthread_mutex_unlock(&t.mu);
	assert_int_equal(executor_shutdown(ex, clock_now(clock_real()) + WAIT), 0);
	assert_int_equal(t.granted, T * EACH);
	assert_int_equal(t.cancelled, 0);
	assert_int_equal(ratelimit_granted(rl), T * EACH);
	ratelimit_free(rl);
	pthread_cond_destroy(&t.cv);
	pthread_mutex_destroy(&t.mu);
}

/* A throttled bucket halves its rate, down to a sixteenth, drops the tokens
 * saved up, and climbs back by a tenth of its rate per call that went through. */
static void test_throttle_feedback(void **state)
{
	struct clock *c = vclock_new(0);
	struct ratelimit *rl = ratelimit_new(c, 2, 5);
	int i;

	(void)state;
	assert_true(ratelimit_rate(rl) == 2);
	ratelimit_throttled(rl);
	assert_true(ratelimit_rate(rl) == 1);
	/* the saved-up burst is gone: the next call waits a whole 1 s interval */
	assert_int_equal(ratelimit_reserve(rl, NEVER), 1 * SEC);
	assert_int_equal(ratelimit_reserve(rl, NEVER), 2 * SEC);
	for (i = 0; i < 10; i++)
		ratelimit_throttled(rl);
	assert_true(ratelimit_rate(rl) == 2.0 / 16);
	ratelimit_succeeded(rl);
	assert_true(fabs(ratelimit_rate(rl) - (0.125 + 0.2)) < 1e-9);
	for (i = 0; i < 20; i++)
		ratelimit_succeeded(rl);
	assert_true(ratelimit_rate(rl) == 2);
	/* back at full rate, the schedule is the configured one again */
	vclock_set(c, 100 * SEC);
	for (i = 0; i < 5; i++)
		assert_int_equal(ratelimit_reserve(rl, NEVER), 100 * SEC);
	assert_int_equal(ratelimit_reserve(rl, NEVER), 100 * SEC + 500 * MS);
	ratelimit_free(rl);
	vclock_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_rejects_bad_values),
		cmocka_unit_test(test_burst_then_steady),
		cmocka_unit_test(test_partial_refill),
		cmocka_unit_test(test_fractional_rate_never_faster),
		cmocka_unit_test(test_deadline_takes_nothing),
		cmocka_unit_test(test_blocking_acquire_on_virtual_clock),
		cmocka_unit_test(test_async_fifo),
		cmocka_unit_test(test_async_deadline),
		cmocka_unit_test(test_async_refused_by_executor),
		cmocka_unit_test(test_limit_holds_in_every_window),
		cmocka_unit_test(test_blocking_acquire_threads),
		cmocka_unit_test(test_async_acquire_on_pool),
		cmocka_unit_test(test_throttle_feedback),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
