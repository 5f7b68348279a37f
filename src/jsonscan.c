/*
 * jsonscan: a byte-at-a-time state machine over the top level of a JSON
 * object. Structure is checked at the top level (keys, colons, commas,
 * bracket pairing, string escapes); item contents are only delimited here
 * and are validated by whoever parses them, or, in parse mode, parsed
 * here by a recursive-descent parser into a cJSON-shaped tree held in
 * reused blocks (the same pass finds where the item ends). It caps what
 * it holds: one item (and a document that is not a List) at
 * JSONSCAN_MAX_ITEM, the whole input at JSONSCAN_MAX_TOTAL, and refuses a
 * \u0000 escape in any string.
 */
#include "jsonscan.h"

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

#define MAX_DEPTH 1024 /* nesting limit (cJSON's own is 1000) */
#define KEY_MAX 16     /* top-level keys we care about are short */
#define KIND_MAX 128

enum state {
	S_BEGIN,        /* before the top-level '{' */
	S_KEY_FIRST,    /* after '{': a key or '}' */
	S_KEY,          /* after ',': a key */
	S_COLON,        /* after a key */
	S_VALUE,        /* after ':' */
	S_SCALAR,       /* inside a top-level number or literal */
	S_NESTED,       /* inside a top-level object/array other than items */
	S_AFTER,        /* after a top-level value: ',' or '}' */
	S_ITEMS_FIRST,  /* after "items": [ : an item or ']' */
	S_ITEMS_NEXT,   /* after ',' in items: an item */
	S_ITEMS_AFTER,  /* after an item: ',' or ']' */
	S_ITEM,         /* inside an object/array item */
	S_ITEM_SCALAR,  /* inside a number/literal item */
	S_ITEM_PENDING, /* parse mode: an item goes on in the next chunk */
	S_END,          /* after the final '}' */
	S_FAILED,
};

enum member {
	M_OTHER,
	M_KIND,
	M_ITEMS,
};

#define TREE_BLOCK (64 * 1024)

/* Bump allocator for one item's tree: reset per item, blocks kept. */
struct tblock {
	struct tblock *next;
	size_t size, used;
	max_align_t data[];
};

struct tree {
	struct tblock *head, *cur;
};

static void tree_reset(struct tree *t)
{
	struct tblock *b;

	for (b = t->head; b; b = b->next)
		b->used = 0;
	t->cur = t->head;
}

static void tree_free(struct tree *t)
{
	struct tblock *b = t->head, *next;

	for (; b; b = next) {
		next = b->next;
		free(b);
	}
	t->head = t->cur = NULL;
}

static void *tree_alloc(struct tree *t, size_t size)
{
	struct tblock *b = t->cur, **link;
	void *p;

	size = (size + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	while (b && b->size - b->used < size)
		b = b->next;
	if (!b) {
		size_t want = size > TREE_BLOCK ? size : TREE_BLOCK;

		b = malloc(sizeof(*b) + want);
		if (!b)
			return NULL;
		b->size = want;
		b->used = 0;
		b->next = NULL;
		for (link = &t->head; *link; link = &(*link)->next)
			;
		*link = b;
	}
	t->cur = b;
	p = (char *)b->data + b->used;
	b->used += size;
	return p;
}

struct jsonscan {
	jsonscan_item_fn fn;
	void *ctx;
	bool keep_whole;

	enum state st;
	uint64_t off;       /* offset of the byte being looked at */
	int depth;          /* open containers */
	uint64_t kinds[MAX_DEPTH / 64]; /* bit per level: 1 = array */
	bool in_str, esc;
	int u_left;         /* hex digits of a \u escape still to come */
	bool u_nonzero;     /* one of them was not '0' */
	size_t max_item;
	uint64_t max_total;

	/* current top-level key and what its value is */
	char key[KEY_MAX + 1];
	size_t key_len;
	bool key_long;
	bool in_key;
	enum member member;
	char scalar[8];     /* start of a top-level scalar, to check "null" */
	size_t scalar_len;

	char kind[KIND_MAX + 1];
	size_t kind_len;
	bool kind_seen;
	bool in_kind;

	bool list;          /* an items array was seen */
	bool items_done;

	/* the item being delimited */
	size_t n_items;
	uint64_t item_off;
	bool item_str;      /* the item is a string */
	struct buf carry;   /* its bytes from earlier chunks */

	struct buf whole;   /* keep_whole: the document so far */

	/* parse mode */
	bool parse;
	struct tree tree;   /* the item's nodes and strings, reused */
	const cJSON *root;  /* during the callback */
	struct buf spare;   /* carry's twin: an item's bytes and what follows */
	size_t last_try;    /* carry length at the last parse attempt */
};

struct jsonscan *jsonscan_new(jsonscan_item_fn fn, void *ctx, bool keep_whole)
{
	struct jsonscan *sc = calloc(1, sizeof(*sc));

	if (!sc)
		return NULL;
	sc->fn = fn;
	sc->ctx = ctx;
	sc->keep_whole = keep_whole;
	sc->st = S_BEGIN;
	sc->max_item = JSONSCAN_MAX_ITEM;
	sc->max_total = JSONSCAN_MAX_TOTAL;
	return sc;
}

void jsonscan_set_limits(struct jsonscan *sc, size_t max_item, uint64_t max_total)
{
	sc->max_item = max_item ? max_item : JSONSCAN_MAX_ITEM;
	sc->max_total = max_total ? max_total : JSONSCAN_MAX_TOTAL;
}

/* "64 MiB" for a message. */
static const char *size_str(uint64_t n, char *out, size_t outlen)
{
	if (n >= (1u << 20) && n % (1u << 20) == 0)
		snprintf(out, outlen, "%llu MiB", (unsigned long long)(n >> 20));
	else
		snprintf(out, outlen, "%llu bytes", (unsigned long long)n);
	return out;
}

/* An item (or a whole single-object document) past max_item. */
static int fail_item_size(struct jsonscan *sc, struct errbuf *err)
{
	char lim[32];

	sc->st = S_FAILED;
	if (sc->list)
		return errbuf_set(err, "items[%zu] (at byte %llu): larger than %s, the most one object may be",
				  sc->n_items, (unsigned long long)sc->item_off,
				  size_str(sc->max_item, lim, sizeof(lim)));
	return errbuf_set(err, "larger than %s before any \"items\" array: a single object may be at most that",
			  size_str(sc->max_item, lim, sizeof(lim)));
}

void jsonscan_free(struct jsonscan *sc)
{
	if (!sc)
		return;
	buf_free(&sc->carry);
	buf_free(&sc->spare);
	buf_free(&sc->whole);
	tree_free(&sc->tree);
	free(sc);
}

void jsonscan_set_parse(struct jsonscan *sc, bool parse)
{
	sc->parse = parse;
}

const struct cJSON *jsonscan_item_tree(const struct jsonscan *sc)
{
	return sc->root;
}

const char *jsonscan_kind(const struct jsonscan *sc)
{
	return sc->kind_seen ? sc->kind : NULL;
}

bool jsonscan_is_list(const struct jsonscan *sc)
{
	return sc->list;
}

const char *jsonscan_whole(const struct jsonscan *sc, size_t *len)
{
	if (!sc->keep_whole || sc->list || sc->st != S_END)
		return NULL;
	*len = sc->whole.len;
	return sc->whole.data ? sc->whole.data : "";
}

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static const char *show(char c, char *tmp)
{
	if ((unsigned char)c >= 0x20 && (unsigned char)c < 0x7f)
		snprintf(tmp, 8, "'%c'", c);
	else
		snprintf(tmp, 8, "0x%02x", (unsigned char)c);
	return tmp;
}

static int fail(struct jsonscan *sc, struct errbuf *err, const char *what, char c)
{
	char tmp[8];

	sc->st = S_FAILED;
	if (c)
		return errbuf_set(err, "invalid JSON at byte %llu: %s, found %s",
				  (unsigned long long)sc->off, what, show(c, tmp));
	return errbuf_set(err, "invalid JSON at byte %llu: %s",
			  (unsigned long long)sc->off, what);
}

/* Opens a container; 'c' is '{' or '['. */
static int push(struct jsonscan *sc, char c, struct errbuf *err)
{
	if (sc->depth >= MAX_DEPTH)
		return fail(sc, err, "nesting too deep", 0);
	if (c == '[')
		sc->kinds[sc->depth / 64] |= (uint64_t)1 << (sc->depth % 64);
	else
		sc->kinds[sc->depth / 64] &= ~((uint64_t)1 << (sc->depth % 64));
	sc->depth++;
	return 0;
}

/* Closes a container with 'c' ('}' or ']'), checking it matches. */
static int pop(struct jsonscan *sc, char c, struct errbuf *err)
{
	bool array;

	if (sc->depth == 0)
		return fail(sc, err, "unbalanced bracket", c);
	sc->depth--;
	array = (sc->kinds[sc->depth / 64] >> (sc->depth % 64)) & 1;
	if (array != (c == ']'))
		return fail(sc, err, array ? "expected ']'" : "expected '}'", c);
	return 0;
}

/* Inside a string: handles escapes; returns true on the closing quote. */
static int string_byte(struct jsonscan *sc, char c, bool *closed, struct errbuf *err)
{
	*closed = false;
	if (sc->u_left) {
		if (c != '0')
			sc->u_nonzero = true;
		if (--sc->u_left == 0 && !sc->u_nonzero) {
			bool in_item = sc->st == S_ITEM;

			sc->st = S_FAILED;
			if (in_item)
				return errbuf_set(err, "items[%zu] (at byte %llu): a string holds \\u0000 (NUL), which no name, label or key can hold: cut at it, it would name another object",
						  sc->n_items, (unsigned long long)sc->off - 5);
			return errbuf_set(err, "at byte %llu: a string holds \\u0000 (NUL), which no name, label or key can hold: cut at it, it would name another object",
					  (unsigned long long)sc->off - 5);
		}
	}
	if (sc->esc) {
		sc->esc = false;
		if (c == 'u') {
			sc->u_left = 4;
			sc->u_nonzero = false;
		}
		return 0;
	}
	if (c == '\\') {
		sc->esc = true;
		return 0;
	}
	if (c == '"') {
		sc->in_str = false;
		*closed = true;
		return 0;
	}
	if ((unsigned char)c < 0x20)
		return fail(sc, err, "control character in a string", c);
	return 0;
}

static bool scalar_char(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-' ||
	       c == '+' || c == '.' || c == 'E';
}

/* The key just closed: decide what its value is. */
static void key_done(struct jsonscan *sc)
{
	sc->key[sc->key_len] = '\0';
	sc->member = M_OTHER;
	if (!sc->key_long && strcmp(sc->key, "kind") == 0)
		sc->member = M_KIND;
	else if (!sc->key_long && strcmp(sc->key, "items") == 0)
		sc->member = M_ITEMS;
}

/*
 * Ends the current item at chunk position 'end' (exclusive) and hands it
 * to the callback. 'start' is where the item began in this chunk (or the
 * chunk start when it began earlier and its prefix is in 'carry').
 */
static int emit(struct jsonscan *sc, const char *start, const char *end,
		struct errbuf *err)
{
	const char *data = start;
	size_t len = (size_t)(end - start);
	int rc;

	if (sc->carry.len + len > sc->max_item)
		return fail_item_size(sc, err);
	if (sc->carry.len) {
		if (buf_append(&sc->carry, start, len) < 0)
			return fail(sc, err, "out of memory", 0);
		data = sc->carry.data;
		len = sc->carry.len;
	}
	rc = sc->fn(sc->ctx, data, len, sc->n_items, sc->item_off, err);
	sc->carry.len = 0;
	sc->n_items++;
	if (rc < 0)
		sc->st = S_FAILED;
	return rc;
}

/* ---- parse mode: items parsed into a reused tree as they are delimited ---- */

#define ITEM_DEPTH 1000          /* cJSON's nesting limit */
#define NUM_MAX 63               /* longest number text (as cJSON) */

/* Byte classes: whitespace, and bytes that end a plain run in a string. */
enum { C_WS = 1, C_STR_STOP = 2, C_NUM = 4 };

static const unsigned char cls[256] = {
#define STOP3(a) [a] = C_STR_STOP, [a + 1] = C_STR_STOP, [a + 2] = C_STR_STOP, [a + 3] = C_STR_STOP
	STOP3(0), STOP3(4), [8] = C_STR_STOP, [9] = C_STR_STOP | C_WS,
	[10] = C_STR_STOP | C_WS, [11] = C_STR_STOP, [12] = C_STR_STOP,
	[13] = C_STR_STOP | C_WS, [14] = C_STR_STOP, [15] = C_STR_STOP,
	STOP3(16), STOP3(20), STOP3(24), STOP3(28),
#undef STOP3
	[' '] = C_WS, ['"'] = C_STR_STOP, ['\\'] = C_STR_STOP,
	['0'] = C_NUM, ['1'] = C_NUM, ['2'] = C_NUM, ['3'] = C_NUM, ['4'] = C_NUM,
	['5'] = C_NUM, ['6'] = C_NUM, ['7'] = C_NUM, ['8'] = C_NUM, ['9'] = C_NUM,
	['-'] = C_NUM, ['+'] = C_NUM, ['.'] = C_NUM, ['e'] = C_NUM, ['E'] = C_NUM,
};

enum pstatus { P_OK, P_MORE, P_ERROR };

/* One item's parse over a contiguous buffer. */
struct parser {
	struct jsonscan *sc;
	const char *start, *end;
	uint64_t base;        /* document offset of 'start' */
	int depth;
	enum pstatus status;
	struct errbuf *err;
};

static uint64_t at(const struct parser *P, const char *p)
{
	return P->base + (uint64_t)(p - P->start);
}

static cJSON *more(struct parser *P)
{
	P->status = P_MORE;
	return NULL;
}

/* "items[N]: invalid JSON at byte B: what" */
static cJSON *perr(struct parser *P, const char *p, const char *what)
{
	P->status = P_ERROR;
	errbuf_set(P->err, "items[%zu]: invalid JSON at byte %llu: %s", P->sc->n_items,
		   (unsigned long long)at(P, p), what);
	return NULL;
}

/* A closing bracket where the other one belongs: the scanner's message. */
static cJSON *perr_bracket(struct parser *P, const char *p, bool want_array)
{
	char tmp[8];

	P->status = P_ERROR;
	errbuf_set(P->err, "invalid JSON at byte %llu: %s, found %s",
		   (unsigned long long)at(P, p), want_array ? "expected ']'" : "expected '}'",
		   show(*p, tmp));
	return NULL;
}

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end) {
		if (*p == ' ') {
			uint64_t w;

			/* indentation: eight spaces at a time */
			while (end - p >= 8) {
				memcpy(&w, p, 8);
				if (w != 0x2020202020202020ULL)
					break;
				p += 8;
			}
			while (p < end && *p == ' ')
				p++;
			continue;
		}
		if (!(cls[(unsigned char)*p] & C_WS))
			break;
		p++;
	}
	return p;
}

static cJSON *new_node(struct parser *P, int type)
{
	cJSON *j = tree_alloc(&P->sc->tree, sizeof(*j));

	if (!j) {
		P->status = P_ERROR;
		errbuf_set(P->err, "out of memory");
		return NULL;
	}
	memset(j, 0, sizeof(*j));
	j->type = type;
	return j;
}

static int hex4(const char *p, unsigned *out)
{
	unsigned v = 0;
	int i;

	for (i = 0; i < 4; i++) {
		char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

static char *put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		*o++ = (char)cp;
	} else if (cp < 0x800) {
		*o++ = (char)(0xc0 | (cp >> 6));
		*o++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*o++ = (char)(0xe0 | (cp >> 12));
		*o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*o++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*o++ = (char)(0xf0 | (cp >> 18));
		*o++ = (char)(0x80 | ((cp >> 12) & 0x3f));
		*o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*o++ = (char)(0x80 | (cp & 0x3f));
	}
	return o;
}

/*
 * The string whose opening quote is at *pp: decoded into the tree (NUL-
 * terminated), *pp moved past the closing quote. Raw bytes are kept as
 * they are (as cJSON does); escapes are checked, \u0000 refused.
 */
static char *parse_str(struct parser *P, const char **pp)
{
	const char *q = *pp + 1, *end = P->end, *r;
	bool escaped = false;
	char *out, *o;

	/* find the closing quote, checking control bytes and escapes */
	for (r = q;;) {
		while (r < end && !(cls[(unsigned char)*r] & C_STR_STOP))
			r++;
		if (r >= end)
			return (char *)more(P);
		if (*r == '"')
			break;
		if (*r == '\\') {
			escaped = true;
			if (end - r < 2)
				return (char *)more(P);
			if (r[1] == 'u') {
				unsigned v;

				if (end - r < 6)
					return (char *)more(P);
				if (hex4(r + 2, &v) < 0)
					return (char *)perr(P, r, "invalid \\u escape");
				if (v == 0) {
					P->status = P_ERROR;
					errbuf_set(P->err, "items[%zu] (at byte %llu): a string holds \\u0000 (NUL), which no name, label or key can hold: cut at it, it would name another object",
						   P->sc->n_items, (unsigned long long)at(P, r));
					return NULL;
				}
				r += 6;
			} else {
				r += 2;
			}
			continue;
		}
		{
			char tmp[8];

			P->status = P_ERROR;
			errbuf_set(P->err, "invalid JSON at byte %llu: control character in a string, found %s",
				   (unsigned long long)at(P, r), show(*r, tmp));
			return NULL;
		}
	}
	out = tree_alloc(&P->sc->tree, (size_t)(r - q) + 1);
	if (!out) {
		P->status = P_ERROR;
		errbuf_set(P->err, "out of memory");
		return NULL;
	}
	*pp = r + 1;
	if (!escaped) {
		memcpy(out, q, (size_t)(r - q));
		out[r - q] = '\0';
		return out;
	}
	for (o = out; q < r;) {
		unsigned cp = 0, lo = 0;

		if (*q != '\\') {
			*o++ = *q++;
			continue;
		}
		switch (q[1]) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '/': *o++ = '/'; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u':
			hex4(q + 2, &cp);
			if (cp >= 0xdc00 && cp <= 0xdfff)
				return (char *)perr(P, q, "a \\u escape holds a lone low surrogate");
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (r - q < 12 || q[6] != '\\' || q[7] != 'u' || hex4(q + 8, &lo) < 0 ||
				    lo < 0xdc00 || lo > 0xdfff)
					return (char *)perr(P, q, "a \\u escape holds a high surrogate without its low half");
				cp = 0x10000 + (((cp & 0x3ff) << 10) | (lo & 0x3ff));
				q += 6;
			}
			o = put_utf8(o, cp);
			q += 6;
			continue;
		default:
			return (char *)perr(P, q, "invalid escape");
		}
		q += 2;
	}
	*o = '\0';
	return out;
}

static cJSON *parse_value(struct parser *P, const char **pp, bool in_array);

/* A literal (true, false, null) at *pp. */
static cJSON *parse_literal(struct parser *P, const char **pp, const char *word, int type)
{
	size_t n = strlen(word), have = (size_t)(P->end - *pp);
	cJSON *j;

	if (have < n) {
		if (memcmp(*pp, word, have) == 0)
			return more(P);
		return perr(P, *pp, "expected a value");
	}
	if (memcmp(*pp, word, n) != 0)
		return perr(P, *pp, "expected a value");
	if (!(j = new_node(P, type)))
		return NULL;
	j->valueint = type == cJSON_True;
	*pp += n;
	return j;
}

/* A number at *pp: what strtod reads of the number characters there
 * (cJSON's rule), all of them. */
static cJSON *parse_number(struct parser *P, const char **pp)
{
	const char *p = *pp, *q = p;
	char text[NUM_MAX + 1], *stop;
	double v = 0;
	bool simple = true;
	size_t n;
	cJSON *j;

	while (q < P->end && (cls[(unsigned char)*q] & C_NUM)) {
		if (*q < '0' || *q > '9')
			simple = false;
		q++;
	}
	if (q >= P->end)
		return more(P); /* it may go on */
	n = (size_t)(q - p);
	if (simple && n <= 15) {
		size_t i;
		int64_t iv = 0;

		for (i = 0; i < n; i++)
			iv = iv * 10 + (p[i] - '0');
		v = (double)iv;
	} else {
		if (n > NUM_MAX)
			return perr(P, p, "number too long");
		memcpy(text, p, n);
		text[n] = '\0';
		v = strtod(text, &stop);
		if (stop != text + n)
			return perr(P, p + (stop - text), "invalid number");
	}
	if (!(j = new_node(P, cJSON_Number)))
		return NULL;
	j->valuedouble = v;
	if (v >= (double)INT32_MAX)
		j->valueint = INT32_MAX;
	else if (v <= (double)INT32_MIN)
		j->valueint = INT32_MIN;
	else
		j->valueint = (int)v;
	*pp = q;
	return j;
}

/* An object or array whose bracket is at *pp. */
static cJSON *parse_container(struct parser *P, const char **pp, bool array)
{
	const char *p = *pp + 1, *end = P->end;
	cJSON *j, *last = NULL;

	if (++P->depth > ITEM_DEPTH)
		return perr(P, *pp, "nesting too deep");
	if (!(j = new_node(P, array ? cJSON_Array : cJSON_Object)))
		return NULL;
	p = skip_ws(p, end);
	if (p >= end)
		return more(P);
	if (*p == (array ? ']' : '}')) {
		p++;
		goto done;
	}
	for (;;) {
		cJSON *v;
		char *key = NULL;

		if (!array) {
			if (*p != '"') {
				if (*p == ']')
					return perr_bracket(P, p, false);
				return perr(P, p, "expected a key");
			}
			if (!(key = parse_str(P, &p)))
				return NULL;
			p = skip_ws(p, end);
			if (p >= end)
				return more(P);
			if (*p != ':')
				return perr(P, p, "expected ':'");
			p = skip_ws(p + 1, end);
			if (p >= end)
				return more(P);
		}
		if (!array && (*p == ']' || *p == '}')) {
			if (*p == ']')
				return perr_bracket(P, p, false);
			return perr(P, p, "expected a value");
		}
		if (!(v = parse_value(P, &p, array)))
			return NULL;
		v->string = key;
		if (last) {
			last->next = v;
			v->prev = last;
		} else {
			j->child = v;
		}
		last = v;
		p = skip_ws(p, end);
		if (p >= end)
			return more(P);
		if (*p == ',') {
			p = skip_ws(p + 1, end);
			if (p >= end)
				return more(P);
			continue;
		}
		if (*p == (array ? ']' : '}')) {
			p++;
			break;
		}
		if (*p == (array ? '}' : ']'))
			return perr_bracket(P, p, array);
		return perr(P, p, array ? "expected ',' or ']'" : "expected ',' or '}'");
	}
done:
	if (j->child)
		j->child->prev = last; /* cJSON: the first child's prev is the last */
	P->depth--;
	*pp = p;
	return j;
}

static cJSON *parse_value(struct parser *P, const char **pp, bool in_array)
{
	const char *p = *pp;
	cJSON *j;
	char *s;

	switch (*p) {
	case '{':
		return parse_container(P, pp, false);
	case '[':
		return parse_container(P, pp, true);
	case '"':
		if (!(s = parse_str(P, pp)))
			return NULL;
		if (!(j = new_node(P, cJSON_String)))
			return NULL;
		j->valuestring = s;
		return j;
	case 't':
		return parse_literal(P, pp, "true", cJSON_True);
	case 'f':
		return parse_literal(P, pp, "false", cJSON_False);
	case 'n':
		return parse_literal(P, pp, "null", cJSON_NULL);
	case '}':
		if (in_array)
			return perr_bracket(P, p, true);
		return perr(P, p, "expected a value");
	default:
		if ((*p >= '0' && *p <= '9') || *p == '-')
			return parse_number(P, pp);
		return perr(P, p, "expected a value");
	}
}

/*
 * Parses one item at the start of [data, data + len), document offset
 * 'base'. P_OK with the tree in sc->root and its length in *used, P_MORE
 * when the buffer ends inside it, P_ERROR with a message.
 */
static enum pstatus parse_item(struct jsonscan *sc, const char *data, size_t len,
			       uint64_t base, size_t *used, struct errbuf *err)
{
	struct parser P = {sc, data, data + len, base, 0, P_OK, err};
	const char *p = data;
	cJSON *root;

	tree_reset(&sc->tree);
	root = parse_value(&P, &p, true);
	if (!root)
		return P.status == P_OK ? P_ERROR : P.status;
	sc->root = root;
	*used = (size_t)(p - data);
	return P_OK;
}

/* Hands a parsed item to the callback. */
static int emit_tree(struct jsonscan *sc, const char *data, size_t len,
		     struct errbuf *err)
{
	int rc;

	rc = sc->fn(sc->ctx, data, len, sc->n_items, sc->item_off, err);
	sc->root = NULL;
	sc->n_items++;
	if (rc < 0)
		sc->st = S_FAILED;
	return rc;
}

static int scan_bytes(struct jsonscan *sc, const char *data, size_t len,
		      struct errbuf *err);

/*
 * Parse mode, an item begun in an earlier chunk: tries it on what 'carry'
 * holds once that doubled since the last try (so a huge item is parsed a
 * bounded number of times), or at the end ('final'). When it is complete
 * the bytes after it are scanned on.
 */
static int pending_try(struct jsonscan *sc, bool final, struct errbuf *err)
{
	size_t win, used = 0;
	enum pstatus ps;
	struct buf tmp;
	int rc;

	if (!final && sc->carry.len < 2 * sc->last_try && sc->carry.len < sc->max_item)
		return 0;
	win = sc->carry.len < sc->max_item ? sc->carry.len : sc->max_item;
	ps = parse_item(sc, sc->carry.data, win, sc->item_off, &used, err);
	if (ps == P_ERROR) {
		sc->st = S_FAILED;
		return -1;
	}
	if (ps == P_MORE) {
		if (sc->carry.len >= sc->max_item)
			return fail_item_size(sc, err);
		sc->last_try = sc->carry.len;
		return 0;
	}
	tmp = sc->spare;
	sc->spare = sc->carry;
	sc->carry = tmp;
	sc->carry.len = 0;
	if (emit_tree(sc, sc->spare.data, used, err) < 0)
		return -1;
	sc->st = S_ITEMS_AFTER;
	sc->off = sc->item_off + used;
	rc = scan_bytes(sc, sc->spare.data + used, sc->spare.len - used, err);
	sc->spare.len = 0;
	return rc;
}

/* Parse mode: an item starts at 'p' (its first byte checked). Returns the
 * bytes it took from [p, end), 0 when it goes on in the next chunk (kept
 * in 'carry'), or -1 on an error. */
static long start_item(struct jsonscan *sc, const char *p, const char *end,
		       struct errbuf *err)
{
	size_t avail = (size_t)(end - p), used = 0;
	size_t win = avail < sc->max_item ? avail : sc->max_item;
	enum pstatus ps;

	sc->item_off = sc->off;
	ps = parse_item(sc, p, win, sc->off, &used, err);
	if (ps == P_ERROR) {
		sc->st = S_FAILED;
		return -1;
	}
	if (ps == P_OK) {
		if (emit_tree(sc, p, used, err) < 0)
			return -1;
		sc->st = S_ITEMS_AFTER;
		return (long)used;
	}
	if (avail >= sc->max_item)
		return fail_item_size(sc, err);
	sc->carry.len = 0;
	if (buf_append(&sc->carry, p, avail) < 0)
		return fail(sc, err, "out of memory", 0);
	sc->last_try = avail;
	sc->st = S_ITEM_PENDING;
	return 0;
}

static int scan_bytes(struct jsonscan *sc, const char *data, size_t len,
		      struct errbuf *err)
{
	const char *p = data, *end = data + len;
	const char *item_start = NULL; /* where the current item starts in this chunk */
	bool closed;

	if (sc->st == S_ITEM || sc->st == S_ITEM_SCALAR)
		item_start = data;

	for (; p < end; p++, sc->off++) {
		char c = *p;

		/* strings first: they can appear in almost every state */
		if (sc->in_str) {
			if (string_byte(sc, c, &closed, err) < 0)
				return -1;
			if (sc->in_key) {
				if (!closed && sc->key_len < KEY_MAX)
					sc->key[sc->key_len++] = c;
				else if (!closed)
					sc->key_long = true;
				if (closed) {
					sc->in_key = false;
					key_done(sc);
					sc->st = S_COLON;
				}
			} else if (sc->in_kind) {
				if (!closed && sc->kind_len < KIND_MAX)
					sc->kind[sc->kind_len++] = c;
				if (closed) {
					sc->in_kind = false;
					sc->kind[sc->kind_len] = '\0';
					sc->kind_seen = true;
					sc->st = S_AFTER;
				}
			} else if (closed && sc->st == S_VALUE) {
				sc->st = S_AFTER;
			} else if (closed && sc->st == S_ITEM && sc->item_str) {
				if (emit(sc, item_start, p + 1, err) < 0)
					return -1;
				item_start = NULL;
				sc->st = S_ITEMS_AFTER;
			}
			continue;
		}

		switch (sc->st) {
		case S_BEGIN:
			if (is_ws(c))
				break;
			if (c != '{')
				return fail(sc, err, "expected a JSON object '{'", c);
			if (push(sc, c, err) < 0)
				return -1;
			sc->st = S_KEY_FIRST;
			break;
		case S_KEY_FIRST:
		case S_KEY:
			if (is_ws(c))
				break;
			if (c == '}' && sc->st == S_KEY_FIRST) {
				if (pop(sc, c, err) < 0)
					return -1;
				sc->st = S_END;
				break;
			}
			if (c != '"')
				return fail(sc, err, "expected a key", c);
			sc->in_str = sc->in_key = true;
			sc->key_len = 0;
			sc->key_long = false;
			break;
		case S_COLON:
			if (is_ws(c))
				break;
			if (c != ':')
				return fail(sc, err, "expected ':'", c);
			sc->st = S_VALUE;
			break;
		case S_VALUE:
			if (is_ws(c))
				break;
			if (c == '"') {
				sc->in_str = true;
				if (sc->member == M_KIND) {
					sc->in_kind = true;
					sc->kind_len = 0;
				} else if (sc->member == M_ITEMS) {
					return fail(sc, err, "\"items\" must be an array", c);
				}
			} else if (c == '[' && sc->member == M_ITEMS) {
				if (sc->list)
					return fail(sc, err, "a second \"items\" array", 0);
				if (push(sc, c, err) < 0)
					return -1;
				sc->list = true;
				buf_free(&sc->whole);
				sc->st = S_ITEMS_FIRST;
			} else if (c == '{' || c == '[') {
				if (sc->member != M_OTHER)
					return fail(sc, err, sc->member == M_KIND ?
						    "\"kind\" must be a string" :
						    "\"items\" must be an array", c);
				if (push(sc, c, err) < 0)
					return -1;
				sc->st = S_NESTED;
			} else if (scalar_char(c)) {
				sc->scalar_len = 0;
				sc->scalar[sc->scalar_len++] = c;
				sc->st = S_SCALAR;
			} else {
				return fail(sc, err, "expected a value", c);
			}
			break;
		case S_SCALAR:
			if (scalar_char(c)) {
				if (sc->scalar_len < sizeof(sc->scalar) - 1)
					sc->scalar[sc->scalar_len++] = c;
				break;
			}
			sc->scalar[sc->scalar_len] = '\0';
			if (sc->member != M_OTHER && strcmp(sc->scalar, "null") != 0)
				return fail(sc, err, sc->member == M_KIND ?
					    "\"kind\" must be a string" :
					    "\"items\" must be an array", 0);
			sc->st = S_AFTER;
			/* fall through: this byte belongs to what follows */
			/* FALLTHROUGH */
		case S_AFTER:
			if (is_ws(c))
				break;
			if (c == ',') {
				sc->st = S_KEY;
			} else if (c == '}') {
				if (pop(sc, c, err) < 0)
					return -1;
				sc->st = S_END;
			} else {
				return fail(sc, err, "expected ',' or '}'", c);
			}
			break;
		case S_NESTED:
			if (c == '"') {
				sc->in_str = true;
			} else if (c == '{' || c == '[') {
				if (push(sc, c, err) < 0)
					return -1;
			} else if (c == '}' || c == ']') {
				if (pop(sc, c, err) < 0)
					return -1;
				if (sc->depth == 1)
					sc->st = S_AFTER;
			}
			break;
		case S_ITEMS_FIRST:
		case S_ITEMS_NEXT:
			if (is_ws(c))
				break;
			if (c == ']' && sc->st == S_ITEMS_FIRST) {
				if (pop(sc, c, err) < 0)
					return -1;
				sc->items_done = true;
				sc->st = S_AFTER;
				break;
			}
			if (sc->parse) {
				long used;

				if (c != '{' && c != '[' && c != '"' && !scalar_char(c))
					return fail(sc, err, "expected an item", c);
				used = start_item(sc, p, end, err);
				if (used < 0)
					return -1;
				if (used == 0) { /* the rest of the chunk is the item's */
					sc->off += (uint64_t)(end - p);
					return 0;
				}
				p += used - 1;
				sc->off += (uint64_t)used - 1;
				break;
			}
			item_start = p;
			sc->item_off = sc->off;
			sc->item_str = false;
			if (c == '{' || c == '[') {
				if (push(sc, c, err) < 0)
					return -1;
				sc->st = S_ITEM;
			} else if (c == '"') {
				sc->in_str = true;
				sc->item_str = true;
				sc->st = S_ITEM;
			} else if (scalar_char(c)) {
				sc->st = S_ITEM_SCALAR;
			} else {
				return fail(sc, err, "expected an item", c);
			}
			break;
		case S_ITEM:
			if (c == '"') {
				sc->in_str = true;
			} else if (c == '{' || c == '[') {
				if (push(sc, c, err) < 0)
					return -1;
			} else if (c == '}' || c == ']') {
				if (pop(sc, c, err) < 0)
					return -1;
				if (sc->depth == 2) {
					if (emit(sc, item_start, p + 1, err) < 0)
						return -1;
					item_start = NULL;
					sc->st = S_ITEMS_AFTER;
				}
			}
			break;
		case S_ITEM_SCALAR:
			if (scalar_char(c))
				break;
			if (emit(sc, item_start, p, err) < 0)
				return -1;
			item_start = NULL;
			sc->st = S_ITEMS_AFTER;
			/* FALLTHROUGH */
		case S_ITEMS_AFTER:
			if (is_ws(c))
				break;
			if (c == ',') {
				sc->st = S_ITEMS_NEXT;
			} else if (c == ']') {
				if (pop(sc, c, err) < 0)
					return -1;
				sc->items_done = true;
				sc->st = S_AFTER;
			} else {
				return fail(sc, err, "expected ',' or ']' after an item", c);
			}
			break;
		case S_END:
			if (!is_ws(c))
				return fail(sc, err, "unexpected data after the document", c);
			break;
		case S_ITEM_PENDING: /* handled before the loop */
		case S_FAILED:
			return errbuf_set(err, "scanner used after an error");
		}
	}
	/* an item continues in the next chunk: keep what we have of it */
	if (item_start && (sc->st == S_ITEM || sc->st == S_ITEM_SCALAR)) {
		if (sc->carry.len + (size_t)(end - item_start) > sc->max_item)
			return fail_item_size(sc, err);
		if (buf_append(&sc->carry, item_start, (size_t)(end - item_start)) < 0)
			return fail(sc, err, "out of memory", 0);
	}
	return 0;
}

int jsonscan_feed(struct jsonscan *sc, const char *data, size_t len,
		  struct errbuf *err)
{
	if (sc->st == S_FAILED)
		return errbuf_set(err, "scanner used after an error");
	if (len > sc->max_total || sc->off > sc->max_total - len) {
		char lim[32];

		sc->st = S_FAILED;
		return errbuf_set(err, "larger than %s in all, the most one state document may be",
				  size_str(sc->max_total, lim, sizeof(lim)));
	}
	if (sc->st == S_ITEM_PENDING) {
		if (buf_append(&sc->carry, data, len) < 0)
			return fail(sc, err, "out of memory", 0);
		sc->off += len;
		return pending_try(sc, false, err);
	}
	if (scan_bytes(sc, data, len, err) < 0)
		return -1;
	if (sc->keep_whole && !sc->list) {
		if (sc->whole.len + len > sc->max_item)
			return fail_item_size(sc, err);
		if (buf_append(&sc->whole, data, len) < 0)
			return fail(sc, err, "out of memory", 0);
	}
	return 0;
}

int jsonscan_end(struct jsonscan *sc, struct errbuf *err)
{
	if (sc->st == S_FAILED)
		return errbuf_set(err, "scanner used after an error");
	if (sc->st == S_ITEM_PENDING && pending_try(sc, true, err) < 0)
		return -1;
	if (sc->st == S_ITEM_SCALAR) {
		/* a number item right at the end cannot be complete: ']' is missing */
		sc->st = S_ITEMS_AFTER;
	}
	if (sc->st == S_END)
		return 0;
	sc->st = S_FAILED;
	if (sc->off == 0)
		return errbuf_set(err, "empty document");
	if (sc->list && !sc->items_done)
		return errbuf_set(err, "unexpected end of input at byte %llu (truncated inside items[%zu])",
				  (unsigned long long)sc->off, sc->n_items);
	return errbuf_set(err, "unexpected end of input at byte %llu (truncated document)",
			  (unsigned long long)sc->off);
}
