/*
 * Tests for providers/registry: every cloud of this build is found by its
 * provider.kind, an unknown kind is not, the list `luascale run` prints
 * names them all in the table's order, and the config (which keeps its own
 * list, so that what reads a config links no cloud) knows the same kinds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "providers/registry.h"

static void test_kinds_found_by_name(void **state)
{
	/* "sim", then the clouds by folder name: every one of this tree's */
	static const char *const want[] = {"sim", "aws", "azure", "gce"};
	const char *const *names = provider_kind_names();
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct provider_kind *k = provider_kind_find(want[i]);

		assert_non_null(k);
		assert_string_equal(k->name, want[i]);
		assert_non_null(k->make);
		assert_string_equal(names[i], want[i]);
	}
	assert_null(names[i]);
	assert_null(provider_kind_find("aww"));
	assert_null(provider_kind_find(""));
	assert_null(provider_kind_find(NULL));
	assert_null(provider_kind_find("AWS")); /* kinds are lowercase, as the config writes them */
}

static void test_kind_list(void **state)
{
	char out[64], tiny[8];

	(void)state;
	provider_kind_list(out, sizeof(out));
	assert_string_equal(out, "sim, aws, azure, gce");
	provider_kind_list(tiny, sizeof(tiny)); /* cut, never overrun */
	assert_string_equal(tiny, "sim, aw");
}

/* The config accepts every kind the registry makes, and names the same
 * list when it refuses one. */
static void test_config_knows_the_same_kinds(void **state)
{
	const char *const *names = provider_kind_names();
	char yaml[256], known[128], want[256];
	struct config *c;
	struct errbuf err;
	size_t i;

	(void)state;
	for (i = 0; names[i]; i++) {
		snprintf(yaml, sizeof(yaml), "cluster: {kubeconfig: /k, context: c}\npolicy: {path: /p.lua}\nprovider: {kind: %s}\n",
			 names[i]);
		c = config_parse(yaml, strlen(yaml), "config.yaml", NULL, NULL, &err);
		if (c)
			config_free(c);
		else if (strstr(err.msg, "is not a provider of this build"))
			fail_msg("the config refuses the registry's kind %s: %s", names[i], err.msg);
	}
	snprintf(yaml, sizeof(yaml), "cluster: {kubeconfig: /k, context: c}\npolicy: {path: /p.lua}\nprovider: {kind: nosuch}\n");
	assert_null(config_parse(yaml, strlen(yaml), "config.yaml", NULL, NULL, &err));
	provider_kind_list(known, sizeof(known));
	snprintf(want, sizeof(want), "(known: %s)", known);
	if (!strstr(err.msg, want))
		fail_msg("the config's list of kinds is not the registry's %s: %s", want, err.msg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds_found_by_name),
		cmocka_unit_test(test_kind_list),
		cmocka_unit_test(test_config_knows_the_same_kinds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
