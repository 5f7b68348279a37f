/*
 * memo: what a provider described once and keeps for later rounds — an
 * instance type's size, a launch template version, an instance
 * template's machine type, a group's pricing facts — one value of a fixed
 * size under a string key. Thread-safe. Values are copied in and out
 * (through the table's copy function when they own memory), so a caller
 * never holds a pointer into the table. Entries live as long as the
 * table: a cloud has tens of each, not thousands.
 */
#ifndef LUASCALE_MEMO_H
#define LUASCALE_MEMO_H

#include <stdbool.h>
#include <stddef.h>

struct memo_opts {
	size_t value_size;
	/* Copies a value that owns memory ('dst' zeroed first): 0, or -1 out
	 * of memory (what was copied is released). NULL: the bytes. */
	int (*copy)(void *dst, const void *src);
	/* Frees what a value owns. NULL: nothing. */
	void (*release)(void *value);
};

struct memo;

/* An empty table; NULL when out of memory or value_size is 0. */
struct memo *memo_new(const struct memo_opts *o);

/* Copies the value kept under 'key' into 'out'. true when there is one
 * (and its copy succeeded); 'out' is untouched when there is none, zeroed
 * when the copy failed. */
bool memo_get(struct memo *m, const char *key, void *out);

/* Keeps a copy of 'value' under 'key', replacing what was there. 0, or -1
 * out of memory (the table is as it was). */
int memo_put(struct memo *m, const char *key, const void *value);

/* Frees the table and what its values own. NULL is a no-op. */
void memo_free(struct memo *m);

#endif
