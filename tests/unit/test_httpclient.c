/*
 * Tests for src/runtime/httpclient: the body cap, wiped header lists, the
 * lines of curl's verbose output, error text, the User-Agent, and easy
 * handles against a loopback libmicrohttpd server (how each method sends
 * its body, a body past the cap ending the transfer, the progress callback
 * ending it, the shared cache reusing a connection). TLS by default is
 * covered where it is used: test_cloudhttp and test_kube_client refuse a
 * self-signed server.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "runtime/httpclient.h"
#include "test_cloud_server.h"

static void test_body_cap(void **state)
{
	struct httpclient_body b = {BUF_INIT, 5, false};

	(void)state;
	assert_int_equal(httpclient_body_append(&b, "abc", 3), 3);
	assert_int_equal(httpclient_body_write("de", 1, 2, &b), 2);
	assert_false(b.too_big);
	assert_int_equal(httpclient_body_append(&b, "f", 1), 0);
	assert_true(b.too_big);
	assert_int_equal(b.data.len, 5);
	assert_memory_equal(b.data.data, "abcde", 5);
	buf_free(&b.data);
}

static void test_slist(void **state)
{
	struct curl_slist *l = NULL;
	bool fail = false;

	(void)state;
	l = httpclient_slist_add(l, "Accept: application/json", &fail);
	l = httpclient_slist_add(l, "Authorization: Bearer secret", &fail);
	assert_false(fail);
	assert_string_equal(l->data, "Accept: application/json");
	assert_string_equal(l->next->data, "Authorization: Bearer secret");
	/* once failed, nothing more is added */
	fail = true;
	assert_ptr_equal(httpclient_slist_add(l, "X: y", &fail), l);
	assert_null(l->next->next);
	httpclient_slist_free(l);
	httpclient_slist_free(NULL);
}

struct lines {
	char text[512];
	int n, first;
};

static void on_line(void *ud, const char *line, size_t len, bool first)
{
	struct lines *l = ud;
	size_t n = strlen(l->text);

	snprintf(l->text + n, sizeof(l->text) - n, "[%.*s]", (int)len, line);
	l->n++;
	l->first += first;
}

static void test_debug_lines(void **state)
{
	static const char hdrs[] = "GET /x HTTP/1.1\r\nHost: h\r\n\r\nAccept: */*";
	struct lines l = {"", 0, 0};

	(void)state;
	httpclient_debug_lines(hdrs, sizeof(hdrs) - 1, on_line, &l);
	assert_string_equal(l.text, "[GET /x HTTP/1.1][Host: h][Accept: */*]");
	assert_int_equal(l.n, 3);
	assert_int_equal(l.first, 1);
	/* an empty first line is not handed over, and takes 'first' with it */
	memset(&l, 0, sizeof(l));
	httpclient_debug_lines("\r\nA: b\n", 7, on_line, &l);
	assert_string_equal(l.text, "[A: b]");
	assert_int_equal(l.first, 0);
}

static void test_error_text(void **state)
{
	char out[256], small[8];

	(void)state;
	httpclient_error_text(NULL, CURLE_COULDNT_CONNECT, "Failed to connect\n\n", out, sizeof(out));
	assert_string_equal(out, "Failed to connect");
	httpclient_error_text(NULL, CURLE_COULDNT_CONNECT, "", out, sizeof(out));
	assert_string_equal(out, curl_easy_strerror(CURLE_COULDNT_CONNECT));
	httpclient_error_text(NULL, CURLE_COULDNT_CONNECT, NULL, small, sizeof(small));
	assert_int_equal(strlen(small), sizeof(small) - 1);
}

static void test_user_agent(void **state)
{
	char *ua;

	(void)state;
	ua = httpclient_user_agent(NULL);
	assert_non_null(ua);
	assert_int_equal(strncmp(ua, "luascale/", 9), 0);
	assert_true(strlen(ua) > 9);
	free(ua);
	ua = httpclient_user_agent("mine/2");
	assert_string_equal(ua, "mine/2");
	free(ua);
}

/* ---- against a loopback server ---- */

static void h_echo(void *ud, size_t idx, const struct cs_req *rq, struct cs_resp *rs)
{
	(void)ud;
	(void)idx;
	(void)rq;
	snprintf(rs->body, sizeof(rs->body), "0123456789abcdef");
}

static void h_hold(void *ud, size_t idx, const struct cs_req *rq, struct cs_resp *rs)
{
	(void)ud;
	(void)idx;
	(void)rq;
	rs->hold = true;
}

/* One transfer of 'method' with 'body' (NULL: none) to s; returns its code. */
static CURLcode transfer(struct httpclient_share *sh, struct cs_server *s, const char *method,
			 const char *body, struct httpclient_body *b, curl_xferinfo_callback prog,
			 long *new_conns)
{
	char url[128], err[CURL_ERROR_SIZE] = "";
	CURLcode rc;
	CURL *c;

	snprintf(url, sizeof(url), "%s/p?q=1", s->url);
	c = httpclient_easy_new(sh, &(const struct httpclient_easy_opts){
		.url = url,
		.method = method,
		.body = body,
		.body_len = body ? strlen(body) : 0,
		.user_agent = "ua/1",
		.connect_ms = 5000,
		.timeout_ms = 10000,
		.error_buf = err,
		.on_write = httpclient_body_write,
		.write_ud = b,
		.on_progress = prog,
	});
	assert_non_null(c);
	rc = curl_easy_perform(c);
	if (new_conns)
		curl_easy_getinfo(c, CURLINFO_NUM_CONNECTS, new_conns);
	curl_easy_cleanup(c);
	return rc;
}

static void test_methods_and_bodies(void **state)
{
	static const struct {
		const char *method, *body, *want_method, *want_len;
	} cases[] = {
		{"GET", NULL, "GET", NULL},
		{"DELETE", NULL, "DELETE", NULL},
		{"POST", "", "POST", "0"},
		{"PUT", "abc", "PUT", "3"},
		{"PATCH", "{}", "PATCH", "2"},
		{"GET", "x", "GET", "1"},
		{"HEAD", NULL, "HEAD", NULL},
	};
	struct httpclient_share *sh;
	struct cs_server s;
	struct errbuf err;
	size_t i;

	(void)state;
	sh = httpclient_share_new(&err);
	assert_non_null(sh);
	assert_int_equal(cs_start(&s, h_echo, NULL, NULL, NULL), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct httpclient_body b = {BUF_INIT, 1024, false};
		const struct cs_req *rq;
		const char *len;

		assert_int_equal(transfer(sh, &s, cases[i].method, cases[i].body, &b, NULL, NULL),
				 CURLE_OK);
		assert_int_equal(cs_count(&s), i + 1);
		rq = &s.reqs[i];
		assert_string_equal(rq->method, cases[i].want_method);
		assert_string_equal(rq->target, "/p?q=1");
		assert_string_equal(cs_header(rq, "User-Agent"), "ua/1");
		len = cs_header(rq, "Content-Length");
		if (cases[i].want_len) {
			assert_non_null(len);
			assert_string_equal(len, cases[i].want_len);
			assert_string_equal(rq->body, cases[i].body);
		} else {
			assert_null(len);
			assert_int_equal(rq->body_len, 0);
		}
		if (strcmp(cases[i].method, "HEAD") == 0)
			assert_int_equal(b.data.len, 0);
		else
			assert_string_equal(b.data.data, "0123456789abcdef");
		buf_free(&b.data);
	}
	cs_stop(&s);
	httpclient_share_free(sh);
}

static void test_cap_ends_transfer(void **state)
{
	struct httpclient_body b = {BUF_INIT, 10, false};
	struct cs_server s;

	(void)state;
	assert_int_equal(cs_start(&s, h_echo, NULL, NULL, NULL), 0);
	assert_int_equal(transfer(NULL, &s, "GET", NULL, &b, NULL, NULL), CURLE_WRITE_ERROR);
	assert_true(b.too_big);
	assert_true(b.data.len <= 10);
	buf_free(&b.data);
	cs_stop(&s);
}

static int stop_now(void *ud, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	(void)ud;
	(void)a;
	(void)b;
	(void)c;
	(void)d;
	return 1;
}

static void test_progress_ends_transfer(void **state)
{
	struct httpclient_body b = {BUF_INIT, 1024, false};
	struct cs_server s;

	(void)state;
	assert_int_equal(cs_start(&s, h_hold, NULL, NULL, NULL), 0);
	assert_int_equal(transfer(NULL, &s, "GET", NULL, &b, stop_now, NULL),
			 CURLE_ABORTED_BY_CALLBACK);
	buf_free(&b.data);
	cs_stop(&s);
}

static void test_share_reuses_connection(void **state)
{
	struct httpclient_body b = {BUF_INIT, 1024, false};
	struct httpclient_share *sh;
	struct cs_server s;
	struct errbuf err;
	long conns = -1;

	(void)state;
	sh = httpclient_share_new(&err);
	assert_non_null(sh);
	assert_int_equal(cs_start(&s, h_echo, NULL, NULL, NULL), 0);
	assert_int_equal(transfer(sh, &s, "GET", NULL, &b, NULL, &conns), CURLE_OK);
	assert_int_equal(conns, 1);
	b.data.len = 0;
	assert_int_equal(transfer(sh, &s, "GET", NULL, &b, NULL, &conns), CURLE_OK);
	assert_int_equal(conns, 0); /* the first one's connection, from the share */
	buf_free(&b.data);
	cs_stop(&s);
	httpclient_share_free(sh);
}

static void test_refused_names_the_reason(void **state)
{
	char err[CURL_ERROR_SIZE] = "", out[CURL_ERROR_SIZE + 80];
	CURLcode rc;
	CURL *c;

	(void)state;
	c = httpclient_easy_new(NULL, &(const struct httpclient_easy_opts){
		.url = "http://127.0.0.1:1/",
		.method = "GET",
		.connect_ms = 5000,
		.error_buf = err,
	});
	assert_non_null(c);
	rc = curl_easy_perform(c);
	assert_int_equal(rc, CURLE_COULDNT_CONNECT);
	httpclient_error_text(c, rc, err, out, sizeof(out));
	curl_easy_cleanup(c);
	assert_non_null(strstr(out, "Connection refused"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_body_cap),
		cmocka_unit_test(test_slist),
		cmocka_unit_test(test_debug_lines),
		cmocka_unit_test(test_error_text),
		cmocka_unit_test(test_user_agent),
		cmocka_unit_test(test_methods_and_bodies),
		cmocka_unit_test(test_cap_ends_transfer),
		cmocka_unit_test(test_progress_ends_transfer),
		cmocka_unit_test(test_share_reuses_connection),
		cmocka_unit_test(test_refused_names_the_reason),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
