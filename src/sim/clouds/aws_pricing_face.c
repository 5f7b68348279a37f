/*
 * sim/aws_pricing_face: the simulated AWS prices and GetProducts (see
 * aws_pricing_face.h). The products are made afresh per call from the
 * scenario's groups; nothing is kept.
 */
#include "sim/clouds/aws_pricing_face.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "model.h"
#include "sim/clouds/cloud.h"

#define MAX_TYPES 256
#define OFFER "JRTCKXETXF"   /* the code AWS gives every OnDemand offer term */
#define RATE "6YS6EN2CT7"    /* and the rate of its hourly price dimension */

static bool has_type(const struct sim_aws_group *g, const char *type)
{
	size_t k;

	for (k = 0; k < g->n_types; k++)
		if (!strcmp(g->types[k], type))
			return true;
	return false;
}

double sim_aws_price(struct sim_aws *a, const char *type)
{
	struct sim_cloud *c = sim_aws_cloud(a);
	double price = 0;
	size_t i, n;

	sim_cloud_lock(c);
	n = sim_cloud_n_groups(c);
	for (i = 0; i < n && price <= 0; i++)
		if (has_type(sim_aws_group(a, i), type))
			price = sim_cloud_group(c, i)->price_per_hour;
	sim_cloud_unlock(c);
	return price > 0 ? price : 0;
}

size_t sim_aws_price_zones(struct sim_aws *a, const char *type, const char **zones, size_t cap)
{
	struct sim_cloud *c = sim_aws_cloud(a);
	size_t i, k, j, n, out = 0;

	sim_cloud_lock(c);
	n = sim_cloud_n_groups(c);
	for (i = 0; i < n; i++) {
		const struct sim_aws_group *g = sim_aws_group(a, i);

		if (!has_type(g, type))
			continue;
		for (k = 0; k < g->n_zones; k++) {
			for (j = 0; j < out && strcmp(zones[j], g->zones[k]); j++)
				;
			if (j == out && out < cap)
				zones[out++] = g->zones[k];
		}
	}
	sim_cloud_unlock(c);
	return out;
}

/* A stable 13-character SKU of 'type' (AWS's are 16 of [A-Z0-9]). */
static void sku_of(const char *type, char out[17])
{
	static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	uint64_t h = 1469598103934665603ull;
	int i;

	for (; *type; type++)
		h = (h ^ (unsigned char)*type) * 1099511628211ull;
	for (i = 0; i < 16; i++) {
		out[i] = al[h % 36];
		h = h / 36 + (uint64_t)i * 2654435761u;
	}
	out[16] = '\0';
}

/* The console's name of a region, as the price list's "location" says it. */
static const char *location_of(const char *region)
{
	static const char *const names[][2] = {
		{"us-east-1", "US East (N. Virginia)"}, {"us-east-2", "US East (Ohio)"},
		{"us-west-1", "US West (N. California)"}, {"us-west-2", "US West (Oregon)"},
		{"eu-west-1", "EU (Ireland)"}, {"eu-central-1", "EU (Frankfurt)"},
		{"ap-southeast-1", "Asia Pacific (Singapore)"}, {"ap-northeast-1", "Asia Pacific (Tokyo)"},
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(names[i][0], region))
			return names[i][1];
	return region;
}

/* One product of 'type' at 'price' in 'region' as the PriceList string. */
static char *product(const struct sim_aws_type *t, const char *region, double price)
{
	cJSON *doc = cJSON_CreateObject(), *p, *at, *terms, *od, *term, *dims, *dim, *ppu;
	char sku[17], key[64], mem[32], vcpu[16], usd[32], *s = NULL;

	sku_of(t->name, sku);
	snprintf(mem, sizeof(mem), "%lld GiB", (long long)(t->memory_mib / 1024));
	snprintf(vcpu, sizeof(vcpu), "%d", t->vcpus);
	snprintf(usd, sizeof(usd), "%.10f", price);
	if (!doc || !(p = cJSON_AddObjectToObject(doc, "product")) ||
	    !cJSON_AddStringToObject(p, "productFamily", "Compute Instance") ||
	    !(at = cJSON_AddObjectToObject(p, "attributes")) ||
	    !cJSON_AddStringToObject(at, "instanceType", t->name) ||
	    !cJSON_AddStringToObject(at, "regionCode", region) ||
	    !cJSON_AddStringToObject(at, "location", location_of(region)) ||
	    !cJSON_AddStringToObject(at, "locationType", "AWS Region") ||
	    !cJSON_AddStringToObject(at, "operatingSystem", "Linux") ||
	    !cJSON_AddStringToObject(at, "tenancy", "Shared") ||
	    !cJSON_AddStringToObject(at, "preInstalledSw", "NA") ||
	    !cJSON_AddStringToObject(at, "capacitystatus", "Used") ||
	    !cJSON_AddStringToObject(at, "marketoption", "OnDemand") ||
	    !cJSON_AddStringToObject(at, "licenseModel", "No License required") ||
	    !cJSON_AddStringToObject(at, "servicecode", "AmazonEC2") ||
	    !cJSON_AddStringToObject(at, "vcpu", vcpu) ||
	    !cJSON_AddStringToObject(at, "memory", mem) ||
	    !cJSON_AddStringToObject(p, "sku", sku) ||
	    !cJSON_AddStringToObject(doc, "serviceCode", "AmazonEC2") ||
	    !(terms = cJSON_AddObjectToObject(doc, "terms")) ||
	    !(od = cJSON_AddObjectToObject(terms, "OnDemand")))
		goto out;
	snprintf(key, sizeof(key), "%s.%s", sku, OFFER);
	if (!(term = cJSON_AddObjectToObject(od, key)) ||
	    !(dims = cJSON_AddObjectToObject(term, "priceDimensions")))
		goto out;
	snprintf(key, sizeof(key), "%s.%s.%s", sku, OFFER, RATE);
	if (!(dim = cJSON_AddObjectToObject(dims, key)) ||
	    !cJSON_AddStringToObject(dim, "unit", "Hrs") ||
	    !cJSON_AddStringToObject(dim, "rateCode", key) ||
	    !cJSON_AddStringToObject(dim, "beginRange", "0") ||
	    !cJSON_AddStringToObject(dim, "endRange", "Inf") ||
	    !(ppu = cJSON_AddObjectToObject(dim, "pricePerUnit")) ||
	    !cJSON_AddStringToObject(ppu, "USD", usd) ||
	    !cJSON_AddStringToObject(term, "sku", sku) ||
	    !cJSON_AddStringToObject(term, "offerTermCode", OFFER) ||
	    !cJSON_AddStringToObject(term, "effectiveDate", "2024-01-01T00:00:00Z") ||
	    !cJSON_AddStringToObject(doc, "version", "20240101000000") ||
	    !cJSON_AddStringToObject(doc, "publicationDate", "2024-01-01T00:00:00Z"))
		goto out;
	s = cJSON_PrintUnformatted(doc);
out:
	cJSON_Delete(doc);
	return s;
}

/* The product's attribute 'field' (the price list's names), or NULL. */
static const char *attribute(const struct sim_aws_type *t, const char *region, const char *field)
{
	static const char *const fixed[][2] = {
		{"operatingSystem", "Linux"}, {"tenancy", "Shared"}, {"preInstalledSw", "NA"},
		{"capacitystatus", "Used"}, {"marketoption", "OnDemand"}, {"servicecode", "AmazonEC2"},
		{"productFamily", "Compute Instance"}, {"licenseModel", "No License required"},
	};
	size_t i;

	if (!strcasecmp(field, "instanceType"))
		return t->name;
	if (!strcasecmp(field, "regionCode"))
		return region;
	if (!strcasecmp(field, "location"))
		return location_of(region);
	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (!strcasecmp(field, fixed[i][0]))
			return fixed[i][1];
	return NULL;
}

static int error(struct buf *out, int status, const char *type, const char *msg)
{
	cJSON *e = cJSON_CreateObject();
	char *s;

	buf_free(out);
	cJSON_AddStringToObject(e, "__type", type);
	cJSON_AddStringToObject(e, "message", msg);
	s = cJSON_PrintUnformatted(e);
	if (s)
		buf_puts(out, s);
	cJSON_free(s);
	cJSON_Delete(e);
	return status;
}

int sim_aws_pricing_answer(struct sim_aws *a, const char *target, const char *body, size_t len,
			   struct buf *out)
{
	const char *region = sim_aws_conf(a)->region ? sim_aws_conf(a)->region : "us-east-1";
	cJSON *req = NULL, *resp = NULL, *list;
	const cJSON *sc, *fs, *f, *mr, *nt;
	const struct sim_aws_type *types[MAX_TYPES];
	size_t n = 0, i, nt_all, offset = 0, shown = 0;
	long long max = 100;
	char *s;
	int status;

	if (!target || strcmp(target, "AWSPriceListService.GetProducts"))
		return error(out, 400, "UnknownOperationException",
			     "The simulator's Price List API serves GetProducts only");
	req = cJSON_ParseWithLength(body, len);
	if (!cJSON_IsObject(req)) {
		status = error(out, 400, "SerializationException", "The request body is not a JSON object");
		goto done;
	}
	sc = cJSON_GetObjectItemCaseSensitive(req, "ServiceCode");
	fs = cJSON_GetObjectItemCaseSensitive(req, "Filters");
	mr = cJSON_GetObjectItemCaseSensitive(req, "MaxResults");
	nt = cJSON_GetObjectItemCaseSensitive(req, "NextToken");
	if (!cJSON_IsString(sc)) {
		status = error(out, 400, "InvalidParameterException", "ServiceCode is required");
		goto done;
	}
	if (fs && !cJSON_IsArray(fs)) {
		status = error(out, 400, "SerializationException", "Filters is not a list");
		goto done;
	}
	if (mr && (!cJSON_IsNumber(mr) || mr->valuedouble < 1 || mr->valuedouble > 100)) {
		status = error(out, 400, "InvalidParameterException",
			       "MaxResults must be between 1 and 100");
		goto done;
	}
	if (mr)
		max = (long long)mr->valuedouble;
	if (nt && (!cJSON_IsString(nt) || sscanf(nt->valuestring, "sim1-%zu", &offset) != 1)) {
		status = error(out, 400, "InvalidNextTokenException", "The NextToken is not valid");
		goto done;
	}
	cJSON_ArrayForEach(f, fs) {
		const cJSON *ty = cJSON_GetObjectItemCaseSensitive(f, "Type");
		const cJSON *fi = cJSON_GetObjectItemCaseSensitive(f, "Field");
		const cJSON *va = cJSON_GetObjectItemCaseSensitive(f, "Value");

		if (!cJSON_IsString(ty) || strcmp(ty->valuestring, "TERM_MATCH") || !cJSON_IsString(fi) ||
		    !cJSON_IsString(va)) {
			status = error(out, 400, "InvalidParameterException",
				       "Each filter needs Type TERM_MATCH, a Field and a Value");
			goto done;
		}
	}
	/* the products: every known type some group launches, with a price */
	sim_aws_type_at(a, 0, &nt_all);
	for (i = 0; i < nt_all && n < MAX_TYPES; i++) {
		const struct sim_aws_type *t = sim_aws_type_at(a, i, &nt_all);
		bool ok = !strcmp(sc->valuestring, "AmazonEC2") && sim_aws_price(a, t->name) > 0;

		cJSON_ArrayForEach(f, fs) {
			const char *v = attribute(t, region,
						  cJSON_GetObjectItemCaseSensitive(f, "Field")->valuestring);

			if (!v || strcasecmp(v, cJSON_GetObjectItemCaseSensitive(f, "Value")->valuestring))
				ok = false;
		}
		if (ok)
			types[n++] = t;
	}
	resp = cJSON_CreateObject();
	if (!resp || !cJSON_AddStringToObject(resp, "FormatVersion", "aws_v1") ||
	    !(list = cJSON_AddArrayToObject(resp, "PriceList"))) {
		status = error(out, 500, "InternalErrorException", "out of memory");
		goto done;
	}
	for (i = offset; i < n && shown < (size_t)max; i++, shown++) {
		char *item = product(types[i], region, sim_aws_price(a, types[i]->name));

		if (!item) {
			status = error(out, 500, "InternalErrorException", "out of memory");
			goto done;
		}
		cJSON_AddItemToArray(list, cJSON_CreateString(item));
		cJSON_free(item);
	}
	if (offset + shown < n) {
		char tok[32];

		snprintf(tok, sizeof(tok), "sim1-%zu", offset + shown);
		cJSON_AddStringToObject(resp, "NextToken", tok);
	}
	s = cJSON_PrintUnformatted(resp);
	if (!s) {
		status = error(out, 500, "InternalErrorException", "out of memory");
		goto done;
	}
	buf_free(out);
	buf_puts(out, s);
	cJSON_free(s);
	status = 200;
done:
	cJSON_Delete(resp);
	cJSON_Delete(req);
	return status;
}
