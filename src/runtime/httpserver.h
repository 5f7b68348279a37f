/*
 * httpserver: a small HTTP/1.1 server for the daemon's own endpoints
 * (/metrics, /healthz, /readyz): a fixed table of GET paths, each answered
 * by a callback; anything else is 404 or 405. One request a connection.
 * It owns the socket, the server's thread and what a client may hold
 * (time, connections), not what the pages say.
 *
 * Hostile clients: a request (its headers and body) must be complete
 * within request_timeout_ns of the connection's accept and its answer
 * written within response_timeout_ns, however often the client sends or
 * reads a byte; one client address holds at most max_conns_per_ip
 * connections; a new connection is always taken, and when the pool (or
 * the address's share) is full the oldest connection gives way, a
 * health request (/healthz, /readyz, /livez) last. So a probe is
 * answered while slow clients hold every connection.
 */
#ifndef LUASCALE_HTTPSERVER_H
#define LUASCALE_HTTPSERVER_H

#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"

struct buf;
struct clock;
struct httpserver;

/* Fills 'body' (empty on entry) and returns the HTTP status (200, 503...).
 * Called on the server's thread; must be thread-safe with the rest. */
typedef int (*httpserver_fn)(void *ctx, struct buf *body);

struct httpserver_route {
	const char *path;          /* exact match, e.g. "/metrics" (a query is ignored) */
	const char *content_type;  /* of the answer */
	httpserver_fn fn;
	void *ctx;
};

/* What a client may hold. httpserver_opts_default() fills the defaults. */
struct httpserver_opts {
	int max_conns;              /* open connections at most (64) */
	int max_conns_per_ip;       /* of one client address (8) */
	int64_t request_timeout_ns; /* accept to the request's last byte (5 s) */
	int64_t response_timeout_ns; /* the answer written, from its start (10 s) */
	struct clock *clock;        /* borrowed; NULL: the real clock */
};

/* Counters since the start; 'open' is now. */
struct httpserver_stats {
	uint64_t accepted;          /* connections taken */
	uint64_t answered;          /* answers written whole */
	uint64_t timed_out;         /* closed at a deadline */
	uint64_t evicted;           /* closed to make room for a newer one */
	int open;
};

/*
 * Parses a listen address: "HOST:PORT", ":PORT" (every address) or
 * "[V6]:PORT"; PORT 0..65535 (0: a free one). 'host' gets "" for every
 * address. Returns 0, or -1 with a message naming the text.
 */
int httpserver_parse_listen(const char *text, char *host, size_t host_len, int *port,
			    struct errbuf *err);

/* The defaults into 'o'. */
void httpserver_opts_default(struct httpserver_opts *o);

/*
 * Binds 'listen' and serves 'routes' (copied: 'n' of them, at most 8; what
 * they point to is borrowed and must outlive the server) on a thread of
 * its own, with the limits of 'o' (NULL: the defaults; a zero field: its
 * default). Returns the server, or NULL with a message (bad address, port
 * in use, a negative limit).
 */
struct httpserver *httpserver_start_opts(const char *listen, const struct httpserver_route *routes,
					 size_t n, const struct httpserver_opts *o,
					 struct errbuf *err);

/* httpserver_start_opts() with the defaults. */
struct httpserver *httpserver_start(const char *listen, const struct httpserver_route *routes,
				    size_t n, struct errbuf *err);

/* The port bound (useful with port 0). */
int httpserver_port(const struct httpserver *s);

/* The counters into 'st'. Any thread. */
void httpserver_stats(struct httpserver *s, struct httpserver_stats *st);

/*
 * Wakes the server's thread and waits until it has gone once round its
 * loop (accepted what was waiting, read what had come, read the clock and
 * closed what is past its deadline) after this call. For a clock moved by
 * its owner. 0, or -1 when that took longer than 'max_ms' real milliseconds.
 */
int httpserver_sync(struct httpserver *s, int max_ms);

/* Stops serving (connections in progress are closed) and frees. NULL is a no-op. */
void httpserver_stop(struct httpserver *s);

#endif
