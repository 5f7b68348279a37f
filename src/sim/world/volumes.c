/*
 * sim/volumes: claims, the volumes bound to them and their classes, in one
 * arena that lives as long as the simulated cluster (snapshots borrow from
 * it). A volume's node affinity is one term, "<zone key> In (<zone>)" —
 * what a zonal CSI driver writes on the volumes it provisions.
 */
#include "sim/world/volumes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

#define HOSTNAME_LABEL "kubernetes.io/hostname"

struct svclaim {
	const char *ns;
	const char *name;
	const char *storage_class;
	const char *zone_key;       /* where a volume made for it is: this label's value */
	const char **list;          /* { name } */
	const char *pv;             /* its volume, NULL while unbound */
	struct node_affinity *aff;  /* the volume's node affinity, NULL while unbound */
};

struct sim_volumes {
	struct arena *arena;
	struct svclaim **claims;
	size_t n, cap;
};

struct sim_volumes *sim_volumes_new(void)
{
	struct sim_volumes *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	v->arena = arena_new();
	if (!v->arena) {
		free(v);
		return NULL;
	}
	return v;
}

void sim_volumes_free(struct sim_volumes *v)
{
	if (!v)
		return;
	arena_free(v->arena);
	free(v->claims);
	free(v);
}

/* Binds 'c' to a new volume whose node affinity is "key In (value)". */
static int bind_to(struct sim_volumes *v, struct svclaim *c, const char *key, const char *value)
{
	struct node_affinity *aff = arena_calloc(v->arena, 1, sizeof(*aff));
	struct node_selector_term *term = arena_calloc(v->arena, 1, sizeof(*term));
	struct selector_req *req = arena_calloc(v->arena, 1, sizeof(*req));
	const char **values = arena_calloc(v->arena, 1, sizeof(*values));
	char name[320];

	snprintf(name, sizeof(name), "pv-%s-%s", c->ns, c->name);
	if (!aff || !term || !req || !values)
		return -1;
	req->key = arena_strdup(v->arena, key);
	values[0] = arena_strdup(v->arena, value);
	c->pv = arena_strdup(v->arena, name);
	if (!req->key || !values[0] || !c->pv)
		return -1;
	req->op = SELECTOR_IN;
	req->values = values;
	req->n_values = 1;
	term->exprs = req;
	term->n_exprs = 1;
	aff->terms = term;
	aff->n_terms = 1;
	c->aff = aff;
	return 0;
}

long sim_volumes_claim(struct sim_volumes *v, const char *ns, const char *pod,
		       const struct sim_volume *vol, long ordinal)
{
	struct svclaim *c;
	char name[320];
	size_t i;

	snprintf(name, sizeof(name), "%s-%s", vol->claim, pod);
	for (i = 0; i < v->n; i++)
		if (strcmp(v->claims[i]->name, name) == 0 && strcmp(v->claims[i]->ns, ns) == 0)
			return (long)i;
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 16;
		struct svclaim **nc = realloc(v->claims, cap * sizeof(*nc));

		if (!nc)
			return -1;
		v->claims = nc;
		v->cap = cap;
	}
	c = arena_calloc(v->arena, 1, sizeof(*c));
	if (!c)
		return -1;
	c->ns = arena_strdup(v->arena, ns);
	c->name = arena_strdup(v->arena, name);
	c->storage_class = arena_strdup(v->arena, vol->storage_class);
	c->zone_key = arena_strdup(v->arena, vol->zone_key);
	c->list = arena_calloc(v->arena, 1, sizeof(*c->list));
	if (!c->ns || !c->name || !c->storage_class || !c->zone_key || !c->list)
		return -1;
	c->list[0] = c->name;
	if (vol->n_zones && ordinal >= 1 &&
	    bind_to(v, c, vol->zone_key, vol->zones[(size_t)(ordinal - 1) % vol->n_zones]) < 0)
		return -1;
	v->claims[v->n] = c;
	return (long)v->n++;
}

const char **sim_volumes_claim_list(const struct sim_volumes *v, long claim)
{
	return v->claims[claim]->list;
}

struct node_affinity *sim_volumes_affinity(const struct sim_volumes *v, long claim)
{
	return v->claims[claim]->aff;
}

int sim_volumes_bind(struct sim_volumes *v, long claim, const char *node,
		     const struct kvlist *labels)
{
	struct svclaim *c = v->claims[claim];
	const char *zone;

	if (c->aff)
		return 0;
	zone = kvlist_get(labels, c->zone_key);
	if (!zone)
		return bind_to(v, c, HOSTNAME_LABEL, node);
	return bind_to(v, c, c->zone_key, zone);
}

size_t sim_volumes_count(const struct sim_volumes *v)
{
	return v->n;
}

void sim_volumes_view(const struct sim_volumes *v, size_t i, struct sim_claim_view *out)
{
	const struct svclaim *c = v->claims[i];

	out->ns = c->ns;
	out->name = c->name;
	out->storage_class = c->storage_class;
	out->pv = c->pv;
	/* bind_to() makes one term of one requirement with one value */
	out->place_key = c->aff ? c->aff->terms[0].exprs[0].key : NULL;
	out->place = c->aff ? c->aff->terms[0].exprs[0].values[0] : NULL;
}

int sim_volumes_snapshot(const struct sim_volumes *v, struct snapshot *s, struct errbuf *err)
{
	const char **classes = NULL;
	size_t n_classes = 0, i, j;
	int rc = -1;

	s->volumes_known = true;
	if (!v->n)
		return 0;
	classes = calloc(v->n, sizeof(*classes));
	if (!classes)
		return errbuf_set(err, "out of memory");
	for (i = 0; i < v->n; i++) {
		const struct svclaim *c = v->claims[i];
		struct pvc pvc = {c->ns, c->name, c->pv ? c->pv : "", c->storage_class};

		if (snapshot_add_pvc(s, &pvc, err) < 0)
			goto out;
		if (c->pv) {
			struct pv pv;

			memset(&pv, 0, sizeof(pv));
			pv.name = c->pv;
			pv.node_affinity = *c->aff;
			if (snapshot_add_pv(s, &pv, err) < 0)
				goto out;
		}
		for (j = 0; j < n_classes; j++)
			if (strcmp(classes[j], c->storage_class) == 0)
				break;
		if (j == n_classes) {
			struct storage_class sc;

			memset(&sc, 0, sizeof(sc));
			sc.name = c->storage_class;
			sc.wait_for_first_consumer = true;
			if (snapshot_add_storage_class(s, &sc, err) < 0)
				goto out;
			classes[n_classes++] = c->storage_class;
		}
	}
	rc = 0;
out:
	free(classes);
	return rc;
}
