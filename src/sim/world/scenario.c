/*
 * sim/scenario: the scenario schema walked over a ytree (every error with
 * file:line:col and the path of the key), and the world built from it —
 * cloud, cluster, faults, budgets, starting nodes, and one event chain per
 * workload that creates its pods as they arrive.
 */
#include "sim/world/scenario.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "arena.h"
#include "buf.h"
#include "k8sname.h"
#include "quantity.h"
#include "runtime/backoff.h"
#include "ytree.h"

#define DEFAULT_START "2024-01-01T00:00:00Z"
#define DEFAULT_DURATION_NS (24LL * 3600 * CLOCK_NS_PER_S)
#define DEFAULT_GRACE_NS (30 * CLOCK_NS_PER_S)
#define MAX_POD_COUNT 10000000

/* ---- the walk ---- */

struct px {
	struct sim_scenario *sc;
	struct arena *a;
	const char *src;
	struct errbuf *err;
	struct ytree_path path;
	int64_t day_start; /* midnight UTC of the start's day */
	bool flavoured;    /* an aws:, gce: or azure: section places instances in zones */
};

static int vfail(struct px *x, const struct ytree_node *n, const char *fmt, va_list ap)
{
	char msg[ERRBUF_MAX];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (x->path.len)
		return errbuf_set(x->err, "%s:%d:%d: %s: %s", x->src, n->line, n->col, x->path.s, msg);
	return errbuf_set(x->err, "%s:%d:%d: %s", x->src, n->line, n->col, msg);
}

static int fail(struct px *x, const struct ytree_node *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct px *x, const struct ytree_node *n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(x, n, fmt, ap);
	va_end(ap);
	return -1;
}

static int oom(struct px *x)
{
	return errbuf_set(x->err, "%s: out of memory", x->src);
}

static const char *kind_name(const struct ytree_node *n)
{
	switch (n->kind) {
	case YTREE_MAP: return "a mapping";
	case YTREE_SEQ: return "a list";
	case YTREE_SCALAR: break;
	}
	return n->plain && ytree_null_text(n->text) ? "nothing (null)" : "a scalar";
}

static int expect(struct px *x, const struct ytree_node *n, enum ytree_kind k)
{
	static const char *const names[] = {"a scalar", "a list", "a mapping"};

	if (n->kind == k)
		return 0;
	return fail(x, n, "expected %s, got %s", names[k], kind_name(n));
}

/* Unknown keys are errors: a typo must not go unnoticed. */
static int check_keys(struct px *x, const struct ytree_node *m, const char *const *keys)
{
	const struct ytree_node *c;

	for (c = m->first; c; c = c->next) {
		const char *const *k;
		char list[256];
		size_t len = 0;

		for (k = keys; *k; k++)
			if (strcmp(*k, c->key->text) == 0)
				break;
		if (*k)
			continue;
		list[0] = '\0';
		for (k = keys; *k && len < sizeof(list); k++)
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
						k == keys ? "" : ", ", *k);
		return fail(x, c->key, "unknown key \"%s\" (known: %s)", c->key->text, list);
	}
	return 0;
}

/* Pushes 'key' on the path; every get_* below pops it again. */
static const struct ytree_node *field(struct px *x, const struct ytree_node *m, const char *key,
				      size_t *old)
{
	const struct ytree_node *n = ytree_map_find(m, key);

	if (n && ytree_is_null(n))
		n = NULL; /* "key:" alone means "not set" */
	*old = ytree_path_push_key(&x->path, key);
	return n;
}

static int missing(struct px *x, const struct ytree_node *m, const char *key)
{
	return fail(x, m, "%s is required", key);
}

static int scalar_text(struct px *x, const struct ytree_node *n, const char **out)
{
	if (expect(x, n, YTREE_SCALAR))
		return -1;
	*out = n->text;
	return 0;
}

static int get_str(struct px *x, const struct ytree_node *m, const char *key, bool required,
		   const char **out)
{
	size_t old;
	const struct ytree_node *n = field(x, m, key, &old);
	int rc = 0;

	if (n) {
		rc = scalar_text(x, n, out);
		if (!rc && !(*out = arena_strdup(x->a, *out)))
			rc = oom(x);
	}
	ytree_path_pop(&x->path, old);
	if (!n && required)
		return missing(x, m, key);
	return rc;
}

static int get_int(struct px *x, const struct ytree_node *m, const char *key, int64_t lo,
		   int64_t hi, int64_t *out)
{
	size_t old;
	const struct ytree_node *n = field(x, m, key, &old);
	int64_t v;
	int rc = 0;

	if (n) {
		if (n->kind != YTREE_SCALAR || !n->plain || ytree_int_text(n->text, &v) != 0)
			rc = fail(x, n, "expected an integer, got %s%s%s", n->kind == YTREE_SCALAR ? "\"" : "",
				  n->kind == YTREE_SCALAR ? n->text : kind_name(n),
				  n->kind == YTREE_SCALAR ? "\"" : "");
		else if (v < lo || v > hi)
			rc = fail(x, n, "%lld is out of range [%lld, %lld]", (long long)v,
				  (long long)lo, (long long)hi);
		else
			*out = v;
	}
	ytree_path_pop(&x->path, old);
	return rc;
}

static int get_num(struct px *x, const struct ytree_node *m, const char *key, double lo,
		   double hi, double *out)
{
	size_t old;
	const struct ytree_node *n = field(x, m, key, &old);
	double v;
	int rc = 0;

	if (n) {
		if (n->kind != YTREE_SCALAR || !n->plain || ytree_float_text(n->text, &v) != 0 ||
		    !isfinite(v))
			rc = fail(x, n, "expected a number");
		else if (v < lo || v > hi)
			rc = fail(x, n, "%g is out of range [%g, %g]", v, lo, hi);
		else
			*out = v;
	}
	ytree_path_pop(&x->path, old);
	return rc;
}

static int get_bool(struct px *x, const struct ytree_node *m, const char *key, bool *out)
{
	size_t old;
	const struct ytree_node *n = field(x, m, key, &old);
	int rc = 0;

	if (n && (n->kind != YTREE_SCALAR || !n->plain || ytree_bool_text(n->text, out) != 0))
		rc = fail(x, n, "expected true or false");
	ytree_path_pop(&x->path, old);
	return rc;
}

/* "90s", "1h30m", "250ms", or "0". */
static int duration_text(const char *s, int64_t *ns)
{
	int64_t ms;

	if (strcmp(s, "0") == 0) {
		*ns = 0;
		return 0;
	}
	if (config_parse_duration(s, &ms) < 0 || ms > INT64_MAX / CLOCK_NS_PER_MS)
		return -1;
	*ns = ms * CLOCK_NS_PER_MS;
	return 0;
}

static int get_duration(struct px *x, const struct ytree_node *m, const char *key, int64_t *out)
{
	size_t old;
	const struct ytree_node *n = field(x, m, key, &old);
	int rc = 0;

	if (n && (n->kind != YTREE_SCALAR || duration_text(n->text, out) < 0))
		rc = fail(x, n, "expected a duration like \"90s\", \"15m\" or \"1h30m\", got %s%s%s",
			  n->kind == YTREE_SCALAR ? "\"" : "",
			  n->kind == YTREE_SCALAR ? n->text : kind_name(n),
			  n->kind == YTREE_SCALAR ? "\"" : "");
	ytree_path_pop(&x->path, old);
	return rc;
}

/* "HH:MM" or "HH:MM:SS" into seconds of the day; -1 when not one. */
static int64_t clock_time(const char *s)
{
	int h, m, sec = 0, n = 0;

	if (sscanf(s, "%2d:%2d%n", &h, &m, &n) != 2)
		return -1;
	if (s[n] == ':') {
		int n2 = 0;

		if (sscanf(s + n + 1, "%2d%n", &sec, &n2) != 1 || n2 != 2)
			return -1;
		n += 1 + n2;
	}
	if (s[n] || h < 0 || h > 23 || m < 0 || m > 59 || sec < 0 || sec > 59 ||
	    !(s[1] == ':' || s[2] == ':'))
		return -1;
	return (int64_t)h * 3600 + m * 60 + sec;
}

/* A point in the run: a duration from the start, or "HH:MM[:SS]" on the start's day (UTC). */
static int get_time(struct px *x, const struct ytree_node *m, const char *key, int64_t *out)
{
	size_t old;
	const struct ytree_node *n = field(x, m, key, &old);
	int64_t tod;
	int rc = 0;

	if (!n)
		goto out;
	if (n->kind != YTREE_SCALAR) {
		rc = fail(x, n, "expected a time: a duration from the start (\"90m\") or a time of day (\"09:00\")");
		goto out;
	}
	tod = clock_time(n->text);
	if (tod >= 0) {
		int64_t at = x->day_start + tod - x->sc->start_wall;

		if (at < 0)
			rc = fail(x, n, "%s is before the scenario's start", n->text);
		else
			*out = at * CLOCK_NS_PER_S;
	} else if (duration_text(n->text, out) < 0) {
		rc = fail(x, n, "expected a time: a duration from the start (\"90m\") or a time of day (\"09:00\"), got \"%s\"",
			  n->text);
	}
out:
	ytree_path_pop(&x->path, old);
	return rc;
}

/* A mapping of strings (labels, selectors); 'what' names the keys. */
static int get_kv(struct px *x, const struct ytree_node *m, const char *key, bool label_keys,
		  struct kvlist *out)
{
	size_t old;
	const struct ytree_node *n = field(x, m, key, &old), *c;
	size_t i = 0;
	int rc = 0;

	out->items = NULL;
	out->n = 0;
	if (!n)
		goto out;
	if ((rc = expect(x, n, YTREE_MAP)))
		goto out;
	out->items = n->n ? arena_calloc(x->a, n->n, sizeof(*out->items)) : NULL;
	if (n->n && !out->items) {
		rc = oom(x);
		goto out;
	}
	for (c = n->first; c; c = c->next) {
		size_t o2 = ytree_path_push_key(&x->path, c->key->text);

		if (label_keys && !k8sname_valid_qualified_name(c->key->text, NULL, 0))
			rc = fail(x, c->key, "invalid key \"%s\"", c->key->text);
		else if (c->kind != YTREE_SCALAR)
			rc = fail(x, c, "expected a string, got %s", kind_name(c));
		else if (!(out->items[i].key = arena_strdup(x->a, c->key->text)) ||
			 !(out->items[i].value = arena_strdup(x->a, c->text)))
			rc = oom(x);
		ytree_path_pop(&x->path, o2);
		if (rc)
			goto out;
		i++;
	}
	out->n = i;
out:
	ytree_path_pop(&x->path, old);
	return rc;
}

/* Resources: cpu, memory, ephemeral-storage, pods, and domain/name extended ones. */
static int parse_resources(struct px *x, const struct ytree_node *n, bool allocatable,
			   struct resources *r)
{
	const struct ytree_node *c;
	int rc = 0;

	memset(r, 0, sizeof(*r));
	if (expect(x, n, YTREE_MAP))
		return -1;
	if (allocatable)
		r->pods = 110;
	r->ext = n->n ? arena_calloc(x->a, n->n, sizeof(*r->ext)) : NULL;
	if (n->n && !r->ext)
		return oom(x);
	for (c = n->first; c && !rc; c = c->next) {
		const char *name = c->key->text;
		size_t old = ytree_path_push_key(&x->path, name);
		struct errbuf qe;
		int64_t *dst = NULL, v;
		enum quantity_unit unit = QUANTITY_UNIT;

		if (!strcmp(name, "cpu")) {
			dst = &r->cpu_m;
			unit = QUANTITY_MILLI;
		} else if (!strcmp(name, "memory")) {
			dst = &r->memory;
		} else if (!strcmp(name, "ephemeral-storage")) {
			dst = &r->ephemeral;
		} else if (!strcmp(name, "pods") && allocatable) {
			dst = &r->pods;
		} else if (!strchr(name, '/') || !k8sname_valid_qualified_name(name, NULL, 0)) {
			rc = fail(x, c->key, "unknown resource \"%s\": cpu, memory, ephemeral-storage%s, or an extended resource like \"nvidia.com/gpu\"",
				  name, allocatable ? ", pods" : "");
		}
		if (!rc && c->kind != YTREE_SCALAR)
			rc = fail(x, c, "expected a quantity like \"500m\" or \"2Gi\", got %s",
				  kind_name(c));
		if (!rc && quantity_parse(c->text, unit, &v, &qe) < 0)
			rc = fail(x, c, "%s", qe.msg);
		if (!rc && v < 0)
			rc = fail(x, c, "must not be negative");
		if (!rc) {
			if (dst) {
				*dst = v;
			} else {
				r->ext[r->n_ext].name = arena_strdup(x->a, name);
				r->ext[r->n_ext].value = v;
				if (!r->ext[r->n_ext].name)
					rc = oom(x);
				r->n_ext++;
			}
		}
		ytree_path_pop(&x->path, old);
	}
	if (!r->n_ext)
		r->ext = NULL;
	return rc;
}

static int parse_effect(struct px *x, const struct ytree_node *m, bool required, int *out)
{
	const char *s = NULL;
	enum taint_effect e;
	size_t old;

	if (get_str(x, m, "effect", required, &s))
		return -1;
	if (!s) {
		*out = -1;
		return 0;
	}
	if (taint_effect_parse(s, &e) < 0) {
		const struct ytree_node *n = ytree_map_find(m, "effect");

		old = ytree_path_push_key(&x->path, "effect");
		fail(x, n, "expected NoSchedule, PreferNoSchedule or NoExecute, got \"%s\"", s);
		ytree_path_pop(&x->path, old);
		return -1;
	}
	*out = (int)e;
	return 0;
}

static int parse_taints(struct px *x, const struct ytree_node *n, struct taint **out, size_t *nout)
{
	static const char *const keys[] = {"key", "value", "effect", NULL};
	const struct ytree_node *c;
	size_t i = 0;

	*out = NULL;
	*nout = 0;
	if (expect(x, n, YTREE_SEQ))
		return -1;
	if (!n->n)
		return 0;
	*out = arena_calloc(x->a, n->n, sizeof(**out));
	if (!*out)
		return oom(x);
	for (c = n->first; c; c = c->next, i++) {
		struct taint *t = &(*out)[i];
		size_t old = ytree_path_push_index(&x->path, i);
		int eff = 0, rc;

		t->value = "";
		rc = expect(x, c, YTREE_MAP) || check_keys(x, c, keys) ||
		     get_str(x, c, "key", true, &t->key) || get_str(x, c, "value", false, &t->value) ||
		     parse_effect(x, c, true, &eff);
		t->effect = (enum taint_effect)eff;
		ytree_path_pop(&x->path, old);
		if (rc)
			return -1;
	}
	*nout = i;
	return 0;
}

static int parse_tolerations(struct px *x, const struct ytree_node *n, struct toleration **out,
			     size_t *nout)
{
	static const char *const keys[] = {"key", "operator", "value", "effect", NULL};
	const struct ytree_node *c;
	size_t i = 0;

	*out = NULL;
	*nout = 0;
	if (expect(x, n, YTREE_SEQ))
		return -1;
	if (!n->n)
		return 0;
	*out = arena_calloc(x->a, n->n, sizeof(**out));
	if (!*out)
		return oom(x);
	for (c = n->first; c; c = c->next, i++) {
		struct toleration *t = &(*out)[i];
		size_t old = ytree_path_push_index(&x->path, i);
		const char *op = NULL;
		int rc;

		t->key = "";
		t->value = "";
		rc = expect(x, c, YTREE_MAP) || check_keys(x, c, keys) ||
		     get_str(x, c, "key", false, &t->key) || get_str(x, c, "operator", false, &op) ||
		     get_str(x, c, "value", false, &t->value) ||
		     parse_effect(x, c, false, &t->effect);
		if (!rc) {
			if (!op || strcmp(op, "Equal") == 0) {
				t->op = TOLERATION_EQUAL;
			} else if (strcmp(op, "Exists") == 0) {
				t->op = TOLERATION_EXISTS;
			} else {
				size_t o2 = ytree_path_push_key(&x->path, "operator");

				rc = fail(x, ytree_map_find(c, "operator"),
					  "expected Equal or Exists, got \"%s\"", op);
				ytree_path_pop(&x->path, o2);
			}
		}
		if (!rc && t->op == TOLERATION_EQUAL && !t->key[0])
			rc = fail(x, c, "an Equal toleration needs a key");
		ytree_path_pop(&x->path, old);
		if (rc)
			return -1;
	}
	*nout = i;
	return 0;
}

/* ---- sections ---- */

static int parse_group(struct px *x, const struct ytree_node *m, struct node_group *g)
{
	static const char *const keys[] = {"name", "min", "max", "price_per_hour", "selector",
					   "template", NULL};
	static const char *const tkeys[] = {"allocatable", "labels", "taints", NULL};
	const struct ytree_node *t, *n;
	int64_t min = 0, max = -1;
	size_t old, i;
	int rc;

	if (expect(x, m, YTREE_MAP) || check_keys(x, m, keys) ||
	    get_str(x, m, "name", true, &g->name) || get_int(x, m, "min", 0, INT_MAX, &min) ||
	    get_int(x, m, "max", 0, INT_MAX, &max) ||
	    get_num(x, m, "price_per_hour", 0, 1e9, &g->price_per_hour) ||
	    get_kv(x, m, "selector", true, &g->selector))
		return -1;
	if (strlen(g->name) > 48 || !k8sname_valid_dns_subdomain(g->name)) {
		old = ytree_path_push_key(&x->path, "name");
		fail(x, ytree_map_find(m, "name"),
		     "invalid node group name \"%s\": up to 48 lowercase letters, digits, '-' and '.'",
		     g->name);
		ytree_path_pop(&x->path, old);
		return -1;
	}
	if (max < 0)
		return missing(x, m, "max");
	if (min > max)
		return fail(x, m, "min %lld is above max %lld", (long long)min, (long long)max);
	g->min = (int)min;
	g->max = (int)max;
	g->target = -1;
	/* a group of the plain simulator is its nodes' luascale.io/node-group
	 * label; a cloud's nodes (aws:, gce:, azure:) carry no such label
	 * unless the template sets one, as real clouds set none: their nodes
	 * are found by providerID */
	if (!g->selector.n && !x->flavoured) {
		g->selector.items = arena_calloc(x->a, 1, sizeof(*g->selector.items));
		if (!g->selector.items)
			return oom(x);
		g->selector.items[0].key = "luascale.io/node-group";
		g->selector.items[0].value = g->name;
		g->selector.n = 1;
	}
	t = field(x, m, "template", &old);
	if (!t) {
		ytree_path_pop(&x->path, old);
		return missing(x, m, "template");
	}
	rc = expect(x, t, YTREE_MAP) || check_keys(x, t, tkeys);
	if (!rc) {
		size_t o2;

		n = field(x, t, "allocatable", &o2);
		rc = n ? parse_resources(x, n, true, &g->tmpl.allocatable) : 0;
		ytree_path_pop(&x->path, o2);
		if (!rc && !n)
			rc = missing(x, t, "allocatable");
	}
	if (!rc)
		rc = get_kv(x, t, "labels", true, &g->tmpl.labels);
	if (!rc) {
		size_t o2;

		n = field(x, t, "taints", &o2);
		rc = n ? parse_taints(x, n, &g->tmpl.taints, &g->tmpl.n_taints) : 0;
		ytree_path_pop(&x->path, o2);
	}
	ytree_path_pop(&x->path, old);
	if (rc)
		return -1;
	/* a new node carries its group's selector labels */
	if (g->selector.n) {
		struct kvlist *l = &g->tmpl.labels;
		struct kv *items = arena_calloc(x->a, l->n + g->selector.n, sizeof(*items));
		size_t k = l->n;

		if (!items)
			return oom(x);
		if (l->n)
			memcpy(items, l->items, l->n * sizeof(*items));
		for (i = 0; i < g->selector.n; i++) {
			const char *have = kvlist_get(l, g->selector.items[i].key);

			if (have && strcmp(have, g->selector.items[i].value) != 0)
				return fail(x, m, "template label %s=%s contradicts the selector's %s=%s",
					    g->selector.items[i].key, have, g->selector.items[i].key,
					    g->selector.items[i].value);
			if (!have)
				items[k++] = g->selector.items[i];
		}
		l->items = items;
		l->n = k;
	}
	/* what a node of the group must still carry: the scenario's words */
	g->drift_labels = g->tmpl.labels;
	g->drift_taints = g->tmpl.taints;
	g->n_drift_taints = g->tmpl.n_taints;
	return 0;
}

/* Parses one item of a list into base[i]; the path points at the item. */
typedef int (*item_fn)(struct px *x, const struct ytree_node *n, void *base, size_t i);

/*
 * Parses sequence 's' into a new arena array of 'size'-byte items, one
 * item_fn call each (which may compare with the items before it). Sets
 * *items and *n. 0, or -1 with the error set.
 */
static int parse_list(struct px *x, const struct ytree_node *s, size_t size, item_fn fn,
		      void **items, size_t *n)
{
	const struct ytree_node *c;
	void *base;
	size_t i = 0;

	if (expect(x, s, YTREE_SEQ))
		return -1;
	base = s->n ? arena_calloc(x->a, s->n, size) : NULL;
	if (s->n && !base)
		return oom(x);
	for (c = s->first; c; c = c->next, i++) {
		size_t old = ytree_path_push_index(&x->path, i);
		int rc = fn(x, c, base, i);

		ytree_path_pop(&x->path, old);
		if (rc)
			return -1;
	}
	*items = base;
	*n = i;
	return 0;
}

static int group_item(struct px *x, const struct ytree_node *c, void *base, size_t i)
{
	struct node_group *groups = base;
	size_t j;
	int rc = parse_group(x, c, &groups[i]);

	for (j = 0; !rc && j < i; j++)
		if (strcmp(groups[i].name, groups[j].name) == 0)
			rc = fail(x, c, "duplicate node group \"%s\"", groups[i].name);
	return rc;
}

static int parse_groups(struct px *x, const struct ytree_node *s)
{
	void *groups = NULL;

	if (parse_list(x, s, sizeof(struct node_group), group_item, &groups, &x->sc->n_groups) < 0)
		return -1;
	x->sc->groups = groups;
	return 0;
}

static int find_group(const struct sim_scenario *sc, const char *name)
{
	size_t i;

	for (i = 0; i < sc->n_groups; i++)
		if (strcmp(sc->groups[i].name, name) == 0)
			return (int)i;
	return -1;
}

static int check_group_ref(struct px *x, const struct ytree_node *m, const char *key,
			   const char *name)
{
	size_t old;
	int rc = 0;

	if (!name || find_group(x->sc, name) >= 0)
		return 0;
	old = ytree_path_push_key(&x->path, key);
	rc = fail(x, ytree_map_find(m, key), "no node group \"%s\"", name);
	ytree_path_pop(&x->path, old);
	return rc;
}

static int parse_cloud(struct px *x, const struct ytree_node *m)
{
	static const char *const keys[] = {"boot_delay", "boot_jitter", "launch_latency",
					   "terminate_latency", "shutdown_delay", "api_qps",
					   "api_burst", NULL};
	struct sim_cloud_opts *o = &x->sc->cloud;
	int64_t burst = o->api_burst;

	if (expect(x, m, YTREE_MAP) || check_keys(x, m, keys) ||
	    get_duration(x, m, "boot_delay", &o->boot_delay_ns) ||
	    get_duration(x, m, "boot_jitter", &o->boot_jitter_ns) ||
	    get_duration(x, m, "launch_latency", &o->launch_latency_ns) ||
	    get_duration(x, m, "terminate_latency", &o->terminate_latency_ns) ||
	    get_duration(x, m, "shutdown_delay", &o->shutdown_delay_ns) ||
	    get_num(x, m, "api_qps", 0, 1e6, &o->api_qps) ||
	    get_int(x, m, "api_burst", 0, 1000000, &burst))
		return -1;
	o->api_burst = (int)burst;
	if (o->api_qps > 0 && o->api_burst < 1)
		o->api_burst = 1;
	return 0;
}

static int parse_safety(struct px *x, const struct ytree_node *m)
{
	static const char *const keys[] = {"max_nodes_total", "max_scale_down_per_round", NULL};

	if (x->sc->config)
		return fail(x, m, "give safety in the config the scenario names, not here");
	return expect(x, m, YTREE_MAP) || check_keys(x, m, keys) ||
	       get_int(x, m, "max_nodes_total", 0, 1000000, &x->sc->max_nodes_total) ||
	       get_int(x, m, "max_scale_down_per_round", 1, 1000000,
		       &x->sc->max_scale_down_per_round) ? -1 : 0;
}

static int parse_cluster(struct px *x, const struct ytree_node *m)
{
	static const char *const keys[] = {"register_delay", "scheduler", "scheduler_interval",
					   "finished_ttl", NULL};
	struct sim_cluster_opts *o = &x->sc->cluster;
	const char *sched = NULL;

	if (expect(x, m, YTREE_MAP) || check_keys(x, m, keys) ||
	    get_duration(x, m, "register_delay", &o->register_delay_ns) ||
	    get_duration(x, m, "scheduler_interval", &o->sched_interval_ns) ||
	    get_duration(x, m, "finished_ttl", &o->finished_ttl_ns) ||
	    get_str(x, m, "scheduler", false, &sched))
		return -1;
	if (!sched || strcmp(sched, "first-fit") == 0) {
		o->sched = SIM_SCHED_FIRST_FIT;
	} else if (strcmp(sched, "least-allocated") == 0) {
		o->sched = SIM_SCHED_LEAST_ALLOCATED;
	} else {
		size_t old = ytree_path_push_key(&x->path, "scheduler");

		fail(x, ytree_map_find(m, "scheduler"),
		     "expected first-fit or least-allocated, got \"%s\"", sched);
		ytree_path_pop(&x->path, old);
		return -1;
	}
	return 0;
}

static int initial_item(struct px *x, const struct ytree_node *c, void *base, size_t i)
{
	static const char *const keys[] = {"group", "count", NULL};
	struct sim_initial_nodes *in = (struct sim_initial_nodes *)base + i;
	int64_t count = 1;
	int rc = expect(x, c, YTREE_MAP) || check_keys(x, c, keys) ||
		 get_str(x, c, "group", true, &in->group) ||
		 get_int(x, c, "count", 0, 100000, &count) ||
		 check_group_ref(x, c, "group", in->group);

	in->count = (int)count;
	return rc;
}

static int parse_initial(struct px *x, const struct ytree_node *s)
{
	void *items = NULL;

	if (parse_list(x, s, sizeof(*x->sc->initial), initial_item, &items, &x->sc->n_initial) < 0)
		return -1;
	x->sc->initial = items;
	return 0;
}

/* ---- a workload's relations to other pods and to zones ---- */

#define ZONE_LABEL "topology.kubernetes.io/zone"
#define HOSTNAME_LABEL "kubernetes.io/hostname"

/* The label a topology is read from: hostname, zone, region, or a key as written. */
static int topology_key(struct px *x, const struct ytree_node *n, const char **out)
{
	if (n->kind != YTREE_SCALAR)
		return fail(x, n, "expected hostname, zone, region or a node label key, got %s",
			    kind_name(n));
	if (strcmp(n->text, "hostname") == 0)
		*out = HOSTNAME_LABEL;
	else if (strcmp(n->text, "zone") == 0)
		*out = ZONE_LABEL;
	else if (strcmp(n->text, "region") == 0)
		*out = "topology.kubernetes.io/region";
	else if (k8sname_valid_qualified_name(n->text, NULL, 0))
		*out = arena_strdup(x->a, n->text);
	else
		return fail(x, n, "expected hostname, zone, region or a node label key, got \"%s\"",
			    n->text);
	return *out ? 0 : oom(x);
}

/* Whether some node can have label 'key': every node has its hostname; a
 * group's template sets the others, or a cloud flavour places instances
 * in zones. */
static bool key_possible(const struct px *x, const char *key)
{
	size_t i;

	if (strcmp(key, HOSTNAME_LABEL) == 0 || (x->flavoured && strcmp(key, ZONE_LABEL) == 0))
		return true;
	for (i = 0; i < x->sc->n_groups; i++)
		if (kvlist_get(&x->sc->groups[i].tmpl.labels, key))
			return true;
	return false;
}

/* The key 'key' of 'm', a topology: required or not, checked against the groups. */
static int get_topology(struct px *x, const struct ytree_node *m, const char *key,
			bool required, const char **out)
{
	size_t old;
	const struct ytree_node *n = field(x, m, key, &old);
	int rc = 0;

	*out = NULL;
	if (n && !(rc = topology_key(x, n, out)) && !key_possible(x, *out))
		rc = fail(x, n, "no node group's template has the label %s (template.labels): no node would be in a domain of it",
			  *out);
	ytree_path_pop(&x->path, old);
	if (!n && required)
		return missing(x, m, key);
	return rc;
}

/* matchLabels 'labels' as a selector (every label In its one value). */
static int selector_of(struct px *x, const struct kvlist *labels, struct label_selector *out)
{
	size_t i;

	out->n = 0;
	out->reqs = labels->n ? arena_calloc(x->a, labels->n, sizeof(*out->reqs)) : NULL;
	if (labels->n && !out->reqs)
		return oom(x);
	for (i = 0; i < labels->n; i++) {
		struct selector_req *r = &out->reqs[i];

		r->key = labels->items[i].key;
		r->op = SELECTOR_IN;
		r->values = arena_calloc(x->a, 1, sizeof(*r->values));
		if (!r->values)
			return oom(x);
		r->values[0] = labels->items[i].value;
		r->n_values = 1;
	}
	out->n = labels->n;
	return 0;
}

/* One required (anti-)affinity term: pods with 'labels' in the same domain of 'key'. */
static int one_term(struct px *x, const struct kvlist *labels, const char *key,
		    struct pod_term **out, size_t *n)
{
	struct pod_term *t = arena_calloc(x->a, 1, sizeof(*t));

	if (!t)
		return oom(x);
	t->topology_key = key;
	if (selector_of(x, labels, &t->selector) < 0)
		return -1;
	*out = t;
	*n = 1;
	return 0;
}

/* anti_affinity: hostname — no two of its pods (its labels) in one domain. */
static int parse_anti(struct px *x, const struct ytree_node *m, struct sim_pod_spec *sp)
{
	const char *key = NULL;

	if (get_topology(x, m, "anti_affinity", false, &key))
		return -1;
	if (!key)
		return 0;
	if (!sp->labels.n) {
		size_t old = ytree_path_push_key(&x->path, "anti_affinity");

		fail(x, ytree_map_find(m, "anti_affinity"),
		     "needs the workload's labels: its pods are matched by them");
		ytree_path_pop(&x->path, old);
		return -1;
	}
	return one_term(x, &sp->labels, key, &sp->anti_terms, &sp->n_anti_terms);
}

/* pod_affinity: {topology: zone, labels: {app: db}} — only where such a pod runs. */
static int parse_pod_affinity(struct px *x, const struct ytree_node *m, struct sim_pod_spec *sp)
{
	static const char *const keys[] = {"topology", "labels", NULL};
	size_t old;
	const struct ytree_node *n = field(x, m, "pod_affinity", &old);
	struct kvlist labels = {0};
	const char *key = NULL;
	int rc = 0;

	if (n)
		rc = expect(x, n, YTREE_MAP) || check_keys(x, n, keys) ||
		     get_topology(x, n, "topology", true, &key) ||
		     get_kv(x, n, "labels", true, &labels) ? -1 : 0;
	if (n && !rc && !labels.n)
		rc = fail(x, n, "labels is required: the pods it must run beside");
	if (n && !rc)
		rc = one_term(x, &labels, key, &sp->affinity_terms, &sp->n_affinity_terms);
	ytree_path_pop(&x->path, old);
	return rc;
}

/* One spread constraint: {topology: zone, max_skew: 1, min_domains: 3}. */
static int spread_item(struct px *x, const struct ytree_node *c, void *base, size_t i)
{
	static const char *const keys[] = {"topology", "max_skew", "min_domains", NULL};
	struct spread_constraint *sc = (struct spread_constraint *)base + i;
	int64_t skew = 1, min = 1;

	if (expect(x, c, YTREE_MAP) || check_keys(x, c, keys) ||
	    get_topology(x, c, "topology", true, &sc->topology_key) ||
	    get_int(x, c, "max_skew", 1, 1000000, &skew) ||
	    get_int(x, c, "min_domains", 1, 1000000, &min))
		return -1;
	sc->max_skew = (int32_t)skew;
	sc->min_domains = (int32_t)min;
	sc->honor_affinity = true; /* the defaults: nodeAffinityPolicy Honor, */
	sc->honor_taints = false;  /* nodeTaintsPolicy Ignore */
	return 0;
}

/* topology_spread: one constraint or a list, over the workload's own pods. */
static int parse_spread(struct px *x, const struct ytree_node *m, struct sim_pod_spec *sp)
{
	size_t old, i;
	const struct ytree_node *n = field(x, m, "topology_spread", &old);
	void *items = NULL;
	int rc = 0;

	if (!n)
		goto out;
	if (!sp->labels.n) {
		rc = fail(x, n, "needs the workload's labels: its pods are counted by them");
		goto out;
	}
	if (n->kind == YTREE_MAP) {
		items = arena_calloc(x->a, 1, sizeof(struct spread_constraint));
		rc = items ? spread_item(x, n, items, 0) : oom(x);
		sp->n_spread = 1;
	} else if (n->kind == YTREE_SEQ) {
		rc = parse_list(x, n, sizeof(struct spread_constraint), spread_item, &items,
				&sp->n_spread);
	} else {
		rc = fail(x, n, "expected a mapping {topology: zone, max_skew: 1} or a list of them, got %s",
			  kind_name(n));
	}
	if (rc)
		goto out;
	sp->spread = items;
	for (i = 0; i < sp->n_spread && !rc; i++)
		rc = selector_of(x, &sp->labels, &sp->spread[i].selector);
out:
	ytree_path_pop(&x->path, old);
	return rc;
}

/* host_port: 8443 — a container port with that hostPort (TCP, every address). */
static int parse_host_port(struct px *x, const struct ytree_node *m, struct sim_pod_spec *sp)
{
	int64_t port = 0;

	if (get_int(x, m, "host_port", 1, 65535, &port))
		return -1;
	if (!port)
		return 0;
	sp->host_ports = arena_calloc(x->a, 1, sizeof(*sp->host_ports));
	if (!sp->host_ports)
		return oom(x);
	sp->host_ports[0].ip = "0.0.0.0";
	sp->host_ports[0].port = (int32_t)port;
	sp->host_ports[0].protocol = PORT_TCP;
	sp->n_host_ports = 1;
	return 0;
}

/* Whether some group's template is in zone 'zone'. */
static bool zone_possible(const struct px *x, const char *zone)
{
	size_t i;

	if (x->flavoured)
		return true;
	for (i = 0; i < x->sc->n_groups; i++) {
		const char *z = kvlist_get(&x->sc->groups[i].tmpl.labels, ZONE_LABEL);

		if (z && strcmp(z, zone) == 0)
			return true;
	}
	return false;
}

/* volume: {claim: data, storage_class: zonal, zones: [a, b]} — a claim per replica. */
static int parse_volume(struct px *x, const struct ytree_node *m, struct sim_pod_spec *sp)
{
	static const char *const keys[] = {"claim", "storage_class", "zones", NULL};
	size_t old, o2, i = 0;
	const struct ytree_node *n = field(x, m, "volume", &old), *zs, *c;
	struct sim_volume *v;
	const char **zones = NULL;
	int rc = 0;

	if (!n)
		goto out;
	v = arena_calloc(x->a, 1, sizeof(*v));
	if (!v) {
		rc = oom(x);
		goto out;
	}
	v->claim = "data";
	v->storage_class = "zonal";
	v->zone_key = ZONE_LABEL;
	if (expect(x, n, YTREE_MAP) || check_keys(x, n, keys) ||
	    get_str(x, n, "claim", false, &v->claim) ||
	    get_str(x, n, "storage_class", false, &v->storage_class)) {
		rc = -1;
		goto out;
	}
	if (sp->controller != SIM_CTRL_STATEFULSET) {
		rc = fail(x, n, "a volume per replica needs controller: statefulset (its claims are kept when a pod is replaced)");
		goto out;
	}
	if (!k8sname_valid_dns_label(v->claim) ||
	    !k8sname_valid_dns_subdomain(v->storage_class)) {
		bool claim = !k8sname_valid_dns_label(v->claim);

		o2 = ytree_path_push_key(&x->path, claim ? "claim" : "storage_class");
		rc = fail(x, ytree_map_find(n, claim ? "claim" : "storage_class"),
			  "invalid name \"%s\": lowercase letters, digits and '-'",
			  claim ? v->claim : v->storage_class);
		ytree_path_pop(&x->path, o2);
		goto out;
	}
	if (!key_possible(x, ZONE_LABEL)) {
		rc = fail(x, n, "no node group's template has the label %s (template.labels): a volume is in a zone",
			  ZONE_LABEL);
		goto out;
	}
	zs = field(x, n, "zones", &o2);
	if (zs && !(rc = expect(x, zs, YTREE_SEQ)) && zs->n) {
		zones = arena_calloc(x->a, zs->n, sizeof(*zones));
		if (!zones)
			rc = oom(x);
		for (c = zs->first; c && !rc; c = c->next, i++) {
			size_t o3 = ytree_path_push_index(&x->path, i);

			if (c->kind != YTREE_SCALAR || !c->text[0])
				rc = fail(x, c, "expected a zone name, got %s", kind_name(c));
			else if (!zone_possible(x, c->text))
				rc = fail(x, c, "no node group's template is in zone \"%s\" (its %s label): the replica could never run",
					  c->text, ZONE_LABEL);
			else if (!(zones[i] = arena_strdup(x->a, c->text)))
				rc = oom(x);
			ytree_path_pop(&x->path, o3);
		}
		v->zones = zones;
		v->n_zones = i;
	}
	ytree_path_pop(&x->path, o2);
	if (!rc)
		sp->volume = v;
out:
	ytree_path_pop(&x->path, old);
	return rc;
}

static int parse_workload(struct px *x, const struct ytree_node *m, struct sim_workload *w)
{
	static const char *const keys[] = {
		"name", "namespace", "controller", "at", "count", "interval", "spread", "every",
		"times", "requests", "labels", "annotations", "priority", "duration",
		"duration_spread", "grace", "node_selector", "tolerations", "local_storage",
		"safe_to_evict", "anti_affinity", "pod_affinity", "topology_spread", "host_port",
		"volume", NULL};
	struct sim_pod_spec *sp = &w->spec;
	const char *ctrl = NULL;
	const struct ytree_node *n;
	int64_t count = 1, times = 0, prio = 0;
	bool safe = true;
	size_t old;
	int rc;

	w->line = m->line;
	w->col = m->col;
	sp->ns = "default";
	sp->grace_ns = DEFAULT_GRACE_NS;
	if (expect(x, m, YTREE_MAP) || check_keys(x, m, keys) ||
	    get_str(x, m, "name", true, &sp->name) || get_str(x, m, "namespace", false, &sp->ns) ||
	    get_str(x, m, "controller", false, &ctrl) || get_time(x, m, "at", &w->at_ns) ||
	    get_int(x, m, "count", 0, MAX_POD_COUNT, &count) ||
	    get_duration(x, m, "interval", &w->interval_ns) ||
	    get_duration(x, m, "spread", &w->spread_ns) ||
	    get_duration(x, m, "every", &w->every_ns) ||
	    get_int(x, m, "times", 1, 1000000, &times) ||
	    get_kv(x, m, "labels", true, &sp->labels) ||
	    get_kv(x, m, "annotations", true, &sp->annotations) ||
	    get_int(x, m, "priority", INT32_MIN, INT32_MAX, &prio) ||
	    get_duration(x, m, "duration", &sp->duration_ns) ||
	    get_duration(x, m, "duration_spread", &w->duration_spread_ns) ||
	    get_duration(x, m, "grace", &sp->grace_ns) ||
	    get_kv(x, m, "node_selector", true, &sp->node_selector) ||
	    get_bool(x, m, "local_storage", &sp->local_storage) ||
	    get_bool(x, m, "safe_to_evict", &safe))
		return -1;
	if (!k8sname_valid_dns_subdomain(sp->name) || strlen(sp->name) > 200) {
		old = ytree_path_push_key(&x->path, "name");
		fail(x, ytree_map_find(m, "name"), "invalid name \"%s\": lowercase letters, digits, '-' and '.'",
		     sp->name);
		ytree_path_pop(&x->path, old);
		return -1;
	}
	if (!k8sname_valid_dns_label(sp->ns)) {
		old = ytree_path_push_key(&x->path, "namespace");
		fail(x, ytree_map_find(m, "namespace"), "invalid namespace \"%s\"", sp->ns);
		ytree_path_pop(&x->path, old);
		return -1;
	}
	sp->controller = SIM_CTRL_REPLICASET;
	if (ctrl && sim_controller_parse(ctrl, &sp->controller) < 0) {
		old = ytree_path_push_key(&x->path, "controller");
		fail(x, ytree_map_find(m, "controller"),
		     "expected none, replicaset, statefulset, job or daemonset, got \"%s\"", ctrl);
		ytree_path_pop(&x->path, old);
		return -1;
	}
	w->count = (int)count;
	w->times = (int)times;
	sp->priority = (int32_t)prio;
	sp->safe_to_evict_false = !safe;
	if (w->interval_ns && w->spread_ns)
		return fail(x, m, "interval and spread exclude each other: pods come one every interval, or at random over the spread");
	if (times > 1 && !w->every_ns)
		return fail(x, m, "times needs every (how far apart the waves are)");
	n = field(x, m, "requests", &old);
	rc = n ? parse_resources(x, n, false, &sp->requests) : 0;
	ytree_path_pop(&x->path, old);
	if (rc)
		return -1;
	n = field(x, m, "tolerations", &old);
	rc = n ? parse_tolerations(x, n, &sp->tolerations, &sp->n_tolerations) : 0;
	ytree_path_pop(&x->path, old);
	if (rc || parse_anti(x, m, sp) || parse_pod_affinity(x, m, sp) || parse_spread(x, m, sp) ||
	    parse_host_port(x, m, sp) || parse_volume(x, m, sp))
		return -1;
	if ((sp->n_anti_terms || sp->n_affinity_terms || sp->n_spread || sp->n_host_ports ||
	     sp->volume) && sp->controller == SIM_CTRL_DAEMONSET)
		return fail(x, m, "a daemonset's pods come with the nodes: anti_affinity, pod_affinity, topology_spread, host_port and volume are for the other controllers");
	return 0;
}

static int workload_item(struct px *x, const struct ytree_node *c, void *base, size_t i)
{
	struct sim_workload *all = base, *w = &all[i];
	size_t j;
	int rc = parse_workload(x, c, w);

	for (j = 0; !rc && j < i; j++)
		if (strcmp(all[j].spec.name, w->spec.name) == 0 &&
		    strcmp(all[j].spec.ns, w->spec.ns) == 0)
			rc = fail(x, c, "a workload named %s/%s is defined at line %d already",
				  w->spec.ns, w->spec.name, all[j].line);
	return rc;
}

static int parse_workloads(struct px *x, const struct ytree_node *s)
{
	void *items = NULL;

	if (parse_list(x, s, sizeof(*x->sc->workloads), workload_item, &items, &x->sc->n_workloads) < 0)
		return -1;
	x->sc->workloads = items;
	return 0;
}

static int parse_pdb(struct px *x, const struct ytree_node *m, struct pdb *b)
{
	static const char *const keys[] = {"name", "namespace", "selector", "min_available",
					   "max_unavailable", NULL};
	const struct ytree_node *sel, *v;
	const char *which = NULL;
	size_t old;
	int rc = 0;

	b->ns = "default";
	b->min_available = "";
	b->max_unavailable = "";
	if (expect(x, m, YTREE_MAP) || check_keys(x, m, keys) ||
	    get_str(x, m, "name", true, &b->name) || get_str(x, m, "namespace", false, &b->ns) ||
	    get_str(x, m, "min_available", false, &b->min_available) ||
	    get_str(x, m, "max_unavailable", false, &b->max_unavailable))
		return -1;
	if (!!b->min_available[0] == !!b->max_unavailable[0])
		return fail(x, m, "give exactly one of min_available and max_unavailable");
	which = b->min_available[0] ? "min_available" : "max_unavailable";
	{
		const char *s = b->min_available[0] ? b->min_available : b->max_unavailable;
		char *end;
		long val = strtol(s, &end, 10);

		if (end == s || *s == '-' || *s == '+' || (*end && strcmp(end, "%") != 0) ||
		    val > INT32_MAX || (*end == '%' && val > 100)) {
			old = ytree_path_push_key(&x->path, which);
			fail(x, ytree_map_find(m, which), "expected a count like 2 or a percentage like \"50%%\", got \"%s\"",
			     s);
			ytree_path_pop(&x->path, old);
			return -1;
		}
	}
	sel = field(x, m, "selector", &old);
	if (!sel) {
		ytree_path_pop(&x->path, old);
		return missing(x, m, "selector");
	} else if (sel->kind == YTREE_SCALAR) {
		rc = label_selector_parse(x->a, sel->text, &b->selector, x->err);
		if (rc < 0)
			rc = fail(x, sel, "%s", x->err->msg);
		else if (!b->selector.n)
			b->selects_all = true;
	} else if (sel->kind == YTREE_MAP) {
		size_t i = 0;

		b->selector.reqs = sel->n ? arena_calloc(x->a, sel->n, sizeof(*b->selector.reqs)) : NULL;
		if (sel->n && !b->selector.reqs)
			rc = oom(x);
		for (v = sel->first; v && !rc; v = v->next, i++) {
			struct selector_req *r = &b->selector.reqs[i];

			if (v->kind != YTREE_SCALAR) {
				size_t o2 = ytree_path_push_key(&x->path, v->key->text);

				rc = fail(x, v, "expected a string, got %s", kind_name(v));
				ytree_path_pop(&x->path, o2);
				break;
			}
			r->key = arena_strdup(x->a, v->key->text);
			r->op = SELECTOR_IN;
			r->values = arena_calloc(x->a, 1, sizeof(*r->values));
			if (!r->key || !r->values || !(r->values[0] = arena_strdup(x->a, v->text)))
				rc = oom(x);
			r->n_values = 1;
		}
		b->selector.n = i;
		b->selects_all = sel->n == 0;
	} else {
		rc = fail(x, sel, "expected matchLabels (a mapping) or a selector like \"app=web\"");
	}
	ytree_path_pop(&x->path, old);
	return rc;
}

static int pdb_item(struct px *x, const struct ytree_node *c, void *base, size_t i)
{
	return parse_pdb(x, c, (struct pdb *)base + i);
}

static int parse_pdbs(struct px *x, const struct ytree_node *s)
{
	void *items = NULL;

	if (parse_list(x, s, sizeof(*x->sc->pdbs), pdb_item, &items, &x->sc->n_pdbs) < 0)
		return -1;
	x->sc->pdbs = items;
	return 0;
}

static int parse_error_name(const char *s, enum provider_error *out)
{
	static const struct {
		const char *name;
		enum provider_error e;
	} names[] = {
		{"no_capacity", PROVIDER_NO_CAPACITY}, {"quota", PROVIDER_QUOTA},
		{"throttled", PROVIDER_THROTTLED}, {"transient", PROVIDER_TRANSIENT},
		{"invalid", PROVIDER_INVALID}, {"auth", PROVIDER_AUTH},
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(s, names[i].name) == 0) {
			*out = names[i].e;
			return 0;
		}
	}
	return -1;
}

/* An interrupt fault: at 'at', 'count' or a 'fraction' of a group's
 * running instances are told, and reclaimed 'warning' (default 2m) later. */
static int parse_interrupt(struct px *x, const struct ytree_node *m, struct sim_fault *f)
{
	if (ytree_map_find(m, "from") || ytree_map_find(m, "until") || ytree_map_find(m, "rate") ||
	    ytree_map_find(m, "delay") || ytree_map_find(m, "error"))
		return fail(x, m, "an interrupt fault takes at, count or fraction, and warning (not from, until, rate, delay or error)");
	f->delay_ns = 2 * 60 * CLOCK_NS_PER_S;
	if (get_time(x, m, "at", &f->from_ns) || get_num(x, m, "fraction", 0, 1, &f->rate) ||
	    get_duration(x, m, "warning", &f->delay_ns))
		return -1;
	if (!ytree_map_find(m, "at"))
		return missing(x, m, "at");
	if (!!ytree_map_find(m, "count") == !!ytree_map_find(m, "fraction"))
		return fail(x, m, "an interrupt fault takes one of count (instances) and fraction (of the running ones)");
	if (ytree_map_find(m, "count") && f->count < 1)
		return fail(x, m, "count must be at least 1");
	if (ytree_map_find(m, "fraction") && !(f->rate > 0))
		return fail(x, m, "fraction must be above 0");
	if (f->delay_ns < 0)
		return fail(x, m, "warning must not be negative");
	return 0;
}

/* An image fault: at 'at', the group (every group without one) launches
 * 'image' from then on. */
static int parse_image_fault(struct px *x, const struct ytree_node *m, struct sim_fault *f)
{
	static const char *const allowed[] = {"kind", "group", "at", "image", NULL};
	const struct ytree_node *k;
	size_t i;

	for (k = m->first; k; k = k->next) {
		for (i = 0; allowed[i] && strcmp(allowed[i], k->key->text); i++)
			;
		if (!allowed[i])
			return fail(x, k->key, "an image fault takes group, at and image (not %s)", k->key->text);
	}
	if (get_time(x, m, "at", &f->from_ns) || get_str(x, m, "image", true, &f->image))
		return -1;
	if (!ytree_map_find(m, "at"))
		return missing(x, m, "at");
	if (!f->image[0] || strlen(f->image) >= SIM_IMAGE_MAX ||
	    strcspn(f->image, " \t\r\n\"'") != strlen(f->image)) {
		size_t old = ytree_path_push_key(&x->path, "image");

		fail(x, ytree_map_find(m, "image"), "expected an image name (1 to %d characters, no blanks or quotes), got \"%s\"",
		     SIM_IMAGE_MAX - 1, f->image);
		ytree_path_pop(&x->path, old);
		return -1;
	}
	return 0;
}

static int parse_fault(struct px *x, const struct ytree_node *m, struct sim_fault *f)
{
	static const char *const keys[] = {"kind", "group", "from", "until", "rate", "count",
					   "error", "delay", "instance_type", "zone", "capacity_type",
					   "at", "fraction", "warning", "image", NULL};
	const char *kind = NULL, *error = NULL, *capacity = NULL;
	int64_t count = 0;
	size_t old;

	if (expect(x, m, YTREE_MAP) || check_keys(x, m, keys) ||
	    get_str(x, m, "kind", true, &kind) || get_str(x, m, "group", false, &f->group) ||
	    get_time(x, m, "from", &f->from_ns) || get_time(x, m, "until", &f->until_ns) ||
	    get_num(x, m, "rate", 0, 1, &f->rate) || get_int(x, m, "count", 0, INT_MAX, &count) ||
	    get_str(x, m, "error", false, &error) || get_duration(x, m, "delay", &f->delay_ns) ||
	    get_str(x, m, "instance_type", false, &f->instance_type) ||
	    get_str(x, m, "zone", false, &f->zone) ||
	    get_str(x, m, "capacity_type", false, &capacity) ||
	    check_group_ref(x, m, "group", f->group))
		return -1;
	f->count = (int)count;
	if (sim_fault_kind_parse(kind, &f->kind) < 0) {
		old = ytree_path_push_key(&x->path, "kind");
		fail(x, ytree_map_find(m, "kind"),
		     "expected launch_error, throttle, stuck_boot, slow_boot, slow_call, slow_resize, "
		     "terminate_error, lost_answer, interrupt or image, got \"%s\"",
		     kind);
		ytree_path_pop(&x->path, old);
		return -1;
	}
	if (f->kind == SIM_FAULT_INTERRUPT) {
		if (ytree_map_find(m, "image"))
			return fail(x, m, "image is for image faults only");
		return parse_interrupt(x, m, f);
	}
	if (f->kind == SIM_FAULT_IMAGE)
		return parse_image_fault(x, m, f);
	if (ytree_map_find(m, "image"))
		return fail(x, m, "image is for image faults only");
	if (ytree_map_find(m, "at") || ytree_map_find(m, "fraction") || ytree_map_find(m, "warning"))
		return fail(x, m, "at is for interrupt and image faults, fraction and warning for interrupt faults only");
	if ((f->instance_type || f->zone || capacity) && f->kind != SIM_FAULT_LAUNCH_ERROR)
		return fail(x, m, "instance_type, zone and capacity_type are for launch_error faults only");
	if (capacity) {
		if (strcmp(capacity, "spot") == 0) {
			f->capacity = SIM_CAPACITY_SPOT;
		} else if (strcmp(capacity, "on-demand") == 0) {
			f->capacity = SIM_CAPACITY_ON_DEMAND;
		} else {
			old = ytree_path_push_key(&x->path, "capacity_type");
			fail(x, ytree_map_find(m, "capacity_type"),
			     "expected spot or on-demand, got \"%s\"", capacity);
			ytree_path_pop(&x->path, old);
			return -1;
		}
	}
	if (error && f->kind != SIM_FAULT_LAUNCH_ERROR && f->kind != SIM_FAULT_TERMINATE_ERROR)
		return fail(x, m, "error is for launch_error and terminate_error faults only");
	if (error && parse_error_name(error, &f->error) < 0) {
		old = ytree_path_push_key(&x->path, "error");
		fail(x, ytree_map_find(m, "error"),
		     "expected no_capacity, quota, throttled, transient, invalid or auth, got \"%s\"",
		     error);
		ytree_path_pop(&x->path, old);
		return -1;
	}
	if ((f->kind == SIM_FAULT_SLOW_BOOT || f->kind == SIM_FAULT_SLOW_CALL ||
	     f->kind == SIM_FAULT_SLOW_RESIZE) &&
	    !ytree_map_find(m, "delay"))
		return missing(x, m, "delay");
	if (f->until_ns && f->until_ns <= f->from_ns)
		return fail(x, m, "until must come after from");
	return 0;
}

static int fault_item(struct px *x, const struct ytree_node *c, void *base, size_t i)
{
	return parse_fault(x, c, (struct sim_fault *)base + i);
}

static int parse_faults(struct px *x, const struct ytree_node *s)
{
	void *items = NULL;

	if (parse_list(x, s, sizeof(*x->sc->faults), fault_item, &items, &x->sc->n_faults) < 0)
		return -1;
	x->sc->faults = items;
	return 0;
}

/* ---- the AWS flavour ---- */

/* A sequence of strings into an arena array; absent: *n = 0. */
static int get_strlist(struct px *x, const struct ytree_node *m, const char *key,
		       const char ***out, size_t *n)
{
	size_t old, i = 0;
	const struct ytree_node *s = field(x, m, key, &old), *c;
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (!s)
		goto out;
	if ((rc = expect(x, s, YTREE_SEQ)))
		goto out;
	*out = s->n ? arena_calloc(x->a, s->n, sizeof(**out)) : NULL;
	if (s->n && !*out) {
		rc = oom(x);
		goto out;
	}
	for (c = s->first; c; c = c->next, i++) {
		size_t o2 = ytree_path_push_index(&x->path, i);

		if (c->kind != YTREE_SCALAR || !c->text[0] || strlen(c->text) > 31)
			rc = fail(x, c, "expected a name (1 to 31 characters)");
		else if (!((*out)[i] = arena_strdup(x->a, c->text)))
			rc = oom(x);
		ytree_path_pop(&x->path, o2);
		if (rc)
			goto out;
	}
	*n = i;
out:
	ytree_path_pop(&x->path, old);
	return rc;
}

static int aws_type_item(struct px *x, const struct ytree_node *c, void *base, size_t i)
{
	static const char *const keys[] = {"name", "vcpus", "memory_mib", "gpus", "gpu_name",
					   "gpu_manufacturer", "gpu_memory_mib", "arch", NULL};
	struct sim_aws_type *t = (struct sim_aws_type *)base + i;
	int64_t vcpus = 0, gpus = 0;

	if (expect(x, c, YTREE_MAP) || check_keys(x, c, keys) ||
	    get_str(x, c, "name", true, &t->name) || get_int(x, c, "vcpus", 1, 4096, &vcpus) ||
	    get_int(x, c, "memory_mib", 1, INT64_C(1) << 40, &t->memory_mib) ||
	    get_int(x, c, "gpus", 0, 64, &gpus) || get_str(x, c, "gpu_name", false, &t->gpu_name) ||
	    get_str(x, c, "gpu_manufacturer", false, &t->gpu_manufacturer) ||
	    get_int(x, c, "gpu_memory_mib", 0, INT64_C(1) << 30, &t->gpu_memory_mib) ||
	    get_str(x, c, "arch", false, &t->arch))
		return -1;
	if (!vcpus)
		return missing(x, c, "vcpus");
	if (!t->memory_mib)
		return missing(x, c, "memory_mib");
	if (strlen(t->name) > 31)
		return fail(x, c, "instance type name too long");
	if (t->arch && strcmp(t->arch, "x86_64") != 0 && strcmp(t->arch, "arm64") != 0)
		return fail(x, c, "arch: x86_64 or arm64");
	t->vcpus = (int)vcpus;
	t->gpus = (int)gpus;
	if (t->gpus && !t->gpu_name)
		t->gpu_name = "T4";
	if (t->gpus && !t->gpu_manufacturer)
		t->gpu_manufacturer = "NVIDIA";
	return 0;
}

/* Is 's' an AMI id as EC2 makes them ("ami-" and 8 or 17 hex digits)? */
static bool ami_id(const char *s)
{
	size_t n = strlen(s);

	return !strncmp(s, "ami-", 4) && (n == 12 || n == 21) && strspn(s + 4, "0123456789abcdef") == n - 4;
}

/* One group's entry under aws.groups (m NULL: the defaults). */
static int parse_aws_group(struct px *x, const struct ytree_node *m, struct sim_aws_conf *c,
			   size_t gi)
{
	static const char *const keys[] = {"mode", "zones", "instance_types", "launch_template",
					   "tags", "image", NULL};
	struct sim_aws_group *g = &c->groups[gi];
	const char *mode = NULL;
	struct kvlist tags = {NULL, 0};
	size_t i;

	if (m && (expect(x, m, YTREE_MAP) || check_keys(x, m, keys) ||
		  get_str(x, m, "mode", false, &mode) ||
		  get_strlist(x, m, "zones", &g->zones, &g->n_zones) ||
		  get_strlist(x, m, "instance_types", &g->types, &g->n_types) ||
		  get_str(x, m, "launch_template", false, &g->launch_template) ||
		  get_kv(x, m, "tags", false, &tags) || get_str(x, m, "image", false, &g->image)))
		return -1;
	if (g->image && !ami_id(g->image)) {
		size_t old = ytree_path_push_key(&x->path, "image");

		fail(x, ytree_map_find(m, "image"), "expected an AMI id (ami- and 8 or 17 hex digits), got \"%s\"",
		     g->image);
		ytree_path_pop(&x->path, old);
		return -1;
	}
	if (!mode || strcmp(mode, "asg") == 0) {
		g->mode = SIM_AWS_ASG;
	} else if (strcmp(mode, "fleet") == 0) {
		g->mode = SIM_AWS_FLEET;
	} else {
		size_t old = ytree_path_push_key(&x->path, "mode");

		fail(x, ytree_map_find(m, "mode"), "expected asg or fleet, got \"%s\"", mode);
		ytree_path_pop(&x->path, old);
		return -1;
	}
	if (!g->n_zones) {
		static const char letters[] = "abc";

		g->zones = arena_calloc(x->a, 3, sizeof(*g->zones));
		if (!g->zones)
			return oom(x);
		for (i = 0; i < 3; i++) {
			char z[40];

			snprintf(z, sizeof(z), "%s%c", c->region, letters[i]);
			if (!(g->zones[i] = arena_strdup(x->a, z)))
				return oom(x);
		}
		g->n_zones = 3;
	}
	for (i = 0; i < g->n_zones; i++)
		if (strncmp(g->zones[i], c->region, strlen(c->region)) != 0)
			return fail(x, m, "zone \"%s\" is not in region %s", g->zones[i], c->region);
	if (!g->n_types) {
		g->types = arena_calloc(x->a, 1, sizeof(*g->types));
		if (!g->types)
			return oom(x);
		g->types[0] = "m5.large";
		g->n_types = 1;
	}
	if (!g->launch_template)
		g->launch_template = x->sc->groups[gi].name;
	g->tags = tags.n ? arena_calloc(x->a, tags.n, sizeof(*g->tags)) : NULL;
	if (tags.n && !g->tags)
		return oom(x);
	for (i = 0; i < tags.n; i++) {
		g->tags[i].key = tags.items[i].key;
		g->tags[i].value = tags.items[i].value;
	}
	g->n_tags = tags.n;
	return 0;
}

static int parse_aws(struct px *x, const struct ytree_node *m)
{
	static const char *const keys[] = {"region", "account", "cluster", "credentials", "imds",
					   "container_token", "credential_ttl", "asg_retry",
					   "instance_types", "groups", "interruption_queue", NULL};
	static const char *const ckeys[] = {"access_key_id", "secret_access_key", "session_token",
					    NULL};
	static const char *const ikeys[] = {"role", "v2_only", NULL};
	struct sim_aws_conf *c = arena_calloc(x->a, 1, sizeof(*c));
	const struct ytree_node *n, *gm = NULL;
	int64_t ttl_ns = 3600 * CLOCK_NS_PER_S;
	size_t old, i;
	int rc = 0;

	if (!c)
		return oom(x);
	c->asg_retry_ns = 10 * CLOCK_NS_PER_S;
	if (expect(x, m, YTREE_MAP) || check_keys(x, m, keys) ||
	    get_str(x, m, "region", false, &c->region) ||
	    get_str(x, m, "account", false, &c->account) ||
	    get_str(x, m, "cluster", false, &c->cluster) ||
	    get_str(x, m, "container_token", false, &c->container_token) ||
	    get_str(x, m, "interruption_queue", false, &c->interruption_queue) ||
	    get_duration(x, m, "credential_ttl", &ttl_ns) ||
	    get_duration(x, m, "asg_retry", &c->asg_retry_ns))
		return -1;
	if (!c->region)
		c->region = "us-east-1";
	if (!c->account)
		c->account = "123456789012";
	if (!c->cluster)
		c->cluster = "sim";
	if (strlen(c->region) > 24)
		return fail(x, m, "region \"%s\" is too long", c->region);
	if (strlen(c->account) != 12 || strspn(c->account, "0123456789") != 12)
		return fail(x, m, "account must be 12 digits");
	if (c->interruption_queue &&
	    (!c->interruption_queue[0] || strlen(c->interruption_queue) > 80 ||
	     strspn(c->interruption_queue, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") !=
		     strlen(c->interruption_queue)))
		return fail(x, m, "interruption_queue: a queue name (1 to 80 letters, digits, '-' and '_')");
	if (ttl_ns < 60 * CLOCK_NS_PER_S)
		return fail(x, m, "credential_ttl must be at least 1m");
	c->credential_ttl_s = ttl_ns / CLOCK_NS_PER_S;
	if (c->asg_retry_ns <= 0)
		return fail(x, m, "asg_retry must be positive");
	n = field(x, m, "credentials", &old);
	if (!n)
		rc = missing(x, m, "credentials");
	else
		rc = expect(x, n, YTREE_MAP) || check_keys(x, n, ckeys) ||
		     get_str(x, n, "access_key_id", true, &c->access_key_id) ||
		     get_str(x, n, "secret_access_key", true, &c->secret_access_key) ||
		     get_str(x, n, "session_token", false, &c->session_token);
	ytree_path_pop(&x->path, old);
	if (rc)
		return -1;
	n = field(x, m, "imds", &old);
	if (n)
		rc = expect(x, n, YTREE_MAP) || check_keys(x, n, ikeys) ||
		     get_str(x, n, "role", false, &c->role) ||
		     get_bool(x, n, "v2_only", &c->imds_v2_only);
	ytree_path_pop(&x->path, old);
	if (rc)
		return -1;
	if (!c->role)
		c->role = "luascale-node";
	n = field(x, m, "instance_types", &old);
	if (n) {
		void *items = NULL;

		rc = parse_list(x, n, sizeof(struct sim_aws_type), aws_type_item, &items, &c->n_types);
		c->types = items;
	}
	ytree_path_pop(&x->path, old);
	if (rc)
		return -1;
	c->n_groups = x->sc->n_groups;
	c->groups = c->n_groups ? arena_calloc(x->a, c->n_groups, sizeof(*c->groups)) : NULL;
	if (c->n_groups && !c->groups)
		return oom(x);
	n = field(x, m, "groups", &old);
	if (n && expect(x, n, YTREE_MAP) == 0) {
		for (gm = n->first; gm; gm = gm->next) {
			if (find_group(x->sc, gm->key->text) < 0) {
				size_t o2 = ytree_path_push_key(&x->path, gm->key->text);

				rc = fail(x, gm->key, "no node group \"%s\"", gm->key->text);
				ytree_path_pop(&x->path, o2);
				break;
			}
		}
	} else if (n) {
		rc = -1;
	}
	for (i = 0; !rc && i < c->n_groups; i++) {
		const struct ytree_node *g = n ? ytree_map_find(n, x->sc->groups[i].name) : NULL;
		size_t o2 = ytree_path_push_key(&x->path, x->sc->groups[i].name);

		rc = parse_aws_group(x, g && !ytree_is_null(g) ? g : NULL, c, i);
		ytree_path_pop(&x->path, o2);
	}
	ytree_path_pop(&x->path, old);
	if (rc)
		return -1;
	/* an image fault rolls a launch template's AMI: it must be one */
	for (i = 0; i < x->sc->n_faults; i++)
		if (x->sc->faults[i].kind == SIM_FAULT_IMAGE && !ami_id(x->sc->faults[i].image))
			return fail(x, m, "faults[%zu]: image \"%s\" is not an AMI id (ami- and 8 or 17 hex digits), "
				    "as the images of a scenario with aws: are", i, x->sc->faults[i].image);
	x->sc->aws = c;
	return 0;
}

/* One group's entry under gce.groups (m NULL: the defaults). */
static int parse_gce_group(struct px *x, const struct ytree_node *m, struct sim_gce_conf *c,
			   size_t gi)
{
	static const char *const keys[] = {"zone", "region", "zones", "mig", "base_instance_name",
					   "template", "machine_type", "labels", "refuse_create", "spot",
					   "kube_env", NULL};
	struct sim_gce_group *g = &c->groups[gi];
	const char *zone = NULL, *region = NULL;
	struct kvlist labels = {NULL, 0};
	size_t i;

	if (m && (expect(x, m, YTREE_MAP) || check_keys(x, m, keys) ||
		  get_str(x, m, "zone", false, &zone) || get_str(x, m, "region", false, &region) ||
		  get_strlist(x, m, "zones", &g->zones, &g->n_zones) ||
		  get_str(x, m, "mig", false, &g->mig) ||
		  get_str(x, m, "base_instance_name", false, &g->base_name) ||
		  get_str(x, m, "template", false, &g->template_name) ||
		  get_str(x, m, "machine_type", false, &g->machine_type) ||
		  get_kv(x, m, "labels", false, &labels) ||
		  get_bool(x, m, "refuse_create", &g->refuse_create) ||
		  get_bool(x, m, "spot", &g->spot) ||
		  get_str(x, m, "kube_env", false, &g->kube_env)))
		return -1;
	if (zone && (region || g->n_zones))
		return fail(x, m, "a zonal MIG names a zone; a regional one a region and its zones");
	if (region) {
		g->regional = true;
		g->region = region;
		if (!g->n_zones)
			return missing(x, m, "zones");
		for (i = 0; i < g->n_zones; i++)
			if (strncmp(g->zones[i], region, strlen(region)) != 0 ||
			    g->zones[i][strlen(region)] != '-')
				return fail(x, m, "zone \"%s\" is not in region %s", g->zones[i], region);
	} else {
		const char *dash;
		char *r;

		if (!zone)
			zone = "us-central1-a";
		dash = strrchr(zone, '-');
		if (!dash || dash == zone || strlen(zone) > 31)
			return fail(x, m, "zone \"%s\": expected REGION-LETTER (us-central1-a)", zone);
		g->zones = arena_calloc(x->a, 1, sizeof(*g->zones));
		r = arena_calloc(x->a, 1, (size_t)(dash - zone) + 1);
		if (!g->zones || !r)
			return oom(x);
		memcpy(r, zone, (size_t)(dash - zone));
		g->zones[0] = zone;
		g->n_zones = 1;
		g->region = r;
	}
	for (i = 0; i < g->n_zones; i++)
		if (strlen(g->zones[i]) > 31)
			return fail(x, m, "zone \"%s\" is too long", g->zones[i]);
	if (!g->mig)
		g->mig = x->sc->groups[gi].name;
	if (!g->base_name)
		g->base_name = g->mig;
	if (!g->template_name) {
		char t[96];
		char *d;

		snprintf(t, sizeof(t), "%.80s-template", g->mig);
		if (!(d = arena_strdup(x->a, t)))
			return oom(x);
		g->template_name = d;
	}
	if (!g->machine_type)
		g->machine_type = "e2-standard-4";
	if (!sim_gce_find_mtype(g->machine_type))
		return fail(x, m, "unknown machine type \"%s\"", g->machine_type);
	g->labels = labels.n ? arena_calloc(x->a, labels.n, sizeof(*g->labels)) : NULL;
	if (labels.n && !g->labels)
		return oom(x);
	for (i = 0; i < labels.n; i++) {
		g->labels[i].key = labels.items[i].key;
		g->labels[i].value = labels.items[i].value;
	}
	g->n_labels = labels.n;
	return 0;
}

static int parse_gce(struct px *x, const struct ytree_node *m)
{
	static const char *const keys[] = {"project", "project_number", "service_account",
					   "token_ttl", "retry", "operation_time", "wait_timeout",
					   "throttle_status", "groups", NULL};
	struct sim_gce_conf *c = arena_calloc(x->a, 1, sizeof(*c));
	const struct ytree_node *n, *gm;
	int64_t ttl_ns = 3600 * CLOCK_NS_PER_S, status = 403;
	size_t old, i;
	int rc = 0;

	if (!c)
		return oom(x);
	if (x->sc->aws)
		return fail(x, m, "a scenario has an aws: or a gce: section, not both");
	c->retry_ns = 10 * CLOCK_NS_PER_S;
	c->wait_ns = 120 * CLOCK_NS_PER_S;
	if (expect(x, m, YTREE_MAP) || check_keys(x, m, keys) ||
	    get_str(x, m, "project", false, &c->project) ||
	    get_str(x, m, "project_number", false, &c->project_number) ||
	    get_str(x, m, "service_account", false, &c->service_account) ||
	    get_duration(x, m, "token_ttl", &ttl_ns) || get_duration(x, m, "retry", &c->retry_ns) ||
	    get_duration(x, m, "operation_time", &c->operation_ns) ||
	    get_duration(x, m, "wait_timeout", &c->wait_ns) ||
	    get_int(x, m, "throttle_status", 403, 429, &status))
		return -1;
	if (!c->project)
		c->project = "sim-project";
	if (!c->project_number)
		c->project_number = "123456789012";
	if (!sim_gce_valid_name(c->project) || strlen(c->project) < 6 || strlen(c->project) > 30)
		return fail(x, m, "project \"%s\": 6-30 of [a-z0-9-], a letter first", c->project);
	if (strspn(c->project_number, "0123456789") != strlen(c->project_number) ||
	    !c->project_number[0] || strlen(c->project_number) > 19)
		return fail(x, m, "project_number must be digits");
	if (!c->service_account) {
		char sa[128];
		char *d;

		snprintf(sa, sizeof(sa), "luascale@%s.iam.gserviceaccount.com", c->project);
		if (!(d = arena_strdup(x->a, sa)))
			return oom(x);
		c->service_account = d;
	}
	if (!strchr(c->service_account, '@') || strlen(c->service_account) > 100)
		return fail(x, m, "service_account \"%s\" is not an email", c->service_account);
	if (ttl_ns < 60 * CLOCK_NS_PER_S)
		return fail(x, m, "token_ttl must be at least 1m");
	c->token_ttl_s = ttl_ns / CLOCK_NS_PER_S;
	if (c->retry_ns <= 0 || c->wait_ns <= 0 || c->operation_ns < 0)
		return fail(x, m, "retry and wait_timeout must be positive, operation_time not negative");
	if (status != 403 && status != 429)
		return fail(x, m, "throttle_status: 403 or 429");
	c->throttle_status = (int)status;
	c->n_groups = x->sc->n_groups;
	c->groups = c->n_groups ? arena_calloc(x->a, c->n_groups, sizeof(*c->groups)) : NULL;
	if (c->n_groups && !c->groups)
		return oom(x);
	n = field(x, m, "groups", &old);
	if (n && expect(x, n, YTREE_MAP) == 0) {
		for (gm = n->first; gm; gm = gm->next) {
			if (find_group(x->sc, gm->key->text) < 0) {
				size_t o2 = ytree_path_push_key(&x->path, gm->key->text);

				rc = fail(x, gm->key, "no node group \"%s\"", gm->key->text);
				ytree_path_pop(&x->path, o2);
				break;
			}
		}
	} else if (n) {
		rc = -1;
	}
	for (i = 0; !rc && i < c->n_groups; i++) {
		const struct ytree_node *g = n ? ytree_map_find(n, x->sc->groups[i].name) : NULL;
		size_t o2 = ytree_path_push_key(&x->path, x->sc->groups[i].name);

		rc = parse_gce_group(x, g && !ytree_is_null(g) ? g : NULL, c, i);
		ytree_path_pop(&x->path, o2);
	}
	ytree_path_pop(&x->path, old);
	if (rc)
		return -1;
	x->sc->gce = c;
	return 0;
}

/* One group's entry under azure.groups (m NULL: the defaults). */
static int parse_azure_group(struct px *x, const struct ytree_node *m, struct sim_azure_conf *c,
			     size_t gi)
{
	static const char *const keys[] = {"vmss", "computer_name_prefix", "vm_size", "zones",
					   "tags", "priority", "agent_pool", "enable_auto_scaling", "mode", NULL};
	struct sim_azure_group *g = &c->groups[gi];
	struct kvlist tags = {NULL, 0};
	const char *mode = NULL;
	size_t i;

	if (m && (expect(x, m, YTREE_MAP) || get_str(x, m, "agent_pool", false, &g->agent_pool) ||
		  get_bool(x, m, "enable_auto_scaling", &g->enable_auto_scaling) ||
		  get_str(x, m, "mode", false, &mode)))
		return -1;
	if (g->agent_pool && (!c->aks_cluster || !g->agent_pool[0] || strlen(g->agent_pool) > 12 ||
			      g->agent_pool[0] < 'a' || g->agent_pool[0] > 'z' ||
			      strspn(g->agent_pool, "abcdefghijklmnopqrstuvwxyz0123456789") != strlen(g->agent_pool)))
		return fail(x, m, "agent_pool \"%s\": 1-12 of [a-z0-9] starting with a letter, with an aks: {cluster} in azure:",
			    g->agent_pool);
	if ((mode || g->enable_auto_scaling) && !g->agent_pool)
		return fail(x, m, "mode and enable_auto_scaling are an agent_pool's");
	if (mode && strcmp(mode, "System") && strcmp(mode, "User"))
		return fail(x, m, "mode \"%s\": System or User", mode);
	g->system_mode = mode && !strcmp(mode, "System");
	if (m && (expect(x, m, YTREE_MAP) || check_keys(x, m, keys) ||
		  get_str(x, m, "vmss", false, &g->vmss) ||
		  get_str(x, m, "computer_name_prefix", false, &g->computer_prefix) ||
		  get_str(x, m, "vm_size", false, &g->vm_size) ||
		  get_str(x, m, "priority", false, &g->priority) ||
		  get_strlist(x, m, "zones", &g->zones, &g->n_zones) ||
		  get_kv(x, m, "tags", false, &tags)))
		return -1;
	if (!g->vmss)
		g->vmss = x->sc->groups[gi].name;
	if (strlen(g->vmss) > 64 || strspn(g->vmss, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != strlen(g->vmss))
		return fail(x, m, "vmss \"%s\": 1-64 of [A-Za-z0-9._-]", g->vmss);
	if (!g->computer_prefix) {
		char t[96];
		char *d;
		size_t k;

		snprintf(t, sizeof(t), "%.50s", g->vmss);
		for (k = 0; t[k]; k++)
			if (t[k] >= 'A' && t[k] <= 'Z')
				t[k] = (char)(t[k] - 'A' + 'a');
			else if (t[k] == '_' || t[k] == '.')
				t[k] = '-';
		if (!(d = arena_strdup(x->a, t)))
			return oom(x);
		g->computer_prefix = d;
	}
	if (strlen(g->computer_prefix) > 50 ||
	    strspn(g->computer_prefix, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(g->computer_prefix))
		return fail(x, m, "computer_name_prefix \"%s\": at most 50 of [a-z0-9-]",
			    g->computer_prefix);
	if (!g->vm_size)
		g->vm_size = "Standard_D4s_v3";
	if (!sim_azure_find_vmsize(g->vm_size))
		return fail(x, m, "unknown VM size \"%s\"", g->vm_size);
	if (g->priority && strcmp(g->priority, "Regular") && strcmp(g->priority, "Spot") &&
	    strcmp(g->priority, "Low"))
		return fail(x, m, "priority \"%s\": Regular, Spot or Low", g->priority);
	for (i = 0; i < g->n_zones; i++)
		if (strcmp(g->zones[i], "1") != 0 && strcmp(g->zones[i], "2") != 0 &&
		    strcmp(g->zones[i], "3") != 0)
			return fail(x, m, "zone \"%s\": Azure's zones are \"1\", \"2\" and \"3\"",
				    g->zones[i]);
	g->tags = tags.n ? arena_calloc(x->a, tags.n, sizeof(*g->tags)) : NULL;
	if (tags.n && !g->tags)
		return oom(x);
	for (i = 0; i < tags.n; i++) {
		g->tags[i].key = tags.items[i].key;
		g->tags[i].value = tags.items[i].value;
	}
	g->n_tags = tags.n;
	return 0;
}

static int parse_azure(struct px *x, const struct ytree_node *m)
{
	static const char *const keys[] = {"subscription_id", "resource_group", "location",
					   "tenant_id", "client_id", "client_secret", "token_ttl",
					   "operation_time", "retry_after", "throttle", "page_size",
					   "groups", "aks", NULL};
	struct sim_azure_conf *c = arena_calloc(x->a, 1, sizeof(*c));
	const struct ytree_node *n, *gm;
	int64_t ttl_ns = 3600 * CLOCK_NS_PER_S, retry_ns = CLOCK_NS_PER_S, page = 50;
	const char *throttle = NULL;
	size_t old, i;
	int rc = 0;

	if (!c)
		return oom(x);
	if (x->sc->aws || x->sc->gce)
		return fail(x, m, "a scenario has one of aws:, gce: and azure:");
	if (expect(x, m, YTREE_MAP) || check_keys(x, m, keys) ||
	    get_str(x, m, "subscription_id", false, &c->subscription) ||
	    get_str(x, m, "resource_group", false, &c->resource_group) ||
	    get_str(x, m, "location", false, &c->location) ||
	    get_str(x, m, "tenant_id", false, &c->tenant) ||
	    get_str(x, m, "client_id", false, &c->client_id) ||
	    get_str(x, m, "client_secret", false, &c->client_secret) ||
	    get_duration(x, m, "token_ttl", &ttl_ns) ||
	    get_duration(x, m, "operation_time", &c->operation_ns) ||
	    get_duration(x, m, "retry_after", &retry_ns) ||
	    get_str(x, m, "throttle", false, &throttle) ||
	    get_int(x, m, "page_size", 1, 1000, &page))
		return -1;
	if (!c->subscription)
		c->subscription = "00000000-0000-4000-8000-00000000a2e1";
	if (!c->resource_group)
		c->resource_group = "sim-rg";
	if (!c->location)
		c->location = "eastus";
	if (!c->tenant)
		c->tenant = "00000000-0000-4000-8000-0000000000a1";
	if (!c->client_id)
		c->client_id = "00000000-0000-4000-8000-0000000000c1";
	if (!c->client_secret)
		c->client_secret = "sim-client-secret";
	if (!sim_azure_valid_guid(c->subscription) || !sim_azure_valid_guid(c->tenant) ||
	    !sim_azure_valid_guid(c->client_id))
		return fail(x, m, "subscription_id, tenant_id and client_id must be GUIDs");
	if (!c->resource_group[0] || strlen(c->resource_group) > 90 ||
	    strspn(c->resource_group, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.()") != strlen(c->resource_group))
		return fail(x, m, "resource_group \"%s\": 1-90 of [A-Za-z0-9._()-]", c->resource_group);
	if (!c->location[0] || strlen(c->location) > 20 ||
	    strspn(c->location, "abcdefghijklmnopqrstuvwxyz0123456789") != strlen(c->location))
		return fail(x, m, "location \"%s\": lowercase letters and digits (eastus)", c->location);
	if (!c->client_secret[0] || strlen(c->client_secret) > 200)
		return fail(x, m, "client_secret must be 1-200 characters");
	if (ttl_ns < 60 * CLOCK_NS_PER_S)
		return fail(x, m, "token_ttl must be at least 1m");
	c->token_ttl_s = ttl_ns / CLOCK_NS_PER_S;
	if (c->operation_ns < 0 || retry_ns < CLOCK_NS_PER_S)
		return fail(x, m, "operation_time must not be negative, retry_after at least 1s");
	c->retry_after_s = retry_ns / CLOCK_NS_PER_S;
	if (!throttle || strcmp(throttle, "too_many_requests") == 0)
		c->throttle = SIM_AZURE_TOO_MANY_REQUESTS;
	else if (strcmp(throttle, "operation_not_allowed") == 0)
		c->throttle = SIM_AZURE_NOT_ALLOWED;
	else
		return fail(x, m, "throttle: too_many_requests or operation_not_allowed");
	c->page_size = (int)page;
	n = field(x, m, "aks", &old);
	if (n) {
		static const char *const aks_keys[] = {"cluster", "resource_group", NULL};

		/* an AKS cluster whose node resource group is resource_group */
		rc = expect(x, n, YTREE_MAP) || check_keys(x, n, aks_keys) ||
		     get_str(x, n, "cluster", true, &c->aks_cluster) ||
		     get_str(x, n, "resource_group", false, &c->aks_resource_group) ? -1 : 0;
		if (!rc && !c->aks_resource_group)
			c->aks_resource_group = "sim-rg";
		if (!rc && (!c->aks_cluster[0] || strlen(c->aks_cluster) > 63 ||
			    strspn(c->aks_cluster, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") !=
				    strlen(c->aks_cluster)))
			rc = fail(x, n, "cluster \"%s\": 1-63 of [A-Za-z0-9_-]", c->aks_cluster);
		if (!rc && strcasecmp(c->aks_resource_group, c->resource_group) == 0)
			rc = fail(x, n, "resource_group is the cluster's own, not resource_group (its node resource group)");
	}
	ytree_path_pop(&x->path, old);
	if (rc)
		return -1;
	c->n_groups = x->sc->n_groups;
	c->groups = c->n_groups ? arena_calloc(x->a, c->n_groups, sizeof(*c->groups)) : NULL;
	if (c->n_groups && !c->groups)
		return oom(x);
	n = field(x, m, "groups", &old);
	if (n && expect(x, n, YTREE_MAP) == 0) {
		for (gm = n->first; gm; gm = gm->next) {
			if (find_group(x->sc, gm->key->text) < 0) {
				size_t o2 = ytree_path_push_key(&x->path, gm->key->text);

				rc = fail(x, gm->key, "no node group \"%s\"", gm->key->text);
				ytree_path_pop(&x->path, o2);
				break;
			}
		}
	} else if (n) {
		rc = -1;
	}
	for (i = 0; !rc && i < c->n_groups; i++) {
		const struct ytree_node *g = n ? ytree_map_find(n, x->sc->groups[i].name) : NULL;
		size_t o2 = ytree_path_push_key(&x->path, x->sc->groups[i].name);

		rc = parse_azure_group(x, g && !ytree_is_null(g) ? g : NULL, c, i);
		for (size_t j = 0; !rc && j < i; j++)
			if (c->groups[i].agent_pool && c->groups[j].agent_pool &&
			    strcmp(c->groups[j].agent_pool, c->groups[i].agent_pool) == 0)
				rc = fail(x, g ? g : n, "node groups %s and %s name one agent pool \"%s\"",
					  x->sc->groups[j].name, x->sc->groups[i].name, c->groups[i].agent_pool);
		for (size_t j = 0; !rc && j < i; j++)
			if (strcasecmp(c->groups[j].vmss, c->groups[i].vmss) == 0)
				rc = fail(x, g ? g : n, "node groups %s and %s name one scale set \"%s\"",
					  x->sc->groups[j].name, x->sc->groups[i].name, c->groups[i].vmss);
		ytree_path_pop(&x->path, o2);
	}
	ytree_path_pop(&x->path, old);
	if (rc)
		return -1;
	x->sc->azure = c;
	return 0;
}

/* expect: what a run must show, else it counts as broken (exit 4). */
static int parse_expect(struct px *x, const struct ytree_node *m)
{
	static const char *const keys[] = {"max_pending", NULL};

	if (expect(x, m, YTREE_MAP) || check_keys(x, m, keys) ||
	    get_duration(x, m, "max_pending", &x->sc->expect_max_pending_ns))
		return -1;
	if (ytree_map_find(m, "max_pending") && x->sc->expect_max_pending_ns <= 0) {
		size_t old = ytree_path_push_key(&x->path, "max_pending");

		fail(x, ytree_map_find(m, "max_pending"), "must be longer than 0");
		ytree_path_pop(&x->path, old);
		return -1;
	}
	return 0;
}

/* The luascale config a scenario names, read offline and without the environment. */
static int load_config(struct px *x, const struct ytree_node *n, const char *rel)
{
	const char *slash = strrchr(x->src, '/');
	char path[4096];
	struct errbuf cerr;
	struct config_opts opts;
	static const char *const no_env[] = {NULL};
	struct buf text = BUF_INIT;

	if (rel[0] == '/' || !slash)
		snprintf(path, sizeof(path), "%s", rel);
	else
		snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - x->src), x->src, rel);
	if (buf_read_file(&text, path, CONFIG_MAX_SIZE, &cerr) < 0) {
		buf_free(&text);
		return fail(x, n, "%s", cerr.msg);
	}
	memset(&opts, 0, sizeof(opts));
	opts.envp = no_env;
	opts.flags = CONFIG_OFFLINE;
	x->sc->config = config_parse_opts(text.data ? text.data : "", text.len, path, &opts, &cerr);
	buf_free(&text);
	if (!x->sc->config)
		return fail(x, n, "in the config it names: %s", cerr.msg);
	x->sc->groups = x->sc->config->groups;
	x->sc->n_groups = x->sc->config->n_groups;
	if (x->sc->config->protected_pods.n) {
		x->sc->protected_pods = &x->sc->config->protected_pods;
		x->sc->protected_text = x->sc->config->protected_pod_selector;
	}
	return 0;
}

static int parse_root(struct px *x, const struct ytree_node *root)
{
	/* the sections after the groups, each optional, in this order (safety
	 * checks that no config was named) */
	static const struct {
		const char *key;
		int (*parse)(struct px *x, const struct ytree_node *n);
	} sections[] = {
		{"cloud", parse_cloud},         {"cluster", parse_cluster},
		{"safety", parse_safety},       {"initial_nodes", parse_initial},
		{"workloads", parse_workloads}, {"pdbs", parse_pdbs},
		{"faults", parse_faults},       {"aws", parse_aws},
		{"gce", parse_gce},             {"azure", parse_azure},
		{"expect", parse_expect},
	};
	static const char *const keys[] = {"title", "description", "seed", "start", "duration",
					   "config", "node_groups", "protected_pods", "safety",
					   "cloud", "cluster", "initial_nodes", "workloads", "pdbs",
					   "faults", "aws", "gce", "azure", "expect", NULL};
	struct sim_scenario *sc = x->sc;
	const struct ytree_node *n;
	const char *start = NULL, *cfg = NULL, *prot = NULL;
	int64_t seed = 1;
	size_t old, i;
	int rc;

	if (expect(x, root, YTREE_MAP) || check_keys(x, root, keys) ||
	    get_str(x, root, "title", false, &sc->title) ||
	    get_str(x, root, "description", false, &sc->description) ||
	    get_int(x, root, "seed", 0, INT64_MAX, &seed) ||
	    get_str(x, root, "start", false, &start) ||
	    get_duration(x, root, "duration", &sc->duration_ns) ||
	    get_str(x, root, "config", false, &cfg) ||
	    get_str(x, root, "protected_pods", false, &prot))
		return -1;
	sc->seed = (uint64_t)seed;
	x->flavoured = ytree_map_find(root, "aws") || ytree_map_find(root, "gce") ||
		       ytree_map_find(root, "azure");
	if (model_parse_time(start ? start : DEFAULT_START, &sc->start_wall) < 0) {
		old = ytree_path_push_key(&x->path, "start");
		fail(x, ytree_map_find(root, "start"),
		     "expected a time like \"2024-05-06T08:00:00Z\", got \"%s\"", start);
		ytree_path_pop(&x->path, old);
		return -1;
	}
	x->day_start = sc->start_wall - ((sc->start_wall % 86400) + 86400) % 86400;
	if (sc->duration_ns <= 0)
		sc->duration_ns = DEFAULT_DURATION_NS;

	rc = 0;
	n = field(x, root, "node_groups", &old);
	if (cfg && n) {
		rc = fail(x, n, "give node_groups or config, not both");
	} else if (n) {
		rc = parse_groups(x, n);
	} else if (cfg) {
		ytree_path_pop(&x->path, old);
		old = ytree_path_push_key(&x->path, "config");
		rc = load_config(x, ytree_map_find(root, "config"), cfg);
	}
	ytree_path_pop(&x->path, old);
	if (rc)
		return -1;
	if (!n && !cfg)
		return fail(x, root, "node_groups (or a config that has them) is required");
	if (prot) {
		struct label_selector *sel = arena_calloc(x->a, 1, sizeof(*sel));

		old = ytree_path_push_key(&x->path, "protected_pods");
		if (!sel)
			rc = oom(x);
		else if (label_selector_parse(x->a, prot, sel, x->err) < 0)
			rc = fail(x, ytree_map_find(root, "protected_pods"), "%s", x->err->msg);
		ytree_path_pop(&x->path, old);
		if (rc)
			return -1;
		sc->protected_pods = sel->n ? sel : NULL;
		sc->protected_text = sel->n ? prot : NULL;
	}

	for (i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
		n = field(x, root, sections[i].key, &old);
		rc = n ? sections[i].parse(x, n) : 0;
		ytree_path_pop(&x->path, old);
		if (rc)
			return -1;
	}
	return 0;
}

struct sim_scenario *sim_scenario_parse(const char *text, size_t len, const char *source,
					struct errbuf *err)
{
	struct sim_scenario *sc = calloc(1, sizeof(*sc));
	struct ytree_node *root = NULL;
	struct px x;

	if (!source)
		source = "scenario";
	if (!sc || !(sc->arena = arena_new())) {
		free(sc);
		errbuf_set(err, "%s: out of memory", source);
		return NULL;
	}
	memset(&x, 0, sizeof(x));
	x.sc = sc;
	x.a = sc->arena;
	x.err = err;
	sc->source = arena_strdup(sc->arena, source);
	x.src = sc->source ? sc->source : source;
	sim_cloud_opts_default(&sc->cloud);
	sim_cluster_opts_default(&sc->cluster);
	if (ytree_parse(text, len, source, sc->arena, &root, err) < 0)
		goto fail;
	if (!root) {
		errbuf_set(err, "%s: the scenario is empty", source);
		goto fail;
	}
	if (parse_root(&x, root) < 0)
		goto fail;
	return sc;
fail:
	sim_scenario_free(sc);
	return NULL;
}

struct sim_scenario *sim_scenario_load(const char *path, struct errbuf *err)
{
	struct buf text = BUF_INIT;
	struct sim_scenario *sc;

	if (buf_read_file(&text, path, SCENARIO_MAX_SIZE, err) < 0) {
		buf_free(&text);
		return NULL;
	}
	sc = sim_scenario_parse(text.data ? text.data : "", text.len, path, err);
	buf_free(&text);
	return sc;
}

void sim_scenario_free(struct sim_scenario *sc)
{
	if (!sc)
		return;
	config_free(sc->config);
	arena_free(sc->arena);
	free(sc);
}

/* ---- the world ---- */

/* Where one workload is in its arrivals. */
struct arrivals {
	size_t w;          /* workload index */
	int wave;          /* current wave, from 0 */
	int64_t wave_t0;   /* the wave's start, from the world's t0 */
	int64_t *offsets;  /* per pod of the wave, sorted */
	int next;          /* next pod of the wave */
};

static double world_rand(struct sim_world *w)
{
	return (double)(backoff_rand(&w->rng) >> 11) * (1.0 / 9007199254740992.0);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Draws the arrival times of a wave. */
static void wave_offsets(struct sim_world *w, const struct sim_workload *wl, int64_t *off)
{
	int i;

	for (i = 0; i < wl->count; i++) {
		if (wl->spread_ns > 0)
			off[i] = (int64_t)(world_rand(w) * (double)wl->spread_ns);
		else
			off[i] = wl->interval_ns * i;
	}
	if (wl->spread_ns > 0)
		qsort(off, (size_t)wl->count, sizeof(*off), cmp_i64);
}

static void arrivals_free(struct arrivals *a)
{
	free(a->offsets);
	free(a);
}

static void arrive(void *owner, void *data, uint64_t id, bool alive);

/* Queues the next arrival of 'a' (or ends it). */
static void arrivals_next(struct sim_world *w, struct arrivals *a)
{
	const struct sim_workload *wl = &w->sc->workloads[a->w];
	int64_t now = sim_cloud_now(w->cloud) - w->t0, due;

	while (a->next >= wl->count) {
		a->wave++;
		if (!wl->every_ns || (wl->times && a->wave >= wl->times)) {
			arrivals_free(a);
			return;
		}
		a->wave_t0 = wl->at_ns + wl->every_ns * a->wave;
		if (a->wave_t0 >= w->sc->duration_ns) {
			arrivals_free(a);
			return;
		}
		wave_offsets(w, wl, a->offsets);
		a->next = 0;
	}
	due = a->wave_t0 + a->offsets[a->next];
	if (sim_after(sim_cloud_executor(w->cloud), w->life, due > now ? due - now : 0, arrive, a,
		      0) < 0)
		arrivals_free(a);
}

static void arrive(void *owner, void *data, uint64_t id, bool alive)
{
	struct sim_world *w = owner;
	struct arrivals *a = data;
	const struct sim_workload *wl;
	int64_t now;
	struct errbuf err;

	(void)id;
	if (!alive) {
		arrivals_free(a);
		return;
	}
	wl = &w->sc->workloads[a->w];
	/*
	 * The pods due by now arrive together: holding the (recursive) cloud lock
	 * keeps the scheduler's pass, queued by the first, from running before
	 * the last is created, so a pass never sees half of a burst.
	 */
	sim_cloud_lock(w->cloud);
	now = sim_cloud_now(w->cloud) - w->t0;
	while (a->next < wl->count && a->wave_t0 + a->offsets[a->next] <= now) {
		int64_t run = wl->spec.duration_ns > 0 ? wl->spec.duration_ns : -1;

		if (run > 0 && wl->duration_spread_ns > 0)
			run += (int64_t)(world_rand(w) * (double)wl->duration_spread_ns);
		if (sim_cluster_create_pods(w->cluster, w->spec_handles[a->w], 1, run, &err) < 0)
			sim_cloud_tracef(w->cloud, "workload %s: %s", wl->spec.name, err.msg);
		a->next++;
	}
	sim_cloud_unlock(w->cloud);
	arrivals_next(w, a);
}

struct sim_world *sim_world_new(const struct sim_scenario *sc, struct executor *ex,
				struct errbuf *err)
{
	struct sim_world *w = calloc(1, sizeof(*w));
	struct sim_cloud_opts co;
	size_t i;

	if (!w) {
		errbuf_set(err, "out of memory");
		return NULL;
	}
	w->sc = sc;
	w->rng = sc->seed ^ 0x5851f42d4c957f2dULL;
	co = sc->cloud;
	co.seed = sc->seed * 0x9e3779b97f4a7c15ULL + 1; /* its own stream, from the one seed */
	w->cloud = sim_cloud_new(ex, sc->groups, sc->n_groups, &co, err);
	if (!w->cloud)
		goto fail;
	if (sc->aws) {
		w->aws = sim_aws_new(w->cloud, sc->aws, co.seed, err);
		if (!w->aws)
			goto fail;
	} else if (sc->gce) {
		w->gce = sim_gce_new(w->cloud, sc->gce, co.seed, err);
		if (!w->gce)
			goto fail;
	} else if (sc->azure) {
		w->azure = sim_azure_new(w->cloud, sc->azure, co.seed, err);
		if (!w->azure)
			goto fail;
	}
	w->t0 = sim_cloud_now(w->cloud);
	{
		struct sim_cluster_opts copts = sc->cluster;

		/* GKE's handlers taint a node GCE is about to preempt */
		if (sc->gce)
			copts.interruption_taint = "cloud.google.com/impending-node-termination";
		w->cluster = sim_cluster_new(w->cloud, &copts, err);
	}
	w->life = sim_life_new(w);
	w->spec_handles = calloc(sc->n_workloads ? sc->n_workloads : 1, sizeof(*w->spec_handles));
	if (!w->cluster || !w->life || !w->spec_handles) {
		if (w->cluster)
			errbuf_set(err, "out of memory");
		goto fail;
	}
	sim_cluster_set_protected(w->cluster, sc->protected_pods);
	for (i = 0; i < sc->n_faults; i++) {
		/* fault windows count from the world's start (the real clock of
		 * `luascale sim` does not start at 0) */
		struct sim_fault f = sc->faults[i];

		f.from_ns += w->t0;
		if (f.until_ns > 0)
			f.until_ns += w->t0;
		if (sim_cloud_add_fault(w->cloud, &f, err) < 0)
			goto fail;
	}
	for (i = 0; i < sc->n_pdbs; i++)
		if (sim_cluster_add_pdb(w->cluster, &sc->pdbs[i], err) < 0)
			goto fail;
	for (i = 0; i < sc->n_workloads; i++) {
		w->spec_handles[i] = sim_cluster_add_spec(w->cluster, &sc->workloads[i].spec, err);
		if (w->spec_handles[i] < 0)
			goto fail;
	}
	for (i = 0; i < sc->n_initial; i++)
		if (sim_cluster_add_nodes(w->cluster, sc->initial[i].group, sc->initial[i].count,
					  err) < 0)
			goto fail;
	if (w->aws)
		sim_aws_start(w->aws);
	if (w->gce)
		sim_gce_start(w->gce);
	if (w->azure)
		sim_azure_start(w->azure);
	for (i = 0; i < sc->n_workloads; i++) {
		const struct sim_workload *wl = &sc->workloads[i];
		struct arrivals *a;

		if (wl->spec.controller == SIM_CTRL_DAEMONSET || wl->count == 0 ||
		    wl->at_ns >= sc->duration_ns)
			continue;
		a = calloc(1, sizeof(*a));
		if (!a || !(a->offsets = calloc((size_t)wl->count, sizeof(*a->offsets)))) {
			free(a);
			errbuf_set(err, "out of memory");
			goto fail;
		}
		a->w = i;
		a->wave_t0 = wl->at_ns;
		wave_offsets(w, wl, a->offsets);
		arrivals_next(w, a);
	}
	return w;
fail:
	errbuf_prefix(err, "%s", sc->source);
	sim_world_free(w);
	return NULL;
}

void sim_world_free(struct sim_world *w)
{
	if (!w)
		return;
	sim_life_end(w->life);
	sim_cluster_free(w->cluster);
	sim_cloud_free(w->cloud);
	sim_aws_free(w->aws);
	sim_gce_free(w->gce);
	sim_azure_free(w->azure);
	free(w->spec_handles);
	free(w);
}
