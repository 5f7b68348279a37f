/*
 * providers/azure/azure_config: the Azure parts of the luascale config, as the
 * config holds them (struct config's azure member, each group's
 * config_group_extra.azure): provider.azure, a group's azure: section and the
 * LUASCALE_PROVIDER_AZURE_* variables. Read by azure_config.c through
 * src/config_parse.h; it knows nothing else of the Azure provider, so what
 * reads a config does not link it.
 */
#ifndef LUASCALE_PROVIDERS_AZURE_CONFIG_H
#define LUASCALE_PROVIDERS_AZURE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h" /* struct kv */

/* A node group's settings for the Azure provider (the group's "azure:" section). */
struct config_azure_group {
	const char *vmss;                /* the scale set's name, default the group's; NULL for an AKS pool */
	const char *resource_group;      /* NULL: provider.azure.resource_group, else ARM_RESOURCE_GROUP */
	/* azure.aks: the group is an AKS agent pool, scaled through the
	 * agentPools API (NULL when it is a scale set of its own) */
	const char *aks_cluster;         /* the managed cluster's name */
	const char *aks_resource_group;  /* the managed cluster's resource group (not MC_...) */
	const char *aks_pool;            /* the agent pool's name */
};

/* Scale sets found by their tags (one entry of provider.azure.discovery). */
struct config_azure_discovery {
	const struct kv *tags;           /* every one must be on the scale set; a value "" matches any */
	size_t n_tags;
	int min, max;                    /* -1 when unset: the scale set's "min" and "max" tags rule */
};

/* The provider.azure section. NULL strings when unset: the provider then
 * reads the environment (docs/providers/azure.md gives the order). */
struct config_azure {
	const char *cloud;               /* "public" (default), "china" or "usgov" */
	const char *subscription_id;     /* NULL: ARM_SUBSCRIPTION_ID, AZURE_SUBSCRIPTION_ID */
	const char *resource_group;      /* the groups' default; NULL: ARM_RESOURCE_GROUP */
	const char *tenant_id;           /* NULL: AZURE_TENANT_ID, ARM_TENANT_ID */
	const char *client_id;           /* NULL: AZURE_CLIENT_ID, ARM_CLIENT_ID */
	const char *auth;                /* "auto" (NULL), "client_secret", "workload_identity",
					  * "managed_identity" */
	const char *client_secret_file;  /* a file holding the secret; NULL: AZURE_CLIENT_SECRET,
					  * ARM_CLIENT_SECRET */
	const char *federated_token_file;/* NULL: AZURE_FEDERATED_TOKEN_FILE */
	const char *identity_client_id;  /* a user-assigned managed identity's client id; NULL:
					  * ARM_USER_ASSIGNED_IDENTITY_ID, AZURE_CLIENT_ID */
	const char *endpoint_resource_manager; /* sovereign, private or simulated clouds */
	const char *endpoint_authority;
	const char *endpoint_imds;
	const char *endpoint_prices;     /* the Retail Prices API; NULL: https://prices.azure.com/ */
	const struct config_azure_discovery *discovery;
	size_t n_discovery;
};

struct config_cloud;
extern const struct config_cloud config_cloud_azure;

/* Whether a reread config's provider.azure, or a group's azure: section,
 * differs from the running one's in what the provider was made from. */
bool config_azure_differs(const struct config_azure *a, const struct config_azure *b);
bool config_azure_group_differs(const struct config_azure_group *a, const struct config_azure_group *b);

#endif
