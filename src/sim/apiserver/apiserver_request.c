/*
 * sim/apiserver_request: a request's query and what a handler answers
 * (Status), what a write request asks for and whether the real server
 * would take it — its options (dryRun, fieldValidation, fieldManager), its
 * patch by content type, and the schema of the kinds clients write
 * (unknown fields, wrong types). The store and the world are
 * apiserver_objects.c's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include <microhttpd.h>

#include "runtime/clock.h"
#include "sim/apiserver/apiserver_request.h"
#include "sim/apiserver/apiserver_patch.h"
#include "sim/apiserver/apiserver_render.h"

int64_t apiserver_now_ns(void)
{
	return clock_now(clock_real());
}

int64_t apiserver_now_wall(void)
{
	return clock_wall(clock_real());
}

bool apiserver_param_bool(const char *v)
{
	return v && strcmp(v, "0") != 0 && strcasecmp(v, "false") != 0;
}

void apiserver_reply_status(struct reply *out, int code, const char *reason, const char *message,
			    const char *kind, const char *name)
{
	buf_free(&out->body);
	out->code = code;
	apiserver_render_status(&out->body, code, reason, message, kind, name);
}

const char *apiserver_query(const struct resreq *rq, const char *key)
{
	return rq->conn ? MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, key) : NULL;
}

static void oom(struct reply *out)
{
	apiserver_reply_status(out, 500, "InternalError", "out of memory", NULL, NULL);
}

/*
 * Answers 422 as the real server does for request options it does not
 * take: "CreateOptions.meta.k8s.io \"\" is invalid: F: Unsupported value:
 * V: supported values: S", with the cause in details.
 */
static void options_invalid(struct reply *out, const char *options_kind, const char *field,
			    const char *pre, const char *value, const char *post, const char *supported)
{
	char msg[600], detail[400], bad[200];
	struct buf causes = BUF_INIT;

	snprintf(bad, sizeof(bad), "%s%.150s%s", pre, value, post);
	snprintf(detail, sizeof(detail), "Unsupported value: %s: supported values: %s", bad, supported);
	snprintf(msg, sizeof(msg), "%s.meta.k8s.io \"\" is invalid: %s: %s", options_kind, field, detail);
	buf_puts(&causes, "[{\"reason\":\"FieldValueNotSupported\",\"message\":");
	buf_json_string(&causes, detail);
	buf_printf(&causes, ",\"field\":\"%s\"}]", field);
	buf_free(&out->body);
	out->code = 422;
	apiserver_render_status_details(&out->body, 422, "Invalid", msg, "meta.k8s.io", options_kind, "",
					causes.data, 0);
	buf_free(&causes);
}

/* dryRun: 1 when "All", 0 when absent; anything else is answered 422 (-1)
 * as the real server's option validation does. */
int apiserver_dry_run(const struct resreq *rq, const char *options_kind, struct reply *out)
{
	const char *d = apiserver_query(rq, "dryRun");
	char body_value[64] = "";

	if (!d && rq->body_len && (strcmp(rq->method, "DELETE") == 0 ||
				   (rq->sub && strcmp(rq->sub, "eviction") == 0))) {
		/* DeleteOptions in the body (an Eviction's deleteOptions) */
		cJSON *b = cJSON_ParseWithLength(rq->body, rq->body_len);
		const cJSON *opts = cJSON_GetObjectItemCaseSensitive(b, "deleteOptions");
		const cJSON *dr = cJSON_GetObjectItemCaseSensitive(opts ? opts : b, "dryRun"), *e;

		cJSON_ArrayForEach(e, dr)
			if (cJSON_IsString(e))
				snprintf(body_value, sizeof(body_value), "%s", e->valuestring);
		cJSON_Delete(b);
		if (body_value[0])
			d = body_value;
	}
	if (!d)
		return 0;
	if (strcmp(d, "All") == 0)
		return 1;
	options_invalid(out, options_kind, "dryRun", "[]string{\"", d, "\"}", "\"All\"");
	return -1;
}

void apiserver_unsupported_media(struct reply *out)
{
	apiserver_reply_status(out, 415, "UnsupportedMediaType",
			       "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json",
			       NULL, NULL);
}

/*
 * The object 'cur' (taken; NULL: none yet, for an apply) with the
 * request's patch applied, by its content type: a new tree, or NULL with
 * the answer (415 unknown type before the body is read, 400 a malformed
 * patch, 422 one that does not apply or an apply without fieldManager,
 * 500 a strategic merge list element without its merge key, as the real
 * server answers).
 */
cJSON *apiserver_patched(const struct resreq *rq, cJSON *cur, struct reply *out)
{
	enum apiserver_patch_type t = apiserver_patch_type(rq->content_type);
	cJSON *patch = NULL;
	struct errbuf err;
	char msg[600];
	int rc;

	if (t == APISERVER_PATCH_UNKNOWN) {
		cJSON_Delete(cur);
		apiserver_unsupported_media(out);
		return NULL;
	}
	if (t == APISERVER_PATCH_APPLY) {
		const char *fm = apiserver_query(rq, "fieldManager");

		if (!fm || !fm[0]) {
			cJSON_Delete(cur);
			apiserver_reply_status(out, 422, "Invalid",
					       "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
					       "PatchOptions", "");
			return NULL;
		}
		patch = apiserver_parse_apply(rq->body, rq->body_len, &err);
		if (!cJSON_IsObject(patch)) {
			cJSON_Delete(cur);
			cJSON_Delete(patch);
			snprintf(msg, sizeof(msg), "error decoding YAML: %.400s",
				 patch ? "the apply body is not an object" : err.msg);
			apiserver_reply_status(out, 400, "BadRequest", msg, NULL, NULL);
			return NULL;
		}
		/* create or merge: the applied fields win (ownership is not tracked) */
		cur = cur ? apiserver_merge_patch(cur, patch) : cJSON_Duplicate(patch, true);
		cJSON_Delete(patch);
		if (!cur)
			oom(out);
		return cur;
	}
	patch = cJSON_ParseWithLength(rq->body, rq->body_len);
	if (!patch) {
		cJSON_Delete(cur);
		apiserver_reply_status(out, 400, "BadRequest",
				       t == APISERVER_PATCH_JSON ? "error decoding patch: the body is not JSON" :
				       "error decoding patch: the body is not a JSON object", NULL, NULL);
		return NULL;
	}
	if (!cur && !(cur = cJSON_CreateObject())) {
		cJSON_Delete(patch);
		oom(out);
		return NULL;
	}
	switch (t) {
	case APISERVER_PATCH_JSON:
		rc = apiserver_json_patch(&cur, patch, &err);
		if (rc < 0) {
			snprintf(msg, sizeof(msg), "%.500s", err.msg);
			cJSON_Delete(cur);
			cJSON_Delete(patch);
			if (rc == -1)
				apiserver_reply_status(out, 400, "BadRequest", msg, NULL, NULL);
			else
				apiserver_reply_status(out, 422, "", msg, NULL, NULL);
			return NULL;
		}
		break;
	case APISERVER_PATCH_MERGE:
		if (!cJSON_IsObject(patch))
			goto not_object;
		cur = apiserver_merge_patch(cur, patch);
		break;
	default:
		if (!cJSON_IsObject(patch))
			goto not_object;
		/* a scale subresource's object is a Scale, whose lists are none */
		rc = rq->sub && strcmp(rq->sub, "scale") == 0 ?
			apiserver_strategic_merge(cur, patch, NULL, NULL, &err) :
			apiserver_strategic_merge(cur, patch, apiserver_api_version(rq->res),
						  apiserver_resources[rq->res].kind, &err);
		if (rc < 0) {
			snprintf(msg, sizeof(msg), "%.500s", err.msg);
			cJSON_Delete(cur);
			cJSON_Delete(patch);
			if (rc == APISERVER_SMP_BAD)
				apiserver_reply_status(out, 400, "BadRequest", msg, NULL, NULL);
			else if (rc == APISERVER_SMP_INVALID)
				apiserver_reply_status(out, 422, "Invalid", msg, NULL, NULL);
			else
				apiserver_reply_status(out, 500, "", msg, NULL, NULL);
			return NULL;
		}
		break;
	}
	cJSON_Delete(patch);
	if (!cur)
		oom(out);
	else if (!cJSON_IsObject(cur)) {
		cJSON_Delete(cur);
		apiserver_reply_status(out, 400, "BadRequest", "the patched object is not an object",
				       NULL, NULL);
		return NULL;
	}
	return cur;
not_object:
	cJSON_Delete(cur);
	cJSON_Delete(patch);
	apiserver_reply_status(out, 400, "BadRequest",
			       "error decoding patch: a merge patch must be a JSON object", NULL, NULL);
	return NULL;
}

/* Answers with 'o' (borrowed) as it would be stored at resourceVersion 'rv'
 * (0: none), for a dry run. */
void apiserver_reply_tree(struct reply *out, int code, cJSON *o, uint64_t rv)
{
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(o, "metadata");
	char *txt;
	char rvs[32];

	cJSON_DeleteItemFromObjectCaseSensitive(meta, "resourceVersion");
	if (rv && meta) {
		snprintf(rvs, sizeof(rvs), "%llu", (unsigned long long)rv);
		cJSON_AddStringToObject(meta, "resourceVersion", rvs);
	}
	txt = cJSON_PrintUnformatted(o);
	if (!txt) {
		oom(out);
		return;
	}
	buf_free(&out->body);
	out->code = code;
	buf_puts(&out->body, txt);
	free(txt);
}

/* ---- what a client may write: the schema of the kinds clients own ---- */

struct fdef {
	const char *name;
	char type;                 /* s string, i integer, b boolean, m map of strings,
				    * a array, A array of objects (their fields in sub),
				    * o object (fields in sub; NULL: any) */
	const struct fdef *sub;
};

static const struct fdef ref_fields[] = {
	{"kind", 's', NULL}, {"namespace", 's', NULL}, {"name", 's', NULL}, {"uid", 's', NULL},
	{"apiVersion", 's', NULL}, {"resourceVersion", 's', NULL}, {"fieldPath", 's', NULL},
	{NULL, 0, NULL},
};
static const struct fdef meta_fields[] = {
	{"name", 's', NULL}, {"generateName", 's', NULL}, {"namespace", 's', NULL},
	{"selfLink", 's', NULL}, {"uid", 's', NULL}, {"resourceVersion", 's', NULL},
	{"generation", 'i', NULL}, {"creationTimestamp", 's', NULL},
	{"deletionTimestamp", 's', NULL}, {"deletionGracePeriodSeconds", 'i', NULL},
	{"labels", 'm', NULL}, {"annotations", 'm', NULL}, {"ownerReferences", 'a', NULL},
	{"finalizers", 'a', NULL}, {"managedFields", 'a', NULL}, {NULL, 0, NULL},
};
static const struct fdef cm_fields[] = {
	{"apiVersion", 's', NULL}, {"kind", 's', NULL}, {"metadata", 'o', meta_fields},
	{"data", 'm', NULL}, {"binaryData", 'm', NULL}, {"immutable", 'b', NULL},
	{NULL, 0, NULL},
};
static const struct fdef lease_spec[] = {
	{"holderIdentity", 's', NULL}, {"leaseDurationSeconds", 'i', NULL},
	{"acquireTime", 's', NULL}, {"renewTime", 's', NULL}, {"leaseTransitions", 'i', NULL},
	{"strategy", 's', NULL}, {"preferredHolder", 's', NULL}, {NULL, 0, NULL},
};
static const struct fdef lease_fields[] = {
	{"apiVersion", 's', NULL}, {"kind", 's', NULL}, {"metadata", 'o', meta_fields},
	{"spec", 'o', lease_spec}, {NULL, 0, NULL},
};
static const struct fdef source_fields[] = {
	{"component", 's', NULL}, {"host", 's', NULL}, {NULL, 0, NULL},
};
static const struct fdef series_fields[] = {
	{"count", 'i', NULL}, {"lastObservedTime", 's', NULL}, {NULL, 0, NULL},
};
static const struct fdef event_fields[] = {
	{"apiVersion", 's', NULL}, {"kind", 's', NULL}, {"metadata", 'o', meta_fields},
	{"involvedObject", 'o', ref_fields}, {"reason", 's', NULL}, {"message", 's', NULL},
	{"source", 'o', source_fields}, {"firstTimestamp", 's', NULL},
	{"lastTimestamp", 's', NULL}, {"count", 'i', NULL}, {"type", 's', NULL},
	{"eventTime", 's', NULL}, {"series", 'o', series_fields}, {"action", 's', NULL},
	{"related", 'o', ref_fields}, {"reportingComponent", 's', NULL},
	{"reportingInstance", 's', NULL}, {NULL, 0, NULL},
};

static const struct fdef event_v1_fields[] = {
	{"apiVersion", 's', NULL}, {"kind", 's', NULL}, {"metadata", 'o', meta_fields},
	{"eventTime", 's', NULL}, {"series", 'o', series_fields},
	{"reportingController", 's', NULL}, {"reportingInstance", 's', NULL},
	{"action", 's', NULL}, {"reason", 's', NULL}, {"regarding", 'o', ref_fields},
	{"related", 'o', ref_fields}, {"note", 's', NULL}, {"type", 's', NULL},
	{"deprecatedSource", 'o', source_fields}, {"deprecatedFirstTimestamp", 's', NULL},
	{"deprecatedLastTimestamp", 's', NULL}, {"deprecatedCount", 'i', NULL},
	{NULL, 0, NULL},
};

/*
 * Workloads: every field of the Kubernetes types down to a container's; the
 * objects below that (probes, volumes, security contexts, affinity,
 * resources, strategies, selectors) and status are taken as any object,
 * their fields unchecked.
 */
static const struct fdef container_fields[] = {
	{"name", 's', NULL}, {"image", 's', NULL}, {"command", 'a', NULL}, {"args", 'a', NULL},
	{"workingDir", 's', NULL}, {"ports", 'a', NULL}, {"envFrom", 'a', NULL},
	{"env", 'a', NULL}, {"resources", 'o', NULL}, {"resizePolicy", 'a', NULL},
	{"restartPolicy", 's', NULL}, {"volumeMounts", 'a', NULL}, {"volumeDevices", 'a', NULL},
	{"livenessProbe", 'o', NULL}, {"readinessProbe", 'o', NULL}, {"startupProbe", 'o', NULL},
	{"lifecycle", 'o', NULL}, {"terminationMessagePath", 's', NULL},
	{"terminationMessagePolicy", 's', NULL}, {"imagePullPolicy", 's', NULL},
	{"securityContext", 'o', NULL}, {"stdin", 'b', NULL}, {"stdinOnce", 'b', NULL},
	{"tty", 'b', NULL}, {NULL, 0, NULL},
};
static const struct fdef pod_spec[] = {
	{"volumes", 'a', NULL}, {"initContainers", 'A', container_fields},
	{"containers", 'A', container_fields}, {"ephemeralContainers", 'a', NULL},
	{"restartPolicy", 's', NULL}, {"terminationGracePeriodSeconds", 'i', NULL},
	{"activeDeadlineSeconds", 'i', NULL}, {"dnsPolicy", 's', NULL},
	{"nodeSelector", 'm', NULL}, {"serviceAccountName", 's', NULL},
	{"serviceAccount", 's', NULL}, {"automountServiceAccountToken", 'b', NULL},
	{"nodeName", 's', NULL}, {"hostNetwork", 'b', NULL}, {"hostPID", 'b', NULL},
	{"hostIPC", 'b', NULL}, {"shareProcessNamespace", 'b', NULL},
	{"securityContext", 'o', NULL}, {"imagePullSecrets", 'a', NULL}, {"hostname", 's', NULL},
	{"subdomain", 's', NULL}, {"affinity", 'o', NULL}, {"schedulerName", 's', NULL},
	{"tolerations", 'a', NULL}, {"hostAliases", 'a', NULL}, {"priorityClassName", 's', NULL},
	{"priority", 'i', NULL}, {"dnsConfig", 'o', NULL}, {"readinessGates", 'a', NULL},
	{"runtimeClassName", 's', NULL}, {"enableServiceLinks", 'b', NULL},
	{"preemptionPolicy", 's', NULL}, {"overhead", 'o', NULL},
	{"topologySpreadConstraints", 'a', NULL}, {"setHostnameAsFQDN", 'b', NULL},
	{"os", 'o', NULL}, {"hostUsers", 'b', NULL}, {"schedulingGates", 'a', NULL},
	{"resourceClaims", 'a', NULL}, {"resources", 'o', NULL}, {NULL, 0, NULL},
};
static const struct fdef pod_fields[] = {
	{"apiVersion", 's', NULL}, {"kind", 's', NULL}, {"metadata", 'o', meta_fields},
	{"spec", 'o', pod_spec}, {"status", 'o', NULL}, {NULL, 0, NULL},
};
static const struct fdef template_fields[] = {
	{"metadata", 'o', meta_fields}, {"spec", 'o', pod_spec}, {NULL, 0, NULL},
};
static const struct fdef deployment_spec[] = {
	{"replicas", 'i', NULL}, {"selector", 'o', NULL}, {"template", 'o', template_fields},
	{"strategy", 'o', NULL}, {"minReadySeconds", 'i', NULL},
	{"revisionHistoryLimit", 'i', NULL}, {"paused", 'b', NULL},
	{"progressDeadlineSeconds", 'i', NULL}, {NULL, 0, NULL},
};
static const struct fdef replicaset_spec[] = {
	{"replicas", 'i', NULL}, {"minReadySeconds", 'i', NULL}, {"selector", 'o', NULL},
	{"template", 'o', template_fields}, {NULL, 0, NULL},
};
static const struct fdef job_spec[] = {
	{"parallelism", 'i', NULL}, {"completions", 'i', NULL},
	{"activeDeadlineSeconds", 'i', NULL}, {"podFailurePolicy", 'o', NULL},
	{"successPolicy", 'o', NULL}, {"backoffLimit", 'i', NULL},
	{"backoffLimitPerIndex", 'i', NULL}, {"maxFailedIndexes", 'i', NULL},
	{"selector", 'o', NULL}, {"manualSelector", 'b', NULL}, {"template", 'o', template_fields},
	{"ttlSecondsAfterFinished", 'i', NULL}, {"completionMode", 's', NULL},
	{"suspend", 'b', NULL}, {"podReplacementPolicy", 's', NULL}, {"managedBy", 's', NULL},
	{NULL, 0, NULL},
};
static const struct fdef deployment_fields[] = {
	{"apiVersion", 's', NULL}, {"kind", 's', NULL}, {"metadata", 'o', meta_fields},
	{"spec", 'o', deployment_spec}, {"status", 'o', NULL}, {NULL, 0, NULL},
};
static const struct fdef replicaset_fields[] = {
	{"apiVersion", 's', NULL}, {"kind", 's', NULL}, {"metadata", 'o', meta_fields},
	{"spec", 'o', replicaset_spec}, {"status", 'o', NULL}, {NULL, 0, NULL},
};
static const struct fdef job_fields[] = {
	{"apiVersion", 's', NULL}, {"kind", 's', NULL}, {"metadata", 'o', meta_fields},
	{"spec", 'o', job_spec}, {"status", 'o', NULL}, {NULL, 0, NULL},
};
static const struct fdef limitrange_spec[] = {
	{"limits", 'a', NULL}, {NULL, 0, NULL},
};
static const struct fdef limitrange_fields[] = {
	{"apiVersion", 's', NULL}, {"kind", 's', NULL}, {"metadata", 'o', meta_fields},
	{"spec", 'o', limitrange_spec}, {NULL, 0, NULL},
};

static const struct fdef *schema_of(enum apiserver_resource r)
{
	switch (r) {
	case APISERVER_CONFIGMAPS: return cm_fields;
	case APISERVER_LEASES: return lease_fields;
	case APISERVER_EVENTS: return event_fields;
	case APISERVER_EVENTS_V1: return event_v1_fields;
	case APISERVER_PODS: return pod_fields;
	case APISERVER_DEPLOYMENTS: return deployment_fields;
	case APISERVER_REPLICASETS: return replicaset_fields;
	case APISERVER_JOBS: return job_fields;
	case APISERVER_LIMITRANGES: return limitrange_fields;
	default: return NULL;
	}
}

static const char *json_type(const cJSON *v)
{
	if (cJSON_IsString(v))
		return "string";
	if (cJSON_IsNumber(v))
		return "number";
	if (cJSON_IsBool(v))
		return "bool";
	if (cJSON_IsArray(v))
		return "array";
	return "object";
}

static bool type_ok(const cJSON *v, char type)
{
	const cJSON *e;

	if (cJSON_IsNull(v))
		return true;
	switch (type) {
	case 's': return cJSON_IsString(v);
	case 'i': return cJSON_IsNumber(v) && v->valuedouble == (double)(int64_t)v->valuedouble;
	case 'b': return cJSON_IsBool(v);
	case 'a':
	case 'A': return cJSON_IsArray(v);
	case 'o': return cJSON_IsObject(v);
	case 'm':
		if (!cJSON_IsObject(v))
			return false;
		cJSON_ArrayForEach(e, v)
			if (!cJSON_IsString(e))
				return false;
		return true;
	}
	return false;
}

/*
 * Checks 'o' against 'fields': a wrong type fills 'bad' (-1); unknown
 * fields are named in 'unknown' (", "-separated, dotted from the top) and
 * removed, as decoding into the real server's types drops them.
 */
static int check_fields(cJSON *o, const struct fdef *fields, const char *at, struct buf *unknown,
			char *bad, size_t badlen)
{
	cJSON *e = o->child, *next;
	char path[300];

	for (; e; e = next) {
		const struct fdef *f;

		next = e->next;
		for (f = fields; f->name && strcmp(f->name, e->string) != 0; f++)
			;
		snprintf(path, sizeof(path), "%s%s%s", at, at[0] ? "." : "", e->string);
		if (!f->name) {
			buf_printf(unknown, "%sunknown field \"%s\"", unknown->len ? ", " : "", path);
			cJSON_DeleteItemFromObjectCaseSensitive(o, e->string);
			continue;
		}
		if (!type_ok(e, f->type)) {
			snprintf(bad, badlen, "json: cannot unmarshal %s into Go struct field %s of type %s",
				 json_type(e), path,
				 f->type == 's' ? "string" : f->type == 'i' ? "int64" :
				 f->type == 'b' ? "bool" : f->type == 'm' ? "map[string]string" :
				 f->type == 'a' || f->type == 'A' ? "[]" : "struct");
			return -1;
		}
		if (f->type == 'o' && f->sub && cJSON_IsObject(e) &&
		    check_fields(e, f->sub, path, unknown, bad, badlen) < 0)
			return -1;
		if (f->type == 'A' && f->sub && cJSON_IsArray(e)) {
			cJSON *item;
			int i = 0;

			cJSON_ArrayForEach(item, e) {
				char ipath[320];

				snprintf(ipath, sizeof(ipath), "%s[%d]", path, i++);
				if (!cJSON_IsObject(item)) {
					snprintf(bad, badlen, "json: cannot unmarshal %s into Go struct field %s of type struct",
						 json_type(item), ipath);
					return -1;
				}
				if (check_fields(item, f->sub, ipath, unknown, bad, badlen) < 0)
					return -1;
			}
		}
	}
	return 0;
}

/*
 * A Warning header (RFC 7234 warn-code 299, agent "-") with 'text' as its
 * quoted warn-text: '"' and '\\' escaped, as clients parse it; cut short
 * (never inside an escape) to fit 'len'.
 */
static void warning_header(char *out, size_t len, const char *text)
{
	size_t n = 0;
	const char *p;

	if (len < 16) {
		if (len)
			out[0] = '\0';
		return;
	}
	n = (size_t)snprintf(out, len, "299 - \"");
	for (p = text; *p && n + 4 < len; p++) {
		if (*p == '"' || *p == '\\')
			out[n++] = '\\';
		out[n++] = *p;
	}
	out[n++] = '"';
	out[n] = '\0';
}

/*
 * Validates a client's object of kind 'r' as the real server decodes it:
 * a wrong type is 400; unknown fields are dropped, and by fieldValidation
 * (default Warn) are a Warning header, a 400 (Strict), or nothing
 * (Ignore). 0, or -1 answered.
 */
int apiserver_validate_object(const struct resreq *rq, cJSON *o, struct reply *out)
{
	const struct fdef *fields = schema_of(rq->res);
	const char *fv = apiserver_query(rq, "fieldValidation");
	struct buf unknown = BUF_INIT;
	char bad[400] = "", msg[900];

	if (!fields)
		return 0;
	if (fv && fv[0] && strcmp(fv, "Strict") != 0 && strcmp(fv, "Warn") != 0 &&
	    strcmp(fv, "Ignore") != 0) {
		options_invalid(out, strcmp(rq->method, "POST") == 0 ? "CreateOptions" :
				strcmp(rq->method, "PUT") == 0 ? "UpdateOptions" : "PatchOptions",
				"fieldValidation", "\"", fv, "\"",
				"\"\", \"Ignore\", \"Strict\", \"Warn\"");
		return -1;
	}
	if (check_fields(o, fields, "", &unknown, bad, sizeof(bad)) < 0) {
		snprintf(msg, sizeof(msg), "%s in version \"%s\" cannot be handled as a %s: %s",
			 apiserver_resources[rq->res].kind, apiserver_api_version(rq->res),
			 apiserver_resources[rq->res].kind, bad);
		buf_free(&unknown);
		apiserver_reply_status(out, 400, "BadRequest", msg, NULL, NULL);
		return -1;
	}
	if (unknown.len && fv && strcmp(fv, "Strict") == 0) {
		/* the real server's message for a strict decoding error */
		snprintf(msg, sizeof(msg), "strict decoding error: %.800s", unknown.data);
		buf_free(&unknown);
		apiserver_reply_status(out, 400, "BadRequest", msg, NULL, NULL);
		return -1;
	}
	if (unknown.len && (!fv || strcmp(fv, "Warn") == 0))
		warning_header(out->warning, sizeof(out->warning), unknown.data);
	buf_free(&unknown);
	return 0;
}
