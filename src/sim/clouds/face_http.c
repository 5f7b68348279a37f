/*
 * sim/face_http: the HTTP daemon, private files and small parsers the
 * simulator's cloud faces share (see face_http.h). It knows no cloud.
 */
#include "sim/clouds/face_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "buf.h"
#include "runtime/backoff.h"
#include "runtime/clock.h"

struct face_http {
	struct face_http_opts o;
	face_http_fn fn;
	void *ud;
	struct MHD_Daemon *daemon;
	int port;
};

struct conn_state {
	struct buf body;
	bool too_big;
};

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct face_http *h = cls;
	struct conn_state *cs = *con_cls;
	const char *body;
	bool bad;

	(void)version;
	if (!cs) {
		cs = calloc(1, sizeof(*cs));
		if (!cs)
			return MHD_NO;
		*con_cls = cs;
		return MHD_YES;
	}
	if (*upload_size) {
		if (cs->body.len + *upload_size > FACE_HTTP_MAX_BODY)
			cs->too_big = true;
		else
			buf_append(&cs->body, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	body = cs->body.data ? cs->body.data : "";
	bad = cs->too_big || cs->body.oom || (!h->o.binary && strlen(body) != cs->body.len);
	return h->fn(h->ud, conn, url, method, body, cs->body.len, bad);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct conn_state *cs = *con_cls;

	(void)cls;
	(void)conn;
	(void)toe;
	if (!cs)
		return;
	buf_free(&cs->body);
	free(cs);
	*con_cls = NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct face_http *h = cls;
	char msg[400];
	size_t n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		msg[--n] = '\0';
	log_at(h->o.log, LOG_DEBUG, (int64_t)time(NULL), "%s: http: %s", h->o.name, msg);
}

struct face_http *face_http_start(const struct face_http_opts *o, face_http_fn fn, void *ud,
				  struct errbuf *err)
{
	struct face_http *h = calloc(1, sizeof(*h));
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD |
			     MHD_USE_ITC | MHD_USE_ERROR_LOG;
	int fd = -1, one = 1;
	bool tls = o->tls_key_pem && o->tls_cert_pem;
	unsigned int timeout = o->timeout_s ? o->timeout_s : 300;

	if (!h) {
		errbuf_set(err, "out of memory");
		return NULL;
	}
	h->o = *o;
	if (!h->o.name)
		h->o.name = "sim";
	h->fn = fn;
	h->ud = ud;
	if (o->port < 0 || o->port > 65535) {
		errbuf_set(err, "%s: port %d out of range", h->o.name, o->port);
		goto fail;
	}
	if (tls && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		errbuf_set(err, "%s: this libmicrohttpd has no TLS", h->o.name);
		goto fail;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		errbuf_set(err, "%s: socket: %s", h->o.name, strerror(errno));
		goto fail;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)o->port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 128) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &alen) < 0) {
		errbuf_set(err, "%s: 127.0.0.1:%d: %s", h->o.name, o->port, strerror(errno));
		goto fail;
	}
	h->port = ntohs(a.sin_port);
	if (tls)
		h->daemon = MHD_start_daemon(flags | MHD_USE_TLS, 0, NULL, NULL, on_request, h,
					     MHD_OPTION_LISTEN_SOCKET, fd,
					     MHD_OPTION_HTTPS_MEM_KEY, o->tls_key_pem,
					     MHD_OPTION_HTTPS_MEM_CERT, o->tls_cert_pem,
					     MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
					     MHD_OPTION_CONNECTION_TIMEOUT, timeout,
					     MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h, MHD_OPTION_END);
	else
		h->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, h,
					     MHD_OPTION_LISTEN_SOCKET, fd,
					     MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
					     MHD_OPTION_CONNECTION_TIMEOUT, timeout,
					     MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h, MHD_OPTION_END);
	if (!h->daemon) {
		errbuf_set(err, "%s: cannot start the HTTP%s daemon", h->o.name, tls ? "S" : "");
		goto fail;
	}
	return h;
fail:
	if (fd >= 0)
		close(fd);
	free(h);
	return NULL;
}

struct MHD_Response *face_http_response(struct buf *body)
{
	size_t len = body->len;
	char *data = buf_take(body);
	struct MHD_Response *resp;

	if (!data) {
		data = strdup("");
		len = 0;
		if (!data)
			return NULL;
	}
	resp = MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);
	if (!resp)
		free(data);
	return resp;
}

enum MHD_Result face_http_queue(struct MHD_Connection *conn, int code, struct MHD_Response *resp)
{
	enum MHD_Result rc = MHD_queue_response(conn, (unsigned int)code, resp);

	MHD_destroy_response(resp);
	return rc;
}

int face_http_port(const struct face_http *h)
{
	return h->port;
}

void face_http_stop(struct face_http *h)
{
	if (!h)
		return;
	if (h->daemon)
		MHD_stop_daemon(h->daemon);
	free(h);
}

void face_http_sleep_ns(int64_t ns)
{
	struct timespec ts = {(time_t)(ns / CLOCK_NS_PER_S), (long)(ns % CLOCK_NS_PER_S)};

	if (ns <= 0)
		return;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

FILE *face_open_private(const char *path, struct errbuf *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	FILE *out;

	if (fd < 0) {
		errbuf_set(err, "%s: %s", path, strerror(errno));
		return NULL;
	}
	fchmod(fd, 0600);
	out = fdopen(fd, "w");
	if (!out) {
		errbuf_set(err, "%s: %s", path, strerror(errno));
		close(fd);
	}
	return out;
}

int face_close_file(FILE *out, const char *path, struct errbuf *err)
{
	int rc = 0;

	if (ferror(out))
		rc = errbuf_set(err, "%s: write failed", path);
	if (fclose(out) != 0 && rc == 0)
		rc = errbuf_set(err, "%s: %s", path, strerror(errno));
	return rc;
}

void face_env_line(FILE *out, const char *key, const char *value)
{
	fprintf(out, "%s='", key);
	for (; *value; value++) {
		if (*value == '\'')
			fputs("'\\''", out);
		else
			fputc(*value, out);
	}
	fputs("'\n", out);
}

const char *face_form_value(const char *body, const char *key, char *out, size_t size)
{
	size_t klen = strlen(key);
	const char *p = body;

	while (p && *p) {
		const char *end = strchr(p, '&');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len > klen && strncmp(p, key, klen) == 0 && p[klen] == '=') {
			size_t i, n = 0;

			for (i = klen + 1; i < len && n + 1 < size; i++) {
				if (p[i] == '+') {
					out[n++] = ' ';
				} else if (p[i] == '%') {
					char hex[3];
					char *e;
					long v;

					if (i + 2 >= len)
						return NULL;
					hex[0] = p[i + 1];
					hex[1] = p[i + 2];
					hex[2] = '\0';
					v = strtol(hex, &e, 16);
					if (*e || v == 0 || hex[0] == '-' || hex[0] == '+' || hex[0] == ' ')
						return NULL;
					out[n++] = (char)v;
					i += 2;
				} else {
					out[n++] = p[i];
				}
			}
			if (i < len)
				return NULL; /* too long */
			out[n] = '\0';
			return out;
		}
		p = end ? end + 1 : NULL;
	}
	return NULL;
}

int face_parse_int(const char *s, long long lo, long long hi, long long *out)
{
	long long v = 0;
	size_t i;

	if (!s || !*s || strlen(s) > 18)
		return -1;
	for (i = 0; s[i]; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	if (v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* ---- tokens ---- */

void face_tokens_init(struct face_tokens *t, uint64_t seed)
{
	struct timespec ts;

	memset(t, 0, sizeof(*t));
	clock_gettime(CLOCK_REALTIME, &ts);
	t->rng = seed ^ ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec) ^
		 0x9e3779b97f4a7c15ULL;
	pthread_mutex_init(&t->mu, NULL);
}

void face_tokens_destroy(struct face_tokens *t)
{
	OPENSSL_cleanse(t->t, sizeof(t->t));
	pthread_mutex_destroy(&t->mu);
}

uint64_t face_tokens_rand(struct face_tokens *t)
{
	uint64_t r;

	pthread_mutex_lock(&t->mu);
	r = backoff_rand(&t->rng);
	pthread_mutex_unlock(&t->mu);
	return r;
}

void face_tokens_issue(struct face_tokens *t, const char *prefix, int64_t ttl_s, char *out,
		       size_t size)
{
	struct face_token *k;
	uint64_t a, b;

	pthread_mutex_lock(&t->mu);
	a = backoff_rand(&t->rng);
	b = backoff_rand(&t->rng);
	k = &t->t[t->next++ % FACE_TOKENS_MAX];
	snprintf(k->value, sizeof(k->value), "%.60s%016llx%016llx", prefix, (unsigned long long)a,
		 (unsigned long long)b);
	k->expires_wall = (int64_t)time(NULL) + ttl_s;
	snprintf(out, size, "%s", k->value);
	pthread_mutex_unlock(&t->mu);
}

int face_tokens_check(struct face_tokens *t, const char *value)
{
	size_t i;
	int rc = -1;

	if (!value || !*value)
		return -1;
	pthread_mutex_lock(&t->mu);
	for (i = 0; i < FACE_TOKENS_MAX && rc < 0; i++)
		if (t->t[i].value[0] && strcmp(t->t[i].value, value) == 0)
			rc = t->t[i].expires_wall > (int64_t)time(NULL) ? 0 : 1;
	pthread_mutex_unlock(&t->mu);
	return rc;
}
