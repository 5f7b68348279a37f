/*
 * azureauth: Entra access tokens for ARM from a client secret, a workload
 * identity's federated token (both the client credentials grant of
 * cloudhttp/oauth) or the managed identity of the instance metadata
 * service, cached by cloudhttp/oauth. What is Azure's: which settings and
 * variables, the endpoints, IMDS's request and answer. Never logs a token,
 * a secret or an assertion: only the source, the endpoint and the expiry.
 */
#include "providers/azure/azureauth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "model.h"
#include "providers/cloudhttp/cloudhttp.h"
#include "providers/cloudhttp/credcache.h"
#include "providers/cloudhttp/metadata.h"
#include "providers/cloudhttp/oauth.h"

#define SECRET_MAX 1024
#define DEFAULT_AUTHORITY "https://login.microsoftonline.com/"
#define DEFAULT_RESOURCE "https://management.azure.com/"

static const char *const src_names[] = { "client-secret", "workload-identity", "managed-identity" };

struct azure_auth {
	enum azure_auth_kind kind;
	char tenant[256];
	char client_id[64];
	char secret[SECRET_MAX];       /* from the environment (wiped at free) */
	char secret_file[1024];        /* or this file, read on each refresh */
	char token_file[1024];         /* workload identity: the federated token */
	char token_url[1400];          /* {authority}{tenant}/oauth2/v2.0/token */
	char scope[300];               /* {resource}.default */
	char resource[256];
	char imds_path[1200];          /* the IMDS token path with its query */
	struct metadata_client md;     /* IMDS */
	char identity_id[64];          /* user-assigned identity, "" for the system one */
	struct cloudhttp *http;
	struct clock *clock;
	const struct logger *log;
	struct oauth_source *src;      /* the cached token and the last error */
};

/* ---- small helpers ---- */

const char *azure_env_get(const struct azure_env *e, const char *name)
{
	return oauth_env_get(e ? e->get : NULL, e ? e->ud : NULL, name);
}

static bool env_true(const struct azure_env *e, const char *name)
{
	const char *v = azure_env_get(e, name);

	return v && (!strcasecmp(v, "true") || !strcmp(v, "1"));
}

/* Copies a setting, checked to be printable without spaces and to fit. */
static int take(char *out, size_t len, const char *v, const char *what, struct errbuf *err)
{
	if (strlen(v) >= len)
		return errbuf_set(err, "%s is longer than %zu bytes", what, len - 1);
	if (!oauth_printable(v, false))
		return errbuf_set(err, "%s holds a space or a character that is not printable ASCII", what);
	snprintf(out, len, "%s", v);
	return 0;
}

/* The first of the config's value and the variables named, with its name. */
static const char *pick(const struct azure_env *e, const char *cfg, const char *cfg_name,
			const char *v1, const char *v2, const char **name)
{
	const char *v;

	if (cfg && *cfg) {
		*name = cfg_name;
		return cfg;
	}
	if (v1 && (v = azure_env_get(e, v1))) {
		*name = v1;
		return v;
	}
	if (v2 && (v = azure_env_get(e, v2))) {
		*name = v2;
		return v;
	}
	*name = v2 ? v2 : v1;
	return NULL;
}

int azure_check_endpoint(const char *url, const char *what, bool link_local, struct errbuf *err)
{
	return oauth_check_url(url, what, link_local, err);
}

/* "base" without its trailing slashes, then 'tail'. */
static void join(char *out, size_t len, const char *base, const char *tail)
{
	size_t n = strlen(base);

	while (n > 0 && base[n - 1] == '/')
		n--;
	snprintf(out, len, "%.*s%s", (int)n, base, tail);
}

/* ---- fetching ---- */

static int fetch_entra(struct azure_auth *a, char *out, size_t len, int64_t *expires_s,
		       char *full, size_t full_len, struct errbuf *err)
{
	static const struct oauth_token_rules rules = { .type_required = true, .expires_on = true };
	struct buf body = BUF_INIT, cred = BUF_INIT;
	char where[1600];
	int64_t now = clock_wall(a->clock);
	bool wi = a->kind == AZURE_AUTH_WORKLOAD_IDENTITY;
	int rc = -1;

	snprintf(where, sizeof(where), "%s: token endpoint %s", src_names[a->kind], a->token_url);
	if (wi) {
		/* the kubelet rotates the projected token: read it every time */
		if (oauth_read_secret_file(a->token_file, "the federated token file", &cred, err) < 0)
			goto out;
	} else if (a->secret_file[0]) {
		if (oauth_read_secret_file(a->secret_file, "the client secret file", &cred, err) < 0)
			goto out;
	} else if (buf_puts(&cred, a->secret) < 0) {
		errbuf_set(err, "%s: out of memory", where);
		goto out;
	}
	oauth_form_client_credentials(&body, a->client_id, a->scope, wi ? NULL : cred.data,
				      wi ? cred.data : NULL);
	rc = oauth_request_token(a->http, a->token_url, &body, src_names[a->kind], where, now,
				 &rules, out, len, expires_s, full, full_len, err);
out:
	oauth_wipe_buf(&body);
	oauth_wipe_buf(&cred);
	return rc;
}

/* IMDS asks for retries on 404 (an identity being assigned), 410, 429 and 5xx. */
static enum cloudhttp_verdict imds_classify(void *ctx, const struct cloudhttp_response *r)
{
	(void)ctx;
	if (r->status == 429)
		return CLOUDHTTP_RETRY_THROTTLED;
	if (r->status == 404 || r->status == 410 || r->status >= 500)
		return CLOUDHTTP_RETRY;
	return CLOUDHTTP_DONE;
}

static int fetch_imds(struct azure_auth *a, char *out, size_t len, int64_t *expires_s,
		      char *full, size_t full_len, struct errbuf *err)
{
	struct cloudhttp_response r = { 0 };
	struct oauth_token_rules rules = { .type_required = true, .expires_on = true };
	char where[1200];
	const char *ct;
	int64_t now = clock_wall(a->clock);
	int rc;

	snprintf(where, sizeof(where), "managed identity%s%s: metadata service %s",
		 a->identity_id[0] ? " " : "", a->identity_id, a->md.base);
	rc = metadata_send(&a->md, "GET", a->imds_path, NULL, NULL, &r, err);
	if (rc == -1)
		errbuf_prefix(err, "%s: no answer (not on Azure? give a client secret or a workload "
			      "identity, or set AZURE_POD_IDENTITY_AUTHORITY_HOST)", where);
	else if (rc == -2)
		errbuf_prefix(err, "%s", where);
	if (rc < 0)
		goto out;
	rc = -1;
	if (r.status != 200) {
		oauth_error(&r, where, r.status != 400 && r.status != 404 ? NULL :
			    a->identity_id[0] ? "is this user-assigned identity attached to the VM?" :
						"has the VM a system-assigned identity?",
			    full, full_len, err);
		goto out;
	}
	/* the metadata service answers JSON; a proxy or captive portal does not */
	ct = cloudhttp_headers_get(&r.headers, "Content-Type");
	if (!ct || strncasecmp(ct, "application/json", 16) != 0) {
		errbuf_set(err, "%s: answered HTTP 200 with Content-Type %.60s, not application/json: "
			   "not the metadata service, refused", where, ct ? ct : "(none)");
		goto out;
	}
	rules.resource = a->resource;
	rules.client_id = a->identity_id;
	if (oauth_parse_token(r.body, where, now, &rules, out, len, expires_s, err) < 0)
		goto out;
	rc = 0;
out:
	oauth_wipe_response(&r);
	return rc < 0 ? -1 : 0;
}

/* An oauth_fetch_fn: the token from Entra or IMDS, logged (never the token). */
static int fetch(void *ud, char *out, size_t len, int64_t *expires_s, char *full,
		 size_t full_len, struct errbuf *err)
{
	struct azure_auth *a = ud;
	char ts[40];

	if ((a->kind == AZURE_AUTH_MANAGED_IDENTITY
		     ? fetch_imds(a, out, len, expires_s, full, full_len, err)
		     : fetch_entra(a, out, len, expires_s, full, full_len, err)) < 0)
		return -1;
	model_format_time(*expires_s, ts, sizeof(ts));
	log_at(a->log, LOG_INFO, clock_wall(a->clock), "azure: access token from the %s (%s), expires %s",
	       src_names[a->kind],
	       a->kind == AZURE_AUTH_MANAGED_IDENTITY ? a->md.base : a->token_url, ts);
	return 0;
}

/* ---- the source ---- */

static int choose(struct azure_auth *a, const struct azure_auth_opts *o, struct errbuf *err)
{
	const struct azure_env *e = &o->env;
	const char *mode = o->mode && *o->mode ? o->mode : "auto";
	const char *tenant, *client, *secret, *sfile, *tfile;
	const char *n_t = "", *n_c = "", *n_s = "", *n_f = "", *n_tf = "";

	tenant = pick(e, o->tenant_id, "provider.azure.tenant_id", "AZURE_TENANT_ID", "ARM_TENANT_ID", &n_t);
	client = pick(e, o->client_id, "provider.azure.client_id", "AZURE_CLIENT_ID", "ARM_CLIENT_ID", &n_c);
	sfile = pick(e, o->client_secret_file, "provider.azure.client_secret_file", NULL, NULL, &n_f);
	secret = sfile ? NULL : pick(e, NULL, NULL, "AZURE_CLIENT_SECRET", "ARM_CLIENT_SECRET", &n_s);
	tfile = pick(e, o->federated_token_file, "provider.azure.federated_token_file",
		     "AZURE_FEDERATED_TOKEN_FILE", NULL, &n_tf);
	if (!strcmp(mode, "auto")) {
		if (env_true(e, "ARM_USE_WORKLOAD_IDENTITY_EXTENSION") ||
		    env_true(e, "ARM_USE_FEDERATED_WORKLOAD_IDENTITY_EXTENSION"))
			mode = "workload_identity";
		else if (env_true(e, "ARM_USE_MANAGED_IDENTITY_EXTENSION"))
			mode = "managed_identity";
		else if (tenant && client && (secret || sfile))
			mode = "client_secret";
		else if (tenant && client && tfile)
			mode = "workload_identity";
		else
			mode = "managed_identity";
	}
	if (!strcmp(mode, "client_secret"))
		a->kind = AZURE_AUTH_CLIENT_SECRET;
	else if (!strcmp(mode, "workload_identity"))
		a->kind = AZURE_AUTH_WORKLOAD_IDENTITY;
	else if (!strcmp(mode, "managed_identity"))
		a->kind = AZURE_AUTH_MANAGED_IDENTITY;
	else
		return errbuf_set(err, "auth \"%.40s\" is not auto, client_secret, workload_identity or "
				  "managed_identity", mode);
	if (a->kind == AZURE_AUTH_MANAGED_IDENTITY) {
		const char *id, *n_id = "";

		/* a user-assigned identity; azure-identity also takes AZURE_CLIENT_ID */
		id = pick(e, o->identity_client_id, "provider.azure.identity_client_id",
			  "ARM_USER_ASSIGNED_IDENTITY_ID", "AZURE_CLIENT_ID", &n_id);
		return id ? take(a->identity_id, sizeof(a->identity_id), id, n_id, err) : 0;
	}
	if (!tenant)
		return errbuf_set(err, "%s needs a tenant: set provider.azure.tenant_id, AZURE_TENANT_ID "
				  "or ARM_TENANT_ID", src_names[a->kind]);
	if (!client)
		return errbuf_set(err, "%s needs a client id: set provider.azure.client_id, "
				  "AZURE_CLIENT_ID or ARM_CLIENT_ID", src_names[a->kind]);
	if (take(a->tenant, sizeof(a->tenant), tenant, n_t, err) < 0 ||
	    take(a->client_id, sizeof(a->client_id), client, n_c, err) < 0)
		return -1;
	if (a->kind == AZURE_AUTH_WORKLOAD_IDENTITY) {
		if (!tfile)
			return errbuf_set(err, "workload-identity needs a federated token file: set "
					  "AZURE_FEDERATED_TOKEN_FILE or provider.azure.federated_token_file");
		return take(a->token_file, sizeof(a->token_file), tfile, n_tf, err);
	}
	if (sfile)
		return take(a->secret_file, sizeof(a->secret_file), sfile, n_f, err);
	if (!secret)
		return errbuf_set(err, "client-secret needs a secret: set AZURE_CLIENT_SECRET, "
				  "ARM_CLIENT_SECRET or provider.azure.client_secret_file");
	if (strlen(secret) >= sizeof(a->secret) || !oauth_printable(secret, false))
		return errbuf_set(err, "%s is longer than %zu bytes or holds a character that is not "
				  "printable ASCII", n_s, sizeof(a->secret) - 1);
	snprintf(a->secret, sizeof(a->secret), "%s", secret);
	return 0;
}

static int endpoints(struct azure_auth *a, const struct azure_auth_opts *o, struct errbuf *err)
{
	const char *auth, *n_a = "", *imds, *n_i = "";
	struct buf q = BUF_INIT;
	int rc = -1;

	snprintf(a->resource, sizeof(a->resource), "%s", o->resource ? o->resource : DEFAULT_RESOURCE);
	join(a->scope, sizeof(a->scope), a->resource, "/.default");
	if (a->kind != AZURE_AUTH_MANAGED_IDENTITY) {
		char path[400];

		auth = pick(&o->env, o->authority, "provider.azure.endpoints.authority",
			    "AZURE_AUTHORITY_HOST", NULL, &n_a);
		if (!auth) {
			auth = o->default_authority ? o->default_authority : DEFAULT_AUTHORITY;
			n_a = "the cloud's authority";
		}
		if (azure_check_endpoint(auth, n_a, false, err) < 0)
			return -1;
		snprintf(path, sizeof(path), "/%s/oauth2/v2.0/token", a->tenant);
		join(a->token_url, sizeof(a->token_url), auth, path);
		return 0;
	}
	imds = pick(&o->env, o->imds, "provider.azure.endpoints.imds",
		    "AZURE_POD_IDENTITY_AUTHORITY_HOST", NULL, &n_i);
	if (!imds) {
		imds = AZURE_IMDS_DEFAULT;
		n_i = "the metadata service";
	}
	if (azure_check_endpoint(imds, n_i, true, err) < 0 ||
	    metadata_init(&a->md, a->http, imds, n_i, err) < 0)
		return -1;
	a->md.header = "Metadata";
	a->md.value = "true";
	a->md.timeout_ms = o->imds_timeout_ms > 0 ? o->imds_timeout_ms : 5000;
	a->md.classify = imds_classify;
	buf_printf(&q, "%s?api-version=%s&resource=", AZURE_IMDS_TOKEN_PATH, AZURE_IMDS_API_VERSION);
	cloudhttp_escape(&q, a->resource);
	if (a->identity_id[0]) {
		buf_puts(&q, "&client_id=");
		cloudhttp_escape(&q, a->identity_id);
	}
	/* the whole URL, base and query, within 1200 bytes */
	if (q.oom || strlen(a->md.base) + q.len >= sizeof(a->imds_path)) {
		errbuf_set(err, "the metadata service URL is too long");
		goto out;
	}
	snprintf(a->imds_path, sizeof(a->imds_path), "%s", q.data);
	rc = 0;
out:
	buf_free(&q);
	return rc;
}

struct azure_auth *azure_auth_new(const struct azure_auth_opts *o, struct errbuf *err)
{
	struct oauth_source_opts so;
	struct azure_auth *a;

	if (!o || !o->http) {
		errbuf_set(err, "azure auth: no HTTP client");
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (!a) {
		errbuf_set(err, "azure auth: out of memory");
		return NULL;
	}
	a->http = o->http;
	a->clock = o->clock ? o->clock : clock_real();
	a->log = o->log;
	if (choose(a, o, err) < 0 || endpoints(a, o, err) < 0) {
		errbuf_prefix(err, "azure auth");
		goto fail;
	}
	memset(&so, 0, sizeof(so));
	so.name = "azure access token";
	so.who = "azure auth";
	so.token_max = AZURE_AUTH_TOKEN_MAX;
	so.fetch = fetch;
	so.ud = a;
	so.advisory_s = AZURE_AUTH_REFRESH_S;
	so.mandatory_s = AZURE_AUTH_REFRESH_S;
	so.clock = a->clock;
	so.log = a->log;
	a->src = oauth_source_new(&so, err);
	if (!a->src)
		goto fail;
	log_at(a->log, LOG_INFO, clock_wall(a->clock), "azure: credentials from the %s (%s%s%s)",
	       src_names[a->kind],
	       a->kind == AZURE_AUTH_MANAGED_IDENTITY ? a->md.base : a->token_url,
	       a->kind == AZURE_AUTH_MANAGED_IDENTITY && a->identity_id[0] ? ", identity " :
	       a->kind != AZURE_AUTH_MANAGED_IDENTITY ? ", client " : "",
	       a->kind == AZURE_AUTH_MANAGED_IDENTITY ? a->identity_id : a->client_id);
	return a;
fail:
	azure_auth_free(a);
	return NULL;
}

struct oauth_source *azure_auth_bearer(struct azure_auth *a)
{
	return a->src;
}

enum azure_auth_kind azure_auth_kind(const struct azure_auth *a)
{
	return a->kind;
}

const char *azure_auth_source(const struct azure_auth *a)
{
	return src_names[a->kind];
}

void azure_auth_free(struct azure_auth *a)
{
	if (!a)
		return;
	oauth_source_free(a->src);
	credcache_wipe(a, sizeof(*a));
	free(a);
}
