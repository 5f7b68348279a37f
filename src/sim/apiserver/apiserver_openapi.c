/*
 * sim/apiserver_openapi: OpenAPI v2 and v3 documents of the simulated API
 * server, built on request from the protobuf descriptors (the fields, their
 * types), the resource table (the paths and verbs) and the short table of
 * descriptions and required fields below.
 */
#include "sim/apiserver/apiserver_openapi.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sim/apiserver/apiserver_request.h"
#include "sim/apiserver/apiserver_patch.h"
#include "sim/apiserver/apiserver_proto.h"
#include "sim/apiserver/apiserver_store.h"

#define CORE "k8s.io.api.core.v1."
#define APPS "k8s.io.api.apps.v1."
#define META "k8s.io.apimachinery.pkg.apis.meta.v1."

/* What the descriptors cannot say: a description, and required fields. */
struct note {
	const char *name;        /* "pkg.Message" or "pkg.Message.field" */
	const char *text;
	bool required;
};

static const struct note notes[] = {
	{CORE "Pod", "Pod is a collection of containers that can run on a host.", false},
	{CORE "Pod.spec", "Specification of the desired behavior of the pod.", false},
	{CORE "Pod.status", "Most recently observed status of the pod.", false},
	{CORE "PodSpec", "PodSpec is a description of a pod.", false},
	{CORE "PodSpec.containers", "List of containers belonging to the pod.", true},
	{CORE "PodSpec.nodeName", "The node the pod is bound to.", false},
	{CORE "PodSpec.tolerations", "The pod's tolerations of node taints.", false},
	{CORE "PodSpec.nodeSelector", "Labels a node must have for the pod to fit on it.", false},
	{CORE "Container", "A single application container that you want to run within a pod.", false},
	{CORE "Container.name", "Name of the container specified as a DNS_LABEL.", true},
	{CORE "Container.image", "Container image name.", false},
	{CORE "Container.resources", "Compute resources required by this container.", false},
	{CORE "ContainerPort.containerPort", "Number of port to expose on the pod's IP address.", true},
	{CORE "EnvVar.name", "Name of the environment variable.", true},
	{CORE "ResourceClaim.name", "Name of the claim in pod.spec.resourceClaims.", true},
	{CORE "ResourceRequirements", "ResourceRequirements describes the compute resource requirements.", false},
	{CORE "Node", "Node is a worker node in Kubernetes.", false},
	{CORE "NodeSpec", "NodeSpec describes the attributes that a node is created with.", false},
	{CORE "NodeSpec.unschedulable", "Unschedulable controls node schedulability of new pods.", false},
	{CORE "NodeSpec.taints", "If specified, the node's taints.", false},
	{CORE "NodeStatus", "NodeStatus is information about the current status of a node.", false},
	{CORE "Taint.key", "The taint key to be applied to a node.", true},
	{CORE "Taint.effect", "The effect of the taint on pods that do not tolerate the taint.", true},
	{CORE "NodeCondition.type", "Type of node condition.", true},
	{CORE "NodeCondition.status", "Status of the condition, one of True, False, Unknown.", true},
	{CORE "NodeAddress.type", "Node address type, one of Hostname, ExternalIP or InternalIP.", true},
	{CORE "NodeAddress.address", "The node address.", true},
	{CORE "DaemonEndpoint.Port", "Port number of the given endpoint.", true},
	{CORE "NodeSystemInfo", "NodeSystemInfo is a set of ids/uuids to uniquely identify the node.", false},
	{CORE "NodeSystemInfo.machineID", "MachineID reported by the node.", true},
	{CORE "NodeSystemInfo.systemUUID", "SystemUUID reported by the node.", true},
	{CORE "NodeSystemInfo.bootID", "Boot ID reported by the node.", true},
	{CORE "NodeSystemInfo.kernelVersion", "Kernel Version reported by the node.", true},
	{CORE "NodeSystemInfo.osImage", "OS Image reported by the node.", true},
	{CORE "NodeSystemInfo.containerRuntimeVersion", "ContainerRuntime Version reported by the node.", true},
	{CORE "NodeSystemInfo.kubeletVersion", "Kubelet Version reported by the node.", true},
	{CORE "NodeSystemInfo.kubeProxyVersion", "Deprecated: KubeProxy Version reported by the node.", true},
	{CORE "NodeSystemInfo.operatingSystem", "The Operating System reported by the node.", true},
	{CORE "NodeSystemInfo.architecture", "The Architecture reported by the node.", true},
	{CORE "PodCondition.type", "Type is the type of the condition.", true},
	{CORE "PodCondition.status", "Status is the status of the condition.", true},
	{CORE "NamespaceCondition.type", "Type of namespace controller condition.", true},
	{CORE "NamespaceCondition.status", "Status of the condition, one of True, False, Unknown.", true},
	{CORE "ContainerStatus.name", "Name of the container.", true},
	{CORE "ContainerStatus.ready", "Whether the container is currently passing its readiness check.", true},
	{CORE "ContainerStatus.restartCount", "The number of times the container has been restarted.", true},
	{CORE "ContainerStatus.image", "The image the container is running.", true},
	{CORE "ContainerStatus.imageID", "The image ID of the container's image.", true},
	{CORE "ContainerStateTerminated.exitCode", "Exit status from the last termination of the container.", true},
	{CORE "ConfigMap", "ConfigMap holds configuration data for pods to consume.", false},
	{CORE "ConfigMap.data", "Data contains the configuration data.", false},
	{CORE "ConfigMap.binaryData", "BinaryData contains the binary data, base64 in JSON.", false},
	{CORE "Namespace", "Namespace provides a scope for Names.", false},
	{CORE "Event", "Event is a report of an event somewhere in the cluster.", false},
	{CORE "Event.metadata", "Standard object's metadata.", true},
	{CORE "Event.involvedObject", "The object that this event is about.", true},
	/* events.k8s.io/v1 */
	{"k8s.io.api.events.v1.Event", "Event is a report of an event somewhere in the cluster. It generally denotes some state change in the system.", false},
	{"k8s.io.api.events.v1.Event.eventTime", "eventTime is the time when this Event was first observed. It is required.", true},
	{"k8s.io.api.events.v1.Event.regarding", "regarding contains the object this Event is about.", false},
	{"k8s.io.api.events.v1.Event.note", "note is a human-readable description of the status of this operation.", false},
	{"k8s.io.api.events.v1.Event.reportingController", "reportingController is the name of the controller that emitted this Event.", false},
	{"k8s.io.api.events.v1.EventSeries.count", "count is the number of occurrences in this series up to the last heartbeat time.", true},
	{"k8s.io.api.events.v1.EventSeries.lastObservedTime", "lastObservedTime is the time when last Event from the series was seen before last heartbeat.", true},
	{CORE "Binding", "Binding ties one object to another; for example, a pod is bound to a node by a scheduler.", false},
	{CORE "Binding.target", "The target object that you want to bind to the standard object.", true},
	{CORE "PodTemplateSpec", "PodTemplateSpec describes the data a pod should have when created from a template.", false},
	{"k8s.io.api.coordination.v1.Lease", "Lease defines a lease concept.", false},
	{"k8s.io.api.coordination.v1.LeaseSpec", "LeaseSpec is a specification of a Lease.", false},
	{"k8s.io.api.policy.v1.Eviction", "Eviction evicts a pod from its node subject to certain policies and safety constraints.", false},
	{APPS "Deployment", "Deployment enables declarative updates for Pods and ReplicaSets.", false},
	{APPS "DeploymentSpec.selector", "Label selector for pods.", true},
	{APPS "DeploymentSpec.template", "Template describes the pods that will be created.", true},
	{APPS "DeploymentCondition.type", "Type of deployment condition.", true},
	{APPS "DeploymentCondition.status", "Status of the condition, one of True, False, Unknown.", true},
	{APPS "ReplicaSet", "ReplicaSet ensures that a specified number of pod replicas are running at any given time.", false},
	{APPS "ReplicaSetSpec.selector", "A label query over pods that should match the replica count.", true},
	{APPS "ReplicaSetStatus.replicas", "Replicas is the most recently observed number of replicas.", true},
	{APPS "ReplicaSetCondition.type", "Type of replica set condition.", true},
	{APPS "ReplicaSetCondition.status", "Status of the condition, one of True, False, Unknown.", true},
	{APPS "DaemonSet", "DaemonSet represents the configuration of a daemon set.", false},
	{APPS "DaemonSetSpec.selector", "A label query over pods that are managed by the daemon set.", true},
	{APPS "DaemonSetSpec.template", "An object that describes the pod that will be created.", true},
	{APPS "DaemonSetStatus.currentNumberScheduled", "The number of nodes running at least 1 daemon pod and are supposed to run the daemon pod.", true},
	{APPS "DaemonSetStatus.numberMisscheduled", "The number of nodes running the daemon pod, but are not supposed to run the daemon pod.", true},
	{APPS "DaemonSetStatus.desiredNumberScheduled", "The total number of nodes that should be running the daemon pod.", true},
	{APPS "DaemonSetStatus.numberReady", "The number of nodes that should be running the daemon pod and have one or more of it running and ready.", true},
	{APPS "DaemonSetCondition.type", "Type of DaemonSet condition.", true},
	{APPS "DaemonSetCondition.status", "Status of the condition, one of True, False, Unknown.", true},
	{"k8s.io.api.policy.v1.PodDisruptionBudget", "PodDisruptionBudget is an object to define the max disruption that can be caused to a collection of pods.", false},
	{"k8s.io.api.policy.v1.PodDisruptionBudgetStatus.disruptionsAllowed", "Number of pod disruptions that are currently allowed.", true},
	{"k8s.io.api.policy.v1.PodDisruptionBudgetStatus.currentHealthy", "current number of healthy pods", true},
	{"k8s.io.api.policy.v1.PodDisruptionBudgetStatus.desiredHealthy", "minimum desired number of healthy pods", true},
	{"k8s.io.api.policy.v1.PodDisruptionBudgetStatus.expectedPods", "total number of pods counted by this disruption budget", true},
	{META "Condition.type", "type of condition in CamelCase.", true},
	{META "Condition.status", "status of the condition, one of True, False, Unknown.", true},
	{META "Condition.lastTransitionTime", "The last time the condition transitioned from one status to another.", true},
	{META "Condition.reason", "A programmatic identifier indicating the reason for the condition's last transition.", true},
	{META "Condition.message", "A human readable message indicating details about the transition.", true},
	{"k8s.io.api.batch.v1.Job", "Job represents the configuration of a single job.", false},
	{"k8s.io.api.batch.v1.JobSpec.template", "Describes the pod that will be created when executing a job.", true},
	{"k8s.io.api.batch.v1.JobCondition.type", "Type of job condition.", true},
	{"k8s.io.api.batch.v1.JobCondition.status", "Status of the condition, one of True, False, Unknown.", true},
	{"k8s.io.api.authorization.v1.ResourceRule.verbs", "Verbs is a list of kubernetes resource API verbs.", true},
	{"k8s.io.api.authorization.v1.NonResourceRule.verbs", "Verbs is a list of kubernetes non-resource API verbs.", true},
	{"k8s.io.api.authorization.v1.SelfSubjectAccessReview.spec", "Spec holds information about the request being evaluated.", true},
	{"k8s.io.api.authorization.v1.SelfSubjectRulesReview.spec", "Spec holds information about the request being evaluated.", true},
	{"k8s.io.api.authorization.v1.SubjectAccessReviewStatus.allowed", "Allowed is required. True if the action would be allowed.", true},
	{"k8s.io.api.authorization.v1.SubjectRulesReviewStatus.resourceRules", "The list of actions the subject is allowed to perform on resources.", true},
	{"k8s.io.api.authorization.v1.SubjectRulesReviewStatus.nonResourceRules", "The list of actions the subject is allowed to perform on non-resources.", true},
	{"k8s.io.api.authorization.v1.SubjectRulesReviewStatus.incomplete", "Incomplete is true when the rules returned are not complete.", true},
	{META "ObjectMeta", "ObjectMeta is metadata that all persisted resources must have.", false},
	{META "ObjectMeta.name", "Name must be unique within a namespace.", false},
	{META "ObjectMeta.namespace", "Namespace defines the space within which each name must be unique.", false},
	{META "ObjectMeta.labels", "Map of string keys and values that can be used to organize and categorize objects.", false},
	{META "ObjectMeta.annotations", "Unstructured key value map stored with a resource.", false},
	{META "ListMeta", "ListMeta describes metadata that synthetic resources must have.", false},
	{META "OwnerReference.apiVersion", "API version of the referent.", true},
	{META "OwnerReference.kind", "Kind of the referent.", true},
	{META "OwnerReference.name", "Name of the referent.", true},
	{META "OwnerReference.uid", "UID of the referent.", true},
	{META "LabelSelectorRequirement.key", "key is the label key that the selector applies to.", true},
	{META "LabelSelectorRequirement.operator", "operator represents a key's relationship to a set of values.", true},
	{META "Time", "Time is a wrapper around time.Time, RFC 3339 in JSON.", false},
	{META "MicroTime", "MicroTime is a version of Time with microsecond level precision.", false},
	{META "Status", "Status is a return value for calls that don't return other objects.", false},
	{META "DeleteOptions", "DeleteOptions may be provided when deleting an API object.", false},
	{"k8s.io.apimachinery.pkg.api.resource.Quantity", "Quantity is a fixed-point representation of a number (\"500m\", \"2Gi\").", false},
	{"k8s.io.apimachinery.pkg.util.intstr.IntOrString", "IntOrString is a type that can hold an int32 or a string.", false},
};

/* The patch strategy and merge key kubectl reads from the schema to
 * compute its patches: the same the server's patch code merges by
 * (apiserver_patch.c). */
static void add_patch_meta(cJSON *p, const char *msg, const char *field)
{
	const char *strategy, *key;

	if (!apiserver_patch_meta(msg, field, &strategy, &key))
		return;
	if (key)
		cJSON_AddStringToObject(p, "x-kubernetes-patch-merge-key", key);
	cJSON_AddStringToObject(p, "x-kubernetes-patch-strategy", strategy);
}

static const struct note *note_of(const char *msg, const char *field)
{
	size_t i, n = strlen(msg);

	for (i = 0; i < sizeof(notes) / sizeof(notes[0]); i++) {
		const char *nm = notes[i].name;

		if (strncmp(nm, msg, n) != 0)
			continue;
		if (!field && nm[n] == '\0')
			return &notes[i];
		if (field && nm[n] == '.' && strcmp(nm + n + 1, field) == 0)
			return &notes[i];
	}
	return NULL;
}

/* "k8s.io.api.core.v1.Pod" -> "io.k8s.api.core.v1.Pod" */
static void def_name(const ProtobufCMessageDescriptor *d, char *out, size_t len)
{
	snprintf(out, len, "io.k8s.%s", strncmp(d->name, "k8s.io.", 7) == 0 ? d->name + 7 : d->name);
}

struct doc {
	bool v3;
	cJSON *defs;               /* definitions / components.schemas */
};

static const char *ref_prefix(const struct doc *d)
{
	return d->v3 ? "#/components/schemas/" : "#/definitions/";
}

static cJSON *ref_to(const struct doc *d, const ProtobufCMessageDescriptor *m)
{
	char name[200], ref[260];
	cJSON *o = cJSON_CreateObject();

	def_name(m, name, sizeof(name));
	snprintf(ref, sizeof(ref), "%s%s", ref_prefix(d), name);
	cJSON_AddStringToObject(o, "$ref", ref);
	return o;
}

static void add_definition(struct doc *d, const ProtobufCMessageDescriptor *m);

static bool is_map(const ProtobufCFieldDescriptor *fd)
{
	const ProtobufCMessageDescriptor *e = fd->descriptor;
	size_t n;

	if (fd->label != PROTOBUF_C_LABEL_REPEATED || fd->type != PROTOBUF_C_TYPE_MESSAGE || !e)
		return false;
	n = strlen(e->short_name);
	return n > 5 && strcmp(e->short_name + n - 5, "Entry") == 0 && e->n_fields == 2;
}

/* The schema of one value of a field. */
static cJSON *value_schema(struct doc *d, const ProtobufCFieldDescriptor *fd)
{
	cJSON *o;

	if (fd->type == PROTOBUF_C_TYPE_MESSAGE) {
		add_definition(d, fd->descriptor);
		return ref_to(d, fd->descriptor);
	}
	o = cJSON_CreateObject();
	switch (fd->type) {
	case PROTOBUF_C_TYPE_BOOL:
		cJSON_AddStringToObject(o, "type", "boolean");
		break;
	case PROTOBUF_C_TYPE_INT32:
		cJSON_AddStringToObject(o, "type", "integer");
		cJSON_AddStringToObject(o, "format", "int32");
		break;
	case PROTOBUF_C_TYPE_INT64:
		cJSON_AddStringToObject(o, "type", "integer");
		cJSON_AddStringToObject(o, "format", "int64");
		break;
	case PROTOBUF_C_TYPE_BYTES:
		cJSON_AddStringToObject(o, "type", "string");
		cJSON_AddStringToObject(o, "format", "byte");
		break;
	default:
		cJSON_AddStringToObject(o, "type", "string");
		break;
	}
	return o;
}

/* The kinds (group, version, kind) a message is the schema of. */
static void add_gvks(cJSON *schema, const ProtobufCMessageDescriptor *m)
{
	cJSON *arr = NULL;
	size_t i;

	for (i = 0; i < apiserver_proto_n_kinds; i++) {
		const struct apiserver_proto_kind *k = &apiserver_proto_kinds[i];
		cJSON *g;

		if (k->desc != m)
			continue;
		if (!arr)
			arr = cJSON_AddArrayToObject(schema, "x-kubernetes-group-version-kind");
		g = cJSON_CreateObject();
		cJSON_AddStringToObject(g, "group", k->group);
		cJSON_AddStringToObject(g, "kind", k->kind);
		cJSON_AddStringToObject(g, "version", k->version);
		cJSON_AddItemToArray(arr, g);
	}
}

/* Adds the schema of 'm' (and of every message it holds) once. */
/* The property of field 'fd' of message 'm' in 'props'; an inline field
 * (a volume's source) adds its own message's fields instead, as JSON has
 * them. A required one is added to '*req'. */
static void add_property(struct doc *d, const ProtobufCMessageDescriptor *m,
			 const ProtobufCFieldDescriptor *fd, cJSON *props, cJSON **req)
{
	const struct note *fn = note_of(m->name, fd->name);
	cJSON *p;

	if (apiserver_proto_is_inline(m, fd)) {
		const ProtobufCMessageDescriptor *in = fd->descriptor;
		unsigned i;

		for (i = 0; i < in->n_fields; i++)
			add_property(d, in, &in->fields[i], props, req);
		return;
	}
	if (is_map(fd)) {
		p = cJSON_CreateObject();
		cJSON_AddStringToObject(p, "type", "object");
		cJSON_AddItemToObject(p, "additionalProperties",
				      value_schema(d, &((const ProtobufCMessageDescriptor *)fd->descriptor)->fields[1]));
	} else if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
		p = cJSON_CreateObject();
		cJSON_AddStringToObject(p, "type", "array");
		cJSON_AddItemToObject(p, "items", value_schema(d, fd));
	} else if (fd->type == PROTOBUF_C_TYPE_MESSAGE && d->v3 && fn) {
		/* a reference with a description of its own, as v3 writes it */
		cJSON *all;

		p = cJSON_CreateObject();
		all = cJSON_AddArrayToObject(p, "allOf");
		cJSON_AddItemToArray(all, value_schema(d, fd));
	} else {
		p = value_schema(d, fd);
	}
	if (fn && !cJSON_GetObjectItemCaseSensitive(p, "$ref"))
		cJSON_AddStringToObject(p, "description", fn->text);
	add_patch_meta(p, m->name, fd->name);
	cJSON_AddItemToObject(props, fd->name, p);
	if (fn && fn->required) {
		if (!*req)
			*req = cJSON_CreateArray();
		cJSON_AddItemToArray(*req, cJSON_CreateString(fd->name));
	}
}

static void add_definition(struct doc *d, const ProtobufCMessageDescriptor *m)
{
	char name[200];
	const struct note *nt = note_of(m->name, NULL);
	cJSON *s, *props, *req = NULL;
	unsigned i;
	bool kind = false;

	def_name(m, name, sizeof(name));
	if (cJSON_GetObjectItemCaseSensitive(d->defs, name))
		return;
	s = cJSON_AddObjectToObject(d->defs, name);
	if (nt)
		cJSON_AddStringToObject(s, "description", nt->text);
	/* the types that are scalars in JSON */
	if (strcmp(m->name, META "Time") == 0 || strcmp(m->name, META "MicroTime") == 0) {
		cJSON_AddStringToObject(s, "type", "string");
		cJSON_AddStringToObject(s, "format", "date-time");
		return;
	}
	if (strcmp(m->name, "k8s.io.apimachinery.pkg.api.resource.Quantity") == 0) {
		if (d->v3) {
			cJSON *one = cJSON_AddArrayToObject(s, "oneOf"), *a = cJSON_CreateObject(),
			      *b = cJSON_CreateObject();

			cJSON_AddStringToObject(a, "type", "string");
			cJSON_AddStringToObject(b, "type", "number");
			cJSON_AddItemToArray(one, a);
			cJSON_AddItemToArray(one, b);
		} else {
			cJSON_AddStringToObject(s, "type", "string");
		}
		return;
	}
	if (strcmp(m->name, "k8s.io.apimachinery.pkg.util.intstr.IntOrString") == 0) {
		if (d->v3) {
			cJSON_AddTrueToObject(s, "x-kubernetes-int-or-string");
		} else {
			cJSON_AddStringToObject(s, "type", "string");
			cJSON_AddStringToObject(s, "format", "int-or-string");
		}
		return;
	}
	if (strcmp(m->name, META "FieldsV1") == 0) {
		cJSON_AddStringToObject(s, "type", "object");
		return;
	}
	for (i = 0; i < apiserver_proto_n_kinds; i++)
		if (apiserver_proto_kinds[i].desc == m)
			kind = true;
	cJSON_AddStringToObject(s, "type", "object");
	props = cJSON_AddObjectToObject(s, "properties");
	if (kind) {
		cJSON *av = cJSON_AddObjectToObject(props, "apiVersion");
		cJSON *kd = cJSON_AddObjectToObject(props, "kind");

		cJSON_AddStringToObject(av, "description",
					"APIVersion defines the versioned schema of this representation of an object.");
		cJSON_AddStringToObject(av, "type", "string");
		cJSON_AddStringToObject(kd, "description",
					"Kind is a string value representing the REST resource this object represents.");
		cJSON_AddStringToObject(kd, "type", "string");
	}
	for (i = 0; i < m->n_fields; i++)
		add_property(d, m, &m->fields[i], props, &req);
	if (req)
		cJSON_AddItemToObject(s, "required", req);
	add_gvks(s, m);
}

/* ---- paths ---- */

/* The resources of a group (the authorization reviews ride along). */
struct res {
	const char *group, *name, *kind, *verbs;
	bool namespaced, validates;
};

static size_t resources_of(const char *group, struct res *out, size_t cap)
{
	size_t i, n = 0;

	for (i = 0; i < APISERVER_N_RESOURCES && n < cap; i++) {
		const struct apiserver_resdef *r = &apiserver_resources[i];

		if (strcmp(r->group, group) != 0)
			continue;
		out[n++] = (struct res){r->group, r->name, r->kind, r->verbs, r->namespaced,
					r->client_owned || i == APISERVER_PODS};
	}
	if (strcmp(group, "authorization.k8s.io") == 0 && n + 2 <= cap) {
		out[n++] = (struct res){group, "selfsubjectaccessreviews", "SelfSubjectAccessReview",
					"create", false, false};
		out[n++] = (struct res){group, "selfsubjectrulesreviews", "SelfSubjectRulesReview",
					"create", false, false};
	}
	return n;
}

static bool has_verb(const char *verbs, const char *v)
{
	size_t n = strlen(v);
	const char *p = verbs;

	while ((p = strstr(p, v)) != NULL) {
		if ((p == verbs || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return true;
		p += n;
	}
	return false;
}

static void add_param(const struct doc *d, cJSON *params, const char *name, const char *in,
		      const char *desc)
{
	cJSON *p = cJSON_CreateObject();

	cJSON_AddStringToObject(p, "name", name);
	cJSON_AddStringToObject(p, "in", in);
	cJSON_AddStringToObject(p, "description", desc);
	if (strcmp(in, "path") == 0)
		cJSON_AddTrueToObject(p, "required");
	if (d->v3) {
		cJSON *sc = cJSON_AddObjectToObject(p, "schema");

		cJSON_AddStringToObject(sc, "type", "string");
		cJSON_AddTrueToObject(sc, "uniqueItems");
	} else {
		cJSON_AddStringToObject(p, "type", "string");
		cJSON_AddTrueToObject(p, "uniqueItems");
	}
	cJSON_AddItemToArray(params, p);
}

static cJSON *body_schema(const struct doc *d, const ProtobufCMessageDescriptor *m)
{
	return m ? ref_to(d, m) : cJSON_CreateObject();
}

/* One operation: 'action' as Kubernetes names it, 'm' the object's schema. */
static void add_op(struct doc *d, cJSON *item, const char *method, const char *action,
		   const struct res *r, const char *kind, const ProtobufCMessageDescriptor *m,
		   bool body, bool writes)
{
	cJSON *op = cJSON_AddObjectToObject(item, method), *gvk, *params, *resp, *ok;
	char id[200];

	snprintf(id, sizeof(id), "%s%s%s", action, r->namespaced ? "Namespaced" : "", kind);
	cJSON_AddStringToObject(op, "description", action);
	cJSON_AddStringToObject(op, "operationId", id);
	params = cJSON_AddArrayToObject(op, "parameters");
	if (writes) {
		add_param(d, params, "dryRun", "query",
			  "When present, indicates that modifications should not be persisted.");
		add_param(d, params, "fieldManager", "query",
			  "A name associated with the actor or entity that is making these changes.");
		if (r->validates)
			add_param(d, params, "fieldValidation", "query",
				  "How the server treats unknown and duplicate fields: Ignore, Warn or Strict.");
	}
	if (body) {
		if (d->v3) {
			static const char *const patch_types[] = {
				"application/apply-patch+yaml", "application/json-patch+json",
				"application/merge-patch+json", "application/strategic-merge-patch+json",
				NULL};
			cJSON *rb = cJSON_AddObjectToObject(op, "requestBody");
			cJSON *ct = cJSON_AddObjectToObject(rb, "content");
			size_t k;

			if (strcmp(method, "patch") == 0) {
				/* the patch types the server takes (kubectl apply looks for
				 * strategic merge here before computing one) */
				for (k = 0; patch_types[k]; k++) {
					cJSON *t = cJSON_AddObjectToObject(ct, patch_types[k]);
					cJSON *sc = cJSON_AddObjectToObject(t, "schema");

					cJSON_AddStringToObject(sc, "type", "object");
				}
			} else {
				cJSON *any = cJSON_AddObjectToObject(ct, "*/*");

				cJSON_AddItemToObject(any, "schema", body_schema(d, m));
			}
			cJSON_AddTrueToObject(rb, "required");
		} else {
			cJSON *b = cJSON_CreateObject();

			if (strcmp(method, "patch") == 0) {
				const char *types[] = {"application/apply-patch+yaml",
						       "application/json-patch+json",
						       "application/merge-patch+json",
						       "application/strategic-merge-patch+json"};

				cJSON_AddItemToObject(op, "consumes", cJSON_CreateStringArray(types, 4));
			}
			cJSON_AddStringToObject(b, "name", "body");
			cJSON_AddStringToObject(b, "in", "body");
			cJSON_AddTrueToObject(b, "required");
			cJSON_AddItemToObject(b, "schema", strcmp(method, "patch") == 0 ?
					      cJSON_CreateObject() : body_schema(d, m));
			cJSON_AddItemToArray(params, b);
		}
	}
	resp = cJSON_AddObjectToObject(op, "responses");
	ok = cJSON_AddObjectToObject(resp, strcmp(method, "post") == 0 ? "201" : "200");
	cJSON_AddStringToObject(ok, "description", "OK");
	if (m) {
		if (d->v3) {
			cJSON *c = cJSON_AddObjectToObject(ok, "content");
			cJSON *j = cJSON_AddObjectToObject(c, "application/json");

			cJSON_AddItemToObject(j, "schema", ref_to(d, m));
		} else {
			cJSON_AddItemToObject(ok, "schema", ref_to(d, m));
		}
	}
	cJSON_AddStringToObject(op, "x-kubernetes-action", action);
	gvk = cJSON_AddObjectToObject(op, "x-kubernetes-group-version-kind");
	cJSON_AddStringToObject(gvk, "group", r->group);
	cJSON_AddStringToObject(gvk, "kind", r->kind);
	cJSON_AddStringToObject(gvk, "version", "v1");
}

static cJSON *path_item(const struct doc *d, cJSON *paths, const char *path, bool ns, bool name)
{
	cJSON *it = cJSON_AddObjectToObject(paths, path), *params;

	if (ns || name) {
		params = cJSON_AddArrayToObject(it, "parameters");
		if (name)
			add_param(d, params, "name", "path", "name of the object");
		if (ns)
			add_param(d, params, "namespace", "path", "object name and auth scope");
	}
	return it;
}

/* Paths and schemas of one group's resources. */
static void add_group(struct doc *d, cJSON *paths, const char *group)
{
	struct res rs[16];
	size_t n = resources_of(group, rs, 16), i;
	char prefix[120], coll[300], item[300], kind[96], av[96];

	if (group[0])
		snprintf(prefix, sizeof(prefix), "/apis/%s/v1", group);
	else
		snprintf(prefix, sizeof(prefix), "/api/v1");
	snprintf(av, sizeof(av), "%s%sv1", group, group[0] ? "/" : "");
	for (i = 0; i < n; i++) {
		const struct res *r = &rs[i];
		const ProtobufCMessageDescriptor *m = apiserver_proto_find(av, r->kind), *lm;
		cJSON *it;

		snprintf(kind, sizeof(kind), "%sList", r->kind);
		lm = apiserver_proto_find(av, kind);
		if (m)
			add_definition(d, m);
		if (lm)
			add_definition(d, lm);
		if (r->namespaced) {
			snprintf(coll, sizeof(coll), "%s/namespaces/{namespace}/%s", prefix, r->name);
			snprintf(item, sizeof(item), "%s/namespaces/{namespace}/%s/{name}", prefix,
				 r->name);
		} else {
			snprintf(coll, sizeof(coll), "%s/%s", prefix, r->name);
			snprintf(item, sizeof(item), "%s/%s/{name}", prefix, r->name);
		}
		it = path_item(d, paths, coll, r->namespaced, false);
		if (has_verb(r->verbs, "list"))
			add_op(d, it, "get", "list", r, r->kind, lm, false, false);
		if (has_verb(r->verbs, "create"))
			add_op(d, it, "post", "post", r, r->kind, m, true, true);
		if (has_verb(r->verbs, "get") || has_verb(r->verbs, "update") ||
		    has_verb(r->verbs, "patch") || has_verb(r->verbs, "delete")) {
			it = path_item(d, paths, item, r->namespaced, true);
			if (has_verb(r->verbs, "get"))
				add_op(d, it, "get", "get", r, r->kind, m, false, false);
			if (has_verb(r->verbs, "update"))
				add_op(d, it, "put", "put", r, r->kind, m, true, true);
			if (has_verb(r->verbs, "patch"))
				add_op(d, it, "patch", "patch", r, r->kind, m, true, true);
			if (has_verb(r->verbs, "delete"))
				add_op(d, it, "delete", "delete", r, r->kind,
				       apiserver_proto_find("v1", "Status"), false, false);
		}
		if (r->namespaced && has_verb(r->verbs, "list")) {
			snprintf(coll, sizeof(coll), "%s/%s", prefix, r->name);
			it = path_item(d, paths, coll, false, false);
			add_op(d, it, "get", "list", r, r->kind, lm, false, false);
		}
	}
}

/* The groups the server serves, core first. */
static const char *const served[] = {"", "apps", "batch", "policy", "coordination.k8s.io",
				     "authorization.k8s.io", "events.k8s.io", "storage.k8s.io", NULL};

static int print_into(cJSON *root, struct buf *b)
{
	char *t = root ? cJSON_PrintUnformatted(root) : NULL;

	cJSON_Delete(root);
	if (!t)
		return -1;
	buf_puts(b, t);
	free(t);
	return b->oom ? -1 : 0;
}

int apiserver_openapi_v2(struct buf *b)
{
	cJSON *root = cJSON_CreateObject(), *info, *paths;
	struct doc d = {false, NULL};
	size_t i;

	if (!root)
		return -1;
	cJSON_AddStringToObject(root, "swagger", "2.0");
	info = cJSON_AddObjectToObject(root, "info");
	cJSON_AddStringToObject(info, "title", "Kubernetes");
	cJSON_AddStringToObject(info, "version", "v1.32.0-luascale-sim");
	paths = cJSON_AddObjectToObject(root, "paths");
	d.defs = cJSON_AddObjectToObject(root, "definitions");
	for (i = 0; served[i]; i++)
		add_group(&d, paths, served[i]);
	add_definition(&d, apiserver_proto_find("v1", "Status"));
	add_definition(&d, apiserver_proto_find("v1", "DeleteOptions"));
	return print_into(root, b);
}

static int group_of(const char *gv, char *group, size_t len)
{
	size_t i, n;

	if (strcmp(gv, "api/v1") == 0) {
		group[0] = '\0';
		return 0;
	}
	if (strncmp(gv, "apis/", 5) != 0)
		return -1;
	n = strlen(gv);
	if (n < 9 || strcmp(gv + n - 3, "/v1") != 0 || n - 8 >= len)
		return -1;
	memcpy(group, gv + 5, n - 8);
	group[n - 8] = '\0';
	for (i = 1; served[i]; i++)
		if (strcmp(served[i], group) == 0)
			return 0;
	return -1;
}

int apiserver_openapi_v3(const char *gv, struct buf *b)
{
	cJSON *root, *info, *paths, *comp;
	struct doc d = {true, NULL};
	char group[96];

	if (group_of(gv, group, sizeof(group)) < 0)
		return -1;
	root = cJSON_CreateObject();
	if (!root)
		return -1;
	cJSON_AddStringToObject(root, "openapi", "3.0.0");
	info = cJSON_AddObjectToObject(root, "info");
	cJSON_AddStringToObject(info, "title", "Kubernetes");
	cJSON_AddStringToObject(info, "version", "v1.32.0-luascale-sim");
	paths = cJSON_AddObjectToObject(root, "paths");
	comp = cJSON_AddObjectToObject(root, "components");
	d.defs = cJSON_AddObjectToObject(comp, "schemas");
	add_group(&d, paths, group);
	add_definition(&d, apiserver_proto_find("v1", "Status"));
	add_definition(&d, apiserver_proto_find("v1", "DeleteOptions"));
	return print_into(root, b);
}

/* FNV-1a of a document, as its cache-busting hash. */
static uint64_t fnv(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= 1099511628211ULL;
	}
	return h;
}

int apiserver_openapi_v3_index(struct buf *b)
{
	size_t i;

	buf_puts(b, "{\"paths\":{");
	for (i = 0; served[i]; i++) {
		char gv[128];
		struct buf doc = BUF_INIT;

		if (served[i][0])
			snprintf(gv, sizeof(gv), "apis/%s/v1", served[i]);
		else
			snprintf(gv, sizeof(gv), "api/v1");
		if (apiserver_openapi_v3(gv, &doc) < 0) {
			buf_free(&doc);
			return -1;
		}
		buf_printf(b, "%s\"%s\":{\"serverRelativeURL\":\"/openapi/v3/%s?hash=%016llX\"}",
			   i ? "," : "", gv, gv, (unsigned long long)fnv(doc.data, doc.len));
		buf_free(&doc);
	}
	buf_puts(b, "}}");
	return b->oom ? -1 : 0;
}

/* Does an Accept header take JSON (or say nothing)? */
static bool takes_json(const char *accept)
{
	return !accept || !accept[0] || strstr(accept, "application/json") ||
	       strstr(accept, "*/*") || strstr(accept, "application/*");
}

void apiserver_openapi_route(const char *accept, char **segs, int n, struct reply *out)
{
	char gv[300];
	int rc;

	if (n == 0 || (strcmp(segs[0], "v2") != 0 && strcmp(segs[0], "v3") != 0) ||
	    (strcmp(segs[0], "v2") == 0 && n != 1)) {
		apiserver_reply_status(out, 404, "NotFound",
				       "the server could not find the requested resource", NULL, NULL);
		return;
	}
	if (!takes_json(accept)) {
		char msg[400];

		snprintf(msg, sizeof(msg), "the simulated API server serves its OpenAPI documents as application/json only, not %.200s",
			 accept);
		apiserver_reply_status(out, 406, "NotAcceptable", msg, NULL, NULL);
		return;
	}
	if (strcmp(segs[0], "v2") == 0) {
		rc = apiserver_openapi_v2(&out->body);
	} else if (n == 1) {
		rc = apiserver_openapi_v3_index(&out->body);
	} else {
		int i;
		size_t k = 0;

		gv[0] = '\0';
		for (i = 1; i < n && k < sizeof(gv); i++)
			k += (size_t)snprintf(gv + k, sizeof(gv) - k, "%s%s", i > 1 ? "/" : "", segs[i]);
		if (k >= sizeof(gv) || apiserver_openapi_v3(gv, &out->body) < 0) {
			buf_free(&out->body);
			apiserver_reply_status(out, 404, "NotFound",
					       "the server could not find the requested resource", NULL,
					       NULL);
			return;
		}
		rc = 0;
	}
	if (rc < 0) {
		apiserver_reply_status(out, 500, "InternalError", "out of memory", NULL, NULL);
		return;
	}
	out->code = 200;
}
