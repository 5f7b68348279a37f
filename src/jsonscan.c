/*
 * jsonscan: a byte-at-a-time state machine over the top level of a JSON
 * object. Structure is checked at the top level (keys, colons, commas,
 * bracket pairing, string escapes); item contents are only delimited here
 * and are validated by whoever parses them. It caps what it holds: one
 * item (and a document that is not a List) at JSONSCAN_MAX_ITEM, the whole
 * input at JSONSCAN_MAX_TOTAL, and refuses a \u0000 escape in any string.
 */
#include "jsonscan.h"

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
	S_END,          /* after the final '}' */
	S_FAILED,
};

enum member {
	M_OTHER,
	M_KIND,
	M_ITEMS,
};

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
	buf_free(&sc->whole);
	free(sc);
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

int jsonscan_feed(struct jsonscan *sc, const char *data, size_t len,
		  struct errbuf *err)
{
	const char *p = data, *end = data + len;
	const char *item_start = NULL; /* where the current item starts in this chunk */
	bool closed;

	if (sc->st == S_FAILED)
		return errbuf_set(err, "scanner used after an error");
	if (len > sc->max_total || sc->off > sc->max_total - len) {
		char lim[32];

		sc->st = S_FAILED;
		return errbuf_set(err, "larger than %s in all, the most one state document may be",
				  size_str(sc->max_total, lim, sizeof(lim)));
	}
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
