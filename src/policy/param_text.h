/*
 * param_text: the params a loaded policy runs with, as text for people
 * (the simulation's report and table): each key, its value and the
 * policy's own default. It reads the tables with raw access only and runs
 * no policy code; merging the params is policy/host's.
 */
#ifndef LUASCALE_PARAM_TEXT_H
#define LUASCALE_PARAM_TEXT_H

#include <stddef.h>
#include <sys/types.h>

#include "policy/host.h"

#define PARAM_TEXT_MAX 256 /* bytes of one value's text at most, "..." included */

struct param_text {
	char *key;
	char *value; /* what reconcile() gets */
	char *dflt;  /* the policy's own default, or NULL when it declares none for the key */
};

/*
 * The params of policy 'p', sorted by key: every string key of the table
 * reconcile() gets. Values are written as strings as they are, numbers
 * (integers without a point), booleans, and tables as {a, b} (a list) or
 * {k = v, ...} sorted by key, 4 levels deep at most; control characters
 * become '?'; a text longer than PARAM_TEXT_MAX - 1 bytes is cut with
 * "...". Fills '*out' (the array and its strings are the caller's:
 * param_text_free) and returns how many, or -1 when out of memory.
 */
ssize_t param_text_list(struct policy *p, struct param_text **out);

/* Frees the 'n' entries of 'v' and 'v'. */
void param_text_free(struct param_text *v, size_t n);

#endif
