/*
 * ytree: reads one YAML document with libyaml's event API into a tree of
 * ytree_node that remembers every line:column, refusing what luascale never
 * wants (anchors, aliases, tags, duplicate keys); and types plain scalars by
 * the YAML 1.2 core schema. What the keys mean is left to the caller.
 */
#include "ytree.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "arena.h"

/* ------------------------------------------------------------------ */
/* Dotted paths ("node_groups[1].template.cpu") for messages           */

static bool is_plain_key(const char *k)
{
	if (!*k)
		return false;
	for (; *k; k++)
		if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') ||
		      (*k >= '0' && *k <= '9') || *k == '_' || *k == '-'))
			return false;
	return true;
}

static void path_add(struct ytree_path *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void path_add(struct ytree_path *p, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(p->s + p->len, sizeof(p->s) - p->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		p->s[p->len] = '\0';
	else if ((size_t)n >= sizeof(p->s) - p->len)
		p->len = sizeof(p->s) - 1;
	else
		p->len += (size_t)n;
}

/* Appends 'key' as ".key" or "[\"key\"]"; returns the length to restore
 * with ytree_path_pop(). */
size_t ytree_path_push_key(struct ytree_path *p, const char *key)
{
	size_t old = p->len;

	if (is_plain_key(key))
		path_add(p, "%s%s", p->len ? "." : "", key);
	else
		path_add(p, "[\"%s\"]", key);
	return old;
}

/* Appends "[i]"; returns the length to restore with ytree_path_pop(). */
size_t ytree_path_push_index(struct ytree_path *p, size_t i)
{
	size_t old = p->len;

	path_add(p, "[%zu]", i);
	return old;
}

/* Cuts 'p' back to 'old', a length a push returned. */
void ytree_path_pop(struct ytree_path *p, size_t old)
{
	p->len = old;
	p->s[old] = '\0';
}

/* ------------------------------------------------------------------ */
/* The tree                                                            */

struct builder {
	yaml_parser_t parser;
	struct arena *a;
	const char *src;
	const char *text;
	size_t len;
	struct errbuf *err;
	struct ytree_path path;
	size_t order;
};

static int clamp_int(size_t v)
{
	return v >= INT_MAX ? INT_MAX : (int)v;
}

static int build_fail(struct builder *b, size_t line0, size_t col0,
		      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int build_fail(struct builder *b, size_t line0, size_t col0,
		      const char *fmt, ...)
{
	char msg[ERRBUF_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (b->path.len)
		return errbuf_set(b->err, "%s:%d:%d: %s: %s", b->src,
				  clamp_int(line0 + 1), clamp_int(col0 + 1),
				  b->path.s, msg);
	return errbuf_set(b->err, "%s:%d:%d: %s", b->src, clamp_int(line0 + 1),
			  clamp_int(col0 + 1), msg);
}

/* Turns libyaml's error state into "file:line:col: ..." in b->err. */
static int syntax_error(struct builder *b)
{
	yaml_parser_t *p = &b->parser;
	const char *problem = p->problem ? p->problem : "unknown error";

	if (p->error == YAML_MEMORY_ERROR)
		return errbuf_set(b->err, "%s: out of memory while reading YAML", b->src);
	if (p->error == YAML_READER_ERROR) {
		size_t i, line = 0, col = 0;

		for (i = 0; i < p->problem_offset && i < b->len; i++) {
			if (b->text[i] == '\n') {
				line++;
				col = 0;
			} else if (((unsigned char)b->text[i] & 0xc0) != 0x80) {
				col++;
			}
		}
		return errbuf_set(b->err, "%s:%d:%d: invalid text: %s", b->src,
				  clamp_int(line + 1), clamp_int(col + 1), problem);
	}
	if (p->context)
		return errbuf_set(b->err, "%s:%d:%d: YAML syntax error: %s (%s at %d:%d)",
				  b->src, clamp_int(p->problem_mark.line + 1),
				  clamp_int(p->problem_mark.column + 1), problem,
				  p->context, clamp_int(p->context_mark.line + 1),
				  clamp_int(p->context_mark.column + 1));
	return errbuf_set(b->err, "%s:%d:%d: YAML syntax error: %s", b->src,
			  clamp_int(p->problem_mark.line + 1),
			  clamp_int(p->problem_mark.column + 1), problem);
}

static int next_event(struct builder *b, yaml_event_t *ev)
{
	if (yaml_parser_parse(&b->parser, ev))
		return 0;
	return syntax_error(b);
}

static struct ytree_node *new_node(struct builder *b, enum ytree_kind kind,
			      const yaml_event_t *ev)
{
	struct ytree_node *n = arena_alloc(b->a, sizeof(*n));

	if (!n) {
		errbuf_set(b->err, "%s: out of memory", b->src);
		return NULL;
	}
	n->kind = kind;
	n->line = clamp_int(ev->start_mark.line + 1);
	n->col = clamp_int(ev->start_mark.column + 1);
	n->order = b->order++;
	return n;
}

static void append(struct ytree_node *parent, struct ytree_node *child)
{
	if (parent->last)
		parent->last->next = child;
	else
		parent->first = child;
	parent->last = child;
	parent->n++;
}

/* Anchors and tags: only !!str (or "!") is understood; anchors are
 * refused so a document cannot expand into billions of nodes. */
static int check_props(struct builder *b, const yaml_event_t *ev,
		       const yaml_char_t *anchor, const yaml_char_t *tag,
		       bool *force_str)
{
	if (anchor)
		return build_fail(b, ev->start_mark.line, ev->start_mark.column,
				  "anchors (&%s) and aliases are not supported; write the value out in full",
				  (const char *)anchor);
	if (!tag)
		return 0;
	if (force_str && (!strcmp((const char *)tag, "tag:yaml.org,2002:str") ||
			  !strcmp((const char *)tag, "!"))) {
		*force_str = true;
		return 0;
	}
	return build_fail(b, ev->start_mark.line, ev->start_mark.column,
			  "unsupported tag %s (only !!str is understood)",
			  (const char *)tag);
}

static int cmp_keys(const void *pa, const void *pb)
{
	const struct ytree_node *a = *(const struct ytree_node *const *)pa;
	const struct ytree_node *b = *(const struct ytree_node *const *)pb;
	int c = strcmp(a->key->text, b->key->text);

	if (c)
		return c;
	return a->key->order < b->key->order ? -1 : a->key->order > b->key->order;
}

/* Reports the first (in document order) repeated key of mapping 'm'. */
static int check_duplicates(struct builder *b, const struct ytree_node *m)
{
	const struct ytree_node **v, *dup = NULL, *first = NULL;
	struct ytree_node *c;
	size_t i = 0;

	if (m->n < 2)
		return 0;
	v = arena_calloc(b->a, m->n, sizeof(*v));
	if (!v)
		return errbuf_set(b->err, "%s: out of memory", b->src);
	for (c = m->first; c; c = c->next)
		v[i++] = c;
	qsort(v, m->n, sizeof(*v), cmp_keys);
	for (i = 1; i < m->n; i++) {
		if (strcmp(v[i]->key->text, v[i - 1]->key->text))
			continue;
		if (!dup || v[i]->key->order < dup->key->order) {
			size_t j = i - 1;

			while (j > 0 && !strcmp(v[j - 1]->key->text, v[i]->key->text))
				j--;
			dup = v[i];
			first = v[j];
		}
	}
	if (!dup)
		return 0;
	return build_fail(b, (size_t)dup->key->line - 1, (size_t)dup->key->col - 1,
			  "duplicate key \"%s\" (first at line %d)", dup->key->text,
			  first->key->line);
}

static struct ytree_node *build_node(struct builder *b, const yaml_event_t *ev, int depth);

static struct ytree_node *build_scalar(struct builder *b, const yaml_event_t *ev)
{
	bool force_str = false;
	struct ytree_node *n;
	const char *value = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;

	if (check_props(b, ev, ev->data.scalar.anchor, ev->data.scalar.tag, &force_str))
		return NULL;
	if (memchr(value, '\0', len)) {
		build_fail(b, ev->start_mark.line, ev->start_mark.column,
			   "a NUL character in a string is not supported");
		return NULL;
	}
	n = new_node(b, YTREE_SCALAR, ev);
	if (!n)
		return NULL;
	n->text = arena_strndup(b->a, value, len);
	if (!n->text) {
		errbuf_set(b->err, "%s: out of memory", b->src);
		return NULL;
	}
	n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !force_str;
	return n;
}

static struct ytree_node *build_seq(struct builder *b, const yaml_event_t *ev, int depth)
{
	struct ytree_node *n, *item;
	yaml_event_t cev;
	size_t old;

	if (check_props(b, ev, ev->data.sequence_start.anchor,
			ev->data.sequence_start.tag, NULL))
		return NULL;
	n = new_node(b, YTREE_SEQ, ev);
	if (!n)
		return NULL;
	for (;;) {
		if (next_event(b, &cev))
			return NULL;
		if (cev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&cev);
			return n;
		}
		old = ytree_path_push_index(&b->path, n->n);
		item = build_node(b, &cev, depth + 1);
		ytree_path_pop(&b->path, old);
		yaml_event_delete(&cev);
		if (!item)
			return NULL;
		append(n, item);
	}
}

static struct ytree_node *build_map(struct builder *b, const yaml_event_t *ev, int depth)
{
	struct ytree_node *n, *key, *val;
	yaml_event_t kev, vev;
	size_t old;

	if (check_props(b, ev, ev->data.mapping_start.anchor,
			ev->data.mapping_start.tag, NULL))
		return NULL;
	n = new_node(b, YTREE_MAP, ev);
	if (!n)
		return NULL;
	for (;;) {
		if (next_event(b, &kev))
			return NULL;
		if (kev.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&kev);
			break;
		}
		if (kev.type != YAML_SCALAR_EVENT && kev.type != YAML_ALIAS_EVENT) {
			build_fail(b, kev.start_mark.line, kev.start_mark.column,
				   "mapping keys must be plain strings, not %s",
				   kev.type == YAML_MAPPING_START_EVENT ? "mappings" : "lists");
			yaml_event_delete(&kev);
			return NULL;
		}
		key = build_node(b, &kev, depth + 1);
		yaml_event_delete(&kev);
		if (!key)
			return NULL;
		old = ytree_path_push_key(&b->path, key->text);
		if (next_event(b, &vev)) {
			ytree_path_pop(&b->path, old);
			return NULL;
		}
		val = build_node(b, &vev, depth + 1);
		yaml_event_delete(&vev);
		ytree_path_pop(&b->path, old);
		if (!val)
			return NULL;
		val->key = key;
		append(n, val);
	}
	if (check_duplicates(b, n))
		return NULL;
	return n;
}

/* Builds the node that starts with 'ev' (owned by the caller), reading
 * the events up to its end. Returns NULL with b->err set. */
static struct ytree_node *build_node(struct builder *b, const yaml_event_t *ev, int depth)
{
	if (depth > YTREE_MAX_DEPTH) {
		build_fail(b, ev->start_mark.line, ev->start_mark.column,
			   "nested more than %d levels deep", YTREE_MAX_DEPTH);
		return NULL;
	}
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		return build_scalar(b, ev);
	case YAML_SEQUENCE_START_EVENT:
		return build_seq(b, ev, depth);
	case YAML_MAPPING_START_EVENT:
		return build_map(b, ev, depth);
	case YAML_ALIAS_EVENT:
		build_fail(b, ev->start_mark.line, ev->start_mark.column,
			   "aliases (*%s) and anchors are not supported; write the value out in full",
			   (const char *)ev->data.alias.anchor);
		return NULL;
	default:
		build_fail(b, ev->start_mark.line, ev->start_mark.column,
			   "unexpected YAML event");
		return NULL;
	}
}

/* Parses one YAML document from 'text' (borrowed, not kept) into nodes in
 * 'a' that live as long as 'a'. *root is NULL for an empty stream. Returns 0
 * or -1 with "file:line:col: [path: ]message" in 'err'. */
int ytree_parse(const char *text, size_t len, const char *src,
		struct arena *a, struct ytree_node **root, struct errbuf *err)
{
	struct builder b;
	yaml_event_t ev;
	int rc = -1;
	bool have_doc = false;

	memset(&b, 0, sizeof(b));
	b.a = a;
	b.src = src;
	b.text = text;
	b.len = len;
	b.err = err;
	*root = NULL;
	if (!yaml_parser_initialize(&b.parser))
		return errbuf_set(err, "%s: out of memory", src);
	yaml_parser_set_input_string(&b.parser, (const unsigned char *)text, len);
	for (;;) {
		yaml_event_type_t t;

		if (next_event(&b, &ev))
			goto out;
		t = ev.type;
		if (t == YAML_DOCUMENT_START_EVENT && have_doc) {
			build_fail(&b, ev.start_mark.line, ev.start_mark.column,
				   "only one YAML document is allowed");
			yaml_event_delete(&ev);
			goto out;
		}
		if (t == YAML_DOCUMENT_START_EVENT) {
			yaml_event_t root_ev;

			have_doc = true;
			if (next_event(&b, &root_ev)) {
				yaml_event_delete(&ev);
				goto out;
			}
			*root = build_node(&b, &root_ev, 0);
			yaml_event_delete(&root_ev);
			if (!*root) {
				yaml_event_delete(&ev);
				goto out;
			}
		}
		yaml_event_delete(&ev);
		if (t == YAML_STREAM_END_EVENT)
			break;
	}
	rc = 0;
out:
	yaml_parser_delete(&b.parser);
	return rc;
}

/* A plain scalar the core schema reads as null; NULL is not. */
bool ytree_is_null(const struct ytree_node *n)
{
	return n && n->kind == YTREE_SCALAR && n->plain && ytree_null_text(n->text);
}

/* The value of 'key' in mapping 'm', null values included; borrowed. */
const struct ytree_node *ytree_map_find(const struct ytree_node *m, const char *key)
{
	const struct ytree_node *c;

	if (!m || m->kind != YTREE_MAP)
		return NULL;
	for (c = m->first; c; c = c->next)
		if (!strcmp(c->key->text, key))
			return c;
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Plain scalars: the YAML 1.2 core schema                             */

/* "", "~", "null", "Null", "NULL". */
bool ytree_null_text(const char *s)
{
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") ||
	       !strcmp(s, "Null") || !strcmp(s, "NULL");
}

/* true/True/TRUE or false/False/FALSE into *out; 0 or -1. */
int ytree_bool_text(const char *s, bool *out)
{
	if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"))
		*out = true;
	else if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE"))
		*out = false;
	else
		return -1;
	return 0;
}

static int digit_value(char c, int base)
{
	int d;

	if (c >= '0' && c <= '9')
		d = c - '0';
	else if (c >= 'a' && c <= 'f')
		d = c - 'a' + 10;
	else if (c >= 'A' && c <= 'F')
		d = c - 'A' + 10;
	else
		return -1;
	return d < base ? d : -1;
}

/* Core-schema integer: [-+]?[0-9]+ | 0o[0-7]+ | 0x[0-9a-fA-F]+.
 * Returns 0, -1 when not an integer, -2 when it does not fit int64_t. */
int ytree_int_text(const char *s, int64_t *out)
{
	uint64_t mag = 0, limit;
	bool neg = false;
	int base = 10, d;

	if (s[0] == '0' && s[1] == 'o') {
		base = 8;
		s += 2;
	} else if (s[0] == '0' && s[1] == 'x') {
		base = 16;
		s += 2;
	} else if (*s == '-' || *s == '+') {
		neg = *s == '-';
		s++;
	}
	if (!*s)
		return -1;
	limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; *s; s++) {
		d = digit_value(*s, base);
		if (d < 0)
			return -1;
		if (mag > (limit - (uint64_t)d) / (uint64_t)base) {
			/* keep scanning: "99999999999999999999x" is not an integer */
			for (s++; *s; s++)
				if (digit_value(*s, base) < 0)
					return -1;
			return -2;
		}
		mag = mag * (uint64_t)base + (uint64_t)d;
	}
	if (neg)
		*out = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
	else
		*out = (int64_t)mag;
	return 0;
}

/* Core-schema float: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?,
 * [-+]?\.inf and \.nan in three spellings. Returns 0 or -1. */
int ytree_float_text(const char *s, double *out)
{
	const char *p = s;
	bool digits = false;
	char *end;

	if (*p == '-' || *p == '+')
		p++;
	if (!strcmp(p, ".inf") || !strcmp(p, ".Inf") || !strcmp(p, ".INF")) {
		*out = *s == '-' ? -INFINITY : INFINITY;
		return 0;
	}
	if (p == s && (!strcmp(p, ".nan") || !strcmp(p, ".NaN") || !strcmp(p, ".NAN"))) {
		*out = NAN;
		return 0;
	}
	while (*p >= '0' && *p <= '9') {
		p++;
		digits = true;
	}
	if (*p == '.') {
		bool frac = false;

		p++;
		while (*p >= '0' && *p <= '9') {
			p++;
			frac = true;
		}
		if (!digits && !frac)
			return -1;
		digits = true;
	}
	if (!digits)
		return -1;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '-' || *p == '+')
			p++;
		if (!(*p >= '0' && *p <= '9'))
			return -1;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p)
		return -1;
	errno = 0;
	*out = strtod(s, &end);
	return *end ? -1 : 0;
}

/* Resolves a plain scalar's type. An integer too large for int64_t is
 * reported as YTREE_INT with *overflow set. */
enum ytree_type ytree_resolve_plain(const char *s, bool *b, int64_t *i,
				    double *d, bool *overflow)
{
	int rc;

	*overflow = false;
	if (ytree_null_text(s))
		return YTREE_NULL;
	if (!ytree_bool_text(s, b))
		return YTREE_BOOL;
	rc = ytree_int_text(s, i);
	if (rc == 0)
		return YTREE_INT;
	if (rc == -2) {
		*overflow = true;
		return YTREE_INT;
	}
	if (!ytree_float_text(s, d))
		return YTREE_FLOAT;
	return YTREE_STRING;
}
