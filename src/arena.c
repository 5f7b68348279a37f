/*
 * arena: a linked list of large blocks; allocations bump a pointer. Blocks
 * are only released all together by arena_free().
 */
#include "arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_BLOCK (256 * 1024)
#define ARENA_ALIGN 16

struct block {
	struct block *next;
	size_t size;
	size_t used;
	unsigned char data[];
};

struct arena {
	struct block *head;
	size_t total;
};

struct arena *arena_new(void)
{
	return calloc(1, sizeof(struct arena));
}

void arena_free(struct arena *a)
{
	struct block *b, *next;

	if (!a)
		return;
	for (b = a->head; b; b = next) {
		next = b->next;
		free(b);
	}
	free(a);
}

void *arena_alloc(struct arena *a, size_t size)
{
	struct block *b = a->head;
	size_t off;

	if (size == 0)
		size = 1;
	if (size > SIZE_MAX - ARENA_ALIGN - sizeof(struct block))
		return NULL;
	if (b) {
		off = (b->used + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
		if (off <= b->size && size <= b->size - off) {
			b->used = off + size;
			a->total += size;
			memset(b->data + off, 0, size);
			return b->data + off;
		}
	}
	{
		size_t bsize = size > ARENA_BLOCK / 4 ? size : ARENA_BLOCK;
		struct block *nb = malloc(sizeof(struct block) + bsize);

		if (!nb)
			return NULL;
		nb->size = bsize;
		if (size > ARENA_BLOCK / 4 && b) {
			/* a big allocation gets its own block behind the current one,
			 * so the current block keeps serving small ones */
			nb->next = b->next;
			b->next = nb;
		} else {
			nb->next = b;
			a->head = nb;
		}
		nb->used = size;
		a->total += size;
		memset(nb->data, 0, size);
		return nb->data;
	}
}

void *arena_calloc(struct arena *a, size_t n, size_t size)
{
	if (n == 0)
		return NULL;
	if (size && n > SIZE_MAX / size)
		return NULL;
	return arena_alloc(a, n * size);
}

char *arena_strndup(struct arena *a, const char *s, size_t len)
{
	char *d;

	if (!s)
		return NULL;
	d = arena_alloc(a, len + 1);
	if (!d)
		return NULL;
	memcpy(d, s, len);
	d[len] = '\0';
	return d;
}

char *arena_strdup(struct arena *a, const char *s)
{
	return s ? arena_strndup(a, s, strlen(s)) : NULL;
}

size_t arena_used(const struct arena *a)
{
	return a->total;
}
