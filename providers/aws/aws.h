/*
 * providers/aws: the provider interface on Amazon EC2 — node groups that
 * are Auto Scaling groups (named in the config or found by the Cluster
 * Autoscaler's tags) or fleet groups launched with EC2 CreateFleet, with
 * SigV4-signed calls, the credential chain and endpoint overrides.
 */
#ifndef LUASCALE_PROVIDERS_AWS_H
#define LUASCALE_PROVIDERS_AWS_H

#include <stdatomic.h>
#include <stdint.h>

#include "config.h"
#include "errbuf.h"
#include "log.h"
#include "providers/aws/endpoints.h"
#include "providers/provider.h"
#include "runtime/clock.h"

/* How long a fleet group leaves out an offering (instance type, zone,
 * capacity type) that answered a launch with a capacity error. */
#define AWS_UNAVAILABLE_TTL_NS (3 * 60 * CLOCK_NS_PER_S)

struct aws_provider_opts {
	const struct config *config;  /* groups, provider.aws, token buckets; borrowed,
				       * must outlive the provider */
	struct clock *clock;          /* NULL: the real clock (blocking calls need it) */
	const struct logger *log;     /* NULL: silent */
	const struct aws_env *env;    /* NULL: the process's environment */
	const char *home;             /* NULL: $HOME */
	const atomic_bool *cancel;    /* shutdown: ends waits and calls; may be NULL */
	int64_t launch_wait_ms;       /* an ASG launch waits this long for its instance
				       * ids (0: 5 minutes) */
	int64_t poll_ms;              /* between two looks at a launching ASG (0: 2 s) */
	const char *ca_file;          /* TLS trust (NULL: the system's) */
};

/*
 * An AWS provider. Resolves the region and the endpoints and picks the
 * credential source now (no call is made yet: the first list_groups
 * fetches credentials). Launch, terminate and list_groups block their
 * thread (run them on workers). NULL with a message naming what is wrong
 * (no region, a bad endpoint, no credential source, a bad limit).
 */
struct provider *aws_provider_new(const struct aws_provider_opts *o, struct errbuf *err);

/* Calls made so far, per AWS action (for the benchmark and tests):
 * the count of 'action' ("DescribeAutoScalingGroups"), 0 when none. */
uint64_t aws_provider_calls(const struct provider *p, const char *action);

#endif
