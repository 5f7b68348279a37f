/*
 * topology: inter-pod affinity and anti-affinity, topology spread and host
 * ports, as the kube-scheduler's InterPodAffinity, PodTopologySpread and
 * NodePorts filters judge them, over sites (nodes, planned nodes,
 * templates). Pods are grouped into classes (namespace, labels); each
 * constraint a pod brings is a counter of matching pods per topology
 * domain, kept current as pods are added and removed, so a check is a few
 * hash lookups. It reads labels and taints only: no rooms, no volumes.
 */
#include "topology.h"

#include <assert.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
#define HOSTNAME_KEY "kubernetes.io/hostname"
#define NS_NAME_LABEL "kubernetes.io/metadata.name"

/* ---- a map of 64-bit keys to 32-bit values (open addressing) ---- */

struct u64map {
	uint64_t *keys; /* key + 1; 0 empty */
	uint32_t *vals;
	size_t cap, n;  /* cap a power of two */
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static uint32_t *map_find(const struct u64map *m, uint64_t key)
{
	size_t i;

	if (!m->cap)
		return NULL;
	for (i = mix64(key) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key + 1)
			return &m->vals[i];
	return NULL;
}

static int map_grow(struct u64map *m)
{
	struct u64map g = {0};
	size_t i;

	g.cap = m->cap ? m->cap * 2 : 16;
	g.keys = calloc(g.cap, sizeof(*g.keys));
	g.vals = malloc(g.cap * sizeof(*g.vals));
	if (!g.keys || !g.vals) {
		free(g.keys);
		free(g.vals);
		return -1;
	}
	for (i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->keys[i])
			continue;
		for (j = mix64(m->keys[i] - 1) & (g.cap - 1); g.keys[j]; j = (j + 1) & (g.cap - 1))
			;
		g.keys[j] = m->keys[i];
		g.vals[j] = m->vals[i];
	}
	g.n = m->n;
	free(m->keys);
	free(m->vals);
	*m = g;
	return 0;
}

/* The value of 'key', added as 'dflt' when absent; NULL when out of memory. */
static uint32_t *map_get(struct u64map *m, uint64_t key, uint32_t dflt)
{
	uint32_t *v = map_find(m, key);
	size_t i;

	if (v)
		return v;
	if ((m->n + 1) * 4 > m->cap * 3 && map_grow(m) < 0)
		return NULL;
	for (i = mix64(key) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1))
		;
	m->keys[i] = key + 1;
	m->vals[i] = dflt;
	m->n++;
	return &m->vals[i];
}

static void map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	if (!s)
		return mix64(h ^ 0x9e3779b97f4a7c15ULL);
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return mix64(h ^ 0xff);
}

/* Equal text, NULL as "" (interned strings are often the same pointer). */
static bool str_eq(const char *a, const char *b)
{
	return a == b || strcmp(a ? a : "", b ? b : "") == 0;
}

/* A growable array of uint32_t. */
struct u32vec {
	uint32_t *v;
	size_t n, cap;
};

static int vec_push(struct u32vec *a, uint32_t x)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 4;
		uint32_t *v = realloc(a->v, cap * sizeof(*v));

		if (!v)
			return -1;
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = x;
	return 0;
}

/* ---- the index ---- */

struct used_port {
	const char *ip;
	int32_t port;
	enum port_protocol protocol;
};

struct site {
	enum topo_site_kind kind;
	const char *name;
	const struct kvlist *labels;
	const struct taint *taints;
	size_t n_taints;
	uint32_t *vals;        /* per topology key: value id, NONE when the label is absent */
	size_t n_vals;
	const struct pod **pods; /* counted here, in no order */
	size_t n_pods, cap_pods;
	size_t n_ports;        /* host ports of those pods, counted */
	/* DaemonSet pods a planned node will run (topo_hold_ports()), not
	 * counted: only their host ports are taken */
	const struct pod *const *held;
	size_t n_held, n_held_ports;
	bool disabled;         /* going away (a drain): no domain, takes no pod */
	long twin;             /* a planned node's template site, -1 none */
};

/* Pods of one namespace with the same labels (and terminating or not). */
struct pclass {
	const char *ns;
	const struct kvlist *labels; /* borrowed from its first pod */
	bool terminating;
	uint64_t hash;
	struct u32vec sites;    /* where it has pods (count > 0) */
	struct u32vec counters; /* the counters that count it */
	struct u32vec anti;     /* the owner groups whose terms match it */
	size_t anti_seen;       /* owner groups [0, anti_seen) examined */
	/* While no counter counts the class, its pods (those without
	 * anti-affinity or host ports) are only listed here, site and plan,
	 * and counted the moment a counter first matches it: a packing's
	 * plain pods cost a push and a pop. */
	struct u32vec dsite, dplan;
};

/* One required term, with the namespace of the pod that has it. */
struct term_ref {
	const struct pod_term *term;
	const char *owner_ns;
};

enum counter_kind {
	C_AFFINITY, /* pods matching all of a pod's affinity terms, per (term key, value) */
	C_ANTI,     /* pods matching one anti-affinity term, per value of its key */
	C_SPREAD,   /* pods matching a spread constraint, per value, over eligible sites */
	C_OWNERS,   /* pods that have one anti-affinity term, per value (the symmetry rule) */
};

/* A topology domain's numbers in a counter. */
struct dom {
	int32_t count;   /* matching pods */
	int32_t n_sites; /* C_SPREAD: eligible node and planned sites with this value */
	int32_t n_tmpl;  /* C_SPREAD: eligible template sites with this value */
	uint32_t value;  /* value id */
};

struct counter {
	enum counter_kind kind;
	uint64_t hash;
	/* what it matches: terms (C_AFFINITY all of them, the others one) or
	 * a spread constraint of 'pod' */
	const struct pod *pod;  /* whose constraint it is (borrowed) */
	struct term_ref *terms;
	size_t n_terms;
	const struct spread_constraint *sc;
	uint32_t *keys;         /* topology key ids, per term (C_AFFINITY) or one */
	/* the domains: (key index << 32 | value id) -> index into doms */
	struct u64map map;
	struct dom *doms;
	size_t n_doms, cap_doms;
	size_t n_nonzero;       /* domains with count != 0 */
	/* C_SPREAD */
	bool per_site;          /* its key is the hostname, or its pod's node affinity
				 * reads the hostname or the name: a planned node's
				 * eligibility and domain are its own, not its twin's */
	bool no_next;           /* a hostname spread with minDomains: a template's
				 * next node is no domain while a packing plans */
	uint8_t *eligible;      /* per site */
	size_t cap_eligible;
	bool min_ok;
	unsigned min_epoch;
	int32_t min;            /* least count over the domains that exist */
	size_t at_min;          /* domains at it */
	size_t n_exist;         /* domains that exist */
	/* C_OWNERS: the pods that have the term, and where; the domain counts
	 * are filled from them the first time a pod's class matches the term
	 * ('lazy' until then), so an index of many such pods costs a push each
	 * until one is asked about */
	const struct pod **members;
	uint32_t *member_site;
	size_t n_members, cap_members;
	bool lazy;
	/* C_AFFINITY: a waiting pod that matches all its terms (waited_for()),
	 * worked out once per wait_epoch */
	unsigned wait_epoch;
	const struct pod *waits_for;
};

/* What a pod brings, worked out once: its class and owner groups when it
 * is counted, its counters once it is checked ('checked'). */
struct pplan {
	const struct pod *pod;
	uint32_t cls;
	uint32_t *owners;      /* per anti-affinity term: its C_OWNERS counter */
	uint32_t dpos;         /* where it is in its class's deferred lists, NONE */
	bool owners_counted;   /* a member of its owner groups already (topo_new()):
				 * its first count leaves them alone */
	bool checked;
	uint32_t affinity;     /* counter, NONE without affinity terms */
	uint32_t *anti;        /* counters per anti-affinity term */
	uint32_t *spread;      /* counters per spread constraint */
	bool self_all;         /* the pod matches all its own affinity terms */
	bool *self_spread;     /* per constraint: the pod matches its selector */
};

enum op_kind { OP_ADD_POD, OP_REMOVE_POD, OP_ADD_SITE, OP_DISABLE_SITE };

struct op {
	enum op_kind kind;
	uint32_t site;
	const struct pod *pod;
};

struct topo {
	const struct namespace_obj *ns;
	size_t n_ns;
	struct site *sites;
	size_t n_sites, cap_sites;
	const char **keys;      /* topology keys, by id */
	size_t n_keys;
	/* value ids: interned by hash, compared by text */
	const char **values;    /* owned copies */
	size_t n_values, cap_values;
	struct u64map value_ix; /* hash -> first id; collisions chain through value_next */
	uint32_t *value_next;
	struct pclass *classes;
	size_t n_classes, cap_classes;
	struct u64map class_ix; /* hash -> first class; chain through class_next */
	uint32_t *class_next;
	struct u64map cs;       /* (class << 32 | site) -> index into cs_entries */
	struct cs_entry *cs_entries;
	size_t n_cs, cap_cs;
	struct counter *counters;
	size_t n_counters, cap_counters;
	struct u64map counter_ix; /* hash -> first counter; chain through counter_next */
	uint32_t *counter_next;
	struct u32vec spread_counters;
	struct u32vec per_site_spread; /* those with per_site */
	struct u32vec owner_groups; /* C_OWNERS counters, in creation order */
	struct u64map plan_ix;  /* pod pointer -> plan, for pods not in 'base' */
	const struct pod *base; /* the snapshot's pods (topo_new()): their plans by index */
	size_t n_base;
	uint32_t *base_plan;    /* per snapshot pod: its plan, NONE none yet */
	const struct snapshot *snap; /* topo_new()'s, while 'unclassified' */
	bool unclassified;      /* its bound pods without anti-affinity or host ports are
				 * not counted yet: only a constraint of another pod's
				 * can match them (classify_rest()) */
	struct pplan *plans;
	size_t n_plans, cap_plans;
	struct op *ops;         /* the journal */
	size_t n_ops, cap_ops;
	bool replaying;         /* a rollback: no journal */
	bool planning;
	unsigned epoch;         /* bumped when planning changes */
	size_t n_with_ports;    /* counted pods with host ports */
	const char *refusal_key;
	bool oom;
	/* topo_set_waiting(): the pods a packing has yet to place */
	const struct pod *wait_base;
	const uint32_t *wait_ix;
	size_t n_wait;
	unsigned wait_epoch;    /* bumped by each topo_set_waiting() */
};

/*
 * Grows an array of 'elem'-byte items and its parallel chain of next ids
 * (the hash chains of values, classes and counters) to hold one more.
 * 0, or -1 when out of memory (both arrays still valid).
 */
static int grow_chained(void **arr, size_t elem, uint32_t **next, size_t n, size_t *cap,
			size_t first_cap)
{
	size_t ncap;
	void *na;
	uint32_t *nn;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : first_cap;
	if (!(na = realloc(*arr, ncap * elem)))
		return -1;
	*arr = na;
	if (!(nn = realloc(*next, ncap * sizeof(*nn))))
		return -1;
	*next = nn;
	*cap = ncap;
	return 0;
}

/* ---- bounded text ---- */

static void textf(char **p, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void textf(char **p, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!*p || *len == 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(*p, *len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= *len) {
		*p += *len - 1;
		*len = 1;
	} else {
		*p += n;
		*len -= (size_t)n;
	}
}

/* ---- keys and values ---- */

static uint32_t value_id(struct topo *t, const char *v)
{
	uint64_t h = hash_str(0, v);
	uint32_t *first = map_find(&t->value_ix, h), id;
	char *copy;

	for (id = first ? *first : NONE; id != NONE; id = t->value_next[id])
		if (strcmp(t->values[id], v) == 0)
			return id;
	if (grow_chained((void **)&t->values, sizeof(*t->values), &t->value_next, t->n_values,
			 &t->cap_values, 64) < 0) {
		t->oom = true;
		return NONE;
	}
	id = (uint32_t)t->n_values;
	first = map_get(&t->value_ix, h, NONE);
	/* a copy: a planned node's hostname goes away with its packing */
	copy = first ? malloc(strlen(v) + 1) : NULL;
	if (!copy) {
		t->oom = true;
		return NONE;
	}
	memcpy(copy, v, strlen(v) + 1);
	t->values[id] = copy;
	t->value_next[id] = *first;
	*first = id;
	t->n_values++;
	return id;
}

/* The site's value of key 'k' as an id, NONE when absent. */
static uint32_t site_value(struct topo *t, struct site *st, uint32_t k)
{
	if (k >= st->n_vals) {
		uint32_t *nv = realloc(st->vals, t->n_keys * sizeof(*nv));
		size_t i;

		if (!nv) {
			t->oom = true;
			return NONE;
		}
		st->vals = nv;
		for (i = st->n_vals; i < t->n_keys; i++) {
			const char *v = kvlist_get(st->labels, t->keys[i]);

			/* a template stands for the next node of its group: a
			 * hostname domain of its own, with no pod yet */
			if (!v && st->kind == TOPO_TEMPLATE && strcmp(t->keys[i], HOSTNAME_KEY) == 0)
				v = st->name;

			st->vals[i] = v ? value_id(t, v) : NONE;
		}
		st->n_vals = t->n_keys;
	}
	return st->vals[k];
}

static uint32_t key_id(struct topo *t, const char *key)
{
	const char **nk;
	size_t i;

	for (i = 0; i < t->n_keys; i++)
		if (strcmp(t->keys[i], key) == 0)
			return (uint32_t)i;
	nk = realloc(t->keys, (t->n_keys + 1) * sizeof(*nk));
	if (!nk) {
		t->oom = true;
		return NONE;
	}
	t->keys = nk;
	t->keys[t->n_keys] = key;
	return (uint32_t)t->n_keys++;
}

/* ---- matching pods to terms ---- */

static const struct kvlist *ns_labels(const struct topo *t, const char *ns, struct kv *one,
				      struct kvlist *tmp)
{
	size_t i;

	for (i = 0; i < t->n_ns; i++)
		if (str_eq(t->ns[i].name, ns))
			return &t->ns[i].labels;
	/* every namespace carries its name as a label */
	one->key = NS_NAME_LABEL;
	one->value = ns;
	tmp->items = one;
	tmp->n = 1;
	return tmp;
}

/* Does a pod of namespace 'ns' with 'labels' match the term (its
 * namespaces, namespaceSelector and labelSelector)? */
static bool term_matches(const struct topo *t, const struct term_ref *r, const char *ns,
			 const struct kvlist *labels)
{
	const struct pod_term *term = r->term;
	bool in_ns = false;
	size_t i;

	if (term->selector_null)
		return false;
	if (term->n_namespaces == 0 && !term->has_ns_selector) {
		in_ns = str_eq(ns, r->owner_ns);
	} else {
		for (i = 0; i < term->n_namespaces && !in_ns; i++)
			in_ns = str_eq(ns, term->namespaces[i]);
		if (!in_ns && term->has_ns_selector) {
			struct kv one;
			struct kvlist tmp;

			in_ns = label_selector_matches(&term->ns_selector,
						       ns_labels(t, ns, &one, &tmp));
		}
	}
	return in_ns && label_selector_matches(&term->selector, labels);
}

/* Does the spread constraint of 'owner' count a pod of 'ns' with 'labels'?
 * Only non-terminating pods of the owner's namespace, and an empty
 * selector counts none (the scheduler's rule). */
static bool spread_counts(const struct spread_constraint *sc, const char *owner_ns,
			  const char *ns, const struct kvlist *labels, bool terminating)
{
	if (terminating || sc->selector_null || sc->selector.n == 0 || !str_eq(ns, owner_ns))
		return false;
	return label_selector_matches(&sc->selector, labels);
}

static bool counter_matches(const struct topo *t, const struct counter *c, const struct pclass *k)
{
	size_t i;

	switch (c->kind) {
	case C_AFFINITY:
		for (i = 0; i < c->n_terms; i++)
			if (!term_matches(t, &c->terms[i], k->ns, k->labels))
				return false;
		return c->n_terms > 0;
	case C_ANTI:
		return term_matches(t, &c->terms[0], k->ns, k->labels);
	case C_SPREAD:
		return spread_counts(c->sc, c->pod->ns, k->ns, k->labels, k->terminating);
	case C_OWNERS:
		return false; /* counts owners, added by topo_add_pod() */
	}
	return false;
}

/* ---- classes ---- */

static uint64_t class_hash(const char *ns, const struct kvlist *labels, bool terminating)
{
	uint64_t h = hash_str(terminating ? 7 : 3, ns), acc = 0;
	size_t i;

	/* labels in any order */
	for (i = 0; labels && i < labels->n; i++)
		acc += hash_str(hash_str(1, labels->items[i].key), labels->items[i].value);
	return mix64(h ^ acc);
}

static bool labels_equal(const struct kvlist *a, const struct kvlist *b)
{
	size_t i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++) {
		const char *v = kvlist_get(b, a->items[i].key);

		if (!v || !str_eq(v, a->items[i].value))
			return false;
	}
	return true;
}

static int counter_add_class(struct topo *t, uint32_t ci, uint32_t ki);

/* The class of a pod, created when new; NONE when out of memory. */
static uint32_t class_of(struct topo *t, const struct pod *p)
{
	bool term = (p->flags & POD_TERMINATING) != 0;
	uint64_t h = class_hash(p->ns, &p->labels, term);
	uint32_t *first = map_find(&t->class_ix, h), id;
	struct pclass *k;
	size_t i;

	for (id = first ? *first : NONE; id != NONE; id = t->class_next[id]) {
		k = &t->classes[id];
		if (k->terminating == term && str_eq(k->ns, p->ns) && labels_equal(k->labels, &p->labels))
			return id;
	}
	if (grow_chained((void **)&t->classes, sizeof(*t->classes), &t->class_next, t->n_classes,
			 &t->cap_classes, 64) < 0)
		goto oom;
	first = map_get(&t->class_ix, h, NONE);
	if (!first)
		goto oom;
	id = (uint32_t)t->n_classes++;
	k = &t->classes[id];
	memset(k, 0, sizeof(*k));
	k->ns = p->ns;
	k->labels = &p->labels;
	k->terminating = term;
	k->hash = h;
	t->class_next[id] = *first;
	*first = id;
	for (i = 0; i < t->n_counters; i++)
		if (counter_matches(t, &t->counters[i], k) && counter_add_class(t, id, (uint32_t)i) < 0)
			goto oom;
	return id;
oom:
	t->oom = true;
	return NONE;
}

/* ---- counters ---- */

static struct dom *dom_at(struct topo *t, struct counter *c, uint32_t key_ix, uint32_t value,
			  bool create)
{
	uint64_t key = (uint64_t)key_ix << 32 | value;
	uint32_t *ix = create ? map_get(&c->map, key, NONE) : map_find(&c->map, key);

	if (!ix) {
		if (create)
			t->oom = true;
		return NULL;
	}
	if (*ix == NONE) {
		if (c->n_doms == c->cap_doms) {
			size_t cap = c->cap_doms ? c->cap_doms * 2 : 8;
			struct dom *nd = realloc(c->doms, cap * sizeof(*nd));

			if (!nd) {
				t->oom = true;
				return NULL;
			}
			c->doms = nd;
			c->cap_doms = cap;
		}
		*ix = (uint32_t)c->n_doms;
		c->doms[c->n_doms++] = (struct dom){0, 0, 0, value};
	}
	return &c->doms[*ix];
}

/*
 * Does domain 'd' of spread counter 'c' count (for the least count and
 * minDomains)? A domain with a node or planned node does; while a packing
 * plans, so does a template's: the next node of its group (Karpenter's
 * count, under which a hostname spread always has an empty domain to
 * come). Not for a hostname spread with minDomains: the operator asked
 * for that many nodes, and once they exist the scheduler measures the
 * skew against the nodes there are, so the packing does too (the Cluster
 * Autoscaler's estimator fills them alike).
 */
static bool dom_exists(const struct topo *t, const struct counter *c, const struct dom *d)
{
	return d->n_sites > 0 || (t->planning && d->n_tmpl > 0 && !c->no_next);
}

/* A spread counter's domain count changes by 'delta': the least count
 * follows without a scan unless the last domain at it moved up. */
static void spread_count(struct topo *t, struct counter *c, struct dom *d, int32_t delta)
{
	int32_t old = d->count;

	d->count += delta;
	if (!c->min_ok || c->min_epoch != t->epoch || !dom_exists(t, c, d))
		return;
	if (delta > 0) {
		if (old == c->min && --c->at_min == 0)
			c->min_ok = false;
	} else if (d->count < c->min) {
		c->min = d->count;
		c->at_min = 1;
	} else if (d->count == c->min) {
		c->at_min++;
	}
}

/* The least count over the domains that exist, and how many exist. */
static int32_t spread_min(struct topo *t, struct counter *c, size_t *n_exist)
{
	size_t i;

	if (!c->min_ok || c->min_epoch != t->epoch) {
		c->min = INT32_MAX;
		c->at_min = 0;
		c->n_exist = 0;
		for (i = 0; i < c->n_doms; i++) {
			const struct dom *d = &c->doms[i];

			if (!dom_exists(t, c, d))
				continue;
			c->n_exist++;
			if (d->count < c->min) {
				c->min = d->count;
				c->at_min = 1;
			} else if (d->count == c->min) {
				c->at_min++;
			}
		}
		if (c->n_exist == 0)
			c->min = 0;
		c->min_ok = c->n_exist > 0;
		c->min_epoch = t->epoch;
	}
	*n_exist = c->n_exist;
	return c->min;
}

/* Does spread counter 'c' count site 'si'? A planned node answers as its
 * template twin does, unless the counter is per site. */
static bool eligible_at(const struct topo *t, const struct counter *c, size_t si)
{
	if (t->sites[si].twin >= 0 && !c->per_site)
		si = (size_t)t->sites[si].twin;
	return si < c->cap_eligible && c->eligible[si];
}

/* Count 'delta' pods of class members at site 'si' in counter 'c'. */
static void counter_count(struct topo *t, struct counter *c, size_t si, int32_t delta)
{
	struct site *st = &t->sites[si];
	size_t i, n = c->kind == C_AFFINITY ? c->n_terms : 1;

	if (c->kind == C_SPREAD) {
		uint32_t v;
		struct dom *d;

		if (!eligible_at(t, c, si))
			return;
		v = site_value(t, st, c->keys[0]);
		if (v == NONE || !(d = dom_at(t, c, 0, v, true)))
			return;
		spread_count(t, c, d, delta);
		return;
	}
	for (i = 0; i < n; i++) {
		uint32_t v = site_value(t, st, c->keys[i]);
		struct dom *d;
		int32_t old;

		if (v == NONE || !(d = dom_at(t, c, (uint32_t)i, v, true)))
			continue;
		old = d->count;
		d->count += delta;
		if (old == 0 && d->count != 0)
			c->n_nonzero++;
		else if (old != 0 && d->count == 0)
			c->n_nonzero--;
	}
}

/* A class's pods at one site: the count, and where the site is in the
 * class's list of sites (so it leaves the list in O(1)). */
struct cs_entry {
	int32_t count;
	uint32_t pos;
};

/* Owner group 'g' gains (delta 1) or loses (-1) member 'p' at site 'si';
 * its counts follow once it is no longer lazy. */
static int owner_member(struct topo *t, struct counter *g, const struct pod *p, size_t si,
			int32_t delta);

static int count_cs(struct topo *t, uint32_t ci, size_t si, int32_t delta);

/* Counts the pods class 'ci' deferred (it gets its first counter). */
static int materialize(struct topo *t, uint32_t ci)
{
	struct pclass *k = &t->classes[ci];
	size_t i;

	for (i = 0; i < k->dsite.n; i++) {
		t->plans[k->dplan.v[i]].dpos = NONE;
		if (count_cs(t, ci, k->dsite.v[i], 1) < 0)
			return -1;
	}
	k->dsite.n = k->dplan.n = 0;
	return 0;
}

static int32_t cs_count(const struct topo *t, uint32_t ci, size_t si)
{
	const uint32_t *v = map_find(&t->cs, (uint64_t)ci << 32 | si);

	return v ? t->cs_entries[*v].count : 0;
}

/* Class 'ci' is counted by counter 'ki' from now on: its pods so far too. */
static int counter_add_class(struct topo *t, uint32_t ci, uint32_t ki)
{
	struct pclass *k = &t->classes[ci];
	size_t i;

	if (materialize(t, ci) < 0 || vec_push(&k->counters, ki) < 0)
		return -1;
	for (i = 0; i < k->sites.n; i++)
		counter_count(t, &t->counters[ki], k->sites.v[i], cs_count(t, ci, k->sites.v[i]));
	return 0;
}

/* Is site 'si' one the spread counter counts: it has every spread key of
 * the pod, and passes its node affinity and taints as the policies say? */
static bool spread_eligible(struct topo *t, const struct counter *c, size_t si)
{
	const struct site *st = &t->sites[si];
	const struct pod *p = c->pod;
	size_t i;

	if (st->disabled)
		return false;
	for (i = 0; i < p->n_spread; i++)
		if (!kvlist_get(st->labels, p->spread[i].topology_key) &&
		    !(st->kind == TOPO_TEMPLATE && strcmp(p->spread[i].topology_key, HOSTNAME_KEY) == 0))
			return false;
	if (c->sc->honor_affinity &&
	    !pod_node_selection_matches(p, st->kind == TOPO_TEMPLATE ? NULL : st->name, st->labels))
		return false;
	if (c->sc->honor_taints && !pod_tolerates_all(p, st->taints, st->n_taints))
		return false;
	return true;
}

/* Registers site 'si' with spread counter 'c' (delta 1) or drops it (-1). */
static void spread_site(struct topo *t, struct counter *c, size_t si, int delta)
{
	struct site *st = &t->sites[si];
	struct dom *d;
	uint32_t v;
	bool existed;

	if (st->twin >= 0 && !c->per_site)
		return; /* its twin's domain stands for it */
	if (delta > 0) {
		if (si >= c->cap_eligible) {
			size_t cap = c->cap_eligible ? c->cap_eligible : 64;
			uint8_t *ne;

			while (cap <= si)
				cap *= 2;
			ne = realloc(c->eligible, cap);
			if (!ne) {
				t->oom = true;
				return;
			}
			memset(ne + c->cap_eligible, 0, cap - c->cap_eligible);
			c->eligible = ne;
			c->cap_eligible = cap;
		}
		c->eligible[si] = spread_eligible(t, c, si);
	}
	if (si >= c->cap_eligible || !c->eligible[si])
		return;
	v = site_value(t, st, c->keys[0]);
	if (v == NONE || !(d = dom_at(t, c, 0, v, true)))
		return;
	existed = dom_exists(t, c, d);
	if (st->kind == TOPO_TEMPLATE)
		d->n_tmpl += delta;
	else
		d->n_sites += delta;
	if (delta < 0) {
		c->eligible[si] = 0;
		if (existed && !dom_exists(t, c, d))
			c->min_ok = false;
	} else if (!existed && dom_exists(t, c, d) && c->min_ok && c->min_epoch == t->epoch) {
		c->n_exist++;
		if (d->count < c->min) {
			c->min = d->count;
			c->at_min = 1;
		} else if (d->count == c->min) {
			c->at_min++;
		}
	}
}

static uint64_t term_hash(uint64_t h, const struct term_ref *r)
{
	const struct pod_term *x = r->term;

	h = mix64(h ^ (x->fingerprint ? x->fingerprint : pod_term_fingerprint(x)));
	if (x->n_namespaces == 0 && !x->has_ns_selector)
		h = hash_str(h, r->owner_ns);
	return h;
}

static bool terms_equal(const struct term_ref *a, const struct term_ref *b)
{
	const struct pod_term *x = a->term, *y = b->term;
	size_t i;

	if (x->selector_null != y->selector_null || x->has_ns_selector != y->has_ns_selector ||
	    x->n_namespaces != y->n_namespaces || !str_eq(x->topology_key, y->topology_key) ||
	    !selector_reqs_same(x->selector.reqs, x->selector.n, y->selector.reqs, y->selector.n) ||
	    !selector_reqs_same(x->ns_selector.reqs, x->ns_selector.n, y->ns_selector.reqs,
				y->ns_selector.n))
		return false;
	for (i = 0; i < x->n_namespaces; i++)
		if (!str_eq(x->namespaces[i], y->namespaces[i]))
			return false;
	if (x->n_namespaces == 0 && !x->has_ns_selector && !str_eq(a->owner_ns, b->owner_ns))
		return false;
	return true;
}

/* Spread counters of two pods count the same when the constraint, the
 * namespace and whatever decides which sites are eligible are the same. */
static bool spread_equal(const struct counter *c, const struct pod *p,
			 const struct spread_constraint *sc)
{
	const struct pod *q = c->pod;
	const struct spread_constraint *x = c->sc;
	size_t i;

	if (!str_eq(q->ns, p->ns) || x->max_skew != sc->max_skew ||
	    x->min_domains != sc->min_domains || x->selector_null != sc->selector_null ||
	    x->honor_affinity != sc->honor_affinity || x->honor_taints != sc->honor_taints ||
	    !str_eq(x->topology_key, sc->topology_key) ||
	    !selector_reqs_same(x->selector.reqs, x->selector.n, sc->selector.reqs, sc->selector.n) ||
	    q->n_spread != p->n_spread)
		return false;
	for (i = 0; i < p->n_spread; i++)
		if (!str_eq(q->spread[i].topology_key, p->spread[i].topology_key))
			return false;
	if (sc->honor_affinity && (!kvlist_same(&q->node_selector, &p->node_selector) ||
				   !node_affinity_same(&q->affinity, &p->affinity)))
		return false;
	if (sc->honor_taints &&
	    !tolerations_same(q->tolerations, q->n_tolerations, p->tolerations, p->n_tolerations))
		return false;
	return true;
}

static uint64_t spread_hash(const struct pod *p, const struct spread_constraint *sc)
{
	uint64_t h = hash_str(hash_str(11, p->ns), sc->topology_key);
	size_t i;

	for (i = 0; i < sc->selector.n; i++)
		h = hash_str(h, sc->selector.reqs[i].key);
	return mix64(h + (uint64_t)sc->max_skew * 31 + (uint64_t)p->node_selector.n * 7 +
		     p->affinity.n_terms);
}

static bool counter_equal(const struct counter *c, enum counter_kind kind, const struct pod *p,
			  const struct term_ref *terms, size_t n_terms,
			  const struct spread_constraint *sc)
{
	size_t i;

	if (c->kind != kind)
		return false;
	if (kind == C_SPREAD)
		return spread_equal(c, p, sc);
	if (c->n_terms != n_terms)
		return false;
	for (i = 0; i < n_terms; i++)
		if (!terms_equal(&c->terms[i], &terms[i]))
			return false;
	return true;
}

/* Does the pod's node selection read what tells one node of a template
 * from another: the hostname label or the node's name? */
static bool reads_node_identity(const struct pod *p)
{
	size_t i, j;

	if (kvlist_get(&p->node_selector, HOSTNAME_KEY))
		return true;
	for (i = 0; i < p->affinity.n_terms; i++) {
		const struct node_selector_term *term = &p->affinity.terms[i];

		if (term->n_fields)
			return true;
		for (j = 0; j < term->n_exprs; j++)
			if (term->exprs[j].key && strcmp(term->exprs[j].key, HOSTNAME_KEY) == 0)
				return true;
	}
	return false;
}

/*
 * The counter of this kind for these terms (or spread constraint of 'p'),
 * created and filled when new. 'terms' is copied. NONE when out of memory.
 */
static int classify_rest(struct topo *t);

static uint32_t counter_of(struct topo *t, enum counter_kind kind, const struct pod *p,
			   const struct term_ref *terms, size_t n_terms,
			   const struct spread_constraint *sc)
{
	uint64_t h = kind == C_SPREAD ? spread_hash(p, sc) : (uint64_t)kind * 0x9e37;
	uint32_t *first, id;
	struct counter *c;
	size_t i;

	/* a constraint that counts pods: every pod must be counted first */
	if (kind != C_OWNERS && classify_rest(t) < 0)
		goto oom;
	if (kind != C_SPREAD)
		for (i = 0; i < n_terms; i++)
			h = term_hash(h, &terms[i]);
	h = mix64(h + kind);
	first = map_find(&t->counter_ix, h);
	for (id = first ? *first : NONE; id != NONE; id = t->counter_next[id])
		if (counter_equal(&t->counters[id], kind, p, terms, n_terms, sc))
			return id;
	if (grow_chained((void **)&t->counters, sizeof(*t->counters), &t->counter_next,
			 t->n_counters, &t->cap_counters, 32) < 0)
		goto oom;
	first = map_get(&t->counter_ix, h, NONE);
	if (!first)
		goto oom;
	id = (uint32_t)t->n_counters;
	c = &t->counters[id];
	memset(c, 0, sizeof(*c));
	c->kind = kind;
	c->hash = h;
	c->pod = p;
	c->sc = sc;
	c->n_terms = kind == C_SPREAD ? 0 : n_terms;
	if (c->n_terms) {
		c->terms = malloc(n_terms * sizeof(*c->terms));
		c->keys = malloc(n_terms * sizeof(*c->keys));
		if (!c->terms || !c->keys)
			goto oom_c;
		memcpy(c->terms, terms, n_terms * sizeof(*terms));
		for (i = 0; i < n_terms; i++)
			if ((c->keys[i] = key_id(t, terms[i].term->topology_key)) == NONE)
				goto oom_c;
	} else {
		c->keys = malloc(sizeof(*c->keys));
		if (!c->keys || (c->keys[0] = key_id(t, sc->topology_key)) == NONE)
			goto oom_c;
	}
	t->n_counters++;
	t->counter_next[id] = *first;
	*first = id;
	if (kind == C_SPREAD) {
		c->per_site = strcmp(sc->topology_key, HOSTNAME_KEY) == 0 ||
			      (sc->honor_affinity && reads_node_identity(p));
		c->no_next = strcmp(sc->topology_key, HOSTNAME_KEY) == 0 && sc->min_domains > 1;
		if (vec_push(&t->spread_counters, id) < 0 ||
		    (c->per_site && vec_push(&t->per_site_spread, id) < 0))
			goto oom;
		for (i = 0; i < t->n_sites; i++)
			if (c->per_site || t->sites[i].twin < 0)
				spread_site(t, c, i, 1);
	}
	if (kind == C_OWNERS) {
		c->lazy = true;
		if (vec_push(&t->owner_groups, id) < 0)
			goto oom;
	} else {
		for (i = 0; i < t->n_classes; i++)
			if (counter_matches(t, c, &t->classes[i]) &&
			    counter_add_class(t, (uint32_t)i, id) < 0)
				goto oom;
	}
	return t->oom ? NONE : id;
oom_c:
	free(c->terms);
	free(c->keys);
oom:
	t->oom = true;
	return NONE;
}

/* ---- building ---- */

struct topo *topo_new_empty(const struct namespace_obj *ns, size_t n_ns)
{
	struct topo *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->ns = ns;
	t->n_ns = n_ns;
	return t;
}

void topo_free(struct topo *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->n_sites; i++) {
		free(t->sites[i].vals);
		free(t->sites[i].pods);
	}
	for (i = 0; i < t->n_classes; i++) {
		free(t->classes[i].sites.v);
		free(t->classes[i].counters.v);
		free(t->classes[i].anti.v);
		free(t->classes[i].dsite.v);
		free(t->classes[i].dplan.v);
	}
	for (i = 0; i < t->n_counters; i++) {
		struct counter *c = &t->counters[i];

		free(c->terms);
		free(c->keys);
		free(c->members);
		free(c->member_site);
		map_free(&c->map);
		free(c->doms);
		free(c->eligible);
	}
	for (i = 0; i < t->n_plans; i++) {
		free(t->plans[i].owners);
		free(t->plans[i].anti);
		free(t->plans[i].spread);
		free(t->plans[i].self_spread);
	}
	free(t->sites);
	free(t->keys);
	for (i = 0; i < t->n_values; i++)
		free((char *)t->values[i]);
	free(t->values);
	free(t->value_next);
	map_free(&t->value_ix);
	free(t->classes);
	free(t->class_next);
	map_free(&t->class_ix);
	map_free(&t->cs);
	free(t->cs_entries);
	free(t->counters);
	free(t->counter_next);
	map_free(&t->counter_ix);
	free(t->spread_counters.v);
	free(t->per_site_spread.v);
	free(t->owner_groups.v);
	map_free(&t->plan_ix);
	free(t->base_plan);
	free(t->plans);
	free(t->ops);
	free(t);
}

static int journal(struct topo *t, enum op_kind kind, size_t site, const struct pod *p)
{
	if (t->replaying)
		return 0;
	if (t->n_ops == t->cap_ops) {
		size_t cap = t->cap_ops ? t->cap_ops * 2 : 64;
		struct op *no = realloc(t->ops, cap * sizeof(*no));

		if (!no)
			return -1;
		t->ops = no;
		t->cap_ops = cap;
	}
	t->ops[t->n_ops++] = (struct op){kind, (uint32_t)site, p};
	return 0;
}

static long add_site(struct topo *t, enum topo_site_kind kind, const char *name,
		     const struct kvlist *labels, const struct taint *taints, size_t n_taints,
		     long twin)
{
	static const struct kvlist none;
	const struct u32vec *sc = twin >= 0 ? &t->per_site_spread : &t->spread_counters;
	struct site *st;
	size_t i;

	if (t->n_sites >= NONE - 1)
		return -1;
	if (t->n_sites == t->cap_sites) {
		size_t cap = t->cap_sites ? t->cap_sites * 2 : 64;
		struct site *ns = realloc(t->sites, cap * sizeof(*ns));

		if (!ns)
			return -1;
		t->sites = ns;
		t->cap_sites = cap;
	}
	if (journal(t, OP_ADD_SITE, t->n_sites, NULL) < 0)
		return -1;
	st = &t->sites[t->n_sites];
	memset(st, 0, sizeof(*st));
	st->kind = kind;
	st->name = name ? name : "";
	st->labels = labels ? labels : &none;
	st->taints = taints;
	st->n_taints = n_taints;
	st->twin = twin;
	t->n_sites++;
	for (i = 0; i < sc->n; i++)
		spread_site(t, &t->counters[sc->v[i]], t->n_sites - 1, 1);
	return t->oom ? -1 : (long)(t->n_sites - 1);
}

long topo_add_site(struct topo *t, enum topo_site_kind kind, const char *name,
		   const struct kvlist *labels, const struct taint *taints, size_t n_taints)
{
	return add_site(t, kind, name, labels, taints, n_taints, -1);
}

long topo_add_planned(struct topo *t, const char *name, const struct kvlist *labels,
		      const struct taint *taints, size_t n_taints, long twin)
{
	if (twin >= (long)t->n_sites || (twin >= 0 && t->sites[twin].kind != TOPO_TEMPLATE))
		return -1;
	return add_site(t, TOPO_PLANNED, name, labels, taints, n_taints, twin);
}

void topo_hold_ports(struct topo *t, size_t site, const struct pod *const *pods, size_t n)
{
	struct site *st;
	size_t i;

	assert(site < t->n_sites);
	st = &t->sites[site];
	assert(st->kind == TOPO_PLANNED && !st->n_held);
	st->held = pods;
	st->n_held = n;
	st->n_held_ports = 0;
	for (i = 0; i < n; i++)
		st->n_held_ports += pods[i]->n_host_ports;
}

size_t topo_sites(const struct topo *t)
{
	return t->n_sites;
}

static struct pplan *pinfo_of(struct topo *t, const struct pod *p);

/* Class 'ci' has 'delta' more pods at site 'si' (its count there, and its
 * list of sites). */
static int count_cs(struct topo *t, uint32_t ci, size_t si, int32_t delta)
{
	struct pclass *k = &t->classes[ci];
	uint64_t key = (uint64_t)ci << 32 | si;
	uint32_t *ix = map_get(&t->cs, key, NONE);
	struct cs_entry *e;

	if (!ix)
		return -1;
	if (*ix == NONE) {
		if (t->n_cs == t->cap_cs) {
			size_t cap = t->cap_cs ? t->cap_cs * 2 : 256;
			struct cs_entry *ne = realloc(t->cs_entries, cap * sizeof(*ne));

			if (!ne)
				return -1;
			t->cs_entries = ne;
			t->cap_cs = cap;
		}
		*ix = (uint32_t)t->n_cs;
		t->cs_entries[t->n_cs++] = (struct cs_entry){0, NONE};
	}
	e = &t->cs_entries[*ix];
	if (delta > 0 && e->count == 0) {
		e->pos = (uint32_t)k->sites.n;
		if (vec_push(&k->sites, (uint32_t)si) < 0)
			return -1;
	}
	e->count += delta;
	if (e->count == 0 && e->pos != NONE) {
		/* the last site of the list takes its place */
		uint32_t last = k->sites.v[--k->sites.n];

		if (e->pos < k->sites.n) {
			k->sites.v[e->pos] = last;
			t->cs_entries[*map_find(&t->cs, (uint64_t)ci << 32 | last)].pos = e->pos;
		}
		e->pos = NONE;
	}
	return 0;
}

static int owner_member(struct topo *t, struct counter *g, const struct pod *p, size_t si,
			int32_t delta)
{
	size_t i;

	if (delta > 0) {
		if (g->n_members == g->cap_members) {
			size_t cap = g->cap_members ? g->cap_members * 2 : 8;
			const struct pod **np = realloc(g->members, cap * sizeof(*np));
			uint32_t *ns;

			if (np)
				g->members = np;
			ns = np ? realloc(g->member_site, cap * sizeof(*ns)) : NULL;
			if (!ns)
				return -1;
			g->member_site = ns;
			g->cap_members = cap;
		}
		g->members[g->n_members] = p;
		g->member_site[g->n_members++] = (uint32_t)si;
	} else {
		for (i = g->n_members; i-- > 0;)
			if (g->members[i] == p && g->member_site[i] == si)
				break;
		if (i == (size_t)-1)
			return -1;
		g->members[i] = g->members[--g->n_members];
		g->member_site[i] = g->member_site[g->n_members];
	}
	if (!g->lazy)
		counter_count(t, g, si, delta);
	return 0;
}

/* Fills a lazy owner group's counts from its members. */
static void owners_materialize(struct topo *t, struct counter *g)
{
	size_t i;

	if (!g->lazy)
		return;
	g->lazy = false;
	for (i = 0; i < g->n_members; i++)
		counter_count(t, g, g->member_site[i], 1);
}

/* Counts (delta 1) or uncounts (-1) pod 'p' (of plan 'pl') at site 'si'. */
static int count_pod(struct topo *t, const struct pod *p, struct pplan *pl, size_t si,
		     int32_t delta)
{
	uint32_t ci = pl->cls;
	struct pclass *k = &t->classes[ci];
	size_t i;

	if (delta > 0 && k->counters.n == 0 && !p->n_anti_terms && !p->n_host_ports) {
		pl->dpos = (uint32_t)k->dsite.n;
		if (vec_push(&k->dsite, (uint32_t)si) < 0 ||
		    vec_push(&k->dplan, (uint32_t)(pl - t->plans)) < 0)
			return -1;
		return 0;
	}
	if (delta < 0 && pl->dpos != NONE) {
		uint32_t at = pl->dpos, last = (uint32_t)k->dsite.n - 1;

		k->dsite.v[at] = k->dsite.v[last];
		k->dplan.v[at] = k->dplan.v[last];
		t->plans[k->dplan.v[at]].dpos = at;
		k->dsite.n = k->dplan.n = last;
		pl->dpos = NONE;
		return 0;
	}
	if (count_cs(t, ci, si, delta) < 0)
		return -1;
	for (i = 0; i < k->counters.n; i++)
		counter_count(t, &t->counters[k->counters.v[i]], si, delta);
	for (i = 0; i < p->n_anti_terms && !pl->owners_counted; i++)
		if (owner_member(t, &t->counters[pl->owners[i]], p, si, delta) < 0)
			return -1;
	pl->owners_counted = false;
	if (p->n_host_ports) {
		t->sites[si].n_ports += delta > 0 ? p->n_host_ports : (size_t)-p->n_host_ports;
		t->n_with_ports += delta > 0 ? 1 : (size_t)-1;
	}
	return t->oom ? -1 : 0;
}

int topo_add_pod(struct topo *t, size_t site, const struct pod *p)
{
	struct site *st;
	struct pplan *pl;

	assert(site < t->n_sites);
	st = &t->sites[site];
	if (st->kind == TOPO_TEMPLATE)
		return -1;
	if (st->n_pods == st->cap_pods) {
		size_t cap = st->cap_pods ? st->cap_pods * 2 : 8;
		const struct pod **np = realloc(st->pods, cap * sizeof(*np));

		if (!np)
			return -1;
		st->pods = np;
		st->cap_pods = cap;
	}
	pl = pinfo_of(t, p);
	if (!pl || journal(t, OP_ADD_POD, site, p) < 0)
		return -1;
	st->pods[st->n_pods++] = p;
	return count_pod(t, p, pl, site, 1);
}

int topo_remove_pod(struct topo *t, size_t site, const struct pod *p)
{
	struct site *st;
	struct pplan *pl;
	size_t i;

	if (site >= t->n_sites || classify_rest(t) < 0)
		return -1;
	st = &t->sites[site];
	for (i = 0; i < st->n_pods; i++)
		if (st->pods[i] == p)
			break;
	if (i == st->n_pods)
		return -1;
	pl = pinfo_of(t, p);
	if (!pl || journal(t, OP_REMOVE_POD, site, p) < 0)
		return -1;
	st->pods[i] = st->pods[--st->n_pods];
	return count_pod(t, p, pl, site, -1);
}

/*
 * Counts the snapshot's bound pods topo_new() left out, as part of the
 * base state (no journal, so no rollback takes them back out). Called
 * before the first counter that counts pods and the first removal.
 */
static int classify_rest(struct topo *t)
{
	const struct snapshot *s = t->snap;
	bool replaying = t->replaying;
	size_t i;

	if (!t->unclassified)
		return 0;
	t->unclassified = false;
	t->replaying = true;
	/* each node's list of pods, sized once */
	for (i = 0; i < s->n_nodes && i < t->n_sites; i++) {
		struct site *st = &t->sites[i];
		size_t want = st->n_pods + s->nodes[i].n_pods;

		if (want > st->cap_pods) {
			const struct pod **np = realloc(st->pods, want * sizeof(*np));

			if (!np)
				goto oom;
			st->pods = np;
			st->cap_pods = want;
		}
	}
	for (i = 0; i < s->n_pods; i++) {
		const struct pod *p = &s->pods[i];

		struct pplan *pl;

		if (p->node < 0 || (size_t)p->node >= t->n_sites || pod_finished(p) ||
		    p->n_host_ports)
			continue;
		/* an anti-affinity pod is a member of its owner groups already */
		if (!(pl = pinfo_of(t, p)))
			goto oom;
		pl->owners_counted = p->n_anti_terms > 0;
		if (topo_add_pod(t, (size_t)p->node, p) < 0)
			goto oom;
	}
	t->replaying = replaying;
	return 0;
oom:
	t->replaying = replaying;
	t->oom = true;
	return -1;
}

struct topo *topo_new(const struct snapshot *s)
{
	struct topo *t = topo_new_empty(s->namespaces, s->n_namespaces);
	size_t i;

	if (!t)
		return NULL;
	/* sized once: the snapshot says how many of each there are */
	t->base = s->pods;
	t->n_base = s->n_pods;
	t->base_plan = malloc((s->n_pods ? s->n_pods : 1) * sizeof(*t->base_plan));
	t->cap_plans = s->n_pods ? s->n_pods : 1;
	t->plans = malloc(t->cap_plans * sizeof(*t->plans));
	t->cap_sites = s->n_nodes + s->n_groups + 16;
	t->sites = malloc(t->cap_sites * sizeof(*t->sites));
	if (!t->base_plan || !t->plans || !t->sites)
		goto oom;
	memset(t->base_plan, 0xff, (s->n_pods ? s->n_pods : 1) * sizeof(*t->base_plan));
	t->replaying = true; /* the snapshot is the base state: no journal */
	t->snap = s;
	t->unclassified = true;
	for (i = 0; i < s->n_nodes; i++) {
		const struct node *n = &s->nodes[i];

		if (topo_add_site(t, TOPO_NODE, n->name, &n->labels, n->taints, n->n_taints) < 0)
			goto oom;
	}
	/* the pods whose relations reach others (s->reaching) now — with host
	 * ports in full, with anti-affinity as members of their terms' owner
	 * groups — the rest when a constraint first counts pods
	 * (classify_rest()) */
	for (i = 0; i < s->n_reaching; i++) {
		const struct pod *p = &s->pods[s->reaching[i]];
		size_t a;

		if (p->node < 0 || (size_t)p->node >= t->n_sites)
			continue;
		if (p->n_host_ports) {
			if (topo_add_pod(t, (size_t)p->node, p) < 0)
				goto oom;
			continue;
		}
		for (a = 0; a < p->n_anti_terms; a++) {
			struct term_ref r = {&p->anti_terms[a], p->ns};
			uint32_t g = counter_of(t, C_OWNERS, p, &r, 1, NULL);

			if (g == NONE || owner_member(t, &t->counters[g], p, (size_t)p->node, 1) < 0)
				goto oom;
		}
	}
	t->replaying = false;
	t->n_ops = 0;
	return t;
oom:
	topo_free(t);
	return NULL;
}

int topo_disable_site(struct topo *t, size_t site)
{
	size_t i;

	assert(site < t->n_sites);
	if (t->sites[site].disabled)
		return 0;
	if (journal(t, OP_DISABLE_SITE, site, NULL) < 0)
		return -1;
	for (i = 0; i < t->spread_counters.n; i++)
		spread_site(t, &t->counters[t->spread_counters.v[i]], site, -1);
	t->sites[site].disabled = true;
	return t->oom ? -1 : 0;
}

void topo_set_planning(struct topo *t, bool on)
{
	if (t->planning != on) {
		t->planning = on;
		t->epoch++;
	}
}

size_t topo_mark(const struct topo *t)
{
	return t->n_ops;
}

void topo_commit(struct topo *t)
{
	t->n_ops = 0;
}

int topo_rollback(struct topo *t, size_t mark)
{
	int rc = 0;

	t->replaying = true;
	while (t->n_ops > mark) {
		struct op *o = &t->ops[--t->n_ops];
		size_t i;

		switch (o->kind) {
		case OP_ADD_POD:
			if (topo_remove_pod(t, o->site, o->pod) < 0)
				rc = -1;
			break;
		case OP_REMOVE_POD:
			if (topo_add_pod(t, o->site, o->pod) < 0)
				rc = -1;
			break;
		case OP_DISABLE_SITE:
			t->sites[o->site].disabled = false;
			for (i = 0; i < t->spread_counters.n; i++)
				spread_site(t, &t->counters[t->spread_counters.v[i]], o->site, 1);
			break;
		case OP_ADD_SITE: {
			/* a planned node's twin answers for the other counters */
			const struct u32vec *sc = t->sites[o->site].twin >= 0 ?
						  &t->per_site_spread : &t->spread_counters;

			assert(o->site == t->n_sites - 1);
			for (i = 0; i < sc->n; i++)
				spread_site(t, &t->counters[sc->v[i]], o->site, -1);
			free(t->sites[o->site].vals);
			free(t->sites[o->site].pods);
			t->n_sites--;
			break;
		}
		}
	}
	t->replaying = false;
	return rc < 0 || t->oom ? -1 : 0;
}

const char *topo_refusal_key(const struct topo *t)
{
	return t->refusal_key;
}

/* ---- a pod's plan ---- */

/* The pod's plan with its class and owner groups (created when new). */
static struct pplan *pinfo_of(struct topo *t, const struct pod *p)
{
	bool in_base = t->base && p >= t->base && p < t->base + t->n_base;
	uint32_t *ix = in_base ? &t->base_plan[p - t->base] :
		       map_find(&t->plan_ix, (uint64_t)(uintptr_t)p);
	struct pplan *pl;
	size_t i;

	if (ix && *ix != NONE)
		return &t->plans[*ix];
	if (t->n_plans == t->cap_plans) {
		size_t cap = t->cap_plans ? t->cap_plans * 2 : 64;
		struct pplan *np = realloc(t->plans, cap * sizeof(*np));

		if (!np)
			goto oom;
		t->plans = np;
		t->cap_plans = cap;
	}
	pl = &t->plans[t->n_plans];
	memset(pl, 0, sizeof(*pl));
	pl->pod = p;
	pl->affinity = NONE;
	pl->dpos = NONE;
	if ((pl->cls = class_of(t, p)) == NONE)
		goto oom;
	if (p->n_anti_terms) {
		if (!(pl->owners = malloc(p->n_anti_terms * sizeof(*pl->owners))))
			goto oom;
		for (i = 0; i < p->n_anti_terms; i++) {
			struct term_ref r = {&p->anti_terms[i], p->ns};

			if ((pl->owners[i] = counter_of(t, C_OWNERS, p, &r, 1, NULL)) == NONE) {
				free(pl->owners);
				goto oom;
			}
		}
	}
	if (in_base)
		t->base_plan[p - t->base] = (uint32_t)t->n_plans;
	else if (!map_get(&t->plan_ix, (uint64_t)(uintptr_t)p, (uint32_t)t->n_plans)) {
		free(pl->owners);
		goto oom;
	}
	t->n_plans++;
	return pl;
oom:
	t->oom = true;
	return NULL;
}

/* The pod's plan with the counters of its own constraints. */
static struct pplan *plan_of(struct topo *t, const struct pod *p)
{
	struct pplan *pl = pinfo_of(t, p);
	struct term_ref *refs = NULL;
	size_t i;

	if (!pl || pl->checked)
		return pl;
	if (p->n_affinity_terms) {
		refs = malloc(p->n_affinity_terms * sizeof(*refs));
		if (!refs)
			return NULL;
		pl->self_all = true;
		for (i = 0; i < p->n_affinity_terms; i++) {
			refs[i] = (struct term_ref){&p->affinity_terms[i], p->ns};
			pl->self_all = pl->self_all && term_matches(t, &refs[i], p->ns, &p->labels);
		}
		pl->affinity = counter_of(t, C_AFFINITY, p, refs, p->n_affinity_terms, NULL);
		free(refs);
		if (pl->affinity == NONE)
			return NULL;
	}
	if (p->n_anti_terms) {
		pl->anti = malloc(p->n_anti_terms * sizeof(*pl->anti));
		if (!pl->anti)
			return NULL;
		for (i = 0; i < p->n_anti_terms; i++) {
			struct term_ref r = {&p->anti_terms[i], p->ns};

			if ((pl->anti[i] = counter_of(t, C_ANTI, p, &r, 1, NULL)) == NONE)
				goto fail;
		}
	}
	if (p->n_spread) {
		pl->spread = malloc(p->n_spread * sizeof(*pl->spread));
		pl->self_spread = malloc(p->n_spread * sizeof(*pl->self_spread));
		if (!pl->spread || !pl->self_spread)
			goto fail;
		for (i = 0; i < p->n_spread; i++) {
			const struct spread_constraint *sc = &p->spread[i];

			if ((pl->spread[i] = counter_of(t, C_SPREAD, p, NULL, 0, sc)) == NONE)
				goto fail;
			pl->self_spread[i] = !sc->selector_null &&
					     label_selector_matches(&sc->selector, &p->labels);
		}
	}
	pl->checked = true;
	return pl;
fail:
	free(pl->anti);
	free(pl->spread);
	free(pl->self_spread);
	pl->anti = NULL;
	pl->spread = NULL;
	pl->self_spread = NULL;
	t->oom = true;
	return NULL;
}

/* The owner groups whose term matches class 'ci', brought up to date. */
static const struct u32vec *anti_of_class(struct topo *t, uint32_t ci)
{
	struct pclass *k = &t->classes[ci];

	for (; k->anti_seen < t->owner_groups.n; k->anti_seen++) {
		uint32_t g = t->owner_groups.v[k->anti_seen];

		if (!term_matches(t, &t->counters[g].terms[0], k->ns, k->labels))
			continue;
		if (vec_push(&k->anti, g) < 0) {
			t->oom = true;
			return NULL;
		}
		owners_materialize(t, &t->counters[g]);
	}
	return &k->anti;
}

size_t topo_owner_groups(const struct topo *t)
{
	return t->owner_groups.n;
}

bool topo_relevant(struct topo *t, const struct pod *p)
{
	const struct pplan *pl;
	const struct u32vec *g;

	if (p->n_host_ports || p->n_affinity_terms || p->n_anti_terms || p->n_spread)
		return true;
	if (t->owner_groups.n == 0)
		return false;
	/* another pod's anti-affinity that matches it */
	if (t->oom || !(pl = pinfo_of(t, p)) || !(g = anti_of_class(t, pl->cls)))
		return true; /* topo_check() says why */
	return g->n > 0;
}

/* ---- checks ---- */

/* A counted pod of a class 'c' matches, on a site whose value of key 'k' is 'v'
 * (for a message; NULL when none is found). */
static const struct pod *find_match(struct topo *t, const struct counter *c, uint32_t k,
				    uint32_t v, const struct pod *self, size_t *at)
{
	size_t i, j;

	if (c->kind == C_OWNERS) {
		for (i = 0; i < c->n_members; i++) {
			if (c->members[i] == self ||
			    site_value(t, &t->sites[c->member_site[i]], k) != v)
				continue;
			*at = c->member_site[i];
			return c->members[i];
		}
		return NULL;
	}
	for (i = 0; i < t->n_sites; i++) {
		struct site *st = &t->sites[i];

		if (st->n_pods == 0 || site_value(t, st, k) != v)
			continue;
		for (j = 0; j < st->n_pods; j++) {
			const struct pod *q = st->pods[j];
			struct pclass tmp;

			if (q == self)
				continue;
			if (c->kind == C_OWNERS) {
				size_t a;

				for (a = 0; a < q->n_anti_terms; a++) {
					struct term_ref r = {&q->anti_terms[a], q->ns};

					if (terms_equal(&r, &c->terms[0]))
						break;
				}
				if (a == q->n_anti_terms)
					continue;
			} else {
				tmp.ns = q->ns;
				tmp.labels = &q->labels;
				tmp.terminating = (q->flags & POD_TERMINATING) != 0;
				if (!counter_matches(t, c, &tmp))
					continue;
			}
			*at = i;
			return q;
		}
	}
	return NULL;
}

static bool ports_conflict(const struct host_port *a, const struct host_port *b)
{
	if (a->port != b->port || a->protocol != b->protocol)
		return false;
	return strcmp(a->ip, "0.0.0.0") == 0 || strcmp(b->ip, "0.0.0.0") == 0 ||
	       strcmp(a->ip, b->ip) == 0;
}

static const char *proto_str(enum port_protocol p)
{
	return p == PORT_UDP ? "UDP" : p == PORT_SCTP ? "SCTP" : "TCP";
}

/* The count of domain (key index 'k', value 'v') in 'c'. */
static int32_t count_at(struct topo *t, struct counter *c, uint32_t k, uint32_t v)
{
	const struct dom *d = dom_at(t, c, k, v, false);

	return d ? d->count : 0;
}

/* Whether 'p' is counted on the node it is bound to. */
static bool counted_at_its_node(const struct topo *t, const struct pod *p)
{
	const struct site *st;
	size_t j;

	if (p->node < 0 || (size_t)p->node >= t->n_sites)
		return false;
	st = &t->sites[p->node];
	for (j = 0; j < st->n_pods; j++)
		if (st->pods[j] == p)
			return true;
	return false;
}

static enum sched_fit check(struct topo *t, const struct pod *p, struct pplan *pl,
			    const struct u32vec *groups, struct site *st, char *dp, size_t dl,
			    bool detail);

enum sched_fit topo_check(struct topo *t, const struct pod *p, size_t si, char *detail,
			  size_t detail_len)
{
	struct pplan *pl;
	const struct u32vec *groups;
	enum sched_fit f;
	bool self;

	t->refusal_key = NULL;
	if (detail && detail_len)
		detail[0] = '\0';
	assert(si < t->n_sites);
	if (!topo_relevant(t, p))
		return SCHED_FITS;
	if (t->oom || !(pl = plan_of(t, p)) || !(groups = anti_of_class(t, pl->cls)))
		goto oom;
	/* a pod bound where it is counted is judged as if it were not there,
	 * as the scheduler judges a pod it has not placed yet */
	self = counted_at_its_node(t, p);
	t->replaying = true;
	if (self && topo_remove_pod(t, (size_t)p->node, p) < 0) {
		t->replaying = false;
		goto oom;
	}
	t->replaying = false;
	if (self && !(groups = anti_of_class(t, pl->cls)))
		goto oom;
	f = check(t, p, pl, groups, &t->sites[si], detail, detail ? detail_len : 0, detail != NULL);
	t->replaying = true;
	if (self && topo_add_pod(t, (size_t)p->node, p) < 0)
		t->oom = true;
	t->replaying = false;
	if (t->oom)
		goto oom;
	return f;
oom:
	if (detail && detail_len)
		snprintf(detail, detail_len, "out of memory checking pod relations");
	return SCHED_NOT_MODELLED;
}

/* Does anti-affinity counter 'c' (the pod's own term, or an owner group)
 * count a pod in site 'st''s domain? Then the refusal is written: "anti-
 * affinity <with|of> ns/pod on node n (key=value)". */
static bool anti_refuses(struct topo *t, struct counter *c, struct site *st, const struct pod *p,
			 char **dp, size_t *dl, bool detail, const char *with_of)
{
	uint32_t v = site_value(t, st, c->keys[0]);
	const struct pod *q;
	size_t at = 0;

	if (v == NONE || count_at(t, c, 0, v) <= 0)
		return false;
	t->refusal_key = t->keys[c->keys[0]];
	if (detail && (q = find_match(t, c, c->keys[0], v, p, &at)))
		textf(dp, dl, "anti-affinity %s %s/%s on node %s (%s=%s)", with_of, q->ns, q->name,
		      t->sites[at].name, t->keys[c->keys[0]], t->values[v]);
	else
		textf(dp, dl, "anti-affinity %s a pod in %s=%s", with_of, t->keys[c->keys[0]],
		      t->values[v]);
	return true;
}

void topo_set_waiting(struct topo *t, const struct pod *base, const uint32_t *ix, size_t n)
{
	t->wait_base = base;
	t->wait_ix = ix;
	t->n_wait = base && ix ? n : 0;
	t->wait_epoch++;
}

/* A waiting pod (topo_set_waiting()) without required affinity of its own
 * that matches every term of affinity counter 'c', or NULL. One pass over
 * the waiting pods per counter and topo_set_waiting(). */
static const struct pod *waited_for(struct topo *t, struct counter *c)
{
	size_t i, j;

	if (!t->n_wait)
		return NULL;
	if (c->wait_epoch == t->wait_epoch)
		return c->waits_for;
	c->wait_epoch = t->wait_epoch;
	c->waits_for = NULL;
	for (i = 0; i < t->n_wait && !c->waits_for; i++) {
		const struct pod *w = &t->wait_base[t->wait_ix[i]];
		bool all = w->n_affinity_terms == 0;

		for (j = 0; all && j < c->n_terms; j++)
			all = term_matches(t, &c->terms[j], w->ns, &w->labels);
		if (all)
			c->waits_for = w;
	}
	return c->waits_for;
}

static enum sched_fit check(struct topo *t, const struct pod *p, struct pplan *pl,
			    const struct u32vec *groups, struct site *st, char *dp, size_t dl,
			    bool detail)
{
	size_t i, j;

	/* NodePorts: the pods counted there, then the DaemonSet pods a
	 * planned node will run */
	if (p->n_host_ports && (st->n_ports || st->n_held_ports)) {
		for (j = 0; j < st->n_pods + st->n_held; j++) {
			bool held = j >= st->n_pods;
			const struct pod *q = held ? st->held[j - st->n_pods] : st->pods[j];
			size_t a, b;

			for (a = 0; a < p->n_host_ports; a++)
				for (b = 0; b < q->n_host_ports; b++)
					if (ports_conflict(&p->host_ports[a], &q->host_ports[b])) {
						textf(&dp, &dl, "host port %s/%d in use by %s%s/%s on node %s",
						      proto_str(p->host_ports[a].protocol),
						      (int)p->host_ports[a].port, held ? "DaemonSet " : "",
						      q->ns, held ? q->controller_name : q->name, st->name);
						return SCHED_HOST_PORTS;
					}
		}
	}

	/* PodTopologySpread */
	for (i = 0; i < p->n_spread; i++) {
		const struct spread_constraint *sc = &p->spread[i];
		struct counter *c = &t->counters[pl->spread[i]];
		uint32_t v = site_value(t, st, c->keys[0]);
		int32_t count, min, skew;
		size_t n_exist;

		if (v == NONE) {
			t->refusal_key = sc->topology_key;
			textf(&dp, &dl, "topology spread: node has no label %s", sc->topology_key);
			return SCHED_TOPOLOGY_SPREAD;
		}
		count = count_at(t, c, 0, v);
		min = spread_min(t, c, &n_exist);
		if (n_exist < (size_t)sc->min_domains)
			min = 0;
		skew = count + (pl->self_spread[i] ? 1 : 0) - min;
		if (skew > sc->max_skew) {
			t->refusal_key = sc->topology_key;
			textf(&dp, &dl, "topology spread on %s: skew would be %d > %d (%s=%s has %d, the least domain %d)",
			      sc->topology_key, (int)skew, (int)sc->max_skew, sc->topology_key,
			      t->values[v], (int)count, (int)min);
			return SCHED_TOPOLOGY_SPREAD;
		}
	}

	/* InterPodAffinity: the pod's affinity terms */
	if (pl->affinity != NONE) {
		struct counter *c = &t->counters[pl->affinity];
		const struct pod *w;
		bool exist = true;

		for (i = 0; i < c->n_terms; i++) {
			uint32_t v = site_value(t, st, c->keys[i]);

			if (v == NONE) {
				t->refusal_key = t->keys[c->keys[i]];
				textf(&dp, &dl, "pod affinity: node has no label %s",
				      t->keys[c->keys[i]]);
				return SCHED_POD_AFFINITY;
			}
			if (count_at(t, c, (uint32_t)i, v) <= 0)
				exist = false;
		}
		/* the first of a series with affinity to itself may go anywhere,
		 * but not before a waiting pod that its terms match has landed */
		if (!exist && c->n_nonzero == 0 && pl->self_all && (w = waited_for(t, c))) {
			t->refusal_key = c->terms[0].term->topology_key;
			textf(&dp, &dl, "pod affinity: waits for pending pod %s/%s, which matches its required affinity terms",
			      w->ns, w->name);
			return SCHED_POD_AFFINITY;
		}
		if (!exist && !(c->n_nonzero == 0 && pl->self_all)) {
			const char *key = c->terms[0].term->topology_key;

			t->refusal_key = key;
			if (c->n_nonzero == 0)
				textf(&dp, &dl, "pod affinity: no pod matches its required affinity terms anywhere (topology %s)",
				      key);
			else
				textf(&dp, &dl, "pod affinity: no pod matching its required affinity terms in the node's %s domain",
				      key);
			return SCHED_POD_AFFINITY;
		}
	}

	/* InterPodAffinity: the pod's anti-affinity terms, then the counted
	 * pods' anti-affinity against this one */
	for (i = 0; i < p->n_anti_terms; i++)
		if (anti_refuses(t, &t->counters[pl->anti[i]], st, p, &dp, &dl, detail, "with"))
			return SCHED_POD_ANTI_AFFINITY;
	for (i = 0; i < groups->n; i++)
		if (anti_refuses(t, &t->counters[groups->v[i]], st, p, &dp, &dl, detail, "of"))
			return SCHED_EXISTING_ANTI_AFFINITY;
	return SCHED_FITS;
}
