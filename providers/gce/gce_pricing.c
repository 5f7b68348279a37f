/*
 * providers/gce: Compute Engine prices for the price cache
 * (providers/pricing.h) from the Cloud Billing Catalog API
 * (GET {billing}v1/services/6F81-5844-456A/skus?currencyCode=USD, paged by
 * nextPageToken): the Instance Core and Instance Ram SKUs of each machine
 * family, region and capacity type asked for, summed over a machine type's
 * vCPUs and GiB. It does not choose which groups are priced.
 */
#include "providers/gce/gce_pricing.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "providers/cloudhttp/cloudhttp.h"

#define PAGE_SIZE 5000
#define MAX_TYPES 512
#define MAX_UNIT_PRICE 1000.0 /* USD per vCPU or GiB an hour: above is absurd */

struct mtype {
	char name[64];
	int cpus;
	int64_t memory_mb;
	bool accelerators;
	bool told;  /* that it is left unpriced was logged */
};

struct gce_pricing {
	struct pricing *cache;
	gce_pricing_get_fn get;
	void *ctx;
	struct clock *clock;
	const struct logger *log;
	char billing[512];       /* ends in '/' */
	pthread_mutex_t mu;      /* types */
	struct mtype *types;
	size_t n_types;
};

/* ---- families and SKU descriptions ---- */

int gce_pricing_family(const char *machine_type, char *family, size_t len)
{
	const char *dash = strchr(machine_type, '-');
	const char *s;

	if (!dash || dash == machine_type || (size_t)(dash - machine_type) >= len)
		return -1;
	for (s = machine_type; s < dash; s++)
		if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s))
			return -1;
	snprintf(family, len, "%.*s", (int)(dash - machine_type), machine_type);
	return 0;
}

bool gce_pricing_per_instance(const char *machine_type)
{
	static const char *const shared[] = {"f1-micro", "g1-small", "e2-micro", "e2-small",
					     "e2-medium"};
	size_t i;

	for (i = 0; i < sizeof(shared) / sizeof(shared[0]); i++)
		if (!strcmp(machine_type, shared[i]))
			return true;
	return false;
}

/* Does 's' hold 'word' as a whole word (case-insensitive)? */
static bool has_word(const char *s, const char *word)
{
	size_t n = strlen(word);
	const char *p;

	for (p = s; *p; p++)
		if (!strncasecmp(p, word, n) && (p == s || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
			return true;
	return false;
}

/* Does 's' start with 'prefix' (case-insensitive)? Then the rest. */
static const char *skip_prefix(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);

	return strncasecmp(s, prefix, n) ? NULL : s + n;
}

enum part { PART_NONE, PART_CORE, PART_RAM };

/*
 * What a SKU's description says it is for 'family': its Instance Core or
 * Instance Ram ("E2 Instance Core running in Americas", "Spot Preemptible
 * N2D AMD Instance Ram running in Iowa", "N1 Predefined Instance Core ..."),
 * or none (another family, a custom, sole-tenant, extended-memory or
 * commitment SKU). C2's and M1's SKUs name their family in words.
 */
static enum part sku_part(const char *desc, const char *family)
{
	static const struct { const char *family, *words; } named[] = {
		{"c2", "Compute optimized"}, {"m1", "Memory-optimized"},
	};
	static const char *const excluded[] = {"Custom", "Sole", "Extended", "Commitment",
					       "Commit", "Reserved", "Premium", "Upgrade"};
	char token[32];
	const char *rest = NULL;
	bool core, ram;
	size_t i;

	for (i = 0; i < 2 && !rest; i++) {
		const char *p = skip_prefix(desc, i == 0 ? "Spot Preemptible " : "Preemptible ");

		if (p)
			desc = p;
	}
	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (!strcmp(family, named[i].family))
			rest = skip_prefix(desc, named[i].words);
	if (!rest) {
		snprintf(token, sizeof(token), "%s", family);
		rest = skip_prefix(desc, token);
	}
	if (!rest || *rest != ' ')
		return PART_NONE;
	for (i = 0; i < sizeof(excluded) / sizeof(excluded[0]); i++)
		if (has_word(rest, excluded[i]))
			return PART_NONE;
	core = has_word(rest, "Core");
	ram = has_word(rest, "Ram");
	if (core == ram)
		return PART_NONE;
	return core ? PART_CORE : PART_RAM;
}

/* ---- one page ---- */

/* A SKU's name for messages: "sku[3] (services/.../skus/ID, "desc")". */
static void sku_where(char *out, size_t len, int page, int idx, const cJSON *sku)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(sku, "name");
	const cJSON *desc = cJSON_GetObjectItemCaseSensitive(sku, "description");

	snprintf(out, len, "page %d, skus[%d] (%.80s, \"%.80s\")", page, idx,
		 cJSON_IsString(name) ? name->valuestring : "no name",
		 cJSON_IsString(desc) ? desc->valuestring : "no description");
}

/* An optional string field: absent (NULL, the proto3 default), or a string;
 * -1 when it is something else. */
static int opt_string(const cJSON *o, const char *key, const char **out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	*out = NULL;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v))
		return -1;
	*out = v->valuestring;
	return 0;
}

/* units (int64: a JSON string of digits, or an integral number; absent 0). */
static int money_units(const cJSON *v, double *out)
{
	char *end;
	const char *s;
	long long n;

	*out = 0;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (cJSON_IsNumber(v)) {
		if (v->valuedouble != floor(v->valuedouble) || fabs(v->valuedouble) > 1e15)
			return -1;
		*out = v->valuedouble;
		return 0;
	}
	if (!cJSON_IsString(v))
		return -1;
	s = v->valuestring;
	if (!*s || strlen(s) > 16 || strspn(s + (*s == '-'), "0123456789") != strlen(s + (*s == '-')))
		return -1;
	n = strtoll(s, &end, 10);
	if (*end)
		return -1;
	*out = (double)n;
	return 0;
}

/*
 * The price of one usage unit of a matching SKU: pricingInfo's latest
 * entry (the list is chronological), its tier starting at 0, unitPrice
 * units + nanos / 1e9 in USD; its usageUnit must be 'unit'.
 */
static int sku_price(const cJSON *sku, const char *unit, const char *where, double *price,
		     struct errbuf *err)
{
	const cJSON *infos = cJSON_GetObjectItemCaseSensitive(sku, "pricingInfo");
	const cJSON *info, *expr, *tiers, *tier, *up, *nanos, *start;
	const char *uu, *cur;
	double units = 0, ns = 0;
	int i, n;

	if (!cJSON_IsArray(infos) || !(n = cJSON_GetArraySize(infos)))
		return errbuf_set(err, "%s: pricingInfo is %s", where,
				  infos ? "not a non-empty list" : "missing");
	info = cJSON_GetArrayItem(infos, n - 1);
	expr = cJSON_GetObjectItemCaseSensitive(info, "pricingExpression");
	if (!cJSON_IsObject(info) || !cJSON_IsObject(expr))
		return errbuf_set(err, "%s: pricingInfo[%d].pricingExpression is missing or not an object",
				  where, n - 1);
	if (opt_string(expr, "usageUnit", &uu) < 0 || !uu)
		return errbuf_set(err, "%s: pricingInfo[%d].pricingExpression.usageUnit is %s", where, n - 1,
				  cJSON_GetObjectItemCaseSensitive(expr, "usageUnit") ? "not a string" : "missing");
	if (strcmp(uu, unit))
		return errbuf_set(err, "%s: pricingInfo[%d].pricingExpression.usageUnit is \"%.32s\", expected \"%s\"",
				  where, n - 1, uu, unit);
	tiers = cJSON_GetObjectItemCaseSensitive(expr, "tieredRates");
	if (!cJSON_IsArray(tiers) || !cJSON_GetArraySize(tiers))
		return errbuf_set(err, "%s: pricingInfo[%d].pricingExpression.tieredRates is %s", where, n - 1,
				  tiers ? "not a non-empty list" : "missing");
	tier = NULL;
	for (i = 0; i < cJSON_GetArraySize(tiers); i++) {
		const cJSON *t = cJSON_GetArrayItem(tiers, i);

		if (!cJSON_IsObject(t))
			return errbuf_set(err, "%s: pricingInfo[%d]...tieredRates[%d] is not an object", where,
					  n - 1, i);
		start = cJSON_GetObjectItemCaseSensitive(t, "startUsageAmount");
		if (start && !cJSON_IsNumber(start))
			return errbuf_set(err, "%s: pricingInfo[%d]...tieredRates[%d].startUsageAmount is not a number",
					  where, n - 1, i);
		if (!start || start->valuedouble == 0) {
			tier = t;
			break;
		}
	}
	if (!tier)
		return errbuf_set(err, "%s: pricingInfo[%d]...tieredRates has no tier starting at 0", where, n - 1);
	up = cJSON_GetObjectItemCaseSensitive(tier, "unitPrice");
	if (!cJSON_IsObject(up))
		return errbuf_set(err, "%s: pricingInfo[%d]...tieredRates[%d].unitPrice is %s", where, n - 1, i,
				  up ? "not an object" : "missing");
	if (opt_string(up, "currencyCode", &cur) < 0 || (cur && cur[0] && strcmp(cur, "USD")))
		return errbuf_set(err, "%s: unitPrice.currencyCode is %s%.8s%s, expected \"USD\"", where,
				  cur ? "\"" : "", cur ? cur : "not a string", cur ? "\"" : "");
	if (money_units(cJSON_GetObjectItemCaseSensitive(up, "units"), &units) < 0)
		return errbuf_set(err, "%s: unitPrice.units is not an integer (a string of digits)", where);
	nanos = cJSON_GetObjectItemCaseSensitive(up, "nanos");
	if (nanos && !cJSON_IsNull(nanos)) {
		if (!cJSON_IsNumber(nanos) || nanos->valuedouble != floor(nanos->valuedouble) ||
		    fabs(nanos->valuedouble) > 999999999)
			return errbuf_set(err, "%s: unitPrice.nanos is not an integer from -999999999 to 999999999",
					  where);
		ns = nanos->valuedouble;
	}
	*price = units + ns / 1e9;
	if (*price < 0 || (units > 0 && ns < 0) || (units < 0 && ns > 0))
		return errbuf_set(err, "%s: unitPrice is negative or mixes signs (units %.0f, nanos %.0f)", where,
				  units, ns);
	if (*price >= MAX_UNIT_PRICE)
		return errbuf_set(err, "%s: unitPrice %.9g USD per %s is absurd (%.0f or more)", where, *price,
				  unit, MAX_UNIT_PRICE);
	return 0;
}

/* Does the SKU's serviceRegions (checked a list of strings) hold 'region'? */
static bool serves(const cJSON *regions, const char *region)
{
	const cJSON *r;

	cJSON_ArrayForEach(r, regions)
		if (!strcmp(r->valuestring, region))
			return true;
	return false;
}

/* One SKU against every rate wanted. */
static int sku_match(const cJSON *sku, int page, int idx, struct gce_rate *rates, size_t n,
		     struct errbuf *err)
{
	char where[256];
	const cJSON *cat, *regions, *r;
	const char *desc, *usage;
	enum pricing_capacity cap;
	size_t i;

	if (!cJSON_IsObject(sku))
		return errbuf_set(err, "page %d, skus[%d] is not an object", page, idx);
	sku_where(where, sizeof(where), page, idx, sku);
	if (opt_string(sku, "description", &desc) < 0)
		return errbuf_set(err, "%s: description is not a string", where);
	cat = cJSON_GetObjectItemCaseSensitive(sku, "category");
	if (cat && !cJSON_IsObject(cat))
		return errbuf_set(err, "%s: category is not an object", where);
	if (opt_string(cat, "usageType", &usage) < 0)
		return errbuf_set(err, "%s: category.usageType is not a string", where);
	regions = cJSON_GetObjectItemCaseSensitive(sku, "serviceRegions");
	if (regions && !cJSON_IsArray(regions))
		return errbuf_set(err, "%s: serviceRegions is not a list", where);
	cJSON_ArrayForEach(r, regions)
		if (!cJSON_IsString(r))
			return errbuf_set(err, "%s: serviceRegions holds a non-string", where);
	if (!desc || !usage)
		return 0;
	if (!strcmp(usage, "OnDemand"))
		cap = PRICING_ON_DEMAND;
	else if (!strcmp(usage, "Preemptible"))
		cap = PRICING_SPOT;
	else
		return 0; /* commitments */
	for (i = 0; i < n; i++) {
		struct gce_rate *rt = &rates[i];
		enum part part;
		double price = 0;

		if (rt->capacity != cap || !serves(regions, rt->region))
			continue;
		part = sku_part(desc, rt->family);
		if (part == PART_NONE)
			continue;
		if (sku_price(sku, part == PART_CORE ? "h" : "GiBy.h", where, &price, err) < 0)
			return -1;
		if (price <= 0)
			continue; /* a free SKU prices nothing */
		if (part == PART_CORE && price > rt->core)
			rt->core = price;
		if (part == PART_RAM && price > rt->ram)
			rt->ram = price;
	}
	return 0;
}

int gce_pricing_page(const cJSON *doc, int page, struct gce_rate *rates, size_t n, char *next,
		     size_t next_len, struct errbuf *err)
{
	const cJSON *skus, *sku, *tok;
	int idx = 0;

	if (next_len)
		next[0] = '\0';
	if (!cJSON_IsObject(doc))
		return errbuf_set(err, "page %d is not a JSON object", page);
	skus = cJSON_GetObjectItemCaseSensitive(doc, "skus");
	if (skus && !cJSON_IsArray(skus))
		return errbuf_set(err, "page %d: skus is not a list", page);
	tok = cJSON_GetObjectItemCaseSensitive(doc, "nextPageToken");
	if (tok && !cJSON_IsString(tok))
		return errbuf_set(err, "page %d: nextPageToken is not a string", page);
	if (tok && strlen(tok->valuestring) >= next_len)
		return errbuf_set(err, "page %d: nextPageToken is longer than %zu bytes", page, next_len - 1);
	cJSON_ArrayForEach(sku, skus) {
		if (sku_match(sku, page, idx, rates, n, err) < 0)
			return -1;
		idx++;
	}
	if (tok)
		snprintf(next, next_len, "%s", tok->valuestring);
	return 0;
}

double gce_pricing_machine(const struct gce_rate *r, int cpus, int64_t memory_mb)
{
	double p;

	if (!r || r->core <= 0 || r->ram <= 0 || cpus <= 0 || memory_mb <= 0)
		return 0;
	p = cpus * r->core + (double)memory_mb / 1024.0 * r->ram;
	/* rounded to a millionth of a dollar, as prices are shown */
	return round(p * 1e6) / 1e6;
}

/* ---- the fetch ---- */

/* The index of machine type 'name' in gp->types, or n_types. Under mu. */
static size_t find_type(const struct gce_pricing *gp, const char *name)
{
	size_t i;

	for (i = 0; i < gp->n_types && strcmp(gp->types[i].name, name); i++)
		;
	return i;
}

static bool type_of(struct gce_pricing *gp, const char *name, struct mtype *out)
{
	size_t i;
	bool found;

	pthread_mutex_lock(&gp->mu);
	i = find_type(gp, name);
	found = i < gp->n_types;
	if (found)
		*out = gp->types[i];
	pthread_mutex_unlock(&gp->mu);
	return found;
}

static struct gce_rate *rate_of(struct gce_rate *rates, size_t n, const char *family,
				const char *region, enum pricing_capacity cap)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (rates[i].capacity == cap && !strcmp(rates[i].family, family) &&
		    !strcmp(rates[i].region, region))
			return &rates[i];
	return NULL;
}

static bool all_found(const struct gce_rate *rates, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (rates[i].core <= 0 || rates[i].ram <= 0)
			return false;
	return true;
}

/* pricing_fetch_fn: the rates of every family, region and capacity type
 * asked for, from as many pages as it takes to find them all. */
static int fetch(void *ctx, const struct pricing_key *keys, size_t n, double *prices,
		 struct provider_status *st)
{
	struct gce_pricing *gp = ctx;
	struct gce_rate *rates = calloc(n + 1, sizeof(*rates));
	char token[2048] = "", prev[2048] = "";
	size_t i, n_rates = 0;
	int page, rc = -1;

	if (!rates) {
		provider_status_cloud(st, PROVIDER_TRANSIENT, NULL, NULL, "out of memory");
		return -1;
	}
	for (i = 0; i < n; i++) {
		char family[16];

		prices[i] = 0;
		if (gce_pricing_family(keys[i].type, family, sizeof(family)) < 0 ||
		    rate_of(rates, n_rates, family, keys[i].location, keys[i].capacity))
			continue;
		snprintf(rates[n_rates].family, sizeof(rates[0].family), "%s", family);
		snprintf(rates[n_rates].region, sizeof(rates[0].region), "%s", keys[i].location);
		rates[n_rates++].capacity = keys[i].capacity;
	}
	for (page = 1; n_rates && !all_found(rates, n_rates); page++) {
		struct buf url = BUF_INIT;
		struct errbuf err;
		cJSON *doc = NULL;
		int bad;

		if (page > GCE_PRICING_MAX_PAGES) {
			provider_status_cloud(st, PROVIDER_INVALID, NULL, NULL,
					      "Cloud Billing Catalog: more than %d pages of SKUs", GCE_PRICING_MAX_PAGES);
			goto out;
		}
		if (buf_printf(&url, "%sv1/services/%s/skus?currencyCode=USD&pageSize=%d", gp->billing,
			       GCE_COMPUTE_SERVICE, PAGE_SIZE) < 0 ||
		    (token[0] && (buf_puts(&url, "&pageToken=") < 0 || cloudhttp_escape(&url, token) < 0))) {
			buf_free(&url);
			provider_status_cloud(st, PROVIDER_TRANSIENT, NULL, NULL, "out of memory");
			goto out;
		}
		if (gp->get(gp->ctx, url.data, &doc, st) < 0) {
			buf_free(&url);
			goto out;
		}
		buf_free(&url);
		snprintf(prev, sizeof(prev), "%s", token);
		bad = gce_pricing_page(doc, page, rates, n_rates, token, sizeof(token), &err);
		cJSON_Delete(doc);
		if (bad < 0) {
			provider_status_cloud(st, PROVIDER_INVALID, NULL, NULL, "Cloud Billing Catalog: %s", err.msg);
			goto out;
		}
		if (!token[0])
			break;
		if (!strcmp(token, prev)) {
			provider_status_cloud(st, PROVIDER_INVALID, NULL, NULL,
					      "Cloud Billing Catalog: page %d gives its own pageToken again", page);
			goto out;
		}
	}
	for (i = 0; i < n; i++) {
		struct mtype mt;
		char family[16];
		const struct gce_rate *r;

		if (gce_pricing_family(keys[i].type, family, sizeof(family)) < 0 ||
		    !type_of(gp, keys[i].type, &mt))
			continue;
		r = rate_of(rates, n_rates, family, keys[i].location, keys[i].capacity);
		prices[i] = gce_pricing_machine(r, mt.cpus, mt.memory_mb);
	}
	rc = 0;
out:
	free(rates);
	return rc;
}

/* ---- life cycle ---- */

struct gce_pricing *gce_pricing_new(const struct gce_pricing_opts *o, struct errbuf *err)
{
	struct gce_pricing *gp;
	const char *b = o->billing ? o->billing : GCE_DEFAULT_BILLING;

	if (!o->get || !o->clock) {
		errbuf_set(err, "gce pricing: no way to call the catalog");
		return NULL;
	}
	if (!b[0] || strlen(b) >= sizeof(gp->billing) - 1) {
		errbuf_set(err, "gce pricing: the billing endpoint is empty or too long");
		return NULL;
	}
	gp = calloc(1, sizeof(*gp));
	if (!gp) {
		errbuf_set(err, "out of memory");
		return NULL;
	}
	gp->get = o->get;
	gp->ctx = o->ctx;
	gp->clock = o->clock;
	gp->log = o->log;
	snprintf(gp->billing, sizeof(gp->billing), "%s%s", b, b[strlen(b) - 1] == '/' ? "" : "/");
	pthread_mutex_init(&gp->mu, NULL);
	gp->cache = pricing_from_config("gce", fetch, gp, o->clock, o->log, o->config);
	if (!gp->cache) {
		gce_pricing_free(gp);
		errbuf_set(err, "out of memory");
		return NULL;
	}
	return gp;
}

void gce_pricing_free(struct gce_pricing *gp)
{
	if (!gp)
		return;
	pricing_free(gp->cache); /* after a refresh in flight */
	pthread_mutex_destroy(&gp->mu);
	free(gp->types);
	free(gp);
}

void gce_pricing_machine_type(struct gce_pricing *gp, const char *machine_type, int cpus,
			      int64_t memory_mb, bool accelerators)
{
	size_t i;

	if (!gp || !machine_type[0] || strlen(machine_type) >= sizeof(gp->types[0].name))
		return;
	pthread_mutex_lock(&gp->mu);
	i = find_type(gp, machine_type);
	if (i == gp->n_types && gp->n_types < MAX_TYPES) {
		struct mtype *t = realloc(gp->types, (gp->n_types + 1) * sizeof(*t));

		if (t) {
			gp->types = t;
			memset(&t[i], 0, sizeof(t[i]));
			snprintf(t[i].name, sizeof(t[i].name), "%s", machine_type);
			gp->n_types++;
		}
	}
	if (i < gp->n_types) {
		gp->types[i].cpus = cpus;
		gp->types[i].memory_mb = memory_mb;
		gp->types[i].accelerators = accelerators;
	}
	pthread_mutex_unlock(&gp->mu);
}

/* Is 'name' priced from the catalog? Says once why not. */
static bool priceable(struct gce_pricing *gp, const char *name)
{
	const char *why = NULL;
	bool tell = false;
	size_t i;

	pthread_mutex_lock(&gp->mu);
	i = find_type(gp, name);
	if (i == gp->n_types) {
		pthread_mutex_unlock(&gp->mu);
		return false; /* its size is not known yet */
	}
	if (gce_pricing_per_instance(name))
		why = "a shared-core type, billed per instance";
	else if (gp->types[i].accelerators)
		why = "its accelerators are billed apart";
	if (why && !gp->types[i].told) {
		gp->types[i].told = true;
		tell = true;
	}
	pthread_mutex_unlock(&gp->mu);
	if (tell)
		log_at(gp->log, LOG_INFO, clock_wall(gp->clock),
		       "gce: machine type %s is not priced from the catalog (%s): set price_per_hour for its groups",
		       name, why);
	return !why;
}

void gce_pricing_groups(struct gce_pricing *gp, struct provider_group *groups, size_t n,
			const char *const *regions, const bool *spot, struct executor *ex)
{
	size_t i;

	if (!gp)
		return;
	for (i = 0; i < n; i++) {
		const char *type = groups[i].tmpl.instance_type;
		const char *region = regions ? regions[i] : NULL;

		if (type[0] && region && region[0] && priceable(gp, type))
			pricing_price_groups(gp->cache, region, &groups[i], 1, spot ? &spot[i] : NULL,
					     NULL);
	}
	pricing_schedule(gp->cache, ex);
}

int gce_pricing_refresh(struct gce_pricing *gp, struct provider_status *st)
{
	return pricing_refresh(gp->cache, st);
}

uint64_t gce_pricing_failures(struct gce_pricing *gp)
{
	return gp ? pricing_failures(gp->cache) : 0;
}
