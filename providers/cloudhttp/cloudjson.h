/*
 * cloudjson: one JSON request of a cloud provider through cloudhttp, as
 * the JSON clouds (GCE's compute API, Azure Resource Manager) send it —
 * the body printed, Accept and Content-Type set, If-Match when asked, and
 * a call that got no answer put as a provider status; a string member of
 * an answer. Reading the answer (its error format, its classes) stays the
 * provider's.
 */
#ifndef LUASCALE_CLOUDJSON_H
#define LUASCALE_CLOUDJSON_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "providers/cloudhttp/cloudhttp.h"
#include "providers/provider.h"

struct cloudjson_request {
	const char *what;         /* the call as a status names it: "GET instanceGroupManagers/web" */
	const char *method;
	const char *url;          /* absolute */
	const cJSON *body;        /* NULL: none */
	const char *if_match;     /* NULL: no If-Match */
	bool fresh_connect;       /* as cloudhttp_request's */
	/* as cloudhttp_request's; prepare may set the status's code (and, for
	 * PROVIDER_AUTH, its message: the token endpoint's error) */
	int (*prepare)(void *ctx, const struct cloudhttp_request *req, struct cloudhttp_headers *extra,
		       struct errbuf *err);
	enum cloudhttp_verdict (*classify)(void *ctx, const struct cloudhttp_response *r);
	void *ctx;
};

/*
 * Sends 'r' through 'http' with cloudhttp_call()'s retries. 0 when the
 * cloud answered, whatever the status: the answer is in *resp. -1 with
 * 'st' when it did not: out of memory (PROVIDER_TRANSIENT), the token
 * endpoint's error whole ("<what> not sent") when prepare set
 * PROVIDER_AUTH with a message, else "<what>: <cloudhttp's reason>" under
 * the code prepare set (PROVIDER_TRANSIENT when none); *resp then has
 * status 0. *resp is initialised either way: cloudhttp_response_free it.
 */
int cloudjson_send(struct cloudhttp *http, const struct cloudjson_request *r, struct cloudhttp_response *resp,
		   struct provider_status *st);

/* The string member 'k' of 'o', borrowed; "" when absent or not a string. */
const char *cloudjson_str(const cJSON *o, const char *k);

#endif
