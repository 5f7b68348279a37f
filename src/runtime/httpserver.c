/*
 * httpserver: listen address parsing, the socket, and the libmicrohttpd
 * daemon answering GET/HEAD on the route table (one polling thread, a
 * bounded number of connections, a short idle timeout).
 */
#include "runtime/httpserver.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "buf.h"

#define MAX_ROUTES 8

struct httpserver {
	struct MHD_Daemon *d;
	int port;
	struct httpserver_route routes[MAX_ROUTES];
	size_t n;
};

int httpserver_parse_listen(const char *text, char *host, size_t host_len, int *port,
			    struct errbuf *err)
{
	const char *colon, *h = text, *p;
	size_t hn;
	char *end;
	long v;

	if (!text || !*text)
		return errbuf_set(err, "listen address \"\": want HOST:PORT or :PORT");
	if (text[0] == '[') {
		const char *close = strchr(text, ']');

		if (!close || close[1] != ':')
			return errbuf_set(err, "listen address \"%s\": want [IPV6]:PORT", text);
		h = text + 1;
		hn = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = strrchr(text, ':');
		if (!colon || memchr(text, ':', (size_t)(colon - text)))
			return errbuf_set(err, "listen address \"%s\": want HOST:PORT, :PORT or [IPV6]:PORT",
					  text);
		hn = (size_t)(colon - text);
	}
	p = colon + 1;
	errno = 0;
	v = strtol(p, &end, 10);
	if (!*p || *end || errno || v < 0 || v > 65535 || *p == '+' || *p == '-')
		return errbuf_set(err, "listen address \"%s\": the port must be 0..65535", text);
	if (hn >= host_len)
		return errbuf_set(err, "listen address \"%s\": the host is too long", text);
	memcpy(host, h, hn);
	host[hn] = '\0';
	if (strpbrk(host, " /@?#"))
		return errbuf_set(err, "listen address \"%s\": not a host name or address", text);
	*port = (int)v;
	return 0;
}

/* A listening socket on host:port ("" host: every address, IPv6 and IPv4
 * when the system has IPv6). */
static int bind_socket(const char *host, int port, int *bound, struct errbuf *err)
{
	struct addrinfo hints, *res = NULL, *ai;
	char service[16];
	int fd = -1, rc, one = 1, saved = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	snprintf(service, sizeof(service), "%d", port);
	rc = getaddrinfo(*host ? host : NULL, service, &hints, &res);
	if (rc != 0)
		return errbuf_set(err, "cannot listen on %s:%d: %s", host, port, gai_strerror(rc));
	/* with no host, prefer the IPv6 wildcard (it takes IPv4 too) */
	for (int pass = 0; pass < 2 && fd < 0; pass++) {
		for (ai = res; ai; ai = ai->ai_next) {
			if (!*host && (pass == 0) != (ai->ai_family == AF_INET6))
				continue;
			if (*host && pass == 1)
				break;
			fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
			if (fd < 0) {
				saved = errno;
				continue;
			}
			setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
			if (ai->ai_family == AF_INET6 && !*host) {
				int zero = 0;

				setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
			}
			if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 64) == 0)
				break;
			saved = errno;
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	if (fd < 0)
		return errbuf_set(err, "cannot listen on %s:%d: %s", *host ? host : "*", port,
				  strerror(saved ? saved : EADDRNOTAVAIL));
	{
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);

		if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0)
			*bound = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
								: ((struct sockaddr_in *)&ss)->sin_port);
		else
			*bound = port;
	}
	return fd;
}

static enum MHD_Result answer(struct MHD_Connection *conn, int status, const char *ctype,
			      const char *body, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result rc;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", ctype);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	rc = MHD_queue_response(conn, (unsigned int)status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_len, void **con_cls)
{
	struct httpserver *s = cls;
	static int first;
	size_t i;

	(void)version;
	(void)upload;
	if (*con_cls == NULL) {
		*con_cls = &first; /* headers only: answer on the next call */
		return MHD_YES;
	}
	if (*upload_len) {
		*upload_len = 0; /* a body is read and ignored */
		return MHD_YES;
	}
	for (i = 0; i < s->n; i++) {
		if (strcmp(url, s->routes[i].path) != 0)
			continue;
		if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
			static const char msg[] = "method not allowed: GET only\n";

			return answer(conn, 405, "text/plain; charset=utf-8", msg, sizeof(msg) - 1);
		} else {
			struct buf b = BUF_INIT;
			int status = s->routes[i].fn(s->routes[i].ctx, &b);
			enum MHD_Result rc;

			if (b.oom) {
				buf_free(&b);
				return answer(conn, 500, "text/plain; charset=utf-8", "out of memory\n", 14);
			}
			rc = answer(conn, status, s->routes[i].content_type, b.data ? b.data : "", b.len);
			buf_free(&b);
			return rc;
		}
	}
	{
		static const char msg[] = "not found: /metrics, /healthz, /readyz\n";

		return answer(conn, 404, "text/plain; charset=utf-8", msg, sizeof(msg) - 1);
	}
}

struct httpserver *httpserver_start(const char *listen, const struct httpserver_route *routes,
				    size_t n, struct errbuf *err)
{
	struct httpserver *s;
	char host[256];
	int port, fd;

	if (n > MAX_ROUTES) {
		errbuf_set(err, "too many routes");
		return NULL;
	}
	if (httpserver_parse_listen(listen, host, sizeof(host), &port, err) < 0)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s) {
		errbuf_set(err, "out of memory");
		return NULL;
	}
	memcpy(s->routes, routes, n * sizeof(*routes));
	s->n = n;
	fd = bind_socket(host, port, &s->port, err);
	if (fd < 0) {
		free(s);
		return NULL;
	}
	s->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ITC,
				0, NULL, NULL, on_request, s,
				MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)64,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)10,
				MHD_OPTION_END);
	if (!s->d) {
		close(fd);
		free(s);
		errbuf_set(err, "cannot start the HTTP server on %s", listen);
		return NULL;
	}
	return s;
}

int httpserver_port(const struct httpserver *s)
{
	return s->port;
}

void httpserver_stop(struct httpserver *s)
{
	MHD_socket fd;

	if (!s)
		return;
	fd = MHD_quiesce_daemon(s->d);
	if (fd != MHD_INVALID_SOCKET)
		close(fd);
	MHD_stop_daemon(s->d);
	free(s);
}
