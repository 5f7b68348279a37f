/*
 * Tests for the GCE token sources against a loopback fake playing the
 * metadata server (Metadata-Flavor required both ways) and the OAuth token
 * endpoint (grant type checked, the assertion's RS256 signature verified
 * with the test key's public key), with an injected environment, a virtual
 * clock and a captured log: refresh windows, stale tokens, bad keys.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <cjson/cJSON.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "providers/cloudhttp/cloudhttp.h"
#include "providers/cloudhttp/oauth.h"
#include "providers/gce/gceauth.h"
#include "providers/provider.h"
#include "test_cloud_server.h"

#define T0 1800000000LL
#define EMAIL "autoscaler@luascale-test.iam.gserviceaccount.com"
#define KID "0123456789abcdef0123456789abcdef01234567"
#define GRANT "urn:ietf:params:oauth:grant-type:jwt-bearer"

static EVP_PKEY *test_key;   /* the key the fake knows */
static EVP_PKEY *other_key;  /* a key it does not */
static char test_pem[8192], other_pem[8192];

/* ---- the fake ---- */

struct fake {
	struct cs_server cs;
	struct clock *clk;
	int no_flavor;        /* answers lack Metadata-Flavor */
	int token_status;     /* token endpoint: answer this error instead */
	int hold;             /* hold token answers until cs_release() */
	int md_fail;          /* this many metadata token requests answer 503 */
	char md_body[256];    /* the metadata token answer instead of a good one */
	int serial;
	int expires_in;
	char want_aud[256];
	char want_scope[256];
	char reject[256];     /* why the token endpoint refused the last assertion */
	char token_body[1024]; /* with token_status: the error answer instead of the default */
	char last_assertion[4096];
};

static size_t b64url_decode(const char *s, size_t n, unsigned char *out, size_t cap)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	unsigned acc = 0;
	int bits = 0;
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		const char *p = strchr(tab, s[i]);

		if (!p || !s[i] || o >= cap)
			return (size_t)-1;
		acc = (acc << 6) | (unsigned)(p - tab);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)(acc >> bits);
		}
	}
	return o;
}

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

/* Verifies an assertion as Google's token endpoint would. "" when good. */
static void verify_assertion(struct fake *f, const char *jwt, char *why, size_t wlen)
{
	const char *d1 = strchr(jwt, '.'), *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
	unsigned char hdr[512], cl[2048], sig[1024];
	size_t hn, cn, sn;
	cJSON *h = NULL, *c = NULL;
	EVP_MD_CTX *md = NULL;
	int64_t now = clock_wall(f->clk);

	why[0] = '\0';
	if (!d1 || !d2 || strchr(d2 + 1, '.') || strchr(jwt, '=')) {
		snprintf(why, wlen, "not three unpadded segments");
		return;
	}
	hn = b64url_decode(jwt, (size_t)(d1 - jwt), hdr, sizeof(hdr) - 1);
	cn = b64url_decode(d1 + 1, (size_t)(d2 - d1 - 1), cl, sizeof(cl) - 1);
	sn = b64url_decode(d2 + 1, strlen(d2 + 1), sig, sizeof(sig));
	if (hn == (size_t)-1 || cn == (size_t)-1 || sn == (size_t)-1) {
		snprintf(why, wlen, "not base64url");
		return;
	}
	md = EVP_MD_CTX_new();
	if (!md || EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, test_key) != 1 ||
	    EVP_DigestVerify(md, sig, sn, (const unsigned char *)jwt, (size_t)(d2 - jwt)) != 1) {
		snprintf(why, wlen, "Invalid JWT Signature.");
		goto out;
	}
	hdr[hn] = cl[cn] = '\0';
	h = cJSON_Parse((char *)hdr);
	c = cJSON_Parse((char *)cl);
	if (!h || !c) {
		snprintf(why, wlen, "not JSON");
		goto out;
	}
#define STR(j, k) (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, k)) ? \
		   cJSON_GetObjectItemCaseSensitive(j, k)->valuestring : "")
#define NUM(j, k) (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, k)) ? \
		   (int64_t)cJSON_GetObjectItemCaseSensitive(j, k)->valuedouble : -1)
	if (strcmp(STR(h, "alg"), "RS256") || strcmp(STR(h, "typ"), "JWT") ||
	    strcmp(STR(h, "kid"), KID) || cJSON_GetArraySize(h) != 3)
		snprintf(why, wlen, "bad header %.200s", hdr);
	else if (strcmp(STR(c, "iss"), EMAIL) || strcmp(STR(c, "aud"), f->want_aud) ||
		 strcmp(STR(c, "scope"), f->want_scope) || NUM(c, "iat") != now ||
		 NUM(c, "exp") != now + 3600 || cJSON_GetArraySize(c) != 5)
		snprintf(why, wlen, "bad claims %.200s", cl);
out:
	cJSON_Delete(h);
	cJSON_Delete(c);
	EVP_MD_CTX_free(md);
}

static void handler(void *ud, size_t index, const struct cs_req *rq, struct cs_resp *rs)
{
	struct fake *f = ud;
	const char *flavor = cs_header(rq, "Metadata-Flavor");
	char v[4096];

	(void)index;
	if (strncmp(rq->target, "/computeMetadata/", 17) == 0) {
		if (!f->no_flavor)
			snprintf(rs->headers, sizeof(rs->headers), "Metadata-Flavor: Google\n");
		if (!flavor || strcmp(flavor, "Google") != 0 || strcmp(rq->method, "GET") != 0) {
			rs->status = 403;
			snprintf(rs->body, sizeof(rs->body), "Missing Metadata-Flavor:Google header.");
			return;
		}
		if (strcmp(rq->target, "/computeMetadata/v1/instance/service-accounts/default/token") == 0) {
			if (f->md_fail > 0) {
				f->md_fail--;
				rs->status = 503;
				return;
			}
			if (f->md_body[0]) {
				snprintf(rs->body, sizeof(rs->body), "%s", f->md_body);
				return;
			}
			f->serial++;
			snprintf(rs->body, sizeof(rs->body),
				 "{\"access_token\":\"ya29.MDS3KR1T-%d\",\"expires_in\":%d,"
				 "\"token_type\":\"Bearer\"}", f->serial, f->expires_in);
		} else if (strcmp(rq->target, "/computeMetadata/v1/instance/service-accounts/default/email") == 0) {
			snprintf(rs->body, sizeof(rs->body), "node-sa@luascale-test.iam.gserviceaccount.com");
		} else if (strcmp(rq->target, "/computeMetadata/v1/project/project-id") == 0) {
			snprintf(rs->body, sizeof(rs->body), "luascale-proj");
		} else if (strcmp(rq->target, "/computeMetadata/v1/instance/zone") == 0) {
			snprintf(rs->body, sizeof(rs->body), "projects/123456789012/zones/us-central1-a");
		} else {
			rs->status = 404;
		}
		return;
	}
	if (strcmp(rq->target, "/token") == 0) {
		const char *ct = cs_header(rq, "Content-Type");

		form_get(rq->body, "grant_type", v, sizeof(v));
		if (strcmp(rq->method, "POST") != 0 || strcmp(v, GRANT) != 0 || !ct ||
		    strncmp(ct, "application/x-www-form-urlencoded", 33) != 0) {
			rs->status = 400;
			snprintf(rs->body, sizeof(rs->body), "{\"error\":\"unsupported_grant_type\","
				 "\"error_description\":\"Invalid grant_type: %.100s\"}", v);
			return;
		}
		form_get(rq->body, "assertion", f->last_assertion, sizeof(f->last_assertion));
		verify_assertion(f, f->last_assertion, f->reject, sizeof(f->reject));
		if (f->reject[0]) {
			rs->status = 400;
			snprintf(rs->body, sizeof(rs->body), "{\"error\":\"invalid_grant\","
				 "\"error_description\":\"%s\"}", strncmp(f->reject, "bad", 3) == 0 ?
				 "bad claims" : f->reject);
			return;
		}
		if (f->token_status) {
			rs->status = f->token_status;
			snprintf(rs->body, sizeof(rs->body), "%s", f->token_body[0] ? f->token_body :
				 "{\"error\":\"invalid_grant\","
				 "\"error_description\":\"Invalid grant: account not found\"}");
			return;
		}
		f->serial++;
		rs->hold = f->hold;
		snprintf(rs->body, sizeof(rs->body),
			 "{\"access_token\":\"ya29.SAS3KR1T-%d\",\"expires_in\":%d,"
			 "\"token_type\":\"Bearer\"}", f->serial, f->expires_in);
		return;
	}
	rs->status = 404;
}

/* ---- the fixture ---- */

#define ENV_MAX 8

struct fx {
	struct clock *clk;
	char dir[256];
	char names[ENV_MAX][64];
	char values[ENV_MAX][1024];
	int nenv;
	char log[65536];
	int warns;
	struct logger logger;
	struct cloudhttp *http;
	struct gce_auth_opts o;
	struct fake fk;
	char host[64];       /* 127.0.0.1:PORT */
	char token_url[128];
};

/* A cloudhttp prepare hook that sets the bearer of 'ctx' (an oauth_source). */
static int bearer_prepare(void *ctx, const struct cloudhttp_request *req, struct cloudhttp_headers *extra,
			  struct errbuf *err)
{
	(void)req;
	return oauth_source_prepare(ctx, extra, err);
}

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
	f->clk = vclock_new(T0);
	snprintf(f->dir, sizeof(f->dir), "/tmp/luascale-gceauth-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	f->logger = (struct logger){ capture, f, LOG_DEBUG, NULL };
	memset(&ho, 0, sizeof(ho));
	ho.clock = f->clk;
	ho.log = &f->logger;
	ho.connect_timeout_ms = 1000;
	ho.request_timeout_ms = 5000;
	ho.max_attempts = 2;
	ho.verbose = true; /* headers logged at debug: redaction is checked too */
	f->http = cloudhttp_new(&ho, &e);
	assert_non_null(f->http);
	f->fk.clk = f->clk;
	f->fk.expires_in = 3600;
	assert_int_equal(cs_start(&f->fk.cs, handler, &f->fk, NULL, NULL), 0);
	snprintf(f->host, sizeof(f->host), "127.0.0.1:%d", f->fk.cs.port);
	snprintf(f->token_url, sizeof(f->token_url), "%s/token", f->fk.cs.url);
	snprintf(f->fk.want_aud, sizeof(f->fk.want_aud), "%s", f->token_url);
	snprintf(f->fk.want_scope, sizeof(f->fk.want_scope), "%s", GCE_AUTH_DEFAULT_SCOPE);
	f->o.env.get = fx_getenv;
	f->o.env.ud = f;
	f->o.http = f->http;
	f->o.clock = f->clk;
	f->o.log = &f->logger;
	f->o.metadata_timeout_ms = 1000;
	/* the real metadata server must never be reached by accident */
	f->o.metadata_host = "127.0.0.1:9";
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	char cmd[300];

	if (getenv("GCEAUTH_TEST_LOG")) /* a debugging aid: the captured log */
		fputs(f->log, stderr);
	/* no secret in any log line: tokens, assertions, keys */
	assert_null(strstr(f->log, "S3KR1T"));
	assert_null(strstr(f->log, "PRIVATE KEY"));
	if (f->fk.last_assertion[0]) {
		const char *claims = strchr(f->fk.last_assertion, '.');

		assert_non_null(claims);
		assert_null(strstr(f->log, claims + 1 + 20));
		assert_null(strstr(f->log, strrchr(f->fk.last_assertion, '.') + 1));
	}
	cs_stop(&f->fk.cs);
	cloudhttp_free(f->http);
	vclock_free(f->clk);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", f->dir);
	free(f);
	return 0;
}

/* Writes a service-account key file with 'pem' and 'token_uri' (NULL: none)
 * and 'type'; returns its path in 'path'. */
static void write_key(struct fx *f, const char *name, const char *type, const char *pem,
		      const char *token_uri, char *path, size_t len)
{
	cJSON *j = cJSON_CreateObject();
	char *text;
	FILE *fp;

	cJSON_AddStringToObject(j, "type", type);
	cJSON_AddStringToObject(j, "project_id", "luascale-test");
	cJSON_AddStringToObject(j, "private_key_id", KID);
	if (pem)
		cJSON_AddStringToObject(j, "private_key", pem);
	cJSON_AddStringToObject(j, "client_email", EMAIL);
	cJSON_AddStringToObject(j, "client_id", "100000000000000000001");
	if (token_uri)
		cJSON_AddStringToObject(j, "token_uri", token_uri);
	text = cJSON_Print(j);
	snprintf(path, len, "%s/%s", f->dir, name);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
	free(text);
	cJSON_Delete(j);
}

static void advance_to(struct fx *f, int64_t wall)
{
	vclock_set(f->clk, (wall - T0) * CLOCK_NS_PER_S);
	assert_int_equal(clock_wall(f->clk), wall);
}

static struct gce_auth *new_key_auth(struct fx *f, char *path, size_t len)
{
	struct errbuf e = { "" };
	struct gce_auth *a;

	write_key(f, "sa.json", "service_account", test_pem, f->token_url, path, len);
	f->o.credentials_file = path;
	a = gce_auth_new(&f->o, &e);
	if (!a)
		fail_msg("gce_auth_new: %s", e.msg);
	return a;
}

/* ---- metadata server ---- */

static void test_metadata_token(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { "" };
	struct gce_auth *a;
	char tok[GCE_AUTH_TOKEN_MAX], acct[320];
	int64_t exp = 0;

	f->o.metadata_host = NULL;
	fx_setenv(f, "GCE_METADATA_HOST", f->host);
	a = gce_auth_new(&f->o, &e);
	assert_non_null(a);
	assert_string_equal(gce_auth_source(a), "metadata-server");
	gce_auth_account(a, acct, sizeof(acct));
	assert_string_equal(acct, "default");
	assert_int_equal(cs_count(&f->fk.cs), 0); /* nothing contacted yet */
	if (oauth_source_token(gce_auth_bearer(a), tok, sizeof(tok), &exp, &e) < 0)
		fail_msg("%s", e.msg);
	assert_string_equal(tok, "ya29.MDS3KR1T-1");
	assert_int_equal(exp, T0 + 3600);
	assert_string_equal(f->fk.cs.reqs[0].target,
			    "/computeMetadata/v1/instance/service-accounts/default/token");
	assert_string_equal(cs_header(&f->fk.cs.reqs[0], "Metadata-Flavor"), "Google");
	assert_int_equal(cs_header_count(&f->fk.cs.reqs[0], "Metadata-Flavor"), 1);
	gce_auth_account(a, acct, sizeof(acct));
	assert_string_equal(acct, "node-sa@luascale-test.iam.gserviceaccount.com");
	/* cached: a second call contacts nothing */
	assert_int_equal(oauth_source_token(gce_auth_bearer(a), tok, sizeof(tok), NULL, &e), 0);
	assert_int_equal(cs_count(&f->fk.cs), 2);
	assert_non_null(strstr(f->log, "metadata-server"));
	assert_non_null(strstr(f->log, "node-sa@luascale-test.iam.gserviceaccount.com"));
	assert_non_null(strstr(f->log, "expires 2027-01-15T09:00:00Z"));
	/* too small a buffer is an error, not a truncated token */
	assert_int_equal(oauth_source_token(gce_auth_bearer(a), tok, 8, NULL, &e), -1);
	gce_auth_free(a);
}

static void test_metadata_reply_without_flavor_refused(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { "" };
	struct gce_auth *a;
	char tok[GCE_AUTH_TOKEN_MAX], p[64], z[64];

	f->fk.no_flavor = 1;
	f->o.metadata_host = f->host;
	a = gce_auth_new(&f->o, &e);
	assert_non_null(a);
	assert_int_equal(oauth_source_token(gce_auth_bearer(a), tok, sizeof(tok), NULL, &e), -1);
	assert_non_null(strstr(e.msg, "Metadata-Flavor: Google"));
	assert_non_null(strstr(e.msg, "not the metadata server"));
	assert_int_equal(gce_metadata_project_zone(&f->o, p, sizeof(p), z, sizeof(z), &e), -1);
	assert_non_null(strstr(e.msg, "not the metadata server"));
	gce_auth_free(a);
}

static void test_metadata_host_option_beats_env(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { "" };
	struct gce_auth *a;
	char tok[GCE_AUTH_TOKEN_MAX];

	fx_setenv(f, "GCE_METADATA_HOST", "127.0.0.1:9");
	f->o.metadata_host = f->host;
	a = gce_auth_new(&f->o, &e);
	assert_non_null(a);
	if (oauth_source_token(gce_auth_bearer(a), tok, sizeof(tok), NULL, &e) < 0)
		fail_msg("%s", e.msg);
	gce_auth_free(a);
	/* a host with a scheme or a path is refused */
	f->o.metadata_host = "http://169.254.169.254/";
	assert_null(gce_auth_new(&f->o, &e));
	assert_non_null(strstr(e.msg, "host[:port]"));
}

static void test_metadata_unreachable_fails(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { "" };
	struct gce_auth *a = gce_auth_new(&f->o, &e); /* 127.0.0.1:9: closed */
	char tok[GCE_AUTH_TOKEN_MAX];

	assert_non_null(a);
	assert_int_equal(oauth_source_token(gce_auth_bearer(a), tok, sizeof(tok), NULL, &e), -1);
	assert_non_null(strstr(e.msg, "no answer"));
	assert_non_null(strstr(e.msg, "GOOGLE_APPLICATION_CREDENTIALS"));
	gce_auth_free(a);
}

static void test_metadata_retries_5xx(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { "" };
	struct gce_auth *a;
	char tok[GCE_AUTH_TOKEN_MAX];

	f->o.metadata_host = f->host;
	f->fk.md_fail = 1;
	a = gce_auth_new(&f->o, &e);
	assert_non_null(a);
	if (oauth_source_token(gce_auth_bearer(a), tok, sizeof(tok), NULL, &e) < 0)
		fail_msg("%s", e.msg);
	assert_string_equal(tok, "ya29.MDS3KR1T-1");
	assert_string_equal(f->fk.cs.reqs[1].target,
			    "/computeMetadata/v1/instance/service-accounts/default/token");
	/* two failures use up the attempts: the status is named */
	oauth_source_invalidate(gce_auth_bearer(a));
	f->fk.md_fail = 2;
	assert_int_equal(oauth_source_token(gce_auth_bearer(a), tok, sizeof(tok), NULL, &e), -1);
	assert_non_null(strstr(e.msg, "HTTP 503"));
	gce_auth_free(a);
}

static void test_metadata_bad_answers(void **state)
{
	struct fx *f = *state;
	static const struct {
		const char *body, *needle;
	} cases[] = {
		{ "not json", "not a JSON object" },
		{ "{\"expires_in\":3599,\"token_type\":\"Bearer\"}", "no string access_token" },
		{ "{\"access_token\":\"ya29.S3KR1T\",\"token_type\":\"Bearer\"}", "expires_in" },
		{ "{\"access_token\":\"ya29.S3KR1T\",\"expires_in\":-5}", "between 1 s" },
		{ "{\"access_token\":\"ya29.S3KR1T\",\"expires_in\":3599,\"token_type\":\"MAC\"}",
		  "Bearer" },
		{ "{\"access_token\":\"ya29 S3KR1T\",\"expires_in\":3599}", "not printable" },
	};
	struct errbuf e = { "" };
	char tok[GCE_AUTH_TOKEN_MAX];
	size_t i;

	f->o.metadata_host = f->host;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gce_auth *a = gce_auth_new(&f->o, &e);

		assert_non_null(a);
		snprintf(f->fk.md_body, sizeof(f->fk.md_body), "%s", cases[i].body);
		assert_int_equal(oauth_source_token(gce_auth_bearer(a), tok, sizeof(tok), NULL, &e), -1);
		if (!strstr(e.msg, cases[i].needle))
			fail_msg("case %zu: \"%s\" not in: %s", i, cases[i].needle, e.msg);
		assert_null(strstr(e.msg, "S3KR1T"));
		gce_auth_free(a);
	}
}

static void test_metadata_project_zone(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { "" };
	char p[64], z[64];
	size_t i;

	f->o.metadata_host = NULL;
	fx_setenv(f, "GCE_METADATA_ROOT", f->host); /* the older name still works */
	if (gce_metadata_project_zone(&f->o, p, sizeof(p), z, sizeof(z), &e) < 0)
		fail_msg("%s", e.msg);
	assert_string_equal(p, "luascale-proj");
	assert_string_equal(z, "us-central1-a");
	assert_int_equal(cs_count(&f->fk.cs), 2);
	for (i = 0; i < 2; i++)
		assert_string_equal(cs_header(&f->fk.cs.reqs[i], "Metadata-Flavor"), "Google");
}

/* ---- service-account keys ---- */

static void test_key_exchange(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { "" };
	struct gce_auth *a;
	char path[512], tok[GCE_AUTH_TOKEN_MAX], acct[320];
	int64_t exp;

	a = new_key_auth(f, path, sizeof(path));
	assert_string_equal(gce_auth_source(a), "service-account-key");
	gce_auth_account(a, acct, sizeof(acct));
	assert_string_equal(acct, EMAIL);
	if (oauth_source_token(gce_auth_bearer(a), tok, sizeof(tok), &exp, &e) < 0)
		fail_msg("%s (fake: %s)", e.msg, f->fk.reject);
	assert_string_equal(f->fk.reject, "");
	assert_string_equal(tok, "ya29.SAS3KR1T-1");
	assert_int_equal(exp, T0 + 3600);
	assert_non_null(strstr(f->log, EMAIL));
	assert_non_null(strstr(f->log, "service-account-key"));
	/* a compute call through cloudhttp carries it (and the verbose log,
	 * checked at teardown, shows it redacted) */
	{
		struct cloudhttp_request rq;
		struct cloudhttp_response r = { 0 };
		char url[128];

		snprintf(url, sizeof(url), "%s/compute/v1/projects/p", f->fk.cs.url);
		memset(&rq, 0, sizeof(rq));
		rq.method = "GET";
		rq.url = url;
		rq.prepare = bearer_prepare;
		rq.ctx = gce_auth_bearer(a);
		assert_int_equal(cloudhttp_call(f->http, &rq, &r, &e), 0);
		assert_string_equal(cs_header(&f->fk.cs.reqs[1], "Authorization"),
				    "Bearer ya29.SAS3KR1T-1");
		assert_non_null(strstr(f->log, "Authorization"));
		cloudhttp_response_free(&r);
	}
	gce_auth_free(a);
}

static void test_key_from_env_with_scope_and_token_url(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { "" };
	struct gce_auth *a;
	char path[512], tok[GCE_AUTH_TOKEN_MAX];

	/* the key names Google's endpoint; the override sends it to the fake,
	 * whose URL is then the audience */
	write_key(f, "env.json", "service_account", test_pem, NULL, path, sizeof(path));
	fx_setenv(f, "GOOGLE_APPLICATION_CREDENTIALS", path);
	f->o.token_url = f->token_url;
	f->o.scope = "https://www.googleapis.com/auth/cloud-platform";
	snprintf(f->fk.want_scope, sizeof(f->fk.want_scope), "%s", f->o.scope);
	a = gce_auth_new(&f->o, &e);
	assert_non_null(a);
	if (oauth_source_token(gce_auth_bearer(a), tok, sizeof(tok), NULL, &e) < 0)
		fail_msg("%s (fake: %s)", e.msg, f->fk.reject);
	assert_string_equal(tok, "ya29.SAS3KR1T-1");
	gce_auth_free(a);
}

static void test_wrong_key_is_refused_by_the_endpoint(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { "" };
	struct gce_auth *a;
	char path[512], tok[GCE_AUTH_TOKEN_MAX];

	write_key(f, "other.json", "service_account", other_pem, f->token_url, path, sizeof(path));
	f->o.credentials_file = path;
	a = gce_auth_new(&f->o, &e);
	assert_non_null(a);
	assert_int_equal(oauth_source_token(gce_auth_bearer(a), tok, sizeof(tok), NULL, &e), -1);
	assert_string_equal(f->fk.reject, "Invalid JWT Signature.");
	assert_non_null(strstr(e.msg, "gce access token: invalid_grant: Invalid JWT Signature. "
				   "(likely cause: wrong key or secret"));
	assert_non_null(strstr(e.msg, "HTTP 400"));
	assert_non_null(strstr(e.msg, path));
	gce_auth_free(a);
}

static void test_refresh_windows(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { "" };
	struct gce_auth *a;
	char path[512], tok[GCE_AUTH_TOKEN_MAX];
	int64_t exp;

	a = new_key_auth(f, path, sizeof(path));
	assert_int_equal(oauth_source_token(gce_auth_bearer(a), tok, sizeof(tok), &exp, &e), 0);
	assert_int_equal(exp, T0 + 3600);
	/* 5 min + 1 s before expiry: the cached token, no request */
	advance_to(f, T0 + 3600 - 301);
	assert_int_equal(oauth_source_token(gce_auth_bearer(a), tok, sizeof(tok), &exp, &e), 0);
	assert_string_equal(tok, "ya29.SAS3KR1T-1");
	assert_int_equal(cs_count(&f->fk.cs), 1);
	/* inside the 5 minutes: refreshed, with an assertion issued now */
	advance_to(f, T0 + 3600 - 299);
	if (oauth_source_token(gce_auth_bearer(a), tok, sizeof(tok), &exp, &e) < 0)
		fail_msg("%s (fake: %s)", e.msg, f->fk.reject);
	assert_string_equal(tok, "ya29.SAS3KR1T-2");
	assert_int_equal(exp, T0 + 3600 - 299 + 3600);
	assert_int_equal(cs_count(&f->fk.cs), 2);
	/* the prepare hook hands the current token as a bearer header */
	{
		struct cloudhttp_headers h = CLOUDHTTP_HEADERS_INIT;

		assert_int_equal(oauth_source_prepare(gce_auth_bearer(a), &h, &e), 0);
		assert_string_equal(cloudhttp_headers_get(&h, "Authorization"),
				    "Bearer ya29.SAS3KR1T-2");
		cloudhttp_headers_free(&h);
	}
	/* oauth_source_invalidate (a 401 from compute) fetches anew at once */
	oauth_source_invalidate(gce_auth_bearer(a));
	assert_int_equal(oauth_source_token(gce_auth_bearer(a), tok, sizeof(tok), NULL, &e), 0);
	assert_string_equal(tok, "ya29.SAS3KR1T-3");
	gce_auth_free(a);
}

static void test_failed_refresh_keeps_old_token(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { "" };
	struct gce_auth *a;
	char path[512], tok[GCE_AUTH_TOKEN_MAX];
	int64_t exp;

	a = new_key_auth(f, path, sizeof(path));
	assert_int_equal(oauth_source_token(gce_auth_bearer(a), tok, sizeof(tok), &exp, &e), 0);
	f->fk.token_status = 400;
	/* in the mandatory minute the refresh fails: the old token stays */
	advance_to(f, T0 + 3600 - 30);
	assert_int_equal(oauth_source_token(gce_auth_bearer(a), tok, sizeof(tok), &exp, &e), 0);
	assert_string_equal(tok, "ya29.SAS3KR1T-1");
	assert_int_equal(exp, T0 + 3600);
	assert_int_equal(cs_count(&f->fk.cs), 2);
	assert_true(f->warns >= 1);
	assert_non_null(strstr(f->log, "Invalid grant: account not found"));
	/* once it expired, the error is the endpoint's, named */
	advance_to(f, T0 + 3600);
	assert_int_equal(oauth_source_token(gce_auth_bearer(a), tok, sizeof(tok), &exp, &e), -1);
	assert_non_null(strstr(e.msg, "invalid_grant: Invalid grant: account not found"));
	assert_non_null(strstr(e.msg, "HTTP 400"));
	assert_non_null(strstr(e.msg, f->token_url));
	/* and the endpoint recovering ends it */
	f->fk.token_status = 0;
	advance_to(f, T0 + 3600 + 31);
	assert_int_equal(oauth_source_token(gce_auth_bearer(a), tok, sizeof(tok), &exp, &e), 0);
	assert_string_equal(tok, "ya29.SAS3KR1T-2");
	gce_auth_free(a);
}

/* A key deep in folders (its path about 1 KiB long) and the token endpoint
 * saying the JWT is out of its time: the message keeps the code, the whole
 * description and the likely cause (clock skew) before the path, and all of
 * it in oauth_source_last_error(); the errbuf holds at least the code. */
static void test_clock_skew_refusal_is_said_whole(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { "" };
	struct gce_auth *a;
	char dir[900], path[1100], cmd[1000], full[PROVIDER_MESSAGE_MAX], tok[GCE_AUTH_TOKEN_MAX];
	size_t n;

	n = (size_t)snprintf(dir, sizeof(dir), "%s", f->dir);
	while (n + 30 < sizeof(dir) - 40)
		n += (size_t)snprintf(dir + n, sizeof(dir) - n, "/a-rather-long-folder-name");
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", dir);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/sa.json", dir + strlen(f->dir) + 1);
	write_key(f, cmd, "service_account", test_pem, f->token_url, path, sizeof(path));
	assert_true(strlen(path) > 800);
	f->o.credentials_file = path;
	a = gce_auth_new(&f->o, &e);
	if (!a)
		fail_msg("%s", e.msg);
	f->fk.token_status = 400;
	snprintf(f->fk.token_body, sizeof(f->fk.token_body),
		 "{\n  \"error\": \"invalid_grant\",\n  \"error_description\": \"Invalid JWT: Token "
		 "must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your "
		 "iat and exp values in the JWT claim.\"\n}");
	assert_int_equal(oauth_source_token(gce_auth_bearer(a), tok, sizeof(tok), NULL, &e), -1);
	assert_int_equal(strncmp(e.msg, "gce access token: invalid_grant: Invalid JWT: Token must "
				 "be a short-lived token", 71), 0);
	oauth_source_last_error(gce_auth_bearer(a), full, sizeof(full));
	assert_int_equal(strncmp(full, "invalid_grant: Invalid JWT: Token must be a short-lived "
				 "token (60 minutes) and in a reasonable timeframe. Check your iat "
				 "and exp values in the JWT claim. (likely cause: clock skew", 168), 0);
	assert_non_null(strstr(full, path));
	assert_non_null(strstr(full, ": HTTP 400"));
	/* a success clears it */
	f->fk.token_status = 0;
	assert_int_equal(oauth_source_token(gce_auth_bearer(a), tok, sizeof(tok), NULL, &e), 0);
	oauth_source_last_error(gce_auth_bearer(a), full, sizeof(full));
	assert_string_equal(full, "");
	gce_auth_free(a);
}

struct caller {
	struct gce_auth *a;
	int rc;
	char tok[GCE_AUTH_TOKEN_MAX];
	struct errbuf e;
};

static void *call_token(void *arg)
{
	struct caller *c = arg;

	c->rc = oauth_source_token(gce_auth_bearer(c->a), c->tok, sizeof(c->tok), NULL, &c->e);
	return NULL;
}

static void test_concurrent_callers_share_one_fetch(void **state)
{
	struct fx *f = *state;
	struct caller c[6];
	pthread_t th[6];
	struct gce_auth *a;
	char path[512];
	int i;

	a = new_key_auth(f, path, sizeof(path));
	f->fk.hold = 1;
	for (i = 0; i < 6; i++) {
		memset(&c[i], 0, sizeof(c[i]));
		c[i].a = a;
		assert_int_equal(pthread_create(&th[i], NULL, call_token, &c[i]), 0);
	}
	cs_wait_holding(&f->fk.cs, 1);
	cs_release(&f->fk.cs);
	for (i = 0; i < 6; i++) {
		pthread_join(th[i], NULL);
		if (c[i].rc != 0)
			fail_msg("caller %d: %s", i, c[i].e.msg);
		assert_string_equal(c[i].tok, "ya29.SAS3KR1T-1");
	}
	assert_int_equal(cs_count(&f->fk.cs), 1);
	gce_auth_free(a);
}

static void expect_bad_key(struct fx *f, const char *path, const char *needle)
{
	struct errbuf e = { "" };

	f->o.credentials_file = path;
	assert_null(gce_auth_new(&f->o, &e));
	if (!strstr(e.msg, needle))
		fail_msg("\"%s\" not in: %s", needle, e.msg);
	assert_null(strstr(e.msg, "PRIVATE KEY"));
	assert_null(strstr(e.msg, "MII"));
}

static void test_bad_keys(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { "" };
	char path[512];
	FILE *fp;

	write_key(f, "user.json", "authorized_user", NULL, NULL, path, sizeof(path));
	expect_bad_key(f, path, "\"authorized_user\"");
	expect_bad_key(f, path, "service_account");
	write_key(f, "ext.json", "external_account", NULL, NULL, path, sizeof(path));
	expect_bad_key(f, path, "is not supported");
	write_key(f, "nokey.json", "service_account", NULL, f->token_url, path, sizeof(path));
	expect_bad_key(f, path, "no PEM \"private_key\"");
	write_key(f, "badpem.json", "service_account",
		  "-----BEGIN PRIVATE KEY-----\nMIIBroken\n-----END PRIVATE KEY-----\n",
		  f->token_url, path, sizeof(path));
	expect_bad_key(f, path, "not a readable unencrypted PEM private key");
	write_key(f, "http.json", "service_account", test_pem, "http://oauth2.example.com/token",
		  path, sizeof(path));
	expect_bad_key(f, path, "must be https");
	write_key(f, "query.json", "service_account", test_pem, "https://oauth2.example.com/t?a=b",
		  path, sizeof(path));
	expect_bad_key(f, path, "no query");
	snprintf(path, sizeof(path), "%s/garbage.json", f->dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("{\"type\": \"service_account\", ", fp);
	fclose(fp);
	expect_bad_key(f, path, "not a JSON object");
	snprintf(path, sizeof(path), "%s/missing.json", f->dir);
	expect_bad_key(f, path, "cannot read");
	/* an override token URL is held to the same rule */
	write_key(f, "ok.json", "service_account", test_pem, NULL, path, sizeof(path));
	f->o.credentials_file = path;
	f->o.token_url = "http://10.0.0.1/token";
	assert_null(gce_auth_new(&f->o, &e));
	assert_non_null(strstr(e.msg, "token_url"));
	assert_int_equal(gce_auth_check_token_url("http://[::1]:8080/token", &e), 0);
	assert_int_equal(gce_auth_check_token_url("http://localhost/token", &e), 0);
	assert_int_equal(gce_auth_check_token_url("https://oauth2.googleapis.com/token", &e), 0);
	assert_int_equal(gce_auth_check_token_url("ftp://x/token", &e), -1);
	assert_int_equal(cs_count(&f->fk.cs), 0);
}

static void test_jwt_assertion_shape(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { "" };
	struct gce_jwt_key *k;
	struct buf out = BUF_INIT;
	char path[512], why[256];

	(void)state;
	write_key(f, "sa.json", "service_account", test_pem, f->token_url, path, sizeof(path));
	k = gce_jwt_key_load(path, &e);
	assert_non_null(k);
	assert_string_equal(gce_jwt_key_email(k), EMAIL);
	assert_string_equal(gce_jwt_key_token_uri(k), f->token_url);
	assert_int_equal(gce_jwt_assertion(k, NULL, T0, NULL, &out, &e), 0);
	verify_assertion(&f->fk, out.data, why, sizeof(why));
	assert_string_equal(why, "");
	/* the header is fixed JSON: its base64url is known */
	assert_int_equal(strncmp(out.data, "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCIsImtpZCI6", 44), 0);
	buf_free(&out);
	/* another time: the fake (at T0) sees a wrong iat */
	assert_int_equal(gce_jwt_assertion(k, NULL, T0 + 1, NULL, &out, &e), 0);
	verify_assertion(&f->fk, out.data, why, sizeof(why));
	assert_non_null(strstr(why, "bad claims"));
	buf_free(&out);
	gce_jwt_key_free(k);
}

/* ---- keys for the whole run ---- */

static void pem_of(EVP_PKEY *k, char *out, size_t len)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *p;
	long n;

	assert_non_null(b);
	assert_int_equal(PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL), 1);
	n = BIO_get_mem_data(b, &p);
	assert_true(n > 0 && (size_t)n < len);
	memcpy(out, p, (size_t)n);
	out[n] = '\0';
	BIO_free(b);
}

static int group_setup(void **state)
{
	(void)state;
	test_key = EVP_RSA_gen(2048);
	other_key = EVP_RSA_gen(2048);
	if (!test_key || !other_key)
		return -1;
	pem_of(test_key, test_pem, sizeof(test_pem));
	pem_of(other_key, other_pem, sizeof(other_pem));
	return strstr(test_pem, "BEGIN PRIVATE KEY") ? 0 : -1; /* PKCS#8 */
}

static int group_teardown(void **state)
{
	(void)state;
	EVP_PKEY_free(test_key);
	EVP_PKEY_free(other_key);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
		T(test_metadata_token),
		T(test_metadata_reply_without_flavor_refused),
		T(test_metadata_host_option_beats_env),
		T(test_metadata_unreachable_fails),
		T(test_metadata_retries_5xx),
		T(test_metadata_bad_answers),
		T(test_metadata_project_zone),
		T(test_key_exchange),
		T(test_key_from_env_with_scope_and_token_url),
		T(test_wrong_key_is_refused_by_the_endpoint),
		T(test_refresh_windows),
		T(test_failed_refresh_keeps_old_token),
		T(test_clock_skew_refusal_is_said_whole),
		T(test_concurrent_callers_share_one_fetch),
		T(test_bad_keys),
		T(test_jwt_assertion_shape),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
