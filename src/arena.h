/*
 * arena: bump allocator for objects that live and die together (a snapshot's
 * nodes, pods and strings). Owns its blocks; individual frees do not exist.
 */
#ifndef LUASCALE_ARENA_H
#define LUASCALE_ARENA_H

#include <stddef.h>

struct arena;

/* Returns a new empty arena, or NULL when out of memory. */
struct arena *arena_new(void);

/* Frees every block of the arena and the arena itself. NULL is a no-op. */
void arena_free(struct arena *a);

/* Returns 'size' bytes aligned for any type, zeroed; NULL when out of memory. */
void *arena_alloc(struct arena *a, size_t size);

/* Returns an array of 'n' zeroed elements of 'size' bytes; NULL on overflow
 * or out of memory. n == 0 returns NULL without error. */
void *arena_calloc(struct arena *a, size_t n, size_t size);

/* Copies a NUL-terminated string into the arena; NULL in gives NULL out. */
char *arena_strdup(struct arena *a, const char *s);

/* Copies 'len' bytes and appends a NUL. */
char *arena_strndup(struct arena *a, const char *s, size_t len);

/* Bytes handed out so far (for benchmarks and metrics). */
size_t arena_used(const struct arena *a);

#endif
