/*
 * sim/apiserver_patch: JSON Patch, strategic merge patch and the apply
 * body for the simulated API server, over cJSON trees. The merge patch
 * itself is apiserver_render.c's (apiserver_merge_patch).
 */
#include "sim/apiserver/apiserver_patch.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "arena.h"
#include "sim/apiserver/apiserver_render.h"
#include "ytree.h"

static bool ctype_is(const char *ct, const char *want)
{
	size_t n = strlen(want);

	return strncasecmp(ct, want, n) == 0 && (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

enum apiserver_patch_type apiserver_patch_type(const char *ct)
{
	if (!ct)
		return APISERVER_PATCH_UNKNOWN;
	if (ctype_is(ct, "application/json-patch+json"))
		return APISERVER_PATCH_JSON;
	if (ctype_is(ct, "application/merge-patch+json"))
		return APISERVER_PATCH_MERGE;
	if (ctype_is(ct, "application/strategic-merge-patch+json"))
		return APISERVER_PATCH_STRATEGIC;
	if (ctype_is(ct, "application/apply-patch+yaml"))
		return APISERVER_PATCH_APPLY;
	return APISERVER_PATCH_UNKNOWN;
}

/* ---- JSON Pointer (RFC 6901) ---- */

/* The next reference token of 'p' (after its '/') unescaped into 'tok';
 * returns where the following one starts, or NULL on a bad escape. */
static const char *next_token(const char *p, char *tok, size_t cap)
{
	size_t k = 0;

	p++; /* the '/' */
	while (*p && *p != '/') {
		char c = *p++;

		if (c == '~') {
			if (*p == '0')
				c = '~';
			else if (*p == '1')
				c = '/';
			else
				return NULL;
			p++;
		}
		if (k + 1 >= cap)
			return NULL;
		tok[k++] = c;
	}
	tok[k] = '\0';
	return p;
}

/* An array index token: digits without a leading zero; -1 otherwise. */
static long array_index(const char *tok)
{
	char *end;
	long v;

	if (!tok[0] || (tok[0] == '0' && tok[1]) || tok[0] < '0' || tok[0] > '9')
		return -1;
	v = strtol(tok, &end, 10);
	return *end ? -1 : v;
}

/*
 * Resolves 'path' in 'doc' down to its parent: *parent is the container,
 * 'last' the final token. For the root ("") *parent is NULL. 0, or -1
 * with a message when an intermediate step is missing.
 */
static int resolve_parent(cJSON *doc, const char *path, cJSON **parent, char *last, size_t cap,
			  struct errbuf *err)
{
	const char *p = path;
	cJSON *cur = doc;
	char tok[512];

	*parent = NULL;
	last[0] = '\0';
	if (!path[0])
		return 0;
	if (path[0] != '/')
		return errbuf_set(err, "invalid JSON pointer \"%s\": it must start with /", path);
	for (;;) {
		const char *nx = next_token(p, tok, sizeof(tok));

		if (!nx)
			return errbuf_set(err, "invalid JSON pointer \"%s\"", path);
		if (!*nx) {
			snprintf(last, cap, "%s", tok);
			*parent = cur;
			return 0;
		}
		if (cJSON_IsObject(cur)) {
			cur = cJSON_GetObjectItemCaseSensitive(cur, tok);
		} else if (cJSON_IsArray(cur)) {
			long i = array_index(tok);

			cur = i >= 0 ? cJSON_GetArrayItem(cur, (int)i) : NULL;
		} else {
			cur = NULL;
		}
		if (!cur)
			return errbuf_set(err, "doc is missing path: \"%s\"", path);
		p = nx;
	}
}

/* The value at 'path' (borrowed), or NULL. */
static cJSON *get_at(cJSON *doc, const char *path, struct errbuf *err)
{
	cJSON *parent, *v = NULL;
	char last[512];

	if (resolve_parent(doc, path, &parent, last, sizeof(last), err) < 0)
		return NULL;
	if (!parent && !path[0])
		return doc;
	if (cJSON_IsObject(parent)) {
		v = cJSON_GetObjectItemCaseSensitive(parent, last);
	} else if (cJSON_IsArray(parent)) {
		long i = array_index(last);

		v = i >= 0 ? cJSON_GetArrayItem(parent, (int)i) : NULL;
	}
	if (!v)
		errbuf_set(err, "doc is missing path: \"%s\"", path);
	return v;
}

/* Removes and returns the value at 'path', or NULL with a message. */
static cJSON *detach_at(cJSON **doc, const char *path, struct errbuf *err)
{
	cJSON *parent, *v = NULL;
	char last[512];

	if (resolve_parent(*doc, path, &parent, last, sizeof(last), err) < 0)
		return NULL;
	if (!parent) {
		v = *doc;
		*doc = cJSON_CreateNull();
		return v;
	}
	if (cJSON_IsObject(parent)) {
		v = cJSON_DetachItemFromObjectCaseSensitive(parent, last);
	} else if (cJSON_IsArray(parent)) {
		long i = array_index(last);

		if (i >= 0 && i < cJSON_GetArraySize(parent))
			v = cJSON_DetachItemFromArray(parent, (int)i);
	}
	if (!v)
		errbuf_set(err, "doc is missing path: \"%s\"", path);
	return v;
}

/* Inserts 'v' (taken) before item 'i' of an array of 'n' (i == n: at the
 * end), by moving the tail behind it (cJSON's own insert is unreliable
 * in some versions). */
static void insert_at(cJSON *arr, long i, long n, cJSON *v)
{
	cJSON *tail = cJSON_CreateArray(), *e;
	long k;

	if (!tail) {
		cJSON_Delete(v);
		return;
	}
	for (k = i; k < n; k++)
		cJSON_AddItemToArray(tail, cJSON_DetachItemFromArray(arr, (int)i));
	cJSON_AddItemToArray(arr, v);
	while ((e = cJSON_DetachItemFromArray(tail, 0)) != NULL)
		cJSON_AddItemToArray(arr, e);
	cJSON_Delete(tail);
}

/* Adds 'v' (taken) at 'path' as RFC 6902 "add" does. 0 or -1. */
static int add_at(cJSON **doc, const char *path, cJSON *v, struct errbuf *err)
{
	cJSON *parent;
	char last[512];

	if (resolve_parent(*doc, path, &parent, last, sizeof(last), err) < 0)
		goto fail;
	if (!parent) {
		cJSON_Delete(*doc);
		*doc = v;
		return 0;
	}
	if (cJSON_IsObject(parent)) {
		if (cJSON_GetObjectItemCaseSensitive(parent, last))
			cJSON_ReplaceItemInObjectCaseSensitive(parent, last, v);
		else
			cJSON_AddItemToObject(parent, last, v);
		return 0;
	}
	if (cJSON_IsArray(parent)) {
		long n = cJSON_GetArraySize(parent), i = strcmp(last, "-") == 0 ? n : array_index(last);

		if (i < 0 || i > n) {
			errbuf_set(err, "unable to access invalid index: %s", last);
			goto fail;
		}
		insert_at(parent, i, n, v);
		return 0;
	}
	errbuf_set(err, "doc is missing path: \"%s\"", path);
fail:
	cJSON_Delete(v);
	return -1;
}

static const char *op_str(const cJSON *op, const char *key)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(op, key));
}

int apiserver_json_patch(cJSON **doc, const cJSON *ops, struct errbuf *err)
{
	const cJSON *op;

	if (!cJSON_IsArray(ops))
		return errbuf_set(err, "json: cannot unmarshal %s into Go value of type jsonpatch.Patch",
				  cJSON_IsObject(ops) ? "object" : "value");
	cJSON_ArrayForEach(op, ops) {
		const char *name = op_str(op, "op"), *path = op_str(op, "path");
		const char *from = op_str(op, "from");
		const cJSON *value = cJSON_GetObjectItemCaseSensitive(op, "value");

		if (!cJSON_IsObject(op) || !name)
			return errbuf_set(err, "invalid operation: an operation needs \"op\"");
		if (!path)
			return errbuf_set(err, "%s operation: missing path", name);
		if (strcmp(name, "add") == 0 || strcmp(name, "replace") == 0 ||
		    strcmp(name, "test") == 0) {
			if (!value)
				return errbuf_set(err, "%s operation: missing value", name);
		} else if (strcmp(name, "move") == 0 || strcmp(name, "copy") == 0) {
			if (!from)
				return errbuf_set(err, "%s operation: missing from", name);
		} else if (strcmp(name, "remove") != 0) {
			return errbuf_set(err, "Unexpected kind: %s", name);
		}
	}
	cJSON_ArrayForEach(op, ops) {
		const char *name = op_str(op, "op"), *path = op_str(op, "path");
		const char *from = op_str(op, "from");
		const cJSON *value = cJSON_GetObjectItemCaseSensitive(op, "value");
		cJSON *v;

		if (strcmp(name, "add") == 0) {
			if (!(v = cJSON_Duplicate(value, true)))
				return errbuf_set(err, "out of memory");
			if (add_at(doc, path, v, err) < 0)
				goto does_not_apply;
		} else if (strcmp(name, "remove") == 0) {
			if (!path[0] || !(v = detach_at(doc, path, err)))
				goto does_not_apply;
			cJSON_Delete(v);
		} else if (strcmp(name, "replace") == 0) {
			if (!get_at(*doc, path, err))
				goto does_not_apply;
			if (path[0])
				cJSON_Delete(detach_at(doc, path, err));
			if (!(v = cJSON_Duplicate(value, true)))
				return errbuf_set(err, "out of memory");
			if (add_at(doc, path, v, err) < 0)
				goto does_not_apply;
		} else if (strcmp(name, "move") == 0) {
			size_t fl = strlen(from);

			if (strncmp(path, from, fl) == 0 && path[fl] == '/') {
				errbuf_set(err, "move operation: cannot move \"%s\" into its own child \"%s\"",
					   from, path);
				return -2;
			}
			if (!(v = detach_at(doc, from, err)))
				goto does_not_apply;
			if (add_at(doc, path, v, err) < 0)
				goto does_not_apply;
		} else if (strcmp(name, "copy") == 0) {
			const cJSON *src = get_at(*doc, from, err);

			if (!src)
				goto does_not_apply;
			if (!(v = cJSON_Duplicate(src, true)))
				return errbuf_set(err, "out of memory");
			if (add_at(doc, path, v, err) < 0)
				goto does_not_apply;
		} else { /* test */
			const cJSON *have = get_at(*doc, path, err);

			if (!have)
				goto does_not_apply;
			if (!cJSON_Compare(have, value, true)) {
				errbuf_set(err, "testing value %s failed: test failed", path);
				return -2;
			}
		}
		continue;
does_not_apply:
		errbuf_prefix(err, "%s operation does not apply", name);
		return -2;
	}
	return 0;
}

/* ---- strategic merge patch ---- */

#define CORE "k8s.io.api.core.v1."
#define APPS "k8s.io.api.apps.v1."
#define BATCH "k8s.io.api.batch.v1."
#define POLICY "k8s.io.api.policy.v1."
#define META "k8s.io.apimachinery.pkg.apis.meta.v1."

#define SET_ORDER "$setElementOrder/"
#define DELETE_FROM "$deleteFromPrimitiveList/"

/*
 * What the Kubernetes types' struct tags say of the fields a strategic
 * merge patch reaches in the kinds the simulator serves: the type of a
 * field's value (of each element, for a list), its patchStrategy and its
 * patchMergeKey. A list not named with a merge strategy is replaced whole
 * (tolerations, taints, command, args, envFrom, ...); a map is merged key
 * by key unless its strategy is "replace".
 */
struct smp_field {
	const char *type;     /* the message's full name, as the protobuf descriptors have it */
	const char *field;
	const char *child;    /* the value's type; NULL: nothing below it is described */
	const char *strategy; /* NULL: none declared */
	const char *key;      /* the merge key of a list of objects */
};

#define CONTAINER_LISTS(t)                                                              \
	{t, "ports", CORE "ContainerPort", "merge", "containerPort"},                   \
	{t, "env", CORE "EnvVar", "merge", "name"},                                     \
	{t, "volumeMounts", CORE "VolumeMount", "merge", "mountPath"},                  \
	{t, "volumeDevices", CORE "VolumeDevice", "merge", "devicePath"}
#define WORKLOAD(pkg, kind, cond)                                                       \
	{pkg kind, "spec", pkg kind "Spec", NULL, NULL},                                \
	{pkg kind, "status", pkg kind "Status", NULL, NULL},                            \
	{pkg kind "Spec", "template", CORE "PodTemplateSpec", NULL, NULL},              \
	{pkg kind "Status", "conditions", pkg cond, "merge", "type"}

static const struct smp_field smp_fields[] = {
	{META "ObjectMeta", "finalizers", NULL, "merge", NULL},
	{META "ObjectMeta", "ownerReferences", META "OwnerReference", "merge", "uid"},
	{CORE "Pod", "spec", CORE "PodSpec", NULL, NULL},
	{CORE "Pod", "status", CORE "PodStatus", NULL, NULL},
	{CORE "PodTemplateSpec", "metadata", META "ObjectMeta", NULL, NULL},
	{CORE "PodTemplateSpec", "spec", CORE "PodSpec", NULL, NULL},
	{CORE "PodSpec", "volumes", CORE "Volume", "merge,retainKeys", "name"},
	{CORE "PodSpec", "initContainers", CORE "Container", "merge", "name"},
	{CORE "PodSpec", "containers", CORE "Container", "merge", "name"},
	{CORE "PodSpec", "ephemeralContainers", CORE "EphemeralContainer", "merge", "name"},
	{CORE "PodSpec", "imagePullSecrets", CORE "LocalObjectReference", "merge", "name"},
	{CORE "PodSpec", "hostAliases", CORE "HostAlias", "merge", "ip"},
	{CORE "PodSpec", "topologySpreadConstraints", CORE "TopologySpreadConstraint", "merge",
	 "topologyKey"},
	{CORE "PodSpec", "schedulingGates", CORE "PodSchedulingGate", "merge", "name"},
	{CORE "PodSpec", "resourceClaims", CORE "PodResourceClaim", "merge,retainKeys", "name"},
	CONTAINER_LISTS(CORE "Container"),
	CONTAINER_LISTS(CORE "EphemeralContainer"),
	{CORE "PodStatus", "conditions", CORE "PodCondition", "merge", "type"},
	{CORE "PodStatus", "hostIPs", CORE "HostIP", "merge", "ip"},
	{CORE "PodStatus", "podIPs", CORE "PodIP", "merge", "ip"},
	{CORE "PodStatus", "resourceClaimStatuses", CORE "PodResourceClaimStatus", "merge,retainKeys",
	 "name"},
	{CORE "Node", "spec", CORE "NodeSpec", NULL, NULL},
	{CORE "Node", "status", CORE "NodeStatus", NULL, NULL},
	{CORE "NodeSpec", "podCIDRs", NULL, "merge", NULL},
	{CORE "NodeStatus", "conditions", CORE "NodeCondition", "merge", "type"},
	{CORE "NodeStatus", "addresses", CORE "NodeAddress", "merge", "type"},
	{CORE "Namespace", "status", CORE "NamespaceStatus", NULL, NULL},
	{CORE "NamespaceStatus", "conditions", CORE "NamespaceCondition", "merge", "type"},
	{CORE "PersistentVolumeClaim", "status", CORE "PersistentVolumeClaimStatus", NULL, NULL},
	{CORE "PersistentVolumeClaimStatus", "conditions", CORE "PersistentVolumeClaimCondition", "merge",
	 "type"},
	WORKLOAD(APPS, "Deployment", "DeploymentCondition"),
	{APPS "DeploymentSpec", "strategy", APPS "DeploymentStrategy", "retainKeys", NULL},
	WORKLOAD(APPS, "ReplicaSet", "ReplicaSetCondition"),
	WORKLOAD(APPS, "DaemonSet", "DaemonSetCondition"),
	WORKLOAD(BATCH, "Job", "JobCondition"),
	{POLICY "PodDisruptionBudget", "spec", POLICY "PodDisruptionBudgetSpec", NULL, NULL},
	{POLICY "PodDisruptionBudget", "status", POLICY "PodDisruptionBudgetStatus", NULL, NULL},
	{POLICY "PodDisruptionBudgetSpec", "selector", META "LabelSelector", "replace", NULL},
	{POLICY "PodDisruptionBudgetStatus", "conditions", META "Condition", "merge", "type"},
};

static const struct smp_field *field_of(const char *type, const char *field)
{
	size_t i;

	if (!type)
		return NULL;
	for (i = 0; i < sizeof(smp_fields) / sizeof(smp_fields[0]); i++)
		if (strcmp(smp_fields[i].type, type) == 0 && strcmp(smp_fields[i].field, field) == 0)
			return &smp_fields[i];
	return NULL;
}

bool apiserver_patch_meta(const char *type, const char *field, const char **strategy, const char **key)
{
	const struct smp_field *f = field_of(type, field);

	if (!f || !f->strategy)
		return false;
	*strategy = f->strategy;
	*key = f->key;
	return true;
}

static bool has_prefix(const char *s, const char *prefix)
{
	return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool is_merge(const struct smp_field *f)
{
	return f && has_prefix(f->strategy, "merge");
}

static cJSON *member(const cJSON *o, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(o, key);
}

/* One letter for a JSON value's type, as Go's types tell them apart. */
static char kind_of(const cJSON *v)
{
	if (cJSON_IsObject(v))
		return 'o';
	if (cJSON_IsArray(v))
		return 'a';
	if (cJSON_IsString(v))
		return 's';
	if (cJSON_IsNumber(v))
		return 'n';
	if (cJSON_IsBool(v))
		return 'b';
	return 'z';
}

/* Sets 'err' to "<text><v as JSON><tail>" and returns 'rc'. */
static int fail_with(struct errbuf *err, int rc, const char *text, const cJSON *v, const char *tail)
{
	char *j = v ? cJSON_PrintUnformatted(v) : NULL;

	errbuf_set(err, "%s%.300s%s", text, j ? j : "", tail);
	free(j);
	return rc;
}

static int no_merge_key(struct errbuf *err, const cJSON *item, const char *key)
{
	char tail[160];

	snprintf(tail, sizeof(tail), " does not contain declared merge key: %s", key);
	return fail_with(err, APISERVER_SMP_FAILED, "map: ", item, tail);
}

static int out_of_memory(struct errbuf *err)
{
	errbuf_set(err, "out of memory");
	return APISERVER_SMP_FAILED;
}

/*
 * Drops from 'v' what decoding into the Kubernetes types keeps nothing of:
 * null members, "$" directives, and maps that carry "$patch".
 */
static void clean_in(cJSON *v)
{
	cJSON *e = v ? v->child : NULL, *next;

	for (; e; e = next) {
		next = e->next;
		if ((cJSON_IsObject(e) && member(e, "$patch")) ||
		    (cJSON_IsObject(v) && (cJSON_IsNull(e) || e->string[0] == '$'))) {
			cJSON_Delete(cJSON_DetachItemViaPointer(v, e));
			continue;
		}
		clean_in(e);
	}
}

/* Sets member 'key' of 'o' to 'v' (taken; its own name is not 'key'),
 * in its place when it is there. */
static void set_member(cJSON *o, const char *key, cJSON *v)
{
	if (member(o, key))
		cJSON_ReplaceItemInObjectCaseSensitive(o, key, v);
	else
		cJSON_AddItemToObject(o, key, v);
}

/* Member 'key' of 'o' becomes the patch's value 'p' as it is (cleaned);
 * a map carrying "$patch" removes it. */
static int take(cJSON *o, const char *key, const cJSON *p, struct errbuf *err)
{
	cJSON *v;

	if (cJSON_IsObject(p) && member(p, "$patch")) {
		cJSON_DeleteItemFromObjectCaseSensitive(o, key);
		return 0;
	}
	if (!(v = cJSON_Duplicate(p, true)))
		return out_of_memory(err);
	clean_in(v);
	set_member(o, key, v);
	return 0;
}

/* Empties container 'o' (an object or an array). */
static void empty(cJSON *o)
{
	while (o->child)
		cJSON_Delete(cJSON_DetachItemViaPointer(o, o->child));
}

/* Does 'a' equal 'b' by merge key 'key' (both lacking it counts), or as
 * values when there is no key? */
static bool same_item(const cJSON *a, const cJSON *b, const char *key)
{
	const cJSON *x, *y;

	if (!key)
		return cJSON_Compare(a, b, true);
	x = member(a, key);
	y = member(b, key);
	return (!x && !y) || (x && y && cJSON_Compare(x, y, true));
}

/* The index of the first item of 'list' (n items) the same as 'v', or -1. */
static long index_in(const cJSON *const *list, size_t n, const cJSON *v, const char *key)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (same_item(list[i], v, key))
			return (long)i;
	return -1;
}

/* The items of array 'a' (borrowed) in a new vector of *n; NULL with *n 0
 * when empty, or out of memory (*n 1). */
static const cJSON **items_of(const cJSON *a, size_t *n)
{
	const cJSON **v, *e;
	size_t k = 0;

	*n = (size_t)cJSON_GetArraySize(a);
	if (!*n)
		return NULL;
	v = malloc(*n * sizeof(*v));
	if (!v)
		return NULL;
	cJSON_ArrayForEach(e, a)
		v[k++] = e;
	return v;
}

/* Sorts 'v' (n items) stably by each one's place in 'order'; the ones
 * that are not there go last. */
static void sort_by(cJSON **v, size_t n, const cJSON *const *order, size_t n_order, const char *key)
{
	size_t i, j;

	for (i = 1; i < n; i++) {
		cJSON *x = v[i];
		long xi = index_in(order, n_order, x, key);

		for (j = i; j > 0; j--) {
			long yi = index_in(order, n_order, v[j - 1], key);

			if (xi < 0 || (yi >= 0 && yi <= xi))
				break;
			v[j] = v[j - 1];
		}
		v[j] = x;
	}
}

/*
 * Puts the items of merged list 'arr' in the order the real server gives
 * them: those named in 'order' (the patch's list, or its
 * $setElementOrder) in that order, the others (server-only) in the order
 * of 'server' (the list before the patch), each server-only item placed
 * before the first patch item that came after it in 'server'.
 */
static int order_list(cJSON *arr, const cJSON *const *order, size_t n_order, const cJSON *const *server,
		      size_t n_server, const char *key, struct errbuf *err)
{
	size_t n = (size_t)cJSON_GetArraySize(arr), n_patch = 0, n_only = 0, i = 0, j = 0, k;
	cJSON **patch_items, **server_only;
	int rc = 0;

	if (!n)
		return 0;
	if (key) {
		for (k = 0; k < n_order; k++)
			if (!member(order[k], key))
				return no_merge_key(err, order[k], key);
	}
	patch_items = malloc(n * sizeof(*patch_items));
	server_only = malloc(n * sizeof(*server_only));
	if (!patch_items || !server_only) {
		rc = out_of_memory(err);
		goto out;
	}
	while (arr->child) {
		cJSON *e = cJSON_DetachItemViaPointer(arr, arr->child);

		if (key && !member(e, key) && !rc)
			rc = no_merge_key(err, e, key);
		if (index_in(order, n_order, e, key) >= 0)
			patch_items[n_patch++] = e;
		else
			server_only[n_only++] = e;
	}
	sort_by(patch_items, n_patch, order, n_order, key);
	sort_by(server_only, n_only, server, n_server, key);
	while (i < n_only || j < n_patch) {
		bool left;

		if (i >= n_only) {
			left = false;
		} else if (j >= n_patch) {
			left = true;
		} else {
			long li = index_in(server, n_server, server_only[i], key);
			long ri = index_in(server, n_server, patch_items[j], key);

			left = li >= 0 && ri >= 0 && li < ri;
		}
		cJSON_AddItemToArray(arr, left ? server_only[i++] : patch_items[j++]);
	}
out:
	free(patch_items);
	free(server_only);
	return rc;
}

/* A deep copy of array 'a', or NULL when out of memory. */
static cJSON *copy_of(const cJSON *a)
{
	return cJSON_Duplicate(a, true);
}

/* The one kind of the elements of lists 'a' and 'b' (as kind_of), or an
 * error: lists of lists, mixed kinds. */
static int element_kind(const cJSON *a, const cJSON *b, char *kind, struct errbuf *err)
{
	const cJSON *lists[2] = {a, b}, *e;
	int i;

	*kind = 0;
	for (i = 0; i < 2; i++) {
		cJSON_ArrayForEach(e, lists[i]) {
			char k = kind_of(e);

			if (!*kind && k == 'a') {
				errbuf_set(err, "lists of lists are not supported");
				return APISERVER_SMP_INVALID;
			}
			if (*kind && k != *kind)
				return fail_with(err, APISERVER_SMP_FAILED, "list element types are not identical: ",
						 b, "");
			*kind = k;
		}
	}
	if (!*kind) {
		errbuf_set(err, "no elements in any of the given slices");
		return APISERVER_SMP_FAILED;
	}
	return 0;
}

static int merge_map(cJSON *orig, const cJSON *patch, const char *type, bool root, struct errbuf *err);

/*
 * Merges list 'patch' into list 'have' in place, as a list with a merge
 * strategy: scalars as a set ('del': the patch lists what goes), objects
 * by merge key 'key' with the "$patch": "delete" / "replace" elements,
 * each merged one by the type 'child'; then the real server's order.
 */
static int merge_slice(cJSON *have, const cJSON *patch, const char *child, const char *key, bool del,
		       struct errbuf *err)
{
	const cJSON **eff = NULL, **server = NULL, *e;
	size_t n_eff = 0, n_server = 0, i;
	cJSON *before = NULL;
	bool replace = false;
	char kind;
	int rc;

	if (!cJSON_GetArraySize(have) && !cJSON_GetArraySize(patch))
		return 0;
	if ((rc = element_kind(have, patch, &kind, err)) < 0)
		return rc;
	if (kind != 'o') {
		if (del) {
			cJSON_ArrayForEach(e, patch) {
				for (i = (size_t)cJSON_GetArraySize(have); i > 0; i--)
					if (cJSON_Compare(cJSON_GetArrayItem(have, (int)i - 1), e, true))
						cJSON_DeleteItemFromArray(have, (int)i - 1);
			}
			return 0;
		}
		if (!(before = copy_of(have)))
			return out_of_memory(err);
		cJSON_ArrayForEach(e, patch) {
			const cJSON *h;
			bool found = false;

			cJSON_ArrayForEach(h, have)
				found = found || cJSON_Compare(h, e, true);
			if (!found) {
				cJSON *d = cJSON_Duplicate(e, true);

				if (!d) {
					rc = out_of_memory(err);
					goto out;
				}
				cJSON_AddItemToArray(have, d);
			}
		}
		key = NULL;
		eff = items_of(patch, &n_eff);
		goto order;
	}
	if (!key) {
		errbuf_set(err, "cannot merge lists without merge key for %s", child ? child : "a list");
		return APISERVER_SMP_FAILED;
	}
	eff = malloc((size_t)cJSON_GetArraySize(patch) * sizeof(*eff) + 1);
	if (!eff)
		return out_of_memory(err);
	cJSON_ArrayForEach(e, patch) {
		const cJSON *d = member(e, "$patch"), *kv = member(e, key);
		const char *ds = cJSON_GetStringValue(d);

		if (!d) {
			eff[n_eff++] = e;
		} else if (ds && strcmp(ds, "delete") == 0) {
			if (!kv) {
				rc = no_merge_key(err, e, key);
				goto out;
			}
			for (i = (size_t)cJSON_GetArraySize(have); i > 0; i--)
				if (same_item(cJSON_GetArrayItem(have, (int)i - 1), e, key))
					cJSON_DeleteItemFromArray(have, (int)i - 1);
		} else if (ds && strcmp(ds, "replace") == 0) {
			replace = true;
		} else if (ds && strcmp(ds, "merge") == 0) {
			errbuf_set(err, "merging lists cannot yet be specified in the patch");
			rc = APISERVER_SMP_FAILED;
			goto out;
		} else {
			rc = fail_with(err, APISERVER_SMP_FAILED, "unknown patch type in map: ", e, "");
			goto out;
		}
	}
	if (replace) {
		empty(have);
		for (i = 0; i < n_eff; i++) {
			cJSON *d = cJSON_Duplicate(eff[i], true);

			if (!d) {
				rc = out_of_memory(err);
				goto out;
			}
			clean_in(d);
			cJSON_AddItemToArray(have, d);
		}
		n_eff = 0;
	}
	if (!(before = copy_of(have))) {
		rc = out_of_memory(err);
		goto out;
	}
	for (i = 0; i < n_eff; i++) {
		cJSON *h, *found = NULL;

		if (!member(eff[i], key)) {
			rc = no_merge_key(err, eff[i], key);
			goto out;
		}
		cJSON_ArrayForEach(h, have)
			if (!found && member(h, key) && same_item(h, eff[i], key))
				found = h;
		if (found) {
			if ((rc = merge_map(found, eff[i], child, false, err)) < 0)
				goto out;
		} else {
			cJSON *d = cJSON_Duplicate(eff[i], true);

			if (!d) {
				rc = out_of_memory(err);
				goto out;
			}
			clean_in(d);
			cJSON_AddItemToArray(have, d);
		}
	}
order:
	server = items_of(before, &n_server);
	if ((n_server && !server) || (n_eff && !eff)) {
		rc = out_of_memory(err);
		goto out;
	}
	rc = order_list(have, eff, n_eff, server, n_server, key, err);
out:
	free(eff);
	free(server);
	cJSON_Delete(before);
	return rc;
}

/* A list field 'have' patched by 'patch' as its strategy says: merged, or
 * replaced whole. */
static int merge_list(cJSON *have, const cJSON *patch, const struct smp_field *f, bool del,
		      struct errbuf *err)
{
	cJSON *v, *e;

	if (is_merge(f) || del)
		return merge_slice(have, patch, f ? f->child : NULL, f ? f->key : NULL, del, err);
	if (!(v = cJSON_Duplicate(patch, true)))
		return out_of_memory(err);
	clean_in(v);
	empty(have);
	while ((e = v->child) != NULL)
		cJSON_AddItemToArray(have, cJSON_DetachItemViaPointer(v, e));
	cJSON_Delete(v);
	return 0;
}

/* "$setElementOrder/NAME" ('order'): the list NAME merged, then ordered
 * as the directive says, the server-only items kept among them. */
static int set_order(cJSON *orig, const cJSON *patch, const cJSON *order, const char *type,
		     struct errbuf *err)
{
	const char *name = order->string + strlen(SET_ORDER);
	const struct smp_field *f = field_of(type, name);
	const char *key = f ? f->key : NULL;
	cJSON *have = member(orig, name), *before = NULL;
	const cJSON *pl = member(patch, name), *e;
	const cJSON **ord = NULL, **server = NULL;
	size_t n_ord = 0, n_server = 0, at = 0;
	char kind;
	int rc = 0;

	if (!cJSON_IsArray(order)) {
		errbuf_set(err, "invalid patch format of setElementOrder list");
		return APISERVER_SMP_BAD;
	}
	if ((have && !cJSON_IsArray(have)) || (pl && !cJSON_IsArray(pl))) {
		errbuf_set(err, "expected a slice, but received a %s",
			   kind_of(have && !cJSON_IsArray(have) ? have : pl) == 'o' ? "map" : "value");
		return APISERVER_SMP_FAILED;
	}
	/* the patch's items (deletions aside) come in the directive's order */
	cJSON_ArrayForEach(e, pl) {
		long i;

		if (cJSON_IsObject(e) && member(e, "$patch"))
			continue;
		if (key && (!cJSON_IsObject(e) || !member(e, key)))
			return no_merge_key(err, e, key);
		for (i = 0; i < cJSON_GetArraySize(order); i++)
			if (same_item(cJSON_GetArrayItem(order, (int)i), e, key))
				break;
		if (i >= cJSON_GetArraySize(order) || (size_t)i < at)
			return fail_with(err, APISERVER_SMP_FAILED, "The order in patch list: ", pl,
					 " doesn't match $setElementOrder list");
		at = (size_t)i;
	}
	if (!have && !pl)
		return 0;
	if ((rc = element_kind(have, pl, &kind, err)) < 0)
		return rc;
	if (kind == 'o' && !key) {
		errbuf_set(err, "cannot merge lists without merge key for %s", name);
		return APISERVER_SMP_FAILED;
	}
	if (kind != 'o')
		key = NULL;
	if (have && !(before = copy_of(have)))
		return out_of_memory(err);
	if (!have) {
		if ((rc = take(orig, name, pl, err)) < 0)
			goto out;
		have = member(orig, name);
	} else if (pl && (rc = merge_list(have, pl, f, false, err)) < 0) {
		goto out;
	}
	ord = items_of(order, &n_ord);
	server = before ? items_of(before, &n_server) : NULL;
	if ((n_ord && !ord) || (n_server && !server)) {
		rc = out_of_memory(err);
		goto out;
	}
	rc = order_list(have, ord, n_ord, server, n_server, key, err);
out:
	free(ord);
	free(server);
	cJSON_Delete(before);
	return rc;
}

/* Does 'patch' carry "$setElementOrder/<key>"? */
static bool ordered(const cJSON *patch, const char *key)
{
	const cJSON *p;

	cJSON_ArrayForEach(p, patch)
		if (has_prefix(p->string, SET_ORDER) && strcmp(p->string + strlen(SET_ORDER), key) == 0)
			return true;
	return false;
}

/* "$retainKeys": the members of 'orig' it does not name go; every member
 * the patch sets must be named. */
static int retain_keys(cJSON *orig, const cJSON *patch, const cJSON *keys, struct errbuf *err)
{
	const cJSON *p, *k;
	cJSON *e, *next;

	if (!cJSON_IsArray(keys))
		goto bad;
	cJSON_ArrayForEach(p, patch) {
		bool named = false;

		if (strcmp(p->string, "$retainKeys") == 0 || cJSON_IsNull(p) ||
		    has_prefix(p->string, DELETE_FROM) || has_prefix(p->string, SET_ORDER))
			continue;
		cJSON_ArrayForEach(k, keys)
			named = named || (cJSON_IsString(k) && strcmp(k->valuestring, p->string) == 0);
		if (!named)
			goto bad;
	}
	for (e = orig->child; e; e = next) {
		bool named = false;

		next = e->next;
		cJSON_ArrayForEach(k, keys)
			named = named || (cJSON_IsString(k) && strcmp(k->valuestring, e->string) == 0);
		if (!named)
			cJSON_Delete(cJSON_DetachItemViaPointer(orig, e));
	}
	return 0;
bad:
	errbuf_set(err, "invalid patch format of retainKeys");
	return APISERVER_SMP_BAD;
}

/* Merges map 'patch' into map 'orig' of type 'type' (NULL: undescribed;
 * 'root': the object itself, whose metadata is an ObjectMeta). */
static int merge_map(cJSON *orig, const cJSON *patch, const char *type, bool root, struct errbuf *err)
{
	const cJSON *dir = member(patch, "$patch"), *keys = member(patch, "$retainKeys"), *p;
	int rc;

	if (dir) {
		const char *d = cJSON_GetStringValue(dir);
		cJSON *v, *e;

		if (d && strcmp(d, "delete") == 0) {
			empty(orig);
			return 0;
		}
		if (!d || strcmp(d, "replace") != 0)
			return fail_with(err, APISERVER_SMP_FAILED, "unknown patch type in map: ", patch, "");
		if (!(v = cJSON_Duplicate(patch, true)))
			return out_of_memory(err);
		cJSON_DeleteItemFromObjectCaseSensitive(v, "$patch");
		clean_in(v);
		empty(orig);
		while ((e = v->child) != NULL)
			cJSON_AddItemToObject(orig, e->string, cJSON_DetachItemViaPointer(v, e));
		cJSON_Delete(v);
		return 0;
	}
	if (keys && (rc = retain_keys(orig, patch, keys, err)) < 0)
		return rc;
	cJSON_ArrayForEach(p, patch)
		if (has_prefix(p->string, SET_ORDER) && (rc = set_order(orig, patch, p, type, err)) < 0)
			return rc;
	cJSON_ArrayForEach(p, patch) {
		const char *k = p->string;
		const struct smp_field *f;
		bool del = false;
		cJSON *have;

		if (has_prefix(k, DELETE_FROM)) {
			del = true;
			k += strlen(DELETE_FROM);
		} else if (k[0] == '$' || ordered(patch, k)) {
			continue;
		}
		if (cJSON_IsNull(p)) {
			cJSON_DeleteItemFromObjectCaseSensitive(orig, k);
			continue;
		}
		have = member(orig, k);
		if (!have || kind_of(have) != kind_of(p) || !(cJSON_IsObject(p) || cJSON_IsArray(p))) {
			if ((!have || kind_of(have) != kind_of(p)) && del)
				continue;
			if ((rc = take(orig, k, p, err)) < 0)
				return rc;
			continue;
		}
		f = field_of(type, k);
		if (cJSON_IsArray(p)) {
			rc = merge_list(have, p, f, del, err);
		} else if (f && f->strategy && strcmp(f->strategy, "replace") == 0) {
			rc = take(orig, k, p, err);
		} else {
			const char *child = f ? f->child : NULL;

			if (!f && root && strcmp(k, "metadata") == 0)
				child = META "ObjectMeta";
			rc = merge_map(have, p, child, false, err);
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* "k8s.io.api.<group's first label, or core>.<version>.<kind>" */
static void type_name(const char *api_version, const char *kind, char *out, size_t len)
{
	const char *slash = api_version ? strchr(api_version, '/') : NULL;

	out[0] = '\0';
	if (!api_version || !kind)
		return;
	if (!slash) {
		snprintf(out, len, "k8s.io.api.core.%s.%s", api_version, kind);
		return;
	}
	snprintf(out, len, "k8s.io.api.%.*s.%s.%s", (int)strcspn(api_version, "./"), api_version,
		 slash + 1, kind);
}

int apiserver_strategic_merge(cJSON *target, const cJSON *patch, const char *api_version, const char *kind,
			      struct errbuf *err)
{
	char type[200];

	if (!cJSON_IsObject(target) || !cJSON_IsObject(patch)) {
		errbuf_set(err, "a strategic merge patch and its object must be JSON objects");
		return APISERVER_SMP_BAD;
	}
	type_name(api_version, kind, type, sizeof(type));
	return merge_map(target, patch, type[0] ? type : NULL, true, err);
}

/* ---- apply bodies ---- */

static cJSON *from_ytree(const struct ytree_node *n, int depth)
{
	const struct ytree_node *c;
	cJSON *o;

	if (depth > YTREE_MAX_DEPTH)
		return NULL;
	if (n->kind == YTREE_SCALAR) {
		bool b, overflow;
		int64_t i;
		double d;

		if (!n->plain)
			return cJSON_CreateString(n->text);
		switch (ytree_resolve_plain(n->text, &b, &i, &d, &overflow)) {
		case YTREE_NULL: return cJSON_CreateNull();
		case YTREE_BOOL: return cJSON_CreateBool(b);
		case YTREE_INT: return overflow ? cJSON_CreateString(n->text) : cJSON_CreateNumber((double)i);
		case YTREE_FLOAT: return cJSON_CreateNumber(d);
		case YTREE_STRING: return cJSON_CreateString(n->text);
		}
		return NULL;
	}
	o = n->kind == YTREE_MAP ? cJSON_CreateObject() : cJSON_CreateArray();
	for (c = n->first; o && c; c = c->next) {
		cJSON *v = from_ytree(c, depth + 1);

		if (!v) {
			cJSON_Delete(o);
			return NULL;
		}
		if (n->kind == YTREE_MAP)
			cJSON_AddItemToObject(o, c->key->text, v);
		else
			cJSON_AddItemToArray(o, v);
	}
	return o;
}

cJSON *apiserver_parse_apply(const char *body, size_t len, struct errbuf *err)
{
	cJSON *o = cJSON_ParseWithLength(body, len);
	struct arena *a;
	struct ytree_node *root = NULL;

	if (o)
		return o;
	a = arena_new();
	if (!a) {
		errbuf_set(err, "out of memory");
		return NULL;
	}
	if (ytree_parse(body, len, "the apply body", a, &root, err) == 0) {
		if (!root)
			errbuf_set(err, "the apply body is empty");
		else if (!(o = from_ytree(root, 0)))
			errbuf_set(err, "the apply body is too deep");
	}
	arena_free(a);
	return o;
}
