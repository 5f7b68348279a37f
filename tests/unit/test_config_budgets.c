/*
 * Tests for the disruption budgets of the config: the top-level
 * disruption.budgets and a node group's own, the 10 % default, a group's
 * list replacing the top level's, [] for none, and every error naming the
 * budget by file:line:col and its path (disruption.budgets[1].schedule).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "textparse.h"

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

static const int64_t tue_noon = 1796731200;  /* 2026-12-08 12:00 UTC, a Tuesday */
static const int64_t tue_night = 1796767200; /* 2026-12-08 22:00 UTC */

static void test_times(void **state)
{
	(void)state;
	assert_int_equal(tue_noon, textparse_days_from_civil(2026, 12, 8) * 86400 + 12 * 3600);
	assert_int_equal(tue_night, tue_noon + 10 * 3600);
}

static void test_default_ten_percent(void **state)
{
	struct config *c;

	(void)state;
	c = parse_ok("node_groups:\n" GROUP("a", ""));
	assert_false(c->disruption_budgets_set);
	assert_int_equal(c->n_disruption_budgets, 1);
	assert_true(c->disruption_budgets[0].percent);
	assert_int_equal(c->disruption_budgets[0].nodes, 10);
	assert_non_null(c->group_extra);
	assert_false(c->group_extra[0].budgets_set);
	assert_int_equal(c->group_extra[0].n_budgets, 1);
	/* 10% of 25 nodes, rounded up */
	assert_int_equal(budget_allowed(c->group_extra[0].budgets, c->group_extra[0].n_budgets,
					DISRUPTION_UNDERUTILIZED, 25, tue_noon), 3);
	config_free(c);
	/* null and a section without budgets are the default too */
	c = parse_ok("disruption: {budgets: null}\nnode_groups:\n" GROUP("a", "    disruption: {}\n"));
	assert_false(c->disruption_budgets_set);
	assert_int_equal(c->group_extra[0].n_budgets, 1);
	assert_int_equal(c->group_extra[0].budgets[0].nodes, 10);
	config_free(c);
	/* no groups: the top level's list is still there for the engine */
	c = parse_ok("");
	assert_int_equal(c->n_disruption_budgets, 1);
	assert_null(c->group_extra);
	config_free(c);
}

static void test_top_level_list(void **state)
{
	struct config *c;
	const struct config_group_extra *e;

	(void)state;
	c = parse_ok("disruption:\n"
		     "  budgets:\n"
		     "    - nodes: 10%\n"
		     "    - nodes: \"0\"\n"
		     "      schedule: \"0 9 * * mon-fri\"\n"
		     "      duration: 8h\n"
		     "      reasons: [underutilized, empty]\n"
		     "    - {nodes: 3, reasons: [Drifted]}\n"
		     "node_groups:\n" GROUP("a", "") GROUP("b", ""));
	assert_true(c->disruption_budgets_set);
	assert_int_equal(c->n_disruption_budgets, 3);
	assert_true(c->disruption_budgets[0].percent);
	assert_false(c->disruption_budgets[1].percent);
	assert_int_equal(c->disruption_budgets[1].nodes, 0);
	assert_true(c->disruption_budgets[1].scheduled);
	assert_int_equal(c->disruption_budgets[1].duration_s, 8 * 3600);
	assert_string_equal(c->disruption_budgets[1].schedule, "0 9 * * mon-fri");
	assert_int_equal(c->disruption_budgets[1].reasons,
			 DISRUPTION_REASON_BIT(DISRUPTION_UNDERUTILIZED) |
			 DISRUPTION_REASON_BIT(DISRUPTION_EMPTY));
	assert_int_equal(c->disruption_budgets[2].nodes, 3);
	/* every group has the top level's list, applied to its own size */
	e = &c->group_extra[1];
	assert_false(e->budgets_set);
	assert_ptr_equal(e->budgets, c->disruption_budgets);
	assert_int_equal(budget_allowed(e->budgets, e->n_budgets, DISRUPTION_UNDERUTILIZED, 40, tue_noon), 0);
	assert_int_equal(budget_allowed(e->budgets, e->n_budgets, DISRUPTION_UNDERUTILIZED, 40, tue_night), 4);
	assert_int_equal(budget_allowed(e->budgets, e->n_budgets, DISRUPTION_DRIFTED, 40, tue_noon), 3);
	assert_true(budget_allowed(e->budgets, e->n_budgets, DISRUPTION_INTERRUPTED, 40, tue_noon) ==
		    BUDGET_UNLIMITED);
	config_free(c);
}

static void test_group_list_replaces(void **state)
{
	struct config *c;
	const struct config_group_extra *e;

	(void)state;
	c = parse_ok("disruption:\n"
		     "  budgets: [{nodes: \"0\"}]\n"
		     "node_groups:\n"
		     GROUP("frozen", "")
		     GROUP("batch", "    disruption:\n"
				    "      budgets:\n"
				    "        - nodes: 50%\n"
				    "        - {nodes: 1, schedule: \"@daily\", duration: 2h, reasons: [drifted, expired]}\n")
		     GROUP("free", "    disruption: {budgets: []}\n"));
	/* the top level's 0 */
	e = &c->group_extra[0];
	assert_int_equal(budget_allowed(e->budgets, e->n_budgets, DISRUPTION_EMPTY, 10, tue_noon), 0);
	/* its own list instead: 50%, and 1 for drift in the first two hours of the day */
	e = &c->group_extra[1];
	assert_true(e->budgets_set);
	assert_int_equal(e->n_budgets, 2);
	assert_int_equal(budget_allowed(e->budgets, e->n_budgets, DISRUPTION_EMPTY, 10, tue_noon), 5);
	assert_int_equal(budget_allowed(e->budgets, e->n_budgets, DISRUPTION_DRIFTED, 10, tue_noon), 5);
	assert_int_equal(budget_allowed(e->budgets, e->n_budgets, DISRUPTION_DRIFTED, 10,
					tue_noon - 11 * 3600), 1);
	assert_int_equal(budget_allowed(e->budgets, e->n_budgets, DISRUPTION_EXPIRED, 10,
					tue_noon - 11 * 3600), 1);
	/* [] : no budget at all for that group */
	e = &c->group_extra[2];
	assert_true(e->budgets_set);
	assert_int_equal(e->n_budgets, 0);
	assert_true(budget_allowed(e->budgets, e->n_budgets, DISRUPTION_EMPTY, 10, tue_noon) ==
		    BUDGET_UNLIMITED);
	/* by name, and for a group the config does not list: the top level's */
	{
		const struct disruption_budget *b;
		size_t n = 99;

		b = config_group_budgets(c, "batch", &n);
		assert_int_equal(n, 2);
		assert_ptr_equal(b, c->group_extra[1].budgets);
		b = config_group_budgets(c, "free", &n);
		assert_int_equal(n, 0);
		b = config_group_budgets(c, "discovered-asg", &n);
		assert_int_equal(n, 1);
		assert_ptr_equal(b, c->disruption_budgets);
		assert_int_equal(b[0].nodes, 0);
		assert_false(b[0].percent);
	}
	config_free(c);
	/* [] at the top level: none for the groups without their own */
	c = parse_ok("disruption: {budgets: []}\nnode_groups:\n" GROUP("a", ""));
	assert_true(c->disruption_budgets_set);
	assert_int_equal(c->n_disruption_budgets, 0);
	assert_int_equal(c->group_extra[0].n_budgets, 0);
	config_free(c);
	/* no groups at all: the default for any name */
	c = parse_ok("");
	{
		size_t n = 0;
		const struct disruption_budget *b = config_group_budgets(c, "x", &n);

		assert_int_equal(n, 1);
		assert_int_equal(b[0].nodes, 10);
		assert_true(b[0].percent);
	}
	config_free(c);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("disruption:\n"
		     "  budgets:\n"
		     "    - nodes: 10%\n"
		     "    - nodes: \"0\"\n"
		     "      schedule: \"0 9 * * mon-fri x\"\n"
		     "      duration: 8h\n",
		     "config.yaml:5:17: disruption.budgets[1].schedule: \"0 9 * * mon-fri x\": 6 fields, want 5");
	expect_error("disruption:\n  budgets:\n    - nodes: -1\n",
		     "config.yaml:3:14: disruption.budgets[0].nodes: \"-1\" is negative");
	expect_error("disruption:\n  budgets:\n    - nodes: 120%\n",
		     "disruption.budgets[0].nodes: \"120%\": a percentage is at most 100%");
	expect_error("disruption:\n  budgets:\n    - nodes: lots\n",
		     "disruption.budgets[0].nodes: \"lots\": want a count");
	expect_error("disruption:\n  budgets:\n    - nodes: 2.5\n", "want a count");
	expect_error("disruption:\n  budgets:\n    - nodes: [1]\n",
		     "disruption.budgets[0].nodes: expected a string, got a list");
	expect_error("disruption:\n  budgets:\n    - reasons: [empty]\n",
		     "config.yaml:3:7: disruption.budgets[0]: nodes is required");
	expect_error("disruption:\n  budgets:\n    - {nodes: 1, schedule: \"@daily\"}\n",
		     "disruption.budgets[0]: schedule is set, so duration is required");
	expect_error("disruption:\n  budgets:\n    - {nodes: 1, duration: 8h}\n",
		     "disruption.budgets[0]: duration is set, so schedule is required");
	expect_error("disruption:\n  budgets:\n    - {nodes: 1, schedule: \"@daily\", duration: 90s}\n",
		     "disruption.budgets[0].duration: \"90s\": want hours and minutes");
	expect_error("disruption:\n  budgets:\n    - {nodes: 1, schedule: \"0 0 * * 7\", duration: 1h}\n",
		     "disruption.budgets[0].schedule: \"0 0 * * 7\": day of week field \"7\": end of range (7) above maximum (6)");
	expect_error("disruption:\n  budgets:\n    - {nodes: 1, reasons: [drifted, interrupted]}\n",
		     "disruption.budgets[0].reasons[1]: interrupted is never budgeted");
	expect_error("disruption:\n  budgets:\n    - {nodes: 1, reasons: [consolidation]}\n",
		     "disruption.budgets[0].reasons[0]: \"consolidation\" is not a reason");
	expect_error("disruption:\n  budgets:\n    - {nodes: 1, reasons: []}\n",
		     "disruption.budgets[0].reasons: an empty list");
	expect_error("disruption:\n  budgets:\n    - {nodes: 1, reasons: drifted}\n",
		     "disruption.budgets[0].reasons: expected a list");
	expect_error("disruption:\n  budgets:\n    - {nodes: 1, reason: [drifted]}\n",
		     "unknown key \"reason\" (did you mean \"reasons\"?)");
	expect_error("disruption:\n  budget: []\n", "unknown key \"budget\"");
	expect_error("disruption:\n  budgets: {nodes: 1}\n", "disruption.budgets: expected a list");
	expect_error("disruption: 10%\n", "disruption: expected a mapping");
	expect_error("node_groups:\n" GROUP("a", "    disruption:\n      budgets: [{nodes: 1, schedule: \"0 0 30 2 *\", duration: 1h}]\n"),
		     "node_groups[0].disruption.budgets[0].schedule: \"0 0 30 2 *\" never fires");
	{
		char yaml[4096] = "disruption:\n  budgets:\n";
		int i;

		for (i = 0; i < 51; i++)
			strcat(yaml, "    - nodes: 1\n");
		expect_error(yaml, "disruption.budgets: 51 budgets: at most 50");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_times),
		cmocka_unit_test(test_default_ten_percent),
		cmocka_unit_test(test_top_level_list),
		cmocka_unit_test(test_group_list_replaces),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
