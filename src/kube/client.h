/*
 * client: HTTP requests to a Kubernetes API server over libcurl. Owns TLS
 * settings and authentication (bearer token, a token file re-read as it
 * rotates, client certificates, exec credential plugins with their expiry),
 * a token bucket for writes, a cancel for shutdown, and a watch-stream
 * splitter. It knows no resource types: paths, bodies and retries (other
 * than one re-authentication on 401) are the caller's.
 * Safe to use from several threads at once: each call has its own easy
 * handle; connections, DNS and TLS sessions are shared under a mutex.
 */
#ifndef LUASCALE_KUBE_CLIENT_H
#define LUASCALE_KUBE_CLIENT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"
#include "kube/kubeconfig.h"

struct buf;
struct clock;
struct logger;
struct kube_client;

#define KUBE_CT_JSON "application/json"
#define KUBE_CT_MERGE_PATCH "application/merge-patch+json"
#define KUBE_CT_STRATEGIC_MERGE_PATCH "application/strategic-merge-patch+json"
#define KUBE_CT_JSON_PATCH "application/json-patch+json"

struct kube_client_opts {
	struct clock *clock;          /* token re-reads and credential expiry; NULL: clock_real() */
	const struct logger *log;     /* NULL: silent */
	long connect_timeout_ms;      /* 0: 10 s */
	long request_timeout_ms;      /* whole blocking request; 0: 60 s */
	int64_t token_reread_s;       /* token file re-read period; 0: 60 s */
	long exec_timeout_ms;         /* an exec plugin's run; 0: 60 s */
	size_t max_body;              /* largest response body kept; 0: 256 MiB */
	const char *user_agent;       /* NULL: "luascale/VERSION" */
	bool verbose;                 /* log requests and response headers at debug
				       * level (Authorization redacted) */
	double write_qps;             /* writes (every method but GET: POST, PUT,
				       * PATCH, DELETE, Events and evictions too) a
				       * second, a token bucket of their own; 0: no
				       * limit; else in [KUBE_WRITE_QPS_MIN, _MAX] */
	int write_burst;              /* writes saved up; >= 1 with write_qps */
	/* Called after every request (kube_request: its method; kube_stream:
	 * "WATCH" or "LIST", see kube_stream_verb) with the HTTP status, 0
	 * when there was no answer; from the calling thread, for metrics.
	 * May be NULL. */
	void (*on_response)(void *ctx, const char *verb, long status);
	void *on_response_ctx;
	/* The write fence (runtime/fence.h; borrowed, must outlive the
	 * client; NULL none): a write (every method but GET) goes out only
	 * while it holds — asked before the write token, during its wait
	 * (which ends at once when the fence closes or lapses) and again
	 * right before sending. A refused write fails with "not sent: ...".
	 * The Lease's own client has none. */
	struct fence *fence;
	/* No write at all (a dry run): every method but GET fails with
	 * "not sent: a dry run writes nothing", counted as refused. */
	bool read_only;
};

#define KUBE_WRITE_QPS_MIN 0.001
#define KUBE_WRITE_QPS_MAX 1e6

/*
 * Returns a client for 'cfg' (copied: the caller may free it afterwards)
 * or NULL with a message. Nothing is contacted yet; files named by the
 * config (token file) are read on first use. An exec plugin whose
 * interactiveMode is Always is refused here (luascale has no terminal).
 * TLS is verified unless cfg says insecure-skip-tls-verify. 'opts' may be
 * NULL for defaults; its clock and logger are borrowed and must outlive the
 * client.
 */
struct kube_client *kube_client_new(const struct kube_config *cfg,
				    const struct kube_client_opts *opts, struct errbuf *err);

/* Frees the client. No call may be in flight. NULL is a no-op. */
void kube_client_free(struct kube_client *c);

/* The server URL ("https://host:port") as it may be logged: user
 * information in it is redacted. Borrowed. */
const char *kube_client_server(const struct kube_client *c);

/* How much of the client's traffic kube_client_cancel() ends. */
enum kube_cancel {
	KUBE_CANCEL_NONE,
	KUBE_CANCEL_READS, /* stopping: reads (GETs, watches) end within about a
			    * second and are refused from now on; writes (those
			    * waiting for the rate limit too) are still sent:
			    * the grace period gives cordons back */
	KUBE_CANCEL_ALL,   /* everything in flight ends within about a second;
			    * nothing more is sent */
};

/* Raises the client's cancel level (never lowers it). Any thread; meant
 * for shutdown. A request it ends fails with "luascale is stopping". */
void kube_client_cancel(struct kube_client *c, enum kube_cancel level);

/* Writes waiting for a token of the write rate limit now (tests, metrics). */
int kube_client_writes_waiting(struct kube_client *c);

/* A response. Owned by the caller once filled: kube_response_free(). */
struct kube_response {
	long status;         /* HTTP status; 0 when no response was received */
	char *body;          /* NUL-terminated (may be ""), or NULL */
	size_t body_len;
	/* For status >= 400: the Status object's "reason" ("NotFound",
	 * "Conflict", "Expired"...) and "message", or a summary of a non-Status
	 * body. Never holds a credential. */
	char reason[64];
	char message[256];
};

/* Frees the body and resets 'r'. Safe on a zeroed or already freed response. */
void kube_response_free(struct kube_response *r);

/*
 * One blocking request. 'method' "GET", "POST", "PUT", "PATCH", "DELETE";
 * 'path' is the path and query ("/api/v1/nodes?limit=500"), escaped by the
 * caller (kube_escape helps); 'content_type' and 'body' may be NULL (no
 * body). Sends Accept: application/json. On a 401 the credential is
 * refreshed (token file re-read, exec plugin re-run) and the request sent
 * once more; nothing else is retried (409, 429, 5xx are the caller's).
 * Returns 0 when the server answered, whatever the status (check
 * resp->status; resp->message explains a failure), or -1 when there is no
 * answer (connection, TLS, timeout, credential plugin, the write rate
 * limit, kube_client_cancel()) with a message in 'err'. A write first
 * waits for a token of the client's write bucket (at most the request
 * timeout; kube_client_cancel(KUBE_CANCEL_ALL) ends the wait). 'resp' is always
 * initialised; free it either way.
 */
int kube_request(struct kube_client *c, const char *method, const char *path,
		 const char *content_type, const char *body, size_t body_len,
		 struct kube_response *resp, struct errbuf *err);

/* ---- streaming (watches) ---- */

/*
 * Called with one complete top-level JSON value of the stream (a watch
 * event object), NUL-terminated, borrowed for the call. Objects split over
 * several network reads are assembled first; several in one read come one
 * call each. Returns 0 to go on, non-zero to stop the stream.
 */
typedef int (*kube_stream_fn)(void *ctx, const char *json, size_t len);

enum kube_stream_end {
	KUBE_STREAM_EOF,      /* the server ended the response (e.g. timeoutSeconds) */
	KUBE_STREAM_STOPPED,  /* *stop became non-zero */
	KUBE_STREAM_CALLBACK, /* the callback returned non-zero */
	KUBE_STREAM_TIMEOUT,  /* timeout_ms or idle_timeout_ms ran out */
	KUBE_STREAM_STATUS,   /* the server answered with an error status (resp) */
};

struct kube_stream_opts {
	const atomic_int *stop;   /* set non-zero from any thread to stop; may be NULL */
	long timeout_ms;          /* whole stream; 0: none */
	long idle_timeout_ms;     /* no byte for this long ends it; 0: none */
	size_t max_object;        /* largest single object; 0: 64 MiB */
	/* Called once (with the stream's ctx, on the calling thread) when the
	 * server has answered 2xx: the stream is open, though no event may
	 * have come yet. May be NULL. */
	void (*on_open)(void *ctx);
};

/* The verb a streamed GET of 'path' counts as: "WATCH" when its query
 * asks for a watch (watch=1 or watch=true), else "LIST". */
const char *kube_stream_verb(const char *path);

/*
 * A streaming GET of 'path' (e.g. "...?watch=1&resourceVersion=RV"). With a
 * 2xx status the body is split into JSON values handed to 'fn' as they
 * complete; an incomplete value at the end is dropped (a truncated stream).
 * With another status the body is kept in resp (not streamed) and *end is
 * KUBE_STREAM_STATUS. A 401 before any byte of body is retried once after
 * refreshing the credential. The stop flag is checked at least every
 * second. Returns 0 with *end saying why the stream ended, or -1 with a
 * message on a connection/TLS/credential failure, a connection dropped
 * mid-stream (resp->status is then the 2xx the stream had started with, and
 * every complete object before the drop was delivered), or a malformed
 * stream (not JSON, object too large). 'resp' gets the status and, for
 * errors, the body; free it either way. Blocks the calling thread.
 */
int kube_stream(struct kube_client *c, const char *path, const struct kube_stream_opts *opts,
		kube_stream_fn fn, void *ctx, enum kube_stream_end *end,
		struct kube_response *resp, struct errbuf *err);

/* ---- the splitter under kube_stream, for callers feeding bytes themselves ---- */

struct kube_splitter;

/* Returns a splitter handing values to 'fn' (max_object 0: 64 MiB), or NULL (OOM). */
struct kube_splitter *kube_splitter_new(size_t max_object, kube_stream_fn fn, void *ctx);
void kube_splitter_free(struct kube_splitter *s);

/*
 * Feeds bytes. Returns 0; 1 when the callback asked to stop (the rest of
 * 'data' is not consumed); -1 with a message when the stream is not a
 * sequence of JSON objects/arrays or an object exceeds the maximum.
 */
int kube_splitter_feed(struct kube_splitter *s, const char *data, size_t len,
		       struct errbuf *err);

/* Bytes of an unfinished value held (0 at a clean boundary). */
size_t kube_splitter_pending(const struct kube_splitter *s);

/* ---- helpers ---- */

/* Appends 's' percent-encoded for a path segment or query value (all but
 * unreserved characters A-Z a-z 0-9 - . _ ~ are escaped). Returns 0 or -1 (OOM). */
int kube_escape(struct buf *b, const char *s);

/* Parses an RFC 3339 time ("2026-01-02T15:04:05Z", fractions and offsets
 * allowed) into unix seconds. Returns 0 or -1. */
int kube_parse_time(const char *s, int64_t *out);

#endif
