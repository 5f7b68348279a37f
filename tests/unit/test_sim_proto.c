/*
 * Tests for sim/apiserver/apiserver_proto.c and sim/apiserver/apiserver_openapi.c: protobuf
 * bodies against byte vectors written out by hand from the wire format
 * (each vector's comment derives it) and bodies kubectl itself wrote
 * (tests/data/proto/), round trips through libprotobuf-c's
 * own packer and unpacker as an independent implementation, malformed
 * input answered with errors that say where, content negotiation, and the
 * OpenAPI documents' schemas and paths.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "k8s/apps.pb-c.h"
#include "k8s/core.pb-c.h"
#include "k8s/runtime.pb-c.h"
#include "sim/apiserver/apiserver_internal.h"
#include "sim/apiserver/apiserver_openapi.h"
#include "sim/apiserver/apiserver_proto.h"

#define V(...) ((const uint8_t[]){__VA_ARGS__})
#define VLEN(...) sizeof((const uint8_t[]){__VA_ARGS__})

/* Decodes and compares with the JSON 'want' (member order ignored). */
static void expect_decode(const uint8_t *data, size_t len, const char *want)
{
	struct errbuf err = {{0}};
	int code = 0;
	cJSON *got = apiserver_proto_decode(data, len, &code, &err), *w = cJSON_Parse(want);
	char *txt;

	if (!got)
		fail_msg("decode failed (%d): %s", code, err.msg);
	assert_non_null(w);
	txt = cJSON_PrintUnformatted(got);
	if (!cJSON_Compare(got, w, true))
		fail_msg("decoded %s, want %s", txt, want);
	free(txt);
	cJSON_Delete(got);
	cJSON_Delete(w);
}

/* Expects a decode error with status 'code' whose message holds 'needle'. */
static void expect_error(const uint8_t *data, size_t len, int want_code, const char *needle)
{
	struct errbuf err = {{0}};
	int code = 0;
	cJSON *got = apiserver_proto_decode(data, len, &code, &err);

	if (got) {
		char *t = cJSON_PrintUnformatted(got);

		fail_msg("decoded %s, want an error with \"%s\"", t, needle);
	}
	assert_int_equal(code, want_code);
	if (!strstr(err.msg, needle))
		fail_msg("error \"%s\" lacks \"%s\"", err.msg, needle);
}

/*
 * kubectl create configmap x --from-literal=a=b, as Go's generated code
 * writes it: every non-pointer field of ObjectMeta is sent even when
 * empty (fields 2-6 as tag + length 0, generation as tag 0x38 + 0,
 * creationTimestamp 0x42 as an empty message).
 *   ObjectMeta = 0a 01 'x' | 12 00 | 1a 00 | 22 00 | 2a 00 | 32 00 | 38 00 | 42 00  (17 bytes)
 *   data entry = 12 06 | 0a 01 'a' 12 01 'b'   (field 2, key = 1, value = 2)
 *   raw        = 0a 11 <ObjectMeta> <data entry>                               (27 bytes)
 *   TypeMeta   = 0a 02 "v1" 12 09 "ConfigMap"                                  (15 bytes)
 *   body       = "k8s\0" 0a 0f <TypeMeta> 12 1b <raw> 1a 00 22 00
 */
static const uint8_t cm_go[] = {
	'k', '8', 's', 0,
	0x0a, 0x0f, 0x0a, 0x02, 'v', '1', 0x12, 0x09, 'C', 'o', 'n', 'f', 'i', 'g', 'M', 'a', 'p',
	0x12, 0x1b,
	0x0a, 0x11, 0x0a, 0x01, 'x', 0x12, 0x00, 0x1a, 0x00, 0x22, 0x00, 0x2a, 0x00, 0x32, 0x00,
	0x38, 0x00, 0x42, 0x00,
	0x12, 0x06, 0x0a, 0x01, 'a', 0x12, 0x01, 'b',
	0x1a, 0x00, 0x22, 0x00,
};

/* The same object as the codec writes it: only the fields present. */
static const uint8_t cm_min[] = {
	'k', '8', 's', 0,
	0x0a, 0x0f, 0x0a, 0x02, 'v', '1', 0x12, 0x09, 'C', 'o', 'n', 'f', 'i', 'g', 'M', 'a', 'p',
	0x12, 0x0d,
	0x0a, 0x03, 0x0a, 0x01, 'x',
	0x12, 0x06, 0x0a, 0x01, 'a', 0x12, 0x01, 'b',
	0x1a, 0x00, 0x22, 0x00,
};

#define CM_JSON "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"x\"},\"data\":{\"a\":\"b\"}}"

static void test_configmap_vectors(void **state)
{
	struct buf b = BUF_INIT;
	struct errbuf err;
	cJSON *o = cJSON_Parse(CM_JSON);

	(void)state;
	expect_decode(cm_go, sizeof(cm_go), CM_JSON);
	expect_decode(cm_min, sizeof(cm_min), CM_JSON);
	assert_int_equal(apiserver_proto_encode(o, &b, &err), 0);
	assert_int_equal(b.len, sizeof(cm_min));
	assert_memory_equal(b.data, cm_min, sizeof(cm_min));
	buf_free(&b);
	cJSON_Delete(o);
}

/*
 * A Lease (coordination.k8s.io/v1) as a leader elector writes it:
 *   ObjectMeta  = 0a 01 'l'                                         (3 bytes)
 *   LeaseSpec   = 0a 02 "me"            holderIdentity
 *               | 10 00                 leaseDurationSeconds = 0 (a pointer: kept)
 *               | 22 0a 08 80 e2 cf aa 06 10 c0 9a 0c
 *                                       renewTime MicroTime{seconds 1700000000
 *                                       = 0x6553f100 -> varint 80 e2 cf aa 06, nanos 200000
 *                                       = 0x30d40 -> varint c0 9a 0c}
 * 1700000000: 0x6553F100 in 7-bit groups from the low end: 0x00, 0x62, 0x4f, 0x2a, 0x06
 * -> 80 e2 cf aa 06. 200000 = 0x30D40: 0x40, 0x1a, 0x0c -> c0 9a 0c.
 */
static void test_lease_times_and_zeros(void **state)
{
	static const uint8_t body[] = {
		'k', '8', 's', 0,
		0x0a, 0x1f, 0x0a, 0x16, 'c', 'o', 'o', 'r', 'd', 'i', 'n', 'a', 't', 'i', 'o', 'n', '.',
		'k', '8', 's', '.', 'i', 'o', '/', 'v', '1', 0x12, 0x05, 'L', 'e', 'a', 's', 'e',
		0x12, 0x19,
		0x0a, 0x03, 0x0a, 0x01, 'l',
		0x12, 0x12, 0x0a, 0x02, 'm', 'e', 0x10, 0x00,
		0x22, 0x0a, 0x08, 0x80, 0xe2, 0xcf, 0xaa, 0x06, 0x10, 0xc0, 0x9a, 0x0c,
	};
	const char *want = "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
			   "\"metadata\":{\"name\":\"l\"},\"spec\":{\"holderIdentity\":\"me\","
			   "\"leaseDurationSeconds\":0,\"renewTime\":\"2023-11-14T22:13:20.000200Z\"}}";
	struct buf b = BUF_INIT;
	struct errbuf err;
	cJSON *o = cJSON_Parse(want);

	(void)state;
	expect_decode(body, sizeof(body), want);
	/* and back: the same bytes but for the envelope's two empty strings */
	assert_int_equal(apiserver_proto_encode(o, &b, &err), 0);
	assert_int_equal(b.len, sizeof(body) + 4);
	assert_memory_equal(b.data, body, sizeof(body));
	assert_memory_equal(b.data + sizeof(body), V(0x1a, 0x00, 0x22, 0x00), 4);
	buf_free(&b);
	cJSON_Delete(o);
}

/* A plain (non-pointer) zero is "not set"; an empty Time is no time; the
 * last of two values of one field wins. */
static void test_zeros_and_repeats(void **state)
{
	/* Pod{spec{nodeName "", priority 0 (a pointer: kept), hostNetwork false,
	 * restartPolicy "A" then "B"}}; metadata{creationTimestamp {}}:
	 * spec = 52 00 | c8 01 00 | 58 00 | 1a 01 'A' | 1a 01 'B'
	 *   (nodeName 10<<3|2 = 0x52; priority 25<<3|0 = 200 -> c8 01;
	 *    hostNetwork 11<<3 = 0x58; restartPolicy 3<<3|2 = 0x1a)  = 13 bytes */
	static const uint8_t body[] = {
		'k', '8', 's', 0,
		0x0a, 0x09, 0x0a, 0x02, 'v', '1', 0x12, 0x03, 'P', 'o', 'd',
		0x12, 0x13,
		0x0a, 0x02, 0x42, 0x00,
		0x12, 0x0d, 0x52, 0x00, 0xc8, 0x01, 0x00, 0x58, 0x00, 0x1a, 0x01, 'A', 0x1a, 0x01, 'B',
	};

	(void)state;
	expect_decode(body, sizeof(body),
		      "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{},"
		      "\"spec\":{\"priority\":0,\"restartPolicy\":\"B\"}}");
}

/* Deployment: replicas 0 kept, IntOrString both ways, a negative int32
 * (10-byte varint), bytes as base64, and a map of Quantities. */
static void test_deployment_round_trip(void **state)
{
	const char *json =
		"{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\","
		"\"labels\":{\"app\":\"web\"},\"creationTimestamp\":\"2024-01-02T03:04:05Z\"},"
		"\"spec\":{\"replicas\":0,\"selector\":{\"matchLabels\":{\"app\":\"web\"}},"
		"\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\"}},\"spec\":{\"containers\":"
		"[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"250m\","
		"\"memory\":\"1Gi\"}}}],\"priority\":-5}},"
		"\"strategy\":{\"type\":\"RollingUpdate\",\"rollingUpdate\":{\"maxUnavailable\":1,"
		"\"maxSurge\":\"25%\"}}},\"status\":{}}";
	cJSON *o = cJSON_Parse(json);
	struct buf b = BUF_INIT;
	struct errbuf err;
	const uint8_t minus5[] = {0xc8, 0x01, 0xfb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				  0x01};

	(void)state;
	assert_int_equal(apiserver_proto_encode(o, &b, &err), 0);
	/* priority (field 25, tag c8 01) = -5: ten bytes, two's complement in 64 bits */
	assert_non_null(memmem(b.data, b.len, minus5, sizeof(minus5)));
	expect_decode((const uint8_t *)b.data, b.len, json);
	buf_free(&b);
	cJSON_Delete(o);

	/* a list's items may name their kind in JSON; in protobuf the list does */
	o = cJSON_Parse("{\"apiVersion\":\"apps/v1\",\"kind\":\"DeploymentList\",\"metadata\":"
			"{\"resourceVersion\":\"7\",\"continue\":\"t\"},\"items\":[{\"apiVersion\":"
			"\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"a\"}}]}");
	assert_int_equal(apiserver_proto_encode(o, &b, &err), 0);
	expect_decode((const uint8_t *)b.data, b.len,
		      "{\"apiVersion\":\"apps/v1\",\"kind\":\"DeploymentList\",\"metadata\":"
		      "{\"resourceVersion\":\"7\",\"continue\":\"t\"},\"items\":[{\"metadata\":"
		      "{\"name\":\"a\"}}]}");
	buf_free(&b);
	cJSON_Delete(o);
}

/* libprotobuf-c, an independent implementation, packs a Pod; the codec
 * reads it. Then the codec writes one and libprotobuf-c unpacks it. */
static void test_against_libprotobuf_c(void **state)
{
	K8s__Io__Apimachinery__Pkg__Apis__Meta__V1__ObjectMeta meta =
		K8S__IO__APIMACHINERY__PKG__APIS__META__V1__OBJECT_META__INIT;
	K8s__Io__Api__Core__V1__Container c = K8S__IO__API__CORE__V1__CONTAINER__INIT, *cs[1] = {&c};
	K8s__Io__Api__Core__V1__PodSpec spec = K8S__IO__API__CORE__V1__POD_SPEC__INIT;
	K8s__Io__Api__Core__V1__Pod pod = K8S__IO__API__CORE__V1__POD__INIT, *back;
	K8s__Io__Apimachinery__Pkg__Runtime__TypeMeta tm = K8S__IO__APIMACHINERY__PKG__RUNTIME__TYPE_META__INIT;
	K8s__Io__Apimachinery__Pkg__Runtime__Unknown u = K8S__IO__APIMACHINERY__PKG__RUNTIME__UNKNOWN__INIT, *ub;
	K8s__Io__Api__Core__V1__ResourceRequirements rr = K8S__IO__API__CORE__V1__RESOURCE_REQUIREMENTS__INIT;
	K8s__Io__Api__Core__V1__ResourceRequirements__RequestsEntry e =
		K8S__IO__API__CORE__V1__RESOURCE_REQUIREMENTS__REQUESTS_ENTRY__INIT, *es[1] = {&e};
	K8s__Io__Apimachinery__Pkg__Api__Resource__Quantity q = K8S__IO__APIMACHINERY__PKG__API__RESOURCE__QUANTITY__INIT;
	uint8_t raw[512], body[600];
	size_t rn, bn;
	struct buf b = BUF_INIT;
	struct errbuf err;
	cJSON *o;

	(void)state;
	meta.name = "p";
	meta.namespace_ = "ns";
	c.name = "main";
	c.image = "busybox";
	q.string = "100m";
	e.key = "cpu";
	e.value = &q;
	rr.n_requests = 1;
	rr.requests = es;
	c.resources = &rr;
	spec.n_containers = 1;
	spec.containers = cs;
	spec.nodename = "n1";
	spec.has_terminationgraceperiodseconds = 1;
	spec.terminationgraceperiodseconds = 0;
	pod.metadata = &meta;
	pod.spec = &spec;
	rn = k8s__io__api__core__v1__pod__pack(&pod, raw);
	tm.apiversion = "v1";
	tm.kind = "Pod";
	u.typemeta = &tm;
	u.has_raw = 1;
	u.raw.data = raw;
	u.raw.len = rn;
	u.contentencoding = "";
	u.contenttype = "";
	memcpy(body, "k8s", 4);
	bn = 4 + k8s__io__apimachinery__pkg__runtime__unknown__pack(&u, body + 4);
	expect_decode(body, bn,
		      "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},"
		      "\"spec\":{\"containers\":[{\"name\":\"main\",\"image\":\"busybox\",\"resources\":"
		      "{\"requests\":{\"cpu\":\"100m\"}}}],\"nodeName\":\"n1\","
		      "\"terminationGracePeriodSeconds\":0}}");

	o = cJSON_Parse("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"q\"},"
			"\"spec\":{\"nodeName\":\"n2\",\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}],"
			"\"tolerations\":[{\"key\":\"k\",\"tolerationSeconds\":30}]},"
			"\"status\":{\"phase\":\"Running\",\"startTime\":\"2024-05-06T07:08:09Z\"}}");
	assert_int_equal(apiserver_proto_encode(o, &b, &err), 0);
	assert_memory_equal(b.data, "k8s", 4);
	ub = k8s__io__apimachinery__pkg__runtime__unknown__unpack(NULL, b.len - 4, (uint8_t *)b.data + 4);
	assert_non_null(ub);
	assert_string_equal(ub->typemeta->kind, "Pod");
	assert_string_equal(ub->contenttype, "");
	back = k8s__io__api__core__v1__pod__unpack(NULL, ub->raw.len, ub->raw.data);
	assert_non_null(back);
	assert_string_equal(back->metadata->name, "q");
	assert_string_equal(back->spec->nodename, "n2");
	assert_int_equal(back->spec->n_containers, 2);
	assert_string_equal(back->spec->containers[1]->name, "b");
	assert_int_equal(back->spec->n_tolerations, 1);
	assert_true(back->spec->tolerations[0]->has_tolerationseconds);
	assert_int_equal(back->spec->tolerations[0]->tolerationseconds, 30);
	assert_string_equal(back->status->phase, "Running");
	assert_true(back->status->starttime->has_seconds);
	assert_int_equal(back->status->starttime->seconds, 1714979289);
	k8s__io__api__core__v1__pod__free_unpacked(back, NULL);
	k8s__io__apimachinery__pkg__runtime__unknown__free_unpacked(ub, NULL);
	buf_free(&b);
	cJSON_Delete(o);
}

/* A pod's scheduling constraints and volumes, and a PersistentVolume:
 * the codec writes them, libprotobuf-c reads them back field by field
 * (a volume's source, inline in JSON, is a message of its own in
 * protobuf), and the codec's own decode gives the same JSON. */
static void test_scheduling_and_volumes(void **state)
{
	const char *pod_json =
		"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"db-0\",\"namespace\":\"p\"},"
		"\"spec\":{\"volumes\":[{\"name\":\"data\",\"persistentVolumeClaim\":{\"claimName\":\"data-db-0\"}},"
		"{\"name\":\"tmp\",\"emptyDir\":{\"sizeLimit\":\"1Gi\"}},"
		"{\"name\":\"host\",\"hostPath\":{\"path\":\"/var/log\",\"type\":\"Directory\"}}],"
		"\"containers\":[{\"name\":\"c\",\"volumeMounts\":[{\"name\":\"data\",\"mountPath\":\"/d\"}]}],"
		"\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
		"{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\","
		"\"values\":[\"a\",\"b\"]}]}]},\"preferredDuringSchedulingIgnoredDuringExecution\":"
		"[{\"weight\":3,\"preference\":{\"matchExpressions\":[{\"key\":\"ssd\",\"operator\":\"Exists\"}]}}]},"
		"\"podAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[{\"labelSelector\":"
		"{\"matchLabels\":{\"app\":\"cache\"}},\"topologyKey\":\"zone\",\"namespaces\":[\"p\",\"q\"],"
		"\"namespaceSelector\":{},\"matchLabelKeys\":[\"rev\"],\"mismatchLabelKeys\":[\"team\"]}]},"
		"\"podAntiAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":100,"
		"\"podAffinityTerm\":{\"labelSelector\":{\"matchExpressions\":[{\"key\":\"app\",\"operator\":"
		"\"In\",\"values\":[\"db\"]}]},\"topologyKey\":\"kubernetes.io/hostname\"}}]}},"
		"\"topologySpreadConstraints\":[{\"maxSkew\":1,\"topologyKey\":\"zone\",\"whenUnsatisfiable\":"
		"\"DoNotSchedule\",\"labelSelector\":{\"matchLabels\":{\"app\":\"db\"}},\"minDomains\":3,"
		"\"nodeAffinityPolicy\":\"Ignore\",\"nodeTaintsPolicy\":\"Honor\",\"matchLabelKeys\":"
		"[\"pod-template-hash\"]}]}}";
	const char *pv_json =
		"{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"pv-1\"},"
		"\"spec\":{\"capacity\":{\"storage\":\"1Gi\"},\"csi\":{\"driver\":\"d\",\"volumeHandle\":\"h\"},"
		"\"accessModes\":[\"ReadWriteOnce\"],\"storageClassName\":\"zonal\",\"nodeAffinity\":{\"required\":"
		"{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\","
		"\"values\":[\"b\"]}]}]}}},\"status\":{\"phase\":\"Bound\"}}";
	K8s__Io__Apimachinery__Pkg__Runtime__Unknown *ub;
	K8s__Io__Api__Core__V1__Pod *pod;
	K8s__Io__Api__Core__V1__PersistentVolume *pv;
	K8s__Io__Api__Core__V1__PodSpec *sp;
	cJSON *o = cJSON_Parse(pod_json);
	struct buf b = BUF_INIT;
	struct errbuf err;

	(void)state;
	assert_non_null(o);
	if (apiserver_proto_encode(o, &b, &err) < 0)
		fail_msg("encode: %s", err.msg);
	ub = k8s__io__apimachinery__pkg__runtime__unknown__unpack(NULL, b.len - 4, (uint8_t *)b.data + 4);
	assert_non_null(ub);
	pod = k8s__io__api__core__v1__pod__unpack(NULL, ub->raw.len, ub->raw.data);
	assert_non_null(pod);
	sp = pod->spec;
	assert_int_equal(sp->n_volumes, 3);
	assert_string_equal(sp->volumes[0]->name, "data");
	assert_string_equal(sp->volumes[0]->volumesource->persistentvolumeclaim->claimname, "data-db-0");
	assert_string_equal(sp->volumes[1]->volumesource->emptydir->sizelimit->string, "1Gi");
	assert_string_equal(sp->volumes[2]->volumesource->hostpath->path, "/var/log");
	assert_string_equal(sp->containers[0]->volumemounts[0]->mountpath, "/d");
	assert_string_equal(sp->affinity->nodeaffinity->requiredduringschedulingignoredduringexecution
				    ->nodeselectorterms[0]->matchexpressions[0]->values[1], "b");
	assert_int_equal(sp->affinity->nodeaffinity->preferredduringschedulingignoredduringexecution[0]->weight, 3);
	assert_string_equal(sp->affinity->podaffinity->requiredduringschedulingignoredduringexecution[0]
				    ->mismatchlabelkeys[0], "team");
	assert_int_equal(sp->affinity->podantiaffinity->preferredduringschedulingignoredduringexecution[0]->weight,
			 100);
	assert_int_equal(sp->n_topologyspreadconstraints, 1);
	assert_int_equal(sp->topologyspreadconstraints[0]->maxskew, 1);
	assert_int_equal(sp->topologyspreadconstraints[0]->mindomains, 3);
	assert_string_equal(sp->topologyspreadconstraints[0]->nodetaintspolicy, "Honor");
	k8s__io__api__core__v1__pod__free_unpacked(pod, NULL);
	k8s__io__apimachinery__pkg__runtime__unknown__free_unpacked(ub, NULL);
	expect_decode((const uint8_t *)b.data, b.len, pod_json);
	buf_free(&b);
	cJSON_Delete(o);

	o = cJSON_Parse(pv_json);
	assert_non_null(o);
	if (apiserver_proto_encode(o, &b, &err) < 0)
		fail_msg("encode: %s", err.msg);
	ub = k8s__io__apimachinery__pkg__runtime__unknown__unpack(NULL, b.len - 4, (uint8_t *)b.data + 4);
	assert_non_null(ub);
	pv = k8s__io__api__core__v1__persistent_volume__unpack(NULL, ub->raw.len, ub->raw.data);
	assert_non_null(pv);
	assert_string_equal(pv->spec->persistentvolumesource->csi->driver, "d");
	assert_string_equal(pv->spec->nodeaffinity->required->nodeselectorterms[0]->matchexpressions[0]->values[0],
			    "b");
	k8s__io__api__core__v1__persistent_volume__free_unpacked(pv, NULL);
	k8s__io__apimachinery__pkg__runtime__unknown__free_unpacked(ub, NULL);
	expect_decode((const uint8_t *)b.data, b.len, pv_json);
	buf_free(&b);
	cJSON_Delete(o);
}

/* Reads a file of tests/data/proto/. */
static size_t read_capture(const char *name, uint8_t *out, size_t cap)
{
	char path[512];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/proto/%s", TEST_DATA_DIR, name);
	f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s", path);
	n = fread(out, 1, cap, f);
	fclose(f);
	return n;
}

/* What kubectl 1.32 itself sent (tests/data/README.md says how they were
 * recorded): the ConfigMap is the hand-derived vector, byte for byte. */
static void test_kubectl_bodies(void **state)
{
	uint8_t b[1024];
	size_t n;

	(void)state;
	n = read_capture("kubectl-configmap.pb", b, sizeof(b));
	assert_int_equal(n, sizeof(cm_go));
	assert_memory_equal(b, cm_go, n);
	n = read_capture("kubectl-namespace.pb", b, sizeof(b));
	expect_decode(b, n, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"n\"},"
		      "\"spec\":{},\"status\":{}}");
	n = read_capture("kubectl-deployment.pb", b, sizeof(b));
	expect_decode(b, n,
		      "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\","
		      "\"labels\":{\"app\":\"web\"}},\"spec\":{\"replicas\":3,\"selector\":{\"matchLabels\":"
		      "{\"app\":\"web\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\"}},\"spec\":"
		      "{\"containers\":[{\"name\":\"nginx\",\"image\":\"nginx\",\"resources\":{}}]}},"
		      "\"strategy\":{}},\"status\":{}}");
	n = read_capture("kubectl-job.pb", b, sizeof(b));
	expect_decode(b, n,
		      "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"j\"},"
		      "\"spec\":{\"template\":{\"metadata\":{},\"spec\":{\"containers\":[{\"name\":\"j\","
		      "\"image\":\"busybox\",\"resources\":{}}],\"restartPolicy\":\"Never\"}}},\"status\":{}}");
}

/* Broken bodies: each an error naming what and where, never a crash. */
static void test_malformed(void **state)
{
	(void)state;
	expect_error(V('k', '8', 'x', 0, 0x0a, 0x00), 6, 400, "does not start with");
	expect_error(V('k', '8'), 2, 400, "does not start with");
	/* a tag whose varint never ends */
	expect_error(V('k', '8', 's', 0, 0x8a), 5, 400, "truncated varint at byte 4");
	/* eleven continuation bytes */
	expect_error(V('k', '8', 's', 0, 0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		       0xff, 0x01), 16, 400, "varint at byte 5");
	/* typeMeta's length says 9, 2 bytes follow */
	expect_error(V('k', '8', 's', 0, 0x0a, 0x09, 0x0a, 0x00), 8, 400,
		     "length 9 at byte 5 runs past the end");
	/* no kind */
	expect_error(V('k', '8', 's', 0, 0x0a, 0x04, 0x0a, 0x02, 'v', '1'), 10, 400,
		     "names no apiVersion and kind");
	/* a kind outside the description: 415, as for a kind without protobuf */
	expect_error(V('k', '8', 's', 0, 0x0a, 0x0a, 0x0a, 0x02, 'v', '1', 0x12, 0x04, 'W', 'i', 'd',
		       'g'), 16, 415, "cannot read v1 Widg");
	/* gzip content encoding */
	expect_error(V('k', '8', 's', 0, 0x0a, 0x09, 0x0a, 0x02, 'v', '1', 0x12, 0x03, 'P', 'o', 'd',
		       0x1a, 0x04, 'g', 'z', 'i', 'p'), 21, 415, "content encoding");
	/* a field the description lacks: Pod.spec field 14 (securityContext) */
	expect_error(V('k', '8', 's', 0, 0x0a, 0x09, 0x0a, 0x02, 'v', '1', 0x12, 0x03, 'P', 'o', 'd',
		       0x12, 0x04, 0x12, 0x02, 0x72, 0x00), 21, 400,
		     "spec: field 14 of io.k8s.api.core.v1.PodSpec (wire type 2) at byte 19");
	/* a volume source the description lacks (nfs, field 7), inside the inline source */
	expect_error(V('k', '8', 's', 0, 0x0a, 0x09, 0x0a, 0x02, 'v', '1', 0x12, 0x03, 'P', 'o', 'd',
		       0x12, 0x08, 0x12, 0x06, 0x0a, 0x04, 0x12, 0x02, 0x3a, 0x00), 25, 400,
		     "field 7 of io.k8s.api.core.v1.VolumeSource");
	/* a wire type that does not fit: spec as a varint */
	expect_error(V('k', '8', 's', 0, 0x0a, 0x09, 0x0a, 0x02, 'v', '1', 0x12, 0x03, 'P', 'o', 'd',
		       0x12, 0x02, 0x10, 0x01), 19, 400, "wire type 0 where spec needs 2");
	/* a name that is not UTF-8 */
	expect_error(V('k', '8', 's', 0, 0x0a, 0x09, 0x0a, 0x02, 'v', '1', 0x12, 0x03, 'P', 'o', 'd',
		       0x12, 0x05, 0x0a, 0x03, 0x0a, 0x01, 0xff), 22, 400,
		     "metadata.name: the string at byte 21 is not UTF-8");
	/* a raw that ends inside a nested message's length */
	expect_error(V('k', '8', 's', 0, 0x0a, 0x09, 0x0a, 0x02, 'v', '1', 0x12, 0x03, 'P', 'o', 'd',
		       0x12, 0x03, 0x0a, 0x05, 0x0a), 20, 400, "metadata: length 5 at byte 18");
	/* field number 0 */
	expect_error(V('k', '8', 's', 0, 0x0a, 0x09, 0x0a, 0x02, 'v', '1', 0x12, 0x03, 'P', 'o', 'd',
		       0x12, 0x02, 0x02, 0x00), 19, 400, "field number 0");
	/* a time past year 9999 */
	/* (seconds 2^50: seven 0x80 bytes, then 0x02) */
	expect_error(V('k', '8', 's', 0, 0x0a, 0x09, 0x0a, 0x02, 'v', '1', 0x12, 0x03, 'P', 'o', 'd',
		       0x12, 0x0d, 0x0a, 0x0b, 0x42, 0x09, 0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
		       0x80, 0x02), 30, 400, "metadata.creationTimestamp: the time at byte 21");
	/* an int64 JSON cannot hold exactly (2^63 - 1) */
	expect_error(V('k', '8', 's', 0, 0x0a, 0x09, 0x0a, 0x02, 'v', '1', 0x12, 0x03, 'P', 'o', 'd',
		       0x12, 0x0c, 0x0a, 0x0a, 0x38, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		       0x7f), 29, 400, "metadata.generation: the integer before byte 29 is beyond 2^53");
}

/* What the encoder refuses (the server then answers in JSON). */
static void test_encode_refuses(void **state)
{
	static const char *const bad[] = {
		"{\"apiVersion\":\"v1\",\"kind\":\"Widget\"}",
		/* a volume source that is not described (inline, as every source) */
		"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"spec\":{\"volumes\":[{\"name\":\"v\","
		"\"nfs\":{\"server\":\"s\"}}]}}",
		"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"spec\":{\"affinity\":{\"nodeAffinity\":{\"soon\":1}}}}",
		"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"spec\":{\"priority\":1.5}}",
		"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"spec\":{\"nodeName\":7}}",
		"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"creationTimestamp\":\"yesterday\"}}",
		"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"spec\":{\"containers\":{}}}",
		"{\"kind\":\"Pod\"}",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cJSON *o = cJSON_Parse(bad[i]);
		struct buf b = BUF_INIT;
		struct errbuf err = {{0}};

		assert_non_null(o);
		if (apiserver_proto_encode(o, &b, &err) == 0)
			fail_msg("encoded %s", bad[i]);
		assert_int_equal(b.len, 0);
		assert_true(err.msg[0] != '\0');
		cJSON_Delete(o);
	}
}

static void test_negotiation(void **state)
{
	struct reply out;
	struct buf body = BUF_INIT;

	(void)state;
	assert_int_equal(apiserver_proto_accept(NULL), 0);
	assert_int_equal(apiserver_proto_accept("application/json"), 0);
	assert_int_equal(apiserver_proto_accept("application/vnd.kubernetes.protobuf,application/json"), 1);
	assert_int_equal(apiserver_proto_accept("application/json, application/vnd.kubernetes.protobuf"), 0);
	assert_int_equal(apiserver_proto_accept("application/json;q=0.5, application/vnd.kubernetes.protobuf"), 1);
	assert_int_equal(apiserver_proto_accept("application/vnd.kubernetes.protobuf"), -1);
	assert_int_equal(apiserver_proto_accept("*/*, application/vnd.kubernetes.protobuf"), 0);
	assert_int_equal(apiserver_proto_accept("application/vnd.kubernetes.protobuf, */*"), 1);
	assert_int_equal(apiserver_proto_accept("application/vnd.kubernetes.protobuf;q=0, application/json"), 0);
	assert_int_equal(apiserver_proto_accept("application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json"), 0);
	assert_true(apiserver_proto_is_media("application/vnd.kubernetes.protobuf"));
	assert_true(apiserver_proto_is_media("application/vnd.kubernetes.protobuf; charset=utf-8"));
	assert_false(apiserver_proto_is_media("application/vnd.kubernetes.protobuf;stream=watch"));
	assert_false(apiserver_proto_is_media("application/json"));

	/* a protobuf answer for a client that prefers one */
	memset(&out, 0, sizeof(out));
	out.code = 200;
	buf_puts(&out.body, CM_JSON);
	apiserver_proto_reply("application/vnd.kubernetes.protobuf, application/json", &out);
	assert_string_equal(out.content_type, APISERVER_PROTO_MEDIA);
	assert_int_equal(out.body.len, sizeof(cm_min));
	assert_memory_equal(out.body.data, cm_min, sizeof(cm_min));
	buf_free(&out.body);
	/* JSON for what has no description, 406 when only protobuf would do */
	memset(&out, 0, sizeof(out));
	out.code = 200;
	buf_puts(&out.body, "{\"kind\":\"APIResourceList\",\"apiVersion\":\"v1\"}");
	apiserver_proto_reply("application/vnd.kubernetes.protobuf, application/json", &out);
	assert_null(out.content_type);
	assert_int_equal(out.code, 200);
	apiserver_proto_reply("application/vnd.kubernetes.protobuf", &out);
	assert_int_equal(out.code, 406);
	buf_free(&out.body);

	/* a protobuf request body becomes JSON; a PATCH's is left to its handler */
	memset(&out, 0, sizeof(out));
	buf_append(&body, cm_go, sizeof(cm_go));
	assert_int_equal(apiserver_proto_request("PATCH", APISERVER_PROTO_MEDIA, &body, &out), 0);
	assert_int_equal(body.len, sizeof(cm_go));
	assert_int_equal(apiserver_proto_request("POST", APISERVER_PROTO_MEDIA, &body, &out), 1);
	assert_non_null(strstr(body.data, "\"data\":{\"a\":\"b\"}"));
	buf_free(&body);
	buf_append(&body, "k8s", 3);
	assert_int_equal(apiserver_proto_request("PUT", APISERVER_PROTO_MEDIA, &body, &out), -1);
	assert_int_equal(out.code, 400);
	buf_free(&out.body);
	buf_free(&body);
}

static const cJSON *path_get(const cJSON *o, const char *a, const char *b, const char *c)
{
	o = cJSON_GetObjectItemCaseSensitive(o, a);
	if (b)
		o = cJSON_GetObjectItemCaseSensitive(o, b);
	if (c)
		o = cJSON_GetObjectItemCaseSensitive(o, c);
	return o;
}

static void test_openapi(void **state)
{
	struct buf b = BUF_INIT;
	cJSON *d, *pod, *gvk;
	const cJSON *op, *p;
	bool found = false;

	(void)state;
	assert_int_equal(apiserver_openapi_v3("api/v1", &b), 0);
	d = cJSON_Parse(b.data);
	assert_non_null(d);
	pod = (cJSON *)path_get(d, "components", "schemas", "io.k8s.api.core.v1.Pod");
	assert_non_null(pod);
	gvk = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(pod, "x-kubernetes-group-version-kind"), 0);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(gvk, "kind")), "Pod");
	/* every described field is a property, with its type */
	p = path_get(d, "components", "schemas", "io.k8s.api.core.v1.PodSpec");
	assert_string_equal(cJSON_GetStringValue(path_get(p, "properties", "nodeName", "type")), "string");
	assert_string_equal(cJSON_GetStringValue(path_get(p, "properties", "containers", "type")), "array");
	assert_string_equal(cJSON_GetStringValue(path_get(p, "properties", "priority", "format")), "int32");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetArrayItem(
		cJSON_GetObjectItemCaseSensitive(p, "required"), 0)), "containers");
	assert_non_null(path_get(p, "properties", "affinity", NULL));
	assert_string_equal(cJSON_GetStringValue(path_get(p, "properties", "topologySpreadConstraints", "type")),
			    "array");
	/* a volume's source is inline: its members are the Volume's properties */
	p = path_get(d, "components", "schemas", "io.k8s.api.core.v1.Volume");
	assert_non_null(path_get(p, "properties", "persistentVolumeClaim", NULL));
	assert_non_null(path_get(p, "properties", "name", NULL));
	assert_null(path_get(p, "properties", "volumeSource", NULL));
	p = path_get(d, "components", "schemas", "io.k8s.api.core.v1.Container");
	assert_string_equal(cJSON_GetStringValue(path_get(p, "properties", "resources", "allOf") ?
		cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(path_get(p, "properties", "resources", "allOf"), 0), "$ref") :
		path_get(p, "properties", "resources", "$ref")),
		"#/components/schemas/io.k8s.api.core.v1.ResourceRequirements");
	/* the PATCH of configmaps takes fieldValidation (kubectl asks the server to validate) */
	op = path_get(d, "paths", "/api/v1/namespaces/{namespace}/configmaps/{name}", "patch");
	assert_non_null(op);
	cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(op, "parameters"))
		if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "name")), "fieldValidation") == 0)
			found = true;
	assert_true(found);
	/* nodes are not created by clients: no POST */
	assert_null(path_get(d, "paths", "/api/v1/nodes", "post"));
	assert_non_null(path_get(d, "paths", "/api/v1/nodes", "get"));
	cJSON_Delete(d);
	buf_free(&b);

	assert_int_equal(apiserver_openapi_v3("apis/nope/v1", &b), -1);
	buf_free(&b);
	assert_int_equal(apiserver_openapi_v3_index(&b), 0);
	d = cJSON_Parse(b.data);
	assert_non_null(strstr(cJSON_GetStringValue(path_get(d, "paths", "apis/coordination.k8s.io/v1",
							       "serverRelativeURL")),
			       "/openapi/v3/apis/coordination.k8s.io/v1?hash="));
	cJSON_Delete(d);
	buf_free(&b);
	assert_int_equal(apiserver_openapi_v2(&b), 0);
	d = cJSON_Parse(b.data);
	assert_string_equal(cJSON_GetStringValue(path_get(d, "swagger", NULL, NULL)), "2.0");
	assert_non_null(path_get(d, "definitions", "io.k8s.api.coordination.v1.Lease", NULL));
	assert_string_equal(cJSON_GetStringValue(path_get(d, "definitions",
		"io.k8s.apimachinery.pkg.apis.meta.v1.Time", "format")), "date-time");
	cJSON_Delete(d);
	buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_configmap_vectors),
		cmocka_unit_test(test_lease_times_and_zeros),
		cmocka_unit_test(test_zeros_and_repeats),
		cmocka_unit_test(test_deployment_round_trip),
		cmocka_unit_test(test_against_libprotobuf_c),
		cmocka_unit_test(test_scheduling_and_volumes),
		cmocka_unit_test(test_kubectl_bodies),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_encode_refuses),
		cmocka_unit_test(test_negotiation),
		cmocka_unit_test(test_openapi),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
