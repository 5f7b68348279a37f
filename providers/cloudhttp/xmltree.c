/*
 * xmltree: builds a read-only element tree of an AWS answer with expat,
 * refusing DOCTYPE and entity declarations and enforcing depth, node and
 * text limits; lookups by path, strict number parsing, error shapes.
 * Nodes and strings live in one arena freed with the document.
 */
#include "providers/cloudhttp/xmltree.h"

#include <expat.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "buf.h"

#define FEED_CHUNK ((size_t)1 << 20)

/* The mutable twin of struct xmltree_node, used while building. */
struct node {
	const char *name;
	const char *text;
	size_t text_len;
	struct node *parent, *first_child, *next_sibling;
	int line;
};

struct xmltree_doc {
	struct arena *arena;
	struct node *root;
};

struct frame {
	struct node *node;
	struct node *last_child;
	struct buf text;
};

struct builder {
	XML_Parser p;
	struct xmltree_doc *doc;
	struct frame stack[XMLTREE_MAX_DEPTH];
	int depth;
	size_t nodes;
	char why[160];     /* our reason for stopping the parser, "" when expat's */
	unsigned long line, col;
};

_Static_assert(sizeof(struct node) == sizeof(struct xmltree_node),
	       "struct node mirrors struct xmltree_node");

static void stop(struct builder *b, const char *why)
{
	if (b->why[0])
		return;
	snprintf(b->why, sizeof(b->why), "%s", why);
	b->line = XML_GetCurrentLineNumber(b->p);
	b->col = XML_GetCurrentColumnNumber(b->p) + 1;
	XML_StopParser(b->p, XML_FALSE);
}

static void on_start(void *ud, const XML_Char *name, const XML_Char **attrs)
{
	struct builder *b = ud;
	const char *local = strrchr(name, ':');
	struct frame *f;
	struct node *n;

	(void)attrs;
	if (b->why[0])
		return;
	if (b->depth >= XMLTREE_MAX_DEPTH) {
		stop(b, "elements nested deeper than " "64");
		return;
	}
	if (b->nodes >= XMLTREE_MAX_NODES) {
		stop(b, "more than 1000000 elements");
		return;
	}
	/* "prefix:name" is "name"; a name ending in ':' (legal without
	 * namespaces) is kept whole */
	if (local && local[1])
		local++;
	else
		local = name;
	n = arena_alloc(b->doc->arena, sizeof(*n));
	if (!n || !(n->name = arena_strdup(b->doc->arena, local))) {
		stop(b, "out of memory");
		return;
	}
	n->line = (int)XML_GetCurrentLineNumber(b->p);
	n->text = "";
	b->nodes++;
	if (b->depth == 0) {
		b->doc->root = n;
	} else {
		struct frame *up = &b->stack[b->depth - 1];

		n->parent = up->node;
		if (up->last_child)
			up->last_child->next_sibling = n;
		else
			up->node->first_child = n;
		up->last_child = n;
	}
	f = &b->stack[b->depth++];
	f->node = n;
	f->last_child = NULL;
	f->text.len = 0;
	if (f->text.data)
		f->text.data[0] = '\0';
}

static void on_end(void *ud, const XML_Char *name)
{
	struct builder *b = ud;
	struct frame *f;

	(void)name;
	if (b->why[0] || b->depth == 0)
		return;
	f = &b->stack[--b->depth];
	if (f->text.len) {
		char *t = arena_strndup(b->doc->arena, f->text.data, f->text.len);

		if (!t) {
			stop(b, "out of memory");
			return;
		}
		f->node->text = t;
		f->node->text_len = f->text.len;
	}
	f->text.len = 0;
}

static void on_text(void *ud, const XML_Char *s, int len)
{
	struct builder *b = ud;
	struct frame *f;

	if (b->why[0] || b->depth == 0 || len <= 0)
		return;
	f = &b->stack[b->depth - 1];
	if (f->text.len + (size_t)len > XMLTREE_MAX_TEXT) {
		stop(b, "more than 1 MiB of text in one element");
		return;
	}
	if (buf_append(&f->text, s, (size_t)len))
		stop(b, "out of memory");
}

static void on_doctype(void *ud, const XML_Char *name, const XML_Char *sysid,
		       const XML_Char *pubid, int has_internal_subset)
{
	(void)name;
	(void)sysid;
	(void)pubid;
	(void)has_internal_subset;
	stop(ud, "a DOCTYPE declaration is refused (AWS answers have none)");
}

static void on_entity(void *ud, const XML_Char *name, int is_param, const XML_Char *value,
		      int value_len, const XML_Char *base, const XML_Char *sysid,
		      const XML_Char *pubid, const XML_Char *notation)
{
	(void)name;
	(void)is_param;
	(void)value;
	(void)value_len;
	(void)base;
	(void)sysid;
	(void)pubid;
	(void)notation;
	stop(ud, "an entity declaration is refused");
}

void xmltree_free(struct xmltree_doc *d)
{
	if (!d)
		return;
	arena_free(d->arena);
	free(d);
}

struct xmltree_doc *xmltree_parse(const char *xml, size_t len, struct errbuf *err)
{
	struct builder b;
	struct xmltree_doc *d;
	size_t off = 0;
	int i;
	bool ok = true;

	memset(&b, 0, sizeof(b));
	d = calloc(1, sizeof(*d));
	if (!d || !(d->arena = arena_new())) {
		free(d);
		errbuf_set(err, "XML: out of memory");
		return NULL;
	}
	b.doc = d;
	b.p = XML_ParserCreate("UTF-8");
	if (!b.p) {
		xmltree_free(d);
		errbuf_set(err, "XML: out of memory");
		return NULL;
	}
	XML_SetUserData(b.p, &b);
	XML_SetElementHandler(b.p, on_start, on_end);
	XML_SetCharacterDataHandler(b.p, on_text);
	XML_SetStartDoctypeDeclHandler(b.p, on_doctype);
	XML_SetEntityDeclHandler(b.p, on_entity);
	XML_SetParamEntityParsing(b.p, XML_PARAM_ENTITY_PARSING_NEVER);
	do {
		size_t n = len - off > FEED_CHUNK ? FEED_CHUNK : len - off;
		bool last = off + n == len;

		if (XML_Parse(b.p, xml ? xml + off : "", (int)n, last) != XML_STATUS_OK) {
			ok = false;
			break;
		}
		off += n;
	} while (off < len);
	if (!ok || b.why[0]) {
		if (b.why[0])
			errbuf_set(err, "XML: line %lu, column %lu: %s", b.line, b.col, b.why);
		else
			errbuf_set(err, "XML: line %lu, column %lu: %s",
				   (unsigned long)XML_GetCurrentLineNumber(b.p),
				   (unsigned long)XML_GetCurrentColumnNumber(b.p) + 1,
				   XML_ErrorString(XML_GetErrorCode(b.p)));
		xmltree_free(d);
		d = NULL;
	} else if (!d->root) {
		errbuf_set(err, "XML: no element");
		xmltree_free(d);
		d = NULL;
	}
	for (i = 0; i < XMLTREE_MAX_DEPTH; i++)
		buf_free(&b.stack[i].text);
	XML_ParserFree(b.p);
	return d;
}

const struct xmltree_node *xmltree_root(const struct xmltree_doc *d)
{
	return d ? (const struct xmltree_node *)d->root : NULL;
}

/* The first child whose name is s[0..n). */
static const struct xmltree_node *child_n(const struct xmltree_node *p, const char *s, size_t n)
{
	const struct xmltree_node *c;

	for (c = p ? p->first_child : NULL; c; c = c->next_sibling)
		if (strlen(c->name) == n && memcmp(c->name, s, n) == 0)
			return c;
	return NULL;
}

const struct xmltree_node *xmltree_child(const struct xmltree_node *n, const char *name)
{
	return name ? child_n(n, name, strlen(name)) : NULL;
}

const struct xmltree_node *xmltree_find(const struct xmltree_node *n, const char *path)
{
	const char *p = path;

	if (!path)
		return n;
	while (n && *p) {
		const char *e = strchr(p, '/');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		n = child_n(n, p, len);
		p += len;
		if (*p == '/')
			p++;
	}
	return n;
}

const char *xmltree_text(const struct xmltree_node *n, const char *path)
{
	const struct xmltree_node *f = xmltree_find(n, path);

	return f ? f->text : "";
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

int xmltree_trimmed(const struct xmltree_node *n, const char *path, const char **s, size_t *len)
{
	const struct xmltree_node *f = xmltree_find(n, path);
	const char *a, *e;

	*s = "";
	*len = 0;
	if (!f)
		return -1;
	a = f->text;
	e = a + f->text_len;
	while (a < e && blank(*a))
		a++;
	while (e > a && blank(e[-1]))
		e--;
	*s = a;
	*len = (size_t)(e - a);
	return 0;
}

int xmltree_copy(const struct xmltree_node *n, const char *path, char *out, size_t outlen)
{
	const char *s;
	size_t len;

	if (outlen)
		out[0] = '\0';
	if (xmltree_trimmed(n, path, &s, &len) || len >= outlen)
		return -1;
	memcpy(out, s, len);
	out[len] = '\0';
	return 0;
}

const struct xmltree_node *xmltree_first(const struct xmltree_node *n, const char *name)
{
	if (!n)
		return NULL;
	return name ? xmltree_child(n, name) : n->first_child;
}

const struct xmltree_node *xmltree_next(const struct xmltree_node *n)
{
	const struct xmltree_node *s;

	for (s = n ? n->next_sibling : NULL; s; s = s->next_sibling)
		if (strcmp(s->name, n->name) == 0)
			return s;
	return NULL;
}

size_t xmltree_count(const struct xmltree_node *n, const char *name)
{
	const struct xmltree_node *c;
	size_t k = 0;

	for (c = n ? n->first_child : NULL; c; c = c->next_sibling)
		if (!name || strcmp(c->name, name) == 0)
			k++;
	return k;
}

int xmltree_int64(const struct xmltree_node *n, const char *path, int64_t *out)
{
	const char *s;
	size_t len, i = 0;
	bool neg = false;
	uint64_t v = 0, lim;

	if (xmltree_trimmed(n, path, &s, &len) || len == 0)
		return -1;
	if (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-';
		i = 1;
	}
	if (i == len)
		return -1;
	lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; i < len; i++) {
		unsigned d;

		if (s[i] < '0' || s[i] > '9')
			return -1;
		d = (unsigned)(s[i] - '0');
		if (v > (lim - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
	return 0;
}

int xmltree_bool(const struct xmltree_node *n, const char *path, bool *out)
{
	const char *s;
	size_t len;

	if (xmltree_trimmed(n, path, &s, &len))
		return -1;
	if (len == 4 && memcmp(s, "true", 4) == 0)
		*out = true;
	else if (len == 5 && memcmp(s, "false", 5) == 0)
		*out = false;
	else
		return -1;
	return 0;
}
