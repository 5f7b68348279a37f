/*
 * providers/aws: what a new node of a group offers, for scale from zero —
 * the instance type (launch template, mixed instances policy, fleet
 * config), its resources (DescribeInstanceTypes) turned into allocatable
 * the way the EKS node bootstrap reserves them, and the Cluster
 * Autoscaler's node-template tags. Caches what it described, and reads
 * launch template versions (their instance type and, for image drift in
 * aws_image.c, their image) for both.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "providers/aws/aws_internal.h"
#include "quantity.h"

#define LT_TTL_NS (10 * 60 * CLOCK_NS_PER_S)
#define MIB (1024ll * 1024)

/* The most pods the VPC CNI gives a node of this type (ENIs x (IPs - 1) + 2),
 * at most 110 (250 from 30 vCPUs up, as EKS's max-pods calculator says). */
static int64_t max_pods(const struct aws_itype *t)
{
	int64_t cap = t->vcpus > 30 ? 250 : 110, n;

	if (t->enis <= 0 || t->ips_per_eni <= 1)
		return cap;
	n = (int64_t)t->enis * (t->ips_per_eni - 1) + 2;
	return n < cap ? n : cap;
}

/* The instance type 'name' (cached; described once). 0, or -1. */
static int itype(struct provider *p, const char *name, struct aws_itype *out)
{
	struct aws_prov *ap = AWS_PROV(p);
	struct provider_status st;
	struct aws_query f;
	struct xmltree_doc *d = NULL;
	const struct xmltree_node *it, *g;
	struct aws_itype t;
	int64_t v;

	if (memo_get(ap->itypes, name, out))
		return 0;
	aws_query_init(&f, AWS_SERVICE_EC2, "DescribeInstanceTypes");
	aws_query_add(&f, "InstanceType.1", name);
	if (aws_do(p, AWS_SERVICE_EC2, false, &f, &d, &st) < 0) {
		aws_query_free(&f);
		log_at(ap->log, LOG_WARN, clock_wall(ap->clock),
		       "aws: cannot describe instance type %s: %s", name, st.message);
		return -1;
	}
	aws_query_free(&f);
	it = xmltree_first(xmltree_find(xmltree_root(d), "instanceTypeSet"), "item");
	memset(&t, 0, sizeof(t));
	snprintf(t.name, sizeof(t.name), "%s", name);
	if (!it || xmltree_int64(it, "vCpuInfo/defaultVCpus", &v) < 0 || v < 1 || v > 100000 ||
	    (t.vcpus = (int)v, xmltree_int64(it, "memoryInfo/sizeInMiB", &t.memory_mib) < 0) ||
	    t.memory_mib < 1 || t.memory_mib > (1ll << 40)) {
		log_at(ap->log, LOG_WARN, clock_wall(ap->clock),
		       "aws: DescribeInstanceTypes gave no vCPUs and memory for %s", name);
		xmltree_free(d);
		return -1;
	}
	for (g = xmltree_first(xmltree_find(it, "gpuInfo/gpus"), "item"); g; g = xmltree_next(g))
		if (xmltree_int64(g, "count", &v) == 0 && v > 0 && v < 1024)
			t.gpus += (int)v;
	if (xmltree_int64(it, "networkInfo/maximumNetworkInterfaces", &v) == 0 && v > 0 && v < 1024)
		t.enis = (int)v;
	if (xmltree_int64(it, "networkInfo/ipv4AddressesPerInterface", &v) == 0 && v > 0 && v < 1024)
		t.ips_per_eni = (int)v;
	snprintf(t.arch, sizeof(t.arch), "%s",
		 !strcmp(xmltree_text(it, "processorInfo/supportedArchitectures/item"), "arm64") ? "arm64"
											 : "amd64");
	xmltree_free(d);
	memo_put(ap->itypes, name, &t); /* out of memory: described again next time */
	*out = t;
	return 0;
}

/* The cache's answer for 'key' into *out: 1 when it serves (a read of
 * this listing, or a good one under 10 minutes old that need not be
 * fresh), -1 when it is this listing's failure, 0 when the cloud must be
 * asked. */
static int lt_cached(struct aws_prov *ap, const char *key, bool fresh, int64_t now,
		     struct aws_lt_cache *out)
{
	struct aws_lt_cache e;
	uint64_t listing;

	if (!memo_get(ap->lts, key, &e))
		return 0;
	pthread_mutex_lock(&ap->mu);
	listing = ap->listing;
	pthread_mutex_unlock(&ap->mu);
	if (e.listing == listing && e.failed)
		return -1;
	if (e.listing != listing && (e.failed || fresh || now - e.at_ns >= LT_TTL_NS))
		return 0;
	*out = e;
	return 1;
}

/* Keeps what the cloud said of out->key, or that it failed ('failed'). */
static void lt_keep(struct aws_prov *ap, struct aws_lt_cache *out, bool failed)
{
	pthread_mutex_lock(&ap->mu);
	out->listing = ap->listing;
	pthread_mutex_unlock(&ap->mu);
	out->failed = failed;
	memo_put(ap->lts, out->key, out);
}

int aws_lt_read(struct provider *p, const char *id, const char *name, const char *version,
		bool fresh, struct aws_lt_cache *out)
{
	struct aws_prov *ap = AWS_PROV(p);
	struct provider_status st;
	struct aws_query f;
	struct xmltree_doc *d = NULL;
	const struct xmltree_node *v;
	int64_t now = clock_now(ap->clock);
	int rc;

	if (!version || !*version)
		version = "$Default";
	memset(out, 0, sizeof(*out));
	snprintf(out->key, sizeof(out->key), "%s@%s", id && *id ? id : name ? name : "", version);
	rc = lt_cached(ap, out->key, fresh, now, out);
	if (rc)
		return rc > 0 ? 0 : -1;
	aws_query_init(&f, AWS_SERVICE_EC2, "DescribeLaunchTemplateVersions");
	if (id && *id)
		aws_query_add(&f, "LaunchTemplateId", id);
	else
		aws_query_add(&f, "LaunchTemplateName", name ? name : "");
	aws_query_add(&f, "LaunchTemplateVersion.1", version);
	/* an SSM parameter as the image comes back as the AMI it names now */
	aws_query_add(&f, "ResolveAlias", "true");
	rc = aws_do(p, AWS_SERVICE_EC2, false, &f, &d, &st);
	aws_query_free(&f);
	if (rc < 0) {
		log_at(ap->log, LOG_WARN, clock_wall(ap->clock),
		       "aws: cannot read launch template %s version %s: %s", out->key, version, st.message);
		lt_keep(ap, out, true);
		return -1;
	}
	v = xmltree_find(xmltree_root(d), "launchTemplateVersionSet/item/launchTemplateData");
	xmltree_copy(v, "instanceType", out->type, sizeof(out->type));
	xmltree_copy(v, "imageId", out->image, sizeof(out->image));
	xmltree_free(d);
	out->at_ns = now;
	out->read_wall = clock_wall(ap->clock);
	lt_keep(ap, out, false);
	return 1;
}

/* The instance type of a launch template version (cached for 10 minutes). */
static int lt_type(struct provider *p, const char *id, const char *name, const char *version,
		   char *out, size_t len)
{
	struct aws_lt_cache e;
	int rc = aws_lt_read(p, id, name, version, false, &e);

	out[0] = '\0';
	if (rc < 0)
		return -1;
	if (!e.type[0]) {
		if (rc > 0) /* said when read, not every round the answer is cached */
			log_at(AWS_PROV(p)->log, LOG_WARN, clock_wall(AWS_PROV(p)->clock),
			       "aws: launch template %s names no instance type", e.key);
		return -1;
	}
	snprintf(out, len, "%s", e.type);
	return 0;
}

/* The node-template tags: labels, taints ("value:Effect") and resources. */
static void template_tags(struct aws_prov *ap, const struct aws_asg *a, struct provider_template *t)
{
	size_t i, pl = strlen(AWS_TAG_TEMPLATE_PREFIX);

	for (i = 0; i < a->n_tags; i++) {
		const char *k = a->tags[i].key, *slash;
		char kind[32];

		if (strncmp(k, AWS_TAG_TEMPLATE_PREFIX, pl) || !(slash = strchr(k + pl, '/')))
			continue;
		snprintf(kind, sizeof(kind), "%.*s", (int)(slash - k - pl), k + pl);
		if (provider_template_tag(t, kind, slash + 1, a->tags[i].value) < 0)
			log_at(ap->log, LOG_WARN, clock_wall(ap->clock),
			       "aws: ASG %.128s: tag %.128s ignored (labels take a value, taints "
			       "\"value:NoSchedule|PreferNoSchedule|NoExecute\", resources a quantity)",
			       a->name, k);
	}
}

/* The instance type of a new instance of group 'g' (ASG 'a' or a fleet
 * group) into 'type' ("" when none is known), and its one zone into *zone. */
static void group_type(struct provider *p, const struct aws_group *g, const struct aws_asg *a,
		       char *type, size_t len, const char **zone)
{
	size_t i;

	type[0] = '\0';
	*zone = NULL;
	if (g->fleet && g->cfg && g->cfg->n_instance_types) {
		snprintf(type, len, "%s", g->cfg->instance_types[0]);
		if (g->cfg->n_placements == 1)
			*zone = g->cfg->zones[0];
	} else if (a) {
		if (a->override_type[0])
			snprintf(type, len, "%s", a->override_type);
		else if (a->lt_id[0] || a->lt_name[0])
			lt_type(p, a->lt_id, a->lt_name, a->lt_version, type, len);
		for (i = 0; !type[0] && i < a->n_inst; i++)
			snprintf(type, len, "%s", a->inst[i].type);
		if (a->n_zones == 1)
			*zone = a->zones[0];
	}
}

void aws_template_type(struct provider *p, const struct aws_group *g, const struct aws_asg *a,
		       struct provider_template *t)
{
	const char *zone;

	group_type(p, g, a, t->instance_type, sizeof(t->instance_type), &zone);
}

/* Type 'type''s resources and labels into 't' (nothing when it cannot be
 * described). 0, or -1. */
static int type_template(struct provider *p, const char *type, struct provider_template *t)
{
	struct aws_itype it;
	int64_t pods, mem;

	if (itype(p, type, &it) < 0)
		return -1;
	pods = max_pods(&it);
	mem = it.memory_mib * MIB - (255 + 11 * pods) * MIB - 100 * MIB;
	snprintf(t->instance_type, sizeof(t->instance_type), "%s", type);
	t->cpu_m = (int64_t)it.vcpus * 1000 - provider_reserved_cpu_m(it.vcpus);
	t->memory = mem > 0 ? mem : 0;
	t->pods = pods;
	t->gpus = it.gpus;
	provider_template_label(t, "node.kubernetes.io/instance-type", type);
	provider_template_label(t, "kubernetes.io/arch", it.arch);
	return 0;
}

/* The labels every type of a group shares. */
static void common_labels(struct aws_prov *ap, const char *zone, struct provider_template *t)
{
	provider_template_label(t, "kubernetes.io/os", "linux");
	provider_template_label(t, "topology.kubernetes.io/region", ap->api.region);
	if (zone)
		provider_template_label(t, "topology.kubernetes.io/zone", zone);
}

void aws_describe_template(struct provider *p, const struct aws_group *g, const struct aws_asg *a,
			   struct provider_template *t)
{
	struct aws_prov *ap = AWS_PROV(p);
	char type[64];
	const char *zone;

	group_type(p, g, a, type, sizeof(type), &zone);
	if (!type[0])
		log_at(ap->log, LOG_WARN, clock_wall(ap->clock),
		       "aws: group %s: no instance type is known (no launch template, mixed instances policy or instance): write a template for it in the config",
		       g->name);
	else
		type_template(p, type, t);
	common_labels(ap, zone, t);
	if (a)
		template_tags(ap, a, t);
}

int aws_describe_types(struct provider *p, const struct aws_group *g, struct provider_group *pg)
{
	struct aws_prov *ap = AWS_PROV(p);
	const char *zone;
	size_t i, n;

	if (!g->fleet || !g->cfg || g->cfg->n_instance_types < 2)
		return 0;
	n = g->cfg->n_instance_types;
	zone = g->cfg->n_placements == 1 ? g->cfg->zones[0] : NULL;
	pg->types = calloc(n, sizeof(*pg->types));
	if (!pg->types)
		return -1;
	for (i = 0; i < n; i++) {
		struct provider_template *t = &pg->types[pg->n_types++];

		/* a type that cannot be described keeps its name: the engine
		 * gives it the group's template */
		if (type_template(p, g->cfg->instance_types[i], t) < 0)
			snprintf(t->instance_type, sizeof(t->instance_type), "%s",
				 g->cfg->instance_types[i]);
		common_labels(ap, zone, t);
	}
	return 0;
}
