/*
 * sim/clouds/aws_kind: the AWS cloud as the shared simulator code sees it
 * (sim_cloud_aws): a scenario's `aws:` section and the flavour's life in a
 * world (its `luascale sim` options and serving are aws_face.c's
 * sim_face_aws). The flavour itself is cloud_aws.c's, the wire aws_face.c's.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "runtime/clock.h"
#include "sim/clouds/aws_face.h"
#include "sim/clouds/cloud_aws.h"
#include "sim/world/scenario_parse.h"

/* ---- the scenario's aws: section ---- */

static int aws_type_item(struct scenario_walk *x, const struct ytree_node *c, void *base, size_t i)
{
	static const char *const keys[] = {"name", "vcpus", "memory_mib", "gpus", "gpu_name",
					   "gpu_manufacturer", "gpu_memory_mib", "arch", NULL};
	struct sim_aws_type *t = (struct sim_aws_type *)base + i;
	int64_t vcpus = 0, gpus = 0;

	if (sw_expect(x, c, YTREE_MAP) || sw_check_keys(x, c, keys) ||
	    sw_get_str(x, c, "name", true, &t->name) || sw_get_int(x, c, "vcpus", 1, 4096, &vcpus) ||
	    sw_get_int(x, c, "memory_mib", 1, INT64_C(1) << 40, &t->memory_mib) ||
	    sw_get_int(x, c, "gpus", 0, 64, &gpus) || sw_get_str(x, c, "gpu_name", false, &t->gpu_name) ||
	    sw_get_str(x, c, "gpu_manufacturer", false, &t->gpu_manufacturer) ||
	    sw_get_int(x, c, "gpu_memory_mib", 0, INT64_C(1) << 30, &t->gpu_memory_mib) ||
	    sw_get_str(x, c, "arch", false, &t->arch))
		return -1;
	if (!vcpus)
		return sw_missing(x, c, "vcpus");
	if (!t->memory_mib)
		return sw_missing(x, c, "memory_mib");
	if (strlen(t->name) > 31)
		return sw_fail(x, c, "instance type name too long");
	if (t->arch && strcmp(t->arch, "x86_64") != 0 && strcmp(t->arch, "arm64") != 0)
		return sw_fail(x, c, "arch: x86_64 or arm64");
	t->vcpus = (int)vcpus;
	t->gpus = (int)gpus;
	if (t->gpus && !t->gpu_name)
		t->gpu_name = "T4";
	if (t->gpus && !t->gpu_manufacturer)
		t->gpu_manufacturer = "NVIDIA";
	return 0;
}

/* Is 's' an AMI id as EC2 makes them ("ami-" and 8 or 17 hex digits)? */
static bool ami_id(const char *s)
{
	size_t n = strlen(s);

	return !strncmp(s, "ami-", 4) && (n == 12 || n == 21) && strspn(s + 4, "0123456789abcdef") == n - 4;
}

/* One group's entry under aws.groups (m NULL: the defaults). */
static int aws_group(struct scenario_walk *x, const struct ytree_node *m,
		     const struct ytree_node *at, size_t gi, void *ctx)
{
	static const char *const keys[] = {"mode", "zones", "instance_types", "launch_template",
					   "tags", "image", NULL};
	struct sim_aws_conf *c = ctx;
	struct sim_aws_group *g = &c->groups[gi];
	const char *mode = NULL;
	struct kvlist tags = {NULL, 0};
	size_t i;

	(void)at; /* its messages point at its entry */
	if (m && (sw_expect(x, m, YTREE_MAP) || sw_check_keys(x, m, keys) ||
		  sw_get_str(x, m, "mode", false, &mode) ||
		  sw_get_strlist(x, m, "zones", &g->zones, &g->n_zones) ||
		  sw_get_strlist(x, m, "instance_types", &g->types, &g->n_types) ||
		  sw_get_str(x, m, "launch_template", false, &g->launch_template) ||
		  sw_get_kv(x, m, "tags", false, &tags) || sw_get_str(x, m, "image", false, &g->image)))
		return -1;
	if (g->image && !ami_id(g->image)) {
		size_t old = ytree_path_push_key(&x->path, "image");

		sw_fail(x, ytree_map_find(m, "image"), "expected an AMI id (ami- and 8 or 17 hex digits), got \"%s\"",
			g->image);
		ytree_path_pop(&x->path, old);
		return -1;
	}
	if (!mode || strcmp(mode, "asg") == 0) {
		g->mode = SIM_AWS_ASG;
	} else if (strcmp(mode, "fleet") == 0) {
		g->mode = SIM_AWS_FLEET;
	} else {
		size_t old = ytree_path_push_key(&x->path, "mode");

		sw_fail(x, ytree_map_find(m, "mode"), "expected asg or fleet, got \"%s\"", mode);
		ytree_path_pop(&x->path, old);
		return -1;
	}
	if (!g->n_zones) {
		static const char letters[] = "abc";

		g->zones = arena_calloc(x->a, 3, sizeof(*g->zones));
		if (!g->zones)
			return sw_oom(x);
		for (i = 0; i < 3; i++) {
			char z[40];

			snprintf(z, sizeof(z), "%s%c", c->region, letters[i]);
			if (!(g->zones[i] = arena_strdup(x->a, z)))
				return sw_oom(x);
		}
		g->n_zones = 3;
	}
	for (i = 0; i < g->n_zones; i++)
		if (strncmp(g->zones[i], c->region, strlen(c->region)) != 0)
			return sw_fail(x, m, "zone \"%s\" is not in region %s", g->zones[i], c->region);
	if (!g->n_types) {
		g->types = arena_calloc(x->a, 1, sizeof(*g->types));
		if (!g->types)
			return sw_oom(x);
		g->types[0] = "m5.large";
		g->n_types = 1;
	}
	if (!g->launch_template)
		g->launch_template = x->sc->groups[gi].name;
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

static int aws_parse(struct scenario_walk *x, const struct ytree_node *m, const void **conf)
{
	static const char *const keys[] = {"region", "account", "cluster", "credentials", "imds",
					   "container_token", "credential_ttl", "asg_retry",
					   "instance_types", "groups", "interruption_queue", NULL};
	static const char *const ckeys[] = {"access_key_id", "secret_access_key", "session_token",
					    NULL};
	static const char *const ikeys[] = {"role", "v2_only", NULL};
	struct sim_aws_conf *c = arena_calloc(x->a, 1, sizeof(*c));
	const struct ytree_node *n;
	int64_t ttl_ns = 3600 * CLOCK_NS_PER_S;
	size_t old, i;
	int rc = 0;

	if (!c)
		return sw_oom(x);
	c->asg_retry_ns = 10 * CLOCK_NS_PER_S;
	if (sw_expect(x, m, YTREE_MAP) || sw_check_keys(x, m, keys) ||
	    sw_get_str(x, m, "region", false, &c->region) ||
	    sw_get_str(x, m, "account", false, &c->account) ||
	    sw_get_str(x, m, "cluster", false, &c->cluster) ||
	    sw_get_str(x, m, "container_token", false, &c->container_token) ||
	    sw_get_str(x, m, "interruption_queue", false, &c->interruption_queue) ||
	    sw_get_duration(x, m, "credential_ttl", &ttl_ns) ||
	    sw_get_duration(x, m, "asg_retry", &c->asg_retry_ns))
		return -1;
	if (!c->region)
		c->region = "us-east-1";
	if (!c->account)
		c->account = "123456789012";
	if (!c->cluster)
		c->cluster = "sim";
	if (strlen(c->region) > 24)
		return sw_fail(x, m, "region \"%s\" is too long", c->region);
	if (strlen(c->account) != 12 || strspn(c->account, "0123456789") != 12)
		return sw_fail(x, m, "account must be 12 digits");
	if (c->interruption_queue &&
	    (!c->interruption_queue[0] || strlen(c->interruption_queue) > 80 ||
	     strspn(c->interruption_queue, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") !=
		     strlen(c->interruption_queue)))
		return sw_fail(x, m, "interruption_queue: a queue name (1 to 80 letters, digits, '-' and '_')");
	if (ttl_ns < 60 * CLOCK_NS_PER_S)
		return sw_fail(x, m, "credential_ttl must be at least 1m");
	c->credential_ttl_s = ttl_ns / CLOCK_NS_PER_S;
	if (c->asg_retry_ns <= 0)
		return sw_fail(x, m, "asg_retry must be positive");
	n = sw_field(x, m, "credentials", &old);
	if (!n)
		rc = sw_missing(x, m, "credentials");
	else
		rc = sw_expect(x, n, YTREE_MAP) || sw_check_keys(x, n, ckeys) ||
		     sw_get_str(x, n, "access_key_id", true, &c->access_key_id) ||
		     sw_get_str(x, n, "secret_access_key", true, &c->secret_access_key) ||
		     sw_get_str(x, n, "session_token", false, &c->session_token);
	ytree_path_pop(&x->path, old);
	if (rc)
		return -1;
	n = sw_field(x, m, "imds", &old);
	if (n)
		rc = sw_expect(x, n, YTREE_MAP) || sw_check_keys(x, n, ikeys) ||
		     sw_get_str(x, n, "role", false, &c->role) ||
		     sw_get_bool(x, n, "v2_only", &c->imds_v2_only);
	ytree_path_pop(&x->path, old);
	if (rc)
		return -1;
	if (!c->role)
		c->role = "luascale-node";
	n = sw_field(x, m, "instance_types", &old);
	if (n) {
		void *items = NULL;

		rc = sw_parse_list(x, n, sizeof(struct sim_aws_type), aws_type_item, &items, &c->n_types);
		c->types = items;
	}
	ytree_path_pop(&x->path, old);
	if (rc)
		return -1;
	c->n_groups = x->sc->n_groups;
	c->groups = c->n_groups ? arena_calloc(x->a, c->n_groups, sizeof(*c->groups)) : NULL;
	if (c->n_groups && !c->groups)
		return sw_oom(x);
	if (sw_each_group(x, m, aws_group, c) < 0)
		return -1;
	/* an image fault rolls a launch template's AMI: it must be one */
	for (i = 0; i < x->sc->n_faults; i++)
		if (x->sc->faults[i].kind == SIM_FAULT_IMAGE && !ami_id(x->sc->faults[i].image))
			return sw_fail(x, m, "faults[%zu]: image \"%s\" is not an AMI id (ami- and 8 or 17 hex digits), "
				       "as the images of a scenario with aws: are", i, x->sc->faults[i].image);
	*conf = c;
	return 0;
}

/* ---- the flavour in a world ---- */

static void *aws_flavour_new(struct sim_cloud *cloud, const void *conf, uint64_t seed,
			     struct errbuf *err)
{
	return sim_aws_new(cloud, conf, seed, err);
}

static void aws_flavour_start(void *flavour)
{
	sim_aws_start(flavour);
}

static void aws_flavour_free(void *flavour)
{
	sim_aws_free(flavour);
}

const struct sim_cloud_kind sim_cloud_aws = {
	.name = "aws",
	.rank = 1,
	.parse = aws_parse,
	.flavour_new = aws_flavour_new,
	.flavour_start = aws_flavour_start,
	.flavour_free = aws_flavour_free,
};
