/*
 * Tests for informer_classify: what a watch event means to scaling, on
 * objects of the recorded shapes in tests/data/cluster-small.json (nodes
 * with heartbeats, managedFields-free kubectl output, pods with container
 * statuses), and of namespaces, volumes, classes and DaemonSets written
 * here, each changed the way a kubelet, the scheduler, a controller or an
 * operator changes it, decoded by the model as the informers do.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/informer.h"
#include "model.h"

#ifndef TEST_DATA_DIR
#define TEST_DATA_DIR "tests/data"
#endif

static cJSON *cluster;

static int load(void **state)
{
	char path[512];
	FILE *f;
	char *data;
	long n;

	(void)state;
	snprintf(path, sizeof(path), "%s/cluster-small.json", TEST_DATA_DIR);
	f = fopen(path, "rb");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	data = malloc((size_t)n + 1);
	if (!data || fread(data, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(data);
		return -1;
	}
	data[n] = '\0';
	fclose(f);
	cluster = cJSON_Parse(data);
	free(data);
	return cluster ? 0 : -1;
}

static int unload(void **state)
{
	(void)state;
	cJSON_Delete(cluster);
	return 0;
}

/* A copy of the recorded item named 'name' (the caller's). */
static cJSON *item(const char *name)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(cluster, "items")) {
		const cJSON *meta = cJSON_GetObjectItemCaseSensitive(it, "metadata");
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(meta, "name");

		if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0)
			return cJSON_Duplicate(it, true);
	}
	fail_msg("no item %s in cluster-small.json", name);
	return NULL;
}

static cJSON *at(cJSON *obj, const char *a, const char *b)
{
	cJSON *o = cJSON_GetObjectItemCaseSensitive(obj, a);

	if (b)
		o = cJSON_GetObjectItemCaseSensitive(o, b);
	if (!o)
		fail_msg("no %s%s%s", a, b ? "." : "", b ? b : "");
	return o;
}

/* Sets member 'key' of 'obj' to the JSON 'value'. */
static void put(cJSON *obj, const char *key, const char *value)
{
	cJSON *v = cJSON_Parse(value);

	assert_non_null(v);
	if (cJSON_GetObjectItemCaseSensitive(obj, key))
		cJSON_ReplaceItemInObjectCaseSensitive(obj, key, v);
	else
		cJSON_AddItemToObject(obj, key, v);
}

/* The condition of 'type' in status.conditions (added when absent). */
static cJSON *condition(cJSON *obj, const char *type)
{
	cJSON *conds = cJSON_GetObjectItemCaseSensitive(at(obj, "status", NULL), "conditions"), *c;

	if (!conds) {
		put(at(obj, "status", NULL), "conditions", "[]");
		conds = cJSON_GetObjectItemCaseSensitive(at(obj, "status", NULL), "conditions");
	}
	cJSON_ArrayForEach(c, conds) {
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "type");

		if (cJSON_IsString(t) && strcmp(t->valuestring, type) == 0)
			return c;
	}
	c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "type", type);
	cJSON_AddItemToArray(conds, c);
	return c;
}

/* Decodes 'obj' as the informers do (a self-contained clone; free() it). */
static void *decode(enum informer_kind kind, const cJSON *obj)
{
	struct snapshot *s = snapshot_new();
	struct errbuf err = {""};
	void *out = NULL;

	assert_non_null(s);
	if (snapshot_add_object(s, obj, NULL, &err) < 0)
		fail_msg("decode: %s", err.msg);
	if (kind == INFORMER_NODES && s->n_nodes == 1)
		out = node_clone(&s->nodes[0]);
	else if (kind == INFORMER_PODS && s->n_pods == 1)
		out = pod_clone(&s->pods[0]);
	else if (kind == INFORMER_PDBS && s->n_pdbs == 1)
		out = pdb_clone(&s->pdbs[0]);
	else if (kind == INFORMER_NAMESPACES && s->n_namespaces == 1)
		out = namespace_clone(&s->namespaces[0]);
	else if (kind == INFORMER_PVCS && s->n_pvcs == 1)
		out = pvc_clone(&s->pvcs[0]);
	else if (kind == INFORMER_PVS && s->n_pvs == 1)
		out = pv_clone(&s->pvs[0]);
	else if (kind == INFORMER_STORAGE_CLASSES && s->n_storage_classes == 1)
		out = storage_class_clone(&s->storage_classes[0]);
	else if (kind == INFORMER_DAEMONSETS && s->n_daemonsets == 1)
		out = daemonset_clone(&s->daemonsets[0]);
	snapshot_free(s);
	assert_non_null(out);
	return out;
}

/* The class of the change from 'before' to 'after' (either may be NULL). */
static enum informer_change classify(enum informer_kind kind, const cJSON *before,
				     const cJSON *after)
{
	void *a = before ? decode(kind, before) : NULL;
	void *b = after ? decode(kind, after) : NULL;
	enum informer_change c = informer_classify(kind, a, b);

	free(a);
	free(b);
	return c;
}

#define ASSERT_CLASS(kind, before, after, want) \
	do { \
		enum informer_change got_ = classify((kind), (before), (after)); \
		if (got_ != (want)) \
			fail_msg("%s: %s, expected %s", #after, informer_change_str(got_), \
				 informer_change_str(want)); \
	} while (0)

/* ---- nodes ---- */

static void test_node_heartbeat_is_unchanged(void **state)
{
	cJSON *old = item("worker-a"), *new = cJSON_Duplicate(old, true), *c;

	(void)state;
	/* what a kubelet's status update changes every few seconds to minutes */
	put(at(new, "metadata", NULL), "resourceVersion", "\"99999\"");
	put(at(new, "metadata", NULL), "managedFields",
	    "[{\"manager\":\"kubelet\",\"operation\":\"Update\",\"subresource\":\"status\","
	    "\"time\":\"2024-05-01T10:05:00Z\"}]");
	cJSON_ArrayForEach(c, at(new, "status", "conditions"))
		put(c, "lastHeartbeatTime", "\"2024-05-01T10:05:00Z\"");
	put(at(new, "status", NULL), "images",
	    "[{\"names\":[\"registry.example.com/web@sha256:00ff\"],\"sizeBytes\":123456}]");
	ASSERT_CLASS(INFORMER_NODES, old, new, INFORMER_UNCHANGED);
	/* a condition the model does not read */
	c = condition(new, "MemoryPressure");
	put(c, "status", "\"True\"");
	put(c, "reason", "\"KubeletHasInsufficientMemory\"");
	ASSERT_CLASS(INFORMER_NODES, old, new, INFORMER_UNCHANGED);
	/* nor the addresses */
	put(at(new, "status", NULL), "addresses", "[{\"type\":\"InternalIP\",\"address\":\"10.0.9.9\"}]");
	ASSERT_CLASS(INFORMER_NODES, old, new, INFORMER_UNCHANGED);
	cJSON_Delete(old);
	cJSON_Delete(new);
}

static void test_node_changes_that_matter(void **state)
{
	cJSON *old = item("worker-a"), *new;

	(void)state;
	new = cJSON_Duplicate(old, true); /* NotReady */
	put(condition(new, "Ready"), "status", "\"Unknown\"");
	ASSERT_CLASS(INFORMER_NODES, old, new, INFORMER_CHANGED);
	cJSON_Delete(new);

	new = cJSON_Duplicate(old, true); /* cordoned */
	put(at(new, "spec", NULL), "unschedulable", "true");
	ASSERT_CLASS(INFORMER_NODES, old, new, INFORMER_CHANGED);
	cJSON_Delete(new);

	new = cJSON_Duplicate(old, true); /* labelled */
	put(at(new, "metadata", "labels"), "luascale.io/scale-down", "\"candidate\"");
	ASSERT_CLASS(INFORMER_NODES, old, new, INFORMER_CHANGED);
	cJSON_Delete(new);

	new = cJSON_Duplicate(old, true); /* annotated */
	put(at(new, "metadata", NULL), "annotations", "{\"luascale.io/unneeded-since\":\"x\"}");
	ASSERT_CLASS(INFORMER_NODES, old, new, INFORMER_CHANGED);
	cJSON_Delete(new);

	new = cJSON_Duplicate(old, true); /* tainted */
	put(at(new, "spec", NULL), "taints",
	    "[{\"key\":\"ToBeDeletedByClusterAutoscaler\",\"effect\":\"NoSchedule\"}]");
	ASSERT_CLASS(INFORMER_NODES, old, new, INFORMER_CHANGED);
	cJSON_Delete(new);

	new = cJSON_Duplicate(old, true); /* a device plugin registered */
	put(at(new, "status", "allocatable"), "nvidia.com/gpu", "\"1\"");
	ASSERT_CLASS(INFORMER_NODES, old, new, INFORMER_CHANGED);
	cJSON_Delete(new);

	/* registered, gone */
	ASSERT_CLASS(INFORMER_NODES, NULL, old, INFORMER_CHANGED);
	ASSERT_CLASS(INFORMER_NODES, old, NULL, INFORMER_CHANGED);
	/* the same object again (a relist) */
	ASSERT_CLASS(INFORMER_NODES, old, old, INFORMER_UNCHANGED);
	cJSON_Delete(old);
}

/* ---- pods ---- */

static void test_pod_status_churn_is_unchanged(void **state)
{
	cJSON *old = item("web-7d9f8b6c5d-abc12"), *new = cJSON_Duplicate(old, true), *cs;

	(void)state;
	/* a container restarted: the kubelet's status patch */
	put(at(new, "metadata", NULL), "resourceVersion", "\"77777\"");
	put(at(new, "status", NULL), "containerStatuses",
	    "[{\"name\":\"web\",\"ready\":true,\"restartCount\":2,\"image\":\"web:1\","
	    "\"state\":{\"running\":{\"startedAt\":\"2024-05-01T09:00:00Z\"}}}]");
	ASSERT_CLASS(INFORMER_PODS, old, new, INFORMER_UNCHANGED);
	cs = cJSON_GetArrayItem(at(new, "status", "containerStatuses"), 0);
	assert_non_null(cs);
	put(cs, "restartCount", "3");
	put(cs, "lastState", "{\"terminated\":{\"exitCode\":137,\"reason\":\"OOMKilled\"}}");
	put(condition(new, "Ready"), "status", "\"False\"");
	put(condition(new, "ContainersReady"), "status", "\"False\"");
	put(at(new, "status", NULL), "podIP", "\"10.244.2.99\"");
	ASSERT_CLASS(INFORMER_PODS, old, new, INFORMER_UNCHANGED);
	cJSON_Delete(old);
	cJSON_Delete(new);
}

static void test_pod_changes_that_matter(void **state)
{
	cJSON *old = item("web-7d9f8b6c5d-abc12"), *new;

	(void)state;
	new = cJSON_Duplicate(old, true); /* a label changed */
	put(at(new, "metadata", "labels"), "app", "\"web2\"");
	ASSERT_CLASS(INFORMER_PODS, old, new, INFORMER_CHANGED);
	cJSON_Delete(new);

	new = cJSON_Duplicate(old, true); /* deleted: terminating */
	put(at(new, "metadata", NULL), "deletionTimestamp", "\"2024-05-01T10:06:00Z\"");
	ASSERT_CLASS(INFORMER_PODS, old, new, INFORMER_CHANGED);
	cJSON_Delete(new);

	new = cJSON_Duplicate(old, true); /* finished */
	put(at(new, "status", NULL), "phase", "\"Succeeded\"");
	ASSERT_CLASS(INFORMER_PODS, old, new, INFORMER_CHANGED);
	cJSON_Delete(new);

	ASSERT_CLASS(INFORMER_PODS, NULL, old, INFORMER_CHANGED);
	ASSERT_CLASS(INFORMER_PODS, old, NULL, INFORMER_CHANGED);
	cJSON_Delete(old);
}

static void test_pod_becomes_unschedulable(void **state)
{
	/* a pod created, not tried yet: the scheduler's verdict is the news */
	cJSON *old = item("web-7d9f8b6c5d-ghi56"), *tried = cJSON_Duplicate(old, true), *c;

	(void)state;
	cJSON_DeleteItemFromObjectCaseSensitive(at(old, "status", NULL), "conditions");
	ASSERT_CLASS(INFORMER_PODS, NULL, old, INFORMER_CHANGED);
	ASSERT_CLASS(INFORMER_PODS, old, tried, INFORMER_UNSCHEDULABLE);
	/* seen already with its verdict (a new pod the watch shows tried) */
	ASSERT_CLASS(INFORMER_PODS, NULL, tried, INFORMER_UNSCHEDULABLE);
	/* the scheduler tried again: a new message, a new probe time */
	old = (cJSON_Delete(old), cJSON_Duplicate(tried, true));
	c = condition(tried, "PodScheduled");
	put(c, "message", "\"0/5 nodes are available: 5 Insufficient cpu.\"");
	put(c, "lastProbeTime", "\"2024-05-01T10:09:00Z\"");
	ASSERT_CLASS(INFORMER_PODS, old, tried, INFORMER_UNCHANGED);
	/* a StatefulSet's pod recreated under the same name is a new pod */
	put(at(tried, "metadata", NULL), "uid", "\"another-uid\"");
	ASSERT_CLASS(INFORMER_PODS, old, tried, INFORMER_UNSCHEDULABLE);
	cJSON_Delete(tried);

	/* bound at last */
	tried = cJSON_Duplicate(old, true);
	put(at(tried, "spec", NULL), "nodeName", "\"worker-c\"");
	put(condition(tried, "PodScheduled"), "status", "\"True\"");
	ASSERT_CLASS(INFORMER_PODS, old, tried, INFORMER_CHANGED);
	cJSON_Delete(tried);
	cJSON_Delete(old);
}

static void test_unschedulable_but_not_pending(void **state)
{
	cJSON *old = item("cleanup-8h2xw"), *new = cJSON_Duplicate(old, true), *c;

	(void)state;
	/* terminating: it will not wait for a node */
	c = condition(new, "PodScheduled");
	put(c, "status", "\"False\"");
	put(c, "reason", "\"Unschedulable\"");
	ASSERT_CLASS(INFORMER_PODS, old, new, INFORMER_CHANGED);
	cJSON_Delete(old);
	cJSON_Delete(new);
	/* a DaemonSet's pod: never pending as the engine counts it */
	old = item("node-exporter-zz9kd");
	new = cJSON_Duplicate(old, true);
	c = condition(new, "PodScheduled");
	put(c, "status", "\"False\"");
	put(c, "reason", "\"Unschedulable\"");
	ASSERT_CLASS(INFORMER_PODS, old, new, INFORMER_CHANGED);
	cJSON_Delete(old);
	cJSON_Delete(new);
}

/* ---- PodDisruptionBudgets ---- */

static void test_pdb(void **state)
{
	cJSON *old = item("web"), *new = cJSON_Duplicate(old, true);

	(void)state;
	put(at(new, "status", NULL), "observedGeneration", "7");
	put(at(new, "metadata", NULL), "resourceVersion", "\"8888\"");
	ASSERT_CLASS(INFORMER_PDBS, old, new, INFORMER_UNCHANGED);
	put(at(new, "status", NULL), "disruptionsAllowed", "0");
	ASSERT_CLASS(INFORMER_PDBS, old, new, INFORMER_CHANGED);
	ASSERT_CLASS(INFORMER_PDBS, NULL, old, INFORMER_CHANGED);
	cJSON_Delete(old);
	cJSON_Delete(new);
	assert_string_equal(informer_change_str(INFORMER_UNSCHEDULABLE), "unschedulable");
}

/* ---- namespaces, volumes, DaemonSets (written here: not in the recording) ---- */

static cJSON *parse(const char *json)
{
	cJSON *o = cJSON_Parse(json);

	if (!o)
		fail_msg("test JSON does not parse: %s", json);
	return o;
}

static void test_namespace(void **state)
{
	cJSON *old = parse("{\"kind\":\"Namespace\",\"metadata\":{\"name\":\"team-a\","
			   "\"resourceVersion\":\"5\",\"labels\":{\"tier\":\"gold\"}},"
			   "\"status\":{\"phase\":\"Active\"}}");
	cJSON *new = cJSON_Duplicate(old, true);

	(void)state;
	put(at(new, "metadata", NULL), "resourceVersion", "\"6\"");
	put(at(new, "status", NULL), "phase", "\"Terminating\"");
	ASSERT_CLASS(INFORMER_NAMESPACES, old, new, INFORMER_UNCHANGED);
	put(at(new, "metadata", "labels"), "tier", "\"silver\"");
	ASSERT_CLASS(INFORMER_NAMESPACES, old, new, INFORMER_CHANGED);
	ASSERT_CLASS(INFORMER_NAMESPACES, NULL, old, INFORMER_CHANGED);
	ASSERT_CLASS(INFORMER_NAMESPACES, old, NULL, INFORMER_CHANGED);
	cJSON_Delete(old);
	cJSON_Delete(new);
}

static void test_volumes(void **state)
{
	cJSON *old, *new;

	(void)state;
	/* a claim: its binding and class matter, its status does not */
	old = parse("{\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"namespace\":\"db\","
		    "\"name\":\"data-0\",\"resourceVersion\":\"1\"},\"spec\":{\"storageClassName\":"
		    "\"zonal\"},\"status\":{\"phase\":\"Pending\"}}");
	new = cJSON_Duplicate(old, true);
	put(at(new, "metadata", NULL), "resourceVersion", "\"2\"");
	put(at(new, "status", NULL), "phase", "\"Bound\"");
	ASSERT_CLASS(INFORMER_PVCS, old, new, INFORMER_UNCHANGED);
	put(at(new, "spec", NULL), "volumeName", "\"pv-1\"");
	ASSERT_CLASS(INFORMER_PVCS, old, new, INFORMER_CHANGED);
	cJSON_Delete(new);
	new = cJSON_Duplicate(old, true);
	put(at(new, "spec", NULL), "storageClassName", "\"other\"");
	ASSERT_CLASS(INFORMER_PVCS, old, new, INFORMER_CHANGED);
	cJSON_Delete(old);
	cJSON_Delete(new);

	/* a volume: its labels and node affinity */
	old = parse("{\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"pv-1\","
		    "\"labels\":{\"topology.kubernetes.io/zone\":\"z1\"}},\"spec\":{\"nodeAffinity\":"
		    "{\"required\":{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"zone\","
		    "\"operator\":\"In\",\"values\":[\"z1\"]}]}]}}},\"status\":{\"phase\":\"Available\"}}");
	new = cJSON_Duplicate(old, true);
	put(at(new, "status", NULL), "phase", "\"Bound\"");
	put(at(new, "spec", NULL), "claimRef", "{\"namespace\":\"db\",\"name\":\"data-0\"}");
	ASSERT_CLASS(INFORMER_PVS, old, new, INFORMER_UNCHANGED);
	put(at(new, "spec", NULL), "nodeAffinity",
	    "{\"required\":{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"zone\","
	    "\"operator\":\"In\",\"values\":[\"z2\"]}]}]}}");
	ASSERT_CLASS(INFORMER_PVS, old, new, INFORMER_CHANGED);
	cJSON_Delete(new);
	new = cJSON_Duplicate(old, true);
	put(at(new, "metadata", "labels"), "topology.kubernetes.io/zone", "\"z2\"");
	ASSERT_CLASS(INFORMER_PVS, old, new, INFORMER_CHANGED);
	cJSON_Delete(old);
	cJSON_Delete(new);

	/* a class: its binding mode and topologies, not its parameters */
	old = parse("{\"kind\":\"StorageClass\",\"metadata\":{\"name\":\"zonal\"},"
		    "\"provisioner\":\"ebs.csi.aws.com\",\"parameters\":{\"type\":\"gp3\"},"
		    "\"volumeBindingMode\":\"WaitForFirstConsumer\",\"allowedTopologies\":"
		    "[{\"matchLabelExpressions\":[{\"key\":\"zone\",\"values\":[\"z1\"]}]}]}");
	new = cJSON_Duplicate(old, true);
	put(new, "parameters", "{\"type\":\"io2\"}");
	put(new, "allowVolumeExpansion", "true");
	ASSERT_CLASS(INFORMER_STORAGE_CLASSES, old, new, INFORMER_UNCHANGED);
	put(new, "allowedTopologies",
	    "[{\"matchLabelExpressions\":[{\"key\":\"zone\",\"values\":[\"z1\",\"z2\"]}]}]");
	ASSERT_CLASS(INFORMER_STORAGE_CLASSES, old, new, INFORMER_CHANGED);
	cJSON_Delete(new);
	new = cJSON_Duplicate(old, true);
	put(new, "volumeBindingMode", "\"Immediate\"");
	ASSERT_CLASS(INFORMER_STORAGE_CLASSES, old, new, INFORMER_CHANGED);
	ASSERT_CLASS(INFORMER_STORAGE_CLASSES, old, NULL, INFORMER_CHANGED);
	cJSON_Delete(old);
	cJSON_Delete(new);
}

static void test_daemonset(void **state)
{
	cJSON *old = parse("{\"kind\":\"DaemonSet\",\"metadata\":{\"namespace\":\"kube-system\","
			   "\"name\":\"agent\",\"generation\":1},\"spec\":{\"template\":{\"metadata\":"
			   "{\"labels\":{\"app\":\"agent\"}},\"spec\":{\"containers\":[{\"name\":\"a\","
			   "\"image\":\"agent:1\",\"resources\":{\"requests\":{\"cpu\":\"50m\"}}}],"
			   "\"tolerations\":[{\"operator\":\"Exists\"}]}}},"
			   "\"status\":{\"numberReady\":2}}");
	cJSON *new = cJSON_Duplicate(old, true), *c;

	(void)state;
	/* the controller's status, a new image: not what a node must hold */
	put(at(new, "status", NULL), "numberReady", "3");
	put(at(new, "metadata", NULL), "generation", "2");
	c = cJSON_GetArrayItem(at(at(at(new, "spec", "template"), "spec", NULL), "containers", NULL), 0);
	put(c, "image", "\"agent:2\"");
	ASSERT_CLASS(INFORMER_DAEMONSETS, old, new, INFORMER_UNCHANGED);
	/* what its pod asks of a node */
	put(c, "resources", "{\"requests\":{\"cpu\":\"100m\"}}");
	ASSERT_CLASS(INFORMER_DAEMONSETS, old, new, INFORMER_CHANGED);
	cJSON_Delete(new);
	new = cJSON_Duplicate(old, true);
	put(at(at(new, "spec", "template"), "spec", NULL), "tolerations", "[]");
	ASSERT_CLASS(INFORMER_DAEMONSETS, old, new, INFORMER_CHANGED);
	cJSON_Delete(new);
	new = cJSON_Duplicate(old, true);
	put(at(at(new, "spec", "template"), "spec", NULL), "nodeSelector",
	    "{\"kubernetes.io/os\":\"linux\"}");
	ASSERT_CLASS(INFORMER_DAEMONSETS, old, new, INFORMER_CHANGED);
	ASSERT_CLASS(INFORMER_DAEMONSETS, NULL, old, INFORMER_CHANGED);
	cJSON_Delete(old);
	cJSON_Delete(new);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_node_heartbeat_is_unchanged),
		cmocka_unit_test(test_node_changes_that_matter),
		cmocka_unit_test(test_pod_status_churn_is_unchanged),
		cmocka_unit_test(test_pod_changes_that_matter),
		cmocka_unit_test(test_pod_becomes_unschedulable),
		cmocka_unit_test(test_unschedulable_but_not_pending),
		cmocka_unit_test(test_pdb),
		cmocka_unit_test(test_namespace),
		cmocka_unit_test(test_volumes),
		cmocka_unit_test(test_daemonset),
	};

	return cmocka_run_group_tests(tests, load, unload);
}
