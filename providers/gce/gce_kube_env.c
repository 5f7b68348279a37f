/*
 * providers/gce: GKE's kube-env read for a new node's labels, taints and
 * reserve (see gce_kube_env.h). The text is YAML (ytree: quoting, no
 * duplicate keys); the values are GKE's own small lists, checked item by
 * item, and a kube-env with one bad part gives nothing at all.
 */
#include "providers/gce/gce_kube_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "k8sname.h"
#include "quantity.h"
#include "ytree.h"

#define MAX_ITEM 1024 /* one list item ("key=value:Effect") */

void gce_kube_env_clear(struct gce_kube_env *e)
{
	provider_template_clear(&e->t);
	memset(e, 0, sizeof(*e));
}

/* The next item of 's' up to 'sep' (or the end) into 'item'; *s moves past
 * it. -1 when the item is too long. */
static int next_item(const char **s, char sep, char *item, size_t len)
{
	const char *e = strchr(*s, sep);
	size_t n = e ? (size_t)(e - *s) : strlen(*s);

	if (n >= len)
		return -1;
	memcpy(item, *s, n);
	item[n] = '\0';
	*s += n + (e ? 1 : 0);
	return 0;
}

static bool has_label(const struct provider_template *t, const char *key)
{
	size_t i;

	for (i = 0; i < t->n_labels; i++)
		if (!strcmp(t->labels[i].key, key))
			return true;
	return false;
}

/* "a=b,c=d" (from 'what', for messages) into out's labels. */
static int parse_labels(const char *list, const char *what, struct gce_kube_env *out, struct errbuf *err)
{
	char item[MAX_ITEM], why[128];
	const char *s = list;
	size_t i = 0;

	if (!*list)
		return 0;
	while (s) {
		char *eq;

		if (next_item(&s, ',', item, sizeof(item)) < 0)
			return errbuf_set(err, "%s: item %zu is longer than %d bytes", what, i + 1, MAX_ITEM - 1);
		if (!item[0])
			return errbuf_set(err, "%s: item %zu is empty (a stray ',')", what, i + 1);
		eq = strchr(item, '=');
		if (!eq)
			return errbuf_set(err, "%s: \"%.64s\" has no '=' (key=value)", what, item);
		*eq = '\0';
		if (!k8sname_valid_qualified_name(item, why, sizeof(why)))
			return errbuf_set(err, "%s: label key \"%.64s\": %s", what, item, why);
		if (!k8sname_valid_label_value(eq + 1))
			return errbuf_set(err, "%s: label %s: value \"%.64s\" is not a label value (63 of [A-Za-z0-9._-])",
					  what, item, eq + 1);
		if (has_label(&out->t, item))
			return errbuf_set(err, "%s: label %s is given twice", what, item);
		if (out->t.n_labels >= GCE_KUBE_ENV_MAX_LABELS)
			return errbuf_set(err, "%s: more than %d labels", what, GCE_KUBE_ENV_MAX_LABELS);
		if (provider_template_label(&out->t, item, eq + 1) < 0)
			return errbuf_set(err, "out of memory");
		i++;
		if (!*s && s[-1] == ',')
			return errbuf_set(err, "%s: item %zu is empty (a stray ',')", what, i + 1);
		if (!*s)
			break;
	}
	return 0;
}

/* "k=v:NoSchedule,k2:NoExecute" into out's taints. */
static int parse_taints(const char *list, const char *what, struct gce_kube_env *out, struct errbuf *err)
{
	char item[MAX_ITEM], why[128];
	const char *s = list;
	size_t i = 0, k;

	if (!*list)
		return 0;
	while (s) {
		char *colon, *eq;
		const char *value = "";

		if (next_item(&s, ',', item, sizeof(item)) < 0)
			return errbuf_set(err, "%s: item %zu is longer than %d bytes", what, i + 1, MAX_ITEM - 1);
		if (!item[0])
			return errbuf_set(err, "%s: item %zu is empty (a stray ',')", what, i + 1);
		colon = strrchr(item, ':');
		if (!colon)
			return errbuf_set(err, "%s: taint \"%.64s\" has no ':Effect' (key=value:NoSchedule)", what, item);
		*colon = '\0';
		if (strcmp(colon + 1, "NoSchedule") && strcmp(colon + 1, "PreferNoSchedule") &&
		    strcmp(colon + 1, "NoExecute"))
			return errbuf_set(err, "%s: taint %.64s: effect \"%.32s\" is not NoSchedule, PreferNoSchedule or NoExecute",
					  what, item, colon + 1);
		eq = strchr(item, '=');
		if (eq) {
			*eq = '\0';
			value = eq + 1;
		}
		if (!k8sname_valid_qualified_name(item, why, sizeof(why)))
			return errbuf_set(err, "%s: taint key \"%.64s\": %s", what, item, why);
		if (!k8sname_valid_label_value(value))
			return errbuf_set(err, "%s: taint %s: value \"%.64s\" is not a label value (63 of [A-Za-z0-9._-])",
					  what, item, value);
		for (k = 0; k < out->t.n_taints; k++)
			if (!strcmp(out->t.taints[k].key, item) && !strcmp(out->t.taints[k].effect, colon + 1))
				return errbuf_set(err, "%s: taint %s:%s is given twice", what, item, colon + 1);
		if (out->t.n_taints >= GCE_KUBE_ENV_MAX_TAINTS)
			return errbuf_set(err, "%s: more than %d taints", what, GCE_KUBE_ENV_MAX_TAINTS);
		if (provider_template_taint(&out->t, item, value, colon + 1) < 0)
			return errbuf_set(err, "out of memory");
		i++;
		if (!*s && s[-1] == ',')
			return errbuf_set(err, "%s: item %zu is empty (a stray ',')", what, i + 1);
		if (!*s)
			break;
	}
	return 0;
}

/* kube_reserved "cpu=1060m,memory=1019Mi,ephemeral-storage=41Gi" (other
 * resources are allowed and not used). */
static int parse_reserved(const char *list, struct gce_kube_env *out, struct errbuf *err)
{
	char item[MAX_ITEM];
	const char *s = list;
	bool cpu = false, mem = false;
	struct errbuf e;

	while (*s) {
		char *eq;

		if (next_item(&s, ',', item, sizeof(item)) < 0)
			return errbuf_set(err, "kube_reserved: an item is longer than %d bytes", MAX_ITEM - 1);
		eq = strchr(item, '=');
		if (!item[0] || !eq)
			return errbuf_set(err, "kube_reserved: \"%.64s\" is not resource=quantity", item);
		*eq = '\0';
		if (!strcmp(item, "cpu") || !strcmp(item, "memory")) {
			bool is_cpu = !strcmp(item, "cpu");
			int64_t v;

			if ((is_cpu ? cpu : mem))
				return errbuf_set(err, "kube_reserved: %s is given twice", item);
			if (quantity_parse(eq + 1, is_cpu ? QUANTITY_MILLI : QUANTITY_UNIT, &v, &e) < 0 || v < 0)
				return errbuf_set(err, "kube_reserved: %s \"%.32s\" is not a quantity of 0 or more", item,
						  eq + 1);
			if (is_cpu) {
				cpu = true;
				out->reserved_cpu_m = v;
			} else {
				mem = true;
				out->reserved_memory = v;
			}
		}
	}
	out->reserved = cpu || mem;
	return 0;
}

/* evictionHard "memory.available=100Mi,nodefs.available=10%": the memory
 * threshold when absolute (a percentage keeps the default). */
static int parse_eviction(const char *list, struct gce_kube_env *out, struct errbuf *err)
{
	char item[MAX_ITEM];
	const char *s = list;
	struct errbuf e;

	while (*s) {
		char *eq;

		if (next_item(&s, ',', item, sizeof(item)) < 0)
			return errbuf_set(err, "evictionHard: an item is longer than %d bytes", MAX_ITEM - 1);
		eq = strchr(item, '=');
		if (!item[0] || !eq)
			return errbuf_set(err, "evictionHard: \"%.64s\" is not signal=quantity", item);
		*eq = '\0';
		if (strcmp(item, "memory.available") || strchr(eq + 1, '%'))
			continue;
		if (out->eviction)
			return errbuf_set(err, "evictionHard: memory.available is given twice");
		if (quantity_parse(eq + 1, QUANTITY_UNIT, &out->eviction_memory, &e) < 0 || out->eviction_memory < 0)
			return errbuf_set(err, "evictionHard: memory.available \"%.32s\" is not a quantity", eq + 1);
		out->eviction = true;
	}
	return 0;
}

/* AUTOSCALER_ENV_VARS: "name=value;name=value". */
static int parse_autoscaler_vars(const char *vars, struct gce_kube_env *out, struct errbuf *err)
{
	static const char *const known[] = {"node_labels", "node_taints", "kube_reserved", "evictionHard"};
	bool seen[4] = {false, false, false, false};
	const char *s = vars;
	char *item = malloc(GCE_KUBE_ENV_MAX + 1);
	int rc = 0;
	size_t k;

	if (!item)
		return errbuf_set(err, "out of memory");
	while (*s && !rc) {
		char *eq;

		if (next_item(&s, ';', item, GCE_KUBE_ENV_MAX + 1) < 0) {
			rc = errbuf_set(err, "AUTOSCALER_ENV_VARS: too long");
			break;
		}
		if (!item[0])
			continue; /* a trailing ';' */
		eq = strchr(item, '=');
		if (!eq) {
			rc = errbuf_set(err, "AUTOSCALER_ENV_VARS: \"%.64s\" has no '=' (name=value)", item);
			break;
		}
		*eq = '\0';
		for (k = 0; k < 4 && strcmp(item, known[k]); k++)
			;
		if (k == 4)
			continue; /* os, os_distribution, ...: not used */
		if (seen[k]) {
			rc = errbuf_set(err, "AUTOSCALER_ENV_VARS: %s is given twice", item);
			break;
		}
		seen[k] = true;
		if (k == 0)
			rc = parse_labels(eq + 1, "AUTOSCALER_ENV_VARS node_labels", out, err);
		else if (k == 1)
			rc = parse_taints(eq + 1, "AUTOSCALER_ENV_VARS node_taints", out, err);
		else if (k == 2)
			rc = parse_reserved(eq + 1, out, err);
		else
			rc = parse_eviction(eq + 1, out, err);
	}
	free(item);
	return rc;
}

/* The scalar value of 'key' in kube-env 'root' into *out (NULL when absent). */
static int scalar(const struct ytree_node *root, const char *key, const char **out, struct errbuf *err)
{
	const struct ytree_node *v = ytree_map_find(root, key);

	*out = NULL;
	if (!v)
		return 0;
	if (v->kind != YTREE_SCALAR)
		return errbuf_set(err, "%s (line %d) is not a string", key, v->line);
	*out = ytree_is_null(v) ? "" : v->text;
	return 0;
}

int gce_kube_env_parse(const char *text, size_t len, struct gce_kube_env *out, struct errbuf *err)
{
	struct arena *a;
	struct ytree_node *root = NULL;
	const char *vars, *labels, *taints;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (len > GCE_KUBE_ENV_MAX)
		return errbuf_set(err, "%zu bytes, more than GCE's %d", len, GCE_KUBE_ENV_MAX);
	if (memchr(text, '\0', len))
		return errbuf_set(err, "it holds a NUL byte");
	a = arena_new();
	if (!a)
		return errbuf_set(err, "out of memory");
	if (ytree_parse(text, len, "kube-env", a, &root, err) < 0)
		goto out;
	if (!root) {
		rc = 0;
		goto out;
	}
	if (root->kind != YTREE_MAP) {
		errbuf_set(err, "it is not a map of KEY: value lines");
		goto out;
	}
	if (scalar(root, "AUTOSCALER_ENV_VARS", &vars, err) < 0 || scalar(root, "NODE_LABELS", &labels, err) < 0 ||
	    scalar(root, "NODE_TAINTS", &taints, err) < 0)
		goto out;
	/* AUTOSCALER_ENV_VARS says it all when given, as the Cluster Autoscaler reads it */
	if (vars)
		rc = parse_autoscaler_vars(vars, out, err);
	else
		rc = (labels ? parse_labels(labels, "NODE_LABELS", out, err) : 0) ||
		     (taints ? parse_taints(taints, "NODE_TAINTS", out, err) : 0) ? -1 : 0;
out:
	arena_free(a);
	if (rc < 0)
		gce_kube_env_clear(out); /* never half of it */
	return rc;
}

int gce_kube_env_of(const cJSON *properties, const char **text, struct errbuf *err)
{
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(properties, "metadata");
	const cJSON *items, *it;
	int i = 0;

	*text = NULL;
	if (!md)
		return 0;
	if (!cJSON_IsObject(md))
		return errbuf_set(err, "properties.metadata is not an object");
	items = cJSON_GetObjectItemCaseSensitive(md, "items");
	if (items && !cJSON_IsArray(items))
		return errbuf_set(err, "properties.metadata.items is not a list");
	cJSON_ArrayForEach(it, items) {
		const cJSON *k = cJSON_GetObjectItemCaseSensitive(it, "key");
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(it, "value");

		if (!cJSON_IsString(k))
			return errbuf_set(err, "properties.metadata.items[%d] has no string key", i);
		if (!strcmp(k->valuestring, "kube-env")) {
			if (*text)
				return errbuf_set(err, "properties.metadata.items has kube-env twice");
			if (!cJSON_IsString(v))
				return errbuf_set(err, "properties.metadata.items[%d] (kube-env) has no string value", i);
			*text = v->valuestring;
		}
		i++;
	}
	return 0;
}
