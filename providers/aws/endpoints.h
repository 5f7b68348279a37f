/*
 * endpoints: which URL each AWS service (EC2, Auto Scaling, STS, SQS) is called
 * at: an override from the provider's config, the AWS_ENDPOINT_URL_*
 * variables and the shared config file as the AWS SDKs read them, or the
 * regional default. Also the environment lookup every AWS module shares.
 */
#ifndef LUASCALE_AWS_ENDPOINTS_H
#define LUASCALE_AWS_ENDPOINTS_H

#include <stddef.h>

#include "errbuf.h"

/* Where the AWS modules read environment variables: getenv semantics
 * ('get' returns NULL when unset). A NULL 'get' reads the process's
 * environment, so tests inject a table and the daemon passes nothing. */
struct aws_env {
	const char *(*get)(void *ud, const char *name);
	void *ud;
};

/* Value of 'name' from 'e' (NULL 'e' or 'e->get': getenv), or NULL when it
 * is unset or empty (the SDKs treat an empty variable as unset). */
const char *aws_env_get(const struct aws_env *e, const char *name);

/* True when 'name' is set to "true" in any case. */
int aws_env_true(const struct aws_env *e, const char *name);

enum aws_service {
	AWS_SERVICE_EC2,
	AWS_SERVICE_AUTOSCALING,
	AWS_SERVICE_STS,
	AWS_SERVICE_SQS,         /* interruption notices (provider.aws.interruption_queue) */
	AWS_SERVICE_COUNT,
};

/* The service's endpoint prefix ("ec2", "autoscaling", "sts", "sqs"). */
const char *aws_service_name(enum aws_service s);

/* The SDKs' service id as an environment suffix and a shared-config key:
 * "EC2" / "ec2", "AUTO_SCALING" / "auto_scaling", "STS" / "sts", "SQS" / "sqs". */
const char *aws_service_env_id(enum aws_service s);
const char *aws_service_config_id(enum aws_service s);

/* Explicit per-service URLs from the provider's config
 * (provider.aws.endpoints); NULL or "" means none. Borrowed. */
struct aws_endpoint_overrides {
	const char *url[AWS_SERVICE_COUNT];
};

/* What the shared config file's selected profile says about endpoints
 * (filled by aws_profile_load; all "" when there is no profile). */
struct aws_endpoint_profile {
	char endpoint_url[1024];                  /* the profile's endpoint_url */
	char service_url[AWS_SERVICE_COUNT][1024]; /* its services section */
	int ignore_configured;                    /* ignore_configured_endpoint_urls */
};

/*
 * Resolves the URL of 'svc' in 'region' into 'out' ('len' bytes), in this
 * order: 'ov' (the provider's config); unless AWS_IGNORE_CONFIGURED_ENDPOINT_URLS
 * (or the profile's ignore_configured_endpoint_urls) is true,
 * AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL, the profile's services
 * section, the profile's endpoint_url; else https://<svc>.<region>.amazonaws.com
 * (amazonaws.com.cn in cn-* regions; STS without a region is the global
 * https://sts.amazonaws.com). 'ov', 'env' and 'prof' may be NULL. '*from'
 * (may be NULL) is set to a static name of where the URL came from.
 * Returns 0, or -1 with a message naming the setting that is wrong.
 */
int aws_endpoint_resolve(enum aws_service svc, const char *region,
			 const struct aws_endpoint_overrides *ov, const struct aws_env *env,
			 const struct aws_endpoint_profile *prof, char *out, size_t len,
			 const char **from, struct errbuf *err);

/* Checks an endpoint URL: http or https, a host, an optional port, an
 * optional path; no user info, query, fragment, spaces or control
 * characters. Returns 0 or -1 with the reason in 'err'. */
int aws_endpoint_validate(const char *url, struct errbuf *err);

/* Checks a region name: 1-63 of [a-z0-9-], starting with a letter.
 * Returns 0 or -1 with the reason in 'err'. */
int aws_region_validate(const char *region, struct errbuf *err);

#endif
