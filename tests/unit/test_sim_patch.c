/*
 * Tests for sim/apiserver/apiserver_patch.c and the watch history's compaction in
 * sim/apiserver/apiserver_store.c: RFC 6902 JSON Patch (every operation, the RFC's
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

#include "sim/apiserver/apiserver_patch.h"
#include "sim/apiserver/apiserver_store.h"

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

/* Applies strategic merge patch 'patch' to 'target', an object of kind
 * 'kind' in 'api_version' (NULL: undescribed); the return code, *out the
 * result text. */
static int smp_rc(const char *api_version, const char *kind, const char *target, const char *patch,
		  char **out, struct errbuf *err)
{
	cJSON *t = cJSON_Parse(target), *p = cJSON_Parse(patch);
	int rc;

	if (!t || !p)
		fail_msg("not JSON: %s or %s", target, patch);
	rc = apiserver_strategic_merge(t, p, api_version, kind, err);
	*out = cJSON_PrintUnformatted(t);
	cJSON_Delete(t);
	cJSON_Delete(p);
	return rc;
}

static void expect_smp_kind(const char *api_version, const char *kind, const char *target, const char *patch,
			    const char *want)
{
	struct errbuf err;
	char *got;
	int rc = smp_rc(api_version, kind, target, patch, &got, &err);

	if (rc != 0)
		fail_msg("%s on %s: %d %s", patch, target, rc, err.msg);
	if (strcmp(got, want) != 0)
		fail_msg("%s on %s:\n got  %s\n want %s", patch, target, got, want);
	free(got);
}

static void expect_smp(const char *target, const char *patch, const char *want)
{
	expect_smp_kind(NULL, NULL, target, patch, want);
}

static void expect_smp_error(const char *api_version, const char *kind, const char *target, const char *patch,
			     int want_rc, const char *msg)
{
	struct errbuf err;
	char *got;
	int rc = smp_rc(api_version, kind, target, patch, &got, &err);

	free(got);
	if (rc != want_rc)
		fail_msg("%s on %s: %d, want %d", patch, target, rc, want_rc);
	if (!strstr(err.msg, msg))
		fail_msg("%s: message \"%s\" lacks \"%s\"", patch, err.msg, msg);
}

static void test_strategic_merge(void **state)
{
	(void)state;
	/* as a merge patch: null removes, maps merge, a list without a merge
	 * strategy (a Node's taints) is replaced */
	expect_smp_kind("v1", "Node", "{\"spec\":{\"unschedulable\":true,\"taints\":[{\"key\":\"a\"}]}}",
			"{\"spec\":{\"unschedulable\":null,\"taints\":[{\"key\":\"b\"}]}}",
			"{\"spec\":{\"taints\":[{\"key\":\"b\"}]}}");
	/* directives */
	expect_smp("{\"data\":{\"a\":\"1\",\"b\":\"2\"}}", "{\"data\":{\"$patch\":\"replace\",\"c\":\"3\"}}",
		   "{\"data\":{\"c\":\"3\"}}");
	expect_smp("{\"data\":{\"a\":\"1\"},\"x\":1}", "{\"data\":{\"$patch\":\"delete\"}}",
		   "{\"data\":{},\"x\":1}");
	expect_smp("{\"metadata\":{\"name\":\"n\"}}",
		   "{\"metadata\":{\"$setElementOrder/finalizers\":[\"a\"],\"labels\":{\"k\":\"v\"}}}",
		   "{\"metadata\":{\"name\":\"n\",\"labels\":{\"k\":\"v\"}}}");
	/* a map that is not there yet takes the patch's value without its nulls */
	expect_smp("{}", "{\"data\":{\"a\":\"1\",\"b\":null}}", "{\"data\":{\"a\":\"1\"}}");
	/* finalizers merge as a set, the patch's new ones first as the server
	 * orders them; ownerReferences by uid, whatever the kind */
	expect_smp("{\"metadata\":{\"name\":\"n\",\"finalizers\":[\"a\",\"b\"]}}",
		   "{\"metadata\":{\"finalizers\":[\"c\"],\"$deleteFromPrimitiveList/finalizers\":[\"a\"]}}",
		   "{\"metadata\":{\"name\":\"n\",\"finalizers\":[\"c\",\"b\"]}}");
	expect_smp_kind("v1", "ConfigMap", "{\"metadata\":{\"finalizers\":[\"a\",\"b\"]}}",
			"{\"metadata\":{\"$setElementOrder/finalizers\":[\"a\",\"c\",\"b\"],\"finalizers\":[\"c\"]}}",
			"{\"metadata\":{\"finalizers\":[\"a\",\"c\",\"b\"]}}");
	expect_smp("{\"metadata\":{\"ownerReferences\":[{\"uid\":\"1\",\"name\":\"x\"},{\"uid\":\"2\",\"name\":\"y\"}]}}",
		   "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"1\",\"name\":\"z\"},{\"uid\":\"2\",\"$patch\":\"delete\"}]}}",
		   "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"1\",\"name\":\"z\"}]}}");
	/* a scalar under $deleteFromPrimitiveList takes its list's name */
	expect_smp("{\"metadata\":{\"finalizers\":\"a\"}}",
		   "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":\"b\"}}",
		   "{\"metadata\":{\"finalizers\":\"b\"}}");
	/* a kind not described: its lists are replaced, its metadata is still an ObjectMeta */
	expect_smp("{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"x\"}]}}",
		   "{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"y\"}]}}",
		   "{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"y\"}]}}");
}

#define DEPLOY_OF(containers) \
	"{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"api\"}," \
	"\"spec\":{\"replicas\":2,\"template\":{\"metadata\":{\"labels\":{\"app\":\"api\"}}," \
	"\"spec\":{\"containers\":[" containers "]}}}}"
#define API_C(image) \
	"{\"name\":\"api\",\"image\":\"" image "\",\"env\":[{\"name\":\"A\",\"value\":\"1\"}," \
	"{\"name\":\"B\",\"value\":\"2\"}],\"ports\":[{\"containerPort\":80,\"protocol\":\"TCP\"}]," \
	"\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}"
#define SIDE_C "{\"name\":\"side\",\"image\":\"side:1\"}"
#define TEMPLATE_PATCH(p) "{\"spec\":{\"template\":{\"spec\":" p "}}}"

/* The patches kubectl 1.32 sends (seen with -v=8), applied to a Deployment. */
static void test_strategic_merge_kubectl(void **state)
{
	(void)state;
	/* kubectl set image deployment/api api=api:2: the container keeps its
	 * resources, env and ports, and the other container stays */
	expect_smp_kind("apps/v1", "Deployment", DEPLOY_OF(API_C("api:1") "," SIDE_C),
			TEMPLATE_PATCH("{\"$setElementOrder/containers\":[{\"name\":\"api\"},{\"name\":\"side\"}],"
				       "\"containers\":[{\"image\":\"api:2\",\"name\":\"api\"}]}"),
			DEPLOY_OF(API_C("api:2") "," SIDE_C));
	/* kubectl set resources -c side --requests=cpu=200m: the image stays */
	expect_smp_kind("apps/v1", "Deployment", DEPLOY_OF(API_C("api:1") "," SIDE_C),
			TEMPLATE_PATCH("{\"$setElementOrder/containers\":[{\"name\":\"api\"},{\"name\":\"side\"}],"
				       "\"containers\":[{\"name\":\"side\",\"resources\":{\"requests\":{\"cpu\":\"200m\"}}}]}"),
			DEPLOY_OF(API_C("api:1") ",{\"name\":\"side\",\"image\":\"side:1\","
				  "\"resources\":{\"requests\":{\"cpu\":\"200m\"}}}"));
	/* kubectl set env -c api A=9 B- C=3: env by name, B deleted, C placed
	 * as $setElementOrder says */
	expect_smp_kind("apps/v1", "Deployment", DEPLOY_OF(API_C("api:1")),
			TEMPLATE_PATCH("{\"$setElementOrder/containers\":[{\"name\":\"api\"}],\"containers\":["
				       "{\"$setElementOrder/env\":[{\"name\":\"A\"},{\"name\":\"C\"}],"
				       "\"env\":[{\"name\":\"A\",\"value\":\"9\"},{\"name\":\"C\",\"value\":\"3\"},"
				       "{\"$patch\":\"delete\",\"name\":\"B\"}],\"name\":\"api\"}]}"),
			DEPLOY_OF("{\"name\":\"api\",\"image\":\"api:1\",\"env\":[{\"name\":\"A\",\"value\":\"9\"},"
				  "{\"name\":\"C\",\"value\":\"3\"}],\"ports\":[{\"containerPort\":80,\"protocol\":\"TCP\"}],"
				  "\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}"));
	/* a container added and one removed by their names */
	expect_smp_kind("apps/v1", "Deployment", DEPLOY_OF(API_C("api:1") "," SIDE_C),
			TEMPLATE_PATCH("{\"$setElementOrder/containers\":[{\"name\":\"new\"},{\"name\":\"api\"}],"
				       "\"containers\":[{\"name\":\"new\",\"image\":\"n:1\"},{\"$patch\":\"delete\",\"name\":\"side\"}]}"),
			DEPLOY_OF("{\"name\":\"new\",\"image\":\"n:1\"}," API_C("api:1")));
	/* $setElementOrder alone reorders */
	expect_smp_kind("apps/v1", "Deployment", DEPLOY_OF(API_C("api:1") "," SIDE_C),
			TEMPLATE_PATCH("{\"$setElementOrder/containers\":[{\"name\":\"side\"},{\"name\":\"api\"}]}"),
			DEPLOY_OF(SIDE_C "," API_C("api:1")));
	/* without $setElementOrder a new element comes before the server's own */
	expect_smp_kind("apps/v1", "Deployment", DEPLOY_OF(API_C("api:1")),
			TEMPLATE_PATCH("{\"containers\":[" SIDE_C "]}"),
			DEPLOY_OF(SIDE_C "," API_C("api:1")));
	/* a list element "$patch": "replace" replaces the whole list */
	expect_smp_kind("apps/v1", "Deployment", DEPLOY_OF(API_C("api:1") "," SIDE_C),
			TEMPLATE_PATCH("{\"containers\":[{\"$patch\":\"replace\"}," SIDE_C "]}"),
			DEPLOY_OF(SIDE_C));
}

/* Each list of a PodSpec by its own merge key or strategy, in the kinds
 * that carry one. */
static void test_strategic_merge_lists(void **state)
{
	(void)state;
	/* ports by containerPort (a number), volumeMounts by mountPath */
	expect_smp_kind("v1", "Pod",
			"{\"spec\":{\"containers\":[{\"name\":\"c\",\"ports\":[{\"containerPort\":80,\"name\":\"http\"},"
			"{\"containerPort\":443}],\"volumeMounts\":[{\"mountPath\":\"/a\",\"name\":\"v1\"}]}]}}",
			"{\"spec\":{\"containers\":[{\"name\":\"c\",\"ports\":[{\"containerPort\":80,\"hostPort\":8080}],"
			"\"volumeMounts\":[{\"mountPath\":\"/a\",\"readOnly\":true},{\"mountPath\":\"/b\",\"name\":\"v2\"}]}]}}",
			"{\"spec\":{\"containers\":[{\"name\":\"c\",\"ports\":[{\"containerPort\":80,\"name\":\"http\","
			"\"hostPort\":8080},{\"containerPort\":443}],\"volumeMounts\":[{\"mountPath\":\"/a\",\"name\":\"v1\","
			"\"readOnly\":true},{\"mountPath\":\"/b\",\"name\":\"v2\"}]}]}}");
	/* initContainers, volumes ($retainKeys: a volume's source swapped),
	 * imagePullSecrets by name; tolerations replaced */
	expect_smp_kind("batch/v1", "Job",
			"{\"spec\":{\"template\":{\"spec\":{\"initContainers\":[{\"name\":\"i\",\"image\":\"x\"}],"
			"\"volumes\":[{\"name\":\"v\",\"emptyDir\":{}},{\"name\":\"w\",\"emptyDir\":{}}],"
			"\"imagePullSecrets\":[{\"name\":\"s1\"}],\"tolerations\":[{\"key\":\"a\"},{\"key\":\"b\"}]}}}}",
			"{\"spec\":{\"template\":{\"spec\":{\"initContainers\":[{\"name\":\"i\",\"args\":[\"-v\"]}],"
			"\"volumes\":[{\"$retainKeys\":[\"configMap\",\"name\"],\"name\":\"v\",\"configMap\":{\"name\":\"cm\"}}],"
			"\"imagePullSecrets\":[{\"name\":\"s2\"}],\"tolerations\":[{\"key\":\"c\"}]}}}}",
			"{\"spec\":{\"template\":{\"spec\":{\"initContainers\":[{\"name\":\"i\",\"image\":\"x\",\"args\":[\"-v\"]}],"
			"\"volumes\":[{\"name\":\"v\",\"configMap\":{\"name\":\"cm\"}},{\"name\":\"w\",\"emptyDir\":{}}],"
			"\"imagePullSecrets\":[{\"name\":\"s2\"},{\"name\":\"s1\"}],\"tolerations\":[{\"key\":\"c\"}]}}}}");
	/* a ReplicaSet's and a DaemonSet's templates too; a container's
	 * command is replaced whole */
	expect_smp_kind("apps/v1", "ReplicaSet",
			"{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"x\",\"command\":[\"p\",\"q\"]}]}}}}",
			"{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"a\",\"command\":[\"r\"]}]}}}}",
			"{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"x\",\"command\":[\"r\"]}]}}}}");
	expect_smp_kind("apps/v1", "DaemonSet",
			"{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"x\"}]}}}}",
			"{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"y\"}]}}}}",
			"{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"y\"}]}}}}");
	/* status conditions by type; a Node's addresses by type */
	expect_smp_kind("v1", "Pod",
			"{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"},{\"type\":\"PodScheduled\",\"status\":\"True\"}]}}",
			"{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
			"{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"},{\"type\":\"PodScheduled\",\"status\":\"True\"}]}}");
	expect_smp_kind("v1", "Node",
			"{\"status\":{\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"10.0.0.1\"}]}}",
			"{\"status\":{\"addresses\":[{\"type\":\"Hostname\",\"address\":\"n\"}]}}",
			"{\"status\":{\"addresses\":[{\"type\":\"Hostname\",\"address\":\"n\"},{\"type\":\"InternalIP\",\"address\":\"10.0.0.1\"}]}}");
	/* a PodDisruptionBudget's selector is replaced, not merged */
	expect_smp_kind("policy/v1", "PodDisruptionBudget",
			"{\"spec\":{\"selector\":{\"matchLabels\":{\"a\":\"1\"}},\"minAvailable\":1}}",
			"{\"spec\":{\"selector\":{\"matchLabels\":{\"b\":\"2\"}}}}",
			"{\"spec\":{\"selector\":{\"matchLabels\":{\"b\":\"2\"}},\"minAvailable\":1}}");
	/* a Deployment's strategy under $retainKeys */
	expect_smp_kind("apps/v1", "Deployment",
			"{\"spec\":{\"strategy\":{\"type\":\"RollingUpdate\",\"rollingUpdate\":{\"maxSurge\":1}}}}",
			"{\"spec\":{\"strategy\":{\"$retainKeys\":[\"type\"],\"type\":\"Recreate\"}}}",
			"{\"spec\":{\"strategy\":{\"type\":\"Recreate\"}}}");
	/* a new element comes without its nulls and directives */
	expect_smp_kind("v1", "Pod", "{\"spec\":{\"containers\":[{\"name\":\"a\"}]}}",
			"{\"spec\":{\"$setElementOrder/containers\":[{\"name\":\"a\"},{\"name\":\"b\"}],"
			"\"containers\":[{\"name\":\"b\",\"image\":null,\"$setElementOrder/env\":[{\"name\":\"E\"}],"
			"\"env\":[{\"name\":\"E\",\"value\":\"1\"},{\"$patch\":\"delete\",\"name\":\"F\"}]}]}}",
			"{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\",\"env\":[{\"name\":\"E\",\"value\":\"1\"}]}]}}");
}

static void test_strategic_merge_errors(void **state)
{
	(void)state;
	expect_smp_error("v1", "Pod", "{\"spec\":{\"containers\":[{\"name\":\"a\"}]}}",
			 "{\"spec\":{\"containers\":[{\"image\":\"x\"}]}}", APISERVER_SMP_FAILED,
			 "does not contain declared merge key: name");
	expect_smp_error("v1", "Pod", "{\"spec\":{\"containers\":[{\"name\":\"a\"}]}}",
			 "{\"spec\":{\"containers\":[{\"$patch\":\"delete\"}]}}", APISERVER_SMP_FAILED,
			 "does not contain declared merge key: name");
	expect_smp_error("v1", "Pod", "{\"spec\":{\"containers\":[{\"name\":\"a\"}]}}",
			 "{\"spec\":{\"containers\":[{\"$patch\":\"frobnicate\",\"name\":\"a\"}]}}",
			 APISERVER_SMP_FAILED, "unknown patch type");
	expect_smp_error("v1", "Pod", "{\"spec\":{}}", "{\"spec\":{\"$patch\":\"frobnicate\"}}",
			 APISERVER_SMP_FAILED, "unknown patch type");
	expect_smp_error("apps/v1", "Deployment", "{\"spec\":{\"strategy\":{}}}",
			 "{\"spec\":{\"strategy\":{\"$retainKeys\":[\"type\"],\"rollingUpdate\":{}}}}",
			 APISERVER_SMP_BAD, "invalid patch format of retainKeys");
	expect_smp_error("v1", "Pod", "{\"spec\":{}}", "{\"spec\":{\"$setElementOrder/containers\":{}}}",
			 APISERVER_SMP_BAD, "invalid patch format of setElementOrder list");
	expect_smp_error("v1", "Pod", "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}]}}",
			 "{\"spec\":{\"$setElementOrder/containers\":[{\"name\":\"a\"},{\"name\":\"b\"}],"
			 "\"containers\":[{\"name\":\"b\"},{\"name\":\"a\"}]}}",
			 APISERVER_SMP_FAILED, "doesn't match $setElementOrder list");
	expect_smp_error("v1", "Node", "{\"spec\":{\"podCIDRs\":[[\"a\"]]}}",
			 "{\"spec\":{\"podCIDRs\":[[\"b\"]]}}", APISERVER_SMP_INVALID, "lists of lists");
	expect_smp_error("v1", "Node", "{\"spec\":{\"podCIDRs\":[\"a\"]}}",
			 "{\"spec\":{\"podCIDRs\":[1]}}", APISERVER_SMP_FAILED, "not identical");
}

/* The OpenAPI tells kubectl the same strategies and keys the merge uses. */
static void test_patch_meta(void **state)
{
	const char *strategy = NULL, *key = NULL;

	(void)state;
	assert_true(apiserver_patch_meta("k8s.io.api.core.v1.PodSpec", "containers", &strategy, &key));
	assert_string_equal(strategy, "merge");
	assert_string_equal(key, "name");
	assert_true(apiserver_patch_meta("k8s.io.api.core.v1.Container", "ports", &strategy, &key));
	assert_string_equal(key, "containerPort");
	assert_true(apiserver_patch_meta("k8s.io.api.core.v1.PodSpec", "volumes", &strategy, &key));
	assert_string_equal(strategy, "merge,retainKeys");
	assert_true(apiserver_patch_meta("k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta", "finalizers",
					 &strategy, &key));
	assert_null(key);
	assert_false(apiserver_patch_meta("k8s.io.api.core.v1.PodSpec", "tolerations", &strategy, &key));
	assert_false(apiserver_patch_meta("k8s.io.api.core.v1.NodeSpec", "taints", &strategy, &key));
	assert_false(apiserver_patch_meta("k8s.io.api.core.v1.Pod", "spec", &strategy, &key));
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
		cmocka_unit_test(test_strategic_merge_kubectl),
		cmocka_unit_test(test_strategic_merge_lists),
		cmocka_unit_test(test_strategic_merge_errors),
		cmocka_unit_test(test_patch_meta),
		cmocka_unit_test(test_apply_bodies_and_types),
		cmocka_unit_test(test_store_fields_and_compaction),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
