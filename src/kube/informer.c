/*
 * informer: list-then-watch of one resource on its own thread, its cache
 * (a hash table of reference-counted decoded objects keyed by
 * namespace/name) and the snapshots built from a set of them, one per
 * kind. Decoding is model.c's; HTTP and stream splitting are client.c's;
 * what a change means is informer_classify.c's; when to reconcile is the
 * caller's (the on_change hook).
 */
#include "kube/informer.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arena.h"
#include "buf.h"
#include "kube/client.h"
#include "log.h"
#include "model.h"
#include "runtime/clock.h"

#define DEFAULT_PAGE 500
#define DEFAULT_LIST_MS 60000L
#define DEFAULT_BACKOFF_INITIAL (800 * CLOCK_NS_PER_MS)
#define DEFAULT_BACKOFF_MAX (30 * CLOCK_NS_PER_S)
#define DEFAULT_BACKOFF_JITTER 0.5
#define DEFAULT_RESET (120 * CLOCK_NS_PER_S)
#define DEFAULT_WATCH_MIN 300
#define DEFAULT_WATCH_MAX 600
#define DEFAULT_SHORT_WATCH CLOCK_NS_PER_S
#define WATCH_GRACE_MS 60000L     /* client-side guard beyond timeoutSeconds */
#define SCRATCH_OBJECTS 256       /* decodes before the scratch snapshot is renewed */
#define SCRATCH_BYTES ((size_t)4 << 20)
#define RV_MAX 128

/* ---- the cache ---- */

/*
 * One cached object. The cache holds one reference, each snapshot that
 * shows the object another; the last one frees it. 'obj' and the strings
 * are immutable once the entry is made; 'next' belongs to the cache (its
 * informer's lock).
 */
struct entry {
	atomic_int refs;
	struct entry *next;
	uint64_t hash;
	void *obj;        /* a model struct of the kind in one heap block (*_clone) */
	const char *ns;   /* inside obj; "" for cluster-scoped kinds */
	const char *name;
};

struct cache {
	struct entry **slots; /* chains; cap a power of two */
	size_t cap, n;
};

static uint64_t key_hash(const char *ns, const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a over "ns/name" */
	const char *p;

	for (p = ns; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	h = (h ^ '/') * 0x100000001b3ULL;
	for (p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	return h;
}

static struct entry *entry_new(enum informer_kind kind, void *obj)
{
	struct entry *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	atomic_init(&e->refs, 1);
	e->obj = obj;
	switch (kind) {
	case INFORMER_NODES:
		e->ns = "";
		e->name = ((struct node *)obj)->name;
		break;
	case INFORMER_PODS:
		e->ns = ((struct pod *)obj)->ns;
		e->name = ((struct pod *)obj)->name;
		break;
	case INFORMER_PDBS:
		e->ns = ((struct pdb *)obj)->ns;
		e->name = ((struct pdb *)obj)->name;
		break;
	case INFORMER_NAMESPACES:
		e->ns = "";
		e->name = ((struct namespace_obj *)obj)->name;
		break;
	case INFORMER_PVCS:
		e->ns = ((struct pvc *)obj)->ns;
		e->name = ((struct pvc *)obj)->name;
		break;
	case INFORMER_PVS:
		e->ns = "";
		e->name = ((struct pv *)obj)->name;
		break;
	case INFORMER_STORAGE_CLASSES:
		e->ns = "";
		e->name = ((struct storage_class *)obj)->name;
		break;
	case INFORMER_DAEMONSETS:
		e->ns = ((struct daemonset *)obj)->ns;
		e->name = ((struct daemonset *)obj)->name;
		break;
	}
	e->hash = key_hash(e->ns, e->name);
	return e;
}

static void entry_ref(struct entry *e)
{
	atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
}

static void entry_unref(struct entry *e)
{
	if (e && atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) == 1) {
		free(e->obj);
		free(e);
	}
}

/* The link that points at the entry for ns/name, or at the NULL ending its chain. */
static struct entry **cache_link(struct cache *c, const char *ns, const char *name,
				 uint64_t hash)
{
	struct entry **l = &c->slots[hash & (c->cap - 1)];

	while (*l && ((*l)->hash != hash || strcmp((*l)->name, name) != 0 ||
		      strcmp((*l)->ns, ns) != 0))
		l = &(*l)->next;
	return l;
}

static int cache_grow(struct cache *c)
{
	size_t cap = c->cap ? c->cap * 2 : 64, i;
	struct entry **slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -1;
	for (i = 0; i < c->cap; i++) {
		struct entry *e = c->slots[i], *next;

		for (; e; e = next) {
			next = e->next;
			e->next = slots[e->hash & (cap - 1)];
			slots[e->hash & (cap - 1)] = e;
		}
	}
	free(c->slots);
	c->slots = slots;
	c->cap = cap;
	return 0;
}

/* Inserts 'e' (taking the caller's reference), replacing an entry of the
 * same key. Returns 0, or -1 when out of memory ('e' is released). */
static int cache_put(struct cache *c, struct entry *e)
{
	struct entry **l, *old;

	if ((c->n >= c->cap) && cache_grow(c) < 0) {
		entry_unref(e);
		return -1;
	}
	l = cache_link(c, e->ns, e->name, e->hash);
	old = *l;
	e->next = old ? old->next : NULL;
	*l = e;
	if (old)
		entry_unref(old);
	else
		c->n++;
	return 0;
}

/* The entry for the key of 'e' in 'c', or NULL. */
static struct entry *cache_find(struct cache *c, const struct entry *e)
{
	return c->cap ? *cache_link(c, e->ns, e->name, e->hash) : NULL;
}

/* Removes ns/name. Returns true when it was there. */
static bool cache_del(struct cache *c, const char *ns, const char *name)
{
	struct entry **l, *e;

	if (!c->cap)
		return false;
	l = cache_link(c, ns, name, key_hash(ns, name));
	e = *l;
	if (!e)
		return false;
	*l = e->next;
	c->n--;
	entry_unref(e);
	return true;
}

static void cache_clear(struct cache *c)
{
	size_t i;

	for (i = 0; i < c->cap; i++) {
		struct entry *e = c->slots[i], *next;

		for (; e; e = next) {
			next = e->next;
			entry_unref(e);
		}
	}
	free(c->slots);
	memset(c, 0, sizeof(*c));
}

/* ---- the informer ---- */

struct informer {
	enum informer_kind kind;
	struct informer_opts o;   /* defaults filled in */
	const char *path;         /* collection path */
	const char *kind_name;    /* "Node", for the decoder */
	pthread_t thread;
	bool started, joined;
	atomic_int stop;

	pthread_mutex_t mu;       /* guards the fields below */
	pthread_cond_t cv;        /* stats changed, or stop */
	struct cache cache;
	char rv[RV_MAX];
	struct informer_stats st;
	char last_error[ERRBUF_MAX + RV_MAX + 128]; /* the latest failure, "" when none */

	/* the informer's thread only */
	struct snapshot *scratch; /* decoding area, renewed now and then */
	uint64_t rng;             /* watch timeouts */
	struct informer_retry retry;
};

enum step {
	STEP_OK,
	STEP_FAIL,     /* back off, then retry what failed */
	STEP_EXPIRED,  /* the resourceVersion is gone: list again */
	STEP_STOP,
};

/* What each kind is: its collection, its objects' kind, its resource and
 * API group (RBAC's words), whether it is namespaced and optional, and what
 * a snapshot says when it is unknown. */
static const struct kind_def {
	const char *path;
	const char *object;
	const char *resource;
	const char *group;
	bool namespaced;
	bool optional;
	const char *unknown; /* the snapshot flag left false */
} kinds[INFORMER_KINDS] = {
	[INFORMER_NODES] = {"/api/v1/nodes", "Node", "nodes", "", false, false, NULL},
	[INFORMER_PODS] = {"/api/v1/pods", "Pod", "pods", "", true, false, NULL},
	[INFORMER_PDBS] = {"/apis/policy/v1/poddisruptionbudgets", "PodDisruptionBudget",
			   "poddisruptionbudgets", "policy", true, false, NULL},
	[INFORMER_NAMESPACES] = {"/api/v1/namespaces", "Namespace", "namespaces", "", false, true,
				 "namespaces_known"},
	[INFORMER_PVCS] = {"/api/v1/persistentvolumeclaims", "PersistentVolumeClaim",
			   "persistentvolumeclaims", "", true, true, "volumes_known"},
	[INFORMER_PVS] = {"/api/v1/persistentvolumes", "PersistentVolume", "persistentvolumes", "",
			  false, true, "volumes_known"},
	[INFORMER_STORAGE_CLASSES] = {"/apis/storage.k8s.io/v1/storageclasses", "StorageClass",
				      "storageclasses", "storage.k8s.io", false, true,
				      "volumes_known"},
	[INFORMER_DAEMONSETS] = {"/apis/apps/v1/daemonsets", "DaemonSet", "daemonsets", "apps", true,
				 true, "daemonsets_known"},
};

const char *informer_kind_str(enum informer_kind k)
{
	return (unsigned)k < INFORMER_KINDS ? kinds[k].resource : "?";
}

bool informer_kind_optional(enum informer_kind k)
{
	return (unsigned)k < INFORMER_KINDS && kinds[k].optional;
}

#define LOGF(inf, level, ...) \
	do { \
		if ((inf)->o.log) \
			log_at((inf)->o.log, (level), clock_wall(clock_real()), __VA_ARGS__); \
	} while (0)

static int64_t now_ns(void)
{
	return clock_now(clock_real());
}

static bool stopping(struct informer *inf)
{
	return atomic_load(&inf->stop) != 0;
}

/* Waits on 'cv' until signalled or until 't' (CLOCK_MONOTONIC ns, the real
 * clock's time base; the condition variables are created on it). */
static void cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu, int64_t t)
{
	struct timespec ts;

	if (t < 0)
		t = 0;
	ts.tv_sec = (time_t)(t / CLOCK_NS_PER_S);
	ts.tv_nsec = (long)(t % CLOCK_NS_PER_S);
	pthread_cond_timedwait(cv, mu, &ts);
}

/* Call with the lock held: the cache is known to follow the server now. */
static void in_sync_locked(struct informer *inf)
{
	inf->st.in_sync_ns = now_ns();
}

/* Call with the lock held after changing stats. */
static void changed_locked(struct informer *inf)
{
	inf->st.objects = inf->cache.n;
	pthread_cond_broadcast(&inf->cv);
}

static void notify(struct informer *inf, enum informer_change change)
{
	if (inf->o.on_change)
		inf->o.on_change(inf->o.on_change_ctx, inf->kind, change);
}

/*
 * What replacing cache 'old' by 'fresh' changes (informer_classify over
 * every object, gone ones counting as changed). Only the informer's
 * thread writes its cache, so it reads both without the lock.
 */
static enum informer_change cache_diff(const struct informer *inf, struct cache *old,
				       struct cache *fresh)
{
	enum informer_change worst = INFORMER_UNCHANGED;
	size_t i, kept = 0;

	for (i = 0; i < fresh->cap && worst < INFORMER_UNSCHEDULABLE; i++) {
		const struct entry *e;

		for (e = fresh->slots[i]; e; e = e->next) {
			const struct entry *o = cache_find(old, e);
			enum informer_change c = informer_classify(inf->kind, o ? o->obj : NULL,
								  e->obj);

			kept += o != NULL;
			if (c > worst)
				worst = c;
		}
	}
	if (worst == INFORMER_UNCHANGED && kept < old->n)
		worst = INFORMER_CHANGED;
	return worst;
}

/* metadata.resourceVersion of an object, or NULL. */
static const char *object_rv(const cJSON *obj)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	const cJSON *rv = cJSON_GetObjectItemCaseSensitive(meta, "resourceVersion");

	return cJSON_IsString(rv) && rv->valuestring[0] ? rv->valuestring : NULL;
}

/* Call with the lock held. An over-long version is refused (logged). */
static void set_rv_locked(struct informer *inf, const char *rv)
{
	if (!rv)
		return;
	if (strlen(rv) >= sizeof(inf->rv)) {
		LOGF(inf, LOG_WARN, "informer %s: resourceVersion longer than %zu bytes ignored",
		     informer_kind_str(inf->kind), sizeof(inf->rv) - 1);
		return;
	}
	snprintf(inf->rv, sizeof(inf->rv), "%s", rv);
}

/* Objects decoded into a scratch snapshot so far. */
static size_t scratch_objects(const struct snapshot *s)
{
	return s->n_nodes + s->n_pods + s->n_pdbs + s->n_namespaces + s->n_pvcs + s->n_pvs +
	       s->n_storage_classes + s->n_daemonsets;
}

/* A self-contained copy of the last object of 'kind' in 's' (NULL: none, or
 * out of memory). */
static void *clone_last(const struct snapshot *s, enum informer_kind kind)
{
	switch (kind) {
	case INFORMER_NODES:
		return s->n_nodes ? node_clone(&s->nodes[s->n_nodes - 1]) : NULL;
	case INFORMER_PODS:
		return s->n_pods ? pod_clone(&s->pods[s->n_pods - 1]) : NULL;
	case INFORMER_PDBS:
		return s->n_pdbs ? pdb_clone(&s->pdbs[s->n_pdbs - 1]) : NULL;
	case INFORMER_NAMESPACES:
		return s->n_namespaces ? namespace_clone(&s->namespaces[s->n_namespaces - 1]) : NULL;
	case INFORMER_PVCS:
		return s->n_pvcs ? pvc_clone(&s->pvcs[s->n_pvcs - 1]) : NULL;
	case INFORMER_PVS:
		return s->n_pvs ? pv_clone(&s->pvs[s->n_pvs - 1]) : NULL;
	case INFORMER_STORAGE_CLASSES:
		return s->n_storage_classes ?
			storage_class_clone(&s->storage_classes[s->n_storage_classes - 1]) : NULL;
	case INFORMER_DAEMONSETS:
		return s->n_daemonsets ? daemonset_clone(&s->daemonsets[s->n_daemonsets - 1]) : NULL;
	}
	return NULL;
}

/*
 * Decodes 'obj' into a new cache entry (one reference, the caller's).
 * Returns NULL with a message naming the object and the field on a
 * malformed object, or saying out of memory.
 */
static struct entry *decode_entry(struct informer *inf, const cJSON *obj, struct errbuf *err)
{
	struct snapshot *s = inf->scratch;
	struct entry *e;
	void *clone = NULL;
	size_t before;

	if (s && (scratch_objects(s) >= SCRATCH_OBJECTS ||
		  arena_used(s->arena) > SCRATCH_BYTES)) {
		snapshot_free(s);
		s = inf->scratch = NULL;
	}
	if (!s && !(s = inf->scratch = snapshot_new())) {
		errbuf_set(err, "out of memory");
		return NULL;
	}
	before = scratch_objects(s);
	if (snapshot_add_object(s, obj, inf->kind_name, err) < 0)
		return NULL;
	if (scratch_objects(s) == before + 1)
		clone = clone_last(s, inf->kind);
	if (!clone || !(e = entry_new(inf->kind, clone))) {
		free(clone);
		errbuf_set(err, "out of memory");
		return NULL;
	}
	return e;
}

/* A skipped object or event: logged, counted, never fatal. */
static void skip(struct informer *inf, const char *what, const char *why)
{
	LOGF(inf, LOG_WARN, "informer %s: skipping %s: %s", informer_kind_str(inf->kind), what,
	     why);
	pthread_mutex_lock(&inf->mu);
	inf->st.skipped++;
	changed_locked(inf);
	pthread_mutex_unlock(&inf->mu);
}

/* ---- backoff ---- */

/* ---- the retry schedule ---- */

void informer_retry_init(struct informer_retry *r, const struct backoff_policy *p,
			 int64_t reset_ns, uint64_t seed, int64_t now)
{
	memset(r, 0, sizeof(*r));
	r->p = *p;
	r->reset_ns = reset_ns;
	r->rng = seed;
	r->calm_since = now;
}

int64_t informer_retry_failed(struct informer_retry *r, int64_t now)
{
	int64_t d;

	if (r->failures > 0 && now - r->calm_since >= r->reset_ns)
		r->failures = 0;
	if (r->failures < INT_MAX)
		r->failures++;
	d = backoff_delay(&r->p, r->failures, &r->rng);
	return d > 0 ? d : 1;
}

void informer_retry_waited(struct informer_retry *r, int64_t now)
{
	r->calm_since = now;
}

void informer_retry_listed(struct informer_retry *r)
{
	r->failures = 0;
}

int64_t informer_retry_expired(struct informer_retry *r, int64_t now)
{
	int64_t d;

	if (r->expired > 0 && now - r->last_expired >= r->reset_ns)
		r->expired = 0;
	r->last_expired = now;
	if (r->expired < INT_MAX)
		r->expired++;
	if (r->expired == 1)
		return 0;
	d = backoff_delay(&r->p, r->expired - 1, &r->rng);
	return d > 0 ? d : 1;
}

/* ---- waits ---- */

/* Waits until 'until' (real clock ns) or a stop. Returns true when asked to stop. */
static bool wait_until(struct informer *inf, int64_t until)
{
	pthread_mutex_lock(&inf->mu);
	while (!stopping(inf) && now_ns() < until)
		cond_wait_until(&inf->cv, &inf->mu, until);
	pthread_mutex_unlock(&inf->mu);
	return stopping(inf);
}

/*
 * Records a failure and waits out its backoff: 800 ms doubling to 30 s
 * (by default) with jitter, the count forgotten after a calm period as
 * client-go's backoff manager does, and by a successful list. Returns
 * true when asked to stop.
 */
static bool backoff_wait(struct informer *inf, const char *what)
{
	int64_t now = now_ns(), delay;
	bool stop;

	delay = informer_retry_failed(&inf->retry, now);
	LOGF(inf, LOG_WARN, "informer %s: %s; retrying in %.3f s (failure %d in a row)",
	     informer_kind_str(inf->kind), what, (double)delay / CLOCK_NS_PER_S,
	     inf->retry.failures);
	pthread_mutex_lock(&inf->mu);
	snprintf(inf->last_error, sizeof(inf->last_error), "%s", what);
	inf->st.errors++;
	changed_locked(inf);
	pthread_mutex_unlock(&inf->mu);
	stop = wait_until(inf, now + delay);
	informer_retry_waited(&inf->retry, now_ns());
	return stop;
}

/*
 * A resourceVersion or continue token expired (410): counts a relist and
 * waits before it as the retry schedule says, logging 'what' and the wait.
 * Returns true when asked to stop.
 */
static bool relist_wait(struct informer *inf, const char *what)
{
	int64_t now = now_ns(), delay = informer_retry_expired(&inf->retry, now);

	if (delay > 0)
		LOGF(inf, LOG_INFO, "informer %s: %s; listing again in %.3f s (410 number %d in a row)",
		     informer_kind_str(inf->kind), what, (double)delay / CLOCK_NS_PER_S,
		     inf->retry.expired);
	else
		LOGF(inf, LOG_INFO, "informer %s: %s; listing again", informer_kind_str(inf->kind),
		     what);
	pthread_mutex_lock(&inf->mu);
	inf->st.relists++;
	inf->st.relist_delay_ns = delay;
	changed_locked(inf);
	pthread_mutex_unlock(&inf->mu);
	return delay > 0 && wait_until(inf, now + delay);
}

/* An answer that says an optional kind cannot be had: forbidden (RBAC) or
 * not served at all. */
static bool refused(const struct informer *inf, enum kube_stream_end end, long status)
{
	return kinds[inf->kind].optional && end == KUBE_STREAM_STATUS &&
	       (status == 403 || status == 404);
}

/*
 * The server refused 'verb' on an optional kind (HTTP 'status', its
 * 'message'): says so once, with the rule the ClusterRole lacks, marks the
 * informer unavailable (snapshots call the kind unknown; the daemon runs
 * on) and waits out a backoff quietly before the next try, so that a
 * permission granted later is picked up. Returns true when asked to stop.
 */
static bool unavailable_wait(struct informer *inf, const char *verb, long status,
			     const char *message)
{
	const struct kind_def *k = &kinds[inf->kind];
	int64_t now = now_ns(), delay = informer_retry_failed(&inf->retry, now);
	bool first, stop;

	pthread_mutex_lock(&inf->mu);
	first = !inf->st.unavailable;
	inf->st.unavailable = true;
	inf->st.errors++;
	changed_locked(inf);
	pthread_mutex_unlock(&inf->mu);
	if (first && status == 403)
		LOGF(inf, LOG_WARN,
		     "informer %s: the API server forbids luascale to %s %s%s%s cluster-wide "
		     "(HTTP 403: %s); add to its ClusterRole the rule {apiGroups: [\"%s\"], "
		     "resources: [\"%s\"], verbs: [\"list\", \"watch\"]} (deploy/base/rbac.yaml "
		     "has it). Running without them meanwhile (%s false); asking again every "
		     "%g s at most",
		     k->resource, verb, k->resource, k->group[0] ? "." : "", k->group, message,
		     k->group, k->resource, k->unknown,
		     (double)inf->o.backoff.max_ns / CLOCK_NS_PER_S);
	else if (first)
		LOGF(inf, LOG_WARN,
		     "informer %s: the API server does not serve %s (HTTP %ld on %s: %s). Running "
		     "without them (%s false); asking again every %g s at most",
		     k->resource, k->path, status, verb, message, k->unknown,
		     (double)inf->o.backoff.max_ns / CLOCK_NS_PER_S);
	else
		LOGF(inf, LOG_DEBUG, "informer %s: %s still refused (HTTP %ld); again in %.3f s",
		     k->resource, verb, status, (double)delay / CLOCK_NS_PER_S);
	stop = wait_until(inf, now + delay);
	informer_retry_waited(&inf->retry, now_ns());
	return stop;
}

/* Call with the lock held: the kind answers again. Returns whether it did not. */
static bool available_locked(struct informer *inf)
{
	bool was = inf->st.unavailable;

	inf->st.unavailable = false;
	return was;
}

/* ---- list ---- */

struct page_ctx {
	struct informer *inf;
	struct cache *fresh;
	int pages;                /* top-level values received */
	bool bad;                 /* not a List */
	char why[256];
	char *cont;               /* metadata.continue, owned */
	char rv[RV_MAX];          /* metadata.resourceVersion */
};

static int on_page(void *ctx, const char *json, size_t len)
{
	struct page_ctx *pc = ctx;
	struct informer *inf = pc->inf;
	const cJSON *items, *item, *meta, *v;
	cJSON *doc;
	size_t i = 0;

	if (pc->pages++ > 0) {
		snprintf(pc->why, sizeof(pc->why), "more than one JSON value in a list response");
		pc->bad = true;
		return 1;
	}
	doc = cJSON_ParseWithLength(json, len);
	if (!doc || !cJSON_IsObject(doc)) {
		snprintf(pc->why, sizeof(pc->why), "the list response is not a JSON object");
		pc->bad = true;
		cJSON_Delete(doc);
		return 1;
	}
	items = cJSON_GetObjectItemCaseSensitive(doc, "items");
	meta = cJSON_GetObjectItemCaseSensitive(doc, "metadata");
	if ((items && !cJSON_IsArray(items) && !cJSON_IsNull(items)) ||
	    (meta && !cJSON_IsObject(meta))) {
		snprintf(pc->why, sizeof(pc->why), "the list response has no items array");
		pc->bad = true;
		cJSON_Delete(doc);
		return 1;
	}
	v = cJSON_GetObjectItemCaseSensitive(meta, "continue");
	if (cJSON_IsString(v) && v->valuestring[0]) {
		pc->cont = strdup(v->valuestring);
		if (!pc->cont) {
			snprintf(pc->why, sizeof(pc->why), "out of memory");
			pc->bad = true;
			cJSON_Delete(doc);
			return 1;
		}
	}
	v = cJSON_GetObjectItemCaseSensitive(meta, "resourceVersion");
	if (cJSON_IsString(v))
		snprintf(pc->rv, sizeof(pc->rv), "%s", v->valuestring);
	cJSON_ArrayForEach(item, items) {
		struct errbuf err = {""};
		struct entry *e = decode_entry(inf, item, &err);

		if (!e) {
			char what[48];

			snprintf(what, sizeof(what), "list item %zu", i);
			skip(inf, what, err.msg);
		} else if (cache_put(pc->fresh, e) < 0) {
			snprintf(pc->why, sizeof(pc->why), "out of memory");
			pc->bad = true;
			cJSON_Delete(doc);
			return 1;
		}
		i++;
	}
	cJSON_Delete(doc);
	return 0;
}

/*
 * Lists every object, a page at a time, into a fresh cache that replaces
 * the old one at the end (the old one stays visible meanwhile). A 410 on a
 * continue token starts the list again.
 */
static enum step list_all(struct informer *inf)
{
	struct cache fresh = {0}, old;
	enum informer_change change;
	size_t n;
	bool was_unavailable;
	char *cont = NULL;
	char rv[RV_MAX] = "";
	enum step step = STEP_FAIL;
	struct buf path = BUF_INIT;
	char what[ERRBUF_MAX + RV_MAX + 128];

	for (;;) {
		struct kube_stream_opts so = {.stop = &inf->stop,
					      .timeout_ms = inf->o.list_timeout_ms};
		struct page_ctx pc = {.inf = inf, .fresh = &fresh};
		struct kube_response resp;
		struct errbuf err = {""};
		enum kube_stream_end end;
		int rc;

		buf_free(&path);
		buf_printf(&path, "%s?limit=%d", inf->path, inf->o.page_size);
		if (cont) {
			buf_puts(&path, "&continue=");
			kube_escape(&path, cont);
		}
		if (path.oom) {
			snprintf(what, sizeof(what), "list: out of memory");
			goto fail;
		}
		pthread_mutex_lock(&inf->mu);
		inf->st.pages++;
		changed_locked(inf);
		pthread_mutex_unlock(&inf->mu);
		rc = kube_stream(inf->o.client, path.data, &so, on_page, &pc, &end, &resp, &err);
		if (stopping(inf)) {
			free(pc.cont);
			kube_response_free(&resp);
			step = STEP_STOP;
			goto out;
		}
		if (rc < 0 || pc.bad || end != KUBE_STREAM_EOF || pc.pages == 0) {
			if (rc == 0 && refused(inf, end, resp.status)) {
				bool stop = unavailable_wait(inf, "list", resp.status, resp.message);

				free(pc.cont);
				kube_response_free(&resp);
				step = stop ? STEP_STOP : STEP_FAIL;
				goto out;
			}
			if (end == KUBE_STREAM_STATUS && resp.status == 410 && cont) {
				char why[sizeof(resp.message) + 64];
				bool stop;

				snprintf(why, sizeof(why), "list continue token expired (%s)",
					 resp.message);
				stop = relist_wait(inf, why);
				free(cont);
				cont = NULL;
				free(pc.cont);
				kube_response_free(&resp);
				cache_clear(&fresh);
				if (stop) {
					step = STEP_STOP;
					goto out;
				}
				continue;
			}
			if (rc < 0)
				snprintf(what, sizeof(what), "list: %s", err.msg);
			else if (pc.bad)
				snprintf(what, sizeof(what), "list: %s", pc.why);
			else if (end == KUBE_STREAM_STATUS)
				snprintf(what, sizeof(what), "list: HTTP %ld %s: %s", resp.status,
					 resp.reason, resp.message);
			else if (end == KUBE_STREAM_TIMEOUT)
				snprintf(what, sizeof(what), "list: no complete answer within %ld ms",
					 inf->o.list_timeout_ms);
			else
				snprintf(what, sizeof(what), "list: empty response");
			free(pc.cont);
			kube_response_free(&resp);
			goto fail;
		}
		kube_response_free(&resp);
		free(cont);
		cont = pc.cont;
		if (!cont) {
			snprintf(rv, sizeof(rv), "%s", pc.rv);
			break;
		}
	}
	if (!rv[0]) {
		snprintf(what, sizeof(what), "list: the response has no metadata.resourceVersion");
		goto fail;
	}
	change = cache_diff(inf, &inf->cache, &fresh);
	pthread_mutex_lock(&inf->mu);
	old = inf->cache;
	inf->cache = fresh;
	n = fresh.n;
	memset(&fresh, 0, sizeof(fresh));
	set_rv_locked(inf, rv);
	inf->st.lists++;
	inf->st.synced = true;
	was_unavailable = available_locked(inf);
	in_sync_locked(inf);
	changed_locked(inf);
	pthread_mutex_unlock(&inf->mu);
	cache_clear(&old);
	informer_retry_listed(&inf->retry);
	if (was_unavailable)
		LOGF(inf, LOG_INFO, "informer %s: the API server answers the list now",
		     informer_kind_str(inf->kind));
	LOGF(inf, LOG_INFO, "informer %s: listed %zu objects at resourceVersion %s",
	     informer_kind_str(inf->kind), n, rv);
	notify(inf, change);
	step = STEP_OK;
	goto out;
fail:
	if (inf->o.on_list_failed)
		inf->o.on_list_failed(inf->o.on_list_failed_ctx, inf->kind, what);
	step = backoff_wait(inf, what) ? STEP_STOP : STEP_FAIL;
out:
	free(cont);
	buf_free(&path);
	cache_clear(&fresh);
	return step;
}

/* ---- watch ---- */

struct watch_ctx {
	struct informer *inf;
	uint64_t events;
	bool expired;   /* an ERROR event with 410 */
	bool failed;    /* another ERROR event */
	char why[256];
};

/* The namespace and name of a deleted object, without decoding the rest. */
static int object_key(const cJSON *obj, const char **ns, const char **name)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(meta, "name");
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(meta, "namespace");

	if (!cJSON_IsString(n) || !n->valuestring[0])
		return -1;
	*name = n->valuestring;
	*ns = cJSON_IsString(s) ? s->valuestring : "";
	return 0;
}

static void on_upsert(struct watch_ctx *w, const char *type, const cJSON *obj)
{
	struct informer *inf = w->inf;
	struct errbuf err = {""};
	struct entry *e = decode_entry(inf, obj, &err);
	const char *rv = object_rv(obj);
	enum informer_change change = INFORMER_CHANGED;
	bool stored = false;

	/* only this thread changes the cache: it reads it without the lock */
	if (e) {
		struct entry *o = cache_find(&inf->cache, e);

		change = informer_classify(inf->kind, o ? o->obj : NULL, e->obj);
	}
	pthread_mutex_lock(&inf->mu);
	if (e) {
		if (cache_put(&inf->cache, e) == 0)
			stored = true;
		else
			snprintf(err.msg, sizeof(err.msg), "out of memory");
	}
	set_rv_locked(inf, rv);
	inf->st.events++;
	if (stored && change == INFORMER_UNCHANGED)
		inf->st.unchanged++;
	in_sync_locked(inf);
	changed_locked(inf);
	pthread_mutex_unlock(&inf->mu);
	if (stored) {
		notify(inf, change);
	} else {
		char what[32];

		/* the last good version, if any, stays in the cache */
		snprintf(what, sizeof(what), "%s event", type);
		skip(inf, what, err.msg);
	}
}

static void on_delete(struct watch_ctx *w, const cJSON *obj)
{
	struct informer *inf = w->inf;
	const char *ns, *name;
	bool removed = false;

	if (object_key(obj, &ns, &name) < 0) {
		skip(inf, "DELETED event", "the object has no metadata.name");
		pthread_mutex_lock(&inf->mu);
		set_rv_locked(inf, object_rv(obj));
		inf->st.events++;
		in_sync_locked(inf);
		changed_locked(inf);
		pthread_mutex_unlock(&inf->mu);
		return;
	}
	if (!kinds[inf->kind].namespaced)
		ns = "";
	pthread_mutex_lock(&inf->mu);
	removed = cache_del(&inf->cache, ns, name);
	set_rv_locked(inf, object_rv(obj));
	inf->st.events++;
	in_sync_locked(inf);
	changed_locked(inf);
	pthread_mutex_unlock(&inf->mu);
	if (removed)
		notify(inf, INFORMER_CHANGED);
}

/* An ERROR event: its object is a Status. Returns 1 (ends the stream). */
static int on_error_event(struct watch_ctx *w, const cJSON *obj)
{
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(obj, "code");
	const cJSON *reason = cJSON_GetObjectItemCaseSensitive(obj, "reason");
	const cJSON *msg = cJSON_GetObjectItemCaseSensitive(obj, "message");
	const char *r = cJSON_IsString(reason) ? reason->valuestring : "";

	snprintf(w->why, sizeof(w->why), "watch ERROR event: %d %s: %s",
		 cJSON_IsNumber(code) ? code->valueint : 0, r,
		 cJSON_IsString(msg) ? msg->valuestring : "");
	if ((cJSON_IsNumber(code) && code->valueint == 410) || strcmp(r, "Expired") == 0 ||
	    strcmp(r, "Gone") == 0)
		w->expired = true;
	else
		w->failed = true;
	return 1;
}

static int on_event(void *ctx, const char *json, size_t len)
{
	struct watch_ctx *w = ctx;
	struct informer *inf = w->inf;
	const cJSON *type, *obj;
	cJSON *ev = cJSON_ParseWithLength(json, len);
	int rc = 0;

	if (!ev || !cJSON_IsObject(ev)) {
		skip(inf, "watch event", "not a JSON object");
		goto out;
	}
	type = cJSON_GetObjectItemCaseSensitive(ev, "type");
	obj = cJSON_GetObjectItemCaseSensitive(ev, "object");
	if (!cJSON_IsString(type) || !cJSON_IsObject(obj)) {
		skip(inf, "watch event", "no \"type\" string or no \"object\"");
		goto out;
	}
	if (strcmp(type->valuestring, "ADDED") == 0 || strcmp(type->valuestring, "MODIFIED") == 0) {
		w->events++;
		on_upsert(w, type->valuestring, obj);
	} else if (strcmp(type->valuestring, "DELETED") == 0) {
		w->events++;
		on_delete(w, obj);
	} else if (strcmp(type->valuestring, "BOOKMARK") == 0) {
		w->events++;
		pthread_mutex_lock(&inf->mu);
		set_rv_locked(inf, object_rv(obj));
		inf->st.events++;
		in_sync_locked(inf);
		changed_locked(inf);
		pthread_mutex_unlock(&inf->mu);
	} else if (strcmp(type->valuestring, "ERROR") == 0) {
		rc = on_error_event(w, obj);
	} else {
		char why[96];

		snprintf(why, sizeof(why), "unknown type \"%.40s\"", type->valuestring);
		skip(inf, "watch event", why);
	}
out:
	cJSON_Delete(ev);
	return rc;
}

/* The watch answered 2xx: from now on the cache follows the server. */
static void on_watch_open(void *ctx)
{
	struct watch_ctx *w = ctx;
	bool was_unavailable;

	pthread_mutex_lock(&w->inf->mu);
	w->inf->st.live = true;
	was_unavailable = available_locked(w->inf);
	in_sync_locked(w->inf);
	changed_locked(w->inf);
	pthread_mutex_unlock(&w->inf->mu);
	if (was_unavailable)
		LOGF(w->inf, LOG_INFO, "informer %s: the API server answers the watch now",
		     informer_kind_str(w->inf->kind));
}

/*
 * One watch from the current resourceVersion until the server ends it,
 * it fails, or the resourceVersion expires.
 */
static enum step watch_once(struct informer *inf)
{
	struct watch_ctx w = {.inf = inf};
	struct kube_stream_opts so = {.stop = &inf->stop, .on_open = on_watch_open};
	struct kube_response resp;
	struct errbuf err = {""};
	enum kube_stream_end end = KUBE_STREAM_EOF;
	struct buf path = BUF_INIT;
	char rv[RV_MAX], what[ERRBUF_MAX + RV_MAX + 128];
	int span = inf->o.watch_max_s - inf->o.watch_min_s, timeout_s, rc;
	int64_t started;
	enum step step;
	bool expired;

	timeout_s = inf->o.watch_min_s + (int)(backoff_rand(&inf->rng) % (uint64_t)span);
	so.timeout_ms = (long)timeout_s * 1000 + WATCH_GRACE_MS;
	pthread_mutex_lock(&inf->mu);
	snprintf(rv, sizeof(rv), "%s", inf->rv);
	inf->st.watches++;
	changed_locked(inf);
	pthread_mutex_unlock(&inf->mu);
	buf_printf(&path, "%s?watch=1&resourceVersion=", inf->path);
	kube_escape(&path, rv);
	buf_printf(&path, "&allowWatchBookmarks=true&timeoutSeconds=%d", timeout_s);
	if (path.oom) {
		buf_free(&path);
		return backoff_wait(inf, "watch: out of memory") ? STEP_STOP : STEP_FAIL;
	}
	LOGF(inf, LOG_DEBUG, "informer %s: watching from resourceVersion %s for %d s",
	     informer_kind_str(inf->kind), rv, timeout_s);
	started = now_ns();
	rc = kube_stream(inf->o.client, path.data, &so, on_event, &w, &end, &resp, &err);
	buf_free(&path);
	expired = w.expired || (rc == 0 && end == KUBE_STREAM_STATUS && resp.status == 410);
	pthread_mutex_lock(&inf->mu);
	/* a watch that was open kept the cache in sync until it ended, unless
	 * it ended because the cache's resourceVersion is gone */
	if (inf->st.live && !expired)
		in_sync_locked(inf);
	inf->st.live = false;
	changed_locked(inf);
	pthread_mutex_unlock(&inf->mu);
	if (stopping(inf)) {
		kube_response_free(&resp);
		return STEP_STOP;
	}
	if (expired) {
		snprintf(what, sizeof(what), "resourceVersion %s expired (%s)", rv,
			 w.expired ? w.why : resp.message);
		kube_response_free(&resp);
		return relist_wait(inf, what) ? STEP_STOP : STEP_EXPIRED;
	}
	if (rc == 0 && refused(inf, end, resp.status)) {
		bool stop = unavailable_wait(inf, "watch", resp.status, resp.message);

		kube_response_free(&resp);
		return stop ? STEP_STOP : STEP_FAIL;
	}
	step = STEP_OK;
	if (rc < 0) {
		snprintf(what, sizeof(what), "watch from %s: %s", rv, err.msg);
		step = STEP_FAIL;
	} else if (end == KUBE_STREAM_STATUS) {
		snprintf(what, sizeof(what), "watch from %s: HTTP %ld %s: %s", rv, resp.status,
			 resp.reason, resp.message);
		step = STEP_FAIL;
	} else if (end == KUBE_STREAM_CALLBACK) {
		snprintf(what, sizeof(what), "watch from %s: %s", rv, w.why);
		step = STEP_FAIL;
	} else if (end == KUBE_STREAM_EOF && w.events == 0 && inf->o.short_watch_ns >= 0 &&
		   now_ns() - started < inf->o.short_watch_ns) {
		snprintf(what, sizeof(what), "watch from %s: ended at once without an event", rv);
		step = STEP_FAIL;
	}
	kube_response_free(&resp);
	if (step == STEP_FAIL)
		return backoff_wait(inf, what) ? STEP_STOP : STEP_FAIL;
	/* a clean end (timeoutSeconds): watch again at once */
	LOGF(inf, LOG_DEBUG, "informer %s: watch ended after %llu events",
	     informer_kind_str(inf->kind), (unsigned long long)w.events);
	return STEP_OK;
}

static void *run(void *arg)
{
	struct informer *inf = arg;
	bool need_list = true;

	informer_retry_init(&inf->retry, &inf->o.backoff, inf->o.backoff_reset_ns,
			    backoff_rand(&inf->rng), now_ns());
	while (!stopping(inf)) {
		enum step step;

		if (need_list) {
			step = list_all(inf);
			if (step == STEP_STOP)
				break;
			if (step != STEP_OK)
				continue;
			need_list = false;
		}
		step = watch_once(inf);
		if (step == STEP_STOP)
			break;
		if (step == STEP_EXPIRED)
			need_list = true;
	}
	pthread_mutex_lock(&inf->mu);
	inf->st.running = false;
	changed_locked(inf);
	pthread_mutex_unlock(&inf->mu);
	return NULL;
}

/* ---- life cycle ---- */

struct informer *informer_new(enum informer_kind kind, const struct informer_opts *opts,
			      struct errbuf *err)
{
	struct informer *inf;
	pthread_condattr_t attr;
	int rc;

	if ((unsigned)kind >= INFORMER_KINDS) {
		errbuf_set(err, "informer: unknown resource kind %d", (int)kind);
		return NULL;
	}
	if (!opts || !opts->client) {
		errbuf_set(err, "informer %s: no Kubernetes client", informer_kind_str(kind));
		return NULL;
	}
	inf = calloc(1, sizeof(*inf));
	if (!inf) {
		errbuf_set(err, "out of memory");
		return NULL;
	}
	inf->kind = kind;
	inf->o = *opts;
	inf->path = kinds[kind].path;
	inf->kind_name = kinds[kind].object;
	if (inf->o.page_size <= 0)
		inf->o.page_size = DEFAULT_PAGE;
	if (inf->o.list_timeout_ms <= 0)
		inf->o.list_timeout_ms = DEFAULT_LIST_MS;
	if (inf->o.backoff.initial_ns <= 0) {
		inf->o.backoff.initial_ns = DEFAULT_BACKOFF_INITIAL;
		inf->o.backoff.max_ns = DEFAULT_BACKOFF_MAX;
		inf->o.backoff.factor = 2;
		inf->o.backoff.jitter = DEFAULT_BACKOFF_JITTER;
	}
	if (inf->o.backoff.max_ns < inf->o.backoff.initial_ns)
		inf->o.backoff.max_ns = inf->o.backoff.initial_ns;
	if (inf->o.backoff.factor < 1)
		inf->o.backoff.factor = 2;
	if (inf->o.backoff_reset_ns <= 0)
		inf->o.backoff_reset_ns = DEFAULT_RESET;
	if (inf->o.watch_min_s <= 0)
		inf->o.watch_min_s = DEFAULT_WATCH_MIN;
	if (inf->o.watch_max_s <= inf->o.watch_min_s)
		inf->o.watch_max_s = inf->o.watch_min_s == DEFAULT_WATCH_MIN ?
			DEFAULT_WATCH_MAX : inf->o.watch_min_s + 1;
	if (inf->o.short_watch_ns == 0)
		inf->o.short_watch_ns = DEFAULT_SHORT_WATCH;
	inf->rng = inf->o.seed ? inf->o.seed :
		(uint64_t)now_ns() ^ (uint64_t)(uintptr_t)inf ^ (uint64_t)kind;
	atomic_init(&inf->stop, 0);
	if (pthread_mutex_init(&inf->mu, NULL) != 0) {
		free(inf);
		errbuf_set(err, "informer: cannot create a mutex");
		return NULL;
	}
	rc = pthread_condattr_init(&attr);
	if (rc == 0) {
		rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
		if (rc == 0)
			rc = pthread_cond_init(&inf->cv, &attr);
		pthread_condattr_destroy(&attr);
	}
	if (rc != 0) {
		pthread_mutex_destroy(&inf->mu);
		free(inf);
		errbuf_set(err, "informer: cannot create a condition variable");
		return NULL;
	}
	return inf;
}

int informer_start(struct informer *inf, struct errbuf *err)
{
	if (inf->started)
		return errbuf_set(err, "informer %s: already started",
				  informer_kind_str(inf->kind));
	pthread_mutex_lock(&inf->mu);
	inf->st.running = true;
	pthread_mutex_unlock(&inf->mu);
	if (pthread_create(&inf->thread, NULL, run, inf) != 0) {
		pthread_mutex_lock(&inf->mu);
		inf->st.running = false;
		pthread_mutex_unlock(&inf->mu);
		return errbuf_set(err, "informer %s: cannot start a thread",
				  informer_kind_str(inf->kind));
	}
	inf->started = true;
	return 0;
}

static void request_stop(struct informer *inf)
{
	atomic_store(&inf->stop, 1);
	pthread_mutex_lock(&inf->mu);
	pthread_cond_broadcast(&inf->cv);
	pthread_mutex_unlock(&inf->mu);
}

static void join(struct informer *inf)
{
	if (inf->started && !inf->joined) {
		pthread_join(inf->thread, NULL);
		inf->joined = true;
	}
}

void informer_stop(struct informer *inf)
{
	request_stop(inf);
	join(inf);
}

void informer_free(struct informer *inf)
{
	if (!inf)
		return;
	informer_stop(inf);
	cache_clear(&inf->cache);
	snapshot_free(inf->scratch);
	pthread_cond_destroy(&inf->cv);
	pthread_mutex_destroy(&inf->mu);
	free(inf);
}

void informer_stats(struct informer *inf, struct informer_stats *out)
{
	pthread_mutex_lock(&inf->mu);
	*out = inf->st;
	pthread_mutex_unlock(&inf->mu);
}

int64_t informer_staleness(struct informer *inf, int64_t now)
{
	int64_t age;

	pthread_mutex_lock(&inf->mu);
	if (inf->st.live)
		age = 0;
	else if (inf->st.in_sync_ns == 0)
		age = INT64_MAX;
	else
		age = now > inf->st.in_sync_ns ? now - inf->st.in_sync_ns : 0;
	pthread_mutex_unlock(&inf->mu);
	return age;
}

void informer_resource_version(struct informer *inf, char *out, size_t outlen)
{
	pthread_mutex_lock(&inf->mu);
	snprintf(out, outlen, "%s", inf->rv);
	pthread_mutex_unlock(&inf->mu);
}

int informer_wait(struct informer *inf,
		  bool (*pred)(const struct informer_stats *st, void *ctx), void *ctx,
		  int64_t deadline_ns)
{
	bool ok;

	pthread_mutex_lock(&inf->mu);
	while (!(ok = pred(&inf->st, ctx)) && inf->st.running && !stopping(inf) &&
	       now_ns() < deadline_ns)
		cond_wait_until(&inf->cv, &inf->mu, deadline_ns);
	pthread_mutex_unlock(&inf->mu);
	return ok ? 0 : -1;
}

/* ---- the set ---- */

struct informer_set {
	struct informer *inf[INFORMER_KINDS];
};

struct informer_set *informer_set_new(const struct informer_opts *opts, struct errbuf *err)
{
	struct informer_set *set = calloc(1, sizeof(*set));
	int k;

	if (!set) {
		errbuf_set(err, "out of memory");
		return NULL;
	}
	for (k = 0; k < INFORMER_KINDS; k++) {
		struct informer_opts o = *opts;

		if (o.seed)
			o.seed += (uint64_t)k * 0x9e3779b97f4a7c15ULL;
		set->inf[k] = informer_new((enum informer_kind)k, &o, err);
		if (!set->inf[k]) {
			informer_set_free(set);
			return NULL;
		}
	}
	return set;
}

int informer_set_start(struct informer_set *set, struct errbuf *err)
{
	int k;

	for (k = 0; k < INFORMER_KINDS; k++) {
		if (informer_start(set->inf[k], err) < 0) {
			informer_set_stop(set);
			return -1;
		}
	}
	return 0;
}

void informer_set_stop(struct informer_set *set)
{
	int k;

	for (k = 0; k < INFORMER_KINDS; k++)
		if (set->inf[k])
			request_stop(set->inf[k]);
	for (k = 0; k < INFORMER_KINDS; k++)
		if (set->inf[k])
			join(set->inf[k]);
}

void informer_set_cancel(struct informer_set *set)
{
	int k;

	for (k = 0; k < INFORMER_KINDS; k++)
		if (set->inf[k])
			request_stop(set->inf[k]);
}

bool informer_set_stale(struct informer_set *set, int64_t now, int64_t bound, char *why,
			size_t whylen)
{
	int64_t worst = -1;
	int k, which = 0;

	for (k = 0; k < INFORMER_KINDS; k++) {
		struct informer_stats st;
		int64_t age;

		/* an unavailable kind is unknown in snapshots, not stale */
		informer_stats(set->inf[k], &st);
		if (kinds[k].optional && st.unavailable)
			continue;
		age = informer_staleness(set->inf[k], now);
		if (age > worst) {
			worst = age;
			which = k;
		}
	}
	if (whylen)
		why[0] = '\0';
	if (worst <= bound)
		return false;
	{
		struct informer_stats st;

		informer_stats(set->inf[which], &st);
		if (worst == INT64_MAX)
			snprintf(why, whylen, "%s: never listed (%llu failed attempts)",
				 informer_kind_str((enum informer_kind)which),
				 (unsigned long long)st.errors);
		else
			snprintf(why, whylen,
				 "%s: not in sync for %.0f s (no successful list, watch event or "
				 "bookmark since; %llu failed requests so far)",
				 informer_kind_str((enum informer_kind)which),
				 (double)worst / CLOCK_NS_PER_S, (unsigned long long)st.errors);
	}
	return true;
}

void informer_set_free(struct informer_set *set)
{
	int k;

	if (!set)
		return;
	informer_set_stop(set);
	for (k = 0; k < INFORMER_KINDS; k++)
		informer_free(set->inf[k]);
	free(set);
}

struct informer *informer_set_get(struct informer_set *set, enum informer_kind kind)
{
	return (unsigned)kind < INFORMER_KINDS ? set->inf[kind] : NULL;
}

/* Listed, or an optional kind known to be unavailable ('ctx': its kind_def). */
static bool is_settled(const struct informer_stats *st, void *ctx)
{
	const struct kind_def *k = ctx;

	return st->synced || (k->optional && st->unavailable);
}

bool informer_set_synced(struct informer_set *set)
{
	int k;

	for (k = 0; k < INFORMER_KINDS; k++) {
		struct informer_stats st;

		informer_stats(set->inf[k], &st);
		if (!is_settled(&st, (void *)&kinds[k]))
			return false;
	}
	return true;
}

int informer_set_wait_synced(struct informer_set *set, int64_t deadline_ns,
			     struct errbuf *err)
{
	struct buf b = BUF_INIT;
	int k, missing = 0;
	char last[sizeof(set->inf[0]->last_error) + 64] = "";

	for (k = 0; k < INFORMER_KINDS; k++) {
		struct informer_stats st;

		if (informer_wait(set->inf[k], is_settled, (void *)&kinds[k], deadline_ns) == 0)
			continue;
		informer_stats(set->inf[k], &st);
		buf_printf(&b, "%s%s (%llu failed attempts%s)", missing++ ? ", " : "",
			   informer_kind_str((enum informer_kind)k),
			   (unsigned long long)st.errors, st.running ? "" : ", stopped");
		if (!last[0]) {
			pthread_mutex_lock(&set->inf[k]->mu);
			if (set->inf[k]->last_error[0])
				snprintf(last, sizeof(last), "%s: %s",
					 informer_kind_str((enum informer_kind)k),
					 set->inf[k]->last_error);
			pthread_mutex_unlock(&set->inf[k]->mu);
		}
	}
	/* the cause first: a long URL must not push it out of the message */
	if (missing && last[0])
		errbuf_set(err, "%s; not synced: %s", last, b.data ? b.data : "out of memory");
	else if (missing)
		errbuf_set(err, "not synced with the API server: %s", b.data ? b.data : "out of memory");
	buf_free(&b);
	return missing ? -1 : 0;
}

/* ---- snapshots ---- */

/* The references a snapshot holds, dropped by snapshot_free(). */
struct pins {
	struct entry **e;
	size_t n;
};

static void pins_release(void *ctx)
{
	struct pins *p = ctx;
	size_t i;

	for (i = 0; i < p->n; i++)
		entry_unref(p->e[i]);
	free(p->e);
	free(p);
}

static int entry_cmp(const void *a, const void *b)
{
	const struct entry *x = *(const struct entry *const *)a;
	const struct entry *y = *(const struct entry *const *)b;
	int c = strcmp(x->ns, y->ns);

	return c ? c : strcmp(x->name, y->name);
}

/*
 * Takes a reference to every object of 'inf' (under its lock), then adds
 * them to 's' sorted by namespace/name so that snapshots do not depend on
 * hash order. '*known' says whether the cache was listed and the kind
 * available when they were taken.
 */
static int add_cache(struct snapshot *s, struct pins *p, struct informer *inf, bool *known,
		     struct errbuf *err)
{
	size_t i, first = p->n, n;
	struct entry **grown;
	int rc = 0;

	pthread_mutex_lock(&inf->mu);
	*known = inf->st.synced && !inf->st.unavailable;
	n = inf->cache.n;
	grown = realloc(p->e, (p->n + n + 1) * sizeof(*p->e));
	if (!grown) {
		pthread_mutex_unlock(&inf->mu);
		return errbuf_set(err, "out of memory");
	}
	p->e = grown;
	for (i = 0; i < inf->cache.cap; i++) {
		struct entry *e;

		for (e = inf->cache.slots[i]; e; e = e->next) {
			entry_ref(e);
			p->e[p->n++] = e;
		}
	}
	pthread_mutex_unlock(&inf->mu);
	qsort(p->e + first, p->n - first, sizeof(*p->e), entry_cmp);
	if (inf->kind == INFORMER_NODES)
		rc = snapshot_reserve(s, n, 0, 0, err);
	else if (inf->kind == INFORMER_PODS)
		rc = snapshot_reserve(s, 0, n, 0, err);
	else if (inf->kind == INFORMER_PDBS)
		rc = snapshot_reserve(s, 0, 0, n, err);
	for (i = first; rc == 0 && i < p->n; i++) {
		switch (inf->kind) {
		case INFORMER_NODES:
			rc = snapshot_add_node(s, p->e[i]->obj, err);
			break;
		case INFORMER_PODS:
			rc = snapshot_add_pod(s, p->e[i]->obj, err);
			break;
		case INFORMER_PDBS:
			rc = snapshot_add_pdb(s, p->e[i]->obj, err);
			break;
		case INFORMER_NAMESPACES:
			rc = snapshot_add_namespace(s, p->e[i]->obj, err);
			break;
		case INFORMER_PVCS:
			rc = snapshot_add_pvc(s, p->e[i]->obj, err);
			break;
		case INFORMER_PVS:
			rc = snapshot_add_pv(s, p->e[i]->obj, err);
			break;
		case INFORMER_STORAGE_CLASSES:
			rc = snapshot_add_storage_class(s, p->e[i]->obj, err);
			break;
		case INFORMER_DAEMONSETS:
			rc = snapshot_add_daemonset(s, p->e[i]->obj, err);
			break;
		}
	}
	return rc;
}

struct snapshot *informer_snapshot(struct informer_set *set, const struct node_group *groups,
				   size_t n_groups, int64_t now, struct errbuf *err)
{
	struct snapshot *s = snapshot_new();
	struct pins *p = calloc(1, sizeof(*p));
	bool known[INFORMER_KINDS];
	int k;

	if (!s || !p) {
		snapshot_free(s);
		free(p);
		errbuf_set(err, "out of memory");
		return NULL;
	}
	if (snapshot_on_free(s, pins_release, p, err) < 0) {
		snapshot_free(s);
		free(p);
		return NULL;
	}
	for (k = 0; k < INFORMER_KINDS; k++)
		if (add_cache(s, p, set->inf[k], &known[k], err) < 0)
			goto fail;
	/* a kind not listed (yet, or refused) is unknown: one missing is not absent */
	s->namespaces_known = known[INFORMER_NAMESPACES];
	s->volumes_known = known[INFORMER_PVCS] && known[INFORMER_PVS] &&
			   known[INFORMER_STORAGE_CLASSES];
	s->daemonsets_known = known[INFORMER_DAEMONSETS];
	if (snapshot_set_groups(s, groups, n_groups, err) < 0 ||
	    snapshot_finish(s, now, err) < 0)
		goto fail;
	return s;
fail:
	snapshot_free(s);
	return NULL;
}
