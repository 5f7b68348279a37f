/*
 * Tests for safety.do_not_disrupt_annotations: the annotations that keep a
 * node from removal (on the node, or on a pod running on it). The
 * defaults, a list written out, [] for none, and every error naming the
 * entry by file:line:col and its path.
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

static void expect_optout(const struct config_optout *o, bool pod, const char *key,
			  const char *value)
{
	assert_int_equal(o->pod, pod);
	assert_string_equal(o->key, key);
	assert_string_equal(o->value, value);
}

static void test_defaults(void **state)
{
	struct errbuf err;
	struct config *c = parse("", &err);

	(void)state;
	assert_non_null(c);
	assert_int_equal(c->n_optouts, 3);
	expect_optout(&c->optouts[0], false, "cluster-autoscaler.kubernetes.io/scale-down-disabled", "true");
	expect_optout(&c->optouts[1], false, "karpenter.sh/do-not-disrupt", "true");
	expect_optout(&c->optouts[2], true, "karpenter.sh/do-not-disrupt", "true");
	config_free(c);
	/* null is the default too */
	c = parse("safety: {do_not_disrupt_annotations: null}\n", &err);
	assert_non_null(c);
	assert_int_equal(c->n_optouts, 3);
	config_free(c);
}

static void test_written_list(void **state)
{
	struct errbuf err;
	struct config *c;

	(void)state;
	c = parse("safety:\n"
		  "  do_not_disrupt_annotations:\n"
		  "    - node: example.com/keep\n"
		  "    - {pod: example.com/pinned, value: \"yes\"}\n", &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_int_equal(c->n_optouts, 2);
	expect_optout(&c->optouts[0], false, "example.com/keep", "true");
	expect_optout(&c->optouts[1], true, "example.com/pinned", "yes");
	config_free(c);
	/* the same key on nodes and on pods is two entries */
	c = parse("safety: {do_not_disrupt_annotations: [{node: k}, {pod: k}]}\n", &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_int_equal(c->n_optouts, 2);
	config_free(c);
	/* [] turns them all off */
	c = parse("safety: {do_not_disrupt_annotations: []}\n", &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_int_equal(c->n_optouts, 0);
	config_free(c);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("safety: {do_not_disrupt_annotations: karpenter.sh/do-not-disrupt}\n",
		     "config.yaml:1:38: safety.do_not_disrupt_annotations: expected a list");
	expect_error("safety:\n  do_not_disrupt_annotations:\n    - karpenter.sh/do-not-disrupt\n",
		     "config.yaml:3:7: safety.do_not_disrupt_annotations[0]: expected a mapping");
	expect_error("safety:\n  do_not_disrupt_annotations:\n    - {node: a}\n    - {nodes: b}\n",
		     "config.yaml:4:8: safety.do_not_disrupt_annotations[1]: unknown key \"nodes\" (did you mean \"node\"?)");
	expect_error("safety:\n  do_not_disrupt_annotations:\n    - {value: \"true\"}\n",
		     "safety.do_not_disrupt_annotations[0]: name the annotation with node: KEY (on the node) or pod: KEY (on a pod running on it)");
	expect_error("safety:\n  do_not_disrupt_annotations:\n    - {node: a, pod: a}\n",
		     "safety.do_not_disrupt_annotations[0]: node and pod in one entry: write one entry for each");
	expect_error("safety:\n  do_not_disrupt_annotations:\n    - {pod: \"-bad/key\"}\n",
		     "config.yaml:3:13: safety.do_not_disrupt_annotations[0].pod: invalid annotation key \"-bad/key\"");
	expect_error("safety:\n  do_not_disrupt_annotations:\n    - {pod: a, value: \"\"}\n",
		     "config.yaml:3:23: safety.do_not_disrupt_annotations[0].value: expected a non-empty annotation value");
	expect_error("safety:\n  do_not_disrupt_annotations:\n    - {node: a}\n    - {node: a, value: \"true\"}\n",
		     "config.yaml:4:7: safety.do_not_disrupt_annotations[1]: the same as entry 0");
	expect_error("safety:\n  do_not_disrupt_annotations:\n    - {node: [a]}\n",
		     "safety.do_not_disrupt_annotations[0].node: expected a string, got a list");
}

static void test_many(void **state)
{
	char yaml[8192];
	size_t n, i;
	struct errbuf err;

	(void)state;
	n = (size_t)snprintf(yaml, sizeof(yaml), "safety:\n  do_not_disrupt_annotations:\n");
	for (i = 0; i <= CONFIG_MAX_OPTOUTS; i++)
		n += (size_t)snprintf(yaml + n, sizeof(yaml) - n, "    - {node: example.com/k%zu}\n", i);
	assert_null(parse(yaml, &err));
	assert_non_null(strstr(err.msg, "safety.do_not_disrupt_annotations: more than 64 entries"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_written_list),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
