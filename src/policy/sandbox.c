/*
 * sandbox: a Lua state for untrusted policy code. Owns the allocator that
 * caps the heap, the count hook that enforces the instruction budget, the
 * restricted standard library and the restricted require(). Cluster views
 * and plans are host.c's business.
 */
#include "policy/sandbox.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#define HOOK_STEP 1000
#define DEFAULT_INSTRUCTIONS 200000000LL
#define DEFAULT_MEMORY (512LL * 1024 * 1024)
#define MAX_SOURCE (16 * 1024 * 1024)

enum exhausted {
	EXHAUSTED_NONE,
	EXHAUSTED_INSTRUCTIONS,
	EXHAUSTED_MEMORY,
};

struct sandbox {
	lua_State *L;
	size_t mem_used;
	size_t mem_limit;
	int64_t budget;
	int64_t used;
	bool in_call;
	enum exhausted exhausted;
	int64_t now;
	char lib_dir[PATH_MAX];
	char policy_dir[PATH_MAX];
};

static const char LOADED_KEY[] = "luascale.sandbox.loaded";

/* ---- limits ---- */

static void *sandbox_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	struct sandbox *sb = ud;
	size_t old = ptr ? osize : 0;
	void *p;

	if (nsize == 0) {
		free(ptr);
		sb->mem_used -= old;
		return NULL;
	}
	if (nsize > old && sb->mem_used - old + nsize > sb->mem_limit) {
		if (sb->in_call)
			sb->exhausted = EXHAUSTED_MEMORY;
		return NULL;
	}
	p = realloc(ptr, nsize);
	if (!p)
		return NULL;
	sb->mem_used = sb->mem_used - old + nsize;
	return p;
}

/* Raises the limit error, located at the running Lua function (level 0:
 * inside a hook there is no frame of the hook's own). */
static int raise_exhausted(lua_State *L, struct sandbox *sb)
{
	lua_Debug ar;

	if (lua_getstack(L, 0, &ar) && lua_getinfo(L, "Sl", &ar) && ar.currentline > 0)
		lua_pushfstring(L, "%s:%d: ", ar.short_src, ar.currentline);
	else
		lua_pushliteral(L, "");
	if (sb->exhausted == EXHAUSTED_MEMORY)
		lua_pushfstring(L, "policy exceeded its memory limit (%d MiB)",
				(int)(sb->mem_limit >> 20));
	else
		lua_pushfstring(L, "policy exceeded its instruction budget (%I instructions)",
				(lua_Integer)sb->budget);
	lua_concat(L, 2);
	return lua_error(L);
}

static void sandbox_hook(lua_State *L, lua_Debug *ar)
{
	struct sandbox *sb = sandbox_of(L);

	(void)ar;
	if (!sb->in_call)
		return;
	sb->used += lua_gethookcount(L);
	if (sb->exhausted == EXHAUSTED_NONE && lua_gethookcount(L) != HOOK_STEP)
		lua_sethook(L, sandbox_hook, LUA_MASKCOUNT, HOOK_STEP);
	if (sb->exhausted == EXHAUSTED_NONE && sb->used > sb->budget)
		sb->exhausted = EXHAUSTED_INSTRUCTIONS;
	if (sb->exhausted != EXHAUSTED_NONE) {
		/* From now on every instruction of this thread raises, so a
		 * pcall or coroutine in the policy cannot keep it running. */
		lua_sethook(L, sandbox_hook, LUA_MASKCOUNT, 1);
		raise_exhausted(L, sb);
	}
}

struct sandbox *sandbox_of(lua_State *L)
{
	void *ud = NULL;

	lua_getallocf(L, &ud);
	return ud;
}

/* ---- restricted library ---- */

/* load(chunk [, chunkname [, mode [, env]]]) in text mode only. */
static int sb_load(lua_State *L)
{
	size_t len;
	const char *s;
	const char *name;
	int status;
	/* read before the chunk is pushed: with three arguments it lands at 4 */
	bool has_env = !lua_isnone(L, 4);

	if (lua_type(L, 1) != LUA_TSTRING)
		return luaL_error(L, "load: only strings can be loaded in the policy sandbox");
	s = lua_tolstring(L, 1, &len);
	name = luaL_optstring(L, 2, s);
	if (!lua_isnoneornil(L, 3) && strcmp(luaL_checkstring(L, 3), "t") != 0 &&
	    strcmp(lua_tostring(L, 3), "bt") != 0)
		return luaL_error(L, "load: only text chunks are allowed");
	status = luaL_loadbufferx(L, s, len, name, "t");
	if (status != LUA_OK) {
		luaL_pushfail(L);
		lua_insert(L, -2);
		return 2;
	}
	if (has_env) {
		lua_pushvalue(L, 4);
		if (!lua_setupvalue(L, -2, 1))
			lua_pop(L, 1);
	}
	return 1;
}

/* xpcall(f, msgh, ...): the handler runs after the stack has unwound, as an
 * ordinary call. (The standard xpcall runs it while the error is raised,
 * where an error raised by the budget hook leaves hooks off and a looping
 * handler could run forever.) */
static int sb_xpcall(lua_State *L)
{
	int n = lua_gettop(L);

	luaL_checktype(L, 2, LUA_TFUNCTION);
	lua_pushvalue(L, 1);
	lua_rotate(L, 3, 1); /* f, msgh, f, args... */
	if (lua_pcall(L, n - 2, LUA_MULTRET, 0) == LUA_OK) {
		lua_pushboolean(L, 1);
		lua_replace(L, 2); /* f, true, results... */
		return lua_gettop(L) - 1;
	}
	/* stack: f, msgh, err */
	lua_pushvalue(L, 2);
	lua_insert(L, -2);
	lua_pcall(L, 1, 1, 0); /* the handler's result, or its own error */
	lua_pushboolean(L, 0);
	lua_insert(L, -2);
	return 2;
}

/* setmetatable refusing __gc: finalizers run with hooks off, outside any
 * budget. A __gc added later to the metatable has no effect in Lua 5.4. */
static int sb_setmetatable(lua_State *L)
{
	if (lua_istable(L, 2)) {
		lua_pushliteral(L, "__gc");
		if (lua_rawget(L, 2) != LUA_TNIL)
			return luaL_error(L, "__gc metamethods are not allowed in policies");
		lua_pop(L, 1);
	}
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_call(L, lua_gettop(L) - 1, 1);
	return 1;
}

static int sb_print(lua_State *L)
{
	int n = lua_gettop(L), i;

	fputs("policy: ", stderr);
	for (i = 1; i <= n; i++) {
		size_t len;
		const char *s = luaL_tolstring(L, i, &len);

		if (i > 1)
			fputc('\t', stderr);
		fwrite(s, 1, len, stderr);
		lua_pop(L, 1);
	}
	fputc('\n', stderr);
	return 0;
}

static int sb_collectgarbage(lua_State *L)
{
	const char *opt = luaL_optstring(L, 1, "collect");

	if (strcmp(opt, "count") == 0) {
		lua_pushnumber(L, (lua_Number)lua_gc(L, LUA_GCCOUNT, 0) +
				  (lua_Number)lua_gc(L, LUA_GCCOUNTB, 0) / 1024.0);
		return 1;
	}
	if (strcmp(opt, "collect") == 0 || strcmp(opt, "step") == 0) {
		lua_gc(L, strcmp(opt, "collect") == 0 ? LUA_GCCOLLECT : LUA_GCSTEP, 0);
		lua_pushinteger(L, 0);
		return 1;
	}
	return luaL_error(L, "collectgarbage(\"%s\") is not allowed in the policy sandbox", opt);
}

static int sb_os_time(lua_State *L)
{
	struct sandbox *sb = sandbox_of(L);

	if (lua_isnoneornil(L, 1)) {
		lua_pushinteger(L, (lua_Integer)sb->now);
		return 1;
	}
	/* with a date table: the standard os.time, kept as an upvalue */
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_call(L, lua_gettop(L) - 1, 1);
	return 1;
}

/* Is 'name' a module name we accept: [A-Za-z0-9_-] segments split by dots. */
static bool module_name_ok(const char *name)
{
	const char *p;
	bool seg_empty = true;

	if (!*name || strlen(name) > 128)
		return false;
	for (p = name; *p; p++) {
		if (*p == '.') {
			if (seg_empty)
				return false;
			seg_empty = true;
		} else if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			   (*p >= '0' && *p <= '9') || *p == '_' || *p == '-') {
			seg_empty = false;
		} else {
			return false;
		}
	}
	return !seg_empty;
}

static bool file_exists(const char *path)
{
	FILE *f = fopen(path, "r");

	if (!f)
		return false;
	fclose(f);
	return true;
}

/* require(name): luascale library folder, then the policy's folder. */
static int sb_require(lua_State *L)
{
	struct sandbox *sb = sandbox_of(L);
	const char *name = luaL_checkstring(L, 1);
	char rel[256], path[PATH_MAX + 300];
	const char *dirs[2] = {sb->lib_dir, sb->policy_dir};
	const char *forms[2] = {"%s/%s.lua", "%s/%s/init.lua"};
	struct errbuf err;
	size_t i, j;
	bool found = false;

	lua_settop(L, 1);
	lua_getfield(L, LUA_REGISTRYINDEX, LOADED_KEY);
	lua_getfield(L, 2, name);
	if (!lua_isnil(L, -1))
		return 1;
	lua_pop(L, 1);
	if (!module_name_ok(name))
		return luaL_error(L, "require \"%s\": invalid module name", name);
	snprintf(rel, sizeof(rel), "%s", name);
	for (i = 0; rel[i]; i++)
		if (rel[i] == '.')
			rel[i] = '/';
	for (i = 0; i < 2 && !found; i++) {
		if (!dirs[i][0])
			continue;
		for (j = 0; j < 2 && !found; j++) {
			snprintf(path, sizeof(path), forms[j], dirs[i], rel);
			found = file_exists(path);
		}
	}
	if (!found)
		return luaL_error(L, "module \"%s\" not found in %s or %s", name,
				  sb->lib_dir, sb->policy_dir[0] ? sb->policy_dir : "(none)");
	if (sandbox_loadfile(sb, path, &err) < 0)
		return luaL_error(L, "%s", err.msg);
	lua_pushstring(L, name);
	lua_call(L, 1, 1);
	if (lua_isnil(L, -1)) {
		lua_pop(L, 1);
		lua_pushboolean(L, 1);
	}
	lua_pushvalue(L, -1);
	lua_setfield(L, 2, name);
	return 1;
}

static void open_lib(lua_State *L, const char *name, lua_CFunction open)
{
	luaL_requiref(L, name, open, 1);
	lua_pop(L, 1);
}

static void remove_field(lua_State *L, int idx, const char *name)
{
	lua_pushnil(L);
	lua_setfield(L, idx < 0 ? idx - 1 : idx, name);
}

static int sandbox_open(lua_State *L)
{
	static const char *const os_keep[] = {"clock", "date", "time", NULL};
	int i;

	open_lib(L, LUA_GNAME, luaopen_base);
	open_lib(L, LUA_STRLIBNAME, luaopen_string);
	open_lib(L, LUA_TABLIBNAME, luaopen_table);
	open_lib(L, LUA_MATHLIBNAME, luaopen_math);
	open_lib(L, LUA_UTF8LIBNAME, luaopen_utf8);
	open_lib(L, LUA_COLIBNAME, luaopen_coroutine);

	lua_pushglobaltable(L);
	remove_field(L, -1, "dofile");
	remove_field(L, -1, "loadfile");
	lua_pushcfunction(L, sb_load);
	lua_setfield(L, -2, "load");
	lua_pushcfunction(L, sb_print);
	lua_setfield(L, -2, "print");
	lua_pushcfunction(L, sb_collectgarbage);
	lua_setfield(L, -2, "collectgarbage");
	lua_pushcfunction(L, sb_require);
	lua_setfield(L, -2, "require");
	lua_pushcfunction(L, sb_xpcall);
	lua_setfield(L, -2, "xpcall");
	lua_getfield(L, -1, "setmetatable");
	lua_pushcclosure(L, sb_setmetatable, 1);
	lua_setfield(L, -2, "setmetatable");

	/* string.dump makes binary chunks; nothing may load them anyway */
	lua_getfield(L, -1, "string");
	remove_field(L, -1, "dump");
	lua_pop(L, 1);

	/* os: time, clock, date only; os.time() is the cluster's clock */
	luaopen_os(L);
	lua_newtable(L);
	for (i = 0; os_keep[i]; i++) {
		lua_getfield(L, -2, os_keep[i]);
		lua_setfield(L, -2, os_keep[i]);
	}
	lua_getfield(L, -2, "time");
	lua_pushcclosure(L, sb_os_time, 1);
	lua_setfield(L, -2, "time");
	lua_setfield(L, -3, "os");
	lua_pop(L, 1); /* full os table */

	/* reproducible math.random */
	lua_getfield(L, -1, "math");
	lua_getfield(L, -1, "randomseed");
	lua_pushinteger(L, 42);
	lua_call(L, 1, 0);
	lua_pop(L, 1);

	lua_pop(L, 1); /* globals */
	lua_newtable(L);
	lua_setfield(L, LUA_REGISTRYINDEX, LOADED_KEY);
	return 0;
}

/* ---- lifecycle ---- */

struct sandbox *sandbox_new(const char *lib_dir, const char *policy_dir,
			    const struct sandbox_limits *lim, struct errbuf *err)
{
	struct sandbox *sb = calloc(1, sizeof(*sb));

	if (!sb) {
		errbuf_set(err, "out of memory");
		return NULL;
	}
	sb->budget = lim && lim->instructions > 0 ? lim->instructions : DEFAULT_INSTRUCTIONS;
	sb->mem_limit = lim && lim->memory > 0 ? (size_t)lim->memory : (size_t)DEFAULT_MEMORY;
	sb->now = (int64_t)time(NULL);
	snprintf(sb->lib_dir, sizeof(sb->lib_dir), "%s", lib_dir ? lib_dir : "");
	snprintf(sb->policy_dir, sizeof(sb->policy_dir), "%s", policy_dir ? policy_dir : "");
	sb->L = lua_newstate(sandbox_alloc, sb);
	if (!sb->L) {
		free(sb);
		errbuf_set(err, "cannot create a Lua state: out of memory");
		return NULL;
	}
	/* The hook is set before any code runs: every coroutine created later
	 * inherits it, so none can run outside the budget. */
	lua_sethook(sb->L, sandbox_hook, LUA_MASKCOUNT, HOOK_STEP);
	lua_pushcfunction(sb->L, sandbox_open);
	if (lua_pcall(sb->L, 0, 0, 0) != LUA_OK) {
		errbuf_set(err, "cannot open the Lua libraries: %s", lua_tostring(sb->L, -1));
		sandbox_free(sb);
		return NULL;
	}
	return sb;
}

void sandbox_free(struct sandbox *sb)
{
	if (!sb)
		return;
	if (sb->L)
		lua_close(sb->L);
	free(sb);
}

lua_State *sandbox_state(struct sandbox *sb)
{
	return sb->L;
}

void sandbox_set_now(struct sandbox *sb, int64_t now)
{
	sb->now = now;
}

int64_t sandbox_instructions(const struct sandbox *sb)
{
	return sb->used;
}

size_t sandbox_memory(const struct sandbox *sb)
{
	return sb->mem_used;
}

void sandbox_preload(struct sandbox *sb, const char *name)
{
	lua_State *L = sb->L;

	lua_getfield(L, LUA_REGISTRYINDEX, LOADED_KEY);
	lua_insert(L, -2);
	lua_setfield(L, -2, name);
	lua_pop(L, 1);
}

int sandbox_loadfile(struct sandbox *sb, const char *path, struct errbuf *err)
{
	FILE *f = fopen(path, "rb");
	char *text = NULL, chunkname[PATH_MAX + 2];
	size_t len = 0, cap = 0, n;
	int rc = -1;

	if (!f)
		return errbuf_set(err, "cannot open %s: %s", path, strerror(errno));
	for (;;) {
		if (len + 65536 > cap) {
			char *t;

			cap = cap ? cap * 2 : 65536 * 2;
			if (cap > MAX_SOURCE + 65536) {
				errbuf_set(err, "%s: larger than %d MiB", path, MAX_SOURCE >> 20);
				goto out;
			}
			t = realloc(text, cap);
			if (!t) {
				errbuf_set(err, "%s: out of memory", path);
				goto out;
			}
			text = t;
		}
		n = fread(text + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		errbuf_set(err, "cannot read %s: %s", path, strerror(errno));
		goto out;
	}
	if (len > 0 && text[0] == LUA_SIGNATURE[0]) {
		errbuf_set(err, "%s: binary chunks are not allowed", path);
		goto out;
	}
	snprintf(chunkname, sizeof(chunkname), "@%s", path);
	if (luaL_loadbufferx(sb->L, text ? text : "", len, chunkname, "t") != LUA_OK) {
		errbuf_set(err, "%s", lua_tostring(sb->L, -1));
		lua_pop(sb->L, 1);
		goto out;
	}
	rc = 0;
out:
	free(text);
	fclose(f);
	return rc;
}

static void reset_hooks(lua_State *L)
{
	lua_sethook(L, sandbox_hook, LUA_MASKCOUNT, HOOK_STEP);
}

static int err_tostring(lua_State *L)
{
	luaL_tolstring(L, 1, NULL);
	return 1;
}

/* Turns the error value at the top of the stack into a message. A
 * __tostring metamethod is policy code: it runs under a fresh budget. */
static void describe_error(struct sandbox *sb, struct errbuf *err)
{
	lua_State *L = sb->L;
	int t = lua_type(L, -1);

	if (t == LUA_TSTRING) {
		errbuf_set(err, "%s", lua_tostring(L, -1));
		return;
	}
	errbuf_set(err, "error with a %s value (not a string)", luaL_typename(L, -1));
	if (t == LUA_TNIL || luaL_getmetafield(L, -1, "__tostring") == LUA_TNIL)
		return;
	lua_pop(L, 1);
	lua_pushcfunction(L, err_tostring);
	lua_pushvalue(L, -2);
	sb->used = 0;
	sb->exhausted = EXHAUSTED_NONE;
	sb->in_call = true;
	if (lua_pcall(L, 1, 1, 0) == LUA_OK && sb->exhausted == EXHAUSTED_NONE &&
	    lua_type(L, -1) == LUA_TSTRING)
		errbuf_set(err, "%s", lua_tostring(L, -1));
	sb->in_call = false;
	sb->exhausted = EXHAUSTED_NONE;
	reset_hooks(L);
	lua_pop(L, 1);
}

/* Message handler: adds the location of the failing Lua code when the
 * error is not already a located string. */
static int add_where(lua_State *L)
{
	int t = lua_type(L, 1);

	if (t == LUA_TTABLE && luaL_getmetafield(L, 1, "__tostring") != LUA_TNIL) {
		lua_settop(L, 1); /* describe_error() will call it under a budget */
		return 1;
	}
	if (t == LUA_TTABLE || t == LUA_TNIL || t == LUA_TBOOLEAN || t == LUA_TNUMBER) {
		lua_Debug ar;
		int level;

		for (level = 1; lua_getstack(L, level, &ar); level++) {
			lua_getinfo(L, "Sl", &ar);
			if (ar.currentline > 0) {
				lua_pushfstring(L, "%s:%d: error with a %s value (not a string)",
						ar.short_src, ar.currentline, luaL_typename(L, 1));
				return 1;
			}
		}
	}
	return 1;
}

static int finish_call(struct sandbox *sb, int status, int base, struct errbuf *err)
{
	lua_State *L = sb->L;

	sb->in_call = false;
	reset_hooks(L);
	if (sb->exhausted != EXHAUSTED_NONE) {
		/* Over a limit: the call failed, whatever the policy did with the
		 * error (caught it, replaced it, failed in its handler). Keep a
		 * located message we raised ourselves; otherwise say it plainly. */
		const char *msg = status == LUA_OK ? NULL : lua_tostring(L, -1);

		if (!msg || !strstr(msg, "policy exceeded its")) {
			lua_settop(L, base - 1);
			if (sb->exhausted == EXHAUSTED_MEMORY)
				lua_pushfstring(L, "policy exceeded its memory limit (%d MiB)",
						(int)(sb->mem_limit >> 20));
			else
				lua_pushfstring(L, "policy exceeded its instruction budget (%I instructions)",
						(lua_Integer)sb->budget);
			status = LUA_ERRRUN;
		}
	}
	if (status != LUA_OK) {
		if (status == LUA_ERRMEM)
			errbuf_set(err, "policy exceeded its memory limit (%d MiB)",
				   (int)(sb->mem_limit >> 20));
		else
			describe_error(sb, err);
		lua_settop(L, base - 1);
		sb->exhausted = EXHAUSTED_NONE;
		lua_gc(L, LUA_GCCOLLECT, 0);
		return -1;
	}
	lua_remove(L, base); /* message handler */
	sb->exhausted = EXHAUSTED_NONE;
	return 0;
}

int sandbox_call(struct sandbox *sb, int nargs, int nresults, struct errbuf *err)
{
	lua_State *L = sb->L;
	int base = lua_gettop(L) - nargs; /* index of the function */
	int status;

	lua_pushcfunction(L, add_where);
	lua_insert(L, base);
	sb->used = 0;
	sb->exhausted = EXHAUSTED_NONE;
	sb->in_call = true;
	status = lua_pcall(L, nargs, nresults, base);
	return finish_call(sb, status, base, err);
}

int sandbox_cpcall(struct sandbox *sb, int (*fn)(lua_State *), void *ud,
		   struct errbuf *err)
{
	lua_State *L = sb->L;
	int base, status;

	lua_pushcfunction(L, add_where);
	base = lua_gettop(L);
	lua_pushcfunction(L, fn);
	lua_pushlightuserdata(L, ud);
	sb->exhausted = EXHAUSTED_NONE;
	status = lua_pcall(L, 1, 0, base);
	if (status != LUA_OK) {
		if (status == LUA_ERRMEM)
			errbuf_set(err, "out of policy memory (limit %d MiB) while building the cluster view",
				   (int)(sb->mem_limit >> 20));
		else
			describe_error(sb, err);
		lua_settop(L, base - 1);
		return -1;
	}
	lua_settop(L, base - 1);
	return 0;
}
