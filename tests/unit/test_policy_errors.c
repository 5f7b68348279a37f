/*
 * Policy failures name where they were raised: the policy's file and line
 * (or a required module's, with the policy's line that led there), the
 * library function that raised it, and the policy's own error value only
 * as the message, quoted, never as the location: error(""), error(x, 0),
 * __tostring objects printing another file's name, nil, numbers, tables,
 * assert, nested functions, coroutines, chunks loaded under a file's name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "model.h"
#include "policy/host.h"
#include "sched.h"
#include "test_policy_files.h"

static const struct sandbox_limits limits = {20000000, 64LL << 20, 0, NULL, false};

static char dir[64];

static int make_dir(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/luascale-errors-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static void write_file(const char *name, const char *src)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(src, f);
	fclose(f);
}

static int remove_dir(void **state)
{
	const char *names[] = {"main.lua", "helper.lua", "broken.lua", NULL};
	char path[128];
	int i;

	(void)state;
	for (i = 0; names[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	return rmdir(dir);
}

/* The message of one failed reconcile of 'body' (lines 3.. of main.lua);
 * "$" in 'want' stands for the policy's folder; a '*' at its end matches
 * the rest (Lua's own words, which its versions change). */
static void expect_message(const char *body, const char *want)
{
	char src[2048], path[128], expected[1024];
	struct errbuf err;
	struct policy *p;
	struct snapshot *s = empty_snapshot();
	struct drain_opts o;
	struct plan plan;
	const char *w;
	size_t n = 0;

	snprintf(src, sizeof(src), "local P = {}\nfunction P.reconcile(cluster)\n%s\nend\nreturn P\n", body);
	write_file("main.lua", src);
	snprintf(path, sizeof(path), "%s/main.lua", dir);
	p = policy_load(path, SOURCE_DIR "/lua", &limits, NULL, &err);
	if (!p)
		fail_msg("load failed: %s", err.msg);
	drain_opts_default(&o);
	assert_int_equal(policy_reconcile(p, s, &o, &plan, NULL, &err), -1);
	assert_int_equal(plan.n_actions, 0);
	for (w = want; *w && n + strlen(dir) + 1 < sizeof(expected); w++) {
		if (*w == '$') {
			memcpy(expected + n, dir, strlen(dir));
			n += strlen(dir);
		} else {
			expected[n++] = *w;
		}
	}
	expected[n] = '\0';
	if (n > 0 && expected[n - 1] == '*') {
		if (strncmp(err.msg, expected, n - 1) != 0)
			fail_msg("\"%s\" does not start with \"%.*s\"", err.msg, (int)(n - 1), expected);
	} else {
		assert_string_equal(err.msg, expected);
	}
	policy_free(p);
	snapshot_free(s);
}

/* The policy's own error values: its text is the message, in quotes, the
 * location is the line that raised it. */
static void test_error_values(void **state)
{
	(void)state;
	expect_message("  error('')", "$/main.lua:3: error raised: \"\"");
	expect_message("  error('x', 0)", "$/main.lua:3: error raised: \"x\"");
	expect_message("  error('no room for ' .. 3 .. ' pods')",
		       "$/main.lua:3: error raised: \"no room for 3 pods\"");
	/* text that looks like a location is only text */
	expect_message("  error('other.lua:1: boom')", "$/main.lua:3: error raised: \"other.lua:1: boom\"");
	expect_message("  error('other.lua:1: boom', 0)", "$/main.lua:3: error raised: \"other.lua:1: boom\"");
	expect_message("  error(setmetatable({}, {__tostring = function() return 'other.lua:1: boom' end}))",
		       "$/main.lua:3: error raised: \"other.lua:1: boom\" (from a table's __tostring)");
	/* values that are not strings */
	expect_message("  error()", "$/main.lua:3: error raised: nil");
	expect_message("  error(nil)", "$/main.lua:3: error raised: nil");
	expect_message("  error(42)", "$/main.lua:3: error raised: 42");
	expect_message("  error(false)", "$/main.lua:3: error raised: false");
	expect_message("  error({code = 1})", "$/main.lua:3: error raised: a table value (not a string)");
	expect_message("  error(setmetatable({}, {__tostring = function() return {} end}))",
		       "$/main.lua:3: error raised: a table value (not a string)");
	/* a level blames the caller, as Lua does */
	expect_message("  local function check(x) if not x then error('need x', 2) end end\n\n  check(nil)",
		       "$/main.lua:5: error raised: \"need x\"");
	/* assert */
	expect_message("  assert(false)", "$/main.lua:3: assertion failed!");
	expect_message("  assert(nil, 'no nodes')", "$/main.lua:3: assertion failed: \"no nodes\"");
	expect_message("  assert(1 == 2, {})", "$/main.lua:3: assertion failed: a table value (not a string)");
}

/* Errors of Lua itself and of library functions: the function's name. */
static void test_runtime_and_library_errors(void **state)
{
	(void)state;
	expect_message("  local t = nil\n  return t.x", "$/main.lua:4: attempt to index a nil value (local 't')");
	expect_message("  return string.rep('x', {})",
		       "$/main.lua:3: string.rep: bad argument #2 to 'rep' (number expected, got table)");
	expect_message("  return ('x'):find('%')", "$/main.lua:3: string.find: malformed pattern (ends with '%')");
	expect_message("  return table.concat({{}})",
		       "$/main.lua:3: table.concat: invalid value *");
	expect_message("  return math.floor({})",
		       "$/main.lua:3: math.floor: bad argument #1 to 'floor' (number expected, got table)");
	expect_message("  return math.random(2, 1)",
		       "$/main.lua:3: math.random: bad argument #1 to 'random' (interval is empty)");
	expect_message("  return utf8.char(-1)",
		       "$/main.lua:3: utf8.char: bad argument #1 to 'char' (value out of range)");
	expect_message("  return os.date('%Ez')",
		       "$/main.lua:3: os.date: bad argument #1 to 'date' (invalid conversion*");
	expect_message("  return require('missing')",
		       "$/main.lua:3: require: module \"missing\" not found in " SOURCE_DIR "/lua or $");
	/* called from another library function */
	expect_message("  local t = {'b', 'a'}\n  table.sort(t, function(a, b) return a:rep({}) end)",
		       "$/main.lua:4: string.rep: bad argument #1 to 'rep' (number expected, got table)");
}

/* Where it was raised, however deep: nested functions, required modules,
 * coroutines, loaded chunks. */
static void test_where_raised(void **state)
{
	(void)state;
	expect_message("  local function a()\n    local function b()\n      error('deep')\n    end\n    b()\n  end\n  a()",
		       "$/main.lua:5: error raised: \"deep\"");
	write_file("helper.lua", "local M = {}\nfunction M.boom()\n  error('from helper')\nend\n"
				 "function M.index() local t return t.x end\nreturn M\n");
	expect_message("  local h = require 'helper'\n  h.boom()",
		       "$/helper.lua:3: error raised: \"from helper\" (called from $/main.lua:4)");
	expect_message("  local h = require 'helper'\n\n  local v = h.index() return v",
		       "$/helper.lua:5: attempt to index a nil value (local 't') (called from $/main.lua:5)");
	write_file("broken.lua", "local x = nil\nreturn x.y\n");
	expect_message("  return require 'broken'",
		       "$/broken.lua:2: attempt to index a nil value (local 'x') (called from $/main.lua:3)");
	/* in a coroutine: where in it, and where it was resumed */
	expect_message("  local f = coroutine.wrap(function()\n    error('in co')\n  end)\n  f()",
		       "$/main.lua:4: error raised: \"in co\" (in a coroutine resumed at $/main.lua:6)");
	expect_message("  local f = coroutine.wrap(function() local t return t.x end)\n  f()",
		       "$/main.lua:3: attempt to index a nil value (local 't') (in a coroutine resumed at $/main.lua:4)");
	expect_message("  coroutine.wrap(function() coroutine.wrap(function() error({}) end)() end)()",
		       "$/main.lua:3: error raised: a table value (not a string) (in a coroutine resumed at $/main.lua:3)");
	/* resumed, then raised again by the policy: where it raised it */
	expect_message("  local ok, e = coroutine.resume(coroutine.create(function() error('inner') end))\n"
		       "  error(e, 0)",
		       "$/main.lua:4: error raised: \"$/main.lua:3: inner\"");
	/* a chunk loaded under a file's name is still a loaded string */
	expect_message("  load(\"error('boom')\", '@other.lua')()",
		       "[string \"other.lua\"]:1: error raised: \"boom\" (called from $/main.lua:3)");
	expect_message("  load(\"error('boom')\", '=other.lua:9')()",
		       "[string \"other.lua:9\"]:1: error raised: \"boom\" (called from $/main.lua:3)");
}

/* Inside the policy, pcall and error values are Lua's as ever. */
static void test_values_seen_by_the_policy(void **state)
{
	char path[128];
	struct errbuf err;
	struct policy *p;
	struct snapshot *s = empty_snapshot();
	struct drain_opts o;
	struct plan plan;

	(void)state;
	write_file("main.lua",
		   "local P = {}\nfunction P.reconcile()\n"
		   "  local ok, e = pcall(function() error('x') end)\n"
		   "  assert(not ok and e == '" "$DIR" "/main.lua:3: x', e)\n"
		   "  ok, e = pcall(error, {k = 1}) assert(e.k == 1)\n"
		   "  ok, e = pcall(error) assert(e == nil)\n"
		   "  ok, e = pcall(assert, false, 'm') assert(e == 'm')\n"
		   "  ok, e = pcall(string.rep) assert(e:find(\"bad argument #1 to 'string.rep'\", 1, true))\n"
		   "  assert(select('#', assert(1, 2, 3)) == 3)\n"
		   "  return {}\nend\nreturn P\n");
	/* the expected location needs the folder: substitute it */
	{
		char src[1024], fixed[1024], *at;

		snprintf(path, sizeof(path), "%s/main.lua", dir);
		{
			FILE *f = fopen(path, "r");
			size_t n;

			assert_non_null(f);
			n = fread(src, 1, sizeof(src) - 1, f);
			src[n] = '\0';
			fclose(f);
		}
		at = strstr(src, "$DIR");
		assert_non_null(at);
		snprintf(fixed, sizeof(fixed), "%.*s%s%s", (int)(at - src), src, dir, at + 4);
		write_file("main.lua", fixed);
	}
	p = policy_load(path, SOURCE_DIR "/lua", &limits, NULL, &err);
	if (!p)
		fail_msg("load failed: %s", err.msg);
	drain_opts_default(&o);
	if (policy_reconcile(p, s, &o, &plan, NULL, &err) < 0)
		fail_msg("reconcile failed: %s", err.msg);
	plan_free(&plan);
	policy_free(p);
	snapshot_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_error_values),
		cmocka_unit_test(test_runtime_and_library_errors),
		cmocka_unit_test(test_where_raised),
		cmocka_unit_test(test_values_seen_by_the_policy),
	};

	return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
