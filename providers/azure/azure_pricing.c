/*
 * providers/azure: VM prices for the price cache (providers/pricing.h)
 * from the Retail Prices API — GET {prices}/api/retail/prices with a
 * $filter naming the region and a batch of VM sizes, every NextPageLink
 * followed (bounded), the meters read and chosen here. It does not choose
 * which groups are priced or when (pricing.c and azure_prices do).
 */
#include "providers/azure/azure_pricing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "providers/azure/azure_internal.h"
#include "providers/cloudhttp/cloudjson.h"

#define MAX_PAGES 50          /* of one query: 5000 meters at 100 a page */
#define FILTER_MAX 1200       /* characters of one $filter before it is encoded */
#define PRICE_MAX 1e6

/* ---- one page ---- */

bool azure_pricing_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n < 64 && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") == n;
}

/* The string member 'k' of item 'i' into *out; -1 with 'err' when absent or not a string. */
static int item_str(const cJSON *it, int i, const char *k, const char **out, struct errbuf *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(it, k);

	if (!v)
		return errbuf_set(err, "Items[%d]: no %s", i, k);
	if (!cJSON_IsString(v))
		return errbuf_set(err, "Items[%d].%s is not a string", i, k);
	*out = v->valuestring;
	return 0;
}

/* Does skuName "D4s v5 Spot" end with " <word>"? */
static bool ends_with(const char *s, const char *word)
{
	size_t n = strlen(s), w = strlen(word);

	return n > w && s[n - w - 1] == ' ' && !strcasecmp(s + n - w, word);
}

int azure_pricing_page(const char *body, size_t len, const struct pricing_key *keys, size_t n,
		       double *prices, char *next, size_t next_len, struct errbuf *err)
{
	cJSON *doc = cJSON_ParseWithLength(body, len);
	const cJSON *items, *it, *link, *count;
	int i = 0, rc = -1;

	next[0] = '\0';
	if (!doc) {
		errbuf_set(err, "the answer is not JSON (%zu bytes: cut short, or not the Retail Prices API)", len);
		goto out;
	}
	if (!cJSON_IsObject(doc)) {
		errbuf_set(err, "the answer is not a JSON object");
		goto out;
	}
	items = cJSON_GetObjectItemCaseSensitive(doc, "Items");
	if (!items) {
		errbuf_set(err, "the answer has no Items");
		goto out;
	}
	if (!cJSON_IsArray(items)) {
		errbuf_set(err, "Items is not a list");
		goto out;
	}
	count = cJSON_GetObjectItemCaseSensitive(doc, "Count");
	if (count && (!cJSON_IsNumber(count) || count->valuedouble != (double)cJSON_GetArraySize(items))) {
		errbuf_set(err, "Count %s but Items holds %d (a page cut short?)",
			   cJSON_IsNumber(count) ? "disagrees" : "is not a number", cJSON_GetArraySize(items));
		goto out;
	}
	link = cJSON_GetObjectItemCaseSensitive(doc, "NextPageLink");
	if (link && !cJSON_IsNull(link) && !cJSON_IsString(link)) {
		errbuf_set(err, "NextPageLink is neither a URL nor null");
		goto out;
	}
	if (cJSON_IsString(link)) {
		if (strlen(link->valuestring) >= next_len) {
			errbuf_set(err, "NextPageLink is longer than %zu characters", next_len - 1);
			goto out;
		}
		snprintf(next, next_len, "%s", link->valuestring);
	}
	cJSON_ArrayForEach(it, items) {
		const char *sku = NULL, *region = NULL, *meter = NULL, *product = NULL, *type = NULL,
			   *unit = NULL, *currency = NULL;
		const cJSON *price, *primary;
		enum pricing_capacity cap;
		size_t k;

		if (!cJSON_IsObject(it)) {
			errbuf_set(err, "Items[%d] is not an object", i);
			goto out;
		}
		price = cJSON_GetObjectItemCaseSensitive(it, "retailPrice");
		if (!price) {
			errbuf_set(err, "Items[%d]: no retailPrice", i);
			goto out;
		}
		if (!cJSON_IsNumber(price) || !isfinite(price->valuedouble)) {
			errbuf_set(err, "Items[%d].retailPrice is not a number", i);
			goto out;
		}
		if (price->valuedouble < 0 || price->valuedouble >= PRICE_MAX) {
			errbuf_set(err, "Items[%d].retailPrice %g is %s", i, price->valuedouble,
				   price->valuedouble < 0 ? "negative" : "too large");
			goto out;
		}
		if (item_str(it, i, "armSkuName", &sku, err) < 0 ||
		    item_str(it, i, "armRegionName", &region, err) < 0 ||
		    item_str(it, i, "skuName", &meter, err) < 0 ||
		    item_str(it, i, "productName", &product, err) < 0 ||
		    item_str(it, i, "type", &type, err) < 0 ||
		    item_str(it, i, "unitOfMeasure", &unit, err) < 0 ||
		    item_str(it, i, "currencyCode", &currency, err) < 0)
			goto out;
		primary = cJSON_GetObjectItemCaseSensitive(it, "isPrimaryMeterRegion");
		if (primary && !cJSON_IsBool(primary)) {
			errbuf_set(err, "Items[%d].isPrimaryMeterRegion is not a boolean", i);
			goto out;
		}
		i++;
		/* a reservation, a dev/test rate, Windows, another currency, another
		 * unit or a duplicate of a meter from another region: not a node's price */
		if (strcmp(type, "Consumption") || strcmp(currency, "USD") || strcmp(unit, "1 Hour") ||
		    strstr(product, "Windows") || cJSON_IsFalse(primary) || price->valuedouble <= 0 ||
		    ends_with(meter, "Low Priority"))
			continue;
		cap = ends_with(meter, "Spot") ? PRICING_SPOT : PRICING_ON_DEMAND;
		for (k = 0; k < n; k++)
			if (keys[k].capacity == cap && !strcasecmp(keys[k].type, sku) &&
			    !strcasecmp(keys[k].location, region) && price->valuedouble > prices[k])
				prices[k] = price->valuedouble;
	}
	rc = i;
out:
	cJSON_Delete(doc);
	return rc;
}

int azure_pricing_filter(struct buf *b, const char *location, const char *const *types, size_t n)
{
	size_t i;

	buf_printf(b, "serviceName eq 'Virtual Machines' and armRegionName eq '%s' and priceType eq 'Consumption' and (",
		   location);
	for (i = 0; i < n; i++)
		buf_printf(b, "%sarmSkuName eq '%s'", i ? " or " : "", types[i]);
	buf_puts(b, ")");
	return b->oom ? -1 : 0;
}

/* ---- the calls ---- */

/* A token of the read bucket before each attempt; no credential: the
 * Retail Prices API is public. */
static int pprepare(void *ctx, const struct cloudhttp_request *req, struct cloudhttp_headers *extra,
		    struct errbuf *err)
{
	(void)req;
	return cloudcall_bearer_prepare(ctx, AZURE_TOKEN_WAIT_NS, extra, err);
}

static enum cloudhttp_verdict pclassify(void *ctx, const struct cloudhttp_response *r)
{
	return cloudcall_bearer_verdict(ctx, r, r->status == 429, "");
}

/* The message of an error answer: {"Error": {"Code", "Message"}} in any case. */
static void error_text(const struct cloudhttp_response *r, char *out, size_t len)
{
	cJSON *doc = r->body_len ? cJSON_ParseWithLength(r->body, r->body_len) : NULL;
	const cJSON *e = cJSON_GetObjectItem(doc, "error"), *code, *msg;

	if (!e)
		e = doc;
	code = cJSON_GetObjectItem(e, "code");
	msg = cJSON_GetObjectItem(e, "message");
	snprintf(out, len, "%s%s%s", cJSON_IsString(code) ? code->valuestring : "",
		 cJSON_IsString(code) && cJSON_IsString(msg) ? ": " : "",
		 cJSON_IsString(msg) ? msg->valuestring : "");
	if (!out[0])
		snprintf(out, len, "no error message");
	cJSON_Delete(doc);
}

/* Appends 'link' to 'b' with what a URL may not hold bare (blanks, quotes)
 * percent-encoded: NextPageLink comes with its $filter's spaces as they are. */
static void encode_link(struct buf *b, const char *link)
{
	for (; *link; link++) {
		unsigned char ch = (unsigned char)*link;

		if (ch <= 0x20 || ch >= 0x7f || strchr("\"'<>\\^`{|}", ch))
			buf_printf(b, "%%%02X", ch);
		else
			buf_append(b, link, 1);
	}
}

/*
 * The URL of a NextPageLink: its path and query on the configured endpoint
 * (a page is never fetched from another host). -1 when it names no
 * /api/retail/prices.
 */
static int next_url(const struct az_prov *ap, const char *link, struct buf *out)
{
	const char *p = strstr(link, "/api/retail/prices");

	if (!p || (strncmp(link, "http://", 7) && strncmp(link, "https://", 8) && p != link))
		return -1;
	buf_puts(out, ap->prices);
	encode_link(out, p);
	return 0;
}

/* One GET of 'url': 0 with a 2xx answer in *resp, or -1 with 'st'.
 * *resp is initialised either way. */
static int get_page(struct provider *p, const char *url, int page, struct cloudhttp_response *resp,
		    struct provider_status *st)
{
	struct az_prov *ap = AP(p);
	char what[48], text[300];
	struct cloudcall_bearer c = { .cloud = "azure", .what = what, .bucket = p->reads, .clock = ap->clock,
				      .log = ap->log, .st = st };
	struct cloudjson_request r = {
		.what = what, .method = "GET", .url = url, .prepare = pprepare, .classify = pclassify, .ctx = &c,
	};

	snprintf(what, sizeof(what), "Retail Prices API page %d", page);
	azure_count_call(ap, "prices");
	if (cloudjson_send(ap->http, &r, resp, st) < 0)
		return -1;
	if (resp->status < 200 || resp->status >= 300) {
		error_text(resp, text, sizeof(text));
		azure_status(st, resp->throttled || resp->status == 429 ? PROVIDER_THROTTLED
				 : resp->status >= 500 ? PROVIDER_TRANSIENT : PROVIDER_INVALID,
			     "%s: HTTP %ld: %s", what, resp->status, text);
		if (resp->retry_after_ms > 0)
			st->retry_after_s = (resp->retry_after_ms + 999) / 1000;
		return -1;
	}
	return 0;
}

/* The prices of keys[] among the meters of 'filter', every page of them. */
static int query(struct provider *p, const char *filter, const struct pricing_key *keys, size_t n,
		 double *prices, struct provider_status *st)
{
	struct az_prov *ap = AP(p);
	struct buf url = BUF_INIT;
	char next[4096];
	int page, rc = -1;

	buf_printf(&url, "%s/api/retail/prices?api-version=%s&$filter=", ap->prices, AZURE_PRICES_API_VERSION);
	buf_percent_encode(&url, filter);
	for (page = 1;; page++) {
		struct cloudhttp_response resp;
		struct errbuf err;
		int got;

		if (url.oom) {
			azure_status(st, PROVIDER_TRANSIENT, "out of memory");
			break;
		}
		if (get_page(p, url.data, page, &resp, st) < 0) {
			cloudhttp_response_free(&resp);
			break;
		}
		got = azure_pricing_page(resp.body, resp.body_len, keys, n, prices, next, sizeof(next), &err);
		cloudhttp_response_free(&resp);
		if (got < 0) {
			azure_status(st, PROVIDER_TRANSIENT, "Retail Prices API page %d: %s", page, err.msg);
			break;
		}
		if (!next[0]) {
			rc = 0;
			break;
		}
		if (page == MAX_PAGES) {
			azure_status(st, PROVIDER_TRANSIENT,
				     "Retail Prices API: still a NextPageLink after %d pages; not followed further",
				     MAX_PAGES);
			break;
		}
		buf_free(&url);
		if (next_url(ap, next, &url) < 0) {
			azure_status(st, PROVIDER_INVALID,
				     "Retail Prices API page %d: NextPageLink %.100s is not a Retail Prices URL", page,
				     next);
			break;
		}
	}
	buf_free(&url);
	return rc;
}

/* pricing_fetch_fn: per region, the sizes asked in batches whose filter
 * stays under FILTER_MAX characters. */
static int fetch(void *ctx, const struct pricing_key *keys, size_t n, double *prices,
		 struct provider_status *st)
{
	struct provider *p = ctx;
	const char **types = calloc(n + 1, sizeof(*types));
	bool *done = calloc(n + 1, sizeof(*done));
	struct buf f = BUF_INIT;
	size_t i, j, k;
	int rc = -1;

	if (!types || !done) {
		azure_status(st, PROVIDER_TRANSIENT, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		size_t nt = 0, base;

		if (done[i])
			continue;
		if (!azure_pricing_name_ok(keys[i].location)) {
			done[i] = true; /* never quoted into a filter: no price */
			continue;
		}
		/* every size of this region, each once */
		for (j = i; j < n; j++) {
			if (done[j] || strcasecmp(keys[j].location, keys[i].location))
				continue;
			done[j] = true;
			if (!azure_pricing_name_ok(keys[j].type))
				continue;
			for (k = 0; k < nt && strcasecmp(types[k], keys[j].type); k++)
				;
			if (k == nt)
				types[nt++] = keys[j].type;
		}
		for (base = 0; base < nt;) {
			size_t m = 0, len = 120;

			while (base + m < nt && (m == 0 || len + strlen(types[base + m]) + 20 < FILTER_MAX))
				len += strlen(types[base + m++]) + 20;
			buf_free(&f);
			if (azure_pricing_filter(&f, keys[i].location, types + base, m) < 0) {
				azure_status(st, PROVIDER_TRANSIENT, "out of memory");
				goto out;
			}
			if (query(p, f.data, keys, n, prices, st) < 0)
				goto out;
			base += m;
		}
	}
	rc = 0;
out:
	buf_free(&f);
	free(types);
	free(done);
	return rc;
}

/* ---- the provider's side ---- */

int azure_pricing_init(struct provider *p, const struct azure_provider_opts *o, struct errbuf *err)
{
	struct az_prov *ap = AP(p);
	const struct config *c = ap->config;
	const char *v = c->azure.endpoint_prices, *what = "provider.azure.endpoints.prices";
	size_t n;

	if (!c->pricing_enabled)
		return 0;
	if (!v && !c->azure.endpoint_resource_manager && azure_env_get(&o->env, "LUASCALE_SIM_AZURE_ARM_ENDPOINT")) {
		v = ap->arm; /* the simulator serves both; arm_root checked it is loopback */
		what = "LUASCALE_SIM_AZURE_ARM_ENDPOINT";
	}
	if (!v) {
		v = AZURE_PRICES_DEFAULT;
		what = "the Retail Prices API";
	}
	if (azure_check_endpoint(v, what, false, err) < 0)
		return -1;
	n = strlen(v);
	while (n > 0 && v[n - 1] == '/')
		n--;
	if (n >= sizeof(ap->prices))
		return errbuf_set(err, "%s is too long", what);
	snprintf(ap->prices, sizeof(ap->prices), "%.*s", (int)n, v);
	ap->pricing = pricing_from_config("azure", fetch, p, ap->clock, ap->log, c);
	if (!ap->pricing)
		return errbuf_set(err, "out of memory");
	return 0;
}

void azure_prices(struct provider *p, struct provider_group *groups, size_t n, struct executor *ex)
{
	struct az_prov *ap = AP(p);
	struct az_group g;
	size_t i;

	if (!ap->pricing)
		return;
	for (i = 0; i < n; i++) {
		bool spot;

		if (azure_group_get(ap, groups[i].name, &g) < 0 || !g.location[0])
			continue;
		spot = g.spot || pricing_capacity_of(&groups[i].tmpl) == PRICING_SPOT;
		pricing_price_groups(ap->pricing, g.location, &groups[i], 1, &spot, NULL);
	}
	pricing_schedule(ap->pricing, ex);
}

uint64_t azure_price_failures(struct provider *p)
{
	return pricing_failures(AP(p)->pricing);
}
