/*
 * cli/test: `luascale test` — runs busted over policy specs inside this
 * process, with the luascale Lua library on the path and the engine
 * ("luascale.core") built in, so a user needs nothing but the package.
 * Without a path it runs the project's specs (./spec, ./tests/policies).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
	      "Runs the busted specs in PATH with the luascale library and engine\n"
	      "available. Without a PATH: ./spec and ./tests/policies, those of them\n"
	      "that exist in the working directory (or what ./.busted names).\n"
	      "\n"
	      "`require \"luascale.testing\"` in a spec runs a policy through the same\n"
	      "sandbox, limits and safety checks as the daemon. Options are busted's (for example -o TAP, --filter NAME).\n"
	      "Exit status 0 when every spec passed.\n",
	      f);
}

/* Where a project keeps its specs, looked for when no PATH is given. */
static const char *const default_spec_dirs[] = { "spec", "tests/policies", NULL };

/* busted's options that take the next argument as their value. */
static bool takes_value(const char *opt)
{
	static const char *const with_value[] = {
		"-o", "--output", "-p", "--pattern", "-t", "--tags", "--exclude-tags",
		"-f", "--config-file", "-r", "--run", "-C", "--directory", "--filter",
		"--filter-out", "-e", "-m", "--lpath", "--cpath", "--loaders", "--helper",
		"--repeat", "--seed", "--lang", "--exclude-pattern", "-Xoutput", "-Xhelper",
		"--name", NULL,
	};
	size_t i;

	for (i = 0; with_value[i]; i++)
		if (strcmp(opt, with_value[i]) == 0)
			return true;
	return false;
}

/* True when argv names a spec file or directory (an argument that is not
 * an option nor an option's value). */
static bool has_path(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return i + 1 < argc;
		if (argv[i][0] != '-')
			return true;
		if (!strchr(argv[i], '=') && takes_value(argv[i]))
			i++;
	}
	return false;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int cli_test(int argc, char **argv)
{
	const char *lib = policy_default_lib_dir();
	const char *found[sizeof(default_spec_dirs) / sizeof(default_spec_dirs[0])];
	size_t n_found = 0, k;
	struct stat st;
	lua_State *L;
	int i, rc;

	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		test_usage(stdout);
		return EXIT_OK;
	}
	/* no PATH: the project's specs, unless a .busted file says where */
	if (!has_path(argc, argv) && stat(".busted", &st) != 0) {
		for (k = 0; default_spec_dirs[k]; k++)
			if (is_dir(default_spec_dirs[k]))
				found[n_found++] = default_spec_dirs[k];
		if (!n_found) {
			fprintf(stderr, "luascale test: no specs here: neither ./spec nor ./tests/policies is a directory; "
					"give the spec files or directories to run: luascale test PATH...\n");
			return EXIT_USAGE;
		}
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
	for (k = 0; k < n_found; k++) {
		lua_pushstring(L, found[k]);
		lua_rawseti(L, -2, i++);
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
