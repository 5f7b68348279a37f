/*
 * Tests for the Kubernetes HTTP client against a local libmicrohttpd server:
 * request shapes and headers, error Status messages (never with a token),
 * token-file rotation and exec credential plugins on a virtual clock, 401
 * re-authentication, the watch-stream splitter (objects split over writes
 * and several in one), stop flag, timeout, threads, and one TLS case.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "model.h"
#include "log.h"
#include "runtime/clock.h"
#include "test_kube_server.h"

#define TOKEN "tok-SECRET-1234567890"
#define WALL0 1767225600LL /* 2026-01-01T00:00:00Z */

static char tmpdir[256];

static void write_file(const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char *read_tmp(const char *name)
{
	static char text[4096];
	char path[512];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	return text;
}

/* A client from a kubeconfig whose user section is 'user' (YAML lines). */
static struct kube_client *client_for(const char *server, const char *user,
				      const struct kube_client_opts *opts)
{
	char text[4096];
	struct kube_config *cfg = NULL;
	struct errbuf err = {""};
	struct kube_client *c;

	snprintf(text, sizeof(text),
		 "clusters:\n- name: c\n  cluster:\n    server: %s\n"
		 "contexts:\n- name: x\n  context: {cluster: c, user: u}\n"
		 "users:\n- name: u\n  user:\n%s",
		 server, user ? user : "    {}\n");
	if (kubeconfig_parse(text, strlen(text), "test.kubeconfig", tmpdir, "x", &cfg, &err))
		fail_msg("kubeconfig: %s", err.msg);
	c = kube_client_new(cfg, opts, &err);
	kube_config_free(cfg);
	if (!c)
		fail_msg("client: %s", err.msg);
	return c;
}

/* ---- plain requests ---- */

static void h_echo(void *ud, size_t i, const struct ts_req *rq, struct ts_resp *rs)
{
	(void)ud;
	(void)i;
	snprintf(rs->body, sizeof(rs->body), "{\"kind\":\"Echo\",\"method\":\"%s\"}", rq->method);
	if (strcmp(rq->method, "POST") == 0)
		rs->status = 201;
}

static void test_request_shapes(void **state)
{
	struct ts_server s;
	struct kube_client *c;
	struct kube_response r;
	struct errbuf err = {""};
	const char *patch = "{\"spec\":{\"unschedulable\":true}}";

	(void)state;
	assert_int_equal(ts_start(&s, h_echo, NULL, NULL, NULL), 0);
	c = client_for(s.url, "    token: " TOKEN "\n", NULL);
	assert_string_equal(kube_client_server(c), s.url);

	assert_int_equal(kube_request(c, "GET", "/api/v1/nodes?limit=500&continue=a%2Fb", NULL,
				      NULL, 0, &r, &err), 0);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "{\"kind\":\"Echo\",\"method\":\"GET\"}");
	assert_int_equal(r.body_len, strlen(r.body));
	assert_string_equal(r.message, "");
	kube_response_free(&r);

	assert_int_equal(kube_request(c, "PATCH", "/api/v1/nodes/n1",
				      KUBE_CT_STRATEGIC_MERGE_PATCH, patch, strlen(patch), &r, &err), 0);
	assert_int_equal(r.status, 200);
	kube_response_free(&r);
	assert_int_equal(kube_request(c, "POST", "/api/v1/namespaces/default/events", KUBE_CT_JSON,
				      "{}", 2, &r, &err), 0);
	assert_int_equal(r.status, 201);
	kube_response_free(&r);
	assert_int_equal(kube_request(c, "DELETE", "/api/v1/nodes/n1", NULL, NULL, 0, &r, &err), 0);
	kube_response_free(&r);
	assert_int_equal(kube_request(c, "PUT", "/x", KUBE_CT_JSON, "[1]", 3, &r, &err), 0);
	kube_response_free(&r);

	assert_int_equal(ts_count(&s), 5);
	assert_string_equal(s.reqs[0].method, "GET");
	assert_string_equal(s.reqs[0].path, "/api/v1/nodes");
	assert_string_equal(s.reqs[0].args, "limit=500&continue=a/b");
	assert_string_equal(s.reqs[0].auth, "Bearer " TOKEN);
	assert_string_equal(s.reqs[0].accept, "application/json");
	assert_memory_equal(s.reqs[0].ua, "luascale/", 9);
	assert_int_equal(s.reqs[0].body_len, 0);
	assert_string_equal(s.reqs[1].method, "PATCH");
	assert_string_equal(s.reqs[1].ctype, "application/strategic-merge-patch+json");
	assert_string_equal(s.reqs[1].body, patch);
	assert_string_equal(s.reqs[2].method, "POST");
	assert_string_equal(s.reqs[2].ctype, "application/json");
	assert_string_equal(s.reqs[2].body, "{}");
	assert_string_equal(s.reqs[3].method, "DELETE");
	assert_int_equal(s.reqs[3].body_len, 0);
	assert_string_equal(s.reqs[4].method, "PUT");
	assert_string_equal(s.reqs[4].body, "[1]");
	kube_client_free(c);
	ts_stop(&s);
}

static void h_errors(void *ud, size_t i, const struct ts_req *rq, struct ts_resp *rs)
{
	(void)ud;
	(void)i;
	if (strcmp(rq->path, "/notfound") == 0)
		ts_status(rs, 404, "NotFound", "nodes \\\"x\\\" not found");
	else if (strcmp(rq->path, "/conflict") == 0)
		ts_status(rs, 409, "Conflict", "the object has been modified");
	else if (strcmp(rq->path, "/echo-token") == 0)
		/* a server that quotes our credential back must not get it into a message */
		ts_status(rs, 403, "Forbidden", "token " TOKEN " is not allowed");
	else if (strcmp(rq->path, "/unauthorized") == 0)
		ts_status(rs, 401, "Unauthorized", "Unauthorized");
	else {
		rs->status = 502;
		snprintf(rs->body, sizeof(rs->body), "bad\tgateway\n");
	}
}

static void test_error_statuses(void **state)
{
	struct ts_server s;
	struct kube_client *c;
	struct kube_response r;
	struct errbuf err = {""};

	(void)state;
	assert_int_equal(ts_start(&s, h_errors, NULL, NULL, NULL), 0);
	c = client_for(s.url, "    token: " TOKEN "\n", NULL);
	assert_int_equal(kube_request(c, "GET", "/notfound", NULL, NULL, 0, &r, &err), 0);
	assert_int_equal(r.status, 404);
	assert_string_equal(r.reason, "NotFound");
	assert_string_equal(r.message, "nodes \"x\" not found");
	kube_response_free(&r);
	/* a 409 is the caller's to retry: one request only */
	assert_int_equal(kube_request(c, "PUT", "/conflict", KUBE_CT_JSON, "{}", 2, &r, &err), 0);
	assert_int_equal(r.status, 409);
	assert_string_equal(r.reason, "Conflict");
	kube_response_free(&r);
	assert_int_equal(ts_count(&s), 2);
	/* a static token is not refreshable: a 401 is not retried either */
	assert_int_equal(kube_request(c, "GET", "/unauthorized", NULL, NULL, 0, &r, &err), 0);
	assert_int_equal(r.status, 401);
	kube_response_free(&r);
	assert_int_equal(ts_count(&s), 3);
	/* a body that is not a Status */
	assert_int_equal(kube_request(c, "GET", "/other", NULL, NULL, 0, &r, &err), 0);
	assert_int_equal(r.status, 502);
	assert_string_equal(r.message, "HTTP 502: bad gateway");
	kube_response_free(&r);
	assert_int_equal(kube_request(c, "GET", "/echo-token", NULL, NULL, 0, &r, &err), 0);
	assert_int_equal(r.status, 403);
	assert_null(strstr(r.message, TOKEN));
	assert_string_equal(r.message, "token <redacted> is not allowed");
	assert_non_null(strstr(r.body, TOKEN)); /* the body itself is the caller's */
	kube_response_free(&r);
	kube_client_free(c);
	ts_stop(&s);
}

static void test_transport_error(void **state)
{
	struct ts_server s;
	struct kube_client *c;
	struct kube_response r;
	struct errbuf err = {""};
	struct kube_client_opts o = {0};
	char url[64];

	(void)state;
	/* a port that was just free: nobody listens there any more */
	assert_int_equal(ts_start(&s, h_echo, NULL, NULL, NULL), 0);
	snprintf(url, sizeof(url), "%s", s.url);
	ts_stop(&s);
	o.connect_timeout_ms = 2000;
	c = client_for(url, "    token: " TOKEN "\n", &o);
	assert_int_equal(kube_request(c, "GET", "/api", NULL, NULL, 0, &r, &err), -1);
	assert_int_equal(r.status, 0);
	assert_null(r.body);
	assert_non_null(strstr(err.msg, "GET http://127.0.0.1:"));
	assert_null(strstr(err.msg, TOKEN));
	kube_response_free(&r);
	kube_client_free(c);
}

/* ---- verbose logging ---- */

struct logcap {
	pthread_mutex_t mu;
	struct buf text;
};

static void cap_write(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct logcap *lc = ctx;

	(void)level;
	(void)wall;
	pthread_mutex_lock(&lc->mu);
	buf_puts(&lc->text, msg);
	buf_puts(&lc->text, "\n");
	pthread_mutex_unlock(&lc->mu);
}

static void test_verbose_redacts_authorization(void **state)
{
	struct ts_server s;
	struct kube_client *c;
	struct kube_response r;
	struct errbuf err = {""};
	struct logcap lc = {PTHREAD_MUTEX_INITIALIZER, BUF_INIT};
	struct logger lg = {cap_write, &lc, LOG_DEBUG, NULL};
	struct kube_client_opts o = {0};

	(void)state;
	o.log = &lg;
	o.verbose = true;
	assert_int_equal(ts_start(&s, h_echo, NULL, NULL, NULL), 0);
	c = client_for(s.url, "    token: " TOKEN "\n", &o);
	assert_int_equal(kube_request(c, "GET", "/api/v1/nodes", NULL, NULL, 0, &r, &err), 0);
	kube_response_free(&r);
	assert_non_null(lc.text.data);
	assert_non_null(strstr(lc.text.data, "http > GET /api/v1/nodes HTTP/1.1"));
	assert_non_null(strstr(lc.text.data, "http > Authorization <redacted>"));
	assert_non_null(strstr(lc.text.data, "http < HTTP/1.1 200"));
	assert_null(strstr(lc.text.data, TOKEN));
	kube_client_free(c);
	ts_stop(&s);
	buf_free(&lc.text);
}

/* ---- token files ---- */

/* Answers 401 to "Authorization: *(const char **)ud" ("*": to all), 200 otherwise. */
static void h_reject(void *ud, size_t i, const struct ts_req *rq, struct ts_resp *rs)
{
	const char *bad = *(const char **)ud;

	(void)i;
	if (bad && (strcmp(bad, "*") == 0 || strcmp(rq->auth, bad) == 0))
		ts_status(rs, 401, "Unauthorized", "Unauthorized");
}

static void get_ok(struct kube_client *c)
{
	struct kube_response r;
	struct errbuf err = {""};

	if (kube_request(c, "GET", "/api", NULL, NULL, 0, &r, &err) != 0)
		fail_msg("request failed: %s", err.msg);
	assert_int_equal(r.status, 200);
	kube_response_free(&r);
}

static void test_token_file_rotation(void **state)
{
	struct ts_server s;
	struct kube_client *c;
	struct clock *vc = vclock_new(WALL0);
	struct kube_client_opts o = {0};
	const char *bad = NULL;

	(void)state;
	o.clock = vc;
	write_file("token", "token-one\n");
	assert_int_equal(ts_start(&s, h_reject, &bad, NULL, NULL), 0);
	c = client_for(s.url, "    tokenFile: token\n", &o); /* relative to the kubeconfig */
	get_ok(c);
	assert_string_equal(s.reqs[0].auth, "Bearer token-one");
	write_file("token", "token-two\n");
	get_ok(c); /* read less than a minute ago: not again */
	assert_string_equal(s.reqs[1].auth, "Bearer token-one");
	vclock_set(vc, 59 * CLOCK_NS_PER_S);
	get_ok(c);
	assert_string_equal(s.reqs[2].auth, "Bearer token-one");
	vclock_set(vc, 60 * CLOCK_NS_PER_S);
	get_ok(c);
	assert_string_equal(s.reqs[3].auth, "Bearer token-two");
	/* rotated early and the server says 401: re-read at once, retried once */
	write_file("token", "token-three");
	bad = "Bearer token-two";
	get_ok(c);
	assert_int_equal(ts_count(&s), 6);
	assert_string_equal(s.reqs[4].auth, "Bearer token-two");
	assert_string_equal(s.reqs[5].auth, "Bearer token-three");
	/* a file that vanishes keeps the last good token */
	{
		char path[512];

		snprintf(path, sizeof(path), "%s/token", tmpdir);
		unlink(path);
	}
	vclock_set(vc, 200 * CLOCK_NS_PER_S);
	get_ok(c);
	assert_string_equal(s.reqs[6].auth, "Bearer token-three");
	kube_client_free(c);
	ts_stop(&s);
	vclock_free(vc);
}

static void test_token_file_missing_at_start(void **state)
{
	struct kube_client *c;
	struct kube_response r;
	struct errbuf err = {""};

	(void)state;
	c = client_for("http://127.0.0.1:1", "    tokenFile: no-such-token\n", NULL);
	assert_int_equal(kube_request(c, "GET", "/api", NULL, NULL, 0, &r, &err), -1);
	assert_non_null(strstr(err.msg, "no-such-token"));
	kube_response_free(&r);
	kube_client_free(c);
}

/* ---- exec plugins ---- */

static const char plugin[] =
	"#!/bin/sh\n"
	"d=\"$PLUGIN_DIR\"\n"
	"n=$(cat \"$d/count\" 2>/dev/null || echo 0)\n"
	"n=$((n+1))\n"
	"echo \"$n\" > \"$d/count\"\n"
	"printf '%s' \"$KUBERNETES_EXEC_INFO\" > \"$d/info\"\n"
	"printf '%s|%s' \"$FOO\" \"$1\" > \"$d/env\"\n"
	"if [ -f \"$d/fail\" ]; then echo 'plugin: not logged in' >&2; exit 3; fi\n"
	"if [ -f \"$d/garbage\" ]; then echo 'Please log in'; exit 0; fi\n"
	"EXPIRY=$(cat \"$d/expiry\")\n"
	"printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
	"\"status\":{\"token\":\"xtok-%s\",\"expirationTimestamp\":\"%s\"}}\\n' \"$n\" \"$EXPIRY\"\n";

static struct kube_client *exec_client(const char *server, struct clock *vc)
{
	char user[1024], path[512];
	struct kube_client_opts o = {0};

	snprintf(path, sizeof(path), "%s/plugin.sh", tmpdir);
	write_file("plugin.sh", plugin);
	chmod(path, 0755);
	write_file("count", "0");
	write_file("expiry", "2026-01-01T00:05:00Z");
	snprintf(user, sizeof(user),
		 "    exec:\n"
		 "      apiVersion: client.authentication.k8s.io/v1\n"
		 "      command: ./plugin.sh\n"
		 "      args: [--flag]\n"
		 "      interactiveMode: IfAvailable\n"
		 "      provideClusterInfo: true\n"
		 "      env:\n"
		 "      - {name: PLUGIN_DIR, value: '%s'}\n"
		 "      - {name: FOO, value: bar}\n",
		 tmpdir);
	o.clock = vc;
	return client_for(server, user, &o);
}

static void test_exec_plugin_cache_and_expiry(void **state)
{
	struct ts_server s;
	struct kube_client *c;
	struct clock *vc = vclock_new(WALL0);
	const char *bad = NULL, *info;

	(void)state;
	assert_int_equal(ts_start(&s, h_reject, &bad, NULL, NULL), 0);
	c = exec_client(s.url, vc);
	assert_string_equal(read_tmp("count"), "0");
	get_ok(c);
	assert_string_equal(s.reqs[0].auth, "Bearer xtok-1");
	assert_string_equal(read_tmp("count"), "1\n");
	assert_string_equal(read_tmp("env"), "bar|--flag");
	info = read_tmp("info");
	assert_non_null(strstr(info, "\"apiVersion\":\"client.authentication.k8s.io/v1\""));
	assert_non_null(strstr(info, "\"kind\":\"ExecCredential\""));
	assert_non_null(strstr(info, "\"interactive\":false"));
	assert_non_null(strstr(info, s.url)); /* provideClusterInfo */
	/* cached until the expiry on the (virtual) clock */
	get_ok(c);
	vclock_set(vc, 299 * CLOCK_NS_PER_S);
	get_ok(c);
	assert_string_equal(read_tmp("count"), "1\n");
	assert_string_equal(s.reqs[2].auth, "Bearer xtok-1");
	write_file("expiry", "2026-01-01T00:10:00Z");
	vclock_set(vc, 300 * CLOCK_NS_PER_S);
	get_ok(c);
	assert_string_equal(read_tmp("count"), "2\n");
	assert_string_equal(s.reqs[3].auth, "Bearer xtok-2");
	/* revoked before its expiry: a 401 re-runs the plugin once */
	bad = "Bearer xtok-2";
	get_ok(c);
	assert_string_equal(read_tmp("count"), "3\n");
	assert_int_equal(ts_count(&s), 6);
	assert_string_equal(s.reqs[4].auth, "Bearer xtok-2");
	assert_string_equal(s.reqs[5].auth, "Bearer xtok-3");
	/* still 401 after the refresh: handed back, not retried again */
	bad = "*";
	{
		struct kube_response r;
		struct errbuf err = {""};

		assert_int_equal(kube_request(c, "GET", "/api", NULL, NULL, 0, &r, &err), 0);
		assert_int_equal(r.status, 401);
		assert_null(strstr(r.message, "xtok"));
		kube_response_free(&r);
		assert_int_equal(ts_count(&s), 8);
		assert_string_equal(s.reqs[6].auth, "Bearer xtok-3");
		assert_string_equal(s.reqs[7].auth, "Bearer xtok-4");
		assert_string_equal(read_tmp("count"), "4\n");
	}
	kube_client_free(c);
	ts_stop(&s);
	vclock_free(vc);
}

static void test_exec_plugin_failures(void **state)
{
	struct kube_client *c;
	struct clock *vc = vclock_new(WALL0);
	struct kube_response r;
	struct errbuf err = {""};

	(void)state;
	c = exec_client("http://127.0.0.1:1", vc);
	write_file("fail", "");
	assert_int_equal(kube_request(c, "GET", "/api", NULL, NULL, 0, &r, &err), -1);
	assert_non_null(strstr(err.msg, "exited with status 3"));
	kube_response_free(&r);
	{
		char path[512];

		snprintf(path, sizeof(path), "%s/fail", tmpdir);
		unlink(path);
	}
	write_file("garbage", "");
	assert_int_equal(kube_request(c, "GET", "/api", NULL, NULL, 0, &r, &err), -1);
	assert_non_null(strstr(err.msg, "not an ExecCredential"));
	kube_response_free(&r);
	{
		char path[512];

		snprintf(path, sizeof(path), "%s/garbage", tmpdir);
		unlink(path);
	}
	kube_client_free(c);
	vclock_free(vc);
}

static void test_exec_interactive_always_refused(void **state)
{
	char text[] =
		"clusters:\n- name: c\n  cluster: {server: 'https://h'}\n"
		"contexts:\n- name: x\n  context: {cluster: c, user: u}\n"
		"users:\n- name: u\n  user:\n    exec:\n      command: x\n"
		"      apiVersion: client.authentication.k8s.io/v1\n      interactiveMode: Always\n";
	struct kube_config *cfg = NULL;
	struct errbuf err = {""};

	(void)state;
	assert_int_equal(kubeconfig_parse(text, strlen(text), "k", NULL, "x", &cfg, &err), 0);
	assert_null(kube_client_new(cfg, NULL, &err));
	assert_non_null(strstr(err.msg, "interactiveMode Always"));
	kube_config_free(cfg);
}

/* ---- streams ---- */

#define EV1 "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a{b}\\\"c[\",\"resourceVersion\":\"10\"}}}"
#define EV2 "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"x]\\\\\"}}}"
#define EV3 "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"12\"}}}"

static char ev1_pieces[TS_MAX_CHUNKS][8];

struct collect {
	char objs[8][512];
	size_t n;
	int stop_after;         /* return 1 after this many (0: never) */
	atomic_int *flag_after; /* or set this flag after flag_at objects (0: the first) */
	int flag_at;
};

static int collect_fn(void *ctx, const char *json, size_t len)
{
	struct collect *c = ctx;

	assert_int_equal(strlen(json), len);
	if (c->n < 8)
		snprintf(c->objs[c->n], sizeof(c->objs[c->n]), "%s", json);
	c->n++;
	if (c->flag_after && (int)c->n >= (c->flag_at ? c->flag_at : 1))
		atomic_store(c->flag_after, 1);
	return c->stop_after && (int)c->n >= c->stop_after;
}

/* EV1 in 3-byte writes, then EV2 and EV3 in one write; held open with ud set. */
static void h_watch(void *ud, size_t i, const struct ts_req *rq, struct ts_resp *rs)
{
	static const char both[] = EV2 "\n" EV3 "\n";
	const char *ev1 = EV1 "\n";
	size_t n = strlen(ev1), k = 0, off;

	(void)i;
	if (strcmp(rq->args, "watch=1&resourceVersion=9") != 0) {
		ts_status(rs, 410, "Gone", "too old resource version: 1 (9)");
		return;
	}
	for (off = 0; off < n && k < TS_MAX_CHUNKS - 2; off += 3, k++) {
		snprintf(ev1_pieces[k], sizeof(ev1_pieces[k]), "%.3s", ev1 + off);
		rs->chunks[k] = ev1_pieces[k];
	}
	assert_true(off >= n);
	rs->chunks[k++] = both;
	rs->n_chunks = k;
	rs->hold = ud != NULL;
}

static void test_stream_assembles_objects(void **state)
{
	struct ts_server s;
	struct kube_client *c;
	struct kube_response r;
	struct errbuf err = {""};
	struct collect col = {0};
	enum kube_stream_end end = KUBE_STREAM_STATUS;

	(void)state;
	assert_int_equal(ts_start(&s, h_watch, NULL, NULL, NULL), 0);
	c = client_for(s.url, "    token: " TOKEN "\n", NULL);
	assert_int_equal(kube_stream(c, "/api/v1/pods?watch=1&resourceVersion=9", NULL, collect_fn,
				     &col, &end, &r, &err), 0);
	assert_int_equal(end, KUBE_STREAM_EOF);
	assert_int_equal(r.status, 200);
	assert_int_equal(col.n, 3);
	assert_string_equal(col.objs[0], EV1);
	assert_string_equal(col.objs[1], EV2);
	assert_string_equal(col.objs[2], EV3);
	kube_response_free(&r);
	assert_string_equal(s.reqs[0].auth, "Bearer " TOKEN);

	/* an error status is not streamed: it lands in the response */
	col.n = 0;
	assert_int_equal(kube_stream(c, "/api/v1/pods?watch=1&resourceVersion=1", NULL, collect_fn,
				     &col, &end, &r, &err), 0);
	assert_int_equal(end, KUBE_STREAM_STATUS);
	assert_int_equal(r.status, 410);
	assert_string_equal(r.reason, "Gone");
	assert_string_equal(r.message, "too old resource version: 1 (9)");
	assert_int_equal(col.n, 0);
	kube_response_free(&r);
	kube_client_free(c);
	ts_stop(&s);
}

static void test_stream_stops(void **state)
{
	struct ts_server s;
	struct kube_client *c;
	struct kube_response r;
	struct errbuf err = {""};
	struct collect col = {0};
	struct kube_stream_opts o = {0};
	atomic_int stop = 0;
	enum kube_stream_end end;
	int hold = 1;

	(void)state;
	assert_int_equal(ts_start(&s, h_watch, &hold, NULL, NULL), 0);
	c = client_for(s.url, NULL, NULL);
	/* the callback asks to stop */
	col.stop_after = 2;
	assert_int_equal(kube_stream(c, "/w?watch=1&resourceVersion=9", NULL, collect_fn, &col, &end,
				     &r, &err), 0);
	assert_int_equal(end, KUBE_STREAM_CALLBACK);
	assert_int_equal(col.n, 2);
	kube_response_free(&r);
	/* another thread (here: the callback) raises the stop flag while the
	 * server holds the stream open */
	memset(&col, 0, sizeof(col));
	col.flag_after = &stop;
	col.flag_at = 3; /* once all three arrived: the stream is then held open */
	o.stop = &stop;
	assert_int_equal(kube_stream(c, "/w?watch=1&resourceVersion=9", &o, collect_fn, &col, &end,
				     &r, &err), 0);
	assert_int_equal(end, KUBE_STREAM_STOPPED);
	assert_int_equal(col.n, 3);
	kube_response_free(&r);
	/* already stopped: nothing is sent */
	assert_int_equal(kube_stream(c, "/w?watch=1&resourceVersion=9", &o, collect_fn, &col, &end,
				     &r, &err), 0);
	assert_int_equal(end, KUBE_STREAM_STOPPED);
	kube_response_free(&r);
	/* a stream that stays silent ends at its timeout */
	memset(&col, 0, sizeof(col));
	o.stop = NULL;
	o.timeout_ms = 300;
	assert_int_equal(kube_stream(c, "/w?watch=1&resourceVersion=9", &o, collect_fn, &col, &end,
				     &r, &err), 0);
	assert_int_equal(end, KUBE_STREAM_TIMEOUT);
	assert_int_equal(col.n, 3);
	kube_response_free(&r);
	assert_int_equal(ts_count(&s), 3);
	kube_client_free(c);
	ts_stop(&s);
}

static void h_garbage(void *ud, size_t i, const struct ts_req *rq, struct ts_resp *rs)
{
	static const char *chunks[] = {"{\"type\":\"ADDED\"}\n", "<html>oops</html>"};

	(void)ud;
	(void)i;
	(void)rq;
	rs->chunks[0] = chunks[0];
	rs->chunks[1] = chunks[1];
	rs->n_chunks = 2;
}

static void test_stream_malformed(void **state)
{
	struct ts_server s;
	struct kube_client *c;
	struct kube_response r;
	struct errbuf err = {""};
	struct collect col = {0};
	enum kube_stream_end end;

	(void)state;
	assert_int_equal(ts_start(&s, h_garbage, NULL, NULL, NULL), 0);
	c = client_for(s.url, NULL, NULL);
	assert_int_equal(kube_stream(c, "/w", NULL, collect_fn, &col, &end, &r, &err), -1);
	assert_non_null(strstr(err.msg, "expected a JSON object at byte 17"));
	assert_int_equal(col.n, 1);
	kube_response_free(&r);
	kube_client_free(c);
	ts_stop(&s);
}

static void test_splitter_every_split(void **state)
{
	const char text[] = EV1 "\n" EV2 "\r\n  " EV3 "[1,{\"a\":[]}]";
	size_t len = strlen(text), cut1, cut2;
	struct errbuf err = {""};

	(void)state;
	/* every way to cut the text in three writes */
	for (cut1 = 0; cut1 <= len; cut1 += 1) {
		for (cut2 = cut1; cut2 <= len; cut2 += 7) {
			struct collect col = {0};
			struct kube_splitter *sp = kube_splitter_new(0, collect_fn, &col);

			assert_int_equal(kube_splitter_feed(sp, text, cut1, &err), 0);
			assert_int_equal(kube_splitter_feed(sp, text + cut1, cut2 - cut1, &err), 0);
			assert_int_equal(kube_splitter_feed(sp, text + cut2, len - cut2, &err), 0);
			assert_int_equal(col.n, 4);
			assert_string_equal(col.objs[0], EV1);
			assert_string_equal(col.objs[1], EV2);
			assert_string_equal(col.objs[2], EV3);
			assert_string_equal(col.objs[3], "[1,{\"a\":[]}]");
			assert_int_equal(kube_splitter_pending(sp), 0);
			kube_splitter_free(sp);
		}
	}
	/* a value cut short stays pending; a too large one is refused */
	{
		struct collect col = {0};
		struct kube_splitter *sp = kube_splitter_new(16, collect_fn, &col);

		assert_int_equal(kube_splitter_feed(sp, "{\"a\":1}{\"b\"", 11, &err), 0);
		assert_int_equal(col.n, 1);
		assert_int_equal(kube_splitter_pending(sp), 4);
		assert_int_equal(kube_splitter_feed(sp, ":\"0123456789\"}", 14, &err), -1);
		assert_non_null(strstr(err.msg, "larger than 16 bytes"));
		kube_splitter_free(sp);
	}
	{
		struct collect col = {0};
		struct kube_splitter *sp = kube_splitter_new(0, collect_fn, &col);

		assert_int_equal(kube_splitter_feed(sp, " \n 42", 5, &err), -1);
		assert_non_null(strstr(err.msg, "at byte 3"));
		kube_splitter_free(sp);
	}
}

/* ---- helpers ---- */

static void test_escape_and_time(void **state)
{
	struct buf b = BUF_INIT;
	int64_t t;
	char ts[32];

	(void)state;
	assert_int_equal(kube_escape(&b, "spec.nodeName=n-1_a~b/c d&e%"), 0);
	assert_string_equal(b.data, "spec.nodeName%3Dn-1_a~b%2Fc%20d%26e%25");
	buf_free(&b);
	assert_int_equal(kube_escape(&b, ""), 0);
	assert_string_equal(b.data, "");
	buf_free(&b);
	assert_int_equal(kube_parse_time("2026-01-01T00:05:00Z", &t), 0);
	assert_int_equal(t, WALL0 + 300);
	assert_int_equal(kube_parse_time("2026-01-01T01:05:00.123456+01:00", &t), 0);
	assert_int_equal(t, WALL0 + 300);
	assert_int_equal(kube_parse_time("1970-01-01T00:00:00Z", &t), 0);
	assert_int_equal(t, 0);
	assert_int_equal(kube_parse_time("2024-02-29T12:00:00-00:30", &t), 0);
	assert_int_equal(t, 1709208000 + 1800); /* 12:00 at UTC-00:30 */
	assert_int_equal(kube_parse_time("2026-01-01T00:05:00", &t), -1);
	assert_int_equal(kube_parse_time("2026-13-01T00:05:00Z", &t), -1);
	assert_int_equal(kube_parse_time("yesterday", &t), -1);
	model_format_time(WALL0 + 300, ts, sizeof(ts));
	assert_string_equal(ts, "2026-01-01T00:05:00Z");
}

/* ---- threads ---- */

struct thr {
	struct kube_client *c;
	int ok;
};

static void *thr_main(void *arg)
{
	struct thr *t = arg;
	int i;

	for (i = 0; i < 25; i++) {
		struct kube_response r;
		struct errbuf err = {""};

		if (kube_request(t->c, "GET", "/api", NULL, NULL, 0, &r, &err) == 0 &&
		    r.status == 200)
			t->ok++;
		kube_response_free(&r);
	}
	return NULL;
}

static void test_threads_share_a_client(void **state)
{
	struct ts_server s;
	struct thr t[4];
	pthread_t th[4];
	struct kube_client *c;
	int i;

	(void)state;
	assert_int_equal(ts_start(&s, h_echo, NULL, NULL, NULL), 0);
	c = client_for(s.url, "    token: " TOKEN "\n", NULL);
	for (i = 0; i < 4; i++) {
		t[i].c = c;
		t[i].ok = 0;
		assert_int_equal(pthread_create(&th[i], NULL, thr_main, &t[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(t[i].ok, 25);
	}
	assert_int_equal(ts_count(&s), 100);
	kube_client_free(c);
	ts_stop(&s);
}

/* ---- TLS ---- */

static void test_tls_verified(void **state)
{
	char cmd[1024], *cert, *key;
	struct ts_server s;
	struct kube_client *c;
	struct kube_response r;
	struct errbuf err = {""};
	struct buf kc = BUF_INIT, b64 = BUF_INIT;
	struct kube_config *cfg = NULL;
	size_t i, n;
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

	(void)state;
	if (access("/usr/bin/openssl", X_OK) != 0 && system("command -v openssl >/dev/null 2>&1") != 0) {
		print_message("openssl not found: TLS case skipped\n");
		skip();
	}
	if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		print_message("libmicrohttpd without TLS: TLS case skipped\n");
		skip();
	}
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem "
		 "-days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1",
		 tmpdir);
	assert_int_equal(system(cmd), 0);
	cert = strdup(read_tmp("cert.pem"));
	key = strdup(read_tmp("key.pem"));
	assert_int_equal(ts_start(&s, h_echo, NULL, cert, key), 0);

	/* the CA as base64 data in the kubeconfig (curl gets it as a blob) */
	n = strlen(cert);
	for (i = 0; i + 2 < n; i += 3) {
		const unsigned char *p = (const unsigned char *)cert + i;
		char o[4] = {tab[p[0] >> 2], tab[(p[0] & 3) << 4 | p[1] >> 4],
			     tab[(p[1] & 15) << 2 | p[2] >> 6], tab[p[2] & 63]};

		buf_append(&b64, o, 4);
	}
	if (n - i == 1) {
		const unsigned char *p = (const unsigned char *)cert + i;
		char o[4] = {tab[p[0] >> 2], tab[(p[0] & 3) << 4], '=', '='};

		buf_append(&b64, o, 4);
	} else if (n - i == 2) {
		const unsigned char *p = (const unsigned char *)cert + i;
		char o[4] = {tab[p[0] >> 2], tab[(p[0] & 3) << 4 | p[1] >> 4], tab[(p[1] & 15) << 2], '='};

		buf_append(&b64, o, 4);
	}
	buf_printf(&kc, "clusters:\n- name: c\n  cluster:\n    server: %s\n"
			"    certificate-authority-data: %s\n"
			"contexts:\n- name: x\n  context: {cluster: c, user: u}\n"
			"users:\n- name: u\n  user: {token: " TOKEN "}\n", s.url, b64.data);
	assert_int_equal(kubeconfig_parse(kc.data, kc.len, "tls.kubeconfig", tmpdir, "x", &cfg, &err), 0);
	c = kube_client_new(cfg, NULL, &err);
	assert_non_null(c);
	assert_int_equal(kube_request(c, "GET", "/api", NULL, NULL, 0, &r, &err), 0);
	assert_int_equal(r.status, 200);
	kube_response_free(&r);
	kube_client_free(c);
	kube_config_free(cfg);
	buf_free(&kc);

	/* the CA as a file */
	buf_printf(&kc, "clusters:\n- name: c\n  cluster:\n    server: %s\n"
			"    certificate-authority: cert.pem\n"
			"contexts:\n- name: x\n  context: {cluster: c}\n", s.url);
	assert_int_equal(kubeconfig_parse(kc.data, kc.len, "tls.kubeconfig", tmpdir, "x", &cfg, &err), 0);
	c = kube_client_new(cfg, NULL, &err);
	assert_int_equal(kube_request(c, "GET", "/api", NULL, NULL, 0, &r, &err), 0);
	assert_int_equal(r.status, 200);
	kube_response_free(&r);
	kube_client_free(c);
	kube_config_free(cfg);
	buf_free(&kc);

	/* no CA given: the self-signed certificate is refused (verified by default) */
	c = client_for(s.url, "    token: " TOKEN "\n", NULL);
	assert_int_equal(kube_request(c, "GET", "/api", NULL, NULL, 0, &r, &err), -1);
	assert_null(strstr(err.msg, TOKEN));
	kube_response_free(&r);
	kube_client_free(c);

	/* only when the kubeconfig says so is verification off */
	buf_printf(&kc, "clusters:\n- name: c\n  cluster:\n    server: %s\n"
			"    insecure-skip-tls-verify: true\n"
			"contexts:\n- name: x\n  context: {cluster: c}\n", s.url);
	assert_int_equal(kubeconfig_parse(kc.data, kc.len, "tls.kubeconfig", tmpdir, "x", &cfg, &err), 0);
	c = kube_client_new(cfg, NULL, &err);
	assert_int_equal(kube_request(c, "GET", "/api", NULL, NULL, 0, &r, &err), 0);
	assert_int_equal(r.status, 200);
	kube_response_free(&r);
	kube_client_free(c);
	kube_config_free(cfg);
	buf_free(&kc);

	/* only the requests that got through TLS reached the handler */
	assert_int_equal(ts_count(&s), 3);
	ts_stop(&s);
	buf_free(&b64);
	free(cert);
	free(key);
}

static int setup(void **state)
{
	(void)state;
	signal(SIGPIPE, SIG_IGN);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/luascale-kube-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* ---- writes: a token bucket of their own; shutdown ends waits ---- */

struct bg_req {
	struct kube_client *c;
	const char *method;
	pthread_t t;
	int rc;
	struct errbuf err;
};

static void *bg_run(void *arg)
{
	struct bg_req *b = arg;
	struct kube_response r;

	b->rc = kube_request(b->c, b->method, "/api/v1/namespaces/default/events",
			     strcmp(b->method, "GET") ? KUBE_CT_JSON : NULL,
			     strcmp(b->method, "GET") ? "{}" : NULL, 2, &r, &b->err);
	kube_response_free(&r);
	return NULL;
}

static void bg_start(struct bg_req *b, struct kube_client *c, const char *method)
{
	memset(b, 0, sizeof(*b));
	b->c = c;
	b->method = method;
	assert_int_equal(pthread_create(&b->t, NULL, bg_run, b), 0);
}

/* Polls 'pred' against a 20 s deadline (a condition, not a sleep for time). */
static bool until(bool (*pred)(void *), void *ctx)
{
	int64_t end = clock_now(clock_real()) + 20 * CLOCK_NS_PER_S;
	struct timespec ts = {0, 2 * 1000 * 1000};

	while (!pred(ctx)) {
		if (clock_now(clock_real()) > end)
			return false;
		nanosleep(&ts, NULL);
	}
	return true;
}

static bool one_waiting(void *ctx)
{
	return kube_client_writes_waiting(ctx) == 1;
}

static void test_write_rate_limit(void **state)
{
	struct ts_server s;
	struct kube_client *c;
	struct clock *vc = vclock_new(WALL0);
	struct kube_client_opts o = {0};
	struct kube_response r;
	struct errbuf err = {""};
	struct bg_req b;
	int i;

	(void)state;
	o.clock = vc;
	o.write_qps = 1;
	o.write_burst = 2;
	assert_int_equal(ts_start(&s, h_echo, NULL, NULL, NULL), 0);
	c = client_for(s.url, "    token: " TOKEN "\n", &o);
	/* the burst: two writes at once */
	assert_int_equal(kube_request(c, "POST", "/api/v1/namespaces/default/events", KUBE_CT_JSON,
				      "{}", 2, &r, &err), 0);
	kube_response_free(&r);
	assert_int_equal(kube_request(c, "PATCH", "/api/v1/nodes/n1", KUBE_CT_MERGE_PATCH, "{}", 2,
				      &r, &err), 0);
	kube_response_free(&r);
	/* reads are not limited */
	for (i = 0; i < 5; i++) {
		assert_int_equal(kube_request(c, "GET", "/api/v1/nodes", NULL, NULL, 0, &r, &err), 0);
		kube_response_free(&r);
	}
	assert_int_equal(ts_count(&s), 7);
	/* the third write waits for the (virtual) clock */
	bg_start(&b, c, "DELETE");
	assert_true(until(one_waiting, c));
	assert_int_equal(ts_count(&s), 7);
	vclock_set(vc, CLOCK_NS_PER_S);
	pthread_join(b.t, NULL);
	assert_int_equal(b.rc, 0);
	assert_int_equal(ts_count(&s), 8);
	assert_string_equal(s.reqs[7].method, "DELETE");
	/* once stopping, a write still waits for its token and is sent: the
	 * grace period's writes give cordons back */
	bg_start(&b, c, "PATCH");
	assert_true(until(one_waiting, c));
	kube_client_cancel(c, KUBE_CANCEL_READS);
	vclock_set(vc, 2 * CLOCK_NS_PER_S);
	pthread_join(b.t, NULL);
	assert_int_equal(b.rc, 0);
	assert_int_equal(ts_count(&s), 9);
	/* the end of the grace period ends a wait for a token: not sent */
	bg_start(&b, c, "POST");
	assert_true(until(one_waiting, c));
	kube_client_cancel(c, KUBE_CANCEL_ALL);
	pthread_join(b.t, NULL);
	assert_int_equal(b.rc, -1);
	assert_non_null(strstr(b.err.msg, "luascale is stopping"));
	assert_int_equal(ts_count(&s), 9);
	assert_int_equal(kube_client_writes_waiting(c), 0);
	kube_client_free(c);
	ts_stop(&s);
	vclock_free(vc);
}

static void h_hang(void *ud, size_t i, const struct ts_req *rq, struct ts_resp *rs)
{
	(void)ud;
	(void)i;
	(void)rq;
	rs->chunks[0] = "{\"kind\":";
	rs->n_chunks = 1;
	rs->hold = true; /* never finishes */
}

static bool one_request(void *ctx)
{
	return ts_count(ctx) >= 1;
}

static void test_cancel_ends_requests_in_flight(void **state)
{
	struct ts_server s;
	struct kube_client *c;
	struct bg_req b;

	(void)state;
	assert_int_equal(ts_start(&s, h_hang, NULL, NULL, NULL), 0);
	c = client_for(s.url, NULL, NULL);
	bg_start(&b, c, "GET");
	assert_true(until(one_request, &s));
	kube_client_cancel(c, KUBE_CANCEL_READS);
	pthread_join(b.t, NULL); /* the request timeout is 60 s: only the cancel ends it */
	assert_int_equal(b.rc, -1);
	assert_non_null(strstr(b.err.msg, "luascale is stopping"));
	kube_client_free(c);
	ts_stop(&s);
}

/* ---- secrets ---- */

static void test_token_with_control_characters_refused(void **state)
{
	static const char text[] =
		"clusters:\n- name: c\n  cluster: {server: 'http://127.0.0.1:1'}\n"
		"contexts:\n- name: x\n  context: {cluster: c, user: u}\n"
		"users:\n- name: u\n  user:\n    token: \"sekrit-part\\r\\nX-Evil: 1\"\n";
	struct kube_config *cfg = NULL, manual;
	struct kube_client *c;
	struct kube_response r;
	struct errbuf err = {""};
	char path[512];

	(void)state;
	assert_int_equal(kubeconfig_parse(text, strlen(text), "test.kubeconfig", tmpdir, "x", &cfg,
					  &err), -1);
	assert_non_null(strstr(err.msg, "test.kubeconfig:10:"));
	assert_non_null(strstr(err.msg, "control character"));
	assert_null(strstr(err.msg, "sekrit"));
	/* the same token handed to the client directly */
	memset(&manual, 0, sizeof(manual));
	manual.server = "http://127.0.0.1:1";
	manual.token = "sekrit-part\nX-Evil: 1";
	assert_null(kube_client_new(&manual, NULL, &err));
	assert_non_null(strstr(err.msg, "control character (byte 12)"));
	assert_null(strstr(err.msg, "sekrit"));
	/* from a token file: a control character inside the line */
	write_file("badtoken", "sekrit-part\001X-Evil: 1\n");
	snprintf(path, sizeof(path), "%s/badtoken", tmpdir);
	manual.token = NULL;
	manual.token_file = path;
	c = kube_client_new(&manual, NULL, &err);
	assert_non_null(c);
	assert_int_equal(kube_request(c, "GET", "/api", NULL, NULL, 0, &r, &err), -1);
	kube_response_free(&r);
	assert_non_null(strstr(err.msg, "printable"));
	assert_null(strstr(err.msg, "sekrit"));
	kube_client_free(c);
}

static void test_server_userinfo_redacted(void **state)
{
	struct kube_config manual;
	struct kube_client *c;
	struct kube_response r;
	struct errbuf err = {""};
	char out[128];

	(void)state;
	memset(&manual, 0, sizeof(manual));
	manual.server = "http://admin:sekrit@127.0.0.1:1";
	c = kube_client_new(&manual, NULL, &err);
	assert_non_null(c);
	assert_string_equal(kube_client_server(c), "http://<redacted>@127.0.0.1:1");
	assert_int_equal(kube_request(c, "GET", "/api", NULL, NULL, 0, &r, &err), -1);
	kube_response_free(&r);
	assert_non_null(strstr(err.msg, "http://<redacted>@127.0.0.1:1/api"));
	assert_null(strstr(err.msg, "sekrit"));
	kube_client_free(c);
	assert_string_equal(kube_url_redact("https://u:p@h:1/x@y?a=b@c", out, sizeof(out)),
			    "https://<redacted>@h:1/x@y?a=b@c");
	assert_string_equal(kube_url_redact("https://h:443", out, sizeof(out)), "https://h:443");
	assert_string_equal(kube_url_redact("https://a@b@h", out, sizeof(out)),
			    "https://<redacted>@h");
}

static void test_exec_stderr_bounded_and_escaped(void **state)
{
	static const char noisy[] =
		"#!/bin/sh\n"
		"printf 'line one\\n\\033[31mFAKE 00:00:00 ERROR forged\\n' >&2\n"
		"head -c 20000 /dev/zero | tr '\\0' x >&2\n"
		"exit 4\n";
	struct logcap lc = {PTHREAD_MUTEX_INITIALIZER, BUF_INIT};
	struct logger lg = {cap_write, &lc, LOG_DEBUG, NULL};
	struct kube_client_opts o = {0};
	struct kube_client *c;
	struct kube_response r;
	struct errbuf err = {""};
	char user[512], path[512];
	const char *t;

	(void)state;
	write_file("noisy.sh", noisy);
	snprintf(path, sizeof(path), "%s/noisy.sh", tmpdir);
	chmod(path, 0755);
	snprintf(user, sizeof(user),
		 "    exec:\n"
		 "      apiVersion: client.authentication.k8s.io/v1\n"
		 "      command: ./noisy.sh\n"
		 "      interactiveMode: Never\n");
	o.log = &lg;
	c = client_for("http://127.0.0.1:1", user, &o);
	assert_int_equal(kube_request(c, "GET", "/api", NULL, NULL, 0, &r, &err), -1);
	kube_response_free(&r);
	assert_non_null(strstr(err.msg, "exited with status 4"));
	t = lc.text.data;
	assert_non_null(t);
	/* each line of it a log line of its own, escapes escaped: nothing forged */
	assert_non_null(strstr(t, "noisy.sh: stderr: line one\n"));
	assert_non_null(strstr(t, "noisy.sh: stderr: \\x1b[31mFAKE 00:00:00 ERROR forged\n"));
	assert_null(strchr(t, '\033'));
	assert_null(strstr(t, "\nFAKE"));
	/* bounded: the first 4 KiB, and how much more there was */
	assert_non_null(strstr(t, "stderr: 15945 more bytes not shown\n"));
	assert_true(strlen(t) < 2000);
	kube_client_free(c);
	buf_free(&lc.text);
}

/* A FIFO with no writer as a file the client reads: refused at once (a
 * blocked open would hang this test), with the file's name. */
static void test_fifo_files_refused(void **state)
{
	struct kube_config manual;
	struct kube_client *c;
	struct kube_response r;
	struct errbuf err = {""};
	char fifo[512];

	(void)state;
	snprintf(fifo, sizeof(fifo), "%s/fifo", tmpdir);
	unlink(fifo);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	memset(&manual, 0, sizeof(manual));
	manual.server = "http://127.0.0.1:1";
	/* the token file: read on the first request */
	manual.token_file = fifo;
	c = kube_client_new(&manual, NULL, &err);
	assert_non_null(c);
	assert_int_equal(kube_request(c, "GET", "/api", NULL, NULL, 0, &r, &err), -1);
	kube_response_free(&r);
	assert_non_null(strstr(err.msg, "token file"));
	assert_non_null(strstr(err.msg, fifo));
	assert_non_null(strstr(err.msg, "not a regular file"));
	kube_client_free(c);
	manual.token_file = NULL;
	/* the TLS files libcurl would open on every connection */
	manual.ca_file = fifo;
	assert_null(kube_client_new(&manual, NULL, &err));
	assert_non_null(strstr(err.msg, "certificate-authority"));
	assert_non_null(strstr(err.msg, fifo));
	assert_non_null(strstr(err.msg, "not a regular file"));
	manual.ca_file = NULL;
	manual.cert_file = fifo;
	manual.key_file = fifo;
	assert_null(kube_client_new(&manual, NULL, &err));
	assert_non_null(strstr(err.msg, "client-certificate"));
	assert_non_null(strstr(err.msg, "not a regular file"));
	unlink(fifo);
}

/* The request metric's verb for streamed GETs: lists are not watches. */
static void test_stream_verbs(void **state)
{
	(void)state;
	assert_string_equal(kube_stream_verb("/api/v1/pods?watch=1&resourceVersion=5"), "WATCH");
	assert_string_equal(kube_stream_verb("/api/v1/pods?resourceVersion=5&watch=true"), "WATCH");
	assert_string_equal(kube_stream_verb("/api/v1/pods?limit=500"), "LIST");
	assert_string_equal(kube_stream_verb("/api/v1/pods"), "LIST");
	assert_string_equal(kube_stream_verb("/api/v1/pods?limit=5&nowatch=1"), "LIST");
	assert_string_equal(kube_stream_verb("/api/v1/pods?watch=false"), "LIST");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_shapes),
		cmocka_unit_test(test_error_statuses),
		cmocka_unit_test(test_transport_error),
		cmocka_unit_test(test_verbose_redacts_authorization),
		cmocka_unit_test(test_token_file_rotation),
		cmocka_unit_test(test_token_file_missing_at_start),
		cmocka_unit_test(test_exec_plugin_cache_and_expiry),
		cmocka_unit_test(test_exec_plugin_failures),
		cmocka_unit_test(test_exec_interactive_always_refused),
		cmocka_unit_test(test_stream_assembles_objects),
		cmocka_unit_test(test_stream_stops),
		cmocka_unit_test(test_stream_malformed),
		cmocka_unit_test(test_splitter_every_split),
		cmocka_unit_test(test_escape_and_time),
		cmocka_unit_test(test_threads_share_a_client),
		cmocka_unit_test(test_tls_verified),
		cmocka_unit_test(test_write_rate_limit),
		cmocka_unit_test(test_cancel_ends_requests_in_flight),
		cmocka_unit_test(test_token_with_control_characters_refused),
		cmocka_unit_test(test_server_userinfo_redacted),
		cmocka_unit_test(test_exec_stderr_bounded_and_escaped),
		cmocka_unit_test(test_fifo_files_refused),
		cmocka_unit_test(test_stream_verbs),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
