/*
 * cloudgroups: joins the config's node groups with what the cloud says of
 * them, for one round (see cloudgroups.h). It owns the precedence rules;
 * the providers only report and the model only places nodes.
 */
#include "engine/cloudgroups.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "arena.h"

#define UNKNOWN_SIZE_RETRY_S 60

static const struct provider_group *find_cloud(const struct provider_group *cloud, size_t n,
					       const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(cloud[i].name, name))
			return &cloud[i];
	return NULL;
}

/* The instances' providerIDs (live ones with an id), when the provider
 * maps nodes to groups by them, and those the cloud says are outdated with
 * why (whatever the mapping). */
static int set_members(struct arena *a, struct node_group *g, const struct provider_group *cg)
{
	const char **ids = NULL;
	struct kv *out;
	size_t i, n = 0, m = 0;

	if (!cg->n_instances)
		return 0;
	if (cg->members_by_id && !(ids = arena_calloc(a, cg->n_instances, sizeof(*ids))))
		return -1;
	if (!(out = arena_calloc(a, cg->n_instances, sizeof(*out))))
		return -1;
	for (i = 0; i < cg->n_instances; i++) {
		const struct provider_instance *in = &cg->instances[i];

		if (!in->provider_id[0] || in->state == INSTANCE_GONE)
			continue;
		if (ids)
			ids[n++] = in->provider_id;
		if (in->outdated[0]) {
			out[m].key = in->provider_id;
			out[m++].value = in->outdated;
		}
	}
	if (ids) {
		g->provider_ids = ids;
		g->n_provider_ids = n;
	}
	g->outdated = m ? out : NULL;
	g->n_outdated = m;
	return 0;
}

/* Labels: 'base' (the cloud's) overlaid by 'over' (the config's). */
static int merge_labels(struct arena *a, const struct provider_template *t,
			const struct kvlist *over, struct kvlist *out)
{
	struct kv *items = arena_calloc(a, t->n_labels + over->n + 1, sizeof(*items));
	size_t i, j, n = 0;

	if (!items)
		return -1;
	for (i = 0; i < t->n_labels; i++) {
		for (j = 0; j < over->n && strcmp(over->items[j].key, t->labels[i].key); j++)
			;
		if (j < over->n)
			continue;
		items[n].key = t->labels[i].key;
		items[n++].value = t->labels[i].value;
	}
	for (j = 0; j < over->n; j++)
		items[n++] = over->items[j];
	out->items = items;
	out->n = n;
	return 0;
}

static int cloud_taints(struct arena *a, const struct provider_template *t, struct node_template *nt)
{
	size_t i, n = 0;

	if (!t->n_taints)
		return 0;
	nt->taints = arena_calloc(a, t->n_taints, sizeof(*nt->taints));
	if (!nt->taints)
		return -1;
	for (i = 0; i < t->n_taints; i++) {
		struct taint *d = &nt->taints[n];

		if (!strcmp(t->taints[i].effect, "NoSchedule"))
			d->effect = TAINT_NO_SCHEDULE;
		else if (!strcmp(t->taints[i].effect, "PreferNoSchedule"))
			d->effect = TAINT_PREFER_NO_SCHEDULE;
		else if (!strcmp(t->taints[i].effect, "NoExecute"))
			d->effect = TAINT_NO_EXECUTE;
		else
			continue;
		d->key = t->taints[i].key;
		d->value = t->taints[i].value ? t->taints[i].value : "";
		n++;
	}
	nt->n_taints = n;
	return 0;
}

/* The cloud's resources as allocatable: cpu, memory, pods, GPUs and the rest. */
static int cloud_allocatable(struct arena *a, const struct provider_template *t, struct resources *r)
{
	size_t i, n = 0;

	memset(r, 0, sizeof(*r));
	r->cpu_m = t->cpu_m;
	r->memory = t->memory;
	r->pods = t->pods;
	if (!t->gpus && !t->n_resources)
		return 0;
	r->ext = arena_calloc(a, t->n_resources + 1, sizeof(*r->ext));
	if (!r->ext)
		return -1;
	if (t->gpus > 0) {
		r->ext[n].name = "nvidia.com/gpu";
		r->ext[n++].value = t->gpus;
	}
	for (i = 0; i < t->n_resources; i++) {
		if (t->gpus > 0 && !strcmp(t->resources[i].name, "nvidia.com/gpu"))
			continue;
		r->ext[n].name = t->resources[i].name;
		r->ext[n++].value = t->resources[i].value;
	}
	r->n_ext = n;
	return 0;
}

/*
 * The groups of cg's instance types (node_group.types): each 'g' as it is
 * completed, with its type's allocatable (when the cloud described the
 * type), the type's labels overlaid by 'cfg_labels' (the config's), and
 * its price (the cloud's for the type; else the group's for its first type).
 * Unless the config writes the group's template, the group's own is then
 * its largest type's (by CPU, then memory), and so is its price unless the
 * config gives one.
 */
static int build_types(struct arena *a, struct node_group *g, const struct kvlist *cfg_labels,
		       bool template_set, const struct provider_group *cg)
{
	struct node_group *ts;
	size_t i;

	if (cg->tmpl.instance_type[0])
		g->instance_type = cg->tmpl.instance_type;
	if (!cg->n_types)
		return 0;
	ts = arena_calloc(a, cg->n_types, sizeof(*ts));
	if (!ts)
		return -1;
	for (i = 0; i < cg->n_types; i++) {
		const struct provider_template *pt = &cg->types[i];
		struct node_group *t = &ts[i];

		*t = *g;
		t->types = NULL;
		t->n_types = 0;
		t->provider_ids = NULL;
		t->n_provider_ids = 0;
		t->instance_type = pt->instance_type;
		if (pt->cpu_m > 0 && cloud_allocatable(a, pt, &t->tmpl.allocatable) < 0)
			return -1;
		if (merge_labels(a, pt, cfg_labels, &t->tmpl.labels) < 0)
			return -1;
		t->price_from_cloud = pt->price_per_hour > 0;
		if (t->price_from_cloud)
			t->price_per_hour = pt->price_per_hour;
		else if (!g->instance_type || strcmp(g->instance_type, pt->instance_type))
			t->price_per_hour = 0;
	}
	g->types = ts;
	g->n_types = cg->n_types;
	if (!template_set) {
		/* Which types the nodes on their way are is not known: they
		 * stand as the largest, so that a round never buys again for
		 * pods its last launch will take (a smaller node leaves some
		 * pending, and the next round buys for them) */
		const struct node_group *big = &ts[0];

		for (i = 1; i < cg->n_types; i++)
			if (ts[i].tmpl.allocatable.cpu_m > big->tmpl.allocatable.cpu_m ||
			    (ts[i].tmpl.allocatable.cpu_m == big->tmpl.allocatable.cpu_m &&
			     ts[i].tmpl.allocatable.memory > big->tmpl.allocatable.memory))
				big = &ts[i];
		g->tmpl.allocatable = big->tmpl.allocatable;
		g->tmpl.labels = big->tmpl.labels;
		g->instance_type = big->instance_type;
		if (g->price_from_cloud || g->price_per_hour <= 0) { /* the config's price wins */
			g->price_per_hour = big->price_per_hour;
			g->price_from_cloud = big->price_from_cloud;
		}
	}
	return 0;
}

/* Completes config group 'g' from the cloud's 'cg'. */
static int complete(struct arena *a, struct node_group *g, const struct config_group_extra *e,
		    const struct provider_group *cg, const struct logger *log, int64_t now)
{
	bool min_set = !e || e->min_set, max_set = !e || e->max_set;
	bool template_set = !e || e->template_set;
	const struct kvlist cfg_labels = g->tmpl.labels;

	if (cg->target > g->target)
		g->target = cg->target;
	if (cg->cloud_sized) {
		int min = cg->min, max = cg->max;

		if (min_set && g->min > min)
			min = g->min;
		if (max_set && g->max < max)
			max = g->max;
		if (min > max) {
			log_at(log, LOG_WARN, now,
			       "node group %s: the config's limits (min %d, max %d) and the cloud's (min %d, max %d) leave no size; using min %d, max %d",
			       g->name, min_set ? g->min : 0, max_set ? g->max : -1, cg->min, cg->max,
			       max, max);
			min = max;
		}
		g->min = min;
		g->max = max;
	}
	if (!template_set) {
		if (cloud_allocatable(a, &cg->tmpl, &g->tmpl.allocatable) < 0)
			return -1;
	}
	if (cg->tmpl.n_labels &&
	    merge_labels(a, &cg->tmpl, &g->tmpl.labels, &g->tmpl.labels) < 0)
		return -1;
	if (!g->tmpl.n_taints && cloud_taints(a, &cg->tmpl, &g->tmpl) < 0)
		return -1;
	if (g->price_per_hour <= 0 && cg->tmpl.price_per_hour > 0) {
		g->price_per_hour = cg->tmpl.price_per_hour;
		g->price_from_cloud = true;
	}
	if (build_types(a, g, &cfg_labels, template_set, cg) < 0)
		return -1;
	return set_members(a, g, cg);
}

/* A group the provider found: everything from the cloud. */
static int discovered(struct arena *a, struct node_group *g, const struct provider_group *cg)
{
	static const struct kvlist none = { NULL, 0 };

	memset(g, 0, sizeof(*g));
	g->name = cg->name;
	g->min = cg->min;
	g->max = cg->max;
	g->target = cg->target;
	g->price_per_hour = cg->tmpl.price_per_hour;
	g->price_from_cloud = cg->tmpl.price_per_hour > 0;
	if (cloud_allocatable(a, &cg->tmpl, &g->tmpl.allocatable) < 0 ||
	    (cg->tmpl.n_labels && merge_labels(a, &cg->tmpl, &none, &g->tmpl.labels) < 0) ||
	    cloud_taints(a, &cg->tmpl, &g->tmpl) < 0 || build_types(a, g, &none, false, cg) < 0)
		return -1;
	return set_members(a, g, cg);
}

int cloudgroups_build(struct arena *a, const struct node_group *cfg,
		      const struct config_group_extra *extra, size_t n_cfg,
		      const struct provider_group *cloud, size_t n_cloud, int64_t now,
		      const struct logger *log, struct node_group **out, size_t *n_out,
		      struct errbuf *err)
{
	struct node_group *gs = arena_calloc(a, n_cfg + n_cloud + 1, sizeof(*gs));
	size_t i, n = 0;

	*out = NULL;
	*n_out = 0;
	if (!gs)
		goto oom;
	for (i = 0; i < n_cfg; i++) {
		const struct config_group_extra *e = extra ? &extra[i] : NULL;
		const struct provider_group *cg = find_cloud(cloud, n_cloud, cfg[i].name);
		struct node_group *g = &gs[n++];

		*g = cfg[i];
		if (cg) {
			if (complete(a, g, e, cg, log, now) < 0)
				goto oom;
		} else if (e && !e->max_set) {
			/* a size only the cloud knows, and it did not say */
			g->min = 0;
			g->max = 0;
			if (g->backoff_until < now + UNKNOWN_SIZE_RETRY_S) {
				g->backoff_until = now + UNKNOWN_SIZE_RETRY_S;
				snprintf(g->backoff_reason, sizeof(g->backoff_reason),
					 "%s", cloud ? "the cloud does not report this group"
						     : "the cloud's size of the group is unknown this round");
			}
		}
	}
	for (i = 0; i < n_cloud; i++) {
		size_t k;

		for (k = 0; k < n_cfg && strcmp(cfg[k].name, cloud[i].name); k++)
			;
		if (k < n_cfg)
			continue;
		if (discovered(a, &gs[n++], &cloud[i]) < 0)
			goto oom;
	}
	*out = gs;
	*n_out = n;
	return 0;
oom:
	errbuf_set(err, "node groups: out of memory");
	return -1;
}
