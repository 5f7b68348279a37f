/*
 * providers/azure: the provider interface on Azure — node groups that are
 * virtual machine scale sets (named in the config or found by their tags),
 * launched by raising sku.capacity under the scale set's etag and followed
 * through the long-running operation, with Entra tokens from azureauth.c.
 */
#ifndef LUASCALE_PROVIDERS_AZURE_H
#define LUASCALE_PROVIDERS_AZURE_H

#include <stdatomic.h>
#include <stdint.h>

#include "config.h"
#include "errbuf.h"
#include "log.h"
#include "providers/azure/azureauth.h"
#include "providers/provider.h"
#include "runtime/clock.h"

struct azure_provider_opts {
	const struct config *config;  /* groups, provider.azure, buckets; borrowed, outlives it */
	struct clock *clock;          /* NULL: the real clock; waits sleep on it */
	const struct logger *log;     /* NULL: silent */
	struct azure_env env;         /* {NULL, NULL}: the process's environment */
	const atomic_bool *cancel;    /* shutdown: ends waits and calls; may be NULL */
	int64_t launch_wait_ms;       /* how long a launch follows its operation and VMs
				       * (0: 10 minutes) */
	int64_t poll_ms;              /* between two looks when the cloud names no
				       * Retry-After (0: 5 s) */
	int max_attempts;             /* HTTP attempts of one call (0: 5) */
	const char *ca_file;          /* TLS trust (NULL: the system's) */
};

/*
 * An Azure provider. Resolves the subscription (config, ARM_SUBSCRIPTION_ID,
 * AZURE_SUBSCRIPTION_ID), every group's resource group (its own, then
 * provider.azure.resource_group, then ARM_RESOURCE_GROUP), the endpoints
 * (config, then LUASCALE_SIM_AZURE_ARM_ENDPOINT for a loopback simulator,
 * then the cloud's: provider.azure.cloud, else ARM_CLOUD) and the
 * credential now; contacts nothing. Calls block
 * their thread. NULL with a message naming what is missing or wrong.
 */
struct provider *azure_provider_new(const struct azure_provider_opts *o, struct errbuf *err);

/* Calls made so far of one kind ("vmss.get", "vmss.list", "vmss.put",
 * "vms.list", "vms.delete", "lro"), for tests and benchmarks. */
uint64_t azure_provider_calls(const struct provider *p, const char *what);

/* When ARM's throttling window for reads ('writes' false) or writes ends,
 * on the provider's monotonic clock (ns); 0 when none is known. */
int64_t azure_provider_throttled_until(const struct provider *p, bool writes);

#endif
