/*
 * Tests for kube/leader against a fake Lease API (one Lease, optimistic
 * concurrency on resourceVersion, an outage switch) on a virtual clock:
 * create, renew, takeover only after the record stood still for its
 * duration by the observer's clock, the renew deadline, release, conflicts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cjson/cJSON.h>
#include <signal.h>

#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "kube/leader.h"
#include "runtime/clock.h"
#include "runtime/fence.h"
#include "test_kube_server.h"

#define WALL0 1796112000LL /* 2026-12-01T08:00:00Z */
#define LEASE_PATH "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/luascale"
#define COLL_PATH "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
#define S CLOCK_NS_PER_S

/* The fake API's one Lease. Guarded by the server's lock. */
struct world {
	cJSON *lease;   /* NULL: none */
	int rv;
	bool down;      /* answer 503 to everything */
	int conflicts;  /* answer the next N updates 409 (as if someone wrote first) */
	int gets, posts, puts;
};

static void set_rv(cJSON *o, int rv)
{
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(o, "metadata");
	char b[16];

	snprintf(b, sizeof(b), "%d", rv);
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "resourceVersion");
	cJSON_AddStringToObject(meta, "resourceVersion", b);
}

static void answer_lease(struct world *w, struct ts_resp *rs, int status)
{
	char *txt = cJSON_PrintUnformatted(w->lease);

	rs->status = status;
	snprintf(rs->body, sizeof(rs->body), "%s", txt);
	free(txt);
}

static void h_lease(void *ud, size_t index, const struct ts_req *rq, struct ts_resp *rs)
{
	struct world *w = ud;

	(void)index;
	if (w->down) {
		ts_status(rs, 503, "ServiceUnavailable", "down");
		return;
	}
	if (!strcmp(rq->method, "GET") && !strcmp(rq->path, LEASE_PATH)) {
		w->gets++;
		if (!w->lease)
			ts_status(rs, 404, "NotFound", "leases.coordination.k8s.io \\\"luascale\\\" not found");
		else
			answer_lease(w, rs, 200);
	} else if (!strcmp(rq->method, "POST") && !strcmp(rq->path, COLL_PATH)) {
		w->posts++;
		if (w->lease) {
			ts_status(rs, 409, "AlreadyExists", "exists");
			return;
		}
		w->lease = cJSON_Parse(rq->body);
		set_rv(w->lease, ++w->rv);
		answer_lease(w, rs, 201);
	} else if (!strcmp(rq->method, "PUT") && !strcmp(rq->path, LEASE_PATH)) {
		cJSON *o = cJSON_Parse(rq->body);
		const cJSON *rv = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(o, "metadata"), "resourceVersion");
		char cur[16];

		w->puts++;
		snprintf(cur, sizeof(cur), "%d", w->rv);
		if (w->conflicts > 0 || !w->lease || !cJSON_IsString(rv) || strcmp(rv->valuestring, cur)) {
			if (w->conflicts > 0)
				w->conflicts--;
			cJSON_Delete(o);
			ts_status(rs, 409, "Conflict", "the object has been modified");
			return;
		}
		cJSON_Delete(w->lease);
		w->lease = o;
		set_rv(w->lease, ++w->rv);
		answer_lease(w, rs, 200);
	} else {
		ts_status(rs, 404, "NotFound", "no route");
	}
}

struct fixture {
	struct ts_server s;
	struct world w;
	struct kube_client *client;
	struct clock *clock;
	struct leader *a, *b;
	int changes_a[2], changes_b[2]; /* [0] stopped leading, [1] started */
	bool a_unhealthy;               /* a's loop is stuck (may_renew false) */
};

static void on_a(void *ctx, bool leading)
{
	((struct fixture *)ctx)->changes_a[leading]++;
}

static void on_b(void *ctx, bool leading)
{
	((struct fixture *)ctx)->changes_b[leading]++;
}

static struct leader *elector(struct fixture *f, const char *id, void (*cb)(void *, bool))
{
	struct leader_opts o;
	struct errbuf err = {""};
	struct leader *l;

	memset(&o, 0, sizeof(o));
	o.client = f->client;
	o.clock = f->clock;
	o.ns = "kube-system";
	o.name = "luascale";
	o.identity = id;
	o.lease_duration_ns = 15 * S;
	o.renew_deadline_ns = 10 * S;
	o.retry_period_ns = 2 * S;
	o.on_change = cb;
	o.ctx = f;
	l = leader_new(&o, &err);
	assert_non_null(l);
	return l;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct kube_config cfg;
	struct errbuf err = {""};

	signal(SIGPIPE, SIG_IGN);
	if (!f || ts_start(&f->s, h_lease, &f->w, NULL, NULL))
		return -1;
	memset(&cfg, 0, sizeof(cfg));
	cfg.server = f->s.url;
	cfg.token = "t";
	f->client = kube_client_new(&cfg, NULL, &err);
	f->clock = vclock_new(WALL0);
	if (!f->client)
		return -1;
	f->a = elector(f, "pod-a_1", on_a);
	f->b = elector(f, "pod-b_2", on_b);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	leader_free(f->a);
	leader_free(f->b);
	kube_client_free(f->client);
	ts_stop(&f->s);
	cJSON_Delete(f->w.lease);
	vclock_free(f->clock);
	free(f);
	return 0;
}

static const char *spec_str(struct fixture *f, const char *k)
{
	const cJSON *v;

	pthread_mutex_lock(&f->s.mu);
	v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(f->w.lease, "spec"), k);
	pthread_mutex_unlock(&f->s.mu);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double spec_num(struct fixture *f, const char *k)
{
	const cJSON *v;

	pthread_mutex_lock(&f->s.mu);
	v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(f->w.lease, "spec"), k);
	pthread_mutex_unlock(&f->s.mu);
	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static void at(struct fixture *f, int64_t ns)
{
	vclock_set(f->clock, ns);
}

static void test_first_creates_and_leads(void **state)
{
	struct fixture *f = *state;
	char holder[LEADER_IDENTITY_MAX];

	at(f, 1 * S);
	assert_false(leader_is_leading(f->a));
	assert_int_equal(leader_step(f->a), 1);
	assert_true(leader_is_leading(f->a));
	assert_int_equal(f->changes_a[1], 1);
	assert_int_equal(f->w.posts, 1);
	assert_string_equal(spec_str(f, "holderIdentity"), "pod-a_1");
	assert_int_equal((int)spec_num(f, "leaseDurationSeconds"), 15);
	assert_int_equal((int)spec_num(f, "leaseTransitions"), 0);
	assert_string_equal(spec_str(f, "renewTime"), "2026-12-01T08:00:01.000000Z");
	assert_string_equal(spec_str(f, "acquireTime"), "2026-12-01T08:00:01.000000Z");
	/* the other sees it held */
	assert_int_equal(leader_step(f->b), 0);
	assert_false(leader_is_leading(f->b));
	assert_true(leader_observed(f->b));
	leader_holder(f->b, holder, sizeof(holder));
	assert_string_equal(holder, "pod-a_1");
	assert_int_equal(f->changes_b[1], 0);
}

static void test_renew_keeps_acquire_time(void **state)
{
	struct fixture *f = *state;
	int gets;

	at(f, 1 * S);
	leader_step(f->a);
	gets = f->w.gets;
	at(f, 3 * S + 500 * CLOCK_NS_PER_MS);
	assert_int_equal(leader_step(f->a), 1);
	/* the fast path: an update on the resourceVersion it holds, no GET */
	assert_int_equal(f->w.gets, gets);
	assert_string_equal(spec_str(f, "renewTime"), "2026-12-01T08:00:03.500000Z");
	assert_string_equal(spec_str(f, "acquireTime"), "2026-12-01T08:00:01.000000Z");
	assert_int_equal((int)spec_num(f, "leaseTransitions"), 0);
	assert_int_equal(f->changes_a[1], 1);
}

static void test_takeover_only_after_expiry_by_own_clock(void **state)
{
	struct fixture *f = *state;

	at(f, 1 * S);
	leader_step(f->a);  /* a leads, then dies: no more renewals */
	at(f, 4 * S);
	assert_int_equal(leader_step(f->b), 0); /* b first sees the record at 4 s */
	at(f, 18 * S);
	/* 17 s after a's renewal but 14 s after b saw it: not yet */
	assert_int_equal(leader_step(f->b), 0);
	at(f, 19 * S);
	assert_int_equal(leader_step(f->b), 1);
	assert_true(leader_is_leading(f->b));
	assert_string_equal(spec_str(f, "holderIdentity"), "pod-b_2");
	assert_int_equal((int)spec_num(f, "leaseTransitions"), 1);
	assert_string_equal(spec_str(f, "acquireTime"), "2026-12-01T08:00:19.000000Z");
	/* a comes back: its optimistic update conflicts, it reads b's Lease */
	assert_int_equal(leader_step(f->a), 0);
	assert_false(leader_is_leading(f->a));
	assert_int_equal(f->changes_a[0], 1);
	assert_string_equal(spec_str(f, "holderIdentity"), "pod-b_2");
}

static void test_renewing_leader_is_never_taken(void **state)
{
	struct fixture *f = *state;
	int64_t t;

	at(f, 1 * S);
	leader_step(f->a);
	for (t = 2 * S; t <= 40 * S; t += 2 * S) {
		at(f, t);
		assert_int_equal(leader_step(f->a), 1);
		at(f, t + S);
		assert_int_equal(leader_step(f->b), 0);
	}
	assert_int_equal(f->changes_b[1], 0);
	assert_int_equal((int)spec_num(f, "leaseTransitions"), 0);
}

static void test_outage_steps_down_before_the_lease_can_be_taken(void **state)
{
	struct fixture *f = *state;

	at(f, 1 * S);
	leader_step(f->a);
	at(f, 2 * S);
	leader_step(f->b);  /* b sees a's record at 2 s: it may take it at 17 s */
	at(f, 3 * S);
	leader_step(f->a);  /* the last renewal: 3 s */
	pthread_mutex_lock(&f->s.mu);
	f->w.down = true;
	pthread_mutex_unlock(&f->s.mu);
	at(f, 5 * S);
	assert_int_equal(leader_step(f->a), 0);
	assert_true(leader_is_leading(f->a)); /* within its renew deadline */
	at(f, 12 * S + 999 * CLOCK_NS_PER_MS);
	assert_true(leader_is_leading(f->a));
	/* at the deadline it stops acting at once, before its thread notices */
	at(f, 13 * S);
	assert_false(leader_is_leading(f->a));
	assert_int_equal(f->changes_a[0], 0);
	assert_int_equal(leader_step(f->a), 0);
	assert_int_equal(f->changes_a[0], 1);
	/* 13 s < 3 s + 15 s: a stopped before anyone could take the Lease */
	pthread_mutex_lock(&f->s.mu);
	f->w.down = false;
	pthread_mutex_unlock(&f->s.mu);
	at(f, 16 * S);
	/* b saw the 3 s renewal at 16 s: it waits 15 s from then */
	assert_int_equal(leader_step(f->b), 0);
	at(f, 31 * S);
	assert_int_equal(leader_step(f->b), 1);
	assert_false(leader_is_leading(f->a));
}

static void test_release_hands_over_at_once(void **state)
{
	struct fixture *f = *state;
	struct errbuf err = {""};

	at(f, 1 * S);
	leader_step(f->a);
	at(f, 2 * S);
	leader_step(f->b);
	at(f, 3 * S);
	assert_int_equal(leader_release(f->a, &err), 0);
	assert_false(leader_is_leading(f->a));
	assert_null(spec_str(f, "holderIdentity"));
	assert_int_equal((int)spec_num(f, "leaseDurationSeconds"), 1);
	assert_int_equal((int)spec_num(f, "leaseTransitions"), 0);
	at(f, 3 * S + 100 * CLOCK_NS_PER_MS);
	assert_int_equal(leader_step(f->b), 1);
	assert_string_equal(spec_str(f, "holderIdentity"), "pod-b_2");
	assert_int_equal((int)spec_num(f, "leaseTransitions"), 1);
	/* releasing what one does not hold writes nothing */
	{
		int puts = f->w.puts;

		assert_int_equal(leader_release(f->a, &err), 0);
		assert_int_equal(f->w.puts, puts);
	}
}

static void test_conflict_loses_the_race(void **state)
{
	struct fixture *f = *state;

	at(f, 1 * S);
	leader_step(f->a);
	at(f, 2 * S);
	leader_step(f->b);
	at(f, 20 * S);
	pthread_mutex_lock(&f->s.mu);
	f->w.conflicts = 1; /* someone else's update lands between b's GET and PUT */
	pthread_mutex_unlock(&f->s.mu);
	assert_int_equal(leader_step(f->b), 0);
	assert_false(leader_is_leading(f->b));
	assert_int_equal(f->changes_b[1], 0);
}

static void test_bad_lease_is_refused(void **state)
{
	struct fixture *f = *state;

	pthread_mutex_lock(&f->s.mu);
	f->w.lease = cJSON_Parse("{\"metadata\":{\"name\":\"luascale\",\"resourceVersion\":\"1\"},"
				 "\"spec\":{\"holderIdentity\":\"x\",\"leaseDurationSeconds\":\"15\"}}");
	f->w.rv = 1;
	pthread_mutex_unlock(&f->s.mu);
	at(f, 1 * S);
	assert_int_equal(leader_step(f->a), 0);
	assert_false(leader_is_leading(f->a));
	assert_int_equal(f->w.puts, 0);
}

static const char *fake_env(const char *name)
{
	return strcmp(name, "POD_NAME") == 0 ? "luascale-7d9f-abcde" : NULL;
}

static const char *bad_env(const char *name)
{
	return strcmp(name, "POD_NAME") == 0 ? "Not_A\"Pod" : NULL;
}

static void test_identity(void **state)
{
	char a[LEADER_IDENTITY_MAX], b[LEADER_IDENTITY_MAX];
	struct errbuf err = {""};
	size_t i, n = strlen("luascale-7d9f-abcde_");

	(void)state;
	assert_int_equal(leader_default_identity(a, sizeof(a), fake_env, &err), 0);
	assert_int_equal(leader_default_identity(b, sizeof(b), fake_env, &err), 0);
	assert_memory_equal(a, "luascale-7d9f-abcde_", n);
	assert_int_equal(strlen(a), n + 16);
	for (i = n; a[i]; i++)
		assert_non_null(strchr("0123456789abcdef", a[i]));
	assert_string_not_equal(a, b);
	assert_int_equal(leader_default_identity(a, sizeof(a), bad_env, &err), -1);
	assert_non_null(strstr(err.msg, "POD_NAME"));
}

static void test_bad_durations(void **state)
{
	struct fixture *f = *state;
	struct leader_opts o;
	struct errbuf err = {""};

	memset(&o, 0, sizeof(o));
	o.client = f->client;
	o.ns = "kube-system";
	o.name = "luascale";
	o.identity = "x";
	o.lease_duration_ns = 10 * S;
	o.renew_deadline_ns = 10 * S;
	o.retry_period_ns = 2 * S;
	assert_null(leader_new(&o, &err));
	assert_non_null(strstr(err.msg, "renew_deadline"));
}

/* An elector for "pod-a_1" with a write fence and a health gate. */
static bool a_healthy(void *ctx)
{
	return !((struct fixture *)ctx)->a_unhealthy;
}

static struct leader *fenced_elector(struct fixture *f, struct fence *fence)
{
	struct leader_opts o;
	struct errbuf err = {""};
	struct leader *l;

	memset(&o, 0, sizeof(o));
	o.client = f->client;
	o.clock = f->clock;
	o.ns = "kube-system";
	o.name = "luascale";
	o.identity = "pod-a_1";
	o.lease_duration_ns = 15 * S;
	o.renew_deadline_ns = 10 * S;
	o.retry_period_ns = 2 * S;
	o.on_change = on_a;
	o.ctx = f;
	o.fence = fence;
	o.may_renew = a_healthy;
	l = leader_new(&o, &err);
	assert_non_null(l);
	return l;
}

/* The fence follows the Lease: open until start of renewal + renew
 * deadline, lapsed by the clock when the process was paused (before its
 * elector runs again), closed when it steps down. */
static void test_fence_follows_the_lease(void **state)
{
	struct fixture *f = *state;
	struct fence *fence = fence_new(f->clock);
	struct leader *a;

	leader_free(f->a);
	f->a = a = fenced_elector(f, fence);
	at(f, 1 * S);
	assert_false(fence_holds(fence));
	assert_int_equal(leader_step(a), 1);
	assert_true(fence_holds(fence));
	assert_int_equal(fence_deadline(fence), 11 * S);
	at(f, 3 * S);
	assert_int_equal(leader_step(a), 1);
	assert_int_equal(fence_deadline(fence), 13 * S);
	assert_int_equal(leader_step(f->b), 0); /* b sees the 3 s renewal */
	/* a is paused from 3 s to 25 s: at 25 s nothing of it ran yet, and
	 * its fence is shut by the clock alone */
	at(f, 25 * S);
	assert_false(fence_holds(fence));
	/* b takes the Lease (a's record stood still for 15 s by b's clock) */
	assert_int_equal(leader_step(f->b), 1);
	/* a's elector runs after the pause: it finds b, and stays shut */
	assert_int_equal(leader_step(a), 0);
	assert_false(fence_holds(fence));
	assert_int_equal(fence_deadline(fence), INT64_MIN);
	assert_int_equal(f->changes_a[0], 1);
	leader_free(a);
	f->a = NULL;
	fence_free(fence);
}

/* A process whose loop is stuck stops renewing and steps down, sending
 * nothing, so another replica can take over. */
static void test_stuck_loop_gives_the_lease_up(void **state)
{
	struct fixture *f = *state;
	struct fence *fence = fence_new(f->clock);
	struct leader *a;
	int puts, posts, gets;

	leader_free(f->a);
	f->a = a = fenced_elector(f, fence);
	at(f, 1 * S);
	assert_int_equal(leader_step(a), 1);
	f->a_unhealthy = true;
	pthread_mutex_lock(&f->s.mu);
	puts = f->w.puts;
	posts = f->w.posts;
	gets = f->w.gets;
	pthread_mutex_unlock(&f->s.mu);
	at(f, 3 * S);
	assert_int_equal(leader_step(a), 0);
	assert_false(leader_is_leading(a));
	assert_false(fence_holds(fence));
	assert_int_equal(f->changes_a[0], 1);
	pthread_mutex_lock(&f->s.mu);
	assert_int_equal(f->w.puts, puts);
	assert_int_equal(f->w.posts, posts);
	assert_int_equal(f->w.gets, gets);
	pthread_mutex_unlock(&f->s.mu);
	/* healthy again: it may lead again (nobody else took it) */
	f->a_unhealthy = false;
	at(f, 5 * S);
	assert_int_equal(leader_step(a), 1);
	assert_true(fence_holds(fence));
	leader_free(a);
	f->a = NULL;
	fence_free(fence);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_first_creates_and_leads),
		T(test_renew_keeps_acquire_time),
		T(test_takeover_only_after_expiry_by_own_clock),
		T(test_renewing_leader_is_never_taken),
		T(test_outage_steps_down_before_the_lease_can_be_taken),
		T(test_release_hands_over_at_once),
		T(test_conflict_loses_the_race),
		T(test_bad_lease_is_refused),
		T(test_identity),
		T(test_bad_durations),
		T(test_fence_follows_the_lease),
		T(test_stuck_loop_gives_the_lease_up),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
