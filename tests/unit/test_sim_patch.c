/*
 * Tests for sim/apiserver_patch.c and the watch history's compaction in
 * sim/apiserver_store.c: RFC 6902 JSON Patch (every operation, the RFC's
 * appendix cases, malformed patches and ones that do not apply), strategic
 * merge directives, apply bodies in YAML and JSON, patch content types,
 * and field selector values with their defaults.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "sim/apiserver_patch.h"
#include "sim/apiserver_store.h"

/* Applies 'ops' to 'doc'; the return code, *out the result text. */
static int jp(const char *doc, const char *ops, char **out, struct errbuf *err)
{
	cJSON *d = cJSON_Parse(doc), *o = cJSON_Parse(ops);
	int rc;

	assert_non_null(d);
	assert_non_null(o);
	rc = apiserver_json_patch(&d, o, err);
	*out = cJSON_PrintUnformatted(d);
	cJSON_Delete(d);
	cJSON_Delete(o);
	return rc;
}

static void expect_jp(const char *doc, const char *ops, const char *want)
{
	struct errbuf err;
	char *got;
	int rc = jp(doc, ops, &got, &err);

	if (rc != 0)
		fail_msg("%s on %s: %d %s", ops, doc, rc, err.msg);
	assert_string_equal(got, want);
	free(got);
}

static void expect_jp_error(const char *doc, const char *ops, int want_rc, const char *msg)
{
	struct errbuf err;
	char *got;
	int rc = jp(doc, ops, &got, &err);

	free(got);
	if (rc != want_rc)
		fail_msg("%s on %s: %d, want %d", ops, doc, rc, want_rc);
	if (!strstr(err.msg, msg))
		fail_msg("%s: message \"%s\" lacks \"%s\"", ops, err.msg, msg);
}

static void test_json_patch_operations(void **state)
{
	(void)state;
	/* RFC 6902 appendix A */
	expect_jp("{\"foo\":\"bar\"}", "[{\"op\":\"add\",\"path\":\"/baz\",\"value\":\"qux\"}]",
		  "{\"foo\":\"bar\",\"baz\":\"qux\"}");
	expect_jp("{\"foo\":[\"bar\",\"baz\"]}", "[{\"op\":\"add\",\"path\":\"/foo/1\",\"value\":\"qux\"}]",
		  "{\"foo\":[\"bar\",\"qux\",\"baz\"]}");
	expect_jp("{\"baz\":\"qux\",\"foo\":\"bar\"}", "[{\"op\":\"remove\",\"path\":\"/baz\"}]",
		  "{\"foo\":\"bar\"}");
	expect_jp("{\"foo\":[\"bar\",\"qux\",\"baz\"]}", "[{\"op\":\"remove\",\"path\":\"/foo/1\"}]",
		  "{\"foo\":[\"bar\",\"baz\"]}");
	expect_jp("{\"baz\":\"qux\",\"foo\":\"bar\"}",
		  "[{\"op\":\"replace\",\"path\":\"/baz\",\"value\":\"boo\"}]",
		  "{\"foo\":\"bar\",\"baz\":\"boo\"}");
	expect_jp("{\"foo\":{\"bar\":\"baz\",\"waldo\":\"fred\"},\"qux\":{\"corge\":\"grault\"}}",
		  "[{\"op\":\"move\",\"from\":\"/foo/waldo\",\"path\":\"/qux/thud\"}]",
		  "{\"foo\":{\"bar\":\"baz\"},\"qux\":{\"corge\":\"grault\",\"thud\":\"fred\"}}");
	expect_jp("{\"foo\":[\"all\",\"grass\",\"cows\",\"eat\"]}",
		  "[{\"op\":\"move\",\"from\":\"/foo/1\",\"path\":\"/foo/3\"}]",
		  "{\"foo\":[\"all\",\"cows\",\"eat\",\"grass\"]}");
	expect_jp("{\"baz\":\"qux\",\"foo\":[\"a\",2,\"c\"]}",
		  "[{\"op\":\"test\",\"path\":\"/baz\",\"value\":\"qux\"},"
		  "{\"op\":\"test\",\"path\":\"/foo/1\",\"value\":2}]",
		  "{\"baz\":\"qux\",\"foo\":[\"a\",2,\"c\"]}");
	expect_jp("{\"foo\":[\"bar\"]}", "[{\"op\":\"add\",\"path\":\"/foo/-\",\"value\":[\"abc\",\"def\"]}]",
		  "{\"foo\":[\"bar\",[\"abc\",\"def\"]]}");
	expect_jp("{\"/\":9,\"~1\":10}", "[{\"op\":\"test\",\"path\":\"/~01\",\"value\":10},"
		  "{\"op\":\"copy\",\"from\":\"/~1\",\"path\":\"/c\"}]",
		  "{\"/\":9,\"~1\":10,\"c\":9}");
	/* a label key with a slash, as kubectl writes it */
	expect_jp("{\"metadata\":{\"labels\":{}}}",
		  "[{\"op\":\"add\",\"path\":\"/metadata/labels/example.com~1tier\",\"value\":\"gold\"}]",
		  "{\"metadata\":{\"labels\":{\"example.com/tier\":\"gold\"}}}");
	/* the whole document */
	expect_jp("{\"a\":1}", "[{\"op\":\"replace\",\"path\":\"\",\"value\":{\"b\":2}}]", "{\"b\":2}");
}

static void test_json_patch_errors(void **state)
{
	(void)state;
	/* malformed: -1 (a bad request) */
	expect_jp_error("{}", "{\"op\":\"add\"}", -1, "cannot unmarshal object");
	expect_jp_error("{}", "[{\"path\":\"/a\"}]", -1, "needs \"op\"");
	expect_jp_error("{}", "[{\"op\":\"frobnicate\",\"path\":\"/a\"}]", -1, "Unexpected kind");
	expect_jp_error("{}", "[{\"op\":\"add\",\"path\":\"/a\"}]", -1, "missing value");
	expect_jp_error("{}", "[{\"op\":\"move\",\"path\":\"/a\"}]", -1, "missing from");
	/* well-formed but not applicable: -2 */
	expect_jp_error("{\"baz\":\"qux\"}", "[{\"op\":\"test\",\"path\":\"/baz\",\"value\":\"bar\"}]", -2,
			"test failed");
	expect_jp_error("{\"foo\":\"bar\"}", "[{\"op\":\"add\",\"path\":\"/baz/bat\",\"value\":\"qux\"}]", -2,
			"add operation does not apply");
	expect_jp_error("{\"a\":1}", "[{\"op\":\"replace\",\"path\":\"/b\",\"value\":1}]", -2,
			"replace operation does not apply");
	expect_jp_error("{\"a\":1}", "[{\"op\":\"remove\",\"path\":\"/b\"}]", -2,
			"remove operation does not apply");
	expect_jp_error("{\"a\":[1]}", "[{\"op\":\"add\",\"path\":\"/a/5\",\"value\":1}]", -2,
			"invalid index");
	expect_jp_error("{\"a\":{\"b\":1}}", "[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/a/b/c\"}]", -2,
			"own child");
	expect_jp_error("{\"a\":1}", "[{\"op\":\"test\",\"path\":\"a\",\"value\":1}]", -2,
			"must start with /");
	/* a test that fails stops what follows */
	expect_jp_error("{\"a\":1}", "[{\"op\":\"test\",\"path\":\"/a\",\"value\":2},"
			"{\"op\":\"add\",\"path\":\"/b\",\"value\":1}]", -2, "test failed");
}

static char *smp(const char *target, const char *patch)
{
	cJSON *t = cJSON_Parse(target), *p = cJSON_Parse(patch), *r;
	char *out;

	assert_non_null(t);
	assert_non_null(p);
	r = apiserver_strategic_merge(t, p);
	assert_non_null(r);
	out = cJSON_PrintUnformatted(r);
	cJSON_Delete(r);
	cJSON_Delete(p);
	return out;
}

static void expect_smp(const char *target, const char *patch, const char *want)
{
	char *got = smp(target, patch);

	assert_string_equal(got, want);
	free(got);
}

static void test_strategic_merge(void **state)
{
	(void)state;
	/* as a merge patch: null removes, maps merge, lists are replaced */
	expect_smp("{\"spec\":{\"unschedulable\":true,\"taints\":[{\"key\":\"a\"}]}}",
		   "{\"spec\":{\"unschedulable\":null,\"taints\":[{\"key\":\"b\"}]}}",
		   "{\"spec\":{\"taints\":[{\"key\":\"b\"}]}}");
	/* directives */
	expect_smp("{\"data\":{\"a\":\"1\",\"b\":\"2\"}}", "{\"data\":{\"$patch\":\"replace\",\"c\":\"3\"}}",
		   "{\"data\":{\"c\":\"3\"}}");
	expect_smp("{\"data\":{\"a\":\"1\"},\"x\":1}", "{\"data\":{\"$patch\":\"delete\"}}", "{\"x\":1}");
	expect_smp("{\"metadata\":{\"name\":\"n\"}}",
		   "{\"metadata\":{\"$setElementOrder/finalizers\":[\"a\"],\"labels\":{\"k\":\"v\"}}}",
		   "{\"metadata\":{\"name\":\"n\",\"labels\":{\"k\":\"v\"}}}");
	/* finalizers merge as a set; ownerReferences by uid */
	expect_smp("{\"metadata\":{\"name\":\"n\",\"finalizers\":[\"a\",\"b\"]}}",
		   "{\"metadata\":{\"finalizers\":[\"c\"],\"$deleteFromPrimitiveList/finalizers\":[\"a\"]}}",
		   "{\"metadata\":{\"name\":\"n\",\"finalizers\":[\"b\",\"c\"]}}");
	expect_smp("{\"metadata\":{\"ownerReferences\":[{\"uid\":\"1\",\"name\":\"x\"},{\"uid\":\"2\",\"name\":\"y\"}]}}",
		   "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"1\",\"name\":\"z\"},{\"uid\":\"2\",\"$patch\":\"delete\"}]}}",
		   "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"1\",\"name\":\"z\"}]}}");
}

static void test_apply_bodies_and_types(void **state)
{
	struct errbuf err;
	cJSON *o;
	char *txt;
	static const char yaml[] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n"
				   "  n: \"1\"\n  flag: \"true\"\nimmutable: false\n";

	(void)state;
	o = apiserver_parse_apply(yaml, sizeof(yaml) - 1, &err);
	assert_non_null(o);
	txt = cJSON_PrintUnformatted(o);
	assert_string_equal(txt, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"},"
			    "\"data\":{\"n\":\"1\",\"flag\":\"true\"},\"immutable\":false}");
	free(txt);
	cJSON_Delete(o);
	o = apiserver_parse_apply("{\"a\":[1,2]}", 11, &err);
	assert_non_null(o);
	cJSON_Delete(o);
	assert_null(apiserver_parse_apply("a: [1,\n", 7, &err));
	assert_non_null(strstr(err.msg, "the apply body"));

	assert_int_equal(apiserver_patch_type("application/json-patch+json"), APISERVER_PATCH_JSON);
	assert_int_equal(apiserver_patch_type("application/merge-patch+json; charset=utf-8"),
			 APISERVER_PATCH_MERGE);
	assert_int_equal(apiserver_patch_type("application/strategic-merge-patch+json"),
			 APISERVER_PATCH_STRATEGIC);
	assert_int_equal(apiserver_patch_type("application/apply-patch+yaml"), APISERVER_PATCH_APPLY);
	assert_int_equal(apiserver_patch_type("application/json"), APISERVER_PATCH_UNKNOWN);
	assert_int_equal(apiserver_patch_type("application/json-patch+jsonx"), APISERVER_PATCH_UNKNOWN);
	assert_int_equal(apiserver_patch_type(""), APISERVER_PATCH_UNKNOWN);
}

static cJSON *node(const char *name, bool unschedulable)
{
	char txt[200];

	snprintf(txt, sizeof(txt), "{\"metadata\":{\"name\":\"%s\"},\"spec\":{%s}}", name,
		 unschedulable ? "\"unschedulable\":true" : "");
	return cJSON_Parse(txt);
}

static void test_store_fields_and_compaction(void **state)
{
	struct apiserver_store *s = apiserver_store_new(100, 0);
	const struct apiserver_ver *v;
	struct errbuf err;
	bool expired;
	cJSON *pod;

	(void)state;
	assert_non_null(s);
	apiserver_store_lock(s);
	/* an absent spec.unschedulable is "false", as the real server's selectable fields */
	assert_int_equal(apiserver_store_put(s, APISERVER_NODES, node("a", false), 1000, &v, &err), 0);
	assert_string_equal(v->fields[0], "false");
	assert_int_equal(apiserver_store_put(s, APISERVER_NODES, node("b", true), 1000, &v, &err), 0);
	assert_string_equal(v->fields[0], "true");
	pod = cJSON_Parse("{\"metadata\":{\"name\":\"p\",\"namespace\":\"d\"},\"spec\":{\"schedulerName\":\"s\"},"
			  "\"status\":{\"podIP\":\"10.0.0.1\"}}");
	assert_int_equal(apiserver_store_put(s, APISERVER_PODS, pod, 1000, &v, &err), 0);
	assert_string_equal(v->fields[2], "s");             /* spec.schedulerName */
	assert_string_equal(v->fields[4], "false");         /* spec.hostNetwork, absent */
	assert_string_equal(v->fields[6], "10.0.0.1");      /* status.podIP */
	assert_string_equal(v->fields[7], "10.0.0.1");      /* status.podIPs: the first */

	/* events older than the window go: a watch from before them is 410 */
	assert_int_equal(apiserver_store_put(s, APISERVER_NODES, node("a", true), 2000, &v, &err), 0);
	assert_non_null(apiserver_store_next_event(s, 0, &expired));
	assert_false(expired);
	apiserver_store_compact(s, 2100, 300);
	assert_int_equal(apiserver_store_floor(s), 3); /* the three at t=1000 */
	assert_null(apiserver_store_next_event(s, 1, &expired));
	assert_true(expired);
	v = NULL;
	assert_non_null(apiserver_store_next_event(s, 3, &expired));
	assert_false(expired);
	apiserver_store_compact(s, 5000, 300);
	assert_null(apiserver_store_next_event(s, 3, &expired));
	assert_true(expired);
	assert_null(apiserver_store_next_event(s, 4, &expired)); /* from now on only */
	assert_false(expired);
	apiserver_store_compact(s, 5000, 0); /* no window: nothing more goes */
	apiserver_store_unlock(s);
	apiserver_store_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_patch_operations),
		cmocka_unit_test(test_json_patch_errors),
		cmocka_unit_test(test_strategic_merge),
		cmocka_unit_test(test_apply_bodies_and_types),
		cmocka_unit_test(test_store_fields_and_compaction),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
