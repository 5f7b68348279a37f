/*
 * Tests for executor. Virtual: time order, ties in submission order, tasks
 * submitted from a task, determinism, run_until and the clock, shutdown.
 * Pool: workers run in parallel, the bounded queue, timers, shutdown that
 * finishes what it can and releases the rest exactly once, refusals; a
 * growing pool adds workers while tasks wait behind blocked ones (no more
 * than needed, never past its cap), keeps them while idle for less than
 * its idle time and retires them after, and shuts down the same way. Pool
 * tests wait on condition variables with generous deadlines (a fallback
 * that fails the test) and never assert on how long anything took.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/backoff.h"
#include "runtime/clock.h"
#include "runtime/executor.h"

#define MS CLOCK_NS_PER_MS
#define SEC CLOCK_NS_PER_S
#define HOUR (3600 * SEC)
/* How long a pool test waits for something before failing: never reached
 * unless the behaviour under test is broken. */
#define WAIT (30 * SEC)

/* ---- virtual --------------------------------------------------------- */

struct rec {
	int id;
	int64_t at;
	bool cancelled;
};

struct log {
	struct executor *ex;
	struct rec v[512];
	int n;
};

struct item {
	struct log *log;
	int id;
};

static void log_task(void *arg, bool cancelled)
{
	struct item *it = arg;
	struct log *l = it->log;

	assert_true(l->n < (int)(sizeof(l->v) / sizeof(l->v[0])));
	l->v[l->n].id = it->id;
	l->v[l->n].at = clock_now(executor_clock(l->ex));
	l->v[l->n].cancelled = cancelled;
	l->n++;
}

static void test_virtual_time_order(void **state)
{
	struct clock *c = vclock_new(0);
	struct log l = { .ex = executor_new_virtual(c) };
	struct item it[6];
	const int64_t delay[6] = { 30, 10, 20, 10, 0, -5 };
	const int want[6] = { 4, 5, 1, 3, 2, 0 };
	const int64_t want_at[6] = { 0, 0, 10, 10, 20, 30 };
	int i;

	(void)state;
	assert_non_null(l.ex);
	assert_ptr_equal(executor_clock(l.ex), c);
	for (i = 0; i < 6; i++) {
		it[i] = (struct item){ &l, i };
		if (i == 4)
			assert_int_equal(executor_submit(l.ex, log_task, &it[i]), 0);
		else
			assert_int_equal(executor_after(l.ex, delay[i], log_task, &it[i]), 0);
	}
	assert_int_equal(l.n, 0); /* nothing runs before it is asked to */
	assert_int_equal(executor_pending(l.ex), 6);
	assert_int_equal(executor_run_all(l.ex), 6);
	assert_int_equal(l.n, 6);
	for (i = 0; i < 6; i++) {
		assert_int_equal(l.v[i].id, want[i]);
		assert_int_equal(l.v[i].at, want_at[i]);
		assert_false(l.v[i].cancelled);
	}
	assert_int_equal(clock_now(c), 30); /* run_all leaves it at the last event */
	assert_int_equal(executor_pending(l.ex), 0);
	assert_int_equal(executor_shutdown(l.ex, 0), 0);
	vclock_free(c);
}

/* A task that, when it runs, submits children (now, now, after 0, after 5). */
struct parent {
	struct item self;
	struct item kids[4];
};

static void parent_task(void *arg, bool cancelled)
{
	struct parent *p = arg;
	struct executor *ex = p->self.log->ex;

	log_task(&p->self, cancelled);
	assert_int_equal(executor_submit(ex, log_task, &p->kids[0]), 0);
	assert_int_equal(executor_submit(ex, log_task, &p->kids[1]), 0);
	assert_int_equal(executor_after(ex, 0, log_task, &p->kids[2]), 0);
	assert_int_equal(executor_after(ex, 5, log_task, &p->kids[3]), 0);
}

static void test_virtual_submitted_from_task_runs_after_due(void **state)
{
	struct clock *c = vclock_new(0);
	struct log l = { .ex = executor_new_virtual(c) };
	struct parent p = { .self = { &l, 0 } };
	struct item b = { &l, 1 }, d = { &l, 2 }, later = { &l, 3 };
	const int want[] = { 0, 1, 2, 10, 11, 12, 13, 3 };
	const int64_t want_at[] = { 10, 10, 10, 10, 10, 10, 15, 20 };
	int i;

	(void)state;
	for (i = 0; i < 4; i++)
		p.kids[i] = (struct item){ &l, 10 + i };
	/* parent, b and d are all due at 10: the children the parent submits
	 * "now" at 10 run after b and d, in the order submitted */
	assert_int_equal(executor_after(l.ex, 10, parent_task, &p), 0);
	assert_int_equal(executor_after(l.ex, 10, log_task, &b), 0);
	assert_int_equal(executor_after(l.ex, 20, log_task, &later), 0);
	assert_int_equal(executor_after(l.ex, 10, log_task, &d), 0);
	assert_int_equal(executor_run_all(l.ex), 8);
	assert_int_equal(l.n, 8);
	for (i = 0; i < 8; i++) {
		assert_int_equal(l.v[i].id, want[i]);
		assert_int_equal(l.v[i].at, want_at[i]);
	}
	executor_shutdown(l.ex, 0);
	vclock_free(c);
}

/* A scenario of chains that reschedule themselves with random delays
 * (many ties); the log must come out the same for the same seed. */
struct scenario {
	struct executor *ex;
	uint64_t rng;
	struct { int chain; int step; int64_t at; } v[2000];
	int n;
};

struct chain {
	struct scenario *s;
	int id, step;
};

static void chain_task(void *arg, bool cancelled)
{
	struct chain *ch = arg;
	struct scenario *s = ch->s;
	int64_t delay;

	assert_false(cancelled);
	s->v[s->n].chain = ch->id;
	s->v[s->n].step = ch->step;
	s->v[s->n].at = clock_now(executor_clock(s->ex));
	s->n++;
	if (++ch->step == 50)
		return;
	delay = (int64_t)(backoff_rand(&s->rng) % 4) * 1000; /* 0, 1, 2 or 3 us: ties */
	assert_int_equal(executor_after(s->ex, delay, chain_task, ch), 0);
}

static void run_scenario(uint64_t seed, struct scenario *s)
{
	struct clock *c = vclock_new(0);
	struct chain ch[40];
	int i;

	memset(s, 0, sizeof(*s));
	s->ex = executor_new_virtual(c);
	s->rng = seed;
	for (i = 0; i < 40; i++) {
		ch[i] = (struct chain){ s, i, 0 };
		assert_int_equal(executor_after(s->ex, (int64_t)(backoff_rand(&s->rng) % 3) * 1000,
						chain_task, &ch[i]), 0);
	}
	assert_int_equal(executor_run_all(s->ex), 2000);
	assert_int_equal(executor_shutdown(s->ex, 0), 0);
	s->ex = NULL;
	vclock_free(c);
}

static void test_virtual_deterministic(void **state)
{
	static struct scenario a, b, other;
	int i, differ = 0;

	(void)state;
	run_scenario(42, &a);
	run_scenario(42, &b);
	run_scenario(43, &other);
	assert_int_equal(a.n, 2000);
	assert_memory_equal(a.v, b.v, sizeof(a.v));
	for (i = 1; i < a.n; i++)
		assert_true(a.v[i].at >= a.v[i - 1].at); /* time never goes back */
	for (i = 0; i < a.n; i++)
		differ |= a.v[i].chain != other.v[i].chain;
	assert_true(differ); /* the log does depend on the schedule */
}

static void test_virtual_run_until(void **state)
{
	struct clock *c = vclock_new(0);
	struct log l = { .ex = executor_new_virtual(c) };
	struct item it[3] = { { &l, 0 }, { &l, 1 }, { &l, 2 } };

	(void)state;
	assert_int_equal(executor_after(l.ex, 100, log_task, &it[0]), 0);
	assert_int_equal(executor_after(l.ex, 200, log_task, &it[1]), 0);
	assert_int_equal(executor_after(l.ex, 300, log_task, &it[2]), 0);

	assert_int_equal(executor_run_until(l.ex, 150), 1);
	assert_int_equal(clock_now(c), 150);
	assert_int_equal(executor_pending(l.ex), 2);
	assert_int_equal(l.v[0].at, 100);

	assert_int_equal(executor_run_until(l.ex, 150), 0);
	assert_int_equal(executor_run_until(l.ex, 200), 1); /* due exactly at until runs */
	assert_int_equal(clock_now(c), 200);
	assert_int_equal(executor_run_until(l.ex, 100), 0); /* the clock never goes back */
	assert_int_equal(clock_now(c), 200);

	/* delays count from the clock as it stands */
	assert_int_equal(executor_after(l.ex, 50, log_task, &it[0]), 0);
	assert_int_equal(executor_run_until(l.ex, 1000), 2);
	assert_int_equal(l.v[2].id, 0);
	assert_int_equal(l.v[2].at, 250);
	assert_int_equal(l.v[3].id, 2);
	assert_int_equal(l.v[3].at, 300);
	assert_int_equal(clock_now(c), 1000); /* stands at until with nothing left */
	assert_int_equal(executor_pending(l.ex), 0);
	executor_shutdown(l.ex, 0);
	vclock_free(c);
}

/* A periodic task: runs every 'period' until stopped by count. */
struct ticker {
	struct executor *ex;
	int64_t period;
	int runs, max;
	int64_t at[16];
	size_t pending_seen;
};

static void tick_task(void *arg, bool cancelled)
{
	struct ticker *t = arg;

	assert_false(cancelled);
	t->pending_seen = executor_pending(t->ex);
	t->at[t->runs++] = clock_now(executor_clock(t->ex));
	if (t->runs < t->max)
		assert_int_equal(executor_after(t->ex, t->period, tick_task, t), 0);
}

static void test_virtual_periodic_and_pending(void **state)
{
	struct clock *c = vclock_new(0);
	struct ticker t = { .ex = executor_new_virtual(c), .period = 7 * SEC, .max = 10 };
	int i;

	(void)state;
	vclock_set(c, 3 * SEC);
	assert_int_equal(executor_after(t.ex, t.period, tick_task, &t), 0);
	assert_int_equal(executor_run_until(t.ex, 30 * SEC), 3); /* at 10, 17, 24 s */
	assert_int_equal(t.pending_seen, 1); /* a running task counts itself */
	assert_int_equal(executor_pending(t.ex), 1);
	assert_int_equal(executor_run_all(t.ex), 7);
	assert_int_equal(t.runs, 10);
	for (i = 0; i < 10; i++)
		assert_int_equal(t.at[i], 3 * SEC + (i + 1) * 7 * SEC);
	executor_shutdown(t.ex, 0);
	vclock_free(c);
}

/* For shutdown: counts how each argument was released. */
struct counted {
	struct executor *ex;
	int runs, cancels;
	int submit_rc; /* what a submit from inside returned; 1: not tried */
};

static void counted_task(void *arg, bool cancelled)
{
	struct counted *k = arg;

	if (cancelled)
		k->cancels++;
	else
		k->runs++;
}

static void submitting_task(void *arg, bool cancelled)
{
	struct counted *k = arg;

	counted_task(arg, cancelled);
	k->submit_rc = executor_submit(k->ex, counted_task, k);
}

static void test_virtual_shutdown(void **state)
{
	struct clock *c = vclock_new(0);
	struct executor *ex = executor_new_virtual(c);
	struct counted k[4];
	int i;

	(void)state;
	for (i = 0; i < 4; i++) {
		k[i] = (struct counted){ .ex = ex, .submit_rc = 1 };
		assert_int_equal(executor_after(ex, (i + 1) * 10, submitting_task, &k[i]), 0);
	}
	assert_int_equal(executor_run_until(ex, 5), 0);
	/* due by the deadline (25): the events at 10 and 20 run; the rest are
	 * released; nothing may be submitted once shutdown began */
	assert_int_equal(executor_shutdown(ex, 25), 2);
	for (i = 0; i < 2; i++) {
		assert_int_equal(k[i].runs, 1);
		assert_int_equal(k[i].cancels, 0);
		assert_int_equal(k[i].submit_rc, -1);
	}
	for (i = 2; i < 4; i++) {
		assert_int_equal(k[i].runs, 0);
		assert_int_equal(k[i].cancels, 1);
		assert_int_equal(k[i].submit_rc, -1); /* tried from the release too */
	}
	vclock_free(c);
}

static void test_virtual_shutdown_order_of_release(void **state)
{
	struct clock *c = vclock_new(0);
	struct log l = { .ex = executor_new_virtual(c) };
	struct item it[3] = { { &l, 0 }, { &l, 1 }, { &l, 2 } };

	(void)state;
	assert_int_equal(executor_after(l.ex, 30, log_task, &it[0]), 0);
	assert_int_equal(executor_after(l.ex, 20, log_task, &it[1]), 0);
	assert_int_equal(executor_after(l.ex, 20, log_task, &it[2]), 0);
	assert_int_equal(executor_shutdown(l.ex, 10), 3);
	assert_int_equal(l.n, 3);
	assert_int_equal(l.v[0].id, 1);
	assert_int_equal(l.v[1].id, 2);
	assert_int_equal(l.v[2].id, 0);
	assert_true(l.v[0].cancelled && l.v[1].cancelled && l.v[2].cancelled);
	vclock_free(c);
}

/* ---- pool ------------------------------------------------------------ */

/* A counter threads wait on, with a timeout that only a bug reaches. */
struct sync {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int count;
};

static void sync_init(struct sync *s)
{
	pthread_condattr_t a;

	pthread_mutex_init(&s->mu, NULL);
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &a);
	pthread_condattr_destroy(&a);
	s->count = 0;
}

static void sync_destroy(struct sync *s)
{
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
}

static void sync_add(struct sync *s, int n)
{
	pthread_mutex_lock(&s->mu);
	s->count += n;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

/* Waits until count >= n; false when WAIT passed first. */
static bool sync_wait(struct sync *s, int n)
{
	int64_t until = clock_now(clock_real()) + WAIT;
	struct timespec ts = { (time_t)(until / SEC), (long)(until % SEC) };
	bool ok;

	pthread_mutex_lock(&s->mu);
	while (s->count < n && pthread_cond_timedwait(&s->cv, &s->mu, &ts) == 0)
		;
	ok = s->count >= n;
	pthread_mutex_unlock(&s->mu);
	return ok;
}

static void test_pool_rejects_bad_sizes(void **state)
{
	struct executor *ex;

	(void)state;
	assert_null(executor_new_pool(0, 4));
	assert_null(executor_new_pool(-1, 4));
	assert_null(executor_new_pool(2, 0));
	ex = executor_new_pool(1, 1);
	assert_non_null(ex);
	assert_ptr_equal(executor_clock(ex), clock_real());
	assert_int_equal(executor_run_until(ex, INT64_MAX), 0);
	assert_int_equal(executor_run_all(ex), 0);
	assert_int_equal(executor_pending(ex), 0);
	assert_int_equal(executor_shutdown(ex, clock_now(clock_real()) + WAIT), 0);
}

/* N tasks meet at a barrier that opens only when all N have arrived: it can
 * only open if N workers run them at the same time. */
struct meet {
	struct sync arrived, done;
	int n;
	_Atomic int met;
};

static void meet_task(void *arg, bool cancelled)
{
	struct meet *m = arg;

	/* no cmocka assertions on worker threads: record, assert in the test */
	sync_add(&m->arrived, 1);
	if (!cancelled && sync_wait(&m->arrived, m->n))
		atomic_fetch_add(&m->met, 1);
	sync_add(&m->done, 1);
}

static void test_pool_runs_in_parallel(void **state)
{
	enum { N = 4 };
	struct executor *ex = executor_new_pool(N, 16);
	struct meet m = { .n = N };
	int i;

	(void)state;
	sync_init(&m.arrived);
	sync_init(&m.done);
	atomic_init(&m.met, 0);
	for (i = 0; i < N; i++)
		assert_int_equal(executor_submit(ex, meet_task, &m), 0);
	assert_true(sync_wait(&m.done, N));
	assert_int_equal(atomic_load(&m.met), N);
	assert_int_equal(executor_shutdown(ex, clock_now(clock_real()) + WAIT), 0);
	sync_destroy(&m.arrived);
	sync_destroy(&m.done);
}

static void noop_task(void *arg, bool cancelled)
{
	(void)arg;
	(void)cancelled;
}

/* A task that holds its worker until a gate opens. */
struct blocker {
	struct sync *started, *gate;
	int gate_at;
	struct executor *ex;
	int runs, cancels;
	int submit_rc;
	bool gate_ok;
};

static void blocker_task(void *arg, bool cancelled)
{
	struct blocker *b = arg;

	if (cancelled) {
		b->cancels++;
		return;
	}
	b->runs++;
	sync_add(b->started, 1);
	b->gate_ok = sync_wait(b->gate, b->gate_at);
	if (b->ex)
		b->submit_rc = executor_submit(b->ex, noop_task, NULL);
}

/* counted_task, thread-safe flavour: each argument is touched by one
 * task at a time, and the test reads it after shutdown (which joins). */
struct pcounted {
	struct executor *ex; /* when set: try to submit from the release */
	struct sync *ran, *released;
	int runs, cancels;
	int submit_rc;
	int64_t due, at;
};

static void pcounted_task(void *arg, bool cancelled)
{
	struct pcounted *k = arg;

	if (cancelled) {
		k->cancels++;
		if (k->ex)
			k->submit_rc = executor_submit(k->ex, pcounted_task, k);
		if (k->released)
			sync_add(k->released, 1);
		return;
	}
	k->runs++;
	k->at = clock_now(clock_real());
	if (k->ran)
		sync_add(k->ran, 1);
}

static void test_pool_bounded_queue(void **state)
{
	struct executor *ex = executor_new_pool(1, 3);
	struct sync started, gate, ran;
	struct blocker b = { .started = &started, .gate = &gate, .gate_at = 1 };
	struct pcounted k[6];
	int i;

	(void)state;
	sync_init(&started);
	sync_init(&gate);
	sync_init(&ran);
	for (i = 0; i < 6; i++)
		k[i] = (struct pcounted){ .ran = &ran };
	assert_int_equal(executor_submit(ex, blocker_task, &b), 0);
	assert_true(sync_wait(&started, 1)); /* the one worker is now held */

	for (i = 0; i < 3; i++)
		assert_int_equal(executor_submit(ex, pcounted_task, &k[i]), 0);
	assert_int_equal(executor_submit(ex, pcounted_task, &k[3]), -1);  /* full */
	assert_int_equal(executor_after(ex, 0, pcounted_task, &k[3]), -1); /* same as submit */
	assert_int_equal(executor_after(ex, HOUR, pcounted_task, &k[4]), 0); /* timers not counted */
	assert_int_equal(executor_after(ex, HOUR, pcounted_task, &k[5]), 0);
	assert_int_equal(executor_pending(ex), 1 + 3 + 2);

	sync_add(&gate, 1);
	assert_true(sync_wait(&ran, 3));
	/* the queue drained: there is room again */
	assert_int_equal(executor_submit(ex, pcounted_task, &k[3]), 0);
	assert_true(sync_wait(&ran, 4));

	assert_int_equal(executor_shutdown(ex, clock_now(clock_real()) + WAIT), 2);
	assert_true(b.gate_ok);
	assert_int_equal(b.runs, 1);
	for (i = 0; i < 4; i++) {
		assert_int_equal(k[i].runs, 1);
		assert_int_equal(k[i].cancels, 0);
	}
	for (i = 4; i < 6; i++) {
		assert_int_equal(k[i].runs, 0);
		assert_int_equal(k[i].cancels, 1);
	}
	sync_destroy(&started);
	sync_destroy(&gate);
	sync_destroy(&ran);
}

static void test_pool_timers_in_time_order(void **state)
{
	struct executor *ex = executor_new_pool(1, 4);
	struct sync ran;
	struct pcounted k[3];
	const int64_t delay[3] = { 30 * MS, 10 * MS, 20 * MS };
	int i;

	(void)state;
	sync_init(&ran);
	for (i = 0; i < 3; i++) {
		k[i] = (struct pcounted){ .ran = &ran };
		k[i].due = clock_now(clock_real()) + delay[i];
		assert_int_equal(executor_after(ex, delay[i], pcounted_task, &k[i]), 0);
	}
	assert_true(sync_wait(&ran, 3));
	assert_int_equal(executor_shutdown(ex, clock_now(clock_real()) + WAIT), 0);
	for (i = 0; i < 3; i++) {
		assert_int_equal(k[i].runs, 1);
		assert_true(k[i].at >= k[i].due); /* never early */
	}
	/* one worker, FIFO: the order they became due */
	assert_true(k[1].at <= k[2].at);
	assert_true(k[2].at <= k[0].at);
}

/*
 * Shutdown with both workers held: the queued tasks and the timers are
 * released (cancelled = true) once the deadline passes; the held tasks
 * finish normally; nothing can be submitted any more, neither from a
 * running task nor from a release.
 */
static void test_pool_shutdown_cancels_queued(void **state)
{
	enum { QUEUED = 5, TIMERS = 3 };
	struct executor *ex = executor_new_pool(2, 16);
	struct sync started, released;
	struct blocker b[2];
	struct pcounted k[QUEUED + TIMERS];
	int i;

	(void)state;
	sync_init(&started);
	sync_init(&released);
	for (i = 0; i < 2; i++) {
		/* each holds its worker until every queued task was released */
		b[i] = (struct blocker){ .started = &started, .gate = &released,
					 .gate_at = QUEUED + TIMERS, .ex = ex, .submit_rc = 1 };
		assert_int_equal(executor_submit(ex, blocker_task, &b[i]), 0);
	}
	assert_true(sync_wait(&started, 2));
	for (i = 0; i < QUEUED + TIMERS; i++) {
		k[i] = (struct pcounted){ .ex = ex, .released = &released, .submit_rc = 1 };
		if (i < QUEUED)
			assert_int_equal(executor_submit(ex, pcounted_task, &k[i]), 0);
		else
			assert_int_equal(executor_after(ex, HOUR, pcounted_task, &k[i]), 0);
	}
	assert_int_equal(executor_pending(ex), 2 + QUEUED + TIMERS);

	assert_int_equal(executor_shutdown(ex, clock_now(clock_real()) + 20 * MS),
			 QUEUED + TIMERS);
	for (i = 0; i < 2; i++) {
		assert_true(b[i].gate_ok);
		assert_int_equal(b[i].runs, 1);
		assert_int_equal(b[i].cancels, 0);
		assert_int_equal(b[i].submit_rc, -1);
	}
	for (i = 0; i < QUEUED + TIMERS; i++) {
		assert_int_equal(k[i].runs, 0);
		assert_int_equal(k[i].cancels, 1);
		assert_int_equal(k[i].submit_rc, -1);
	}
	sync_destroy(&started);
	sync_destroy(&released);
}

/* With a deadline far enough, shutdown runs everything queued and every
 * timer due before the deadline; a timer due after it is released at once
 * (shutdown does not sit out the deadline). */
static void test_pool_shutdown_finishes_work(void **state)
{
	enum { N = 50, SOON = 5, LATE = 2 };
	struct executor *ex = executor_new_pool(3, N);
	struct pcounted k[N + SOON + LATE];
	int i;

	(void)state;
	for (i = 0; i < N + SOON + LATE; i++) {
		k[i] = (struct pcounted){ 0 };
		if (i < N)
			assert_int_equal(executor_submit(ex, pcounted_task, &k[i]), 0);
		else if (i < N + SOON)
			assert_int_equal(executor_after(ex, MS, pcounted_task, &k[i]), 0);
		else
			assert_int_equal(executor_after(ex, 2 * HOUR, pcounted_task, &k[i]), 0);
	}
	assert_int_equal(executor_shutdown(ex, clock_now(clock_real()) + HOUR), LATE);
	for (i = 0; i < N + SOON + LATE; i++) {
		assert_int_equal(k[i].runs, i < N + SOON ? 1 : 0);
		assert_int_equal(k[i].cancels, i < N + SOON ? 0 : 1);
	}
}

/* Several threads submit at once; every task runs exactly once. */
struct hammer {
	struct executor *ex;
	_Atomic int runs;
	_Atomic int accepted;
};

static void hammer_task(void *arg, bool cancelled)
{
	struct hammer *h = arg;

	if (!cancelled)
		atomic_fetch_add(&h->runs, 1);
}

static void *hammer_thread(void *arg)
{
	struct hammer *h = arg;
	int i;

	for (i = 0; i < 2000; i++) {
		int rc;

		if (i % 10 == 0)
			rc = executor_after(h->ex, (i % 3) * 100000, hammer_task, h);
		else
			rc = executor_submit(h->ex, hammer_task, h);
		if (rc == 0)
			atomic_fetch_add(&h->accepted, 1);
		(void)executor_pending(h->ex);
	}
	return NULL;
}

static void test_pool_concurrent_submitters(void **state)
{
	enum { T = 4 };
	struct hammer h = { .ex = executor_new_pool(4, 64) };
	pthread_t th[T];
	int i;

	(void)state;
	atomic_init(&h.runs, 0);
	atomic_init(&h.accepted, 0);
	for (i = 0; i < T; i++)
		assert_int_equal(pthread_create(&th[i], NULL, hammer_thread, &h), 0);
	for (i = 0; i < T; i++)
		pthread_join(th[i], NULL);
	assert_true(atomic_load(&h.accepted) > 0);
	assert_int_equal(executor_shutdown(h.ex, clock_now(clock_real()) + HOUR), 0);
	assert_int_equal(atomic_load(&h.runs), atomic_load(&h.accepted));
}

/* ---- a pool that grows ---------------------------------------------- */

static struct executor *growing_pool(int base, int max, size_t queue_cap, int64_t idle_ns)
{
	struct executor_pool_opts o;

	executor_pool_opts_default(&o, base, queue_cap);
	o.max_workers = max;
	o.idle_ns = idle_ns;
	return executor_new_pool_opts(&o);
}

static void test_pool_opts_rejected(void **state)
{
	struct executor_pool_opts o;
	struct executor_stats st;
	struct executor *ex;

	(void)state;
	executor_pool_opts_default(&o, 2, 8);
	assert_int_equal(o.max_workers, 2);
	o.workers = 0;
	assert_null(executor_new_pool_opts(&o));
	o.workers = 2;
	o.max_workers = EXECUTOR_MAX_WORKERS + 1;
	assert_null(executor_new_pool_opts(&o));
	o.max_workers = 4;
	o.idle_ns = -1;
	assert_null(executor_new_pool_opts(&o));
	o.idle_ns = 0;
	o.queue_cap = 0;
	assert_null(executor_new_pool_opts(&o));
	assert_null(executor_new_pool_opts(NULL));
	/* a cap below the base is the base: a fixed pool */
	o.queue_cap = 8;
	o.max_workers = 1;
	ex = executor_new_pool_opts(&o);
	assert_non_null(ex);
	executor_stats(ex, &st);
	assert_int_equal(st.workers, 2);
	assert_int_equal(st.base, 2);
	assert_int_equal(st.max, 2);
	assert_int_equal(executor_shutdown(ex, clock_now(clock_real()) + WAIT), 0);
}

/* The arithmetic of a pool sized from a token bucket. */
static void test_workers_for_rate(void **state)
{
	(void)state;
	/* 20 calls a second, 20 saved, 2 s each: 20 + 40 in flight at most */
	assert_int_equal(executor_workers_for_rate(8, 20, 20, 2 * SEC), 68);
	assert_int_equal(executor_workers_for_rate(0, 2.5, 5, SEC + SEC / 10), 8); /* 5 + ceil(2.75) */
	assert_int_equal(executor_workers_for_rate(8, 5, 10, EXECUTOR_CALL_LATENCY_NS), 168);
	assert_int_equal(executor_workers_for_rate(8, 1000, 10, EXECUTOR_CALL_LATENCY_NS),
			 EXECUTOR_MAX_WORKERS);
	assert_int_equal(executor_workers_for_rate(0, 0, 0, 0), 1);
	assert_int_equal(executor_workers_for_rate(3, -1, 0, SEC), 3);
}

/*
 * More tasks that block at once than the pool has base workers: N tasks
 * meet at a barrier that opens only when all N run at the same time. A
 * pool of 2 growing to 16 runs them all, with exactly the workers they
 * need (2 + 8 added, not 16).
 */
static void test_pool_grows_past_blocked_workers(void **state)
{
	enum { BASE = 2, N = 10, MAX = 16 };
	struct executor *ex = growing_pool(BASE, MAX, 64, HOUR);
	struct executor_stats st;
	struct meet m = { .n = N };
	int i;

	(void)state;
	assert_non_null(ex);
	sync_init(&m.arrived);
	sync_init(&m.done);
	atomic_init(&m.met, 0);
	executor_stats(ex, &st);
	assert_int_equal(st.workers, BASE);
	assert_int_equal(st.max, MAX);
	for (i = 0; i < N; i++)
		assert_int_equal(executor_submit(ex, meet_task, &m), 0);
	assert_true(sync_wait(&m.done, N));
	assert_int_equal(atomic_load(&m.met), N);
	executor_stats(ex, &st);
	assert_int_equal(st.peak, N);
	assert_int_equal(st.grown, N - BASE);
	assert_int_equal(st.workers, N); /* idle for less than an hour: kept */
	assert_int_equal(st.retired, 0);
	assert_int_equal(st.grow_failed, 0);
	assert_int_equal(executor_shutdown(ex, clock_now(clock_real()) + WAIT), 0);
	sync_destroy(&m.arrived);
	sync_destroy(&m.done);
}

/* Workers added while they are still idle for less than idle_ns take the
 * next burst: none is added again. */
static void test_pool_reuses_idle_workers(void **state)
{
	enum { BASE = 1, N = 6 };
	struct executor *ex = growing_pool(BASE, 8, 64, HOUR);
	struct executor_stats st;
	struct meet m[2] = { { .n = N }, { .n = N } };
	int r, i;

	(void)state;
	for (r = 0; r < 2; r++) {
		sync_init(&m[r].arrived);
		sync_init(&m[r].done);
		atomic_init(&m[r].met, 0);
		for (i = 0; i < N; i++)
			assert_int_equal(executor_submit(ex, meet_task, &m[r]), 0);
		assert_true(sync_wait(&m[r].done, N));
		assert_int_equal(atomic_load(&m[r].met), N);
		/* every worker of this round waits for a task again once none
		 * runs: the next round must find them */
		assert_true(executor_wait_idle(ex, clock_now(clock_real()) + WAIT));
		executor_stats(ex, &st);
		assert_int_equal(st.grown, N - BASE);
		assert_int_equal(st.workers, N);
	}
	assert_int_equal(executor_shutdown(ex, clock_now(clock_real()) + WAIT), 0);
	for (r = 0; r < 2; r++) {
		sync_destroy(&m[r].arrived);
		sync_destroy(&m[r].done);
	}
}

/* The cap holds: with 3 workers at most and 5 tasks held on a gate, 3 run
 * and 2 wait; opening the gate runs them all. */
static void test_pool_growth_stops_at_cap(void **state)
{
	enum { MAX = 3, N = 5 };
	struct executor *ex = growing_pool(1, MAX, 16, HOUR);
	struct executor_stats st;
	struct sync started, gate;
	struct blocker b[N];
	int i;

	(void)state;
	sync_init(&started);
	sync_init(&gate);
	for (i = 0; i < N; i++) {
		b[i] = (struct blocker){ .started = &started, .gate = &gate, .gate_at = 1 };
		assert_int_equal(executor_submit(ex, blocker_task, &b[i]), 0);
	}
	assert_true(sync_wait(&started, MAX));
	executor_stats(ex, &st);
	assert_int_equal(st.workers, MAX);
	assert_int_equal(st.busy, MAX);
	assert_int_equal(st.queued, N - MAX);
	assert_int_equal(st.peak, MAX);
	sync_add(&gate, 1);
	assert_true(sync_wait(&started, N));
	assert_int_equal(executor_shutdown(ex, clock_now(clock_real()) + WAIT), 0);
	for (i = 0; i < N; i++) {
		assert_int_equal(b[i].runs, 1);
		assert_true(b[i].gate_ok);
	}
	sync_destroy(&started);
	sync_destroy(&gate);
}

/* Timers that fall due together behind blocked workers make the pool grow
 * too (the timer thread moves them to the queue). */
static void test_pool_grows_for_due_timers(void **state)
{
	enum { N = 4 };
	struct executor *ex = growing_pool(1, N, 16, HOUR);
	struct meet m = { .n = N };
	int i;

	(void)state;
	sync_init(&m.arrived);
	sync_init(&m.done);
	atomic_init(&m.met, 0);
	for (i = 0; i < N; i++)
		assert_int_equal(executor_after(ex, MS, meet_task, &m), 0);
	assert_true(sync_wait(&m.done, N));
	assert_int_equal(atomic_load(&m.met), N);
	assert_int_equal(executor_shutdown(ex, clock_now(clock_real()) + WAIT), 0);
	sync_destroy(&m.arrived);
	sync_destroy(&m.done);
}

/* With idle_ns 0 the added workers exit as soon as the queue is empty, back
 * to the base (which never retires); the pool grows again on the next
 * burst. */
static void test_pool_shrinks_back_to_base(void **state)
{
	enum { BASE = 2, N = 7 };
	struct executor *ex = growing_pool(BASE, 8, 16, 0);
	struct executor_stats st;
	struct meet m[2] = { { .n = N }, { .n = N } };
	int r, i;

	(void)state;
	for (r = 0; r < 2; r++) {
		sync_init(&m[r].arrived);
		sync_init(&m[r].done);
		atomic_init(&m[r].met, 0);
		for (i = 0; i < N; i++)
			assert_int_equal(executor_submit(ex, meet_task, &m[r]), 0);
		assert_true(sync_wait(&m[r].done, N));
		assert_int_equal(atomic_load(&m[r].met), N);
		assert_true(executor_wait_idle(ex, clock_now(clock_real()) + WAIT));
		assert_int_equal(executor_wait_workers(ex, BASE, clock_now(clock_real()) + WAIT), BASE);
		executor_stats(ex, &st);
		assert_int_equal(st.workers, BASE);
		assert_int_equal(st.retired, (uint64_t)(r + 1) * (N - BASE));
		assert_int_equal(st.peak, N);
	}
	/* the base stays: waiting for fewer gives up at the deadline */
	assert_int_equal(executor_wait_workers(ex, 0, clock_now(clock_real())), BASE);
	assert_int_equal(executor_shutdown(ex, clock_now(clock_real()) + WAIT), 0);
	for (r = 0; r < 2; r++) {
		sync_destroy(&m[r].arrived);
		sync_destroy(&m[r].done);
	}
}

/* Shutdown of a grown pool whose workers are all held: the queued tasks and
 * timers are released once, the held ones finish, every thread is joined
 * (the sanitizers see no leak or race). */
static void test_pool_grown_shutdown_cancels_queued(void **state)
{
	enum { HELD = 4, QUEUED = 3, TIMERS = 2 };
	struct executor *ex = growing_pool(1, HELD, 16, HOUR);
	struct sync started, released;
	struct blocker b[HELD];
	struct pcounted k[QUEUED + TIMERS];
	int i;

	(void)state;
	sync_init(&started);
	sync_init(&released);
	for (i = 0; i < HELD; i++) {
		b[i] = (struct blocker){ .started = &started, .gate = &released,
					 .gate_at = QUEUED + TIMERS, .ex = ex, .submit_rc = 1 };
		assert_int_equal(executor_submit(ex, blocker_task, &b[i]), 0);
	}
	assert_true(sync_wait(&started, HELD));
	for (i = 0; i < QUEUED + TIMERS; i++) {
		k[i] = (struct pcounted){ .released = &released };
		if (i < QUEUED)
			assert_int_equal(executor_submit(ex, pcounted_task, &k[i]), 0);
		else
			assert_int_equal(executor_after(ex, HOUR, pcounted_task, &k[i]), 0);
	}
	assert_int_equal(executor_shutdown(ex, clock_now(clock_real()) + 20 * MS), QUEUED + TIMERS);
	for (i = 0; i < HELD; i++) {
		assert_true(b[i].gate_ok);
		assert_int_equal(b[i].runs, 1);
		assert_int_equal(b[i].submit_rc, -1);
	}
	for (i = 0; i < QUEUED + TIMERS; i++) {
		assert_int_equal(k[i].runs, 0);
		assert_int_equal(k[i].cancels, 1);
	}
	sync_destroy(&started);
	sync_destroy(&released);
}

/* Several threads submit to a pool that grows and shrinks (idle_ns 0) at
 * once; every task runs exactly once. */
static void test_pool_growing_concurrent_submitters(void **state)
{
	enum { T = 4 };
	struct hammer h = { .ex = growing_pool(1, 6, 64, 0) };
	pthread_t th[T];
	int i;

	(void)state;
	atomic_init(&h.runs, 0);
	atomic_init(&h.accepted, 0);
	for (i = 0; i < T; i++)
		assert_int_equal(pthread_create(&th[i], NULL, hammer_thread, &h), 0);
	for (i = 0; i < T; i++)
		pthread_join(th[i], NULL);
	assert_true(atomic_load(&h.accepted) > 0);
	assert_int_equal(executor_shutdown(h.ex, clock_now(clock_real()) + HOUR), 0);
	assert_int_equal(atomic_load(&h.runs), atomic_load(&h.accepted));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_virtual_time_order),
		cmocka_unit_test(test_virtual_submitted_from_task_runs_after_due),
		cmocka_unit_test(test_virtual_deterministic),
		cmocka_unit_test(test_virtual_run_until),
		cmocka_unit_test(test_virtual_periodic_and_pending),
		cmocka_unit_test(test_virtual_shutdown),
		cmocka_unit_test(test_virtual_shutdown_order_of_release),
		cmocka_unit_test(test_pool_rejects_bad_sizes),
		cmocka_unit_test(test_pool_runs_in_parallel),
		cmocka_unit_test(test_pool_bounded_queue),
		cmocka_unit_test(test_pool_timers_in_time_order),
		cmocka_unit_test(test_pool_shutdown_cancels_queued),
		cmocka_unit_test(test_pool_shutdown_finishes_work),
		cmocka_unit_test(test_pool_concurrent_submitters),
		cmocka_unit_test(test_pool_opts_rejected),
		cmocka_unit_test(test_workers_for_rate),
		cmocka_unit_test(test_pool_grows_past_blocked_workers),
		cmocka_unit_test(test_pool_reuses_idle_workers),
		cmocka_unit_test(test_pool_growth_stops_at_cap),
		cmocka_unit_test(test_pool_grows_for_due_timers),
		cmocka_unit_test(test_pool_shrinks_back_to_base),
		cmocka_unit_test(test_pool_grown_shutdown_cancels_queued),
		cmocka_unit_test(test_pool_growing_concurrent_submitters),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
