/*
 * model_decode: turns API-server JSON (Node, Pod, PodDisruptionBudget,
 * Namespace, PersistentVolumeClaim, PersistentVolume, StorageClass,
 * DaemonSet) into the structs of objects.h, strings in the caller's arena.
 * Every field is type-checked; errors name the field path. Owns no state
 * between calls; knows nothing of snapshots, Lists or files (model.c) nor
 * of scheduling (sched.c).
 */
#include "model_decode.h"

#include <assert.h>
#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "intern.h"
#include "quantity.h"
#include "textparse.h"

#define FIELD_PATH 192
#define INTERN_MAX 64 /* longer strings are rarely repeated: copy them */

/* Annotations never needed for decisions and often kilobytes long. */
static const char *const skipped_annotations[] = {
	"kubectl.kubernetes.io/last-applied-configuration",
	NULL,
};

struct dec {
	struct model_object *out; /* where the decoded object goes */
	struct arena *a;
	struct intern *in;
	struct errbuf *err;
	/* who the object is, for a message: formatted only on error */
	const char *who_kind, *who_ns, *who_name;
};

enum { OPTIONAL, REQUIRED };

enum model_kind model_kind_of(const char *kind, int list)
{
	static const struct {
		const char *name;
		enum model_kind kind;
	} kinds[] = {
		{"Node", MODEL_KIND_NODE},
		{"Pod", MODEL_KIND_POD},
		{"PodDisruptionBudget", MODEL_KIND_PDB},
		{"Namespace", MODEL_KIND_NAMESPACE},
		{"PersistentVolumeClaim", MODEL_KIND_PVC},
		{"PersistentVolume", MODEL_KIND_PV},
		{"StorageClass", MODEL_KIND_STORAGE_CLASS},
		{"DaemonSet", MODEL_KIND_DAEMONSET},
	};
	size_t i, n;

	if (!kind)
		return MODEL_KIND_OTHER;
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		n = strlen(kinds[i].name);
		if (strncmp(kind, kinds[i].name, n) != 0)
			continue;
		if (!list && kind[n] == '\0')
			return kinds[i].kind;
		if (list && strcmp(kind + n, "List") == 0)
			return kinds[i].kind;
	}
	return MODEL_KIND_OTHER;
}

/* ---- small helpers: paths, messages, strings ---- */

static void pathf(char *out, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void pathf(char *out, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out, n, fmt, ap);
	va_end(ap);
}

/* Sets "path.name: message"; 'path' may be "" and 'name' NULL. Returns -1. */
static int ferr(struct dec *d, const char *path, const char *name,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int ferr(struct dec *d, const char *path, const char *name,
		const char *fmt, ...)
{
	char msg[ERRBUF_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return errbuf_set(d->err, "%s%s%s: %s", path,
			  *path && name ? "." : "", name ? name : "", msg);
}

static int oom(struct dec *d)
{
	return errbuf_set(d->err, "out of memory");
}

static const char *jtype(const cJSON *j)
{
	if (cJSON_IsString(j))
		return "a string";
	if (cJSON_IsNumber(j))
		return "a number";
	if (cJSON_IsObject(j))
		return "an object";
	if (cJSON_IsArray(j))
		return "an array";
	if (cJSON_IsBool(j))
		return "a boolean";
	if (cJSON_IsNull(j))
		return "null";
	return "an invalid value";
}

/* The member 'name' of 'obj', NULL when absent or null. */
static const cJSON *child(const cJSON *obj, const char *name)
{
	const cJSON *c;

	if (!obj)
		return NULL;
	c = cJSON_GetObjectItemCaseSensitive(obj, name);
	return c && !cJSON_IsNull(c) ? c : NULL;
}

/* Copies a string into the arena, through the intern table when short. */
static const char *keep(struct dec *d, const char *s, bool intern)
{
	size_t len = strlen(s);

	if (len == 0)
		return "";
	if (intern && d->in && len <= INTERN_MAX)
		return intern_strn(d->in, s, len);
	return arena_strndup(d->a, s, len);
}

static int get_object(struct dec *d, const cJSON *obj, const char *name,
		      const char *path, const cJSON **out)
{
	const cJSON *c = child(obj, name);

	*out = NULL;
	if (!c)
		return 0;
	if (!cJSON_IsObject(c))
		return ferr(d, path, name, "expected an object, got %s", jtype(c));
	*out = c;
	return 0;
}

static int get_array(struct dec *d, const cJSON *obj, const char *name,
		     const char *path, const cJSON **out)
{
	const cJSON *c = child(obj, name);

	*out = NULL;
	if (!c)
		return 0;
	if (!cJSON_IsArray(c))
		return ferr(d, path, name, "expected an array, got %s", jtype(c));
	*out = c;
	return 0;
}

/* A string member, borrowed from the JSON tree; "" when absent. */
static int get_raw(struct dec *d, const cJSON *obj, const char *name,
		   const char *path, int required, const char **out)
{
	const cJSON *c = child(obj, name);

	*out = "";
	if (!c)
		return required ? ferr(d, path, name, "missing") : 0;
	if (!cJSON_IsString(c))
		return ferr(d, path, name, "expected a string, got %s", jtype(c));
	if (required && c->valuestring[0] == '\0')
		return ferr(d, path, name, "must not be empty");
	*out = c->valuestring;
	return 0;
}

/* A string member copied into the arena; "" when absent. */
static int get_string(struct dec *d, const cJSON *obj, const char *name,
		      const char *path, int required, bool intern,
		      const char **out)
{
	const char *raw;

	if (get_raw(d, obj, name, path, required, &raw) < 0)
		return -1;
	*out = keep(d, raw, intern);
	return *out ? 0 : oom(d);
}

static int get_bool(struct dec *d, const cJSON *obj, const char *name,
		    const char *path, bool *out)
{
	const cJSON *c = child(obj, name);

	*out = false;
	if (!c)
		return 0;
	if (!cJSON_IsBool(c))
		return ferr(d, path, name, "expected a boolean, got %s", jtype(c));
	*out = cJSON_IsTrue(c);
	return 0;
}

static bool as_int32(const cJSON *c, int32_t *out)
{
	double v;

	if (!cJSON_IsNumber(c))
		return false;
	v = c->valuedouble;
	if (!(v >= INT32_MIN && v <= INT32_MAX) || v != (double)(int32_t)v)
		return false;
	*out = (int32_t)v;
	return true;
}

static int get_int32(struct dec *d, const cJSON *obj, const char *name,
		     const char *path, int32_t dflt, int32_t *out)
{
	const cJSON *c = child(obj, name);

	*out = dflt;
	if (!c)
		return 0;
	if (!as_int32(c, out))
		return ferr(d, path, name, "expected a 32-bit integer, got %s",
			    cJSON_IsNumber(c) ? "a number out of range" : jtype(c));
	return 0;
}

static int get_time(struct dec *d, const cJSON *obj, const char *name,
		    const char *path, int64_t *out)
{
	const char *raw;

	*out = 0;
	if (get_raw(d, obj, name, path, OPTIONAL, &raw) < 0)
		return -1;
	if (raw[0] && model_parse_time(raw, out) < 0)
		return ferr(d, path, name, "invalid time \"%.64s\"", raw);
	return 0;
}

static bool skipped_annotation(const char *key)
{
	size_t i;

	for (i = 0; skipped_annotations[i]; i++)
		if (strcmp(key, skipped_annotations[i]) == 0)
			return true;
	return false;
}

/* An object of string values (labels, annotations, nodeSelector). */
static int get_kvlist(struct dec *d, const cJSON *obj, const char *name,
		      const char *path, bool annotations, struct kvlist *out)
{
	const cJSON *o, *c;
	char sub[FIELD_PATH];
	size_t n = 0;

	out->items = NULL;
	out->n = 0;
	if (get_object(d, obj, name, path, &o) < 0)
		return -1;
	if (!o)
		return 0;
	cJSON_ArrayForEach(c, o)
		n++;
	if (n == 0)
		return 0;
	out->items = arena_calloc(d->a, n, sizeof(*out->items));
	if (!out->items)
		return oom(d);
	pathf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", name);
	cJSON_ArrayForEach(c, o) {
		struct kv *kv;

		if (!c->string)
			continue;
		if (!cJSON_IsString(c))
			return ferr(d, sub, c->string, "expected a string, got %s",
				    jtype(c));
		if (annotations && skipped_annotation(c->string))
			continue;
		kv = &out->items[out->n++];
		kv->key = keep(d, c->string, true);
		kv->value = keep(d, c->valuestring, true);
		if (!kv->key || !kv->value)
			return oom(d);
	}
	return 0;
}

/* ---- resources ---- */

/* Resource amounts while summing; ext names are borrowed. */
struct acc {
	int64_t cpu, mem, eph, pods;
	struct res_ext *ext;
	size_t n, cap;
};

static void acc_free(struct acc *a)
{
	free(a->ext);
	memset(a, 0, sizeof(*a));
}

/* The counter for resource 'name', created at 0; NULL when out of memory. */
static int64_t *acc_slot(struct acc *a, const char *name)
{
	size_t i;

	if (strcmp(name, "cpu") == 0)
		return &a->cpu;
	if (strcmp(name, "memory") == 0)
		return &a->mem;
	if (strcmp(name, "ephemeral-storage") == 0)
		return &a->eph;
	if (strcmp(name, "pods") == 0)
		return &a->pods;
	for (i = 0; i < a->n; i++)
		if (strcmp(a->ext[i].name, name) == 0)
			return &a->ext[i].value;
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 4;
		struct res_ext *e = realloc(a->ext, cap * sizeof(*e));

		if (!e)
			return NULL;
		a->ext = e;
		a->cap = cap;
	}
	a->ext[a->n].name = name;
	a->ext[a->n].value = 0;
	return &a->ext[a->n++].value;
}

/* Zero amounts, keeping the allocation. */
static void acc_clear(struct acc *a)
{
	a->cpu = a->mem = a->eph = a->pods = 0;
	a->n = 0;
}

static int add_checked(struct dec *d, const char *path, int64_t *dst,
		       int64_t v)
{
	if (__builtin_add_overflow(*dst, v, dst))
		return ferr(d, path, NULL, "resource sum does not fit in 64 bits");
	return 0;
}

/* dst += src, per resource. */
static int acc_add(struct dec *d, const char *path, struct acc *dst,
		   const struct acc *src)
{
	size_t i;

	if (add_checked(d, path, &dst->cpu, src->cpu) < 0 ||
	    add_checked(d, path, &dst->mem, src->mem) < 0 ||
	    add_checked(d, path, &dst->eph, src->eph) < 0 ||
	    add_checked(d, path, &dst->pods, src->pods) < 0)
		return -1;
	for (i = 0; i < src->n; i++) {
		int64_t *v = acc_slot(dst, src->ext[i].name);

		if (!v)
			return oom(d);
		if (add_checked(d, path, v, src->ext[i].value) < 0)
			return -1;
	}
	return 0;
}

#define MAX64(a, b) ((a) > (b) ? (a) : (b))

/* dst = max(dst, src), per resource (absent is 0). */
static int acc_max(struct dec *d, struct acc *dst, const struct acc *src)
{
	size_t i;

	dst->cpu = MAX64(dst->cpu, src->cpu);
	dst->mem = MAX64(dst->mem, src->mem);
	dst->eph = MAX64(dst->eph, src->eph);
	dst->pods = MAX64(dst->pods, src->pods);
	for (i = 0; i < src->n; i++) {
		int64_t *v = acc_slot(dst, src->ext[i].name);

		if (!v)
			return oom(d);
		*v = MAX64(*v, src->ext[i].value);
	}
	return 0;
}

/* Copies the amounts into the arena; zero extended resources are dropped. */
static int acc_store(struct dec *d, const struct acc *a, struct resources *out)
{
	size_t i, n = 0;

	memset(out, 0, sizeof(*out));
	out->cpu_m = a->cpu;
	out->memory = a->mem;
	out->ephemeral = a->eph;
	out->pods = a->pods;
	for (i = 0; i < a->n; i++)
		n += a->ext[i].value != 0;
	if (n == 0)
		return 0;
	out->ext = arena_calloc(d->a, n, sizeof(*out->ext));
	if (!out->ext)
		return oom(d);
	for (i = 0; i < a->n; i++) {
		if (a->ext[i].value == 0)
			continue;
		out->ext[out->n_ext].name = keep(d, a->ext[i].name, true);
		if (!out->ext[out->n_ext].name)
			return oom(d);
		out->ext[out->n_ext++].value = a->ext[i].value;
	}
	return 0;
}

/* One quantity value: a string, or a JSON number as Kubernetes accepts. */
static int get_quantity(struct dec *d, const cJSON *c, const char *path,
			enum quantity_unit unit, int64_t *out)
{
	char num[40];
	const char *text;

	if (cJSON_IsString(c)) {
		text = c->valuestring;
	} else if (cJSON_IsNumber(c)) {
		snprintf(num, sizeof(num), "%.15g", c->valuedouble);
		text = num;
	} else {
		return ferr(d, path, c->string, "expected a quantity, got %s",
			    jtype(c));
	}
	if (quantity_parse(text, unit, out, d->err) < 0)
		return errbuf_prefix(d->err, "%s%s%s", path, *path ? "." : "",
				     c->string);
	if (*out < 0)
		return ferr(d, path, c->string, "must not be negative, got \"%.64s\"",
			    text);
	return 0;
}

/*
 * Reads a ResourceList ({"cpu": "500m", ...}) at 'path' into 'acc'; each
 * value replaces what was there. Names present in 'unless' are skipped
 * (limits only count where there is no request).
 */
static int get_resources(struct dec *d, const cJSON *list, const char *path,
			 const cJSON *unless, struct acc *acc)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, list) {
		int64_t v, *slot;

		if (!c->string || cJSON_IsNull(c))
			continue;
		if (unless && child(unless, c->string))
			continue;
		if (get_quantity(d, c, path, strcmp(c->string, "cpu") == 0 ?
				 QUANTITY_MILLI : QUANTITY_UNIT, &v) < 0)
			return -1;
		if (!(slot = acc_slot(acc, c->string)))
			return oom(d);
		*slot = v;
	}
	return 0;
}

/* A ResourceList member 'name' of 'obj' into 'acc' (absent: nothing). */
static int get_resource_member(struct dec *d, const cJSON *obj,
			       const char *name, const char *path,
			       struct acc *acc)
{
	const cJSON *list;
	char sub[FIELD_PATH];

	if (get_object(d, obj, name, path, &list) < 0)
		return -1;
	if (!list)
		return 0;
	pathf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", name);
	return get_resources(d, list, sub, NULL, acc);
}

/* A container's requests; a resource with a limit but no request requests
 * its limit (Kubernetes defaulting). */
static int container_requests(struct dec *d, const cJSON *c, const char *path,
			      struct acc *out)
{
	const cJSON *res, *req, *lim;
	char sub[FIELD_PATH], rpath[FIELD_PATH];

	acc_clear(out);
	if (get_object(d, c, "resources", path, &res) < 0)
		return -1;
	if (!res)
		return 0;
	pathf(rpath, sizeof(rpath), "%s.resources", path);
	if (get_object(d, res, "requests", rpath, &req) < 0 ||
	    get_object(d, res, "limits", rpath, &lim) < 0)
		return -1;
	if (req) {
		pathf(sub, sizeof(sub), "%s.requests", rpath);
		if (get_resources(d, req, sub, NULL, out) < 0)
			return -1;
	}
	if (lim) {
		pathf(sub, sizeof(sub), "%s.limits", rpath);
		if (get_resources(d, lim, sub, req, out) < 0)
			return -1;
	}
	return 0;
}

/*
 * Effective pod requests, Kubernetes' rule, per resource:
 * max(sum(containers) + sum(sidecars),
 *     max over init containers i of (i's request + sidecars declared before i))
 * + overhead. Sidecars are init containers with restartPolicy Always.
 */
static int pod_requests(struct dec *d, const cJSON *spec, struct resources *out)
{
	struct acc sum = {0}, sidecars = {0}, init_max = {0}, one = {0};
	const cJSON *arr, *c;
	char path[FIELD_PATH];
	size_t i;
	int rc = -1;

	if (get_array(d, spec, "containers", "spec", &arr) < 0)
		goto out;
	i = 0;
	cJSON_ArrayForEach(c, arr) {
		pathf(path, sizeof(path), "spec.containers[%zu]", i++);
		if (!cJSON_IsObject(c)) {
			ferr(d, path, NULL, "expected an object, got %s", jtype(c));
			goto out;
		}
		if (container_requests(d, c, path, &one) < 0 ||
		    acc_add(d, "spec.containers", &sum, &one) < 0)
			goto out;
	}
	if (get_array(d, spec, "initContainers", "spec", &arr) < 0)
		goto out;
	i = 0;
	cJSON_ArrayForEach(c, arr) {
		const char *policy;

		pathf(path, sizeof(path), "spec.initContainers[%zu]", i++);
		if (!cJSON_IsObject(c)) {
			ferr(d, path, NULL, "expected an object, got %s", jtype(c));
			goto out;
		}
		if (container_requests(d, c, path, &one) < 0 ||
		    get_raw(d, c, "restartPolicy", path, OPTIONAL, &policy) < 0)
			goto out;
		if (strcmp(policy, "Always") == 0) {
			/* a sidecar: runs from here on, beside what follows */
			if (acc_add(d, "spec.initContainers", &sidecars, &one) < 0 ||
			    acc_max(d, &init_max, &sidecars) < 0)
				goto out;
		} else {
			if (acc_add(d, "spec.initContainers", &one, &sidecars) < 0 ||
			    acc_max(d, &init_max, &one) < 0)
				goto out;
		}
	}
	if (acc_add(d, "spec", &sum, &sidecars) < 0 ||
	    acc_max(d, &sum, &init_max) < 0)
		goto out;
	/* pod-level resources (spec.resources): where set, the pod's cpu and
	 * memory are those, whatever its containers ask (the scheduler's rule;
	 * cpu, memory and hugepages are the pod-level resources) */
	if (container_requests(d, spec, "spec", &one) < 0)
		goto out;
	{
		const cJSON *res = child(spec, "resources");
		const cJSON *rq = child(res, "requests"), *lm = child(res, "limits");

		size_t k;

		if (child(rq, "cpu") || child(lm, "cpu"))
			sum.cpu = one.cpu;
		if (child(rq, "memory") || child(lm, "memory"))
			sum.mem = one.mem;
		/* hugepages are pod-level resources too */
		for (k = 0; k < one.n; k++) {
			int64_t *slot;

			if (strncmp(one.ext[k].name, "hugepages-", 10) != 0)
				continue;
			if (!(slot = acc_slot(&sum, one.ext[k].name))) {
				oom(d);
				goto out;
			}
			*slot = one.ext[k].value;
		}
	}
	acc_clear(&one);
	if (get_resource_member(d, spec, "overhead", "spec", &one) < 0 ||
	    acc_add(d, "spec.overhead", &sum, &one) < 0)
		goto out;
	sum.pods = 1;
	rc = acc_store(d, &sum, out);
out:
	acc_free(&sum);
	acc_free(&sidecars);
	acc_free(&init_max);
	acc_free(&one);
	return rc;
}

/* ---- selectors, taints, tolerations ---- */

static int parse_op(const char *s, bool allow_gt_lt, enum selector_op *op)
{
	static const struct {
		const char *name;
		enum selector_op op;
	} ops[] = {
		{"In", SELECTOR_IN},
		{"NotIn", SELECTOR_NOT_IN},
		{"Exists", SELECTOR_EXISTS},
		{"DoesNotExist", SELECTOR_DOES_NOT_EXIST},
		{"Gt", SELECTOR_GT},
		{"Lt", SELECTOR_LT},
	};
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		if (strcmp(s, ops[i].name) != 0)
			continue;
		if (!allow_gt_lt && (ops[i].op == SELECTOR_GT || ops[i].op == SELECTOR_LT))
			return -1;
		*op = ops[i].op;
		return 0;
	}
	return -1;
}

/* A valid label value: at most 63 characters, alphanumerics with '-',
 * '_' and '.' inside, or empty. */
static bool label_value_valid(const char *v)
{
	size_t n = strlen(v), i;

	if (n == 0)
		return true;
	if (n > 63 || !isalnum((unsigned char)v[0]) || !isalnum((unsigned char)v[n - 1]))
		return false;
	for (i = 1; i + 1 < n; i++)
		if (!isalnum((unsigned char)v[i]) && v[i] != '-' && v[i] != '_' && v[i] != '.')
			return false;
	return true;
}

/* {"key": k, "operator": op, "values": [...]} at 'path'. */
static int decode_req(struct dec *d, const cJSON *e, const char *path,
		      bool allow_gt_lt, struct selector_req *r)
{
	const cJSON *vals, *v;
	const char *op;
	char sub[FIELD_PATH];
	size_t i = 0;

	if (!cJSON_IsObject(e))
		return ferr(d, path, NULL, "expected an object, got %s", jtype(e));
	if (get_string(d, e, "key", path, REQUIRED, true, &r->key) < 0 ||
	    get_raw(d, e, "operator", path, REQUIRED, &op) < 0 ||
	    get_array(d, e, "values", path, &vals) < 0)
		return -1;
	if (parse_op(op, allow_gt_lt, &r->op) < 0)
		return ferr(d, path, "operator", "unknown operator \"%.32s\" (want %s)",
			    op, allow_gt_lt ? "In, NotIn, Exists, DoesNotExist, Gt or Lt" :
			    "In, NotIn, Exists or DoesNotExist");
	r->values = NULL;
	r->n_values = (size_t)cJSON_GetArraySize(vals);
	if (r->n_values == 0)
		return 0;
	r->values = arena_calloc(d->a, r->n_values, sizeof(*r->values));
	if (!r->values)
		return oom(d);
	cJSON_ArrayForEach(v, vals) {
		if (!cJSON_IsString(v)) {
			pathf(sub, sizeof(sub), "%s.values[%zu]", path, i);
			return ferr(d, sub, NULL, "expected a string, got %s", jtype(v));
		}
		if (!(r->values[i++] = keep(d, v->valuestring, true)))
			return oom(d);
	}
	/* the scheduler cannot turn a node selector requirement with a value
	 * that is no label value into a selector: it matches no node (the API
	 * server lets such a pod in) */
	if (allow_gt_lt && (r->op == SELECTOR_IN || r->op == SELECTOR_NOT_IN)) {
		for (i = 0; i < r->n_values; i++) {
			if (!label_value_valid(r->values[i])) {
				r->op = SELECTOR_IN;
				r->n_values = 0;
				break;
			}
		}
	}
	return 0;
}

/* An array of requirements (matchExpressions, matchFields). */
static int get_reqs(struct dec *d, const cJSON *obj, const char *name,
		    const char *path, bool allow_gt_lt,
		    struct selector_req **out, size_t *n)
{
	const cJSON *arr, *e;
	char sub[FIELD_PATH];
	size_t i = 0;

	*out = NULL;
	*n = 0;
	if (get_array(d, obj, name, path, &arr) < 0)
		return -1;
	if (!arr || cJSON_GetArraySize(arr) == 0)
		return 0;
	*out = arena_calloc(d->a, (size_t)cJSON_GetArraySize(arr), sizeof(**out));
	if (!*out)
		return oom(d);
	cJSON_ArrayForEach(e, arr) {
		pathf(sub, sizeof(sub), "%s.%s[%zu]", path, name, i);
		if (decode_req(d, e, sub, allow_gt_lt, &(*out)[i]) < 0)
			return -1;
		i++;
	}
	*n = i;
	return 0;
}

static int get_taints(struct dec *d, const cJSON *spec, struct taint **out,
		      size_t *n)
{
	const cJSON *arr, *t;
	char path[FIELD_PATH];
	size_t i = 0;

	*out = NULL;
	*n = 0;
	if (get_array(d, spec, "taints", "spec", &arr) < 0)
		return -1;
	if (!arr || cJSON_GetArraySize(arr) == 0)
		return 0;
	*out = arena_calloc(d->a, (size_t)cJSON_GetArraySize(arr), sizeof(**out));
	if (!*out)
		return oom(d);
	cJSON_ArrayForEach(t, arr) {
		struct taint *tn = &(*out)[i];
		const char *effect;

		pathf(path, sizeof(path), "spec.taints[%zu]", i++);
		if (!cJSON_IsObject(t))
			return ferr(d, path, NULL, "expected an object, got %s", jtype(t));
		if (get_string(d, t, "key", path, REQUIRED, true, &tn->key) < 0 ||
		    get_string(d, t, "value", path, OPTIONAL, true, &tn->value) < 0 ||
		    get_raw(d, t, "effect", path, REQUIRED, &effect) < 0)
			return -1;
		if (taint_effect_parse(effect, &tn->effect) < 0)
			return ferr(d, path, "effect", "unknown taint effect \"%.32s\" (want NoSchedule, PreferNoSchedule or NoExecute)",
				    effect);
	}
	*n = i;
	return 0;
}

static int get_tolerations(struct dec *d, const cJSON *spec,
			   struct toleration **out, size_t *n)
{
	const cJSON *arr, *t;
	char path[FIELD_PATH];
	size_t i = 0;

	*out = NULL;
	*n = 0;
	if (get_array(d, spec, "tolerations", "spec", &arr) < 0)
		return -1;
	if (!arr || cJSON_GetArraySize(arr) == 0)
		return 0;
	*out = arena_calloc(d->a, (size_t)cJSON_GetArraySize(arr), sizeof(**out));
	if (!*out)
		return oom(d);
	cJSON_ArrayForEach(t, arr) {
		struct toleration *tn = &(*out)[i];
		const char *op, *effect;
		enum taint_effect e;

		pathf(path, sizeof(path), "spec.tolerations[%zu]", i++);
		if (!cJSON_IsObject(t))
			return ferr(d, path, NULL, "expected an object, got %s", jtype(t));
		if (get_string(d, t, "key", path, OPTIONAL, true, &tn->key) < 0 ||
		    get_string(d, t, "value", path, OPTIONAL, true, &tn->value) < 0 ||
		    get_raw(d, t, "operator", path, OPTIONAL, &op) < 0 ||
		    get_raw(d, t, "effect", path, OPTIONAL, &effect) < 0)
			return -1;
		if (op[0] == '\0' || strcmp(op, "Equal") == 0)
			tn->op = TOLERATION_EQUAL;
		else if (strcmp(op, "Exists") == 0)
			tn->op = TOLERATION_EXISTS;
		else
			return ferr(d, path, "operator", "unknown operator \"%.32s\" (want Equal or Exists)",
				    op);
		tn->effect = -1;
		if (effect[0]) {
			if (taint_effect_parse(effect, &e) < 0)
				return ferr(d, path, "effect", "unknown taint effect \"%.32s\" (want NoSchedule, PreferNoSchedule or NoExecute)",
					    effect);
			tn->effect = (int)e;
		}
	}
	*n = i;
	return 0;
}

/*
 * The nodeSelectorTerms member of 'obj' (a NodeSelector at 'path'; NULL:
 * absent) as ORed terms, none when absent or empty: a pod's required node
 * affinity and a PersistentVolume's spec.nodeAffinity.required.
 */
static int get_node_terms(struct dec *d, const cJSON *obj, const char *path,
			  struct node_affinity *out)
{
	const cJSON *terms, *t;
	char tpath[FIELD_PATH];
	size_t i = 0;

	out->terms = NULL;
	out->n_terms = 0;
	if (get_array(d, obj, "nodeSelectorTerms", path, &terms) < 0)
		return -1;
	if (!terms || cJSON_GetArraySize(terms) == 0)
		return 0;
	out->terms = arena_calloc(d->a, (size_t)cJSON_GetArraySize(terms),
				  sizeof(*out->terms));
	if (!out->terms)
		return oom(d);
	cJSON_ArrayForEach(t, terms) {
		struct node_selector_term *term = &out->terms[i];

		pathf(tpath, sizeof(tpath), "%s.nodeSelectorTerms[%zu]", path, i++);
		if (!cJSON_IsObject(t))
			return ferr(d, tpath, NULL, "expected an object, got %s", jtype(t));
		if (get_reqs(d, t, "matchExpressions", tpath, true, &term->exprs,
			     &term->n_exprs) < 0 ||
		    get_reqs(d, t, "matchFields", tpath, true, &term->fields,
			     &term->n_fields) < 0)
			return -1;
	}
	out->n_terms = i;
	return 0;
}

/* spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution */
static int get_node_affinity(struct dec *d, const cJSON *spec,
			     struct node_affinity *out)
{
	static const char req_name[] = "requiredDuringSchedulingIgnoredDuringExecution";
	const cJSON *aff, *na, *req;
	char path[FIELD_PATH];

	out->terms = NULL;
	out->n_terms = 0;
	if (get_object(d, spec, "affinity", "spec", &aff) < 0 ||
	    get_object(d, aff, "nodeAffinity", "spec.affinity", &na) < 0 ||
	    get_object(d, na, req_name, "spec.affinity.nodeAffinity", &req) < 0)
		return -1;
	pathf(path, sizeof(path), "spec.affinity.nodeAffinity.%s", req_name);
	return get_node_terms(d, req, path, out);
}

/* ---- label selectors; pod (anti-)affinity, spread, host ports ---- */

/*
 * A LabelSelector member 'name' of 'obj': matchLabels become In with one
 * value, then matchExpressions. *is_null is true when it is absent or
 * null (a selector that matches nothing); {} is an empty selector.
 */
static int get_label_selector(struct dec *d, const cJSON *obj, const char *name,
			      const char *path, struct label_selector *out, bool *is_null)
{
	const cJSON *sel, *labels, *c;
	struct selector_req *exprs;
	size_t n_exprs, n_labels = 0, i = 0;
	char sub[FIELD_PATH];

	memset(out, 0, sizeof(*out));
	*is_null = true;
	if (get_object(d, obj, name, path, &sel) < 0)
		return -1;
	if (!sel)
		return 0;
	*is_null = false;
	pathf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", name);
	if (get_object(d, sel, "matchLabels", sub, &labels) < 0 ||
	    get_reqs(d, sel, "matchExpressions", sub, false, &exprs, &n_exprs) < 0)
		return -1;
	cJSON_ArrayForEach(c, labels)
		n_labels++;
	if (n_labels + n_exprs == 0)
		return 0;
	out->reqs = arena_calloc(d->a, n_labels + n_exprs, sizeof(*out->reqs));
	if (!out->reqs)
		return oom(d);
	cJSON_ArrayForEach(c, labels) {
		struct selector_req *r = &out->reqs[i++];

		if (!cJSON_IsString(c) || !c->string) {
			char at[FIELD_PATH];

			pathf(at, sizeof(at), "%s.matchLabels", sub);
			return ferr(d, at, c->string, "expected a string, got %s", jtype(c));
		}
		r->key = keep(d, c->string, true);
		r->op = SELECTOR_IN;
		r->values = arena_calloc(d->a, 1, sizeof(*r->values));
		if (!r->key || !r->values || !(r->values[0] = keep(d, c->valuestring, true)))
			return oom(d);
		r->n_values = 1;
	}
	if (n_exprs)
		memcpy(out->reqs + n_labels, exprs, n_exprs * sizeof(*exprs));
	out->n = n_labels + n_exprs;
	return 0;
}

/*
 * Folds matchLabelKeys (op In) or mismatchLabelKeys (op NotIn) at
 * obj.name into 'sel': each key the pod has a label for adds "key op
 * (its value)", as the API server does when it admits the pod. Keys the
 * pod has no label for are ignored.
 */
static int fold_label_keys(struct dec *d, const cJSON *obj, const char *name,
			   const char *path, enum selector_op op,
			   const struct kvlist *labels, struct label_selector *sel)
{
	const cJSON *arr, *k;
	char sub[FIELD_PATH];
	size_t i = 0;

	if (get_array(d, obj, name, path, &arr) < 0)
		return -1;
	cJSON_ArrayForEach(k, arr) {
		struct selector_req *reqs;
		const char *v;

		if (!cJSON_IsString(k)) {
			pathf(sub, sizeof(sub), "%s.%s[%zu]", path, name, i);
			return ferr(d, sub, NULL, "expected a string, got %s", jtype(k));
		}
		i++;
		if (!(v = kvlist_get(labels, k->valuestring)))
			continue;
		reqs = arena_calloc(d->a, sel->n + 1, sizeof(*reqs));
		if (!reqs)
			return oom(d);
		if (sel->n)
			memcpy(reqs, sel->reqs, sel->n * sizeof(*reqs));
		reqs[sel->n].key = keep(d, k->valuestring, true);
		reqs[sel->n].op = op;
		reqs[sel->n].values = arena_calloc(d->a, 1, sizeof(*reqs[sel->n].values));
		if (!reqs[sel->n].key || !reqs[sel->n].values)
			return oom(d);
		reqs[sel->n].values[0] = v;
		reqs[sel->n].n_values = 1;
		sel->reqs = reqs;
		sel->n++;
	}
	return 0;
}

/* An array of strings at obj.name into the arena. */
static int get_strings(struct dec *d, const cJSON *obj, const char *name,
		       const char *path, const char ***out, size_t *n)
{
	const cJSON *arr, *v;
	char sub[FIELD_PATH];
	size_t i = 0;

	*out = NULL;
	*n = 0;
	if (get_array(d, obj, name, path, &arr) < 0)
		return -1;
	if (!arr || cJSON_GetArraySize(arr) == 0)
		return 0;
	*out = arena_calloc(d->a, (size_t)cJSON_GetArraySize(arr), sizeof(**out));
	if (!*out)
		return oom(d);
	cJSON_ArrayForEach(v, arr) {
		if (!cJSON_IsString(v)) {
			pathf(sub, sizeof(sub), "%s.%s[%zu]", path, name, i);
			return ferr(d, sub, NULL, "expected a string, got %s", jtype(v));
		}
		if (!((*out)[i++] = keep(d, v->valuestring, true)))
			return oom(d);
	}
	*n = i;
	return 0;
}

/* spec.affinity.<kind>.requiredDuringSchedulingIgnoredDuringExecution
 * (kind: podAffinity or podAntiAffinity). Preferred terms only score. */
static int get_pod_terms(struct dec *d, const cJSON *aff, const char *kind,
			 const struct kvlist *labels, struct pod_term **out, size_t *n)
{
	static const char req_name[] = "requiredDuringSchedulingIgnoredDuringExecution";
	const cJSON *pa, *arr, *t;
	char path[FIELD_PATH], tpath[FIELD_PATH];
	size_t i = 0;

	*out = NULL;
	*n = 0;
	pathf(path, sizeof(path), "spec.affinity.%s", kind);
	if (get_object(d, aff, kind, "spec.affinity", &pa) < 0 ||
	    get_array(d, pa, req_name, path, &arr) < 0)
		return -1;
	if (!arr || cJSON_GetArraySize(arr) == 0)
		return 0;
	*out = arena_calloc(d->a, (size_t)cJSON_GetArraySize(arr), sizeof(**out));
	if (!*out)
		return oom(d);
	cJSON_ArrayForEach(t, arr) {
		struct pod_term *pt = &(*out)[i];
		bool ns_null;

		pathf(tpath, sizeof(tpath), "%s.%s[%zu]", path, req_name, i++);
		if (!cJSON_IsObject(t))
			return ferr(d, tpath, NULL, "expected an object, got %s", jtype(t));
		if (get_label_selector(d, t, "labelSelector", tpath, &pt->selector,
				       &pt->selector_null) < 0 ||
		    get_strings(d, t, "namespaces", tpath, &pt->namespaces,
				&pt->n_namespaces) < 0 ||
		    get_label_selector(d, t, "namespaceSelector", tpath, &pt->ns_selector,
				       &ns_null) < 0 ||
		    get_string(d, t, "topologyKey", tpath, REQUIRED, true, &pt->topology_key) < 0)
			return -1;
		pt->has_ns_selector = !ns_null;
		if (!pt->selector_null &&
		    (fold_label_keys(d, t, "matchLabelKeys", tpath, SELECTOR_IN, labels,
				     &pt->selector) < 0 ||
		     fold_label_keys(d, t, "mismatchLabelKeys", tpath, SELECTOR_NOT_IN, labels,
				     &pt->selector) < 0))
			return -1;
		pt->fingerprint = pod_term_fingerprint(pt);
	}
	*n = i;
	return 0;
}

/* spec.topologySpreadConstraints: the DoNotSchedule ones (ScheduleAnyway
 * only scores). */
static int get_spread(struct dec *d, const cJSON *spec, const struct kvlist *labels,
		      struct spread_constraint **out, size_t *n)
{
	const cJSON *arr, *c;
	char path[FIELD_PATH];
	size_t i = 0, k = 0;

	*out = NULL;
	*n = 0;
	if (get_array(d, spec, "topologySpreadConstraints", "spec", &arr) < 0)
		return -1;
	if (!arr || cJSON_GetArraySize(arr) == 0)
		return 0;
	*out = arena_calloc(d->a, (size_t)cJSON_GetArraySize(arr), sizeof(**out));
	if (!*out)
		return oom(d);
	cJSON_ArrayForEach(c, arr) {
		struct spread_constraint *sc = &(*out)[k];
		const char *when, *aff_pol, *taint_pol;

		pathf(path, sizeof(path), "spec.topologySpreadConstraints[%zu]", i++);
		if (!cJSON_IsObject(c))
			return ferr(d, path, NULL, "expected an object, got %s", jtype(c));
		if (get_raw(d, c, "whenUnsatisfiable", path, REQUIRED, &when) < 0 ||
		    get_int32(d, c, "maxSkew", path, 0, &sc->max_skew) < 0 ||
		    get_int32(d, c, "minDomains", path, 1, &sc->min_domains) < 0 ||
		    get_string(d, c, "topologyKey", path, REQUIRED, true, &sc->topology_key) < 0 ||
		    get_label_selector(d, c, "labelSelector", path, &sc->selector,
				       &sc->selector_null) < 0 ||
		    get_raw(d, c, "nodeAffinityPolicy", path, OPTIONAL, &aff_pol) < 0 ||
		    get_raw(d, c, "nodeTaintsPolicy", path, OPTIONAL, &taint_pol) < 0)
			return -1;
		if (strcmp(when, "ScheduleAnyway") == 0)
			continue;
		if (strcmp(when, "DoNotSchedule") != 0)
			return ferr(d, path, "whenUnsatisfiable",
				    "unknown value \"%.32s\" (want DoNotSchedule or ScheduleAnyway)",
				    when);
		if (sc->max_skew < 1)
			return ferr(d, path, "maxSkew", "must be at least 1, got %d",
				    (int)sc->max_skew);
		if (sc->min_domains < 1)
			return ferr(d, path, "minDomains", "must be at least 1, got %d",
				    (int)sc->min_domains);
		if (aff_pol[0] && strcmp(aff_pol, "Honor") != 0 && strcmp(aff_pol, "Ignore") != 0)
			return ferr(d, path, "nodeAffinityPolicy",
				    "unknown value \"%.32s\" (want Honor or Ignore)", aff_pol);
		if (taint_pol[0] && strcmp(taint_pol, "Honor") != 0 &&
		    strcmp(taint_pol, "Ignore") != 0)
			return ferr(d, path, "nodeTaintsPolicy",
				    "unknown value \"%.32s\" (want Honor or Ignore)", taint_pol);
		sc->honor_affinity = strcmp(aff_pol, "Ignore") != 0;
		sc->honor_taints = strcmp(taint_pol, "Honor") == 0;
		if (!sc->selector_null &&
		    fold_label_keys(d, c, "matchLabelKeys", path, SELECTOR_IN, labels,
				    &sc->selector) < 0)
			return -1;
		k++;
	}
	*n = k;
	return 0;
}

/* The hostPorts of one container list (containers, or the sidecars among
 * the init containers when 'sidecars_only'), appended to *out. */
static int add_host_ports(struct dec *d, const cJSON *spec, const char *list,
			  bool sidecars_only, struct host_port **out, size_t *n, size_t *cap)
{
	const cJSON *arr, *c, *ports, *pt;
	char path[FIELD_PATH], ppath[FIELD_PATH];
	size_t i = 0;

	if (get_array(d, spec, list, "spec", &arr) < 0)
		return -1;
	cJSON_ArrayForEach(c, arr) {
		size_t j = 0;
		const char *policy;

		pathf(path, sizeof(path), "spec.%s[%zu]", list, i++);
		if (!cJSON_IsObject(c))
			return ferr(d, path, NULL, "expected an object, got %s", jtype(c));
		if (get_raw(d, c, "restartPolicy", path, OPTIONAL, &policy) < 0 ||
		    get_array(d, c, "ports", path, &ports) < 0)
			return -1;
		if (sidecars_only && strcmp(policy, "Always") != 0)
			continue;
		cJSON_ArrayForEach(pt, ports) {
			struct host_port hp;
			const char *proto, *ip;
			int32_t port;

			pathf(ppath, sizeof(ppath), "%s.ports[%zu]", path, j++);
			if (!cJSON_IsObject(pt))
				return ferr(d, ppath, NULL, "expected an object, got %s", jtype(pt));
			if (get_int32(d, pt, "hostPort", ppath, 0, &port) < 0 ||
			    get_raw(d, pt, "protocol", ppath, OPTIONAL, &proto) < 0 ||
			    get_raw(d, pt, "hostIP", ppath, OPTIONAL, &ip) < 0)
				return -1;
			if (port <= 0)
				continue;
			if (port > 65535)
				return ferr(d, ppath, "hostPort", "out of range: %d", (int)port);
			if (proto[0] == '\0' || strcmp(proto, "TCP") == 0)
				hp.protocol = PORT_TCP;
			else if (strcmp(proto, "UDP") == 0)
				hp.protocol = PORT_UDP;
			else if (strcmp(proto, "SCTP") == 0)
				hp.protocol = PORT_SCTP;
			else
				return ferr(d, ppath, "protocol",
					    "unknown protocol \"%.16s\" (want TCP, UDP or SCTP)", proto);
			hp.port = port;
			hp.ip = keep(d, ip[0] ? ip : "0.0.0.0", true);
			if (!hp.ip)
				return oom(d);
			if (*n == *cap) {
				size_t ncap = *cap ? *cap * 2 : 4;
				struct host_port *np = arena_calloc(d->a, ncap, sizeof(*np));

				if (!np)
					return oom(d);
				if (*n)
					memcpy(np, *out, *n * sizeof(*np));
				*out = np;
				*cap = ncap;
			}
			(*out)[(*n)++] = hp;
		}
	}
	return 0;
}

/* Every hostPort of the pod: its containers' and its sidecars'. */
static int get_host_ports(struct dec *d, const cJSON *spec, struct host_port **out, size_t *n)
{
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	return add_host_ports(d, spec, "containers", false, out, n, &cap) < 0 ||
	       add_host_ports(d, spec, "initContainers", true, out, n, &cap) < 0 ? -1 : 0;
}

/* ---- objects ---- */

static int get_metadata(struct dec *d, const cJSON *obj, bool namespaced,
			const char *kind, const cJSON **meta, const char **ns,
			const char **name)
{
	d->who_kind = kind;
	*ns = "";
	if (get_object(d, obj, "metadata", "", meta) < 0)
		return -1;
	if (!*meta)
		return ferr(d, "", "metadata", "missing");
	if (namespaced && get_string(d, *meta, "namespace", "metadata", REQUIRED,
				     true, ns) < 0)
		return -1;
	if (namespaced)
		d->who_ns = *ns;
	if (get_string(d, *meta, "name", "metadata", REQUIRED, false, name) < 0) {
		if (namespaced)
			d->who_name = "?";
		return -1;
	}
	d->who_name = *name;
	return 0;
}

/* "Pod ns/name", "Node name", as much as is known, or "object". */
static void format_who(const struct dec *d, char *who, size_t wholen)
{
	if (!d->who_kind)
		snprintf(who, wholen, "object");
	else if (!d->who_name)
		snprintf(who, wholen, "%s", d->who_kind);
	else if (d->who_ns)
		snprintf(who, wholen, "%s %s/%s", d->who_kind, d->who_ns, d->who_name);
	else
		snprintf(who, wholen, "%s %s", d->who_kind, d->who_name);
}

/* ---- interruption notices a node carries itself (GKE, Azure) ---- */

/* GCE stops a spot or preemptible VM 30 s after its preemption notice;
 * GKE's kubelet shuts down gracefully within that time. */
#define GKE_SHUTDOWN_S 30

/* An RFC 1123 date "Mon, 19 Sep 2016 18:29:47 GMT" at the start of 's'
 * (what Azure's scheduled events write as NotBefore). 0 or -1. */
static int parse_rfc1123(const char *s, int64_t *out)
{
	static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	const char *m;
	char mon[4], zone[4];
	int day, year, hh, mm, ss, used = 0;

	if (!isalpha((unsigned char)s[0]) || !isalpha((unsigned char)s[1]) ||
	    !isalpha((unsigned char)s[2]) || s[3] != ',')
		return -1;
	if (sscanf(s + 4, " %2d %3[A-Za-z] %4d %2d:%2d:%2d %3[A-Z]%n", &day, mon, &year, &hh, &mm,
		   &ss, zone, &used) != 7 || !used)
		return -1;
	m = strlen(mon) == 3 ? strstr(months, mon) : NULL;
	if (!m || (m - months) % 3 || (strcmp(zone, "GMT") && strcmp(zone, "UTC")) || day < 1 ||
	    day > 31 || year < 1970 || hh < 0 || hh > 23 || mm < 0 || mm > 59 || ss < 0 || ss > 60)
		return -1;
	*out = textparse_days_from_civil(year, (int)((m - months) / 3) + 1, day) * 86400 +
	       hh * 3600 + mm * 60 + ss;
	return 0;
}

/* The first RFC 1123 date in a condition's message, or 0. */
static int64_t message_date(const char *msg)
{
	const char *p;
	int64_t t;

	for (p = msg; (p = strchr(p, ',')) != NULL; p++)
		if (p - msg >= 3 && parse_rfc1123(p - 3, &t) == 0)
			return t;
	return 0;
}

/* The kinds a node's own word can say, strongest first (see model.h). */
static const char *const node_interruption_kinds[] = {
	"preempt", "terminate", "spot_interruption", "shutdown", "redeploy", "scheduled_change",
	"reboot", "freeze", "rebalance", NULL,
};

static int kind_rank(const char *kind)
{
	int i;

	for (i = 0; node_interruption_kinds[i]; i++)
		if (strcmp(kind, node_interruption_kinds[i]) == 0)
			return i;
	return 1000;
}

/* Keeps the stronger of the node's notice so far and 'kind' (a constant
 * of node_interruption_kinds) with 'deadline'. */
static void note_interruption(struct node *n, const char *kind, int64_t deadline)
{
	size_t i;

	for (i = 0; node_interruption_kinds[i]; i++)
		if (strcmp(kind, node_interruption_kinds[i]) == 0)
			kind = node_interruption_kinds[i];
	if (n->interruption_kind && kind_rank(n->interruption_kind) <= kind_rank(kind))
		return;
	n->interruption_kind = kind;
	n->interruption_deadline = deadline;
}

/*
 * A condition's word on an interruption:
 * - Azure, the AKS node-problem-detector's scheduled events: a condition
 *   FreezeScheduled, RebootScheduled, RedeployScheduled, PreemptScheduled
 *   or TerminateScheduled with status True, or VMEventScheduled with status
 *   True whose message starts with the event type ("Preempt Scheduled: Mon,
 *   19 Sep 2016 18:29:47 GMT. DurationInSeconds: ..."); the deadline is the
 *   message's NotBefore date (0 when none: the event is in progress);
 * - GKE, the kubelet's graceful node shutdown: Ready with status False and
 *   a message saying "node is shutting down"; the deadline is the
 *   condition's lastTransitionTime and GKE_SHUTDOWN_S.
 */
static void condition_interruption(struct node *n, const cJSON *c, const char *type,
				   const char *status)
{
	static const struct {
		const char *type, *kind;
	} azure[] = {
		{"PreemptScheduled", "preempt"},     {"TerminateScheduled", "terminate"},
		{"RedeployScheduled", "redeploy"},   {"RebootScheduled", "reboot"},
		{"FreezeScheduled", "freeze"},
	};
	static const struct {
		const char *word, *kind;
	} vm_event[] = {
		{"Preempt", "preempt"}, {"Terminate", "terminate"}, {"Redeploy", "redeploy"},
		{"Reboot", "reboot"},   {"Freeze", "freeze"},
	};
	const cJSON *mj = cJSON_GetObjectItemCaseSensitive(c, "message");
	const char *msg = cJSON_IsString(mj) ? mj->valuestring : "";
	size_t i;

	if (strcmp(type, "Ready") == 0) {
		const cJSON *tj = cJSON_GetObjectItemCaseSensitive(c, "lastTransitionTime");
		int64_t t = 0;

		if (strcmp(status, "False") || !strstr(msg, "node is shutting down"))
			return;
		if (cJSON_IsString(tj) && model_parse_time(tj->valuestring, &t) == 0)
			t += GKE_SHUTDOWN_S;
		else
			t = 0;
		note_interruption(n, "shutdown", t);
		return;
	}
	if (strcmp(status, "True"))
		return;
	for (i = 0; i < sizeof(azure) / sizeof(azure[0]); i++)
		if (strcmp(type, azure[i].type) == 0) {
			note_interruption(n, azure[i].kind, message_date(msg));
			return;
		}
	if (strcmp(type, "VMEventScheduled"))
		return;
	for (i = 0; i < sizeof(vm_event) / sizeof(vm_event[0]); i++) {
		size_t len = strlen(vm_event[i].word);

		if (strncmp(msg, vm_event[i].word, len) == 0 && (msg[len] == ' ' || msg[len] == ':')) {
			note_interruption(n, vm_event[i].kind, message_date(msg));
			return;
		}
	}
}

/* Taints that say a node is about to go, and the kind each says (no
 * deadline: their values are event ids): GKE's node termination and
 * maintenance handlers', and the AWS Node Termination Handler's
 * (TAINT_NODE=true, its IMDS or queue mode). */
static const struct {
	const char *key, *kind;
} interruption_taints[] = {
	{"cloud.google.com/impending-node-termination", "shutdown"},
	{"aws-node-termination-handler/spot-itn", "spot_interruption"},
	{"aws-node-termination-handler/scheduled-maintenance", "scheduled_change"},
	{"aws-node-termination-handler/rebalance-recommendation", "rebalance"},
};

static int decode_node(struct dec *d, const cJSON *obj)
{
	struct node n;
	const cJSON *meta, *spec, *status, *alloc, *conds, *c;
	const char *ns;
	struct acc acc = {0};
	int rc = -1;

	memset(&n, 0, sizeof(n));
	n.group = -1;
	if (get_metadata(d, obj, false, "Node", &meta, &ns, &n.name) < 0 ||
	    get_kvlist(d, meta, "labels", "metadata", false, &n.labels) < 0 ||
	    get_kvlist(d, meta, "annotations", "metadata", true, &n.annotations) < 0 ||
	    get_time(d, meta, "creationTimestamp", "metadata", &n.created) < 0)
		goto out;
	if (get_object(d, obj, "spec", "", &spec) < 0 ||
	    get_bool(d, spec, "unschedulable", "spec", &n.unschedulable) < 0 ||
	    get_string(d, spec, "providerID", "spec", OPTIONAL, false, &n.provider_id) < 0 ||
	    get_taints(d, spec, &n.taints, &n.n_taints) < 0)
		goto out;
	if (get_object(d, obj, "status", "", &status) < 0 ||
	    get_object(d, status, "allocatable", "status", &alloc) < 0)
		goto out;
	if (alloc) {
		if (get_resources(d, alloc, "status.allocatable", NULL, &acc) < 0)
			goto out;
	} else {
		if (get_resource_member(d, status, "capacity", "status", &acc) < 0)
			goto out;
	}
	if (acc_store(d, &acc, &n.allocatable) < 0)
		goto out;
	if (get_array(d, status, "conditions", "status", &conds) < 0)
		goto out;
	{
		size_t i = 0;

		cJSON_ArrayForEach(c, conds) {
			const char *type, *st;
			char path[FIELD_PATH];

			pathf(path, sizeof(path), "status.conditions[%zu]", i++);
			if (!cJSON_IsObject(c)) {
				ferr(d, path, NULL, "expected an object, got %s", jtype(c));
				goto out;
			}
			if (get_raw(d, c, "type", path, OPTIONAL, &type) < 0 ||
			    get_raw(d, c, "status", path, OPTIONAL, &st) < 0)
				goto out;
			if (strcmp(type, "Ready") == 0)
				n.ready = strcmp(st, "True") == 0;
			condition_interruption(&n, c, type, st);
		}
	}
	{
		size_t i, k;

		for (i = 0; i < n.n_taints; i++)
			for (k = 0; k < sizeof(interruption_taints) / sizeof(interruption_taints[0]); k++)
				if (strcmp(n.taints[i].key, interruption_taints[k].key) == 0)
					note_interruption(&n, interruption_taints[k].kind, 0);
	}
	d->out->u.node = n;
	rc = 0;
out:
	acc_free(&acc);
	return rc;
}

static int parse_phase(const char *s, enum pod_phase *out)
{
	static const enum pod_phase all[] = {
		POD_PENDING, POD_RUNNING, POD_SUCCEEDED, POD_FAILED, POD_UNKNOWN,
	};
	size_t i;

	if (s[0] == '\0') {
		*out = POD_PENDING;
		return 0;
	}
	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (strcmp(s, pod_phase_str(all[i])) == 0) {
			*out = all[i];
			return 0;
		}
	}
	return -1;
}

static int pod_owners(struct dec *d, const cJSON *meta, struct pod *p)
{
	const cJSON *arr, *o;
	char path[FIELD_PATH];
	size_t i = 0;

	p->controller_kind = "";
	p->controller_name = "";
	if (get_array(d, meta, "ownerReferences", "metadata", &arr) < 0)
		return -1;
	cJSON_ArrayForEach(o, arr) {
		const char *kind, *name;
		bool controller;

		pathf(path, sizeof(path), "metadata.ownerReferences[%zu]", i++);
		if (!cJSON_IsObject(o))
			return ferr(d, path, NULL, "expected an object, got %s", jtype(o));
		if (get_raw(d, o, "kind", path, OPTIONAL, &kind) < 0 ||
		    get_raw(d, o, "name", path, OPTIONAL, &name) < 0 ||
		    get_bool(d, o, "controller", path, &controller) < 0)
			return -1;
		if (strcmp(kind, "DaemonSet") == 0)
			p->flags |= POD_DAEMONSET;
		if (controller && p->controller_kind[0] == '\0') {
			p->controller_kind = keep(d, kind, true);
			p->controller_name = keep(d, name, true);
			if (!p->controller_kind || !p->controller_name)
				return oom(d);
		}
	}
	return 0;
}

static int pod_volumes(struct dec *d, const cJSON *spec, struct pod *p)
{
	const cJSON *arr, *v, *empty, *host;
	char path[FIELD_PATH];
	size_t i = 0, n_claims = 0, cap_claims = 0;

	p->local_volume = "";
	p->claims = NULL;
	p->n_claims = 0;
	if (get_array(d, spec, "volumes", "spec", &arr) < 0)
		return -1;
	cJSON_ArrayForEach(v, arr) {
		const char *name, *medium = "";

		pathf(path, sizeof(path), "spec.volumes[%zu]", i++);
		if (!cJSON_IsObject(v))
			return ferr(d, path, NULL, "expected an object, got %s", jtype(v));
		if (get_raw(d, v, "name", path, OPTIONAL, &name) < 0 ||
		    get_object(d, v, "emptyDir", path, &empty) < 0 ||
		    get_object(d, v, "hostPath", path, &host) < 0)
			return -1;
		if (child(v, "persistentVolumeClaim") || child(v, "ephemeral")) {
			const cJSON *pvc;
			const char *claim = "";
			char eph[FIELD_PATH];

			p->flags |= POD_SCHEDULER_ONLY;
			if (get_object(d, v, "persistentVolumeClaim", path, &pvc) < 0)
				return -1;
			if (pvc) {
				char sub[FIELD_PATH];

				pathf(sub, sizeof(sub), "%s.persistentVolumeClaim", path);
				if (get_raw(d, pvc, "claimName", sub, REQUIRED, &claim) < 0)
					return -1;
			} else {
				/* a generic ephemeral volume's claim is <pod>-<volume> */
				if (snprintf(eph, sizeof(eph), "%s-%s", p->name, name) >=
				    (int)sizeof(eph))
					return ferr(d, path, "name", "pod and volume names too long");
				claim = eph;
			}
			if (n_claims == cap_claims) {
				size_t ncap = cap_claims ? cap_claims * 2 : 4;
				const char **nc = arena_calloc(d->a, ncap, sizeof(*nc));

				if (!nc)
					return oom(d);
				if (n_claims)
					memcpy(nc, p->claims, n_claims * sizeof(*nc));
				p->claims = nc;
				cap_claims = ncap;
			}
			if (!(p->claims[n_claims++] = keep(d, claim, true)))
				return oom(d);
			p->n_claims = n_claims;
		}
		if (empty) {
			char sub[FIELD_PATH];

			pathf(sub, sizeof(sub), "%s.emptyDir", path);
			if (get_raw(d, empty, "medium", sub, OPTIONAL, &medium) < 0)
				return -1;
		}
		if (host || (empty && strcmp(medium, "Memory") != 0)) {
			p->flags |= POD_LOCAL_STORAGE;
			if (p->local_volume[0] == '\0' &&
			    !(p->local_volume = keep(d, name, true)))
				return oom(d);
		}
	}
	return 0;
}

static int pod_status(struct dec *d, const cJSON *obj, struct pod *p)
{
	const cJSON *status, *conds, *c;
	const char *phase;
	char path[FIELD_PATH];
	size_t i = 0;

	p->sched_message = "";
	if (get_object(d, obj, "status", "", &status) < 0 ||
	    get_raw(d, status, "phase", "status", OPTIONAL, &phase) < 0)
		return -1;
	if (parse_phase(phase, &p->phase) < 0)
		return ferr(d, "status", "phase", "unknown phase \"%.32s\"", phase);
	if (get_array(d, status, "conditions", "status", &conds) < 0)
		return -1;
	cJSON_ArrayForEach(c, conds) {
		const char *type, *st, *reason, *msg;

		pathf(path, sizeof(path), "status.conditions[%zu]", i++);
		if (!cJSON_IsObject(c))
			return ferr(d, path, NULL, "expected an object, got %s", jtype(c));
		if (get_raw(d, c, "type", path, OPTIONAL, &type) < 0 ||
		    get_raw(d, c, "status", path, OPTIONAL, &st) < 0 ||
		    get_raw(d, c, "reason", path, OPTIONAL, &reason) < 0 ||
		    get_raw(d, c, "message", path, OPTIONAL, &msg) < 0)
			return -1;
		if (strcmp(type, "PodScheduled") != 0 || strcmp(st, "False") != 0)
			continue;
		if (strcmp(reason, "Unschedulable") == 0)
			p->flags |= POD_UNSCHEDULABLE;
		if (!(p->sched_message = keep(d, msg, false)))
			return oom(d);
	}
	return 0;
}

static int decode_pod(struct dec *d, const cJSON *obj)
{
	struct pod p;
	const cJSON *meta, *spec;
	const char *v;

	memset(&p, 0, sizeof(p));
	p.node = -1;
	if (get_metadata(d, obj, true, "Pod", &meta, &p.ns, &p.name) < 0 ||
	    get_kvlist(d, meta, "labels", "metadata", false, &p.labels) < 0 ||
	    get_kvlist(d, meta, "annotations", "metadata", true, &p.annotations) < 0 ||
	    get_time(d, meta, "creationTimestamp", "metadata", &p.created) < 0 ||
	    get_string(d, meta, "uid", "metadata", OPTIONAL, false, &p.uid) < 0 ||
	    pod_owners(d, meta, &p) < 0)
		return -1;
	if (child(meta, "deletionTimestamp"))
		p.flags |= POD_TERMINATING;
	if (kvlist_get(&p.annotations, "kubernetes.io/config.mirror"))
		p.flags |= POD_MIRROR;
	v = kvlist_get(&p.annotations, "kubernetes.io/config.source");
	if (v && strcmp(v, "api") != 0)
		p.flags |= POD_STATIC;
	v = kvlist_get(&p.annotations, "cluster-autoscaler.kubernetes.io/safe-to-evict");
	if (v && strcmp(v, "false") == 0)
		p.flags |= POD_SAFE_TO_EVICT_FALSE;

	if (get_object(d, obj, "spec", "", &spec) < 0 ||
	    get_string(d, spec, "nodeName", "spec", OPTIONAL, true, &p.node_name) < 0 ||
	    get_int32(d, spec, "priority", "spec", 0, &p.priority) < 0 ||
	    get_kvlist(d, spec, "nodeSelector", "spec", false, &p.node_selector) < 0 ||
	    get_node_affinity(d, spec, &p.affinity) < 0 ||
	    get_tolerations(d, spec, &p.tolerations, &p.n_tolerations) < 0 ||
	    pod_volumes(d, spec, &p) < 0 ||
	    pod_requests(d, spec, &p.requests) < 0 ||
	    get_host_ports(d, spec, &p.host_ports, &p.n_host_ports) < 0 ||
	    get_spread(d, spec, &p.labels, &p.spread, &p.n_spread) < 0 ||
	    pod_status(d, obj, &p) < 0)
		return -1;
	{
		const cJSON *sn = child(spec, "schedulerName"), *aff;
		bool host_network;

		if (get_bool(d, spec, "hostNetwork", "spec", &host_network) < 0)
			return -1;
		if (host_network)
			p.flags |= POD_HOST_NETWORK;
		const cJSON *tsc = child(spec, "topologySpreadConstraints");
		const cJSON *rc = child(spec, "resourceClaims");

		if (get_object(d, spec, "affinity", "spec", &aff) < 0 ||
		    get_pod_terms(d, aff, "podAffinity", &p.labels, &p.affinity_terms,
				  &p.n_affinity_terms) < 0 ||
		    get_pod_terms(d, aff, "podAntiAffinity", &p.labels, &p.anti_terms,
				  &p.n_anti_terms) < 0)
			return -1;
		if ((cJSON_IsString(sn) && sn->valuestring[0] &&
		     strcmp(sn->valuestring, "default-scheduler") != 0) ||
		    child(aff, "podAffinity") || child(aff, "podAntiAffinity") ||
		    cJSON_GetArraySize(tsc) > 0 || cJSON_GetArraySize(rc) > 0)
			p.flags |= POD_SCHEDULER_ONLY;
		/* dynamic resource allocation: which nodes a claim's devices
		 * allow is not known here, so such a pod never "fits" */
		if (cJSON_GetArraySize(rc) > 0)
			p.unmodelled = "spec.resourceClaims";
	}
	d->out->u.pod = p;
	return 0;
}

/* An int-or-string field (minAvailable) as text, "" when absent. */
static int get_int_or_string(struct dec *d, const cJSON *obj, const char *name,
			     const char *path, const char **out)
{
	const cJSON *c = child(obj, name);
	char num[16];
	int32_t v;

	*out = "";
	if (!c)
		return 0;
	if (cJSON_IsString(c)) {
		*out = keep(d, c->valuestring, true);
	} else if (as_int32(c, &v)) {
		snprintf(num, sizeof(num), "%d", (int)v);
		*out = keep(d, num, true);
	} else {
		return ferr(d, path, name, "expected an integer or a string, got %s",
			    jtype(c));
	}
	return *out ? 0 : oom(d);
}

static int decode_pdb(struct dec *d, const cJSON *obj)
{
	struct pdb b;
	const cJSON *meta, *spec, *status;
	bool null;

	memset(&b, 0, sizeof(b));
	if (get_metadata(d, obj, true, "PodDisruptionBudget", &meta,
			 &b.ns, &b.name) < 0 ||
	    get_object(d, obj, "spec", "", &spec) < 0 ||
	    get_int_or_string(d, spec, "minAvailable", "spec", &b.min_available) < 0 ||
	    get_int_or_string(d, spec, "maxUnavailable", "spec", &b.max_unavailable) < 0 ||
	    get_label_selector(d, spec, "selector", "spec", &b.selector, &null) < 0 ||
	    get_object(d, obj, "status", "", &status) < 0 ||
	    get_int32(d, status, "disruptionsAllowed", "status", 0,
		      &b.disruptions_allowed) < 0)
		return -1;
	b.selects_none = null;
	b.selects_all = !null && b.selector.n == 0;
	d->out->u.pdb = b;
	return 0;
}

/* ---- namespaces, volumes, DaemonSets ---- */

static int decode_namespace(struct dec *d, const cJSON *obj)
{
	struct namespace_obj n;
	const cJSON *meta;
	const char *ns;

	memset(&n, 0, sizeof(n));
	if (get_metadata(d, obj, false, "Namespace", &meta, &ns, &n.name) < 0 ||
	    get_kvlist(d, meta, "labels", "metadata", false, &n.labels) < 0)
		return -1;
	d->out->u.ns = n;
	return 0;
}

/* How claims named their class before spec.storageClassName existed. */
#define LEGACY_CLASS_ANNOTATION "volume.beta.kubernetes.io/storage-class"

static int decode_pvc(struct dec *d, const cJSON *obj)
{
	struct pvc c;
	const cJSON *meta, *annotations, *spec;

	memset(&c, 0, sizeof(c));
	if (get_metadata(d, obj, true, "PersistentVolumeClaim", &meta, &c.ns, &c.name) < 0 ||
	    get_object(d, meta, "annotations", "metadata", &annotations) < 0 ||
	    get_object(d, obj, "spec", "", &spec) < 0 ||
	    get_string(d, spec, "volumeName", "spec", OPTIONAL, true, &c.volume_name) < 0 ||
	    get_string(d, spec, "storageClassName", "spec", OPTIONAL, true,
		       &c.storage_class) < 0)
		return -1;
	/* a claim without the field still names its class the old way */
	if (c.storage_class[0] == '\0' &&
	    get_string(d, annotations, LEGACY_CLASS_ANNOTATION, "metadata.annotations",
		       OPTIONAL, true, &c.storage_class) < 0)
		return -1;
	d->out->u.pvc = c;
	return 0;
}

static int decode_pv(struct dec *d, const cJSON *obj)
{
	struct pv v;
	const cJSON *meta, *spec, *na, *req;
	const char *ns;

	memset(&v, 0, sizeof(v));
	if (get_metadata(d, obj, false, "PersistentVolume", &meta, &ns, &v.name) < 0 ||
	    get_kvlist(d, meta, "labels", "metadata", false, &v.labels) < 0 ||
	    get_object(d, obj, "spec", "", &spec) < 0 ||
	    get_object(d, spec, "nodeAffinity", "spec", &na) < 0 ||
	    get_object(d, na, "required", "spec.nodeAffinity", &req) < 0 ||
	    get_node_terms(d, req, "spec.nodeAffinity.required", &v.node_affinity) < 0)
		return -1;
	d->out->u.pv = v;
	return 0;
}

/*
 * A StorageClass's allowedTopologies: each TopologySelectorTerm becomes a
 * node selector term whose expressions are "key In values" (the terms are
 * ORed, as nodeSelectorTerms are). None when absent: no restriction.
 */
static int get_allowed_topologies(struct dec *d, const cJSON *obj,
				  struct node_affinity *out)
{
	const cJSON *arr, *t, *exprs, *e, *vals, *v;
	char path[FIELD_PATH], epath[FIELD_PATH], vpath[FIELD_PATH];
	size_t i = 0;

	out->terms = NULL;
	out->n_terms = 0;
	if (get_array(d, obj, "allowedTopologies", "", &arr) < 0)
		return -1;
	if (!arr || cJSON_GetArraySize(arr) == 0)
		return 0;
	out->terms = arena_calloc(d->a, (size_t)cJSON_GetArraySize(arr), sizeof(*out->terms));
	if (!out->terms)
		return oom(d);
	cJSON_ArrayForEach(t, arr) {
		struct node_selector_term *term = &out->terms[i];
		size_t j = 0;

		pathf(path, sizeof(path), "allowedTopologies[%zu]", i++);
		if (!cJSON_IsObject(t))
			return ferr(d, path, NULL, "expected an object, got %s", jtype(t));
		if (get_array(d, t, "matchLabelExpressions", path, &exprs) < 0)
			return -1;
		if (!exprs || cJSON_GetArraySize(exprs) == 0)
			continue;
		term->exprs = arena_calloc(d->a, (size_t)cJSON_GetArraySize(exprs),
					   sizeof(*term->exprs));
		if (!term->exprs)
			return oom(d);
		cJSON_ArrayForEach(e, exprs) {
			struct selector_req *r = &term->exprs[j];

			pathf(epath, sizeof(epath), "%s.matchLabelExpressions[%zu]", path, j++);
			if (!cJSON_IsObject(e))
				return ferr(d, epath, NULL, "expected an object, got %s", jtype(e));
			r->op = SELECTOR_IN;
			if (get_string(d, e, "key", epath, REQUIRED, true, &r->key) < 0 ||
			    get_array(d, e, "values", epath, &vals) < 0)
				return -1;
			if (cJSON_GetArraySize(vals) > 0 &&
			    !(r->values = arena_calloc(d->a, (size_t)cJSON_GetArraySize(vals),
						       sizeof(*r->values))))
				return oom(d);
			cJSON_ArrayForEach(v, vals) {
				if (!cJSON_IsString(v)) {
					pathf(vpath, sizeof(vpath), "%s.values[%zu]", epath, r->n_values);
					return ferr(d, vpath, NULL, "expected a string, got %s", jtype(v));
				}
				if (!(r->values[r->n_values++] = keep(d, v->valuestring, true)))
					return oom(d);
			}
		}
		term->n_exprs = j;
	}
	out->n_terms = i;
	return 0;
}

static int decode_storage_class(struct dec *d, const cJSON *obj)
{
	struct storage_class c;
	const cJSON *meta;
	const char *ns, *mode;

	memset(&c, 0, sizeof(c));
	if (get_metadata(d, obj, false, "StorageClass", &meta, &ns, &c.name) < 0 ||
	    get_raw(d, obj, "volumeBindingMode", "", OPTIONAL, &mode) < 0 ||
	    get_allowed_topologies(d, obj, &c.allowed_topologies) < 0)
		return -1;
	if (strcmp(mode, "WaitForFirstConsumer") == 0)
		c.wait_for_first_consumer = true;
	else if (mode[0] && strcmp(mode, "Immediate") != 0)
		return ferr(d, "", "volumeBindingMode",
			    "unknown mode \"%.32s\" (want Immediate or WaitForFirstConsumer)", mode);
	d->out->u.sc = c;
	return 0;
}

/* Adds a view of 'c' (NULL: nothing) to 'obj' as 'name' that shares its
 * members rather than copying them. Returns 0, or -1 when out of memory. */
static int add_borrowed(cJSON *obj, const char *name, const cJSON *c)
{
	cJSON *ref;

	if (!c)
		return 0;
	if (cJSON_IsObject(c))
		ref = cJSON_CreateObjectReference(c->child);
	else if (cJSON_IsArray(c))
		ref = cJSON_CreateArrayReference(c->child);
	else
		ref = cJSON_Duplicate(c, false); /* a wrong type: the pod decoder says so */
	if (!ref)
		return -1;
	if (!cJSON_AddItemToObject(obj, name, ref)) {
		cJSON_Delete(ref);
		return -1;
	}
	return 0;
}

/*
 * The pod a DaemonSet's controller would make from its template: the
 * DaemonSet's namespace and name (the pod's own name is generated), the
 * template's labels, annotations and spec, and the DaemonSet as its
 * controller. NULL when out of memory; what it shares is borrowed from
 * 'tmpl', so it must be deleted before 'tmpl' is.
 */
static cJSON *template_pod(const char *ns, const char *name, const cJSON *tmpl)
{
	const cJSON *tmeta = child(tmpl, "metadata");
	cJSON *pod = cJSON_CreateObject(), *meta, *owners, *owner;

	if (!pod || !(meta = cJSON_AddObjectToObject(pod, "metadata")) ||
	    !cJSON_AddStringToObject(meta, "namespace", ns) ||
	    !cJSON_AddStringToObject(meta, "name", name) ||
	    add_borrowed(meta, "labels", child(tmeta, "labels")) < 0 ||
	    add_borrowed(meta, "annotations", child(tmeta, "annotations")) < 0 ||
	    !(owners = cJSON_AddArrayToObject(meta, "ownerReferences")) ||
	    !(owner = cJSON_CreateObject()) || !cJSON_AddItemToArray(owners, owner) ||
	    !cJSON_AddStringToObject(owner, "apiVersion", "apps/v1") ||
	    !cJSON_AddStringToObject(owner, "kind", "DaemonSet") ||
	    !cJSON_AddStringToObject(owner, "name", name) ||
	    !cJSON_AddTrueToObject(owner, "controller") ||
	    add_borrowed(pod, "spec", child(tmpl, "spec")) < 0) {
		cJSON_Delete(pod);
		return NULL;
	}
	return pod;
}

/*
 * An apps/v1 DaemonSet: spec.template goes through the pod decoder (its
 * node selector, affinity, tolerations, requests and host ports are read
 * exactly as a pod's) into a scratch list, so the snapshot's pods do not
 * see it; its strings land in the snapshot's arena all the same.
 */
static int decode_daemonset(struct dec *d, const cJSON *obj)
{
	struct daemonset ds;
	struct model_object scratch;
	struct dec pd;
	const cJSON *meta, *spec, *tmpl, *tmeta, *tspec;
	cJSON *pod = NULL;
	int rc = -1;

	memset(&ds, 0, sizeof(ds));
	if (get_metadata(d, obj, true, "DaemonSet", &meta, &ds.ns, &ds.name) < 0 ||
	    get_object(d, obj, "spec", "", &spec) < 0 ||
	    get_object(d, spec, "template", "spec", &tmpl) < 0 ||
	    get_object(d, tmpl, "metadata", "spec.template", &tmeta) < 0 ||
	    get_object(d, tmpl, "spec", "spec.template", &tspec) < 0)
		return -1;
	if (!tmpl)
		return ferr(d, "spec", "template", "missing");
	if (!(pod = template_pod(ds.ns, ds.name, tmpl)))
		return oom(d);
	pd = *d;
	pd.out = &scratch;
	if (decode_pod(&pd, pod) < 0) {
		char msg[ERRBUF_MAX];

		/* the pod decoder's paths start at the template */
		snprintf(msg, sizeof(msg), "%s", d->err ? d->err->msg : "");
		if (strcmp(msg, "out of memory") != 0)
			errbuf_set(d->err, "spec.template.%s", msg);
		goto out;
	}
	ds.tmpl = scratch.u.pod;
	ds.tmpl.ns = ds.ns;
	ds.tmpl.name = ds.name;
	d->out->u.ds = ds;
	rc = 0;
out:
	cJSON_Delete(pod);
	return rc;
}

int model_decode_object(struct arena *a, struct intern *in, const cJSON *obj,
			enum model_kind kind, struct model_object *out, char *who,
			size_t wholen, struct errbuf *err)
{
	struct dec d = {.out = out, .a = a, .in = in, .err = err};
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->kind = kind;
	if (!cJSON_IsObject(obj)) {
		snprintf(who, wholen, "object");
		return errbuf_set(err, "expected an object, got %s", jtype(obj));
	}
	switch (kind) {
	case MODEL_KIND_NODE:
		rc = decode_node(&d, obj);
		break;
	case MODEL_KIND_POD:
		rc = decode_pod(&d, obj);
		break;
	case MODEL_KIND_PDB:
		rc = decode_pdb(&d, obj);
		break;
	case MODEL_KIND_NAMESPACE:
		rc = decode_namespace(&d, obj);
		break;
	case MODEL_KIND_PVC:
		rc = decode_pvc(&d, obj);
		break;
	case MODEL_KIND_PV:
		rc = decode_pv(&d, obj);
		break;
	case MODEL_KIND_STORAGE_CLASS:
		rc = decode_storage_class(&d, obj);
		break;
	case MODEL_KIND_DAEMONSET:
		rc = decode_daemonset(&d, obj);
		break;
	case MODEL_KIND_OTHER:
		break;
	}
	if (rc < 0)
		format_who(&d, who, wholen);
	return rc;
}
