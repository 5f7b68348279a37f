/*
 * cloudjson: a JSON request's body and headers, sent through cloudhttp,
 * the status of a request that got no answer, and reading a string member
 * of an answer. Knows no cloud.
 */
#include "providers/cloudhttp/cloudjson.h"

#include <string.h>

#include "providers/cloudhttp/cloudcall.h"

int cloudjson_send(struct cloudhttp *http, const struct cloudjson_request *r, struct cloudhttp_response *resp,
		   struct provider_status *st)
{
	struct cloudhttp_headers hs = CLOUDHTTP_HEADERS_INIT;
	struct cloudhttp_request req;
	struct errbuf err;
	char *text = NULL;
	int rc = -1;

	memset(resp, 0, sizeof(*resp));
	resp->retry_after_ms = -1;
	if (r->body && !(text = cJSON_PrintUnformatted(r->body))) {
		cloudcall_status(st, PROVIDER_TRANSIENT, "out of memory");
		return -1;
	}
	if (cloudhttp_headers_add(&hs, "Accept", "application/json") < 0 ||
	    (text && cloudhttp_headers_add(&hs, "Content-Type", "application/json") < 0) ||
	    (r->if_match && cloudhttp_headers_add(&hs, "If-Match", r->if_match) < 0)) {
		cloudcall_status(st, PROVIDER_TRANSIENT, "out of memory");
		goto out;
	}
	memset(&req, 0, sizeof(req));
	req.method = r->method;
	req.url = r->url;
	req.headers = &hs;
	req.body = text;
	req.body_len = text ? strlen(text) : 0;
	req.prepare = r->prepare;
	req.classify = r->classify;
	req.ctx = r->ctx;
	req.fresh_connect = r->fresh_connect;
	if (cloudhttp_call(http, &req, resp, &err) < 0) {
		if (st->code == PROVIDER_AUTH && st->message[0]) /* the token's error, whole */
			provider_status_cloud(st, PROVIDER_AUTH, NULL, st->message, "%s not sent", r->what);
		else
			cloudcall_status(st, st->code != PROVIDER_OK ? st->code : PROVIDER_TRANSIENT, "%s: %s", r->what,
					 err.msg);
		goto out;
	}
	rc = 0;
out:
	cloudhttp_headers_free(&hs);
	if (text)
		cJSON_free(text);
	return rc;
}

const char *cloudjson_str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(v) ? v->valuestring : "";
}
