/*
 * gceauth: the GCE provider's OAuth access token — a service-account JSON
 * key (an RS256 JWT exchanged at the token endpoint) or the metadata
 * server — cached and refreshed through credcache, plus the project and
 * zone from the metadata server. HTTP is cloudhttp's; compute calls are not here.
 */
#ifndef LUASCALE_GCE_AUTH_H
#define LUASCALE_GCE_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "errbuf.h"
#include "log.h"
#include "runtime/clock.h"

struct cloudhttp;
struct oauth_source;

/* Where gceauth reads environment variables: getenv semantics ('get'
 * returns NULL when unset). A NULL 'get' reads the process's environment. */
struct gce_env {
	const char *(*get)(void *ud, const char *name);
	void *ud;
};

#define GCE_AUTH_DEFAULT_SCOPE "https://www.googleapis.com/auth/compute"
#define GCE_AUTH_DEFAULT_TOKEN_URI "https://oauth2.googleapis.com/token"
#define GCE_METADATA_DEFAULT_HOST "metadata.google.internal"

/* Refresh windows: one caller refreshes 5 minutes before expiry while the
 * others keep the current token; from 1 minute before, every caller waits. */
#define GCE_AUTH_ADVISORY_S (5 * 60)
#define GCE_AUTH_MANDATORY_S 60

/* The longest access token kept (Google's are a few hundred bytes). */
#define GCE_AUTH_TOKEN_MAX 4096

struct gce_auth_opts {
	struct gce_env env;            /* {NULL, NULL}: the process's environment */
	const char *credentials_file;  /* provider config; NULL: GOOGLE_APPLICATION_CREDENTIALS */
	const char *token_url;         /* provider config: where the JWT is exchanged
					* (and its aud); NULL: the key's token_uri */
	const char *metadata_host;     /* provider config: host[:port]; NULL:
					* GCE_METADATA_HOST, else GCE_METADATA_ROOT (the
					* older name), else metadata.google.internal */
	const char *scope;             /* space-separated; NULL: GCE_AUTH_DEFAULT_SCOPE */
	struct cloudhttp *http;        /* required; borrowed, outlives the source */
	struct clock *clock;           /* NULL: the real clock */
	const struct logger *log;      /* NULL: silent */
	/* Metadata server: one attempt's timeout (0: 1500 ms) and attempts
	 * (0: 2), so a machine that is not on GCE fails within seconds. */
	long metadata_timeout_ms;
	int metadata_attempts;
};

struct gce_auth;

/*
 * Picks the token source, in this order: the service-account key file
 * o->credentials_file, else the one GOOGLE_APPLICATION_CREDENTIALS names
 * (read, validated and its private key loaded now: a key that is broken,
 * not type "service_account", or whose token_uri is neither https nor http
 * to a loopback address is an error here, never a fall-through); else the
 * metadata server (contacted when a token is first asked for). Returns NULL
 * with a message naming the file or the setting at fault.
 */
struct gce_auth *gce_auth_new(const struct gce_auth_opts *o, struct errbuf *err);

/*
 * The access token's source (cloudhttp/oauth.h), borrowed for as long as
 * 'a' lives: oauth_source_token() copies a valid token (fetched first when
 * there is none or it is inside a refresh window; a failed refresh keeps
 * the current token until it expires; messages never hold a secret, the
 * endpoint's code first), oauth_source_prepare() sets a request's
 * "Authorization: Bearer" before every attempt (a retry after a refresh
 * carries the new token), oauth_source_last_error() gives the last failed
 * fetch whole ("invalid_grant: Invalid JWT Signature. (likely cause: ...);
 * service account key FILE: token endpoint URL: HTTP 400"), and
 * oauth_source_invalidate() drops the token after the cloud answered 401.
 * Thread-safe.
 */
struct oauth_source *gce_auth_bearer(struct gce_auth *a);

/* The chosen source: "service-account-key" or "metadata-server". Static. */
const char *gce_auth_source(const struct gce_auth *a);

/* Copies the account's email into 'out': the key's client_email, or the
 * metadata server's default account once a token was fetched ("default"
 * before). Thread-safe. */
void gce_auth_account(struct gce_auth *a, char *out, size_t len);

/* Wipes the token and the private key and frees. NULL is a no-op. */
void gce_auth_free(struct gce_auth *a);

/*
 * Reads the project id (project/project-id) and the zone (instance/zone,
 * "projects/NUM/zones/us-central1-a" -> "us-central1-a") from the metadata
 * server named by o (metadata_host, GCE_METADATA_HOST, the default), each
 * answer checked to carry "Metadata-Flavor: Google". Returns 0, or -1 with
 * a message (a machine off GCE fails within the metadata timeouts).
 */
int gce_metadata_project_zone(const struct gce_auth_opts *o, char *project, size_t project_len,
			      char *zone, size_t zone_len, struct errbuf *err);

/* ---- service-account keys and JWTs (also for tests and `luascale gce-jwt`) ---- */

struct gce_jwt_key;

/*
 * Reads and parses the service-account JSON key file at 'path' (at most 64
 * KiB): type "service_account", client_email, private_key (PEM, PKCS#8 or
 * PKCS#1 RSA of at least 2048 bits, unencrypted), private_key_id
 * (optional: the JWT header's kid), token_uri (default
 * GCE_AUTH_DEFAULT_TOKEN_URI; https, or http only to a loopback host).
 * Returns the key (free with gce_jwt_key_free) or NULL with a message that
 * names the file and says what is supported when the type is another.
 */
struct gce_jwt_key *gce_jwt_key_load(const char *path, struct errbuf *err);

/* The key's client_email and token_uri, borrowed from 'k'. */
const char *gce_jwt_key_email(const struct gce_jwt_key *k);
const char *gce_jwt_key_token_uri(const struct gce_jwt_key *k);

/* Wipes and frees a key. NULL is a no-op. */
void gce_jwt_key_free(struct gce_jwt_key *k);

/*
 * Appends to 'out' the signed assertion for the JWT bearer grant:
 * header {"alg":"RS256","typ":"JWT","kid":private_key_id}, claims
 * iss=client_email, scope ('scope', NULL: the default), aud ('aud', NULL:
 * the key's token_uri), iat='now', exp=now+3600, RS256 over
 * base64url(header).base64url(claims), unpadded base64url throughout.
 * Returns 0, or -1 with a message ('out' may hold part of it: wipe it).
 */
int gce_jwt_assertion(const struct gce_jwt_key *k, const char *aud, int64_t now,
		      const char *scope, struct buf *out, struct errbuf *err);

/* Checks a token endpoint URL: https to any host, or http only to
 * 127.0.0.0/8, ::1 or localhost; no user info, query or fragment.
 * Returns 0 or -1 with the reason. */
int gce_auth_check_token_url(const char *url, struct errbuf *err);

#endif
