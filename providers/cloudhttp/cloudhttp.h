/*
 * cloudhttp: the HTTP layer every cloud provider shares — one libcurl easy
 * handle per call over a shared connection/DNS/TLS cache, standard retries
 * with full jitter and Retry-After, a per-attempt hook for signers and
 * tokens, cancellation, and redaction of secrets in logs and errors.
 * It knows no cloud: wire formats, signatures and credentials are the
 * provider's.
 */
#ifndef LUASCALE_CLOUDHTTP_H
#define LUASCALE_CLOUDHTTP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"

struct buf;
struct clock;
struct logger;
struct cloudhttp;

struct cloudhttp_opts {
	struct clock *clock;          /* NULL: clock_real(). Retry waits sleep on it
				       * (ops->sleep_until), Retry-After dates are read
				       * against its wall time. Borrowed. */
	const struct logger *log;     /* NULL: silent. Borrowed. */
	long connect_timeout_ms;      /* 0: 5 s */
	long request_timeout_ms;      /* one attempt, whole; 0: 60 s */
	size_t max_body;              /* largest response body kept; 0: 64 MiB */
	const char *ca_file;          /* PEM bundle; NULL: the system store */
	bool insecure_skip_verify;    /* true: no TLS verification (tests only) */
	const char *user_agent;       /* NULL: "luascale/VERSION" */
	int max_attempts;             /* cloudhttp_call(); 0: 3; at most 100 */
	int64_t max_backoff_ms;       /* cap of one retry wait; 0: 20000 */
	uint64_t seed;                /* jitter; 0: seeded from the time and pid */
	const atomic_bool *cancel;    /* shutdown: true ends retry waits and
				       * transfers within about a second and
				       * refuses new calls. Borrowed; may be NULL. */
	bool verbose;                 /* log every request line and header, both
				       * directions, at debug level; secrets
				       * redacted, bodies never logged */
};

#define CLOUDHTTP_MAX_ATTEMPTS_LIMIT 100

/* ---- headers ---- */

struct cloudhttp_header {
	char *name;
	char *value;
};

/* A growable list of owned name/value pairs, kept in insertion order.
 * Zero-initialised (CLOUDHTTP_HEADERS_INIT) is an empty list. */
struct cloudhttp_headers {
	struct cloudhttp_header *v;
	size_t n, cap;
};

#define CLOUDHTTP_HEADERS_INIT {NULL, 0, 0}

/*
 * Appends a copy of 'name: value'. The name must be an HTTP token (letters,
 * digits, !#$%&'*+-.^_`|~), the value must hold no CR, LF or NUL (no header
 * injection); leading and trailing blanks of the value are kept as given.
 * Returns 0, or -1 when invalid or out of memory (the list is unchanged).
 */
int cloudhttp_headers_add(struct cloudhttp_headers *h, const char *name, const char *value);

/* Replaces every header named 'name' (case-insensitive) by one 'name: value'
 * at the place of the first (appended when none). Returns 0 or -1 as _add. */
int cloudhttp_headers_set(struct cloudhttp_headers *h, const char *name, const char *value);

/* Sets 'Authorization: Bearer <token>' (replacing any), the value built in
 * a buffer that is wiped before it is freed: a provider's prepare hook for
 * OAuth-style tokens. Returns 0, or -1 when the token is not a valid header
 * value or out of memory. */
int cloudhttp_headers_set_bearer(struct cloudhttp_headers *h, const char *token);

/* The value of the first header named 'name' (case-insensitive), borrowed
 * from 'h', or NULL. 'h' may be NULL. */
const char *cloudhttp_headers_get(const struct cloudhttp_headers *h, const char *name);

/* Frees every pair and resets 'h' to empty. Safe on an empty list. */
void cloudhttp_headers_free(struct cloudhttp_headers *h);

/* ---- requests and responses ---- */

enum cloudhttp_verdict {
	CLOUDHTTP_DONE,             /* this answer is final (success or not) */
	CLOUDHTTP_RETRY,            /* transient: retry after a backoff */
	CLOUDHTTP_RETRY_THROTTLED,  /* the cloud asked to slow down: retry, and
				     * resp->throttled tells the caller */
};

struct cloudhttp_response;

struct cloudhttp_request {
	const char *method;         /* "GET", "POST", "PUT", "DELETE", "PATCH", "HEAD" */
	const char *url;            /* absolute http:// or https:// URL, escaped by
				     * the caller; sent as given (no dot squashing) */
	const struct cloudhttp_headers *headers; /* sent in this order; may be NULL */
	const char *body;           /* sent exactly as given with Content-Length;
				     * NULL: none (POST/PUT/PATCH send an empty one) */
	size_t body_len;
	long timeout_ms;            /* one attempt; 0: the client's request timeout */
	/*
	 * Run before EVERY attempt (a signer re-signs each retry with a fresh
	 * date; a token source hands its current token), with 'extra' empty.
	 * Headers it adds are sent after req->headers. Returning -1 (with a
	 * message in 'err') aborts the call: no attempt is made, the message is
	 * reported. May be NULL.
	 */
	int (*prepare)(void *ctx, const struct cloudhttp_request *req,
		       struct cloudhttp_headers *extra, struct errbuf *err);
	void *ctx;                  /* for prepare and classify */
	/*
	 * Decides what an answer (status != 0) means. NULL: the default,
	 * cloudhttp_classify_default(). Transport failures are not shown to
	 * it: connection refused or reset, DNS failure, a timeout or an empty
	 * reply are always retried; TLS verification failures, cancellation,
	 * an oversized body and prepare failures never are.
	 */
	enum cloudhttp_verdict (*classify)(void *ctx, const struct cloudhttp_response *r);
	bool fresh_connect;         /* each attempt on a new connection: libcurl retries
				     * a request on a reused connection that died on
				     * its own, unseen; on a fresh one every sending
				     * is an attempt, so resp->attempts > 1 says an
				     * earlier sending may have taken effect */
};

struct cloudhttp_response {
	long status;                /* HTTP status; 0: no answer */
	char *body;                 /* NUL-terminated ("" when empty) once answered; NULL otherwise */
	size_t body_len;
	struct cloudhttp_headers headers; /* response headers of the final answer,
					   * names as the server spelt them */
	int attempts;               /* attempts made (cloudhttp_send: 1) */
	int64_t retry_after_ms;     /* the server's delay (Retry-After seconds or
				     * HTTP-date, retry-after-ms, x-ms-retry-after-ms),
				     * -1 when none */
	bool throttled;             /* the last verdict was CLOUDHTTP_RETRY_THROTTLED
				     * (retries ran out on throttling) */
};

/* Frees the body and headers and resets 'r' (status 0, retry_after_ms -1).
 * Safe on a zeroed or already freed response. */
void cloudhttp_response_free(struct cloudhttp_response *r);

/* The default classifier: 429 → RETRY_THROTTLED, 500-599 → RETRY, anything
 * else (2xx, other 4xx, 1xx, 3xx) → DONE. 'ctx' is ignored. */
enum cloudhttp_verdict cloudhttp_classify_default(void *ctx, const struct cloudhttp_response *r);

/* ---- the client ---- */

/*
 * Returns a client or NULL with a message ('o' may be NULL for defaults;
 * strings are copied, clock, logger and cancel flag are borrowed and must
 * outlive it). Nothing is contacted yet. Thread-safe: any number of threads
 * may call cloudhttp_send()/cloudhttp_call() on it at once; each call has
 * its own easy handle, connections, DNS and TLS sessions are shared.
 */
struct cloudhttp *cloudhttp_new(const struct cloudhttp_opts *o, struct errbuf *err);

/* Frees the client. No call may be in flight. NULL is a no-op. */
void cloudhttp_free(struct cloudhttp *h);

/*
 * One attempt of 'req': prepare() runs once, then the request is sent.
 * libcurl adds nothing that could break a signature: no Expect, no Accept
 * and no Content-Type unless req->headers or prepare() give one; the Host
 * header is cloudhttp_url_parse()'s authority unless the caller gives one;
 * User-Agent is the client's (never signed by any cloud). TLS is verified
 * unless the client was built insecure; no redirect is followed; only http
 * and https are spoken. Returns 0 when the server answered, whatever the
 * status (resp filled, attempts 1), or -1 with a message naming the method
 * and the redacted URL when there was no answer (connection, TLS, timeout,
 * cancel, oversized body, prepare failed). 'resp' is always initialised;
 * free it either way.
 */
int cloudhttp_send(struct cloudhttp *h, const struct cloudhttp_request *req,
		   struct cloudhttp_response *resp, struct errbuf *err);

/*
 * 'req' with standard retries: at most max_attempts attempts; after failed
 * attempt n (1, 2, ...) it waits rand[0,1) * min(2^(n-1) s, max_backoff)
 * ("full jitter"), but at least the server's Retry-After (capped at
 * max_backoff), on the client's clock; the cancel flag ends the wait. Which
 * answers are retried is req->classify's call (see cloudhttp_request).
 * Returns 0 when the last attempt was answered, whatever the status: resp
 * is that answer, with attempts and throttled set (a RETRY verdict on the
 * last attempt leaves e.g. a 503 in resp). Returns -1 with a message when
 * the last attempt had no answer ("POST https://ec2.../: Failed to connect
 * ... after 3 attempts"), when cancelled, or when prepare failed; resp then
 * has status 0 and attempts set. A clock that cannot sleep (a virtual clock
 * ahead of its events) ends the retries with the last outcome.
 */
int cloudhttp_call(struct cloudhttp *h, const struct cloudhttp_request *req,
		   struct cloudhttp_response *resp, struct errbuf *err);

/* ---- URLs ---- */

struct cloudhttp_url {
	char scheme[8];             /* "http" or "https", lowercased */
	char host[256];             /* the host as written (IPv6 without brackets) */
	int port;                   /* explicit, else 80 or 443 */
	char authority[272];        /* the Host header cloudhttp sends: the host as
				     * written (brackets kept) plus ":port" when
				     * the URL names a port */
	const char *path;           /* into the URL: from its first '/' up to '?',
				     * '#' or the end; NULL when the URL has no path
				     * (then "/" is sent) */
	size_t path_len;
	const char *query;          /* into the URL: after '?' up to '#' or the end;
				     * NULL when there is no '?' */
	size_t query_len;
};

/*
 * Splits an absolute http(s) URL as cloudhttp sends it, so a signer signs
 * exactly the host, path and query on the wire. User information is
 * refused (credentials do not belong in URLs). Returns 0, or -1 with a
 * message (the URL in it redacted).
 */
int cloudhttp_url_parse(const char *url, struct cloudhttp_url *out, struct errbuf *err);

/* Appends 's' percent-encoded with only A-Z a-z 0-9 - . _ ~ bare (space is
 * %20): the encoding of AWS Query bodies, SigV4 and OAuth forms.
 * Returns 0 or -1 (out of memory). */
int cloudhttp_escape(struct buf *b, const char *s);

/* ---- redaction ---- */

/*
 * Writes 'url' to 'out' (at most 'outlen' bytes with the NUL, truncated)
 * with user information replaced by "REDACTED@" and the values of secret
 * query (and fragment) keys replaced by "REDACTED". Secret keys, compared
 * case-insensitively: X-Amz-Signature, X-Amz-Credential,
 * X-Amz-Security-Token, Signature, sig, token, access_token, refresh_token,
 * id_token, client_secret, assertion, client_assertion, code, password, key.
 * Works on a request target ("/path?query") too. Returns the length of the
 * whole redacted URL (as snprintf does; >= outlen means truncated).
 */
size_t cloudhttp_redact_url(const char *url, char *out, size_t outlen);

/*
 * True when a header with this name carries a secret and its value must
 * never be logged: Authorization, Proxy-Authorization, Cookie, Set-Cookie,
 * X-Amz-Security-Token, X-aws-ec2-metadata-token, any name ending in
 * "-token" or "-api-key" or containing "authorization" (X-Goog-IAM-
 * Authorization-Token, X-Ms-Authorization-Auxiliary), Api-Key, X-Api-Key.
 * Not: Metadata-Flavor, Metadata, X-aws-ec2-metadata-token-ttl-seconds,
 * X-Amz-Date, Content-*. Case-insensitive.
 */
bool cloudhttp_header_is_secret(const char *name);

/* ---- Retry-After ---- */

/*
 * Parses a Retry-After value: delay-seconds ("120") or an HTTP-date
 * (IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT", also the obsolete RFC 850
 * and asctime forms) read against 'now_wall_s' (unix seconds). A date in
 * the past is 0. Huge delays saturate at INT64_MAX / 2 ms. Returns 0 with
 * the delay in *out_ms, or -1 when the value is neither.
 */
int cloudhttp_parse_retry_after(const char *value, int64_t now_wall_s, int64_t *out_ms);

/* An HTTP-date in any of its three forms (IMF-fixdate, also with RFC
 * 1123's one-digit day; RFC 850; asctime; the day checked, GMT only) into
 * unix seconds. 0, or -1 when it is none. */
int cloudhttp_parse_http_date(const char *s, int64_t *out);

#endif
