/*
 * httpclient: the libcurl mechanics every HTTP client of luascale shares —
 * libcurl's one-time initialisation, a connection/DNS/TLS-session cache
 * shared between threads, an easy handle set up the house way (http and
 * https only, no redirects, TLS verified by default, timeouts, client
 * certificates), a response body with a size cap, wiped header lists, the
 * lines of curl's verbose output and the text of a failed transfer. It
 * knows no API: credentials, retries, redaction rules and what a request
 * means are its callers' (kube/client.c, providers/cloudhttp/).
 */
#ifndef LUASCALE_HTTPCLIENT_H
#define LUASCALE_HTTPCLIENT_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "errbuf.h"

/* ---- the shared connection cache ---- */

struct httpclient_share;

/*
 * Initialises libcurl (once per process, thread-safe) and returns a cache
 * of connections, DNS answers and TLS sessions that easy handles of any
 * thread may share (each kind of data under its own mutex), or NULL with
 * a message. Free with httpclient_share_free() once no transfer is in
 * flight.
 */
struct httpclient_share *httpclient_share_new(struct errbuf *err);

/* Frees the cache. NULL is a no-op. */
void httpclient_share_free(struct httpclient_share *s);

/* ---- one easy handle ---- */

/* A copy of 'given', or of "luascale/VERSION" when it is NULL: the
 * User-Agent of a client. Owned by the caller (free()); NULL when out of
 * memory. */
char *httpclient_user_agent(const char *given);

/* TLS settings of a transfer. Pointers are borrowed for the setup call
 * only: libcurl copies the blobs and strings. */
struct httpclient_tls {
	bool insecure;                 /* true: no verification at all (an explicit
					* insecure-skip-tls-verify, tests) */
	const void *ca_data;           /* PEM bundle in memory, first choice */
	size_t ca_len;
	const char *ca_file;           /* else a PEM bundle file; neither: the
					* system store */
	const void *cert_data, *key_data; /* client certificate and key (PEM) in
					   * memory, first choice */
	size_t cert_len, key_len;
	const char *cert_file, *key_file; /* else by path; neither: none */
};

struct httpclient_easy_opts {
	const char *url;               /* absolute http:// or https:// URL */
	const char *method;            /* "GET" without a body: a GET; "HEAD": no
					* body either way; "POST": a POST; any
					* other: sent as a custom method */
	const char *body;              /* sent as given with Content-Length;
					* NULL: no body */
	size_t body_len;
	struct curl_slist *headers;    /* borrowed until the handle is cleaned up */
	const char *user_agent;        /* may be NULL */
	long connect_ms;               /* connection setup; 0: libcurl's */
	long timeout_ms;               /* the whole transfer; 0: none */
	long idle_ms;                  /* no byte for this long (rounded up to
					* seconds) ends it; 0: none */
	const struct httpclient_tls *tls; /* NULL: verified against the system store */
	char *error_buf;               /* CURL_ERROR_SIZE bytes for curl's message;
					* may be NULL */
	curl_write_callback on_write;  /* the body; NULL: libcurl's (stdout) */
	void *write_ud;
	curl_write_callback on_header; /* each response header line; may be NULL */
	void *header_ud;
	curl_xferinfo_callback on_progress; /* about once a second and on
					     * progress: non-zero ends the
					     * transfer; may be NULL */
	void *progress_ud;
	curl_debug_callback on_debug;  /* verbose output; NULL: not verbose */
	void *debug_ud;
};

/*
 * Returns an easy handle on share 's' (may be NULL) set up by 'o': http and
 * https only, no redirect followed, no signals, TCP keep-alive, and TLS
 * peer and host verified unless o->tls says insecure. Callers may set more
 * options before curl_easy_perform(). Returns NULL when out of memory.
 * Owned by the caller: curl_easy_cleanup().
 */
CURL *httpclient_easy_new(struct httpclient_share *s, const struct httpclient_easy_opts *o);

/* ---- a response body with a size cap ---- */

struct httpclient_body {
	struct buf data;               /* what came so far */
	size_t max;                    /* the most kept */
	bool too_big;                  /* more than max came: the transfer was ended */
};

/* Appends 'n' bytes of body. Returns n, or 0 (which ends a transfer when
 * returned from a write callback) when the body would pass b->max (too_big
 * set) or on out of memory (b->data.oom set). */
size_t httpclient_body_append(struct httpclient_body *b, const char *data, size_t n);

/* A CURLOPT_WRITEFUNCTION over httpclient_body_append(), 'ud' the
 * struct httpclient_body. */
size_t httpclient_body_write(char *data, size_t size, size_t nmemb, void *ud);

/* ---- header lists ---- */

/* Appends a copy of the header line 'line' to 'l'. Returns the list; on
 * out of memory 'l' unchanged and *fail set. Once *fail is set it does
 * nothing. */
struct curl_slist *httpclient_slist_add(struct curl_slist *l, const char *line, bool *fail);

/* Wipes every line (a line may carry a token or a signature) and frees
 * the list. NULL is a no-op. */
void httpclient_slist_free(struct curl_slist *l);

/* ---- verbose output and errors ---- */

/*
 * Splits what a CURLOPT_DEBUGFUNCTION is handed into lines, a CR before the
 * LF dropped, and calls 'fn' for each non-empty one with 'first' true for
 * the first line of 'data' (a request line when curl sends headers).
 */
void httpclient_debug_lines(const char *data, size_t size,
			    void (*fn)(void *ud, const char *line, size_t len, bool first),
			    void *ud);

/*
 * Writes to 'out' (at most 'cap' bytes with the NUL) why a transfer
 * failed: curl's message in 'error_buf' (its trailing newlines dropped) or
 * else the text of 'rc'; with a handle 'h' (may be NULL) whose system
 * error curl's message does not name, " (the system's reason)" after it.
 * Holds what the URL or headers held only where curl's message does:
 * callers redact what they must.
 */
void httpclient_error_text(CURL *h, CURLcode rc, const char *error_buf, char *out, size_t cap);

#endif
