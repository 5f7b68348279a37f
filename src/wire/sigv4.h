/*
 * sigv4: AWS Signature Version 4 (AWS4-HMAC-SHA256, Authorization header
 * form) on OpenSSL's libcrypto — the signer the AWS provider uses and the
 * verifier the simulator's AWS face uses, plus the credentials they share.
 * No I/O, no clock, no shared state (safe from any thread): the caller
 * passes the time. Presigned URLs, SigV4A and S3's single-encoded paths
 * are not handled.
 */
#ifndef LUASCALE_AWS_SIGV4_H
#define LUASCALE_AWS_SIGV4_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "errbuf.h"

/* One set of AWS credentials. Never log the secret key or the token. */
struct aws_credentials {
	char access_key_id[128];
	char secret_access_key[128];
	char session_token[8192];  /* "" for long-term keys */
	int64_t expires_s;         /* unix seconds; 0: never */
	char source[32];           /* "environment", "imds", ... for logs */
};

/* Zeroes the whole struct in a way the compiler cannot drop. 'c' may be NULL. */
void aws_credentials_wipe(struct aws_credentials *c);

struct sigv4_header {
	const char *name, *value;
};

struct sigv4_input {
	const char *method;
	const char *path;   /* as on the wire, already percent-encoded ("/" when NULL or "") */
	const char *query;  /* as on the wire, without '?'; NULL or "" for none */
	const struct sigv4_header *headers; /* as sent, "host" among them */
	size_t n_headers;
	const char *body;
	size_t body_len;
	const char *region, *service;
	int64_t time_s;     /* unix seconds (sign only; verify reads X-Amz-Date) */
};

struct sigv4_output {
	char amz_date[17];        /* YYYYMMDDTHHMMSSZ: send as X-Amz-Date */
	char payload_hash[65];    /* hex SHA-256 of the body (or X-Amz-Content-SHA256's value) */
	char signature[65];
	char signed_headers[1024];
	char authorization[2048]; /* the Authorization header's value */
	struct buf canonical_request; /* holds the session token: print it with sigv4_redact */
	struct buf string_to_sign;
};

/*
 * Signs a request the way AWS specifies and botocore's SigV4Auth does:
 * header names lowercased and sorted, values trimmed with inner runs of
 * spaces and tabs collapsed to one space, repeated headers joined by ','
 * in order; the path normalised (dot segments and empty segments removed)
 * and percent-encoded again (non-S3 services sign the encoded path
 * encoded once more); query keys and values decoded, re-encoded with only
 * A-Za-z0-9-_.~ bare, sorted by key then value, "k=" for an empty value
 * (empty pairs, "a&&b", are dropped).
 *
 * x-amz-date (from in->time_s) and, when cr has a session token,
 * x-amz-security-token are always signed, whatever in->headers holds: any
 * X-Amz-Date (and, with a token, X-Amz-Security-Token) among them is
 * ignored. The caller must then SEND "X-Amz-Date: out->amz_date" and
 * "X-Amz-Security-Token: cr->session_token" with "Authorization:
 * out->authorization". A Date header is signed as any other header.
 * Never signed: user-agent, expect, connection, keep-alive,
 * proxy-authorization, te, trailer, transfer-encoding, upgrade,
 * x-amzn-trace-id, authorization (libcurl and proxies change them).
 * When X-Amz-Content-SHA256 is among the headers its value stands for the
 * body's hash, as in botocore.
 *
 * Refused, with a message in 'err': a missing or repeated Host header, a
 * header name that is not an HTTP token, a value holding a control
 * character (a tab aside) or a newline, an empty region/service/key, a
 * malformed %-escape in the query, a path not starting with '/'.
 * Returns 0 with 'out' filled (free with sigv4_output_free), or -1 ('out'
 * then holds nothing to free, but freeing it is harmless).
 */
int sigv4_sign(const struct sigv4_input *in, const struct aws_credentials *cr,
	       struct sigv4_output *out, struct errbuf *err);

/* Frees the output's buffers (not 'o' itself). 'o' may be NULL. */
void sigv4_output_free(struct sigv4_output *o);

/*
 * Appends 'canonical' (a canonical request) to 'out' with the value of an
 * x-amz-security-token line replaced by "<redacted>", so it can be printed
 * or logged. Returns 0, or -1 when out of memory.
 */
int sigv4_redact(const char *canonical, struct buf *out);

enum sigv4_verdict {
	SIGV4_OK,
	SIGV4_MISSING,     /* no Authorization header */
	SIGV4_INCOMPLETE,  /* Authorization malformed, X-Amz-Date missing, signed header absent */
	SIGV4_UNKNOWN_KEY, /* no such access key, or its session token does not match */
	SIGV4_MISMATCH,    /* the signature (or the scope) is not what the key gives */
	SIGV4_EXPIRED,     /* X-Amz-Date more than 15 minutes from now */
};

/*
 * The error code AWS answers a verdict with for 'service' ("ec2",
 * "autoscaling", "sts", ...): MissingAuthenticationToken,
 * IncompleteSignature, InvalidClientTokenId (AuthFailure for ec2),
 * SignatureDoesNotMatch, RequestExpired; "" for SIGV4_OK. Static string.
 */
const char *sigv4_verdict_code(enum sigv4_verdict v, const char *service);

/* The HTTP status AWS answers a verdict with (200 for SIGV4_OK). */
int sigv4_verdict_http_status(enum sigv4_verdict v);

/* What a verified (or refused) request claimed. */
struct sigv4_scope {
	char access_key_id[128];
	char date[9];      /* YYYYMMDD */
	char region[64];
	char service[64];
	/* The canonical request the verifier computed (token redacted), for
	 * the log when the signature does not match; empty when it got no
	 * further than parsing. Free with sigv4_scope_free. */
	struct buf canonical_request;
};

/* Frees the scope's buffer. 's' may be NULL. */
void sigv4_scope_free(struct sigv4_scope *s);

/* The secret of 'access_key_id', or NULL when unknown. Sets
 * *session_token_out to the key's session token, or NULL/"" for none. */
typedef const char *(*sigv4_secret_fn)(void *ctx, const char *access_key_id,
				       const char **session_token_out);

/*
 * Verifies a received request: 'in' is the request as it arrived, its
 * Authorization header among in->headers; in->time_s is ignored (the
 * request's X-Amz-Date rules). in->region and in->service, when not NULL,
 * are what the credential scope must name; NULL accepts the scope's.
 * Parses "AWS4-HMAC-SHA256 Credential=AKID/DATE/REGION/SERVICE/aws4_request,
 * SignedHeaders=a;b, Signature=hex", recomputes the signature over exactly
 * the SignedHeaders named (all present, host and x-amz-date among them),
 * checks X-Amz-Date is within 15 minutes of now_s and names the scope's
 * day, compares signatures in constant time, and when the key has a
 * session token requires an equal X-Amz-Security-Token (and none when it
 * has none). An X-Amz-Content-SHA256 header must equal the body's hash.
 * 'scope_out' (may be NULL; free with sigv4_scope_free whatever the
 * verdict) gets what the request claimed; 'msg' (may be NULL) an AWS-like
 * message for any verdict but SIGV4_OK. Never puts a secret in either.
 */
enum sigv4_verdict sigv4_verify(const struct sigv4_input *in, int64_t now_s,
				sigv4_secret_fn secret_for, void *ctx,
				struct sigv4_scope *scope_out, struct errbuf *msg);

/* Formats unix seconds as YYYYMMDDTHHMMSSZ into out[17]. Returns 0, or -1
 * when the time is before 1970 or after 9999. */
int sigv4_format_time(int64_t t, char out[17]);

/* Parses YYYYMMDDTHHMMSSZ strictly into unix seconds. Returns 0 or -1. */
int sigv4_parse_time(const char *text, int64_t *out);

#endif
