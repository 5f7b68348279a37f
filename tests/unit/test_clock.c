/*
 * Tests for clock: the real clock's readings and sleep, virtual clocks
 * (start, forward-only moves, wall time, sleeps that cannot block).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "runtime/clock.h"

static void test_real_monotonic(void **state)
{
	struct clock *c = clock_real();
	int64_t prev = clock_now(c);
	int i;

	(void)state;
	assert_ptr_equal(c, clock_real()); /* one shared clock */
	for (i = 0; i < 1000; i++) {
		int64_t t = clock_now(c);

		assert_true(t >= prev);
		prev = t;
	}
}

static void test_real_wall(void **state)
{
	struct clock *c = clock_real();
	struct timespec before, after;
	int64_t w;

	/* CLOCK_REALTIME on both sides, as the clock reads it: time() may
	 * read the coarse clock, a tick behind just after a second turns */
	clock_gettime(CLOCK_REALTIME, &before);
	w = clock_wall(c);
	clock_gettime(CLOCK_REALTIME, &after);
	(void)state;
	assert_true(w >= (int64_t)before.tv_sec);
	assert_true(w <= (int64_t)after.tv_sec);
}

static void test_real_sleep_until(void **state)
{
	struct clock *c = clock_real();
	int64_t target;

	(void)state;
	/* the past returns at once */
	assert_int_equal(c->ops->sleep_until(c, clock_now(c) - CLOCK_NS_PER_S), 0);
	assert_int_equal(c->ops->sleep_until(c, 0), 0);
	/* the contract is "not before": how much later is not asserted */
	target = clock_now(c) + CLOCK_NS_PER_MS;
	assert_int_equal(c->ops->sleep_until(c, target), 0);
	assert_true(clock_now(c) >= target);
}

static void test_virtual_start_and_set(void **state)
{
	struct clock *c = vclock_new(1700000000);

	(void)state;
	assert_non_null(c);
	assert_int_equal(clock_now(c), 0);
	assert_int_equal(clock_wall(c), 1700000000);

	vclock_set(c, 5 * CLOCK_NS_PER_S + 1);
	assert_int_equal(clock_now(c), 5 * CLOCK_NS_PER_S + 1);
	assert_int_equal(clock_wall(c), 1700000005);

	/* never backwards */
	vclock_set(c, CLOCK_NS_PER_S);
	assert_int_equal(clock_now(c), 5 * CLOCK_NS_PER_S + 1);
	vclock_set(c, 5 * CLOCK_NS_PER_S + 1);
	assert_int_equal(clock_now(c), 5 * CLOCK_NS_PER_S + 1);

	vclock_set(c, 3600 * CLOCK_NS_PER_S);
	assert_int_equal(clock_wall(c), 1700003600);
	vclock_free(c);
}

static void test_virtual_sleep_cannot_block(void **state)
{
	struct clock *c = vclock_new(0);

	(void)state;
	vclock_set(c, 100);
	assert_int_equal(c->ops->sleep_until(c, 50), 0);
	assert_int_equal(c->ops->sleep_until(c, 100), 0);
	assert_int_equal(c->ops->sleep_until(c, 101), -1);
	assert_int_equal(clock_now(c), 100); /* a refused sleep moves nothing */
	vclock_free(c);
}

static void test_virtual_clocks_are_independent(void **state)
{
	struct clock *a = vclock_new(10), *b = vclock_new(20);

	(void)state;
	vclock_set(a, 7);
	assert_int_equal(clock_now(a), 7);
	assert_int_equal(clock_now(b), 0);
	assert_int_equal(clock_wall(b), 20);
	vclock_free(a);
	vclock_free(b);
}

static void test_real_clock_is_not_virtual(void **state)
{
	struct clock *c = clock_real();
	int64_t before = clock_now(c);

	(void)state;
	/* vclock_set and vclock_free leave the real clock alone */
	vclock_set(c, before + 1000 * CLOCK_NS_PER_S);
	assert_true(clock_now(c) < before + 1000 * CLOCK_NS_PER_S);
	vclock_free(c);
	vclock_free(NULL);
	assert_true(clock_now(clock_real()) >= before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_monotonic),
		cmocka_unit_test(test_real_wall),
		cmocka_unit_test(test_real_sleep_until),
		cmocka_unit_test(test_virtual_start_and_set),
		cmocka_unit_test(test_virtual_sleep_cannot_block),
		cmocka_unit_test(test_virtual_clocks_are_independent),
		cmocka_unit_test(test_real_clock_is_not_virtual),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
