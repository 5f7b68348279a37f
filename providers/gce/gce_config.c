/*
 * providers/gce/gce_config: reads provider.gce, each group's gce: section
 * and the LUASCALE_PROVIDER_GCE_* variables into the config
 * (docs/providers/gce.md, docs/configuration.md), and checks them once
 * the whole config is read. Only src/config_parse.h's readers: whatever
 * reads a config links this file, never the GCE provider.
 */
#include "providers/gce/gce_config.h"

#include <string.h>

#include "arena.h"
#include "config_parse.h"

/* RFC 1035 labels, as GCE names resources: [a-z]([-a-z0-9]*[a-z0-9])? */
static bool ok_rfc1035(const char *s)
{
	size_t n = strlen(s);

	return n && s[0] >= 'a' && s[0] <= 'z' && s[n - 1] != '-' && cfg_chars_ok(s, "-", true);
}
static bool ok_gce_zone(const char *s) { return ok_rfc1035(s) && strchr(s, '-'); }
static bool ok_gce_project(const char *s)
{
	/* "my-project", or domain-scoped "example.com:my-project" */
	const char *colon = strrchr(s, ':');

	return cfg_chars_ok(colon ? colon + 1 : s, "-", true) && ok_rfc1035(colon ? colon + 1 : s) &&
	       (!colon || (colon != s && cfg_chars_ok(s, ".-:", true)));
}

static const struct config_str_rule rule_mig = { ok_rfc1035, 63, "a managed instance group name (lowercase letters, digits and '-', starting with a letter, up to 63)" };
static const struct config_str_rule rule_gce_zone = { ok_gce_zone, 63, "a GCE zone or region (like \"us-central1-a\" or \"us-central1\")" };
static const struct config_str_rule rule_gce_project = { ok_gce_project, 100, "a GCP project id (like \"my-project\")" };
static bool ok_mig_prefix(const char *s) { return s[0] >= 'a' && s[0] <= 'z' && cfg_chars_ok(s, "-", true); }
static const struct config_str_rule rule_mig_prefix = { ok_mig_prefix, 62, "a managed instance group name prefix (lowercase letters, digits and '-', starting with a letter)" };

static int parse_group(struct config_ctx *x, const struct ytree_node *m, const struct node_group *g,
		       struct config_group_extra *e)
{
	static const char *const keys[] = { "mig", "zone", "region", NULL };
	struct config_gce_group *c = &e->gce;

	e->gce_set = true;

	if (cfg_expect_kind(x, m, YTREE_MAP) || cfg_check_keys(x, m, keys))
		return -1;
	c->mig = g->name;
	if (cfg_field(x, m, "mig", cfg_dec_checked, &c->mig, &rule_mig, NULL) ||
	    cfg_field(x, m, "zone", cfg_dec_checked, &c->zone, &rule_gce_zone, NULL) ||
	    cfg_field(x, m, "region", cfg_dec_checked, &c->region, &rule_gce_zone, NULL))
		return -1;
	if (!c->zone == !c->region)
		return cfg_fail_node(x, m, "give the MIG's zone (a zonal MIG) or its region (a regional one): exactly one of zone and region");
	return 0;
}

/* host[:port], no scheme, no path */
static bool ok_hostport(const char *s)
{
	return *s && !strpbrk(s, "/@?# \\") && cfg_ok_printable(s) && s[0] != ':';
}

static const struct config_str_rule rule_hostport = { ok_hostport, 255, "a host[:port] (no scheme, no path)" };

static int parse_gce_endpoints(struct config_ctx *x, const struct ytree_node *m)
{
	static const char *const keys[] = { "compute", "token", "metadata", "billing", NULL };
	struct config_gce *g = &cfg_config(x)->gce;

	if (cfg_expect_kind(x, m, YTREE_MAP) || cfg_check_keys(x, m, keys))
		return -1;
	return cfg_field(x, m, "compute", cfg_dec_checked, &g->endpoint_compute, &cfg_rule_endpoint, NULL) ||
	       cfg_field(x, m, "token", cfg_dec_checked, &g->endpoint_token, &cfg_rule_endpoint, NULL) ||
	       cfg_field(x, m, "billing", cfg_dec_checked, &g->endpoint_billing, &cfg_rule_endpoint, NULL) ||
	       cfg_field(x, m, "metadata", cfg_dec_checked, &g->metadata_host, &rule_hostport, NULL) ? -1 : 0;
}

static int parse_gce_discovery(struct config_ctx *x, const struct ytree_node *l)
{
	static const char *const keys[] = { "prefix", "min", "max", NULL };
	struct config_gce_discovery *d;
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
		int64_t min = 0, max = -1;

		rc = cfg_expect_kind(x, c, YTREE_MAP) || cfg_check_keys(x, c, keys) ||
		     cfg_field(x, c, "prefix", cfg_dec_checked, &d[i].prefix, &rule_mig_prefix, NULL) ||
		     cfg_field(x, c, "min", cfg_dec_int, &min, &cfg_range_group_size, NULL) ||
		     cfg_field(x, c, "max", cfg_dec_int, &max, &cfg_range_group_size, NULL) ? -1 : 0;
		if (!rc && !d[i].prefix)
			rc = cfg_fail_node(x, c, "prefix is required: the MIGs whose names start with it are managed");
		if (!rc && max < 0)
			rc = cfg_fail_node(x, c, "max is required: a MIG has no size limits of its own");
		if (!rc && max < min)
			rc = cfg_fail_node(x, c, "max (%lld) is less than min (%lld)", (long long)max, (long long)min);
		d[i].min = (int)min;
		d[i].max = (int)max;
		ytree_path_pop(cfg_path(x), o2);
	}
	cfg_config(x)->gce.discovery = d;
	cfg_config(x)->gce.n_discovery = i;
	return rc;
}

static int parse_section(struct config_ctx *x, const struct ytree_node *m)
{
	static const char *const keys[] = { "project", "credentials_file", "endpoints", "discovery", NULL };
	struct config_gce *g = &cfg_config(x)->gce;
	struct config_loc where;
	const char *kf = NULL;

	if (cfg_expect_kind(x, m, YTREE_MAP) || cfg_check_keys(x, m, keys))
		return -1;
	if (cfg_field(x, m, "project", cfg_dec_checked, &g->project, &rule_gce_project, NULL) ||
	    cfg_field(x, m, "credentials_file", cfg_dec_string, &kf, NULL, &where) ||
	    cfg_section(x, m, "endpoints", parse_gce_endpoints) ||
	    cfg_section(x, m, "discovery", parse_gce_discovery))
		return -1;
	if (kf && !(g->credentials_file = cfg_resolve_path(x, kf, true, &where)))
		return -1;
	return 0;
}

static int env(struct config_ctx *x)
{
	struct config *c = cfg_config(x);

	return cfg_env_field(x, "LUASCALE_PROVIDER_GCE_PROJECT", cfg_dec_checked, &c->gce.project,
			     &rule_gce_project, NULL) ||
	       cfg_env_field(x, "LUASCALE_PROVIDER_GCE_CREDENTIALS_FILE", cfg_dec_string, &c->gce.credentials_file,
			     NULL, NULL) ? -1 : 0;
}

/* provider.kind is gce: every group names its MIG's zone or region, and
 * no two groups are one MIG. */
static int check(struct config_ctx *x)
{
	struct config *c = cfg_config(x);
	size_t i, j;

	for (i = 0; i < c->n_groups; i++) {
		const struct config_gce_group *g = &c->group_extra[i].gce;

		if (!c->group_extra[i].gce_set)
			return cfg_fail_loc(x, cfg_group_loc(x, i),
					    "node group \"%s\" needs a gce: section with its MIG's zone or region (provider.kind is gce)",
					    c->groups[i].name);
		for (j = 0; j < i; j++) {
			const struct config_gce_group *o = &c->group_extra[j].gce;

			if (!strcmp(o->mig, g->mig) && !strcmp(o->zone ? o->zone : o->region, g->zone ? g->zone : g->region))
				return cfg_fail_loc(x, cfg_group_section_loc(x, i),
						    "node groups \"%s\" and \"%s\" are the same MIG \"%s\"",
						    c->groups[j].name, c->groups[i].name, g->mig);
		}
	}
	return 0;
}

static bool str_differs(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") != 0;
}

bool config_gce_differs(const struct config_gce *a, const struct config_gce *b)
{
	size_t i;

	if (str_differs(a->project, b->project) || str_differs(a->credentials_file, b->credentials_file) ||
	    str_differs(a->endpoint_compute, b->endpoint_compute) ||
	    str_differs(a->endpoint_token, b->endpoint_token) ||
	    str_differs(a->endpoint_billing, b->endpoint_billing) ||
	    str_differs(a->metadata_host, b->metadata_host) || a->n_discovery != b->n_discovery)
		return true;
	for (i = 0; i < a->n_discovery; i++)
		if (str_differs(a->discovery[i].prefix, b->discovery[i].prefix) ||
		    a->discovery[i].min != b->discovery[i].min || a->discovery[i].max != b->discovery[i].max)
			return true;
	return false;
}

bool config_gce_group_differs(const struct config_gce_group *a, const struct config_gce_group *b)
{
	return str_differs(a->mig, b->mig) || str_differs(a->zone, b->zone) || str_differs(a->region, b->region);
}

const struct config_cloud config_cloud_gce = {
	.kind = "gce",
	.parse_section = parse_section,
	.parse_group = parse_group,
	.env = env,
	.check = check,
};
