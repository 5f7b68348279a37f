/*
 * Tests for model.c / model_decode.c: decoding kubectl and API-server JSON
 * into a snapshot, effective pod requests, validation messages, streaming
 * of Lists, snapshot_finish() indexing, and time parsing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "buf.h"
#include "model.h"

#ifndef TEST_DATA_DIR
#define TEST_DATA_DIR "tests/data"
#endif

#define KI INT64_C(1024)
#define MI (KI * 1024)
#define GI (MI * 1024)
#define NOW 1714557600 /* 2024-05-01T10:00:00Z */

static char *read_data(const char *name, size_t *len)
{
	char path[512];
	FILE *f;
	char *data;
	long n;

	snprintf(path, sizeof(path), "%s/%s", TEST_DATA_DIR, name);
	f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	data = malloc((size_t)n + 1);
	assert_non_null(data);
	assert_int_equal(fread(data, 1, (size_t)n, f), (size_t)n);
	data[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return data;
}

static struct snapshot *load_data(const char *name)
{
	char path[512];
	struct errbuf err = {{0}};
	struct snapshot *s = snapshot_new();

	assert_non_null(s);
	snprintf(path, sizeof(path), "%s/%s", TEST_DATA_DIR, name);
	if (snapshot_load_file(s, path, &err) != 0)
		fail_msg("loading %s: %s", path, err.msg);
	return s;
}

static const struct pod *find_pod(const struct snapshot *s, const char *ns,
				  const char *name)
{
	size_t i;

	for (i = 0; i < s->n_pods; i++)
		if (strcmp(s->pods[i].ns, ns) == 0 && strcmp(s->pods[i].name, name) == 0)
			return &s->pods[i];
	fail_msg("pod %s/%s not found", ns, name);
	return NULL;
}

static uint32_t pod_index(const struct snapshot *s, const char *ns, const char *name)
{
	return (uint32_t)(find_pod(s, ns, name) - s->pods);
}

/* Decodes one JSON object text with snapshot_add_object(); returns the
 * result and leaves the message in 'err'. */
static int add_text(struct snapshot *s, const char *json, struct errbuf *err)
{
	cJSON *obj = cJSON_Parse(json);
	int rc;

	if (!obj)
		fail_msg("test JSON does not parse: %s", json);
	rc = snapshot_add_object(s, obj, NULL, err);
	cJSON_Delete(obj);
	return rc;
}

/* A pod whose spec is 'spec' (JSON object text); returns its requests. */
static struct resources pod_requests(struct snapshot *s, const char *spec)
{
	struct buf b = BUF_INIT;
	struct errbuf err = {{0}};

	buf_printf(&b, "{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"t\",\"name\":\"p%zu\"},"
		       "\"spec\":%s}", s->n_pods, spec);
	if (add_text(s, b.data, &err) != 0)
		fail_msg("pod spec %s: %s", spec, err.msg);
	buf_free(&b);
	return s->pods[s->n_pods - 1].requests;
}

static int add_doc(struct snapshot *s, const char *json, struct errbuf *err)
{
	return snapshot_add_json(s, json, strlen(json), "state.json", err);
}

/* ---- the realistic cluster ---- */

static void set_test_groups(struct snapshot *s)
{
	struct kv workers_sel[] = {{"luascale.io/group", "workers"}};
	struct kv gpu_sel[] = {{"luascale.io/group", "gpu"}};
	struct node_group g[3];
	struct errbuf err = {{0}};

	memset(g, 0, sizeof(g));
	g[0].name = "no-selector";
	g[0].target = -1;
	g[1].name = "workers";
	g[1].min = 1;
	g[1].max = 10;
	g[1].selector = (struct kvlist){workers_sel, 1};
	g[1].target = -1;
	g[2].name = "gpu";
	g[2].max = 4;
	g[2].selector = (struct kvlist){gpu_sel, 1};
	g[2].target = 3;
	assert_int_equal(snapshot_set_groups(s, g, 3, &err), 0);
}

static void check_cluster_small(struct snapshot *s)
{
	const struct node *cp, *wa, *wb, *gpu;
	const struct pod *p;
	struct errbuf err = {{0}};

	assert_int_equal(s->n_nodes, 4);
	assert_int_equal(s->n_pods, 17);
	assert_int_equal(s->n_pdbs, 2);
	set_test_groups(s);
	if (snapshot_finish(s, NOW, &err) != 0)
		fail_msg("finish: %s", err.msg);
	assert_int_equal(s->now, NOW);

	/* nodes, in input order */
	assert_int_equal(snapshot_find_node(s, "cp-1"), 0);
	assert_int_equal(snapshot_find_node(s, "gpu-1"), 3);
	assert_int_equal(snapshot_find_node(s, "worker-gone"), -1);
	cp = &s->nodes[0];
	wa = &s->nodes[1];
	wb = &s->nodes[2];
	gpu = &s->nodes[3];
	assert_string_equal(cp->name, "cp-1");
	assert_string_equal(cp->provider_id, "aws:///us-east-1a/i-0c1a2b3c4d5e60001");
	assert_string_equal(kvlist_get(&cp->labels, "node-role.kubernetes.io/control-plane"), "");
	assert_string_equal(kvlist_get(&cp->annotations, "node.alpha.kubernetes.io/ttl"), "0");
	assert_int_equal(cp->created, 1711954800);
	assert_int_equal(cp->n_taints, 1);
	assert_string_equal(cp->taints[0].key, "node-role.kubernetes.io/control-plane");
	assert_string_equal(cp->taints[0].value, "");
	assert_int_equal(cp->taints[0].effect, TAINT_NO_SCHEDULE);
	assert_int_equal(cp->allocatable.cpu_m, 2000);
	assert_int_equal(cp->allocatable.memory, 3926496 * KI);
	assert_int_equal(cp->allocatable.ephemeral, INT64_C(18698430040));
	assert_int_equal(cp->allocatable.pods, 110);
	assert_int_equal(cp->allocatable.n_ext, 0); /* hugepages-2Mi: 0 is dropped */
	assert_true(cp->ready);
	assert_false(cp->unschedulable);
	assert_int_equal(cp->group, -1);

	assert_int_equal(wa->allocatable.cpu_m, 3920);
	assert_int_equal(wa->allocatable.memory, 15168500 * KI);
	assert_int_equal(wa->allocatable.pods, 58);
	assert_int_equal(wa->created, 1712045730);
	assert_true(wb->unschedulable);
	assert_int_equal(wb->n_taints, 1);
	assert_int_equal(gpu->n_taints, 1);
	assert_string_equal(gpu->taints[0].key, "nvidia.com/gpu");
	assert_string_equal(gpu->taints[0].value, "present");
	assert_int_equal(resources_ext(&gpu->allocatable, "nvidia.com/gpu"), 4);
	assert_int_equal(gpu->allocatable.cpu_m, 47810);
	assert_false(gpu->ready);

	/* groups */
	assert_int_equal(wa->group, 1);
	assert_int_equal(wb->group, 1);
	assert_int_equal(gpu->group, 2);
	assert_int_equal(snapshot_find_group(s, "workers"), 1);
	assert_int_equal(snapshot_find_group(s, "nope"), -1);
	assert_int_equal(s->groups[0].current, 0); /* empty selector never matches */
	assert_int_equal(s->groups[0].target, 0);
	assert_int_equal(s->groups[1].current, 2);
	assert_int_equal(s->groups[1].target, 2);
	assert_int_equal(s->groups[2].current, 1);
	assert_int_equal(s->groups[2].target, 3);

	/* per-node sums: bound, unfinished pods only */
	assert_int_equal(wa->n_pods, 6);
	assert_int_equal(wa->requested.pods, 5);
	assert_int_equal(wa->requested.cpu_m, 0 + 100 + 250 + 1100 + 500);
	assert_int_equal(wa->requested.memory, (70 + 256 + 1152) * MI + 1000000000);
	assert_int_equal(wa->requested.ephemeral, GI);
	assert_int_equal(wb->n_pods, 3);
	assert_int_equal(wb->requested.pods, 2);
	assert_int_equal(wb->requested.cpu_m, 750);
	assert_int_equal(wb->requested.memory, 256 * MI + 2 * GI);
	assert_int_equal(cp->n_pods, 1);
	assert_int_equal(cp->requested.cpu_m, 100);
	assert_int_equal(gpu->requested.pods, 2);
	assert_int_equal(gpu->requested.cpu_m, 8000);
	assert_int_equal(resources_ext(&gpu->requested, "nvidia.com/gpu"), 2);
	assert_int_equal(gpu->requested.n_ext, 1);
	assert_int_equal(wa->pods[0], pod_index(s, "kube-system", "kube-proxy-7xk2p"));
	assert_int_equal(wa->pods[5], pod_index(s, "jhub", "jupyter-alice"));

	/* pods */
	p = find_pod(s, "kube-system", "etcd-cp-1");
	assert_int_equal(p->flags, POD_MIRROR | POD_STATIC | POD_LOCAL_STORAGE | POD_HOST_NETWORK);
	assert_string_equal(p->local_volume, "etcd-certs");
	assert_string_equal(p->controller_kind, "Node");
	assert_string_equal(p->controller_name, "cp-1");
	assert_int_equal(p->priority, 2000001000);
	assert_int_equal(p->node, 0);
	assert_int_equal(p->phase, POD_RUNNING);
	assert_int_equal(p->n_tolerations, 1);
	assert_string_equal(p->tolerations[0].key, "");
	assert_int_equal(p->tolerations[0].op, TOLERATION_EXISTS);
	assert_int_equal(p->tolerations[0].effect, TAINT_NO_EXECUTE);

	p = find_pod(s, "kube-system", "kube-proxy-7xk2p");
	assert_int_equal(p->flags, POD_DAEMONSET | POD_LOCAL_STORAGE);
	assert_string_equal(p->local_volume, "xtables-lock");
	assert_int_equal(p->requests.cpu_m, 0);
	assert_int_equal(p->requests.pods, 1);
	assert_int_equal(p->tolerations[0].effect, -1);
	assert_int_equal(find_pod(s, "kube-system", "kube-proxy-q9f4m")->flags, POD_DAEMONSET);

	p = find_pod(s, "kube-system", "coredns-76f75df574-x7k2p");
	assert_int_equal(p->flags, 0);
	assert_string_equal(p->controller_kind, "ReplicaSet");
	assert_string_equal(p->controller_name, "coredns-76f75df574");
	assert_int_equal(p->requests.cpu_m, 100);
	assert_int_equal(p->requests.memory, 70 * MI); /* the 170Mi limit is not a request */
	assert_int_equal(p->n_tolerations, 4);
	assert_string_equal(p->tolerations[0].key, "CriticalAddonsOnly");
	assert_int_equal(p->tolerations[0].effect, -1);
	assert_int_equal(p->tolerations[1].op, TOLERATION_EQUAL);
	assert_int_equal(p->tolerations[1].effect, TAINT_NO_SCHEDULE);
	assert_string_equal(kvlist_get(&p->node_selector, "kubernetes.io/os"), "linux");
	assert_string_equal(p->local_volume, "");
	assert_string_equal(p->sched_message, "");
	assert_int_equal(p->created, 1714554000);

	p = find_pod(s, "default", "web-7d9f8b6c5d-abc12");
	assert_int_equal(p->flags, POD_LOCAL_STORAGE);
	assert_string_equal(p->local_volume, "cache");
	assert_int_equal(find_pod(s, "default", "web-7d9f8b6c5d-def34")->flags, 0);

	p = find_pod(s, "default", "api-0"); /* sidecar, then an init container */
	assert_int_equal(p->requests.cpu_m, 1100);
	assert_int_equal(p->requests.memory, 1152 * MI);
	assert_int_equal(p->requests.ephemeral, GI);

	p = find_pod(s, "default", "nightly-report-28571040-5kq2d");
	assert_true(pod_finished(p));
	assert_int_equal(p->requests.cpu_m, 2000); /* stored, but not counted */
	assert_true(pod_finished(find_pod(s, "default", "import-fx7tq")));

	p = find_pod(s, "default", "web-7d9f8b6c5d-ghi56");
	assert_int_equal(p->flags, POD_UNSCHEDULABLE);
	assert_int_equal(p->phase, POD_PENDING);
	assert_string_equal(p->node_name, "");
	assert_int_equal(p->node, -1);
	assert_true(strncmp(p->sched_message, "0/4 nodes are available: 1 node(s) had", 38) == 0);

	p = find_pod(s, "ml", "trainer-0");
	assert_int_equal(resources_ext(&p->requests, "nvidia.com/gpu"), 2); /* from its limit */
	assert_int_equal(p->requests.memory, 32 * GI);
	assert_int_equal(p->priority, 1000);

	p = find_pod(s, "ml", "trainer-1");
	assert_int_equal(p->requests.cpu_m, 8250);           /* + overhead */
	assert_int_equal(p->requests.memory, 32 * GI + 160 * MI);
	assert_int_equal(resources_ext(&p->requests, "nvidia.com/gpu"), 4);
	assert_int_equal(p->affinity.n_terms, 2);
	assert_int_equal(p->affinity.terms[0].n_exprs, 2);
	assert_string_equal(p->affinity.terms[0].exprs[0].key, "node.kubernetes.io/instance-type");
	assert_int_equal(p->affinity.terms[0].exprs[0].op, SELECTOR_IN);
	assert_int_equal(p->affinity.terms[0].exprs[0].n_values, 2);
	assert_string_equal(p->affinity.terms[0].exprs[0].values[1], "p3.8xlarge");
	assert_int_equal(p->affinity.terms[0].exprs[1].op, SELECTOR_GT);
	assert_int_equal(p->affinity.terms[0].n_fields, 0);
	assert_int_equal(p->affinity.terms[1].n_exprs, 0);
	assert_int_equal(p->affinity.terms[1].n_fields, 1);
	assert_string_equal(p->affinity.terms[1].fields[0].key, "metadata.name");
	assert_string_equal(p->tolerations[0].value, "present");
	assert_int_equal(p->tolerations[0].op, TOLERATION_EQUAL);

	assert_int_equal(find_pod(s, "default", "cleanup-8h2xw")->flags, POD_TERMINATING);
	p = find_pod(s, "default", "cache-0");
	assert_int_equal(p->flags, POD_SAFE_TO_EVICT_FALSE | POD_LOCAL_STORAGE);
	assert_string_equal(p->local_volume, "data");
	assert_int_equal(p->annotations.n, 1); /* last-applied-configuration dropped */
	assert_null(kvlist_get(&p->annotations, "kubectl.kubernetes.io/last-applied-configuration"));
	p = find_pod(s, "jhub", "jupyter-alice");
	assert_string_equal(kvlist_get(&p->labels, "hub.jupyter.org/servername"), "");
	assert_int_equal(p->requests.memory, 1000000000);
	assert_string_equal(p->controller_kind, "");
	assert_int_equal(find_pod(s, "monitoring", "node-exporter-zz9kd")->flags, POD_DAEMONSET);
	p = find_pod(s, "default", "orphan-5c7d");
	assert_string_equal(p->node_name, "worker-gone");
	assert_int_equal(p->node, -1);

	/* pending: unbound, unfinished, not terminating, not DaemonSet */
	assert_int_equal(s->n_pending, 2);
	assert_int_equal(s->pending[0], pod_index(s, "default", "web-7d9f8b6c5d-ghi56"));
	assert_int_equal(s->pending[1], pod_index(s, "ml", "trainer-1"));

	/* PDBs */
	assert_string_equal(s->pdbs[0].ns, "kube-system");
	assert_string_equal(s->pdbs[0].name, "coredns");
	assert_string_equal(s->pdbs[0].min_available, "1");
	assert_string_equal(s->pdbs[0].max_unavailable, "");
	assert_int_equal(s->pdbs[0].disruptions_allowed, 0);
	assert_int_equal(s->pdbs[0].selector.n, 1);
	assert_false(s->pdbs[0].selects_all);
	assert_false(s->pdbs[0].selects_none);
	assert_true(pdb_matches(&s->pdbs[0], find_pod(s, "kube-system", "coredns-76f75df574-x7k2p")));
	assert_false(pdb_matches(&s->pdbs[0], find_pod(s, "kube-system", "kube-proxy-7xk2p")));
	assert_string_equal(s->pdbs[1].max_unavailable, "25%");
	assert_int_equal(s->pdbs[1].disruptions_allowed, 1);
	assert_true(pdb_matches(&s->pdbs[1], find_pod(s, "default", "web-7d9f8b6c5d-def34")));
	assert_false(pdb_matches(&s->pdbs[1], find_pod(s, "default", "api-0")));

	/* read-only now */
	assert_int_equal(add_text(s, "{\"kind\":\"Node\",\"metadata\":{\"name\":\"late\"}}", &err), -1);
	assert_non_null(strstr(err.msg, "finished"));
	assert_int_equal(snapshot_finish(s, NOW, &err), -1);
}

static void test_cluster_small_file(void **state)
{
	struct snapshot *s = load_data("cluster-small.json");

	(void)state;
	check_cluster_small(s);
	snapshot_free(s);
}

static void test_cluster_small_buffer(void **state)
{
	struct snapshot *s = snapshot_new();
	struct errbuf err = {{0}};
	size_t len;
	char *json = read_data("cluster-small.json", &len);

	(void)state;
	if (snapshot_add_json(s, json, len, "cluster-small.json", &err) != 0)
		fail_msg("%s", err.msg);
	free(json);
	check_cluster_small(s); /* strings do not point into the freed input */
	snapshot_free(s);
}

static void test_typed_lists(void **state)
{
	struct snapshot *s = load_data("nodelist-api.json");
	struct errbuf err = {{0}};
	char path[512];
	size_t len;
	char *json;

	(void)state;
	assert_int_equal(s->n_nodes, 4);
	assert_string_equal(s->nodes[3].name, "gpu-1");
	/* PodList whose items have no kind, and whose "kind" comes last */
	snprintf(path, sizeof(path), "%s/podlist-sorted.json", TEST_DATA_DIR);
	assert_int_equal(snapshot_load_file(s, path, &err), 0);
	assert_int_equal(s->n_pods, 6);
	assert_string_equal(s->pods[0].name, "etcd-cp-1");
	assert_string_equal(s->pods[5].name, "web-7d9f8b6c5d-def34");
	assert_int_equal(snapshot_finish(s, NOW, &err), 0);
	assert_int_equal(s->nodes[1].requested.pods, 3);
	snapshot_free(s);

	s = snapshot_new();
	json = read_data("podlist-sorted.json", &len);
	assert_int_equal(snapshot_add_json(s, json, len, "p.json", &err), 0);
	assert_int_equal(s->n_pods, 6);
	free(json);
	snapshot_free(s);
}

/*
 * A List larger than the file reader's chunk, so items straddle reads.
 * 'typed': a PodList whose items carry no kind and whose "kind" comes
 * last, so every item waits for a second read of the file.
 */
static void large_list(bool typed)
{
	char path[] = "/tmp/luascale-test-model-XXXXXX";
	struct snapshot *s = snapshot_new();
	struct errbuf err = {{0}};
	struct buf b = BUF_INIT;
	int fd = mkstemp(path);
	FILE *f;
	int i, n = 6000;

	assert_true(fd >= 0);
	assert_int_equal(add_doc(s, "{\"kind\":\"Node\",\"metadata\":{\"name\":\"big\"},"
				    "\"status\":{\"allocatable\":{\"cpu\":\"1000\",\"pods\":\"10000\"}}}", &err), 0);
	buf_puts(&b, "{\"apiVersion\":\"v1\",\"items\":[");
	for (i = 0; i < n; i++)
		buf_printf(&b, "%s\n  {%s\"metadata\":{\"namespace\":\"ns%d\",\"name\":\"pod-%06d\","
			       "\"labels\":{\"app\":\"a%d\",\"pod-template-hash\":\"5f7b9c\"},"
			       "\"annotations\":{\"note\":\"%0200d\"}},"
			       "\"spec\":{\"nodeName\":\"big\",\"containers\":[{\"name\":\"c\",\"resources\":"
			       "{\"requests\":{\"cpu\":\"%dm\",\"memory\":\"1Mi\"}}}]},\"status\":{\"phase\":\"Running\"}}",
			   i ? "," : "", typed ? "" : "\"kind\":\"Pod\",", i % 7, i, i % 3, i, 1 + i % 10);
	buf_printf(&b, "],\"kind\":\"%s\",\"metadata\":{\"resourceVersion\":\"\"}}\n",
		   typed ? "PodList" : "List");
	assert_true(b.len > 1024 * 1024 + 1024); /* more than one read chunk */
	f = fdopen(fd, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b.data, 1, b.len, f), b.len);
	fclose(f);
	buf_free(&b);

	if (snapshot_load_file(s, path, &err) != 0)
		fail_msg("%s", err.msg);
	unlink(path);
	assert_int_equal(s->n_pods, n);
	assert_int_equal(snapshot_finish(s, NOW, &err), 0);
	assert_int_equal(s->nodes[0].requested.pods, n);
	/* sum of 1 + i % 10 over i < 6000 = 600 * 55 */
	assert_int_equal(s->nodes[0].requested.cpu_m, 600 * 55);
	assert_int_equal(s->nodes[0].requested.memory, n * MI);
	assert_string_equal(s->pods[0].name, "pod-000000");
	assert_string_equal(s->pods[n - 1].name, "pod-005999");
	/* repeated strings are stored once */
	assert_ptr_equal(s->pods[0].labels.items[1].value, s->pods[1].labels.items[1].value);
	assert_ptr_equal(s->pods[0].ns, s->pods[7].ns);
	snapshot_free(s);
}

static void test_large_list_streamed(void **state)
{
	(void)state;
	large_list(false);
	large_list(true);
}

/* ---- effective requests ---- */

static void test_effective_requests(void **state)
{
	struct snapshot *s = snapshot_new();
	struct resources r;

	(void)state;
	/* no containers: nothing but the pod itself */
	r = pod_requests(s, "{}");
	assert_int_equal(r.cpu_m, 0);
	assert_int_equal(r.memory, 0);
	assert_int_equal(r.pods, 1);
	assert_int_equal(r.n_ext, 0);

	/* containers add up */
	r = pod_requests(s, "{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"1Gi\"}}},"
			    "{\"resources\":{\"requests\":{\"cpu\":\"1.5\",\"memory\":\"512Mi\"}}}]}");
	assert_int_equal(r.cpu_m, 1600);
	assert_int_equal(r.memory, GI + 512 * MI);

	/* a big init container wins over the containers' sum */
	r = pod_requests(s, "{\"initContainers\":[{\"resources\":{\"requests\":{\"cpu\":\"2\"}}}],"
			    "\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"500m\",\"memory\":\"1Gi\"}}}]}");
	assert_int_equal(r.cpu_m, 2000);
	assert_int_equal(r.memory, GI);

	/* init containers run one at a time: max, not sum */
	r = pod_requests(s, "{\"initContainers\":[{\"resources\":{\"requests\":{\"cpu\":\"2\"}}},"
			    "{\"resources\":{\"requests\":{\"cpu\":\"3\"}}}],"
			    "\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}");
	assert_int_equal(r.cpu_m, 3000);

	/* sidecars count with the containers and with init containers after them,
	 * not with init containers before them:
	 * A(1) before S(200m); B(900m) after S: max(300+200, 1000, 900+200) */
	r = pod_requests(s, "{\"initContainers\":["
			    "{\"name\":\"a\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}},"
			    "{\"name\":\"s\",\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"cpu\":\"200m\"}}},"
			    "{\"name\":\"b\",\"resources\":{\"requests\":{\"cpu\":\"900m\"}}}],"
			    "\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"300m\"}}}]}");
	assert_int_equal(r.cpu_m, 1100);
	r = pod_requests(s, "{\"initContainers\":["
			    "{\"name\":\"a\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}},"
			    "{\"name\":\"s\",\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"cpu\":\"200m\"}}},"
			    "{\"name\":\"b\",\"resources\":{\"requests\":{\"cpu\":\"700m\"}}}],"
			    "\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"300m\"}}}]}");
	assert_int_equal(r.cpu_m, 1000);
	/* two sidecars and big containers: containers + all sidecars */
	r = pod_requests(s, "{\"initContainers\":["
			    "{\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"memory\":\"100Mi\"}}},"
			    "{\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"memory\":\"50Mi\"}}}],"
			    "\"containers\":[{\"resources\":{\"requests\":{\"memory\":\"1Gi\"}}}]}");
	assert_int_equal(r.memory, GI + 150 * MI);
	/* an init container's restartPolicy other than Always is a plain init container */
	r = pod_requests(s, "{\"initContainers\":[{\"restartPolicy\":\"OnFailure\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}],"
			    "\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}]}");
	assert_int_equal(r.cpu_m, 1000);

	/* limits without requests become requests; with requests they do not */
	r = pod_requests(s, "{\"containers\":[{\"resources\":{\"limits\":{\"cpu\":\"1\",\"memory\":\"2Gi\"},"
			    "\"requests\":{\"memory\":\"1Gi\"}}}]}");
	assert_int_equal(r.cpu_m, 1000);
	assert_int_equal(r.memory, GI);
	r = pod_requests(s, "{\"containers\":[{\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}},"
			    "{\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"2\",\"example.com/fpga\":\"1\"}}}]}");
	assert_int_equal(resources_ext(&r, "nvidia.com/gpu"), 3);
	assert_int_equal(resources_ext(&r, "example.com/fpga"), 1);
	assert_int_equal(r.n_ext, 2);

	/* extended resources follow the same rule; zero amounts are dropped */
	r = pod_requests(s, "{\"initContainers\":[{\"resources\":{\"requests\":{\"example.com/dongle\":\"3\"}}},"
			    "{\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"1\"}}}],"
			    "\"containers\":[{\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"1\",\"example.com/dongle\":\"0\","
			    "\"hugepages-2Mi\":\"4Mi\"}}}]}");
	assert_int_equal(resources_ext(&r, "example.com/dongle"), 3);
	assert_int_equal(resources_ext(&r, "nvidia.com/gpu"), 2);
	assert_int_equal(resources_ext(&r, "hugepages-2Mi"), 4 * MI);
	assert_int_equal(r.n_ext, 3);

	/* overhead is added on top */
	r = pod_requests(s, "{\"overhead\":{\"cpu\":\"250m\",\"memory\":\"120Mi\",\"example.com/vm\":\"1\"},"
			    "\"initContainers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}],"
			    "\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}]}");
	assert_int_equal(r.cpu_m, 1250);
	assert_int_equal(r.memory, 120 * MI);
	assert_int_equal(resources_ext(&r, "example.com/vm"), 1);

	/* quantities written as JSON numbers, rounding up below a millicore */
	r = pod_requests(s, "{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":0.5,\"memory\":1048576,"
			    "\"ephemeral-storage\":\"1u\"}}},{\"resources\":{\"requests\":{\"cpu\":\"1u\"}}}]}");
	assert_int_equal(r.cpu_m, 501);
	assert_int_equal(r.memory, MI);
	assert_int_equal(r.ephemeral, 1);

	/* null resources, requests and values are absent */
	r = pod_requests(s, "{\"containers\":[{\"resources\":null},{\"resources\":{\"requests\":null,"
			    "\"limits\":{\"cpu\":null}}}]}");
	assert_int_equal(r.cpu_m, 0);
	snapshot_free(s);
}

/* ---- validation ---- */

struct bad_case {
	const char *json;
	const char *message; /* must appear in the error */
};

static void test_malformed_objects(void **state)
{
	static const struct bad_case cases[] = {
		{"[]", "object has no \"kind\" string"},
		{"{\"kind\":\"Node\"}", "Node: metadata: missing"},
		{"{\"kind\":\"Node\",\"metadata\":[]}", "Node: metadata: expected an object, got an array"},
		{"{\"kind\":\"Node\",\"metadata\":{}}", "Node: metadata.name: missing"},
		{"{\"kind\":\"Node\",\"metadata\":{\"name\":\"\"}}", "Node: metadata.name: must not be empty"},
		{"{\"kind\":\"Node\",\"metadata\":{\"name\":7}}", "Node: metadata.name: expected a string, got a number"},
		{"{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\",\"labels\":[\"a\"]}}",
		 "Node n1: metadata.labels: expected an object, got an array"},
		{"{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\",\"labels\":{\"app\":3}}}",
		 "Node n1: metadata.labels.app: expected a string, got a number"},
		{"{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\",\"annotations\":{\"a\":true}}}",
		 "Node n1: metadata.annotations.a: expected a string, got a boolean"},
		{"{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\",\"creationTimestamp\":\"yesterday\"}}",
		 "Node n1: metadata.creationTimestamp: invalid time \"yesterday\""},
		{"{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"},\"spec\":{\"taints\":{}}}",
		 "Node n1: spec.taints: expected an array, got an object"},
		{"{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"},\"spec\":{\"taints\":[\"x\"]}}",
		 "Node n1: spec.taints[0]: expected an object, got a string"},
		{"{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"},\"spec\":{\"taints\":[{\"key\":\"k\",\"effect\":\"NoSchedule\"},{\"key\":\"k\",\"effect\":\"Sometimes\"}]}}",
		 "Node n1: spec.taints[1].effect: unknown taint effect \"Sometimes\""},
		{"{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"},\"spec\":{\"taints\":[{\"effect\":\"NoSchedule\"}]}}",
		 "Node n1: spec.taints[0].key: missing"},
		{"{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"},\"spec\":{\"unschedulable\":\"yes\"}}",
		 "Node n1: spec.unschedulable: expected a boolean, got a string"},
		{"{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"},\"status\":{\"allocatable\":{\"cpu\":\"lots\"}}}",
		 "Node n1: status.allocatable.cpu: invalid quantity \"lots\": expected a number"},
		{"{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"},\"status\":{\"capacity\":{\"memory\":\"16Ei\"}}}",
		 "Node n1: status.capacity.memory: quantity \"16Ei\" is too large"},
		{"{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"},\"status\":{\"allocatable\":{\"pods\":[]}}}",
		 "Node n1: status.allocatable.pods: expected a quantity, got an array"},
		{"{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"},\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":true}]}}",
		 "Node n1: status.conditions[0].status: expected a string, got a boolean"},
		{"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"}}", "Pod: metadata.namespace: missing"},
		{"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"ns\"}}", "Pod ns/?: metadata.name: missing"},
		{"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"p\"},\"spec\":{\"containers\":{}}}",
		 "Pod ns/p: spec.containers: expected an array, got an object"},
		{"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"p\"},\"spec\":{\"containers\":[1]}}",
		 "Pod ns/p: spec.containers[0]: expected an object, got a number"},
		{"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"p\"},\"spec\":{\"containers\":[{},{\"resources\":{\"requests\":{\"cpu\":\"abc\"}}}]}}",
		 "Pod ns/p: spec.containers[1].resources.requests.cpu: invalid quantity \"abc\": expected a number"},
		{"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"p\"},\"spec\":{\"initContainers\":[{\"resources\":{\"limits\":{\"memory\":\"1Kb\"}}}]}}",
		 "Pod ns/p: spec.initContainers[0].resources.limits.memory: invalid quantity \"1Kb\": unknown suffix \"Kb\""},
		{"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"p\"},\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"-1\"}}}]}}",
		 "Pod ns/p: spec.containers[0].resources.requests.cpu: must not be negative"},
		{"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"p\"},\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"memory\":\"7Ei\"}}},{\"resources\":{\"requests\":{\"memory\":\"7Ei\"}}}]}}",
		 "Pod ns/p: spec.containers: resource sum does not fit in 64 bits"},
		{"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"p\"},\"spec\":{\"containers\":[{\"resources\":{\"requests\":[]}}]}}",
		 "Pod ns/p: spec.containers[0].resources.requests: expected an object, got an array"},
		{"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"p\"},\"spec\":{\"overhead\":{\"cpu\":\"x\"}}}",
		 "Pod ns/p: spec.overhead.cpu: invalid quantity \"x\""},
		{"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"p\"},\"spec\":{\"priority\":\"high\"}}",
		 "Pod ns/p: spec.priority: expected a 32-bit integer, got a string"},
		{"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"p\"},\"spec\":{\"priority\":3000000000}}",
		 "Pod ns/p: spec.priority: expected a 32-bit integer, got a number out of range"},
		{"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"p\"},\"spec\":{\"priority\":1.5}}",
		 "spec.priority: expected a 32-bit integer"},
		{"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"p\"},\"spec\":{\"nodeName\":[]}}",
		 "Pod ns/p: spec.nodeName: expected a string, got an array"},
		{"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"p\"},\"spec\":{\"nodeSelector\":{\"a\":null}}}",
		 "Pod ns/p: spec.nodeSelector.a: expected a string, got null"},
		{"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"p\"},\"spec\":{\"tolerations\":[{\"key\":\"k\",\"operator\":\"Maybe\"}]}}",
		 "Pod ns/p: spec.tolerations[0].operator: unknown operator \"Maybe\" (want Equal or Exists)"},
		{"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"p\"},\"spec\":{\"tolerations\":[{\"effect\":\"Never\"}]}}",
		 "Pod ns/p: spec.tolerations[0].effect: unknown taint effect \"Never\""},
		{"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"p\"},\"spec\":{\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"k\",\"operator\":\"Near\"}]}]}}}}}",
		 "Pod ns/p: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator: unknown operator \"Near\""},
		{"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"p\"},\"spec\":{\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[1]}]}]}}}}}",
		 "nodeSelectorTerms[0].matchFields[0].values[0]: expected a string, got a number"},
		{"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"p\"},\"spec\":{\"affinity\":[]}}",
		 "Pod ns/p: spec.affinity: expected an object, got an array"},
		{"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"p\"},\"spec\":{\"volumes\":[{\"name\":\"v\",\"emptyDir\":{\"medium\":5}}]}}",
		 "Pod ns/p: spec.volumes[0].emptyDir.medium: expected a string, got a number"},
		{"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"p\",\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"controller\":\"true\"}]}}",
		 "Pod ns/p: metadata.ownerReferences[0].controller: expected a boolean, got a string"},
		{"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"p\"},\"status\":{\"phase\":\"Exploded\"}}",
		 "Pod ns/p: status.phase: unknown phase \"Exploded\""},
		{"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"p\"},\"status\":{\"conditions\":{}}}",
		 "Pod ns/p: status.conditions: expected an array, got an object"},
		{"{\"kind\":\"PodDisruptionBudget\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"b\"},\"spec\":{\"minAvailable\":true}}",
		 "PodDisruptionBudget ns/b: spec.minAvailable: expected an integer or a string, got a boolean"},
		{"{\"kind\":\"PodDisruptionBudget\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"b\"},\"spec\":{\"selector\":{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Gt\",\"values\":[\"1\"]}]}}}",
		 "PodDisruptionBudget ns/b: spec.selector.matchExpressions[0].operator: unknown operator \"Gt\" (want In, NotIn, Exists or DoesNotExist)"},
		{"{\"kind\":\"PodDisruptionBudget\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"b\"},\"spec\":{\"selector\":{\"matchLabels\":{\"a\":1}}}}",
		 "PodDisruptionBudget ns/b: spec.selector.matchLabels.a: expected a string, got a number"},
		{"{\"kind\":\"PodDisruptionBudget\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"b\"},\"status\":{\"disruptionsAllowed\":\"1\"}}",
		 "PodDisruptionBudget ns/b: status.disruptionsAllowed: expected a 32-bit integer, got a string"},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct snapshot *s = snapshot_new();
		struct errbuf err = {{0}};

		if (add_text(s, cases[i].json, &err) != -1)
			fail_msg("case %zu accepted: %s", i, cases[i].json);
		if (!strstr(err.msg, cases[i].message))
			fail_msg("case %zu: message \"%s\", want \"%s\"", i, err.msg,
				 cases[i].message);
		snapshot_free(s);
	}
}

static void test_pdb_selectors(void **state)
{
	struct snapshot *s = snapshot_new();
	struct errbuf err = {{0}};

	(void)state;
	assert_int_equal(add_text(s, "{\"kind\":\"PodDisruptionBudget\",\"metadata\":{\"namespace\":\"a\",\"name\":\"all\"},"
				  "\"spec\":{\"maxUnavailable\":0,\"selector\":{}}}", &err), 0);
	assert_int_equal(add_text(s, "{\"kind\":\"PodDisruptionBudget\",\"metadata\":{\"namespace\":\"a\",\"name\":\"none\"},"
				  "\"spec\":{\"selector\":null}}", &err), 0);
	assert_int_equal(add_text(s, "{\"kind\":\"PodDisruptionBudget\",\"metadata\":{\"namespace\":\"a\",\"name\":\"mixed\"},"
				  "\"spec\":{\"minAvailable\":\"50%\",\"selector\":{\"matchLabels\":{\"app\":\"x\"},"
				  "\"matchExpressions\":[{\"key\":\"tier\",\"operator\":\"NotIn\",\"values\":[\"db\"]},"
				  "{\"key\":\"canary\",\"operator\":\"DoesNotExist\"}]}},\"status\":{\"disruptionsAllowed\":2}}", &err), 0);
	assert_int_equal(add_text(s, "{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"a\",\"name\":\"p1\","
				  "\"labels\":{\"app\":\"x\",\"tier\":\"web\"}}}", &err), 0);
	assert_int_equal(add_text(s, "{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"a\",\"name\":\"p2\","
				  "\"labels\":{\"app\":\"x\",\"tier\":\"db\"}}}", &err), 0);
	assert_int_equal(add_text(s, "{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"b\",\"name\":\"p3\","
				  "\"labels\":{\"app\":\"x\"}}}", &err), 0);
	assert_int_equal(s->n_pdbs, 3);
	assert_true(s->pdbs[0].selects_all);
	assert_string_equal(s->pdbs[0].max_unavailable, "0");
	assert_true(s->pdbs[1].selects_none);
	assert_int_equal(s->pdbs[2].selector.n, 3);
	assert_string_equal(s->pdbs[2].min_available, "50%");
	assert_int_equal(s->pdbs[2].disruptions_allowed, 2);
	assert_true(pdb_matches(&s->pdbs[0], &s->pods[0]));
	assert_false(pdb_matches(&s->pdbs[0], &s->pods[2])); /* other namespace */
	assert_false(pdb_matches(&s->pdbs[1], &s->pods[0]));
	assert_true(pdb_matches(&s->pdbs[2], &s->pods[0]));
	assert_false(pdb_matches(&s->pdbs[2], &s->pods[1]));
	snapshot_free(s);
}

static void test_pod_details(void **state)
{
	struct snapshot *s = snapshot_new();
	struct errbuf err = {{0}};
	const struct pod *p;

	(void)state;
	/* config.source "api" is not static; safe-to-evict "true" is not a flag;
	 * a deletionTimestamp makes it terminating; unknown fields are ignored */
	assert_int_equal(add_text(s, "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"futureField\":{\"x\":[1,2]},"
				  "\"metadata\":{\"namespace\":\"n\",\"name\":\"p\",\"deletionTimestamp\":\"2024-05-01T10:00:00Z\","
				  "\"managedFields\":[{\"manager\":\"kubectl\"}],"
				  "\"annotations\":{\"kubernetes.io/config.source\":\"api\","
				  "\"cluster-autoscaler.kubernetes.io/safe-to-evict\":\"true\"},"
				  "\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"rs\"},"
				  "{\"kind\":\"Job\",\"name\":\"j\",\"controller\":true}]},"
				  "\"spec\":{\"priority\":-5,\"hostNetwork\":true,\"containers\":[{\"name\":\"c\",\"ports\":[{\"containerPort\":80}]}],"
				  "\"volumes\":[{\"name\":\"mem\",\"emptyDir\":{\"medium\":\"Memory\",\"sizeLimit\":\"1Gi\"}},"
				  "{\"name\":\"pvc\",\"persistentVolumeClaim\":{\"claimName\":\"c\"}},"
				  "{\"name\":\"hp\",\"emptyDir\":{\"medium\":\"HugePages\"}}]},"
				  "\"status\":{\"phase\":\"Unknown\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\","
				  "\"reason\":\"SchedulerError\",\"message\":\"boom\"}]}}", &err), 0);
	p = &s->pods[0];
	assert_int_equal(p->flags, POD_TERMINATING | POD_LOCAL_STORAGE | POD_SCHEDULER_ONLY |
				   POD_HOST_NETWORK); /* the claim */
	assert_string_equal(p->local_volume, "hp");
	assert_string_equal(p->controller_kind, "Job");
	assert_string_equal(p->controller_name, "j");
	assert_int_equal(p->priority, -5);
	assert_int_equal(p->phase, POD_UNKNOWN);
	assert_string_equal(p->sched_message, "boom");
	assert_int_equal(p->created, 0);
	assert_string_equal(p->node_name, "");
	assert_int_equal(p->n_tolerations, 0);
	assert_int_equal(p->affinity.n_terms, 0);
	assert_int_equal(p->node_selector.n, 0);
	/* the kind argument wins over the object's */
	{
		cJSON *o = cJSON_Parse("{\"metadata\":{\"name\":\"n9\"}}");

		assert_int_equal(snapshot_add_object(s, o, "Node", &err), 0);
		assert_int_equal(snapshot_add_object(s, o, "ConfigMap", &err), 0);
		cJSON_Delete(o);
	}
	assert_int_equal(s->n_nodes, 1);
	assert_string_equal(s->nodes[0].provider_id, "");
	assert_false(s->nodes[0].ready);
	/* objects of other kinds are ignored */
	assert_int_equal(add_text(s, "{\"kind\":\"Service\",\"metadata\":7}", &err), 0);
	assert_int_equal(s->n_nodes + s->n_pods + s->n_pdbs, 2);
	snapshot_free(s);
}

/* ---- documents ---- */

static void test_documents(void **state)
{
	struct snapshot *s = snapshot_new();
	struct errbuf err = {{0}};

	(void)state;
	/* a single object */
	assert_int_equal(add_doc(s, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"a\",\"name\":\"solo\"}}", &err), 0);
	assert_int_equal(s->n_pods, 1);
	assert_int_equal(add_doc(s, " {\"metadata\":{\"name\":\"n-solo\"},\"kind\":\"Node\"}\n", &err), 0);
	assert_int_equal(s->n_nodes, 1);
	/* ignored: other kinds, empty lists, lists of other things */
	assert_int_equal(add_doc(s, "{\"kind\":\"Service\",\"metadata\":{\"name\":\"x\"}}", &err), 0);
	assert_int_equal(add_doc(s, "{\"kind\":\"List\",\"items\":[]}", &err), 0);
	assert_int_equal(add_doc(s, "{\"kind\":\"PodList\",\"items\":null}", &err), 0);
	assert_int_equal(add_doc(s, "{\"kind\":\"NodeList\"}", &err), 0);
	assert_int_equal(add_doc(s, "{\"kind\":\"ServiceList\",\"items\":[{\"metadata\":{\"name\":\"svc\"}}]}", &err), 0);
	assert_int_equal(add_doc(s, "{\"items\":[{\"kind\":\"ConfigMap\",\"data\":{\"items\":[1]}},"
				    "{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"a\",\"name\":\"in-list\"}}],"
				    "\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"\",\"items\":[\"x\"]}}", &err), 0);
	assert_int_equal(s->n_pods, 2);
	assert_string_equal(s->pods[1].name, "in-list");
	/* strings with brackets and escaped quotes do not confuse the scanner */
	assert_int_equal(add_doc(s, "{\"kind\":\"PodList\",\"items\":[{\"metadata\":{\"namespace\":\"a\",\"name\":\"q\","
				    "\"annotations\":{\"x\":\"]}\\\"{[\\\\\"}}}],\"metadata\":{\"x\":\"\\\"]\"}}", &err), 0);
	assert_string_equal(kvlist_get(&s->pods[2].annotations, "x"), "]}\"{[\\");
	assert_int_equal(s->n_nodes + s->n_pods + s->n_pdbs, 4);
	snapshot_free(s);
}

static void expect_doc_error(const char *json, const char *message)
{
	struct snapshot *s = snapshot_new();
	struct errbuf err = {{0}};

	if (add_doc(s, json, &err) != -1)
		fail_msg("accepted: %s", json);
	if (!strstr(err.msg, message))
		fail_msg("document %s: message \"%s\", want \"%s\"", json, err.msg, message);
	snapshot_free(s);
}

static void test_document_errors(void **state)
{
	(void)state;
	expect_doc_error("", "state.json: empty document");
	expect_doc_error("   \n", "state.json: unexpected end of input at byte 4");
	expect_doc_error("[]", "state.json: invalid JSON at byte 0: expected a JSON object '{', found '['");
	expect_doc_error("{\"kind\":\"List\"", "state.json: unexpected end of input at byte 14 (truncated document)");
	expect_doc_error("{\"kind\":\"List\",\"items\":[{\"kind\":\"Pod\"",
			 "state.json: unexpected end of input at byte 37 (truncated inside items[0])");
	expect_doc_error("{\"kind\":\"List\",\"items\":[{\"kind\":\"Node\",\"metadata\":{\"name\":\"a\"}},",
			 "truncated inside items[1]");
	expect_doc_error("{\"kind\":\"List\",\"items\":[{\"kind\":\"Node\",\"metadata\":{\"name\":\"a\"}}]",
			 "truncated document");
	expect_doc_error("{\"items\":[}]}", "state.json: invalid JSON at byte 10: expected an item, found '}'");
	expect_doc_error("{\"metadata\":{\"a\":[}]}", "state.json: invalid JSON at byte 18: expected ']', found '}'");
	expect_doc_error("{\"items\":[{]}", "invalid JSON at byte 11: expected '}', found ']'");
	expect_doc_error("{\"kind\":\"Pod\"} x", "invalid JSON at byte 15: unexpected data after the document, found 'x'");
	expect_doc_error("{\"kind\" \"Pod\"}", "invalid JSON at byte 8: expected ':'");
	expect_doc_error("{\"kind\":\"Pod\",}", "invalid JSON at byte 14: expected a key, found '}'");
	expect_doc_error("{\"kind\":5}", "\"kind\" must be a string");
	expect_doc_error("{\"items\":{}}", "\"items\" must be an array");
	expect_doc_error("{\"items\":\"x\"}", "\"items\" must be an array");
	expect_doc_error("{\"items\":[],\"items\":[]}", "a second \"items\" array");
	expect_doc_error("{\"items\":[{} {}]}", "invalid JSON at byte 13: expected ',' or ']' after an item, found '{'");
	expect_doc_error("{\"items\":[,]}", "expected an item, found ','");
	expect_doc_error("{\"kind\":\"a\tb\"}", "control character in a string");
	expect_doc_error("{\"metadata\":{}}", "state.json: not a Kubernetes object or List: no \"kind\"");
	/* item-level errors name the item, its object and the field */
	expect_doc_error("{\"kind\":\"List\",\"items\":[{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"}},"
			 "{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"default\",\"name\":\"web-1\"},"
			 "\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"abc\"}}}]}}]}",
			 "state.json: items[1] (Pod default/web-1): spec.containers[0].resources.requests.cpu: "
			 "invalid quantity \"abc\": expected a number");
	expect_doc_error("{\"kind\":\"List\",\"items\":[{\"kind\":\"Pod\",\"metadata\":{\"name\":tru}}]}",
			 "state.json: items[0]: invalid JSON at byte 57");
	expect_doc_error("{\"kind\":\"List\",\"items\":[3]}", "state.json: items[0]: expected an object");
	expect_doc_error("{\"kind\":\"List\",\"items\":[{\"metadata\":{}}]}", "state.json: items[0]: object has no \"kind\"");
	expect_doc_error("{\"items\":[{\"metadata\":{}}]}", "state.json: items[0]: object has no \"kind\"");
	expect_doc_error("{\"items\":[{\"kind\":[]}]}", "state.json: items[0]: kind: expected a string");
	/* a deferred item (kind known only at the end) still reports well */
	expect_doc_error("{\"items\":[{\"metadata\":{\"name\":\"n1\"}},{\"metadata\":{}}],\"kind\":\"NodeList\"}",
			 "state.json: items[1] (Node): metadata.name: missing");
	expect_doc_error("{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"a\",\"name\":\"b\"},\"spec\":{\"priority\":\"x\"}}",
			 "state.json: Pod a/b: spec.priority: expected a 32-bit integer");
}

static void test_load_file_errors(void **state)
{
	struct snapshot *s = snapshot_new();
	struct errbuf err = {{0}};

	(void)state;
	assert_int_equal(snapshot_load_file(s, "/nonexistent/state.json", &err), -1);
	assert_string_equal(err.msg, "cannot read /nonexistent/state.json: No such file or directory");
	assert_int_equal(snapshot_load_file(s, "/", &err), -1);
	assert_string_equal(err.msg, "cannot read /: a directory, not a regular file; give the path of a file");
	/* a FIFO nobody writes to is refused at once instead of waiting forever */
	{
		char dir[] = "/tmp/test_model_fifo.XXXXXX", path[64];

		assert_non_null(mkdtemp(dir));
		snprintf(path, sizeof(path), "%s/state.json", dir);
		assert_int_equal(mkfifo(path, 0600), 0);
		assert_int_equal(snapshot_load_file(s, path, &err), -1);
		assert_non_null(strstr(err.msg, "a pipe or FIFO, not a regular file"));
		unlink(path);
		rmdir(dir);
	}
	snapshot_free(s);
}

/* ---- groups and finish ---- */

static void test_groups_and_finish(void **state)
{
	struct snapshot *s = snapshot_new();
	struct errbuf err = {{0}};
	char name[] = "pool";
	char key[] = "pool";
	char value[] = "a";
	struct kv sel = {key, value};
	struct kv tlabel = {"zone", "z1"};
	struct res_ext text = {"nvidia.com/gpu", 8};
	struct taint tt = {"dedicated", "gpu", TAINT_NO_SCHEDULE};
	struct node_group g;

	(void)state;
	memset(&g, 0, sizeof(g));
	g.name = name;
	g.min = 0;
	g.max = 5;
	g.price_per_hour = 0.5;
	g.selector = (struct kvlist){&sel, 1};
	g.tmpl.allocatable.cpu_m = 4000;
	g.tmpl.allocatable.ext = &text;
	g.tmpl.allocatable.n_ext = 1;
	g.tmpl.labels = (struct kvlist){&tlabel, 1};
	g.tmpl.taints = &tt;
	g.tmpl.n_taints = 1;
	g.target = -1;
	assert_int_equal(snapshot_set_groups(s, &g, 1, &err), 0);
	/* a deep copy: the caller's strings may go away */
	name[0] = 'X';
	key[0] = 'X';
	assert_string_equal(s->groups[0].name, "pool");
	assert_string_equal(s->groups[0].selector.items[0].key, "pool");
	assert_int_equal(resources_ext(&s->groups[0].tmpl.allocatable, "nvidia.com/gpu"), 8);
	assert_ptr_not_equal(s->groups[0].tmpl.allocatable.ext, &text);
	assert_string_equal(s->groups[0].tmpl.taints[0].value, "gpu");
	assert_string_equal(kvlist_get(&s->groups[0].tmpl.labels, "zone"), "z1");
	assert_true(s->groups[0].price_per_hour == 0.5);
	assert_int_equal(s->groups[0].max, 5);

	assert_int_equal(add_doc(s, "{\"kind\":\"List\",\"items\":["
				    "{\"kind\":\"Node\",\"metadata\":{\"name\":\"a1\",\"labels\":{\"pool\":\"a\"}}},"
				    "{\"kind\":\"Node\",\"metadata\":{\"name\":\"b1\",\"labels\":{\"pool\":\"b\"}}},"
				    "{\"kind\":\"Node\",\"metadata\":{\"name\":\"a2\",\"labels\":{\"pool\":\"a\",\"x\":\"y\"}}}]}", &err), 0);
	assert_int_equal(snapshot_finish(s, 42, &err), 0);
	assert_int_equal(s->groups[0].current, 2);
	assert_int_equal(s->groups[0].target, 2);
	assert_int_equal(s->nodes[0].group, 0);
	assert_int_equal(s->nodes[1].group, -1);
	assert_int_equal(s->nodes[2].group, 0);
	assert_int_equal(s->n_pending, 0);
	assert_null(s->pending);
	assert_int_equal(s->nodes[0].n_pods, 0);
	assert_int_equal(s->nodes[0].requested.pods, 0);
	assert_int_equal(snapshot_set_groups(s, &g, 1, &err), -1);
	snapshot_free(s);

	/* an empty snapshot finishes */
	s = snapshot_new();
	assert_int_equal(snapshot_finish(s, 1, &err), 0);
	assert_int_equal(s->n_nodes + s->n_pods + s->n_pending, 0);
	assert_int_equal(snapshot_find_node(s, "x"), -1);
	snapshot_free(s);
	snapshot_free(NULL);

	/* duplicates would be counted twice */
	s = snapshot_new();
	assert_int_equal(add_doc(s, "{\"kind\":\"List\",\"items\":["
				    "{\"kind\":\"Node\",\"metadata\":{\"name\":\"a1\"}},"
				    "{\"kind\":\"Node\",\"metadata\":{\"name\":\"a1\"}}]}", &err), 0);
	assert_int_equal(snapshot_finish(s, 1, &err), -1);
	assert_string_equal(err.msg, "duplicate Node a1");
	snapshot_free(s);
	s = snapshot_new();
	assert_int_equal(add_doc(s, "{\"kind\":\"List\",\"items\":["
				    "{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"a\",\"name\":\"p\"}},"
				    "{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"b\",\"name\":\"p\"}},"
				    "{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"a\",\"name\":\"p\"}}]}", &err), 0);
	assert_int_equal(snapshot_finish(s, 1, &err), -1);
	assert_string_equal(err.msg, "duplicate Pod a/p");
	snapshot_free(s);
}

/* A node registered but not Ready yet is starting for its first 15
 * minutes: upcoming, not current, so a pending pod makes no second node. */
static void test_starting_nodes_are_upcoming(void **state)
{
	struct snapshot *s = snapshot_new();
	struct errbuf err = {{0}};
	struct kv sel = {"pool", "a"};
	struct node_group g;
	int64_t now = 1764590400; /* 2025-12-01T12:00:00Z */

	(void)state;
	memset(&g, 0, sizeof(g));
	g.name = "pool";
	g.max = 10;
	g.selector = (struct kvlist){&sel, 1};
	g.target = -1;
	assert_int_equal(snapshot_set_groups(s, &g, 1, &err), 0);
#define N(name, created, ready, extra)                                                              \
	"{\"kind\":\"Node\",\"metadata\":{\"name\":\"" name "\",\"labels\":{\"pool\":\"a\"},"       \
	"\"creationTimestamp\":\"" created "\"},\"spec\":{" extra "},\"status\":{\"conditions\":"      \
	"[{\"type\":\"Ready\",\"status\":\"" ready "\"}]}}"
	assert_int_equal(add_doc(s, "{\"kind\":\"List\",\"items\":["
				    N("ready", "2025-12-01T11:59:00Z", "True", "") ","
				    N("young", "2025-12-01T11:59:30Z", "False", "") ","
				    N("old", "2025-12-01T11:40:00Z", "False", "") ","
				    N("cordoned", "2025-12-01T11:59:30Z", "False", "\"unschedulable\":true") "]}",
			 &err), 0);
#undef N
	assert_int_equal(snapshot_finish(s, now, &err), 0);
	/* the old unready node and the cordoned one count as there (and broken) */
	assert_int_equal(s->groups[0].current, 3);
	assert_int_equal(s->groups[0].starting, 1);
	assert_int_equal(s->groups[0].target, 4); /* upcoming 1: the young one */
	snapshot_free(s);
}

/* ---- time ---- */

static void test_parse_time(void **state)
{
	static const struct {
		const char *text;
		int64_t want;
	} good[] = {
		{"2024-05-01T10:00:00Z", 1714557600},
		{"2024-05-01T10:00:00.123456789Z", 1714557600},
		{"2024-05-01T10:00:00.9Z", 1714557600},
		{"2024-05-01t10:00:00z", 1714557600},
		{"2024-05-01T12:00:00+02:00", 1714557600},
		{"2024-05-01T04:30:00-05:30", 1714557600},
		{"2024-05-01T10:00:00.5+00:00", 1714557600},
		{"1970-01-01T00:00:00Z", 0},
		{"1969-12-31T23:59:59Z", -1},
		{"2024-02-29T00:00:00Z", 1709164800},
		{"2000-03-01T00:00:00Z", 951868800},
		{"1900-01-01T00:00:00Z", -2208988800LL},
		{"0001-01-01T00:00:00Z", -62135596800LL},
		{"9999-12-31T23:59:59Z", 253402300799LL},
	};
	static const char *const bad[] = {
		"", "2024-05-01", "2024-05-01T10:00:00", "2024-05-01 10:00:00Z",
		"2024-13-01T10:00:00Z", "2024-00-01T10:00:00Z", "2024-04-31T10:00:00Z",
		"2023-02-29T10:00:00Z", "1900-02-29T00:00:00Z", "2024-05-01T24:00:00Z",
		"2024-05-01T10:60:00Z", "2024-05-01T10:00:60Z", "2024-05-01T10:00:00.Z",
		"2024-05-01T10:00:00+0200", "2024-05-01T10:00:00+02", "2024-05-01T10:00:00+24:00",
		"2024-05-01T10:00:00Zjunk", "24-05-01T10:00:00Z", "2024-5-01T10:00:00Z",
		"2024-05-01T10:00:00 Z", "+2024-05-01T10:00:00Z", "2024-05-01T1a:00:00Z",
	};
	size_t i;
	int64_t t;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		t = 7;
		if (model_parse_time(good[i].text, &t) != 0)
			fail_msg("rejected %s", good[i].text);
		if (t != good[i].want)
			fail_msg("%s -> %lld, want %lld", good[i].text, (long long)t,
				 (long long)good[i].want);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (model_parse_time(bad[i], &t) != -1)
			fail_msg("accepted \"%s\"", bad[i]);
	assert_int_equal(model_parse_time(NULL, &t), -1);
}

/* ---- robustness ---- */

/* Every prefix must fail cleanly (or, for a complete document, succeed). */
static void test_truncated_prefixes(void **state)
{
	size_t len, cut, step;
	char *json = read_data("cluster-small.json", &len);
	struct errbuf err;

	(void)state;
	assert_string_equal(json + len - 2, "}\n"); /* complete without the newline */
	for (cut = 0; cut < len - 1; cut += step) {
		struct snapshot *s = snapshot_new();
		char *copy = malloc(cut + 1);

		/* every byte near the start, then a spread over the rest */
		step = cut < 3000 ? 1 : 37;
		memcpy(copy, json, cut);
		copy[cut] = '\0';
		err.msg[0] = '\0';
		if (snapshot_add_json(s, copy, cut, "cut.json", &err) == 0)
			fail_msg("a prefix of %zu bytes was accepted", cut);
		assert_true(strncmp(err.msg, "cut.json: ", 10) == 0);
		free(copy);
		snapshot_free(s);
	}
	free(json);
}

/* Flipped bytes anywhere: decode and index whatever is accepted. */
static void test_mutations(void **state)
{
	static const char junk[] = "{}[]\",:\\ 0-a.eE\x01\xff";
	size_t len, i;
	char *json = read_data("cluster-small.json", &len);
	uint32_t rng = 12345;
	int accepted = 0;

	(void)state;
	for (i = 0; i < 1500; i++) {
		struct snapshot *s = snapshot_new();
		struct errbuf err;
		char *copy = malloc(len);
		int k;

		memcpy(copy, json, len);
		for (k = 0; k < 3; k++) {
			rng = rng * 1103515245u + 12345u;
			copy[(rng >> 8) % len] = junk[(rng >> 3) % (sizeof(junk) - 1)];
		}
		if (snapshot_add_json(s, copy, len, "m.json", &err) == 0) {
			accepted++;
			set_test_groups(s);
			(void)snapshot_finish(s, NOW, &err);
		}
		free(copy);
		snapshot_free(s);
	}
	/* most mutations hit strings and stay valid: the accepted path runs too */
	assert_true(accepted > 0);
	free(json);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cluster_small_file),
		cmocka_unit_test(test_cluster_small_buffer),
		cmocka_unit_test(test_typed_lists),
		cmocka_unit_test(test_large_list_streamed),
		cmocka_unit_test(test_effective_requests),
		cmocka_unit_test(test_malformed_objects),
		cmocka_unit_test(test_pdb_selectors),
		cmocka_unit_test(test_pod_details),
		cmocka_unit_test(test_documents),
		cmocka_unit_test(test_document_errors),
		cmocka_unit_test(test_load_file_errors),
		cmocka_unit_test(test_groups_and_finish),
		cmocka_unit_test(test_starting_nodes_are_upcoming),
		cmocka_unit_test(test_parse_time),
		cmocka_unit_test(test_truncated_prefixes),
		cmocka_unit_test(test_mutations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
