/*
 * lastgood: each node group's last good view, and why it was last skipped
 * (see lastgood.h). A short list searched by name: a provider has tens of
 * groups, not thousands.
 */
#include "providers/lastgood.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct kept {
	struct kept *next;
	char name[64];
	struct provider_group g; /* deep copy; n_instances 0 and no lists until kept once */
	bool have;
	int64_t wall;
	char *why;               /* the last reason it was skipped; NULL while fine */
};

struct provider_lastgood {
	pthread_mutex_t mu;
	struct kept *list;
};

struct provider_lastgood *provider_lastgood_new(void)
{
	struct provider_lastgood *k = calloc(1, sizeof(*k));

	if (k)
		pthread_mutex_init(&k->mu, NULL);
	return k;
}

static void group_clear(struct provider_group *g)
{
	size_t i;

	provider_template_clear(&g->tmpl);
	for (i = 0; i < g->n_types; i++)
		provider_template_clear(&g->types[i]);
	free(g->types);
	free(g->instances);
	memset(g, 0, sizeof(*g));
}

void provider_lastgood_free(struct provider_lastgood *k)
{
	struct kept *e, *next;

	if (!k)
		return;
	for (e = k->list; e; e = next) {
		next = e->next;
		group_clear(&e->g);
		free(e->why);
		free(e);
	}
	pthread_mutex_destroy(&k->mu);
	free(k);
}

/* A deep copy of 'src' into 'dst' (zeroed on failure). 0, or -1 out of memory. */
static int group_copy(struct provider_group *dst, const struct provider_group *src)
{
	size_t i;

	*dst = *src;
	dst->instances = NULL;
	dst->n_instances = 0;
	dst->types = NULL;
	dst->n_types = 0;
	memset(&dst->tmpl, 0, sizeof(dst->tmpl));
	if (provider_template_copy(&dst->tmpl, &src->tmpl) < 0)
		goto oom;
	if (src->n_instances) {
		dst->instances = malloc(src->n_instances * sizeof(*dst->instances));
		if (!dst->instances)
			goto oom;
		memcpy(dst->instances, src->instances, src->n_instances * sizeof(*dst->instances));
		dst->n_instances = src->n_instances;
	}
	if (src->n_types) {
		dst->types = calloc(src->n_types, sizeof(*dst->types));
		if (!dst->types)
			goto oom;
		for (i = 0; i < src->n_types; i++, dst->n_types++)
			if (provider_template_copy(&dst->types[i], &src->types[i]) < 0) {
				provider_template_clear(&dst->types[i]);
				goto oom;
			}
	}
	return 0;
oom:
	group_clear(dst);
	return -1;
}

/* The entry of 'name', made when 'make'; NULL when none (or out of memory). Under mu. */
static struct kept *find(struct provider_lastgood *k, const char *name, bool make)
{
	struct kept *e;

	for (e = k->list; e; e = e->next)
		if (!strcmp(e->name, name))
			return e;
	if (!make || strlen(name) >= sizeof(e->name) || !(e = calloc(1, sizeof(*e))))
		return NULL;
	memcpy(e->name, name, strlen(name) + 1);
	e->next = k->list;
	k->list = e;
	return e;
}

int provider_lastgood_keep(struct provider_lastgood *k, const struct provider_group *g, int64_t wall)
{
	struct provider_group copy;
	struct kept *e;
	int rc;

	if (group_copy(&copy, g) < 0)
		return -1;
	copy.stale_since = 0;
	pthread_mutex_lock(&k->mu);
	e = find(k, g->name, true);
	if (!e) {
		pthread_mutex_unlock(&k->mu);
		group_clear(&copy);
		return -1;
	}
	group_clear(&e->g);
	e->g = copy;
	e->have = true;
	e->wall = wall;
	rc = e->why != NULL;
	free(e->why);
	e->why = NULL;
	pthread_mutex_unlock(&k->mu);
	return rc;
}

int provider_lastgood_recall(struct provider_lastgood *k, const char *name, const char *why,
			     struct provider_group *out, bool *changed)
{
	struct kept *e;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	*changed = true;
	pthread_mutex_lock(&k->mu);
	e = find(k, name, true);
	if (e) {
		*changed = !e->why || strcmp(e->why, why);
		if (*changed) {
			char *w = strdup(why);

			if (w) {
				free(e->why);
				e->why = w;
			}
		}
		if (e->have && group_copy(out, &e->g) == 0) {
			out->stale_since = e->wall > 0 ? e->wall : 1;
			rc = 0;
		}
	}
	pthread_mutex_unlock(&k->mu);
	return rc;
}
