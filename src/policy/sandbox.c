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

#define LOC_MAX (PATH_MAX + 24) /* "file:line" */

/* How an error was raised, as seen on the stack where it was raised. */
enum raise_kind {
	RAISED_BY_LUA,     /* a runtime error of Lua itself (attempt to index ...) */
	RAISED_BY_CFUNC,   /* a library function or a cluster helper */
	RAISED_BY_ERROR,   /* the policy's error(value [, level]) */
	RAISED_BY_ASSERT,  /* the policy's assert(v [, message]) */
	RAISED_BY_LIBRARY, /* error() in luascale's own Lua library: its diagnostic */
};

/*
 * The policy's failure, recorded by the message handler while the stack
 * is still there: the location comes from the stack, never from the
 * error's text, which is only shown as the message. 'type' and 'ptr'
 * identify the error value the record is about.
 */
struct raise_rec {
	bool valid;
	int type;
	const void *ptr;
	enum raise_kind kind;
	bool has_message;        /* assert: a message was given */
	size_t strip;            /* leading bytes of a string value that are Lua's own "file:line: " */
	size_t value_len;        /* length of a string value */
	char where[LOC_MAX];     /* where it was raised */
	char from[LOC_MAX];      /* the policy file's line that led there, when elsewhere */
	char resumed[LOC_MAX];   /* where the failed coroutine was resumed */
	char fname[96];          /* the C function that raised it */
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
	double refused_work;  /* the charge that spent the budget, instructions */
	int64_t refused_left; /* what was left of the budget before it */
	int64_t now;
	char lib_dir[PATH_MAX];
	char policy_dir[PATH_MAX];
	char main_src[PATH_MAX + 2]; /* "@file" of the function sandbox_call runs, or "" */
	struct raise_rec rec;        /* where the error of the running call was raised */
	struct raise_rec co_rec;     /* the same for the last coroutine that failed */
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
/* A charge this large that spends the budget is named in the message. */
#define CHARGE_NAMED 1000

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
	sb->refused_work = 0;
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
	int64_t left;

	if (!sb->in_call || !(work > 0))
		return;
	left = sb->budget - sb->used;
	if (work > (double)(CHARGE_MAX - sb->used))
		sb->used = CHARGE_MAX;
	else
		sb->used += (int64_t)work;
	if (sb->used > sb->budget && sb->exhausted == EXHAUSTED_NONE) {
		set_exhausted(sb, EXHAUSTED_INSTRUCTIONS);
		if (work >= CHARGE_NAMED) { /* one call's work, not the last of many */
			sb->refused_work = work;
			sb->refused_left = left > 0 ? left : 0;
		}
	}
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
		if (sb->refused_work > 0)
			snprintf(out, len, "policy exceeded its instruction budget (%lld instructions): "
				 "this call needs about %.0f of them, %lld were left",
				 (long long)sb->budget, sb->refused_work, (long long)sb->refused_left);
		else
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

static void cfunc_name(lua_State *L, lua_Debug *ar, char *out, size_t len);
static int lua_frame_where(lua_State *T, int level, char *out, size_t len);

/* Raises the limit error, located at the Lua function 'level' up (0 in a
 * hook, which has no frame of its own; 1 in a C function). From then on
 * every instruction of this thread raises too. */
static int raise_exhausted(lua_State *L, struct sandbox *sb, int level)
{
	char where[LOC_MAX] = "", fname[96] = "", limit[300], msg[LOC_MAX + 400];
	lua_Debug ar;

	if (level == 0)
		mark_hooks_lost(L, sb);
	lua_sethook(L, sandbox_hook, LUA_MASKCOUNT, 1);
	if (level == 1 && lua_getstack(L, 0, &ar) && lua_getinfo(L, "nf", &ar)) {
		cfunc_name(L, &ar, fname, sizeof(fname)); /* the library call that stopped */
		lua_pop(L, 1);
	}
	lua_frame_where(L, level, where, sizeof(where));
	limit_message(sb, limit, sizeof(limit));
	snprintf(msg, sizeof(msg), "%s%s%s%s%s", where, where[0] ? ": " : "",
		 fname, fname[0] ? ": " : "", limit);
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
	/* the helper's work comes after this: the next instruction (once it
	 * returned) reads the clocks again */
	if (work >= CHARGE_READS_CLOCK && sandbox_of(L)->in_call)
		lua_sethook(L, sandbox_hook, LUA_MASKCOUNT, 1);
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
	/* "@file" and "=text" would print as given: a loaded chunk could
	 * claim to be another file in its errors. Always a [string "..."]. */
	while (*name == '@' || *name == '=')
		name++;
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
static int call_original(lua_State *L);

/*
 * error(value [, level]) as Lua's, with the stack laid out for the message
 * handler (see record_raise): 1 the value as the policy gave it, 2 the
 * level, 3 what is raised (a string located at 'level', as Lua does).
 */
static int sb_error(lua_State *L)
{
	int level = (int)luaL_optinteger(L, 2, 1);

	lua_settop(L, 1);
	lua_pushinteger(L, level);
	if (lua_type(L, 1) == LUA_TSTRING && level > 0) {
		luaL_where(L, level);
		lua_pushvalue(L, 1);
		lua_concat(L, 2);
	} else {
		lua_pushvalue(L, 1);
	}
	return lua_error(L);
}

/* assert(v [, message, ...]) as Lua's; on failure the stack holds 1 the
 * message, 2 whether one was given, 3 what is raised. */
static int sb_assert(lua_State *L)
{
	bool given;

	if (lua_toboolean(L, 1))
		return lua_gettop(L);
	luaL_checkany(L, 1);
	lua_remove(L, 1);
	given = !lua_isnone(L, 1);
	lua_pushliteral(L, "assertion failed!");
	lua_settop(L, 1);
	lua_pushboolean(L, given);
	if (lua_type(L, 1) == LUA_TSTRING) {
		luaL_where(L, 1);
		lua_pushvalue(L, 1);
		lua_concat(L, 2);
	} else {
		lua_pushvalue(L, 1);
	}
	return lua_error(L);
}

/* rawequal(a, b) compares two long strings of one length byte by byte. */
#define COMPARE_BYTES_PER_INSTRUCTION 128
static int sb_rawequal(lua_State *L)
{
	if (lua_type(L, 1) == LUA_TSTRING && lua_type(L, 2) == LUA_TSTRING &&
	    lua_rawlen(L, 1) == lua_rawlen(L, 2))
		charge_call(L, (double)lua_rawlen(L, 1) / COMPARE_BYTES_PER_INSTRUCTION);
	return call_original(L);
}

/* string.upper, lower, reverse: a byte an instruction, as they convert it. */
static int sb_bytewise(lua_State *L)
{
	size_t len = 0;

	if (lua_type(L, 1) == LUA_TSTRING)
		lua_tolstring(L, 1, &len);
	charge_call(L, (double)len);
	return call_original(L);
}

/* After a library call returned: reads the clocks, and raises at the
 * calling line when the call ran past the deadline (or spent a limit). */
static void after_call(lua_State *L)
{
	struct sandbox *sb = sandbox_of(L);

	if (!sb->in_call)
		return;
	if (sb->exhausted == EXHAUSTED_NONE)
		check_clocks(sb, 0);
	if (sb->exhausted != EXHAUSTED_NONE)
		raise_exhausted(L, sb, 1);
}

/*
 * Runs the original library function (upvalue 1, a light C function,
 * checked when wrapped) in this very frame, with the same arguments: its
 * errors then name it as the policy called it ("bad argument #2 to
 * 'find'") and are located at the policy's line. Then the deadline is
 * checked, so a call that overran fails at once, with its line.
 */
static int call_original(lua_State *L)
{
	lua_CFunction f = lua_tocfunction(L, lua_upvalueindex(1));
	int n = f(L);

	after_call(L);
	return n;
}

/* Is the value at 'i' a light C function (one without upvalues), which
 * call_original can run in the wrapper's frame? */
static bool is_light(lua_State *L, int i)
{
	if (!lua_tocfunction(L, i))
		return false;
	if (lua_getupvalue(L, i, 1)) {
		lua_pop(L, 1);
		return false;
	}
	return true;
}

static void record_raise(struct sandbox *sb, lua_State *T, int level, int value,
			 struct raise_rec *r);

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
	/* its stack is still there: where the error was raised */
	record_raise(sandbox_of(L), co, 0, lua_gettop(co), &sandbox_of(L)->co_rec);
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
	return call_original(L);
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
	return call_original(L);
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
	return call_original(L);
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
	{
		struct stat st;

		/* parsing: a byte an instruction, like load() */
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
			charge_call(L, (double)st.st_size / PARSE_BYTES_PER_INSTRUCTION);
	}
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

/*
 * The work of a library call is counted in steps of about a nanosecond of
 * this machine's time at worst (measured on hostile inputs: a pattern's
 * set scanned at every position, backtracking, a sort of long strings).
 * A call whose worst case is over CAP_CALL_STEPS is refused before it
 * runs, so no single call outlasts the deadline by more than that (a
 * quarter to half a second); below it, STEPS_PER_INSTRUCTION steps are
 * charged as one instruction, about what an instruction of Lua costs.
 */
#define CAP_STRING (64LL * 1024 * 1024) /* bytes built by one string.rep / table.concat */
#define CAP_CALL_STEPS 4e8
#define STEPS_PER_INSTRUCTION 10
#define CAP_CONCAT (1 << 24)            /* elements joined by one table.concat */
/* a plain find: a memchr and a memcmp call per position, then 32 bytes a step */
#define PLAIN_STEPS_PER_POSITION 5
#define PLAIN_BYTES_PER_STEP 32
/* table.sort: steps per comparison, and per byte of the longest string compared */
#define SORT_STEPS_PER_COMPARISON 30
#define SORT_BYTES_PER_STEP 16
/* gsub: a replacement string is scanned at every match, each %1 is a value added */
#define REPL_STEPS_PER_CAPTURE 16

/* Refuses a call of library function 'fname' whose worst case is 'steps'. */
static int refuse_call(lua_State *L, const char *fname, const char *what, double steps,
		       const char *hint)
{
	char msg[600];

	snprintf(msg, sizeof(msg), "%s: %s could take about %.1e steps, over the policy sandbox's limit of %.0e for one call%s",
		 fname, what, steps, CAP_CALL_STEPS, hint);
	return luaL_error(L, "%s", msg);
}

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
	/* the bytes are charged as allocated; each piece is a copy of its own
	 * (an empty one too: rep("", 2^60) loops that often) */
	charge_call(L, (double)n / 4);
	return call_original(L);
}

/* Does the pattern have magic characters (else find searches it plainly)? */
static bool has_specials(const char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (strchr("^$*+?.([%-", p[i]) && p[i] != '\0')
			return true;
	return false;
}

/*
 * Worst-case work of Lua's pattern matcher, in steps of about a
 * nanosecond. A pattern is read as a list of items; what one attempt of
 * the items from i on can cost is a state of three numbers: F, the most a
 * failing attempt costs; K + L * m, the most a successful one costs, m
 * being the length it matches (gsub and gmatch add that up over matches
 * that do not overlap); and two flags: whether it can fail at all, and
 * whether it matches the empty string at the subject's end (then '.*' and
 * '.-' before it cannot fail). Each item maps the state after it to the
 * state before it, linearly for given flags, so the items are folded from
 * the left as four linear maps, one per pair of flags after them.
 */
#define PAT_INF 1e300
#define PAT_CALL 8   /* a recursive call of the matcher */
#define PAT_VISIT 4  /* reaching an item */
#define PAT_START 10 /* one more start position */
#define PAT_FOUND 20 /* a match of gmatch or gsub: captures pushed, result added */

enum { PF, PK, PL }; /* the state's numbers */

struct pat_map {
	double k[3], m[3][3]; /* out = k + m * in */
	bool can_fail, empty_at_end;
};

enum pat_kind { PAT_CAPTURE, PAT_END, PAT_FIXED, PAT_CLASS, PAT_BROKEN };

struct pat_item {
	enum pat_kind kind;
	double visit; /* steps to reach the item (and test its class once) */
	double fail;  /* PAT_FIXED: the most a failed test scans */
	double span;  /* PAT_FIXED: steps per byte it matches */
	double test;  /* PAT_CLASS: one more test of the class */
	bool any;     /* PAT_CLASS: the class is '.' */
	char suffix;  /* PAT_CLASS: '*', '+', '-', '?' or 0 */
};

static double pat_sat(double v)
{
	return v < PAT_INF ? v : PAT_INF; /* NaN too */
}

/* out = a after b (b maps the state after the item, a what is before it) */
static void pat_compose(struct pat_map *out, const struct pat_map *a, const struct pat_map *b)
{
	int i, j, x;

	for (i = 0; i < 3; i++) {
		double k = a->k[i];

		for (x = 0; x < 3; x++)
			k += a->m[i][x] * b->k[x];
		out->k[i] = pat_sat(k);
		for (j = 0; j < 3; j++) {
			double m = 0;

			for (x = 0; x < 3; x++)
				m += a->m[i][x] * b->m[x][j];
			out->m[i][j] = pat_sat(m);
		}
	}
	out->can_fail = a->can_fail;
	out->empty_at_end = a->empty_at_end;
}

/* What 'it' makes of the state after it, whose flags are (cf, ne), on a
 * subject of n bytes. */
static void pat_item_map(const struct pat_item *it, bool cf, bool ne, double n, struct pat_map *o)
{
	double nn = n + 1, fc = cf ? 1 : 0; /* what cannot fail costs no failures */

	memset(o, 0, sizeof(*o));
	o->m[PK][PK] = 1;
	o->m[PL][PL] = 1;
	o->can_fail = true;
	switch (it->kind) {
	case PAT_CAPTURE:
		o->k[PF] = o->k[PK] = PAT_CALL + 2;
		o->m[PF][PF] = 1;
		o->can_fail = cf;
		o->empty_at_end = ne;
		return;
	case PAT_END:
	case PAT_BROKEN: /* the end of the pattern, or where the matcher raises */
		memset(o->m, 0, sizeof(o->m));
		o->k[PF] = o->k[PK] = PAT_VISIT;
		o->empty_at_end = it->kind == PAT_END;
		return;
	case PAT_FIXED:
		o->k[PF] = pat_sat(it->visit + it->fail);
		o->k[PK] = it->visit;
		o->k[PL] = it->span;
		o->m[PF][PF] = fc;
		return;
	case PAT_CLASS:
		break;
	}
	switch (it->suffix) {
	case '?': /* the rest after the item, else the rest without it */
		o->k[PF] = o->k[PK] = it->visit + PAT_CALL;
		o->m[PF][PF] = 2 * fc;
		o->m[PK][PF] = fc;
		o->can_fail = cf;
		o->empty_at_end = ne;
		return;
	case '*':
	case '+': /* tests as far as it goes, then the rest from there back */
		if (!cf || (it->any && ne)) { /* the rest takes the first try */
			o->k[PF] = it->visit;
			o->k[PK] = it->visit + it->test + PAT_CALL;
			o->k[PL] = it->test;
			o->can_fail = it->suffix == '+';
		} else {
			o->k[PF] = pat_sat(it->visit + nn * (it->test + PAT_CALL));
			o->k[PK] = o->k[PF];
			o->m[PF][PF] = nn;
			o->m[PK][PF] = n;
		}
		o->empty_at_end = it->suffix == '*' && ne;
		return;
	case '-': /* the rest, else one more test, as far as it goes */
		o->k[PF] = o->k[PK] = it->visit + PAT_CALL;
		if (cf) {
			o->k[PF] = pat_sat(o->k[PF] + nn * (PAT_CALL + it->test));
			o->m[PF][PF] = nn;
			/* each byte matched may have cost a failed try of the rest */
			o->k[PL] = PAT_CALL + it->test;
			o->m[PL][PF] = 1;
		}
		o->can_fail = cf && !(it->any && ne);
		o->empty_at_end = ne;
		return;
	default:
		o->k[PF] = o->k[PK] = it->visit;
		o->m[PF][PF] = fc;
		return;
	}
}

/* Length of the class at p[0..len) as Lua's matcher reads it; 0 when malformed. */
static size_t pat_class_len(const char *p, size_t len)
{
	size_t i;

	if (p[0] == '%')
		return len >= 2 ? 2 : 0;
	if (p[0] != '[')
		return 1;
	i = 1;
	if (i < len && p[i] == '^')
		i++;
	do { /* the first character is in the set, even a ']' */
		if (i >= len)
			return 0;
		if (p[i++] == '%' && i < len)
			i++;
	} while (i >= len || p[i] != ']');
	return i + 1;
}

/* Reads the item at p[0..len) (len > 0) into 'it'; returns its length. */
static size_t pat_read_item(const char *p, size_t len, double n, struct pat_item *it)
{
	size_t cl;

	memset(it, 0, sizeof(*it));
	if (p[0] == '(' || p[0] == ')') {
		it->kind = PAT_CAPTURE;
		return p[0] == '(' && len > 1 && p[1] == ')' ? 2 : 1;
	}
	if (p[0] == '$' && len == 1) {
		it->kind = PAT_END;
		return 1;
	}
	if (p[0] == '%' && len > 1 && p[1] == 'b') {
		if (len < 4) {
			it->kind = PAT_BROKEN;
			return len;
		}
		it->kind = PAT_FIXED; /* scans on to the balancing character */
		it->visit = PAT_VISIT;
		it->fail = n;
		it->span = 1;
		return 4;
	}
	if (p[0] == '%' && len > 1 && p[1] == 'f') {
		cl = len > 2 && p[2] == '[' ? pat_class_len(p + 2, len - 2) : 0;
		if (cl == 0) {
			it->kind = PAT_BROKEN;
			return len;
		}
		it->kind = PAT_FIXED; /* the set's end, then two tests */
		it->visit = PAT_VISIT + 5 * (double)cl;
		return 2 + cl;
	}
	if (p[0] == '%' && len > 1 && p[1] >= '0' && p[1] <= '9') {
		it->kind = PAT_FIXED; /* compares a capture */
		it->visit = PAT_VISIT;
		it->fail = n / 8;
		it->span = 1.0 / 8;
		return 2;
	}
	cl = pat_class_len(p, len);
	if (cl == 0) {
		it->kind = PAT_BROKEN;
		return len;
	}
	it->kind = PAT_CLASS;
	it->any = p[0] == '.';
	/* a set is read byte by byte at every test, and once more to find its end */
	it->test = p[0] == '[' ? 3 * (double)cl : 1;
	it->visit = PAT_VISIT + it->test + (p[0] == '[' ? (double)cl : 0);
	if (cl < len && strchr("*+-?", p[cl])) {
		it->suffix = p[cl];
		return cl + 1;
	}
	return cl;
}

enum pat_call { PAT_FIND, PAT_GMATCH, PAT_GSUB };

/* Worst-case steps of one call matching p[0..len) against n bytes.
 * 'repl': bytes of gsub's replacement string. */
static double pattern_steps(const char *p, size_t len, double n, enum pat_call call, double repl)
{
	struct pat_map acc[4], next[4], im;
	bool anchored = call != PAT_GMATCH && len > 0 && p[0] == '^';
	size_t i = anchored ? 1 : 0;
	double f, k, l, attempt, total;
	int c;

	for (c = 0; c < 4; c++) { /* nothing read yet: the identity */
		memset(&acc[c], 0, sizeof(acc[c]));
		acc[c].m[PF][PF] = acc[c].m[PK][PK] = acc[c].m[PL][PL] = 1;
		acc[c].can_fail = c & 1;
		acc[c].empty_at_end = c & 2;
	}
	while (i < len) {
		struct pat_item it;

		i += pat_read_item(p + i, len - i, n, &it);
		for (c = 0; c < 4; c++) {
			pat_item_map(&it, c & 1, c & 2, n, &im);
			pat_compose(&next[c], &acc[(im.can_fail ? 1 : 0) | (im.empty_at_end ? 2 : 0)], &im);
		}
		memcpy(acc, next, sizeof(acc));
	}
	/* after the last item: success in a step, no failure */
	f = acc[2].can_fail ? pat_sat(acc[2].k[PF] + acc[2].m[PF][PK]) : 0;
	k = pat_sat(acc[2].k[PK] + acc[2].m[PK][PK]);
	l = pat_sat(acc[2].k[PL] + acc[2].m[PL][PK]);
	if (call == PAT_FIND) {
		total = PAT_START + k + l * n;
		if (f > 0)
			total += (anchored ? 1 : n + 1) * (PAT_START + f);
		return pat_sat(total);
	}
	/* gsub, gmatch: every start position once, and once more after an
	 * empty match; the matches do not overlap */
	attempt = PAT_START + PAT_FOUND + repl + (f > k ? f : k);
	return pat_sat((anchored ? 1 : 2 * (n + 1)) * attempt + l * n);
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
static double numbers_work_of(lua_State *L, unsigned nums)
{
	int i, n = lua_gettop(L);
	double work = 0;

	for (i = 1; i <= n && i < 32; i++)
		if (nums & ARG(i))
			work += number_work(L, i);
	return work;
}

static double numbers_work(lua_State *L)
{
	return numbers_work_of(L, (unsigned)lua_tointeger(L, lua_upvalueindex(2)));
}

/*
 * The wrapper of a library function that has upvalues of its own
 * (math.random's state): it holds them first, at the same places, then
 * the original and the numeric argument positions, so the original runs
 * in the wrapper's frame too. The last two are found by looking.
 */
static int sb_numbers_upvalues(lua_State *L)
{
	int last = 2;
	lua_CFunction f;
	int n;

	while (lua_type(L, lua_upvalueindex(last + 1)) != LUA_TNONE)
		last++;
	charge_call(L, numbers_work_of(L, (unsigned)lua_tointeger(L, lua_upvalueindex(last))));
	f = lua_tocfunction(L, lua_upvalueindex(last - 1));
	n = f(L);
	after_call(L);
	return n;
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

/* Where a pattern call starts in its subject of 'len' bytes (argument
 * 'arg', Lua's rule for string positions): the bytes from there on, or -1
 * when it starts past the end (the call finds nothing at once). */
static double subject_from(lua_State *L, int arg, double len)
{
	double init = arg ? arg_int(L, arg, 1) : 1;

	if (init < 0)
		init = init < -len ? 1 : len + init + 1;
	if (init < 1)
		init = 1;
	return init > len + 1 ? -1 : len - init + 1;
}

/*
 * Checks a pattern call before it runs and returns its charge in
 * instructions: the worst case of the matcher (pattern_steps) on the
 * subject from its start position, or of the plain search; raises, naming
 * 'fname', when that is over CAP_CALL_STEPS.
 */
static double pattern_cost(lua_State *L, const char *fname, enum pat_call call, bool may_be_plain)
{
	size_t len, plen, rlen = 0;
	const char *p;
	double n, steps, repl = 0;

	if (lua_type(L, 1) != LUA_TSTRING && lua_type(L, 1) != LUA_TNUMBER)
		return 0; /* the original reports the bad argument */
	if (lua_type(L, 2) != LUA_TSTRING && lua_type(L, 2) != LUA_TNUMBER)
		return 0;
	lua_tolstring(L, 1, &len);
	p = lua_tolstring(L, 2, &plen);
	n = subject_from(L, call == PAT_GSUB ? 0 : 3, (double)len);
	if (n < 0)
		return 0;
	if (may_be_plain && (lua_toboolean(L, 4) || !has_specials(p, plen))) {
		steps = (n + 1) * PLAIN_STEPS_PER_POSITION + n * (double)plen / PLAIN_BYTES_PER_STEP;
		if (steps > CAP_CALL_STEPS) {
			char what[100];

			snprintf(what, sizeof(what), "searching %zu bytes for a %zu-byte string", len, plen);
			return refuse_call(L, fname, what, steps, "");
		}
		return steps / STEPS_PER_INSTRUCTION;
	}
	if (call == PAT_GSUB && lua_type(L, 3) == LUA_TSTRING) {
		const char *r = lua_tolstring(L, 3, &rlen);
		size_t i;

		repl = (double)rlen;
		for (i = 0; i < rlen; i++)
			if (r[i] == '%')
				repl += REPL_STEPS_PER_CAPTURE;
	}
	steps = pattern_steps(p, plen, n, call, repl);
	if (steps > CAP_CALL_STEPS) {
		char msg[400];

		snprintf(msg, sizeof(msg), "pattern \"%.60s%s\" on a %.0f-byte string",
			 p, plen > 60 ? "..." : "", n);
		return refuse_call(L, fname, msg, steps, " (anchor it with ^, or shorten the string)");
	}
	return steps / STEPS_PER_INSTRUCTION;
}

/* Functions charged for their numeric arguments only. */
static int sb_numbers(lua_State *L)
{
	charge_call(L, numbers_work(L));
	return call_original(L);
}

static int sb_find(lua_State *L)
{
	charge_call(L, numbers_work(L) + pattern_cost(L, "string.find", PAT_FIND, true));
	return call_original(L);
}

static int sb_match(lua_State *L)
{
	charge_call(L, numbers_work(L) + pattern_cost(L, "string.match", PAT_FIND, false));
	return call_original(L);
}

/* The iterator is charged here for every match it will find. */
static int sb_gmatch(lua_State *L)
{
	charge_call(L, numbers_work(L) + pattern_cost(L, "string.gmatch", PAT_GMATCH, false));
	return call_original(L);
}

static int sb_gsub(lua_State *L)
{
	charge_call(L, numbers_work(L) + pattern_cost(L, "string.gsub", PAT_GSUB, false));
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
	if ((double)last - (double)i + 1 > (double)CAP_CONCAT || count < 0)
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

/* The longest string among t[1..n] (which the caller bounds), as the
 * default comparison reads them; CAP_OBJECT when an element is not in the
 * table itself (its __index gives it). */
static double longest_element(lua_State *L, lua_Integer n)
{
	double longest = 0;
	bool has_index = luaL_getmetafield(L, 1, "__index") != LUA_TNIL;
	lua_Integer i;

	if (has_index)
		lua_pop(L, 1);
	for (i = 1; i <= n; i++) {
		int t = lua_rawgeti(L, 1, i);

		if (t == LUA_TSTRING && (double)lua_rawlen(L, -1) > longest)
			longest = (double)lua_rawlen(L, -1);
		else if (t == LUA_TNIL && has_index)
			longest = (double)CAP_OBJECT;
		lua_pop(L, 1);
	}
	return longest;
}

/* table.sort: n log2 n comparisons; without a comparator, strings are
 * compared byte by byte (a Lua comparator's own instructions count too). */
static int sb_sort(lua_State *L)
{
	lua_Integer n;
	double cmp, steps;

	luaL_checktype(L, 1, LUA_TTABLE);
	n = luaL_len(L, 1);
	if (n > 1) {
		cmp = (double)n * log2((double)n);
		steps = cmp * SORT_STEPS_PER_COMPARISON;
		if (steps <= CAP_CALL_STEPS && lua_isnoneornil(L, 2)) {
			charge_call(L, (double)n / 4); /* the scan below */
			steps += cmp * longest_element(L, n) / SORT_BYTES_PER_STEP;
		}
		if (steps > CAP_CALL_STEPS) {
			char what[100];

			snprintf(what, sizeof(what), "sorting %lld elements", (long long)n);
			return refuse_call(L, "table.sort", what, steps, "");
		}
		charge_call(L, steps / STEPS_PER_INSTRUCTION);
	}
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
	top = call_original(L);
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
	if (top >= 1 && is_light(L, 1)) {
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
	if (!is_light(L, -1)) {
		int n = 0;

		if (!lua_iscfunction(L, -1) || wrapper != sb_numbers)
			luaL_error(L, "cannot wrap %s: not a light C function", name);
		while (lua_getupvalue(L, -1 - n, n + 1)) /* its upvalues, in order */
			n++;
		lua_pushvalue(L, -1 - n);
		lua_pushinteger(L, (lua_Integer)nums);
		lua_pushcclosure(L, sb_numbers_upvalues, n + 2);
		lua_setfield(L, -3, name);
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
 * work, or work the allocation charge already covers (string.sub, char,
 * table.pack, tostring), or have a wrapper of their own below.
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
	/* a byte an instruction converted; long strings compared */
	{"string", "upper", sb_bytewise, 0},
	{"string", "lower", sb_bytewise, 0},
	{"string", "reverse", sb_bytewise, 0},
	{NULL, "rawequal", sb_rawequal, 0},
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

static const char NAMES_KEY[] = "luascale.sandbox.names"; /* function -> "string.find" */

/* Records the names of the C functions of table 'lib' as prefix..key. */
static void name_library(lua_State *L, int names, int lib, const char *prefix)
{
	lua_pushnil(L);
	while (lua_next(L, lib)) {
		if (lua_type(L, -2) == LUA_TSTRING && lua_iscfunction(L, -1)) {
			lua_pushvalue(L, -1);
			lua_pushfstring(L, "%s%s", prefix, lua_tostring(L, -3));
			lua_rawset(L, names);
		}
		lua_pop(L, 1);
	}
}

/* The names of the library functions a policy sees, by function, for the
 * messages of the errors they raise. 'g': the globals' index. */
static void name_functions(lua_State *L, int g)
{
	static const char *const libs[] = {"string", "table", "math", "utf8", "coroutine", "os", NULL};
	int names, i;

	lua_newtable(L);
	names = lua_gettop(L);
	name_library(L, names, g, "");
	for (i = 0; libs[i]; i++) {
		char prefix[32];

		snprintf(prefix, sizeof(prefix), "%s.", libs[i]);
		lua_getfield(L, g, libs[i]);
		name_library(L, names, lua_gettop(L), prefix);
		lua_pop(L, 1);
	}
	lua_setfield(L, LUA_REGISTRYINDEX, NAMES_KEY);
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
	lua_pushcfunction(L, sb_error);
	lua_setfield(L, -2, "error");
	lua_pushcfunction(L, sb_assert);
	lua_setfield(L, -2, "assert");
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

	name_functions(L, lua_gettop(L));

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

/* ---- where a failure was raised ---- */

/* "file:line" of a frame read with "Sl": the file's full name, not Lua's
 * shortened one; a loaded string as Lua shows it ([string "..."]). */
static void frame_where(const lua_Debug *ar, char *out, size_t len)
{
	snprintf(out, len, "%s:%d", ar->source[0] == '@' ? ar->source + 1 : ar->short_src,
		 ar->currentline);
}

/* "file:line" of the first frame from 'level' up that runs Lua code with
 * a line; returns that level, or -1 ('out' then empty). */
static int lua_frame_where(lua_State *T, int level, char *out, size_t len)
{
	lua_Debug ar;

	out[0] = '\0';
	for (; lua_getstack(T, level, &ar); level++) {
		if (lua_getinfo(T, "Sl", &ar) && ar.currentline > 0) {
			frame_where(&ar, out, len);
			return level;
		}
	}
	return -1;
}

/* The name of the C function of frame 'ar' (read with "nf": the function
 * is at the top of the stack): its library name ("string.find"), else
 * the name it was called by; "" for a metamethod or an unnamed call. */
static void cfunc_name(lua_State *L, lua_Debug *ar, char *out, size_t len)
{
	out[0] = '\0';
	lua_getfield(L, LUA_REGISTRYINDEX, NAMES_KEY);
	if (lua_istable(L, -1)) {
		lua_pushvalue(L, -2);
		if (lua_rawget(L, -2) == LUA_TSTRING)
			snprintf(out, len, "%s", lua_tostring(L, -1));
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	if (!out[0] && ar->name && strcmp(ar->namewhat, "metamethod") != 0 &&
	    strcmp(ar->namewhat, "for iterator") != 0)
		snprintf(out, len, "%s", ar->name);
}

/* The prefix luaL_where(level) gave a message raised from frame 'level'
 * (Lua's shortened file name), or "" when that frame has no line. */
static void lua_where_prefix(lua_State *T, int level, char *out, size_t len)
{
	lua_Debug ar;

	out[0] = '\0';
	if (lua_getstack(T, level, &ar) && lua_getinfo(T, "Sl", &ar) && ar.currentline > 0)
		snprintf(out, len, "%s:%d: ", ar.short_src, ar.currentline);
}

/* Bytes of the string at 'i' that are 'prefix'; 0 when it does not start so. */
static size_t prefix_len(lua_State *T, int i, const char *prefix)
{
	size_t n = strlen(prefix), len;
	const char *s;

	if (!n || lua_type(T, i) != LUA_TSTRING)
		return 0;
	s = lua_tolstring(T, i, &len);
	return len >= n && memcmp(s, prefix, n) == 0 ? n : 0;
}

/* Is chunk 'source' a file of luascale's Lua library? */
static bool in_lib(const struct sandbox *sb, const char *source)
{
	size_t n = strlen(sb->lib_dir);

	return n && source[0] == '@' && strncmp(source + 1, sb->lib_dir, n) == 0 &&
	       source[1 + n] == '/';
}

/*
 * Records in 'r' how the error value at index 'value' of thread T was
 * raised, from T's stack as it was then: 'level' is the frame that raised
 * it (1 in a message handler, 0 on a coroutine that died of it). Uses no
 * more than a few stack slots and allocates nothing but the names looked
 * up, so it works in a message handler after a stack overflow too.
 */
static void record_raise(struct sandbox *sb, lua_State *T, int level, int value,
			 struct raise_rec *r)
{
	char prefix[LOC_MAX + 8];
	lua_Debug ar;
	int at = -1, top;

	value = lua_absindex(T, value);
	top = lua_gettop(T);
	if (lua_checkstack(T, 4) && lua_getstack(T, level, &ar) && lua_getinfo(T, "Slnf", &ar) &&
	    lua_tocfunction(T, -1) == sb_co_wrapped && sb->co_rec.valid) {
		/* re-raised from a coroutine: where it was raised in there (the
		 * record of a coroutine inside it may be the one being made) */
		int type = lua_type(T, value);
		size_t len = type == LUA_TSTRING ? lua_rawlen(T, value) : 0;
		size_t added = type == LUA_TSTRING && sb->co_rec.type == LUA_TSTRING &&
			       len >= sb->co_rec.value_len ? len - sb->co_rec.value_len : 0;

		if (r != &sb->co_rec)
			*r = sb->co_rec;
		r->type = type;
		r->ptr = lua_topointer(T, value);
		r->value_len = len;
		r->strip += added;
		lua_frame_where(T, level + 1, r->resumed, sizeof(r->resumed));
		lua_settop(T, top);
		return;
	}
	lua_settop(T, top);
	memset(r, 0, sizeof(*r));
	r->valid = true;
	r->type = lua_type(T, value);
	r->ptr = lua_topointer(T, value);
	r->value_len = r->type == LUA_TSTRING ? lua_rawlen(T, value) : 0;
	r->kind = RAISED_BY_LUA;
	if (!lua_checkstack(T, 4) || !lua_getstack(T, level, &ar) || !lua_getinfo(T, "Slnf", &ar))
		goto from;
	if (ar.what[0] != 'C') { /* Lua's own error, in this function */
		at = lua_frame_where(T, level, r->where, sizeof(r->where));
		lua_where_prefix(T, level, prefix, sizeof(prefix));
		r->strip = prefix_len(T, value, prefix);
		goto from;
	}
	if (lua_tocfunction(T, -1) == sb_error || lua_tocfunction(T, -1) == sb_assert) {
		bool is_error = lua_tocfunction(T, -1) == sb_error;
		int lv = 1;

		r->kind = is_error ? RAISED_BY_ERROR : RAISED_BY_ASSERT;
		/* slot 1: the value as given; slot 2: the level, or whether
		 * assert had a message (see sb_error, sb_assert) */
		if (lua_getlocal(T, &ar, 1)) {
			if (lua_type(T, -1) == LUA_TSTRING && r->type == LUA_TSTRING &&
			    r->value_len >= lua_rawlen(T, -1))
				r->strip = r->value_len - lua_rawlen(T, -1);
			lua_pop(T, 1);
		}
		if (lua_getlocal(T, &ar, 2)) {
			if (is_error)
				lv = (int)lua_tointeger(T, -1);
			else
				r->has_message = lua_toboolean(T, -1);
			lua_pop(T, 1);
		}
		/* the frame error() was told to blame, as Lua located it */
		if (lv > 0 && lv < INT_MAX - level) {
			lua_Debug blamed;

			if (lua_getstack(T, level + lv, &blamed) && lua_getinfo(T, "Sl", &blamed) &&
			    blamed.currentline > 0) {
				frame_where(&blamed, r->where, sizeof(r->where));
				at = level + lv;
			}
		}
		if (at < 0)
			at = lua_frame_where(T, level + 1, r->where, sizeof(r->where));
		/* luascale's library checking its arguments, not the policy */
		if (lua_getstack(T, level + 1, &ar) && lua_getinfo(T, "S", &ar) && in_lib(sb, ar.source) &&
		    r->type == LUA_TSTRING)
			r->kind = RAISED_BY_LIBRARY;
		goto from;
	}
	r->kind = RAISED_BY_CFUNC;
	cfunc_name(T, &ar, r->fname, sizeof(r->fname));
	at = lua_frame_where(T, level + 1, r->where, sizeof(r->where));
	lua_where_prefix(T, level + 1, prefix, sizeof(prefix));
	r->strip = prefix_len(T, value, prefix);
from:
	/* raised outside the policy's file (a module, a loaded chunk): the
	 * policy's line that led there */
	if (at >= 0 && sb->main_src[0] && lua_getstack(T, at, &ar) && lua_getinfo(T, "S", &ar) &&
	    strcmp(ar.source, sb->main_src) != 0) {
		for (at++; lua_getstack(T, at, &ar); at++) {
			if (lua_getinfo(T, "Sl", &ar) && ar.currentline > 0 &&
			    strcmp(ar.source, sb->main_src) == 0) {
				frame_where(&ar, r->from, sizeof(r->from));
				break;
			}
		}
	}
	lua_settop(T, top);
}

/* Message handler: records where the error was raised (the stack is
 * still there) and passes the error value on unchanged. */
static int on_error(lua_State *L)
{
	record_raise(sandbox_of(L), L, 1, 1, &sandbox_of(L)->rec);
	lua_settop(L, 1);
	return 1;
}

/* Appends to 'out' how the policy's error value at the top of the stack
 * reads ('strip' bytes of a string are Lua's location). A __tostring
 * metamethod is policy code: it runs under a fresh budget. */
static void describe_value(struct sandbox *sb, size_t strip, char *out, size_t len)
{
	lua_State *L = sb->L;
	int t = lua_type(L, -1);
	size_t used = strlen(out);

	switch (t) {
	case LUA_TSTRING: {
		size_t n;
		const char *s = lua_tolstring(L, -1, &n);

		if (strip > n)
			strip = 0;
		snprintf(out + used, len - used, "\"%.*s\"", (int)(n - strip), s + strip);
		return;
	}
	case LUA_TNUMBER:
	case LUA_TBOOLEAN:
	case LUA_TNIL:
		lua_pushvalue(L, -1);
		snprintf(out + used, len - used, "%s", luaL_tolstring(L, -1, NULL));
		lua_pop(L, 2);
		return;
	default:
		break;
	}
	snprintf(out + used, len - used, "a %s value (not a string)", luaL_typename(L, -1));
	if (luaL_getmetafield(L, -1, "__tostring") == LUA_TNIL)
		return;
	lua_pop(L, 1);
	lua_pushcfunction(L, err_tostring);
	lua_pushvalue(L, -2);
	begin_limits(sb);
	sb->in_call = true;
	if (lua_pcall(L, 1, 1, 0) == LUA_OK && sb->exhausted == EXHAUSTED_NONE &&
	    lua_type(L, -1) == LUA_TSTRING)
		snprintf(out + used, len - used, "\"%s\" (from a %s's __tostring)",
			 lua_tostring(L, -1), luaL_typename(L, -2));
	sb->in_call = false;
	sb->exhausted = EXHAUSTED_NONE;
	reset_hooks(L);
	lua_pop(L, 1);
}

/* Does 'text' start with 'name' followed by ':' (or the part of 'name'
 * after its last '.')? Then the message names its function already. */
static bool names_itself(const char *text, const char *name)
{
	const char *dot = strrchr(name, '.');
	size_t n = strlen(name);

	if (strncmp(text, name, n) == 0 && text[n] == ':')
		return true;
	if (dot) {
		n = strlen(dot + 1);
		return strncmp(text, dot + 1, n) == 0 && text[n] == ':';
	}
	return false;
}

/*
 * Turns the error value at the top of the stack into the failure's
 * message: "file:line: message", the location being where it was raised
 * (from the record the message handler made), never the value's text.
 * See docs/policy-api.md, Errors.
 */
static void describe_error(struct sandbox *sb, struct errbuf *err)
{
	lua_State *L = sb->L;
	const struct raise_rec *r = &sb->rec;
	char text[ERRBUF_MAX] = "";
	const char *where = "";
	bool known = r->valid && r->type == lua_type(L, -1) && r->ptr == lua_topointer(L, -1);

	if (known && r->where[0])
		where = r->where;
	else if (sb->main_src[0] == '@')
		where = sb->main_src + 1; /* no line known: the file */
	if (!known) {
		if (lua_type(L, -1) == LUA_TSTRING)
			snprintf(text, sizeof(text), "%s", lua_tostring(L, -1));
		else
			describe_value(sb, 0, text, sizeof(text));
	} else if (r->kind == RAISED_BY_ERROR) {
		snprintf(text, sizeof(text), "error raised: ");
		describe_value(sb, r->strip, text, sizeof(text));
	} else if (r->kind == RAISED_BY_ASSERT) {
		snprintf(text, sizeof(text), "assertion failed%s", r->has_message ? ": " : "!");
		if (r->has_message)
			describe_value(sb, r->strip, text, sizeof(text));
	} else if (lua_type(L, -1) == LUA_TSTRING) {
		const char *s = lua_tostring(L, -1) + (r->strip <= r->value_len ? r->strip : 0);

		if (r->kind == RAISED_BY_CFUNC && r->fname[0] && !names_itself(s, r->fname))
			snprintf(text, sizeof(text), "%s: %s", r->fname, s);
		else
			snprintf(text, sizeof(text), "%s", s);
	} else {
		snprintf(text, sizeof(text), "%s%serror with ", r->fname, r->fname[0] ? ": " : "");
		describe_value(sb, 0, text, sizeof(text));
	}
	{
		bool resumed = known && r->resumed[0];
		bool from = known && r->from[0] && strcmp(r->from, r->resumed) != 0;

		errbuf_set(err, "%s%s%s%s%s%s%s%s%s", where, where[0] ? ": " : "", text,
			   resumed ? " (in a coroutine resumed at " : "", resumed ? r->resumed : "",
			   resumed ? ")" : "", from ? " (called from " : "", from ? r->from : "",
			   from ? ")" : "");
	}
}

static int finish_call(struct sandbox *sb, int status, int base, struct errbuf *err)
{
	lua_State *L = sb->L;
	char limit[300];

	/* a call may have finished past the deadline (a last library call
	 * that overran, a last long comparison): it failed all the same */
	if (status == LUA_OK && sb->exhausted == EXHAUSTED_NONE && !sb->uncounted)
		check_clocks(sb, 0);
	sb->in_call = false;
	sb->raising = false;
	reset_hooks(L);
	if (status == LUA_ERRMEM && sb->exhausted == EXHAUSTED_NONE)
		sb->exhausted = EXHAUSTED_MEMORY; /* the cap, or the system */
	if (sb->exhausted != EXHAUSTED_NONE) {
		/* Over a limit: the call failed, whatever the policy did with the
		 * error (caught it, replaced it, failed in its handler). Keep a
		 * located message we raised ourselves; otherwise say it plainly,
		 * naming the file (a failed allocation has no line). */
		const char *msg = status == LUA_OK || status == LUA_ERRMEM ? NULL : lua_tostring(L, -1);

		limit_message(sb, limit, sizeof(limit));
		if (msg && strstr(msg, limit))
			errbuf_set(err, "%s", msg);
		else if (sb->main_src[0] == '@')
			errbuf_set(err, "%s: %s", sb->main_src + 1, limit);
		else
			errbuf_set(err, "%s", limit);
		status = LUA_ERRRUN;
	} else if (status != LUA_OK) {
		describe_error(sb, err);
	}
	sb->rec.valid = sb->co_rec.valid = false;
	if (status != LUA_OK) {
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
	lua_Debug ar;

	/* the policy's own file, which every failure names */
	sb->main_src[0] = '\0';
	lua_pushvalue(L, base);
	if (lua_getinfo(L, ">S", &ar) && ar.source[0] == '@')
		snprintf(sb->main_src, sizeof(sb->main_src), "%s", ar.source);
	sb->rec.valid = sb->co_rec.valid = false;
	lua_pushcfunction(L, on_error);
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

	sb->main_src[0] = '\0';
	sb->rec.valid = false;
	lua_pushcfunction(L, on_error);
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
