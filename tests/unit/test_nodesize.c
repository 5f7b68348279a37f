/*
 * Tests for nodesize: the reserved memory tiers GKE and AKS share (each
 * tier at its share, worked by hand) and a template's allocatable size.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "providers/cloudhttp/nodesize.h"

#define GIB (1024ll * 1024 * 1024)

static void test_reserved_memory_tiers(void **state)
{
	(void)state;
	assert_int_equal(nodesize_reserved_memory(0), 0);
	/* 1 GiB: 25% (in whole hundredths of the bytes, as the tiers count) */
	assert_int_equal(nodesize_reserved_memory(GIB), GIB / 100 * 25);
	/* 8 GiB: 25% of 4, 20% of 4 */
	assert_int_equal(nodesize_reserved_memory(8 * GIB), 4 * GIB / 100 * 25 + 4 * GIB / 100 * 20);
	/* 32 GiB: 25% of 4, 20% of 4, 10% of 8, 6% of 16 */
	assert_int_equal(nodesize_reserved_memory(32 * GIB), 4 * GIB / 100 * 25 + 4 * GIB / 100 * 20 +
								     8 * GIB / 100 * 10 + 16 * GIB / 100 * 6);
	/* 256 GiB: every tier, 2% of what is above 128 */
	assert_int_equal(nodesize_reserved_memory(256 * GIB), 4 * GIB / 100 * 25 + 4 * GIB / 100 * 20 +
								      8 * GIB / 100 * 10 + 112 * GIB / 100 * 6 +
								      128 * GIB / 100 * 2);
}

static void test_template(void **state)
{
	struct provider_template t;

	(void)state;
	memset(&t, 0, sizeof(t));
	nodesize_template(&t, "n2-standard-4", 4, 16 * GIB, 80, 2 * GIB, 1);
	assert_string_equal(t.instance_type, "n2-standard-4");
	assert_int_equal(t.cpu_m, 3920);
	assert_int_equal(t.memory, 14 * GIB);
	assert_int_equal(t.pods, NODESIZE_PODS);
	assert_int_equal(t.gpus, 1);
	assert_int_equal(t.n_labels, 0);
	/* a reserve larger than the size leaves nothing, never less */
	nodesize_template(&t, "tiny", 1, GIB, 2000, 2 * GIB, 0);
	assert_int_equal(t.cpu_m, 0);
	assert_int_equal(t.memory, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reserved_memory_tiers),
		cmocka_unit_test(test_template),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
