/*
 * The base of the unit tests' fake HTTP(S) servers: a libmicrohttpd daemon
 * at 127.0.0.1 on an ephemeral port (TLS when given a certificate), a
 * thread per connection, each request assembled (method, raw target, body)
 * and handed whole to its flavour, which records it, asks the test and
 * answers. The flavours — test_cloud_server.h (the clouds: every header,
 * answers held until released) and test_kube_server.h (the API server:
 * streams of chunks) — keep their own lock, condition, stop flag and
 * records, which tests reach by name; the base works on those. Test-only.
 */
#ifndef LUASCALE_TEST_HTTP_SERVER_H
#define LUASCALE_TEST_HTTP_SERVER_H

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define TH_FN static __attribute__((unused))

/* A request as it came. */
struct th_request {
	char method[16];
	char target[2048];      /* the raw request target: "/path?query" */
	char *body;             /* NUL-terminated ("" when empty) once complete;
				 * the flavour takes it by setting it NULL */
	size_t body_len, cap;
};

struct th_server;

/*
 * Called once per request, when all of it has come, on the connection's
 * thread with no lock held: records 'rq' ('path' is its decoded path;
 * headers and query are on 'conn'), asks the test, and returns the answer
 * with its status in *status, or NULL to drop the connection.
 */
typedef struct MHD_Response *(*th_answer_fn)(struct th_server *t, struct MHD_Connection *conn,
					     const char *path, struct th_request *rq,
					     unsigned int *status);

struct th_server {
	struct MHD_Daemon *d;
	pthread_mutex_t *mu;    /* the flavour's lock, condition and stop flag */
	pthread_cond_t *cv;
	bool *stopping;
	th_answer_fn answer;
	void *owner;            /* the flavour's server */
};

struct th_conn {
	struct th_request rq;
	bool headers_done;
};

static void *th_uri_log(void *cls, const char *uri, struct MHD_Connection *conn)
{
	struct th_conn *c = calloc(1, sizeof(*c));

	(void)cls;
	(void)conn;
	if (c)
		snprintf(c->rq.target, sizeof(c->rq.target), "%s", uri);
	return c;
}

static enum MHD_Result th_access(void *cls, struct MHD_Connection *conn, const char *url,
				 const char *method, const char *version,
				 const char *upload_data, size_t *upload_data_size,
				 void **con_cls)
{
	struct th_server *t = cls;
	struct th_conn *c = *con_cls;
	struct MHD_Response *r;
	unsigned int status = 200;
	enum MHD_Result ret;

	(void)version;
	if (!c)
		return MHD_NO;
	if (!c->headers_done) {
		c->headers_done = true;
		snprintf(c->rq.method, sizeof(c->rq.method), "%s", method);
		return MHD_YES;
	}
	if (*upload_data_size) {
		size_t n = *upload_data_size;

		if (c->rq.body_len + n + 1 > c->rq.cap) {
			size_t ncap = (c->rq.body_len + n + 1) * 2;
			char *nb = realloc(c->rq.body, ncap);

			if (!nb)
				return MHD_NO;
			c->rq.body = nb;
			c->rq.cap = ncap;
		}
		memcpy(c->rq.body + c->rq.body_len, upload_data, n);
		c->rq.body_len += n;
		c->rq.body[c->rq.body_len] = '\0';
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (!c->rq.body && !(c->rq.body = calloc(1, 1)))
		return MHD_NO;
	r = t->answer(t, conn, url, &c->rq, &status);
	if (!r)
		return MHD_NO;
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static void th_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct th_conn *c = *con_cls;

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
 * Initialises the flavour's lock and condition and starts a server on
 * 127.0.0.1:0 answering through 'answer'; with 'cert' and 'key' (PEM
 * text) it speaks TLS. Fills *port and 'url' ("http(s)://127.0.0.1:PORT").
 * Returns 0 or -1.
 */
TH_FN int th_start(struct th_server *t, pthread_mutex_t *mu, pthread_cond_t *cv, bool *stopping,
		   th_answer_fn answer, void *owner, const char *cert, const char *key,
		   int *port, char *url, size_t url_len)
{
	struct sockaddr_in sa;
	const union MHD_DaemonInfo *info;
	unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD;
	struct MHD_OptionItem tls[] = {
		{MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)(uintptr_t)cert},
		{MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)(uintptr_t)key},
		{MHD_OPTION_END, 0, NULL},
	};

	memset(t, 0, sizeof(*t));
	t->mu = mu;
	t->cv = cv;
	t->stopping = stopping;
	t->answer = answer;
	t->owner = owner;
	pthread_mutex_init(mu, NULL);
	pthread_cond_init(cv, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (cert)
		flags |= MHD_USE_TLS;
	t->d = MHD_start_daemon(flags, 0, NULL, NULL, th_access, t,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				MHD_OPTION_URI_LOG_CALLBACK, th_uri_log, t,
				MHD_OPTION_NOTIFY_COMPLETED, th_completed, t,
				MHD_OPTION_ARRAY, cert ? tls : &tls[2],
				MHD_OPTION_END);
	if (!t->d)
		return -1;
	info = MHD_get_daemon_info(t->d, MHD_DAEMON_INFO_BIND_PORT);
	if (!info || !info->port) {
		MHD_stop_daemon(t->d);
		t->d = NULL;
		return -1;
	}
	*port = info->port;
	snprintf(url, url_len, "%s://127.0.0.1:%d", cert ? "https" : "http", *port);
	return 0;
}

/* Sets the stop flag (held answers end), stops the server, and destroys
 * the lock and condition: the flavour frees its records afterwards. */
TH_FN void th_stop(struct th_server *t)
{
	pthread_mutex_lock(t->mu);
	*t->stopping = true;
	pthread_cond_broadcast(t->cv);
	pthread_mutex_unlock(t->mu);
	if (t->d)
		MHD_stop_daemon(t->d);
	t->d = NULL;
	pthread_cond_destroy(t->cv);
	pthread_mutex_destroy(t->mu);
}

/* Reads a count the flavour keeps under its lock. */
TH_FN size_t th_count(struct th_server *t, const size_t *n)
{
	size_t v;

	pthread_mutex_lock(t->mu);
	v = *n;
	pthread_mutex_unlock(t->mu);
	return v;
}

#endif
