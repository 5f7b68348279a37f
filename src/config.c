/*
 * config: reads the luascale YAML configuration with libyaml's event API
 * into a small tree that remembers every line:column, walks it against the
 * schema into struct config, then applies LUASCALE_* environment overrides
 * and the checks that span fields. It records the kubeconfig and policy
 * paths; it never opens them.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <yaml.h>

#include "arena.h"
#include "quantity.h"

#define MAX_DEPTH 64          /* nesting of YAML collections */
#define MAX_NAME 63           /* node group names are label values */
#define DEFAULT_PODS 110
#define DEFAULT_INSTRUCTIONS 200000000
#define DEFAULT_MEMORY (512LL * 1024 * 1024)
#define GROUP_LABEL "luascale.io/node-group"
#define ENV_PREFIX_GROUPS "LUASCALE_NODE_GROUPS_"
#define ENV_PREFIX_PARAMS "LUASCALE_POLICY_PARAMS_"

/* ------------------------------------------------------------------ */
/* Dotted paths ("node_groups[1].template.cpu") for messages           */

struct path {
	char s[256];
	size_t len;
};

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

static void path_add(struct path *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void path_add(struct path *p, const char *fmt, ...)
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

/* Appends a key; returns the length to restore with path_pop(). */
static size_t path_push_key(struct path *p, const char *key)
{
	size_t old = p->len;

	if (is_plain_key(key))
		path_add(p, "%s%s", p->len ? "." : "", key);
	else
		path_add(p, "[\"%s\"]", key);
	return old;
}

static size_t path_push_index(struct path *p, size_t i)
{
	size_t old = p->len;

	path_add(p, "[%zu]", i);
	return old;
}

static void path_pop(struct path *p, size_t old)
{
	p->len = old;
	p->s[old] = '\0';
}

/* Quotes 'text' for a message: at most ~48 characters, one line. */
static const char *quoted(const char *text, char *out, size_t outlen)
{
	size_t i = 0, o = 0, max = outlen - 6;

	out[o++] = '"';
	for (; text[i] && o < max; i++)
		out[o++] = (unsigned char)text[i] < 0x20 ? '?' : text[i];
	if (text[i]) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o++] = '"';
	out[o] = '\0';
	return out;
}

/* ------------------------------------------------------------------ */
/* The YAML tree                                                       */

enum ykind { Y_SCALAR, Y_SEQ, Y_MAP };

struct ynode {
	enum ykind kind;
	int line, col;            /* 1-based */
	const char *text;         /* scalars */
	bool plain;               /* plain style and no !!str tag */
	const struct ynode *key;  /* mapping entries: the key of this value */
	struct ynode *first, *last, *next; /* items, or mapping values */
	size_t n;
	size_t order;             /* document order, for duplicate reports */
};

struct builder {
	yaml_parser_t parser;
	struct arena *a;
	const char *src;
	const char *text;
	size_t len;
	struct errbuf *err;
	struct path path;
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

static struct ynode *new_node(struct builder *b, enum ykind kind,
			      const yaml_event_t *ev)
{
	struct ynode *n = arena_alloc(b->a, sizeof(*n));

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

static void append(struct ynode *parent, struct ynode *child)
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
	const struct ynode *a = *(const struct ynode *const *)pa;
	const struct ynode *b = *(const struct ynode *const *)pb;
	int c = strcmp(a->key->text, b->key->text);

	if (c)
		return c;
	return a->key->order < b->key->order ? -1 : a->key->order > b->key->order;
}

/* Reports the first (in document order) repeated key of mapping 'm'. */
static int check_duplicates(struct builder *b, const struct ynode *m)
{
	const struct ynode **v, *dup = NULL, *first = NULL;
	struct ynode *c;
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

static struct ynode *build_node(struct builder *b, const yaml_event_t *ev, int depth);

static struct ynode *build_scalar(struct builder *b, const yaml_event_t *ev)
{
	bool force_str = false;
	struct ynode *n;
	const char *value = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;

	if (check_props(b, ev, ev->data.scalar.anchor, ev->data.scalar.tag, &force_str))
		return NULL;
	if (memchr(value, '\0', len)) {
		build_fail(b, ev->start_mark.line, ev->start_mark.column,
			   "a NUL character in a string is not supported");
		return NULL;
	}
	n = new_node(b, Y_SCALAR, ev);
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

static struct ynode *build_seq(struct builder *b, const yaml_event_t *ev, int depth)
{
	struct ynode *n, *item;
	yaml_event_t cev;
	size_t old;

	if (check_props(b, ev, ev->data.sequence_start.anchor,
			ev->data.sequence_start.tag, NULL))
		return NULL;
	n = new_node(b, Y_SEQ, ev);
	if (!n)
		return NULL;
	for (;;) {
		if (next_event(b, &cev))
			return NULL;
		if (cev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&cev);
			return n;
		}
		old = path_push_index(&b->path, n->n);
		item = build_node(b, &cev, depth + 1);
		path_pop(&b->path, old);
		yaml_event_delete(&cev);
		if (!item)
			return NULL;
		append(n, item);
	}
}

static struct ynode *build_map(struct builder *b, const yaml_event_t *ev, int depth)
{
	struct ynode *n, *key, *val;
	yaml_event_t kev, vev;
	size_t old;

	if (check_props(b, ev, ev->data.mapping_start.anchor,
			ev->data.mapping_start.tag, NULL))
		return NULL;
	n = new_node(b, Y_MAP, ev);
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
		old = path_push_key(&b->path, key->text);
		if (next_event(b, &vev)) {
			path_pop(&b->path, old);
			return NULL;
		}
		val = build_node(b, &vev, depth + 1);
		yaml_event_delete(&vev);
		path_pop(&b->path, old);
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
static struct ynode *build_node(struct builder *b, const yaml_event_t *ev, int depth)
{
	if (depth > MAX_DEPTH) {
		build_fail(b, ev->start_mark.line, ev->start_mark.column,
			   "nested more than %d levels deep", MAX_DEPTH);
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

/* Parses one YAML document into a tree in 'a'. *root is NULL for an empty
 * stream. Returns 0 or -1 with "file:line:col: message". */
static int build_tree(const char *text, size_t len, const char *src,
		      struct arena *a, struct ynode **root, struct errbuf *err)
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

/* ------------------------------------------------------------------ */
/* Plain scalars: the YAML 1.2 core schema                             */

enum scalar_type { S_NULL, S_BOOL, S_INT, S_FLOAT, S_STR };

static bool is_null_text(const char *s)
{
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") ||
	       !strcmp(s, "Null") || !strcmp(s, "NULL");
}

static int bool_text(const char *s, bool *out)
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
static int int_text(const char *s, int64_t *out)
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
static int float_text(const char *s, double *out)
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
 * reported as S_INT with *overflow set. */
static enum scalar_type resolve_plain(const char *s, bool *b, int64_t *i,
				      double *d, bool *overflow)
{
	int rc;

	*overflow = false;
	if (is_null_text(s))
		return S_NULL;
	if (!bool_text(s, b))
		return S_BOOL;
	rc = int_text(s, i);
	if (rc == 0)
		return S_INT;
	if (rc == -2) {
		*overflow = true;
		return S_INT;
	}
	if (!float_text(s, d))
		return S_FLOAT;
	return S_STR;
}

/* ------------------------------------------------------------------ */
/* Durations                                                           */

int config_parse_duration(const char *text, int64_t *out_ms)
{
	static const struct {
		const char *unit;
		int64_t ms;
	} units[] = { {"ms", 1}, {"h", 3600000}, {"m", 60000}, {"s", 1000} };
	const char *s = text;
	int64_t total = 0;

	if (!s || !*s)
		return -1;
	while (*s) {
		uint64_t whole = 0, frac = 0, scale = 1;
		int64_t ms = 0, part;
		bool digits = false;
		size_t u, ulen = 0;

		for (; *s >= '0' && *s <= '9'; s++) {
			if (whole > (UINT64_MAX - 9) / 10)
				return -1;
			whole = whole * 10 + (uint64_t)(*s - '0');
			digits = true;
		}
		if (*s == '.') {
			s++;
			if (!(*s >= '0' && *s <= '9'))
				return -1;
			for (; *s >= '0' && *s <= '9'; s++) {
				if (scale >= 1000000000ULL) { /* more than 9 places */
					if (*s != '0')
						return -1;
					continue;
				}
				frac = frac * 10 + (uint64_t)(*s - '0');
				scale *= 10;
			}
			digits = true;
		}
		if (!digits)
			return -1;
		for (u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
			ulen = strlen(units[u].unit);
			if (!strncmp(s, units[u].unit, ulen))
				break;
		}
		if (u == sizeof(units) / sizeof(units[0]))
			return -1;
		/* "1m" must not be read as the start of "1ms": the table
		 * tries "ms" first; anything after the unit starts a number */
		s += ulen;
		ms = units[u].ms;
		if (whole > (uint64_t)INT64_MAX / (uint64_t)ms)
			return -1;
		part = (int64_t)whole * ms;
		if ((frac * (uint64_t)ms) % scale)
			return -1; /* finer than a millisecond */
		if (part > INT64_MAX - (int64_t)(frac * (uint64_t)ms / scale))
			return -1;
		part += (int64_t)(frac * (uint64_t)ms / scale);
		if (total > INT64_MAX - part)
			return -1;
		total += part;
	}
	*out_ms = total;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Names                                                               */

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* Label value / name part: empty or ≤63 of [A-Za-z0-9._-], alnum at both ends. */
static bool valid_label_value(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0)
		return true;
	if (n > 63 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
		return false;
	for (i = 0; i < n; i++)
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

/* DNS subdomain: ≤253 of [a-z0-9.-], alnum at both ends. */
static bool valid_dns_subdomain(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 253 || !is_lower_alnum(s[0]) || !is_lower_alnum(s[n - 1]))
		return false;
	for (i = 0; i < n; i++)
		if (!is_lower_alnum(s[i]) && s[i] != '-' && s[i] != '.')
			return false;
	return true;
}

/* Qualified name (label key, taint key, resource name): [prefix/]name. */
static bool valid_qualified_name(const char *s)
{
	const char *slash = strchr(s, '/');

	if (slash && !valid_dns_subdomain(s, (size_t)(slash - s)))
		return false;
	if (slash)
		s = slash + 1;
	return *s && valid_label_value(s);
}

static bool valid_group_name(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > MAX_NAME || !is_lower_alnum(s[0]) || !is_lower_alnum(s[n - 1]))
		return false;
	for (i = 0; i < n; i++)
		if (!is_lower_alnum(s[i]) && s[i] != '-' && s[i] != '.')
			return false;
	return true;
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static char upper(char c)
{
	return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

/* Levenshtein distance, case-insensitive; large for long strings. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	size_t row[65];

	if (la > 64 || lb > 64)
		return (size_t)-1;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (lower(a[i - 1]) != lower(b[j - 1]));

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* The known word closest to 'word' (distance ≤ 2, less than its length), or NULL. */
static const char *suggest(const char *word, const char *const *known)
{
	const char *best = NULL;
	size_t d, bestd = 3;

	for (; *known; known++) {
		d = edit_distance(word, *known);
		if (d < bestd && d < strlen(word)) {
			bestd = d;
			best = *known;
		}
	}
	return best;
}

/* ------------------------------------------------------------------ */
/* The schema walk                                                     */

/* Where a value came from: a file position (and its schema path), or an
 * environment variable. */
struct loc {
	int line, col;
	const char *path;
	const char *var;
};

/* A scalar or collection to decode, from the file or the environment. */
struct val {
	enum ykind kind;
	const char *text; /* scalars */
	bool plain;
	struct loc loc;
};

struct group_meta {
	struct loc node;    /* the group's mapping */
	struct loc min, max;
	bool max_set;
};

struct env {
	config_getenv_fn fn;
	void *ud;
	const char *const *envp;
};

struct ctx {
	struct config *c;
	struct arena *a;    /* the config's arena */
	struct arena *tmp;  /* the tree and bookkeeping, freed at the end */
	const char *src;
	struct errbuf *err;
	struct env env;
	unsigned flags;
	struct path path;

	struct loc root, cluster, kubeconfig, context, in_cluster;
	struct loc policy, policy_path, protected_sel, reconcile, batch_idle,
		batch_max, max_nodes_total;
	struct group_meta *gm;
};

static int vfail(struct ctx *x, const struct loc *l, const char *fmt, va_list ap)
{
	char msg[ERRBUF_MAX];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (l->var)
		return errbuf_set(x->err, "%s: %s", l->var, msg);
	if (l->path && *l->path)
		return errbuf_set(x->err, "%s:%d:%d: %s: %s", x->src, l->line,
				  l->col, l->path, msg);
	return errbuf_set(x->err, "%s:%d:%d: %s", x->src, l->line, l->col, msg);
}

static int fail_loc(struct ctx *x, const struct loc *l, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail_loc(struct ctx *x, const struct loc *l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(x, l, fmt, ap);
	va_end(ap);
	return -1;
}

/* Fails at node 'n', naming the current path. */
static int fail_node(struct ctx *x, const struct ynode *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail_node(struct ctx *x, const struct ynode *n, const char *fmt, ...)
{
	struct loc l = { n->line, n->col, x->path.s, NULL };
	va_list ap;

	va_start(ap, fmt);
	vfail(x, &l, fmt, ap);
	va_end(ap);
	return -1;
}

static int oom(struct ctx *x)
{
	return errbuf_set(x->err, "%s: out of memory", x->src);
}

/* A location that outlives the current path. */
static struct loc node_loc(struct ctx *x, const struct ynode *n)
{
	struct loc l = { n->line, n->col, arena_strdup(x->tmp, x->path.s), NULL };

	return l;
}

static struct val val_of_node(struct ctx *x, const struct ynode *n)
{
	struct val v = { n->kind, n->text, n->plain, { n->line, n->col, x->path.s, NULL } };

	return v;
}

static struct val val_of_env(const char *var, const char *text)
{
	struct val v = { Y_SCALAR, text, true, { 0, 0, NULL, var } };

	return v;
}

static bool val_is_null(const struct val *v)
{
	return v->kind == Y_SCALAR && v->plain && is_null_text(v->text);
}

static const char *shown(const struct val *v, char *out, size_t outlen)
{
	if (v->kind == Y_MAP)
		return "a mapping";
	if (v->kind == Y_SEQ)
		return "a list";
	if (val_is_null(v) && v->loc.var == NULL)
		return "nothing (null)";
	return quoted(v->text, out, outlen);
}

static int bad(struct ctx *x, const struct val *v, const char *what)
{
	char buf[64];

	return fail_loc(x, &v->loc, "expected %s, got %s", what, shown(v, buf, sizeof(buf)));
}

static int val_int(struct ctx *x, const struct val *v, int64_t lo, int64_t hi,
		   int64_t *out)
{
	const char *what = lo == 0 ? "a non-negative integer" :
			   lo == 1 ? "a positive integer" : "an integer";
	int64_t i;
	int rc;

	if (v->kind != Y_SCALAR)
		return bad(x, v, what);
	rc = int_text(v->text, &i);
	if (rc == -2 || (rc == 0 && i > hi))
		return fail_loc(x, &v->loc, "%s is too large (at most %lld)", v->text, (long long)hi);
	if (rc < 0 || i < lo)
		return bad(x, v, what);
	*out = i;
	return 0;
}

static int val_number(struct ctx *x, const struct val *v, double *out)
{
	const char *what = "a non-negative number";
	int64_t i;
	double d;

	if (v->kind != Y_SCALAR)
		return bad(x, v, what);
	if (!int_text(v->text, &i))
		d = (double)i;
	else if (float_text(v->text, &d))
		return bad(x, v, what);
	if (!isfinite(d) || d < 0)
		return bad(x, v, what);
	*out = d;
	return 0;
}

static int val_bool(struct ctx *x, const struct val *v, bool *out)
{
	if (v->kind != Y_SCALAR || bool_text(v->text, out))
		return bad(x, v, "true or false");
	return 0;
}

/* Any scalar, as written; copied into the config's arena. */
static int val_string(struct ctx *x, const struct val *v, const char **out)
{
	if (v->kind != Y_SCALAR)
		return bad(x, v, "a string");
	*out = arena_strdup(x->a, v->text);
	return *out ? 0 : oom(x);
}

static int val_duration(struct ctx *x, const struct val *v, int64_t *out)
{
	if (v->kind != Y_SCALAR || config_parse_duration(v->text, out))
		return bad(x, v, "a duration such as \"10s\", \"1m30s\" or \"250ms\"");
	return 0;
}

static int val_quantity(struct ctx *x, const struct val *v, enum quantity_unit u,
			int64_t lo, int64_t *out)
{
	struct errbuf qe;

	if (v->kind != Y_SCALAR)
		return bad(x, v, "a quantity such as \"4\", \"500m\" or \"16Gi\"");
	if (quantity_parse(v->text, u, out, &qe))
		return fail_loc(x, &v->loc, "%s", qe.msg);
	if (*out < lo) {
		char buf[64];

		return fail_loc(x, &v->loc, "must be %s, got %s",
				lo > 0 ? "positive" : "zero or more",
				quoted(v->text, buf, sizeof(buf)));
	}
	return 0;
}

/* The value of 'key' in mapping 'm', or NULL when absent or null. */
static const struct ynode *map_get(const struct ynode *m, const char *key)
{
	const struct ynode *c;

	if (!m)
		return NULL;
	for (c = m->first; c; c = c->next)
		if (!strcmp(c->key->text, key))
			return c->kind == Y_SCALAR && c->plain && is_null_text(c->text) ? NULL : c;
	return NULL;
}

/* Every key of 'm' must be in 'known' (NULL-terminated). */
static int check_keys(struct ctx *x, const struct ynode *m, const char *const *known)
{
	const struct ynode *c;
	const char *const *k;
	char list[256];
	size_t len;

	for (c = m->first; c; c = c->next) {
		const char *hint;

		for (k = known; *k; k++)
			if (!strcmp(c->key->text, *k))
				break;
		if (*k)
			continue;
		hint = suggest(c->key->text, known);
		if (hint)
			return fail_node(x, c->key, "unknown key \"%s\" (did you mean \"%s\"?)",
					 c->key->text, hint);
		len = 0;
		list[0] = '\0';
		for (k = known; *k; k++) {
			int n = snprintf(list + len, sizeof(list) - len, "%s%s",
					 len ? ", " : "", *k);

			if (n < 0 || (size_t)n >= sizeof(list) - len)
				break;
			len += (size_t)n;
		}
		return fail_node(x, c->key, "unknown key \"%s\" (known keys: %s)",
				 c->key->text, list);
	}
	return 0;
}

static int expect_kind(struct ctx *x, const struct ynode *n, enum ykind kind)
{
	struct val v;

	if (n->kind == kind)
		return 0;
	v = val_of_node(x, n);
	return bad(x, &v, kind == Y_MAP ? "a mapping" : "a list");
}

/* Field readers: each decodes 'key' of mapping 'm' when present (and not
 * null), leaving *out unchanged otherwise. 'where' (may be NULL) records
 * the position. They return 0 or -1. */

typedef int (*decode_fn)(struct ctx *x, const struct val *v, void *out, const void *arg);

struct int_range {
	int64_t lo, hi;
};

static int dec_int(struct ctx *x, const struct val *v, void *out, const void *arg)
{
	const struct int_range *r = arg;

	return val_int(x, v, r->lo, r->hi, out);
}

static int dec_number(struct ctx *x, const struct val *v, void *out, const void *arg)
{
	(void)arg;
	return val_number(x, v, out);
}

static int dec_bool(struct ctx *x, const struct val *v, void *out, const void *arg)
{
	(void)arg;
	return val_bool(x, v, out);
}

static int dec_string(struct ctx *x, const struct val *v, void *out, const void *arg)
{
	(void)arg;
	return val_string(x, v, out);
}

static int dec_duration(struct ctx *x, const struct val *v, void *out, const void *arg)
{
	(void)arg;
	return val_duration(x, v, out);
}

static int dec_bytes(struct ctx *x, const struct val *v, void *out, const void *arg)
{
	(void)arg;
	return val_quantity(x, v, QUANTITY_UNIT, 1, out);
}

static int field(struct ctx *x, const struct ynode *m, const char *key,
		 decode_fn dec, void *out, const void *arg, struct loc *where)
{
	const struct ynode *n = map_get(m, key);
	struct val v;
	size_t old;
	int rc;

	if (!n)
		return 0;
	old = path_push_key(&x->path, key);
	v = val_of_node(x, n);
	rc = dec(x, &v, out, arg);
	if (!rc && where)
		*where = node_loc(x, n);
	path_pop(&x->path, old);
	return rc;
}

/* Environment readers: the same decoders on the value of 'var'. */
static const char *env_get(const struct env *e, const char *name)
{
	const char *const *p;
	size_t n = strlen(name);

	if (e->envp) {
		for (p = e->envp; *p; p++)
			if (!strncmp(*p, name, n) && (*p)[n] == '=')
				return *p + n + 1;
		return NULL;
	}
	return e->fn ? e->fn(name, e->ud) : NULL;
}

static int env_field(struct ctx *x, const char *var, decode_fn dec, void *out,
		     const void *arg, struct loc *where)
{
	const char *text = env_get(&x->env, var);
	struct val v;

	if (!text)
		return 0;
	v = val_of_env(var, text);
	if (dec(x, &v, out, arg))
		return -1;
	if (where)
		*where = v.loc;
	return 0;
}

static const char *home_dir(struct ctx *x)
{
	if (x->env.envp || x->env.fn)
		return env_get(&x->env, "HOME");
	return getenv("HOME");
}

/* Expands a leading "~/" with HOME; joins a relative path from the file to
 * the file's directory. Returns the path in the config's arena or NULL. */
static const char *resolve_path(struct ctx *x, const char *p, bool from_file,
				const struct loc *l)
{
	char *r;
	size_t n;

	if (p[0] == '~' && (p[1] == '/' || p[1] == '\0')) {
		const char *home = home_dir(x);

		if (!home || !*home) {
			fail_loc(x, l, "cannot expand \"~\" in \"%s\": HOME is not set", p);
			return NULL;
		}
		n = strlen(home) + strlen(p);
		r = arena_alloc(x->a, n + 1);
		if (!r) {
			oom(x);
			return NULL;
		}
		snprintf(r, n + 1, "%s%s", home, p + 1);
		return r;
	}
	if (!from_file || p[0] == '/' || p[0] == '\0' || !strcmp(x->c->base_dir, "."))
		return p;
	n = strlen(x->c->base_dir) + strlen(p) + 2;
	r = arena_alloc(x->a, n);
	if (!r) {
		oom(x);
		return NULL;
	}
	snprintf(r, n, "%s%s%s", x->c->base_dir,
		 x->c->base_dir[strlen(x->c->base_dir) - 1] == '/' ? "" : "/", p);
	return r;
}

/* ---- cluster ---- */

static int parse_cluster(struct ctx *x, const struct ynode *m)
{
	static const char *const keys[] = { "kubeconfig", "context", "in_cluster", NULL };
	struct config *c = x->c;
	const char *kc = NULL;

	if (expect_kind(x, m, Y_MAP) || check_keys(x, m, keys))
		return -1;
	x->cluster = node_loc(x, m);
	if (field(x, m, "kubeconfig", dec_string, &kc, NULL, &x->kubeconfig) ||
	    field(x, m, "context", dec_string, &c->context, NULL, &x->context) ||
	    field(x, m, "in_cluster", dec_bool, &c->in_cluster, NULL, &x->in_cluster))
		return -1;
	if (kc) {
		c->kubeconfig = resolve_path(x, kc, true, &x->kubeconfig);
		if (!c->kubeconfig)
			return -1;
	}
	return 0;
}

/* ---- node groups ---- */

static int parse_string_map(struct ctx *x, const struct ynode *m, struct kvlist *out,
			    const char *what)
{
	const struct ynode *c;
	size_t i = 0, old;

	if (expect_kind(x, m, Y_MAP))
		return -1;
	out->n = 0;
	out->items = m->n ? arena_calloc(x->a, m->n, sizeof(*out->items)) : NULL;
	if (m->n && !out->items)
		return oom(x);
	for (c = m->first; c; c = c->next, i++) {
		struct val v;
		int rc = 0;
		char buf[64];

		old = path_push_key(&x->path, c->key->text);
		v = val_of_node(x, c);
		if (!valid_qualified_name(c->key->text))
			rc = fail_node(x, c->key, "invalid %s key %s: expected [prefix/]name, name up to 63 characters of letters, digits, '-', '_' and '.'",
				       what, quoted(c->key->text, buf, sizeof(buf)));
		else if (c->kind != Y_SCALAR)
			rc = bad(x, &v, "a string");
		else if (!valid_label_value(val_is_null(&v) ? "" : c->text))
			rc = fail_node(x, c, "invalid %s value %s: up to 63 characters of letters, digits, '-', '_' and '.'",
				       what, quoted(c->text, buf, sizeof(buf)));
		path_pop(&x->path, old);
		if (rc)
			return -1;
		out->items[i].key = arena_strdup(x->a, c->key->text);
		out->items[i].value = arena_strdup(x->a, val_is_null(&v) ? "" : c->text);
		if (!out->items[i].key || !out->items[i].value)
			return oom(x);
	}
	out->n = i;
	return 0;
}

static const char *kv_find(const struct kvlist *l, const char *key)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->items[i].key, key))
			return l->items[i].value;
	return NULL;
}

static bool known_native_resource(const char *name)
{
	return !strncmp(name, "hugepages-", 10) ||
	       !strncmp(name, "attachable-volumes-", 19);
}

static int parse_allocatable(struct ctx *x, const struct ynode *m, struct resources *r)
{
	static const char *const native[] = { "cpu", "memory", "ephemeral-storage", "pods", NULL };
	const struct ynode *c;
	bool have_cpu = false, have_mem = false;
	size_t old;

	if (expect_kind(x, m, Y_MAP))
		return -1;
	r->pods = DEFAULT_PODS;
	r->ext = m->n ? arena_calloc(x->a, m->n, sizeof(*r->ext)) : NULL;
	if (m->n && !r->ext)
		return oom(x);
	for (c = m->first; c; c = c->next) {
		const char *name = c->key->text;
		struct val v;
		int rc;

		old = path_push_key(&x->path, name);
		v = val_of_node(x, c);
		if (!strcmp(name, "cpu")) {
			rc = val_quantity(x, &v, QUANTITY_MILLI, 0, &r->cpu_m);
			have_cpu = true;
		} else if (!strcmp(name, "memory")) {
			rc = val_quantity(x, &v, QUANTITY_UNIT, 0, &r->memory);
			have_mem = true;
		} else if (!strcmp(name, "ephemeral-storage")) {
			rc = val_quantity(x, &v, QUANTITY_UNIT, 0, &r->ephemeral);
		} else if (!strcmp(name, "pods")) {
			rc = val_quantity(x, &v, QUANTITY_UNIT, 0, &r->pods);
		} else if (!strchr(name, '/') && !known_native_resource(name)) {
			const char *hint = suggest(name, native);
			char buf[64];

			rc = fail_node(x, c->key, "unknown resource %s%s%s%s: extended resources need a domain prefix, like \"nvidia.com/gpu\"",
				       quoted(name, buf, sizeof(buf)),
				       hint ? " (did you mean \"" : "", hint ? hint : "",
				       hint ? "\"?)" : "");
		} else if (!valid_qualified_name(name)) {
			char buf[64];

			rc = fail_node(x, c->key, "invalid resource name %s",
				       quoted(name, buf, sizeof(buf)));
		} else {
			struct res_ext *e = &r->ext[r->n_ext];

			rc = val_quantity(x, &v, QUANTITY_UNIT, 0, &e->value);
			if (!rc) {
				e->name = arena_strdup(x->a, name);
				if (!e->name)
					rc = oom(x);
				r->n_ext++;
			}
		}
		path_pop(&x->path, old);
		if (rc)
			return -1;
	}
	if (!r->n_ext)
		r->ext = NULL;
	if (!have_cpu)
		return fail_node(x, m, "cpu is required");
	if (!have_mem)
		return fail_node(x, m, "memory is required");
	return 0;
}

static int parse_effect(const char *s, enum taint_effect *out)
{
	if (!strcmp(s, "NoSchedule"))
		*out = TAINT_NO_SCHEDULE;
	else if (!strcmp(s, "PreferNoSchedule"))
		*out = TAINT_PREFER_NO_SCHEDULE;
	else if (!strcmp(s, "NoExecute"))
		*out = TAINT_NO_EXECUTE;
	else
		return -1;
	return 0;
}

static int parse_taint(struct ctx *x, const struct ynode *m, struct taint *t)
{
	static const char *const keys[] = { "key", "value", "effect", NULL };
	static const char *const effects[] = { "NoSchedule", "PreferNoSchedule", "NoExecute", NULL };
	const struct ynode *n;
	const char *effect = NULL;
	char buf[64];
	size_t old;

	if (expect_kind(x, m, Y_MAP) || check_keys(x, m, keys))
		return -1;
	t->value = "";
	if (field(x, m, "key", dec_string, &t->key, NULL, NULL) ||
	    field(x, m, "value", dec_string, &t->value, NULL, NULL) ||
	    field(x, m, "effect", dec_string, &effect, NULL, NULL))
		return -1;
	if (!t->key)
		return fail_node(x, m, "key is required");
	if (!effect)
		return fail_node(x, m, "effect is required (NoSchedule, PreferNoSchedule or NoExecute)");
	if (!valid_qualified_name(t->key)) {
		n = map_get(m, "key");
		old = path_push_key(&x->path, "key");
		fail_node(x, n, "invalid taint key %s", quoted(t->key, buf, sizeof(buf)));
		path_pop(&x->path, old);
		return -1;
	}
	if (!valid_label_value(t->value)) {
		n = map_get(m, "value");
		old = path_push_key(&x->path, "value");
		fail_node(x, n, "invalid taint value %s: up to 63 characters of letters, digits, '-', '_' and '.'",
			  quoted(t->value, buf, sizeof(buf)));
		path_pop(&x->path, old);
		return -1;
	}
	if (parse_effect(effect, &t->effect)) {
		const char *hint = suggest(effect, effects);

		n = map_get(m, "effect");
		old = path_push_key(&x->path, "effect");
		if (hint && strcmp(hint, effect))
			fail_node(x, n, "unknown taint effect %s (did you mean \"%s\"?)",
				  quoted(effect, buf, sizeof(buf)), hint);
		else
			fail_node(x, n, "unknown taint effect %s: expected NoSchedule, PreferNoSchedule or NoExecute",
				  quoted(effect, buf, sizeof(buf)));
		path_pop(&x->path, old);
		return -1;
	}
	return 0;
}

/* Adds the selector's labels to the template's: a new node of the group
 * carries them. A template label that contradicts the selector is an error. */
static int merge_selector_labels(struct ctx *x, struct node_group *g,
				 const struct ynode *labels)
{
	struct kvlist *l = &g->tmpl.labels;
	struct kv *items;
	size_t i, n = l->n;

	for (i = 0; i < g->selector.n; i++) {
		const char *have = kv_find(l, g->selector.items[i].key);

		if (have && strcmp(have, g->selector.items[i].value)) {
			const struct ynode *c;
			size_t old = path_push_key(&x->path, "labels");

			for (c = labels->first; c; c = c->next)
				if (!strcmp(c->key->text, g->selector.items[i].key))
					break;
			path_push_key(&x->path, g->selector.items[i].key);
			fail_node(x, c, "is \"%s\" but the group's selector requires \"%s\": a new node would not belong to its group",
				  have, g->selector.items[i].value);
			path_pop(&x->path, old);
			return -1;
		}
		if (!have)
			n++;
	}
	if (n == l->n)
		return 0;
	items = arena_calloc(x->a, n, sizeof(*items));
	if (!items)
		return oom(x);
	if (l->n)
		memcpy(items, l->items, l->n * sizeof(*items));
	n = l->n;
	for (i = 0; i < g->selector.n; i++)
		if (!kv_find(l, g->selector.items[i].key))
			items[n++] = g->selector.items[i];
	l->items = items;
	l->n = n;
	return 0;
}

static int parse_template(struct ctx *x, const struct ynode *m, struct node_group *g)
{
	static const char *const keys[] = { "allocatable", "labels", "taints", NULL };
	const struct ynode *alloc, *labels, *taints, *c;
	size_t old, i = 0;
	int rc = 0;

	if (expect_kind(x, m, Y_MAP) || check_keys(x, m, keys))
		return -1;
	alloc = map_get(m, "allocatable");
	if (!alloc)
		return fail_node(x, m, "allocatable is required (at least cpu and memory)");
	old = path_push_key(&x->path, "allocatable");
	rc = parse_allocatable(x, alloc, &g->tmpl.allocatable);
	path_pop(&x->path, old);
	if (rc)
		return -1;

	labels = map_get(m, "labels");
	if (labels) {
		old = path_push_key(&x->path, "labels");
		rc = parse_string_map(x, labels, &g->tmpl.labels, "label");
		path_pop(&x->path, old);
		if (rc)
			return -1;
	}
	if (merge_selector_labels(x, g, labels))
		return -1;

	taints = map_get(m, "taints");
	if (!taints)
		return 0;
	old = path_push_key(&x->path, "taints");
	if (expect_kind(x, taints, Y_SEQ)) {
		path_pop(&x->path, old);
		return -1;
	}
	g->tmpl.taints = taints->n ? arena_calloc(x->a, taints->n, sizeof(struct taint)) : NULL;
	if (taints->n && !g->tmpl.taints) {
		path_pop(&x->path, old);
		return oom(x);
	}
	for (c = taints->first; c && !rc; c = c->next, i++) {
		size_t o2 = path_push_index(&x->path, i);

		rc = parse_taint(x, c, &g->tmpl.taints[i]);
		path_pop(&x->path, o2);
	}
	path_pop(&x->path, old);
	g->tmpl.n_taints = i;
	return rc;
}

static int parse_group(struct ctx *x, const struct ynode *m, struct node_group *g,
		       struct group_meta *gm)
{
	static const char *const keys[] = { "name", "min", "max", "price_per_hour",
					    "selector", "target", "template", NULL };
	static const struct int_range count = { 0, INT_MAX };
	static const struct int_range target = { -1, INT_MAX };
	const struct ynode *n;
	int64_t min = 0, max = -1, tgt = -1;
	size_t old;
	char buf[64];

	if (expect_kind(x, m, Y_MAP) || check_keys(x, m, keys))
		return -1;
	gm->node = node_loc(x, m);
	n = map_get(m, "name");
	if (!n)
		return fail_node(x, m, "name is required");
	if (field(x, m, "name", dec_string, &g->name, NULL, NULL))
		return -1;
	if (!valid_group_name(g->name)) {
		old = path_push_key(&x->path, "name");
		fail_node(x, n, "invalid node group name %s: up to %d lowercase letters, digits, '-' and '.', starting and ending with a letter or digit",
			  quoted(g->name, buf, sizeof(buf)), MAX_NAME);
		path_pop(&x->path, old);
		return -1;
	}
	if (field(x, m, "min", dec_int, &min, &count, &gm->min) ||
	    field(x, m, "max", dec_int, &max, &count, &gm->max) ||
	    field(x, m, "price_per_hour", dec_number, &g->price_per_hour, NULL, NULL) ||
	    field(x, m, "target", dec_int, &tgt, &target, NULL))
		return -1;
	if (!gm->min.path)
		gm->min = gm->node;
	if (max >= 0)
		gm->max_set = true;
	else
		gm->max = gm->node;
	g->min = (int)min;
	g->max = (int)max;
	g->target = (int)tgt;

	n = map_get(m, "selector");
	if (n) {
		int rc;

		old = path_push_key(&x->path, "selector");
		rc = parse_string_map(x, n, &g->selector, "label");
		if (!rc && g->selector.n == 0)
			rc = fail_node(x, n, "an empty selector would claim every node; leave it out for the default {%s: %s}",
				       GROUP_LABEL, g->name);
		path_pop(&x->path, old);
		if (rc)
			return -1;
	} else {
		g->selector.items = arena_calloc(x->a, 1, sizeof(struct kv));
		if (!g->selector.items)
			return oom(x);
		g->selector.items[0].key = GROUP_LABEL;
		g->selector.items[0].value = g->name;
		g->selector.n = 1;
	}

	n = map_get(m, "template");
	if (!n)
		return fail_node(x, m, "template is required (the allocatable resources of a new node)");
	old = path_push_key(&x->path, "template");
	if (parse_template(x, n, g)) {
		path_pop(&x->path, old);
		return -1;
	}
	path_pop(&x->path, old);
	return 0;
}

static int parse_groups(struct ctx *x, const struct ynode *s)
{
	struct config *c = x->c;
	const struct ynode *item;
	size_t i = 0, j, old;

	if (expect_kind(x, s, Y_SEQ))
		return -1;
	if (!s->n)
		return 0;
	c->groups = arena_calloc(x->a, s->n, sizeof(*c->groups));
	x->gm = arena_calloc(x->tmp, s->n, sizeof(*x->gm));
	if (!c->groups || !x->gm)
		return oom(x);
	for (item = s->first; item; item = item->next, i++) {
		int rc;

		old = path_push_index(&x->path, i);
		rc = parse_group(x, item, &c->groups[i], &x->gm[i]);
		for (j = 0; !rc && j < i; j++) {
			if (strcmp(c->groups[j].name, c->groups[i].name))
				continue;
			path_push_key(&x->path, "name");
			rc = fail_node(x, map_get(item, "name"),
				       "duplicate node group name \"%s\" (first at line %d)",
				       c->groups[i].name, x->gm[j].node.line);
		}
		path_pop(&x->path, old);
		if (rc)
			return -1;
		c->n_groups = i + 1;
	}
	return 0;
}

/* ---- policy ---- */

/* Fills 'p' from a scalar typed by the core schema (plain) or a string. */
static int param_scalar(struct ctx *x, const struct val *v, struct param *p)
{
	bool overflow;

	p->str = arena_strdup(x->a, v->text);
	if (!p->str)
		return oom(x);
	if (!v->plain) {
		p->type = PARAM_STRING;
		return 0;
	}
	switch (resolve_plain(v->text, &p->b, &p->i, &p->num, &overflow)) {
	case S_NULL:
		return fail_loc(x, &v->loc, "null is not a parameter value; write \"\" for an empty string, or leave the parameter out");
	case S_BOOL:
		p->type = PARAM_BOOL;
		break;
	case S_INT:
		if (overflow)
			return fail_loc(x, &v->loc, "integer %s does not fit in 64 bits", v->text);
		p->type = PARAM_INT;
		p->num = (double)p->i;
		break;
	case S_FLOAT:
		p->type = PARAM_NUMBER;
		break;
	case S_STR:
		p->type = PARAM_STRING;
		break;
	}
	return 0;
}

static int param_tree(struct ctx *x, const struct ynode *n, struct param *p)
{
	const struct ynode *c;
	size_t i = 0, old;
	struct val v;

	if (n->kind == Y_SCALAR) {
		v = val_of_node(x, n);
		return param_scalar(x, &v, p);
	}
	p->type = n->kind == Y_MAP ? PARAM_MAP : PARAM_LIST;
	p->items = n->n ? arena_calloc(x->a, n->n, sizeof(*p->items)) : NULL;
	if (n->n && !p->items)
		return oom(x);
	for (c = n->first; c; c = c->next, i++) {
		int rc;

		if (n->kind == Y_MAP) {
			p->items[i].key = arena_strdup(x->a, c->key->text);
			if (!p->items[i].key)
				return oom(x);
			old = path_push_key(&x->path, c->key->text);
		} else {
			old = path_push_index(&x->path, i);
		}
		rc = param_tree(x, c, &p->items[i]);
		path_pop(&x->path, old);
		if (rc)
			return -1;
		p->n_items = i + 1;
	}
	return 0;
}

static int parse_policy(struct ctx *x, const struct ynode *m)
{
	static const char *const keys[] = { "path", "params", "instructions", "memory", NULL };
	static const struct int_range positive = { 1, INT64_MAX };
	struct config *c = x->c;
	const struct ynode *params;
	const char *path = NULL;
	size_t old;
	int rc;

	if (expect_kind(x, m, Y_MAP) || check_keys(x, m, keys))
		return -1;
	x->policy = node_loc(x, m);
	if (field(x, m, "path", dec_string, &path, NULL, &x->policy_path) ||
	    field(x, m, "instructions", dec_int, &c->policy_instructions, &positive, NULL) ||
	    field(x, m, "memory", dec_bytes, &c->policy_memory, NULL, NULL))
		return -1;
	if (path) {
		c->policy_path = resolve_path(x, path, true, &x->policy_path);
		if (!c->policy_path)
			return -1;
	}
	params = map_get(m, "params");
	if (!params)
		return 0;
	old = path_push_key(&x->path, "params");
	rc = expect_kind(x, params, Y_MAP);
	if (!rc)
		rc = param_tree(x, params, &c->params);
	path_pop(&x->path, old);
	return rc;
}

/* ---- safety, intervals ---- */

static int parse_safety(struct ctx *x, const struct ynode *m)
{
	static const char *const keys[] = { "max_nodes_total", "max_scale_down_per_round",
					    "protected_pod_selector", NULL };
	static const struct int_range count = { 0, INT64_MAX };
	struct config *c = x->c;

	if (expect_kind(x, m, Y_MAP) || check_keys(x, m, keys))
		return -1;
	return field(x, m, "max_nodes_total", dec_int, &c->max_nodes_total, &count,
		     &x->max_nodes_total) ||
	       field(x, m, "max_scale_down_per_round", dec_int,
		     &c->max_scale_down_per_round, &count, NULL) ||
	       field(x, m, "protected_pod_selector", dec_string,
		     &c->protected_pod_selector, NULL, &x->protected_sel) ? -1 : 0;
}

static int parse_intervals(struct ctx *x, const struct ynode *m)
{
	static const char *const keys[] = { "reconcile", "batch_idle", "batch_max", NULL };
	struct config *c = x->c;

	if (expect_kind(x, m, Y_MAP) || check_keys(x, m, keys))
		return -1;
	return field(x, m, "reconcile", dec_duration, &c->reconcile_interval_ms, NULL, &x->reconcile) ||
	       field(x, m, "batch_idle", dec_duration, &c->batch_idle_ms, NULL, &x->batch_idle) ||
	       field(x, m, "batch_max", dec_duration, &c->batch_max_ms, NULL, &x->batch_max) ? -1 : 0;
}

static int section(struct ctx *x, const struct ynode *root, const char *key,
		   int (*parse)(struct ctx *, const struct ynode *))
{
	const struct ynode *n = map_get(root, key);
	size_t old;
	int rc;

	if (!n)
		return 0;
	old = path_push_key(&x->path, key);
	rc = parse(x, n);
	path_pop(&x->path, old);
	return rc;
}

static int parse_root(struct ctx *x, const struct ynode *root)
{
	static const char *const keys[] = { "cluster", "node_groups", "policy", "safety",
					    "intervals", NULL };

	if (!root || (root->kind == Y_SCALAR && root->plain && is_null_text(root->text)))
		return 0; /* an empty document: every default */
	x->root.line = root->line;
	x->root.col = root->col;
	if (expect_kind(x, root, Y_MAP) || check_keys(x, root, keys))
		return -1;
	return section(x, root, "cluster", parse_cluster) ||
	       section(x, root, "node_groups", parse_groups) ||
	       section(x, root, "policy", parse_policy) ||
	       section(x, root, "safety", parse_safety) ||
	       section(x, root, "intervals", parse_intervals) ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* Environment overrides                                               */

static int env_cluster_policy(struct ctx *x)
{
	static const struct int_range positive = { 1, INT64_MAX };
	static const struct int_range count = { 0, INT64_MAX };
	struct config *c = x->c;
	const char *kc = NULL, *pp = NULL;

	if (env_field(x, "LUASCALE_CLUSTER_KUBECONFIG", dec_string, &kc, NULL, &x->kubeconfig) ||
	    env_field(x, "LUASCALE_CLUSTER_CONTEXT", dec_string, &c->context, NULL, &x->context) ||
	    env_field(x, "LUASCALE_CLUSTER_IN_CLUSTER", dec_bool, &c->in_cluster, NULL, &x->in_cluster) ||
	    env_field(x, "LUASCALE_POLICY_PATH", dec_string, &pp, NULL, &x->policy_path) ||
	    env_field(x, "LUASCALE_POLICY_INSTRUCTIONS", dec_int, &c->policy_instructions, &positive, NULL) ||
	    env_field(x, "LUASCALE_POLICY_MEMORY", dec_bytes, &c->policy_memory, NULL, NULL) ||
	    env_field(x, "LUASCALE_SAFETY_MAX_NODES_TOTAL", dec_int, &c->max_nodes_total, &count, &x->max_nodes_total) ||
	    env_field(x, "LUASCALE_SAFETY_MAX_SCALE_DOWN_PER_ROUND", dec_int, &c->max_scale_down_per_round, &count, NULL) ||
	    env_field(x, "LUASCALE_SAFETY_PROTECTED_POD_SELECTOR", dec_string, &c->protected_pod_selector, NULL, &x->protected_sel) ||
	    env_field(x, "LUASCALE_INTERVALS_RECONCILE", dec_duration, &c->reconcile_interval_ms, NULL, &x->reconcile) ||
	    env_field(x, "LUASCALE_INTERVALS_BATCH_IDLE", dec_duration, &c->batch_idle_ms, NULL, &x->batch_idle) ||
	    env_field(x, "LUASCALE_INTERVALS_BATCH_MAX", dec_duration, &c->batch_max_ms, NULL, &x->batch_max))
		return -1;
	/* paths from the environment are relative to the working directory */
	if (kc && !(c->kubeconfig = resolve_path(x, kc, false, &x->kubeconfig)))
		return -1;
	if (pp && !(c->policy_path = resolve_path(x, pp, false, &x->policy_path)))
		return -1;
	return 0;
}

/* "LUASCALE_NODE_GROUPS_" + NAME upper-cased, '-' and '.' as '_'. */
static void group_env_name(const char *group, char *out, size_t outlen)
{
	size_t i, n = strlen(ENV_PREFIX_GROUPS);

	snprintf(out, outlen, "%s", ENV_PREFIX_GROUPS);
	for (i = 0; group[i] && n + 1 < outlen; i++)
		out[n++] = group[i] == '-' || group[i] == '.' ? '_' : upper(group[i]);
	out[n] = '\0';
}

static const char *const group_settings[] = { "_PRICE_PER_HOUR", "_MIN", "_MAX", NULL };

static int env_group(struct ctx *x, size_t gi)
{
	static const struct int_range count = { 0, INT_MAX };
	struct node_group *g = &x->c->groups[gi];
	struct group_meta *gm = &x->gm[gi];
	char var[160];
	size_t base;
	int64_t v;

	const char *name;

	group_env_name(g->name, var, sizeof(var));
	base = strlen(var);
	snprintf(var + base, sizeof(var) - base, "_MIN");
	v = g->min;
	if (!(name = arena_strdup(x->tmp, var)))
		return oom(x);
	if (env_field(x, name, dec_int, &v, &count, &gm->min))
		return -1;
	g->min = (int)v;
	snprintf(var + base, sizeof(var) - base, "_MAX");
	v = g->max;
	if (!(name = arena_strdup(x->tmp, var)))
		return oom(x);
	if (env_field(x, name, dec_int, &v, &count, &gm->max))
		return -1;
	if (gm->max.var)
		gm->max_set = true;
	g->max = (int)v;
	snprintf(var + base, sizeof(var) - base, "_PRICE_PER_HOUR");
	if (!(name = arena_strdup(x->tmp, var)))
		return oom(x);
	return env_field(x, name, dec_number, &g->price_per_hour, NULL, NULL);
}

/* With a listable environment: every LUASCALE_NODE_GROUPS_* variable must
 * name exactly one group and a known setting. */
static int env_check_group_vars(struct ctx *x)
{
	const char *const *p;
	size_t plen = strlen(ENV_PREFIX_GROUPS);

	for (p = x->env.envp; *p; p++) {
		const char *eq = strchr(*p, '='), *const *s;
		size_t len, slen = 0, i, matches = 0, first = 0;
		char var[160], gname[160];

		if (strncmp(*p, ENV_PREFIX_GROUPS, plen) || !eq)
			continue;
		len = (size_t)(eq - *p);
		snprintf(var, sizeof(var), "%.*s", (int)len, *p);
		for (s = group_settings; *s; s++) {
			slen = strlen(*s);
			if (len > plen + slen && !strcmp(var + len - slen, *s))
				break;
		}
		if (!*s)
			return errbuf_set(x->err, "%s: unknown node group setting; expected LUASCALE_NODE_GROUPS_<NAME>_MIN, _MAX or _PRICE_PER_HOUR",
					  var);
		for (i = 0; i < x->c->n_groups; i++) {
			group_env_name(x->c->groups[i].name, gname, sizeof(gname));
			if (strlen(gname) == len - slen && !strncmp(gname, var, len - slen)) {
				if (matches++ == 0)
					first = i;
				else
					return errbuf_set(x->err, "%s: ambiguous: both node groups \"%s\" and \"%s\" have this name in the environment",
							  var, x->c->groups[first].name,
							  x->c->groups[i].name);
			}
		}
		if (!matches) {
			char list[256];
			size_t n = 0;

			list[0] = '\0';
			for (i = 0; i < x->c->n_groups; i++) {
				int k = snprintf(list + n, sizeof(list) - n, "%s%s",
						 n ? ", " : "", x->c->groups[i].name);

				if (k < 0 || (size_t)k >= sizeof(list) - n)
					break;
				n += (size_t)k;
			}
			return errbuf_set(x->err, "%s: there is no node group named %.*s (node groups: %s)",
					  var, (int)(len - slen - plen), var + plen,
					  x->c->n_groups ? list : "none");
		}
	}
	return 0;
}

/* Sets top-level parameter 'key' (matched without regard to case) from
 * environment variable 'var'. */
static int env_set_param(struct ctx *x, const char *key, const char *var)
{
	struct param *params = &x->c->params, *p = NULL, *items;
	const char *text = env_get(&x->env, var);
	struct val v;
	size_t i;

	if (!text)
		return 0;
	for (i = 0; i < params->n_items; i++)
		if (!strcasecmp(params->items[i].key, key))
			p = &params->items[i];
	if (!p) {
		items = arena_calloc(x->a, params->n_items + 1, sizeof(*items));
		if (!items)
			return oom(x);
		if (params->n_items)
			memcpy(items, params->items, params->n_items * sizeof(*items));
		params->items = items;
		p = &items[params->n_items++];
		p->key = arena_strdup(x->a, key);
		if (!p->key)
			return oom(x);
	}
	var = arena_strdup(x->tmp, var);
	if (!var)
		return oom(x);
	v = val_of_env(var, text);
	p->items = NULL;
	p->n_items = 0;
	return param_scalar(x, &v, p);
}

static int env_params(struct ctx *x)
{
	size_t plen = strlen(ENV_PREFIX_PARAMS), i;
	char key[128], var[160];

	if (x->env.envp) {
		const char *const *p;

		for (p = x->env.envp; *p; p++) {
			const char *eq = strchr(*p, '=');
			size_t len;

			if (strncmp(*p, ENV_PREFIX_PARAMS, plen) || !eq)
				continue;
			len = (size_t)(eq - *p);
			if (len >= sizeof(var))
				return errbuf_set(x->err, "%.*s...: variable name too long", 40, *p);
			snprintf(var, sizeof(var), "%.*s", (int)len, *p);
			if (len == plen)
				return errbuf_set(x->err, "%s: the parameter name is missing (LUASCALE_POLICY_PARAMS_<KEY>)", var);
			for (i = plen; i < len; i++)
				key[i - plen] = lower(var[i]);
			key[len - plen] = '\0';
			if (env_set_param(x, key, var))
				return -1;
		}
		return 0;
	}
	/* lookups only: the parameters the file has */
	for (i = 0; i < x->c->params.n_items; i++) {
		const char *k = x->c->params.items[i].key;
		size_t j, n = strlen(k);

		if (plen + n >= sizeof(var))
			continue;
		memcpy(var, ENV_PREFIX_PARAMS, plen);
		for (j = 0; j < n; j++)
			var[plen + j] = upper(k[j]);
		var[plen + n] = '\0';
		if (env_set_param(x, k, var))
			return -1;
	}
	return 0;
}

static int apply_env(struct ctx *x)
{
	size_t i;

	if (!x->env.envp && !x->env.fn)
		return 0;
	if (env_cluster_policy(x))
		return -1;
	if (x->env.envp && env_check_group_vars(x))
		return -1;
	for (i = 0; i < x->c->n_groups; i++)
		if (env_group(x, i))
			return -1;
	return env_params(x);
}

/* ------------------------------------------------------------------ */
/* Checks across fields, after the environment                         */

static bool loc_set(const struct loc *l)
{
	return l->path || l->var;
}

static int check_all(struct ctx *x)
{
	struct config *c = x->c;
	const struct loc *where;
	struct errbuf se;
	int64_t sum = 0;
	size_t i;

	if (c->in_cluster && (*c->kubeconfig || *c->context)) {
		where = *c->kubeconfig ? &x->kubeconfig : &x->context;
		return fail_loc(x, where, "in_cluster is true, so kubeconfig and context must not be set: choose one way to reach the cluster");
	}
	if (!c->in_cluster && !(x->flags & CONFIG_OFFLINE) && (!*c->kubeconfig || !*c->context)) {
		const char *missing = !*c->kubeconfig ? "kubeconfig" : "context";

		return fail_loc(x, loc_set(&x->cluster) ? &x->cluster : &x->root,
				"%s%s is required unless in_cluster is true; luascale never falls back to a kubeconfig's current-context, on purpose: acting on the wrong cluster cannot be undone (set it here or with LUASCALE_CLUSTER_%s)",
				loc_set(&x->cluster) ? "" : "cluster.", missing,
				!*c->kubeconfig ? "KUBECONFIG" : "CONTEXT");
	}
	if (!*c->policy_path && !(x->flags & CONFIG_OFFLINE))
		return fail_loc(x, loc_set(&x->policy) ? &x->policy : &x->root,
				"%spath is required: the Lua policy to run (or set LUASCALE_POLICY_PATH)",
				loc_set(&x->policy) ? "" : "policy.");

	for (i = 0; i < c->n_groups; i++) {
		struct node_group *g = &c->groups[i];
		struct group_meta *gm = &x->gm[i];

		if (!gm->max_set)
			return fail_loc(x, &gm->node, "max is required (the largest number of nodes of group \"%s\")",
					g->name);
		if (g->max < g->min)
			return fail_loc(x, gm->max.var || !gm->min.var ? &gm->max : &gm->min,
					"max (%d) is less than min (%d) for node group \"%s\"",
					g->max, g->min, g->name);
		sum += g->min;
	}
	if (c->max_nodes_total > 0 && sum > c->max_nodes_total)
		return fail_loc(x, &x->max_nodes_total,
				"the node groups' minimums add up to %lld, more than max_nodes_total (%lld)",
				(long long)sum, (long long)c->max_nodes_total);
	if (c->batch_idle_ms > c->batch_max_ms) {
		where = x->batch_idle.var ? &x->batch_idle : x->batch_max.var ? &x->batch_max :
			loc_set(&x->batch_idle) ? &x->batch_idle :
			loc_set(&x->batch_max) ? &x->batch_max : &x->root;
		return fail_loc(x, where, "batch_idle (%lldms) is longer than batch_max (%lldms)",
				(long long)c->batch_idle_ms, (long long)c->batch_max_ms);
	}
	if (c->reconcile_interval_ms <= 0)
		return fail_loc(x, &x->reconcile, "the reconcile interval must be longer than 0s");
	if (*c->protected_pod_selector &&
	    label_selector_parse(c->arena, c->protected_pod_selector, &c->protected_pods, &se))
		return fail_loc(x, &x->protected_sel, "%s", se.msg);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Entry points                                                        */

static const char *dir_of(struct arena *a, const char *source)
{
	const char *slash = strrchr(source, '/');

	if (!slash)
		return ".";
	if (slash == source)
		return "/";
	return arena_strndup(a, source, (size_t)(slash - source));
}

struct config *config_parse_opts(const char *yaml, size_t len, const char *source,
				 const struct config_opts *opts, struct errbuf *err)
{
	struct arena *a = arena_new(), *tmp = arena_new();
	struct config *c = NULL;
	struct ynode *root;
	struct ctx x;
	int rc = -1;

	if (!source)
		source = "<config>";
	if (!a || !tmp) {
		errbuf_set(err, "%s: out of memory", source);
		goto out;
	}
	c = arena_alloc(a, sizeof(*c));
	if (!c) {
		errbuf_set(err, "%s: out of memory", source);
		goto out;
	}
	c->arena = a;
	c->source = arena_strdup(a, source);
	c->base_dir = dir_of(a, source);
	c->kubeconfig = "";
	c->context = "";
	c->policy_path = "";
	c->params.type = PARAM_MAP;
	c->policy_instructions = DEFAULT_INSTRUCTIONS;
	c->policy_memory = DEFAULT_MEMORY;
	c->max_scale_down_per_round = 1;
	c->protected_pod_selector = "";
	c->reconcile_interval_ms = 10000;
	c->batch_idle_ms = 1000;
	c->batch_max_ms = 10000;
	if (!c->source || !c->base_dir) {
		errbuf_set(err, "%s: out of memory", source);
		goto out;
	}

	memset(&x, 0, sizeof(x));
	x.c = c;
	x.a = a;
	x.tmp = tmp;
	x.src = c->source;
	x.err = err;
	x.root.line = 1;
	x.root.col = 1;
	if (opts) {
		x.env.fn = opts->getenv_fn;
		x.env.ud = opts->ud;
		x.env.envp = opts->envp;
		x.flags = opts->flags;
	}
	if (!yaml && len) {
		errbuf_set(err, "%s: no text", source);
		goto out;
	}
	if (build_tree(yaml ? yaml : "", len, c->source, tmp, &root, err) ||
	    parse_root(&x, root) || apply_env(&x) || check_all(&x))
		goto out;
	rc = 0;
out:
	arena_free(tmp);
	if (rc) {
		arena_free(a);
		return NULL;
	}
	return c;
}

struct config *config_parse(const char *yaml, size_t len, const char *source,
			    config_getenv_fn getenv_fn, void *ud, struct errbuf *err)
{
	struct config_opts o = { getenv_fn, ud, NULL, 0 };

	return config_parse_opts(yaml, len, source, &o, err);
}

struct config *config_load(const char *path, struct errbuf *err)
{
	struct config_opts o = { NULL, NULL, (const char *const *)environ, 0 };
	struct config *c = NULL;
	char *text = NULL;
	size_t len = 0, cap = 0, n;
	FILE *f = fopen(path, "rb");

	if (!f) {
		errbuf_set(err, "cannot read %s: %s", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		if (cap - len < 4096) {
			size_t ncap = cap ? cap * 2 : 16384;
			char *t = realloc(text, ncap);

			if (!t) {
				errbuf_set(err, "cannot read %s: out of memory", path);
				goto out;
			}
			text = t;
			cap = ncap;
		}
		n = fread(text + len, 1, cap - len, f);
		len += n;
		if (n == 0) {
			if (ferror(f)) {
				errbuf_set(err, "cannot read %s: %s", path, strerror(errno));
				goto out;
			}
			break;
		}
	}
	c = config_parse_opts(text, len, path, &o, err);
out:
	free(text);
	fclose(f);
	return c;
}

void config_free(struct config *c)
{
	if (c)
		arena_free(c->arena);
}

const struct param *param_get(const struct param *m, const char *key)
{
	size_t i;

	if (!m || m->type != PARAM_MAP)
		return NULL;
	for (i = 0; i < m->n_items; i++)
		if (!strcmp(m->items[i].key, key))
			return &m->items[i];
	return NULL;
}
