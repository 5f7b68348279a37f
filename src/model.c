/*
 * model: the snapshot's life cycle — building it from JSON documents and
 * files (streamed, one List item at a time), copying node groups in, and
 * indexing it in snapshot_finish(). Decoding single objects is in
 * model_decode.c, the objects' accessors in objects.c, the label selector
 * parser in selector.c.
 */
#include "model.h"

#include <assert.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "buf.h"
#include "arena.h"
#include "intern.h"
#include "jsonscan.h"
#include "model_decode.h"
#include "textparse.h"

#define WHO_MAX 384
#define READ_CHUNK (1024 * 1024)

struct snapshot *snapshot_new(void)
{
	struct snapshot *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->arena = arena_new();
	if (!s->arena) {
		free(s);
		return NULL;
	}
	return s;
}

void snapshot_free(struct snapshot *s)
{
	if (!s)
		return;
	if (s->on_free)
		s->on_free(s->on_free_ctx);
	if (s->relations && s->relations_free)
		s->relations_free(s->relations);
	/* the object arrays are malloc'ed while building (they grow); a
	 * zero capacity means someone else put them there */
	if (s->cap_nodes)
		free(s->nodes);
	if (s->cap_pods)
		free(s->pods);
	if (s->cap_pdbs)
		free(s->pdbs);
	if (s->cap_namespaces)
		free(s->namespaces);
	if (s->cap_pvcs)
		free(s->pvcs);
	if (s->cap_pvs)
		free(s->pvs);
	if (s->cap_storage_classes)
		free(s->storage_classes);
	if (s->cap_daemonsets)
		free(s->daemonsets);
	free(s->node_slots);
	arena_free(s->arena);
	free(s);
}

static int check_open(const struct snapshot *s, struct errbuf *err)
{
	if (s->finished)
		return errbuf_set(err, "snapshot already finished: it is read-only");
	return 0;
}

static int add_decoded(struct snapshot *s, const cJSON *obj, enum model_kind mk,
		       struct intern *in, char *who, size_t wholen, struct errbuf *err);

int snapshot_add_object(struct snapshot *s, const cJSON *obj, const char *kind,
			struct errbuf *err)
{
	char who[WHO_MAX];
	enum model_kind mk;

	if (check_open(s, err) < 0)
		return -1;
	if (!kind) {
		const cJSON *k = cJSON_IsObject(obj) ?
			cJSON_GetObjectItemCaseSensitive(obj, "kind") : NULL;

		if (!cJSON_IsString(k))
			return errbuf_set(err, "object has no \"kind\" string");
		kind = k->valuestring;
	}
	mk = model_kind_of(kind, 0);
	if (mk == MODEL_KIND_OTHER)
		return 0;
	if (add_decoded(s, obj, mk, NULL, who, sizeof(who), err) < 0)
		return errbuf_prefix(err, "%s", who);
	return 0;
}

/* ---- structs built by the caller (shallow copies) ---- */

/* Grows '*arr' (elements of 'size') to hold at least 'need'. */
static int grow(void **arr, size_t *cap, size_t need, size_t size)
{
	size_t ncap = *cap ? *cap : 64;
	void *na;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2 / size)
			return -1;
		ncap *= 2;
	}
	na = realloc(*arr, ncap * size);
	if (!na)
		return -1;
	*arr = na;
	*cap = ncap;
	return 0;
}

int snapshot_reserve(struct snapshot *s, size_t nodes, size_t pods, size_t pdbs,
		     struct errbuf *err)
{
	if (check_open(s, err) < 0)
		return -1;
	if ((nodes && grow((void **)&s->nodes, &s->cap_nodes, s->n_nodes + nodes,
			   sizeof(*s->nodes)) < 0) ||
	    (pods && grow((void **)&s->pods, &s->cap_pods, s->n_pods + pods,
			  sizeof(*s->pods)) < 0) ||
	    (pdbs && grow((void **)&s->pdbs, &s->cap_pdbs, s->n_pdbs + pdbs,
			  sizeof(*s->pdbs)) < 0))
		return errbuf_set(err, "out of memory");
	return 0;
}

int snapshot_add_node(struct snapshot *s, const struct node *n, struct errbuf *err)
{
	struct node *d;

	if (check_open(s, err) < 0)
		return -1;
	if (grow((void **)&s->nodes, &s->cap_nodes, s->n_nodes + 1, sizeof(*s->nodes)) < 0)
		return errbuf_set(err, "out of memory");
	d = &s->nodes[s->n_nodes++];
	*d = *n;
	d->group = -1;
	memset(&d->requested, 0, sizeof(d->requested));
	d->pods = NULL;
	d->n_pods = 0;
	return 0;
}

int snapshot_add_pod(struct snapshot *s, const struct pod *p, struct errbuf *err)
{
	struct pod *d;

	if (check_open(s, err) < 0)
		return -1;
	if (grow((void **)&s->pods, &s->cap_pods, s->n_pods + 1, sizeof(*s->pods)) < 0)
		return errbuf_set(err, "out of memory");
	d = &s->pods[s->n_pods++];
	*d = *p;
	d->node = -1;
	return 0;
}

int snapshot_add_pdb(struct snapshot *s, const struct pdb *b, struct errbuf *err)
{
	if (check_open(s, err) < 0)
		return -1;
	if (grow((void **)&s->pdbs, &s->cap_pdbs, s->n_pdbs + 1, sizeof(*s->pdbs)) < 0)
		return errbuf_set(err, "out of memory");
	s->pdbs[s->n_pdbs++] = *b;
	return 0;
}

/* Appends a shallow copy of 'item' to an array that grows as needed. */
static int add_copy(struct snapshot *s, void **arr, size_t *n, size_t *cap, size_t size,
		    const void *item, struct errbuf *err)
{
	if (check_open(s, err) < 0)
		return -1;
	if (grow(arr, cap, *n + 1, size) < 0)
		return errbuf_set(err, "out of memory");
	memcpy((char *)*arr + *n * size, item, size);
	(*n)++;
	return 0;
}

int snapshot_add_namespace(struct snapshot *s, const struct namespace_obj *ns,
			   struct errbuf *err)
{
	return add_copy(s, (void **)&s->namespaces, &s->n_namespaces, &s->cap_namespaces,
			sizeof(*ns), ns, err);
}

int snapshot_add_pvc(struct snapshot *s, const struct pvc *c, struct errbuf *err)
{
	return add_copy(s, (void **)&s->pvcs, &s->n_pvcs, &s->cap_pvcs, sizeof(*c), c, err);
}

int snapshot_add_pv(struct snapshot *s, const struct pv *v, struct errbuf *err)
{
	return add_copy(s, (void **)&s->pvs, &s->n_pvs, &s->cap_pvs, sizeof(*v), v, err);
}

int snapshot_add_storage_class(struct snapshot *s, const struct storage_class *c,
			       struct errbuf *err)
{
	return add_copy(s, (void **)&s->storage_classes, &s->n_storage_classes,
			&s->cap_storage_classes, sizeof(*c), c, err);
}

int snapshot_add_daemonset(struct snapshot *s, const struct daemonset *ds, struct errbuf *err)
{
	if (add_copy(s, (void **)&s->daemonsets, &s->n_daemonsets, &s->cap_daemonsets,
		     sizeof(*ds), ds, err) < 0)
		return -1;
	s->daemonsets[s->n_daemonsets - 1].tmpl.node = -1;
	return 0;
}

/*
 * Records that the source lists objects of 'kind', so that one not found
 * is really absent: a PersistentVolumeClaim, PersistentVolume or
 * StorageClass sets s->volumes_known, a Namespace s->namespaces_known, a
 * DaemonSet s->daemonsets_known; other kinds change nothing.
 */
static void model_mark_known(struct snapshot *s, enum model_kind kind)
{
	switch (kind) {
	case MODEL_KIND_PVC:
	case MODEL_KIND_PV:
	case MODEL_KIND_STORAGE_CLASS:
		s->volumes_known = true;
		break;
	case MODEL_KIND_NAMESPACE:
		s->namespaces_known = true;
		break;
	case MODEL_KIND_DAEMONSET:
		s->daemonsets_known = true;
		break;
	case MODEL_KIND_OTHER:
	case MODEL_KIND_NODE:
	case MODEL_KIND_POD:
	case MODEL_KIND_PDB:
		break;
	}
}

/* Decodes 'obj' as 'mk' into the snapshot's arena and appends it, marking
 * its kind known. On an error 'who' names the object (model_decode_object). */
static int add_decoded(struct snapshot *s, const cJSON *obj, enum model_kind mk,
		       struct intern *in, char *who, size_t wholen, struct errbuf *err)
{
	struct model_object o;
	int rc = 0;

	if (model_decode_object(s->arena, in, obj, mk, &o, who, wholen, err) < 0)
		return -1;
	switch (mk) {
	case MODEL_KIND_NODE:
		rc = snapshot_add_node(s, &o.u.node, err);
		break;
	case MODEL_KIND_POD:
		rc = snapshot_add_pod(s, &o.u.pod, err);
		break;
	case MODEL_KIND_PDB:
		rc = snapshot_add_pdb(s, &o.u.pdb, err);
		break;
	case MODEL_KIND_NAMESPACE:
		rc = snapshot_add_namespace(s, &o.u.ns, err);
		break;
	case MODEL_KIND_PVC:
		rc = snapshot_add_pvc(s, &o.u.pvc, err);
		break;
	case MODEL_KIND_PV:
		rc = snapshot_add_pv(s, &o.u.pv, err);
		break;
	case MODEL_KIND_STORAGE_CLASS:
		rc = snapshot_add_storage_class(s, &o.u.sc, err);
		break;
	case MODEL_KIND_DAEMONSET:
		rc = snapshot_add_daemonset(s, &o.u.ds, err);
		break;
	case MODEL_KIND_OTHER:
		break;
	}
	if (rc < 0) {
		snprintf(who, wholen, "%s", "snapshot");
		return -1;
	}
	model_mark_known(s, mk);
	return 0;
}

int snapshot_on_free(struct snapshot *s, void (*fn)(void *ctx), void *ctx,
		     struct errbuf *err)
{
	if (s->on_free)
		return errbuf_set(err, "snapshot already has a release hook");
	s->on_free = fn;
	s->on_free_ctx = ctx;
	return 0;
}

/* ---- deep copies into one heap block ---- */

/*
 * A bounded bump allocator over one malloc'ed block. Running out sets
 * 'full' (the copy is retried in a larger block), so the copy functions
 * only have to stop writing when an allocation returns NULL.
 */
struct blk {
	char *base;
	size_t used, cap;
	bool full;
};

#define BLK_ALIGN 16

static void *blk_alloc(struct blk *b, size_t n, size_t size)
{
	size_t off = (b->used + BLK_ALIGN - 1) & ~(size_t)(BLK_ALIGN - 1);

	if (n == 0)
		return NULL;
	if (b->full || size > SIZE_MAX / n || off > b->cap || n * size > b->cap - off) {
		b->full = true;
		return NULL;
	}
	b->used = off + n * size;
	return b->base + off;
}

/* NULL stays NULL and "" stays the literal "": neither costs a byte. */
static const char *blk_str(struct blk *b, const char *s)
{
	size_t n;
	char *d;

	if (!s || !*s)
		return s ? "" : NULL;
	n = strlen(s) + 1;
	d = blk_alloc(b, n, 1);
	if (d)
		memcpy(d, s, n);
	return d;
}

static void blk_kvlist(struct blk *b, const struct kvlist *src, struct kvlist *dst)
{
	size_t i;

	dst->items = blk_alloc(b, src->n, sizeof(*dst->items));
	dst->n = dst->items ? src->n : 0;
	for (i = 0; i < dst->n; i++) {
		dst->items[i].key = blk_str(b, src->items[i].key);
		dst->items[i].value = blk_str(b, src->items[i].value);
	}
}

static void blk_resources(struct blk *b, const struct resources *src, struct resources *dst)
{
	size_t i;

	*dst = *src;
	dst->ext = blk_alloc(b, src->n_ext, sizeof(*dst->ext));
	dst->n_ext = dst->ext ? src->n_ext : 0;
	for (i = 0; i < dst->n_ext; i++) {
		dst->ext[i].name = blk_str(b, src->ext[i].name);
		dst->ext[i].value = src->ext[i].value;
	}
}

static struct taint *blk_taints(struct blk *b, const struct taint *src, size_t n)
{
	struct taint *t = blk_alloc(b, n, sizeof(*t));
	size_t i;

	for (i = 0; t && i < n; i++) {
		t[i] = src[i];
		t[i].key = blk_str(b, src[i].key);
		t[i].value = blk_str(b, src[i].value);
	}
	return t;
}

static struct selector_req *blk_reqs(struct blk *b, const struct selector_req *src, size_t n)
{
	struct selector_req *r = blk_alloc(b, n, sizeof(*r));
	size_t i, j;

	for (i = 0; r && i < n; i++) {
		const char **values = blk_alloc(b, src[i].n_values, sizeof(*values));

		r[i] = src[i];
		r[i].key = blk_str(b, src[i].key);
		r[i].values = values;
		if (!values)
			r[i].n_values = 0;
		for (j = 0; j < r[i].n_values; j++)
			values[j] = blk_str(b, src[i].values[j]);
	}
	return r;
}

static void blk_selector(struct blk *b, const struct label_selector *src,
			 struct label_selector *dst)
{
	dst->reqs = blk_reqs(b, src->reqs, src->n);
	dst->n = dst->reqs ? src->n : 0;
}

static const char **blk_strs(struct blk *b, const char *const *src, size_t n, size_t *dst_n)
{
	const char **d = blk_alloc(b, n, sizeof(*d));
	size_t i;

	*dst_n = d ? n : 0;
	for (i = 0; d && i < n; i++)
		d[i] = blk_str(b, src[i]);
	return d;
}

static struct pod_term *blk_terms(struct blk *b, const struct pod_term *src, size_t n,
				  size_t *dst_n)
{
	struct pod_term *t = blk_alloc(b, n, sizeof(*t));
	size_t i;

	*dst_n = t ? n : 0;
	for (i = 0; t && i < n; i++) {
		t[i] = src[i];
		blk_selector(b, &src[i].selector, &t[i].selector);
		t[i].namespaces = blk_strs(b, src[i].namespaces, src[i].n_namespaces,
					   &t[i].n_namespaces);
		blk_selector(b, &src[i].ns_selector, &t[i].ns_selector);
		t[i].topology_key = blk_str(b, src[i].topology_key);
	}
	return t;
}

/* Runs 'copy' into blocks of growing size until it fits, then once more
 * into a block of the exact size when the last one was loose. */
static void *blk_clone(size_t size, const void *src,
		       void (*copy)(struct blk *b, const void *src, void *dst))
{
	struct blk b = {0};
	size_t cap = 1024;
	void *dst;

	for (;;) {
		b = (struct blk){.base = malloc(cap), .cap = cap};
		if (!b.base)
			return NULL;
		dst = blk_alloc(&b, 1, size);
		if (dst)
			copy(&b, src, dst);
		if (!b.full)
			break;
		free(b.base);
		if (cap > SIZE_MAX / 2)
			return NULL;
		cap *= 2;
	}
	if (b.cap - b.used > 256) {
		/* the same copy lays out the same bytes: it fits exactly */
		struct blk exact = {.base = malloc(b.used), .cap = b.used};

		if (exact.base) {
			dst = blk_alloc(&exact, 1, size);
			copy(&exact, src, dst);
			assert(!exact.full);
			free(b.base);
			return exact.base;
		}
	}
	return b.base;
}

static void copy_node(struct blk *b, const void *src, void *dst)
{
	const struct node *s = src;
	struct node *d = dst;

	*d = *s;
	d->name = blk_str(b, s->name);
	d->provider_id = blk_str(b, s->provider_id);
	d->internal_ip = blk_str(b, s->internal_ip);
	blk_kvlist(b, &s->labels, &d->labels);
	blk_kvlist(b, &s->annotations, &d->annotations);
	d->taints = blk_taints(b, s->taints, s->n_taints);
	if (!d->taints)
		d->n_taints = 0;
	blk_resources(b, &s->allocatable, &d->allocatable);
	d->removing = false;
	d->replacing = false;
	d->group = -1;
	memset(&d->requested, 0, sizeof(d->requested));
	d->pods = NULL;
	d->n_pods = 0;
}

static void copy_pod(struct blk *b, const void *src, void *dst)
{
	const struct pod *s = src;
	struct pod *d = dst;
	size_t i;

	*d = *s;
	d->ns = blk_str(b, s->ns);
	d->name = blk_str(b, s->name);
	d->uid = blk_str(b, s->uid);
	blk_kvlist(b, &s->labels, &d->labels);
	blk_kvlist(b, &s->annotations, &d->annotations);
	d->controller_kind = blk_str(b, s->controller_kind);
	d->controller_name = blk_str(b, s->controller_name);
	d->node_name = blk_str(b, s->node_name);
	blk_resources(b, &s->requests, &d->requests);
	blk_kvlist(b, &s->node_selector, &d->node_selector);
	d->affinity.terms = blk_alloc(b, s->affinity.n_terms, sizeof(*d->affinity.terms));
	d->affinity.n_terms = d->affinity.terms ? s->affinity.n_terms : 0;
	for (i = 0; i < d->affinity.n_terms; i++) {
		const struct node_selector_term *st = &s->affinity.terms[i];
		struct node_selector_term *dt = &d->affinity.terms[i];

		dt->exprs = blk_reqs(b, st->exprs, st->n_exprs);
		dt->n_exprs = dt->exprs ? st->n_exprs : 0;
		dt->fields = blk_reqs(b, st->fields, st->n_fields);
		dt->n_fields = dt->fields ? st->n_fields : 0;
	}
	d->tolerations = blk_alloc(b, s->n_tolerations, sizeof(*d->tolerations));
	d->n_tolerations = d->tolerations ? s->n_tolerations : 0;
	for (i = 0; i < d->n_tolerations; i++) {
		d->tolerations[i] = s->tolerations[i];
		d->tolerations[i].key = blk_str(b, s->tolerations[i].key);
		d->tolerations[i].value = blk_str(b, s->tolerations[i].value);
	}
	d->local_volume = blk_str(b, s->local_volume);
	d->sched_message = blk_str(b, s->sched_message);
	d->affinity_terms = blk_terms(b, s->affinity_terms, s->n_affinity_terms,
				      &d->n_affinity_terms);
	d->anti_terms = blk_terms(b, s->anti_terms, s->n_anti_terms, &d->n_anti_terms);
	d->spread = blk_alloc(b, s->n_spread, sizeof(*d->spread));
	d->n_spread = d->spread ? s->n_spread : 0;
	for (i = 0; i < d->n_spread; i++) {
		d->spread[i] = s->spread[i];
		d->spread[i].topology_key = blk_str(b, s->spread[i].topology_key);
		blk_selector(b, &s->spread[i].selector, &d->spread[i].selector);
	}
	d->host_ports = blk_alloc(b, s->n_host_ports, sizeof(*d->host_ports));
	d->n_host_ports = d->host_ports ? s->n_host_ports : 0;
	for (i = 0; i < d->n_host_ports; i++) {
		d->host_ports[i] = s->host_ports[i];
		d->host_ports[i].ip = blk_str(b, s->host_ports[i].ip);
	}
	d->claims = blk_strs(b, s->claims, s->n_claims, &d->n_claims);
	d->unmodelled = blk_str(b, s->unmodelled);
	d->node = -1;
	d->volume_affinity = NULL;
	d->n_volume_affinity = 0;
	d->volume_problem = NULL;
}

static void copy_pdb(struct blk *b, const void *src, void *dst)
{
	const struct pdb *s = src;
	struct pdb *d = dst;

	*d = *s;
	d->ns = blk_str(b, s->ns);
	d->name = blk_str(b, s->name);
	d->selector.reqs = blk_reqs(b, s->selector.reqs, s->selector.n);
	if (!d->selector.reqs)
		d->selector.n = 0;
	d->min_available = blk_str(b, s->min_available);
	d->max_unavailable = blk_str(b, s->max_unavailable);
}

static void blk_node_affinity(struct blk *b, const struct node_affinity *src,
			      struct node_affinity *dst)
{
	size_t i;

	dst->terms = blk_alloc(b, src->n_terms, sizeof(*dst->terms));
	dst->n_terms = dst->terms ? src->n_terms : 0;
	for (i = 0; i < dst->n_terms; i++) {
		const struct node_selector_term *st = &src->terms[i];
		struct node_selector_term *dt = &dst->terms[i];

		dt->exprs = blk_reqs(b, st->exprs, st->n_exprs);
		dt->n_exprs = dt->exprs ? st->n_exprs : 0;
		dt->fields = blk_reqs(b, st->fields, st->n_fields);
		dt->n_fields = dt->fields ? st->n_fields : 0;
	}
}

static void copy_namespace(struct blk *b, const void *src, void *dst)
{
	const struct namespace_obj *s = src;
	struct namespace_obj *d = dst;

	*d = *s;
	d->name = blk_str(b, s->name);
	blk_kvlist(b, &s->labels, &d->labels);
}

static void copy_pvc(struct blk *b, const void *src, void *dst)
{
	const struct pvc *s = src;
	struct pvc *d = dst;

	*d = *s;
	d->ns = blk_str(b, s->ns);
	d->name = blk_str(b, s->name);
	d->volume_name = blk_str(b, s->volume_name);
	d->storage_class = blk_str(b, s->storage_class);
}

static void copy_pv(struct blk *b, const void *src, void *dst)
{
	const struct pv *s = src;
	struct pv *d = dst;

	*d = *s;
	d->name = blk_str(b, s->name);
	blk_node_affinity(b, &s->node_affinity, &d->node_affinity);
	blk_kvlist(b, &s->labels, &d->labels);
}

static void copy_storage_class(struct blk *b, const void *src, void *dst)
{
	const struct storage_class *s = src;
	struct storage_class *d = dst;

	*d = *s;
	d->name = blk_str(b, s->name);
	blk_node_affinity(b, &s->allowed_topologies, &d->allowed_topologies);
}

static void copy_daemonset(struct blk *b, const void *src, void *dst)
{
	const struct daemonset *s = src;
	struct daemonset *d = dst;

	*d = *s;
	d->ns = blk_str(b, s->ns);
	d->name = blk_str(b, s->name);
	copy_pod(b, &s->tmpl, &d->tmpl);
}

struct node *node_clone(const struct node *n)
{
	return blk_clone(sizeof(*n), n, copy_node);
}

struct pod *pod_clone(const struct pod *p)
{
	return blk_clone(sizeof(*p), p, copy_pod);
}

struct pdb *pdb_clone(const struct pdb *b)
{
	return blk_clone(sizeof(*b), b, copy_pdb);
}

struct namespace_obj *namespace_clone(const struct namespace_obj *ns)
{
	return blk_clone(sizeof(*ns), ns, copy_namespace);
}

struct pvc *pvc_clone(const struct pvc *c)
{
	return blk_clone(sizeof(*c), c, copy_pvc);
}

struct pv *pv_clone(const struct pv *v)
{
	return blk_clone(sizeof(*v), v, copy_pv);
}

struct storage_class *storage_class_clone(const struct storage_class *c)
{
	return blk_clone(sizeof(*c), c, copy_storage_class);
}

struct daemonset *daemonset_clone(const struct daemonset *ds)
{
	return blk_clone(sizeof(*ds), ds, copy_daemonset);
}

/* ---- documents: a List streamed item by item, or one object ---- */

/*
 * An item met before the List's "kind" told what its items are (key-sorted
 * output puts "kind" after "items"). Only its place is remembered: it is
 * decoded at the end from the caller's buffer, or from a second read of
 * the file, so a large List costs no copy.
 */
struct deferred {
	size_t index;
	uint64_t offset;
	size_t len;
};

struct loader {
	struct snapshot *s;
	const char *source;
	struct intern in;
	struct jsonscan *sc;
	bool item_failed;  /* the message is complete: no source prefix */
	bool second_pass;  /* re-reading a file for its deferred items */
	const char *list_kind; /* second pass: the kind found by the first */
	struct deferred *deferred;
	size_t n_deferred, cap_deferred, next_deferred;
};

static int decode_item(struct loader *L, const cJSON *obj, enum model_kind mk,
		       size_t index, struct errbuf *err)
{
	char who[WHO_MAX];

	if (add_decoded(L->s, obj, mk, &L->in, who, sizeof(who), err) < 0)
		return errbuf_prefix(err, "%s: items[%zu] (%s)", L->source, index, who);
	return 0;
}

static int defer_item(struct loader *L, size_t len, size_t index,
		      uint64_t offset, struct errbuf *err)
{
	if (L->n_deferred == L->cap_deferred) {
		size_t cap = L->cap_deferred ? L->cap_deferred * 2 : 16;
		struct deferred *nd = realloc(L->deferred, cap * sizeof(*nd));

		if (!nd)
			return errbuf_set(err, "out of memory");
		L->deferred = nd;
		L->cap_deferred = cap;
	}
	L->deferred[L->n_deferred++] = (struct deferred){index, offset, len};
	return 0;
}

/*
 * One List item. Its kind is its own "kind", else the List's ("PodList"
 * items are Pods); when the List's kind is not known yet the item waits.
 * 'list_kind' is NULL while it may still come.
 */
static int handle_item(struct loader *L, const char *data, size_t len,
		       size_t index, uint64_t offset, const char *list_kind,
		       bool final, const cJSON *tree, struct errbuf *err)
{
	const char *end = NULL;
	const cJSON *k;
	cJSON *parsed = NULL;
	const cJSON *obj = tree;
	enum model_kind mk;
	int rc = -1;

	/* the scanner parsed it already (its tree is borrowed), or parse it */
	if (!obj)
		obj = parsed = cJSON_ParseWithLengthOpts(data, len, &end, 0);
	if (!obj) {
		size_t at = end && end >= data && end <= data + len ?
			(size_t)(end - data) : 0;

		return errbuf_set(err, "%s: items[%zu]: invalid JSON at byte %llu",
				  L->source, index,
				  (unsigned long long)(offset + at));
	}
	if (!cJSON_IsObject(obj)) {
		errbuf_set(err, "%s: items[%zu]: expected an object", L->source, index);
		goto out;
	}
	k = cJSON_GetObjectItemCaseSensitive(obj, "kind");
	if (k && !cJSON_IsNull(k)) {
		if (!cJSON_IsString(k)) {
			errbuf_set(err, "%s: items[%zu]: kind: expected a string",
				   L->source, index);
			goto out;
		}
		mk = model_kind_of(k->valuestring, 0);
	} else {
		if (!list_kind && !final) {
			rc = defer_item(L, len, index, offset, err);
			goto out;
		}
		mk = model_kind_of(list_kind, 1);
		if (mk == MODEL_KIND_OTHER &&
		    (!list_kind || strcmp(list_kind, "List") == 0)) {
			errbuf_set(err, "%s: items[%zu]: object has no \"kind\"",
				   L->source, index);
			goto out;
		}
	}
	rc = decode_item(L, obj, mk, index, err);
out:
	cJSON_Delete(parsed);
	return rc;
}

static int on_item(void *ctx, const char *data, size_t len, size_t index,
		   uint64_t offset, struct errbuf *err)
{
	struct loader *L = ctx;
	int rc = 0;

	if (!L->second_pass) {
		rc = handle_item(L, data, len, index, offset,
				 jsonscan_kind(L->sc), false, jsonscan_item_tree(L->sc), err);
	} else if (L->next_deferred < L->n_deferred &&
		   L->deferred[L->next_deferred].index == index) {
		L->next_deferred++;
		rc = handle_item(L, data, len, index, offset, L->list_kind,
				 true, jsonscan_item_tree(L->sc), err);
	}
	if (rc < 0)
		L->item_failed = true;
	return rc;
}

static int loader_init(struct loader *L, struct snapshot *s, const char *source,
		       bool keep_whole, struct errbuf *err)
{
	memset(L, 0, sizeof(*L));
	L->s = s;
	L->source = source ? source : "input";
	intern_init(&L->in, s->arena);
	L->sc = jsonscan_new(on_item, L, keep_whole);
	if (!L->sc)
		return errbuf_set(err, "out of memory");
	jsonscan_set_parse(L->sc, true); /* one pass: items come parsed */
	return 0;
}

static void loader_free(struct loader *L)
{
	free(L->deferred);
	jsonscan_free(L->sc);
	intern_free(&L->in);
}

static int loader_feed(struct loader *L, const char *data, size_t len,
		       struct errbuf *err)
{
	if (jsonscan_feed(L->sc, data, len, err) < 0) {
		if (!L->item_failed)
			errbuf_prefix(err, "%s", L->source);
		return -1;
	}
	return 0;
}

/* Checks the end of input. A document without an "items" array is one
 * object, decoded here from 'whole'. Deferred items are the caller's. */
static int loader_end(struct loader *L, const char *whole, size_t whole_len,
		      struct errbuf *err)
{
	const char *kind;
	char who[WHO_MAX];
	enum model_kind mk;
	cJSON *obj;
	size_t n;
	int rc;

	if (jsonscan_end(L->sc, err) < 0)
		return errbuf_prefix(err, "%s", L->source);
	kind = jsonscan_kind(L->sc);
	/* a typed List says its kind is listed, items or not */
	if (kind)
		model_mark_known(L->s, model_kind_of(kind, 1));
	if (jsonscan_is_list(L->sc))
		return 0;
	if (!kind)
		return errbuf_set(err, "%s: not a Kubernetes object or List: no \"kind\"",
				  L->source);
	n = strlen(kind);
	if (n >= 4 && strcmp(kind + n - 4, "List") == 0)
		return 0; /* a List without items */
	mk = model_kind_of(kind, 0);
	if (mk == MODEL_KIND_OTHER)
		return 0;
	obj = cJSON_ParseWithLength(whole, whole_len);
	if (!obj) /* cannot happen after the scanner passed it, but be safe */
		return errbuf_set(err, "%s: invalid JSON", L->source);
	rc = add_decoded(L->s, obj, mk, &L->in, who, sizeof(who), err);
	cJSON_Delete(obj);
	if (rc < 0)
		return errbuf_prefix(err, "%s: %s", L->source, who);
	return 0;
}

int snapshot_add_json(struct snapshot *s, const char *json, size_t len,
		      const char *source, struct errbuf *err)
{
	struct loader L;
	size_t i;
	int rc = -1;

	if (check_open(s, err) < 0)
		return -1;
	if (loader_init(&L, s, source, false, err) < 0 ||
	    loader_feed(&L, json, len, err) < 0 ||
	    loader_end(&L, json, len, err) < 0)
		goto out;
	for (i = 0; i < L.n_deferred; i++) {
		const struct deferred *d = &L.deferred[i];

		if (handle_item(&L, json + d->offset, d->len, d->index, d->offset,
				jsonscan_kind(L.sc), true, NULL, err) < 0)
			goto out;
	}
	rc = 0;
out:
	loader_free(&L);
	return rc;
}

/* Streams the file through the loader's scanner. */
static int read_file(struct loader *L, const char *path, struct errbuf *err)
{
	char *chunk = NULL;
	FILE *f;
	size_t n;
	int rc = -1;

	f = buf_fopen_regular(path, err);
	if (!f)
		return -1;
	chunk = malloc(READ_CHUNK);
	if (!chunk) {
		errbuf_set(err, "out of memory");
		goto out;
	}
	while ((n = fread(chunk, 1, READ_CHUNK, f)) > 0)
		if (loader_feed(L, chunk, n, err) < 0)
			goto out;
	if (ferror(f)) {
		errbuf_set(err, "%s: read error: %s", path, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free(chunk);
	fclose(f);
	return rc;
}

int snapshot_load_file(struct snapshot *s, const char *path, struct errbuf *err)
{
	struct loader L;
	const char *whole;
	char *kind = NULL;
	size_t whole_len = 0;
	int rc = -1;

	if (check_open(s, err) < 0)
		return -1;
	if (loader_init(&L, s, path, true, err) < 0 || read_file(&L, path, err) < 0)
		goto out;
	whole = jsonscan_whole(L.sc, &whole_len);
	if (loader_end(&L, whole ? whole : "", whole_len, err) < 0)
		goto out;
	if (L.n_deferred) {
		/* the List's kind came after its items: read them again */
		const char *k = jsonscan_kind(L.sc);

		if (k && !(kind = strdup(k))) {
			errbuf_set(err, "out of memory");
			goto out;
		}
		jsonscan_free(L.sc);
		L.sc = jsonscan_new(on_item, &L, false);
		if (!L.sc) {
			errbuf_set(err, "out of memory");
			goto out;
		}
		jsonscan_set_parse(L.sc, true);
		L.second_pass = true;
		L.list_kind = kind;
		if (read_file(&L, path, err) < 0 || jsonscan_end(L.sc, err) < 0)
			goto out;
		if (L.next_deferred != L.n_deferred) {
			errbuf_set(err, "%s: changed while being read", path);
			goto out;
		}
	}
	rc = 0;
out:
	free(kind);
	loader_free(&L);
	return rc;
}

/* ---- node groups ---- */

static const char *dup_str(struct arena *a, const char *s)
{
	return arena_strdup(a, s ? s : "");
}

static int copy_kvlist(struct arena *a, const struct kvlist *src,
		       struct kvlist *dst)
{
	size_t i;

	dst->items = NULL;
	dst->n = 0;
	if (!src || src->n == 0)
		return 0;
	dst->items = arena_calloc(a, src->n, sizeof(*dst->items));
	if (!dst->items)
		return -1;
	for (i = 0; i < src->n; i++) {
		dst->items[i].key = dup_str(a, src->items[i].key);
		dst->items[i].value = dup_str(a, src->items[i].value);
		if (!dst->items[i].key || !dst->items[i].value)
			return -1;
	}
	dst->n = src->n;
	return 0;
}

static int cmp_case(const void *a, const void *b)
{
	return strcasecmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_kv_case(const void *a, const void *b)
{
	return strcasecmp(((const struct kv *)a)->key, ((const struct kv *)b)->key);
}

static int copy_taints(struct arena *a, const struct taint *src, size_t n, struct taint **out)
{
	struct taint *d;
	size_t i;

	*out = NULL;
	if (!n)
		return 0;
	d = arena_calloc(a, n, sizeof(*d));
	if (!d)
		return -1;
	for (i = 0; i < n; i++) {
		d[i].key = dup_str(a, src[i].key);
		d[i].value = dup_str(a, src[i].value);
		d[i].effect = src[i].effect;
		if (!d[i].key || !d[i].value)
			return -1;
	}
	*out = d;
	return 0;
}

static int copy_group(struct arena *a, const struct node_group *src,
		      struct node_group *dst)
{
	const struct node_template *st = &src->tmpl;
	struct node_template *dt = &dst->tmpl;
	struct taint *taints;
	size_t i;

	memset(dst, 0, sizeof(*dst));
	dst->name = dup_str(a, src->name);
	dst->min = src->min;
	dst->max = src->max;
	dst->price_per_hour = src->price_per_hour;
	dst->price_from_cloud = src->price_from_cloud;
	dst->expire_after = src->expire_after;
	dst->target = src->target;
	dst->backoff_until = src->backoff_until;
	memcpy(dst->backoff_reason, src->backoff_reason, sizeof(dst->backoff_reason));
	if (!dst->name || copy_kvlist(a, &src->selector, &dst->selector) < 0 ||
	    copy_kvlist(a, &st->labels, &dt->labels) < 0)
		return -1;
	if (src->n_provider_ids) {
		const char **ids = arena_calloc(a, src->n_provider_ids, sizeof(*ids));

		if (!ids)
			return -1;
		for (i = 0; i < src->n_provider_ids; i++)
			if (!(ids[i] = dup_str(a, src->provider_ids[i])))
				return -1;
		qsort(ids, src->n_provider_ids, sizeof(*ids), cmp_case);
		dst->provider_ids = ids;
		dst->n_provider_ids = src->n_provider_ids;
	}
	if (src->n_outdated) {
		struct kv *o = arena_calloc(a, src->n_outdated, sizeof(*o));

		if (!o)
			return -1;
		for (i = 0; i < src->n_outdated; i++)
			if (!(o[i].key = dup_str(a, src->outdated[i].key)) ||
			    !(o[i].value = dup_str(a, src->outdated[i].value)))
				return -1;
		qsort(o, src->n_outdated, sizeof(*o), cmp_kv_case);
		dst->outdated = o;
		dst->n_outdated = src->n_outdated;
	}
	if (copy_kvlist(a, &src->drift_labels, &dst->drift_labels) < 0)
		return -1;
	dt->allocatable = st->allocatable;
	dt->allocatable.ext = NULL;
	dt->allocatable.n_ext = 0;
	if (st->allocatable.n_ext) {
		dt->allocatable.ext = arena_calloc(a, st->allocatable.n_ext,
						   sizeof(*dt->allocatable.ext));
		if (!dt->allocatable.ext)
			return -1;
		for (i = 0; i < st->allocatable.n_ext; i++) {
			dt->allocatable.ext[i].name =
				dup_str(a, st->allocatable.ext[i].name);
			dt->allocatable.ext[i].value = st->allocatable.ext[i].value;
			if (!dt->allocatable.ext[i].name)
				return -1;
		}
		dt->allocatable.n_ext = st->allocatable.n_ext;
	}
	if (copy_taints(a, st->taints, st->n_taints, &dt->taints) < 0)
		return -1;
	dt->n_taints = st->n_taints;
	if (copy_taints(a, src->drift_taints, src->n_drift_taints, &taints) < 0)
		return -1;
	dst->drift_taints = taints;
	dst->n_drift_taints = src->n_drift_taints;
	if (src->instance_type && !(dst->instance_type = dup_str(a, src->instance_type)))
		return -1;
	if (src->n_types) {
		/* one level: a type's group has no types of its own */
		dst->types = arena_calloc(a, src->n_types, sizeof(*dst->types));
		if (!dst->types)
			return -1;
		for (i = 0; i < src->n_types; i++) {
			if (copy_group(a, &src->types[i], &dst->types[i]) < 0)
				return -1;
			dst->types[i].types = NULL;
			dst->types[i].n_types = 0;
		}
		dst->n_types = src->n_types;
	}
	return 0;
}

/* Do all of group g's types carry label key=value? */
static bool types_share(const struct node_group *g, const char *key, const char *value)
{
	size_t i;

	for (i = 0; i < g->n_types; i++) {
		const char *v = kvlist_get(&g->types[i].tmpl.labels, key);

		if (!v || strcmp(v, value))
			return false;
	}
	return true;
}

/* A template label drift does not read: the hostname (each node's own),
 * the zone (a group may span several), and a key of the group's selector
 * (a node the provider maps to the group by its providerID may lack it:
 * its membership is not in question). */
static bool drift_ignores(const struct node_group *g, const char *key)
{
	size_t i;

	if (!strcmp(key, "kubernetes.io/hostname") || !strcmp(key, "topology.kubernetes.io/zone") ||
	    !strcmp(key, "failure-domain.beta.kubernetes.io/zone"))
		return true;
	for (i = 0; i < g->selector.n; i++)
		if (g->selector.items[i].key && !strcmp(g->selector.items[i].key, key))
			return true;
	return false;
}

bool snapshot_node_drift(const struct snapshot *s, size_t n, char *out, size_t len)
{
	const struct node *node = &s->nodes[n];
	const struct node_group *g;
	size_t i, j;

	if (len)
		out[0] = '\0';
	if (node->group < 0)
		return false;
	g = &s->groups[node->group];
	if (g->n_types) {
		const char *type = kvlist_get(&node->labels, "node.kubernetes.io/instance-type");

		for (i = 0; type && i < g->n_types; i++)
			if (g->types[i].instance_type && !strcmp(g->types[i].instance_type, type))
				break;
		if (type && i == g->n_types) {
			snprintf(out, len, "instance type %s is none of group %s's", type, g->name);
			return true;
		}
	}
	if (node->provider_id && node->provider_id[0] && g->n_outdated) {
		const struct kv key = { node->provider_id, NULL };
		const struct kv *o = bsearch(&key, g->outdated, g->n_outdated, sizeof(*o), cmp_kv_case);

		if (o) {
			snprintf(out, len, "%s", o->value);
			return true;
		}
	}
	for (i = 0; i < g->drift_labels.n; i++) {
		const struct kv *l = &g->drift_labels.items[i];
		const char *v;

		if (!l->key || !l->value || drift_ignores(g, l->key) ||
		    (g->n_types && (!strcmp(l->key, "node.kubernetes.io/instance-type") ||
				    !strcmp(l->key, "beta.kubernetes.io/instance-type") ||
				    !types_share(g, l->key, l->value))))
			continue;
		v = kvlist_get(&node->labels, l->key);
		if (!v || strcmp(v, l->value)) {
			snprintf(out, len, "label %s is %s%s%s, the template's is %s", l->key, v ? "\"" : "",
				 v ? v : "missing", v ? "\"" : "", l->value);
			return true;
		}
	}
	for (i = 0; i < g->n_drift_taints; i++) {
		const struct taint *t = &g->drift_taints[i];

		for (j = 0; j < node->n_taints; j++)
			if (node->taints[j].effect == t->effect && node->taints[j].key && t->key &&
			    !strcmp(node->taints[j].key, t->key) &&
			    !strcmp(node->taints[j].value ? node->taints[j].value : "",
				    t->value ? t->value : ""))
				break;
		if (j == node->n_taints) {
			snprintf(out, len, "taint %s%s%s:%s of the template is missing", t->key ? t->key : "",
				 t->value && t->value[0] ? "=" : "", t->value ? t->value : "",
				 taint_effect_str(t->effect));
			return true;
		}
	}
	return false;
}

int snapshot_set_groups(struct snapshot *s, const struct node_group *groups,
			size_t n, struct errbuf *err)
{
	struct node_group *copy;
	size_t i;

	if (check_open(s, err) < 0)
		return -1;
	if (n == 0) {
		s->groups = NULL;
		s->n_groups = 0;
		return 0;
	}
	copy = arena_calloc(s->arena, n, sizeof(*copy));
	if (!copy)
		return errbuf_set(err, "out of memory");
	for (i = 0; i < n; i++)
		if (copy_group(s->arena, &groups[i], &copy[i]) < 0)
			return errbuf_set(err, "out of memory");
	s->groups = copy;
	s->n_groups = n;
	return 0;
}

/* ---- indexing ---- */

static uint64_t hash_str(uint64_t h, const char *s)
{
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

#define HASH_SEED 14695981039346656037ULL

/* A name -> index table of 1-based indices (0 = empty slot). */
struct name_table {
	uint32_t *slots;
	size_t mask;
};

static int table_init(struct name_table *t, size_t n)
{
	size_t cap = 16;

	while (cap < n * 2)
		cap *= 2;
	t->slots = calloc(cap, sizeof(*t->slots));
	t->mask = cap - 1;
	return t->slots ? 0 : -1;
}

static uint64_t node_hash(const struct node *n)
{
	return hash_str(HASH_SEED, n->name);
}

static uint64_t pod_hash(const struct pod *p)
{
	return hash_str(hash_str(hash_str(HASH_SEED, p->ns), "/"), p->name);
}

/* Indexes node names; fails on a duplicate (it would count twice). */
static int index_nodes(const struct snapshot *s, struct name_table *t,
		       struct errbuf *err)
{
	size_t i, j;

	if (table_init(t, s->n_nodes) < 0)
		return errbuf_set(err, "out of memory");
	for (i = 0; i < s->n_nodes; i++) {
		for (j = node_hash(&s->nodes[i]) & t->mask; t->slots[j];
		     j = (j + 1) & t->mask)
			if (strcmp(s->nodes[t->slots[j] - 1].name, s->nodes[i].name) == 0)
				return errbuf_set(err, "duplicate Node %s",
						  s->nodes[i].name);
		t->slots[j] = (uint32_t)i + 1;
	}
	return 0;
}

static int check_pods_unique(const struct snapshot *s, struct errbuf *err)
{
	struct name_table t;
	size_t i, j;
	int rc = -1;

	if (table_init(&t, s->n_pods) < 0)
		return errbuf_set(err, "out of memory");
	for (i = 0; i < s->n_pods; i++) {
		const struct pod *p = &s->pods[i];

		for (j = pod_hash(p) & t.mask; t.slots[j]; j = (j + 1) & t.mask) {
			const struct pod *q = &s->pods[t.slots[j] - 1];

			if (strcmp(q->name, p->name) == 0 && strcmp(q->ns, p->ns) == 0) {
				errbuf_set(err, "duplicate Pod %s/%s", p->ns, p->name);
				goto out;
			}
		}
		t.slots[j] = (uint32_t)i + 1;
	}
	rc = 0;
out:
	free(t.slots);
	return rc;
}

static int32_t table_find(const struct snapshot *s, const struct name_table *t,
			  const char *name)
{
	size_t j;

	for (j = hash_str(HASH_SEED, name) & t->mask; t->slots[j];
	     j = (j + 1) & t->mask)
		if (strcmp(s->nodes[t->slots[j] - 1].name, name) == 0)
			return (int32_t)(t->slots[j] - 1);
	return -1;
}

static void add_sat(int64_t *dst, int64_t v)
{
	if (__builtin_add_overflow(*dst, v, dst))
		*dst = v > 0 ? INT64_MAX : INT64_MIN;
}

/* Sums the requests of the node's bound, unfinished pods. 'tmp' is
 * scratch space for extended resources, grown as needed. */
static int sum_requests(struct snapshot *s, struct node *n,
			struct res_ext **tmp, size_t *tmp_cap)
{
	struct resources *r = &n->requested;
	size_t i, k, n_ext = 0;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < n->n_pods; i++) {
		const struct pod *p = &s->pods[n->pods[i]];

		if (pod_finished(p))
			continue;
		add_sat(&r->cpu_m, p->requests.cpu_m);
		add_sat(&r->memory, p->requests.memory);
		add_sat(&r->ephemeral, p->requests.ephemeral);
		r->pods++;
		for (k = 0; k < p->requests.n_ext; k++) {
			const struct res_ext *e = &p->requests.ext[k];
			size_t m;

			for (m = 0; m < n_ext; m++)
				if (strcmp((*tmp)[m].name, e->name) == 0)
					break;
			if (m == n_ext) {
				if (n_ext == *tmp_cap) {
					size_t cap = *tmp_cap ? *tmp_cap * 2 : 8;
					struct res_ext *nt = realloc(*tmp, cap * sizeof(*nt));

					if (!nt)
						return -1;
					*tmp = nt;
					*tmp_cap = cap;
				}
				(*tmp)[n_ext].name = e->name;
				(*tmp)[n_ext++].value = 0;
			}
			add_sat(&(*tmp)[m].value, e->value);
		}
	}
	if (n_ext) {
		r->ext = arena_calloc(s->arena, n_ext, sizeof(*r->ext));
		if (!r->ext)
			return -1;
		memcpy(r->ext, *tmp, n_ext * sizeof(*r->ext));
		r->n_ext = n_ext;
	}
	return 0;
}

/* Is the node one of the group's cloud instances? */
static bool group_has_instance(const struct node_group *g, const struct node *n)
{
	return n->provider_id && n->provider_id[0] && g->n_provider_ids &&
	       bsearch(&n->provider_id, g->provider_ids, g->n_provider_ids,
		       sizeof(*g->provider_ids), cmp_case);
}

static bool group_matches(const struct node_group *g, const struct node *n)
{
	size_t i;

	if (g->selector.n == 0)
		return false;
	for (i = 0; i < g->selector.n; i++) {
		const char *v = kvlist_get(&n->labels, g->selector.items[i].key);

		if (!v || strcmp(v, g->selector.items[i].value) != 0)
			return false;
	}
	return true;
}

/* Gives back the unused tail of a grown array. */
static void shrink(void **arr, size_t n, size_t *cap, size_t size)
{
	void *p;

	if (n == 0 || n == *cap)
		return;
	p = realloc(*arr, n * size);
	if (p) {
		*arr = p;
		*cap = n;
	}
}

/* ---- volumes: where a pod's claims let it run ---- */

static int pvc_cmp(const void *a, const void *b)
{
	const struct pvc *x = *(const struct pvc *const *)a, *y = *(const struct pvc *const *)b;
	int c = strcmp(x->ns, y->ns);

	return c ? c : strcmp(x->name, y->name);
}

static int pv_cmp(const void *a, const void *b)
{
	return strcmp((*(const struct pv *const *)a)->name, (*(const struct pv *const *)b)->name);
}

static int sc_cmp(const void *a, const void *b)
{
	return strcmp((*(const struct storage_class *const *)a)->name,
		      (*(const struct storage_class *const *)b)->name);
}

#define ZONE_GA "topology.kubernetes.io/zone"
#define ZONE_BETA "failure-domain.beta.kubernetes.io/zone"
#define REGION_GA "topology.kubernetes.io/region"
#define REGION_BETA "failure-domain.beta.kubernetes.io/region"

static const char *const topology_labels[] = {ZONE_GA, ZONE_BETA, REGION_GA, REGION_BETA};

/* A requirement "key op values" in the arena; 'values' "a__b" is split. */
static int vol_req(struct arena *a, struct selector_req *r, const char *key, enum selector_op op,
		   const char *values)
{
	size_t n = 1, i = 0;
	const char *p, *q;

	r->key = key;
	r->op = op;
	r->values = NULL;
	r->n_values = 0;
	if (!values)
		return 0;
	for (p = values; (q = strstr(p, "__")); p = q + 2)
		n++;
	r->values = arena_calloc(a, n, sizeof(*r->values));
	if (!r->values)
		return -1;
	for (p = values; (q = strstr(p, "__")); p = q + 2)
		if (!(r->values[i++] = arena_strndup(a, p, (size_t)(q - p))))
			return -1;
	if (!(r->values[i++] = arena_strndup(a, p, strlen(p))))
		return -1;
	r->n_values = i;
	return 0;
}

/*
 * The VolumeZone rule for one zone or region label of a PV, as node
 * terms (ORed): the node's label (the GA one when a beta key has no beta
 * label on the node) has one of the values, or the node has none of the
 * four topology labels (a single-zone cluster).
 */
static int zone_affinity(struct arena *a, const char *key, const char *values,
			 struct node_affinity *out)
{
	const char *ga = strcmp(key, ZONE_BETA) == 0 ? ZONE_GA :
			 strcmp(key, REGION_BETA) == 0 ? REGION_GA : NULL;
	size_t n_terms = ga ? 3 : 2, t = 0, i;
	struct node_selector_term *terms = arena_calloc(a, n_terms, sizeof(*terms));

	if (!terms)
		return -1;
	terms[t].exprs = arena_calloc(a, 1, sizeof(*terms[t].exprs));
	if (!terms[t].exprs || vol_req(a, &terms[t].exprs[0], key, SELECTOR_IN, values) < 0)
		return -1;
	terms[t++].n_exprs = 1;
	if (ga) {
		terms[t].exprs = arena_calloc(a, 2, sizeof(*terms[t].exprs));
		if (!terms[t].exprs ||
		    vol_req(a, &terms[t].exprs[0], key, SELECTOR_DOES_NOT_EXIST, NULL) < 0 ||
		    vol_req(a, &terms[t].exprs[1], ga, SELECTOR_IN, values) < 0)
			return -1;
		terms[t++].n_exprs = 2;
	}
	terms[t].exprs = arena_calloc(a, 4, sizeof(*terms[t].exprs));
	if (!terms[t].exprs)
		return -1;
	for (i = 0; i < 4; i++)
		if (vol_req(a, &terms[t].exprs[i], topology_labels[i], SELECTOR_DOES_NOT_EXIST,
			    NULL) < 0)
			return -1;
	terms[t++].n_exprs = 4;
	out->terms = terms;
	out->n_terms = t;
	return 0;
}

struct vol_index {
	const struct pvc **pvcs;
	const struct pv **pvs;
	const struct storage_class **scs;
};

/* Adds one constraint to the pod's list (arena, grown by copying). */
static int push_affinity(struct arena *a, struct pod *p, const struct node_affinity *na)
{
	struct node_affinity *v = arena_calloc(a, p->n_volume_affinity + 1, sizeof(*v));

	if (!v)
		return -1;
	if (p->n_volume_affinity)
		memcpy(v, p->volume_affinity, p->n_volume_affinity * sizeof(*v));
	v[p->n_volume_affinity++] = *na;
	p->volume_affinity = v;
	return 0;
}

static int problem(struct arena *a, struct pod *p, const char *fmt, const char *x,
		   const char *y, const char *z)
{
	char buf[512];

	snprintf(buf, sizeof(buf), fmt, x, y, z);
	p->volume_problem = arena_strndup(a, buf, strlen(buf));
	return p->volume_problem ? 0 : -1;
}

/* One claim of pod 'p'. */
static int resolve_claim(struct snapshot *s, const struct vol_index *ix, struct pod *p,
			 const char *claim)
{
	struct pvc key_pvc = {.ns = p->ns, .name = claim};
	const struct pvc *kp = &key_pvc, **hit;
	size_t i;

	hit = s->n_pvcs ? bsearch(&kp, ix->pvcs, s->n_pvcs, sizeof(*ix->pvcs), pvc_cmp) : NULL;
	if (!hit)
		return s->volumes_known ? problem(s->arena, p, "PersistentVolumeClaim %s/%s not found%s",
						  p->ns, claim, "") : 0;
	if ((*hit)->volume_name[0]) {
		struct pv key_pv = {.name = (*hit)->volume_name};
		const struct pv *kv = &key_pv, **pv;

		pv = s->n_pvs ? bsearch(&kv, ix->pvs, s->n_pvs, sizeof(*ix->pvs), pv_cmp) : NULL;
		if (!pv)
			return s->volumes_known ?
				problem(s->arena, p, "PersistentVolume %s (of claim %s/%s) not found",
					(*hit)->volume_name, p->ns, claim) : 0;
		if ((*pv)->node_affinity.n_terms && push_affinity(s->arena, p, &(*pv)->node_affinity) < 0)
			return -1;
		for (i = 0; i < 4; i++) {
			const char *v = kvlist_get(&(*pv)->labels, topology_labels[i]);
			struct node_affinity na;

			if (!v)
				continue;
			if (zone_affinity(s->arena, topology_labels[i], v, &na) < 0 ||
			    push_affinity(s->arena, p, &na) < 0)
				return -1;
		}
		return 0;
	}
	/* unbound: a WaitForFirstConsumer class binds where the pod goes,
	 * within its allowed topologies; an Immediate one binds first */
	{
		struct storage_class key_sc = {.name = (*hit)->storage_class};
		const struct storage_class *ks = &key_sc, **sc;

		if (!(*hit)->storage_class[0])
			return problem(s->arena, p, "PersistentVolumeClaim %s/%s is not bound yet and has no StorageClass%s",
				       p->ns, claim, "");
		sc = s->n_storage_classes ?
		     bsearch(&ks, ix->scs, s->n_storage_classes, sizeof(*ix->scs), sc_cmp) : NULL;
		if (!sc)
			return s->volumes_known ?
				problem(s->arena, p, "StorageClass %s (of claim %s/%s) not found",
					(*hit)->storage_class, p->ns, claim) : 0;
		if (!(*sc)->wait_for_first_consumer)
			return problem(s->arena, p, "PersistentVolumeClaim %s/%s is not bound yet (StorageClass %s binds it before the pod is placed)",
				       p->ns, claim, (*sc)->name);
		if ((*sc)->allowed_topologies.n_terms &&
		    push_affinity(s->arena, p, &(*sc)->allowed_topologies) < 0)
			return -1;
	}
	return 0;
}

/* Fills each pod's volume_affinity and volume_problem from its claims. */
static int resolve_volumes(struct snapshot *s, struct errbuf *err)
{
	struct vol_index ix = {0};
	size_t i, j;
	int rc = -1;

	for (i = 0; i < s->n_pods; i++) {
		s->pods[i].volume_affinity = NULL;
		s->pods[i].n_volume_affinity = 0;
		s->pods[i].volume_problem = NULL;
	}
	if (s->n_pvcs && !(ix.pvcs = malloc(s->n_pvcs * sizeof(*ix.pvcs))))
		goto oom;
	if (s->n_pvs && !(ix.pvs = malloc(s->n_pvs * sizeof(*ix.pvs))))
		goto oom;
	if (s->n_storage_classes && !(ix.scs = malloc(s->n_storage_classes * sizeof(*ix.scs))))
		goto oom;
	for (i = 0; i < s->n_pvcs; i++)
		ix.pvcs[i] = &s->pvcs[i];
	for (i = 0; i < s->n_pvs; i++)
		ix.pvs[i] = &s->pvs[i];
	for (i = 0; i < s->n_storage_classes; i++)
		ix.scs[i] = &s->storage_classes[i];
	if (s->n_pvcs)
		qsort(ix.pvcs, s->n_pvcs, sizeof(*ix.pvcs), pvc_cmp);
	if (s->n_pvs)
		qsort(ix.pvs, s->n_pvs, sizeof(*ix.pvs), pv_cmp);
	if (s->n_storage_classes)
		qsort(ix.scs, s->n_storage_classes, sizeof(*ix.scs), sc_cmp);
	for (i = 0; i < s->n_pods; i++) {
		struct pod *p = &s->pods[i];

		for (j = 0; j < p->n_claims && !p->volume_problem; j++)
			if (resolve_claim(s, &ix, p, p->claims[j]) < 0)
				goto oom;
	}
	rc = 0;
	goto out;
oom:
	errbuf_set(err, "out of memory resolving volume claims");
out:
	free(ix.pvcs);
	free(ix.pvs);
	free(ix.scs);
	return rc;
}

/* ---- DaemonSet overhead of a new node ---- */

/* The taints the DaemonSet controller tolerates on every pod it makes,
 * whatever its template says (pods stay through node problems and go onto
 * cordoned nodes); network-unavailable only for hostNetwork pods. */
static const struct {
	const char *key;
	enum taint_effect effect;
	bool host_network_only;
} daemon_default_tolerations[] = {
	{"node.kubernetes.io/not-ready", TAINT_NO_EXECUTE, false},
	{"node.kubernetes.io/unreachable", TAINT_NO_EXECUTE, false},
	{"node.kubernetes.io/disk-pressure", TAINT_NO_SCHEDULE, false},
	{"node.kubernetes.io/memory-pressure", TAINT_NO_SCHEDULE, false},
	{"node.kubernetes.io/pid-pressure", TAINT_NO_SCHEDULE, false},
	{"node.kubernetes.io/unschedulable", TAINT_NO_SCHEDULE, false},
	{"node.kubernetes.io/network-unavailable", TAINT_NO_SCHEDULE, true},
};

/* Does the pod the controller makes from 'p' tolerate 't': by one of its
 * own tolerations, or by one the controller adds (operator Exists, the
 * taint's key and effect)? */
static bool daemon_tolerates(const struct pod *p, const struct taint *t)
{
	size_t i;

	for (i = 0; i < sizeof(daemon_default_tolerations) / sizeof(daemon_default_tolerations[0]); i++) {
		if (t->effect != daemon_default_tolerations[i].effect || !t->key ||
		    strcmp(t->key, daemon_default_tolerations[i].key) != 0)
			continue;
		if (!daemon_default_tolerations[i].host_network_only || (p->flags & POD_HOST_NETWORK))
			return true;
	}
	return pod_tolerates(p, t);
}

/* Would a DaemonSet whose pods look like 'p' run on a new node with the
 * template's labels and taints? Its node selector, the expressions of its
 * required node affinity (a DaemonSet pod's matchFields name the node it
 * was made for: not a constraint of the DaemonSet) and its tolerations,
 * with the controller's own (daemon_tolerates()), against the NoSchedule
 * and NoExecute taints, as the controller decides where its pods go. */
static bool daemon_runs_on(const struct pod *p, const struct node_template *tm)
{
	size_t i, j;
	bool any = p->affinity.n_terms == 0;

	for (i = 0; i < p->node_selector.n; i++) {
		const char *v = kvlist_get(&tm->labels, p->node_selector.items[i].key);

		if (!v || strcmp(v, p->node_selector.items[i].value ? p->node_selector.items[i].value : "") != 0)
			return false;
	}
	for (i = 0; i < p->affinity.n_terms && !any; i++) {
		const struct node_selector_term *t = &p->affinity.terms[i];

		if (t->n_exprs == 0 && t->n_fields == 0)
			continue;
		for (j = 0; j < t->n_exprs; j++)
			if (!selector_req_holds(&t->exprs[j], kvlist_get(&tm->labels, t->exprs[j].key)))
				break;
		any = j == t->n_exprs;
	}
	if (!any)
		return false;
	for (i = 0; i < tm->n_taints; i++)
		if (tm->taints[i].effect != TAINT_PREFER_NO_SCHEDULE &&
		    !daemon_tolerates(p, &tm->taints[i]))
			return false;
	return true;
}

/* dst += src, extended resources merged by name into a new arena array. */
static int res_add(struct arena *a, struct resources *dst, const struct resources *src)
{
	struct res_ext *e;
	size_t i, j, n;

	dst->cpu_m += src->cpu_m;
	dst->memory += src->memory;
	dst->ephemeral += src->ephemeral;
	dst->pods += src->pods;
	if (src->n_ext == 0)
		return 0;
	e = arena_calloc(a, dst->n_ext + src->n_ext, sizeof(*e));
	if (!e)
		return -1;
	if (dst->n_ext)
		memcpy(e, dst->ext, dst->n_ext * sizeof(*e));
	n = dst->n_ext;
	for (i = 0; i < src->n_ext; i++) {
		for (j = 0; j < n; j++)
			if (strcmp(e[j].name, src->ext[i].name) == 0)
				break;
		if (j == n)
			e[n++] = src->ext[i];
		else
			e[j].value += src->ext[i].value;
	}
	dst->ext = e;
	dst->n_ext = n;
	return 0;
}

/* A DaemonSet as a new node's overhead: the pod that stands for it and
 * what one of its pods takes there. */
struct ds_rep {
	const char *ns, *name;   /* the DaemonSet */
	uint64_t hash;
	const struct pod *spec;  /* its template, or its first running pod */
	struct resources req;
	bool seen;               /* a running pod gave 'req' */
	bool ext_owned;          /* req.ext is an arena array of its own */
};

/*
 * dst = the larger of dst and src, resource by resource (pods stays 1).
 * dst's extended resources are copied into the arena the first time one
 * of them grows or a name is added ('owned' says they are dst's own).
 */
static int res_max(struct arena *a, struct resources *dst, bool *owned, const struct resources *src)
{
	size_t i, j, n_new = 0;
	bool grow = false;
	struct res_ext *e;

	if (src->cpu_m > dst->cpu_m)
		dst->cpu_m = src->cpu_m;
	if (src->memory > dst->memory)
		dst->memory = src->memory;
	if (src->ephemeral > dst->ephemeral)
		dst->ephemeral = src->ephemeral;
	for (i = 0; i < src->n_ext; i++) {
		if (!src->ext[i].name)
			continue;
		for (j = 0; j < dst->n_ext; j++)
			if (strcmp(dst->ext[j].name, src->ext[i].name) == 0)
				break;
		if (j == dst->n_ext)
			n_new++;
		else if (src->ext[i].value > dst->ext[j].value)
			grow = true;
	}
	if (!grow && !n_new)
		return 0;
	if (!*owned || n_new) {
		if (!(e = arena_calloc(a, dst->n_ext + n_new, sizeof(*e))))
			return -1;
		if (dst->n_ext)
			memcpy(e, dst->ext, dst->n_ext * sizeof(*e));
		dst->ext = e;
		*owned = true;
	}
	for (i = 0; i < src->n_ext; i++) {
		if (!src->ext[i].name)
			continue;
		for (j = 0; j < dst->n_ext; j++)
			if (strcmp(dst->ext[j].name, src->ext[i].name) == 0)
				break;
		if (j == dst->n_ext)
			dst->ext[dst->n_ext++] = src->ext[i];
		else if (src->ext[i].value > dst->ext[j].value)
			dst->ext[j].value = src->ext[i].value;
	}
	return 0;
}

static uint64_t ds_hash(const char *ns, const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	const char *c;

	for (c = ns; *c; c++)
		h = (h ^ (unsigned char)*c) * 0x100000001b3ULL;
	h = (h ^ 0xff) * 0x100000001b3ULL;
	for (c = name; *c; c++)
		h = (h ^ (unsigned char)*c) * 0x100000001b3ULL;
	return h ^ (h >> 31);
}

/* The DaemonSets by (namespace, name): an open-addressing table of
 * indices + 1 into 'v'. */
struct ds_table {
	struct ds_rep *v;
	size_t n, cap;
	uint32_t *slots;
	size_t mask;
};

/* The entry of (ns, name), added (spec NULL) when 'add' and absent; NULL
 * when absent and not added, or out of memory (*oom set). */
static struct ds_rep *ds_lookup(struct ds_table *t, const char *ns, const char *name, bool add,
				bool *oom)
{
	uint64_t h = ds_hash(ns, name);
	size_t i;

	if (t->slots) {
		for (i = h & t->mask; t->slots[i]; i = (i + 1) & t->mask) {
			struct ds_rep *r = &t->v[t->slots[i] - 1];

			if (r->hash == h && (r->ns == ns || strcmp(r->ns, ns) == 0) &&
			    (r->name == name || strcmp(r->name, name) == 0))
				return r;
		}
	}
	if (!add)
		return NULL;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		struct ds_rep *nv = realloc(t->v, cap * sizeof(*nv));

		if (!nv)
			goto oom;
		t->v = nv;
		t->cap = cap;
	}
	if (!t->slots || (t->n + 1) * 2 > t->mask + 1) {
		size_t n_slots = t->slots ? (t->mask + 1) * 2 : 32, j;
		uint32_t *slots = calloc(n_slots, sizeof(*slots));

		if (!slots)
			goto oom;
		for (j = 0; j < t->n; j++) {
			for (i = t->v[j].hash & (n_slots - 1); slots[i]; i = (i + 1) & (n_slots - 1))
				;
			slots[i] = (uint32_t)(j + 1);
		}
		free(t->slots);
		t->slots = slots;
		t->mask = n_slots - 1;
	}
	for (i = h & t->mask; t->slots[i]; i = (i + 1) & t->mask)
		;
	t->v[t->n] = (struct ds_rep){.ns = ns, .name = name, .hash = h};
	t->slots[i] = (uint32_t)(++t->n);
	return &t->v[t->n - 1];
oom:
	*oom = true;
	return NULL;
}

/*
 * The DaemonSets that can put a pod on a new node, each with what its pod
 * would take: the snapshot's DaemonSets when it lists them (their
 * templates say where they run and which host ports they hold), else one
 * per DaemonSet that has pods, its first pod standing for it. What a pod
 * takes is what its DaemonSet's running pods request, the most any of
 * them does resource by resource (their requests are the template's after
 * admission: LimitRange defaults, a VPA's recommendation), and the
 * template's only while no pod of it exists. Unfinished pods that are not
 * terminating count; one pass over the pods. t->v is malloc'ed.
 */
static int daemonset_reps(struct snapshot *s, struct ds_table *t)
{
	bool known = s->n_daemonsets || s->daemonsets_known, oom = false;
	size_t i;

	for (i = 0; i < s->n_daemonsets; i++) {
		const struct daemonset *ds = &s->daemonsets[i];
		struct ds_rep *r = ds_lookup(t, ds->ns, ds->name, true, &oom);

		if (!r)
			return -1;
		if (r->spec)
			continue; /* listed twice: the first stands */
		r->spec = &ds->tmpl;
		r->req = ds->tmpl.requests;
	}
	for (i = 0; i < s->n_pods; i++) {
		const struct pod *p = &s->pods[i];
		struct ds_rep *r;

		if (!(p->flags & POD_DAEMONSET) || (p->flags & POD_TERMINATING) || pod_finished(p) ||
		    !p->controller_name || !p->controller_name[0])
			continue;
		if (!(r = ds_lookup(t, p->ns, p->controller_name, !known, &oom))) {
			if (oom)
				return -1;
			continue; /* a DaemonSet not listed: gone */
		}
		if (!r->spec)
			r->spec = p;
		if (!r->seen) {
			r->req = p->requests;
			r->seen = true;
			r->ext_owned = false;
		} else if (res_max(s->arena, &r->req, &r->ext_owned, &p->requests) < 0) {
			return -1;
		}
	}
	return 0;
}

/* Group 'ng''s DaemonSets of table 't': their pods and requests. 0 or -1 (OOM). */
static int group_daemonsets(struct snapshot *s, const struct ds_table *t, struct node_group *ng)
{
	const struct pod **pods = NULL;
	size_t i;

	memset(&ng->daemonset_requests, 0, sizeof(ng->daemonset_requests));
	ng->n_daemonsets = 0;
	ng->daemonset_pods = NULL;
	for (i = 0; i < t->n; i++) {
		if (!daemon_runs_on(t->v[i].spec, &ng->tmpl))
			continue;
		if (!pods && !(pods = arena_calloc(s->arena, t->n, sizeof(*pods))))
			return -1;
		if (res_add(s->arena, &ng->daemonset_requests, &t->v[i].req) < 0)
			return -1;
		pods[ng->n_daemonsets++] = t->v[i].spec;
	}
	ng->daemonset_pods = pods;
	return 0;
}

/* Each group's DaemonSets (daemonset_reps()), and each of its types'. */
static int daemonset_overhead(struct snapshot *s, struct errbuf *err)
{
	struct ds_table t = {0};
	size_t g, j;

	if (daemonset_reps(s, &t) < 0)
		goto oom;
	for (g = 0; g < s->n_groups; g++) {
		struct node_group *ng = &s->groups[g];

		if (group_daemonsets(s, &t, ng) < 0)
			goto oom;
		for (j = 0; j < ng->n_types; j++)
			if (group_daemonsets(s, &t, &ng->types[j]) < 0)
				goto oom;
	}
	free(t.v);
	free(t.slots);
	return 0;
oom:
	free(t.v);
	free(t.slots);
	return errbuf_set(err, "out of memory counting DaemonSet overhead");
}

int snapshot_finish(struct snapshot *s, int64_t now, struct errbuf *err)
{
	struct name_table nodes = {0};
	struct res_ext *tmp = NULL;
	size_t tmp_cap = 0, i, j, n_pending = 0;
	uint32_t *fill = NULL;
	int rc = -1;

	if (check_open(s, err) < 0)
		return -1;
	if (s->n_nodes > UINT32_MAX - 1 || s->n_pods > UINT32_MAX - 1)
		return errbuf_set(err, "too many objects");
	shrink((void **)&s->nodes, s->n_nodes, &s->cap_nodes, sizeof(*s->nodes));
	shrink((void **)&s->pods, s->n_pods, &s->cap_pods, sizeof(*s->pods));
	shrink((void **)&s->pdbs, s->n_pdbs, &s->cap_pdbs, sizeof(*s->pdbs));
	if (index_nodes(s, &nodes, err) < 0 || check_pods_unique(s, err) < 0)
		goto out;

	/* pods -> nodes, and how many per node */
	for (i = 0; i < s->n_nodes; i++)
		s->nodes[i].n_pods = 0;
	for (i = 0; i < s->n_pods; i++) {
		struct pod *p = &s->pods[i];

		p->node = p->node_name[0] ? table_find(s, &nodes, p->node_name) : -1;
		if (p->node >= 0)
			s->nodes[p->node].n_pods++;
		else if (!p->node_name[0] && !pod_finished(p) &&
			 !(p->flags & (POD_TERMINATING | POD_DAEMONSET)))
			n_pending++;
	}
	/* node -> pods, in input order */
	fill = calloc(s->n_nodes ? s->n_nodes : 1, sizeof(*fill));
	if (!fill)
		goto oom;
	for (i = 0; i < s->n_nodes; i++) {
		struct node *n = &s->nodes[i];

		n->pods = n->n_pods ? arena_calloc(s->arena, n->n_pods, sizeof(*n->pods)) : NULL;
		if (n->n_pods && !n->pods)
			goto oom;
	}
	for (i = 0; i < s->n_pods; i++) {
		int32_t ni = s->pods[i].node;

		if (ni >= 0)
			s->nodes[ni].pods[fill[ni]++] = (uint32_t)i;
	}
	/* requests per node, groups */
	for (j = 0; j < s->n_groups; j++)
		s->groups[j].current = s->groups[j].starting = 0;
	for (i = 0; i < s->n_nodes; i++) {
		struct node *n = &s->nodes[i];

		if (sum_requests(s, n, &tmp, &tmp_cap) < 0)
			goto oom;
		/* the cloud's word first, then labels */
		n->group = -1;
		for (j = 0; j < s->n_groups && n->group < 0; j++)
			if (group_has_instance(&s->groups[j], n))
				n->group = (int32_t)j;
		for (j = 0; j < s->n_groups && n->group < 0; j++)
			if (group_matches(&s->groups[j], n))
				n->group = (int32_t)j;
		/* a node that registered but is not Ready yet is still starting
		 * (its pods cannot run there yet, and a pending pod must not make
		 * another one): upcoming, until it has had the time a node takes */
		if (n->group >= 0 && !n->ready && !n->unschedulable && n->created > 0 &&
		    now - n->created < MODEL_NODE_STARTUP_S)
			s->groups[n->group].starting++;
		else if (n->group >= 0)
			s->groups[n->group].current++;
	}
	for (j = 0; j < s->n_groups; j++) {
		struct node_group *g = &s->groups[j];

		if (g->target < g->current + g->starting)
			g->target = g->current + g->starting;
	}
	/* pending pods, in input order */
	s->pending = NULL;
	s->n_pending = 0;
	if (n_pending) {
		s->pending = arena_calloc(s->arena, n_pending, sizeof(*s->pending));
		if (!s->pending)
			goto oom;
		for (i = 0; i < s->n_pods; i++) {
			const struct pod *p = &s->pods[i];

			if (!p->node_name[0] && !pod_finished(p) &&
			    !(p->flags & (POD_TERMINATING | POD_DAEMONSET)))
				s->pending[s->n_pending++] = (uint32_t)i;
		}
	}
	s->n_anti_pods = 0;
	s->n_reaching = 0;
	s->reaching = NULL;
	for (i = 0; i < s->n_pods; i++) {
		const struct pod *p = &s->pods[i];

		if (p->node < 0 || !(p->n_anti_terms || p->n_host_ports) || pod_finished(p))
			continue;
		s->n_anti_pods += p->n_anti_terms > 0;
		s->n_reaching++;
	}
	if (s->n_reaching) {
		size_t k = 0;

		if (!(s->reaching = arena_calloc(s->arena, s->n_reaching, sizeof(*s->reaching))))
			goto oom;
		for (i = 0; i < s->n_pods; i++) {
			const struct pod *p = &s->pods[i];

			if (p->node >= 0 && (p->n_anti_terms || p->n_host_ports) && !pod_finished(p))
				s->reaching[k++] = (uint32_t)i;
		}
	}
	if (resolve_volumes(s, err) < 0 || daemonset_overhead(s, err) < 0)
		goto out;
	s->now = now;
	s->finished = true;
	/* keep the name index for snapshot_find_node() */
	s->node_slots = nodes.slots;
	s->node_mask = nodes.mask;
	nodes.slots = NULL;
	rc = 0;
	goto out;
oom:
	errbuf_set(err, "out of memory");
out:
	free(nodes.slots);
	free(fill);
	free(tmp);
	return rc;
}

int32_t snapshot_find_node(const struct snapshot *s, const char *name)
{
	size_t i;

	if (!name)
		return -1;
	if (s->node_slots) {
		struct name_table t = {s->node_slots, s->node_mask};

		return table_find(s, &t, name);
	}
	for (i = 0; i < s->n_nodes; i++)
		if (strcmp(s->nodes[i].name, name) == 0)
			return (int32_t)i;
	return -1;
}

int32_t snapshot_find_group(const struct snapshot *s, const char *name)
{
	size_t i;

	if (!name)
		return -1;
	for (i = 0; i < s->n_groups; i++)
		if (s->groups[i].name && strcmp(s->groups[i].name, name) == 0)
			return (int32_t)i;
	return -1;
}
