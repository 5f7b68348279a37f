/*
 * Tests for sim/apiserver/apiserver_events.c: the Events the simulated control plane
 * writes into the store for node and pod changes, how repeats fold (count
 * and lastTimestamp for the core recorder, series within its window for
 * the scheduler's), what each Event names, and the time to live — all on
 * a virtual clock.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "model.h"
#include "runtime/clock.h"
#include "sim/apiserver/apiserver_events.h"
#include "sim/apiserver/apiserver_store.h"

#define WALL0 1767225600 /* 2026-01-01T00:00:00Z */

struct fx {
	struct clock *clk;
	struct apiserver_store *st;
	struct apiserver_events *ev;
	struct node node;
	struct pod pod;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->clk = vclock_new(WALL0);
	f->st = apiserver_store_new(1000, 100);
	f->ev = apiserver_events_new(f->st, f->clk, 3600);
	assert_non_null(f->ev);
	f->node.name = "n1";
	f->pod.ns = "default";
	f->pod.name = "web-1";
	f->pod.uid = "";
	f->pod.node_name = "";
	f->pod.sched_message = "";
	f->pod.phase = POD_PENDING;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	apiserver_events_free(f->ev);
	apiserver_store_free(f->st);
	vclock_free(f->clk);
	free(f);
	return 0;
}

static void at(struct fx *f, int64_t s)
{
	vclock_set(f->clk, s * CLOCK_NS_PER_S);
}

/* Puts an object of 'r' named ns/name into the store (so Events can name its uid). */
static void put_obj(struct fx *f, enum apiserver_resource r, const char *ns, const char *name)
{
	cJSON *o = cJSON_CreateObject(), *m = cJSON_AddObjectToObject(o, "metadata");
	struct errbuf err;

	cJSON_AddStringToObject(m, "name", name);
	if (ns)
		cJSON_AddStringToObject(m, "namespace", ns);
	assert_int_equal(apiserver_store_put(f->st, r, o, clock_wall(f->clk), NULL, &err), 0);
}

static void node_change(struct fx *f, bool ready, bool gone)
{
	struct sim_change ch;

	memset(&ch, 0, sizeof(ch));
	ch.kind = SIM_OBJ_NODE;
	ch.node = &f->node;
	ch.gone = gone;
	f->node.ready = ready;
	apiserver_events_on_change(f->ev, &ch);
}

static void pod_change(struct fx *f, int64_t deleted)
{
	struct sim_change ch;

	memset(&ch, 0, sizeof(ch));
	ch.kind = SIM_OBJ_POD;
	ch.pod = &f->pod;
	ch.deleted_wall = deleted;
	ch.started_wall = -1;
	apiserver_events_on_change(f->ev, &ch);
}

/* The stored Events with this reason (parsed; the caller frees them). */
static size_t find(struct fx *f, const char *reason, cJSON **out, size_t cap)
{
	struct apiserver_ver *const *items;
	size_t n, i, k = 0;

	items = apiserver_store_list(f->st, APISERVER_EVENTS, &n);
	for (i = 0; i < n; i++) {
		cJSON *o = cJSON_ParseWithLength(items[i]->json, items[i]->len);
		const char *r = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "reason"));

		if (r && strcmp(r, reason) == 0 && k < cap)
			out[k++] = o;
		else
			cJSON_Delete(o);
	}
	return k;
}

static const char *str(const cJSON *o, const char *a, const char *b)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);

	if (b)
		x = cJSON_GetObjectItemCaseSensitive(x, b);
	return cJSON_GetStringValue(x);
}

static double num(const cJSON *o, const char *a, const char *b)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);

	if (b)
		x = cJSON_GetObjectItemCaseSensitive(x, b);
	assert_true(cJSON_IsNumber(x));
	return x->valuedouble;
}

static void free_all(cJSON **o, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		cJSON_Delete(o[i]);
}

static void test_failed_scheduling_names_the_pod_as_the_scheduler_does(void **state)
{
	struct fx *f = *state;
	const struct apiserver_ver *pod;
	cJSON *e[4];
	char rv[32];

	at(f, 5);
	put_obj(f, APISERVER_PODS, "default", "web-1");
	pod = apiserver_store_get(f->st, APISERVER_PODS, "default", "web-1");
	f->pod.flags = POD_UNSCHEDULABLE;
	f->pod.sched_message = "0/2 nodes are available: 2 Insufficient cpu.";
	apiserver_store_lock(f->st);
	pod_change(f, -1);
	apiserver_store_unlock(f->st);
	assert_int_equal(find(f, "FailedScheduling", e, 4), 1);
	assert_string_equal(str(e[0], "type", NULL), "Warning");
	assert_string_equal(str(e[0], "message", NULL), "0/2 nodes are available: 2 Insufficient cpu.");
	assert_string_equal(str(e[0], "metadata", "namespace"), "default");
	assert_true(strncmp(str(e[0], "metadata", "name"), "web-1.", 6) == 0);
	assert_string_equal(str(e[0], "involvedObject", "kind"), "Pod");
	assert_string_equal(str(e[0], "involvedObject", "apiVersion"), "v1");
	assert_string_equal(str(e[0], "involvedObject", "name"), "web-1");
	assert_string_equal(str(e[0], "involvedObject", "namespace"), "default");
	assert_string_equal(str(e[0], "involvedObject", "uid"), pod->uid);
	snprintf(rv, sizeof(rv), "%llu", (unsigned long long)pod->rv);
	assert_string_equal(str(e[0], "involvedObject", "resourceVersion"), rv);
	/* the events.k8s.io recorder: eventTime and action, no source or timestamps */
	assert_string_equal(str(e[0], "reportingComponent", NULL), "default-scheduler");
	assert_true(str(e[0], "reportingInstance", NULL)[0] != '\0');
	assert_string_equal(str(e[0], "eventTime", NULL), "2026-01-01T00:00:05.000000Z");
	assert_string_equal(str(e[0], "action", NULL), "Scheduling");
	assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(e[0], "firstTimestamp")));
	assert_null(str(e[0], "source", "component"));
	assert_null(cJSON_GetObjectItemCaseSensitive(e[0], "series"));
	free_all(e, 1);
}

static void test_a_repeated_failure_becomes_a_series_within_its_window(void **state)
{
	struct fx *f = *state;
	cJSON *e[4];
	size_t n;

	put_obj(f, APISERVER_PODS, "default", "web-1");
	apiserver_store_lock(f->st);
	f->pod.flags = POD_UNSCHEDULABLE;
	f->pod.sched_message = "0/2 nodes are available: 2 Insufficient cpu.";
	at(f, 10);
	pod_change(f, -1);
	/* the same message again changes nothing: no new attempt was reported */
	pod_change(f, -1);
	f->pod.sched_message = "0/3 nodes are available: 3 Insufficient cpu.";
	at(f, 20);
	pod_change(f, -1);
	f->pod.sched_message = "0/2 nodes are available: 2 Insufficient cpu.";
	at(f, 30);
	pod_change(f, -1);
	apiserver_store_unlock(f->st);
	n = find(f, "FailedScheduling", e, 4);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++) {
		if (strstr(str(e[i], "message", NULL), "0/2")) {
			assert_int_equal((int)num(e[i], "series", "count"), 2);
			assert_string_equal(str(e[i], "series", "lastObservedTime"),
					    "2026-01-01T00:00:30.000000Z");
			assert_string_equal(str(e[i], "eventTime", NULL), "2026-01-01T00:00:10.000000Z");
		} else {
			assert_null(cJSON_GetObjectItemCaseSensitive(e[i], "series"));
		}
	}
	free_all(e, n);
	/* past the series window, a repeat is a new Event */
	apiserver_store_lock(f->st);
	f->pod.sched_message = "other";
	at(f, 40);
	pod_change(f, -1);
	f->pod.sched_message = "0/2 nodes are available: 2 Insufficient cpu.";
	at(f, 30 + APISERVER_EVENT_SERIES_S + 1);
	pod_change(f, -1);
	apiserver_store_unlock(f->st);
	n = find(f, "FailedScheduling", e, 4);
	assert_int_equal(n, 4);
	free_all(e, n);
	/* a series goes on counting */
	apiserver_store_lock(f->st);
	f->pod.sched_message = "other";
	at(f, 400);
	pod_change(f, -1);
	f->pod.sched_message = "0/2 nodes are available: 2 Insufficient cpu.";
	at(f, 410);
	pod_change(f, -1);
	f->pod.sched_message = "other";
	at(f, 420);
	pod_change(f, -1);
	apiserver_store_unlock(f->st);
	n = find(f, "FailedScheduling", e, 4);
	assert_int_equal(n, 4);
	for (size_t i = 0; i < n; i++)
		if (strcmp(str(e[i], "message", NULL), "other") == 0)
			assert_int_equal((int)num(e[i], "series", "count"), 3);
	free_all(e, n);
}

static void test_binding_and_termination(void **state)
{
	struct fx *f = *state;
	cJSON *e[4];

	put_obj(f, APISERVER_PODS, "default", "web-1");
	apiserver_store_lock(f->st);
	at(f, 3);
	pod_change(f, -1); /* pending, not tried yet: nothing */
	assert_int_equal(find(f, "FailedScheduling", e, 4), 0);
	f->pod.node_name = "n1";
	f->pod.phase = POD_RUNNING;
	pod_change(f, -1);
	pod_change(f, -1); /* still bound: once */
	pod_change(f, 4);
	pod_change(f, 4);
	apiserver_store_unlock(f->st);
	assert_int_equal(find(f, "Scheduled", e, 4), 1);
	assert_string_equal(str(e[0], "message", NULL), "Successfully assigned default/web-1 to n1");
	assert_string_equal(str(e[0], "reportingComponent", NULL), "default-scheduler");
	assert_string_equal(str(e[0], "action", NULL), "Binding");
	assert_string_equal(str(e[0], "type", NULL), "Normal");
	free_all(e, 1);
	assert_int_equal(find(f, "Killing", e, 4), 1);
	/* the kubelet's (core) recorder */
	assert_string_equal(str(e[0], "source", "component"), "kubelet");
	assert_string_equal(str(e[0], "source", "host"), "n1");
	assert_string_equal(str(e[0], "reportingComponent", NULL), "kubelet");
	assert_string_equal(str(e[0], "reportingInstance", NULL), "n1");
	assert_string_equal(str(e[0], "firstTimestamp", NULL), "2026-01-01T00:00:03Z");
	assert_int_equal((int)num(e[0], "count", NULL), 1);
	assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(e[0], "eventTime")));
	free_all(e, 1);
	/* gone after it was killed: no second Killing */
	apiserver_store_lock(f->st);
	{
		struct sim_change ch;

		memset(&ch, 0, sizeof(ch));
		ch.kind = SIM_OBJ_POD;
		ch.pod = &f->pod;
		ch.gone = true;
		apiserver_events_on_change(f->ev, &ch);
	}
	apiserver_store_unlock(f->st);
	assert_int_equal(find(f, "Killing", e, 4), 1);
	free_all(e, 1);
}

static void test_a_running_pod_gone_at_once_was_killed(void **state)
{
	struct fx *f = *state;
	struct sim_change ch;
	cJSON *e[4];

	put_obj(f, APISERVER_PODS, "default", "web-1");
	apiserver_store_lock(f->st);
	f->pod.node_name = "n1";
	f->pod.phase = POD_RUNNING;
	pod_change(f, -1);
	memset(&ch, 0, sizeof(ch));
	ch.kind = SIM_OBJ_POD;
	ch.pod = &f->pod;
	ch.gone = true;
	apiserver_events_on_change(f->ev, &ch);
	/* a finished pod going is no kill */
	f->pod.name = "job-1";
	f->pod.phase = POD_SUCCEEDED;
	pod_change(f, -1);
	apiserver_events_on_change(f->ev, &ch);
	apiserver_store_unlock(f->st);
	assert_int_equal(find(f, "Killing", e, 4), 1);
	assert_string_equal(str(e[0], "involvedObject", "name"), "web-1");
	free_all(e, 1);
}

static void test_node_lifecycle(void **state)
{
	struct fx *f = *state;
	const struct apiserver_ver *node;
	cJSON *e[4];

	at(f, 1);
	put_obj(f, APISERVER_NODES, NULL, "n1");
	node = apiserver_store_get(f->st, APISERVER_NODES, NULL, "n1");
	apiserver_store_lock(f->st);
	node_change(f, false, false); /* registered, kubelet starting */
	apiserver_store_unlock(f->st);
	assert_int_equal(find(f, "Starting", e, 4), 1);
	assert_string_equal(str(e[0], "source", "component"), "kubelet");
	free_all(e, 1);
	assert_int_equal(find(f, "NodeReady", e, 4), 0);
	assert_int_equal(find(f, "RegisteredNode", e, 4), 1);
	assert_string_equal(str(e[0], "message", NULL), "Node n1 event: Registered Node n1 in Controller");
	assert_string_equal(str(e[0], "source", "component"), "node-controller");
	assert_string_equal(str(e[0], "reportingComponent", NULL), "node-controller");
	assert_string_equal(str(e[0], "metadata", "namespace"), "default");
	assert_null(str(e[0], "involvedObject", "namespace"));
	assert_string_equal(str(e[0], "involvedObject", "kind"), "Node");
	assert_string_equal(str(e[0], "involvedObject", "uid"), node->uid);
	free_all(e, 1);

	apiserver_store_lock(f->st);
	at(f, 2);
	node_change(f, true, false);
	at(f, 50);
	node_change(f, false, false);
	at(f, 60);
	node_change(f, true, false);
	apiserver_store_unlock(f->st);
	/* the core recorder folds the same report into one Event: count, lastTimestamp */
	assert_int_equal(find(f, "NodeReady", e, 4), 1);
	assert_string_equal(str(e[0], "message", NULL), "Node n1 status is now: NodeReady");
	assert_int_equal((int)num(e[0], "count", NULL), 2);
	assert_string_equal(str(e[0], "firstTimestamp", NULL), "2026-01-01T00:00:02Z");
	assert_string_equal(str(e[0], "lastTimestamp", NULL), "2026-01-01T00:01:00Z");
	/* a kubelet names its node by name */
	assert_string_equal(str(e[0], "involvedObject", "uid"), "n1");
	free_all(e, 1);
	assert_int_equal(find(f, "NodeNotReady", e, 4), 1);
	assert_string_equal(str(e[0], "source", "component"), "node-controller");
	free_all(e, 1);

	apiserver_store_lock(f->st);
	node_change(f, true, true);
	apiserver_store_unlock(f->st);
	assert_int_equal(find(f, "RemovingNode", e, 4), 1);
	assert_string_equal(str(e[0], "message", NULL), "Node n1 event: Removing Node n1 from Controller");
	free_all(e, 1);
}

static void test_events_expire_after_their_ttl(void **state)
{
	struct fx *f = *state;
	size_t n;

	apiserver_store_lock(f->st);
	at(f, 0);
	node_change(f, false, false);
	apiserver_store_list(f->st, APISERVER_EVENTS, &n);
	assert_true(n >= 5);
	at(f, 1800);
	node_change(f, true, false); /* NodeReady at 30 min */
	at(f, 3600);
	assert_int_equal(apiserver_events_expire(f->ev), 0);
	at(f, 3601);
	assert_int_equal(apiserver_events_expire(f->ev), n); /* registration's go */
	apiserver_store_list(f->st, APISERVER_EVENTS, &n);
	assert_int_equal(n, 1);
	at(f, 1800 + 3601);
	assert_int_equal(apiserver_events_expire(f->ev), 1);
	apiserver_store_list(f->st, APISERVER_EVENTS, &n);
	assert_int_equal(n, 0);
	/* a report after its Event expired makes a new one */
	node_change(f, false, false);
	node_change(f, true, false);
	apiserver_store_unlock(f->st);
	{
		cJSON *e[2];

		assert_int_equal(find(f, "NodeReady", e, 2), 1);
		assert_int_equal((int)num(e[0], "count", NULL), 1);
		free_all(e, 1);
	}
}

static void test_many_nodes_keep_the_store_bounded(void **state)
{
	struct fx *f = *state;
	char name[32];
	size_t n, i;

	apiserver_store_lock(f->st);
	for (i = 0; i < 2000; i++) {
		snprintf(name, sizeof(name), "node-%zu", i);
		f->node.name = name;
		node_change(f, true, false);
	}
	apiserver_store_list(f->st, APISERVER_EVENTS, &n);
	apiserver_store_unlock(f->st);
	assert_int_equal(n, 100); /* the store's cap: the oldest went */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_failed_scheduling_names_the_pod_as_the_scheduler_does,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_repeated_failure_becomes_a_series_within_its_window,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_binding_and_termination, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_running_pod_gone_at_once_was_killed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_node_lifecycle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_events_expire_after_their_ttl, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_nodes_keep_the_store_bounded, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
