/*
 * kubeops_http: engine/kubeops.h over the Kubernetes API through a
 * kube_client. Builds the patch, eviction and Event bodies, maps statuses to
 * kube_result codes (an eviction's 429 by what its Status says), decodes a
 * node's pods with the model, and re-reads and retries a taint edit after a
 * 409, and binds pods to nodes (Binding). Nothing else is retried here: the actuator decides what to do next.
 */
#include "kube/kubeops_http.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "errbuf.h"
#include "model.h"
#include "kube/client.h"
#include "runtime/clock.h"
#include "sched.h"

#define EVENT_MESSAGE_MAX 1024
#define NODE_PODS_RELISTS 3

struct kubeops_http {
	struct kube_client *client;
	struct clock *clock;
	int conflict_retries;
	int page_limit;
	char *event_ns;
	char *component;
	atomic_uint_fast64_t seq; /* makes Event names unique within a second */
};

static char *xstrdup(const char *s)
{
	size_t n = strlen(s);
	char *d = malloc(n + 1);

	if (d)
		memcpy(d, s, n + 1);
	return d;
}

struct kubeops_http *kubeops_http_new(struct kube_client *client,
				      const struct kubeops_http_opts *opts)
{
	struct kubeops_http_opts o = {0};
	struct kubeops_http *h;

	if (opts)
		o = *opts;
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->client = client;
	h->clock = o.clock ? o.clock : clock_real();
	h->conflict_retries = o.conflict_retries > 0 ? o.conflict_retries : 5;
	h->page_limit = o.page_limit > 0 ? o.page_limit : 500;
	h->event_ns = xstrdup(o.event_namespace ? o.event_namespace : "default");
	h->component = xstrdup(o.component ? o.component : "luascale");
	atomic_init(&h->seq, 0);
	if (!h->event_ns || !h->component) {
		kubeops_http_free(h);
		return NULL;
	}
	return h;
}

void kubeops_http_free(struct kubeops_http *h)
{
	if (!h)
		return;
	free(h->event_ns);
	free(h->component);
	free(h);
}

/* ---- outcomes ---- */

static int set_status(struct kube_status *st, enum kube_result code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int set_status(struct kube_status *st, enum kube_result code, const char *fmt, ...)
{
	va_list ap;

	if (st) {
		st->code = code;
		va_start(ap, fmt);
		vsnprintf(st->message, sizeof(st->message), fmt, ap);
		va_end(ap);
	}
	return code == KUBE_OK ? 0 : -1;
}

/*
 * Maps a finished request to 'st': 'rc' and 'err' from kube_request, 'what'
 * names the action ("cordon node n1"). Returns 0 for 2xx, else -1.
 */
static int outcome(int rc, const struct kube_response *r, const struct errbuf *err,
		   const char *what, struct kube_status *st)
{
	if (rc < 0)
		return set_status(st, KUBE_ERROR, "%s: %s", what, err->msg);
	if (r->status >= 200 && r->status < 300)
		return set_status(st, KUBE_OK, "ok");
	switch (r->status) {
	case 404:
		return set_status(st, KUBE_NOT_FOUND, "%s: %s", what, r->message);
	case 409:
		return set_status(st, KUBE_CONFLICT, "%s: %s", what, r->message);
	case 429:
		return set_status(st, KUBE_THROTTLED, "%s: %s", what, r->message);
	default:
		return set_status(st, KUBE_ERROR, "%s: %s", what, r->message);
	}
}

/* "/api/v1/nodes/NAME" into 'b'. */
static int node_path(struct buf *b, const char *node)
{
	buf_puts(b, "/api/v1/nodes/");
	return kube_escape(b, node);
}

static int bad_name(const char *s, const char *what, struct kube_status *st)
{
	if (s && s[0])
		return 0;
	return set_status(st, KUBE_ERROR, "no %s name given", what);
}

/* PATCHes node 'node' with 'body' of 'ctype'. */
static int patch_node(struct kubeops_http *h, const char *node, const char *ctype,
		      const struct buf *body, const char *what, struct kube_status *st)
{
	struct buf path = BUF_INIT;
	struct kube_response r;
	struct errbuf err = {""};
	int rc;

	if (node_path(&path, node) || body->oom) {
		buf_free(&path);
		return set_status(st, KUBE_ERROR, "%s: out of memory", what);
	}
	rc = kube_request(h->client, "PATCH", path.data, ctype, body->data, body->len, &r, &err);
	rc = outcome(rc, &r, &err, what, st);
	kube_response_free(&r);
	buf_free(&path);
	return rc;
}

/* ---- cordon, labels, annotations ---- */

static int op_cordon(void *ctx, const char *node, bool unschedulable, struct kube_status *st)
{
	struct kubeops_http *h = ctx;
	struct buf body = BUF_INIT;
	char what[320];
	int rc;

	if (bad_name(node, "node", st))
		return -1;
	snprintf(what, sizeof(what), "%s node %s", unschedulable ? "cordon" : "uncordon", node);
	/* as kubectl: set the field, or remove it (null) to uncordon */
	buf_puts(&body, unschedulable ? "{\"spec\":{\"unschedulable\":true}}"
				      : "{\"spec\":{\"unschedulable\":null}}");
	rc = patch_node(h, node, KUBE_CT_STRATEGIC_MERGE_PATCH, &body, what, st);
	buf_free(&body);
	return rc;
}

static int op_cordon_mark(void *ctx, const char *node, bool unschedulable, const struct kv *marks,
			  size_t n_marks, struct kube_status *st)
{
	struct kubeops_http *h = ctx;
	struct buf body = BUF_INIT;
	char what[320];
	size_t i;
	int rc;

	if (bad_name(node, "node", st))
		return -1;
	snprintf(what, sizeof(what), "%s node %s", unschedulable ? "cordon" : "uncordon", node);
	/* one strategic merge patch: the annotations and the field together */
	buf_puts(&body, "{\"metadata\":{\"annotations\":{");
	for (i = 0; i < n_marks; i++) {
		if (!marks[i].key || !marks[i].key[0]) {
			buf_free(&body);
			return set_status(st, KUBE_ERROR, "%s: an annotation without a key", what);
		}
		if (i)
			buf_puts(&body, ",");
		buf_json_string(&body, marks[i].key);
		buf_puts(&body, ":");
		if (marks[i].value)
			buf_json_string(&body, marks[i].value);
		else
			buf_puts(&body, "null");
	}
	buf_puts(&body, unschedulable ? "}},\"spec\":{\"unschedulable\":true}}"
				      : "}},\"spec\":{\"unschedulable\":null}}");
	rc = patch_node(h, node, KUBE_CT_STRATEGIC_MERGE_PATCH, &body, what, st);
	buf_free(&body);
	return rc;
}

static int meta_patch(struct kubeops_http *h, const char *node, const char *field,
		      const char *key, const char *value, struct kube_status *st)
{
	struct buf body = BUF_INIT;
	char what[400];
	int rc;

	if (bad_name(node, "node", st))
		return -1;
	if (!key || !key[0])
		return set_status(st, KUBE_ERROR, "node %s: no %s key given", node, field);
	snprintf(what, sizeof(what), "%s %s on node %s", value ? "set" : "remove", key, node);
	buf_printf(&body, "{\"metadata\":{\"%s\":{", field);
	buf_json_string(&body, key);
	buf_puts(&body, ":");
	if (value)
		buf_json_string(&body, value);
	else
		buf_puts(&body, "null");
	buf_puts(&body, "}}}");
	rc = patch_node(h, node, KUBE_CT_MERGE_PATCH, &body, what, st);
	buf_free(&body);
	return rc;
}

static int op_label(void *ctx, const char *node, const char *key, const char *value,
		    struct kube_status *st)
{
	return meta_patch(ctx, node, "labels", key, value, st);
}

static int op_annotate(void *ctx, const char *node, const char *key, const char *value,
		       struct kube_status *st)
{
	return meta_patch(ctx, node, "annotations", key, value, st);
}

/* ---- taints: read, edit, write with resourceVersion ---- */

/*
 * Builds the merge patch for node JSON 'doc' with the taint (key, effect)
 * set to 'value' or removed. *changed false means nothing to write.
 */
static int taint_patch(const cJSON *doc, const char *key, const char *value,
		       const char *effect, bool remove, struct buf *out, bool *changed,
		       const char **problem)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(doc, "metadata");
	const cJSON *rv = cJSON_GetObjectItemCaseSensitive(meta, "resourceVersion");
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(doc, "spec");
	const cJSON *taints = cJSON_GetObjectItemCaseSensitive(spec, "taints"), *t;
	cJSON *list = NULL, *nt;
	char *text = NULL;
	bool found = false;
	int rc = -1;

	*changed = false;
	if (!cJSON_IsString(rv) || !rv->valuestring[0]) {
		*problem = "the node has no metadata.resourceVersion";
		return -1;
	}
	if (taints && !cJSON_IsNull(taints) && !cJSON_IsArray(taints)) {
		*problem = "the node's spec.taints is not a list";
		return -1;
	}
	list = cJSON_CreateArray();
	if (!list)
		goto oom;
	cJSON_ArrayForEach(t, taints) {
		const cJSON *k = cJSON_GetObjectItemCaseSensitive(t, "key");
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(t, "effect");
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(t, "value");

		if (cJSON_IsString(k) && cJSON_IsString(e) && strcmp(k->valuestring, key) == 0 &&
		    strcmp(e->valuestring, effect) == 0) {
			const char *old = cJSON_IsString(v) ? v->valuestring : "";

			found = true;
			if (remove) {
				*changed = true;
				continue;
			}
			if (strcmp(old, value ? value : "") == 0) {
				nt = cJSON_Duplicate(t, 1);
			} else {
				*changed = true;
				continue; /* replaced below */
			}
		} else {
			nt = cJSON_Duplicate(t, 1);
		}
		if (!nt || !cJSON_AddItemToArray(list, nt)) {
			cJSON_Delete(nt);
			goto oom;
		}
	}
	if (!remove && (!found || *changed)) {
		*changed = true;
		nt = cJSON_CreateObject();
		if (!nt || !cJSON_AddItemToArray(list, nt)) {
			cJSON_Delete(nt);
			goto oom;
		}
		if (!cJSON_AddStringToObject(nt, "key", key) ||
		    (value && value[0] && !cJSON_AddStringToObject(nt, "value", value)) ||
		    !cJSON_AddStringToObject(nt, "effect", effect))
			goto oom;
	}
	if (!*changed) {
		rc = 0;
		goto out;
	}
	text = cJSON_PrintUnformatted(list);
	if (!text)
		goto oom;
	buf_puts(out, "{\"metadata\":{\"resourceVersion\":");
	buf_json_string(out, rv->valuestring);
	buf_puts(out, "},\"spec\":{\"taints\":");
	buf_puts(out, text);
	buf_puts(out, "}}");
	if (out->oom)
		goto oom;
	rc = 0;
	goto out;
oom:
	*problem = "out of memory";
out:
	free(text);
	cJSON_Delete(list);
	return rc;
}

static int op_taint(void *ctx, const char *node, const char *key, const char *value,
		    enum taint_effect effect, bool remove, struct kube_status *st)
{
	struct kubeops_http *h = ctx;
	const char *eff = taint_effect_str(effect);
	struct buf path = BUF_INIT;
	struct kube_status dummy;
	char what[400];
	int attempt, rc = -1;

	if (!st)
		st = &dummy;
	if (bad_name(node, "node", st))
		return -1;
	if (!key || !key[0])
		return set_status(st, KUBE_ERROR, "node %s: no taint key given", node);
	snprintf(what, sizeof(what), "%s taint %s:%s on node %s", remove ? "remove" : "set", key,
		 eff, node);
	if (node_path(&path, node)) {
		buf_free(&path);
		return set_status(st, KUBE_ERROR, "%s: out of memory", what);
	}
	for (attempt = 0; attempt <= h->conflict_retries; attempt++) {
		struct kube_response r;
		struct errbuf err = {""};
		struct buf body = BUF_INIT;
		const char *problem = NULL;
		bool changed = false;
		cJSON *doc;
		int q;

		q = kube_request(h->client, "GET", path.data, NULL, NULL, 0, &r, &err);
		if (outcome(q, &r, &err, what, st) < 0) {
			kube_response_free(&r);
			goto out;
		}
		doc = cJSON_ParseWithLength(r.body ? r.body : "", r.body_len);
		kube_response_free(&r);
		if (!doc || !cJSON_IsObject(doc)) {
			cJSON_Delete(doc);
			set_status(st, KUBE_ERROR, "%s: the node is not a JSON object", what);
			goto out;
		}
		q = taint_patch(doc, key, value, eff, remove, &body, &changed, &problem);
		cJSON_Delete(doc);
		if (q < 0) {
			buf_free(&body);
			set_status(st, KUBE_ERROR, "%s: %s", what, problem);
			goto out;
		}
		if (!changed) {
			buf_free(&body);
			rc = set_status(st, KUBE_OK, "ok (already so)");
			goto out;
		}
		rc = patch_node(h, node, KUBE_CT_MERGE_PATCH, &body, what, st);
		buf_free(&body);
		if (rc == 0 || st->code != KUBE_CONFLICT)
			goto out;
		/* someone else changed the node between our read and write: again */
	}
	set_status(st, KUBE_CONFLICT, "%s: still conflicting after %d attempts", what,
		   h->conflict_retries + 1);
	rc = -1;
out:
	buf_free(&path);
	return rc;
}

/* ---- evictions and deletion ---- */

/*
 * A 429 on the eviction subresource: a PodDisruptionBudget saying "not
 * now" only when the Status says so (a DisruptionBudget cause, or a
 * message naming the disruption budget); otherwise the server's own
 * limits. Either way 'st' carries what the server said and when to retry.
 */
static void eviction_refused(const struct kube_response *r, const char *what,
			     struct kube_status *st)
{
	cJSON *doc = r->body && r->body_len ? cJSON_ParseWithLength(r->body, r->body_len) : NULL;
	const cJSON *details = cJSON_GetObjectItemCaseSensitive(doc, "details");
	const cJSON *causes = cJSON_GetObjectItemCaseSensitive(details, "causes"), *c;
	const cJSON *retry = cJSON_GetObjectItemCaseSensitive(details, "retryAfterSeconds");
	const char *budget = NULL;
	bool pdb = strstr(r->message, "disruption budget") != NULL;

	cJSON_ArrayForEach(c, causes) {
		const cJSON *reason = cJSON_GetObjectItemCaseSensitive(c, "reason");
		const cJSON *msg = cJSON_GetObjectItemCaseSensitive(c, "message");

		if (cJSON_IsString(reason) && strcmp(reason->valuestring, "DisruptionBudget") == 0) {
			pdb = true;
			if (cJSON_IsString(msg) && msg->valuestring[0])
				budget = msg->valuestring;
		}
	}
	st->retry_after_s = 0;
	if (cJSON_IsNumber(retry) && retry->valuedouble >= 1 && retry->valuedouble <= 3600)
		st->retry_after_s = (int64_t)retry->valuedouble;
	st->code = pdb ? KUBE_PDB_BLOCKED : KUBE_THROTTLED;
	{
		char text[1024];

		/* the pod is named by the caller; say what the server said */
		(void)what;
		snprintf(text, sizeof(text), "429 %s: %s%s%s",
			 r->reason[0] ? r->reason : "TooManyRequests",
			 r->message[0] ? r->message : "(no message)", budget ? ": " : "",
			 budget ? budget : "");
		snprintf(st->message, sizeof(st->message), "%.*s", (int)sizeof(st->message) - 1, text);
	}
	cJSON_Delete(doc);
}

/*
 * POSTs JSON 'body' to subresource 'sub' of pod ns/pod, frees 'body', and
 * returns the outcome (outcome()); 'r' holds the response for the caller
 * to read and free.
 */
static int post_pod_subresource(struct kubeops_http *h, const char *ns, const char *pod,
				const char *sub, struct buf *body, const char *what,
				struct kube_response *r, struct kube_status *st)
{
	struct buf path = BUF_INIT;
	struct errbuf err = {""};
	int rc;

	memset(r, 0, sizeof(*r));
	buf_puts(&path, "/api/v1/namespaces/");
	kube_escape(&path, ns);
	buf_puts(&path, "/pods/");
	kube_escape(&path, pod);
	buf_puts(&path, "/");
	buf_puts(&path, sub);
	if (path.oom || body->oom) {
		rc = set_status(st, KUBE_ERROR, "%s: out of memory", what);
	} else {
		rc = kube_request(h->client, "POST", path.data, KUBE_CT_JSON, body->data, body->len,
				  r, &err);
		rc = outcome(rc, r, &err, what, st);
	}
	buf_free(&path);
	buf_free(body);
	return rc;
}

static int op_evict(void *ctx, const char *ns, const char *pod, int64_t grace_s,
		    struct kube_status *st)
{
	struct buf body = BUF_INIT;
	struct kube_response r;
	char what[400];
	int rc;

	if (bad_name(ns, "namespace", st) || bad_name(pod, "pod", st))
		return -1;
	snprintf(what, sizeof(what), "evict pod %s/%s", ns, pod);
	buf_puts(&body, "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":{\"name\":");
	buf_json_string(&body, pod);
	buf_puts(&body, ",\"namespace\":");
	buf_json_string(&body, ns);
	buf_puts(&body, "}");
	if (grace_s >= 0)
		buf_printf(&body, ",\"deleteOptions\":{\"gracePeriodSeconds\":%lld}",
			   (long long)grace_s);
	buf_puts(&body, "}");
	rc = post_pod_subresource(ctx, ns, pod, "eviction", &body, what, &r, st);
	if (st && st->code == KUBE_THROTTLED)
		eviction_refused(&r, what, st);
	kube_response_free(&r);
	return rc;
}

static int op_delete_node(void *ctx, const char *node, struct kube_status *st)
{
	struct kubeops_http *h = ctx;
	struct buf path = BUF_INIT;
	struct kube_response r;
	struct errbuf err = {""};
	char what[320];
	int rc;

	if (bad_name(node, "node", st))
		return -1;
	snprintf(what, sizeof(what), "delete node %s", node);
	if (node_path(&path, node)) {
		buf_free(&path);
		return set_status(st, KUBE_ERROR, "%s: out of memory", what);
	}
	rc = kube_request(h->client, "DELETE", path.data, NULL, NULL, 0, &r, &err);
	rc = outcome(rc, &r, &err, what, st);
	kube_response_free(&r);
	buf_free(&path);
	return rc;
}

/* ---- binding ---- */

static int op_bind(void *ctx, const char *ns, const char *pod, const char *uid,
		   const char *node, struct kube_status *st)
{
	struct buf body = BUF_INIT;
	struct kube_response r;
	char what[600];
	int rc;

	if (bad_name(ns, "namespace", st) || bad_name(pod, "pod", st) || bad_name(node, "node", st))
		return -1;
	snprintf(what, sizeof(what), "bind pod %s/%s to node %s", ns, pod, node);
	buf_puts(&body, "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":");
	buf_json_string(&body, pod);
	buf_puts(&body, ",\"namespace\":");
	buf_json_string(&body, ns);
	if (uid && uid[0]) {
		buf_puts(&body, ",\"uid\":");
		buf_json_string(&body, uid);
	}
	buf_puts(&body, "},\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":");
	buf_json_string(&body, node);
	buf_puts(&body, "}}");
	rc = post_pod_subresource(ctx, ns, pod, "binding", &body, what, &r, st);
	kube_response_free(&r);
	return rc;
}

/* ---- a node's pods ---- */

struct podvec {
	struct kube_pod_ref *v;
	size_t n, cap;
};

/*
 * Adds pod 'item' unless finished, decoded by the model as the informers
 * decode it (so the drain's checks see the flags and labels the plan saw).
 * Returns 0, or -1 with 'problem' (a static string, or 'why' filled).
 */
static int add_pod(struct podvec *pv, const cJSON *item, char *why, size_t why_len,
		   const char **problem)
{
	struct snapshot *tmp = snapshot_new();
	struct errbuf err = {""};
	struct kube_pod_ref *p;
	struct pod *pd;
	int rc = -1;

	if (!tmp) {
		*problem = "out of memory";
		return -1;
	}
	if (snapshot_add_object(tmp, item, "Pod", &err) < 0 || tmp->n_pods != 1) {
		snprintf(why, why_len, "%s", err.msg[0] ? err.msg : "an item is not a pod");
		*problem = why;
		goto out;
	}
	pd = &tmp->pods[0];
	if (!pd->ns || !pd->ns[0] || !pd->name || !pd->name[0]) {
		*problem = "a pod without metadata.name or metadata.namespace";
		goto out;
	}
	if (strlen(pd->ns) >= sizeof(p->ns) || strlen(pd->name) >= sizeof(p->name)) {
		*problem = "a pod name or namespace is too long";
		goto out;
	}
	if (pod_finished(pd)) {
		rc = 0; /* finished: holds nothing, need not leave */
		goto out;
	}
	if (pv->n == pv->cap) {
		size_t ncap = pv->cap ? pv->cap * 2 : 16;
		struct kube_pod_ref *nv = realloc(pv->v, ncap * sizeof(*nv));

		if (!nv) {
			*problem = "out of memory";
			goto out;
		}
		pv->v = nv;
		pv->cap = ncap;
	}
	p = &pv->v[pv->n];
	memset(p, 0, sizeof(*p));
	p->pod = pod_clone(pd);
	if (!p->pod) {
		*problem = "out of memory";
		goto out;
	}
	pv->n++;
	snprintf(p->ns, sizeof(p->ns), "%s", pd->ns);
	snprintf(p->name, sizeof(p->name), "%s", pd->name);
	p->terminating = (pd->flags & POD_TERMINATING) != 0;
	/* as the simulated cluster: a terminating pod must still leave first */
	p->evictable = p->terminating || sched_pod_evictable(pd);
	rc = 0;
out:
	snapshot_free(tmp);
	return rc;
}

static int op_node_pods(void *ctx, const char *node, struct kube_pod_ref **pods, size_t *n,
			struct kube_status *st)
{
	struct kubeops_http *h = ctx;
	struct podvec pv = {0};
	char *cont = NULL;
	char what[320];
	int relists = 0, rc = -1;

	*pods = NULL;
	*n = 0;
	if (bad_name(node, "node", st))
		return -1;
	snprintf(what, sizeof(what), "list the pods of node %s", node);
	for (;;) {
		struct buf path = BUF_INIT;
		struct kube_response r;
		struct errbuf err = {""};
		const char *problem = NULL;
		char why[ERRBUF_MAX];
		const cJSON *items, *it, *next;
		cJSON *doc;
		int q;

		buf_puts(&path, "/api/v1/pods?fieldSelector=");
		{
			struct buf sel = BUF_INIT;

			buf_puts(&sel, "spec.nodeName=");
			buf_puts(&sel, node);
			if (!sel.oom)
				kube_escape(&path, sel.data);
			else
				path.oom = 1;
			buf_free(&sel);
		}
		buf_printf(&path, "&limit=%d", h->page_limit);
		if (cont) {
			buf_puts(&path, "&continue=");
			kube_escape(&path, cont);
		}
		if (path.oom) {
			buf_free(&path);
			set_status(st, KUBE_ERROR, "%s: out of memory", what);
			goto out;
		}
		q = kube_request(h->client, "GET", path.data, NULL, NULL, 0, &r, &err);
		buf_free(&path);
		if (q == 0 && r.status == 410 && cont && relists < NODE_PODS_RELISTS) {
			/* the continue token expired: list again from the start */
			kube_response_free(&r);
			free(cont);
			cont = NULL;
			kube_pod_refs_free(pv.v, pv.n);
			memset(&pv, 0, sizeof(pv));
			relists++;
			continue;
		}
		if (outcome(q, &r, &err, what, st) < 0) {
			kube_response_free(&r);
			goto out;
		}
		doc = cJSON_ParseWithLength(r.body ? r.body : "", r.body_len);
		kube_response_free(&r);
		items = cJSON_GetObjectItemCaseSensitive(doc, "items");
		if (!doc || !cJSON_IsObject(doc) || (items && !cJSON_IsNull(items) &&
						     !cJSON_IsArray(items))) {
			cJSON_Delete(doc);
			set_status(st, KUBE_ERROR, "%s: the answer is not a PodList", what);
			goto out;
		}
		cJSON_ArrayForEach(it, items) {
			if (add_pod(&pv, it, why, sizeof(why), &problem) < 0) {
				cJSON_Delete(doc);
				set_status(st, KUBE_ERROR, "%s: %s", what, problem);
				goto out;
			}
		}
		next = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "metadata"),
							"continue");
		free(cont);
		cont = cJSON_IsString(next) && next->valuestring[0] ? xstrdup(next->valuestring)
								    : NULL;
		q = cJSON_IsString(next) && next->valuestring[0] && !cont;
		cJSON_Delete(doc);
		if (q) {
			set_status(st, KUBE_ERROR, "%s: out of memory", what);
			goto out;
		}
		if (!cont)
			break;
	}
	*pods = pv.v;
	*n = pv.n;
	pv.v = NULL;
	rc = set_status(st, KUBE_OK, "ok");
out:
	kube_pod_refs_free(pv.v, pv.n);
	free(cont);
	return rc;
}

/* ---- events ---- */

static int op_event(void *ctx, const char *node, const char *type, const char *reason,
		    const char *message)
{
	struct kubeops_http *h = ctx;
	struct buf path = BUF_INIT, body = BUF_INIT;
	struct kube_response r;
	struct errbuf err = {""};
	char ts[32], msg[EVENT_MESSAGE_MAX + 1];
	int64_t wall = clock_wall(h->clock);
	uint64_t seq = atomic_fetch_add(&h->seq, 1);
	int rc;

	if (!node || !node[0] || !reason || !reason[0])
		return -1;
	model_format_time(wall, ts, sizeof(ts));
	snprintf(msg, sizeof(msg), "%s", message ? message : "");
	buf_puts(&path, "/api/v1/namespaces/");
	kube_escape(&path, h->event_ns);
	buf_puts(&path, "/events");
	buf_puts(&body, "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":");
	{
		/* as client-go: "<object>.<hex time>", plus a sequence number */
		struct buf name = BUF_INIT;

		buf_printf(&name, "%s.%llx%04llx", node, (unsigned long long)wall,
			   (unsigned long long)(seq & 0xffff));
		buf_json_string(&body, name.data ? name.data : node);
		buf_free(&name);
	}
	buf_puts(&body, ",\"namespace\":");
	buf_json_string(&body, h->event_ns);
	/* a Node's events carry its name as uid, as the kubelet's do (kubectl
	 * describe node finds them that way) */
	buf_puts(&body, "},\"involvedObject\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":");
	buf_json_string(&body, node);
	buf_puts(&body, ",\"uid\":");
	buf_json_string(&body, node);
	buf_puts(&body, "},\"reason\":");
	buf_json_string(&body, reason);
	buf_puts(&body, ",\"message\":");
	buf_json_string(&body, msg);
	buf_puts(&body, ",\"type\":");
	buf_json_string(&body, type && type[0] ? type : "Normal");
	buf_puts(&body, ",\"source\":{\"component\":");
	buf_json_string(&body, h->component);
	buf_puts(&body, "},\"reportingComponent\":");
	buf_json_string(&body, h->component);
	buf_printf(&body, ",\"firstTimestamp\":\"%s\",\"lastTimestamp\":\"%s\",\"count\":1}", ts, ts);
	if (path.oom || body.oom) {
		buf_free(&path);
		buf_free(&body);
		return -1;
	}
	rc = kube_request(h->client, "POST", path.data, KUBE_CT_JSON, body.data, body.len, &r, &err);
	if (rc == 0 && (r.status < 200 || r.status >= 300))
		rc = -1;
	kube_response_free(&r);
	buf_free(&path);
	buf_free(&body);
	return rc;
}

static const struct kubeops_ops http_kubeops = {
	.cordon = op_cordon,
	.cordon_mark = op_cordon_mark,
	.label = op_label,
	.annotate = op_annotate,
	.taint = op_taint,
	.evict = op_evict,
	.delete_node = op_delete_node,
	.node_pods = op_node_pods,
	.event = op_event,
	.bind = op_bind,
};

void kubeops_http_bind(struct kubeops_http *h, struct kubeops *out)
{
	out->ops = &http_kubeops;
	out->ctx = h;
}
