/*
 * Tests for policy/param_text.c: a policy's params as text — sorted keys,
 * the config's values over the defaults, numbers as Lua writes them,
 * lists and maps, depth and length bounds, control characters.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <unistd.h>

#include "config.h"
#include "policy/host.h"
#include "policy/param_text.h"

static const char policy_src[] =
	"local P = {}\n"
	"P.params = {\n"
	"  unneeded_for = '10m',\n"
	"  ratio = 0.5,\n"
	"  whole = 2.0,\n"
	"  count = 3,\n"
	"  on = false,\n"
	"  zones = {'b', 'a', 10},\n"
	"  map = {z = 1, a = {x = true}},\n"
	"  empty = {},\n"
	"  deep = {{{{{1}}}}},\n"
	"  long = string.rep('x', 1000),\n"
	"  ['bad\\27[31mkey'] = 'v\\n\\tw',\n"
	"}\n"
	"setmetatable(P.params, {__index = function() error('no metamethod may run') end})\n"
	"function P.reconcile() return require('luascale').plan() end\n"
	"return P\n";

static const char *value_of(const struct param_text *v, size_t n, const char *key, bool dflt)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i].key, key) == 0)
			return dflt ? v[i].dflt : v[i].value;
	fail_msg("no param %s", key);
	return NULL;
}

static void test_params_as_text(void **state)
{
	char dir[] = "/tmp/test_param_text.XXXXXX", path[64];
	struct sandbox_limits lim;
	struct param items[2], map;
	struct param_text *v;
	struct policy *p;
	struct errbuf err;
	ssize_t n, i;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/p.lua", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(policy_src, f);
	fclose(f);

	/* the config sets two of them */
	memset(items, 0, sizeof(items));
	items[0].key = "unneeded_for";
	items[0].type = PARAM_STRING;
	items[0].str = "3m";
	items[1].key = "count";
	items[1].type = PARAM_INT;
	items[1].str = "7";
	items[1].i = 7;
	memset(&map, 0, sizeof(map));
	map.type = PARAM_MAP;
	map.items = items;
	map.n_items = 2;
	memset(&lim, 0, sizeof(lim));
	p = policy_load(path, NULL, &lim, &map, &err);
	if (!p)
		fail_msg("%s", err.msg);
	n = param_text_list(p, &v);
	assert_int_equal(n, 11);
	for (i = 1; i < n; i++)
		assert_true(strcmp(v[i - 1].key, v[i].key) < 0);

	assert_string_equal(value_of(v, n, "unneeded_for", false), "3m");
	assert_string_equal(value_of(v, n, "unneeded_for", true), "10m");
	assert_string_equal(value_of(v, n, "count", false), "7");
	assert_string_equal(value_of(v, n, "count", true), "3");
	assert_string_equal(value_of(v, n, "ratio", false), "0.5");
	assert_string_equal(value_of(v, n, "whole", false), "2.0");
	assert_string_equal(value_of(v, n, "on", false), "false");
	assert_string_equal(value_of(v, n, "zones", false), "{b, a, 10}");
	assert_string_equal(value_of(v, n, "map", false), "{a = {x = true}, z = 1}");
	assert_string_equal(value_of(v, n, "empty", false), "{}");
	assert_string_equal(value_of(v, n, "deep", false), "{{{{{...}}}}}");
	assert_int_equal(strlen(value_of(v, n, "long", false)), PARAM_TEXT_MAX - 1);
	assert_string_equal(value_of(v, n, "long", false) + PARAM_TEXT_MAX - 4, "...");
	/* control characters cannot reach a terminal */
	assert_string_equal(value_of(v, n, "bad?[31mkey", false), "v??w");

	/* the policy still runs as loaded: nothing was left on its stack */
	param_text_free(v, (size_t)n);
	n = param_text_list(p, &v);
	assert_int_equal(n, 11);
	param_text_free(v, (size_t)n);
	policy_free(p);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_params_as_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
