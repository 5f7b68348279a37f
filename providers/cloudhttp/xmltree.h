/*
 * xmltree: a small read-only tree of an XML answer (AWS's Query and EC2
 * APIs speak it), parsed with expat under hard limits (no DOCTYPE or
 * entity declarations, depth, node count, text size), with path lookups.
 * It knows no API: what an answer means, and its error shapes
 * (aws_xml_error), are the provider's.
 */
#ifndef LUASCALE_XMLTREE_H
#define LUASCALE_XMLTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"

#define XMLTREE_MAX_DEPTH 64
#define XMLTREE_MAX_NODES 1000000
#define XMLTREE_MAX_TEXT ((size_t)1 << 20) /* character data of one element */

/* One element. Borrowed from its document; valid until xmltree_free(). */
struct xmltree_node {
	const char *name;                 /* local name: any "prefix:" removed */
	const char *text;                 /* the element's own character data,
					   * exactly as decoded (entities and
					   * CDATA resolved, blanks kept), not its
					   * children's; NUL-terminated, "" when none */
	size_t text_len;
	const struct xmltree_node *parent; /* NULL for the root */
	const struct xmltree_node *first_child;
	const struct xmltree_node *next_sibling;
	int line;                         /* where the element starts (1-based) */
};

struct xmltree_doc;

/*
 * Parses 'len' bytes of XML. Attributes are ignored (AWS answers carry
 * only xmlns). Refused, with "line L, column C: why" in 'err': anything
 * that is not well-formed XML (truncation, not XML at all, empty input), a
 * DOCTYPE or entity declaration (entity expansion attacks), nesting deeper
 * than XMLTREE_MAX_DEPTH, more than XMLTREE_MAX_NODES elements, and more
 * than XMLTREE_MAX_TEXT bytes of text in one element. Returns the document
 * (xmltree_free() it) or NULL.
 */
struct xmltree_doc *xmltree_parse(const char *xml, size_t len, struct errbuf *err);

/* Frees the document and every node and string of it. NULL is a no-op. */
void xmltree_free(struct xmltree_doc *d);

/* The document element (never NULL for a parsed document). */
const struct xmltree_node *xmltree_root(const struct xmltree_doc *d);

/* The first child element named 'name' (exact, case-sensitive), or NULL.
 * 'n' may be NULL (gives NULL). */
const struct xmltree_node *xmltree_child(const struct xmltree_node *n, const char *name);

/* Follows a path of child names separated by '/' ("reservationSet/item"),
 * taking the first match at each step. NULL or "" is 'n' itself. Returns
 * the node or NULL. 'n' may be NULL. */
const struct xmltree_node *xmltree_find(const struct xmltree_node *n, const char *path);

/* The exact text of xmltree_find(n, path), or "" when there is no such
 * node. Never NULL; borrowed from the document. */
const char *xmltree_text(const struct xmltree_node *n, const char *path);

/* The text of xmltree_find(n, path) without leading and trailing blanks
 * (space, tab, CR, LF): *s points into the document, *len is its length.
 * Returns 0, or -1 when there is no such node (*s "", *len 0). */
int xmltree_trimmed(const struct xmltree_node *n, const char *path, const char **s, size_t *len);

/* Copies the trimmed text of xmltree_find(n, path) into 'out' (NUL-terminated).
 * Returns 0, or -1 when there is no such node or the text does not fit
 * ('out' then holds ""). */
int xmltree_copy(const struct xmltree_node *n, const char *path, char *out, size_t outlen);

/* The first child named 'name' (NULL: any element), for iteration with
 * xmltree_next(). 'n' may be NULL. */
const struct xmltree_node *xmltree_first(const struct xmltree_node *n, const char *name);

/* The next sibling with the same name as 'n', or NULL:
 *   for (it = xmltree_first(set, "item"); it; it = xmltree_next(it)) ... */
const struct xmltree_node *xmltree_next(const struct xmltree_node *n);

/* Number of children named 'name' (NULL: all) of 'n'. */
size_t xmltree_count(const struct xmltree_node *n, const char *name);

/* The trimmed text of xmltree_find(n, path) as a decimal integer: an
 * optional sign, then digits only, within int64_t. Returns 0, or -1 when
 * missing, empty, not an integer or out of range (*out untouched). */
int xmltree_int64(const struct xmltree_node *n, const char *path, int64_t *out);

/* The trimmed text as "true" or "false". Returns 0, or -1 when missing or
 * anything else (*out untouched). */
int xmltree_bool(const struct xmltree_node *n, const char *path, bool *out);

#endif
