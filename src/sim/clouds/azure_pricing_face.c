/*
 * sim/azure_pricing_face: the simulated Azure prices and the Retail Prices
 * API (see azure_pricing_face.h). The meters are made afresh per call
 * from the scenario's scale sets; nothing is kept.
 */
#include "sim/clouds/azure_pricing_face.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "sim/clouds/cloud.h"

#define MAX_SIZES 64

const char *sim_azure_prices_other_region(const struct sim_azure *az)
{
	return strcmp(sim_azure_conf(az)->location, "westus2") ? "westus2" : "eastus";
}

/* ---- the meters ---- */

/* A GUID made from 'seed' (stable meter ids). */
static void meter_id(const char *seed, char out[37])
{
	uint64_t h = 14695981039346656037ULL, g = 0x9e3779b97f4a7c15ULL;

	for (; *seed; seed++) {
		h = (h ^ (unsigned char)*seed) * 1099511628211ULL;
		g = (g ^ (unsigned char)*seed) * 0x100000001b3ULL + 11;
	}
	snprintf(out, 37, "%08llx-%04llx-4%03llx-a%03llx-%012llx", (unsigned long long)(h >> 32),
		 (unsigned long long)((h >> 16) & 0xffff), (unsigned long long)(h & 0xfff),
		 (unsigned long long)(g >> 52), (unsigned long long)(g & 0xffffffffffffULL));
}

/* "Standard_D4s_v3" -> "D4s v3" (the meter's skuName). */
static void short_name(const char *arm, char *out, size_t len)
{
	size_t i;

	if (!strncasecmp(arm, "Standard_", 9))
		arm += 9;
	snprintf(out, len, "%s", arm);
	for (i = 0; out[i]; i++)
		if (out[i] == '_')
			out[i] = ' ';
}

/* "standardDSv3Family" -> "DSv3" (the product's series). */
static void series(const char *family, char *out, size_t len)
{
	size_t n;

	if (!strncmp(family, "standard", 8))
		family += 8;
	n = strlen(family);
	if (n > 6 && !strcmp(family + n - 6, "Family"))
		n -= 6;
	snprintf(out, len, "%.*s", (int)n, family);
}

static const char *display_location(const char *region)
{
	static const struct { const char *arm, *name; } names[] = {
		{"eastus", "US East"}, {"eastus2", "US East 2"}, {"westus2", "US West 2"},
		{"westeurope", "EU West"}, {"northeurope", "EU North"},
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(names[i].arm, region))
			return names[i].name;
	return region;
}

struct meter {
	const char *type;       /* Consumption, DevTestConsumption, Reservation */
	const char *suffix;     /* of skuName and meterName: "", " Spot", " Low Priority" */
	bool windows;
	bool primary;
	double factor;          /* of the Linux pay-as-you-go price */
	const char *term;       /* reservationTerm, NULL: none */
};

static const struct meter meters[] = {
	{"Consumption", "", false, true, 1, NULL},
	{"Consumption", " Spot", false, true, SIM_AZURE_SPOT_FACTOR, NULL},
	{"Consumption", " Low Priority", false, true, SIM_AZURE_LOW_PRIORITY_FACTOR, NULL},
	{"Consumption", "", true, true, SIM_AZURE_WINDOWS_FACTOR, NULL},
	{"Consumption", " Spot", true, true, SIM_AZURE_WINDOWS_FACTOR * SIM_AZURE_SPOT_FACTOR, NULL},
	{"DevTestConsumption", "", false, true, 0.9, NULL},
	{"Reservation", "", false, true, 0.6 * 8760, "1 Year"},
	{"Consumption", "", false, false, 3, NULL}, /* a non-primary meter region's copy */
};

static cJSON *item(const char *arm, const char *family, const char *region, double price,
		   const struct meter *m)
{
	cJSON *o = cJSON_CreateObject();
	char sku[64], name[96], ser[32], product[128], seed[256], id[37];

	short_name(arm, sku, sizeof(sku));
	series(family, ser, sizeof(ser));
	snprintf(name, sizeof(name), "%s%s", sku, m->suffix);
	snprintf(product, sizeof(product), "Virtual Machines %s Series%s", ser, m->windows ? " Windows" : "");
	snprintf(seed, sizeof(seed), "%s|%s|%s|%s|%d|%d", region, arm, m->type, name, m->primary, m->windows);
	meter_id(seed, id);
	cJSON_AddStringToObject(o, "currencyCode", "USD");
	cJSON_AddNumberToObject(o, "tierMinimumUnits", 0);
	if (m->term)
		cJSON_AddStringToObject(o, "reservationTerm", m->term);
	cJSON_AddNumberToObject(o, "retailPrice", price * m->factor);
	cJSON_AddNumberToObject(o, "unitPrice", price * m->factor);
	cJSON_AddStringToObject(o, "armRegionName", region);
	cJSON_AddStringToObject(o, "location", display_location(region));
	cJSON_AddStringToObject(o, "effectiveStartDate", "2024-01-01T00:00:00Z");
	cJSON_AddStringToObject(o, "meterId", id);
	cJSON_AddStringToObject(o, "meterName", name);
	cJSON_AddStringToObject(o, "productId", "DZH318Z0BQ4L");
	cJSON_AddStringToObject(o, "skuId", "DZH318Z0BQ4L/00F1");
	cJSON_AddStringToObject(o, "productName", product);
	cJSON_AddStringToObject(o, "skuName", name);
	cJSON_AddStringToObject(o, "serviceName", "Virtual Machines");
	cJSON_AddStringToObject(o, "serviceId", "DZH313Z7MMC8");
	cJSON_AddStringToObject(o, "serviceFamily", "Compute");
	cJSON_AddStringToObject(o, "unitOfMeasure", "1 Hour");
	cJSON_AddStringToObject(o, "type", m->type);
	cJSON_AddBoolToObject(o, "isPrimaryMeterRegion", m->primary);
	cJSON_AddStringToObject(o, "armSkuName", arm);
	return o;
}

/* Every meter of the simulated cloud, in a stable order. Under the lock. */
static cJSON *all_meters(struct sim_azure *az)
{
	struct sim_cloud *c = sim_azure_cloud(az);
	const char *sizes[MAX_SIZES], *regions[2];
	double prices[MAX_SIZES];
	cJSON *arr = cJSON_CreateArray();
	size_t i, j, r, k, n = 0, ng = sim_cloud_n_groups(c);

	regions[0] = sim_azure_conf(az)->location;
	regions[1] = sim_azure_prices_other_region(az);
	for (i = 0; i < ng; i++) {
		const char *size = sim_azure_group(az, i)->vm_size;
		double price = sim_cloud_group(c, i)->price_per_hour;

		for (j = 0; j < n && strcasecmp(sizes[j], size); j++)
			;
		if (j < n || price <= 0 || n == MAX_SIZES)
			continue;
		sizes[n] = size;
		prices[n++] = price;
	}
	for (r = 0; r < 2; r++)
		for (j = 0; j < n; j++) {
			const struct sim_azure_vmsize *vs = sim_azure_find_vmsize(sizes[j]);
			double price = prices[j] * (r ? SIM_AZURE_OTHER_REGION_FACTOR : 1);

			for (k = 0; k < sizeof(meters) / sizeof(meters[0]); k++)
				cJSON_AddItemToArray(arr, item(vs ? vs->name : sizes[j],
							       vs ? vs->family : "standardFamily",
							       regions[r], price, &meters[k]));
		}
	return arr;
}

/* ---- $filter ---- */

struct fx {
	const char *s;          /* where the parser is */
	const cJSON *item;      /* NULL: only check the syntax */
	char err[200];
};

static void skip_ws(struct fx *x)
{
	while (*x->s == ' ')
		x->s++;
}

/* The keyword 'kw' followed by a blank, a '(' or the end. */
static bool keyword(struct fx *x, const char *kw)
{
	size_t n = strlen(kw);

	skip_ws(x);
	if (strncmp(x->s, kw, n) || (x->s[n] && x->s[n] != ' ' && x->s[n] != '('))
		return false;
	x->s += n;
	return true;
}

static bool or_expr(struct fx *x, bool *v);

/* field eq 'value', or ( expr ). */
static bool primary(struct fx *x, bool *v)
{
	static const char *const fields[][2] = {
		{"serviceName", "serviceName"}, {"serviceFamily", "serviceFamily"},
		{"armRegionName", "armRegionName"}, {"location", "location"},
		{"armSkuName", "armSkuName"}, {"skuName", "skuName"}, {"productName", "productName"},
		{"meterName", "meterName"}, {"priceType", "type"},
	};
	char field[32], value[256];
	const char *member = NULL;
	size_t n = 0, i;

	skip_ws(x);
	if (*x->s == '(') {
		x->s++;
		if (!or_expr(x, v))
			return false;
		skip_ws(x);
		if (*x->s != ')') {
			snprintf(x->err, sizeof(x->err), "expected ')' at '%.20s'", x->s);
			return false;
		}
		x->s++;
		return true;
	}
	while (isalnum((unsigned char)x->s[n]) && n < sizeof(field) - 1)
		n++;
	if (!n) {
		snprintf(x->err, sizeof(x->err), "expected a field at '%.20s'", x->s);
		return false;
	}
	snprintf(field, sizeof(field), "%.*s", (int)n, x->s);
	x->s += n;
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (!strcasecmp(fields[i][0], field))
			member = fields[i][1];
	if (!member) {
		snprintf(x->err, sizeof(x->err), "the field '%s' cannot be filtered on", field);
		return false;
	}
	if (!keyword(x, "eq")) {
		snprintf(x->err, sizeof(x->err), "expected 'eq' after %s", field);
		return false;
	}
	skip_ws(x);
	if (*x->s != '\'') {
		snprintf(x->err, sizeof(x->err), "expected a quoted value after %s eq", field);
		return false;
	}
	for (x->s++, n = 0;; x->s++) {
		if (!*x->s) {
			snprintf(x->err, sizeof(x->err), "the value of %s is not closed by a quote", field);
			return false;
		}
		if (*x->s == '\'') {
			if (x->s[1] != '\'')
				break;
			x->s++; /* '' is a quote */
		}
		if (n < sizeof(value) - 1)
			value[n++] = *x->s;
	}
	value[n] = '\0';
	x->s++;
	*v = false; /* only the syntax is checked without an item */
	if (x->item) {
		const cJSON *f = cJSON_GetObjectItemCaseSensitive(x->item, member);

		*v = cJSON_IsString(f) && !strcmp(f->valuestring, value);
	}
	return true;
}

static bool and_expr(struct fx *x, bool *v)
{
	bool r = false;

	if (!primary(x, v))
		return false;
	while (keyword(x, "and")) {
		if (!primary(x, &r))
			return false;
		*v = *v && r;
	}
	return true;
}

static bool or_expr(struct fx *x, bool *v)
{
	bool r = false;

	if (!and_expr(x, v))
		return false;
	while (keyword(x, "or")) {
		if (!and_expr(x, &r))
			return false;
		*v = *v || r;
	}
	return true;
}

/* Does 'it' pass 'filter'? -1 with 'err' when the filter does not parse. */
static int matches(const char *filter, const cJSON *it, char *err, size_t len)
{
	struct fx x;
	bool v = false;

	memset(&x, 0, sizeof(x));
	x.s = filter;
	x.item = it;
	if (!or_expr(&x, &v) || (skip_ws(&x), *x.s)) {
		snprintf(err, len, "Invalid OData filter: %s", x.err[0] ? x.err : "unexpected text at the end");
		return -1;
	}
	return v ? 1 : 0;
}

/* ---- the answer ---- */

static int fail(struct buf *out, int code, const char *what, const char *msg)
{
	cJSON *o = cJSON_CreateObject(), *e = cJSON_AddObjectToObject(o, "Error");
	char *s;

	cJSON_AddStringToObject(e, "Code", what);
	cJSON_AddStringToObject(e, "Message", msg);
	s = cJSON_PrintUnformatted(o);
	buf_puts(out, s ? s : "{}");
	cJSON_free(s);
	cJSON_Delete(o);
	return code;
}

int sim_azure_prices_answer(struct sim_azure *az, const char *filter, const char *skip,
			    const char *api_version, const char *self, struct buf *out)
{
	struct sim_cloud *c = sim_azure_cloud(az);
	int size = sim_azure_conf(az)->page_size > 0 ? sim_azure_conf(az)->page_size : 100;
	cJSON *all, *doc, *items, *it;
	long from = 0, at = 0, shown = 0;
	char err[256], *text;
	bool more = false;

	if (api_version && strcmp(api_version, "2023-01-01-preview") && strcmp(api_version, "2021-10-01-preview"))
		return fail(out, 400, "InvalidApiVersion",
			    "The api-version is not supported: use 2023-01-01-preview or 2021-10-01-preview.");
	if (skip) {
		char *end;

		from = strtol(skip, &end, 10);
		if (end == skip || *end || from < 0)
			return fail(out, 400, "InvalidSkip", "$skip must be a count.");
	}
	if (filter && matches(filter, NULL, err, sizeof(err)) < 0)
		return fail(out, 400, "InvalidFilter", err);
	sim_cloud_lock(c);
	all = all_meters(az);
	sim_cloud_unlock(c);
	doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "BillingCurrency", "USD");
	cJSON_AddStringToObject(doc, "CustomerEntityId", "Default");
	cJSON_AddStringToObject(doc, "CustomerEntityType", "Retail");
	items = cJSON_AddArrayToObject(doc, "Items");
	while ((it = cJSON_DetachItemFromArray(all, 0))) {
		if (filter && matches(filter, it, err, sizeof(err)) != 1) {
			cJSON_Delete(it);
			continue;
		}
		if (at++ < from || shown == size) {
			more = more || shown == size;
			cJSON_Delete(it);
			continue;
		}
		cJSON_AddItemToArray(items, it);
		shown++;
	}
	cJSON_Delete(all);
	if (more) {
		struct buf link = BUF_INIT;

		buf_printf(&link, "%s/api/retail/prices?api-version=%s", self,
			   api_version ? api_version : "2023-01-01-preview");
		if (filter)
			buf_printf(&link, "&$filter=%s", filter);
		buf_printf(&link, "&$skip=%ld", from + shown);
		cJSON_AddStringToObject(doc, "NextPageLink", link.data ? link.data : "");
		buf_free(&link);
	} else {
		cJSON_AddNullToObject(doc, "NextPageLink");
	}
	cJSON_AddNumberToObject(doc, "Count", (double)shown);
	text = cJSON_PrintUnformatted(doc);
	buf_puts(out, text ? text : "{}");
	cJSON_free(text);
	cJSON_Delete(doc);
	return 200;
}
