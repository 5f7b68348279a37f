/*
 * awsapi: AWS Query/EC2 and JSON protocol calls over cloudhttp with SigV4
 * (see awsapi.h).
 * The signature is made in cloudhttp's per-attempt hook, so each retry
 * carries a fresh date and the token of the bucket it waited for.
 */
#include "providers/aws/awsapi.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "providers/aws/awserr.h"
#include "wire/sigv4.h"
#include "providers/cloudhttp/cloudcall.h"
#include "providers/cloudhttp/cloudhttp.h"

#define TOKEN_WAIT_NS (60 * CLOCK_NS_PER_S)
#define CONTENT_TYPE "application/x-www-form-urlencoded; charset=utf-8"

static const char *const api_version[AWS_SERVICE_COUNT] = {
	[AWS_SERVICE_EC2] = "2016-11-15",
	[AWS_SERVICE_AUTOSCALING] = "2011-01-01",
	[AWS_SERVICE_STS] = "2011-06-15",
	[AWS_SERVICE_SQS] = "2012-11-05",
};

void aws_query_init(struct aws_query *f, enum aws_service svc, const char *action)
{
	memset(f, 0, sizeof(*f));
	aws_query_add(f, "Action", action);
	aws_query_add(f, "Version", api_version[svc]);
}

void aws_query_add(struct aws_query *f, const char *key, const char *value)
{
	if ((f->b.len && buf_puts(&f->b, "&") < 0) || cloudhttp_escape(&f->b, key) < 0 ||
	    buf_puts(&f->b, "=") < 0 || cloudhttp_escape(&f->b, value ? value : "") < 0)
		f->oom = 1;
}

void aws_query_addf(struct aws_query *f, const char *value, const char *key_fmt, ...)
{
	char key[256];
	va_list ap;

	va_start(ap, key_fmt);
	vsnprintf(key, sizeof(key), key_fmt, ap);
	va_end(ap);
	aws_query_add(f, key, value);
}

void aws_query_add_int(struct aws_query *f, const char *key, int64_t v)
{
	char s[32];

	snprintf(s, sizeof(s), "%lld", (long long)v);
	aws_query_add(f, key, s);
}

void aws_query_free(struct aws_query *f)
{
	buf_free(&f->b);
}

struct call {
	struct aws_api *api;
	char action[48];
	const char *service;        /* signed for, and named in messages: "ec2", "sqs" */
	const char *region;
	const char *content_type;
	const char *target;         /* a JSON protocol's X-Amz-Target; NULL: the query protocol */
	struct ratelimit *bucket;
	struct cloudhttp_url url;
	bool auth_retry;            /* the credentials were refreshed for a retry */
	struct provider_status *st; /* set by prepare when it gives up */
};

/*
 * The cloudhttp prepare step of a signed POST to 'url' ('service' in
 * 'region', SigV4): a token from 'bucket' first (may be NULL; a fenced or
 * cancelled wait fails with 'st' set), then the credentials, then
 * X-Amz-Date, the session token and Authorization added to 'extra'. The
 * signed headers are host, content-type and, when not NULL, x-amz-target
 * (JSON protocols). 0, or -1 with 'st' and 'err' saying why.
 */
static int sign_post(const struct aws_api *api, struct ratelimit *bucket, const struct cloudhttp_url *url,
		     const char *region, const char *service, const char *content_type,
		     const char *target, const struct cloudhttp_request *req,
		     struct cloudhttp_headers *extra, struct provider_status *st, struct errbuf *err)
{
	struct aws_credentials cr;
	struct sigv4_header hs[3];
	struct sigv4_input in;
	struct sigv4_output out;
	struct errbuf e;
	char path[2048];
	int rc = -1;

	if (bucket && provider_take_token(bucket, clock_now(api->clock) + TOKEN_WAIT_NS,
					  api->clock, st) < 0) {
		errbuf_set(err, "%s", st->message);
		return -1;
	}
	if (aws_credchain_get(api->creds, &cr, &e) < 0) {
		st->code = PROVIDER_AUTH;
		errbuf_set(err, "no AWS credentials: %s", e.msg);
		/* the credential source's error whole, its code first */
		aws_credchain_last_error(api->creds, st->message, sizeof(st->message));
		return -1;
	}
	snprintf(path, sizeof(path), "%.*s", url->path ? (int)url->path_len : 1,
		 url->path ? url->path : "/");
	hs[0].name = "host";
	hs[0].value = url->authority;
	hs[1].name = "content-type";
	hs[1].value = content_type;
	hs[2].name = "x-amz-target";
	hs[2].value = target;
	memset(&in, 0, sizeof(in));
	in.method = "POST";
	in.path = path;
	in.query = NULL;
	in.headers = hs;
	in.n_headers = target ? 3 : 2;
	in.body = req->body;
	in.body_len = req->body_len;
	in.region = region;
	in.service = service;
	in.time_s = clock_wall(api->clock);
	memset(&out, 0, sizeof(out));
	if (sigv4_sign(&in, &cr, &out, &e) < 0) {
		st->code = PROVIDER_INVALID;
		errbuf_set(err, "cannot sign the request: %s", e.msg);
		goto out;
	}
	if (cloudhttp_headers_add(extra, "X-Amz-Date", out.amz_date) < 0 ||
	    (cr.session_token[0] &&
	     cloudhttp_headers_add(extra, "X-Amz-Security-Token", cr.session_token) < 0) ||
	    cloudhttp_headers_add(extra, "Authorization", out.authorization) < 0) {
		st->code = PROVIDER_TRANSIENT;
		errbuf_set(err, "out of memory");
		goto out;
	}
	rc = 0;
out:
	sigv4_output_free(&out);
	aws_credentials_wipe(&cr);
	return rc;
}

static int prepare(void *ctx, const struct cloudhttp_request *req, struct cloudhttp_headers *extra,
		   struct errbuf *err)
{
	struct call *c = ctx;

	return sign_post(c->api, c->bucket, &c->url, c->region, c->service, c->content_type, c->target,
			     req, extra, c->st, err);
}

/* A JSON member's string, or NULL. */
static const char *json_str(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The AWS error an answer carries: its code ("" when none), message and
 * request id. The query protocol says them in XML; a JSON protocol in
 * "__type" (after its namespace, "...#Code"), "message" and the
 * x-amzn-RequestId header. */
static void answer_error(const struct call *c, const struct cloudhttp_response *r, char *code, size_t clen,
			 char *msg, size_t mlen, char *rid, size_t rlen)
{
	code[0] = msg[0] = rid[0] = '\0';
	if (!r->body || !r->body_len)
		return;
	if (c->target) {
		cJSON *doc = cJSON_ParseWithLength(r->body, r->body_len);
		const char *t = json_str(doc, "__type"), *m = json_str(doc, "message");
		const char *id = cloudhttp_headers_get(&r->headers, "x-amzn-RequestId");

		if (!m)
			m = json_str(doc, "Message");
		if (t && strrchr(t, '#'))
			t = strrchr(t, '#') + 1;
		snprintf(code, clen, "%s", t ? t : "");
		snprintf(msg, mlen, "%s", m ? m : "");
		snprintf(rid, rlen, "%.64s", id ? id : "");
		cJSON_Delete(doc);
	} else {
		struct errbuf e;
		struct xmltree_doc *d = xmltree_parse(r->body, r->body_len, &e);

		if (d && aws_xml_error(d, code, clen, msg, mlen) == 0)
			aws_xml_request_id(d, rid, rlen);
		else
			code[0] = '\0';
		xmltree_free(d);
	}
}

static enum cloudhttp_verdict classify(void *ctx, const struct cloudhttp_response *r)
{
	struct call *c = ctx;
	char code[128], msg[8], rid[8];
	const char *k;

	if (r->status >= 200 && r->status < 300) {
		if (c->bucket)
			ratelimit_succeeded(c->bucket);
		return CLOUDHTTP_DONE;
	}
	answer_error(c, r, code, sizeof(code), msg, sizeof(msg), rid, sizeof(rid));
	k = code[0] ? code : NULL;
	if (r->status == 429 || aws_error_is_throttle(k)) {
		if (c->bucket)
			ratelimit_throttled(c->bucket);
		log_at(c->api->log, LOG_WARN, clock_wall(c->api->clock),
		       "aws: %s throttled (%s, HTTP %ld); retrying, %s calls now at %.3g a second",
		       c->action, k ? k : "no code", r->status, c->bucket ? "the provider's" : "its",
		       c->bucket ? ratelimit_rate(c->bucket) : 0.0);
		return CLOUDHTTP_RETRY_THROTTLED;
	}
	if (k && (!strcmp(k, "ExpiredToken") || !strcmp(k, "RequestExpired") ||
		  !strcmp(k, "InvalidClientTokenId")) && !c->auth_retry) {
		/* credentials rotated under us: fetch anew, once */
		c->auth_retry = true;
		aws_credchain_invalidate(c->api->creds);
		return CLOUDHTTP_RETRY;
	}
	if (r->status >= 500 || (k && aws_error_class(k, r->status) == PROVIDER_TRANSIENT))
		return CLOUDHTTP_RETRY;
	return CLOUDHTTP_DONE;
}

/* Sends 'body' as 'c' says to 'url' (c->action, c->service, ... set). 0
 * with a success in *resp (the caller frees it); -1 with c->st: no
 * answer, or the AWS error of the answer. */
static int send_call(struct call *c, const char *url, const char *body, size_t len,
		     struct cloudhttp_response *resp)
{
	struct provider_status *st = c->st;
	struct cloudhttp_headers hs = CLOUDHTTP_HEADERS_INIT;
	struct cloudhttp_request req;
	struct errbuf err;
	char code[128], msg[PROVIDER_MESSAGE_MAX], rid[128];
	int rc = -1;

	memset(resp, 0, sizeof(*resp));
	if (cloudhttp_url_parse(url, &c->url, &err) < 0) {
		cloudcall_status(st, PROVIDER_INVALID, "%s: %s endpoint: %s", c->action, c->service, err.msg);
		return -1;
	}
	if (cloudhttp_headers_add(&hs, "Content-Type", c->content_type) < 0 ||
	    (c->target && cloudhttp_headers_add(&hs, "X-Amz-Target", c->target) < 0)) {
		cloudcall_status(st, PROVIDER_TRANSIENT, "%s: out of memory", c->action);
		goto out;
	}
	memset(&req, 0, sizeof(req));
	req.method = "POST";
	req.url = url;
	req.headers = &hs;
	req.body = body;
	req.body_len = len;
	req.prepare = prepare;
	req.classify = classify;
	req.ctx = c;
	if (cloudhttp_call(c->api->http, &req, resp, &err) < 0) {
		/* prepare set the class when it gave up; else no answer */
		if (st->code == PROVIDER_AUTH && st->message[0]) /* the credentials' error, whole */
			provider_status_cloud(st, PROVIDER_AUTH, NULL, st->message, "%s not sent", c->action);
		else
			cloudcall_status(st, st->code != PROVIDER_OK ? st->code : PROVIDER_TRANSIENT, "%s: %s",
					 c->action, err.msg);
		goto out;
	}
	if (resp->status >= 200 && resp->status < 300) {
		rc = 0;
		goto out;
	}
	answer_error(c, resp, code, sizeof(code), msg, sizeof(msg), rid, sizeof(rid));
	if (code[0])
		/* the code first: "AuthFailure: ... (likely cause: ...); DescribeInstances (request R)" */
		provider_status_cloud(st, aws_error_class_msg(code, resp->status, msg), code, msg,
				      "%s%s%s%s", c->action, rid[0] ? " (request " : "", rid,
				      rid[0] ? ")" : "");
	else
		cloudcall_status(st, aws_error_class(NULL, resp->status), "%s: %s answered HTTP %ld%s",
				 c->action, c->service, resp->status, resp->attempts > 1 ? " after retries" : "");
	if (resp->throttled)
		st->code = PROVIDER_THROTTLED;
	if (resp->retry_after_ms > 0)
		st->retry_after_s = (resp->retry_after_ms + 999) / 1000;
out:
	cloudhttp_headers_free(&hs);
	return rc;
}

int aws_call(struct aws_api *api, enum aws_service svc, struct ratelimit *bucket,
	     struct aws_query *f, struct xmltree_doc **doc, struct provider_status *st)
{
	struct cloudhttp_response resp;
	struct errbuf err;
	struct call c;
	const char *a = f->b.data && !strncmp(f->b.data, "Action=", 7) ? f->b.data + 7 : "?";
	size_t n = strcspn(a, "&");
	int rc = -1;

	*doc = NULL;
	memset(st, 0, sizeof(*st));
	memset(&c, 0, sizeof(c));
	c.api = api;
	snprintf(c.action, sizeof(c.action), "%.*s", (int)(n < sizeof(c.action) ? n : sizeof(c.action) - 1), a);
	c.service = aws_service_name(svc);
	c.region = api->region;
	c.content_type = CONTENT_TYPE;
	c.bucket = bucket;
	c.st = st;
	if (f->oom) {
		cloudcall_status(st, PROVIDER_TRANSIENT, "%s: out of memory", c.action);
		return -1;
	}
	if (send_call(&c, api->url[svc], f->b.data ? f->b.data : "", f->b.len, &resp) < 0)
		goto out;
	*doc = xmltree_parse(resp.body, resp.body_len, &err);
	if (!*doc) {
		cloudcall_status(st, PROVIDER_TRANSIENT, "%s: %s answered %ld with malformed XML: %s",
				 c.action, c.service, resp.status, err.msg);
		goto out;
	}
	rc = 0;
out:
	cloudhttp_response_free(&resp);
	return rc;
}

int aws_json_call(struct aws_api *api, const struct aws_json_target *t, const char *action,
		  struct ratelimit *bucket, const char *body, cJSON **out, struct provider_status *st)
{
	struct cloudhttp_response resp;
	struct call c;
	cJSON *doc;
	int rc = -1;

	*out = NULL;
	memset(st, 0, sizeof(*st));
	memset(&c, 0, sizeof(c));
	c.api = api;
	snprintf(c.action, sizeof(c.action), "%s", action);
	c.service = t->service;
	c.region = t->region;
	c.content_type = t->content_type;
	c.target = t->target;
	c.bucket = bucket;
	c.st = st;
	if (send_call(&c, t->url, body, strlen(body), &resp) < 0)
		goto out;
	doc = resp.body_len ? cJSON_ParseWithLength(resp.body, resp.body_len) : NULL;
	if (resp.body_len && !cJSON_IsObject(doc)) {
		cJSON_Delete(doc);
		cloudcall_status(st, PROVIDER_TRANSIENT, "%s: %s answered %ld with malformed JSON", c.action, c.service,
				 resp.status);
		goto out;
	}
	*out = doc;
	rc = 0;
out:
	cloudhttp_response_free(&resp);
	return rc;
}
