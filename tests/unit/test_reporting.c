/*
 * Tests for what the daemon reports: the status board's text and JSON
 * (health, sizes, backoff, last scale-up and scale-down, last policy
 * error), the Events each unschedulable pod gets from podevents.c, and
 * the status ConfigMap's create-or-update against a loopback API server
 * (create, replace with its resourceVersion, a conflict read again, a
 * missing namespace).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <cjson/cJSON.h>
#include <signal.h>

#include "buf.h"
#include "engine/podevents.h"
#include "engine/status.h"
#include "kube/statuswriter.h"
#include "model.h"
#include "policy/plan.h"
#include "test_kube_server.h"

#define NOW 1764496800 /* 2025-11-30T10:00:00Z */
#define LABEL "luascale.io/node-group"

/* ---- a small cluster ---- */

struct cluster {
	struct buf items;
	struct node_group groups[2];
	struct kv kv[2];
	struct snapshot *s;
};

static void item(struct cluster *c, const char *json)
{
	if (c->items.len)
		buf_puts(&c->items, ",");
	buf_puts(&c->items, json);
}

static void node(struct cluster *c, const char *name, const char *group, bool ready)
{
	char j[1024];

	snprintf(j, sizeof(j),
		 "{\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"labels\":{\"" LABEL "\":\"%s\"},"
		 "\"creationTimestamp\":\"2025-11-30T08:00:00Z\"},\"spec\":{},"
		 "\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"16Gi\",\"pods\":\"110\"},"
		 "\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\"}]}}",
		 name, group, ready ? "True" : "False");
	item(c, j);
}

static void pending(struct cluster *c, const char *name, const char *requests, bool unschedulable)
{
	char j[1024];

	snprintf(j, sizeof(j),
		 "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\","
		 "\"uid\":\"uid-%s\",\"creationTimestamp\":\"2025-11-30T09:00:00Z\"},"
		 "\"spec\":{\"containers\":[{\"name\":\"main\",\"resources\":{\"requests\":{%s},"
		 "\"limits\":{%s}}}]},\"status\":{\"phase\":\"Pending\",\"conditions\":["
		 "{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"%s\"}]}}",
		 name, name, requests, strstr(requests, "gpu") ? "\"nvidia.com/gpu\":\"1\"" : "",
		 unschedulable ? "Unschedulable" : "SchedulerError");
	item(c, j);
}

static struct node_group *group(struct cluster *c, size_t i, const char *name, int cpu,
				int min, int max, int target)
{
	struct node_group *g = &c->groups[i];

	memset(g, 0, sizeof(*g));
	c->kv[i].key = LABEL;
	c->kv[i].value = name;
	g->name = name;
	g->min = min;
	g->max = max;
	g->selector.items = &c->kv[i];
	g->selector.n = 1;
	g->tmpl.labels = g->selector;
	g->tmpl.allocatable.cpu_m = cpu * 1000;
	g->tmpl.allocatable.memory = 16LL << 30;
	g->tmpl.allocatable.pods = 110;
	g->target = target;
	return g;
}

static struct snapshot *finish(struct cluster *c, size_t n_groups)
{
	struct buf doc = BUF_INIT;
	struct errbuf err;

	buf_printf(&doc, "{\"kind\":\"List\",\"items\":[%s]}", c->items.data ? c->items.data : "");
	c->s = snapshot_new();
	assert_non_null(c->s);
	if (snapshot_add_json(c->s, doc.data, doc.len, "test", &err) ||
	    snapshot_set_groups(c->s, c->groups, n_groups, &err) ||
	    snapshot_finish(c->s, NOW, &err))
		fail_msg("snapshot: %s", err.msg);
	buf_free(&doc);
	return c->s;
}

static void cluster_free(struct cluster *c)
{
	snapshot_free(c->s);
	buf_free(&c->items);
}

static void add_action(struct plan *p, enum action_type t, const char *group, const char *node,
		       int64_t count, const char *reason)
{
	struct action a;

	memset(&a, 0, sizeof(a));
	a.type = t;
	a.group = (char *)group;
	a.node = (char *)node;
	a.count = count;
	a.reason = (char *)reason;
	a.where = (char *)"policy.lua:7";
	assert_int_equal(plan_add(p, &a), 0);
}

/* ---- the status board ---- */

static void test_status_board(void **state)
{
	struct cluster c;
	struct status_board *b = status_board_new();
	struct buf text = BUF_INIT, json = BUF_INIT;
	struct plan p;
	struct round_view v;
	struct reload_result rr;
	struct snapshot *s;
	cJSON *j, *g;
	int i;

	(void)state;
	memset(&c, 0, sizeof(c));
	/* workers: 2 ready; gpu: 5 registered, 4 not ready, and backed off */
	node(&c, "w1", "workers", true);
	node(&c, "w2", "workers", true);
	for (i = 0; i < 5; i++) {
		char n[16];

		snprintf(n, sizeof(n), "g%d", i);
		node(&c, n, "gpu", i == 0);
	}
	pending(&c, "p1", "\"cpu\":\"1\"", true);
	group(&c, 0, "workers", 4, 1, 6, 4);
	group(&c, 1, "gpu", 4, 0, 8, 5)->backoff_until = NOW + 300;
	snprintf(c.groups[1].backoff_reason, sizeof(c.groups[1].backoff_reason), "quota exceeded");
	s = finish(&c, 2);
	/* the snapshot copied the groups: backoff set on the copy as the actuator does */
	s->groups[1].backoff_until = NOW + 300;
	snprintf(s->groups[1].backoff_reason, sizeof(s->groups[1].backoff_reason), "quota exceeded");

	plan_init(&p);
	add_action(&p, ACTION_SCALE_UP, "workers", NULL, 2, "1 pending pod");
	add_action(&p, ACTION_DRAIN, NULL, "g3", 0, "underutilized 12m");
	memset(&v, 0, sizeof(v));
	v.accepted = &p;
	status_board_round(b, s, &v);
	/* a later round without actions keeps them; a failed reload is the error */
	memset(&rr, 0, sizeof(rr));
	rr.attempted = true;
	snprintf(rr.message, sizeof(rr.message), "policy.lua:3: syntax error");
	v.accepted = NULL;
	v.reload = &rr;
	status_board_round(b, s, &v);
	assert_int_equal(status_board_render(b, s, &text, &json), 0);

	assert_non_null(strstr(text.data, "luascale status at 2025-11-30T10:00:00Z:"));
	assert_non_null(strstr(text.data, "  Health:       Unhealthy (ready=3 unready=4 registered=7)"));
	assert_non_null(strstr(text.data, "  ScaleUp:      2025-11-30T10:00:00Z: workers +2: 1 pending pod"));
	assert_non_null(strstr(text.data, "  ScaleDown:    2025-11-30T10:00:00Z: drain g3: underutilized 12m"));
	assert_non_null(strstr(text.data, "PolicyError:  2025-11-30T10:00:00Z: reload failed, the policy in place stays: policy.lua:3: syntax error"));
	assert_non_null(strstr(text.data, "  Name:         workers\n  Health:       Healthy (ready=2 unready=0 registered=2 upcoming=2 target=4 min=1 max=6)"));
	assert_non_null(strstr(text.data, "  Backoff:      until 2025-11-30T10:05:00Z: quota exceeded"));

	j = cJSON_Parse(json.data);
	assert_non_null(j);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "cluster"), "health")->valuestring, "Unhealthy");
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "cluster"), "unschedulablePods")->valueint, 1);
	g = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "groups"), 0);
	assert_string_equal(cJSON_GetObjectItem(g, "name")->valuestring, "workers");
	assert_int_equal(cJSON_GetObjectItem(g, "target")->valueint, 4);
	assert_int_equal(cJSON_GetObjectItem(g, "ready")->valueint, 2);
	assert_int_equal(cJSON_GetObjectItem(g, "upcoming")->valueint, 2);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(g, "backoffUntil")));
	g = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "groups"), 1);
	assert_string_equal(cJSON_GetObjectItem(g, "health")->valuestring, "Backoff");
	assert_string_equal(cJSON_GetObjectItem(g, "backoffUntil")->valuestring, "2025-11-30T10:05:00Z");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "lastScaleUp"), "group")->valuestring, "workers");
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "lastScaleUp"), "count")->valueint, 2);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "lastScaleDown"), "node")->valuestring, "g3");
	assert_non_null(strstr(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "lastPolicyError"), "message")->valuestring, "syntax error"));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "lastPolicyError"), "resolvedAt")));
	cJSON_Delete(j);
	buf_free(&text);
	buf_free(&json);

	/* clean rounds do not end a refused reload; a reload that takes does */
	memset(&v, 0, sizeof(v));
	v.accepted = &p;
	status_board_round(b, s, &v);
	assert_int_equal(status_board_render(b, s, &text, &json), 0);
	assert_null(strstr(text.data, "over since"));
	buf_free(&text);
	buf_free(&json);
	memset(&rr, 0, sizeof(rr));
	rr.attempted = true;
	rr.ok = true;
	v.reload = &rr;
	status_board_round(b, s, &v);
	assert_int_equal(status_board_render(b, s, &text, &json), 0);
	assert_non_null(strstr(text.data, "syntax error (over since 2025-11-30T10:00:00Z: a reload took)"));
	j = cJSON_Parse(json.data);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "lastPolicyError"), "resolvedAt")->valuestring, "2025-11-30T10:00:00Z");
	cJSON_Delete(j);
	buf_free(&text);
	buf_free(&json);
	/* a failed round is over with the next clean one */
	v.reload = NULL;
	v.policy_error = "policy.lua:9: attempt to index a nil value";
	status_board_round(b, s, &v);
	assert_int_equal(status_board_render(b, s, &text, &json), 0);
	assert_non_null(strstr(text.data, "policy.lua:9: attempt to index a nil value\n"));
	buf_free(&text);
	buf_free(&json);
	v.policy_error = NULL;
	status_board_round(b, s, &v);
	assert_int_equal(status_board_render(b, s, &text, &json), 0);
	assert_non_null(strstr(text.data, "nil value (over since 2025-11-30T10:00:00Z: the policy ran cleanly)"));
	buf_free(&text);
	buf_free(&json);
	plan_free(&p);
	status_board_free(b);
	cluster_free(&c);
}

/* ---- Events on pods ---- */

struct told {
	char names[8][32];
	char reasons[8][32];
	char msgs[8][1100];
	size_t n;
};

static void tell(void *ctx, const struct pod *p, const char *type, const char *reason,
		 const char *message)
{
	struct told *t = ctx;

	assert_string_equal(type, "Normal");
	assert_true(t->n < 8);
	snprintf(t->names[t->n], sizeof(t->names[0]), "%s", p->name);
	snprintf(t->reasons[t->n], sizeof(t->reasons[0]), "%s", reason);
	snprintf(t->msgs[t->n], sizeof(t->msgs[0]), "%s", message);
	t->n++;
}

static size_t find(const struct told *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->names[i], name) == 0)
			return i;
	fail_msg("no Event for %s", name);
	return 0;
}

static void test_pod_events(void **state)
{
	struct cluster c;
	struct told t;
	struct plan p;
	struct snapshot *s;
	size_t i;

	(void)state;
	memset(&c, 0, sizeof(c));
	memset(&t, 0, sizeof(t));
	node(&c, "w1", "workers", true);
	pending(&c, "small", "\"cpu\":\"1\"", true);
	pending(&c, "huge", "\"cpu\":\"16\"", true);
	pending(&c, "gpu", "\"cpu\":\"1\",\"nvidia.com/gpu\":\"1\"", true);
	pending(&c, "medium", "\"cpu\":\"6\"", true);
	pending(&c, "fresh", "\"cpu\":\"1\"", false); /* not yet tried by the scheduler */
	group(&c, 0, "workers", 4, 1, 6, 1);
	group(&c, 1, "big", 8, 0, 2, 2); /* at its max */
	s = finish(&c, 2);
	plan_init(&p);
	add_action(&p, ACTION_SCALE_UP, "workers", NULL, 2, "pending");
	assert_int_equal(podevents_explain(s, &p, 0, tell, &t), 4);
	assert_int_equal(t.n, 4);

	i = find(&t, "small");
	assert_string_equal(t.reasons[i], PODEVENT_TRIGGERED);
	assert_string_equal(t.msgs[i], "pod triggered scale-up: workers 1->3 (max: 6)");
	i = find(&t, "gpu");
	assert_string_equal(t.reasons[i], PODEVENT_NOT_TRIGGERED);
	assert_non_null(strstr(t.msgs[i], "fits no group: needs nvidia.com/gpu ("));
	assert_non_null(strstr(t.msgs[i], "workers: insufficient nvidia.com/gpu: needs 1, free 0"));
	i = find(&t, "huge");
	assert_string_equal(t.reasons[i], PODEVENT_NOT_TRIGGERED);
	assert_non_null(strstr(t.msgs[i], "fits no group: needs cpu (workers: insufficient cpu: needs 16, free 4; big: insufficient cpu: needs 16, free 8)"));
	/* fits only "big", which is at its max with its two nodes on their
	 * way: it waits for them, and is not told it triggered nothing */
	i = find(&t, "medium");
	assert_string_equal(t.reasons[i], PODEVENT_WAITING);
	assert_string_equal(t.msgs[i], "pod waits for a node on its way: group big has 2 launched and not registered yet (0 starting; 0->2)");

	/* no scale-up at all: the group that fits was not chosen by the policy */
	memset(&t, 0, sizeof(t));
	plan_free(&p);
	plan_init(&p);
	assert_int_equal(podevents_explain(s, &p, 1, tell, &t), 1);
	assert_string_equal(t.names[0], "small");
	/* no scale-up for it, but big's two nodes on their way take it */
	assert_string_equal(t.reasons[0], PODEVENT_WAITING);
	assert_non_null(strstr(t.msgs[0], "group big has 2 launched"));
	plan_free(&p);
	cluster_free(&c);
}

/* Pods that the capacity on its way takes wait for it: the node starting
 * is named; the pods it cannot take are told as before. */
static void test_pod_events_waiting_for_a_node(void **state)
{
	struct cluster c;
	struct told t;
	struct plan p;
	struct snapshot *s;
	size_t i;

	(void)state;
	memset(&c, 0, sizeof(c));
	memset(&t, 0, sizeof(t));
	node(&c, "w1", "workers", true);
	/* w2 registered 2 minutes ago, not Ready yet */
	item(&c, "{\"kind\":\"Node\",\"metadata\":{\"name\":\"w2\",\"labels\":{\"" LABEL "\":\"workers\"},"
		 "\"creationTimestamp\":\"2025-11-30T09:58:00Z\"},\"spec\":{},"
		 "\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"16Gi\",\"pods\":\"110\"},"
		 "\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"}]}}");
	pending(&c, "a", "\"cpu\":\"3\"", true);
	pending(&c, "b", "\"cpu\":\"3\"", true);
	pending(&c, "c", "\"cpu\":\"3\"", true);
	group(&c, 0, "workers", 4, 1, 6, 3); /* w1, w2 starting, one instance launched */
	s = finish(&c, 1);
	plan_init(&p);
	assert_int_equal(podevents_explain(s, &p, 0, tell, &t), 3);
	/* a on w2, b on the launched instance, c on nothing */
	i = find(&t, "a");
	assert_string_equal(t.reasons[i], PODEVENT_WAITING);
	assert_string_equal(t.msgs[i], "pod waits for node w2 of group workers, starting (not Ready yet)");
	i = find(&t, "b");
	assert_string_equal(t.reasons[i], PODEVENT_WAITING);
	assert_string_equal(t.msgs[i], "pod waits for a node on its way: group workers has 1 launched and not registered yet (1 starting; 1->3)");
	i = find(&t, "c");
	assert_string_equal(t.reasons[i], PODEVENT_NOT_TRIGGERED);
	plan_free(&p);
	cluster_free(&c);
}

/* A replica whose hostname spread the nodes on their way let an existing
 * node take waits for them too, and is told which node takes it. */
static void test_pod_events_waiting_for_an_existing_node(void **state)
{
	static const char spread[] =
		"\"labels\":{\"app\":\"est\"}},\"spec\":{\"topologySpreadConstraints\":[{\"maxSkew\":1,"
		"\"topologyKey\":\"kubernetes.io/hostname\",\"whenUnsatisfiable\":\"DoNotSchedule\","
		"\"minDomains\":3,\"labelSelector\":{\"matchLabels\":{\"app\":\"est\"}}}],"
		"\"containers\":[{\"name\":\"main\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]";
	struct cluster c;
	struct told t;
	struct plan p;
	struct snapshot *s;
	char j[2048];
	size_t i, n_old = 0, n_up = 0;
	int k;

	(void)state;
	memset(&c, 0, sizeof(c));
	memset(&t, 0, sizeof(t));
	/* old, of no group, runs est-0; "workers" has 2 nodes launched */
	item(&c, "{\"kind\":\"Node\",\"metadata\":{\"name\":\"old\",\"labels\":{\"kubernetes.io/hostname\":\"old\"},"
		 "\"creationTimestamp\":\"2025-11-30T08:00:00Z\"},\"spec\":{},"
		 "\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"16Gi\",\"pods\":\"110\"},"
		 "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}");
	for (k = 0; k < 8; k++) {
		snprintf(j, sizeof(j),
			 "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"est-%d\",\"namespace\":\"default\","
			 "\"uid\":\"uid-est-%d\",\"creationTimestamp\":\"2025-11-30T09:00:00Z\",%s%s},"
			 "\"status\":{\"phase\":\"%s\"%s}}",
			 k, k, spread, k ? "" : ",\"nodeName\":\"old\"", k ? "Pending" : "Running",
			 k ? ",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\","
			     "\"reason\":\"Unschedulable\"}]" : "");
		item(&c, j);
	}
	group(&c, 0, "workers", 4, 0, 6, 2);
	s = finish(&c, 1);
	plan_init(&p);
	assert_int_equal(podevents_explain(s, &p, 0, tell, &t), 7);
	/* three domains once the two count: 3 on each, and old takes a second */
	for (i = 0; i < t.n; i++) {
		assert_string_equal(t.reasons[i], PODEVENT_WAITING);
		if (strstr(t.msgs[i], "node old takes it"))
			n_old++;
		else if (strstr(t.msgs[i], "group workers has 2 launched"))
			n_up++;
	}
	assert_int_equal(n_old, 1);
	assert_int_equal(n_up, 6);
	plan_free(&p);
	cluster_free(&c);
}

/* ---- the status ConfigMap ---- */

struct apiserver {
	char rv[16];
	bool exists;
	int conflicts;      /* PUTs to answer 409 first */
	bool no_namespace;
};

static void cm_handler(void *ud, size_t index, const struct ts_req *rq, struct ts_resp *rs)
{
	struct apiserver *a = ud;

	(void)index;
	if (strcmp(rq->method, "GET") == 0) {
		if (!a->exists) {
			ts_status(rs, 404, "NotFound", "configmaps \\\"luascale-status\\\" not found");
			return;
		}
		snprintf(rs->body, sizeof(rs->body),
			 "{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"luascale-status\","
			 "\"namespace\":\"kube-system\",\"resourceVersion\":\"%s\"},"
			 "\"data\":{\"status\":\"all good\"}}", a->rv);
	} else if (strcmp(rq->method, "POST") == 0) {
		if (a->no_namespace) {
			ts_status(rs, 404, "NotFound", "namespaces \\\"kube-system\\\" not found");
			return;
		}
		a->exists = true;
		snprintf(a->rv, sizeof(a->rv), "10");
		rs->status = 201;
		snprintf(rs->body, sizeof(rs->body), "{}");
	} else if (strcmp(rq->method, "PUT") == 0) {
		if (a->conflicts > 0) {
			a->conflicts--;
			snprintf(a->rv, sizeof(a->rv), "%d", atoi(a->rv) + 1);
			ts_status(rs, 409, "Conflict", "the object has been modified");
			return;
		}
		snprintf(rs->body, sizeof(rs->body), "{}");
	}
}

static void test_configmap_put(void **state)
{
	struct ts_server srv;
	struct apiserver a;
	struct kube_config cfg;
	struct kube_client *cl;
	struct errbuf err;
	const char *keys[] = {"status", "status.json"}, *vals[] = {"text", "{\"a\":1}"};
	char *out = NULL;
	cJSON *j;
	size_t n;

	(void)state;
	signal(SIGPIPE, SIG_IGN);
	memset(&a, 0, sizeof(a));
	assert_int_equal(ts_start(&srv, cm_handler, &a, NULL, NULL), 0);
	memset(&cfg, 0, sizeof(cfg));
	cfg.server = srv.url;
	cfg.token = "t";
	cl = kube_client_new(&cfg, NULL, &err);
	assert_non_null(cl);

	/* missing: `luascale status` says so */
	assert_int_equal(kube_configmap_get_key(cl, "kube-system", "luascale-status", "status", &out, &err), 1);
	assert_non_null(strstr(err.msg, "ConfigMap kube-system/luascale-status not found"));
	/* created */
	assert_int_equal(kube_configmap_put(cl, "kube-system", "luascale-status", keys, vals, 2, NOW, &err), 0);
	assert_string_equal(srv.reqs[1].method, "GET");
	assert_string_equal(srv.reqs[2].method, "POST");
	assert_string_equal(srv.reqs[2].path, "/api/v1/namespaces/kube-system/configmaps");
	j = cJSON_Parse(srv.reqs[2].body);
	assert_non_null(j);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "data"), "status.json")->valuestring, "{\"a\":1}");
	assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "metadata"), "resourceVersion"));
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "metadata"), "annotations"),
						"luascale.io/last-updated")->valuestring, "2025-11-30T10:00:00Z");
	cJSON_Delete(j);
	/* replaced, after two conflicts each read again */
	a.conflicts = 2;
	n = ts_count(&srv);
	assert_int_equal(kube_configmap_put(cl, "kube-system", "luascale-status", keys, vals, 2, NOW, &err), 0);
	assert_int_equal(ts_count(&srv), n + 6);
	assert_string_equal(srv.reqs[n + 5].method, "PUT");
	assert_string_equal(srv.reqs[n + 5].path, "/api/v1/namespaces/kube-system/configmaps/luascale-status");
	j = cJSON_Parse(srv.reqs[n + 5].body);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "metadata"), "resourceVersion")->valuestring, "12");
	cJSON_Delete(j);
	/* endless conflicts: an error, not a loop */
	a.conflicts = 100;
	assert_int_equal(kube_configmap_put(cl, "kube-system", "luascale-status", keys, vals, 2, NOW, &err), -1);
	assert_non_null(strstr(err.msg, "conflict"));
	a.conflicts = 0;
	/* read back */
	assert_int_equal(kube_configmap_get_key(cl, "kube-system", "luascale-status", "status", &out, &err), 0);
	assert_string_equal(out, "all good");
	free(out);
	assert_int_equal(kube_configmap_get_key(cl, "kube-system", "luascale-status", "nope", &out, &err), -1);
	assert_non_null(strstr(err.msg, "no key \"nope\""));
	/* a namespace that does not exist: a clear error at once */
	a.exists = false;
	a.no_namespace = true;
	n = ts_count(&srv);
	assert_int_equal(kube_configmap_put(cl, "kube-system", "luascale-status", keys, vals, 2, NOW, &err), -1);
	assert_int_equal(ts_count(&srv), n + 2);
	assert_non_null(strstr(err.msg, "namespaces"));
	kube_client_free(cl);
	ts_stop(&srv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_board),
		cmocka_unit_test(test_pod_events),
		cmocka_unit_test(test_pod_events_waiting_for_a_node),
		cmocka_unit_test(test_pod_events_waiting_for_an_existing_node),
		cmocka_unit_test(test_configmap_put),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
