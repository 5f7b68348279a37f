/*
 * awsxml: a small read-only tree of an AWS Query or EC2 API answer, parsed
 * with expat under hard limits (no DOCTYPE or entity declarations, depth,
 * node count, text size), with path lookups and both AWS error shapes.
 * It knows no API: what each answer means is the provider's.
 */
#ifndef LUASCALE_AWSXML_H
#define LUASCALE_AWSXML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"

#define AWSXML_MAX_DEPTH 64
#define AWSXML_MAX_NODES 1000000
#define AWSXML_MAX_TEXT ((size_t)1 << 20) /* character data of one element */

/* One element. Borrowed from its document; valid until awsxml_free(). */
struct awsxml_node {
	const char *name;                 /* local name: any "prefix:" removed */
	const char *text;                 /* the element's own character data,
					   * exactly as decoded (entities and
					   * CDATA resolved, blanks kept), not its
					   * children's; NUL-terminated, "" when none */
	size_t text_len;
	const struct awsxml_node *parent; /* NULL for the root */
	const struct awsxml_node *first_child;
	const struct awsxml_node *next_sibling;
	int line;                         /* where the element starts (1-based) */
};

struct awsxml_doc;

/*
 * Parses 'len' bytes of XML. Attributes are ignored (AWS answers carry
 * only xmlns). Refused, with "line L, column C: why" in 'err': anything
 * that is not well-formed XML (truncation, not XML at all, empty input), a
 * DOCTYPE or entity declaration (entity expansion attacks), nesting deeper
 * than AWSXML_MAX_DEPTH, more than AWSXML_MAX_NODES elements, and more
 * than AWSXML_MAX_TEXT bytes of text in one element. Returns the document
 * (awsxml_free() it) or NULL.
 */
struct awsxml_doc *awsxml_parse(const char *xml, size_t len, struct errbuf *err);

/* Frees the document and every node and string of it. NULL is a no-op. */
void awsxml_free(struct awsxml_doc *d);

/* The document element (never NULL for a parsed document). */
const struct awsxml_node *awsxml_root(const struct awsxml_doc *d);

/* The first child element named 'name' (exact, case-sensitive), or NULL.
 * 'n' may be NULL (gives NULL). */
const struct awsxml_node *awsxml_child(const struct awsxml_node *n, const char *name);

/* Follows a path of child names separated by '/' ("reservationSet/item"),
 * taking the first match at each step. NULL or "" is 'n' itself. Returns
 * the node or NULL. 'n' may be NULL. */
const struct awsxml_node *awsxml_find(const struct awsxml_node *n, const char *path);

/* The exact text of awsxml_find(n, path), or "" when there is no such
 * node. Never NULL; borrowed from the document. */
const char *awsxml_text(const struct awsxml_node *n, const char *path);

/* The text of awsxml_find(n, path) without leading and trailing blanks
 * (space, tab, CR, LF): *s points into the document, *len is its length.
 * Returns 0, or -1 when there is no such node (*s "", *len 0). */
int awsxml_trimmed(const struct awsxml_node *n, const char *path, const char **s, size_t *len);

/* Copies the trimmed text of awsxml_find(n, path) into 'out' (NUL-terminated).
 * Returns 0, or -1 when there is no such node or the text does not fit
 * ('out' then holds ""). */
int awsxml_copy(const struct awsxml_node *n, const char *path, char *out, size_t outlen);

/* The first child named 'name' (NULL: any element), for iteration with
 * awsxml_next(). 'n' may be NULL. */
const struct awsxml_node *awsxml_first(const struct awsxml_node *n, const char *name);

/* The next sibling with the same name as 'n', or NULL:
 *   for (it = awsxml_first(set, "item"); it; it = awsxml_next(it)) ... */
const struct awsxml_node *awsxml_next(const struct awsxml_node *n);

/* Number of children named 'name' (NULL: all) of 'n'. */
size_t awsxml_count(const struct awsxml_node *n, const char *name);

/* The trimmed text of awsxml_find(n, path) as a decimal integer: an
 * optional sign, then digits only, within int64_t. Returns 0, or -1 when
 * missing, empty, not an integer or out of range (*out untouched). */
int awsxml_int64(const struct awsxml_node *n, const char *path, int64_t *out);

/* The trimmed text as "true" or "false". Returns 0, or -1 when missing or
 * anything else (*out untouched). */
int awsxml_bool(const struct awsxml_node *n, const char *path, bool *out);

/*
 * Recognises an AWS error answer: EC2's
 *   <Response><Errors><Error><Code/><Message/></Error></Errors><RequestID/></Response>
 * Query's (Auto Scaling, STS)
 *   <ErrorResponse><Error><Type/><Code/><Message/></Error><RequestId/></ErrorResponse>
 * and a bare <Error><Code/><Message/></Error>. Copies the first error's
 * trimmed code and message (truncated to fit; either buffer may be NULL
 * with size 0). Returns 0 for an error answer (code may be "" when the
 * cloud gave none), -1 when the document is not one ('d' may be NULL).
 */
int awsxml_error(const struct awsxml_doc *d, char *code, size_t code_len, char *msg,
		 size_t msg_len);

/* The request id of an answer, success or error (requestId, RequestId,
 * RequestID, ResponseMetadata/RequestId), trimmed, into 'out'; "" when none.
 * Returns 'out'. */
const char *awsxml_request_id(const struct awsxml_doc *d, char *out, size_t outlen);

#endif
