/*
 * A loopback HTTP(S) server for the cloud provider tests, on libmicrohttpd
 * at 127.0.0.1 on an ephemeral port. It records every request as it came
 * on the wire (method, raw target with its query, every header in order,
 * body) and answers what the test's handler says: a status, any headers
 * (nothing added but what HTTP needs), a body, optionally held until the
 * test releases it or the server stops. Test-only.
 */
#ifndef LUASCALE_TEST_CLOUD_SERVER_H
#define LUASCALE_TEST_CLOUD_SERVER_H

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

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
	struct MHD_Daemon *d;
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

struct cs_conn {
	struct cs_req rq;
	size_t cap;
	bool headers_done;
};

static void *cs_uri_log(void *cls, const char *uri, struct MHD_Connection *conn)
{
	struct cs_conn *c = calloc(1, sizeof(*c));

	(void)cls;
	(void)conn;
	if (c)
		snprintf(c->rq.target, sizeof(c->rq.target), "%s", uri);
	return c;
}

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

static enum MHD_Result cs_access(void *cls, struct MHD_Connection *conn, const char *url,
				 const char *method, const char *version,
				 const char *upload_data, size_t *upload_data_size,
				 void **con_cls)
{
	struct cs_server *s = cls;
	struct cs_conn *c = *con_cls;
	struct MHD_Response *r;
	struct cs_resp rs;
	enum MHD_Result ret;
	const char *line;
	size_t idx;

	(void)url;
	(void)version;
	if (!c)
		return MHD_NO;
	if (!c->headers_done) {
		c->headers_done = true;
		snprintf(c->rq.method, sizeof(c->rq.method), "%s", method);
		MHD_get_connection_values(conn, MHD_HEADER_KIND, cs_hdr, &c->rq);
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
	if (!c->rq.body && !(c->rq.body = calloc(1, 1)))
		return MHD_NO;
	memset(&rs, 0, sizeof(rs));
	rs.status = 200;
	pthread_mutex_lock(&s->mu);
	idx = s->n_reqs;
	if (s->n_reqs < CS_MAX_REQS) {
		s->reqs[s->n_reqs++] = c->rq; /* the body moves to the server */
		c->rq.body = NULL;
	}
	if (s->handler)
		s->handler(s->ud, idx, idx < CS_MAX_REQS ? &s->reqs[idx] : &c->rq, &rs);
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
		return MHD_NO;
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
	ret = MHD_queue_response(conn, (unsigned int)rs.status, r);
	MHD_destroy_response(r);
	return ret;
}

static void cs_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct cs_conn *c = *con_cls;

	(void)cls;
	(void)conn;
	(void)toe;
	if (c) {
		free(c->rq.body);
		free(c);
		*con_cls = NULL;
	}
}

/* Starts a server on 127.0.0.1:0; with 'cert' and 'key' (PEM text) it
 * speaks TLS. Returns 0 or -1. */
CS_FN int cs_start(struct cs_server *s, cs_handler h, void *ud, const char *cert,
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
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (cert) {
		flags |= MHD_USE_TLS;
		s->d = MHD_start_daemon(flags, 0, NULL, NULL, cs_access, s,
					MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
					MHD_OPTION_URI_LOG_CALLBACK, cs_uri_log, s,
					MHD_OPTION_NOTIFY_COMPLETED, cs_completed, s,
					MHD_OPTION_HTTPS_MEM_CERT, cert, MHD_OPTION_HTTPS_MEM_KEY, key,
					MHD_OPTION_END);
	} else {
		s->d = MHD_start_daemon(flags, 0, NULL, NULL, cs_access, s,
					MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
					MHD_OPTION_URI_LOG_CALLBACK, cs_uri_log, s,
					MHD_OPTION_NOTIFY_COMPLETED, cs_completed, s,
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
CS_FN size_t cs_count(struct cs_server *s)
{
	size_t n;

	pthread_mutex_lock(&s->mu);
	n = s->n_reqs;
	pthread_mutex_unlock(&s->mu);
	return n;
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
