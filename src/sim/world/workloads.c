/*
 * sim/workloads: pods written by clients (validation, LimitRanger
 * admission) and the ReplicaSet, Deployment and Job controllers with the
 * garbage collector, over the API server's store and the simulated
 * cluster. Never holds the store's lock while calling into the cluster.
 */
#include "sim/world/workloads.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "config.h"
#include "k8sname.h"
#include "model.h"
#include "quantity.h"
#include "sim/clouds/cloud.h"

#define WL_DEFAULT_GRACE_S 30

/* A pod spec registered with the cluster, which frees it (sim_cluster_adopt). */
struct wspec {
	struct sim_pod_spec spec;
	struct snapshot *snap;   /* owns the decoded pod the spec points into */
	char *name, *containers, *owner_kind, *owner_name, *owner_uid, *ns, *restart_policy;
};

/* What a controller remembers of one ReplicaSet or Job. */
struct ctl {
	enum apiserver_resource kind;
	char *uid, *ns, *name;
	uint64_t hash;           /* of the template its newest spec came from */
	int spec;                /* that spec, -1 none yet */
	int *specs;              /* every spec whose pods are its */
	size_t n_specs;
	char **watch;            /* Job: pods not finished yet, by name */
	size_t n_watch;
	int64_t succeeded, failed;
	bool seen;
};

struct sim_workloads {
	struct sim_cluster *c;
	struct apiserver_store *st;
	uint64_t rng;
	uint64_t seq;
	struct ctl **ctls;
	size_t n_ctls;
};

/* ---- small helpers ---- */

static const cJSON *at(const cJSON *o, const char *a, const char *b, const char *c)
{
	o = cJSON_GetObjectItemCaseSensitive(o, a);
	if (b)
		o = cJSON_GetObjectItemCaseSensitive(o, b);
	if (b && c)
		o = cJSON_GetObjectItemCaseSensitive(o, c);
	return o;
}

static const char *str_at(const cJSON *o, const char *a, const char *b, const char *c)
{
	const char *v = cJSON_GetStringValue(at(o, a, b, c));

	return v ? v : "";
}

static int64_t int_at(const cJSON *o, const char *a, const char *b, int64_t dflt)
{
	const cJSON *v = at(o, a, b, NULL);

	return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : dflt;
}

static cJSON *obj_child(cJSON *o, const char *key)
{
	cJSON *c = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsObject(c)) {
		cJSON_DeleteItemFromObjectCaseSensitive(o, key);
		c = cJSON_AddObjectToObject(o, key);
	}
	return c;
}

static void set_num(cJSON *o, const char *key, double v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(o, key);
	cJSON_AddNumberToObject(o, key, v);
}

static void set_str(cJSON *o, const char *key, const char *v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(o, key);
	cJSON_AddStringToObject(o, key, v);
}

static uint64_t rnd(struct sim_workloads *w)
{
	w->rng = w->rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return w->rng >> 33;
}

static int by_key(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;

	return strcmp(x->string ? x->string : "", y->string ? y->string : "");
}

static uint64_t mix(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (h ^ 0xff) * 1099511628211ULL;
}

/* A hash of a JSON value that does not depend on the order of keys. */
static uint64_t hash_json(const cJSON *v, uint64_t h)
{
	const cJSON *e;
	char num[40];

	if (cJSON_IsObject(v)) {
		const cJSON **kids;
		size_t n = 0, i;

		cJSON_ArrayForEach(e, v)
			n++;
		kids = calloc(n ? n : 1, sizeof(*kids));
		if (!kids)
			return h;
		n = 0;
		cJSON_ArrayForEach(e, v)
			kids[n++] = e;
		qsort(kids, n, sizeof(*kids), by_key);
		h = mix(h, "{");
		for (i = 0; i < n; i++)
			h = hash_json(kids[i], mix(h, kids[i]->string));
		free(kids);
		return mix(h, "}");
	}
	if (cJSON_IsArray(v)) {
		h = mix(h, "[");
		cJSON_ArrayForEach(e, v)
			h = hash_json(e, h);
		return mix(h, "]");
	}
	if (cJSON_IsString(v))
		return mix(mix(h, "s"), v->valuestring);
	if (cJSON_IsNumber(v)) {
		snprintf(num, sizeof(num), "%.17g", v->valuedouble);
		return mix(h, num);
	}
	return mix(h, cJSON_IsTrue(v) ? "t" : cJSON_IsFalse(v) ? "f" : "n");
}

/* "25%" of 'total' (rounded up or down) or a plain number. */
static int64_t int_or_percent(const cJSON *v, int64_t total, bool round_up, int64_t dflt_pct)
{
	double pct = (double)dflt_pct;

	if (cJSON_IsNumber(v))
		return (int64_t)v->valuedouble;
	if (cJSON_IsString(v)) {
		char *end;
		double p = strtod(v->valuestring, &end);

		if (end != v->valuestring && *end == '%')
			pct = p;
		else if (end != v->valuestring && *end == '\0')
			return (int64_t)p;
	}
	return round_up ? (int64_t)((double)total * pct / 100.0 + 0.999999) :
			  (int64_t)((double)total * pct / 100.0);
}

static void ts_now(int64_t now, char *out, size_t len)
{
	model_format_time(now, out, len);
}

/* ---- pods: validation and LimitRanger admission ---- */

static int invalid(struct errbuf *err, const char *kind, const char *name, const char *what)
{
	errbuf_set(err, "%s \"%.200s\" is invalid: %s", kind, name, what);
	return 422;
}

/* The pod-spec rules a real server checks that matter here. 0 or 422. */
static int validate_pod_spec(const cJSON *spec, const char *kind, const char *name,
			     const char *path, struct errbuf *err)
{
	const cJSON *ctrs = cJSON_GetObjectItemCaseSensitive(spec, "containers"), *c;
	const char *rp = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(spec, "restartPolicy"));
	char msg[600];
	int i = 0;

	if (!cJSON_IsObject(spec)) {
		snprintf(msg, sizeof(msg), "%s: Required value", path);
		return invalid(err, kind, name, msg);
	}
	if (!cJSON_IsArray(ctrs) || cJSON_GetArraySize(ctrs) == 0) {
		snprintf(msg, sizeof(msg), "%s.containers: Required value", path);
		return invalid(err, kind, name, msg);
	}
	cJSON_ArrayForEach(c, ctrs) {
		const char *cn = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "name"));
		const char *img = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "image"));
		const cJSON *d;
		int k = 0;

		if (!cn || !cn[0]) {
			snprintf(msg, sizeof(msg), "%s.containers[%d].name: Required value", path, i);
			return invalid(err, kind, name, msg);
		}
		if (!k8sname_valid_dns_label(cn)) {
			snprintf(msg, sizeof(msg), "%s.containers[%d].name: Invalid value: \"%.100s\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
				 path, i, cn);
			return invalid(err, kind, name, msg);
		}
		if (!img || !img[0]) {
			snprintf(msg, sizeof(msg), "%s.containers[%d].image: Required value", path, i);
			return invalid(err, kind, name, msg);
		}
		cJSON_ArrayForEach(d, ctrs) {
			const char *dn = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "name"));

			if (k++ < i && dn && strcmp(dn, cn) == 0) {
				snprintf(msg, sizeof(msg), "%s.containers[%d].name: Duplicate value: \"%.100s\"",
					 path, i, cn);
				return invalid(err, kind, name, msg);
			}
		}
		i++;
	}
	if (rp && strcmp(rp, "Always") != 0 && strcmp(rp, "OnFailure") != 0 &&
	    strcmp(rp, "Never") != 0) {
		snprintf(msg, sizeof(msg), "%s.restartPolicy: Unsupported value: \"%.50s\": supported values: \"Always\", \"OnFailure\", \"Never\"",
			 path, rp);
		return invalid(err, kind, name, msg);
	}
	return 0;
}

/* Sets resources.<which>[key] = value in container 'c' unless set. true when it did. */
static bool default_resource(cJSON *c, const char *which, const char *key, const char *value)
{
	cJSON *res = obj_child(c, "resources"), *m = res ? obj_child(res, which) : NULL;

	if (!m || cJSON_GetObjectItemCaseSensitive(m, key))
		return false;
	cJSON_AddStringToObject(m, key, value);
	return true;
}

/*
 * LimitRanger: the Container defaults of the namespace's LimitRanges go
 * into each container that lacks them (limits from "default", requests
 * from "defaultRequest", else "default", else the container's limit).
 * Store lock held. The annotation a real server leaves says what it set.
 */
static void limit_ranger(struct sim_workloads *w, const char *ns, cJSON *meta, cJSON *spec)
{
	struct apiserver_ver *const *items;
	size_t n, i;
	char note[400] = "";
	size_t nl = 0;
	static const char *const lists[] = {"initContainers", "containers"};

	items = apiserver_store_list(w->st, APISERVER_LIMITRANGES, &n);
	for (i = 0; i < n; i++) {
		cJSON *lr, *item;

		if (strcmp(items[i]->ns, ns) != 0)
			continue;
		lr = cJSON_ParseWithLength(items[i]->json, items[i]->len);
		cJSON_ArrayForEach(item, at(lr, "spec", "limits", NULL)) {
			const cJSON *dflt = cJSON_GetObjectItemCaseSensitive(item, "default");
			const cJSON *dreq = cJSON_GetObjectItemCaseSensitive(item, "defaultRequest");
			size_t l;

			if (strcmp(str_at(item, "type", NULL, NULL), "Container") != 0)
				continue;
			for (l = 0; l < 2; l++) {
				cJSON *c;

				cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(spec, lists[l])) {
					const cJSON *q;
					bool any = false;

					cJSON_ArrayForEach(q, dflt)
						if (cJSON_IsString(q))
							any |= default_resource(c, "limits", q->string,
										q->valuestring);
					cJSON_ArrayForEach(q, dreq)
						if (cJSON_IsString(q))
							any |= default_resource(c, "requests", q->string,
										q->valuestring);
					cJSON_ArrayForEach(q, dflt)
						if (cJSON_IsString(q) && !cJSON_GetObjectItemCaseSensitive(dreq, q->string))
							any |= default_resource(c, "requests", q->string,
										q->valuestring);
					if (any && nl < sizeof(note))
						nl += (size_t)snprintf(note + nl, sizeof(note) - nl,
								       "%sdefaults for container %s",
								       nl ? "; " : "LimitRanger plugin set: ",
								       str_at(c, "name", NULL, NULL));
				}
			}
		}
		cJSON_Delete(lr);
	}
	/* a limit without a request: the request is the limit (the API's defaulting) */
	for (i = 0; i < 2; i++) {
		cJSON *c;

		cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(spec, lists[i])) {
			const cJSON *q;

			cJSON_ArrayForEach(q, at(c, "resources", "limits", NULL))
				if (cJSON_IsString(q))
					default_resource(c, "requests", q->string, q->valuestring);
		}
	}
	if (note[0] && meta)
		set_str(obj_child(meta, "annotations"), "kubernetes.io/limit-ranger", note);
}

static void wspec_free(void *p)
{
	struct wspec *s = p;

	snapshot_free(s->snap);
	free(s->name);
	free(s->ns);
	free(s->containers);
	free(s->owner_kind);
	free(s->owner_name);
	free(s->owner_uid);
	free(s->restart_policy);
	free(s);
}

static char *dup_or_null(const char *s)
{
	return s && s[0] ? strdup(s) : NULL;
}

/*
 * Registers a spec for pods of 'meta' (labels, annotations) and 'podspec'
 * in namespace 'ns', owned by owner (kind, name, uid; NULL: bare). Returns
 * its index, or -1 with a message.
 */
static int register_spec(struct sim_workloads *w, const char *ns, const char *base,
			 const cJSON *meta, const cJSON *podspec, const char *okind,
			 const char *oname, const char *ouid, bool job, struct errbuf *err)
{
	struct wspec *ws = calloc(1, sizeof(*ws));
	cJSON *pod = cJSON_CreateObject(), *m;
	const struct pod *p;
	const char *dur;
	char nm[320];
	int idx = -1;

	if (!ws || !pod)
		goto oom;
	m = cJSON_AddObjectToObject(pod, "metadata");
	cJSON_AddStringToObject(pod, "apiVersion", "v1");
	cJSON_AddStringToObject(pod, "kind", "Pod");
	if (!m)
		goto oom;
	cJSON_AddStringToObject(m, "name", base);
	cJSON_AddStringToObject(m, "namespace", ns);
	if (cJSON_GetObjectItemCaseSensitive(meta, "labels"))
		cJSON_AddItemToObject(m, "labels",
				      cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(meta, "labels"), 1));
	if (cJSON_GetObjectItemCaseSensitive(meta, "annotations"))
		cJSON_AddItemToObject(m, "annotations",
				      cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(meta, "annotations"), 1));
	cJSON_AddItemToObject(pod, "spec", cJSON_Duplicate(podspec, 1));
	ws->snap = snapshot_new();
	if (!ws->snap)
		goto oom;
	if (snapshot_add_object(ws->snap, pod, "Pod", err) < 0)
		goto fail;
	if (ws->snap->n_pods != 1) {
		errbuf_set(err, "the pod could not be decoded");
		goto fail;
	}
	p = &ws->snap->pods[0];
	snprintf(nm, sizeof(nm), "%s#%llu", base, (unsigned long long)++w->seq);
	ws->name = strdup(nm);
	ws->ns = strdup(ns);
	ws->containers = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(podspec, "containers"));
	ws->owner_kind = dup_or_null(okind);
	ws->owner_name = dup_or_null(oname);
	ws->owner_uid = dup_or_null(ouid);
	if (!ws->name || !ws->ns || !ws->containers)
		goto oom;
	ws->spec.name = ws->name;
	ws->spec.ns = ws->ns;
	ws->spec.labels = p->labels;
	ws->spec.annotations = p->annotations;
	ws->spec.node_selector = p->node_selector;
	ws->spec.tolerations = p->tolerations;
	ws->spec.n_tolerations = p->n_tolerations;
	ws->spec.affinity = p->affinity;
	/* the scheduler holds the pod to its relations as the kube-scheduler
	 * would (its claims are not modelled: the world has no volumes of
	 * clients) */
	ws->spec.affinity_terms = p->affinity_terms;
	ws->spec.n_affinity_terms = p->n_affinity_terms;
	ws->spec.anti_terms = p->anti_terms;
	ws->spec.n_anti_terms = p->n_anti_terms;
	ws->spec.spread = p->spread;
	ws->spec.n_spread = p->n_spread;
	ws->spec.host_ports = p->host_ports;
	ws->spec.n_host_ports = p->n_host_ports;
	ws->spec.requests = p->requests;
	ws->spec.priority = p->priority;
	ws->spec.grace_ns = int_at(podspec, "terminationGracePeriodSeconds", NULL, WL_DEFAULT_GRACE_S) *
			    1000000000LL;
	ws->spec.duration_ns = job ? SIM_WORKLOADS_JOB_DURATION_NS : -1;
	dur = cJSON_GetStringValue(at(meta, "annotations", SIM_WORKLOADS_DURATION_ANNOTATION, NULL));
	if (dur) {
		int64_t ms;

		if (config_parse_duration(dur, &ms) < 0 || ms <= 0) {
			errbuf_set(err, "metadata.annotations[%s]: Invalid value: \"%.50s\": a duration such as 30s",
				   SIM_WORKLOADS_DURATION_ANNOTATION, dur);
			goto fail;
		}
		ws->spec.duration_ns = ms * 1000000LL;
	}
	ws->spec.controller = SIM_CTRL_NONE;
	ws->spec.local_storage = p->local_volume && p->local_volume[0];
	ws->spec.safe_to_evict_false = (p->flags & POD_SAFE_TO_EVICT_FALSE) != 0;
	ws->spec.owner_kind = ws->owner_kind;
	ws->spec.owner_name = ws->owner_name;
	ws->spec.owner_uid = ws->owner_uid;
	ws->spec.containers_json = ws->containers;
	{
		/* validated already: Always, OnFailure or Never */
		const char *rp = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(podspec,
											 "restartPolicy"));

		if (rp && !(ws->restart_policy = strdup(rp)))
			goto oom;
		ws->spec.restart_policy = ws->restart_policy;
	}
	idx = sim_cluster_add_spec(w->c, &ws->spec, err);
	if (idx < 0)
		goto fail;
	if (sim_cluster_adopt(w->c, ws, wspec_free) < 0) {
		/* the cluster points at it now: keep it rather than free it */
		errbuf_set(err, "out of memory");
		ws = NULL;
		goto fail;
	}
	cJSON_Delete(pod);
	return idx;
oom:
	errbuf_set(err, "out of memory");
fail:
	if (ws && idx < 0)
		wspec_free(ws);
	cJSON_Delete(pod);
	return -1;
}

int sim_workloads_create_pod(struct sim_workloads *w, cJSON *pod, bool dry, struct errbuf *err)
{
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(pod, "metadata");
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec");
	const char *ns = str_at(meta, "namespace", NULL, NULL), *name = str_at(meta, "name", NULL, NULL);
	const char *node = str_at(spec, "nodeName", NULL, NULL);
	const char *okind = NULL, *oname = NULL, *ouid = NULL;
	const cJSON *ref;
	struct kube_status ks = {KUBE_OK, "", 0};
	int rc, idx;

	rc = validate_pod_spec(spec, "Pod", name, "spec", err);
	if (rc)
		return rc;
	apiserver_store_lock(w->st);
	if (!apiserver_store_get(w->st, APISERVER_NAMESPACES, NULL, ns)) {
		apiserver_store_unlock(w->st);
		errbuf_set(err, "namespaces \"%.200s\" not found", ns);
		return 404;
	}
	limit_ranger(w, ns, meta, spec);
	apiserver_store_unlock(w->st);
	cJSON_ArrayForEach(ref, cJSON_GetObjectItemCaseSensitive(meta, "ownerReferences")) {
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ref, "controller"))) {
			okind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ref, "kind"));
			oname = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ref, "name"));
			ouid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ref, "uid"));
		}
	}
	sim_cloud_lock(sim_cluster_cloud(w->c));
	if (sim_cluster_pod_spec(w->c, ns, name) >= 0) {
		sim_cloud_unlock(sim_cluster_cloud(w->c));
		errbuf_set(err, "pods \"%.200s\" already exists", name);
		return 409;
	}
	if (dry) {
		sim_cloud_unlock(sim_cluster_cloud(w->c));
		return 0;
	}
	idx = register_spec(w, ns, name, meta, spec, okind, oname, ouid, false, err);
	rc = idx < 0 ? 422 : 0;
	if (idx >= 0 && sim_cluster_create_named_pod(w->c, idx, name, 0, err) < 0)
		rc = 500;
	if (rc == 0 && node[0] && sim_cluster_bind_pod(w->c, ns, name, node, &ks) < 0) {
		errbuf_set(err, "%s", ks.message);
		rc = 0; /* created, left pending: the node it names is not there */
	}
	sim_cloud_unlock(sim_cluster_cloud(w->c));
	if (rc == 422 && !strstr(err->msg, "is invalid")) {
		char m[ERRBUF_MAX];

		snprintf(m, sizeof(m), "%s", err->msg);
		invalid(err, "Pod", name, m);
	}
	return rc;
}

/* ---- admission of workload objects ---- */

static const char *kind_of(enum apiserver_resource r)
{
	return apiserver_resources[r].kind;
}

/* Every matchLabels of 'sel' is among 'labels'. */
static bool selector_matches(const cJSON *sel, const cJSON *labels)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(sel, "matchLabels")) {
		const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(labels, e->string));

		if (!cJSON_IsString(e) || !v || strcmp(v, e->valuestring) != 0)
			return false;
	}
	return true;
}

static bool selector_empty(const cJSON *sel)
{
	return cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(sel, "matchLabels")) == 0 &&
	       cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(sel, "matchExpressions")) == 0;
}

/*
 * What a workload's spec asks that the controllers here do not do, as the
 * "FIELD: Unsupported value: ..." of a 422, or NULL. Such a spec is
 * refused rather than taken and silently run otherwise: a paused rollout
 * that rolls on, a suspended Job that runs.
 */
static const char *not_simulated(enum apiserver_resource r, const cJSON *spec)
{
	static const char *const job_fields[][2] = {
		{"activeDeadlineSeconds", "spec.activeDeadlineSeconds: Unsupported value: the simulated Job controller sets no deadline"},
		{"ttlSecondsAfterFinished", "spec.ttlSecondsAfterFinished: Unsupported value: the simulated Job controller keeps finished Jobs"},
		{"podFailurePolicy", "spec.podFailurePolicy: Unsupported value: the simulated Job controller counts every failure against backoffLimit"},
		{"successPolicy", "spec.successPolicy: Unsupported value: the simulated Job controller needs every completion"},
		{"backoffLimitPerIndex", "spec.backoffLimitPerIndex: Unsupported value: the simulated Job controller runs NonIndexed Jobs only"},
		{"maxFailedIndexes", "spec.maxFailedIndexes: Unsupported value: the simulated Job controller runs NonIndexed Jobs only"},
	};
	const cJSON *v;
	size_t i;

	if (r == APISERVER_DEPLOYMENTS && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(spec, "paused")))
		return "spec.paused: Unsupported value: true: the simulated server does not pause rollouts";
	if (r == APISERVER_DEPLOYMENTS || r == APISERVER_REPLICASETS) {
		v = cJSON_GetObjectItemCaseSensitive(spec, "minReadySeconds");
		if (cJSON_IsNumber(v) && v->valuedouble != 0)
			return "spec.minReadySeconds: Unsupported value: the simulated server counts a pod available once it is Ready (0 only)";
	}
	if (r != APISERVER_JOBS)
		return NULL;
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(spec, "suspend")))
		return "spec.suspend: Unsupported value: true: the simulated Job controller does not suspend Jobs";
	v = cJSON_GetObjectItemCaseSensitive(spec, "completionMode");
	if (cJSON_IsString(v) && strcmp(v->valuestring, "NonIndexed") != 0)
		return "spec.completionMode: Unsupported value: the simulated Job controller runs NonIndexed Jobs only";
	for (i = 0; i < sizeof(job_fields) / sizeof(job_fields[0]); i++) {
		v = cJSON_GetObjectItemCaseSensitive(spec, job_fields[i][0]);
		if (v && !cJSON_IsNull(v))
			return job_fields[i][1];
	}
	return NULL;
}

int sim_workloads_admit(enum apiserver_resource r, cJSON *o, const cJSON *cur, bool status_only,
			struct errbuf *err)
{
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(o, "metadata");
	cJSON *spec, *tmpl, *tmeta, *labels, *sel;
	const char *name = str_at(meta, "name", NULL, NULL), *kind = kind_of(r), *what;
	int64_t gen = cur ? int_at(cur, "metadata", "generation", 1) : 1;
	int rc;

	if (r != APISERVER_DEPLOYMENTS && r != APISERVER_REPLICASETS && r != APISERVER_JOBS)
		return 0;
	if (status_only) {
		/* /status: only the status is the client's */
		cJSON *st = cJSON_DetachItemFromObjectCaseSensitive(o, "status");
		cJSON *c = cJSON_Duplicate(cur, 1), *e;

		if (!c) {
			cJSON_Delete(st);
			return errbuf_set(err, "out of memory"), 500;
		}
		while ((e = o->child)) {
			cJSON_DetachItemViaPointer(o, e);
			cJSON_Delete(e);
		}
		while ((e = c->child)) {
			cJSON_DetachItemViaPointer(c, e);
			if (strcmp(e->string, "status") == 0)
				cJSON_Delete(e);
			else
				cJSON_AddItemToObject(o, e->string, e);
		}
		cJSON_Delete(c);
		cJSON_AddItemToObject(o, "status", st ? st : cJSON_CreateObject());
		return 0;
	}
	spec = obj_child(o, "spec");
	if (!spec || !meta)
		return errbuf_set(err, "out of memory"), 500;
	tmpl = obj_child(spec, "template");
	tmeta = tmpl ? obj_child(tmpl, "metadata") : NULL;
	if (!tmeta)
		return errbuf_set(err, "out of memory"), 500;
	labels = cJSON_GetObjectItemCaseSensitive(tmeta, "labels");
	sel = cJSON_GetObjectItemCaseSensitive(spec, "selector");
	if (r == APISERVER_JOBS) {
		const char *rp = str_at(tmpl, "spec", "restartPolicy", NULL);

		if (!cur) {
			cJSON *l = obj_child(tmeta, "labels");

			set_str(l, "batch.kubernetes.io/job-name", name);
			set_str(l, "job-name", name);
			if (!cJSON_IsObject(sel)) {
				cJSON *ml;

				sel = obj_child(spec, "selector");
				ml = sel ? obj_child(sel, "matchLabels") : NULL;
				if (ml)
					set_str(ml, "batch.kubernetes.io/job-name", name);
			}
			labels = l;
		}
		if (strcmp(rp, "Never") != 0 && strcmp(rp, "OnFailure") != 0)
			return invalid(err, kind, name,
				       "spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\"");
		if (!cJSON_GetObjectItemCaseSensitive(spec, "parallelism"))
			cJSON_AddNumberToObject(spec, "parallelism", 1);
		if (!cJSON_GetObjectItemCaseSensitive(spec, "completions"))
			cJSON_AddNumberToObject(spec, "completions", 1);
		if (!cJSON_GetObjectItemCaseSensitive(spec, "backoffLimit"))
			cJSON_AddNumberToObject(spec, "backoffLimit", 6);
		if (!cJSON_GetObjectItemCaseSensitive(spec, "completionMode"))
			cJSON_AddStringToObject(spec, "completionMode", "NonIndexed");
		if (!cJSON_GetObjectItemCaseSensitive(spec, "suspend"))
			cJSON_AddFalseToObject(spec, "suspend");
	} else {
		if (!cJSON_IsObject(sel) || selector_empty(sel))
			return invalid(err, kind, name, "spec.selector: Required value");
		if (!selector_matches(sel, labels))
			return invalid(err, kind, name,
				       "spec.template.metadata.labels: Invalid value: `selector` does not match template `labels`");
		if (!cJSON_GetObjectItemCaseSensitive(spec, "replicas"))
			cJSON_AddNumberToObject(spec, "replicas", 1);
		if (int_at(spec, "replicas", NULL, 0) < 0)
			return invalid(err, kind, name,
				       "spec.replicas: Invalid value: must be greater than or equal to 0");
	}
	if (r == APISERVER_DEPLOYMENTS) {
		cJSON *strat = obj_child(spec, "strategy");
		const char *t = str_at(strat, "type", NULL, NULL);

		if (!t[0]) {
			set_str(strat, "type", "RollingUpdate");
			t = "RollingUpdate";
		}
		if (strcmp(t, "RollingUpdate") == 0) {
			cJSON *ru = obj_child(strat, "rollingUpdate");

			if (!cJSON_GetObjectItemCaseSensitive(ru, "maxSurge"))
				cJSON_AddStringToObject(ru, "maxSurge", "25%");
			if (!cJSON_GetObjectItemCaseSensitive(ru, "maxUnavailable"))
				cJSON_AddStringToObject(ru, "maxUnavailable", "25%");
		} else if (strcmp(t, "Recreate") != 0) {
			return invalid(err, kind, name,
				       "spec.strategy.type: Unsupported value: supported values: \"Recreate\", \"RollingUpdate\"");
		}
		if (!cJSON_GetObjectItemCaseSensitive(spec, "revisionHistoryLimit"))
			cJSON_AddNumberToObject(spec, "revisionHistoryLimit", 10);
		if (!cJSON_GetObjectItemCaseSensitive(spec, "progressDeadlineSeconds"))
			cJSON_AddNumberToObject(spec, "progressDeadlineSeconds", 600);
	}
	if ((what = not_simulated(r, spec)))
		return invalid(err, kind, name, what);
	rc = validate_pod_spec(cJSON_GetObjectItemCaseSensitive(tmpl, "spec"), kind, name,
			       "spec.template.spec", err);
	if (rc)
		return rc;
	{
		cJSON *ps = cJSON_GetObjectItemCaseSensitive(tmpl, "spec");

		if (!cJSON_GetObjectItemCaseSensitive(ps, "restartPolicy"))
			cJSON_AddStringToObject(ps, "restartPolicy", "Always");
		if (!cJSON_GetObjectItemCaseSensitive(ps, "terminationGracePeriodSeconds"))
			cJSON_AddNumberToObject(ps, "terminationGracePeriodSeconds", WL_DEFAULT_GRACE_S);
		if (!cJSON_GetObjectItemCaseSensitive(ps, "dnsPolicy"))
			cJSON_AddStringToObject(ps, "dnsPolicy", "ClusterFirst");
		if (!cJSON_GetObjectItemCaseSensitive(ps, "schedulerName"))
			cJSON_AddStringToObject(ps, "schedulerName", "default-scheduler");
	}
	/* the spec is the client's, the status the controller's */
	if (cur) {
		const cJSON *cs = cJSON_GetObjectItemCaseSensitive(cur, "spec");

		if (!cJSON_Compare(cs, spec, true))
			gen++;
		cJSON_DeleteItemFromObjectCaseSensitive(o, "status");
		cJSON_AddItemToObject(o, "status",
				      cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(cur, "status"), 1));
		if (r == APISERVER_JOBS && !cJSON_Compare(at(cur, "spec", "template", NULL),
							  cJSON_GetObjectItemCaseSensitive(spec, "template"), true))
			return invalid(err, kind, name, "spec.template: Invalid value: field is immutable");
	} else {
		cJSON_DeleteItemFromObjectCaseSensitive(o, "status");
		cJSON_AddObjectToObject(o, "status");
	}
	set_num(meta, "generation", (double)gen);
	return 0;
}

/* ---- controllers' memory ---- */

static struct ctl *ctl_find(struct sim_workloads *w, const char *uid)
{
	size_t i;

	for (i = 0; i < w->n_ctls; i++)
		if (strcmp(w->ctls[i]->uid, uid) == 0)
			return w->ctls[i];
	return NULL;
}

static void ctl_free(struct ctl *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->n_watch; i++)
		free(c->watch[i]);
	free(c->watch);
	free(c->specs);
	free(c->uid);
	free(c->ns);
	free(c->name);
	free(c);
}

static struct ctl *ctl_get(struct sim_workloads *w, enum apiserver_resource kind, const char *uid,
			   const char *ns, const char *name)
{
	struct ctl *c = ctl_find(w, uid), **na;

	if (c)
		return c;
	c = calloc(1, sizeof(*c));
	na = c ? realloc(w->ctls, (w->n_ctls + 1) * sizeof(*na)) : NULL;
	if (!na) {
		free(c);
		return NULL;
	}
	w->ctls = na;
	c->kind = kind;
	c->spec = -1;
	c->uid = strdup(uid);
	c->ns = strdup(ns);
	c->name = strdup(name);
	if (!c->uid || !c->ns || !c->name) {
		ctl_free(c);
		return NULL;
	}
	w->ctls[w->n_ctls++] = c;
	return c;
}

static void ctl_drop(struct sim_workloads *w, struct ctl *c)
{
	size_t i;

	for (i = 0; i < w->n_ctls; i++) {
		if (w->ctls[i] == c) {
			w->ctls[i] = w->ctls[--w->n_ctls];
			break;
		}
	}
	ctl_free(c);
}

/* The pods of every spec of 'c' (world lock held): a new array, *n set. */
static struct sim_spec_pod *ctl_pods(struct sim_workloads *w, const struct ctl *c, size_t *n)
{
	struct sim_spec_pod *all = NULL;
	size_t i, k = 0;

	*n = 0;
	for (i = 0; i < c->n_specs; i++) {
		int m = sim_cluster_spec_pods(w->c, c->specs[i], NULL, 0);
		struct sim_spec_pod *na;

		if (m <= 0)
			continue;
		na = realloc(all, (k + (size_t)m) * sizeof(*na));
		if (!na)
			break;
		all = na;
		sim_cluster_spec_pods(w->c, c->specs[i], all + k, (size_t)m);
		k += (size_t)m;
	}
	*n = k;
	return all;
}

static bool pod_active(const struct sim_spec_pod *p)
{
	return !p->terminating && p->phase != POD_SUCCEEDED && p->phase != POD_FAILED;
}

static bool pod_ready(const struct sim_spec_pod *p)
{
	return pod_active(p) && p->bound && p->phase == POD_RUNNING;
}

/* Makes sure 'c' has a spec for the template 'tmpl' of owner object 'o'. 0 or -1. */
static int ctl_template(struct sim_workloads *w, struct ctl *c, const cJSON *tmpl)
{
	uint64_t h = hash_json(tmpl, 14695981039346656037ULL);
	struct errbuf err;
	cJSON *meta, *spec;
	int idx, *na;

	if (c->spec >= 0 && c->hash == h)
		return 0;
	meta = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(tmpl, "metadata"), 1);
	spec = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(tmpl, "spec"), 1);
	if (!meta)
		meta = cJSON_CreateObject();
	if (!meta || !spec) {
		cJSON_Delete(meta);
		cJSON_Delete(spec);
		return -1;
	}
	apiserver_store_lock(w->st);
	limit_ranger(w, c->ns, meta, spec);
	apiserver_store_unlock(w->st);
	idx = register_spec(w, c->ns, c->name, meta, spec, kind_of(c->kind), c->name, c->uid,
			    c->kind == APISERVER_JOBS, &err);
	cJSON_Delete(meta);
	cJSON_Delete(spec);
	if (idx < 0)
		return -1;
	na = realloc(c->specs, (c->n_specs + 1) * sizeof(*na));
	if (!na)
		return -1;
	c->specs = na;
	c->specs[c->n_specs++] = idx;
	c->spec = idx;
	c->hash = h;
	return 0;
}

/* A new pod of 'c': "<name>-<5 characters>". 0 or -1. */
static int ctl_new_pod(struct sim_workloads *w, struct ctl *c)
{
	static const char alnum[] = "bcdfghjklmnpqrstvwxz2456789";
	char nm[300];
	struct errbuf err;
	int tries, i;

	for (tries = 0; tries < 20; tries++) {
		size_t len = (size_t)snprintf(nm, sizeof(nm) - 8, "%.240s-", c->name);

		for (i = 0; i < 5; i++)
			nm[len++] = alnum[rnd(w) % (sizeof(alnum) - 1)];
		nm[len] = '\0';
		if (sim_cluster_pod_spec(w->c, c->ns, nm) >= 0)
			continue;
		if (sim_cluster_create_named_pod(w->c, c->spec, nm, 0, &err) < 0)
			return -1;
		if (c->kind == APISERVER_JOBS) {
			char **na = realloc(c->watch, (c->n_watch + 1) * sizeof(*na));

			if (na) {
				c->watch = na;
				c->watch[c->n_watch] = strdup(nm);
				if (c->watch[c->n_watch])
					c->n_watch++;
			}
		}
		return 0;
	}
	return -1;
}

/* Removes 'count' active pods of 'c': pending ones first, then the newest. */
static void ctl_remove_pods(struct sim_workloads *w, struct ctl *c, struct sim_spec_pod *pods,
			    size_t n, int64_t count)
{
	struct kube_status ks;
	int pass;
	size_t i;

	for (pass = 0; pass < 2 && count > 0; pass++) {
		for (i = n; i-- > 0 && count > 0;) {
			if (!pod_active(&pods[i]) || (pass == 0 && pods[i].bound))
				continue;
			if (pass == 1 && !pods[i].bound)
				continue;
			if (sim_cluster_delete_pod(w->c, c->ns, pods[i].name, -1, &ks) == 0)
				count--;
			pods[i].terminating = true;
		}
	}
}

/* Deletes every pod of 'c' (garbage collection). */
static void ctl_remove_all(struct sim_workloads *w, struct ctl *c)
{
	struct sim_spec_pod *pods;
	struct kube_status ks;
	size_t n, i;
	char **names;

	pods = ctl_pods(w, c, &n);
	names = calloc(n ? n : 1, sizeof(*names));
	for (i = 0; names && i < n; i++)
		names[i] = strdup(pods[i].name);
	free(pods);
	for (i = 0; names && i < n; i++) {
		if (names[i] && sim_cluster_pod_spec(w->c, c->ns, names[i]) >= 0) {
			/* finished pods go at once, running ones over their grace */
			sim_cluster_delete_pod(w->c, c->ns, names[i], -1, &ks);
		}
		free(names[i]);
	}
	free(names);
}

/* ---- reading and writing the store ---- */

/* Copies of every object of 'r' (store lock taken here). */
static cJSON **load_all(struct sim_workloads *w, enum apiserver_resource r, size_t *n_out)
{
	struct apiserver_ver *const *items;
	cJSON **out;
	size_t n, i, k = 0;
	char rvs[32];

	apiserver_store_lock(w->st);
	items = apiserver_store_list(w->st, r, &n);
	out = calloc(n ? n : 1, sizeof(*out));
	for (i = 0; out && i < n; i++) {
		cJSON *o = cJSON_ParseWithLength(items[i]->json, items[i]->len);

		if (!o)
			continue;
		snprintf(rvs, sizeof(rvs), "%llu", (unsigned long long)items[i]->rv);
		set_str(obj_child(o, "metadata"), "resourceVersion", rvs);
		out[k++] = o;
	}
	apiserver_store_unlock(w->st);
	*n_out = k;
	return out;
}

static void free_all(cJSON **objs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		cJSON_Delete(objs[i]);
	free(objs);
}

static const char *uid_of(const cJSON *o)
{
	return str_at(o, "metadata", "uid", NULL);
}

/* The uid of the controller owner of 'o' of kind 'kind', or NULL. */
static const char *owner_uid(const cJSON *o, const char *kind)
{
	const cJSON *ref;

	cJSON_ArrayForEach(ref, at(o, "metadata", "ownerReferences", NULL)) {
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ref, "controller")) &&
		    strcmp(str_at(ref, "kind", NULL, NULL), kind) == 0)
			return str_at(ref, "uid", NULL, NULL);
	}
	return NULL;
}

/*
 * Changes the stored object ns/name of 'r' (if it still has 'uid'): 'fn'
 * edits a copy, which is stored when it differs. Store lock taken here.
 */
static void edit(struct sim_workloads *w, enum apiserver_resource r, const char *ns,
		 const char *name, const char *uid, void (*fn)(cJSON *o, void *ctx), void *ctx,
		 int64_t now)
{
	const struct apiserver_ver *v;
	struct errbuf err;
	cJSON *o;

	apiserver_store_lock(w->st);
	v = apiserver_store_get(w->st, r, ns, name);
	if (v && strcmp(v->uid, uid) == 0 && (o = cJSON_ParseWithLength(v->json, v->len))) {
		fn(o, ctx);
		apiserver_store_put(w->st, r, o, now, NULL, &err);
	}
	apiserver_store_unlock(w->st);
}

static bool exists_uid(struct sim_workloads *w, enum apiserver_resource r, const char *ns,
		       const char *uid)
{
	struct apiserver_ver *const *items;
	size_t n, i;
	bool found = false;

	apiserver_store_lock(w->st);
	items = apiserver_store_list(w->st, r, &n);
	for (i = 0; i < n && !found; i++)
		found = strcmp(items[i]->ns, ns) == 0 && strcmp(items[i]->uid, uid) == 0;
	apiserver_store_unlock(w->st);
	return found;
}

/* ---- conditions ---- */

/* Sets condition 'type' in status.conditions, its times kept when its status stays. */
static void set_condition(cJSON *status, const char *type, bool ok, const char *reason,
			  const char *msg, int64_t now, bool with_update)
{
	cJSON *conds = cJSON_GetObjectItemCaseSensitive(status, "conditions"), *c, *nc;
	char ts[40];
	const char *since = NULL;

	ts_now(now, ts, sizeof(ts));
	if (!cJSON_IsArray(conds)) {
		cJSON_DeleteItemFromObjectCaseSensitive(status, "conditions");
		conds = cJSON_AddArrayToObject(status, "conditions");
	}
	nc = cJSON_CreateObject();
	if (!conds || !nc) {
		cJSON_Delete(nc);
		return;
	}
	cJSON_ArrayForEach(c, conds) {
		if (strcmp(str_at(c, "type", NULL, NULL), type) != 0)
			continue;
		if (strcmp(str_at(c, "status", NULL, NULL), ok ? "True" : "False") == 0 &&
		    strcmp(str_at(c, "reason", NULL, NULL), reason) == 0 &&
		    strcmp(str_at(c, "message", NULL, NULL), msg) == 0) {
			cJSON_Delete(nc);
			return; /* as it was */
		}
		if (strcmp(str_at(c, "status", NULL, NULL), ok ? "True" : "False") == 0)
			since = str_at(c, "lastTransitionTime", NULL, NULL);
		break;
	}
	cJSON_AddStringToObject(nc, "type", type);
	cJSON_AddStringToObject(nc, "status", ok ? "True" : "False");
	if (with_update)
		cJSON_AddStringToObject(nc, "lastUpdateTime", ts);
	else
		cJSON_AddStringToObject(nc, "lastProbeTime", ts);
	cJSON_AddStringToObject(nc, "lastTransitionTime", since && since[0] ? since : ts);
	cJSON_AddStringToObject(nc, "reason", reason);
	cJSON_AddStringToObject(nc, "message", msg);
	if (c)
		cJSON_ReplaceItemViaPointer(conds, c, nc);
	else
		cJSON_AddItemToArray(conds, nc);
}

/* ---- ReplicaSets ---- */

struct rs_count {
	int64_t active, ready, pending;
};

static void rs_counts(struct sim_workloads *w, struct ctl *c, struct rs_count *out)
{
	struct sim_spec_pod *pods;
	size_t n, i;

	memset(out, 0, sizeof(*out));
	pods = ctl_pods(w, c, &n);
	for (i = 0; i < n; i++) {
		if (!pod_active(&pods[i]))
			continue;
		out->active++;
		if (pod_ready(&pods[i]))
			out->ready++;
		else if (!pods[i].bound)
			out->pending++;
	}
	free(pods);
}

struct rs_status_ctx {
	struct rs_count n;
	int64_t gen;
};

static void rs_status(cJSON *o, void *ctx)
{
	struct rs_status_ctx *x = ctx;
	cJSON *st = obj_child(o, "status");

	if (!st)
		return;
	set_num(st, "replicas", (double)x->n.active);
	set_num(st, "fullyLabeledReplicas", (double)x->n.active);
	set_num(st, "readyReplicas", (double)x->n.ready);
	set_num(st, "availableReplicas", (double)x->n.ready);
	set_num(st, "observedGeneration", (double)x->gen);
}

static void reconcile_rs(struct sim_workloads *w, cJSON *rs, int64_t now)
{
	const char *ns = str_at(rs, "metadata", "namespace", NULL);
	const char *name = str_at(rs, "metadata", "name", NULL);
	struct ctl *c = ctl_get(w, APISERVER_REPLICASETS, uid_of(rs), ns, name);
	int64_t want = int_at(rs, "spec", "replicas", 1);
	struct sim_spec_pod *pods;
	struct rs_status_ctx x;
	size_t n;

	if (!c)
		return;
	c->seen = true;
	if (at(rs, "metadata", "deletionTimestamp", NULL))
		want = 0;
	if (ctl_template(w, c, at(rs, "spec", "template", NULL)) < 0)
		return;
	rs_counts(w, c, &x.n);
	if (x.n.active < want) {
		int64_t k;

		for (k = x.n.active; k < want; k++)
			if (ctl_new_pod(w, c) < 0)
				break;
	} else if (x.n.active > want) {
		pods = ctl_pods(w, c, &n);
		ctl_remove_pods(w, c, pods, n, x.n.active - want);
		free(pods);
	}
	rs_counts(w, c, &x.n);
	x.gen = int_at(rs, "metadata", "generation", 1);
	edit(w, APISERVER_REPLICASETS, ns, name, c->uid, rs_status, &x, now);
}

/* ---- Deployments ---- */

struct set_replicas_ctx {
	int64_t replicas;
	const char *revision;
	int64_t desired, max;
};

static void set_replicas(cJSON *o, void *ctx)
{
	struct set_replicas_ctx *x = ctx;
	cJSON *ann = obj_child(obj_child(o, "metadata"), "annotations");
	char num[32];

	set_num(obj_child(o, "spec"), "replicas", (double)x->replicas);
	if (ann && x->revision)
		set_str(ann, "deployment.kubernetes.io/revision", x->revision);
	snprintf(num, sizeof(num), "%lld", (long long)x->desired);
	if (ann)
		set_str(ann, "deployment.kubernetes.io/desired-replicas", num);
	snprintf(num, sizeof(num), "%lld", (long long)x->max);
	if (ann)
		set_str(ann, "deployment.kubernetes.io/max-replicas", num);
}

/* A new ReplicaSet of deployment 'd' for its template with hash 'hash'. */
static cJSON *new_rs(const cJSON *d, const char *hash, int64_t replicas, int64_t revision,
		     int64_t desired, int64_t max)
{
	cJSON *rs = cJSON_CreateObject(), *meta, *spec, *tmpl, *refs, *ref, *l, *sel, *ann;
	const char *dname = str_at(d, "metadata", "name", NULL);
	char nm[320], num[32];
	const cJSON *tl = at(d, "spec", "template", "metadata");

	if (!rs)
		return NULL;
	meta = cJSON_AddObjectToObject(rs, "metadata");
	snprintf(nm, sizeof(nm), "%.240s-%s", dname, hash);
	cJSON_AddStringToObject(meta, "name", nm);
	cJSON_AddStringToObject(meta, "namespace", str_at(d, "metadata", "namespace", NULL));
	cJSON_AddNumberToObject(meta, "generation", 1);
	l = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(tl, "labels"), 1);
	if (!l)
		l = cJSON_CreateObject();
	set_str(l, "pod-template-hash", hash);
	cJSON_AddItemToObject(meta, "labels", l);
	ann = cJSON_AddObjectToObject(meta, "annotations");
	snprintf(num, sizeof(num), "%lld", (long long)revision);
	cJSON_AddStringToObject(ann, "deployment.kubernetes.io/revision", num);
	snprintf(num, sizeof(num), "%lld", (long long)desired);
	cJSON_AddStringToObject(ann, "deployment.kubernetes.io/desired-replicas", num);
	snprintf(num, sizeof(num), "%lld", (long long)max);
	cJSON_AddStringToObject(ann, "deployment.kubernetes.io/max-replicas", num);
	refs = cJSON_AddArrayToObject(meta, "ownerReferences");
	ref = cJSON_CreateObject();
	cJSON_AddStringToObject(ref, "apiVersion", "apps/v1");
	cJSON_AddStringToObject(ref, "kind", "Deployment");
	cJSON_AddStringToObject(ref, "name", dname);
	cJSON_AddStringToObject(ref, "uid", uid_of(d));
	cJSON_AddTrueToObject(ref, "controller");
	cJSON_AddTrueToObject(ref, "blockOwnerDeletion");
	cJSON_AddItemToArray(refs, ref);
	cJSON_AddStringToObject(rs, "apiVersion", "apps/v1");
	cJSON_AddStringToObject(rs, "kind", "ReplicaSet");
	spec = cJSON_AddObjectToObject(rs, "spec");
	cJSON_AddNumberToObject(spec, "replicas", (double)replicas);
	sel = cJSON_Duplicate(at(d, "spec", "selector", NULL), 1);
	if (!sel)
		sel = cJSON_CreateObject();
	set_str(obj_child(sel, "matchLabels"), "pod-template-hash", hash);
	cJSON_AddItemToObject(spec, "selector", sel);
	tmpl = cJSON_Duplicate(at(d, "spec", "template", NULL), 1);
	if (tmpl)
		set_str(obj_child(obj_child(tmpl, "metadata"), "labels"), "pod-template-hash", hash);
	cJSON_AddItemToObject(spec, "template", tmpl);
	cJSON_AddObjectToObject(rs, "status");
	return rs;
}

struct deploy_status_ctx {
	int64_t replicas, updated, ready, available, want, min_available, gen;
	bool complete;
	const char *new_rs;
	int64_t now;
};

static void deploy_status(cJSON *o, void *ctx)
{
	struct deploy_status_ctx *x = ctx;
	cJSON *st = obj_child(o, "status");
	char msg[400];

	if (!st)
		return;
	set_num(st, "observedGeneration", (double)x->gen);
	set_num(st, "replicas", (double)x->replicas);
	set_num(st, "updatedReplicas", (double)x->updated);
	set_num(st, "readyReplicas", (double)x->ready);
	set_num(st, "availableReplicas", (double)x->available);
	cJSON_DeleteItemFromObjectCaseSensitive(st, "unavailableReplicas");
	if (x->replicas > x->available)
		cJSON_AddNumberToObject(st, "unavailableReplicas", (double)(x->replicas - x->available));
	if (x->available >= x->min_available)
		set_condition(st, "Available", true, "MinimumReplicasAvailable",
			      "Deployment has minimum availability.", x->now, true);
	else
		set_condition(st, "Available", false, "MinimumReplicasUnavailable",
			      "Deployment does not have minimum availability.", x->now, true);
	if (x->complete)
		snprintf(msg, sizeof(msg), "ReplicaSet \"%.250s\" has successfully progressed.",
			 x->new_rs);
	else
		snprintf(msg, sizeof(msg), "ReplicaSet \"%.250s\" is progressing.", x->new_rs);
	set_condition(st, "Progressing", true, x->complete ? "NewReplicaSetAvailable" :
		      "ReplicaSetUpdated", msg, x->now, true);
}

static int64_t rs_revision(const cJSON *rs)
{
	return atoll(str_at(rs, "metadata", "annotations", "deployment.kubernetes.io/revision"));
}

static void reconcile_deploy(struct sim_workloads *w, cJSON *d, cJSON **rss, size_t n_rs,
			     int64_t now)
{
	const char *ns = str_at(d, "metadata", "namespace", NULL), *uid = uid_of(d);
	const cJSON *tmpl = at(d, "spec", "template", NULL);
	const cJSON *strat = at(d, "spec", "strategy", NULL);
	int64_t want = int_at(d, "spec", "replicas", 1);
	bool recreate = strcmp(str_at(strat, "type", NULL, NULL), "Recreate") == 0;
	int64_t surge = int_or_percent(at(strat, "rollingUpdate", "maxSurge", NULL), want, true, 25);
	int64_t unavail = int_or_percent(at(strat, "rollingUpdate", "maxUnavailable", NULL), want,
					 false, 25);
	char hash[24], rev[32];
	cJSON *newest = NULL, **old;
	size_t n_old = 0, i;
	int64_t max_rev = 0, old_total = 0, old_active = 0, new_replicas, available = 0;
	int64_t ready = 0, replicas = 0, new_active = 0, new_ready = 0;
	struct deploy_status_ctx x;
	struct rs_count cnt;
	struct errbuf err;

	if (recreate)
		surge = 0, unavail = want;
	if (surge == 0 && unavail == 0)
		unavail = 1;
	snprintf(hash, sizeof(hash), "%010llx",
		 (unsigned long long)(hash_json(tmpl, 14695981039346656037ULL) & 0xffffffffffULL));
	old = calloc(n_rs ? n_rs : 1, sizeof(*old));
	if (!old)
		return;
	for (i = 0; i < n_rs; i++) {
		const char *o = owner_uid(rss[i], "Deployment");

		if (!o || strcmp(o, uid) != 0 || strcmp(str_at(rss[i], "metadata", "namespace", NULL), ns))
			continue;
		if (rs_revision(rss[i]) > max_rev)
			max_rev = rs_revision(rss[i]);
		if (strcmp(str_at(rss[i], "metadata", "labels", "pod-template-hash"), hash) == 0)
			newest = rss[i];
		else
			old[n_old++] = rss[i];
	}
	if (at(d, "metadata", "deletionTimestamp", NULL)) {
		free(old);
		return; /* going: the garbage collector empties it */
	}
	for (i = 0; i < n_old; i++) {
		struct ctl *c = ctl_get(w, APISERVER_REPLICASETS, uid_of(old[i]),
					ns, str_at(old[i], "metadata", "name", NULL));

		old_total += int_at(old[i], "spec", "replicas", 0);
		if (c) {
			rs_counts(w, c, &cnt);
			old_active += cnt.active;
			available += cnt.ready;
		}
	}
	if (!newest) {
		/* the first, or a new template: its ReplicaSet */
		int64_t start = n_old ? (recreate ? 0 : 0) : want;
		cJSON *rs = new_rs(d, hash, start, max_rev + 1, want, want + surge);

		if (!rs) {
			free(old);
			return;
		}
		apiserver_store_lock(w->st);
		apiserver_store_put(w->st, APISERVER_REPLICASETS, rs, now, NULL, &err);
		apiserver_store_unlock(w->st);
		free(old);
		return; /* its controller acts on the next pass */
	}
	{
		struct ctl *c = ctl_get(w, APISERVER_REPLICASETS, uid_of(newest), ns,
					str_at(newest, "metadata", "name", NULL));

		if (c) {
			rs_counts(w, c, &cnt);
			new_active = cnt.active;
			new_ready = cnt.ready;
		}
	}
	new_replicas = int_at(newest, "spec", "replicas", 0);
	if (n_old == 0 || old_total == 0) {
		new_replicas = want;
	} else if (recreate) {
		new_replicas = old_active == 0 ? want : 0;
	} else {
		int64_t max_total = want + surge, cur_total = old_total + new_replicas;

		if (new_replicas < want && cur_total < max_total)
			new_replicas += (max_total - cur_total < want - new_replicas) ?
					max_total - cur_total : want - new_replicas;
		if (new_replicas > want)
			new_replicas = want;
	}
	/* old ReplicaSets down as far as availability allows */
	{
		int64_t min_avail = want - unavail;
		int64_t can = (available + new_ready) - min_avail;

		if (recreate)
			can = old_total;
		for (i = 0; i < n_old; i++) {
			int64_t r = int_at(old[i], "spec", "replicas", 0), down;
			struct ctl *c = ctl_find(w, uid_of(old[i]));

			if (c) {
				rs_counts(w, c, &cnt);
				/* pods that are not ready go first, whatever the budget */
				down = r - cnt.ready;
				if (down > r)
					down = r;
				if (down < 0)
					down = 0;
				r -= down;
			} else {
				down = 0;
			}
			if (can > 0 && r > 0) {
				int64_t more = can < r ? can : r;

				down += more;
				can -= more;
				r -= more;
			}
			if (down > 0 || rs_revision(old[i]) == 0) {
				struct set_replicas_ctx sx = {r, NULL, want, want + surge};

				edit(w, APISERVER_REPLICASETS, ns, str_at(old[i], "metadata", "name", NULL),
				     uid_of(old[i]), set_replicas, &sx, now);
			}
		}
	}
	snprintf(rev, sizeof(rev), "%lld", (long long)(rs_revision(newest) ? rs_revision(newest) :
							 max_rev + 1));
	if (new_replicas != int_at(newest, "spec", "replicas", -1) ||
	    int_at(newest, "metadata", "annotations", -1) == -1 ||
	    atoll(str_at(newest, "metadata", "annotations", "deployment.kubernetes.io/desired-replicas")) != want) {
		struct set_replicas_ctx sx = {new_replicas, rev, want, want + surge};

		edit(w, APISERVER_REPLICASETS, ns, str_at(newest, "metadata", "name", NULL),
		     uid_of(newest), set_replicas, &sx, now);
	}
	replicas = old_active + new_active;
	ready = available + new_ready;
	x.replicas = replicas;
	x.updated = new_active;
	x.ready = ready;
	x.available = ready;
	x.want = want;
	x.min_available = want - unavail;
	x.gen = int_at(d, "metadata", "generation", 1);
	x.complete = new_active == want && old_active == 0 && new_ready == want;
	x.new_rs = str_at(newest, "metadata", "name", NULL);
	x.now = now;
	edit(w, APISERVER_DEPLOYMENTS, ns, str_at(d, "metadata", "name", NULL), uid, deploy_status,
	     &x, now);
	free(old);
}

/* ---- Jobs ---- */

struct job_status_ctx {
	struct ctl *c;
	int64_t active, ready, terminating;
	bool complete, failed;
	int64_t now;
	bool start;
};

static void job_status(cJSON *o, void *ctx)
{
	struct job_status_ctx *x = ctx;
	cJSON *st = obj_child(o, "status");
	char ts[40];

	if (!st)
		return;
	ts_now(x->now, ts, sizeof(ts));
	if (!cJSON_GetObjectItemCaseSensitive(st, "startTime"))
		cJSON_AddStringToObject(st, "startTime", ts);
	set_num(st, "active", (double)x->active);
	set_num(st, "ready", (double)x->ready);
	set_num(st, "terminating", (double)x->terminating);
	if (x->c->succeeded)
		set_num(st, "succeeded", (double)x->c->succeeded);
	if (x->c->failed)
		set_num(st, "failed", (double)x->c->failed);
	if (!cJSON_GetObjectItemCaseSensitive(st, "uncountedTerminatedPods"))
		cJSON_AddObjectToObject(st, "uncountedTerminatedPods");
	if (x->complete) {
		set_condition(st, "SuccessCriteriaMet", true, "CompletionsReached",
			      "Reached expected number of succeeded pods", x->now, false);
		set_condition(st, "Complete", true, "CompletionsReached",
			      "Reached expected number of succeeded pods", x->now, false);
		if (!cJSON_GetObjectItemCaseSensitive(st, "completionTime"))
			cJSON_AddStringToObject(st, "completionTime", ts);
	} else if (x->failed) {
		set_condition(st, "FailureTarget", true, "BackoffLimitExceeded",
			      "Job has reached the specified backoff limit", x->now, false);
		set_condition(st, "Failed", true, "BackoffLimitExceeded",
			      "Job has reached the specified backoff limit", x->now, false);
	}
}

static bool job_finished(const cJSON *job)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, at(job, "status", "conditions", NULL)) {
		const char *t = str_at(c, "type", NULL, NULL);

		if ((strcmp(t, "Complete") == 0 || strcmp(t, "Failed") == 0) &&
		    strcmp(str_at(c, "status", NULL, NULL), "True") == 0)
			return true;
	}
	return false;
}

static void reconcile_job(struct sim_workloads *w, cJSON *job, int64_t now)
{
	const char *ns = str_at(job, "metadata", "namespace", NULL);
	const char *name = str_at(job, "metadata", "name", NULL);
	struct ctl *c = ctl_get(w, APISERVER_JOBS, uid_of(job), ns, name);
	int64_t par = int_at(job, "spec", "parallelism", 1);
	int64_t comp = int_at(job, "spec", "completions", 1);
	int64_t backoff = int_at(job, "spec", "backoffLimit", 6);
	struct job_status_ctx x;
	struct sim_spec_pod *pods;
	size_t n, i, k;

	if (!c)
		return;
	c->seen = true;
	if (job_finished(job) || at(job, "metadata", "deletionTimestamp", NULL))
		return;
	if (c->spec < 0) {
		/* after a restart of the controller the stored counts stand */
		c->succeeded = int_at(job, "status", "succeeded", 0);
		c->failed = int_at(job, "status", "failed", 0);
	}
	if (ctl_template(w, c, at(job, "spec", "template", NULL)) < 0)
		return;
	pods = ctl_pods(w, c, &n);
	/* pods watched: succeeded, or gone without success (failed) */
	for (k = 0; k < c->n_watch;) {
		bool found = false, done = false;

		for (i = 0; i < n; i++) {
			if (strcmp(pods[i].name, c->watch[k]) == 0) {
				found = true;
				done = pods[i].phase == POD_SUCCEEDED || pods[i].phase == POD_FAILED;
				if (pods[i].phase == POD_SUCCEEDED)
					c->succeeded++;
				else if (pods[i].phase == POD_FAILED)
					c->failed++;
				break;
			}
		}
		if (!found)
			c->failed++;
		if (!found || done) {
			free(c->watch[k]);
			c->watch[k] = c->watch[--c->n_watch];
		} else {
			k++;
		}
	}
	memset(&x, 0, sizeof(x));
	x.c = c;
	x.now = now;
	for (i = 0; i < n; i++) {
		if (pods[i].terminating)
			x.terminating++;
		else if (pod_active(&pods[i]))
			x.active++;
		if (pod_ready(&pods[i]))
			x.ready++;
	}
	x.complete = c->succeeded >= comp;
	x.failed = !x.complete && c->failed > backoff;
	if (x.complete || x.failed) {
		ctl_remove_pods(w, c, pods, n, x.active);
		x.active = 0;
		x.ready = 0;
	} else {
		int64_t want = comp - c->succeeded;

		if (want > par)
			want = par;
		for (; x.active < want; x.active++)
			if (ctl_new_pod(w, c) < 0)
				break;
	}
	free(pods);
	edit(w, APISERVER_JOBS, ns, name, c->uid, job_status, &x, now);
}

/* ---- garbage collection ---- */

/* Drops the foreground-deletion finalizer state: the owner goes now. */
static void finish_foreground(struct sim_workloads *w, enum apiserver_resource r, const cJSON *o)
{
	apiserver_store_lock(w->st);
	apiserver_store_delete(w->st, r, str_at(o, "metadata", "namespace", NULL),
			       str_at(o, "metadata", "name", NULL), NULL);
	apiserver_store_unlock(w->st);
}

static bool foreground(const cJSON *o)
{
	const cJSON *f;

	if (!at(o, "metadata", "deletionTimestamp", NULL))
		return false;
	cJSON_ArrayForEach(f, at(o, "metadata", "finalizers", NULL))
		if (cJSON_IsString(f) && strcmp(f->valuestring, "foregroundDeletion") == 0)
			return true;
	return false;
}

void sim_workloads_reconcile(struct sim_workloads *w, int64_t now)
{
	struct sim_cloud *cloud = sim_cluster_cloud(w->c);
	cJSON **ds, **rss, **jobs;
	size_t n_d, n_rs, n_j, i;

	sim_cloud_lock(cloud);
	for (i = 0; i < w->n_ctls; i++)
		w->ctls[i]->seen = false;
	ds = load_all(w, APISERVER_DEPLOYMENTS, &n_d);
	rss = load_all(w, APISERVER_REPLICASETS, &n_rs);
	/* ReplicaSets whose Deployment is gone go too (background) */
	for (i = 0; i < n_rs; i++) {
		const char *o = owner_uid(rss[i], "Deployment");

		if (o && !exists_uid(w, APISERVER_DEPLOYMENTS,
				      str_at(rss[i], "metadata", "namespace", NULL), o)) {
			apiserver_store_lock(w->st);
			apiserver_store_delete(w->st, APISERVER_REPLICASETS,
					       str_at(rss[i], "metadata", "namespace", NULL),
					       str_at(rss[i], "metadata", "name", NULL), NULL);
			apiserver_store_unlock(w->st);
		}
	}
	for (i = 0; i < n_d; i++) {
		if (foreground(ds[i])) {
			size_t k;
			bool left = false;

			for (k = 0; k < n_rs && !left; k++) {
				const char *o = owner_uid(rss[k], "Deployment");

				if (o && strcmp(o, uid_of(ds[i])) == 0) {
					left = true;
					apiserver_store_lock(w->st);
					apiserver_store_delete(w->st, APISERVER_REPLICASETS,
							       str_at(rss[k], "metadata", "namespace", NULL),
							       str_at(rss[k], "metadata", "name", NULL), NULL);
					apiserver_store_unlock(w->st);
				}
			}
			if (!left)
				finish_foreground(w, APISERVER_DEPLOYMENTS, ds[i]);
			continue;
		}
		reconcile_deploy(w, ds[i], rss, n_rs, now);
	}
	free_all(rss, n_rs);
	rss = load_all(w, APISERVER_REPLICASETS, &n_rs);
	for (i = 0; i < n_rs; i++)
		reconcile_rs(w, rss[i], now);
	jobs = load_all(w, APISERVER_JOBS, &n_j);
	for (i = 0; i < n_j; i++)
		reconcile_job(w, jobs[i], now);
	/* owners gone: their pods go; owners going in the foreground: once empty */
	for (i = w->n_ctls; i-- > 0;) {
		struct ctl *c = w->ctls[i];

		if (!c->seen) {
			ctl_remove_all(w, c);
			ctl_drop(w, c);
		}
	}
	for (i = 0; i < n_rs; i++) {
		struct ctl *c = ctl_find(w, uid_of(rss[i]));
		struct rs_count cnt;

		if (!foreground(rss[i]) || !c)
			continue;
		ctl_remove_all(w, c);
		rs_counts(w, c, &cnt);
		if (cnt.active == 0)
			finish_foreground(w, APISERVER_REPLICASETS, rss[i]);
	}
	for (i = 0; i < n_j; i++) {
		struct ctl *c = ctl_find(w, uid_of(jobs[i]));

		if (!foreground(jobs[i]) || !c)
			continue;
		ctl_remove_all(w, c);
		finish_foreground(w, APISERVER_JOBS, jobs[i]);
	}
	free_all(ds, n_d);
	free_all(rss, n_rs);
	free_all(jobs, n_j);
	sim_cloud_unlock(cloud);
}

/* ---- orphans ---- */

static void strip_owner(cJSON *o, void *ctx)
{
	(void)ctx;
	cJSON_DeleteItemFromObjectCaseSensitive(obj_child(o, "metadata"), "ownerReferences");
}

void sim_workloads_orphan(struct sim_workloads *w, enum apiserver_resource r, const char *ns,
			  const char *uid)
{
	struct sim_cloud *cloud = sim_cluster_cloud(w->c);
	struct ctl *c;
	size_t i;

	sim_cloud_lock(cloud);
	if (r == APISERVER_DEPLOYMENTS) {
		cJSON **rss;
		size_t n;

		rss = load_all(w, APISERVER_REPLICASETS, &n);
		for (i = 0; i < n; i++) {
			const char *o = owner_uid(rss[i], "Deployment");

			if (o && strcmp(o, uid) == 0)
				edit(w, APISERVER_REPLICASETS, ns, str_at(rss[i], "metadata", "name", NULL),
				     uid_of(rss[i]), strip_owner, NULL, 0);
		}
		free_all(rss, n);
	} else if ((c = ctl_find(w, uid))) {
		struct sim_spec_pod *pods;
		struct kube_status ks;
		size_t n;
		char **names;

		pods = ctl_pods(w, c, &n);
		names = calloc(n ? n : 1, sizeof(*names));
		for (i = 0; names && i < n; i++)
			names[i] = strdup(pods[i].name);
		free(pods);
		for (i = 0; names && i < n; i++) {
			if (names[i])
				sim_cluster_orphan_pod(w->c, ns, names[i], &ks);
			free(names[i]);
		}
		free(names);
		ctl_drop(w, c); /* its pods are no longer its */
	}
	sim_cloud_unlock(cloud);
}

/* ---- life cycle ---- */

struct sim_workloads *sim_workloads_new(struct sim_cluster *cluster, struct apiserver_store *store,
					uint64_t seed)
{
	struct sim_workloads *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->c = cluster;
	w->st = store;
	w->rng = seed ^ 0x9e3779b97f4a7c15ULL;
	return w;
}

void sim_workloads_free(struct sim_workloads *w)
{
	size_t i;

	if (!w)
		return;
	for (i = 0; i < w->n_ctls; i++)
		ctl_free(w->ctls[i]);
	free(w->ctls);
	free(w);
}
