/*
 * objects: the accessors of objects.h — labels, extended resources,
 * taints and tolerations, node affinity, selector matching, pod relations,
 * the enum <-> text tables, and RFC 3339 time. They read the structs and
 * nothing else: no snapshot, no arena, no I/O.
 */
#include "objects.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "textparse.h"

const char *kvlist_get(const struct kvlist *l, const char *key)
{
	size_t i;

	if (!l || !key)
		return NULL;
	for (i = 0; i < l->n; i++)
		if (strcmp(l->items[i].key, key) == 0)
			return l->items[i].value;
	return NULL;
}

static bool str_same(const char *a, const char *b)
{
	if (a == b)
		return true;
	return a && b && strcmp(a, b) == 0;
}

bool kvlist_same(const struct kvlist *a, const struct kvlist *b)
{
	size_t i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++)
		if (!str_same(a->items[i].key, b->items[i].key) ||
		    !str_same(a->items[i].value, b->items[i].value))
			return false;
	return true;
}

bool selector_reqs_same(const struct selector_req *a, size_t na, const struct selector_req *b,
			size_t nb)
{
	size_t i, j;

	if (na != nb)
		return false;
	for (i = 0; i < na; i++) {
		if (a[i].op != b[i].op || a[i].n_values != b[i].n_values || !str_same(a[i].key, b[i].key))
			return false;
		for (j = 0; j < a[i].n_values; j++)
			if (!str_same(a[i].values[j], b[i].values[j]))
				return false;
	}
	return true;
}

bool node_affinity_same(const struct node_affinity *a, const struct node_affinity *b)
{
	size_t i;

	if (a->n_terms != b->n_terms)
		return false;
	for (i = 0; i < a->n_terms; i++) {
		const struct node_selector_term *x = &a->terms[i], *y = &b->terms[i];

		if (!selector_reqs_same(x->exprs, x->n_exprs, y->exprs, y->n_exprs) ||
		    !selector_reqs_same(x->fields, x->n_fields, y->fields, y->n_fields))
			return false;
	}
	return true;
}

bool tolerations_same(const struct toleration *a, size_t na, const struct toleration *b,
		      size_t nb)
{
	size_t i;

	if (na != nb)
		return false;
	for (i = 0; i < na; i++)
		if (a[i].op != b[i].op || a[i].effect != b[i].effect || !str_same(a[i].key, b[i].key) ||
		    !str_same(a[i].value, b[i].value))
			return false;
	return true;
}

static bool terms_same(const struct pod_term *a, size_t na, const struct pod_term *b, size_t nb)
{
	size_t i, j;

	if (na != nb)
		return false;
	for (i = 0; i < na; i++) {
		const struct pod_term *x = &a[i], *y = &b[i];

		if (x->selector_null != y->selector_null || x->has_ns_selector != y->has_ns_selector ||
		    x->n_namespaces != y->n_namespaces || !str_same(x->topology_key, y->topology_key) ||
		    !selector_reqs_same(x->selector.reqs, x->selector.n, y->selector.reqs,
					y->selector.n) ||
		    !selector_reqs_same(x->ns_selector.reqs, x->ns_selector.n, y->ns_selector.reqs,
					y->ns_selector.n))
			return false;
		for (j = 0; j < x->n_namespaces; j++)
			if (!str_same(x->namespaces[j], y->namespaces[j]))
				return false;
	}
	return true;
}

static uint64_t fp_str(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return (h ^ 0xff) * 0x100000001b3ULL;
}

uint64_t pod_term_fingerprint(const struct pod_term *t)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	h = fp_str(h, t->topology_key);
	for (i = 0; i < t->selector.n; i++)
		h = fp_str(h, t->selector.reqs[i].key);
	for (i = 0; i < t->n_namespaces; i++)
		h = fp_str(h, t->namespaces[i]);
	return h ? h : 1;
}

bool pod_relations_same(const struct pod *a, const struct pod *b)
{
	size_t i;

	if (!terms_same(a->affinity_terms, a->n_affinity_terms, b->affinity_terms,
			b->n_affinity_terms) ||
	    !terms_same(a->anti_terms, a->n_anti_terms, b->anti_terms, b->n_anti_terms) ||
	    a->n_spread != b->n_spread || a->n_host_ports != b->n_host_ports ||
	    a->n_claims != b->n_claims || !str_same(a->unmodelled, b->unmodelled))
		return false;
	for (i = 0; i < a->n_spread; i++) {
		const struct spread_constraint *x = &a->spread[i], *y = &b->spread[i];

		if (x->max_skew != y->max_skew || x->min_domains != y->min_domains ||
		    x->selector_null != y->selector_null ||
		    x->honor_affinity != y->honor_affinity || x->honor_taints != y->honor_taints ||
		    !str_same(x->topology_key, y->topology_key) ||
		    !selector_reqs_same(x->selector.reqs, x->selector.n, y->selector.reqs,
					y->selector.n))
			return false;
	}
	for (i = 0; i < a->n_host_ports; i++)
		if (a->host_ports[i].port != b->host_ports[i].port ||
		    a->host_ports[i].protocol != b->host_ports[i].protocol ||
		    !str_same(a->host_ports[i].ip, b->host_ports[i].ip))
			return false;
	for (i = 0; i < a->n_claims; i++)
		if (!str_same(a->claims[i], b->claims[i]))
			return false;
	return true;
}

/* ---- node-side predicates of a pod: tolerations, node affinity ---- */

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

bool toleration_tolerates(const struct toleration *tol, const struct taint *t)
{
	const char *key = or_empty(tol->key);

	if (key[0] == '\0') {
		if (tol->op != TOLERATION_EXISTS)
			return false;
	} else if (strcmp(key, or_empty(t->key)) != 0) {
		return false;
	}
	if (tol->op != TOLERATION_EXISTS && strcmp(or_empty(tol->value), or_empty(t->value)) != 0)
		return false;
	return tol->effect == -1 || tol->effect == (int)t->effect;
}

bool pod_tolerates(const struct pod *p, const struct taint *t)
{
	size_t i;

	for (i = 0; i < p->n_tolerations; i++)
		if (toleration_tolerates(&p->tolerations[i], t))
			return true;
	return false;
}

bool pod_tolerates_all(const struct pod *p, const struct taint *taints, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (taints[i].effect != TAINT_PREFER_NO_SCHEDULE && !pod_tolerates(p, &taints[i]))
			return false;
	return true;
}

long node_term_first_failure(const struct node_selector_term *term, const char *name,
			     const struct kvlist *labels)
{
	size_t i;

	if (term->n_exprs == 0 && term->n_fields == 0)
		return 0;
	for (i = 0; i < term->n_exprs; i++) {
		const struct selector_req *r = &term->exprs[i];

		if (!selector_req_holds(r, kvlist_get(labels, r->key)))
			return (long)i;
	}
	for (i = 0; i < term->n_fields; i++) {
		const struct selector_req *r = &term->fields[i];

		if (!name || !r->key || strcmp(r->key, "metadata.name") != 0 ||
		    !selector_req_holds(r, name))
			return (long)(term->n_exprs + i);
	}
	return -1;
}

bool node_affinity_matches(const struct node_affinity *a, const char *name,
			   const struct kvlist *labels)
{
	size_t i;

	if (a->n_terms == 0)
		return true;
	for (i = 0; i < a->n_terms; i++)
		if (node_term_first_failure(&a->terms[i], name, labels) < 0)
			return true;
	return false;
}

bool pod_node_selection_matches(const struct pod *p, const char *name, const struct kvlist *labels)
{
	size_t i;

	for (i = 0; i < p->node_selector.n; i++) {
		const char *v = kvlist_get(labels, p->node_selector.items[i].key);

		if (!v || strcmp(v, or_empty(p->node_selector.items[i].value)) != 0)
			return false;
	}
	return node_affinity_matches(&p->affinity, name, labels);
}

int64_t resources_ext(const struct resources *r, const char *name)
{
	size_t i;

	if (!r || !name)
		return 0;
	for (i = 0; i < r->n_ext; i++)
		if (strcmp(r->ext[i].name, name) == 0)
			return r->ext[i].value;
	return 0;
}

static const char *const effect_names[] = {
	[TAINT_NO_SCHEDULE] = "NoSchedule",
	[TAINT_PREFER_NO_SCHEDULE] = "PreferNoSchedule",
	[TAINT_NO_EXECUTE] = "NoExecute",
};

int taint_effect_parse(const char *s, enum taint_effect *out)
{
	size_t i;

	if (!s)
		return -1;
	for (i = 0; i < sizeof(effect_names) / sizeof(effect_names[0]); i++) {
		if (strcmp(s, effect_names[i]) == 0) {
			*out = (enum taint_effect)i;
			return 0;
		}
	}
	return -1;
}

const char *taint_effect_str(enum taint_effect e)
{
	if ((unsigned)e < sizeof(effect_names) / sizeof(effect_names[0]))
		return effect_names[e];
	return "?";
}

const char *pod_phase_str(enum pod_phase p)
{
	switch (p) {
	case POD_PENDING: return "Pending";
	case POD_RUNNING: return "Running";
	case POD_SUCCEEDED: return "Succeeded";
	case POD_FAILED: return "Failed";
	case POD_UNKNOWN: return "Unknown";
	}
	return "?";
}

bool pod_finished(const struct pod *p)
{
	return p->phase == POD_SUCCEEDED || p->phase == POD_FAILED;
}

/* Strict decimal int64 ("-12", "+3"); false on anything else. */
static bool parse_int64(const char *s, long long *out)
{
	char *end;

	if (!s || !*s || (*s != '-' && *s != '+' && (*s < '0' || *s > '9')))
		return false;
	errno = 0;
	*out = strtoll(s, &end, 10);
	return errno == 0 && *end == '\0';
}

static bool has_value(const struct selector_req *r, const char *v)
{
	size_t i;

	for (i = 0; i < r->n_values; i++)
		if (r->values[i] && strcmp(r->values[i], v) == 0)
			return true;
	return false;
}

bool selector_req_holds(const struct selector_req *r, const char *v)
{
	long long have, want;

	switch (r->op) {
	case SELECTOR_IN:
		return v && has_value(r, v);
	case SELECTOR_NOT_IN:
		return !v || !has_value(r, v);
	case SELECTOR_EXISTS:
		return v != NULL;
	case SELECTOR_DOES_NOT_EXIST:
		return v == NULL;
	case SELECTOR_GT:
	case SELECTOR_LT:
		if (!v || r->n_values != 1 || !parse_int64(v, &have) ||
		    !parse_int64(r->values[0], &want))
			return false;
		return r->op == SELECTOR_GT ? have > want : have < want;
	}
	return false;
}

bool label_selector_matches(const struct label_selector *sel,
			    const struct kvlist *labels)
{
	size_t i;

	if (!sel)
		return true;
	for (i = 0; i < sel->n; i++)
		if (!selector_req_holds(&sel->reqs[i], kvlist_get(labels, sel->reqs[i].key)))
			return false;
	return true;
}

bool pdb_matches(const struct pdb *b, const struct pod *p)
{
	if (strcmp(b->ns, p->ns) != 0 || b->selects_none)
		return false;
	if (b->selects_all)
		return true;
	return label_selector_matches(&b->selector, &p->labels);
}

/* ---- time ---- */

/* Reads exactly 'n' digits. */
static bool digits(const char **p, int n, int *out)
{
	int v = 0;

	while (n--) {
		if (**p < '0' || **p > '9')
			return false;
		v = v * 10 + (*(*p)++ - '0');
	}
	*out = v;
	return true;
}

static int days_in_month(int y, int m)
{
	static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return m == 2 && leap ? 29 : days[m - 1];
}

int model_parse_time(const char *text, int64_t *out)
{
	const char *p = text;
	int y, mo, d, h, mi, sec, oh = 0, om = 0, sign = 0;

	if (!p)
		return -1;
	if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) ||
	    *p++ != '-' || !digits(&p, 2, &d) || (*p != 'T' && *p != 't'))
		return -1;
	p++;
	if (!digits(&p, 2, &h) || *p++ != ':' || !digits(&p, 2, &mi) ||
	    *p++ != ':' || !digits(&p, 2, &sec))
		return -1;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -1;
		while (*p >= '0' && *p <= '9')
			p++; /* sub-second precision is not kept */
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p++ == '-' ? -1 : 1;
		if (!digits(&p, 2, &oh) || *p++ != ':' || !digits(&p, 2, &om))
			return -1;
	} else {
		return -1;
	}
	if (*p != '\0')
		return -1;
	if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 ||
	    mi > 59 || sec > 59 || oh > 23 || om > 59)
		return -1;
	*out = textparse_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec -
	       sign * (oh * 3600 + om * 60);
	return 0;
}

void model_format_time(int64_t unix_s, char *out, size_t len)
{
	time_t t = (time_t)unix_s;
	struct tm tm;

	if (!len)
		return;
	if (!gmtime_r(&t, &tm) || !strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		out[0] = '\0';
}
