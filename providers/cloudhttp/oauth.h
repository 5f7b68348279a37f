/*
 * oauth: what every cloud's OAuth 2.0 bearer token source shares — endpoint
 * URL checks, credential fields, secret and token files, the grants'
 * request forms (client credentials, client assertion, JWT bearer) and
 * their POST, reading a token answer and an OAuth error answer, and the
 * cached token (credcache) with its last error and the Bearer header hook.
 * It knows no cloud: which grant, which endpoint, which scope or resource
 * and the wording of the source are the provider's (azureauth, gceauth,
 * aws/credentials); signing a JWT is jwt.h's, the metadata server metadata.h's.
 */
#ifndef LUASCALE_OAUTH_H
#define LUASCALE_OAUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"
#include "log.h"
#include "runtime/clock.h"

struct buf;
struct cJSON;
struct cloudhttp;
struct cloudhttp_headers;
struct cloudhttp_response;

/* The longest access token an oauth_source may keep. */
#define OAUTH_TOKEN_LIMIT 8192

/* ---- wiping what held a secret ---- */

/* Wipes the body of 'r', then frees it as cloudhttp_response_free(). */
void oauth_wipe_response(struct cloudhttp_response *r);

/* Wipes the whole allocation of 'b', then frees it as buf_free(). */
void oauth_wipe_buf(struct buf *b);

/* Wipes every string value of a parsed JSON tree, then deletes it. NULL is
 * a no-op. */
void oauth_json_delete(struct cJSON *j);

/* Parses 'body' as a JSON object: the tree (free it with oauth_json_delete),
 * or NULL with "WHERE: the answer is not a JSON object". */
struct cJSON *oauth_json_object(const char *body, const char *where, struct errbuf *err);

/* ---- settings ---- */

/* The variable 'name' through 'get' (getenv semantics; 'ud' is its first
 * argument) or, when 'get' is NULL, from the process's environment; NULL
 * when it is unset or empty. */
const char *oauth_env_get(const char *(*get)(void *ud, const char *name), void *ud,
			  const char *name);

/* ---- checks ---- */

/* True when every byte is printable ASCII; a space only when 'spaces'. */
bool oauth_printable(const char *s, bool spaces);

/* True for "localhost", 127.0.0.0/8 and ::1 (a local simulator's host). */
bool oauth_loopback_host(const char *host);

/*
 * Checks an endpoint URL: https to any host, or http only to 127.0.0.0/8,
 * ::1 or localhost ('link_local' also allows http to 169.254.169.254, a
 * metadata service); no user info, query or fragment. 'what' leads the
 * message ("WHAT: URL must be https (...)"). Returns 0 or -1.
 */
int oauth_check_url(const char *url, const char *what, bool link_local, struct errbuf *err);

/*
 * Checks a credential field of 'n' bytes at 'v' (not NUL-terminated): not
 * empty, printable ASCII without spaces, fitting in 'len' bytes with its
 * NUL. Returns 0, or -1 with "WHERE: WHAT is empty", "... is longer than N
 * bytes" or "... holds a character that is not printable ASCII".
 */
int oauth_check_field(const char *v, size_t n, size_t len, const char *what, const char *where,
		      struct errbuf *err);

/* Copies a field that passes oauth_check_field() into 'out', NUL-terminated. */
int oauth_copy_field(char *out, size_t len, const char *v, size_t n, const char *what,
		     const char *where, struct errbuf *err);

/*
 * Reads a file holding a secret or an assertion (a client secret, a
 * workload identity's federated token; at most 64 KiB) into 'out', trimmed
 * of blanks. Returns 0, or -1 with "WHAT PATH is empty", "... holds a
 * space or a character that is not printable ASCII" or the read error
 * prefixed with 'what'. Wipe 'out' with oauth_wipe_buf() either way.
 */
int oauth_read_secret_file(const char *path, const char *what, struct buf *out,
			   struct errbuf *err);

/*
 * Reads a bearer token file (a web identity token, an authorization token;
 * at most 64 KiB, re-read on each refresh) into 'out' without trailing
 * blanks. Spaces inside are kept; a control character is refused, as the
 * token becomes an HTTP value. Returns 0, or -1 with "WHAT: PATH is empty",
 * "WHAT: PATH holds a control character (a token is one line)" or the read
 * error prefixed with 'what'. Wipe 'out' with oauth_wipe_buf() either way.
 */
int oauth_read_token_file(const char *path, const char *what, struct buf *out,
			  struct errbuf *err);

/* ---- token requests ---- */

/* RFC 7523's grant type and client assertion type. */
#define OAUTH_JWT_BEARER_GRANT "urn:ietf:params:oauth:grant-type:jwt-bearer"
#define OAUTH_CLIENT_ASSERTION_TYPE "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

/* Appends "name=value" to an x-www-form-urlencoded body ("&" first unless
 * 'b' is empty), the value percent-encoded. Out of memory sets b->oom. */
void oauth_form_add(struct buf *b, const char *name, const char *value);

/* The form of a JWT bearer grant (RFC 7523 section 2.1): grant_type and
 * the signed 'assertion'. */
void oauth_form_jwt_bearer(struct buf *b, const char *assertion);

/* The form of a client credentials grant (RFC 6749 section 4.4) for
 * 'client_id' and 'scope', the client authenticated by 'secret' or, when
 * 'secret' is NULL, by the JWT 'assertion' (RFC 7523 section 2.2). */
void oauth_form_client_credentials(struct buf *b, const char *client_id, const char *scope,
				   const char *secret, const char *assertion);

/*
 * POSTs the form 'form' to the token endpoint 'url' (with cloudhttp_call's
 * retries) asking for JSON. Returns 0 with the HTTP 200 answer in 'r'
 * (wipe it with oauth_wipe_response); else -1: no answer ('err' prefixed
 * with 'who'), or another status (oauth_error() with 'where', no note).
 * 'full' ("" on entry) receives the whole message of an error answer.
 */
int oauth_post_form(struct cloudhttp *http, const char *url, const struct buf *form,
		    const char *who, const char *where, struct cloudhttp_response *r, char *full,
		    size_t full_len, struct errbuf *err);

/*
 * An OAuth error answer, the endpoint's code first: "invalid_grant: Invalid
 * JWT Signature. (likely cause: ...); WHERE: HTTP 400[; NOTE]" into 'full'
 * ('len' bytes, provider_cloud_message()) and, cut to its size, into 'err'.
 * The code is the answer's "error"; when its error_description starts with
 * an Entra code ("AADSTS7000215: ..."), that code leads and "error" follows
 * the status ("HTTP 401 invalid_client"). An API error object
 * {"error":{"status"|"code", "message"}} is read too. Only the answer's
 * error fields are quoted, never what was sent.
 */
void oauth_error(const struct cloudhttp_response *r, const char *where, const char *note,
		 char *full, size_t len, struct errbuf *err);

/* ---- token answers ---- */

/* What a token answer must satisfy beyond access_token, expires_in and a
 * Bearer token_type when there is one. */
struct oauth_token_rules {
	bool type_required;     /* token_type must be there */
	bool expires_on;        /* expires_in may be a string of digits, and
				 * expires_on (unix seconds) stands in when it
				 * is absent (Azure's metadata service) */
	const char *resource;   /* an answer naming another "resource" is refused */
	const char *client_id;  /* an answer naming another "client_id" is refused */
};

/*
 * Reads a token answer {"access_token", "expires_in", "token_type"} under
 * 'rules' (NULL: none of them): the token (printable ASCII, shorter than
 * 'len') into 'out', its expiry 'now' + a lifetime of 1 s to 7 days into
 * '*expires_s'. Returns 0, or -1 with "WHERE: what is wrong", never the
 * token.
 */
int oauth_parse_token(const char *body, const char *where, int64_t now,
		      const struct oauth_token_rules *rules, char *out, size_t len,
		      int64_t *expires_s, struct errbuf *err);

/*
 * One token request: oauth_post_form() of 'form' to 'url', then
 * oauth_parse_token() of the answer with expiries from 'now'. The answer
 * is wiped. Returns 0, or -1 as those do.
 */
int oauth_request_token(struct cloudhttp *http, const char *url, const struct buf *form,
			const char *who, const char *where, int64_t now,
			const struct oauth_token_rules *rules, char *out, size_t len,
			int64_t *expires_s, char *full, size_t full_len, struct errbuf *err);

/* ---- the cached token ---- */

/*
 * Fetches a fresh access token into 'token' ('len' bytes, zeroed) and its
 * expiry (unix seconds) into '*expires_s'. Returns 0, or -1 with a message
 * in 'err' (never a secret) and, when the endpoint answered an error, its
 * whole message in 'full' ('full_len' bytes, "" on entry).
 */
typedef int (*oauth_fetch_fn)(void *ud, char *token, size_t len, int64_t *expires_s,
			      char *full, size_t full_len, struct errbuf *err);

struct oauth_source_opts {
	const char *name;          /* credcache's, for log lines: "gce access token" */
	const char *who;           /* leads this module's own messages: "gce auth" */
	size_t token_max;          /* bytes kept, NUL included; at most OAUTH_TOKEN_LIMIT */
	oauth_fetch_fn fetch;
	void *ud;                  /* handed to 'fetch' */
	int64_t advisory_s;        /* credcache's refresh windows */
	int64_t mandatory_s;
	struct clock *clock;       /* NULL: the real clock */
	const struct logger *log;  /* NULL: silent */
};

struct oauth_source;

/* Creates the source (nothing is fetched yet). Returns NULL with a
 * message when the options are invalid or out of memory. */
struct oauth_source *oauth_source_new(const struct oauth_source_opts *o, struct errbuf *err);

/*
 * Copies a valid access token into 'out' ('len' bytes, NUL included) and
 * its expiry into '*expires_s' (may be NULL), fetching first when there is
 * none or it is inside a refresh window (credcache_get). Returns 0, or -1
 * with the fetch's message, or "WHO: the access token (N bytes) does not
 * fit in LEN". Thread-safe.
 */
int oauth_source_token(struct oauth_source *s, char *out, size_t len, int64_t *expires_s,
		       struct errbuf *err);

/* Sets "Authorization: Bearer <token>" in 'extra' (a cloudhttp prepare
 * hook's body). Returns 0, or -1 with oauth_source_token()'s message or
 * "WHO: the access token is not a valid header value". */
int oauth_source_prepare(struct oauth_source *s, struct cloudhttp_headers *extra,
			 struct errbuf *err);

/* Copies the whole message of the last failed fetch ("" after a success
 * or before any failure) into 'out'. Thread-safe. */
void oauth_source_last_error(struct oauth_source *s, char *out, size_t len);

/* Drops the cached token so the next oauth_source_token() fetches anew. */
void oauth_source_invalidate(struct oauth_source *s);

/* Wipes the token and frees. NULL is a no-op. No call may be running. */
void oauth_source_free(struct oauth_source *s);

#endif
