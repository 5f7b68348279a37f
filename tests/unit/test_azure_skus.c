/*
 * Tests for reading the Resource SKUs API (azure_sku_parse): a VM size's
 * capabilities, other resource types and regions left out, the
 * subscription's restrictions by region and zone, and malformed items
 * refused with the size and field named.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <cjson/cJSON.h>

#include "providers/azure/azure_skus.h"

#define CAPS "\"capabilities\":[{\"name\":\"MaxResourceVolumeMB\",\"value\":\"344064\"},{\"name\":\"vCPUs\",\"value\":\"6\"}," \
	     "{\"name\":\"MemoryGB\",\"value\":\"112\"},{\"name\":\"GPUs\",\"value\":\"1\"}]"

static int parse(const char *json, const char *loc, struct azure_sku *s, struct errbuf *e)
{
	cJSON *o = cJSON_Parse(json);
	int rc;

	assert_non_null(o);
	rc = azure_sku_parse(o, loc, s, e);
	cJSON_Delete(o);
	return rc;
}

static void test_sizes(void **state)
{
	struct azure_sku s;
	struct errbuf e = {""};

	(void)state;
	assert_int_equal(parse("{\"resourceType\":\"virtualMachines\",\"name\":\"Standard_NC6s_v3\",\"locations\":[\"EastUS\"],"
			       CAPS ",\"restrictions\":[{\"type\":\"Zone\",\"values\":[\"eastus\"],\"restrictionInfo\":"
			       "{\"locations\":[\"eastus\"],\"zones\":[\"1\",\"3\"]},\"reasonCode\":\"NotAvailableForSubscription\"}]}",
			       "eastus", &s, &e), 1);
	assert_string_equal(s.name, "Standard_NC6s_v3");
	assert_int_equal(s.vcpus, 6);
	assert_int_equal((int)s.memory_mib, 112 * 1024);
	assert_int_equal(s.gpus, 1);
	assert_int_equal((int)s.resource_disk_mib, 344064);
	assert_false(s.unavailable);
	assert_string_equal(s.zones_unavailable, "13");
	/* a fraction of a GB; restricted in the region; a quota restriction is not one */
	assert_int_equal(parse("{\"resourceType\":\"virtualMachines\",\"name\":\"Standard_B1ls\",\"locations\":[\"eastus\"],"
			       "\"capabilities\":[{\"name\":\"vCPUs\",\"value\":\"1\"},{\"name\":\"MemoryGB\",\"value\":\"0.5\"}],"
			       "\"restrictions\":[{\"type\":\"Location\",\"values\":[\"eastus\"],\"restrictionInfo\":{\"locations\":[\"eastus\"]},"
			       "\"reasonCode\":\"NotAvailableForSubscription\"}]}", "eastus", &s, &e), 1);
	assert_int_equal((int)s.memory_mib, 512);
	assert_true(s.unavailable);
	assert_int_equal(parse("{\"resourceType\":\"virtualMachines\",\"name\":\"Standard_B2s\",\"locations\":[\"eastus\"],"
			       "\"capabilities\":[{\"name\":\"vCPUs\",\"value\":\"2\"},{\"name\":\"MemoryGB\",\"value\":\"4\"}],"
			       "\"restrictions\":[{\"type\":\"Location\",\"values\":[\"eastus\"],\"reasonCode\":\"QuotaId\"}]}",
			       "eastus", &s, &e), 1);
	assert_false(s.unavailable);
	/* not a VM size, or not in the region: left out */
	assert_int_equal(parse("{\"resourceType\":\"disks\",\"name\":\"Premium_LRS\",\"locations\":[\"eastus\"]}", "eastus", &s, &e), 0);
	assert_int_equal(parse("{\"resourceType\":\"virtualMachines\",\"name\":\"Standard_NC6s_v3\",\"locations\":[\"westus2\"]," CAPS "}",
			       "eastus", &s, &e), 0);
}

static void refused(const char *json, const char *want)
{
	struct azure_sku s;
	struct errbuf e = {""};

	assert_int_equal(parse(json, "eastus", &s, &e), -1);
	if (!strstr(e.msg, want))
		fail_msg("\"%s\" does not say \"%s\"", e.msg, want);
}

static void test_malformed(void **state)
{
	(void)state;
	refused("{\"resourceType\":\"virtualMachines\",\"locations\":[\"eastus\"]}", "without a valid name");
	refused("{\"resourceType\":\"virtualMachines\",\"name\":\"X\",\"locations\":\"eastus\"}", "X: locations is not a list");
	refused("{\"resourceType\":\"virtualMachines\",\"name\":\"X\",\"locations\":[\"eastus\"],\"capabilities\":{}}",
		"X: capabilities is not a list");
	refused("{\"resourceType\":\"virtualMachines\",\"name\":\"X\",\"locations\":[\"eastus\"],\"capabilities\":"
		"[{\"name\":\"MemoryGB\",\"value\":\"4\"}]}", "X: capability vCPUs is missing");
	refused("{\"resourceType\":\"virtualMachines\",\"name\":\"X\",\"locations\":[\"eastus\"],\"capabilities\":"
		"[{\"name\":\"vCPUs\",\"value\":\"2.5\"},{\"name\":\"MemoryGB\",\"value\":\"4\"}]}", "X: capability vCPUs is not a count");
	refused("{\"resourceType\":\"virtualMachines\",\"name\":\"X\",\"locations\":[\"eastus\"],\"capabilities\":"
		"[{\"name\":\"vCPUs\",\"value\":\"2\"},{\"name\":\"MemoryGB\",\"value\":\"lots\"}]}",
		"X: capability MemoryGB is not a positive number");
	refused("{\"resourceType\":\"virtualMachines\",\"name\":\"X\",\"locations\":[\"eastus\"],\"capabilities\":"
		"[{\"name\":\"vCPUs\",\"value\":\"2\"},{\"name\":\"MemoryGB\",\"value\":\"4\"},{\"name\":\"GPUs\",\"value\":2}]}",
		"X: capability GPUs is not a number");
	refused("{\"resourceType\":\"virtualMachines\",\"name\":\"X\",\"locations\":[\"eastus\"],\"capabilities\":"
		"[{\"name\":\"vCPUs\",\"value\":\"2\"},{\"name\":\"MemoryGB\",\"value\":\"4\"}],\"restrictions\":{}}",
		"X: restrictions is not a list");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
