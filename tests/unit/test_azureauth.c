/*
 * Tests for the Azure token sources against a loopback fake playing the
 * instance metadata service (Metadata: true required, JSON answers for the
 * resource asked) and the Entra token endpoint (client_credentials with a
 * secret or a client assertion), with an injected environment, a virtual
 * clock and a captured log: the order of sources, refresh 5 minutes before
 * expiry, the federated token file re-read, secrets never logged.
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

#include "providers/azure/azureauth.h"
#include "providers/provider.h"
#include "providers/cloudhttp/cloudhttp.h"
#include "providers/cloudhttp/oauth.h"
#include "test_azure_clock.h"
#include "test_cloud_server.h"

#define T0 1800000000LL
#define TENANT "72f988bf-86f1-41af-91ab-2d7cd011db47"
#define CLIENT "11111111-2222-4333-8444-555555555555"
#define IDENTITY "99999999-8888-4777-8666-555555555555"
#define SECRET "cl13nt-S3KR1T-value~with.specials"
#define ARM "https://management.azure.com/"

/* ---- the fake ---- */

struct fake {
	struct cs_server cs;
	int serial;
	int expires_in;
	int token_status;       /* token endpoint: answer this error instead */
	int imds_fail;          /* this many IMDS requests answer 503 */
	const char *imds_ctype; /* the IMDS answer's Content-Type ("" none) */
	const char *imds_resource; /* the resource the IMDS answer names */
	const char *imds_client;   /* the client_id it names */
	char last_form[4096];
	char last_assertion[1024];
	char reject[256];
};

static void form_get(const char *body, const char *name, char *out, size_t len)
{
	size_t nl = strlen(name), o = 0;
	const char *p = body;

	out[0] = '\0';
	while (p && *p) {
		if (strncmp(p, name, nl) == 0 && p[nl] == '=') {
			for (p += nl + 1; *p && *p != '&' && o + 1 < len;) {
				if (*p == '%' && p[1] && p[2]) {
					char hex[3] = { p[1], p[2], 0 };

					out[o++] = (char)strtol(hex, NULL, 16);
					p += 3;
				} else {
					out[o++] = *p++;
				}
			}
			out[o] = '\0';
			return;
		}
		p = strchr(p, '&');
		if (p)
			p++;
	}
}

static void handler(void *ud, size_t index, const struct cs_req *rq, struct cs_resp *rs)
{
	struct fake *f = ud;
	char v[1024], want[256];

	(void)index;
	if (!strncmp(rq->target, "/metadata/identity/oauth2/token?", 32)) {
		const char *md = cs_header(rq, "Metadata");

		if (!md || strcmp(md, "true") || strcmp(rq->method, "GET")) {
			rs->status = 400;
			snprintf(rs->headers, sizeof(rs->headers), "Content-Type: application/json\n");
			snprintf(rs->body, sizeof(rs->body), "{\"error\":\"invalid_request\","
				 "\"error_description\":\"Required metadata header not specified\"}");
			return;
		}
		if (f->imds_fail > 0) {
			f->imds_fail--;
			rs->status = 503;
			return;
		}
		f->serial++;
		if (f->imds_ctype[0])
			snprintf(rs->headers, sizeof(rs->headers), "Content-Type: %s\n", f->imds_ctype);
		snprintf(rs->body, sizeof(rs->body),
			 "{\"access_token\":\"eyJ.IMDS-S3KR1T-%d\",\"client_id\":\"%s\",\"expires_in\":\"%d\","
			 "\"expires_on\":\"%lld\",\"ext_expires_in\":\"%d\",\"not_before\":\"%lld\","
			 "\"resource\":\"%s\",\"token_type\":\"Bearer\"}",
			 f->serial, f->imds_client, f->expires_in, T0 + f->expires_in, f->expires_in, T0,
			 f->imds_resource);
		return;
	}
	snprintf(want, sizeof(want), "/%s/oauth2/v2.0/token", TENANT);
	if (!strcmp(rq->target, want)) {
		const char *ct = cs_header(rq, "Content-Type");

		snprintf(f->last_form, sizeof(f->last_form), "%s", rq->body);
		f->reject[0] = '\0';
		form_get(rq->body, "grant_type", v, sizeof(v));
		if (strcmp(rq->method, "POST") || strcmp(v, "client_credentials") || !ct ||
		    strncmp(ct, "application/x-www-form-urlencoded", 33))
			snprintf(f->reject, sizeof(f->reject), "bad grant %.200s", v);
		form_get(rq->body, "client_id", v, sizeof(v));
		if (!f->reject[0] && strcmp(v, CLIENT))
			snprintf(f->reject, sizeof(f->reject), "bad client_id %.200s", v);
		form_get(rq->body, "scope", v, sizeof(v));
		if (!f->reject[0] && strcmp(v, "https://management.azure.com/.default"))
			snprintf(f->reject, sizeof(f->reject), "bad scope %.200s", v);
		form_get(rq->body, "client_assertion", f->last_assertion, sizeof(f->last_assertion));
		if (f->last_assertion[0]) {
			form_get(rq->body, "client_assertion_type", v, sizeof(v));
			if (!f->reject[0] && strcmp(v, AZURE_CLIENT_ASSERTION_TYPE))
				snprintf(f->reject, sizeof(f->reject), "bad assertion type %.200s", v);
		} else {
			form_get(rq->body, "client_secret", v, sizeof(v));
			if (!f->reject[0] && strcmp(v, SECRET))
				snprintf(f->reject, sizeof(f->reject), "bad secret");
		}
		if (f->reject[0] || f->token_status) {
			rs->status = f->reject[0] ? 400 : f->token_status;
			/* Entra's shape: the description with its trace ids on lines of their own */
			snprintf(rs->body, sizeof(rs->body), "{\"error\":\"invalid_client\","
				 "\"error_description\":\"AADSTS7000215: Invalid client secret provided. "
				 "Ensure the secret being sent in the request is the client secret value, "
				 "not the client secret ID, for a secret added to app '%s'.\\r\\n"
				 "Trace ID: 0000aaaa-11bb-cccc-dd33-eeeeee333333\\r\\nCorrelation ID: "
				 "aaaa0000-bb11-2222-33cc-444444dddddd\\r\\nTimestamp: 2026-01-09 "
				 "02:02:12Z\",\"error_codes\":[7000215],\"trace_id\":"
				 "\"0000aaaa-11bb-cccc-dd33-eeeeee333333\"}", CLIENT);
			return;
		}
		f->serial++;
		snprintf(rs->headers, sizeof(rs->headers), "Content-Type: application/json; charset=utf-8\n");
		snprintf(rs->body, sizeof(rs->body),
			 "{\"token_type\":\"Bearer\",\"expires_in\":%d,\"ext_expires_in\":%d,"
			 "\"access_token\":\"eyJ.AAD-S3KR1T-%d\"}", f->expires_in, f->expires_in, f->serial);
		return;
	}
	rs->status = 404;
}

/* ---- the fixture ---- */

#define ENV_MAX 12

struct fx {
	struct step_clock *clk;
	char dir[256];
	char names[ENV_MAX][64];
	char values[ENV_MAX][1024];
	int nenv;
	char log[65536];
	int warns;
	struct logger logger;
	struct cloudhttp *http;
	struct azure_auth_opts o;
	struct fake fk;
	char url[64];        /* http://127.0.0.1:PORT */
};

static const char *fx_getenv(void *ud, const char *name)
{
	struct fx *f = ud;
	int i;

	for (i = 0; i < f->nenv; i++)
		if (strcmp(f->names[i], name) == 0)
			return f->values[i];
	return NULL;
}

static void fx_setenv(struct fx *f, const char *name, const char *value)
{
	assert_true(f->nenv < ENV_MAX);
	snprintf(f->names[f->nenv], sizeof(f->names[0]), "%s", name);
	snprintf(f->values[f->nenv], sizeof(f->values[0]), "%s", value);
	f->nenv++;
}

static void capture(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct fx *f = ctx;
	size_t n = strlen(f->log);

	(void)wall;
	if (level == LOG_WARN)
		f->warns++;
	snprintf(f->log + n, sizeof(f->log) - n, "%s\n", msg);
}

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct cloudhttp_opts ho;
	struct errbuf e = { "" };

	assert_non_null(f);
	f->clk = sc_new(T0);
	snprintf(f->dir, sizeof(f->dir), "/tmp/luascale-azureauth-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	f->logger = (struct logger){ capture, f, LOG_DEBUG, NULL };
	memset(&ho, 0, sizeof(ho));
	ho.clock = &f->clk->base;
	ho.log = &f->logger;
	ho.connect_timeout_ms = 1000;
	ho.request_timeout_ms = 5000;
	ho.max_attempts = 3;
	ho.verbose = true; /* headers logged at debug: redaction is checked too */
	f->http = cloudhttp_new(&ho, &e);
	assert_non_null(f->http);
	f->fk.expires_in = 3600;
	f->fk.imds_ctype = "application/json; charset=utf-8";
	f->fk.imds_resource = ARM;
	f->fk.imds_client = IDENTITY;
	assert_int_equal(cs_start(&f->fk.cs, handler, &f->fk, NULL, NULL), 0);
	snprintf(f->url, sizeof(f->url), "%s", f->fk.cs.url);
	f->o.env.get = fx_getenv;
	f->o.env.ud = f;
	f->o.http = f->http;
	f->o.clock = &f->clk->base;
	f->o.log = &f->logger;
	f->o.imds_timeout_ms = 1000;
	/* the real services must never be reached by accident */
	f->o.default_authority = "http://127.0.0.1:9/";
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	char cmd[300];

	if (getenv("AZUREAUTH_TEST_LOG"))
		fputs(f->log, stderr);
	/* no token, secret or assertion in any log line */
	assert_null(strstr(f->log, "S3KR1T"));
	cs_stop(&f->fk.cs);
	cloudhttp_free(f->http);
	sc_free(f->clk);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", f->dir);
	free(f);
	return 0;
}

static void write_file(struct fx *f, const char *name, const char *text, char *path, size_t len)
{
	FILE *fp;

	snprintf(path, len, "%s/%s", f->dir, name);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static struct azure_auth *new_auth(struct fx *f)
{
	struct errbuf e = { "" };
	struct azure_auth *a = azure_auth_new(&f->o, &e);

	if (!a)
		fail_msg("azure_auth_new: %s", e.msg);
	return a;
}

static void expect_token(struct azure_auth *a, const char *want, int64_t want_exp)
{
	struct errbuf e = { "" };
	char tok[AZURE_AUTH_TOKEN_MAX];
	int64_t exp = 0;

	if (oauth_source_token(azure_auth_bearer(a), tok, sizeof(tok), &exp, &e) < 0)
		fail_msg("oauth_source_token: %s", e.msg);
	assert_string_equal(tok, want);
	if (want_exp)
		assert_int_equal(exp, want_exp);
}

/* ---- managed identity ---- */

static void test_imds_token(void **state)
{
	struct fx *f = *state;
	struct azure_auth *a;
	const struct cs_req *rq;

	fx_setenv(f, "AZURE_POD_IDENTITY_AUTHORITY_HOST", f->url);
	f->fk.imds_client = "";
	a = new_auth(f);
	assert_int_equal(azure_auth_kind(a), AZURE_AUTH_MANAGED_IDENTITY);
	assert_string_equal(azure_auth_source(a), "managed-identity");
	assert_int_equal(cs_count(&f->fk.cs), 0); /* nothing contacted yet */
	expect_token(a, "eyJ.IMDS-S3KR1T-1", T0 + 3600);
	rq = &f->fk.cs.reqs[0];
	assert_string_equal(rq->method, "GET");
	assert_string_equal(rq->target, "/metadata/identity/oauth2/token?api-version=2018-02-01"
			    "&resource=https%3A%2F%2Fmanagement.azure.com%2F");
	assert_string_equal(cs_header(rq, "Metadata"), "true");
	assert_int_equal(cs_header_count(rq, "Metadata"), 1);
	/* cached: a second call contacts nothing */
	expect_token(a, "eyJ.IMDS-S3KR1T-1", 0);
	assert_int_equal(cs_count(&f->fk.cs), 1);
	assert_non_null(strstr(f->log, "managed-identity"));
	assert_non_null(strstr(f->log, "expires 2027-01-15T09:00:00Z"));
	azure_auth_free(a);
}

static void test_imds_user_assigned_identity(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { "" };
	struct azure_auth *a;
	char tok[AZURE_AUTH_TOKEN_MAX];

	/* CA's name beats azure-identity's AZURE_CLIENT_ID for the identity */
	fx_setenv(f, "AZURE_POD_IDENTITY_AUTHORITY_HOST", f->url);
	fx_setenv(f, "ARM_USE_MANAGED_IDENTITY_EXTENSION", "true");
	fx_setenv(f, "ARM_USER_ASSIGNED_IDENTITY_ID", IDENTITY);
	fx_setenv(f, "AZURE_CLIENT_ID", CLIENT);
	fx_setenv(f, "AZURE_TENANT_ID", TENANT);
	fx_setenv(f, "AZURE_CLIENT_SECRET", SECRET);
	a = new_auth(f);
	assert_int_equal(azure_auth_kind(a), AZURE_AUTH_MANAGED_IDENTITY);
	expect_token(a, "eyJ.IMDS-S3KR1T-1", T0 + 3600);
	assert_non_null(strstr(f->fk.cs.reqs[0].target, "&client_id=" IDENTITY));
	azure_auth_free(a);
	/* an answer for another identity is refused */
	f->fk.imds_client = CLIENT;
	a = new_auth(f);
	assert_int_equal(oauth_source_token(azure_auth_bearer(a), tok, sizeof(tok), NULL, &e), -1);
	assert_non_null(strstr(e.msg, "not " IDENTITY ": refused"));
	azure_auth_free(a);
}

static void test_imds_answer_checked(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { "" };
	struct azure_auth *a;
	char tok[AZURE_AUTH_TOKEN_MAX];

	f->o.imds = f->url;
	/* the config's endpoint beats the environment's */
	fx_setenv(f, "AZURE_POD_IDENTITY_AUTHORITY_HOST", "http://127.0.0.1:9");
	f->fk.imds_client = "";
	f->fk.imds_ctype = "text/html";
	a = new_auth(f);
	assert_int_equal(oauth_source_token(azure_auth_bearer(a), tok, sizeof(tok), NULL, &e), -1);
	assert_non_null(strstr(e.msg, "not the metadata service, refused"));
	azure_auth_free(a);
	f->fk.imds_ctype = "application/json";
	f->fk.imds_resource = "https://vault.azure.net";
	a = new_auth(f);
	assert_int_equal(oauth_source_token(azure_auth_bearer(a), tok, sizeof(tok), NULL, &e), -1);
	assert_non_null(strstr(e.msg, "the token is for https://vault.azure.net, not " ARM ": refused"));
	azure_auth_free(a);
	/* a trailing slash is the same audience; 503s are retried */
	f->fk.imds_resource = "https://management.azure.com";
	f->fk.imds_fail = 2;
	a = new_auth(f);
	expect_token(a, "eyJ.IMDS-S3KR1T-3", T0 + 3600);
	assert_int_equal(cs_count(&f->fk.cs), 5);
	azure_auth_free(a);
}

static void test_imds_header_is_required(void **state)
{
	struct fx *f = *state;
	struct cloudhttp_request rq;
	struct cloudhttp_response r = { 0 };
	struct errbuf e = { "" };
	char url[256];

	/* the fake refuses a request without the header, as IMDS does: the
	 * header test above would fail if it were missing */
	snprintf(url, sizeof(url), "%s/metadata/identity/oauth2/token?api-version=2018-02-01&resource=x", f->url);
	memset(&rq, 0, sizeof(rq));
	rq.method = "GET";
	rq.url = url;
	assert_int_equal(cloudhttp_send(f->http, &rq, &r, &e), 0);
	assert_int_equal(r.status, 400);
	assert_non_null(strstr(r.body, "Required metadata header not specified"));
	cloudhttp_response_free(&r);
}

/* ---- client secret ---- */

static void test_client_secret(void **state)
{
	struct fx *f = *state;
	struct azure_auth *a;
	char v[256], authority[80];

	snprintf(authority, sizeof(authority), "%s/", f->url);
	fx_setenv(f, "AZURE_AUTHORITY_HOST", authority);
	fx_setenv(f, "ARM_TENANT_ID", "00000000-0000-0000-0000-000000000000");
	fx_setenv(f, "AZURE_TENANT_ID", TENANT); /* azure-identity's names win */
	fx_setenv(f, "ARM_CLIENT_ID", "00000000-0000-0000-0000-000000000001");
	fx_setenv(f, "AZURE_CLIENT_ID", CLIENT);
	fx_setenv(f, "ARM_CLIENT_SECRET", SECRET);
	a = new_auth(f);
	assert_int_equal(azure_auth_kind(a), AZURE_AUTH_CLIENT_SECRET);
	expect_token(a, "eyJ.AAD-S3KR1T-1", T0 + 3600);
	assert_string_equal(f->fk.reject, "");
	assert_string_equal(f->fk.cs.reqs[0].method, "POST");
	form_get(f->fk.last_form, "scope", v, sizeof(v));
	assert_string_equal(v, "https://management.azure.com/.default");
	assert_string_equal(cs_header(&f->fk.cs.reqs[0], "Accept"), "application/json");
	/* a refused secret: the endpoint's words, never the secret */
	oauth_source_invalidate(azure_auth_bearer(a));
	f->fk.token_status = 401;
	{
		struct errbuf e = { "" };
		char tok[AZURE_AUTH_TOKEN_MAX];

		assert_int_equal(oauth_source_token(azure_auth_bearer(a), tok, sizeof(tok), NULL, &e), -1);
		/* Entra's code first (the errbuf holds the head of it) */
		assert_non_null(strstr(e.msg, "azure access token: AADSTS7000215: "));
		assert_null(strstr(e.msg, "S3KR1T"));
	}
	{
		/* whole: the code once, the description to its timestamp, the cause,
		 * where; one line, no secret */
		char full[PROVIDER_MESSAGE_MAX];

		oauth_source_last_error(azure_auth_bearer(a), full, sizeof(full));
		assert_int_equal(strncmp(full, "AADSTS7000215: Invalid client secret provided. Ensure "
				 "the secret being sent", 67), 0);
		assert_null(strstr(full + 1, "AADSTS7000215"));
		assert_non_null(strstr(full, "Trace ID: 0000aaaa-11bb-cccc-dd33-eeeeee333333 "
				       "Correlation ID: aaaa0000-bb11-2222-33cc-444444dddddd "
				       "Timestamp: 2026-01-09 02:02:12Z (likely cause: wrong key or secret"));
		assert_non_null(strstr(full, "); client-secret: token endpoint http"));
		assert_non_null(strstr(full, "/oauth2/v2.0/token: HTTP 401 invalid_client"));
		assert_null(strchr(full, '\n'));
		assert_null(strstr(full, "S3KR1T"));
	}
	azure_auth_free(a);
}

static void test_client_secret_file_and_prepare(void **state)
{
	struct fx *f = *state;
	struct cloudhttp_headers h = CLOUDHTTP_HEADERS_INIT;
	struct errbuf e = { "" };
	struct azure_auth *a;
	char path[512], authority[80];

	write_file(f, "secret", SECRET "\n", path, sizeof(path));
	snprintf(authority, sizeof(authority), "%s", f->url);
	f->o.authority = authority; /* no trailing slash: joined all the same */
	f->o.tenant_id = TENANT;
	f->o.client_id = CLIENT;
	f->o.client_secret_file = path;
	f->o.mode = "client_secret";
	a = new_auth(f);
	assert_int_equal(oauth_source_prepare(azure_auth_bearer(a), &h, &e), 0);
	assert_string_equal(cloudhttp_headers_get(&h, "Authorization"), "Bearer eyJ.AAD-S3KR1T-1");
	assert_string_equal(f->fk.reject, "");
	cloudhttp_headers_free(&h);
	azure_auth_free(a);
}

/* ---- workload identity ---- */

static void test_workload_identity_rereads_the_file(void **state)
{
	struct fx *f = *state;
	struct azure_auth *a;
	char path[512], authority[80];

	write_file(f, "token", "eyJhbGciOiJSUzI1NiJ9.ONE-S3KR1T.sig\n", path, sizeof(path));
	snprintf(authority, sizeof(authority), "%s/", f->url);
	fx_setenv(f, "AZURE_AUTHORITY_HOST", authority);
	fx_setenv(f, "AZURE_TENANT_ID", TENANT);
	fx_setenv(f, "AZURE_CLIENT_ID", CLIENT);
	fx_setenv(f, "AZURE_FEDERATED_TOKEN_FILE", path);
	a = new_auth(f);
	assert_int_equal(azure_auth_kind(a), AZURE_AUTH_WORKLOAD_IDENTITY);
	expect_token(a, "eyJ.AAD-S3KR1T-1", T0 + 3600);
	assert_string_equal(f->fk.reject, "");
	assert_string_equal(f->fk.last_assertion, "eyJhbGciOiJSUzI1NiJ9.ONE-S3KR1T.sig");
	/* the kubelet rotates the file */
	write_file(f, "token", "eyJhbGciOiJSUzI1NiJ9.TWO-S3KR1T.sig", path, sizeof(path));
	/* 5 min + 1 s before expiry: still the cached token */
	sc_set_wall(f->clk, T0, T0 + 3600 - 301);
	expect_token(a, "eyJ.AAD-S3KR1T-1", T0 + 3600);
	assert_int_equal(cs_count(&f->fk.cs), 1);
	/* inside the 5 minutes: refreshed with the new assertion */
	sc_set_wall(f->clk, T0, T0 + 3600 - 299);
	expect_token(a, "eyJ.AAD-S3KR1T-2", T0 + 3600 - 299 + 3600);
	assert_string_equal(f->fk.last_assertion, "eyJhbGciOiJSUzI1NiJ9.TWO-S3KR1T.sig");
	assert_int_equal(cs_count(&f->fk.cs), 2);
	azure_auth_free(a);
}

static void test_failed_refresh_keeps_the_valid_token(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { "" };
	struct azure_auth *a;
	char path[512], authority[80], tok[AZURE_AUTH_TOKEN_MAX];

	write_file(f, "token", "eyJ.THREE-S3KR1T.sig", path, sizeof(path));
	snprintf(authority, sizeof(authority), "%s/", f->url);
	f->o.authority = authority;
	f->o.tenant_id = TENANT;
	f->o.client_id = CLIENT;
	f->o.federated_token_file = path;
	a = new_auth(f);
	expect_token(a, "eyJ.AAD-S3KR1T-1", T0 + 3600);
	f->fk.token_status = 400;
	sc_set_wall(f->clk, T0, T0 + 3600 - 60);
	expect_token(a, "eyJ.AAD-S3KR1T-1", T0 + 3600);
	assert_true(f->warns >= 1);
	/* expired: the endpoint's error, named */
	sc_set_wall(f->clk, T0, T0 + 3600);
	assert_int_equal(oauth_source_token(azure_auth_bearer(a), tok, sizeof(tok), NULL, &e), -1);
	assert_non_null(strstr(e.msg, "azure access token: AADSTS7000215: "));
	{
		char full[PROVIDER_MESSAGE_MAX];

		oauth_source_last_error(azure_auth_bearer(a), full, sizeof(full));
		assert_non_null(strstr(full, "; workload-identity: token endpoint"));
		assert_non_null(strstr(full, "HTTP 400 invalid_client"));
	}
	/* an empty token file is named, not sent */
	write_file(f, "token", "\n", path, sizeof(path));
	f->fk.token_status = 0;
	sc_set_wall(f->clk, T0, T0 + 3600 + 60);
	assert_int_equal(oauth_source_token(azure_auth_bearer(a), tok, sizeof(tok), NULL, &e), -1);
	assert_non_null(strstr(e.msg, "the federated token file"));
	assert_non_null(strstr(e.msg, "is empty"));
	azure_auth_free(a);
}

/* ---- choices and endpoints ---- */

static void test_settings_refused(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { "" };
	struct azure_auth *a;

	f->o.mode = "client_secret";
	f->o.tenant_id = TENANT;
	a = azure_auth_new(&f->o, &e);
	assert_null(a);
	assert_non_null(strstr(e.msg, "needs a client id: set provider.azure.client_id, AZURE_CLIENT_ID or ARM_CLIENT_ID"));
	f->o.client_id = CLIENT;
	a = azure_auth_new(&f->o, &e);
	assert_null(a);
	assert_non_null(strstr(e.msg, "needs a secret: set AZURE_CLIENT_SECRET"));
	f->o.mode = "workload_identity";
	a = azure_auth_new(&f->o, &e);
	assert_null(a);
	assert_non_null(strstr(e.msg, "AZURE_FEDERATED_TOKEN_FILE"));
	/* an authority in plain http off loopback is refused */
	f->o.mode = NULL;
	fx_setenv(f, "AZURE_CLIENT_SECRET", SECRET);
	f->o.authority = "http://login.example.com/";
	a = azure_auth_new(&f->o, &e);
	assert_null(a);
	assert_non_null(strstr(e.msg, "must be https"));
	assert_null(strstr(e.msg, "S3KR1T"));
	/* the metadata service may be plain http at its own address, not elsewhere */
	f->o.mode = "managed_identity";
	f->o.imds = "http://169.254.169.254";
	a = azure_auth_new(&f->o, &e);
	assert_non_null(a);
	azure_auth_free(a);
	f->o.imds = "http://10.0.0.1:2579";
	a = azure_auth_new(&f->o, &e);
	assert_null(a);
	assert_non_null(strstr(e.msg, "provider.azure.endpoints.imds"));
	assert_int_equal(azure_check_endpoint("https://user:pw@x/", "t", false, &e), -1);
	assert_int_equal(azure_check_endpoint("https://login.microsoftonline.us/", "t", false, &e), 0);
	assert_int_equal(azure_check_endpoint("http://[::1]:8080/", "t", false, &e), 0);
	assert_int_equal(azure_check_endpoint("https://x/?a=b", "t", false, &e), -1);
	assert_int_equal(cs_count(&f->fk.cs), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
		T(test_imds_token),
		T(test_imds_user_assigned_identity),
		T(test_imds_answer_checked),
		T(test_imds_header_is_required),
		T(test_client_secret),
		T(test_client_secret_file_and_prepare),
		T(test_workload_identity_rereads_the_file),
		T(test_failed_refresh_keeps_the_valid_token),
		T(test_settings_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
