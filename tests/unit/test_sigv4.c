/*
 * Tests for wire/sigv4.c: AWS's published IAM ListUsers example
 * (tests/data/sigv4/), the canonical form's rules (trimming, repeats,
 * headers never signed, query and path encoding), refusals, and the
 * verifier accepting its own signatures and refusing every tampering.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "wire/sigv4.h"

#define EX_TIME 1440938160 /* 20150830T123600Z */
#define EX_SECRET "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"

static char *read_data(const char *name)
{
	char path[512];
	struct buf b = BUF_INIT;
	struct errbuf err;

	snprintf(path, sizeof(path), "%s/sigv4/%s", TEST_DATA_DIR, name);
	if (buf_read_file(&b, path, 1 << 20, &err) != 0)
		fail_msg("%s", err.msg);
	return buf_take(&b);
}

static void example_creds(struct aws_credentials *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->access_key_id, sizeof(c->access_key_id), "AKIDEXAMPLE");
	snprintf(c->secret_access_key, sizeof(c->secret_access_key), EX_SECRET);
}

/* The documented example: GET /?Action=ListUsers&Version=2010-05-08. */
static struct sigv4_header ex_headers[4];
static struct sigv4_input example_input(void)
{
	struct sigv4_input in;

	ex_headers[0] = (struct sigv4_header){"Host", "iam.amazonaws.com"};
	ex_headers[1] = (struct sigv4_header){"Content-Type",
					      "application/x-www-form-urlencoded; charset=utf-8"};
	memset(&in, 0, sizeof(in));
	in.method = "GET";
	in.path = "/";
	in.query = "Action=ListUsers&Version=2010-05-08";
	in.headers = ex_headers;
	in.n_headers = 2;
	in.region = "us-east-1";
	in.service = "iam";
	in.time_s = EX_TIME;
	return in;
}

static void test_aws_example(void **state)
{
	struct sigv4_input in = example_input();
	struct aws_credentials c;
	struct sigv4_output out;
	struct errbuf err;
	char *creq = read_data("iam-listusers.creq");
	char *sts = read_data("iam-listusers.sts");
	char *authz = read_data("iam-listusers.authz");

	(void)state;
	example_creds(&c);
	assert_int_equal(sigv4_sign(&in, &c, &out, &err), 0);
	assert_string_equal(out.amz_date, "20150830T123600Z");
	assert_string_equal(out.canonical_request.data, creq);
	assert_string_equal(out.string_to_sign.data, sts);
	assert_string_equal(out.authorization, authz);
	assert_string_equal(out.signed_headers, "content-type;host;x-amz-date");
	assert_string_equal(out.signature,
			    "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7");
	sigv4_output_free(&out);
	free(creq);
	free(sts);
	free(authz);
}

/* ---- a keyring for the verifier ---- */

struct keyring {
	const char *akid, *secret, *token;
};

static const char *lookup(void *ctx, const char *akid, const char **token)
{
	const struct keyring *k = ctx;

	*token = NULL;
	if (strcmp(akid, k->akid) != 0)
		return NULL;
	*token = k->token;
	return k->secret;
}

/* A signed request, headers as sent: the caller's plus X-Amz-Date,
 * X-Amz-Security-Token and Authorization. */
struct signed_req {
	struct sigv4_header h[32];
	size_t n;
	struct sigv4_output out;
	struct sigv4_input in;
};

static void sign_into(struct signed_req *r, const struct sigv4_input *in,
		      const struct aws_credentials *c)
{
	struct errbuf err;
	size_t i;

	assert_true(in->n_headers + 3 <= 32);
	if (sigv4_sign(in, c, &r->out, &err) != 0)
		fail_msg("sign: %s", err.msg);
	r->n = 0;
	for (i = 0; i < in->n_headers; i++)
		r->h[r->n++] = in->headers[i];
	r->h[r->n++] = (struct sigv4_header){"X-Amz-Date", r->out.amz_date};
	if (c->session_token[0])
		r->h[r->n++] = (struct sigv4_header){"X-Amz-Security-Token", c->session_token};
	r->h[r->n++] = (struct sigv4_header){"Authorization", r->out.authorization};
	r->in = *in;
	r->in.headers = r->h;
	r->in.n_headers = r->n;
}

static enum sigv4_verdict verify(const struct sigv4_input *in, int64_t now,
				 const struct keyring *k, struct errbuf *msg)
{
	struct sigv4_scope scope;
	enum sigv4_verdict v = sigv4_verify(in, now, lookup, (void *)k, &scope, msg);

	sigv4_scope_free(&scope);
	return v;
}

static void test_verify_accepts_own_signature(void **state)
{
	struct sigv4_input in = example_input();
	struct keyring k = {"AKIDEXAMPLE", EX_SECRET, NULL};
	struct aws_credentials c;
	struct signed_req r;
	struct sigv4_scope scope;
	struct errbuf msg;

	(void)state;
	example_creds(&c);
	sign_into(&r, &in, &c);
	assert_int_equal(sigv4_verify(&r.in, EX_TIME, lookup, &k, &scope, &msg), SIGV4_OK);
	assert_string_equal(scope.access_key_id, "AKIDEXAMPLE");
	assert_string_equal(scope.date, "20150830");
	assert_string_equal(scope.region, "us-east-1");
	assert_string_equal(scope.service, "iam");
	assert_string_equal(scope.canonical_request.data, r.out.canonical_request.data);
	sigv4_scope_free(&scope);
	/* region/service NULL: the scope's are taken */
	r.in.region = NULL;
	r.in.service = NULL;
	assert_int_equal(verify(&r.in, EX_TIME, &k, &msg), SIGV4_OK);
	/* within 15 minutes either way */
	assert_int_equal(verify(&r.in, EX_TIME + 900, &k, &msg), SIGV4_OK);
	assert_int_equal(verify(&r.in, EX_TIME - 900, &k, &msg), SIGV4_OK);
	sigv4_output_free(&r.out);
}

static void test_verify_refuses_tampering(void **state)
{
	struct sigv4_input in = example_input();
	struct keyring k = {"AKIDEXAMPLE", EX_SECRET, NULL};
	struct keyring wrong = {"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEX", NULL};
	struct keyring other = {"AKIDOTHER", EX_SECRET, NULL};
	struct aws_credentials c;
	struct signed_req r;
	struct sigv4_input t;
	struct sigv4_header h[32];
	struct errbuf msg;

	(void)state;
	example_creds(&c);
	in.method = "POST";
	in.body = "Action=ListUsers";
	in.body_len = strlen(in.body);
	sign_into(&r, &in, &c);
	assert_int_equal(verify(&r.in, EX_TIME, &k, &msg), SIGV4_OK);

	/* a changed body */
	t = r.in;
	t.body = "Action=ListUserz";
	assert_int_equal(verify(&t, EX_TIME, &k, &msg), SIGV4_MISMATCH);
	assert_non_null(strstr(msg.msg, "The request signature we calculated does not match"));
	assert_string_equal(sigv4_verdict_code(SIGV4_MISMATCH, "iam"), "SignatureDoesNotMatch");

	/* a changed signed header */
	memcpy(h, r.h, sizeof(h));
	h[1].value = "application/json";
	t = r.in;
	t.headers = h;
	assert_int_equal(verify(&t, EX_TIME, &k, &msg), SIGV4_MISMATCH);

	/* a changed method, path, query */
	t = r.in;
	t.method = "PUT";
	assert_int_equal(verify(&t, EX_TIME, &k, &msg), SIGV4_MISMATCH);
	t = r.in;
	t.path = "/x";
	assert_int_equal(verify(&t, EX_TIME, &k, &msg), SIGV4_MISMATCH);
	t = r.in;
	t.query = "Action=ListUsers&Version=2010-05-09";
	assert_int_equal(verify(&t, EX_TIME, &k, &msg), SIGV4_MISMATCH);

	/* an unsigned header may change or come: it is not signed */
	memcpy(h, r.h, sizeof(h));
	h[r.n] = (struct sigv4_header){"User-Agent", "curl/8"};
	t = r.in;
	t.headers = h;
	t.n_headers = r.n + 1;
	assert_int_equal(verify(&t, EX_TIME, &k, &msg), SIGV4_OK);

	/* the wrong secret, an unknown key */
	assert_int_equal(verify(&r.in, EX_TIME, &wrong, &msg), SIGV4_MISMATCH);
	assert_int_equal(verify(&r.in, EX_TIME, &other, &msg), SIGV4_UNKNOWN_KEY);
	assert_string_equal(sigv4_verdict_code(SIGV4_UNKNOWN_KEY, "sts"), "InvalidClientTokenId");
	assert_string_equal(sigv4_verdict_code(SIGV4_UNKNOWN_KEY, "autoscaling"),
			    "InvalidClientTokenId");
	assert_string_equal(sigv4_verdict_code(SIGV4_UNKNOWN_KEY, "ec2"), "AuthFailure");

	/* a stale date, a date in the future */
	assert_int_equal(verify(&r.in, EX_TIME + 901, &k, &msg), SIGV4_EXPIRED);
	assert_int_equal(verify(&r.in, EX_TIME - 901, &k, &msg), SIGV4_EXPIRED);
	assert_string_equal(sigv4_verdict_code(SIGV4_EXPIRED, "ec2"), "RequestExpired");

	/* a changed X-Amz-Date: signed, so a mismatch; another day: scope */
	memcpy(h, r.h, sizeof(h));
	h[2].value = "20150830T123601Z";
	t = r.in;
	t.headers = h;
	assert_string_equal(r.h[2].name, "X-Amz-Date");
	assert_int_equal(verify(&t, EX_TIME, &k, &msg), SIGV4_MISMATCH);
	h[2].value = "20150831T000100Z";
	assert_int_equal(verify(&t, EX_TIME + 41460, &k, &msg), SIGV4_MISMATCH);
	assert_non_null(strstr(msg.msg, "Credential scope"));

	/* a signed header missing */
	memcpy(h, r.h, sizeof(h));
	h[1] = h[r.n - 1];
	t = r.in;
	t.headers = h;
	t.n_headers = r.n - 1;
	assert_int_equal(verify(&t, EX_TIME, &k, &msg), SIGV4_INCOMPLETE);
	assert_non_null(strstr(msg.msg, "content-type"));

	/* no Authorization at all */
	t = r.in;
	t.n_headers = r.n - 1;
	assert_int_equal(verify(&t, EX_TIME, &k, &msg), SIGV4_MISSING);
	assert_string_equal(sigv4_verdict_code(SIGV4_MISSING, "ec2"), "MissingAuthenticationToken");

	/* scope for another region or service */
	t = r.in;
	t.region = "eu-west-1";
	assert_int_equal(verify(&t, EX_TIME, &k, &msg), SIGV4_MISMATCH);
	t = r.in;
	t.service = "ec2";
	assert_int_equal(verify(&t, EX_TIME, &k, &msg), SIGV4_MISMATCH);
	sigv4_output_free(&r.out);
}

static enum sigv4_verdict verify_auth(const char *auth, struct errbuf *msg)
{
	struct sigv4_header h[] = {
		{"Host", "iam.amazonaws.com"},
		{"X-Amz-Date", "20150830T123600Z"},
		{"Authorization", auth},
	};
	struct sigv4_input in = example_input();
	struct keyring k = {"AKIDEXAMPLE", EX_SECRET, NULL};

	in.headers = h;
	in.n_headers = 3;
	return verify(&in, EX_TIME, &k, msg);
}

static void test_verify_malformed_authorization(void **state)
{
	static const char *const bad[] = {
		"AWS4-HMAC-SHA1 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, "
		"SignedHeaders=host;x-amz-date, Signature=" "0123456789abcdef0123456789abcdef"
		"0123456789abcdef0123456789abcdef",
		"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam, "
		"SignedHeaders=host;x-amz-date, Signature=0123",
		"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, "
		"SignedHeaders=host;x-amz-date",
		"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, "
		"SignedHeaders=x-amz-date, Signature=0123456789abcdef0123456789abcdef"
		"0123456789abcdef0123456789abcdef",
		"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, "
		"SignedHeaders=x-amz-date;host, Signature=0123456789abcdef0123456789abcdef"
		"0123456789abcdef0123456789abcdef",
		"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, "
		"SignedHeaders=host;x-amz-date, Signature=0123",
		"AWS4-HMAC-SHA256 garbage",
	};
	struct errbuf msg;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		enum sigv4_verdict v = verify_auth(bad[i], &msg);

		if (v != SIGV4_INCOMPLETE)
			fail_msg("case %zu: verdict %d, %s", i, (int)v, msg.msg);
		assert_true(msg.msg[0] != '\0');
	}
	assert_string_equal(sigv4_verdict_code(SIGV4_INCOMPLETE, "sts"), "IncompleteSignature");
	/* well formed but wrong */
	assert_int_equal(verify_auth("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/"
				     "iam/aws4_request,SignedHeaders=host;x-amz-date,Signature="
				     "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
				     &msg),
			 SIGV4_MISMATCH);
}

static void test_session_token(void **state)
{
	struct sigv4_input in = example_input();
	struct keyring k = {"ASIAEXAMPLE", EX_SECRET, "FQoGZXIvYXdzEXAMPLE//token+=="};
	struct keyring no_token = {"ASIAEXAMPLE", EX_SECRET, NULL};
	struct aws_credentials c;
	struct signed_req r;
	struct sigv4_header h[32];
	struct sigv4_input t;
	struct buf red = BUF_INIT;
	struct errbuf msg;

	(void)state;
	memset(&c, 0, sizeof(c));
	snprintf(c.access_key_id, sizeof(c.access_key_id), "ASIAEXAMPLE");
	snprintf(c.secret_access_key, sizeof(c.secret_access_key), EX_SECRET);
	snprintf(c.session_token, sizeof(c.session_token), "%s", k.token);
	/* a stale token among the caller's headers is replaced */
	ex_headers[2] = (struct sigv4_header){"x-amz-security-token", "old"};
	in.n_headers = 3;
	sign_into(&r, &in, &c);
	/* the sign result itself: the token is signed */
	assert_string_equal(r.out.signed_headers, "content-type;host;x-amz-date;x-amz-security-token");
	assert_non_null(strstr(r.out.canonical_request.data,
			       "\nx-amz-security-token:FQoGZXIvYXdzEXAMPLE//token+==\n"));
	/* drop the stale one before sending, as a caller does */
	memmove(&r.h[2], &r.h[3], (r.n - 3) * sizeof(r.h[0]));
	r.n--;
	r.in.n_headers = r.n;
	assert_int_equal(verify(&r.in, EX_TIME, &k, &msg), SIGV4_OK);
	/* a key whose token is not the one sent */
	assert_int_equal(verify(&r.in, EX_TIME, &no_token, &msg), SIGV4_UNKNOWN_KEY);
	memcpy(h, r.h, sizeof(h));
	t = r.in;
	t.headers = h;
	h[3].value = "FQoGZXIvYXdzEXAMPLE//token+=!";
	assert_string_equal(h[3].name, "X-Amz-Security-Token");
	assert_int_equal(verify(&t, EX_TIME, &k, &msg), SIGV4_UNKNOWN_KEY);
	/* the token never reaches a printed canonical request */
	assert_int_equal(sigv4_redact(r.out.canonical_request.data, &red), 0);
	assert_null(strstr(red.data, "FQoG"));
	assert_non_null(strstr(red.data, "\nx-amz-security-token:<redacted>\n"));
	buf_free(&red);
	sigv4_output_free(&r.out);
}

static void test_canonical_headers(void **state)
{
	struct sigv4_header h[] = {
		{"Host", "example.amazonaws.com"},
		{"X-Amz-Meta-A", "  one   two\t\tthree  "},
		{"x-amz-meta-a", "four"},
		{"X-AMZ-META-A", ""},
		{"User-Agent", "curl/8.0"},
		{"Expect", "100-continue"},
		{"Connection", "keep-alive"},
		{"Transfer-Encoding", "chunked"},
		{"X-Amzn-Trace-Id", "Root=1"},
		{"Authorization", "stale"},
		{"X-Amz-Date", "19990101T000000Z"},
		{"Content-Type", "text/plain"},
	};
	struct sigv4_input in = example_input();
	struct aws_credentials c;
	struct sigv4_output out;
	struct errbuf err;

	(void)state;
	example_creds(&c);
	in.headers = h;
	in.n_headers = sizeof(h) / sizeof(h[0]);
	in.query = NULL;
	assert_int_equal(sigv4_sign(&in, &c, &out, &err), 0);
	assert_string_equal(out.signed_headers, "content-type;host;x-amz-date;x-amz-meta-a");
	assert_string_equal(out.canonical_request.data,
			    "GET\n/\n\n"
			    "content-type:text/plain\n"
			    "host:example.amazonaws.com\n"
			    "x-amz-date:20150830T123600Z\n"
			    "x-amz-meta-a:one two three,four,\n"
			    "\ncontent-type;host;x-amz-date;x-amz-meta-a\n"
			    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	sigv4_output_free(&out);
}

static void test_canonical_uri_and_query(void **state)
{
	static const struct {
		const char *path, *query, *want_path, *want_query;
	} cases[] = {
		{"/", "b=2&a=1&a=0&c", "/", "a=0&a=1&b=2&c="},
		{"", "", "/", ""},
		{"/a/./b/../c//d/", NULL, "/a/c/d/", ""},
		{"/a/b/..", NULL, "/a", ""},
		{"/../..", NULL, "/", ""},
		{"/%20x/y%2Fz", NULL, "/%2520x/y%252Fz", ""},
		{"/a:b@c!$'()*,;=+", NULL, "/a%3Ab%40c%21%24%27%28%29%2A%2C%3B%3D%2B", ""},
		{"/caf\xc3\xa9", NULL, "/caf%C3%A9", ""},
		{"/", "k=%7e%2a%41+b&=x&&e=", "/", "=x&e=&k=~%2AA%2Bb"},
		{"/", "n=%E2%82%AC&m=a%20b&m=a", "/", "m=a&m=a%20b&n=%E2%82%AC"},
		{"/", "Action=Describe&Filter.1.Value.1=a%2Fb", "/",
		 "Action=Describe&Filter.1.Value.1=a%2Fb"},
	};
	struct aws_credentials c;
	size_t i;

	(void)state;
	example_creds(&c);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sigv4_input in = example_input();
		struct sigv4_output out;
		struct errbuf err;
		char want[512];

		in.path = cases[i].path;
		in.query = cases[i].query;
		if (sigv4_sign(&in, &c, &out, &err) != 0)
			fail_msg("case %zu: %s", i, err.msg);
		snprintf(want, sizeof(want), "GET\n%s\n%s\n", cases[i].want_path, cases[i].want_query);
		if (strncmp(out.canonical_request.data, want, strlen(want)) != 0)
			fail_msg("case %zu: got\n%s\nwant prefix\n%s", i, out.canonical_request.data, want);
		sigv4_output_free(&out);
	}
}

static void test_content_sha256(void **state)
{
	struct sigv4_header h[2];
	struct sigv4_input in = example_input();
	struct keyring k = {"AKIDEXAMPLE", EX_SECRET, NULL};
	struct aws_credentials c;
	struct signed_req r;
	struct errbuf msg;

	(void)state;
	example_creds(&c);
	in.body = "{}";
	in.body_len = 2;
	h[0] = (struct sigv4_header){"Host", "iam.amazonaws.com"};
	/* the header stands for the body's hash, as in botocore */
	h[1] = (struct sigv4_header){"X-Amz-Content-SHA256", " UNSIGNED-PAYLOAD "};
	in.headers = h;
	in.n_headers = 2;
	sign_into(&r, &in, &c);
	assert_string_equal(r.out.payload_hash, "UNSIGNED-PAYLOAD");
	assert_non_null(strstr(r.out.canonical_request.data, "\nUNSIGNED-PAYLOAD"));
	/* the verifier wants the body's real hash */
	assert_int_equal(verify(&r.in, EX_TIME, &k, &msg), SIGV4_MISMATCH);
	assert_non_null(strstr(msg.msg, "x-amz-content-sha256"));
	sigv4_output_free(&r.out);
	h[1].value = "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a";
	sign_into(&r, &in, &c);
	assert_int_equal(verify(&r.in, EX_TIME, &k, &msg), SIGV4_OK);
	sigv4_output_free(&r.out);
}

static void test_refusals(void **state)
{
	static const struct {
		const char *name, *value, *expect;
	} bad_headers[] = {
		{"X-Bad", "a\r\nX-Injected: 1", "line break"},
		{"X-Bad", "a\nb", "line break"},
		{"X-Bad", "a\001b", "control character"},
		{"X Bad", "a", "name"},
		{"X:Bad", "a", "name"},
		{"", "a", "empty name"},
	};
	struct aws_credentials c;
	struct sigv4_output out;
	struct errbuf err;
	struct sigv4_header h[2];
	struct sigv4_input in;
	size_t i;

	(void)state;
	example_creds(&c);
	for (i = 0; i < sizeof(bad_headers) / sizeof(bad_headers[0]); i++) {
		in = example_input();
		h[0] = (struct sigv4_header){"Host", "iam.amazonaws.com"};
		h[1] = (struct sigv4_header){bad_headers[i].name, bad_headers[i].value};
		in.headers = h;
		in.n_headers = 2;
		assert_int_equal(sigv4_sign(&in, &c, &out, &err), -1);
		if (!strstr(err.msg, bad_headers[i].expect))
			fail_msg("case %zu: \"%s\"", i, err.msg);
	}
	in = example_input();
	h[0] = (struct sigv4_header){"Content-Type", "text/plain"};
	in.headers = h;
	in.n_headers = 1;
	assert_int_equal(sigv4_sign(&in, &c, &out, &err), -1);
	assert_non_null(strstr(err.msg, "Host"));
	h[0] = (struct sigv4_header){"Host", " \t"};
	assert_int_equal(sigv4_sign(&in, &c, &out, &err), -1);
	assert_non_null(strstr(err.msg, "Host header is empty"));
	h[1] = (struct sigv4_header){"host", "a"};
	h[0] = (struct sigv4_header){"Host", "b"};
	in.n_headers = 2;
	assert_int_equal(sigv4_sign(&in, &c, &out, &err), -1);
	assert_non_null(strstr(err.msg, "Host headers"));

	in = example_input();
	in.region = "";
	assert_int_equal(sigv4_sign(&in, &c, &out, &err), -1);
	assert_non_null(strstr(err.msg, "region"));
	in = example_input();
	in.service = NULL;
	assert_int_equal(sigv4_sign(&in, &c, &out, &err), -1);
	assert_non_null(strstr(err.msg, "service"));
	in = example_input();
	in.region = "us/east";
	assert_int_equal(sigv4_sign(&in, &c, &out, &err), -1);
	in = example_input();
	in.query = "a=%zz";
	assert_int_equal(sigv4_sign(&in, &c, &out, &err), -1);
	assert_non_null(strstr(err.msg, "escape"));
	in = example_input();
	in.query = "a=%4";
	assert_int_equal(sigv4_sign(&in, &c, &out, &err), -1);
	in = example_input();
	in.path = "no-slash";
	assert_int_equal(sigv4_sign(&in, &c, &out, &err), -1);
	in = example_input();
	in.path = "/a b";
	assert_int_equal(sigv4_sign(&in, &c, &out, &err), -1);
	in = example_input();
	c.secret_access_key[0] = '\0';
	assert_int_equal(sigv4_sign(&in, &c, &out, &err), -1);
	assert_non_null(strstr(err.msg, "secret"));
	assert_null(strstr(err.msg, "EXAMPLEKEY"));
}

static void test_time_and_wipe(void **state)
{
	char text[17];
	int64_t t;
	struct aws_credentials c;
	static const struct aws_credentials zero;

	(void)state;
	assert_int_equal(sigv4_format_time(EX_TIME, text), 0);
	assert_string_equal(text, "20150830T123600Z");
	assert_int_equal(sigv4_parse_time("20150830T123600Z", &t), 0);
	assert_int_equal(t, EX_TIME);
	assert_int_equal(sigv4_parse_time("20240229T000000Z", &t), 0);
	assert_int_equal(sigv4_parse_time("20230229T000000Z", &t), -1);
	assert_int_equal(sigv4_parse_time("20150830T123600", &t), -1);
	assert_int_equal(sigv4_parse_time("2015-08-30T12:36:00Z", &t), -1);
	assert_int_equal(sigv4_parse_time("20151330T123600Z", &t), -1);
	assert_int_equal(sigv4_parse_time("20150830T246000Z", &t), -1);
	assert_int_equal(sigv4_format_time(-1, text), -1);
	example_creds(&c);
	c.expires_s = 5;
	aws_credentials_wipe(&c);
	assert_memory_equal(&c, &zero, sizeof(c));
	assert_int_equal(sigv4_verdict_http_status(SIGV4_MISMATCH), 403);
	assert_int_equal(sigv4_verdict_http_status(SIGV4_OK), 200);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_aws_example),
		cmocka_unit_test(test_verify_accepts_own_signature),
		cmocka_unit_test(test_verify_refuses_tampering),
		cmocka_unit_test(test_verify_malformed_authorization),
		cmocka_unit_test(test_session_token),
		cmocka_unit_test(test_canonical_headers),
		cmocka_unit_test(test_canonical_uri_and_query),
		cmocka_unit_test(test_content_sha256),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_time_and_wipe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
