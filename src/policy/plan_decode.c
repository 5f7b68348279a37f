/*
 * plan_decode: the Lua plan table to struct plan. Only raw reads (rawget,
 * rawgeti, next), lengths checked with lua_rawlen before a byte is copied,
 * every table walked once however often the plan refers to it, and the
 * whole plan held to PLAN_MAX_BYTES, so neither policy code nor a shared
 * giant string can make decoding cost more than the plan is worth.
 */
#include "policy/plan_decode.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "k8sname.h"
#include "model.h"

#define MAX_NODE K8SNAME_SUBDOMAIN_MAX                         /* 253 */
#define MAX_KEY (K8SNAME_SUBDOMAIN_MAX + 1 + K8SNAME_NAME_MAX) /* prefix/name: 317 */
#define MAX_SHORT 32                                           /* type, effect */

/* What the protected decoder works with; freed by plan_decode after. */
struct decode_ctx {
	struct plan *plan;
	size_t bytes;        /* string bytes decoded so far */
	const void **seen;   /* open-addressing set of tables whose keys were checked */
	size_t n_seen, cap_seen;
};

/* Has table 'p' had its keys checked? Adds it when not. Raises on OOM. */
static bool seen_before(lua_State *L, struct decode_ctx *d, const void *p)
{
	size_t i, mask;

	if (2 * (d->n_seen + 1) > d->cap_seen) {
		size_t cap = d->cap_seen ? d->cap_seen * 2 : 64, j;
		const void **n = calloc(cap, sizeof(*n));

		if (!n)
			luaL_error(L, "out of memory");
		for (j = 0; j < d->cap_seen; j++) {
			if (!d->seen[j])
				continue;
			for (i = ((uintptr_t)d->seen[j] >> 4) & (cap - 1); n[i]; i = (i + 1) & (cap - 1))
				;
			n[i] = d->seen[j];
		}
		free(d->seen);
		d->seen = n;
		d->cap_seen = cap;
	}
	mask = d->cap_seen - 1;
	for (i = ((uintptr_t)p >> 4) & mask; d->seen[i]; i = (i + 1) & mask)
		if (d->seen[i] == p)
			return true;
	d->seen[i] = p;
	d->n_seen++;
	return false;
}

/* Writes at most 48 characters of s[0..len) into 'out', escaping anything
 * that is not printable ASCII, so a message can show a refused name. */
static const char *shown(const char *s, size_t len, char *out, size_t out_len)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, o = 0;

	for (i = 0; i < len && o + 8 < out_len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (i == 48) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			out[o++] = (char)c;
		} else {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = '\0';
	return out;
}

/* Is s[0..len) well-formed UTF-8 (no overlongs, surrogates or > U+10FFFF)? */
static bool valid_utf8(const unsigned char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		unsigned char c = s[i];
		size_t n, k;
		uint32_t cp;

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			n = 1;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (len - i <= n)
			return false;
		for (k = 1; k <= n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += n + 1;
	}
	return true;
}

/*
 * The string at raw field 'k' of table 't' (absolute index), NULL when
 * absent; raises when present but not a string, longer than 'max' bytes
 * (checked before anything is read), holding a NUL byte, or pushing the
 * plan over PLAN_MAX_BYTES. *len gets its length.
 */
static const char *field_string(lua_State *L, struct decode_ctx *d, int t, const char *k,
				size_t max, const char *what, size_t *len)
{
	const char *s;
	size_t n;

	lua_pushstring(L, k);
	if (lua_rawget(L, t) == LUA_TNIL) {
		lua_pop(L, 1);
		return NULL;
	}
	if (lua_type(L, -1) != LUA_TSTRING)
		luaL_error(L, "%s: field \"%s\" must be a string, got %s", what, k,
			   luaL_typename(L, -1));
	n = lua_rawlen(L, -1);
	if (n > max)
		luaL_error(L, "%s: field \"%s\" is %I bytes long, more than the limit of %I",
			   what, k, (lua_Integer)n, (lua_Integer)max);
	s = lua_tolstring(L, -1, &n);
	if (memchr(s, '\0', n))
		luaL_error(L, "%s: field \"%s\" contains a NUL byte", what, k);
	if (n > PLAN_MAX_BYTES - d->bytes)
		luaL_error(L, "%s: the plan's strings add up to more than the limit of %I bytes",
			   what, (lua_Integer)PLAN_MAX_BYTES);
	d->bytes += n;
	lua_pop(L, 1); /* the string stays alive: the table refers to it */
	*len = n;
	return s;
}

static const char *required_string(lua_State *L, struct decode_ctx *d, int t, const char *k,
				   size_t max, const char *what, size_t *len)
{
	const char *s = field_string(L, d, t, k, max, what, len);

	if (!s || !*len)
		luaL_error(L, "%s needs a non-empty string field \"%s\"", what, k);
	return s;
}

/* -1 absent, else the boolean; raises on another type. */
static int field_bool(lua_State *L, int t, const char *k, const char *what)
{
	int v;

	lua_pushstring(L, k);
	if (lua_rawget(L, t) == LUA_TNIL) {
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

/* Node names are DNS subdomains (what the API server accepts for a Node). */
static void check_node_name(lua_State *L, const char *s, size_t n, const char *what,
			    const char *field)
{
	char show[256];

	if (!k8sname_valid_dns_subdomain(s))
		luaL_error(L, "%s: %s \"%s\" is not a valid node name (a DNS subdomain: at most 253 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit)",
			   what, field, shown(s, n, show, sizeof(show)));
}

/* The fields each action type may have. */
static bool field_allowed(enum action_type t, const char *k)
{
	static const char *const common[] = {"type", "reason", "where", NULL};
	static const char *const scale_up[] = {"group", "count", "instance_types", NULL};
	static const char *const node[] = {"node", NULL};
	static const char *const replace[] = {"node", "group", "instance_types", NULL};
	static const char *const keyed[] = {"key", "value", "remove", NULL};
	const char *const *lists[4] = {common, NULL, NULL, NULL};
	size_t i, j;

	if (t == ACTION_SCALE_UP) {
		lists[1] = scale_up;
	} else if (t == ACTION_REPLACE) {
		lists[1] = replace;
	} else {
		lists[1] = node;
		if (t == ACTION_LABEL || t == ACTION_ANNOTATE || t == ACTION_TAINT)
			lists[2] = keyed;
	}
	if (t == ACTION_TAINT && strcmp(k, "effect") == 0)
		return true;
	if ((t == ACTION_CORDON || t == ACTION_DRAIN || t == ACTION_DELETE || t == ACTION_TAINT ||
	     t == ACTION_REPLACE) &&
	    strcmp(k, "disruption") == 0)
		return true;
	for (i = 0; i < 4 && lists[i]; i++)
		for (j = 0; lists[i][j]; j++)
			if (strcmp(k, lists[i][j]) == 0)
				return true;
	return false;
}

/* Raises on a key of table 't' that an action of type 'at' does not have. */
static void check_action_keys(lua_State *L, struct decode_ctx *d, int t, enum action_type at,
			      const char *what)
{
	if (seen_before(L, d, lua_topointer(L, t)))
		return;
	lua_pushnil(L);
	while (lua_next(L, t)) {
		char show[256];

		if (lua_type(L, -2) != LUA_TSTRING)
			luaL_error(L, "%s: %s has a key of type %s; an action has only named fields",
				   what, action_type_str(at), luaL_typename(L, -2));
		if (!field_allowed(at, lua_tostring(L, -2))) {
			size_t n;
			const char *k = lua_tolstring(L, -2, &n);

			luaL_error(L, "%s: %s has no field \"%s\"", what, action_type_str(at),
				   shown(k, n, show, sizeof(show)));
		}
		lua_pop(L, 1);
	}
}

static void decode_key_value(lua_State *L, struct decode_ctx *d, int t, struct action *a,
			     const char *what)
{
	const char *type = action_type_str(a->type);
	char why[256], show[256];
	size_t n, vn = 0;
	int rm;

	a->key = (char *)required_string(L, d, t, "key", MAX_KEY, what, &n);
	if (!k8sname_valid_qualified_name(a->key, why, sizeof(why)))
		luaL_error(L, "%s: invalid %s key \"%s\": %s", what, type,
			   shown(a->key, n, show, sizeof(show)), why);
	rm = field_bool(L, t, "remove", what);
	a->remove = rm == 1;
	a->value = (char *)field_string(L, d, t, "value",
					a->type == ACTION_ANNOTATE ? PLAN_MAX_ANNOTATION
								   : K8SNAME_NAME_MAX,
					what, &vn);
	if (a->remove) {
		if (a->value)
			luaL_error(L, "%s: %s with remove = true takes no value", what, type);
		return;
	}
	if (!a->value) {
		if (a->type != ACTION_TAINT)
			luaL_error(L, "%s: %s needs a string value (or remove = true)", what, type);
		a->value = "";
	}
	if (a->type == ACTION_ANNOTATE) {
		if (!valid_utf8((const unsigned char *)a->value, vn))
			luaL_error(L, "%s: annotation value is not valid UTF-8", what);
	} else if (!k8sname_valid_label_value(a->value)) {
		luaL_error(L, "%s: invalid %s value \"%s\": at most 63 characters, alphanumeric at both ends, '-', '_' or '.' inside",
			   what, type, shown(a->value, vn, show, sizeof(show)));
	}
}

/*
 * A scale_up's "instance_types" (absent: none): a list of 1 to
 * PLAN_MAX_INSTANCE_TYPES distinct names into a->instance_types, borrowed
 * from the table through an array that is a userdata pushed on the stack
 * (pop it after plan_add). Pushes nothing when absent. Raises on a
 * malformed list.
 */
static bool decode_instance_types(lua_State *L, struct decode_ctx *d, int t, struct action *a,
				  const char *what)
{
	char show[256];
	lua_Integer n, i;
	const char **v;
	int list;

	lua_pushliteral(L, "instance_types");
	if (lua_rawget(L, t) == LUA_TNIL) {
		lua_pop(L, 1);
		return false;
	}
	if (!lua_istable(L, -1))
		luaL_error(L, "%s: field \"instance_types\" must be a list of instance type names, got %s",
			   what, luaL_typename(L, -1));
	list = lua_gettop(L);
	n = (lua_Integer)lua_rawlen(L, list);
	if (n < 1 || n > PLAN_MAX_INSTANCE_TYPES)
		luaL_error(L, "%s: field \"instance_types\" must list 1 to %d instance types, got %I", what,
			   PLAN_MAX_INSTANCE_TYPES, n);
	v = lua_newuserdatauv(L, (size_t)n * sizeof(*v), 0);
	for (i = 1; i <= n; i++) {
		const char *s;
		size_t len, k;
		lua_Integer j;

		if (lua_rawgeti(L, list, i) != LUA_TSTRING)
			luaL_error(L, "%s: instance_types[%I] must be a string, got %s", what, i,
				   luaL_typename(L, -1));
		s = lua_tolstring(L, -1, &len);
		lua_pop(L, 1); /* the list keeps it alive */
		if (!len || len > PLAN_MAX_INSTANCE_TYPE)
			luaL_error(L, "%s: instance_types[%I] must be 1 to %d characters", what, i,
				   PLAN_MAX_INSTANCE_TYPE);
		for (k = 0; k < len; k++)
			if (!isalnum((unsigned char)s[k]) && !strchr("-._", s[k]))
				luaL_error(L, "%s: instance_types[%I] \"%s\" is not an instance type name (letters, digits, '-', '.' and '_')",
					   what, i, shown(s, len, show, sizeof(show)));
		for (j = 1; j < i; j++)
			if (!strcmp(v[j - 1], s))
				luaL_error(L, "%s: instance_types lists \"%s\" twice", what, s);
		if (len > PLAN_MAX_BYTES - d->bytes)
			luaL_error(L, "%s: the plan's strings add up to more than the limit of %I bytes",
				   what, (lua_Integer)PLAN_MAX_BYTES);
		d->bytes += len;
		v[i - 1] = s;
	}
	lua_remove(L, list); /* the action table holds the list */
	a->instance_types = (char **)v;
	a->n_instance_types = (size_t)n;
	return true;
}

/* Decodes the action table at absolute index 't' (actions[i]). */
static void decode_action(lua_State *L, int t, lua_Integer i, struct decode_ctx *d)
{
	struct action a;
	char what[PLAN_MAX_WHERE + 64], show[256];
	const char *type, *where;
	size_t n, k;
	bool pushed = false;

	memset(&a, 0, sizeof(a));
	snprintf(what, sizeof(what), "actions[%lld]", (long long)i);
	where = field_string(L, d, t, "where", PLAN_MAX_WHERE, what, &n);
	for (k = 0; where && k < n; k++)
		if ((unsigned char)where[k] < 0x20 || where[k] == 0x7f)
			luaL_error(L, "%s: field \"where\" holds a control character (it is \"file:line\")",
				   what);
	if (where && where[0])
		snprintf(what, sizeof(what), "actions[%lld] (from %s)", (long long)i, where);
	a.where = (char *)(where ? where : "");

	lua_pushliteral(L, "type");
	if (lua_rawget(L, t) != LUA_TSTRING)
		luaL_error(L, "%s needs a string field \"type\", got %s", what, luaL_typename(L, -1));
	type = lua_tolstring(L, -1, &n);
	if (n > MAX_SHORT || memchr(type, '\0', n) || action_type_parse(type, &a.type) < 0)
		luaL_error(L, "%s: unknown action type \"%s\" (expected scale_up, cordon, uncordon, drain, delete, label, taint, annotate or replace)",
			   what, shown(type, n, show, sizeof(show)));
	lua_pop(L, 1);
	check_action_keys(L, d, t, a.type, what);

	a.reason = (char *)field_string(L, d, t, "reason", PLAN_MAX_REASON, what, &n);
	if (!a.reason || !n)
		luaL_error(L, "%s: %s needs a reason (a non-empty string)", what, type);
	if (a.type == ACTION_SCALE_UP) {
		lua_Integer c = 0;

		a.group = (char *)required_string(L, d, t, "group", PLAN_MAX_GROUP, what, &n);
		if (!k8sname_valid_dns_subdomain(a.group))
			luaL_error(L, "%s: \"%s\" is not a valid node group name (at most 63 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit)",
				   what, shown(a.group, n, show, sizeof(show)));
		lua_pushliteral(L, "count");
		lua_rawget(L, t);
		if (lua_isinteger(L, -1)) /* not a float, nor a string that looks like one */
			c = lua_tointeger(L, -1);
		if (c < 1)
			luaL_error(L, "%s: scale_up needs a positive integer count, got %s", what,
				   lua_type(L, -1) == LUA_TNUMBER ? lua_tostring(L, -1)
								  : luaL_typename(L, -1));
		lua_pop(L, 1);
		a.count = c;
		pushed = decode_instance_types(L, d, t, &a, what);
	} else {
		a.node = (char *)required_string(L, d, t, "node", MAX_NODE, what, &n);
		check_node_name(L, a.node, n, what, "node");
	}
	if (a.type == ACTION_REPLACE) {
		a.group = (char *)required_string(L, d, t, "group", PLAN_MAX_GROUP, what, &n);
		if (!k8sname_valid_dns_subdomain(a.group))
			luaL_error(L, "%s: \"%s\" is not a valid node group name (at most 63 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit)",
				   what, shown(a.group, n, show, sizeof(show)));
		a.count = 1;
		pushed = decode_instance_types(L, d, t, &a, what);
	}
	if (a.type == ACTION_CORDON || a.type == ACTION_DRAIN || a.type == ACTION_DELETE ||
	    a.type == ACTION_TAINT || a.type == ACTION_REPLACE) {
		a.disruption = (char *)field_string(L, d, t, "disruption", MAX_SHORT, what, &n);
		if (a.disruption && !plan_disruption_valid(a.disruption))
			luaL_error(L, "%s: disruption must be empty, underutilized, drifted, expired or interrupted, got \"%s\"",
				   what, shown(a.disruption, n, show, sizeof(show)));
	}
	if (a.type == ACTION_LABEL || a.type == ACTION_TAINT || a.type == ACTION_ANNOTATE)
		decode_key_value(L, d, t, &a, what);
	if (a.type == ACTION_TAINT) {
		const char *eff = required_string(L, d, t, "effect", MAX_SHORT, what, &n);
		enum taint_effect e;

		if (taint_effect_parse(eff, &e) < 0)
			luaL_error(L, "%s: taint effect must be NoSchedule, PreferNoSchedule or NoExecute, got \"%s\"",
				   what, shown(eff, n, show, sizeof(show)));
		a.effect = (int)e;
	}
	if (plan_add(d->plan, &a) < 0)
		luaL_error(L, "out of memory");
	if (pushed)
		lua_pop(L, 1);
}

/*
 * Checks that table 't' is a list: every key an integer 1..n with n its
 * raw length, so no entry hides behind a hole or a named key. Returns n.
 */
static lua_Integer check_list(lua_State *L, struct decode_ctx *d, int t, const char *what,
			      lua_Integer limit)
{
	lua_Integer n = (lua_Integer)lua_rawlen(L, t), count = 0;

	if (n > limit)
		luaL_error(L, "%s has %I entries, more than the limit of %I", what, n, limit);
	if (seen_before(L, d, lua_topointer(L, t)))
		return n;
	lua_pushnil(L);
	while (lua_next(L, t)) {
		int isint = 0;
		lua_Integer k = lua_tointegerx(L, -2, &isint);

		if (lua_type(L, -2) != LUA_TNUMBER || !isint || k < 1 || k > n)
			luaL_error(L, "%s must be a list (keys 1..n without holes), found a key %s%s%s",
				   what, lua_type(L, -2) == LUA_TSTRING ? "\"" : "",
				   lua_type(L, -2) == LUA_TSTRING || lua_type(L, -2) == LUA_TNUMBER
					   ? lua_tostring(L, -2) : luaL_typename(L, -2),
				   lua_type(L, -2) == LUA_TSTRING ? "\"" : "");
		lua_pop(L, 1);
		count++;
	}
	if (count != n)
		luaL_error(L, "%s must be a list without holes (length %I, %I entries)", what, n, count);
	return n;
}

static void decode_notes(lua_State *L, struct decode_ctx *d, int t)
{
	size_t count = 0;

	lua_pushnil(L);
	while (lua_next(L, t)) {
		const char *node, *why;
		size_t n, wn;
		int cand;
		int e = lua_gettop(L);

		if (lua_type(L, -2) != LUA_TSTRING || !lua_istable(L, -1))
			luaL_error(L, "plan.notes must map node names to {candidate=, why=}, got a %s key with a %s",
				   luaL_typename(L, -2), luaL_typename(L, -1));
		if (++count > PLAN_MAX_NOTES)
			luaL_error(L, "plan.notes has more than the limit of %I entries",
				   (lua_Integer)PLAN_MAX_NOTES);
		n = lua_rawlen(L, -2);
		if (n > MAX_NODE)
			luaL_error(L, "plan.notes: a node name is %I bytes long, more than the limit of %I",
				   (lua_Integer)n, (lua_Integer)MAX_NODE);
		node = lua_tolstring(L, -2, &n);
		if (memchr(node, '\0', n))
			luaL_error(L, "plan.notes: a node name contains a NUL byte");
		/* not held to Kubernetes' name syntax: a note only annotates the
		 * report, and it may name a node that a state file spelled badly */
		if (n > PLAN_MAX_BYTES - d->bytes)
			luaL_error(L, "plan.notes: the plan's strings add up to more than the limit of %I bytes",
				   (lua_Integer)PLAN_MAX_BYTES);
		d->bytes += n;
		if (!seen_before(L, d, lua_topointer(L, e))) {
			lua_pushnil(L);
			while (lua_next(L, e)) {
				if (lua_type(L, -2) != LUA_TSTRING ||
				    (strcmp(lua_tostring(L, -2), "why") &&
				     strcmp(lua_tostring(L, -2), "candidate")))
					luaL_error(L, "plan.notes[\"%s\"] has a field other than candidate and why",
						   node);
				lua_pop(L, 1);
			}
		}
		why = field_string(L, d, e, "why", PLAN_MAX_REASON, "plan.notes entry", &wn);
		cand = field_bool(L, e, "candidate", "plan.notes entry");
		if (plan_note(d->plan, node, cand == 1, why ? why : "") < 0)
			luaL_error(L, "out of memory");
		lua_pop(L, 1);
	}
	plan_sort_notes(d->plan);
}

/* Messages are diagnostics: cut short or dropped past the limits, with a
 * word saying so, never a reason to lose the plan. */
static void decode_messages(lua_State *L, struct decode_ctx *d, int t)
{
	lua_Integer i, n = (lua_Integer)lua_rawlen(L, t);
	char msg[PLAN_MAX_MESSAGE + 8];

	for (i = 1; i <= n && i <= PLAN_MAX_MESSAGES; i++) {
		const char *s, *nul;
		size_t len;

		if (lua_rawgeti(L, t, i) != LUA_TSTRING)
			luaL_error(L, "plan.messages[%I] must be a string, got %s", i,
				   luaL_typename(L, -1));
		s = lua_tolstring(L, -1, &len);
		if (len > PLAN_MAX_MESSAGE)
			len = PLAN_MAX_MESSAGE;
		nul = memchr(s, '\0', len);
		if (nul)
			len = (size_t)(nul - s);
		snprintf(msg, sizeof(msg), "%.*s%s", (int)len, s,
			 len < lua_rawlen(L, -1) ? "..." : "");
		if (len > PLAN_MAX_BYTES - d->bytes)
			luaL_error(L, "plan.messages: the plan's strings add up to more than the limit of %I bytes",
				   (lua_Integer)PLAN_MAX_BYTES);
		d->bytes += len;
		if (plan_message(d->plan, msg) < 0)
			luaL_error(L, "out of memory");
		lua_pop(L, 1);
	}
	if (n > PLAN_MAX_MESSAGES) {
		snprintf(msg, sizeof(msg), "(%lld more messages not kept: at most %d per plan)",
			 (long long)(n - PLAN_MAX_MESSAGES), PLAN_MAX_MESSAGES);
		if (plan_message(d->plan, msg) < 0)
			luaL_error(L, "out of memory");
	}
}

/* Raises unless every key of the plan table is actions, notes or messages. */
static void check_plan_keys(lua_State *L, int t)
{
	lua_pushnil(L);
	while (lua_next(L, t)) {
		char show[256];
		size_t n;
		const char *k;

		if (lua_type(L, -2) == LUA_TNUMBER)
			luaL_error(L, "got a list, not a plan: return luascale.plan() or {actions = {...}}");
		if (lua_type(L, -2) != LUA_TSTRING)
			luaL_error(L, "the plan has a key of type %s; a plan has only the fields actions, notes and messages",
				   luaL_typename(L, -2));
		k = lua_tolstring(L, -2, &n);
		if (strcmp(k, "actions") && strcmp(k, "notes") && strcmp(k, "messages"))
			luaL_error(L, "the plan has an unknown field \"%s\" (a plan has actions, notes and messages)",
				   shown(k, n, show, sizeof(show)));
		lua_pop(L, 1);
	}
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
	check_plan_keys(L, 2);
	lua_pushliteral(L, "actions");
	lua_rawget(L, 2); /* 3 */
	if (!lua_isnil(L, 3)) {
		if (!lua_istable(L, 3))
			return luaL_error(L, "plan.actions must be a list, got %s", luaL_typename(L, 3));
		n = check_list(L, d, 3, "plan.actions", PLAN_MAX_ACTIONS);
		for (i = 1; i <= n; i++) {
			if (lua_rawgeti(L, 3, i) != LUA_TTABLE)
				return luaL_error(L, "actions[%I] must be a table, got %s", i,
						  luaL_typename(L, -1));
			decode_action(L, lua_gettop(L), i, d);
			lua_pop(L, 1);
		}
	}
	lua_pushliteral(L, "notes");
	lua_rawget(L, 2); /* 4 */
	if (lua_istable(L, 4))
		decode_notes(L, d, 4);
	else if (!lua_isnil(L, 4))
		return luaL_error(L, "plan.notes must be a table, got %s", luaL_typename(L, 4));
	lua_pushliteral(L, "messages");
	lua_rawget(L, 2); /* 5 */
	if (lua_istable(L, 5)) {
		check_list(L, d, 5, "plan.messages", INT64_MAX);
		decode_messages(L, d, 5);
	} else if (!lua_isnil(L, 5)) {
		return luaL_error(L, "plan.messages must be a list of strings, got %s", luaL_typename(L, 5));
	}
	return 0;
}

int plan_decode(lua_State *L, int fn, const char *path, struct plan *out,
		struct errbuf *err)
{
	struct decode_ctx d;
	lua_Debug ar;
	char origin[512];
	int rc = 0;

	snprintf(origin, sizeof(origin), "%s", path);
	if (fn && lua_isfunction(L, fn)) {
		lua_pushvalue(L, fn);
		if (lua_getinfo(L, ">S", &ar) && ar.linedefined > 0)
			snprintf(origin, sizeof(origin), "%s:%d",
				 ar.source[0] == '@' ? ar.source + 1 : path, ar.linedefined);
	}
	plan_init(out);
	memset(&d, 0, sizeof(d));
	d.plan = out;
	lua_pushcfunction(L, decode_plan);
	lua_insert(L, -2);
	lua_pushlightuserdata(L, &d);
	lua_insert(L, -2);
	if (lua_pcall(L, 2, 0, 0) != LUA_OK) {
		errbuf_set(err, "%s: reconcile returned a malformed plan: %s", origin,
			   lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "error");
		lua_pop(L, 1);
		plan_free(out);
		rc = -1;
	}
	free(d.seen);
	return rc;
}
