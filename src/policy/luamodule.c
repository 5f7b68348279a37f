/*
 * luamodule: the Lua C module "luascale.core" that busted specs load, so a
 * spec runs a policy through the same engine as the daemon: same config
 * parser, snapshot decoder, sandbox, limits and safety checks — and can
 * replay a whole simulated day (sim/replay). It only wires those together; the testing kit (lua/luascale/testing.lua)
 * builds the inputs.
 */
#include <stdbool.h>
#include <stdint.h>
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
#include "sim/runs/replay.h"
#include "sim/world/scenario.h"

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

static void set_num(lua_State *L, const char *k, double v)
{
	lua_pushnumber(L, v);
	lua_setfield(L, -2, k);
}

static void set_u64(lua_State *L, const char *k, uint64_t v)
{
	lua_pushinteger(L, (lua_Integer)v);
	lua_setfield(L, -2, k);
}

/* Pushes series field 'k' as a list of n numbers, element i at a[i * stride + off]. */
static void push_column(lua_State *L, const char *k, size_t n, const void *base, bool ints,
			size_t stride, size_t off)
{
	size_t i;

	lua_createtable(L, (int)n, 0);
	for (i = 0; i < n; i++) {
		size_t at = i * stride + off;

		if (ints)
			lua_pushinteger(L, ((const int *)base)[at]);
		else
			lua_pushnumber(L, ((const double *)base)[at]);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	lua_setfield(L, -2, k);
}

/* The result of a run as a Lua table (see l_simulate). */
static void push_result(lua_State *L, const struct sim_scenario *sc, const struct sim_result *r)
{
	const struct sim_series *s = &r->series;
	const struct sim_violations *v = &r->v;
	size_t i, g;

	lua_newtable(L);
	set_num(L, "node_hours", r->node_hours);
	set_num(L, "cost", r->cost);
	set_num(L, "wait_p50", r->wait_p50);
	set_num(L, "wait_p95", r->wait_p95);
	set_num(L, "wait_max", r->wait_max);
	set_u64(L, "peak_nodes", (uint64_t)r->peak_nodes);
	set_u64(L, "launches", r->launches);
	set_u64(L, "unused", r->unused);
	set_u64(L, "removed", r->removed);
	set_u64(L, "evictions", r->evictions);
	set_u64(L, "killed", r->killed);
	set_u64(L, "lost", r->lost);
	set_u64(L, "protected", r->protected_killed);
	set_u64(L, "policy_failures", r->policy_failures);
	set_u64(L, "rejected", r->rejected);
	set_u64(L, "replaces", r->replaces);
	set_u64(L, "replaced", r->replaced);
	set_u64(L, "replace_failed", r->replace_failed);
	set_u64(L, "rounds", r->rounds);

	lua_newtable(L); /* violations */
	set_u64(L, "total", sim_violations_total(v));
	set_u64(L, "over_max", v->over_max);
	set_u64(L, "over_total", v->over_total);
	set_u64(L, "under_min", v->under_min);
	set_u64(L, "over_removals", v->over_removals);
	set_u64(L, "over_budget", v->over_budget);
	set_u64(L, "protected_hit", v->protected_hit);
	set_u64(L, "extra_instances", v->extra_instances);
	set_u64(L, "stuck_pending", v->stuck_pending);
	if (v->first[0]) {
		lua_pushstring(L, v->first);
		lua_setfield(L, -2, "first");
	}
	lua_setfield(L, -2, "violations");

	lua_newtable(L); /* series */
	lua_createtable(L, (int)s->n, 0);
	for (i = 0; i < s->n; i++) {
		lua_pushnumber(L, (double)s->t_ns[i] / 1e9);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	lua_setfield(L, -2, "t");
	push_column(L, "pending", s->n, s->pending, true, 1, 0);
	push_column(L, "util_cpu", s->n, s->util_cpu, false, 1, 0);
	push_column(L, "util_mem", s->n, s->util_mem, false, 1, 0);
	push_column(L, "cost", s->n, s->cost, false, 1, 0);
	lua_newtable(L); /* nodes[group] */
	for (g = 0; g < s->n_groups && g < sc->n_groups; g++)
		push_column(L, sc->groups[g].name, s->n, s->nodes, true, s->n_groups, g);
	lua_setfield(L, -2, "nodes");
	lua_newtable(L); /* booting[group] */
	for (g = 0; g < s->n_groups && g < sc->n_groups; g++)
		push_column(L, sc->groups[g].name, s->n, s->booting, true, s->n_groups, g);
	lua_setfield(L, -2, "booting");
	lua_setfield(L, -2, "series");
}

/*
 * core.simulate{scenario = PATH, policy = PATH [, seed = N]} -> result, or
 * nil + message. Replays the scenario in virtual time (sim/replay) and
 * returns the run summed up: node_hours, cost, wait_p50/p95/max (s),
 * peak_nodes, launches, removed, evictions, killed, lost, protected,
 * policy_failures, rejected, rounds, violations {total, over_max, ...,
 * first}, and series {t (s), pending, util_cpu, util_mem, cost,
 * nodes = {GROUP = {...}}, booting = {GROUP = {...}}}.
 */
static int l_simulate(lua_State *L)
{
	struct sim_replay_opts o;
	struct sim_scenario *sc;
	struct sim_result r;
	struct errbuf err;
	const char *scenario, *policy;

	luaL_checktype(L, 1, LUA_TTABLE);
	lua_getfield(L, 1, "scenario");
	lua_getfield(L, 1, "policy");
	lua_getfield(L, 1, "seed");
	scenario = luaL_checkstring(L, 2);
	policy = luaL_checkstring(L, 3);
	sc = sim_scenario_load(scenario, &err);
	if (!sc) {
		luaL_pushfail(L);
		lua_pushstring(L, err.msg);
		return 2;
	}
	if (!lua_isnil(L, 4)) {
		lua_Integer seed = lua_tointeger(L, 4);

		if (!lua_isinteger(L, 4) || seed < 0) {
			sim_scenario_free(sc);
			return luaL_error(L, "simulate: seed must be a whole number >= 0");
		}
		sc->seed = (uint64_t)seed;
	}
	memset(&o, 0, sizeof(o));
	o.sc = sc;
	o.policy_path = policy;
	if (sim_replay(&o, &r, &err) < 0) {
		sim_scenario_free(sc);
		luaL_pushfail(L);
		lua_pushstring(L, err.msg);
		return 2;
	}
	push_result(L, sc, &r);
	sim_result_free(&r);
	sim_scenario_free(sc);
	return 1;
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
		{"simulate", l_simulate},
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
