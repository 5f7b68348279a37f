/*
 * providers/azure: the Azure provider's prices (azure_pricing.c) — its
 * price cache (providers/pricing.h), fed by the Retail Prices API
 * (prices.azure.com, no authentication): the Linux pay-as-you-go meter of
 * a VM size for on-demand, its "Spot" meter for spot. Private to
 * providers/azure/azure*.c.
 */
#ifndef LUASCALE_AZURE_PRICING_H
#define LUASCALE_AZURE_PRICING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "errbuf.h"
#include "providers/azure/azure.h"
#include "providers/pricing.h"
#include "runtime/executor.h"

#define AZURE_PRICES_API_VERSION "2023-01-01-preview"
#define AZURE_PRICES_DEFAULT "https://prices.azure.com/"

/*
 * Reads one page of the Retail Prices API ({"Items": [...], "NextPageLink":
 * URL or null, "Count": n}). Each item must carry retailPrice (a number,
 * not negative), armSkuName, armRegionName, skuName, productName, type,
 * unitOfMeasure and currencyCode (strings); isPrimaryMeterRegion, when
 * present, a boolean. An item counts for keys[i] when it is a
 * "Consumption" meter in USD per "1 Hour" of keys[i]'s VM size and region
 * (compared case-insensitively), not Windows (productName), not a
 * non-primary meter region, with a price above 0; its skuName says the
 * meter: "... Spot" for spot, "... Low Priority" for neither, anything else
 * on-demand. prices[i] gets the highest price of the meters that count
 * (left alone when none does). 'next' gets NextPageLink ("" when null or
 * absent). Returns how many items the page holds, or -1 with 'err' naming
 * the item and field (or the page) that is malformed; prices[] may then
 * hold part of the page (the caller drops it all).
 */
int azure_pricing_page(const char *body, size_t len, const struct pricing_key *keys, size_t n,
		       double *prices, char *next, size_t next_len, struct errbuf *err);

/*
 * Appends the $filter (not yet URL-encoded) asking for the Virtual Machines
 * Consumption meters of 'location' and the sizes types[0..n): "serviceName
 * eq 'Virtual Machines' and armRegionName eq 'eastus' and priceType eq
 * 'Consumption' and (armSkuName eq 'A' or armSkuName eq 'B')". The names
 * must be checked by azure_pricing_name_ok first. 0, or -1 (out of memory).
 */
int azure_pricing_filter(struct buf *b, const char *location, const char *const *types, size_t n);

/* Is 's' a VM size or region name that may go into a filter (1 to 63 of
 * A-Z a-z 0-9 _ -)? Nothing else is ever quoted into one. */
bool azure_pricing_name_ok(const char *s);

/*
 * Makes the provider's price cache (nothing when the config turns prices
 * off). The endpoint is provider.azure.endpoints.prices, else the
 * simulator's ARM root when the ARM root came from
 * LUASCALE_SIM_AZURE_ARM_ENDPOINT, else https://prices.azure.com/.
 * 0, or -1 with 'err' (an endpoint that is not https, or http to loopback).
 */
int azure_pricing_init(struct provider *p, const struct azure_provider_opts *o, struct errbuf *err);

/* provider_ops.prices and .price_failures: each group priced in its scale
 * set's location, as spot when the scale set's priority is Spot or its
 * template's labels say spot (pricing_capacity_of), else on demand. */
void azure_prices(struct provider *p, struct provider_group *groups, size_t n, struct executor *ex);
uint64_t azure_price_failures(struct provider *p);

#endif
