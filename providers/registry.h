/*
 * providers/registry: the clouds this build can run on, by the config's
 * provider.kind. `luascale run` makes its provider here. A cloud is its
 * folder, providers/<cloud>/, holding <cloud>_config.c (CMakeLists.txt
 * lists the clouds by it) and defining
 * `const struct provider_kind provider_kind_<cloud>`: no shared file names
 * it.
 */
#ifndef LUASCALE_PROVIDERS_REGISTRY_H
#define LUASCALE_PROVIDERS_REGISTRY_H

#include <stdatomic.h>
#include <stddef.h>

#include "errbuf.h"
#include "providers/provider.h"

struct config;
struct kube_client;
struct logger;

/* What every provider is made from. */
struct provider_make_opts {
	const struct config *config;      /* borrowed; outlives the provider */
	const struct logger *log;         /* NULL: silent */
	const atomic_bool *cancel;        /* shutdown: ends waits and calls; may be NULL */
	struct kube_client *client;       /* the cluster (the remote simulator's cloud API) */
	const struct provider_limits *lim;/* the config's token buckets */
};

struct provider_kind {
	const char *name;                 /* provider.kind: "aws" */
	struct provider *(*make)(const struct provider_make_opts *o, struct errbuf *err);
};

/* The kind named 'name', or NULL when this build has none. */
const struct provider_kind *provider_kind_find(const char *name);

/* The kinds' names, NULL-terminated: "sim", then the clouds by folder name
 * ({"sim", "aws", "azure", "gce", NULL}). */
const char *const *provider_kind_names(void);

/* The kinds' names as "sim, aws, azure, gce", into out. */
void provider_kind_list(char *out, size_t len);

#endif
