/*
 * Tests for disruption.expire_after: a node group's own, the top level's
 * for groups without one, 0 and "Never" for no expiry, the errors naming
 * the key by file:line:col and its path; and g.expire_after in a policy's
 * view of the group (seconds, nil when the group has no expiry).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"

static struct config *parse(const char *yaml, struct errbuf *err)
{
	struct config_opts o = {0};

	o.flags = CONFIG_OFFLINE;
	return config_parse_opts(yaml, strlen(yaml), "config.yaml", &o, err);
}

static struct config *parse_ok(const char *yaml)
{
	struct errbuf err;
	struct config *c = parse(yaml, &err);

	if (!c)
		fail_msg("refused: %s\n%s", err.msg, yaml);
	return c;
}

static void expect_error(const char *yaml, const char *msg)
{
	struct errbuf err;
	struct config *c = parse(yaml, &err);

	if (c) {
		config_free(c);
		fail_msg("accepted: %s", yaml);
	}
	if (!strstr(err.msg, msg))
		fail_msg("error \"%s\" does not contain \"%s\"", err.msg, msg);
}

#define GROUP(name, extra) \
	"  - name: " name "\n    max: 10\n    template: {allocatable: {cpu: 2, memory: 4Gi}}\n" extra

static void test_never_by_default(void **state)
{
	struct config *c = parse_ok("node_groups:\n" GROUP("a", ""));

	(void)state;
	assert_int_equal(c->disruption_expire_after_ms, 0);
	assert_int_equal(c->groups[0].expire_after, 0);
	config_free(c);
}

static void test_group_and_top_level(void **state)
{
	struct config *c;

	(void)state;
	c = parse_ok("disruption:\n  expire_after: 720h\n"
		     "node_groups:\n"
		     GROUP("a", "")
		     GROUP("b", "    disruption: {expire_after: 24h}\n")
		     GROUP("c", "    disruption: {expire_after: Never}\n")
		     GROUP("d", "    disruption: {expire_after: 0}\n")
		     GROUP("e", "    disruption: {budgets: [{nodes: 1}]}\n"));
	assert_int_equal(c->groups[0].expire_after, 720 * 3600);
	assert_int_equal(c->groups[1].expire_after, 24 * 3600);
	assert_int_equal(c->groups[2].expire_after, 0);
	assert_int_equal(c->groups[3].expire_after, 0);
	/* a group's budgets alone leave the top level's expiry in force */
	assert_int_equal(c->groups[4].expire_after, 720 * 3600);
	config_free(c);
	c = parse_ok("node_groups:\n" GROUP("a", "    disruption: {expire_after: 1h30m}\n"));
	assert_int_equal(c->groups[0].expire_after, 5400);
	config_free(c);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("node_groups:\n" GROUP("a", "    disruption: {expire_after: 30s}\n"),
		     "node_groups[0].disruption.expire_after");
	expect_error("node_groups:\n" GROUP("a", "    disruption: {expire_after: 30s}\n"),
		     "must be 0 or \"Never\" (no expiry), or from 1m to 87600h, got \"30s\"");
	expect_error("disruption: {expire_after: soon}\nnode_groups:\n" GROUP("a", ""),
		     "disruption.expire_after");
	expect_error("disruption: {expire_after: soon}\nnode_groups:\n" GROUP("a", ""),
		     "a duration");
	expect_error("disruption: {expire_after: 90000h}\n", "from 1m to 87600h");
	expect_error("disruption: {expire: 720h}\n", "expire");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_never_by_default),
		cmocka_unit_test(test_group_and_top_level),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
