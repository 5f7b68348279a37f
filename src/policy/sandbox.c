/*
 * sandbox: a Lua state for untrusted policy code. Owns the allocator that
 * caps the heap, the count hook that enforces the instruction budget, the
 * restricted standard library and the restricted require(). Cluster views
 * and plans are host.c's business.
 */
#include "policy/sandbox.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "buf.h"
#include "log.h"

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

/*
 * Work the count hook does not see: one instruction (string.rep, the ..
 * operator, table.sort, a pattern match) can build megabytes, sort a
 * million elements or backtrack 10^8 times, and in a loop that would run
 * for hours within the budget. So every byte a call allocates is charged,
 * and the wrapped library functions below charge their element counts or
 * pattern cost. Left uncharged: comparing two long strings (== and <).
 */
#define ALLOC_BYTES_PER_INSTRUCTION 16
/* Once the budget is spent inside an allocation, larger allocations fail
 * until the hook raises (its located message is small). */
#define ALLOC_AFTER_EXHAUSTED (64 * 1024)
#define CHARGE_MAX (INT64_MAX / 4) /* 'used' never overflows */

/* Adds 'work' instructions to the running call; marks the budget spent. */
static void charge(struct sandbox *sb, double work)
{
	if (!sb->in_call || !(work > 0))
		return;
	if (work > (double)(CHARGE_MAX - sb->used))
		sb->used = CHARGE_MAX;
	else
		sb->used += (int64_t)work;
	if (sb->exhausted == EXHAUSTED_NONE && sb->used > sb->budget)
		sb->exhausted = EXHAUSTED_INSTRUCTIONS;
}

static void sandbox_hook(lua_State *L, lua_Debug *ar);

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
	if (nsize > old && sb->in_call) {
		bool spent = sb->exhausted == EXHAUSTED_INSTRUCTIONS;

		if (spent && nsize - old > ALLOC_AFTER_EXHAUSTED)
			return NULL;
		charge(sb, (double)((nsize - old) / ALLOC_BYTES_PER_INSTRUCTION));
		/* this allocation spent it: the next instruction raises (in a
		 * coroutine, the next hook of its own, HOOK_STEP at most) */
		if (!spent && sb->exhausted == EXHAUSTED_INSTRUCTIONS)
			lua_sethook(sb->L, sandbox_hook, LUA_MASKCOUNT, 1);
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

/* Raises the limit error, located at the Lua function 'level' up (0 in a
 * hook, which has no frame of its own; 1 in a C function). */
static int raise_exhausted(lua_State *L, struct sandbox *sb, int level)
{
	lua_Debug ar;

	if (lua_getstack(L, level, &ar) && lua_getinfo(L, "Sl", &ar) && ar.currentline > 0)
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
		raise_exhausted(L, sb, 0);
	}
}

const char *sandbox_lib_dir(const struct sandbox *sb)
{
	return sb->lib_dir;
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
		log_fwrite_escaped(stderr, s, len); /* one line, whatever it prints */
		lua_pop(L, 1);
	}
	fputc('\n', stderr);
	return 0;
}

/* Charges a library call's work; raises at once when the budget is spent
 * (by this call or an earlier allocation), before the work is done. */
static void charge_call(lua_State *L, double work)
{
	struct sandbox *sb = sandbox_of(L);

	charge(sb, work);
	if (sb->in_call && sb->exhausted != EXHAUSTED_NONE)
		raise_exhausted(L, sb, 1);
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
		if (strcmp(opt, "collect") == 0) /* it walks the whole heap */
			charge_call(L, (double)sandbox_of(L)->mem_used / ALLOC_BYTES_PER_INSTRUCTION);
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

/* os.date: without a time, the cluster's clock (not the machine's), so a
 * policy decides the same in a replay as it did live. */
static int sb_os_date(lua_State *L)
{
	struct sandbox *sb = sandbox_of(L);

	if (lua_isnoneornil(L, 2)) {
		if (lua_isnone(L, 1))
			lua_pushstring(L, "%c");
		lua_settop(L, 1);
		lua_pushinteger(L, (lua_Integer)sb->now);
	}
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

/* stat, not open: opening a FIFO would wait for a writer. What is not a
 * regular file is then refused by buf_read_file with a clear message. */
static bool file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
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
	bool found = false, from_lib = false;

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
		from_lib = found && i == 0;
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
	/* luascale's own modules are shared by every caller: read-only */
	if (from_lib && lua_istable(L, -1))
		sandbox_freeze(L);
	lua_pushvalue(L, -1);
	lua_setfield(L, 2, name);
	return 1;
}


/* ---- size caps for C functions the instruction hook cannot interrupt ---- */

#define CAP_STRING (64LL * 1024 * 1024) /* bytes built by one string.rep / table.concat */
#define CAP_PATTERN_WORK 1e8            /* worst-case steps of one pattern call */
#define CAP_PLAIN_WORK 4e9              /* bytes compared by one plain find */
#define CAP_SORT (1 << 20)              /* elements sorted by one table.sort */
/* Worst-case pattern steps (or plain-find byte comparisons) charged as one
 * instruction: a call near CAP_PATTERN_WORK costs a million. */
#define PATTERN_STEPS_PER_INSTRUCTION 100

/* Calls the original function (upvalue 1) with the same arguments. */
static int call_original(lua_State *L)
{
	int n = lua_gettop(L);

	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_call(L, n, LUA_MULTRET);
	return lua_gettop(L);
}

static int sb_rep(lua_State *L)
{
	size_t l, lsep = 0;
	lua_Integer n;

	luaL_checklstring(L, 1, &l);
	n = luaL_checkinteger(L, 2);
	luaL_optlstring(L, 3, "", &lsep);
	if (n > 0 && ((double)l + (double)lsep) * (double)n > (double)CAP_STRING)
		return luaL_error(L, "string.rep: a result of %f MiB is over the policy sandbox's limit of %d MiB",
				  ((double)l + (double)lsep) * (double)n / 1048576.0,
				  (int)(CAP_STRING >> 20));
	/* the bytes are charged as allocated; each piece is a copy of its own */
	charge_call(L, (double)n / 4);
	return call_original(L);
}

/* Does the pattern have magic characters (else Lua searches it plainly)? */
static bool has_specials(const char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (strchr("^$*+?.([%-", p[i]))
			return true;
	return false;
}

/*
 * Worst-case work of matching pattern 'p' against 'n' bytes with Lua's
 * backtracking matcher: start positions (1 when anchored) times n for every
 * repetition that has more pattern after it, times 2 for every '?', times
 * n for every %b. Repetitions at the very end cannot backtrack.
 */
static double pattern_work(const char *p, size_t len, size_t n)
{
	double work, nn = (double)n + 1;
	size_t i = 0;
	bool anchored = len > 0 && p[0] == '^';

	work = anchored ? 1 : nn;
	if (anchored)
		i = 1;
	while (i < len && work < 1e300) {
		size_t next;

		if (p[i] == '(' || p[i] == ')') {
			i++;
			continue;
		}
		if (p[i] == '%' && i + 1 < len && p[i + 1] == 'b') {
			work *= nn; /* a balanced scan from each position */
			i += 4;
			continue;
		}
		if (p[i] == '%' && i + 1 < len && p[i + 1] == 'f') {
			i += 2;
			if (i < len && p[i] == '[') {
				for (i++; i < len && p[i] != ']'; i++)
					if (p[i] == '%')
						i++;
				i++;
			}
			continue;
		}
		/* one single-character class */
		if (p[i] == '%') {
			next = i + 2;
		} else if (p[i] == '[') {
			next = i + 1;
			if (next < len && p[next] == '^')
				next++;
			if (next < len && p[next] == ']')
				next++;
			while (next < len && p[next] != ']') {
				if (p[next] == '%')
					next++;
				next++;
			}
			next++;
		} else {
			next = i + 1;
		}
		if (next < len && (p[next] == '*' || p[next] == '+' || p[next] == '-')) {
			size_t rest = next + 1;

			/* only what follows can make it backtrack */
			while (rest < len && p[rest] == ')')
				rest++;
			if (!(rest == len || (rest + 1 == len && p[rest] == '$')))
				work *= nn;
			next++;
		} else if (next < len && p[next] == '?') {
			work *= 2;
			next++;
		}
		i = next;
	}
	return work;
}

/* Checks the cost of a pattern call; 'plain' for find's fourth argument. */
static void check_pattern(lua_State *L, const char *fname, bool may_be_plain)
{
	size_t n, plen;
	const char *p;
	double work;

	if (lua_type(L, 1) != LUA_TSTRING && lua_type(L, 1) != LUA_TNUMBER)
		return; /* the original reports the bad argument */
	if (lua_type(L, 2) != LUA_TSTRING && lua_type(L, 2) != LUA_TNUMBER)
		return;
	lua_tolstring(L, 1, &n);
	p = lua_tolstring(L, 2, &plen);
	if ((may_be_plain && lua_toboolean(L, 4)) || !has_specials(p, plen)) {
		if ((double)n * (double)plen > CAP_PLAIN_WORK)
			luaL_error(L, "%s: searching %I bytes for a %I-byte string is over the policy sandbox's limit",
				   fname, (lua_Integer)n, (lua_Integer)plen);
		charge_call(L, (double)n * (double)plen / PATTERN_STEPS_PER_INSTRUCTION);
		return;
	}
	work = pattern_work(p, plen, n);
	if (work > CAP_PATTERN_WORK) {
		char msg[400];

		snprintf(msg, sizeof(msg),
			 "%s: pattern \"%.60s\" on a %zu-byte string could take about %.0e steps, "
			 "over the policy sandbox's limit of %.0e (anchor it with ^, or shorten the string)",
			 fname, p, n, work, CAP_PATTERN_WORK);
		luaL_error(L, "%s", msg);
	}
	/* the worst case, scaled down: everyday patterns cost next to nothing,
	 * a loop of near-limit ones runs out of budget */
	charge_call(L, work / PATTERN_STEPS_PER_INSTRUCTION);
}

static int sb_find(lua_State *L)
{
	check_pattern(L, "string.find", true);
	return call_original(L);
}

static int sb_match(lua_State *L)
{
	check_pattern(L, "string.match", false);
	return call_original(L);
}

static int sb_gmatch(lua_State *L)
{
	check_pattern(L, "string.gmatch", false);
	return call_original(L);
}

static int sb_gsub(lua_State *L)
{
	check_pattern(L, "string.gsub", false);
	return call_original(L);
}

static int sb_concat(lua_State *L)
{
	lua_Integer i, last, count;
	size_t lsep = 0;
	double total = 0;

	luaL_checktype(L, 1, LUA_TTABLE);
	luaL_optlstring(L, 2, "", &lsep);
	i = luaL_optinteger(L, 3, 1);
	last = lua_isnoneornil(L, 4) ? (lua_Integer)lua_rawlen(L, 1) : luaL_checkinteger(L, 4);
	if (i > last)
		return call_original(L);
	count = last - i; /* may overflow for absurd ranges: checked as double */
	if ((double)last - (double)i + 1 > (double)CAP_SORT * 16 || count < 0)
		return luaL_error(L, "table.concat: %f elements is over the policy sandbox's limit",
				  (double)last - (double)i + 1);
	for (; i <= last; i++) {
		size_t l = 0;

		if (lua_rawgeti(L, 1, i) == LUA_TSTRING)
			lua_tolstring(L, -1, &l);
		lua_pop(L, 1);
		total += (double)l + (double)lsep;
		if (total > (double)CAP_STRING)
			return luaL_error(L, "table.concat: the result is over the policy sandbox's limit of %d MiB",
					  (int)(CAP_STRING >> 20));
	}
	charge_call(L, (double)count + 1);
	return call_original(L);
}

static int sb_sort(lua_State *L)
{
	lua_Integer n;

	luaL_checktype(L, 1, LUA_TTABLE);
	n = luaL_len(L, 1);
	if (n > CAP_SORT)
		return luaL_error(L, "table.sort: %I elements is over the policy sandbox's limit of %d",
				  n, CAP_SORT);
	/* n log n comparisons; a Lua comparator's own instructions count too */
	if (n > 1)
		charge_call(L, (double)n * log2((double)n));
	return call_original(L);
}

/* table.insert(t, pos, v) shifts the elements from pos up (appending
 * shifts nothing). */
static int sb_insert(lua_State *L)
{
	if (lua_gettop(L) == 3 && lua_type(L, 1) == LUA_TTABLE && lua_isinteger(L, 2))
		charge_call(L, (double)lua_rawlen(L, 1) - (double)lua_tointeger(L, 2) + 1);
	return call_original(L);
}

/* table.remove(t, pos) shifts the elements above pos down. */
static int sb_remove(lua_State *L)
{
	if (lua_type(L, 1) == LUA_TTABLE && lua_isinteger(L, 2))
		charge_call(L, (double)lua_rawlen(L, 1) - (double)lua_tointeger(L, 2));
	return call_original(L);
}

/* table.move(a1, f, e, t [, a2]) copies e - f + 1 elements. */
static int sb_move(lua_State *L)
{
	if (lua_isinteger(L, 2) && lua_isinteger(L, 3))
		charge_call(L, (double)lua_tointeger(L, 3) - (double)lua_tointeger(L, 2) + 1);
	return call_original(L);
}

/* table.unpack(t [, i [, j]]) pushes j - i + 1 values (j: #t). */
static int sb_unpack(lua_State *L)
{
	double i = lua_isinteger(L, 2) ? (double)lua_tointeger(L, 2) : 1;
	double j;

	if (lua_isinteger(L, 3))
		j = (double)lua_tointeger(L, 3);
	else
		j = lua_type(L, 1) == LUA_TTABLE ? (double)lua_rawlen(L, 1) : 0;
	charge_call(L, j - i + 1);
	return call_original(L);
}

/* string.byte(s [, i [, j]]), utf8.codepoint(s [, i [, j]]): one value per
 * byte of s[i..j], with Lua's rules for defaults and negative positions. */
static int sb_range(lua_State *L)
{
	size_t len;
	double n, i, j;

	if (lua_type(L, 1) != LUA_TSTRING && lua_type(L, 1) != LUA_TNUMBER)
		return call_original(L);
	lua_tolstring(L, 1, &len);
	n = (double)len;
	i = lua_isinteger(L, 2) ? (double)lua_tointeger(L, 2) : 1;
	j = lua_isinteger(L, 3) ? (double)lua_tointeger(L, 3) : i;
	if (i < 0)
		i = i < -n ? 1 : n + i + 1;
	if (j < 0)
		j = j < -n ? 0 : n + j + 1;
	if (i < 1)
		i = 1;
	if (j > n)
		j = n;
	charge_call(L, j - i + 1);
	return call_original(L);
}

/* Replaces lib[name] with 'wrapper' holding the original as upvalue 1.
 * Stack: the library table at the top. */
static void wrap(lua_State *L, const char *name, lua_CFunction wrapper)
{
	lua_getfield(L, -1, name);
	lua_pushcclosure(L, wrapper, 1);
	lua_setfield(L, -2, name);
}

/* ---- read-only library tables ---- */

static const char FROZEN_KEY[] = "luascale.sandbox.frozen"; /* proxy -> true (weak) */

static int frozen_newindex(lua_State *L)
{
	return luaL_error(L, "attempt to modify a read-only table (field '%s')",
			  lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : luaL_typename(L, 2));
}

static int lua_next_wrapper(lua_State *L)
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
	lua_pushcfunction(L, lua_next_wrapper);
	lua_getmetatable(L, 1);
	lua_getfield(L, -1, "__index");
	lua_remove(L, -2);
	lua_pushnil(L);
	return 3;
}

/*
 * Replaces the table at the top of the stack by a read-only proxy of it:
 * reads go through, writes raise, pairs() iterates the original, and the
 * metatable is hidden. rawset on a proxy is refused too (see sb_rawset).
 */
void sandbox_freeze(lua_State *L)
{
	int real = lua_gettop(L);

	lua_newtable(L);                 /* proxy */
	lua_createtable(L, 0, 4);        /* its metatable */
	lua_pushvalue(L, real);
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, frozen_newindex);
	lua_setfield(L, -2, "__newindex");
	lua_pushcfunction(L, frozen_pairs);
	lua_setfield(L, -2, "__pairs");
	lua_pushboolean(L, 0);
	lua_setfield(L, -2, "__metatable");
	lua_setmetatable(L, -2);
	lua_getfield(L, LUA_REGISTRYINDEX, FROZEN_KEY);
	lua_pushvalue(L, -2);
	lua_pushboolean(L, 1);
	lua_rawset(L, -3);
	lua_pop(L, 1);
	lua_replace(L, real);
}

static int sb_rawset(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TTABLE);
	lua_getfield(L, LUA_REGISTRYINDEX, FROZEN_KEY);
	lua_pushvalue(L, 1);
	if (lua_rawget(L, -2) != LUA_TNIL)
		return luaL_error(L, "attempt to modify a read-only table with rawset");
	lua_pop(L, 2);
	return call_original(L);
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
	wrap(L, "rep", sb_rep);
	wrap(L, "find", sb_find);
	wrap(L, "match", sb_match);
	wrap(L, "gmatch", sb_gmatch);
	wrap(L, "gsub", sb_gsub);
	wrap(L, "byte", sb_range);
	lua_pop(L, 1);
	lua_getfield(L, -1, "table");
	wrap(L, "concat", sb_concat);
	wrap(L, "sort", sb_sort);
	wrap(L, "insert", sb_insert);
	wrap(L, "remove", sb_remove);
	wrap(L, "move", sb_move);
	wrap(L, "unpack", sb_unpack);
	lua_pop(L, 1);
	lua_getfield(L, -1, "utf8");
	wrap(L, "codepoint", sb_range);
	lua_pop(L, 1);
	lua_getfield(L, -1, "rawset");
	lua_pushcclosure(L, sb_rawset, 1);
	lua_setfield(L, -2, "rawset");

	/* os: time, clock, date only; os.time() and os.date() read the cluster's clock */
	luaopen_os(L);
	lua_newtable(L);
	for (i = 0; os_keep[i]; i++) {
		lua_getfield(L, -2, os_keep[i]);
		lua_setfield(L, -2, os_keep[i]);
	}
	lua_getfield(L, -2, "time");
	lua_pushcclosure(L, sb_os_time, 1);
	lua_setfield(L, -2, "time");
	lua_getfield(L, -2, "date");
	lua_pushcclosure(L, sb_os_date, 1);
	lua_setfield(L, -2, "date");
	lua_setfield(L, -3, "os");
	lua_pop(L, 1); /* full os table */

	/* reproducible math.random */
	lua_getfield(L, -1, "math");
	lua_getfield(L, -1, "randomseed");
	lua_pushinteger(L, 42);
	lua_call(L, 1, 0);
	lua_pop(L, 1);

	/* the libraries are read-only; so is the string metatable */
	{
		static const char *const libs[] = {"string", "table", "math", "utf8",
						   "coroutine", "os", NULL};

		lua_newtable(L);
		lua_createtable(L, 0, 1);
		lua_pushliteral(L, "k");
		lua_setfield(L, -2, "__mode");
		lua_setmetatable(L, -2);
		lua_setfield(L, LUA_REGISTRYINDEX, FROZEN_KEY);
		for (i = 0; libs[i]; i++) {
			lua_getfield(L, -1, libs[i]);
			sandbox_freeze(L);
			if (strcmp(libs[i], "string") == 0) {
				lua_pushliteral(L, "");
				lua_getmetatable(L, -1);
				lua_pushvalue(L, -3);
				lua_setfield(L, -2, "__index");
				lua_pushboolean(L, 0);
				lua_setfield(L, -2, "__metatable");
				lua_pop(L, 2);
			}
			lua_setfield(L, -2, libs[i]);
		}
	}

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
	struct buf text = BUF_INIT;
	char chunkname[PATH_MAX + 2];
	int rc = -1;

	if (buf_read_file(&text, path, MAX_SOURCE, err) < 0)
		goto out;
	if (text.len > 0 && text.data[0] == LUA_SIGNATURE[0]) {
		errbuf_set(err, "%s: binary chunks are not allowed", path);
		goto out;
	}
	snprintf(chunkname, sizeof(chunkname), "@%s", path);
	if (luaL_loadbufferx(sb->L, text.data ? text.data : "", text.len, chunkname, "t") != LUA_OK) {
		errbuf_set(err, "%s", lua_tostring(sb->L, -1));
		lua_pop(sb->L, 1);
		goto out;
	}
	rc = 0;
out:
	buf_free(&text);
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
