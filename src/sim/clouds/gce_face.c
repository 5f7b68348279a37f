/*
 * sim/gce_face: the GCE wire over sim/clouds/cloud_gce.c — compute v1 JSON
 * (cJSON), Google's error shape, Bearer tokens from a JWT-bearer token
 * endpoint and a metadata server, the service-account key it verifies.
 */
#include "sim/clouds/gce_face.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <microhttpd.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <pthread.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "sim/clouds/face_http.h"
#include "sim/clouds/gce_pricing_face.h"
#include "runtime/backoff.h"
#include "runtime/clock.h"

#define MAX_BODY FACE_HTTP_MAX_BODY
#define GOOGLE_ROOT "https://www.googleapis.com/compute/v1/projects/"
#define MAX_PAGE 500

struct gce_face {
	struct gce_face_opts o;
	struct sim_gce *gce;
	struct sim_cloud *cloud;
	const struct sim_gce_conf *conf;
	struct face_http *http;
	int port;
	pthread_mutex_t mu; /* rng */
	uint64_t rng;
	EVP_PKEY *key;
	char key_id[41];
	char client_id[24];
	char token_uri[64];
	struct face_tokens tokens;
};

/* One request being answered. */
struct greq {
	struct gce_face *f;
	struct MHD_Connection *conn;
	int code;
	struct buf body;
	const char *content_type;
	bool metadata;       /* answer with Metadata-Flavor: Google */
	bool www_auth;
	bool drop;           /* a lost_answer fault: close without answering */
	int retry_after_s;   /* > 0: a Retry-After header */
};

/* ---- small pieces ---- */

static int64_t real_wall(void)
{
	return (int64_t)time(NULL);
}

static uint64_t face_rand(struct gce_face *f)
{
	uint64_t r;

	pthread_mutex_lock(&f->mu);
	r = backoff_rand(&f->rng);
	pthread_mutex_unlock(&f->mu);
	return r;
}

static void iso(int64_t wall, char *out, size_t size)
{
	time_t t = (time_t)wall;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, size, "%Y-%m-%dT%H:%M:%S.000-00:00", &tm);
}

static uint64_t fnv(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

/* A resource's numeric id (uint64 as a string, as the API sends it). */
static void add_id(cJSON *o, const char *seed)
{
	char id[24];

	snprintf(id, sizeof(id), "%llu", (unsigned long long)(fnv(seed) >> 1));
	cJSON_AddStringToObject(o, "id", id);
}

static void reply_json(struct greq *r, int code, cJSON *o)
{
	char *s = o ? cJSON_PrintUnformatted(o) : NULL;

	r->code = code;
	r->content_type = "application/json; charset=UTF-8";
	r->body.len = 0;
	if (s)
		buf_puts(&r->body, s);
	free(s);
	cJSON_Delete(o);
}

static const char *status_name(int code)
{
	switch (code) {
	case 400: return "INVALID_ARGUMENT";
	case 401: return "UNAUTHENTICATED";
	case 403: return "PERMISSION_DENIED";
	case 404: return "NOT_FOUND";
	case 405: return "INVALID_ARGUMENT";
	case 409: return "ALREADY_EXISTS";
	case 413: return "INVALID_ARGUMENT";
	case 429: return "RESOURCE_EXHAUSTED";
	default: return "INTERNAL";
	}
}

/* Google's error shape. */
static void fail(struct greq *r, int code, const char *reason, const char *domain,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void fail(struct greq *r, int code, const char *reason, const char *domain,
		 const char *fmt, ...)
{
	cJSON *root = cJSON_CreateObject(), *e = cJSON_AddObjectToObject(root, "error");
	cJSON *errs = cJSON_AddArrayToObject(e, "errors"), *one = cJSON_CreateObject();
	char msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cJSON_AddNumberToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", msg);
	cJSON_AddStringToObject(one, "message", msg);
	cJSON_AddStringToObject(one, "domain", domain);
	cJSON_AddStringToObject(one, "reason", reason);
	cJSON_AddItemToArray(errs, one);
	cJSON_AddStringToObject(e, "status", status_name(code));
	reply_json(r, code, root);
}

static void text_reply(struct greq *r, int code, const char *text)
{
	r->code = code;
	r->content_type = "application/text";
	r->body.len = 0;
	buf_puts(&r->body, text);
}

static const char *query(struct greq *r, const char *key)
{
	return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, key);
}

/* ---- base64url and the JWT bearer grant ---- */

long gce_b64url_decode(const char *in, size_t len, unsigned char *out, size_t cap)
{
	uint32_t acc = 0;
	size_t i, n = 0;
	int bits = 0;

	while (len && in[len - 1] == '=')
		len--;
	if (len % 4 == 1)
		return -1;
	for (i = 0; i < len; i++) {
		char c = in[i];
		int v;

		if (c >= 'A' && c <= 'Z')
			v = c - 'A';
		else if (c >= 'a' && c <= 'z')
			v = c - 'a' + 26;
		else if (c >= '0' && c <= '9')
			v = c - '0' + 52;
		else if (c == '-')
			v = 62;
		else if (c == '_')
			v = 63;
		else
			return -1;
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n == cap)
				return -1;
			out[n++] = (unsigned char)((acc >> bits) & 0xff);
		}
	}
	return (long)n;
}

/* Decodes one JWT part as a JSON object. */
static cJSON *jwt_part(const char *s, size_t len)
{
	unsigned char tmp[8192];
	long n;

	if (len > 10000)
		return NULL;
	n = gce_b64url_decode(s, len, tmp, sizeof(tmp) - 1);
	if (n < 0)
		return NULL;
	tmp[n] = '\0';
	if (strlen((char *)tmp) != (size_t)n)
		return NULL;
	return cJSON_Parse((char *)tmp);
}

static int num_claim(const cJSON *c, const char *name, int64_t *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, name);

	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 1e12)
		return -1;
	*out = (int64_t)v->valuedouble;
	return 0;
}

int gce_jwt_verify(EVP_PKEY *pub, const char *jwt, const struct gce_jwt_want *w, char *scope,
		   size_t scope_size, struct errbuf *err)
{
	const char *d1 = jwt ? strchr(jwt, '.') : NULL, *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
	cJSON *h = NULL, *c = NULL;
	const cJSON *v;
	unsigned char sig[1024];
	long sig_len;
	int64_t iat, exp;
	EVP_MD_CTX *md = NULL;
	int rc = -1;

	if (scope_size)
		scope[0] = '\0';
	if (!d1 || !d2 || strchr(d2 + 1, '.'))
		return errbuf_set(err, "the assertion is not a JWT (three dot-separated parts)");
	h = jwt_part(jwt, (size_t)(d1 - jwt));
	c = jwt_part(d1 + 1, (size_t)(d2 - d1 - 1));
	if (!cJSON_IsObject(h) || !cJSON_IsObject(c)) {
		errbuf_set(err, "the assertion's header or claims are not base64url JSON objects");
		goto out;
	}
	v = cJSON_GetObjectItemCaseSensitive(h, "alg");
	if (!cJSON_IsString(v) || strcmp(v->valuestring, "RS256") != 0) {
		errbuf_set(err, "the assertion's alg must be RS256");
		goto out;
	}
	v = cJSON_GetObjectItemCaseSensitive(h, "kid");
	if (v && (!cJSON_IsString(v) || (w->kid && strcmp(v->valuestring, w->kid) != 0))) {
		errbuf_set(err, "the assertion's kid names no key of this service account");
		goto out;
	}
	v = cJSON_GetObjectItemCaseSensitive(c, "iss");
	if (!cJSON_IsString(v) || strcmp(v->valuestring, w->iss) != 0) {
		errbuf_set(err, "Invalid JWT: iss is not the service account's email");
		goto out;
	}
	v = cJSON_GetObjectItemCaseSensitive(c, "aud");
	if (!cJSON_IsString(v) || strcmp(v->valuestring, w->aud) != 0) {
		errbuf_set(err, "Invalid JWT: aud must be the token endpoint %s", w->aud);
		goto out;
	}
	if (num_claim(c, "iat", &iat) < 0 || num_claim(c, "exp", &exp) < 0) {
		errbuf_set(err, "Invalid JWT: iat and exp must be numbers");
		goto out;
	}
	if (iat > w->now + 300 || exp <= w->now || exp < iat || exp - iat > 3600) {
		errbuf_set(err, "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.");
		goto out;
	}
	v = cJSON_GetObjectItemCaseSensitive(c, "scope");
	if (cJSON_IsString(v) && scope_size)
		snprintf(scope, scope_size, "%s", v->valuestring);
	sig_len = gce_b64url_decode(d2 + 1, strlen(d2 + 1), sig, sizeof(sig));
	md = EVP_MD_CTX_new();
	if (sig_len <= 0 || !md ||
	    EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, pub) != 1 ||
	    EVP_DigestVerify(md, sig, (size_t)sig_len, (const unsigned char *)jwt,
			     (size_t)(d2 - jwt)) != 1) {
		errbuf_set(err, "Invalid JWT Signature.");
		goto out;
	}
	rc = 0;
out:
	EVP_MD_CTX_free(md);
	cJSON_Delete(h);
	cJSON_Delete(c);
	return rc;
}

/* ---- tokens ---- */

static void issue_token(struct gce_face *f, char *out, size_t size)
{
	face_tokens_issue(&f->tokens, "ya29.sim", f->conf->token_ttl_s, out, size);
}

static bool token_ok(struct gce_face *f, const char *auth)
{
	if (!auth || strncmp(auth, "Bearer ", 7) != 0)
		return false;
	return face_tokens_check(&f->tokens, auth + 7) == 0;
}

static void token_json(struct greq *r)
{
	cJSON *o = cJSON_CreateObject();
	char tok[80];

	issue_token(r->f, tok, sizeof(tok));
	cJSON_AddStringToObject(o, "access_token", tok);
	cJSON_AddNumberToObject(o, "expires_in", (double)r->f->conf->token_ttl_s);
	cJSON_AddStringToObject(o, "token_type", "Bearer");
	reply_json(r, 200, o);
}

static void handle_token(struct greq *r, const char *body)
{
	char *assertion = malloc(MAX_BODY);
	char gt[128], scope[512];
	struct gce_jwt_want w;
	struct errbuf err;
	cJSON *o;

	if (!assertion) {
		fail(r, 500, "internalError", "global", "out of memory");
		return;
	}
	if (!face_form_value(body, "grant_type", gt, sizeof(gt)) ||
	    strcmp(gt, "urn:ietf:params:oauth:grant-type:jwt-bearer") != 0) {
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "error", "unsupported_grant_type");
		cJSON_AddStringToObject(o, "error_description", "Invalid grant_type.");
		reply_json(r, 400, o);
		free(assertion);
		return;
	}
	memset(&w, 0, sizeof(w));
	w.aud = r->f->token_uri;
	w.iss = r->f->conf->service_account;
	w.kid = r->f->key_id;
	w.now = real_wall();
	if (!face_form_value(body, "assertion", assertion, MAX_BODY) ||
	    gce_jwt_verify(r->f->key, assertion, &w, scope, sizeof(scope), &err) < 0) {
		if (!face_form_value(body, "assertion", assertion, MAX_BODY))
			errbuf_set(&err, "No assertion given.");
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "error", "invalid_grant");
		cJSON_AddStringToObject(o, "error_description", err.msg);
		reply_json(r, 400, o);
		log_at(r->f->o.log, LOG_DEBUG, real_wall(), "sim gce: token refused: %s", err.msg);
		free(assertion);
		return;
	}
	free(assertion);
	token_json(r);
}

/* ---- the metadata server ---- */

static void handle_metadata(struct greq *r, const char *url)
{
	const char *flavor = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Metadata-Flavor");
	const char *p = url + strlen("/computeMetadata/v1");
	const struct sim_gce_group *g0 = r->f->conf->n_groups ? &r->f->conf->groups[0] : NULL;
	char text[256];

	r->metadata = true;
	if (!flavor || strcmp(flavor, "Google") != 0) {
		text_reply(r, 403, "Missing required header \"Metadata-Flavor\": \"Google\"\n");
		return;
	}
	if (MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "X-Forwarded-For")) {
		text_reply(r, 403, "Request denied: X-Forwarded-For\n");
		return;
	}
	if (strcmp(p, "/instance/service-accounts/default/token") == 0) {
		token_json(r);
	} else if (strcmp(p, "/instance/service-accounts/default/email") == 0) {
		text_reply(r, 200, r->f->conf->service_account);
	} else if (strcmp(p, "/project/project-id") == 0) {
		text_reply(r, 200, r->f->conf->project);
	} else if (strcmp(p, "/project/numeric-project-id") == 0) {
		text_reply(r, 200, r->f->conf->project_number);
	} else if (strcmp(p, "/instance/zone") == 0) {
		snprintf(text, sizeof(text), "projects/%s/zones/%s", r->f->conf->project_number,
			 g0 ? g0->zones[0] : "us-central1-a");
		text_reply(r, 200, text);
	} else if (strcmp(p, "/") == 0 || !*p) {
		text_reply(r, 200, "instance/\nproject/\n");
	} else {
		text_reply(r, 404, "Not Found\n");
	}
}

/* ---- compute: shapes ---- */

/* "zones/Z" or "regions/R" of group gi. */
static void location(const struct sim_gce_group *g, char *out, size_t size)
{
	snprintf(out, size, "%s/%s", g->regional ? "regions" : "zones",
		 g->regional ? g->region : g->zones[0]);
}

static void glink(const struct gce_face *f, char *out, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void glink(const struct gce_face *f, char *out, size_t size, const char *fmt, ...)
{
	char tail[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tail, sizeof(tail), fmt, ap);
	va_end(ap);
	snprintf(out, size, GOOGLE_ROOT "%s/%s", f->conf->project, tail);
}

static void add_link(cJSON *o, const char *key, const struct gce_face *f, const char *fmt,
		     const char *a, const char *b)
{
	char tail[400], url[600];

	snprintf(tail, sizeof(tail), fmt, a, b);
	glink(f, url, sizeof(url), "%s", tail);
	cJSON_AddStringToObject(o, key, url);
}

static cJSON *mig_json(struct gce_face *f, size_t i)
{
	const struct sim_gce_group *g = sim_gce_group(f->gce, i);
	cJSON *o = cJSON_CreateObject(), *ca, *st, *vt, *vs, *v;
	char loc[64], seed[160], ts[48], tmpl[256];
	int none, creating, deleting;
	size_t k;

	location(g, loc, sizeof(loc));
	snprintf(seed, sizeof(seed), "igm/%s/%s", loc, g->mig);
	sim_gce_actions(f->gce, i, &none, &creating, &deleting);
	cJSON_AddStringToObject(o, "kind", "compute#instanceGroupManager");
	add_id(o, seed);
	iso(real_wall() - 86400, ts, sizeof(ts));
	cJSON_AddStringToObject(o, "creationTimestamp", ts);
	cJSON_AddStringToObject(o, "name", g->mig);
	if (g->regional) {
		cJSON *dp = cJSON_AddObjectToObject(o, "distributionPolicy");
		cJSON *zs = cJSON_AddArrayToObject(dp, "zones");

		add_link(o, "region", f, "regions/%s%s", g->region, "");
		for (k = 0; k < g->n_zones; k++) {
			cJSON *z = cJSON_CreateObject();

			add_link(z, "zone", f, "zones/%s%s", g->zones[k], "");
			cJSON_AddItemToArray(zs, z);
		}
		cJSON_AddStringToObject(dp, "targetShape", "EVEN");
	} else {
		add_link(o, "zone", f, "zones/%s%s", g->zones[0], "");
	}
	sim_gce_template_of(f->gce, i, NULL, tmpl, sizeof(tmpl));
	add_link(o, "instanceTemplate", f, "global/instanceTemplates/%s%s", tmpl, "");
	vs = cJSON_AddArrayToObject(o, "versions");
	v = cJSON_CreateObject();
	add_link(v, "instanceTemplate", f, "global/instanceTemplates/%s%s", tmpl, "");
	cJSON_AddItemToArray(vs, v);
	{
		char ig[200];

		snprintf(ig, sizeof(ig), "%s/instanceGroups/%s", loc, g->mig);
		add_link(o, "instanceGroup", f, "%s%s", ig, "");
	}
	cJSON_AddStringToObject(o, "baseInstanceName", g->base_name);
	cJSON_AddStringToObject(o, "fingerprint", "c2ltLWZpbmdlcnA=");
	ca = cJSON_AddObjectToObject(o, "currentActions");
	cJSON_AddNumberToObject(ca, "none", none);
	cJSON_AddNumberToObject(ca, "creating", creating);
	cJSON_AddNumberToObject(ca, "creatingWithoutRetries", 0);
	cJSON_AddNumberToObject(ca, "verifying", 0);
	cJSON_AddNumberToObject(ca, "recreating", 0);
	cJSON_AddNumberToObject(ca, "deleting", deleting);
	cJSON_AddNumberToObject(ca, "abandoning", 0);
	cJSON_AddNumberToObject(ca, "restarting", 0);
	cJSON_AddNumberToObject(ca, "refreshing", 0);
	st = cJSON_AddObjectToObject(o, "status");
	cJSON_AddBoolToObject(st, "isStable", creating == 0 && deleting == 0);
	vt = cJSON_AddObjectToObject(st, "versionTarget");
	cJSON_AddBoolToObject(vt, "isReached", true);
	cJSON_AddNumberToObject(o, "targetSize", sim_gce_target_size(f->gce, i));
	cJSON_AddStringToObject(o, "listManagedInstancesResults", "PAGINATED");
	{
		char self[200];

		snprintf(self, sizeof(self), "%s/instanceGroupManagers/%s", loc, g->mig);
		add_link(o, "selfLink", f, "%s%s", self, "");
	}
	return o;
}

static const char *instance_status(const struct sim_gce_mi *mi)
{
	if (!mi->in)
		return NULL;
	switch (mi->in->state) {
	case INSTANCE_PENDING: return "PROVISIONING";
	case INSTANCE_RUNNING: return "RUNNING"; /* a stuck one too: only its node never comes */
	case INSTANCE_STOPPING: return "STOPPING";
	default: return "TERMINATED";
	}
}

static cJSON *mi_json(struct gce_face *f, size_t gi, const struct sim_gce_mi *mi)
{
	cJSON *o = cJSON_CreateObject(), *v;
	static const char *const actions[] = {"NONE", "CREATING", "DELETING"};
	const char *status = instance_status(mi);
	char tmpl[256];

	add_link(o, "instance", f, "zones/%s/instances/%s", mi->zone, mi->name);
	cJSON_AddStringToObject(o, "name", mi->name);
	if (mi->in)
		add_id(o, mi->in->provider_id);
	if (status)
		cJSON_AddStringToObject(o, "instanceStatus", status);
	cJSON_AddStringToObject(o, "currentAction", actions[mi->action]);
	/* the template it was made from: its image's (one not made yet: the MIG's now) */
	sim_gce_template_of(f->gce, gi, mi->in ? mi->in->image : NULL, tmpl, sizeof(tmpl));
	v = cJSON_AddObjectToObject(o, "version");
	add_link(v, "instanceTemplate", f, "global/instanceTemplates/%s%s", tmpl, "");
	if (mi->error_code[0]) {
		cJSON *la = cJSON_AddObjectToObject(o, "lastAttempt");
		cJSON *e = cJSON_AddObjectToObject(la, "errors");
		cJSON *arr = cJSON_AddArrayToObject(e, "errors"), *one = cJSON_CreateObject();

		cJSON_AddStringToObject(one, "code", mi->error_code);
		cJSON_AddStringToObject(one, "message", mi->error_message);
		cJSON_AddItemToArray(arr, one);
	}
	return o;
}

static cJSON *op_json(struct gce_face *f, const struct sim_gce_op *op)
{
	const struct sim_gce_group *g = sim_gce_group(f->gce, op->group);
	enum sim_gce_op_status s = sim_gce_op_status(f->gce, op);
	cJSON *o = cJSON_CreateObject();
	char loc[64], ts[48], tail[300];

	location(g, loc, sizeof(loc));
	cJSON_AddStringToObject(o, "kind", "compute#operation");
	cJSON_AddStringToObject(o, "id", op->id);
	cJSON_AddStringToObject(o, "name", op->name);
	cJSON_AddStringToObject(o, "operationType", op->kind);
	snprintf(tail, sizeof(tail), "%s/instanceGroupManagers/%s", loc, g->mig);
	add_link(o, "targetLink", f, "%s%s", tail, "");
	{
		char seed[160];
		char id[24];

		snprintf(seed, sizeof(seed), "igm/%s/%s", loc, g->mig);
		snprintf(id, sizeof(id), "%llu", (unsigned long long)(fnv(seed) >> 1));
		cJSON_AddStringToObject(o, "targetId", id);
	}
	cJSON_AddStringToObject(o, "status", s == SIM_GCE_DONE ? "DONE" : "RUNNING");
	cJSON_AddStringToObject(o, "user", f->conf->service_account);
	cJSON_AddNumberToObject(o, "progress", s == SIM_GCE_DONE ? 100 : 0);
	iso(op->start_wall, ts, sizeof(ts));
	cJSON_AddStringToObject(o, "insertTime", ts);
	cJSON_AddStringToObject(o, "startTime", ts);
	if (s == SIM_GCE_DONE) {
		iso(op->start_wall + (op->done_ns - op->start_ns) / CLOCK_NS_PER_S, ts, sizeof(ts));
		cJSON_AddStringToObject(o, "endTime", ts);
	}
	if (s == SIM_GCE_DONE && op->error_code[0]) {
		cJSON *e = cJSON_AddObjectToObject(o, "error");
		cJSON *arr = cJSON_AddArrayToObject(e, "errors"), *one = cJSON_CreateObject();

		cJSON_AddStringToObject(one, "code", op->error_code);
		cJSON_AddStringToObject(one, "message", op->error_message);
		cJSON_AddItemToArray(arr, one);
		cJSON_AddNumberToObject(o, "httpErrorStatusCode", 400);
		cJSON_AddStringToObject(o, "httpErrorMessage", "BAD REQUEST");
	}
	if (g->regional)
		add_link(o, "region", f, "regions/%s%s", g->region, "");
	else
		add_link(o, "zone", f, "zones/%s%s", g->zones[0], "");
	snprintf(tail, sizeof(tail), "%s/operations/%s", loc, op->name);
	add_link(o, "selfLink", f, "%s%s", tail, "");
	return o;
}

static cJSON *template_json(struct gce_face *f, size_t i, const char *region)
{
	const struct sim_gce_group *g = sim_gce_group(f->gce, i);
	const struct sim_gce_mtype *mt = sim_gce_find_mtype(g->machine_type);
	cJSON *o = cJSON_CreateObject(), *p, *labels, *disks, *d, *ini, *nics, *nic, *sch;
	char seed[160], ts[48];
	size_t k;

	snprintf(seed, sizeof(seed), "it/%s", g->template_name);
	cJSON_AddStringToObject(o, "kind", "compute#instanceTemplate");
	add_id(o, seed);
	iso(real_wall() - 86400, ts, sizeof(ts));
	cJSON_AddStringToObject(o, "creationTimestamp", ts);
	cJSON_AddStringToObject(o, "name", g->template_name);
	if (region) {
		add_link(o, "region", f, "regions/%s%s", region, "");
		add_link(o, "selfLink", f, "regions/%s/instanceTemplates/%s", region,
			 g->template_name);
	} else {
		add_link(o, "selfLink", f, "global/instanceTemplates/%s%s", g->template_name, "");
	}
	p = cJSON_AddObjectToObject(o, "properties");
	cJSON_AddStringToObject(p, "machineType", g->machine_type);
	if (mt && mt->gpus) {
		cJSON *ga = cJSON_AddArrayToObject(p, "guestAccelerators"), *a = cJSON_CreateObject();

		cJSON_AddStringToObject(a, "acceleratorType", mt->gpu_type);
		cJSON_AddNumberToObject(a, "acceleratorCount", mt->gpus);
		cJSON_AddItemToArray(ga, a);
		sch = cJSON_AddObjectToObject(p, "scheduling");
		cJSON_AddStringToObject(sch, "onHostMaintenance", "TERMINATE");
	}
	if (g->spot) {
		sch = cJSON_GetObjectItemCaseSensitive(p, "scheduling");
		if (!sch)
			sch = cJSON_AddObjectToObject(p, "scheduling");
		cJSON_AddStringToObject(sch, "provisioningModel", "SPOT");
		cJSON_AddBoolToObject(sch, "preemptible", false);
		cJSON_AddStringToObject(sch, "instanceTerminationAction", "STOP");
		cJSON_AddBoolToObject(sch, "automaticRestart", false);
	}
	if (g->kube_env) {
		cJSON *md = cJSON_AddObjectToObject(p, "metadata"), *items, *it;

		cJSON_AddStringToObject(md, "kind", "compute#metadata");
		items = cJSON_AddArrayToObject(md, "items");
		it = cJSON_CreateObject();
		cJSON_AddStringToObject(it, "key", "kube-env");
		cJSON_AddStringToObject(it, "value", g->kube_env);
		cJSON_AddItemToArray(items, it);
	}
	labels = cJSON_AddObjectToObject(p, "labels");
	for (k = 0; k < g->n_labels; k++)
		cJSON_AddStringToObject(labels, g->labels[k].key, g->labels[k].value);
	disks = cJSON_AddArrayToObject(p, "disks");
	d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "type", "PERSISTENT");
	cJSON_AddBoolToObject(d, "boot", true);
	cJSON_AddBoolToObject(d, "autoDelete", true);
	ini = cJSON_AddObjectToObject(d, "initializeParams");
	cJSON_AddStringToObject(ini, "diskSizeGb", "100");
	cJSON_AddStringToObject(ini, "sourceImage",
				"projects/cos-cloud/global/images/family/cos-stable");
	cJSON_AddItemToArray(disks, d);
	nics = cJSON_AddArrayToObject(p, "networkInterfaces");
	nic = cJSON_CreateObject();
	cJSON_AddStringToObject(nic, "network", "global/networks/default");
	cJSON_AddItemToArray(nics, nic);
	return o;
}

static cJSON *mtype_json(struct gce_face *f, const struct sim_gce_mtype *mt, const char *zone)
{
	cJSON *o = cJSON_CreateObject();
	char seed[96], desc[160];

	snprintf(seed, sizeof(seed), "mt/%s", mt->name);
	cJSON_AddStringToObject(o, "kind", "compute#machineType");
	add_id(o, seed);
	cJSON_AddStringToObject(o, "creationTimestamp", "2015-01-16T09:25:43.000-08:00");
	cJSON_AddStringToObject(o, "name", mt->name);
	snprintf(desc, sizeof(desc), "%d vCPUs, %lld MB RAM", mt->cpus, (long long)mt->memory_mb);
	cJSON_AddStringToObject(o, "description", desc);
	cJSON_AddNumberToObject(o, "guestCpus", mt->cpus);
	cJSON_AddNumberToObject(o, "memoryMb", (double)mt->memory_mb);
	cJSON_AddNumberToObject(o, "maximumPersistentDisks", 128);
	cJSON_AddStringToObject(o, "maximumPersistentDisksSizeGb", "263168");
	cJSON_AddStringToObject(o, "zone", zone);
	cJSON_AddBoolToObject(o, "isSharedCpu", false);
	if (mt->gpus) {
		cJSON *acc = cJSON_AddArrayToObject(o, "accelerators"), *a = cJSON_CreateObject();

		cJSON_AddStringToObject(a, "guestAcceleratorType", mt->gpu_type);
		cJSON_AddNumberToObject(a, "guestAcceleratorCount", mt->gpus);
		cJSON_AddItemToArray(acc, a);
	}
	add_link(o, "selfLink", f, "zones/%s/machineTypes/%s", zone, mt->name);
	return o;
}

/* ---- compute: handlers ---- */

static bool admit(struct greq *r, const char *group)
{
	if (sim_cloud_admit(r->f->cloud, group))
		return true;
	if (r->f->conf->throttle_status == 429)
		fail(r, 429, "rateLimitExceeded", "usageLimits",
		     "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute' of service 'compute.googleapis.com' for consumer 'project_number:%s'.",
		     r->f->conf->project_number);
	else
		fail(r, 403, "rateLimitExceeded", "usageLimits",
		     "Rate Limit Exceeded: quota 'Read requests per minute' of project %s.",
		     r->f->conf->project);
	return false;
}

/* A terminate_error fault for a deleteInstances of 'group': true when one
 * fired and the answer is GCE's refusal. */
static bool delete_refused(struct greq *r, const char *group, const char *zone, const char *name)
{
	enum provider_error e;
	int64_t ra = 0;

	if (!sim_cloud_terminate_fault(r->f->cloud, group, &e, &ra))
		return false;
	switch (e) {
	case PROVIDER_AUTH:
		fail(r, 403, "forbidden", "global",
		     "Required 'compute.instances.delete' permission for 'projects/%s/zones/%s/instances/%s'",
		     r->f->conf->project, zone, name);
		break;
	case PROVIDER_THROTTLED:
		if (ra > 0)
			r->retry_after_s = (int)((ra + CLOCK_NS_PER_S - 1) / CLOCK_NS_PER_S);
		if (r->f->conf->throttle_status == 429)
			fail(r, 429, "rateLimitExceeded", "usageLimits",
			     "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute' of service 'compute.googleapis.com' for consumer 'project_number:%s'.",
			     r->f->conf->project_number);
		else
			fail(r, 403, "rateLimitExceeded", "usageLimits",
			     "Rate Limit Exceeded: quota 'Write requests per minute' of project %s.",
			     r->f->conf->project);
		break;
	case PROVIDER_NOT_FOUND:
		fail(r, 404, "notFound", "global", "The resource 'projects/%s/zones/%s/instances/%s' was not found",
		     r->f->conf->project, zone, name);
		break;
	case PROVIDER_INVALID:
		fail(r, 400, "invalid", "global", "deleteInstances refused (a terminate_error fault)");
		break;
	default:
		fail(r, 503, "backendError", "global", "Internal error. Please try again or contact Google Support.");
		break;
	}
	return true;
}

/* Does 'name' match the aggregated list's filter (NULL: all)? GCE's
 * "name eq RE" (a full match), "name ne RE" and name = "x". */
static int filter_compile(const char *filter, regex_t *re, bool *neg)
{
	char pat[300], lit[200];
	const char *p;
	size_t n;

	*neg = false;
	if (!filter || !*filter)
		return 1;
	p = filter;
	while (*p == ' ' || *p == '(')
		p++;
	if (strncmp(p, "name", 4) != 0)
		return -1;
	p += 4;
	while (*p == ' ')
		p++;
	if (strncmp(p, "eq ", 3) == 0 || strncmp(p, "ne ", 3) == 0) {
		*neg = p[0] == 'n';
		p += 3;
		while (*p == ' ')
			p++;
		n = strlen(p);
		while (n && (p[n - 1] == ' ' || p[n - 1] == ')'))
			n--;
		if (n >= 2 && p[0] == '"' && p[n - 1] == '"') {
			p++;
			n -= 2;
		}
		snprintf(pat, sizeof(pat), "^(%.*s)$", (int)(n < 250 ? n : 250), p);
	} else if (*p == '=') {
		size_t i, w = 0;

		p++;
		while (*p == ' ')
			p++;
		n = strlen(p);
		while (n && (p[n - 1] == ' ' || p[n - 1] == ')'))
			n--;
		if (n >= 2 && p[0] == '"' && p[n - 1] == '"') {
			p++;
			n -= 2;
		}
		for (i = 0; i < n && w + 2 < sizeof(lit); i++) {
			if (strchr(".[]()*+?^$|\\{}", p[i]))
				lit[w++] = '\\';
			lit[w++] = p[i];
		}
		lit[w] = '\0';
		snprintf(pat, sizeof(pat), "^%s$", lit);
	} else {
		return -1;
	}
	return regcomp(re, pat, REG_EXTENDED | REG_NOSUB) == 0 ? 0 : -1;
}

static void list_migs(struct greq *r, const char *scope, const char *where)
{
	struct gce_face *f = r->f;
	const char *filter = query(r, "filter");
	cJSON *o, *items;
	regex_t re;
	bool neg = false;
	int fr = filter_compile(filter, &re, &neg);
	size_t i;
	char self[300];

	if (fr < 0) {
		fail(r, 400, "invalid", "global",
		     "Invalid value for field 'filter': '%s'. Invalid list filter expression.",
		     filter ? filter : "");
		return;
	}
	if (!admit(r, NULL)) {
		if (fr == 0)
			regfree(&re);
		return;
	}
	o = cJSON_CreateObject();
	sim_cloud_lock(f->cloud);
	if (!scope) {
		cJSON_AddStringToObject(o, "kind", "compute#instanceGroupManagerAggregatedList");
		snprintf(self, sizeof(self), "projects/%s/aggregated/instanceGroupManagers",
			 f->conf->project);
		cJSON_AddStringToObject(o, "id", self);
		items = cJSON_AddObjectToObject(o, "items");
	} else {
		bool regional = strcmp(scope, "regions") == 0;

		cJSON_AddStringToObject(o, "kind", regional ? "compute#regionInstanceGroupManagerList"
							    : "compute#instanceGroupManagerList");
		snprintf(self, sizeof(self), "projects/%s/%s/%s/instanceGroupManagers",
			 f->conf->project, scope, where);
		cJSON_AddStringToObject(o, "id", self);
		items = cJSON_AddArrayToObject(o, "items");
	}
	for (i = 0; i < sim_cloud_n_groups(f->cloud); i++) {
		const struct sim_gce_group *g = sim_gce_group(f->gce, i);
		char loc[64];

		if (fr == 0 && (regexec(&re, g->mig, 0, NULL, 0) == 0) == neg)
			continue;
		location(g, loc, sizeof(loc));
		if (scope) {
			if (g->regional != (strcmp(scope, "regions") == 0) ||
			    strcmp(g->regional ? g->region : g->zones[0], where) != 0)
				continue;
			cJSON_AddItemToArray(items, mig_json(f, i));
		} else {
			cJSON *sl = cJSON_GetObjectItemCaseSensitive(items, loc), *arr;

			if (!sl) {
				sl = cJSON_AddObjectToObject(items, loc);
				cJSON_AddArrayToObject(sl, "instanceGroupManagers");
			}
			arr = cJSON_GetObjectItemCaseSensitive(sl, "instanceGroupManagers");
			cJSON_AddItemToArray(arr, mig_json(f, i));
		}
	}
	sim_cloud_unlock(f->cloud);
	if (fr == 0)
		regfree(&re);
	glink(f, self, sizeof(self), "%s%s%s/instanceGroupManagers", scope ? scope : "aggregated",
	     scope ? "/" : "", scope ? where : "");
	cJSON_AddStringToObject(o, "selfLink", self);
	reply_json(r, 200, o);
}

static void list_managed(struct greq *r, size_t gi)
{
	struct gce_face *f = r->f;
	const char *mr = query(r, "maxResults"), *pt = query(r, "pageToken");
	long long max = MAX_PAGE, offset = 0;
	const struct sim_gce_mi *mi;
	cJSON *o, *arr;
	size_t n, k;

	if (mr && face_parse_int(mr, 0, MAX_PAGE, &max) < 0) {
		fail(r, 400, "invalid", "global",
		     "Invalid value for field 'maxResults': '%s'. Must be less than or equal to 500",
		     mr);
		return;
	}
	if (max == 0)
		max = MAX_PAGE;
	if (pt && *pt && (pt[0] != 'p' || face_parse_int(pt + 1, 0, 1000000, &offset) < 0)) {
		fail(r, 400, "invalid", "global", "Invalid value for field 'pageToken': '%s'.", pt);
		return;
	}
	if (!admit(r, sim_cloud_group(f->cloud, gi)->name))
		return;
	o = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(o, "managedInstances");
	sim_cloud_lock(f->cloud);
	mi = sim_gce_managed(f->gce, gi, &n);
	for (k = (size_t)offset; k < n && k < (size_t)(offset + max); k++)
		cJSON_AddItemToArray(arr, mi_json(f, gi, &mi[k]));
	if ((size_t)(offset + max) < n) {
		char tok[32];

		snprintf(tok, sizeof(tok), "p%lld", offset + max);
		cJSON_AddStringToObject(o, "nextPageToken", tok);
	}
	sim_cloud_unlock(f->cloud);
	reply_json(r, 200, o);
}

static bool valid_request_id(const char *s)
{
	size_t i, n = s ? strlen(s) : 0;

	if (n != 36)
		return false;
	for (i = 0; i < n; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return false;
		} else if (!strchr("0123456789abcdefABCDEF", s[i])) {
			return false;
		}
	}
	return strcmp(s, "00000000-0000-0000-0000-000000000000") != 0;
}

static void mutate(struct greq *r, size_t gi, const char *action, const char *body)
{
	struct gce_face *f = r->f;
	const char *rid = query(r, "requestId");
	const char *group = sim_cloud_group(f->cloud, gi)->name;
	char kind[80];
	struct sim_gce_op op;
	struct errbuf err;
	cJSON *j = NULL;
	const char **names = NULL;
	size_t n = 0, k;
	bool dup;
	int rc = 0;

	if (rid && !valid_request_id(rid)) {
		fail(r, 400, "invalid", "global",
		     "Invalid value for field 'requestId': '%s'. Must be a UUID other than 00000000-0000-0000-0000-000000000000.",
		     rid);
		return;
	}
	if (strcmp(action, "resize") != 0) {
		const cJSON *inst;

		j = cJSON_Parse(body);
		inst = j ? cJSON_GetObjectItemCaseSensitive(j, "instances") : NULL;
		if (!cJSON_IsObject(j) || !cJSON_IsArray(inst)) {
			fail(r, 400, "parseError", "global",
			     "Invalid JSON payload received: expected an object with an instances array.");
			cJSON_Delete(j);
			return;
		}
		n = (size_t)cJSON_GetArraySize(inst);
		if (n == 0 || n > 1000) {
			fail(r, 400, "invalid", "global",
			     "Invalid value for field 'resource.instances': %zu entries. Must be between 1 and 1000.",
			     n);
			cJSON_Delete(j);
			return;
		}
		names = calloc(n, sizeof(*names));
		if (!names) {
			cJSON_Delete(j);
			fail(r, 500, "internalError", "global", "out of memory");
			return;
		}
		for (k = 0; k < n; k++) {
			const cJSON *it = cJSON_GetArrayItem(inst, (int)k), *nm;

			if (strcmp(action, "createInstances") == 0) {
				nm = cJSON_IsObject(it) ? cJSON_GetObjectItemCaseSensitive(it, "name")
							: NULL;
				if (!cJSON_IsString(nm)) {
					fail(r, 400, "required", "global",
					     "Required field 'resource.instances[%zu].name' not specified", k);
					goto out;
				}
				names[k] = nm->valuestring;
			} else {
				const char *u = cJSON_IsString(it) ? it->valuestring : NULL;
				const char *slash = u ? strrchr(u, '/') : NULL;

				if (!u || !strstr(u, "instances/")) {
					fail(r, 400, "invalid", "global",
					     "Invalid value for field 'resource.instances[%zu]': '%s'. The URL is malformed.",
					     k, u ? u : "");
					goto out;
				}
				names[k] = slash ? slash + 1 : u;
			}
		}
	}
	if (!admit(r, group))
		goto out;
	if (strcmp(action, "createInstances") == 0 && f->conf->groups[gi].refuse_create) {
		fail(r, 400, "invalid", "global",
		     "Invalid value for field 'resource.instances': named instances are not accepted by instance group manager '%s'.",
		     f->conf->groups[gi].mig);
		goto out;
	}
	if (strcmp(action, "deleteInstances") == 0 &&
	    delete_refused(r, group, sim_gce_group(f->gce, gi)->regional ? sim_gce_group(f->gce, gi)->region
									  : sim_gce_group(f->gce, gi)->zones[0],
			   names[0]))
		goto out;
	if (strcmp(action, "resize") == 0) {
		/* a slow_resize fault: the new size lands (and is answered) only later */
		int64_t d = sim_cloud_resize_delay(f->cloud, group);

		if (d > 0)
			face_http_sleep_ns(d);
	}
	snprintf(kind, sizeof(kind), "compute.instanceGroupManagers.%s", action);
	sim_cloud_lock(f->cloud);
	sim_gce_op_new(f->gce, gi, kind, rid, &op, &dup);
	if (!dup) {
		if (strcmp(action, "resize") == 0) {
			const char *sz = query(r, "size");
			long long size;

			if (face_parse_int(sz, 0, 1000, &size) < 0)
				rc = errbuf_set(&err, "Invalid value for field 'size': '%s'. Must be greater than or equal to 0.",
						sz ? sz : "");
			else
				rc = sim_gce_resize(f->gce, gi, (int)size, &err);
		} else if (strcmp(action, "createInstances") == 0) {
			rc = sim_gce_create(f->gce, gi, names, n, &err);
		} else {
			const cJSON *skip = cJSON_GetObjectItemCaseSensitive(j, "skipInstancesOnValidationError");

			rc = sim_gce_delete(f->gce, gi, names, n, cJSON_IsTrue(skip), &err);
		}
	}
	sim_cloud_unlock(f->cloud);
	if (rc < 0) {
		bool exists = strstr(err.msg, "already exists") != NULL;

		fail(r, exists ? 409 : 400, exists ? "alreadyExists" : "invalid", "global", "%s",
		     err.msg);
		goto out;
	}
	reply_json(r, 200, op_json(f, &op));
	r->drop = sim_cloud_lose_answer(f->cloud, group);
out:
	free(names);
	cJSON_Delete(j);
}

static void not_found(struct greq *r, const char *path);

/* GET zones/Z/instances/NAME: the Instance of a MIG (name, id, zone,
 * machineType, status, creationTimestamp, selfLink, networkInterfaces'
 * networkIP). */
static void get_instance(struct greq *r, const char *zone, const char *name, const char *path)
{
	struct gce_face *f = r->f;
	const struct sim_instance *in;
	char ts[48];
	cJSON *o;

	if (!admit(r, NULL))
		return;
	sim_cloud_lock(f->cloud);
	in = sim_cloud_find_instance(f->cloud, name);
	if (!in || in->state == INSTANCE_GONE || strcmp(in->zone, zone) != 0) {
		sim_cloud_unlock(f->cloud);
		not_found(r, path);
		return;
	}
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "kind", "compute#instance");
	add_id(o, in->provider_id);
	iso(in->created_wall, ts, sizeof(ts));
	cJSON_AddStringToObject(o, "creationTimestamp", ts);
	cJSON_AddStringToObject(o, "name", in->id);
	add_link(o, "machineType", f, "zones/%s/machineTypes/%s", in->zone,
		 in->instance_type[0] ? in->instance_type : "e2-standard-4");
	cJSON_AddStringToObject(o, "status", in->state == INSTANCE_RUNNING ? "RUNNING" :
					     in->state == INSTANCE_STOPPING ? "STOPPING" : "PROVISIONING");
	add_link(o, "zone", f, "zones/%s%s", in->zone, "");
	add_link(o, "selfLink", f, "zones/%s/instances/%s", in->zone, in->id);
	if (in->private_ip[0]) {
		/* the node's InternalIP is this address */
		cJSON *nics = cJSON_AddArrayToObject(o, "networkInterfaces"), *nic = cJSON_CreateObject();

		cJSON_AddStringToObject(nic, "kind", "compute#networkInterface");
		cJSON_AddStringToObject(nic, "name", "nic0");
		cJSON_AddStringToObject(nic, "networkIP", in->private_ip);
		cJSON_AddItemToArray(nics, nic);
	}
	sim_cloud_unlock(f->cloud);
	reply_json(r, 200, o);
}

static void get_op(struct greq *r, const char *scope, const char *where, const char *name,
		   bool wait)
{
	struct gce_face *f = r->f;
	struct sim_gce_op op;
	const struct sim_gce_group *g;
	struct timespec t0, now;
	bool found;

	if (!admit(r, NULL))
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		sim_cloud_lock(f->cloud);
		found = sim_gce_op_get(f->gce, name, &op);
		sim_cloud_unlock(f->cloud);
		if (found) {
			g = sim_gce_group(f->gce, op.group);
			if (g->regional != (strcmp(scope, "regions") == 0) ||
			    strcmp(g->regional ? g->region : g->zones[0], where) != 0)
				found = false;
		}
		if (!found) {
			fail(r, 404, "notFound", "global",
			     "The resource 'projects/%s/%s/%s/operations/%s' was not found",
			     f->conf->project, scope, where, name);
			return;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (!wait || sim_gce_op_status(f->gce, &op) == SIM_GCE_DONE ||
		    (int64_t)(now.tv_sec - t0.tv_sec) * CLOCK_NS_PER_S + (now.tv_nsec - t0.tv_nsec) >=
			    f->conf->wait_ns)
			break;
		{
			struct timespec ts = {0, 20 * 1000 * 1000};

			nanosleep(&ts, NULL);
		}
	}
	reply_json(r, 200, op_json(f, &op));
}

static void not_found(struct greq *r, const char *path)
{
	fail(r, 404, "notFound", "global", "The resource '%s' was not found", path);
}

/* Routes /compute/v1/projects/P/... ; 'seg' the segments after P. */
static void handle_compute(struct greq *r, const char *method, char **seg, size_t n,
			   const char *path, const char *body)
{
	struct gce_face *f = r->f;
	bool get = strcmp(method, "GET") == 0, post = strcmp(method, "POST") == 0;
	int gi;

	if (n == 2 && strcmp(seg[0], "aggregated") == 0 &&
	    strcmp(seg[1], "instanceGroupManagers") == 0 && get) {
		list_migs(r, NULL, NULL);
		return;
	}
	if (n == 3 && strcmp(seg[0], "global") == 0 && strcmp(seg[1], "instanceTemplates") == 0 &&
	    get) {
		if (!admit(r, NULL))
			return;
		sim_cloud_lock(f->cloud);
		gi = sim_gce_find_template(f->gce, seg[2]);
		sim_cloud_unlock(f->cloud);
		if (gi < 0)
			not_found(r, path);
		else
			reply_json(r, 200, template_json(f, (size_t)gi, NULL));
		return;
	}
	if (n < 3 || (strcmp(seg[0], "zones") != 0 && strcmp(seg[0], "regions") != 0)) {
		not_found(r, path);
		return;
	}
	if (n == 3 && strcmp(seg[2], "instanceGroupManagers") == 0 && get) {
		list_migs(r, seg[0], seg[1]);
		return;
	}
	if (n == 4 && strcmp(seg[2], "instanceTemplates") == 0 && strcmp(seg[0], "regions") == 0 &&
	    get) {
		if (!admit(r, NULL))
			return;
		sim_cloud_lock(f->cloud);
		gi = sim_gce_find_template(f->gce, seg[3]);
		sim_cloud_unlock(f->cloud);
		if (gi < 0)
			not_found(r, path);
		else
			reply_json(r, 200, template_json(f, (size_t)gi, seg[1]));
		return;
	}
	if (n == 4 && strcmp(seg[2], "machineTypes") == 0 && strcmp(seg[0], "zones") == 0 && get) {
		const struct sim_gce_mtype *mt = sim_gce_find_mtype(seg[3]);

		if (!admit(r, NULL))
			return;
		if (!mt)
			not_found(r, path);
		else
			reply_json(r, 200, mtype_json(f, mt, seg[1]));
		return;
	}
	if (n == 4 && strcmp(seg[2], "instances") == 0 && strcmp(seg[0], "zones") == 0 && get) {
		get_instance(r, seg[1], seg[3], path);
		return;
	}
	if ((n == 4 || n == 5) && strcmp(seg[2], "operations") == 0) {
		if (n == 4 && get)
			get_op(r, seg[0], seg[1], seg[3], false);
		else if (n == 5 && post && strcmp(seg[4], "wait") == 0)
			get_op(r, seg[0], seg[1], seg[3], true);
		else
			not_found(r, path);
		return;
	}
	if ((n == 4 || n == 5) && strcmp(seg[2], "instanceGroupManagers") == 0) {
		sim_cloud_lock(f->cloud);
		gi = sim_gce_find_mig(f->gce, seg[1], strcmp(seg[0], "regions") == 0, seg[3]);
		sim_cloud_unlock(f->cloud);
		if (gi < 0) {
			not_found(r, path);
			return;
		}
		if (n == 4 && get) {
			cJSON *o;

			if (!admit(r, sim_cloud_group(f->cloud, (size_t)gi)->name))
				return;
			sim_cloud_lock(f->cloud);
			o = mig_json(f, (size_t)gi);
			sim_cloud_unlock(f->cloud);
			reply_json(r, 200, o);
			return;
		}
		if (n == 5 && post) {
			if (strcmp(seg[4], "listManagedInstances") == 0) {
				list_managed(r, (size_t)gi);
				return;
			}
			if (strcmp(seg[4], "createInstances") == 0 || strcmp(seg[4], "resize") == 0 ||
			    strcmp(seg[4], "deleteInstances") == 0) {
				mutate(r, (size_t)gi, seg[4], body);
				return;
			}
		}
	}
	not_found(r, path);
}

/* GET /v1/services/S/skus: the Cloud Billing Catalog (sim/clouds/gce_pricing_face.c),
 * behind the same Bearer tokens as compute. */
static void handle_catalog(struct greq *r, const char *url)
{
	const char *auth = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Authorization");
	const char *svc = url + strlen("/v1/services/"), *slash = strchr(svc, '/');
	char service[64], msg[200];
	cJSON *page;
	int code = 0;

	if (!token_ok(r->f, auth)) {
		r->www_auth = true;
		fail(r, 401, "required", "global",
		     "Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential.");
		return;
	}
	if (!slash || slash == svc || (size_t)(slash - svc) >= sizeof(service) || strcmp(slash, "/skus")) {
		fail(r, 404, "notFound", "global", "The requested URL %s was not found", url);
		return;
	}
	snprintf(service, sizeof(service), "%.*s", (int)(slash - svc), svc);
	page = gce_pricing_face_skus(r->f->gce, service, query(r, "pageToken"), query(r, "pageSize"),
				     query(r, "currencyCode"), &code, msg, sizeof(msg));
	if (page)
		reply_json(r, 200, page);
	else
		fail(r, code, code == 404 ? "notFound" : code == 400 ? "badRequest" : "internalError",
		     "global", "%s", msg);
}

static void route_compute(struct greq *r, const char *method, const char *url, const char *body)
{
	struct gce_face *f = r->f;
	const char *auth = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Authorization");
	const char *p = url + strlen("/compute/v1/projects/");
	char copy[512], *seg[8], *s;
	size_t n = 0;

	if (!token_ok(f, auth)) {
		r->www_auth = true;
		fail(r, 401, "required", "global",
		     "Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential.");
		return;
	}
	if (strlen(p) >= sizeof(copy)) {
		not_found(r, url);
		return;
	}
	snprintf(copy, sizeof(copy), "%s", p);
	s = strchr(copy, '/');
	if (!s || (size_t)(s - copy) != strlen(f->conf->project) ||
	    strncmp(copy, f->conf->project, (size_t)(s - copy)) != 0) {
		fail(r, 403, "forbidden", "global",
		     "Required 'compute.instanceGroupManagers.get' permission for 'projects/%.*s'",
		     s ? (int)(s - copy) : (int)strlen(copy), copy);
		return;
	}
	for (s = s + 1; s && *s && n < 8;) {
		char *slash = strchr(s, '/');

		if (slash)
			*slash = '\0';
		if (!*s) {
			not_found(r, url);
			return;
		}
		seg[n++] = s;
		s = slash ? slash + 1 : NULL;
	}
	if (s && *s) {
		not_found(r, url);
		return;
	}
	handle_compute(r, method, seg, n, url + strlen("/compute/v1/"), body);
}

/* ---- the HTTP daemon ---- */

static enum MHD_Result on_request(void *ud, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *body, size_t body_len,
				  bool bad_body)
{
	struct gce_face *f = ud;
	struct MHD_Response *resp;
	struct greq r;
	enum MHD_Result rc;

	(void)body_len;
	face_http_sleep_ns(f->o.latency_ns);
	memset(&r, 0, sizeof(r));
	r.f = f;
	r.conn = conn;
	if (bad_body)
		fail(&r, 413, "invalid", "global", "The request body is too large or not text");
	else if (strncmp(url, "/computeMetadata/v1", 19) == 0 && strcmp(method, "GET") == 0)
		handle_metadata(&r, url);
	else if (strcmp(url, "/token") == 0 && strcmp(method, "POST") == 0)
		handle_token(&r, body);
	else if (strncmp(url, "/compute/v1/projects/", 21) == 0)
		route_compute(&r, method, url, body);
	else if (strncmp(url, "/v1/services/", 13) == 0 && strcmp(method, "GET") == 0)
		handle_catalog(&r, url);
	else
		fail(&r, 404, "notFound", "global", "The requested URL %s was not found", url);
	if (!r.code)
		fail(&r, 500, "internalError", "global", "no answer");
	if (r.drop) {
		/* a lost_answer fault: the call took effect, its answer never comes */
		log_at(f->o.log, LOG_INFO, real_wall(), "sim gce: %s %s -> %d, answer lost (fault)", method, url, r.code);
		buf_free(&r.body);
		return MHD_NO;
	}
	log_at(f->o.log, LOG_DEBUG, real_wall(), "sim gce: %s %s -> %d", method, url, r.code);
	resp = face_http_response(&r.body);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Type",
				r.content_type ? r.content_type : "application/json; charset=UTF-8");
	if (r.metadata)
		MHD_add_response_header(resp, "Metadata-Flavor", "Google");
	if (r.www_auth)
		MHD_add_response_header(resp, "WWW-Authenticate", "Bearer realm=\"https://accounts.google.com/\"");
	if (r.retry_after_s > 0) {
		char ra[24];

		snprintf(ra, sizeof(ra), "%d", r.retry_after_s);
		MHD_add_response_header(resp, "Retry-After", ra);
	}
	rc = face_http_queue(conn, r.code, resp);
	return rc;
}

struct gce_face *gce_face_new(struct sim_gce *gce, const struct gce_face_opts *o,
			      struct errbuf *err)
{
	struct gce_face *f = calloc(1, sizeof(*f));
	struct face_http_opts ho;
	struct timespec ts;

	if (!f) {
		errbuf_set(err, "out of memory");
		return NULL;
	}
	if (o)
		f->o = *o;
	f->gce = gce;
	f->cloud = sim_gce_cloud(gce);
	f->conf = sim_gce_conf(gce);
	clock_gettime(CLOCK_REALTIME, &ts);
	f->rng = ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec) ^ 0x9e3779b97f4a7c15ULL;
	pthread_mutex_init(&f->mu, NULL);
	face_tokens_init(&f->tokens, f->rng);
	f->key = EVP_RSA_gen(2048);
	if (!f->key) {
		errbuf_set(err, "sim gce: cannot generate the service-account key");
		goto fail;
	}
	snprintf(f->key_id, sizeof(f->key_id), "%016llx%016llx%08llx",
		 (unsigned long long)face_rand(f), (unsigned long long)face_rand(f),
		 (unsigned long long)(face_rand(f) & 0xffffffffULL));
	snprintf(f->client_id, sizeof(f->client_id), "1%018llu",
		 (unsigned long long)(face_rand(f) % 1000000000000000000ULL));
	memset(&ho, 0, sizeof(ho));
	ho.port = f->o.port;
	ho.name = "sim gce";
	ho.log = f->o.log;
	/* the token URI names the port: known once listening, before any request */
	f->http = face_http_start(&ho, on_request, f, err);
	if (!f->http)
		goto fail;
	f->port = face_http_port(f->http);
	snprintf(f->token_uri, sizeof(f->token_uri), "http://127.0.0.1:%d/token", f->port);
	log_at(f->o.log, LOG_INFO, real_wall(), "sim gce: serving on http://127.0.0.1:%d (project %s)",
	       f->port, f->conf->project);
	return f;
fail:
	gce_face_free(f);
	return NULL;
}

int gce_face_port(const struct gce_face *f)
{
	return f->port;
}

int gce_face_write_key(const struct gce_face *f, const char *path, struct errbuf *err)
{
	BIO *bio = BIO_new(BIO_s_mem());
	cJSON *o;
	char *pem = NULL, *text;
	long len;
	FILE *out;
	int rc;

	if (!bio || PEM_write_bio_PrivateKey(bio, f->key, NULL, NULL, 0, NULL, NULL) != 1) {
		BIO_free(bio);
		return errbuf_set(err, "sim gce: cannot write the key as PEM");
	}
	len = BIO_get_mem_data(bio, &pem);
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "type", "service_account");
	cJSON_AddStringToObject(o, "project_id", f->conf->project);
	cJSON_AddStringToObject(o, "private_key_id", f->key_id);
	{
		char *k = malloc((size_t)len + 1);

		if (!k) {
			BIO_free(bio);
			cJSON_Delete(o);
			return errbuf_set(err, "out of memory");
		}
		memcpy(k, pem, (size_t)len);
		k[len] = '\0';
		cJSON_AddStringToObject(o, "private_key", k);
		OPENSSL_cleanse(k, (size_t)len);
		free(k);
	}
	BIO_free(bio);
	cJSON_AddStringToObject(o, "client_email", f->conf->service_account);
	cJSON_AddStringToObject(o, "client_id", f->client_id);
	cJSON_AddStringToObject(o, "auth_uri", "https://accounts.google.com/o/oauth2/auth");
	cJSON_AddStringToObject(o, "token_uri", f->token_uri);
	cJSON_AddStringToObject(o, "auth_provider_x509_cert_url",
				"https://www.googleapis.com/oauth2/v1/certs");
	cJSON_AddStringToObject(o, "universe_domain", "googleapis.com");
	text = cJSON_Print(o);
	cJSON_Delete(o);
	if (!text)
		return errbuf_set(err, "out of memory");
	out = face_open_private(path, err);
	if (!out) {
		free(text);
		return -1;
	}
	fputs(text, out);
	fputc('\n', out);
	OPENSSL_cleanse(text, strlen(text));
	free(text);
	rc = face_close_file(out, path, err);
	return rc;
}

int gce_face_write_env(const struct gce_face *f, const char *path, const char *key_path,
		       struct errbuf *err)
{
	FILE *out = face_open_private(path, err);
	char v[128];

	if (!out)
		return -1;
	fprintf(out, "# Written by luascale sim: its GCE face on 127.0.0.1:%d.\n"
		     "# Use: set -a; . THIS_FILE; set +a\n", f->port);
	face_env_line(out, "GOOGLE_CLOUD_PROJECT", f->conf->project);
	snprintf(v, sizeof(v), "http://127.0.0.1:%d/compute/v1/", f->port);
	face_env_line(out, "LUASCALE_SIM_GCE_ENDPOINT", v);
	face_env_line(out, "LUASCALE_SIM_GCE_TOKEN_URI", f->token_uri);
	snprintf(v, sizeof(v), "http://127.0.0.1:%d/", f->port);
	face_env_line(out, "LUASCALE_SIM_GCE_BILLING_ENDPOINT", v);
	snprintf(v, sizeof(v), "127.0.0.1:%d", f->port);
	face_env_line(out, "GCE_METADATA_HOST", v);
	if (key_path)
		face_env_line(out, "GOOGLE_APPLICATION_CREDENTIALS", key_path);
	return face_close_file(out, path, err);
}

void gce_face_free(struct gce_face *f)
{
	if (!f)
		return;
	face_http_stop(f->http);
	EVP_PKEY_free(f->key);
	face_tokens_destroy(&f->tokens);
	pthread_mutex_destroy(&f->mu);
	free(f);
}

#define DEFAULT_GCE_ENV "./luascale-sim.gce.env"
#define DEFAULT_GCE_KEY "./luascale-sim.gce-key.json"

/* ---- luascale sim: --gce-port, --gce-env-out, --gce-key-out ---- */

enum { GCE_OPT_PORT, GCE_OPT_ENV, GCE_OPT_KEY };

static const struct sim_cloud_opt gce_opts[] = {
	[GCE_OPT_PORT] = {"port", true, -1, NULL},
	[GCE_OPT_ENV] = {"env-out", false, 0, DEFAULT_GCE_ENV},
	[GCE_OPT_KEY] = {"key-out", false, 0, DEFAULT_GCE_KEY},
};

static void *gce_serve(void *flavour, const struct sim_face_args *a, struct errbuf *err)
{
	struct gce_face_opts go;
	struct gce_face *face;

	memset(&go, 0, sizeof(go));
	go.port = a->port[GCE_OPT_PORT];
	go.latency_ns = a->latency_ns;
	go.log = a->log;
	face = gce_face_new(flavour, &go, err);
	if (!face)
		return NULL;
	if (gce_face_write_key(face, a->path[GCE_OPT_KEY], err) < 0 ||
	    gce_face_write_env(face, a->path[GCE_OPT_ENV], a->path[GCE_OPT_KEY], err) < 0) {
		errbuf_prefix(err, "gce");
		gce_face_free(face);
		return NULL;
	}
	return face;
}

static void gce_announce(const void *face, const struct sim_face_args *a, FILE *out)
{
	fprintf(out,
		"luascale sim: GCE face (compute v1, token endpoint, metadata) at http://127.0.0.1:%d\n"
		"service-account key written to %s, endpoints to %s\n",
		gce_face_port(face), a->path[GCE_OPT_KEY], a->path[GCE_OPT_ENV]);
}

static void gce_face_release(void *face)
{
	gce_face_free(face);
}

const struct sim_cloud_face sim_face_gce = {
	.kind = &sim_cloud_gce,
	.opts = gce_opts,
	.n_opts = sizeof(gce_opts) / sizeof(gce_opts[0]),
	.synopsis = "                    [--gce-port PORT [--gce-env-out FILE] [--gce-key-out FILE]]\n",
	.usage = "GCE (a scenario with a gce: section): --gce-port PORT (0: a free one) also\n"
		 "serves compute v1 (MIGs, templates, machine types, operations), an OAuth\n"
		 "token endpoint and a metadata server on http://127.0.0.1:PORT; writes a\n"
		 "service-account key to --gce-key-out (default " DEFAULT_GCE_KEY ")\n"
		 "and the endpoints to --gce-env-out (default " DEFAULT_GCE_ENV ").\n",
	.face_serve = gce_serve,
	.face_announce = gce_announce,
	.face_free = gce_face_release,
};
