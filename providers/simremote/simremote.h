/*
 * providers/simremote: the provider interface on the cloud of a running
 * `luascale sim`, over its sim.luascale.io/v1 endpoints — what `luascale
 * run` uses against the simulator. Same token buckets as every provider;
 * calls block (they run on the actuator's worker threads). The cloud
 * answers a launch once the whole call is over, so instances are reported
 * together at its end.
 */
#ifndef LUASCALE_PROVIDERS_SIMREMOTE_H
#define LUASCALE_PROVIDERS_SIMREMOTE_H

#include "errbuf.h"
#include "providers/provider.h"

struct kube_client;

/*
 * A provider of kind "simremote" talking through 'client' (borrowed: the
 * simulator's kubeconfig points at the same server). 'lim' as in
 * provider.h; qps <= 0 means no limit. NULL with a message on failure.
 */
struct provider *simremote_provider_new(struct kube_client *client,
					const struct provider_limits *lim, struct errbuf *err);

#endif
