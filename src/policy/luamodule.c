/*
 * luamodule: the Lua C module "luascale.core" that busted specs load, so a
 * spec runs a policy through the same engine as the daemon: same config
 * parser, snapshot decoder, sandbox, limits and safety checks.
 * It only wires those together; the testing kit (lua/luascale/testing.lua)
 * builds the inputs.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>
#include <lua.h>

#include "buf.h"
#include "config.h"
#include "engine/decide.h"
#include "engine/reconciler.h"
#include "model.h"
#include "policy/host.h"

#define ENGINE_MT "luascale.core.engine"

struct engine {
	struct config *cfg;
	struct reconciler *rec;
};

static const char *no_env(const char *name, void *ud)
{
	(void)name;
	(void)ud;
	return NULL;
}

/* core.engine{config = TEXT, policy = PATH?} -> engine, or nil + message */
static int l_engine(lua_State *L)
{
	struct engine *e;
	struct errbuf err;
	const char *text, *policy = NULL;
	size_t len;

	luaL_checktype(L, 1, LUA_TTABLE);
	lua_getfield(L, 1, "config");
	text = luaL_checklstring(L, -1, &len);
	lua_getfield(L, 1, "policy");
	if (!lua_isnil(L, -1))
		policy = luaL_checkstring(L, -1);
	e = lua_newuserdatauv(L, sizeof(*e), 0);
	memset(e, 0, sizeof(*e));
	luaL_setmetatable(L, ENGINE_MT);
	e->cfg = config_parse(text, len, "config", no_env, NULL, &err);
	if (!e->cfg) {
		luaL_pushfail(L);
		lua_pushstring(L, err.msg);
		return 2;
	}
	e->rec = reconciler_new(e->cfg, policy, &err);
	if (!e->rec) {
		luaL_pushfail(L);
		lua_pushstring(L, err.msg);
		return 2;
	}
	return 1;
}

static struct engine *check_engine(lua_State *L)
{
	struct engine *e = luaL_checkudata(L, 1, ENGINE_MT);

	if (!e->rec)
		luaL_error(L, "engine was not loaded");
	return e;
}

/* Builds a snapshot from state JSON at 'arg' and the config's groups. NULL
 * with a message pushed (nil, message) on bad input. */
static struct snapshot *snapshot_arg(lua_State *L, struct engine *e, int arg, int64_t now)
{
	size_t len;
	const char *state = luaL_checklstring(L, arg, &len);
	struct snapshot *s = snapshot_new();
	struct errbuf err;

	if (!s)
		luaL_error(L, "out of memory");
	if (snapshot_add_json(s, state, len, "state", &err) < 0 ||
	    snapshot_set_groups(s, e->cfg->groups, e->cfg->n_groups, &err) < 0 ||
	    snapshot_finish(s, now, &err) < 0) {
		snapshot_free(s);
		luaL_pushfail(L);
		lua_pushstring(L, err.msg);
		return NULL;
	}
	return s;
}

/*
 * Marks groups backed off as the actuator would after a failed launch:
 * the table at 'arg' maps a group name to {until = unix seconds, reason =
 * text}. Raises on a name no group has or a malformed entry.
 */
static void backoff_arg(lua_State *L, struct snapshot *s, int arg)
{
	if (lua_isnoneornil(L, arg))
		return;
	luaL_checktype(L, arg, LUA_TTABLE);
	lua_pushnil(L);
	while (lua_next(L, arg)) {
		const char *name = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
		struct node_group *g = NULL;
		size_t i;

		for (i = 0; name && i < s->n_groups; i++)
			if (strcmp(s->groups[i].name, name) == 0)
				g = &s->groups[i];
		if (!g || !lua_istable(L, -1)) {
			snapshot_free(s);
			luaL_error(L, "backoff: expected {GROUP = {until = SECONDS, reason = TEXT}} for a configured group, got %s",
				   name ? name : luaL_typename(L, -2));
		}
		lua_getfield(L, -1, "until");
		g->backoff_until = (int64_t)lua_tointeger(L, -1);
		lua_getfield(L, -2, "reason");
		snprintf(g->backoff_reason, sizeof(g->backoff_reason), "%s",
			 lua_isstring(L, -1) ? lua_tostring(L, -1) : "launch failed");
		lua_pop(L, 3);
	}
}

/* engine:decide(state_json, now [, backoff]) -> JSON text of the decision,
 * or nil + message. 'backoff': see backoff_arg. */
static int l_decide(lua_State *L)
{
	struct engine *e = check_engine(L);
	int64_t now = (int64_t)luaL_optinteger(L, 3, (lua_Integer)time(NULL));
	struct snapshot *s = snapshot_arg(L, e, 2, now);
	struct decision d;
	struct errbuf err;
	struct buf out = BUF_INIT;

	if (!s)
		return 2;
	backoff_arg(L, s, 4);
	if (reconciler_run(e->rec, s, true, &d, NULL, &err) < 0) {
		snapshot_free(s);
		return luaL_error(L, "%s", err.msg);
	}
	decision_to_json(&d, &out);
	decision_free(&d);
	snapshot_free(s);
	if (out.oom) {
		buf_free(&out);
		return luaL_error(L, "out of memory");
	}
	lua_pushlstring(L, out.data, out.len);
	buf_free(&out);
	return 1;
}

/* engine:reload(path [, state_json, now]) -> true, dropped | nil, message.
 * The new policy is tried on the state (when given) and swapped in only if
 * it loads and runs; the store is carried over. */
static int l_reload(lua_State *L)
{
	struct engine *e = check_engine(L);
	const char *path = luaL_checkstring(L, 2);
	struct snapshot *s = NULL;
	struct errbuf err;
	char dropped[512];

	if (!lua_isnoneornil(L, 3)) {
		s = snapshot_arg(L, e, 3, (int64_t)luaL_optinteger(L, 4, (lua_Integer)time(NULL)));
		if (!s)
			return 2;
	}
	if (reconciler_reload(e->rec, path, s, dropped, sizeof(dropped), &err) < 0) {
		snapshot_free(s);
		luaL_pushfail(L);
		lua_pushstring(L, err.msg);
		return 2;
	}
	snapshot_free(s);
	lua_pushboolean(L, 1);
	lua_pushstring(L, dropped);
	return 2;
}

static int l_gc(lua_State *L)
{
	struct engine *e = luaL_checkudata(L, 1, ENGINE_MT);

	reconciler_free(e->rec);
	config_free(e->cfg);
	e->rec = NULL;
	e->cfg = NULL;
	return 0;
}

int luaopen_luascale_core(lua_State *L);

/* Entry point: require "luascale.core". */
int luaopen_luascale_core(lua_State *L)
{
	static const luaL_Reg methods[] = {
		{"decide", l_decide},
		{"reload", l_reload},
		{NULL, NULL},
	};
	static const luaL_Reg fns[] = {
		{"engine", l_engine},
		{NULL, NULL},
	};

	luaL_newmetatable(L, ENGINE_MT);
	luaL_newlib(L, methods);
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, l_gc);
	lua_setfield(L, -2, "__gc");
	lua_pop(L, 1);
	luaL_newlib(L, fns);
	return 1;
}
