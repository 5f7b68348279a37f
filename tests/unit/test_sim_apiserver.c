/*
 * Tests for sim/apiserver*.c: a real-time simulated world served on
 * 127.0.0.1:0 and spoken to with libcurl — discovery shapes, lists with
 * selectors and pagination, watches (ADDED, MODIFIED, DELETED, BOOKMARK,
 * an in-stream 410 for an expired resourceVersion), cordon by strategic
 * merge patch, labels and taints by merge patch, eviction refused by a
 * PDB (429), binding, pod deletion, leases with a resourceVersion
 * precondition (409), configmaps and events, the cloud's endpoints, the
 * kubeconfig, and every fault flag. Waits are on conditions with
 * deadlines; nothing asserts on how long anything took.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <pthread.h>

#include "buf.h"
#include "runtime/clock.h"
#include "runtime/executor.h"
#include "sim/apiserver/apiserver.h"
#include "sim/world/scenario.h"

#define DEADLINE_NS (20 * CLOCK_NS_PER_S)

static const char scenario[] =
	"seed: 3\n"
	"duration: 1h\n"
	"node_groups:\n"
	"  - name: workers\n"
	"    min: 0\n"
	"    max: 6\n"
	"    template:\n"
	"      allocatable: {cpu: 4, memory: 16Gi, pods: 110}\n"
	"      labels: {node-role.kubernetes.io/worker: \"true\"}\n"
	"cloud:\n"
	"  boot_delay: 100ms\n"
	"  boot_jitter: 0s\n"
	"  launch_latency: 0s\n"
	"  terminate_latency: 0s\n"
	"  shutdown_delay: 100ms\n"
	"cluster:\n"
	"  register_delay: 100ms\n"
	"  scheduler_interval: 100ms\n"
	"initial_nodes:\n"
	"  - {group: workers, count: 2}\n"
	"workloads:\n"
	"  - name: agent\n"
	"    namespace: kube-system\n"
	"    controller: daemonset\n"
	"    requests: {cpu: 100m, memory: 128Mi}\n"
	"    labels: {app: agent}\n"
	"  - name: web\n"
	"    controller: replicaset\n"
	"    count: 3\n"
	"    requests: {cpu: 500m, memory: 1Gi}\n"
	"    labels: {app: web}\n"
	"    grace: 0s\n"
	"  - name: batch\n"
	"    controller: job\n"
	"    count: 2\n"
	"    requests: {cpu: 250m, memory: 256Mi}\n"
	"    labels: {app: batch}\n"
	"    grace: 0s\n"
	"  - name: huge\n"
	"    controller: none\n"
	"    count: 1\n"
	"    requests: {cpu: \"64\", memory: 1Gi}\n"
	"    labels: {app: huge}\n"
	"pdbs:\n"
	"  - name: web\n"
	"    selector: {app: web}\n"
	"    min_available: 3\n";

struct fx {
	struct sim_scenario *sc;
	struct executor *ex;
	struct sim_world *w;
	struct apiserver *srv;
	char base[64];
};

static int64_t now_ns(void)
{
	return clock_now(clock_real());
}

static void nap(void)
{
	struct timespec ts = {0, 20 * 1000 * 1000};

	nanosleep(&ts, NULL);
}

static struct fx *fx_new_opts(const struct apiserver_opts *o)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct errbuf err;

	assert_non_null(f);
	f->sc = sim_scenario_parse(scenario, sizeof(scenario) - 1, "test.yaml", &err);
	if (!f->sc)
		fail_msg("%s", err.msg);
	f->ex = executor_new_pool(2, 4096);
	assert_non_null(f->ex);
	f->w = sim_world_new(f->sc, f->ex, &err);
	if (!f->w)
		fail_msg("%s", err.msg);
	f->srv = apiserver_new(f->w->cluster, o, &err);
	if (!f->srv)
		fail_msg("%s", err.msg);
	snprintf(f->base, sizeof(f->base), "http://127.0.0.1:%d", apiserver_port(f->srv));
	return f;
}

static struct fx *fx_new(void)
{
	struct apiserver_opts o;

	apiserver_opts_default(&o);
	o.bookmark_ns = 200 * CLOCK_NS_PER_MS;
	o.pdb_sync_ns = 100 * CLOCK_NS_PER_MS;
	return fx_new_opts(&o);
}

static void fx_free(struct fx *f)
{
	apiserver_free(f->srv);
	executor_shutdown(f->ex, now_ns() + 5 * CLOCK_NS_PER_S);
	sim_world_free(f->w);
	sim_scenario_free(f->sc);
	free(f);
}

/* ---- HTTP ---- */

struct resp {
	long code;
	CURLcode err;
	struct buf body;
	char retry_after[32];
	char content_type[128];
};

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct buf *b = ud;

	buf_append(b, p, size * n);
	return size * n;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
	struct resp *r = ud;
	size_t len = size * n;

	if (len > 13 && strncasecmp(p, "Retry-After: ", 13) == 0)
		snprintf(r->retry_after, sizeof(r->retry_after), "%.*s", (int)(len - 15), p + 13);
	if (len > 14 && strncasecmp(p, "Content-Type: ", 14) == 0)
		snprintf(r->content_type, sizeof(r->content_type), "%.*s", (int)(len - 16), p + 14);
	return len;
}

/* One request; r->body is "" at least. */
static void http(struct fx *f, const char *method, const char *path, const char *ctype,
		 const char *body, const char *accept, struct resp *r)
{
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	char url[1024], hdr[256];

	memset(r, 0, sizeof(*r));
	assert_non_null(c);
	snprintf(url, sizeof(url), "%s%s", f->base, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &r->body);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		snprintf(hdr, sizeof(hdr), "Content-Type: %s", ctype ? ctype : "application/json");
		h = curl_slist_append(h, hdr);
	}
	if (accept) {
		snprintf(hdr, sizeof(hdr), "Accept: %s", accept);
		h = curl_slist_append(h, hdr);
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	r->err = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->code);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	buf_puts(&r->body, "");
}

/* GET a path that must answer 200 with JSON; the parsed document. */
static cJSON *get_json(struct fx *f, const char *path)
{
	struct resp r;
	cJSON *j;

	http(f, "GET", path, NULL, NULL, NULL, &r);
	if (r.code != 200)
		fail_msg("GET %s: %ld %s", path, r.code, r.body.data);
	j = cJSON_Parse(r.body.data);
	assert_non_null(j);
	buf_free(&r.body);
	return j;
}

static const char *jstr(const cJSON *o, const char *path)
{
	char part[64];
	const char *p = path;

	while (o && *p) {
		const char *dot = strchr(p, '.');
		size_t len = dot ? (size_t)(dot - p) : strlen(p);

		snprintf(part, sizeof(part), "%.*s", (int)len, p);
		o = cJSON_GetObjectItemCaseSensitive(o, part);
		p += len + (dot ? 1 : 0);
	}
	return cJSON_IsString(o) ? o->valuestring : NULL;
}

static int count_items(struct fx *f, const char *path)
{
	cJSON *j = get_json(f, path);
	int n = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "items"));

	cJSON_Delete(j);
	return n;
}

/* Waits until 'path' lists 'want' items; fails after the deadline. */
static void wait_items(struct fx *f, const char *path, int want)
{
	int64_t deadline = now_ns() + DEADLINE_NS;
	int n;

	while ((n = count_items(f, path)) != want) {
		if (now_ns() > deadline)
			fail_msg("%s: %d items, want %d", path, n, want);
		nap();
	}
}

/* The name of the first pod of 'app' running (bound). */
static void running_pod(struct fx *f, const char *app, char *out, size_t len)
{
	char path[200];
	cJSON *j, *it;

	snprintf(path, sizeof(path),
		 "/api/v1/namespaces/default/pods?labelSelector=app%%3D%s&fieldSelector=status.phase%%3DRunning",
		 app);
	wait_items(f, path, strcmp(app, "web") == 0 ? 3 : 2);
	j = get_json(f, path);
	it = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "items"), 0);
	snprintf(out, len, "%s", jstr(it, "metadata.name"));
	cJSON_Delete(j);
}

/* ---- watches in a thread ---- */

struct watcher {
	struct fx *f;
	char path[512];
	pthread_t th;
	pthread_mutex_t mu;
	struct buf got;
	bool stop;
	long code;
	CURLcode err;
	bool done;
};

static size_t watch_body(char *p, size_t size, size_t n, void *ud)
{
	struct watcher *w = ud;

	pthread_mutex_lock(&w->mu);
	buf_append(&w->got, p, size * n);
	pthread_mutex_unlock(&w->mu);
	return size * n;
}

static int watch_progress(void *ud, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	struct watcher *w = ud;
	bool stop;

	(void)a;
	(void)b;
	(void)c;
	(void)d;
	pthread_mutex_lock(&w->mu);
	stop = w->stop;
	pthread_mutex_unlock(&w->mu);
	return stop ? 1 : 0;
}

static void *watch_thread(void *arg)
{
	struct watcher *w = arg;
	CURL *c = curl_easy_init();
	char url[1024];

	snprintf(url, sizeof(url), "%s%s", w->f->base, w->path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, watch_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, w);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, watch_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, w);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	w->err = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &w->code);
	curl_easy_cleanup(c);
	pthread_mutex_lock(&w->mu);
	w->done = true;
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

static struct watcher *watch_start(struct fx *f, const char *path)
{
	struct watcher *w = calloc(1, sizeof(*w));

	assert_non_null(w);
	w->f = f;
	snprintf(w->path, sizeof(w->path), "%s", path);
	pthread_mutex_init(&w->mu, NULL);
	assert_int_equal(pthread_create(&w->th, NULL, watch_thread, w), 0);
	return w;
}

/* Has the stream carried 'needle'? */
static bool watch_saw(struct watcher *w, const char *needle)
{
	bool yes;

	pthread_mutex_lock(&w->mu);
	yes = w->got.data && strstr(w->got.data, needle) != NULL;
	pthread_mutex_unlock(&w->mu);
	return yes;
}

static void watch_wait_for(struct watcher *w, const char *needle)
{
	int64_t deadline = now_ns() + DEADLINE_NS;

	while (!watch_saw(w, needle)) {
		if (now_ns() > deadline) {
			pthread_mutex_lock(&w->mu);
			fail_msg("watch %s never carried %s; got: %.2000s", w->path, needle,
				 w->got.data ? w->got.data : "");
		}
		nap();
	}
}

static bool watch_done(struct watcher *w)
{
	bool d;

	pthread_mutex_lock(&w->mu);
	d = w->done;
	pthread_mutex_unlock(&w->mu);
	return d;
}

static void watch_wait_end(struct watcher *w)
{
	int64_t deadline = now_ns() + DEADLINE_NS;

	while (!watch_done(w)) {
		if (now_ns() > deadline)
			fail_msg("watch %s did not end", w->path);
		nap();
	}
}

static void watch_stop(struct watcher *w)
{
	pthread_mutex_lock(&w->mu);
	w->stop = true;
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->th, NULL);
	buf_free(&w->got);
	pthread_mutex_destroy(&w->mu);
	free(w);
}

/* ---- tests ---- */

static void test_discovery(void **state)
{
	struct fx *f = fx_new();
	struct resp r;
	cJSON *j, *it;
	bool eviction = false, binding = false, node_status = false, pdbs = false;

	(void)state;
	j = get_json(f, "/version");
	assert_string_equal(jstr(j, "major"), "1");
	assert_non_null(jstr(j, "gitVersion"));
	cJSON_Delete(j);

	j = get_json(f, "/api");
	assert_string_equal(jstr(j, "kind"), "APIVersions");
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "versions"), 0)->valuestring,
			    "v1");
	cJSON_Delete(j);

	j = get_json(f, "/api/v1");
	assert_string_equal(jstr(j, "kind"), "APIResourceList");
	assert_string_equal(jstr(j, "groupVersion"), "v1");
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(j, "resources")) {
		const char *name = jstr(it, "name");

		if (strcmp(name, "pods/eviction") == 0) {
			/* what kubectl drain looks for */
			assert_string_equal(jstr(it, "group"), "policy");
			assert_string_equal(jstr(it, "version"), "v1");
			assert_string_equal(jstr(it, "kind"), "Eviction");
			eviction = true;
		}
		binding |= strcmp(name, "pods/binding") == 0;
		node_status |= strcmp(name, "nodes/status") == 0;
		if (strcmp(name, "nodes") == 0)
			assert_false(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "namespaced")));
	}
	assert_true(eviction && binding && node_status);
	cJSON_Delete(j);

	/* aggregated discovery is not offered: the plain list answers it */
	http(f, "GET", "/apis", NULL, NULL,
	     "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json", &r);
	assert_int_equal(r.code, 200);
	assert_string_equal(r.content_type, "application/json");
	j = cJSON_Parse(r.body.data);
	assert_string_equal(jstr(j, "kind"), "APIGroupList");
	assert_non_null(strstr(r.body.data, "\"policy/v1\""));
	assert_non_null(strstr(r.body.data, "\"coordination.k8s.io/v1\""));
	cJSON_Delete(j);
	buf_free(&r.body);

	j = get_json(f, "/apis/policy/v1");
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(j, "resources"))
		pdbs |= strcmp(jstr(it, "name"), "poddisruptionbudgets") == 0;
	assert_true(pdbs);
	cJSON_Delete(j);

	http(f, "GET", "/apis/nosuch.example.com/v1", NULL, NULL, NULL, &r);
	assert_int_equal(r.code, 404);
	buf_free(&r.body);
	fx_free(f);
}

static void test_list_and_pagination(void **state)
{
	struct fx *f = fx_new();
	char path[1200], last[300] = "", node[64];
	int total, seen = 0, pages = 0;
	const char *cont = "";
	char cont_buf[1200] = "";
	struct resp r;
	cJSON *j, *it;

	(void)state;
	running_pod(f, "web", node, sizeof(node)); /* everything is placed by now */
	total = count_items(f, "/api/v1/pods");
	assert_true(total >= 8); /* 2 agents, 3 web, 2 batch, 1 huge */
	do {
		snprintf(path, sizeof(path), "/api/v1/pods?limit=3%s%s", cont[0] ? "&continue=" : "",
			 cont);
		j = get_json(f, path);
		assert_true(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "items")) <= 3);
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(j, "items")) {
			char key[300];

			snprintf(key, sizeof(key), "%s/%s", jstr(it, "metadata.namespace"),
				 jstr(it, "metadata.name"));
			assert_true(strcmp(last, key) < 0); /* sorted, no repeats */
			snprintf(last, sizeof(last), "%s", key);
			assert_non_null(jstr(it, "metadata.resourceVersion"));
			assert_non_null(jstr(it, "metadata.uid"));
			seen++;
		}
		snprintf(cont_buf, sizeof(cont_buf), "%s",
			 jstr(j, "metadata.continue") ? jstr(j, "metadata.continue") : "");
		cont = cont_buf;
		assert_string_equal(jstr(j, "kind"), "PodList");
		cJSON_Delete(j);
		pages++;
	} while (cont[0]);
	assert_int_equal(seen, total);
	assert_true(pages >= 3);

	assert_int_equal(count_items(f, "/api/v1/namespaces/default/pods?labelSelector=app%3Dweb"), 3);
	assert_int_equal(count_items(f, "/api/v1/pods?labelSelector=app%20in%20(web,batch)"), 5);
	assert_int_equal(count_items(f, "/api/v1/namespaces/kube-system/pods"), 2);
	assert_int_equal(count_items(f, "/api/v1/nodes?fieldSelector=metadata.name%3Dworkers-1"), 1);
	/* the unschedulable pod: PodScheduled False, reason Unschedulable */
	wait_items(f, "/api/v1/pods?fieldSelector=spec.nodeName%3D,status.phase%3DPending", 1);
	j = get_json(f, "/api/v1/namespaces/default/pods/huge-1");
	{
		int64_t deadline = now_ns() + DEADLINE_NS;

		while (!cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
			       cJSON_GetObjectItemCaseSensitive(j, "status"), "conditions"), 0)) {
			cJSON_Delete(j);
			assert_true(now_ns() < deadline);
			nap();
			j = get_json(f, "/api/v1/namespaces/default/pods/huge-1");
		}
	}
	it = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(j, "status"), "conditions"), 0);
	assert_string_equal(jstr(it, "type"), "PodScheduled");
	assert_string_equal(jstr(it, "status"), "False");
	assert_string_equal(jstr(it, "reason"), "Unschedulable");
	assert_non_null(strstr(jstr(it, "message"), "nodes are available"));
	cJSON_Delete(j);

	/* a field no real server selects on, and a malformed token */
	http(f, "GET", "/api/v1/pods?fieldSelector=spec.priority%3D0", NULL, NULL, NULL, &r);
	assert_int_equal(r.code, 400);
	buf_free(&r.body);
	http(f, "GET", "/api/v1/pods?limit=1&continue=zz", NULL, NULL, NULL, &r);
	assert_int_equal(r.code, 400);
	buf_free(&r.body);

	/* kubectl's server-side table */
	http(f, "GET", "/api/v1/nodes", NULL, NULL,
	     "application/json;as=Table;v=v1;g=meta.k8s.io,application/json", &r);
	assert_int_equal(r.code, 200);
	j = cJSON_Parse(r.body.data);
	assert_string_equal(jstr(j, "kind"), "Table");
	assert_string_equal(jstr(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "columnDefinitions"), 1),
				 "name"), "Status");
	it = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "rows"), 0);
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(it, "cells"), 1)->valuestring,
			    "Ready");
	assert_string_equal(jstr(it, "object.metadata.name"), "workers-1");
	cJSON_Delete(j);
	buf_free(&r.body);
	fx_free(f);
}

static void test_watch_events_and_bookmarks(void **state)
{
	struct fx *f = fx_new();
	struct watcher *w;
	struct resp r;
	char path[200];
	cJSON *j;

	(void)state;
	j = get_json(f, "/api/v1/nodes");
	snprintf(path, sizeof(path), "/api/v1/nodes?watch=1&allowWatchBookmarks=true&resourceVersion=%s",
		 jstr(j, "metadata.resourceVersion"));
	cJSON_Delete(j);
	w = watch_start(f, path);
	watch_wait_for(w, "\"type\":\"BOOKMARK\"");

	/* three changes in one patch: one event */
	http(f, "PATCH", "/api/v1/nodes/workers-1", "application/strategic-merge-patch+json",
	     "{\"metadata\":{\"labels\":{\"a\":\"1\"},\"annotations\":{\"b\":\"2\"}},"
	     "\"spec\":{\"unschedulable\":true}}", NULL, &r);
	assert_int_equal(r.code, 200);
	buf_free(&r.body);
	watch_wait_for(w, "\"type\":\"MODIFIED\"");
	watch_wait_for(w, "\"unschedulable\":true");
	pthread_mutex_lock(&w->mu);
	assert_non_null(strstr(w->got.data, "\"a\":\"1\""));
	assert_null(strstr(strstr(w->got.data, "\"type\":\"MODIFIED\"") + 1, "\"type\":\"MODIFIED\""));
	pthread_mutex_unlock(&w->mu);

	http(f, "POST", "/apis/sim.luascale.io/v1/launch", NULL,
	     "{\"group\":\"workers\",\"count\":1}", NULL, &r);
	assert_int_equal(r.code, 200);
	assert_non_null(strstr(r.body.data, "\"id\":\"workers-3\""));
	buf_free(&r.body);
	watch_wait_for(w, "\"type\":\"ADDED\",\"object\":{\"metadata\":{\"resourceVersion\"");
	watch_wait_for(w, "\"name\":\"workers-3\"");

	http(f, "DELETE", "/api/v1/nodes/workers-3", NULL, NULL, NULL, &r);
	assert_int_equal(r.code, 200);
	j = cJSON_Parse(r.body.data);
	assert_string_equal(jstr(j, "metadata.name"), "workers-3");
	cJSON_Delete(j);
	buf_free(&r.body);
	watch_wait_for(w, "\"type\":\"DELETED\"");
	watch_stop(w);

	/* a watch without a resourceVersion starts with the objects there are */
	w = watch_start(f, "/api/v1/nodes?watch=true&labelSelector=kubernetes.io%2Fhostname%3Dworkers-2");
	watch_wait_for(w, "\"type\":\"ADDED\"");
	watch_wait_for(w, "workers-2");
	assert_false(watch_saw(w, "workers-1"));
	watch_stop(w);

	/* timeoutSeconds ends the stream cleanly */
	w = watch_start(f, "/api/v1/pods?watch=1&resourceVersion=1&timeoutSeconds=1");
	watch_wait_end(w);
	assert_int_equal(w->code, 200);
	assert_int_equal(w->err, CURLE_OK);
	watch_stop(w);
	fx_free(f);
}

static void test_watch_expired_resource_version(void **state)
{
	struct apiserver_opts o;
	struct fx *f;
	struct watcher *w;
	struct resp r;
	int i;

	(void)state;
	apiserver_opts_default(&o);
	o.history = 8;
	f = fx_new_opts(&o);
	for (i = 0; i < 10; i++) {
		http(f, "PATCH", "/api/v1/nodes/workers-2", "application/merge-patch+json",
		     i % 2 ? "{\"spec\":{\"unschedulable\":null}}" : "{\"spec\":{\"unschedulable\":true}}",
		     NULL, &r);
		assert_int_equal(r.code, 200);
		buf_free(&r.body);
	}
	assert_true(apiserver_resource_version(f->srv) > 8);
	w = watch_start(f, "/api/v1/nodes?watch=1&resourceVersion=1");
	watch_wait_end(w);
	assert_int_equal(w->code, 200); /* in the stream, as the real server does */
	assert_non_null(strstr(w->got.data, "\"type\":\"ERROR\""));
	assert_non_null(strstr(w->got.data, "\"code\":410"));
	assert_non_null(strstr(w->got.data, "\"reason\":\"Expired\""));
	watch_stop(w);

	/* a continue token from before the history: 410 Gone */
	{
		char path[200], tok[64] = "";
		const char *raw = "1\tdefault\tweb-1";
		size_t k;

		for (k = 0; raw[k]; k++)
			snprintf(tok + 2 * k, sizeof(tok) - 2 * k, "%02x", (unsigned char)raw[k]);
		snprintf(path, sizeof(path), "/api/v1/pods?limit=1&continue=%s", tok);
		http(f, "GET", path, NULL, NULL, NULL, &r);
		assert_int_equal(r.code, 410);
		assert_non_null(strstr(r.body.data, "Expired"));
		buf_free(&r.body);
	}
	fx_free(f);
}

static void test_node_patches(void **state)
{
	struct fx *f = fx_new();
	struct sim_node_info ni;
	struct resp r;
	cJSON *j;

	(void)state;
	/* kubectl cordon */
	http(f, "PATCH", "/api/v1/nodes/workers-1", "application/strategic-merge-patch+json",
	     "{\"spec\":{\"unschedulable\":true}}", NULL, &r);
	assert_int_equal(r.code, 200);
	j = cJSON_Parse(r.body.data);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(j, "spec"), "unschedulable")));
	cJSON_Delete(j);
	buf_free(&r.body);
	assert_int_equal(sim_cluster_node(f->w->cluster, "workers-1", &ni), 0);
	assert_true(ni.unschedulable);
	/* kubectl uncordon */
	http(f, "PATCH", "/api/v1/nodes/workers-1", "application/strategic-merge-patch+json",
	     "{\"spec\":{\"unschedulable\":null}}", NULL, &r);
	assert_int_equal(r.code, 200);
	assert_null(strstr(r.body.data, "unschedulable"));
	buf_free(&r.body);
	assert_int_equal(sim_cluster_node(f->w->cluster, "workers-1", &ni), 0);
	assert_false(ni.unschedulable);

	/* labels and annotations, set and removed */
	http(f, "PATCH", "/api/v1/nodes/workers-1", "application/merge-patch+json",
	     "{\"metadata\":{\"labels\":{\"team\":\"a\"},\"annotations\":{\"note\":\"x y\"}}}", NULL, &r);
	assert_int_equal(r.code, 200);
	j = cJSON_Parse(r.body.data);
	assert_string_equal(jstr(j, "metadata.labels.team"), "a");
	assert_string_equal(jstr(j, "metadata.annotations.note"), "x y");
	cJSON_Delete(j);
	buf_free(&r.body);
	http(f, "PATCH", "/api/v1/nodes/workers-1", "application/merge-patch+json",
	     "{\"metadata\":{\"labels\":{\"team\":null}}}", NULL, &r);
	assert_int_equal(r.code, 200);
	assert_null(strstr(r.body.data, "\"team\""));
	buf_free(&r.body);

	/* taints: the whole list */
	http(f, "PATCH", "/api/v1/nodes/workers-1", "application/strategic-merge-patch+json",
	     "{\"spec\":{\"taints\":[{\"key\":\"a\",\"value\":\"1\",\"effect\":\"NoSchedule\"},"
	     "{\"key\":\"b\",\"effect\":\"PreferNoSchedule\"}]}}", NULL, &r);
	assert_int_equal(r.code, 200);
	assert_non_null(strstr(r.body.data, "\"key\":\"a\",\"value\":\"1\",\"effect\":\"NoSchedule\""));
	assert_non_null(strstr(r.body.data, "\"key\":\"b\""));
	buf_free(&r.body);
	http(f, "PATCH", "/api/v1/nodes/workers-1", "application/strategic-merge-patch+json",
	     "{\"spec\":{\"taints\":[{\"key\":\"b\",\"effect\":\"PreferNoSchedule\"}]}}", NULL, &r);
	assert_int_equal(r.code, 200);
	assert_null(strstr(r.body.data, "\"key\":\"a\""));
	assert_non_null(strstr(r.body.data, "\"key\":\"b\""));
	buf_free(&r.body);

	/* refused: bad label, bad taint, a patch type there is not, unknown node, stale precondition */
	http(f, "PATCH", "/api/v1/nodes/workers-1", "application/merge-patch+json",
	     "{\"metadata\":{\"labels\":{\"bad key!\":\"x\"}}}", NULL, &r);
	assert_int_equal(r.code, 422);
	buf_free(&r.body);
	http(f, "PATCH", "/api/v1/nodes/workers-1", "application/merge-patch+json",
	     "{\"spec\":{\"taints\":[{\"key\":\"a\",\"effect\":\"Sometimes\"}]}}", NULL, &r);
	assert_int_equal(r.code, 422);
	buf_free(&r.body);
	http(f, "PATCH", "/api/v1/nodes/workers-1", "application/xml-patch+xml",
	     "<spec/>", NULL, &r);
	assert_int_equal(r.code, 415);
	buf_free(&r.body);
	http(f, "PATCH", "/api/v1/nodes/nosuch", "application/merge-patch+json",
	     "{\"spec\":{\"unschedulable\":true}}", NULL, &r);
	assert_int_equal(r.code, 404);
	assert_non_null(strstr(r.body.data, "\"reason\":\"NotFound\""));
	buf_free(&r.body);
	http(f, "PATCH", "/api/v1/nodes/workers-1", "application/merge-patch+json",
	     "{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"unschedulable\":true}}", NULL, &r);
	assert_int_equal(r.code, 409);
	buf_free(&r.body);
	assert_int_equal(sim_cluster_node(f->w->cluster, "workers-1", &ni), 0);
	assert_false(ni.unschedulable);
	fx_free(f);
}

static void test_eviction_pdb_binding_delete(void **state)
{
	struct fx *f = fx_new();
	char web[64], batch[64], path[256];
	struct sim_pod_info pi;
	struct resp r;
	cJSON *j;

	(void)state;
	running_pod(f, "web", web, sizeof(web));
	running_pod(f, "batch", batch, sizeof(batch));
	/* the PDB is served, with its status */
	{
		int64_t deadline = now_ns() + DEADLINE_NS;

		for (;;) {
			j = get_json(f, "/apis/policy/v1/namespaces/default/poddisruptionbudgets/web");
			if (cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "status"),
							     "currentHealthy")->valueint == 3)
				break;
			cJSON_Delete(j);
			assert_true(now_ns() < deadline);
			nap();
		}
		assert_int_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "spec"),
								  "minAvailable")->valueint, 3);
		assert_int_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "status"),
								  "disruptionsAllowed")->valueint, 0);
		cJSON_Delete(j);
	}

	/* minAvailable 3 of 3: the budget says no */
	snprintf(path, sizeof(path), "/api/v1/namespaces/default/pods/%s/eviction", web);
	http(f, "POST", path, NULL,
	     "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":{\"name\":\"x\",\"namespace\":\"default\"}}",
	     NULL, &r);
	assert_int_equal(r.code, 429);
	j = cJSON_Parse(r.body.data);
	assert_string_equal(jstr(j, "kind"), "Status");
	assert_string_equal(jstr(j, "reason"), "TooManyRequests");
	cJSON_Delete(j);
	buf_free(&r.body);
	assert_int_equal(sim_cluster_pod(f->w->cluster, "default", web, &pi), 0);
	assert_false(pi.terminating);

	/* no budget: evicted */
	snprintf(path, sizeof(path), "/api/v1/namespaces/default/pods/%s/eviction", batch);
	http(f, "POST", path, NULL, "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\"}", NULL, &r);
	assert_int_equal(r.code, 201);
	assert_non_null(strstr(r.body.data, "\"status\":\"Success\""));
	buf_free(&r.body);
	http(f, "POST", "/api/v1/namespaces/default/pods/nosuch/eviction", NULL, "{}", NULL, &r);
	assert_int_equal(r.code, 404);
	buf_free(&r.body);

	/* binding: the pod that fits nowhere, put on a node by hand */
	http(f, "POST", "/api/v1/namespaces/default/pods/huge-1/binding", NULL,
	     "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"huge-1\"},"
	     "\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"workers-2\"}}", NULL, &r);
	assert_int_equal(r.code, 201);
	buf_free(&r.body);
	j = get_json(f, "/api/v1/namespaces/default/pods/huge-1");
	assert_string_equal(jstr(j, "spec.nodeName"), "workers-2");
	assert_string_equal(jstr(j, "status.phase"), "Running");
	cJSON_Delete(j);
	http(f, "POST", "/api/v1/namespaces/default/pods/huge-1/binding", NULL,
	     "{\"target\":{\"name\":\"workers-1\"}}", NULL, &r);
	assert_int_equal(r.code, 409);
	buf_free(&r.body);

	/* deleting a pod: a bare pod is gone for good */
	http(f, "DELETE", "/api/v1/namespaces/default/pods/huge-1?gracePeriodSeconds=0", NULL, NULL,
	     NULL, &r);
	assert_int_equal(r.code, 200);
	assert_non_null(strstr(r.body.data, "\"name\":\"huge-1\""));
	buf_free(&r.body);
	wait_items(f, "/api/v1/pods?labelSelector=app%3Dhuge", 0);
	http(f, "GET", "/api/v1/namespaces/default/pods/huge-1", NULL, NULL, NULL, &r);
	assert_int_equal(r.code, 404);
	buf_free(&r.body);
	fx_free(f);
}

static void test_leases_configmaps_events(void **state)
{
	struct fx *f = fx_new();
	static const char lease[] =
		"{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
		"\"metadata\":{\"name\":\"luascale\",\"namespace\":\"kube-system\"},"
		"\"spec\":{\"holderIdentity\":\"a\",\"leaseDurationSeconds\":15}}";
	const char *base = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases";
	char path[256], body[512], rv[32];
	struct resp r;
	cJSON *j;

	(void)state;
	http(f, "POST", base, NULL, lease, NULL, &r);
	assert_int_equal(r.code, 201);
	j = cJSON_Parse(r.body.data);
	snprintf(rv, sizeof(rv), "%s", jstr(j, "metadata.resourceVersion"));
	assert_non_null(jstr(j, "metadata.uid"));
	cJSON_Delete(j);
	buf_free(&r.body);
	http(f, "POST", base, NULL, lease, NULL, &r);
	assert_int_equal(r.code, 409);
	assert_non_null(strstr(r.body.data, "AlreadyExists"));
	buf_free(&r.body);

	snprintf(path, sizeof(path), "%s/luascale", base);
	/* an update from the resourceVersion read: accepted, a new version */
	snprintf(body, sizeof(body),
		 "{\"metadata\":{\"name\":\"luascale\",\"namespace\":\"kube-system\",\"resourceVersion\":\"%s\"},"
		 "\"spec\":{\"holderIdentity\":\"b\",\"leaseDurationSeconds\":15}}", rv);
	http(f, "PUT", path, NULL, body, NULL, &r);
	assert_int_equal(r.code, 200);
	j = cJSON_Parse(r.body.data);
	assert_string_equal(jstr(j, "spec.holderIdentity"), "b");
	assert_string_not_equal(jstr(j, "metadata.resourceVersion"), rv);
	cJSON_Delete(j);
	buf_free(&r.body);
	/* the same stale version again: 409 Conflict, nothing changes */
	snprintf(body, sizeof(body),
		 "{\"metadata\":{\"name\":\"luascale\",\"resourceVersion\":\"%s\"},"
		 "\"spec\":{\"holderIdentity\":\"c\"}}", rv);
	http(f, "PUT", path, NULL, body, NULL, &r);
	assert_int_equal(r.code, 409);
	assert_non_null(strstr(r.body.data, "\"reason\":\"Conflict\""));
	buf_free(&r.body);
	j = get_json(f, path);
	assert_string_equal(jstr(j, "spec.holderIdentity"), "b");
	cJSON_Delete(j);
	http(f, "PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/other", NULL,
	     "{\"metadata\":{\"name\":\"other\"}}", NULL, &r);
	assert_int_equal(r.code, 404);
	buf_free(&r.body);
	http(f, "DELETE", path, NULL, NULL, NULL, &r);
	assert_int_equal(r.code, 200);
	buf_free(&r.body);
	http(f, "GET", path, NULL, NULL, NULL, &r);
	assert_int_equal(r.code, 404);
	buf_free(&r.body);

	/* configmaps: create, patch, get, delete */
	http(f, "POST", "/api/v1/namespaces/default/configmaps", NULL,
	     "{\"metadata\":{\"name\":\"state\"},\"data\":{\"a\":\"1\"}}", NULL, &r);
	assert_int_equal(r.code, 201);
	buf_free(&r.body);
	http(f, "PATCH", "/api/v1/namespaces/default/configmaps/state", "application/merge-patch+json",
	     "{\"data\":{\"a\":null,\"b\":\"2\"}}", NULL, &r);
	assert_int_equal(r.code, 200);
	buf_free(&r.body);
	j = get_json(f, "/api/v1/namespaces/default/configmaps/state");
	assert_null(jstr(j, "data.a"));
	assert_string_equal(jstr(j, "data.b"), "2");
	assert_string_equal(jstr(j, "kind"), "ConfigMap");
	cJSON_Delete(j);
	http(f, "POST", "/api/v1/namespaces/default/configmaps", "application/cbor", "\xa0", NULL,
	     &r);
	assert_int_equal(r.code, 415);
	buf_free(&r.body);
	/* protobuf is read (test_sim_proto): a body without its magic is a 400 */
	http(f, "POST", "/api/v1/namespaces/default/configmaps", "application/vnd.kubernetes.protobuf",
	     "k8s", NULL, &r);
	assert_int_equal(r.code, 400);
	assert_non_null(strstr(r.body.data, "k8s"));
	buf_free(&r.body);
	http(f, "DELETE", "/api/v1/namespaces/default/configmaps/state", NULL, NULL, NULL, &r);
	assert_int_equal(r.code, 200);
	buf_free(&r.body);

	/* events: generateName, and found by the object they are about */
	http(f, "POST", "/api/v1/namespaces/default/events", NULL,
	     "{\"metadata\":{\"generateName\":\"workers-1.\"},\"involvedObject\":{\"kind\":\"Node\","
	     "\"name\":\"workers-1\"},\"reason\":\"Cordon\",\"message\":\"underused\",\"type\":\"Normal\"}",
	     NULL, &r);
	assert_int_equal(r.code, 201);
	buf_free(&r.body);
	assert_int_equal(count_items(f, "/api/v1/events?fieldSelector=involvedObject.name%3Dworkers-1,reason%3DCordon"), 1);
	assert_int_equal(count_items(f, "/api/v1/events?fieldSelector=involvedObject.name%3Dworkers-2,reason%3DCordon"), 0);
	{
		struct sim_stats st;

		sim_cluster_get_stats(f->w->cluster, &st);
		assert_int_equal(st.events, 1);
	}
	fx_free(f);
}

static void test_cloud_endpoints_and_kubeconfig(void **state)
{
	struct fx *f = fx_new();
	char path[] = "/tmp/test_sim_apiserver.kubeconfig.XXXXXX", text[2048], want[128];
	struct errbuf err;
	struct resp r;
	cJSON *j;
	FILE *fp;
	size_t n;
	int fd;

	(void)state;
	j = get_json(f, "/apis/sim.luascale.io/v1/groups");
	assert_string_equal(jstr(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "items"), 0), "name"),
			    "workers");
	cJSON_Delete(j);
	http(f, "POST", "/apis/sim.luascale.io/v1/launch", NULL, "{\"group\":\"workers\",\"count\":9}",
	     NULL, &r);
	assert_int_equal(r.code, 200);
	assert_non_null(strstr(r.body.data, "\"error\":\"Invalid\"")); /* above the group's max */
	buf_free(&r.body);
	http(f, "POST", "/apis/sim.luascale.io/v1/terminate", NULL,
	     "{\"group\":\"workers\",\"ids\":[\"workers-2\"]}", NULL, &r);
	assert_int_equal(r.code, 200);
	assert_non_null(strstr(r.body.data, "\"terminated\":1"));
	buf_free(&r.body);
	wait_items(f, "/api/v1/nodes", 1);
	http(f, "POST", "/apis/sim.luascale.io/v1/launch", NULL, "{\"group\":\"workers\"}", NULL, &r);
	assert_int_equal(r.code, 400);
	buf_free(&r.body);

	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(apiserver_write_kubeconfig(f->srv, path, &err), 0);
	fp = fopen(path, "r");
	assert_non_null(fp);
	n = fread(text, 1, sizeof(text) - 1, fp);
	text[n] = '\0';
	fclose(fp);
	unlink(path);
	snprintf(want, sizeof(want), "server: http://127.0.0.1:%d\n", apiserver_port(f->srv));
	assert_non_null(strstr(text, want));
	assert_non_null(strstr(text, "current-context: luascale-sim\n"));
	assert_non_null(strstr(text, "- name: luascale-sim\n  context:\n"));
	assert_non_null(strstr(text, "token: "));
	fx_free(f);
}

static void test_fault_parse(void **state)
{
	struct apiserver_faults fs;
	struct errbuf err;

	(void)state;
	memset(&fs, 0, sizeof(fs));
	assert_int_equal(apiserver_faults_parse(&fs, "throttle=0.5:create:pods/eviction", &err), 0);
	assert_int_equal(fs.rules[0].code, 429);
	assert_true(fs.rules[0].rate == 0.5);
	assert_string_equal(fs.rules[0].verb, "create");
	assert_string_equal(fs.rules[0].resource, "pods/eviction");
	assert_int_equal(apiserver_faults_parse(&fs, "error=3x:*:nodes:503", &err), 0);
	assert_int_equal(fs.rules[1].code, 503);
	assert_int_equal(fs.rules[1].count, 3);
	assert_string_equal(fs.rules[1].verb, "");
	assert_int_equal(apiserver_faults_parse(&fs, "down=20s@1m", &err), 0);
	assert_true(fs.down_for_ns == 20 * CLOCK_NS_PER_S && fs.down_after_ns == 60 * CLOCK_NS_PER_S);
	assert_int_equal(apiserver_faults_parse(&fs, "drop-watches=30s", &err), 0);
	assert_true(fs.drop_watches_ns == 30 * CLOCK_NS_PER_S);
	assert_int_equal(apiserver_faults_parse(&fs, "expire-watches=2", &err), 0);
	assert_int_equal(fs.expire_watches, 2);
	assert_int_equal(apiserver_faults_parse(&fs, "latency=250ms", &err), 0);
	assert_true(fs.latency_ns == 250 * CLOCK_NS_PER_MS);
	assert_int_equal(apiserver_faults_parse(&fs, "clear", &err), 0);
	assert_true(fs.clear);

	assert_int_equal(apiserver_faults_parse(&fs, "throttle=2", &err), -1);
	assert_non_null(strstr(err.msg, "rate"));
	assert_int_equal(apiserver_faults_parse(&fs, "throttle=1:fetch", &err), -1);
	assert_non_null(strstr(err.msg, "verb"));
	assert_int_equal(apiserver_faults_parse(&fs, "error=1:get:pods:404", &err), -1);
	assert_int_equal(apiserver_faults_parse(&fs, "throttle=1:get:pods:500", &err), -1);
	assert_int_equal(apiserver_faults_parse(&fs, "down=soon", &err), -1);
	assert_int_equal(apiserver_faults_parse(&fs, "gremlins=1", &err), -1);
	assert_non_null(strstr(err.msg, "unknown fault"));
	assert_int_equal(apiserver_faults_parse(&fs, "latency", &err), -1);
}

static void inject(struct fx *f, const char *spec)
{
	struct apiserver_faults fs;
	struct errbuf err;

	memset(&fs, 0, sizeof(fs));
	if (apiserver_faults_parse(&fs, spec, &err) < 0)
		fail_msg("%s", err.msg);
	apiserver_inject(f->srv, &fs);
}

static void test_faults(void **state)
{
	struct fx *f = fx_new();
	struct watcher *w;
	struct resp r;
	int64_t deadline;

	(void)state;
	/* 429 on the next list of nodes only, with Retry-After */
	inject(f, "throttle=1x:list:nodes");
	http(f, "GET", "/api/v1/nodes/workers-1", NULL, NULL, NULL, &r);
	assert_int_equal(r.code, 200); /* a get, not a list */
	buf_free(&r.body);
	http(f, "GET", "/api/v1/nodes", NULL, NULL, NULL, &r);
	assert_int_equal(r.code, 429);
	assert_string_equal(r.retry_after, "1");
	assert_non_null(strstr(r.body.data, "TooManyRequests"));
	buf_free(&r.body);
	http(f, "GET", "/api/v1/nodes", NULL, NULL, NULL, &r);
	assert_int_equal(r.code, 200);
	buf_free(&r.body);

	/* 5xx on evictions, always, until cleared */
	inject(f, "error=1:create:pods/eviction:503");
	http(f, "POST", "/api/v1/namespaces/default/pods/batch-1/eviction", NULL, "{}", NULL, &r);
	assert_int_equal(r.code, 503);
	buf_free(&r.body);
	http(f, "POST", "/api/v1/namespaces/default/pods/batch-1/eviction", NULL, "{}", NULL, &r);
	assert_int_equal(r.code, 503);
	buf_free(&r.body);
	inject(f, "clear");
	http(f, "GET", "/api/v1/namespaces/default/pods/batch-1", NULL, NULL, NULL, &r);
	assert_int_equal(r.code, 200);
	assert_null(strstr(r.body.data, "deletionTimestamp"));
	buf_free(&r.body);

	/* the next watch starts with a 410, the one after is fine */
	inject(f, "expire-watches=1");
	w = watch_start(f, "/api/v1/nodes?watch=1&resourceVersion=5");
	watch_wait_end(w);
	assert_non_null(strstr(w->got.data, "\"code\":410"));
	watch_stop(w);
	w = watch_start(f, "/api/v1/nodes?watch=1&allowWatchBookmarks=true&resourceVersion=5");
	watch_wait_for(w, "BOOKMARK");
	assert_false(watch_saw(w, "\"code\":410"));

	/* dropped watches: the stream is cut, not ended */
	inject(f, "drop-watches=now");
	watch_wait_end(w);
	assert_int_not_equal(w->err, CURLE_OK);
	watch_stop(w);

	/* dropped every so often */
	inject(f, "drop-watches=100ms");
	w = watch_start(f, "/api/v1/pods?watch=1&resourceVersion=1");
	watch_wait_end(w);
	assert_int_not_equal(w->err, CURLE_OK);
	watch_stop(w);
	inject(f, "clear");

	/* latency: answers still come */
	inject(f, "latency=50ms");
	http(f, "GET", "/version", NULL, NULL, NULL, &r);
	assert_int_equal(r.code, 200);
	buf_free(&r.body);
	inject(f, "clear");

	/* down: connection refused, then served again */
	inject(f, "down=1s");
	deadline = now_ns() + DEADLINE_NS;
	for (;;) {
		http(f, "GET", "/version", NULL, NULL, NULL, &r);
		buf_free(&r.body);
		if (r.err == CURLE_COULDNT_CONNECT)
			break;
		assert_true(now_ns() < deadline);
		nap();
	}
	for (;;) {
		http(f, "GET", "/api/v1/nodes", NULL, NULL, NULL, &r);
		buf_free(&r.body);
		if (r.err == CURLE_OK && r.code == 200)
			break;
		assert_int_equal(r.err, CURLE_COULDNT_CONNECT);
		assert_true(now_ns() < deadline);
		nap();
	}
	/* over the API as well */
	http(f, "POST", "/apis/sim.luascale.io/v1/faults", NULL, "{\"faults\":[\"throttle=1x:get:nodes\"]}",
	     NULL, &r);
	assert_int_equal(r.code, 200);
	buf_free(&r.body);
	http(f, "GET", "/api/v1/nodes/workers-1", NULL, NULL, NULL, &r);
	assert_int_equal(r.code, 429);
	buf_free(&r.body);
	http(f, "POST", "/apis/sim.luascale.io/v1/faults", NULL, "{\"faults\":[\"nonsense\"]}", NULL, &r);
	assert_int_equal(r.code, 400);
	buf_free(&r.body);
	fx_free(f);
}

/* ---- fidelity: what a real API server would answer ---- */

static void test_field_selectors_as_the_real_server(void **state)
{
	struct fx *f = fx_new();
	struct resp r;
	char web[64], path[300];
	cJSON *j;

	(void)state;
	running_pod(f, "web", web, sizeof(web));
	/* an absent spec.unschedulable is false */
	assert_int_equal(count_items(f, "/api/v1/nodes?fieldSelector=spec.unschedulable%3Dfalse"), 2);
	assert_int_equal(count_items(f, "/api/v1/nodes?fieldSelector=spec.unschedulable%21%3Dfalse"), 0);
	assert_int_equal(count_items(f, "/api/v1/nodes?fieldSelector=spec.unschedulable%3D%3Dtrue"), 0);
	/* the pod fields of the real server's field label conversions */
	assert_true(count_items(f, "/api/v1/pods?fieldSelector=spec.schedulerName%3Ddefault-scheduler") > 3);
	assert_true(count_items(f, "/api/v1/pods?fieldSelector=spec.restartPolicy%3DAlways") > 0);
	assert_true(count_items(f, "/api/v1/pods?fieldSelector=spec.hostNetwork%3Dfalse") > 3);
	assert_true(count_items(f, "/api/v1/pods?fieldSelector=spec.serviceAccountName%3D") > 3);
	assert_true(count_items(f, "/api/v1/pods?fieldSelector=status.nominatedNodeName%3D") > 3);
	snprintf(path, sizeof(path), "/api/v1/namespaces/default/pods/%s", web);
	j = get_json(f, path);
	assert_non_null(jstr(j, "status.podIP"));
	assert_non_null(jstr(j, "status.hostIP"));
	snprintf(path, sizeof(path), "/api/v1/pods?fieldSelector=status.podIP%%3D%s", jstr(j, "status.podIP"));
	assert_int_equal(count_items(f, path), 1);
	snprintf(path, sizeof(path), "/api/v1/pods?fieldSelector=status.podIPs%%3D%s", jstr(j, "status.podIP"));
	assert_int_equal(count_items(f, path), 1);
	cJSON_Delete(j);
	/* events: involvedObject.apiVersion, source, reportingComponent */
	http(f, "POST", "/api/v1/namespaces/default/events", NULL,
	     "{\"metadata\":{\"name\":\"e1\"},\"involvedObject\":{\"apiVersion\":\"v1\",\"kind\":\"Node\","
	     "\"name\":\"workers-1\"},\"reason\":\"R\",\"type\":\"Normal\",\"source\":{\"component\":\"me\"},"
	     "\"reportingComponent\":\"rc\"}", NULL, &r);
	assert_int_equal(r.code, 201);
	buf_free(&r.body);
	assert_int_equal(count_items(f, "/api/v1/events?fieldSelector=involvedObject.apiVersion%3Dv1,"
				     "involvedObject.kind%3DNode,source%3Dme,reportingComponent%3Drc"), 1);
	/* a field the real server does not select on: 400 with its message */
	http(f, "GET", "/api/v1/nodes?fieldSelector=spec.podCIDR%3Dx", NULL, NULL, NULL, &r);
	assert_int_equal(r.code, 400);
	assert_non_null(strstr(r.body.data, "field label not supported: spec.podCIDR"));
	buf_free(&r.body);
	fx_free(f);
}

static void test_watch_forms(void **state)
{
	struct fx *f = fx_new();
	struct watcher *w;
	struct resp r;
	char path[300];
	cJSON *j;

	(void)state;
	/* watch= any value but 0 and false is true (a client sends "True") */
	w = watch_start(f, "/api/v1/nodes?watch=True&timeoutSeconds=1");
	watch_wait_for(w, "\"type\":\"ADDED\"");
	watch_stop(w);
	http(f, "GET", "/api/v1/nodes?watch=false", NULL, NULL, NULL, &r);
	assert_int_equal(r.code, 200);
	assert_non_null(strstr(r.body.data, "\"kind\":\"NodeList\""));
	buf_free(&r.body);
	/* a named object with ?watch=true, and the legacy path: that object only */
	w = watch_start(f, "/api/v1/nodes/workers-1?watch=1&timeoutSeconds=1");
	watch_wait_end(w);
	assert_true(watch_saw(w, "\"name\":\"workers-1\""));
	assert_false(watch_saw(w, "\"name\":\"workers-2\""));
	watch_stop(w);
	w = watch_start(f, "/api/v1/watch/namespaces/kube-system/pods?timeoutSeconds=1");
	watch_wait_end(w);
	assert_true(watch_saw(w, "\"namespace\":\"kube-system\""));
	assert_false(watch_saw(w, "\"namespace\":\"default\""));
	watch_stop(w);
	w = watch_start(f, "/apis/policy/v1/watch/poddisruptionbudgets?timeoutSeconds=1");
	watch_wait_end(w);
	assert_true(watch_saw(w, "\"name\":\"web\""));
	watch_stop(w);
	/* sendInitialEvents: the objects, then a BOOKMARK saying they are all there */
	w = watch_start(f, "/api/v1/nodes?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&"
			"resourceVersionMatch=NotOlderThan&timeoutSeconds=1");
	watch_wait_end(w);
	pthread_mutex_lock(&w->mu);
	assert_non_null(strstr(w->got.data, "workers-2"));
	assert_non_null(strstr(strstr(w->got.data, "workers-2"), "\"k8s.io/initial-events-end\":\"true\""));
	pthread_mutex_unlock(&w->mu);
	watch_stop(w);
	http(f, "GET", "/api/v1/nodes?watch=1&sendInitialEvents=true", NULL, NULL, NULL, &r);
	assert_int_equal(r.code, 422);
	buf_free(&r.body);
	/* a resourceVersion from the future: 504 Too large resource version, retry later */
	j = get_json(f, "/api/v1/nodes");
	snprintf(path, sizeof(path), "/api/v1/nodes?resourceVersion=%llu",
		 strtoull(jstr(j, "metadata.resourceVersion"), NULL, 10) + 1000000);
	cJSON_Delete(j);
	http(f, "GET", path, NULL, NULL, NULL, &r);
	assert_int_equal(r.code, 504);
	assert_non_null(strstr(r.body.data, "Too large resource version"));
	assert_non_null(strstr(r.body.data, "\"retryAfterSeconds\":1"));
	assert_string_equal(r.retry_after, "1");
	buf_free(&r.body);
	fx_free(f);
}

/* The volume resources luascale run watches: served, empty, listed and
 * watched like the others, in protobuf too. */
static void test_volumes_served_empty(void **state)
{
	static const struct {
		const char *path, *list_kind, *api_version;
	} lists[] = {
		{"/api/v1/persistentvolumeclaims", "PersistentVolumeClaimList", "v1"},
		{"/api/v1/namespaces/default/persistentvolumeclaims", "PersistentVolumeClaimList", "v1"},
		{"/api/v1/persistentvolumes", "PersistentVolumeList", "v1"},
		{"/apis/storage.k8s.io/v1/storageclasses", "StorageClassList", "storage.k8s.io/v1"},
	};
	struct fx *f = fx_new();
	struct watcher *w;
	struct resp r;
	cJSON *j, *it;
	bool sc = false, pvc = false, pv = false;
	size_t i;

	(void)state;
	http(f, "GET", "/apis", NULL, NULL, NULL, &r);
	assert_int_equal(r.code, 200);
	assert_non_null(strstr(r.body.data, "\"storage.k8s.io/v1\""));
	buf_free(&r.body);
	j = get_json(f, "/apis/storage.k8s.io/v1");
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(j, "resources")) {
		if (strcmp(jstr(it, "name"), "storageclasses") != 0)
			continue;
		sc = true;
		assert_string_equal(jstr(it, "kind"), "StorageClass");
		assert_false(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "namespaced")));
	}
	cJSON_Delete(j);
	j = get_json(f, "/api/v1");
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(j, "resources")) {
		if (strcmp(jstr(it, "name"), "persistentvolumeclaims") == 0) {
			pvc = true;
			assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "namespaced")));
		}
		if (strcmp(jstr(it, "name"), "persistentvolumes") == 0) {
			pv = true;
			assert_false(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "namespaced")));
		}
	}
	cJSON_Delete(j);
	assert_true(sc && pvc && pv);

	for (i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		j = get_json(f, lists[i].path);
		assert_string_equal(jstr(j, "kind"), lists[i].list_kind);
		assert_string_equal(jstr(j, "apiVersion"), lists[i].api_version);
		assert_non_null(jstr(j, "metadata.resourceVersion"));
		assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "items")), 0);
		cJSON_Delete(j);
		/* described: a client that prefers protobuf gets it */
		http(f, "GET", lists[i].path, NULL, NULL,
		     "application/vnd.kubernetes.protobuf, application/json", &r);
		assert_int_equal(r.code, 200);
		assert_string_equal(r.content_type, "application/vnd.kubernetes.protobuf");
		buf_free(&r.body);
	}
	/* a watch opens and ends at its timeout, quietly */
	w = watch_start(f, "/apis/storage.k8s.io/v1/storageclasses?watch=1&timeoutSeconds=1");
	watch_wait_end(w);
	assert_false(watch_saw(w, "\"type\":\"ADDED\""));
	watch_stop(w);
	/* one that does not exist is a 404 NotFound naming its resource */
	http(f, "GET", "/apis/storage.k8s.io/v1/storageclasses/fast", NULL, NULL, NULL, &r);
	assert_int_equal(r.code, 404);
	assert_non_null(strstr(r.body.data, "storageclasses.storage.k8s.io \\\"fast\\\" not found"));
	buf_free(&r.body);
	fx_free(f);
}

static void test_dry_run_and_validation(void **state)
{
	struct fx *f = fx_new();
	struct resp r;
	char rv[32];
	cJSON *j;

	(void)state;
	http(f, "POST", "/api/v1/namespaces/default/configmaps", NULL,
	     "{\"metadata\":{\"name\":\"c\"},\"data\":{\"a\":\"1\"}}", NULL, &r);
	assert_int_equal(r.code, 201);
	buf_free(&r.body);
	j = get_json(f, "/api/v1/namespaces/default/configmaps/c");
	snprintf(rv, sizeof(rv), "%s", jstr(j, "metadata.resourceVersion"));
	cJSON_Delete(j);
	/* dryRun=All on every verb: answered as if done, nothing changes */
	http(f, "POST", "/api/v1/namespaces/default/configmaps?dryRun=All", NULL,
	     "{\"metadata\":{\"name\":\"d\"}}", NULL, &r);
	assert_int_equal(r.code, 201);
	buf_free(&r.body);
	http(f, "PUT", "/api/v1/namespaces/default/configmaps/c?dryRun=All", NULL,
	     "{\"metadata\":{\"name\":\"c\"},\"data\":{\"a\":\"2\"}}", NULL, &r);
	assert_int_equal(r.code, 200);
	assert_non_null(strstr(r.body.data, "\"a\":\"2\""));
	buf_free(&r.body);
	http(f, "PATCH", "/api/v1/namespaces/default/configmaps/c?dryRun=All",
	     "application/json-patch+json", "[{\"op\":\"add\",\"path\":\"/data/b\",\"value\":\"3\"}]", NULL, &r);
	assert_int_equal(r.code, 200);
	assert_non_null(strstr(r.body.data, "\"b\":\"3\""));
	buf_free(&r.body);
	http(f, "DELETE", "/api/v1/namespaces/default/configmaps/c?dryRun=All", NULL, NULL, NULL, &r);
	assert_int_equal(r.code, 200);
	buf_free(&r.body);
	http(f, "DELETE", "/api/v1/namespaces/default/configmaps/c", NULL, "{\"dryRun\":[\"All\"]}", NULL, &r);
	assert_int_equal(r.code, 200);
	buf_free(&r.body);
	http(f, "PATCH", "/api/v1/nodes/workers-1?dryRun=All", "application/merge-patch+json",
	     "{\"spec\":{\"unschedulable\":true}}", NULL, &r);
	assert_int_equal(r.code, 200);
	assert_non_null(strstr(r.body.data, "\"unschedulable\":true"));
	buf_free(&r.body);
	http(f, "DELETE", "/api/v1/nodes/workers-2?dryRun=All", NULL, NULL, NULL, &r);
	assert_int_equal(r.code, 200);
	buf_free(&r.body);
	j = get_json(f, "/api/v1/namespaces/default/configmaps/c");
	assert_string_equal(jstr(j, "metadata.resourceVersion"), rv);
	assert_string_equal(jstr(j, "data.a"), "1");
	cJSON_Delete(j);
	assert_int_equal(count_items(f, "/api/v1/namespaces/default/configmaps"), 1);
	assert_int_equal(count_items(f, "/api/v1/nodes?fieldSelector=spec.unschedulable%3Dfalse"), 2);
	assert_int_equal(count_items(f, "/api/v1/nodes"), 2);
	/* an unknown dryRun value */
	http(f, "POST", "/api/v1/namespaces/default/configmaps?dryRun=Some", NULL,
	     "{\"metadata\":{\"name\":\"e\"}}", NULL, &r);
	assert_int_equal(r.code, 422);
	assert_non_null(strstr(r.body.data, "supported values: \\\"All\\\""));
	buf_free(&r.body);

	/* unknown fields by fieldValidation; wrong types; the namespace */
	http(f, "POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Strict", NULL,
	     "{\"metadata\":{\"name\":\"s\",\"bogus\":1},\"data\":{}}", NULL, &r);
	assert_int_equal(r.code, 400);
	assert_non_null(strstr(r.body.data, "unknown field \\\"metadata.bogus\\\""));
	buf_free(&r.body);
	http(f, "POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Ignore", NULL,
	     "{\"metadata\":{\"name\":\"i\"},\"spec\":{}}", NULL, &r);
	assert_int_equal(r.code, 201);
	assert_null(strstr(r.body.data, "spec"));
	buf_free(&r.body);
	http(f, "POST", "/apis/coordination.k8s.io/v1/namespaces/default/leases", NULL,
	     "{\"metadata\":{\"name\":\"l\"},\"spec\":{\"leaseDurationSeconds\":\"15\"}}", NULL, &r);
	assert_int_equal(r.code, 400);
	assert_non_null(strstr(r.body.data, "spec.leaseDurationSeconds"));
	buf_free(&r.body);
	http(f, "POST", "/api/v1/namespaces/nowhere/configmaps", NULL, "{\"metadata\":{\"name\":\"x\"}}",
	     NULL, &r);
	assert_int_equal(r.code, 404);
	assert_non_null(strstr(r.body.data, "namespaces \\\"nowhere\\\" not found"));
	assert_non_null(strstr(r.body.data, "\"details\":{\"name\":\"nowhere\",\"kind\":\"namespaces\"}"));
	buf_free(&r.body);
	/* a patch type there is not: 415 before the body is read */
	http(f, "PATCH", "/api/v1/namespaces/default/configmaps/c", "application/json", "not json", NULL,
	     &r);
	assert_int_equal(r.code, 415);
	buf_free(&r.body);
	/* apply: fieldManager required; creates, then merges */
	http(f, "PATCH", "/api/v1/namespaces/default/configmaps/ap", "application/apply-patch+yaml",
	     "metadata: {name: ap}\ndata: {k: v}\n", NULL, &r);
	assert_int_equal(r.code, 422);
	buf_free(&r.body);
	http(f, "PATCH", "/api/v1/namespaces/default/configmaps/ap?fieldManager=t",
	     "application/apply-patch+yaml", "metadata: {name: ap}\ndata: {k: v}\n", NULL, &r);
	assert_int_equal(r.code, 201);
	buf_free(&r.body);
	http(f, "PATCH", "/api/v1/namespaces/default/configmaps/ap?fieldManager=t",
	     "application/apply-patch+yaml", "{\"metadata\":{\"name\":\"ap\"},\"data\":{\"k2\":\"w\"}}",
	     NULL, &r);
	assert_int_equal(r.code, 200);
	assert_non_null(strstr(r.body.data, "\"k2\":\"w\""));
	buf_free(&r.body);
	/* the access reviews kubectl auth can-i asks for */
	http(f, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", NULL,
	     "{\"spec\":{\"resourceAttributes\":{\"verb\":\"delete\",\"resource\":\"nodes\"}}}", NULL, &r);
	assert_int_equal(r.code, 201);
	assert_non_null(strstr(r.body.data, "\"allowed\":true"));
	buf_free(&r.body);
	http(f, "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", NULL,
	     "{\"spec\":{\"namespace\":\"default\"}}", NULL, &r);
	assert_int_equal(r.code, 201);
	assert_non_null(strstr(r.body.data, "\"resourceRules\":[{\"verbs\":[\"*\"]"));
	buf_free(&r.body);
	fx_free(f);
}

static void test_node_lifecycle(void **state)
{
	struct sim_node_info ni;
	struct fx *f = fx_new();
	struct watcher *w;
	struct resp r;
	char path[200];
	const char *added, *ready;
	cJSON *j;

	(void)state;
	j = get_json(f, "/api/v1/nodes/workers-1");
	assert_non_null(jstr(j, "status.nodeInfo.bootID"));
	assert_non_null(jstr(j, "status.nodeInfo.machineID"));
	assert_non_null(jstr(j, "status.nodeInfo.systemUUID"));
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "metadata"), "labels"),
		"kubernetes.io/os")), "linux");
	cJSON_Delete(j);
	j = get_json(f, "/api/v1/nodes");
	snprintf(path, sizeof(path), "/api/v1/nodes?watch=1&resourceVersion=%s",
		 jstr(j, "metadata.resourceVersion"));
	cJSON_Delete(j);
	w = watch_start(f, path);
	http(f, "POST", "/apis/sim.luascale.io/v1/launch", NULL, "{\"group\":\"workers\",\"count\":1}",
	     NULL, &r);
	assert_int_equal(r.code, 200);
	buf_free(&r.body);
	/* registered NotReady, then Ready */
	watch_wait_for(w, "\"reason\":\"KubeletReady\"");
	pthread_mutex_lock(&w->mu);
	added = strstr(w->got.data, "\"type\":\"ADDED\"");
	assert_non_null(added);
	ready = strstr(added, "\"reason\":\"KubeletReady\"");
	assert_non_null(strstr(added, "\"reason\":\"KubeletNotReady\""));
	assert_true(strstr(added, "\"reason\":\"KubeletNotReady\"") < ready);
	pthread_mutex_unlock(&w->mu);
	watch_stop(w);
	/* its kubelet renews a Lease */
	wait_items(f, "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", 3);
	j = get_json(f, "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/workers-3");
	assert_string_equal(jstr(j, "spec.holderIdentity"), "workers-3");
	cJSON_Delete(j);

	/* a kubelet that stops reporting: NotReady (Unknown), nothing scheduled there */
	http(f, "POST", "/apis/sim.luascale.io/v1/faults", NULL, "{\"faults\":[\"kubelet-down=workers-3\"]}",
	     NULL, &r);
	assert_int_equal(r.code, 200);
	buf_free(&r.body);
	http(f, "GET", "/api/v1/nodes/workers-3", NULL, NULL, NULL, &r);
	assert_int_equal(r.code, 200);
	assert_non_null(strstr(r.body.data, "\"type\":\"Ready\",\"status\":\"Unknown\",\"reason\":\"NodeStatusUnknown\""));
	buf_free(&r.body);
	assert_int_equal(sim_cluster_node(f->w->cluster, "workers-3", &ni), 0);
	assert_false(ni.ready);
	http(f, "POST", "/apis/sim.luascale.io/v1/faults", NULL, "{\"faults\":[\"kubelet-up=workers-3\"]}",
	     NULL, &r);
	assert_int_equal(r.code, 200);
	buf_free(&r.body);
	http(f, "GET", "/api/v1/nodes/workers-3", NULL, NULL, NULL, &r);
	assert_non_null(strstr(r.body.data, "\"reason\":\"KubeletReady\""));
	buf_free(&r.body);
	assert_int_equal(sim_cluster_node(f->w->cluster, "workers-3", &ni), 0);
	assert_true(ni.ready);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_discovery),
		cmocka_unit_test(test_list_and_pagination),
		cmocka_unit_test(test_watch_events_and_bookmarks),
		cmocka_unit_test(test_watch_expired_resource_version),
		cmocka_unit_test(test_node_patches),
		cmocka_unit_test(test_eviction_pdb_binding_delete),
		cmocka_unit_test(test_leases_configmaps_events),
		cmocka_unit_test(test_cloud_endpoints_and_kubeconfig),
		cmocka_unit_test(test_fault_parse),
		cmocka_unit_test(test_faults),
		cmocka_unit_test(test_field_selectors_as_the_real_server),
		cmocka_unit_test(test_watch_forms),
		cmocka_unit_test(test_volumes_served_empty),
		cmocka_unit_test(test_dry_run_and_validation),
		cmocka_unit_test(test_node_lifecycle),
	};
	int rc;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return rc;
}
