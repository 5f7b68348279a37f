/*
 * Tests for cloudcall: the status fill (cut to fit), calls counted by
 * kind, the token buckets from the config's limits, and the cancellable
 * wait (a test clock that moves as it sleeps).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "providers/cloudhttp/cloudcall.h"
#include "runtime/clock.h"

static void test_status(void **state)
{
	struct provider_status st;
	char big[2 * PROVIDER_MESSAGE_MAX];

	(void)state;
	memset(&st, 0, sizeof(st));
	st.retry_after_s = 7;
	cloudcall_status(&st, PROVIDER_QUOTA, "group %s: %d over", "web", 3);
	assert_int_equal(st.code, PROVIDER_QUOTA);
	assert_string_equal(st.message, "group web: 3 over");
	assert_int_equal(st.retry_after_s, 7); /* the rest is left as it was */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	cloudcall_status(&st, PROVIDER_INVALID, "%s", big);
	assert_int_equal(strlen(st.message), sizeof(st.message) - 1);
}

static void test_counts(void **state)
{
	struct cloudcall_counts c;
	char kind[16];
	int i;

	(void)state;
	cloudcall_counts_init(&c);
	assert_int_equal(cloudcall_counts_get(&c, "vms.list"), 0);
	cloudcall_counts_add(&c, "vms.list");
	cloudcall_counts_add(&c, "vmss.get");
	cloudcall_counts_add(&c, "vms.list");
	assert_int_equal(cloudcall_counts_get(&c, "vms.list"), 2);
	assert_int_equal(cloudcall_counts_get(&c, "vmss.get"), 1);
	assert_int_equal(cloudcall_counts_get(&c, "vms.delete"), 0);
	/* a long kind is counted under its first 39 characters, in one place */
	cloudcall_counts_add(&c, "aaaaaaaaaabbbbbbbbbbccccccccccdddddddddd-one");
	cloudcall_counts_add(&c, "aaaaaaaaaabbbbbbbbbbccccccccccdddddddddd-two");
	assert_int_equal(cloudcall_counts_get(&c, "aaaaaaaaaabbbbbbbbbbccccccccccddddddddd"), 2);
	/* kinds beyond the table's are not counted; those in it still are */
	for (i = 0; i < CLOUDCALL_KINDS; i++) {
		snprintf(kind, sizeof(kind), "kind%d", i);
		cloudcall_counts_add(&c, kind);
	}
	assert_int_equal(cloudcall_counts_get(&c, "kind0"), 1);
	assert_int_equal(cloudcall_counts_get(&c, "kind31"), 0);
	cloudcall_counts_add(&c, "vms.list");
	assert_int_equal(cloudcall_counts_get(&c, "vms.list"), 3);
	cloudcall_counts_destroy(&c);
}

static void test_buckets(void **state)
{
	struct clock *clk = vclock_new(1800000000LL);
	struct provider p;
	struct config c;

	(void)state;
	memset(&p, 0, sizeof(p));
	memset(&c, 0, sizeof(c));
	c.provider_qps = 2;
	c.provider_burst = 3;
	c.provider_read_qps = 10;
	c.provider_read_burst = 1;
	assert_int_equal(cloudcall_buckets_new(&p, clk, &c), 0);
	/* the mutating bucket holds its burst of 3, the reads bucket 1 (the
	 * clock stands still: a token not saved would be later than now) */
	assert_int_equal(ratelimit_reserve(p.mutating, 0), 0);
	assert_int_equal(ratelimit_reserve(p.mutating, 0), 0);
	assert_int_equal(ratelimit_reserve(p.mutating, 0), 0);
	assert_int_equal(ratelimit_reserve(p.mutating, 0), -1);
	assert_int_equal(ratelimit_reserve(p.reads, 0), 0);
	assert_int_equal(ratelimit_reserve(p.reads, 0), -1);
	cloudcall_buckets_free(&p);
	assert_null(p.mutating);
	assert_null(p.reads);
	/* a limit that is not usable */
	c.provider_qps = -1;
	assert_int_equal(cloudcall_buckets_new(&p, clk, &c), -1);
	cloudcall_buckets_free(&p);
	vclock_free(clk);
}

/* A clock whose sleeps move it to the time asked for, counting them. */
struct stepclock {
	struct clock base;
	int64_t now;
	int sleeps;
	int fail;              /* sleeps fail */
	atomic_bool *cancel_at_second; /* set on the second sleep */
};

static int64_t step_now(const struct clock *c)
{
	return ((const struct stepclock *)c)->now;
}

static int64_t step_wall(const struct clock *c)
{
	return 1800000000LL + step_now(c) / CLOCK_NS_PER_S;
}

static int step_sleep(struct clock *c, int64_t t)
{
	struct stepclock *s = (struct stepclock *)c;

	if (s->fail)
		return -1;
	if (++s->sleeps == 2 && s->cancel_at_second)
		atomic_store(s->cancel_at_second, true);
	if (t > s->now)
		s->now = t;
	return 0;
}

static const struct clock_ops step_ops = { .now_ns = step_now, .wall_s = step_wall, .sleep_until = step_sleep };

static void test_wait_until(void **state)
{
	struct stepclock s;
	atomic_bool cancel = false;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.base.ops = &step_ops;
	/* 1 s in steps of at most 200 ms */
	assert_int_equal(cloudcall_wait_until(&s.base, &cancel, CLOCK_NS_PER_S), 0);
	assert_int_equal(s.now, CLOCK_NS_PER_S);
	assert_int_equal(s.sleeps, 5);
	/* a time already past: no sleep */
	assert_int_equal(cloudcall_wait_until(&s.base, NULL, CLOCK_NS_PER_S / 2), 0);
	assert_int_equal(s.sleeps, 5);
	/* cancelled during the wait: ends at the next step */
	s.sleeps = 0;
	s.cancel_at_second = &cancel;
	assert_int_equal(cloudcall_wait_until(&s.base, &cancel, 10 * CLOCK_NS_PER_S), -1);
	assert_int_equal(s.sleeps, 2);
	assert_true(s.now < 10 * CLOCK_NS_PER_S);
	/* a clock that cannot sleep */
	s.fail = 1;
	assert_int_equal(cloudcall_wait_until(&s.base, NULL, 20 * CLOCK_NS_PER_S), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_buckets),
		cmocka_unit_test(test_wait_until),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
