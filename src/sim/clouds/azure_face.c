/*
 * sim/azure_face: the Azure wire over sim/clouds/cloud_azure.c — ARM JSON
 * (cJSON) and its error shape, long-running operations, IMDS and the AAD
 * token endpoint (client secret, federated client assertion), the TLS
 * certificate its AAD side is served with.
 */
#include "sim/clouds/azure_face.h"

#include <cjson/cJSON.h>
#include <microhttpd.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "buf.h"
#include "runtime/clock.h"
#include "sim/clouds/azure_pricing_face.h"
#include "sim/clouds/face_http.h"

#define MAX_SEGS 12
#define MAX_HEADERS 10
#define JWT_BEARER "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

static const char *const api_versions[] = {
	"2022-08-01", "2022-11-01", "2023-03-01", "2023-07-01", "2023-09-01",
	"2024-03-01", "2024-07-01", "2024-11-01", "2025-04-01",
};
#define N_API_VERSIONS (sizeof(api_versions) / sizeof(api_versions[0]))

struct listener {
	struct azure_face *f;
	bool tls;
};

struct azure_face {
	struct azure_face_opts o;
	struct sim_azure *az;
	struct sim_cloud *cloud;
	const struct sim_azure_conf *conf;
	struct face_http *http, *https;
	struct listener plain, secure;
	int port, tls_port;
	struct face_tokens tokens;
	char federated[1024];       /* the assertion workload identity presents */
	int64_t federated_exp;      /* its exp (unix seconds) */
	char *cert_pem;
	char *key_pem;              /* the TLS side's, kept while it serves */
};

/* One request being answered. */
struct areq {
	struct azure_face *f;
	struct MHD_Connection *conn;
	bool tls;
	int code;
	struct buf body;
	const char *content_type;
	const char *hname[MAX_HEADERS];
	char hvalue[MAX_HEADERS][400];
	size_t n_headers;
	const char *api_version;
	const char *ns;      /* the resource provider its operations are under (Microsoft.Compute) */
	bool drop;           /* a lost_answer fault: close without answering */
};

/* ---- small pieces ---- */

static int64_t real_wall(void)
{
	return (int64_t)time(NULL);
}

/* ISO 8601 as ARM writes it: 2026-12-01T08:00:00.0000000+00:00. */
static void iso(int64_t wall, char *out, size_t size)
{
	time_t t = (time_t)wall;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, size, "%Y-%m-%dT%H:%M:%S.0000000+00:00", &tm);
}

static void guid(struct azure_face *f, char out[37])
{
	uint64_t a = face_tokens_rand(&f->tokens), b = face_tokens_rand(&f->tokens);

	snprintf(out, 37, "%08llx-%04llx-4%03llx-8%03llx-%012llx",
		 (unsigned long long)(a >> 32), (unsigned long long)((a >> 16) & 0xffff),
		 (unsigned long long)(a & 0xfff), (unsigned long long)(b >> 52),
		 (unsigned long long)(b & 0xffffffffffffULL));
}

/* A GUID made from 'seed' (stable: vmId, uniqueId). */
static void stable_guid(const char *seed, char out[37])
{
	uint64_t h = 14695981039346656037ULL, g = 0x84222325cbf29ce4ULL;
	const char *s;

	for (s = seed; *s; s++) {
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
		g = (g ^ (unsigned char)*s) * 0x100000001b3ULL + 7;
	}
	snprintf(out, 37, "%08llx-%04llx-4%03llx-9%03llx-%012llx",
		 (unsigned long long)(h >> 32), (unsigned long long)((h >> 16) & 0xffff),
		 (unsigned long long)(h & 0xfff), (unsigned long long)(g >> 52),
		 (unsigned long long)(g & 0xffffffffffffULL));
}

static void add_header(struct areq *r, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void add_header(struct areq *r, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (r->n_headers == MAX_HEADERS)
		return;
	va_start(ap, fmt);
	vsnprintf(r->hvalue[r->n_headers], sizeof(r->hvalue[0]), fmt, ap);
	va_end(ap);
	r->hname[r->n_headers++] = name;
}

static void reply_json(struct areq *r, int code, cJSON *o)
{
	char *s = o ? cJSON_PrintUnformatted(o) : NULL;

	r->code = code;
	r->content_type = "application/json; charset=utf-8";
	r->body.len = 0;
	if (s)
		buf_puts(&r->body, s);
	free(s);
	cJSON_Delete(o);
}

static void reply_empty(struct areq *r, int code)
{
	r->code = code;
	r->content_type = NULL;
	r->body.len = 0;
}

/* ARM's error shape: {"error":{"code","message"[,"target"]}}. */
static void arm_fail(struct areq *r, int http, const char *code, const char *target,
		     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void arm_fail(struct areq *r, int http, const char *code, const char *target,
		     const char *fmt, ...)
{
	cJSON *root = cJSON_CreateObject(), *e = cJSON_AddObjectToObject(root, "error");
	char msg[900];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cJSON_AddStringToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", msg);
	if (target)
		cJSON_AddStringToObject(e, "target", target);
	reply_json(r, http, root);
}

/* AAD's error shape: error, error_description "AADSTSn: ...", error_codes. */
static void aad_fail(struct areq *r, int http, const char *error, int aadsts, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void aad_fail(struct areq *r, int http, const char *error, int aadsts, const char *fmt, ...)
{
	cJSON *o = cJSON_CreateObject(), *codes;
	char msg[700], desc[800], id[37], ts[48];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	guid(r->f, id);
	iso(real_wall(), ts, sizeof(ts));
	snprintf(desc, sizeof(desc), "AADSTS%d: %s Trace ID: %s Timestamp: %.19sZ", aadsts, msg, id,
		 ts);
	cJSON_AddStringToObject(o, "error", error);
	cJSON_AddStringToObject(o, "error_description", desc);
	codes = cJSON_AddArrayToObject(o, "error_codes");
	cJSON_AddItemToArray(codes, cJSON_CreateNumber(aadsts));
	cJSON_AddStringToObject(o, "trace_id", id);
	reply_json(r, http, o);
}

static const char *query(struct areq *r, const char *key)
{
	return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, key);
}

static const char *header(struct areq *r, const char *key)
{
	return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, key);
}

bool azure_api_version_ok(const char *v)
{
	size_t i;

	for (i = 0; v && i < N_API_VERSIONS; i++)
		if (strcmp(v, api_versions[i]) == 0)
			return true;
	return false;
}

bool azure_if_match_ok(const char *if_match, const char *etag)
{
	size_t n;

	if (!if_match)
		return true;
	if (strcmp(if_match, "*") == 0 || strcmp(if_match, etag) == 0)
		return true;
	/* an etag sent without its quotes */
	n = strlen(etag);
	return n >= 2 && strlen(if_match) == n - 2 && strncmp(if_match, etag + 1, n - 2) == 0;
}

/* base64url without padding of 'len' bytes, appended to 'b'. */
static void b64url(struct buf *b, const unsigned char *in, size_t len)
{
	unsigned char *tmp = malloc(4 * ((len + 2) / 3) + 1);
	int n, i;

	if (!tmp)
		return;
	n = EVP_EncodeBlock(tmp, in, (int)len);
	for (i = 0; i < n; i++) {
		if (tmp[i] == '=')
			break;
		if (tmp[i] == '+')
			tmp[i] = '-';
		else if (tmp[i] == '/')
			tmp[i] = '_';
		buf_append(b, &tmp[i], 1);
	}
	free(tmp);
}

/* ---- tokens: IMDS and AAD ---- */

static bool resource_ok(struct azure_face *f, const char *res)
{
	char mine[64];
	size_t n = res ? strlen(res) : 0;

	if (!n)
		return false;
	while (n && res[n - 1] == '/')
		n--;
	snprintf(mine, sizeof(mine), "http://127.0.0.1:%d", f->port);
	return (n == 29 && strncmp(res, "https://management.azure.com", 28) == 0) ||
	       (n == 28 && strncmp(res, "https://management.azure.com", 28) == 0) ||
	       (n == 36 && strncmp(res, "https://management.core.windows.net", 35) == 0) ||
	       (n == 35 && strncmp(res, "https://management.core.windows.net", 35) == 0) ||
	       (n == strlen(mine) && strncmp(res, mine, n) == 0);
}

static void handle_imds(struct areq *r, const char *url)
{
	struct azure_face *f = r->f;
	const char *md = header(r, "Metadata");
	const char *av = query(r, "api-version");
	cJSON *o;
	char tok[128], num[32];

	if (!md || strcasecmp(md, "true") != 0) {
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "error", "invalid_request");
		cJSON_AddStringToObject(o, "error_description", "Required metadata header not specified");
		reply_json(r, 400, o);
		return;
	}
	add_header(r, "Metadata", "true");
	if (!av || !*av) {
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "error", "Bad request. api-version was not specified in the request. For more information refer to aka.ms/azureimds");
		cJSON_AddItemToObject(o, "newest-versions", cJSON_CreateStringArray(
			(const char *[]){"2023-07-01", "2021-12-13", "2018-02-01"}, 3));
		reply_json(r, 400, o);
		return;
	}
	if (strcmp(url, "/metadata/identity/oauth2/token") == 0) {
		const char *res = query(r, "resource"), *cid = query(r, "client_id");
		int64_t now = real_wall();

		if (!res || !*res) {
			o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "error", "invalid_request");
			cJSON_AddStringToObject(o, "error_description", "Required query variable 'resource' is missing");
			reply_json(r, 400, o);
			return;
		}
		if (!resource_ok(f, res)) {
			o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "error", "invalid_resource");
			cJSON_AddStringToObject(o, "error_description",
						"AADSTS500011: The resource principal named was not found in the tenant. The resource must be https://management.azure.com/.");
			reply_json(r, 400, o);
			return;
		}
		if ((cid && strcasecmp(cid, f->conf->client_id) != 0) || query(r, "object_id") ||
		    query(r, "msi_res_id") || query(r, "mi_res_id")) {
			o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "error", "invalid_request");
			cJSON_AddStringToObject(o, "error_description", "Identity not found");
			reply_json(r, 400, o);
			return;
		}
		face_tokens_issue(&f->tokens, "sim-arm.", f->conf->token_ttl_s, tok, sizeof(tok));
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "access_token", tok);
		cJSON_AddStringToObject(o, "client_id", f->conf->client_id);
		snprintf(num, sizeof(num), "%lld", (long long)f->conf->token_ttl_s);
		cJSON_AddStringToObject(o, "expires_in", num);
		snprintf(num, sizeof(num), "%lld", (long long)(now + f->conf->token_ttl_s));
		cJSON_AddStringToObject(o, "expires_on", num);
		snprintf(num, sizeof(num), "%lld", (long long)f->conf->token_ttl_s);
		cJSON_AddStringToObject(o, "ext_expires_in", num);
		snprintf(num, sizeof(num), "%lld", (long long)now);
		cJSON_AddStringToObject(o, "not_before", num);
		cJSON_AddStringToObject(o, "resource", res);
		cJSON_AddStringToObject(o, "token_type", "Bearer");
		reply_json(r, 200, o);
		return;
	}
	if (strcmp(url, "/metadata/instance") == 0 || strcmp(url, "/metadata/instance/compute") == 0) {
		const struct sim_azure_group *g = f->conf->n_groups ? &f->conf->groups[0] : NULL;
		cJSON *c = cJSON_CreateObject();
		char rid[400], vm[37];

		snprintf(rid, sizeof(rid),
			 "/subscriptions/%s/resourceGroups/%s/providers/Microsoft.Compute/virtualMachineScaleSets/%s/virtualMachines/0",
			 f->conf->subscription, f->conf->resource_group, g ? g->vmss : "sim");
		stable_guid(rid, vm);
		cJSON_AddStringToObject(c, "azEnvironment", "AzurePublicCloud");
		cJSON_AddStringToObject(c, "location", f->conf->location);
		snprintf(num, sizeof(num), "%.20s_0", g ? g->vmss : "sim");
		cJSON_AddStringToObject(c, "name", num);
		cJSON_AddStringToObject(c, "osType", "Linux");
		cJSON_AddStringToObject(c, "resourceGroupName", f->conf->resource_group);
		cJSON_AddStringToObject(c, "resourceId", rid);
		cJSON_AddStringToObject(c, "subscriptionId", f->conf->subscription);
		cJSON_AddStringToObject(c, "vmId", vm);
		cJSON_AddStringToObject(c, "vmScaleSetName", g ? g->vmss : "");
		cJSON_AddStringToObject(c, "vmSize", g ? g->vm_size : "Standard_D4s_v3");
		cJSON_AddStringToObject(c, "zone", g && g->n_zones ? g->zones[0] : "");
		if (strcmp(url, "/metadata/instance/compute") == 0) {
			reply_json(r, 200, c);
			return;
		}
		o = cJSON_CreateObject();
		cJSON_AddItemToObject(o, "compute", c);
		cJSON_AddObjectToObject(o, "network");
		reply_json(r, 200, o);
		return;
	}
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "error", "Not found");
	reply_json(r, 404, o);
}

static void openid_config(struct areq *r, const char *tenant)
{
	struct azure_face *f = r->f;
	cJSON *o;
	char base[96], v[256];

	if (strcasecmp(tenant, f->conf->tenant) != 0 && strcasecmp(tenant, "organizations") != 0) {
		aad_fail(r, 400, "invalid_tenant", 90002,
			 "Tenant '%.60s' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud.",
			 tenant);
		return;
	}
	snprintf(base, sizeof(base), "%s://127.0.0.1:%d/%s", r->tls ? "https" : "http",
		 r->tls ? f->tls_port : f->port, f->conf->tenant);
	o = cJSON_CreateObject();
	snprintf(v, sizeof(v), "%s/oauth2/v2.0/token", base);
	cJSON_AddStringToObject(o, "token_endpoint", v);
	cJSON_AddItemToObject(o, "token_endpoint_auth_methods_supported", cJSON_CreateStringArray(
		(const char *[]){"client_secret_post", "private_key_jwt", "client_secret_basic"}, 3));
	snprintf(v, sizeof(v), "%s/discovery/v2.0/keys", base);
	cJSON_AddStringToObject(o, "jwks_uri", v);
	cJSON_AddItemToObject(o, "response_modes_supported", cJSON_CreateStringArray(
		(const char *[]){"query", "fragment", "form_post"}, 3));
	cJSON_AddItemToObject(o, "response_types_supported", cJSON_CreateStringArray(
		(const char *[]){"code", "id_token", "code id_token", "id_token token"}, 4));
	cJSON_AddItemToObject(o, "scopes_supported", cJSON_CreateStringArray(
		(const char *[]){"openid", "profile", "email", "offline_access"}, 4));
	snprintf(v, sizeof(v), "%s/v2.0", base);
	cJSON_AddStringToObject(o, "issuer", v);
	snprintf(v, sizeof(v), "%s/oauth2/v2.0/authorize", base);
	cJSON_AddStringToObject(o, "authorization_endpoint", v);
	snprintf(v, sizeof(v), "%s/oauth2/v2.0/devicecode", base);
	cJSON_AddStringToObject(o, "device_authorization_endpoint", v);
	cJSON_AddStringToObject(o, "tenant_region_scope", "NA");
	cJSON_AddStringToObject(o, "cloud_instance_name", "microsoftonline.com");
	reply_json(r, 200, o);
}

/* Is 'scope' (space-separated) a .default scope of ARM, with only OIDC's reserved ones besides? */
static bool scope_ok(struct azure_face *f, const char *scope)
{
	const char *p = scope;
	bool found = false;

	while (*p) {
		const char *end = strchr(p, ' ');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char one[300];

		if (n >= sizeof(one))
			return false;
		memcpy(one, p, n);
		one[n] = '\0';
		p += n;
		while (*p == ' ')
			p++;
		if (!n || strcmp(one, "openid") == 0 || strcmp(one, "profile") == 0 ||
		    strcmp(one, "offline_access") == 0)
			continue;
		if (n <= 9 || strcmp(one + n - 9, "/.default") != 0)
			return false;
		one[n - 9] = '\0';
		if (!resource_ok(f, one))
			return false;
		found = true;
	}
	return found;
}

static void handle_aad_token(struct areq *r, const char *tenant, const char *body)
{
	struct azure_face *f = r->f;
	char gt[64], cid[64], scope[512], at[128];
	char *secret = malloc(FACE_HTTP_MAX_BODY), *assertion = malloc(FACE_HTTP_MAX_BODY);
	bool has_secret, has_assertion;
	cJSON *o;
	char tok[128];

	if (!secret || !assertion) {
		aad_fail(r, 500, "server_error", 90033, "out of memory");
		goto out;
	}
	if (strcasecmp(tenant, f->conf->tenant) != 0) {
		aad_fail(r, 400, "invalid_request", 90002,
			 "Tenant '%.60s' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud.",
			 tenant);
		goto out;
	}
	if (!face_form_value(body, "grant_type", gt, sizeof(gt)) ||
	    strcmp(gt, "client_credentials") != 0) {
		aad_fail(r, 400, "unsupported_grant_type", 70003,
			 "The app requested an unsupported grant type '%.40s'.",
			 face_form_value(body, "grant_type", gt, sizeof(gt)) ? gt : "");
		goto out;
	}
	if (!face_form_value(body, "client_id", cid, sizeof(cid))) {
		aad_fail(r, 400, "invalid_request", 900144,
			 "The request body must contain the following parameter: 'client_id'.");
		goto out;
	}
	if (strcasecmp(cid, f->conf->client_id) != 0) {
		aad_fail(r, 400, "unauthorized_client", 700016,
			 "Application with identifier '%.60s' was not found in the directory '%s'.", cid,
			 f->conf->tenant);
		goto out;
	}
	if (!face_form_value(body, "scope", scope, sizeof(scope))) {
		aad_fail(r, 400, "invalid_request", 900144,
			 "The request body must contain the following parameter: 'scope'.");
		goto out;
	}
	if (!scope_ok(f, scope)) {
		aad_fail(r, 400, "invalid_scope", 1002012,
			 "The provided value for scope %.200s is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier (application ID URI).",
			 scope);
		goto out;
	}
	has_secret = face_form_value(body, "client_secret", secret, FACE_HTTP_MAX_BODY) != NULL;
	has_assertion = face_form_value(body, "client_assertion", assertion, FACE_HTTP_MAX_BODY) != NULL;
	if (has_secret == has_assertion) {
		aad_fail(r, 400, "invalid_request", 7000218,
			 "The request body must contain the following parameter: 'client_assertion' or 'client_secret'.");
		goto out;
	}
	if (has_secret && strcmp(secret, f->conf->client_secret) != 0) {
		aad_fail(r, 401, "invalid_client", 7000215,
			 "Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '%s'.",
			 f->conf->client_id);
		goto out;
	}
	if (has_assertion) {
		if (!face_form_value(body, "client_assertion_type", at, sizeof(at)) ||
		    strcmp(at, JWT_BEARER) != 0) {
			aad_fail(r, 400, "invalid_request", 7000219,
				 "'client_assertion_type' must be '" JWT_BEARER "'.");
			goto out;
		}
		if (strcmp(assertion, f->federated) != 0) {
			aad_fail(r, 400, "invalid_client", 70021,
				 "No matching federated identity record found for presented assertion.");
			goto out;
		}
		if (f->federated_exp <= real_wall()) {
			aad_fail(r, 400, "invalid_client", 700024,
				 "Client assertion is not within its valid time range.");
			goto out;
		}
	}
	face_tokens_issue(&f->tokens, "sim-arm.", f->conf->token_ttl_s, tok, sizeof(tok));
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "token_type", "Bearer");
	cJSON_AddNumberToObject(o, "expires_in", (double)f->conf->token_ttl_s);
	cJSON_AddNumberToObject(o, "ext_expires_in", (double)f->conf->token_ttl_s);
	cJSON_AddStringToObject(o, "access_token", tok);
	reply_json(r, 200, o);
out:
	if (secret)
		OPENSSL_cleanse(secret, strlen(secret));
	free(secret);
	free(assertion);
}

/* ---- ARM: shapes ---- */

static void vmss_id(const struct azure_face *f, size_t i, char *out, size_t size)
{
	snprintf(out, size,
		 "/subscriptions/%s/resourceGroups/%s/providers/Microsoft.Compute/virtualMachineScaleSets/%s",
		 f->conf->subscription, f->conf->resource_group, sim_azure_group(f->az, i)->vmss);
}

static cJSON *tags_json(const struct sim_azure_group *g)
{
	cJSON *t = cJSON_CreateObject();
	size_t k;

	for (k = 0; k < g->n_tags; k++)
		cJSON_AddStringToObject(t, g->tags[k].key, g->tags[k].value);
	/* an AKS pool's scale set says which pool it is, as AKS tags it */
	if (g->agent_pool && !cJSON_GetObjectItemCaseSensitive(t, "aks-managed-poolName"))
		cJSON_AddStringToObject(t, "aks-managed-poolName", g->agent_pool);
	return t;
}

static cJSON *sku_json(const struct sim_azure_group *g, int capacity)
{
	cJSON *s = cJSON_CreateObject();

	cJSON_AddStringToObject(s, "name", g->vm_size);
	cJSON_AddStringToObject(s, "tier", "Standard");
	if (capacity >= 0)
		cJSON_AddNumberToObject(s, "capacity", capacity);
	return s;
}

static cJSON *zones_json(const struct sim_azure_group *g)
{
	cJSON *z = cJSON_CreateArray();
	size_t k;

	for (k = 0; k < g->n_zones; k++)
		cJSON_AddItemToArray(z, cJSON_CreateString(g->zones[k]));
	return z;
}

static cJSON *vmss_json(struct azure_face *f, size_t i)
{
	const struct sim_azure_group *g = sim_azure_group(f->az, i);
	cJSON *o = cJSON_CreateObject(), *p, *vp, *os, *lc, *st, *img, *od, *md, *np, *nics, *nic,
	      *np2, *ipcs, *ipc, *ipp, *sub, *up;
	char id[400], etag[32], uid[37], ts[48], subnet[400];

	vmss_id(f, i, id, sizeof(id));
	sim_azure_etag(f->az, i, etag, sizeof(etag));
	stable_guid(id, uid);
	cJSON_AddStringToObject(o, "name", g->vmss);
	cJSON_AddStringToObject(o, "id", id);
	cJSON_AddStringToObject(o, "type", "Microsoft.Compute/virtualMachineScaleSets");
	cJSON_AddStringToObject(o, "location", f->conf->location);
	cJSON_AddItemToObject(o, "tags", tags_json(g));
	cJSON_AddItemToObject(o, "sku", sku_json(g, sim_azure_capacity(f->az, i)));
	cJSON_AddStringToObject(o, "etag", etag);
	if (g->n_zones)
		cJSON_AddItemToObject(o, "zones", zones_json(g));
	p = cJSON_AddObjectToObject(o, "properties");
	cJSON_AddBoolToObject(p, "singlePlacementGroup", false);
	cJSON_AddStringToObject(p, "orchestrationMode", "Uniform");
	up = cJSON_AddObjectToObject(p, "upgradePolicy");
	cJSON_AddStringToObject(up, "mode", "Manual");
	vp = cJSON_AddObjectToObject(p, "virtualMachineProfile");
	if (g->priority && strcmp(g->priority, "Regular")) {
		cJSON_AddStringToObject(vp, "priority", g->priority);
		cJSON_AddStringToObject(vp, "evictionPolicy", "Delete");
		cJSON_AddNumberToObject(cJSON_AddObjectToObject(vp, "billingProfile"), "maxPrice", -1);
	}
	os = cJSON_AddObjectToObject(vp, "osProfile");
	cJSON_AddStringToObject(os, "computerNamePrefix", g->computer_prefix);
	cJSON_AddStringToObject(os, "adminUsername", "azureuser");
	lc = cJSON_AddObjectToObject(os, "linuxConfiguration");
	cJSON_AddBoolToObject(lc, "disablePasswordAuthentication", true);
	cJSON_AddBoolToObject(lc, "provisionVMAgent", true);
	cJSON_AddItemToObject(os, "secrets", cJSON_CreateArray());
	cJSON_AddBoolToObject(os, "allowExtensionOperations", true);
	st = cJSON_AddObjectToObject(vp, "storageProfile");
	img = cJSON_AddObjectToObject(st, "imageReference");
	cJSON_AddStringToObject(img, "publisher", "Canonical");
	cJSON_AddStringToObject(img, "offer", "0001-com-ubuntu-server-jammy");
	cJSON_AddStringToObject(img, "sku", "22_04-lts-gen2");
	cJSON_AddStringToObject(img, "version", "latest");
	od = cJSON_AddObjectToObject(st, "osDisk");
	cJSON_AddStringToObject(od, "osType", "Linux");
	cJSON_AddStringToObject(od, "createOption", "FromImage");
	cJSON_AddStringToObject(od, "caching", "ReadOnly");
	md = cJSON_AddObjectToObject(od, "managedDisk");
	cJSON_AddStringToObject(md, "storageAccountType", "Premium_LRS");
	cJSON_AddNumberToObject(od, "diskSizeGB", 128);
	np = cJSON_AddObjectToObject(vp, "networkProfile");
	nics = cJSON_AddArrayToObject(np, "networkInterfaceConfigurations");
	nic = cJSON_CreateObject();
	cJSON_AddStringToObject(nic, "name", g->vmss);
	np2 = cJSON_AddObjectToObject(nic, "properties");
	cJSON_AddBoolToObject(np2, "primary", true);
	cJSON_AddBoolToObject(np2, "enableAcceleratedNetworking", false);
	cJSON_AddBoolToObject(np2, "enableIPForwarding", true);
	ipcs = cJSON_AddArrayToObject(np2, "ipConfigurations");
	ipc = cJSON_CreateObject();
	cJSON_AddStringToObject(ipc, "name", "ipconfig1");
	ipp = cJSON_AddObjectToObject(ipc, "properties");
	sub = cJSON_AddObjectToObject(ipp, "subnet");
	snprintf(subnet, sizeof(subnet),
		 "/subscriptions/%s/resourceGroups/%s/providers/Microsoft.Network/virtualNetworks/sim-vnet/subnets/sim-subnet",
		 f->conf->subscription, f->conf->resource_group);
	cJSON_AddStringToObject(sub, "id", subnet);
	cJSON_AddBoolToObject(ipp, "primary", true);
	cJSON_AddStringToObject(ipp, "privateIPAddressVersion", "IPv4");
	cJSON_AddItemToArray(ipcs, ipc);
	cJSON_AddItemToArray(nics, nic);
	cJSON_AddStringToObject(p, "provisioningState",
				sim_azure_updating(f->az, i) ? "Updating" : "Succeeded");
	cJSON_AddBoolToObject(p, "overprovision", false);
	cJSON_AddBoolToObject(p, "doNotRunExtensionsOnOverprovisionedVMs", false);
	cJSON_AddStringToObject(p, "uniqueId", uid);
	cJSON_AddNumberToObject(p, "platformFaultDomainCount", 1);
	iso(real_wall() - 86400, ts, sizeof(ts));
	cJSON_AddStringToObject(p, "timeCreated", ts);
	return o;
}

static const char *vm_state_name(enum sim_azure_vm_state s)
{
	switch (s) {
	case SIM_AZURE_CREATING: return "Creating";
	case SIM_AZURE_SUCCEEDED: return "Succeeded";
	case SIM_AZURE_FAILED: return "Failed";
	default: return "Deleting";
	}
}

static void add_status(cJSON *arr, const char *code, const char *level, const char *display,
		       const char *message, const char *time)
{
	cJSON *s = cJSON_CreateObject();

	cJSON_AddStringToObject(s, "code", code);
	cJSON_AddStringToObject(s, "level", level);
	cJSON_AddStringToObject(s, "displayStatus", display);
	if (message)
		cJSON_AddStringToObject(s, "message", message);
	if (time)
		cJSON_AddStringToObject(s, "time", time);
	cJSON_AddItemToArray(arr, s);
}

static cJSON *vm_json(struct azure_face *f, size_t gi, const struct sim_azure_vm *vm,
		      bool instance_view)
{
	const struct sim_azure_group *g = sim_azure_group(f->az, gi);
	cJSON *o = cJSON_CreateObject(), *p, *os, *hw, *np, *nis, *ni;
	char id[400], vmid[37], ts[48], nid[500], iid[16];

	vmss_id(f, gi, id, sizeof(id));
	snprintf(id + strlen(id), sizeof(id) - strlen(id), "/virtualMachines/%d", vm->instance_id);
	stable_guid(id, vmid);
	snprintf(iid, sizeof(iid), "%d", vm->instance_id);
	cJSON_AddStringToObject(o, "name", vm->name);
	cJSON_AddStringToObject(o, "id", id);
	cJSON_AddStringToObject(o, "type", "Microsoft.Compute/virtualMachineScaleSets/virtualMachines");
	cJSON_AddStringToObject(o, "location", f->conf->location);
	cJSON_AddStringToObject(o, "instanceId", iid);
	cJSON_AddItemToObject(o, "sku", sku_json(g, -1));
	cJSON_AddItemToObject(o, "tags", tags_json(g));
	if (vm->zone[0]) {
		cJSON *z = cJSON_AddArrayToObject(o, "zones");

		cJSON_AddItemToArray(z, cJSON_CreateString(vm->zone));
	}
	p = cJSON_AddObjectToObject(o, "properties");
	/* false once an image fault rolled the scale set's model past the VM's image */
	cJSON_AddBoolToObject(p, "latestModelApplied", sim_azure_latest_model(f->az, vm));
	cJSON_AddStringToObject(p, "vmId", vmid);
	hw = cJSON_AddObjectToObject(p, "hardwareProfile");
	cJSON_AddStringToObject(hw, "vmSize", g->vm_size);
	os = cJSON_AddObjectToObject(p, "osProfile");
	cJSON_AddStringToObject(os, "computerName", vm->computer);
	cJSON_AddStringToObject(os, "adminUsername", "azureuser");
	np = cJSON_AddObjectToObject(p, "networkProfile");
	nis = cJSON_AddArrayToObject(np, "networkInterfaces");
	ni = cJSON_CreateObject();
	snprintf(nid, sizeof(nid), "%s/networkInterfaces/%s", id, g->vmss);
	cJSON_AddStringToObject(ni, "id", nid);
	cJSON_AddItemToArray(nis, ni);
	cJSON_AddStringToObject(p, "provisioningState", vm_state_name(vm->state));
	if (vm->in) {
		/* when the machine was made (a VM still waiting for one has no time yet) */
		iso(vm->in->created_wall, ts, sizeof(ts));
		cJSON_AddStringToObject(p, "timeCreated", ts);
	}
	iso(real_wall(), ts, sizeof(ts));
	if (instance_view) {
		cJSON *iv = cJSON_AddObjectToObject(p, "instanceView"), *sts;

		cJSON_AddNumberToObject(iv, "platformUpdateDomain", vm->instance_id % 5);
		cJSON_AddNumberToObject(iv, "platformFaultDomain", 0);
		cJSON_AddStringToObject(iv, "computerName", vm->computer);
		cJSON_AddStringToObject(iv, "osName", "ubuntu");
		cJSON_AddStringToObject(iv, "osVersion", "22.04");
		sts = cJSON_AddArrayToObject(iv, "statuses");
		switch (vm->state) {
		case SIM_AZURE_CREATING:
			add_status(sts, "ProvisioningState/creating", "Info", "Creating", NULL, NULL);
			if (vm->in)
				add_status(sts, "PowerState/starting", "Info", "VM starting", NULL, NULL);
			break;
		case SIM_AZURE_SUCCEEDED:
			add_status(sts, "ProvisioningState/succeeded", "Info", "Provisioning succeeded",
				   NULL, ts);
			add_status(sts, "PowerState/running", "Info", "VM running", NULL, NULL);
			break;
		case SIM_AZURE_FAILED: {
			char code[96];

			snprintf(code, sizeof(code), "ProvisioningState/failed/%s", vm->error_code);
			add_status(sts, code, "Error", "Provisioning failed", vm->error_message, ts);
			add_status(sts, "PowerState/deallocated", "Info", "VM deallocated", NULL, NULL);
			break;
		}
		default:
			add_status(sts, "ProvisioningState/deleting", "Info", "Deleting", NULL, NULL);
			add_status(sts, "PowerState/stopping", "Info", "VM stopping", NULL, NULL);
			break;
		}
	}
	return o;
}

/* ---- ARM: handlers ---- */

static void throttled(struct areq *r)
{
	struct azure_face *f = r->f;
	char start[48], end[48];

	add_header(r, "Retry-After", "%lld", (long long)f->conf->retry_after_s);
	add_header(r, "x-ms-ratelimit-remaining-subscription-reads", "0");
	if (f->conf->throttle == SIM_AZURE_NOT_ALLOWED) {
		cJSON *root = cJSON_CreateObject(), *e = cJSON_AddObjectToObject(root, "error");
		cJSON *details = cJSON_AddArrayToObject(e, "details"), *d = cJSON_CreateObject();
		char msg[300];

		iso(real_wall(), start, sizeof(start));
		iso(real_wall() + f->conf->retry_after_s, end, sizeof(end));
		cJSON_AddStringToObject(e, "code", "OperationNotAllowed");
		cJSON_AddStringToObject(e, "message",
					"The server rejected the request because too many requests have been received for this subscription.");
		cJSON_AddStringToObject(d, "code", "TooManyRequests");
		cJSON_AddStringToObject(d, "target", "HighCostGet30Min");
		snprintf(msg, sizeof(msg),
			 "{\"operationGroup\":\"HighCostGet30Min\",\"startTime\":\"%s\",\"endTime\":\"%s\",\"allowedRequestCount\":900,\"measuredRequestCount\":901}",
			 start, end);
		cJSON_AddStringToObject(d, "message", msg);
		cJSON_AddItemToArray(details, d);
		reply_json(r, 429, root);
		return;
	}
	arm_fail(r, 429, "TooManyRequests", NULL,
		 "The request is being throttled as the limit has been reached for operation group %s. Please retry after %lld seconds.",
		 "Microsoft.Compute/HighCostGetVMScaleSet30Min", (long long)f->conf->retry_after_s);
}

/* Charges one call of group gi (-1: the cloud's) to the API limit; false: answered 429. */
static bool admit(struct areq *r, int gi)
{
	if (sim_cloud_admit(r->f->cloud, gi >= 0 ? sim_cloud_group(r->f->cloud, (size_t)gi)->name
						 : NULL)) {
		add_header(r, "x-ms-ratelimit-remaining-resource",
			   "Microsoft.Compute/HighCostGetVMScaleSet3Min;107,Microsoft.Compute/HighCostGetVMScaleSet30Min;827");
		return true;
	}
	throttled(r);
	return false;
}

/* Query parameters this route takes besides api-version: anything else
 * that starts with '$' is an OData option ARM would refuse. */
struct qcheck {
	struct areq *r;
	const char *const *allowed;
	const char *bad;
};

static enum MHD_Result check_param(void *cls, enum MHD_ValueKind kind, const char *key,
				   const char *value)
{
	struct qcheck *q = cls;
	size_t i;

	(void)kind;
	(void)value;
	if (strcmp(key, "api-version") == 0)
		return MHD_YES;
	for (i = 0; q->allowed && q->allowed[i]; i++)
		if (strcmp(q->allowed[i], key) == 0)
			return MHD_YES;
	if (key[0] == '$') {
		q->bad = key;
		return MHD_NO;
	}
	return MHD_YES;
}

static bool params_ok(struct areq *r, const char *const *allowed)
{
	struct qcheck q = {r, allowed, NULL};

	MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, check_param, &q);
	if (q.bad) {
		arm_fail(r, 400, "InvalidParameter", q.bad,
			 "The query parameter '%.40s' is not supported by this operation.", q.bad);
		return false;
	}
	return true;
}

/* Azure-AsyncOperation (unless 'location_only'), Location and Retry-After for 'op'. */
static void async_headers(struct areq *r, const struct sim_azure_op *op, bool location_only)
{
	struct azure_face *f = r->f;
	char base[400];

	snprintf(base, sizeof(base),
		 "http://127.0.0.1:%d/subscriptions/%s/providers/%s/locations/%s/operations/%s",
		 f->port, f->conf->subscription, r->ns, f->conf->location, op->id);
	if (!location_only)
		add_header(r, "Azure-AsyncOperation", "%s?p=%s&api-version=%s", base, op->id,
			   r->api_version);
	add_header(r, "Location", "%s?p=%s&monitor=true&api-version=%s", base, op->id,
		   r->api_version);
	add_header(r, "Retry-After", "%lld", (long long)f->conf->retry_after_s);
}

static void get_vmss(struct areq *r, int gi)
{
	static const char *const allowed[] = {"$expand", NULL};
	const char *ex = query(r, "$expand");
	cJSON *o;

	if (ex && strcmp(ex, "userData") != 0) {
		arm_fail(r, 400, "InvalidParameter", "$expand",
			 "The value '%.40s' of parameter '$expand' is invalid. Allowed values are 'userData'.",
			 ex);
		return;
	}
	if (!params_ok(r, allowed) || !admit(r, gi))
		return;
	sim_cloud_lock(r->f->cloud);
	o = vmss_json(r->f, (size_t)gi);
	sim_cloud_unlock(r->f->cloud);
	{
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "etag");

		add_header(r, "ETag", "%s", e->valuestring);
	}
	reply_json(r, 200, o);
}

/* Every scale set: the resource group's list and the subscription's are
 * the same, as the scenario's scale sets are all in one resource group. */
static void list_vmss(struct areq *r)
{
	struct azure_face *f = r->f;
	cJSON *o, *arr;
	size_t i;

	if (!params_ok(r, NULL) || !admit(r, -1))
		return;
	o = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(o, "value");
	sim_cloud_lock(f->cloud);
	for (i = 0; i < f->conf->n_groups; i++)
		cJSON_AddItemToArray(arr, vmss_json(f, i));
	sim_cloud_unlock(f->cloud);
	reply_json(r, 200, o);
}

static void list_vms(struct areq *r, int gi, const char *url)
{
	static const char *const allowed[] = {"$expand", "$skiptoken", "$top", NULL};
	struct azure_face *f = r->f;
	const char *ex = query(r, "$expand"), *skip = query(r, "$skiptoken"), *top = query(r, "$top");
	long long page = f->conf->page_size, offset = 0, t;
	const struct sim_azure_vm *vm;
	struct buf next = BUF_INIT;
	cJSON *o, *arr;
	size_t n, k;

	if (query(r, "$filter") || query(r, "$select")) {
		arm_fail(r, 400, "InvalidParameter", query(r, "$filter") ? "$filter" : "$select",
			 "luascale sim does not model $filter or $select on the VM list; ask for every VM.");
		return;
	}
	if (!params_ok(r, allowed))
		return;
	if (ex && strcmp(ex, "instanceView") != 0) {
		arm_fail(r, 400, "InvalidParameter", "$expand",
			 "The value '%.40s' of parameter '$expand' is invalid. Allowed values are 'instanceView'.",
			 ex);
		return;
	}
	if (top) {
		if (face_parse_int(top, 1, 1000, &t) < 0) {
			arm_fail(r, 400, "InvalidParameter", "$top",
				 "The value '%.20s' of parameter '$top' is invalid: an integer 1-1000.", top);
			return;
		}
		if (t < page)
			page = t;
	}
	if (skip && (skip[0] != 'p' || face_parse_int(skip + 1, 0, 1000000, &offset) < 0)) {
		arm_fail(r, 400, "InvalidParameter", "$skiptoken",
			 "The value '%.40s' of parameter '$skiptoken' is invalid.", skip);
		return;
	}
	if (!admit(r, gi))
		return;
	o = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(o, "value");
	sim_cloud_lock(f->cloud);
	vm = sim_azure_vms(f->az, (size_t)gi, &n);
	for (k = (size_t)offset; k < n && k < (size_t)(offset + page); k++)
		cJSON_AddItemToArray(arr, vm_json(f, (size_t)gi, &vm[k], ex != NULL));
	if ((size_t)(offset + page) < n) {
		buf_printf(&next, "http://127.0.0.1:%d%s?api-version=%s", f->port, url,
			   r->api_version);
		if (ex)
			buf_puts(&next, "&%24expand=instanceView");
		if (top)
			buf_printf(&next, "&%%24top=%lld", page);
		buf_printf(&next, "&%%24skiptoken=p%lld", offset + page);
	}
	sim_cloud_unlock(f->cloud);
	if (next.len)
		cJSON_AddStringToObject(o, "nextLink", next.data);
	buf_free(&next);
	reply_json(r, 200, o);
}

static void get_vm(struct areq *r, int gi, const char *id)
{
	static const char *const allowed[] = {"$expand", NULL};
	struct azure_face *f = r->f;
	const char *ex = query(r, "$expand");
	const struct sim_azure_vm *vm;
	cJSON *o = NULL;

	if (!params_ok(r, allowed))
		return;
	if (ex && strcmp(ex, "instanceView") != 0 && strcmp(ex, "userData") != 0) {
		arm_fail(r, 400, "InvalidParameter", "$expand",
			 "The value '%.40s' of parameter '$expand' is invalid. Allowed values are 'instanceView', 'userData'.",
			 ex);
		return;
	}
	if (!admit(r, gi))
		return;
	sim_cloud_lock(f->cloud);
	vm = sim_azure_find_vm(f->az, (size_t)gi, id);
	if (vm)
		o = vm_json(f, (size_t)gi, vm, ex && strcmp(ex, "instanceView") == 0);
	sim_cloud_unlock(f->cloud);
	if (!o) {
		arm_fail(r, 404, "NotFound", NULL, "The entity was not found in this Azure location.");
		return;
	}
	reply_json(r, 200, o);
}

/* GET .../virtualMachines/ID/networkInterfaces: the VM's one NIC and its
 * private IP address (the address its node reports as InternalIP). */
static void list_vm_nics(struct areq *r, int gi, const char *id)
{
	struct azure_face *f = r->f;
	const struct sim_azure_group *g;
	const struct sim_azure_vm *vm;
	char vid[400], nid[500], cid[560];
	cJSON *o = NULL;

	if (!params_ok(r, NULL) || !admit(r, gi))
		return;
	sim_cloud_lock(f->cloud);
	vm = sim_azure_find_vm(f->az, (size_t)gi, id);
	if (vm) {
		cJSON *arr, *nic, *p, *ips, *ip, *ipp;

		g = sim_azure_group(f->az, (size_t)gi);
		vmss_id(f, (size_t)gi, vid, sizeof(vid));
		snprintf(vid + strlen(vid), sizeof(vid) - strlen(vid), "/virtualMachines/%d", vm->instance_id);
		snprintf(nid, sizeof(nid), "%s/networkInterfaces/%s", vid, g->vmss);
		snprintf(cid, sizeof(cid), "%s/ipConfigurations/ipconfig1", nid);
		o = cJSON_CreateObject();
		arr = cJSON_AddArrayToObject(o, "value");
		nic = cJSON_CreateObject();
		cJSON_AddStringToObject(nic, "name", g->vmss);
		cJSON_AddStringToObject(nic, "id", nid);
		p = cJSON_AddObjectToObject(nic, "properties");
		cJSON_AddStringToObject(p, "provisioningState", "Succeeded");
		cJSON_AddBoolToObject(p, "primary", true);
		ips = cJSON_AddArrayToObject(p, "ipConfigurations");
		ip = cJSON_CreateObject();
		cJSON_AddStringToObject(ip, "name", "ipconfig1");
		cJSON_AddStringToObject(ip, "id", cid);
		ipp = cJSON_AddObjectToObject(ip, "properties");
		if (vm->in && vm->in->private_ip[0])
			cJSON_AddStringToObject(ipp, "privateIPAddress", vm->in->private_ip);
		cJSON_AddStringToObject(ipp, "privateIPAllocationMethod", "Dynamic");
		cJSON_AddStringToObject(ipp, "privateIPAddressVersion", "IPv4");
		cJSON_AddBoolToObject(ipp, "primary", true);
		cJSON_AddItemToArray(ips, ip);
		cJSON_AddItemToArray(arr, nic);
	}
	sim_cloud_unlock(f->cloud);
	if (!o) {
		arm_fail(r, 404, "NotFound", NULL, "The entity was not found in this Azure location.");
		return;
	}
	reply_json(r, 200, o);
}

/* Checks If-Match / If-None-Match against scale set gi: false when answered 412. */
static bool preconditions(struct areq *r, int gi)
{
	const char *im = header(r, "If-Match"), *inm = header(r, "If-None-Match");
	char etag[32];

	sim_azure_etag(r->f->az, (size_t)gi, etag, sizeof(etag));
	if (!azure_if_match_ok(im, etag)) {
		arm_fail(r, 412, "PreconditionFailed", NULL,
			 "The specified precondition 'If-Match = %.40s' was not met. The current etag is %s.",
			 im, etag);
		return false;
	}
	if (inm && (strcmp(inm, "*") == 0 || azure_if_match_ok(inm, etag))) {
		arm_fail(r, 412, "PreconditionFailed", NULL,
			 "The specified precondition 'If-None-Match = %.40s' was not met.", inm);
		return false;
	}
	return true;
}

static bool same_location(const char *a, const char *b)
{
	for (;;) {
		while (*a == ' ')
			a++;
		while (*b == ' ')
			b++;
		if (!*a || !*b)
			return !*a && !*b;
		if ((*a | 0x20) != (*b | 0x20))
			return false;
		a++;
		b++;
	}
}

/* PUT (sparse or whole) and PATCH of scale set gi: only sku.capacity changes. */
static void write_vmss(struct areq *r, int gi, bool put, const char *body)
{
	struct azure_face *f = r->f;
	const struct sim_azure_group *g = sim_azure_group(f->az, (size_t)gi);
	cJSON *j = cJSON_Parse(body), *o;
	const cJSON *loc, *sku, *cap, *name, *tier, *tags;
	struct sim_azure_op op;
	struct errbuf err;
	char code[48];
	int capacity, rc;

	if (!params_ok(r, NULL))
		goto out;
	if (!cJSON_IsObject(j)) {
		arm_fail(r, 400, "InvalidRequestContent", NULL,
			 "The request content was invalid and could not be deserialized: the body must be a JSON object.");
		goto out;
	}
	loc = cJSON_GetObjectItemCaseSensitive(j, "location");
	if (put && !cJSON_IsString(loc)) {
		arm_fail(r, 400, "LocationRequired", NULL,
			 "The location property is required for this definition.");
		goto out;
	}
	if (cJSON_IsString(loc) && !same_location(loc->valuestring, f->conf->location)) {
		arm_fail(r, 400, "InvalidResourceLocation", NULL,
			 "The resource '%s' already exists in location '%s' in resource group '%s'. A resource with the same name cannot be created in location '%.40s'. Please select a new resource name.",
			 g->vmss, f->conf->location, f->conf->resource_group, loc->valuestring);
		goto out;
	}
	sku = cJSON_GetObjectItemCaseSensitive(j, "sku");
	if (sku && !cJSON_IsObject(sku)) {
		arm_fail(r, 400, "InvalidRequestContent", NULL,
			 "The request content was invalid and could not be deserialized: 'sku' must be an object.");
		goto out;
	}
	cap = sku ? cJSON_GetObjectItemCaseSensitive(sku, "capacity") : NULL;
	name = sku ? cJSON_GetObjectItemCaseSensitive(sku, "name") : NULL;
	tier = sku ? cJSON_GetObjectItemCaseSensitive(sku, "tier") : NULL;
	if (cap && (!cJSON_IsNumber(cap) || cap->valuedouble != (double)(long long)cap->valuedouble ||
		    cap->valuedouble < -1e9 || cap->valuedouble > 1e9)) {
		arm_fail(r, 400, "InvalidRequestContent", NULL,
			 "The request content was invalid and could not be deserialized: Could not convert 'sku.capacity' to an integer.");
		goto out;
	}
	if (name && (!cJSON_IsString(name) || strcasecmp(name->valuestring, g->vm_size) != 0)) {
		arm_fail(r, 409, "PropertyChangeNotAllowed", "sku.name",
			 "Changing property 'sku.name' is not allowed: luascale sim keeps scale set %s at %s.",
			 g->vmss, g->vm_size);
		goto out;
	}
	if (tier && (!cJSON_IsString(tier) || strcasecmp(tier->valuestring, "Standard") != 0)) {
		arm_fail(r, 400, "InvalidParameter", "sku.tier",
			 "The value of parameter sku.tier is invalid: Standard.");
		goto out;
	}
	tags = cJSON_GetObjectItemCaseSensitive(j, "tags");
	if (tags) {
		cJSON *mine = tags_json(g);
		bool same = cJSON_IsObject(tags) && cJSON_Compare(tags, mine, true);

		cJSON_Delete(mine);
		if (!same) {
			arm_fail(r, 400, "InvalidParameter", "tags",
				 "luascale sim: the tags of scale set %s come from the scenario and cannot be changed.",
				 g->vmss);
			goto out;
		}
	}
	sim_cloud_lock(f->cloud);
	rc = preconditions(r, gi) ? 0 : -1;
	sim_cloud_unlock(f->cloud);
	if (rc < 0 || !admit(r, gi))
		goto out;
	if (cap) {
		/* a slow_resize fault: the new capacity lands (and is answered) only later */
		int64_t d = sim_cloud_resize_delay(f->cloud, sim_cloud_group(f->cloud, (size_t)gi)->name);

		if (d > 0)
			face_http_sleep_ns(d);
	}
	sim_cloud_lock(f->cloud);
	capacity = cap ? (int)cap->valuedouble : sim_azure_capacity(f->az, (size_t)gi);
	rc = preconditions(r, gi) ? 0 : -2; /* again: another writer may have come between */
	if (rc == 0)
		rc = sim_azure_set_capacity(f->az, (size_t)gi, capacity, &op, code, sizeof(code), &err);
	o = rc == 0 ? vmss_json(f, (size_t)gi) : NULL;
	sim_cloud_unlock(f->cloud);
	if (rc == -2)
		goto out;
	if (rc < 0) {
		arm_fail(r, strcmp(code, "InvalidParameter") == 0 ? 400 : 409, code,
			 strcmp(code, "InvalidParameter") == 0 ? "sku.capacity" : NULL, "%s", err.msg);
		goto out;
	}
	async_headers(r, &op, false);
	add_header(r, "ETag", "%s", cJSON_GetObjectItemCaseSensitive(o, "etag")->valuestring);
	log_at(f->o.log, LOG_DEBUG, real_wall(), "sim azure: scale set %s capacity -> %d (operation %s)",
	       g->vmss, capacity, op.id);
	reply_json(r, 200, o);
	r->drop = sim_cloud_lose_answer(f->cloud, sim_cloud_group(f->cloud, (size_t)gi)->name);
out:
	cJSON_Delete(j);
}

/* A terminate_error fault for a delete of scale set gi: true when one
 * fired and the answer is ARM's refusal (429 with Retry-After: the fault's
 * delay, else the scenario's retry_after). */
static bool delete_refused(struct areq *r, int gi)
{
	struct azure_face *f = r->f;
	const struct sim_azure_group *g = sim_azure_group(f->az, (size_t)gi);
	enum provider_error e;
	int64_t ra = 0;

	if (!sim_cloud_terminate_fault(f->cloud, sim_cloud_group(f->cloud, (size_t)gi)->name, &e, &ra))
		return false;
	switch (e) {
	case PROVIDER_THROTTLED: {
		long long secs = ra > 0 ? (ra + CLOCK_NS_PER_S - 1) / CLOCK_NS_PER_S : (long long)f->conf->retry_after_s;

		add_header(r, "Retry-After", "%lld", secs);
		add_header(r, "x-ms-ratelimit-remaining-subscription-deletes", "0");
		arm_fail(r, 429, "TooManyRequests", NULL,
			 "The request is being throttled as the limit has been reached for operation group %s. Please retry after %lld seconds.",
			 "Microsoft.Compute/DeleteVMScaleSetVMs3Min", secs);
		break;
	}
	case PROVIDER_AUTH:
		arm_fail(r, 403, "AuthorizationFailed", NULL,
			 "The client 'luascale-sim' with object id 'luascale-sim' does not have authorization to perform action 'Microsoft.Compute/virtualMachineScaleSets/delete/action' over scope '/subscriptions/%s/resourceGroups/%s/providers/Microsoft.Compute/virtualMachineScaleSets/%s' or the scope is invalid.",
			 f->conf->subscription, f->conf->resource_group, g->vmss);
		break;
	case PROVIDER_NOT_FOUND:
		arm_fail(r, 404, "NotFound", NULL, "The entity was not found in this Azure location.");
		break;
	case PROVIDER_INVALID:
		arm_fail(r, 409, "OperationNotAllowed", NULL, "The delete was refused (a terminate_error fault).");
		break;
	default:
		arm_fail(r, 500, "InternalServerError", NULL, "An unexpected error occured while processing the request.");
		break;
	}
	return true;
}

static void delete_instances(struct areq *r, int gi, const char *body)
{
	static const char *const allowed[] = {"forceDeletion", NULL};
	struct azure_face *f = r->f;
	const char *force = query(r, "forceDeletion");
	cJSON *j = cJSON_Parse(body);
	const cJSON *ids;
	const char **v = NULL;
	struct sim_azure_op op;
	struct errbuf err;
	size_t n = 0, k;
	int rc;

	if (!params_ok(r, allowed))
		goto out;
	if (force && strcmp(force, "true") != 0 && strcmp(force, "false") != 0 &&
	    strcmp(force, "True") != 0 && strcmp(force, "False") != 0) {
		arm_fail(r, 400, "InvalidParameter", "forceDeletion",
			 "The value '%.20s' of parameter 'forceDeletion' is not a boolean.", force);
		goto out;
	}
	if (!cJSON_IsObject(j)) {
		arm_fail(r, 400, "InvalidRequestContent", NULL,
			 "The request content was invalid and could not be deserialized: the body must be a JSON object.");
		goto out;
	}
	ids = cJSON_GetObjectItemCaseSensitive(j, "instanceIds");
	if (!ids || cJSON_IsNull(ids)) {
		arm_fail(r, 400, "InvalidParameter", "instanceIds",
			 "Required parameter 'instanceIds' is missing (null).");
		goto out;
	}
	if (!cJSON_IsArray(ids) || cJSON_GetArraySize(ids) == 0 || cJSON_GetArraySize(ids) > 1000) {
		arm_fail(r, 400, "InvalidParameter", "instanceIds",
			 "The value of parameter instanceIds is invalid: 1-1000 instance ids.");
		goto out;
	}
	n = (size_t)cJSON_GetArraySize(ids);
	v = calloc(n, sizeof(*v));
	if (!v) {
		arm_fail(r, 500, "InternalServerError", NULL, "out of memory");
		goto out;
	}
	for (k = 0; k < n; k++) {
		const cJSON *it = cJSON_GetArrayItem(ids, (int)k);
		long long x;

		if (!cJSON_IsString(it) || face_parse_int(it->valuestring, 0, 1000000000, &x) < 0) {
			arm_fail(r, 400, "InvalidParameter", "instanceIds",
				 "The value of parameter instanceIds[%zu] is invalid: an instance id such as \"3\".",
				 k);
			goto out;
		}
		v[k] = it->valuestring;
	}
	if (!admit(r, gi))
		goto out;
	if (delete_refused(r, gi))
		goto out;
	sim_cloud_lock(f->cloud);
	rc = sim_azure_delete(f->az, (size_t)gi, v, n, &op, &err);
	sim_cloud_unlock(f->cloud);
	if (rc < 0) {
		arm_fail(r, 400, "InvalidParameter", "instanceIds", "%s", err.msg);
		goto out;
	}
	async_headers(r, &op, false);
	reply_empty(r, 202);
	r->drop = sim_cloud_lose_answer(f->cloud, sim_cloud_group(f->cloud, (size_t)gi)->name);
out:
	free(v);
	cJSON_Delete(j);
}

static void get_operation(struct areq *r, const char *loc, const char *id)
{
	static const char *const allowed[] = {"p", "monitor", NULL};
	struct azure_face *f = r->f;
	const char *monitor = query(r, "monitor");
	struct sim_azure_op op;
	enum sim_azure_op_status st = SIM_AZURE_IN_PROGRESS;
	char code[48], msg[320], ts[48];
	cJSON *o;
	bool found;

	if (!params_ok(r, allowed))
		return;
	sim_cloud_lock(f->cloud);
	found = strcasecmp(loc, f->conf->location) == 0 && sim_azure_op_get(f->az, id, &op);
	sim_cloud_unlock(f->cloud);
	if (!found) {
		arm_fail(r, 404, "NotFound", NULL, "The entity was not found in this Azure location.");
		return;
	}
	if (!admit(r, (int)op.group))
		return;
	sim_cloud_lock(f->cloud);
	st = sim_azure_op_status(f->az, &op, code, sizeof(code), msg, sizeof(msg));
	sim_cloud_unlock(f->cloud);
	if (monitor && strcmp(monitor, "true") == 0) {
		/* the Location form: 202 until it is over, then the outcome */
		if (st == SIM_AZURE_IN_PROGRESS) {
			async_headers(r, &op, true);
			reply_empty(r, 202);
		} else if (st == SIM_AZURE_OP_FAILED) {
			arm_fail(r, 409, code, NULL, "%s", msg);
		} else {
			reply_empty(r, 200);
		}
		return;
	}
	o = cJSON_CreateObject();
	iso(op.start_wall, ts, sizeof(ts));
	cJSON_AddStringToObject(o, "startTime", ts);
	if (st != SIM_AZURE_IN_PROGRESS) {
		iso(real_wall(), ts, sizeof(ts));
		cJSON_AddStringToObject(o, "endTime", ts);
	} else {
		add_header(r, "Retry-After", "%lld", (long long)f->conf->retry_after_s);
	}
	cJSON_AddStringToObject(o, "status", st == SIM_AZURE_IN_PROGRESS ? "InProgress"
					     : st == SIM_AZURE_OP_FAILED ? "Failed"
									 : "Succeeded");
	if (st == SIM_AZURE_OP_FAILED) {
		cJSON *e = cJSON_AddObjectToObject(o, "error");

		cJSON_AddStringToObject(e, "code", code);
		cJSON_AddStringToObject(e, "message", msg);
		cJSON_AddArrayToObject(e, "details");
	}
	cJSON_AddStringToObject(o, "name", op.id);
	reply_json(r, 200, o);
}

/* ---- the Resource SKUs API ---- */

static void capability(cJSON *caps, const char *name, const char *value)
{
	cJSON *c = cJSON_CreateObject();

	cJSON_AddStringToObject(c, "name", name);
	cJSON_AddStringToObject(c, "value", value);
	cJSON_AddItemToArray(caps, c);
}

static void capability_n(cJSON *caps, const char *name, double v)
{
	char text[32];

	snprintf(text, sizeof(text), "%g", v);
	capability(caps, name, text);
}

/* One SKU of the list in 'loc': a built-in VM size, or (vs NULL) a disk
 * SKU, which a client must leave out. */
static cJSON *sku_item(const struct sim_azure_vmsize *vs, const char *loc)
{
	cJSON *o = cJSON_CreateObject(), *li, *l, *caps, *restr, *z;

	cJSON_AddStringToObject(o, "resourceType", vs ? "virtualMachines" : "disks");
	cJSON_AddStringToObject(o, "name", vs ? vs->name : "Premium_LRS");
	cJSON_AddStringToObject(o, "tier", vs ? "Standard" : "Premium");
	if (vs) {
		cJSON_AddStringToObject(o, "size", vs->name + (strncmp(vs->name, "Standard_", 9) ? 0 : 9));
		cJSON_AddStringToObject(o, "family", vs->family);
	}
	cJSON_AddItemToObject(o, "locations", cJSON_CreateStringArray(&loc, 1));
	li = cJSON_AddArrayToObject(o, "locationInfo");
	l = cJSON_CreateObject();
	cJSON_AddStringToObject(l, "location", loc);
	z = cJSON_AddArrayToObject(l, "zones");
	cJSON_AddItemToArray(z, cJSON_CreateString("1"));
	cJSON_AddItemToArray(z, cJSON_CreateString("2"));
	cJSON_AddItemToArray(z, cJSON_CreateString("3"));
	cJSON_AddItemToObject(l, "zoneDetails", cJSON_CreateArray());
	cJSON_AddItemToArray(li, l);
	caps = cJSON_AddArrayToObject(o, "capabilities");
	restr = cJSON_AddArrayToObject(o, "restrictions");
	if (!vs) {
		capability(caps, "MaxSizeGiB", "4");
		return o;
	}
	if (vs->resource_disk_mb)
		capability_n(caps, "MaxResourceVolumeMB", (double)vs->resource_disk_mb);
	capability(caps, "OSVhdSizeMB", "1047552");
	capability_n(caps, "vCPUs", vs->cpus);
	capability(caps, "MemoryPreservingMaintenanceSupported", "True");
	capability(caps, "HyperVGenerations", "V1,V2");
	capability_n(caps, "MemoryGB", (double)vs->memory_mb / 1024);
	capability_n(caps, "MaxDataDiskCount", vs->cpus * 2);
	if (vs->gpus)
		capability_n(caps, "GPUs", vs->gpus);
	capability_n(caps, "vCPUsAvailable", vs->cpus);
	if (vs->not_available) {
		cJSON *r = cJSON_CreateObject(), *info;

		cJSON_AddStringToObject(r, "type", "Location");
		cJSON_AddItemToObject(r, "values", cJSON_CreateStringArray(&loc, 1));
		info = cJSON_AddObjectToObject(r, "restrictionInfo");
		cJSON_AddItemToObject(info, "locations", cJSON_CreateStringArray(&loc, 1));
		cJSON_AddStringToObject(r, "reasonCode", "NotAvailableForSubscription");
		cJSON_AddItemToArray(restr, r);
	}
	return o;
}

/* GET /subscriptions/S/providers/Microsoft.Compute/skus: the built-in VM
 * sizes and a disk SKU in the scenario's location; $filter "location eq
 * '<l>'" only (another location: an empty list); pages of page_size linked
 * by nextLink ($skiptoken). */
static void list_skus(struct areq *r, const char *av)
{
	static const char *const allowed[] = {"$filter", "$skiptoken", "includeExtendedLocations", NULL};
	struct azure_face *f = r->f;
	const char *flt = query(r, "$filter"), *skip = query(r, "$skiptoken"), *loc = f->conf->location;
	long size = f->conf->page_size > 0 ? f->conf->page_size : 50, from = 0, i, n = 0;
	char want[64] = "";
	cJSON *o, *arr;

	if (!params_ok(r, allowed))
		return;
	if (flt && (sscanf(flt, "location eq '%63[^']'", want) != 1 || strlen(flt) != strlen(want) + 14)) {
		arm_fail(r, 400, "InvalidParameter", "$filter",
			 "The filter '%.100s' is not supported: only location eq '<location>' is.", flt);
		return;
	}
	if (skip) {
		char *end;

		from = strtol(skip, &end, 10);
		if (end == skip || *end || from < 0) {
			arm_fail(r, 400, "InvalidParameter", "$skiptoken", "The skip token '%.40s' is invalid.", skip);
			return;
		}
	}
	if (!admit(r, -1))
		return;
	while (sim_azure_vmsize_at((size_t)n))
		n++;
	n++; /* the disk SKU */
	if (want[0] && strcasecmp(want, loc))
		n = 0;
	o = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(o, "value");
	for (i = from; i < n && i < from + size; i++)
		cJSON_AddItemToArray(arr, sku_item(sim_azure_vmsize_at((size_t)i), loc));
	if (i < n) {
		struct buf link = BUF_INIT;

		buf_printf(&link, "http://127.0.0.1:%d/subscriptions/%s/providers/Microsoft.Compute/skus?api-version=%s",
			   f->port, f->conf->subscription, av);
		if (flt) {
			buf_puts(&link, "&$filter=");
			buf_percent_encode(&link, flt);
		}
		buf_printf(&link, "&$skiptoken=%ld", i);
		cJSON_AddStringToObject(o, "nextLink", link.data ? link.data : "");
		buf_free(&link);
	}
	reply_json(r, 200, o);
}

static bool ieq(const char *a, const char *b)
{
	return strcasecmp(a, b) == 0;
}

/* ---- AKS: the managed cluster and its agent pools ---- */

static const char *const aks_api_versions[] = {
	"2022-11-01", "2023-08-01", "2024-01-01", "2024-05-01", "2024-07-01", "2024-09-01", "2025-01-01",
};
#define N_AKS_API_VERSIONS (sizeof(aks_api_versions) / sizeof(aks_api_versions[0]))
#define AKS_K8S_VERSION "1.29.7"

static bool aks_api_version_ok(const char *v)
{
	size_t i;

	for (i = 0; v && i < N_AKS_API_VERSIONS; i++)
		if (strcmp(v, aks_api_versions[i]) == 0)
			return true;
	return false;
}

static void cluster_id(const struct azure_face *f, char *out, size_t size)
{
	snprintf(out, size, "/subscriptions/%s/resourcegroups/%s/providers/Microsoft.ContainerService/managedClusters/%s",
		 f->conf->subscription, f->conf->aks_resource_group, f->conf->aks_cluster);
}

/* An agent pool (under the cloud's lock): its count is its scale set's capacity. */
static cJSON *pool_json(struct azure_face *f, size_t gi)
{
	const struct sim_azure_group *g = sim_azure_group(f->az, gi);
	const struct node_group *ng = sim_cloud_group(f->cloud, gi);
	cJSON *o = cJSON_CreateObject(), *p, *ps;
	char id[400], etag[32];

	cluster_id(f, id, sizeof(id));
	snprintf(id + strlen(id), sizeof(id) - strlen(id), "/agentPools/%s", g->agent_pool);
	sim_azure_etag(f->az, gi, etag, sizeof(etag));
	cJSON_AddStringToObject(o, "id", id);
	cJSON_AddStringToObject(o, "name", g->agent_pool);
	cJSON_AddStringToObject(o, "type", "Microsoft.ContainerService/managedClusters/agentPools");
	p = cJSON_AddObjectToObject(o, "properties");
	cJSON_AddNumberToObject(p, "count", sim_azure_capacity(f->az, gi));
	cJSON_AddStringToObject(p, "vmSize", g->vm_size);
	cJSON_AddNumberToObject(p, "osDiskSizeGB", 128);
	cJSON_AddStringToObject(p, "osDiskType", "Managed");
	cJSON_AddNumberToObject(p, "maxPods", 110);
	cJSON_AddStringToObject(p, "osType", "Linux");
	cJSON_AddStringToObject(p, "osSKU", "Ubuntu");
	cJSON_AddStringToObject(p, "type", "VirtualMachineScaleSets");
	cJSON_AddStringToObject(p, "mode", g->system_mode ? "System" : "User");
	cJSON_AddBoolToObject(p, "enableAutoScaling", g->enable_auto_scaling);
	if (g->enable_auto_scaling) {
		cJSON_AddNumberToObject(p, "minCount", ng->min);
		cJSON_AddNumberToObject(p, "maxCount", ng->max);
	}
	if (g->priority && strcmp(g->priority, "Regular")) {
		cJSON_AddStringToObject(p, "scaleSetPriority", g->priority);
		cJSON_AddStringToObject(p, "scaleSetEvictionPolicy", "Delete");
	}
	if (g->n_zones)
		cJSON_AddItemToObject(p, "availabilityZones", zones_json(g));
	cJSON_AddStringToObject(p, "orchestratorVersion", AKS_K8S_VERSION);
	cJSON_AddStringToObject(p, "currentOrchestratorVersion", AKS_K8S_VERSION);
	cJSON_AddStringToObject(p, "nodeImageVersion", "AKSUbuntu-2204gen2containerd-202410.15.0");
	cJSON_AddStringToObject(p, "provisioningState", sim_azure_updating(f->az, gi) ? "Scaling" : "Succeeded");
	ps = cJSON_AddObjectToObject(p, "powerState");
	cJSON_AddStringToObject(ps, "code", "Running");
	/* the scale set's etag, without its quotes */
	etag[strlen(etag) - 1] = '\0';
	cJSON_AddStringToObject(p, "eTag", etag + 1);
	return o;
}

static cJSON *cluster_json(struct azure_face *f)
{
	cJSON *o = cJSON_CreateObject(), *p, *profiles, *ps;
	char id[400], fqdn[200];
	size_t i;

	cluster_id(f, id, sizeof(id));
	cJSON_AddStringToObject(o, "id", id);
	cJSON_AddStringToObject(o, "name", f->conf->aks_cluster);
	cJSON_AddStringToObject(o, "type", "Microsoft.ContainerService/ManagedClusters");
	cJSON_AddStringToObject(o, "location", f->conf->location);
	p = cJSON_AddObjectToObject(o, "properties");
	cJSON_AddStringToObject(p, "provisioningState", "Succeeded");
	ps = cJSON_AddObjectToObject(p, "powerState");
	cJSON_AddStringToObject(ps, "code", "Running");
	cJSON_AddStringToObject(p, "kubernetesVersion", AKS_K8S_VERSION);
	cJSON_AddStringToObject(p, "currentKubernetesVersion", AKS_K8S_VERSION);
	cJSON_AddStringToObject(p, "dnsPrefix", f->conf->aks_cluster);
	snprintf(fqdn, sizeof(fqdn), "%.60s-00000000.hcp.%s.azmk8s.io", f->conf->aks_cluster, f->conf->location);
	cJSON_AddStringToObject(p, "fqdn", fqdn);
	cJSON_AddStringToObject(p, "nodeResourceGroup", f->conf->resource_group);
	cJSON_AddBoolToObject(p, "enableRBAC", true);
	cJSON_AddNumberToObject(p, "maxAgentPools", 100);
	profiles = cJSON_AddArrayToObject(p, "agentPoolProfiles");
	sim_cloud_lock(f->cloud);
	for (i = 0; i < f->conf->n_groups; i++) {
		cJSON *pool, *props, *prof;

		if (!sim_azure_group(f->az, i)->agent_pool)
			continue;
		/* a profile is the pool's properties with its name */
		pool = pool_json(f, i);
		props = cJSON_DetachItemFromObjectCaseSensitive(pool, "properties");
		prof = cJSON_CreateObject();
		cJSON_AddStringToObject(prof, "name", sim_azure_group(f->az, i)->agent_pool);
		while (props && props->child) {
			cJSON *it = props->child;

			cJSON_DetachItemViaPointer(props, it);
			cJSON_AddItemToObject(prof, it->string, it);
		}
		cJSON_Delete(props);
		cJSON_Delete(pool);
		cJSON_AddItemToArray(profiles, prof);
	}
	sim_cloud_unlock(f->cloud);
	return o;
}

static void aks_not_found(struct areq *r, const char *type, const char *name)
{
	arm_fail(r, 404, "NotFound", NULL,
		 "The Resource 'Microsoft.ContainerService/%s/%.64s' under resource group '%.90s' was not found.", type,
		 name, r->f->conf->aks_resource_group);
}

/* PUT of an agent pool: only properties.count changes (the rest must be
 * what the pool has, or absent). */
static void put_pool(struct areq *r, int gi, const char *body)
{
	struct azure_face *f = r->f;
	const struct sim_azure_group *g = sim_azure_group(f->az, (size_t)gi);
	cJSON *j = cJSON_Parse(body), *o = NULL;
	const cJSON *props, *count, *vm, *as;
	const char *im = header(r, "If-Match");
	struct sim_azure_op op;
	struct errbuf err;
	char code[48], etag[32];
	int rc;

	if (!params_ok(r, NULL))
		goto out;
	props = cJSON_GetObjectItemCaseSensitive(j, "properties");
	if (!cJSON_IsObject(j) || !cJSON_IsObject(props)) {
		arm_fail(r, 400, "InvalidRequestContent", NULL,
			 "The request content was invalid and could not be deserialized: an agent pool needs properties.");
		goto out;
	}
	count = cJSON_GetObjectItemCaseSensitive(props, "count");
	vm = cJSON_GetObjectItemCaseSensitive(props, "vmSize");
	as = cJSON_GetObjectItemCaseSensitive(props, "enableAutoScaling");
	if (!cJSON_IsNumber(count) || count->valuedouble != (double)(int)count->valuedouble || count->valuedouble < 0 ||
	    count->valuedouble > 1000 || (g->system_mode && count->valuedouble < 1)) {
		arm_fail(r, 400, "InvalidParameter", "properties.count",
			 "The value of parameter agentPoolProfile.count is invalid. Please see https://aka.ms/aks-naming-rules "
			 "for more details: %s pools take 0 to 1000 nodes (a System pool at least 1).",
			 g->system_mode ? "System" : "User");
		goto out;
	}
	if (vm && (!cJSON_IsString(vm) || strcasecmp(vm->valuestring, g->vm_size) != 0)) {
		arm_fail(r, 400, "InvalidParameter", "properties.vmSize",
			 "Changing property 'vmSize' is not allowed: luascale sim keeps pool %s at %s.", g->agent_pool,
			 g->vm_size);
		goto out;
	}
	if (as && cJSON_IsTrue(as) != g->enable_auto_scaling) {
		arm_fail(r, 400, "InvalidParameter", "properties.enableAutoScaling",
			 "luascale sim: the enableAutoScaling of pool %s comes from the scenario and cannot be changed.",
			 g->agent_pool);
		goto out;
	}
	if (!admit(r, gi))
		goto out;
	sim_cloud_lock(f->cloud);
	sim_azure_etag(f->az, (size_t)gi, etag, sizeof(etag));
	if (!azure_if_match_ok(im, etag)) {
		rc = -2;
		arm_fail(r, 412, "PreconditionFailed", NULL,
			 "Operation is not allowed because the resource's etag does not match If-Match '%.40s'.", im);
	} else if (g->enable_auto_scaling && (int)count->valuedouble != sim_azure_capacity(f->az, (size_t)gi)) {
		rc = -2;
		arm_fail(r, 400, "InvalidParameter", "properties.count",
			 "Cannot change the node count of agent pool %s while its cluster autoscaler is enabled.",
			 g->agent_pool);
	} else if (sim_azure_updating(f->az, (size_t)gi)) {
		rc = -2;
		arm_fail(r, 409, "OperationNotAllowed", NULL,
			 "Operation is not allowed because there's an in progress scale operation on agent pool %s of managed "
			 "cluster %s. Please wait for it to finish before starting a new operation.", g->agent_pool,
			 f->conf->aks_cluster);
	} else {
		rc = sim_azure_set_capacity(f->az, (size_t)gi, (int)count->valuedouble, &op, code, sizeof(code), &err);
		if (rc == 0)
			o = pool_json(f, (size_t)gi);
	}
	sim_cloud_unlock(f->cloud);
	if (rc == -2)
		goto out;
	if (rc < 0) {
		arm_fail(r, strcmp(code, "InvalidParameter") == 0 ? 400 : 409, code,
			 strcmp(code, "InvalidParameter") == 0 ? "properties.count" : NULL, "%s", err.msg);
		goto out;
	}
	r->ns = "Microsoft.ContainerService";
	async_headers(r, &op, false);
	log_at(f->o.log, LOG_DEBUG, real_wall(), "sim azure: agent pool %s count -> %d (operation %s)", g->agent_pool,
	       (int)count->valuedouble, op.id);
	reply_json(r, 200, o);
	o = NULL;
out:
	cJSON_Delete(o);
	cJSON_Delete(j);
}

/* POST .../deleteMachines {"machineNames":[...]}: the machine names are the
 * VMs' computer names; all or nothing. */
static void delete_machines(struct areq *r, int gi, const char *body)
{
	struct azure_face *f = r->f;
	const struct sim_azure_group *g = sim_azure_group(f->az, (size_t)gi);
	cJSON *j = cJSON_Parse(body);
	const cJSON *names, *it;
	char (*ids)[16] = NULL;
	const char **v = NULL;
	struct sim_azure_op op;
	struct errbuf err;
	size_t n = 0, k;
	int rc = 0;

	if (!params_ok(r, NULL))
		goto out;
	if (strcmp(r->api_version, "2022-11-01") == 0) {
		arm_fail(r, 404, "NotFound", NULL, "The API version '2022-11-01' has no deleteMachines operation.");
		goto out;
	}
	names = cJSON_GetObjectItemCaseSensitive(j, "machineNames");
	if (!cJSON_IsArray(names) || cJSON_GetArraySize(names) < 1 || cJSON_GetArraySize(names) > 1000) {
		arm_fail(r, 400, "InvalidParameter", "machineNames",
			 "Required parameter 'machineNames' is missing or empty: 1-1000 machine names.");
		goto out;
	}
	n = (size_t)cJSON_GetArraySize(names);
	ids = calloc(n, sizeof(*ids));
	v = calloc(n, sizeof(*v));
	if (!ids || !v) {
		arm_fail(r, 500, "InternalServerError", NULL, "out of memory");
		goto out;
	}
	if (!admit(r, gi))
		goto out;
	sim_cloud_lock(f->cloud);
	if (sim_azure_updating(f->az, (size_t)gi)) {
		rc = -2;
		arm_fail(r, 409, "OperationNotAllowed", NULL,
			 "Operation is not allowed because there's an in progress scale operation on agent pool %s of managed "
			 "cluster %s. Please wait for it to finish before starting a new operation.", g->agent_pool,
			 f->conf->aks_cluster);
	}
	k = 0;
	cJSON_ArrayForEach(it, names) {
		int id = cJSON_IsString(it) ? sim_azure_find_computer(f->az, (size_t)gi, it->valuestring) : -1;

		if (rc)
			break;
		if (id < 0) {
			rc = -2;
			arm_fail(r, 400, "InvalidParameter", "machineNames",
				 "Machine '%.80s' is not a machine of agent pool %s.", cJSON_IsString(it) ? it->valuestring : "",
				 g->agent_pool);
			break;
		}
		snprintf(ids[k], sizeof(ids[k]), "%d", id);
		v[k] = ids[k];
		k++;
	}
	if (!rc)
		rc = sim_azure_delete(f->az, (size_t)gi, v, n, &op, &err);
	sim_cloud_unlock(f->cloud);
	if (rc == -2)
		goto out;
	if (rc < 0) {
		arm_fail(r, 400, "InvalidParameter", "machineNames", "%s", err.msg);
		goto out;
	}
	r->ns = "Microsoft.ContainerService";
	async_headers(r, &op, false);
	reply_empty(r, 202);
	r->drop = sim_cloud_lose_answer(f->cloud, sim_cloud_group(f->cloud, (size_t)gi)->name);
out:
	free(ids);
	free(v);
	cJSON_Delete(j);
}

/* /subscriptions/S/resourceGroups/<the cluster's>/providers/Microsoft.ContainerService/
 * managedClusters/C[/agentPools[/P[/deleteMachines]]]; seg[5] is the namespace. */
static void route_aks(struct areq *r, const char *method, char **seg, size_t n, const char *url, const char *body)
{
	struct azure_face *f = r->f;
	bool get = strcmp(method, "GET") == 0;
	int gi;

	if (n < 8 || !ieq(seg[6], "managedClusters")) {
		arm_fail(r, 404, "NotFound", NULL, "The requested resource %.200s was not found.", url);
		return;
	}
	if (!ieq(seg[7], f->conf->aks_cluster)) {
		aks_not_found(r, "managedClusters", seg[7]);
		return;
	}
	if (n == 8) {
		if (!get)
			arm_fail(r, 405, "MethodNotAllowed", NULL, "luascale sim serves GET only on a managed cluster.");
		else if (params_ok(r, NULL) && admit(r, -1))
			reply_json(r, 200, cluster_json(f));
		return;
	}
	if (!ieq(seg[8], "agentPools")) {
		arm_fail(r, 404, "NotFound", NULL, "The requested resource %.200s was not found.", url);
		return;
	}
	if (n == 9) {
		cJSON *o, *arr;
		size_t i;

		if (!get) {
			arm_fail(r, 405, "MethodNotAllowed", NULL, "The requested resource does not support http method '%s'.",
				 method);
			return;
		}
		if (!params_ok(r, NULL) || !admit(r, -1))
			return;
		o = cJSON_CreateObject();
		arr = cJSON_AddArrayToObject(o, "value");
		sim_cloud_lock(f->cloud);
		for (i = 0; i < f->conf->n_groups; i++)
			if (sim_azure_group(f->az, i)->agent_pool)
				cJSON_AddItemToArray(arr, pool_json(f, i));
		sim_cloud_unlock(f->cloud);
		reply_json(r, 200, o);
		return;
	}
	sim_cloud_lock(f->cloud);
	gi = sim_azure_find_pool(f->az, seg[9]);
	sim_cloud_unlock(f->cloud);
	if (gi < 0) {
		if (n == 10 && strcmp(method, "PUT") == 0)
			arm_fail(r, 400, "InvalidParameter", "name",
				 "luascale sim: agent pools come from the scenario; '%.12s' cannot be created.", seg[9]);
		else
			aks_not_found(r, "managedClusters/agentPools", seg[9]);
		return;
	}
	if (!get && body[0]) {
		const char *ct = header(r, "Content-Type");

		if (!ct || strncasecmp(ct, "application/json", 16) != 0) {
			arm_fail(r, 415, "UnsupportedMediaType", NULL,
				 "The content media type '%.60s' is not supported. Only 'application/json' is supported.",
				 ct ? ct : "");
			return;
		}
	}
	if (n == 10) {
		if (get) {
			cJSON *o;

			if (!params_ok(r, NULL) || !admit(r, gi))
				return;
			sim_cloud_lock(f->cloud);
			o = pool_json(f, (size_t)gi);
			sim_cloud_unlock(f->cloud);
			reply_json(r, 200, o);
		} else if (strcmp(method, "PUT") == 0) {
			put_pool(r, gi, body);
		} else {
			arm_fail(r, 405, "MethodNotAllowed", NULL, "luascale sim does not serve %s on an agent pool.", method);
		}
		return;
	}
	if (n == 11 && ieq(seg[10], "deleteMachines")) {
		if (strcmp(method, "POST") == 0)
			delete_machines(r, gi, body);
		else
			arm_fail(r, 405, "MethodNotAllowed", NULL, "The requested resource does not support http method '%s'.",
				 method);
		return;
	}
	arm_fail(r, 404, "NotFound", NULL, "The requested resource %.200s was not found.", url);
}

/* Routes /subscriptions/S/...; seg[0] is "subscriptions". */
static void route_arm(struct areq *r, const char *method, char **seg, size_t n, const char *url,
		      const char *body)
{
	struct azure_face *f = r->f;
	const char *auth = header(r, "Authorization"), *av = query(r, "api-version");
	bool get = strcmp(method, "GET") == 0;
	int gi, tk;

	if (!auth || strncmp(auth, "Bearer ", 7) != 0) {
		add_header(r, "WWW-Authenticate",
			   "Bearer authorization_uri=\"http://127.0.0.1:%d/%s\", error=\"invalid_token\", error_description=\"The authentication failed because of missing 'Authorization' header.\"",
			   f->port, f->conf->tenant);
		arm_fail(r, 401, "AuthenticationFailed", NULL,
			 "Authentication failed. The 'Authorization' header is missing.");
		return;
	}
	tk = face_tokens_check(&f->tokens, auth + 7);
	if (tk != 0) {
		add_header(r, "WWW-Authenticate",
			   "Bearer authorization_uri=\"http://127.0.0.1:%d/%s\", error=\"invalid_token\", error_description=\"The access token is %s.\"",
			   f->port, f->conf->tenant, tk > 0 ? "expired" : "invalid");
		if (tk > 0)
			arm_fail(r, 401, "ExpiredAuthenticationToken", NULL,
				 "The access token expiry UTC time is earlier than current UTC time.");
		else
			arm_fail(r, 401, "InvalidAuthenticationToken", NULL,
				 "The access token is invalid.");
		return;
	}
	if (!av || !*av) {
		arm_fail(r, 400, "MissingApiVersionParameter", NULL,
			 "The api-version query parameter (?api-version=) is required for all requests.");
		return;
	}
	if (n == 5 && ieq(seg[2], "providers") && ieq(seg[3], "Microsoft.Compute") && ieq(seg[4], "skus") &&
	    ieq(seg[1], f->conf->subscription)) {
		/* the Resource SKUs API has versions of its own */
		if (!get)
			arm_fail(r, 405, "MethodNotAllowed", NULL, "The requested resource does not support http method '%s'.",
				 method);
		else if (strcmp(av, "2021-07-01") && strcmp(av, "2019-04-01"))
			arm_fail(r, 400, "NoRegisteredProviderFound", NULL,
				 "No registered resource provider found for API version '%.20s' and type 'skus'. The supported api-versions are '2019-04-01, 2021-07-01'.",
				 av);
		else
			list_skus(r, av);
		return;
	}
	if (f->conf->aks_cluster && n >= 2 && ieq(seg[1], f->conf->subscription) &&
	    ((n >= 6 && ieq(seg[2], "resourceGroups") && ieq(seg[4], "providers") &&
	      ieq(seg[5], "Microsoft.ContainerService")) ||
	     (n == 8 && ieq(seg[2], "providers") && ieq(seg[3], "Microsoft.ContainerService") &&
	      ieq(seg[4], "locations") && ieq(seg[6], "operations")))) {
		/* AKS: api-versions of its own */
		if (!aks_api_version_ok(av)) {
			arm_fail(r, 400, "NoRegisteredProviderFound", NULL,
				 "No registered resource provider found for location '%s' and API version '%.20s' for type 'managedClusters'. The supported api-versions are '2022-11-01, 2023-08-01, 2024-01-01, 2024-05-01, 2024-07-01, 2024-09-01, 2025-01-01'.",
				 f->conf->location, av);
			return;
		}
		r->api_version = av;
		r->ns = "Microsoft.ContainerService";
		if (ieq(seg[2], "providers")) {
			if (get)
				get_operation(r, seg[5], seg[7]);
			else
				arm_fail(r, 405, "MethodNotAllowed", NULL, "An operation answers GET only.");
		} else if (!ieq(seg[3], f->conf->aks_resource_group)) {
			arm_fail(r, 404, "ResourceGroupNotFound", NULL, "Resource group '%.90s' could not be found.", seg[3]);
		} else {
			route_aks(r, method, seg, n, url, body);
		}
		return;
	}
	/* a scale set VM's network interfaces are Microsoft.Network's view,
	 * at its own versions */
	if (n == 11 && ieq(seg[8], "virtualMachines") && ieq(seg[10], "networkInterfaces")) {
		if (!av || (strcmp(av, "2018-10-01") && strcmp(av, "2017-03-30"))) {
			arm_fail(r, 400, "NoRegisteredProviderFound", NULL,
				 "No registered resource provider found for location '%s' and API version '%.20s' for type 'virtualMachineScaleSets/virtualMachines/networkInterfaces'. The supported api-versions are '2017-03-30, 2018-10-01'.",
				 f->conf->location, av ? av : "");
			return;
		}
	} else if (!azure_api_version_ok(av)) {
		arm_fail(r, 400, "NoRegisteredProviderFound", NULL,
			 "No registered resource provider found for location '%s' and API version '%.20s' for type 'virtualMachineScaleSets'. The supported api-versions are '2022-08-01, 2022-11-01, 2023-03-01, 2023-07-01, 2023-09-01, 2024-03-01, 2024-07-01, 2024-11-01, 2025-04-01'.",
			 f->conf->location, av);
		return;
	}
	r->api_version = av;
	if (n < 2 || !ieq(seg[1], f->conf->subscription)) {
		arm_fail(r, 404, "SubscriptionNotFound", NULL, "The subscription '%.60s' could not be found.",
			 n >= 2 ? seg[1] : "");
		return;
	}
	/* /subscriptions/S/providers/Microsoft.Compute/... */
	if (n >= 4 && ieq(seg[2], "providers") && ieq(seg[3], "Microsoft.Compute")) {
		if (n == 5 && ieq(seg[4], "virtualMachineScaleSets") && get) {
			list_vmss(r);
			return;
		}
		if (n == 8 && ieq(seg[4], "locations") && ieq(seg[6], "operations") && get) {
			get_operation(r, seg[5], seg[7]);
			return;
		}
		arm_fail(r, 404, "NotFound", NULL, "The requested resource %.200s was not found.", url);
		return;
	}
	if (n < 4 || !ieq(seg[2], "resourceGroups")) {
		arm_fail(r, 404, "NotFound", NULL, "The requested resource %.200s was not found.", url);
		return;
	}
	if (!ieq(seg[3], f->conf->resource_group)) {
		arm_fail(r, 404, "ResourceGroupNotFound", NULL, "Resource group '%.90s' could not be found.",
			 seg[3]);
		return;
	}
	if (n < 7 || !ieq(seg[4], "providers") || !ieq(seg[5], "Microsoft.Compute")) {
		arm_fail(r, 404, "NotFound", NULL, "The requested resource %.200s was not found.", url);
		return;
	}
	if (!ieq(seg[6], "virtualMachineScaleSets")) {
		arm_fail(r, 400, "InvalidResourceType", NULL,
			 "The resource type '%.60s' could not be found in the namespace 'Microsoft.Compute' for api version '%s'.",
			 seg[6], av);
		return;
	}
	if (n == 7) {
		if (get)
			list_vmss(r);
		else
			arm_fail(r, 405, "MethodNotAllowed", NULL,
				 "The requested resource does not support http method '%s'.", method);
		return;
	}
	sim_cloud_lock(f->cloud);
	gi = sim_azure_find_vmss(f->az, seg[7]);
	sim_cloud_unlock(f->cloud);
	if (gi < 0) {
		if (n == 8 && strcmp(method, "PUT") == 0)
			arm_fail(r, 400, "InvalidParameter", "name",
				 "luascale sim: scale sets come from the scenario; '%.64s' cannot be created.",
				 seg[7]);
		else
			arm_fail(r, 404, "ResourceNotFound", NULL,
				 "The Resource 'Microsoft.Compute/virtualMachineScaleSets/%.64s' under resource group '%s' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix",
				 seg[7], f->conf->resource_group);
		return;
	}
	if (!get && body[0]) {
		const char *ct = header(r, "Content-Type");

		if (!ct || strncasecmp(ct, "application/json", 16) != 0) {
			arm_fail(r, 415, "UnsupportedMediaType", NULL,
				 "The content media type '%.60s' is not supported. Only 'application/json' is supported.",
				 ct ? ct : "");
			return;
		}
	}
	if (n == 8) {
		if (get)
			get_vmss(r, gi);
		else if (strcmp(method, "PUT") == 0 || strcmp(method, "PATCH") == 0)
			write_vmss(r, gi, strcmp(method, "PUT") == 0, body);
		else
			arm_fail(r, 405, "MethodNotAllowed", NULL,
				 "luascale sim does not serve %s on a scale set.", method);
		return;
	}
	if (n == 9 && ieq(seg[8], "delete")) {
		if (strcmp(method, "POST") == 0)
			delete_instances(r, gi, body);
		else
			arm_fail(r, 405, "MethodNotAllowed", NULL,
				 "The requested resource does not support http method '%s'.", method);
		return;
	}
	if (n == 11 && ieq(seg[8], "virtualMachines") && ieq(seg[10], "networkInterfaces")) {
		if (!get)
			arm_fail(r, 405, "MethodNotAllowed", NULL,
				 "The requested resource does not support http method '%s'.", method);
		else
			list_vm_nics(r, gi, seg[9]);
		return;
	}
	if ((n == 9 || n == 10) && ieq(seg[8], "virtualMachines")) {
		if (!get)
			arm_fail(r, 405, "MethodNotAllowed", NULL,
				 "luascale sim serves GET only on a scale set's VMs.");
		else if (n == 9)
			list_vms(r, gi, url);
		else
			get_vm(r, gi, seg[9]);
		return;
	}
	arm_fail(r, 404, "NotFound", NULL, "The requested resource %.200s was not found.", url);
}

/* ---- the Retail Prices API ---- */

/* GET /api/retail/prices: no token (the API is public), charged to the
 * cloud's API limit as every call is. */
static void handle_prices(struct areq *r, const char *method)
{
	char self[64];

	if (strcmp(method, "GET") != 0) {
		arm_fail(r, 405, "MethodNotAllowed", NULL, "The Retail Prices API answers GET only.");
		return;
	}
	if (!admit(r, -1))
		return;
	snprintf(self, sizeof(self), "http://127.0.0.1:%d", r->f->port);
	r->code = sim_azure_prices_answer(r->f->az, query(r, "$filter"), query(r, "$skip"),
					  query(r, "api-version"), self, &r->body);
	r->content_type = "application/json; charset=utf-8";
}

/* ---- the HTTP side ---- */

static enum MHD_Result on_request(void *ud, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *body, size_t body_len,
				  bool bad_body)
{
	struct listener *l = ud;
	struct azure_face *f = l->f;
	struct MHD_Response *resp;
	struct areq r;
	enum MHD_Result rc;
	char copy[1024], *seg[MAX_SEGS], *s;
	size_t n = 0, k;
	bool bad_path = false;

	(void)body_len;
	face_http_sleep_ns(f->o.latency_ns);
	memset(&r, 0, sizeof(r));
	r.f = f;
	r.conn = conn;
	r.tls = l->tls;
	r.api_version = "2024-11-01";
	r.ns = "Microsoft.Compute";
	if (strlen(url) >= sizeof(copy)) {
		bad_path = true;
	} else {
		snprintf(copy, sizeof(copy), "%s", url);
		for (s = copy + (copy[0] == '/'); s && *s && n < MAX_SEGS;) {
			char *slash = strchr(s, '/');

			if (slash)
				*slash = '\0';
			if (!*s)
				bad_path = true;
			seg[n++] = s;
			s = slash ? slash + 1 : NULL;
		}
		if (s && *s)
			bad_path = true;
	}
	if (bad_body) {
		arm_fail(&r, 413, "RequestEntityTooLarge", NULL,
			 "The request body is larger than %d bytes or not text.", FACE_HTTP_MAX_BODY);
	} else if (bad_path) {
		arm_fail(&r, 404, "NotFound", NULL, "The requested URL was not found.");
	} else if (!l->tls && n >= 2 && strcmp(seg[0], "metadata") == 0) {
		if (strcmp(method, "GET") != 0)
			arm_fail(&r, 405, "MethodNotAllowed", NULL, "IMDS answers GET only.");
		else
			handle_imds(&r, url);
	} else if (n == 4 && strcmp(seg[1], "oauth2") == 0 && strcmp(seg[2], "v2.0") == 0 &&
		   strcmp(seg[3], "token") == 0) {
		if (strcmp(method, "POST") != 0)
			aad_fail(&r, 405, "invalid_request", 900561,
				 "The endpoint only accepts POST requests. Received a %.10s request.",
				 method);
		else
			handle_aad_token(&r, seg[0], body);
	} else if (n == 4 && strcmp(seg[1], "v2.0") == 0 && strcmp(seg[2], ".well-known") == 0 &&
		   strcmp(seg[3], "openid-configuration") == 0 && strcmp(method, "GET") == 0) {
		openid_config(&r, seg[0]);
	} else if (!l->tls && n == 3 && strcmp(seg[0], "api") == 0 && strcmp(seg[1], "retail") == 0 &&
		   strcmp(seg[2], "prices") == 0) {
		handle_prices(&r, method);
	} else if (!l->tls && n >= 1 && ieq(seg[0], "subscriptions")) {
		route_arm(&r, method, seg, n, url, body);
	} else {
		arm_fail(&r, 404, "NotFound", NULL, "The requested URL was not found.");
	}
	if (!r.code)
		arm_fail(&r, 500, "InternalServerError", NULL, "no answer");
	if (r.drop) {
		/* a lost_answer fault: the call took effect, its answer never comes */
		log_at(f->o.log, LOG_INFO, real_wall(), "sim azure: %s %s -> %d, answer lost (fault)", method, url, r.code);
		buf_free(&r.body);
		return MHD_NO;
	}
	/* the path and the status only: queries and bodies may carry secrets */
	log_at(f->o.log, LOG_DEBUG, real_wall(), "sim azure: %s %s -> %d", method, url, r.code);
	resp = face_http_response(&r.body);
	if (!resp)
		return MHD_NO;
	if (r.content_type)
		MHD_add_response_header(resp, "Content-Type", r.content_type);
	{
		char id[37];

		guid(f, id);
		MHD_add_response_header(resp, "x-ms-request-id", id);
		MHD_add_response_header(resp, "x-ms-correlation-request-id", id);
	}
	for (k = 0; k < r.n_headers; k++)
		MHD_add_response_header(resp, r.hname[k], r.hvalue[k]);
	rc = face_http_queue(conn, r.code, resp);
	return rc;
}

/* A self-signed certificate for 127.0.0.1 and localhost; key and cert PEM. */
static int make_cert(char **key_pem, char **cert_pem, struct errbuf *err)
{
	EVP_PKEY *key = EVP_EC_gen("P-256");
	X509 *x = X509_new();
	X509_NAME *name;
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	BIO *kb = BIO_new(BIO_s_mem()), *cb = BIO_new(BIO_s_mem());
	static const char *const exts[][2] = {
		{"subjectAltName", "IP:127.0.0.1,DNS:localhost"},
		{"basicConstraints", "critical,CA:TRUE"},
		{"keyUsage", "critical,digitalSignature,keyCertSign"},
		{"extendedKeyUsage", "serverAuth"},
	};
	char *p;
	long len;
	size_t i;
	int rc = -1;

	*key_pem = *cert_pem = NULL;
	if (!key || !x || !kb || !cb) {
		errbuf_set(err, "sim azure: cannot make a TLS key");
		goto out;
	}
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), (long)(time(NULL) & 0x7fffffff));
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), 30L * 86400);
	X509_set_pubkey(x, key);
	name = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"luascale sim azure",
				   -1, -1, 0);
	X509_set_issuer_name(x, name);
	X509V3_set_ctx(&ctx, x, x, NULL, NULL, 0);
	for (i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		ext = X509V3_EXT_conf(NULL, &ctx, exts[i][0], exts[i][1]);
		if (!ext || !X509_add_ext(x, ext, -1)) {
			X509_EXTENSION_free(ext);
			errbuf_set(err, "sim azure: cannot make the TLS certificate (%s)", exts[i][0]);
			goto out;
		}
		X509_EXTENSION_free(ext);
	}
	if (!X509_sign(x, key, EVP_sha256()) || !PEM_write_bio_PrivateKey(kb, key, NULL, NULL, 0, NULL, NULL) ||
	    !PEM_write_bio_X509(cb, x)) {
		errbuf_set(err, "sim azure: cannot sign the TLS certificate");
		goto out;
	}
	len = BIO_get_mem_data(kb, &p);
	*key_pem = strndup(p, (size_t)len);
	len = BIO_get_mem_data(cb, &p);
	*cert_pem = strndup(p, (size_t)len);
	if (!*key_pem || !*cert_pem) {
		errbuf_set(err, "out of memory");
		goto out;
	}
	rc = 0;
out:
	if (rc < 0) {
		free(*key_pem);
		free(*cert_pem);
		*key_pem = *cert_pem = NULL;
	}
	BIO_free(kb);
	BIO_free(cb);
	X509_free(x);
	EVP_PKEY_free(key);
	return rc;
}

/* The federated token: a JWT as a projected service-account token looks,
 * with a random signature (only its exact text is accepted). */
static void make_federated(struct azure_face *f)
{
	struct buf b = BUF_INIT, claims = BUF_INIT;
	unsigned char sig[64];
	const char *hdr = "{\"alg\":\"RS256\",\"kid\":\"luascale-sim\",\"typ\":\"JWT\"}";
	size_t i;

	f->federated_exp = real_wall() + 86400;
	buf_printf(&claims,
		   "{\"aud\":[\"api://AzureADTokenExchange\"],\"exp\":%lld,\"iat\":%lld,\"iss\":\"https://oidc.sim.luascale.invalid/%s/\",\"nbf\":%lld,\"sub\":\"system:serviceaccount:kube-system:luascale\"}",
		   (long long)f->federated_exp, (long long)real_wall(), f->conf->tenant,
		   (long long)real_wall());
	for (i = 0; i < sizeof(sig); i += 8) {
		uint64_t v = face_tokens_rand(&f->tokens);

		memcpy(sig + i, &v, 8);
	}
	b64url(&b, (const unsigned char *)hdr, strlen(hdr));
	buf_puts(&b, ".");
	b64url(&b, (const unsigned char *)claims.data, claims.len);
	buf_puts(&b, ".");
	b64url(&b, sig, sizeof(sig));
	snprintf(f->federated, sizeof(f->federated), "%s", b.data ? b.data : "");
	buf_free(&b);
	buf_free(&claims);
}

struct azure_face *azure_face_new(struct sim_azure *az, const struct azure_face_opts *o,
				  struct errbuf *err)
{
	struct azure_face *f = calloc(1, sizeof(*f));
	struct face_http_opts ho;

	if (!f) {
		errbuf_set(err, "out of memory");
		return NULL;
	}
	if (o)
		f->o = *o;
	else
		f->o.tls_port = -1;
	f->az = az;
	f->cloud = sim_azure_cloud(az);
	f->conf = sim_azure_conf(az);
	f->plain.f = f->secure.f = f;
	f->secure.tls = true;
	f->tls_port = -1;
	face_tokens_init(&f->tokens, 0xa2e1);
	make_federated(f);
	memset(&ho, 0, sizeof(ho));
	ho.port = f->o.port;
	ho.name = "sim azure";
	ho.log = f->o.log;
	f->http = face_http_start(&ho, on_request, &f->plain, err);
	if (!f->http)
		goto fail;
	f->port = face_http_port(f->http);
	if (f->o.tls_port >= 0) {
		if (make_cert(&f->key_pem, &f->cert_pem, err) < 0)
			goto fail;
		ho.port = f->o.tls_port;
		ho.name = "sim azure tls";
		ho.tls_key_pem = f->key_pem;
		ho.tls_cert_pem = f->cert_pem;
		f->https = face_http_start(&ho, on_request, &f->secure, err);
		if (!f->https)
			goto fail;
		f->tls_port = face_http_port(f->https);
	}
	log_at(f->o.log, LOG_INFO, real_wall(),
	       "sim azure: serving on http://127.0.0.1:%d (subscription %s, resource group %s)",
	       f->port, f->conf->subscription, f->conf->resource_group);
	return f;
fail:
	azure_face_free(f);
	return NULL;
}

int azure_face_port(const struct azure_face *f)
{
	return f->port;
}

int azure_face_tls_port(const struct azure_face *f)
{
	return f->tls_port;
}

int azure_face_write_token(const struct azure_face *f, const char *path, struct errbuf *err)
{
	FILE *out = face_open_private(path, err);

	if (!out)
		return -1;
	fputs(f->federated, out);
	return face_close_file(out, path, err);
}

int azure_face_write_ca(const struct azure_face *f, const char *path, struct errbuf *err)
{
	FILE *out;

	if (!f->cert_pem)
		return errbuf_set(err, "sim azure: no TLS side, so no certificate");
	out = face_open_private(path, err);
	if (!out)
		return -1;
	fputs(f->cert_pem, out);
	return face_close_file(out, path, err);
}

int azure_face_write_env(const struct azure_face *f, const char *path, const char *token_path,
			 struct errbuf *err)
{
	FILE *out = face_open_private(path, err);
	char v[128];

	if (!out)
		return -1;
	fprintf(out, "# Written by luascale sim: its Azure face on 127.0.0.1:%d.\n"
		     "# Use: set -a; . THIS_FILE; set +a\n", f->port);
	snprintf(v, sizeof(v), "http://127.0.0.1:%d/", f->port);
	face_env_line(out, "LUASCALE_SIM_AZURE_ARM_ENDPOINT", v);
	face_env_line(out, "AZURE_AUTHORITY_HOST", v);
	snprintf(v, sizeof(v), "http://127.0.0.1:%d", f->port);
	face_env_line(out, "AZURE_POD_IDENTITY_AUTHORITY_HOST", v);
	face_env_line(out, "ARM_SUBSCRIPTION_ID", f->conf->subscription);
	face_env_line(out, "ARM_RESOURCE_GROUP", f->conf->resource_group);
	face_env_line(out, "AZURE_TENANT_ID", f->conf->tenant);
	face_env_line(out, "AZURE_CLIENT_ID", f->conf->client_id);
	face_env_line(out, "AZURE_CLIENT_SECRET", f->conf->client_secret);
	if (token_path)
		face_env_line(out, "AZURE_FEDERATED_TOKEN_FILE", token_path);
	return face_close_file(out, path, err);
}

void azure_face_free(struct azure_face *f)
{
	if (!f)
		return;
	face_http_stop(f->https);
	face_http_stop(f->http);
	face_tokens_destroy(&f->tokens);
	OPENSSL_cleanse(f->federated, sizeof(f->federated));
	free(f->cert_pem);
	if (f->key_pem)
		OPENSSL_cleanse(f->key_pem, strlen(f->key_pem));
	free(f->key_pem);
	free(f);
}

#define DEFAULT_AZURE_ENV "./luascale-sim.azure.env"
#define DEFAULT_AZURE_TOKEN "./luascale-sim.azure-token"
#define DEFAULT_AZURE_CA "./luascale-sim.azure-ca.pem"

/* ---- luascale sim: --azure-port, -env-out, -token-out, -tls-port, -ca-out ---- */

enum { AZURE_OPT_PORT, AZURE_OPT_ENV, AZURE_OPT_TOKEN, AZURE_OPT_TLS_PORT, AZURE_OPT_CA };

static const struct sim_cloud_opt azure_opts[] = {
	[AZURE_OPT_PORT] = {"port", true, -1, NULL},
	[AZURE_OPT_ENV] = {"env-out", false, 0, DEFAULT_AZURE_ENV},
	[AZURE_OPT_TOKEN] = {"token-out", false, 0, DEFAULT_AZURE_TOKEN},
	[AZURE_OPT_TLS_PORT] = {"tls-port", true, 0, NULL},
	[AZURE_OPT_CA] = {"ca-out", false, 0, DEFAULT_AZURE_CA},
};

static void *azure_serve(void *flavour, const struct sim_face_args *a, struct errbuf *err)
{
	struct azure_face_opts zo;
	struct azure_face *face;

	memset(&zo, 0, sizeof(zo));
	zo.port = a->port[AZURE_OPT_PORT];
	zo.tls_port = a->port[AZURE_OPT_TLS_PORT];
	zo.latency_ns = a->latency_ns;
	zo.log = a->log;
	face = azure_face_new(flavour, &zo, err);
	if (!face)
		return NULL;
	if (azure_face_write_token(face, a->path[AZURE_OPT_TOKEN], err) < 0 ||
	    azure_face_write_ca(face, a->path[AZURE_OPT_CA], err) < 0 ||
	    azure_face_write_env(face, a->path[AZURE_OPT_ENV], a->path[AZURE_OPT_TOKEN], err) < 0) {
		errbuf_prefix(err, "azure");
		azure_face_free(face);
		return NULL;
	}
	return face;
}

static void azure_announce(const void *face, const struct sim_face_args *a, FILE *out)
{
	fprintf(out,
		"luascale sim: Azure face (ARM, IMDS, AAD token endpoint) at http://127.0.0.1:%d\n"
		"luascale sim: Azure AAD endpoints over TLS at https://127.0.0.1:%d (CA %s)\n"
		"endpoints and credentials written to %s, federated token to %s\n",
		azure_face_port(face), azure_face_tls_port(face), a->path[AZURE_OPT_CA],
		a->path[AZURE_OPT_ENV], a->path[AZURE_OPT_TOKEN]);
}

static void azure_face_release(void *face)
{
	azure_face_free(face);
}

const struct sim_cloud_face sim_face_azure = {
	.kind = &sim_cloud_azure,
	.opts = azure_opts,
	.n_opts = sizeof(azure_opts) / sizeof(azure_opts[0]),
	.synopsis = "                    [--azure-port PORT [--azure-env-out FILE] [--azure-token-out FILE]\n"
		    "                     [--azure-tls-port PORT] [--azure-ca-out FILE]]\n",
	.usage = "Azure (a scenario with an azure: section): --azure-port PORT (0: a free one)\n"
		 "also serves Resource Manager (scale sets, their VMs, operations), IMDS and\n"
		 "the AAD token endpoint on http://127.0.0.1:PORT, and the AAD endpoints over\n"
		 "TLS on --azure-tls-port (default a free one) with a self-signed certificate\n"
		 "written to --azure-ca-out (default " DEFAULT_AZURE_CA "); writes the\n"
		 "federated token to --azure-token-out (default " DEFAULT_AZURE_TOKEN ")\n"
		 "and the endpoints and credentials to --azure-env-out (default\n"
		 "" DEFAULT_AZURE_ENV ").\n",
	.face_serve = azure_serve,
	.face_announce = azure_announce,
	.face_free = azure_face_release,
};
