/*
 * store: deep copy of plain Lua data between two states. The source is
 * only read (raw access); the target is written inside a protected call so
 * that running out of memory there is an error, not a crash. Shared tables
 * and cycles are copied once and stay shared.
 */
#include "policy/store.h"

#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#define STORE_MAX_DEPTH 32
/* Work units: one per entry copied, and one per this many string bytes. */
#define STORE_BYTES_PER_UNIT 16

struct copy_ctx {
	lua_State *from;
	int idx;
	int seen;        /* index in 'to' of the table: source table -> its copy */
	int64_t work;
	int64_t max_work;
	char *dropped;
	size_t dropped_len;
	char path[256];
};

static void note_dropped(struct copy_ctx *c, const char *what)
{
	size_t used;

	if (!c->dropped || c->dropped_len == 0)
		return;
	used = strlen(c->dropped);
	if (used + 1 >= c->dropped_len)
		return;
	snprintf(c->dropped + used, c->dropped_len - used, "%s%s (%s)", used ? ", " : "",
		 c->path, what);
}

/* Appends ".key" or "[n]" to the path; returns the old length to restore. */
static size_t path_push(struct copy_ctx *c, lua_State *from, int key)
{
	size_t old = strlen(c->path);

	if (lua_type(from, key) == LUA_TSTRING)
		snprintf(c->path + old, sizeof(c->path) - old, ".%s", lua_tostring(from, key));
	else if (lua_isinteger(from, key))
		snprintf(c->path + old, sizeof(c->path) - old, "[%lld]",
			 (long long)lua_tointeger(from, key));
	else
		snprintf(c->path + old, sizeof(c->path) - old, "[%s]", luaL_typename(from, key));
	return old;
}

/* Counts 'units' of work; raises in 'to' past the limit. */
static void spend(struct copy_ctx *c, lua_State *to, int64_t units)
{
	c->work += units;
	if (c->max_work > 0 && c->work > c->max_work)
		luaL_error(to, "the store is larger than the policy's instruction budget allows to copy (%I units of work at %s)",
			   (lua_Integer)c->max_work, c->path);
}

/* Pushes a copy of from[i] onto 'to'; returns 0, or -1 when the value is
 * not data (nothing pushed). */
static int copy_value(struct copy_ctx *c, lua_State *to, int i, int depth)
{
	lua_State *from = c->from;

	spend(c, to, 1);
	switch (lua_type(from, i)) {
	case LUA_TNIL:
		lua_pushnil(to);
		return 0;
	case LUA_TBOOLEAN:
		lua_pushboolean(to, lua_toboolean(from, i));
		return 0;
	case LUA_TNUMBER:
		if (lua_isinteger(from, i))
			lua_pushinteger(to, lua_tointeger(from, i));
		else
			lua_pushnumber(to, lua_tonumber(from, i));
		return 0;
	case LUA_TSTRING: {
		size_t len;
		const char *s = lua_tolstring(from, i, &len);

		spend(c, to, (int64_t)(len / STORE_BYTES_PER_UNIT));
		lua_pushlstring(to, s, len);
		return 0;
	}
	case LUA_TTABLE:
		break;
	default:
		note_dropped(c, lua_typename(from, lua_type(from, i)));
		return -1;
	}
	luaL_checkstack(to, 4, "store copy");
	/* a table already copied (shared, or an ancestor: a cycle) */
	lua_pushlightuserdata(to, (void *)lua_topointer(from, i));
	if (lua_rawget(to, c->seen) == LUA_TTABLE)
		return 0;
	lua_pop(to, 1);
	if (depth >= STORE_MAX_DEPTH) {
		note_dropped(c, "nested too deep");
		return -1;
	}
	i = lua_absindex(from, i);
	if (!lua_checkstack(from, 4))
		luaL_error(to, "store copy: out of stack");
	lua_newtable(to);
	lua_pushlightuserdata(to, (void *)lua_topointer(from, i));
	lua_pushvalue(to, -2);
	lua_rawset(to, c->seen);
	lua_pushnil(from);
	while (lua_next(from, i)) {
		size_t old = path_push(c, from, -2);
		int t = lua_type(from, -2);

		/* keys: strings, numbers, booleans (tables as keys are not data) */
		if (t == LUA_TSTRING || t == LUA_TNUMBER || t == LUA_TBOOLEAN) {
			copy_value(c, to, -2, depth + 1);
			if (copy_value(c, to, -1, depth + 1) == 0)
				lua_rawset(to, -3);
			else
				lua_pop(to, 1);
		} else {
			note_dropped(c, "a key that is not a string, number or boolean");
		}
		c->path[old] = '\0';
		lua_pop(from, 1);
	}
	return 0;
}

static int copy_protected(lua_State *to)
{
	struct copy_ctx *c = lua_touserdata(to, 1);

	lua_settop(to, 0);
	lua_newtable(to); /* 1: seen */
	c->seen = 1;
	if (copy_value(c, to, c->idx, 0) < 0)
		lua_newtable(to);
	return 1;
}

int store_copy(lua_State *from, int idx, lua_State *to, int64_t max_work,
	       char *dropped, size_t dropped_len, struct errbuf *err)
{
	struct copy_ctx c;
	int status, from_top = lua_gettop(from);

	memset(&c, 0, sizeof(c));
	c.from = from;
	c.idx = lua_absindex(from, idx);
	c.max_work = max_work;
	c.dropped = dropped;
	c.dropped_len = dropped_len;
	snprintf(c.path, sizeof(c.path), "store");
	if (dropped && dropped_len)
		dropped[0] = '\0';
	if (!lua_istable(from, c.idx))
		return errbuf_set(err, "the store is not a table");
	lua_pushcfunction(to, copy_protected);
	lua_pushlightuserdata(to, &c);
	status = lua_pcall(to, 1, 1, 0);
	lua_settop(from, from_top); /* a failed copy leaves its walk there */
	if (status != LUA_OK) {
		if (status == LUA_ERRMEM || lua_type(to, -1) != LUA_TSTRING)
			errbuf_set(err, "cannot copy the store: it does not fit in the policy's memory limit");
		else
			errbuf_set(err, "cannot copy the store: %s", lua_tostring(to, -1));
		lua_pop(to, 1);
		return -1;
	}
	return 0;
}
