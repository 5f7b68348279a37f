/*
 * groupcache: the provider's table of groups, node groups' last good
 * views settled listing by listing (over providers/lastgood), and the
 * index of the instances last listed, sorted by id. Reads no cloud.
 */
#include "providers/cloudhttp/groupcache.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "providers/lastgood.h"
#include "runtime/clock.h"

struct seen {
	char id[128];
	char group[64];
	char provider_id[256];
	int64_t launched_wall;
};

struct groupcache {
	struct groupcache_opts o;
	struct provider_lastgood *lastgood;
	pthread_mutex_t mu;     /* seen, groups */
	struct seen *seen;      /* sorted by id */
	size_t n_seen;
	unsigned char *groups;  /* n_groups records of o.group_size */
	size_t n_groups;
};

struct groupcache *groupcache_new(const struct groupcache_opts *o)
{
	struct groupcache *gc = calloc(1, sizeof(*gc));

	if (!gc)
		return NULL;
	gc->o = *o;
	gc->lastgood = provider_lastgood_new();
	if (!gc->lastgood) {
		free(gc);
		return NULL;
	}
	pthread_mutex_init(&gc->mu, NULL);
	return gc;
}

void groupcache_free(struct groupcache *gc)
{
	if (!gc)
		return;
	provider_lastgood_free(gc->lastgood);
	pthread_mutex_destroy(&gc->mu);
	free(gc->seen);
	free(gc->groups);
	free(gc);
}

/* Frees what *pg holds and zeroes it. */
static void group_clear(struct provider_group *pg)
{
	provider_template_clear(&pg->tmpl);
	free(pg->instances);
	memset(pg, 0, sizeof(*pg));
}

void groupcache_keep(struct groupcache *gc, const struct provider_group *pg, int64_t wall)
{
	if (provider_lastgood_keep(gc->lastgood, pg, wall) == 1)
		log_at(gc->o.log, LOG_INFO, wall, "%s: node group %s: its %s is read well again", gc->o.cloud, pg->name,
		       gc->o.backing);
}

int groupcache_recall(struct groupcache *gc, const char *name, const char *why, struct provider_group *out,
		      bool *changed)
{
	return provider_lastgood_recall(gc->lastgood, name, why, out, changed);
}

void groupcache_groups_take(struct groupcache *gc, void *groups, size_t n)
{
	pthread_mutex_lock(&gc->mu);
	free(gc->groups);
	gc->groups = groups;
	gc->n_groups = n;
	pthread_mutex_unlock(&gc->mu);
}

void *groupcache_groups_copy(struct groupcache *gc, size_t first, size_t extra)
{
	unsigned char *v;

	pthread_mutex_lock(&gc->mu);
	if (first > gc->n_groups)
		first = gc->n_groups;
	v = calloc(first + extra + 1, gc->o.group_size);
	if (v && first)
		memcpy(v, gc->groups, first * gc->o.group_size);
	pthread_mutex_unlock(&gc->mu);
	return v;
}

int groupcache_group(struct groupcache *gc, bool (*match)(const void *group, const void *ctx), const void *ctx,
		     void *out)
{
	size_t i;
	int rc = -1;

	pthread_mutex_lock(&gc->mu);
	for (i = 0; i < gc->n_groups && rc < 0; i++) {
		const unsigned char *g = gc->groups + i * gc->o.group_size;

		if (match ? match(g, ctx) : !strcmp((const char *)g + gc->o.group_name_at, ctx)) {
			memcpy(out, g, gc->o.group_size);
			rc = 0;
		}
	}
	pthread_mutex_unlock(&gc->mu);
	return rc;
}

enum groupcache_verdict groupcache_settle(struct groupcache *gc, const char *name, int rc, struct provider_group *pg,
					  struct provider_status *st)
{
	int64_t wall = clock_wall(gc->o.clock);

	if (rc == 0) {
		groupcache_keep(gc, pg, wall);
		return GROUPCACHE_LISTED;
	}
	if (rc == GROUPCACHE_MALFORMED) {
		bool changed;
		int kept;

		group_clear(pg);
		kept = provider_lastgood_recall(gc->lastgood, name, st->message, pg, &changed);
		if (changed && kept == 0)
			log_at(gc->o.log, LOG_WARN, wall,
			       "%s: node group %s is skipped: %s; it keeps the last view read well, marked stale, "
			       "until the %s reads well again", gc->o.cloud, name, st->message, gc->o.backing);
		else if (changed)
			log_at(gc->o.log, LOG_WARN, wall,
			       "%s: node group %s is skipped: %s; no earlier view of it: it is not listed until the %s "
			       "reads well", gc->o.cloud, name, st->message, gc->o.backing);
		memset(st, 0, sizeof(*st));
		return kept == 0 ? GROUPCACHE_LISTED : GROUPCACHE_SKIPPED;
	}
	if (st->code == PROVIDER_NOT_FOUND) {
		log_at(gc->o.log, LOG_WARN, wall, "%s: node group %s: %s", gc->o.cloud, name, st->message);
		group_clear(pg);
		memset(st, 0, sizeof(*st));
		return GROUPCACHE_SKIPPED;
	}
	return GROUPCACHE_FAILED;
}

int groupcache_add(struct groupcache *gc, const char *name, int rc, struct provider_group *out, size_t *k,
		   struct provider_status *st)
{
	enum groupcache_verdict v = groupcache_settle(gc, name, rc, &out[*k], st);

	if (v == GROUPCACHE_FAILED)
		provider_groups_free(out, *k + 1);
	else if (v == GROUPCACHE_LISTED)
		(*k)++;
	return v == GROUPCACHE_FAILED ? -1 : 0;
}

static int cmp_seen(const void *a, const void *b)
{
	return strcmp(((const struct seen *)a)->id, ((const struct seen *)b)->id);
}

void groupcache_keep_instances(struct groupcache *gc, const struct provider_group *groups, size_t n)
{
	struct seen *next;
	size_t i, j, k = 0, total = 0;

	for (i = 0; i < n; i++)
		total += groups[i].n_instances;
	next = calloc(total + 1, sizeof(*next));
	if (!next)
		return;
	for (i = 0; i < n; i++)
		for (j = 0; j < groups[i].n_instances; j++, k++) {
			snprintf(next[k].id, sizeof(next[k].id), "%s", groups[i].instances[j].id);
			snprintf(next[k].group, sizeof(next[k].group), "%s", groups[i].name);
			snprintf(next[k].provider_id, sizeof(next[k].provider_id), "%s",
				 groups[i].instances[j].provider_id);
			next[k].launched_wall = groups[i].instances[j].launched_wall;
		}
	qsort(next, k, sizeof(*next), cmp_seen);
	pthread_mutex_lock(&gc->mu);
	free(gc->seen);
	gc->seen = next;
	gc->n_seen = k;
	pthread_mutex_unlock(&gc->mu);
}

int groupcache_instance(struct groupcache *gc, const char *id, char *group, size_t group_len,
			char *provider_id, size_t pid_len, int64_t *launched_wall)
{
	struct seen key, *hit;
	int rc = -1;

	snprintf(key.id, sizeof(key.id), "%s", id);
	pthread_mutex_lock(&gc->mu);
	hit = gc->n_seen ? bsearch(&key, gc->seen, gc->n_seen, sizeof(*hit), cmp_seen) : NULL;
	if (hit) {
		if (group)
			snprintf(group, group_len, "%s", hit->group);
		if (provider_id)
			snprintf(provider_id, pid_len, "%s", hit->provider_id);
		if (launched_wall)
			*launched_wall = hit->launched_wall;
		rc = 0;
	}
	pthread_mutex_unlock(&gc->mu);
	return rc;
}

void groupcache_report(provider_instance_cb on_instance, void *ctx, const char *id, const char *group,
		       const char *provider_id, enum instance_state state)
{
	struct provider_instance pi;

	if (!on_instance)
		return;
	memset(&pi, 0, sizeof(pi));
	snprintf(pi.id, sizeof(pi.id), "%s", id);
	snprintf(pi.group, sizeof(pi.group), "%s", group);
	if (provider_id)
		snprintf(pi.provider_id, sizeof(pi.provider_id), "%s", provider_id);
	pi.state = state;
	on_instance(ctx, &pi);
}
