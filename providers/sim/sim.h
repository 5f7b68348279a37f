/*
 * providers/sim: the provider interface on the simulated cloud (sim/clouds/cloud.h),
 * with the same token buckets a real provider has, so a simulated provider
 * limited to q QPS with burst b behaves like a real one. It owns the buckets,
 * not the cloud.
 */
#ifndef LUASCALE_PROVIDERS_SIM_H
#define LUASCALE_PROVIDERS_SIM_H

#include "errbuf.h"
#include "providers/provider.h"
#include "sim/clouds/cloud.h"

/*
 * A provider of kind "sim" on 'cloud' (borrowed: it must outlive the
 * provider), on the cloud's executor. 'lim' NULL, or a qps <= 0, means no
 * limit for that bucket. Launch and terminate take a token of
 * p->mutating first (asynchronously, in the order they were called);
 * list_groups takes one of p->reads (on a virtual clock it is THROTTLED when
 * no token is there now, on the real clock it waits up to 30 s). Free it
 * after the executor has shut down (a call waiting for its token would use
 * it). NULL with a message on bad limits or out of memory.
 */
struct provider *sim_provider_new(struct sim_cloud *cloud, const struct provider_limits *lim,
				  struct errbuf *err);

/* The cloud under a sim provider. */
struct sim_cloud *sim_provider_cloud(const struct provider *p);

#endif
