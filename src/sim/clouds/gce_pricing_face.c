/*
 * sim/gce_pricing_face: the simulated Cloud Billing Catalog (see
 * gce_pricing_face.h). The SKU list is made whole for each request, in one
 * fixed order, and cut into pages by an offset in the page token.
 */
#include "sim/clouds/gce_pricing_face.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COMPUTE_SERVICE "6F81-5844-456A"
#define MAX_PAGE_SIZE 5000
#define SPOT_SHARE 0.3

/* List prices of a few families (USD an hour), as the catalog showed them
 * for us-central1; every region of the simulated cloud gets the same. */
static const struct sim_gce_rate rates[] = {
	{"e2", 0.021811, 0.002923},
	{"n2", 0.031611, 0.004237},
	{"n1", 0.031611, 0.004237},
	{"a2", 0.031611, 0.004237},
};

const struct sim_gce_rate *sim_gce_rate_of(const char *family)
{
	size_t i;

	for (i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		if (!strcmp(rates[i].family, family))
			return &rates[i];
	return NULL;
}

static uint64_t fnv(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

/* The regions of the simulated MIGs, each once. */
static size_t regions_of(const struct sim_gce_conf *c, const char **out, size_t cap)
{
	size_t i, j, n = 0;

	for (i = 0; i < c->n_groups; i++) {
		for (j = 0; j < n && strcmp(out[j], c->groups[i].region); j++)
			;
		if (j == n && n < cap)
			out[n++] = c->groups[i].region;
	}
	return n;
}

/* "Americas", "EMEA" or "APAC", as descriptions name a region's geography. */
static const char *geo(const char *region)
{
	if (!strncmp(region, "europe-", 7) || !strncmp(region, "me-", 3) || !strncmp(region, "africa-", 7))
		return "EMEA";
	if (!strncmp(region, "asia-", 5) || !strncmp(region, "australia-", 10))
		return "APAC";
	return "Americas";
}

/* One SKU: its description, resource group, usage type, unit (h or GiBy.h
 * or GiBy), price, and regions (n 0: none, a global SKU). */
static cJSON *sku(const char *desc, const char *group, const char *usage, const char *unit,
		  double price, const char *const *regions, size_t n)
{
	cJSON *o = cJSON_CreateObject(), *cat, *rs, *infos, *info, *expr, *tiers, *tier, *up, *geot;
	char id[24], name[64], units[24];
	uint64_t h = fnv(desc) ^ fnv(usage);
	bool ram = !strcmp(unit, "GiBy.h"), core = !strcmp(unit, "h");
	int64_t nanos_all = llround(price * 1e9);
	size_t i;

	snprintf(id, sizeof(id), "%04llX-%04llX-%04llX", (unsigned long long)(h & 0xffff),
		 (unsigned long long)((h >> 16) & 0xffff), (unsigned long long)((h >> 32) & 0xffff));
	snprintf(name, sizeof(name), "services/%s/skus/%s", COMPUTE_SERVICE, id);
	cJSON_AddStringToObject(o, "name", name);
	cJSON_AddStringToObject(o, "skuId", id);
	cJSON_AddStringToObject(o, "description", desc);
	cat = cJSON_AddObjectToObject(o, "category");
	cJSON_AddStringToObject(cat, "serviceDisplayName", "Compute Engine");
	cJSON_AddStringToObject(cat, "resourceFamily", core || ram ? "Compute" : "Network");
	cJSON_AddStringToObject(cat, "resourceGroup", group);
	cJSON_AddStringToObject(cat, "usageType", usage);
	rs = cJSON_AddArrayToObject(o, "serviceRegions");
	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(rs, cJSON_CreateString(regions[i]));
	infos = cJSON_AddArrayToObject(o, "pricingInfo");
	info = cJSON_CreateObject();
	cJSON_AddItemToArray(infos, info);
	cJSON_AddStringToObject(info, "summary", "");
	expr = cJSON_AddObjectToObject(info, "pricingExpression");
	cJSON_AddStringToObject(expr, "usageUnit", unit);
	cJSON_AddNumberToObject(expr, "displayQuantity", 1);
	cJSON_AddStringToObject(expr, "usageUnitDescription",
				core ? "hour" : ram ? "gibibyte hour" : "gibibyte");
	cJSON_AddStringToObject(expr, "baseUnit", core ? "s" : ram ? "By.s" : "By");
	cJSON_AddStringToObject(expr, "baseUnitDescription",
				core ? "second" : ram ? "byte second" : "byte");
	cJSON_AddNumberToObject(expr, "baseUnitConversionFactor",
				core ? 3600 : ram ? 3865470566400.0 : 1073741824.0);
	tiers = cJSON_AddArrayToObject(expr, "tieredRates");
	tier = cJSON_CreateObject();
	cJSON_AddItemToArray(tiers, tier);
	cJSON_AddNumberToObject(tier, "startUsageAmount", 0);
	up = cJSON_AddObjectToObject(tier, "unitPrice");
	cJSON_AddStringToObject(up, "currencyCode", "USD");
	snprintf(units, sizeof(units), "%lld", (long long)(nanos_all / 1000000000));
	cJSON_AddStringToObject(up, "units", units);
	cJSON_AddNumberToObject(up, "nanos", (double)(nanos_all % 1000000000));
	cJSON_AddNumberToObject(info, "currencyConversionRate", 1);
	cJSON_AddStringToObject(info, "effectiveTime", "2026-12-01T00:00:00.000000Z");
	cJSON_AddStringToObject(o, "serviceProviderName", "Google");
	geot = cJSON_AddObjectToObject(o, "geoTaxonomy");
	cJSON_AddStringToObject(geot, "type", n > 1 ? "MULTI_REGIONAL" : n ? "REGIONAL" : "GLOBAL");
	rs = cJSON_AddArrayToObject(geot, "regions");
	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(rs, cJSON_CreateString(regions[i]));
	return o;
}

/* Spot's price: SPOT_SHARE of on-demand, to the nano. */
static double spot_of(double on_demand)
{
	return (double)llround(on_demand * SPOT_SHARE * 1e9) / 1e9;
}

/* Every SKU of the simulated catalog, in order. */
static cJSON *catalog(const struct sim_gce *gce)
{
	const struct sim_gce_conf *c = sim_gce_conf(gce);
	const char *regions[64];
	size_t n_regions = regions_of(c, regions, 64), i, r;
	cJSON *all = cJSON_CreateArray();
	const struct sim_gce_mtype *mt;
	char seen[16][16], desc[160];
	size_t n_seen = 0;

	/* egress: global, a unit no pricer of machines takes */
	cJSON_AddItemToArray(all, sku("Network Internet Egress from Americas to Americas", "PremiumInternetEgress",
				      "OnDemand", "GiBy", 0.12, NULL, 0));
	for (i = 0; (mt = sim_gce_mtype_at(i)); i++) {
		const struct sim_gce_rate *rt;
		const char *dash = strchr(mt->name, '-');
		char fam[16], up[16];
		size_t k;

		if (!dash || (size_t)(dash - mt->name) >= sizeof(fam))
			continue;
		snprintf(fam, sizeof(fam), "%.*s", (int)(dash - mt->name), mt->name);
		for (k = 0; k < n_seen && strcmp(seen[k], fam); k++)
			;
		if (k < n_seen || n_seen == 16 || !(rt = sim_gce_rate_of(fam)))
			continue;
		snprintf(seen[n_seen++], sizeof(seen[0]), "%s", fam);
		for (k = 0; fam[k]; k++)
			up[k] = (char)(fam[k] >= 'a' && fam[k] <= 'z' ? fam[k] - 32 : fam[k]);
		up[k] = '\0';
		for (r = 0; r < n_regions; r++) {
			const char *one[1] = {regions[r]};
			const char *g = geo(regions[r]);
			bool n1 = !strcmp(fam, "n1");
			const char *pre = n1 ? " Predefined" : "";
			const char *grp_c = n1 ? "N1Standard" : "CPU", *grp_r = n1 ? "N1Standard" : "RAM";

			snprintf(desc, sizeof(desc), "%s%s Instance Core running in %s", up, pre, g);
			cJSON_AddItemToArray(all, sku(desc, grp_c, "OnDemand", "h", rt->core, one, 1));
			snprintf(desc, sizeof(desc), "%s%s Instance Ram running in %s", up, pre, g);
			cJSON_AddItemToArray(all, sku(desc, grp_r, "OnDemand", "GiBy.h", rt->ram, one, 1));
			snprintf(desc, sizeof(desc), "Spot Preemptible %s%s Instance Core running in %s", up, pre, g);
			cJSON_AddItemToArray(all, sku(desc, grp_c, "Preemptible", "h", spot_of(rt->core), one, 1));
			snprintf(desc, sizeof(desc), "Spot Preemptible %s%s Instance Ram running in %s", up, pre, g);
			cJSON_AddItemToArray(all, sku(desc, grp_r, "Preemptible", "GiBy.h", spot_of(rt->ram), one, 1));
			/* what a pricer of predefined types must leave alone */
			snprintf(desc, sizeof(desc), "%s Custom Instance Core running in %s", up, g);
			cJSON_AddItemToArray(all, sku(desc, "CPU", "OnDemand", "h", rt->core * 1.05, one, 1));
			snprintf(desc, sizeof(desc), "%s Sole Tenancy Instance Ram running in %s", up, g);
			cJSON_AddItemToArray(all, sku(desc, "RAM", "OnDemand", "GiBy.h", rt->ram * 1.1, one, 1));
			snprintf(desc, sizeof(desc), "Commitment v1: %s Cpu in %s for 1 Year", up, g);
			cJSON_AddItemToArray(all, sku(desc, "CPU", "Commit1Yr", "h", rt->core * 0.63, one, 1));
		}
	}
	return all;
}

cJSON *gce_pricing_face_skus(const struct sim_gce *gce, const char *service,
			     const char *page_token, const char *page_size, const char *currency,
			     int *code, char *msg, size_t msg_len)
{
	cJSON *all, *page, *list;
	long size = MAX_PAGE_SIZE, offset = 0, total, i;
	char *end;

	if (strcmp(service, COMPUTE_SERVICE)) {
		*code = 404;
		snprintf(msg, msg_len, "Service services/%.64s not found.", service);
		return NULL;
	}
	if (page_size && *page_size) {
		size = strtol(page_size, &end, 10);
		if (*end || size < 0 || size > MAX_PAGE_SIZE) {
			*code = 400;
			snprintf(msg, msg_len, "Invalid page size %.32s: from 0 to %d (0: the default).",
				 page_size, MAX_PAGE_SIZE);
			return NULL;
		}
		if (size == 0)
			size = MAX_PAGE_SIZE;
	}
	if (currency && *currency && strcmp(currency, "USD")) {
		*code = 400;
		snprintf(msg, msg_len, "Currency code %.16s is not supported by this catalog (USD only).",
			 currency);
		return NULL;
	}
	all = catalog(gce);
	if (!all) {
		*code = 500;
		snprintf(msg, msg_len, "out of memory");
		return NULL;
	}
	total = cJSON_GetArraySize(all);
	if (page_token && *page_token) {
		if (strncmp(page_token, "skus-", 5) || (offset = strtol(page_token + 5, &end, 10)) <= 0 ||
		    *end || offset >= total) {
			cJSON_Delete(all);
			*code = 400;
			snprintf(msg, msg_len, "Page token is not valid.");
			return NULL;
		}
	}
	page = cJSON_CreateObject();
	list = cJSON_AddArrayToObject(page, "skus");
	for (i = offset; i < total && i < offset + size; i++)
		cJSON_AddItemToArray(list, cJSON_Duplicate(cJSON_GetArrayItem(all, (int)i), 1));
	if (offset + size < total) {
		char tok[32];

		snprintf(tok, sizeof(tok), "skus-%ld", offset + size);
		cJSON_AddStringToObject(page, "nextPageToken", tok);
	} else {
		cJSON_AddStringToObject(page, "nextPageToken", "");
	}
	cJSON_Delete(all);
	*code = 200;
	return page;
}
