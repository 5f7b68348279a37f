/*
 * view: builds the Lua tables a policy reads and the C-backed helpers on
 * them. Owns the mapping from Lua tables back to snapshot indices; the
 * scheduling arithmetic itself is sched.c's.
 */
#include "policy/view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "config.h"
#include "policy/sandbox.h"
#include "quantity.h"

static const char VIEW_KEY[] = "luascale.view";         /* struct view userdata */
static const char NODEIDX_KEY[] = "luascale.view.nodeidx"; /* node table -> index */
static const char PODIDX_KEY[] = "luascale.view.podidx";   /* pod table -> index */
static const char PODCACHE_KEY[] = "luascale.view.pods";   /* index -> pod table */
static const char NODES_KEY[] = "luascale.view.nodes";     /* the nodes array */
static const char GROUPS_KEY[] = "luascale.view.groups";   /* name -> group table */
static const char NODEMT_KEY[] = "luascale.view.nodemt";   /* node metatable */

struct view {
	const struct snapshot *snap;
	const struct drain_opts *dopts;
};

static struct view *get_view(lua_State *L)
{
	struct view *v;

	lua_getfield(L, LUA_REGISTRYINDEX, VIEW_KEY);
	v = lua_touserdata(L, -1);
	lua_pop(L, 1);
	if (!v || !v->snap)
		luaL_error(L, "cluster view used outside of its reconcile call");
	return v;
}

/* ---- building blocks ---- */

static void set_str(lua_State *L, const char *k, const char *v)
{
	lua_pushstring(L, v);
	lua_setfield(L, -2, k);
}

static void set_int(lua_State *L, const char *k, int64_t v)
{
	lua_pushinteger(L, (lua_Integer)v);
	lua_setfield(L, -2, k);
}

static void set_num(lua_State *L, const char *k, double v)
{
	lua_pushnumber(L, v);
	lua_setfield(L, -2, k);
}

static void set_bool(lua_State *L, const char *k, bool v)
{
	lua_pushboolean(L, v);
	lua_setfield(L, -2, k);
}

static void push_kvlist(lua_State *L, const struct kvlist *l)
{
	size_t i;

	lua_createtable(L, 0, (int)l->n);
	for (i = 0; i < l->n; i++) {
		lua_pushstring(L, l->items[i].value);
		lua_setfield(L, -2, l->items[i].key);
	}
}

/* cpu in cores (number), everything else in units (integer) */
static void push_resources(lua_State *L, const struct resources *r)
{
	size_t i;

	lua_createtable(L, 0, 4 + (int)r->n_ext);
	set_num(L, "cpu", (double)r->cpu_m / 1000.0);
	set_int(L, "memory", r->memory);
	set_int(L, "ephemeral-storage", r->ephemeral);
	set_int(L, "pods", r->pods);
	for (i = 0; i < r->n_ext; i++)
		set_int(L, r->ext[i].name, r->ext[i].value);
}

static void push_free(lua_State *L, const struct resources *alloc,
		      const struct resources *req)
{
	size_t i;

	lua_createtable(L, 0, 4 + (int)alloc->n_ext);
	set_num(L, "cpu", (double)(alloc->cpu_m - req->cpu_m) / 1000.0);
	set_int(L, "memory", alloc->memory - req->memory);
	set_int(L, "ephemeral-storage", alloc->ephemeral - req->ephemeral);
	set_int(L, "pods", alloc->pods - req->pods);
	for (i = 0; i < alloc->n_ext; i++)
		set_int(L, alloc->ext[i].name,
			alloc->ext[i].value - resources_ext(req, alloc->ext[i].name));
}

static void push_taints(lua_State *L, const struct taint *t, size_t n)
{
	size_t i;

	lua_createtable(L, (int)n, 0);
	for (i = 0; i < n; i++) {
		lua_createtable(L, 0, 3);
		set_str(L, "key", t[i].key);
		set_str(L, "value", t[i].value);
		set_str(L, "effect", taint_effect_str(t[i].effect));
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
}

static double fraction(int64_t used, int64_t total)
{
	return total > 0 ? (double)used / (double)total : 0.0;
}

/* Pushes the (cached) table of pod 'idx'. */
static void push_pod(lua_State *L, const struct snapshot *s, uint32_t idx)
{
	const struct pod *p = &s->pods[idx];
	int cache;

	lua_getfield(L, LUA_REGISTRYINDEX, PODCACHE_KEY);
	cache = lua_gettop(L);
	if (lua_rawgeti(L, cache, (lua_Integer)idx + 1) == LUA_TTABLE) {
		lua_remove(L, cache);
		return;
	}
	lua_pop(L, 1);
	lua_createtable(L, 0, 24);
	set_str(L, "namespace", p->ns);
	set_str(L, "name", p->name);
	push_kvlist(L, &p->labels);
	lua_setfield(L, -2, "labels");
	push_kvlist(L, &p->annotations);
	lua_setfield(L, -2, "annotations");
	if (p->controller_kind[0]) {
		set_str(L, "controller", p->controller_kind);
		set_str(L, "controller_name", p->controller_name);
	}
	if (p->node_name[0])
		set_str(L, "node", p->node_name);
	set_str(L, "phase", pod_phase_str(p->phase));
	push_resources(L, &p->requests);
	lua_setfield(L, -2, "requests");
	set_int(L, "priority", p->priority);
	set_bool(L, "daemonset", p->flags & POD_DAEMONSET);
	set_bool(L, "mirror", p->flags & POD_MIRROR);
	set_bool(L, "static", p->flags & POD_STATIC);
	set_bool(L, "local_storage", p->flags & POD_LOCAL_STORAGE);
	set_bool(L, "unschedulable", p->flags & POD_UNSCHEDULABLE);
	set_bool(L, "terminating", p->flags & POD_TERMINATING);
	set_bool(L, "finished", pod_finished(p));
	set_bool(L, "safe_to_evict", !(p->flags & POD_SAFE_TO_EVICT_FALSE));
	set_int(L, "created", p->created);
	set_int(L, "age", s->now - p->created);
	if (p->sched_message[0])
		set_str(L, "scheduler_message", p->sched_message);
	/* remember table -> index, and index -> table */
	lua_getfield(L, LUA_REGISTRYINDEX, PODIDX_KEY);
	lua_pushvalue(L, -2);
	lua_pushinteger(L, (lua_Integer)idx);
	lua_rawset(L, -3);
	lua_pop(L, 1);
	lua_pushvalue(L, -1);
	lua_rawseti(L, cache, (lua_Integer)idx + 1);
	lua_remove(L, cache);
}

/* Index of the node table (or node name) at 'arg', or raises. */
static size_t check_node(lua_State *L, const struct snapshot *s, int arg)
{
	lua_Integer idx;

	if (lua_type(L, arg) == LUA_TSTRING) {
		int32_t i = snapshot_find_node(s, lua_tostring(L, arg));

		if (i < 0)
			luaL_error(L, "no node named \"%s\"", lua_tostring(L, arg));
		return (size_t)i;
	}
	luaL_checktype(L, arg, LUA_TTABLE);
	lua_getfield(L, LUA_REGISTRYINDEX, NODEIDX_KEY);
	lua_pushvalue(L, arg);
	lua_rawget(L, -2);
	if (!lua_isinteger(L, -1))
		luaL_argerror(L, arg, "not a node of this reconcile's cluster view");
	idx = lua_tointeger(L, -1);
	lua_pop(L, 2);
	return (size_t)idx;
}

static size_t check_pod(lua_State *L, int arg)
{
	lua_Integer idx;

	luaL_checktype(L, arg, LUA_TTABLE);
	lua_getfield(L, LUA_REGISTRYINDEX, PODIDX_KEY);
	lua_pushvalue(L, arg);
	lua_rawget(L, -2);
	if (!lua_isinteger(L, -1))
		luaL_argerror(L, arg, "not a pod of this reconcile's cluster view");
	idx = lua_tointeger(L, -1);
	lua_pop(L, 2);
	return (size_t)idx;
}

/* Group index from a group table or name, or -1 when 'arg' is not one. */
static int32_t to_group(lua_State *L, const struct snapshot *s, int arg)
{
	int32_t g = -1;

	if (lua_type(L, arg) == LUA_TSTRING) {
		g = snapshot_find_group(s, lua_tostring(L, arg));
		if (g < 0)
			luaL_error(L, "no node group named \"%s\"", lua_tostring(L, arg));
	} else if (lua_type(L, arg) == LUA_TTABLE && !lua_getmetatable(L, arg)) {
		/* group tables have no metatable; node tables do */
		if (lua_getfield(L, arg, "name") == LUA_TSTRING &&
		    lua_getfield(L, arg, "template") == LUA_TTABLE)
			g = snapshot_find_group(s, lua_tostring(L, -2));
		lua_pop(L, 2);
	} else if (lua_type(L, arg) == LUA_TTABLE) {
		lua_pop(L, 1); /* the metatable */
	}
	return g;
}

/* node.pods, built on first use */
static int node_index(lua_State *L)
{
	struct view *v;
	const struct node *n;
	size_t idx, i;

	if (lua_type(L, 2) != LUA_TSTRING || strcmp(lua_tostring(L, 2), "pods") != 0)
		return 0;
	v = get_view(L);
	idx = check_node(L, v->snap, 1);
	n = &v->snap->nodes[idx];
	lua_createtable(L, (int)n->n_pods, 0);
	for (i = 0; i < n->n_pods; i++) {
		push_pod(L, v->snap, n->pods[i]);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	lua_pushvalue(L, -1);
	lua_setfield(L, 1, "pods"); /* rawset is fine: no __newindex */
	return 1;
}

static void push_node(lua_State *L, const struct snapshot *s, size_t idx, int nodeidx)
{
	const struct node *n = &s->nodes[idx];
	size_t i, live = 0;

	lua_createtable(L, 0, 20);
	set_str(L, "name", n->name);
	if (n->group >= 0)
		set_str(L, "group", s->groups[n->group].name);
	push_kvlist(L, &n->labels);
	lua_setfield(L, -2, "labels");
	push_kvlist(L, &n->annotations);
	lua_setfield(L, -2, "annotations");
	push_taints(L, n->taints, n->n_taints);
	lua_setfield(L, -2, "taints");
	push_resources(L, &n->allocatable);
	lua_setfield(L, -2, "allocatable");
	push_resources(L, &n->requested);
	lua_setfield(L, -2, "requested");
	push_free(L, &n->allocatable, &n->requested);
	lua_setfield(L, -2, "free");
	lua_createtable(L, 0, 2);
	set_num(L, "cpu", fraction(n->requested.cpu_m, n->allocatable.cpu_m));
	set_num(L, "memory", fraction(n->requested.memory, n->allocatable.memory));
	lua_setfield(L, -2, "utilization");
	set_bool(L, "unschedulable", n->unschedulable);
	set_bool(L, "ready", n->ready);
	set_int(L, "created", n->created);
	set_int(L, "age", s->now - n->created);
	set_str(L, "provider_id", n->provider_id);
	for (i = 0; i < n->n_pods; i++)
		if (!pod_finished(&s->pods[n->pods[i]]))
			live++;
	set_int(L, "pod_count", (int64_t)live);
	lua_getfield(L, LUA_REGISTRYINDEX, NODEMT_KEY);
	lua_setmetatable(L, -2);
	lua_pushvalue(L, -1);
	lua_pushinteger(L, (lua_Integer)idx);
	lua_rawset(L, nodeidx);
}

static void push_group(lua_State *L, const struct node_group *g)
{
	lua_createtable(L, 0, 10);
	set_str(L, "name", g->name);
	set_int(L, "min", g->min);
	set_int(L, "max", g->max);
	set_int(L, "current", g->current);
	set_int(L, "target", g->target);
	set_int(L, "upcoming", g->target > g->current ? g->target - g->current : 0);
	set_num(L, "price_per_hour", g->price_per_hour);
	lua_createtable(L, 0, 3);
	push_resources(L, &g->tmpl.allocatable);
	lua_setfield(L, -2, "allocatable");
	push_kvlist(L, &g->tmpl.labels);
	lua_setfield(L, -2, "labels");
	push_taints(L, g->tmpl.taints, g->tmpl.n_taints);
	lua_setfield(L, -2, "taints");
	lua_setfield(L, -2, "template");
}

/* ---- helpers (methods of the cluster table) ---- */

/* cluster:fits(pod, node_or_group) -> bool, why */
static int l_fits(lua_State *L)
{
	struct view *v = get_view(L);
	const struct snapshot *s = v->snap;
	size_t pod = check_pod(L, 2);
	char detail[256] = "";
	enum sched_fit f;
	int32_t g = to_group(L, s, 3);

	if (g >= 0)
		f = sched_fits_template(&s->pods[pod], &s->groups[g], detail, sizeof(detail));
	else
		f = sched_fits_node(s, &s->pods[pod], check_node(L, s, 3), detail, sizeof(detail));
	lua_pushboolean(L, f == SCHED_FITS);
	if (f == SCHED_FITS)
		return 1;
	lua_pushstring(L, detail[0] ? detail : sched_fit_str(f));
	return 2;
}

/* cluster:pack(pods, group [, max_new]) -> result table */
static int l_pack(lua_State *L)
{
	struct view *v = get_view(L);
	const struct snapshot *s = v->snap;
	struct pack_result r;
	struct errbuf err;
	uint32_t *idx;
	lua_Integer n, i;
	int32_t g;
	int max_new = -1;

	luaL_checktype(L, 2, LUA_TTABLE);
	g = to_group(L, s, 3);
	if (g < 0)
		return luaL_argerror(L, 3, "expected a node group or its name");
	if (!lua_isnoneornil(L, 4)) {
		lua_Integer m = luaL_checkinteger(L, 4);

		max_new = m < 0 ? -1 : (m > 1000000 ? 1000000 : (int)m);
	}
	n = luaL_len(L, 2);
	if (n < 0 || n > (lua_Integer)s->n_pods)
		return luaL_argerror(L, 2, "too many pods");
	idx = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof(*idx), 0);
	for (i = 1; i <= n; i++) {
		lua_rawgeti(L, 2, i);
		idx[i - 1] = (uint32_t)check_pod(L, lua_gettop(L));
		lua_pop(L, 1);
	}
	if (sched_pack(s, idx, (size_t)n, (size_t)g, max_new, &r, &err) < 0)
		return luaL_error(L, "pack: %s", err.msg);
	lua_createtable(L, 0, 8);
	set_int(L, "new_nodes", r.new_nodes);
	set_int(L, "upcoming_used", r.upcoming_used);
	set_int(L, "placed", (int64_t)r.n_placed);
	lua_createtable(L, 0, 2);
	set_num(L, "cpu", r.waste_cpu);
	set_num(L, "memory", r.waste_memory);
	lua_setfield(L, -2, "waste");
	lua_createtable(L, (int)n, 0); /* placement: pod i -> bin (1-based) or false */
	lua_createtable(L, (int)r.n_unplaced, 0);
	{
		lua_Integer u = 0;

		for (i = 0; i < n; i++) {
			if (r.placement[i] >= 0) {
				lua_pushinteger(L, r.placement[i] + 1);
			} else {
				lua_pushboolean(L, 0);
				lua_rawgeti(L, 2, i + 1);
				lua_rawseti(L, -3, ++u);
			}
			lua_rawseti(L, -3, i + 1);
		}
	}
	lua_setfield(L, -3, "unplaced");
	lua_setfield(L, -2, "placement");
	pack_result_free(&r);
	return 1;
}

/* cluster:drainable(node [, {exclude = {node, ...}}]) -> bool, why */
static int l_drainable(lua_State *L)
{
	struct view *v = get_view(L);
	const struct snapshot *s = v->snap;
	size_t node = check_node(L, s, 2);
	struct drain_opts o = *v->dopts;
	uint8_t *excluded = NULL;
	char why[512] = "";
	bool ok;

	if (lua_istable(L, 3) && lua_getfield(L, 3, "exclude") == LUA_TTABLE) {
		lua_Integer i, n = luaL_len(L, -1);
		int ex = lua_gettop(L);

		excluded = lua_newuserdatauv(L, s->n_nodes ? s->n_nodes : 1, 0);
		memset(excluded, 0, s->n_nodes ? s->n_nodes : 1);
		for (i = 1; i <= n; i++) {
			lua_rawgeti(L, ex, i);
			excluded[check_node(L, s, lua_gettop(L))] = 1;
			lua_pop(L, 1);
		}
		o.excluded = excluded;
	}
	ok = sched_drainable(s, node, &o, why, sizeof(why));
	lua_pushboolean(L, ok);
	if (ok)
		return 1;
	lua_pushstring(L, why);
	return 2;
}

/* cluster:node(name) -> node table or nil */
static int l_node(lua_State *L)
{
	struct view *v = get_view(L);
	int32_t i = snapshot_find_node(v->snap, luaL_checkstring(L, 2));

	if (i < 0)
		return 0;
	lua_getfield(L, LUA_REGISTRYINDEX, NODES_KEY);
	lua_rawgeti(L, -1, (lua_Integer)i + 1);
	return 1;
}

/* cluster:pdbs() -> array of {namespace, name, disruptions_allowed, min_available, max_unavailable} */
static int l_pdbs(lua_State *L)
{
	struct view *v = get_view(L);
	size_t i;

	lua_createtable(L, (int)v->snap->n_pdbs, 0);
	for (i = 0; i < v->snap->n_pdbs; i++) {
		const struct pdb *b = &v->snap->pdbs[i];

		lua_createtable(L, 0, 5);
		set_str(L, "namespace", b->ns);
		set_str(L, "name", b->name);
		set_int(L, "disruptions_allowed", b->disruptions_allowed);
		if (b->min_available[0])
			set_str(L, "min_available", b->min_available);
		if (b->max_unavailable[0])
			set_str(L, "max_unavailable", b->max_unavailable);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

static const luaL_Reg cluster_methods[] = {
	{"fits", l_fits},
	{"pack", l_pack},
	{"drainable", l_drainable},
	{"node", l_node},
	{"pdbs", l_pdbs},
	{NULL, NULL},
};

/* ---- building the view ---- */

static void new_weak_table(lua_State *L, const char *key, const char *mode)
{
	lua_newtable(L);
	if (mode) {
		lua_createtable(L, 0, 1);
		lua_pushstring(L, mode);
		lua_setfield(L, -2, "__mode");
		lua_setmetatable(L, -2);
	}
	lua_setfield(L, LUA_REGISTRYINDEX, key);
}

static int build_view(lua_State *L)
{
	struct view *v;
	const struct snapshot *s;
	int cluster, nodeidx;
	size_t i;

	lua_getfield(L, LUA_REGISTRYINDEX, VIEW_KEY);
	v = lua_touserdata(L, -1);
	lua_pop(L, 1);
	s = v->snap;

	new_weak_table(L, NODEIDX_KEY, "k");
	new_weak_table(L, PODIDX_KEY, "k");
	new_weak_table(L, PODCACHE_KEY, NULL);

	lua_createtable(L, 0, 8);
	cluster = lua_gettop(L);
	set_int(L, "now", s->now);

	lua_getfield(L, LUA_REGISTRYINDEX, NODEIDX_KEY);
	nodeidx = lua_gettop(L);
	lua_createtable(L, (int)s->n_nodes, 0);
	for (i = 0; i < s->n_nodes; i++) {
		push_node(L, s, i, nodeidx);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	lua_pushvalue(L, -1);
	lua_setfield(L, LUA_REGISTRYINDEX, NODES_KEY);
	lua_setfield(L, cluster, "nodes");
	lua_pop(L, 1); /* nodeidx */

	lua_createtable(L, (int)s->n_pending, 0);
	for (i = 0; i < s->n_pending; i++) {
		push_pod(L, s, s->pending[i]);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	lua_setfield(L, cluster, "pending");

	lua_createtable(L, 0, (int)s->n_groups);       /* groups by name */
	lua_createtable(L, (int)s->n_groups, 0);       /* group_list in config order */
	for (i = 0; i < s->n_groups; i++) {
		push_group(L, &s->groups[i]);
		lua_pushvalue(L, -1);
		lua_rawseti(L, -3, (lua_Integer)i + 1);
		lua_setfield(L, -3, s->groups[i].name);
	}
	lua_setfield(L, cluster, "group_list");
	lua_pushvalue(L, -1);
	lua_setfield(L, LUA_REGISTRYINDEX, GROUPS_KEY);
	lua_setfield(L, cluster, "groups");

	lua_createtable(L, 0, 1);
	luaL_newlib(L, cluster_methods);
	lua_setfield(L, -2, "__index");
	lua_setmetatable(L, cluster);

	lua_pushvalue(L, cluster);
	lua_setfield(L, LUA_REGISTRYINDEX, "luascale.view.cluster");
	return 0;
}

static int init_view_state(lua_State *L)
{
	struct view *v = lua_newuserdatauv(L, sizeof(*v), 0);

	memset(v, 0, sizeof(*v));
	lua_setfield(L, LUA_REGISTRYINDEX, VIEW_KEY);
	lua_createtable(L, 0, 1);
	lua_pushcfunction(L, node_index);
	lua_setfield(L, -2, "__index");
	lua_setfield(L, LUA_REGISTRYINDEX, NODEMT_KEY);
	return 0;
}

static struct view *view_of(lua_State *L)
{
	struct view *v;

	lua_getfield(L, LUA_REGISTRYINDEX, VIEW_KEY);
	v = lua_touserdata(L, -1);
	lua_pop(L, 1);
	return v;
}

int view_begin(struct sandbox *sb, const struct snapshot *s,
	       const struct drain_opts *dopts, struct errbuf *err)
{
	lua_State *L = sandbox_state(sb);
	struct view *v = view_of(L);

	if (!v) {
		if (sandbox_cpcall(sb, init_view_state, NULL, err) < 0)
			return -1;
		v = view_of(L);
	}
	v->snap = s;
	v->dopts = dopts;
	if (sandbox_cpcall(sb, build_view, NULL, err) < 0) {
		v->snap = NULL;
		return -1;
	}
	lua_getfield(L, LUA_REGISTRYINDEX, "luascale.view.cluster");
	return 0;
}

void view_end(struct sandbox *sb)
{
	lua_State *L = sandbox_state(sb);
	struct view *v = view_of(L);

	if (v) {
		v->snap = NULL;
		v->dopts = NULL;
	}
	lua_pushnil(L);
	lua_setfield(L, LUA_REGISTRYINDEX, "luascale.view.cluster");
	lua_pushnil(L);
	lua_setfield(L, LUA_REGISTRYINDEX, NODES_KEY);
	lua_pushnil(L);
	lua_setfield(L, LUA_REGISTRYINDEX, PODCACHE_KEY);
}

/* ---- luascale.native ---- */

/* where() -> "file:line" of the nearest Lua code outside the file that
 * called where() (the library), so tail calls inside it do not matter. */
static int n_where(lua_State *L)
{
	lua_Debug ar;
	char lib[LUA_IDSIZE] = "";
	int level;

	if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "S", &ar))
		snprintf(lib, sizeof(lib), "%s", ar.short_src);
	for (level = 2; lua_getstack(L, level, &ar); level++) {
		lua_getinfo(L, "Sl", &ar);
		if (ar.currentline > 0 && strcmp(ar.short_src, lib) != 0) {
			lua_pushfstring(L, "%s:%d", ar.short_src, ar.currentline);
			return 1;
		}
	}
	lua_pushliteral(L, "");
	return 1;
}

static int n_cpu(lua_State *L)
{
	struct errbuf err;
	int64_t m;

	if (lua_type(L, 1) == LUA_TNUMBER) {
		lua_pushnumber(L, lua_tonumber(L, 1));
		return 1;
	}
	if (quantity_parse(luaL_checkstring(L, 1), QUANTITY_MILLI, &m, &err) < 0)
		return luaL_error(L, "%s", err.msg);
	lua_pushnumber(L, (double)m / 1000.0);
	return 1;
}

static int n_bytes(lua_State *L)
{
	struct errbuf err;
	int64_t v;

	if (lua_isinteger(L, 1)) {
		lua_pushvalue(L, 1);
		return 1;
	}
	if (quantity_parse(luaL_checkstring(L, 1), QUANTITY_UNIT, &v, &err) < 0)
		return luaL_error(L, "%s", err.msg);
	lua_pushinteger(L, (lua_Integer)v);
	return 1;
}

static int n_duration(lua_State *L)
{
	int64_t ms;

	if (lua_type(L, 1) == LUA_TNUMBER) {
		lua_pushnumber(L, lua_tonumber(L, 1));
		return 1;
	}
	if (config_parse_duration(luaL_checkstring(L, 1), &ms) < 0)
		return luaL_error(L, "invalid duration \"%s\" (expected e.g. \"90s\", \"10m\", \"1h30m\")",
				  lua_tostring(L, 1));
	if (ms % 1000 == 0)
		lua_pushinteger(L, (lua_Integer)(ms / 1000));
	else
		lua_pushnumber(L, (double)ms / 1000.0);
	return 1;
}

static int n_format_cpu(lua_State *L)
{
	char out[64];
	double cores = luaL_checknumber(L, 1);

	if (!isfinite(cores) || fabs(cores) > 9e15)
		return luaL_argerror(L, 1, "out of range");
	lua_pushstring(L, quantity_format((int64_t)ceil(cores * 1000.0 - 1e-9), QUANTITY_MILLI,
					  out, sizeof(out)));
	return 1;
}

static int n_format_bytes(lua_State *L)
{
	char out[64];

	lua_pushstring(L, quantity_format((int64_t)luaL_checkinteger(L, 1), QUANTITY_UNIT,
					  out, sizeof(out)));
	return 1;
}

void view_register_native(struct sandbox *sb)
{
	static const luaL_Reg fns[] = {
		{"where", n_where},
		{"cpu", n_cpu},
		{"bytes", n_bytes},
		{"duration", n_duration},
		{"format_cpu", n_format_cpu},
		{"format_bytes", n_format_bytes},
		{NULL, NULL},
	};
	lua_State *L = sandbox_state(sb);

	luaL_newlib(L, fns);
	sandbox_freeze(L);
	sandbox_preload(sb, "luascale.native");
}
