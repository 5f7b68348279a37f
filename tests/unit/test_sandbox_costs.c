/*
 * Policy sandbox: what one library call may cost. Hostile patterns (a set
 * rescanned at every position, backtracking, %b, %f, back-references,
 * gsub and gmatch over many matches), sorts of long strings, plain
 * searches, conversions: each is charged for the work the C code really
 * does, refused before it runs when its worst case is over the limit of
 * one call, and a call that ran past the CPU deadline fails at its line
 * with no plan, whatever the policy does after it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <lauxlib.h>
#include <lua.h>

#include "model.h"
#include "policy/host.h"
#include "policy/sandbox.h"
#include "sched.h"
#include "test_policy_files.h"

/* The deadline out of reach (10 minutes): what ends these calls is the
 * charge, so the tests do not depend on this machine's speed. */
static const struct sandbox_limits charged = {20000000, 256LL << 20, 600000, NULL, false};
/* A budget out of reach and a deadline of 'cpu_ms': only the clock ends the call. */
static struct sandbox_limits clocked(int64_t cpu_ms)
{
	struct sandbox_limits l = {INT64_MAX / 8, 256LL << 20, cpu_ms, NULL, false};

	return l;
}

#define WRAP(body) \
	"local P = {}\nfunction P.reconcile(cluster, params, store)\n" body "\nend\nreturn P\n"

/* Runs one reconcile of 'src'; returns its status with the message in 'err'
 * and the path in 'path'. A failed reconcile must leave no actions. */
static int reconcile(const char *src, const struct sandbox_limits *lim, char *path, size_t plen,
		     struct errbuf *err)
{
	const char *p = write_policy(src);
	struct policy *pol;
	struct snapshot *s = empty_snapshot();
	struct drain_opts o;
	struct plan plan;
	int rc;

	snprintf(path, plen, "%s", p);
	pol = policy_load(p, SOURCE_DIR "/lua", lim, NULL, err);
	unlink(p);
	if (!pol)
		fail_msg("load failed: %s", err->msg);
	drain_opts_default(&o);
	rc = policy_reconcile(pol, s, &o, &plan, NULL, err);
	if (rc < 0)
		assert_int_equal(plan.n_actions, 0);
	else
		plan_free(&plan);
	policy_free(pol);
	snapshot_free(s);
	return rc;
}

/* The reconcile of 'src' fails with "<path>:<line>: " then 'needle'. */
static void expect_failed_at(const char *src, const struct sandbox_limits *lim, int line,
			     const char *needle)
{
	char path[128], where[160];
	struct errbuf err;

	if (reconcile(src, lim, path, sizeof(path), &err) == 0)
		fail_msg("the policy succeeded; expected \"%s\" at line %d", needle, line);
	snprintf(where, sizeof(where), "%s:%d: ", path, line);
	if (strncmp(err.msg, where, strlen(where)) != 0)
		fail_msg("error \"%s\" is not located at %s", err.msg, where);
	if (!strstr(err.msg, needle))
		fail_msg("error \"%s\" does not contain \"%s\"", err.msg, needle);
}

static void expect_ok(const char *src, const struct sandbox_limits *lim)
{
	char path[128];
	struct errbuf err;

	if (reconcile(src, lim, path, sizeof(path), &err) < 0)
		fail_msg("reconcile failed: %s", err.msg);
}

#define REFUSED "over the policy sandbox's limit of 4e+08 for one call"

/* The report's case: a set of 2^17 bytes, rescanned at each of 2^17
 * positions (about 20 s of CPU), was charged as one step. Now it is
 * refused before it runs, at its line, whatever the deadline. */
static void test_set_rescanned_at_every_position(void **state)
{
	(void)state;
	expect_failed_at(WRAP("local s = string.rep('a', 2^17)\n"
			      "local r = s:find('[' .. string.rep('b', 2^17) .. ']')\nreturn {}"),
			 &charged, 4, "string.find: pattern \"[bbbb");
	expect_failed_at(WRAP("local r = string.rep('a', 2^17):find('[' .. string.rep('b', 2^17) .. ']')"),
			 &charged, 3, REFUSED);
	/* the other functions, a negated set, a frontier, a set with classes */
	expect_failed_at(WRAP("return string.rep('a', 2^17):match('[^' .. string.rep('a', 2^17) .. ']')"),
			 &charged, 3, "string.match: pattern");
	expect_failed_at(WRAP("for w in string.rep('a', 2^16):gmatch('[' .. string.rep('b', 2^16) .. ']') do end"),
			 &charged, 3, "string.gmatch: pattern");
	expect_failed_at(WRAP("return string.rep('a', 2^16):gsub('%f[' .. string.rep('b', 2^16) .. ']', 'x')"),
			 &charged, 3, "string.gsub: pattern");
	expect_failed_at(WRAP("return string.rep('!', 2^16):find('[' .. string.rep('%a', 2^15) .. ']')"),
			 &charged, 3, REFUSED);
	/* a set scanned at every position of a moderate string is allowed, and
	 * charged for it: ten of them spend a budget of 20 million */
	expect_failed_at(WRAP("local s, p = string.rep('a', 10000), '[' .. string.rep('b', 1000) .. ']'\n"
			      "for i = 1, 10 do s:find(p) end"),
			 &charged, 4, "instruction budget");
}

/* Backtracking: each quantifier with more pattern after it multiplies the
 * work by the string's length; %b, back-references, optional items too. */
static void test_backtracking_patterns(void **state)
{
	(void)state;
	expect_failed_at(WRAP("return string.rep('a', 5000):find('a*a*a*b')"), &charged, 3, REFUSED);
	expect_failed_at(WRAP("return string.rep('a', 5000):match('.-.-.-x')"), &charged, 3, REFUSED);
	expect_failed_at(WRAP("return string.rep('a', 3000):match('(.-)(.-)%2%1b')"), &charged, 3, REFUSED);
	expect_failed_at(WRAP("return string.rep('(', 100000):gsub('%b()', '')"), &charged, 3, REFUSED);
	expect_failed_at(WRAP("return string.rep('a', 40):match(string.rep('a?', 40) .. string.rep('a', 40))"),
			 &charged, 3, REFUSED);
	expect_failed_at(WRAP("return (string.rep(' ', 100000) .. 'x'):gsub('%s+$', '')"), &charged, 3, REFUSED);
	/* anchored, the same work happens once, not at every position */
	expect_ok(WRAP("assert(string.rep('a', 5000):find('^a*b') == nil) return nil"), &charged);
}

/* gsub and gmatch over many matches are charged for every match; a
 * replacement string is scanned at each one. */
static void test_many_matches(void **state)
{
	(void)state;
	expect_failed_at(WRAP("return string.rep('a', 1000000):gsub('', string.rep('%0', 1000))"),
			 &charged, 3, REFUSED);
	expect_failed_at(WRAP("local s = string.rep('a,', 200000)\n"
			      "for i = 1, 20 do for w in s:gmatch('[^,]+') do end end"),
			 &charged, 4, "instruction budget");
	/* linear patterns over long strings are fine */
	expect_ok(WRAP("local s = string.rep('abc,', 100000) local n = 0\n"
		       "for w in s:gmatch('[^,]+') do n = n + 1 end assert(n == 100000)\n"
		       "local t, k = s:gsub(',', ';') assert(k == 100000)\n"
		       "assert(('  x  '):match('^%s*(.-)%s*$') == 'x')\n"
		       "assert(string.rep('a', 1000):match('^%s*(.-)%s*$'))\n"
		       "return nil"),
		  &charged);
}

/* The other functions whose work grows with their arguments. */
static void test_other_library_costs(void **state)
{
	(void)state;
	/* rep of an empty string loops once per piece */
	expect_failed_at(WRAP("return string.rep('', 2^50)"), &charged, 3, "string.rep: policy exceeded its instruction budget");
	/* a plain search of a long needle at every position */
	expect_failed_at(WRAP("local s = string.rep('a', 8 << 20)\nreturn s:find(string.rep('a', 4000) .. 'b', 1, true)"),
			 &charged, 4, "string.find: searching");
	/* sorting long strings that differ only at their end */
	expect_failed_at(WRAP("local t, p = {}, string.rep('x', 1 << 20)\n"
			      "for i = 1, 200 do t[i] = p .. (i % 7) end\ntable.sort(t)"),
			 &charged, 5, "table.sort: policy exceeded its instruction budget");
	/* converting, comparing: a byte at a time */
	expect_failed_at(WRAP("local s = string.rep('x', 8 << 20)\nfor i = 1, 10 do s:upper() end"),
			 &charged, 4, "instruction budget");
	expect_failed_at(WRAP("local a = string.rep('x', 32 << 20) local b = a:sub(1, -2) .. 'y'\n"
			      "for i = 1, 100 do rawequal(a, b) end"),
			 &charged, 4, "instruction budget");
	/* the budget's error names the call that would have spent it */
	expect_failed_at(WRAP("local s = string.rep('a', 100000)\nreturn s:find('a*a*b')"),
			 &charged, 4, "string.find: ");
}

/* A library call that finished past the deadline fails at its own line,
 * though the policy returns right after it (the hook would not have come
 * again before the end). */
static void test_deadline_checked_after_each_call(void **state)
{
	struct sandbox_limits lim = clocked(20);

	(void)state;
	/* about 3 * 10^8 steps, allowed, and more than 20 ms of CPU (60 ms here) */
	expect_failed_at("local s = string.rep('a', 2^17)\nlocal p = '[' .. string.rep('b', 600) .. ']'\n"
			 "local P = {}\nfunction P.reconcile()\n  local r = s:find(p)\n  return {}\nend\nreturn P\n",
			 &lim, 5, "policy exceeded its CPU time limit (20ms)");
}

/* ---- C functions the sandbox does not wrap (cluster helpers) ---- */

static int64_t thread_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* burn(ms [, charge]): charges 'charge' like a cluster helper, then uses
 * 'ms' of CPU time (measured on the thread's CPU clock, not waited for). */
static int l_burn(lua_State *L)
{
	int64_t ms = luaL_checkinteger(L, 1), until;
	volatile uint64_t x = 0;

	if (!lua_isnoneornil(L, 2))
		sandbox_charge(L, (double)luaL_checkinteger(L, 2));
	until = thread_cpu_ms() + ms;
	while (thread_cpu_ms() < until)
		x++;
	return 0;
}

/* Runs 'src' (a chunk) in a bare sandbox with burn() and a deadline of
 * 'cpu_ms'; returns sandbox_call's status. */
static int run_with_burn(const char *src, int64_t cpu_ms, char *path, size_t plen, struct errbuf *err)
{
	struct sandbox_limits lim = clocked(cpu_ms);
	struct sandbox *sb = sandbox_new(SOURCE_DIR "/lua", NULL, &lim, err);
	const char *p = write_policy(src);
	int rc;

	assert_non_null(sb);
	snprintf(path, plen, "%s", p);
	lua_pushcfunction(sandbox_state(sb), l_burn);
	lua_setglobal(sandbox_state(sb), "burn");
	assert_int_equal(sandbox_loadfile(sb, p, err), 0);
	unlink(p);
	rc = sandbox_call(sb, 0, 1, err);
	if (rc == 0)
		lua_pop(sandbox_state(sb), 1);
	sandbox_free(sb);
	return rc;
}

/* A helper charged for a lot of work makes the next instruction, once it
 * returned, read the clock: it fails at the line after it. */
static void test_helper_overrun_located(void **state)
{
	char path[128], where[160];
	struct errbuf err;

	(void)state;
	assert_int_equal(run_with_burn("burn(30, 100000)\nlocal x = 1\nreturn x\n", 5, path, sizeof(path), &err), -1);
	snprintf(where, sizeof(where), "%s:", path);
	if (strncmp(err.msg, where, strlen(where)) != 0 || !strstr(err.msg, "CPU time limit (5ms)"))
		fail_msg("error \"%s\" is not the deadline at a line of %s", err.msg, path);
}

/* Whatever overran last, a call that finished past its deadline has
 * failed: its result is not used. */
static void test_finished_past_deadline_fails(void **state)
{
	char path[128], want[200];
	struct errbuf err;

	(void)state;
	assert_int_equal(run_with_burn("return burn(30)\n", 5, path, sizeof(path), &err), -1);
	snprintf(want, sizeof(want), "%s: policy exceeded its CPU time limit (5ms)", path);
	assert_string_equal(err.msg, want);
	/* and one within its deadline succeeds */
	assert_int_equal(run_with_burn("burn(1) return 1\n", 5000, path, sizeof(path), &err), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_rescanned_at_every_position),
		cmocka_unit_test(test_backtracking_patterns),
		cmocka_unit_test(test_many_matches),
		cmocka_unit_test(test_other_library_costs),
		cmocka_unit_test(test_deadline_checked_after_each_call),
		cmocka_unit_test(test_helper_overrun_located),
		cmocka_unit_test(test_finished_past_deadline_fails),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
