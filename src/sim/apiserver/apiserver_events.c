/*
 * sim/apiserver_events: the simulated control plane's Events. It keeps
 * what it last saw of each node and pod (to tell a transition from a
 * repeat) and which Event each report went to (to fold repeats), and
 * writes core v1 Events into the store the way each real recorder does.
 */
#include "sim/apiserver/apiserver_events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "errbuf.h"
#include "model.h"

#define N_BUCKETS 4096
/* past this many remembered reports the memory is dropped (repeats then
 * make new Events: harmless, and the store stays bounded anyway) */
#define MAX_REPORTS 50000

enum {
	F_NODE_READY = 1u << 0,
	F_POD_BOUND = 1u << 1,
	F_POD_TERMINATING = 1u << 2,
	F_POD_UNSCHEDULABLE = 1u << 3,
};

struct entry {
	struct entry *next;
	char *key;
	unsigned flags;       /* objects: what was seen */
	char *msg;            /* pods: the last scheduling failure reported */
	char *ev_ns, *ev_name; /* reports: the Event it went to */
	int64_t last;         /* reports: when it was last reported (unix s) */
};

struct map {
	struct entry *b[N_BUCKETS];
	size_t n;
};

struct apiserver_events {
	struct apiserver_store *store;
	const struct clock *clk;
	int64_t ttl_s;
	int64_t last_stamp;   /* the last Event name's nanoseconds (names never repeat) */
	struct map objects;
	struct map reports;
};

/* ---- a small string map ---- */

static uint32_t hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static void entry_free(struct entry *e)
{
	free(e->key);
	free(e->msg);
	free(e->ev_ns);
	free(e->ev_name);
	free(e);
}

static struct entry *map_get(struct map *m, const char *key)
{
	struct entry *e;

	for (e = m->b[hash(key) % N_BUCKETS]; e; e = e->next)
		if (strcmp(e->key, key) == 0)
			return e;
	return NULL;
}

static struct entry *map_add(struct map *m, const char *key)
{
	struct entry *e = map_get(m, key);
	uint32_t h;

	if (e)
		return e;
	e = calloc(1, sizeof(*e));
	if (!e || !(e->key = strdup(key))) {
		free(e);
		return NULL;
	}
	h = hash(key) % N_BUCKETS;
	e->next = m->b[h];
	m->b[h] = e;
	m->n++;
	return e;
}

static void map_remove(struct map *m, const char *key)
{
	struct entry **p = &m->b[hash(key) % N_BUCKETS];

	for (; *p; p = &(*p)->next)
		if (strcmp((*p)->key, key) == 0) {
			struct entry *e = *p;

			*p = e->next;
			entry_free(e);
			m->n--;
			return;
		}
}

/* Drops the entries 'keep' says no to (NULL: all). */
static void map_prune(struct map *m, bool (*keep)(const struct entry *, void *), void *ud)
{
	size_t i;

	for (i = 0; i < N_BUCKETS; i++) {
		struct entry **p = &m->b[i];

		while (*p) {
			struct entry *e = *p;

			if (keep && keep(e, ud)) {
				p = &e->next;
				continue;
			}
			*p = e->next;
			entry_free(e);
			m->n--;
		}
	}
}

/* ---- life cycle ---- */

struct apiserver_events *apiserver_events_new(struct apiserver_store *store,
					      const struct clock *clk, int64_t ttl_s)
{
	struct apiserver_events *ev = calloc(1, sizeof(*ev));

	if (!ev)
		return NULL;
	ev->store = store;
	ev->clk = clk;
	ev->ttl_s = ttl_s > 0 ? ttl_s : APISERVER_EVENT_TTL_S;
	return ev;
}

void apiserver_events_free(struct apiserver_events *ev)
{
	if (!ev)
		return;
	map_prune(&ev->objects, NULL, NULL);
	map_prune(&ev->reports, NULL, NULL);
	free(ev);
}

/* ---- writing Events ---- */

static void micro_time(int64_t wall, int64_t ns, char *out, size_t len)
{
	struct tm tm;
	time_t t = (time_t)wall;
	char day[32];

	gmtime_r(&t, &tm);
	strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, len, "%s.%06ldZ", day, (long)((ns % CLOCK_NS_PER_S) / 1000));
}

static void add_str(cJSON *o, const char *key, const char *v)
{
	if (v && v[0])
		cJSON_AddStringToObject(o, key, v);
}

/* The report's correlation key: what the real recorders compare. */
static int report_key(struct buf *b, const struct apiserver_event_report *r)
{
	buf_printf(b, "%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s", r->component,
		   r->host ? r->host : "", r->kind, r->ns, r->name, r->uid ? r->uid : "", r->type,
		   r->reason, r->message);
	return b->oom ? -1 : 0;
}

/* Bumps the stored Event of a repeated report; 1 done, 0 it cannot be
 * (gone, or the series is over), -1 out of memory. */
static int bump(struct apiserver_events *ev, const struct apiserver_event_report *r,
		struct entry *rep, int64_t wall, int64_t ns)
{
	const struct apiserver_ver *v = apiserver_store_get(ev->store, APISERVER_EVENTS, rep->ev_ns,
							    rep->ev_name);
	struct errbuf err;
	cJSON *o, *series;
	char ts[48];

	if (!v)
		return 0;
	if (r->series && wall - rep->last > APISERVER_EVENT_SERIES_S)
		return 0;
	o = cJSON_ParseWithLength(v->json, v->len);
	if (!o)
		return -1;
	if (r->series) {
		const cJSON *c;
		double count;

		micro_time(wall, ns, ts, sizeof(ts));
		series = cJSON_GetObjectItemCaseSensitive(o, "series");
		c = cJSON_GetObjectItemCaseSensitive(series, "count");
		count = cJSON_IsNumber(c) ? c->valuedouble + 1 : 2; /* before c goes */
		if (!cJSON_IsObject(series)) {
			cJSON_DeleteItemFromObjectCaseSensitive(o, "series");
			series = cJSON_AddObjectToObject(o, "series");
		}
		if (!series) {
			cJSON_Delete(o);
			return -1;
		}
		cJSON_DeleteItemFromObjectCaseSensitive(series, "count");
		cJSON_DeleteItemFromObjectCaseSensitive(series, "lastObservedTime");
		cJSON_AddNumberToObject(series, "count", count);
		cJSON_AddStringToObject(series, "lastObservedTime", ts);
	} else {
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "count");
		double count = cJSON_IsNumber(c) ? c->valuedouble + 1 : 2;

		model_format_time(wall, ts, sizeof(ts));
		cJSON_DeleteItemFromObjectCaseSensitive(o, "count");
		cJSON_DeleteItemFromObjectCaseSensitive(o, "lastTimestamp");
		cJSON_AddNumberToObject(o, "count", count);
		cJSON_AddStringToObject(o, "lastTimestamp", ts);
	}
	if (apiserver_store_put(ev->store, APISERVER_EVENTS, o, wall, NULL, &err) < 0)
		return -1;
	rep->last = wall;
	return 1;
}

/* A new Event for a report; its name into 'name'. 0, or -1. */
static int create(struct apiserver_events *ev, const struct apiserver_event_report *r,
		  int64_t wall, int64_t ns, char *name, size_t name_len)
{
	const char *evns = r->ns && r->ns[0] ? r->ns : "default";
	cJSON *o = cJSON_CreateObject(), *meta, *io, *src;
	int64_t stamp = wall * CLOCK_NS_PER_S + ns % CLOCK_NS_PER_S;
	struct errbuf err;
	char ts[48], rv[32];

	if (!o)
		return -1;
	if (stamp <= ev->last_stamp)
		stamp = ev->last_stamp + 1;
	ev->last_stamp = stamp;
	snprintf(name, name_len, "%s.%llx", r->name, (unsigned long long)stamp);
	meta = cJSON_AddObjectToObject(o, "metadata");
	io = cJSON_AddObjectToObject(o, "involvedObject");
	if (!meta || !io) {
		cJSON_Delete(o);
		return -1;
	}
	cJSON_AddStringToObject(meta, "name", name);
	cJSON_AddStringToObject(meta, "namespace", evns);
	cJSON_AddStringToObject(o, "apiVersion", "v1");
	cJSON_AddStringToObject(o, "kind", "Event");
	cJSON_AddStringToObject(io, "kind", r->kind);
	add_str(io, "namespace", r->ns);
	cJSON_AddStringToObject(io, "name", r->name);
	add_str(io, "uid", r->uid);
	cJSON_AddStringToObject(io, "apiVersion", "v1");
	if (r->rv) {
		snprintf(rv, sizeof(rv), "%llu", (unsigned long long)r->rv);
		cJSON_AddStringToObject(io, "resourceVersion", rv);
	}
	cJSON_AddStringToObject(o, "reason", r->reason);
	cJSON_AddStringToObject(o, "message", r->message);
	src = cJSON_AddObjectToObject(o, "source");
	if (r->series) {
		/* the events.k8s.io recorder: no source, no timestamps, no count */
		micro_time(wall, ns, ts, sizeof(ts));
		cJSON_AddNullToObject(o, "firstTimestamp");
		cJSON_AddNullToObject(o, "lastTimestamp");
		cJSON_AddStringToObject(o, "type", r->type);
		cJSON_AddStringToObject(o, "eventTime", ts);
		add_str(o, "action", r->action);
	} else {
		if (src) {
			cJSON_AddStringToObject(src, "component", r->component);
			add_str(src, "host", r->host);
		}
		model_format_time(wall, ts, sizeof(ts));
		cJSON_AddStringToObject(o, "firstTimestamp", ts);
		cJSON_AddStringToObject(o, "lastTimestamp", ts);
		cJSON_AddNumberToObject(o, "count", 1);
		cJSON_AddStringToObject(o, "type", r->type);
		cJSON_AddNullToObject(o, "eventTime");
	}
	cJSON_AddStringToObject(o, "reportingComponent", r->component);
	cJSON_AddStringToObject(o, "reportingInstance", r->instance ? r->instance : "");
	return apiserver_store_put(ev->store, APISERVER_EVENTS, o, wall, NULL, &err);
}

int apiserver_events_record(struct apiserver_events *ev, const struct apiserver_event_report *r)
{
	int64_t wall = clock_wall(ev->clk), ns = clock_now(ev->clk);
	struct buf key = BUF_INIT;
	struct entry *rep;
	char name[600];
	int rc;

	if (report_key(&key, r) < 0) {
		buf_free(&key);
		return -1;
	}
	rep = map_get(&ev->reports, key.data);
	if (rep) {
		rc = bump(ev, r, rep, wall, ns);
		if (rc != 0) {
			buf_free(&key);
			return rc < 0 ? -1 : 0;
		}
	}
	if (create(ev, r, wall, ns, name, sizeof(name)) < 0) {
		buf_free(&key);
		return -1;
	}
	if (!rep && ev->reports.n >= MAX_REPORTS)
		map_prune(&ev->reports, NULL, NULL);
	rep = map_add(&ev->reports, key.data);
	buf_free(&key);
	if (!rep)
		return -1;
	free(rep->ev_ns);
	free(rep->ev_name);
	rep->ev_ns = strdup(r->ns && r->ns[0] ? r->ns : "default");
	rep->ev_name = strdup(name);
	rep->last = wall;
	return rep->ev_ns && rep->ev_name ? 0 : -1;
}

/* ---- what the components report ---- */

#define SCHEDULER "default-scheduler"
#define SCHEDULER_INSTANCE "default-scheduler-luascale-sim"
#define NODE_CONTROLLER "node-controller"

/* 'fmt_msg' takes the node's name twice (or not at: "Starting kubelet."). */
static void node_report(struct apiserver_events *ev, const struct node *n, const char *uid,
			bool kubelet, const char *type, const char *reason, const char *fmt_msg)
{
	struct apiserver_event_report r;
	char msg[600];

	memset(&r, 0, sizeof(r));
	snprintf(msg, sizeof(msg), fmt_msg, n->name, n->name);
	r.component = kubelet ? "kubelet" : NODE_CONTROLLER;
	r.instance = kubelet ? n->name : "";
	r.host = kubelet ? n->name : NULL;
	r.type = type;
	r.reason = reason;
	r.message = msg;
	r.kind = "Node";
	r.ns = "";
	r.name = n->name;
	/* a kubelet names its node by name, the node controller by uid */
	r.uid = kubelet ? n->name : uid;
	apiserver_events_record(ev, &r);
}

static void on_node(struct apiserver_events *ev, const struct sim_change *ch)
{
	const struct node *n = ch->node;
	const struct apiserver_ver *v = apiserver_store_get(ev->store, APISERVER_NODES, NULL, n->name);
	const char *uid = v ? v->uid : "";
	char key[300];
	struct entry *e;

	snprintf(key, sizeof(key), "N\x1f%s", n->name);
	e = map_get(&ev->objects, key);
	if (ch->gone) {
		if (e) {
			node_report(ev, n, uid, false, "Normal", "RemovingNode",
				    "Node %s event: Removing Node %s from Controller");
			map_remove(&ev->objects, key);
		}
		return;
	}
	if (!e) {
		if (!(e = map_add(&ev->objects, key)))
			return;
		node_report(ev, n, uid, true, "Normal", "Starting", "Starting kubelet.");
		node_report(ev, n, uid, true, "Normal", "NodeHasSufficientMemory",
			    "Node %s status is now: NodeHasSufficientMemory");
		node_report(ev, n, uid, true, "Normal", "NodeHasNoDiskPressure",
			    "Node %s status is now: NodeHasNoDiskPressure");
		node_report(ev, n, uid, true, "Normal", "NodeHasSufficientPID",
			    "Node %s status is now: NodeHasSufficientPID");
		node_report(ev, n, uid, false, "Normal", "RegisteredNode",
			    "Node %s event: Registered Node %s in Controller");
	}
	if (n->ready && !(e->flags & F_NODE_READY)) {
		e->flags |= F_NODE_READY;
		node_report(ev, n, uid, true, "Normal", "NodeReady",
			    "Node %s status is now: NodeReady");
	} else if (!n->ready && (e->flags & F_NODE_READY)) {
		e->flags &= ~(unsigned)F_NODE_READY;
		node_report(ev, n, uid, false, "Normal", "NodeNotReady",
			    "Node %s status is now: NodeNotReady");
	}
}

static void pod_report(struct apiserver_events *ev, const struct pod *p, const char *uid,
		       uint64_t rv, bool scheduler, const char *action, const char *type,
		       const char *reason, const char *msg)
{
	struct apiserver_event_report r;

	memset(&r, 0, sizeof(r));
	r.component = scheduler ? SCHEDULER : "kubelet";
	r.instance = scheduler ? SCHEDULER_INSTANCE : p->node_name;
	r.host = scheduler ? NULL : p->node_name;
	r.series = scheduler;
	r.action = action;
	r.type = type;
	r.reason = reason;
	r.message = msg;
	r.kind = "Pod";
	r.ns = p->ns;
	r.name = p->name;
	r.uid = uid;
	r.rv = rv;
	apiserver_events_record(ev, &r);
}

static void on_pod(struct apiserver_events *ev, const struct sim_change *ch)
{
	const struct pod *p = ch->pod;
	const struct apiserver_ver *v = apiserver_store_get(ev->store, APISERVER_PODS, p->ns, p->name);
	const char *uid = v ? v->uid : (p->uid ? p->uid : "");
	uint64_t rv = v ? v->rv : 0;
	bool bound = p->node_name && p->node_name[0];
	bool unsched = !bound && (p->flags & POD_UNSCHEDULABLE) && p->sched_message &&
		       p->sched_message[0];
	char key[600], msg[900];
	struct entry *e;

	snprintf(key, sizeof(key), "P\x1f%s\x1f%s", p->ns, p->name);
	if (ch->gone) {
		e = map_get(&ev->objects, key);
		/* gone at once (a grace of 0): its containers were killed all the same */
		if (e && bound && p->phase == POD_RUNNING && !(e->flags & F_POD_TERMINATING))
			pod_report(ev, p, uid, rv, false, NULL, "Normal", "Killing",
				   "Stopping container main");
		map_remove(&ev->objects, key);
		return;
	}
	if (!(e = map_add(&ev->objects, key)))
		return;
	if (unsched && (!(e->flags & F_POD_UNSCHEDULABLE) || !e->msg ||
			strcmp(e->msg, p->sched_message) != 0)) {
		free(e->msg);
		e->msg = strdup(p->sched_message);
		e->flags |= F_POD_UNSCHEDULABLE;
		pod_report(ev, p, uid, rv, true, "Scheduling", "Warning", "FailedScheduling",
			   p->sched_message);
	} else if (!unsched) {
		e->flags &= ~(unsigned)F_POD_UNSCHEDULABLE;
	}
	if (bound && !(e->flags & F_POD_BOUND)) {
		e->flags |= F_POD_BOUND;
		snprintf(msg, sizeof(msg), "Successfully assigned %s/%s to %s", p->ns, p->name,
			 p->node_name);
		pod_report(ev, p, uid, rv, true, "Binding", "Normal", "Scheduled", msg);
	}
	if (bound && ch->deleted_wall >= 0 && !(e->flags & F_POD_TERMINATING) &&
	    p->phase == POD_RUNNING) {
		e->flags |= F_POD_TERMINATING;
		pod_report(ev, p, uid, rv, false, NULL, "Normal", "Killing",
			   "Stopping container main");
	}
}

void apiserver_events_on_change(struct apiserver_events *ev, const struct sim_change *ch)
{
	if (!ev || !ch)
		return;
	if (ch->kind == SIM_OBJ_NODE && ch->node)
		on_node(ev, ch);
	else if (ch->kind == SIM_OBJ_POD && ch->pod)
		on_pod(ev, ch);
}

static bool report_fresh(const struct entry *e, void *ud)
{
	const int64_t *before = ud;

	return e->last >= *before;
}

size_t apiserver_events_expire(struct apiserver_events *ev)
{
	int64_t now = clock_wall(ev->clk), before = now - ev->ttl_s;

	map_prune(&ev->reports, report_fresh, &before);
	return apiserver_store_expire_events(ev->store, now, ev->ttl_s);
}

/* ---- the events.k8s.io shape ---- */

/* core field, events.k8s.io field */
static const char *const renames[][2] = {
	{"metadata", "metadata"},
	{"eventTime", "eventTime"},
	{"series", "series"},
	{"reportingComponent", "reportingController"},
	{"reportingInstance", "reportingInstance"},
	{"action", "action"},
	{"reason", "reason"},
	{"involvedObject", "regarding"},
	{"related", "related"},
	{"message", "note"},
	{"type", "type"},
	{"source", "deprecatedSource"},
	{"firstTimestamp", "deprecatedFirstTimestamp"},
	{"lastTimestamp", "deprecatedLastTimestamp"},
	{"count", "deprecatedCount"},
};

#define N_RENAMES (sizeof(renames) / sizeof(renames[0]))

/* A copy of 'in' with its fields renamed from column 'from' to column 'to'. */
static cJSON *convert(const cJSON *in, int from, int to, const char *api_version)
{
	cJSON *out = cJSON_CreateObject();
	size_t i;

	if (!out)
		return NULL;
	for (i = 0; i < N_RENAMES; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(in, renames[i][from]);
		cJSON *c;

		if (!v)
			continue;
		if (cJSON_IsNull(v) && strcmp(renames[i][to], "eventTime") != 0 && to == 1)
			continue; /* events.k8s.io omits what is not set, eventTime aside */
		if (cJSON_IsObject(v) && !v->child && to == 1)
			continue; /* an empty source */
		c = cJSON_Duplicate(v, true);
		if (!c || !cJSON_AddItemToObject(out, renames[i][to], c)) {
			cJSON_Delete(c);
			cJSON_Delete(out);
			return NULL;
		}
	}
	cJSON_AddStringToObject(out, "apiVersion", api_version);
	cJSON_AddStringToObject(out, "kind", "Event");
	return out;
}

cJSON *apiserver_event_to_v1(const cJSON *core)
{
	return convert(core, 0, 1, "events.k8s.io/v1");
}

cJSON *apiserver_event_from_v1(const cJSON *v1)
{
	cJSON *o = convert(v1, 1, 0, "v1");

	/* the core shape always has a source, and these as null when unset */
	if (o && !cJSON_GetObjectItemCaseSensitive(o, "source"))
		cJSON_AddObjectToObject(o, "source");
	if (o && !cJSON_GetObjectItemCaseSensitive(o, "firstTimestamp"))
		cJSON_AddNullToObject(o, "firstTimestamp");
	if (o && !cJSON_GetObjectItemCaseSensitive(o, "lastTimestamp"))
		cJSON_AddNullToObject(o, "lastTimestamp");
	if (o && !cJSON_GetObjectItemCaseSensitive(o, "involvedObject"))
		cJSON_AddObjectToObject(o, "involvedObject");
	return o;
}

int apiserver_event_v1_write(struct buf *b, const struct apiserver_ver *v)
{
	cJSON *core = cJSON_ParseWithLength(v->json, v->len), *o, *meta;
	char rv[32], *txt;
	int rc;

	o = core ? apiserver_event_to_v1(core) : NULL;
	cJSON_Delete(core);
	meta = cJSON_GetObjectItemCaseSensitive(o, "metadata");
	if (!o || !meta) {
		cJSON_Delete(o);
		b->oom = true;
		return -1;
	}
	snprintf(rv, sizeof(rv), "%llu", (unsigned long long)v->rv);
	cJSON_AddStringToObject(meta, "resourceVersion", rv);
	txt = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!txt) {
		b->oom = true;
		return -1;
	}
	rc = buf_puts(b, txt);
	free(txt);
	return rc;
}

int apiserver_event_v1_check(const cJSON *o, char *msg, size_t len, struct buf *causes)
{
	static const char *const required[] = {"eventTime", "reportingController",
					       "reportingInstance", "action", "reason", NULL};
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(o, "metadata"), "name"));
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "type"));
	struct buf text = BUF_INIT;
	size_t i;
	int rc = 0;

	buf_puts(causes, "[");
	for (i = 0; required[i]; i++) {
		const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, required[i]);

		if (cJSON_IsString(f) && f->valuestring[0])
			continue;
		buf_printf(&text, "%s%s: Required value", text.len ? ", " : "", required[i]);
		buf_printf(causes, "%s{\"reason\":\"FieldValueRequired\",\"message\":\"Required value\","
			   "\"field\":\"%s\"}", causes->len > 1 ? "," : "", required[i]);
	}
	if (!type || (strcmp(type, "Normal") != 0 && strcmp(type, "Warning") != 0)) {
		buf_printf(&text, "%stype: Unsupported value: ", text.len ? ", " : "");
		buf_json_string(&text, type ? type : "");
		buf_puts(&text, ": supported values: \"Normal\", \"Warning\"");
		buf_printf(causes, "%s{\"reason\":\"FieldValueNotSupported\",\"message\":\"Unsupported value: ",
			   causes->len > 1 ? "," : "");
		buf_puts(causes, "supported values: Normal, Warning\",\"field\":\"type\"}");
	}
	buf_puts(causes, "]");
	if (text.len) {
		snprintf(msg, len, "Event.events.k8s.io \"%s\" is invalid: %s", name ? name : "",
			 text.data);
		rc = -1;
	}
	buf_free(&text);
	return rc;
}
