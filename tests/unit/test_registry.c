/*
 * Tests for providers/registry: every cloud of this build is found by its
 * provider.kind, an unknown kind is not, and the lists the config's error
 * and `luascale run` print name them all, in the table's order.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "providers/registry.h"

static void test_kinds_found_by_name(void **state)
{
	static const char *const want[] = {"sim", "aws", "gce", "azure"};
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
	assert_string_equal(out, "sim, aws, gce, azure");
	provider_kind_list(tiny, sizeof(tiny)); /* cut, never overrun */
	assert_string_equal(tiny, "sim, aw");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds_found_by_name),
		cmocka_unit_test(test_kind_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
