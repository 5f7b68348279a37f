/*
 * Tests for the informers against a local libmicrohttpd server: paginated
 * lists (continue tokens, a 410 on one), watch events applied to the cache,
 * bookmarks, an in-stream 410 (one relist), 429/500 and a dropped stream
 * (backoff, re-watch from the same resourceVersion, no relist), malformed
 * objects skipped and logged, prompt stops, snapshots of the caches (and
 * their *_known flags), optional kinds the server refuses (403, 404), and
 * what each change is said to mean (informer_classify, via on_change).
 * HTTP runs in real time: backoffs are a few milliseconds, every wait has a
 * deadline, nothing asserts on elapsed time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <time.h>

#include "kube/client.h"
#include "kube/informer.h"
#include "kube/kubeconfig.h"
#include "log.h"
#include "model.h"
#include "runtime/clock.h"
#include "test_kube_server.h"

#define DEADLINE_S 20
#define MAX_SEEN 32
#define WALL0 1767225600LL /* 2026-01-01T00:00:00Z */

/* ---- the scripted API server ---- */

struct seen {
	char args[MAX_SEEN][1024]; /* decoded query of each request */
	int n;
};

struct world;
/* Answers the n-th list (watch == false) or watch request of 'kind'. */
typedef void (*respond_fn)(struct world *w, enum informer_kind kind, bool watch, int n,
			   const struct ts_req *rq, struct ts_resp *rs);

struct world {
	struct ts_server srv;
	respond_fn respond;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct seen lists[INFORMER_KINDS];
	struct seen watches[INFORMER_KINDS];
	int other;                    /* requests for unknown paths */
	bool allow;                   /* r_refused: storageclasses are allowed now */
	char bodies[8][4096];         /* chunk storage that outlives the handler */
};

static const char *const list_kinds[INFORMER_KINDS] = {
	"NodeList", "PodList", "PodDisruptionBudgetList", "NamespaceList",
	"PersistentVolumeClaimList", "PersistentVolumeList", "StorageClassList", "DaemonSetList",
};

static const char *const kind_paths[INFORMER_KINDS] = {
	"/api/v1/nodes",
	"/api/v1/pods",
	"/apis/policy/v1/poddisruptionbudgets",
	"/api/v1/namespaces",
	"/api/v1/persistentvolumeclaims",
	"/api/v1/persistentvolumes",
	"/apis/storage.k8s.io/v1/storageclasses",
	"/apis/apps/v1/daemonsets",
};

static int kind_of(const char *path)
{
	int k;

	for (k = 0; k < INFORMER_KINDS; k++)
		if (strcmp(path, kind_paths[k]) == 0)
			return k;
	return -1;
}

/* The value of query argument 'key' in decoded "k=v&k=v" (a copy), or "" */
static const char *arg(const char *args, const char *key, char *out, size_t outlen)
{
	size_t kl = strlen(key);
	const char *p = args;

	out[0] = '\0';
	while (p && *p) {
		const char *amp = strchr(p, '&');
		size_t len = amp ? (size_t)(amp - p) : strlen(p);

		if (len > kl && strncmp(p, key, kl) == 0 && p[kl] == '=') {
			snprintf(out, outlen, "%.*s", (int)(len - kl - 1), p + kl + 1);
			return out;
		}
		p = amp ? amp + 1 : NULL;
	}
	return out;
}

static bool has_arg(const char *args, const char *key)
{
	char v[8];
	size_t kl = strlen(key);
	const char *p;

	arg(args, key, v, sizeof(v));
	if (v[0])
		return true;
	/* present with an empty value? */
	for (p = args; (p = strstr(p, key)) != NULL; p += kl)
		if ((p == args || p[-1] == '&') && p[kl] == '=')
			return true;
	return false;
}

/* An empty list at resourceVersion 1. */
static void empty_list(enum informer_kind kind, struct ts_resp *rs)
{
	snprintf(rs->body, sizeof(rs->body),
		 "{\"kind\":\"%s\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"1\"},"
		 "\"items\":[]}",
		 list_kinds[kind]);
}

/* A list page: 'items' is the JSON inside the array. */
static void list_page(struct ts_resp *rs, enum informer_kind kind, const char *rv,
		      const char *cont, const char *items)
{
	snprintf(rs->body, sizeof(rs->body),
		 "{\"kind\":\"%s\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"%s\""
		 ",\"continue\":\"%s\"},\"items\":[%s]}",
		 list_kinds[kind], rv, cont ? cont : "", items);
}

static void default_respond(struct world *w, enum informer_kind kind, bool watch, int n,
			    const struct ts_req *rq, struct ts_resp *rs)
{
	(void)w;
	(void)n;
	(void)rq;
	if (watch)
		rs->hold = true; /* a quiet watch that stays open */
	else
		empty_list(kind, rs);
}

static void handler(void *ud, size_t index, const struct ts_req *rq, struct ts_resp *rs)
{
	struct world *w = ud;
	int kind = kind_of(rq->path);
	bool watch;
	struct seen *sn;
	int n;

	(void)index;
	if (kind < 0 || strcmp(rq->method, "GET") != 0) {
		pthread_mutex_lock(&w->mu);
		w->other++;
		pthread_mutex_unlock(&w->mu);
		ts_status(rs, 404, "NotFound", "no such path");
		return;
	}
	watch = has_arg(rq->args, "watch");
	pthread_mutex_lock(&w->mu);
	sn = watch ? &w->watches[kind] : &w->lists[kind];
	n = sn->n;
	if (sn->n < MAX_SEEN)
		snprintf(sn->args[sn->n++], sizeof(sn->args[0]), "%s", rq->args);
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	(w->respond ? w->respond : default_respond)(w, (enum informer_kind)kind, watch, n, rq, rs);
}

static void world_start(struct world *w, respond_fn respond)
{
	memset(w, 0, sizeof(*w));
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	w->respond = respond;
	assert_int_equal(ts_start(&w->srv, handler, w, NULL, NULL), 0);
}

static void world_stop(struct world *w)
{
	ts_stop(&w->srv);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
}

static struct timespec deadline_ts(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += DEADLINE_S;
	return ts;
}

/* Waits until the server has seen 'n' watch (or list) requests of 'kind'. */
static void wait_requests(struct world *w, enum informer_kind kind, bool watch, int n)
{
	struct timespec ts = deadline_ts();
	struct seen *sn = watch ? &w->watches[kind] : &w->lists[kind];
	int got;

	pthread_mutex_lock(&w->mu);
	while (sn->n < n)
		if (pthread_cond_timedwait(&w->cv, &w->mu, &ts) != 0)
			break;
	got = sn->n;
	pthread_mutex_unlock(&w->mu);
	if (got < n)
		fail_msg("%s: %d %s requests seen, waited for %d", informer_kind_str(kind), got,
			 watch ? "watch" : "list", n);
}

static int count_requests(struct world *w, enum informer_kind kind, bool watch)
{
	int n;

	pthread_mutex_lock(&w->mu);
	n = watch ? w->watches[kind].n : w->lists[kind].n;
	pthread_mutex_unlock(&w->mu);
	return n;
}

/* Argument 'key' of the i-th watch (or list) request of 'kind'. */
static const char *req_arg(struct world *w, enum informer_kind kind, bool watch, int i,
			   const char *key)
{
	static char out[512];

	pthread_mutex_lock(&w->mu);
	arg((watch ? w->watches : w->lists)[kind].args[i], key, out, sizeof(out));
	pthread_mutex_unlock(&w->mu);
	return out;
}

/* ---- objects ---- */

/* Appends 's' to the string in 'out' (truncating). */
static void cat(char *out, size_t cap, const char *s)
{
	size_t n = strlen(out);

	snprintf(out + n, cap - n, "%s", s);
}

static const char *node_json(char *out, size_t n, const char *name, const char *rv,
			     const char *group)
{
	snprintf(out, n,
		 "{\"metadata\":{\"name\":\"%s\",\"resourceVersion\":\"%s\",\"labels\":{%s%s%s}},"
		 "\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"},"
		 "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
		 name, rv, group ? "\"group\":\"" : "", group ? group : "", group ? "\"" : "");
	return out;
}

static const char *pod_json(char *out, size_t n, const char *name, const char *rv,
			    const char *node)
{
	snprintf(out, n,
		 "{\"metadata\":{\"namespace\":\"default\",\"name\":\"%s\",\"resourceVersion\":\"%s\"},"
		 "\"spec\":{\"nodeName\":\"%s\",\"containers\":[{\"name\":\"c\",\"resources\":"
		 "{\"requests\":{\"cpu\":\"100m\",\"memory\":\"64Mi\"}}}]},"
		 "\"status\":{\"phase\":\"%s\"}}",
		 name, rv, node ? node : "", node ? "Running" : "Pending");
	return out;
}

static const char *event_json(char *out, size_t n, const char *type, const char *obj)
{
	if (snprintf(out, n, "{\"type\":\"%s\",\"object\":%s}\n", type, obj) >= (int)n)
		fail_msg("event too long for the test's buffer");
	return out;
}

/* ---- informers under test ---- */

struct logcap {
	pthread_mutex_t mu;
	char text[16384];
};

static void log_capture(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct logcap *c = ctx;
	size_t n;

	(void)level;
	(void)wall;
	pthread_mutex_lock(&c->mu);
	n = strlen(c->text);
	snprintf(c->text + n, sizeof(c->text) - n, "%s\n", msg);
	pthread_mutex_unlock(&c->mu);
}

static int log_count(struct logcap *c, const char *s)
{
	const char *p;
	int n = 0;

	pthread_mutex_lock(&c->mu);
	for (p = c->text; (p = strstr(p, s)) != NULL; p += strlen(s))
		n++;
	pthread_mutex_unlock(&c->mu);
	return n;
}

static bool log_has(struct logcap *c, const char *s)
{
	bool found;

	pthread_mutex_lock(&c->mu);
	found = strstr(c->text, s) != NULL;
	pthread_mutex_unlock(&c->mu);
	return found;
}

struct rig {
	struct world w;
	struct kube_client *client;
	struct informer_set *set;
	struct logcap cap;
	struct logger log;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int changes[INFORMER_KINDS]; /* on_change calls */
	enum informer_change classes[INFORMER_KINDS][16]; /* what each call said */
};

static void on_change(void *ctx, enum informer_kind kind, enum informer_change change)
{
	struct rig *r = ctx;

	pthread_mutex_lock(&r->mu);
	if (r->changes[kind] < 16)
		r->classes[kind][r->changes[kind]] = change;
	r->changes[kind]++;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

/* Waits until the cache of 'kind' reported 'n' changes. */
static void wait_changes(struct rig *r, enum informer_kind kind, int n)
{
	struct timespec ts = deadline_ts();
	int got;

	pthread_mutex_lock(&r->mu);
	while (r->changes[kind] < n)
		if (pthread_cond_timedwait(&r->cv, &r->mu, &ts) != 0)
			break;
	got = r->changes[kind];
	pthread_mutex_unlock(&r->mu);
	if (got < n)
		fail_msg("%s: %d changes reported, waited for %d", informer_kind_str(kind), got, n);
}

/* Tiny backoffs, jitter off, watch timeouts as given (0: defaults); the
 * log captured from 'min_level' up. */
static void rig_start_logging(struct rig *r, respond_fn respond, int64_t backoff_initial_ns,
			      enum log_level min_level)
{
	struct kube_config cfg;
	struct informer_opts o;
	struct errbuf err = {""};

	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	world_start(&r->w, respond);
	pthread_mutex_init(&r->cap.mu, NULL);
	r->log = (struct logger){.write = log_capture, .ctx = &r->cap, .min_level = min_level};
	memset(&cfg, 0, sizeof(cfg));
	cfg.server = r->w.srv.url;
	r->client = kube_client_new(&cfg, NULL, &err);
	if (!r->client)
		fail_msg("client: %s", err.msg);
	memset(&o, 0, sizeof(o));
	o.client = r->client;
	o.log = &r->log;
	o.backoff = (struct backoff_policy){.initial_ns = backoff_initial_ns,
					    .max_ns = backoff_initial_ns * 4,
					    .factor = 2,
					    .jitter = 0};
	o.seed = 42;
	o.on_change = on_change;
	o.on_change_ctx = r;
	r->set = informer_set_new(&o, &err);
	if (!r->set)
		fail_msg("informers: %s", err.msg);
	if (informer_set_start(r->set, &err) < 0)
		fail_msg("start: %s", err.msg);
}

static void rig_start(struct rig *r, respond_fn respond, int64_t backoff_initial_ns)
{
	rig_start_logging(r, respond, backoff_initial_ns, LOG_DEBUG);
}

static void rig_stop(struct rig *r)
{
	informer_set_free(r->set);
	kube_client_free(r->client);
	world_stop(&r->w);
	pthread_mutex_destroy(&r->cap.mu);
	pthread_cond_destroy(&r->cv);
	pthread_mutex_destroy(&r->mu);
}

/* Each test's rig lives in cmocka's state, so that a failed assertion
 * still stops the informers and the server (teardown runs either way). */
static int rig_setup(void **state)
{
	*state = calloc(1, sizeof(struct rig));
	return *state ? 0 : -1;
}

static int rig_teardown(void **state)
{
	struct rig *r = *state;

	if (r->client)
		rig_stop(r);
	free(r);
	return 0;
}

static struct informer *inf_of(struct rig *r, enum informer_kind k)
{
	return informer_set_get(r->set, k);
}

static int64_t deadline_ns(void)
{
	return clock_now(clock_real()) + DEADLINE_S * CLOCK_NS_PER_S;
}

static bool pred_events(const struct informer_stats *st, void *ctx)
{
	return st->events >= *(uint64_t *)ctx;
}

static bool pred_errors(const struct informer_stats *st, void *ctx)
{
	return st->errors >= *(uint64_t *)ctx;
}

static bool pred_synced(const struct informer_stats *st, void *ctx)
{
	(void)ctx;
	return st->synced;
}

static void wait_events(struct informer *inf, uint64_t n)
{
	if (informer_wait(inf, pred_events, &n, deadline_ns()) < 0)
		fail_msg("waited for %llu watch events", (unsigned long long)n);
}

static void wait_errors(struct informer *inf, uint64_t n)
{
	if (informer_wait(inf, pred_errors, &n, deadline_ns()) < 0)
		fail_msg("waited for %llu errors", (unsigned long long)n);
}

static void wait_synced(struct rig *r)
{
	struct errbuf err = {""};

	if (informer_set_wait_synced(r->set, deadline_ns(), &err) < 0)
		fail_msg("%s", err.msg);
}

static struct snapshot *snap(struct rig *r, const struct node_group *g, size_t n)
{
	struct errbuf err = {""};
	struct snapshot *s = informer_snapshot(r->set, g, n, WALL0, &err);

	if (!s)
		fail_msg("snapshot: %s", err.msg);
	return s;
}

static const struct pod *find_pod(const struct snapshot *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->n_pods; i++)
		if (strcmp(s->pods[i].name, name) == 0)
			return &s->pods[i];
	return NULL;
}

/* ---- pagination ---- */

static void r_pages(struct world *w, enum informer_kind kind, bool watch, int n,
		    const struct ts_req *rq, struct ts_resp *rs)
{
	char a[1024], b[1024], cont[64];

	if (kind != INFORMER_PODS || watch) {
		default_respond(w, kind, watch, n, rq, rs);
		return;
	}
	arg(rq->args, "continue", cont, sizeof(cont));
	if (!cont[0]) {
		snprintf(a, sizeof(a), "%s", pod_json(b, sizeof(b), "p1", "61", "n1"));
		cat(a, sizeof(a), ",");
		cat(a, sizeof(a), pod_json(b, sizeof(b), "p2", "62", NULL));
		list_page(rs, kind, "70", "tok/1=", a);
	} else if (strcmp(cont, "tok/1=") == 0) {
		snprintf(a, sizeof(a), "%s", pod_json(b, sizeof(b), "p3", "63", "n1"));
		cat(a, sizeof(a), ",");
		cat(a, sizeof(a), pod_json(b, sizeof(b), "p4", "64", "n2"));
		list_page(rs, kind, "70", "tok-2", a);
	} else if (strcmp(cont, "tok-2") == 0) {
		list_page(rs, kind, "77", NULL, pod_json(b, sizeof(b), "p5", "65", NULL));
	} else {
		ts_status(rs, 400, "BadRequest", "unknown continue token");
	}
}

static void test_pagination(void **state)
{
	struct rig *r = *state;
	struct informer_stats st;
	struct snapshot *s;
	char rv[64];
	int timeout;

	rig_start(r, r_pages, 10 * CLOCK_NS_PER_MS);
	wait_requests(&r->w, INFORMER_PODS, true, 1);
	assert_int_equal(count_requests(&r->w, INFORMER_PODS, false), 3);
	assert_string_equal(req_arg(&r->w, INFORMER_PODS, false, 0, "limit"), "500");
	assert_string_equal(req_arg(&r->w, INFORMER_PODS, false, 0, "continue"), "");
	assert_string_equal(req_arg(&r->w, INFORMER_PODS, false, 1, "continue"), "tok/1=");
	assert_string_equal(req_arg(&r->w, INFORMER_PODS, false, 2, "continue"), "tok-2");
	assert_string_equal(req_arg(&r->w, INFORMER_PODS, false, 2, "limit"), "500");
	/* the watch starts from the list's resourceVersion, with bookmarks */
	assert_string_equal(req_arg(&r->w, INFORMER_PODS, true, 0, "resourceVersion"), "77");
	assert_string_equal(req_arg(&r->w, INFORMER_PODS, true, 0, "allowWatchBookmarks"), "true");
	timeout = atoi(req_arg(&r->w, INFORMER_PODS, true, 0, "timeoutSeconds"));
	assert_true(timeout >= 300 && timeout < 600);

	informer_stats(inf_of(r, INFORMER_PODS), &st);
	assert_true(st.synced);
	assert_int_equal(st.pages, 3);
	assert_int_equal(st.lists, 1);
	assert_int_equal(st.relists, 0);
	assert_int_equal(st.objects, 5);
	assert_int_equal(st.skipped, 0);
	informer_resource_version(inf_of(r, INFORMER_PODS), rv, sizeof(rv));
	assert_string_equal(rv, "77");
	wait_changes(r, INFORMER_PODS, 1); /* the list */

	wait_synced(r);
	s = snap(r, NULL, 0);
	assert_int_equal(s->n_pods, 5);
	assert_non_null(find_pod(s, "p5"));
	/* sorted by namespace/name */
	assert_string_equal(s->pods[0].name, "p1");
	assert_string_equal(s->pods[4].name, "p5");
	snapshot_free(s);
}

/* A continue token that expired: the list starts again from the first page. */
static void r_cont_expired(struct world *w, enum informer_kind kind, bool watch, int n,
			   const struct ts_req *rq, struct ts_resp *rs)
{
	char b[1024], cont[64];

	if (kind != INFORMER_PODS || watch) {
		default_respond(w, kind, watch, n, rq, rs);
		return;
	}
	arg(rq->args, "continue", cont, sizeof(cont));
	if (!cont[0])
		list_page(rs, kind, n == 0 ? "30" : "40", "c1",
			  pod_json(b, sizeof(b), "p1", "1", "n1"));
	else if (n == 1)
		ts_status(rs, 410, "Expired", "The provided continue parameter is too old");
	else
		list_page(rs, kind, "40", NULL, pod_json(b, sizeof(b), "p2", "2", NULL));
}

static void test_continue_expired_restarts_list(void **state)
{
	struct rig *r = *state;
	struct informer_stats st;

	rig_start(r, r_cont_expired, 10 * CLOCK_NS_PER_MS);
	wait_requests(&r->w, INFORMER_PODS, true, 1);
	assert_int_equal(count_requests(&r->w, INFORMER_PODS, false), 4);
	assert_string_equal(req_arg(&r->w, INFORMER_PODS, false, 2, "continue"), "");
	assert_string_equal(req_arg(&r->w, INFORMER_PODS, false, 3, "continue"), "c1");
	assert_string_equal(req_arg(&r->w, INFORMER_PODS, true, 0, "resourceVersion"), "40");
	informer_stats(inf_of(r, INFORMER_PODS), &st);
	assert_int_equal(st.lists, 1);
	assert_int_equal(st.relists, 1);
	assert_int_equal(st.errors, 0);
	assert_int_equal(st.objects, 2);
}

/* ---- watch events ---- */

static void r_events(struct world *w, enum informer_kind kind, bool watch, int n,
		     const struct ts_req *rq, struct ts_resp *rs)
{
	char a[1024], b[1024];

	if (kind != INFORMER_NODES) {
		default_respond(w, kind, watch, n, rq, rs);
		return;
	}
	if (!watch) {
		a[0] = '\0';
		cat(a, sizeof(a), node_json(b, sizeof(b), "n1", "5", "a"));
		cat(a, sizeof(a), ",");
		cat(a, sizeof(a), node_json(b, sizeof(b), "n2", "6", "a"));
		list_page(rs, kind, "10", NULL, a);
		return;
	}
	rs->hold = true;
	if (n > 0)
		return;
	/* ADDED n3 split over two writes; MODIFIED n1 and DELETED n2 in one */
	event_json(w->bodies[0], sizeof(w->bodies[0]), "ADDED",
		   node_json(b, sizeof(b), "n3", "11", "b"));
	snprintf(w->bodies[1], sizeof(w->bodies[1]), "%s", w->bodies[0] + 40);
	w->bodies[0][40] = '\0';
	event_json(w->bodies[2], sizeof(w->bodies[2]), "MODIFIED",
		   node_json(b, sizeof(b), "n1", "12", "b"));
	event_json(a, sizeof(a), "DELETED", node_json(b, sizeof(b), "n2", "13", "a"));
	cat(w->bodies[2], sizeof(w->bodies[2]), a);
	rs->chunks[0] = w->bodies[0];
	rs->chunks[1] = w->bodies[1];
	rs->chunks[2] = w->bodies[2];
	rs->n_chunks = 3;
}

static void test_watch_events_update_cache(void **state)
{
	struct rig *r = *state;
	struct informer_stats st;
	struct snapshot *s;
	char rv[64];
	int32_t i;

	rig_start(r, r_events, 10 * CLOCK_NS_PER_MS);
	wait_events(inf_of(r, INFORMER_NODES), 3);
	informer_stats(inf_of(r, INFORMER_NODES), &st);
	assert_int_equal(st.objects, 2);
	assert_int_equal(st.lists, 1);
	assert_int_equal(st.watches, 1);
	assert_int_equal(st.skipped, 0);
	assert_int_equal(st.errors, 0);
	informer_resource_version(inf_of(r, INFORMER_NODES), rv, sizeof(rv));
	assert_string_equal(rv, "13");
	wait_changes(r, INFORMER_NODES, 4); /* the list and each event */

	s = snap(r, NULL, 0);
	assert_int_equal(s->n_nodes, 2);
	assert_int_equal(snapshot_find_node(s, "n2"), -1);
	i = snapshot_find_node(s, "n1");
	assert_true(i >= 0);
	assert_string_equal(kvlist_get(&s->nodes[i].labels, "group"), "b");
	i = snapshot_find_node(s, "n3");
	assert_true(i >= 0);
	assert_int_equal(s->nodes[i].allocatable.cpu_m, 4000);
	assert_true(s->nodes[i].ready);
	snapshot_free(s);
}

/* ---- what each change means ---- */

/* A pending pod as the API server serves it, with a status of 'status' (JSON). */
static const char *pending_pod(char *out, size_t n, const char *rv, const char *node,
			       const char *status)
{
	snprintf(out, n,
		 "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"namespace\":\"default\","
		 "\"name\":\"web-1\",\"uid\":\"u-1\",\"resourceVersion\":\"%s\","
		 "\"creationTimestamp\":\"2026-01-01T00:00:00Z\"},\"spec\":{\"nodeName\":\"%s\","
		 "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"3\"}}}]},"
		 "\"status\":%s}",
		 rv, node, status);
	return out;
}

#define UNSCHED(msg) \
	"{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\"," \
	"\"reason\":\"Unschedulable\",\"message\":\"" msg "\"," \
	"\"lastTransitionTime\":\"2026-01-01T00:00:01Z\"}]}"

static void r_classes(struct world *w, enum informer_kind kind, bool watch, int n,
		      const struct ts_req *rq, struct ts_resp *rs)
{
	char b[1024];
	int i;

	if (kind != INFORMER_PODS) {
		default_respond(w, kind, watch, n, rq, rs);
		return;
	}
	if (!watch) {
		list_page(rs, kind, "10", NULL,
			  pending_pod(b, sizeof(b), "9", "", "{\"phase\":\"Pending\"}"));
		return;
	}
	rs->hold = true;
	if (n > 0)
		return;
	/* the same pod, five times: a resourceVersion bump only; the
	 * scheduler's verdict; the verdict reworded; bound; a status update
	 * from the kubelet (container statuses, IPs, other conditions) */
	i = 0;
	event_json(w->bodies[i++], sizeof(w->bodies[0]), "MODIFIED",
		   pending_pod(b, sizeof(b), "11", "", "{\"phase\":\"Pending\"}"));
	event_json(w->bodies[i++], sizeof(w->bodies[0]), "MODIFIED",
		   pending_pod(b, sizeof(b), "12", "",
			       UNSCHED("0/3 nodes are available: 3 Insufficient cpu.")));
	event_json(w->bodies[i++], sizeof(w->bodies[0]), "MODIFIED",
		   pending_pod(b, sizeof(b), "13", "",
			       UNSCHED("0/4 nodes are available: 4 Insufficient cpu.")));
	event_json(w->bodies[i++], sizeof(w->bodies[0]), "MODIFIED",
		   pending_pod(b, sizeof(b), "14", "n1", "{\"phase\":\"Pending\"}"));
	event_json(w->bodies[i++], sizeof(w->bodies[0]), "MODIFIED",
		   pending_pod(b, sizeof(b), "15", "n1",
			       "{\"phase\":\"Pending\",\"hostIP\":\"10.0.0.1\",\"conditions\":["
			       "{\"type\":\"PodScheduled\",\"status\":\"True\"},"
			       "{\"type\":\"Initialized\",\"status\":\"True\"}],"
			       "\"containerStatuses\":[{\"name\":\"c\",\"ready\":false,"
			       "\"restartCount\":0,\"state\":{\"waiting\":"
			       "{\"reason\":\"ContainerCreating\"}}}]}"));
	for (rs->n_chunks = 0; rs->n_chunks < (size_t)i; rs->n_chunks++)
		rs->chunks[rs->n_chunks] = w->bodies[rs->n_chunks];
}

static void test_changes_are_classified(void **state)
{
	static const enum informer_change want[] = {
		INFORMER_CHANGED,       /* the list: a new pod, not tried yet */
		INFORMER_UNCHANGED,     /* resourceVersion only */
		INFORMER_UNSCHEDULABLE, /* the scheduler found no node */
		INFORMER_UNCHANGED,     /* ... and says why in other words */
		INFORMER_CHANGED,       /* bound */
		INFORMER_UNCHANGED,     /* the kubelet's status */
	};
	struct rig *r = *state;
	struct informer_stats st;
	size_t i;

	rig_start(r, r_classes, 10 * CLOCK_NS_PER_MS);
	wait_changes(r, INFORMER_PODS, 6);
	pthread_mutex_lock(&r->mu);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (r->classes[INFORMER_PODS][i] != want[i]) {
			pthread_mutex_unlock(&r->mu);
			fail_msg("change %zu: %s, expected %s", i,
				 informer_change_str(r->classes[INFORMER_PODS][i]),
				 informer_change_str(want[i]));
		}
	pthread_mutex_unlock(&r->mu);
	informer_stats(inf_of(r, INFORMER_PODS), &st);
	assert_int_equal(st.events, 5);
	assert_int_equal(st.unchanged, 3);
	assert_int_equal(st.skipped, 0);
}

/* ---- bookmarks ---- */

static void r_bookmark(struct world *w, enum informer_kind kind, bool watch, int n,
		       const struct ts_req *rq, struct ts_resp *rs)
{
	if (kind != INFORMER_PODS) {
		default_respond(w, kind, watch, n, rq, rs);
		return;
	}
	if (!watch) {
		list_page(rs, kind, "10", NULL, "");
		return;
	}
	if (n == 0) {
		/* a bookmark, then the server ends the watch (timeoutSeconds) */
		rs->chunks[0] = "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\","
				"\"metadata\":{\"resourceVersion\":\"50\"}}}\n";
		rs->n_chunks = 1;
	} else {
		rs->hold = true;
	}
}

static void test_bookmark_advances_resource_version(void **state)
{
	struct rig *r = *state;
	struct informer_stats st;
	char rv[64];

	rig_start(r, r_bookmark, 10 * CLOCK_NS_PER_MS);
	wait_requests(&r->w, INFORMER_PODS, true, 2);
	assert_string_equal(req_arg(&r->w, INFORMER_PODS, true, 0, "resourceVersion"), "10");
	assert_string_equal(req_arg(&r->w, INFORMER_PODS, true, 1, "resourceVersion"), "50");
	assert_int_equal(count_requests(&r->w, INFORMER_PODS, false), 1);
	informer_resource_version(inf_of(r, INFORMER_PODS), rv, sizeof(rv));
	assert_string_equal(rv, "50");
	informer_stats(inf_of(r, INFORMER_PODS), &st);
	assert_int_equal(st.events, 1);
	assert_int_equal(st.errors, 0); /* a clean end is not a failure */
	assert_int_equal(st.objects, 0);
}

/* ---- 410 in the stream ---- */

static void r_expired(struct world *w, enum informer_kind kind, bool watch, int n,
		      const struct ts_req *rq, struct ts_resp *rs)
{
	char b[1024];

	if (kind != INFORMER_PODS) {
		default_respond(w, kind, watch, n, rq, rs);
		return;
	}
	if (!watch) {
		if (n == 0)
			list_page(rs, kind, "10", NULL, pod_json(b, sizeof(b), "old", "9", "n1"));
		else
			list_page(rs, kind, "20", NULL, pod_json(b, sizeof(b), "new", "19", NULL));
		return;
	}
	if (n == 0) {
		rs->chunks[0] = "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
				"\"metadata\":{},\"status\":\"Failure\",\"message\":\"too old resource "
				"version: 10 (15)\",\"reason\":\"Expired\",\"code\":410}}\n";
		rs->n_chunks = 1;
		rs->hold = true; /* the informer must leave on its own */
	} else {
		rs->hold = true;
	}
}

static void test_expired_in_stream_relists_once(void **state)
{
	struct rig *r = *state;
	struct informer_stats st;
	struct snapshot *s;

	rig_start(r, r_expired, 10 * CLOCK_NS_PER_MS);
	wait_requests(&r->w, INFORMER_PODS, true, 2);
	assert_int_equal(count_requests(&r->w, INFORMER_PODS, false), 2);
	assert_string_equal(req_arg(&r->w, INFORMER_PODS, true, 0, "resourceVersion"), "10");
	assert_string_equal(req_arg(&r->w, INFORMER_PODS, true, 1, "resourceVersion"), "20");
	informer_stats(inf_of(r, INFORMER_PODS), &st);
	assert_int_equal(st.relists, 1);
	assert_int_equal(st.lists, 2);
	assert_int_equal(st.errors, 0);
	assert_int_equal(st.objects, 1);
	s = snap(r, NULL, 0);
	assert_int_equal(s->n_pods, 1);
	assert_non_null(find_pod(s, "new"));
	assert_null(find_pod(s, "old"));
	snapshot_free(s);
	/* a relist that replaced a pod by another is a change */
	wait_changes(r, INFORMER_PODS, 2);
	pthread_mutex_lock(&r->mu);
	assert_int_equal(r->classes[INFORMER_PODS][1], INFORMER_CHANGED);
	pthread_mutex_unlock(&r->mu);
}

/* ---- 429 and 500: back off, re-watch, no relist ---- */

static void r_throttled(struct world *w, enum informer_kind kind, bool watch, int n,
			const struct ts_req *rq, struct ts_resp *rs)
{
	if (kind != INFORMER_PODS) {
		default_respond(w, kind, watch, n, rq, rs);
		return;
	}
	if (!watch)
		list_page(rs, kind, "10", NULL, "");
	else if (n == 0)
		ts_status(rs, 429, "TooManyRequests", "slow down");
	else if (n == 1)
		ts_status(rs, 500, "InternalError", "etcd hiccup");
	else
		rs->hold = true;
}

static void test_429_and_500_rewatch_same_version(void **state)
{
	struct rig *r = *state;
	struct informer_stats st;
	int i;

	rig_start(r, r_throttled, 10 * CLOCK_NS_PER_MS);
	wait_requests(&r->w, INFORMER_PODS, true, 3);
	for (i = 0; i < 3; i++)
		assert_string_equal(req_arg(&r->w, INFORMER_PODS, true, i, "resourceVersion"),
				    "10");
	assert_int_equal(count_requests(&r->w, INFORMER_PODS, false), 1);
	informer_stats(inf_of(r, INFORMER_PODS), &st);
	assert_int_equal(st.errors, 2); /* each followed by a backoff */
	assert_int_equal(st.relists, 0);
	assert_int_equal(st.lists, 1);
	assert_true(log_has(&r->cap, "HTTP 429"));
	assert_true(log_has(&r->cap, "HTTP 500"));
}

/* ---- a connection dropped in the middle of an event ---- */

/*
 * The test server ends a held stream with an error (closing the connection
 * without finishing the chunked body) when its 'stopping' flag is set. The
 * test sets it while the first watch is held, and the handler clears it
 * (under the server's lock, which handlers run with) for the next one.
 */
static void r_dropped(struct world *w, enum informer_kind kind, bool watch, int n,
		      const struct ts_req *rq, struct ts_resp *rs)
{
	char b[1024];

	if (kind != INFORMER_PODS) {
		default_respond(w, kind, watch, n, rq, rs);
		return;
	}
	if (!watch) {
		list_page(rs, kind, "10", NULL, "");
		return;
	}
	rs->hold = true;
	if (n == 0) {
		event_json(w->bodies[0], sizeof(w->bodies[0]), "ADDED",
			   pod_json(b, sizeof(b), "p1", "11", "n1"));
		snprintf(w->bodies[1], sizeof(w->bodies[1]),
			 "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"namespace\":\"default\",\"na");
		rs->chunks[0] = w->bodies[0];
		rs->chunks[1] = w->bodies[1];
		rs->n_chunks = 2;
	} else {
		w->srv.stopping = false;
	}
}

static void test_dropped_stream_rewatches_without_relist(void **state)
{
	struct rig *r = *state;
	struct informer_stats st;

	rig_start(r, r_dropped, 10 * CLOCK_NS_PER_MS);
	wait_events(inf_of(r, INFORMER_PODS), 1);
	pthread_mutex_lock(&r->w.srv.mu);
	r->w.srv.stopping = true; /* drop the held stream */
	pthread_cond_broadcast(&r->w.srv.cv);
	pthread_mutex_unlock(&r->w.srv.mu);
	wait_requests(&r->w, INFORMER_PODS, true, 2);
	assert_string_equal(req_arg(&r->w, INFORMER_PODS, true, 0, "resourceVersion"), "10");
	assert_string_equal(req_arg(&r->w, INFORMER_PODS, true, 1, "resourceVersion"), "11");
	assert_int_equal(count_requests(&r->w, INFORMER_PODS, false), 1);
	informer_stats(inf_of(r, INFORMER_PODS), &st);
	assert_int_equal(st.errors, 1);
	assert_int_equal(st.relists, 0);
	assert_int_equal(st.objects, 1); /* the half event was not applied */
	assert_int_equal(st.skipped, 0);
}

/* ---- malformed objects ---- */

#define BAD_POD "{\"metadata\":{\"namespace\":\"default\",\"name\":\"bad\",\"resourceVersion\":\"7\"}," \
	"\"spec\":{\"priority\":\"high\",\"containers\":[]},\"status\":{}}"
#define BAD_POD2 "{\"metadata\":{\"namespace\":\"team\",\"name\":\"bad2\",\"resourceVersion\":\"12\"}," \
	"\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"lots\"}}}]}," \
	"\"status\":{}}"

static void r_malformed(struct world *w, enum informer_kind kind, bool watch, int n,
			const struct ts_req *rq, struct ts_resp *rs)
{
	char a[2048], b[1024];

	if (kind != INFORMER_PODS) {
		default_respond(w, kind, watch, n, rq, rs);
		return;
	}
	if (!watch) {
		snprintf(a, sizeof(a), "%s," BAD_POD ",", pod_json(b, sizeof(b), "p1", "5", "n1"));
		cat(a, sizeof(a), pod_json(b, sizeof(b), "p3", "6", NULL));
		list_page(rs, kind, "10", NULL, a);
		return;
	}
	rs->hold = true;
	if (n > 0)
		return;
	snprintf(w->bodies[0], sizeof(w->bodies[0]),
		 "{\"type\":\"MODIFIED\",\"object\":" BAD_POD2 "}\n");
	event_json(w->bodies[1], sizeof(w->bodies[1]), "ADDED",
		   pod_json(b, sizeof(b), "p4", "13", NULL));
	rs->chunks[0] = w->bodies[0];
	rs->chunks[1] = w->bodies[1];
	rs->n_chunks = 2;
}

static void test_malformed_object_skipped_and_logged(void **state)
{
	struct rig *r = *state;
	struct informer_stats st;
	struct snapshot *s;
	char rv[64];

	rig_start(r, r_malformed, 10 * CLOCK_NS_PER_MS);
	wait_events(inf_of(r, INFORMER_PODS), 2);
	informer_stats(inf_of(r, INFORMER_PODS), &st);
	assert_int_equal(st.skipped, 2);
	assert_int_equal(st.objects, 3);
	assert_int_equal(st.errors, 0);
	assert_true(st.running);
	assert_true(log_has(&r->cap, "Pod default/bad"));
	assert_true(log_has(&r->cap, "spec.priority"));
	assert_true(log_has(&r->cap, "Pod team/bad2"));
	/* the bad event still moved the resourceVersion on */
	informer_resource_version(inf_of(r, INFORMER_PODS), rv, sizeof(rv));
	assert_string_equal(rv, "13");
	s = snap(r, NULL, 0);
	assert_int_equal(s->n_pods, 3);
	assert_null(find_pod(s, "bad"));
	assert_null(find_pod(s, "bad2"));
	assert_non_null(find_pod(s, "p4"));
	snapshot_free(s);
}

/* ---- stopping ---- */

static void r_stuck(struct world *w, enum informer_kind kind, bool watch, int n,
		    const struct ts_req *rq, struct ts_resp *rs)
{
	(void)w;
	(void)rq;
	if (kind == INFORMER_NODES && !watch) {
		/* a list whose answer never completes */
		rs->chunks[0] = "{\"kind\":\"NodeList\",\"items\":[";
		rs->n_chunks = 1;
		rs->hold = true;
	} else if (kind == INFORMER_PODS && watch) {
		ts_status(rs, 500, "InternalError", "down");
	} else {
		default_respond(w, kind, watch, n, rq, rs);
	}
}

/*
 * Stops while one informer waits for a list that never completes, one sits
 * in an hour-long backoff and one holds an open watch: informer_set_free()
 * must return (the test's deadline is CTest's timeout, far below an hour).
 */
static void test_stop_is_prompt(void **state)
{
	struct rig *r = *state;
	struct informer_stats st;

	rig_start(r, r_stuck, 3600 * CLOCK_NS_PER_S);
	wait_requests(&r->w, INFORMER_NODES, false, 1);
	wait_errors(inf_of(r, INFORMER_PODS), 1);
	wait_requests(&r->w, INFORMER_PDBS, true, 1);
	assert_false(informer_set_synced(r->set));
	informer_set_stop(r->set);
	informer_stats(inf_of(r, INFORMER_PODS), &st);
	assert_false(st.running);
	assert_int_equal(st.watches, 1);
	informer_stats(inf_of(r, INFORMER_NODES), &st);
	assert_false(st.running);
	assert_false(st.synced);
}

/* ---- synced, with a deadline ---- */

static void r_pdb_down(struct world *w, enum informer_kind kind, bool watch, int n,
		       const struct ts_req *rq, struct ts_resp *rs)
{
	if (kind == INFORMER_PDBS && !watch)
		ts_status(rs, 503, "ServiceUnavailable", "not yet");
	else
		default_respond(w, kind, watch, n, rq, rs);
}

static void test_wait_synced_deadline(void **state)
{
	struct rig *r = *state;
	struct errbuf err = {""};

	rig_start(r, r_pdb_down, 10 * CLOCK_NS_PER_MS);
	wait_requests(&r->w, INFORMER_PDBS, false, 2);
	assert_int_equal(informer_wait(inf_of(r, INFORMER_NODES), pred_synced, NULL,
				       deadline_ns()), 0);
	assert_int_equal(informer_wait(inf_of(r, INFORMER_PODS), pred_synced, NULL,
				       deadline_ns()), 0);
	assert_int_equal(informer_set_wait_synced(r->set, clock_now(clock_real()) +
						  50 * CLOCK_NS_PER_MS, &err), -1);
	assert_non_null(strstr(err.msg, "poddisruptionbudgets"));
	assert_null(strstr(err.msg, "nodes"));
	assert_false(informer_set_synced(r->set));
}

/* ---- snapshots ---- */

static void r_cluster(struct world *w, enum informer_kind kind, bool watch, int n,
		      const struct ts_req *rq, struct ts_resp *rs)
{
	char a[4096], b[1024];

	if (watch) {
		default_respond(w, kind, watch, n, rq, rs);
		return;
	}
	a[0] = '\0';
	switch (kind) {
	case INFORMER_NODES:
		cat(a, sizeof(a), node_json(b, sizeof(b), "n1", "1", "a"));
		cat(a, sizeof(a), ",");
		cat(a, sizeof(a), node_json(b, sizeof(b), "n2", "2", "b"));
		cat(a, sizeof(a), ",");
		cat(a, sizeof(a), node_json(b, sizeof(b), "n3", "3", NULL));
		list_page(rs, kind, "100", NULL, a);
		break;
	case INFORMER_PODS:
		cat(a, sizeof(a), pod_json(b, sizeof(b), "web-1", "4", "n1"));
		cat(a, sizeof(a), ",");
		cat(a, sizeof(a), pod_json(b, sizeof(b), "web-2", "5", "n1"));
		cat(a, sizeof(a), ",");
		cat(a, sizeof(a), pod_json(b, sizeof(b), "db-1", "6", "n2"));
		cat(a, sizeof(a), ",");
		cat(a, sizeof(a), pod_json(b, sizeof(b), "pending-1", "7", NULL));
		list_page(rs, kind, "101", NULL, a);
		break;
	case INFORMER_PDBS:
		list_page(rs, kind, "102", NULL,
			  "{\"metadata\":{\"namespace\":\"default\",\"name\":\"web\"},"
			  "\"spec\":{\"minAvailable\":1,\"selector\":{\"matchLabels\":{\"app\":\"web\"}}},"
			  "\"status\":{\"disruptionsAllowed\":1}}");
		break;
	case INFORMER_NAMESPACES:
		list_page(rs, kind, "103", NULL,
			  "{\"metadata\":{\"name\":\"default\",\"labels\":{\"team\":\"web\"}}},"
			  "{\"metadata\":{\"name\":\"kube-system\"}}");
		break;
	case INFORMER_PVCS:
		list_page(rs, kind, "104", NULL,
			  "{\"metadata\":{\"namespace\":\"default\",\"name\":\"data\"},"
			  "\"spec\":{\"volumeName\":\"pv-1\",\"storageClassName\":\"zonal\"}}");
		break;
	case INFORMER_PVS:
		list_page(rs, kind, "105", NULL,
			  "{\"metadata\":{\"name\":\"pv-1\"},\"spec\":{\"nodeAffinity\":{\"required\":"
			  "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"zone\","
			  "\"operator\":\"In\",\"values\":[\"z1\"]}]}]}}}}");
		break;
	case INFORMER_STORAGE_CLASSES:
		list_page(rs, kind, "106", NULL,
			  "{\"metadata\":{\"name\":\"zonal\"},"
			  "\"volumeBindingMode\":\"WaitForFirstConsumer\"}");
		break;
	case INFORMER_DAEMONSETS:
		list_page(rs, kind, "107", NULL,
			  "{\"metadata\":{\"namespace\":\"kube-system\",\"name\":\"agent\"},"
			  "\"spec\":{\"template\":{\"metadata\":{\"labels\":{\"app\":\"agent\"}},"
			  "\"spec\":{\"containers\":[{\"name\":\"a\",\"resources\":{\"requests\":"
			  "{\"cpu\":\"50m\"}}}]}}}}");
		break;
	}
}

static void test_snapshot_of_the_caches(void **state)
{
	struct rig *r = *state;
	struct snapshot *s;
	struct kv sel_a = {"group", "a"}, sel_b = {"group", "b"};
	struct node_group groups[2];
	int32_t n1, n2, n3;
	const struct pod *p;

	memset(groups, 0, sizeof(groups));
	groups[0] = (struct node_group){.name = "a", .min = 0, .max = 5,
					.selector = {&sel_a, 1}, .target = -1};
	groups[1] = (struct node_group){.name = "b", .min = 0, .max = 5,
					.selector = {&sel_b, 1}, .target = -1};
	rig_start(r, r_cluster, 10 * CLOCK_NS_PER_MS);
	wait_synced(r);
	assert_true(informer_set_synced(r->set));
	s = snap(r, groups, 2);
	assert_int_equal(s->now, WALL0);
	assert_int_equal(s->n_nodes, 3);
	assert_int_equal(s->n_pods, 4);
	assert_int_equal(s->n_pdbs, 1);
	assert_int_equal(s->n_groups, 2);
	n1 = snapshot_find_node(s, "n1");
	n2 = snapshot_find_node(s, "n2");
	n3 = snapshot_find_node(s, "n3");
	assert_true(n1 >= 0 && n2 >= 0 && n3 >= 0);
	assert_int_equal(s->nodes[n1].group, 0);
	assert_int_equal(s->nodes[n2].group, 1);
	assert_int_equal(s->nodes[n3].group, -1);
	assert_int_equal(s->groups[0].current, 1);
	assert_int_equal(s->groups[1].current, 1);
	assert_int_equal(s->nodes[n1].n_pods, 2);
	assert_int_equal(s->nodes[n2].n_pods, 1);
	assert_int_equal(s->nodes[n3].n_pods, 0);
	assert_int_equal(s->nodes[n1].requested.cpu_m, 200);
	assert_int_equal(s->n_pending, 1);
	p = &s->pods[s->pending[0]];
	assert_string_equal(p->name, "pending-1");
	assert_int_equal(p->node, -1);
	assert_string_equal(s->pdbs[0].name, "web");
	assert_int_equal(s->pdbs[0].disruptions_allowed, 1);
	/* the optional kinds, all listed: known */
	assert_int_equal(s->n_namespaces, 2);
	assert_string_equal(s->namespaces[0].name, "default");
	assert_int_equal(s->n_pvcs, 1);
	assert_int_equal(s->n_pvs, 1);
	assert_int_equal(s->n_storage_classes, 1);
	assert_int_equal(s->n_daemonsets, 1);
	assert_true(s->namespaces_known);
	assert_true(s->volumes_known);
	assert_true(s->daemonsets_known);

	/* the snapshot holds its objects: it outlives the informers */
	informer_set_free(r->set);
	r->set = NULL;
	assert_string_equal(s->nodes[n2].name, "n2");
	assert_string_equal(kvlist_get(&s->nodes[n1].labels, "group"), "a");
	assert_string_equal(find_pod(s, "db-1")->node_name, "n2");
	assert_string_equal(kvlist_get(&s->namespaces[0].labels, "team"), "web");
	assert_string_equal(s->pvcs[0].volume_name, "pv-1");
	assert_string_equal(s->pvs[0].node_affinity.terms[0].exprs[0].values[0], "z1");
	assert_true(s->storage_classes[0].wait_for_first_consumer);
	assert_string_equal(s->daemonsets[0].tmpl.name, "agent");
	assert_int_equal(s->daemonsets[0].tmpl.requests.cpu_m, 50);
	assert_int_equal(s->daemonsets[0].tmpl.node, -1);
	snapshot_free(s);
}

/* ---- optional kinds the server refuses ---- */

/* StorageClasses forbidden until w->allow, namespaces not served at all,
 * DaemonSets listed but their watch forbidden; the rest as usual. */
static void r_refused(struct world *w, enum informer_kind kind, bool watch, int n,
		      const struct ts_req *rq, struct ts_resp *rs)
{
	bool allow;

	pthread_mutex_lock(&w->mu);
	allow = w->allow;
	pthread_mutex_unlock(&w->mu);
	if (kind == INFORMER_STORAGE_CLASSES && !allow)
		ts_status(rs, 403, "Forbidden",
			  "storageclasses.storage.k8s.io is forbidden: User system:serviceaccount:"
			  "kube-system:luascale cannot list resource storageclasses");
	else if (kind == INFORMER_NAMESPACES)
		ts_status(rs, 404, "NotFound", "the server could not find the requested resource");
	else if (kind == INFORMER_DAEMONSETS && watch)
		ts_status(rs, 403, "Forbidden", "cannot watch resource daemonsets");
	else
		default_respond(w, kind, watch, n, rq, rs);
}

static bool pred_unavailable(const struct informer_stats *st, void *ctx)
{
	(void)ctx;
	return st->unavailable;
}

static void test_optional_kinds_refused(void **state)
{
	struct rig *r = *state;
	struct informer_stats st;
	struct snapshot *s;
	char why[512];

	/* retries log at debug level: the capture keeps what is said once */
	rig_start_logging(r, r_refused, 10 * CLOCK_NS_PER_MS, LOG_INFO);
	assert_false(informer_kind_optional(INFORMER_NODES) || informer_kind_optional(INFORMER_PODS) ||
		     informer_kind_optional(INFORMER_PDBS));
	assert_true(informer_kind_optional(INFORMER_STORAGE_CLASSES) &&
		    informer_kind_optional(INFORMER_NAMESPACES) &&
		    informer_kind_optional(INFORMER_DAEMONSETS));
	/* the required kinds are enough to start */
	wait_synced(r);
	assert_true(informer_set_synced(r->set));
	/* asked again and again, said once */
	wait_requests(&r->w, INFORMER_STORAGE_CLASSES, false, 4);
	wait_requests(&r->w, INFORMER_NAMESPACES, false, 3);
	wait_requests(&r->w, INFORMER_DAEMONSETS, true, 3);
	assert_int_equal(log_count(&r->cap, "forbids luascale to list storageclasses.storage.k8s.io"), 1);
	assert_true(log_has(&r->cap, "resources: [\"storageclasses\"], verbs: [\"list\", \"watch\"]"));
	assert_true(log_has(&r->cap, "apiGroups: [\"storage.k8s.io\"]"));
	assert_true(log_has(&r->cap, "(volumes_known false)"));
	assert_true(log_has(&r->cap, "(HTTP 403: storageclasses.storage.k8s.io is forbidden: User"));
	assert_int_equal(log_count(&r->cap, "forbids luascale to watch daemonsets.apps"), 1);
	assert_int_equal(log_count(&r->cap, "does not serve /api/v1/namespaces"), 1);
	informer_stats(inf_of(r, INFORMER_STORAGE_CLASSES), &st);
	assert_true(st.unavailable);
	assert_false(st.synced);
	assert_true(st.running);
	informer_stats(inf_of(r, INFORMER_DAEMONSETS), &st);
	assert_true(st.unavailable);
	assert_true(st.synced);
	informer_stats(inf_of(r, INFORMER_PVCS), &st);
	assert_false(st.unavailable);

	/* snapshots say what is unknown; the rest is known */
	s = snap(r, NULL, 0);
	assert_false(s->volumes_known);
	assert_false(s->namespaces_known);
	assert_false(s->daemonsets_known);
	snapshot_free(s);
	/* unknown is not stale: the live watches of the others keep rounds going */
	assert_false(informer_set_stale(r->set, clock_now(clock_real()) + 3600 * CLOCK_NS_PER_S,
					30 * CLOCK_NS_PER_S, why, sizeof(why)));

	/* the ClusterRole fixed: picked up at the next try */
	pthread_mutex_lock(&r->w.mu);
	r->w.allow = true;
	pthread_mutex_unlock(&r->w.mu);
	if (informer_wait(inf_of(r, INFORMER_STORAGE_CLASSES), pred_synced, NULL, deadline_ns()) < 0)
		fail_msg("storageclasses never listed once allowed");
	wait_requests(&r->w, INFORMER_STORAGE_CLASSES, true, 1); /* after the list's log */
	informer_stats(inf_of(r, INFORMER_STORAGE_CLASSES), &st);
	assert_false(st.unavailable);
	assert_true(log_has(&r->cap, "informer storageclasses: the API server answers the list now"));
	s = snap(r, NULL, 0);
	assert_true(s->volumes_known);
	assert_false(s->namespaces_known);
	snapshot_free(s);
	/* the DaemonSets' watch is still refused */
	assert_int_equal(informer_wait(inf_of(r, INFORMER_DAEMONSETS), pred_unavailable, NULL,
				       deadline_ns()), 0);
}

/* ---- the clones the cache keeps ---- */

static void test_clone_is_self_contained(void **state)
{
	struct errbuf err = {""};
	struct snapshot *s = snapshot_new();
	const char *pod =
		"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"x\",\"uid\":\"u-7\","
		"\"labels\":{\"app\":\"web\",\"tier\":\"\"},\"annotations\":{\"a\":\"b\"},"
		"\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"rs\",\"controller\":true}]},"
		"\"spec\":{\"nodeName\":\"\",\"nodeSelector\":{\"zone\":\"z1\"},"
		"\"tolerations\":[{\"key\":\"k\",\"operator\":\"Equal\",\"value\":\"v\",\"effect\":\"NoSchedule\"},"
		"{\"operator\":\"Exists\"}],"
		"\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
		"{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"t\",\"operator\":\"In\","
		"\"values\":[\"a\",\"b\"]}],\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\","
		"\"values\":[\"n1\"]}]}]}}},"
		"\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\","
		"\"nvidia.com/gpu\":\"2\"}}}]},\"status\":{\"phase\":\"Pending\"}}";
	const char *node =
		"{\"kind\":\"Node\",\"metadata\":{\"name\":\"n\",\"labels\":{\"a\":\"b\"}},"
		"\"spec\":{\"providerID\":\"sim://n\",\"taints\":[{\"key\":\"k\",\"effect\":\"NoExecute\"}]},"
		"\"status\":{\"allocatable\":{\"cpu\":\"2\",\"example.com/fpga\":\"1\"}}}";
	const char *pdb =
		"{\"kind\":\"PodDisruptionBudget\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"b\"},"
		"\"spec\":{\"maxUnavailable\":\"10%\",\"selector\":{\"matchLabels\":{\"app\":\"web\"},"
		"\"matchExpressions\":[{\"key\":\"tier\",\"operator\":\"Exists\"}]}}}";
	struct pod *pc;
	struct node *nc;
	struct pdb *bc;

	(void)state;
	assert_int_equal(snapshot_add_json(s, pod, strlen(pod), "pod", &err), 0);
	assert_int_equal(snapshot_add_json(s, node, strlen(node), "node", &err), 0);
	assert_int_equal(snapshot_add_json(s, pdb, strlen(pdb), "pdb", &err), 0);
	pc = pod_clone(&s->pods[0]);
	nc = node_clone(&s->nodes[0]);
	bc = pdb_clone(&s->pdbs[0]);
	assert_non_null(pc);
	assert_non_null(nc);
	assert_non_null(bc);
	snapshot_free(s); /* the clones must not point into it */

	assert_string_equal(pc->ns, "ns");
	assert_string_equal(pc->uid, "u-7");
	assert_string_equal(kvlist_get(&pc->labels, "app"), "web");
	assert_string_equal(kvlist_get(&pc->labels, "tier"), "");
	assert_string_equal(pc->controller_kind, "ReplicaSet");
	assert_string_equal(kvlist_get(&pc->node_selector, "zone"), "z1");
	assert_int_equal(pc->n_tolerations, 2);
	assert_string_equal(pc->tolerations[0].value, "v");
	assert_int_equal(pc->affinity.n_terms, 1);
	assert_int_equal(pc->affinity.terms[0].exprs[0].n_values, 2);
	assert_string_equal(pc->affinity.terms[0].exprs[0].values[1], "b");
	assert_string_equal(pc->affinity.terms[0].fields[0].values[0], "n1");
	assert_int_equal(pc->requests.cpu_m, 1000);
	assert_int_equal(resources_ext(&pc->requests, "nvidia.com/gpu"), 2);
	assert_int_equal(pc->node, -1);

	assert_string_equal(nc->provider_id, "sim://n");
	assert_int_equal(nc->n_taints, 1);
	assert_string_equal(nc->taints[0].key, "k");
	assert_int_equal(resources_ext(&nc->allocatable, "example.com/fpga"), 1);
	assert_int_equal(nc->group, -1);
	assert_null(nc->pods);

	assert_string_equal(bc->max_unavailable, "10%");
	assert_int_equal(bc->selector.n, 2);
	assert_string_equal(bc->selector.reqs[0].values[0], "web");
	assert_string_equal(bc->selector.reqs[1].key, "tier");
	free(pc);
	free(nc);
	free(bc);
}

/* ---- the retry schedule, on injected times ---- */

static const struct backoff_policy retry_policy = {
	.initial_ns = CLOCK_NS_PER_S, .max_ns = 8 * CLOCK_NS_PER_S, .factor = 2, .jitter = 0};

static void test_retry_410_backs_off_after_the_first(void **state)
{
	struct informer_retry r;
	int64_t t = 1000 * CLOCK_NS_PER_S;

	(void)state;
	informer_retry_init(&r, &retry_policy, 120 * CLOCK_NS_PER_S, 7, t);
	assert_int_equal(informer_retry_expired(&r, t), 0); /* the first: at once */
	assert_int_equal(informer_retry_expired(&r, t += CLOCK_NS_PER_S), CLOCK_NS_PER_S);
	assert_int_equal(informer_retry_expired(&r, t += CLOCK_NS_PER_S), 2 * CLOCK_NS_PER_S);
	assert_int_equal(informer_retry_expired(&r, t += 2 * CLOCK_NS_PER_S), 4 * CLOCK_NS_PER_S);
	assert_int_equal(informer_retry_expired(&r, t += 4 * CLOCK_NS_PER_S), 8 * CLOCK_NS_PER_S);
	assert_int_equal(informer_retry_expired(&r, t += 8 * CLOCK_NS_PER_S), 8 * CLOCK_NS_PER_S);
	/* a successful list does not end a 410 storm */
	informer_retry_listed(&r);
	assert_int_equal(informer_retry_expired(&r, t += 8 * CLOCK_NS_PER_S), 8 * CLOCK_NS_PER_S);
	/* a healthy period does */
	assert_int_equal(informer_retry_expired(&r, t += 120 * CLOCK_NS_PER_S), 0);
	assert_int_equal(informer_retry_expired(&r, t += CLOCK_NS_PER_S), CLOCK_NS_PER_S);
}

static void test_retry_list_resets_failures(void **state)
{
	struct informer_retry r;
	int64_t t = 5 * CLOCK_NS_PER_S;

	(void)state;
	informer_retry_init(&r, &retry_policy, 120 * CLOCK_NS_PER_S, 7, t);
	assert_int_equal(informer_retry_failed(&r, t), CLOCK_NS_PER_S);
	informer_retry_waited(&r, t += CLOCK_NS_PER_S);
	assert_int_equal(informer_retry_failed(&r, t), 2 * CLOCK_NS_PER_S);
	informer_retry_waited(&r, t += 2 * CLOCK_NS_PER_S);
	assert_int_equal(informer_retry_failed(&r, t), 4 * CLOCK_NS_PER_S);
	informer_retry_waited(&r, t += 4 * CLOCK_NS_PER_S);
	informer_retry_listed(&r);
	assert_int_equal(informer_retry_failed(&r, t), CLOCK_NS_PER_S);
	/* and a calm period forgets them too */
	informer_retry_waited(&r, t += CLOCK_NS_PER_S);
	assert_int_equal(informer_retry_failed(&r, t), 2 * CLOCK_NS_PER_S);
	informer_retry_waited(&r, t += 2 * CLOCK_NS_PER_S);
	assert_int_equal(informer_retry_failed(&r, t + 120 * CLOCK_NS_PER_S), CLOCK_NS_PER_S);
}

/* ---- a 410 storm: relists back off ---- */

static void r_410_storm(struct world *w, enum informer_kind kind, bool watch, int n,
			const struct ts_req *rq, struct ts_resp *rs)
{
	if (kind != INFORMER_PODS) {
		default_respond(w, kind, watch, n, rq, rs);
		return;
	}
	if (!watch) {
		list_page(rs, kind, "10", NULL, "");
		return;
	}
	rs->chunks[0] = "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
			"\"metadata\":{},\"status\":\"Failure\",\"message\":\"too old resource "
			"version\",\"reason\":\"Expired\",\"code\":410}}\n";
	rs->n_chunks = 1;
	rs->hold = true;
}

static void test_410_storm_relists_with_backoff(void **state)
{
	struct rig *r = *state;
	struct informer_stats st;

	rig_start(r, r_410_storm, 10 * CLOCK_NS_PER_MS);
	wait_requests(&r->w, INFORMER_PODS, false, 5);
	informer_stats(inf_of(r, INFORMER_PODS), &st);
	assert_true(st.relists >= 4);
	assert_true(st.relist_delay_ns > 0);
	/* jitter off: 0, then 10 ms doubling to the 40 ms cap */
	assert_true(log_has(&r->cap, "expired (watch ERROR event: 410 Expired: too old resource "
				     "version); listing again\n"));
	assert_true(log_has(&r->cap, "listing again in 0.010 s (410 number 2 in a row)"));
	assert_true(log_has(&r->cap, "listing again in 0.020 s (410 number 3 in a row)"));
	assert_true(log_has(&r->cap, "listing again in 0.040 s (410 number 4 in a row)"));
}

/* ---- a successful list forgets earlier failures ---- */

static void r_list_fails_then_watch(struct world *w, enum informer_kind kind, bool watch, int n,
				    const struct ts_req *rq, struct ts_resp *rs)
{
	if (kind != INFORMER_PODS) {
		default_respond(w, kind, watch, n, rq, rs);
		return;
	}
	if (!watch && n < 3)
		ts_status(rs, 500, "InternalError", "list hiccup");
	else if (!watch)
		list_page(rs, kind, "10", NULL, "");
	else if (n == 0)
		ts_status(rs, 500, "InternalError", "watch hiccup");
	else
		rs->hold = true;
}

static void test_list_resets_failure_count(void **state)
{
	struct rig *r = *state;

	rig_start(r, r_list_fails_then_watch, 10 * CLOCK_NS_PER_MS);
	wait_requests(&r->w, INFORMER_PODS, true, 2);
	assert_true(log_has(&r->cap, "list hiccup; retrying in 0.040 s (failure 3 in a row)"));
	assert_true(log_has(&r->cap, "watch hiccup; retrying in 0.010 s (failure 1 in a row)"));
}

/* ---- staleness ---- */

static bool pred_live(const struct informer_stats *st, void *ctx)
{
	(void)ctx;
	return st->live;
}

static void r_pods_watch_failing(struct world *w, enum informer_kind kind, bool watch, int n,
				 const struct ts_req *rq, struct ts_resp *rs)
{
	if (kind == INFORMER_PODS && watch)
		ts_status(rs, 500, "InternalError", "watch down");
	else
		default_respond(w, kind, watch, n, rq, rs);
}

static void test_staleness_of_a_failing_watch(void **state)
{
	struct rig *r = *state;
	char why[512];
	int64_t now;

	rig_start(r, r_pods_watch_failing, 10 * CLOCK_NS_PER_MS);
	wait_synced(r);
	wait_errors(inf_of(r, INFORMER_PODS), 2);
	if (informer_wait(inf_of(r, INFORMER_NODES), pred_live, NULL, deadline_ns()) < 0)
		fail_msg("the nodes watch never opened");
	now = clock_now(clock_real());
	/* an open watch is in sync whatever the time */
	assert_int_equal(informer_staleness(inf_of(r, INFORMER_NODES), now + 3600 * CLOCK_NS_PER_S), 0);
	/* a failing one ages from its list */
	assert_true(informer_staleness(inf_of(r, INFORMER_PODS), now + 60 * CLOCK_NS_PER_S) >=
		    60 * CLOCK_NS_PER_S);
	assert_false(informer_set_stale(r->set, now, 30 * CLOCK_NS_PER_S, why, sizeof(why)));
	assert_string_equal(why, "");
	assert_true(informer_set_stale(r->set, now + 60 * CLOCK_NS_PER_S, 30 * CLOCK_NS_PER_S, why,
				       sizeof(why)));
	assert_non_null(strstr(why, "pods: not in sync for 6"));
	assert_non_null(strstr(why, "failed requests"));
}

/* ---- cancel: the initial sync wait ends at once ---- */

static void test_cancel_ends_wait_synced(void **state)
{
	struct rig *r = *state;
	struct errbuf err = {""};

	rig_start(r, r_pdb_down, 10 * CLOCK_NS_PER_MS);
	wait_requests(&r->w, INFORMER_PDBS, false, 2);
	informer_set_cancel(r->set);
	/* no deadline: only the cancel can end this wait */
	assert_int_equal(informer_set_wait_synced(r->set, INT64_MAX, &err), -1);
	assert_non_null(strstr(err.msg, "poddisruptionbudgets"));
}

#define RIG_TEST(f) cmocka_unit_test_setup_teardown(f, rig_setup, rig_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clone_is_self_contained),
		RIG_TEST(test_pagination),
		RIG_TEST(test_continue_expired_restarts_list),
		RIG_TEST(test_watch_events_update_cache),
		RIG_TEST(test_changes_are_classified),
		RIG_TEST(test_bookmark_advances_resource_version),
		RIG_TEST(test_expired_in_stream_relists_once),
		RIG_TEST(test_429_and_500_rewatch_same_version),
		RIG_TEST(test_dropped_stream_rewatches_without_relist),
		RIG_TEST(test_malformed_object_skipped_and_logged),
		RIG_TEST(test_stop_is_prompt),
		RIG_TEST(test_wait_synced_deadline),
		RIG_TEST(test_snapshot_of_the_caches),
		RIG_TEST(test_optional_kinds_refused),
		cmocka_unit_test(test_retry_410_backs_off_after_the_first),
		cmocka_unit_test(test_retry_list_resets_failures),
		RIG_TEST(test_410_storm_relists_with_backoff),
		RIG_TEST(test_list_resets_failure_count),
		RIG_TEST(test_staleness_of_a_failing_watch),
		RIG_TEST(test_cancel_ends_wait_synced),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
