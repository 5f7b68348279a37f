/*
 * sched: fit predicates (resources, cordon, nodeSelector, required node
 * affinity, taints), first-fit-decreasing packing onto a group's template,
 * and the drain checks. Reads a finished snapshot and never changes it.
 * Decoding lives in model_decode.c, selector matching in objects.c.
 */
#include "sched.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quantity.h"
#include "topology.h"

/* The taint Kubernetes' NodeUnschedulable plugin lets a pod tolerate. */
#define UNSCHEDULABLE_TAINT_KEY "node.kubernetes.io/unschedulable"

/* ---- bounded text: every message is truncated, never overflows ---- */

struct text {
	char *p;    /* NULL: discard everything */
	size_t len;
	size_t pos; /* always < len when p != NULL */
};

static struct text text_at(char *p, size_t len)
{
	struct text t = {len ? p : NULL, len, 0};

	if (t.p)
		t.p[0] = '\0';
	return t;
}

__attribute__((format(printf, 2, 3)))
static void text_printf(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!t->p)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->p + t->pos, t->len - t->pos, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= t->len - t->pos)
		t->pos = t->len - 1;
	else
		t->pos += (size_t)n;
}

static const char *str_or_empty(const char *s)
{
	return s ? s : "";
}

/* Orders two pods by namespace, then name (namespaces are interned:
 * equal pointers, equal text). */
static int pod_name_cmp(const char *ns_a, const char *name_a, const char *ns_b,
			const char *name_b)
{
	int c = ns_a == ns_b ? 0 : strcmp(str_or_empty(ns_a), str_or_empty(ns_b));

	return c ? c : strcmp(str_or_empty(name_a), str_or_empty(name_b));
}

static const char *selector_op_text(enum selector_op op)
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

/* "zone In (a,b)", "gpu Exists" */
static void text_requirement(struct text *t, const struct selector_req *r)
{
	size_t i;

	text_printf(t, "%s %s", str_or_empty(r->key), selector_op_text(r->op));
	if (r->op == SELECTOR_EXISTS || r->op == SELECTOR_DOES_NOT_EXIST)
		return;
	text_printf(t, " (");
	for (i = 0; i < r->n_values; i++)
		text_printf(t, "%s%s", i ? "," : "", str_or_empty(r->values[i]));
	text_printf(t, ")");
}

/* A label selector in kubectl form: "a=b,c in (x,y),!d". */
static void text_selector(struct text *t, const struct label_selector *sel)
{
	size_t i, j;

	for (i = 0; i < sel->n; i++) {
		const struct selector_req *r = &sel->reqs[i];
		const char *k = str_or_empty(r->key);

		if (i)
			text_printf(t, ",");
		switch (r->op) {
		case SELECTOR_IN:
		case SELECTOR_NOT_IN:
			if (r->n_values == 1) {
				text_printf(t, "%s%s%s", k,
					    r->op == SELECTOR_IN ? "=" : "!=",
					    str_or_empty(r->values[0]));
				break;
			}
			text_printf(t, "%s %s (", k,
				    r->op == SELECTOR_IN ? "in" : "notin");
			for (j = 0; j < r->n_values; j++)
				text_printf(t, "%s%s", j ? "," : "",
					    str_or_empty(r->values[j]));
			text_printf(t, ")");
			break;
		case SELECTOR_EXISTS:
			text_printf(t, "%s", k);
			break;
		case SELECTOR_DOES_NOT_EXIST:
			text_printf(t, "!%s", k);
			break;
		default:
			text_requirement(t, r);
			break;
		}
	}
}

const char *sched_fit_str(enum sched_fit f)
{
	switch (f) {
	case SCHED_FITS: return "fits";
	case SCHED_NO_CPU: return "insufficient cpu";
	case SCHED_NO_MEMORY: return "insufficient memory";
	case SCHED_NO_EPHEMERAL: return "insufficient ephemeral-storage";
	case SCHED_NO_PODS: return "too many pods";
	case SCHED_NO_EXTENDED: return "insufficient extended resource";
	case SCHED_NODE_SELECTOR: return "node selector mismatch";
	case SCHED_NODE_AFFINITY: return "node affinity mismatch";
	case SCHED_TAINT: return "untolerated taint";
	case SCHED_UNSCHEDULABLE: return "node is cordoned";
	case SCHED_HOST_PORTS: return "host port in use";
	case SCHED_POD_AFFINITY: return "pod affinity not met";
	case SCHED_POD_ANTI_AFFINITY: return "pod anti-affinity";
	case SCHED_EXISTING_ANTI_AFFINITY: return "existing pod's anti-affinity";
	case SCHED_TOPOLOGY_SPREAD: return "topology spread";
	case SCHED_VOLUME_ZONE: return "volume zone conflict";
	case SCHED_VOLUME_MISSING: return "volume not found";
	case SCHED_NOT_MODELLED: return "not modelled";
	}
	return "unknown";
}

/* ---- resources ---- */

static int64_t ext_find(const struct res_ext *e, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (e[i].name && strcmp(e[i].name, name) == 0)
			return e[i].value;
	return 0;
}

/*
 * The one resource check every path uses. Free amounts are given directly;
 * an extended resource's free amount is ext[name] minus used_ext[name]
 * (used_ext may be NULL). A request of 0 always fits.
 */
static enum sched_fit fit_resources(int64_t cpu_m, int64_t memory,
				    int64_t ephemeral, int64_t pods,
				    const struct res_ext *ext, size_t n_ext,
				    const struct resources *used_ext,
				    const struct resources *req, char *detail,
				    size_t detail_len)
{
	struct text t = text_at(detail, detail_len);
	char need[32], have[32];
	size_t i;

	if (pods < 1) {
		if (detail) /* formatting costs: only when asked */
			text_printf(&t, "insufficient pods: needs 1, free %s",
			    quantity_format(pods, QUANTITY_UNIT, have, sizeof(have)));
		return SCHED_NO_PODS;
	}
	if (req->cpu_m > 0 && req->cpu_m > cpu_m) {
		if (detail) /* formatting costs: only when asked */
			text_printf(&t, "insufficient cpu: needs %s, free %s",
			    quantity_format(req->cpu_m, QUANTITY_MILLI, need, sizeof(need)),
			    quantity_format(cpu_m, QUANTITY_MILLI, have, sizeof(have)));
		return SCHED_NO_CPU;
	}
	if (req->memory > 0 && req->memory > memory) {
		if (detail) /* formatting costs: only when asked */
			text_printf(&t, "insufficient memory: needs %s, free %s",
			    quantity_format(req->memory, QUANTITY_UNIT, need, sizeof(need)),
			    quantity_format(memory, QUANTITY_UNIT, have, sizeof(have)));
		return SCHED_NO_MEMORY;
	}
	if (req->ephemeral > 0 && req->ephemeral > ephemeral) {
		if (detail) /* formatting costs: only when asked */
			text_printf(&t, "insufficient ephemeral-storage: needs %s, free %s",
			    quantity_format(req->ephemeral, QUANTITY_UNIT, need, sizeof(need)),
			    quantity_format(ephemeral, QUANTITY_UNIT, have, sizeof(have)));
		return SCHED_NO_EPHEMERAL;
	}
	for (i = 0; i < req->n_ext; i++) {
		const char *name = req->ext[i].name;
		int64_t want = req->ext[i].value, free_;

		if (want <= 0 || !name)
			continue;
		free_ = ext_find(ext, n_ext, name);
		if (used_ext)
			free_ -= resources_ext(used_ext, name);
		if (want > free_) {
			if (detail) /* formatting costs: only when asked */
			text_printf(&t, "insufficient %s: needs %s, free %s", name,
				    quantity_format(want, QUANTITY_UNIT, need, sizeof(need)),
				    quantity_format(free_, QUANTITY_UNIT, have, sizeof(have)));
			return SCHED_NO_EXTENDED;
		}
	}
	return SCHED_FITS;
}

int room_of_node(const struct snapshot *s, size_t node, struct room *out)
{
	const struct node *nd;
	const struct resources *a, *u;
	size_t i, n = 0;

	assert(node < s->n_nodes);
	nd = &s->nodes[node];
	a = &nd->allocatable;
	u = &nd->requested;
	memset(out, 0, sizeof(*out));
	out->cpu_m = a->cpu_m - u->cpu_m;
	out->memory = a->memory - u->memory;
	out->ephemeral = a->ephemeral - u->ephemeral;
	out->pods = a->pods - u->pods;
	if (a->n_ext + u->n_ext == 0)
		return 0;
	out->ext = calloc(a->n_ext + u->n_ext, sizeof(*out->ext));
	if (!out->ext)
		return -1;
	for (i = 0; i < a->n_ext; i++) {
		out->ext[n].name = a->ext[i].name;
		out->ext[n].value = a->ext[i].value -
				    resources_ext(u, a->ext[i].name);
		n++;
	}
	/* requested but not allocatable (overcommitted or label drift) */
	for (i = 0; i < u->n_ext; i++) {
		size_t j;
		bool seen = false;

		for (j = 0; j < a->n_ext && !seen; j++)
			seen = strcmp(a->ext[j].name, u->ext[i].name) == 0;
		if (seen || u->ext[i].value == 0)
			continue;
		out->ext[n].name = u->ext[i].name;
		out->ext[n].value = -u->ext[i].value;
		n++;
	}
	out->n_ext = n;
	return 0;
}

/*
 * A new node's room for pending pods: the template's allocatable less
 * what the DaemonSets that would run there request (snapshot_finish()
 * counts them). Extended resources are the template's as they are: a
 * DaemonSet asking for one is not subtracted.
 */
static struct resources group_room(const struct node_group *g)
{
	struct resources r = g->tmpl.allocatable;
	const struct resources *d = &g->daemonset_requests;

	r.cpu_m -= d->cpu_m;
	r.memory -= d->memory;
	r.ephemeral -= d->ephemeral;
	r.pods -= d->pods;
	return r;
}

int room_of_template(const struct node_group *g, struct room *out)
{
	const struct resources room = group_room(g), *a = &room;

	memset(out, 0, sizeof(*out));
	out->cpu_m = a->cpu_m;
	out->memory = a->memory;
	out->ephemeral = a->ephemeral;
	out->pods = a->pods;
	if (a->n_ext == 0)
		return 0;
	out->ext = malloc(a->n_ext * sizeof(*out->ext));
	if (!out->ext)
		return -1;
	memcpy(out->ext, a->ext, a->n_ext * sizeof(*out->ext));
	out->n_ext = a->n_ext;
	return 0;
}

void room_free(struct room *r)
{
	if (!r)
		return;
	free(r->ext);
	r->ext = NULL;
	r->n_ext = 0;
}

enum sched_fit room_fits(const struct room *r, const struct resources *req,
			 char *detail, size_t detail_len)
{
	return fit_resources(r->cpu_m, r->memory, r->ephemeral, r->pods, r->ext,
			     r->n_ext, NULL, req, detail, detail_len);
}

void room_take(struct room *r, const struct resources *req)
{
	size_t i, j;

	r->cpu_m -= req->cpu_m;
	r->memory -= req->memory;
	r->ephemeral -= req->ephemeral;
	r->pods -= 1;
	for (i = 0; i < req->n_ext; i++) {
		if (!req->ext[i].name)
			continue;
		for (j = 0; j < r->n_ext; j++) {
			if (strcmp(r->ext[j].name, req->ext[i].name) == 0) {
				r->ext[j].value -= req->ext[i].value;
				break;
			}
		}
	}
}

/* ---- labels, affinity, taints ---- */

static void taint_text(struct text *t, const struct taint *x)
{
	const char *v = str_or_empty(x->value);

	text_printf(t, "taint %s%s%s:%s", str_or_empty(x->key), *v ? "=" : "",
		    v, taint_effect_str(x->effect));
}

enum sched_fit sched_fits_labels(const struct pod *p, const char *name,
				 const struct kvlist *labels,
				 const struct taint *taints, size_t n_taints,
				 bool unschedulable, char *detail,
				 size_t detail_len)
{
	static const struct kvlist no_labels = {NULL, 0};
	const struct taint cordon = {UNSCHEDULABLE_TAINT_KEY, "",
				     TAINT_NO_SCHEDULE};
	struct text t = text_at(detail, detail_len);
	const struct node_affinity *aff = &p->affinity;
	size_t i;

	if (!labels)
		labels = &no_labels;
	if (p->unmodelled) {
		text_printf(&t, "not modelled: %s", p->unmodelled);
		return SCHED_NOT_MODELLED;
	}
	if (unschedulable && !pod_tolerates(p, &cordon)) {
		text_printf(&t, "node is cordoned (unschedulable)");
		return SCHED_UNSCHEDULABLE;
	}
	for (i = 0; i < p->node_selector.n; i++) {
		const struct kv *kv = &p->node_selector.items[i];
		const char *v = kvlist_get(labels, kv->key);

		if (v && strcmp(v, str_or_empty(kv->value)) == 0)
			continue;
		if (v)
			text_printf(&t, "node selector %s=%s: node has %s=%s",
				    kv->key, str_or_empty(kv->value), kv->key, v);
		else
			text_printf(&t, "node selector %s=%s: node has no label %s",
				    kv->key, str_or_empty(kv->value), kv->key);
		return SCHED_NODE_SELECTOR;
	}
	if (aff->n_terms > 0) {
		long fail = 0;

		for (i = 0; i < aff->n_terms; i++) {
			fail = node_term_first_failure(&aff->terms[i], name, labels);
			if (fail < 0)
				break;
		}
		if (i == aff->n_terms) {
			const struct node_selector_term *term = &aff->terms[0];

			if (aff->n_terms > 1) {
				text_printf(&t, "none of %zu required node affinity terms match",
					    aff->n_terms);
			} else if (term->n_exprs + term->n_fields == 0) {
				text_printf(&t, "required node affinity term is empty");
			} else {
				size_t f = (size_t)fail;

				text_printf(&t, "required node affinity: ");
				text_requirement(&t, f < term->n_exprs ?
						 &term->exprs[f] :
						 &term->fields[f - term->n_exprs]);
				text_printf(&t, " not satisfied");
			}
			return SCHED_NODE_AFFINITY;
		}
	}
	for (i = 0; i < n_taints; i++) {
		if (taints[i].effect == TAINT_PREFER_NO_SCHEDULE)
			continue;
		if (pod_tolerates(p, &taints[i]))
			continue;
		taint_text(&t, &taints[i]);
		return SCHED_TAINT;
	}
	if (p->volume_problem) {
		text_printf(&t, "%s", p->volume_problem);
		return SCHED_VOLUME_MISSING;
	}
	for (i = 0; i < p->n_volume_affinity; i++) {
		if (node_affinity_matches(&p->volume_affinity[i], name, labels))
			continue;
		text_printf(&t, "volume node affinity conflict: ");
		if (p->volume_affinity[i].n_terms == 1 &&
		    p->volume_affinity[i].terms[0].n_exprs > 0) {
			const struct node_selector_term *term = &p->volume_affinity[i].terms[0];
			long f = node_term_first_failure(term, name, labels);

			if (f >= 0 && (size_t)f < term->n_exprs)
				text_requirement(&t, &term->exprs[f]);
		} else {
			text_printf(&t, "none of %zu terms match", p->volume_affinity[i].n_terms);
		}
		return SCHED_VOLUME_ZONE;
	}
	return SCHED_FITS;
}

/* ---- pod relations: host ports, inter-pod affinity, topology spread ---- */

#define HOSTNAME_LABEL "kubernetes.io/hostname"

/* The labels and name of planned nodes, each in its own block (the index
 * borrows them), freed once the index is rolled back. */
struct planned {
	void **blocks;
	size_t n, cap;
};

static void planned_free(struct planned *pl)
{
	size_t i;

	for (i = 0; i < pl->n; i++)
		free(pl->blocks[i]);
	free(pl->blocks);
	memset(pl, 0, sizeof(*pl));
}

/* A planned node of an earlier packing: (step, group, upcoming or new, bin). */
struct prior_site {
	uint32_t step, group;
	int32_t bin;
	bool up;
	bool used;    /* false: an empty slot */
	long site;
};

static uint64_t prior_hash(uint32_t step, uint32_t group, int32_t bin, bool up)
{
	uint64_t h = ((uint64_t)step << 32 | group) * 0x9e3779b97f4a7c15ULL;

	h ^= ((uint64_t)(uint32_t)bin << 1 | up) * 0xc2b2ae3d27d4eb4fULL;
	return h ^ (h >> 29);
}

/*
 * The snapshot's relations: the index, each group's template site, and
 * the earlier placements (struct pack_prior) applied on top of the
 * snapshot's own state. Those stay between the packings of a round, each
 * of which passes the list it had plus the step chosen since: only the
 * new ones are added. Every other reader (fits, place, drains) goes back
 * to the snapshot's own state first.
 */
struct relations {
	struct topo *t;
	long *tmpl_site;  /* per group: its TOPO_TEMPLATE site, -1 when it cannot grow */
	struct pack_prior *applied;
	size_t n_applied, cap_applied;
	struct planned planned;  /* the applied ones' planned nodes */
	struct prior_site *ps;   /* open addressing */
	size_t n_ps, cap_ps;
};

static void relations_release(void *p)
{
	struct relations *r = p;

	topo_free(r->t);
	free(r->tmpl_site);
	free(r->applied);
	planned_free(&r->planned);
	free(r->ps);
	free(r);
}

/* Can group 'g' add a node now: below its max, not backed off? */
static bool group_can_grow(const struct snapshot *s, const struct node_group *g)
{
	int have = g->target > g->current ? g->target : g->current;

	return g->max > have && g->backoff_until <= s->now;
}

/*
 * The snapshot's index of pod relations, built on first use: a site per
 * node (site i is node i) with its bound pods, then a template site per
 * group that can grow (site n_nodes + j for the j-th such group: a spread
 * domain while a packing plans). A cache of the immutable snapshot, so
 * it is stored through a const pointer; like the snapshot's other
 * readers it serves one thread at a time. NULL when out of memory.
 */
static struct relations *relations_of(const struct snapshot *s)
{
	struct snapshot *w = (struct snapshot *)s;
	struct relations *r;
	size_t g;

	if (s->relations)
		return s->relations;
	r = calloc(1, sizeof(*r));
	if (!r || !(r->tmpl_site = malloc((s->n_groups ? s->n_groups : 1) * sizeof(long))) ||
	    !(r->t = topo_new(s)))
		goto oom;
	for (g = 0; g < s->n_groups; g++) {
		const struct node_group *ng = &s->groups[g];

		r->tmpl_site[g] = -1;
		if (group_can_grow(s, ng) &&
		    (r->tmpl_site[g] = topo_add_site(r->t, TOPO_TEMPLATE, ng->name, &ng->tmpl.labels,
						     ng->tmpl.taints, ng->tmpl.n_taints)) < 0)
			goto oom;
	}
	topo_commit(r->t);
	w->relations = r;
	w->relations_free = relations_release;
	return r;
oom:
	if (r)
		relations_release(r);
	return NULL;
}

/* Back to the snapshot's own state: no earlier placements. 0 or -1 (OOM:
 * the index is dropped, the next reader builds it anew). */
static int relations_reset(const struct snapshot *s, struct relations *r)
{
	if (r->n_applied == 0)
		return 0;
	if (topo_rollback(r->t, 0) < 0) {
		struct snapshot *w = (struct snapshot *)s;

		relations_release(r);
		w->relations = NULL;
		return -1;
	}
	planned_free(&r->planned);
	r->n_applied = 0;
	r->n_ps = 0;
	if (r->ps)
		memset(r->ps, 0, r->cap_ps * sizeof(*r->ps));
	return 0;
}

/* The index as the snapshot is (no earlier placements), NULL on OOM. */
static struct topo *relations(const struct snapshot *s)
{
	struct relations *r = relations_of(s);

	if (!r || relations_reset(s, r) < 0)
		return NULL;
	return r->t;
}

/* Group 'g''s template site in the relations index, -1 when none. */
static long template_site(const struct snapshot *s, const struct node_group *g)
{
	const struct relations *r = s->relations;

	return r && g >= s->groups && g < s->groups + s->n_groups ? r->tmpl_site[g - s->groups] : -1;
}

/* Does 'p' bring a relation of its own (ports, affinity, spread)? */
static bool has_relations(const struct pod *p)
{
	return p->n_host_ports || p->n_affinity_terms || p->n_anti_terms || p->n_spread;
}

/* Can relations refuse 'p' in this snapshot at all? */
static bool relations_matter(const struct snapshot *s, const struct pod *p)
{
	return has_relations(p) || s->n_anti_pods > 0;
}

enum sched_fit sched_fits_relations(const struct snapshot *s, const struct pod *p, size_t node,
				    char *detail, size_t detail_len)
{
	struct topo *t;

	if (detail && detail_len)
		detail[0] = '\0';
	if (!relations_matter(s, p))
		return SCHED_FITS;
	assert(node < s->n_nodes);
	if (!(t = relations(s))) {
		if (detail && detail_len)
			snprintf(detail, detail_len, "out of memory indexing pod relations");
		return SCHED_NOT_MODELLED;
	}
	return topo_check(t, p, node, detail, detail_len);
}

enum sched_fit sched_fits_node(const struct snapshot *s, const struct pod *p,
			       size_t node, char *detail, size_t detail_len)
{
	const struct node *nd;
	const struct resources *a, *u;
	enum sched_fit f;

	assert(node < s->n_nodes);
	nd = &s->nodes[node];
	f = sched_fits_labels(p, nd->name, &nd->labels, nd->taints,
			      nd->n_taints, nd->unschedulable, detail,
			      detail_len);
	if (f != SCHED_FITS)
		return f;
	a = &nd->allocatable;
	u = &nd->requested;
	f = fit_resources(a->cpu_m - u->cpu_m, a->memory - u->memory,
			  a->ephemeral - u->ephemeral, a->pods - u->pods,
			  a->ext, a->n_ext, u, &p->requests, detail,
			  detail_len);
	if (f != SCHED_FITS)
		return f;
	return sched_fits_relations(s, p, node, detail, detail_len);
}

enum sched_fit sched_fits_template(const struct pod *p,
				   const struct node_group *g, char *detail,
				   size_t detail_len)
{
	const struct node_template *tm = &g->tmpl;
	const struct resources room = group_room(g), *a = &room;
	enum sched_fit f;

	f = sched_fits_labels(p, NULL, &tm->labels, tm->taints, tm->n_taints,
			      false, detail, detail_len);
	if (f != SCHED_FITS)
		return f;
	return fit_resources(a->cpu_m, a->memory, a->ephemeral, a->pods, a->ext,
			     a->n_ext, NULL, &p->requests, detail, detail_len);
}

struct binned {
	int32_t bin;
	uint32_t at; /* position in the packing's pod list */
};

static int cmp_binned(const void *a, const void *b)
{
	const struct binned *x = a, *y = b;

	if (x->bin != y->bin)
		return x->bin < y->bin ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

int sched_types_taking(const struct snapshot *s, size_t g, const uint32_t *pods, size_t n,
		       const int32_t *placement, int32_t first_bin, bool *ok)
{
	const struct node_group *grp = &s->groups[g];
	struct binned *order;
	struct room room = {0};
	size_t m = 0, i, j, t;

	for (t = 0; t < grp->n_types; t++)
		ok[t] = true;
	order = malloc((n ? n : 1) * sizeof(*order));
	if (!order)
		return -1;
	for (i = 0; i < n; i++)
		if (placement[i] >= first_bin)
			order[m++] = (struct binned){placement[i], (uint32_t)i};
	qsort(order, m, sizeof(*order), cmp_binned);
	for (t = 0; t < grp->n_types; t++) {
		const struct node_group *tg = &grp->types[t];

		for (i = 0; i < m && ok[t]; i = j) {
			room_free(&room);
			if (room_of_template(tg, &room) < 0) {
				free(order);
				return -1;
			}
			for (j = i; j < m && order[j].bin == order[i].bin; j++) {
				const struct pod *p = &s->pods[pods[order[j].at]];

				if (sched_fits_labels(p, NULL, &tg->tmpl.labels, tg->tmpl.taints,
						      tg->tmpl.n_taints, false, NULL, 0) != SCHED_FITS ||
				    room_fits(&room, &p->requests, NULL, 0) != SCHED_FITS) {
					ok[t] = false;
					break;
				}
				room_take(&room, &p->requests);
			}
		}
	}
	room_free(&room);
	free(order);
	return 0;
}

/* ---- what the packings of one snapshot share ---- */

/*
 * sched_fits_labels() against a template reads only a pod's node
 * selector, required node affinity and tolerations. Pods with the same
 * ones (the replicas of a workload, mostly) form a class whose verdict on
 * each group's labels and taints is worked out once.
 *
 * What packings read of a pod is kept together in a brief, in the order
 * the pods were first packed (the pending pods' order): a pass over a
 * list of pods reads a few cache lines, not a pod object each.
 */
struct pod_brief {
	int64_t cpu_m, memory, ephemeral;
	uint32_t cls;   /* its class */
	uint32_t rank;  /* where its (namespace, name) sorts among the pending
			 * pods, equal pairs equal; UINT32_MAX when not pending */
	uint32_t n_ext; /* extended resources requested: the pod is read for them */
	bool some_ext;  /* one of them is more than 0: no template without any takes it */
	bool related;   /* it has relations of its own (host ports, pod affinity, spread) */
	bool owner_match; /* a counted pod's anti-affinity term matches it, as of... */
	uint32_t owners_seen; /* ...that many owner groups in the relations index */
};

/*
 * A group's packing order: the pods of the first packing onto it (the
 * largest it has seen) that fit its template, in first-fit-decreasing
 * order. A pod's place there depends on its requests, the template and
 * its name's rank only, so the order of any subset is this one with the
 * others left out; a later packing of such a subset walks it instead of
 * sorting. 'exact' is false when two pods tie on size and rank there:
 * their positions in each caller's list would order them.
 */
struct pack_order {
	uint32_t *pods;         /* snapshot indices, in packing order */
	size_t n;
	uint64_t *member;       /* bit per snapshot pod: in 'pods' */
	bool exact;
};

/* At most this many bytes in all groups' packing orders, their bitmaps
 * counted: many groups over many pods stay bounded. */
#define ORDER_BUDGET ((size_t)16 << 20)

struct sched_cache {
	const struct snapshot *s;
	struct pack_order *order; /* per group, NULL until a packing */
	size_t order_bytes;       /* of all of them */
	uint32_t *mark;           /* per pod: the stamp of the packing listing it */
	uint32_t *mark_pos;       /* per pod: its position in that list */
	uint32_t stamp;
	bool prepared;          /* the pending pods have their briefs */
	uint32_t *slot;         /* per pod: its brief + 1, 0 none yet */
	struct pod_brief *brief;
	size_t n_brief, cap_brief;
	uint32_t *rep;          /* per class: a pod of it */
	uint64_t *hash;         /* per class */
	int8_t *verdict;        /* per class x group: enum sched_fit, -1 not known yet */
	size_t n_cls, cap_cls;
	uint32_t *slots;        /* open addressing: class + 1, 0 empty */
	size_t mask;
};

struct sched_cache *sched_cache_new(const struct snapshot *s)
{
	struct sched_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->s = s;
	c->slot = calloc(s->n_pods ? s->n_pods : 1, sizeof(*c->slot));
	if (!c->slot) {
		free(c);
		return NULL;
	}
	return c;
}

void sched_cache_free(struct sched_cache *c)
{
	if (!c)
		return;
	free(c->slot);
	free(c->brief);
	free(c->rep);
	free(c->hash);
	free(c->verdict);
	free(c->slots);
	if (c->order) {
		size_t g;

		for (g = 0; g < c->s->n_groups; g++) {
			free(c->order[g].pods);
			free(c->order[g].member);
		}
		free(c->order);
	}
	free(c->mark);
	free(c->mark_pos);
	free(c);
}

static uint64_t mix_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL; /* FNV-1a */
	return h;
}

static uint64_t mix_str(uint64_t h, const char *s)
{
	/* NULL and "" differ: a toleration's NULL key is not "" to every path */
	if (!s)
		return mix_bytes(h, "\1", 1);
	return mix_bytes(h, s, strlen(s) + 1);
}

static uint64_t mix_int(uint64_t h, int64_t v)
{
	return mix_bytes(h, &v, sizeof(v));
}

static uint64_t mix_reqs(uint64_t h, const struct selector_req *r, size_t n)
{
	size_t i, j;

	h = mix_int(h, (int64_t)n);
	for (i = 0; i < n; i++) {
		h = mix_str(h, r[i].key);
		h = mix_int(h, r[i].op);
		h = mix_int(h, (int64_t)r[i].n_values);
		for (j = 0; j < r[i].n_values; j++)
			h = mix_str(h, r[i].values[j]);
	}
	return h;
}

static uint64_t constraints_hash(const struct pod *p)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	h = mix_int(h, (int64_t)p->node_selector.n);
	for (i = 0; i < p->node_selector.n; i++) {
		h = mix_str(h, p->node_selector.items[i].key);
		h = mix_str(h, p->node_selector.items[i].value);
	}
	h = mix_int(h, (int64_t)p->affinity.n_terms);
	for (i = 0; i < p->affinity.n_terms; i++) {
		h = mix_reqs(h, p->affinity.terms[i].exprs, p->affinity.terms[i].n_exprs);
		h = mix_reqs(h, p->affinity.terms[i].fields, p->affinity.terms[i].n_fields);
	}
	h = mix_int(h, (int64_t)p->n_tolerations);
	for (i = 0; i < p->n_tolerations; i++) {
		h = mix_str(h, p->tolerations[i].key);
		h = mix_str(h, p->tolerations[i].value);
		h = mix_int(h, p->tolerations[i].op);
		h = mix_int(h, p->tolerations[i].effect);
	}
	/* each pod's volume constraints are its own (its claims') */
	h = mix_int(h, (int64_t)(uintptr_t)p->volume_affinity);
	h = mix_int(h, (int64_t)(uintptr_t)p->volume_problem);
	return mix_str(h, p->unmodelled);
}

/* Same node selector, affinity, tolerations (in the same order) and
 * volume constraints? */
static bool constraints_same(const struct pod *a, const struct pod *b)
{
	return kvlist_same(&a->node_selector, &b->node_selector) &&
	       node_affinity_same(&a->affinity, &b->affinity) &&
	       tolerations_same(a->tolerations, a->n_tolerations, b->tolerations, b->n_tolerations) &&
	       a->volume_affinity == b->volume_affinity &&
	       a->n_volume_affinity == b->n_volume_affinity &&
	       a->volume_problem == b->volume_problem &&
	       (a->unmodelled == b->unmodelled ||
		(a->unmodelled && b->unmodelled && strcmp(a->unmodelled, b->unmodelled) == 0));
}

static int cache_grow_slots(struct sched_cache *c)
{
	size_t cap = c->slots ? 2 * (c->mask + 1) : 64, i;
	uint32_t *slots;

	if (cap > SIZE_MAX / sizeof(*slots))
		return -1;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -1;
	for (i = 0; i < c->n_cls; i++) {
		size_t at = (size_t)c->hash[i] & (cap - 1);

		while (slots[at])
			at = (at + 1) & (cap - 1);
		slots[at] = (uint32_t)i + 1;
	}
	free(c->slots);
	c->slots = slots;
	c->mask = cap - 1;
	return 0;
}

/* The class of pod 'pod' (its index), or -1 when out of memory. */
static long cache_class(struct sched_cache *c, size_t pod)
{
	const struct pod *p = &c->s->pods[pod];
	uint64_t h;
	size_t at, k, ng = c->s->n_groups ? c->s->n_groups : 1;

	h = constraints_hash(p);
	if (c->slots) {
		for (at = (size_t)h & c->mask; c->slots[at]; at = (at + 1) & c->mask) {
			size_t x = c->slots[at] - 1;

			if (c->hash[x] == h && constraints_same(&c->s->pods[c->rep[x]], p))
				return (long)x;
		}
	}
	if (c->n_cls == c->cap_cls) {
		size_t cap = c->cap_cls ? 2 * c->cap_cls : 16;
		uint32_t *rep;
		uint64_t *hash;
		int8_t *verdict;

		if (cap >= UINT32_MAX || cap > SIZE_MAX / ng)
			return -1;
		rep = realloc(c->rep, cap * sizeof(*rep));
		if (rep)
			c->rep = rep;
		hash = rep ? realloc(c->hash, cap * sizeof(*hash)) : NULL;
		if (hash)
			c->hash = hash;
		verdict = hash ? realloc(c->verdict, cap * ng) : NULL;
		if (!verdict)
			return -1;
		c->verdict = verdict;
		c->cap_cls = cap;
	}
	if ((c->n_cls + 1) * 2 > (c->slots ? c->mask + 1 : 0) && cache_grow_slots(c) < 0)
		return -1;
	k = c->n_cls++;
	c->rep[k] = (uint32_t)pod;
	c->hash[k] = h;
	memset(&c->verdict[k * ng], -1, ng);
	for (at = (size_t)h & c->mask; c->slots[at]; at = (at + 1) & c->mask)
		;
	c->slots[at] = (uint32_t)k + 1;
	return (long)k;
}

/* Makes pod 'pod's brief: NULL when out of memory. */
static const struct pod_brief *cache_new_brief(struct sched_cache *c, size_t pod, uint32_t rank)
{
	const struct resources *r = &c->s->pods[pod].requests;
	struct pod_brief *b;
	size_t i;
	long k;

	if (c->n_brief == c->cap_brief) {
		size_t cap = c->cap_brief ? 2 * c->cap_brief : 256;

		if (cap > UINT32_MAX || !(b = realloc(c->brief, cap * sizeof(*b))))
			return NULL;
		c->brief = b;
		c->cap_brief = cap;
	}
	k = cache_class(c, pod);
	if (k < 0)
		return NULL;
	b = &c->brief[c->n_brief++];
	*b = (struct pod_brief){r->cpu_m, r->memory, r->ephemeral, (uint32_t)k, rank,
				(uint32_t)(r->n_ext > UINT32_MAX ? UINT32_MAX : r->n_ext), false,
				has_relations(&c->s->pods[pod]), false, 0};
	for (i = 0; i < r->n_ext; i++)
		if (r->ext[i].name && r->ext[i].value > 0)
			b->some_ext = true;
	c->slot[pod] = (uint32_t)c->n_brief;
	return b;
}

/* Pod 'pod's brief (valid until the next one is made), or NULL when out
 * of memory. */
static inline const struct pod_brief *cache_brief(struct sched_cache *c, size_t pod, uint32_t rank)
{
	if (c->slot[pod])
		return &c->brief[c->slot[pod] - 1];
	return cache_new_brief(c, pod, rank);
}

/* sched_fits_template() of pod 'pod' (brief 'b') on group 'group', its
 * labels part worked out once per class. */
static inline int cache_fits_template(struct sched_cache *c, const struct pod_brief *b, size_t pod,
				      size_t group)
{
	const struct node_group *g = &c->s->groups[group];
	const struct resources room = group_room(g), *a = &room;
	int8_t *v = &c->verdict[(size_t)b->cls * c->s->n_groups + group];

	if (*v < 0)
		*v = (int8_t)sched_fits_labels(&c->s->pods[c->rep[b->cls]], NULL, &g->tmpl.labels,
					       g->tmpl.taints, g->tmpl.n_taints, false, NULL, 0);
	if (*v != SCHED_FITS)
		return *v;
	if (b->n_ext && (a->n_ext || !b->some_ext)) /* fit_resources() on the pod itself */
		return fit_resources(a->cpu_m, a->memory, a->ephemeral, a->pods, a->ext, a->n_ext,
				     NULL, &c->s->pods[pod].requests, NULL, 0);
	/* fit_resources() when the template has no extended resources (a
	 * request of one more than 0 then never fits), in its order */
	if (a->pods < 1)
		return SCHED_NO_PODS;
	if (b->cpu_m > 0 && b->cpu_m > a->cpu_m)
		return SCHED_NO_CPU;
	if (b->memory > 0 && b->memory > a->memory)
		return SCHED_NO_MEMORY;
	if (b->ephemeral > 0 && b->ephemeral > a->ephemeral)
		return SCHED_NO_EPHEMERAL;
	return b->some_ext ? SCHED_NO_EXTENDED : SCHED_FITS;
}

/* Orders positions in s->pending by the pods' (namespace, name). */
static int rank_qcmp(const void *a, const void *b, void *ctx)
{
	const struct snapshot *s = ctx;
	const struct pod *x = &s->pods[s->pending[*(const uint32_t *)a]];
	const struct pod *y = &s->pods[s->pending[*(const uint32_t *)b]];

	return pod_name_cmp(x->ns, x->name, y->ns, y->name);
}

/* Makes the pending pods' briefs, in their order, with where their
 * (namespace, name) sorts among them: 0, or -1 out of memory. */
static int cache_prepare(struct sched_cache *c)
{
	const struct snapshot *s = c->s;
	uint32_t *order, *rank, r = 0;
	size_t i;

	if (c->prepared)
		return 0;
	order = malloc((s->n_pending ? s->n_pending : 1) * sizeof(*order));
	rank = malloc((s->n_pending ? s->n_pending : 1) * sizeof(*rank));
	if (!order || !rank)
		goto oom;
	for (i = 0; i < s->n_pending; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, s->n_pending, sizeof(*order), rank_qcmp, (void *)s);
	for (i = 0; i < s->n_pending; i++) {
		if (i && rank_qcmp(&order[i - 1], &order[i], (void *)s) != 0)
			r++;
		rank[order[i]] = r;
	}
	for (i = 0; i < s->n_pending; i++)
		if (!cache_brief(c, s->pending[i], rank[i]))
			goto oom;
	c->prepared = true;
	free(order);
	free(rank);
	return 0;
oom:
	free(order);
	free(rank);
	return -1;
}

/* A new stamp for the list of a packing, the marks made on first use: 0,
 * or -1 out of memory (the packing then sorts). */
static int cache_stamp(struct sched_cache *c)
{
	size_t n = c->s->n_pods ? c->s->n_pods : 1;

	if (!c->mark) {
		c->mark = calloc(n, sizeof(*c->mark));
		c->mark_pos = malloc(n * sizeof(*c->mark_pos));
		if (!c->mark || !c->mark_pos) {
			free(c->mark);
			free(c->mark_pos);
			c->mark = c->mark_pos = NULL;
			return -1;
		}
	}
	if (++c->stamp == 0) { /* wrapped: no mark may look current */
		memset(c->mark, 0, n * sizeof(*c->mark));
		c->stamp = 1;
	}
	return 0;
}

/* Group 'group's packing order (a valid group), or NULL out of memory. */
static struct pack_order *cache_order(struct sched_cache *c, size_t group)
{
	if (!c->order && !(c->order = calloc(c->s->n_groups, sizeof(*c->order))))
		return NULL;
	return &c->order[group];
}

/* ---- first-fit decreasing ---- */

/* A pod to drain with its sort key: the larger of its cpu and memory shares. */
struct sized_pod {
	double key;
	const struct pod *p;
	const char *ns, *name; /* the pod's, copied so sorting stays in this array */
	size_t idx; /* position in the list: last tie-breaker */
};

/* A pod of a packing: its sort key, where its name sorts (sched_cache's
 * rank, UINT32_MAX when not known: the names are compared), its position
 * in the caller's list and its requests. */
struct pack_item {
	double key;
	uint32_t rank;
	uint32_t idx;
	int64_t cpu_m, memory, ephemeral; /* its requests: no pod read to place it */
};

static double share(int64_t want, int64_t total)
{
	if (want <= 0 || total <= 0)
		return 0.0;
	return (double)want / (double)total;
}

static double size_key(const struct pod *p, const struct resources *alloc)
{
	double c = share(p->requests.cpu_m, alloc->cpu_m);
	double m = share(p->requests.memory, alloc->memory);

	return c > m ? c : m;
}

/* size_key() of a pack item. */
static double item_key(const struct pack_item *it, const struct resources *alloc)
{
	double c = share(it->cpu_m, alloc->cpu_m);
	double m = share(it->memory, alloc->memory);

	return c > m ? c : m;
}

/* Largest first; ties by namespace/name, then position. */
static int sized_pod_cmp(const struct sized_pod *x, const struct sized_pod *y)
{
	int c;

	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	c = pod_name_cmp(x->ns, x->name, y->ns, y->name);
	if (c)
		return c;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int sized_pod_qcmp(const void *a, const void *b)
{
	return sized_pod_cmp(a, b);
}

/* Largest first; ties by namespace/name (by rank when both have one: the
 * same order, equal names equal ranks), then position in 'pods'. */
static inline int pack_item_cmp(const struct snapshot *s, const uint32_t *pods,
				const struct pack_item *x, const struct pack_item *y)
{
	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	if (x->rank != UINT32_MAX && y->rank != UINT32_MAX) {
		if (x->rank != y->rank)
			return x->rank < y->rank ? -1 : 1;
	} else {
		const struct pod *a = &s->pods[pods[x->idx]], *b = &s->pods[pods[y->idx]];
		int c = pod_name_cmp(a->ns, a->name, b->ns, b->name);

		if (c)
			return c;
	}
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Sorts a[0..n-1] by pack_item_cmp: a bottom-up merge sort through 'tmp'
 * (n elements), insertion-sorted runs of 16 first. The order is total
 * (the position breaks every tie), so any correct sort agrees. */
static void pack_item_sort(const struct snapshot *s, const uint32_t *pods, struct pack_item *a,
			   struct pack_item *tmp, size_t n)
{
	struct pack_item *src = a, *dst = tmp, *t;
	size_t i, j, w, lo;

	for (lo = 0; lo < n; lo += 16) {
		size_t hi = lo + 16 < n ? lo + 16 : n;

		for (i = lo + 1; i < hi; i++) {
			struct pack_item v = a[i];

			for (j = i; j > lo && pack_item_cmp(s, pods, &v, &a[j - 1]) < 0; j--)
				a[j] = a[j - 1];
			a[j] = v;
		}
	}
	for (w = 16; w < n; w *= 2) {
		for (lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n;
			size_t hi = lo + 2 * w < n ? lo + 2 * w : n, k = lo;

			i = lo;
			j = mid;
			while (i < mid && j < hi)
				dst[k++] = pack_item_cmp(s, pods, &src[j], &src[i]) < 0 ? src[j++] :
											  src[i++];
			while (i < mid)
				dst[k++] = src[i++];
			while (j < hi)
				dst[k++] = src[j++];
		}
		t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
}

/* The order key of a ranked item as bytes: the size key descending (a
 * double >= 0 compares as its bits), then the rank ascending. */
static inline uint64_t item_key_bits(const struct pack_item *x)
{
	uint64_t b;

	memcpy(&b, &x->key, sizeof(b));
	return ~b;
}

/* A ranked item as pack_item_radix() moves it: 16 bytes, not 40. */
struct radix_rec {
	uint64_t key;     /* item_key_bits() */
	uint64_t rank_at; /* rank << 32 | the item's position */
};

/* The byte a radix pass sorts by: passes 0-3 the rank's, 4-11 the key's. */
static inline unsigned radix_byte(const struct radix_rec *r, unsigned pass)
{
	return pass < 4 ? (unsigned)(r->rank_at >> (32 + 8 * pass)) & 0xff :
			  (unsigned)(r->key >> (8 * (pass - 4))) & 0xff;
}

/*
 * pack_item_sort() for n >= 1 items that all have a rank: a stable radix
 * sort, least significant byte first, by rank and then by key (the items
 * come in position order, which stability keeps for equal pairs), so the
 * same order without a comparison to mispredict. It sorts 16-byte
 * records in 'tmp' (room for n items holds two arrays of them and the
 * permutation), counts every byte in one pass, skips the bytes all items
 * share, and then moves the items into place along the permutation's
 * cycles.
 */
static void pack_item_radix(struct pack_item *a, struct pack_item *tmp, size_t n)
{
	struct radix_rec *src = (struct radix_rec *)(void *)tmp, *dst = src + n, *t;
	uint32_t count[12][256] = {{0}}, *perm;
	size_t i, j, k;
	unsigned pass;

	for (i = 0; i < n; i++) {
		src[i].key = item_key_bits(&a[i]);
		src[i].rank_at = (uint64_t)a[i].rank << 32 | (uint32_t)i;
		for (pass = 0; pass < 12; pass++)
			count[pass][radix_byte(&src[i], pass)]++;
	}
	for (pass = 0; pass < 12; pass++) {
		uint32_t sum = 0, *c = count[pass];

		if (c[radix_byte(&src[0], pass)] == n)
			continue; /* one value: this byte orders nothing */
		for (i = 0; i < 256; i++) {
			uint32_t x = c[i];

			c[i] = sum;
			sum += x;
		}
		for (i = 0; i < n; i++)
			dst[c[radix_byte(&src[i], pass)]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	/* item i goes where perm says it comes from: follow each cycle */
	perm = (uint32_t *)(void *)dst; /* the other array is free now */
	for (i = 0; i < n; i++)
		perm[i] = (uint32_t)src[i].rank_at;
	for (i = 0; i < n; i++) {
		struct pack_item v;

		if (perm[i] == i)
			continue;
		v = a[i];
		for (j = i;; j = k) {
			k = perm[j];
			perm[j] = (uint32_t)j;
			if (k == i)
				break;
			a[j] = a[k];
		}
		a[j] = v;
	}
}

/*
 * A bin: free room of one template node. Its extended resources are the
 * template's, in template order, at ext[bin * n_ext ...] of the pack state.
 *
 * First fit is indexed by a max tree over the bins in opening order: each
 * tree node holds, per resource, the most any bin below it has free. A
 * search goes down the leftmost subtree whose maxima all cover the
 * request and backs up when the bins there do not, so it finds the same
 * first bin a scan from bin 0 would, without looking at most full bins.
 */
struct bin {
	int64_t cpu_m, memory, ephemeral, pods;
	uint32_t n_placed;
};

/* What one pod needs, with its extended resources as template indices.
 * 'want' is the least a bin (or a tree node's maxima) must have per tree
 * dim up to DIM_EPH: a request of 0 always fits, so INT64_MIN there. */
struct need {
	int64_t cpu_m, memory, ephemeral;
	int64_t want[5];
	size_t ext0;            /* the tree's first extended resource dim */
	size_t n_ext;
	const long *ext_ix;     /* template index per request ext, -1 absent */
	const int64_t *ext_val;
};

/* DIM_SHARE: the smaller of a bin's free cpu and memory as fixed-point
 * shares of the template. A bin that takes a pod has at least the smaller
 * of the pod's shares there, so a subtree whose most is less cannot: this
 * prunes the subtrees of bins full in one resource and free in the other,
 * where the per-resource maxima alone would send the search down.
 *
 * DIM_EPH is in the tree only when some pod requests ephemeral storage,
 * the extended resources (the template's) after it: without either, a
 * tree node is 32 bytes and the children a search looks at in turn fill
 * two cache lines. */
enum { DIM_CPU, DIM_MEM, DIM_PODS, DIM_SHARE, DIM_EPH };

#define SHARE_SCALE 1048576.0

/* Children per tree node: the tree is half as deep as a binary one, a
 * search looks at a node's children in turn, and four nodes of the plain
 * tree fill two cache lines. Level d of the tree is nodes FANOUT^d to
 * 2 FANOUT^d - 1 (the others are not used). */
#define FANOUT 4

struct packing {
	const struct resources *tmpl; /* template allocatable */
	struct bin *bins;
	int64_t *ext;                 /* n_bins * tmpl->n_ext */
	size_t n_bins, cap_bins;
	/* the max tree: node i (1 = root, children at FANOUT * i ..., leaves
	 * at leaf0 + bin, leaf0 a power of FANOUT) holds dims values at
	 * seg[i * dims]; leaves past n_bins hold INT64_MIN */
	int64_t *seg;                 /* 64-byte aligned */
	size_t dims, leaf0;
	size_t ext0;                  /* DIM_EPH, or DIM_EPH + 1 with storage */
	double cpu_scale, mem_scale;  /* share_scale() of the template's */
};

static int64_t *seg_at(const struct packing *k, size_t node)
{
	return &k->seg[node * k->dims];
}

/* v * scale (scale = SHARE_SCALE / the template's total), truncated:
 * rounding and truncation are both monotonic, so v >= w gives
 * fixed_share(v) >= fixed_share(w), all a bound needs. No total (scale
 * 0): no bound (INT64_MAX). */
static int64_t fixed_share(int64_t v, double scale)
{
	double x;

	if (scale <= 0)
		return INT64_MAX;
	x = (double)v * scale;
	if (x >= 9.0e18)
		return INT64_MAX - 1;
	if (x <= -9.0e18)
		return INT64_MIN + 1;
	return (int64_t)x;
}

static double share_scale(int64_t total)
{
	return total > 0 ? SHARE_SCALE / (double)total : 0;
}

static int64_t bin_share(const struct packing *k, const struct bin *b)
{
	int64_t c = fixed_share(b->cpu_m, k->cpu_scale);
	int64_t m = fixed_share(b->memory, k->mem_scale);

	return c < m ? c : m;
}

/* The bound for a pod: a request of 0 (or less), or a template without
 * the resource, puts no bound on it. */
static int64_t need_share(const struct packing *k, int64_t cpu_m, int64_t memory)
{
	int64_t c = cpu_m > 0 && k->cpu_scale > 0 ? fixed_share(cpu_m, k->cpu_scale) : INT64_MIN;
	int64_t m = memory > 0 && k->mem_scale > 0 ? fixed_share(memory, k->mem_scale) : INT64_MIN;

	return c < m ? c : m;
}

/* What a pod of these requests needs of k's bins; no extended resources. */
static struct need need_of(const struct packing *k, int64_t cpu_m, int64_t memory,
			   int64_t ephemeral)
{
	struct need q = {cpu_m, memory, ephemeral, {0}, k->ext0, 0, NULL, NULL};

	q.want[DIM_CPU] = cpu_m > 0 ? cpu_m : INT64_MIN;
	q.want[DIM_MEM] = memory > 0 ? memory : INT64_MIN;
	q.want[DIM_PODS] = 1;
	q.want[DIM_SHARE] = need_share(k, cpu_m, memory);
	q.want[DIM_EPH] = ephemeral > 0 ? ephemeral : INT64_MIN;
	return q;
}

/* Sets inner tree node 'node' (of a tree of 'dims') to the maxima of its
 * children: false when it held them already. */
static inline __attribute__((always_inline)) bool seg_pull(struct packing *k, size_t node,
							    size_t dims)
{
	int64_t *x = &k->seg[node * dims], *c = &k->seg[FANOUT * node * dims];
	bool changed = false;
	size_t d, j;

	for (d = 0; d < dims; d++) {
		int64_t m = c[d];

		for (j = 1; j < FANOUT; j++)
			m = c[j * dims + d] > m ? c[j * dims + d] : m;
		if (x[d] != m) {
			x[d] = m;
			changed = true;
		}
	}
	return changed;
}

/* Recomputes the maxima above tree node 'node', for a tree of 'dims'. */
static inline __attribute__((always_inline)) void seg_climb(struct packing *k, size_t node,
							     size_t dims)
{
	for (node /= FANOUT; node >= 1; node /= FANOUT)
		if (!seg_pull(k, node, dims))
			break; /* the maxima above stay as they are */
}

/* Writes bin 'bin's free room into its leaf. */
static void seg_leaf(struct packing *k, size_t bin)
{
	const struct bin *b = &k->bins[bin];
	size_t d, ne = k->dims - k->ext0;
	int64_t *v = seg_at(k, k->leaf0 + bin);

	v[DIM_CPU] = b->cpu_m;
	v[DIM_MEM] = b->memory;
	v[DIM_PODS] = b->pods;
	v[DIM_SHARE] = bin_share(k, b);
	if (k->ext0 > DIM_EPH)
		v[DIM_EPH] = b->ephemeral;
	for (d = 0; d < ne; d++)
		v[k->ext0 + d] = k->ext[bin * ne + d];
}

/* Recomputes the maxima above leaf 'bin'. */
static void seg_update(struct packing *k, size_t bin)
{
	size_t node = k->leaf0 + bin;

	seg_leaf(k, bin);
	if (k->dims == DIM_EPH)
		seg_climb(k, node, DIM_EPH); /* the plain tree: its stride a constant */
	else
		seg_climb(k, node, k->dims);
}

/* A tree for 'cap' leaves (a power of FANOUT), the open bins copied in. */
static int seg_build(struct packing *k, size_t cap)
{
	size_t node, level, i;
	void *mem;
	int64_t *seg;

	if (cap > SIZE_MAX / 2 / sizeof(int64_t) / k->dims)
		return -1;
	if (posix_memalign(&mem, 64, 2 * cap * k->dims * sizeof(*seg)) != 0)
		return -1;
	seg = mem;
	free(k->seg);
	k->seg = seg;
	k->leaf0 = cap;
	for (i = 0; i < 2 * cap * k->dims; i++)
		seg[i] = INT64_MIN;
	for (i = 0; i < k->n_bins; i++)
		seg_leaf(k, i);
	for (level = cap / FANOUT; level >= 1; level /= FANOUT)
		for (node = level; node < 2 * level; node++)
			seg_pull(k, node, k->dims);
	return 0;
}

/* Opens an empty bin; 'index' false leaves the tree to the bin_take()
 * that follows (one update for both). */
static int packing_open(struct packing *k, bool index)
{
	size_t i, ne = k->tmpl->n_ext;
	struct bin *b;

	if (k->n_bins == k->cap_bins) {
		size_t cap = k->cap_bins ? k->cap_bins * 2 : 16;
		struct bin *nb;

		if (cap > SIZE_MAX / sizeof(*nb) ||
		    (ne && cap > SIZE_MAX / sizeof(int64_t) / ne))
			return -1;
		nb = realloc(k->bins, cap * sizeof(*nb));
		if (!nb)
			return -1;
		k->bins = nb;
		if (ne) {
			int64_t *e = realloc(k->ext, cap * ne * sizeof(*e));

			if (!e)
				return -1;
			k->ext = e;
		}
		k->cap_bins = cap;
		k->dims = k->ext0 + ne;
		if (cap > k->leaf0) {
			size_t leaves = k->leaf0 ? k->leaf0 : 1;

			while (leaves < cap)
				leaves *= FANOUT;
			if (seg_build(k, leaves) < 0)
				return -1;
		}
	}
	b = &k->bins[k->n_bins];
	b->cpu_m = k->tmpl->cpu_m;
	b->memory = k->tmpl->memory;
	b->ephemeral = k->tmpl->ephemeral;
	b->pods = k->tmpl->pods;
	b->n_placed = 0;
	for (i = 0; i < ne; i++)
		k->ext[k->n_bins * ne + i] = k->tmpl->ext[i].value;
	k->n_bins++;
	if (index)
		seg_update(k, k->n_bins - 1);
	return 0;
}

/* Index of extended resource 'name' in the template, or -1. */
static long tmpl_ext_index(const struct resources *tmpl, const char *name)
{
	size_t i;

	for (i = 0; i < tmpl->n_ext; i++)
		if (strcmp(tmpl->ext[i].name, name) == 0)
			return (long)i;
	return -1;
}

/* room_covers() on the four plain dims only: cpu, memory, a pod slot and
 * the share bound. */
static inline __attribute__((always_inline)) bool plain_covers(const int64_t *v, const struct need *q)
{
	return !(q->want[DIM_PODS] > v[DIM_PODS] || q->want[DIM_SHARE] > v[DIM_SHARE] ||
		 q->want[DIM_CPU] > v[DIM_CPU] || q->want[DIM_MEM] > v[DIM_MEM]);
}

/* Could some bin with free room 'v' (a bin's, or maxima) take 'q'? The
 * rule of a single bin: a request of 0 always fits, a pod slot is needed,
 * an extended resource the template lacks never fits. */
static inline __attribute__((always_inline)) bool room_covers(const int64_t *v, const struct need *q)
{
	size_t i;

	if (!plain_covers(v, q) || (q->ext0 > DIM_EPH && q->want[DIM_EPH] > v[DIM_EPH]))
		return false;
	for (i = 0; i < q->n_ext; i++) {
		if (q->ext_val[i] <= 0)
			continue;
		if (q->ext_ix[i] < 0 || q->ext_val[i] > v[q->ext0 + (size_t)q->ext_ix[i]])
			return false;
	}
	return true;
}

/* room_covers() of tree node 'node'; 'plain': the tree has only the four
 * plain dims and the pod no extended resources, so a constant stride and
 * four comparisons. */
static inline __attribute__((always_inline)) bool covers_at(const struct packing *k, size_t node,
							     const struct need *q, bool plain)
{
	if (!plain)
		return room_covers(seg_at(k, node), q);
	return plain_covers(&k->seg[node * DIM_EPH], q);
}

/* From tree node 'node', the next subtree to its right whose maxima cover
 * 'q': climbs to the first right sibling that does. False when none. */
static inline __attribute__((always_inline)) bool next_covering(const struct packing *k,
								const struct need *q, size_t *node,
								bool plain)
{
	size_t x = *node;

	for (;;) {
		if (x <= 1)
			return false; /* the root: nothing to its right */
		if (x % FANOUT == FANOUT - 1) {
			x /= FANOUT; /* the last child: on to its parent's sibling */
			continue;
		}
		x++; /* the next sibling */
		if (covers_at(k, x, q, plain)) {
			*node = x;
			return true;
		}
	}
}

/* Is 'q' the size of pack item 'prev', neither with extended resources
 * ('prev_plain': prev had none)? */
static bool same_as_last(const struct need *q, const struct pack_item *prev, bool prev_plain)
{
	return prev && prev_plain && q->n_ext == 0 && q->cpu_m == prev->cpu_m &&
	       q->memory == prev->memory && q->ephemeral == prev->ephemeral;
}

static inline __attribute__((always_inline)) long first_fit(const struct packing *k,
							     const struct need *q, size_t start,
							     bool plain)
{
	size_t node;

	if (start >= k->n_bins)
		return -1;
	if (start == 0) {
		if (!covers_at(k, 1, q, plain))
			return -1;
		node = 1;
	} else {
		node = k->leaf0 + start;
		if (!covers_at(k, node, q, plain) && !next_covering(k, q, &node, plain))
			return -1;
	}
	for (;;) {
		/* go down: into the first child that covers it */
		while (node < k->leaf0) {
			size_t c = FANOUT * node, j;

			for (j = 0; j < FANOUT && !covers_at(k, c + j, q, plain); j++)
				;
			if (j == FANOUT)
				break;
			node = c + j;
		}
		if (node >= k->leaf0)
			return (long)(node - k->leaf0);
		/* no child covers it: back up to the next right sibling that does */
		if (!next_covering(k, q, &node, plain))
			return -1;
	}
}

/* The first open bin at or after 'start' that takes 'q', or -1: the bin a
 * scan from 'start' would find, without looking at the bins too full. */
static long first_fit_from(const struct packing *k, const struct need *q, size_t start)
{
	if (k->dims == DIM_EPH && q->n_ext == 0)
		return first_fit(k, q, start, true);
	return first_fit(k, q, start, false);
}

static void bin_take(struct packing *k, size_t bin, const struct need *q)
{
	struct bin *b = &k->bins[bin];
	size_t i;

	b->cpu_m -= q->cpu_m;
	b->memory -= q->memory;
	b->ephemeral -= q->ephemeral;
	b->pods -= 1;
	b->n_placed++;
	for (i = 0; i < q->n_ext; i++)
		if (q->ext_ix[i] >= 0)
			k->ext[bin * k->tmpl->n_ext + (size_t)q->ext_ix[i]] -= q->ext_val[i];
	seg_update(k, bin);
}

/* Keeps 'items' (sorted, all ranked, of list 'pods', no pod twice) as
 * group 'group's packing order, unless it has one as large or the orders
 * would pass ORDER_BUDGET; out of memory keeps the old one. */
static void cache_keep_order(struct sched_cache *c, size_t group, const uint32_t *pods,
			     const struct pack_item *items, size_t n)
{
	struct pack_order *o = cache_order(c, group);
	size_t i, words = c->s->n_pods / 64 + 1, have, need;
	uint32_t *order;
	uint64_t *member;

	if (!o || n <= o->n)
		return;
	have = o->pods ? o->n * sizeof(*order) + words * sizeof(*member) : 0;
	need = n * sizeof(*order) + words * sizeof(*member);
	if (c->order_bytes - have + need > ORDER_BUDGET)
		return;
	order = malloc(n * sizeof(*order));
	member = o->member ? o->member : malloc(words * sizeof(*member));
	if (!order || !member) {
		free(order);
		if (member != o->member)
			free(member);
		return;
	}
	memset(member, 0, words * sizeof(*member));
	o->exact = true;
	for (i = 0; i < n; i++) {
		uint32_t pod = pods[items[i].idx];

		order[i] = pod;
		member[pod / 64] |= (uint64_t)1 << (pod % 64);
		if (i && items[i].key == items[i - 1].key && items[i].rank == items[i - 1].rank)
			o->exact = false;
	}
	c->order_bytes += need - have;
	free(o->pods);
	o->pods = order;
	o->n = n;
	o->member = member;
}

/* The items of the list marked with the cache's current stamp, in the
 * group's order 'o' less the pods the list lacks: every item is there
 * (it fits the group), so all are ranked. */
static void order_walk(const struct sched_cache *c, const struct pack_order *o,
		       struct pack_item *items)
{
	size_t i, m = 0;

	for (i = 0; i < o->n; i++) {
		uint32_t pod = o->pods[i];
		const struct pod_brief *b;

		if (c->mark[pod] != c->stamp)
			continue;
		b = &c->brief[c->slot[pod] - 1];
		items[m++] = (struct pack_item){0, b->rank, c->mark_pos[pod], b->cpu_m, b->memory,
						b->ephemeral};
	}
}

/* ---- what a packing plans, as sites of the relations index ---- */

/* bin_site[bin] = site, the array grown as needed. */
static int bin_site_set(long **bin_site, size_t *cap, size_t bin, long site)
{
	if (site < 0)
		return -1;
	if (bin >= *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		long *nb;

		while (ncap <= bin)
			ncap *= 2;
		nb = realloc(*bin_site, ncap * sizeof(*nb));
		if (!nb)
			return -1;
		*bin_site = nb;
		*cap = ncap;
	}
	(*bin_site)[bin] = site;
	return 0;
}

/* bin_gi[bin] = gi, the array grown as needed. */
static int bin_gi_set(uint8_t **bin_gi, size_t *cap, size_t bin, size_t gi)
{
	if (bin >= *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		uint8_t *nb;

		while (ncap <= bin)
			ncap *= 2;
		nb = realloc(*bin_gi, ncap);
		if (!nb)
			return -1;
		*bin_gi = nb;
		*cap = ncap;
	}
	(*bin_gi)[bin] = (uint8_t)gi;
	return 0;
}

/* Bin 'bin' gets the free room of node 'node' (its allocatable less what
 * its bound pods request), extended resources by the template's names. */
static void bin_of_node(const struct snapshot *s, size_t node, struct packing *k, size_t bin)
{
	const struct node *nd = &s->nodes[node];
	const struct resources *a = &nd->allocatable, *u = &nd->requested;
	struct bin *b = &k->bins[bin];
	size_t i, ne = k->tmpl->n_ext;

	b->cpu_m = a->cpu_m - u->cpu_m;
	b->memory = a->memory - u->memory;
	b->ephemeral = a->ephemeral - u->ephemeral;
	b->pods = a->pods - u->pods;
	for (i = 0; i < ne; i++) {
		const char *name = k->tmpl->ext[i].name;

		k->ext[bin * ne + i] = resources_ext(a, name) - resources_ext(u, name);
	}
}

/* Bin 'bin' gets the room 'r' of an empty node of its group, extended
 * resources by the template's names (0 for those 'r' lacks). */
static void bin_of_group(struct packing *k, size_t bin, const struct resources *r)
{
	struct bin *b = &k->bins[bin];
	size_t i, ne = k->tmpl->n_ext;

	b->cpu_m = r->cpu_m;
	b->memory = r->memory;
	b->ephemeral = r->ephemeral;
	b->pods = r->pods;
	for (i = 0; i < ne; i++)
		k->ext[bin * ne + i] = resources_ext(r, k->tmpl->ext[i].name);
}

/* "<group>-<what>-<bin>" into 'out' (room for both names and 24 more):
 * a packing names every node it plans, so not through snprintf. */
static void planned_name(char *out, const char *group, const char *what, size_t bin)
{
	char digits[24];
	size_t lg = strlen(group), lw = strlen(what), nd = 0;

	do {
		digits[nd++] = (char)('0' + bin % 10);
		bin /= 10;
	} while (bin);
	memcpy(out, group, lg);
	out += lg;
	*out++ = '-';
	memcpy(out, what, lw);
	out += lw;
	*out++ = '-';
	while (nd)
		*out++ = digits[--nd];
	*out = '\0';
}

/*
 * A planned node of group 'g' as a site: the template's labels with
 * kubernetes.io/hostname set to its name "<group>-<what>-<bin>" (the
 * scheduler's hostname domain is the node), the host ports of the group's
 * DaemonSets taken. -1 when out of memory.
 */
static long planned_site(const struct snapshot *s, struct topo *t, struct planned *pl,
			 const struct node_group *g, const char *what, size_t bin)
{
	const struct kvlist *tl = &g->tmpl.labels;
	struct kvlist *labels;
	struct kv *items;
	char *name;
	size_t i, n = 0, name_len = strlen(g->name) + strlen(what) + 24;
	void *blk;
	long site;

	if (pl->n == pl->cap) {
		size_t cap = pl->cap ? pl->cap * 2 : 16;
		void **nb = realloc(pl->blocks, cap * sizeof(*nb));

		if (!nb)
			return -1;
		pl->blocks = nb;
		pl->cap = cap;
	}
	blk = malloc(sizeof(*labels) + (tl->n + 1) * sizeof(*items) + name_len);
	if (!blk)
		return -1;
	labels = blk;
	items = (struct kv *)(labels + 1);
	name = (char *)(items + tl->n + 1);
	planned_name(name, g->name, what, bin);
	for (i = 0; i < tl->n; i++)
		if (!tl->items[i].key || strcmp(tl->items[i].key, HOSTNAME_LABEL) != 0)
			items[n++] = tl->items[i];
	items[n++] = (struct kv){HOSTNAME_LABEL, name};
	labels->items = items;
	labels->n = n;
	site = topo_add_planned(t, name, labels, g->tmpl.taints, g->tmpl.n_taints,
				template_site(s, g));
	if (site < 0) {
		free(blk);
		return -1;
	}
	/* its DaemonSets' pods will hold their host ports */
	if (g->n_daemonsets > 0)
		topo_hold_ports(t, (size_t)site, g->daemonset_pods, (size_t)g->n_daemonsets);
	pl->blocks[pl->n++] = blk;
	return site;
}

/* Drops the last planned block (its site rolled back already). */
static void planned_pop(struct planned *pl)
{
	if (pl->n)
		free(pl->blocks[--pl->n]);
}

/* Is node 'n' of the snapshot still starting (registered, not Ready,
 * younger than the startup time): part of its group's upcoming nodes, as
 * snapshot_finish() counts them. */
static bool node_starting(const struct snapshot *s, const struct node *n)
{
	return n->group >= 0 && !n->ready && !n->unschedulable && n->created > 0 &&
	       s->now - n->created < MODEL_NODE_STARTUP_S;
}

/* The starting nodes of group 'group', in snapshot order, at most 'max';
 * *n gets their count. NULL with *n 0 when there are none or on OOM
 * (*oom set). */
static uint32_t *starting_nodes(const struct snapshot *s, size_t group, size_t max, size_t *n,
				bool *oom)
{
	uint32_t *v = NULL;
	size_t i;

	*n = 0;
	*oom = false;
	for (i = 0; i < s->n_nodes && *n < max; i++) {
		const struct node *nd = &s->nodes[i];

		if (nd->group != (int32_t)group || nd->removing || !node_starting(s, nd))
			continue;
		if (!v && !(v = malloc(max * sizeof(*v)))) {
			*oom = true;
			return NULL;
		}
		v[(*n)++] = (uint32_t)i;
	}
	return v;
}

int32_t sched_upcoming_node(const struct snapshot *s, size_t group, int32_t bin)
{
	size_t i;
	int32_t k = 0;

	if (bin < 0)
		return -1;
	for (i = 0; i < s->n_nodes; i++) {
		const struct node *nd = &s->nodes[i];

		if (nd->group != (int32_t)group || nd->removing || !node_starting(s, nd))
			continue;
		if (k++ == bin)
			return (int32_t)i;
	}
	return -1;
}

/* The slot of a placement's planned node in the prior sites' table
 * (grown as needed): its own, or the empty one to fill. */
static struct prior_site *prior_slot(struct relations *r, const struct pack_prior *a, bool up)
{
	size_t j;

	if ((r->n_ps + 1) * 2 > r->cap_ps) {
		size_t cap = r->cap_ps ? r->cap_ps * 2 : 64, i;
		struct prior_site *np = calloc(cap, sizeof(*np));

		if (!np)
			return NULL;
		for (i = 0; i < r->cap_ps; i++) {
			const struct prior_site *o = &r->ps[i];

			if (!o->used)
				continue;
			for (j = prior_hash(o->step, o->group, o->bin, o->up) & (cap - 1); np[j].used;
			     j = (j + 1) & (cap - 1))
				;
			np[j] = *o;
		}
		free(r->ps);
		r->ps = np;
		r->cap_ps = cap;
	}
	for (j = prior_hash(a->step, a->group, a->bin, up) & (r->cap_ps - 1); r->ps[j].used;
	     j = (j + 1) & (r->cap_ps - 1)) {
		const struct prior_site *o = &r->ps[j];

		if (o->step == a->step && o->group == a->group && o->bin == a->bin && o->up == up)
			break;
	}
	return &r->ps[j];
}

/* One earlier placement: its planned node (made once), its pod there. */
static int apply_prior(const struct snapshot *s, struct relations *r, const struct pack_prior *a)
{
	bool up = a->bin < a->upcoming;
	struct prior_site *slot;

	if (a->group == SCHED_PRIOR_NODE) /* site i is node i */
		return topo_add_pod(r->t, (size_t)a->bin, &s->pods[a->pod]);
	if (!(slot = prior_slot(r, a, up)))
		return -1;
	if (!slot->used) {
		size_t n_start = 0;
		bool oom_start;
		uint32_t *start = up ? starting_nodes(s, a->group, (size_t)a->bin + 1, &n_start,
						      &oom_start) : NULL;
		long site;
		char what[32];

		if (up && oom_start)
			return -1;
		snprintf(what, sizeof(what), "%s%u", up ? "upcoming" : "new", (unsigned)a->step);
		if (up && (size_t)a->bin < n_start)
			site = (long)start[a->bin];
		else
			site = planned_site(s, r->t, &r->planned, &s->groups[a->group], what,
					    up ? (size_t)a->bin : (size_t)(a->bin - a->upcoming));
		free(start);
		if (site < 0)
			return -1;
		*slot = (struct prior_site){a->step, a->group, a->bin, up, true, site};
		r->n_ps++;
	}
	return topo_add_pod(r->t, (size_t)slot->site, &s->pods[a->pod]);
}

/*
 * The index with the earlier placements 'prior' applied: those applied
 * already (a prefix of the list) are kept, the rest added. NULL with a
 * message on a bad placement or when out of memory.
 */
static struct topo *relations_after(const struct snapshot *s, const struct pack_prior *prior,
				    size_t n_prior, struct errbuf *err)
{
	struct relations *r = relations_of(s);
	size_t i;

	for (i = 0; i < n_prior; i++) {
		const struct pack_prior *a = &prior[i];

		if (a->pod >= s->n_pods || a->bin < 0 ||
		    (a->group == SCHED_PRIOR_NODE ? (size_t)a->bin >= s->n_nodes : a->group >= s->n_groups)) {
			errbuf_set(err, "pack: earlier placement %zu names no pod, group, node or bin", i);
			return NULL;
		}
	}
	if (!r)
		goto oom;
	if (r->n_applied > n_prior ||
	    (r->n_applied && memcmp(r->applied, prior, r->n_applied * sizeof(*prior)) != 0)) {
		if (relations_reset(s, r) < 0)
			goto oom;
	}
	if (n_prior > r->cap_applied) {
		struct pack_prior *na = realloc(r->applied, n_prior * sizeof(*na));

		if (!na)
			goto oom;
		r->applied = na;
		r->cap_applied = n_prior;
	}
	for (i = r->n_applied; i < n_prior; i++) {
		if (apply_prior(s, r, &prior[i]) < 0)
			goto oom;
		r->applied[r->n_applied++] = prior[i];
	}
	return r->t;
oom:
	errbuf_set(err, "pack: out of memory for earlier placements");
	if (r)
		relations_reset(s, r);
	return NULL;
}

enum sched_fit sched_fits_group(const struct snapshot *s, const struct pod *p, size_t group,
				char *detail, size_t detail_len)
{
	const struct node_group *g;
	struct planned pl = {0};
	struct topo *t;
	enum sched_fit f;
	size_t mark;
	long site;

	assert(group < s->n_groups);
	g = &s->groups[group];
	f = sched_fits_template(p, g, detail, detail_len);
	if (f != SCHED_FITS || !relations_matter(s, p))
		return f;
	if (!(t = relations(s)))
		goto oom;
	mark = topo_mark(t);
	topo_set_planning(t, true);
	site = planned_site(s, t, &pl, g, "new", 0);
	f = site < 0 ? SCHED_NOT_MODELLED : topo_check(t, p, (size_t)site, detail, detail_len);
	topo_set_planning(t, false);
	if (topo_rollback(t, mark) < 0 || site < 0) {
		planned_free(&pl);
		goto oom;
	}
	planned_free(&pl);
	return f;
oom:
	if (detail && detail_len)
		snprintf(detail, detail_len, "out of memory indexing pod relations");
	return SCHED_NOT_MODELLED;
}

int sched_pack(const struct snapshot *s, const uint32_t *pods, size_t n,
	       size_t group, int max_new, struct pack_result *out,
	       struct errbuf *err)
{
	return sched_pack_upcoming(s, pods, n, group, max_new, -1, out, err);
}

/* pack() flags: new nodes open in the first group of the list that takes
 * the pod, not in turn, and the groups may differ in room (TOGETHER);
 * every group's nodes on their way are bins, not only the first's (EACH_UPCOMING) */
enum { PACK_TOGETHER = 1, PACK_EACH_UPCOMING = 2, PACK_EXISTING = 4 };

/*
 * Of the 'n' groups of a balanced packing not in 'tried', the one with the
 * fewest nodes (its size and the new nodes opened in it), ties by name
 * ('rank'): as the Cluster Autoscaler's BalanceScaleUpBetweenGroups adds
 * each node to the smallest group, the groups grow towards even sizes
 * whatever their order.
 */
static size_t smallest_group(const int64_t *size, const int *opened, const uint8_t *rank,
			     size_t n, uint64_t tried)
{
	size_t j, best = n;

	for (j = 0; j < n; j++) {
		if (tried >> j & 1)
			continue;
		if (best == n || size[j] + opened[j] < size[best] + opened[best] ||
		    (size[j] + opened[j] == size[best] + opened[best] && rank[j] < rank[best]))
			best = j;
	}
	return best;
}

/*
 * The existing nodes a packing with PACK_EXISTING may still place a pod
 * on (sched_pack_after()): Ready, schedulable, not being removed, each
 * with its free room less what the priors on it (cluster:place's, an
 * earlier packing's) took. Built the first time a pod needs it.
 */
struct existing {
	bool built;
	size_t n;
	uint32_t *node;     /* snapshot index per candidate */
	struct room *room;  /* its room left */
};

static void existing_free(struct existing *e)
{
	size_t i;

	for (i = 0; e->room && i < e->n; i++)
		room_free(&e->room[i]);
	free(e->room);
	free(e->node);
	memset(e, 0, sizeof(*e));
}

static int existing_build(const struct snapshot *s, struct existing *e,
			  const struct pack_prior *prior, size_t n_prior)
{
	int32_t *at;
	size_t i;

	e->built = true;
	if (!s->n_nodes)
		return 0;
	e->node = malloc(s->n_nodes * sizeof(*e->node));
	e->room = calloc(s->n_nodes, sizeof(*e->room));
	at = malloc(s->n_nodes * sizeof(*at));
	if (!e->node || !e->room || !at)
		goto oom;
	for (i = 0; i < s->n_nodes; i++) {
		const struct node *nd = &s->nodes[i];

		at[i] = -1;
		if (!nd->ready || nd->unschedulable || nd->removing)
			continue;
		if (room_of_node(s, i, &e->room[e->n]) < 0)
			goto oom;
		at[i] = (int32_t)e->n;
		e->node[e->n++] = (uint32_t)i;
	}
	for (i = 0; i < n_prior; i++)
		if (prior[i].group == SCHED_PRIOR_NODE && at[prior[i].bin] >= 0)
			room_take(&e->room[at[prior[i].bin]], &s->pods[prior[i].pod].requests);
	free(at);
	return 0;
oom:
	free(at);
	existing_free(e);
	e->built = true;
	return -1;
}

/* The first existing node with room whose labels, taints, volumes and
 * relations (as 't' counts now) take 'p': its room taken, its snapshot
 * index returned; -1 when none does. */
static long existing_take(const struct snapshot *s, struct existing *e, struct topo *t,
			  const struct pod *p, size_t *tries)
{
	size_t i;

	for (i = 0; i < e->n; i++) {
		const struct node *nd = &s->nodes[e->node[i]];

		++*tries;
		if (room_fits(&e->room[i], &p->requests, NULL, 0) != SCHED_FITS ||
		    sched_fits_labels(p, nd->name, &nd->labels, nd->taints, nd->n_taints, false,
				      NULL, 0) != SCHED_FITS ||
		    topo_check(t, p, e->node[i], NULL, 0) != SCHED_FITS)
			continue;
		room_take(&e->room[i], &p->requests);
		return (long)e->node[i];
	}
	return -1;
}

/*
 * The packing: onto group 'group' alone (n_mates 0), or onto new nodes of
 * 'group' and its 'mates' (similar groups, each bin with its own group's
 * room), each new node opened in the smallest of them (smallest_group():
 * its nodes and those opened so far) whose template and relations take
 * the pod: a balanced scale-up, and a spread over the groups' zones in one
 * packing. 'max_new' caps each group's new nodes (-1: none; per group in
 * 'max_each' when there are mates).
 * PACK_TOGETHER: a new node opens in the first group of the list that
 * takes the pod, and the groups' rooms may differ.
 */
static int pack(const struct snapshot *s, struct sched_cache *cache, const uint32_t *pods,
		size_t n, size_t group, int max_new, int upcoming_nodes,
		const struct pack_prior *prior, size_t n_prior, const uint32_t *mates,
		size_t n_mates, const int *max_each, unsigned flags, struct pack_result *out,
		struct errbuf *err)
{
	uint32_t gl[64];        /* the groups: 'group', then the mates */
	size_t n_gl = 1 + n_mates;
	int64_t size[64];       /* balanced: each group's nodes, the larger of target and current */
	uint8_t rank[64];       /* balanced: each group's place by name */
	uint64_t *fitmask = NULL; /* per input pod: the groups whose template takes it */
	uint8_t *related = NULL;  /* per input pod: it has relations of its own */
	bool any_related = false;
	bool any_affinity = false; /* some input pod has required pod affinity */
	int *opened = NULL;     /* per group of gl: new nodes opened */
	struct resources room;  /* a new node's, DaemonSets' requests taken */
	struct resources rooms[64]; /* each group's, with mates */
	struct res_ext *uext = NULL; /* with mates: every group's extended resources */
	bool multi = n_mates > 0 || (flags & (PACK_TOGETHER | PACK_EACH_UPCOMING)); /* out->bin_group */
	size_t gi_up, n_up_groups;
	struct topo *t = NULL;  /* the relations index, when they matter */
	size_t mark = 0;
	struct planned pl = {0};
	long *bin_site = NULL;  /* per bin: its site in 't' */
	uint8_t *bin_gi = NULL; /* per bin: its group, an index into gl */
	size_t cap_gi = 0;
	size_t cap_sites = 0;
	uint32_t *start = NULL; /* the group's starting nodes: the first upcoming bins */
	size_t n_start = 0;
	bool last_rel = false;  /* the item before had relations to check */
	const struct node_group *g;
	struct packing k = {0};
	struct pack_item *items = NULL;
	long last_bin = -1;     /* where the item before went; -1 nowhere */
	bool last_plain = true; /* it had no extended resources */
	bool all_ranked = true; /* every item has a name rank (cache) */
	bool storage = false;   /* some item requests ephemeral storage */
	struct pack_order *order = NULL; /* the group's, when the cache has one */
	bool walk = false;      /* the items are a subset of 'order' */
	bool twice = false;     /* some pod is listed twice */
	uint32_t stamp = 0;     /* of this list's marks; 0 none */
	size_t i, n_items = 0, upcoming, n_up = 0, n_scratch = 0;
	long *ext_ix = NULL;
	int64_t *ext_val = NULL;
	struct existing ex = {0};
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (n > UINT32_MAX) {
		errbuf_set(err, "pack: %zu pods, more than a packing takes", n);
		goto out;
	}
	if (group >= s->n_groups) {
		errbuf_set(err, "pack: no node group %zu (snapshot has %zu)",
			   group, s->n_groups);
		goto out;
	}
	if (n_gl > 64) {
		errbuf_set(err, "pack: %zu groups, more than a packing takes (64)", n_gl);
		goto out;
	}
	gl[0] = (uint32_t)group;
	for (i = 0; i < n_mates; i++) {
		if (mates[i] >= s->n_groups) {
			errbuf_set(err, "pack: no node group %u (snapshot has %zu)",
				   (unsigned)mates[i], s->n_groups);
			goto out;
		}
		gl[1 + i] = mates[i];
	}
	for (i = 0; n_mates && !(flags & PACK_TOGETHER) && i < n_gl; i++) {
		const struct node_group *ng = &s->groups[gl[i]];
		size_t j;

		size[i] = ng->target > ng->current ? ng->target : ng->current;
		rank[i] = 0;
		for (j = 0; j < n_gl; j++) {
			int c = strcmp(s->groups[gl[j]].name, ng->name);

			rank[i] += c < 0 || (c == 0 && j < i);
		}
	}
	if (!(opened = calloc(n_gl, sizeof(*opened)))) {
		errbuf_set(err, "pack: out of memory");
		goto out;
	}
	g = &s->groups[group];
	room = group_room(g);
	for (i = 0; i < n_gl; i++)
		rooms[i] = group_room(&s->groups[gl[i]]);
	if (n_mates) {
		/* the template's extended resources: every group's names, the
		 * first group's amounts (a bin gets its own group's) */
		size_t total = 0, j, e;

		for (i = 0; i < n_gl; i++)
			total += rooms[i].n_ext;
		if (total && !(uext = malloc(total * sizeof(*uext)))) {
			errbuf_set(err, "pack: out of memory");
			goto out;
		}
		room.n_ext = 0;
		for (i = 0; i < n_gl; i++)
			for (e = 0; e < rooms[i].n_ext; e++) {
				const char *name = rooms[i].ext[e].name;

				for (j = 0; j < room.n_ext && strcmp(uext[j].name, name) != 0; j++)
					;
				if (j == room.n_ext)
					uext[room.n_ext++] = (struct res_ext){name, i == 0 ? rooms[i].ext[e].value : 0};
			}
		room.ext = uext;
	}
	k.tmpl = &room;
	k.cpu_scale = share_scale(k.tmpl->cpu_m);
	k.mem_scale = share_scale(k.tmpl->memory);
	upcoming = g->target > g->current ? (size_t)(g->target - g->current) : 0;
	if (upcoming_nodes >= 0)
		upcoming = (size_t)upcoming_nodes;
	if (n_mates && !(flags & PACK_EACH_UPCOMING))
		upcoming = 0; /* new nodes only: the ones on their way are each group's */

	out->n_pods = n;
	if (n) {
		out->placement = malloc(n * sizeof(*out->placement));
		items = malloc(2 * n * sizeof(*items)); /* and the sort's room */
		fitmask = n_mates ? calloc(n, sizeof(*fitmask)) : NULL;
		related = malloc(n);
		if (!out->placement || !items || !related || (n_mates && !fitmask)) {
			errbuf_set(err, "pack: out of memory for %zu pods", n);
			goto out;
		}
	}
	if (cache && n && cache_prepare(cache) < 0) {
		errbuf_set(err, "pack: out of memory for %zu pods", s->n_pods);
		goto out;
	}
	if (cache && n && cache_stamp(cache) == 0) {
		stamp = cache->stamp;
		order = cache_order(cache, group);
		walk = order && order->pods && order->exact;
	}
	for (i = 0; i < n; i++) {
		const struct pod *p;
		int fit;
		size_t j;

		if (pods[i] >= s->n_pods) {
			errbuf_set(err, "pack: pod index %u out of range (snapshot has %zu pods)",
				   (unsigned)pods[i], s->n_pods);
			goto out;
		}
		out->placement[i] = -1;
		if (cache) {
			const struct pod_brief *b = cache_brief(cache, pods[i], UINT32_MAX);

			if (!b) {
				errbuf_set(err, "pack: out of memory for the pods' classes");
				goto out;
			}
			fit = cache_fits_template(cache, b, pods[i], group);
			items[n_items] = (struct pack_item){0, b->rank, (uint32_t)i, b->cpu_m, b->memory,
							    b->ephemeral};
			related[i] = b->related;
			for (j = 0; j < n_gl; j++)
				if (n_mates && (j == 0 ? fit : cache_fits_template(cache, b, pods[i],
									      gl[j])) == SCHED_FITS)
					fitmask[i] |= (uint64_t)1 << j;
		} else {
			p = &s->pods[pods[i]];
			fit = (int)sched_fits_template(p, g, NULL, 0);
			items[n_items] = (struct pack_item){0, UINT32_MAX, (uint32_t)i,
							    p->requests.cpu_m, p->requests.memory,
							    p->requests.ephemeral};
			related[i] = has_relations(p);
			for (j = 0; j < n_gl; j++)
				if (n_mates && (j == 0 ? fit : (int)sched_fits_template(
						p, &s->groups[gl[j]], NULL, 0)) == SCHED_FITS)
					fitmask[i] |= (uint64_t)1 << j;
		}
		if (n_mates)
			fit = fitmask[i] ? SCHED_FITS : fit;
		if (fit != SCHED_FITS) {
			out->n_unplaced++;
			continue;
		}
		if (stamp) {
			uint32_t pod = pods[i];

			twice = twice || cache->mark[pod] == stamp;
			cache->mark[pod] = stamp;
			cache->mark_pos[pod] = (uint32_t)i;
			walk = walk && !n_mates && (order->member[pod / 64] >> (pod % 64) & 1);
		}
		all_ranked = all_ranked && items[n_items].rank != UINT32_MAX;
		any_related = any_related || related[i];
		any_affinity = any_affinity || s->pods[pods[i]].n_affinity_terms > 0;
		storage = storage || items[n_items].ephemeral > 0;
		n_items++;
	}
	if (n_items > 1 && walk && !twice && n_items * 4 >= order->n) {
		order_walk(cache, order, items);
	} else if (n_items > 1) {
		for (i = 0; i < n_items; i++)
			items[i].key = item_key(&items[i], k.tmpl);
		if (all_ranked)
			pack_item_radix(items, items + n, n_items);
		else
			pack_item_sort(s, pods, items, items + n, n_items);
		/* (an order of several groups' pods is no order of the first's) */
		if (stamp && all_ranked && !twice && !n_mates)
			cache_keep_order(cache, group, pods, items, n_items);
	}

	k.ext0 = storage ? DIM_EPH + 1 : DIM_EPH;
	k.dims = k.ext0 + k.tmpl->n_ext;
	/* the relations index, when a pod has relations, a counted pod has
	 * anti-affinity, or earlier packings placed pods */
	{
		/* a pod without relations of its own is refused only by another's
		 * anti-affinity: a counted pod's, or an earlier placement's */
		bool use = s->n_anti_pods > 0 || any_related;

		for (i = 0; i < n_prior && !use; i++)
			use = prior[i].pod < s->n_pods && s->pods[prior[i].pod].n_anti_terms > 0;
		if (use) {
			if (!(t = relations_after(s, prior, n_prior, err)))
				goto out;
			mark = topo_mark(t);
			topo_set_planning(t, true);
		}
	}
	/* a pod with required pod affinity is not the first of its kind while
	 * a pod of this list that its terms match has yet to land: those land
	 * first (the others keep their order) */
	if (t && any_affinity) {
		size_t m = 0, a = 0;

		for (i = 0; i < n_items; i++) {
			if (s->pods[pods[items[i].idx]].n_affinity_terms)
				items[n + a++] = items[i];
			else
				items[m++] = items[i];
		}
		memcpy(items + m, items + n, a * sizeof(*items));
		topo_set_waiting(t, s->pods, pods, n);
	}
	/* the nodes on their way: the group's, or each group's in turn */
	n_up_groups = flags & PACK_EACH_UPCOMING ? n_gl : 1;
	if (!(flags & PACK_EACH_UPCOMING))
		n_up = upcoming;
	upcoming = 0;
	for (gi_up = 0; gi_up < n_up_groups; gi_up++) {
		const struct node_group *ug = &s->groups[gl[gi_up]];
		size_t u = flags & PACK_EACH_UPCOMING ?
			(ug->target > ug->current ? (size_t)(ug->target - ug->current) : 0) : n_up;
		bool oom_start;

		free(start);
		start = u ? starting_nodes(s, gl[gi_up], u, &n_start, &oom_start) : NULL;
		if (u && oom_start) {
			errbuf_set(err, "pack: out of memory for %zu upcoming nodes", u);
			goto out;
		}
		for (i = 0; i < u; i++) {
			size_t b = upcoming + i;

			if (packing_open(&k, true) < 0 || bin_gi_set(&bin_gi, &cap_gi, b, gi_up) < 0 ||
			    (t && bin_site_set(&bin_site, &cap_sites, b,
					       i < n_start ? (long)start[i] :
					       planned_site(s, t, &pl, ug, "upcoming", i)) < 0)) {
				errbuf_set(err, "pack: out of memory for %zu upcoming nodes", u);
				goto out;
			}
			/* a node that registered already: its bound pods claimed room */
			if (i < n_start) {
				bin_of_node(s, start[i], &k, b);
				seg_update(&k, b);
			} else if (n_mates) {
				bin_of_group(&k, b, &rooms[gi_up]);
				seg_update(&k, b);
			}
		}
		upcoming += u;
	}
	out->upcoming = (int)upcoming;

	for (i = 0; i < n_items; i++) {
		const struct pack_item *it = &items[i];
		struct need q = need_of(&k, it->cpu_m, it->memory, it->ephemeral);
		const struct res_ext *ext = NULL;
		const struct pod *p = &s->pods[pods[it->idx]];
		/* its own relations, or another's anti-affinity that matches it
		 * (the cache remembers that answer until a new term shows up) */
		bool rel = t && related[it->idx];

		if (t && !rel && topo_owner_groups(t) > 0) {
			struct pod_brief *pb = cache ? &cache->brief[cache->slot[pods[it->idx]] - 1] : NULL;
			size_t n_owners = topo_owner_groups(t);

			if (!pb) {
				rel = topo_relevant(t, p);
			} else if (pb->owners_seen == n_owners) {
				rel = pb->owner_match;
			} else {
				rel = pb->owner_match = topo_relevant(t, p);
				pb->owners_seen = (uint32_t)n_owners;
			}
		}
		size_t b, j;
		long f;

		/* a pod with extended resources fits only a template with some */
		if (k.tmpl->n_ext) {
			const struct resources *pr = &s->pods[pods[it->idx]].requests;

			q.n_ext = pr->n_ext;
			ext = pr->ext;
		}

		q.ext_ix = ext_ix;
		q.ext_val = ext_val;
		if (q.n_ext > n_scratch) {
			long *xi = realloc(ext_ix, q.n_ext * sizeof(*xi));
			int64_t *xv;

			if (xi)
				ext_ix = xi;
			xv = xi ? realloc(ext_val, q.n_ext * sizeof(*xv)) : NULL;
			if (!xv) {
				errbuf_set(err, "pack: out of memory");
				goto out;
			}
			ext_val = xv;
			n_scratch = q.n_ext;
			q.ext_ix = ext_ix;
			q.ext_val = ext_val;
		}
		for (j = 0; j < q.n_ext; j++) {
			ext_val[j] = ext[j].name ? ext[j].value : 0;
			ext_ix[j] = ext[j].name ? tmpl_ext_index(k.tmpl, ext[j].name) : -1;
		}
		/*
		 * A pod the size of the one before (replicas, mostly) fits none
		 * of the bins before the one that took it: those have not
		 * changed since. So its search starts there, and when no bin
		 * could take that one nor a new one be opened, it is left too.
		 */
		if (!n_mates && !rel && !last_rel &&
		    same_as_last(&q, i ? &items[i - 1] : NULL, last_plain)) {
			if (last_bin < 0) {
				out->n_unplaced++;
				continue;
			}
			f = first_fit_from(&k, &q, (size_t)last_bin);
		} else {
			f = first_fit_from(&k, &q, 0);
		}
		last_plain = q.n_ext == 0;
		last_rel = rel;
		/* the first bin with room, of a group whose template takes the
		 * pod, whose node the pod's relations allow; a refusal on a zone
		 * (any key but the hostname) holds for every node of that group */
		{
			uint64_t ok = n_mates ? fitmask[it->idx] : 1;

			while (f >= 0) {
				uint64_t gb = (uint64_t)1 << bin_gi[f];

				if (!(ok & gb)) {
					f = first_fit_from(&k, &q, (size_t)f + 1);
					continue;
				}
				if (!rel || topo_check(t, p, (size_t)bin_site[f], NULL, 0) == SCHED_FITS)
					break;
				{
					const char *key = topo_refusal_key(t);

					if (key && strcmp(key, HOSTNAME_LABEL) != 0)
						ok &= ~gb;
				}
				if (!ok)
					break;
				f = first_fit_from(&k, &q, (size_t)f + 1);
			}
			/* no bin takes it (nor a new node, when its relations
			 * refuse every group): an existing node may, now that
			 * the planned nodes count (a spread's domains, its
			 * least count, an affinity met) */
			if ((f < 0 || !ok) && rel && (flags & PACK_EXISTING) &&
			    (p->n_spread || p->n_affinity_terms)) {
				long node;

				if (!ex.built && existing_build(s, &ex, prior, n_prior) < 0) {
					errbuf_set(err, "pack: out of memory for %zu nodes", s->n_nodes);
					goto out;
				}
				if ((node = existing_take(s, &ex, t, p, &out->existing_tries)) >= 0) {
					if (!out->on_node) {
						size_t j;

						if (!(out->on_node = malloc(n * sizeof(*out->on_node)))) {
							errbuf_set(err, "pack: out of memory");
							goto out;
						}
						for (j = 0; j < n; j++)
							out->on_node[j] = -1;
					}
					if (topo_add_pod(t, (size_t)node, p) < 0) {
						errbuf_set(err, "pack: out of memory");
						goto out;
					}
					out->on_node[it->idx] = (int32_t)node;
					out->n_placed++;
					continue;
				}
			}
			if (!ok) {
				out->n_unplaced++;
				last_bin = -1;
				continue;
			}
			b = f < 0 ? k.n_bins : (size_t)f;
			if (b == k.n_bins) {
				/* a new node: of the smallest group that takes it */
				size_t tries, gi = 0;
				uint64_t tried = 0;
				bool found = false;

				for (tries = 0; tries < n_gl && !found; tries++) {
					size_t at = !n_mates || flags & PACK_TOGETHER ? tries :
						smallest_group(size, opened, rank, n_gl, tried);
					int cap = n_mates ? max_each[at] : max_new;

					gi = at;
					tried |= (uint64_t)1 << at;
					if (!(ok & ((uint64_t)1 << gi)) ||
					    (cap >= 0 && opened[gi] >= cap))
						continue;
					if (t) {
						size_t m = topo_mark(t);
						long site = planned_site(s, t, &pl, &s->groups[gl[gi]], "new",
									 (size_t)opened[gi]);

						if (site < 0 || bin_site_set(&bin_site, &cap_sites, k.n_bins,
									     site) < 0) {
							errbuf_set(err, "pack: out of memory at %zu nodes",
								   k.n_bins);
							goto out;
						}
						if (rel && topo_check(t, p, (size_t)site, NULL, 0) != SCHED_FITS) {
							/* not even a new node there takes it */
							if (topo_rollback(t, m) < 0) {
								errbuf_set(err, "pack: out of memory");
								goto out;
							}
							planned_pop(&pl);
							continue;
						}
					}
					found = true;
				}
				if (!found) {
					out->n_unplaced++;
					last_bin = -1;
					continue;
				}
				if (k.n_bins >= INT32_MAX || packing_open(&k, false) < 0 ||
				    bin_gi_set(&bin_gi, &cap_gi, k.n_bins - 1, gi) < 0) {
					errbuf_set(err, "pack: out of memory at %zu nodes",
						   k.n_bins);
					goto out;
				}
				if (n_mates)
					bin_of_group(&k, k.n_bins - 1, &rooms[gi]);
				opened[gi]++;
				/* fits: it passed sched_fits_template() */
			}
		}
		if (t && topo_add_pod(t, (size_t)bin_site[b], p) < 0) {
			errbuf_set(err, "pack: out of memory");
			goto out;
		}
		bin_take(&k, b, &q);
		out->placement[items[i].idx] = (int32_t)b;
		out->n_placed++;
		last_bin = (long)b;
	}

	for (i = 0; i < upcoming; i++)
		if (k.bins[i].n_placed)
			out->upcoming_used++;
	out->new_nodes = (int)(k.n_bins - upcoming);
	if (out->new_nodes > 0) {
		double free_cpu = 0, free_mem = 0, all_cpu = 0, all_mem = 0;

		for (i = upcoming; i < k.n_bins; i++) {
			const struct resources *r = n_mates ? &rooms[bin_gi[i]] : k.tmpl;

			free_cpu += k.bins[i].cpu_m > 0 ? (double)k.bins[i].cpu_m : 0;
			free_mem += k.bins[i].memory > 0 ? (double)k.bins[i].memory : 0;
			all_cpu += r->cpu_m > 0 ? (double)r->cpu_m : 0;
			all_mem += r->memory > 0 ? (double)r->memory : 0;
		}
		if (all_cpu > 0)
			out->waste_cpu = free_cpu / all_cpu;
		if (all_mem > 0)
			out->waste_memory = free_mem / all_mem;
	}
	rc = 0;
out:
	if (t) {
		topo_set_waiting(t, NULL, NULL, 0);
		topo_set_planning(t, false);
		if (topo_rollback(t, mark) < 0 && rc == 0) {
			errbuf_set(err, "pack: out of memory");
			rc = -1;
		}
	}
	planned_free(&pl);
	free(bin_site);
	if (rc == 0 && multi) {
		out->bin_group = malloc((k.n_bins ? k.n_bins : 1) * sizeof(*out->bin_group));
		if (!out->bin_group) {
			errbuf_set(err, "pack: out of memory");
			rc = -1;
		}
		for (i = 0; out->bin_group && i < k.n_bins; i++)
			out->bin_group[i] = (int32_t)gl[bin_gi[i]];
		out->n_bins = k.n_bins;
	}
	free(bin_gi);
	existing_free(&ex);
	free(uext);
	free(opened);
	free(fitmask);
	free(related);
	free(start);
	if (rc < 0)
		pack_result_free(out);
	free(items);
	free(k.bins);
	free(k.ext);
	free(k.seg);
	free(ext_ix);
	free(ext_val);
	return rc;
}

/* A bin's free room from a node's (extended resources checked apart). */
static void bin_of_room(struct bin *b, const struct room *r)
{
	b->cpu_m = r->cpu_m;
	b->memory = r->memory;
	b->ephemeral = r->ephemeral;
	b->pods = r->pods;
}

int sched_place(const struct snapshot *s, const uint32_t *pods, size_t n, int32_t *dest,
		size_t *n_placed, struct errbuf *err)
{
	/* no template: no share bound, no extended resources in the tree
	 * (room_fits() checks those on the node the tree finds) */
	static const struct resources no_template;
	struct packing k = {0};
	struct room *rooms = NULL;
	uint32_t *cand = NULL;
	size_t n_cand = 0, i, cap = 1, mark = 0;
	struct topo *t = NULL;
	int rc = -1;

	*n_placed = 0;
	for (i = 0; i < n; i++)
		dest[i] = -1;
	if (n == 0 || s->n_nodes == 0)
		return 0;
	k.tmpl = &no_template;
	k.ext0 = DIM_EPH;
	for (i = 0; i < n; i++)
		if (pods[i] < s->n_pods && s->pods[pods[i]].requests.ephemeral > 0)
			k.ext0 = DIM_EPH + 1;
	k.dims = k.ext0;
	{
		bool use = s->n_anti_pods > 0;

		for (i = 0; i < n && !use; i++)
			use = pods[i] < s->n_pods && has_relations(&s->pods[pods[i]]);
		if (use) {
			if (!(t = relations(s)))
				goto oom;
			mark = topo_mark(t);
		}
	}
	cand = malloc(s->n_nodes * sizeof(*cand));
	rooms = calloc(s->n_nodes, sizeof(*rooms));
	k.bins = malloc(s->n_nodes * sizeof(*k.bins));
	if (!cand || !rooms || !k.bins)
		goto oom;
	for (i = 0; i < s->n_nodes; i++) {
		const struct node *nd = &s->nodes[i];

		if (!nd->ready || nd->unschedulable || nd->removing)
			continue;
		if (room_of_node(s, i, &rooms[n_cand]) < 0)
			goto oom;
		bin_of_room(&k.bins[n_cand], &rooms[n_cand]);
		k.bins[n_cand].n_placed = 0;
		cand[n_cand++] = (uint32_t)i;
	}
	k.n_bins = k.cap_bins = n_cand;
	while (cap < n_cand)
		cap *= FANOUT;
	if (n_cand && seg_build(&k, cap) < 0)
		goto oom;
	for (i = 0; i < n && n_cand; i++) {
		const struct pod *p;
		struct need q;
		long f;

		if (pods[i] >= s->n_pods) {
			errbuf_set(err, "place: pod index %u out of range (snapshot has %zu pods)",
				   (unsigned)pods[i], s->n_pods);
			goto out;
		}
		p = &s->pods[pods[i]];
		q = need_of(&k, p->requests.cpu_m, p->requests.memory, p->requests.ephemeral);
		/* the tree finds, in node order, the nodes with the cpu, memory,
		 * storage and a pod slot; the first of those that also has the
		 * extended resources and takes the pod's labels wins */
		for (f = first_fit_from(&k, &q, 0); f >= 0; f = first_fit_from(&k, &q, (size_t)f + 1)) {
			const struct node *nd = &s->nodes[cand[f]];

			if (room_fits(&rooms[f], &p->requests, NULL, 0) != SCHED_FITS ||
			    sched_fits_labels(p, nd->name, &nd->labels, nd->taints, nd->n_taints,
					      false, NULL, 0) != SCHED_FITS ||
			    (t && topo_relevant(t, p) &&
			     topo_check(t, p, cand[f], NULL, 0) != SCHED_FITS))
				continue;
			if (t && topo_add_pod(t, cand[f], p) < 0)
				goto oom;
			room_take(&rooms[f], &p->requests);
			bin_of_room(&k.bins[f], &rooms[f]);
			seg_update(&k, (size_t)f);
			dest[i] = (int32_t)cand[f];
			(*n_placed)++;
			break;
		}
	}
	rc = 0;
	goto out;
oom:
	errbuf_set(err, "place: out of memory for %zu nodes", s->n_nodes);
out:
	if (t && topo_rollback(t, mark) < 0 && rc == 0) {
		errbuf_set(err, "place: out of memory");
		rc = -1;
	}
	if (rc < 0) {
		*n_placed = 0;
		for (i = 0; i < n; i++)
			dest[i] = -1;
	}
	for (i = 0; rooms && i < n_cand; i++)
		room_free(&rooms[i]);
	free(rooms);
	free(cand);
	free(k.bins);
	free(k.seg);
	return rc;
}

int sched_pack_upcoming(const struct snapshot *s, const uint32_t *pods, size_t n,
			size_t group, int max_new, int upcoming_nodes,
			struct pack_result *out, struct errbuf *err)
{
	return pack(s, NULL, pods, n, group, max_new, upcoming_nodes, NULL, 0, NULL, 0, NULL, 0, out,
		    err);
}

int sched_pack_cached(struct sched_cache *c, const uint32_t *pods, size_t n, size_t group,
		      int max_new, int upcoming_nodes, struct pack_result *out,
		      struct errbuf *err)
{
	return pack(c->s, c, pods, n, group, max_new, upcoming_nodes, NULL, 0, NULL, 0, NULL, 0, out,
		    err);
}

int sched_pack_after(struct sched_cache *c, const uint32_t *pods, size_t n, size_t group,
		     int max_new, int upcoming_nodes, const struct pack_prior *prior,
		     size_t n_prior, bool existing, struct pack_result *out, struct errbuf *err)
{
	return pack(c->s, c, pods, n, group, max_new, upcoming_nodes, prior, n_prior, NULL, 0, NULL,
		    existing ? PACK_EXISTING : 0, out, err);
}

int sched_pack_groups(struct sched_cache *c, const uint32_t *pods, size_t n,
		      const uint32_t *groups, size_t n_groups, const int *max_new,
		      const struct pack_prior *prior, size_t n_prior, bool existing,
		      struct pack_result *out, struct errbuf *err)
{
	if (n_groups == 0) {
		memset(out, 0, sizeof(*out));
		return errbuf_set(err, "pack: no node groups given");
	}
	return pack(c->s, c, pods, n, groups[0], max_new[0], 0, prior, n_prior, groups + 1,
		    n_groups - 1, max_new, existing ? PACK_EXISTING : 0, out, err);
}

int sched_pack_together(struct sched_cache *c, const uint32_t *pods, size_t n,
			const uint32_t *groups, size_t n_groups, const int *max_new, bool upcoming,
			const struct pack_prior *prior, size_t n_prior, bool existing,
			struct pack_result *out, struct errbuf *err)
{
	if (n_groups == 0) {
		memset(out, 0, sizeof(*out));
		return errbuf_set(err, "pack: no node groups given");
	}
	return pack(c->s, c, pods, n, groups[0], max_new[0], upcoming ? -1 : 0, prior, n_prior,
		    groups + 1, n_groups - 1, max_new,
		    PACK_TOGETHER | (upcoming ? PACK_EACH_UPCOMING : 0) |
		    (existing ? PACK_EXISTING : 0), out, err);
}

void pack_result_free(struct pack_result *r)
{
	if (!r)
		return;
	free(r->placement);
	free(r->bin_group);
	free(r->on_node);
	memset(r, 0, sizeof(*r));
}

/* ---- drains ---- */

void drain_opts_default(struct drain_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->protected_pods = NULL;
	o->excluded = NULL;
	o->local_storage_blocks = true;
	o->unreplicated_blocks = true;
	o->kube_system_needs_pdb = false;
}

bool sched_pod_evictable(const struct pod *p)
{
	if (p->flags & (POD_DAEMONSET | POD_MIRROR | POD_STATIC | POD_TERMINATING))
		return false;
	return !pod_finished(p);
}

/* An empty protected selector protects nothing (it would match every pod). */
static bool is_protected(const struct drain_opts *o, const struct pod *p)
{
	return o->protected_pods && o->protected_pods->n > 0 &&
	       label_selector_matches(o->protected_pods, &p->labels);
}

static bool has_pdb(const struct snapshot *s, const struct pod *p)
{
	size_t i;

	for (i = 0; s && i < s->n_pdbs; i++)
		if (pdb_matches(&s->pdbs[i], p))
			return true;
	return false;
}

/* The first reason pod 'p' keeps its node, written to 't'; false if none. */
static bool pod_blocks(const struct snapshot *s, const struct pod *p,
		       const struct drain_opts *o, struct text *t)
{
	const char *ns = str_or_empty(p->ns), *name = str_or_empty(p->name);

	if (pod_finished(p))
		return false;
	if (is_protected(o, p)) {
		text_printf(t, "pod %s/%s is protected (matches selector ", ns, name);
		text_selector(t, o->protected_pods);
		text_printf(t, ")");
		return true;
	}
	if (!sched_pod_evictable(p))
		return false;
	if (p->flags & POD_SAFE_TO_EVICT_FALSE) {
		text_printf(t, "pod %s/%s has safe-to-evict=false", ns, name);
		return true;
	}
	if (o->local_storage_blocks && (p->flags & POD_LOCAL_STORAGE)) {
		const char *vol = str_or_empty(p->local_volume);

		if (*vol)
			text_printf(t, "pod %s/%s uses local storage (volume %s)",
				    ns, name, vol);
		else
			text_printf(t, "pod %s/%s uses local storage", ns, name);
		return true;
	}
	if (o->unreplicated_blocks && str_or_empty(p->controller_kind)[0] == '\0') {
		text_printf(t, "pod %s/%s is not managed by a controller", ns, name);
		return true;
	}
	if (o->kube_system_needs_pdb && strcmp(ns, "kube-system") == 0 &&
	    !has_pdb(s, p)) {
		text_printf(t, "pod %s/%s has no PodDisruptionBudget", ns, name);
		return true;
	}
	return false;
}

bool sched_pod_blocks_drain(const struct snapshot *s, const struct pod *p,
			    const struct drain_opts *o, char *why, size_t why_len)
{
	struct text t = text_at(why, why_len);
	struct drain_opts def;

	if (!o) {
		drain_opts_default(&def);
		o = &def;
	}
	return pod_blocks(s, p, o, &t);
}

bool sched_node_blockers(const struct snapshot *s, size_t node,
			 const struct drain_opts *o, char *why, size_t why_len)
{
	struct text t = text_at(why, why_len);
	struct drain_opts def;
	const struct node *nd;
	size_t i, j;

	if (node >= s->n_nodes) {
		text_printf(&t, "no node %zu (snapshot has %zu)", node, s->n_nodes);
		return false;
	}
	if (!o) {
		drain_opts_default(&def);
		o = &def;
	}
	nd = &s->nodes[node];
	for (i = 0; i < nd->n_pods; i++)
		if (pod_blocks(s, &s->pods[nd->pods[i]], o, &t))
			return false;

	for (j = 0; j < s->n_pdbs; j++) {
		const struct pdb *b = &s->pdbs[j];
		const struct pod *first = NULL;
		int64_t count = 0;

		for (i = 0; i < nd->n_pods; i++) {
			const struct pod *p = &s->pods[nd->pods[i]];

			if (!sched_pod_evictable(p) || !pdb_matches(b, p))
				continue;
			if (!first)
				first = p;
			count++;
		}
		if (count > b->disruptions_allowed) {
			text_printf(&t, "pod %s/%s: PodDisruptionBudget %s/%s allows %d disruption%s, draining needs %lld",
				    str_or_empty(first->ns), str_or_empty(first->name),
				    str_or_empty(b->ns), str_or_empty(b->name),
				    (int)b->disruptions_allowed,
				    b->disruptions_allowed == 1 ? "" : "s",
				    (long long)count);
			return false;
		}
	}
	return true;
}

/* A destination node and its free room, computed when first tried. */
struct dest {
	size_t node;
	struct room room;
};

bool sched_drainable(const struct snapshot *s, size_t node,
		     const struct drain_opts *o, char *why, size_t why_len)
{
	struct text t_why = text_at(why, why_len);
	struct drain_opts def;
	const struct node *nd;
	struct sized_pod *items = NULL;
	struct dest *dests = NULL;
	size_t n_items = 0, n_dests = 0, next = 0, i, d, mark = 0;
	struct topo *t = NULL;
	bool ok = false;

	if (!o) {
		drain_opts_default(&def);
		o = &def;
	}
	if (!sched_node_blockers(s, node, o, why, why_len))
		return false;
	nd = &s->nodes[node];
	{
		size_t cap = nd->n_pods, k;

		if (o->move_excluded && o->excluded)
			for (k = 0; k < s->n_nodes; k++)
				if (o->excluded[k] && k != node)
					cap += s->nodes[k].n_pods;
		if (cap) {
			items = malloc(cap * sizeof(*items));
			if (!items)
				goto oom;
		}
		for (k = 0; k < s->n_nodes; k++) {
			const struct node *src = &s->nodes[k];

			if (k != node && !(o->move_excluded && o->excluded && o->excluded[k]))
				continue;
			for (i = 0; i < src->n_pods; i++) {
				const struct pod *p = &s->pods[src->pods[i]];

				if (!sched_pod_evictable(p))
					continue;
				items[n_items].key = size_key(p, &src->allocatable);
				items[n_items].p = p;
				items[n_items].ns = p->ns;
				items[n_items].name = p->name;
				items[n_items].idx = n_items;
				n_items++;
			}
		}
	}
	if (n_items == 0) {
		ok = true;
		goto out;
	}
	qsort(items, n_items, sizeof(*items), sized_pod_qcmp);

	/* the pods' relations: the drained nodes are no domain any more, and
	 * none of their pods counts there; each evicted pod counts where it
	 * lands, for the ones after it */
	{
		bool use = s->n_anti_pods > 0;

		for (i = 0; i < n_items && !use; i++)
			use = has_relations(items[i].p);
		if (use) {
			size_t k;

			if (!(t = relations(s)))
				goto oom;
			mark = topo_mark(t);
			for (k = 0; k < s->n_nodes; k++) {
				const struct node *src = &s->nodes[k];

				if (k != node && !(o->move_excluded && o->excluded && o->excluded[k]))
					continue;
				if (topo_disable_site(t, k) < 0)
					goto oom;
				for (i = 0; i < src->n_pods; i++) {
					const struct pod *p = &s->pods[src->pods[i]];

					if (!pod_finished(p) && topo_remove_pod(t, k, p) < 0)
						goto oom;
				}
			}
		}
	}

	/*
	 * First fit over candidate nodes in index order. Rooms are computed
	 * on first try only, so 'dests' is always a prefix of the candidates
	 * and 'next' the first node not yet looked at.
	 */
	for (i = 0; i < n_items; i++) {
		const struct pod *p = items[i].p;
		bool placed = false, rel = t && topo_relevant(t, p);
		char refused[200] = "";

		for (d = 0; !placed; d++) {
			const struct node *dn;

			if (d == n_dests) {
				for (; next < s->n_nodes; next++) {
					const struct node *c = &s->nodes[next];

					if (next != node && c->ready &&
					    !c->unschedulable &&
					    !(o->excluded && o->excluded[next]))
						break;
				}
				if (next == s->n_nodes)
					break;
				if (n_dests % 64 == 0) {
					struct dest *nd2 = realloc(dests,
						(n_dests + 64) * sizeof(*dests));

					if (!nd2)
						goto oom;
					dests = nd2;
				}
				if (room_of_node(s, next, &dests[n_dests].room) < 0)
					goto oom;
				dests[n_dests].node = next++;
				n_dests++;
			}
			if (room_fits(&dests[d].room, &p->requests, NULL, 0) != SCHED_FITS)
				continue;
			dn = &s->nodes[dests[d].node];
			if (sched_fits_labels(p, dn->name, &dn->labels, dn->taints,
					      dn->n_taints, dn->unschedulable,
					      NULL, 0) != SCHED_FITS)
				continue;
			if (rel) {
				char why2[200];

				if (topo_check(t, p, dests[d].node, why2, sizeof(why2)) != SCHED_FITS) {
					if (!refused[0])
						snprintf(refused, sizeof(refused), "%s", why2);
					continue;
				}
			}
			if (t && topo_add_pod(t, dests[d].node, p) < 0)
				goto oom;
			room_take(&dests[d].room, &p->requests);
			placed = true;
		}
		if (!placed && refused[0]) {
			text_printf(&t_why, "no node takes pod %s/%s: %s", str_or_empty(p->ns),
				    str_or_empty(p->name), refused);
			goto out;
		}
		if (!placed) {
			char cpu[32], mem[32];

			text_printf(&t_why, "no room for pod %s/%s (needs cpu %s, memory %s)",
				    str_or_empty(p->ns), str_or_empty(p->name),
				    quantity_format(p->requests.cpu_m, QUANTITY_MILLI, cpu, sizeof(cpu)),
				    quantity_format(p->requests.memory, QUANTITY_UNIT, mem, sizeof(mem)));
			goto out;
		}
	}
	ok = true;
	goto out;
oom:
	text_printf(&t_why, "out of memory while simulating the drain");
	ok = false;
out:
	if (t && topo_rollback(t, mark) < 0)
		ok = false; /* the index is unusable: say no */
	for (d = 0; d < n_dests; d++)
		room_free(&dests[d].room);
	free(dests);
	free(items);
	return ok;
}
