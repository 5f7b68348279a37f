/*
 * Tests for GCE prices from the Cloud Billing Catalog (gce_pricing.c): the
 * Instance Core and Instance Ram SKUs picked per family, region and
 * capacity type among SKUs that must be left alone; the price arithmetic;
 * malformed pages refused with the page, the SKU and the field named; and
 * a refresh through the price cache over pages served by a fake catalog
 * (paging by nextPageToken, a truncated or malformed page keeping nothing
 * of the refresh). The clock is virtual.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "providers/gce/gce_pricing.h"
#include "runtime/clock.h"

/* A SKU as the catalog writes one. */
static void add_sku(char *out, size_t len, const char *desc, const char *usage, const char *region,
		    const char *unit, const char *units, long nanos)
{
	size_t n = strlen(out);

	snprintf(out + n, len - n,
		 "%s{\"name\":\"services/6F81-5844-456A/skus/%04zX-0000-0000\",\"skuId\":\"x\","
		 "\"description\":\"%s\",\"category\":{\"serviceDisplayName\":\"Compute Engine\","
		 "\"resourceFamily\":\"Compute\",\"resourceGroup\":\"CPU\",\"usageType\":\"%s\"},"
		 "\"serviceRegions\":[\"%s\"],\"pricingInfo\":[{\"summary\":\"\",\"pricingExpression\":"
		 "{\"usageUnit\":\"%s\",\"displayQuantity\":1,\"tieredRates\":[{\"startUsageAmount\":0,"
		 "\"unitPrice\":{\"currencyCode\":\"USD\",\"units\":\"%s\",\"nanos\":%ld}}]},"
		 "\"currencyConversionRate\":1}],\"serviceProviderName\":\"Google\"}",
		 strchr(out, '{') && out[n - 1] == '}' ? "," : "", n, desc, usage, region, unit, units, nanos);
}

static struct gce_rate rate(const char *family, const char *region, enum pricing_capacity c)
{
	struct gce_rate r;

	memset(&r, 0, sizeof(r));
	snprintf(r.family, sizeof(r.family), "%s", family);
	snprintf(r.region, sizeof(r.region), "%s", region);
	r.capacity = c;
	return r;
}

static int page_text(const char *text, struct gce_rate *rates, size_t n, char *next, size_t next_len,
		     struct errbuf *err)
{
	cJSON *doc = cJSON_Parse(text);
	int rc;

	if (!doc)
		return errbuf_set(err, "not JSON");
	rc = gce_pricing_page(doc, 1, rates, n, next, next_len, err);
	cJSON_Delete(doc);
	return rc;
}

static void test_family(void **state)
{
	char f[16];

	(void)state;
	assert_int_equal(gce_pricing_family("n2d-standard-8", f, sizeof(f)), 0);
	assert_string_equal(f, "n2d");
	assert_int_equal(gce_pricing_family("e2-standard-4", f, sizeof(f)), 0);
	assert_string_equal(f, "e2");
	assert_int_equal(gce_pricing_family("e2", f, sizeof(f)), -1);
	assert_int_equal(gce_pricing_family("-standard", f, sizeof(f)), -1);
	assert_int_equal(gce_pricing_family("E2-standard-4", f, sizeof(f)), -1);
	assert_int_equal(gce_pricing_family("averyveryverylongfamily-1", f, sizeof(f)), -1);
	assert_true(gce_pricing_per_instance("e2-micro"));
	assert_true(gce_pricing_per_instance("f1-micro"));
	assert_true(gce_pricing_per_instance("g1-small"));
	assert_false(gce_pricing_per_instance("e2-standard-2"));
}

/* The right SKUs among look-alikes, and the arithmetic. */
static void test_picks_core_and_ram(void **state)
{
	char page[16384] = "{\"skus\":[", next[64];
	struct gce_rate r[5];
	struct errbuf err;

	(void)state;
	add_sku(page, sizeof(page), "E2 Instance Core running in Americas", "OnDemand", "us-central1", "h", "0", 21811000);
	add_sku(page, sizeof(page), "E2 Instance Ram running in Americas", "OnDemand", "us-central1", "GiBy.h", "0", 2923000);
	add_sku(page, sizeof(page), "Spot Preemptible E2 Instance Core running in Americas", "Preemptible", "us-central1", "h", "0", 6543300);
	add_sku(page, sizeof(page), "Spot Preemptible E2 Instance Ram running in Americas", "Preemptible", "us-central1", "GiBy.h", "0", 876900);
	/* look-alikes: another region, custom, sole tenancy, a commitment, N2D for N2 */
	add_sku(page, sizeof(page), "E2 Instance Core running in EMEA", "OnDemand", "europe-west1", "h", "0", 99000000);
	add_sku(page, sizeof(page), "E2 Custom Instance Core running in Americas", "OnDemand", "us-central1", "h", "0", 99000000);
	add_sku(page, sizeof(page), "E2 Sole Tenancy Instance Ram running in Americas", "OnDemand", "us-central1", "GiBy.h", "0", 99000000);
	add_sku(page, sizeof(page), "Commitment v1: E2 Cpu in Americas for 1 Year", "Commit1Yr", "us-central1", "h", "0", 1000);
	add_sku(page, sizeof(page), "N2D AMD Instance Core running in Americas", "OnDemand", "us-central1", "h", "0", 99000000);
	add_sku(page, sizeof(page), "N2 Instance Core running in Americas", "OnDemand", "us-central1", "h", "0", 31611000);
	add_sku(page, sizeof(page), "N2 Instance RAM running in Americas", "OnDemand", "us-central1", "GiBy.h", "0", 4237000);
	add_sku(page, sizeof(page), "N1 Predefined Instance Core running in Americas", "OnDemand", "us-central1", "h", "0", 31611000);
	add_sku(page, sizeof(page), "N1 Predefined Instance Ram running in Americas", "OnDemand", "us-central1", "GiBy.h", "0", 4237000);
	/* a matching unit is checked only for the SKUs a rate needs: egress is another unit */
	add_sku(page, sizeof(page), "Network Internet Egress from Americas to Americas", "OnDemand", "us-central1", "GiBy", "0", 120000000);
	snprintf(page + strlen(page), sizeof(page) - strlen(page), "],\"nextPageToken\":\"tok-2\"}");
	r[0] = rate("e2", "us-central1", PRICING_ON_DEMAND);
	r[1] = rate("e2", "us-central1", PRICING_SPOT);
	r[2] = rate("n2", "us-central1", PRICING_ON_DEMAND);
	r[3] = rate("n1", "us-central1", PRICING_ON_DEMAND);
	r[4] = rate("c3", "us-central1", PRICING_ON_DEMAND);
	if (page_text(page, r, 5, next, sizeof(next), &err) < 0)
		fail_msg("%s", err.msg);
	assert_string_equal(next, "tok-2");
	assert_true(fabs(r[0].core - 0.021811) < 1e-12 && fabs(r[0].ram - 0.002923) < 1e-12);
	assert_true(fabs(r[1].core - 0.0065433) < 1e-12 && fabs(r[1].ram - 0.0008769) < 1e-12);
	assert_true(fabs(r[2].core - 0.031611) < 1e-12 && fabs(r[2].ram - 0.004237) < 1e-12);
	assert_true(fabs(r[3].core - 0.031611) < 1e-12 && fabs(r[3].ram - 0.004237) < 1e-12);
	assert_true(r[4].core == 0 && r[4].ram == 0);
	/* 4 x 0.021811 + 16 GiB x 0.002923 */
	assert_true(fabs(gce_pricing_machine(&r[0], 4, 16384) - 0.134012) < 1e-9);
	/* n1-standard-4: 4 vCPUs, 15 GiB */
	assert_true(fabs(gce_pricing_machine(&r[3], 4, 15360) - 0.189999) < 1e-9);
	assert_true(gce_pricing_machine(&r[4], 4, 16384) == 0);
	assert_true(gce_pricing_machine(&r[0], 0, 16384) == 0);
	assert_true(gce_pricing_machine(&r[0], 4, -1) == 0);
}

/* Proto3 defaults: units or nanos absent are 0; an int64 may be a number. */
static void test_money_forms(void **state)
{
	struct gce_rate r = rate("e2", "us-central1", PRICING_ON_DEMAND);
	struct errbuf err;
	char next[8];
	const char *page =
		"{\"skus\":[{\"description\":\"E2 Instance Core running in Americas\","
		"\"category\":{\"usageType\":\"OnDemand\"},\"serviceRegions\":[\"us-central1\"],"
		"\"pricingInfo\":[{\"pricingExpression\":{\"usageUnit\":\"h\",\"tieredRates\":"
		"[{\"unitPrice\":{\"nanos\":21811000}}]}}]},"
		"{\"description\":\"E2 Instance Ram running in Americas\","
		"\"category\":{\"usageType\":\"OnDemand\"},\"serviceRegions\":[\"us-central1\"],"
		"\"pricingInfo\":[{\"pricingExpression\":{\"usageUnit\":\"GiBy.h\",\"tieredRates\":"
		"[{\"startUsageAmount\":0,\"unitPrice\":{\"currencyCode\":\"USD\",\"units\":1}}]}}]}]}";

	(void)state;
	if (page_text(page, &r, 1, next, sizeof(next), &err) < 0)
		fail_msg("%s", err.msg);
	assert_true(fabs(r.core - 0.021811) < 1e-12);
	assert_true(r.ram == 1.0);
	assert_string_equal(next, "");
}

/* Each malformed page is refused, the error naming where and what. */
static void test_malformed(void **state)
{
	static const char *const head =
		"{\"skus\":[{\"name\":\"services/6F81-5844-456A/skus/AAAA-BBBB-CCCC\","
		"\"description\":\"E2 Instance Core running in Americas\","
		"\"category\":{\"usageType\":\"OnDemand\"},\"serviceRegions\":[\"us-central1\"]";
	static const struct {
		const char *tail;    /* after head, or a whole page when it starts with '{' */
		const char *want;    /* in the message */
	} cases[] = {
		{"}]}", "pricingInfo is missing"},
		{",\"pricingInfo\":[]}]}", "pricingInfo is not a non-empty list"},
		{",\"pricingInfo\":[{}]}]}", "pricingInfo[0].pricingExpression is missing"},
		{",\"pricingInfo\":[{\"pricingExpression\":{\"tieredRates\":[]}}]}]}", "usageUnit is missing"},
		{",\"pricingInfo\":[{\"pricingExpression\":{\"usageUnit\":7}}]}]}", "usageUnit is not a string"},
		{",\"pricingInfo\":[{\"pricingExpression\":{\"usageUnit\":\"mo\"}}]}]}", "usageUnit is \"mo\", expected \"h\""},
		{",\"pricingInfo\":[{\"pricingExpression\":{\"usageUnit\":\"h\"}}]}]}", "tieredRates is missing"},
		{",\"pricingInfo\":[{\"pricingExpression\":{\"usageUnit\":\"h\",\"tieredRates\":[]}}]}]}",
		 "tieredRates is not a non-empty list"},
		{",\"pricingInfo\":[{\"pricingExpression\":{\"usageUnit\":\"h\",\"tieredRates\":[{\"startUsageAmount\":5,"
		 "\"unitPrice\":{\"nanos\":1}}]}}]}]}", "no tier starting at 0"},
		{",\"pricingInfo\":[{\"pricingExpression\":{\"usageUnit\":\"h\",\"tieredRates\":[{\"startUsageAmount\":\"0\"}]}}]}]}",
		 "startUsageAmount is not a number"},
		{",\"pricingInfo\":[{\"pricingExpression\":{\"usageUnit\":\"h\",\"tieredRates\":[{}]}}]}]}",
		 "unitPrice is missing"},
		{",\"pricingInfo\":[{\"pricingExpression\":{\"usageUnit\":\"h\",\"tieredRates\":[{\"unitPrice\":"
		 "{\"nanos\":\"21811000\"}}]}}]}]}", "nanos is not an integer"},
		{",\"pricingInfo\":[{\"pricingExpression\":{\"usageUnit\":\"h\",\"tieredRates\":[{\"unitPrice\":"
		 "{\"nanos\":1.5}}]}}]}]}", "nanos is not an integer"},
		{",\"pricingInfo\":[{\"pricingExpression\":{\"usageUnit\":\"h\",\"tieredRates\":[{\"unitPrice\":"
		 "{\"nanos\":5000000000}}]}}]}]}", "nanos is not an integer from"},
		{",\"pricingInfo\":[{\"pricingExpression\":{\"usageUnit\":\"h\",\"tieredRates\":[{\"unitPrice\":"
		 "{\"units\":\"-1\"}}]}}]}]}", "negative"},
		{",\"pricingInfo\":[{\"pricingExpression\":{\"usageUnit\":\"h\",\"tieredRates\":[{\"unitPrice\":"
		 "{\"nanos\":-5}}]}}]}]}", "negative"},
		{",\"pricingInfo\":[{\"pricingExpression\":{\"usageUnit\":\"h\",\"tieredRates\":[{\"unitPrice\":"
		 "{\"units\":\"1\",\"nanos\":-5}}]}}]}]}", "mixes signs"},
		{",\"pricingInfo\":[{\"pricingExpression\":{\"usageUnit\":\"h\",\"tieredRates\":[{\"unitPrice\":"
		 "{\"units\":\"5000\"}}]}}]}]}", "absurd"},
		{",\"pricingInfo\":[{\"pricingExpression\":{\"usageUnit\":\"h\",\"tieredRates\":[{\"unitPrice\":"
		 "{\"units\":\"12abc\"}}]}}]}]}", "units is not an integer"},
		{",\"pricingInfo\":[{\"pricingExpression\":{\"usageUnit\":\"h\",\"tieredRates\":[{\"unitPrice\":"
		 "{\"units\":true}}]}}]}]}", "units is not an integer"},
		{",\"pricingInfo\":[{\"pricingExpression\":{\"usageUnit\":\"h\",\"tieredRates\":[{\"unitPrice\":"
		 "{\"currencyCode\":\"EUR\",\"nanos\":5}}]}}]}]}", "currencyCode is \"EUR\""},
		{"{\"skus\":{}}", "page 1: skus is not a list"},
		{"{\"skus\":[], \"nextPageToken\":5}", "page 1: nextPageToken is not a string"},
		{"[]", "page 1 is not a JSON object"},
		{"{\"skus\":[7]}", "page 1, skus[0] is not an object"},
		{"{\"skus\":[{\"description\":5}]}", "skus[0] (no name, \"no description\"): description is not a string"},
		{"{\"skus\":[{\"description\":\"x\",\"category\":[]}]}", "category is not an object"},
		{"{\"skus\":[{\"description\":\"x\",\"category\":{\"usageType\":1}}]}", "category.usageType is not a string"},
		{"{\"skus\":[{\"description\":\"x\",\"serviceRegions\":\"us-central1\"}]}", "serviceRegions is not a list"},
		{"{\"skus\":[{\"description\":\"x\",\"serviceRegions\":[1]}]}", "serviceRegions holds a non-string"},
	};
	char page[4096], next[64];
	struct errbuf err;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gce_rate r = rate("e2", "us-central1", PRICING_ON_DEMAND);

		if (cases[i].tail[0] == '{' || cases[i].tail[0] == '[')
			snprintf(page, sizeof(page), "%s", cases[i].tail);
		else
			snprintf(page, sizeof(page), "%s%s", head, cases[i].tail);
		err.msg[0] = '\0';
		if (page_text(page, &r, 1, next, sizeof(next), &err) == 0)
			fail_msg("case %zu accepted: %s", i, page);
		if (!strstr(err.msg, cases[i].want))
			fail_msg("case %zu: \"%s\" does not say \"%s\"", i, err.msg, cases[i].want);
		if (cases[i].tail[0] != '{' && cases[i].tail[0] != '[' &&
		    !strstr(err.msg, "page 1, skus[0] (services/6F81-5844-456A/skus/AAAA-BBBB-CCCC, \"E2 Instance Core running in Americas\")"))
			fail_msg("case %zu: \"%s\" does not name the SKU", i, err.msg);
		assert_true(r.core == 0);
	}
	/* a SKU no rate asks for may be malformed in its price: it is not read */
	{
		struct gce_rate r = rate("n2", "us-central1", PRICING_ON_DEMAND);

		snprintf(page, sizeof(page), "%s%s", head, "}]}");
		assert_int_equal(page_text(page, &r, 1, next, sizeof(next), &err), 0);
	}
	/* a token too long for the caller */
	{
		struct gce_rate r = rate("e2", "us-central1", PRICING_ON_DEMAND);

		assert_int_equal(page_text("{\"skus\":[],\"nextPageToken\":\"0123456789\"}", &r, 1, next, 8, &err), -1);
		assert_non_null(strstr(err.msg, "nextPageToken is longer"));
	}
}

/* ---- a refresh through the cache over a fake catalog ---- */

struct fake {
	const char *pages[4];   /* by token: "", "p2", "p3" */
	int calls;
	char urls[8][512];
	bool truncate_p2;       /* answer p2 cut short (the provider's call refuses it) */
};

static int fake_get(void *ctx, const char *url, cJSON **out, struct provider_status *st)
{
	struct fake *f = ctx;
	const char *tok = strstr(url, "pageToken=");
	int i = !tok ? 0 : !strncmp(tok + 10, "p2", 2) ? 1 : 2;
	char cut[4096];

	if (f->calls < 8)
		snprintf(f->urls[f->calls], sizeof(f->urls[0]), "%s", url);
	f->calls++;
	if (i == 1 && f->truncate_p2) {
		snprintf(cut, sizeof(cut), "%.*s", (int)strlen(f->pages[1]) / 2, f->pages[1]);
		*out = cJSON_Parse(cut);
	} else {
		*out = cJSON_Parse(f->pages[i]);
	}
	if (!*out) {
		st->code = PROVIDER_TRANSIENT;
		snprintf(st->message, sizeof(st->message), "GET %s: HTTP 200 with malformed JSON", url);
		return -1;
	}
	return 0;
}

static struct provider_group group(const char *name, const char *type)
{
	struct provider_group g;

	memset(&g, 0, sizeof(g));
	snprintf(g.name, sizeof(g.name), "%s", name);
	snprintf(g.tmpl.instance_type, sizeof(g.tmpl.instance_type), "%s", type);
	return g;
}

static void test_refresh_pages(void **state)
{
	char p1[4096] = "{\"skus\":[", p2[4096] = "{\"skus\":[", p2bad[4096] = "{\"skus\":[";
	struct clock *c = vclock_new(1700000000);
	struct fake f;
	struct gce_pricing_opts o;
	struct gce_pricing *gp;
	struct provider_group gs[3];
	const char *regions[3] = {"us-central1", "us-central1", "us-central1"};
	bool spot[3] = {false, true, false};
	struct provider_status st;
	struct errbuf err;

	(void)state;
	add_sku(p1, sizeof(p1), "E2 Instance Core running in Americas", "OnDemand", "us-central1", "h", "0", 21811000);
	add_sku(p1, sizeof(p1), "Spot Preemptible E2 Instance Core running in Americas", "Preemptible", "us-central1", "h", "0", 6543300);
	strcat(p1, "],\"nextPageToken\":\"p2\"}");
	add_sku(p2, sizeof(p2), "E2 Instance Ram running in Americas", "OnDemand", "us-central1", "GiBy.h", "0", 2923000);
	add_sku(p2, sizeof(p2), "Spot Preemptible E2 Instance Ram running in Americas", "Preemptible", "us-central1", "GiBy.h", "0", 876900);
	strcat(p2, "],\"nextPageToken\":\"\"}");
	add_sku(p2bad, sizeof(p2bad), "N2 Instance Ram running in Americas", "OnDemand", "us-central1", "GiBy.h", "-3", 0);
	strcat(p2bad, "]}");
	memset(&f, 0, sizeof(f));
	f.pages[0] = p1;
	f.pages[1] = p2;
	memset(&o, 0, sizeof(o));
	o.billing = "http://127.0.0.1:9";
	o.get = fake_get;
	o.ctx = &f;
	o.clock = c;
	gp = gce_pricing_new(&o, &err);
	assert_non_null(gp);
	gce_pricing_machine_type(gp, "e2-standard-4", 4, 16384, false);
	gce_pricing_machine_type(gp, "e2-medium", 2, 4096, false);
	gs[0] = group("od", "e2-standard-4");
	gs[1] = group("sp", "e2-standard-4");
	gs[2] = group("shared", "e2-medium");
	gce_pricing_groups(gp, gs, 3, regions, spot, NULL);
	assert_true(gs[0].tmpl.price_per_hour == 0);
	assert_int_equal(gce_pricing_refresh(gp, &st), 0);
	assert_int_equal(f.calls, 2);
	assert_string_equal(f.urls[0],
			    "http://127.0.0.1:9/v1/services/6F81-5844-456A/skus?currencyCode=USD&pageSize=5000");
	assert_string_equal(f.urls[1],
			    "http://127.0.0.1:9/v1/services/6F81-5844-456A/skus?currencyCode=USD&pageSize=5000&pageToken=p2");
	gce_pricing_groups(gp, gs, 3, regions, spot, NULL);
	assert_true(fabs(gs[0].tmpl.price_per_hour - 0.134012) < 1e-9);
	/* spot: 4 x 0.0065433 + 16 x 0.0008769 = 0.0402036 */
	assert_true(fabs(gs[1].tmpl.price_per_hour - 0.040204) < 1e-9);
	assert_true(gs[2].tmpl.price_per_hour == 0); /* shared core: billed per instance */
	assert_int_equal((int)gce_pricing_failures(gp), 0);

	/* n2 asked for now: page 2 comes back truncated: the refresh fails as
	 * a whole, is counted, and e2's prices stay */
	gce_pricing_machine_type(gp, "n2-standard-4", 4, 16384, false);
	gs[2] = group("n2", "n2-standard-4");
	gce_pricing_groups(gp, gs, 3, regions, spot, NULL);
	f.truncate_p2 = true;
	f.calls = 0;
	assert_int_equal(gce_pricing_refresh(gp, &st), -1);
	assert_non_null(strstr(st.message, "malformed JSON"));
	assert_int_equal((int)gce_pricing_failures(gp), 1);
	gs[0].tmpl.price_per_hour = gs[2].tmpl.price_per_hour = 0;
	gce_pricing_groups(gp, gs, 3, regions, spot, NULL);
	assert_true(fabs(gs[0].tmpl.price_per_hour - 0.134012) < 1e-9);
	assert_true(gs[2].tmpl.price_per_hour == 0);

	/* past the retry wait, page 2 is malformed (a negative price): the
	 * error names it, nothing is kept */
	f.truncate_p2 = false;
	f.pages[1] = p2bad;
	vclock_set(c, 10 * 60 * CLOCK_NS_PER_S);
	assert_int_equal(gce_pricing_refresh(gp, &st), -1);
	assert_non_null(strstr(st.message, "page 2, skus[0]"));
	assert_non_null(strstr(st.message, "negative"));
	assert_int_equal((int)gce_pricing_failures(gp), 2);
	gce_pricing_groups(gp, gs, 3, regions, spot, NULL);
	assert_true(fabs(gs[0].tmpl.price_per_hour - 0.134012) < 1e-9);

	/* a catalog whose page points at itself is refused, not followed forever */
	f.pages[0] = "{\"skus\":[],\"nextPageToken\":\"p3\"}";
	f.pages[2] = "{\"skus\":[],\"nextPageToken\":\"p3\"}";
	vclock_set(c, 20 * 60 * CLOCK_NS_PER_S);
	assert_int_equal(gce_pricing_refresh(gp, &st), -1);
	assert_non_null(strstr(st.message, "gives its own pageToken again"));
	gce_pricing_free(gp);
	vclock_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_family),
		cmocka_unit_test(test_picks_core_and_ram),
		cmocka_unit_test(test_money_forms),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_refresh_pages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
