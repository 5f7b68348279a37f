/*
 * Tests for cloudjson: the status of a request that got no answer (nothing
 * listens on the port; a prepare hook refuses with the token endpoint's
 * error). Answered requests are the GCE and Azure providers' tests.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "providers/cloudhttp/cloudjson.h"

static struct cloudhttp *client(void)
{
	struct cloudhttp_opts o;
	struct errbuf e;
	struct cloudhttp *h;

	memset(&o, 0, sizeof(o));
	o.max_attempts = 1;
	o.connect_timeout_ms = 2000;
	h = cloudhttp_new(&o, &e);
	assert_non_null(h);
	return h;
}

static void test_no_answer(void **state)
{
	struct cloudhttp *h = client();
	struct cloudjson_request r;
	struct cloudhttp_response resp;
	struct provider_status st;
	cJSON *body = cJSON_Parse("{\"a\":1}");

	(void)state;
	memset(&r, 0, sizeof(r));
	memset(&st, 0, sizeof(st));
	r.what = "POST things/x";
	r.method = "POST";
	r.url = "http://127.0.0.1:1/things/x"; /* nothing listens there */
	r.body = body;
	r.if_match = "\"etag-1\"";
	assert_int_equal(cloudjson_send(h, &r, &resp, &st), -1);
	assert_int_equal(resp.status, 0);
	assert_int_equal(st.code, PROVIDER_TRANSIENT);
	assert_true(!strncmp(st.message, "POST things/x: ", 15));
	cloudhttp_response_free(&resp);
	cJSON_Delete(body);
	cloudhttp_free(h);
}

/* A token source that fails: the token endpoint's error becomes the status. */
static int refuse(void *ctx, const struct cloudhttp_request *req, struct cloudhttp_headers *extra, struct errbuf *err)
{
	struct provider_status *st = ctx;

	(void)req;
	(void)extra;
	st->code = PROVIDER_AUTH;
	snprintf(st->message, sizeof(st->message), "invalid_grant: the key was revoked");
	errbuf_set(err, "no access token");
	return -1;
}

static void test_refused_by_prepare(void **state)
{
	struct cloudhttp *h = client();
	struct cloudjson_request r;
	struct cloudhttp_response resp;
	struct provider_status st;

	(void)state;
	memset(&r, 0, sizeof(r));
	memset(&st, 0, sizeof(st));
	r.what = "GET things";
	r.method = "GET";
	r.url = "http://127.0.0.1:1/things";
	r.prepare = refuse;
	r.ctx = &st;
	assert_int_equal(cloudjson_send(h, &r, &resp, &st), -1);
	assert_int_equal(st.code, PROVIDER_AUTH);
	assert_non_null(strstr(st.message, "invalid_grant"));
	assert_non_null(strstr(st.message, "GET things not sent"));
	cloudhttp_response_free(&resp);
	cloudhttp_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_answer),
		cmocka_unit_test(test_refused_by_prepare),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
