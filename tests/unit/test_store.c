/*
 * store_copy: plain data crosses from one Lua state to another intact;
 * what is not data is left out and named; shared tables and cycles are
 * copied once and stay shared; the copy has a work limit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "policy/store.h"

static void run(lua_State *L, const char *code)
{
	if (luaL_dostring(L, code) != LUA_OK)
		fail_msg("%s", lua_tostring(L, -1));
}

static void test_copy_data(void **state)
{
	lua_State *a = luaL_newstate(), *b = luaL_newstate();
	struct errbuf err;
	char dropped[512];

	(void)state;
	luaL_openlibs(a);
	luaL_openlibs(b);
	run(a, "return { n = 42, f = 0.5, s = 'x\\0y', yes = true, list = {1, 2, {3}},"
	       "       [7] = 'seven', [2.5] = 'float key', [true] = 'bool key',"
	       "       fn = print, co = coroutine.create(print), nested = { deep = { deeper = 'ok' } } }");
	assert_int_equal(store_copy(a, -1, b, 0, dropped, sizeof(dropped), &err), 0);
	lua_setglobal(b, "s");
	run(b, "assert(math.type(s.n) == 'integer' and s.n == 42)\n"
	       "assert(math.type(s.f) == 'float' and s.f == 0.5)\n"
	       "assert(s.s == 'x\\0y' and s.yes == true)\n"
	       "assert(#s.list == 3 and s.list[3][1] == 3)\n"
	       "assert(s[7] == 'seven' and s[2.5] == 'float key' and s[true] == 'bool key')\n"
	       "assert(s.fn == nil and s.co == nil)\n"
	       "assert(s.nested.deep.deeper == 'ok')");
	assert_non_null(strstr(dropped, "store.fn (function)"));
	assert_non_null(strstr(dropped, "store.co (thread)"));
	lua_close(a);
	lua_close(b);
}

static void test_cycle_and_metatables(void **state)
{
	lua_State *a = luaL_newstate(), *b = luaL_newstate();
	struct errbuf err;
	char dropped[512];

	(void)state;
	luaL_openlibs(a);
	luaL_openlibs(b);
	/* a cycle, and an __index/__pairs that must not run during the copy */
	run(a, "local t = setmetatable({ v = 1 }, { __index = function() error('ran') end,"
	       "  __pairs = function() error('ran') end })\n"
	       "t.self = t\nreturn t");
	assert_int_equal(store_copy(a, -1, b, 0, dropped, sizeof(dropped), &err), 0);
	lua_setglobal(b, "s");
	run(b, "assert(s.v == 1 and s.self == s and getmetatable(s) == nil)");
	assert_string_equal(dropped, "");
	lua_close(a);
	lua_close(b);
}

/* Shared tables stay shared, and a graph of shared tables is copied in
 * time linear in its size (once, a table referenced twice at each of 40
 * levels was copied 2^32 times). */
static void test_shared_and_cycles_copied_once(void **state)
{
	lua_State *a = luaL_newstate(), *b = luaL_newstate();
	struct errbuf err;
	char dropped[512];

	(void)state;
	luaL_openlibs(a);
	luaL_openlibs(b);
	run(a, "local leaf = { n = 0 }\n"
	       "local t = leaf\n"
	       "for i = 1, 40 do t = { left = t, right = t, n = i } end\n"
	       "local ring = { name = 'a' } ring.next = { name = 'b', next = ring }\n"
	       "return { graph = t, ring = ring, again = ring }");
	assert_int_equal(store_copy(a, -1, b, 0, dropped, sizeof(dropped), &err), 0);
	lua_setglobal(b, "s");
	run(b, "assert(s.graph.n == 40 and s.graph.left == s.graph.right)\n"
	       "assert(s.ring == s.again and s.ring.next.next == s.ring and s.ring.next.name == 'b')");
	lua_close(a);
	lua_close(b);
}

/* A store too large for the work limit is refused with a message. */
static void test_work_limit(void **state)
{
	lua_State *a = luaL_newstate(), *b = luaL_newstate();
	struct errbuf err;

	(void)state;
	luaL_openlibs(a);
	luaL_openlibs(b);
	run(a, "local t = {} for i = 1, 10000 do t[i] = { i } end return t");
	assert_int_equal(store_copy(a, -1, b, 1000, NULL, 0, &err), -1);
	assert_non_null(strstr(err.msg, "cannot copy the store"));
	assert_non_null(strstr(err.msg, "instruction budget"));
	assert_int_equal(lua_gettop(b), 0);
	assert_int_equal(store_copy(a, -1, b, 100000, NULL, 0, &err), 0);
	lua_close(a);
	lua_close(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy_data),
		cmocka_unit_test(test_cycle_and_metatables),
		cmocka_unit_test(test_shared_and_cycles_copied_once),
		cmocka_unit_test(test_work_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
