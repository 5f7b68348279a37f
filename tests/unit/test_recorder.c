/*
 * Tests for recorder.c against a loopback API server: the same Event again
 * is a PATCH of its count, similar Events are combined, a pod's bucket
 * drops a flood, the caches forget the least recently used, a count whose
 * Event is gone makes it again, a full queue and a standby drop, and a long
 * message is cut on a character.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <cjson/cJSON.h>
#include <signal.h>

#include "kube/client.h"
#include "kube/recorder.h"
#include "runtime/clock.h"
#include "test_kube_server.h"

#define WALL0 1764496800

struct world {
	int patch_status; /* what a PATCH gets, 200 by default */
};

static void handler(void *ud, size_t index, const struct ts_req *rq, struct ts_resp *rs)
{
	struct world *w = ud;

	(void)index;
	if (strcmp(rq->method, "POST") == 0) {
		rs->status = 201;
		snprintf(rs->body, sizeof(rs->body), "%s", rq->body ? rq->body : "{}");
	} else if (strcmp(rq->method, "PATCH") == 0) {
		if (w->patch_status && w->patch_status != 200)
			ts_status(rs, w->patch_status, "NotFound", "events not found");
		else
			snprintf(rs->body, sizeof(rs->body), "{}");
	} else {
		ts_status(rs, 405, "MethodNotAllowed", "no");
	}
}

struct fx {
	struct ts_server s;
	struct world w;
	struct kube_client *client;
	struct clock *clock;
	struct recorder *r;
};

static struct recorder *make(struct fx *f, size_t cache, size_t queue, int burst)
{
	struct recorder_opts o;
	struct errbuf err;

	memset(&o, 0, sizeof(o));
	o.client = f->client;
	o.clock = f->clock;
	o.no_thread = true;
	o.cache_size = cache;
	o.queue_max = queue;
	o.spam_burst = burst;
	o.spam_refill_s = 300;
	recorder_free(f->r);
	f->r = recorder_new(&o, &err);
	assert_non_null(f->r);
	return f->r;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct kube_config cfg;
	struct errbuf err;

	signal(SIGPIPE, SIG_IGN);
	assert_non_null(f);
	assert_int_equal(ts_start(&f->s, handler, &f->w, NULL, NULL), 0);
	memset(&cfg, 0, sizeof(cfg));
	cfg.server = f->s.url;
	cfg.token = "t";
	f->client = kube_client_new(&cfg, NULL, &err);
	assert_non_null(f->client);
	f->clock = vclock_new(WALL0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	recorder_free(f->r);
	kube_client_free(f->client);
	ts_stop(&f->s);
	vclock_free(f->clock);
	free(f);
	return 0;
}

static const struct ts_req *req(struct fx *f, size_t i)
{
	assert_true(i < ts_count(&f->s));
	return &f->s.reqs[i];
}

static cJSON *body(struct fx *f, size_t i)
{
	cJSON *j = cJSON_Parse(req(f, i)->body);

	assert_non_null(j);
	return j;
}

static const char *jstr(const cJSON *j, const char *a, const char *b)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, a);

	if (b)
		v = cJSON_GetObjectItemCaseSensitive(v, b);
	assert_true(cJSON_IsString(v));
	return v->valuestring;
}

static int jint(const cJSON *j, const char *a)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, a);

	assert_true(cJSON_IsNumber(v));
	return v->valueint;
}

static void advance(struct fx *f, int64_t s)
{
	/* a virtual clock's wall time moves with its monotonic time */
	vclock_set(f->clock, clock_now(f->clock) + s * CLOCK_NS_PER_S);
}

static void test_same_event_is_counted(void **state)
{
	struct fx *f = *state;
	struct recorder *r = make(f, 0, 0, 0);
	struct recorder_stats st;
	cJSON *j;
	char name[256], path[512];

	assert_int_equal(recorder_pod_event(r, "team-a", "web-1", "uid-1", "Normal",
					    "NotTriggerScaleUp", "fits no group"), RECORDER_QUEUED);
	assert_int_equal(recorder_flush(r), 1);
	assert_string_equal(req(f, 0)->method, "POST");
	assert_string_equal(req(f, 0)->path, "/api/v1/namespaces/team-a/events");
	j = body(f, 0);
	assert_string_equal(jstr(j, "involvedObject", "kind"), "Pod");
	assert_string_equal(jstr(j, "involvedObject", "name"), "web-1");
	assert_string_equal(jstr(j, "involvedObject", "namespace"), "team-a");
	assert_string_equal(jstr(j, "involvedObject", "uid"), "uid-1");
	assert_string_equal(jstr(j, "reason", NULL), "NotTriggerScaleUp");
	assert_string_equal(jstr(j, "source", "component"), "luascale");
	assert_string_equal(jstr(j, "firstTimestamp", NULL), "2025-11-30T10:00:00Z");
	assert_int_equal(jint(j, "count"), 1);
	snprintf(name, sizeof(name), "%s", jstr(j, "metadata", "name"));
	assert_true(strncmp(name, "web-1.", 6) == 0);
	cJSON_Delete(j);

	advance(f, 30);
	assert_int_equal(recorder_pod_event(r, "team-a", "web-1", "uid-1", "Normal",
					    "NotTriggerScaleUp", "fits no group"), RECORDER_QUEUED);
	assert_int_equal(recorder_flush(r), 1);
	assert_string_equal(req(f, 1)->method, "PATCH");
	snprintf(path, sizeof(path), "/api/v1/namespaces/team-a/events/%s", name);
	assert_string_equal(req(f, 1)->path, path);
	assert_string_equal(req(f, 1)->ctype, "application/merge-patch+json");
	j = body(f, 1);
	assert_int_equal(jint(j, "count"), 2);
	assert_string_equal(jstr(j, "lastTimestamp", NULL), "2025-11-30T10:00:30Z");
	cJSON_Delete(j);
	/* another reason is another Event */
	assert_int_equal(recorder_pod_event(r, "team-a", "web-1", "uid-1", "Normal",
					    "TriggeredScaleUp", "workers 1->2"), RECORDER_QUEUED);
	assert_int_equal(recorder_flush(r), 1);
	assert_string_equal(req(f, 2)->method, "POST");
	recorder_get_stats(r, &st);
	assert_int_equal(st.created, 2);
	assert_int_equal(st.patched, 1);
	assert_int_equal(st.failed, 0);
}

static void test_similar_events_are_combined(void **state)
{
	struct fx *f = *state;
	struct recorder *r = make(f, 0, 0, 100);
	char msg[64];
	cJSON *j;
	int i;

	for (i = 0; i < 12; i++) {
		snprintf(msg, sizeof(msg), "reason number %d", i);
		assert_int_equal(recorder_pod_event(r, "ns", "p", "", "Normal", "NotTriggerScaleUp",
						    msg), RECORDER_QUEUED);
	}
	assert_int_equal(recorder_flush(r), 12);
	/* nine distinct messages: nine Events */
	for (i = 0; i < 9; i++)
		assert_string_equal(req(f, (size_t)i)->method, "POST");
	/* the tenth is the combined Event; the next ones count on it */
	j = body(f, 9);
	assert_string_equal(req(f, 9)->method, "POST");
	assert_string_equal(jstr(j, "message", NULL), "(combined from similar events): reason number 9");
	cJSON_Delete(j);
	assert_string_equal(req(f, 10)->method, "PATCH");
	j = body(f, 11);
	assert_string_equal(req(f, 11)->method, "PATCH");
	assert_int_equal(jint(j, "count"), 3);
	assert_string_equal(jstr(j, "message", NULL), "(combined from similar events): reason number 11");
	cJSON_Delete(j);
	/* once the window has passed, messages stand alone again */
	advance(f, 601);
	assert_int_equal(recorder_pod_event(r, "ns", "p", "", "Normal", "NotTriggerScaleUp", "fresh"),
			 RECORDER_QUEUED);
	assert_int_equal(recorder_flush(r), 1);
	j = body(f, 12);
	assert_string_equal(jstr(j, "message", NULL), "fresh");
	cJSON_Delete(j);
}

static void test_spam_bucket(void **state)
{
	struct fx *f = *state;
	struct recorder *r = make(f, 0, 0, 3);
	struct recorder_stats st;
	int i;

	for (i = 0; i < 3; i++)
		assert_int_equal(recorder_pod_event(r, "ns", "p", "", "Normal", "R", "m"),
				 RECORDER_QUEUED);
	assert_int_equal(recorder_pod_event(r, "ns", "p", "", "Normal", "R", "m"), RECORDER_SPAM);
	/* another pod has its own bucket */
	assert_int_equal(recorder_pod_event(r, "ns", "q", "", "Normal", "R", "m"), RECORDER_QUEUED);
	/* one token back after the refill time */
	advance(f, 299);
	assert_int_equal(recorder_pod_event(r, "ns", "p", "", "Normal", "R", "m"), RECORDER_SPAM);
	advance(f, 1);
	assert_int_equal(recorder_pod_event(r, "ns", "p", "", "Normal", "R", "m"), RECORDER_QUEUED);
	recorder_get_stats(r, &st);
	assert_int_equal(st.spam, 2);
	assert_int_equal(recorder_flush(r), 5);
}

static void test_lru_forgets_oldest(void **state)
{
	struct fx *f = *state;
	struct recorder *r = make(f, 2, 0, 0);

	assert_int_equal(recorder_pod_event(r, "ns", "a", "", "Normal", "R", "m"), RECORDER_QUEUED);
	assert_int_equal(recorder_pod_event(r, "ns", "b", "", "Normal", "R", "m"), RECORDER_QUEUED);
	/* a used again: b is now the oldest */
	assert_int_equal(recorder_pod_event(r, "ns", "a", "", "Normal", "R", "m"), RECORDER_QUEUED);
	assert_int_equal(recorder_pod_event(r, "ns", "c", "", "Normal", "R", "m"), RECORDER_QUEUED);
	/* b was forgotten: a new Event; a is still known: a count */
	assert_int_equal(recorder_pod_event(r, "ns", "b", "", "Normal", "R", "m"), RECORDER_QUEUED);
	assert_int_equal(recorder_flush(r), 5);
	assert_string_equal(req(f, 0)->method, "POST");
	assert_string_equal(req(f, 1)->method, "POST");
	assert_string_equal(req(f, 2)->method, "PATCH");
	assert_string_equal(req(f, 3)->method, "POST");
	assert_string_equal(req(f, 4)->method, "POST");
}

static void test_gone_event_is_made_again(void **state)
{
	struct fx *f = *state;
	struct recorder *r = make(f, 0, 0, 0);
	struct recorder_stats st;
	cJSON *a, *b;

	assert_int_equal(recorder_pod_event(r, "ns", "p", "u", "Warning", "R", "m"), RECORDER_QUEUED);
	assert_int_equal(recorder_flush(r), 1);
	f->w.patch_status = 404;
	assert_int_equal(recorder_pod_event(r, "ns", "p", "u", "Warning", "R", "m"), RECORDER_QUEUED);
	assert_int_equal(recorder_flush(r), 1);
	assert_string_equal(req(f, 1)->method, "PATCH");
	assert_string_equal(req(f, 2)->method, "POST");
	a = body(f, 0);
	b = body(f, 2);
	assert_string_equal(jstr(a, "metadata", "name"), jstr(b, "metadata", "name"));
	assert_int_equal(jint(b, "count"), 2);
	assert_string_equal(jstr(b, "type", NULL), "Warning");
	cJSON_Delete(a);
	cJSON_Delete(b);
	recorder_get_stats(r, &st);
	assert_int_equal(st.created, 2);
	assert_int_equal(st.failed, 0);
}

/* A new recorder (a restart, a standby that took over) writing for the
 * same object in the same second names its Event differently. */
static void test_restarted_recorder_names_anew(void **state)
{
	struct fx *f = *state;
	struct recorder *r = make(f, 0, 0, 0);
	cJSON *a, *b;

	assert_int_equal(recorder_pod_event(r, "ns", "p", "u", "Warning", "R", "m"), RECORDER_QUEUED);
	assert_int_equal(recorder_flush(r), 1);
	r = make(f, 0, 0, 0);
	assert_int_equal(recorder_pod_event(r, "ns", "p", "u", "Warning", "R", "m"), RECORDER_QUEUED);
	assert_int_equal(recorder_flush(r), 1);
	assert_string_equal(req(f, 0)->method, "POST");
	assert_string_equal(req(f, 1)->method, "POST");
	a = body(f, 0);
	b = body(f, 1);
	assert_true(strncmp(jstr(b, "metadata", "name"), "p.", 2) == 0);
	assert_string_not_equal(jstr(a, "metadata", "name"), jstr(b, "metadata", "name"));
	cJSON_Delete(a);
	cJSON_Delete(b);
}

static void test_full_inactive_and_cut(void **state)
{
	struct fx *f = *state;
	struct recorder *r = make(f, 0, 2, 0);
	char big[3000];
	cJSON *j;
	size_t i, n;

	assert_int_equal(recorder_pod_event(r, "ns", "a", "", "Normal", "R", "m"), RECORDER_QUEUED);
	assert_int_equal(recorder_pod_event(r, "ns", "b", "", "Normal", "R", "m"), RECORDER_QUEUED);
	assert_int_equal(recorder_pod_event(r, "ns", "c", "", "Normal", "R", "m"), RECORDER_FULL);
	/* a standby drops what it had queued and records nothing */
	recorder_set_active(r, false);
	assert_int_equal(recorder_flush(r), 0);
	assert_int_equal(recorder_pod_event(r, "ns", "d", "", "Normal", "R", "m"), RECORDER_INACTIVE);
	recorder_set_active(r, true);
	assert_int_equal(recorder_pod_event(r, "", "d", "", "Normal", "R", "m"), RECORDER_INVALID);
	/* a long message of two-byte characters is cut between two of them */
	for (i = 0; i + 2 < sizeof(big); i += 2) {
		big[i] = (char)0xc3;
		big[i + 1] = (char)0xa9;
	}
	big[i] = '\0';
	assert_int_equal(recorder_pod_event(r, "ns", "e", "", "Normal", "R", big), RECORDER_QUEUED);
	assert_int_equal(recorder_flush(r), 1);
	assert_int_equal(ts_count(&f->s), 1);
	j = body(f, 0);
	n = strlen(jstr(j, "message", NULL));
	assert_int_equal(n, RECORDER_MESSAGE_MAX);
	assert_int_equal((unsigned char)jstr(j, "message", NULL)[n - 1], 0xa9);
	cJSON_Delete(j);
}

static void test_thread_sends(void **state)
{
	struct fx *f = *state;
	struct recorder_opts o;
	struct errbuf err;
	struct recorder_stats st;
	int tries;

	memset(&o, 0, sizeof(o));
	o.client = f->client;
	f->r = recorder_new(&o, &err);
	assert_non_null(f->r);
	assert_int_equal(recorder_pod_event(f->r, "ns", "p", "", "Normal", "R", "m"), RECORDER_QUEUED);
	/* the thread sends it: wait for the condition, with a bound */
	for (tries = 0; tries < 1000; tries++) {
		struct timespec ts = {0, 10 * 1000 * 1000};

		recorder_get_stats(f->r, &st);
		if (st.created == 1)
			break;
		nanosleep(&ts, NULL);
	}
	assert_int_equal(st.created, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_same_event_is_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restarted_recorder_names_anew, setup, teardown),
		cmocka_unit_test_setup_teardown(test_similar_events_are_combined, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spam_bucket, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lru_forgets_oldest, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gone_event_is_made_again, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_inactive_and_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(test_thread_sends, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
