/*
 * ytree: one YAML document read with libyaml into a small tree whose nodes
 * remember their line:column, plus the YAML 1.2 core-schema typing of plain
 * scalars. It knows no schema: what the keys mean is the caller's business
 * (config.c, later the kubeconfig reader). Named ytree, not yaml, so that
 * <yaml.h> keeps meaning libyaml's header.
 */
#ifndef LUASCALE_YTREE_H
#define LUASCALE_YTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"

struct arena;

#define YTREE_MAX_DEPTH 64 /* nesting of collections a document may have */

enum ytree_kind { YTREE_SCALAR, YTREE_SEQ, YTREE_MAP };

/*
 * A node. Mapping values are the mapping's children and carry their key
 * (a scalar node) in 'key'; a sequence's items have key NULL. Children are
 * linked first..last through 'next', in document order.
 */
struct ytree_node {
	enum ytree_kind kind;
	int line, col;                 /* 1-based, of the node's first character */
	const char *text;              /* scalars: the value, NUL-terminated */
	bool plain;                    /* plain style and no !!str tag: typed by the core schema */
	const struct ytree_node *key;  /* mapping values: their key */
	struct ytree_node *first, *last, *next;
	size_t n;                      /* number of children */
	size_t order;                  /* position in the document, counting every node */
};

/*
 * Parses 'len' bytes of 'text' (one YAML document; no anchors, aliases or
 * tags other than !!str; no duplicate keys; mapping keys are scalars) into
 * nodes allocated in 'a'. 'source' names the text in messages and is
 * not kept. *root is set to the document's root,
 * or NULL for an empty stream; the nodes live as long as 'a'.
 * Returns 0, or -1 with "source:line:col: message" (or, when the error is
 * inside a collection, "source:line:col: path: message", the path written
 * as by ytree_path_push_key/_index) in 'err'.
 */
int ytree_parse(const char *text, size_t len, const char *source,
		struct arena *a, struct ytree_node **root, struct errbuf *err);

/* Is 'n' a plain scalar that the core schema reads as null ("", ~, null)?
 * NULL is not. */
bool ytree_is_null(const struct ytree_node *n);

/* The value of 'key' in mapping 'm' as written (null values included), or
 * NULL when 'm' is NULL, not a mapping, or has no such key. Borrowed. */
const struct ytree_node *ytree_map_find(const struct ytree_node *m, const char *key);

/* ---- where in the document: "node_groups[1].template.cpu" ---- */

struct ytree_path {
	char s[256]; /* NUL-terminated; cut short (never overflowed) when deep */
	size_t len;
};

/* Appends mapping key 'key' to 'p' (".key", or "[\"key\"]" when the key is
 * not a plain word of letters, digits, '_' and '-'). Returns the length to
 * hand to ytree_path_pop(). */
size_t ytree_path_push_key(struct ytree_path *p, const char *key);

/* Appends "[i]" to 'p'. Returns the length to hand to ytree_path_pop(). */
size_t ytree_path_push_index(struct ytree_path *p, size_t i);

/* Cuts 'p' back to length 'old' (a value a push returned). */
void ytree_path_pop(struct ytree_path *p, size_t old);

/* ---- plain scalars: the YAML 1.2 core schema ---- */

enum ytree_type { YTREE_NULL, YTREE_BOOL, YTREE_INT, YTREE_FLOAT, YTREE_STRING };

/* Is 's' a core-schema null: "", "~", "null", "Null" or "NULL"? */
bool ytree_null_text(const char *s);

/* Core-schema boolean (true/True/TRUE, false/False/FALSE). Returns 0 with
 * *out set, or -1 (and *out untouched) when 's' is not one. */
int ytree_bool_text(const char *s, bool *out);

/* Core-schema integer: [-+]?[0-9]+, 0o[0-7]+ or 0x[0-9a-fA-F]+. Returns 0
 * with *out set, -1 when 's' is not an integer, -2 when it is one but does
 * not fit in int64_t. */
int ytree_int_text(const char *s, int64_t *out);

/* Core-schema float: [-+]?(.[0-9]+|[0-9]+(.[0-9]*)?)([eE][-+]?[0-9]+)?,
 * [-+]?.inf and .nan (each in three spellings). Integers are floats too.
 * Returns 0 with *out set, or -1. */
int ytree_float_text(const char *s, double *out);

/*
 * The type of plain scalar 's', tried in order null, bool, int, float; the
 * matching one of *b, *i, *d is set. An integer too large for int64_t is
 * YTREE_INT with *overflow true (and *i unset). Anything else is a string.
 */
enum ytree_type ytree_resolve_plain(const char *s, bool *b, int64_t *i,
				    double *d, bool *overflow);

#endif
