/*
 * host: loads a policy into its sandbox, merges its parameters, runs
 * reconcile() on a cluster view and decodes the plan it returns. Decoding
 * reads the policy's tables with raw access only, so no policy code runs
 * outside the budget. Safety checks are not done here.
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

#include "policy/store.h"
#include "policy/view.h"

#define MAX_ACTIONS 100000
#define MAX_REASON 1000
#define MAX_MESSAGES 1000

struct policy {
	struct sandbox *sb;
	char path[PATH_MAX];
	int module_ref;
	int params_ref;
	int store_ref;
};

const char *policy_default_lib_dir(void)
{
	const char *env = getenv("LUASCALE_LUA_DIR");

	return env && *env ? env : LUASCALE_LUA_DIR;
}

const char *policy_path(const struct policy *p)
{
	return p->path;
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

/* ---- plan decoding (raw access only: no policy code runs here) ---- */

/* What decode_plan() fills. */
struct decode_ctx {
	struct plan *plan;
};

/* Returns the string at raw field 'k' of table 't', or NULL when absent;
 * raises when present but not a string. */
static const char *raw_string(lua_State *L, int t, const char *k, bool required,
			      const char *what)
{
	const char *s;

	lua_pushstring(L, k);
	lua_rawget(L, t);
	if (lua_isnil(L, -1)) {
		lua_pop(L, 1);
		if (required)
			luaL_error(L, "%s needs a string field \"%s\"", what, k);
		return NULL;
	}
	if (lua_type(L, -1) != LUA_TSTRING)
		luaL_error(L, "%s: field \"%s\" must be a string, got %s", what, k,
			   luaL_typename(L, -1));
	s = lua_tostring(L, -1);
	lua_pop(L, 1); /* the string stays alive: it is referenced by the table */
	return s;
}

static int raw_bool(lua_State *L, int t, const char *k, const char *what)
{
	int v;

	lua_pushstring(L, k);
	lua_rawget(L, t);
	if (lua_isnil(L, -1)) {
		lua_pop(L, 1);
		return -1;
	}
	if (!lua_isboolean(L, -1))
		luaL_error(L, "%s: field \"%s\" must be a boolean, got %s", what, k,
			   luaL_typename(L, -1));
	v = lua_toboolean(L, -1);
	lua_pop(L, 1);
	return v;
}

static void decode_action(lua_State *L, int t, lua_Integer i, struct decode_ctx *d)
{
	struct action a;
	char what[PATH_MAX + 64];
	const char *type, *where, *reason;
	char reason_buf[MAX_REASON + 4];
	int rm;

	memset(&a, 0, sizeof(a));
	lua_pushliteral(L, "where");
	lua_rawget(L, t);
	where = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
	lua_pop(L, 1);
	if (where[0])
		snprintf(what, sizeof(what), "actions[%lld] (from %s)", (long long)i, where);
	else
		snprintf(what, sizeof(what), "actions[%lld]", (long long)i);

	type = raw_string(L, t, "type", true, what);
	if (action_type_parse(type, &a.type) < 0)
		luaL_error(L, "%s: unknown action type \"%s\" (expected scale_up, cordon, uncordon, drain, delete, label, taint or annotate)",
			   what, type);
	reason = raw_string(L, t, "reason", false, what);
	if (!reason || !reason[0])
		luaL_error(L, "%s: %s needs a reason (a non-empty string)", what, type);
	if (strlen(reason) > MAX_REASON) {
		snprintf(reason_buf, sizeof(reason_buf), "%.*s...", MAX_REASON, reason);
		reason = reason_buf;
	}
	a.reason = (char *)reason;
	a.where = (char *)where;
	if (a.type == ACTION_SCALE_UP) {
		int isint = 0;
		lua_Integer c;

		a.group = (char *)raw_string(L, t, "group", true, what);
		lua_pushliteral(L, "count");
		lua_rawget(L, t);
		c = lua_tointegerx(L, -1, &isint);
		if (!isint || c < 1)
			luaL_error(L, "%s: scale_up needs a positive integer count, got %s", what,
				   lua_type(L, -1) == LUA_TNUMBER ? lua_tostring(L, -1)
								  : luaL_typename(L, -1));
		lua_pop(L, 1);
		a.count = c;
	} else {
		a.node = (char *)raw_string(L, t, "node", true, what);
	}
	if (a.type == ACTION_LABEL || a.type == ACTION_TAINT || a.type == ACTION_ANNOTATE) {
		a.key = (char *)raw_string(L, t, "key", true, what);
		rm = raw_bool(L, t, "remove", what);
		a.remove = rm == 1;
		a.value = (char *)raw_string(L, t, "value", false, what);
		if (!a.remove && !a.value && a.type != ACTION_TAINT)
			luaL_error(L, "%s: %s needs a string value (or remove = true)", what, type);
		if (a.remove)
			a.value = NULL;
		else if (!a.value)
			a.value = "";
	}
	if (a.type == ACTION_TAINT) {
		const char *eff = raw_string(L, t, "effect", true, what);
		enum taint_effect e;

		if (taint_effect_parse(eff, &e) < 0)
			luaL_error(L, "%s: taint effect must be NoSchedule, PreferNoSchedule or NoExecute, got \"%s\"",
				   what, eff);
		a.effect = (int)e;
	}
	if (plan_add(d->plan, &a) < 0)
		luaL_error(L, "out of memory");
}

/* Stack: 1 = ctx (light userdata), 2 = the value reconcile returned. */
static int decode_plan(lua_State *L)
{
	struct decode_ctx *d = lua_touserdata(L, 1);
	lua_Integer i, n;

	if (lua_isnil(L, 2))
		return 0;
	if (!lua_istable(L, 2))
		return luaL_error(L, "reconcile must return a plan (luascale.plan()) or nil, got %s",
				  luaL_typename(L, 2));
	lua_pushliteral(L, "actions");
	lua_rawget(L, 2); /* 3 */
	if (!lua_isnil(L, 3)) {
		if (!lua_istable(L, 3))
			return luaL_error(L, "plan.actions must be a list, got %s", luaL_typename(L, 3));
		n = (lua_Integer)lua_rawlen(L, 3);
		if (n > MAX_ACTIONS)
			return luaL_error(L, "plan has %I actions, more than the limit of %d",
					  (lua_Integer)n, MAX_ACTIONS);
		for (i = 1; i <= n; i++) {
			if (lua_rawgeti(L, 3, i) != LUA_TTABLE)
				return luaL_error(L, "actions[%I] must be a table, got %s",
						  (lua_Integer)i, luaL_typename(L, -1));
			decode_action(L, lua_gettop(L), i, d);
			lua_pop(L, 1);
		}
	}
	lua_pushliteral(L, "notes");
	lua_rawget(L, 2); /* 4 */
	if (lua_istable(L, 4)) {
		lua_pushnil(L);
		while (lua_next(L, 4)) {
			const char *node, *why;
			int cand;

			if (lua_type(L, -2) != LUA_TSTRING || !lua_istable(L, -1))
				return luaL_error(L, "plan.notes must map node names to {candidate=, why=}");
			node = lua_tostring(L, -2);
			why = raw_string(L, lua_gettop(L), "why", false, "plan.notes entry");
			cand = raw_bool(L, lua_gettop(L), "candidate", "plan.notes entry");
			if (plan_note(d->plan, node, cand == 1, why ? why : "") < 0)
				return luaL_error(L, "out of memory");
			lua_pop(L, 1);
		}
	} else if (!lua_isnil(L, 4)) {
		return luaL_error(L, "plan.notes must be a table, got %s", luaL_typename(L, 4));
	}
	plan_sort_notes(d->plan);
	lua_pushliteral(L, "messages");
	lua_rawget(L, 2); /* 5 */
	if (lua_istable(L, 5)) {
		n = (lua_Integer)lua_rawlen(L, 5);
		for (i = 1; i <= n && i <= MAX_MESSAGES; i++) {
			char msg[MAX_REASON + 4];

			if (lua_rawgeti(L, 5, i) != LUA_TSTRING)
				return luaL_error(L, "plan.messages[%I] must be a string, got %s",
						  (lua_Integer)i, luaL_typename(L, -1));
			snprintf(msg, sizeof(msg), "%s", lua_tostring(L, -1));
			if (plan_message(d->plan, msg) < 0)
				return luaL_error(L, "out of memory");
			lua_pop(L, 1);
		}
	} else if (!lua_isnil(L, 5)) {
		return luaL_error(L, "plan.messages must be a list of strings, got %s", luaL_typename(L, 5));
	}
	return 0;
}

int policy_reconcile(struct policy *p, const struct snapshot *s,
		     const struct drain_opts *dopts, struct plan *out,
		     struct policy_stats *st, struct errbuf *err)
{
	lua_State *L = sandbox_state(p->sb);
	struct policy_stats stats;
	struct decode_ctx d;
	double t0, t1, t2;
	int top = lua_gettop(L);
	int rc = -1;

	memset(&stats, 0, sizeof(stats));
	plan_init(out);
	sandbox_set_now(p->sb, s->now);
	t0 = now_ms();
	if (view_begin(p->sb, s, dopts, err) < 0) {
		errbuf_prefix(err, "%s", p->path);
		goto out;
	}
	/* stack: cluster */
	lua_rawgeti(L, LUA_REGISTRYINDEX, p->module_ref);
	lua_getfield(L, -1, "reconcile");
	lua_remove(L, -2);
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

	/* stack: result */
	d.plan = out;
	lua_pushcfunction(L, decode_plan);
	lua_insert(L, -2);
	lua_pushlightuserdata(L, &d);
	lua_insert(L, -2);
	if (lua_pcall(L, 2, 0, 0) != LUA_OK) {
		errbuf_set(err, "%s: reconcile returned a malformed plan: %s", p->path,
			   lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "error");
		lua_pop(L, 1);
		plan_free(out);
		goto out;
	}
	stats.decode_ms = now_ms() - t2;
	rc = 0;
out:
	view_end(p->sb);
	lua_settop(L, top);
	stats.memory = sandbox_memory(p->sb);
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
