/*
 * Tests for credcache: first fetch, the advisory and mandatory windows, a
 * failed refresh keeping the old value until it expires, never-expiring
 * values, one refresh at a time across threads, and logs without secrets.
 * Time is a virtual clock moved by the tests.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>

#include <cmocka.h>

#include "providers/cloudhttp/credcache.h"

#define T0 1800000000LL

struct val {
	char secret[32];
	int serial;
};

struct src {
	int calls;
	int fail;             /* the next refreshes fail */
	int64_t lifetime_s;   /* expiry = now + lifetime (CREDCACHE_NEVER: never) */
	struct clock *clk;
	/* blocking: the refresh waits until 'release' is set */
	int block;
	int entered;
	int release;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

struct sink {
	char all[16384];
	int warns;
};

static void capture(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct sink *s = ctx;
	size_t n = strlen(s->all);

	(void)wall;
	if (level == LOG_WARN)
		s->warns++;
	snprintf(s->all + n, sizeof(s->all) - n, "%s\n", msg);
}

static int refresh(void *ud, void *value, int64_t *expires_s, struct errbuf *err)
{
	struct src *s = ud;
	struct val *v = value;
	int n;

	pthread_mutex_lock(&s->mu);
	n = ++s->calls;
	if (s->block) {
		s->entered = 1;
		pthread_cond_broadcast(&s->cv);
		while (!s->release)
			pthread_cond_wait(&s->cv, &s->mu);
	}
	pthread_mutex_unlock(&s->mu);
	if (s->fail)
		return errbuf_set(err, "source unreachable (attempt %d)", n);
	snprintf(v->secret, sizeof(v->secret), "SECRET-%d", n);
	v->serial = n;
	*expires_s = s->lifetime_s == CREDCACHE_NEVER ? CREDCACHE_NEVER
						      : clock_wall(s->clk) + s->lifetime_s;
	return 0;
}

static void at(struct clock *c, int64_t offset_s)
{
	vclock_set(c, offset_s * CLOCK_NS_PER_S);
}

struct fx {
	struct clock *clk;
	struct src src;
	struct sink sink;
	struct logger log;
	struct credcache *cc;
};

static struct fx *fx_new(int64_t lifetime_s, int64_t advisory, int64_t mandatory)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct credcache_opts o;
	struct errbuf e = { "" };

	assert_non_null(f);
	f->clk = vclock_new(T0);
	f->src.clk = f->clk;
	f->src.lifetime_s = lifetime_s;
	pthread_mutex_init(&f->src.mu, NULL);
	pthread_cond_init(&f->src.cv, NULL);
	f->log = (struct logger){ capture, &f->sink, LOG_DEBUG, NULL };
	memset(&o, 0, sizeof(o));
	o.name = "test credentials";
	o.value_size = sizeof(struct val);
	o.refresh = refresh;
	o.ud = &f->src;
	o.advisory_s = advisory;
	o.mandatory_s = mandatory;
	o.retry_s = 30;
	o.clock = f->clk;
	o.log = &f->log;
	f->cc = credcache_new(&o, &e);
	assert_non_null(f->cc);
	return f;
}

static void fx_free(struct fx *f)
{
	credcache_free(f->cc);
	vclock_free(f->clk);
	pthread_cond_destroy(&f->src.cv);
	pthread_mutex_destroy(&f->src.mu);
	free(f);
}

static int get(struct fx *f, struct val *v, int64_t *exp, struct errbuf *e)
{
	memset(v, 0, sizeof(*v));
	return credcache_get(f->cc, v, exp, e);
}

static void test_first_get_refreshes_then_caches(void **state)
{
	struct fx *f = fx_new(3600, 0, 0); /* AWS windows: 15 and 10 min */
	struct val v;
	struct errbuf e = { "" };
	int64_t exp = 0;

	(void)state;
	assert_int_equal(get(f, &v, &exp, &e), 0);
	assert_int_equal(v.serial, 1);
	assert_int_equal(exp, T0 + 3600);
	at(f->clk, 3600 - 15 * 60 - 1); /* just before the advisory window */
	assert_int_equal(get(f, &v, &exp, &e), 0);
	assert_int_equal(v.serial, 1);
	assert_int_equal(f->src.calls, 1);
	fx_free(f);
}

static void test_advisory_window_refreshes(void **state)
{
	struct fx *f = fx_new(3600, 0, 0);
	struct val v;
	struct errbuf e = { "" };
	int64_t exp = 0;

	(void)state;
	assert_int_equal(get(f, &v, &exp, &e), 0);
	at(f->clk, 3600 - 15 * 60); /* the advisory window opens */
	assert_int_equal(get(f, &v, &exp, &e), 0);
	assert_int_equal(v.serial, 2);
	assert_int_equal(exp, T0 + 3600 - 15 * 60 + 3600);
	assert_int_equal(f->src.calls, 2);
	fx_free(f);
}

static void test_failed_refresh_keeps_old_until_expiry(void **state)
{
	struct fx *f = fx_new(3600, 0, 0);
	struct val v;
	struct errbuf e = { "" };
	int64_t exp = 0;
	struct credcache_stats st;

	(void)state;
	assert_int_equal(get(f, &v, &exp, &e), 0);
	f->src.fail = 1;
	at(f->clk, 3600 - 12 * 60); /* advisory window */
	assert_int_equal(get(f, &v, &exp, &e), 0);
	assert_int_equal(v.serial, 1);
	assert_int_equal(exp, T0 + 3600);
	assert_int_equal(f->src.calls, 2);
	assert_int_equal(f->sink.warns, 1);
	assert_non_null(strstr(f->sink.all, "advisory"));
	/* within the retry pause: no new attempt, the old value served */
	at(f->clk, 3600 - 12 * 60 + 10);
	assert_int_equal(get(f, &v, &exp, &e), 0);
	assert_int_equal(f->src.calls, 2);
	/* the mandatory window: a new attempt, failing, still the old value */
	at(f->clk, 3600 - 5 * 60);
	assert_int_equal(get(f, &v, &exp, &e), 0);
	assert_int_equal(v.serial, 1);
	assert_int_equal(f->src.calls, 3);
	assert_non_null(strstr(f->sink.all, "mandatory"));
	/* one second before expiry, still served */
	at(f->clk, 3599);
	assert_int_equal(get(f, &v, &exp, &e), 0);
	assert_int_equal(v.serial, 1);
	/* expired: the refresh's error, nothing in 'out' */
	at(f->clk, 3600);
	assert_int_equal(get(f, &v, &exp, &e), -1);
	assert_int_equal(v.serial, 0);
	assert_non_null(strstr(e.msg, "test credentials: source unreachable"));
	credcache_stats(f->cc, &st);
	assert_int_equal(st.refreshes, 1);
	assert_true(st.failures >= 3);
	assert_true(st.stale_served >= 3);
	/* the source recovers */
	f->src.fail = 0;
	assert_int_equal(get(f, &v, &exp, &e), 0);
	assert_true(v.serial > 1);
	/* no secret reached the log */
	assert_null(strstr(f->sink.all, "SECRET"));
	fx_free(f);
}

static void test_first_fetch_failure_is_error(void **state)
{
	struct fx *f = fx_new(3600, 0, 0);
	struct val v;
	struct errbuf e = { "" };

	(void)state;
	f->src.fail = 1;
	assert_int_equal(get(f, &v, NULL, &e), -1);
	assert_non_null(strstr(e.msg, "source unreachable (attempt 1)"));
	/* no value to keep: the next call tries again at once */
	assert_int_equal(get(f, &v, NULL, &e), -1);
	assert_non_null(strstr(e.msg, "attempt 2"));
	fx_free(f);
}

static void test_never_expiring_never_refreshes(void **state)
{
	struct fx *f = fx_new(CREDCACHE_NEVER, 0, 0);
	struct val v;
	struct errbuf e = { "" };
	int64_t exp = 0;

	(void)state;
	assert_int_equal(get(f, &v, &exp, &e), 0);
	assert_true(exp == CREDCACHE_NEVER);
	at(f->clk, 10LL * 365 * 86400);
	assert_int_equal(get(f, &v, &exp, &e), 0);
	assert_int_equal(f->src.calls, 1);
	fx_free(f);
}

static void test_already_expired_refresh_is_failure(void **state)
{
	struct fx *f = fx_new(0, 0, 0); /* the source hands out expired values */
	struct val v;
	struct errbuf e = { "" };

	(void)state;
	assert_int_equal(get(f, &v, NULL, &e), -1);
	assert_non_null(strstr(e.msg, "expired already"));
	fx_free(f);
}

static void test_short_lived_token_windows(void **state)
{
	/* GCE/Azure: 5 minutes */
	struct fx *f = fx_new(3600, CREDCACHE_TOKEN_ADVISORY_S, CREDCACHE_TOKEN_MANDATORY_S);
	struct val v;
	struct errbuf e = { "" };

	(void)state;
	assert_int_equal(get(f, &v, NULL, &e), 0);
	at(f->clk, 3600 - 5 * 60 - 1);
	assert_int_equal(get(f, &v, NULL, &e), 0);
	assert_int_equal(f->src.calls, 1);
	at(f->clk, 3600 - 5 * 60);
	assert_int_equal(get(f, &v, NULL, &e), 0);
	assert_int_equal(f->src.calls, 2);
	fx_free(f);
}

static void test_invalidate_forces_refresh(void **state)
{
	struct fx *f = fx_new(CREDCACHE_NEVER, 0, 0);
	struct val v;
	struct errbuf e = { "" };

	(void)state;
	assert_int_equal(get(f, &v, NULL, &e), 0);
	credcache_invalidate(f->cc);
	assert_int_equal(get(f, &v, NULL, &e), 0);
	assert_int_equal(v.serial, 2);
	fx_free(f);
}

static void test_bad_options(void **state)
{
	struct credcache_opts o;
	struct errbuf e = { "" };

	(void)state;
	memset(&o, 0, sizeof(o));
	assert_null(credcache_new(&o, &e));
	assert_non_null(strstr(e.msg, "refresh function"));
	o.refresh = refresh;
	o.value_size = 8;
	o.advisory_s = 60;
	o.mandatory_s = 120;
	assert_null(credcache_new(&o, &e));
	assert_non_null(strstr(e.msg, "mandatory window"));
}

struct getter {
	struct fx *f;
	struct val v;
	int rc;
	struct errbuf e;
};

static void *getter_main(void *arg)
{
	struct getter *g = arg;

	g->rc = get(g->f, &g->v, NULL, &g->e);
	return NULL;
}

static void wait_entered(struct src *s)
{
	pthread_mutex_lock(&s->mu);
	while (!s->entered)
		pthread_cond_wait(&s->cv, &s->mu);
	pthread_mutex_unlock(&s->mu);
}

static void release(struct src *s)
{
	pthread_mutex_lock(&s->mu);
	s->release = 1;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

/* Spins until a second caller is blocked in the cache (bounded: a caller
 * that never waits fails the test instead of hanging it). */
static void wait_for_waiter(struct fx *f)
{
	struct credcache_stats st;
	long spins = 0;

	do {
		sched_yield();
		credcache_stats(f->cc, &st);
	} while (st.waits < 1 && ++spins < 50000000L);
	assert_true(st.waits >= 1);
}

/* In the advisory window, a caller arriving while another refreshes gets
 * the current value at once. */
static void test_advisory_others_use_old_value(void **state)
{
	struct fx *f = fx_new(3600, 0, 0);
	struct getter a = { .f = f }, b = { .f = f };
	pthread_t ta;
	struct val v;
	struct errbuf e = { "" };

	(void)state;
	assert_int_equal(get(f, &v, NULL, &e), 0);
	f->src.block = 1;
	at(f->clk, 3600 - 14 * 60);
	assert_int_equal(pthread_create(&ta, NULL, getter_main, &a), 0);
	wait_entered(&f->src);
	/* 'a' is inside the refresh: this call must not block */
	getter_main(&b);
	assert_int_equal(b.rc, 0);
	assert_int_equal(b.v.serial, 1);
	release(&f->src);
	pthread_join(ta, NULL);
	assert_int_equal(a.rc, 0);
	assert_int_equal(a.v.serial, 2);
	assert_int_equal(f->src.calls, 2);
	fx_free(f);
}

/* In the mandatory window, a caller arriving while another refreshes
 * waits for it and gets the new value; the source is called once. */
static void test_mandatory_others_wait(void **state)
{
	struct fx *f = fx_new(3600, 0, 0);
	struct getter a = { .f = f }, b = { .f = f };
	pthread_t ta, tb;
	struct val v;
	struct errbuf e = { "" };

	(void)state;
	assert_int_equal(get(f, &v, NULL, &e), 0);
	f->src.block = 1;
	at(f->clk, 3600 - 5 * 60);
	assert_int_equal(pthread_create(&ta, NULL, getter_main, &a), 0);
	wait_entered(&f->src);
	assert_int_equal(pthread_create(&tb, NULL, getter_main, &b), 0);
	wait_for_waiter(f);
	release(&f->src);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	assert_int_equal(a.rc, 0);
	assert_int_equal(b.rc, 0);
	assert_int_equal(a.v.serial, 2);
	assert_int_equal(b.v.serial, 2);
	assert_int_equal(f->src.calls, 2);
	fx_free(f);
}

/* With no value at all, a waiter whose refresh failed gets that error and
 * does not start a second attempt. */
static void test_waiter_shares_failure(void **state)
{
	struct fx *f = fx_new(3600, 0, 0);
	struct getter a = { .f = f }, b = { .f = f };
	pthread_t ta, tb;

	(void)state;
	f->src.block = 1;
	f->src.fail = 1;
	assert_int_equal(pthread_create(&ta, NULL, getter_main, &a), 0);
	wait_entered(&f->src);
	assert_int_equal(pthread_create(&tb, NULL, getter_main, &b), 0);
	wait_for_waiter(f);
	release(&f->src);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	assert_int_equal(a.rc, -1);
	assert_int_equal(b.rc, -1);
	assert_non_null(strstr(b.e.msg, "attempt 1"));
	assert_int_equal(f->src.calls, 1);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_get_refreshes_then_caches),
		cmocka_unit_test(test_advisory_window_refreshes),
		cmocka_unit_test(test_failed_refresh_keeps_old_until_expiry),
		cmocka_unit_test(test_first_fetch_failure_is_error),
		cmocka_unit_test(test_never_expiring_never_refreshes),
		cmocka_unit_test(test_already_expired_refresh_is_failure),
		cmocka_unit_test(test_short_lived_token_windows),
		cmocka_unit_test(test_invalidate_forces_refresh),
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_advisory_others_use_old_value),
		cmocka_unit_test(test_mandatory_others_wait),
		cmocka_unit_test(test_waiter_shares_failure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
