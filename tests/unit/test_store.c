/*
 * store_copy: plain data crosses from one Lua state to another intact;
 * what is not data is left out and named; cycles end at the depth limit.
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
	assert_int_equal(store_copy(a, -1, b, dropped, sizeof(dropped), &err), 0);
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
	assert_int_equal(store_copy(a, -1, b, dropped, sizeof(dropped), &err), 0);
	lua_setglobal(b, "s");
	run(b, "assert(s.v == 1 and s.self.self.v == 1 and getmetatable(s) == nil)");
	assert_non_null(strstr(dropped, "nested too deep"));
	lua_close(a);
	lua_close(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy_data),
		cmocka_unit_test(test_cycle_and_metatables),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
