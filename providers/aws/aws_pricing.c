/*
 * providers/aws: EC2 prices for the price cache (providers/pricing.h).
 * On-demand prices come from the Price List Query API (GetProducts, JSON
 * 1.1, api.pricing.us-east-1.amazonaws.com), spot prices from EC2's
 * DescribeSpotPriceHistory (the latest price of each zone; the region's is
 * the highest of its zones). It does not choose which groups are priced.
 */
#include "providers/aws/aws_pricing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "providers/aws/awserr.h"
#include "providers/pricing.h"
#include "wire/sigv4.h"
#include "providers/cloudhttp/cloudcall.h"
#include "providers/cloudhttp/cloudhttp.h"

#define JSON_TYPE "application/x-amz-json-1.1"
#define TARGET "AWSPriceListService.GetProducts"
#define MAX_PAGES 20

/* The Price List API's region and endpoint for EC2 region 'region'. */
static void pricing_home(const char *region, char *sign_region, size_t srlen, char *url, size_t len)
{
	bool cn = !strncmp(region, "cn-", 3);

	snprintf(sign_region, srlen, "%s", cn ? "cn-northwest-1" : "us-east-1");
	snprintf(url, len, "https://api.pricing.%s.amazonaws.com%s", sign_region, cn ? ".cn" : "");
}

/*
 * The Price List API's URL for EC2 region 'region' into 'url' and the
 * region its requests are signed for into 'sign_region':
 * https://api.pricing.us-east-1.amazonaws.com (cn-* regions:
 * api.pricing.cn-northwest-1.amazonaws.com.cn), unless AWS_ENDPOINT_URL_PRICING
 * or AWS_ENDPOINT_URL says otherwise (and AWS_IGNORE_CONFIGURED_ENDPOINT_URLS
 * is not true). 0, or -1 with 'err' when the variable's URL is malformed.
 */
static int pricing_endpoint(const struct aws_env *env, const char *region, char *url, size_t len,
			    char *sign_region, size_t srlen, struct errbuf *err)
{
	const char *v = NULL;

	pricing_home(region, sign_region, srlen, url, len);
	if (!aws_env_true(env, "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")) {
		v = aws_env_get(env, "AWS_ENDPOINT_URL_PRICING");
		if (!v)
			v = aws_env_get(env, "AWS_ENDPOINT_URL");
	}
	if (v) {
		if (aws_endpoint_validate(v, err) < 0)
			return -1;
		snprintf(url, len, "%s", v);
	}
	return 0;
}

/* ---- GetProducts ---- */

/* One GetProducts page: 'body' sent, the answer's document in *out. */
static int get_products(struct provider *p, const char *body, cJSON **out,
			struct provider_status *st)
{
	struct aws_prov *ap = AWS_PROV(p);
	struct aws_json_target t = { ap->pricing_url, ap->pricing_region, "pricing", JSON_TYPE, TARGET };

	aws_count_call(ap, "GetProducts");
	if (aws_json_call(&ap->api, &t, "GetProducts", p->reads, body, out, st) < 0)
		return -1;
	if (!*out) {
		cloudcall_status(st, PROVIDER_TRANSIENT, "GetProducts answered with no document");
		return -1;
	}
	return 0;
}

static cJSON *filter(cJSON *arr, const char *field, const char *value)
{
	cJSON *f = cJSON_CreateObject();

	if (f) {
		cJSON_AddStringToObject(f, "Type", "TERM_MATCH");
		cJSON_AddStringToObject(f, "Field", field);
		cJSON_AddStringToObject(f, "Value", value);
		cJSON_AddItemToArray(arr, f);
	}
	return f;
}

/* A price as AWS writes it ("0.0960000000"): above 0 and below 1e6, else 0. */
static double price_of(const char *s)
{
	char *end;
	double d = strtod(s, &end);

	return end != s && !*end && d > 0 && d < 1e6 ? d : 0;
}

/*
 * One PriceList item of GetProducts (a JSON document in a string): its
 * on-demand price per hour in 'currency' ("USD", "CNY") when its
 * product.attributes.instanceType is 'type', else 0 (0 too when malformed).
 */
static double on_demand_item(const char *item, size_t len, const char *type,
			     const char *currency)
{
	cJSON *doc = cJSON_ParseWithLength(item, len);
	const cJSON *attrs, *t, *term, *dim;
	double price = 0;

	if (!doc)
		return 0;
	attrs = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "product"),
						 "attributes");
	t = cJSON_GetObjectItemCaseSensitive(attrs, "instanceType");
	if (!cJSON_IsString(t) || strcmp(t->valuestring, type))
		goto out;
	term = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "terms"),
						"OnDemand");
	cJSON_ArrayForEach(t, term) {
		cJSON_ArrayForEach(dim, cJSON_GetObjectItemCaseSensitive(t, "priceDimensions")) {
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(
				cJSON_GetObjectItemCaseSensitive(dim, "pricePerUnit"), currency);
			double d = cJSON_IsString(v) ? price_of(v->valuestring) : 0;

			if (d > 0)
				price = d;
		}
	}
out:
	cJSON_Delete(doc);
	return price;
}

/* The on-demand price of 'type' in 'region' (0 when the price list has none). */
static int on_demand(struct provider *p, const char *type, const char *region, double *price,
		     struct provider_status *st)
{
	const char *currency = !strncmp(region, "cn-", 3) ? "CNY" : "USD";
	cJSON *req = cJSON_CreateObject(), *fs, *doc = NULL, *tok = NULL;
	char *body = NULL;
	int page, rc = -1;

	*price = 0;
	fs = req ? cJSON_AddArrayToObject(req, "Filters") : NULL;
	if (!fs || !cJSON_AddStringToObject(req, "ServiceCode", "AmazonEC2") ||
	    !cJSON_AddStringToObject(req, "FormatVersion", "aws_v1") ||
	    !cJSON_AddNumberToObject(req, "MaxResults", 100) ||
	    !filter(fs, "instanceType", type) || !filter(fs, "regionCode", region) ||
	    !filter(fs, "operatingSystem", "Linux") || !filter(fs, "tenancy", "Shared") ||
	    !filter(fs, "preInstalledSw", "NA") || !filter(fs, "capacitystatus", "Used") ||
	    !filter(fs, "marketoption", "OnDemand")) {
		cloudcall_status(st, PROVIDER_TRANSIENT, "out of memory");
		goto out;
	}
	for (page = 0; page < MAX_PAGES; page++) {
		const cJSON *list, *it, *next;

		cJSON_free(body);
		body = cJSON_PrintUnformatted(req);
		if (!body) {
			cloudcall_status(st, PROVIDER_TRANSIENT, "out of memory");
			goto out;
		}
		cJSON_Delete(doc);
		if (get_products(p, body, &doc, st) < 0)
			goto out;
		list = cJSON_GetObjectItemCaseSensitive(doc, "PriceList");
		if (list && !cJSON_IsArray(list)) {
			cloudcall_status(st, PROVIDER_TRANSIENT, "GetProducts: PriceList is not a list");
			goto out;
		}
		cJSON_ArrayForEach(it, list) {
			double d;

			if (!cJSON_IsString(it))
				continue;
			d = on_demand_item(it->valuestring, strlen(it->valuestring), type,
						       currency);
			if (d > 0)
				*price = d;
		}
		next = cJSON_GetObjectItemCaseSensitive(doc, "NextToken");
		if (*price > 0 || !cJSON_IsString(next) || !next->valuestring[0])
			break;
		cJSON_DeleteItemFromObjectCaseSensitive(req, "NextToken");
		tok = cJSON_CreateString(next->valuestring);
		if (!tok) {
			cloudcall_status(st, PROVIDER_TRANSIENT, "out of memory");
			goto out;
		}
		cJSON_AddItemToObject(req, "NextToken", tok);
	}
	rc = 0;
out:
	cJSON_free(body);
	cJSON_Delete(doc);
	cJSON_Delete(req);
	return rc;
}

/* ---- DescribeSpotPriceHistory ---- */

/* The latest Linux spot price of each type in keys (the spot ones), the
 * highest over the region's zones, into prices. */
static int spot(struct provider *p, const struct pricing_key *keys, size_t n, double *prices,
		struct provider_status *st)
{
	struct aws_prov *ap = AWS_PROV(p);
	char next[1024] = "", when[17], iso[32];
	size_t i, k;
	int page;

	if (sigv4_format_time(clock_wall(ap->clock), when) < 0)
		snprintf(when, sizeof(when), "19700101T000000Z");
	/* YYYYMMDDTHHMMSSZ as ISO 8601 */
	snprintf(iso, sizeof(iso), "%.4s-%.2s-%.2sT%.2s:%.2s:%.2sZ", when, when + 4, when + 6,
		 when + 9, when + 11, when + 13);
	for (page = 0; page < MAX_PAGES; page++) {
		const struct xmltree_node *it;
		struct xmltree_doc *d = NULL;
		struct aws_query f;

		aws_query_init(&f, AWS_SERVICE_EC2, "DescribeSpotPriceHistory");
		for (i = k = 0; i < n; i++)
			if (keys[i].capacity == PRICING_SPOT)
				aws_query_addf(&f, keys[i].type, "InstanceType.%zu", ++k);
		aws_query_add(&f, "ProductDescription.1", "Linux/UNIX");
		aws_query_add(&f, "ProductDescription.2", "Linux/UNIX (Amazon VPC)");
		aws_query_add(&f, "StartTime", iso);
		aws_query_add_int(&f, "MaxResults", 1000);
		if (next[0])
			aws_query_add(&f, "NextToken", next);
		if (aws_do(p, AWS_SERVICE_EC2, false, &f, &d, st) < 0) {
			aws_query_free(&f);
			return -1;
		}
		aws_query_free(&f);
		for (it = xmltree_first(xmltree_find(xmltree_root(d), "spotPriceHistorySet"), "item"); it;
		     it = xmltree_next(it)) {
			const char *type = xmltree_text(it, "instanceType");
			double price = price_of(xmltree_text(it, "spotPrice"));

			for (i = 0; price > 0 && i < n; i++)
				if (keys[i].capacity == PRICING_SPOT && !strcmp(keys[i].type, type) &&
				    price > prices[i])
					prices[i] = price;
		}
		xmltree_copy(xmltree_root(d), "nextToken", next, sizeof(next));
		xmltree_free(d);
		if (!next[0])
			break;
	}
	return 0;
}

/* pricing_fetch_fn */
static int fetch(void *ctx, const struct pricing_key *keys, size_t n, double *prices,
		 struct provider_status *st)
{
	struct provider *p = ctx;
	bool any_spot = false;
	size_t i;

	for (i = 0; i < n; i++) {
		if (keys[i].capacity == PRICING_SPOT) {
			any_spot = true;
			continue;
		}
		if (on_demand(p, keys[i].type, keys[i].location, &prices[i], st) < 0)
			return -1;
	}
	return any_spot ? spot(p, keys, n, prices, st) : 0;
}

int aws_pricing_init(struct provider *p, const struct aws_env *env, struct errbuf *err)
{
	struct aws_prov *ap = AWS_PROV(p);
	const struct config *c = ap->config;

	if (c && !c->pricing_enabled)
		return 0;
	if (pricing_endpoint(env, ap->api.region, ap->pricing_url, sizeof(ap->pricing_url),
				 ap->pricing_region, sizeof(ap->pricing_region), err) < 0)
		return -1;
	ap->pricing = pricing_from_config("aws", fetch, p, ap->clock, ap->log, c);
	if (!ap->pricing)
		return errbuf_set(err, "out of memory");
	return 0;
}

void aws_prices(struct provider *p, struct provider_group *groups, size_t n, struct executor *ex)
{
	struct aws_prov *ap = AWS_PROV(p);
	bool *spot_of = calloc(n + 1, sizeof(*spot_of));
	struct aws_group g;
	size_t i;

	if (!ap->pricing)
		goto out;
	for (i = 0; spot_of && i < n; i++)
		spot_of[i] = (aws_group_get(ap, groups[i].name, &g) == 0 && g.fleet && g.cfg)
				     ? g.cfg->spot
				     : pricing_capacity_of(&groups[i].tmpl) == PRICING_SPOT;
	pricing_price_groups(ap->pricing, ap->api.region, groups, n, spot_of, ex);
out:
	free(spot_of);
}

uint64_t aws_price_failures(struct provider *p)
{
	return pricing_failures(AWS_PROV(p)->pricing);
}
