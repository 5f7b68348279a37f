/*
 * sim/apiserver_proto: Kubernetes protobuf bodies ⇄ the JSON objects the
 * simulated API server's handlers take and give, walking the descriptors
 * protoc-c makes of the proto/k8s/ files. The wire reader is its own (every
 * error names a byte offset and a JSON path); libprotobuf-c gives the
 * descriptors. Content negotiation for apiserver.c is at the end.
 */
#include "sim/apiserver/apiserver_proto.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "k8s/apps.pb-c.h"
#include "k8s/authorization.pb-c.h"
#include "k8s/batch.pb-c.h"
#include "k8s/coordination.pb-c.h"
#include "k8s/core.pb-c.h"
#include "k8s/events.pb-c.h"
#include "k8s/meta.pb-c.h"
#include "k8s/policy.pb-c.h"
#include "k8s/runtime.pb-c.h"
#include "k8s/storage.pb-c.h"
#include "kube/kubeconfig.h"
#include "sim/apiserver/apiserver_request.h"

#define MAX_DEPTH 24
#define PATH_MAX_LEN 256

static const char magic[4] = {'k', '8', 's', '\0'};

#define META "k8s.io.apimachinery.pkg.apis.meta.v1."
#define T_TIME META "Time"
#define T_MICROTIME META "MicroTime"
#define T_FIELDSV1 META "FieldsV1"
#define T_QUANTITY "k8s.io.apimachinery.pkg.api.resource.Quantity"
#define T_INTSTR "k8s.io.apimachinery.pkg.util.intstr.IntOrString"

const struct apiserver_proto_kind apiserver_proto_kinds[] = {
	{"", "v1", "ConfigMap", &k8s__io__api__core__v1__config_map__descriptor},
	{"", "v1", "ConfigMapList", &k8s__io__api__core__v1__config_map_list__descriptor},
	{"", "v1", "Namespace", &k8s__io__api__core__v1__namespace__descriptor},
	{"", "v1", "NamespaceList", &k8s__io__api__core__v1__namespace_list__descriptor},
	{"", "v1", "Node", &k8s__io__api__core__v1__node__descriptor},
	{"", "v1", "NodeList", &k8s__io__api__core__v1__node_list__descriptor},
	{"", "v1", "Pod", &k8s__io__api__core__v1__pod__descriptor},
	{"", "v1", "PodList", &k8s__io__api__core__v1__pod_list__descriptor},
	{"", "v1", "Binding", &k8s__io__api__core__v1__binding__descriptor},
	{"", "v1", "LimitRange", &k8s__io__api__core__v1__limit_range__descriptor},
	{"", "v1", "LimitRangeList", &k8s__io__api__core__v1__limit_range_list__descriptor},
	{"", "v1", "PersistentVolumeClaim", &k8s__io__api__core__v1__persistent_volume_claim__descriptor},
	{"", "v1", "PersistentVolumeClaimList",
	 &k8s__io__api__core__v1__persistent_volume_claim_list__descriptor},
	{"", "v1", "PersistentVolume", &k8s__io__api__core__v1__persistent_volume__descriptor},
	{"", "v1", "PersistentVolumeList", &k8s__io__api__core__v1__persistent_volume_list__descriptor},
	{"storage.k8s.io", "v1", "StorageClass", &k8s__io__api__storage__v1__storage_class__descriptor},
	{"storage.k8s.io", "v1", "StorageClassList",
	 &k8s__io__api__storage__v1__storage_class_list__descriptor},
	{"", "v1", "Event", &k8s__io__api__core__v1__event__descriptor},
	{"", "v1", "EventList", &k8s__io__api__core__v1__event_list__descriptor},
	{"events.k8s.io", "v1", "Event", &k8s__io__api__events__v1__event__descriptor},
	{"events.k8s.io", "v1", "EventList", &k8s__io__api__events__v1__event_list__descriptor},
	{"", "v1", "Status", &k8s__io__apimachinery__pkg__apis__meta__v1__status__descriptor},
	{"", "v1", "DeleteOptions", &k8s__io__apimachinery__pkg__apis__meta__v1__delete_options__descriptor},
	{"policy", "v1", "Eviction", &k8s__io__api__policy__v1__eviction__descriptor},
	{"policy", "v1", "PodDisruptionBudget", &k8s__io__api__policy__v1__pod_disruption_budget__descriptor},
	{"policy", "v1", "PodDisruptionBudgetList",
	 &k8s__io__api__policy__v1__pod_disruption_budget_list__descriptor},
	{"apps", "v1", "DaemonSet", &k8s__io__api__apps__v1__daemon_set__descriptor},
	{"apps", "v1", "DaemonSetList", &k8s__io__api__apps__v1__daemon_set_list__descriptor},
	{"coordination.k8s.io", "v1", "Lease", &k8s__io__api__coordination__v1__lease__descriptor},
	{"coordination.k8s.io", "v1", "LeaseList", &k8s__io__api__coordination__v1__lease_list__descriptor},
	{"apps", "v1", "Deployment", &k8s__io__api__apps__v1__deployment__descriptor},
	{"apps", "v1", "DeploymentList", &k8s__io__api__apps__v1__deployment_list__descriptor},
	{"apps", "v1", "ReplicaSet", &k8s__io__api__apps__v1__replica_set__descriptor},
	{"apps", "v1", "ReplicaSetList", &k8s__io__api__apps__v1__replica_set_list__descriptor},
	{"batch", "v1", "Job", &k8s__io__api__batch__v1__job__descriptor},
	{"batch", "v1", "JobList", &k8s__io__api__batch__v1__job_list__descriptor},
	{"authorization.k8s.io", "v1", "SelfSubjectAccessReview",
	 &k8s__io__api__authorization__v1__self_subject_access_review__descriptor},
	{"authorization.k8s.io", "v1", "SelfSubjectRulesReview",
	 &k8s__io__api__authorization__v1__self_subject_rules_review__descriptor},
};
const size_t apiserver_proto_n_kinds = sizeof(apiserver_proto_kinds) / sizeof(apiserver_proto_kinds[0]);

/*
 * Fields whose zero the JSON shows: those the Kubernetes types hold as
 * pointers (on the wire only when set, and then 0 is a value: replicas: 0,
 * gracePeriodSeconds: 0) and the counts their JSON never omits. Every
 * other scalar is sent even when empty, and its zero means "not set".
 */
static const char *const keep_zero[] = {
	META "ObjectMeta.deletionGracePeriodSeconds",
	META "OwnerReference.controller",
	META "OwnerReference.blockOwnerDeletion",
	META "ListMeta.remainingItemCount",
	META "DeleteOptions.gracePeriodSeconds",
	META "DeleteOptions.orphanDependents",
	META "DeleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential",
	META "Preconditions.uid",
	META "Preconditions.resourceVersion",
	"k8s.io.api.core.v1.ConfigMap.immutable",
	"k8s.io.api.core.v1.Container.restartPolicy",
	"k8s.io.api.core.v1.Toleration.tolerationSeconds",
	"k8s.io.api.core.v1.PodSpec.terminationGracePeriodSeconds",
	"k8s.io.api.core.v1.PodSpec.activeDeadlineSeconds",
	"k8s.io.api.core.v1.PodSpec.automountServiceAccountToken",
	"k8s.io.api.core.v1.PodSpec.shareProcessNamespace",
	"k8s.io.api.core.v1.PodSpec.priority",
	"k8s.io.api.core.v1.PodSpec.runtimeClassName",
	"k8s.io.api.core.v1.PodSpec.enableServiceLinks",
	"k8s.io.api.core.v1.PodSpec.preemptionPolicy",
	"k8s.io.api.core.v1.PodSpec.setHostnameAsFQDN",
	"k8s.io.api.core.v1.PodSpec.hostUsers",
	"k8s.io.api.core.v1.ContainerStatus.started",
	"k8s.io.api.core.v1.ContainerStatus.ready",
	"k8s.io.api.core.v1.ContainerStatus.restartCount",
	"k8s.io.api.core.v1.ContainerStateTerminated.exitCode",
	"k8s.io.api.core.v1.Event.count",
	"k8s.io.api.core.v1.EventSeries.count",
	"k8s.io.api.events.v1.EventSeries.count",
	"k8s.io.api.events.v1.Event.deprecatedCount",
	"k8s.io.api.coordination.v1.LeaseSpec.holderIdentity",
	"k8s.io.api.coordination.v1.LeaseSpec.leaseDurationSeconds",
	"k8s.io.api.coordination.v1.LeaseSpec.leaseTransitions",
	"k8s.io.api.coordination.v1.LeaseSpec.strategy",
	"k8s.io.api.coordination.v1.LeaseSpec.preferredHolder",
	"k8s.io.api.apps.v1.DeploymentSpec.replicas",
	"k8s.io.api.apps.v1.DeploymentSpec.revisionHistoryLimit",
	"k8s.io.api.apps.v1.DeploymentSpec.progressDeadlineSeconds",
	"k8s.io.api.apps.v1.DeploymentStatus.terminatingReplicas",
	"k8s.io.api.apps.v1.DeploymentStatus.collisionCount",
	"k8s.io.api.apps.v1.ReplicaSetSpec.replicas",
	"k8s.io.api.apps.v1.ReplicaSetStatus.replicas",
	"k8s.io.api.apps.v1.ReplicaSetStatus.terminatingReplicas",
	"k8s.io.api.batch.v1.JobSpec.parallelism",
	"k8s.io.api.batch.v1.JobSpec.completions",
	"k8s.io.api.batch.v1.JobSpec.activeDeadlineSeconds",
	"k8s.io.api.batch.v1.JobSpec.backoffLimit",
	"k8s.io.api.batch.v1.JobSpec.backoffLimitPerIndex",
	"k8s.io.api.batch.v1.JobSpec.maxFailedIndexes",
	"k8s.io.api.batch.v1.JobSpec.manualSelector",
	"k8s.io.api.batch.v1.JobSpec.ttlSecondsAfterFinished",
	"k8s.io.api.batch.v1.JobSpec.completionMode",
	"k8s.io.api.batch.v1.JobSpec.suspend",
	"k8s.io.api.batch.v1.JobSpec.podReplacementPolicy",
	"k8s.io.api.batch.v1.JobSpec.managedBy",
	"k8s.io.api.batch.v1.JobStatus.terminating",
	"k8s.io.api.batch.v1.JobStatus.ready",
	"k8s.io.api.apps.v1.DaemonSetSpec.revisionHistoryLimit",
	"k8s.io.api.apps.v1.DaemonSetStatus.currentNumberScheduled",
	"k8s.io.api.apps.v1.DaemonSetStatus.numberMisscheduled",
	"k8s.io.api.apps.v1.DaemonSetStatus.desiredNumberScheduled",
	"k8s.io.api.apps.v1.DaemonSetStatus.numberReady",
	"k8s.io.api.apps.v1.DaemonSetStatus.collisionCount",
	"k8s.io.api.policy.v1.PodDisruptionBudgetStatus.disruptionsAllowed",
	"k8s.io.api.policy.v1.PodDisruptionBudgetStatus.currentHealthy",
	"k8s.io.api.policy.v1.PodDisruptionBudgetStatus.desiredHealthy",
	"k8s.io.api.policy.v1.PodDisruptionBudgetStatus.expectedPods",
	"k8s.io.api.policy.v1.PodDisruptionBudgetSpec.unhealthyPodEvictionPolicy",
	"k8s.io.api.core.v1.PersistentVolumeClaimSpec.storageClassName",
	"k8s.io.api.core.v1.PersistentVolumeClaimSpec.volumeMode",
	"k8s.io.api.core.v1.PersistentVolumeSpec.volumeMode",
	"k8s.io.api.storage.v1.StorageClass.reclaimPolicy",
	"k8s.io.api.storage.v1.StorageClass.allowVolumeExpansion",
	"k8s.io.api.storage.v1.StorageClass.volumeBindingMode",
};

const ProtobufCMessageDescriptor *apiserver_proto_find(const char *api_version, const char *kind)
{
	size_t i;

	if (!api_version || !kind)
		return NULL;
	for (i = 0; i < apiserver_proto_n_kinds; i++) {
		const struct apiserver_proto_kind *k = &apiserver_proto_kinds[i];
		const char *slash = strchr(api_version, '/');
		const char *group = slash ? api_version : "";
		size_t glen = slash ? (size_t)(slash - api_version) : 0;
		const char *version = slash ? slash + 1 : api_version;

		if (strcmp(k->kind, kind) != 0)
			continue;
		if (strcmp(kind, "DeleteOptions") == 0)
			return k->desc;
		if (strlen(k->group) == glen && strncmp(k->group, group, glen) == 0 &&
		    strcmp(k->version, version) == 0)
			return k->desc;
	}
	return NULL;
}

bool apiserver_proto_keeps_zero(const ProtobufCMessageDescriptor *desc,
				const ProtobufCFieldDescriptor *fd)
{
	size_t i, n = strlen(desc->name);

	for (i = 0; i < sizeof(keep_zero) / sizeof(keep_zero[0]); i++)
		if (strncmp(keep_zero[i], desc->name, n) == 0 && keep_zero[i][n] == '.' &&
		    strcmp(keep_zero[i] + n + 1, fd->name) == 0)
			return true;
	return false;
}

/* A map<K,V> field: a repeated message "XxxEntry" of key = 1, value = 2. */
static bool is_map(const ProtobufCFieldDescriptor *fd)
{
	const ProtobufCMessageDescriptor *e = fd->descriptor;
	size_t n;

	if (fd->label != PROTOBUF_C_LABEL_REPEATED || fd->type != PROTOBUF_C_TYPE_MESSAGE || !e)
		return false;
	n = strlen(e->short_name);
	return n > 5 && strcmp(e->short_name + n - 5, "Entry") == 0 && e->n_fields == 2 &&
	       e->fields[0].id == 1 && strcmp(e->fields[0].name, "key") == 0 &&
	       e->fields[1].id == 2 && strcmp(e->fields[1].name, "value") == 0;
}

/*
 * Fields whose members JSON writes inline, in the object that holds the
 * field (Go's `json:",inline"`): a pod Volume's source ({"name": "data",
 * "persistentVolumeClaim": {...}}) and a PersistentVolume's. Protobuf
 * writes them as a message field of their own.
 */
static const char *const inline_fields[] = {
	"k8s.io.api.core.v1.Volume.volumeSource",
	"k8s.io.api.core.v1.PersistentVolumeSpec.persistentVolumeSource",
};

bool apiserver_proto_is_inline(const ProtobufCMessageDescriptor *desc, const ProtobufCFieldDescriptor *fd)
{
	size_t i, n = strlen(desc->name);

	if (fd->type != PROTOBUF_C_TYPE_MESSAGE || fd->label == PROTOBUF_C_LABEL_REPEATED)
		return false;
	for (i = 0; i < sizeof(inline_fields) / sizeof(inline_fields[0]); i++)
		if (strncmp(inline_fields[i], desc->name, n) == 0 && inline_fields[i][n] == '.' &&
		    strcmp(inline_fields[i] + n + 1, fd->name) == 0)
			return true;
	return false;
}

/* The message's inline field whose own message has a field 'name', or NULL. */
static const ProtobufCFieldDescriptor *inline_owner(const ProtobufCMessageDescriptor *desc,
						    const char *name)
{
	unsigned i;

	for (i = 0; i < desc->n_fields; i++)
		if (apiserver_proto_is_inline(desc, &desc->fields[i]) &&
		    protobuf_c_message_descriptor_get_field_by_name(desc->fields[i].descriptor, name))
			return &desc->fields[i];
	return NULL;
}

/* ---- base64 (bytes travel in JSON as standard base64) ---- */

static int b64_encode(struct buf *b, const uint8_t *p, size_t n)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i;

	for (i = 0; i + 2 < n; i += 3) {
		char q[4] = {tab[p[i] >> 2], tab[((p[i] & 3) << 4) | (p[i + 1] >> 4)],
			     tab[((p[i + 1] & 15) << 2) | (p[i + 2] >> 6)], tab[p[i + 2] & 63]};

		buf_append(b, q, 4);
	}
	if (n - i == 1) {
		char q[4] = {tab[p[i] >> 2], tab[(p[i] & 3) << 4], '=', '='};

		buf_append(b, q, 4);
	} else if (n - i == 2) {
		char q[4] = {tab[p[i] >> 2], tab[((p[i] & 3) << 4) | (p[i + 1] >> 4)],
			     tab[(p[i + 1] & 15) << 2], '='};

		buf_append(b, q, 4);
	}
	return b->oom ? -1 : 0;
}

/* ---- times ---- */

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

/* RFC 3339 in UTC, seconds or microseconds. Years 1..9999 only. */
static int format_time(int64_t secs, int32_t nanos, bool micro, char *out, size_t len)
{
	struct tm tm;
	time_t t = (time_t)secs;

	if (secs < -62135596800LL || secs > 253402300799LL || nanos < 0 || nanos > 999999999 ||
	    !gmtime_r(&t, &tm))
		return -1;
	if (micro)
		snprintf(out, len, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, nanos / 1000);
	else
		snprintf(out, len, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1,
			 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
	return 0;
}

/* "2006-01-02T15:04:05[.fraction](Z|±hh:mm)" into seconds and nanoseconds. */
static int parse_time(const char *s, int64_t *secs, int32_t *nanos)
{
	int y, mo, d, h, mi, se, n = 0, off = 0;
	int32_t ns = 0;
	const char *p;

	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &se, &n) != 6 || n != 19)
		return -1;
	if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
		return -1;
	p = s + n;
	if (*p == '.') {
		int digits = 0;

		for (p++; *p >= '0' && *p <= '9'; p++, digits++)
			if (digits < 9)
				ns = ns * 10 + (*p - '0');
		if (!digits)
			return -1;
		for (; digits < 9; digits++)
			ns *= 10;
	}
	if (*p == 'Z' && !p[1]) {
		off = 0;
	} else if ((*p == '+' || *p == '-') && strlen(p) == 6 && p[3] == ':') {
		int oh, om;

		if (sscanf(p + 1, "%2d:%2d", &oh, &om) != 2)
			return -1;
		off = (oh * 60 + om) * 60 * (*p == '-' ? -1 : 1);
	} else {
		return -1;
	}
	*secs = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + se - off;
	*nanos = ns;
	return 0;
}

/* ---- the wire reader ---- */

struct rd {
	const uint8_t *base;        /* the whole body, for offsets */
	int code;                   /* the status of the first error */
	struct errbuf *err;
};

struct span {
	const uint8_t *p, *end;
};

static int fail(struct rd *r, int code, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(struct rd *r, int code, const char *path, const char *fmt, ...)
{
	char m[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m, sizeof(m), fmt, ap);
	va_end(ap);
	r->code = code;
	return errbuf_set(r->err, "protobuf body: %s%s%s", path, path[0] ? ": " : "", m);
}

static int read_varint(struct rd *r, struct span *s, const char *path, uint64_t *v)
{
	const uint8_t *start = s->p;
	uint64_t x = 0;
	unsigned shift = 0;

	while (s->p < s->end) {
		uint8_t c = *s->p++;

		if (shift == 63 && c > 1)
			return fail(r, 400, path, "varint at byte %zu overflows 64 bits",
				    (size_t)(start - r->base));
		x |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*v = x;
			return 0;
		}
		shift += 7;
		if (shift > 63)
			return fail(r, 400, path, "varint at byte %zu is longer than 10 bytes",
				    (size_t)(start - r->base));
	}
	return fail(r, 400, path, "truncated varint at byte %zu", (size_t)(start - r->base));
}

/* A length-delimited value: its bytes. */
static int read_len(struct rd *r, struct span *s, const char *path, struct span *out)
{
	size_t at = (size_t)(s->p - r->base);
	uint64_t n;

	if (read_varint(r, s, path, &n) < 0)
		return -1;
	if (n > (uint64_t)(s->end - s->p))
		return fail(r, 400, path,
			    "length %llu at byte %zu runs past the end of its message (%zu bytes left)",
			    (unsigned long long)n, at, (size_t)(s->end - s->p));
	out->p = s->p;
	out->end = s->p + n;
	s->p += n;
	return 0;
}

/* Skips a value of an unknown field (used only to report where it ends). */
static int wire_type_of(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_BOOL:
	case PROTOBUF_C_TYPE_ENUM:
		return 0;
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return 1;
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_BYTES:
	case PROTOBUF_C_TYPE_MESSAGE:
		return 2;
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_FLOAT:
		return 5;
	}
	return -1;
}

static bool utf8_ok(const uint8_t *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		uint8_t c = p[i];
		size_t k, len;
		uint32_t cp;

		if (c == 0)
			return false;
		if (c < 0x80) {
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0) {
			len = 2;
			cp = c & 0x1f;
		} else if ((c & 0xf0) == 0xe0) {
			len = 3;
			cp = c & 0x0f;
		} else if ((c & 0xf8) == 0xf0) {
			len = 4;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (i + len > n)
			return false;
		for (k = 1; k < len; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (p[i + k] & 0x3f);
		}
		if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += len;
	}
	return true;
}

static void path_join(char *out, size_t len, const char *path, const char *name)
{
	snprintf(out, len, "%s%s%s", path, path[0] ? "." : "", name);
}

static int decode_message(struct rd *r, const ProtobufCMessageDescriptor *desc, struct span s,
			  const char *path, int depth, bool entry, cJSON *obj);

/* A string or bytes value as JSON (bytes: base64). */
static cJSON *scalar_bytes(struct rd *r, const ProtobufCFieldDescriptor *fd, struct span v,
			   const char *path)
{
	size_t n = (size_t)(v.end - v.p);
	cJSON *j;

	if (fd->type == PROTOBUF_C_TYPE_STRING) {
		char *t;

		if (!utf8_ok(v.p, n)) {
			fail(r, 400, path, "the string at byte %zu is not UTF-8 (or holds a NUL)",
			     (size_t)(v.p - r->base));
			return NULL;
		}
		t = malloc(n + 1);
		if (!t)
			goto oom;
		memcpy(t, v.p, n);
		t[n] = '\0';
		j = cJSON_CreateString(t);
		free(t);
	} else {
		struct buf b = BUF_INIT;

		if (b64_encode(&b, v.p, n) < 0) {
			buf_free(&b);
			goto oom;
		}
		j = cJSON_CreateString(b.data ? b.data : "");
		buf_free(&b);
	}
	if (j)
		return j;
oom:
	r->code = 500;
	errbuf_set(r->err, "out of memory");
	return NULL;
}

/* A message of a type that is a scalar in JSON (times, quantities,
 * int-or-string, managed fields): its JSON, or cJSON NULL for "no time";
 * *handled false for an ordinary message. */
static cJSON *special(struct rd *r, const ProtobufCMessageDescriptor *m, struct span v,
		      const char *path, int depth, bool *handled)
{
	bool tm = strcmp(m->name, T_TIME) == 0, mt = strcmp(m->name, T_MICROTIME) == 0;
	bool q = strcmp(m->name, T_QUANTITY) == 0, is = strcmp(m->name, T_INTSTR) == 0;
	bool fv = strcmp(m->name, T_FIELDSV1) == 0;
	cJSON *tmp, *a, *b, *c, *out = NULL;
	char txt[48];

	*handled = tm || mt || q || is || fv;
	if (!*handled)
		return NULL;
	tmp = cJSON_CreateObject();
	if (!tmp) {
		r->code = 500;
		errbuf_set(r->err, "out of memory");
		return NULL;
	}
	/* the sub-message decoded with zeros kept: its fields are values */
	if (decode_message(r, m, v, path, depth + 1, true, tmp) < 0) {
		cJSON_Delete(tmp);
		return NULL;
	}
	if (tm || mt) {
		a = cJSON_GetObjectItemCaseSensitive(tmp, "seconds");
		b = cJSON_GetObjectItemCaseSensitive(tmp, "nanos");
		if (!a && !b) {
			out = cJSON_CreateNull();
		} else if (format_time(a ? (int64_t)a->valuedouble : 0, b ? (int32_t)b->valuedouble : 0,
				       mt, txt, sizeof(txt)) < 0) {
			fail(r, 400, path, "the time at byte %zu is out of range",
			     (size_t)(v.p - r->base));
		} else {
			out = cJSON_CreateString(txt);
		}
	} else if (q) {
		a = cJSON_GetObjectItemCaseSensitive(tmp, "string");
		out = cJSON_CreateString(a ? a->valuestring : "0");
	} else if (is) {
		a = cJSON_GetObjectItemCaseSensitive(tmp, "type");
		b = cJSON_GetObjectItemCaseSensitive(tmp, "intVal");
		c = cJSON_GetObjectItemCaseSensitive(tmp, "strVal");
		if (a && a->valuedouble == 1)
			out = cJSON_CreateString(c ? c->valuestring : "");
		else if (!a || a->valuedouble == 0)
			out = cJSON_CreateNumber(b ? b->valuedouble : 0);
		else
			fail(r, 400, path, "an IntOrString at byte %zu has a type that is neither 0 nor 1",
			     (size_t)(v.p - r->base));
	} else {
		size_t len = 0;
		unsigned char *raw = NULL;
		struct errbuf e2;

		a = cJSON_GetObjectItemCaseSensitive(tmp, "Raw");
		if (a)
			raw = kube_base64_decode(a->valuestring, strlen(a->valuestring), &len, &e2);
		out = raw ? cJSON_ParseWithLength((const char *)raw, len) : cJSON_CreateObject();
		free(raw);
		if (!out)
			fail(r, 400, path, "the managed fields at byte %zu are not JSON",
			     (size_t)(v.p - r->base));
	}
	cJSON_Delete(tmp);
	if (!out && r->code == 0) {
		r->code = 500;
		errbuf_set(r->err, "out of memory");
	}
	return out;
}

static bool is_zero(const cJSON *j)
{
	return cJSON_IsFalse(j) || (cJSON_IsNumber(j) && j->valuedouble == 0) ||
	       (cJSON_IsString(j) && !j->valuestring[0]);
}

/* One value of field 'fd' (wire type already checked) as JSON. */
static cJSON *field_value(struct rd *r, const ProtobufCFieldDescriptor *fd, struct span *s,
			  int wt, const char *path, int depth)
{
	uint64_t v;
	struct span sub;
	cJSON *j = NULL;
	bool handled;

	if (wt == 0) {
		if (read_varint(r, s, path, &v) < 0)
			return NULL;
		switch (fd->type) {
		case PROTOBUF_C_TYPE_BOOL:
			j = cJSON_CreateBool(v != 0);
			break;
		case PROTOBUF_C_TYPE_INT32:
			j = cJSON_CreateNumber((double)(int32_t)(uint32_t)v);
			break;
		default:
			/* JSON numbers are doubles: beyond 2^53 a value would change */
			if ((int64_t)v > 9007199254740992LL || (int64_t)v < -9007199254740992LL) {
				fail(r, 400, path, "the integer before byte %zu is beyond 2^53",
				     (size_t)(s->p - r->base));
				return NULL;
			}
			j = cJSON_CreateNumber((double)(int64_t)v);
			break;
		}
		goto done;
	}
	if (read_len(r, s, path, &sub) < 0)
		return NULL;
	if (fd->type != PROTOBUF_C_TYPE_MESSAGE)
		return scalar_bytes(r, fd, sub, path);
	j = special(r, fd->descriptor, sub, path, depth, &handled);
	if (handled)
		return j;
	j = cJSON_CreateObject();
	if (j && decode_message(r, fd->descriptor, sub, path, depth + 1, false, j) < 0) {
		cJSON_Delete(j);
		return NULL;
	}
done:
	if (!j) {
		r->code = 500;
		errbuf_set(r->err, "out of memory");
	}
	return j;
}

/* One entry of a map field into the JSON object 'map'. */
static int map_entry(struct rd *r, const ProtobufCFieldDescriptor *fd, struct span *s,
		     const char *path, int depth, cJSON *map)
{
	struct span sub;
	cJSON *e, *k, *v;
	int rc = -1;

	if (read_len(r, s, path, &sub) < 0)
		return -1;
	e = cJSON_CreateObject();
	if (!e || decode_message(r, fd->descriptor, sub, path, depth + 1, true, e) < 0)
		goto out;
	k = cJSON_GetObjectItemCaseSensitive(e, "key");
	v = cJSON_DetachItemFromObjectCaseSensitive(e, "value");
	if (!v) {
		const ProtobufCFieldDescriptor *vf = &((const ProtobufCMessageDescriptor *)fd->descriptor)->fields[1];

		v = vf->type == PROTOBUF_C_TYPE_MESSAGE ? cJSON_CreateString("0") :
							  cJSON_CreateString("");
		if (!v)
			goto out;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(map, k ? k->valuestring : "");
	cJSON_AddItemToObject(map, k ? k->valuestring : "", v);
	rc = 0;
out:
	cJSON_Delete(e);
	return rc;
}

/* Decodes the fields in 's' into 'obj'. 'entry': a map entry or a
 * scalar-like message, whose zero values are kept. */
static int decode_message(struct rd *r, const ProtobufCMessageDescriptor *desc, struct span s,
			  const char *path, int depth, bool entry, cJSON *obj)
{
	if (depth > MAX_DEPTH)
		return fail(r, 400, path, "messages nested too deep at byte %zu",
			    (size_t)(s.p - r->base));
	while (s.p < s.end) {
		size_t at = (size_t)(s.p - r->base);
		const ProtobufCFieldDescriptor *fd;
		char sub[PATH_MAX_LEN];
		uint64_t tag;
		int wt, want;
		cJSON *v, *arr;

		if (read_varint(r, &s, path, &tag) < 0)
			return -1;
		wt = (int)(tag & 7);
		if (tag >> 3 == 0 || tag >> 3 > 536870911)
			return fail(r, 400, path, "field number 0 or out of range at byte %zu", at);
		fd = protobuf_c_message_descriptor_get_field(desc, (unsigned)(tag >> 3));
		if (!fd)
			return fail(r, 400, path,
				    "field %u of io.k8s.%s (wire type %d) at byte %zu is not one the simulated API server knows; it refuses the body rather than drop the field",
				    (unsigned)(tag >> 3), desc->name + 7, wt, at);
		path_join(sub, sizeof(sub), path, fd->name);
		want = wire_type_of(fd->type);
		if (wt != want)
			return fail(r, 400, path, "wire type %d where %s needs %d, at byte %zu", wt,
				    fd->name, want, at);
		if (is_map(fd)) {
			cJSON *map = cJSON_GetObjectItemCaseSensitive(obj, fd->name);

			if (!map && !(map = cJSON_AddObjectToObject(obj, fd->name)))
				goto oom;
			if (map_entry(r, fd, &s, sub, depth, map) < 0)
				return -1;
			continue;
		}
		v = field_value(r, fd, &s, wt, sub, depth);
		if (!v)
			return -1;
		if (apiserver_proto_is_inline(desc, fd) && cJSON_IsObject(v)) {
			/* its members are the holder's in JSON: the last one wins */
			cJSON *m;

			while ((m = v->child)) {
				cJSON_DetachItemViaPointer(v, m);
				cJSON_DeleteItemFromObjectCaseSensitive(obj, m->string);
				cJSON_AddItemToObject(obj, m->string, m);
			}
			cJSON_Delete(v);
			continue;
		}
		if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
			arr = cJSON_GetObjectItemCaseSensitive(obj, fd->name);
			if (!arr && !(arr = cJSON_AddArrayToObject(obj, fd->name))) {
				cJSON_Delete(v);
				goto oom;
			}
			cJSON_AddItemToArray(arr, v);
			continue;
		}
		/* the last one wins; a zero of a plain field, or no time, is absent */
		cJSON_DeleteItemFromObjectCaseSensitive(obj, fd->name);
		if (cJSON_IsNull(v) ||
		    (!entry && is_zero(v) && fd->type != PROTOBUF_C_TYPE_MESSAGE &&
		     !apiserver_proto_keeps_zero(desc, fd))) {
			cJSON_Delete(v);
			continue;
		}
		cJSON_AddItemToObject(obj, fd->name, v);
	}
	return 0;
oom:
	r->code = 500;
	return errbuf_set(r->err, "out of memory");
}

/* The envelope: typeMeta (decoded), raw (its span), the two strings. */
static int read_envelope(struct rd *r, struct span s, cJSON *tm, struct span *raw, cJSON *strs)
{
	const ProtobufCMessageDescriptor *ud = &k8s__io__apimachinery__pkg__runtime__unknown__descriptor;

	while (s.p < s.end) {
		size_t at = (size_t)(s.p - r->base);
		const ProtobufCFieldDescriptor *fd;
		struct span v;
		uint64_t tag;

		if (read_varint(r, &s, "", &tag) < 0)
			return -1;
		fd = protobuf_c_message_descriptor_get_field(ud, (unsigned)(tag >> 3));
		if (!fd || (tag & 7) != 2 || tag >> 3 > 4)
			return fail(r, 400, "", "field %llu (wire type %d) at byte %zu is not one of runtime.Unknown's",
				    (unsigned long long)(tag >> 3), (int)(tag & 7), at);
		if (read_len(r, &s, fd->name, &v) < 0)
			return -1;
		if (fd->id == 1) {
			cJSON_DeleteItemFromObjectCaseSensitive(tm, "apiVersion");
			cJSON_DeleteItemFromObjectCaseSensitive(tm, "kind");
			if (decode_message(r, fd->descriptor, v, "typeMeta", 1, true, tm) < 0)
				return -1;
		} else if (fd->id == 2) {
			*raw = v;
		} else {
			cJSON *j = scalar_bytes(r, fd, v, fd->name);

			if (!j)
				return -1;
			cJSON_DeleteItemFromObjectCaseSensitive(strs, fd->name);
			cJSON_AddItemToObject(strs, fd->name, j);
		}
	}
	return 0;
}

cJSON *apiserver_proto_decode(const void *data, size_t len, int *code, struct errbuf *err)
{
	struct rd r = {data, 0, err};
	struct span s = {data, (const uint8_t *)data + len}, raw = {NULL, NULL};
	cJSON *tm = cJSON_CreateObject(), *strs = cJSON_CreateObject(), *obj = NULL;
	const char *av, *kd, *ce, *ctp;
	const ProtobufCMessageDescriptor *desc;

	*code = 400;
	if (!tm || !strs) {
		*code = 500;
		errbuf_set(err, "out of memory");
		goto fail;
	}
	if (len < 4 || memcmp(data, magic, 4) != 0) {
		errbuf_set(err, "protobuf body: it does not start with the 4 bytes \"k8s\\0\"");
		goto fail;
	}
	s.p += 4;
	if (read_envelope(&r, s, tm, &raw, strs) < 0)
		goto fail;
	av = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(tm, "apiVersion"));
	kd = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(tm, "kind"));
	ce = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(strs, "contentEncoding"));
	ctp = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(strs, "contentType"));
	if (!kd || !kd[0] || !av || !av[0]) {
		errbuf_set(err, "protobuf body: its runtime.Unknown names no apiVersion and kind");
		goto fail;
	}
	if ((ce && ce[0]) || (ctp && ctp[0] && !apiserver_proto_is_media(ctp))) {
		*code = 415;
		errbuf_set(err, "protobuf body: content encoding \"%.40s\" and type \"%.80s\" are not supported",
			   ce ? ce : "", ctp ? ctp : "");
		goto fail;
	}
	desc = apiserver_proto_find(av, kd);
	if (!desc) {
		*code = 415;
		errbuf_set(err, "protobuf body: the simulated API server cannot read %.100s %.100s in protobuf",
			   av, kd);
		goto fail;
	}
	obj = cJSON_CreateObject();
	if (!obj || !cJSON_AddStringToObject(obj, "apiVersion", av) ||
	    !cJSON_AddStringToObject(obj, "kind", kd)) {
		*code = 500;
		errbuf_set(err, "out of memory");
		goto fail;
	}
	if (raw.p && decode_message(&r, desc, raw, "", 0, false, obj) < 0)
		goto fail;
	cJSON_Delete(tm);
	cJSON_Delete(strs);
	return obj;
fail:
	if (r.code)
		*code = r.code;
	cJSON_Delete(tm);
	cJSON_Delete(strs);
	cJSON_Delete(obj);
	return NULL;
}

/* ---- the wire writer ---- */

static bool is_kind(const ProtobufCMessageDescriptor *desc)
{
	size_t i;

	for (i = 0; i < apiserver_proto_n_kinds; i++)
		if (apiserver_proto_kinds[i].desc == desc)
			return true;
	return false;
}

static void put_varint(struct buf *b, uint64_t v)
{
	uint8_t t[10];
	size_t n = 0;

	do {
		t[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			t[n] |= 0x80;
		n++;
	} while (v);
	buf_append(b, t, n);
}

static void put_tag(struct buf *b, unsigned id, int wt)
{
	put_varint(b, ((uint64_t)id << 3) | (uint64_t)wt);
}

static void put_bytes(struct buf *b, unsigned id, const void *p, size_t n)
{
	put_tag(b, id, 2);
	put_varint(b, n);
	buf_append(b, p, n);
}

static int encode_message(const ProtobufCMessageDescriptor *desc, const cJSON *obj, struct buf *out,
			  const char *path, int depth, bool top, struct errbuf *err);

static int integral(const cJSON *j, double lo, double hi, int64_t *v)
{
	if (!cJSON_IsNumber(j) || j->valuedouble != (double)(int64_t)j->valuedouble ||
	    j->valuedouble < lo || j->valuedouble > hi)
		return -1;
	*v = (int64_t)j->valuedouble;
	return 0;
}

/* The two fields of a Time or MicroTime. */
static int encode_time(const cJSON *j, struct buf *b, const char *path, struct errbuf *err)
{
	int64_t secs;
	int32_t nanos;

	if (!cJSON_IsString(j) || parse_time(j->valuestring, &secs, &nanos) < 0)
		return errbuf_set(err, "%s: not an RFC 3339 time", path);
	put_tag(b, 1, 0);
	put_varint(b, (uint64_t)secs);
	if (nanos) {
		put_tag(b, 2, 0);
		put_varint(b, (uint64_t)(int64_t)nanos);
	}
	return 0;
}

/* One value of field 'fd' with its tag. */
static int encode_value(const ProtobufCFieldDescriptor *fd, const cJSON *j, struct buf *out,
			const char *path, int depth, struct errbuf *err)
{
	int64_t v;

	switch (fd->type) {
	case PROTOBUF_C_TYPE_BOOL:
		if (!cJSON_IsBool(j))
			return errbuf_set(err, "%s: not a boolean", path);
		put_tag(out, fd->id, 0);
		put_varint(out, cJSON_IsTrue(j) ? 1 : 0);
		return 0;
	case PROTOBUF_C_TYPE_INT32:
		if (integral(j, -2147483648.0, 2147483647.0, &v) < 0)
			return errbuf_set(err, "%s: not a 32-bit integer", path);
		put_tag(out, fd->id, 0);
		put_varint(out, (uint64_t)v);
		return 0;
	case PROTOBUF_C_TYPE_INT64:
		if (integral(j, -9007199254740992.0, 9007199254740992.0, &v) < 0)
			return errbuf_set(err, "%s: not an integer", path);
		put_tag(out, fd->id, 0);
		put_varint(out, (uint64_t)v);
		return 0;
	case PROTOBUF_C_TYPE_STRING:
		if (!cJSON_IsString(j))
			return errbuf_set(err, "%s: not a string", path);
		put_bytes(out, fd->id, j->valuestring, strlen(j->valuestring));
		return 0;
	case PROTOBUF_C_TYPE_BYTES: {
		size_t n;
		unsigned char *raw;

		if (!cJSON_IsString(j))
			return errbuf_set(err, "%s: not a base64 string", path);
		raw = kube_base64_decode(j->valuestring, strlen(j->valuestring), &n, err);
		if (!raw)
			return errbuf_prefix(err, "%s", path);
		put_bytes(out, fd->id, raw, n);
		free(raw);
		return 0;
	}
	case PROTOBUF_C_TYPE_MESSAGE: {
		const char *m = ((const ProtobufCMessageDescriptor *)fd->descriptor)->name;
		struct buf sub = BUF_INIT;
		int rc = 0;

		if (strcmp(m, T_TIME) == 0 || strcmp(m, T_MICROTIME) == 0) {
			rc = encode_time(j, &sub, path, err);
		} else if (strcmp(m, T_QUANTITY) == 0) {
			char t[40];

			if (cJSON_IsString(j))
				put_bytes(&sub, 1, j->valuestring, strlen(j->valuestring));
			else if (integral(j, -9007199254740992.0, 9007199254740992.0, &v) == 0)
				put_bytes(&sub, 1, t, (size_t)snprintf(t, sizeof(t), "%lld", (long long)v));
			else
				rc = errbuf_set(err, "%s: not a quantity", path);
		} else if (strcmp(m, T_INTSTR) == 0) {
			if (cJSON_IsString(j)) {
				put_tag(&sub, 1, 0);
				put_varint(&sub, 1);
				put_bytes(&sub, 3, j->valuestring, strlen(j->valuestring));
			} else if (integral(j, -2147483648.0, 2147483647.0, &v) == 0) {
				put_tag(&sub, 1, 0);
				put_varint(&sub, 0);
				put_tag(&sub, 2, 0);
				put_varint(&sub, (uint64_t)v);
			} else {
				rc = errbuf_set(err, "%s: neither an integer nor a string", path);
			}
		} else if (strcmp(m, T_FIELDSV1) == 0) {
			char *t = cJSON_PrintUnformatted(j);

			if (!t)
				rc = errbuf_set(err, "out of memory");
			else
				put_bytes(&sub, 1, t, strlen(t));
			free(t);
		} else if (!cJSON_IsObject(j)) {
			rc = errbuf_set(err, "%s: not an object", path);
		} else {
			rc = encode_message(fd->descriptor, j, &sub, path, depth + 1, false, err);
		}
		if (rc == 0)
			put_bytes(out, fd->id, sub.data ? sub.data : "", sub.len);
		if (sub.oom)
			rc = errbuf_set(err, "out of memory");
		buf_free(&sub);
		return rc;
	}
	default:
		return errbuf_set(err, "%s: a field type the codec does not write", path);
	}
}

/* An inline field (apiserver_proto_is_inline): the members of 'obj' its message describes,
 * written as that message. Always written, as Go writes a struct that is
 * not a pointer. */
static int encode_inline(const ProtobufCMessageDescriptor *desc, const ProtobufCFieldDescriptor *fd,
			 const cJSON *obj, struct buf *out, const char *path, int depth,
			 struct errbuf *err)
{
	const ProtobufCMessageDescriptor *in = fd->descriptor;
	cJSON *view = cJSON_CreateObject();
	const cJSON *m;
	struct buf sub = BUF_INIT;
	int rc = 0;

	(void)desc;
	if (!view)
		return errbuf_set(err, "out of memory");
	cJSON_ArrayForEach(m, obj)
		if (m->string && protobuf_c_message_descriptor_get_field_by_name(in, m->string) &&
		    !cJSON_AddItemReferenceToObject(view, m->string, (cJSON *)m))
			rc = errbuf_set(err, "out of memory");
	if (rc == 0)
		rc = encode_message(in, view, &sub, path, depth + 1, false, err);
	if (rc == 0)
		put_bytes(out, fd->id, sub.data ? sub.data : "", sub.len);
	if (rc == 0 && sub.oom)
		rc = errbuf_set(err, "out of memory");
	buf_free(&sub);
	cJSON_Delete(view);
	return rc;
}

static int encode_message(const ProtobufCMessageDescriptor *desc, const cJSON *obj, struct buf *out,
			  const char *path, int depth, bool top, struct errbuf *err)
{
	const cJSON *m;
	unsigned i;

	if (depth > MAX_DEPTH)
		return errbuf_set(err, "%s: nested too deep", path);
	top = top || is_kind(desc);
	/* every member must be a described field */
	cJSON_ArrayForEach(m, obj) {
		if (!m->string)
			return errbuf_set(err, "%s: a member without a name", path);
		/* a kind's own apiVersion and kind travel in the envelope (or, for
		 * the items of a list, nowhere: the list names them) */
		if (top && (strcmp(m->string, "apiVersion") == 0 || strcmp(m->string, "kind") == 0))
			continue;
		if (cJSON_IsNull(m))
			continue;
		if (!protobuf_c_message_descriptor_get_field_by_name(desc, m->string) &&
		    !inline_owner(desc, m->string))
			return errbuf_set(err, "%s%s%s: not in the protobuf description of io.k8s.%s", path,
					  path[0] ? "." : "", m->string, desc->name + 7);
	}
	/* in field-number order, as the real server writes them */
	for (i = 0; i < desc->n_fields; i++) {
		const ProtobufCFieldDescriptor *fd = &desc->fields[i];
		const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, fd->name), *e;
		char sub[PATH_MAX_LEN];

		if (apiserver_proto_is_inline(desc, fd)) {
			if (encode_inline(desc, fd, obj, out, path, depth, err) < 0)
				return -1;
			continue;
		}
		if (!j || cJSON_IsNull(j))
			continue;
		path_join(sub, sizeof(sub), path, fd->name);
		if (is_map(fd)) {
			const ProtobufCFieldDescriptor *vf = &((const ProtobufCMessageDescriptor *)fd->descriptor)->fields[1];

			if (!cJSON_IsObject(j))
				return errbuf_set(err, "%s: not an object", sub);
			cJSON_ArrayForEach(e, j) {
				struct buf ent = BUF_INIT;
				int rc;

				put_bytes(&ent, 1, e->string, strlen(e->string));
				rc = cJSON_IsNull(e) ? 0 : encode_value(vf, e, &ent, sub, depth, err);
				if (rc == 0)
					put_bytes(out, fd->id, ent.data, ent.len);
				buf_free(&ent);
				if (rc < 0)
					return -1;
			}
		} else if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
			if (!cJSON_IsArray(j))
				return errbuf_set(err, "%s: not an array", sub);
			cJSON_ArrayForEach(e, j)
				if (encode_value(fd, e, out, sub, depth, err) < 0)
					return -1;
		} else if (encode_value(fd, j, out, sub, depth, err) < 0) {
			return -1;
		}
	}
	return out->oom ? errbuf_set(err, "out of memory") : 0;
}

int apiserver_proto_encode(const cJSON *obj, struct buf *out, struct errbuf *err)
{
	const char *av = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, "apiVersion"));
	const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, "kind"));
	const ProtobufCMessageDescriptor *desc = apiserver_proto_find(av, kind);
	struct buf raw = BUF_INIT, tm = BUF_INIT, env = BUF_INIT;
	int rc = -1;

	if (!cJSON_IsObject(obj) || !desc)
		return errbuf_set(err, "%s %s has no protobuf description", av ? av : "(no apiVersion)",
				  kind ? kind : "(no kind)");
	if (encode_message(desc, obj, &raw, "", 0, true, err) < 0)
		goto out;
	put_bytes(&tm, 1, av, strlen(av));
	put_bytes(&tm, 2, kind, strlen(kind));
	buf_append(&env, magic, 4);
	put_bytes(&env, 1, tm.data, tm.len);
	put_bytes(&env, 2, raw.data ? raw.data : "", raw.len);
	put_bytes(&env, 3, "", 0);
	put_bytes(&env, 4, "", 0);
	if (raw.oom || tm.oom || env.oom) {
		errbuf_set(err, "out of memory");
		goto out;
	}
	rc = buf_append(out, env.data, env.len);
out:
	buf_free(&raw);
	buf_free(&tm);
	buf_free(&env);
	return rc;
}

/* ---- content negotiation ---- */

/* Does 's' (up to 'end') name media type 'type'? *params_as: it has an
 * as= parameter, or a stream= one unless 'stream_ok'. */
static bool media_is_ex(const char *s, const char *end, const char *type, bool *params_as,
			bool stream_ok)
{
	size_t n = strlen(type);
	const char *p;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if ((size_t)(end - s) < n || strncasecmp(s, type, n) != 0)
		return false;
	p = s + n;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p < end && *p != ';')
		return false;
	*params_as = false;
	for (; p < end; p++)
		if (*p == ';') {
			const char *q = p + 1;

			while (q < end && *q == ' ')
				q++;
			if ((size_t)(end - q) >= 3 && (strncmp(q, "as=", 3) == 0 ||
						       (!stream_ok && (size_t)(end - q) >= 7 &&
							strncmp(q, "stream=", 7) == 0)))
				*params_as = true;
		}
	return true;
}

static bool media_is(const char *s, const char *end, const char *type, bool *params_as)
{
	return media_is_ex(s, end, type, params_as, false);
}

bool apiserver_proto_is_media(const char *ct)
{
	bool special = false;

	return ct && media_is(ct, ct + strlen(ct), APISERVER_PROTO_MEDIA, &special) && !special;
}

static double quality(const char *s, const char *end)
{
	const char *q = s;

	while ((q = memchr(q, ';', (size_t)(end - q))) != NULL) {
		q++;
		while (q < end && *q == ' ')
			q++;
		if ((size_t)(end - q) > 2 && q[0] == 'q' && q[1] == '=')
			return strtod(q + 2, NULL);
	}
	return 1.0;
}

static int accept_pref(const char *accept, bool watch);

int apiserver_proto_accept(const char *accept)
{
	return accept_pref(accept, false);
}

int apiserver_proto_watch_accept(const char *accept)
{
	return accept_pref(accept, true);
}

static int accept_pref(const char *accept, bool watch)
{
	const char *p = accept;
	double best_pb = -1, best_json = -1;
	int at = 0, at_pb = 0, at_json = 0;

	if (!accept || !accept[0])
		return 0;
	while (*p) {
		const char *end = strchr(p, ',');
		bool special = false;
		double q;

		if (!end)
			end = p + strlen(p);
		q = quality(p, end);
		if (q > 0 && media_is_ex(p, end, APISERVER_PROTO_MEDIA, &special, watch)) {
			if (!special && q > best_pb) {
				best_pb = q;
				at_pb = at;
			}
		} else if (q > 0 && (media_is_ex(p, end, "application/json", &special, watch) ||
				     media_is(p, end, "application/*", &special) ||
				     media_is(p, end, "*/*", &special))) {
			if (q > best_json) {
				best_json = q;
				at_json = at;
			}
		}
		at++;
		p = *end ? end + 1 : end;
	}
	if (best_pb < 0)
		return 0;
	if (best_json < 0)
		return -1;
	/* the higher weight wins; at equal weight, the one named first */
	return best_pb > best_json || (best_pb == best_json && at_pb < at_json) ? 1 : 0;
}

int apiserver_proto_request(const char *method, const char *content_type, struct buf *body,
			    struct reply *out)
{
	struct errbuf err;
	cJSON *obj;
	char *txt;
	int code;

	if (!body->len || !apiserver_proto_is_media(content_type) ||
	    !(strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0 ||
	      strcmp(method, "DELETE") == 0))
		return 0;
	obj = apiserver_proto_decode(body->data, body->len, &code, &err);
	if (!obj) {
		apiserver_reply_status(out, code, code == 415 ? "UnsupportedMediaType" :
				       code == 500 ? "InternalError" : "BadRequest", err.msg, NULL, NULL);
		return -1;
	}
	txt = cJSON_PrintUnformatted(obj);
	cJSON_Delete(obj);
	if (!txt) {
		apiserver_reply_status(out, 500, "InternalError", "out of memory", NULL, NULL);
		return -1;
	}
	buf_free(body);
	buf_puts(body, txt);
	free(txt);
	if (body->oom) {
		apiserver_reply_status(out, 500, "InternalError", "out of memory", NULL, NULL);
		return -1;
	}
	return 1;
}

void apiserver_proto_reply(const char *accept, struct reply *out)
{
	int want = apiserver_proto_accept(accept);
	struct buf pb = BUF_INIT;
	struct errbuf err;
	cJSON *obj;

	if (want == 0 || out->watch || out->content_type || !out->body.len)
		return;
	obj = cJSON_ParseWithLength(out->body.data, out->body.len);
	if (obj && apiserver_proto_encode(obj, &pb, &err) == 0) {
		buf_free(&out->body);
		out->body = pb;
		out->content_type = APISERVER_PROTO_MEDIA;
		cJSON_Delete(obj);
		return;
	}
	buf_free(&pb);
	if (want < 0) {
		char msg[ERRBUF_MAX + 80];

		snprintf(msg, sizeof(msg), "only application/json is available for this answer (%s)",
			 obj ? err.msg : "not an object");
		cJSON_Delete(obj);
		apiserver_reply_status(out, 406, "NotAcceptable", msg, NULL, NULL);
		return;
	}
	cJSON_Delete(obj);
}

int apiserver_proto_watch_frame(struct buf *out, const char *type, const cJSON *obj,
				struct errbuf *err)
{
	struct buf env = BUF_INIT, raw = BUF_INIT, we = BUF_INIT;
	unsigned char len[4];
	int rc = -1;

	if (apiserver_proto_encode(obj, &env, err) < 0)
		goto out;
	/* meta.v1.WatchEvent: type = 1, object = 2 (a RawExtension: raw = 1) */
	put_bytes(&raw, 1, env.data ? env.data : "", env.len);
	put_bytes(&we, 1, type, strlen(type));
	put_bytes(&we, 2, raw.data ? raw.data : "", raw.len);
	if (env.oom || raw.oom || we.oom || we.len > 0xffffffffu) {
		errbuf_set(err, "out of memory");
		goto out;
	}
	len[0] = (unsigned char)(we.len >> 24);
	len[1] = (unsigned char)(we.len >> 16);
	len[2] = (unsigned char)(we.len >> 8);
	len[3] = (unsigned char)we.len;
	buf_append(out, len, 4);
	rc = buf_append(out, we.data, we.len);
out:
	buf_free(&env);
	buf_free(&raw);
	buf_free(&we);
	return rc;
}
