/*
 * sim/clouds/gce_kind: GCE as the shared simulator code sees it
 * (sim_cloud_gce): a scenario's `gce:` section and the flavour's life in a
 * world (its `luascale sim` options and serving are gce_face.c's
 * sim_face_gce). The flavour itself is cloud_gce.c's, the wire gce_face.c's.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "runtime/clock.h"
#include "sim/clouds/cloud_gce.h"
#include "sim/clouds/gce_face.h"
#include "sim/world/scenario_parse.h"

/* ---- the scenario's gce: section ---- */

/* One group's entry under gce.groups (m NULL: the defaults). */
static int gce_group(struct scenario_walk *x, const struct ytree_node *m,
		     const struct ytree_node *at, size_t gi, void *ctx)
{
	static const char *const keys[] = {"zone", "region", "zones", "mig", "base_instance_name",
					   "template", "machine_type", "labels", "refuse_create", "spot",
					   "kube_env", NULL};
	struct sim_gce_conf *c = ctx;
	struct sim_gce_group *g = &c->groups[gi];
	const char *zone = NULL, *region = NULL;
	struct kvlist labels = {NULL, 0};
	size_t i;

	(void)at; /* its messages point at its entry */
	if (m && (sw_expect(x, m, YTREE_MAP) || sw_check_keys(x, m, keys) ||
		  sw_get_str(x, m, "zone", false, &zone) || sw_get_str(x, m, "region", false, &region) ||
		  sw_get_strlist(x, m, "zones", &g->zones, &g->n_zones) ||
		  sw_get_str(x, m, "mig", false, &g->mig) ||
		  sw_get_str(x, m, "base_instance_name", false, &g->base_name) ||
		  sw_get_str(x, m, "template", false, &g->template_name) ||
		  sw_get_str(x, m, "machine_type", false, &g->machine_type) ||
		  sw_get_kv(x, m, "labels", false, &labels) ||
		  sw_get_bool(x, m, "refuse_create", &g->refuse_create) ||
		  sw_get_bool(x, m, "spot", &g->spot) ||
		  sw_get_str(x, m, "kube_env", false, &g->kube_env)))
		return -1;
	if (zone && (region || g->n_zones))
		return sw_fail(x, m, "a zonal MIG names a zone; a regional one a region and its zones");
	if (region) {
		g->regional = true;
		g->region = region;
		if (!g->n_zones)
			return sw_missing(x, m, "zones");
		for (i = 0; i < g->n_zones; i++)
			if (strncmp(g->zones[i], region, strlen(region)) != 0 ||
			    g->zones[i][strlen(region)] != '-')
				return sw_fail(x, m, "zone \"%s\" is not in region %s", g->zones[i], region);
	} else {
		const char *dash;
		char *r;

		if (!zone)
			zone = "us-central1-a";
		dash = strrchr(zone, '-');
		if (!dash || dash == zone || strlen(zone) > 31)
			return sw_fail(x, m, "zone \"%s\": expected REGION-LETTER (us-central1-a)", zone);
		g->zones = arena_calloc(x->a, 1, sizeof(*g->zones));
		r = arena_calloc(x->a, 1, (size_t)(dash - zone) + 1);
		if (!g->zones || !r)
			return sw_oom(x);
		memcpy(r, zone, (size_t)(dash - zone));
		g->zones[0] = zone;
		g->n_zones = 1;
		g->region = r;
	}
	for (i = 0; i < g->n_zones; i++)
		if (strlen(g->zones[i]) > 31)
			return sw_fail(x, m, "zone \"%s\" is too long", g->zones[i]);
	if (!g->mig)
		g->mig = x->sc->groups[gi].name;
	if (!g->base_name)
		g->base_name = g->mig;
	if (!g->template_name) {
		char t[96];
		char *d;

		snprintf(t, sizeof(t), "%.80s-template", g->mig);
		if (!(d = arena_strdup(x->a, t)))
			return sw_oom(x);
		g->template_name = d;
	}
	if (!g->machine_type)
		g->machine_type = "e2-standard-4";
	if (!sim_gce_find_mtype(g->machine_type))
		return sw_fail(x, m, "unknown machine type \"%s\"", g->machine_type);
	g->labels = labels.n ? arena_calloc(x->a, labels.n, sizeof(*g->labels)) : NULL;
	if (labels.n && !g->labels)
		return sw_oom(x);
	for (i = 0; i < labels.n; i++) {
		g->labels[i].key = labels.items[i].key;
		g->labels[i].value = labels.items[i].value;
	}
	g->n_labels = labels.n;
	return 0;
}

static int gce_parse(struct scenario_walk *x, const struct ytree_node *m, const void **conf)
{
	static const char *const keys[] = {"project", "project_number", "service_account",
					   "token_ttl", "retry", "operation_time", "wait_timeout",
					   "throttle_status", "groups", NULL};
	struct sim_gce_conf *c = arena_calloc(x->a, 1, sizeof(*c));
	int64_t ttl_ns = 3600 * CLOCK_NS_PER_S, status = 403;

	if (!c)
		return sw_oom(x);
	c->retry_ns = 10 * CLOCK_NS_PER_S;
	c->wait_ns = 120 * CLOCK_NS_PER_S;
	if (sw_expect(x, m, YTREE_MAP) || sw_check_keys(x, m, keys) ||
	    sw_get_str(x, m, "project", false, &c->project) ||
	    sw_get_str(x, m, "project_number", false, &c->project_number) ||
	    sw_get_str(x, m, "service_account", false, &c->service_account) ||
	    sw_get_duration(x, m, "token_ttl", &ttl_ns) || sw_get_duration(x, m, "retry", &c->retry_ns) ||
	    sw_get_duration(x, m, "operation_time", &c->operation_ns) ||
	    sw_get_duration(x, m, "wait_timeout", &c->wait_ns) ||
	    sw_get_int(x, m, "throttle_status", 403, 429, &status))
		return -1;
	if (!c->project)
		c->project = "sim-project";
	if (!c->project_number)
		c->project_number = "123456789012";
	if (!sim_gce_valid_name(c->project) || strlen(c->project) < 6 || strlen(c->project) > 30)
		return sw_fail(x, m, "project \"%s\": 6-30 of [a-z0-9-], a letter first", c->project);
	if (strspn(c->project_number, "0123456789") != strlen(c->project_number) ||
	    !c->project_number[0] || strlen(c->project_number) > 19)
		return sw_fail(x, m, "project_number must be digits");
	if (!c->service_account) {
		char sa[128];
		char *d;

		snprintf(sa, sizeof(sa), "luascale@%s.iam.gserviceaccount.com", c->project);
		if (!(d = arena_strdup(x->a, sa)))
			return sw_oom(x);
		c->service_account = d;
	}
	if (!strchr(c->service_account, '@') || strlen(c->service_account) > 100)
		return sw_fail(x, m, "service_account \"%s\" is not an email", c->service_account);
	if (ttl_ns < 60 * CLOCK_NS_PER_S)
		return sw_fail(x, m, "token_ttl must be at least 1m");
	c->token_ttl_s = ttl_ns / CLOCK_NS_PER_S;
	if (c->retry_ns <= 0 || c->wait_ns <= 0 || c->operation_ns < 0)
		return sw_fail(x, m, "retry and wait_timeout must be positive, operation_time not negative");
	if (status != 403 && status != 429)
		return sw_fail(x, m, "throttle_status: 403 or 429");
	c->throttle_status = (int)status;
	c->n_groups = x->sc->n_groups;
	c->groups = c->n_groups ? arena_calloc(x->a, c->n_groups, sizeof(*c->groups)) : NULL;
	if (c->n_groups && !c->groups)
		return sw_oom(x);
	if (sw_each_group(x, m, gce_group, c) < 0)
		return -1;
	*conf = c;
	return 0;
}

/* ---- the flavour in a world ---- */

static void *gce_flavour_new(struct sim_cloud *cloud, const void *conf, uint64_t seed,
			     struct errbuf *err)
{
	return sim_gce_new(cloud, conf, seed, err);
}

static void gce_flavour_start(void *flavour)
{
	sim_gce_start(flavour);
}

static void gce_flavour_free(void *flavour)
{
	sim_gce_free(flavour);
}

const struct sim_cloud_kind sim_cloud_gce = {
	.name = "gce",
	.rank = 2,
	.refusal = "a scenario has an aws: or a gce: section, not both",
	.parse = gce_parse,
	/* GKE's handlers taint a node GCE is about to preempt */
	.interruption_taint = "cloud.google.com/impending-node-termination",
	.flavour_new = gce_flavour_new,
	.flavour_start = gce_flavour_start,
	.flavour_free = gce_flavour_free,
};
