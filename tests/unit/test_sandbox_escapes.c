/*
 * Every known way out of the policy sandbox's limits, one test per class:
 * coroutines whose hooks Lua drops (__close in wrap, close, nested, error
 * paths), library functions whose C work the budget did not charge (float
 * arguments, numeric strings, decoding, parsing, quoting, collecting), the
 * cluster view's helpers (pack, place, drainable, fits, lookups by name),
 * long string comparisons left to the CPU-time deadline, the cancel flag,
 * and limits hit while loading. Each policy here would run for hours
 * without its limit; each must end quickly with an error naming file:line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <cmocka.h>
#include <lauxlib.h>
#include <lua.h>

#include "model.h"
#include "policy/host.h"
#include "policy/sandbox.h"
#include "policy/view.h"
#include "sched.h"
#include "test_policy_files.h"

/* 20M instructions, 64 MiB, and a CPU deadline far beyond what the budget
 * takes: these tests are about the budget. */
static const struct sandbox_limits budget = {20000000, 64LL << 20, 600000, NULL, false};
/* The budget out of reach: only the CPU-time deadline can end the call. */
static const struct sandbox_limits deadline = {INT64_MAX / 8, 256LL << 20, 300, NULL, false};

static struct policy *load(const char *src, const struct sandbox_limits *lim,
			   char *path, size_t path_len, struct errbuf *err)
{
	const char *p = write_policy(src);
	struct policy *pol;

	snprintf(path, path_len, "%s", p);
	pol = policy_load(p, SOURCE_DIR "/lua", lim, NULL, err);
	unlink(p);
	return pol;
}

/* Checks 'msg' holds 'needle' and is located at "<path>:<line>: ". */
static void expect_located(const char *msg, const char *path, const char *needle)
{
	char where[128];
	size_t n = strlen(path);

	if (!strstr(msg, needle))
		fail_msg("error \"%s\" does not contain \"%s\"", msg, needle);
	snprintf(where, sizeof(where), "%s:", path);
	if (strncmp(msg, where, n + 1) != 0 || msg[n + 1] < '1' || msg[n + 1] > '9')
		fail_msg("error \"%s\" is not located at %s:LINE", msg, path);
}

/* A failed allocation has no line: the message names the file. */
static void expect_named(const char *msg, const char *path, const char *needle)
{
	size_t n = strlen(path);

	if (!strstr(msg, needle))
		fail_msg("error \"%s\" does not contain \"%s\"", msg, needle);
	if (strncmp(msg, path, n) != 0 || msg[n] != ':')
		fail_msg("error \"%s\" does not name %s", msg, path);
}

/* One reconcile of 'src' under 'lim' fails with 'needle' at file:line, no actions. */
static void expect_stopped(const char *src, const struct sandbox_limits *lim, const char *needle)
{
	char path[128];
	struct errbuf err;
	struct policy *p = load(src, lim, path, sizeof(path), &err);
	struct snapshot *s = empty_snapshot();
	struct drain_opts o;
	struct plan plan;

	if (!p)
		fail_msg("load failed: %s", err.msg);
	drain_opts_default(&o);
	assert_int_equal(policy_reconcile(p, s, &o, &plan, NULL, &err), -1);
	assert_int_equal(plan.n_actions, 0);
	if (strstr(needle, "MiB"))
		expect_named(err.msg, path, needle);
	else
		expect_located(err.msg, path, needle);
	policy_free(p);
	snapshot_free(s);
}

#define WRAP(body) \
	"local P = {}\nfunction P.reconcile(cluster, params, store)\n" body "\nend\nreturn P\n"
#define BUDGET "instruction budget"
#define LOOPING_CLOSE "setmetatable({}, {__close = function() while true do end end})"

/* ---- coroutines: hooks Lua drops ---- */

/* The hook raising inside a wrapped coroutine left it unhooked, and wrap
 * then ran its __close, looping, outside the budget. */
static void test_close_in_wrap(void **state)
{
	(void)state;
	expect_stopped(WRAP("coroutine.wrap(function() local x <close> = " LOOPING_CLOSE
			    " while true do end end)()"),
		       &budget, BUDGET);
	/* caught by a pcall around the wrap: still over */
	expect_stopped(WRAP("pcall(coroutine.wrap(function() local x <close> = " LOOPING_CLOSE
			    " while true do end end)) while true do end"),
		       &budget, BUDGET);
}

/* coroutine.close on a coroutine the budget stopped, in the same call and
 * in a later one (with a fresh budget). */
static void test_close_after_budget(void **state)
{
	char path[128];
	struct errbuf err;
	struct policy *p;
	struct snapshot *s = empty_snapshot();
	struct drain_opts o;
	struct plan plan;

	(void)state;
	expect_stopped(WRAP("local co = coroutine.create(function() local x <close> = " LOOPING_CLOSE
			    " while true do end end)\n"
			    "pcall(coroutine.resume, co) pcall(coroutine.close, co) while true do end"),
		       &budget, BUDGET);
	p = load("local co\nlocal P = {}\n"
		 "function P.reconcile(cluster, params, store)\n"
		 "  if not co then\n"
		 "    co = coroutine.create(function() local x <close> = " LOOPING_CLOSE " while true do end end)\n"
		 "    coroutine.resume(co)\n"
		 "  end\n"
		 "  local ok, e = coroutine.close(co)\n"
		 "  assert(not ok, 'closed')\n"
		 "  return nil\n"
		 "end\nreturn P\n",
		 &budget, path, sizeof(path), &err);
	if (!p)
		fail_msg("load failed: %s", err.msg);
	drain_opts_default(&o);
	assert_int_equal(policy_reconcile(p, s, &o, &plan, NULL, &err), -1);
	expect_located(err.msg, path, BUDGET);
	/* the second call closes it: its __close must not run unhooked */
	if (policy_reconcile(p, s, &o, &plan, NULL, &err) < 0)
		fail_msg("second call: %s", err.msg);
	plan_free(&plan);
	policy_free(p);
	snapshot_free(s);
}

/* A suspended coroutine closed with a looping __close, and an error (not
 * the budget) ending a wrapped one: its __close runs under the budget. */
static void test_close_of_suspended_and_error_paths(void **state)
{
	(void)state;
	expect_stopped(WRAP("local co = coroutine.create(function() local x <close> = " LOOPING_CLOSE
			    " coroutine.yield() end)\n"
			    "coroutine.resume(co) coroutine.close(co)"),
		       &budget, BUDGET);
	expect_stopped(WRAP("pcall(coroutine.wrap(function() local x <close> = " LOOPING_CLOSE
			    " error('boom') end)) return nil"),
		       &budget, BUDGET);
	/* resuming a stopped coroutine again */
	expect_stopped(WRAP("local co = coroutine.create(function() while true do end end)\n"
			    "for i = 1, 10 do pcall(coroutine.resume, co) end return nil"),
		       &budget, BUDGET);
}

/* Nested coroutines, each with a looping __close and a pcall. */
static void test_nested_coroutines(void **state)
{
	(void)state;
	expect_stopped(WRAP("local function nest(d)\n"
			    "  return coroutine.wrap(function()\n"
			    "    local x <close> = " LOOPING_CLOSE "\n"
			    "    if d > 0 then pcall(nest(d - 1)) end\n"
			    "    while true do pcall(function() while true do end end) end\n"
			    "  end)\n"
			    "end\n"
			    "pcall(nest(5)) return nil"),
		       &budget, BUDGET);
	/* a pcall inside the coroutine around a __close that loops */
	expect_stopped(WRAP("coroutine.wrap(function() while true do pcall(function()\n"
			    "  local x <close> = " LOOPING_CLOSE " while true do end end) end end)()"),
		       &budget, BUDGET);
}

/* A __close of the main thread, run while the budget error unwinds. */
static void test_close_while_unwinding(void **state)
{
	(void)state;
	expect_stopped(WRAP("local co = coroutine.wrap(function() while true do coroutine.yield() end end)\n"
			    "local x <close> = setmetatable({}, {__close = function() while true do co() end end})\n"
			    "while true do end"),
		       &budget, BUDGET);
	/* __gc is refused: finalizers run unhooked */
	expect_stopped(WRAP("setmetatable({}, {__gc = function() while true do end end})"),
		       &budget, "__gc metamethods are not allowed");
}

/* ---- library work the budget did not charge ---- */

/* Each loops on work a float (or numeric string) position used to skip. */
static void test_float_arguments(void **state)
{
	(void)state;
	expect_stopped(WRAP("table.move({}, 1, 1e12, 1, {})"), &budget, BUDGET);
	expect_stopped(WRAP("table.move({}, '1', '1000000000000', 1, {})"), &budget, BUDGET);
	expect_stopped(WRAP("local t = {} for i = 1, 200000 do t[i] = i end\n"
			    "while true do table.insert(t, 1.0, 0) end"),
		       &budget, BUDGET);
	expect_stopped(WRAP("local t = {} for i = 1, 200000 do t[i] = i end\n"
			    "while true do table.remove(t, 1.0) t[#t + 1] = 0 end"),
		       &budget, BUDGET);
	expect_stopped(WRAP("local s = string.rep('a', 200000)\n"
			    "while true do select('#', s:byte(1.0, 200000.0)) end"),
		       &budget, BUDGET);
	expect_stopped(WRAP("local t = {} for i = 1, 200000 do t[i] = i end\n"
			    "while true do select('#', table.unpack(t, 1.0, 200000.0)) end"),
		       &budget, BUDGET);
	/* __len makes a table as long as it likes */
	expect_stopped(WRAP("local t = setmetatable({}, {__len = function() return 1e12 end})\n"
			    "table.insert(t, 1, 0)"),
		       &budget, BUDGET);
}

/* Converting a long string to a number: tonumber, arithmetic, math. */
static void test_number_conversions(void **state)
{
	(void)state;
	expect_stopped(WRAP("local s = string.rep('1', 8 << 20) while true do tonumber(s) end"),
		       &budget, BUDGET);
	expect_stopped(WRAP("local s = string.rep('1', 8 << 20) while true do tonumber(s, 16) end"),
		       &budget, BUDGET);
	expect_stopped(WRAP("local s = string.rep(' ', 8 << 20) .. '1' while true do local x = s + 1 end"),
		       &budget, BUDGET);
	expect_stopped(WRAP("local s = string.rep(' ', 8 << 20) .. '1' while true do math.floor(s) end"),
		       &budget, BUDGET);
}

/* Decoding UTF-8 over a long string. */
static void test_utf8(void **state)
{
	(void)state;
	expect_stopped(WRAP("local s = string.rep('a', 8 << 20) while true do utf8.len(s) end"),
		       &budget, BUDGET);
	/* one step over a run of continuation bytes walks all of it */
	expect_stopped(WRAP("local s = 'a' .. string.rep('\\x80', 8 << 20) while true do utf8.offset(s, 2) end"),
		       &budget, BUDGET);
	expect_stopped(WRAP("local s = 'a' .. string.rep('\\x80', 8 << 20)\n"
			    "local step = utf8.codes('a') while true do pcall(step, s, 0) end"),
		       &budget, BUDGET);
}

/* Parsing a long chunk of comments. */
static void test_load(void **state)
{
	(void)state;
	expect_stopped(WRAP("local c = '--' .. string.rep('x', 8 << 20) while true do load(c) end"),
		       &budget, BUDGET);
	expect_stopped(WRAP("local c = '--[[' .. string.rep('x', 8 << 20) .. ']]' while true do load(c) end"),
		       &budget, BUDGET);
}

/* %q quotes a string byte by byte. Three rounds of 1 MiB cost 3 million
 * instructions by what they allocate, but about a second each. */
static void test_format_quoted(void **state)
{
	(void)state;
	expect_stopped(WRAP("local s = string.rep('\\1', 1 << 20)\n"
			    "for i = 1, 3 do local q = string.format('%q', s) end error('not charged')"),
		       &budget, BUDGET);
	expect_stopped(WRAP("local s = string.rep('\\1', 1 << 20)\n"
			    "while true do local q = string.format('%q', s) end"),
		       &budget, BUDGET);
}

/* A garbage collection step walks the live heap. */
static void test_collectgarbage(void **state)
{
	(void)state;
	expect_stopped(WRAP("local t = {} for i = 1, 200000 do t[i] = {} end\n"
			    "while true do collectgarbage('step') end"),
		       &budget, BUDGET);
	expect_stopped(WRAP("collectgarbage('generational')"), &budget, "not allowed");
}

/* string.unpack's "z" scans the data for its terminator. */
static void test_unpack_z(void **state)
{
	(void)state;
	expect_stopped(WRAP("local s = string.rep('x', 8 << 20)\n"
			    "while true do pcall(string.unpack, 'z', s) end"),
		       &budget, BUDGET);
}

/* ---- the CPU-time deadline ---- */

/* Only the deadline stops these: the budget is out of reach. */
static void test_cpu_deadline(void **state)
{
	(void)state;
	expect_stopped(WRAP("while true do end"), &deadline, "CPU time limit (300ms)");
	expect_stopped(WRAP("while true do pcall(function() while true do end end) end"),
		       &deadline, "CPU time limit");
	expect_stopped(WRAP("coroutine.wrap(function() local x <close> = " LOOPING_CLOSE
			    " while true do end end)()"),
		       &deadline, "CPU time limit");
}

/* Comparing two long strings is one instruction: 16 MiB compared each
 * time. Within 20 million instructions that runs for hours; the deadline
 * ends it, and the hook comes sooner when instructions take this long. */
static void test_long_string_comparison(void **state)
{
	struct sandbox_limits lim = budget;

	(void)state;
	lim.cpu_ms = 500;
	lim.memory = 256LL << 20;
	expect_stopped(WRAP("local a = string.rep('x', 16 << 20) local b = a:sub(1, -2) .. 'y'\n"
			    "while true do local _ = a < b end"),
		       &lim, "CPU time limit (500ms)");
	expect_stopped(WRAP("local a = string.rep('x', 16 << 20) local b = a:sub(1, -2) .. 'y'\n"
			    "while true do local _ = a == b end"),
		       &lim, "CPU time limit");
}

/* No single string or table above 64 MiB, whatever the heap cap. */
static void test_object_cap(void **state)
{
	struct sandbox_limits lim = budget;

	(void)state;
	lim.memory = 1LL << 30;
	lim.instructions = 200000000;
	expect_stopped(WRAP("local a = string.rep('x', 40 << 20) local b = a .. a return nil"),
		       &lim, "64 MiB per string or table");
}

/* A reload whose trial run passes the deadline keeps the old policy. */
static void test_reload_trial_deadline(void **state)
{
	char path[128], dropped[64];
	struct errbuf err;
	struct snapshot *s = empty_snapshot();
	struct drain_opts o;
	struct plan plan;
	struct policy *old, *next;
	const char *p2;

	(void)state;
	old = load(WRAP("return nil"), &deadline, path, sizeof(path), &err);
	if (!old)
		fail_msg("load failed: %s", err.msg);
	drain_opts_default(&o);
	p2 = write_policy(WRAP("while true do end"));
	next = policy_reload(old, p2, SOURCE_DIR "/lua", &deadline, NULL, s, &o, dropped,
			     sizeof(dropped), &err);
	unlink(p2);
	assert_null(next);
	assert_non_null(strstr(err.msg, "trial run"));
	assert_non_null(strstr(err.msg, "CPU time limit"));
	assert_int_equal(policy_reconcile(old, s, &o, &plan, NULL, &err), 0);
	plan_free(&plan);
	policy_free(old);
	snapshot_free(s);
}

/* ---- the cancel flag ---- */

struct canceller {
	atomic_bool cancel;
	atomic_bool running;
};

static void *cancel_when_running(void *arg)
{
	struct canceller *c = arg;

	while (!atomic_load(&c->running))
		sched_yield();
	atomic_store(&c->cancel, true);
	return NULL;
}

static int policy_running(lua_State *L)
{
	struct canceller *c = lua_touserdata(L, lua_upvalueindex(1));

	atomic_store(&c->running, true);
	return 0;
}

/* Another thread sets the flag while the policy loops (in a coroutine,
 * under pcall): the call ends at its next hook. Neither the budget nor
 * the deadline can end it first. */
static void test_cancel_from_another_thread(void **state)
{
	static struct canceller c;
	struct sandbox_limits lim = {INT64_MAX / 8, 64LL << 20, 3600 * 1000, &c.cancel, false};
	struct errbuf err;
	struct sandbox *sb;
	lua_State *L;
	pthread_t t;
	const char *path;

	(void)state;
	atomic_init(&c.cancel, false);
	atomic_init(&c.running, false);
	sb = sandbox_new(SOURCE_DIR "/lua", "", &lim, &err);
	assert_non_null(sb);
	L = sandbox_state(sb);
	lua_pushlightuserdata(L, &c);
	lua_pushcclosure(L, policy_running, 1);
	lua_setglobal(L, "running");
	path = write_policy("running()\n"
			    "coroutine.wrap(function() while true do pcall(function() while true do end end) end end)()\n");
	assert_int_equal(sandbox_loadfile(sb, path, &err), 0);
	unlink(path);
	assert_int_equal(pthread_create(&t, NULL, cancel_when_running, &c), 0);
	assert_int_equal(sandbox_call(sb, 0, 0, &err), -1);
	assert_int_equal(pthread_join(t, NULL), 0);
	expect_located(err.msg, path, "policy abandoned: shutting down");
	/* while the flag stays set, nothing runs */
	assert_int_equal(luaL_loadstring(L, "return 1"), LUA_OK);
	assert_int_equal(sandbox_call(sb, 0, 1, &err), -1);
	assert_non_null(strstr(err.msg, "shutting down"));
	/* cleared: calls work again */
	atomic_store(&c.cancel, false);
	assert_int_equal(luaL_loadstring(L, "return 1"), LUA_OK);
	assert_int_equal(sandbox_call(sb, 0, 1, &err), 0);
	lua_pop(L, 1);
	sandbox_free(sb);
}

/* A C function of the host charges its own work with sandbox_charge. */
static int costly(lua_State *L)
{
	sandbox_charge(L, 1e6);
	return 0;
}

static void test_native_charge(void **state)
{
	struct errbuf err;
	struct sandbox *sb = sandbox_new(SOURCE_DIR "/lua", "", &budget, &err);
	lua_State *L;
	const char *path;

	(void)state;
	assert_non_null(sb);
	L = sandbox_state(sb);
	lua_register(L, "costly", costly);
	path = write_policy("for i = 1, 19 do costly() end\nreturn 1\n");
	assert_int_equal(sandbox_loadfile(sb, path, &err), 0);
	unlink(path);
	assert_int_equal(sandbox_call(sb, 0, 1, &err), 0);
	lua_pop(L, 1);
	path = write_policy("while true do pcall(costly) end\n");
	assert_int_equal(sandbox_loadfile(sb, path, &err), 0);
	unlink(path);
	assert_int_equal(sandbox_call(sb, 0, 0, &err), -1);
	expect_located(err.msg, path, BUDGET);
	sandbox_free(sb);
}

/* ---- limits hit while loading ---- */

/* Running out of memory while the file runs names the file. */
static void test_load_memory_names_file(void **state)
{
	char path[128];
	struct errbuf err;
	struct policy *p;

	(void)state;
	p = load("local t = {} for i = 1, 1e9 do t[i] = i end\nreturn {}\n", &budget, path,
		 sizeof(path), &err);
	assert_null(p);
	expect_named(err.msg, path, "policy exceeded its memory limit (64 MiB)");
}

/* ---- the cluster view's helpers ---- */

/* Appends printf output to a growing malloc'd text. */
static void cat(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(*buf + *len, *cap - *len, fmt, ap);
		va_end(ap);
		assert_true(n >= 0);
		if ((size_t)n < *cap - *len)
			break;
		*cap = (*cap + (size_t)n) * 2;
		*buf = realloc(*buf, *cap);
		assert_non_null(*buf);
	}
	*len += (size_t)n;
}

#define BIG_NODES 300
#define BIG_PENDING 1000

/*
 * 300 nodes of group "workers" (4 cpu, 1 of it used by 10 pods each; n-0001
 * has 20 taints, n-0000 2,000 more pods) and 1,000 pending pods of 3.5 cpu:
 * they fit no node as it is, and each needs a template node of its own.
 */
static struct snapshot *big_snapshot(void)
{
	struct kv sel = {"luascale.io/node-group", "workers"};
	struct node_group g;
	struct snapshot *s = snapshot_new();
	struct errbuf err;
	size_t len = 0, cap = 1 << 20;
	char *j = malloc(cap);
	int n, p;

	assert_non_null(j);
	cat(&j, &len, &cap, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[");
	for (n = 0; n < BIG_NODES; n++) {
		cat(&j, &len, &cap, "%s{\"kind\":\"Node\",\"metadata\":{\"name\":\"n-%04d\","
			"\"labels\":{\"luascale.io/node-group\":\"workers\"}},\"spec\":{\"taints\":[",
			n ? "," : "", n);
		for (p = 0; n == 1 && p < 20; p++)
			cat(&j, &len, &cap, "%s{\"key\":\"t%d\",\"effect\":\"NoSchedule\"}", p ? "," : "", p);
		cat(&j, &len, &cap, "]},\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"16Gi\","
			"\"pods\":\"110\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}");
	}
	for (n = 0; n < BIG_NODES; n++)
		for (p = 0; p < (n ? 10 : 2010); p++)
			cat(&j, &len, &cap, ",{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"a\",\"name\":\"p-%d-%d\","
				"\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"rs\",\"controller\":true}]},"
				"\"spec\":{\"nodeName\":\"n-%04d\",\"containers\":[{\"name\":\"c\",\"resources\":"
				"{\"requests\":{\"cpu\":\"%s\"}}}]},\"status\":{\"phase\":\"Running\"}}",
				n, p, n, p < 10 ? "100m" : "0");
	for (p = 0; p < BIG_PENDING; p++)
		cat(&j, &len, &cap, ",{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"a\",\"name\":\"q-%d\","
			"\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"rs\",\"controller\":true}]},"
			"\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"3500m\"}}}]},"
			"\"status\":{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\","
			"\"status\":\"False\",\"reason\":\"Unschedulable\"}]}}", p);
	cat(&j, &len, &cap, "]}");
	memset(&g, 0, sizeof(g));
	g.name = "workers";
	g.max = 100000;
	g.selector.items = &sel;
	g.selector.n = 1;
	g.target = -1;
	g.tmpl.allocatable.cpu_m = 4000;
	g.tmpl.allocatable.memory = 16LL << 30;
	g.tmpl.allocatable.pods = 110;
	if (snapshot_add_json(s, j, len, "big", &err) < 0 || snapshot_set_groups(s, &g, 1, &err) < 0 ||
	    snapshot_finish(s, 1700000000, &err) < 0)
		fail_msg("fixture: %s", err.msg);
	free(j);
	assert_int_equal((int)s->n_pending, BIG_PENDING);
	return s;
}

/* 2M instructions: a few dozen loops of Lua, and about one second of
 * helper calls if they were not charged. */
static const struct sandbox_limits small = {2000000, 64LL << 20, 600000, NULL, false};

/*
 * Runs 'body' in a loop (with 'setup' before it, 'cluster' in scope) on
 * the big cluster under the small budget: it must end in the budget error
 * at file:line within 'max_loops' turns of the loop. Returns the turns.
 */
static long loop_stops(const struct snapshot *s, const char *setup, const char *body, long max_loops)
{
	char src[2048];
	struct errbuf err;
	struct sandbox *sb = sandbox_new(SOURCE_DIR "/lua", "", &small, &err);
	struct drain_opts o;
	const char *path;
	lua_State *L;
	long loops;

	assert_non_null(sb);
	view_register_native(sb);
	L = sandbox_state(sb);
	snprintf(src, sizeof(src), "loops = 0\nreturn function(cluster)\n%s\nwhile true do\n"
		 "loops = loops + 1\n%s\nend\nend\n", setup, body);
	path = write_policy(src);
	assert_int_equal(sandbox_loadfile(sb, path, &err), 0);
	unlink(path);
	assert_int_equal(sandbox_call(sb, 0, 1, &err), 0);
	drain_opts_default(&o);
	assert_int_equal(view_begin(sb, s, &o, true, &err), 0);
	assert_int_equal(sandbox_call(sb, 1, 0, &err), -1);
	view_end(sb);
	expect_located(err.msg, path, BUDGET);
	lua_getglobal(L, "loops");
	loops = (long)lua_tointeger(L, -1);
	lua_pop(L, 1);
	if (loops > max_loops)
		fail_msg("%s: %ld turns of the loop on a budget of %lld, expected at most %ld",
			 body, loops, (long long)small.instructions, max_loops);
	print_message("%ld turns: %s\n", loops, body);
	sandbox_free(sb);
	return loops;
}

/* Each helper does work in C out of proportion to the instructions that
 * call it (pods x bins for pack, pods x nodes for place and drainable);
 * the budget charges it, so a loop of them stops within a few turns. */
static void test_view_helpers_charged(void **state)
{
	struct snapshot *s = big_snapshot();

	(void)state;
	/* 1,000 pods, a bin each: about 500,000 bin checks a call */
	loop_stops(s, "", "cluster:pack(cluster.pending, 'workers')", 10);
	loop_stops(s, "", "cluster:pack(cluster.pending, 'workers', 1000000, {upcoming = 1000000})", 10);
	/* 1,000 pods that fit no node try all 300 */
	loop_stops(s, "", "cluster:place(cluster.pending)", 10);
	/* half the nodes' pods moved onto the other half */
	loop_stops(s, "local ex = {} for i = 2, 151 do ex[#ex + 1] = cluster.nodes[i] end",
		   "cluster:drainable(cluster.nodes[1], {exclude = ex})", 10);
	/* 20 taints against a list of 20,000 to ignore */
	loop_stops(s, "local ig = {} for i = 1, 20000 do ig[i] = 'x' .. i end\n"
		      "local pod = cluster.nodes[3].pods[1]",
		   "cluster:fits(pod, cluster.nodes[2], {ignore_taints = ig})", 10);
	/* a node of 2,010 pods counted at each read */
	loop_stops(s, "local n = cluster.nodes[1]", "local c = n.pod_count", 2000);
	/* a name of 4 MiB hashed at each lookup */
	loop_stops(s, "local name = string.rep('n', 4 << 20)", "cluster:node(name)", 10);
	/* a quantity of 4 MiB parsed */
	loop_stops(s, "local n = require 'luascale.native' local q = string.rep('1', 4 << 20)",
		   "pcall(n.cpu, q)", 10);
	snapshot_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_close_in_wrap),
		cmocka_unit_test(test_close_after_budget),
		cmocka_unit_test(test_close_of_suspended_and_error_paths),
		cmocka_unit_test(test_nested_coroutines),
		cmocka_unit_test(test_close_while_unwinding),
		cmocka_unit_test(test_float_arguments),
		cmocka_unit_test(test_number_conversions),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_format_quoted),
		cmocka_unit_test(test_collectgarbage),
		cmocka_unit_test(test_unpack_z),
		cmocka_unit_test(test_cpu_deadline),
		cmocka_unit_test(test_long_string_comparison),
		cmocka_unit_test(test_object_cap),
		cmocka_unit_test(test_reload_trial_deadline),
		cmocka_unit_test(test_cancel_from_another_thread),
		cmocka_unit_test(test_native_charge),
		cmocka_unit_test(test_load_memory_names_file),
		cmocka_unit_test(test_view_helpers_charged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
