/*
 * providers/azure: virtual machine scale sets over Azure Resource Manager —
 * one ARM call (retries, throttling windows, the bearer token), listing
 * (VMSS get + the VM list with its instance view, every nextLink),
 * discovery by tags, templates from the VM size table, AKS's labels and
 * taints and the node-template tags, deleting instances, providerID mapping and the
 * provider's life. Launches are azure_launch.c's; auth azureauth's, parsing
 * azure_arm's; HTTP, the JSON request, the groups' table and last good
 * views and the node arithmetic cloudhttp/'s.
 */
#include "providers/azure/azure.h"
#include "providers/azure/azure_internal.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "k8sname.h"
#include "model.h"
#include "providers/azure/azure_arm.h"
#include "providers/azure/azure_pricing.h"
#include "providers/azure/azure_sizes.h"
#include "providers/azure/azure_skus.h"
#include "providers/cloudhttp/cloudhttp.h"
#include "providers/cloudhttp/cloudjson.h"
#include "providers/cloudhttp/groupcache.h"
#include "providers/cloudhttp/nodesize.h"
#include "providers/registry.h"

#define SHORT_THROTTLE_MS 20000     /* waited inside one call; longer ones pause the provider */
#define MAX_PAGES 10000
#define MAX_CAPACITY 1000000
#define MIB (1024ll * 1024)

struct cloud_defaults {
	const char *name, *alias, *arm, *authority, *resource;
};

static const struct cloud_defaults clouds[] = {
	{ "public", "AzurePublicCloud", "https://management.azure.com/",
	  "https://login.microsoftonline.com/", "https://management.azure.com/" },
	{ "china", "AzureChinaCloud", "https://management.chinacloudapi.cn/",
	  "https://login.chinacloudapi.cn/", "https://management.chinacloudapi.cn/" },
	{ "usgov", "AzureUSGovernmentCloud", "https://management.usgovcloudapi.net/",
	  "https://login.microsoftonline.us/", "https://management.usgovcloudapi.net/" },
};

/* The lock that orders the capacity writes of one group. */
pthread_mutex_t *azure_write_lock(struct az_prov *ap, const char *group)
{
	uint32_t h = 2166136261u;

	for (; *group; group++)
		h = (h ^ (unsigned char)*group) * 16777619u;
	return &ap->write_locks[h % AZURE_N_WRITE_LOCKS];
}

/* Claims a new VM for the launch that saw it first: true when no launch had. */
bool azure_claim(struct az_prov *ap, const char *group, const char *id)
{
	size_t i;
	bool ok = true;

	pthread_mutex_lock(&ap->mu);
	for (i = 0; i < ap->n_claimed && ok; i++)
		if (!strcmp(ap->claimed[i].id, id) && !strcmp(ap->claimed[i].group, group))
			ok = false;
	if (ok && ap->claimed) {
		size_t at = ap->n_claimed < AZURE_N_CLAIMED ? ap->n_claimed++ : ap->claimed_head++ % AZURE_N_CLAIMED;

		snprintf(ap->claimed[at].group, sizeof(ap->claimed[at].group), "%s", group);
		snprintf(ap->claimed[at].id, sizeof(ap->claimed[at].id), "%s", id);
	}
	pthread_mutex_unlock(&ap->mu);
	return ok;
}

uint64_t azure_provider_calls(const struct provider *p, const char *what)
{
	return cloudcall_counts_get(&AP(p)->calls, what);
}

int64_t azure_provider_throttled_until(const struct provider *p, bool writes)
{
	struct az_prov *ap = AP(p);
	int64_t t;

	pthread_mutex_lock(&ap->mu);
	t = ap->window_end[writes];
	pthread_mutex_unlock(&ap->mu);
	return t;
}

/* ---- one call ---- */

void azure_resp_free(struct arm_resp *r)
{
	cJSON_Delete(r->json);
	memset(r, 0, sizeof(*r));
}

struct call {
	struct cloudcall_bearer b;
	struct az_prov *ap;
	bool writes;
	bool windowed;          /* a long throttling window was set: no retry */
	char what[80];
	char refused[200];      /* why prepare stopped the call */
};

/* Sets the throttling window of reads or writes to end at 'end' (ns), or later. */
static void set_window(struct az_prov *ap, bool writes, int64_t end)
{
	pthread_mutex_lock(&ap->mu);
	if (end > ap->window_end[writes])
		ap->window_end[writes] = end;
	pthread_mutex_unlock(&ap->mu);
}

static int prepare(void *ctx, const struct cloudhttp_request *req, struct cloudhttp_headers *extra,
		   struct errbuf *err)
{
	struct call *c = ctx;
	struct az_prov *ap = c->ap;
	int64_t now = clock_now(ap->clock), until;

	(void)req;
	pthread_mutex_lock(&ap->mu);
	until = ap->window_end[c->writes];
	pthread_mutex_unlock(&ap->mu);
	if (now < until) {
		/* ARM's penalty window: a call now would only lengthen it */
		c->b.st->code = PROVIDER_THROTTLED;
		errbuf_set(err, "ARM throttles this subscription's %s for %lld s more",
			   c->writes ? "writes" : "reads",
			   (long long)((until - now + CLOCK_NS_PER_S - 1) / CLOCK_NS_PER_S));
	} else if (cloudcall_bearer_prepare(&c->b, AZURE_TOKEN_WAIT_NS, extra, err) == 0) {
		return 0;
	}
	snprintf(c->refused, sizeof(c->refused), "%.199s", err->msg);
	return -1;
}

static enum cloudhttp_verdict classify(void *ctx, const struct cloudhttp_response *r)
{
	struct call *c = ctx;
	struct az_prov *ap = c->ap;
	struct azure_error e = { .code = "" };
	bool throttled = false;

	if (r->status < 200 || r->status >= 300) {
		azure_error_parse(r->body, r->body_len, r->status, &e);
		throttled = azure_error_throttled(&e);
	}
	if (throttled) {
		int64_t now = clock_now(ap->clock), wall = clock_wall(ap->clock), end = 0;

		if (r->retry_after_ms >= 0)
			end = now + r->retry_after_ms * CLOCK_NS_PER_MS;
		if (e.window_end_s > wall && now + (e.window_end_s - wall) * CLOCK_NS_PER_S > end)
			end = now + (e.window_end_s - wall) * CLOCK_NS_PER_S;
		if (end > now + SHORT_THROTTLE_MS * CLOCK_NS_PER_MS) {
			if (c->b.bucket)
				ratelimit_throttled(c->b.bucket);
			set_window(ap, c->writes, end);
			c->windowed = true;
			log_at(ap->log, LOG_WARN, clock_wall(ap->clock),
			       "azure: %s throttled (HTTP %ld %s%s%s); no %s for %lld s, until the window ends",
			       c->what, r->status, e.code[0] ? e.code : "TooManyRequests",
			       e.detail_code[0] ? "/" : "", e.detail_code, c->writes ? "writes" : "reads",
			       (long long)((end - now) / CLOCK_NS_PER_S));
			return CLOUDHTTP_DONE;
		}
	}
	return cloudcall_bearer_verdict(&c->b, r, throttled, e.code);
}

/*
 * The URL of 'path' ("subscriptions/..." relative to the ARM root, or an
 * absolute URL from an answer: nextLink, Azure-AsyncOperation, Location).
 * An absolute URL is rebased onto the configured root, so the token never
 * goes to a host the config did not name. -1 when it names no ARM path.
 */
static int arm_url(const struct az_prov *ap, const char *path, char *out, size_t len)
{
	size_t bl = strlen(ap->arm);
	const char *p;

	if (strncmp(path, "http://", 7) && strncmp(path, "https://", 8)) {
		snprintf(out, len, "%s/%s", ap->arm, path[0] == '/' ? path + 1 : path);
		return 0;
	}
	if (!strncmp(path, ap->arm, bl) && path[bl] == '/') {
		snprintf(out, len, "%s", path);
		return 0;
	}
	p = strstr(path + 8, "/subscriptions/");
	if (!p)
		p = strstr(path + 8, "/providers/");
	if (!p)
		return -1;
	snprintf(out, len, "%s%s", ap->arm, p);
	return 0;
}

/* Appends "api-version" to a URL that lacks it. */
static void with_api_version(char *url, size_t len)
{
	size_t n = strlen(url);

	if (strstr(url, "api-version="))
		return;
	snprintf(url + n, len - n, "%sapi-version=%s", strchr(url, '?') ? "&" : "?",
		 AZURE_COMPUTE_API_VERSION);
}

/*
 * 'method' 'path' with 'body' (NULL: none) and If-Match 'if_match' (NULL:
 * none). 0 with a 2xx answer in *r, or -1 with 'st' (and *r holding the
 * refused answer's status and error, for 412 and the like).
 */
int azure_call_ex(struct provider *p, bool writes, bool no_token, const char *what, const char *method,
		   const char *path, const cJSON *body, const char *if_match, struct arm_resp *r,
		   struct provider_status *st)
{
	struct az_prov *ap = AP(p);
	struct cloudhttp_response resp;
	struct cloudjson_request req;
	struct call c;
	char url[2048], shown[512];
	const char *h;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	r->retry_after_ms = -1;
	memset(st, 0, sizeof(*st));
	memset(&resp, 0, sizeof(resp));
	memset(&c, 0, sizeof(c));
	c.b = (struct cloudcall_bearer){ .cloud = "azure", .what = c.what, .bucket = writes ? p->mutating : p->reads,
					 .token_taken = no_token, .auth = azure_auth_bearer(ap->auth), .clock = ap->clock,
					 .log = ap->log, .st = st };
	c.ap = ap;
	c.writes = writes;
	azure_count_call(ap, what);
	if (ap->cancel && atomic_load(ap->cancel)) {
		azure_status(st, PROVIDER_CANCELLED, "%s not sent: luascale is stopping", what);
		return -1;
	}
	if (arm_url(ap, path, url, sizeof(url)) < 0) {
		azure_status(st, PROVIDER_INVALID, "%s: the cloud named a URL outside ARM, not followed", what);
		return -1;
	}
	with_api_version(url, sizeof(url));
	cloudhttp_redact_url(url + strlen(ap->arm), shown, sizeof(shown));
	shown[strcspn(shown, "?")] = '\0';
	{
		/* the resource and its name: ".../virtualMachineScaleSets/pool1/virtualMachines" */
		const char *tail = shown + strlen(shown);
		int slashes = 0;

		while (tail > shown && (tail[-1] != '/' || ++slashes < 3))
			tail--;
		snprintf(c.what, sizeof(c.what), "%s %.70s", method, tail);
	}
	memset(&req, 0, sizeof(req));
	req.what = c.what;
	req.method = method;
	req.url = url;
	req.body = body;
	req.if_match = if_match;
	req.fresh_connect = if_match != NULL; /* a conditional write: know when it was sent twice */
	req.prepare = prepare;
	req.classify = classify;
	req.ctx = &c;
	if (cloudjson_send(ap->http, &req, &resp, st) < 0) {
		if (c.refused[0] && st->code == PROVIDER_THROTTLED) {
			/* refused during ARM's window: why, and when the window ends */
			int64_t left = azure_provider_throttled_until(p, writes) - clock_now(ap->clock);

			azure_status(st, st->code, "%s: %s", c.what, c.refused);
			if (left > 0)
				st->retry_after_s = (left + CLOCK_NS_PER_S - 1) / CLOCK_NS_PER_S;
		}
		goto out;
	}
	r->status = resp.status;
	r->attempts = resp.attempts;
	r->retry_after_ms = resp.retry_after_ms;
	if ((h = cloudhttp_headers_get(&resp.headers, "ETag")))
		snprintf(r->etag, sizeof(r->etag), "%s", h);
	if ((h = cloudhttp_headers_get(&resp.headers, "Azure-AsyncOperation")))
		snprintf(r->async, sizeof(r->async), "%s", h);
	if ((h = cloudhttp_headers_get(&resp.headers, "Location")))
		snprintf(r->location, sizeof(r->location), "%s", h);
	if (resp.status >= 200 && resp.status < 300) {
		if (resp.body_len) {
			r->json = cJSON_ParseWithLength(resp.body, resp.body_len);
			if (!r->json) {
				azure_status(st, PROVIDER_TRANSIENT, "%s: HTTP %ld with malformed JSON", c.what, resp.status);
				goto out;
			}
		}
		if (!r->etag[0] && r->json)
			snprintf(r->etag, sizeof(r->etag), "%s", azure_jstr(r->json, "etag"));
		rc = 0;
		goto out;
	}
	azure_error_parse(resp.body, resp.body_len, resp.status, &r->err);
	if (resp.throttled && !c.windowed)
		/* retries ran out on throttling: pause for what ARM asked (5 s when it did not say) */
		set_window(ap, writes, clock_now(ap->clock) +
			   (resp.retry_after_ms > 0 ? resp.retry_after_ms : 5000) * CLOCK_NS_PER_MS);
	/* the code first (AuthorizationFailed), then the message */
	provider_status_cloud(st, resp.throttled || c.windowed ? PROVIDER_THROTTLED : azure_error_class(&r->err),
			      r->err.code, r->err.message[0] ? r->err.message : "no message", "%s: HTTP %ld",
			      c.what, resp.status);
	if (resp.retry_after_ms > 0)
		st->retry_after_s = (resp.retry_after_ms + 999) / 1000;
	if (st->code == PROVIDER_THROTTLED) {
		/* the window ARM asked for (a TooManyRequests endTime may be longer) */
		int64_t left = azure_provider_throttled_until(p, writes) - clock_now(ap->clock);

		if (left > 0 && (left + CLOCK_NS_PER_S - 1) / CLOCK_NS_PER_S > st->retry_after_s)
			st->retry_after_s = (left + CLOCK_NS_PER_S - 1) / CLOCK_NS_PER_S;
	}
out:
	cloudhttp_response_free(&resp);
	return rc;
}

int azure_call(struct provider *p, bool writes, const char *what, const char *method, const char *path,
		const cJSON *body, const char *if_match, struct arm_resp *r, struct provider_status *st)
{
	return azure_call_ex(p, writes, false, what, method, path, body, if_match, r, st);
}

/* ---- groups ---- */

int azure_group_get(struct az_prov *ap, const char *name, struct az_group *out)
{
	return groupcache_group(ap->cache, NULL, name, out);
}

void azure_vmss_path(const struct az_prov *ap, const struct az_group *g, const char *tail, char *out,
		      size_t len)
{
	snprintf(out, len, "subscriptions/%s/resourceGroups/%s/providers/Microsoft.Compute/"
		 "virtualMachineScaleSets/%s%s", ap->sub, g->rg, g->vmss, tail);
}

/* sku.capacity of a scale set: 0 with it in *out, -1 when absent or not a count. */
int azure_capacity_of(const cJSON *vmss, int *out)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(vmss, "sku"),
							  "capacity");

	if (!cJSON_IsNumber(c) || c->valuedouble < 0 || c->valuedouble > MAX_CAPACITY ||
	    c->valuedouble != (double)(int)c->valuedouble)
		return -1;
	*out = (int)c->valuedouble;
	return 0;
}

/* Every VM of a scale set (all pages), as a JSON array in *items. */
int azure_list_vms(struct provider *p, const struct az_group *g, cJSON **items, struct provider_status *st)
{
	struct az_prov *ap = AP(p);
	char path[2048];
	cJSON *all = cJSON_CreateArray();
	int pages = 0;

	*items = NULL;
	if (!all) {
		azure_status(st, PROVIDER_TRANSIENT, "out of memory");
		return -1;
	}
	azure_vmss_path(ap, g, "/virtualMachines?$expand=instanceView", path, sizeof(path));
	for (;;) {
		struct arm_resp r;
		cJSON *list, *it;

		if (azure_call(p, false, "vms.list", "GET", path, NULL, NULL, &r, st) < 0) {
			azure_resp_free(&r);
			cJSON_Delete(all);
			return -1;
		}
		list = cJSON_DetachItemFromObjectCaseSensitive(r.json, "value");
		while (list && (it = cJSON_DetachItemFromArray(list, 0)))
			cJSON_AddItemToArray(all, it);
		cJSON_Delete(list);
		snprintf(path, sizeof(path), "%s", azure_jstr(r.json, "nextLink"));
		azure_resp_free(&r);
		if (!path[0])
			break;
		if (++pages > MAX_PAGES) {
			cJSON_Delete(all);
			azure_status(st, PROVIDER_TRANSIENT, "scale set %s: the VM list's nextLink does not end", g->vmss);
			return -1;
		}
	}
	*items = all;
	return 0;
}

/* Notes 'key' among the 16 of 'said' (under mu; 'nocase': its case aside):
 * true the first time, when it is to be said. */
static bool first_time(struct az_prov *ap, char (*said)[64], const char *key, bool nocase)
{
	size_t i;
	bool first = true;

	pthread_mutex_lock(&ap->mu);
	for (i = 0; i < 16 && first && said[i][0]; i++)
		first = nocase ? strcasecmp(said[i], key) != 0 : strcmp(said[i], key) != 0;
	if (first && i < 16)
		snprintf(said[i], 64, "%s", key);
	pthread_mutex_unlock(&ap->mu);
	return first;
}

/* Warns once per size the table lacks. */
static void warn_size(struct az_prov *ap, const struct az_group *g, const char *sku, const char *listed_in)
{
	if (first_time(ap, ap->warned, sku, true))
		log_at(ap->log, LOG_WARN, clock_wall(ap->clock),
		       "azure: group %s: VM size %.60s is %s%s%s: write a template for "
		       "the group, or tag the scale set with k8s.io_cluster-autoscaler_node-template_resources_cpu "
		       "and _memory", g->name, sku, listed_in ? "not among the Resource SKUs API's sizes in " : "not in the provider's table",
		       listed_in ? listed_in : "", listed_in ? " nor in the provider's table" : "");
}

/* The new-node template of a scale set: its VM size's resources (the
 * Resource SKUs API's, else the static table's), its region, zone, OS and
 * pool, then the node-template tags. 'sku' is what azure_skus_lookup said. */
static void describe_template(struct az_prov *ap, const struct az_group *g, const cJSON *vmss,
			      int have_sku, const struct azure_sku *sku, struct provider_template *t)
{
	const cJSON *sk = cJSON_GetObjectItemCaseSensitive(vmss, "sku");
	const cJSON *tags = cJSON_GetObjectItemCaseSensitive(vmss, "tags");
	const cJSON *zones = cJSON_GetObjectItemCaseSensitive(vmss, "zones");
	const cJSON *os = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(vmss, "properties"), "virtualMachineProfile"),
			"osProfile"), "windowsConfiguration");
	const char *name = azure_jstr(sk, "name"), *loc = azure_jstr(vmss, "location"), *pool;
	const struct azure_vm_size *st = have_sku == 1 ? NULL : azure_vm_size_find(name);
	struct azure_vm_size sz;
	char bad[128], zone[96];
	int n_bad;

	if (have_sku == 1)
		sz = (struct azure_vm_size){ sku->name, sku->vcpus, sku->memory_mib, sku->gpus };
	else if (st)
		sz = *st;
	if (have_sku == 1 || st) {
		/* AKS's reserve: the tiers and 750Mi for eviction */
		int64_t mem = sz.memory_mib * MIB;

		nodesize_template(t, sz.name, sz.vcpus, mem, provider_reserved_cpu_m(sz.vcpus),
				  nodesize_reserved_memory(mem) + 750 * MIB, sz.gpus);
	} else if (name[0]) {
		warn_size(ap, g, name, have_sku == 0 ? loc : NULL);
	}
	if (name[0])
		provider_template_label(t, "node.kubernetes.io/instance-type", name);
	provider_template_label(t, "kubernetes.io/os", os ? "windows" : "linux");
	if (loc[0]) {
		provider_template_label(t, "topology.kubernetes.io/region", loc);
		if (cJSON_GetArraySize(zones) == 1 && cJSON_IsString(cJSON_GetArrayItem(zones, 0))) {
			snprintf(zone, sizeof(zone), "%s-%s", loc, cJSON_GetArrayItem(zones, 0)->valuestring);
			provider_template_label(t, "topology.kubernetes.io/zone", zone);
		}
	}
	/* an AKS node pool: what AKS puts on its nodes */
	if ((pool = azure_aks_pool(vmss)))
		azure_aks_template(vmss, pool, g->rg, t->gpus, t);
	n_bad = azure_template_tags(tags, t, bad, sizeof(bad));
	if (n_bad)
		log_at(ap->log, LOG_WARN, clock_wall(ap->clock),
		       "azure: group %s: %d node-template tag(s) ignored, the first %s (labels take a value, "
		       "taints \"value:NoSchedule|PreferNoSchedule|NoExecute\", resources a quantity)",
		       g->name, n_bad, bad);
}

/* A size the subscription may not use in the scale set's region (or in
 * every zone of it): the group does not grow, said once. */
static void restricted(struct az_prov *ap, const struct az_group *g, const struct azure_sku *sku, const cJSON *vmss,
		       struct provider_group *pg)
{
	const cJSON *zones = cJSON_GetObjectItemCaseSensitive(vmss, "zones"), *z;
	bool all = cJSON_GetArraySize(zones) > 0;

	cJSON_ArrayForEach(z, zones)
		if (!cJSON_IsString(z) || strlen(z->valuestring) != 1 || !strchr(sku->zones_unavailable, z->valuestring[0]))
			all = false;
	if (!sku->unavailable && !all)
		return;
	if (pg->max > pg->target)
		pg->max = pg->target > pg->min ? pg->target : pg->min;
	if (first_time(ap, ap->warned_unavailable, g->name, false))
		log_at(ap->log, LOG_WARN, clock_wall(ap->clock),
		       "azure: group %s: VM size %s is not available to this subscription in %s%s%s "
		       "(Resource SKUs API: NotAvailableForSubscription); the group does not grow",
		       g->name, sku->name, g->location, sku->unavailable ? "" : ", zones ",
		       sku->unavailable ? "" : sku->zones_unavailable);
}

/* One group from its scale set (already read) and its VMs into 'pg': 0,
 * GROUPCACHE_MALFORMED, or -1 with 'st'. */
static int fill_group(struct provider *p, struct az_group *g, const cJSON *vmss, struct provider_group *pg,
		      struct provider_status *st)
{
	struct az_prov *ap = AP(p);
	cJSON *items = NULL, *it;
	const cJSON *tags = cJSON_GetObjectItemCaseSensitive(vmss, "tags");
	int cap = 0, live = 0, failing = 0, tmin = -1, tmax = -1;
	struct azure_error fail;

	memset(&fail, 0, sizeof(fail));
	if (!strcasecmp(azure_jstr(cJSON_GetObjectItemCaseSensitive(vmss, "properties"), "orchestrationMode"), "Flexible")) {
		/* its VMs are Microsoft.Compute/virtualMachines, not this scale set's list */
		azure_status(st, PROVIDER_NOT_FOUND, "scale set %s is in Flexible orchestration mode; only Uniform scale sets "
			     "are managed", g->vmss);
		return -1;
	}
	if (azure_capacity_of(vmss, &cap) < 0) {
		/* never a size made up (an unknown size once deleted 197 nodes) */
		azure_status(st, PROVIDER_TRANSIENT, "scale set %s has no sku.capacity (a count from 0 to %d)",
			     g->vmss, MAX_CAPACITY);
		return GROUPCACHE_MALFORMED;
	}
	if (azure_list_vms(p, g, &items, st) < 0)
		return -1;
	if (azure_tag_int(tags, "min", &tmin) < 0 || azure_tag_int(tags, "max", &tmax) < 0) {
		log_at(ap->log, LOG_WARN, clock_wall(ap->clock),
		       "azure: group %s: the scale set's min or max tag is not a number from 0 to 1000000: ignored",
		       g->name);
		tmin = tmax = -1;
	}
	g->cloud_min = tmin;
	g->cloud_max = tmax;
	/* what its price needs: the region, the size and the priority */
	snprintf(g->location, sizeof(g->location), "%s", azure_jstr(vmss, "location"));
	g->spot = !strcasecmp(azure_jstr(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
					      vmss, "properties"), "virtualMachineProfile"), "priority"), "Spot");
	snprintf(pg->tmpl.instance_type, sizeof(pg->tmpl.instance_type), "%s",
		 azure_jstr(cJSON_GetObjectItemCaseSensitive(vmss, "sku"), "name"));
	snprintf(pg->name, sizeof(pg->name), "%s", g->name);
	pg->members_by_id = true;
	pg->target = cap;
	if (tmax >= 0) {
		/* the scale set says its limits, as the Cluster Autoscaler reads them */
		pg->cloud_sized = true;
		pg->min = tmin >= 0 ? tmin : g->min > 0 ? g->min : 0;
		pg->max = tmax;
	} else {
		pg->min = tmin >= 0 ? tmin : g->min > 0 ? g->min : 0;
		pg->max = g->max >= 0 ? g->max : pg->min;
		pg->cloud_sized = g->discovered;
	}
	pg->instances = calloc((size_t)cJSON_GetArraySize(items) + 1, sizeof(*pg->instances));
	if (!pg->instances) {
		cJSON_Delete(items);
		azure_status(st, PROVIDER_TRANSIENT, "out of memory");
		return -1;
	}
	cJSON_ArrayForEach(it, items) {
		struct provider_instance *o = &pg->instances[pg->n_instances];
		struct azure_vm vm;

		if (azure_vm_parse(it, &vm) < 0)
			continue;
		snprintf(o->id, sizeof(o->id), "%s", vm.instance_id);
		snprintf(o->group, sizeof(o->group), "%s", g->name);
		azure_format_provider_id(ap->sub, g->rg, g->vmss, vm.instance_id, o->provider_id,
					 sizeof(o->provider_id));
		o->state = vm.state;
		o->launched_wall = vm.created_wall;
		/* a Uniform VM says whether it runs the scale set's model now (image,
		 * size, extensions); absent, nothing is judged */
		if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(it, "properties"),
								   "latestModelApplied")))
			snprintf(o->outdated, sizeof(o->outdated), "scale set %.100s's model has changed since the VM "
				 "was made (latestModelApplied false)", g->vmss);
		pg->n_instances++;
		if (vm.failed) {
			if (!failing++)
				fail = vm.why;
		} else if (vm.state != INSTANCE_STOPPING) {
			live++;
		}
	}
	if (failing) {
		/* VMs that failed to provision are not coming */
		log_at(ap->log, LOG_WARN, clock_wall(ap->clock),
		       "azure: group %s (scale set %s): %d VM(s) failed to provision (%s: %s); counting only the %d that exist",
		       g->name, g->vmss, failing, fail.code, fail.message, live);
		if (pg->target > live)
			pg->target = live;
	}
	if (g->wants_template || g->location[0]) {
		struct azure_sku sku;
		int have = azure_skus_lookup(p, g->location, pg->tmpl.instance_type, &sku);

		if (have == 1)
			restricted(ap, g, &sku, vmss, pg);
		if (g->wants_template)
			describe_template(ap, g, vmss, have, &sku, &pg->tmpl);
	}
	cJSON_Delete(items);
	return 0;
}

/* An AKS pool whose AKS cluster autoscaler is on: listed at its size,
 * never grown or shrunk by luascale (said once per change). */
static void aks_hold(struct az_prov *ap, struct az_group *g, const struct aks_pool *a, struct provider_group *pg)
{
	if (a->autoscaling) {
		pg->min = pg->max = pg->target;
		pg->cloud_sized = true;
	}
	if (a->autoscaling != g->aks_autoscaling)
		log_at(ap->log, a->autoscaling ? LOG_WARN : LOG_INFO, clock_wall(ap->clock),
		       a->autoscaling ? "azure: node group %s: AKS pool %s of cluster %s has AKS's cluster autoscaler on "
					"(enableAutoScaling: true): luascale holds it at its size %d and writes nothing to it "
					"(az aks nodepool update --disable-cluster-autoscaler hands it over)"
				      : "azure: node group %s: AKS pool %s of cluster %s has AKS's cluster autoscaler off: "
					"luascale scales it (size %d)",
		       g->name, g->aks_pool, g->aks_cluster, pg->target);
	g->aks_autoscaling = a->autoscaling;
}

static int list_one(struct provider *p, struct az_group *g, struct provider_group *pg,
		    struct provider_status *st)
{
	struct az_prov *ap = AP(p);
	struct aks_pool pool;
	struct arm_resp r;
	char path[1024];
	int rc;

	memset(&pool, 0, sizeof(pool));
	if (g->aks && (azure_aks_resolve(p, g, st) < 0 || azure_aks_read(p, g, &pool, st) < 0))
		return -1;
	azure_vmss_path(ap, g, "", path, sizeof(path));
	if (azure_call(p, false, "vmss.get", "GET", path, NULL, NULL, &r, st) < 0) {
		if (g->aks && st->code == PROVIDER_NOT_FOUND) {
			/* the pool's scale set is another now (recreated): found again next round */
			g->vmss[0] = '\0';
			g->rg[0] = '\0';
		}
		aks_pool_free(&pool);
		azure_resp_free(&r);
		return -1;
	}
	rc = fill_group(p, g, r.json, pg, st);
	if (rc == 0 && g->aks)
		aks_hold(ap, g, &pool, pg);
	aks_pool_free(&pool);
	azure_resp_free(&r);
	return rc;
}

/* A node group name for a discovered scale set: lowercased, '_' as '-'. */
static int discovered_name(const char *vmss, char *out, size_t len)
{
	size_t i;

	if (strlen(vmss) >= len)
		return -1;
	memcpy(out, vmss, strlen(vmss) + 1);
	for (i = 0; out[i]; i++)
		out[i] = out[i] == '_' ? '-' : (char)tolower((unsigned char)out[i]);
	return strlen(vmss) <= 63 && k8sname_valid_dns_subdomain(out) ? 0 : -1;
}

/* Does the scale set carry every tag of 'd' (a value "" matching any)? */
static bool tags_match(const cJSON *tags, const struct config_azure_discovery *d)
{
	size_t i;

	for (i = 0; i < d->n_tags; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(tags, d->tags[i].key);

		if (!v || (d->tags[i].value[0] && (!cJSON_IsString(v) || strcmp(v->valuestring, d->tags[i].value))))
			return false;
	}
	return true;
}

/* The scale sets of the resource group (or the subscription) carrying the
 * discovery tags, with their bodies (so each is read once). */
static int discover(struct provider *p, struct az_group **out, cJSON **bodies, size_t *n_out,
		    struct provider_status *st)
{
	struct az_prov *ap = AP(p);
	const struct config_azure *c = &ap->config->azure;
	struct az_group *gs = NULL;
	cJSON *keep = cJSON_CreateArray();
	size_t n = 0, cap = 0;
	char path[2048];
	int pages = 0;

	*out = NULL;
	*bodies = NULL;
	*n_out = 0;
	if (!keep) {
		azure_status(st, PROVIDER_TRANSIENT, "out of memory");
		return -1;
	}
	if (ap->default_rg[0])
		snprintf(path, sizeof(path), "subscriptions/%s/resourceGroups/%s/providers/Microsoft.Compute/"
			 "virtualMachineScaleSets", ap->sub, ap->default_rg);
	else
		snprintf(path, sizeof(path), "subscriptions/%s/providers/Microsoft.Compute/virtualMachineScaleSets",
			 ap->sub);
	for (;;) {
		struct arm_resp r;
		cJSON *list, *v;

		if (azure_call(p, false, "vmss.list", "GET", path, NULL, NULL, &r, st) < 0) {
			azure_resp_free(&r);
			free(gs);
			cJSON_Delete(keep);
			return -1;
		}
		list = cJSON_DetachItemFromObjectCaseSensitive(r.json, "value");
		while (list && (v = cJSON_DetachItemFromArray(list, 0))) {
			const cJSON *tags = cJSON_GetObjectItemCaseSensitive(v, "tags");
			struct azure_resource_id rid;
			char pid[1024], name[64];
			int min = -1, max = -1;
			size_t d;
			bool any = false;

			for (d = 0; d < c->n_discovery; d++)
				if (tags_match(tags, &c->discovery[d])) {
					if (c->discovery[d].min > min)
						min = c->discovery[d].min;
					if (c->discovery[d].max >= 0 && (max < 0 || c->discovery[d].max < max))
						max = c->discovery[d].max;
					any = true;
				}
			if (any && max < 0 && !cJSON_GetObjectItemCaseSensitive(tags, "max")) {
				log_at(ap->log, LOG_WARN, clock_wall(ap->clock),
				       "azure: scale set %.80s carries the discovery tags but no max (a \"max\" tag, or "
				       "max in provider.azure.discovery): skipped", azure_jstr(v, "name"));
				cJSON_Delete(v);
				continue;
			}
			/* its resource group from its id */
			snprintf(pid, sizeof(pid), "azure://%s/virtualMachines/0", azure_jstr(v, "id"));
			if (!any || azure_parse_provider_id(pid, &rid) < 0 ||
			    strcasecmp(rid.vmss, azure_jstr(v, "name")) || discovered_name(rid.vmss, name, sizeof(name)) < 0) {
				if (any)
					log_at(ap->log, LOG_WARN, clock_wall(ap->clock),
					       "azure: scale set %.80s carries the discovery tags but its name or id cannot be a node group: skipped",
					       azure_jstr(v, "name"));
				cJSON_Delete(v);
				continue;
			}
			if (n == cap) {
				struct az_group *ng = realloc(gs, (cap ? cap * 2 : 8) * sizeof(*ng));

				if (!ng) {
					cJSON_Delete(v);
					continue;
				}
				gs = ng;
				cap = cap ? cap * 2 : 8;
			}
			memset(&gs[n], 0, sizeof(gs[n]));
			snprintf(gs[n].name, sizeof(gs[n].name), "%s", name);
			snprintf(gs[n].rg, sizeof(gs[n].rg), "%s", rid.resource_group);
			snprintf(gs[n].vmss, sizeof(gs[n].vmss), "%s", rid.vmss);
			gs[n].wants_template = true;
			gs[n].discovered = true;
			gs[n].min = min;
			gs[n].max = max;
			gs[n].cloud_min = gs[n].cloud_max = -1;
			cJSON_AddItemToArray(keep, v);
			n++;
		}
		cJSON_Delete(list);
		snprintf(path, sizeof(path), "%s", azure_jstr(r.json, "nextLink"));
		azure_resp_free(&r);
		if (!path[0] || ++pages > MAX_PAGES)
			break;
	}
	*out = gs;
	*bodies = keep;
	*n_out = n;
	return 0;
}

static int azure_list_groups(struct provider *p, struct provider_group **groups, size_t *n,
			     struct provider_status *st)
{
	struct az_prov *ap = AP(p);
	struct az_group *found = NULL, *gs;
	cJSON *bodies = NULL;
	struct provider_group *out;
	size_t n_found = 0, n_gs, i, j, k = 0;
	int *body_of;

	*groups = NULL;
	*n = 0;
	memset(st, 0, sizeof(*st));
	if (ap->config->azure.n_discovery && discover(p, &found, &bodies, &n_found, st) < 0)
		return -1;
	gs = groupcache_groups_copy(ap->cache, ap->n_config_groups, n_found);
	out = calloc(ap->n_config_groups + n_found + 1, sizeof(*out));
	body_of = calloc(ap->n_config_groups + n_found + 1, sizeof(*body_of));
	if (!gs || !out || !body_of) {
		free(gs);
		free(out);
		free(body_of);
		free(found);
		cJSON_Delete(bodies);
		azure_status(st, PROVIDER_TRANSIENT, "out of memory");
		return -1;
	}
	n_gs = ap->n_config_groups;
	for (i = 0; i < n_gs; i++) {
		struct provider_status rst;

		body_of[i] = -1;
		/* an AKS pool's scale set, known before discovery's are matched to
		 * the groups (a failure is list_one's to report) */
		if (n_found && gs[i].aks && !gs[i].vmss[0])
			(void)azure_aks_resolve(p, &gs[i], &rst);
	}
	for (i = 0; i < n_found; i++) {
		for (j = 0; j < n_gs && (strcasecmp(gs[j].vmss, found[i].vmss) || strcasecmp(gs[j].rg, found[i].rg)) &&
			    strcmp(gs[j].name, found[i].name); j++)
			;
		if (j == n_gs) {
			body_of[n_gs] = (int)i;
			gs[n_gs++] = found[i];
		}
	}
	free(found);
	for (i = 0; i < n_gs; i++) {
		int rc = body_of[i] >= 0 ? fill_group(p, &gs[i], cJSON_GetArrayItem(bodies, body_of[i]), &out[k], st)
					 : list_one(p, &gs[i], &out[k], st);

		if (groupcache_add(ap->cache, gs[i].name, rc, out, &k, st) < 0) {
			free(gs);
			free(body_of);
			cJSON_Delete(bodies);
			return -1;
		}
	}
	groupcache_groups_take(ap->cache, gs, n_gs);
	free(body_of);
	cJSON_Delete(bodies);
	*groups = out;
	*n = k;
	return 0;
}

/* Deletes instances of a scale set; 0 when ARM took the request. */
int azure_delete_vms(struct provider *p, const struct az_group *g, const char *const *ids, size_t n,
		      struct provider_status *st)
{
	struct az_prov *ap = AP(p);
	cJSON *body = cJSON_CreateObject(), *arr;
	struct arm_resp r;
	char path[1024];
	size_t i;
	int rc;

	if (g->aks) {
		/* an AKS pool's machines go through AKS, never the scale set */
		cJSON_Delete(body);
		return azure_aks_delete_machines(p, g, ids, n, st);
	}
	arr = body ? cJSON_AddArrayToObject(body, "instanceIds") : NULL;
	for (i = 0; arr && i < n; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(ids[i]));
	if (!arr) {
		cJSON_Delete(body);
		azure_status(st, PROVIDER_TRANSIENT, "out of memory");
		return -1;
	}
	azure_vmss_path(ap, g, "/delete", path, sizeof(path));
	rc = azure_call(p, true, "vms.delete", "POST", path, body, NULL, &r, st);
	azure_resp_free(&r);
	cJSON_Delete(body);
	return rc;
}

/* ---- terminate ---- */

static void azure_terminate(struct provider *p, const char *group, const char *const *ids, size_t n,
			    provider_done_cb on_done, void *ctx)
{
	struct az_prov *ap = AP(p);
	struct provider_status st;
	struct az_group g;
	size_t i, j;

	memset(&st, 0, sizeof(st));
	if (azure_group_get(ap, group, &g) < 0) {
		azure_status(&st, PROVIDER_NOT_FOUND, "no node group %s in the cloud", group);
		on_done(ctx, 0, &st);
		return;
	}
	for (i = 0; i < n; i++) {
		bool ok = ids[i][0] && strlen(ids[i]) <= 10;

		for (j = 0; ok && ids[i][j]; j++)
			ok = isdigit((unsigned char)ids[i][j]);
		if (!ok) {
			azure_status(&st, PROVIDER_INVALID, "%.40s is not an instance id of scale set %s", ids[i], g.vmss);
			on_done(ctx, 0, &st);
			return;
		}
	}
	if (n == 0 || (g.aks && azure_aks_resolve(p, &g, &st) < 0) || azure_delete_vms(p, &g, ids, n, &st) < 0) {
		on_done(ctx, 0, &st);
		return;
	}
	if (g.aks)
		log_at(ap->log, LOG_INFO, clock_wall(ap->clock),
		       "azure: group %s: deleting %zu machine(s) of AKS pool %s (cluster %s) through deleteMachines",
		       g.name, n, g.aks_pool, g.aks_cluster);
	else
		log_at(ap->log, LOG_INFO, clock_wall(ap->clock), "azure: group %s: deleting %zu VM(s) from scale set %s",
		       g.name, n, g.vmss);
	on_done(ctx, (int)n, &st);
}

/* ---- map_node ---- */

/* Is group 'g' the scale set of resource id 'ctx'? */
static bool of_vmss(const void *g, const void *ctx)
{
	const struct az_group *a = g;
	const struct azure_resource_id *id = ctx;

	return !strcasecmp(a->rg, id->resource_group) && !strcasecmp(a->vmss, id->vmss);
}

static int azure_map_node(struct provider *p, const char *provider_id, char *group, size_t group_len,
			  char *instance, size_t instance_len)
{
	struct azure_resource_id id;
	struct az_group g;

	if (azure_parse_provider_id(provider_id, &id) < 0 || strcasecmp(id.subscription, AP(p)->sub) ||
	    groupcache_group(AP(p)->cache, of_vmss, &id, &g) < 0)
		return -1;
	snprintf(group, group_len, "%s", g.name);
	snprintf(instance, instance_len, "%s", id.instance);
	return 0;
}

/* ---- life cycle ---- */

static void azure_free(struct provider *p)
{
	struct az_prov *ap;
	size_t i;

	if (!p)
		return;
	ap = p->impl;
	if (ap) {
		pricing_free(ap->pricing); /* after a refresh in flight, which uses the client */
		azure_skus_free(ap);
		azure_auth_free(ap->auth);
		cloudhttp_free(ap->http);
		free(ap->claimed);
		groupcache_free(ap->cache);
		cloudcall_counts_destroy(&ap->calls);
		for (i = 0; i < AZURE_N_WRITE_LOCKS; i++)
			pthread_mutex_destroy(&ap->write_locks[i]);
		pthread_mutex_destroy(&ap->mu);
		free(ap);
	}
	cloudcall_buckets_free(p);
	free(p);
}

static const struct provider_ops azure_ops = {
	.kind = "azure",
	.list_groups = azure_list_groups,
	.launch = azure_launch,
	.terminate = azure_terminate,
	.map_node = azure_map_node,
	.prices = azure_prices,
	.price_failures = azure_price_failures,
	.free = azure_free,
};

static const struct cloud_defaults *cloud_of(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(clouds) / sizeof(clouds[0]); i++)
		if (!name || !strcasecmp(name, clouds[i].name) || !strcasecmp(name, clouds[i].alias))
			return &clouds[i];
	return NULL;
}

/* The ARM root: the config's, else the simulator's (loopback only), else the cloud's. */
static int arm_root(struct az_prov *ap, const struct azure_provider_opts *o, const struct cloud_defaults *cd,
		    struct errbuf *err)
{
	const char *v = ap->config->azure.endpoint_resource_manager, *what = "provider.azure.endpoints.resource_manager";
	size_t n;

	if (!v && (v = azure_env_get(&o->env, "LUASCALE_SIM_AZURE_ARM_ENDPOINT"))) {
		struct cloudhttp_url u;

		what = "LUASCALE_SIM_AZURE_ARM_ENDPOINT";
		if (cloudhttp_url_parse(v, &u, err) < 0 || strcmp(u.scheme, "http") ||
		    (strcmp(u.host, "127.0.0.1") && strcmp(u.host, "localhost") && strcmp(u.host, "::1")))
			return errbuf_set(err, "%s must be http:// to a loopback simulator (it is not a setting: "
					  "use provider.azure.endpoints.resource_manager)", what);
	}
	if (!v) {
		v = cd->arm;
		what = "the cloud's resource manager";
	}
	if (azure_check_endpoint(v, what, false, err) < 0)
		return -1;
	n = strlen(v);
	while (n > 0 && v[n - 1] == '/')
		n--;
	if (n >= sizeof(ap->arm))
		return errbuf_set(err, "%s is too long", what);
	snprintf(ap->arm, sizeof(ap->arm), "%.*s", (int)n, v);
	return 0;
}

struct provider *azure_provider_new(const struct azure_provider_opts *o, struct errbuf *err)
{
	const struct config *c = o->config;
	const struct config_azure *az = &c->azure;
	struct provider *p = calloc(1, sizeof(*p));
	struct az_prov *ap = calloc(1, sizeof(*ap));
	const char *cloud = az->cloud ? az->cloud : azure_env_get(&o->env, "ARM_CLOUD");
	const struct cloud_defaults *cd = cloud_of(cloud);
	struct azure_auth_opts ao;
	struct az_group *gs = NULL;
	struct errbuf e;
	const char *v;
	size_t i;

	if (!p || !ap) {
		free(p);
		free(ap);
		errbuf_set(err, "azure: out of memory");
		return NULL;
	}
	p->ops = &azure_ops;
	p->impl = ap;
	pthread_mutex_init(&ap->mu, NULL);
	for (i = 0; i < AZURE_N_WRITE_LOCKS; i++)
		pthread_mutex_init(&ap->write_locks[i], NULL);
	cloudcall_counts_init(&ap->calls);
	ap->claimed = calloc(AZURE_N_CLAIMED, sizeof(*ap->claimed));
	ap->clock = o->clock ? o->clock : clock_real();
	ap->cache = groupcache_new(&(struct groupcache_opts){ .cloud = "azure", .backing = "scale set", .log = o->log,
							      .clock = ap->clock, GROUPCACHE_TABLE(struct az_group) });
	ap->log = o->log;
	ap->cancel = o->cancel;
	ap->config = c;
	ap->launch_wait_ns = (o->launch_wait_ms > 0 ? o->launch_wait_ms : 10 * 60 * 1000) * CLOCK_NS_PER_MS;
	ap->poll_ns = (o->poll_ms > 0 ? o->poll_ms : 5000) * CLOCK_NS_PER_MS;
	if (!cd) {
		errbuf_set(err, "azure: cloud \"%.32s\" (%s) is not public, china or usgov", cloud,
			   az->cloud ? "provider.azure.cloud" : "ARM_CLOUD");
		goto fail;
	}
	if (!ap->cache) {
		errbuf_set(err, "azure: out of memory");
		goto fail;
	}
	if (cloudcall_buckets_new(p, ap->clock, c) < 0) {
		errbuf_set(err, "azure: bad rate limits");
		goto fail;
	}
	v = az->subscription_id ? az->subscription_id : azure_env_get(&o->env, "ARM_SUBSCRIPTION_ID");
	if (!v)
		v = azure_env_get(&o->env, "AZURE_SUBSCRIPTION_ID");
	if (!v) {
		errbuf_set(err, "azure: no subscription: set provider.azure.subscription_id or ARM_SUBSCRIPTION_ID");
		goto fail;
	}
	if (strlen(v) >= sizeof(ap->sub) || strspn(v, "0123456789abcdefABCDEF-") != strlen(v)) {
		errbuf_set(err, "azure: the subscription id \"%.40s\" is not a GUID", v);
		goto fail;
	}
	snprintf(ap->sub, sizeof(ap->sub), "%s", v);
	v = az->resource_group ? az->resource_group : azure_env_get(&o->env, "ARM_RESOURCE_GROUP");
	if (v && (strlen(v) >= sizeof(ap->default_rg) || strpbrk(v, "/?#%& "))) {
		errbuf_set(err, "azure: the resource group \"%.40s\" is not a resource group name", v);
		goto fail;
	}
	snprintf(ap->default_rg, sizeof(ap->default_rg), "%s", v ? v : "");
	if (arm_root(ap, o, cd, err) < 0) {
		errbuf_prefix(err, "azure");
		goto fail;
	}
	if (!(ap->http = cloudcall_http_new("azure", ap->clock, o->log, o->ca_file,
					    o->max_attempts > 0 ? o->max_attempts : 5, o->cancel, err)))
		goto fail;
	memset(&ao, 0, sizeof(ao));
	ao.env = o->env;
	ao.mode = az->auth;
	ao.tenant_id = az->tenant_id;
	ao.client_id = az->client_id;
	ao.client_secret_file = az->client_secret_file;
	ao.federated_token_file = az->federated_token_file;
	ao.identity_client_id = az->identity_client_id;
	ao.authority = az->endpoint_authority;
	ao.imds = az->endpoint_imds;
	ao.default_authority = cd->authority;
	ao.resource = cd->resource;
	ao.http = ap->http;
	ao.clock = ap->clock;
	ao.log = o->log;
	if (!(ap->auth = azure_auth_new(&ao, &e))) {
		errbuf_set(err, "azure: %s", e.msg);
		goto fail;
	}
	if (azure_pricing_init(p, o, &e) < 0) {
		errbuf_set(err, "azure: prices: %s", e.msg);
		goto fail;
	}
	gs = calloc(c->n_groups + 1, sizeof(*gs));
	if (!gs) {
		errbuf_set(err, "azure: out of memory");
		goto fail;
	}
	for (i = 0; i < c->n_groups; i++) {
		const struct config_group_extra *x = c->group_extra ? &c->group_extra[i] : NULL;
		struct az_group *g = &gs[i];
		const char *rg = x && x->azure.resource_group ? x->azure.resource_group : ap->default_rg;

		snprintf(g->name, sizeof(g->name), "%s", c->groups[i].name);
		g->wants_template = !x || !x->template_set;
		g->min = c->groups[i].min;
		g->max = !x || x->max_set ? c->groups[i].max : -1;
		g->cloud_min = g->cloud_max = -1;
		if (x && x->azure.aks_pool) {
			/* an AKS agent pool: its scale set is found from the pool */
			g->aks = true;
			snprintf(g->aks_cluster, sizeof(g->aks_cluster), "%s", x->azure.aks_cluster);
			snprintf(g->aks_rg, sizeof(g->aks_rg), "%s", x->azure.aks_resource_group);
			snprintf(g->aks_pool, sizeof(g->aks_pool), "%s", x->azure.aks_pool);
			continue;
		}
		if (!rg[0]) {
			errbuf_set(err, "azure: node group %s has no resource group: set its azure.resource_group, "
				   "provider.azure.resource_group or ARM_RESOURCE_GROUP", c->groups[i].name);
			goto fail;
		}
		snprintf(g->rg, sizeof(g->rg), "%s", rg);
		snprintf(g->vmss, sizeof(g->vmss), "%s", x && x->azure.vmss ? x->azure.vmss : c->groups[i].name);
	}
	groupcache_groups_take(ap->cache, gs, c->n_groups);
	ap->n_config_groups = c->n_groups;
	log_at(o->log, LOG_INFO, clock_wall(ap->clock), "azure: subscription %s, %s cloud, ARM at %s, token from the %s",
	       ap->sub, cd->name, ap->arm, azure_auth_source(ap->auth));
	return p;
fail:
	free(gs);
	azure_free(p);
	return NULL;
}

/* provider.kind: azure (providers/registry.c) */
static struct provider *make(const struct provider_make_opts *o, struct errbuf *err)
{
	struct azure_provider_opts zo;

	memset(&zo, 0, sizeof(zo));
	zo.config = o->config;
	zo.log = o->log;
	zo.cancel = o->cancel;
	return azure_provider_new(&zo, err);
}

const struct provider_kind provider_kind_azure = {"azure", make};
