/*
 * sim/scenario: the scenario schema walked over a ytree (every error with
 * file:line:col and the path of the key), and the world built from it —
 * cloud, cluster, faults, budgets, starting nodes, and one event chain per
 * workload that creates its pods as they arrive. A cloud's section and its
 * flavour of the world are the cloud's (sim/clouds/sim_cloud_kind.h): this
 * file knows the registered clouds' table only.
 */
#include "sim/world/scenario.h"
#include "sim/world/scenario_parse.h"

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
#include "luascale_clouds.h"
#include "quantity.h"
#include "runtime/backoff.h"
#include "sim/clouds/sim_cloud_kind.h"
#include "ytree.h"

/* the clouds of this build (a key each in a scenario's root) */
#define X(k) +1
enum { N_SIM_CLOUDS = 0 LUASCALE_SIM_CLOUDS(X) };
#undef X

#define DEFAULT_START "2024-01-01T00:00:00Z"
#define DEFAULT_DURATION_NS (24LL * 3600 * CLOCK_NS_PER_S)
#define DEFAULT_GRACE_NS (30 * CLOCK_NS_PER_S)
#define MAX_POD_COUNT 10000000

/* ---- the walk (its sw_* helpers: scenario_parse.h, for the clouds' sections too) ---- */

static int vfail(struct scenario_walk *x, const struct ytree_node *n, const char *fmt, va_list ap)
{
	char msg[ERRBUF_MAX];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (x->path.len)
		return errbuf_set(x->err, "%s:%d:%d: %s: %s", x->src, n->line, n->col, x->path.s, msg);
	return errbuf_set(x->err, "%s:%d:%d: %s", x->src, n->line, n->col, msg);
}

int sw_fail(struct scenario_walk *x, const struct ytree_node *n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(x, n, fmt, ap);
	va_end(ap);
	return -1;
}

int sw_oom(struct scenario_walk *x)
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

int sw_expect(struct scenario_walk *x, const struct ytree_node *n, enum ytree_kind k)
{
	static const char *const names[] = {"a scalar", "a list", "a mapping"};

	if (n->kind == k)
		return 0;
	return sw_fail(x, n, "expected %s, got %s", names[k], kind_name(n));
}

/* Unknown keys are errors: a typo must not go unnoticed. */
int sw_check_keys(struct scenario_walk *x, const struct ytree_node *m, const char *const *keys)
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
		return sw_fail(x, c->key, "unknown key \"%s\" (known: %s)", c->key->text, list);
	}
	return 0;
}

/* Pushes 'key' on the path; every get_* below pops it again. */
const struct ytree_node *sw_field(struct scenario_walk *x, const struct ytree_node *m,
				  const char *key, size_t *old)
{
	const struct ytree_node *n = ytree_map_find(m, key);

	if (n && ytree_is_null(n))
		n = NULL; /* "key:" alone means "not set" */
	*old = ytree_path_push_key(&x->path, key);
	return n;
}

int sw_missing(struct scenario_walk *x, const struct ytree_node *m, const char *key)
{
	return sw_fail(x, m, "%s is required", key);
}

static int scalar_text(struct scenario_walk *x, const struct ytree_node *n, const char **out)
{
	if (sw_expect(x, n, YTREE_SCALAR))
		return -1;
	*out = n->text;
	return 0;
}

int sw_get_str(struct scenario_walk *x, const struct ytree_node *m, const char *key,
	       bool required, const char **out)
{
	size_t old;
	const struct ytree_node *n = sw_field(x, m, key, &old);
	int rc = 0;

	if (n) {
		rc = scalar_text(x, n, out);
		if (!rc && !(*out = arena_strdup(x->a, *out)))
			rc = sw_oom(x);
	}
	ytree_path_pop(&x->path, old);
	if (!n && required)
		return sw_missing(x, m, key);
	return rc;
}

int sw_get_int(struct scenario_walk *x, const struct ytree_node *m, const char *key, int64_t lo,
	       int64_t hi, int64_t *out)
{
	size_t old;
	const struct ytree_node *n = sw_field(x, m, key, &old);
	int64_t v;
	int rc = 0;

	if (n) {
		if (n->kind != YTREE_SCALAR || !n->plain || ytree_int_text(n->text, &v) != 0)
			rc = sw_fail(x, n, "expected an integer, got %s%s%s", n->kind == YTREE_SCALAR ? "\"" : "",
				     n->kind == YTREE_SCALAR ? n->text : kind_name(n),
				     n->kind == YTREE_SCALAR ? "\"" : "");
		else if (v < lo || v > hi)
			rc = sw_fail(x, n, "%lld is out of range [%lld, %lld]", (long long)v,
				     (long long)lo, (long long)hi);
		else
			*out = v;
	}
	ytree_path_pop(&x->path, old);
	return rc;
}

static int get_num(struct scenario_walk *x, const struct ytree_node *m, const char *key, double lo,
		   double hi, double *out)
{
	size_t old;
	const struct ytree_node *n = sw_field(x, m, key, &old);
	double v;
	int rc = 0;

	if (n) {
		if (n->kind != YTREE_SCALAR || !n->plain || ytree_float_text(n->text, &v) != 0 ||
		    !isfinite(v))
			rc = sw_fail(x, n, "expected a number");
		else if (v < lo || v > hi)
			rc = sw_fail(x, n, "%g is out of range [%g, %g]", v, lo, hi);
		else
			*out = v;
	}
	ytree_path_pop(&x->path, old);
	return rc;
}

int sw_get_bool(struct scenario_walk *x, const struct ytree_node *m, const char *key, bool *out)
{
	size_t old;
	const struct ytree_node *n = sw_field(x, m, key, &old);
	int rc = 0;

	if (n && (n->kind != YTREE_SCALAR || !n->plain || ytree_bool_text(n->text, out) != 0))
		rc = sw_fail(x, n, "expected true or false");
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

int sw_get_duration(struct scenario_walk *x, const struct ytree_node *m, const char *key,
		    int64_t *out)
{
	size_t old;
	const struct ytree_node *n = sw_field(x, m, key, &old);
	int rc = 0;

	if (n && (n->kind != YTREE_SCALAR || duration_text(n->text, out) < 0))
		rc = sw_fail(x, n, "expected a duration like \"90s\", \"15m\" or \"1h30m\", got %s%s%s",
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
static int get_time(struct scenario_walk *x, const struct ytree_node *m, const char *key,
		    int64_t *out)
{
	size_t old;
	const struct ytree_node *n = sw_field(x, m, key, &old);
	int64_t tod;
	int rc = 0;

	if (!n)
		goto out;
	if (n->kind != YTREE_SCALAR) {
		rc = sw_fail(x, n, "expected a time: a duration from the start (\"90m\") or a time of day (\"09:00\")");
		goto out;
	}
	tod = clock_time(n->text);
	if (tod >= 0) {
		int64_t at = x->day_start + tod - x->sc->start_wall;

		if (at < 0)
			rc = sw_fail(x, n, "%s is before the scenario's start", n->text);
		else
			*out = at * CLOCK_NS_PER_S;
	} else if (duration_text(n->text, out) < 0) {
		rc = sw_fail(x, n, "expected a time: a duration from the start (\"90m\") or a time of day (\"09:00\"), got \"%s\"",
			     n->text);
	}
out:
	ytree_path_pop(&x->path, old);
	return rc;
}

/* A mapping of strings (labels, selectors); 'what' names the keys. */
int sw_get_kv(struct scenario_walk *x, const struct ytree_node *m, const char *key,
	      bool label_keys, struct kvlist *out)
{
	size_t old;
	const struct ytree_node *n = sw_field(x, m, key, &old), *c;
	size_t i = 0;
	int rc = 0;

	out->items = NULL;
	out->n = 0;
	if (!n)
		goto out;
	if ((rc = sw_expect(x, n, YTREE_MAP)))
		goto out;
	out->items = n->n ? arena_calloc(x->a, n->n, sizeof(*out->items)) : NULL;
	if (n->n && !out->items) {
		rc = sw_oom(x);
		goto out;
	}
	for (c = n->first; c; c = c->next) {
		size_t o2 = ytree_path_push_key(&x->path, c->key->text);

		if (label_keys && !k8sname_valid_qualified_name(c->key->text, NULL, 0))
			rc = sw_fail(x, c->key, "invalid key \"%s\"", c->key->text);
		else if (c->kind != YTREE_SCALAR)
			rc = sw_fail(x, c, "expected a string, got %s", kind_name(c));
		else if (!(out->items[i].key = arena_strdup(x->a, c->key->text)) ||
			 !(out->items[i].value = arena_strdup(x->a, c->text)))
			rc = sw_oom(x);
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

/* A sequence of strings into an arena array; absent: *n = 0. */
int sw_get_strlist(struct scenario_walk *x, const struct ytree_node *m, const char *key,
		   const char ***out, size_t *n)
{
	size_t old, i = 0;
	const struct ytree_node *s = sw_field(x, m, key, &old), *c;
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (!s)
		goto out;
	if ((rc = sw_expect(x, s, YTREE_SEQ)))
		goto out;
	*out = s->n ? arena_calloc(x->a, s->n, sizeof(**out)) : NULL;
	if (s->n && !*out) {
		rc = sw_oom(x);
		goto out;
	}
	for (c = s->first; c; c = c->next, i++) {
		size_t o2 = ytree_path_push_index(&x->path, i);

		if (c->kind != YTREE_SCALAR || !c->text[0] || strlen(c->text) > 31)
			rc = sw_fail(x, c, "expected a name (1 to 31 characters)");
		else if (!((*out)[i] = arena_strdup(x->a, c->text)))
			rc = sw_oom(x);
		ytree_path_pop(&x->path, o2);
		if (rc)
			goto out;
	}
	*n = i;
out:
	ytree_path_pop(&x->path, old);
	return rc;
}

/* Resources: cpu, memory, ephemeral-storage, pods, and domain/name extended ones. */
static int parse_resources(struct scenario_walk *x, const struct ytree_node *n, bool allocatable,
			   struct resources *r)
{
	const struct ytree_node *c;
	int rc = 0;

	memset(r, 0, sizeof(*r));
	if (sw_expect(x, n, YTREE_MAP))
		return -1;
	if (allocatable)
		r->pods = 110;
	r->ext = n->n ? arena_calloc(x->a, n->n, sizeof(*r->ext)) : NULL;
	if (n->n && !r->ext)
		return sw_oom(x);
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
			rc = sw_fail(x, c->key, "unknown resource \"%s\": cpu, memory, ephemeral-storage%s, or an extended resource like \"nvidia.com/gpu\"",
				     name, allocatable ? ", pods" : "");
		}
		if (!rc && c->kind != YTREE_SCALAR)
			rc = sw_fail(x, c, "expected a quantity like \"500m\" or \"2Gi\", got %s",
				     kind_name(c));
		if (!rc && quantity_parse(c->text, unit, &v, &qe) < 0)
			rc = sw_fail(x, c, "%s", qe.msg);
		if (!rc && v < 0)
			rc = sw_fail(x, c, "must not be negative");
		if (!rc) {
			if (dst) {
				*dst = v;
			} else {
				r->ext[r->n_ext].name = arena_strdup(x->a, name);
				r->ext[r->n_ext].value = v;
				if (!r->ext[r->n_ext].name)
					rc = sw_oom(x);
				r->n_ext++;
			}
		}
		ytree_path_pop(&x->path, old);
	}
	if (!r->n_ext)
		r->ext = NULL;
	return rc;
}

static int parse_effect(struct scenario_walk *x, const struct ytree_node *m, bool required,
			int *out)
{
	const char *s = NULL;
	enum taint_effect e;
	size_t old;

	if (sw_get_str(x, m, "effect", required, &s))
		return -1;
	if (!s) {
		*out = -1;
		return 0;
	}
	if (taint_effect_parse(s, &e) < 0) {
		const struct ytree_node *n = ytree_map_find(m, "effect");

		old = ytree_path_push_key(&x->path, "effect");
		sw_fail(x, n, "expected NoSchedule, PreferNoSchedule or NoExecute, got \"%s\"", s);
		ytree_path_pop(&x->path, old);
		return -1;
	}
	*out = (int)e;
	return 0;
}

static int parse_taints(struct scenario_walk *x, const struct ytree_node *n, struct taint **out,
			size_t *nout)
{
	static const char *const keys[] = {"key", "value", "effect", NULL};
	const struct ytree_node *c;
	size_t i = 0;

	*out = NULL;
	*nout = 0;
	if (sw_expect(x, n, YTREE_SEQ))
		return -1;
	if (!n->n)
		return 0;
	*out = arena_calloc(x->a, n->n, sizeof(**out));
	if (!*out)
		return sw_oom(x);
	for (c = n->first; c; c = c->next, i++) {
		struct taint *t = &(*out)[i];
		size_t old = ytree_path_push_index(&x->path, i);
		int eff = 0, rc;

		t->value = "";
		rc = sw_expect(x, c, YTREE_MAP) || sw_check_keys(x, c, keys) ||
		     sw_get_str(x, c, "key", true, &t->key) || sw_get_str(x, c, "value", false, &t->value) ||
		     parse_effect(x, c, true, &eff);
		t->effect = (enum taint_effect)eff;
		ytree_path_pop(&x->path, old);
		if (rc)
			return -1;
	}
	*nout = i;
	return 0;
}

static int parse_tolerations(struct scenario_walk *x, const struct ytree_node *n,
			     struct toleration **out, size_t *nout)
{
	static const char *const keys[] = {"key", "operator", "value", "effect", NULL};
	const struct ytree_node *c;
	size_t i = 0;

	*out = NULL;
	*nout = 0;
	if (sw_expect(x, n, YTREE_SEQ))
		return -1;
	if (!n->n)
		return 0;
	*out = arena_calloc(x->a, n->n, sizeof(**out));
	if (!*out)
		return sw_oom(x);
	for (c = n->first; c; c = c->next, i++) {
		struct toleration *t = &(*out)[i];
		size_t old = ytree_path_push_index(&x->path, i);
		const char *op = NULL;
		int rc;

		t->key = "";
		t->value = "";
		rc = sw_expect(x, c, YTREE_MAP) || sw_check_keys(x, c, keys) ||
		     sw_get_str(x, c, "key", false, &t->key) || sw_get_str(x, c, "operator", false, &op) ||
		     sw_get_str(x, c, "value", false, &t->value) ||
		     parse_effect(x, c, false, &t->effect);
		if (!rc) {
			if (!op || strcmp(op, "Equal") == 0) {
				t->op = TOLERATION_EQUAL;
			} else if (strcmp(op, "Exists") == 0) {
				t->op = TOLERATION_EXISTS;
			} else {
				size_t o2 = ytree_path_push_key(&x->path, "operator");

				rc = sw_fail(x, ytree_map_find(c, "operator"),
					     "expected Equal or Exists, got \"%s\"", op);
				ytree_path_pop(&x->path, o2);
			}
		}
		if (!rc && t->op == TOLERATION_EQUAL && !t->key[0])
			rc = sw_fail(x, c, "an Equal toleration needs a key");
		ytree_path_pop(&x->path, old);
		if (rc)
			return -1;
	}
	*nout = i;
	return 0;
}

/* ---- sections ---- */

static int parse_group(struct scenario_walk *x, const struct ytree_node *m, struct node_group *g)
{
	static const char *const keys[] = {"name", "min", "max", "price_per_hour", "selector",
					   "template", NULL};
	static const char *const tkeys[] = {"allocatable", "labels", "taints", NULL};
	const struct ytree_node *t, *n;
	int64_t min = 0, max = -1;
	size_t old, i;
	int rc;

	if (sw_expect(x, m, YTREE_MAP) || sw_check_keys(x, m, keys) ||
	    sw_get_str(x, m, "name", true, &g->name) || sw_get_int(x, m, "min", 0, INT_MAX, &min) ||
	    sw_get_int(x, m, "max", 0, INT_MAX, &max) ||
	    get_num(x, m, "price_per_hour", 0, 1e9, &g->price_per_hour) ||
	    sw_get_kv(x, m, "selector", true, &g->selector))
		return -1;
	if (strlen(g->name) > 48 || !k8sname_valid_dns_subdomain(g->name)) {
		old = ytree_path_push_key(&x->path, "name");
		sw_fail(x, ytree_map_find(m, "name"),
			"invalid node group name \"%s\": up to 48 lowercase letters, digits, '-' and '.'",
			g->name);
		ytree_path_pop(&x->path, old);
		return -1;
	}
	if (max < 0)
		return sw_missing(x, m, "max");
	if (min > max)
		return sw_fail(x, m, "min %lld is above max %lld", (long long)min, (long long)max);
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
			return sw_oom(x);
		g->selector.items[0].key = "luascale.io/node-group";
		g->selector.items[0].value = g->name;
		g->selector.n = 1;
	}
	t = sw_field(x, m, "template", &old);
	if (!t) {
		ytree_path_pop(&x->path, old);
		return sw_missing(x, m, "template");
	}
	rc = sw_expect(x, t, YTREE_MAP) || sw_check_keys(x, t, tkeys);
	if (!rc) {
		size_t o2;

		n = sw_field(x, t, "allocatable", &o2);
		rc = n ? parse_resources(x, n, true, &g->tmpl.allocatable) : 0;
		ytree_path_pop(&x->path, o2);
		if (!rc && !n)
			rc = sw_missing(x, t, "allocatable");
	}
	if (!rc)
		rc = sw_get_kv(x, t, "labels", true, &g->tmpl.labels);
	if (!rc) {
		size_t o2;

		n = sw_field(x, t, "taints", &o2);
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
			return sw_oom(x);
		if (l->n)
			memcpy(items, l->items, l->n * sizeof(*items));
		for (i = 0; i < g->selector.n; i++) {
			const char *have = kvlist_get(l, g->selector.items[i].key);

			if (have && strcmp(have, g->selector.items[i].value) != 0)
				return sw_fail(x, m, "template label %s=%s contradicts the selector's %s=%s",
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

/* scenario_parse.h */
int sw_parse_list(struct scenario_walk *x, const struct ytree_node *s, size_t size, sw_item_fn fn,
		  void **items, size_t *n)
{
	const struct ytree_node *c;
	void *base;
	size_t i = 0;

	if (sw_expect(x, s, YTREE_SEQ))
		return -1;
	base = s->n ? arena_calloc(x->a, s->n, size) : NULL;
	if (s->n && !base)
		return sw_oom(x);
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

static int group_item(struct scenario_walk *x, const struct ytree_node *c, void *base, size_t i)
{
	struct node_group *groups = base;
	size_t j;
	int rc = parse_group(x, c, &groups[i]);

	for (j = 0; !rc && j < i; j++)
		if (strcmp(groups[i].name, groups[j].name) == 0)
			rc = sw_fail(x, c, "duplicate node group \"%s\"", groups[i].name);
	return rc;
}

static int parse_groups(struct scenario_walk *x, const struct ytree_node *s)
{
	void *groups = NULL;

	if (sw_parse_list(x, s, sizeof(struct node_group), group_item, &groups, &x->sc->n_groups) < 0)
		return -1;
	x->sc->groups = groups;
	return 0;
}

int sw_find_group(const struct sim_scenario *sc, const char *name)
{
	size_t i;

	for (i = 0; i < sc->n_groups; i++)
		if (strcmp(sc->groups[i].name, name) == 0)
			return (int)i;
	return -1;
}

int sw_each_group(struct scenario_walk *x, const struct ytree_node *m, sw_group_fn fn, void *ctx)
{
	const struct ytree_node *n, *gm;
	size_t old, i;
	int rc = 0;

	n = sw_field(x, m, "groups", &old);
	if (n && sw_expect(x, n, YTREE_MAP) == 0) {
		for (gm = n->first; gm; gm = gm->next) {
			if (sw_find_group(x->sc, gm->key->text) < 0) {
				size_t o2 = ytree_path_push_key(&x->path, gm->key->text);

				rc = sw_fail(x, gm->key, "no node group \"%s\"", gm->key->text);
				ytree_path_pop(&x->path, o2);
				break;
			}
		}
	} else if (n) {
		rc = -1;
	}
	for (i = 0; !rc && i < x->sc->n_groups; i++) {
		const struct ytree_node *g = n ? ytree_map_find(n, x->sc->groups[i].name) : NULL;
		size_t o2 = ytree_path_push_key(&x->path, x->sc->groups[i].name);

		rc = fn(x, g && !ytree_is_null(g) ? g : NULL, g ? g : n, i, ctx);
		ytree_path_pop(&x->path, o2);
	}
	ytree_path_pop(&x->path, old);
	return rc ? -1 : 0;
}

static int check_group_ref(struct scenario_walk *x, const struct ytree_node *m, const char *key,
			   const char *name)
{
	size_t old;
	int rc = 0;

	if (!name || sw_find_group(x->sc, name) >= 0)
		return 0;
	old = ytree_path_push_key(&x->path, key);
	rc = sw_fail(x, ytree_map_find(m, key), "no node group \"%s\"", name);
	ytree_path_pop(&x->path, old);
	return rc;
}

static int parse_cloud(struct scenario_walk *x, const struct ytree_node *m)
{
	static const char *const keys[] = {"boot_delay", "boot_jitter", "launch_latency",
					   "terminate_latency", "shutdown_delay", "api_qps",
					   "api_burst", NULL};
	struct sim_cloud_opts *o = &x->sc->cloud;
	int64_t burst = o->api_burst;

	if (sw_expect(x, m, YTREE_MAP) || sw_check_keys(x, m, keys) ||
	    sw_get_duration(x, m, "boot_delay", &o->boot_delay_ns) ||
	    sw_get_duration(x, m, "boot_jitter", &o->boot_jitter_ns) ||
	    sw_get_duration(x, m, "launch_latency", &o->launch_latency_ns) ||
	    sw_get_duration(x, m, "terminate_latency", &o->terminate_latency_ns) ||
	    sw_get_duration(x, m, "shutdown_delay", &o->shutdown_delay_ns) ||
	    get_num(x, m, "api_qps", 0, 1e6, &o->api_qps) ||
	    sw_get_int(x, m, "api_burst", 0, 1000000, &burst))
		return -1;
	o->api_burst = (int)burst;
	if (o->api_qps > 0 && o->api_burst < 1)
		o->api_burst = 1;
	return 0;
}

static int parse_safety(struct scenario_walk *x, const struct ytree_node *m)
{
	static const char *const keys[] = {"max_nodes_total", "max_scale_down_per_round", NULL};

	if (x->sc->config)
		return sw_fail(x, m, "give safety in the config the scenario names, not here");
	return sw_expect(x, m, YTREE_MAP) || sw_check_keys(x, m, keys) ||
	       sw_get_int(x, m, "max_nodes_total", 0, 1000000, &x->sc->max_nodes_total) ||
	       sw_get_int(x, m, "max_scale_down_per_round", 1, 1000000,
			  &x->sc->max_scale_down_per_round) ? -1 : 0;
}

static int parse_cluster(struct scenario_walk *x, const struct ytree_node *m)
{
	static const char *const keys[] = {"register_delay", "scheduler", "scheduler_interval",
					   "finished_ttl", NULL};
	struct sim_cluster_opts *o = &x->sc->cluster;
	const char *sched = NULL;

	if (sw_expect(x, m, YTREE_MAP) || sw_check_keys(x, m, keys) ||
	    sw_get_duration(x, m, "register_delay", &o->register_delay_ns) ||
	    sw_get_duration(x, m, "scheduler_interval", &o->sched_interval_ns) ||
	    sw_get_duration(x, m, "finished_ttl", &o->finished_ttl_ns) ||
	    sw_get_str(x, m, "scheduler", false, &sched))
		return -1;
	if (!sched || strcmp(sched, "first-fit") == 0) {
		o->sched = SIM_SCHED_FIRST_FIT;
	} else if (strcmp(sched, "least-allocated") == 0) {
		o->sched = SIM_SCHED_LEAST_ALLOCATED;
	} else {
		size_t old = ytree_path_push_key(&x->path, "scheduler");

		sw_fail(x, ytree_map_find(m, "scheduler"),
			"expected first-fit or least-allocated, got \"%s\"", sched);
		ytree_path_pop(&x->path, old);
		return -1;
	}
	return 0;
}

static int initial_item(struct scenario_walk *x, const struct ytree_node *c, void *base, size_t i)
{
	static const char *const keys[] = {"group", "count", NULL};
	struct sim_initial_nodes *in = (struct sim_initial_nodes *)base + i;
	int64_t count = 1;
	int rc = sw_expect(x, c, YTREE_MAP) || sw_check_keys(x, c, keys) ||
		 sw_get_str(x, c, "group", true, &in->group) ||
		 sw_get_int(x, c, "count", 0, 100000, &count) ||
		 check_group_ref(x, c, "group", in->group);

	in->count = (int)count;
	return rc;
}

static int parse_initial(struct scenario_walk *x, const struct ytree_node *s)
{
	void *items = NULL;

	if (sw_parse_list(x, s, sizeof(*x->sc->initial), initial_item, &items, &x->sc->n_initial) < 0)
		return -1;
	x->sc->initial = items;
	return 0;
}

/* ---- a workload's relations to other pods and to zones ---- */

#define ZONE_LABEL "topology.kubernetes.io/zone"
#define HOSTNAME_LABEL "kubernetes.io/hostname"

/* The label a topology is read from: hostname, zone, region, or a key as written. */
static int topology_key(struct scenario_walk *x, const struct ytree_node *n, const char **out)
{
	if (n->kind != YTREE_SCALAR)
		return sw_fail(x, n, "expected hostname, zone, region or a node label key, got %s",
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
		return sw_fail(x, n, "expected hostname, zone, region or a node label key, got \"%s\"",
			       n->text);
	return *out ? 0 : sw_oom(x);
}

/* Whether some node can have label 'key': every node has its hostname; a
 * group's template sets the others, or a cloud flavour places instances
 * in zones. */
static bool key_possible(const struct scenario_walk *x, const char *key)
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
static int get_topology(struct scenario_walk *x, const struct ytree_node *m, const char *key,
			bool required, const char **out)
{
	size_t old;
	const struct ytree_node *n = sw_field(x, m, key, &old);
	int rc = 0;

	*out = NULL;
	if (n && !(rc = topology_key(x, n, out)) && !key_possible(x, *out))
		rc = sw_fail(x, n, "no node group's template has the label %s (template.labels): no node would be in a domain of it",
			     *out);
	ytree_path_pop(&x->path, old);
	if (!n && required)
		return sw_missing(x, m, key);
	return rc;
}

/* matchLabels 'labels' as a selector (every label In its one value). */
static int selector_of(struct scenario_walk *x, const struct kvlist *labels,
		       struct label_selector *out)
{
	size_t i;

	out->n = 0;
	out->reqs = labels->n ? arena_calloc(x->a, labels->n, sizeof(*out->reqs)) : NULL;
	if (labels->n && !out->reqs)
		return sw_oom(x);
	for (i = 0; i < labels->n; i++) {
		struct selector_req *r = &out->reqs[i];

		r->key = labels->items[i].key;
		r->op = SELECTOR_IN;
		r->values = arena_calloc(x->a, 1, sizeof(*r->values));
		if (!r->values)
			return sw_oom(x);
		r->values[0] = labels->items[i].value;
		r->n_values = 1;
	}
	out->n = labels->n;
	return 0;
}

/* One required (anti-)affinity term: pods with 'labels' in the same domain of 'key'. */
static int one_term(struct scenario_walk *x, const struct kvlist *labels, const char *key,
		    struct pod_term **out, size_t *n)
{
	struct pod_term *t = arena_calloc(x->a, 1, sizeof(*t));

	if (!t)
		return sw_oom(x);
	t->topology_key = key;
	if (selector_of(x, labels, &t->selector) < 0)
		return -1;
	*out = t;
	*n = 1;
	return 0;
}

/* anti_affinity: hostname — no two of its pods (its labels) in one domain. */
static int parse_anti(struct scenario_walk *x, const struct ytree_node *m, struct sim_pod_spec *sp)
{
	const char *key = NULL;

	if (get_topology(x, m, "anti_affinity", false, &key))
		return -1;
	if (!key)
		return 0;
	if (!sp->labels.n) {
		size_t old = ytree_path_push_key(&x->path, "anti_affinity");

		sw_fail(x, ytree_map_find(m, "anti_affinity"),
			"needs the workload's labels: its pods are matched by them");
		ytree_path_pop(&x->path, old);
		return -1;
	}
	return one_term(x, &sp->labels, key, &sp->anti_terms, &sp->n_anti_terms);
}

/* pod_affinity: {topology: zone, labels: {app: db}} — only where such a pod runs. */
static int parse_pod_affinity(struct scenario_walk *x, const struct ytree_node *m,
			      struct sim_pod_spec *sp)
{
	static const char *const keys[] = {"topology", "labels", NULL};
	size_t old;
	const struct ytree_node *n = sw_field(x, m, "pod_affinity", &old);
	struct kvlist labels = {0};
	const char *key = NULL;
	int rc = 0;

	if (n)
		rc = sw_expect(x, n, YTREE_MAP) || sw_check_keys(x, n, keys) ||
		     get_topology(x, n, "topology", true, &key) ||
		     sw_get_kv(x, n, "labels", true, &labels) ? -1 : 0;
	if (n && !rc && !labels.n)
		rc = sw_fail(x, n, "labels is required: the pods it must run beside");
	if (n && !rc)
		rc = one_term(x, &labels, key, &sp->affinity_terms, &sp->n_affinity_terms);
	ytree_path_pop(&x->path, old);
	return rc;
}

/* One spread constraint: {topology: zone, max_skew: 1, min_domains: 3}. */
static int spread_item(struct scenario_walk *x, const struct ytree_node *c, void *base, size_t i)
{
	static const char *const keys[] = {"topology", "max_skew", "min_domains", NULL};
	struct spread_constraint *sc = (struct spread_constraint *)base + i;
	int64_t skew = 1, min = 1;

	if (sw_expect(x, c, YTREE_MAP) || sw_check_keys(x, c, keys) ||
	    get_topology(x, c, "topology", true, &sc->topology_key) ||
	    sw_get_int(x, c, "max_skew", 1, 1000000, &skew) ||
	    sw_get_int(x, c, "min_domains", 1, 1000000, &min))
		return -1;
	sc->max_skew = (int32_t)skew;
	sc->min_domains = (int32_t)min;
	sc->honor_affinity = true; /* the defaults: nodeAffinityPolicy Honor, */
	sc->honor_taints = false;  /* nodeTaintsPolicy Ignore */
	return 0;
}

/* topology_spread: one constraint or a list, over the workload's own pods. */
static int parse_spread(struct scenario_walk *x, const struct ytree_node *m,
			struct sim_pod_spec *sp)
{
	size_t old, i;
	const struct ytree_node *n = sw_field(x, m, "topology_spread", &old);
	void *items = NULL;
	int rc = 0;

	if (!n)
		goto out;
	if (!sp->labels.n) {
		rc = sw_fail(x, n, "needs the workload's labels: its pods are counted by them");
		goto out;
	}
	if (n->kind == YTREE_MAP) {
		items = arena_calloc(x->a, 1, sizeof(struct spread_constraint));
		rc = items ? spread_item(x, n, items, 0) : sw_oom(x);
		sp->n_spread = 1;
	} else if (n->kind == YTREE_SEQ) {
		rc = sw_parse_list(x, n, sizeof(struct spread_constraint), spread_item, &items,
				   &sp->n_spread);
	} else {
		rc = sw_fail(x, n, "expected a mapping {topology: zone, max_skew: 1} or a list of them, got %s",
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
static int parse_host_port(struct scenario_walk *x, const struct ytree_node *m,
			   struct sim_pod_spec *sp)
{
	int64_t port = 0;

	if (sw_get_int(x, m, "host_port", 1, 65535, &port))
		return -1;
	if (!port)
		return 0;
	sp->host_ports = arena_calloc(x->a, 1, sizeof(*sp->host_ports));
	if (!sp->host_ports)
		return sw_oom(x);
	sp->host_ports[0].ip = "0.0.0.0";
	sp->host_ports[0].port = (int32_t)port;
	sp->host_ports[0].protocol = PORT_TCP;
	sp->n_host_ports = 1;
	return 0;
}

/* Whether some group's template is in zone 'zone'. */
static bool zone_possible(const struct scenario_walk *x, const char *zone)
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
static int parse_volume(struct scenario_walk *x, const struct ytree_node *m,
			struct sim_pod_spec *sp)
{
	static const char *const keys[] = {"claim", "storage_class", "zones", NULL};
	size_t old, o2, i = 0;
	const struct ytree_node *n = sw_field(x, m, "volume", &old), *zs, *c;
	struct sim_volume *v;
	const char **zones = NULL;
	int rc = 0;

	if (!n)
		goto out;
	v = arena_calloc(x->a, 1, sizeof(*v));
	if (!v) {
		rc = sw_oom(x);
		goto out;
	}
	v->claim = "data";
	v->storage_class = "zonal";
	v->zone_key = ZONE_LABEL;
	if (sw_expect(x, n, YTREE_MAP) || sw_check_keys(x, n, keys) ||
	    sw_get_str(x, n, "claim", false, &v->claim) ||
	    sw_get_str(x, n, "storage_class", false, &v->storage_class)) {
		rc = -1;
		goto out;
	}
	if (sp->controller != SIM_CTRL_STATEFULSET) {
		rc = sw_fail(x, n, "a volume per replica needs controller: statefulset (its claims are kept when a pod is replaced)");
		goto out;
	}
	if (!k8sname_valid_dns_label(v->claim) ||
	    !k8sname_valid_dns_subdomain(v->storage_class)) {
		bool claim = !k8sname_valid_dns_label(v->claim);

		o2 = ytree_path_push_key(&x->path, claim ? "claim" : "storage_class");
		rc = sw_fail(x, ytree_map_find(n, claim ? "claim" : "storage_class"),
			     "invalid name \"%s\": lowercase letters, digits and '-'",
			     claim ? v->claim : v->storage_class);
		ytree_path_pop(&x->path, o2);
		goto out;
	}
	if (!key_possible(x, ZONE_LABEL)) {
		rc = sw_fail(x, n, "no node group's template has the label %s (template.labels): a volume is in a zone",
			     ZONE_LABEL);
		goto out;
	}
	zs = sw_field(x, n, "zones", &o2);
	if (zs && !(rc = sw_expect(x, zs, YTREE_SEQ)) && zs->n) {
		zones = arena_calloc(x->a, zs->n, sizeof(*zones));
		if (!zones)
			rc = sw_oom(x);
		for (c = zs->first; c && !rc; c = c->next, i++) {
			size_t o3 = ytree_path_push_index(&x->path, i);

			if (c->kind != YTREE_SCALAR || !c->text[0])
				rc = sw_fail(x, c, "expected a zone name, got %s", kind_name(c));
			else if (!zone_possible(x, c->text))
				rc = sw_fail(x, c, "no node group's template is in zone \"%s\" (its %s label): the replica could never run",
					     c->text, ZONE_LABEL);
			else if (!(zones[i] = arena_strdup(x->a, c->text)))
				rc = sw_oom(x);
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

static int parse_workload(struct scenario_walk *x, const struct ytree_node *m,
			  struct sim_workload *w)
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
	if (sw_expect(x, m, YTREE_MAP) || sw_check_keys(x, m, keys) ||
	    sw_get_str(x, m, "name", true, &sp->name) || sw_get_str(x, m, "namespace", false, &sp->ns) ||
	    sw_get_str(x, m, "controller", false, &ctrl) || get_time(x, m, "at", &w->at_ns) ||
	    sw_get_int(x, m, "count", 0, MAX_POD_COUNT, &count) ||
	    sw_get_duration(x, m, "interval", &w->interval_ns) ||
	    sw_get_duration(x, m, "spread", &w->spread_ns) ||
	    sw_get_duration(x, m, "every", &w->every_ns) ||
	    sw_get_int(x, m, "times", 1, 1000000, &times) ||
	    sw_get_kv(x, m, "labels", true, &sp->labels) ||
	    sw_get_kv(x, m, "annotations", true, &sp->annotations) ||
	    sw_get_int(x, m, "priority", INT32_MIN, INT32_MAX, &prio) ||
	    sw_get_duration(x, m, "duration", &sp->duration_ns) ||
	    sw_get_duration(x, m, "duration_spread", &w->duration_spread_ns) ||
	    sw_get_duration(x, m, "grace", &sp->grace_ns) ||
	    sw_get_kv(x, m, "node_selector", true, &sp->node_selector) ||
	    sw_get_bool(x, m, "local_storage", &sp->local_storage) ||
	    sw_get_bool(x, m, "safe_to_evict", &safe))
		return -1;
	if (!k8sname_valid_dns_subdomain(sp->name) || strlen(sp->name) > 200) {
		old = ytree_path_push_key(&x->path, "name");
		sw_fail(x, ytree_map_find(m, "name"), "invalid name \"%s\": lowercase letters, digits, '-' and '.'",
			sp->name);
		ytree_path_pop(&x->path, old);
		return -1;
	}
	if (!k8sname_valid_dns_label(sp->ns)) {
		old = ytree_path_push_key(&x->path, "namespace");
		sw_fail(x, ytree_map_find(m, "namespace"), "invalid namespace \"%s\"", sp->ns);
		ytree_path_pop(&x->path, old);
		return -1;
	}
	sp->controller = SIM_CTRL_REPLICASET;
	if (ctrl && sim_controller_parse(ctrl, &sp->controller) < 0) {
		old = ytree_path_push_key(&x->path, "controller");
		sw_fail(x, ytree_map_find(m, "controller"),
			"expected none, replicaset, statefulset, job or daemonset, got \"%s\"", ctrl);
		ytree_path_pop(&x->path, old);
		return -1;
	}
	w->count = (int)count;
	w->times = (int)times;
	sp->priority = (int32_t)prio;
	sp->safe_to_evict_false = !safe;
	if (w->interval_ns && w->spread_ns)
		return sw_fail(x, m, "interval and spread exclude each other: pods come one every interval, or at random over the spread");
	if (times > 1 && !w->every_ns)
		return sw_fail(x, m, "times needs every (how far apart the waves are)");
	n = sw_field(x, m, "requests", &old);
	rc = n ? parse_resources(x, n, false, &sp->requests) : 0;
	ytree_path_pop(&x->path, old);
	if (rc)
		return -1;
	n = sw_field(x, m, "tolerations", &old);
	rc = n ? parse_tolerations(x, n, &sp->tolerations, &sp->n_tolerations) : 0;
	ytree_path_pop(&x->path, old);
	if (rc || parse_anti(x, m, sp) || parse_pod_affinity(x, m, sp) || parse_spread(x, m, sp) ||
	    parse_host_port(x, m, sp) || parse_volume(x, m, sp))
		return -1;
	if ((sp->n_anti_terms || sp->n_affinity_terms || sp->n_spread || sp->n_host_ports ||
	     sp->volume) && sp->controller == SIM_CTRL_DAEMONSET)
		return sw_fail(x, m, "a daemonset's pods come with the nodes: anti_affinity, pod_affinity, topology_spread, host_port and volume are for the other controllers");
	return 0;
}

static int workload_item(struct scenario_walk *x, const struct ytree_node *c, void *base, size_t i)
{
	struct sim_workload *all = base, *w = &all[i];
	size_t j;
	int rc = parse_workload(x, c, w);

	for (j = 0; !rc && j < i; j++)
		if (strcmp(all[j].spec.name, w->spec.name) == 0 &&
		    strcmp(all[j].spec.ns, w->spec.ns) == 0)
			rc = sw_fail(x, c, "a workload named %s/%s is defined at line %d already",
				     w->spec.ns, w->spec.name, all[j].line);
	return rc;
}

static int parse_workloads(struct scenario_walk *x, const struct ytree_node *s)
{
	void *items = NULL;

	if (sw_parse_list(x, s, sizeof(*x->sc->workloads), workload_item, &items, &x->sc->n_workloads) < 0)
		return -1;
	x->sc->workloads = items;
	return 0;
}

static int parse_pdb(struct scenario_walk *x, const struct ytree_node *m, struct pdb *b)
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
	if (sw_expect(x, m, YTREE_MAP) || sw_check_keys(x, m, keys) ||
	    sw_get_str(x, m, "name", true, &b->name) || sw_get_str(x, m, "namespace", false, &b->ns) ||
	    sw_get_str(x, m, "min_available", false, &b->min_available) ||
	    sw_get_str(x, m, "max_unavailable", false, &b->max_unavailable))
		return -1;
	if (!!b->min_available[0] == !!b->max_unavailable[0])
		return sw_fail(x, m, "give exactly one of min_available and max_unavailable");
	which = b->min_available[0] ? "min_available" : "max_unavailable";
	{
		const char *s = b->min_available[0] ? b->min_available : b->max_unavailable;
		char *end;
		long val = strtol(s, &end, 10);

		if (end == s || *s == '-' || *s == '+' || (*end && strcmp(end, "%") != 0) ||
		    val > INT32_MAX || (*end == '%' && val > 100)) {
			old = ytree_path_push_key(&x->path, which);
			sw_fail(x, ytree_map_find(m, which), "expected a count like 2 or a percentage like \"50%%\", got \"%s\"",
				s);
			ytree_path_pop(&x->path, old);
			return -1;
		}
	}
	sel = sw_field(x, m, "selector", &old);
	if (!sel) {
		ytree_path_pop(&x->path, old);
		return sw_missing(x, m, "selector");
	} else if (sel->kind == YTREE_SCALAR) {
		rc = label_selector_parse(x->a, sel->text, &b->selector, x->err);
		if (rc < 0)
			rc = sw_fail(x, sel, "%s", x->err->msg);
		else if (!b->selector.n)
			b->selects_all = true;
	} else if (sel->kind == YTREE_MAP) {
		size_t i = 0;

		b->selector.reqs = sel->n ? arena_calloc(x->a, sel->n, sizeof(*b->selector.reqs)) : NULL;
		if (sel->n && !b->selector.reqs)
			rc = sw_oom(x);
		for (v = sel->first; v && !rc; v = v->next, i++) {
			struct selector_req *r = &b->selector.reqs[i];

			if (v->kind != YTREE_SCALAR) {
				size_t o2 = ytree_path_push_key(&x->path, v->key->text);

				rc = sw_fail(x, v, "expected a string, got %s", kind_name(v));
				ytree_path_pop(&x->path, o2);
				break;
			}
			r->key = arena_strdup(x->a, v->key->text);
			r->op = SELECTOR_IN;
			r->values = arena_calloc(x->a, 1, sizeof(*r->values));
			if (!r->key || !r->values || !(r->values[0] = arena_strdup(x->a, v->text)))
				rc = sw_oom(x);
			r->n_values = 1;
		}
		b->selector.n = i;
		b->selects_all = sel->n == 0;
	} else {
		rc = sw_fail(x, sel, "expected matchLabels (a mapping) or a selector like \"app=web\"");
	}
	ytree_path_pop(&x->path, old);
	return rc;
}

static int pdb_item(struct scenario_walk *x, const struct ytree_node *c, void *base, size_t i)
{
	return parse_pdb(x, c, (struct pdb *)base + i);
}

static int parse_pdbs(struct scenario_walk *x, const struct ytree_node *s)
{
	void *items = NULL;

	if (sw_parse_list(x, s, sizeof(*x->sc->pdbs), pdb_item, &items, &x->sc->n_pdbs) < 0)
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
static int parse_interrupt(struct scenario_walk *x, const struct ytree_node *m, struct sim_fault *f)
{
	if (ytree_map_find(m, "from") || ytree_map_find(m, "until") || ytree_map_find(m, "rate") ||
	    ytree_map_find(m, "delay") || ytree_map_find(m, "error"))
		return sw_fail(x, m, "an interrupt fault takes at, count or fraction, and warning (not from, until, rate, delay or error)");
	f->delay_ns = 2 * 60 * CLOCK_NS_PER_S;
	if (get_time(x, m, "at", &f->from_ns) || get_num(x, m, "fraction", 0, 1, &f->rate) ||
	    sw_get_duration(x, m, "warning", &f->delay_ns))
		return -1;
	if (!ytree_map_find(m, "at"))
		return sw_missing(x, m, "at");
	if (!!ytree_map_find(m, "count") == !!ytree_map_find(m, "fraction"))
		return sw_fail(x, m, "an interrupt fault takes one of count (instances) and fraction (of the running ones)");
	if (ytree_map_find(m, "count") && f->count < 1)
		return sw_fail(x, m, "count must be at least 1");
	if (ytree_map_find(m, "fraction") && !(f->rate > 0))
		return sw_fail(x, m, "fraction must be above 0");
	if (f->delay_ns < 0)
		return sw_fail(x, m, "warning must not be negative");
	return 0;
}

/* An image fault: at 'at', the group (every group without one) launches
 * 'image' from then on. */
static int parse_image_fault(struct scenario_walk *x, const struct ytree_node *m,
			     struct sim_fault *f)
{
	static const char *const allowed[] = {"kind", "group", "at", "image", NULL};
	const struct ytree_node *k;
	size_t i;

	for (k = m->first; k; k = k->next) {
		for (i = 0; allowed[i] && strcmp(allowed[i], k->key->text); i++)
			;
		if (!allowed[i])
			return sw_fail(x, k->key, "an image fault takes group, at and image (not %s)", k->key->text);
	}
	if (get_time(x, m, "at", &f->from_ns) || sw_get_str(x, m, "image", true, &f->image))
		return -1;
	if (!ytree_map_find(m, "at"))
		return sw_missing(x, m, "at");
	if (!f->image[0] || strlen(f->image) >= SIM_IMAGE_MAX ||
	    strcspn(f->image, " \t\r\n\"'") != strlen(f->image)) {
		size_t old = ytree_path_push_key(&x->path, "image");

		sw_fail(x, ytree_map_find(m, "image"), "expected an image name (1 to %d characters, no blanks or quotes), got \"%s\"",
			SIM_IMAGE_MAX - 1, f->image);
		ytree_path_pop(&x->path, old);
		return -1;
	}
	return 0;
}

static int parse_fault(struct scenario_walk *x, const struct ytree_node *m, struct sim_fault *f)
{
	static const char *const keys[] = {"kind", "group", "from", "until", "rate", "count",
					   "error", "delay", "instance_type", "zone", "capacity_type",
					   "at", "fraction", "warning", "image", NULL};
	const char *kind = NULL, *error = NULL, *capacity = NULL;
	int64_t count = 0;
	size_t old;

	if (sw_expect(x, m, YTREE_MAP) || sw_check_keys(x, m, keys) ||
	    sw_get_str(x, m, "kind", true, &kind) || sw_get_str(x, m, "group", false, &f->group) ||
	    get_time(x, m, "from", &f->from_ns) || get_time(x, m, "until", &f->until_ns) ||
	    get_num(x, m, "rate", 0, 1, &f->rate) || sw_get_int(x, m, "count", 0, INT_MAX, &count) ||
	    sw_get_str(x, m, "error", false, &error) || sw_get_duration(x, m, "delay", &f->delay_ns) ||
	    sw_get_str(x, m, "instance_type", false, &f->instance_type) ||
	    sw_get_str(x, m, "zone", false, &f->zone) ||
	    sw_get_str(x, m, "capacity_type", false, &capacity) ||
	    check_group_ref(x, m, "group", f->group))
		return -1;
	f->count = (int)count;
	if (sim_fault_kind_parse(kind, &f->kind) < 0) {
		old = ytree_path_push_key(&x->path, "kind");
		sw_fail(x, ytree_map_find(m, "kind"),
			"expected launch_error, throttle, stuck_boot, slow_boot, slow_call, slow_resize, "
			"terminate_error, lost_answer, interrupt or image, got \"%s\"",
			kind);
		ytree_path_pop(&x->path, old);
		return -1;
	}
	if (f->kind == SIM_FAULT_INTERRUPT) {
		if (ytree_map_find(m, "image"))
			return sw_fail(x, m, "image is for image faults only");
		return parse_interrupt(x, m, f);
	}
	if (f->kind == SIM_FAULT_IMAGE)
		return parse_image_fault(x, m, f);
	if (ytree_map_find(m, "image"))
		return sw_fail(x, m, "image is for image faults only");
	if (ytree_map_find(m, "at") || ytree_map_find(m, "fraction") || ytree_map_find(m, "warning"))
		return sw_fail(x, m, "at is for interrupt and image faults, fraction and warning for interrupt faults only");
	if ((f->instance_type || f->zone || capacity) && f->kind != SIM_FAULT_LAUNCH_ERROR)
		return sw_fail(x, m, "instance_type, zone and capacity_type are for launch_error faults only");
	if (capacity) {
		if (strcmp(capacity, "spot") == 0) {
			f->capacity = SIM_CAPACITY_SPOT;
		} else if (strcmp(capacity, "on-demand") == 0) {
			f->capacity = SIM_CAPACITY_ON_DEMAND;
		} else {
			old = ytree_path_push_key(&x->path, "capacity_type");
			sw_fail(x, ytree_map_find(m, "capacity_type"),
				"expected spot or on-demand, got \"%s\"", capacity);
			ytree_path_pop(&x->path, old);
			return -1;
		}
	}
	if (error && f->kind != SIM_FAULT_LAUNCH_ERROR && f->kind != SIM_FAULT_TERMINATE_ERROR)
		return sw_fail(x, m, "error is for launch_error and terminate_error faults only");
	if (error && parse_error_name(error, &f->error) < 0) {
		old = ytree_path_push_key(&x->path, "error");
		sw_fail(x, ytree_map_find(m, "error"),
			"expected no_capacity, quota, throttled, transient, invalid or auth, got \"%s\"",
			error);
		ytree_path_pop(&x->path, old);
		return -1;
	}
	if ((f->kind == SIM_FAULT_SLOW_BOOT || f->kind == SIM_FAULT_SLOW_CALL ||
	     f->kind == SIM_FAULT_SLOW_RESIZE) &&
	    !ytree_map_find(m, "delay"))
		return sw_missing(x, m, "delay");
	if (f->until_ns && f->until_ns <= f->from_ns)
		return sw_fail(x, m, "until must come after from");
	return 0;
}

static int fault_item(struct scenario_walk *x, const struct ytree_node *c, void *base, size_t i)
{
	return parse_fault(x, c, (struct sim_fault *)base + i);
}

static int parse_faults(struct scenario_walk *x, const struct ytree_node *s)
{
	void *items = NULL;

	if (sw_parse_list(x, s, sizeof(*x->sc->faults), fault_item, &items, &x->sc->n_faults) < 0)
		return -1;
	x->sc->faults = items;
	return 0;
}

/* ---- the clouds' sections (src/sim/clouds/<k>_kind.c parses each) ---- */

/* A cloud's section: the scenario's flavour (one at most). */
static int parse_flavour(struct scenario_walk *x, const struct sim_cloud_kind *k,
			 const struct ytree_node *m)
{
	const void *conf = NULL;

	if (x->sc->flavour_kind) {
		if (k->refusal)
			return sw_fail(x, m, "%s", k->refusal);
		return sw_fail(x, m, "a scenario has one cloud section, not both %s: and %s:",
			       x->sc->flavour_kind->name, k->name);
	}
	if (k->parse(x, m, &conf) < 0)
		return -1;
	x->sc->flavour_kind = k;
	x->sc->flavour_conf = conf;
	return 0;
}

const void *sim_scenario_cloud(const struct sim_scenario *sc, const struct sim_cloud_kind *k)
{
	return sc->flavour_kind == k ? sc->flavour_conf : NULL;
}

/* expect: what a run must show, else it counts as broken (exit 4). */
static int parse_expect(struct scenario_walk *x, const struct ytree_node *m)
{
	static const char *const keys[] = {"max_pending", NULL};

	if (sw_expect(x, m, YTREE_MAP) || sw_check_keys(x, m, keys) ||
	    sw_get_duration(x, m, "max_pending", &x->sc->expect_max_pending_ns))
		return -1;
	if (ytree_map_find(m, "max_pending") && x->sc->expect_max_pending_ns <= 0) {
		size_t old = ytree_path_push_key(&x->path, "max_pending");

		sw_fail(x, ytree_map_find(m, "max_pending"), "must be longer than 0");
		ytree_path_pop(&x->path, old);
		return -1;
	}
	return 0;
}

/* The luascale config a scenario names, read offline and without the environment. */
static int load_config(struct scenario_walk *x, const struct ytree_node *n, const char *rel)
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
		return sw_fail(x, n, "%s", cerr.msg);
	}
	memset(&opts, 0, sizeof(opts));
	opts.envp = no_env;
	opts.flags = CONFIG_OFFLINE;
	x->sc->config = config_parse_opts(text.data ? text.data : "", text.len, path, &opts, &cerr);
	buf_free(&text);
	if (!x->sc->config)
		return sw_fail(x, n, "in the config it names: %s", cerr.msg);
	x->sc->groups = x->sc->config->groups;
	x->sc->n_groups = x->sc->config->n_groups;
	if (x->sc->config->protected_pods.n) {
		x->sc->protected_pods = &x->sc->config->protected_pods;
		x->sc->protected_text = x->sc->config->protected_pod_selector;
	}
	return 0;
}

static int parse_root(struct scenario_walk *x, const struct ytree_node *root)
{
	/* the sections after the groups, each optional, in this order (safety
	 * checks that no config was named) */
	static const struct {
		const char *key;
		int (*parse)(struct scenario_walk *x, const struct ytree_node *n);
	} sections[] = {
		{"cloud", parse_cloud},         {"cluster", parse_cluster},
		{"safety", parse_safety},       {"initial_nodes", parse_initial},
		{"workloads", parse_workloads}, {"pdbs", parse_pdbs},
		{"faults", parse_faults},
	};
	/* then the clouds' sections, each optional (one at most), then expect */
	static const char *const fixed[] = {"title", "description", "seed", "start", "duration",
					    "config", "node_groups", "protected_pods", "safety",
					    "cloud", "cluster", "initial_nodes", "workloads", "pdbs",
					    "faults"};
	const char *keys[sizeof(fixed) / sizeof(fixed[0]) + N_SIM_CLOUDS + 2];
	const struct sim_cloud_kind *k;
	struct sim_scenario *sc = x->sc;
	const struct ytree_node *n;
	const char *start = NULL, *cfg = NULL, *prot = NULL;
	int64_t seed = 1;
	size_t old, i;
	int rc;

	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		keys[i] = fixed[i];
	for (k = sim_cloud_kind_next(NULL); k; k = sim_cloud_kind_next(k))
		keys[i++] = k->name;
	keys[i++] = "expect";
	keys[i] = NULL;
	if (sw_expect(x, root, YTREE_MAP) || sw_check_keys(x, root, keys) ||
	    sw_get_str(x, root, "title", false, &sc->title) ||
	    sw_get_str(x, root, "description", false, &sc->description) ||
	    sw_get_int(x, root, "seed", 0, INT64_MAX, &seed) ||
	    sw_get_str(x, root, "start", false, &start) ||
	    sw_get_duration(x, root, "duration", &sc->duration_ns) ||
	    sw_get_str(x, root, "config", false, &cfg) ||
	    sw_get_str(x, root, "protected_pods", false, &prot))
		return -1;
	sc->seed = (uint64_t)seed;
	for (k = sim_cloud_kind_next(NULL); k; k = sim_cloud_kind_next(k))
		x->flavoured = x->flavoured || ytree_map_find(root, k->name);
	if (model_parse_time(start ? start : DEFAULT_START, &sc->start_wall) < 0) {
		old = ytree_path_push_key(&x->path, "start");
		sw_fail(x, ytree_map_find(root, "start"),
			"expected a time like \"2024-05-06T08:00:00Z\", got \"%s\"", start);
		ytree_path_pop(&x->path, old);
		return -1;
	}
	x->day_start = sc->start_wall - ((sc->start_wall % 86400) + 86400) % 86400;
	if (sc->duration_ns <= 0)
		sc->duration_ns = DEFAULT_DURATION_NS;

	rc = 0;
	n = sw_field(x, root, "node_groups", &old);
	if (cfg && n) {
		rc = sw_fail(x, n, "give node_groups or config, not both");
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
		return sw_fail(x, root, "node_groups (or a config that has them) is required");
	if (prot) {
		struct label_selector *sel = arena_calloc(x->a, 1, sizeof(*sel));

		old = ytree_path_push_key(&x->path, "protected_pods");
		if (!sel)
			rc = sw_oom(x);
		else if (label_selector_parse(x->a, prot, sel, x->err) < 0)
			rc = sw_fail(x, ytree_map_find(root, "protected_pods"), "%s", x->err->msg);
		ytree_path_pop(&x->path, old);
		if (rc)
			return -1;
		sc->protected_pods = sel->n ? sel : NULL;
		sc->protected_text = sel->n ? prot : NULL;
	}

	for (i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
		n = sw_field(x, root, sections[i].key, &old);
		rc = n ? sections[i].parse(x, n) : 0;
		ytree_path_pop(&x->path, old);
		if (rc)
			return -1;
	}
	for (k = sim_cloud_kind_next(NULL); k; k = sim_cloud_kind_next(k)) {
		n = sw_field(x, root, k->name, &old);
		rc = n ? parse_flavour(x, k, n) : 0;
		ytree_path_pop(&x->path, old);
		if (rc)
			return -1;
	}
	n = sw_field(x, root, "expect", &old);
	rc = n ? parse_expect(x, n) : 0;
	ytree_path_pop(&x->path, old);
	return rc ? -1 : 0;
}

struct sim_scenario *sim_scenario_parse(const char *text, size_t len, const char *source,
					struct errbuf *err)
{
	struct sim_scenario *sc = calloc(1, sizeof(*sc));
	struct ytree_node *root = NULL;
	struct scenario_walk x;

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
	if (sc->flavour_kind) {
		w->flavour = sc->flavour_kind->flavour_new(w->cloud, sc->flavour_conf, co.seed, err);
		if (!w->flavour)
			goto fail;
		w->flavour_kind = sc->flavour_kind;
	}
	w->t0 = sim_cloud_now(w->cloud);
	{
		struct sim_cluster_opts copts = sc->cluster;

		/* GKE's handlers taint a node GCE is about to preempt */
		if (sc->flavour_kind && sc->flavour_kind->interruption_taint)
			copts.interruption_taint = sc->flavour_kind->interruption_taint;
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
	if (w->flavour)
		w->flavour_kind->flavour_start(w->flavour);
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
	if (w->flavour)
		w->flavour_kind->flavour_free(w->flavour);
	free(w->spec_handles);
	free(w);
}

void *sim_world_flavour(const struct sim_world *w, const struct sim_cloud_kind *k)
{
	return w->flavour_kind == k ? w->flavour : NULL;
}
