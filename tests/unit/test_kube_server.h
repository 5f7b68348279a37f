/*
 * A tiny HTTP(S) server for the src/kube tests, on libmicrohttpd at
 * 127.0.0.1 on an ephemeral port. It records every request (method, path,
 * decoded query, headers, body) and answers with what the test's handler
 * says: a whole body, or a stream of chunks sent one per write, optionally
 * held open until the client leaves or the server stops. Test-only.
 */
#ifndef LUASCALE_TEST_KUBE_SERVER_H
#define LUASCALE_TEST_KUBE_SERVER_H

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

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
	struct MHD_Daemon *d;
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

/* Per-connection request being received. */
struct ts_conn {
	struct ts_req rq;
	size_t cap;
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

static enum MHD_Result ts_access(void *cls, struct MHD_Connection *conn, const char *url,
				 const char *method, const char *version,
				 const char *upload_data, size_t *upload_data_size,
				 void **con_cls)
{
	struct ts_server *s = cls;
	struct ts_conn *c = *con_cls;
	struct MHD_Response *r;
	struct ts_resp rs;
	enum MHD_Result ret;
	size_t idx;

	(void)version;
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return MHD_NO;
		snprintf(c->rq.method, sizeof(c->rq.method), "%s", method);
		snprintf(c->rq.path, sizeof(c->rq.path), "%s", url);
		MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, ts_arg, &c->rq);
		ts_copy_header(conn, "Content-Type", c->rq.ctype, sizeof(c->rq.ctype));
		ts_copy_header(conn, "Authorization", c->rq.auth, sizeof(c->rq.auth));
		ts_copy_header(conn, "Accept", c->rq.accept, sizeof(c->rq.accept));
		ts_copy_header(conn, "User-Agent", c->rq.ua, sizeof(c->rq.ua));
		*con_cls = c;
		return MHD_YES;
	}
	if (*upload_data_size) {
		size_t n = *upload_data_size;

		if (c->rq.body_len + n + 1 > c->cap) {
			size_t ncap = (c->rq.body_len + n + 1) * 2;
			char *nb = realloc(c->rq.body, ncap);

			if (!nb)
				return MHD_NO;
			c->rq.body = nb;
			c->cap = ncap;
		}
		memcpy(c->rq.body + c->rq.body_len, upload_data, n);
		c->rq.body_len += n;
		c->rq.body[c->rq.body_len] = '\0';
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (!c->rq.body) {
		c->rq.body = calloc(1, 1);
		if (!c->rq.body)
			return MHD_NO;
	}
	memset(&rs, 0, sizeof(rs));
	rs.status = 200;
	snprintf(rs.body, sizeof(rs.body), "{}");
	pthread_mutex_lock(&s->mu);
	idx = s->n_reqs;
	if (s->n_reqs < TS_MAX_REQS) {
		s->reqs[s->n_reqs++] = c->rq; /* the body moves to the server */
	} else {
		free(c->rq.body);
	}
	c->rq.body = NULL;
	if (s->handler)
		s->handler(s->ud, idx, idx < TS_MAX_REQS ? &s->reqs[idx] : &c->rq, &rs);
	pthread_mutex_unlock(&s->mu);
	free(c);
	*con_cls = NULL;
	if (rs.n_chunks || rs.hold) {
		struct ts_stream *st = calloc(1, sizeof(*st));

		if (!st)
			return MHD_NO;
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
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "application/json");
	ret = MHD_queue_response(conn, (unsigned int)rs.status, r);
	MHD_destroy_response(r);
	return ret;
}

static void ts_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct ts_conn *c = *con_cls;

	(void)cls;
	(void)conn;
	(void)toe;
	if (c) {
		free(c->rq.body);
		free(c);
		*con_cls = NULL;
	}
}

/*
 * Starts a server on 127.0.0.1:0; with 'cert' and 'key' (PEM text) it
 * speaks TLS. Returns 0 or -1.
 */
TS_FN int ts_start(struct ts_server *s, ts_handler h, void *ud, const char *cert,
		   const char *key)
{
	struct sockaddr_in sa;
	const union MHD_DaemonInfo *info;
	unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD;

	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	s->handler = h;
	s->ud = ud;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = 0;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (cert) {
		flags |= MHD_USE_TLS;
		s->d = MHD_start_daemon(flags, 0, NULL, NULL, ts_access, s,
					MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
					MHD_OPTION_NOTIFY_COMPLETED, ts_completed, s,
					MHD_OPTION_HTTPS_MEM_CERT, cert, MHD_OPTION_HTTPS_MEM_KEY, key,
					MHD_OPTION_END);
	} else {
		s->d = MHD_start_daemon(flags, 0, NULL, NULL, ts_access, s,
					MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
					MHD_OPTION_NOTIFY_COMPLETED, ts_completed, s,
					MHD_OPTION_END);
	}
	if (!s->d)
		return -1;
	info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	if (!info || !info->port) {
		MHD_stop_daemon(s->d);
		s->d = NULL;
		return -1;
	}
	s->port = info->port;
	snprintf(s->url, sizeof(s->url), "%s://127.0.0.1:%d", cert ? "https" : "http", s->port);
	return 0;
}

/* Stops the server (held streams end) and frees what it recorded. */
TS_FN void ts_stop(struct ts_server *s)
{
	size_t i;

	pthread_mutex_lock(&s->mu);
	s->stopping = true;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	if (s->d)
		MHD_stop_daemon(s->d);
	s->d = NULL;
	for (i = 0; i < s->n_reqs; i++)
		free(s->reqs[i].body);
	s->n_reqs = 0;
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
}

/* Number of requests recorded so far. */
TS_FN size_t ts_count(struct ts_server *s)
{
	size_t n;

	pthread_mutex_lock(&s->mu);
	n = s->n_reqs;
	pthread_mutex_unlock(&s->mu);
	return n;
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
