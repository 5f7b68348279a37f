/*
 * Tests for runtime/metrics and runtime/httpserver: names checked at
 * registration, the text format 0.0.4 rendered exactly (HELP/TYPE, label
 * escaping, cumulative buckets with +Inf, _sum, _count), the cardinality
 * bound, collectors, threads; the server's routes, 404/405 and addresses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "runtime/httpserver.h"
#include "runtime/metrics.h"

static char *render(struct metrics *m)
{
	struct buf b = BUF_INIT;

	assert_int_equal(metrics_render(m, &b), 0);
	return b.data ? buf_take(&b) : strdup("");
}

static void test_names_are_checked(void **state)
{
	struct metrics *m = metrics_new();
	static const double b[] = {1, 2};
	static const double bad[] = {2, 1};

	(void)state;
	assert_null(metrics_counter(m, "luascale_reconciles", "no _total", NULL));
	assert_null(metrics_gauge(m, "luascale_nodes_total", "a gauge named like a counter", NULL));
	assert_null(metrics_counter(m, "9lives_total", "", NULL));
	assert_null(metrics_counter(m, "a-b_total", "", NULL));
	assert_null(metrics_counter(m, "x_total", "", "__reserved"));
	assert_null(metrics_counter(m, "x_total", "", "a,b,c,d,e"));
	assert_null(metrics_counter(m, "x_total", "", "ok,bad-label"));
	assert_null(metrics_histogram(m, "h_seconds", "", "le", b, 2));
	assert_null(metrics_histogram(m, "h_seconds", "", NULL, bad, 2));
	assert_null(metrics_histogram(m, "h_seconds", "", NULL, b, 0));
	assert_non_null(metrics_counter(m, "x_total", "", "a,b"));
	assert_null(metrics_counter(m, "x_total", "", NULL)); /* taken */
	assert_null(metrics_counter(NULL, "y_total", "", NULL));
	metric_inc(NULL); /* a NULL family is a no-op */
	metrics_free(m);
}

static void test_text_format(void **state)
{
	struct metrics *m = metrics_new();
	struct metric *c = metrics_counter(m, "luascale_api_requests_total",
					   "API requests by verb and code.", "verb,code");
	struct metric *g = metrics_gauge(m, "luascale_group_size", "Back\\slash\nnewline.", "group");
	struct metric *n = metrics_gauge(m, "luascale_up", "No labels.", NULL);
	char *text;

	(void)state;
	metric_inc2(c, "GET", "200");
	metric_inc2(c, "GET", "200");
	metric_add(c, (const char *const[]){"PUT", "409"}, 3);
	metric_add(c, (const char *const[]){"PUT", "409"}, -5); /* counters never go down */
	metric_set1(g, "we\"ird\\na\nme", 2.5);
	metric_set0(n, 1);
	text = render(m);
	assert_string_equal(text,
		"# HELP luascale_api_requests_total API requests by verb and code.\n"
		"# TYPE luascale_api_requests_total counter\n"
		"luascale_api_requests_total{verb=\"GET\",code=\"200\"} 2\n"
		"luascale_api_requests_total{verb=\"PUT\",code=\"409\"} 3\n"
		"# HELP luascale_group_size Back\\\\slash\\nnewline.\n"
		"# TYPE luascale_group_size gauge\n"
		"luascale_group_size{group=\"we\\\"ird\\\\na\\nme\"} 2.5\n"
		"# HELP luascale_up No labels.\n"
		"# TYPE luascale_up gauge\n"
		"luascale_up 1\n");
	free(text);
	assert_true(metric_value(c, (const char *const[]){"GET", "200"}) == 2);
	assert_true(metric_value(c, (const char *const[]){"GET", "500"}) == 0);
	metrics_free(m);
}

static void test_histogram(void **state)
{
	struct metrics *m = metrics_new();
	static const double b[] = {0.1, 1, 10};
	struct metric *h = metrics_histogram(m, "luascale_reconcile_duration_seconds", "Rounds.",
					     "outcome", b, 3);
	char *text;

	(void)state;
	metric_observe1(h, "ok", 0.05);
	metric_observe1(h, "ok", 0.1); /* on a bound: that bucket (le is <=) */
	metric_observe1(h, "ok", 3);
	metric_observe1(h, "ok", 50);
	text = render(m);
	assert_string_equal(text,
		"# HELP luascale_reconcile_duration_seconds Rounds.\n"
		"# TYPE luascale_reconcile_duration_seconds histogram\n"
		"luascale_reconcile_duration_seconds_bucket{outcome=\"ok\",le=\"0.1\"} 2\n"
		"luascale_reconcile_duration_seconds_bucket{outcome=\"ok\",le=\"1\"} 2\n"
		"luascale_reconcile_duration_seconds_bucket{outcome=\"ok\",le=\"10\"} 3\n"
		"luascale_reconcile_duration_seconds_bucket{outcome=\"ok\",le=\"+Inf\"} 4\n"
		"luascale_reconcile_duration_seconds_sum{outcome=\"ok\"} 53.15\n"
		"luascale_reconcile_duration_seconds_count{outcome=\"ok\"} 4\n");
	free(text);
	/* set and add do not apply to histograms, observe not to counters */
	metric_set(h, (const char *const[]){"ok"}, 7);
	assert_true(metric_value(h, (const char *const[]){"ok"}) == 4);
	metrics_free(m);
}

static void test_cardinality_bound(void **state)
{
	struct metrics *m = metrics_new();
	struct metric *c = metrics_counter(m, "x_total", "", "k");
	char v[16];
	int i;

	(void)state;
	for (i = 0; i < METRICS_MAX_SERIES + 10; i++) {
		snprintf(v, sizeof(v), "v%d", i);
		metric_inc1(c, v);
	}
	assert_int_equal(metrics_dropped(m), 10);
	metric_inc1(c, "v0"); /* existing series still count */
	assert_true(metric_value(c, (const char *const[]){"v0"}) == 2);
	metrics_free(m);
}

static void collect(void *ctx)
{
	struct metric *g = ctx;

	metric_set0(g, metric_value(g, NULL) + 1);
}

static void test_collectors_run_at_render(void **state)
{
	struct metrics *m = metrics_new();
	struct metric *g = metrics_gauge(m, "renders", "", NULL);
	char *t;

	(void)state;
	assert_int_equal(metrics_on_collect(m, collect, g), 0);
	free(render(m));
	t = render(m);
	assert_non_null(strstr(t, "\nrenders 2\n"));
	free(t);
	metrics_free(m);
}

struct hammer {
	struct metric *c, *h;
};

static void *hammer_fn(void *arg)
{
	struct hammer *hm = arg;
	int i;

	for (i = 0; i < 10000; i++) {
		metric_inc1(hm->c, i % 2 ? "a" : "b");
		metric_observe0(hm->h, 0.5);
	}
	return NULL;
}

static void test_threads(void **state)
{
	struct metrics *m = metrics_new();
	struct hammer hm = {metrics_counter(m, "x_total", "", "k"),
			    metrics_histogram(m, "y_seconds", "", NULL, metrics_buckets_seconds,
					      metrics_n_buckets_seconds)};
	pthread_t t[4];
	int i;

	(void)state;
	for (i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, hammer_fn, &hm);
	for (i = 0; i < 4; i++)
		free(render(m));
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	assert_true(metric_value(hm.c, (const char *const[]){"a"}) == 20000);
	assert_true(metric_value(hm.h, NULL) == 40000);
	metrics_free(m);
}

static void test_parse_listen(void **state)
{
	char host[64];
	int port = -1;
	struct errbuf err = {""};

	(void)state;
	assert_int_equal(httpserver_parse_listen(":8080", host, sizeof(host), &port, &err), 0);
	assert_string_equal(host, "");
	assert_int_equal(port, 8080);
	assert_int_equal(httpserver_parse_listen("127.0.0.1:0", host, sizeof(host), &port, &err), 0);
	assert_string_equal(host, "127.0.0.1");
	assert_int_equal(port, 0);
	assert_int_equal(httpserver_parse_listen("[::1]:9", host, sizeof(host), &port, &err), 0);
	assert_string_equal(host, "::1");
	assert_int_equal(httpserver_parse_listen("8080", host, sizeof(host), &port, &err), -1);
	assert_non_null(strstr(err.msg, "\"8080\""));
	assert_int_equal(httpserver_parse_listen(":65536", host, sizeof(host), &port, &err), -1);
	assert_int_equal(httpserver_parse_listen(":-1", host, sizeof(host), &port, &err), -1);
	assert_int_equal(httpserver_parse_listen("::1:80", host, sizeof(host), &port, &err), -1);
	assert_int_equal(httpserver_parse_listen("a b:80", host, sizeof(host), &port, &err), -1);
}

static int page(void *ctx, struct buf *body)
{
	buf_puts(body, ctx);
	return strcmp(ctx, "sick\n") == 0 ? 503 : 200;
}

static size_t sink(char *p, size_t size, size_t n, void *ud)
{
	buf_append(ud, p, size * n);
	return size * n;
}

static long fetch(int port, const char *method, const char *path, struct buf *out)
{
	CURL *h = curl_easy_init();
	char url[128];
	long code = 0;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 10L);
	if (curl_easy_perform(h) == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(h);
	return code;
}

static void test_server(void **state)
{
	struct httpserver_route r[] = {
		{"/metrics", "text/plain; version=0.0.4; charset=utf-8", page, "x_total 1\n"},
		{"/healthz", "text/plain; charset=utf-8", page, "sick\n"},
	};
	struct errbuf err = {""};
	struct httpserver *s = httpserver_start("127.0.0.1:0", r, 2, &err), *t;
	struct buf b = BUF_INIT;
	char listen[32];

	(void)state;
	assert_non_null(s);
	assert_true(httpserver_port(s) > 0);
	assert_int_equal(fetch(httpserver_port(s), "GET", "/metrics", &b), 200);
	assert_string_equal(b.data, "x_total 1\n");
	b.len = 0;
	assert_int_equal(fetch(httpserver_port(s), "GET", "/healthz", &b), 503);
	assert_int_equal(fetch(httpserver_port(s), "GET", "/nope", &b), 404);
	assert_int_equal(fetch(httpserver_port(s), "POST", "/metrics", &b), 405);
	/* the port is taken: a clear error */
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", httpserver_port(s));
	t = httpserver_start(listen, r, 2, &err);
	assert_null(t);
	assert_non_null(strstr(err.msg, "cannot listen"));
	buf_free(&b);
	httpserver_stop(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_are_checked),
		cmocka_unit_test(test_text_format),
		cmocka_unit_test(test_histogram),
		cmocka_unit_test(test_cardinality_bound),
		cmocka_unit_test(test_collectors_run_at_render),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_parse_listen),
		cmocka_unit_test(test_server),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
