/*
 * sim/reacting: the record behind GET /apis/sim.luascale.io/v1/reacting —
 * a first-seen table of Unschedulable pods (open addressing on ns/name)
 * and the list of launch calls with their nodes, under one mutex.
 */
#include "sim/world/reacting.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

struct rpod {
	char *key;      /* "ns/name" */
	size_t ns_len;
	int64_t at_ns;
};

struct rcall {
	char *group;
	int count;
	int64_t at_ns;
	char **nodes;
	size_t n_nodes;
};

struct sim_reacting {
	pthread_mutex_t mu;
	size_t cap;
	struct rpod *pods;   /* in arrival order */
	size_t n_pods;
	size_t *slots;       /* index + 1 into pods, 0 empty; 2 * cap, a power of two */
	size_t mask;
	struct rcall *calls;
	size_t n_calls;
	uint64_t dropped;
};

struct sim_reacting *sim_reacting_new(size_t cap)
{
	struct sim_reacting *r = calloc(1, sizeof(*r));
	size_t n = 16;

	if (!r)
		return NULL;
	while (n < 2 * cap)
		n *= 2;
	r->cap = cap;
	r->mask = n - 1;
	r->slots = calloc(n, sizeof(*r->slots));
	r->pods = calloc(cap ? cap : 1, sizeof(*r->pods));
	r->calls = calloc(cap ? cap : 1, sizeof(*r->calls));
	if (!r->slots || !r->pods || !r->calls || pthread_mutex_init(&r->mu, NULL) != 0) {
		free(r->slots);
		free(r->pods);
		free(r->calls);
		free(r);
		return NULL;
	}
	return r;
}

void sim_reacting_free(struct sim_reacting *r)
{
	size_t i, j;

	if (!r)
		return;
	for (i = 0; i < r->n_pods; i++)
		free(r->pods[i].key);
	for (i = 0; i < r->n_calls; i++) {
		for (j = 0; j < r->calls[i].n_nodes; j++)
			free(r->calls[i].nodes[j]);
		free(r->calls[i].nodes);
		free(r->calls[i].group);
	}
	free(r->slots);
	free(r->pods);
	free(r->calls);
	pthread_mutex_destroy(&r->mu);
	free(r);
}

static uint64_t hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

void sim_reacting_pod(struct sim_reacting *r, const char *ns, const char *name, int64_t at_ns)
{
	struct buf key = BUF_INIT;
	size_t i;

	buf_printf(&key, "%s/%s", ns, name);
	if (key.oom) {
		buf_free(&key);
		return;
	}
	pthread_mutex_lock(&r->mu);
	for (i = hash(key.data) & r->mask; r->slots[i]; i = (i + 1) & r->mask)
		if (strcmp(r->pods[r->slots[i] - 1].key, key.data) == 0)
			goto out; /* seen already */
	if (r->n_pods == r->cap) {
		r->dropped++;
		goto out;
	}
	r->pods[r->n_pods] = (struct rpod){.key = key.data, .ns_len = strlen(ns), .at_ns = at_ns};
	key = (struct buf)BUF_INIT; /* the record owns it */
	r->slots[i] = ++r->n_pods;
out:
	pthread_mutex_unlock(&r->mu);
	buf_free(&key);
}

long sim_reacting_launch(struct sim_reacting *r, const char *group, int count, int64_t at_ns)
{
	long idx = -1;
	char *g = strdup(group);

	pthread_mutex_lock(&r->mu);
	if (!g || r->n_calls == r->cap) {
		r->dropped++;
	} else {
		r->calls[r->n_calls] = (struct rcall){.group = g, .count = count, .at_ns = at_ns};
		g = NULL;
		idx = (long)r->n_calls++;
	}
	pthread_mutex_unlock(&r->mu);
	free(g);
	return idx;
}

void sim_reacting_node(struct sim_reacting *r, long call, const char *node)
{
	struct rcall *c;
	char **grown, *n;

	if (call < 0)
		return;
	n = strdup(node);
	pthread_mutex_lock(&r->mu);
	c = (size_t)call < r->n_calls ? &r->calls[call] : NULL;
	grown = c && n ? realloc(c->nodes, (c->n_nodes + 1) * sizeof(*c->nodes)) : NULL;
	if (grown) {
		c->nodes = grown;
		c->nodes[c->n_nodes++] = n;
		n = NULL;
	} else {
		r->dropped++;
	}
	pthread_mutex_unlock(&r->mu);
	free(n);
}

void sim_reacting_json(struct sim_reacting *r, int64_t now_ns, struct buf *out)
{
	size_t i, j;

	pthread_mutex_lock(&r->mu);
	buf_printf(out, "{\"nowNs\":%lld,\"pods\":[", (long long)now_ns);
	for (i = 0; i < r->n_pods; i++) {
		const struct rpod *p = &r->pods[i];
		char *ns = p->key;

		ns[p->ns_len] = '\0'; /* split "ns/name" for a moment */
		buf_puts(out, i ? ",{\"namespace\":" : "{\"namespace\":");
		buf_json_string(out, ns);
		buf_puts(out, ",\"name\":");
		buf_json_string(out, ns + p->ns_len + 1);
		ns[p->ns_len] = '/';
		buf_printf(out, ",\"unschedulableNs\":%lld}", (long long)p->at_ns);
	}
	buf_puts(out, "],\"launches\":[");
	for (i = 0; i < r->n_calls; i++) {
		const struct rcall *c = &r->calls[i];

		buf_puts(out, i ? ",{\"group\":" : "{\"group\":");
		buf_json_string(out, c->group);
		buf_printf(out, ",\"count\":%d,\"arrivedNs\":%lld,\"nodes\":[", c->count,
			   (long long)c->at_ns);
		for (j = 0; j < c->n_nodes; j++) {
			if (j)
				buf_puts(out, ",");
			buf_json_string(out, c->nodes[j]);
		}
		buf_puts(out, "]}");
	}
	buf_printf(out, "],\"dropped\":%llu}", (unsigned long long)r->dropped);
	pthread_mutex_unlock(&r->mu);
}
