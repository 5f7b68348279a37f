/*
 * Tests for the simulator's reaction record: a pod is kept at the first
 * time it was seen Unschedulable, launch calls with their nodes, the cap
 * (later entries counted as dropped), and the JSON the endpoint serves.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cjson/cJSON.h>
#include <string.h>

#include "buf.h"
#include "sim/world/reacting.h"

static cJSON *render(struct sim_reacting *r)
{
	struct buf b = BUF_INIT;
	cJSON *doc;

	sim_reacting_json(r, 99, &b);
	assert_false(b.oom);
	doc = cJSON_Parse(b.data);
	buf_free(&b);
	assert_non_null(doc);
	return doc;
}

static int64_t num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	assert_true(cJSON_IsNumber(v));
	return (int64_t)v->valuedouble;
}

static const char *str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	assert_true(cJSON_IsString(v));
	return v->valuestring;
}

static void test_first_time_and_calls(void **state)
{
	struct sim_reacting *r = sim_reacting_new(8);
	cJSON *doc, *pods, *calls, *c;
	long k;

	(void)state;
	assert_non_null(r);
	sim_reacting_pod(r, "default", "web-1", 100);
	sim_reacting_pod(r, "default", "web-2", 150);
	sim_reacting_pod(r, "default", "web-1", 300); /* reworded: the first time stays */
	sim_reacting_pod(r, "other", "web-1", 400);   /* another namespace, another pod */
	k = sim_reacting_launch(r, "workers", 2, 250);
	assert_int_equal(k, 0);
	sim_reacting_node(r, k, "workers-2");
	sim_reacting_node(r, k, "workers-3");
	sim_reacting_node(r, -1, "ignored");
	doc = render(r);
	assert_int_equal(num(doc, "nowNs"), 99);
	assert_int_equal(num(doc, "dropped"), 0);
	pods = cJSON_GetObjectItemCaseSensitive(doc, "pods");
	assert_int_equal(cJSON_GetArraySize(pods), 3);
	assert_string_equal(str(cJSON_GetArrayItem(pods, 0), "namespace"), "default");
	assert_string_equal(str(cJSON_GetArrayItem(pods, 0), "name"), "web-1");
	assert_int_equal(num(cJSON_GetArrayItem(pods, 0), "unschedulableNs"), 100);
	assert_string_equal(str(cJSON_GetArrayItem(pods, 2), "namespace"), "other");
	assert_int_equal(num(cJSON_GetArrayItem(pods, 2), "unschedulableNs"), 400);
	calls = cJSON_GetObjectItemCaseSensitive(doc, "launches");
	assert_int_equal(cJSON_GetArraySize(calls), 1);
	c = cJSON_GetArrayItem(calls, 0);
	assert_string_equal(str(c, "group"), "workers");
	assert_int_equal(num(c, "count"), 2);
	assert_int_equal(num(c, "arrivedNs"), 250);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(c, "nodes")), 2);
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(c, "nodes"), 1)
			    ->valuestring, "workers-3");
	cJSON_Delete(doc);
	sim_reacting_free(r);
}

static void test_cap(void **state)
{
	struct sim_reacting *r = sim_reacting_new(2);
	cJSON *doc;

	(void)state;
	sim_reacting_pod(r, "a", "1", 1);
	sim_reacting_pod(r, "a", "2", 2);
	sim_reacting_pod(r, "a", "3", 3);
	sim_reacting_pod(r, "a", "1", 4); /* known: not a drop */
	assert_int_equal(sim_reacting_launch(r, "g", 1, 5), 0);
	assert_int_equal(sim_reacting_launch(r, "g", 1, 6), 1);
	assert_int_equal(sim_reacting_launch(r, "g", 1, 7), -1);
	doc = render(r);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "pods")), 2);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "launches")), 2);
	assert_int_equal(num(doc, "dropped"), 2);
	cJSON_Delete(doc);
	sim_reacting_free(r);
	sim_reacting_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_time_and_calls),
		cmocka_unit_test(test_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
