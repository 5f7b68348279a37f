/*
 * Tests for providers/cloudhttp: retries (5xx, 429, transport errors) with
 * full-jitter bounds and Retry-After on a fake clock that records waits
 * instead of sleeping, prepare on every attempt, classify verdicts, the
 * wire as sent (no Expect/Accept/Content-Type added, exact body, Host),
 * response headers, body cap, cancel, TLS, threads, and redaction in
 * verbose logs and errors. Against a loopback libmicrohttpd server.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#include "buf.h"
#include "log.h"
#include "providers/cloudhttp/cloudhttp.h"
#include "runtime/clock.h"
#include "test_cloud_server.h"

#define WALL0 1700000000LL

/* ---- a fake clock: sleep_until moves its time and records the call ---- */

struct fclock {
	struct clock base;            /* first */
	_Atomic int64_t now;
	atomic_int sleeps;
	int cancel_after_sleeps;      /* > 0: set *cancel at that sleep */
	atomic_bool *cancel;
	bool cannot_sleep;            /* behave like a virtual clock ahead of its events */
};

static int64_t f_now(const struct clock *c)
{
	return atomic_load(&((struct fclock *)c)->now);
}

static int64_t f_wall(const struct clock *c)
{
	return WALL0 + f_now(c) / CLOCK_NS_PER_S;
}

static int f_sleep(struct clock *c, int64_t t)
{
	struct fclock *f = (struct fclock *)c;
	int n;

	if (f->cannot_sleep)
		return -1;
	n = atomic_fetch_add(&f->sleeps, 1) + 1;
	if (t > atomic_load(&f->now))
		atomic_store(&f->now, t);
	if (f->cancel_after_sleeps > 0 && n >= f->cancel_after_sleeps)
		atomic_store(f->cancel, true);
	return 0;
}

static const struct clock_ops f_ops = {f_now, f_wall, f_sleep};

static void fclock_init(struct fclock *f)
{
	memset(f, 0, sizeof(*f));
	f->base.ops = &f_ops;
	atomic_init(&f->now, 0);
	atomic_init(&f->sleeps, 0);
}

/* ---- a logger that keeps every line ---- */

struct logcap {
	pthread_mutex_t mu;
	struct buf text;
};

static void cap_write(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct logcap *l = ctx;

	(void)level;
	(void)wall;
	pthread_mutex_lock(&l->mu);
	buf_printf(&l->text, "%s\n", msg);
	pthread_mutex_unlock(&l->mu);
}

/* ---- handlers ---- */

/* What the handlers answer, and when each request came (fake clock ns). */
struct script {
	struct fclock *clock;
	int statuses[16];             /* per request; 0 past the end: the last one */
	int n;
	char headers[2048];           /* added to every answer */
	char body[8192];
	int64_t arrived[CS_MAX_REQS];
	bool hold;
};

static void h_script(void *ud, size_t idx, const struct cs_req *rq, struct cs_resp *rs)
{
	struct script *s = ud;

	(void)rq;
	if (idx < CS_MAX_REQS && s->clock)
		s->arrived[idx] = f_now(&s->clock->base);
	rs->status = s->n ? s->statuses[idx < (size_t)s->n ? idx : (size_t)s->n - 1] : 200;
	snprintf(rs->headers, sizeof(rs->headers), "%s", s->headers);
	snprintf(rs->body, sizeof(rs->body), "%s", s->body[0] ? s->body : "ok");
	rs->hold = s->hold;
}

static struct cloudhttp *client(struct fclock *fc, uint64_t seed, int attempts)
{
	struct cloudhttp_opts o = {0};
	struct errbuf err = {{0}};
	struct cloudhttp *h;

	o.clock = fc ? &fc->base : NULL;
	o.seed = seed;
	o.max_attempts = attempts;
	h = cloudhttp_new(&o, &err);
	if (!h)
		fail_msg("cloudhttp_new: %s", err.msg);
	return h;
}

static struct cloudhttp_request get(const char *url)
{
	struct cloudhttp_request r;

	memset(&r, 0, sizeof(r));
	r.method = "GET";
	r.url = url;
	return r;
}

/* ---- retries ---- */

static void test_retry_5xx_full_jitter(void **state)
{
	struct cs_server s;
	struct script sc;
	struct fclock fc;
	int64_t max_w2 = 0, min_w1 = INT64_MAX, max_w1 = 0;
	uint64_t seed;

	(void)state;
	memset(&sc, 0, sizeof(sc));
	sc.clock = &fc;
	sc.statuses[0] = 503;
	sc.statuses[1] = 500;
	sc.statuses[2] = 200;
	sc.n = 3;
	assert_int_equal(cs_start(&s, h_script, &sc, NULL, NULL), 0);
	for (seed = 1; seed <= 24; seed++) {
		struct cloudhttp *h;
		struct cloudhttp_request rq = get(s.url);
		struct cloudhttp_response r;
		struct errbuf err = {{0}};
		int64_t w1, w2;

		fclock_init(&fc);
		h = client(&fc, seed, 3);
		assert_int_equal(cloudhttp_call(h, &rq, &r, &err), 0);
		assert_int_equal(r.status, 200);
		assert_int_equal(r.attempts, 3);
		assert_false(r.throttled);
		assert_string_equal(r.body, "ok");
		assert_int_equal(cs_count(&s), 3);
		w1 = sc.arrived[1] - sc.arrived[0];
		w2 = sc.arrived[2] - sc.arrived[1];
		/* full jitter: rand[0,1) * 1 s, then rand[0,1) * 2 s */
		assert_true(w1 >= 0 && w1 < 1000 * CLOCK_NS_PER_MS);
		assert_true(w2 >= 0 && w2 < 2000 * CLOCK_NS_PER_MS);
		if (w1 < min_w1)
			min_w1 = w1;
		if (w1 > max_w1)
			max_w1 = w1;
		if (w2 > max_w2)
			max_w2 = w2;
		cloudhttp_response_free(&r);
		cloudhttp_free(h);
		/* the next call starts the script afresh */
		pthread_mutex_lock(&s.mu);
		for (size_t i = 0; i < s.n_reqs; i++) {
			free(s.reqs[i].body);
			s.reqs[i].body = NULL;
		}
		s.n_reqs = 0;
		pthread_mutex_unlock(&s.mu);
	}
	/* jitter, not a constant: the waits spread over their range, and the
	 * second's range is twice the first's */
	assert_true(max_w1 - min_w1 > 300 * CLOCK_NS_PER_MS);
	assert_true(max_w2 > 1000 * CLOCK_NS_PER_MS);
	cs_stop(&s);
}

static void test_same_seed_same_waits(void **state)
{
	struct cs_server s;
	struct script sc;
	struct fclock fc;
	int64_t first[2] = {0}, w[2];
	int round;

	(void)state;
	memset(&sc, 0, sizeof(sc));
	sc.clock = &fc;
	sc.statuses[0] = 502;
	sc.n = 1;
	assert_int_equal(cs_start(&s, h_script, &sc, NULL, NULL), 0);
	for (round = 0; round < 2; round++) {
		struct cloudhttp *h;
		struct cloudhttp_request rq = get(s.url);
		struct cloudhttp_response r;
		struct errbuf err = {{0}};

		fclock_init(&fc);
		h = client(&fc, 42, 3);
		assert_int_equal(cloudhttp_call(h, &rq, &r, &err), 0);
		/* retries ran out on a 5xx: the last answer is returned */
		assert_int_equal(r.status, 502);
		assert_int_equal(r.attempts, 3);
		w[0] = sc.arrived[3 * round + 1] - sc.arrived[3 * round];
		w[1] = sc.arrived[3 * round + 2] - sc.arrived[3 * round + 1];
		if (round == 0) {
			first[0] = w[0];
			first[1] = w[1];
		} else {
			assert_true(first[0] == w[0] && first[1] == w[1]);
		}
		cloudhttp_response_free(&r);
		cloudhttp_free(h);
	}
	assert_int_equal(cs_count(&s), 6);
	cs_stop(&s);
}

static void test_429_throttled(void **state)
{
	struct cs_server s;
	struct script sc;
	struct fclock fc;
	struct cloudhttp *h;
	struct cloudhttp_request rq;
	struct cloudhttp_response r;
	struct errbuf err = {{0}};

	(void)state;
	memset(&sc, 0, sizeof(sc));
	sc.clock = &fc;
	sc.statuses[0] = 429;
	sc.n = 1;
	fclock_init(&fc);
	assert_int_equal(cs_start(&s, h_script, &sc, NULL, NULL), 0);
	rq = get(s.url);
	h = client(&fc, 7, 2);
	assert_int_equal(cloudhttp_call(h, &rq, &r, &err), 0);
	assert_int_equal(r.status, 429);
	assert_int_equal(r.attempts, 2);
	assert_true(r.throttled);
	cloudhttp_response_free(&r);
	/* throttled, then answered: not throttled any more */
	sc.statuses[2] = 429;
	sc.statuses[3] = 200;
	sc.n = 4;
	assert_int_equal(cloudhttp_call(h, &rq, &r, &err), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.attempts, 2);
	assert_false(r.throttled);
	cloudhttp_response_free(&r);
	/* a 4xx other than 429 is final; cloudhttp_send never retries */
	sc.statuses[4] = 403;
	sc.statuses[5] = 500;
	sc.n = 6;
	assert_int_equal(cloudhttp_call(h, &rq, &r, &err), 0);
	assert_int_equal(r.status, 403);
	assert_int_equal(r.attempts, 1);
	cloudhttp_response_free(&r);
	assert_int_equal(cloudhttp_send(h, &rq, &r, &err), 0);
	assert_int_equal(r.status, 500);
	assert_int_equal(r.attempts, 1);
	cloudhttp_response_free(&r);
	assert_int_equal(cs_count(&s), 6);
	cloudhttp_free(h);
	cs_stop(&s);
}

static void test_retry_after_honoured(void **state)
{
	struct cs_server s;
	struct script sc;
	struct fclock fc;
	struct cloudhttp *h;
	struct cloudhttp_request rq;
	struct cloudhttp_response r;
	struct errbuf err = {{0}};
	struct cloudhttp_opts o = {0};
	char date[64];
	time_t t;
	struct tm tm;

	(void)state;
	memset(&sc, 0, sizeof(sc));
	sc.clock = &fc;
	sc.statuses[0] = 503;
	sc.statuses[1] = 200;
	sc.n = 2;
	fclock_init(&fc);
	assert_int_equal(cs_start(&s, h_script, &sc, NULL, NULL), 0);
	rq = get(s.url);
	h = client(&fc, 3, 3);
	/* seconds: at least 3 s, though the jitter alone is below 1 s */
	snprintf(sc.headers, sizeof(sc.headers), "Retry-After: 3\n");
	assert_int_equal(cloudhttp_call(h, &rq, &r, &err), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(sc.arrived[1] - sc.arrived[0], 3000 * CLOCK_NS_PER_MS);
	cloudhttp_response_free(&r);
	/* an HTTP-date 7 s after the fake clock's wall time */
	t = (time_t)(f_wall(&fc.base) + 7);
	gmtime_r(&t, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	snprintf(sc.headers, sizeof(sc.headers), "Retry-After: %s\n", date);
	sc.statuses[2] = 503;
	sc.statuses[3] = 200;
	sc.n = 4;
	assert_int_equal(cloudhttp_call(h, &rq, &r, &err), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(sc.arrived[3] - sc.arrived[2], 7000 * CLOCK_NS_PER_MS);
	cloudhttp_response_free(&r);
	/* the answer carries the delay for the caller too */
	snprintf(sc.headers, sizeof(sc.headers), "Retry-After: 6\n");
	sc.statuses[4] = 503;
	sc.n = 5;
	assert_int_equal(cloudhttp_send(h, &rq, &r, &err), 0);
	assert_int_equal(r.retry_after_ms, 6000);
	assert_int_equal(r.attempts, 1);
	cloudhttp_response_free(&r);
	cloudhttp_free(h);
	/* capped at max_backoff */
	o.clock = &fc.base;
	o.seed = 3;
	o.max_backoff_ms = 4000;
	o.max_attempts = 2;
	h = cloudhttp_new(&o, &err);
	assert_non_null(h);
	snprintf(sc.headers, sizeof(sc.headers), "Retry-After: 100000\n");
	sc.statuses[5] = 503;
	sc.statuses[6] = 200;
	sc.n = 7;
	assert_int_equal(cloudhttp_call(h, &rq, &r, &err), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(sc.arrived[6] - sc.arrived[5], 4000 * CLOCK_NS_PER_MS);
	cloudhttp_response_free(&r);
	/* milliseconds (retry-after-ms) win over Retry-After */
	snprintf(sc.headers, sizeof(sc.headers), "Retry-After: 3\nretry-after-ms: 2500\n");
	sc.statuses[7] = 503;
	sc.statuses[8] = 200;
	sc.n = 9;
	assert_int_equal(cloudhttp_call(h, &rq, &r, &err), 0);
	assert_int_equal(sc.arrived[8] - sc.arrived[7], 2500 * CLOCK_NS_PER_MS);
	cloudhttp_response_free(&r);
	cloudhttp_free(h);
	cs_stop(&s);
}

/* ---- prepare and classify ---- */

struct signer {
	int calls;
	bool fail_on_second;
};

static int prep(void *ctx, const struct cloudhttp_request *req, struct cloudhttp_headers *extra,
		struct errbuf *err)
{
	struct signer *sg = ctx;
	char v[32];

	(void)req;
	sg->calls++;
	if (sg->fail_on_second && sg->calls == 2)
		return errbuf_set(err, "credentials expired");
	/* extra is empty each time: the previous attempt's header is gone */
	assert_null(cloudhttp_headers_get(extra, "X-Attempt"));
	snprintf(v, sizeof(v), "%d", sg->calls);
	assert_int_equal(cloudhttp_headers_add(extra, "X-Attempt", v), 0);
	assert_int_equal(cloudhttp_headers_add(extra, "Authorization", "Sig attempt-secret"), 0);
	return 0;
}

static void test_prepare_every_attempt(void **state)
{
	struct cs_server s;
	struct script sc;
	struct fclock fc;
	struct cloudhttp *h;
	struct cloudhttp_request rq;
	struct cloudhttp_response r;
	struct errbuf err = {{0}};
	struct signer sg = {0};
	int i;

	(void)state;
	memset(&sc, 0, sizeof(sc));
	sc.clock = &fc;
	sc.statuses[0] = 500;
	sc.statuses[1] = 500;
	sc.statuses[2] = 200;
	sc.n = 3;
	fclock_init(&fc);
	assert_int_equal(cs_start(&s, h_script, &sc, NULL, NULL), 0);
	rq = get(s.url);
	rq.prepare = prep;
	rq.ctx = &sg;
	h = client(&fc, 5, 3);
	assert_int_equal(cloudhttp_call(h, &rq, &r, &err), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(sg.calls, 3);
	assert_int_equal(cs_count(&s), 3);
	for (i = 0; i < 3; i++) {
		char want[8];

		snprintf(want, sizeof(want), "%d", i + 1);
		assert_string_equal(cs_header(&s.reqs[i], "X-Attempt"), want);
		assert_int_equal(cs_header_count(&s.reqs[i], "X-Attempt"), 1);
		assert_int_equal(cs_header_count(&s.reqs[i], "Authorization"), 1);
	}
	cloudhttp_response_free(&r);
	/* a failing prepare aborts before anything is sent */
	sg.calls = 0;
	sg.fail_on_second = true;
	sc.statuses[3] = 500;
	sc.n = 4;
	assert_int_equal(cloudhttp_call(h, &rq, &r, &err), -1);
	assert_non_null(strstr(err.msg, "credentials expired"));
	assert_non_null(strstr(err.msg, "GET http://127.0.0.1:"));
	assert_int_equal(r.status, 0);
	assert_int_equal(r.attempts, 1);
	assert_int_equal(cs_count(&s), 4);
	cloudhttp_response_free(&r);
	cloudhttp_free(h);
	cs_stop(&s);
}

/* AWS's way: a 400 whose body says Throttling is throttling; a 503 whose
 * body says it is final is final. */
static enum cloudhttp_verdict classify_aws(void *ctx, const struct cloudhttp_response *r)
{
	int *calls = ctx;

	(*calls)++;
	if (r->status == 400 && strstr(r->body, "<Code>Throttling</Code>"))
		return CLOUDHTTP_RETRY_THROTTLED;
	if (r->status == 400 && strstr(r->body, "<Code>ResourceContention</Code>"))
		return CLOUDHTTP_RETRY;
	if (strstr(r->body, "final"))
		return CLOUDHTTP_DONE;
	return cloudhttp_classify_default(NULL, r);
}

static void test_classify_verdicts(void **state)
{
	struct cs_server s;
	struct script sc;
	struct fclock fc;
	struct cloudhttp *h;
	struct cloudhttp_request rq;
	struct cloudhttp_response r;
	struct errbuf err = {{0}};
	int calls = 0;

	(void)state;
	memset(&sc, 0, sizeof(sc));
	sc.clock = &fc;
	sc.statuses[0] = 400;
	sc.n = 1;
	snprintf(sc.body, sizeof(sc.body),
		 "<ErrorResponse><Error><Code>Throttling</Code></Error></ErrorResponse>");
	fclock_init(&fc);
	assert_int_equal(cs_start(&s, h_script, &sc, NULL, NULL), 0);
	rq = get(s.url);
	rq.classify = classify_aws;
	rq.ctx = &calls;
	h = client(&fc, 11, 3);
	assert_int_equal(cloudhttp_call(h, &rq, &r, &err), 0);
	assert_int_equal(r.status, 400);
	assert_int_equal(r.attempts, 3);
	assert_true(r.throttled);
	assert_int_equal(calls, 3);
	cloudhttp_response_free(&r);
	/* RETRY on a 400 */
	snprintf(sc.body, sizeof(sc.body),
		 "<Response><Errors><Error><Code>ResourceContention</Code></Error></Errors></Response>");
	assert_int_equal(cloudhttp_call(h, &rq, &r, &err), 0);
	assert_int_equal(r.attempts, 3);
	assert_false(r.throttled);
	cloudhttp_response_free(&r);
	/* DONE on a 503 */
	sc.statuses[0] = 503;
	snprintf(sc.body, sizeof(sc.body), "final answer");
	assert_int_equal(cloudhttp_call(h, &rq, &r, &err), 0);
	assert_int_equal(r.status, 503);
	assert_int_equal(r.attempts, 1);
	cloudhttp_response_free(&r);
	assert_int_equal(cs_count(&s), 7);
	cloudhttp_free(h);
	cs_stop(&s);
}

static void test_clock_that_cannot_sleep(void **state)
{
	struct cs_server s;
	struct script sc;
	struct fclock fc;
	struct cloudhttp *h;
	struct cloudhttp_request rq;
	struct cloudhttp_response r;
	struct errbuf err = {{0}};

	(void)state;
	memset(&sc, 0, sizeof(sc));
	sc.statuses[0] = 503;
	sc.n = 1;
	fclock_init(&fc);
	fc.cannot_sleep = true;
	assert_int_equal(cs_start(&s, h_script, &sc, NULL, NULL), 0);
	rq = get(s.url);
	h = client(&fc, 1, 3);
	assert_int_equal(cloudhttp_call(h, &rq, &r, &err), 0);
	assert_int_equal(r.status, 503);
	assert_int_equal(r.attempts, 1);
	assert_int_equal(cs_count(&s), 1);
	cloudhttp_response_free(&r);
	cloudhttp_free(h);
	cs_stop(&s);
}

/* ---- the wire ---- */

static void test_wire_headers_and_body(void **state)
{
	struct cs_server s;
	struct script sc;
	struct cloudhttp *h;
	struct cloudhttp_request rq;
	struct cloudhttp_response r;
	struct cloudhttp_headers hd = CLOUDHTTP_HEADERS_INIT;
	struct errbuf err = {{0}};
	struct cloudhttp_opts o = {0};
	struct buf url = BUF_INIT;
	const struct cs_req *q;
	char *big;
	size_t big_len = 3u << 20, i;
	char host[64];

	(void)state;
	memset(&sc, 0, sizeof(sc));
	snprintf(sc.headers, sizeof(sc.headers),
		 "X-Amzn-RequestId: req-123\nx-lower-case: v\nContent-Type: text/xml\n");
	snprintf(sc.body, sizeof(sc.body), "<ok/>");
	assert_int_equal(cs_start(&s, h_script, &sc, NULL, NULL), 0);
	o.user_agent = "luascale-test/1";
	h = cloudhttp_new(&o, &err);
	assert_non_null(h);
	big = malloc(big_len);
	assert_non_null(big);
	for (i = 0; i < big_len; i++)
		big[i] = (char)('a' + i % 26);
	big[17] = '\0'; /* binary-safe: sent by length, not as a C string */
	buf_printf(&url, "%s/a/./b/../c?Action=Describe&Version=2016-11-15", s.url);
	memset(&rq, 0, sizeof(rq));
	rq.method = "POST";
	rq.url = url.data;
	rq.body = big;
	rq.body_len = big_len;
	assert_int_equal(cloudhttp_send(h, &rq, &r, &err), 0);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "<ok/>");
	assert_int_equal(r.body_len, 5);
	/* response headers, names as the server spelt them */
	assert_string_equal(cloudhttp_headers_get(&r.headers, "x-amzn-requestid"), "req-123");
	{
		bool seen = false;

		for (i = 0; i < r.headers.n; i++)
			if (strcmp(r.headers.v[i].name, "X-Amzn-RequestId") == 0)
				seen = true;
		assert_true(seen);
	}
	assert_string_equal(cloudhttp_headers_get(&r.headers, "Content-Type"), "text/xml");
	assert_int_equal(r.retry_after_ms, -1);
	cloudhttp_response_free(&r);
	q = &s.reqs[0];
	assert_string_equal(q->method, "POST");
	/* the path is sent as given (a signer signs it so) */
	assert_string_equal(q->target, "/a/./b/../c?Action=Describe&Version=2016-11-15");
	assert_int_equal(q->body_len, big_len);
	assert_memory_equal(q->body, big, big_len);
	/* nothing libcurl would add behind a signature's back */
	assert_null(cs_header(q, "Expect"));
	assert_null(cs_header(q, "Accept"));
	assert_null(cs_header(q, "Content-Type"));
	assert_null(cs_header(q, "Transfer-Encoding"));
	assert_null(cs_header(q, "Accept-Encoding"));
	snprintf(host, sizeof(host), "127.0.0.1:%d", s.port);
	assert_string_equal(cs_header(q, "Host"), host);
	assert_int_equal(cs_header_count(q, "Host"), 1);
	assert_string_equal(cs_header(q, "User-Agent"), "luascale-test/1");
	{
		char cl[32];

		snprintf(cl, sizeof(cl), "%zu", big_len);
		assert_string_equal(cs_header(q, "Content-Length"), cl);
	}
	/* given by the caller: sent, once, in order */
	assert_int_equal(cloudhttp_headers_add(&hd, "Content-Type",
					       "application/x-www-form-urlencoded; charset=utf-8"), 0);
	assert_int_equal(cloudhttp_headers_add(&hd, "Accept", "text/xml"), 0);
	assert_int_equal(cloudhttp_headers_add(&hd, "X-Empty", ""), 0);
	assert_int_equal(cloudhttp_headers_add(&hd, "X-Amz-Date", "20150830T123600Z"), 0);
	rq.headers = &hd;
	rq.body = "Action=DescribeInstances&Version=2016-11-15";
	rq.body_len = strlen(rq.body);
	assert_int_equal(cloudhttp_send(h, &rq, &r, &err), 0);
	cloudhttp_response_free(&r);
	q = &s.reqs[1];
	assert_string_equal(cs_header(q, "Content-Type"),
			    "application/x-www-form-urlencoded; charset=utf-8");
	assert_string_equal(cs_header(q, "Accept"), "text/xml");
	assert_int_equal(cs_header_count(q, "Accept"), 1);
	assert_non_null(cs_header(q, "X-Empty"));
	assert_string_equal(cs_header(q, "X-Empty"), "");
	assert_string_equal(cs_header(q, "X-Amz-Date"), "20150830T123600Z");
	assert_string_equal(q->body, "Action=DescribeInstances&Version=2016-11-15");
	/* PUT without a body sends an empty one; DELETE and HEAD none; GET sends none */
	rq.headers = NULL;
	rq.body = NULL;
	rq.body_len = 0;
	rq.method = "PUT";
	assert_int_equal(cloudhttp_send(h, &rq, &r, &err), 0);
	cloudhttp_response_free(&r);
	assert_string_equal(s.reqs[2].method, "PUT");
	assert_string_equal(cs_header(&s.reqs[2], "Content-Length"), "0");
	assert_null(cs_header(&s.reqs[2], "Content-Type"));
	rq.method = "DELETE";
	assert_int_equal(cloudhttp_send(h, &rq, &r, &err), 0);
	cloudhttp_response_free(&r);
	assert_string_equal(s.reqs[3].method, "DELETE");
	assert_int_equal(s.reqs[3].body_len, 0);
	rq.method = "HEAD";
	assert_int_equal(cloudhttp_send(h, &rq, &r, &err), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body_len, 0);
	cloudhttp_response_free(&r);
	rq.method = "GET";
	assert_int_equal(cloudhttp_send(h, &rq, &r, &err), 0);
	cloudhttp_response_free(&r);
	assert_string_equal(s.reqs[5].method, "GET");
	assert_null(cs_header(&s.reqs[5], "Content-Length"));
	assert_int_equal(cs_count(&s), 6);
	cloudhttp_headers_free(&hd);
	buf_free(&url);
	free(big);
	cloudhttp_free(h);
	cs_stop(&s);
}

static void test_no_redirect_followed(void **state)
{
	struct cs_server s;
	struct script sc;
	struct cloudhttp *h;
	struct cloudhttp_request rq;
	struct cloudhttp_response r;
	struct errbuf err = {{0}};
	char hdr[256];

	(void)state;
	memset(&sc, 0, sizeof(sc));
	sc.statuses[0] = 307;
	sc.n = 1;
	assert_int_equal(cs_start(&s, h_script, &sc, NULL, NULL), 0);
	snprintf(hdr, sizeof(hdr), "Location: %s/elsewhere\n", s.url);
	snprintf(sc.headers, sizeof(sc.headers), "%s", hdr);
	h = client(NULL, 1, 3);
	rq = get(s.url);
	assert_int_equal(cloudhttp_call(h, &rq, &r, &err), 0);
	assert_int_equal(r.status, 307);
	assert_int_equal(cs_count(&s), 1);
	cloudhttp_response_free(&r);
	/* only http and https */
	rq.url = "file:///etc/passwd";
	assert_int_equal(cloudhttp_send(h, &rq, &r, &err), -1);
	assert_non_null(strstr(err.msg, "only http and https"));
	assert_non_null(strstr(err.msg, "GET file:///etc/passwd: "));
	rq.url = "gopher://127.0.0.1/";
	assert_int_equal(cloudhttp_call(h, &rq, &r, &err), -1);
	assert_int_equal(r.attempts, 0);
	cloudhttp_free(h);
	cs_stop(&s);
}

static void test_max_body(void **state)
{
	struct cs_server s;
	struct script sc;
	struct cloudhttp *h;
	struct cloudhttp_request rq;
	struct cloudhttp_response r;
	struct errbuf err = {{0}};
	struct cloudhttp_opts o = {0};
	struct fclock fc;

	(void)state;
	memset(&sc, 0, sizeof(sc));
	memset(sc.body, 'x', 5000);
	assert_int_equal(cs_start(&s, h_script, &sc, NULL, NULL), 0);
	fclock_init(&fc);
	o.clock = &fc.base;
	o.max_body = 4096;
	h = cloudhttp_new(&o, &err);
	assert_non_null(h);
	rq = get(s.url);
	assert_int_equal(cloudhttp_call(h, &rq, &r, &err), -1);
	assert_non_null(strstr(err.msg, "larger than 4096 bytes"));
	assert_non_null(strstr(err.msg, s.url));
	assert_int_equal(r.status, 0);
	assert_null(r.body);
	/* not retried */
	assert_int_equal(cs_count(&s), 1);
	cloudhttp_response_free(&r);
	/* exactly the cap is fine */
	sc.body[4096] = '\0';
	assert_int_equal(cloudhttp_call(h, &rq, &r, &err), 0);
	assert_int_equal(r.body_len, 4096);
	cloudhttp_response_free(&r);
	cloudhttp_free(h);
	cs_stop(&s);
}

static void test_connection_refused(void **state)
{
	struct cs_server s;
	struct fclock fc;
	struct cloudhttp *h;
	struct cloudhttp_request rq;
	struct cloudhttp_response r;
	struct errbuf err = {{0}};
	char url[128], shown[128];

	(void)state;
	/* a port nobody listens on any more */
	assert_int_equal(cs_start(&s, NULL, NULL, NULL, NULL), 0);
	snprintf(url, sizeof(url), "%s/?Action=X&X-Amz-Signature=abcdef0123456789", s.url);
	snprintf(shown, sizeof(shown), "%s/?Action=X&X-Amz-Signature=REDACTED", s.url);
	cs_stop(&s);
	fclock_init(&fc);
	h = client(&fc, 9, 3);
	rq = get(url);
	rq.method = "POST";
	assert_int_equal(cloudhttp_call(h, &rq, &r, &err), -1);
	assert_non_null(strstr(err.msg, "POST "));
	assert_non_null(strstr(err.msg, shown));
	assert_null(strstr(err.msg, "abcdef0123456789"));
	assert_non_null(strstr(err.msg, "after 3 attempts"));
	assert_non_null(strcasestr(err.msg, "refused"));
	assert_int_equal(r.attempts, 3);
	assert_int_equal(r.status, 0);
	/* connection errors are retried after waits on the clock */
	assert_true(atomic_load(&fc.sleeps) >= 1);
	cloudhttp_response_free(&r);
	/* one attempt only: no count */
	assert_int_equal(cloudhttp_send(h, &rq, &r, &err), -1);
	assert_null(strstr(err.msg, "attempts"));
	assert_non_null(strstr(err.msg, shown));
	cloudhttp_response_free(&r);
	cloudhttp_free(h);
}

/* ---- cancel ---- */

static void test_cancel_ends_retry_wait(void **state)
{
	struct cs_server s;
	struct script sc;
	struct fclock fc;
	struct cloudhttp *h;
	struct cloudhttp_request rq;
	struct cloudhttp_response r;
	struct errbuf err = {{0}};
	struct cloudhttp_opts o = {0};
	atomic_bool cancel;

	(void)state;
	atomic_init(&cancel, false);
	memset(&sc, 0, sizeof(sc));
	sc.clock = &fc;
	sc.statuses[0] = 503;
	sc.n = 1;
	snprintf(sc.headers, sizeof(sc.headers), "Retry-After: 15\n");
	assert_int_equal(cs_start(&s, h_script, &sc, NULL, NULL), 0);
	fclock_init(&fc);
	fc.cancel = &cancel;
	fc.cancel_after_sleeps = 2;
	o.clock = &fc.base;
	o.cancel = &cancel;
	o.seed = 1;
	h = cloudhttp_new(&o, &err);
	assert_non_null(h);
	rq = get(s.url);
	assert_int_equal(cloudhttp_call(h, &rq, &r, &err), -1);
	assert_non_null(strstr(err.msg, "stopping"));
	assert_int_equal(cs_count(&s), 1);
	assert_int_equal(r.status, 0);
	/* the wait ended soon after the flag was set, not after 15 s */
	assert_true(f_now(&fc.base) <= 1000 * CLOCK_NS_PER_MS);
	assert_int_equal(atomic_load(&fc.sleeps), 2);
	cloudhttp_response_free(&r);
	/* once cancelled, nothing more is sent */
	assert_int_equal(cloudhttp_send(h, &rq, &r, &err), -1);
	assert_non_null(strstr(err.msg, "not sent"));
	assert_int_equal(cs_count(&s), 1);
	cloudhttp_response_free(&r);
	cloudhttp_free(h);
	cs_stop(&s);
}

struct canceller {
	struct cs_server *s;
	atomic_bool *cancel;
};

static void *cancel_main(void *arg)
{
	struct canceller *c = arg;

	cs_wait_holding(c->s, 1);
	atomic_store(c->cancel, true);
	return NULL;
}

static void test_cancel_ends_transfer(void **state)
{
	struct cs_server s;
	struct script sc;
	struct cloudhttp *h;
	struct cloudhttp_request rq;
	struct cloudhttp_response r;
	struct errbuf err = {{0}};
	struct cloudhttp_opts o = {0};
	atomic_bool cancel;
	struct canceller cn;
	pthread_t th;

	(void)state;
	atomic_init(&cancel, false);
	memset(&sc, 0, sizeof(sc));
	sc.hold = true;
	assert_int_equal(cs_start(&s, h_script, &sc, NULL, NULL), 0);
	o.cancel = &cancel;
	o.request_timeout_ms = 20000; /* the cancel ends it, not this timeout */
	h = cloudhttp_new(&o, &err);
	assert_non_null(h);
	cn.s = &s;
	cn.cancel = &cancel;
	assert_int_equal(pthread_create(&th, NULL, cancel_main, &cn), 0);
	rq = get(s.url);
	assert_int_equal(cloudhttp_call(h, &rq, &r, &err), -1);
	/* ended in the transfer (not by its timeout, then in a retry wait) */
	assert_non_null(strstr(err.msg, ": abandoned: luascale is stopping"));
	assert_int_equal(r.attempts, 1);
	pthread_join(th, NULL);
	cloudhttp_response_free(&r);
	cs_release(&s);
	cloudhttp_free(h);
	cs_stop(&s);
}

/* ---- secrets ---- */

static void test_verbose_logs_redacted(void **state)
{
	struct cs_server s;
	struct script sc;
	struct fclock fc;
	struct cloudhttp *h;
	struct cloudhttp_request rq;
	struct cloudhttp_response r;
	struct cloudhttp_headers hd = CLOUDHTTP_HEADERS_INIT;
	struct errbuf err = {{0}};
	struct cloudhttp_opts o = {0};
	struct logcap lc = {PTHREAD_MUTEX_INITIALIZER, BUF_INIT};
	struct logger lg = {cap_write, &lc, LOG_DEBUG, NULL};
	struct buf url = BUF_INIT;
	struct signer sg = {0};
	static const char *const secrets[] = {
		"wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY", "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
		"FwoGZXIvYXdzEXAMPLESESSIONTOKEN", "IMDSTOKENVALUE123", "cookiesecret77",
		"attempt-secret", "AKIDEXAMPLECREDENTIAL", NULL,
	};
	int i;

	(void)state;
	memset(&sc, 0, sizeof(sc));
	sc.clock = &fc;
	sc.statuses[0] = 500;
	sc.statuses[1] = 200;
	sc.n = 2;
	snprintf(sc.headers, sizeof(sc.headers),
		 "Set-Cookie: session=cookiesecret77\nX-Amzn-RequestId: visible-id\n");
	assert_int_equal(cs_start(&s, h_script, &sc, NULL, NULL), 0);
	fclock_init(&fc);
	o.clock = &fc.base;
	o.log = &lg;
	o.verbose = true;
	o.seed = 2;
	h = cloudhttp_new(&o, &err);
	assert_non_null(h);
	buf_printf(&url,
		   "%s/?Action=DescribeInstances&X-Amz-Credential=AKIDEXAMPLECREDENTIAL%%2F20150830"
		   "&X-Amz-Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
		   "&x-amz-security-token=FwoGZXIvYXdzEXAMPLESESSIONTOKEN",
		   s.url);
	assert_int_equal(cloudhttp_headers_add(&hd, "Authorization",
					       "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLECREDENTIAL/20150830/us-east-1/ec2/aws4_request, "
					       "SignedHeaders=host;x-amz-date, "
					       "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"), 0);
	assert_int_equal(cloudhttp_headers_add(&hd, "X-Amz-Security-Token",
					       "FwoGZXIvYXdzEXAMPLESESSIONTOKEN"), 0);
	assert_int_equal(cloudhttp_headers_add(&hd, "x-aws-ec2-metadata-token", "IMDSTOKENVALUE123"), 0);
	assert_int_equal(cloudhttp_headers_add(&hd, "X-Amz-Date", "20150830T123600Z"), 0);
	rq = get(url.data);
	rq.method = "POST";
	rq.headers = &hd;
	rq.body = "SecretKey=wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY";
	rq.body_len = strlen(rq.body);
	rq.prepare = prep; /* adds "Authorization: Sig attempt-secret" */
	rq.ctx = &sg;
	assert_int_equal(cloudhttp_call(h, &rq, &r, &err), 0);
	assert_int_equal(r.status, 200);
	cloudhttp_response_free(&r);
	assert_non_null(lc.text.data);
	/* the logs say what happened... */
	assert_non_null(strstr(lc.text.data, "Action=DescribeInstances"));
	assert_non_null(strstr(lc.text.data, "X-Amz-Date: 20150830T123600Z"));
	assert_non_null(strstr(lc.text.data, "visible-id"));
	assert_non_null(strstr(lc.text.data, "Authorization: <redacted>"));
	assert_non_null(strstr(lc.text.data, "HTTP/1.1 500"));
	assert_non_null(strstr(lc.text.data, "retrying"));
	/* ...and never a secret */
	for (i = 0; secrets[i]; i++)
		if (strstr(lc.text.data, secrets[i]))
			fail_msg("the log holds '%s':\n%s", secrets[i], lc.text.data);
	/* nor does an error message */
	cs_stop(&s);
	assert_int_equal(cloudhttp_send(h, &rq, &r, &err), -1);
	for (i = 0; secrets[i]; i++)
		if (strstr(err.msg, secrets[i]))
			fail_msg("the error holds '%s': %s", secrets[i], err.msg);
	assert_non_null(strstr(err.msg, "X-Amz-Signature=REDACTED"));
	cloudhttp_response_free(&r);
	for (i = 0; secrets[i]; i++)
		if (strstr(lc.text.data, secrets[i]))
			fail_msg("the log holds '%s'", secrets[i]);
	cloudhttp_headers_free(&hd);
	buf_free(&url);
	buf_free(&lc.text);
	cloudhttp_free(h);
}

static void test_redact_url(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{"https://ec2.us-east-1.amazonaws.com/", "https://ec2.us-east-1.amazonaws.com/"},
		{"https://user:pass@host.example/p?q=1", "https://REDACTED@host.example/p?q=1"},
		{"https://h/?Action=Go&X-Amz-Signature=abc&x-amz-credential=AK%2F1&Version=1",
		 "https://h/?Action=Go&X-Amz-Signature=REDACTED&x-amz-credential=REDACTED&Version=1"},
		{"https://h/?X-Amz-Security-Token=t&Signature=s&sig=z&token=a&ACCESS_TOKEN=b",
		 "https://h/?X-Amz-Security-Token=REDACTED&Signature=REDACTED&sig=REDACTED&token=REDACTED&ACCESS_TOKEN=REDACTED"},
		{"https://login/t?client_secret=s&assertion=a&client_assertion=c&code=x&grant_type=y",
		 "https://login/t?client_secret=REDACTED&assertion=REDACTED&client_assertion=REDACTED&code=REDACTED&grant_type=y"},
		/* an encoded key is still the key; keys that only contain one are not */
		{"https://h/?X%2DAmz%2DSignature=abc&tokens=keep&mytoken=keep",
		 "https://h/?X%2DAmz%2DSignature=REDACTED&tokens=keep&mytoken=keep"},
		{"https://h/cb#access_token=abc&state=1", "https://h/cb#access_token=REDACTED&state=1"},
		{"https://h/?token", "https://h/?token"},
		{"https://h/?token=", "https://h/?token=REDACTED"},
		{"/?Action=X&Signature=s HTTP/1.1", "/?Action=X&Signature=REDACTED HTTP/1.1"},
		{"POST /?sig=abc HTTP/1.1", "POST /?sig=REDACTED HTTP/1.1"},
		/* "://" after a query is no scheme: the query is still redacted */
		{"h?sig=9999://x/?a=1", "h?sig=REDACTED"},
		{"x?token=t&u=a://b@c", "x?token=REDACTED&u=a://b@c"},
		{"", ""},
	};
	char out[256], small[12];
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		n = cloudhttp_redact_url(cases[i].in, out, sizeof(out));
		if (strcmp(out, cases[i].out) != 0)
			fail_msg("redact(%s) = %s, want %s", cases[i].in, out, cases[i].out);
		assert_int_equal(n, strlen(cases[i].out));
	}
	/* truncation: snprintf-like */
	n = cloudhttp_redact_url("https://h/?sig=abcdef", small, sizeof(small));
	assert_int_equal(n, strlen("https://h/?sig=REDACTED"));
	assert_string_equal(small, "https://h/?");
	/* the secret never leaks into a truncated copy either */
	for (i = 1; i < 40; i++) {
		char t[40];

		cloudhttp_redact_url("https://h/?sig=SECRETVALUE", t, i);
		assert_null(strstr(t, "SECRET"));
	}
}

static void test_header_is_secret(void **state)
{
	static const char *const yes[] = {
		"Authorization", "authorization", "Proxy-Authorization", "Cookie", "set-cookie",
		"X-Amz-Security-Token", "x-aws-ec2-metadata-token", "X-Goog-IAM-Authorization-Token",
		"X-Goog-Api-Key", "x-ms-authorization-auxiliary", "X-Api-Key", "api-key",
		"X-Auth-Token", NULL,
	};
	static const char *const no[] = {
		"Metadata-Flavor", "Metadata", "x-aws-ec2-metadata-token-ttl-seconds", "X-Amz-Date",
		"Content-Type", "Content-Length", "Host", "User-Agent", "X-Amz-Content-Sha256",
		"X-Amzn-RequestId", "Retry-After", NULL,
	};
	int i;

	(void)state;
	for (i = 0; yes[i]; i++)
		if (!cloudhttp_header_is_secret(yes[i]))
			fail_msg("%s should be secret", yes[i]);
	for (i = 0; no[i]; i++)
		if (cloudhttp_header_is_secret(no[i]))
			fail_msg("%s should not be secret", no[i]);
	assert_false(cloudhttp_header_is_secret(NULL));
}

/* ---- parsers and helpers ---- */

static void test_parse_retry_after(void **state)
{
	/* Sun, 06 Nov 1994 08:49:37 GMT */
	const int64_t t = 784111777;
	int64_t ms = -5;

	(void)state;
	assert_int_equal(cloudhttp_parse_retry_after("120", 0, &ms), 0);
	assert_int_equal(ms, 120000);
	assert_int_equal(cloudhttp_parse_retry_after(" 0 ", 0, &ms), 0);
	assert_int_equal(ms, 0);
	assert_int_equal(cloudhttp_parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", t - 30, &ms), 0);
	assert_int_equal(ms, 30000);
	assert_int_equal(cloudhttp_parse_retry_after("Sunday, 06-Nov-94 08:49:37 GMT", t - 2, &ms), 0);
	assert_int_equal(ms, 2000);
	assert_int_equal(cloudhttp_parse_retry_after("Sun Nov  6 08:49:37 1994", t - 1, &ms), 0);
	assert_int_equal(ms, 1000);
	/* RFC 1123's one-digit day (AWS Health's event times may come so) */
	assert_int_equal(cloudhttp_parse_retry_after("Sun, 6 Nov 1994 08:49:37 GMT", t - 3, &ms), 0);
	assert_int_equal(ms, 3000);
	{
		int64_t when = 0;

		assert_int_equal(cloudhttp_parse_http_date("Sun, 6 Nov 1994 08:49:37 GMT", &when), 0);
		assert_int_equal(when, t);
		assert_int_equal(cloudhttp_parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT", &when), 0);
		assert_int_equal(when, t);
		assert_int_equal(cloudhttp_parse_http_date("Sun, 0 Nov 1994 08:49:37 GMT", &when), -1);
		assert_int_equal(cloudhttp_parse_http_date("Sun, 6Nov 1994 08:49:37 GMT", &when), -1);
		assert_int_equal(cloudhttp_parse_http_date("Sun,  6 Nov 1994 08:49:37 GMT", &when), -1);
		assert_int_equal(cloudhttp_parse_http_date("Sun, 32 Nov 1994 08:49:37 GMT", &when), -1);
	}
	/* in the past: now */
	assert_int_equal(cloudhttp_parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", t + 100, &ms), 0);
	assert_int_equal(ms, 0);
	/* a leap-year date */
	assert_int_equal(cloudhttp_parse_retry_after("Thu, 29 Feb 2024 00:00:00 GMT", 1709164800 - 5,
						     &ms), 0);
	assert_int_equal(ms, 5000);
	/* huge: saturates, never overflows */
	assert_int_equal(cloudhttp_parse_retry_after("99999999999999999999999999", 0, &ms), 0);
	assert_true(ms > 0 && ms >= INT64_MAX / 4);
	ms = -5;
	assert_int_equal(cloudhttp_parse_retry_after("", 0, &ms), -1);
	assert_int_equal(cloudhttp_parse_retry_after("-1", 0, &ms), -1);
	assert_int_equal(cloudhttp_parse_retry_after("1.5", 0, &ms), -1);
	assert_int_equal(cloudhttp_parse_retry_after("12abc", 0, &ms), -1);
	assert_int_equal(cloudhttp_parse_retry_after("Sun, 06 Nov 1994 08:49:37 PST", 0, &ms), -1);
	assert_int_equal(cloudhttp_parse_retry_after("Sun, 06 Foo 1994 08:49:37 GMT", 0, &ms), -1);
	assert_int_equal(cloudhttp_parse_retry_after("Sun, 06 Nov 1994 25:49:37 GMT", 0, &ms), -1);
	assert_int_equal(cloudhttp_parse_retry_after("tomorrow", 0, &ms), -1);
	assert_int_equal(cloudhttp_parse_retry_after(NULL, 0, &ms), -1);
	assert_int_equal(ms, -5);
}

static void test_url_parse(void **state)
{
	struct cloudhttp_url u;
	struct errbuf err = {{0}};

	(void)state;
	assert_int_equal(cloudhttp_url_parse("https://ec2.us-east-1.amazonaws.com/?Action=X", &u, &err), 0);
	assert_string_equal(u.scheme, "https");
	assert_string_equal(u.host, "ec2.us-east-1.amazonaws.com");
	assert_int_equal(u.port, 443);
	assert_string_equal(u.authority, "ec2.us-east-1.amazonaws.com");
	assert_int_equal(u.path_len, 1);
	assert_memory_equal(u.path, "/", 1);
	assert_int_equal(u.query_len, 8);
	assert_memory_equal(u.query, "Action=X", 8);
	assert_int_equal(cloudhttp_url_parse("HTTP://127.0.0.1:8080", &u, &err), 0);
	assert_string_equal(u.scheme, "http");
	assert_int_equal(u.port, 8080);
	assert_string_equal(u.authority, "127.0.0.1:8080");
	assert_null(u.path);
	assert_null(u.query);
	assert_int_equal(cloudhttp_url_parse("http://[fd00:ec2::254]/latest/api/token#f", &u, &err), 0);
	assert_string_equal(u.host, "fd00:ec2::254");
	assert_string_equal(u.authority, "[fd00:ec2::254]");
	assert_int_equal(u.port, 80);
	assert_int_equal(u.path_len, strlen("/latest/api/token"));
	assert_null(u.query);
	assert_int_equal(cloudhttp_url_parse("https://h/p?", &u, &err), 0);
	assert_non_null(u.query);
	assert_int_equal(u.query_len, 0);
	assert_int_equal(cloudhttp_url_parse("https://u:secretpw@h/", &u, &err), -1);
	assert_non_null(strstr(err.msg, "user information"));
	assert_null(strstr(err.msg, "secretpw"));
	assert_int_equal(cloudhttp_url_parse("ftp://h/", &u, &err), -1);
	assert_int_equal(cloudhttp_url_parse("h/path", &u, &err), -1);
	assert_int_equal(cloudhttp_url_parse("https:///path", &u, &err), -1);
	assert_int_equal(cloudhttp_url_parse("https://h:0/", &u, &err), -1);
	assert_int_equal(cloudhttp_url_parse("https://h:65536/", &u, &err), -1);
	assert_int_equal(cloudhttp_url_parse("https://h:8x/", &u, &err), -1);
	assert_int_equal(cloudhttp_url_parse("https://h/a b", &u, &err), -1);
	assert_int_equal(cloudhttp_url_parse("https://h/a\r\nX-Injected: 1", &u, &err), -1);
	assert_int_equal(cloudhttp_url_parse("https://[::1/", &u, &err), -1);
	assert_int_equal(cloudhttp_url_parse(NULL, &u, &err), -1);
}

static void test_escape_and_headers(void **state)
{
	struct buf b = BUF_INIT;
	struct cloudhttp_headers h = CLOUDHTTP_HEADERS_INIT;

	(void)state;
	assert_int_equal(cloudhttp_escape(&b, "A-z_0.9~ /+=&\xc3\xa9*"), 0);
	assert_string_equal(b.data, "A-z_0.9~%20%2F%2B%3D%26%C3%A9%2A");
	buf_free(&b);
	assert_null(cloudhttp_headers_get(&h, "x"));
	assert_int_equal(cloudhttp_headers_add(&h, "X-One", "1"), 0);
	assert_int_equal(cloudhttp_headers_add(&h, "x-one", "2"), 0);
	assert_int_equal(cloudhttp_headers_add(&h, "Other", "  spaced  "), 0);
	assert_string_equal(cloudhttp_headers_get(&h, "X-ONE"), "1"); /* first match */
	assert_string_equal(cloudhttp_headers_get(&h, "other"), "  spaced  ");
	/* header injection and bad names are refused */
	assert_int_equal(cloudhttp_headers_add(&h, "X-Bad", "a\r\nX-Injected: 1"), -1);
	assert_int_equal(cloudhttp_headers_add(&h, "X-Bad", "a\nb"), -1);
	assert_int_equal(cloudhttp_headers_add(&h, "X Bad", "a"), -1);
	assert_int_equal(cloudhttp_headers_add(&h, "X-Bad:", "a"), -1);
	assert_int_equal(cloudhttp_headers_add(&h, "", "a"), -1);
	assert_int_equal(cloudhttp_headers_add(&h, NULL, "a"), -1);
	assert_int_equal(cloudhttp_headers_add(&h, "X-Bad", NULL), -1);
	assert_int_equal(h.n, 3);
	/* set replaces all of a name at the first's place */
	assert_int_equal(cloudhttp_headers_set(&h, "X-ONE", "3"), 0);
	assert_int_equal(h.n, 2);
	assert_string_equal(h.v[0].value, "3");
	assert_string_equal(h.v[1].name, "Other");
	assert_int_equal(cloudhttp_headers_set(&h, "New", "n"), 0);
	assert_int_equal(h.n, 3);
	assert_string_equal(cloudhttp_headers_get(&h, "new"), "n");
	/* a bearer token: one Authorization header, replaced, never injected */
	assert_int_equal(cloudhttp_headers_set_bearer(&h, "ya29.tok"), 0);
	assert_int_equal(cloudhttp_headers_set_bearer(&h, "ya29.new"), 0);
	assert_int_equal(h.n, 4);
	assert_string_equal(cloudhttp_headers_get(&h, "authorization"), "Bearer ya29.new");
	assert_int_equal(cloudhttp_headers_set_bearer(&h, "t\r\nX-Injected: 1"), -1);
	assert_int_equal(cloudhttp_headers_set_bearer(&h, ""), -1);
	assert_int_equal(cloudhttp_headers_set_bearer(&h, NULL), -1);
	assert_string_equal(cloudhttp_headers_get(&h, "authorization"), "Bearer ya29.new");
	cloudhttp_headers_free(&h);
	assert_int_equal(h.n, 0);
	cloudhttp_headers_free(&h);
}

static void test_bad_options(void **state)
{
	struct cloudhttp_opts o = {0};
	struct errbuf err = {{0}};

	(void)state;
	o.max_attempts = 101;
	assert_null(cloudhttp_new(&o, &err));
	assert_non_null(strstr(err.msg, "max attempts"));
	o.max_attempts = 0;
	o.ca_file = "/nonexistent/ca.pem";
	assert_null(cloudhttp_new(&o, &err));
	assert_non_null(strstr(err.msg, "/nonexistent/ca.pem"));
	o.ca_file = NULL;
	o.user_agent = "a\r\nX-Injected: 1";
	assert_null(cloudhttp_new(&o, &err));
}

/* ---- TLS ---- */

static char tmpdir[256];

static char *slurp(const char *path)
{
	struct buf b = BUF_INIT;
	struct errbuf err = {{0}};

	if (buf_read_file(&b, path, 1 << 20, &err))
		fail_msg("%s", err.msg);
	return buf_take(&b);
}

static void test_tls(void **state)
{
	char cmd[1024], path[300], *cert, *key;
	struct cs_server s;
	struct script sc;
	struct cloudhttp *h;
	struct cloudhttp_opts o = {0};
	struct cloudhttp_request rq;
	struct cloudhttp_response r;
	struct errbuf err = {{0}};

	(void)state;
	if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
		fail_msg("libmicrohttpd was built without TLS");
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem "
		 "-days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1",
		 tmpdir);
	if (system(cmd) != 0)
		fail_msg("openssl could not make a test certificate (is openssl installed?)");
	snprintf(path, sizeof(path), "%s/cert.pem", tmpdir);
	cert = slurp(path);
	snprintf(path, sizeof(path), "%s/key.pem", tmpdir);
	key = slurp(path);
	memset(&sc, 0, sizeof(sc));
	assert_int_equal(cs_start(&s, h_script, &sc, cert, key), 0);
	rq = get(s.url);
	/* verified by default: a self-signed certificate is refused, not retried */
	h = cloudhttp_new(NULL, &err);
	assert_non_null(h);
	assert_int_equal(cloudhttp_call(h, &rq, &r, &err), -1);
	assert_non_null(strstr(err.msg, s.url));
	assert_int_equal(r.attempts, 1);
	cloudhttp_response_free(&r);
	cloudhttp_free(h);
	/* the CA file is honoured */
	snprintf(path, sizeof(path), "%s/cert.pem", tmpdir);
	o.ca_file = path;
	h = cloudhttp_new(&o, &err);
	assert_non_null(h);
	assert_int_equal(cloudhttp_call(h, &rq, &r, &err), 0);
	assert_int_equal(r.status, 200);
	cloudhttp_response_free(&r);
	cloudhttp_free(h);
	/* and only when asked is verification off */
	o.ca_file = NULL;
	o.insecure_skip_verify = true;
	h = cloudhttp_new(&o, &err);
	assert_non_null(h);
	assert_int_equal(cloudhttp_call(h, &rq, &r, &err), 0);
	assert_int_equal(r.status, 200);
	cloudhttp_response_free(&r);
	cloudhttp_free(h);
	assert_int_equal(cs_count(&s), 2);
	cs_stop(&s);
	free(cert);
	free(key);
}

/* ---- threads ---- */

struct thr {
	struct cloudhttp *h;
	const char *url;
	int ok;
};

static void *thr_main(void *arg)
{
	struct thr *t = arg;
	int i;

	for (i = 0; i < 20; i++) {
		struct cloudhttp_request rq = get(t->url);
		struct cloudhttp_response r;
		struct errbuf err = {{0}};

		if (cloudhttp_call(t->h, &rq, &r, &err) == 0 && r.status == 200 &&
		    strcmp(r.body, "ok") == 0)
			t->ok++;
		cloudhttp_response_free(&r);
	}
	return NULL;
}

static void test_threads_share_a_client(void **state)
{
	struct cs_server s;
	struct script sc;
	struct cloudhttp *h;
	struct thr t[4];
	pthread_t th[4];
	int i;

	(void)state;
	memset(&sc, 0, sizeof(sc));
	assert_int_equal(cs_start(&s, h_script, &sc, NULL, NULL), 0);
	h = client(NULL, 1, 3);
	for (i = 0; i < 4; i++) {
		t[i].h = h;
		t[i].url = s.url;
		t[i].ok = 0;
		assert_int_equal(pthread_create(&th[i], NULL, thr_main, &t[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(t[i].ok, 20);
	}
	cloudhttp_free(h);
	cs_stop(&s);
}

static int setup(void **state)
{
	(void)state;
	signal(SIGPIPE, SIG_IGN);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/luascale-cloudhttp-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_retry_5xx_full_jitter),
		cmocka_unit_test(test_same_seed_same_waits),
		cmocka_unit_test(test_429_throttled),
		cmocka_unit_test(test_retry_after_honoured),
		cmocka_unit_test(test_prepare_every_attempt),
		cmocka_unit_test(test_classify_verdicts),
		cmocka_unit_test(test_clock_that_cannot_sleep),
		cmocka_unit_test(test_wire_headers_and_body),
		cmocka_unit_test(test_no_redirect_followed),
		cmocka_unit_test(test_max_body),
		cmocka_unit_test(test_connection_refused),
		cmocka_unit_test(test_cancel_ends_retry_wait),
		cmocka_unit_test(test_cancel_ends_transfer),
		cmocka_unit_test(test_verbose_logs_redacted),
		cmocka_unit_test(test_redact_url),
		cmocka_unit_test(test_header_is_secret),
		cmocka_unit_test(test_parse_retry_after),
		cmocka_unit_test(test_url_parse),
		cmocka_unit_test(test_escape_and_headers),
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_tls),
		cmocka_unit_test(test_threads_share_a_client),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
