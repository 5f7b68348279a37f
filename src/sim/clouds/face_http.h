/*
 * sim/face_http: what every cloud face of the simulator needs once — a
 * libmicrohttpd daemon on 127.0.0.1 (plain or TLS) that gathers a
 * request's body before handing it over, private (0600) files for keys and
 * env files, KEY='value' lines, form values and strict integers. No cloud
 * here: the faces (aws_face.c, gce_face.c, azure_face.c) own their wire formats.
 */
#ifndef LUASCALE_SIM_FACE_HTTP_H
#define LUASCALE_SIM_FACE_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>

#include <microhttpd.h>

#include "errbuf.h"
#include "log.h"

struct buf;

/* Bodies above this are refused (too_big). */
#define FACE_HTTP_MAX_BODY (1 << 20)

/*
 * Called once per request with its whole body (NUL-terminated; "" when
 * none). 'bad_body': larger than FACE_HTTP_MAX_BODY, not text (a NUL in
 * it, unless the face takes binary bodies) or out of memory. The handler queues a response on 'conn' and
 * returns what MHD_queue_response returned.
 */
typedef enum MHD_Result (*face_http_fn)(void *ud, struct MHD_Connection *conn, const char *url,
					const char *method, const char *body, size_t len,
					bool bad_body);

struct face_http_opts {
	int port;                  /* 0: a free port */
	const char *name;          /* for log lines: "sim gce" */
	const char *tls_key_pem;   /* both set: serve HTTPS with them (borrowed: they */
	                           /*   must outlive face_http_stop) */
	const char *tls_cert_pem;
	const struct logger *log;  /* borrowed; NULL: silent */
	unsigned timeout_s;        /* an idle connection closes after (0: 300) */
	bool binary;               /* a body may hold NUL bytes (bad_body only when too big) */
};

struct face_http;

/*
 * Listens on 127.0.0.1:o->port and serves each request on a thread of its
 * own through 'fn' (with 'ud'). NULL with a message (port in use, TLS
 * refused by the library, out of memory).
 */
struct face_http *face_http_start(const struct face_http_opts *o, face_http_fn fn, void *ud,
				  struct errbuf *err);

/* The port it listens on. */
int face_http_port(const struct face_http *h);

/* 'body' (taken: left empty) as a response to queue, or NULL when out of memory. */
struct MHD_Response *face_http_response(struct buf *body);

/* Queues 'resp' with status 'code' on 'conn' and lets it go: what
 * MHD_queue_response returned. */
enum MHD_Result face_http_queue(struct MHD_Connection *conn, int code, struct MHD_Response *resp);

/* Stops serving (running requests finish). NULL is ignored. */
void face_http_stop(struct face_http *h);

/* Sleeps 'ns' (> 0) of real time, through EINTR. */
void face_http_sleep_ns(int64_t ns);

/* Opens 'path' for writing, created or truncated, mode 0600. NULL with a message. */
FILE *face_open_private(const char *path, struct errbuf *err);

/* Closes a file from face_open_private: 0, or -1 when a write failed. */
int face_close_file(FILE *out, const char *path, struct errbuf *err);

/* Writes KEY='value' and a newline, the value quoted for a POSIX shell. */
void face_env_line(FILE *out, const char *key, const char *value);

/*
 * The x-www-form-urlencoded value of 'key' in 'body', decoded ('+' a
 * space, %XX a byte other than NUL) into 'out' (size bytes), or NULL when
 * absent, malformed or longer than fits.
 */
const char *face_form_value(const char *body, const char *key, char *out, size_t size);

/* A strict decimal integer in [lo, hi] (digits only, at most 18): 0, or -1. */
int face_parse_int(const char *s, long long lo, long long hi, long long *out);

/* ---- bearer tokens a face hands out and then requires ---- */

#define FACE_TOKENS_MAX 256

struct face_token {
	char value[96];
	int64_t expires_wall;          /* unix seconds */
};

/* The last FACE_TOKENS_MAX tokens issued (older ones stop working). */
struct face_tokens {
	pthread_mutex_t mu;
	uint64_t rng;
	struct face_token t[FACE_TOKENS_MAX];
	size_t next;
};

/* Ready to issue, random draws seeded from 'seed' mixed with the real clock. */
void face_tokens_init(struct face_tokens *t, uint64_t seed);
/* Wipes the tokens. */
void face_tokens_destroy(struct face_tokens *t);
/* A new token "<prefix><32 hex digits>" valid for 'ttl_s' seconds of real time, into 'out'. */
void face_tokens_issue(struct face_tokens *t, const char *prefix, int64_t ttl_s, char *out,
		       size_t size);
/* 0: 'value' is a live token; 1: one that expired; -1: none issued here. */
int face_tokens_check(struct face_tokens *t, const char *value);
/* A random 64-bit draw from the tokens' generator (thread-safe). */
uint64_t face_tokens_rand(struct face_tokens *t);

#endif
