/*
 * sim/apiserver_patch: JSON Patch, strategic merge patch and the apply
 * body for the simulated API server, over cJSON trees. The merge patch
 * itself is apiserver_render.c's (apiserver_merge_patch).
 */
#include "sim/apiserver_patch.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "arena.h"
#include "sim/apiserver_render.h"
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

static bool is_directive(const char *key)
{
	return key && key[0] == '$';
}

/* Merges primitive list 'patch' into 'have' as a set; 'del' lists what goes. */
static void merge_set(cJSON *parent, const char *key, const cJSON *patch, const cJSON *del)
{
	cJSON *have = cJSON_GetObjectItemCaseSensitive(parent, key), *e;
	const cJSON *p;
	int i;

	if (!cJSON_IsArray(have)) {
		cJSON_DeleteItemFromObjectCaseSensitive(parent, key);
		have = cJSON_AddArrayToObject(parent, key);
		if (!have)
			return;
	}
	cJSON_ArrayForEach(p, patch) {
		bool found = false;

		cJSON_ArrayForEach(e, have)
			if (cJSON_Compare(e, p, true))
				found = true;
		if (!found)
			cJSON_AddItemToArray(have, cJSON_Duplicate(p, true));
	}
	cJSON_ArrayForEach(p, del)
		for (i = cJSON_GetArraySize(have) - 1; i >= 0; i--)
			if (cJSON_Compare(cJSON_GetArrayItem(have, i), p, true))
				cJSON_DeleteItemFromArray(have, i);
}

/* Merges object list 'patch' into 'have' by 'mkey' ("$patch": "delete" removes one). */
static void merge_keyed(cJSON *parent, const char *key, const cJSON *patch, const char *mkey)
{
	cJSON *have = cJSON_GetObjectItemCaseSensitive(parent, key);
	const cJSON *p;

	if (!cJSON_IsArray(have)) {
		cJSON_DeleteItemFromObjectCaseSensitive(parent, key);
		have = cJSON_AddArrayToObject(parent, key);
		if (!have)
			return;
	}
	cJSON_ArrayForEach(p, patch) {
		const cJSON *k = cJSON_GetObjectItemCaseSensitive(p, mkey);
		const char *dir = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "$patch"));
		int i, at = -1;

		for (i = 0; i < cJSON_GetArraySize(have); i++)
			if (k && cJSON_Compare(cJSON_GetObjectItemCaseSensitive(
					       cJSON_GetArrayItem(have, i), mkey), k, true))
				at = i;
		if (dir && strcmp(dir, "delete") == 0) {
			if (at >= 0)
				cJSON_DeleteItemFromArray(have, at);
		} else if (at >= 0) {
			apiserver_strategic_merge(cJSON_GetArrayItem(have, at), p);
		} else {
			cJSON *n = cJSON_CreateObject();

			if (n)
				cJSON_AddItemToArray(have, apiserver_strategic_merge(n, p));
		}
	}
}

cJSON *apiserver_strategic_merge(cJSON *target, const cJSON *patch)
{
	const cJSON *p;
	const char *dir;

	if (!cJSON_IsObject(patch)) {
		cJSON_Delete(target);
		return cJSON_Duplicate(patch, true);
	}
	if (!cJSON_IsObject(target)) {
		cJSON_Delete(target);
		target = cJSON_CreateObject();
		if (!target)
			return NULL;
	}
	dir = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(patch, "$patch"));
	if (dir && strcmp(dir, "replace") == 0) {
		while (target->child)
			cJSON_DeleteItemFromObjectCaseSensitive(target, target->child->string);
	}
	cJSON_ArrayForEach(p, patch) {
		cJSON *have;

		if (is_directive(p->string))
			continue;
		if (cJSON_IsNull(p)) {
			cJSON_DeleteItemFromObjectCaseSensitive(target, p->string);
			continue;
		}
		if (cJSON_IsObject(p)) {
			const char *sub = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "$patch"));

			if (sub && strcmp(sub, "delete") == 0) {
				cJSON_DeleteItemFromObjectCaseSensitive(target, p->string);
				continue;
			}
			have = cJSON_DetachItemFromObjectCaseSensitive(target, p->string);
			have = apiserver_strategic_merge(have, p);
			if (!have)
				return NULL;
			cJSON_AddItemToObject(target, p->string, have);
			continue;
		}
		if (cJSON_IsArray(p) && strcmp(p->string, "finalizers") == 0 &&
		    cJSON_GetObjectItemCaseSensitive(target, "name")) {
			merge_set(target, p->string, p, cJSON_GetObjectItemCaseSensitive(
					  patch, "$deleteFromPrimitiveList/finalizers"));
			continue;
		}
		if (cJSON_IsArray(p) && strcmp(p->string, "ownerReferences") == 0) {
			merge_keyed(target, p->string, p, "uid");
			continue;
		}
		have = cJSON_Duplicate(p, true);
		if (!have)
			return NULL;
		if (cJSON_GetObjectItemCaseSensitive(target, p->string))
			cJSON_ReplaceItemInObjectCaseSensitive(target, p->string, have);
		else
			cJSON_AddItemToObject(target, p->string, have);
	}
	if (!cJSON_GetObjectItemCaseSensitive(patch, "finalizers") &&
	    cJSON_GetObjectItemCaseSensitive(patch, "$deleteFromPrimitiveList/finalizers"))
		merge_set(target, "finalizers", NULL, cJSON_GetObjectItemCaseSensitive(
				  patch, "$deleteFromPrimitiveList/finalizers"));
	return target;
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
