/*
 * sim/clouds/azure_kind: Azure as the shared simulator code sees it
 * (sim_cloud_azure): a scenario's `azure:` section and the Azure flavour's
 * life in a world (its `luascale sim` options and serving are
 * azure_face.c's sim_face_azure). The flavour itself is cloud_azure.c's,
 * the wire azure_face.c's.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "arena.h"
#include "runtime/clock.h"
#include "sim/clouds/azure_face.h"
#include "sim/clouds/cloud_azure.h"
#include "sim/world/scenario_parse.h"

/* ---- the scenario's azure: section ---- */

/* One group's entry under azure.groups (m NULL: the defaults). */
static int azure_group_entry(struct scenario_walk *x, const struct ytree_node *m,
			     struct sim_azure_conf *c, size_t gi)
{
	static const char *const keys[] = {"vmss", "computer_name_prefix", "vm_size", "zones",
					   "tags", "priority", "agent_pool", "enable_auto_scaling", "mode", NULL};
	struct sim_azure_group *g = &c->groups[gi];
	struct kvlist tags = {NULL, 0};
	const char *mode = NULL;
	size_t i;

	if (m && (sw_expect(x, m, YTREE_MAP) || sw_get_str(x, m, "agent_pool", false, &g->agent_pool) ||
		  sw_get_bool(x, m, "enable_auto_scaling", &g->enable_auto_scaling) ||
		  sw_get_str(x, m, "mode", false, &mode)))
		return -1;
	if (g->agent_pool && (!c->aks_cluster || !g->agent_pool[0] || strlen(g->agent_pool) > 12 ||
			      g->agent_pool[0] < 'a' || g->agent_pool[0] > 'z' ||
			      strspn(g->agent_pool, "abcdefghijklmnopqrstuvwxyz0123456789") != strlen(g->agent_pool)))
		return sw_fail(x, m, "agent_pool \"%s\": 1-12 of [a-z0-9] starting with a letter, with an aks: {cluster} in azure:",
			       g->agent_pool);
	if ((mode || g->enable_auto_scaling) && !g->agent_pool)
		return sw_fail(x, m, "mode and enable_auto_scaling are an agent_pool's");
	if (mode && strcmp(mode, "System") && strcmp(mode, "User"))
		return sw_fail(x, m, "mode \"%s\": System or User", mode);
	g->system_mode = mode && !strcmp(mode, "System");
	if (m && (sw_expect(x, m, YTREE_MAP) || sw_check_keys(x, m, keys) ||
		  sw_get_str(x, m, "vmss", false, &g->vmss) ||
		  sw_get_str(x, m, "computer_name_prefix", false, &g->computer_prefix) ||
		  sw_get_str(x, m, "vm_size", false, &g->vm_size) ||
		  sw_get_str(x, m, "priority", false, &g->priority) ||
		  sw_get_strlist(x, m, "zones", &g->zones, &g->n_zones) ||
		  sw_get_kv(x, m, "tags", false, &tags)))
		return -1;
	if (!g->vmss)
		g->vmss = x->sc->groups[gi].name;
	if (strlen(g->vmss) > 64 || strspn(g->vmss, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != strlen(g->vmss))
		return sw_fail(x, m, "vmss \"%s\": 1-64 of [A-Za-z0-9._-]", g->vmss);
	if (!g->computer_prefix) {
		char t[96];
		char *d;
		size_t k;

		snprintf(t, sizeof(t), "%.50s", g->vmss);
		for (k = 0; t[k]; k++)
			if (t[k] >= 'A' && t[k] <= 'Z')
				t[k] = (char)(t[k] - 'A' + 'a');
			else if (t[k] == '_' || t[k] == '.')
				t[k] = '-';
		if (!(d = arena_strdup(x->a, t)))
			return sw_oom(x);
		g->computer_prefix = d;
	}
	if (strlen(g->computer_prefix) > 50 ||
	    strspn(g->computer_prefix, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(g->computer_prefix))
		return sw_fail(x, m, "computer_name_prefix \"%s\": at most 50 of [a-z0-9-]",
			       g->computer_prefix);
	if (!g->vm_size)
		g->vm_size = "Standard_D4s_v3";
	if (!sim_azure_find_vmsize(g->vm_size))
		return sw_fail(x, m, "unknown VM size \"%s\"", g->vm_size);
	if (g->priority && strcmp(g->priority, "Regular") && strcmp(g->priority, "Spot") &&
	    strcmp(g->priority, "Low"))
		return sw_fail(x, m, "priority \"%s\": Regular, Spot or Low", g->priority);
	for (i = 0; i < g->n_zones; i++)
		if (strcmp(g->zones[i], "1") != 0 && strcmp(g->zones[i], "2") != 0 &&
		    strcmp(g->zones[i], "3") != 0)
			return sw_fail(x, m, "zone \"%s\": Azure's zones are \"1\", \"2\" and \"3\"",
				       g->zones[i]);
	g->tags = tags.n ? arena_calloc(x->a, tags.n, sizeof(*g->tags)) : NULL;
	if (tags.n && !g->tags)
		return sw_oom(x);
	for (i = 0; i < tags.n; i++) {
		g->tags[i].key = tags.items[i].key;
		g->tags[i].value = tags.items[i].value;
	}
	g->n_tags = tags.n;
	return 0;
}

/* One group's entry; no two groups name one agent pool or one scale set. */
static int azure_group(struct scenario_walk *x, const struct ytree_node *m,
		       const struct ytree_node *at, size_t i, void *ctx)
{
	struct sim_azure_conf *c = ctx;
	int rc = azure_group_entry(x, m, c, i);

	for (size_t j = 0; !rc && j < i; j++)
		if (c->groups[i].agent_pool && c->groups[j].agent_pool &&
		    strcmp(c->groups[j].agent_pool, c->groups[i].agent_pool) == 0)
			rc = sw_fail(x, at, "node groups %s and %s name one agent pool \"%s\"",
				     x->sc->groups[j].name, x->sc->groups[i].name, c->groups[i].agent_pool);
	for (size_t j = 0; !rc && j < i; j++)
		if (strcasecmp(c->groups[j].vmss, c->groups[i].vmss) == 0)
			rc = sw_fail(x, at, "node groups %s and %s name one scale set \"%s\"",
				     x->sc->groups[j].name, x->sc->groups[i].name, c->groups[i].vmss);
	return rc;
}

static int azure_parse(struct scenario_walk *x, const struct ytree_node *m, const void **conf)
{
	static const char *const keys[] = {"subscription_id", "resource_group", "location",
					   "tenant_id", "client_id", "client_secret", "token_ttl",
					   "operation_time", "retry_after", "throttle", "page_size",
					   "groups", "aks", NULL};
	struct sim_azure_conf *c = arena_calloc(x->a, 1, sizeof(*c));
	const struct ytree_node *n;
	int64_t ttl_ns = 3600 * CLOCK_NS_PER_S, retry_ns = CLOCK_NS_PER_S, page = 50;
	const char *throttle = NULL;
	size_t old;
	int rc = 0;

	if (!c)
		return sw_oom(x);
	if (sw_expect(x, m, YTREE_MAP) || sw_check_keys(x, m, keys) ||
	    sw_get_str(x, m, "subscription_id", false, &c->subscription) ||
	    sw_get_str(x, m, "resource_group", false, &c->resource_group) ||
	    sw_get_str(x, m, "location", false, &c->location) ||
	    sw_get_str(x, m, "tenant_id", false, &c->tenant) ||
	    sw_get_str(x, m, "client_id", false, &c->client_id) ||
	    sw_get_str(x, m, "client_secret", false, &c->client_secret) ||
	    sw_get_duration(x, m, "token_ttl", &ttl_ns) ||
	    sw_get_duration(x, m, "operation_time", &c->operation_ns) ||
	    sw_get_duration(x, m, "retry_after", &retry_ns) ||
	    sw_get_str(x, m, "throttle", false, &throttle) ||
	    sw_get_int(x, m, "page_size", 1, 1000, &page))
		return -1;
	if (!c->subscription)
		c->subscription = "00000000-0000-4000-8000-00000000a2e1";
	if (!c->resource_group)
		c->resource_group = "sim-rg";
	if (!c->location)
		c->location = "eastus";
	if (!c->tenant)
		c->tenant = "00000000-0000-4000-8000-0000000000a1";
	if (!c->client_id)
		c->client_id = "00000000-0000-4000-8000-0000000000c1";
	if (!c->client_secret)
		c->client_secret = "sim-client-secret";
	if (!sim_azure_valid_guid(c->subscription) || !sim_azure_valid_guid(c->tenant) ||
	    !sim_azure_valid_guid(c->client_id))
		return sw_fail(x, m, "subscription_id, tenant_id and client_id must be GUIDs");
	if (!c->resource_group[0] || strlen(c->resource_group) > 90 ||
	    strspn(c->resource_group, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.()") != strlen(c->resource_group))
		return sw_fail(x, m, "resource_group \"%s\": 1-90 of [A-Za-z0-9._()-]", c->resource_group);
	if (!c->location[0] || strlen(c->location) > 20 ||
	    strspn(c->location, "abcdefghijklmnopqrstuvwxyz0123456789") != strlen(c->location))
		return sw_fail(x, m, "location \"%s\": lowercase letters and digits (eastus)", c->location);
	if (!c->client_secret[0] || strlen(c->client_secret) > 200)
		return sw_fail(x, m, "client_secret must be 1-200 characters");
	if (ttl_ns < 60 * CLOCK_NS_PER_S)
		return sw_fail(x, m, "token_ttl must be at least 1m");
	c->token_ttl_s = ttl_ns / CLOCK_NS_PER_S;
	if (c->operation_ns < 0 || retry_ns < CLOCK_NS_PER_S)
		return sw_fail(x, m, "operation_time must not be negative, retry_after at least 1s");
	c->retry_after_s = retry_ns / CLOCK_NS_PER_S;
	if (!throttle || strcmp(throttle, "too_many_requests") == 0)
		c->throttle = SIM_AZURE_TOO_MANY_REQUESTS;
	else if (strcmp(throttle, "operation_not_allowed") == 0)
		c->throttle = SIM_AZURE_NOT_ALLOWED;
	else
		return sw_fail(x, m, "throttle: too_many_requests or operation_not_allowed");
	c->page_size = (int)page;
	n = sw_field(x, m, "aks", &old);
	if (n) {
		static const char *const aks_keys[] = {"cluster", "resource_group", NULL};

		/* an AKS cluster whose node resource group is resource_group */
		rc = sw_expect(x, n, YTREE_MAP) || sw_check_keys(x, n, aks_keys) ||
		     sw_get_str(x, n, "cluster", true, &c->aks_cluster) ||
		     sw_get_str(x, n, "resource_group", false, &c->aks_resource_group) ? -1 : 0;
		if (!rc && !c->aks_resource_group)
			c->aks_resource_group = "sim-rg";
		if (!rc && (!c->aks_cluster[0] || strlen(c->aks_cluster) > 63 ||
			    strspn(c->aks_cluster, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") !=
				    strlen(c->aks_cluster)))
			rc = sw_fail(x, n, "cluster \"%s\": 1-63 of [A-Za-z0-9_-]", c->aks_cluster);
		if (!rc && strcasecmp(c->aks_resource_group, c->resource_group) == 0)
			rc = sw_fail(x, n, "resource_group is the cluster's own, not resource_group (its node resource group)");
	}
	ytree_path_pop(&x->path, old);
	if (rc)
		return -1;
	c->n_groups = x->sc->n_groups;
	c->groups = c->n_groups ? arena_calloc(x->a, c->n_groups, sizeof(*c->groups)) : NULL;
	if (c->n_groups && !c->groups)
		return sw_oom(x);
	if (sw_each_group(x, m, azure_group, c) < 0)
		return -1;
	*conf = c;
	return 0;
}

/* ---- the flavour in a world ---- */

static void *azure_flavour_new(struct sim_cloud *cloud, const void *conf, uint64_t seed,
			       struct errbuf *err)
{
	return sim_azure_new(cloud, conf, seed, err);
}

static void azure_flavour_start(void *flavour)
{
	sim_azure_start(flavour);
}

static void azure_flavour_free(void *flavour)
{
	sim_azure_free(flavour);
}

const struct sim_cloud_kind sim_cloud_azure = {
	.name = "azure",
	.rank = 3,
	.refusal = "a scenario has one of aws:, gce: and azure:",
	.parse = azure_parse,
	.flavour_new = azure_flavour_new,
	.flavour_start = azure_flavour_start,
	.flavour_free = azure_flavour_free,
};
