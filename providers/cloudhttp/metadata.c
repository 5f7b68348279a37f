/*
 * metadata: requests to a link-local metadata server — the base URL, the
 * client's header, per-attempt timeouts and retries — and its bounded
 * plain-text answers. The paths, the answers' meaning and the messages are
 * the provider's. Never logs: answers may hold tokens.
 */
#include "providers/cloudhttp/metadata.h"

#include <assert.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "providers/cloudhttp/oauth.h"

int metadata_init(struct metadata_client *m, struct cloudhttp *http, const char *base,
		  const char *what, struct errbuf *err)
{
	size_t n = strlen(base);

	memset(m, 0, sizeof(*m));
	m->http = http;
	while (n > 0 && base[n - 1] == '/')
		n--;
	if (n >= sizeof(m->base))
		return errbuf_set(err, "%s is too long", what);
	memcpy(m->base, base, n);
	m->base[n] = '\0';
	return 0;
}

int metadata_send(const struct metadata_client *m, const char *method, const char *path,
		  const char *name, const char *value, struct cloudhttp_response *resp,
		  struct errbuf *err)
{
	struct cloudhttp_headers h = CLOUDHTTP_HEADERS_INIT;
	struct cloudhttp_request rq;
	char url[2048];
	int i, rc = -2;

	if ((size_t)snprintf(url, sizeof(url), "%s%s", m->base, path) >= sizeof(url) ||
	    (m->header && cloudhttp_headers_add(&h, m->header, m->value) < 0) ||
	    (name && cloudhttp_headers_add(&h, name, value) < 0)) {
		errbuf_set(err, "out of memory");
		goto out;
	}
	memset(&rq, 0, sizeof(rq));
	rq.method = method;
	rq.url = url;
	rq.headers = &h;
	rq.timeout_ms = m->timeout_ms;
	rq.classify = m->classify;
	assert(m->classify || m->attempts > 0);
	if (m->classify) {
		rc = cloudhttp_call(m->http, &rq, resp, err);
		goto out;
	}
	for (i = 0; i < m->attempts; i++) {
		oauth_wipe_response(resp);
		rc = cloudhttp_send(m->http, &rq, resp, err);
		if (rc == 0 && resp->status < 500)
			break;
	}
out:
	cloudhttp_headers_free(&h);
	return rc;
}

int metadata_text(const struct cloudhttp_response *r, const char *allowed, char *out,
		  size_t len)
{
	size_t n = strcspn(r->body, "\r\n"), i;

	while (n > 0 && isspace((unsigned char)r->body[n - 1]))
		n--;
	if (n == 0 || n >= len)
		return -1;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)r->body[i]) && !strchr(allowed, r->body[i]))
			return -2;
	memcpy(out, r->body, n);
	out[n] = '\0';
	return 0;
}
