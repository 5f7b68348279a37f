/*
 * httpserver: listen address parsing, the socket, and one thread polling
 * the listening socket and every connection: a request read whole (within
 * its deadline), answered from the route table, written (within its
 * deadline), then the connection closed. The pool's and each address's
 * limits are kept by closing the oldest connection when a new one comes.
 */
#include "runtime/httpserver.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "runtime/clock.h"

#define MAX_ROUTES 8
#define HEAD_MAX 8192            /* request line and headers */
#define BODY_MAX 65536           /* a body is read and dropped, up to this */
#define POLL_MAX_MS 1000         /* the loop reads the clock at least this often */
#define ACCEPT_PAUSE_MS 100      /* out of descriptors: the listener rests this long */

enum conn_state {
	C_HEAD,      /* reading the request line and headers */
	C_BODY,      /* reading (and dropping) a body */
	C_WRITE,     /* writing the answer */
	C_LINGER,    /* answered and shut for writing: reading to the client's close */
};

struct conn {
	int fd;                  /* -1: a free slot */
	enum conn_state st;
	unsigned char addr[16];  /* the client's address (IPv4 as ::ffff:a.b.c.d) */
	uint64_t seq;             /* the order of accept: smaller is older */
	int64_t deadline_ns;
	bool health;             /* asked for a health path */
	char method[17];
	const char *path;        /* into 'in', NUL-terminated, once the headers are read */
	char *in;                /* HEAD_MAX bytes */
	size_t in_len;
	size_t body_left;
	struct buf out;
	size_t out_off;
};

struct httpserver {
	int lfd, wake[2];
	int port;
	struct httpserver_route routes[MAX_ROUTES];
	size_t n;
	struct httpserver_opts o;
	struct conn *conns;      /* o.max_conns slots */
	struct pollfd *pfd;      /* 2 + o.max_conns */
	int *pconn;              /* the conn of each pfd entry */
	struct httpserver_stats cur;  /* the thread's own */
	bool accept_paused;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;       /* CLOCK_MONOTONIC */
	bool stop;               /* under mu, as the rest below */
	uint64_t sync_asked, sync_done;
	struct httpserver_stats pub;
};

static const char *const HEALTH_PATHS[] = {"/healthz", "/readyz", "/livez"};

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


void httpserver_opts_default(struct httpserver_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->max_conns = 64;
	o->max_conns_per_ip = 8;
	o->request_timeout_ns = 5 * CLOCK_NS_PER_S;
	o->response_timeout_ns = 10 * CLOCK_NS_PER_S;
}

/* ---- connections ---- */

static void conn_close(struct conn *c)
{
	if (c->fd < 0)
		return;
	close(c->fd);
	c->fd = -1;
	free(c->in);
	c->in = NULL;
	buf_free(&c->out);
}

static int open_count(const struct httpserver *s)
{
	int n = 0;

	for (int i = 0; i < s->o.max_conns; i++)
		n += s->conns[i].fd >= 0;
	return n;
}

/* The connection that gives way: the oldest (of 'addr' when not NULL),
 * one that asked for a health path only when every candidate did. -1
 * when there is no candidate. */
static int victim(const struct httpserver *s, const unsigned char *addr)
{
	int best = -1;

	for (int i = 0; i < s->o.max_conns; i++) {
		const struct conn *c = &s->conns[i];

		if (c->fd < 0 || (addr && memcmp(c->addr, addr, 16) != 0))
			continue;
		if (best < 0 || (s->conns[best].health && !c->health) ||
		    (s->conns[best].health == c->health && c->seq < s->conns[best].seq))
			best = i;
	}
	return best;
}

static void evict(struct httpserver *s, int i)
{
	conn_close(&s->conns[i]);
	s->cur.evicted++;
}

static const char *reason_of(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 411: return "Length Required";
	case 413: return "Content Too Large";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return "Status";
	}
}

/* Puts the answer in c->out and starts writing it. */
static void respond(struct httpserver *s, struct conn *c, int status, const char *ctype,
		    const char *body, size_t len, bool head, int64_t now)
{
	static const char oom[] = "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n"
				  "Connection: close\r\n\r\n";

	if (status < 100 || status > 599)
		status = 500;
	c->out.len = 0;
	buf_printf(&c->out, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
		   "Cache-Control: no-store\r\nConnection: close\r\n%s\r\n", status,
		   reason_of(status), ctype, len, status == 405 ? "Allow: GET, HEAD\r\n" : "");
	if (!head)
		buf_append(&c->out, body, len);
	if (c->out.oom) {
		buf_free(&c->out);
		buf_append(&c->out, oom, sizeof(oom) - 1);
	}
	c->out_off = 0;
	c->st = C_WRITE;
	c->deadline_ns = now + s->o.response_timeout_ns;
}

static void respond_text(struct httpserver *s, struct conn *c, int status, const char *msg,
			 int64_t now)
{
	respond(s, c, status, "text/plain; charset=utf-8", msg, strlen(msg), false, now);
}

static bool is_tchar(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

/* The request line and headers (c->in, 'hlen' bytes up to and with the
 * blank line) checked; either an error answer started (returns 1) or
 * c->body_left set and the method and path copied out (returns 0). */
static int parse_head(struct httpserver *s, struct conn *c, size_t hlen, int64_t now)
{
	char *p = c->in, *end = c->in + hlen, *eol, *sp1, *sp2;
	long long clen = -1;

	eol = memchr(p, '\n', (size_t)(end - p));
	*eol = '\0';
	if (eol > p && eol[-1] == '\r')
		eol[-1] = '\0';
	sp1 = strchr(p, ' ');
	sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (!sp1 || !sp2 || strchr(sp2 + 1, ' ')) {
		respond_text(s, c, 400, "bad request line: want METHOD /PATH HTTP/1.1\n", now);
		return 1;
	}
	*sp1 = *sp2 = '\0';
	if (!*p || (size_t)(sp1 - p) >= sizeof(c->method)) {
		respond_text(s, c, 400, "bad request line: the method\n", now);
		return 1;
	}
	for (const char *q = p; *q; q++) {
		if (!is_tchar(*q)) {
			respond_text(s, c, 400, "bad request line: the method\n", now);
			return 1;
		}
	}
	if (sp1[1] != '/') {
		respond_text(s, c, 400, "bad request line: the target must be a path\n", now);
		return 1;
	}
	for (const unsigned char *q = (const unsigned char *)sp1 + 1; *q; q++) {
		if (*q <= 0x20 || *q >= 0x7f) {
			respond_text(s, c, 400, "bad request line: the target\n", now);
			return 1;
		}
	}
	if (strcmp(sp2 + 1, "HTTP/1.1") != 0 && strcmp(sp2 + 1, "HTTP/1.0") != 0) {
		const char *v = sp2 + 1;
		bool shaped = strncmp(v, "HTTP/", 5) == 0 && v[5] >= '0' && v[5] <= '9' &&
			      v[6] == '.' && v[7] >= '0' && v[7] <= '9' && !v[8];

		respond_text(s, c, shaped ? 505 : 400, shaped ? "HTTP/1.0 and HTTP/1.1 only\n"
							     : "bad request line: the version\n", now);
		return 1;
	}
	snprintf(c->method, sizeof(c->method), "%s", p);
	sp1[1 + strcspn(sp1 + 1, "?#")] = '\0';
	c->path = sp1 + 1;
	/* the headers: only the body's framing matters */
	for (p = eol + 1; p < end; p = eol + 1) {
		char *colon, *v, *ve;

		eol = memchr(p, '\n', (size_t)(end - p));
		*eol = '\0';
		if (eol > p && eol[-1] == '\r')
			eol[-1] = '\0';
		if (!*p)
			break; /* the blank line */
		colon = strchr(p, ':');
		if (!colon || colon == p) {
			respond_text(s, c, 400, "bad header line\n", now);
			return 1;
		}
		for (const char *q = p; q < colon; q++) {
			if (!is_tchar(*q)) {
				respond_text(s, c, 400, "bad header name\n", now);
				return 1;
			}
		}
		*colon = '\0';
		for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
			;
		for (ve = v + strlen(v); ve > v && (ve[-1] == ' ' || ve[-1] == '\t'); ve--)
			;
		*ve = '\0';
		if (strcasecmp(p, "Transfer-Encoding") == 0) {
			respond_text(s, c, 411, "a body needs a Content-Length\n", now);
			return 1;
		}
		if (strcasecmp(p, "Content-Length") == 0) {
			long long n = 0;

			if (!*v || strspn(v, "0123456789") != strlen(v) || strlen(v) > 12) {
				respond_text(s, c, 400, "bad Content-Length\n", now);
				return 1;
			}
			for (const char *q = v; *q; q++)
				n = n * 10 + (*q - '0');
			if (clen >= 0 && clen != n) {
				respond_text(s, c, 400, "two Content-Length headers\n", now);
				return 1;
			}
			clen = n;
		}
	}
	if (clen > BODY_MAX) {
		respond_text(s, c, 413, "a body is at most 64 KiB\n", now);
		return 1;
	}
	c->body_left = clen > 0 ? (size_t)clen : 0;
	return 0;
}

/* The request is complete: its answer. */
static void dispatch(struct httpserver *s, struct conn *c, int64_t now)
{
	const char *method = c->method, *path = c->path;
	bool head = strcmp(method, "HEAD") == 0;

	for (size_t i = 0; i < s->n; i++) {
		struct buf b = BUF_INIT;
		int status;

		if (strcmp(path, s->routes[i].path) != 0)
			continue;
		if (!head && strcmp(method, "GET") != 0) {
			respond_text(s, c, 405, "method not allowed: GET only\n", now);
			return;
		}
		status = s->routes[i].fn(s->routes[i].ctx, &b);
		if (b.oom)
			respond_text(s, c, 500, "out of memory\n", now);
		else
			respond(s, c, status, s->routes[i].content_type, b.data ? b.data : "", b.len,
				head, now);
		buf_free(&b);
		return;
	}
	respond_text(s, c, 404, "not found\n", now);
}

/* Finds the blank line ending the headers in c->in; its end, or 0. */
static size_t head_end(const struct conn *c, size_t from)
{
	for (size_t i = from; i < c->in_len; i++) {
		if (c->in[i] != '\n')
			continue;
		if (i >= 1 && c->in[i - 1] == '\n')
			return i + 1;
		if (i >= 2 && c->in[i - 1] == '\r' && c->in[i - 2] == '\n')
			return i + 1;
	}
	return 0;
}

/* Sends what is left of the answer; when all of it went, shuts the
 * connection for writing and lingers for the client's close. */
static void conn_write(struct httpserver *s, struct conn *c)
{
	while (c->out_off < c->out.len) {
		ssize_t n = send(c->fd, c->out.data + c->out_off, c->out.len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			conn_close(c);
			return;
		}
		c->out_off += (size_t)n;
	}
	s->cur.answered++;
	buf_free(&c->out);
	shutdown(c->fd, SHUT_WR);
	c->st = C_LINGER;
}

/* Reads what has come; advances the request; answers when it is complete. */
static void conn_read(struct httpserver *s, struct conn *c, int64_t now)
{
	char scratch[4096];

	while (c->fd >= 0 && c->st != C_WRITE) {
		bool into_head = c->st == C_HEAD;
		ssize_t n = into_head ? recv(c->fd, c->in + c->in_len, HEAD_MAX - c->in_len, MSG_DONTWAIT)
				      : recv(c->fd, scratch, sizeof(scratch), MSG_DONTWAIT);
		size_t from, hlen;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) { /* the client closed, or the connection broke */
			conn_close(c);
			return;
		}
		if (c->st == C_LINGER)
			continue; /* after the answer: dropped */
		if (c->st == C_BODY) {
			c->body_left -= (size_t)n < c->body_left ? (size_t)n : c->body_left;
			if (c->body_left == 0)
				break;
			continue;
		}
		from = c->in_len >= 2 ? c->in_len - 2 : 0;
		c->in_len += (size_t)n;
		hlen = head_end(c, from);
		if (!hlen) {
			if (c->in_len == HEAD_MAX)
				respond_text(s, c, 431, "request headers larger than 8 KiB\n", now);
			continue;
		}
		{
			size_t extra = c->in_len - hlen;

			if (parse_head(s, c, hlen, now))
				break;
			for (size_t i = 0; i < sizeof(HEALTH_PATHS) / sizeof(HEALTH_PATHS[0]); i++)
				c->health = c->health || strcmp(c->path, HEALTH_PATHS[i]) == 0;
			c->body_left -= extra < c->body_left ? extra : c->body_left;
			c->st = C_BODY;
			if (c->body_left == 0)
				break;
		}
	}
	if (c->fd >= 0 && c->st == C_BODY && c->body_left == 0)
		dispatch(s, c, now);
	if (c->fd >= 0 && c->st == C_WRITE)
		conn_write(s, c);
}

/* Takes the connections waiting, making room for each. */
static void accept_some(struct httpserver *s, int64_t now)
{
	for (int k = 0; k < s->o.max_conns; k++) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		unsigned char addr[16];
		int fd = accept4(s->lfd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
		int same = 0, slot = -1, v;
		struct conn *c;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
				s->accept_paused = true;
			return;
		}
		memset(addr, 0, sizeof(addr));
		if (ss.ss_family == AF_INET6) {
			memcpy(addr, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
		} else if (ss.ss_family == AF_INET) {
			addr[10] = addr[11] = 0xff;
			memcpy(addr + 12, &((struct sockaddr_in *)&ss)->sin_addr, 4);
		}
		for (int i = 0; i < s->o.max_conns; i++)
			same += s->conns[i].fd >= 0 && memcmp(s->conns[i].addr, addr, 16) == 0;
		if (same >= s->o.max_conns_per_ip && (v = victim(s, addr)) >= 0)
			evict(s, v);
		if (open_count(s) >= s->o.max_conns && (v = victim(s, NULL)) >= 0)
			evict(s, v);
		for (int i = 0; i < s->o.max_conns && slot < 0; i++)
			if (s->conns[i].fd < 0)
				slot = i;
		if (slot < 0) {
			close(fd);
			continue;
		}
		c = &s->conns[slot];
		memset(c, 0, sizeof(*c));
		c->in = malloc(HEAD_MAX);
		if (!c->in) {
			close(fd);
			c->fd = -1;
			continue;
		}
		c->fd = fd;
		c->st = C_HEAD;
		memcpy(c->addr, addr, 16);
		c->deadline_ns = now + s->o.request_timeout_ns;
		c->seq = ++s->cur.accepted;
		conn_read(s, c, now);
	}
}

/* Closes every connection past its deadline; the earliest deadline left
 * (INT64_MAX when none). */
static int64_t expire(struct httpserver *s, int64_t now)
{
	int64_t next = INT64_MAX;

	for (int i = 0; i < s->o.max_conns; i++) {
		struct conn *c = &s->conns[i];

		if (c->fd < 0)
			continue;
		if (now >= c->deadline_ns) {
			/* a lingering one was answered: its client is slow to close */
			if (c->st != C_LINGER)
				s->cur.timed_out++;
			conn_close(c);
		} else if (c->deadline_ns < next) {
			next = c->deadline_ns;
		}
	}
	return next;
}

static void *server_thread(void *arg)
{
	struct httpserver *s = arg;
	struct clock *clk = s->o.clock;

	for (;;) {
		uint64_t round;
		int64_t now, next;
		int np = 0, timeout;
		bool asked;

		pthread_mutex_lock(&s->mu);
		if (s->stop) {
			pthread_mutex_unlock(&s->mu);
			break;
		}
		round = s->sync_asked;
		asked = round > s->sync_done;
		pthread_mutex_unlock(&s->mu);

		now = clock_now(clk);
		next = expire(s, now);
		s->pfd[np].fd = s->wake[0];
		s->pfd[np].events = POLLIN;
		s->pconn[np++] = -1;
		if (!s->accept_paused) {
			s->pfd[np].fd = s->lfd;
			s->pfd[np].events = POLLIN;
			s->pconn[np++] = -1;
		}
		for (int i = 0; i < s->o.max_conns; i++) {
			if (s->conns[i].fd < 0)
				continue;
			s->pfd[np].fd = s->conns[i].fd;
			s->pfd[np].events = s->conns[i].st == C_WRITE ? POLLOUT : POLLIN;
			s->pconn[np++] = i;
		}
		timeout = POLL_MAX_MS;
		if (next != INT64_MAX && (next - now) / CLOCK_NS_PER_MS + 1 < timeout)
			timeout = (int)((next - now) / CLOCK_NS_PER_MS + 1);
		if (s->accept_paused && timeout > ACCEPT_PAUSE_MS)
			timeout = ACCEPT_PAUSE_MS;
		if (asked)
			timeout = 0; /* a round for httpserver_sync(): what is there now */
		for (int i = 0; i < np; i++)
			s->pfd[i].revents = 0;
		if (poll(s->pfd, (nfds_t)np, timeout) < 0 && errno != EINTR)
			break;
		now = clock_now(clk);
		if (s->accept_paused) {
			s->accept_paused = false; /* tried again next round */
		}
		for (int i = 0; i < np; i++) {
			short re = s->pfd[i].revents;

			if (!re)
				continue;
			if (s->pfd[i].fd == s->wake[0]) {
				char drain[64];

				while (read(s->wake[0], drain, sizeof(drain)) > 0)
					;
			} else if (s->pconn[i] < 0) {
				accept_some(s, now);
			} else {
				struct conn *c = &s->conns[s->pconn[i]];

				/* the slot may have been given to a newer connection */
				if (c->fd != s->pfd[i].fd)
					continue;
				if (c->st == C_WRITE)
					conn_write(s, c);
				else
					conn_read(s, c, now);
			}
		}
		expire(s, clock_now(clk));
		pthread_mutex_lock(&s->mu);
		s->cur.open = open_count(s);
		s->pub = s->cur;
		if (round > s->sync_done)
			s->sync_done = round;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
	}
	return NULL;
}

static void wake(struct httpserver *s)
{
	ssize_t n;

	do {
		n = write(s->wake[1], "x", 1);
	} while (n < 0 && errno == EINTR);
}

static void server_free(struct httpserver *s)
{
	if (s->conns)
		for (int i = 0; i < s->o.max_conns; i++)
			conn_close(&s->conns[i]);
	free(s->conns);
	free(s->pfd);
	free(s->pconn);
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->wake[0] >= 0)
		close(s->wake[0]);
	if (s->wake[1] >= 0)
		close(s->wake[1]);
	free(s);
}

struct httpserver *httpserver_start_opts(const char *listen, const struct httpserver_route *routes,
					 size_t n, const struct httpserver_opts *o,
					 struct errbuf *err)
{
	struct httpserver_opts d;
	struct httpserver *s;
	pthread_condattr_t ca;
	char host[256];
	int port;

	httpserver_opts_default(&d);
	if (o) {
		if (o->max_conns < 0 || o->max_conns_per_ip < 0 || o->request_timeout_ns < 0 ||
		    o->response_timeout_ns < 0 || o->max_conns > 65536) {
			errbuf_set(err, "HTTP server: a limit is out of range");
			return NULL;
		}
		if (o->max_conns)
			d.max_conns = o->max_conns;
		if (o->max_conns_per_ip)
			d.max_conns_per_ip = o->max_conns_per_ip;
		if (o->request_timeout_ns)
			d.request_timeout_ns = o->request_timeout_ns;
		if (o->response_timeout_ns)
			d.response_timeout_ns = o->response_timeout_ns;
		d.clock = o->clock;
	}
	if (!d.clock)
		d.clock = clock_real();
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
	s->lfd = s->wake[0] = s->wake[1] = -1;
	s->o = d;
	memcpy(s->routes, routes, n * sizeof(*routes));
	s->n = n;
	s->conns = calloc((size_t)d.max_conns, sizeof(*s->conns));
	s->pfd = calloc((size_t)d.max_conns + 2, sizeof(*s->pfd));
	s->pconn = calloc((size_t)d.max_conns + 2, sizeof(*s->pconn));
	if (!s->conns || !s->pfd || !s->pconn) {
		server_free(s);
		errbuf_set(err, "out of memory");
		return NULL;
	}
	for (int i = 0; i < d.max_conns; i++)
		s->conns[i].fd = -1;
	if (pipe2(s->wake, O_NONBLOCK | O_CLOEXEC) < 0) {
		errbuf_set(err, "HTTP server: cannot make a pipe: %s", strerror(errno));
		server_free(s);
		return NULL;
	}
	s->lfd = bind_socket(host, port, &s->port, err);
	if (s->lfd < 0) {
		server_free(s);
		return NULL;
	}
	{
		int fl = fcntl(s->lfd, F_GETFL);

		fcntl(s->lfd, F_SETFL, fl | O_NONBLOCK);
	}
	pthread_mutex_init(&s->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&s->thread, NULL, server_thread, s) != 0) {
		pthread_cond_destroy(&s->cv);
		pthread_mutex_destroy(&s->mu);
		server_free(s);
		errbuf_set(err, "cannot start the HTTP server on %s: no thread", listen);
		return NULL;
	}
	return s;
}

struct httpserver *httpserver_start(const char *listen, const struct httpserver_route *routes,
				    size_t n, struct errbuf *err)
{
	return httpserver_start_opts(listen, routes, n, NULL, err);
}

int httpserver_port(const struct httpserver *s)
{
	return s->port;
}

void httpserver_stats(struct httpserver *s, struct httpserver_stats *st)
{
	pthread_mutex_lock(&s->mu);
	*st = s->pub;
	pthread_mutex_unlock(&s->mu);
}

int httpserver_sync(struct httpserver *s, int max_ms)
{
	struct timespec until;
	uint64_t mine;
	int rc = 0;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += max_ms / 1000;
	until.tv_nsec += (long)(max_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&s->mu);
	mine = ++s->sync_asked;
	wake(s);
	while (s->sync_done < mine && !s->stop && rc == 0)
		rc = pthread_cond_timedwait(&s->cv, &s->mu, &until);
	pthread_mutex_unlock(&s->mu);
	return rc == 0 ? 0 : -1;
}

void httpserver_stop(struct httpserver *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	s->stop = true;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	wake(s);
	pthread_join(s->thread, NULL);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	server_free(s);
}
