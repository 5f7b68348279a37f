/*
 * memo: a provider's table of what it described once (see memo.h). A
 * linear table: lookups compare keys one by one, which at tens of entries
 * costs less than hashing would save.
 */
#include "providers/cloudhttp/memo.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct memo_entry {
	char *key;
	void *value;
};

struct memo {
	struct memo_opts o;
	pthread_mutex_t mu;
	struct memo_entry *v;
	size_t n;
};

struct memo *memo_new(const struct memo_opts *o)
{
	struct memo *m;

	if (!o->value_size || !(m = calloc(1, sizeof(*m))))
		return NULL;
	m->o = *o;
	pthread_mutex_init(&m->mu, NULL);
	return m;
}

static struct memo_entry *find(struct memo *m, const char *key)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (!strcmp(m->v[i].key, key))
			return &m->v[i];
	return NULL;
}

/* A copy of 'src' into 'dst' (value_size bytes, zeroed first). */
static int copy(const struct memo *m, void *dst, const void *src)
{
	memset(dst, 0, m->o.value_size);
	if (!m->o.copy) {
		memcpy(dst, src, m->o.value_size);
		return 0;
	}
	return m->o.copy(dst, src);
}

static void release(const struct memo *m, void *value)
{
	if (m->o.release)
		m->o.release(value);
	free(value);
}

bool memo_get(struct memo *m, const char *key, void *out)
{
	struct memo_entry *e;
	bool found;

	pthread_mutex_lock(&m->mu);
	e = find(m, key);
	found = e && copy(m, out, e->value) == 0;
	pthread_mutex_unlock(&m->mu);
	return found;
}

int memo_put(struct memo *m, const char *key, const void *value)
{
	void *v = malloc(m->o.value_size);
	struct memo_entry *e, *nv;
	char *k = NULL;

	if (!v || copy(m, v, value) < 0) {
		free(v);
		return -1;
	}
	pthread_mutex_lock(&m->mu);
	if ((e = find(m, key))) {
		release(m, e->value);
		e->value = v;
		pthread_mutex_unlock(&m->mu);
		return 0;
	}
	if (!(k = strdup(key)) || !(nv = realloc(m->v, (m->n + 1) * sizeof(*nv)))) {
		pthread_mutex_unlock(&m->mu);
		free(k);
		release(m, v);
		return -1;
	}
	m->v = nv;
	m->v[m->n].key = k;
	m->v[m->n++].value = v;
	pthread_mutex_unlock(&m->mu);
	return 0;
}

void memo_free(struct memo *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->n; i++) {
		free(m->v[i].key);
		release(m, m->v[i].value);
	}
	free(m->v);
	pthread_mutex_destroy(&m->mu);
	free(m);
}
