/*
 * credentials: the AWS credential chain and region resolution. Chooses one
 * source when the chain is built, fetches from it through cloudhttp, and
 * leaves caching and refresh timing to credcache. Never logs a key, a
 * secret or a token: only the source and the expiry.
 */
#include "providers/aws/credentials.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "kube/client.h"
#include "model.h"
#include "providers/aws/awserr.h"
#include "providers/cloudhttp/xmltree.h"
#include "providers/aws/profile.h"
#include "providers/cloudhttp/cloudhttp.h"
#include "providers/cloudhttp/credcache.h"
#include "providers/cloudhttp/metadata.h"
#include "providers/cloudhttp/oauth.h"
#include "providers/provider.h"

#define DEFAULT_IMDS "http://169.254.169.254"
#define DEFAULT_IMDS_V6 "http://[fd00:ec2::254]"
#define DEFAULT_CONTAINER "http://169.254.170.2"
#define IMDS_TOKEN_TTL "21600"
#define IMDS_CREDS_PATH "/latest/meta-data/iam/security-credentials/"
#define CONTAINER_TIMEOUT_MS 2000
#define HOP_LIMIT_HINT                                                                            \
	"inside a pod, the instance's metadata option HttpPutResponseHopLimit must be 2 or more " \
	"(aws ec2 modify-instance-metadata-options --http-put-response-hop-limit 2)"

enum src_kind { SRC_ENV, SRC_SHARED_CRED, SRC_SHARED_CONF, SRC_WEBID, SRC_CONTAINER, SRC_IMDS };

static const char *const src_names[] = { "environment",	 "shared-credentials-file",
					  "shared-config-file", "web-identity",
					  "container",	 "imds" };

struct imds {
	struct metadata_client md;
	const struct logger *log;
	struct clock *clock;
	bool v1_disabled;   /* AWS_EC2_METADATA_V1_DISABLED: never without a token */
};

struct aws_credchain {
	enum src_kind kind;
	char where[4400];           /* for messages: a file, a profile, a URL */
	struct aws_env env;
	bool env_set;
	struct cloudhttp *http;
	struct clock *clock;
	const struct logger *log;
	struct credcache *cache;
	struct aws_credentials fixed; /* environment and shared-file keys */
	/* web identity */
	char role_arn[2048];
	char token_file[4096];
	char session_name[128];
	char sts_url[1024];
	/* container */
	char container_url[2048];
	char container_shown[2048];  /* redacted, for messages */
	char auth_file[4096];
	char auth_token[8192];       /* AWS_CONTAINER_AUTHORIZATION_TOKEN */
	/* instance metadata */
	struct imds imds;
	pthread_mutex_t mu;           /* guards 'last_error' */
	char last_error[PROVIDER_MESSAGE_MAX]; /* the last failed fetch, whole; "" after a success */
};

/* ---- small helpers ---- */

/* Copies or checks a credential string that fills the array 'field'. */
#define COPY_FIELD(field, v, what, where) \
	oauth_copy_field((field), sizeof(field), (v), strlen(v), (what), (where), err)
#define CHECK_FIELD(field, what, where) \
	oauth_check_field((field), strlen(field), sizeof(field), (what), (where), err)

static void format_expiry(int64_t expires_s, char *ts, size_t len)
{
	if (expires_s == 0 || expires_s == CREDCACHE_NEVER)
		snprintf(ts, len, "never");
	else
		model_format_time(expires_s, ts, len);
}

/* Reads the four JSON fields of container and instance-metadata answers. */
static int parse_json_creds(const char *body, const char *where, struct aws_credentials *out,
			    struct errbuf *err)
{
	cJSON *j = oauth_json_object(body, where, err);
	const char *names[4] = { "AccessKeyId", "SecretAccessKey", "Token", "Expiration" };
	const cJSON *v[4];
	const cJSON *code;
	int rc = -1, i;

	if (!j)
		goto out;
	code = cJSON_GetObjectItemCaseSensitive(j, "Code");
	if (code && cJSON_IsString(code) && strcmp(code->valuestring, "Success") != 0) {
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "Message");

		errbuf_set(err, "%s: %.64s: %.200s", where, code->valuestring,
			   m && cJSON_IsString(m) ? m->valuestring : "no message");
		goto out;
	}
	for (i = 0; i < 4; i++) {
		v[i] = cJSON_GetObjectItemCaseSensitive(j, names[i]);
		if (!v[i] || !cJSON_IsString(v[i])) {
			errbuf_set(err, "%s: the answer has no string %s", where, names[i]);
			goto out;
		}
	}
	if (COPY_FIELD(out->access_key_id, v[0]->valuestring, "AccessKeyId", where) < 0 ||
	    COPY_FIELD(out->secret_access_key, v[1]->valuestring, "SecretAccessKey", where) < 0 ||
	    COPY_FIELD(out->session_token, v[2]->valuestring, "Token", where) < 0)
		goto out;
	if (kube_parse_time(v[3]->valuestring, &out->expires_s) < 0 || out->expires_s <= 0) {
		errbuf_set(err, "%s: Expiration \"%.40s\" is not an RFC 3339 time", where,
			   v[3]->valuestring);
		goto out;
	}
	rc = 0;
out:
	oauth_json_delete(j);
	return rc;
}

/* ---- instance metadata ---- */

/*
 * The IMDSv2 session token into 'tok'. On 403/404/405 (IMDSv2 off or not
 * there) and on no answer at all (the hop limit eats the PUT's answer in a
 * pod), 'tok' is "" and the caller goes on with IMDSv1, as botocore does;
 * '*unanswered' says which. 400 is an error.
 */
static int imds_token(struct imds *m, char *tok, size_t len, bool *unanswered, struct errbuf *err)
{
	struct cloudhttp_response r = { 0 };
	struct errbuf e = { "" };
	int rc;

	tok[0] = '\0';
	*unanswered = false;
	rc = metadata_send(&m->md, "PUT", "/latest/api/token", "x-aws-ec2-metadata-token-ttl-seconds",
			   IMDS_TOKEN_TTL, &r, &e);
	if (rc == -1) {
		*unanswered = true;
		log_at(m->log, LOG_WARN, clock_wall(m->clock),
		       "aws: the IMDSv2 token request (PUT %s/latest/api/token) got no answer (%s); "
		       "trying IMDSv1. On EC2, " HOP_LIMIT_HINT, m->md.base, e.msg);
		rc = 0;
	} else if (rc < 0) {
		rc = errbuf_set(err, "%s", e.msg);
	} else if (r.status == 200) {
		size_t n = r.body_len;

		while (n > 0 && isspace((unsigned char)r.body[n - 1]))
			n--;
		rc = oauth_copy_field(tok, len, r.body, n, "the IMDSv2 token", "instance metadata", err);
	} else if (r.status == 403 || r.status == 404 || r.status == 405) {
		log_at(m->log, LOG_INFO, clock_wall(m->clock),
		       "aws: the metadata service refused an IMDSv2 token (HTTP %ld); using IMDSv1",
		       r.status);
	} else if (r.status == 400) {
		rc = errbuf_set(err, "instance metadata at %s: the token request was refused (HTTP 400)",
				m->md.base);
	} else {
		log_at(m->log, LOG_WARN, clock_wall(m->clock),
		       "aws: the IMDSv2 token request answered HTTP %ld; trying IMDSv1", r.status);
	}
	oauth_wipe_response(&r);
	return rc;
}

/* GET 'path' with the token (IMDSv1 when ""). 0 with a 200 answer in
 * 'resp', or -1 with a message; a 404 is reported through '*status'. */
static int imds_get(struct imds *m, const char *tok, bool put_unanswered, const char *path,
		    struct cloudhttp_response *resp, long *status, struct errbuf *err)
{
	int rc;

	*status = 0;
	if (!tok[0] && m->v1_disabled)
		return errbuf_set(err, "instance metadata at %s: no IMDSv2 token and IMDSv1 is disabled "
				  "by AWS_EC2_METADATA_V1_DISABLED%s", m->md.base, put_unanswered ?
				  " (the token request got no answer: " HOP_LIMIT_HINT ")" : "");
	rc = metadata_send(&m->md, "GET", path, tok[0] ? "x-aws-ec2-metadata-token" : NULL, tok,
			   resp, err);
	if (rc == -1 && put_unanswered)
		errbuf_prefix(err, "instance metadata at %s: no answer (not on EC2, or the metadata "
			      "service is off; AWS_EC2_METADATA_DISABLED=true skips it)", m->md.base);
	else if (rc == -1)
		errbuf_prefix(err, "instance metadata at %s", m->md.base);
	if (rc < 0)
		return -1;
	*status = resp->status;
	if (resp->status == 200)
		return 0;
	if (resp->status == 401 && !tok[0] && put_unanswered)
		return errbuf_set(err, "instance metadata at %s: IMDSv1 is disabled on this instance and "
				  "the IMDSv2 token request got no answer: " HOP_LIMIT_HINT, m->md.base);
	if (resp->status == 401)
		return errbuf_set(err, "instance metadata at %s: GET %s: HTTP 401 (%s)", m->md.base,
				  path, tok[0] ? "the IMDSv2 token was refused"
					       : "IMDSv1 is disabled on this instance");
	return errbuf_set(err, "instance metadata at %s: GET %s: HTTP %ld", m->md.base, path,
			  resp->status);
}

static int fetch_imds(struct imds *m, struct aws_credentials *out, struct errbuf *err)
{
	struct cloudhttp_response r = { 0 };
	char tok[1024], role[129], path[256], where[1400];
	bool unanswered;
	long status;
	int rc = -1;

	if (imds_token(m, tok, sizeof(tok), &unanswered, err) < 0)
		goto out;
	if (imds_get(m, tok, unanswered, IMDS_CREDS_PATH, &r, &status, err) < 0) {
		if (status == 404)
			errbuf_set(err, "instance metadata at %s: this instance has no IAM role "
				   "(attach an instance profile)", m->md.base);
		goto out;
	}
	/* a role name: 1-128 of letters, digits and +=,.@_- */
	if (metadata_text(&r, "+=,.@_-", role, sizeof(role)) < 0) {
		errbuf_set(err, "instance metadata at %s: the role list does not start with a role name",
			   m->md.base);
		goto out;
	}
	oauth_wipe_response(&r);
	snprintf(path, sizeof(path), "%s%s", IMDS_CREDS_PATH, role);
	if (imds_get(m, tok, unanswered, path, &r, &status, err) < 0)
		goto out;
	snprintf(where, sizeof(where), "instance metadata at %s (role %s)", m->md.base, role);
	if (parse_json_creds(r.body, where, out, err) < 0)
		goto out;
	rc = 0;
out:
	credcache_wipe(tok, sizeof(tok));
	oauth_wipe_response(&r);
	return rc;
}

static int imds_init(struct imds *m, const struct aws_credchain_opts *o, struct errbuf *err)
{
	const char *base = aws_env_get(o->env, "AWS_EC2_METADATA_SERVICE_ENDPOINT");
	const char *mode = aws_env_get(o->env, "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE");

	memset(m, 0, sizeof(*m));
	m->log = o->log;
	m->clock = o->clock ? o->clock : clock_real();
	m->v1_disabled = aws_env_true(o->env, "AWS_EC2_METADATA_V1_DISABLED");
	if (!base) {
		if (mode && strcasecmp(mode, "ipv6") != 0 && strcasecmp(mode, "ipv4") != 0)
			return errbuf_set(err, "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE must be IPv4 or "
					  "IPv6, not \"%.32s\"", mode);
		if (o->imds_base_url)
			base = o->imds_base_url;
		else
			base = mode && strcasecmp(mode, "ipv6") == 0 ? DEFAULT_IMDS_V6 : DEFAULT_IMDS;
	}
	if (aws_endpoint_validate(base, err) < 0)
		return errbuf_prefix(err, "AWS_EC2_METADATA_SERVICE_ENDPOINT");
	if (metadata_init(&m->md, o->http, base, "AWS_EC2_METADATA_SERVICE_ENDPOINT", err) < 0)
		return -1;
	m->md.timeout_ms = o->imds_timeout_ms > 0 ? o->imds_timeout_ms : 1000;
	m->md.attempts = o->imds_attempts > 0 ? o->imds_attempts : 2;
	if (!o->http)
		return errbuf_set(err, "instance metadata: no HTTP client");
	return 0;
}

/* ---- web identity ---- */

static enum cloudhttp_verdict sts_classify(void *ctx, const struct cloudhttp_response *r)
{
	struct xmltree_doc *d;
	char code[64] = "";
	enum cloudhttp_verdict v = CLOUDHTTP_DONE;

	(void)ctx;
	if (r->status >= 500)
		return CLOUDHTTP_RETRY;
	if (r->status == 429)
		return CLOUDHTTP_RETRY_THROTTLED;
	if (r->status != 400 || !r->body)
		return CLOUDHTTP_DONE;
	d = xmltree_parse(r->body, r->body_len, NULL);
	if (d && aws_xml_error(d, code, sizeof(code), NULL, 0) == 0) {
		if (strcmp(code, "IDPCommunicationError") == 0)
			v = CLOUDHTTP_RETRY;
		else if (strcmp(code, "Throttling") == 0)
			v = CLOUDHTTP_RETRY_THROTTLED;
	}
	xmltree_free(d);
	return v;
}

static int fetch_webid(struct aws_credchain *c, struct aws_credentials *out, char *full,
		       size_t full_len, struct errbuf *err)
{
	struct buf tok = BUF_INIT, body = BUF_INIT, url = BUF_INIT;
	struct cloudhttp_headers h = CLOUDHTTP_HEADERS_INIT;
	struct cloudhttp_response r = { 0 };
	struct cloudhttp_request rq;
	struct xmltree_doc *d = NULL;
	const struct xmltree_node *cr;
	char where[1200], code[128], msg[PROVIDER_MESSAGE_MAX], exp[64], ctx[1300];
	int rc = -1;

	snprintf(where, sizeof(where), "web identity: STS AssumeRoleWithWebIdentity at %s",
		 c->sts_url);
	/* the token rotates (the kubelet rewrites it): read it every time */
	if (oauth_read_token_file(c->token_file, "web identity token file", &tok, err) < 0) {
		errbuf_prefix(err, "web identity");
		goto out;
	}
	oauth_form_add(&body, "Action", "AssumeRoleWithWebIdentity");
	oauth_form_add(&body, "Version", "2011-06-15");
	oauth_form_add(&body, "RoleArn", c->role_arn);
	oauth_form_add(&body, "RoleSessionName", c->session_name);
	oauth_form_add(&body, "WebIdentityToken", tok.data);
	buf_printf(&url, "%s/", c->sts_url);
	if (body.oom || url.oom ||
	    cloudhttp_headers_add(&h, "Content-Type",
				  "application/x-www-form-urlencoded; charset=utf-8") < 0) {
		errbuf_set(err, "%s: out of memory", where);
		goto out;
	}
	memset(&rq, 0, sizeof(rq));
	rq.method = "POST";
	rq.url = url.data;
	rq.headers = &h;
	rq.body = body.data;
	rq.body_len = body.len;
	rq.classify = sts_classify;
	if (cloudhttp_call(c->http, &rq, &r, err) < 0) {
		errbuf_prefix(err, "web identity");
		goto out;
	}
	d = xmltree_parse(r.body, r.body_len, NULL);
	if (r.status != 200) {
		/* STS's code first: "AccessDenied: Not authorized to perform
		 * sts:AssumeRoleWithWebIdentity (likely cause: ...); web identity: ..." */
		snprintf(ctx, sizeof(ctx), "%s: HTTP %ld", where, r.status);
		if (d && aws_xml_error(d, code, sizeof(code), msg, sizeof(msg)) == 0)
			provider_cloud_message(full, full_len, code, msg, ctx);
		else
			provider_cloud_message(full, full_len, NULL, NULL, ctx);
		errbuf_set(err, "%s", full);
		goto out;
	}
	if (!d) {
		errbuf_set(err, "%s: the answer is not XML", where);
		goto out;
	}
	cr = xmltree_find(xmltree_root(d), "AssumeRoleWithWebIdentityResult/Credentials");
	if (!cr || strcmp(xmltree_root(d)->name, "AssumeRoleWithWebIdentityResponse") != 0) {
		errbuf_set(err, "%s: the answer has no AssumeRoleWithWebIdentityResult/Credentials",
			   where);
		goto out;
	}
	if (xmltree_copy(cr, "AccessKeyId", out->access_key_id, sizeof(out->access_key_id)) < 0 ||
	    xmltree_copy(cr, "SecretAccessKey", out->secret_access_key,
			sizeof(out->secret_access_key)) < 0 ||
	    xmltree_copy(cr, "SessionToken", out->session_token, sizeof(out->session_token)) < 0 ||
	    xmltree_copy(cr, "Expiration", exp, sizeof(exp)) < 0) {
		errbuf_set(err, "%s: Credentials lacks AccessKeyId, SecretAccessKey, SessionToken or "
			   "Expiration, or one is too long", where);
		goto out;
	}
	if (CHECK_FIELD(out->access_key_id, "AccessKeyId", where) < 0 ||
	    CHECK_FIELD(out->secret_access_key, "SecretAccessKey", where) < 0 ||
	    CHECK_FIELD(out->session_token, "SessionToken", where) < 0)
		goto out;
	if (kube_parse_time(exp, &out->expires_s) < 0 || out->expires_s <= 0) {
		errbuf_set(err, "%s: Expiration \"%.40s\" is not an RFC 3339 time", where, exp);
		goto out;
	}
	rc = 0;
out:
	xmltree_free(d);
	oauth_wipe_response(&r);
	oauth_wipe_buf(&tok);
	oauth_wipe_buf(&body);
	buf_free(&url);
	cloudhttp_headers_free(&h);
	return rc;
}

/* ---- container credentials ---- */

static int allowed_container_host(const char *host)
{
	unsigned char a6[16], eks6[16];

	/* a loopback address, localhost, or an agent's */
	if (oauth_loopback_host(host) || strcmp(host, "169.254.170.2") == 0 ||
	    strcmp(host, "169.254.170.23") == 0)
		return 1;
	return inet_pton(AF_INET6, host, a6) == 1 && inet_pton(AF_INET6, "fd00:ec2::23", eks6) == 1 &&
	       memcmp(a6, eks6, 16) == 0;
}

static int fetch_container(struct aws_credchain *c, struct aws_credentials *out, char *full,
			   size_t full_len, struct errbuf *err)
{
	struct cloudhttp_headers h = CLOUDHTTP_HEADERS_INIT;
	struct cloudhttp_response r = { 0 };
	struct cloudhttp_request rq;
	struct buf tok = BUF_INIT;
	char where[2200];
	int rc = -1;

	snprintf(where, sizeof(where), "container credentials at %s", c->container_shown);
	if (c->auth_file[0]) {
		if (oauth_read_token_file(c->auth_file, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", &tok,
					  err) < 0) {
			errbuf_prefix(err, "container credentials");
			goto out;
		}
	} else if (c->auth_token[0]) {
		buf_puts(&tok, c->auth_token);
	}
	if (cloudhttp_headers_add(&h, "Accept", "application/json") < 0 ||
	    (tok.len && cloudhttp_headers_add(&h, "Authorization", tok.data) < 0)) {
		errbuf_set(err, "%s: the authorization token is not a valid header value", where);
		goto out;
	}
	memset(&rq, 0, sizeof(rq));
	rq.method = "GET";
	rq.url = c->container_url;
	rq.headers = &h;
	rq.timeout_ms = CONTAINER_TIMEOUT_MS;
	if (cloudhttp_call(c->http, &rq, &r, err) < 0) {
		errbuf_prefix(err, "container credentials");
		goto out;
	}
	if (r.status != 200) {
		/* the agent's {"code","message"} (or Code, Message), its code first */
		cJSON *j = cJSON_Parse(r.body);
		const cJSON *m = j ? cJSON_GetObjectItemCaseSensitive(j, "message") : NULL;
		const cJSON *k = j ? cJSON_GetObjectItemCaseSensitive(j, "code") : NULL;
		char ctx[2300];

		if (!m && j)
			m = cJSON_GetObjectItemCaseSensitive(j, "Message");
		if (!k && j)
			k = cJSON_GetObjectItemCaseSensitive(j, "Code");
		snprintf(ctx, sizeof(ctx), "%s: HTTP %ld", where, r.status);
		provider_cloud_message(full, full_len, cJSON_IsString(k) ? k->valuestring : NULL,
				       cJSON_IsString(m) ? m->valuestring : NULL, ctx);
		errbuf_set(err, "%s", full);
		cJSON_Delete(j);
		goto out;
	}
	if (parse_json_creds(r.body, where, out, err) < 0)
		goto out;
	rc = 0;
out:
	oauth_wipe_response(&r);
	oauth_wipe_buf(&tok);
	cloudhttp_headers_free(&h);
	return rc;
}

/* ---- the chain ---- */

static int fetch(void *ud, void *value, int64_t *expires_s, struct errbuf *err)
{
	struct aws_credchain *c = ud;
	struct aws_credentials *out = value;
	char ts[40], full[PROVIDER_MESSAGE_MAX] = "";
	int rc;

	switch (c->kind) {
	case SRC_ENV:
	case SRC_SHARED_CRED:
	case SRC_SHARED_CONF:
		*out = c->fixed;
		rc = 0;
		break;
	case SRC_WEBID:
		rc = fetch_webid(c, out, full, sizeof(full), err);
		break;
	case SRC_CONTAINER:
		rc = fetch_container(c, out, full, sizeof(full), err);
		break;
	default:
		rc = fetch_imds(&c->imds, out, err);
		if (rc < 0)
			errbuf_prefix(err, "imds");
		break;
	}
	pthread_mutex_lock(&c->mu);
	snprintf(c->last_error, sizeof(c->last_error), "%s", rc < 0 ? (full[0] ? full : err->msg) : "");
	pthread_mutex_unlock(&c->mu);
	if (rc < 0) {
		aws_credentials_wipe(out);
		return -1;
	}
	snprintf(out->source, sizeof(out->source), "%s", src_names[c->kind]);
	*expires_s = out->expires_s ? out->expires_s : CREDCACHE_NEVER;
	format_expiry(out->expires_s, ts, sizeof(ts));
	log_at(c->log, LOG_INFO, clock_wall(c->clock), "aws: credentials from %s (%s), expire %s",
	       src_names[c->kind], c->where, ts);
	return 0;
}

static int set_fixed(struct aws_credchain *c, const char *ak, const char *sk, const char *st,
		     const char *where, struct errbuf *err)
{
	if (COPY_FIELD(c->fixed.access_key_id, ak, "the access key id", where) < 0 ||
	    COPY_FIELD(c->fixed.secret_access_key, sk, "the secret access key", where) < 0)
		return -1;
	if (st && *st && COPY_FIELD(c->fixed.session_token, st, "the session token", where) < 0)
		return -1;
	return 0;
}

static int setup_env(struct aws_credchain *c, const struct aws_env *env, struct errbuf *err)
{
	const char *ak = aws_env_get(env, "AWS_ACCESS_KEY_ID");
	const char *sk = aws_env_get(env, "AWS_SECRET_ACCESS_KEY");
	const char *st = aws_env_get(env, "AWS_SESSION_TOKEN");
	const char *exp = aws_env_get(env, "AWS_CREDENTIAL_EXPIRATION");

	if (!ak && !sk)
		return 0;
	if (!ak || !sk)
		return errbuf_set(err, "environment: %s is set but %s is not",
				  ak ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
				  ak ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
	if (!st)
		st = aws_env_get(env, "AWS_SECURITY_TOKEN");
	c->kind = SRC_ENV;
	snprintf(c->where, sizeof(c->where), "AWS_ACCESS_KEY_ID");
	if (set_fixed(c, ak, sk, st, "environment", err) < 0)
		return -1;
	if (exp && (kube_parse_time(exp, &c->fixed.expires_s) < 0 || c->fixed.expires_s <= 0))
		return errbuf_set(err, "environment: AWS_CREDENTIAL_EXPIRATION \"%.40s\" is not an "
				  "RFC 3339 time", exp);
	return 1;
}

static int valid_session_name(const char *s)
{
	size_t n = strlen(s), i;

	if (n < 2 || n > 64)
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("+=,.@_-", s[i]))
			return 0;
	return 1;
}

static int setup_webid(struct aws_credchain *c, const struct aws_credchain_opts *o,
		       const struct aws_profile *p, const char *token_file, const char *role_arn,
		       const char *session, const char *where, struct errbuf *err)
{
	const struct aws_env *env = o->env;
	const char *region = o->region && *o->region ? o->region : NULL;
	const char *from = NULL;

	c->kind = SRC_WEBID;
	snprintf(c->where, sizeof(c->where), "%s", where);
	if (!role_arn || !*role_arn)
		return errbuf_set(err, "web identity (%s): a web identity token file is set but no "
				  "role: set AWS_ROLE_ARN or the profile's role_arn", where);
	if (strlen(role_arn) >= sizeof(c->role_arn) || strncmp(role_arn, "arn:", 4) != 0)
		return errbuf_set(err, "web identity (%s): role ARN \"%.100s\" is not an ARN", where,
				  role_arn);
	snprintf(c->role_arn, sizeof(c->role_arn), "%s", role_arn);
	if (strlen(token_file) >= sizeof(c->token_file))
		return errbuf_set(err, "web identity (%s): token file path too long", where);
	snprintf(c->token_file, sizeof(c->token_file), "%s", token_file);
	if (session && *session) {
		if (!valid_session_name(session))
			return errbuf_set(err, "web identity (%s): role session name \"%.80s\" must be "
					  "2-64 of letters, digits and +=,.@_-", where, session);
		snprintf(c->session_name, sizeof(c->session_name), "%s", session);
	} else {
		snprintf(c->session_name, sizeof(c->session_name), "luascale-%lld",
			 (long long)clock_wall(c->clock));
	}
	if (!region)
		region = aws_env_get(env, "AWS_REGION");
	if (!region)
		region = aws_env_get(env, "AWS_DEFAULT_REGION");
	if (!region && p->region[0])
		region = p->region;
	if (aws_endpoint_resolve(AWS_SERVICE_STS, region, o->endpoints, env, &p->endpoints, c->sts_url,
				 sizeof(c->sts_url), &from, err) < 0)
		return errbuf_prefix(err, "web identity: the STS endpoint");
	return 1;
}

static int setup_container(struct aws_credchain *c, const struct aws_credchain_opts *o,
			   struct errbuf *err)
{
	const char *rel = aws_env_get(o->env, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
	const char *full = aws_env_get(o->env, "AWS_CONTAINER_CREDENTIALS_FULL_URI");
	const char *file = aws_env_get(o->env, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
	const char *tok = aws_env_get(o->env, "AWS_CONTAINER_AUTHORIZATION_TOKEN");
	struct cloudhttp_url u;
	int n;

	if (!rel && !full)
		return 0;
	c->kind = SRC_CONTAINER;
	if (rel) {
		/* the relative form wins, as in the SDKs */
		if (rel[0] != '/')
			return errbuf_set(err, "container credentials: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI "
					  "must start with '/'");
		n = snprintf(c->container_url, sizeof(c->container_url), "%s%s",
			     o->container_base_url ? o->container_base_url : DEFAULT_CONTAINER, rel);
	} else {
		n = snprintf(c->container_url, sizeof(c->container_url), "%s", full);
	}
	if (n < 0 || (size_t)n >= sizeof(c->container_url))
		return errbuf_set(err, "container credentials: the URL is too long");
	cloudhttp_redact_url(c->container_url, c->container_shown, sizeof(c->container_shown));
	snprintf(c->where, sizeof(c->where), "%s", c->container_shown);
	if (cloudhttp_url_parse(c->container_url, &u, err) < 0)
		return errbuf_prefix(err, "container credentials: %s",
				     rel ? "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"
					 : "AWS_CONTAINER_CREDENTIALS_FULL_URI");
	/* as botocore: https anywhere, plain http only to the agents' addresses */
	if (!rel && strcmp(u.scheme, "https") != 0 && !allowed_container_host(u.host))
		return errbuf_set(err, "container credentials: AWS_CONTAINER_CREDENTIALS_FULL_URI host "
				  "\"%.100s\" is not allowed over http: only https, or a loopback "
				  "address, localhost, 169.254.170.2, or the EKS Pod Identity agent "
				  "169.254.170.23 or fd00:ec2::23",
				  u.host);
	if (file) {
		if (strlen(file) >= sizeof(c->auth_file))
			return errbuf_set(err, "container credentials: "
					  "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE path too long");
		snprintf(c->auth_file, sizeof(c->auth_file), "%s", file);
	} else if (tok) {
		if (strlen(tok) >= sizeof(c->auth_token))
			return errbuf_set(err, "container credentials: AWS_CONTAINER_AUTHORIZATION_TOKEN "
					  "is too long");
		if (strpbrk(tok, "\r\n"))
			return errbuf_set(err, "container credentials: AWS_CONTAINER_AUTHORIZATION_TOKEN "
					  "holds a line break");
		snprintf(c->auth_token, sizeof(c->auth_token), "%s", tok);
	}
	return 1;
}

/* Picks the source. Returns 1 when one is configured, 0 when none, -1 on error. */
static int choose(struct aws_credchain *c, const struct aws_credchain_opts *o, struct aws_profile *p,
		  struct errbuf *err)
{
	struct aws_profile_opts po = { o->env, o->home, o->profile };
	const char *tf, *role, *sess;
	char where[4400];
	int rc;

	rc = setup_env(c, o->env, err);
	if (rc != 0)
		return rc;
	if (aws_profile_load(p, &po, err) < 0)
		return -1;
	if (p->found && p->access_key_id[0]) {
		bool cred = strcmp(p->keys_from, p->credentials_file) == 0;

		c->kind = cred ? SRC_SHARED_CRED : SRC_SHARED_CONF;
		snprintf(c->where, sizeof(c->where), "profile %s in %s", p->name, p->keys_from);
		return set_fixed(c, p->access_key_id, p->secret_access_key, p->session_token,
				 c->where, err) < 0 ? -1 : 1;
	}
	if (p->found && p->web_identity_token_file[0]) {
		/* as the SDKs do, the variables win over the profile's keys */
		role = aws_env_get(o->env, "AWS_ROLE_ARN");
		sess = aws_env_get(o->env, "AWS_ROLE_SESSION_NAME");
		snprintf(where, sizeof(where), "profile %s", p->name);
		return setup_webid(c, o, p, p->web_identity_token_file, role ? role : p->role_arn,
				   sess ? sess : p->role_session_name, where, err);
	}
	tf = aws_env_get(o->env, "AWS_WEB_IDENTITY_TOKEN_FILE");
	if (tf) {
		role = aws_env_get(o->env, "AWS_ROLE_ARN");
		sess = aws_env_get(o->env, "AWS_ROLE_SESSION_NAME");
		return setup_webid(c, o, p, tf, role ? role : p->role_arn,
				   sess ? sess : p->role_session_name, "AWS_WEB_IDENTITY_TOKEN_FILE", err);
	}
	if (p->found && p->role_arn[0])
		return errbuf_set(err, "profile %s has role_arn but no web_identity_token_file (and "
				  "AWS_WEB_IDENTITY_TOKEN_FILE is unset): assuming a role from "
				  "source_profile or credential_source is not supported", p->name);
	rc = setup_container(c, o, err);
	if (rc != 0)
		return rc;
	if (aws_env_true(o->env, "AWS_EC2_METADATA_DISABLED"))
		return 0;
	c->kind = SRC_IMDS;
	if (imds_init(&c->imds, o, err) < 0)
		return -1;
	snprintf(c->where, sizeof(c->where), "%s", c->imds.md.base);
	return 1;
}

struct aws_credchain *aws_credchain_new(const struct aws_credchain_opts *o, struct errbuf *err)
{
	struct aws_credchain *c;
	struct aws_profile *p = NULL;
	struct credcache_opts co;
	int rc;

	if (!o || !o->http) {
		errbuf_set(err, "aws credentials: an HTTP client is required");
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	p = calloc(1, sizeof(*p));
	if (c)
		pthread_mutex_init(&c->mu, NULL);
	if (!c || !p) {
		errbuf_set(err, "aws credentials: out of memory");
		goto fail;
	}
	if (o->env) {
		c->env = *o->env;
		c->env_set = true;
	}
	c->http = o->http;
	c->clock = o->clock ? o->clock : clock_real();
	c->log = o->log;
	rc = choose(c, o, p, err);
	if (rc < 0)
		goto fail;
	if (rc == 0) {
		errbuf_set(err, "no AWS credentials: none in the environment (AWS_ACCESS_KEY_ID), "
			   "profile \"%s\" has none%s%s%s, no web identity (AWS_WEB_IDENTITY_TOKEN_FILE), "
			   "no container credentials (AWS_CONTAINER_CREDENTIALS_FULL_URI), and the "
			   "instance metadata service is disabled (AWS_EC2_METADATA_DISABLED)",
			   p->name, p->credentials_file[0] || p->config_file[0] ? " (read " : "",
			   p->credentials_file[0] ? p->credentials_file : p->config_file,
			   p->credentials_file[0] || p->config_file[0] ? ")" : "");
		goto fail;
	}
	memset(&co, 0, sizeof(co));
	co.name = "aws credentials";
	co.value_size = sizeof(struct aws_credentials);
	co.refresh = fetch;
	co.ud = c;
	co.advisory_s = o->advisory_s;
	co.mandatory_s = o->mandatory_s;
	co.clock = c->clock;
	co.log = o->log;
	c->cache = credcache_new(&co, err);
	if (!c->cache)
		goto fail;
	log_at(c->log, LOG_INFO, clock_wall(c->clock), "aws: credential source %s (%s)",
	       src_names[c->kind], c->where);
	aws_profile_wipe(p);
	free(p);
	return c;
fail:
	if (p) {
		aws_profile_wipe(p);
		free(p);
	}
	if (c) {
		aws_credentials_wipe(&c->fixed);
		credcache_wipe(c->auth_token, sizeof(c->auth_token));
		free(c);
	}
	return NULL;
}

int aws_credchain_get(struct aws_credchain *c, struct aws_credentials *out, struct errbuf *err)
{
	int64_t exp = 0;

	if (credcache_get(c->cache, out, &exp, err) < 0) {
		aws_credentials_wipe(out);
		return -1;
	}
	out->expires_s = exp == CREDCACHE_NEVER ? 0 : exp;
	return 0;
}

const char *aws_credchain_source(const struct aws_credchain *c)
{
	return src_names[c->kind];
}

void aws_credchain_invalidate(struct aws_credchain *c)
{
	credcache_invalidate(c->cache);
}

void aws_credchain_free(struct aws_credchain *c)
{
	if (!c)
		return;
	credcache_free(c->cache);
	aws_credentials_wipe(&c->fixed);
	credcache_wipe(c->auth_token, sizeof(c->auth_token));
	pthread_mutex_destroy(&c->mu);
	free(c);
}

void aws_credchain_last_error(struct aws_credchain *c, char *out, size_t len)
{
	pthread_mutex_lock(&c->mu);
	snprintf(out, len, "%s", c->last_error);
	pthread_mutex_unlock(&c->mu);
}

/* ---- region ---- */

static int region_from_imds(const struct aws_credchain_opts *o, char *out, size_t len,
			    const char **from, struct errbuf *err)
{
	struct imds m;
	struct cloudhttp_response r = { 0 };
	char tok[1024];
	bool unanswered;
	long status;
	size_t n;
	int rc = -1;

	if (imds_init(&m, o, err) < 0)
		return -1;
	if (imds_token(&m, tok, sizeof(tok), &unanswered, err) < 0)
		return -1;
	if (imds_get(&m, tok, unanswered, "/latest/meta-data/placement/region", &r, &status, err) == 0) {
		*from = "instance metadata (placement/region)";
	} else {
		if (status != 404)
			goto out;
		cloudhttp_response_free(&r);
		if (imds_get(&m, tok, unanswered, "/latest/meta-data/placement/availability-zone", &r,
			     &status, err) < 0)
			goto out;
		*from = "instance metadata (placement/availability-zone)";
		/* us-east-1a → us-east-1 */
		n = r.body_len;
		while (n > 0 && isspace((unsigned char)r.body[n - 1]))
			n--;
		if (n > 0 && isalpha((unsigned char)r.body[n - 1]))
			n--;
		r.body[n] = '\0';
		r.body_len = n;
	}
	n = r.body_len;
	while (n > 0 && isspace((unsigned char)r.body[n - 1]))
		n--;
	r.body[n] = '\0';
	if (aws_region_validate(r.body, err) < 0) {
		errbuf_prefix(err, "%s", *from);
		goto out;
	}
	if (n >= len) {
		errbuf_set(err, "region buffer too small");
		goto out;
	}
	memcpy(out, r.body, n + 1);
	rc = 0;
out:
	credcache_wipe(tok, sizeof(tok));
	cloudhttp_response_free(&r);
	return rc;
}

int aws_region_resolve(const struct aws_credchain_opts *o, char *out, size_t len, const char **from,
		       struct errbuf *err)
{
	static const struct aws_credchain_opts none;
	struct aws_profile *p;
	struct aws_profile_opts po;
	const char *v, *src = NULL, *dummy;
	struct errbuf e = { "" };
	int rc = -1;

	if (!o)
		o = &none;
	if (!from)
		from = &dummy;
	if (o->region && *o->region) {
		v = o->region;
		src = "provider.aws.region";
	} else if ((v = aws_env_get(o->env, "AWS_REGION"))) {
		src = "AWS_REGION";
	} else if ((v = aws_env_get(o->env, "AWS_DEFAULT_REGION"))) {
		src = "AWS_DEFAULT_REGION";
	}
	if (v) {
		if (aws_region_validate(v, err) < 0)
			return errbuf_prefix(err, "%s", src);
		if (strlen(v) >= len)
			return errbuf_set(err, "region buffer too small");
		snprintf(out, len, "%s", v);
		*from = src;
		return 0;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return errbuf_set(err, "out of memory");
	po.env = o->env;
	po.home = o->home;
	po.profile = o->profile;
	if (aws_profile_load(p, &po, err) < 0)
		goto out;
	if (p->region[0]) {
		snprintf(out, len, "%s", p->region);
		*from = "the shared config's profile";
		rc = 0;
		goto out;
	}
	if (!aws_env_true(o->env, "AWS_EC2_METADATA_DISABLED") && o->http) {
		if (region_from_imds(o, out, len, from, &e) == 0) {
			rc = 0;
			goto out;
		}
	} else {
		snprintf(e.msg, sizeof(e.msg), "instance metadata not asked (%s)",
			 o->http ? "AWS_EC2_METADATA_DISABLED" : "no HTTP client");
	}
	errbuf_set(err, "no AWS region: set provider.aws.region or AWS_REGION (none in AWS_REGION, "
		   "AWS_DEFAULT_REGION, profile \"%s\"; %s)", p->name, e.msg);
out:
	aws_profile_wipe(p);
	free(p);
	return rc;
}

/* ---- endpoints ---- */

int aws_endpoints_resolve(const struct aws_credchain_opts *o, const char *region,
			  struct aws_resolved_endpoints *out, struct errbuf *err)
{
	static const struct aws_credchain_opts none;
	struct aws_profile_opts po;
	struct aws_profile *p;
	struct clock *clk;
	int rc = -1;
	unsigned i;

	if (!o)
		o = &none;
	clk = o->clock ? o->clock : clock_real();
	memset(out, 0, sizeof(*out));
	p = calloc(1, sizeof(*p));
	if (!p)
		return errbuf_set(err, "out of memory");
	po.env = o->env;
	po.home = o->home;
	po.profile = o->profile;
	if (aws_profile_load(p, &po, err) < 0)
		goto out;
	for (i = 0; i < AWS_SERVICE_COUNT; i++) {
		if (aws_endpoint_resolve((enum aws_service)i, region, o->endpoints, o->env, &p->endpoints,
					 out->url[i], sizeof(out->url[i]), &out->from[i], err) < 0) {
			errbuf_prefix(err, "the %s endpoint", aws_service_name((enum aws_service)i));
			goto out;
		}
		if (strcmp(out->from[i], "default") != 0)
			log_at(o->log, LOG_INFO, clock_wall(clk), "aws: %s endpoint %s (from %s)",
			       aws_service_name((enum aws_service)i), out->url[i], out->from[i]);
	}
	rc = 0;
out:
	aws_profile_wipe(p);
	free(p);
	return rc;
}
