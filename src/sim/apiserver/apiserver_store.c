/*
 * sim/apiserver_store: objects as JSON in one sorted table per resource,
 * the global resourceVersion and the ring of watch events. Versions are
 * reference counted so the history can keep what a table has replaced.
 * No HTTP, no simulated world; everything under one mutex.
 */
#include "sim/apiserver/apiserver_store.h"

#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "model.h"

#define F(...) {__VA_ARGS__}
#define FL(name) {name, NULL, NULL}
#define FP(name, path, dflt) {name, path, dflt}

const struct apiserver_resdef apiserver_resources[APISERVER_N_RESOURCES] = {
	[APISERVER_NODES] = {"nodes", "", "v1", "Node", "node", "no", false, false,
			     "delete get list patch watch",
			     F(FP("spec.unschedulable", NULL, "false"))},
	[APISERVER_PODS] = {"pods", "", "v1", "Pod", "pod", "po", true, false,
			    "create delete get list patch update watch",
			    F(FL("spec.nodeName"), FL("spec.restartPolicy"), FL("spec.schedulerName"),
			      FL("spec.serviceAccountName"), FP("spec.hostNetwork", NULL, "false"),
			      FL("status.phase"), FL("status.podIP"),
			      FP("status.podIPs", "status.podIP", NULL),
			      FL("status.nominatedNodeName"))},
	[APISERVER_NAMESPACES] = {"namespaces", "", "v1", "Namespace", "namespace", "ns", false,
				  false, "create get list watch", F(FL("status.phase"))},
	[APISERVER_EVENTS] = {"events", "", "v1", "Event", "event", "ev", true, true,
			      "create delete get list patch update watch",
			      F(FL("involvedObject.kind"), FL("involvedObject.namespace"),
				FL("involvedObject.name"), FL("involvedObject.uid"),
				FL("involvedObject.apiVersion"), FL("involvedObject.resourceVersion"),
				FL("involvedObject.fieldPath"), FL("reason"),
				FL("reportingComponent"), FP("source", "source.component", NULL),
				FL("type"))},
	[APISERVER_CONFIGMAPS] = {"configmaps", "", "v1", "ConfigMap", "configmap", "cm", true,
				  true, "create delete get list patch update watch", F(FL(NULL))},
	[APISERVER_PDBS] = {"poddisruptionbudgets", "policy", "v1", "PodDisruptionBudget",
			    "poddisruptionbudget", "pdb", true, false, "get list watch", F(FL(NULL))},
	[APISERVER_LEASES] = {"leases", "coordination.k8s.io", "v1", "Lease", "lease", NULL, true,
			      true, "create delete get list patch update watch",
			      F(FL("spec.holderIdentity"))},
	[APISERVER_DAEMONSETS] = {"daemonsets", "apps", "v1", "DaemonSet", "daemonset", "ds", true,
				  false, "get list watch", F(FL(NULL))},
	/* the same fields as core Events, index for index, under their events.k8s.io names */
	[APISERVER_EVENTS_V1] = {"events", "events.k8s.io", "v1", "Event", "event", "ev", true, true,
				 "create delete get list patch update watch",
				 F(FP("regarding.kind", "involvedObject.kind", NULL),
				   FP("regarding.namespace", "involvedObject.namespace", NULL),
				   FP("regarding.name", "involvedObject.name", NULL),
				   FP("regarding.uid", "involvedObject.uid", NULL),
				   FP("regarding.apiVersion", "involvedObject.apiVersion", NULL),
				   FP("regarding.resourceVersion", "involvedObject.resourceVersion", NULL),
				   FP("regarding.fieldPath", "involvedObject.fieldPath", NULL),
				   FL("reason"), FP("reportingController", "reportingComponent", NULL),
				   FP("source", "source.component", NULL), FL("type"))},
	/* workloads clients write; sim/world/workloads.c runs their controllers */
	[APISERVER_DEPLOYMENTS] = {"deployments", "apps", "v1", "Deployment", "deployment", "deploy",
				   true, true, "create delete get list patch update watch",
				   F(FL(NULL))},
	[APISERVER_REPLICASETS] = {"replicasets", "apps", "v1", "ReplicaSet", "replicaset", "rs",
				   true, true, "create delete get list patch update watch",
				   F(FL(NULL))},
	[APISERVER_JOBS] = {"jobs", "batch", "v1", "Job", "job", NULL, true, true,
			    "create delete get list patch update watch", F(FL("status.successful"))},
	/* volumes: the world's StatefulSet claims, their volumes and classes (read only) */
	[APISERVER_PVCS] = {"persistentvolumeclaims", "", "v1", "PersistentVolumeClaim",
			    "persistentvolumeclaim", "pvc", true, false, "get list watch", F(FL(NULL))},
	[APISERVER_PVS] = {"persistentvolumes", "", "v1", "PersistentVolume", "persistentvolume", "pv",
			   false, false, "get list watch", F(FL(NULL))},
	[APISERVER_STORAGE_CLASSES] = {"storageclasses", "storage.k8s.io", "v1", "StorageClass",
				       "storageclass", "sc", false, false, "get list watch",
				       F(FL(NULL))},
	[APISERVER_LIMITRANGES] = {"limitranges", "", "v1", "LimitRange", "limitrange", "limits",
				   true, true, "create delete get list patch update watch",
				   F(FL(NULL))},
};

enum apiserver_resource apiserver_storage_of(enum apiserver_resource r)
{
	return r == APISERVER_EVENTS_V1 ? APISERVER_EVENTS : r;
}

const char *apiserver_api_version(enum apiserver_resource r)
{
	switch (r) {
	case APISERVER_PDBS: return "policy/v1";
	case APISERVER_LEASES: return "coordination.k8s.io/v1";
	case APISERVER_DAEMONSETS:
	case APISERVER_DEPLOYMENTS:
	case APISERVER_REPLICASETS: return "apps/v1";
	case APISERVER_JOBS: return "batch/v1";
	case APISERVER_STORAGE_CLASSES: return "storage.k8s.io/v1";
	case APISERVER_EVENTS_V1: return "events.k8s.io/v1";
	default: return "v1";
	}
}

const char *apiserver_event_type_str(enum apiserver_event_type t)
{
	switch (t) {
	case APISERVER_ADDED: return "ADDED";
	case APISERVER_MODIFIED: return "MODIFIED";
	case APISERVER_DELETED: return "DELETED";
	}
	return "?";
}

struct table {
	struct apiserver_ver **items;
	size_t n, cap;
};

struct apiserver_store {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t rv;
	uint64_t next_uid;
	struct table tabs[APISERVER_N_RESOURCES];
	struct apiserver_event *ring;
	size_t cap, head, n;        /* oldest at head */
	uint64_t floor;             /* events up to here are gone */
	size_t max_events;
	uint64_t drop_gen;
	bool closed;
	int64_t now_wall;           /* the time the change being made is stamped with */
	int64_t last_wall;          /* the latest event's (never goes back) */
};

/* ---- versions ---- */

static void ver_free(struct apiserver_ver *v)
{
	size_t i;

	free(v->json);
	free(v->ns);
	free(v->name);
	free(v->uid);
	for (i = 0; i < v->labels.n; i++) {
		free((char *)v->labels.items[i].key);
		free((char *)v->labels.items[i].value);
	}
	free(v->labels.items);
	for (i = 0; i < APISERVER_MAX_FIELDS; i++)
		free(v->fields[i]);
	free(v);
}

void apiserver_ver_hold(struct apiserver_ver *v)
{
	v->refs++;
}

void apiserver_ver_release(struct apiserver_ver *v)
{
	if (v && --v->refs == 0)
		ver_free(v);
}

int apiserver_ver_write(struct buf *b, const struct apiserver_ver *v)
{
	buf_append(b, v->json, v->rv_at);
	buf_printf(b, "\"resourceVersion\":\"%llu\",", (unsigned long long)v->rv);
	return buf_append(b, v->json + v->rv_at, v->len - v->rv_at);
}

static char *dupstr(const char *s)
{
	return strdup(s ? s : "");
}

/* The text of the value at a dotted path ("" when absent). */
static char *field_text(const cJSON *obj, const char *path)
{
	char part[64];
	const char *p = path;
	char num[32];

	while (obj && *p) {
		const char *dot = strchr(p, '.');
		size_t len = dot ? (size_t)(dot - p) : strlen(p);

		if (len >= sizeof(part))
			return dupstr("");
		memcpy(part, p, len);
		part[len] = '\0';
		obj = cJSON_GetObjectItemCaseSensitive(obj, part);
		p += len + (dot ? 1 : 0);
	}
	if (!obj)
		return dupstr("");
	if (cJSON_IsString(obj))
		return dupstr(obj->valuestring);
	if (cJSON_IsBool(obj))
		return dupstr(cJSON_IsTrue(obj) ? "true" : "false");
	if (cJSON_IsNumber(obj)) {
		snprintf(num, sizeof(num), "%.0f", obj->valuedouble);
		return dupstr(num);
	}
	return dupstr("");
}

/*
 * Builds a version of 'obj' (its metadata first, uid and creationTimestamp
 * set already). NULL when out of memory.
 */
static struct apiserver_ver *ver_new(enum apiserver_resource r, cJSON *obj)
{
	const struct apiserver_resdef *d = &apiserver_resources[apiserver_storage_of(r)];
	struct apiserver_ver *v = calloc(1, sizeof(*v));
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	cJSON *labels = cJSON_GetObjectItemCaseSensitive(meta, "labels");
	cJSON *ts = cJSON_GetObjectItemCaseSensitive(meta, "creationTimestamp");
	static const char head[] = "{\"metadata\":{";
	cJSON *l;
	size_t i, n;

	if (!v)
		return NULL;
	v->refs = 1;
	v->json = cJSON_PrintUnformatted(obj);
	if (!v->json)
		goto fail;
	v->len = strlen(v->json);
	/* metadata is first and never empty (it has a name and a uid) */
	assert(strncmp(v->json, head, sizeof(head) - 1) == 0 && v->json[sizeof(head) - 1] != '}');
	v->rv_at = sizeof(head) - 1;
	v->ns = field_text(obj, "metadata.namespace");
	v->name = field_text(obj, "metadata.name");
	v->uid = field_text(obj, "metadata.uid");
	if (!v->ns || !v->name || !v->uid)
		goto fail;
	if (cJSON_IsString(ts))
		model_parse_time(ts->valuestring, &v->created);
	n = (size_t)cJSON_GetArraySize(labels);
	if (cJSON_IsObject(labels) && n) {
		v->labels.items = calloc(n, sizeof(*v->labels.items));
		if (!v->labels.items)
			goto fail;
		cJSON_ArrayForEach(l, labels) {
			if (!cJSON_IsString(l))
				continue;
			v->labels.items[v->labels.n].key = dupstr(l->string);
			v->labels.items[v->labels.n].value = dupstr(l->valuestring);
			if (!v->labels.items[v->labels.n].key || !v->labels.items[v->labels.n].value) {
				v->labels.n++;
				goto fail;
			}
			v->labels.n++;
		}
	}
	for (i = 0; i < APISERVER_MAX_FIELDS && d->fields[i].name; i++) {
		const struct apiserver_field *fd = &d->fields[i];

		if (!(v->fields[i] = field_text(obj, fd->path ? fd->path : fd->name)))
			goto fail;
		if (!v->fields[i][0] && fd->dflt) {
			free(v->fields[i]);
			if (!(v->fields[i] = dupstr(fd->dflt)))
				goto fail;
		}
	}
	return v;
fail:
	ver_free(v);
	return NULL;
}

/* ---- tables ---- */

static int key_cmp(const char *ns1, const char *n1, const char *ns2, const char *n2)
{
	int c = strcmp(ns1, ns2);

	return c ? c : strcmp(n1, n2);
}

/* Index of the first item not before (ns, name); *found when it is that one. */
static size_t tab_search(const struct table *t, const char *ns, const char *name, bool *found)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (key_cmp(t->items[mid]->ns, t->items[mid]->name, ns, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (found)
		*found = lo < t->n && key_cmp(t->items[lo]->ns, t->items[lo]->name, ns, name) == 0;
	return lo;
}

static int tab_insert(struct table *t, size_t at, struct apiserver_ver *v)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct apiserver_ver **ni = realloc(t->items, cap * sizeof(*ni));

		if (!ni)
			return -1;
		t->items = ni;
		t->cap = cap;
	}
	memmove(&t->items[at + 1], &t->items[at], (t->n - at) * sizeof(*t->items));
	t->items[at] = v;
	t->n++;
	return 0;
}

static void tab_remove(struct table *t, size_t at)
{
	memmove(&t->items[at], &t->items[at + 1], (t->n - at - 1) * sizeof(*t->items));
	t->n--;
}

/* ---- the store ---- */

struct apiserver_store *apiserver_store_new(size_t history, size_t max_events)
{
	struct apiserver_store *s = calloc(1, sizeof(*s));
	pthread_condattr_t ca;

	if (!s)
		return NULL;
	s->cap = history ? history : 1;
	s->ring = calloc(s->cap, sizeof(*s->ring));
	if (!s->ring) {
		free(s);
		return NULL;
	}
	s->max_events = max_events;
	s->next_uid = 1;
	pthread_mutex_init(&s->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	return s;
}

static void event_release(struct apiserver_event *e)
{
	apiserver_ver_release(e->ver);
	apiserver_ver_release(e->prev);
	e->ver = e->prev = NULL;
}

void apiserver_store_free(struct apiserver_store *s)
{
	size_t i, k;

	if (!s)
		return;
	for (i = 0; i < s->n; i++)
		event_release(&s->ring[(s->head + i) % s->cap]);
	for (i = 0; i < APISERVER_N_RESOURCES; i++) {
		for (k = 0; k < s->tabs[i].n; k++)
			apiserver_ver_release(s->tabs[i].items[k]);
		free(s->tabs[i].items);
	}
	free(s->ring);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s);
}

void apiserver_store_lock(struct apiserver_store *s)
{
	pthread_mutex_lock(&s->mu);
}

void apiserver_store_unlock(struct apiserver_store *s)
{
	pthread_mutex_unlock(&s->mu);
}

uint64_t apiserver_store_rv(const struct apiserver_store *s)
{
	return s->rv;
}

uint64_t apiserver_store_floor(const struct apiserver_store *s)
{
	return s->floor;
}

/* Records an event (takes the references of 'ver' and 'prev'). */
static void record(struct apiserver_store *s, enum apiserver_resource r,
		   enum apiserver_event_type type, struct apiserver_ver *ver,
		   struct apiserver_ver *prev)
{
	s->last_wall = s->now_wall > s->last_wall ? s->now_wall : s->last_wall;
	struct apiserver_event *e;

	if (s->n == s->cap) {
		e = &s->ring[s->head];
		s->floor = e->rv;
		event_release(e);
		s->head = (s->head + 1) % s->cap;
		s->n--;
	}
	e = &s->ring[(s->head + s->n) % s->cap];
	e->rv = ver->rv;
	e->at_wall = s->last_wall;
	e->res = r;
	e->type = type;
	e->ver = ver;
	e->prev = prev;
	s->n++;
	pthread_cond_broadcast(&s->cv);
}

/* Detaches metadata and puts it first; NULL when there is none. */
static cJSON *meta_first(cJSON *obj)
{
	cJSON *meta = cJSON_DetachItemFromObjectCaseSensitive(obj, "metadata");

	if (!cJSON_IsObject(meta)) {
		cJSON_Delete(meta);
		return NULL;
	}
	if (obj->child) {
		meta->next = obj->child;
		meta->prev = obj->child->prev;
		obj->child->prev = meta;
		obj->child = meta;
	} else {
		obj->child = meta;
		meta->prev = meta;
	}
	return meta;
}

static void set_string(cJSON *obj, const char *key, const char *value)
{
	cJSON *item = cJSON_CreateString(value);

	if (!item)
		return;
	if (cJSON_GetObjectItemCaseSensitive(obj, key))
		cJSON_ReplaceItemInObjectCaseSensitive(obj, key, item);
	else
		cJSON_AddItemToObject(obj, key, item);
}

static void evict_oldest_event(struct apiserver_store *s)
{
	struct table *t = &s->tabs[APISERVER_EVENTS];
	size_t i, oldest = 0;

	for (i = 1; i < t->n; i++)
		if (t->items[i]->rv < t->items[oldest]->rv)
			oldest = i;
	apiserver_store_delete(s, APISERVER_EVENTS, t->items[oldest]->ns, t->items[oldest]->name,
			       NULL);
}

int apiserver_store_put(struct apiserver_store *s, enum apiserver_resource r, cJSON *obj,
			int64_t now_wall, const struct apiserver_ver **out, struct errbuf *err)
{
	struct table *t;

	struct apiserver_ver *old = NULL, *v;
	cJSON *meta, *name, *ns;
	char uid[40], ts[32];
	size_t at;
	bool found;

	r = apiserver_storage_of(r);
	t = &s->tabs[r];
	if (out)
		*out = NULL;
	s->now_wall = now_wall;
	meta = meta_first(obj);
	name = cJSON_GetObjectItemCaseSensitive(meta, "name");
	ns = cJSON_GetObjectItemCaseSensitive(meta, "namespace");
	if (!cJSON_IsString(name) || !name->valuestring[0]) {
		cJSON_Delete(obj);
		return errbuf_set(err, "metadata.name: Required value");
	}
	at = tab_search(t, cJSON_IsString(ns) ? ns->valuestring : "", name->valuestring, &found);
	if (found)
		old = t->items[at];
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "resourceVersion");
	if (old) {
		set_string(meta, "uid", old->uid);
		if (!cJSON_GetObjectItemCaseSensitive(meta, "creationTimestamp")) {
			model_format_time(old->created, ts, sizeof(ts));
			set_string(meta, "creationTimestamp", ts);
		}
	} else {
		if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(meta, "uid"))) {
			snprintf(uid, sizeof(uid), "5a1d0000-0000-4000-8000-%012llx",
				 (unsigned long long)s->next_uid++);
			set_string(meta, "uid", uid);
		}
		if (!cJSON_GetObjectItemCaseSensitive(meta, "creationTimestamp")) {
			model_format_time(now_wall, ts, sizeof(ts));
			set_string(meta, "creationTimestamp", ts);
		}
	}
	v = ver_new(r, obj);
	cJSON_Delete(obj);
	if (!v)
		return errbuf_set(err, "out of memory");
	v->written = now_wall;
	if (old && old->len == v->len && memcmp(old->json, v->json, v->len) == 0) {
		ver_free(v); /* nothing changed */
		if (out)
			*out = old;
		return 0;
	}
	v->rv = ++s->rv;
	if (old) {
		t->items[at] = v;
		apiserver_ver_hold(v);
		record(s, r, APISERVER_MODIFIED, v, old); /* the table's reference goes to the event */
	} else {
		if (tab_insert(t, at, v) < 0) {
			ver_free(v);
			return errbuf_set(err, "out of memory");
		}
		apiserver_ver_hold(v);
		record(s, r, APISERVER_ADDED, v, NULL);
	}
	if (out)
		*out = v;
	if (r == APISERVER_EVENTS && s->max_events && t->n > s->max_events)
		evict_oldest_event(s);
	return 0;
}

int apiserver_store_delete(struct apiserver_store *s, enum apiserver_resource r, const char *ns,
			   const char *name, struct apiserver_ver **out)
{
	struct table *t;
	struct apiserver_ver *old, *v;
	size_t at;
	bool found;

	r = apiserver_storage_of(r);
	t = &s->tabs[r];
	if (out)
		*out = NULL;
	at = tab_search(t, ns ? ns : "", name ? name : "", &found);
	if (!found)
		return -1;
	old = t->items[at];
	tab_remove(t, at);
	/* the last state, under a resourceVersion of its own */
	v = calloc(1, sizeof(*v));
	if (v) {
		size_t i;

		v->refs = 1;
		v->json = malloc(old->len + 1);
		v->ns = dupstr(old->ns);
		v->name = dupstr(old->name);
		v->uid = dupstr(old->uid);
		v->created = old->created;
		v->written = old->written;
		v->labels.items = old->labels.n ? calloc(old->labels.n, sizeof(*v->labels.items)) : NULL;
		for (i = 0; v->labels.items && i < old->labels.n; i++) {
			v->labels.items[i].key = dupstr(old->labels.items[i].key);
			v->labels.items[i].value = dupstr(old->labels.items[i].value);
			v->labels.n++;
		}
		for (i = 0; i < APISERVER_MAX_FIELDS; i++)
			if (old->fields[i])
				v->fields[i] = dupstr(old->fields[i]);
		if (!v->json || !v->ns || !v->name || !v->uid ||
		    (old->labels.n && !v->labels.items)) {
			ver_free(v);
			v = NULL;
		} else {
			memcpy(v->json, old->json, old->len + 1);
			v->len = old->len;
			v->rv_at = old->rv_at;
		}
	}
	if (!v) {
		/* out of memory: the event carries the old version */
		v = old;
		apiserver_ver_hold(v);
	}
	v->rv = ++s->rv;
	if (out) {
		*out = v;
		apiserver_ver_hold(v);
	}
	record(s, r, APISERVER_DELETED, v, old);
	return 0;
}

const struct apiserver_ver *apiserver_store_get(const struct apiserver_store *s,
						enum apiserver_resource r, const char *ns,
						const char *name)
{
	const struct table *t = &s->tabs[apiserver_storage_of(r)];
	bool found;
	size_t at = tab_search(t, ns ? ns : "", name ? name : "", &found);

	return found ? t->items[at] : NULL;
}

struct apiserver_ver *const *apiserver_store_list(const struct apiserver_store *s,
						  enum apiserver_resource r, size_t *n)
{
	*n = s->tabs[apiserver_storage_of(r)].n;
	return s->tabs[apiserver_storage_of(r)].items;
}

size_t apiserver_store_after(const struct apiserver_store *s, enum apiserver_resource r,
			     const char *ns, const char *name)
{
	bool found;
	size_t at = tab_search(&s->tabs[apiserver_storage_of(r)], ns, name, &found);

	return found ? at + 1 : at;
}

size_t apiserver_store_expire_events(struct apiserver_store *s, int64_t now_wall, int64_t ttl_s)
{
	int64_t before_wall = now_wall - ttl_s;
	struct table *t = &s->tabs[APISERVER_EVENTS];
	size_t i = t->n, gone = 0;

	while (i-- > 0) {
		if (t->items[i]->written >= before_wall)
			continue;
		s->now_wall = now_wall;
		/* the item at i goes; those before it keep their places */
		apiserver_store_delete(s, APISERVER_EVENTS, t->items[i]->ns, t->items[i]->name, NULL);
		gone++;
	}
	return gone;
}

const struct apiserver_event *apiserver_store_next_event(const struct apiserver_store *s,
							 uint64_t rv, bool *expired)
{
	size_t lo = 0, hi = s->n;

	*expired = rv < s->floor;
	if (*expired)
		return NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->ring[(s->head + mid) % s->cap].rv <= rv)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n ? &s->ring[(s->head + lo) % s->cap] : NULL;
}

void apiserver_store_compact(struct apiserver_store *s, int64_t now_wall, int64_t window_s)
{
	if (window_s <= 0)
		return;
	while (s->n && s->ring[s->head].at_wall < now_wall - window_s) {
		struct apiserver_event *e = &s->ring[s->head];

		s->floor = e->rv;
		event_release(e);
		s->head = (s->head + 1) % s->cap;
		s->n--;
	}
	if (!s->n && s->rv > s->floor && s->last_wall < now_wall - window_s)
		s->floor = s->rv; /* nothing kept: only a watch from now */
}

void apiserver_store_wait(struct apiserver_store *s, int64_t deadline_ns)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(deadline_ns / 1000000000LL);
	ts.tv_nsec = (long)(deadline_ns % 1000000000LL);
	pthread_cond_timedwait(&s->cv, &s->mu, &ts);
}

void apiserver_store_broadcast(struct apiserver_store *s)
{
	pthread_cond_broadcast(&s->cv);
}

uint64_t apiserver_store_drop_gen(const struct apiserver_store *s)
{
	return s->drop_gen;
}

void apiserver_store_drop_watches(struct apiserver_store *s)
{
	s->drop_gen++;
	pthread_cond_broadcast(&s->cv);
}

void apiserver_store_close(struct apiserver_store *s)
{
	s->closed = true;
	pthread_cond_broadcast(&s->cv);
}

bool apiserver_store_closed(const struct apiserver_store *s)
{
	return s->closed;
}
