/*
 * cli/test: `luascale test` — runs busted over policy specs inside this
 * process, with the luascale Lua library on the path and the engine
 * ("luascale.core") built in, so a user needs nothing but the package.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "cli/cli.h"
#include "policy/host.h"

int luaopen_luascale_core(lua_State *L);

static void test_usage(FILE *f)
{
	fputs("usage: luascale test [BUSTED OPTIONS] [PATH...]\n"
	      "\n"
	      "Runs the busted specs in PATH (default: ./spec) with the luascale\n"
	      "library and engine available: `require \"luascale.testing\"` in a spec\n"
	      "runs a policy through the same sandbox, limits and safety checks as\n"
	      "the daemon. Options are busted's (for example -o TAP, --filter NAME).\n"
	      "Exit status 0 when every spec passed.\n",
	      f);
}

int cli_test(int argc, char **argv)
{
	const char *lib = policy_default_lib_dir();
	lua_State *L;
	int i, rc;

	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		test_usage(stdout);
		return EXIT_OK;
	}
	L = luaL_newstate();
	if (!L) {
		fprintf(stderr, "luascale test: out of memory\n");
		return EXIT_INPUT;
	}
	luaL_openlibs(L);

	/* package.path: the luascale library first, then Lua's defaults */
	lua_getglobal(L, "package");
	lua_getfield(L, -1, "path");
	lua_pushfstring(L, "%s/?.lua;%s/?/init.lua;%s", lib, lib, lua_tostring(L, -1));
	lua_setfield(L, -3, "path");
	lua_pop(L, 1);
	lua_getfield(L, -1, "preload");
	lua_pushcfunction(L, luaopen_luascale_core);
	lua_setfield(L, -2, "luascale.core");
	lua_pop(L, 2);

	/* arg: what busted's runner parses */
	lua_createtable(L, argc, 1);
	lua_pushliteral(L, "luascale test");
	lua_rawseti(L, -2, 0);
	for (i = 1; i < argc; i++) {
		lua_pushstring(L, argv[i]);
		lua_rawseti(L, -2, i);
	}
	lua_setglobal(L, "arg");

	/* busted exits the process itself with its status when a spec fails */
	if (luaL_dostring(L, "local ok, runner = pcall(require, 'busted.runner')\n"
			     "if not ok then error('busted is not installed (Debian package lua-busted): ' .. runner, 0) end\n"
			     "runner({ standalone = false })") != LUA_OK) {
		fprintf(stderr, "luascale test: %s\n", lua_tostring(L, -1));
		rc = EXIT_INPUT;
	} else {
		rc = EXIT_OK;
	}
	lua_close(L);
	return rc;
}
