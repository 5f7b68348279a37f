/*
 * Tests for the Azure provider's prices: one Retail Prices API page read
 * and its meters chosen (Linux pay as you go for on-demand, the Spot meter
 * for spot; Windows, Low Priority, DevTestConsumption, Reservation, other
 * regions, currencies and non-primary meters left out), malformed pages
 * refused with the item and field named, the filter, and the provider end
 * to end against a loopback fake (a Spot scale set priced at its Spot
 * meter, NextPageLink followed on the configured endpoint only, no token
 * sent, a page cut short failing the whole refresh with nothing kept).
 * Virtual clock and executor: nothing waits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "config.h"
#include "providers/azure/azure.h"
#include "providers/azure/azure_pricing.h"
#include "runtime/executor.h"
#include "test_azure_clock.h"
#include "test_cloud_server.h"

#define T0 1800000000LL
#define SUB "0a1b2c3d-0000-4000-8000-00000000abcd"
#define RG "rg1"
#define SS_PATH "/subscriptions/" SUB "/resourceGroups/" RG "/providers/Microsoft.Compute/virtualMachineScaleSets/pool1"

/* Appends an item of a page to 'b' (after a ',' when one came before);
 * 'extra' ("{...}", NULL: none) replaces or adds fields. */
static void item(struct buf *b, const char *sku, const char *region, const char *meter, const char *product,
		 const char *type, double price, const char *extra)
{
	cJSON *o = cJSON_CreateObject(), *x = extra ? cJSON_Parse(extra) : NULL, *c;
	char *text;

	cJSON_AddStringToObject(o, "currencyCode", "USD");
	cJSON_AddNumberToObject(o, "tierMinimumUnits", 0);
	cJSON_AddNumberToObject(o, "retailPrice", price);
	cJSON_AddNumberToObject(o, "unitPrice", price);
	cJSON_AddStringToObject(o, "armRegionName", region);
	cJSON_AddStringToObject(o, "location", "US East");
	cJSON_AddStringToObject(o, "meterName", meter);
	cJSON_AddStringToObject(o, "productName", product);
	cJSON_AddStringToObject(o, "skuName", meter);
	cJSON_AddStringToObject(o, "serviceName", "Virtual Machines");
	cJSON_AddStringToObject(o, "unitOfMeasure", "1 Hour");
	cJSON_AddStringToObject(o, "type", type);
	cJSON_AddBoolToObject(o, "isPrimaryMeterRegion", true);
	cJSON_AddStringToObject(o, "armSkuName", sku);
	assert_true(!extra || x);
	while (x && (c = x->child)) {
		cJSON_DetachItemViaPointer(x, c);
		cJSON_DeleteItemFromObjectCaseSensitive(o, c->string);
		cJSON_AddItemToObject(o, c->string, c);
	}
	cJSON_Delete(x);
	text = cJSON_PrintUnformatted(o);
	buf_printf(b, "%s%s", b->len && b->data[b->len - 1] == '}' ? "," : "", text);
	cJSON_free(text);
	cJSON_Delete(o);
}

static struct pricing_key key(const char *type, const char *loc, enum pricing_capacity c)
{
	struct pricing_key k;

	memset(&k, 0, sizeof(k));
	snprintf(k.type, sizeof(k.type), "%s", type);
	snprintf(k.location, sizeof(k.location), "%s", loc);
	k.capacity = c;
	return k;
}

/* Every kind of meter a VM size has; only two are a node's price. */
static void test_meter_choice(void **state)
{
	struct buf b = BUF_INIT;
	struct pricing_key keys[4] = {
		key("Standard_D4s_v5", "eastus", PRICING_ON_DEMAND), key("Standard_D4s_v5", "eastus", PRICING_SPOT),
		key("standard_d4s_v5", "EastUS", PRICING_SPOT), key("Standard_E4s_v5", "eastus", PRICING_ON_DEMAND),
	};
	double prices[4] = {0, 0, 0, 0};
	struct errbuf err = {""};
	char next[512];

	(void)state;
	buf_puts(&b, "{\"BillingCurrency\":\"USD\",\"Items\":[");
	item(&b, "Standard_D4s_v5", "eastus", "D4s v5", "Virtual Machines Dsv5 Series", "Consumption", 0.192, NULL);
	item(&b, "Standard_D4s_v5", "eastus", "D4s v5 Spot", "Virtual Machines Dsv5 Series", "Consumption", 0.0384, NULL);
	item(&b, "Standard_D4s_v5", "eastus", "D4s v5 Low Priority", "Virtual Machines Dsv5 Series", "Consumption", 0.05, NULL);
	item(&b, "Standard_D4s_v5", "eastus", "D4s v5", "Virtual Machines Dsv5 Series Windows", "Consumption", 0.376, NULL);
	item(&b, "Standard_D4s_v5", "eastus", "D4s v5 Spot", "Virtual Machines Dsv5 Series Windows", "Consumption", 0.09, NULL);
	item(&b, "Standard_D4s_v5", "eastus", "D4s v5", "Virtual Machines Dsv5 Series", "DevTestConsumption", 0.3, NULL);
	item(&b, "Standard_D4s_v5", "eastus", "D4s v5", "Virtual Machines Dsv5 Series", "Reservation", 1009.0,
	     "{\"reservationTerm\":\"1 Year\"}");
	item(&b, "Standard_D4s_v5", "westus2", "D4s v5", "Virtual Machines Dsv5 Series", "Consumption", 0.5, NULL);
	item(&b, "Standard_D4s_v5", "eastus", "D4s v5", "Virtual Machines Dsv5 Series", "Consumption", 0.9,
	     "{\"isPrimaryMeterRegion\":false}");
	item(&b, "Standard_D4s_v5", "eastus", "D4s v5", "Virtual Machines Dsv5 Series", "Consumption", 0.8,
	     "{\"currencyCode\":\"EUR\"}");
	item(&b, "Standard_D4s_v5", "eastus", "D4s v5", "Virtual Machines Dsv5 Series", "Consumption", 0.7,
	     "{\"unitOfMeasure\":\"1/Month\"}");
	item(&b, "Standard_D4s_v5", "eastus", "D4s v5", "Virtual Machines Dsv5 Series", "Consumption", 0, NULL);
	buf_puts(&b, "],\"NextPageLink\":\"https://prices.azure.com:443/api/retail/prices?$skip=100\",\"Count\":12}");
	assert_int_equal(azure_pricing_page(b.data, b.len, keys, 4, prices, next, sizeof(next), &err), 12);
	assert_true(prices[0] == 0.192);  /* Linux pay as you go */
	assert_true(prices[1] == 0.0384); /* the Linux Spot meter */
	assert_true(prices[2] == 0.0384); /* names compared as ARM does: without case */
	assert_true(prices[3] == 0);      /* no meter of that size on the page */
	assert_string_equal(next, "https://prices.azure.com:443/api/retail/prices?$skip=100");
	buf_free(&b);

	/* the last page: NextPageLink null */
	buf_puts(&b, "{\"Items\":[],\"NextPageLink\":null,\"Count\":0}");
	assert_int_equal(azure_pricing_page(b.data, b.len, keys, 4, prices, next, sizeof(next), &err), 0);
	assert_string_equal(next, "");
	buf_free(&b);
}

/* A malformed page is an error naming where; expect 'want' in its message. */
static void refused(const char *page, const char *want)
{
	struct pricing_key k = key("Standard_D4s_v5", "eastus", PRICING_ON_DEMAND);
	struct errbuf err = {""};
	double price = 0;
	char next[256];

	if (azure_pricing_page(page, strlen(page), &k, 1, &price, next, sizeof(next), &err) != -1)
		fail_msg("accepted: %s", page);
	if (!strstr(err.msg, want))
		fail_msg("\"%s\" does not say \"%s\"", err.msg, want);
}

#define GOOD "\"retailPrice\":0.2,\"armRegionName\":\"eastus\",\"skuName\":\"D4s v5\",\"productName\":\"P\"," \
	     "\"type\":\"Consumption\",\"unitOfMeasure\":\"1 Hour\",\"currencyCode\":\"USD\""

static void test_malformed(void **state)
{
	struct buf b = BUF_INIT;
	char cut[512];

	(void)state;
	refused("", "not JSON");
	refused("[]", "not a JSON object");
	refused("{\"Count\":0}", "no Items");
	refused("{\"Items\":{}}", "Items is not a list");
	refused("{\"Items\":[7]}", "Items[0] is not an object");
	refused("{\"Items\":[{" GOOD ",\"armSkuName\":\"Standard_D4s_v5\"},{" GOOD "}]}", "Items[1]: no armSkuName");
	refused("{\"Items\":[{" GOOD ",\"armSkuName\":7}]}", "Items[0].armSkuName is not a string");
	refused("{\"Items\":[{\"retailPrice\":\"0.2\",\"armSkuName\":\"x\"}]}", "Items[0].retailPrice is not a number");
	refused("{\"Items\":[{\"armSkuName\":\"x\"}]}", "Items[0]: no retailPrice");
	refused("{\"Items\":[{\"retailPrice\":-0.5,\"armSkuName\":\"x\"}]}", "Items[0].retailPrice -0.5 is negative");
	refused("{\"Items\":[{" GOOD ",\"armSkuName\":\"x\",\"isPrimaryMeterRegion\":\"yes\"}]}",
		"Items[0].isPrimaryMeterRegion is not a boolean");
	refused("{\"Items\":[],\"NextPageLink\":7}", "NextPageLink is neither a URL nor null");
	refused("{\"Items\":[],\"Count\":3}", "Count disagrees but Items holds 0");
	/* a page cut short on the wire */
	item(&b, "Standard_D4s_v5", "eastus", "D4s v5", "Virtual Machines Dsv5 Series", "Consumption", 0.192, NULL);
	snprintf(cut, sizeof(cut), "{\"Items\":[%.*s", (int)(b.len / 2), b.data);
	refused(cut, "not JSON");
	buf_free(&b);
}

static void test_filter(void **state)
{
	const char *types[] = {"Standard_D4s_v5", "Standard_NC6s_v3"};
	struct buf b = BUF_INIT;

	(void)state;
	assert_int_equal(azure_pricing_filter(&b, "eastus", types, 2), 0);
	assert_string_equal(b.data, "serviceName eq 'Virtual Machines' and armRegionName eq 'eastus' and "
				    "priceType eq 'Consumption' and (armSkuName eq 'Standard_D4s_v5' or "
				    "armSkuName eq 'Standard_NC6s_v3')");
	buf_free(&b);
	assert_true(azure_pricing_name_ok("Standard_D4s_v5"));
	assert_true(azure_pricing_name_ok("eastus2"));
	assert_false(azure_pricing_name_ok("x' or serviceName eq 'y"));
	assert_false(azure_pricing_name_ok(""));
}

/* ---- the provider against a fake ---- */

struct fake {
	struct cs_server cs;
	bool cut;               /* page 2 is cut short */
	int pages;
};

static void handler(void *ud, size_t index, const struct cs_req *rq, struct cs_resp *rs)
{
	struct fake *f = ud;
	const char *t = rq->target;
	struct buf b = BUF_INIT;

	(void)index;
	snprintf(rs->headers, sizeof(rs->headers), "Content-Type: application/json; charset=utf-8\n");
	if (!strncmp(t, "/metadata/identity/oauth2/token?", 32)) {
		snprintf(rs->body, sizeof(rs->body), "{\"access_token\":\"eyJ.ARM-S3KR1T\",\"expires_in\":\"86399\","
			 "\"resource\":\"https://management.azure.com/\",\"token_type\":\"Bearer\"}");
		return;
	}
	if (!strncmp(t, "/api/retail/prices?", 19)) {
		f->pages++;
		if (!strstr(t, "skip=1")) {
			buf_puts(&b, "{\"Items\":[");
			item(&b, "Standard_D4s_v5", "eastus", "D4s v5", "Virtual Machines Dsv5 Series", "Consumption", 0.192, NULL);
			/* as Azure writes it: another host, the filter's blanks as they are */
			buf_puts(&b, "],\"NextPageLink\":\"https://prices.azure.com:443/api/retail/prices?api-version=2023-01-01-preview"
				 "&$filter=armSkuName eq 'Standard_D4s_v5'&$skip=1\",\"Count\":1}");
		} else {
			buf_puts(&b, "{\"Items\":[");
			item(&b, "Standard_D4s_v5", "eastus", "D4s v5 Spot", "Virtual Machines Dsv5 Series", "Consumption", 0.0384, NULL);
			buf_puts(&b, "],\"NextPageLink\":null,\"Count\":1}");
			if (f->cut)
				b.data[b.len / 2] = '\0';
		}
		snprintf(rs->body, sizeof(rs->body), "%s", b.data);
		buf_free(&b);
		return;
	}
	if (!strncmp(t, SS_PATH "?", strlen(SS_PATH) + 1)) {
		snprintf(rs->body, sizeof(rs->body),
			 "{\"name\":\"pool1\",\"location\":\"eastus\",\"sku\":{\"name\":\"Standard_D4s_v5\",\"capacity\":0},"
			 "\"tags\":{\"max\":\"3\"},\"properties\":{\"orchestrationMode\":\"Uniform\","
			 "\"virtualMachineProfile\":{\"priority\":\"Spot\"}}}");
		return;
	}
	if (!strncmp(t, SS_PATH "/virtualMachines?", strlen(SS_PATH) + 17)) {
		snprintf(rs->body, sizeof(rs->body), "{\"value\":[]}");
		return;
	}
	rs->status = 404;
	snprintf(rs->body, sizeof(rs->body), "{\"error\":{\"code\":\"NotFound\",\"message\":\"%.100s\"}}", t);
}

struct fx {
	struct fake fk;
	struct step_clock *clk;
	struct config *cfg;
	struct provider *p;
	struct executor *ex;
	char env[4][256];
	char log[16384];
	struct logger logger;
};

static const char *fx_getenv(void *ud, const char *name)
{
	struct fx *f = ud;
	size_t i, n = strlen(name);

	for (i = 0; i < 4; i++)
		if (!strncmp(f->env[i], name, n) && f->env[i][n] == '=')
			return f->env[i] + n + 1;
	return NULL;
}

static void capture(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct fx *f = ctx;
	size_t n = strlen(f->log);

	(void)level;
	(void)wall;
	snprintf(f->log + n, sizeof(f->log) - n, "%s\n", msg);
}

static struct fx *fx_new(bool cut)
{
	struct fx *f = calloc(1, sizeof(*f));
	const char *yaml = "node_groups:\n  - name: workers\n    azure: {vmss: pool1}\nprovider:\n  kind: azure\n"
			   "  read_qps: 1000\n  read_burst: 1000\n";
	struct config_opts co = { .flags = CONFIG_OFFLINE };
	struct azure_provider_opts o;
	struct errbuf e = {""};

	assert_non_null(f);
	f->fk.cut = cut;
	f->clk = sc_new(T0);
	assert_int_equal(cs_start(&f->fk.cs, handler, &f->fk, NULL, NULL), 0);
	snprintf(f->env[0], sizeof(f->env[0]), "ARM_SUBSCRIPTION_ID=%s", SUB);
	snprintf(f->env[1], sizeof(f->env[1]), "LUASCALE_SIM_AZURE_ARM_ENDPOINT=%s/", f->fk.cs.url);
	snprintf(f->env[2], sizeof(f->env[2]), "AZURE_POD_IDENTITY_AUTHORITY_HOST=%s", f->fk.cs.url);
	snprintf(f->env[3], sizeof(f->env[3]), "ARM_RESOURCE_GROUP=%s", RG);
	f->logger = (struct logger){ capture, f, LOG_DEBUG, NULL };
	f->cfg = config_parse_opts(yaml, strlen(yaml), "azure.yaml", &co, &e);
	if (!f->cfg)
		fail_msg("config: %s", e.msg);
	memset(&o, 0, sizeof(o));
	o.config = f->cfg;
	o.clock = &f->clk->base;
	o.log = &f->logger;
	o.env.get = fx_getenv;
	o.env.ud = f;
	o.max_attempts = 2;
	f->p = azure_provider_new(&o, &e);
	if (!f->p)
		fail_msg("azure_provider_new: %s", e.msg);
	f->ex = executor_new_virtual(f->clk->v);
	assert_non_null(f->ex);
	return f;
}

static void fx_free(struct fx *f)
{
	assert_null(strstr(f->log, "S3KR1T"));
	executor_shutdown(f->ex, 0);
	provider_free(f->p);
	config_free(f->cfg);
	cs_stop(&f->fk.cs);
	sc_free(f->clk);
	free(f);
}

/* Lists the groups, prices them (a refresh runs on the executor), and
 * prices them again: the second look sees what the refresh got. */
static double price_of_workers(struct fx *f)
{
	struct provider_group *gs;
	struct provider_status st;
	size_t n;
	double price;

	assert_int_equal(f->p->ops->list_groups(f->p, &gs, &n, &st), 0);
	assert_int_equal((int)n, 1);
	assert_string_equal(gs[0].tmpl.instance_type, "Standard_D4s_v5");
	f->p->ops->prices(f->p, gs, n, f->ex);
	assert_true(gs[0].tmpl.price_per_hour == 0); /* never waited for */
	executor_run_all(f->ex);
	f->p->ops->prices(f->p, gs, n, f->ex);
	price = gs[0].tmpl.price_per_hour;
	provider_groups_free(gs, n);
	return price;
}

static void test_provider_spot_and_pages(void **state)
{
	struct fx *f = fx_new(false);
	size_t i;
	bool first = true;

	(void)state;
	/* a Spot scale set: the Spot meter, found on the second page */
	assert_true(price_of_workers(f) == 0.0384);
	assert_int_equal(f->fk.pages, 2);
	assert_int_equal((int)azure_provider_calls(f->p, "prices"), 2);
	assert_int_equal((int)f->p->ops->price_failures(f->p), 0);
	for (i = 0; i < f->fk.cs.n_reqs; i++) {
		const struct cs_req *rq = &f->fk.cs.reqs[i];

		if (strncmp(rq->target, "/api/retail/prices?", 19))
			continue;
		/* the public API gets no token */
		assert_null(cs_header(rq, "Authorization"));
		if (first) {
			assert_non_null(strstr(rq->target, "api-version=2023-01-01-preview&$filter=serviceName%20eq%20%27Virtual%20Machines%27"
							    "%20and%20armRegionName%20eq%20%27eastus%27%20and%20priceType%20eq%20%27Consumption%27"
							    "%20and%20%28armSkuName%20eq%20%27Standard_D4s_v5%27%29"));
			first = false;
		} else {
			/* NextPageLink on the configured endpoint, its blanks and quotes encoded */
			assert_string_equal(rq->target, "/api/retail/prices?api-version=2023-01-01-preview"
							"&$filter=armSkuName%20eq%20%27Standard_D4s_v5%27&$skip=1");
		}
	}
	assert_false(first);
	assert_non_null(strstr(f->log, "azure: prices refreshed (1 asked)"));
	fx_free(f);
}

static void test_provider_cut_page_keeps_nothing(void **state)
{
	struct fx *f = fx_new(true);

	(void)state;
	/* page 1 had a price, page 2 was cut short: nothing of the refresh is kept */
	assert_true(price_of_workers(f) == 0);
	assert_int_equal((int)f->p->ops->price_failures(f->p), 1);
	assert_non_null(strstr(f->log, "azure: cannot refresh the prices"));
	assert_non_null(strstr(f->log, "Retail Prices API page 2: the answer is not JSON"));
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_meter_choice),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_provider_spot_and_pages),
		cmocka_unit_test(test_provider_cut_page_keeps_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
