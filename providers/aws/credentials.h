/*
 * credentials: the AWS credential chain (environment, shared files and
 * profiles, web identity / IRSA, container credentials / EKS Pod Identity,
 * the EC2 instance metadata service), cached and refreshed before expiry,
 * and the region resolution. Signing is sigv4's; HTTP is cloudhttp's.
 */
#ifndef LUASCALE_AWS_CREDENTIALS_H
#define LUASCALE_AWS_CREDENTIALS_H

#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"
#include "log.h"
#include "providers/aws/endpoints.h"
#include "wire/sigv4.h"
#include "runtime/clock.h"

struct cloudhttp;

struct aws_credchain_opts {
	const struct aws_env *env;       /* NULL: the process's environment */
	const char *home;                /* NULL: $HOME (for ~/.aws/...) */
	const char *profile;             /* provider.aws.profile; NULL: AWS_PROFILE,
					  * AWS_DEFAULT_PROFILE, "default" */
	const char *region;              /* provider.aws.region; NULL: resolved */
	const struct aws_endpoint_overrides *endpoints; /* the STS URL; may be NULL */
	struct cloudhttp *http;          /* required; borrowed, outlives the chain */
	struct clock *clock;             /* NULL: the real clock */
	const struct logger *log;        /* NULL: silent */
	/* Instance metadata: one attempt's timeout (0: 1000 ms) and attempts
	 * (0: 2), so a machine that is not on EC2 fails within seconds. */
	long imds_timeout_ms;
	int imds_attempts;
	/* Where the relative container URI and the metadata service live
	 * (NULL: http://169.254.170.2 and http://169.254.169.254; the
	 * metadata one yields to AWS_EC2_METADATA_SERVICE_ENDPOINT). */
	const char *container_base_url;
	const char *imds_base_url;
	/* Refresh windows before expiry (0, 0: 15 and 10 minutes). */
	int64_t advisory_s;
	int64_t mandatory_s;
};

struct aws_credchain;

/*
 * Picks the first configured source, in this order, and returns a chain
 * that fetches from it on the first aws_credchain_get():
 *  1. environment: AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN,
 *     AWS_CREDENTIAL_EXPIRATION);
 *  2. the selected profile of the shared files: aws_access_key_id ... (the
 *     credentials file before the config file), or web_identity_token_file
 *     + role_arn (web identity);
 *  3. web identity: AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN
 *     (+ AWS_ROLE_SESSION_NAME): STS AssumeRoleWithWebIdentity, unsigned,
 *     the token file re-read on every refresh;
 *  4. container: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI (on 169.254.170.2)
 *     or AWS_CONTAINER_CREDENTIALS_FULL_URI (https to any host; http only to
 *     a loopback address, localhost, 169.254.170.2, or the EKS Pod Identity
 *     agent 169.254.170.23 / [fd00:ec2::23]), with AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE (re-read
 *     each time) or AWS_CONTAINER_AUTHORIZATION_TOKEN as Authorization;
 *  5. the instance metadata service (IMDSv2, IMDSv1 when the token is
 *     refused), unless AWS_EC2_METADATA_DISABLED=true.
 * A source that is configured but broken (a half-set pair, a token file
 * without a role, a container URL on a foreign host) is an error here,
 * never a silent fall-through to the next. Returns NULL with a message
 * when nothing is configured or the options are invalid.
 */
struct aws_credchain *aws_credchain_new(const struct aws_credchain_opts *o, struct errbuf *err);

/*
 * Copies valid credentials into 'out' (expires_s 0 for keys that never
 * expire; source set), fetching or refreshing them first when needed (15
 * minutes before expiry advisory, 10 mandatory). A failed refresh keeps
 * the current credentials until they expire. Returns 0, or -1 with a
 * message naming the source ("web identity: STS AssumeRoleWithWebIdentity
 * at URL: AccessDenied: ...") that never holds a secret. Thread-safe.
 */
int aws_credchain_get(struct aws_credchain *c, struct aws_credentials *out, struct errbuf *err);

/* The chosen source's name: "environment", "shared-credentials-file",
 * "shared-config-file", "web-identity", "container", "imds". Static. */
const char *aws_credchain_source(const struct aws_credchain *c);

/* Drops the cached credentials so the next get fetches anew (after the
 * cloud answered ExpiredToken or InvalidClientTokenId). */
void aws_credchain_invalidate(struct aws_credchain *c);

/* Copies the whole message of the last failed fetch into 'out' ('len'
 * bytes; PROVIDER_MESSAGE_MAX holds it): the service's code first
 * ("AccessDenied: Not authorized to perform sts:AssumeRoleWithWebIdentity
 * (likely cause: ...); web identity: STS AssumeRoleWithWebIdentity at URL:
 * HTTP 403"), where aws_credchain_get()'s errbuf may hold only its head.
 * "" when the last fetch succeeded or none failed. Thread-safe. */
void aws_credchain_last_error(struct aws_credchain *c, char *out, size_t len);

/* Wipes and frees the chain. NULL is a no-op. */
void aws_credchain_free(struct aws_credchain *c);

/*
 * Resolves the region into 'out' ('len' bytes): o->region (the provider's
 * config), AWS_REGION, AWS_DEFAULT_REGION, the selected profile's region,
 * then the instance metadata service (placement/region, else
 * placement/availability-zone without its letter) unless
 * AWS_EC2_METADATA_DISABLED=true (o->http may then be NULL). '*from'
 * (may be NULL) names where it came from (static). Returns 0, or -1 with a
 * message saying where it looked.
 */
int aws_region_resolve(const struct aws_credchain_opts *o, char *out, size_t len, const char **from,
		       struct errbuf *err);

/* Every service's URL and where it came from (a static name). */
struct aws_resolved_endpoints {
	char url[AWS_SERVICE_COUNT][1024];
	const char *from[AWS_SERVICE_COUNT];
};

/*
 * Resolves the URL of every service for 'region' as aws_endpoint_resolve()
 * does, with the selected profile of the shared config (o->profile,
 * AWS_PROFILE, ...) read for its endpoint_url and services section, and
 * o->endpoints as the provider's overrides. Logs each URL that is not the
 * default. Returns 0, or -1 with a message naming the setting at fault.
 */
int aws_endpoints_resolve(const struct aws_credchain_opts *o, const char *region,
			  struct aws_resolved_endpoints *out, struct errbuf *err);

#endif
