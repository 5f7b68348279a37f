/*
 * providers/registry: the clouds this build can run on, by the config's
 * provider.kind. `luascale run` makes its provider here; adding a cloud is
 * one line in registry.c's table (and its folder, providers/<cloud>/).
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

/* The kinds' names, NULL-terminated ({"sim", "aws", "gce", "azure", NULL}). */
const char *const *provider_kind_names(void);

/* The kinds' names as "sim, aws, gce, azure", into out. */
void provider_kind_list(char *out, size_t len);

#endif
