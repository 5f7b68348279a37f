/*
 * Tests for the reconcile trigger: the idle/max batching window and the
 * periodic resync in virtual time (times are plain numbers), the head
 * start of new Unschedulable pods, simulated event streams driven by the
 * window's own deadlines, and the threaded wrapper's wake-ups (request,
 * stop, a new pod) that do not depend on time passing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>

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

/* ---- new Unschedulable pods ---- */

static const struct batcher_policy quick = {.idle_ns = 1 * S, .max_ns = 10 * S,
					    .interval_ns = 30 * S, .new_pod_ns = 100 * MS};

static void test_new_pod_within_its_window(void **state)
{
	struct batcher_window w;
	int64_t t;

	(void)state;
	batcher_window_init(&w, &quick);
	batcher_window_ran(&w, 0);
	assert_int_equal(w.p.new_pod_ns, 100 * MS);
	/* other changes keep coming every 50 ms: they alone would wait for max */
	batcher_window_event(&w, 1 * S);
	batcher_window_new_pod(&w, 1 * S + 200 * MS);
	assert_int_equal(batcher_window_next(&w, 1 * S + 200 * MS), 1 * S + 300 * MS);
	for (t = 1 * S + 200 * MS; t < 1 * S + 300 * MS; t += 50 * MS) {
		batcher_window_event(&w, t);
		assert_int_equal(batcher_window_due(&w, t), BATCH_NONE);
	}
	/* a second new pod does not move the first one's deadline */
	batcher_window_new_pod(&w, 1 * S + 290 * MS);
	assert_int_equal(batcher_window_next(&w, 1 * S + 290 * MS), 1 * S + 300 * MS);
	assert_int_equal(batcher_window_due(&w, 1 * S + 300 * MS - 1), BATCH_NONE);
	assert_int_equal(batcher_window_due(&w, 1 * S + 300 * MS), BATCH_NEW_POD);
	assert_string_equal(batcher_reason_str(BATCH_NEW_POD), "new_pod");
	/* the reconcile takes them all; a change after it waits for idle again */
	batcher_window_ran(&w, 1 * S + 300 * MS);
	batcher_window_event(&w, 1 * S + 400 * MS);
	assert_int_equal(batcher_window_next(&w, 1 * S + 400 * MS), 2 * S + 400 * MS);
	assert_int_equal(batcher_window_due(&w, 2 * S + 400 * MS), BATCH_IDLE);
}

static void test_new_pod_disabled_and_capped(void **state)
{
	struct batcher_window w;

	(void)state;
	/* < 0: a new pod is a change like any other */
	batcher_window_init(&w, &(struct batcher_policy){.idle_ns = 1 * S, .max_ns = 10 * S,
							 .new_pod_ns = -1});
	batcher_window_ran(&w, 0);
	batcher_window_new_pod(&w, 5 * S);
	assert_int_equal(batcher_window_next(&w, 5 * S), 6 * S);
	assert_int_equal(batcher_window_due(&w, 6 * S - 1), BATCH_NONE);
	assert_int_equal(batcher_window_due(&w, 6 * S), BATCH_IDLE);
	/* never longer than idle: a new pod never waits more than other changes */
	batcher_window_init(&w, &(struct batcher_policy){.idle_ns = 1 * S, .max_ns = 10 * S,
							 .new_pod_ns = 5 * S});
	assert_int_equal(w.p.new_pod_ns, 1 * S);
	/* the default */
	batcher_window_init(&w, NULL);
	assert_int_equal(w.p.new_pod_ns, 100 * MS);
}

/*
 * Steady arrivals and bursts as the informers classify them: pods become
 * Unschedulable at given times while the kubelets' and controllers'
 * changes that matter (bindings, nodes registering) trickle in every
 * 300 ms, for 20 s. Status-only updates never reach the window (the
 * informers drop them). With new_pod, every pod gets a reconcile within
 * 100 ms; without it (the window alone), the trickle holds every pod until
 * max: that is the difference the bench measures.
 */
struct arrival {
	int64_t t;
	bool new_pod;
};

static int arrival_cmp(const void *a, const void *b)
{
	const struct arrival *x = a, *y = b;

	return x->t < y->t ? -1 : x->t > y->t;
}

/* Runs the stream through a window with policy 'p'; returns the longest
 * wait from a pod's arrival to the reconcile that saw it. */
static int64_t longest_wait(const struct batcher_policy *p, int64_t *reconciles)
{
	struct arrival ev[256];
	size_t n = 0, e = 0, i;
	int64_t now = 0, worst = 0, end = 25 * S, t;
	int64_t waiting[64];
	size_t n_waiting = 0;
	struct batcher_window w;

	/* a pod every 700 ms from 1 s, a burst of 8 at 6 s and at 13 s */
	for (t = 1 * S; t < 20 * S; t += 700 * MS)
		ev[n++] = (struct arrival){t, true};
	for (i = 0; i < 8; i++) {
		ev[n++] = (struct arrival){6 * S + (int64_t)i * 10 * MS, true};
		ev[n++] = (struct arrival){13 * S + (int64_t)i * 10 * MS, true};
	}
	for (t = 1 * S + 150 * MS; t < 21 * S; t += 300 * MS)
		ev[n++] = (struct arrival){t, false};
	qsort(ev, n, sizeof(ev[0]), arrival_cmp);
	*reconciles = 0;
	batcher_window_init(&w, p);
	batcher_window_ran(&w, 0);
	while (now < end) {
		int64_t next;

		if (batcher_window_due(&w, now) != BATCH_NONE) {
			for (i = 0; i < n_waiting; i++)
				if (now - waiting[i] > worst)
					worst = now - waiting[i];
			n_waiting = 0;
			batcher_window_ran(&w, now);
			(*reconciles)++;
			continue;
		}
		next = batcher_window_next(&w, now);
		assert_true(next > now);
		if (e < n && ev[e].t <= next) {
			now = ev[e].t;
			if (ev[e].new_pod) {
				assert_true(n_waiting < 64);
				waiting[n_waiting++] = now;
				batcher_window_new_pod(&w, now);
			} else {
				batcher_window_event(&w, now);
			}
			e++;
		} else {
			now = next;
		}
	}
	assert_int_equal(n_waiting, 0);
	return worst;
}

static void test_stream_of_arrivals_and_bursts(void **state)
{
	struct batcher_policy p = quick;
	int64_t rounds, worst;

	(void)state;
	worst = longest_wait(&p, &rounds);
	assert_int_equal(worst, 100 * MS);
	/* a burst shares one reconcile: fewer rounds than pods */
	assert_true(rounds < 28 + 16);
	/* the window alone: the trickle of changes holds pods until max */
	p.new_pod_ns = -1;
	worst = longest_wait(&p, &rounds);
	assert_true(worst > 5 * S);
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

static void *new_pod(void *arg)
{
	batcher_new_pod(arg);
	return NULL;
}

static void test_wait_wakes_on_new_pod(void **state)
{
	struct errbuf err = {""};
	/* idle and max an hour, a new pod's window 1 ns: only the new pod can
	 * end the wait before the test's timeout */
	struct batcher_policy p = {.idle_ns = 3600 * S, .max_ns = 3600 * S, .interval_ns = -1,
				   .new_pod_ns = 1};
	struct batcher *b = batcher_new(&p, &err);
	pthread_t th;

	(void)state;
	assert_non_null(b);
	assert_int_equal(batcher_wait(b), BATCH_FIRST);
	batcher_event(b); /* a change first: the waiter sleeps for an hour */
	assert_int_equal(pthread_create(&th, NULL, new_pod, b), 0);
	assert_int_equal(batcher_wait(b), BATCH_NEW_POD);
	pthread_join(th, NULL);
	assert_int_equal(batcher_events(b), 2);
	batcher_free(b);
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
		cmocka_unit_test(test_new_pod_within_its_window),
		cmocka_unit_test(test_new_pod_disabled_and_capped),
		cmocka_unit_test(test_stream_of_arrivals_and_bursts),
		cmocka_unit_test(test_wait_wakes_on_new_pod),
		cmocka_unit_test(test_wait_wakes_on_request_and_stop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
