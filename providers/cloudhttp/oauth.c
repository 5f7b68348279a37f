/*
 * oauth: the OAuth 2.0 pieces the clouds' token sources share — endpoint
 * checks, credential fields, secret and token files, the grants' forms and
 * their POST to a token endpoint, token answers, OAuth error answers, the
 * cached token and its last error. Which grant, endpoint and answer rules are the provider's.
 * Never logs or quotes a token, a secret or an assertion.
 */
#include "providers/cloudhttp/oauth.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "providers/cloudhttp/cloudhttp.h"
#include "providers/cloudhttp/credcache.h"
#include "providers/provider.h"

#define SECRET_FILE_MAX (64 * 1024)
#define MAX_LIFETIME_S (7 * 24 * 3600)

struct oauth_source {
	struct credcache *cache;
	oauth_fetch_fn fetch;
	void *ud;
	size_t token_max;
	char who[64];
	pthread_mutex_t mu;                    /* guards 'last_error' */
	char last_error[PROVIDER_MESSAGE_MAX]; /* the last failed fetch, whole; "" after a success */
};

/* ---- wiping ---- */

void oauth_wipe_response(struct cloudhttp_response *r)
{
	if (r->body)
		credcache_wipe(r->body, r->body_len);
	cloudhttp_response_free(r);
}

void oauth_wipe_buf(struct buf *b)
{
	if (b->data)
		credcache_wipe(b->data, b->cap ? b->cap : b->len);
	buf_free(b);
}

static void wipe_json(cJSON *j)
{
	cJSON *c;

	if (!j)
		return;
	if (cJSON_IsString(j) && j->valuestring)
		credcache_wipe(j->valuestring, strlen(j->valuestring));
	for (c = j->child; c; c = c->next)
		wipe_json(c);
}

void oauth_json_delete(cJSON *j)
{
	wipe_json(j);
	cJSON_Delete(j);
}

cJSON *oauth_json_object(const char *body, const char *where, struct errbuf *err)
{
	cJSON *j = body ? cJSON_Parse(body) : NULL;

	if (j && cJSON_IsObject(j))
		return j;
	oauth_json_delete(j);
	errbuf_set(err, "%s: the answer is not a JSON object", where);
	return NULL;
}

/* ---- settings ---- */

const char *oauth_env_get(const char *(*get)(void *ud, const char *name), void *ud,
			  const char *name)
{
	const char *v = get ? get(ud, name) : getenv(name);

	return v && *v ? v : NULL;
}

/* ---- checks ---- */

bool oauth_printable(const char *s, bool spaces)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch < 0x20 || ch >= 0x7f || (!spaces && ch == ' '))
			return false;
	}
	return true;
}

bool oauth_loopback_host(const char *host)
{
	unsigned char a4[4], a6[16];
	static const unsigned char loop6[16] = { [15] = 1 };

	if (strcasecmp(host, "localhost") == 0)
		return true;
	if (inet_pton(AF_INET, host, a4) == 1)
		return a4[0] == 127;
	if (inet_pton(AF_INET6, host, a6) == 1)
		return memcmp(a6, loop6, 16) == 0;
	return false;
}

int oauth_check_url(const char *url, const char *what, bool link_local, struct errbuf *err)
{
	struct cloudhttp_url u;

	if (!url || !*url)
		return errbuf_set(err, "%s: the URL is empty", what);
	if (!oauth_printable(url, false))
		return errbuf_set(err, "%s: the URL holds a space or a control character", what);
	if (cloudhttp_url_parse(url, &u, err) < 0)
		return errbuf_prefix(err, "%s", what);
	if (u.query || strchr(url, '#'))
		return errbuf_set(err, "%s: %s must have no query or fragment", what, url);
	if (!u.host[0])
		return errbuf_set(err, "%s: %s has no host", what, url);
	if (strcmp(u.scheme, "https") != 0 && !oauth_loopback_host(u.host) &&
	    !(link_local && !strcmp(u.host, "169.254.169.254")))
		return errbuf_set(err, "%s: %s must be https (http only to a loopback address, for a "
				  "local simulator%s)", what, url,
				  link_local ? ", or to the metadata service at 169.254.169.254" : "");
	return 0;
}

int oauth_check_field(const char *v, size_t n, size_t len, const char *what, const char *where,
		      struct errbuf *err)
{
	size_t i;

	if (n == 0)
		return errbuf_set(err, "%s: %s is empty", where, what);
	if (n >= len)
		return errbuf_set(err, "%s: %s is longer than %zu bytes", where, what, len - 1);
	for (i = 0; i < n; i++)
		if ((unsigned char)v[i] <= 0x20 || (unsigned char)v[i] >= 0x7f)
			return errbuf_set(err, "%s: %s holds a character that is not printable ASCII",
					  where, what);
	return 0;
}

int oauth_copy_field(char *out, size_t len, const char *v, size_t n, const char *what,
		     const char *where, struct errbuf *err)
{
	if (oauth_check_field(v, n, len, what, where, err) < 0)
		return -1;
	memmove(out, v, n);
	out[n] = '\0';
	return 0;
}

int oauth_read_secret_file(const char *path, const char *what, struct buf *out,
			   struct errbuf *err)
{
	size_t s = 0, n;

	if (buf_read_file(out, path, SECRET_FILE_MAX, err) < 0)
		return errbuf_prefix(err, "%s", what);
	n = out->len;
	while (s < n && isspace((unsigned char)out->data[s]))
		s++;
	while (n > s && isspace((unsigned char)out->data[n - 1]))
		n--;
	if (n == s)
		return errbuf_set(err, "%s %s is empty", what, path);
	memmove(out->data, out->data + s, n - s);
	out->data[n - s] = '\0';
	out->len = n - s;
	if (!oauth_printable(out->data, false))
		return errbuf_set(err, "%s %s holds a space or a character that is not printable ASCII",
				  what, path);
	return 0;
}

int oauth_read_token_file(const char *path, const char *what, struct buf *out,
			  struct errbuf *err)
{
	size_t i;

	if (buf_read_file(out, path, SECRET_FILE_MAX, err) < 0)
		return errbuf_prefix(err, "%s", what);
	while (out->len > 0 && isspace((unsigned char)out->data[out->len - 1]))
		out->data[--out->len] = '\0';
	if (out->len == 0)
		return errbuf_set(err, "%s: %s is empty", what, path);
	for (i = 0; i < out->len; i++)
		if ((unsigned char)out->data[i] < 0x20 || out->data[i] == 0x7f)
			return errbuf_set(err, "%s: %s holds a control character (a token is one line)",
					  what, path);
	return 0;
}

/* ---- token requests ---- */

void oauth_form_add(struct buf *b, const char *name, const char *value)
{
	if (b->len)
		buf_puts(b, "&");
	buf_puts(b, name);
	buf_puts(b, "=");
	cloudhttp_escape(b, value);
}

void oauth_form_jwt_bearer(struct buf *b, const char *assertion)
{
	oauth_form_add(b, "grant_type", OAUTH_JWT_BEARER_GRANT);
	oauth_form_add(b, "assertion", assertion);
}

void oauth_form_client_credentials(struct buf *b, const char *client_id, const char *scope,
				   const char *secret, const char *assertion)
{
	oauth_form_add(b, "grant_type", "client_credentials");
	oauth_form_add(b, "client_id", client_id);
	oauth_form_add(b, "scope", scope);
	if (secret) {
		oauth_form_add(b, "client_secret", secret);
	} else {
		oauth_form_add(b, "client_assertion_type", OAUTH_CLIENT_ASSERTION_TYPE);
		oauth_form_add(b, "client_assertion", assertion);
	}
}

int oauth_post_form(struct cloudhttp *http, const char *url, const struct buf *form,
		    const char *who, const char *where, struct cloudhttp_response *r, char *full,
		    size_t full_len, struct errbuf *err)
{
	struct cloudhttp_headers h = CLOUDHTTP_HEADERS_INIT;
	struct cloudhttp_request rq;
	int rc = -1;

	if (form->oom ||
	    cloudhttp_headers_add(&h, "Content-Type", "application/x-www-form-urlencoded") < 0 ||
	    cloudhttp_headers_add(&h, "Accept", "application/json") < 0) {
		errbuf_set(err, "%s: out of memory", where);
		goto out;
	}
	memset(&rq, 0, sizeof(rq));
	rq.method = "POST";
	rq.url = url;
	rq.headers = &h;
	rq.body = form->data;
	rq.body_len = form->len;
	if (cloudhttp_call(http, &rq, r, err) < 0) {
		errbuf_prefix(err, "%s", who);
		goto out;
	}
	if (r->status != 200) {
		oauth_error(r, where, NULL, full, full_len, err);
		goto out;
	}
	rc = 0;
out:
	cloudhttp_headers_free(&h);
	return rc;
}

void oauth_error(const struct cloudhttp_response *r, const char *where, const char *note,
		 char *full, size_t len, struct errbuf *err)
{
	cJSON *j = r->body ? cJSON_Parse(r->body) : NULL;
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(j, "error_description");
	const char *code = NULL, *msg = NULL, *oauth = "";
	char ctx[1800], aad[24];

	if (cJSON_IsString(e)) {
		size_t n = 6;

		code = oauth = e->valuestring;
		msg = cJSON_IsString(d) ? d->valuestring : NULL;
		/* "AADSTS7000215: Invalid client secret ...": Entra's code leads */
		if (msg && !strncmp(msg, "AADSTS", 6)) {
			while (isdigit((unsigned char)msg[n]))
				n++;
			if (n > 6 && n < sizeof(aad) && msg[n] == ':') {
				snprintf(aad, sizeof(aad), "%.*s", (int)n, msg);
				code = aad;
			}
		}
	} else if (cJSON_IsObject(e)) {
		/* an API error: Google's {"code":403,"message":..,"status":"PERMISSION_DENIED"},
		 * Azure's {"code":"...","message":...} */
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(e, "status");
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(e, "code");
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(e, "message");

		code = cJSON_IsString(st) ? st->valuestring : cJSON_IsString(c) ? c->valuestring : NULL;
		msg = cJSON_IsString(m) ? m->valuestring : NULL;
	}
	snprintf(ctx, sizeof(ctx), "%.1600s: HTTP %ld%s%.64s%s%.100s", where, r->status,
		 code == aad ? " " : "", code == aad ? oauth : "", note ? "; " : "", note ? note : "");
	provider_cloud_message(full, len, code, msg, ctx);
	errbuf_set(err, "%s", full);
	oauth_json_delete(j);
}

/* ---- token answers ---- */

/* A number or, when 'strings', a string of digits (Azure's metadata
 * service writes "expires_in": "86399"). */
static bool number_of(const cJSON *v, bool strings, double *out)
{
	char *end;

	if (cJSON_IsNumber(v)) {
		*out = v->valuedouble;
		return true;
	}
	if (strings && cJSON_IsString(v) && v->valuestring[0] && strlen(v->valuestring) < 20) {
		*out = strtod(v->valuestring, &end);
		return *end == '\0';
	}
	return false;
}

/* Trailing slashes do not make another audience. */
static bool same_resource(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);

	while (na && a[na - 1] == '/')
		na--;
	while (nb && b[nb - 1] == '/')
		nb--;
	return na == nb && !strncasecmp(a, b, na);
}

int oauth_parse_token(const char *body, const char *where, int64_t now,
		      const struct oauth_token_rules *rules, char *out, size_t len,
		      int64_t *expires_s, struct errbuf *err)
{
	static const struct oauth_token_rules none;
	cJSON *j = oauth_json_object(body, where, err);
	const cJSON *tok, *type, *res, *cid;
	double e;
	int rc = -1;

	if (!rules)
		rules = &none;
	if (!j)
		goto out;
	tok = cJSON_GetObjectItemCaseSensitive(j, "access_token");
	type = cJSON_GetObjectItemCaseSensitive(j, "token_type");
	res = cJSON_GetObjectItemCaseSensitive(j, "resource");
	cid = cJSON_GetObjectItemCaseSensitive(j, "client_id");
	if (!cJSON_IsString(tok) || !tok->valuestring[0]) {
		errbuf_set(err, "%s: the answer has no string access_token", where);
		goto out;
	}
	if ((type || rules->type_required) &&
	    (!cJSON_IsString(type) || strcasecmp(type->valuestring, "Bearer") != 0)) {
		errbuf_set(err, "%s: token_type is not \"Bearer\"", where);
		goto out;
	}
	if (rules->resource && cJSON_IsString(res) && !same_resource(res->valuestring, rules->resource)) {
		errbuf_set(err, "%s: the token is for %.100s, not %s: refused", where, res->valuestring,
			   rules->resource);
		goto out;
	}
	if (rules->client_id && rules->client_id[0] && cJSON_IsString(cid) &&
	    strcasecmp(cid->valuestring, rules->client_id)) {
		errbuf_set(err, "%s: the token is for identity %.64s, not %s: refused", where,
			   cid->valuestring, rules->client_id);
		goto out;
	}
	if (number_of(cJSON_GetObjectItemCaseSensitive(j, "expires_in"), rules->expires_on, &e)) {
		/* seconds from now */
	} else if (rules->expires_on &&
		   number_of(cJSON_GetObjectItemCaseSensitive(j, "expires_on"), true, &e)) {
		e -= (double)now;
	} else {
		errbuf_set(err, "%s: the answer has %s", where, rules->expires_on ?
			   "neither expires_in nor expires_on" : "no number expires_in");
		goto out;
	}
	if (!(e >= 1 && e <= MAX_LIFETIME_S)) {
		errbuf_set(err, "%s: the token's lifetime %.0f s is not between 1 s and 7 days", where, e);
		goto out;
	}
	if (strlen(tok->valuestring) >= len || !oauth_printable(tok->valuestring, false)) {
		errbuf_set(err, "%s: the access_token is longer than %zu bytes or not printable ASCII",
			   where, len - 1);
		goto out;
	}
	snprintf(out, len, "%s", tok->valuestring);
	*expires_s = now + (int64_t)e;
	rc = 0;
out:
	oauth_json_delete(j);
	return rc;
}

int oauth_request_token(struct cloudhttp *http, const char *url, const struct buf *form,
			const char *who, const char *where, int64_t now,
			const struct oauth_token_rules *rules, char *out, size_t len,
			int64_t *expires_s, char *full, size_t full_len, struct errbuf *err)
{
	struct cloudhttp_response r = { 0 };
	int rc = -1;

	if (oauth_post_form(http, url, form, who, where, &r, full, full_len, err) == 0 &&
	    oauth_parse_token(r.body, where, now, rules, out, len, expires_s, err) == 0)
		rc = 0;
	oauth_wipe_response(&r);
	return rc;
}

/* ---- the cached token ---- */

static int refresh(void *ud, void *value, int64_t *expires_s, struct errbuf *err)
{
	struct oauth_source *s = ud;
	char full[PROVIDER_MESSAGE_MAX] = "";
	int rc;

	rc = s->fetch(s->ud, value, s->token_max, expires_s, full, sizeof(full), err);
	pthread_mutex_lock(&s->mu);
	snprintf(s->last_error, sizeof(s->last_error), "%s", rc < 0 ? (full[0] ? full : err->msg) : "");
	pthread_mutex_unlock(&s->mu);
	if (rc < 0) {
		credcache_wipe(value, s->token_max);
		return -1;
	}
	return 0;
}

struct oauth_source *oauth_source_new(const struct oauth_source_opts *o, struct errbuf *err)
{
	struct credcache_opts co;
	struct oauth_source *s;

	if (!o || !o->fetch || !o->token_max || o->token_max > OAUTH_TOKEN_LIMIT) {
		errbuf_set(err, "oauth: no fetch or a token size not in 1-%d", OAUTH_TOKEN_LIMIT);
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		errbuf_set(err, "%s: out of memory", o->who ? o->who : "oauth");
		return NULL;
	}
	pthread_mutex_init(&s->mu, NULL);
	s->fetch = o->fetch;
	s->ud = o->ud;
	s->token_max = o->token_max;
	snprintf(s->who, sizeof(s->who), "%s", o->who ? o->who : "oauth");
	memset(&co, 0, sizeof(co));
	co.name = o->name;
	co.value_size = o->token_max;
	co.refresh = refresh;
	co.ud = s;
	co.advisory_s = o->advisory_s;
	co.mandatory_s = o->mandatory_s;
	co.clock = o->clock;
	co.log = o->log;
	s->cache = credcache_new(&co, err);
	if (!s->cache) {
		oauth_source_free(s);
		return NULL;
	}
	return s;
}

int oauth_source_token(struct oauth_source *s, char *out, size_t len, int64_t *expires_s,
		       struct errbuf *err)
{
	char t[OAUTH_TOKEN_LIMIT];
	int64_t exp = 0;
	size_t n;
	int rc = -1;

	if (credcache_get(s->cache, t, &exp, err) < 0)
		goto out;
	n = strnlen(t, s->token_max);
	if (n >= len || n >= s->token_max) {
		errbuf_set(err, "%s: the access token (%zu bytes) does not fit in %zu", s->who, n, len);
		goto out;
	}
	memcpy(out, t, n + 1);
	if (expires_s)
		*expires_s = exp;
	rc = 0;
out:
	credcache_wipe(t, sizeof(t));
	return rc;
}

int oauth_source_prepare(struct oauth_source *s, struct cloudhttp_headers *extra,
			 struct errbuf *err)
{
	char tok[OAUTH_TOKEN_LIMIT + 1];
	int rc;

	if (oauth_source_token(s, tok, sizeof(tok), NULL, err) < 0) {
		credcache_wipe(tok, sizeof(tok));
		return -1;
	}
	rc = cloudhttp_headers_set_bearer(extra, tok);
	credcache_wipe(tok, sizeof(tok));
	if (rc < 0)
		return errbuf_set(err, "%s: the access token is not a valid header value", s->who);
	return 0;
}

void oauth_source_last_error(struct oauth_source *s, char *out, size_t len)
{
	pthread_mutex_lock(&s->mu);
	snprintf(out, len, "%s", s->last_error);
	pthread_mutex_unlock(&s->mu);
}

void oauth_source_invalidate(struct oauth_source *s)
{
	credcache_invalidate(s->cache);
}

void oauth_source_free(struct oauth_source *s)
{
	if (!s)
		return;
	credcache_free(s->cache);
	pthread_mutex_destroy(&s->mu);
	credcache_wipe(s, sizeof(*s));
	free(s);
}
