/*
 * host: loads a policy into its sandbox, merges its parameters, runs
 * reconcile() on a cluster view and has plan_decode.c read the plan it
 * returns (raw access only, so no policy code runs outside the budget).
 * Safety checks are not done here.
 */
#include "policy/host.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>
#include <lua.h>

#include "policy/plan_decode.h"
#include "policy/store.h"
#include "policy/view.h"

struct policy {
	struct sandbox *sb;
	char path[PATH_MAX];
	int module_ref;
	int params_ref;
	int store_ref;
	bool notes; /* are plan:explain notes read */
};

void policy_set_notes(struct policy *p, bool wanted)
{
	p->notes = wanted;
}

const char *policy_default_lib_dir(void)
{
	const char *env = getenv("LUASCALE_LUA_DIR");

	return env && *env ? env : LUASCALE_LUA_DIR;
}

const char *policy_path(const struct policy *p)
{
	return p->path;
}

struct lua_State *policy_push_params(struct policy *p)
{
	lua_State *L = sandbox_state(p->sb);

	/* the module's "params" found by walking it: nothing allocated, so
	 * nothing can raise an error outside a protected call */
	lua_rawgeti(L, LUA_REGISTRYINDEX, p->params_ref);
	lua_pushnil(L);
	lua_rawgeti(L, LUA_REGISTRYINDEX, p->module_ref);
	lua_pushnil(L);
	while (lua_next(L, -2)) { /* merged, found, module, key, value */
		if (lua_type(L, -2) == LUA_TSTRING && strcmp(lua_tostring(L, -2), "params") == 0) {
			lua_replace(L, -4);
			lua_pop(L, 1);
			break;
		}
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	return L;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- parameters ---- */

static void push_param(lua_State *L, const struct param *p)
{
	size_t i;

	switch (p->type) {
	case PARAM_STRING:
		lua_pushstring(L, p->str);
		break;
	case PARAM_INT:
		lua_pushinteger(L, (lua_Integer)p->i);
		break;
	case PARAM_NUMBER:
		lua_pushnumber(L, p->num);
		break;
	case PARAM_BOOL:
		lua_pushboolean(L, p->b);
		break;
	case PARAM_LIST:
		lua_createtable(L, (int)p->n_items, 0);
		for (i = 0; i < p->n_items; i++) {
			push_param(L, &p->items[i]);
			lua_rawseti(L, -2, (lua_Integer)i + 1);
		}
		break;
	case PARAM_MAP:
		lua_createtable(L, 0, (int)p->n_items);
		for (i = 0; i < p->n_items; i++) {
			push_param(L, &p->items[i]);
			lua_setfield(L, -2, p->items[i].key);
		}
		break;
	}
}

static const char *param_type_name(enum param_type t)
{
	switch (t) {
	case PARAM_STRING: return "a string";
	case PARAM_INT: return "an integer";
	case PARAM_NUMBER: return "a number";
	case PARAM_BOOL: return "a boolean";
	case PARAM_LIST: return "a list";
	case PARAM_MAP: return "a mapping";
	}
	return "?";
}

/* Is a config value of type 't' acceptable where the default has Lua type 'lt'? */
static bool param_type_ok(int lt, enum param_type t)
{
	switch (lt) {
	case LUA_TNUMBER: return t == PARAM_INT || t == PARAM_NUMBER;
	case LUA_TBOOLEAN: return t == PARAM_BOOL;
	case LUA_TSTRING: return t == PARAM_STRING || t == PARAM_INT || t == PARAM_NUMBER;
	case LUA_TTABLE: return t == PARAM_LIST || t == PARAM_MAP;
	default: return true;
	}
}

struct merge_ctx {
	const struct param *params;
	const char *path;
	char msg[ERRBUF_MAX];
};

/* Stack: module table. Leaves the merged params table in the registry. */
static int merge_params(lua_State *L)
{
	struct merge_ctx *m = lua_touserdata(L, 1);
	int declared;
	size_t i;

	lua_settop(L, 2); /* 2: module table */
	lua_newtable(L);  /* 3: merged */
	declared = lua_getfield(L, 2, "params") == LUA_TTABLE; /* 4 */
	if (!declared && !lua_isnil(L, 4))
		return luaL_error(L, "%s: the policy's params must be a table, got %s",
				  m->path, luaL_typename(L, 4));
	if (declared) {
		lua_pushnil(L);
		while (lua_next(L, 4)) {
			lua_pushvalue(L, -2);
			lua_insert(L, -2);
			lua_rawset(L, 3);
		}
	}
	for (i = 0; m->params && i < m->params->n_items; i++) {
		const struct param *p = &m->params->items[i];

		lua_getfield(L, 3, p->key);
		if (declared && lua_isnil(L, -1)) {
			luaL_Buffer b;
			bool first = true;

			luaL_buffinit(L, &b);
			lua_pushnil(L);
			while (lua_next(L, 4)) {
				lua_pop(L, 1);
				if (lua_type(L, -1) == LUA_TSTRING) {
					if (!first)
						luaL_addstring(&b, ", ");
					first = false;
					/* copy the key without disturbing lua_next */
					lua_pushvalue(L, -1);
					luaL_addvalue(&b);
				}
			}
			luaL_pushresult(&b);
			return luaL_error(L, "param \"%s\" is not declared by policy %s (it declares: %s)",
					  p->key, m->path, lua_tostring(L, -1));
		}
		if (!param_type_ok(lua_type(L, -1), p->type))
			return luaL_error(L, "param \"%s\" must be a %s like the policy's default, got %s",
					  p->key, lua_typename(L, lua_type(L, -1)),
					  param_type_name(p->type));
		lua_pop(L, 1);
		push_param(L, p);
		lua_setfield(L, 3, p->key);
	}
	lua_pushvalue(L, 3);
	lua_setfield(L, LUA_REGISTRYINDEX, "luascale.host.params");
	return 0;
}

/* ---- loading ---- */

static void dir_of(const char *path, char *out, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(out, len, ".");
	else if (slash == path)
		snprintf(out, len, "/");
	else
		snprintf(out, len, "%.*s", (int)(slash - path), path);
}

/* Collapses "./" and "dir/../" lexically, for readable file:line messages. */
static void normalize_path(const char *in, char *out, size_t len)
{
	const char *seg[PATH_MAX / 2];
	size_t seglen[PATH_MAX / 2];
	size_t n = 0, i, used;
	bool abs = in[0] == '/';
	const char *p = in;

	while (*p) {
		const char *start;
		size_t l;

		while (*p == '/')
			p++;
		start = p;
		while (*p && *p != '/')
			p++;
		l = (size_t)(p - start);
		if (l == 0 || (l == 1 && start[0] == '.'))
			continue;
		if (l == 2 && start[0] == '.' && start[1] == '.') {
			if (n > 0 && !(seglen[n - 1] == 2 && seg[n - 1][0] == '.' && seg[n - 1][1] == '.')) {
				n--;
				continue;
			}
			if (abs)
				continue;
		}
		if (n < PATH_MAX / 2) {
			seg[n] = start;
			seglen[n++] = l;
		}
	}
	snprintf(out, len, "%s", abs ? "/" : "");
	for (i = 0; i < n; i++) {
		used = strlen(out);
		snprintf(out + used, len - used, "%s%.*s", i ? "/" : "", (int)seglen[i], seg[i]);
	}
	if (!out[0])
		snprintf(out, len, ".");
}

/* A limit hit where no line is known (an allocation failed, the call was
 * cancelled before it ran) still names the policy's file. The sandbox's
 * unlocated limit messages all start with "policy ". */
static void name_file(struct errbuf *err, const char *path)
{
	if (strncmp(err->msg, "policy ", 7) == 0)
		errbuf_prefix(err, "%s", path);
}

struct policy *policy_load(const char *path, const char *lib_dir,
			   const struct sandbox_limits *lim,
			   const struct param *params, struct errbuf *err)
{
	struct policy *p = calloc(1, sizeof(*p));
	struct merge_ctx m;
	char dir[PATH_MAX];
	lua_State *L;

	if (!p) {
		errbuf_set(err, "out of memory");
		return NULL;
	}
	p->module_ref = p->params_ref = p->store_ref = LUA_NOREF;
	p->notes = true;
	normalize_path(path, p->path, sizeof(p->path));
	path = p->path;
	dir_of(path, dir, sizeof(dir));
	p->sb = sandbox_new(lib_dir ? lib_dir : policy_default_lib_dir(), dir, lim, err);
	if (!p->sb)
		goto fail;
	L = sandbox_state(p->sb);
	view_register_native(p->sb);

	if (sandbox_loadfile(p->sb, path, err) < 0)
		goto fail_where;
	if (sandbox_call(p->sb, 0, 1, err) < 0)
		goto fail_where;
	if (!lua_istable(L, -1)) {
		errbuf_set(err, "%s: the policy must return a table with a reconcile function, got %s",
			   path, luaL_typename(L, -1));
		lua_pop(L, 1);
		goto fail;
	}
	if (lua_getfield(L, -1, "reconcile") != LUA_TFUNCTION) {
		errbuf_set(err, "%s: the returned table has no reconcile function (got %s)",
			   path, luaL_typename(L, -1));
		lua_pop(L, 2);
		goto fail;
	}
	lua_pop(L, 1);
	p->module_ref = luaL_ref(L, LUA_REGISTRYINDEX);

	memset(&m, 0, sizeof(m));
	m.params = params;
	m.path = path;
	lua_rawgeti(L, LUA_REGISTRYINDEX, p->module_ref);
	lua_pushcfunction(L, merge_params);
	lua_insert(L, -2);
	lua_pushlightuserdata(L, &m);
	lua_insert(L, -2);
	if (sandbox_call(p->sb, 2, 0, err) < 0)
		goto fail_where;
	lua_getfield(L, LUA_REGISTRYINDEX, "luascale.host.params");
	p->params_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	lua_newtable(L);
	p->store_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	return p;
fail_where:
	name_file(err, path);
fail:
	policy_free(p);
	return NULL;
}

void policy_free(struct policy *p)
{
	if (!p)
		return;
	sandbox_free(p->sb);
	free(p);
}

int policy_reconcile(struct policy *p, const struct snapshot *s,
		     const struct drain_opts *dopts, struct plan *out,
		     struct policy_stats *st, struct errbuf *err)
{
	lua_State *L = sandbox_state(p->sb);
	struct policy_stats stats;
	double t0, t1, t2;
	int top = lua_gettop(L);
	int rc = -1;

	memset(&stats, 0, sizeof(stats));
	plan_init(out);
	sandbox_set_now(p->sb, s->now);
	t0 = now_ms();
	if (view_begin(p->sb, s, dopts, p->notes, err) < 0) {
		errbuf_prefix(err, "%s", p->path);
		goto out;
	}
	/* stack: cluster */
	lua_rawgeti(L, LUA_REGISTRYINDEX, p->module_ref);
	lua_getfield(L, -1, "reconcile");
	lua_remove(L, -2);
	lua_pushvalue(L, -1);
	lua_insert(L, -3); /* kept below the call: plan errors name its line */
	lua_insert(L, -2); /* reconcile, cluster */
	lua_rawgeti(L, LUA_REGISTRYINDEX, p->params_ref);
	lua_rawgeti(L, LUA_REGISTRYINDEX, p->store_ref);
	t1 = now_ms();
	stats.view_ms = t1 - t0;
	if (sandbox_call(p->sb, 3, 1, err) < 0) {
		name_file(err, p->path);
		stats.call_ms = now_ms() - t1;
		stats.instructions = sandbox_instructions(p->sb);
		goto out;
	}
	t2 = now_ms();
	stats.call_ms = t2 - t1;
	stats.instructions = sandbox_instructions(p->sb);

	/* stack: reconcile, result */
	if (plan_decode(L, lua_gettop(L) - 1, p->path, out, err) < 0)
		goto out;
	stats.decode_ms = now_ms() - t2;
	rc = 0;
out:
	view_end(p->sb);
	lua_settop(L, top);
	stats.memory = sandbox_memory(p->sb);
	stats.memory_peak = sandbox_memory_peak(p->sb);
	if (st)
		*st = stats;
	return rc;
}

/* Replaces dst's store with a copy of src's. 0 or -1. */
static int copy_store(struct policy *dst, struct policy *src, char *dropped,
		      size_t dropped_len, struct errbuf *err)
{
	lua_State *from = sandbox_state(src->sb), *to = sandbox_state(dst->sb);
	int rc;

	lua_rawgeti(from, LUA_REGISTRYINDEX, src->store_ref);
	/* charged like the policy's own work: at most its instruction budget,
	 * within the new sandbox's memory cap */
	rc = store_copy(from, -1, to, sandbox_budget(dst->sb), dropped, dropped_len, err);
	lua_pop(from, 1);
	if (rc < 0)
		return -1;
	luaL_unref(to, LUA_REGISTRYINDEX, dst->store_ref);
	dst->store_ref = luaL_ref(to, LUA_REGISTRYINDEX);
	return 0;
}

struct policy *policy_reload(struct policy *cur, const char *path,
			     const char *lib_dir, const struct sandbox_limits *lim,
			     const struct param *params, const struct snapshot *s,
			     const struct drain_opts *dopts, char *dropped,
			     size_t dropped_len, struct errbuf *err)
{
	struct policy *p = policy_load(path, lib_dir, lim, params, err);
	struct plan plan;

	if (!p) {
		errbuf_prefix(err, "cannot load the new policy");
		return NULL;
	}
	p->notes = cur->notes;
	if (s) {
		/* the trial run gets a copy of the store, thrown away after */
		if (copy_store(p, cur, NULL, 0, err) < 0)
			goto fail;
		if (policy_reconcile(p, s, dopts, &plan, NULL, err) < 0) {
			errbuf_prefix(err, "the new policy failed its trial run");
			goto fail;
		}
		plan_free(&plan);
	}
	if (copy_store(p, cur, dropped, dropped_len, err) < 0)
		goto fail;
	return p;
fail:
	policy_free(p);
	return NULL;
}
