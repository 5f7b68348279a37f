/*
 * Tests for runtime/fence and the writes behind it: the fence holds only
 * until the deadline its opener set, by the clock at the moment it is
 * asked (a paused process finds it lapsed); a rate-limit bucket behind it
 * grants no token while it does not hold, and a wait for a token ends
 * when it closes or lapses; the API client sends no write while it does
 * not hold (reads still go), also a write already waiting for a token.
 * Virtual clocks throughout; threads are joined with a deadline that
 * fails the test with what it saw instead of hanging.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <time.h>

#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "providers/provider.h"
#include "runtime/clock.h"
#include "runtime/fence.h"
#include "runtime/ratelimit.h"
#include "test_kube_server.h"

#define S CLOCK_NS_PER_S
#define WALL0 1796112000LL

/* Joins 't', failing the test when it has not ended within 20 s. */
static void join_or_fail(pthread_t t, const char *what)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 20;
	if (pthread_timedjoin_np(t, NULL, &ts) != 0)
		fail_msg("%s did not end within 20 s", what);
}

static void test_holds_until_its_deadline_by_the_clock(void **state)
{
	struct clock *c = vclock_new(WALL0);
	struct fence *f = fence_new(c);
	char why[160];

	(void)state;
	assert_non_null(f);
	assert_true(fence_holds(NULL)); /* no election: always */
	assert_false(fence_holds(f));   /* closed until a Lease is held */
	fence_why(f, why, sizeof(why));
	assert_non_null(strstr(why, "does not hold the leader Lease"));
	vclock_set(c, 1 * S);
	fence_open_until(f, 11 * S);
	assert_true(fence_holds(f));
	vclock_set(c, 10 * S);
	assert_true(fence_holds(f));
	/* the process was paused past its deadline: nothing told it, the
	 * clock alone closes the fence */
	vclock_set(c, 23 * S);
	assert_false(fence_holds(f));
	fence_why(f, why, sizeof(why));
	assert_non_null(strstr(why, "lapsed 12.0 s ago"));
	/* a renewal opens it again; stepping down closes it */
	fence_open_until(f, 33 * S);
	assert_true(fence_holds(f));
	fence_close(f);
	assert_false(fence_holds(f));
	assert_int_equal(fence_deadline(f), INT64_MIN);
	fence_free(f);
	vclock_free(c);
}

static int woken;

static void on_close(void *ctx)
{
	(void)ctx;
	woken++;
}

static void test_listeners_hear_the_close(void **state)
{
	struct clock *c = vclock_new(WALL0);
	struct fence *f = fence_new(c);

	(void)state;
	woken = 0;
	assert_int_equal(fence_listen(f, on_close, NULL), 0);
	fence_open_until(f, 5 * S);
	fence_close(f);
	assert_int_equal(woken, 1);
	fence_unlisten(f, on_close, NULL);
	fence_close(f);
	assert_int_equal(woken, 1);
	fence_free(f);
	vclock_free(c);
}

/* ---- a bucket behind the fence ---- */

struct acquirer {
	struct ratelimit *rl;
	int rc;
	atomic_int started;
};

static void *acquire_thread(void *p)
{
	struct acquirer *a = p;

	atomic_store(&a->started, 1);
	a->rc = ratelimit_acquire(a->rl, INT64_MAX);
	return NULL;
}

static void test_bucket_grants_nothing_without_the_fence(void **state)
{
	struct clock *c = vclock_new(WALL0);
	struct fence *f = fence_new(c);
	struct ratelimit *rl = ratelimit_new(c, 1, 1);

	(void)state;
	ratelimit_set_fence(rl, f);
	assert_int_equal(ratelimit_acquire(rl, INT64_MAX), RATELIMIT_FENCED);
	assert_int_equal(fence_refused(f), 1);
	assert_int_equal(ratelimit_granted(rl), 0);
	fence_open_until(f, 10 * S);
	assert_int_equal(ratelimit_acquire(rl, INT64_MAX), 0);
	assert_int_equal(ratelimit_granted(rl), 1);
	ratelimit_free(rl);
	fence_free(f);
	vclock_free(c);
}

/* A bucket of a token every 10 s behind a fence held until 'hold_s', its
 * saved token taken, and a second acquire waiting in its own thread. */
struct waiter {
	struct clock *c;
	struct fence *f;
	struct ratelimit *rl;
	struct acquirer a;
	pthread_t t;
};

static void waiter_start(struct waiter *w, int64_t hold_s)
{
	w->c = vclock_new(WALL0);
	w->f = fence_new(w->c);
	w->rl = ratelimit_new(w->c, 0.1, 1);
	w->a.rl = w->rl;
	w->a.rc = 99;
	atomic_init(&w->a.started, 0);
	ratelimit_set_fence(w->rl, w->f);
	fence_open_until(w->f, hold_s * S);
	assert_int_equal(ratelimit_acquire(w->rl, INT64_MAX), 0); /* the saved token */
	assert_int_equal(pthread_create(&w->t, NULL, acquire_thread, &w->a), 0);
	while (!atomic_load(&w->a.started))
		sched_yield();
}

/* Joins the waiter ('what' names it if it hangs); its acquire's answer. */
static int waiter_end(struct waiter *w, const char *what)
{
	join_or_fail(w->t, what);
	ratelimit_free(w->rl);
	fence_free(w->f);
	vclock_free(w->c);
	return w->a.rc;
}

/* A write waiting for its token when the process steps down ends at once
 * with FENCED, not when the token comes. */
static void test_token_wait_ends_when_the_fence_closes(void **state)
{
	struct waiter w;

	(void)state;
	waiter_start(&w, 60);
	fence_close(w.f); /* the virtual clock never reaches the token's time */
	assert_int_equal(waiter_end(&w, "the token wait after the fence closed"), RATELIMIT_FENCED);
}

/* The same when the hold lapses by the clock before the token's time. */
static void test_token_wait_ends_when_the_fence_lapses(void **state)
{
	struct waiter w;

	(void)state;
	waiter_start(&w, 5);
	vclock_set(w.c, 6 * S); /* past the hold, before the token at 10 s */
	assert_int_equal(waiter_end(&w, "the token wait after the hold lapsed"), RATELIMIT_FENCED);
}

/* Renewals while a write waits keep it waiting, and it goes at its time. */
static void test_token_wait_goes_on_while_renewed(void **state)
{
	struct waiter w;

	(void)state;
	waiter_start(&w, 5);
	vclock_set(w.c, 4 * S);
	fence_open_until(w.f, 14 * S);
	vclock_set(w.c, 10 * S);
	assert_int_equal(waiter_end(&w, "the token wait at the token's time"), 0);
}

/* A cloud call refused by the fence is "not sent" and cancelled (nothing
 * to back off), not a throttled call. */
static void test_provider_token_refused_by_the_fence(void **state)
{
	struct clock *c = vclock_new(WALL0);
	struct fence *f = fence_new(c);
	struct ratelimit *rl = ratelimit_new(c, 1, 1);
	struct provider_status st;

	(void)state;
	ratelimit_set_fence(rl, f);
	memset(&st, 0, sizeof(st));
	assert_int_equal(provider_take_token(rl, 60 * S, c, &st), -1);
	assert_int_equal(st.code, PROVIDER_CANCELLED);
	assert_string_equal(st.message, "not sent: this process does not hold the leader Lease");
	fence_open_until(f, 10 * S);
	assert_int_equal(provider_take_token(rl, 60 * S, c, &st), 0);
	/* the next token is 1 s away, the deadline now: throttled */
	assert_int_equal(provider_take_token(rl, 0, c, &st), -1);
	assert_int_equal(st.code, PROVIDER_THROTTLED);
	ratelimit_free(rl);
	fence_free(f);
	vclock_free(c);
}

/* ---- the API client's writes ---- */

static void h_ok(void *ud, size_t index, const struct ts_req *rq, struct ts_resp *rs)
{
	(void)ud;
	(void)index;
	(void)rq;
	rs->status = 200;
	snprintf(rs->body, sizeof(rs->body), "{}");
}

struct client_fx {
	struct ts_server s;
	struct clock *c;
	struct fence *f;
	struct kube_client *client;
};

static struct client_fx *client_fx(double write_qps)
{
	struct client_fx *x = calloc(1, sizeof(*x));
	struct kube_config cfg;
	struct kube_client_opts o;
	struct errbuf err = {""};

	signal(SIGPIPE, SIG_IGN);
	assert_non_null(x);
	assert_int_equal(ts_start(&x->s, h_ok, NULL, NULL, NULL), 0);
	x->c = vclock_new(WALL0);
	x->f = fence_new(x->c);
	memset(&cfg, 0, sizeof(cfg));
	cfg.server = x->s.url;
	cfg.token = "t";
	memset(&o, 0, sizeof(o));
	o.clock = x->c;
	o.fence = x->f;
	o.write_qps = write_qps;
	o.write_burst = 1;
	x->client = kube_client_new(&cfg, &o, &err);
	if (!x->client)
		fail_msg("%s", err.msg);
	return x;
}

static void client_fx_free(struct client_fx *x)
{
	kube_client_free(x->client);
	ts_stop(&x->s);
	fence_free(x->f);
	vclock_free(x->c);
	free(x);
}

static size_t requests(struct client_fx *x, const char *method)
{
	size_t i, n = 0;

	pthread_mutex_lock(&x->s.mu);
	for (i = 0; i < x->s.n_reqs; i++)
		n += strcmp(x->s.reqs[i].method, method) == 0;
	pthread_mutex_unlock(&x->s.mu);
	return n;
}

static void test_client_sends_no_write_without_the_fence(void **state)
{
	struct client_fx *x = client_fx(0);
	struct kube_response r;
	struct errbuf err = {""};

	(void)state;
	/* a standby reads */
	assert_int_equal(kube_request(x->client, "GET", "/api/v1/nodes", NULL, NULL, 0, &r, &err), 0);
	kube_response_free(&r);
	/* and writes nothing */
	assert_int_equal(kube_request(x->client, "POST", "/api/v1/namespaces/default/pods/p/eviction",
				      KUBE_CT_JSON, "{}", 2, &r, &err), -1);
	assert_non_null(strstr(err.msg, "not sent: this process does not hold the leader Lease"));
	kube_response_free(&r);
	fence_open_until(x->f, 10 * S);
	assert_int_equal(kube_request(x->client, "PATCH", "/api/v1/nodes/n1",
				      KUBE_CT_MERGE_PATCH, "{}", 2, &r, &err), 0);
	kube_response_free(&r);
	/* paused past the deadline: refused before it goes out */
	vclock_set(x->c, 11 * S);
	assert_int_equal(kube_request(x->client, "DELETE", "/api/v1/nodes/n1", NULL, NULL, 0, &r,
				      &err), -1);
	assert_non_null(strstr(err.msg, "lapsed"));
	kube_response_free(&r);
	assert_int_equal(requests(x, "GET"), 1);
	assert_int_equal(requests(x, "PATCH"), 1);
	assert_int_equal(requests(x, "POST"), 0);
	assert_int_equal(requests(x, "DELETE"), 0);
	assert_true(fence_refused(x->f) >= 2);
	client_fx_free(x);
}

struct writer {
	struct client_fx *x;
	int rc;
	atomic_int started;
	struct errbuf err;
};

static void *write_thread(void *p)
{
	struct writer *w = p;
	struct kube_response r;

	atomic_store(&w->started, 1);
	w->rc = kube_request(w->x->client, "POST", "/api/v1/namespaces/default/pods/p/eviction",
			     KUBE_CT_JSON, "{}", 2, &r, &w->err);
	kube_response_free(&r);
	return NULL;
}

/* A write queued behind the write rate limit when the process steps down
 * is never sent. */
static void test_client_write_waiting_for_a_token_ends_on_close(void **state)
{
	struct client_fx *x = client_fx(0.5); /* a token every 2 s */
	struct writer w;
	struct kube_response r;
	pthread_t t;

	(void)state;
	memset(&w, 0, sizeof(w));
	w.x = x;
	fence_open_until(x->f, 60 * S);
	assert_int_equal(kube_request(x->client, "POST", "/api/v1/namespaces/default/events",
				      KUBE_CT_JSON, "{}", 2, &r, &w.err), 0);
	kube_response_free(&r);
	assert_int_equal(pthread_create(&t, NULL, write_thread, &w), 0);
	while (!atomic_load(&w.started) || kube_client_writes_waiting(x->client) == 0)
		sched_yield();
	fence_close(x->f);
	join_or_fail(t, "the write waiting for a token after the fence closed");
	assert_int_equal(w.rc, -1);
	assert_non_null(strstr(w.err.msg, "not sent"));
	assert_int_equal(requests(x, "POST"), 1);
	client_fx_free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_holds_until_its_deadline_by_the_clock),
		cmocka_unit_test(test_listeners_hear_the_close),
		cmocka_unit_test(test_bucket_grants_nothing_without_the_fence),
		cmocka_unit_test(test_token_wait_ends_when_the_fence_closes),
		cmocka_unit_test(test_token_wait_ends_when_the_fence_lapses),
		cmocka_unit_test(test_token_wait_goes_on_while_renewed),
		cmocka_unit_test(test_provider_token_refused_by_the_fence),
		cmocka_unit_test(test_client_sends_no_write_without_the_fence),
		cmocka_unit_test(test_client_write_waiting_for_a_token_ends_on_close),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
