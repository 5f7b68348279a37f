/*
 * param_text: writes a policy's params (the merged table and its own
 * defaults) as bounded text, walking the Lua tables with raw access (no
 * metamethod, no allocation in Lua, so nothing can raise an error outside
 * a protected call). Loading and merging are policy/host's.
 */
#include "policy/param_text.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lua.h>

#include "buf.h"

#define DEPTH_MAX 4
#define ENTRIES_MAX 64 /* of one table; more are "..." */

static void render(lua_State *L, int idx, struct buf *b, int depth);

/* Appends 's' ('len' bytes) with control characters as '?'. */
static void put_clean(struct buf *b, const char *s, size_t len)
{
	size_t i, from = 0;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c != 0x7f)
			continue;
		buf_append(b, s + from, i - from);
		buf_append(b, "?", 1);
		from = i + 1;
	}
	buf_append(b, s + from, len - from);
}

static void render_number(lua_State *L, int idx, struct buf *b)
{
	char tmp[64];

	if (lua_isinteger(L, idx)) {
		buf_printf(b, "%lld", (long long)lua_tointeger(L, idx));
		return;
	}
	snprintf(tmp, sizeof(tmp), "%.14g", (double)lua_tonumber(L, idx));
	buf_puts(b, tmp);
	if (!strpbrk(tmp, ".eEni")) /* as Lua writes a float: 1.0, not 1 */
		buf_puts(b, ".0");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Is the table at 'idx' a list: keys 1..n and nothing else (n > 0)? */
static bool is_list(lua_State *L, int idx, lua_Unsigned n)
{
	lua_Unsigned count = 0;

	if (n == 0)
		return false;
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		lua_pop(L, 1);
		if (++count > n) {
			lua_pop(L, 1);
			return false;
		}
	}
	return count == n;
}

/* A map as {k = v, ...}, the entries sorted by their text. */
static void render_map(lua_State *L, int idx, struct buf *b, int depth)
{
	char *entries[ENTRIES_MAX];
	size_t n = 0, i, total = 0;
	bool more = false;

	lua_pushnil(L);
	while (lua_next(L, idx)) {
		struct buf e = BUF_INIT;

		if (n == ENTRIES_MAX || total > PARAM_TEXT_MAX) {
			more = true; /* the text is cut anyway: render no more */
			lua_pop(L, 2);
			break;
		}
		render(L, lua_gettop(L) - 1, &e, depth + 1);
		buf_puts(&e, " = ");
		render(L, lua_gettop(L), &e, depth + 1);
		lua_pop(L, 1);
		entries[n] = buf_take(&e);
		if (!entries[n]) {
			b->oom = 1;
			lua_pop(L, 1);
			break;
		}
		total += strlen(entries[n]) + 2;
		n++;
	}
	qsort(entries, n, sizeof(*entries), cmp_str);
	buf_puts(b, "{");
	for (i = 0; i < n; i++) {
		if (i)
			buf_puts(b, ", ");
		if (b->len < PARAM_TEXT_MAX)
			buf_puts(b, entries[i]);
		free(entries[i]);
	}
	buf_puts(b, more ? ", ...}" : "}");
}

static void render_table(lua_State *L, int idx, struct buf *b, int depth)
{
	lua_Unsigned n = lua_rawlen(L, idx), i;

	if (depth >= DEPTH_MAX || !lua_checkstack(L, 6)) {
		buf_puts(b, "{...}");
		return;
	}
	if (!is_list(L, idx, n)) {
		render_map(L, idx, b, depth);
		return;
	}
	buf_puts(b, "{");
	for (i = 1; i <= n && b->len < PARAM_TEXT_MAX; i++) {
		if (i > ENTRIES_MAX) {
			buf_puts(b, ", ...");
			break;
		}
		if (i > 1)
			buf_puts(b, ", ");
		lua_rawgeti(L, idx, (lua_Integer)i);
		render(L, lua_gettop(L), b, depth + 1);
		lua_pop(L, 1);
	}
	buf_puts(b, "}");
}

/* Appends the value at absolute index 'idx'. */
static void render(lua_State *L, int idx, struct buf *b, int depth)
{
	size_t len;
	const char *s;

	switch (lua_type(L, idx)) {
	case LUA_TSTRING:
		s = lua_tolstring(L, idx, &len);
		put_clean(b, s, len);
		break;
	case LUA_TNUMBER:
		render_number(L, idx, b);
		break;
	case LUA_TBOOLEAN:
		buf_puts(b, lua_toboolean(L, idx) ? "true" : "false");
		break;
	case LUA_TTABLE:
		render_table(L, idx, b, depth);
		break;
	case LUA_TNIL:
		buf_puts(b, "nil");
		break;
	default:
		buf_puts(b, lua_typename(L, lua_type(L, idx)));
		break;
	}
}

/* The text of the value at 'idx', cut to PARAM_TEXT_MAX; NULL when out of memory. */
static char *text_of(lua_State *L, int idx)
{
	struct buf b = BUF_INIT;
	size_t cut;

	render(L, idx, &b, 0);
	if (!b.oom && b.len > PARAM_TEXT_MAX - 1) {
		cut = PARAM_TEXT_MAX - 4;
		while (cut > 0 && ((unsigned char)b.data[cut] & 0xc0) == 0x80)
			cut--; /* not inside a UTF-8 sequence */
		b.len = cut;
		buf_puts(&b, "...");
	}
	if (b.oom) {
		buf_free(&b);
		return NULL;
	}
	return buf_take(&b);
}

void param_text_free(struct param_text *v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++) {
		free(v[i].key);
		free(v[i].value);
		free(v[i].dflt);
	}
	free(v);
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(((const struct param_text *)a)->key, ((const struct param_text *)b)->key);
}

ssize_t param_text_list(struct policy *p, struct param_text **out)
{
	lua_State *L = policy_push_params(p);
	int top = lua_gettop(L), merged = top - 1, dflts = top;
	struct param_text *v = NULL;
	size_t n = 0, cap = 0;
	ssize_t rc = -1;

	*out = NULL;
	if (lua_type(L, merged) != LUA_TTABLE) {
		rc = 0;
		goto out;
	}
	lua_pushnil(L);
	while (lua_next(L, merged)) {
		struct param_text *e;
		size_t len;
		const char *key;

		if (lua_type(L, -2) != LUA_TSTRING) {
			lua_pop(L, 1);
			continue;
		}
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			void *grown = realloc(v, nc * sizeof(*v));

			if (!grown) {
				lua_pop(L, 2);
				goto out;
			}
			v = grown;
			cap = nc;
		}
		e = &v[n++];
		memset(e, 0, sizeof(*e));
		key = lua_tolstring(L, -2, &len);
		{
			struct buf kb = BUF_INIT;

			put_clean(&kb, key, len);
			e->key = kb.oom ? NULL : buf_take(&kb);
			buf_free(&kb);
		}
		e->value = text_of(L, lua_gettop(L));
		lua_pop(L, 1);
		if (!e->key || !e->value) {
			lua_pop(L, 1);
			goto out;
		}
		if (lua_type(L, dflts) == LUA_TTABLE) {
			lua_pushvalue(L, -1);
			lua_rawget(L, dflts);
			if (!lua_isnil(L, -1) && !(e->dflt = text_of(L, lua_gettop(L)))) {
				lua_pop(L, 2);
				goto out;
			}
			lua_pop(L, 1);
		}
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_key);
	*out = v;
	v = NULL;
	rc = (ssize_t)n;
out:
	param_text_free(v, n);
	lua_settop(L, top - 2);
	return rc;
}
