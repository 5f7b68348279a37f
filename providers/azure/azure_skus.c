/*
 * providers/azure: the Resource SKUs API (see azure_skus.h) — one region's
 * VM sizes read through the ARM client, kept a day, with their
 * subscription restrictions. Which source a template uses, the API or the
 * static table, is decided here and said once per region in the log.
 */
#include "providers/azure/azure_skus.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "providers/azure/azure_internal.h"

#define MAX_PAGES 100
#define MAX_REGIONS 8

/* One region's list. */
struct azure_sku_region {
	char location[64];
	struct azure_sku *v;
	size_t n;
	bool have;              /* a list was read */
	int64_t at;             /* when (monotonic ns) */
	int64_t retry_at;       /* after a failure: no call before */
	int said;               /* what the log said last: 0 nothing, 1 the API, -1 the table */
};

/* A capability's value as a number; -1 when absent, -2 when not a number. */
static double capability(const cJSON *caps, const char *name)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, caps) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(c, "name");
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, "value");
		char *end;
		double d;

		if (!cJSON_IsString(n) || strcmp(n->valuestring, name))
			continue;
		if (!cJSON_IsString(v))
			return -2;
		d = strtod(v->valuestring, &end);
		return end != v->valuestring && !*end && isfinite(d) && d >= 0 && d < 1e9 ? d : -2;
	}
	return -1;
}

static bool has_location(const cJSON *list, const char *location)
{
	const cJSON *l;

	cJSON_ArrayForEach(l, list)
		if (cJSON_IsString(l) && !strcasecmp(l->valuestring, location))
			return true;
	return false;
}

int azure_sku_parse(const cJSON *item, const char *location, struct azure_sku *out, struct errbuf *err)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(item, "name");
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(item, "resourceType");
	const cJSON *locs = cJSON_GetObjectItemCaseSensitive(item, "locations");
	const cJSON *caps = cJSON_GetObjectItemCaseSensitive(item, "capabilities");
	const cJSON *restr = cJSON_GetObjectItemCaseSensitive(item, "restrictions"), *r;
	double cpus, mem, gpus, disk;

	memset(out, 0, sizeof(*out));
	if (!cJSON_IsObject(item))
		return errbuf_set(err, "not an object");
	if (!cJSON_IsString(type) || strcmp(type->valuestring, "virtualMachines"))
		return 0;
	if (!cJSON_IsString(name) || !name->valuestring[0] || strlen(name->valuestring) >= sizeof(out->name))
		return errbuf_set(err, "a virtualMachines SKU without a valid name");
	if (locs && !cJSON_IsArray(locs))
		return errbuf_set(err, "%s: locations is not a list", name->valuestring);
	if (!has_location(locs, location))
		return 0;
	if (!cJSON_IsArray(caps))
		return errbuf_set(err, "%s: capabilities is not a list", name->valuestring);
	cpus = capability(caps, "vCPUs");
	mem = capability(caps, "MemoryGB");
	gpus = capability(caps, "GPUs");
	disk = capability(caps, "MaxResourceVolumeMB");
	if (cpus < 1 || cpus != floor(cpus) || cpus > 4096)
		return errbuf_set(err, "%s: capability vCPUs is %s", name->valuestring,
				  cpus == -1 ? "missing" : "not a count of CPUs");
	if (mem <= 0)
		return errbuf_set(err, "%s: capability MemoryGB is %s", name->valuestring,
				  mem == -1 ? "missing" : "not a positive number");
	if (gpus == -2 || gpus != floor(gpus) || disk == -2)
		return errbuf_set(err, "%s: capability %s is not a number", name->valuestring,
				  disk == -2 ? "MaxResourceVolumeMB" : "GPUs");
	if (restr && !cJSON_IsArray(restr))
		return errbuf_set(err, "%s: restrictions is not a list", name->valuestring);
	snprintf(out->name, sizeof(out->name), "%s", name->valuestring);
	out->vcpus = (int)cpus;
	out->memory_mib = (int64_t)llround(mem * 1024);
	out->gpus = gpus > 0 ? (int)gpus : 0;
	out->resource_disk_mib = disk > 0 ? (int64_t)disk : 0;
	cJSON_ArrayForEach(r, restr) {
		const cJSON *code = cJSON_GetObjectItemCaseSensitive(r, "reasonCode");
		const cJSON *rt = cJSON_GetObjectItemCaseSensitive(r, "type");
		const cJSON *info = cJSON_GetObjectItemCaseSensitive(r, "restrictionInfo"), *z;

		if (!cJSON_IsString(code) || strcmp(code->valuestring, "NotAvailableForSubscription") ||
		    !cJSON_IsString(rt))
			continue;
		if (!strcmp(rt->valuestring, "Location") &&
		    (has_location(cJSON_GetObjectItemCaseSensitive(info, "locations"), location) ||
		     has_location(cJSON_GetObjectItemCaseSensitive(r, "values"), location)))
			out->unavailable = true;
		if (!strcmp(rt->valuestring, "Zone") &&
		    has_location(cJSON_GetObjectItemCaseSensitive(info, "locations"), location))
			cJSON_ArrayForEach(z, cJSON_GetObjectItemCaseSensitive(info, "zones")) {
				size_t k = strlen(out->zones_unavailable);

				if (cJSON_IsString(z) && strlen(z->valuestring) == 1 &&
				    !strchr(out->zones_unavailable, z->valuestring[0]) &&
				    k + 1 < sizeof(out->zones_unavailable))
					out->zones_unavailable[k] = z->valuestring[0];
			}
	}
	return 1;
}

/* Reads the region's list: 0 with it in *v, *n; -1 with 'st'. */
static int read_list(struct provider *p, const char *location, struct azure_sku **v, size_t *n,
		     struct provider_status *st)
{
	struct az_prov *ap = AP(p);
	struct buf path = BUF_INIT;
	struct azure_sku *out = NULL;
	size_t cap = 0, bad = 0;
	char first_bad[200] = "", next[2048];
	int pages = 0, rc = -1;

	buf_printf(&path, "subscriptions/%s/providers/Microsoft.Compute/skus?api-version=%s&$filter=", ap->sub,
		   AZURE_SKUS_API_VERSION);
	buf_percent_encode(&path, "location eq '");
	buf_percent_encode(&path, location);
	buf_percent_encode(&path, "'");
	for (;;) {
		struct arm_resp r;
		const cJSON *list, *it;

		if (path.oom) {
			azure_status(st, PROVIDER_TRANSIENT, "out of memory");
			goto out;
		}
		if (azure_call(p, false, "skus", "GET", path.data, NULL, NULL, &r, st) < 0) {
			azure_resp_free(&r);
			goto out;
		}
		list = cJSON_GetObjectItemCaseSensitive(r.json, "value");
		if (!cJSON_IsArray(list)) {
			azure_resp_free(&r);
			azure_status(st, PROVIDER_TRANSIENT, "Resource SKUs page %d: no value list", pages + 1);
			goto out;
		}
		cJSON_ArrayForEach(it, list) {
			struct azure_sku s;
			struct errbuf e;
			int got = azure_sku_parse(it, location, &s, &e);

			if (got < 0 && !bad++)
				snprintf(first_bad, sizeof(first_bad), "%.190s", e.msg);
			if (got <= 0)
				continue;
			if (*n == cap) {
				struct azure_sku *nv = realloc(out, (cap ? cap * 2 : 64) * sizeof(*nv));

				if (!nv) {
					azure_resp_free(&r);
					azure_status(st, PROVIDER_TRANSIENT, "out of memory");
					goto out;
				}
				out = nv;
				cap = cap ? cap * 2 : 64;
			}
			out[(*n)++] = s;
		}
		snprintf(next, sizeof(next), "%s", azure_jstr(r.json, "nextLink"));
		azure_resp_free(&r);
		if (!next[0])
			break;
		if (++pages >= MAX_PAGES) {
			azure_status(st, PROVIDER_TRANSIENT, "Resource SKUs: still a nextLink after %d pages", MAX_PAGES);
			goto out;
		}
		buf_free(&path);
		buf_puts(&path, next);
	}
	if (bad)
		log_at(ap->log, LOG_WARN, clock_wall(ap->clock),
		       "azure: Resource SKUs in %s: %zu malformed SKU(s) left out, the first: %s", location, bad,
		       first_bad);
	*v = out;
	out = NULL;
	rc = 0;
out:
	free(out);
	buf_free(&path);
	return rc;
}

/* The region's entry (made when missing), under mu; NULL when full. */
static struct azure_sku_region *region_of(struct az_prov *ap, const char *location)
{
	size_t i;

	for (i = 0; i < ap->n_sku_regions; i++)
		if (!strcasecmp(ap->sku_regions[i].location, location))
			return &ap->sku_regions[i];
	if (!ap->sku_regions)
		ap->sku_regions = calloc(MAX_REGIONS, sizeof(*ap->sku_regions));
	if (!ap->sku_regions || ap->n_sku_regions == MAX_REGIONS)
		return NULL;
	snprintf(ap->sku_regions[i].location, sizeof(ap->sku_regions[i].location), "%s", location);
	return &ap->sku_regions[ap->n_sku_regions++];
}

int azure_skus_lookup(struct provider *p, const char *location, const char *name, struct azure_sku *out)
{
	struct az_prov *ap = AP(p);
	struct azure_sku_region *rg;
	struct provider_status st;
	struct azure_sku *v = NULL;
	int64_t now = clock_now(ap->clock);
	size_t n = 0, i;
	bool fetch;
	int rc = -1, said = 0;

	if (!location[0] || strlen(location) >= sizeof(rg->location) || !name[0])
		return -1;
	pthread_mutex_lock(&ap->mu);
	rg = region_of(ap, location);
	fetch = rg && (!rg->have || now - rg->at >= AZURE_SKUS_TTL_NS) && now >= rg->retry_at;
	pthread_mutex_unlock(&ap->mu);
	if (!rg)
		return -1;
	memset(&st, 0, sizeof(st));
	if (fetch && read_list(p, location, &v, &n, &st) < 0) {
		pthread_mutex_lock(&ap->mu);
		rg->retry_at = now + AZURE_SKUS_RETRY_NS;
		said = rg->said;
		rg->said = -1;
		pthread_mutex_unlock(&ap->mu);
		if (said != -1)
			log_at(ap->log, LOG_WARN, clock_wall(ap->clock),
			       "azure: VM sizes in %s: the Resource SKUs API cannot be read (%s: %s); using the provider's "
			       "table of sizes%s, asking again in %d minutes", location, provider_error_str(st.code), st.message,
			       rg->have ? " where the last list lacks one" : "", (int)(AZURE_SKUS_RETRY_NS / CLOCK_NS_PER_S / 60));
	} else if (fetch) {
		pthread_mutex_lock(&ap->mu);
		free(rg->v);
		rg->v = v;
		rg->n = n;
		rg->have = true;
		rg->at = now;
		said = rg->said;
		rg->said = 1;
		pthread_mutex_unlock(&ap->mu);
		if (said != 1)
			log_at(ap->log, LOG_INFO, clock_wall(ap->clock),
			       "azure: VM sizes in %s from the Resource SKUs API (%zu sizes; the provider's table only "
			       "when it cannot be read)", location, n);
	}
	pthread_mutex_lock(&ap->mu);
	if (rg->have) {
		rc = 0;
		for (i = 0; i < rg->n; i++)
			if (!strcasecmp(rg->v[i].name, name)) {
				*out = rg->v[i];
				rc = 1;
				break;
			}
	}
	pthread_mutex_unlock(&ap->mu);
	return rc;
}

void azure_skus_free(struct az_prov *ap)
{
	size_t i;

	for (i = 0; i < ap->n_sku_regions; i++)
		free(ap->sku_regions[i].v);
	free(ap->sku_regions);
	ap->sku_regions = NULL;
	ap->n_sku_regions = 0;
}
