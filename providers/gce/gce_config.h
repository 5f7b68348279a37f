/*
 * providers/gce/gce_config: the GCE parts of the luascale config, as the
 * config holds them (struct config's gce member, each group's
 * config_group_extra.gce): provider.gce, a group's gce: section and the
 * LUASCALE_PROVIDER_GCE_* variables. Read by gce_config.c through
 * src/config_parse.h; it knows nothing else of the GCE provider, so what
 * reads a config does not link it.
 */
#ifndef LUASCALE_PROVIDERS_GCE_CONFIG_H
#define LUASCALE_PROVIDERS_GCE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

/* A node group's settings for the GCE provider (the group's "gce:" section). */
struct config_gce_group {
	const char *mig;                 /* the managed instance group's name, default the group's */
	const char *zone;                /* a zonal MIG's zone, or NULL */
	const char *region;              /* a regional MIG's region, or NULL (one of the two is set) */
};

/* A MIG name prefix whose groups are managed too (provider.gce.discovery). */
struct config_gce_discovery {
	const char *prefix;
	int min, max;
};

/* The provider.gce section. NULL strings when unset. */
struct config_gce {
	const char *project;             /* NULL: the metadata server's */
	const char *credentials_file;    /* a service-account key; NULL: GOOGLE_APPLICATION_CREDENTIALS,
					  * then the metadata server */
	const char *endpoint_compute;    /* "https://compute.googleapis.com/compute/v1/" by default */
	const char *endpoint_token;      /* the token URL (else the key file's token_uri) */
	const char *endpoint_billing;    /* the Cloud Billing Catalog API's root,
					  * "https://cloudbilling.googleapis.com/" by default */
	const char *metadata_host;       /* host[:port] (else GCE_METADATA_HOST, metadata.google.internal) */
	const struct config_gce_discovery *discovery;
	size_t n_discovery;
};

struct config_cloud;
extern const struct config_cloud config_cloud_gce;

/* Whether a reread config's provider.gce, or a group's gce: section,
 * differs from the running one's in what the provider was made from. */
bool config_gce_differs(const struct config_gce *a, const struct config_gce *b);
bool config_gce_group_differs(const struct config_gce_group *a, const struct config_gce_group *b);

#endif
