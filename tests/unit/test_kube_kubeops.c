/*
 * Tests for kubeops_http against a local libmicrohttpd server: the exact
 * requests behind cordon, labels, annotations, taints (read-modify-write
 * with resourceVersion and 409 retries), evictions (429 = PDB, 404 = gone), Bindings (409 = bound already),
 * node deletion, a node's pods across pages, and Events on nodes.
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
#include "kube/kubeops_http.h"
#include "runtime/clock.h"
#include "test_kube_server.h"

#define WALL0 1767225600LL /* 2026-01-01T00:00:00Z */
#define TOKEN "ops-token-0123456789"

/* What the fake API server does. Guarded by the server's lock. */
struct world {
	int rv;               /* the node's resourceVersion */
	int conflicts;        /* PATCHes to answer 409 (each bumps rv) */
	const char *taints;   /* the node's spec.taints JSON, or NULL */
	int status;           /* forced status for every request, 0: none */
	const char *message;  /* with 'status' */
	int gone_on_continue; /* answer 410 to this many continue requests */
	const char *body;     /* with 'status': the whole answer instead of a plain Status */
};

static void node_json(const struct world *w, struct ts_resp *rs)
{
	snprintf(rs->body, sizeof(rs->body),
		 "{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"n1\","
		 "\"resourceVersion\":\"%d\",\"labels\":{\"a\":\"b\"}},\"spec\":{%s%s}}",
		 w->rv, w->taints ? "\"taints\":" : "", w->taints ? w->taints : "");
}

#define POD(ns, name, extra_meta, phase) \
	"{\"metadata\":{\"namespace\":\"" ns "\",\"name\":\"" name "\"" extra_meta "}," \
	"\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"" phase "\"}}"

static void h_world(void *ud, size_t i, const struct ts_req *rq, struct ts_resp *rs)
{
	struct world *w = ud;

	(void)i;
	if (w->status && w->body) {
		rs->status = w->status;
		snprintf(rs->body, sizeof(rs->body), "%s", w->body);
		return;
	}
	if (w->status) {
		if (w->status == 404)
			ts_status(rs, 404, "NotFound", w->message ? w->message : "not found");
		else
			ts_status(rs, w->status, "Failure", w->message ? w->message : "failed");
		return;
	}
	if (strcmp(rq->path, "/api/v1/nodes/n1") == 0 && strcmp(rq->method, "GET") == 0) {
		node_json(w, rs);
	} else if (strcmp(rq->path, "/api/v1/nodes/n1") == 0 && strcmp(rq->method, "PATCH") == 0) {
		if (w->conflicts > 0) {
			w->conflicts--;
			w->rv++;
			ts_status(rs, 409, "Conflict",
				  "Operation cannot be fulfilled on nodes n1: the object has been modified");
			return;
		}
		w->rv++;
		node_json(w, rs);
	} else if (strcmp(rq->path, "/api/v1/pods") == 0) {
		if (strstr(rq->args, "continue=") && w->gone_on_continue > 0) {
			w->gone_on_continue--;
			ts_status(rs, 410, "Expired", "The provided continue parameter is too old");
			return;
		}
		if (!strstr(rq->args, "continue=")) {
			snprintf(rs->body, sizeof(rs->body),
				 "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"continue\":\"c1/x=\"},"
				 "\"items\":[" POD("default", "web", "", "Running") ","
				 POD("kube-system", "ds", ",\"ownerReferences\":[{\"kind\":\"DaemonSet\",\"name\":\"d\"}]", "Running") ","
				 POD("kube-system", "mirror",
				     ",\"annotations\":{\"kubernetes.io/config.mirror\":\"x\",\"kubernetes.io/config.source\":\"file\"}",
				     "Running") "]}");
		} else {
			snprintf(rs->body, sizeof(rs->body),
				 "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"continue\":\"\"},"
				 "\"items\":[" POD("jobs", "done", "", "Succeeded") ","
				 POD("jobs", "failed", "", "Failed") ","
				 POD("hub", "leaving", ",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"", "Running") ","
				 POD("hub", "pending", ",\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"r\"}]",
				     "Pending") "]}");
		}
	} else if (strstr(rq->path, "/binding")) {
		rs->status = 201;
		snprintf(rs->body, sizeof(rs->body), "{\"kind\":\"Status\",\"status\":\"Success\"}");
	} else if (strstr(rq->path, "/eviction")) {
		rs->status = 201;
		snprintf(rs->body, sizeof(rs->body), "{\"kind\":\"Status\",\"status\":\"Success\"}");
	} else if (strcmp(rq->path, "/api/v1/namespaces/default/events") == 0) {
		rs->status = 201;
		snprintf(rs->body, sizeof(rs->body), "%s", rq->body);
	}
}

struct fixture {
	struct ts_server s;
	struct world w;
	struct kube_client *client;
	struct kubeops_http *h;
	struct kubeops ops;
	struct clock *clock;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct kube_config cfg;
	struct kubeops_http_opts o = {0};
	struct errbuf err = {""};

	signal(SIGPIPE, SIG_IGN);
	if (!f)
		return -1;
	f->w.rv = 5;
	if (ts_start(&f->s, h_world, &f->w, NULL, NULL))
		return -1;
	memset(&cfg, 0, sizeof(cfg));
	cfg.server = f->s.url;
	cfg.token = TOKEN;
	f->client = kube_client_new(&cfg, NULL, &err);
	f->clock = vclock_new(WALL0);
	o.clock = f->clock;
	o.conflict_retries = 2;
	o.page_limit = 3;
	f->h = kubeops_http_new(f->client, &o);
	if (!f->client || !f->h)
		return -1;
	kubeops_http_bind(f->h, &f->ops);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	kubeops_http_free(f->h);
	kube_client_free(f->client);
	ts_stop(&f->s);
	vclock_free(f->clock);
	free(f);
	return 0;
}

static const struct ts_req *req(struct fixture *f, size_t i)
{
	assert_true(i < ts_count(&f->s));
	return &f->s.reqs[i];
}

static void test_cordon_and_uncordon(void **state)
{
	struct fixture *f = *state;
	struct kube_status st;

	assert_int_equal(f->ops.ops->cordon(f->ops.ctx, "n1", true, &st), 0);
	assert_int_equal(st.code, KUBE_OK);
	assert_int_equal(f->ops.ops->cordon(f->ops.ctx, "n1", false, &st), 0);
	assert_int_equal(ts_count(&f->s), 2);
	assert_string_equal(req(f, 0)->method, "PATCH");
	assert_string_equal(req(f, 0)->path, "/api/v1/nodes/n1");
	assert_string_equal(req(f, 0)->ctype, "application/strategic-merge-patch+json");
	assert_string_equal(req(f, 0)->body, "{\"spec\":{\"unschedulable\":true}}");
	assert_string_equal(req(f, 0)->auth, "Bearer " TOKEN);
	assert_string_equal(req(f, 1)->body, "{\"spec\":{\"unschedulable\":null}}");
}

/* The cordon and luascale's mark in one strategic merge patch, both ways. */
static void test_cordon_with_mark(void **state)
{
	struct fixture *f = *state;
	struct kube_status st;
	const struct kv on[2] = {{"luascale.io/cordoned-by", "luascale"},
				 {"luascale.io/cordoned-at", "2026-01-01T00:00:00Z"}};
	const struct kv off[2] = {{"luascale.io/cordoned-by", NULL}, {"luascale.io/cordoned-at", NULL}};

	assert_int_equal(f->ops.ops->cordon_mark(f->ops.ctx, "n1", true, on, 2, &st), 0);
	assert_int_equal(st.code, KUBE_OK);
	assert_int_equal(f->ops.ops->cordon_mark(f->ops.ctx, "n1", false, off, 2, &st), 0);
	assert_int_equal(ts_count(&f->s), 2);
	assert_string_equal(req(f, 0)->method, "PATCH");
	assert_string_equal(req(f, 0)->ctype, "application/strategic-merge-patch+json");
	assert_string_equal(req(f, 0)->body,
			    "{\"metadata\":{\"annotations\":{\"luascale.io/cordoned-by\":\"luascale\","
			    "\"luascale.io/cordoned-at\":\"2026-01-01T00:00:00Z\"}},\"spec\":{\"unschedulable\":true}}");
	assert_string_equal(req(f, 1)->body,
			    "{\"metadata\":{\"annotations\":{\"luascale.io/cordoned-by\":null,"
			    "\"luascale.io/cordoned-at\":null}},\"spec\":{\"unschedulable\":null}}");
}

static void test_labels_and_annotations(void **state)
{
	struct fixture *f = *state;
	struct kube_status st;

	assert_int_equal(f->ops.ops->label(f->ops.ctx, "n1", "luascale.io/state", "draining", &st), 0);
	assert_int_equal(f->ops.ops->label(f->ops.ctx, "n1", "luascale.io/state", NULL, &st), 0);
	assert_int_equal(f->ops.ops->annotate(f->ops.ctx, "n1", "note", "say \"hi\"", &st), 0);
	assert_int_equal(f->ops.ops->annotate(f->ops.ctx, "n1", "note", NULL, &st), 0);
	assert_int_equal(ts_count(&f->s), 4);
	assert_string_equal(req(f, 0)->ctype, "application/merge-patch+json");
	assert_string_equal(req(f, 0)->body,
			    "{\"metadata\":{\"labels\":{\"luascale.io/state\":\"draining\"}}}");
	assert_string_equal(req(f, 1)->body, "{\"metadata\":{\"labels\":{\"luascale.io/state\":null}}}");
	assert_string_equal(req(f, 2)->body,
			    "{\"metadata\":{\"annotations\":{\"note\":\"say \\\"hi\\\"\"}}}");
	assert_string_equal(req(f, 3)->body, "{\"metadata\":{\"annotations\":{\"note\":null}}}");
	/* a refusal carries the server's message */
	f->w.status = 403;
	f->w.message = "nodes \\\"n1\\\" is forbidden";
	assert_int_equal(f->ops.ops->label(f->ops.ctx, "n1", "k", "v", &st), -1);
	assert_int_equal(st.code, KUBE_ERROR);
	assert_string_equal(st.message, "set k on node n1: nodes \"n1\" is forbidden");
	assert_null(strstr(st.message, TOKEN));
}

/* The taints of PATCH body 'body' as compact JSON, and its resourceVersion. */
static void patch_taints(const char *body, char *taints, size_t tlen, char *rv, size_t rvlen)
{
	cJSON *doc = cJSON_Parse(body);
	const cJSON *t, *v;
	char *text;

	assert_non_null(doc);
	v = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "metadata"), "resourceVersion");
	assert_true(cJSON_IsString(v));
	snprintf(rv, rvlen, "%s", v->valuestring);
	t = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "spec"), "taints");
	assert_non_null(t);
	text = cJSON_PrintUnformatted(t);
	snprintf(taints, tlen, "%s", text);
	free(text);
	cJSON_Delete(doc);
}

static void test_taint_conflict_retried(void **state)
{
	struct fixture *f = *state;
	struct kube_status st;
	char taints[512], rv[32];

	f->w.taints = "[{\"key\":\"a\",\"effect\":\"NoSchedule\"}]";
	f->w.conflicts = 1;
	assert_int_equal(f->ops.ops->taint(f->ops.ctx, "n1", "luascale.io/drain", "yes",
					   TAINT_NO_SCHEDULE, false, &st), 0);
	assert_int_equal(st.code, KUBE_OK);
	assert_int_equal(ts_count(&f->s), 4); /* GET, PATCH 409, GET, PATCH */
	assert_string_equal(req(f, 0)->method, "GET");
	assert_string_equal(req(f, 1)->method, "PATCH");
	assert_string_equal(req(f, 1)->ctype, "application/merge-patch+json");
	patch_taints(req(f, 1)->body, taints, sizeof(taints), rv, sizeof(rv));
	assert_string_equal(rv, "5");
	assert_string_equal(req(f, 2)->method, "GET");
	patch_taints(req(f, 3)->body, taints, sizeof(taints), rv, sizeof(rv));
	assert_string_equal(rv, "6"); /* re-read after the conflict */
	assert_string_equal(taints,
			    "[{\"key\":\"a\",\"effect\":\"NoSchedule\"},"
			    "{\"key\":\"luascale.io/drain\",\"value\":\"yes\",\"effect\":\"NoSchedule\"}]");
}

static void test_taint_edit_and_remove(void **state)
{
	struct fixture *f = *state;
	struct kube_status st;
	char taints[512], rv[32];

	f->w.taints = "[{\"key\":\"a\",\"effect\":\"NoSchedule\"},"
		      "{\"key\":\"b\",\"value\":\"v\",\"effect\":\"NoExecute\",\"timeAdded\":\"2026-01-01T00:00:00Z\"},"
		      "{\"key\":\"b\",\"value\":\"v\",\"effect\":\"NoSchedule\"}]";
	/* removal matches key and effect; other taints keep every field */
	assert_int_equal(f->ops.ops->taint(f->ops.ctx, "n1", "b", NULL, TAINT_NO_SCHEDULE, true, &st),
			 0);
	assert_int_equal(ts_count(&f->s), 2);
	patch_taints(req(f, 1)->body, taints, sizeof(taints), rv, sizeof(rv));
	assert_string_equal(taints,
			    "[{\"key\":\"a\",\"effect\":\"NoSchedule\"},"
			    "{\"key\":\"b\",\"value\":\"v\",\"effect\":\"NoExecute\",\"timeAdded\":\"2026-01-01T00:00:00Z\"}]");
	/* a new value for an existing (key, effect) replaces it */
	assert_int_equal(f->ops.ops->taint(f->ops.ctx, "n1", "a", "x", TAINT_NO_SCHEDULE, false, &st),
			 0);
	assert_int_equal(ts_count(&f->s), 4);
	patch_taints(req(f, 3)->body, taints, sizeof(taints), rv, sizeof(rv));
	assert_non_null(strstr(taints, "{\"key\":\"a\",\"value\":\"x\",\"effect\":\"NoSchedule\"}"));
	assert_null(strstr(taints, "{\"key\":\"a\",\"effect\""));
	/* nothing to change: read only, no write */
	assert_int_equal(f->ops.ops->taint(f->ops.ctx, "n1", "zzz", NULL, TAINT_NO_EXECUTE, true, &st),
			 0);
	assert_int_equal(f->ops.ops->taint(f->ops.ctx, "n1", "a", NULL, TAINT_NO_SCHEDULE, false, &st),
			 0);
	assert_int_equal(ts_count(&f->s), 6);
	assert_string_equal(req(f, 4)->method, "GET");
	assert_string_equal(req(f, 5)->method, "GET");
	/* a node without taints */
	f->w.taints = NULL;
	assert_int_equal(f->ops.ops->taint(f->ops.ctx, "n1", "k", "", TAINT_PREFER_NO_SCHEDULE, false,
					   &st), 0);
	patch_taints(req(f, 7)->body, taints, sizeof(taints), rv, sizeof(rv));
	assert_string_equal(taints, "[{\"key\":\"k\",\"effect\":\"PreferNoSchedule\"}]");
}

static void test_taint_conflict_gives_up(void **state)
{
	struct fixture *f = *state;
	struct kube_status st;

	f->w.conflicts = 100;
	assert_int_equal(f->ops.ops->taint(f->ops.ctx, "n1", "k", "v", TAINT_NO_SCHEDULE, false, &st),
			 -1);
	assert_int_equal(st.code, KUBE_CONFLICT);
	assert_int_equal(ts_count(&f->s), 6); /* 3 attempts of GET + PATCH */
	f->w.status = 404;
	f->w.message = "nodes \\\"n1\\\" not found";
	assert_int_equal(f->ops.ops->taint(f->ops.ctx, "n1", "k", "v", TAINT_NO_SCHEDULE, false, &st),
			 -1);
	assert_int_equal(st.code, KUBE_NOT_FOUND);
}

static void test_evictions(void **state)
{
	struct fixture *f = *state;
	struct kube_status st;

	assert_int_equal(f->ops.ops->evict(f->ops.ctx, "hub", "jupyter-ann", 30, &st), 0);
	assert_int_equal(st.code, KUBE_OK);
	assert_string_equal(req(f, 0)->method, "POST");
	assert_string_equal(req(f, 0)->path, "/api/v1/namespaces/hub/pods/jupyter-ann/eviction");
	assert_string_equal(req(f, 0)->ctype, "application/json");
	assert_string_equal(req(f, 0)->body,
			    "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":"
			    "{\"name\":\"jupyter-ann\",\"namespace\":\"hub\"},"
			    "\"deleteOptions\":{\"gracePeriodSeconds\":30}}");
	assert_int_equal(f->ops.ops->evict(f->ops.ctx, "hub", "p", -1, &st), 0);
	assert_string_equal(req(f, 1)->body,
			    "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":"
			    "{\"name\":\"p\",\"namespace\":\"hub\"}}");
	assert_int_equal(f->ops.ops->evict(f->ops.ctx, "hub", "p", 0, &st), 0);
	assert_non_null(strstr(req(f, 2)->body, "\"gracePeriodSeconds\":0"));

	f->w.status = 429;
	f->w.message = "Cannot evict pod as it would violate the pod's disruption budget.";
	assert_int_equal(f->ops.ops->evict(f->ops.ctx, "hub", "p", 30, &st), -1);
	assert_int_equal(st.code, KUBE_PDB_BLOCKED);
	assert_non_null(strstr(st.message, "disruption budget"));
	f->w.status = 404;
	assert_int_equal(f->ops.ops->evict(f->ops.ctx, "hub", "p", 30, &st), -1);
	assert_int_equal(st.code, KUBE_NOT_FOUND);
	f->w.status = 500;
	f->w.message = "This pod has more than one PodDisruptionBudget";
	assert_int_equal(f->ops.ops->evict(f->ops.ctx, "hub", "p", 30, &st), -1);
	assert_int_equal(st.code, KUBE_ERROR);
	assert_string_equal(st.message, "evict pod hub/p: This pod has more than one PodDisruptionBudget");
	assert_int_equal(ts_count(&f->s), 6); /* nothing retried here */
}

/* A Binding: the subresource, a v1 Binding naming the Node with the pod's
 * uid as a precondition; 409 and 404 told apart; nothing retried. */
static void test_bind(void **state)
{
	struct fixture *f = *state;
	struct kube_status st;

	assert_int_equal(f->ops.ops->bind(f->ops.ctx, "hub", "jupyter-ann", "u-1", "n1", &st), 0);
	assert_int_equal(st.code, KUBE_OK);
	assert_string_equal(req(f, 0)->method, "POST");
	assert_string_equal(req(f, 0)->path, "/api/v1/namespaces/hub/pods/jupyter-ann/binding");
	assert_string_equal(req(f, 0)->ctype, "application/json");
	assert_string_equal(req(f, 0)->body,
			    "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":"
			    "{\"name\":\"jupyter-ann\",\"namespace\":\"hub\",\"uid\":\"u-1\"},"
			    "\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"n1\"}}");
	assert_int_equal(f->ops.ops->bind(f->ops.ctx, "hub", "p", NULL, "n1", &st), 0);
	assert_null(strstr(req(f, 1)->body, "uid"));
	f->w.status = 409;
	f->w.message = "pod p is already assigned to node n0";
	assert_int_equal(f->ops.ops->bind(f->ops.ctx, "hub", "p", "u", "n1", &st), -1);
	assert_int_equal(st.code, KUBE_CONFLICT);
	assert_string_equal(st.message, "bind pod hub/p to node n1: pod p is already assigned to node n0");
	f->w.status = 404;
	assert_int_equal(f->ops.ops->bind(f->ops.ctx, "hub", "p", "u", "n1", &st), -1);
	assert_int_equal(st.code, KUBE_NOT_FOUND);
	f->w.status = 403;
	f->w.message = "pods p is forbidden: cannot create resource pods/binding";
	assert_int_equal(f->ops.ops->bind(f->ops.ctx, "hub", "p", "u", "n1", &st), -1);
	assert_int_equal(st.code, KUBE_ERROR);
	assert_non_null(strstr(st.message, "bind pod hub/p to node n1: "));
	assert_int_equal(f->ops.ops->bind(f->ops.ctx, "hub", "p", "u", "", &st), -1);
	assert_string_equal(st.message, "no node name given");
	assert_int_equal(ts_count(&f->s), 5); /* nothing retried, nothing sent without a node */
}

/* A 429 on an eviction is a PodDisruptionBudget only when the server says
 * so; otherwise it is the server's own limit, with its words and its
 * retryAfterSeconds. */
static void test_eviction_429_says_what_the_server_said(void **state)
{
	struct fixture *f = *state;
	struct kube_status st;

	f->w.status = 429;
	f->w.message = "fault injected by the simulator: POST pods/eviction";
	assert_int_equal(f->ops.ops->evict(f->ops.ctx, "default", "web-1", -1, &st), -1);
	assert_int_equal(st.code, KUBE_THROTTLED);
	assert_string_equal(st.message, "429 Failure: fault injected by the simulator: POST pods/eviction");
	assert_int_equal(st.retry_after_s, 0);

	f->w.body = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
		    "\"message\":\"Too many requests, please try again later.\","
		    "\"reason\":\"TooManyRequests\",\"details\":{\"retryAfterSeconds\":4},\"code\":429}";
	assert_int_equal(f->ops.ops->evict(f->ops.ctx, "default", "web-1", -1, &st), -1);
	assert_int_equal(st.code, KUBE_THROTTLED);
	assert_string_equal(st.message, "429 TooManyRequests: Too many requests, please try again later.");
	assert_int_equal(st.retry_after_s, 4);

	f->w.body = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
		    "\"message\":\"Cannot evict pod as it would violate the pod's disruption budget.\","
		    "\"reason\":\"TooManyRequests\",\"details\":{\"causes\":[{\"reason\":\"DisruptionBudget\","
		    "\"message\":\"The disruption budget web needs 2 healthy pods and has 2 currently\"}]},\"code\":429}";
	assert_int_equal(f->ops.ops->evict(f->ops.ctx, "default", "web-1", -1, &st), -1);
	assert_int_equal(st.code, KUBE_PDB_BLOCKED);
	assert_non_null(strstr(st.message, "The disruption budget web needs 2 healthy pods"));
	f->w.body = NULL;
}

static void test_delete_node(void **state)
{
	struct fixture *f = *state;
	struct kube_status st;

	assert_int_equal(f->ops.ops->delete_node(f->ops.ctx, "n1", &st), 0);
	assert_string_equal(req(f, 0)->method, "DELETE");
	assert_string_equal(req(f, 0)->path, "/api/v1/nodes/n1");
	f->w.status = 404;
	assert_int_equal(f->ops.ops->delete_node(f->ops.ctx, "n1", &st), -1);
	assert_int_equal(st.code, KUBE_NOT_FOUND);
	assert_int_equal(f->ops.ops->delete_node(f->ops.ctx, "", &st), -1);
	assert_int_equal(st.code, KUBE_ERROR);
	assert_int_equal(ts_count(&f->s), 2);
}

static const struct kube_pod_ref *find_pod(const struct kube_pod_ref *p, size_t n,
					   const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(p[i].name, name) == 0)
			return &p[i];
	return NULL;
}

static void test_node_pods_pages(void **state)
{
	struct fixture *f = *state;
	struct kube_pod_ref *pods = NULL;
	const struct kube_pod_ref *p;
	struct kube_status st;
	size_t n = 0;

	assert_int_equal(f->ops.ops->node_pods(f->ops.ctx, "n1", &pods, &n, &st), 0);
	assert_int_equal(st.code, KUBE_OK);
	assert_int_equal(ts_count(&f->s), 2);
	assert_string_equal(req(f, 0)->method, "GET");
	assert_string_equal(req(f, 0)->path, "/api/v1/pods");
	assert_string_equal(req(f, 0)->args, "fieldSelector=spec.nodeName=n1&limit=3");
	assert_string_equal(req(f, 1)->args,
			    "fieldSelector=spec.nodeName=n1&limit=3&continue=c1/x=");
	/* finished pods are left out */
	assert_int_equal(n, 5);
	assert_null(find_pod(pods, n, "done"));
	assert_null(find_pod(pods, n, "failed"));
	p = find_pod(pods, n, "web");
	assert_non_null(p);
	assert_string_equal(p->ns, "default");
	assert_true(p->evictable);
	assert_false(p->terminating);
	p = find_pod(pods, n, "ds");
	assert_false(p->evictable);
	p = find_pod(pods, n, "mirror");
	assert_string_equal(p->ns, "kube-system");
	assert_false(p->evictable);
	p = find_pod(pods, n, "leaving");
	assert_true(p->terminating);
	assert_true(p->evictable); /* still has to leave before the node goes */
	p = find_pod(pods, n, "pending");
	assert_true(p->evictable);
	kube_pod_refs_free(pods, n);
}

static void test_node_pods_relist_and_errors(void **state)
{
	struct fixture *f = *state;
	struct kube_pod_ref *pods = NULL;
	struct kube_status st;
	size_t n = 0;

	/* an expired continue token starts the list again */
	f->w.gone_on_continue = 1;
	assert_int_equal(f->ops.ops->node_pods(f->ops.ctx, "n1", &pods, &n, &st), 0);
	assert_int_equal(ts_count(&f->s), 4);
	assert_string_equal(req(f, 2)->args, "fieldSelector=spec.nodeName=n1&limit=3");
	assert_int_equal(n, 5);
	kube_pod_refs_free(pods, n);
	f->w.status = 500;
	f->w.message = "etcdserver: request timed out";
	assert_int_equal(f->ops.ops->node_pods(f->ops.ctx, "n1", &pods, &n, &st), -1);
	assert_int_equal(st.code, KUBE_ERROR);
	assert_null(pods);
	assert_int_equal(n, 0);
	assert_string_equal(st.message, "list the pods of node n1: etcdserver: request timed out");
}

static void test_event_on_node(void **state)
{
	struct fixture *f = *state;
	cJSON *doc;
	const cJSON *o;
	const char *name;

	vclock_set(f->clock, 90 * CLOCK_NS_PER_S);
	assert_int_equal(f->ops.ops->event(f->ops.ctx, "n1", "Normal", "ScaleDown",
					   "cordoned: underutilized 12m"), 0);
	assert_int_equal(f->ops.ops->event(f->ops.ctx, "n1", "Warning", "DrainBlocked", "pdb"), 0);
	assert_int_equal(ts_count(&f->s), 2);
	assert_string_equal(req(f, 0)->method, "POST");
	assert_string_equal(req(f, 0)->path, "/api/v1/namespaces/default/events");
	assert_string_equal(req(f, 0)->ctype, "application/json");
	doc = cJSON_Parse(req(f, 0)->body);
	assert_non_null(doc);
	assert_string_equal(cJSON_GetObjectItem(doc, "kind")->valuestring, "Event");
	assert_string_equal(cJSON_GetObjectItem(doc, "apiVersion")->valuestring, "v1");
	o = cJSON_GetObjectItem(doc, "metadata");
	name = cJSON_GetObjectItem(o, "name")->valuestring;
	assert_memory_equal(name, "n1.", 3);
	assert_string_equal(cJSON_GetObjectItem(o, "namespace")->valuestring, "default");
	o = cJSON_GetObjectItem(doc, "involvedObject");
	assert_string_equal(cJSON_GetObjectItem(o, "kind")->valuestring, "Node");
	assert_string_equal(cJSON_GetObjectItem(o, "name")->valuestring, "n1");
	assert_string_equal(cJSON_GetObjectItem(doc, "reason")->valuestring, "ScaleDown");
	assert_string_equal(cJSON_GetObjectItem(doc, "message")->valuestring,
			    "cordoned: underutilized 12m");
	assert_string_equal(cJSON_GetObjectItem(doc, "type")->valuestring, "Normal");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "source"), "component")->valuestring,
			    "luascale");
	assert_string_equal(cJSON_GetObjectItem(doc, "firstTimestamp")->valuestring,
			    "2026-01-01T00:01:30Z");
	assert_string_equal(cJSON_GetObjectItem(doc, "lastTimestamp")->valuestring,
			    "2026-01-01T00:01:30Z");
	assert_int_equal(cJSON_GetObjectItem(doc, "count")->valueint, 1);
	{
		/* two events in the same second still get different names */
		cJSON *d2 = cJSON_Parse(req(f, 1)->body);

		assert_string_not_equal(
			cJSON_GetObjectItem(cJSON_GetObjectItem(d2, "metadata"), "name")->valuestring,
			name);
		assert_string_equal(cJSON_GetObjectItem(d2, "type")->valuestring, "Warning");
		cJSON_Delete(d2);
	}
	cJSON_Delete(doc);
	f->w.status = 403;
	assert_int_equal(f->ops.ops->event(f->ops.ctx, "n1", "Normal", "R", "m"), -1);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_cordon_and_uncordon),
		T(test_labels_and_annotations),
		T(test_taint_conflict_retried),
		T(test_taint_edit_and_remove),
		T(test_taint_conflict_gives_up),
		T(test_cordon_with_mark),
		T(test_evictions),
		T(test_bind),
		T(test_delete_node),
		T(test_eviction_429_says_what_the_server_said),
		T(test_node_pods_pages),
		T(test_node_pods_relist_and_errors),
		T(test_event_on_node),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
