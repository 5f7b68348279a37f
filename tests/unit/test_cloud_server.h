/*
 * A loopback HTTP(S) server for the cloud provider tests, a flavour of
 * test_http_server.h (libmicrohttpd at 127.0.0.1, an ephemeral port). It
 * records every request as it came on the wire (method, raw target with
 * its query, every header in order, body) and answers what the test's
 * handler says: a status, any headers (nothing added but what HTTP needs),
 * a body, optionally held until the test releases it or the server stops.
 * Test-only.
 */
#ifndef LUASCALE_TEST_CLOUD_SERVER_H
#define LUASCALE_TEST_CLOUD_SERVER_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "test_http_server.h"

#define CS_FN static __attribute__((unused))
#define CS_MAX_REQS 64
#define CS_MAX_HDRS 48

struct cs_req {
	char method[16];
	char target[2048];           /* raw request target: "/path?query" */
	size_t n_hdrs;
	char hdr_name[CS_MAX_HDRS][64];
	char hdr_value[CS_MAX_HDRS][512];
	char *body;                  /* NUL-terminated, owned by the server */
	size_t body_len;
};

struct cs_resp {
	int status;                  /* default 200 */
	char headers[2048];          /* "Name: value\n" lines added to the answer */
	char body[8192];
	bool hold;                   /* wait for cs_release() or cs_stop() before answering */
};

/* Called once per request with the server's lock held; index = request number. */
typedef void (*cs_handler)(void *ud, size_t index, const struct cs_req *rq, struct cs_resp *rs);

struct cs_server {
	struct th_server http;
	int port;
	char url[64];
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stopping, released;
	cs_handler handler;
	void *ud;
	struct cs_req reqs[CS_MAX_REQS];
	size_t n_reqs;
	size_t holding;              /* requests waiting to be released */
};

static enum MHD_Result cs_hdr(void *cls, enum MHD_ValueKind kind, const char *key,
			      const char *value)
{
	struct cs_req *rq = cls;

	(void)kind;
	if (rq->n_hdrs < CS_MAX_HDRS) {
		snprintf(rq->hdr_name[rq->n_hdrs], sizeof(rq->hdr_name[0]), "%s", key);
		snprintf(rq->hdr_value[rq->n_hdrs], sizeof(rq->hdr_value[0]), "%s",
			 value ? value : "");
		rq->n_hdrs++;
	}
	return MHD_YES;
}

/* Records the request with every header, asks the handler, holds the
 * answer when told, and answers with the handler's headers and body. */
static struct MHD_Response *cs_answer(struct th_server *t, struct MHD_Connection *conn,
				      const char *path, struct th_request *in,
				      unsigned int *status)
{
	struct cs_server *s = t->owner;
	struct MHD_Response *r;
	struct cs_req rq;
	struct cs_resp rs;
	const char *line;
	size_t idx;

	(void)path;
	memset(&rq, 0, sizeof(rq));
	snprintf(rq.method, sizeof(rq.method), "%s", in->method);
	snprintf(rq.target, sizeof(rq.target), "%s", in->target);
	MHD_get_connection_values(conn, MHD_HEADER_KIND, cs_hdr, &rq);
	rq.body = in->body;
	rq.body_len = in->body_len;
	memset(&rs, 0, sizeof(rs));
	rs.status = 200;
	pthread_mutex_lock(&s->mu);
	idx = s->n_reqs;
	if (s->n_reqs < CS_MAX_REQS) {
		s->reqs[s->n_reqs++] = rq; /* the body moves to the server */
		in->body = NULL;
	}
	if (s->handler)
		s->handler(s->ud, idx, idx < CS_MAX_REQS ? &s->reqs[idx] : &rq, &rs);
	pthread_cond_broadcast(&s->cv);
	if (rs.hold) {
		s->holding++;
		pthread_cond_broadcast(&s->cv);
		while (!s->stopping && !s->released)
			pthread_cond_wait(&s->cv, &s->mu);
		s->holding--;
	}
	pthread_mutex_unlock(&s->mu);
	r = MHD_create_response_from_buffer(strlen(rs.body), rs.body, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return NULL;
	for (line = rs.headers; *line;) {
		const char *nl = strchr(line, '\n'), *colon = strchr(line, ':');
		char name[128], value[1024];

		if (!nl)
			nl = line + strlen(line);
		if (colon && colon < nl) {
			const char *v = colon + 1;

			while (*v == ' ')
				v++;
			snprintf(name, sizeof(name), "%.*s", (int)(colon - line), line);
			snprintf(value, sizeof(value), "%.*s", (int)(nl - v), v);
			MHD_add_response_header(r, name, value);
		}
		line = *nl ? nl + 1 : nl;
	}
	*status = (unsigned int)rs.status;
	return r;
}

/* Starts a server on 127.0.0.1:0; with 'cert' and 'key' (PEM text) it
 * speaks TLS. Returns 0 or -1. */
CS_FN int cs_start(struct cs_server *s, cs_handler h, void *ud, const char *cert,
		   const char *key)
{
	memset(s, 0, sizeof(*s));
	s->handler = h;
	s->ud = ud;
	return th_start(&s->http, &s->mu, &s->cv, &s->stopping, cs_answer, s, cert, key, &s->port,
			s->url, sizeof(s->url));
}

/* Answers every held request (and those held from now on). */
CS_FN void cs_release(struct cs_server *s)
{
	pthread_mutex_lock(&s->mu);
	s->released = true;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

/* Blocks until 'n' requests are held (a held request has arrived). */
CS_FN void cs_wait_holding(struct cs_server *s, size_t n)
{
	pthread_mutex_lock(&s->mu);
	while (s->holding < n)
		pthread_cond_wait(&s->cv, &s->mu);
	pthread_mutex_unlock(&s->mu);
}

/* Stops the server (held requests end) and frees what it recorded. */
CS_FN void cs_stop(struct cs_server *s)
{
	size_t i;

	th_stop(&s->http);
	for (i = 0; i < s->n_reqs; i++)
		free(s->reqs[i].body);
	s->n_reqs = 0;
}

/* Number of requests recorded so far. */
CS_FN size_t cs_count(struct cs_server *s)
{
	return th_count(&s->http, &s->n_reqs);
}

/* The value of the first header 'name' of a recorded request, or NULL. */
CS_FN const char *cs_header(const struct cs_req *rq, const char *name)
{
	size_t i;

	for (i = 0; i < rq->n_hdrs; i++)
		if (strcasecmp(rq->hdr_name[i], name) == 0)
			return rq->hdr_value[i];
	return NULL;
}

/* How many headers 'name' a recorded request carried. */
CS_FN size_t cs_header_count(const struct cs_req *rq, const char *name)
{
	size_t i, n = 0;

	for (i = 0; i < rq->n_hdrs; i++)
		if (strcasecmp(rq->hdr_name[i], name) == 0)
			n++;
	return n;
}

#endif
