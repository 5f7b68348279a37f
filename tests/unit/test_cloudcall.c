/*
 * Tests for cloudcall: the status fill (cut to fit), calls counted by
 * kind, the token buckets from the config's limits, the cancellable
 * wait (a test clock that moves as it sleeps), and a bearer call's
 * prepare and verdict (a scripted token source).
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
#include "providers/cloudhttp/oauth.h"
#include "runtime/fence.h"
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

/* ---- bearer calls ---- */

struct script {
	int fetches;
	bool fail;
	int lines;
	char last[512];
};

static int fetch(void *ud, char *token, size_t len, int64_t *expires_s, char *full, size_t full_len,
		 struct errbuf *err)
{
	struct script *s = ud;

	s->fetches++;
	if (s->fail) {
		snprintf(full, full_len, "invalid_grant: Invalid JWT Signature.; service account key k.json: HTTP 400");
		return errbuf_set(err, "invalid_grant");
	}
	snprintf(token, len, "tok-%d", s->fetches);
	*expires_s = 4000000000LL;
	return 0;
}

static void capture(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct script *s = ctx;

	(void)level;
	(void)wall;
	s->lines++;
	snprintf(s->last, sizeof(s->last), "%s", msg);
}

static void test_bearer(void **state)
{
	struct script sc = { 0 };
	struct logger log = { .write = capture, .ctx = &sc, .min_level = LOG_DEBUG };
	struct oauth_source *src = oauth_source_new(&(struct oauth_source_opts){
		.name = "test token", .who = "test auth", .token_max = 64, .fetch = fetch, .ud = &sc,
		.advisory_s = 300, .mandatory_s = 60 }, NULL);
	struct ratelimit *rl = ratelimit_new(clock_real(), 10, 100);
	struct provider_status st = { 0 };
	struct cloudcall_bearer c = { .cloud = "gce", .what = "GET zones/a/instanceGroupManagers/web", .bucket = rl,
				      .auth = src, .clock = clock_real(), .log = &log, .st = &st };
	struct cloudhttp_headers h = CLOUDHTTP_HEADERS_INIT;
	struct cloudhttp_response r = { 0 };
	struct errbuf e;
	double rate;

	(void)state;
	assert_non_null(src);
	assert_non_null(rl);
	/* before each attempt: a bucket's token, then the bearer */
	assert_int_equal(cloudcall_bearer_prepare(&c, CLOCK_NS_PER_S, &h, &e), 0);
	assert_string_equal(cloudhttp_headers_get(&h, "Authorization"), "Bearer tok-1");
	/* 2xx: done */
	r.status = 200;
	assert_int_equal(cloudcall_bearer_verdict(&c, &r, false, ""), CLOUDHTTP_DONE);
	/* the cloud's throttling: slower, said, retried */
	rate = ratelimit_rate(rl);
	r.status = 403;
	assert_int_equal(cloudcall_bearer_verdict(&c, &r, true, "rateLimitExceeded"), CLOUDHTTP_RETRY_THROTTLED);
	assert_true(ratelimit_rate(rl) < rate);
	assert_int_equal(sc.lines, 1);
	assert_non_null(strstr(sc.last, "gce: GET zones/a/instanceGroupManagers/web throttled (HTTP 403 "
					"rateLimitExceeded); retrying, calls now at"));
	c.bucket = NULL; /* a slowed bucket would make the next token wait */
	/* the first 401 drops the token and retries; the second is the answer */
	r.status = 401;
	assert_int_equal(cloudcall_bearer_verdict(&c, &r, false, ""), CLOUDHTTP_RETRY);
	assert_int_equal(cloudcall_bearer_prepare(&c, CLOCK_NS_PER_S, &h, &e), 0);
	assert_string_equal(cloudhttp_headers_get(&h, "Authorization"), "Bearer tok-2");
	assert_int_equal(cloudcall_bearer_verdict(&c, &r, false, ""), CLOUDHTTP_DONE);
	/* 5xx retried; another 4xx is the answer */
	r.status = 503;
	assert_int_equal(cloudcall_bearer_verdict(&c, &r, false, ""), CLOUDHTTP_RETRY);
	r.status = 404;
	assert_int_equal(cloudcall_bearer_verdict(&c, &r, false, ""), CLOUDHTTP_DONE);
	/* no token: PROVIDER_AUTH with the token endpoint's whole message */
	sc.fail = true;
	oauth_source_invalidate(src);
	assert_int_equal(cloudcall_bearer_prepare(&c, CLOCK_NS_PER_S, &h, &e), -1);
	assert_int_equal(st.code, PROVIDER_AUTH);
	assert_string_equal(st.message, "invalid_grant: Invalid JWT Signature.; service account key k.json: HTTP 400");
	assert_non_null(strstr(e.msg, "no access token"));
	/* a public API (no source): no header, and a 401 is the answer */
	memset(&st, 0, sizeof(st));
	c.auth = NULL;
	c.auth_retried = false;
	cloudhttp_headers_free(&h);
	assert_int_equal(cloudcall_bearer_prepare(&c, CLOCK_NS_PER_S, &h, &e), 0);
	assert_null(cloudhttp_headers_get(&h, "Authorization"));
	r.status = 401;
	assert_int_equal(cloudcall_bearer_verdict(&c, &r, false, ""), CLOUDHTTP_DONE);
	ratelimit_free(rl);
	/* a bucket with one token: the second call finds none within its wait
	 * (the next comes in 1000 s: refused at once), unless its caller took
	 * the token itself */
	rl = ratelimit_new(clock_real(), 0.001, 1);
	c.bucket = rl;
	assert_int_equal(cloudcall_bearer_prepare(&c, CLOCK_NS_PER_S, &h, &e), 0);
	assert_int_equal(cloudcall_bearer_prepare(&c, CLOCK_NS_PER_S, &h, &e), -1);
	assert_int_equal(st.code, PROVIDER_THROTTLED);
	c.token_taken = true;
	assert_int_equal(cloudcall_bearer_prepare(&c, CLOCK_NS_PER_S, &h, &e), 0);
	ratelimit_free(rl);
	/* a write bucket behind a closed write fence (a replica that does not
	 * lead): refused before any token is fetched or header set */
	{
		struct fence *fence = fence_new(clock_real());
		int fetches;

		assert_non_null(fence);
		rl = ratelimit_new(clock_real(), 10, 10);
		ratelimit_set_fence(rl, fence);
		c.bucket = rl;
		c.token_taken = false;
		c.auth = src;
		sc.fail = false;
		oauth_source_invalidate(src);
		fetches = sc.fetches;
		cloudhttp_headers_free(&h);
		memset(&st, 0, sizeof(st));
		assert_int_equal(cloudcall_bearer_prepare(&c, CLOCK_NS_PER_S, &h, &e), -1);
		assert_int_equal(st.code, PROVIDER_CANCELLED);
		assert_null(cloudhttp_headers_get(&h, "Authorization"));
		assert_int_equal(sc.fetches, fetches);
		/* the Lease held: the same call goes */
		fence_open_until(fence, clock_now(clock_real()) + 60 * CLOCK_NS_PER_S);
		assert_int_equal(cloudcall_bearer_prepare(&c, CLOCK_NS_PER_S, &h, &e), 0);
		assert_non_null(cloudhttp_headers_get(&h, "Authorization"));
		ratelimit_free(rl);
		fence_free(fence);
	}
	cloudhttp_headers_free(&h);
	oauth_source_free(src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_buckets),
		cmocka_unit_test(test_wait_until),
		cmocka_unit_test(test_bearer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
