/*
 * providers/gce: the provider interface on Google Compute Engine — node
 * groups that are zonal or regional managed instance groups (named in the
 * config or found by name prefix), launched with createInstances under
 * names chosen up front, with the metadata server or a service-account key
 * for auth (gceauth.c).
 */
#ifndef LUASCALE_PROVIDERS_GCE_H
#define LUASCALE_PROVIDERS_GCE_H

#include <stdatomic.h>
#include <stdint.h>

#include "config.h"
#include "errbuf.h"
#include "log.h"
#include "providers/gce/gceauth.h"
#include "providers/provider.h"
#include "runtime/clock.h"

#define GCE_DEFAULT_COMPUTE "https://compute.googleapis.com/compute/v1/"

struct gce_provider_opts {
	const struct config *config;  /* groups, provider.gce, buckets; borrowed, outlives it */
	struct clock *clock;          /* NULL: the real clock */
	const struct logger *log;     /* NULL: silent */
	struct gce_env env;           /* {NULL, NULL}: the process's environment */
	const atomic_bool *cancel;    /* shutdown: ends waits and calls; may be NULL */
	int64_t launch_wait_ms;       /* how long a launch follows its instances' first
				       * attempt (0: 2 minutes) */
	int64_t poll_ms;              /* between two looks (0: 2 s) */
	const char *ca_file;          /* TLS trust (NULL: the system's) */
};

/*
 * A GCE provider. Picks the token source and the project (config, else
 * the metadata server) now. Calls block their thread. NULL with a message
 * naming what is wrong (no project, a bad key file, a bad endpoint).
 */
struct provider *gce_provider_new(const struct gce_provider_opts *o, struct errbuf *err);

/* Calls made so far whose request path ends in 'what' ("listManagedInstances",
 * "createInstances", "instanceGroupManagers" for MIG gets), for tests and benchmarks. */
uint64_t gce_provider_calls(const struct provider *p, const char *what);

#endif
