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
#include "model.h"
#include "policy/host.h"

#define ENGINE_MT "luascale.core.engine"

struct engine {
	struct config *cfg;
	struct policy *pol;
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
	struct sandbox_limits lim;
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
	lim.instructions = e->cfg->policy_instructions;
	lim.memory = e->cfg->policy_memory;
	e->pol = policy_load(policy ? policy : e->cfg->policy_path, NULL, &lim, &e->cfg->params, &err);
	if (!e->pol) {
		luaL_pushfail(L);
		lua_pushstring(L, err.msg);
		return 2;
	}
	return 1;
}

/* engine:decide(state_json, now) -> JSON text of the decision, or nil + message */
static int l_decide(lua_State *L)
{
	struct engine *e = luaL_checkudata(L, 1, ENGINE_MT);
	size_t len;
	const char *state = luaL_checklstring(L, 2, &len);
	int64_t now = (int64_t)luaL_optinteger(L, 3, (lua_Integer)time(NULL));
	struct snapshot *s = snapshot_new();
	struct safety_limits lim;
	struct drain_opts dopts;
	struct decision d;
	struct errbuf err;
	struct buf out = BUF_INIT;

	if (!e->pol)
		return luaL_error(L, "engine was not loaded");
	if (!s)
		return luaL_error(L, "out of memory");
	if (snapshot_add_json(s, state, len, "state", &err) < 0 ||
	    snapshot_set_groups(s, e->cfg->groups, e->cfg->n_groups, &err) < 0 ||
	    snapshot_finish(s, now, &err) < 0) {
		snapshot_free(s);
		luaL_pushfail(L);
		lua_pushstring(L, err.msg);
		return 2;
	}
	decide_limits(e->cfg, &lim, &dopts);
	{
		struct decide_opts o = {&lim, &dopts, true};

		if (engine_decide(e->pol, s, &o, &d, &err) < 0) {
			snapshot_free(s);
			return luaL_error(L, "%s", err.msg);
		}
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
	struct engine *e = luaL_checkudata(L, 1, ENGINE_MT);
	const char *path = luaL_checkstring(L, 2);
	struct snapshot *s = NULL;
	struct sandbox_limits lim;
	struct safety_limits slim;
	struct drain_opts dopts;
	struct policy *np;
	struct errbuf err;
	char dropped[512];

	if (!e->pol)
		return luaL_error(L, "engine was not loaded");
	if (!lua_isnoneornil(L, 3)) {
		size_t len;
		const char *state = luaL_checklstring(L, 3, &len);
		int64_t now = (int64_t)luaL_optinteger(L, 4, (lua_Integer)time(NULL));

		s = snapshot_new();
		if (!s)
			return luaL_error(L, "out of memory");
		if (snapshot_add_json(s, state, len, "state", &err) < 0 ||
		    snapshot_set_groups(s, e->cfg->groups, e->cfg->n_groups, &err) < 0 ||
		    snapshot_finish(s, now, &err) < 0) {
			snapshot_free(s);
			luaL_pushfail(L);
			lua_pushstring(L, err.msg);
			return 2;
		}
	}
	lim.instructions = e->cfg->policy_instructions;
	lim.memory = e->cfg->policy_memory;
	decide_limits(e->cfg, &slim, &dopts);
	np = policy_reload(e->pol, path, NULL, &lim, &e->cfg->params, s, &dopts, dropped,
			   sizeof(dropped), &err);
	snapshot_free(s);
	if (!np) {
		luaL_pushfail(L);
		lua_pushstring(L, err.msg);
		return 2;
	}
	policy_free(e->pol);
	e->pol = np;
	lua_pushboolean(L, 1);
	lua_pushstring(L, dropped);
	return 2;
}

static int l_gc(lua_State *L)
{
	struct engine *e = luaL_checkudata(L, 1, ENGINE_MT);

	policy_free(e->pol);
	config_free(e->cfg);
	e->pol = NULL;
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
