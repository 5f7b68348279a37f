/*
 * view: the read-only cluster a policy sees, and the helpers on it backed by
 * sched.c. Nodes and pods are userdata that read the snapshot's C structs
 * on access (nothing is built for 150,000 pods up front); every table the
 * policy gets is a read-only proxy. Owns the mapping from those objects back
 * to snapshot indices, and what each helper is charged to the instruction
 * budget for its work; the scheduling arithmetic itself is sched.c's.
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
#include "policy/tz.h"
#include "quantity.h"

static const char VIEW_KEY = 0; /* its address keys the struct view userdata in the registry */
static const char NODE_MT[] = "luascale.view.node";        /* metatable of node objects */
static const char POD_MT[] = "luascale.view.pod";          /* metatable of pod objects */
static const char FROZEN_MT[] = "luascale.view.frozen";    /* metatable of read-only proxies */
static const char KVLIST_MT[] = "luascale.view.kvlist";    /* labels, annotations read in place */
static const char NODE_KEYS[] = "luascale.view.nodekeys";  /* field name -> enum node_field */
static const char POD_KEYS[] = "luascale.view.podkeys";    /* field name -> enum pod_field */
static const char NODES_KEY[] = "luascale.view.nodes";     /* index+1 -> node object */
static const char PODCACHE_KEY[] = "luascale.view.pods";   /* index+1 -> pod object */
static const char CLUSTER_KEY[] = "luascale.view.cluster"; /* the cluster proxy */

struct view {
	const struct snapshot *snap;
	const struct drain_opts *dopts;
	uint32_t gen; /* which reconcile: objects of older ones are refused */
	bool quiet;   /* this reconcile's notes are not read */
	int strs_ref; /* registry slot of this view's strings: C pointer -> Lua string */
	/* sizes of the whole snapshot, summed when the view is built, from
	 * which the helpers' work is estimated before they do it (see
	 * "charging" below) */
	double label_sum;  /* labels of every node, plus one a node */
	double taint_sum;  /* taints of every node */
	double ext_sum;    /* extended resources of every node, plus one a node */
	double room_sum;   /* work of computing every node's free room */
	double pdb_sum;    /* requirements of every PDB, plus one a PDB */
	/* the metatables of node, pod and frozen objects, compared by
	 * identity: no lookup by name on every call */
	const void *node_mt, *pod_mt, *frozen_mt;
	/* what this reconcile's cluster:pack calls share (C memory, made on
	 * the first call, freed by view_end) */
	struct sched_cache *pack_cache;
	/* cluster:pack(..., {instance_type = T}): a cache each of the
	 * snapshot seen with one group's template its type T's */
	struct type_cache **type_caches;
	size_t n_type_caches;
};

struct type_cache {
	int32_t group;
	size_t type;
	struct snapshot snap;       /* the view's, shallow, but for 'groups' */
	struct node_group *groups;  /* the view's, group 'group' replaced by its type */
	struct sched_cache *cache;  /* of 'snap' (which must not move) */
};

static void free_type_caches(struct view *v)
{
	size_t i;

	for (i = 0; i < v->n_type_caches; i++) {
		sched_cache_free(v->type_caches[i]->cache);
		free(v->type_caches[i]->groups);
		free(v->type_caches[i]);
	}
	free(v->type_caches);
	v->type_caches = NULL;
	v->n_type_caches = 0;
}

/* The pack cache of the view's snapshot with group 'g' launching only
 * its type 't' (made now: *made set); NULL when out of memory. *snap_out
 * (when not NULL) gets that snapshot, which lives as long as the view. */
static struct sched_cache *type_cache(struct view *v, int32_t g, size_t t, bool *made,
				      const struct snapshot **snap_out)
{
	const struct snapshot *s = v->snap;
	struct type_cache *c, **grown;
	size_t i;

	for (i = 0; i < v->n_type_caches; i++)
		if (v->type_caches[i]->group == g && v->type_caches[i]->type == t) {
			if (snap_out)
				*snap_out = &v->type_caches[i]->snap;
			return v->type_caches[i]->cache;
		}
	grown = realloc(v->type_caches, (v->n_type_caches + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	v->type_caches = grown;
	if (!(c = calloc(1, sizeof(*c))))
		return NULL;
	c->group = g;
	c->type = t;
	c->groups = malloc(s->n_groups * sizeof(*c->groups));
	if (!c->groups) {
		free(c);
		return NULL;
	}
	memcpy(c->groups, s->groups, s->n_groups * sizeof(*c->groups));
	c->groups[g] = s->groups[g].types[t];
	c->groups[g].types = NULL;
	c->groups[g].n_types = 0;
	c->snap = *s;
	c->snap.groups = c->groups;
	if (!(c->cache = sched_cache_new(&c->snap))) {
		free(c->groups);
		free(c);
		return NULL;
	}
	v->type_caches[v->n_type_caches++] = c;
	*made = true;
	if (snap_out)
		*snap_out = &c->snap;
	return c->cache;
}

/* A node or pod object: an index into the snapshot of reconcile 'gen'.
 * Its first user value caches the tables built for it, its second its
 * name once read. */
#define OBJ_UVALUES 2
#define OBJ_UV_NAME 2
struct obj {
	uint32_t idx;
	uint32_t gen;
};

static struct view *view_of(lua_State *L)
{
	struct view *v;

	lua_rawgetp(L, LUA_REGISTRYINDEX, &VIEW_KEY);
	v = lua_touserdata(L, -1);
	lua_pop(L, 1);
	return v;
}

static struct view *get_view(lua_State *L)
{
	struct view *v = view_of(L);

	if (!v || !v->snap)
		luaL_error(L, "cluster view used outside of its reconcile call");
	return v;
}

/* The userdata at 'arg' when its metatable is the view's 'mt' (NODE_MT,
 * POD_MT or FROZEN_MT), else NULL: luaL_testudata without looking the
 * metatable up by name. */
static void *view_testudata(lua_State *L, int arg, const char *mt)
{
	const struct view *v = view_of(L);
	const void *want, *have;

	if (!v || lua_type(L, arg) != LUA_TUSERDATA || !lua_getmetatable(L, arg))
		return NULL;
	have = lua_topointer(L, -1);
	lua_pop(L, 1);
	want = mt == NODE_MT ? v->node_mt : mt == POD_MT ? v->pod_mt :
		mt == FROZEN_MT ? v->frozen_mt : NULL;
	return want && have == want ? lua_touserdata(L, arg) : NULL;
}

/*
 * Pushes a string of the snapshot. Each is made a Lua string once per
 * view, on its first read, and kept by its C pointer (the snapshot's
 * strings are interned and do not move while the view lives): reading
 * node.name again costs a pointer lookup, not hashing the text again.
 */
static void push_snapstr(lua_State *L, const struct view *v, const char *str)
{
	lua_rawgeti(L, LUA_REGISTRYINDEX, v->strs_ref);
	if (lua_rawgetp(L, -1, str) == LUA_TSTRING) {
		lua_remove(L, -2);
		return;
	}
	lua_pop(L, 1);
	lua_pushstring(L, str);
	lua_pushvalue(L, -1);
	lua_rawsetp(L, -3, str);
	lua_remove(L, -2);
}

/*
 * Pushes the name of the node or pod object at 'obj' (an absolute stack
 * index), kept in its user
 * value: a name is read about once a round, and most often it is the only
 * string of its object a policy reads, so it does not go through the
 * view's string table (a lookup, and an insert on every first read).
 */
static void push_name(lua_State *L, int obj, const char *name)
{
	if (lua_getiuservalue(L, obj, OBJ_UV_NAME) == LUA_TSTRING)
		return;
	lua_pop(L, 1);
	lua_pushstring(L, name);
	lua_pushvalue(L, -1);
	lua_setiuservalue(L, obj, OBJ_UV_NAME);
}

/* ---- read-only proxies ---- */

/* Replaces the table at the top of the stack by a read-only proxy. */
static void freeze(lua_State *L)
{
	lua_newuserdatauv(L, 0, 1);
	lua_insert(L, -2);
	lua_setiuservalue(L, -2, 1);
	luaL_setmetatable(L, FROZEN_MT);
}

static int frozen_index(lua_State *L)
{
	lua_getiuservalue(L, 1, 1);
	lua_pushvalue(L, 2);
	lua_rawget(L, -2);
	return 1;
}

static int readonly_newindex(lua_State *L)
{
	return luaL_error(L, "the cluster view is read-only (field '%s')",
			  lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : luaL_typename(L, 2));
}

static int frozen_len(lua_State *L)
{
	lua_getiuservalue(L, 1, 1);
	lua_pushinteger(L, (lua_Integer)lua_rawlen(L, -1));
	return 1;
}

static int raw_next(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TTABLE);
	lua_settop(L, 2);
	if (lua_next(L, 1))
		return 2;
	lua_pushnil(L);
	return 1;
}

static int frozen_pairs(lua_State *L)
{
	lua_pushcfunction(L, raw_next);
	lua_getiuservalue(L, 1, 1);
	lua_pushnil(L);
	return 3;
}

/* The real table behind a proxy at 'arg', pushed; false when not a proxy. */
static bool push_frozen_real(lua_State *L, int arg)
{
	if (!view_testudata(L, arg, FROZEN_MT))
		return false;
	lua_getiuservalue(L, arg, 1);
	return true;
}

/* ---- building blocks (each leaves one frozen value on the stack) ---- */

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

/*
 * A node's or pod's labels, annotations or node selector: a read-only
 * proxy that looks keys up in the snapshot's list itself, so reading one
 * label of 150,000 pods builds no table for any of them. Valid for the
 * reconcile that made it.
 */
struct kvproxy {
	const struct kvlist *l;
	uint32_t gen;
};

/* Entries looked up for free; a longer list costs a quarter a further entry. */
#define KV_FREE_ENTRIES 16

static const struct kvlist *kvproxy_list(lua_State *L, int arg, const struct view **vp)
{
	const struct kvproxy *k = lua_touserdata(L, arg);
	const struct view *v = get_view(L);

	if (vp)
		*vp = v;
	if (k->gen != v->gen)
		luaL_error(L, "these labels or annotations come from an earlier reconcile: keep their values, not the view's tables, in the store");
	if (k->l->n > KV_FREE_ENTRIES)
		sandbox_charge(L, (double)(k->l->n - KV_FREE_ENTRIES) / 4);
	return k->l;
}

static int kvproxy_index(lua_State *L)
{
	const struct view *v;
	const struct kvlist *l = kvproxy_list(L, 1, &v);
	const char *key, *val;

	if (lua_type(L, 2) != LUA_TSTRING)
		return 0;
	key = lua_tostring(L, 2);
	val = kvlist_get(l, key);
	if (!val)
		return 0;
	push_snapstr(L, v, val);
	return 1;
}

/* The iterator of pairs(): upvalue 1 is the position. */
static int kvproxy_next(lua_State *L)
{
	const struct view *v;
	const struct kvlist *l = kvproxy_list(L, 1, &v);
	lua_Integer i = lua_tointeger(L, lua_upvalueindex(1));

	if (i < 0 || (size_t)i >= l->n) {
		lua_pushnil(L);
		return 1;
	}
	lua_pushinteger(L, i + 1);
	lua_replace(L, lua_upvalueindex(1));
	push_snapstr(L, v, l->items[i].key);
	push_snapstr(L, v, l->items[i].value);
	return 2;
}

static int kvproxy_pairs(lua_State *L)
{
	kvproxy_list(L, 1, NULL);
	lua_pushinteger(L, 0);
	lua_pushcclosure(L, kvproxy_next, 1);
	lua_pushvalue(L, 1);
	lua_pushnil(L);
	return 3;
}

static int kvproxy_len(lua_State *L)
{
	kvproxy_list(L, 1, NULL);
	lua_pushinteger(L, 0); /* string keys only, like the table it stands for */
	return 1;
}

static void push_kvproxy(lua_State *L, const struct kvlist *l)
{
	struct kvproxy *k = lua_newuserdatauv(L, sizeof(*k), 0);

	k->l = l;
	k->gen = get_view(L)->gen;
	luaL_setmetatable(L, KVLIST_MT);
}

static void push_kvlist(lua_State *L, const struct kvlist *l)
{
	size_t i;

	lua_createtable(L, 0, (int)l->n);
	for (i = 0; i < l->n; i++) {
		lua_pushstring(L, l->items[i].value);
		lua_setfield(L, -2, l->items[i].key);
	}
	freeze(L);
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
	freeze(L);
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
	freeze(L);
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
		freeze(L);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	freeze(L);
}

static double fraction(int64_t used, int64_t total)
{
	return total > 0 ? (double)used / (double)total : 0.0;
}

/* ---- charging ----
 *
 * The helpers below do in C what would take a policy many instructions:
 * cluster:pack of all the pending pods does pods x bins checks for one
 * call. Each is charged to the instruction budget (sandbox_charge) before
 * it works, by an upper bound of its work computed from its inputs and
 * the snapshot's sizes: one instruction per check of a pod against a
 * node, a bin or a template, plus one per label compared by a selector,
 * per toleration tried against a taint, per extended resource looked up.
 * Charging before working means the budget error comes before the work,
 * and that nothing C-allocated is held when it is raised.
 */

/* Requirements of a pod's node selector and required affinity (each
 * compared against a node's labels, one label at a time). */
static double pod_selector_size(const struct pod *p)
{
	double n = (double)p->node_selector.n;
	size_t i, j;

	for (i = 0; i < p->affinity.n_terms; i++) {
		const struct node_selector_term *t = &p->affinity.terms[i];

		n += 1 + (double)t->n_fields;
		for (j = 0; j < t->n_exprs; j++)
			n += 1 + (double)t->exprs[j].n_values;
	}
	return n;
}

/* Checking pod 'p' against one node or template of 'labels' labels,
 * 'taints' taints and 'ext' extended resources. */
static double match_work(const struct pod *p, size_t labels, size_t taints, size_t ext)
{
	return 1 + pod_selector_size(p) * (double)(labels + 1) +
	       (double)(p->n_tolerations + 1) * (double)taints +
	       (double)p->requests.n_ext * (double)(ext + 1);
}

/* Checking pod 'p' against every node of the snapshot. */
static double match_all_work(const struct view *v, const struct pod *p)
{
	return (double)v->snap->n_nodes + pod_selector_size(p) * v->label_sum +
	       (double)(p->n_tolerations + 1) * v->taint_sum +
	       (double)p->requests.n_ext * v->ext_sum;
}

/* Sorting n items: n log2 n comparisons. */
static double sort_work(double n)
{
	return n > 1 ? n * log2(n) : 0;
}

/* Work of room_of_node() on node 'nd'. */
static double room_work(const struct node *nd)
{
	double e = (double)(nd->allocatable.n_ext + nd->requested.n_ext);

	return 1 + e * e;
}

/* A string argument the snapshot looks up (hashes and compares). */
static void charge_name(lua_State *L, size_t len)
{
	if (len > 64)
		sandbox_charge(L, (double)len / 4);
}

/* Sums the snapshot's sizes the charges are computed from. */
static void measure_snapshot(struct view *v)
{
	const struct snapshot *s = v->snap;
	size_t i;

	v->label_sum = v->taint_sum = v->ext_sum = v->room_sum = v->pdb_sum = 0;
	for (i = 0; i < s->n_nodes; i++) {
		const struct node *nd = &s->nodes[i];

		v->label_sum += (double)nd->labels.n + 1;
		v->taint_sum += (double)nd->n_taints;
		v->ext_sum += (double)nd->allocatable.n_ext + 1;
		v->room_sum += room_work(nd);
	}
	for (i = 0; i < s->n_pdbs; i++)
		v->pdb_sum += (double)s->pdbs[i].selector.n + 1;
}

/* ---- node and pod objects ---- */

enum node_field {
	NF_NAME = 1, NF_GROUP, NF_LABELS, NF_ANNOTATIONS, NF_TAINTS, NF_ALLOCATABLE,
	NF_REQUESTED, NF_FREE, NF_UTILIZATION, NF_UNSCHEDULABLE, NF_READY, NF_CREATED,
	NF_AGE, NF_PROVIDER_ID, NF_POD_COUNT, NF_PODS, NF_REMOVING, NF_LIVE_REQUESTS,
	NF_PROTECTED, NF_DRIFTED, NF_DRIFT_REASON, NF_REPLACING, NF_INTERRUPTION,
};

static const char *const node_fields[] = {
	NULL, "name", "group", "labels", "annotations", "taints", "allocatable",
	"requested", "free", "utilization", "unschedulable", "ready", "created",
	"age", "provider_id", "pod_count", "pods", "removing", "live_requests",
	"protected", "drifted", "drift_reason", "replacing", "interruption", NULL,
};

enum pod_field {
	PF_NAMESPACE = 1, PF_NAME, PF_LABELS, PF_ANNOTATIONS, PF_CONTROLLER,
	PF_CONTROLLER_NAME, PF_NODE, PF_PHASE, PF_REQUESTS, PF_PRIORITY, PF_DAEMONSET,
	PF_MIRROR, PF_STATIC, PF_LOCAL_STORAGE, PF_UNSCHEDULABLE, PF_TERMINATING,
	PF_FINISHED, PF_SAFE_TO_EVICT, PF_CREATED, PF_AGE, PF_SCHEDULER_MESSAGE,
	PF_TOLERATIONS, PF_NODE_SELECTOR, PF_NOT_MODELLED, PF_CONSTRAINED,
};

static const char *const pod_fields[] = {
	NULL, "namespace", "name", "labels", "annotations", "controller",
	"controller_name", "node", "phase", "requests", "priority", "daemonset",
	"mirror", "static", "local_storage", "unschedulable", "terminating",
	"finished", "safe_to_evict", "created", "age", "scheduler_message",
	"tolerations", "node_selector", "not_modelled", "constrained", NULL,
};

/* The object at 'arg' of metatable 'mt', checked to belong to this view. */
static const struct obj *check_obj(lua_State *L, int arg, const char *mt, const char *what)
{
	const struct obj *o = view_testudata(L, arg, mt);
	struct view *v;

	if (!o) {
		luaL_argerror(L, arg, lua_pushfstring(L, "expected a %s of the cluster view", what));
		return NULL;
	}
	v = get_view(L);
	if (o->gen != v->gen)
		luaL_error(L, "this %s comes from an earlier reconcile: keep names, not %s objects, in the store",
			   what, what);
	return o;
}

/* Field id of key 'k' in the registry table 'keys', 0 when unknown. */
static int field_id(lua_State *L, const char *keys, int k)
{
	int id;

	if (lua_type(L, k) != LUA_TSTRING)
		return 0;
	lua_getfield(L, LUA_REGISTRYINDEX, keys);
	lua_pushvalue(L, k);
	lua_rawget(L, -2);
	id = (int)lua_tointeger(L, -1);
	lua_pop(L, 2);
	return id;
}

/*
 * The fast path of node.x / pod.x, the most frequent operation of a policy:
 * upvalue 1 is the field table, upvalue 2 the view (light userdata). The
 * metatables are hidden from policies, so argument 1 is always our object.
 */
static const struct obj *fast_obj(lua_State *L, const struct view **vp, const char *what)
{
	const struct obj *o = lua_touserdata(L, 1);
	const struct view *v = lua_touserdata(L, lua_upvalueindex(2));

	if (!v->snap)
		luaL_error(L, "cluster view used outside of its reconcile call");
	if (o->gen != v->gen)
		luaL_error(L, "this %s comes from an earlier reconcile: keep names, not %s objects, in the store",
			   what, what);
	*vp = v;
	return o;
}

static int fast_field_id(lua_State *L)
{
	if (lua_type(L, 2) != LUA_TSTRING)
		return 0;
	lua_pushvalue(L, 2);
	return lua_rawget(L, lua_upvalueindex(1)) == LUA_TNUMBER ? (int)lua_tointeger(L, -1) : 0;
}

/* Looks up field 'id' in the object's cache; true (value pushed) when there. */
static bool cache_get(lua_State *L, int obj, int id)
{
	if (lua_getiuservalue(L, obj, 1) != LUA_TTABLE) {
		lua_pop(L, 1);
		return false;
	}
	if (lua_rawgeti(L, -1, id) == LUA_TNIL) {
		lua_pop(L, 2);
		return false;
	}
	lua_remove(L, -2);
	return true;
}

/* Stores the value at the top in the object's cache (value stays). */
static void cache_put(lua_State *L, int obj, int id)
{
	if (lua_getiuservalue(L, obj, 1) != LUA_TTABLE) {
		lua_pop(L, 1);
		lua_createtable(L, 4, 0);
		lua_pushvalue(L, -1);
		lua_setiuservalue(L, obj, 1);
	}
	lua_pushvalue(L, -2);
	lua_rawseti(L, -2, id);
	lua_pop(L, 1);
}

static void push_pod(lua_State *L, const struct snapshot *s, uint32_t idx);

/* ---- per-node aggregates ----
 *
 * What policies would otherwise compute pod by pod, building a table for
 * each pod they look at: summed in C over the node's pods, charged one
 * instruction a pod (and a label compared) before the sum is made.
 */

/* A pod that would come back if its node went away: not finished, not a
 * DaemonSet, mirror or static pod (those stay with, or die with, the node). */
static bool pod_live(const struct pod *p)
{
	return !pod_finished(p) && !(p->flags & (POD_DAEMONSET | POD_MIRROR | POD_STATIC));
}

/* node.live_requests: the summed requests of the node's live pods, a
 * resource table like node.requested ('pods' is how many). */
static void push_live_requests(lua_State *L, const struct snapshot *s, const struct node *n)
{
	int64_t cpu = 0, mem = 0, eph = 0, count = 0;
	size_t i, j;
	double work = (double)n->n_pods;

	for (i = 0; i < n->n_pods; i++)
		work += (double)s->pods[n->pods[i]].requests.n_ext;
	sandbox_charge(L, work);
	lua_createtable(L, 0, 4);
	for (i = 0; i < n->n_pods; i++) {
		const struct pod *p = &s->pods[n->pods[i]];

		if (!pod_live(p))
			continue;
		cpu += p->requests.cpu_m;
		mem += p->requests.memory;
		eph += p->requests.ephemeral;
		count++;
		for (j = 0; j < p->requests.n_ext; j++) {
			const struct res_ext *e = &p->requests.ext[j];
			lua_Integer have = lua_getfield(L, -1, e->name) == LUA_TNUMBER ? lua_tointeger(L, -1) : 0;

			lua_pop(L, 1);
			lua_pushinteger(L, have + (lua_Integer)e->value);
			lua_setfield(L, -2, e->name);
		}
	}
	set_num(L, "cpu", (double)cpu / 1000.0);
	set_int(L, "memory", mem);
	set_int(L, "ephemeral-storage", eph);
	set_int(L, "pods", count);
	freeze(L);
}

/* node.protected: does an unfinished pod of the node match the configured
 * protected-pod selector (safety.protected_pod_selector)? Such a node is
 * never drained or deleted. */
static bool node_protected(lua_State *L, const struct view *v, const struct node *n)
{
	const struct label_selector *sel = v->dopts ? v->dopts->protected_pods : NULL;
	double work = (double)n->n_pods;
	size_t i;
	bool found = false;

	if (!sel || sel->n == 0)
		return false;
	/* as pods_matching: the pods before, the labels compared after */
	sandbox_charge(L, work * (double)(sel->n + 1));
	work = 0;
	for (i = 0; i < n->n_pods && !found; i++) {
		const struct pod *p = &v->snap->pods[n->pods[i]];

		work += (double)p->labels.n * (double)sel->n;
		found = !pod_finished(p) && label_selector_matches(sel, &p->labels);
	}
	sandbox_charge(L, work);
	return found;
}

static void push_node_field(lua_State *L, const struct view *v, size_t idx, int id, int obj)
{
	const struct snapshot *s = v->snap;
	const struct node *n = &s->nodes[idx];
	size_t i, live = 0;

	switch (id) {
	case NF_NAME: push_name(L, obj, n->name); return;
	case NF_GROUP:
		if (n->group >= 0)
			push_snapstr(L, v, s->groups[n->group].name);
		else
			lua_pushnil(L);
		return;
	case NF_UNSCHEDULABLE: lua_pushboolean(L, n->unschedulable); return;
	case NF_READY: lua_pushboolean(L, n->ready); return;
	case NF_REMOVING: lua_pushboolean(L, n->removing); return;
	case NF_REPLACING: lua_pushboolean(L, n->replacing); return;
	case NF_INTERRUPTION:
		if (!n->interruption_kind) {
			lua_pushnil(L);
			return;
		}
		lua_createtable(L, 0, 2);
		lua_pushstring(L, n->interruption_kind);
		lua_setfield(L, -2, "kind");
		if (n->interruption_deadline > 0) {
			lua_pushinteger(L, (lua_Integer)n->interruption_deadline);
			lua_setfield(L, -2, "deadline");
		}
		return;
	case NF_CREATED: lua_pushinteger(L, (lua_Integer)n->created); return;
	case NF_AGE: lua_pushinteger(L, (lua_Integer)(s->now - n->created)); return;
	case NF_PROVIDER_ID: lua_pushstring(L, n->provider_id); return;
	case NF_PROTECTED: lua_pushboolean(L, node_protected(L, view_of(L), n)); return;
	case NF_DRIFTED:
	case NF_DRIFT_REASON: {
		char why[512];
		bool drifted;

		sandbox_charge(L, (double)(n->labels.n + n->n_taints) + 1);
		drifted = snapshot_node_drift(s, idx, why, sizeof(why));
		if (id == NF_DRIFTED)
			lua_pushboolean(L, drifted);
		else if (drifted)
			lua_pushstring(L, why);
		else
			lua_pushnil(L);
		return;
	}
	case NF_POD_COUNT:
		sandbox_charge(L, (double)n->n_pods);
		for (i = 0; i < n->n_pods; i++)
			if (!pod_finished(&s->pods[n->pods[i]]))
				live++;
		lua_pushinteger(L, (lua_Integer)live);
		return;
	default:
		break;
	}
	if (cache_get(L, obj, id))
		return;
	switch (id) {
	case NF_LABELS: push_kvproxy(L, &n->labels); break;
	case NF_ANNOTATIONS: push_kvproxy(L, &n->annotations); break;
	case NF_TAINTS: push_taints(L, n->taints, n->n_taints); break;
	case NF_ALLOCATABLE: push_resources(L, &n->allocatable); break;
	case NF_REQUESTED: push_resources(L, &n->requested); break;
	case NF_FREE: push_free(L, &n->allocatable, &n->requested); break;
	case NF_LIVE_REQUESTS: push_live_requests(L, s, n); break;
	case NF_UTILIZATION:
		lua_createtable(L, 0, 2);
		set_num(L, "cpu", fraction(n->requested.cpu_m, n->allocatable.cpu_m));
		set_num(L, "memory", fraction(n->requested.memory, n->allocatable.memory));
		freeze(L);
		break;
	case NF_PODS:
		lua_createtable(L, (int)n->n_pods, 0);
		for (i = 0; i < n->n_pods; i++) {
			push_pod(L, s, n->pods[i]);
			lua_rawseti(L, -2, (lua_Integer)i + 1);
		}
		freeze(L);
		break;
	default:
		lua_pushnil(L);
		return;
	}
	cache_put(L, obj, id);
}

static int node_index(lua_State *L)
{
	const struct view *v;
	const struct obj *o = fast_obj(L, &v, "node");
	int id = fast_field_id(L);

	if (!id)
		return 0;
	push_node_field(L, v, o->idx, id, 1);
	return 1;
}

static void push_pod_field(lua_State *L, const struct view *v, size_t idx, int id, int obj)
{
	const struct snapshot *s = v->snap;
	const struct pod *p = &s->pods[idx];

	switch (id) {
	case PF_NAMESPACE: push_snapstr(L, v, p->ns); return;
	case PF_NAME: push_name(L, obj, p->name); return;
	case PF_CONTROLLER:
		if (p->controller_kind[0])
			lua_pushstring(L, p->controller_kind);
		else
			lua_pushnil(L);
		return;
	case PF_CONTROLLER_NAME:
		if (p->controller_kind[0])
			lua_pushstring(L, p->controller_name);
		else
			lua_pushnil(L);
		return;
	case PF_NODE:
		if (p->node_name[0])
			lua_pushstring(L, p->node_name);
		else
			lua_pushnil(L);
		return;
	case PF_PHASE: lua_pushstring(L, pod_phase_str(p->phase)); return;
	case PF_PRIORITY: lua_pushinteger(L, p->priority); return;
	case PF_DAEMONSET: lua_pushboolean(L, p->flags & POD_DAEMONSET); return;
	case PF_MIRROR: lua_pushboolean(L, p->flags & POD_MIRROR); return;
	case PF_STATIC: lua_pushboolean(L, p->flags & POD_STATIC); return;
	case PF_LOCAL_STORAGE: lua_pushboolean(L, p->flags & POD_LOCAL_STORAGE); return;
	case PF_UNSCHEDULABLE: lua_pushboolean(L, p->flags & POD_UNSCHEDULABLE); return;
	case PF_TERMINATING: lua_pushboolean(L, p->flags & POD_TERMINATING); return;
	case PF_FINISHED: lua_pushboolean(L, pod_finished(p)); return;
	case PF_SAFE_TO_EVICT: lua_pushboolean(L, !(p->flags & POD_SAFE_TO_EVICT_FALSE)); return;
	case PF_CREATED: lua_pushinteger(L, (lua_Integer)p->created); return;
	case PF_AGE: lua_pushinteger(L, (lua_Integer)(s->now - p->created)); return;
	case PF_SCHEDULER_MESSAGE:
		if (p->sched_message[0])
			lua_pushstring(L, p->sched_message);
		else
			lua_pushnil(L);
		return;
	case PF_NOT_MODELLED:
		if (p->unmodelled)
			lua_pushstring(L, p->unmodelled);
		else
			lua_pushnil(L);
		return;
	case PF_CONSTRAINED:
		/* relations to other pods or zones: host ports, pod
		 * (anti-)affinity, topology spread, volumes */
		lua_pushboolean(L, p->n_host_ports || p->n_affinity_terms || p->n_anti_terms ||
				   p->n_spread || p->n_claims);
		return;
	default:
		break;
	}
	if (cache_get(L, obj, id))
		return;
	switch (id) {
	case PF_LABELS: push_kvproxy(L, &p->labels); break;
	case PF_ANNOTATIONS: push_kvproxy(L, &p->annotations); break;
	case PF_REQUESTS: push_resources(L, &p->requests); break;
	case PF_NODE_SELECTOR: push_kvproxy(L, &p->node_selector); break;
	case PF_TOLERATIONS: {
		size_t i;

		lua_createtable(L, (int)p->n_tolerations, 0);
		for (i = 0; i < p->n_tolerations; i++) {
			const struct toleration *t = &p->tolerations[i];

			lua_createtable(L, 0, 4);
			if (t->key && t->key[0])
				set_str(L, "key", t->key);
			set_str(L, "operator", t->op == TOLERATION_EXISTS ? "Exists" : "Equal");
			if (t->value && t->value[0])
				set_str(L, "value", t->value);
			if (t->effect >= 0)
				set_str(L, "effect", taint_effect_str((enum taint_effect)t->effect));
			freeze(L);
			lua_rawseti(L, -2, (lua_Integer)i + 1);
		}
		freeze(L);
		break;
	}
	default:
		lua_pushnil(L);
		return;
	}
	cache_put(L, obj, id);
}

static int pod_index(lua_State *L)
{
	const struct view *v;
	const struct obj *o = fast_obj(L, &v, "pod");
	int id = fast_field_id(L);

	if (!id)
		return 0;
	push_pod_field(L, v, o->idx, id, 1);
	return 1;
}

/* pairs(node) / pairs(pod): every field with a value, in a fixed order */
static int obj_next(lua_State *L)
{
	bool is_node = view_testudata(L, 1, NODE_MT) != NULL;
	const struct obj *o = check_obj(L, 1, is_node ? NODE_MT : POD_MT, is_node ? "node" : "pod");
	const char *const *names = is_node ? node_fields : pod_fields;
	int id = lua_isnil(L, 2) ? 0 : field_id(L, is_node ? NODE_KEYS : POD_KEYS, 2);

	for (id++; names[id]; id++) {
		lua_pushstring(L, names[id]);
		if (is_node)
			push_node_field(L, get_view(L), o->idx, id, 1);
		else
			push_pod_field(L, get_view(L), o->idx, id, 1);
		if (!lua_isnil(L, -1))
			return 2;
		lua_pop(L, 2);
	}
	lua_pushnil(L);
	return 1;
}

static int obj_pairs(lua_State *L)
{
	lua_pushcfunction(L, obj_next);
	lua_pushvalue(L, 1);
	lua_pushnil(L);
	return 3;
}

static int node_tostring(lua_State *L)
{
	const struct obj *o = lua_touserdata(L, 1);
	struct view *v = view_of(L);

	if (v && v->snap && o->gen == v->gen)
		lua_pushfstring(L, "node %s", v->snap->nodes[o->idx].name);
	else
		lua_pushliteral(L, "node (from an earlier reconcile)");
	return 1;
}

static int pod_tostring(lua_State *L)
{
	const struct obj *o = lua_touserdata(L, 1);
	struct view *v = view_of(L);

	if (v && v->snap && o->gen == v->gen)
		lua_pushfstring(L, "pod %s/%s", v->snap->pods[o->idx].ns, v->snap->pods[o->idx].name);
	else
		lua_pushliteral(L, "pod (from an earlier reconcile)");
	return 1;
}

/* Pushes a new object of the metatable at stack index 'mt'. */
static void push_obj(lua_State *L, int mt, uint32_t idx, uint32_t gen)
{
	struct obj *o = lua_newuserdatauv(L, sizeof(*o), OBJ_UVALUES);

	o->idx = idx;
	o->gen = gen;
	lua_pushvalue(L, mt < 0 ? mt - 1 : mt);
	lua_setmetatable(L, -2);
}

/* Pushes the (unique per view) object of pod 'idx'. */
static void push_pod(lua_State *L, const struct snapshot *s, uint32_t idx)
{
	(void)s;
	lua_getfield(L, LUA_REGISTRYINDEX, PODCACHE_KEY);
	if (lua_rawgeti(L, -1, (lua_Integer)idx + 1) == LUA_TUSERDATA) {
		lua_remove(L, -2);
		return;
	}
	lua_pop(L, 1);
	luaL_getmetatable(L, POD_MT);
	push_obj(L, -1, idx, get_view(L)->gen);
	lua_remove(L, -2);
	lua_pushvalue(L, -1);
	lua_rawseti(L, -3, (lua_Integer)idx + 1);
	lua_remove(L, -2);
}

/* Index of the node object (or node name) at 'arg', or raises. */
static size_t check_node(lua_State *L, const struct snapshot *s, int arg)
{
	if (lua_type(L, arg) == LUA_TSTRING) {
		int32_t i;

		charge_name(L, lua_rawlen(L, arg));
		i = snapshot_find_node(s, lua_tostring(L, arg));

		if (i < 0)
			luaL_error(L, "no node named \"%s\"", lua_tostring(L, arg));
		return (size_t)i;
	}
	return check_obj(L, arg, NODE_MT, "node")->idx;
}

static size_t check_pod(lua_State *L, int arg)
{
	return check_obj(L, arg, POD_MT, "pod")->idx;
}

/* Group index from a group object or name, or -1 when 'arg' is not one. */
static int32_t to_group(lua_State *L, const struct snapshot *s, int arg)
{
	int32_t g = -1;

	if (lua_type(L, arg) == LUA_TSTRING) {
		charge_name(L, lua_rawlen(L, arg));
		g = snapshot_find_group(s, lua_tostring(L, arg));
		if (g < 0)
			luaL_error(L, "no node group named \"%s\"", lua_tostring(L, arg));
	} else if (push_frozen_real(L, arg)) {
		lua_pushliteral(L, "template");
		if (lua_rawget(L, -2) != LUA_TNIL) {
			lua_pushliteral(L, "name");
			if (lua_rawget(L, -3) == LUA_TSTRING)
				g = snapshot_find_group(s, lua_tostring(L, -1));
			lua_pop(L, 1);
		}
		lua_pop(L, 2);
	}
	return g;
}

static void push_group(lua_State *L, const struct snapshot *s, const struct node_group *g)
{
	lua_createtable(L, 0, 14);
	if (g->backoff_until > s->now) {
		set_int(L, "backed_off_until", g->backoff_until);
		set_str(L, "backoff_reason", g->backoff_reason);
	}
	set_str(L, "name", g->name);
	set_int(L, "min", g->min);
	set_int(L, "max", g->max);
	set_int(L, "current", g->current);
	set_int(L, "target", g->target);
	set_int(L, "upcoming", g->target > g->current ? g->target - g->current : 0);
	set_int(L, "removing", g->removing);
	if (g->expire_after > 0)
		set_int(L, "expire_after", g->expire_after);
	set_num(L, "price_per_hour", g->price_per_hour);
	set_str(L, "price_source", g->price_from_cloud ? "cloud" : g->price_per_hour > 0 ? "config" : "none");
	push_resources(L, &g->daemonset_requests);
	lua_setfield(L, -2, "daemonset_requests");
	set_int(L, "daemonsets", g->n_daemonsets);
	lua_createtable(L, 0, 3);
	push_resources(L, &g->tmpl.allocatable);
	lua_setfield(L, -2, "allocatable");
	push_kvlist(L, &g->tmpl.labels);
	lua_setfield(L, -2, "labels");
	push_taints(L, g->tmpl.taints, g->tmpl.n_taints);
	lua_setfield(L, -2, "taints");
	freeze(L);
	lua_setfield(L, -2, "template");
	if (g->instance_type && g->instance_type[0])
		set_str(L, "instance_type", g->instance_type);
	if (g->n_types) {
		size_t i;

		/* the group's types: { name, price_per_hour, price_source,
		 * daemonset_requests, template }, in the group's order */
		lua_createtable(L, (int)g->n_types, 0);
		for (i = 0; i < g->n_types; i++) {
			const struct node_group *t = &g->types[i];

			lua_createtable(L, 0, 5);
			set_str(L, "name", t->instance_type ? t->instance_type : "");
			set_num(L, "price_per_hour", t->price_per_hour);
			set_str(L, "price_source", t->price_from_cloud ? "cloud"
						   : t->price_per_hour > 0 ? "config" : "none");
			push_resources(L, &t->daemonset_requests);
			lua_setfield(L, -2, "daemonset_requests");
			lua_createtable(L, 0, 3);
			push_resources(L, &t->tmpl.allocatable);
			lua_setfield(L, -2, "allocatable");
			push_kvlist(L, &t->tmpl.labels);
			lua_setfield(L, -2, "labels");
			push_taints(L, t->tmpl.taints, t->tmpl.n_taints);
			lua_setfield(L, -2, "taints");
			freeze(L);
			lua_setfield(L, -2, "template");
			freeze(L);
			lua_rawseti(L, -2, (lua_Integer)i + 1);
		}
		freeze(L);
		lua_setfield(L, -2, "instance_types");
	}
	freeze(L);
}

/* ---- helpers (methods of the cluster) ---- */

/* Does the pod fit node 'n' with some of its constraints set aside:
 * {ignore_cordon = true, ignore_taints = {"key", ...}} at 'opts'? */
static enum sched_fit fits_node_ignoring(lua_State *L, const struct snapshot *s,
					 const struct pod *p, size_t n, int opts,
					 char *detail, size_t len)
{
	const struct node *nd = &s->nodes[n];
	struct taint *kept;
	size_t i, n_kept = 0;
	bool cordon;
	struct room r;
	enum sched_fit f;

	lua_getfield(L, opts, "ignore_cordon");
	cordon = nd->unschedulable && !lua_toboolean(L, -1);
	lua_pop(L, 1);
	kept = lua_newuserdatauv(L, (nd->n_taints ? nd->n_taints : 1) * sizeof(*kept), 0);
	lua_getfield(L, opts, "ignore_taints");
	if (lua_istable(L, -1))
		sandbox_charge(L, (double)nd->n_taints * ((double)lua_rawlen(L, -1) + 1));
	for (i = 0; i < nd->n_taints; i++) {
		bool ignored = false;

		if (lua_istable(L, -1)) {
			lua_Integer k, m = (lua_Integer)lua_rawlen(L, -1);

			for (k = 1; k <= m && !ignored; k++) {
				lua_rawgeti(L, -1, k);
				ignored = lua_type(L, -1) == LUA_TSTRING &&
					  strcmp(lua_tostring(L, -1), nd->taints[i].key) == 0;
				lua_pop(L, 1);
			}
		}
		if (!ignored)
			kept[n_kept++] = nd->taints[i];
	}
	lua_pop(L, 2);
	f = sched_fits_labels(p, nd->name, &nd->labels, kept, n_kept, cordon, detail, len);
	if (f != SCHED_FITS)
		return f;
	if (room_of_node(s, n, &r) < 0)
		luaL_error(L, "out of memory");
	f = room_fits(&r, &p->requests, detail, len);
	room_free(&r);
	if (f != SCHED_FITS)
		return f;
	return sched_fits_relations(s, p, n, detail, len);
}

/* cluster:fits(pod, node_or_group [, opts]) -> bool, why */
static int l_fits(lua_State *L)
{
	struct view *v = get_view(L);
	const struct snapshot *s = v->snap;
	size_t pod = check_pod(L, 2);
	char detail[256] = "";
	enum sched_fit f;
	const struct pod *p = &s->pods[pod];
	int32_t g = to_group(L, s, 3);

	if (g >= 0) {
		const struct node_template *t = &s->groups[g].tmpl;

		sandbox_charge(L, match_work(p, t->labels.n, t->n_taints, t->allocatable.n_ext));
		f = sched_fits_group(s, p, (size_t)g, detail, sizeof(detail));
	} else {
		size_t n = check_node(L, s, 3);
		const struct node *nd = &s->nodes[n];

		sandbox_charge(L, match_work(p, nd->labels.n, nd->n_taints,
					     nd->allocatable.n_ext + nd->requested.n_ext) +
				  room_work(nd));
		if (lua_istable(L, 4))
			f = fits_node_ignoring(L, s, p, n, 4, detail, sizeof(detail));
		else
			f = sched_fits_node(s, p, n, detail, sizeof(detail));
	}
	lua_pushboolean(L, f == SCHED_FITS);
	if (f == SCHED_FITS)
		return 1;
	lua_pushstring(L, detail[0] ? detail : sched_fit_str(f));
	return 2;
}

static void check_list(lua_State *L, int arg)
{
	if (!lua_istable(L, arg) && !view_testudata(L, arg, FROZEN_MT))
		luaL_argerror(L, arg, "expected a list");
}

/* The share of a template's room one pod takes in one resource, 0..1
 * (1 when it does not fit an empty template node at all). */
static double share_of(int64_t want, int64_t have)
{
	if (want <= 0)
		return 0;
	if (have <= 0 || want >= have)
		return 1;
	return (double)want / (double)have;
}

/*
 * An upper bound of sched_pack_upcoming()'s work: each pod checked against
 * the template, sorted, then tried against the bins in order up to the
 * first that takes it. Non-empty bins come first and an empty bin takes
 * any pod that fits the template, so a pod tries at most B + 1 bins, B
 * the bins that end up non-empty. For any two of those, the first pod
 * put in the later one did not fit the earlier one: in some resource the
 * two hold more than a template node, so B - 1 < 2 * the sum of every
 * pod's shares of the template (cpu, memory, ephemeral storage, pod slots,
 * extended resources). Bounded by the pods, too.
 */
static double pack_work(const struct snapshot *s, const uint32_t *idx, size_t n, size_t group,
			int max_new, int upcoming)
{
	const struct node_group *g = &s->groups[group];
	const struct node_template *t = &g->tmpl;
	const struct resources *a = &t->allocatable;
	double work = 0, shares = 0, per_try = 0, bins, opened;
	size_t i, j;

	for (i = 0; i < n; i++) {
		const struct pod *p = &s->pods[idx[i]];
		const struct resources *r = &p->requests;

		work += match_work(p, t->labels.n, t->n_taints, a->n_ext);
		shares += share_of(r->cpu_m, a->cpu_m) + share_of(r->memory, a->memory) +
			  share_of(r->ephemeral, a->ephemeral) + share_of(1, a->pods);
		for (j = 0; j < r->n_ext; j++)
			shares += share_of(r->ext[j].value, resources_ext(a, r->ext[j].name));
		per_try += 1 + (double)r->n_ext * ((double)a->n_ext + 1);
	}
	if (upcoming < 0)
		upcoming = g->target > g->current ? (int)(g->target - g->current) : 0;
	bins = floor(2 * shares) + 1;
	if (bins > (double)n)
		bins = (double)n;
	opened = (double)upcoming + (max_new >= 0 && (double)max_new < bins ? max_new : bins);
	if (bins > opened)
		bins = opened;
	return work + sort_work((double)n) + (double)upcoming * ((double)a->n_ext + 1) +
	       per_try * (bins + 1);
}

/*
 * The 'after' option of cluster:pack: a list of earlier pack results
 * (each with its pods, placement, group and upcoming, and the pods it put
 * on existing nodes, 'on_nodes') or cluster:place results (pods and
 * on_nodes only), as the placements a later packing counts: on their
 * planned nodes, and on existing nodes, whose room they take. The array
 * is Lua's, left on top of the stack for as long as it is used.
 */
static struct pack_prior *check_prior(lua_State *L, const struct snapshot *s, int arg,
				      size_t *n_prior)
{
	struct pack_prior *prior;
	lua_Integer i, j, n, total = 0;

	luaL_checktype(L, arg, LUA_TTABLE);
	n = luaL_len(L, arg);
	for (i = 1; i <= n; i++) {
		lua_geti(L, arg, i);
		if (!lua_istable(L, -1))
			luaL_error(L, "pack: after[%d] is not a pack or place result", (int)i);
		lua_getfield(L, -1, "pods");
		if (!lua_istable(L, -1) && !view_testudata(L, -1, FROZEN_MT))
			luaL_error(L, "pack: after[%d] has no pods (not a pack or place result)", (int)i);
		total += luaL_len(L, -1);
		lua_pop(L, 2);
	}
	if (total > (lua_Integer)s->n_pods * 4 + 1024)
		luaL_error(L, "pack: 'after' lists more placements than the cluster has pods");
	sandbox_charge(L, 8 * (double)total);
	/* at most one placement per pod listed: on a bin or an existing node */
	prior = lua_newuserdatauv(L, (size_t)(total ? total : 1) * sizeof(*prior), 0);
	*n_prior = 0;
	for (i = 1; i <= n; i++) {
		lua_Integer m, up;
		int32_t g = -1;
		bool bins;

		lua_geti(L, arg, i);
		lua_getfield(L, -1, "placement");
		bins = !lua_isnil(L, -1);
		if (bins && !lua_istable(L, -1))
			luaL_error(L, "pack: after[%d].placement is not a table", (int)i);
		lua_pop(L, 1);
		lua_getfield(L, -1, "on_nodes");
		if (!bins && !lua_istable(L, -1))
			luaL_error(L, "pack: after[%d] has no placement nor on_nodes (not a pack or place result)",
				   (int)i);
		lua_pop(L, 1);
		lua_getfield(L, -1, "group");
		if (bins && (g = to_group(L, s, lua_gettop(L))) < 0)
			luaL_error(L, "pack: after[%d] names no node group", (int)i);
		lua_pop(L, 1);
		lua_getfield(L, -1, "upcoming");
		up = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : 0;
		lua_pop(L, 1);
		lua_getfield(L, -1, "bin_groups"); /* a balanced packing's: the group per bin */
		lua_getfield(L, -2, "pods");
		lua_getfield(L, -3, "placement");
		lua_getfield(L, -4, "on_nodes");
		m = luaL_len(L, -3);
		for (j = 1; j <= m; j++) {
			lua_Integer bin = 0;
			int32_t bg = g;

			if (lua_istable(L, -1)) {
				if (lua_geti(L, -1, j) == LUA_TSTRING) {
					const char *name = lua_tostring(L, -1);
					int32_t node = snapshot_find_node(s, name);

					if (node < 0)
						luaL_error(L, "pack: after[%d].on_nodes[%d] names no node \"%s\"",
							   (int)i, (int)j, name);
					lua_pop(L, 1);
					lua_geti(L, -3, j);
					prior[*n_prior] = (struct pack_prior){
						(uint32_t)check_pod(L, lua_gettop(L)), SCHED_PRIOR_NODE, node,
						0, (uint32_t)i};
					(*n_prior)++;
					lua_pop(L, 1);
					continue;
				}
				lua_pop(L, 1);
			}
			if (!bins)
				continue;
			lua_geti(L, -2, j);
			bin = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : 0;
			lua_pop(L, 1);
			if (bin < 1 || bin > INT32_MAX)
				continue;
			if (lua_istable(L, -4)) {
				lua_geti(L, -4, bin);
				bg = lua_isnil(L, -1) ? -1 : to_group(L, s, lua_gettop(L));
				lua_pop(L, 1);
				if (bg < 0)
					luaL_error(L, "pack: after[%d].bin_groups[%d] names no node group",
						   (int)i, (int)bin);
			}
			lua_geti(L, -3, j);
			prior[*n_prior].pod = (uint32_t)check_pod(L, lua_gettop(L));
			lua_pop(L, 1);
			prior[*n_prior].group = (uint32_t)bg;
			prior[*n_prior].bin = (int32_t)(bin - 1);
			prior[*n_prior].upcoming = (int32_t)(up < 0 ? 0 : up > INT32_MAX ? INT32_MAX : up);
			prior[*n_prior].step = (uint32_t)i;
			(*n_prior)++;
		}
		lua_pop(L, 5);
	}
	return prior; /* its array on top of the stack */
}

/*
 * Pushes a pack result table: its counts, waste, group name, the input
 * list (argument 2, what 'after' reads back), 'placement' (pod i -> bin,
 * 1-based, or false) and 'unplaced' (the pods of argument 2 left).
 */
static void push_pack_result(lua_State *L, const struct snapshot *s, const char *group,
			     lua_Integer n, const int32_t *placement, const int32_t *on_node,
			     int new_nodes, int upcoming_used, int upcoming, size_t n_placed,
			     size_t n_unplaced, double waste_cpu, double waste_memory)
{
	lua_Integer i, u = 0;

	lua_createtable(L, 0, 14);
	set_int(L, "new_nodes", new_nodes);
	set_int(L, "upcoming_used", upcoming_used);
	set_int(L, "upcoming", upcoming);
	lua_pushstring(L, group);
	lua_setfield(L, -2, "group");
	lua_pushvalue(L, 2);
	lua_setfield(L, -2, "pods");
	set_int(L, "placed", (int64_t)n_placed);
	lua_createtable(L, 0, 2);
	set_num(L, "cpu", waste_cpu);
	set_num(L, "memory", waste_memory);
	lua_setfield(L, -2, "waste");
	lua_createtable(L, (int)n, 0);
	lua_createtable(L, (int)n_unplaced, 0);
	for (i = 0; i < n; i++) {
		if (placement[i] >= 0) {
			lua_pushinteger(L, placement[i] + 1);
		} else {
			lua_pushboolean(L, 0);
			if (!on_node || on_node[i] < 0) {
				lua_geti(L, 2, i + 1);
				lua_rawseti(L, -3, ++u);
			}
		}
		lua_rawseti(L, -3, i + 1);
	}
	lua_setfield(L, -3, "unplaced");
	lua_setfield(L, -2, "placement");
	/* the pods left to existing nodes, once the new ones count */
	if (on_node) {
		lua_Integer k = 0;

		lua_createtable(L, (int)n, 0);
		for (i = 0; i < n; i++) {
			if (on_node[i] >= 0) {
				lua_pushstring(L, s->nodes[on_node[i]].name);
				k++;
			} else {
				lua_pushboolean(L, 0);
			}
			lua_rawseti(L, -2, i + 1);
		}
		lua_setfield(L, -2, "on_nodes");
		set_int(L, "on_existing", (int64_t)k);
	} else {
		set_int(L, "on_existing", 0);
	}
}

/* A Lua-owned copy of a result's on_node (NULL when it has none), so
 * that building the result's tables may raise without a leak. */
static int32_t *copy_on_node(lua_State *L, const struct pack_result *r, lua_Integer n)
{
	int32_t *c;

	if (!r->on_node || n <= 0)
		return NULL;
	c = lua_newuserdatauv(L, (size_t)n * sizeof(*c), 0);
	memcpy(c, r->on_node, (size_t)n * sizeof(*c));
	return c;
}

/*
 * Sets the result's 'instance_types' (on top of the stack): the names of
 * group g's types that take every new node of the packing (bins from
 * 'first_bin' on), in the group's order (sched_types_taking()).
 */
static void push_types_taking(lua_State *L, const struct snapshot *s, size_t g,
			      const uint32_t *idx, size_t n, const int32_t *placement, int first_bin)
{
	const struct node_group *grp = &s->groups[g];
	bool *ok = lua_newuserdatauv(L, grp->n_types * sizeof(*ok), 0);
	size_t t;
	lua_Integer k = 0;

	sandbox_charge(L, (double)n * (double)grp->n_types);
	if (sched_types_taking(s, g, idx, n, placement, first_bin, ok) < 0)
		luaL_error(L, "pack: out of memory");
	lua_createtable(L, (int)grp->n_types, 0);
	for (t = 0; t < grp->n_types; t++) {
		if (!ok[t] || !grp->types[t].instance_type)
			continue;
		lua_pushstring(L, grp->types[t].instance_type);
		lua_rawseti(L, -2, ++k);
	}
	lua_setfield(L, -3, "instance_types");
	lua_pop(L, 1); /* ok */
}

/* cluster:pack(pods, group [, max_new [, {upcoming = N, after = {results}}]]) -> result table */
static int l_pack(lua_State *L)
{
	struct view *v = get_view(L);
	const struct snapshot *s = v->snap;
	struct pack_result r;
	struct errbuf err;
	uint32_t *idx;
	int32_t *placement;
	lua_Integer n, i;
	int32_t g;
	int max_new = -1, upcoming = -1, new_nodes, upcoming_used, r_upcoming;
	size_t n_placed, n_unplaced, n_prior = 0, type = SIZE_MAX;
	struct pack_prior *prior = NULL;
	struct sched_cache *cache;
	double waste_cpu, waste_memory;
	int32_t *on_node;
	bool existing = false;
	size_t tries;

	check_list(L, 2);
	g = to_group(L, s, 3);
	if (g < 0)
		return luaL_argerror(L, 3, "expected a node group or its name");
	if (!lua_isnoneornil(L, 4)) {
		lua_Integer m = luaL_checkinteger(L, 4);

		/* a group already above its max has no room: 0, not "no cap" */
		max_new = m < 0 ? 0 : (m > 1000000 ? 1000000 : (int)m);
	}
	if (!lua_isnoneornil(L, 5)) {
		luaL_checktype(L, 5, LUA_TTABLE);
		if (lua_getfield(L, 5, "upcoming") != LUA_TNIL) {
			lua_Integer u0 = luaL_checkinteger(L, -1);

			if (u0 < 0 || u0 > 1000000)
				return luaL_argerror(L, 5, "upcoming must be 0..1000000");
			upcoming = (int)u0;
		}
		lua_pop(L, 1);
		if (lua_getfield(L, 5, "instance_type") != LUA_TNIL) {
			const struct node_group *grp = &s->groups[g];
			const char *name;

			if (lua_type(L, -1) != LUA_TSTRING)
				return luaL_argerror(L, 5, "instance_type must be a string");
			name = lua_tostring(L, -1);
			for (type = 0; type < grp->n_types && (!grp->types[type].instance_type ||
							       strcmp(grp->types[type].instance_type, name));
			     type++)
				;
			if (type == grp->n_types)
				return luaL_error(L, "pack: instance type \"%s\" is not one of group %s's instance_types",
						  name, grp->name);
		}
		lua_pop(L, 1);
		lua_getfield(L, 5, "existing");
		existing = lua_toboolean(L, -1);
		lua_pop(L, 1);
		if (lua_getfield(L, 5, "after") != LUA_TNIL) {
			prior = check_prior(L, s, lua_gettop(L), &n_prior);
			lua_remove(L, -2); /* the list; its array stays */
		} else {
			lua_pop(L, 1);
		}
	}
	n = luaL_len(L, 2);
	if (n < 0 || n > (lua_Integer)s->n_pods)
		return luaL_argerror(L, 2, "more pods than the cluster has");
	sandbox_charge(L, 2 * (double)n); /* reading the list, listing the unplaced */
	idx = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof(*idx), 0);
	/* Lua owns the result's copy: building the tables below may raise
	 * (memory, an __index of 'pods'), which must not leak the C result */
	placement = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof(*placement), 0);
	for (i = 1; i <= n; i++) {
		lua_geti(L, 2, i);
		idx[i - 1] = (uint32_t)check_pod(L, lua_gettop(L));
		lua_pop(L, 1);
	}
	sandbox_charge(L, pack_work(s, idx, (size_t)n, (size_t)g, max_new, upcoming));
	if (type != SIZE_MAX) {
		bool made = false;

		if (!(cache = type_cache(v, g, type, &made, NULL)))
			return luaL_error(L, "pack: out of memory");
		if (made) /* a cache of its own: what building it read */
			sandbox_charge(L, (double)s->n_nodes + (double)s->n_pods);
	} else {
		if (!v->pack_cache && !(v->pack_cache = sched_cache_new(s)))
			return luaL_error(L, "pack: out of memory");
		cache = v->pack_cache;
	}
	if (sched_pack_after(cache, idx, (size_t)n, (size_t)g, max_new, upcoming, prior,
			     n_prior, existing, &r, &err) < 0)
		return luaL_error(L, "pack: %s", err.msg);
	if (n)
		memcpy(placement, r.placement, (size_t)n * sizeof(*placement));
	on_node = copy_on_node(L, &r, n);
	new_nodes = r.new_nodes;
	upcoming_used = r.upcoming_used;
	r_upcoming = r.upcoming;
	n_placed = r.n_placed;
	n_unplaced = r.n_unplaced;
	waste_cpu = r.waste_cpu;
	waste_memory = r.waste_memory;
	tries = r.existing_tries;
	pack_result_free(&r);
	/* the existing nodes tried, charged once known (at most one try of
	 * every node for each pod with a spread or pod affinity) */
	sandbox_charge(L, (double)tries);

	push_pack_result(L, s, s->groups[g].name, n, placement, on_node, new_nodes, upcoming_used,
			 r_upcoming, n_placed, n_unplaced, waste_cpu, waste_memory);
	if (type != SIZE_MAX) {
		lua_pushstring(L, s->groups[g].types[type].instance_type);
		lua_setfield(L, -2, "instance_type");
	}
	if (s->groups[g].n_types)
		push_types_taking(L, s, (size_t)g, idx, (size_t)n, placement, r_upcoming);
	return 1;
}

/*
 * cluster:pack_balanced(pods, groups [, max_new [, {after = {results}}]]) -> result:
 * first-fit decreasing onto new nodes of several similar groups, each
 * opened in the smallest group (sched_pack_groups()). 'max_new' is
 * a number for each group, or a table of numbers by group name (absent:
 * no cap). The result is cluster:pack's, with 'new_nodes_by_group'
 * {name = n}, 'groups' {names} and 'bin_groups' (the group of each bin).
 * With 'together' (cluster:pack_together), sched_pack_together(): the
 * groups in the order given, their rooms may differ, and the option
 * 'upcoming = true' puts each group's nodes on their way first.
 */
static int pack_groups(lua_State *L, bool together)
{
	struct view *v = get_view(L);
	const struct snapshot *s = v->snap;
	struct pack_result r;
	struct errbuf err;
	uint32_t *idx, gl[64];
	int32_t *placement, *bin_group;
	int max_new[64];
	lua_Integer n, i, ng;
	size_t n_prior = 0, n_bins, n_placed, n_unplaced, k;
	struct pack_prior *prior = NULL;
	double waste_cpu, waste_memory;
	int new_nodes, upcoming_used, r_upcoming;
	bool upcoming = false, existing = false;
	int32_t *on_node;
	size_t tries;

	check_list(L, 2);
	check_list(L, 3);
	ng = luaL_len(L, 3);
	if (ng < 1 || ng > 64)
		return luaL_argerror(L, 3, "expected a list of 1 to 64 node groups");
	for (i = 1; i <= ng; i++) {
		int32_t g;

		lua_geti(L, 3, i);
		g = to_group(L, s, lua_gettop(L));
		lua_pop(L, 1);
		if (g < 0)
			return luaL_argerror(L, 3, "expected node groups or their names");
		gl[i - 1] = (uint32_t)g;
		max_new[i - 1] = -1;
		if (lua_isinteger(L, 4)) {
			lua_Integer m = lua_tointeger(L, 4);

			max_new[i - 1] = m < 0 ? 0 : (m > 1000000 ? 1000000 : (int)m);
		} else if (lua_istable(L, 4)) {
			lua_getfield(L, 4, s->groups[g].name);
			if (lua_isinteger(L, -1)) {
				lua_Integer m = lua_tointeger(L, -1);

				max_new[i - 1] = m < 0 ? 0 : (m > 1000000 ? 1000000 : (int)m);
			}
			lua_pop(L, 1);
		} else if (!lua_isnoneornil(L, 4)) {
			return luaL_argerror(L, 4, "expected a number or a table of numbers by group name");
		}
	}
	if (!lua_isnoneornil(L, 5)) {
		luaL_checktype(L, 5, LUA_TTABLE);
		if (together) {
			lua_getfield(L, 5, "upcoming");
			upcoming = lua_toboolean(L, -1);
			lua_pop(L, 1);
		}
		lua_getfield(L, 5, "existing");
		existing = lua_toboolean(L, -1);
		lua_pop(L, 1);
		if (lua_getfield(L, 5, "after") != LUA_TNIL) {
			prior = check_prior(L, s, lua_gettop(L), &n_prior);
			lua_remove(L, -2);
		} else {
			lua_pop(L, 1);
		}
	}
	n = luaL_len(L, 2);
	if (n < 0 || n > (lua_Integer)s->n_pods)
		return luaL_argerror(L, 2, "more pods than the cluster has");
	sandbox_charge(L, 2 * (double)n);
	idx = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof(*idx), 0);
	placement = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof(*placement), 0);
	for (i = 1; i <= n; i++) {
		lua_geti(L, 2, i);
		idx[i - 1] = (uint32_t)check_pod(L, lua_gettop(L));
		lua_pop(L, 1);
	}
	for (i = 0; i < ng; i++)
		sandbox_charge(L, pack_work(s, idx, (size_t)n, gl[i], max_new[i], upcoming ? -1 : 0));
	if (!v->pack_cache && !(v->pack_cache = sched_cache_new(s)))
		return luaL_error(L, "pack: out of memory");
	if ((together ? sched_pack_together(v->pack_cache, idx, (size_t)n, gl, (size_t)ng, max_new,
					    upcoming, prior, n_prior, existing, &r, &err)
		      : sched_pack_groups(v->pack_cache, idx, (size_t)n, gl, (size_t)ng, max_new,
					  prior, n_prior, existing, &r, &err)) < 0)
		return luaL_error(L, "%s: %s", together ? "pack_together" : "pack_balanced", err.msg);
	n_bins = r.n_bins;
	bin_group = lua_newuserdatauv(L, (n_bins ? n_bins : 1) * sizeof(*bin_group), 0);
	if (n)
		memcpy(placement, r.placement, (size_t)n * sizeof(*placement));
	if (n_bins)
		memcpy(bin_group, r.bin_group, n_bins * sizeof(*bin_group));
	on_node = copy_on_node(L, &r, n);
	new_nodes = r.new_nodes;
	upcoming_used = r.upcoming_used;
	r_upcoming = r.upcoming;
	n_placed = r.n_placed;
	n_unplaced = r.n_unplaced;
	waste_cpu = r.waste_cpu;
	waste_memory = r.waste_memory;
	tries = r.existing_tries;
	pack_result_free(&r);
	sandbox_charge(L, (double)tries); /* as cluster:pack's */

	push_pack_result(L, s, s->groups[gl[0]].name, n, placement, on_node, new_nodes,
			 upcoming_used, r_upcoming, n_placed, n_unplaced, waste_cpu, waste_memory);
	lua_createtable(L, (int)ng, 0);
	lua_createtable(L, 0, (int)ng);
	for (i = 0; i < ng; i++) {
		lua_Integer cnt = 0;

		for (k = (size_t)r_upcoming; k < n_bins; k++)
			cnt += bin_group[k] == (int32_t)gl[i];
		lua_pushstring(L, s->groups[gl[i]].name);
		lua_rawseti(L, -3, i + 1);
		lua_pushinteger(L, cnt);
		lua_setfield(L, -2, s->groups[gl[i]].name);
	}
	lua_setfield(L, -3, "new_nodes_by_group");
	lua_setfield(L, -2, "groups");
	lua_createtable(L, (int)n_bins, 0);
	for (k = 0; k < n_bins; k++) {
		lua_pushstring(L, s->groups[bin_group[k]].name);
		lua_rawseti(L, -2, (lua_Integer)k + 1);
	}
	lua_setfield(L, -2, "bin_groups");
	return 1;
}

static int l_pack_balanced(lua_State *L)
{
	return pack_groups(L, false);
}

/* cluster:pack_together(pods, groups [, max_new [, {after = {results}, upcoming = bool}]]) */
static int l_pack_together(lua_State *L)
{
	return pack_groups(L, true);
}

/*
 * cluster:place(pods) -> {placed = n, unplaced = {pods}, nodes = {pod -> node name},
 *                         pods = pods, on_nodes = {node name or false, as pods}}
 * (a result cluster:pack's 'after' counts):
 * where the scheduler could put the pods on the Ready, schedulable nodes as
 * they are (first fit, largest first, each node's free room shared by the
 * pods placed on it). Pods marked Unschedulable before a node registered
 * or before others finished need no new capacity.
 */
struct place_item {
	size_t pod;
	int64_t key;
	lua_Integer arg_index;
};

static int place_cmp(const void *a, const void *b)
{
	const struct place_item *x = a, *y = b;

	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return x->arg_index < y->arg_index ? -1 : x->arg_index > y->arg_index;
}

static int l_place(lua_State *L)
{
	struct view *v = get_view(L);
	const struct snapshot *s = v->snap;
	struct place_item *items;
	uint32_t *order;
	int32_t *dest, *at;
	lua_Integer n, i, u = 0;
	size_t placed = 0;
	struct errbuf err;

	check_list(L, 2);
	n = luaL_len(L, 2);
	if (n < 0 || n > (lua_Integer)s->n_pods)
		return luaL_argerror(L, 2, "more pods than the cluster has");
	sandbox_charge(L, 2 * (double)n); /* reading the list, the result */
	items = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof(*items), 0);
	order = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof(*order), 0);
	at = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof(*at), 0);
	dest = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof(*dest), 0);
	for (i = 1; i <= n; i++) {
		size_t p;

		lua_geti(L, 2, i);
		p = check_pod(L, lua_gettop(L));
		lua_pop(L, 1);
		items[i - 1].pod = p;
		items[i - 1].key = s->pods[p].requests.cpu_m * 1024 +
				   s->pods[p].requests.memory / (1 << 20);
		items[i - 1].arg_index = i;
	}
	{
		/* an upper bound: each pod may try every node (the index spares
		 * most of those tries); each node's room is computed once */
		double work = sort_work((double)n) + v->room_sum;

		for (i = 0; i < n; i++)
			work += match_all_work(v, &s->pods[items[i].pod]);
		sandbox_charge(L, work);
	}
	qsort(items, (size_t)n, sizeof(*items), place_cmp);
	for (i = 0; i < n; i++)
		order[i] = (uint32_t)items[i].pod;
	if (sched_place(s, order, (size_t)n, at, &placed, &err) < 0)
		return luaL_error(L, "place: %s", err.msg);
	for (i = 0; i < n; i++)
		dest[items[i].arg_index - 1] = at[i];

	lua_createtable(L, 0, 5);
	set_int(L, "placed", (int64_t)placed);
	lua_pushvalue(L, 2);
	lua_setfield(L, -2, "pods");
	lua_createtable(L, (int)n, 0);                   /* on_nodes */
	lua_createtable(L, (int)((size_t)n - placed), 0); /* unplaced */
	lua_createtable(L, 0, (int)placed);              /* pod -> node name */
	for (i = 1; i <= n; i++) {
		if (dest[i - 1] < 0)
			lua_pushboolean(L, 0);
		else
			lua_pushstring(L, s->nodes[dest[i - 1]].name);
		lua_rawseti(L, -4, i);
		lua_geti(L, 2, i);
		if (dest[i - 1] < 0) {
			lua_rawseti(L, -3, ++u);
		} else {
			lua_pushstring(L, s->nodes[dest[i - 1]].name);
			lua_rawset(L, -3);
		}
	}
	lua_setfield(L, -4, "nodes");
	lua_setfield(L, -3, "unplaced");
	lua_setfield(L, -2, "on_nodes");
	return 1;
}

/* Requirements of a label selector, each compared label by label. */
static double selector_size(const struct label_selector *sel)
{
	double n = 0;
	size_t i;

	for (i = 0; sel && i < sel->n; i++)
		n += 1 + (double)sel->reqs[i].n_values;
	return n;
}

/* An upper bound of sched_node_blockers()' work: every pod of the node
 * checked against the protected selector and every PDB. */
static double blockers_work(const struct view *v, size_t node, const struct drain_opts *o)
{
	const struct node *nd = &v->snap->nodes[node];
	double per_label = 1 + selector_size(o->protected_pods) + v->pdb_sum, work = 0;
	size_t i;

	for (i = 0; i < nd->n_pods; i++)
		work += ((double)v->snap->pods[nd->pods[i]].labels.n + 1) * per_label;
	return work;
}

/* An upper bound of the rest of sched_drainable()'s work: every pod to move
 * (the node's, and with move_excluded the excluded nodes') sorted and
 * tried against every node, each node's room computed once. */
static double moves_work(const struct view *v, size_t node, const struct drain_opts *o)
{
	const struct snapshot *s = v->snap;
	double work = v->room_sum, moved = 0;
	size_t k, i;

	for (k = 0; k < s->n_nodes; k++) {
		const struct node *nd = &s->nodes[k];

		if (k != node && !(o->move_excluded && o->excluded && o->excluded[k]))
			continue;
		for (i = 0; i < nd->n_pods; i++) {
			const struct pod *p = &s->pods[nd->pods[i]];

			if (!sched_pod_evictable(p))
				continue;
			work += match_all_work(v, p);
			moved++;
		}
	}
	return work + sort_work(moved);
}

/* cluster:drainable(node [, {exclude = {node, ...}}]) -> bool, why */
static int l_drainable(lua_State *L)
{
	struct view *v = get_view(L);
	const struct snapshot *s = v->snap;
	size_t node = check_node(L, s, 2);
	struct drain_opts o = *v->dopts;
	char why[512] = "";
	bool ok;

	if (lua_istable(L, 3) && lua_getfield(L, 3, "exclude") != LUA_TNIL) {
		int ex = lua_gettop(L);
		lua_Integer i, n;
		uint8_t *excluded;

		check_list(L, ex);
		n = luaL_len(L, ex);
		sandbox_charge(L, (double)n + (double)s->n_nodes);
		excluded = lua_newuserdatauv(L, s->n_nodes ? s->n_nodes : 1, 0);
		memset(excluded, 0, s->n_nodes ? s->n_nodes : 1);
		for (i = 1; i <= n; i++) {
			lua_geti(L, ex, i);
			excluded[check_node(L, s, lua_gettop(L))] = 1;
			lua_pop(L, 1);
		}
		o.excluded = excluded;
		o.move_excluded = true; /* their pods need room as well */
	}
	/* a node kept by one of its pods costs only that check: the moves,
	 * by far the larger part, are charged once they are to be tried */
	sandbox_charge(L, blockers_work(v, node, &o));
	ok = sched_node_blockers(s, node, &o, why, sizeof(why));
	if (ok) {
		sandbox_charge(L, blockers_work(v, node, &o) + moves_work(v, node, &o));
		ok = sched_drainable(s, node, &o, why, sizeof(why));
	}
	lua_pushboolean(L, ok);
	if (ok)
		return 1;
	lua_pushstring(L, why);
	return 2;
}

/* ---- consolidation: what a set of nodes costs, and what could replace it ---- */

/* What node 'n' costs an hour: its instance type's price in a group of
 * several types (its node.kubernetes.io/instance-type label, or the beta
 * one), else its group's; 0 when not known or not managed. */
static double node_price(const struct snapshot *s, size_t n)
{
	const struct node *nd = &s->nodes[n];
	const struct node_group *g;
	const char *type;
	size_t t;

	if (nd->group < 0)
		return 0;
	g = &s->groups[nd->group];
	type = kvlist_get(&nd->labels, "node.kubernetes.io/instance-type");
	if (!type)
		type = kvlist_get(&nd->labels, "beta.kubernetes.io/instance-type");
	for (t = 0; type && t < g->n_types; t++)
		if (g->types[t].instance_type && strcmp(g->types[t].instance_type, type) == 0)
			return g->types[t].price_per_hour;
	return g->price_per_hour;
}

/* The best replacement found so far: group 'group' (-1: none yet), as
 * its instance type 'type' (SIZE_MAX: its own template). */
struct replacement {
	int32_t group;
	size_t type;
	int new_nodes;
	double price; /* of all its new nodes, an hour */
	double waste; /* the larger of cpu and memory left on them, 0..1 */
};

/* Is a packing onto 'new_nodes' nodes costing 'price' in all, wasting
 * 'waste', better than 'best'? Cheaper, then fewer nodes, then less
 * waste; else the one found first (the groups' order) stays. */
static bool replacement_better(const struct replacement *best, double price, int new_nodes,
			       double waste)
{
	if (best->group < 0)
		return true;
	if (fabs(price - best->price) > 1e-9 * (best->price > 1 ? best->price : 1))
		return price < best->price;
	if (new_nodes != best->new_nodes)
		return new_nodes < best->new_nodes;
	return waste < best->waste - 1e-9;
}

/* Reads the nodes at 'arg' (a node, its name, or a list of them) into a
 * new userdata of their indices, left on the stack; duplicates are
 * dropped. Their count in *n. */
static size_t *check_nodes(lua_State *L, const struct snapshot *s, int arg, size_t *n)
{
	size_t *nodes;
	uint8_t *seen;
	lua_Integer i, m;

	if (lua_type(L, arg) == LUA_TSTRING || view_testudata(L, arg, NODE_MT)) {
		nodes = lua_newuserdatauv(L, sizeof(*nodes), 0);
		nodes[0] = check_node(L, s, arg);
		*n = 1;
		return nodes;
	}
	check_list(L, arg);
	m = luaL_len(L, arg);
	if (m < 1 || m > (lua_Integer)s->n_nodes)
		luaL_argerror(L, arg, "expected a node or a list of 1 to all the cluster's nodes");
	sandbox_charge(L, (double)m + (double)s->n_nodes / 64);
	seen = lua_newuserdatauv(L, s->n_nodes, 0);
	memset(seen, 0, s->n_nodes);
	nodes = lua_newuserdatauv(L, (size_t)m * sizeof(*nodes), 0);
	*n = 0;
	for (i = 1; i <= m; i++) {
		size_t k;

		lua_geti(L, arg, i);
		k = check_node(L, s, lua_gettop(L));
		lua_pop(L, 1);
		if (!seen[k]) {
			seen[k] = 1;
			nodes[(*n)++] = k;
		}
	}
	lua_remove(L, -2); /* seen */
	return nodes;
}

/* Packs pods 'idx' (n) onto new nodes of group 'g' as its type 'type'
 * (SIZE_MAX: the group's template), at most 'cap' of them, priced
 * 'price' each, and keeps it in *best when it places every pod and is
 * better. Charged pack_work() first. */
static void try_replacement(lua_State *L, struct view *v, const uint32_t *idx, size_t n,
			    int32_t g, size_t type, double price, int cap,
			    struct replacement *best)
{
	const struct snapshot *snap = v->snap;
	struct sched_cache *cache;
	struct pack_result r;
	struct errbuf err;
	double waste;
	int new_nodes;
	bool all;

	if (type != SIZE_MAX) {
		bool made = false;

		if (!(cache = type_cache(v, g, type, &made, &snap)))
			luaL_error(L, "replacement_for: out of memory");
		if (made)
			sandbox_charge(L, (double)v->snap->n_nodes + (double)v->snap->n_pods);
	} else {
		if (!v->pack_cache && !(v->pack_cache = sched_cache_new(v->snap)))
			luaL_error(L, "replacement_for: out of memory");
		cache = v->pack_cache;
	}
	sandbox_charge(L, pack_work(snap, idx, n, (size_t)g, cap, 0));
	if (sched_pack_after(cache, idx, n, (size_t)g, cap, 0, NULL, 0, false, &r, &err) < 0)
		luaL_error(L, "replacement_for: %s", err.msg);
	all = r.n_placed == n;
	new_nodes = r.new_nodes;
	waste = r.waste_cpu > r.waste_memory ? r.waste_cpu : r.waste_memory;
	pack_result_free(&r);
	if (all && replacement_better(best, price * new_nodes, new_nodes, waste)) {
		best->group = g;
		best->type = type;
		best->new_nodes = new_nodes;
		best->price = price * new_nodes;
		best->waste = waste;
	}
}

/* Reads opts.groups (a list of groups or names) into 'use' (one flag a
 * group); every group when absent. */
static void check_group_list(lua_State *L, const struct snapshot *s, int opts, uint8_t *use)
{
	lua_Integer i, m;

	if (lua_isnoneornil(L, opts) || lua_getfield(L, opts, "groups") == LUA_TNIL) {
		if (!lua_isnoneornil(L, opts))
			lua_pop(L, 1);
		memset(use, 1, s->n_groups);
		return;
	}
	check_list(L, lua_gettop(L));
	memset(use, 0, s->n_groups);
	m = luaL_len(L, -1);
	sandbox_charge(L, (double)m);
	for (i = 1; i <= m; i++) {
		int32_t g;

		lua_geti(L, -1, i);
		g = to_group(L, s, lua_gettop(L));
		if (g < 0)
			luaL_error(L, "replacement_for: groups[%d] is no node group", (int)i);
		use[g] = 1;
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
}

/*
 * cluster:replacement_for(nodes [, {max_new = N, elsewhere = bool,
 *                                   exclude = {nodes}, groups = {groups}}])
 * -> { nodes, pods, price_per_hour, price_known, blocked, fits_elsewhere,
 *      why, group, instance_type, instance_types, new_nodes,
 *      new_price_per_hour, savings, waste, no_replacement }
 *
 * What removing 'nodes' (a node, or a list) would take: the pods a drain
 * would move (sched_pod_evictable()), what the nodes cost an hour
 * (node_price()), whether a pod keeps one of them (sched_node_blockers():
 * 'blocked' says which, and nothing more is computed), whether the pods
 * fit on the other nodes as they are (sched_drainable() with the nodes
 * and 'exclude' excluded; 'why' when not; skipped with elsewhere = false)
 * and the cheapest group, or instance type of a group of several, whose
 * new nodes take all of them together: first-fit decreasing (sched.c's
 * packing, every fit rule) onto at most max_new (default: as many as the
 * nodes) new nodes, within the group's room, never a group backed off or
 * of unknown price ('no_replacement' says so when none does).
 */
static int l_replacement_for(lua_State *L)
{
	struct view *v = get_view(L);
	const struct snapshot *s = v->snap;
	struct drain_opts o = *v->dopts;
	struct replacement best = {-1, SIZE_MAX, 0, 0, 0};
	char why[512] = "";
	size_t *nodes, n_nodes, i, j, n_pods = 0, cap_pods = 0;
	uint32_t *idx;
	uint8_t *use, *excluded;
	double price = 0;
	bool price_known = true, elsewhere = true, fits = false;
	lua_Integer max_new;
	int32_t g;

	lua_settop(L, 3); /* what is pushed below stays above the options */
	nodes = check_nodes(L, s, 2, &n_nodes);
	max_new = (lua_Integer)n_nodes;
	if (!lua_isnoneornil(L, 3)) {
		luaL_checktype(L, 3, LUA_TTABLE);
		if (lua_getfield(L, 3, "max_new") != LUA_TNIL) {
			max_new = luaL_checkinteger(L, -1);
			if (max_new < 0 || max_new > 1000000)
				return luaL_argerror(L, 3, "max_new must be 0..1000000");
		}
		lua_pop(L, 1);
		if (lua_getfield(L, 3, "elsewhere") != LUA_TNIL)
			elsewhere = lua_toboolean(L, -1);
		lua_pop(L, 1);
	}
	use = lua_newuserdatauv(L, s->n_groups ? s->n_groups : 1, 0);
	check_group_list(L, s, 3, use);

	/* a pod that keeps a node keeps the set */
	for (i = 0; i < n_nodes; i++) {
		double np = node_price(s, nodes[i]);

		sandbox_charge(L, blockers_work(v, nodes[i], &o));
		if (!sched_node_blockers(s, nodes[i], &o, why, sizeof(why))) {
			lua_createtable(L, 0, 4);
			set_int(L, "nodes", (int64_t)n_nodes);
			set_str(L, "blocked", why);
			set_str(L, "why", why);
			lua_pushboolean(L, 0);
			lua_setfield(L, -2, "fits_elsewhere");
			return 1;
		}
		cap_pods += s->nodes[nodes[i]].n_pods;
		price += np;
		price_known = price_known && np > 0;
	}

	sandbox_charge(L, (double)cap_pods);
	idx = lua_newuserdatauv(L, (cap_pods ? cap_pods : 1) * sizeof(*idx), 0);
	for (i = 0; i < n_nodes; i++) {
		const struct node *nd = &s->nodes[nodes[i]];

		for (j = 0; j < nd->n_pods; j++)
			if (sched_pod_evictable(&s->pods[nd->pods[j]]))
				idx[n_pods++] = nd->pods[j];
	}

	if (elsewhere) {
		double work = v->room_sum, moved = 0;

		excluded = lua_newuserdatauv(L, s->n_nodes, 0);
		memset(excluded, 0, s->n_nodes);
		for (i = 0; i < n_nodes; i++)
			excluded[nodes[i]] = 1;
		if (lua_istable(L, 3)) {
			if (lua_getfield(L, 3, "exclude") != LUA_TNIL) {
				lua_Integer k, m;

				check_list(L, lua_gettop(L));
				m = luaL_len(L, -1);
				sandbox_charge(L, (double)m);
				for (k = 1; k <= m; k++) {
					lua_geti(L, -1, k);
					excluded[check_node(L, s, lua_gettop(L))] = 1;
					lua_pop(L, 1);
				}
			}
			lua_pop(L, 1);
		}
		/* every pod to move, the nodes' and the excluded ones' */
		for (i = 0; i < s->n_nodes; i++) {
			const struct node *nd = &s->nodes[i];

			for (j = 0; excluded[i] && j < nd->n_pods; j++) {
				const struct pod *p = &s->pods[nd->pods[j]];

				if (!sched_pod_evictable(p))
					continue;
				work += match_all_work(v, p);
				moved++;
			}
		}
		sandbox_charge(L, (double)s->n_nodes + work + sort_work(moved) +
				  blockers_work(v, nodes[0], &o));
		o.excluded = excluded;
		o.move_excluded = true;
		fits = sched_drainable(s, nodes[0], &o, why, sizeof(why));
	}

	/* the cheapest new nodes that take every pod */
	for (g = 0; n_pods && g < (int32_t)s->n_groups; g++) {
		const struct node_group *grp = &s->groups[g];
		int64_t size = grp->target > grp->current ? grp->target : grp->current;
		int64_t room = grp->max - size;
		int cap;
		size_t t;

		if (!use[g] || grp->backoff_until > s->now || room <= 0 || max_new == 0)
			continue;
		cap = (int)(room < max_new ? room : max_new);
		if (!grp->n_types) {
			/* a replacement is one node at least: a dearer one never wins */
			if (grp->price_per_hour > 0 &&
			    (best.group < 0 || grp->price_per_hour <= best.price))
				try_replacement(L, v, idx, n_pods, g, SIZE_MAX, grp->price_per_hour,
						cap, &best);
			continue;
		}
		for (t = 0; t < grp->n_types; t++) {
			double tp = grp->types[t].price_per_hour;

			if (tp > 0 && grp->types[t].instance_type &&
			    (best.group < 0 || tp <= best.price))
				try_replacement(L, v, idx, n_pods, g, t, tp, cap, &best);
		}
	}

	lua_createtable(L, 0, 16);
	set_int(L, "nodes", (int64_t)n_nodes);
	set_int(L, "pods", (int64_t)n_pods);
	set_num(L, "price_per_hour", price);
	lua_pushboolean(L, price_known);
	lua_setfield(L, -2, "price_known");
	if (elsewhere) {
		lua_pushboolean(L, fits);
		lua_setfield(L, -2, "fits_elsewhere");
		if (!fits)
			set_str(L, "why", why);
	}
	if (n_pods == 0) {
		set_int(L, "new_nodes", 0);
		set_num(L, "new_price_per_hour", 0);
		set_num(L, "savings", price);
	} else if (best.group >= 0) {
		const struct node_group *grp = &s->groups[best.group];

		set_str(L, "group", grp->name);
		set_int(L, "new_nodes", best.new_nodes);
		set_num(L, "new_price_per_hour", best.price);
		set_num(L, "savings", price - best.price);
		set_num(L, "waste", best.waste);
		if (best.type != SIZE_MAX) {
			set_str(L, "instance_type", grp->types[best.type].instance_type);
			lua_createtable(L, 1, 0);
			lua_pushstring(L, grp->types[best.type].instance_type);
			lua_rawseti(L, -2, 1);
			lua_setfield(L, -2, "instance_types");
		}
	} else {
		snprintf(why, sizeof(why), "no node group with room and a known price takes its %zu pod(s) on %lld new node(s) or fewer",
			 n_pods, (long long)max_new);
		set_str(L, "no_replacement", why);
	}
	return 1;
}

/* cluster:node(name) -> node or nil */
static int l_node(lua_State *L)
{
	struct view *v = get_view(L);
	size_t len;
	const char *name = luaL_checklstring(L, 2, &len);
	int32_t i;

	charge_name(L, len);
	i = snapshot_find_node(v->snap, name);
	if (i < 0)
		return 0;
	lua_getfield(L, LUA_REGISTRYINDEX, NODES_KEY);
	lua_rawgeti(L, -1, (lua_Integer)i + 1);
	return 1;
}

/*
 * cluster:pods_matching(node, selector) -> count, first: how many of the
 * node's unfinished pods have labels matching 'selector', and the first
 * of them (nil when none). 'selector' maps label keys to a string (the
 * label has this value), true (the label is present, any value) or false
 * (the label is absent). Charged one a pod, plus its labels times the
 * selector's keys.
 */
struct match_req {
	const char *key;
	const char *value; /* NULL: present/absent */
	bool present;
};

/* The value of label 'key' or NULL: kvlist_get() with the snapshot's
 * interned keys compared by pointer first, then by their first byte. */
static const char *label_of(const struct kvlist *l, const char *key)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		const char *k = l->items[i].key;

		if (k == key || (k[0] == key[0] && strcmp(k, key) == 0))
			return l->items[i].value;
	}
	return NULL;
}

static bool pod_matches(const struct pod *p, const struct match_req *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const char *have = label_of(&p->labels, r[i].key);

		if (r[i].value ? !have || strcmp(have, r[i].value) != 0 : (have != NULL) != r[i].present)
			return false;
	}
	return true;
}

static int l_pods_matching(lua_State *L)
{
	struct view *v = get_view(L);
	const struct snapshot *s = v->snap;
	size_t node = check_node(L, s, 2);
	const struct node *nd = &s->nodes[node];
	struct match_req *reqs;
	size_t n = 0, cap = 0, i, count = 0;
	int64_t first = -1;
	double work;

	luaL_checktype(L, 3, LUA_TTABLE);
	lua_pushnil(L);
	while (lua_next(L, 3)) {
		cap++;
		lua_pop(L, 1);
	}
	sandbox_charge(L, (double)cap + (double)nd->n_pods);
	reqs = lua_newuserdatauv(L, (cap ? cap : 1) * sizeof(*reqs), 0);
	lua_pushnil(L);
	while (lua_next(L, 3)) {
		int t = lua_type(L, -1);

		if (lua_type(L, -2) != LUA_TSTRING)
			return luaL_argerror(L, 3, "selector keys must be label keys (strings)");
		if (t != LUA_TSTRING && t != LUA_TBOOLEAN)
			return luaL_argerror(L, 3, lua_pushfstring(L,
				"selector[\"%s\"] must be a label value (string), true (present) or false (absent), got %s",
				lua_tostring(L, -2), luaL_typename(L, -1)));
		if (n < cap) {
			/* the strings stay alive: the selector table holds them */
			reqs[n].key = lua_tostring(L, -2);
			reqs[n].value = t == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
			reqs[n].present = t == LUA_TBOOLEAN && lua_toboolean(L, -1);
			n++;
		}
		lua_pop(L, 1);
	}
	/* one pass over the pods (their structs are the cost, not the
	 * compares): the pods times the keys charged before, the labels
	 * compared after, both bounded by the node's pods */
	sandbox_charge(L, (double)nd->n_pods * (double)n);
	work = 0;
	for (i = 0; i < nd->n_pods; i++) {
		const struct pod *p = &s->pods[nd->pods[i]];

		work += (double)p->labels.n * (double)n;
		if (pod_finished(p) || !pod_matches(p, reqs, n))
			continue;
		if (first < 0)
			first = nd->pods[i];
		count++;
	}
	sandbox_charge(L, work);
	lua_pushinteger(L, (lua_Integer)count);
	if (first < 0)
		lua_pushnil(L);
	else
		push_pod(L, s, (uint32_t)first);
	return 2;
}

/*
 * cluster:sort_by_utilization(nodes [, "desc"]) -> nodes: sorts the list
 * (a table of nodes of this view) in place by ls.utilization, least first
 * ("desc": most first), nodes of equal utilization by name; what a
 * table.sort with that comparator gives, without a Lua call a comparison.
 * Charged one a node read and written, n log2 n to sort.
 */
struct util_item {
	double u;
	const char *name;
	uint32_t idx;
};

static int util_asc(const void *a, const void *b)
{
	const struct util_item *x = a, *y = b;

	if (x->u != y->u)
		return x->u < y->u ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int util_desc(const void *a, const void *b)
{
	const struct util_item *x = a, *y = b;

	if (x->u != y->u)
		return x->u > y->u ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int l_sort_by_utilization(lua_State *L)
{
	struct view *v = get_view(L);
	const struct snapshot *s = v->snap;
	const char *order = luaL_optstring(L, 3, "asc");
	struct util_item *items;
	lua_Integer n, i;
	bool desc;

	luaL_checktype(L, 2, LUA_TTABLE);
	if (strcmp(order, "asc") != 0 && strcmp(order, "desc") != 0)
		return luaL_argerror(L, 3, "expected \"asc\" or \"desc\"");
	desc = order[0] == 'd';
	n = (lua_Integer)lua_rawlen(L, 2);
	if (n > (lua_Integer)s->n_nodes)
		return luaL_argerror(L, 2, "more nodes than the cluster has");
	sandbox_charge(L, 2 * (double)n + sort_work((double)n));
	items = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof(*items), 0);
	for (i = 1; i <= n; i++) {
		const struct node *nd;
		size_t k;

		lua_rawgeti(L, 2, i);
		k = check_obj(L, lua_gettop(L), NODE_MT, "node")->idx;
		lua_pop(L, 1);
		nd = &s->nodes[k];
		items[i - 1].u = fraction(nd->requested.cpu_m, nd->allocatable.cpu_m);
		if (fraction(nd->requested.memory, nd->allocatable.memory) > items[i - 1].u)
			items[i - 1].u = fraction(nd->requested.memory, nd->allocatable.memory);
		items[i - 1].name = nd->name;
		items[i - 1].idx = (uint32_t)k;
	}
	qsort(items, (size_t)n, sizeof(*items), desc ? util_desc : util_asc);
	lua_getfield(L, LUA_REGISTRYINDEX, NODES_KEY);
	for (i = 1; i <= n; i++) {
		lua_rawgeti(L, -1, (lua_Integer)items[i - 1].idx + 1);
		lua_rawseti(L, 2, i);
	}
	lua_settop(L, 2);
	return 1;
}

/*
 * cluster:sum(nodes, "requested" | "allocatable") -> resource table: the
 * nodes' requests (or allocatable) added up in list order — cpu in cores
 * as a policy adding node.requested.cpu one node after the other gets it,
 * bit for bit; memory, ephemeral-storage and pods as integers. Charged
 * one a node.
 */
static int l_sum(lua_State *L)
{
	struct view *v = get_view(L);
	const struct snapshot *s = v->snap;
	static const char *const fields[] = {"requested", "allocatable", NULL};
	int which;
	lua_Integer n, i;
	double cpu = 0;
	int64_t mem = 0, eph = 0, pods = 0;

	luaL_checktype(L, 2, LUA_TTABLE);
	which = luaL_checkoption(L, 3, NULL, fields);
	n = (lua_Integer)lua_rawlen(L, 2);
	sandbox_charge(L, (double)n);
	for (i = 1; i <= n; i++) {
		const struct resources *r;
		size_t k;

		lua_rawgeti(L, 2, i);
		k = check_obj(L, lua_gettop(L), NODE_MT, "node")->idx;
		lua_pop(L, 1);
		r = which == 0 ? &s->nodes[k].requested : &s->nodes[k].allocatable;
		cpu += (double)r->cpu_m / 1000.0;
		mem += r->memory;
		eph += r->ephemeral;
		pods += r->pods;
	}
	lua_createtable(L, 0, 4);
	set_num(L, "cpu", cpu);
	set_int(L, "memory", mem);
	set_int(L, "ephemeral-storage", eph);
	set_int(L, "pods", pods);
	return 1;
}

/* cluster:pdbs() -> list of {namespace, name, disruptions_allowed, min_available, max_unavailable} */
static int l_pdbs(lua_State *L)
{
	struct view *v = get_view(L);
	size_t i;

	sandbox_charge(L, (double)v->snap->n_pdbs);
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
	{"pack_balanced", l_pack_balanced},
	{"pack_together", l_pack_together},
	{"drainable", l_drainable},
	{"replacement_for", l_replacement_for},
	{"place", l_place},
	{"node", l_node},
	{"pdbs", l_pdbs},
	{"pods_matching", l_pods_matching},
	{"sort_by_utilization", l_sort_by_utilization},
	{"sum", l_sum},
	{NULL, NULL},
};

/* ---- building the view ---- */

static int build_view(lua_State *L)
{
	struct view *v = view_of(L);
	const struct snapshot *s = v->snap;
	int cluster, node_mt;
	size_t i;

	lua_newtable(L);
	lua_setfield(L, LUA_REGISTRYINDEX, PODCACHE_KEY);
	lua_newtable(L);
	lua_rawseti(L, LUA_REGISTRYINDEX, v->strs_ref);

	lua_createtable(L, 0, 12);
	cluster = lua_gettop(L);
	luaL_setfuncs(L, cluster_methods, 0);
	set_int(L, "now", s->now);

	luaL_getmetatable(L, NODE_MT);
	node_mt = lua_gettop(L);
	lua_createtable(L, (int)s->n_nodes, 0);
	for (i = 0; i < s->n_nodes; i++) {
		push_obj(L, node_mt, (uint32_t)i, v->gen);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	lua_remove(L, node_mt);
	lua_pushvalue(L, -1);
	lua_setfield(L, LUA_REGISTRYINDEX, NODES_KEY);
	freeze(L);
	lua_setfield(L, cluster, "nodes");

	lua_createtable(L, (int)s->n_pending, 0);
	for (i = 0; i < s->n_pending; i++) {
		push_pod(L, s, s->pending[i]);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	freeze(L);
	lua_setfield(L, cluster, "pending");

	lua_createtable(L, 0, (int)s->n_groups); /* groups by name */
	lua_createtable(L, (int)s->n_groups, 0); /* group_list in config order */
	for (i = 0; i < s->n_groups; i++) {
		push_group(L, s, &s->groups[i]);
		lua_pushvalue(L, -1);
		lua_rawseti(L, -3, (lua_Integer)i + 1);
		lua_setfield(L, -3, s->groups[i].name);
	}
	freeze(L);
	lua_setfield(L, cluster, "group_list");
	freeze(L);
	lua_setfield(L, cluster, "groups");

	freeze(L);
	lua_setfield(L, LUA_REGISTRYINDEX, CLUSTER_KEY);
	return 0;
}

/* 'keys' (may be NULL): registry name of the field table given to __index
 * as upvalue 1, with the view as upvalue 2. */
static void new_metatable(lua_State *L, const char *name, lua_CFunction index,
			  const char *keys, lua_CFunction pairs, lua_CFunction len,
			  lua_CFunction tostring)
{
	luaL_newmetatable(L, name);
	if (keys) {
		lua_getfield(L, LUA_REGISTRYINDEX, keys);
		lua_pushlightuserdata(L, view_of(L));
		lua_pushcclosure(L, index, 2);
	} else {
		lua_pushcfunction(L, index);
	}
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, readonly_newindex);
	lua_setfield(L, -2, "__newindex");
	lua_pushcfunction(L, pairs);
	lua_setfield(L, -2, "__pairs");
	if (len) {
		lua_pushcfunction(L, len);
		lua_setfield(L, -2, "__len");
	}
	if (tostring) {
		lua_pushcfunction(L, tostring);
		lua_setfield(L, -2, "__tostring");
	}
	lua_pushboolean(L, 0);
	lua_setfield(L, -2, "__metatable");
	lua_pop(L, 1);
}

static void field_table(lua_State *L, const char *key, const char *const *names)
{
	int i;

	lua_newtable(L);
	for (i = 1; names[i]; i++) {
		lua_pushinteger(L, i);
		lua_setfield(L, -2, names[i]);
	}
	lua_setfield(L, LUA_REGISTRYINDEX, key);
}

/* The identity of registered metatable 'name'. */
static const void *mt_pointer(lua_State *L, const char *name)
{
	const void *p;

	luaL_getmetatable(L, name);
	p = lua_topointer(L, -1);
	lua_pop(L, 1);
	return p;
}

static int init_view_state(lua_State *L)
{
	struct view *v = lua_newuserdatauv(L, sizeof(*v), 0);

	memset(v, 0, sizeof(*v));
	lua_rawsetp(L, LUA_REGISTRYINDEX, &VIEW_KEY);
	lua_pushboolean(L, 0);
	v->strs_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	field_table(L, NODE_KEYS, node_fields);
	field_table(L, POD_KEYS, pod_fields);
	new_metatable(L, NODE_MT, node_index, NODE_KEYS, obj_pairs, NULL, node_tostring);
	new_metatable(L, POD_MT, pod_index, POD_KEYS, obj_pairs, NULL, pod_tostring);
	new_metatable(L, FROZEN_MT, frozen_index, NULL, frozen_pairs, frozen_len, NULL);
	new_metatable(L, KVLIST_MT, kvproxy_index, NULL, kvproxy_pairs, kvproxy_len, NULL);
	v->node_mt = mt_pointer(L, NODE_MT);
	v->pod_mt = mt_pointer(L, POD_MT);
	v->frozen_mt = mt_pointer(L, FROZEN_MT);
	return 0;
}

int view_begin(struct sandbox *sb, const struct snapshot *s,
	       const struct drain_opts *dopts, bool notes, struct errbuf *err)
{
	lua_State *L = sandbox_state(sb);
	struct view *v = view_of(L);

	if (!v) {
		if (sandbox_cpcall(sb, init_view_state, NULL, err) < 0)
			return -1;
		v = view_of(L);
	}
	sched_cache_free(v->pack_cache); /* a cache is of one snapshot */
	v->pack_cache = NULL;
	free_type_caches(v);
	v->snap = s;
	v->dopts = dopts;
	v->quiet = !notes;
	v->gen++;
	measure_snapshot(v);
	if (sandbox_cpcall(sb, build_view, NULL, err) < 0) {
		v->snap = NULL;
		return -1;
	}
	lua_getfield(L, LUA_REGISTRYINDEX, CLUSTER_KEY);
	return 0;
}

void view_end(struct sandbox *sb)
{
	lua_State *L = sandbox_state(sb);
	struct view *v = view_of(L);

	if (v) {
		v->snap = NULL;
		v->dopts = NULL;
		v->quiet = false;
		sched_cache_free(v->pack_cache);
		v->pack_cache = NULL;
		free_type_caches(v);
	}
	lua_pushnil(L);
	lua_setfield(L, LUA_REGISTRYINDEX, CLUSTER_KEY);
	lua_pushnil(L);
	lua_setfield(L, LUA_REGISTRYINDEX, NODES_KEY);
	lua_pushnil(L);
	lua_setfield(L, LUA_REGISTRYINDEX, PODCACHE_KEY);
	if (v) {
		lua_pushboolean(L, 0); /* the strings go with the view */
		lua_rawseti(L, LUA_REGISTRYINDEX, v->strs_ref);
	}
}

/* ---- luascale.native ---- */

/* where() -> "file:line" of the nearest Lua code outside the luascale
 * library (the policy line that asked, even when a library helper built
 * the action), so tail calls inside the library do not matter either. */
static int n_where(lua_State *L)
{
	const char *lib = sandbox_lib_dir(sandbox_of(L));
	size_t lib_len = strlen(lib);
	lua_Debug ar;
	int level;

	for (level = 1; lua_getstack(L, level, &ar); level++) {
		/* a deep recursion walks many frames: charged as it goes */
		if (level % 64 == 0)
			sandbox_charge(L, 64);
		lua_getinfo(L, "Sl", &ar);
		if (ar.currentline <= 0)
			continue;
		if (ar.source[0] == '@' && lib_len && strncmp(ar.source + 1, lib, lib_len) == 0 &&
		    ar.source[1 + lib_len] == '/')
			continue;
		lua_pushfstring(L, "%s:%d", ar.short_src, ar.currentline);
		return 1;
	}
	lua_pushliteral(L, "");
	return 1;
}

/* Length of a string argument (0 for anything else: the check reports it). */
static size_t text_len(lua_State *L, int arg)
{
	return lua_type(L, arg) == LUA_TSTRING ? lua_rawlen(L, arg) : 0;
}

static int n_cpu(lua_State *L)
{
	struct errbuf err;
	int64_t m;

	if (lua_type(L, 1) == LUA_TNUMBER) {
		lua_pushnumber(L, lua_tonumber(L, 1));
		return 1;
	}
	charge_name(L, text_len(L, 1));
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
	charge_name(L, text_len(L, 1));
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
	charge_name(L, text_len(L, 1));
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

/* utilization(node) -> the larger of the node's cpu and memory request
 * utilization: read from the snapshot for a node of the view (no table
 * built), from node.utilization for anything else. */
static int n_utilization(lua_State *L)
{
	if (view_testudata(L, 1, NODE_MT)) {
		const struct obj *o = check_obj(L, 1, NODE_MT, "node");
		const struct node *n = &get_view(L)->snap->nodes[o->idx];
		double cpu = fraction(n->requested.cpu_m, n->allocatable.cpu_m);
		double mem = fraction(n->requested.memory, n->allocatable.memory);

		lua_pushnumber(L, mem > cpu ? mem : cpu);
		return 1;
	}
	lua_getfield(L, 1, "utilization");
	lua_getfield(L, -1, "cpu");
	lua_getfield(L, -2, "memory");
	if (lua_type(L, -2) != LUA_TNUMBER || lua_type(L, -1) != LUA_TNUMBER)
		return luaL_error(L, "utilization: node.utilization needs numbers cpu and memory, got %s and %s",
				  luaL_typename(L, -2), luaL_typename(L, -1));
	if (lua_compare(L, -2, -1, LUA_OPLT))
		return 1;
	lua_pop(L, 1);
	return 1;
}

/* explaining() -> false while a reconcile runs whose per-node notes
 * nobody reads (the daemon's), true otherwise (decide, the testing kit,
 * a plan built outside a reconcile). */
static int n_explaining(lua_State *L)
{
	struct view *v = view_of(L);

	lua_pushboolean(L, !(v && v->snap && v->quiet));
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
		{"explaining", n_explaining},
		{"utilization", n_utilization},
		{"local_time", tz_lua_local_time},
		{NULL, NULL},
	};
	lua_State *L = sandbox_state(sb);

	luaL_newlib(L, fns);
	sandbox_freeze(L);
	sandbox_preload(sb, "luascale.native");
}
