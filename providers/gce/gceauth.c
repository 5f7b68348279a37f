/*
 * gceauth: GCE access tokens from a service-account key (the JWT bearer
 * grant of cloudhttp/oauth, its JWT signed by cloudhttp/jwt) or the
 * metadata server, cached by cloudhttp/oauth; the metadata server's project
 * and zone. What is Google's: the key file, the claims, the metadata
 * server's paths and header. Never logs a token, an assertion or a key.
 */
#include "providers/gce/gceauth.h"

#include <ctype.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "model.h"
#include "providers/cloudhttp/cloudhttp.h"
#include "providers/cloudhttp/credcache.h"
#include "providers/cloudhttp/jwt.h"
#include "providers/cloudhttp/metadata.h"
#include "providers/cloudhttp/oauth.h"

#define KEY_FILE_MAX (64 * 1024)
#define JWT_LIFETIME_S 3600
#define MIN_RSA_BITS 2048
#define MD_TOKEN_PATH "/computeMetadata/v1/instance/service-accounts/default/token"
#define MD_EMAIL_PATH "/computeMetadata/v1/instance/service-accounts/default/email"
#define MD_PROJECT_PATH "/computeMetadata/v1/project/project-id"
#define MD_ZONE_PATH "/computeMetadata/v1/instance/zone"

enum gce_src { SRC_KEY, SRC_METADATA };

static const char *const src_names[] = { "service-account-key", "metadata-server" };

struct gce_jwt_key {
	char email[320];
	char key_id[128];
	char token_uri[1024];
	EVP_PKEY *pkey;
};

struct gce_auth {
	enum gce_src kind;
	char where[1200];          /* for messages: the key file, the metadata URL */
	struct gce_jwt_key *key;
	char token_url[1024];      /* where the assertion goes, its aud */
	char scope[1024];
	struct metadata_client md;
	struct cloudhttp *http;
	struct clock *clock;
	const struct logger *log;
	struct oauth_source *src;  /* the cached token and the last error */
	pthread_mutex_t mu;        /* guards 'account' */
	char account[320];
};

/* ---- URLs and hosts ---- */

int gce_auth_check_token_url(const char *url, struct errbuf *err)
{
	return oauth_check_url(url, "the token URL", false, err);
}

/* Checks a metadata host "host[:port]" and writes "http://host[:port]". */
static int metadata_base(const char *host, const char *what, char *out, size_t len,
			 struct errbuf *err)
{
	size_t i, n = strlen(host);

	if (n == 0 || n > 260)
		return errbuf_set(err, "%s: the metadata host must be 1-260 characters", what);
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)host[i];

		if (!isalnum(ch) && !strchr(".-:[]_", ch))
			return errbuf_set(err, "%s: the metadata host \"%.64s\" must be host[:port], "
					  "without a scheme or a path", what, host);
	}
	snprintf(out, len, "http://%s", host);
	return 0;
}

static int md_init(struct metadata_client *m, const struct gce_auth_opts *o, struct errbuf *err)
{
	const char *host = o->metadata_host && *o->metadata_host ? o->metadata_host : NULL;
	const char *what = "metadata_host";
	char base[300];

	if (!host) {
		host = oauth_env_get(o->env.get, o->env.ud, "GCE_METADATA_HOST");
		what = "GCE_METADATA_HOST";
	}
	if (!host) {
		/* the older name Google's libraries still read */
		host = oauth_env_get(o->env.get, o->env.ud, "GCE_METADATA_ROOT");
		what = "GCE_METADATA_ROOT";
	}
	if (!host) {
		host = GCE_METADATA_DEFAULT_HOST;
		what = "the metadata server";
	}
	if (metadata_base(host, what, base, sizeof(base), err) < 0 ||
	    metadata_init(m, o->http, base, what, err) < 0)
		return -1;
	m->header = "Metadata-Flavor";
	m->value = "Google";
	m->timeout_ms = o->metadata_timeout_ms > 0 ? o->metadata_timeout_ms : 1500;
	m->attempts = o->metadata_attempts > 0 ? o->metadata_attempts : 2;
	if (!m->http)
		return errbuf_set(err, "metadata server: no HTTP client");
	return 0;
}

/*
 * GET base+path with Metadata-Flavor: Google, retrying 5xx and no answer.
 * Every answer must carry Metadata-Flavor: Google back (else it is not
 * the metadata server: a proxy, a captive portal). 0 with a 200 answer in
 * 'resp'; -1 with a message, the status in '*status' (0: none).
 */
static int md_get(const struct metadata_client *m, const char *path,
		  struct cloudhttp_response *resp, long *status, struct errbuf *err)
{
	const char *flavor;
	int rc = metadata_send(m, "GET", path, NULL, NULL, resp, err);

	*status = 0;
	if (rc == -1)
		errbuf_prefix(err, "metadata server at %s: no answer (not on GCE? set "
			      "GOOGLE_APPLICATION_CREDENTIALS to a service-account key, or "
			      "GCE_METADATA_HOST)", m->base);
	if (rc < 0)
		return -1;
	*status = resp->status;
	flavor = cloudhttp_headers_get(&resp->headers, "Metadata-Flavor");
	if (!flavor || strcmp(flavor, "Google") != 0)
		return errbuf_set(err, "metadata server at %s: GET %s answered HTTP %ld without "
				  "\"Metadata-Flavor: Google\": not the metadata server, refused",
				  m->base, path, resp->status);
	if (resp->status != 200)
		return errbuf_set(err, "metadata server at %s: GET %s: HTTP %ld", m->base, path,
				  resp->status);
	return 0;
}

/* The first line of a plain-text metadata answer, trimmed, checked
 * against 'allowed' (extra characters besides letters and digits). */
static int md_text(const struct metadata_client *m, const char *path, const char *allowed,
		   char *out, size_t len, struct errbuf *err)
{
	struct cloudhttp_response r = { 0 };
	long status;
	int rc = md_get(m, path, &r, &status, err);

	if (rc == 0 && (rc = metadata_text(&r, allowed, out, len)) == -1)
		errbuf_set(err, "metadata server at %s: GET %s: the answer is empty or longer than "
			   "%zu bytes", m->base, path, len - 1);
	else if (rc == -2)
		rc = errbuf_set(err, "metadata server at %s: GET %s: the answer holds an unexpected "
				"character", m->base, path);
	cloudhttp_response_free(&r);
	return rc;
}

/* ---- keys and JWTs ---- */

static const char *json_str(const cJSON *j, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, name);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/*
 * Parses a service-account JSON key ('len' bytes at 'text'; 'where' names
 * it in messages): type "service_account", client_email, private_key (PEM,
 * PKCS#8 or PKCS#1 RSA of at least 2048 bits, unencrypted), private_key_id
 * (optional: the JWT header's kid), token_uri (default
 * GCE_AUTH_DEFAULT_TOKEN_URI; https, or http only to a loopback host).
 * Returns the key (free with gce_jwt_key_free) or NULL with a message that
 * says what is supported when the type is another.
 */
static struct gce_jwt_key *key_parse(const char *text, size_t len, const char *where,
				     struct errbuf *err)
{
	struct gce_jwt_key *k = NULL;
	cJSON *j = cJSON_ParseWithLength(text, len);
	const char *type, *email, *pem, *kid, *uri;
	char what[1200];

	if (!where)
		where = "service account key";
	if (!j || !cJSON_IsObject(j)) {
		errbuf_set(err, "%s: not a JSON object", where);
		goto fail;
	}
	type = json_str(j, "type");
	if (!type) {
		errbuf_set(err, "%s: no \"type\"; only service-account keys (\"type\": "
			   "\"service_account\", from gcloud iam service-accounts keys create) are "
			   "supported", where);
		goto fail;
	}
	if (strcmp(type, "service_account") != 0) {
		errbuf_set(err, "%s: a key of type \"%.40s\"%s is not supported: use a "
			   "service-account key (\"type\": \"service_account\", from gcloud iam "
			   "service-accounts keys create), or no key file on GCE to use the metadata "
			   "server", where, type,
			   strcmp(type, "authorized_user") == 0 ?
				   " (a user's gcloud auth application-default login)" : "");
		goto fail;
	}
	k = calloc(1, sizeof(*k));
	if (!k) {
		errbuf_set(err, "%s: out of memory", where);
		goto fail;
	}
	email = json_str(j, "client_email");
	pem = json_str(j, "private_key");
	kid = json_str(j, "private_key_id");
	uri = json_str(j, "token_uri");
	if (!email ||
	    oauth_copy_field(k->email, sizeof(k->email), email, strlen(email), "client_email", where,
			     err) < 0) {
		if (!email)
			errbuf_set(err, "%s: no string \"client_email\"", where);
		goto fail;
	}
	if (!strchr(k->email, '@')) {
		errbuf_set(err, "%s: client_email \"%.80s\" is not an email address", where, k->email);
		goto fail;
	}
	if (kid && oauth_copy_field(k->key_id, sizeof(k->key_id), kid, strlen(kid), "private_key_id",
				    where, err) < 0)
		goto fail;
	if (!uri)
		uri = GCE_AUTH_DEFAULT_TOKEN_URI;
	if (gce_auth_check_token_url(uri, err) < 0) {
		errbuf_prefix(err, "%s: token_uri", where);
		goto fail;
	}
	snprintf(k->token_uri, sizeof(k->token_uri), "%s", uri);
	if (!pem || !strstr(pem, "-----BEGIN")) {
		errbuf_set(err, "%s: no PEM \"private_key\"", where);
		goto fail;
	}
	snprintf(what, sizeof(what), "%s: private_key", where);
	k->pkey = jwt_rsa_key_from_pem(pem, MIN_RSA_BITS, what, err);
	if (!k->pkey)
		goto fail;
	oauth_json_delete(j);
	return k;
fail:
	oauth_json_delete(j);
	gce_jwt_key_free(k);
	return NULL;
}

struct gce_jwt_key *gce_jwt_key_load(const char *path, struct errbuf *err)
{
	struct buf b = BUF_INIT;
	struct gce_jwt_key *k;
	char where[1100];

	snprintf(where, sizeof(where), "service account key %s", path);
	if (buf_read_file(&b, path, KEY_FILE_MAX, err) < 0) {
		oauth_wipe_buf(&b);
		return NULL;
	}
	k = key_parse(b.data ? b.data : "", b.len, where, err);
	oauth_wipe_buf(&b);
	return k;
}

const char *gce_jwt_key_email(const struct gce_jwt_key *k)
{
	return k->email;
}

const char *gce_jwt_key_token_uri(const struct gce_jwt_key *k)
{
	return k->token_uri;
}

void gce_jwt_key_free(struct gce_jwt_key *k)
{
	if (!k)
		return;
	EVP_PKEY_free(k->pkey);
	credcache_wipe(k, sizeof(*k));
	free(k);
}

int gce_jwt_assertion(const struct gce_jwt_key *k, const char *aud, int64_t now,
		      const char *scope, struct buf *out, struct errbuf *err)
{
	struct buf hdr = BUF_INIT, claims = BUF_INIT;
	int rc;

	if (!aud)
		aud = k->token_uri;
	if (!scope || !*scope)
		scope = GCE_AUTH_DEFAULT_SCOPE;
	if (now < 0 || now > INT64_MAX / 2)
		return errbuf_set(err, "JWT: the time %lld is out of range", (long long)now);
	buf_puts(&hdr, "{\"alg\":\"RS256\",\"typ\":\"JWT\"");
	if (k->key_id[0]) {
		buf_puts(&hdr, ",\"kid\":");
		buf_json_string(&hdr, k->key_id);
	}
	buf_puts(&hdr, "}");
	buf_puts(&claims, "{\"iss\":");
	buf_json_string(&claims, k->email);
	buf_puts(&claims, ",\"scope\":");
	buf_json_string(&claims, scope);
	buf_puts(&claims, ",\"aud\":");
	buf_json_string(&claims, aud);
	buf_printf(&claims, ",\"iat\":%lld,\"exp\":%lld}", (long long)now,
		   (long long)(now + JWT_LIFETIME_S));
	rc = jwt_sign_rs256(k->pkey, &hdr, &claims, k->email, out, err);
	buf_free(&hdr);
	buf_free(&claims);
	return rc;
}

/* ---- fetching ---- */

static int fetch_key(struct gce_auth *a, char *out, size_t len, int64_t *expires_s,
		     char *full, size_t full_len, struct errbuf *err)
{
	struct buf jwt = BUF_INIT, body = BUF_INIT;
	char where[2400];
	int64_t now = clock_wall(a->clock);
	int rc = -1;

	snprintf(where, sizeof(where), "%s: token endpoint %s", a->where, a->token_url);
	if (gce_jwt_assertion(a->key, a->token_url, now, a->scope, &jwt, err) < 0) {
		errbuf_prefix(err, "%s", a->where);
		goto out;
	}
	oauth_form_jwt_bearer(&body, jwt.data);
	rc = oauth_request_token(a->http, a->token_url, &body, a->where, where, now, NULL, out,
				 len, expires_s, full, full_len, err);
out:
	oauth_wipe_buf(&jwt);
	oauth_wipe_buf(&body);
	return rc;
}

static int fetch_metadata(struct gce_auth *a, char *out, size_t len, int64_t *expires_s,
			  struct errbuf *err)
{
	struct cloudhttp_response r = { 0 };
	struct errbuf e = { "" };
	char where[1100], email[320];
	int64_t now = clock_wall(a->clock);
	long status;
	int rc = -1;

	snprintf(where, sizeof(where), "metadata server at %s", a->md.base);
	if (md_get(&a->md, MD_TOKEN_PATH, &r, &status, err) < 0) {
		if (status == 404)
			errbuf_set(err, "%s: this instance has no service account (attach one, or "
				   "set GOOGLE_APPLICATION_CREDENTIALS to a key)", where);
		goto out;
	}
	if (oauth_parse_token(r.body, where, now, NULL, out, len, expires_s, err) < 0)
		goto out;
	rc = 0;
	pthread_mutex_lock(&a->mu);
	email[0] = strcmp(a->account, "default") == 0 ? '\0' : 'x';
	pthread_mutex_unlock(&a->mu);
	if (!email[0]) {
		/* for the log only: a failure leaves "default" */
		if (md_text(&a->md, MD_EMAIL_PATH, "@.-_", email, sizeof(email), &e) == 0) {
			pthread_mutex_lock(&a->mu);
			snprintf(a->account, sizeof(a->account), "%s", email);
			pthread_mutex_unlock(&a->mu);
		} else {
			log_at(a->log, LOG_DEBUG, clock_wall(a->clock),
			       "gce: the metadata server's account email: %s", e.msg);
		}
	}
out:
	oauth_wipe_response(&r);
	return rc;
}

/* An oauth_fetch_fn: the token from the key or the metadata server, logged
 * (never the token). */
static int fetch(void *ud, char *out, size_t len, int64_t *expires_s, char *full,
		 size_t full_len, struct errbuf *err)
{
	struct gce_auth *a = ud;
	char ts[40], account[320];

	if ((a->kind == SRC_KEY ? fetch_key(a, out, len, expires_s, full, full_len, err)
				: fetch_metadata(a, out, len, expires_s, err)) < 0)
		return -1;
	gce_auth_account(a, account, sizeof(account));
	model_format_time(*expires_s, ts, sizeof(ts));
	log_at(a->log, LOG_INFO, clock_wall(a->clock),
	       "gce: access token from the %s (%s, account %s), expires %s", src_names[a->kind],
	       a->where, account, ts);
	return 0;
}

/* ---- the source ---- */

struct gce_auth *gce_auth_new(const struct gce_auth_opts *o, struct errbuf *err)
{
	struct oauth_source_opts so;
	struct gce_auth *a;
	const char *file, *scope;

	if (!o || !o->http) {
		errbuf_set(err, "gce auth: no HTTP client");
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (!a) {
		errbuf_set(err, "gce auth: out of memory");
		return NULL;
	}
	pthread_mutex_init(&a->mu, NULL);
	a->http = o->http;
	a->clock = o->clock ? o->clock : clock_real();
	a->log = o->log;
	scope = o->scope && *o->scope ? o->scope : GCE_AUTH_DEFAULT_SCOPE;
	if (strlen(scope) >= sizeof(a->scope) || !oauth_printable(scope, true)) {
		errbuf_set(err, "gce auth: the scope must be printable ASCII, at most %zu bytes",
			   sizeof(a->scope) - 1);
		goto fail;
	}
	snprintf(a->scope, sizeof(a->scope), "%s", scope);
	file = o->credentials_file && *o->credentials_file ? o->credentials_file : NULL;
	if (!file)
		file = oauth_env_get(o->env.get, o->env.ud, "GOOGLE_APPLICATION_CREDENTIALS");
	if (file) {
		a->kind = SRC_KEY;
		snprintf(a->where, sizeof(a->where), "service account key %s", file);
		a->key = gce_jwt_key_load(file, err);
		if (!a->key)
			goto fail;
		if (o->token_url && *o->token_url) {
			if (gce_auth_check_token_url(o->token_url, err) < 0) {
				errbuf_prefix(err, "gce auth: token_url");
				goto fail;
			}
			snprintf(a->token_url, sizeof(a->token_url), "%s", o->token_url);
		} else {
			snprintf(a->token_url, sizeof(a->token_url), "%s", a->key->token_uri);
		}
		snprintf(a->account, sizeof(a->account), "%s", a->key->email);
	} else {
		a->kind = SRC_METADATA;
		if (md_init(&a->md, o, err) < 0) {
			errbuf_prefix(err, "gce auth");
			goto fail;
		}
		snprintf(a->where, sizeof(a->where), "%s", a->md.base);
		snprintf(a->account, sizeof(a->account), "default");
	}
	memset(&so, 0, sizeof(so));
	so.name = "gce access token";
	so.who = "gce auth";
	so.token_max = GCE_AUTH_TOKEN_MAX;
	so.fetch = fetch;
	so.ud = a;
	so.advisory_s = GCE_AUTH_ADVISORY_S;
	so.mandatory_s = GCE_AUTH_MANDATORY_S;
	so.clock = a->clock;
	so.log = a->log;
	a->src = oauth_source_new(&so, err);
	if (!a->src)
		goto fail;
	log_at(a->log, LOG_INFO, clock_wall(a->clock), "gce: credentials from the %s (%s)",
	       src_names[a->kind], a->where);
	return a;
fail:
	gce_auth_free(a);
	return NULL;
}

struct oauth_source *gce_auth_bearer(struct gce_auth *a)
{
	return a->src;
}

const char *gce_auth_source(const struct gce_auth *a)
{
	return src_names[a->kind];
}

void gce_auth_account(struct gce_auth *a, char *out, size_t len)
{
	pthread_mutex_lock(&a->mu);
	snprintf(out, len, "%s", a->account);
	pthread_mutex_unlock(&a->mu);
}

void gce_auth_free(struct gce_auth *a)
{
	if (!a)
		return;
	oauth_source_free(a->src);
	gce_jwt_key_free(a->key);
	pthread_mutex_destroy(&a->mu);
	credcache_wipe(a, sizeof(*a));
	free(a);
}

/* ---- project and zone ---- */

int gce_metadata_project_zone(const struct gce_auth_opts *o, char *project, size_t project_len,
			      char *zone, size_t zone_len, struct errbuf *err)
{
	struct metadata_client m;
	char z[300];
	const char *slash;

	if (!o || md_init(&m, o, err) < 0)
		return o ? -1 : errbuf_set(err, "metadata server: no options");
	if (md_text(&m, MD_PROJECT_PATH, "-.:", project, project_len, err) < 0)
		return errbuf_prefix(err, "project id");
	if (md_text(&m, MD_ZONE_PATH, "-/", z, sizeof(z), err) < 0)
		return errbuf_prefix(err, "zone");
	slash = strrchr(z, '/');
	slash = slash ? slash + 1 : z;
	if (!*slash || strchr(slash, '/') || strlen(slash) >= zone_len ||
	    (strchr(z, '/') && !strstr(z, "/zones/")))
		return errbuf_set(err, "metadata server at %s: instance/zone \"%.100s\" is not "
				  "projects/NUMBER/zones/ZONE", m.base, z);
	snprintf(zone, zone_len, "%s", slash);
	return 0;
}
