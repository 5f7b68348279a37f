/*
 * sim/apiserver_render: Kubernetes JSON for the simulated objects, Status
 * bodies, kubectl's server-side Tables and the JSON merge patch. Objects
 * carry what kubectl and luascale's informers read, not every field a real
 * server fills.
 */
#include "sim/apiserver/apiserver_render.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "model.h"
#include "quantity.h"

void apiserver_human_age(int64_t s, char *out, size_t len)
{
	int64_t m = s / 60, h = s / 3600, d = h / 24, y = d / 365;

	if (s < 0) {
		snprintf(out, len, "%s", s < -1 ? "<invalid>" : "0s");
	} else if (s < 120) {
		snprintf(out, len, "%llds", (long long)s);
	} else if (m < 10) {
		if (s % 60)
			snprintf(out, len, "%lldm%llds", (long long)m, (long long)(s % 60));
		else
			snprintf(out, len, "%lldm", (long long)m);
	} else if (m < 180) {
		snprintf(out, len, "%lldm", (long long)m);
	} else if (h < 8) {
		if (m % 60)
			snprintf(out, len, "%lldh%lldm", (long long)h, (long long)(m % 60));
		else
			snprintf(out, len, "%lldh", (long long)h);
	} else if (h < 48) {
		snprintf(out, len, "%lldh", (long long)h);
	} else if (h < 24 * 8) {
		if (h % 24)
			snprintf(out, len, "%lldd%lldh", (long long)d, (long long)(h % 24));
		else
			snprintf(out, len, "%lldd", (long long)d);
	} else if (d < 365 * 2) {
		snprintf(out, len, "%lldd", (long long)d);
	} else if (d < 365 * 8) {
		snprintf(out, len, "%lldy%lldd", (long long)y, (long long)(d % 365));
	} else {
		snprintf(out, len, "%lldy", (long long)y);
	}
}

void apiserver_uid_for(const char *kind, const char *ns, const char *name, char *out, size_t len)
{
	uint64_t h = 14695981039346656037ULL, h2;
	const char *parts[3] = {kind, ns, name};
	size_t i;

	for (i = 0; i < 3; i++) {
		const char *s;

		for (s = parts[i] ? parts[i] : ""; *s; s++)
			h = (h ^ (unsigned char)*s) * 1099511628211ULL;
		h = (h ^ '/') * 1099511628211ULL;
	}
	h2 = (h ^ 0x9e3779b97f4a7c15ULL) * 1099511628211ULL;
	snprintf(out, len, "%08x-%04x-5%03x-9%03x-%012llx", (unsigned)(h >> 32),
		 (unsigned)(h >> 16) & 0xffff, (unsigned)h & 0xfff, (unsigned)(h2 >> 52) & 0xfff,
		 (unsigned long long)(h2 & 0xffffffffffffULL));
}

/* ---- building blocks ---- */

static cJSON *add_obj(cJSON *parent, const char *key)
{
	cJSON *o = cJSON_CreateObject();

	if (o)
		cJSON_AddItemToObject(parent, key, o);
	return o;
}

static cJSON *add_arr(cJSON *parent, const char *key)
{
	cJSON *a = cJSON_CreateArray();

	if (a)
		cJSON_AddItemToObject(parent, key, a);
	return a;
}

static void add_time(cJSON *o, const char *key, int64_t t)
{
	char ts[32];

	model_format_time(t, ts, sizeof(ts));
	cJSON_AddStringToObject(o, key, ts);
}

static void add_kvs(cJSON *parent, const char *key, const struct kvlist *l)
{
	cJSON *o;
	size_t i;

	if (!l->n)
		return;
	o = add_obj(parent, key);
	for (i = 0; o && i < l->n; i++)
		cJSON_AddStringToObject(o, l->items[i].key, l->items[i].value ? l->items[i].value : "");
}

/* metadata first, then apiVersion and kind */
static cJSON *object_new(const char *api_version, const char *kind, cJSON **meta)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	*meta = add_obj(o, "metadata");
	cJSON_AddStringToObject(o, "apiVersion", api_version);
	cJSON_AddStringToObject(o, "kind", kind);
	return o;
}

static void add_resources(cJSON *parent, const char *key, const struct resources *r, bool pods)
{
	cJSON *o = add_obj(parent, key);
	char q[64];
	size_t i;

	if (!o)
		return;
	if (r->cpu_m > 0)
		cJSON_AddStringToObject(o, "cpu", quantity_format(r->cpu_m, QUANTITY_MILLI, q, sizeof(q)));
	if (r->memory > 0)
		cJSON_AddStringToObject(o, "memory",
					quantity_format(r->memory, QUANTITY_UNIT, q, sizeof(q)));
	if (r->ephemeral > 0)
		cJSON_AddStringToObject(o, "ephemeral-storage",
					quantity_format(r->ephemeral, QUANTITY_UNIT, q, sizeof(q)));
	if (pods && r->pods > 0)
		cJSON_AddStringToObject(o, "pods", quantity_format(r->pods, QUANTITY_UNIT, q, sizeof(q)));
	for (i = 0; i < r->n_ext; i++)
		if (r->ext[i].name && r->ext[i].value > 0)
			cJSON_AddStringToObject(o, r->ext[i].name,
						quantity_format(r->ext[i].value, QUANTITY_UNIT, q,
								sizeof(q)));
}

static const char *selector_op_str(enum selector_op op)
{
	switch (op) {
	case SELECTOR_IN: return "In";
	case SELECTOR_NOT_IN: return "NotIn";
	case SELECTOR_EXISTS: return "Exists";
	case SELECTOR_DOES_NOT_EXIST: return "DoesNotExist";
	case SELECTOR_GT: return "Gt";
	case SELECTOR_LT: return "Lt";
	}
	return "?";
}

static cJSON *requirement(const struct selector_req *r)
{
	cJSON *o = cJSON_CreateObject(), *vals;
	size_t i;

	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "key", r->key);
	cJSON_AddStringToObject(o, "operator", selector_op_str(r->op));
	if (r->n_values) {
		vals = add_arr(o, "values");
		for (i = 0; vals && i < r->n_values; i++)
			cJSON_AddItemToArray(vals, cJSON_CreateString(r->values[i]));
	}
	return o;
}

/* ---- nodes ---- */

static uint32_t fnv32(const char *a, const char *b)
{
	uint32_t h = 2166136261u;
	const char *s;

	for (s = a ? a : ""; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	h = (h ^ '/') * 16777619u;
	for (s = b ? b : ""; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

void apiserver_node_ip(const char *node, char *out, size_t len)
{
	uint32_t h = fnv32("node", node);

	snprintf(out, len, "10.%u.%u.%u", 64u + (h >> 24) % 64u, (h >> 8) & 0xffu, 1u + h % 254u);
}

void apiserver_pod_ip(const char *ns, const char *name, char *out, size_t len)
{
	uint32_t h = fnv32(ns, name);

	snprintf(out, len, "10.%u.%u.%u", 128u + (h >> 24) % 64u, (h >> 8) & 0xffu, 1u + h % 254u);
}

/* A label unless the node has it already. */
static void default_label(cJSON *labels, const struct node *n, const char *key, const char *value)
{
	if (value && value[0] && !kvlist_get(&n->labels, key) &&
	    !cJSON_GetObjectItemCaseSensitive(labels, key))
		cJSON_AddStringToObject(labels, key, value);
}

/* The node's labels, with the well-known ones a kubelet and a cloud
 * controller set (stable and the beta aliases they still write). */
static void node_labels(cJSON *meta, const struct node *n)
{
	cJSON *labels;
	const char *it = kvlist_get(&n->labels, "node.kubernetes.io/instance-type");
	const char *zone = kvlist_get(&n->labels, "topology.kubernetes.io/zone");
	const char *region = kvlist_get(&n->labels, "topology.kubernetes.io/region");
	char reg[64];
	size_t len;

	add_kvs(meta, "labels", &n->labels);
	labels = cJSON_GetObjectItemCaseSensitive(meta, "labels");
	if (!labels && !(labels = add_obj(meta, "labels")))
		return;
	if (!region && zone && (len = strlen(zone)) > 1 && len < sizeof(reg)) {
		/* a zone names its region: "us-east-1a", "europe-west1-b" */
		snprintf(reg, sizeof(reg), "%s", zone);
		if (len > 2 && reg[len - 2] == '-')
			reg[len - 2] = '\0';
		else if (reg[len - 1] >= 'a' && reg[len - 1] <= 'z')
			reg[len - 1] = '\0';
		region = reg;
	}
	default_label(labels, n, "beta.kubernetes.io/arch", "amd64");
	default_label(labels, n, "beta.kubernetes.io/os", "linux");
	default_label(labels, n, "kubernetes.io/arch", "amd64");
	default_label(labels, n, "kubernetes.io/hostname", n->name);
	default_label(labels, n, "kubernetes.io/os", "linux");
	default_label(labels, n, "node.kubernetes.io/instance-type", it ? it : "sim.standard");
	default_label(labels, n, "beta.kubernetes.io/instance-type", it ? it : "sim.standard");
	default_label(labels, n, "topology.kubernetes.io/zone", zone ? zone : "sim-1a");
	default_label(labels, n, "topology.kubernetes.io/region", region ? region : "sim-1");
	default_label(labels, n, "failure-domain.beta.kubernetes.io/zone", zone ? zone : "sim-1a");
	default_label(labels, n, "failure-domain.beta.kubernetes.io/region",
		      region ? region : "sim-1");
}

cJSON *apiserver_render_node(const struct sim_change *ch)
{
	const struct node *n = ch->node;
	cJSON *meta, *o = object_new("v1", "Node", &meta), *spec, *status, *conds, *c, *addr, *a,
	      *info, *taints, *endpoints, *kep;
	char ip[32], id[48], hex[40];
	size_t i, k;

	if (!o || !meta)
		goto fail;
	cJSON_AddStringToObject(meta, "name", n->name);
	add_time(meta, "creationTimestamp", n->created);
	node_labels(meta, n);
	add_kvs(meta, "annotations", &n->annotations);
	spec = add_obj(o, "spec");
	status = add_obj(o, "status");
	if (!spec || !status)
		goto fail;
	if (n->provider_id && n->provider_id[0])
		cJSON_AddStringToObject(spec, "providerID", n->provider_id);
	if (n->n_taints) {
		taints = add_arr(spec, "taints");
		for (i = 0; taints && i < n->n_taints; i++) {
			cJSON *t = cJSON_CreateObject();

			if (!t)
				goto fail;
			cJSON_AddStringToObject(t, "key", n->taints[i].key);
			if (n->taints[i].value && n->taints[i].value[0])
				cJSON_AddStringToObject(t, "value", n->taints[i].value);
			cJSON_AddStringToObject(t, "effect", taint_effect_str(n->taints[i].effect));
			cJSON_AddItemToArray(taints, t);
		}
	}
	if (n->unschedulable)
		cJSON_AddTrueToObject(spec, "unschedulable");
	add_resources(status, "capacity", &n->allocatable, true);
	add_resources(status, "allocatable", &n->allocatable, true);
	conds = add_arr(status, "conditions");
	if (!conds)
		goto fail;
	/* the pressure conditions a kubelet reports, then Ready */
	for (i = 0; i < 3; i++) {
		static const char *const types[] = {"MemoryPressure", "DiskPressure", "PIDPressure"};
		static const char *const reasons[] = {"KubeletHasSufficientMemory",
						      "KubeletHasNoDiskPressure",
						      "KubeletHasSufficientPID"};

		c = cJSON_CreateObject();
		if (!c)
			goto fail;
		cJSON_AddItemToArray(conds, c);
		cJSON_AddStringToObject(c, "type", types[i]);
		cJSON_AddStringToObject(c, "status", n->ready ? "False" : "Unknown");
		cJSON_AddStringToObject(c, "reason", n->ready ? reasons[i] : "NodeStatusUnknown");
		cJSON_AddStringToObject(c, "message", n->ready ? "kubelet has no pressure" :
					"Kubelet stopped posting node status.");
		add_time(c, "lastHeartbeatTime", ch->heartbeat_wall > 0 ? ch->heartbeat_wall : n->created);
		add_time(c, "lastTransitionTime", ch->transition_wall > 0 ? ch->transition_wall : n->created);
	}
	c = cJSON_CreateObject();
	if (!c)
		goto fail;
	cJSON_AddItemToArray(conds, c);
	cJSON_AddStringToObject(c, "type", "Ready");
	cJSON_AddStringToObject(c, "status", n->ready ? "True" : ch->kubelet_starting ? "False" : "Unknown");
	cJSON_AddStringToObject(c, "reason", n->ready ? "KubeletReady" : ch->kubelet_starting ?
				"KubeletNotReady" : "NodeStatusUnknown");
	cJSON_AddStringToObject(c, "message", n->ready ? "kubelet is posting ready status" :
				ch->kubelet_starting ? "container runtime network not ready" :
				"Kubelet stopped posting node status.");
	add_time(c, "lastHeartbeatTime", ch->heartbeat_wall > 0 ? ch->heartbeat_wall : n->created);
	add_time(c, "lastTransitionTime", ch->transition_wall > 0 ? ch->transition_wall : n->created);
	addr = add_arr(status, "addresses");
	if (!addr)
		goto fail;
	if (n->internal_ip && n->internal_ip[0])
		snprintf(ip, sizeof(ip), "%s", n->internal_ip);
	else
		apiserver_node_ip(n->name, ip, sizeof(ip));
	a = cJSON_CreateObject();
	if (!a)
		goto fail;
	cJSON_AddItemToArray(addr, a);
	cJSON_AddStringToObject(a, "type", "InternalIP");
	cJSON_AddStringToObject(a, "address", ip);
	a = cJSON_CreateObject();
	if (!a)
		goto fail;
	cJSON_AddItemToArray(addr, a);
	cJSON_AddStringToObject(a, "type", "Hostname");
	cJSON_AddStringToObject(a, "address", n->name);
	endpoints = add_obj(status, "daemonEndpoints");
	kep = endpoints ? add_obj(endpoints, "kubeletEndpoint") : NULL;
	if (kep)
		cJSON_AddNumberToObject(kep, "Port", 10250);
	info = add_obj(status, "nodeInfo");
	if (!info)
		goto fail;
	/* every field of a NodeSystemInfo is required: clients refuse a node without one */
	apiserver_uid_for("boot", NULL, n->name, id, sizeof(id));
	cJSON_AddStringToObject(info, "bootID", id);
	apiserver_uid_for("machine", NULL, n->name, id, sizeof(id));
	for (i = 0, k = 0; id[i] && k + 1 < sizeof(hex); i++)
		if (id[i] != '-')
			hex[k++] = id[i];
	hex[k] = '\0';
	cJSON_AddStringToObject(info, "machineID", hex);
	apiserver_uid_for("system", NULL, n->name, id, sizeof(id));
	cJSON_AddStringToObject(info, "systemUUID", id);
	cJSON_AddStringToObject(info, "kernelVersion", APISERVER_KERNEL_VERSION);
	cJSON_AddStringToObject(info, "osImage", APISERVER_OS_IMAGE);
	cJSON_AddStringToObject(info, "containerRuntimeVersion", APISERVER_RUNTIME_VERSION);
	cJSON_AddStringToObject(info, "kubeletVersion", APISERVER_KUBELET_VERSION);
	cJSON_AddStringToObject(info, "kubeProxyVersion", APISERVER_KUBELET_VERSION);
	cJSON_AddStringToObject(info, "operatingSystem", "linux");
	cJSON_AddStringToObject(info, "architecture", "amd64");
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}

/* ---- pods ---- */

static cJSON *condition(const char *type, bool status, const char *reason, const char *message,
			int64_t t)
{
	cJSON *c = cJSON_CreateObject();

	if (!c)
		return NULL;
	cJSON_AddStringToObject(c, "type", type);
	cJSON_AddStringToObject(c, "status", status ? "True" : "False");
	if (reason)
		cJSON_AddStringToObject(c, "reason", reason);
	if (message && message[0])
		cJSON_AddStringToObject(c, "message", message);
	cJSON_AddNullToObject(c, "lastProbeTime");
	add_time(c, "lastTransitionTime", t);
	return c;
}

static const char *controller_api_version(const char *kind)
{
	return strcmp(kind, "Job") == 0 ? "batch/v1" : "apps/v1";
}

static void pod_tolerations(cJSON *spec, const struct pod *p)
{
	cJSON *arr;
	size_t i;

	if (!p->n_tolerations)
		return;
	arr = add_arr(spec, "tolerations");
	for (i = 0; arr && i < p->n_tolerations; i++) {
		const struct toleration *t = &p->tolerations[i];
		cJSON *o = cJSON_CreateObject();

		if (!o)
			return;
		if (t->key && t->key[0])
			cJSON_AddStringToObject(o, "key", t->key);
		cJSON_AddStringToObject(o, "operator",
					t->op == TOLERATION_EXISTS ? "Exists" : "Equal");
		if (t->op == TOLERATION_EQUAL)
			cJSON_AddStringToObject(o, "value", t->value ? t->value : "");
		if (t->effect >= 0)
			cJSON_AddStringToObject(o, "effect",
						taint_effect_str((enum taint_effect)t->effect));
		cJSON_AddItemToArray(arr, o);
	}
}

static void pod_affinity(cJSON *spec, const struct pod *p)
{
	cJSON *aff, *na, *req, *terms;
	size_t i, k;

	if (!p->affinity.n_terms)
		return;
	aff = add_obj(spec, "affinity");
	na = aff ? add_obj(aff, "nodeAffinity") : NULL;
	req = na ? add_obj(na, "requiredDuringSchedulingIgnoredDuringExecution") : NULL;
	terms = req ? add_arr(req, "nodeSelectorTerms") : NULL;
	for (i = 0; terms && i < p->affinity.n_terms; i++) {
		const struct node_selector_term *t = &p->affinity.terms[i];
		cJSON *term = cJSON_CreateObject(), *arr;

		if (!term)
			return;
		if (t->n_exprs) {
			arr = add_arr(term, "matchExpressions");
			for (k = 0; arr && k < t->n_exprs; k++)
				cJSON_AddItemToArray(arr, requirement(&t->exprs[k]));
		}
		if (t->n_fields) {
			arr = add_arr(term, "matchFields");
			for (k = 0; arr && k < t->n_fields; k++)
				cJSON_AddItemToArray(arr, requirement(&t->fields[k]));
		}
		cJSON_AddItemToArray(terms, term);
	}
}

/* {"matchExpressions": [...]} of a label selector. */
static cJSON *label_selector_json(const struct label_selector *sel)
{
	cJSON *o = cJSON_CreateObject(), *arr;
	size_t i;

	if (!o || !sel->n)
		return o;
	arr = add_arr(o, "matchExpressions");
	for (i = 0; arr && i < sel->n; i++)
		cJSON_AddItemToArray(arr, requirement(&sel->reqs[i]));
	return o;
}

/* podAffinity or podAntiAffinity: its required terms. */
static void pod_terms(cJSON *aff, const char *key, const struct pod_term *terms, size_t n)
{
	cJSON *pa, *arr;
	size_t i, k;

	if (!n)
		return;
	pa = add_obj(aff, key);
	arr = pa ? add_arr(pa, "requiredDuringSchedulingIgnoredDuringExecution") : NULL;
	for (i = 0; arr && i < n; i++) {
		const struct pod_term *t = &terms[i];
		cJSON *o = cJSON_CreateObject();

		if (!o)
			return;
		if (!t->selector_null)
			cJSON_AddItemToObject(o, "labelSelector", label_selector_json(&t->selector));
		if (t->n_namespaces) {
			cJSON *ns = add_arr(o, "namespaces");

			for (k = 0; ns && k < t->n_namespaces; k++)
				cJSON_AddItemToArray(ns, cJSON_CreateString(t->namespaces[k]));
		}
		if (t->has_ns_selector)
			cJSON_AddItemToObject(o, "namespaceSelector",
					      label_selector_json(&t->ns_selector));
		cJSON_AddStringToObject(o, "topologyKey", t->topology_key ? t->topology_key : "");
		cJSON_AddItemToArray(arr, o);
	}
}

/* A scenario pod's relations, as its manifest would have them: pod
 * (anti-)affinity and DoNotSchedule spread (its hostPorts are on its
 * container). */
static void pod_relations(cJSON *spec, const struct pod *p)
{
	cJSON *aff, *arr;
	size_t i;

	if (p->n_affinity_terms || p->n_anti_terms) {
		aff = cJSON_GetObjectItemCaseSensitive(spec, "affinity");
		if (!aff)
			aff = add_obj(spec, "affinity");
		if (!aff)
			return;
		pod_terms(aff, "podAffinity", p->affinity_terms, p->n_affinity_terms);
		pod_terms(aff, "podAntiAffinity", p->anti_terms, p->n_anti_terms);
	}
	if (!p->n_spread)
		return;
	arr = add_arr(spec, "topologySpreadConstraints");
	for (i = 0; arr && i < p->n_spread; i++) {
		const struct spread_constraint *sc = &p->spread[i];
		cJSON *o = cJSON_CreateObject();

		if (!o)
			return;
		cJSON_AddNumberToObject(o, "maxSkew", sc->max_skew);
		cJSON_AddStringToObject(o, "topologyKey", sc->topology_key);
		cJSON_AddStringToObject(o, "whenUnsatisfiable", "DoNotSchedule");
		if (!sc->selector_null)
			cJSON_AddItemToObject(o, "labelSelector", label_selector_json(&sc->selector));
		if (sc->min_domains > 1)
			cJSON_AddNumberToObject(o, "minDomains", sc->min_domains);
		if (!sc->honor_affinity)
			cJSON_AddStringToObject(o, "nodeAffinityPolicy", "Ignore");
		if (sc->honor_taints)
			cJSON_AddStringToObject(o, "nodeTaintsPolicy", "Honor");
		cJSON_AddItemToArray(arr, o);
	}
}

/* A scenario pod's volumes: its local one (an emptyDir) and its claims,
 * each named as its StatefulSet's claim template ("<template>-<pod>"). */
static void pod_volumes(cJSON *spec, const struct pod *p)
{
	bool local = p->local_volume && p->local_volume[0];
	cJSON *vols, *v, *src;
	size_t i, n, len = strlen(p->name);

	if (!local && !p->n_claims)
		return;
	vols = add_arr(spec, "volumes");
	if (!vols)
		return;
	if (local && (v = cJSON_CreateObject())) {
		cJSON_AddStringToObject(v, "name", p->local_volume);
		add_obj(v, "emptyDir");
		cJSON_AddItemToArray(vols, v);
	}
	for (i = 0; i < p->n_claims; i++) {
		const char *c = p->claims[i];
		char name[128];

		n = strlen(c);
		if (n > len + 1 && strcmp(c + n - len, p->name) == 0 && c[n - len - 1] == '-')
			snprintf(name, sizeof(name), "%.*s", (int)(n - len - 1), c);
		else
			snprintf(name, sizeof(name), "claim-%zu", i);
		v = cJSON_CreateObject();
		if (!v)
			return;
		cJSON_AddStringToObject(v, "name", name);
		src = add_obj(v, "persistentVolumeClaim");
		if (src)
			cJSON_AddStringToObject(src, "claimName", c);
		cJSON_AddItemToArray(vols, v);
	}
}

/* The hostPorts of a scenario pod, on its one container. */
static void container_ports(cJSON *ctr, const struct pod *p)
{
	cJSON *arr;
	size_t i;

	if (!p->n_host_ports)
		return;
	arr = add_arr(ctr, "ports");
	for (i = 0; arr && i < p->n_host_ports; i++) {
		const struct host_port *hp = &p->host_ports[i];
		cJSON *o = cJSON_CreateObject();

		if (!o)
			return;
		cJSON_AddNumberToObject(o, "containerPort", hp->port);
		cJSON_AddNumberToObject(o, "hostPort", hp->port);
		cJSON_AddStringToObject(o, "protocol", hp->protocol == PORT_UDP ? "UDP" :
					hp->protocol == PORT_SCTP ? "SCTP" : "TCP");
		if (hp->ip && strcmp(hp->ip, "0.0.0.0") != 0)
			cJSON_AddStringToObject(o, "hostIP", hp->ip);
		cJSON_AddItemToArray(arr, o);
	}
}

static const char *ip_of(const char *name, const char *ns, char *out, size_t len)
{
	if (ns)
		apiserver_pod_ip(ns, name, out, len);
	else
		apiserver_node_ip(name, out, len);
	return out;
}

/* "podIP": "10.1.2.3", "podIPs": [{"ip": "10.1.2.3"}] */
static void add_ips(cJSON *status, const char *one, const char *many, const char *ip)
{
	cJSON *arr = add_arr(status, many), *e = cJSON_CreateObject();

	cJSON_AddStringToObject(status, one, ip);
	if (!arr || !e) {
		cJSON_Delete(e);
		return;
	}
	cJSON_AddStringToObject(e, "ip", ip);
	cJSON_AddItemToArray(arr, e);
}

cJSON *apiserver_render_pod(const struct sim_change *ch)
{
	const struct pod *p = ch->pod;
	cJSON *meta, *o = object_new("v1", "Pod", &meta), *spec, *status, *containers, *ctr,
	      *conds, *cs, *st, *state;
	bool bound = p->node_name && p->node_name[0];
	bool terminating = (p->flags & POD_TERMINATING) != 0;
	bool running = p->phase == POD_RUNNING;
	bool ready = running && !terminating;
	int64_t t_bound = ch->started_wall >= 0 ? ch->started_wall : p->created;
	char uid[48], ip[32];

	if (!o || !meta)
		goto fail;
	cJSON_AddStringToObject(meta, "name", p->name);
	cJSON_AddStringToObject(meta, "namespace", p->ns);
	add_time(meta, "creationTimestamp", p->created);
	if (terminating && ch->deleted_wall >= 0) {
		add_time(meta, "deletionTimestamp", ch->deleted_wall + ch->grace_s);
		cJSON_AddNumberToObject(meta, "deletionGracePeriodSeconds", (double)ch->grace_s);
	}
	add_kvs(meta, "labels", &p->labels);
	if (p->annotations.n || (p->flags & POD_SAFE_TO_EVICT_FALSE)) {
		cJSON *ann;

		add_kvs(meta, "annotations", &p->annotations);
		ann = cJSON_GetObjectItemCaseSensitive(meta, "annotations");
		if (!ann)
			ann = add_obj(meta, "annotations");
		if (ann && (p->flags & POD_SAFE_TO_EVICT_FALSE) &&
		    !cJSON_GetObjectItemCaseSensitive(ann, "cluster-autoscaler.kubernetes.io/safe-to-evict"))
			cJSON_AddStringToObject(ann, "cluster-autoscaler.kubernetes.io/safe-to-evict",
						"false");
	}
	if (p->controller_kind && p->controller_kind[0]) {
		cJSON *refs = add_arr(meta, "ownerReferences"), *r = cJSON_CreateObject();

		if (!refs || !r) {
			cJSON_Delete(r);
			goto fail;
		}
		if (ch->spec && ch->spec->owner_uid && ch->spec->owner_name &&
		    strcmp(ch->spec->owner_name, p->controller_name) == 0)
			snprintf(uid, sizeof(uid), "%s", ch->spec->owner_uid);
		else
			apiserver_uid_for(p->controller_kind, p->ns, p->controller_name, uid,
					  sizeof(uid));
		cJSON_AddStringToObject(r, "apiVersion", controller_api_version(p->controller_kind));
		cJSON_AddStringToObject(r, "kind", p->controller_kind);
		cJSON_AddStringToObject(r, "name", p->controller_name);
		cJSON_AddStringToObject(r, "uid", uid);
		cJSON_AddTrueToObject(r, "controller");
		cJSON_AddTrueToObject(r, "blockOwnerDeletion");
		cJSON_AddItemToArray(refs, r);
	}

	spec = add_obj(o, "spec");
	status = add_obj(o, "status");
	if (!spec || !status)
		goto fail;
	if (bound)
		cJSON_AddStringToObject(spec, "nodeName", p->node_name);
	if (ch->spec && ch->spec->containers_json) {
		/* a pod a client wrote: its containers as written (defaults applied) */
		containers = cJSON_Parse(ch->spec->containers_json);
		if (!cJSON_IsArray(containers) || !cJSON_GetArraySize(containers)) {
			cJSON_Delete(containers);
			goto fail;
		}
		cJSON_AddItemToObject(spec, "containers", containers);
		ctr = containers->child;
	} else {
		containers = add_arr(spec, "containers");
		ctr = cJSON_CreateObject();
		if (!containers || !ctr) {
			cJSON_Delete(ctr);
			goto fail;
		}
		cJSON_AddItemToArray(containers, ctr);
		cJSON_AddStringToObject(ctr, "name", "main");
		cJSON_AddStringToObject(ctr, "image", "luascale.io/sim:latest");
		container_ports(ctr, p);
		{
			struct resources req = p->requests;
			cJSON *res = add_obj(ctr, "resources");

			if (res)
				add_resources(res, "requests", &req, false);
		}
	}
	pod_volumes(spec, p);
	add_kvs(spec, "nodeSelector", &p->node_selector);
	pod_affinity(spec, p);
	/* a scenario's pod shows its relations as its manifest would; a
	 * client's are not rendered back (decoded, matchLabelKeys folded in,
	 * they are not what it wrote) */
	if (!(ch->spec && ch->spec->containers_json))
		pod_relations(spec, p);
	pod_tolerations(spec, p);
	cJSON_AddNumberToObject(spec, "priority", p->priority);
	cJSON_AddStringToObject(spec, "schedulerName", "default-scheduler");
	cJSON_AddNumberToObject(spec, "terminationGracePeriodSeconds", (double)ch->grace_s);
	cJSON_AddStringToObject(spec, "restartPolicy",
				ch->spec && ch->spec->restart_policy ? ch->spec->restart_policy :
				strcmp(p->controller_kind ? p->controller_kind : "", "Job") == 0 ?
				"OnFailure" : "Always");

	cJSON_AddStringToObject(status, "phase", pod_phase_str(p->phase));
	cJSON_AddStringToObject(status, "qosClass", "Burstable");
	conds = add_arr(status, "conditions");
	if (!conds)
		goto fail;
	if (bound) {
		bool done = p->phase == POD_SUCCEEDED || p->phase == POD_FAILED;

		cJSON_AddItemToArray(conds, condition("PodScheduled", true, NULL, NULL, t_bound));
		cJSON_AddItemToArray(conds, condition("Initialized", true, NULL, NULL, t_bound));
		cJSON_AddItemToArray(conds, condition("ContainersReady", ready,
						      done ? "PodCompleted" : NULL, NULL, t_bound));
		cJSON_AddItemToArray(conds, condition("Ready", ready, done ? "PodCompleted" : NULL,
						      NULL, t_bound));
		add_time(status, "startTime", t_bound);
		if (ch->host_ip && ch->host_ip[0])
			snprintf(ip, sizeof(ip), "%s", ch->host_ip);
		else
			ip_of(p->node_name, NULL, ip, sizeof(ip));
		add_ips(status, "hostIP", "hostIPs", ip);
		if (p->phase != POD_PENDING)
			add_ips(status, "podIP", "podIPs", ip_of(p->name, p->ns, ip, sizeof(ip)));
		cs = add_arr(status, "containerStatuses");
		st = cJSON_CreateObject();
		if (!cs || !st) {
			cJSON_Delete(st);
			goto fail;
		}
		cJSON_AddItemToArray(cs, st);
		cJSON_AddStringToObject(st, "name", ctr && cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ctr, "name")) ?
					cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ctr, "name")) : "main");
		cJSON_AddStringToObject(st, "image", ctr && cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ctr, "image")) ?
					cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ctr, "image")) : "luascale.io/sim:latest");
		cJSON_AddStringToObject(st, "imageID", "");
		cJSON_AddBoolToObject(st, "ready", ready);
		cJSON_AddBoolToObject(st, "started", running);
		cJSON_AddNumberToObject(st, "restartCount", 0);
		state = add_obj(st, "state");
		if (state && running) {
			cJSON *r = add_obj(state, "running");

			if (r)
				add_time(r, "startedAt", t_bound);
		} else if (state && done) {
			cJSON *t = add_obj(state, "terminated");

			if (t) {
				cJSON_AddNumberToObject(t, "exitCode", p->phase == POD_SUCCEEDED ? 0 : 1);
				cJSON_AddStringToObject(t, "reason",
							p->phase == POD_SUCCEEDED ? "Completed" : "Error");
			}
		}
	} else if (p->flags & POD_UNSCHEDULABLE) {
		cJSON_AddItemToArray(conds, condition("PodScheduled", false, "Unschedulable",
						      p->sched_message, p->created));
	}
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}

/* ---- PDBs, DaemonSets, Namespaces ---- */

/* "2" as a number, "50%" as a string. */
static void add_int_or_string(cJSON *o, const char *key, const char *v)
{
	char *end;
	long n;

	if (!v || !v[0])
		return;
	n = strtol(v, &end, 10);
	if (*end == '\0' && end != v)
		cJSON_AddNumberToObject(o, key, (double)n);
	else
		cJSON_AddStringToObject(o, key, v);
}

static void add_selector(cJSON *parent, const struct label_selector *sel)
{
	cJSON *s = add_obj(parent, "selector"), *ml = NULL, *me = NULL;
	size_t i;

	for (i = 0; s && i < sel->n; i++) {
		const struct selector_req *r = &sel->reqs[i];

		if (r->op == SELECTOR_IN && r->n_values == 1) {
			if (!ml)
				ml = add_obj(s, "matchLabels");
			if (ml)
				cJSON_AddStringToObject(ml, r->key, r->values[0]);
		} else {
			if (!me)
				me = add_arr(s, "matchExpressions");
			if (me)
				cJSON_AddItemToArray(me, requirement(r));
		}
	}
}

cJSON *apiserver_render_pdb(const struct pdb *b, const struct sim_pdb_status *st,
			    int64_t created)
{
	cJSON *meta, *o = object_new("policy/v1", "PodDisruptionBudget", &meta), *spec, *status;

	if (!o || !meta)
		goto fail;
	cJSON_AddStringToObject(meta, "name", b->name);
	cJSON_AddStringToObject(meta, "namespace", b->ns);
	cJSON_AddNumberToObject(meta, "generation", 1);
	add_time(meta, "creationTimestamp", created);
	spec = add_obj(o, "spec");
	status = add_obj(o, "status");
	if (!spec || !status)
		goto fail;
	add_int_or_string(spec, "minAvailable", b->min_available);
	add_int_or_string(spec, "maxUnavailable", b->max_unavailable);
	if (b->selects_all)
		add_obj(spec, "selector");
	else if (!b->selects_none)
		add_selector(spec, &b->selector);
	cJSON_AddNumberToObject(status, "observedGeneration", 1);
	cJSON_AddNumberToObject(status, "disruptionsAllowed", st ? st->disruptions_allowed : 0);
	cJSON_AddNumberToObject(status, "currentHealthy", st ? (double)st->current_healthy : 0);
	cJSON_AddNumberToObject(status, "desiredHealthy", st ? (double)st->desired_healthy : 0);
	cJSON_AddNumberToObject(status, "expectedPods", st ? (double)st->expected_pods : 0);
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}

cJSON *apiserver_render_daemonset(const struct sim_pod_spec *spec,
				  const struct sim_spec_counts *counts, int64_t created)
{
	cJSON *meta, *o = object_new("apps/v1", "DaemonSet", &meta), *s, *sel, *tmpl, *tmeta, *st,
	      *tspec, *ctrs, *ctr;
	char uid[48];

	if (!o || !meta)
		goto fail;
	apiserver_uid_for("DaemonSet", spec->ns, spec->name, uid, sizeof(uid));
	cJSON_AddStringToObject(meta, "name", spec->name);
	cJSON_AddStringToObject(meta, "namespace", spec->ns);
	cJSON_AddStringToObject(meta, "uid", uid);
	cJSON_AddNumberToObject(meta, "generation", 1);
	add_time(meta, "creationTimestamp", created);
	add_kvs(meta, "labels", &spec->labels);
	s = add_obj(o, "spec");
	if (!s)
		goto fail;
	sel = add_obj(s, "selector");
	if (sel)
		add_kvs(sel, "matchLabels", &spec->labels);
	tmpl = add_obj(s, "template");
	tmeta = tmpl ? add_obj(tmpl, "metadata") : NULL;
	if (tmeta)
		add_kvs(tmeta, "labels", &spec->labels);
	tspec = tmpl ? add_obj(tmpl, "spec") : NULL;
	ctrs = tspec ? add_arr(tspec, "containers") : NULL;
	ctr = ctrs ? cJSON_CreateObject() : NULL;
	if (ctr) {
		cJSON_AddItemToArray(ctrs, ctr);
		cJSON_AddStringToObject(ctr, "name", "main");
		cJSON_AddStringToObject(ctr, "image", "luascale.io/sim:latest");
	}
	st = add_obj(o, "status");
	if (!st)
		goto fail;
	/* the counts a DaemonSetStatus requires */
	cJSON_AddNumberToObject(st, "currentNumberScheduled", counts ? counts->scheduled : 0);
	cJSON_AddNumberToObject(st, "desiredNumberScheduled", counts ? counts->scheduled : 0);
	cJSON_AddNumberToObject(st, "numberMisscheduled", 0);
	cJSON_AddNumberToObject(st, "numberReady", counts ? counts->ready : 0);
	cJSON_AddNumberToObject(st, "numberAvailable", counts ? counts->ready : 0);
	cJSON_AddNumberToObject(st, "updatedNumberScheduled", counts ? counts->scheduled : 0);
	cJSON_AddNumberToObject(st, "observedGeneration", 1);
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}

cJSON *apiserver_render_namespace(const char *name, int64_t created)
{
	cJSON *meta, *o = object_new("v1", "Namespace", &meta), *status, *labels;

	if (!o || !meta) {
		cJSON_Delete(o);
		return NULL;
	}
	cJSON_AddStringToObject(meta, "name", name);
	add_time(meta, "creationTimestamp", created);
	labels = add_obj(meta, "labels");
	if (labels)
		cJSON_AddStringToObject(labels, "kubernetes.io/metadata.name", name);
	status = add_obj(o, "status");
	if (status)
		cJSON_AddStringToObject(status, "phase", "Active");
	return o;
}

/* ---- volumes ---- */

/* The simulated CSI driver that "provisions" the world's volumes, and the
 * size every claim asks for and gets. */
#define SIM_CSI_DRIVER "csi.sim.luascale.io"
#define SIM_VOLUME_SIZE "1Gi"

static void add_strings(cJSON *parent, const char *key, const char *one)
{
	cJSON *a = add_arr(parent, key);

	if (a)
		cJSON_AddItemToArray(a, cJSON_CreateString(one));
}

static void add_storage(cJSON *parent, const char *key)
{
	cJSON *o = add_obj(parent, key);

	if (o)
		cJSON_AddStringToObject(o, "storage", SIM_VOLUME_SIZE);
}

cJSON *apiserver_render_pvc(const struct sim_claim_view *c, int64_t created)
{
	cJSON *meta, *o = object_new("v1", "PersistentVolumeClaim", &meta), *spec, *status, *res;

	if (!o || !meta) {
		cJSON_Delete(o);
		return NULL;
	}
	cJSON_AddStringToObject(meta, "name", c->name);
	cJSON_AddStringToObject(meta, "namespace", c->ns);
	add_time(meta, "creationTimestamp", created);
	spec = add_obj(o, "spec");
	status = add_obj(o, "status");
	if (!spec || !status) {
		cJSON_Delete(o);
		return NULL;
	}
	add_strings(spec, "accessModes", "ReadWriteOnce");
	res = add_obj(spec, "resources");
	if (res)
		add_storage(res, "requests");
	cJSON_AddStringToObject(spec, "storageClassName", c->storage_class);
	cJSON_AddStringToObject(spec, "volumeMode", "Filesystem");
	if (c->pv)
		cJSON_AddStringToObject(spec, "volumeName", c->pv);
	cJSON_AddStringToObject(status, "phase", c->pv ? "Bound" : "Pending");
	if (c->pv) {
		add_strings(status, "accessModes", "ReadWriteOnce");
		add_storage(status, "capacity");
	}
	return o;
}

cJSON *apiserver_render_pv(const struct sim_claim_view *c, int64_t created)
{
	cJSON *meta, *o = object_new("v1", "PersistentVolume", &meta), *spec, *csi, *ref, *aff, *req,
	      *terms, *term, *exprs, *e;

	if (!o || !meta || !c->pv || !c->place_key || !c->place) {
		cJSON_Delete(o);
		return NULL;
	}
	cJSON_AddStringToObject(meta, "name", c->pv);
	add_time(meta, "creationTimestamp", created);
	spec = add_obj(o, "spec");
	if (!spec) {
		cJSON_Delete(o);
		return NULL;
	}
	add_storage(spec, "capacity");
	csi = add_obj(spec, "csi"); /* inline: the volume's source */
	if (csi) {
		cJSON_AddStringToObject(csi, "driver", SIM_CSI_DRIVER);
		cJSON_AddStringToObject(csi, "volumeHandle", c->pv);
	}
	add_strings(spec, "accessModes", "ReadWriteOnce");
	ref = add_obj(spec, "claimRef");
	if (ref) {
		cJSON_AddStringToObject(ref, "kind", "PersistentVolumeClaim");
		cJSON_AddStringToObject(ref, "namespace", c->ns);
		cJSON_AddStringToObject(ref, "name", c->name);
		cJSON_AddStringToObject(ref, "apiVersion", "v1");
	}
	cJSON_AddStringToObject(spec, "persistentVolumeReclaimPolicy", "Delete");
	cJSON_AddStringToObject(spec, "storageClassName", c->storage_class);
	cJSON_AddStringToObject(spec, "volumeMode", "Filesystem");
	aff = add_obj(spec, "nodeAffinity");
	req = aff ? add_obj(aff, "required") : NULL;
	terms = req ? add_arr(req, "nodeSelectorTerms") : NULL;
	term = terms ? cJSON_CreateObject() : NULL;
	exprs = term ? add_arr(term, "matchExpressions") : NULL;
	e = exprs ? cJSON_CreateObject() : NULL;
	if (!e) {
		cJSON_Delete(term);
		cJSON_Delete(o);
		return NULL;
	}
	cJSON_AddItemToArray(terms, term);
	cJSON_AddStringToObject(e, "key", c->place_key);
	cJSON_AddStringToObject(e, "operator", "In");
	add_strings(e, "values", c->place);
	cJSON_AddItemToArray(exprs, e);
	meta = add_obj(o, "status");
	if (meta)
		cJSON_AddStringToObject(meta, "phase", "Bound");
	return o;
}

cJSON *apiserver_render_storage_class(const char *name, int64_t created)
{
	cJSON *meta, *o = object_new("storage.k8s.io/v1", "StorageClass", &meta);

	if (!o || !meta) {
		cJSON_Delete(o);
		return NULL;
	}
	cJSON_AddStringToObject(meta, "name", name);
	add_time(meta, "creationTimestamp", created);
	cJSON_AddStringToObject(o, "provisioner", SIM_CSI_DRIVER);
	cJSON_AddStringToObject(o, "reclaimPolicy", "Delete");
	cJSON_AddStringToObject(o, "volumeBindingMode", "WaitForFirstConsumer");
	return o;
}

/* ---- Status ---- */

int apiserver_render_status(struct buf *b, int code, const char *reason, const char *message,
			    const char *kind, const char *name)
{
	return apiserver_render_status_details(b, code, reason, message, NULL, kind, name, NULL, 0);
}

int apiserver_render_status_details(struct buf *b, int code, const char *reason,
				    const char *message, const char *group, const char *kind,
				    const char *name, const char *causes_json, int retry_after)
{
	bool ok = code >= 200 && code < 300, comma = false;

	buf_puts(b, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":");
	buf_puts(b, ok ? "\"Success\"" : "\"Failure\"");
	if (message) {
		buf_puts(b, ",\"message\":");
		buf_json_string(b, message);
	}
	if (reason && reason[0]) {
		buf_puts(b, ",\"reason\":");
		buf_json_string(b, reason);
	}
	if (kind || name || (group && group[0]) || causes_json || retry_after > 0) {
		buf_puts(b, ",\"details\":{");
		if (name) {
			buf_puts(b, "\"name\":");
			buf_json_string(b, name);
			comma = true;
		}
		if (group && group[0]) {
			buf_puts(b, comma ? ",\"group\":" : "\"group\":");
			buf_json_string(b, group);
			comma = true;
		}
		if (kind) {
			buf_puts(b, comma ? ",\"kind\":" : "\"kind\":");
			buf_json_string(b, kind);
			comma = true;
		}
		if (causes_json) {
			buf_printf(b, "%s\"causes\":%s", comma ? "," : "", causes_json);
			comma = true;
		}
		if (retry_after > 0)
			buf_printf(b, "%s\"retryAfterSeconds\":%d", comma ? "," : "", retry_after);
		buf_puts(b, "}");
	}
	return buf_printf(b, ",\"code\":%d}", code);
}

/* ---- Tables ---- */

struct column {
	const char *name;
	const char *type;
	int priority;
	const char *description;
};

static const struct column node_cols[] = {
	{"Name", "string", 0, "Name must be unique within a namespace."},
	{"Status", "string", 0, "The status of the node"},
	{"Roles", "string", 0, "The roles of the node"},
	{"Age", "string", 0, "CreationTimestamp of the object."},
	{"Version", "string", 0, "Kubelet Version reported by the node."},
	{"Internal-IP", "string", 1, "List of internal IPs reported by the node."},
	{"External-IP", "string", 1, "List of external IPs reported by the node."},
	{"OS-Image", "string", 1, "OS image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy))."},
	{"Kernel-Version", "string", 1, "Kernel version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64)."},
	{"Container-Runtime", "string", 1, "Container runtime version reported by the node through runtime remote API (e.g. containerd://1.4.2)."},
	{NULL, NULL, 0, NULL},
};

static const struct column pod_cols[] = {
	{"Name", "string", 0, "Name must be unique within a namespace."},
	{"Ready", "string", 0, "The aggregate readiness state of this pod for accepting traffic."},
	{"Status", "string", 0, "The aggregate status of the containers in this pod."},
	{"Restarts", "string", 0, "The number of times the containers in this pod have been restarted."},
	{"Age", "string", 0, "CreationTimestamp of the object."},
	{"IP", "string", 1, "IP address allocated to the pod."},
	{"Node", "string", 1, "Name of the node the pod is assigned to."},
	{"Nominated Node", "string", 1, "Name of the node where the pod is nominated."},
	{"Readiness Gates", "string", 1, "Pod readiness gates."},
	{NULL, NULL, 0, NULL},
};

static const struct column pdb_cols[] = {
	{"Name", "string", 0, "Name must be unique within a namespace."},
	{"Min Available", "string", 0, "The minimum number of pods that must be available."},
	{"Max Unavailable", "string", 0, "The maximum number of pods that may be unavailable."},
	{"Allowed Disruptions", "integer", 0, "Number of pod disruptions that are currently allowed."},
	{"Age", "string", 0, "CreationTimestamp of the object."},
	{NULL, NULL, 0, NULL},
};

static const struct column event_cols[] = {
	{"Last Seen", "string", 0, "Time of the last occurrence."},
	{"Type", "string", 0, "Type of this event."},
	{"Reason", "string", 0, "Why the action was taken."},
	{"Object", "string", 0, "The object this event is about."},
	{"Message", "string", 0, "A description of the status of this operation."},
	{NULL, NULL, 0, NULL},
};

static const struct column lease_cols[] = {
	{"Name", "string", 0, "Name must be unique within a namespace."},
	{"Holder", "string", 0, "The holder of the lease."},
	{"Age", "string", 0, "CreationTimestamp of the object."},
	{NULL, NULL, 0, NULL},
};

static const struct column ns_cols[] = {
	{"Name", "string", 0, "Name must be unique within a namespace."},
	{"Status", "string", 0, "The status of the namespace"},
	{"Age", "string", 0, "CreationTimestamp of the object."},
	{NULL, NULL, 0, NULL},
};

static const struct column deploy_cols[] = {
	{"Name", "string", 0, "Name must be unique within a namespace."},
	{"Ready", "string", 0, "Number of the pods that are ready out of those desired."},
	{"Up-to-date", "integer", 0, "Total number of pods targeted by the deployment that have the desired template spec."},
	{"Available", "integer", 0, "Total number of available pods (ready for at least minReadySeconds)."},
	{"Age", "string", 0, "CreationTimestamp of the object."},
	{NULL, NULL, 0, NULL},
};

static const struct column rs_cols[] = {
	{"Name", "string", 0, "Name must be unique within a namespace."},
	{"Desired", "integer", 0, "Replicas is the number of desired replicas."},
	{"Current", "integer", 0, "Replicas is the most recently observed number of replicas."},
	{"Ready", "integer", 0, "The number of ready replicas for this replica set."},
	{"Age", "string", 0, "CreationTimestamp of the object."},
	{NULL, NULL, 0, NULL},
};

static const struct column job_cols[] = {
	{"Name", "string", 0, "Name must be unique within a namespace."},
	{"Status", "string", 0, "Status of the job."},
	{"Completions", "string", 0, "The desired number of successfully finished pods the job should be run with."},
	{"Age", "string", 0, "CreationTimestamp of the object."},
	{NULL, NULL, 0, NULL},
};

static const struct column pv_cols[] = {
	{"Name", "string", 0, "Name must be unique within a namespace."},
	{"Capacity", "string", 0, "A description of the persistent volume's resources and capacity."},
	{"Access Modes", "string", 0, "AccessModes contains all ways the volume can be mounted."},
	{"Reclaim Policy", "string", 0, "What happens to a persistent volume when released from its claim."},
	{"Status", "string", 0, "Phase indicates if a volume is available, bound to a claim, or released by a claim."},
	{"Claim", "string", 0, "ClaimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim."},
	{"StorageClass", "string", 0, "StorageClassName is the name of StorageClass to which this persistent volume belongs."},
	{"Age", "string", 0, "CreationTimestamp of the object."},
	{NULL, NULL, 0, NULL},
};

static const struct column pvc_cols[] = {
	{"Name", "string", 0, "Name must be unique within a namespace."},
	{"Status", "string", 0, "Phase represents the current phase of PersistentVolumeClaim."},
	{"Volume", "string", 0, "VolumeName is the binding reference to the PersistentVolume backing this claim."},
	{"Capacity", "string", 0, "Capacity represents the actual resources of the underlying volume."},
	{"Access Modes", "string", 0, "AccessModes contains the actual access modes the volume backing the PVC has."},
	{"StorageClass", "string", 0, "StorageClassName is the name of the StorageClass required by the claim."},
	{"Age", "string", 0, "CreationTimestamp of the object."},
	{NULL, NULL, 0, NULL},
};

static const struct column sc_cols[] = {
	{"Name", "string", 0, "Name must be unique within a namespace."},
	{"Provisioner", "string", 0, "Provisioner indicates the type of the provisioner."},
	{"ReclaimPolicy", "string", 0, "ReclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class."},
	{"VolumeBindingMode", "string", 0, "VolumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound."},
	{"AllowVolumeExpansion", "string", 0, "AllowVolumeExpansion shows whether the storage class allow volume expand."},
	{"Age", "string", 0, "CreationTimestamp of the object."},
	{NULL, NULL, 0, NULL},
};

static const struct column default_cols[] = {
	{"Name", "string", 0, "Name must be unique within a namespace."},
	{"Age", "string", 0, "CreationTimestamp of the object."},
	{NULL, NULL, 0, NULL},
};

static const struct column *columns(enum apiserver_resource r)
{
	switch (r) {
	case APISERVER_NODES: return node_cols;
	case APISERVER_PODS: return pod_cols;
	case APISERVER_PDBS: return pdb_cols;
	case APISERVER_EVENTS: return event_cols;
	case APISERVER_LEASES: return lease_cols;
	case APISERVER_NAMESPACES: return ns_cols;
	case APISERVER_DEPLOYMENTS: return deploy_cols;
	case APISERVER_REPLICASETS: return rs_cols;
	case APISERVER_JOBS: return job_cols;
	case APISERVER_PVS: return pv_cols;
	case APISERVER_PVCS: return pvc_cols;
	case APISERVER_STORAGE_CLASSES: return sc_cols;
	default: return default_cols;
	}
}

int apiserver_table_head(struct buf *b, enum apiserver_resource r, bool no_headers, uint64_t rv,
			 const char *cont, long remaining)
{
	const struct column *c;

	buf_printf(b, "{\"kind\":\"Table\",\"apiVersion\":\"meta.k8s.io/v1\","
		   "\"metadata\":{\"resourceVersion\":\"%llu\"", (unsigned long long)rv);
	if (cont && cont[0]) {
		buf_puts(b, ",\"continue\":");
		buf_json_string(b, cont);
		if (remaining >= 0)
			buf_printf(b, ",\"remainingItemCount\":%ld", remaining);
	}
	buf_puts(b, "},\"columnDefinitions\":[");
	for (c = columns(r); !no_headers && c->name; c++) {
		buf_printf(b, "%s{\"name\":", c == columns(r) ? "" : ",");
		buf_json_string(b, c->name);
		buf_printf(b, ",\"type\":\"%s\",\"format\":\"%s\",\"description\":", c->type,
			   strcmp(c->name, "Name") == 0 ? "name" : "");
		buf_json_string(b, c->description);
		buf_printf(b, ",\"priority\":%d}", c->priority);
	}
	return buf_puts(b, "],\"rows\":[");
}

int apiserver_table_tail(struct buf *b)
{
	return buf_puts(b, "]}");
}

static const char *str_at(const cJSON *o, const char *a, const char *b2, const char *c)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);

	if (b2)
		x = cJSON_GetObjectItemCaseSensitive(x, b2);
	if (c)
		x = cJSON_GetObjectItemCaseSensitive(x, c);
	return cJSON_IsString(x) ? x->valuestring : NULL;
}

static void cell_str(struct buf *b, bool *first, const char *s)
{
	if (!*first)
		buf_puts(b, ",");
	*first = false;
	buf_json_string(b, s ? s : "<none>");
}

static void cell_int(struct buf *b, bool *first, long long v)
{
	buf_printf(b, "%s%lld", *first ? "" : ",", v);
	*first = false;
}

static long long num_at(const cJSON *o, const char *a, const char *b2, long long dflt)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, a), b2);

	return cJSON_IsNumber(x) ? (long long)x->valuedouble : dflt;
}

/* Deployments: ready/desired, up to date, available; ReplicaSets: desired,
 * current, ready; Jobs: status, succeeded/completions. */
static void workload_cells(struct buf *b, bool *first, enum apiserver_resource r, const cJSON *o,
			   const char *age)
{
	char txt[64];

	if (r == APISERVER_DEPLOYMENTS) {
		snprintf(txt, sizeof(txt), "%lld/%lld", num_at(o, "status", "readyReplicas", 0),
			 num_at(o, "spec", "replicas", 1));
		cell_str(b, first, txt);
		cell_int(b, first, num_at(o, "status", "updatedReplicas", 0));
		cell_int(b, first, num_at(o, "status", "availableReplicas", 0));
	} else if (r == APISERVER_REPLICASETS) {
		cell_int(b, first, num_at(o, "spec", "replicas", 1));
		cell_int(b, first, num_at(o, "status", "replicas", 0));
		cell_int(b, first, num_at(o, "status", "readyReplicas", 0));
	} else {
		const cJSON *c;
		const char *st = "Running";

		cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(o, "status"), "conditions")) {
			const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "type"));
			const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "status"));

			if (t && v && strcmp(v, "True") == 0 && strcmp(t, "Complete") == 0)
				st = "Complete";
			else if (t && v && strcmp(v, "True") == 0 && strcmp(t, "Failed") == 0)
				st = "Failed";
		}
		cell_str(b, first, st);
		snprintf(txt, sizeof(txt), "%lld/%lld", num_at(o, "status", "succeeded", 0),
			 num_at(o, "spec", "completions", 1));
		cell_str(b, first, txt);
	}
	cell_str(b, first, age);
}

/* The first status.addresses entry of 'type', "<none>" when there is none. */
static const char *address_of(const cJSON *o, const char *type)
{
	const cJSON *a;

	cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(o, "status"), "addresses")) {
		const char *t = str_at(a, "type", NULL, NULL), *v = str_at(a, "address", NULL, NULL);

		if (t && v && strcmp(t, type) == 0)
			return v;
	}
	return "<none>";
}

static void node_cells(struct buf *b, bool *first, const cJSON *o, const char *age)
{
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(o, "spec");
	const cJSON *conds = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(o, "status"), "conditions");
	const cJSON *labels = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(o, "metadata"), "labels");
	const cJSON *c, *l;
	struct buf st = BUF_INIT, roles = BUF_INIT;
	const char *ready = "Unknown";
	static const char role_prefix[] = "node-role.kubernetes.io/";

	cJSON_ArrayForEach(c, conds) {
		const char *type = str_at(c, "type", NULL, NULL);

		if (type && strcmp(type, "Ready") == 0) {
			const char *s = str_at(c, "status", NULL, NULL);

			ready = s && strcmp(s, "True") == 0 ? "Ready" : "NotReady";
		}
	}
	buf_puts(&st, ready);
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(spec, "unschedulable")))
		buf_puts(&st, ",SchedulingDisabled");
	cJSON_ArrayForEach(l, labels) {
		const char *role = NULL;

		if (strncmp(l->string, role_prefix, sizeof(role_prefix) - 1) == 0)
			role = l->string + sizeof(role_prefix) - 1;
		else if (strcmp(l->string, "kubernetes.io/role") == 0 && cJSON_IsString(l))
			role = l->valuestring;
		if (role && role[0])
			buf_printf(&roles, "%s%s", roles.len ? "," : "", role);
	}
	cell_str(b, first, st.data);
	cell_str(b, first, roles.len ? roles.data : "<none>");
	cell_str(b, first, age);
	cell_str(b, first, str_at(o, "status", "nodeInfo", "kubeletVersion"));
	cell_str(b, first, address_of(o, "InternalIP"));
	cell_str(b, first, address_of(o, "ExternalIP"));
	cell_str(b, first, str_at(o, "status", "nodeInfo", "osImage"));
	cell_str(b, first, str_at(o, "status", "nodeInfo", "kernelVersion"));
	cell_str(b, first, str_at(o, "status", "nodeInfo", "containerRuntimeVersion"));
	buf_free(&st);
	buf_free(&roles);
}

static void pod_cells(struct buf *b, bool *first, const cJSON *o, const char *age)
{
	const cJSON *status = cJSON_GetObjectItemCaseSensitive(o, "status");
	const cJSON *cs = cJSON_GetObjectItemCaseSensitive(status, "containerStatuses"), *c;
	const char *phase = str_at(o, "status", "phase", NULL);
	const char *shown = phase ? phase : "Unknown";
	int total = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(o, "spec"), "containers"));
	int ready = 0;
	char rd[32];

	cJSON_ArrayForEach(c, cs)
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "ready")))
			ready++;
	if (phase && strcmp(phase, "Succeeded") == 0)
		shown = "Completed";
	else if (phase && strcmp(phase, "Failed") == 0)
		shown = "Error";
	if (str_at(o, "metadata", "deletionTimestamp", NULL))
		shown = "Terminating";
	snprintf(rd, sizeof(rd), "%d/%d", ready, total);
	cell_str(b, first, rd);
	cell_str(b, first, shown);
	cell_str(b, first, "0");
	cell_str(b, first, age);
	cell_str(b, first, str_at(o, "status", "podIP", NULL) ? str_at(o, "status", "podIP", NULL) :
		 "<none>");
	cell_str(b, first, str_at(o, "spec", "nodeName", NULL));
	cell_str(b, first, "<none>");
	cell_str(b, first, "<none>");
}

static const char *num_or_str(const cJSON *x, char *tmp, size_t len)
{
	if (cJSON_IsNumber(x)) {
		snprintf(tmp, len, "%.0f", x->valuedouble);
		return tmp;
	}
	return cJSON_IsString(x) ? x->valuestring : "N/A";
}

static void pdb_cells(struct buf *b, bool *first, const cJSON *o, const char *age)
{
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(o, "spec");
	const cJSON *allowed = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(o, "status"), "disruptionsAllowed");
	char t1[32], t2[32];

	cell_str(b, first, num_or_str(cJSON_GetObjectItemCaseSensitive(spec, "minAvailable"), t1,
				      sizeof(t1)));
	cell_str(b, first, num_or_str(cJSON_GetObjectItemCaseSensitive(spec, "maxUnavailable"), t2,
				      sizeof(t2)));
	cell_int(b, first, cJSON_IsNumber(allowed) ? (long long)allowed->valuedouble : 0);
	cell_str(b, first, age);
}

static void event_cells(struct buf *b, bool *first, const cJSON *o, int64_t now)
{
	const char *last = str_at(o, "series", "lastObservedTime", NULL);
	const char *kind = str_at(o, "involvedObject", "kind", NULL);
	const char *name = str_at(o, "involvedObject", "name", NULL);
	char age[32], obj[320];
	int64_t t;

	if (!last)
		last = str_at(o, "lastTimestamp", NULL, NULL);
	if (!last)
		last = str_at(o, "eventTime", NULL, NULL);
	if (!last)
		last = str_at(o, "metadata", "creationTimestamp", NULL);
	if (last && model_parse_time(last, &t) == 0)
		apiserver_human_age(now - t, age, sizeof(age));
	else
		snprintf(age, sizeof(age), "<unknown>");
	snprintf(obj, sizeof(obj), "%s/%s", kind ? kind : "", name ? name : "");
	if (obj[0] >= 'A' && obj[0] <= 'Z')
		obj[0] = (char)(obj[0] - 'A' + 'a');
	cell_str(b, first, age);
	cell_str(b, first, str_at(o, "type", NULL, NULL));
	cell_str(b, first, str_at(o, "reason", NULL, NULL));
	cell_str(b, first, obj);
	cell_str(b, first, str_at(o, "message", NULL, NULL));
}

/* "RWO,ROX" as kubectl abbreviates access modes. */
static void access_modes(const cJSON *arr, char *out, size_t len)
{
	const cJSON *m;
	size_t n = 0;

	out[0] = '\0';
	cJSON_ArrayForEach(m, arr) {
		const char *v = cJSON_GetStringValue(m), *a;

		if (!v)
			continue;
		a = strcmp(v, "ReadWriteOnce") == 0 ? "RWO" : strcmp(v, "ReadOnlyMany") == 0 ? "ROX" :
		    strcmp(v, "ReadWriteMany") == 0 ? "RWX" : strcmp(v, "ReadWriteOncePod") == 0 ? "RWOP" : v;
		n += (size_t)snprintf(out + n, n < len ? len - n : 0, "%s%s", n ? "," : "", a);
		if (n >= len)
			return;
	}
}

static void volume_cells(struct buf *b, bool *first, enum apiserver_resource r, const cJSON *o,
			 const char *age)
{
	char modes[64], claim[300];

	if (r == APISERVER_STORAGE_CLASSES) {
		const cJSON *ex = cJSON_GetObjectItemCaseSensitive(o, "allowVolumeExpansion");

		cell_str(b, first, str_at(o, "provisioner", NULL, NULL));
		cell_str(b, first, str_at(o, "reclaimPolicy", NULL, NULL));
		cell_str(b, first, str_at(o, "volumeBindingMode", NULL, NULL));
		cell_str(b, first, cJSON_IsTrue(ex) ? "true" : "false");
	} else if (r == APISERVER_PVS) {
		const char *ns = str_at(o, "spec", "claimRef", "namespace");
		const char *name = str_at(o, "spec", "claimRef", "name");

		access_modes(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "spec"),
							      "accessModes"), modes, sizeof(modes));
		snprintf(claim, sizeof(claim), "%s%s%s", name ? ns : "", name ? "/" : "", name ? name : "");
		cell_str(b, first, str_at(o, "spec", "capacity", "storage"));
		cell_str(b, first, modes);
		cell_str(b, first, str_at(o, "spec", "persistentVolumeReclaimPolicy", NULL));
		cell_str(b, first, str_at(o, "status", "phase", NULL));
		cell_str(b, first, claim);
		cell_str(b, first, str_at(o, "spec", "storageClassName", NULL));
	} else {
		access_modes(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "status"),
							      "accessModes"), modes, sizeof(modes));
		cell_str(b, first, str_at(o, "status", "phase", NULL));
		cell_str(b, first, str_at(o, "spec", "volumeName", NULL));
		cell_str(b, first, str_at(o, "status", "capacity", "storage"));
		cell_str(b, first, modes);
		cell_str(b, first, str_at(o, "spec", "storageClassName", NULL));
	}
	cell_str(b, first, age);
}

int apiserver_table_row(struct buf *b, enum apiserver_resource r, const struct apiserver_ver *v,
			int64_t now)
{
	cJSON *o = cJSON_ParseWithLength(v->json, v->len), *meta;
	char age[32], *mtext;
	bool first = true;

	if (!o)
		return -1;
	apiserver_human_age(now - v->created, age, sizeof(age));
	buf_puts(b, "{\"cells\":[");
	if (r != APISERVER_EVENTS)
		cell_str(b, &first, v->name);
	switch (r) {
	case APISERVER_NODES:
		node_cells(b, &first, o, age);
		break;
	case APISERVER_PODS:
		pod_cells(b, &first, o, age);
		break;
	case APISERVER_PDBS:
		pdb_cells(b, &first, o, age);
		break;
	case APISERVER_EVENTS:
		event_cells(b, &first, o, now);
		break;
	case APISERVER_LEASES:
		cell_str(b, &first, str_at(o, "spec", "holderIdentity", NULL));
		cell_str(b, &first, age);
		break;
	case APISERVER_NAMESPACES:
		cell_str(b, &first, str_at(o, "status", "phase", NULL));
		cell_str(b, &first, age);
		break;
	case APISERVER_DEPLOYMENTS:
	case APISERVER_REPLICASETS:
	case APISERVER_JOBS:
		workload_cells(b, &first, r, o, age);
		break;
	case APISERVER_PVS:
	case APISERVER_PVCS:
	case APISERVER_STORAGE_CLASSES:
		volume_cells(b, &first, r, o, age);
		break;
	default:
		cell_str(b, &first, age);
		break;
	}
	buf_puts(b, "],\"object\":{\"kind\":\"PartialObjectMetadata\","
		 "\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":");
	meta = cJSON_GetObjectItemCaseSensitive(o, "metadata");
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "resourceVersion");
	mtext = meta ? cJSON_PrintUnformatted(meta) : NULL;
	if (mtext && mtext[0] == '{' && mtext[1] != '}') {
		buf_printf(b, "{\"resourceVersion\":\"%llu\",", (unsigned long long)v->rv);
		buf_puts(b, mtext + 1);
	} else {
		buf_printf(b, "{\"resourceVersion\":\"%llu\"}", (unsigned long long)v->rv);
	}
	free(mtext);
	cJSON_Delete(o);
	return buf_puts(b, "}}");
}

/* ---- merge patch ---- */

cJSON *apiserver_merge_patch(cJSON *target, const cJSON *patch)
{
	const cJSON *p;

	if (!cJSON_IsObject(patch))
		return target; /* callers replace the target themselves */
	cJSON_ArrayForEach(p, patch) {
		cJSON *t;

		if (p->string[0] == '$')
			continue; /* strategic merge directives: not fields */
		t = cJSON_GetObjectItemCaseSensitive(target, p->string);
		if (cJSON_IsNull(p)) {
			if (t)
				cJSON_DeleteItemFromObjectCaseSensitive(target, p->string);
			continue;
		}
		if (cJSON_IsObject(p)) {
			if (!cJSON_IsObject(t)) {
				cJSON *n = cJSON_CreateObject();

				if (!n)
					return NULL;
				if (t)
					cJSON_ReplaceItemInObjectCaseSensitive(target, p->string, n);
				else
					cJSON_AddItemToObject(target, p->string, n);
				t = n;
			}
			if (!apiserver_merge_patch(t, p))
				return NULL;
			continue;
		}
		{
			cJSON *copy = cJSON_Duplicate(p, true);

			if (!copy)
				return NULL;
			if (t)
				cJSON_ReplaceItemInObjectCaseSensitive(target, p->string, copy);
			else
				cJSON_AddItemToObject(target, p->string, copy);
		}
	}
	return target;
}
