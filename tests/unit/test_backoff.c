/*
 * Tests for backoff: exponential growth, the cap, jitter bounds and spread,
 * determinism for a seed, the splitmix64 generator, and the per-key
 * tracker (failures, ready times, reset on success, many keys).
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "runtime/backoff.h"

#define SEC 1000000000LL

static const struct backoff_policy plain = {
	.initial_ns = SEC, .max_ns = 60 * SEC, .factor = 2, .jitter = 0,
};

static void test_growth_and_cap(void **state)
{
	const int64_t want[] = { SEC, 2 * SEC, 4 * SEC, 8 * SEC, 16 * SEC, 32 * SEC, 60 * SEC, 60 * SEC };
	uint64_t rng = 1;
	int i;

	(void)state;
	assert_int_equal(backoff_delay(&plain, 0, NULL), 0);
	assert_int_equal(backoff_delay(&plain, -3, NULL), 0);
	for (i = 0; i < 8; i++) {
		assert_int_equal(backoff_delay(&plain, i + 1, NULL), want[i]);
		/* jitter 0: the generator changes nothing */
		assert_int_equal(backoff_delay(&plain, i + 1, &rng), want[i]);
	}
	assert_int_equal(backoff_delay(&plain, 1000, NULL), 60 * SEC);
	assert_int_equal(backoff_delay(&plain, INT_MAX, NULL), 60 * SEC);
}

static void test_odd_policies(void **state)
{
	struct backoff_policy p = plain;

	(void)state;
	/* a first delay above the cap is capped */
	p.initial_ns = 120 * SEC;
	assert_int_equal(backoff_delay(&p, 1, NULL), 60 * SEC);
	/* factor 1: constant */
	p = plain;
	p.factor = 1;
	assert_int_equal(backoff_delay(&p, 50, NULL), SEC);
	/* factor 1.5 */
	p.factor = 1.5;
	assert_int_equal(backoff_delay(&p, 3, NULL), 2250000000LL);
	/* a cap near the top of int64 never overflows */
	p = plain;
	p.max_ns = INT64_MAX;
	assert_int_equal(backoff_delay(&p, INT_MAX, NULL), INT64_MAX);
	/* nothing to wait for */
	p = plain;
	p.initial_ns = 0;
	assert_int_equal(backoff_delay(&p, 5, NULL), 0);
}

static void test_jitter_bounds_and_spread(void **state)
{
	struct backoff_policy p = plain;
	uint64_t rng = 12345;
	int64_t lo = INT64_MAX, hi = 0;
	int i;

	(void)state;
	p.jitter = 0.5;
	for (i = 0; i < 10000; i++) {
		int64_t d = backoff_delay(&p, 3, &rng); /* base 4 s */

		assert_true(d >= 2 * SEC);
		assert_true(d <= 4 * SEC);
		if (d < lo)
			lo = d;
		if (d > hi)
			hi = d;
	}
	/* spread over the whole range, not stuck at one end */
	assert_true(lo < 2 * SEC + SEC / 10);
	assert_true(hi > 4 * SEC - SEC / 10);

	/* at the cap too */
	for (i = 0; i < 1000; i++) {
		int64_t d = backoff_delay(&p, 40, &rng);

		assert_true(d >= 30 * SEC && d <= 60 * SEC);
	}
	/* full jitter: [0, base]; no generator: no jitter */
	p.jitter = 1;
	for (i = 0; i < 1000; i++) {
		int64_t d = backoff_delay(&p, 1, &rng);

		assert_true(d >= 0 && d <= SEC);
	}
	assert_int_equal(backoff_delay(&p, 1, NULL), SEC);
	/* out-of-range jitter is clamped */
	p.jitter = 7;
	for (i = 0; i < 1000; i++) {
		int64_t d = backoff_delay(&p, 2, &rng);

		assert_true(d >= 0 && d <= 2 * SEC);
	}
	p.jitter = -1;
	assert_int_equal(backoff_delay(&p, 2, &rng), 2 * SEC);
}

static void test_deterministic_for_seed(void **state)
{
	struct backoff_policy p = plain;
	uint64_t a = 99, b = 99, c = 100;
	int i, differ = 0;

	(void)state;
	p.jitter = 0.3;
	for (i = 1; i <= 200; i++) {
		int64_t da = backoff_delay(&p, i % 10 + 1, &a);
		int64_t db = backoff_delay(&p, i % 10 + 1, &b);
		int64_t dc = backoff_delay(&p, i % 10 + 1, &c);

		assert_int_equal(da, db);
		differ |= da != dc;
	}
	assert_true(differ);
}

static void test_splitmix64(void **state)
{
	/* the published first outputs of splitmix64 seeded with 0 */
	uint64_t s = 0;

	(void)state;
	assert_int_equal(backoff_rand(&s), 0xe220a8397b1dcdafULL);
	assert_int_equal(backoff_rand(&s), 0x6e789e6aa1b965f4ULL);
	assert_int_equal(backoff_rand(&s), 0x06c45d188009454fULL);
}

static void test_tracker(void **state)
{
	struct backoff_tracker *t = backoff_tracker_new(&plain, 1);
	int64_t now = 1000 * SEC, until;

	(void)state;
	assert_non_null(t);
	assert_true(backoff_tracker_ready(t, "workers", now));
	assert_int_equal(backoff_tracker_failures(t, "workers"), 0);

	until = backoff_tracker_fail(t, "workers", now);
	assert_int_equal(until, now + SEC);
	assert_int_equal(backoff_tracker_failures(t, "workers"), 1);
	assert_false(backoff_tracker_ready(t, "workers", now));
	assert_false(backoff_tracker_ready(t, "workers", now + SEC - 1));
	assert_true(backoff_tracker_ready(t, "workers", now + SEC));
	assert_true(backoff_tracker_ready(t, "gpu", now)); /* other keys unaffected */

	assert_int_equal(backoff_tracker_fail(t, "workers", now + SEC), now + 3 * SEC);
	assert_int_equal(backoff_tracker_fail(t, "workers", now + 3 * SEC), now + 7 * SEC);
	assert_int_equal(backoff_tracker_failures(t, "workers"), 3);

	backoff_tracker_succeed(t, "workers");
	assert_int_equal(backoff_tracker_failures(t, "workers"), 0);
	assert_true(backoff_tracker_ready(t, "workers", now));
	/* the count starts over */
	assert_int_equal(backoff_tracker_fail(t, "workers", now), now + SEC);
	backoff_tracker_succeed(t, "never-failed");
	backoff_tracker_free(t);
	backoff_tracker_free(NULL);
}

static void test_tracker_many_keys(void **state)
{
	struct backoff_tracker *t = backoff_tracker_new(&plain, 1);
	char key[32];
	int i, j;

	(void)state;
	for (i = 0; i < 500; i++) {
		snprintf(key, sizeof(key), "group-%d", i);
		for (j = 0; j <= i % 4; j++)
			assert_true(backoff_tracker_fail(t, key, 0) > 0);
	}
	for (i = 0; i < 500; i++) {
		snprintf(key, sizeof(key), "group-%d", i);
		assert_int_equal(backoff_tracker_failures(t, key), i % 4 + 1);
		assert_false(backoff_tracker_ready(t, key, 0));
	}
	assert_int_equal(backoff_tracker_failures(t, "group-500"), 0);
	backoff_tracker_free(t);
}

static void test_tracker_deterministic(void **state)
{
	struct backoff_policy p = plain;
	struct backoff_tracker *a, *b;
	int i;

	(void)state;
	p.jitter = 0.5;
	a = backoff_tracker_new(&p, 77);
	b = backoff_tracker_new(&p, 77);
	for (i = 0; i < 20; i++) {
		const char *k = i % 2 ? "a" : "b";

		assert_int_equal(backoff_tracker_fail(a, k, i * SEC), backoff_tracker_fail(b, k, i * SEC));
	}
	backoff_tracker_free(a);
	backoff_tracker_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_growth_and_cap),
		cmocka_unit_test(test_odd_policies),
		cmocka_unit_test(test_jitter_bounds_and_spread),
		cmocka_unit_test(test_deterministic_for_seed),
		cmocka_unit_test(test_splitmix64),
		cmocka_unit_test(test_tracker),
		cmocka_unit_test(test_tracker_many_keys),
		cmocka_unit_test(test_tracker_deterministic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
