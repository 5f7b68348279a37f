/*
 * Policy host and sandbox: escapes and limits (infinite loops, memory
 * bombs, binary chunks, coroutines, pcall swallowing the limit error, io/os),
 * plan decoding errors, the store, and params merging.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "model.h"
#include "policy/host.h"
#include "sched.h"
#include "test_policy_files.h"

static const struct sandbox_limits small = {20000000, 64LL * 1024 * 1024, 0, NULL, false};

static struct policy *load(const char *src, struct errbuf *err)
{
	const char *path = write_policy(src);
	struct policy *p = policy_load(path, SOURCE_DIR "/lua", &small, NULL, err);

	unlink(path);
	return p;
}

/* Loads 'src', runs one reconcile, expects failure with 'needle' in the message. */
static void expect_call_error(const char *src, const char *needle)
{
	struct errbuf err;
	struct policy *p = load(src, &err);
	struct snapshot *s = empty_snapshot();
	struct drain_opts o;
	struct plan plan;

	if (!p)
		fail_msg("load failed: %s", err.msg);
	drain_opts_default(&o);
	assert_int_equal(policy_reconcile(p, s, &o, &plan, NULL, &err), -1);
	assert_int_equal(plan.n_actions, 0);
	if (!strstr(err.msg, needle))
		fail_msg("error \"%s\" does not contain \"%s\"", err.msg, needle);
	policy_free(p);
	snapshot_free(s);
}

static void expect_ok(const char *src, size_t n_actions)
{
	struct errbuf err;
	struct policy *p = load(src, &err);
	struct snapshot *s = empty_snapshot();
	struct drain_opts o;
	struct plan plan;

	if (!p)
		fail_msg("load failed: %s", err.msg);
	drain_opts_default(&o);
	if (policy_reconcile(p, s, &o, &plan, NULL, &err) < 0)
		fail_msg("reconcile failed: %s", err.msg);
	assert_int_equal(plan.n_actions, n_actions);
	plan_free(&plan);
	policy_free(p);
	snapshot_free(s);
}

#define WRAP(body) \
	"local P = {}\nfunction P.reconcile(cluster, params, store)\n" body "\nend\nreturn P\n"

static void test_infinite_loop(void **state)
{
	(void)state;
	expect_call_error(WRAP("while true do end"), "instruction budget");
	/* the message names the policy file and line */
	expect_call_error(WRAP("while true do end"), ".lua:3:");
}

static void test_string_rep_bomb(void **state)
{
	(void)state;
	expect_call_error(WRAP("local t = {} for i = 1, 100 do t[i] = string.rep('x', 32 * 1024 * 1024) .. i end"),
			  "memory");
	/* many medium strings (each made by one cheap concat: building them
	 * with string.rep would spend the instruction budget first) */
	expect_call_error(WRAP("local y, t = string.rep('y', 4096), {} for i = 1, 1e9 do t[i] = y .. i end"),
			  "memory");
}

static void test_pcall_cannot_swallow_budget(void **state)
{
	(void)state;
	expect_call_error(WRAP("while true do pcall(function() while true do end end) end"),
			  "instruction budget");
	/* caught once, then the policy returns normally: still a failure */
	expect_call_error(WRAP("pcall(function() while true do end end) return nil"),
			  "instruction budget");
	/* an error handler that loops does not help either */
	expect_call_error(WRAP("xpcall(function() while true do end end, function() while true do end end) return nil"),
			  "instruction budget");
	/* xpcall still works as a policy expects */
	expect_ok(WRAP("local ok, e = xpcall(function() error('boom') end, function(m) return 'handled: ' .. m end)\n"
		       "assert(not ok and e:find('handled: .*boom'))\n"
		       "local ok2, a, b = xpcall(function(x, y) return x + y, 'r' end, print, 1, 2)\n"
		       "assert(ok2 and a == 3 and b == 'r') return nil"),
		  0);
}

static void test_size_caps(void **state)
{
	(void)state;
	expect_call_error(WRAP("local s = string.rep('x', 100 * 1024 * 1024) return nil"),
			  "string.rep: a result of");
	expect_call_error(WRAP("local s = ('ab'):rep(1024 * 1024, ('-'):rep(100)) return nil"),
			  "string.rep");
	/* backtracking patterns on long strings, each start position scanning on */
	expect_call_error(WRAP("local s = string.rep('a', 200000) return s:find('.-.-b')"),
			  "could take about");
	expect_call_error(WRAP("local s = string.rep('a', 200000) return s:match('(a*)b')"),
			  "string.match");
	expect_call_error(WRAP("local s = string.rep('a', 200000) for x in s:gmatch('a-b') do end"),
			  "string.gmatch");
	expect_call_error(WRAP("local s = string.rep('(', 100000) return (s:gsub('%b()', ''))"),
			  "string.gsub");
	expect_call_error(WRAP("local s, t = string.rep('x', 2 * 1024 * 1024), {} for i = 1, 40 do t[i] = s end\n"
			       "return table.concat(t)"),
			  "table.concat");
	expect_call_error(WRAP("return table.concat({}, '', 1, 1 << 50)"), "table.concat");
	/* everyday patterns and sizes still work */
	expect_ok(WRAP("local a, b = ('hub.jupyter.org/node-purpose'):match('^(.-)/(.*)$')\n"
		       "assert(a == 'hub.jupyter.org' and b == 'node-purpose')\n"
		       "local s = string.rep('word  ', 50000)\n"
		       "local t, n = s:gsub('%s+', ' ') assert(n == 50000)\n"
		       "assert(s:find('word', 1, true) == 1)\n"
		       "assert(#table.concat({'a', 'b', 'c'}, ',') == 5)\n"
		       "local l = {} for i = 1, 1000 do l[i] = -i end table.sort(l) assert(l[1] == -1000)\n"
		       "return nil"),
		  0);
}

static void test_libraries_read_only(void **state)
{
	(void)state;
	expect_call_error(WRAP("string.upper = nil"), "read-only");
	expect_call_error(WRAP("math.floor = function() return 0 end"), "read-only");
	expect_call_error(WRAP("table.insert(string, 'x')"), "read-only");
	expect_call_error(WRAP("rawset(string, 'evil', 1)"), "read-only");
	expect_call_error(WRAP("getmetatable('').__index = {}"), "boolean");
	expect_call_error(WRAP("setmetatable(os, {})"), "protected metatable");
	expect_call_error(WRAP("local ls = require 'luascale' ls.plan = nil"), "read-only");
	/* reading, methods on strings and iterating still work */
	expect_ok(WRAP("assert(('x'):upper() == 'X' and string.format('%d', 3) == '3')\n"
		       "local n = 0 for k, v in pairs(string) do n = n + 1 end assert(n > 10)\n"
		       "local mine = {} rawset(mine, 'k', 1) assert(mine.k == 1)\n"
		       "return nil"),
		  0);
}

static void test_finalizers_refused(void **state)
{
	(void)state;
	/* __gc runs with hooks off: a looping finalizer would escape the budget */
	expect_call_error(WRAP("setmetatable({}, {__gc = function() while true do end end}) collectgarbage() return nil"),
			  "__gc metamethods are not allowed");
	/* adding __gc later has no effect in Lua 5.4; the policy still finishes */
	expect_ok(WRAP("local mt = {} local t = setmetatable({}, mt) mt.__gc = function() while true do end end\n"
		       "t = nil collectgarbage() return nil"),
		  0);
}

static void test_pcall_cannot_swallow_memory(void **state)
{
	(void)state;
	expect_call_error(WRAP("pcall(function() local t = {} for i = 1, 100 do t[i] = string.rep('y', 32 * 1024 * 1024) .. i end end)\n"
			       "return nil"),
			  "memory limit");
}

/* One instruction that builds megabytes, sorts a big table or runs a costly
 * pattern is charged for that work: in a loop it would otherwise run for
 * hours on a budget meant for seconds (found by tests/fuzz/fuzz_policy_plan). */
static void test_library_work_is_charged(void **state)
{
	(void)state;
	expect_call_error(WRAP("for i = 1, 100 do local s = string.rep('x', 1000000) end"),
			  "instruction budget");
	expect_call_error(WRAP("local s = string.rep('x', 1000000) for i = 1, 400 do local y = s .. s end"),
			  "instruction budget");
	expect_call_error(WRAP("local t = {} for i = 1, 100000 do t[i] = i end\n"
			       "for j = 1, 20 do table.sort(t) end"),
			  "instruction budget");
	expect_call_error(WRAP("local t = {} for i = 1, 100000 do t[i] = 'x' end\n"
			       "for j = 1, 400 do table.concat(t) end"),
			  "instruction budget");
	expect_call_error(WRAP("local t = {} for i = 1, 100000 do t[i] = i end\n"
			       "for j = 1, 300 do table.insert(t, 1, 0) end"),
			  "instruction budget");
	expect_call_error(WRAP("local t = {} for i = 1, 100000 do t[i] = i end\n"
			       "for j = 1, 300 do table.remove(t, 1) end"),
			  "instruction budget");
	expect_call_error(WRAP("local t = {} for i = 1, 100000 do t[i] = i end\n"
			       "for j = 1, 300 do table.move(t, 1, #t, 1) end"),
			  "instruction budget");
	expect_call_error(WRAP("local t = {} for i = 1, 100000 do t[i] = i end\n"
			       "for j = 1, 300 do select('#', table.unpack(t)) end"),
			  "instruction budget");
	expect_call_error(WRAP("local s = string.rep('a', 100000)\n"
			       "for j = 1, 300 do select('#', s:byte(1, -1)) end"),
			  "instruction budget");
	expect_call_error(WRAP("local s = string.rep('a', 100000)\n"
			       "for j = 1, 300 do select('#', utf8.codepoint(s, 1, -1)) end"),
			  "instruction budget");
	expect_call_error(WRAP("local t = {} for i = 1, 100000 do t[i] = {} end\n"
			       "for j = 1, 100 do collectgarbage() end"),
			  "instruction budget");
	/* a pattern call is charged its worst case (here about 10^8 steps,
	 * though this subject matches at once), scaled down */
	expect_call_error(WRAP("local s = string.rep('b', 200) for i = 1, 100 do s:match('a*a*b') end"),
			  "instruction budget");
	expect_call_error(WRAP("local s, p = string.rep('a', 1000000), string.rep('a', 3000) .. 'b'\n"
			       "for i = 1, 100 do s:find(p, 1, true) end"),
			  "instruction budget");
	/* the same work in moderation is fine */
	expect_ok(WRAP("local t = {} for i = 1, 1000 do t[i] = string.rep('x', 100) end\n"
		       "table.sort(t) assert(#table.concat(t) == 100000)\n"
		       "for i = 1, 10000 do assert(('app.kubernetes.io/name=web'):match('^([^=]+)=(.*)$')) end\n"
		       "local l = {} for i = 1, 100000 do table.insert(l, i) end\n"
		       "for i = 1, 100000 do table.remove(l) end\n"
		       "local s = string.rep('a', 100000) for i = 1, #s do assert(s:byte(i) == 97) end\n"
		       "return nil"),
		  0);
}

static void test_coroutine_created_before_call(void **state)
{
	(void)state;
	/* created while the policy file loads, before any reconcile */
	expect_call_error("local co = coroutine.create(function() while true do end end)\n"
			  "local P = {}\n"
			  "function P.reconcile() coroutine.resume(co) return nil end\n"
			  "return P\n",
			  "instruction budget");
	expect_call_error(WRAP("local co = coroutine.wrap(function() while true do coroutine.yield() end end)\n"
			       "while true do co() end"),
			  "instruction budget");
}

static void test_binary_chunk(void **state)
{
	struct errbuf err;
	struct policy *p;

	(void)state;
	/* string.dump is gone and load refuses binary text */
	expect_call_error(WRAP("return string.dump(function() end)"), "dump");
	expect_call_error(WRAP("local f, e = load('\\27Lua\\x54\\0') if not f then error(e) end"),
			  "binary");
	expect_call_error(WRAP("load('return 1', 'x', 'b')"), "only text");
	/* a policy file that is a binary chunk */
	p = load("\x1bLuaT\x00\x19\x93", &err);
	assert_null(p);
	assert_non_null(strstr(err.msg, "binary"));
}

/* load() with a text mode but no env keeps the globals (it once took the
 * loaded chunk itself as _ENV); with an env, the chunk sees that one. */
static void test_load_text_modes(void **state)
{
	(void)state;
	expect_ok(WRAP("assert(load('return math.max(1, 2)', 'x', 't')() == 2)\n"
		       "assert(load('return type(math)', 'x', 'bt')() == 'table')\n"
		       "assert(load('return type(math)', 'x')() == 'table')\n"
		       "assert(load('return y', 'x', 't', {y = 3})() == 3) return nil"),
		  0);
}

static void test_no_io_no_os(void **state)
{
	(void)state;
	expect_call_error(WRAP("os.execute('touch /tmp/pwned')"), "execute");
	expect_call_error(WRAP("io.open('/etc/passwd')"), "io");
	expect_call_error(WRAP("dofile('/etc/passwd')"), "dofile");
	expect_call_error(WRAP("loadfile('/etc/passwd')"), "loadfile");
	expect_call_error(WRAP("require('io')"), "not found");
	expect_call_error(WRAP("require('../../etc/passwd')"), "invalid module name");
	expect_call_error(WRAP("os.getenv('HOME')"), "getenv");
	expect_call_error(WRAP("collectgarbage('stop')"), "not allowed");
	/* what is allowed */
	expect_ok(WRAP("assert(os.time() == 1700000000) assert(os.clock()) assert(os.date('!%Y', 0) == '1970')\n"
		       /* without a time, os.date reads the cluster's clock too */
		       "assert(os.date('!%Y-%m-%dT%H:%M:%S') == '2023-11-14T22:13:20')\n"
		       "assert(os.date('!*t').year == 2023) assert(type(os.date()) == 'string')\n"
		       "assert(require('luascale').plan) assert(utf8.char(72) == 'H') return nil"),
		  0);
}

static void test_non_string_errors(void **state)
{
	(void)state;
	expect_call_error(WRAP("error({code = 1})"), ".lua:3: error raised: a table value");
	expect_call_error(WRAP("error(setmetatable({}, {__tostring = function() return 'custom' end}))"),
			  "custom");
	expect_call_error(WRAP("error()"), ".lua:3: error raised: nil");
	/* a __tostring that loops is policy code too: it gets a budget */
	expect_call_error(WRAP("error(setmetatable({}, {__tostring = function() while true do end end}))"),
			  "table value");
}

static void test_malformed_plans(void **state)
{
	(void)state;
	expect_call_error(WRAP("return 42"), "malformed plan");
	expect_call_error(WRAP("return {actions = {{type = 'explode', node = 'n', reason = 'r'}}}"),
			  "unknown action type");
	expect_call_error(WRAP("return {actions = {{type = 'scale_up', group = 'g', count = -1, reason = 'r'}}}"),
			  "positive integer count");
	expect_call_error(WRAP("return {actions = {{type = 'cordon', node = 'n'}}}"), "needs a reason");
	expect_call_error(WRAP("return {actions = {{type = 'taint', node = 'n', key = 'k', effect = 'Sometimes', reason = 'r'}}}"),
			  "taint effect");
	expect_call_error(WRAP("return {actions = {'cordon'}}"), "actions[1] must be a table");
	/* metamethods are not run while decoding */
	expect_ok(WRAP("return setmetatable({}, {__index = function() while true do end end})"), 0);
}

static void test_plan_builder_errors_name_line(void **state)
{
	(void)state;
	expect_call_error("local ls = require 'luascale'\nlocal P = {}\nfunction P.reconcile()\n"
			  "  local plan = ls.plan()\n  plan:scale_up('g', 0, 'why')\n  return plan\nend\nreturn P\n",
			  ".lua:5: plan:scale_up: count must be a positive integer");
	expect_call_error("local ls = require 'luascale'\nlocal P = {}\nfunction P.reconcile()\n"
			  "  local plan = ls.plan()\n  plan:cordon('n')\n  return plan\nend\nreturn P\n",
			  ".lua:5: plan:cordon: every action needs a reason");
}

static void test_plan_decoded_with_where(void **state)
{
	struct errbuf err;
	struct policy *p = load("local ls = require 'luascale'\nlocal P = {}\nfunction P.reconcile()\n"
				"  local plan = ls.plan()\n  plan:cordon('node-1', 'idle')\n"
				"  plan:scale_up('workers', 3, 'pending')\n  return plan\nend\nreturn P\n",
				&err);
	struct snapshot *s = empty_snapshot();
	struct drain_opts o;
	struct plan plan;

	(void)state;
	assert_non_null(p);
	drain_opts_default(&o);
	assert_int_equal(policy_reconcile(p, s, &o, &plan, NULL, &err), 0);
	assert_int_equal(plan.n_actions, 2);
	assert_int_equal(plan.actions[0].type, ACTION_CORDON);
	assert_string_equal(plan.actions[0].node, "node-1");
	assert_string_equal(plan.actions[0].reason, "idle");
	assert_non_null(strstr(plan.actions[0].where, ".lua:5"));
	assert_int_equal(plan.actions[1].type, ACTION_SCALE_UP);
	assert_int_equal(plan.actions[1].count, 3);
	plan_free(&plan);
	policy_free(p);
	snapshot_free(s);
}

static void test_budget_resets_and_store_persists(void **state)
{
	struct errbuf err;
	struct policy *p = load(WRAP("store.n = (store.n or 0) + 1\n"
				     "if store.n == 1 then while true do end end\n"
				     "if store.n == 2 then return nil end\n"
				     "error('call ' .. store.n)"),
				&err);
	struct snapshot *s = empty_snapshot();
	struct drain_opts o;
	struct plan plan;

	(void)state;
	assert_non_null(p);
	drain_opts_default(&o);
	assert_int_equal(policy_reconcile(p, s, &o, &plan, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "instruction budget"));
	/* a new call gets a new budget; the store kept n = 1 */
	assert_int_equal(policy_reconcile(p, s, &o, &plan, NULL, &err), 0);
	assert_int_equal(policy_reconcile(p, s, &o, &plan, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "call 3"));
	policy_free(p);
	snapshot_free(s);
}

/* A store holding a cycle and shared tables survives reloads, every one
 * of them (its copy once recursed to the depth limit along every path). */
static void test_reload_keeps_cyclic_store(void **state)
{
	static const char src[] = WRAP("if not store.ring then\n"
				       "  store.ring = { name = 'a' } store.ring.next = { name = 'b', next = store.ring }\n"
				       "  local t = store.ring for i = 1, 25 do t = { left = t, right = t } end store.graph = t\n"
				       "end\n"
				       "assert(store.ring.next.next == store.ring, 'cycle lost')\n"
				       "assert(store.graph.left == store.graph.right, 'sharing lost')\n"
				       "return nil");
	struct errbuf err;
	struct policy *p = load(src, &err), *q;
	struct snapshot *s = empty_snapshot();
	struct drain_opts o;
	struct plan plan;
	const char *path;
	char dropped[256];
	int i;

	(void)state;
	assert_non_null(p);
	drain_opts_default(&o);
	assert_int_equal(policy_reconcile(p, s, &o, &plan, NULL, &err), 0);
	for (i = 0; i < 3; i++) {
		path = write_policy(src);
		q = policy_reload(p, path, SOURCE_DIR "/lua", &small, NULL, s, &o, dropped,
				  sizeof(dropped), &err);
		unlink(path);
		if (!q)
			fail_msg("reload %d: %s", i + 1, err.msg);
		assert_string_equal(dropped, "");
		policy_free(p);
		p = q;
		if (policy_reconcile(p, s, &o, &plan, NULL, &err) < 0)
			fail_msg("after reload %d: %s", i + 1, err.msg);
	}
	policy_free(p);
	snapshot_free(s);
}

static void test_load_errors(void **state)
{
	struct errbuf err;

	(void)state;
	assert_null(load("return 1", &err));
	assert_non_null(strstr(err.msg, "must return a table"));
	assert_null(load("return {}", &err));
	assert_non_null(strstr(err.msg, "no reconcile function"));
	assert_null(load("local x = = 1", &err));
	assert_non_null(strstr(err.msg, ".lua:1:"));
	assert_null(load("while true do end", &err));
	assert_non_null(strstr(err.msg, "instruction budget"));
	assert_null(policy_load("/nonexistent/policy.lua", NULL, &small, NULL, &err));
	assert_non_null(strstr(err.msg, "/nonexistent/policy.lua"));
}

static void test_params(void **state)
{
	struct param items[2];
	struct param map;
	struct errbuf err;
	const char *src = "local P = {params = {threshold = 0.5, name = 'x'}}\n"
			  "function P.reconcile(c, params) assert(params.threshold == 0.7, 'threshold') "
			  "assert(params.name == 'x') return nil end\nreturn P\n";
	const char *path;
	struct policy *p;
	struct snapshot *s = empty_snapshot();
	struct drain_opts o;
	struct plan plan;

	(void)state;
	memset(items, 0, sizeof(items));
	memset(&map, 0, sizeof(map));
	map.type = PARAM_MAP;
	map.items = items;
	map.n_items = 1;
	items[0].key = "threshold";
	items[0].type = PARAM_NUMBER;
	items[0].str = "0.7";
	items[0].num = 0.7;

	path = write_policy(src);
	p = policy_load(path, NULL, &small, &map, &err);
	if (!p)
		fail_msg("%s", err.msg);
	drain_opts_default(&o);
	if (policy_reconcile(p, s, &o, &plan, NULL, &err) < 0)
		fail_msg("%s", err.msg);
	policy_free(p);

	/* a param the policy does not declare */
	items[0].key = "threshhold";
	assert_null(policy_load(path, NULL, &small, &map, &err));
	assert_non_null(strstr(err.msg, "not declared"));
	assert_non_null(strstr(err.msg, "threshold"));

	/* wrong type */
	items[0].key = "threshold";
	items[0].type = PARAM_BOOL;
	items[0].b = true;
	assert_null(policy_load(path, NULL, &small, &map, &err));
	assert_non_null(strstr(err.msg, "must be a number"));
	unlink(path);
	snapshot_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_infinite_loop),
		cmocka_unit_test(test_string_rep_bomb),
		cmocka_unit_test(test_pcall_cannot_swallow_budget),
		cmocka_unit_test(test_pcall_cannot_swallow_memory),
		cmocka_unit_test(test_library_work_is_charged),
		cmocka_unit_test(test_coroutine_created_before_call),
		cmocka_unit_test(test_binary_chunk),
		cmocka_unit_test(test_load_text_modes),
		cmocka_unit_test(test_no_io_no_os),
		cmocka_unit_test(test_non_string_errors),
		cmocka_unit_test(test_finalizers_refused),
		cmocka_unit_test(test_size_caps),
		cmocka_unit_test(test_libraries_read_only),
		cmocka_unit_test(test_malformed_plans),
		cmocka_unit_test(test_plan_builder_errors_name_line),
		cmocka_unit_test(test_plan_decoded_with_where),
		cmocka_unit_test(test_budget_resets_and_store_persists),
		cmocka_unit_test(test_reload_keeps_cyclic_store),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_params),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
