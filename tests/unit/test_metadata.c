/*
 * Tests for cloudhttp/metadata, the metadata-server client the three
 * clouds share, against a loopback fake: the base URL, the headers sent,
 * the attempts on no answer and 5xx, cloudhttp_call's retries under a
 * classifier, and the bounded plain-text answers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "providers/cloudhttp/cloudhttp.h"
#include "providers/cloudhttp/metadata.h"
#include "providers/cloudhttp/oauth.h"
#include "test_cloud_server.h"

struct fx {
	struct cs_server cs;
	struct cloudhttp *http;
	int fail;            /* this many requests answer 503 */
	int status;          /* then this status (0: 200) */
	char body[256];      /* and this body */
};

static void handler(void *ud, size_t index, const struct cs_req *rq, struct cs_resp *rs)
{
	struct fx *f = ud;

	(void)index;
	(void)rq;
	if (f->fail > 0) {
		f->fail--;
		rs->status = 503;
		return;
	}
	rs->status = f->status ? f->status : 200;
	snprintf(rs->body, sizeof(rs->body), "%s", f->body);
}

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct cloudhttp_opts ho;
	struct errbuf e = { "" };

	assert_non_null(f);
	memset(&ho, 0, sizeof(ho));
	ho.connect_timeout_ms = 1000;
	ho.request_timeout_ms = 5000;
	ho.max_attempts = 3;
	ho.max_backoff_ms = 5;
	ho.seed = 1;
	f->http = cloudhttp_new(&ho, &e);
	assert_non_null(f->http);
	assert_int_equal(cs_start(&f->cs, handler, f, NULL, NULL), 0);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	cs_stop(&f->cs);
	cloudhttp_free(f->http);
	free(f);
	return 0;
}

static void client(struct fx *f, struct metadata_client *m, const char *base)
{
	struct errbuf e = { "" };

	assert_int_equal(metadata_init(m, f->http, base, "the base", &e), 0);
	m->timeout_ms = 1000;
	m->attempts = 2;
}

static void test_init(void **state)
{
	struct fx *f = *state;
	struct metadata_client m;
	struct errbuf e = { "" };
	char longer[1100];

	client(f, &m, "http://169.254.169.254///");
	assert_string_equal(m.base, "http://169.254.169.254");
	assert_ptr_equal(m.http, f->http);
	assert_null(m.header);
	assert_null(m.classify);
	memset(longer, 'a', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	assert_int_equal(metadata_init(&m, f->http, longer, "THE_VARIABLE", &e), -1);
	assert_string_equal(e.msg, "THE_VARIABLE is too long");
}

static void test_send_headers(void **state)
{
	struct fx *f = *state;
	struct metadata_client m;
	struct cloudhttp_response r = { 0 };
	struct errbuf e = { "" };
	char base[80];

	snprintf(base, sizeof(base), "%s/", f->cs.url);
	client(f, &m, base);
	m.header = "Metadata-Flavor";
	m.value = "Google";
	snprintf(f->body, sizeof(f->body), "luascale-proj\n");
	assert_int_equal(metadata_send(&m, "GET", "/computeMetadata/v1/project/project-id", NULL,
				       NULL, &r, &e), 0);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "luascale-proj\n");
	oauth_wipe_response(&r);
	assert_int_equal(metadata_send(&m, "PUT", "/latest/api/token", "x-token-ttl", "21600", &r,
				       &e), 0);
	oauth_wipe_response(&r);
	assert_int_equal(cs_count(&f->cs), 2);
	assert_string_equal(f->cs.reqs[0].method, "GET");
	assert_string_equal(f->cs.reqs[0].target, "/computeMetadata/v1/project/project-id");
	assert_string_equal(cs_header(&f->cs.reqs[0], "Metadata-Flavor"), "Google");
	assert_null(cs_header(&f->cs.reqs[0], "x-token-ttl"));
	assert_string_equal(f->cs.reqs[1].method, "PUT");
	assert_string_equal(cs_header(&f->cs.reqs[1], "Metadata-Flavor"), "Google");
	assert_string_equal(cs_header(&f->cs.reqs[1], "x-token-ttl"), "21600");
}

static void test_attempts(void **state)
{
	struct fx *f = *state;
	struct metadata_client m;
	struct cloudhttp_response r = { 0 };
	struct errbuf e = { "" };

	client(f, &m, f->cs.url);
	/* one 503, then the answer: within the two attempts */
	f->fail = 1;
	assert_int_equal(metadata_send(&m, "GET", "/x", NULL, NULL, &r, &e), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(cs_count(&f->cs), 2);
	/* two 503s use them up: the last answer is returned */
	f->fail = 2;
	assert_int_equal(metadata_send(&m, "GET", "/x", NULL, NULL, &r, &e), 0);
	assert_int_equal(r.status, 503);
	assert_int_equal(cs_count(&f->cs), 4);
	/* a 4xx is an answer, not retried */
	f->status = 404;
	assert_int_equal(metadata_send(&m, "GET", "/x", NULL, NULL, &r, &e), 0);
	assert_int_equal(r.status, 404);
	assert_int_equal(cs_count(&f->cs), 5);
	oauth_wipe_response(&r);
	/* no answer at all: -1 with cloudhttp's reason */
	client(f, &m, "http://127.0.0.1:9");
	m.attempts = 1;
	assert_int_equal(metadata_send(&m, "GET", "/x", NULL, NULL, &r, &e), -1);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(e.msg, "127.0.0.1:9"));
	oauth_wipe_response(&r);
}

static void test_classify(void **state)
{
	struct fx *f = *state;
	struct metadata_client m;
	struct cloudhttp_response r = { 0 };
	struct errbuf e = { "" };

	client(f, &m, f->cs.url);
	m.attempts = 1; /* not used under a classifier */
	m.classify = cloudhttp_classify_default;
	f->fail = 2;
	assert_int_equal(metadata_send(&m, "GET", "/x?api-version=1", NULL, NULL, &r, &e), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.attempts, 3);
	assert_int_equal(cs_count(&f->cs), 3);
	assert_string_equal(f->cs.reqs[2].target, "/x?api-version=1");
	oauth_wipe_response(&r);
}

static int text(const char *body, const char *allowed, char *out, size_t len)
{
	struct cloudhttp_response r = { 0 };

	r.status = 200;
	r.body = (char *)body;
	r.body_len = strlen(body);
	return metadata_text(&r, allowed, out, len);
}

static void test_text(void **state)
{
	char out[16] = "unchanged";

	(void)state;
	assert_int_equal(text("us-central1-a \r\nmore", "-/", out, sizeof(out)), 0);
	assert_string_equal(out, "us-central1-a");
	assert_int_equal(text("role-name\nsecond-role\n", "+=,.@_-", out, sizeof(out)), 0);
	assert_string_equal(out, "role-name");
	/* exactly len - 1 fits, len does not */
	assert_int_equal(text("0123456789abcde", "", out, sizeof(out)), 0);
	assert_int_equal(text("0123456789abcdef", "", out, sizeof(out)), -1);
	assert_int_equal(text("", "", out, sizeof(out)), -1);
	assert_int_equal(text("  \nx", "", out, sizeof(out)), -1);
	snprintf(out, sizeof(out), "unchanged");
	assert_int_equal(text("<html>", "-", out, sizeof(out)), -2);
	assert_int_equal(text("a b", "-", out, sizeof(out)), -2);
	assert_string_equal(out, "unchanged");
}

int main(void)
{
#define T(t) cmocka_unit_test_setup_teardown(t, fx_setup, fx_teardown)
	const struct CMUnitTest tests[] = {
		T(test_init),
		T(test_send_headers),
		T(test_attempts),
		T(test_classify),
		cmocka_unit_test(test_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
