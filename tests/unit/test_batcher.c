/*
 * Tests for the reconcile trigger: the idle/max batching window and the
 * periodic resync in virtual time (times are plain numbers), a simulated
 * event stream driven by the window's own deadlines, and the threaded
 * wrapper's wake-ups (request, stop) that do not depend on time passing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>

#include "engine/batcher.h"
#include "runtime/clock.h"

#define S CLOCK_NS_PER_S
#define MS CLOCK_NS_PER_MS

static const struct batcher_policy policy = {.idle_ns = 1 * S, .max_ns = 10 * S,
					     .interval_ns = 30 * S};

/* A window that has run its first reconcile at 't'. */
static struct batcher_window started(int64_t t)
{
	struct batcher_window w;

	batcher_window_init(&w, &policy);
	batcher_window_ran(&w, t);
	return w;
}

static void test_first_reconcile_at_once(void **state)
{
	struct batcher_window w;

	(void)state;
	batcher_window_init(&w, &policy);
	assert_int_equal(batcher_window_due(&w, 0), BATCH_FIRST);
	assert_int_equal(batcher_window_next(&w, 5), 5);
	batcher_window_ran(&w, 5);
	assert_int_equal(batcher_window_due(&w, 5), BATCH_NONE);
	assert_int_equal(batcher_window_next(&w, 5), 5 + 30 * S);
}

static void test_defaults(void **state)
{
	struct batcher_window w;

	(void)state;
	batcher_window_init(&w, NULL);
	assert_int_equal(w.p.idle_ns, 1 * S);
	assert_int_equal(w.p.max_ns, 10 * S);
	assert_int_equal(w.p.interval_ns, 10 * S);
	/* idle never longer than max */
	batcher_window_init(&w, &(struct batcher_policy){.idle_ns = 20 * S, .max_ns = 5 * S});
	assert_int_equal(w.p.idle_ns, 5 * S);
	assert_string_equal(batcher_reason_str(BATCH_IDLE), "idle");
	assert_string_equal(batcher_reason_str(BATCH_RESYNC), "resync");
}

static void test_idle_after_quiet(void **state)
{
	struct batcher_window w = started(0);

	(void)state;
	batcher_window_event(&w, 2 * S);
	assert_int_equal(batcher_window_due(&w, 2 * S), BATCH_NONE);
	assert_int_equal(batcher_window_next(&w, 2 * S), 3 * S);
	batcher_window_event(&w, 2 * S + 500 * MS); /* pushes the idle deadline */
	assert_int_equal(batcher_window_next(&w, 2 * S + 500 * MS), 3 * S + 500 * MS);
	assert_int_equal(batcher_window_due(&w, 3 * S), BATCH_NONE);
	assert_int_equal(batcher_window_due(&w, 3 * S + 500 * MS - 1), BATCH_NONE);
	assert_int_equal(batcher_window_due(&w, 3 * S + 500 * MS), BATCH_IDLE);
	batcher_window_ran(&w, 3 * S + 500 * MS);
	assert_int_equal(batcher_window_due(&w, 4 * S), BATCH_NONE);
	/* the resync counts from the last reconcile */
	assert_int_equal(batcher_window_next(&w, 4 * S), 33 * S + 500 * MS);
}

static void test_max_under_constant_events(void **state)
{
	struct batcher_window w = started(0);
	int64_t t;

	(void)state;
	/* an event every 500 ms from t = 1 s never leaves 1 s of quiet */
	for (t = 1 * S; t < 11 * S; t += 500 * MS) {
		batcher_window_event(&w, t);
		assert_int_equal(batcher_window_due(&w, t), BATCH_NONE);
	}
	batcher_window_event(&w, 11 * S);
	assert_int_equal(batcher_window_due(&w, 11 * S), BATCH_MAX);
	assert_int_equal(batcher_window_next(&w, 10 * S), 11 * S);
}

static void test_resync_without_events(void **state)
{
	struct batcher_window w = started(7 * S);

	(void)state;
	assert_int_equal(batcher_window_due(&w, 37 * S - 1), BATCH_NONE);
	assert_int_equal(batcher_window_due(&w, 37 * S), BATCH_RESYNC);
	/* no resync: nothing pending means no deadline at all */
	batcher_window_init(&w, &(struct batcher_policy){.interval_ns = -1});
	batcher_window_ran(&w, 0);
	assert_int_equal(batcher_window_due(&w, 1000 * S), BATCH_NONE);
	assert_int_equal(batcher_window_next(&w, 1000 * S), INT64_MAX);
	batcher_window_event(&w, 1000 * S);
	assert_int_equal(batcher_window_next(&w, 1000 * S), 1001 * S);
}

static void test_request_and_events_after_a_run(void **state)
{
	struct batcher_window w = started(0);

	(void)state;
	batcher_window_request(&w);
	assert_int_equal(batcher_window_due(&w, 1), BATCH_REQUESTED);
	batcher_window_ran(&w, 1);
	assert_int_equal(batcher_window_due(&w, 2), BATCH_NONE);
	/* an event during a reconcile is the next one's */
	batcher_window_event(&w, 2);
	batcher_window_ran(&w, 1 * S); /* a later run takes it */
	assert_int_equal(batcher_window_due(&w, 3 * S), BATCH_NONE);
	batcher_window_event(&w, 3 * S);
	assert_int_equal(batcher_window_due(&w, 4 * S), BATCH_IDLE);
}

/*
 * A discrete-event run: events at given times; the loop jumps to whichever
 * comes first, the next event or the window's deadline, and records when
 * reconciles fire and why.
 */
static void test_simulated_stream(void **state)
{
	static const int64_t events[] = {
		/* a burst with short gaps: idle fires 1 s after the last */
		5 * S, 5 * S + 200 * MS, 5 * S + 900 * MS,
		/* a long trickle: max fires 10 s after its first event, then idle */
		20 * S, 20 * S + 800 * MS, 21 * S + 600 * MS, 22 * S + 400 * MS, 23 * S + 200 * MS,
		24 * S, 24 * S + 800 * MS, 25 * S + 600 * MS, 26 * S + 400 * MS, 27 * S + 200 * MS,
		28 * S, 28 * S + 800 * MS, 29 * S + 600 * MS, 30 * S + 400 * MS,
	};
	static const struct {
		int64_t t;
		enum batcher_reason why;
	} want[] = {
		{0, BATCH_FIRST},
		{6 * S + 900 * MS, BATCH_IDLE},
		{30 * S, BATCH_MAX},
		{31 * S + 400 * MS, BATCH_IDLE},
		{61 * S + 400 * MS, BATCH_RESYNC},
		{91 * S + 400 * MS, BATCH_RESYNC},
	};
	const size_t n_events = sizeof(events) / sizeof(events[0]);
	const size_t n_want = sizeof(want) / sizeof(want[0]);
	struct batcher_window w;
	size_t e = 0, got = 0;
	int64_t now = 0;

	(void)state;
	batcher_window_init(&w, &policy);
	while (got < n_want) {
		enum batcher_reason r = batcher_window_due(&w, now);
		int64_t next;

		if (r != BATCH_NONE) {
			assert_int_equal(now, want[got].t);
			assert_int_equal(r, want[got].why);
			batcher_window_ran(&w, now);
			got++;
			continue;
		}
		next = batcher_window_next(&w, now);
		assert_true(next > now);
		if (e < n_events && events[e] <= next) {
			now = events[e++];
			batcher_window_event(&w, now);
		} else {
			now = next;
		}
	}
	assert_int_equal(e, n_events);
}

/* ---- the threaded wrapper ---- */

static void *stopper(void *arg)
{
	batcher_stop(arg);
	return NULL;
}

static void *requester(void *arg)
{
	batcher_request(arg);
	return NULL;
}

static void test_wait_wakes_on_request_and_stop(void **state)
{
	struct errbuf err = {""};
	/* nothing becomes due by time alone within the test */
	struct batcher_policy p = {.idle_ns = 3600 * S, .max_ns = 3600 * S, .interval_ns = -1};
	struct batcher *b = batcher_new(&p, &err);
	pthread_t th;

	(void)state;
	assert_non_null(b);
	assert_int_equal(batcher_wait(b), BATCH_FIRST);
	batcher_event(b);
	batcher_event(b);
	assert_int_equal(batcher_events(b), 2);
	/* a request from another thread, whether it comes before or during the wait */
	assert_int_equal(pthread_create(&th, NULL, requester, b), 0);
	assert_int_equal(batcher_wait(b), BATCH_REQUESTED);
	pthread_join(th, NULL);
	/* a stop ends a wait that nothing else would end */
	assert_int_equal(pthread_create(&th, NULL, stopper, b), 0);
	assert_int_equal(batcher_wait(b), BATCH_NONE);
	pthread_join(th, NULL);
	/* and every later one */
	batcher_request(b);
	assert_int_equal(batcher_wait(b), BATCH_NONE);
	batcher_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_reconcile_at_once),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_idle_after_quiet),
		cmocka_unit_test(test_max_under_constant_events),
		cmocka_unit_test(test_resync_without_events),
		cmocka_unit_test(test_request_and_events_after_a_run),
		cmocka_unit_test(test_simulated_stream),
		cmocka_unit_test(test_wait_wakes_on_request_and_stop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
