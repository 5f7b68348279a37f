/*
 * intern: an open-addressing set of arena strings keyed by content
 * (FNV-1a hash, linear probing, grown at half full).
 */
#include "intern.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

void intern_init(struct intern *t, struct arena *a)
{
	memset(t, 0, sizeof(*t));
	t->arena = a;
}

void intern_free(struct intern *t)
{
	free(t->slots);
	t->slots = NULL;
	t->cap = t->n = 0;
}

static uint64_t hash(const char *s, size_t len)
{
	uint64_t h = 14695981039346656037ULL;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	return h;
}

static int grow(struct intern *t)
{
	size_t cap = t->cap ? t->cap * 2 : 256;
	const char **slots = calloc(cap, sizeof(*slots));
	size_t i;

	if (!slots)
		return -1;
	for (i = 0; i < t->cap; i++) {
		const char *s = t->slots[i];
		size_t j;

		if (!s)
			continue;
		for (j = hash(s, strlen(s)) & (cap - 1); slots[j]; j = (j + 1) & (cap - 1))
			;
		slots[j] = s;
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

const char *intern_strn(struct intern *t, const char *s, size_t len)
{
	const char *copy;
	size_t j;

	if ((t->n + 1) * 2 > t->cap && grow(t) < 0)
		return NULL;
	for (j = hash(s, len) & (t->cap - 1); t->slots[j]; j = (j + 1) & (t->cap - 1)) {
		const char *c = t->slots[j];

		if (strncmp(c, s, len) == 0 && c[len] == '\0')
			return c;
	}
	copy = arena_strndup(t->arena, s, len);
	if (!copy)
		return NULL;
	t->slots[j] = copy;
	t->n++;
	return copy;
}
