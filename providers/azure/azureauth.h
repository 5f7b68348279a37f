/*
 * azureauth: the Azure provider's Microsoft Entra access token for Azure
 * Resource Manager — a client secret, a workload identity (a federated
 * token file, re-read on every refresh) or a managed identity through the
 * instance metadata service — cached and refreshed through credcache.
 * HTTP is cloudhttp's; ARM calls are not here.
 */
#ifndef LUASCALE_AZURE_AUTH_H
#define LUASCALE_AZURE_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"
#include "log.h"
#include "runtime/clock.h"

struct cloudhttp;
struct oauth_source;

/* Where azureauth and the provider read environment variables: getenv
 * semantics ('get' returns NULL when unset). A NULL 'get' reads the
 * process's environment. */
struct azure_env {
	const char *(*get)(void *ud, const char *name);
	void *ud;
};

/* A variable's value, or NULL when unset or empty. */
const char *azure_env_get(const struct azure_env *e, const char *name);

#define AZURE_IMDS_DEFAULT "http://169.254.169.254"
#define AZURE_IMDS_TOKEN_PATH "/metadata/identity/oauth2/token"
#define AZURE_IMDS_API_VERSION "2018-02-01"
#define AZURE_CLIENT_ASSERTION_TYPE "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

/* Refresh 5 minutes before expiry, every caller waiting from then (the
 * Azure SDKs' window). */
#define AZURE_AUTH_REFRESH_S (5 * 60)

/* The longest access token kept (Entra tokens are 1-3 KiB). */
#define AZURE_AUTH_TOKEN_MAX 8192

enum azure_auth_kind {
	AZURE_AUTH_CLIENT_SECRET,
	AZURE_AUTH_WORKLOAD_IDENTITY,
	AZURE_AUTH_MANAGED_IDENTITY,
};

struct azure_auth_opts {
	struct azure_env env;            /* {NULL, NULL}: the process's environment */
	const char *mode;                /* NULL or "auto", "client_secret",
					  * "workload_identity", "managed_identity" */
	/* From the config (NULL: the environment, as named): */
	const char *tenant_id;           /* AZURE_TENANT_ID, then ARM_TENANT_ID */
	const char *client_id;           /* AZURE_CLIENT_ID, then ARM_CLIENT_ID */
	const char *client_secret_file;  /* re-read on each refresh; else AZURE_CLIENT_SECRET,
					  * then ARM_CLIENT_SECRET */
	const char *federated_token_file;/* AZURE_FEDERATED_TOKEN_FILE */
	const char *identity_client_id;  /* ARM_USER_ASSIGNED_IDENTITY_ID, then AZURE_CLIENT_ID */
	const char *authority;           /* AZURE_AUTHORITY_HOST, then default_authority */
	const char *imds;                /* AZURE_POD_IDENTITY_AUTHORITY_HOST, then AZURE_IMDS_DEFAULT */
	/* The cloud's: */
	const char *default_authority;   /* "https://login.microsoftonline.com/" when NULL */
	const char *resource;            /* the ARM audience; "https://management.azure.com/" when NULL */
	struct cloudhttp *http;          /* required; borrowed, outlives the source */
	struct clock *clock;             /* NULL: the real clock */
	const struct logger *log;        /* NULL: silent */
	long imds_timeout_ms;            /* one IMDS attempt (0: 5 s) */
};

struct azure_auth;

/*
 * Picks the credential, in this order: 'mode' when it names one (its
 * settings must all be there); else ARM_USE_WORKLOAD_IDENTITY_EXTENSION or
 * ARM_USE_MANAGED_IDENTITY_EXTENSION set true; else a client secret when a
 * tenant, a client id and a secret are given; else a workload identity
 * when a tenant, a client id and a federated token file are; else the
 * managed identity. Endpoints are checked now (https, or http only to a
 * loopback address; the metadata service also at 169.254.169.254); nothing
 * is contacted yet. NULL with a message naming the setting at fault.
 */
struct azure_auth *azure_auth_new(const struct azure_auth_opts *o, struct errbuf *err);

/*
 * The access token's source (cloudhttp/oauth.h), borrowed for as long as
 * 'a' lives: oauth_source_token() copies a valid token (fetched first when
 * there is none or it is within 5 minutes of expiry; a failed refresh
 * keeps one still valid; messages name the source and what it answered,
 * never a secret), oauth_source_prepare() sets a request's "Authorization:
 * Bearer", oauth_source_last_error() gives the last failed fetch whole,
 * Entra's code first ("AADSTS7000215: Invalid client secret provided. ...
 * (likely cause: ...); client-secret: token endpoint URL: HTTP 401
 * invalid_client"), and oauth_source_invalidate() drops the token after
 * ARM answered 401. Thread-safe.
 */
struct oauth_source *azure_auth_bearer(struct azure_auth *a);

/* The chosen credential. */
enum azure_auth_kind azure_auth_kind(const struct azure_auth *a);

/* Its name: "client-secret", "workload-identity" or "managed-identity". Static. */
const char *azure_auth_source(const struct azure_auth *a);

/* Wipes the token and the secret and frees. NULL is a no-op. */
void azure_auth_free(struct azure_auth *a);

/*
 * Checks an endpoint URL: https to any host, or http only to 127.0.0.0/8,
 * ::1 or localhost ('link_local' also allows http to 169.254.169.254, the
 * metadata service); no user info, query or fragment. 'what' names it in
 * the message. Returns 0 or -1.
 */
int azure_check_endpoint(const char *url, const char *what, bool link_local, struct errbuf *err);

#endif
