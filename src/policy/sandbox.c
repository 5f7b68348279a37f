/*
 * sandbox: a Lua state for untrusted policy code. Owns the allocator that
 * caps the heap, the count hook that enforces the instruction budget, the
 * CPU-time deadline and the cancel flag, the restricted standard library
 * (each library function charged for its work or refused) and the
 * restricted require(). Cluster views and plans are host.c's business.
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
#define DEFAULT_CPU_MS 10000LL
#define MAX_CPU_MS (1000LL * 1000 * 1000) /* about 11 days */
#define MAX_SOURCE (16 * 1024 * 1024)
#define NS_PER_MS 1000000LL

_Static_assert(LUA_EXTRASPACE >= sizeof(void *), "the sandbox marks threads in their LUA_EXTRASPACE");

enum exhausted {
	EXHAUSTED_NONE,
	EXHAUSTED_INSTRUCTIONS,
	EXHAUSTED_MEMORY,
	EXHAUSTED_OBJECT,    /* one allocation over CAP_OBJECT */
	EXHAUSTED_CPU,
	EXHAUSTED_CANCELLED,
};

struct sandbox {
	lua_State *L;
	size_t mem_used;
	size_t mem_peak;      /* largest mem_used of the running or last call */
	size_t mem_limit;
	int64_t budget;
	int64_t used;
	int64_t cpu_limit_ms;
	const atomic_bool *cancel;
	int64_t cpu_start;    /* thread CPU time at the start of the call, ns */
	int64_t cpu_check_at; /* monotonic ns before which the deadline cannot have passed */
	int64_t last_hook;    /* monotonic ns of the last hook */
	int step;             /* instructions between two hooks, HOOK_STEP down to 1 */
	unsigned charges;     /* library charges since the clocks were last read */
	bool in_call;
	bool uncounted;       /* benchmarks: no hook during calls */
	bool raising;         /* building a limit message: the heap cap lets it through */
	enum exhausted exhausted;
	size_t refused;       /* the allocation CAP_OBJECT refused, bytes */
	int64_t now;
	char lib_dir[PATH_MAX];
	char policy_dir[PATH_MAX];
};

static const char LOADED_KEY[] = "luascale.sandbox.loaded";

/* ---- limits ---- */

/*
 * Work the count hook does not see: one instruction (string.rep, the ..
 * operator, table.sort, a pattern match, a comparison of two long
 * strings) can build megabytes, sort a million elements, backtrack 10^8
 * times or compare 64 MiB, and in a loop that would run for hours within
 * the budget. So every byte a call allocates is charged, no single
 * allocation may exceed CAP_OBJECT (which bounds what one comparison or
 * copy costs), the library functions are charged for their work before
 * they do it (see the charge table below), and the CPU-time deadline is
 * the second line of defence for what remains (== and < of long strings).
 */
#define ALLOC_BYTES_PER_INSTRUCTION 16
#define CAP_OBJECT (64LL * 1024 * 1024)
/* Once a limit is hit inside an allocation, larger allocations fail
 * until the hook raises (its located message is small). */
#define ALLOC_AFTER_EXHAUSTED (64 * 1024)
#define CHARGE_MAX (INT64_MAX / 4) /* 'used' never overflows */
/* A garbage collection walks every live object: 4 bytes of heap an
 * instruction (a million small tables cost about 15 million). */
#define GC_BYTES_PER_INSTRUCTION 4
/* load(chunk, ...): parsing costs a byte an instruction, comments too. */
#define PARSE_BYTES_PER_INSTRUCTION 1
/* os.date(fmt [, t]): every conversion is a strftime call of its own. */
#define DATE_INSTRUCTIONS_PER_BYTE 8
/* Two hooks further apart than this make the hook come sooner (down to
 * every instruction), so the deadline and the cancel flag are seen within
 * about this long even when each instruction compares long strings. */
#define HOOK_INTERVAL_NS (2 * NS_PER_MS)
/* Library charges between two readings of the clocks (a large one reads
 * them at once). */
#define CHARGES_PER_CLOCK 64
#define CHARGE_READS_CLOCK 10000

static void sandbox_hook(lua_State *L, lua_Debug *ar);

static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts) != 0)
		return 0;
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void set_exhausted(struct sandbox *sb, enum exhausted why)
{
	if (sb->exhausted == EXHAUSTED_NONE)
		sb->exhausted = why;
}

/* Starts the limits of one call: counter, clocks and hook step. */
static void begin_limits(struct sandbox *sb)
{
	int64_t now = clock_ns(CLOCK_MONOTONIC);

	sb->used = 0;
	sb->exhausted = EXHAUSTED_NONE;
	sb->refused = 0;
	sb->raising = false;
	sb->charges = 0;
	sb->step = HOOK_STEP;
	sb->cpu_start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	sb->last_hook = now;
	/* the thread cannot use more CPU time than time passes */
	sb->cpu_check_at = now + sb->cpu_limit_ms * NS_PER_MS;
	if (sb->cancel && atomic_load(sb->cancel))
		sb->exhausted = EXHAUSTED_CANCELLED;
}

/*
 * Reads the cancel flag and, when enough time has passed that the deadline
 * may have, the thread's CPU clock. From the hook ('count' instructions
 * since the last one) also adapts the step: instructions that take long
 * (comparing long strings) bring the next hook closer.
 */
static void check_clocks(struct sandbox *sb, int count)
{
	int64_t now;

	if (sb->cancel && atomic_load_explicit(sb->cancel, memory_order_relaxed)) {
		set_exhausted(sb, EXHAUSTED_CANCELLED);
		return;
	}
	now = clock_ns(CLOCK_MONOTONIC);
	if (count > 0) {
		int64_t gap = now - sb->last_hook;

		if (gap > HOOK_INTERVAL_NS) {
			double scaled = (double)count * (double)HOOK_INTERVAL_NS / (double)gap;

			sb->step = scaled < 1 ? 1 : (int)scaled;
		} else if (gap < HOOK_INTERVAL_NS / 4 && sb->step < HOOK_STEP) {
			sb->step = sb->step * 2 > HOOK_STEP ? HOOK_STEP : sb->step * 2;
		}
		sb->last_hook = now;
	}
	if (now >= sb->cpu_check_at) {
		int64_t limit = sb->cpu_limit_ms * NS_PER_MS;
		int64_t spent = clock_ns(CLOCK_THREAD_CPUTIME_ID) - sb->cpu_start;

		if (spent >= limit)
			set_exhausted(sb, EXHAUSTED_CPU);
		else
			sb->cpu_check_at = now + (limit - spent > NS_PER_MS ? limit - spent : NS_PER_MS);
	}
}

/* Adds 'work' instructions to the running call; marks the budget spent. */
static void charge(struct sandbox *sb, double work)
{
	if (!sb->in_call || !(work > 0))
		return;
	if (work > (double)(CHARGE_MAX - sb->used))
		sb->used = CHARGE_MAX;
	else
		sb->used += (int64_t)work;
	if (sb->used > sb->budget)
		set_exhausted(sb, EXHAUSTED_INSTRUCTIONS);
}

static void *sandbox_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	struct sandbox *sb = ud;
	size_t old = ptr ? osize : 0;
	bool grows = nsize > old;
	void *p;

	if (nsize == 0) {
		free(ptr);
		sb->mem_used -= old;
		return NULL;
	}
	if (grows && sb->in_call && !sb->raising) {
		bool spent = sb->exhausted != EXHAUSTED_NONE;

		if (spent && nsize - old > ALLOC_AFTER_EXHAUSTED)
			return NULL;
		if (nsize > (size_t)CAP_OBJECT) {
			sb->refused = nsize;
			set_exhausted(sb, EXHAUSTED_OBJECT);
			return NULL;
		}
		charge(sb, (double)((nsize - old) / ALLOC_BYTES_PER_INSTRUCTION));
		/* this allocation spent it: the next instruction raises (in a
		 * coroutine, the next hook of its own, or the next library call) */
		if (!spent && sb->exhausted != EXHAUSTED_NONE)
			lua_sethook(sb->L, sandbox_hook, LUA_MASKCOUNT, 1);
	}
	if (grows && sb->mem_used - old + nsize > sb->mem_limit &&
	    !(sb->raising && nsize - old <= ALLOC_AFTER_EXHAUSTED)) {
		if (sb->in_call)
			set_exhausted(sb, EXHAUSTED_MEMORY);
		return NULL;
	}
	p = realloc(ptr, nsize);
	if (!p)
		return NULL;
	sb->mem_used = sb->mem_used - old + nsize;
	if (sb->mem_used > sb->mem_peak)
		sb->mem_peak = sb->mem_used;
	return p;
}

/* What the limit that stopped the call says (without a location). */
static void limit_message(const struct sandbox *sb, char *out, size_t len)
{
	switch (sb->exhausted) {
	case EXHAUSTED_MEMORY:
		snprintf(out, len, "policy exceeded its memory limit (%d MiB)",
			 (int)(sb->mem_limit >> 20));
		break;
	case EXHAUSTED_OBJECT:
		snprintf(out, len, "policy exceeded its memory limit: one allocation of %d MiB is over the policy sandbox's limit of %d MiB per string or table",
			 (int)(sb->refused >> 20), (int)(CAP_OBJECT >> 20));
		break;
	case EXHAUSTED_CPU:
		if (sb->cpu_limit_ms % 1000 == 0)
			snprintf(out, len, "policy exceeded its CPU time limit (%llds)",
				 (long long)(sb->cpu_limit_ms / 1000));
		else
			snprintf(out, len, "policy exceeded its CPU time limit (%lldms)",
				 (long long)sb->cpu_limit_ms);
		break;
	case EXHAUSTED_CANCELLED:
		snprintf(out, len, "policy abandoned: shutting down");
		break;
	default:
		snprintf(out, len, "policy exceeded its instruction budget (%lld instructions)",
			 (long long)sb->budget);
		break;
	}
}

/*
 * A coroutine in which the hook raised is left by Lua with its hooks
 * disabled (only a pcall inside that coroutine would have restored them).
 * Such a thread is marked in its extra space, and the sandbox never runs
 * code in it again once it is dead: closing it would run its __close
 * handlers unhooked, outside every limit. New threads copy the main
 * thread's extra space, which stays NULL.
 */
static const char hooks_lost_mark;

static void mark_hooks_lost(lua_State *L, struct sandbox *sb)
{
	if (L != sb->L)
		*(const void **)lua_getextraspace(L) = &hooks_lost_mark;
}

/* Is 'co' dead by an error its hook raised? */
static bool hooks_lost(lua_State *co)
{
	int st = lua_status(co);

	return *(const void **)lua_getextraspace(co) == &hooks_lost_mark &&
	       st != LUA_OK && st != LUA_YIELD;
}

/* Raises the limit error, located at the Lua function 'level' up (0 in a
 * hook, which has no frame of its own; 1 in a C function). From then on
 * every instruction of this thread raises too. */
static int raise_exhausted(lua_State *L, struct sandbox *sb, int level)
{
	char where[PATH_MAX + 32] = "", msg[PATH_MAX + 300];
	lua_Debug ar;

	if (level == 0)
		mark_hooks_lost(L, sb);
	lua_sethook(L, sandbox_hook, LUA_MASKCOUNT, 1);
	for (; lua_getstack(L, level, &ar); level++) {
		if (lua_getinfo(L, "Sl", &ar) && ar.currentline > 0) {
			snprintf(where, sizeof(where), "%s:%d: ", ar.short_src, ar.currentline);
			break;
		}
	}
	limit_message(sb, msg + strlen(where), sizeof(msg) - strlen(where));
	memcpy(msg, where, strlen(where));
	sb->raising = true;
	lua_pushstring(L, msg);
	sb->raising = false;
	return lua_error(L);
}

static void sandbox_hook(lua_State *L, lua_Debug *ar)
{
	struct sandbox *sb = sandbox_of(L);
	int count = lua_gethookcount(L);

	(void)ar;
	if (!sb->in_call)
		return;
	sb->raising = false;
	charge(sb, count);
	if (sb->exhausted == EXHAUSTED_NONE)
		check_clocks(sb, count);
	/* From now on every instruction of this thread raises, so a pcall,
	 * a coroutine or a __close handler in the policy cannot carry on. */
	if (sb->exhausted != EXHAUSTED_NONE)
		raise_exhausted(L, sb, 0);
	if (count != sb->step)
		lua_sethook(L, sandbox_hook, LUA_MASKCOUNT, sb->step);
}

/* Charges a library call's work; raises at once when a limit is spent
 * (by this call, an earlier allocation, the clock or the cancel flag),
 * before the work is done. */
static void charge_call(lua_State *L, double work)
{
	struct sandbox *sb = sandbox_of(L);

	if (!sb->in_call)
		return;
	sb->raising = false;
	charge(sb, work);
	if (sb->exhausted == EXHAUSTED_NONE &&
	    (++sb->charges >= CHARGES_PER_CLOCK || work >= CHARGE_READS_CLOCK)) {
		sb->charges = 0;
		check_clocks(sb, 0);
	}
	if (sb->exhausted != EXHAUSTED_NONE)
		raise_exhausted(L, sb, 1);
}

void sandbox_charge(lua_State *L, double work)
{
	charge_call(L, work);
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
	charge_call(L, (double)len / PARSE_BYTES_PER_INSTRUCTION);
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

static double number_work(lua_State *L, int i);

/* Calls the original function (upvalue 1) with the same arguments. */
static int call_original(lua_State *L)
{
	int n = lua_gettop(L);

	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_call(L, n, LUA_MULTRET);
	return lua_gettop(L);
}

/* ---- coroutines ---- */

/*
 * The hook is set on the main thread before any code runs, and every
 * coroutine inherits it when created. What Lua does not keep is the hook
 * of a coroutine in which the hook raised (see hooks_lost). So a resume,
 * a close or a call of a wrapped coroutine checks the limits before it
 * runs anything, re-installs the hook on the coroutine, and raises in the
 * caller as soon as the coroutine has spent a limit: the error reaches the
 * policy's outermost frame through every level of nesting, and none of
 * them can resume, close or catch its way past it.
 */
static lua_State *check_co(lua_State *L, int i)
{
	lua_State *co = lua_tothread(L, i);
	struct sandbox *sb = sandbox_of(L);

	charge_call(L, 0);
	luaL_argexpected(L, co, i, "coroutine");
	if (lua_gethook(co) != sandbox_hook)
		lua_sethook(co, sandbox_hook, LUA_MASKCOUNT, sb->step > 0 ? sb->step : HOOK_STEP);
	return co;
}

/* After a coroutine ran: raise in the caller when it spent a limit. */
static void after_co(lua_State *L)
{
	charge_call(L, 0);
}

static int sb_co_resume(lua_State *L)
{
	int top;

	check_co(L, 1);
	top = call_original(L);
	after_co(L);
	return top;
}

/* coroutine.close(co): runs the pending __close handlers of a suspended
 * or failed coroutine, hooked, except in one whose hooks Lua lost: its
 * handlers are never run (it failed on a limit, so the call fails). */
static int sb_co_close(lua_State *L)
{
	lua_State *co = check_co(L, 1);
	int top;

	if (hooks_lost(co)) {
		lua_pushboolean(L, 0);
		lua_pushliteral(L, "coroutine stopped by the policy sandbox's limits");
		return 2;
	}
	top = call_original(L);
	after_co(L);
	return top;
}

/* The function coroutine.wrap returns: resumes its coroutine (upvalue 1);
 * on an error, closes it (unless its hooks were lost) and raises it. */
static int sb_co_wrapped(lua_State *L)
{
	lua_State *co = check_co(L, lua_upvalueindex(1));
	int n = lua_gettop(L), nres = 0, status;

	if (!lua_checkstack(co, n + 1))
		return luaL_error(L, "too many arguments to resume");
	lua_xmove(L, co, n);
	status = lua_resume(co, L, n, &nres);
	if (status == LUA_OK || status == LUA_YIELD) {
		if (!lua_checkstack(L, nres + 1)) {
			lua_pop(co, nres);
			return luaL_error(L, "too many results to resume");
		}
		lua_xmove(co, L, nres);
		after_co(L);
		return nres;
	}
	status = lua_status(co);
	if (status != LUA_OK && status != LUA_YIELD && !hooks_lost(co))
		lua_resetthread(co); /* runs its __close handlers, under the hook */
	lua_xmove(co, L, 1);
	after_co(L);
	if (lua_type(L, -1) == LUA_TSTRING) { /* like the standard wrap: add where */
		luaL_where(L, 1);
		lua_insert(L, -2);
		lua_concat(L, 2);
	}
	return lua_error(L);
}

static int sb_co_wrap(lua_State *L)
{
	lua_State *co;

	charge_call(L, 0);
	luaL_checktype(L, 1, LUA_TFUNCTION);
	co = lua_newthread(L);
	lua_pushvalue(L, 1);
	lua_xmove(L, co, 1);
	lua_pushcclosure(L, sb_co_wrapped, 1);
	return 1;
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
	double total = 0;
	struct buf line = BUF_INIT;

	luaL_checkstack(L, n, "too many values to print");
	for (i = 1; i <= n; i++) {
		size_t len;

		luaL_tolstring(L, i, &len);
		total += (double)len;
	}
	charge_call(L, total); /* written out: a byte an instruction */
	buf_puts(&line, "policy: ");
	for (i = 1; i <= n; i++) {
		size_t len;
		const char *s = lua_tolstring(L, n + i, &len);

		if (i > 1)
			buf_append(&line, "\t", 1);
		log_buf_escaped(&line, s, len); /* one line, whatever it prints */
	}
	buf_append(&line, "\n", 1);
	/* the daemon's stderr sink: a stderr nobody reads never holds the loop */
	if (!line.oom)
		log_stderr_put(line.data, line.len);
	buf_free(&line);
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
		/* either may walk the whole heap (a step can finish a cycle's
		 * atomic phase over every live object) */
		charge_call(L, (double)sandbox_of(L)->mem_used / GC_BYTES_PER_INSTRUCTION);
		lua_gc(L, strcmp(opt, "collect") == 0 ? LUA_GCCOLLECT : LUA_GCSTEP, 0);
		lua_pushinteger(L, 0);
		return 1;
	}
	return luaL_error(L, "collectgarbage(\"%s\") is not allowed in the policy sandbox", opt);
}

static int sb_os_time(lua_State *L)
{
	static const char *const fields[] = {"year", "month", "day", "hour", "min", "sec", NULL};
	struct sandbox *sb = sandbox_of(L);
	double work = 0;
	int i;

	/* the date table's fields are read as numbers, strings converted */
	if (lua_type(L, 1) == LUA_TTABLE) {
		for (i = 0; fields[i]; i++) {
			lua_getfield(L, 1, fields[i]);
			work += number_work(L, -1);
			lua_pop(L, 1);
		}
	}
	charge_call(L, work);

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
	size_t flen = 0;

	if (lua_type(L, 1) == LUA_TSTRING)
		lua_tolstring(L, 1, &flen);
	charge_call(L, (double)flen * DATE_INSTRUCTIONS_PER_BYTE + number_work(L, 2));

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


static int sb_rep(lua_State *L)
{
	size_t l, lsep = 0;
	lua_Integer n;

	charge_call(L, number_work(L, 2));
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

/*
 * Every wrapped library function holds the original as upvalue 1 and, as
 * upvalue 2, a bit set of the argument positions the original reads as
 * numbers: a string there is converted byte by byte (strtod, or a digit
 * loop), so a long one is charged for its length.
 */
#define NUM_STRING_FREE 64          /* bytes of a numeric string that cost nothing */
#define CONVERT_BYTES_PER_INSTRUCTION 4
#define ARG(i) (1u << (i))
#define ARGS_FROM(i) (~0u << (i))   /* positions i.. (up to 31) */

/* Work of reading 'i' as a number when it is a string. */
static double number_work(lua_State *L, int i)
{
	size_t len;

	if (lua_type(L, i) != LUA_TSTRING)
		return 0;
	lua_tolstring(L, i, &len);
	return len > NUM_STRING_FREE ? (double)len / CONVERT_BYTES_PER_INSTRUCTION : 0;
}

/* The conversions of the numeric arguments of the running wrapper. */
static double numbers_work(lua_State *L)
{
	unsigned nums = (unsigned)lua_tointeger(L, lua_upvalueindex(2));
	int i, n = lua_gettop(L);
	double work = 0;

	for (i = 1; i <= n && i < 32; i++)
		if (nums & ARG(i))
			work += number_work(L, i);
	return work;
}

/* An integer argument as the library reads it (an integral float or a
 * numeric string too); 'def' when absent or not one. Like the original,
 * so a float cannot skip the charge that an integer pays. */
static double arg_int(lua_State *L, int i, double def)
{
	lua_Integer v;
	int isnum = 0;

	if (lua_isnoneornil(L, i))
		return def;
	v = lua_tointegerx(L, i, &isnum);
	return isnum ? (double)v : def;
}

/* #t as the table library sees it (__len included: it is policy code,
 * counted by the hook); 0 for what is not a table. */
static double table_len(lua_State *L, int i)
{
	return lua_type(L, i) == LUA_TTABLE ? (double)luaL_len(L, i) : 0;
}

/* Checks and returns the cost of a pattern call; 'plain' for find's fourth argument. */
static double pattern_cost(lua_State *L, const char *fname, bool may_be_plain)
{
	size_t n, plen;
	const char *p;
	double work;

	if (lua_type(L, 1) != LUA_TSTRING && lua_type(L, 1) != LUA_TNUMBER)
		return 0; /* the original reports the bad argument */
	if (lua_type(L, 2) != LUA_TSTRING && lua_type(L, 2) != LUA_TNUMBER)
		return 0;
	lua_tolstring(L, 1, &n);
	p = lua_tolstring(L, 2, &plen);
	if ((may_be_plain && lua_toboolean(L, 4)) || !has_specials(p, plen)) {
		if ((double)n * (double)plen > CAP_PLAIN_WORK)
			luaL_error(L, "%s: searching %I bytes for a %I-byte string is over the policy sandbox's limit",
				   fname, (lua_Integer)n, (lua_Integer)plen);
		/* at least a scan of the subject */
		return ((double)n * (double)plen + (double)n) / PATTERN_STEPS_PER_INSTRUCTION;
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
	return work / PATTERN_STEPS_PER_INSTRUCTION;
}

/* Functions charged for their numeric arguments only. */
static int sb_numbers(lua_State *L)
{
	charge_call(L, numbers_work(L));
	return call_original(L);
}

static int sb_find(lua_State *L)
{
	charge_call(L, numbers_work(L) + pattern_cost(L, "string.find", true));
	return call_original(L);
}

static int sb_match(lua_State *L)
{
	charge_call(L, numbers_work(L) + pattern_cost(L, "string.match", false));
	return call_original(L);
}

static int sb_gmatch(lua_State *L)
{
	charge_call(L, numbers_work(L) + pattern_cost(L, "string.gmatch", false));
	return call_original(L);
}

static int sb_gsub(lua_State *L)
{
	charge_call(L, numbers_work(L) + pattern_cost(L, "string.gsub", false));
	return call_original(L);
}

static int sb_concat(lua_State *L)
{
	lua_Integer i, last, count;
	size_t lsep = 0;
	double total = 0;

	charge_call(L, numbers_work(L));
	luaL_checktype(L, 1, LUA_TTABLE);
	luaL_optlstring(L, 2, "", &lsep);
	i = luaL_optinteger(L, 3, 1);
	last = lua_isnoneornil(L, 4) ? (lua_Integer)luaL_len(L, 1) : luaL_checkinteger(L, 4);
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
	double work = 0;

	if (lua_gettop(L) == 3) {
		double n = table_len(L, 1);

		work = fabs(n + 1 - arg_int(L, 2, n + 1)) + number_work(L, 2);
	}
	charge_call(L, work);
	return call_original(L);
}

/* table.remove(t [, pos]) shifts the elements above pos down. */
static int sb_remove(lua_State *L)
{
	double n = table_len(L, 1);

	charge_call(L, fabs(n - arg_int(L, 2, n)) + numbers_work(L));
	return call_original(L);
}

/* table.move(a1, f, e, t [, a2]) copies e - f + 1 elements. */
static int sb_move(lua_State *L)
{
	double f = arg_int(L, 2, 1), e = arg_int(L, 3, 0);

	charge_call(L, (e >= f ? e - f + 1 : 0) + numbers_work(L));
	return call_original(L);
}

/* table.unpack(t [, i [, j]]) pushes j - i + 1 values (j: #t). */
static int sb_unpack(lua_State *L)
{
	double i = arg_int(L, 2, 1);
	double j = lua_isnoneornil(L, 3) ? table_len(L, 1) : arg_int(L, 3, 0);

	charge_call(L, (j >= i ? j - i + 1 : 0) + numbers_work(L));
	return call_original(L);
}

/* Bytes of s[i..j] by Lua's rules for string positions (negative from the
 * end), 'i' and 'j' defaulting to 'di' and 'dj' (dj 0: j = i). */
static double span(lua_State *L, double n, double di, double dj)
{
	double i = arg_int(L, 2, di);
	double j = arg_int(L, 3, dj == 0 ? i : dj);

	if (i < 0)
		i = i < -n ? 1 : n + i + 1;
	if (j < 0)
		j = j < -n ? 0 : n + j + 1;
	if (i < 1)
		i = 1;
	if (j > n)
		j = n;
	return j >= i ? j - i + 1 : 0;
}

static double string_len(lua_State *L, int i)
{
	size_t len = 0;

	if (lua_type(L, i) == LUA_TSTRING || lua_type(L, i) == LUA_TNUMBER)
		lua_tolstring(L, i, &len);
	return (double)len;
}

/* string.byte(s [, i [, j]]), utf8.codepoint(s [, i [, j]]): one value per
 * byte of s[i..j]. */
static int sb_range(lua_State *L)
{
	if (lua_type(L, 1) != LUA_TSTRING && lua_type(L, 1) != LUA_TNUMBER)
		return call_original(L);
	charge_call(L, span(L, string_len(L, 1), 1, 0) + numbers_work(L));
	return call_original(L);
}

/* utf8.len(s [, i [, j]]) decodes s[i..j]: a byte an instruction. */
static int sb_utf8_len(lua_State *L)
{
	if (lua_type(L, 1) != LUA_TSTRING && lua_type(L, 1) != LUA_TNUMBER)
		return call_original(L);
	charge_call(L, span(L, string_len(L, 1), 1, -1) + numbers_work(L));
	return call_original(L);
}

/* utf8.offset(s, n [, i]) walks from i, as far as the whole string (a run
 * of continuation bytes is one step): charged for the bytes it walked,
 * after the walk, which CAP_OBJECT bounds. */
static int sb_utf8_offset(lua_State *L)
{
	double len = string_len(L, 1), n = arg_int(L, 2, 0);
	double i = arg_int(L, 3, n >= 0 ? 1 : len + 1);
	int top;

	charge_call(L, numbers_work(L));
	top = call_original(L);
	if (lua_isinteger(L, 1))
		charge_call(L, fabs((double)lua_tointeger(L, 1) - i) + 1);
	else
		charge_call(L, len);
	return top;
}

/* The iterator utf8.codes returns, wrapped: each step is charged for the
 * bytes it moved over (continuation bytes included). */
static int sb_codes_step(lua_State *L)
{
	double from = arg_int(L, 2, 0), len = string_len(L, 1);
	int top;

	charge_call(L, number_work(L, 2));
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
	top = lua_gettop(L);
	if (top > 0 && lua_isinteger(L, 1))
		charge_call(L, fabs((double)lua_tointeger(L, 1) - from));
	else
		charge_call(L, len > from ? len - from : 0);
	return top;
}

static int sb_utf8_codes(lua_State *L)
{
	int top;

	charge_call(L, 0);
	top = call_original(L);
	if (top >= 1 && lua_iscfunction(L, 1)) {
		lua_pushvalue(L, 1);
		lua_pushcclosure(L, sb_codes_step, 1);
		lua_replace(L, 1);
	}
	return top;
}

/* tonumber(v [, base]) converts a string byte by byte. */
static int sb_tonumber(lua_State *L)
{
	charge_call(L, numbers_work(L) + number_work(L, 1));
	return call_original(L);
}

/* string.format(fmt, ...): every conversion of a string argument reads
 * all of it; %q escapes it byte by byte (a control character becomes a
 * decimal escape printed on its own). */
#define QUOTE_INSTRUCTIONS_PER_BYTE 16
static int sb_format(lua_State *L)
{
	size_t flen, i;
	const char *fmt = luaL_checklstring(L, 1, &flen);
	int arg = 1, n = lua_gettop(L);
	double work = (double)flen / CONVERT_BYTES_PER_INSTRUCTION;

	for (i = 0; i < flen; i++) {
		if (fmt[i] != '%')
			continue;
		if (++i < flen && fmt[i] == '%')
			continue;
		while (i < flen && strchr("-+ #0123456789.", fmt[i]))
			i++;
		if (++arg > n || i >= flen)
			break;
		if (lua_type(L, arg) == LUA_TSTRING)
			work += fmt[i] == 'q' ? string_len(L, arg) * QUOTE_INSTRUCTIONS_PER_BYTE
					      : string_len(L, arg) / CONVERT_BYTES_PER_INSTRUCTION;
	}
	charge_call(L, work);
	return call_original(L);
}

/* string.pack, string.unpack, string.packsize read their format an item a
 * byte; unpack's "z" scans the data for its terminator. */
static int sb_pack(lua_State *L)
{
	double work = string_len(L, 1) + numbers_work(L);

	if (lua_type(L, 1) == LUA_TSTRING && strchr(lua_tostring(L, 1), 'z'))
		work += string_len(L, 2);
	charge_call(L, work);
	return call_original(L);
}

/* Arithmetic on strings ("10" + 1): the string metatable's metamethods
 * convert their operands. */
static int sb_string_arith(lua_State *L)
{
	charge_call(L, number_work(L, 1) + number_work(L, 2));
	return call_original(L);
}

/* Replaces lib[name] with 'wrapper' holding the original as upvalue 1 and
 * the numeric argument positions 'nums' as upvalue 2. Stack: the library
 * table at the top. */
static void wrap_nums(lua_State *L, const char *name, lua_CFunction wrapper, unsigned nums)
{
	lua_getfield(L, -1, name);
	if (lua_isnil(L, -1)) {
		lua_pop(L, 1);
		return;
	}
	lua_pushinteger(L, (lua_Integer)nums);
	lua_pushcclosure(L, wrapper, 2);
	lua_setfield(L, -2, name);
}

static void wrap(lua_State *L, const char *name, lua_CFunction wrapper)
{
	wrap_nums(L, name, wrapper, 0);
}

/*
 * What each library function is charged, beyond the bytes it allocates
 * (ALLOC_BYTES_PER_INSTRUCTION) and the instructions of the policy code
 * it calls back (counted by the hook). Functions not listed do constant
 * work, or work the allocation charge already covers (string.sub, upper,
 * lower, reverse, char, table.pack, tostring).
 */
struct charged_fn {
	const char *lib;        /* library table; NULL for the base library */
	const char *name;
	lua_CFunction wrapper;
	unsigned nums;          /* ARG(i): argument i is read as a number */
};

static const struct charged_fn charged[] = {
	/* at most CAP_STRING bytes; a quarter instruction a piece */
	{"string", "rep", sb_rep, 0},
	/* a pattern's worst case, or the plain search */
	{"string", "find", sb_find, ARG(3)},
	{"string", "match", sb_match, ARG(3)},
	{"string", "gmatch", sb_gmatch, ARG(3)},
	{"string", "gsub", sb_gsub, ARG(4)},
	/* one value per byte of the range */
	{"string", "byte", sb_range, ARG(2) | ARG(3)},
	{"utf8", "codepoint", sb_range, ARG(2) | ARG(3)},
	/* a byte an instruction of what is decoded, walked or parsed */
	{"utf8", "len", sb_utf8_len, ARG(2) | ARG(3)},
	{"utf8", "offset", sb_utf8_offset, ARG(2) | ARG(3)},
	{"utf8", "codes", sb_utf8_codes, 0},
	{"string", "format", sb_format, 0},
	{"string", "pack", sb_pack, 0},
	{"string", "unpack", sb_pack, ARG(3)},
	{"string", "packsize", sb_pack, 0},
	{NULL, "tonumber", sb_tonumber, ARG(2)},
	/* elements moved, shifted or pushed; n log n compared; size caps */
	{"table", "concat", sb_concat, ARG(3) | ARG(4)},
	{"table", "sort", sb_sort, 0},
	{"table", "insert", sb_insert, 0},
	{"table", "remove", sb_remove, ARG(2)},
	{"table", "move", sb_move, ARG(2) | ARG(3) | ARG(4)},
	{"table", "unpack", sb_unpack, ARG(2) | ARG(3)},
	/* numbers given as long strings are converted byte by byte */
	{"string", "sub", sb_numbers, ARG(2) | ARG(3)},
	{"string", "char", sb_numbers, ARGS_FROM(1)},
	{"utf8", "char", sb_numbers, ARGS_FROM(1)},
	{NULL, "select", sb_numbers, ARG(1)},
	{"math", "abs", sb_numbers, ARGS_FROM(1)},
	{"math", "ceil", sb_numbers, ARGS_FROM(1)},
	{"math", "floor", sb_numbers, ARGS_FROM(1)},
	{"math", "fmod", sb_numbers, ARGS_FROM(1)},
	{"math", "modf", sb_numbers, ARGS_FROM(1)},
	{"math", "sqrt", sb_numbers, ARGS_FROM(1)},
	{"math", "exp", sb_numbers, ARGS_FROM(1)},
	{"math", "log", sb_numbers, ARGS_FROM(1)},
	{"math", "sin", sb_numbers, ARGS_FROM(1)},
	{"math", "cos", sb_numbers, ARGS_FROM(1)},
	{"math", "tan", sb_numbers, ARGS_FROM(1)},
	{"math", "asin", sb_numbers, ARGS_FROM(1)},
	{"math", "acos", sb_numbers, ARGS_FROM(1)},
	{"math", "atan", sb_numbers, ARGS_FROM(1)},
	{"math", "max", sb_numbers, ARGS_FROM(1)},
	{"math", "min", sb_numbers, ARGS_FROM(1)},
	{"math", "tointeger", sb_numbers, ARGS_FROM(1)},
	{"math", "ult", sb_numbers, ARGS_FROM(1)},
	{"math", "random", sb_numbers, ARGS_FROM(1)},
	{"math", "randomseed", sb_numbers, ARGS_FROM(1)},
};

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
	static const char *const string_arith[] = {"__add", "__sub", "__mul", "__mod", "__pow",
						   "__div", "__idiv", "__unm", NULL};
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
	for (i = 0; i < (int)(sizeof(charged) / sizeof(charged[0])); i++) {
		if (charged[i].lib)
			lua_getfield(L, -1, charged[i].lib);
		else
			lua_pushvalue(L, -1);
		wrap_nums(L, charged[i].name, charged[i].wrapper, charged[i].nums);
		lua_pop(L, 1);
	}
	lua_getfield(L, -1, "coroutine");
	wrap(L, "resume", sb_co_resume);
	wrap(L, "close", sb_co_close);
	lua_pushcfunction(L, sb_co_wrap);
	lua_setfield(L, -2, "wrap");
	lua_pop(L, 1);
	/* the string metatable's arithmetic ("10" + 1) converts strings */
	lua_pushliteral(L, "");
	lua_getmetatable(L, -1);
	for (i = 0; string_arith[i]; i++)
		wrap(L, string_arith[i], sb_string_arith);
	lua_pop(L, 2);
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
	sb->cpu_limit_ms = lim && lim->cpu_ms > 0 ? lim->cpu_ms : DEFAULT_CPU_MS;
	if (sb->cpu_limit_ms > MAX_CPU_MS) /* nanoseconds must not overflow */
		sb->cpu_limit_ms = MAX_CPU_MS;
	sb->cancel = lim ? lim->cancel : NULL;
	sb->uncounted = lim && lim->uncounted;
	sb->step = HOOK_STEP;
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
	 * inherits it, so none can run outside the budget. Coroutines copy
	 * the main thread's extra space: no mark (see hooks_lost). */
	*(const void **)lua_getextraspace(sb->L) = NULL;
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

int64_t sandbox_budget(const struct sandbox *sb)
{
	return sb->budget;
}

int64_t sandbox_instructions(const struct sandbox *sb)
{
	return sb->used;
}

size_t sandbox_memory(const struct sandbox *sb)
{
	return sb->mem_used;
}

size_t sandbox_memory_peak(const struct sandbox *sb)
{
	return sb->mem_peak;
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
	begin_limits(sb);
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
	char limit[200];

	sb->in_call = false;
	sb->raising = false;
	reset_hooks(L);
	if (status == LUA_ERRMEM && sb->exhausted == EXHAUSTED_NONE)
		sb->exhausted = EXHAUSTED_MEMORY; /* the cap, or the system */
	if (sb->exhausted != EXHAUSTED_NONE) {
		/* Over a limit: the call failed, whatever the policy did with the
		 * error (caught it, replaced it, failed in its handler). Keep a
		 * located message we raised ourselves; otherwise say it plainly
		 * (a failed allocation has no location: the caller names the file). */
		const char *msg = status == LUA_OK || status == LUA_ERRMEM ? NULL : lua_tostring(L, -1);

		limit_message(sb, limit, sizeof(limit));
		if (!msg || !strstr(msg, limit)) {
			lua_settop(L, base - 1);
			lua_pushstring(L, limit);
		}
		status = LUA_ERRRUN;
	}
	if (status != LUA_OK) {
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
	begin_limits(sb);
	sb->in_call = true;
	sb->mem_peak = sb->mem_used;
	if (sb->uncounted)
		lua_sethook(L, NULL, 0, 0); /* finish_call() sets it again */
	if (sb->exhausted != EXHAUSTED_NONE) /* cancelled before it started */
		status = LUA_OK;
	else
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
