/*
 * awsapi: AWS Query/EC2 calls over cloudhttp with SigV4 (see awsapi.h).
 * The signature is made in cloudhttp's per-attempt hook, so each retry
 * carries a fresh date and the token of the bucket it waited for.
 */
#include "providers/aws/awsapi.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "providers/aws/awserr.h"
#include "wire/sigv4.h"
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
	enum aws_service svc;
	struct ratelimit *bucket;
	struct cloudhttp_url url;
	bool throttled_once;
	bool auth_retry;            /* the credentials were refreshed for a retry */
	struct provider_status *st; /* set by prepare when it gives up */
};

int aws_sign_post(const struct aws_api *api, struct ratelimit *bucket, const struct cloudhttp_url *url,
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

	return aws_sign_post(c->api, c->bucket, &c->url, c->api->region, aws_service_name(c->svc),
			     CONTENT_TYPE, NULL, req, extra, c->st, err);
}

/* The error code of an answer (NULL when it is not an AWS error). */
static const char *answer_code(const struct cloudhttp_response *r, char *code, size_t len)
{
	struct xmltree_doc *d;
	struct errbuf e;

	code[0] = '\0';
	if (!r->body || !r->body_len)
		return NULL;
	d = xmltree_parse(r->body, r->body_len, &e);
	if (!d)
		return NULL;
	if (aws_xml_error(d, code, len, NULL, 0) < 0)
		code[0] = '\0';
	xmltree_free(d);
	return code[0] ? code : NULL;
}

static enum cloudhttp_verdict classify(void *ctx, const struct cloudhttp_response *r)
{
	struct call *c = ctx;
	char code[128];
	const char *k;

	if (r->status >= 200 && r->status < 300) {
		if (c->bucket)
			ratelimit_succeeded(c->bucket);
		return CLOUDHTTP_DONE;
	}
	k = answer_code(r, code, sizeof(code));
	if (r->status == 429 || aws_error_is_throttle(k)) {
		if (c->bucket)
			ratelimit_throttled(c->bucket);
		c->throttled_once = true;
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

static void set_st(struct provider_status *st, enum provider_error code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_st(struct provider_status *st, enum provider_error code, const char *fmt, ...)
{
	va_list ap;

	st->code = code;
	va_start(ap, fmt);
	vsnprintf(st->message, sizeof(st->message), fmt, ap);
	va_end(ap);
}

int aws_call(struct aws_api *api, enum aws_service svc, struct ratelimit *bucket,
	     struct aws_query *f, struct xmltree_doc **doc, struct provider_status *st)
{
	struct cloudhttp_headers hs = CLOUDHTTP_HEADERS_INIT;
	struct cloudhttp_response resp;
	struct cloudhttp_request req;
	struct errbuf err;
	struct call c;
	char code[128], msg[PROVIDER_MESSAGE_MAX], rid[128];
	struct xmltree_doc *d;
	int rc = -1;

	*doc = NULL;
	memset(st, 0, sizeof(*st));
	memset(&resp, 0, sizeof(resp));
	memset(&c, 0, sizeof(c));
	c.api = api;
	c.svc = svc;
	{
		const char *a = f->b.data && !strncmp(f->b.data, "Action=", 7) ? f->b.data + 7 : "?";
		size_t n = strcspn(a, "&");

		snprintf(c.action, sizeof(c.action), "%.*s", (int)(n < sizeof(c.action) ? n : sizeof(c.action) - 1), a);
	}
	c.bucket = bucket;
	c.st = st;
	if (f->oom) {
		set_st(st, PROVIDER_TRANSIENT, "%s: out of memory", c.action);
		return -1;
	}
	if (cloudhttp_url_parse(api->url[svc], &c.url, &err) < 0) {
		set_st(st, PROVIDER_INVALID, "%s: %s endpoint: %s", c.action, aws_service_name(svc), err.msg);
		return -1;
	}
	if (cloudhttp_headers_add(&hs, "Content-Type", CONTENT_TYPE) < 0) {
		set_st(st, PROVIDER_TRANSIENT, "%s: out of memory", c.action);
		return -1;
	}
	memset(&req, 0, sizeof(req));
	req.method = "POST";
	req.url = api->url[svc];
	req.headers = &hs;
	req.body = f->b.data ? f->b.data : "";
	req.body_len = f->b.len;
	req.prepare = prepare;
	req.classify = classify;
	req.ctx = &c;
	if (cloudhttp_call(api->http, &req, &resp, &err) < 0) {
		/* prepare set the class when it gave up; else no answer */
		if (st->code == PROVIDER_AUTH && st->message[0]) /* the credentials' error, whole */
			provider_status_cloud(st, PROVIDER_AUTH, NULL, st->message, "%s not sent", c.action);
		else
			set_st(st, st->code != PROVIDER_OK ? st->code : PROVIDER_TRANSIENT, "%s: %s",
			       c.action, err.msg);
		goto out;
	}
	if (resp.status >= 200 && resp.status < 300) {
		d = xmltree_parse(resp.body, resp.body_len, &err);
		if (!d) {
			set_st(st, PROVIDER_TRANSIENT, "%s: %s answered %ld with malformed XML: %s",
			       c.action, aws_service_name(svc), resp.status, err.msg);
			goto out;
		}
		*doc = d;
		rc = 0;
		goto out;
	}
	d = resp.body_len ? xmltree_parse(resp.body, resp.body_len, &err) : NULL;
	code[0] = msg[0] = rid[0] = '\0';
	if (d && aws_xml_error(d, code, sizeof(code), msg, sizeof(msg)) == 0)
		aws_xml_request_id(d, rid, sizeof(rid));
	xmltree_free(d);
	if (code[0])
		/* the code first: "AuthFailure: ... (likely cause: ...); DescribeInstances (request R)" */
		provider_status_cloud(st, aws_error_class_msg(code, resp.status, msg), code, msg,
				      "%s%s%s%s", c.action, rid[0] ? " (request " : "", rid,
				      rid[0] ? ")" : "");
	else
		set_st(st, aws_error_class(NULL, resp.status), "%s: %s answered HTTP %ld%s",
		       c.action, aws_service_name(svc), resp.status,
		       resp.attempts > 1 ? " after retries" : "");
	if (resp.throttled)
		st->code = PROVIDER_THROTTLED;
	if (resp.retry_after_ms > 0)
		st->retry_after_s = (resp.retry_after_ms + 999) / 1000;
out:
	cloudhttp_response_free(&resp);
	cloudhttp_headers_free(&hs);
	return rc;
}
