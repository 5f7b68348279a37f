/*
 * providers/azure/azure_config: reads provider.azure, each group's azure:
 * section and the LUASCALE_PROVIDER_AZURE_* variables into the config
 * (docs/providers/azure.md, docs/configuration.md), and checks them once
 * the whole config is read. Only src/config_parse.h's readers: whatever
 * reads a config links this file, never the Azure provider.
 */
#include "providers/azure/azure_config.h"

#include <string.h>
#include <strings.h>

#include "arena.h"
#include "config_parse.h"

/* A GUID as Azure writes ids: 8-4-4-4-12 hexadecimal digits. */
static bool ok_guid(const char *s)
{
	size_t i;

	if (strlen(s) != 36)
		return false;
	for (i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		char ch = s[i];

		if (dash ? ch != '-' : !((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') ||
					  (ch >= 'A' && ch <= 'F')))
			return false;
	}
	return true;
}

/* A tenant: its GUID or one of its domains ("contoso.onmicrosoft.com"). */
static bool ok_tenant(const char *s)
{
	return ok_guid(s) || (strchr(s, '.') && s[0] != '.' && s[0] != '-' && cfg_chars_ok(s, ".-", false));
}

/* Resource group names: letters, digits, '-', '_', '.', '(' and ')', not ending in '.'. */
static bool ok_resource_group(const char *s)
{
	return cfg_chars_ok(s, "-_.()", false) && s[strlen(s) - 1] != '.';
}

/* Scale set names: letters, digits, '-', '_' and '.', starting with a letter or
 * digit, ending with one or '_'. */
static bool ok_vmss(const char *s)
{
	char last = s[strlen(s) - 1];

	return cfg_chars_ok(s, "-_.", false) && s[0] != '-' && s[0] != '_' && s[0] != '.' &&
	       last != '-' && last != '.';
}

static bool ok_azure_cloud(const char *s)
{
	static const char *const clouds[] = { "public", "china", "usgov", "AzurePublicCloud",
					      "AzureChinaCloud", "AzureUSGovernmentCloud", NULL };
	const char *const *c;

	for (c = clouds; *c; c++)
		if (!strcasecmp(s, *c))
			return true;
	return false;
}

static bool ok_azure_auth(const char *s)
{
	return !strcmp(s, "auto") || !strcmp(s, "client_secret") || !strcmp(s, "workload_identity") ||
	       !strcmp(s, "managed_identity");
}

/* Tag names: no '<', '>', '%', '&', '\\', '?' or '/' (Azure refuses them). */
static bool ok_tag_name(const char *s)
{
	return cfg_ok_printable(s) && !strpbrk(s, "<>%&\\?/");
}

static const struct config_str_rule rule_guid = { ok_guid, 36, "a GUID (like \"00000000-0000-0000-0000-000000000000\")" };
static const struct config_str_rule rule_tenant = { ok_tenant, 253, "a tenant id (a GUID) or domain (like \"contoso.onmicrosoft.com\")" };
static const struct config_str_rule rule_resource_group = { ok_resource_group, 90, "a resource group name (letters, digits, '-', '_', '.', '(' and ')', up to 90, not ending in '.')" };
static const struct config_str_rule rule_vmss = { ok_vmss, 64, "a scale set name (letters, digits, '-', '_' and '.', up to 64, starting with a letter or digit)" };
static const struct config_str_rule rule_azure_cloud = { ok_azure_cloud, 32, "an Azure cloud: public, china or usgov" };
static const struct config_str_rule rule_azure_auth = { ok_azure_auth, 32, "an Azure credential: auto, client_secret, workload_identity or managed_identity" };

/* AKS names: a managed cluster 1-63 of letters, digits, '-' and '_', not
 * starting or ending with '-' or '_'; an agent pool 1-12 lowercase letters
 * and digits, starting with a letter. */
static bool ok_aks_cluster(const char *s)
{
	size_t n = strlen(s);

	return cfg_chars_ok(s, "-_", false) && s[0] != '-' && s[0] != '_' && s[n - 1] != '-' && s[n - 1] != '_';
}

static bool ok_aks_pool(const char *s)
{
	return cfg_chars_ok(s, "", true) && s[0] >= 'a' && s[0] <= 'z';
}

static const struct config_str_rule rule_aks_cluster = { ok_aks_cluster, 63, "an AKS cluster name (letters, digits, '-' and '_', up to 63, starting and ending with a letter or digit)" };
static const struct config_str_rule rule_aks_pool = { ok_aks_pool, 12, "an AKS agent pool name (lowercase letters and digits, up to 12, starting with a letter)" };

/* azure.aks: {cluster, resource_group, pool}, every key required. */
static int parse_azure_aks(struct config_ctx *x, const struct ytree_node *m, struct config_azure_group *c)
{
	static const char *const keys[] = { "cluster", "resource_group", "pool", NULL };

	if (cfg_expect_kind(x, m, YTREE_MAP) || cfg_check_keys(x, m, keys) ||
	    cfg_field(x, m, "cluster", cfg_dec_checked, &c->aks_cluster, &rule_aks_cluster, NULL) ||
	    cfg_field(x, m, "resource_group", cfg_dec_checked, &c->aks_resource_group, &rule_resource_group, NULL) ||
	    cfg_field(x, m, "pool", cfg_dec_checked, &c->aks_pool, &rule_aks_pool, NULL))
		return -1;
	if (!c->aks_cluster || !c->aks_resource_group || !c->aks_pool)
		return cfg_fail_node(x, m, "an AKS agent pool needs cluster (the managed cluster's name), resource_group "
				     "(the cluster's own, not its MC_ node resource group) and pool: %s is missing",
				     !c->aks_cluster ? "cluster" : !c->aks_resource_group ? "resource_group" : "pool");
	return 0;
}

static int parse_group(struct config_ctx *x, const struct ytree_node *m, const struct node_group *g,
		       struct config_group_extra *e)
{
	static const char *const keys[] = { "vmss", "resource_group", "aks", NULL };
	struct config_azure_group *c = &e->azure;
	const struct ytree_node *aks;

	e->azure_set = true;
	if (cfg_expect_kind(x, m, YTREE_MAP) || cfg_check_keys(x, m, keys))
		return -1;
	c->vmss = NULL;
	if (cfg_field(x, m, "vmss", cfg_dec_checked, &c->vmss, &rule_vmss, NULL) ||
	    cfg_field(x, m, "resource_group", cfg_dec_checked, &c->resource_group, &rule_resource_group, NULL))
		return -1;
	if ((aks = cfg_map_get(m, "aks"))) {
		size_t old;
		int rc;

		if (c->vmss || c->resource_group)
			return cfg_fail_node(x, m, "node group \"%s\" is either a scale set (vmss, resource_group) or an AKS "
					     "agent pool (aks), not both: the pool's scale set is found from the pool", g->name);
		old = ytree_path_push_key(cfg_path(x), "aks");
		rc = parse_azure_aks(x, aks, c);
		ytree_path_pop(cfg_path(x), old);
		return rc;
	}
	if (!c->vmss) {
		if (strlen(g->name) > 64 || !ok_vmss(g->name))
			return cfg_fail_node(x, m, "the group's name \"%s\" is not a scale set name: give vmss", g->name);
		c->vmss = g->name;
	}
	return 0;
}

static int parse_azure_endpoints(struct config_ctx *x, const struct ytree_node *m)
{
	static const char *const keys[] = { "resource_manager", "authority", "imds", "prices", NULL };
	struct config_azure *a = &cfg_config(x)->azure;

	if (cfg_expect_kind(x, m, YTREE_MAP) || cfg_check_keys(x, m, keys))
		return -1;
	return cfg_field(x, m, "resource_manager", cfg_dec_checked, &a->endpoint_resource_manager, &cfg_rule_endpoint, NULL) ||
	       cfg_field(x, m, "authority", cfg_dec_checked, &a->endpoint_authority, &cfg_rule_endpoint, NULL) ||
	       cfg_field(x, m, "imds", cfg_dec_checked, &a->endpoint_imds, &cfg_rule_endpoint, NULL) ||
	       cfg_field(x, m, "prices", cfg_dec_checked, &a->endpoint_prices, &cfg_rule_endpoint, NULL) ? -1 : 0;
}

/* One discovery entry's tags: names Azure accepts (up to 512), values up to 256. */
static int parse_azure_tags(struct config_ctx *x, const struct ytree_node *m, struct config_azure_discovery *d)
{
	const struct ytree_node *c;
	struct kv *items;
	size_t i = 0;

	if (cfg_expect_kind(x, m, YTREE_MAP))
		return -1;
	if (!m->n)
		return cfg_fail_node(x, m, "at least one tag is needed: an empty list would claim every scale set");
	items = arena_calloc(cfg_arena(x), m->n, sizeof(*items));
	if (!items)
		return cfg_oom(x);
	for (c = m->first; c; c = c->next, i++) {
		size_t old = ytree_path_push_key(cfg_path(x), c->key->text);
		struct config_val v = cfg_val_of_node(x, c);
		const char *value = "";
		char buf[64];
		int rc = 0;

		if (!*c->key->text || strlen(c->key->text) > 512 || !ok_tag_name(c->key->text))
			rc = cfg_fail_node(x, c->key, "invalid tag name %s: up to 512 printable characters, none of <>%%&\\?/",
					   cfg_quoted(c->key->text, buf, sizeof(buf)));
		else if (c->kind != YTREE_SCALAR)
			rc = cfg_bad(x, &v, "a string (\"\" matches any value)");
		else if (!cfg_val_is_null(&v) && (strlen(c->text) > 256 || !cfg_ok_printable(c->text)))
			rc = cfg_fail_node(x, c, "invalid tag value %s: up to 256 printable characters",
					   cfg_quoted(c->text, buf, sizeof(buf)));
		else if (!cfg_val_is_null(&v))
			value = c->text;
		ytree_path_pop(cfg_path(x), old);
		if (rc)
			return -1;
		items[i].key = arena_strdup(cfg_arena(x), c->key->text);
		items[i].value = arena_strdup(cfg_arena(x), value);
		if (!items[i].key || !items[i].value)
			return cfg_oom(x);
	}
	d->tags = items;
	d->n_tags = i;
	return 0;
}

static int parse_azure_discovery(struct config_ctx *x, const struct ytree_node *l)
{
	static const char *const keys[] = { "tags", "min", "max", NULL };
	struct config_azure_discovery *d;
	const struct ytree_node *c;
	size_t i = 0;
	int rc = 0;

	if (cfg_expect_kind(x, l, YTREE_SEQ))
		return -1;
	d = arena_calloc(cfg_arena(x), l->n + 1, sizeof(*d));
	if (!d)
		return cfg_oom(x);
	for (c = l->first; c && !rc; c = c->next, i++) {
		size_t o2 = ytree_path_push_index(cfg_path(x), i);
		int64_t min = -1, max = -1;
		const struct ytree_node *t;

		rc = cfg_expect_kind(x, c, YTREE_MAP) || cfg_check_keys(x, c, keys) ||
		     cfg_field(x, c, "min", cfg_dec_int, &min, &cfg_range_group_size, NULL) ||
		     cfg_field(x, c, "max", cfg_dec_int, &max, &cfg_range_group_size, NULL) ? -1 : 0;
		t = rc ? NULL : cfg_map_get(c, "tags");
		if (!rc && !t)
			rc = cfg_fail_node(x, c, "tags is required: the scale sets that carry every one of them are managed");
		if (!rc) {
			size_t o3 = ytree_path_push_key(cfg_path(x), "tags");

			rc = parse_azure_tags(x, t, &d[i]);
			ytree_path_pop(cfg_path(x), o3);
		}
		if (!rc && min >= 0 && max >= 0 && max < min)
			rc = cfg_fail_node(x, c, "max (%lld) is less than min (%lld)", (long long)max, (long long)min);
		d[i].min = (int)min;
		d[i].max = (int)max;
		ytree_path_pop(cfg_path(x), o2);
	}
	cfg_config(x)->azure.discovery = d;
	cfg_config(x)->azure.n_discovery = i;
	return rc;
}

static int parse_section(struct config_ctx *x, const struct ytree_node *m)
{
	static const char *const keys[] = { "cloud", "subscription_id", "resource_group", "tenant_id",
					    "client_id", "auth", "client_secret_file",
					    "federated_token_file", "identity_client_id", "endpoints",
					    "discovery", NULL };
	struct config_azure *a = &cfg_config(x)->azure;
	struct config_loc w1, w2;
	const char *sf = NULL, *tf = NULL;

	if (cfg_expect_kind(x, m, YTREE_MAP) || cfg_check_keys(x, m, keys))
		return -1;
	if (cfg_field(x, m, "cloud", cfg_dec_checked, &a->cloud, &rule_azure_cloud, NULL) ||
	    cfg_field(x, m, "subscription_id", cfg_dec_checked, &a->subscription_id, &rule_guid, NULL) ||
	    cfg_field(x, m, "resource_group", cfg_dec_checked, &a->resource_group, &rule_resource_group, NULL) ||
	    cfg_field(x, m, "tenant_id", cfg_dec_checked, &a->tenant_id, &rule_tenant, NULL) ||
	    cfg_field(x, m, "client_id", cfg_dec_checked, &a->client_id, &rule_guid, NULL) ||
	    cfg_field(x, m, "auth", cfg_dec_checked, &a->auth, &rule_azure_auth, NULL) ||
	    cfg_field(x, m, "client_secret_file", cfg_dec_string, &sf, NULL, &w1) ||
	    cfg_field(x, m, "federated_token_file", cfg_dec_string, &tf, NULL, &w2) ||
	    cfg_field(x, m, "identity_client_id", cfg_dec_checked, &a->identity_client_id, &rule_guid, NULL) ||
	    cfg_section(x, m, "endpoints", parse_azure_endpoints) ||
	    cfg_section(x, m, "discovery", parse_azure_discovery))
		return -1;
	if (sf && !(a->client_secret_file = cfg_resolve_path(x, sf, true, &w1)))
		return -1;
	if (tf && !(a->federated_token_file = cfg_resolve_path(x, tf, true, &w2)))
		return -1;
	return 0;
}


static int env(struct config_ctx *x)
{
	struct config *c = cfg_config(x);

	return cfg_env_field(x, "LUASCALE_PROVIDER_AZURE_CLOUD", cfg_dec_checked, &c->azure.cloud,
			     &rule_azure_cloud, NULL) ||
	       cfg_env_field(x, "LUASCALE_PROVIDER_AZURE_SUBSCRIPTION_ID", cfg_dec_checked,
			     &c->azure.subscription_id, &rule_guid, NULL) ||
	       cfg_env_field(x, "LUASCALE_PROVIDER_AZURE_RESOURCE_GROUP", cfg_dec_checked,
			     &c->azure.resource_group, &rule_resource_group, NULL) ||
	       cfg_env_field(x, "LUASCALE_PROVIDER_AZURE_TENANT_ID", cfg_dec_checked, &c->azure.tenant_id,
			     &rule_tenant, NULL) ||
	       cfg_env_field(x, "LUASCALE_PROVIDER_AZURE_CLIENT_ID", cfg_dec_checked, &c->azure.client_id,
			     &rule_guid, NULL) ||
	       cfg_env_field(x, "LUASCALE_PROVIDER_AZURE_AUTH", cfg_dec_checked, &c->azure.auth,
			     &rule_azure_auth, NULL) ? -1 : 0;
}

/* provider.kind is azure: a group without an azure: section is a scale
 * set of its name, which must be a scale set name; no two groups are one
 * scale set or one AKS agent pool. */
static int check(struct config_ctx *x)
{
	struct config *c = cfg_config(x);
	size_t i, j;

	for (i = 0; i < c->n_groups; i++) {
		struct config_azure_group *g = &c->group_extra[i].azure;

		if (!c->group_extra[i].azure_set)
			g->vmss = c->groups[i].name; /* a scale set of the group's name */
		if (!g->aks_pool && (strlen(g->vmss) > 64 || !ok_vmss(g->vmss)))
			return cfg_fail_loc(x, cfg_group_loc(x, i),
					    "node group \"%s\" is not a scale set name: give azure: {vmss: NAME}",
					    c->groups[i].name);
		for (j = 0; j < i; j++) {
			const struct config_azure_group *o = &c->group_extra[j].azure;

			if (g->aks_pool && o->aks_pool && !strcmp(o->aks_pool, g->aks_pool) &&
			    !strcasecmp(o->aks_cluster, g->aks_cluster) &&
			    !strcasecmp(o->aks_resource_group, g->aks_resource_group))
				return cfg_fail_loc(x, cfg_group_section_loc(x, i),
						    "node groups \"%s\" and \"%s\" are the same AKS agent pool \"%s\"",
						    c->groups[j].name, c->groups[i].name, g->aks_pool);
			if (!g->aks_pool && !o->aks_pool && !strcasecmp(o->vmss, g->vmss) &&
			    !strcasecmp(o->resource_group ? o->resource_group : "",
					g->resource_group ? g->resource_group : ""))
				return cfg_fail_loc(x, cfg_group_section_loc(x, i),
						    "node groups \"%s\" and \"%s\" are the same scale set \"%s\"",
						    c->groups[j].name, c->groups[i].name, g->vmss);
		}
	}
	return 0;
}

/* A scale set's "min" and "max" tags say its limits. */
static bool max_from_cloud(const struct config_group_extra *e)
{
	(void)e;
	return true;
}

static bool str_differs(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") != 0;
}

bool config_azure_differs(const struct config_azure *a, const struct config_azure *b)
{
	size_t i, j;

	if (str_differs(a->cloud, b->cloud) || str_differs(a->subscription_id, b->subscription_id) ||
	    str_differs(a->resource_group, b->resource_group) || str_differs(a->tenant_id, b->tenant_id) ||
	    str_differs(a->client_id, b->client_id) || str_differs(a->auth, b->auth) ||
	    str_differs(a->client_secret_file, b->client_secret_file) ||
	    str_differs(a->federated_token_file, b->federated_token_file) ||
	    str_differs(a->identity_client_id, b->identity_client_id) ||
	    str_differs(a->endpoint_resource_manager, b->endpoint_resource_manager) ||
	    str_differs(a->endpoint_authority, b->endpoint_authority) ||
	    str_differs(a->endpoint_imds, b->endpoint_imds) || str_differs(a->endpoint_prices, b->endpoint_prices) ||
	    a->n_discovery != b->n_discovery)
		return true;
	for (i = 0; i < a->n_discovery; i++) {
		const struct config_azure_discovery *x = &a->discovery[i], *y = &b->discovery[i];

		if (x->min != y->min || x->max != y->max || x->n_tags != y->n_tags)
			return true;
		for (j = 0; j < x->n_tags; j++)
			if (str_differs(x->tags[j].key, y->tags[j].key) || str_differs(x->tags[j].value, y->tags[j].value))
				return true;
	}
	return false;
}

bool config_azure_group_differs(const struct config_azure_group *a, const struct config_azure_group *b)
{
	return str_differs(a->vmss, b->vmss) || str_differs(a->resource_group, b->resource_group) ||
	       str_differs(a->aks_cluster, b->aks_cluster) ||
	       str_differs(a->aks_resource_group, b->aks_resource_group) || str_differs(a->aks_pool, b->aks_pool);
}

const struct config_cloud config_cloud_azure = {
	.kind = "azure",
	.parse_section = parse_section,
	.parse_group = parse_group,
	.env = env,
	.check = check,
	.max_from_cloud = max_from_cloud,
};
