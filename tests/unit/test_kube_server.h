/*
 * A tiny HTTP(S) server for the src/kube tests, a flavour of
 * test_http_server.h (libmicrohttpd at 127.0.0.1, an ephemeral port). It
 * records every request (method, path, decoded query, headers, body) and
 * answers with what the test's handler says: a whole body, or a stream of
 * chunks sent one per write, optionally held open until the client leaves
 * or the server stops. Test-only.
 */
#ifndef LUASCALE_TEST_KUBE_SERVER_H
#define LUASCALE_TEST_KUBE_SERVER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_http_server.h"

#define TS_FN static __attribute__((unused))
#define TS_MAX_REQS 128
#define TS_MAX_CHUNKS 64

struct ts_req {
	char method[16];
	char path[512];
	char args[1024];   /* decoded query "k=v&k=v" in arrival order */
	char ctype[128];
	char auth[1024];
	char accept[128];
	char ua[128];
	char *body;        /* NUL-terminated, owned by the server */
	size_t body_len;
};

struct ts_resp {
	int status;                      /* default 200 */
	char body[8192];                 /* a whole body (when n_chunks == 0) */
	const char *chunks[TS_MAX_CHUNKS];/* a stream: each sent as its own chunk */
	size_t n_chunks;
	bool hold;                       /* after the chunks, keep the stream open */
};

/* Called once per request with the server's lock held; index = request number. */
typedef void (*ts_handler)(void *ud, size_t index, const struct ts_req *rq,
			   struct ts_resp *rs);

struct ts_server {
	struct th_server http;
	int port;
	char url[64];
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stopping;
	ts_handler handler;
	void *ud;
	struct ts_req reqs[TS_MAX_REQS];
	size_t n_reqs;
	atomic_int open_streams;
};

struct ts_stream {
	struct ts_server *s;
	struct ts_resp rs;
	size_t next;
};

static enum MHD_Result ts_arg(void *cls, enum MHD_ValueKind kind, const char *key,
			      const char *value)
{
	struct ts_req *rq = cls;
	size_t n = strlen(rq->args);

	(void)kind;
	snprintf(rq->args + n, sizeof(rq->args) - n, "%s%s=%s", n ? "&" : "", key,
		 value ? value : "");
	return MHD_YES;
}

static void ts_copy_header(struct MHD_Connection *c, const char *name, char *out, size_t len)
{
	const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);

	snprintf(out, len, "%s", v ? v : "");
}

static ssize_t ts_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct ts_stream *st = cls;
	struct ts_server *s = st->s;

	(void)pos;
	if (st->next < st->rs.n_chunks) {
		const char *c = st->rs.chunks[st->next++];
		size_t n = strlen(c);

		if (n > max)
			n = max;
		memcpy(buf, c, n);
		return (ssize_t)n;
	}
	if (!st->rs.hold)
		return MHD_CONTENT_READER_END_OF_STREAM;
	/* held open: wait until the server stops (the client may leave first) */
	pthread_mutex_lock(&s->mu);
	while (!s->stopping)
		pthread_cond_wait(&s->cv, &s->mu);
	pthread_mutex_unlock(&s->mu);
	return MHD_CONTENT_READER_END_WITH_ERROR;
}

static void ts_stream_free(void *cls)
{
	struct ts_stream *st = cls;

	atomic_fetch_sub(&st->s->open_streams, 1);
	free(st);
}

/* Records the request, asks the handler, and answers with a JSON body or
 * a stream of chunks. */
static struct MHD_Response *ts_answer(struct th_server *t, struct MHD_Connection *conn,
				      const char *path, struct th_request *in,
				      unsigned int *status)
{
	struct ts_server *s = t->owner;
	struct MHD_Response *r;
	struct ts_req rq;
	struct ts_resp rs;
	size_t idx;

	memset(&rq, 0, sizeof(rq));
	snprintf(rq.method, sizeof(rq.method), "%s", in->method);
	snprintf(rq.path, sizeof(rq.path), "%s", path);
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, ts_arg, &rq);
	ts_copy_header(conn, "Content-Type", rq.ctype, sizeof(rq.ctype));
	ts_copy_header(conn, "Authorization", rq.auth, sizeof(rq.auth));
	ts_copy_header(conn, "Accept", rq.accept, sizeof(rq.accept));
	ts_copy_header(conn, "User-Agent", rq.ua, sizeof(rq.ua));
	memset(&rs, 0, sizeof(rs));
	rs.status = 200;
	snprintf(rs.body, sizeof(rs.body), "{}");
	pthread_mutex_lock(&s->mu);
	idx = s->n_reqs;
	if (s->n_reqs < TS_MAX_REQS) {
		rq.body = in->body; /* the body moves to the server */
		rq.body_len = in->body_len;
		in->body = NULL;
		s->reqs[s->n_reqs++] = rq;
	} else {
		rq.body_len = in->body_len;
	}
	if (s->handler)
		s->handler(s->ud, idx, idx < TS_MAX_REQS ? &s->reqs[idx] : &rq, &rs);
	pthread_mutex_unlock(&s->mu);
	if (rs.n_chunks || rs.hold) {
		struct ts_stream *st = calloc(1, sizeof(*st));

		if (!st)
			return NULL;
		st->s = s;
		st->rs = rs;
		atomic_fetch_add(&s->open_streams, 1);
		r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, ts_reader, st,
						      ts_stream_free);
	} else {
		r = MHD_create_response_from_buffer(strlen(rs.body), rs.body,
						    MHD_RESPMEM_MUST_COPY);
	}
	if (!r)
		return NULL;
	MHD_add_response_header(r, "Content-Type", "application/json");
	*status = (unsigned int)rs.status;
	return r;
}

/*
 * Starts a server on 127.0.0.1:0; with 'cert' and 'key' (PEM text) it
 * speaks TLS. Returns 0 or -1.
 */
TS_FN int ts_start(struct ts_server *s, ts_handler h, void *ud, const char *cert,
		   const char *key)
{
	memset(s, 0, sizeof(*s));
	s->handler = h;
	s->ud = ud;
	return th_start(&s->http, &s->mu, &s->cv, &s->stopping, ts_answer, s, cert, key, &s->port,
			s->url, sizeof(s->url));
}

/* Stops the server (held streams end) and frees what it recorded. */
TS_FN void ts_stop(struct ts_server *s)
{
	size_t i;

	th_stop(&s->http);
	for (i = 0; i < s->n_reqs; i++)
		free(s->reqs[i].body);
	s->n_reqs = 0;
}

/* Number of requests recorded so far. */
TS_FN size_t ts_count(struct ts_server *s)
{
	return th_count(&s->http, &s->n_reqs);
}

/* Sets a Kubernetes Status error answer. */
TS_FN void ts_status(struct ts_resp *rs, int code, const char *reason, const char *message)
{
	rs->status = code;
	snprintf(rs->body, sizeof(rs->body),
		 "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
		 "\"message\":\"%s\",\"reason\":\"%s\",\"code\":%d}",
		 message, reason, code);
}

#endif
