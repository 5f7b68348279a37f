/*
 * providers/azure: VM sizes from the Resource SKUs API (azure_skus.c) —
 * GET /subscriptions/{s}/providers/Microsoft.Compute/skus?$filter=location
 * eq '<region>', every nextLink, through the ARM client and its read
 * bucket; each region's list kept a day (a size never changes), the
 * static table (azure_sizes.c) standing in while the API cannot be read.
 * Private to providers/azure/azure*.c.
 */
#ifndef LUASCALE_AZURE_SKUS_H
#define LUASCALE_AZURE_SKUS_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "errbuf.h"
#include "providers/provider.h"

#define AZURE_SKUS_API_VERSION "2021-07-01"
#define AZURE_SKUS_TTL_NS (24 * 3600 * CLOCK_NS_PER_S)
#define AZURE_SKUS_RETRY_NS (5 * 60 * CLOCK_NS_PER_S)

/* A VM size as the Resource SKUs API describes it in one region. */
struct azure_sku {
	char name[64];            /* "Standard_D4ls_v6" */
	int vcpus;                /* capability vCPUs */
	int64_t memory_mib;       /* MemoryGB * 1024 */
	int gpus;                 /* GPUs (0 when absent) */
	int64_t resource_disk_mib; /* MaxResourceVolumeMB (0 when absent) */
	bool unavailable;         /* NotAvailableForSubscription in the region */
	char zones_unavailable[8]; /* zones where it is not available to the subscription: "13" */
};

/*
 * Reads one item of the list for region 'location'. Returns 1 with *out
 * filled for a virtualMachines SKU offered in 'location' (compared without
 * case), 0 for another resource type or region, -1 with 'err' naming the
 * field when it is malformed (no name, vCPUs or MemoryGB not a positive
 * number, capabilities or restrictions not lists).
 */
int azure_sku_parse(const cJSON *item, const char *location, struct azure_sku *out, struct errbuf *err);

struct az_prov;

/*
 * The size 'name' in region 'location' from the provider's cache, read
 * (blocking, through the ARM client) when the region's list is missing or
 * a day old and no failure in the last 5 minutes asks to wait. Returns 1
 * with *out filled, 0 when the API's list for the region does not have the
 * size, -1 when the list cannot be had (the caller falls back to the
 * static table). Logs once per region which source serves it.
 */
int azure_skus_lookup(struct provider *p, const char *location, const char *name, struct azure_sku *out);

/* Frees the provider's cache. */
void azure_skus_free(struct az_prov *ap);

#endif
