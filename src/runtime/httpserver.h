/*
 * httpserver: a small HTTP server on libmicrohttpd for the daemon's own
 * endpoints (/metrics, /healthz, /readyz): a fixed table of GET paths, each
 * answered by a callback; anything else is 404 or 405. It owns the socket
 * and the server's thread, not what the pages say.
 */
#ifndef LUASCALE_HTTPSERVER_H
#define LUASCALE_HTTPSERVER_H

#include <stddef.h>

#include "errbuf.h"

struct buf;
struct httpserver;

/* Fills 'body' (empty on entry) and returns the HTTP status (200, 503...).
 * Called on the server's thread; must be thread-safe with the rest. */
typedef int (*httpserver_fn)(void *ctx, struct buf *body);

struct httpserver_route {
	const char *path;          /* exact match, e.g. "/metrics" */
	const char *content_type;  /* of the answer */
	httpserver_fn fn;
	void *ctx;
};

/*
 * Parses a listen address: "HOST:PORT", ":PORT" (every address) or
 * "[V6]:PORT"; PORT 0..65535 (0: a free one). 'host' gets "" for every
 * address. Returns 0, or -1 with a message naming the text.
 */
int httpserver_parse_listen(const char *text, char *host, size_t host_len, int *port,
			    struct errbuf *err);

/*
 * Binds 'listen' and serves 'routes' (copied: 'n' of them; what they point
 * to is borrowed and must outlive the server) on a thread of its own.
 * Returns the server, or NULL with a message (bad address, port in use).
 */
struct httpserver *httpserver_start(const char *listen, const struct httpserver_route *routes,
				    size_t n, struct errbuf *err);

/* The port bound (useful with port 0). */
int httpserver_port(const struct httpserver *s);

/* Stops serving (connections in progress are ended) and frees. NULL is a no-op. */
void httpserver_stop(struct httpserver *s);

#endif
