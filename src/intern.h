/*
 * intern: string interning into an arena, so the thousands of repeated
 * label keys, values, namespaces and node names of a large cluster are
 * stored once. Owns its hash table; the strings belong to the arena.
 */
#ifndef LUASCALE_INTERN_H
#define LUASCALE_INTERN_H

#include <stddef.h>

struct arena;

struct intern {
	struct arena *arena; /* borrowed: where strings are stored */
	const char **slots;  /* open addressing, NULL = empty */
	size_t cap;          /* power of two, 0 before the first insert */
	size_t n;
};

/* Sets up an empty table that stores its strings in 'a'. */
void intern_init(struct intern *t, struct arena *a);

/* Frees the table (not the strings, which live in the arena). */
void intern_free(struct intern *t);

/*
 * Returns the arena copy of 's' (its first 'len' bytes, NUL-terminated),
 * the same pointer for equal strings. NULL when out of memory.
 */
const char *intern_strn(struct intern *t, const char *s, size_t len);

#endif
