/*
 * sim/apiserver_objects: the Kubernetes resources of the simulated API
 * server — list (selectors, pagination), get, watch (history, bookmarks,
 * 410, initial events), node patches of every type and deletion, pod
 * deletion, eviction and binding through the simulated cluster, dry runs,
 * the kubelets' Leases, validation of what clients write, and
 * create/update/patch/delete of the
 * objects clients own (events, configmaps, leases). HTTP framing is
 * apiserver.c's. *
 * Lock order, for every thread: the cloud's lock (sim_cloud_lock, which
 * the simulated cluster also runs under), then the store's
 * (apiserver_store_lock), then the server's own mutex (s->mu). A thread
 * that holds a later lock never takes an earlier one: kubeops calls, which
 * take the cloud's lock, are made before the store's lock is taken or
 * after it is released. tests/unit/test_sim_locks.c stresses this order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <microhttpd.h>

#include "arena.h"
#include "k8sname.h"
#include "runtime/clock.h"
#include "sim/apiserver/apiserver_events.h"
#include "sim/apiserver/apiserver_internal.h"
#include "sim/apiserver/apiserver_patch.h"
#include "sim/apiserver/apiserver_proto.h"
#include "sim/apiserver/apiserver_render.h"
#include "sim/world/reacting.h"
#include "sim/world/workloads.h"

#define MAX_FIELD_REQS 8

/* ---- selectors ---- */

struct field_req {
	int field;            /* -1 metadata.name, -2 metadata.namespace, else index in resdef fields */
	char value[256];
	bool neg;
};

struct filter {
	char *ns;             /* NULL: any */
	struct arena *arena;
	struct label_selector sel;
	struct field_req f[MAX_FIELD_REQS];
	size_t nf;
};

static void filter_free(struct filter *f)
{
	free(f->ns);
	arena_free(f->arena);
	memset(f, 0, sizeof(*f));
}

static int parse_fields(struct filter *f, enum apiserver_resource r, const char *text,
			struct reply *out)
{
	const struct apiserver_resdef *d = &apiserver_resources[r];
	const char *p = text;

	while (p && *p) {
		const char *end = strchr(p, ','), *op;
		size_t len = end ? (size_t)(end - p) : strlen(p), klen, i;
		struct field_req *q;
		char item[400], key[64];

		if (len >= sizeof(item) || f->nf == MAX_FIELD_REQS)
			goto bad;
		memcpy(item, p, len);
		item[len] = '\0';
		p = end ? end + 1 : NULL;
		if (!item[0])
			continue;
		q = &f->f[f->nf];
		op = strstr(item, "!=");
		if (op) {
			q->neg = true;
			klen = (size_t)(op - item);
			op += 2;
		} else if ((op = strstr(item, "=="))) {
			klen = (size_t)(op - item);
			op += 2;
		} else if ((op = strchr(item, '='))) {
			klen = (size_t)(op - item);
			op += 1;
		} else {
			goto bad;
		}
		if (klen >= sizeof(key) || strlen(op) >= sizeof(q->value))
			goto bad;
		memcpy(key, item, klen);
		key[klen] = '\0';
		snprintf(q->value, sizeof(q->value), "%s", op);
		if (strcmp(key, "metadata.name") == 0) {
			q->field = -1;
		} else if (strcmp(key, "metadata.namespace") == 0) {
			q->field = -2;
		} else {
			q->field = -3;
			for (i = 0; i < APISERVER_MAX_FIELDS && d->fields[i].name; i++)
				if (strcmp(d->fields[i].name, key) == 0)
					q->field = (int)i;
			if (q->field == -3) {
				char msg[200];

				snprintf(msg, sizeof(msg), "field label not supported: %s", key);
				apiserver_reply_status(out, 400, "BadRequest", msg, NULL, NULL);
				return -1;
			}
		}
		f->nf++;
	}
	return 0;
bad:
	apiserver_reply_status(out, 400, "BadRequest", "invalid field selector", NULL, NULL);
	return -1;
}

static int filter_init(struct filter *f, const struct resreq *rq, struct reply *out)
{
	const char *ls = apiserver_query(rq, "labelSelector"), *fs = apiserver_query(rq, "fieldSelector");
	struct errbuf err;

	memset(f, 0, sizeof(f[0]));
	if (rq->ns && !(f->ns = strdup(rq->ns)))
		goto oom;
	if (ls && ls[0]) {
		f->arena = arena_new();
		if (!f->arena)
			goto oom;
		if (label_selector_parse(f->arena, ls, &f->sel, &err) < 0) {
			apiserver_reply_status(out, 400, "BadRequest", err.msg, NULL, NULL);
			filter_free(f);
			return -1;
		}
	}
	if (fs && parse_fields(f, rq->res, fs, out) < 0) {
		filter_free(f);
		return -1;
	}
	return 0;
oom:
	filter_free(f);
	apiserver_reply_status(out, 500, "InternalError", "out of memory", NULL, NULL);
	return -1;
}

static bool filter_match(const struct filter *f, const struct apiserver_ver *v)
{
	size_t i;

	if (f->ns && strcmp(f->ns, v->ns) != 0)
		return false;
	if (f->sel.n && !label_selector_matches(&f->sel, &v->labels))
		return false;
	for (i = 0; i < f->nf; i++) {
		const struct field_req *q = &f->f[i];
		const char *have = q->field == -1 ? v->name : q->field == -2 ? v->ns :
				   v->fields[q->field] ? v->fields[q->field] : "";

		if ((strcmp(have, q->value) == 0) == q->neg)
			return false;
	}
	return true;
}

/* ---- small helpers ---- */

static const char *list_kind(enum apiserver_resource r, char *buf, size_t len)
{
	snprintf(buf, len, "%sList", apiserver_resources[r].kind);
	return buf;
}

/* A Status about one object of 'r': details name, group and kind (the resource). */
static void reply_about(struct reply *out, int code, const char *reason, const char *msg,
			enum apiserver_resource r, const char *name)
{
	buf_free(&out->body);
	out->code = code;
	apiserver_render_status_details(&out->body, code, reason, msg, apiserver_resources[r].group,
					apiserver_resources[r].name, name ? name : "", NULL, 0);
}

static void not_found(struct reply *out, enum apiserver_resource r, const char *name)
{
	char msg[400];

	const char *g = apiserver_resources[r].group;

	if (g[0])
		snprintf(msg, sizeof(msg), "%s.%s \"%s\" not found", apiserver_resources[r].name, g,
			 name ? name : "");
	else
		snprintf(msg, sizeof(msg), "%s \"%s\" not found", apiserver_resources[r].name,
			 name ? name : "");
	buf_free(&out->body);
	out->code = 404;
	apiserver_render_status_details(&out->body, 404, "NotFound", msg, g,
					apiserver_resources[r].name, name ? name : "", NULL, 0);
}

static void oom(struct reply *out)
{
	apiserver_reply_status(out, 500, "InternalError", "out of memory", NULL, NULL);
}

/* Appends 'v' as resource 'r' shows it (events.k8s.io Events in their shape). */
static int write_ver(enum apiserver_resource r, struct buf *b, const struct apiserver_ver *v)
{
	if (r == APISERVER_EVENTS_V1)
		return apiserver_event_v1_write(b, v);
	return apiserver_ver_write(b, v);
}

/* The object 'v' as the answer (a Table when asked). Store lock held. */
static void reply_object(struct apiserver *s, const struct resreq *rq, int code,
			 const struct apiserver_ver *v, struct reply *out)
{
	out->code = code;
	if (rq->table) {
		apiserver_table_head(&out->body, apiserver_storage_of(rq->res), false, v->rv, NULL, -1);
		apiserver_table_row(&out->body, apiserver_storage_of(rq->res), v, apiserver_now_wall());
		apiserver_table_tail(&out->body);
	} else {
		write_ver(rq->res, &out->body, v);
	}
	(void)s;
	if (out->body.oom)
		oom(out);
}

static void kube_error(struct reply *out, enum apiserver_resource r, const char *name,
		       const struct kube_status *st)
{
	switch (st->code) {
	case KUBE_OK:
		break;
	case KUBE_NOT_FOUND:
		not_found(out, r, name);
		return;
	case KUBE_PDB_BLOCKED:
		apiserver_reply_status(out, 429, "TooManyRequests", st->message, NULL, NULL);
		return;
	case KUBE_CONFLICT:
		reply_about(out, 409, "Conflict", st->message, r,
				       name);
		return;
	case KUBE_THROTTLED:
		apiserver_reply_status(out, 429, "TooManyRequests", st->message, NULL, NULL);
		return;
	case KUBE_ERROR:
		break;
	}
	apiserver_reply_status(out, 500, "InternalError", st->message, NULL, NULL);
}

/* "1234\tns\tname" hex-encoded: opaque enough, and safe in a query. */
static void continue_token(char *out, size_t len, uint64_t rv, const char *ns, const char *name)
{
	char raw[600];
	size_t i, n, k = 0;

	n = (size_t)snprintf(raw, sizeof(raw), "%llu\t%s\t%s", (unsigned long long)rv, ns, name);
	if (n >= sizeof(raw))
		n = sizeof(raw) - 1;
	for (i = 0; i < n && k + 3 < len; i++)
		k += (size_t)snprintf(out + k, len - k, "%02x", (unsigned char)raw[i]);
	out[k] = '\0';
}

static int parse_continue(const char *tok, uint64_t *rv, char *ns, size_t nslen, char *name,
			  size_t namelen)
{
	char raw[600], *t1, *t2, *end;
	size_t i, n = strlen(tok);

	if (n % 2 || n / 2 >= sizeof(raw))
		return -1;
	for (i = 0; i < n / 2; i++) {
		unsigned v;

		if (sscanf(tok + 2 * i, "%2x", &v) != 1)
			return -1;
		raw[i] = (char)v;
	}
	raw[n / 2] = '\0';
	t1 = strchr(raw, '\t');
	t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
	if (!t2)
		return -1;
	*t1 = *t2 = '\0';
	*rv = strtoull(raw, &end, 10);
	if (*end)
		return -1;
	snprintf(ns, nslen, "%s", t1 + 1);
	snprintf(name, namelen, "%s", t2 + 1);
	return 0;
}

/*
 * A resourceVersion beyond the latest is waited for (3 s, as the real
 * server's cache does), then answered 504 "Too large resource version"
 * with a retry hint. 0, or -1 answered. Store lock held.
 */
static int wait_for_rv(struct apiserver *s, const char *rvs, struct reply *out)
{
	int64_t deadline = apiserver_now_ns() + 3 * CLOCK_NS_PER_S;
	unsigned long long want;
	char *end, msg[200];

	if (!rvs || !rvs[0])
		return 0;
	want = strtoull(rvs, &end, 10);
	if (*end)
		return 0; /* the callers judge a malformed one */
	while (want > apiserver_store_rv(s->store) && apiserver_now_ns() < deadline &&
	       !apiserver_store_closed(s->store))
		apiserver_store_wait(s->store, deadline);
	if (want <= apiserver_store_rv(s->store))
		return 0;
	snprintf(msg, sizeof(msg), "Timeout: Too large resource version: %llu, current: %llu", want,
		 (unsigned long long)apiserver_store_rv(s->store));
	buf_free(&out->body);
	out->code = 504;
	out->retry_after = "1";
	apiserver_render_status_details(&out->body, 504, "Timeout", msg, NULL, NULL, NULL,
					"[{\"reason\":\"ResourceVersionTooLarge\",\"message\":\"Too large resource version\"}]",
					1);
	return -1;
}

/* ---- list and get ---- */

static void do_list(struct apiserver *s, const struct resreq *rq, struct reply *out)
{
	struct apiserver_ver *const *items;
	const char *lim = apiserver_query(rq, "limit"), *cont = apiserver_query(rq, "continue");
	struct filter f;
	char kind[64], ns[256] = "", name[256] = "", next[1300] = "";
	uint64_t rv;
	long limit = lim ? strtol(lim, NULL, 10) : 0;
	size_t n, i, start = 0, count = 0;
	const struct apiserver_ver *last = NULL;
	struct buf rows = BUF_INIT;
	int64_t now = apiserver_now_wall();

	if (filter_init(&f, rq, out) < 0)
		return;
	apiserver_store_lock(s->store);
	if (wait_for_rv(s, apiserver_query(rq, "resourceVersion"), out) < 0) {
		apiserver_store_unlock(s->store);
		filter_free(&f);
		return;
	}
	rv = apiserver_store_rv(s->store);
	if (cont && cont[0]) {
		uint64_t trv;

		if (parse_continue(cont, &trv, ns, sizeof(ns), name, sizeof(name)) < 0) {
			apiserver_store_unlock(s->store);
			filter_free(&f);
			apiserver_reply_status(out, 400, "BadRequest", "invalid continue token", NULL,
					       NULL);
			return;
		}
		if (trv < apiserver_store_floor(s->store)) {
			apiserver_store_unlock(s->store);
			filter_free(&f);
			apiserver_reply_status(out, 410, "Expired",
					       "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.",
					       NULL, NULL);
			return;
		}
		rv = trv;
		start = apiserver_store_after(s->store, rq->res, ns, name);
	}
	items = apiserver_store_list(s->store, rq->res, &n);
	for (i = start; i < n; i++) {
		if (!filter_match(&f, items[i]))
			continue;
		if (limit > 0 && count == (size_t)limit) {
			continue_token(next, sizeof(next), rv, last->ns, last->name);
			break;
		}
		if (count)
			buf_puts(&rows, ",");
		if (rq->table)
			apiserver_table_row(&rows, apiserver_storage_of(rq->res), items[i], now);
		else
			write_ver(rq->res, &rows, items[i]);
		last = items[i];
		count++;
	}
	apiserver_store_unlock(s->store);
	filter_free(&f);
	out->code = 200;
	if (rq->table) {
		apiserver_table_head(&out->body, apiserver_storage_of(rq->res), false, rv, next, -1);
	} else {
		buf_printf(&out->body, "{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":"
			   "{\"resourceVersion\":\"%llu\"",
			   list_kind(rq->res, kind, sizeof(kind)), apiserver_api_version(rq->res),
			   (unsigned long long)rv);
		if (next[0])
			buf_printf(&out->body, ",\"continue\":\"%s\"", next);
		buf_puts(&out->body, "},\"items\":[");
	}
	if (rows.len)
		buf_append(&out->body, rows.data, rows.len);
	buf_puts(&out->body, "]}");
	if (rows.oom || out->body.oom)
		oom(out);
	buf_free(&rows);
}

static void do_get(struct apiserver *s, const struct resreq *rq, struct reply *out)
{
	const struct apiserver_ver *v;

	apiserver_store_lock(s->store);
	if (wait_for_rv(s, apiserver_query(rq, "resourceVersion"), out) < 0) {
		apiserver_store_unlock(s->store);
		return;
	}
	v = apiserver_store_get(s->store, rq->res, rq->ns, rq->name);
	if (v)
		reply_object(s, rq, 200, v, out);
	else
		not_found(out, rq->res, rq->name);
	apiserver_store_unlock(s->store);
}

/* ---- watch ---- */

enum watch_end { W_OPEN, W_END, W_DROP };

struct watch {
	struct apiserver *s;
	enum apiserver_resource res;
	struct filter f;
	uint64_t rv;                 /* everything up to here was looked at */
	bool bookmarks;
	int64_t bookmark_ns, next_bookmark;
	int64_t deadline;
	uint64_t drop_gen;
	bool table, headers_sent;
	bool proto;                  /* protobuf frames (stream=watch) instead of JSON lines */
	bool expire;                 /* start with an ERROR 410 */
	struct apiserver_ver **initial;
	size_t n_initial, i_initial;
	bool initial_end;            /* a BOOKMARK marks the end of the initial events */
	struct buf out;
	size_t off;
	enum watch_end end;
};

void apiserver_watch_free(void *cls)
{
	struct watch *w = cls;
	size_t i;

	if (!w)
		return;
	if (w->initial) {
		apiserver_store_lock(w->s->store);
		for (i = w->i_initial; i < w->n_initial; i++)
			apiserver_ver_release(w->initial[i]);
		apiserver_store_unlock(w->s->store);
		free(w->initial);
	}
	filter_free(&w->f);
	buf_free(&w->out);
	free(w);
}

/* One event of the stream: 'obj' (JSON text) as a JSON line or a protobuf frame. */
static void watch_emit(struct watch *w, const char *type, const char *obj, size_t len)
{
	struct errbuf err;
	cJSON *o;

	if (!w->proto) {
		buf_printf(&w->out, "{\"type\":\"%s\",\"object\":", type);
		buf_append(&w->out, obj, len);
		buf_puts(&w->out, "}\n");
		return;
	}
	o = cJSON_ParseWithLength(obj, len);
	if (!o || apiserver_proto_watch_frame(&w->out, type, o, &err) < 0) {
		/* the kind was checked when the watch began: only a field outside
		 * the description gets here, and the stream ends with an ERROR */
		struct buf st = BUF_INIT;
		cJSON *so;

		apiserver_render_status(&st, 500, "InternalError",
					o ? err.msg : "out of memory", NULL, NULL);
		so = st.data ? cJSON_ParseWithLength(st.data, st.len) : NULL;
		if (so)
			apiserver_proto_watch_frame(&w->out, "ERROR", so, &err);
		cJSON_Delete(so);
		buf_free(&st);
		w->end = W_END;
	}
	cJSON_Delete(o);
}

static void watch_event(struct watch *w, const char *type, const struct apiserver_ver *v)
{
	if (w->proto) {
		struct buf one = BUF_INIT;

		write_ver(w->res, &one, v);
		if (one.oom)
			w->out.oom = true;
		else
			watch_emit(w, type, one.data, one.len);
		buf_free(&one);
		return;
	}
	buf_printf(&w->out, "{\"type\":\"%s\",\"object\":", type);
	if (w->table) {
		apiserver_table_head(&w->out, apiserver_storage_of(w->res), w->headers_sent, v->rv, NULL, -1);
		apiserver_table_row(&w->out, apiserver_storage_of(w->res), v, apiserver_now_wall());
		apiserver_table_tail(&w->out);
		w->headers_sent = true;
	} else {
		write_ver(w->res, &w->out, v);
	}
	buf_puts(&w->out, "}\n");
}

static void watch_expired(struct watch *w, uint64_t floor)
{
	char msg[160];

	struct buf st = BUF_INIT;

	snprintf(msg, sizeof(msg), "too old resource version: %llu (%llu)",
		 (unsigned long long)w->rv, (unsigned long long)floor);
	apiserver_render_status(&st, 410, "Expired", msg, NULL, NULL);
	watch_emit(w, "ERROR", st.data ? st.data : "", st.len);
	if (st.oom)
		w->out.oom = true;
	buf_free(&st);
	w->end = W_END;
}

/* Fills w->out with what there is to send; waits when there is nothing.
 * Store lock held. */
static void watch_fill(struct watch *w)
{
	struct apiserver_store *st = w->s->store;

	for (;;) {
		const struct apiserver_event *e;
		int64_t now = apiserver_now_ns(), wake;
		bool expired;

		if (apiserver_store_closed(st) || apiserver_store_drop_gen(st) != w->drop_gen) {
			w->end = W_DROP;
			return;
		}
		if (w->expire) {
			w->expire = false;
			watch_expired(w, apiserver_store_rv(st));
			return;
		}
		while (w->i_initial < w->n_initial && w->out.len < 64 * 1024) {
			struct apiserver_ver *v = w->initial[w->i_initial++];

			watch_event(w, "ADDED", v);
			apiserver_ver_release(v);
		}
		if (w->out.len)
			return;
		if (w->initial_end) {
			char bm[400];
			int n;

			w->initial_end = false;
			n = snprintf(bm, sizeof(bm), "{\"kind\":\"%s\","
				     "\"apiVersion\":\"%s\",\"metadata\":{\"resourceVersion\":\"%llu\","
				     "\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}}}",
				     apiserver_resources[w->res].kind, apiserver_api_version(w->res),
				     (unsigned long long)w->rv);
			watch_emit(w, "BOOKMARK", bm, (size_t)n);
			return;
		}
		while (w->out.len < 64 * 1024 &&
		       (e = apiserver_store_next_event(st, w->rv, &expired)) != NULL) {
			w->rv = e->rv;
			if (e->res != apiserver_storage_of(w->res))
				continue;
			{
				bool now_in = filter_match(&w->f, e->ver);
				bool was_in = e->prev && filter_match(&w->f, e->prev);

				if (e->type == APISERVER_ADDED && now_in)
					watch_event(w, "ADDED", e->ver);
				else if (e->type == APISERVER_DELETED && (was_in || now_in))
					watch_event(w, "DELETED", e->ver);
				else if (e->type == APISERVER_MODIFIED && now_in)
					watch_event(w, was_in ? "MODIFIED" : "ADDED", e->ver);
				else if (e->type == APISERVER_MODIFIED && was_in)
					watch_event(w, "DELETED", e->ver);
			}
		}
		if (w->out.len)
			return;
		if (apiserver_store_next_event(st, w->rv, &expired) == NULL && expired) {
			watch_expired(w, apiserver_store_floor(st));
			return;
		}
		if (w->bookmarks && now >= w->next_bookmark) {
			char bm[300];
			int n;

			w->rv = apiserver_store_rv(st);
			n = snprintf(bm, sizeof(bm), "{\"kind\":\"%s\","
				     "\"apiVersion\":\"%s\",\"metadata\":{\"resourceVersion\":\"%llu\"}}",
				     apiserver_resources[w->res].kind, apiserver_api_version(w->res),
				     (unsigned long long)w->rv);
			watch_emit(w, "BOOKMARK", bm, (size_t)n);
			w->next_bookmark = now + w->bookmark_ns;
			return;
		}
		if (now >= w->deadline) {
			w->end = W_END;
			return;
		}
		wake = w->deadline;
		if (w->bookmarks && w->next_bookmark < wake)
			wake = w->next_bookmark;
		if (wake > now + CLOCK_NS_PER_S)
			wake = now + CLOCK_NS_PER_S;
		apiserver_store_wait(st, wake);
	}
}

ssize_t apiserver_watch_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct watch *w = cls;

	(void)pos;
	for (;;) {
		if (w->off < w->out.len) {
			size_t n = w->out.len - w->off;

			if (n > max)
				n = max;
			memcpy(buf, w->out.data + w->off, n);
			w->off += n;
			return (ssize_t)n;
		}
		w->out.len = 0;
		w->off = 0;
		if (w->end == W_END)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (w->end == W_DROP)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		apiserver_store_lock(w->s->store);
		watch_fill(w);
		apiserver_store_unlock(w->s->store);
		if (w->out.oom)
			return MHD_CONTENT_READER_END_WITH_ERROR;
	}
}

static void do_watch(struct apiserver *s, const struct resreq *rq, struct reply *out)
{
	struct watch *w = calloc(1, sizeof(*w));
	const char *rvs = apiserver_query(rq, "resourceVersion"), *bm = apiserver_query(rq, "allowWatchBookmarks");
	const char *to = apiserver_query(rq, "timeoutSeconds");
	int64_t now = apiserver_now_ns();
	long timeout = to ? strtol(to, NULL, 10) : 0;

	if (!w) {
		oom(out);
		return;
	}
	w->s = s;
	w->res = rq->res;
	w->table = rq->table;
	if (!rq->table && rq->conn) {
		/* protobuf frames when asked and the kind is described; JSON
		 * when the Accept allows it; else 406 */
		int want = apiserver_proto_watch_accept(
			MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "Accept"));

		if (want != 0 && apiserver_proto_find(apiserver_api_version(rq->res),
						      apiserver_resources[rq->res].kind))
			w->proto = true;
		else if (want < 0) {
			char msg[200];

			free(w);
			snprintf(msg, sizeof(msg), "only application/json is available for a watch of %s",
				 apiserver_resources[rq->res].name);
			apiserver_reply_status(out, 406, "NotAcceptable", msg, NULL, NULL);
			return;
		}
	}
	w->bookmarks = apiserver_param_bool(bm);
	if (apiserver_param_bool(apiserver_query(rq, "sendInitialEvents"))) {
		const char *m = apiserver_query(rq, "resourceVersionMatch");

		/* the streaming list: its rules as the real server checks them */
		if (!w->bookmarks || !m || strcmp(m, "NotOlderThan") != 0) {
			free(w);
			apiserver_reply_status(out, 422, "Invalid",
					       "ListOptions.meta.k8s.io \"\" is invalid: [sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless allowWatchBookmarks=true, resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan]",
					       "ListOptions", "");
			return;
		}
		w->initial_end = true;
	}
	w->bookmark_ns = s->o.bookmark_ns;
	w->next_bookmark = now + w->bookmark_ns;
	w->deadline = now + (timeout > 0 ? timeout * CLOCK_NS_PER_S : s->o.max_watch_ns);
	if (filter_init(&w->f, rq, out) < 0) {
		free(w);
		return;
	}
	if (rq->name) {
		/* GET .../NAME?watch=true: the fieldSelector metadata.name=NAME */
		if (w->f.nf == MAX_FIELD_REQS || strlen(rq->name) >= sizeof(w->f.f[0].value)) {
			apiserver_watch_free(w);
			apiserver_reply_status(out, 400, "BadRequest", "invalid field selector", NULL,
					       NULL);
			return;
		}
		w->f.f[w->f.nf].field = -1;
		w->f.f[w->f.nf].neg = false;
		snprintf(w->f.f[w->f.nf].value, sizeof(w->f.f[0].value), "%s", rq->name);
		w->f.nf++;
	}
	pthread_mutex_lock(&s->mu);
	w->expire = apiserver_take_expire(s);
	pthread_mutex_unlock(&s->mu);
	apiserver_store_lock(s->store);
	w->drop_gen = apiserver_store_drop_gen(s->store);
	if (wait_for_rv(s, rvs, out) < 0) {
		apiserver_store_unlock(s->store);
		apiserver_watch_free(w);
		return;
	}
	if (!rvs || !rvs[0] || strcmp(rvs, "0") == 0 || w->initial_end) {
		/* from now, with the current objects first */
		struct apiserver_ver *const *items;
		size_t n, i;

		items = apiserver_store_list(s->store, rq->res, &n);
		w->initial = calloc(n ? n : 1, sizeof(*w->initial));
		if (!w->initial) {
			apiserver_store_unlock(s->store);
			apiserver_watch_free(w);
			oom(out);
			return;
		}
		for (i = 0; i < n; i++) {
			if (!filter_match(&w->f, items[i]))
				continue;
			apiserver_ver_hold(items[i]);
			w->initial[w->n_initial++] = items[i];
		}
		w->rv = apiserver_store_rv(s->store);
	} else {
		char *end;

		w->rv = strtoull(rvs, &end, 10);
		if (*end) {
			apiserver_store_unlock(s->store);
			apiserver_watch_free(w);
			apiserver_reply_status(out, 400, "BadRequest", "invalid resourceVersion", NULL,
					       NULL);
			return;
		}
		if (w->rv > apiserver_store_rv(s->store))
			w->rv = apiserver_store_rv(s->store);
	}
	apiserver_store_unlock(s->store);
	out->code = 200;
	out->watch = w;
	if (w->proto)
		out->content_type = APISERVER_PROTO_WATCH_MEDIA;
}

/* ---- nodes ---- */

/* Checks labels or annotations in a patch: an object of strings or nulls. */
static int check_kvs(const cJSON *kv, bool labels, struct reply *out)
{
	const cJSON *e;
	char why[160], msg[400];

	if (!kv || cJSON_IsNull(kv))
		return 0;
	if (!cJSON_IsObject(kv))
		goto bad;
	cJSON_ArrayForEach(e, kv) {
		if (!cJSON_IsString(e) && !cJSON_IsNull(e))
			goto bad;
		if (!k8sname_valid_qualified_name(e->string, why, sizeof(why))) {
			snprintf(msg, sizeof(msg), "metadata.%s: Invalid value: \"%s\": %s",
				 labels ? "labels" : "annotations", e->string, why);
			apiserver_reply_status(out, 422, "Invalid", msg, NULL, NULL);
			return -1;
		}
		if (labels && cJSON_IsString(e) && !k8sname_valid_label_value(e->valuestring)) {
			snprintf(msg, sizeof(msg), "metadata.labels: Invalid value: \"%s\": a valid label value",
				 e->valuestring);
			apiserver_reply_status(out, 422, "Invalid", msg, NULL, NULL);
			return -1;
		}
	}
	return 0;
bad:
	apiserver_reply_status(out, 400, "BadRequest",
			       labels ? "metadata.labels must map strings to strings" :
			       "metadata.annotations must map strings to strings", NULL, NULL);
	return -1;
}

static int check_taints(const cJSON *taints, struct reply *out)
{
	const cJSON *t;
	enum taint_effect eff;

	if (!taints || cJSON_IsNull(taints))
		return 0;
	if (!cJSON_IsArray(taints))
		goto bad;
	cJSON_ArrayForEach(t, taints) {
		const cJSON *key = cJSON_GetObjectItemCaseSensitive(t, "key");
		const cJSON *val = cJSON_GetObjectItemCaseSensitive(t, "value");
		const cJSON *effect = cJSON_GetObjectItemCaseSensitive(t, "effect");

		if (!cJSON_IsString(key) || !key->valuestring[0] ||
		    (val && !cJSON_IsString(val) && !cJSON_IsNull(val)) ||
		    !cJSON_IsString(effect) || taint_effect_parse(effect->valuestring, &eff) < 0)
			goto bad;
	}
	return 0;
bad:
	apiserver_reply_status(out, 422, "Invalid",
			       "spec.taints: each taint needs a key, an optional value and an effect (NoSchedule, PreferNoSchedule, NoExecute)",
			       NULL, NULL);
	return -1;
}

struct taint_item {
	char key[256], value[256];
	enum taint_effect effect;
};

static size_t read_taints(const cJSON *arr, struct taint_item *out, size_t cap)
{
	const cJSON *t;
	size_t n = 0;

	cJSON_ArrayForEach(t, arr) {
		const cJSON *key = cJSON_GetObjectItemCaseSensitive(t, "key");
		const cJSON *val = cJSON_GetObjectItemCaseSensitive(t, "value");
		const cJSON *effect = cJSON_GetObjectItemCaseSensitive(t, "effect");

		if (n == cap || !cJSON_IsString(key) || !cJSON_IsString(effect) ||
		    taint_effect_parse(effect->valuestring, &out[n].effect) < 0)
			continue;
		snprintf(out[n].key, sizeof(out[n].key), "%s", key->valuestring);
		snprintf(out[n].value, sizeof(out[n].value), "%s",
			 cJSON_IsString(val) ? val->valuestring : "");
		n++;
	}
	return n;
}

#define MAX_TAINTS 64

/* Makes the node's taints 'want' (NULL: none), one kubeops call per difference. */
static int set_taints(struct apiserver *s, const char *node, const cJSON *have_arr,
		      const cJSON *want_arr, struct kube_status *st)
{
	struct taint_item *have = calloc(2 * MAX_TAINTS, sizeof(*have)), *want;
	size_t nh, nw, i, k;
	int rc = 0;

	if (!have) {
		snprintf(st->message, sizeof(st->message), "out of memory");
		st->code = KUBE_ERROR;
		return -1;
	}
	want = have + MAX_TAINTS;
	nh = read_taints(have_arr, have, MAX_TAINTS);
	nw = want_arr ? read_taints(want_arr, want, MAX_TAINTS) : 0;
	for (i = 0; i < nh && rc == 0; i++) {
		bool keep = false;

		for (k = 0; k < nw; k++)
			if (strcmp(have[i].key, want[k].key) == 0 && have[i].effect == want[k].effect)
				keep = true;
		if (!keep)
			rc = s->kube.ops->taint(s->kube.ctx, node, have[i].key, NULL, have[i].effect,
						true, st);
	}
	for (k = 0; k < nw && rc == 0; k++) {
		bool same = false;

		for (i = 0; i < nh; i++)
			if (strcmp(have[i].key, want[k].key) == 0 && have[i].effect == want[k].effect &&
			    strcmp(have[i].value, want[k].value) == 0)
				same = true;
		if (!same)
			rc = s->kube.ops->taint(s->kube.ctx, node, want[k].key, want[k].value,
						want[k].effect, false, st);
	}
	free(have);
	return rc;
}

/* The resourceVersion precondition of a patch or update: 0 ok, -1 answered 409. */
static int check_rv(const cJSON *meta, const struct apiserver_ver *cur, enum apiserver_resource r,
		    struct reply *out)
{
	const cJSON *rv = cJSON_GetObjectItemCaseSensitive(meta, "resourceVersion");
	char msg[400], now[32];

	if (!cJSON_IsString(rv) || !rv->valuestring[0])
		return 0;
	snprintf(now, sizeof(now), "%llu", (unsigned long long)cur->rv);
	if (strcmp(now, rv->valuestring) == 0)
		return 0;
	snprintf(msg, sizeof(msg),
		 "Operation cannot be fulfilled on %s \"%s\": the object has been modified; please apply your changes to the latest version and try again",
		 apiserver_resources[r].name, cur->name);
	reply_about(out, 409, "Conflict", msg, r, cur->name);
	return -1;
}

/* Copies 'o' without the parts a node patch may change; NULL when out of memory. */
static cJSON *node_fixed_part(const cJSON *o)
{
	static const char *const meta_keys[] = {"labels", "annotations", "resourceVersion",
						"managedFields", "creationTimestamp", "uid",
						"generation", NULL};
	cJSON *c = cJSON_Duplicate(o, true), *meta, *spec;
	size_t i;

	if (!c)
		return NULL;
	meta = cJSON_GetObjectItemCaseSensitive(c, "metadata");
	spec = cJSON_GetObjectItemCaseSensitive(c, "spec");
	for (i = 0; meta_keys[i]; i++)
		cJSON_DeleteItemFromObjectCaseSensitive(meta, meta_keys[i]);
	cJSON_DeleteItemFromObjectCaseSensitive(spec, "unschedulable");
	cJSON_DeleteItemFromObjectCaseSensitive(spec, "taints");
	if (spec && !spec->child)
		cJSON_DeleteItemFromObjectCaseSensitive(c, "spec");
	cJSON_DeleteItemFromObjectCaseSensitive(c, "status");
	cJSON_DeleteItemFromObjectCaseSensitive(c, "apiVersion");
	cJSON_DeleteItemFromObjectCaseSensitive(c, "kind");
	return c;
}

/* Makes a node's labels or annotations 'want' (was 'have'): one kubeops call per difference. */
static int sync_kvs(struct apiserver *s, const char *node, const cJSON *have, const cJSON *want,
		    bool labels, struct kube_status *st)
{
	const cJSON *e;
	int rc = 0;

	cJSON_ArrayForEach(e, have) {
		if (rc == 0 && !cJSON_GetObjectItemCaseSensitive(want, e->string))
			rc = labels ? s->kube.ops->label(s->kube.ctx, node, e->string, NULL, st) :
			     s->kube.ops->annotate(s->kube.ctx, node, e->string, NULL, st);
	}
	cJSON_ArrayForEach(e, want) {
		const cJSON *h = cJSON_GetObjectItemCaseSensitive(have, e->string);

		if (rc == 0 && cJSON_IsString(e) && !(h && cJSON_Compare(h, e, true)))
			rc = labels ? s->kube.ops->label(s->kube.ctx, node, e->string, e->valuestring, st) :
			     s->kube.ops->annotate(s->kube.ctx, node, e->string, e->valuestring, st);
	}
	return rc;
}

static void patch_node(struct apiserver *s, const struct resreq *rq, struct reply *out)
{
	cJSON *target = NULL, *cur_obj = NULL, *meta, *spec, *cur_meta, *cur_spec, *a = NULL,
	      *b = NULL;
	const cJSON *unsched;
	const struct apiserver_ver *cur;
	struct kube_status st = {KUBE_OK, "", 0};
	int rc = 0, dry;
	uint64_t cur_rv;

	if (apiserver_patch_type(rq->content_type) == APISERVER_PATCH_UNKNOWN) {
		apiserver_unsupported_media(out);
		return;
	}
	if ((dry = apiserver_dry_run(rq, "PatchOptions", out)) < 0)
		return;
	/* the world stays still from the first change to the answer */
	sim_cloud_lock(s->cloud);
	apiserver_store_lock(s->store);
	cur = apiserver_store_get(s->store, APISERVER_NODES, NULL, rq->name);
	if (!cur) {
		apiserver_store_unlock(s->store);
		sim_cloud_unlock(s->cloud);
		not_found(out, APISERVER_NODES, rq->name);
		return;
	}
	cur_rv = cur->rv;
	cur_obj = cJSON_ParseWithLength(cur->json, cur->len);
	target = cur_obj ? cJSON_Duplicate(cur_obj, true) : NULL;
	if (target) {
		/* a JSON patch's test may name the resourceVersion */
		char rvs[32];

		snprintf(rvs, sizeof(rvs), "%llu", (unsigned long long)cur_rv);
		cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(target, "metadata"),
					"resourceVersion", rvs);
	}
	apiserver_store_unlock(s->store);
	if (!cur_obj || !target) {
		cJSON_Delete(target);
		oom(out);
		goto out;
	}
	target = apiserver_patched(rq, target, out);
	if (!target)
		goto out;
	meta = cJSON_GetObjectItemCaseSensitive(target, "metadata");
	spec = cJSON_GetObjectItemCaseSensitive(target, "spec");
	cur_meta = cJSON_GetObjectItemCaseSensitive(cur_obj, "metadata");
	cur_spec = cJSON_GetObjectItemCaseSensitive(cur_obj, "spec");
	unsched = cJSON_GetObjectItemCaseSensitive(spec, "unschedulable");
	apiserver_store_lock(s->store);
	cur = apiserver_store_get(s->store, APISERVER_NODES, NULL, rq->name);
	rc = cur ? check_rv(meta, cur, APISERVER_NODES, out) : 0;
	apiserver_store_unlock(s->store);
	if (rc < 0)
		goto out;
	if (check_kvs(cJSON_GetObjectItemCaseSensitive(meta, "labels"), true, out) < 0 ||
	    check_kvs(cJSON_GetObjectItemCaseSensitive(meta, "annotations"), false, out) < 0 ||
	    check_taints(cJSON_GetObjectItemCaseSensitive(spec, "taints"), out) < 0)
		goto out;
	if (unsched && !cJSON_IsBool(unsched)) {
		apiserver_reply_status(out, 400, "BadRequest", "spec.unschedulable must be a boolean",
				       NULL, NULL);
		goto out;
	}
	a = node_fixed_part(cur_obj);
	b = node_fixed_part(target);
	if (!a || !b) {
		oom(out);
		goto out;
	}
	if (!rq->sub && !cJSON_Compare(a, b, true)) {
		apiserver_reply_status(out, 422, "Invalid",
				       "the simulated API server changes only metadata.labels, metadata.annotations, spec.unschedulable and spec.taints of a node",
				       "Node", rq->name);
		goto out;
	}
	if (dry) {
		apiserver_reply_tree(out, 200, rq->sub ? cur_obj : target, cur_rv);
		goto out;
	}
	s->txn_node = rq->name;
	s->txn_obj = NULL;
	if (rq->sub) {
		/* nodes/status: the simulated kubelet owns it; nothing changes */
	} else {
		if (cJSON_IsTrue(unsched) !=
		    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cur_spec, "unschedulable")))
			rc = s->kube.ops->cordon(s->kube.ctx, rq->name, cJSON_IsTrue(unsched), &st);
		if (rc == 0)
			rc = sync_kvs(s, rq->name, cJSON_GetObjectItemCaseSensitive(cur_meta, "labels"),
				      cJSON_GetObjectItemCaseSensitive(meta, "labels"), true, &st);
		if (rc == 0)
			rc = sync_kvs(s, rq->name,
				      cJSON_GetObjectItemCaseSensitive(cur_meta, "annotations"),
				      cJSON_GetObjectItemCaseSensitive(meta, "annotations"), false, &st);
		if (rc == 0) {
			const cJSON *have = cJSON_GetObjectItemCaseSensitive(cur_spec, "taints");
			const cJSON *want = cJSON_GetObjectItemCaseSensitive(spec, "taints");

			if (!(have ? want && cJSON_Compare(have, want, true) : !want || !cJSON_GetArraySize(want)))
				rc = set_taints(s, rq->name, have, cJSON_IsArray(want) ? want : NULL, &st);
		}
	}
	s->txn_node = NULL;
	if (s->txn_obj) {
		struct errbuf err;

		apiserver_store_lock(s->store);
		if (apiserver_store_put(s->store, APISERVER_NODES, s->txn_obj, apiserver_now_wall(),
					NULL, &err) < 0)
			log_at(s->o.log, LOG_ERROR, apiserver_now_wall(), "sim apiserver: %s", err.msg);
		apiserver_store_unlock(s->store);
		s->txn_obj = NULL;
	}
	if (rc < 0) {
		kube_error(out, APISERVER_NODES, rq->name, &st);
		goto out;
	}
	apiserver_store_lock(s->store);
	cur = apiserver_store_get(s->store, APISERVER_NODES, NULL, rq->name);
	if (cur)
		reply_object(s, rq, 200, cur, out);
	else
		not_found(out, APISERVER_NODES, rq->name);
	apiserver_store_unlock(s->store);
out:
	sim_cloud_unlock(s->cloud);
	cJSON_Delete(a);
	cJSON_Delete(b);
	cJSON_Delete(cur_obj);
	cJSON_Delete(target);
}

/* Deletes a node or a pod through the cluster; answers with its last state. */
static void delete_sim_object(struct apiserver *s, const struct resreq *rq, struct reply *out)
{
	struct apiserver_ver *before;
	const struct apiserver_ver *after;
	struct kube_status st = {KUBE_OK, "", 0};
	int64_t grace = -1;
	const char *gq = apiserver_query(rq, "gracePeriodSeconds");
	int rc;

	int dry = apiserver_dry_run(rq, "DeleteOptions", out);

	if (dry < 0)
		return;
	if (dry) {
		do_get(s, rq, out); /* what would go, as it is now */
		return;
	}
	if (gq)
		grace = strtoll(gq, NULL, 10);
	if (rq->body_len) {
		cJSON *opts = cJSON_ParseWithLength(rq->body, rq->body_len);
		const cJSON *g = cJSON_GetObjectItemCaseSensitive(opts, "gracePeriodSeconds");

		if (cJSON_IsNumber(g))
			grace = (int64_t)g->valuedouble;
		cJSON_Delete(opts);
	}
	sim_cloud_lock(s->cloud);
	apiserver_store_lock(s->store);
	before = (struct apiserver_ver *)apiserver_store_get(s->store, rq->res, rq->ns, rq->name);
	if (before)
		apiserver_ver_hold(before);
	apiserver_store_unlock(s->store);
	if (!before) {
		sim_cloud_unlock(s->cloud);
		not_found(out, rq->res, rq->name);
		return;
	}
	if (rq->res == APISERVER_NODES)
		rc = s->kube.ops->delete_node(s->kube.ctx, rq->name, &st);
	else
		rc = sim_cluster_delete_pod(s->cluster, rq->ns, rq->name, grace, &st);
	apiserver_store_lock(s->store);
	if (rc < 0) {
		kube_error(out, rq->res, rq->name, &st);
	} else {
		after = apiserver_store_get(s->store, rq->res, rq->ns, rq->name);
		/* still there (terminating): as it is now; else as it was last */
		reply_object(s, rq, 200, after && strcmp(after->uid, before->uid) == 0 ? after : before,
			     out);
	}
	apiserver_ver_release(before);
	apiserver_store_unlock(s->store);
	sim_cloud_unlock(s->cloud);
}

/* ---- pods: eviction and binding ---- */

static void evict(struct apiserver *s, const struct resreq *rq, struct reply *out)
{
	cJSON *body = rq->body_len ? cJSON_ParseWithLength(rq->body, rq->body_len) : NULL;
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(body, "deleteOptions"), "gracePeriodSeconds");
	struct kube_status st = {KUBE_OK, "", 0};
	int64_t grace = cJSON_IsNumber(g) ? (int64_t)g->valuedouble : -1;
	int dry;

	if (rq->body_len && !cJSON_IsObject(body)) {
		cJSON_Delete(body);
		apiserver_reply_status(out, 400, "BadRequest", "the body is not an Eviction", NULL,
				       NULL);
		return;
	}
	cJSON_Delete(body);
	if ((dry = apiserver_dry_run(rq, "CreateOptions", out)) < 0)
		return;
	if (dry) {
		bool there;

		apiserver_store_lock(s->store);
		there = apiserver_store_get(s->store, APISERVER_PODS, rq->ns, rq->name) != NULL;
		apiserver_store_unlock(s->store);
		if (there)
			apiserver_reply_status(out, 201, "", NULL, NULL, NULL);
		else
			not_found(out, APISERVER_PODS, rq->name);
		return;
	}
	if (s->kube.ops->evict(s->kube.ctx, rq->ns, rq->name, grace, &st) < 0) {
		if (st.code == KUBE_PDB_BLOCKED) {
			/* what the real server says, with the budget's reason as the cause */
			buf_free(&out->body);
			out->code = 429;
			buf_puts(&out->body, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
				 "\"status\":\"Failure\",\"message\":\"Cannot evict pod as it would violate the pod's disruption budget.\","
				 "\"reason\":\"TooManyRequests\",\"details\":{\"causes\":[{\"reason\":\"DisruptionBudget\",\"message\":");
			buf_json_string(&out->body, st.message);
			buf_puts(&out->body, "}]},\"code\":429}");
			return;
		}
		kube_error(out, APISERVER_PODS, rq->name, &st);
		return;
	}
	apiserver_reply_status(out, 201, "", NULL, NULL, NULL);
}

static void bind_pod(struct apiserver *s, const struct resreq *rq, struct reply *out)
{
	cJSON *body = cJSON_ParseWithLength(rq->body, rq->body_len);
	const cJSON *target = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(body, "target"), "name");
	struct kube_status st = {KUBE_OK, "", 0};

	if (!cJSON_IsString(target) || !target->valuestring[0]) {
		cJSON_Delete(body);
		apiserver_reply_status(out, 400, "BadRequest", "a Binding needs target.name", NULL,
				       NULL);
		return;
	}
	if (sim_cluster_bind_pod(s->cluster, rq->ns, rq->name, target->valuestring, &st) < 0) {
		if (st.code == KUBE_NOT_FOUND && strstr(st.message, "nodes"))
			not_found(out, APISERVER_NODES, target->valuestring);
		else
			kube_error(out, APISERVER_PODS, rq->name, &st);
	} else {
		apiserver_reply_status(out, 201, "", NULL, NULL, NULL);
	}
	cJSON_Delete(body);
}

/* ---- objects clients own ---- */

static cJSON *parse_body_object(const struct resreq *rq, struct reply *out)
{
	cJSON *o = cJSON_ParseWithLength(rq->body, rq->body_len);

	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		apiserver_reply_status(out, 400, "BadRequest", "the body is not a JSON object", NULL,
				       NULL);
		return NULL;
	}
	return o;
}

/* Sets kind, apiVersion and the namespace from the URL; 0 or -1 answered. */
static int normalize(cJSON *o, const struct resreq *rq, struct reply *out)
{
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(o, "metadata");
	const cJSON *ns;

	if (!meta) {
		meta = cJSON_AddObjectToObject(o, "metadata");
		if (!meta) {
			oom(out);
			return -1;
		}
	}
	if (!cJSON_IsObject(meta)) {
		apiserver_reply_status(out, 400, "BadRequest", "metadata must be an object", NULL, NULL);
		return -1;
	}
	ns = cJSON_GetObjectItemCaseSensitive(meta, "namespace");
	if (cJSON_IsString(ns) && ns->valuestring[0] && rq->ns && strcmp(ns->valuestring, rq->ns) != 0) {
		apiserver_reply_status(out, 400, "BadRequest",
				       "the namespace of the provided object does not match the namespace sent on the request",
				       NULL, NULL);
		return -1;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "namespace");
	if (rq->ns)
		cJSON_AddStringToObject(meta, "namespace", rq->ns);
	cJSON_DeleteItemFromObjectCaseSensitive(o, "kind");
	cJSON_DeleteItemFromObjectCaseSensitive(o, "apiVersion");
	cJSON_AddStringToObject(o, "apiVersion", apiserver_api_version(rq->res));
	cJSON_AddStringToObject(o, "kind", apiserver_resources[rq->res].kind);
	return 0;
}

/* An Event about a node, for the simulation's stats, as kubeops would count
 * it. Taken while the store's lock is held (the object is then stored and
 * may change), told after it is released: kubeops takes the cloud's lock,
 * which comes before the store's (see the lock order at the top). */
struct node_event {
	char *node, *type, *reason, *message;
};

static char *dup_or_null(const char *v)
{
	return v ? strdup(v) : NULL;
}

static void node_event_take(struct node_event *e, const cJSON *ev)
{
	const cJSON *io = cJSON_GetObjectItemCaseSensitive(ev, "involvedObject");
	const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(io, "kind"));
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(io, "name"));

	memset(e, 0, sizeof(*e));
	if (!kind || !name || strcmp(kind, "Node") != 0)
		return;
	e->node = strdup(name);
	e->type = dup_or_null(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "type")));
	e->reason = dup_or_null(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "reason")));
	e->message = dup_or_null(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "message")));
}

/* Tells kubeops of the Event (when it was about a node and stored), and frees it. No lock held. */
static void node_event_tell(struct apiserver *s, struct node_event *e, bool stored)
{
	if (stored && e->node)
		s->kube.ops->event(s->kube.ctx, e->node, e->type, e->reason, e->message);
	free(e->node);
	free(e->type);
	free(e->reason);
	free(e->message);
}

/* Does the namespace of a namespaced request exist? 0, or -1 answered 404. Store lock held. */
static int namespace_exists(struct apiserver *s, const struct resreq *rq, struct reply *out)
{
	if (!rq->ns || apiserver_store_get(s->store, APISERVER_NAMESPACES, NULL, rq->ns))
		return 0;
	not_found(out, APISERVER_NAMESPACES, rq->ns);
	return -1;
}

/* What the real server sets on a new Namespace: it is Active, and the
 * kubernetes finalizer empties it before it goes. 0, or -1 out of memory. */
static int namespace_defaults(cJSON *o)
{
	cJSON *spec, *status, *fin;

	cJSON_DeleteItemFromObjectCaseSensitive(o, "spec");
	cJSON_DeleteItemFromObjectCaseSensitive(o, "status");
	spec = cJSON_AddObjectToObject(o, "spec");
	fin = spec ? cJSON_AddArrayToObject(spec, "finalizers") : NULL;
	status = cJSON_AddObjectToObject(o, "status");
	if (!fin || !status || !cJSON_AddStringToObject(status, "phase", "Active"))
		return -1;
	cJSON_AddItemToArray(fin, cJSON_CreateString("kubernetes"));
	return 0;
}

/* An events.k8s.io Event a client writes: what the real server requires. 0, or -1 answered 422. */
static int v1_event_check(const cJSON *o, struct reply *out)
{
	char msg[800];
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(o, "metadata"), "name"));
	struct buf causes = BUF_INIT;

	if (apiserver_event_v1_check(o, msg, sizeof(msg), &causes) == 0) {
		buf_free(&causes);
		return 0;
	}
	buf_free(&out->body);
	out->code = 422;
	apiserver_render_status_details(&out->body, 422, "Invalid", msg, "events.k8s.io", "Event",
					name ? name : "", causes.oom ? NULL : causes.data, 0);
	buf_free(&causes);
	return -1;
}

/* An events.k8s.io Event (taken) in its stored, core shape; NULL when out of memory. */
static cJSON *v1_event_stored(cJSON *o)
{
	cJSON *core = apiserver_event_from_v1(o);

	cJSON_Delete(o);
	return core;
}

/*
 * A 422 Invalid with details.causes, as the real server answers: 'msg' is
 * "Kind \"name\" is invalid: FIELD: DETAIL" (kubectl prints the causes).
 */
static void reply_invalid(struct reply *out, enum apiserver_resource r, const char *name,
			  const char *msg)
{
	const char *p = strstr(msg, " is invalid: "), *colon;
	struct buf causes = BUF_INIT;
	char field[256];
	const char *detail, *reason = "FieldValueInvalid";

	buf_free(&out->body);
	out->code = 422;
	if (p && (colon = strstr(p + 13, ": ")) && (size_t)(colon - (p + 13)) < sizeof(field)) {
		memcpy(field, p + 13, (size_t)(colon - (p + 13)));
		field[colon - (p + 13)] = '\0';
		detail = colon + 2;
		if (strncmp(detail, "Required value", 14) == 0)
			reason = "FieldValueRequired";
		else if (strncmp(detail, "Forbidden", 9) == 0)
			reason = "FieldValueForbidden";
		else if (strncmp(detail, "Unsupported value", 17) == 0)
			reason = "FieldValueNotSupported";
		else if (strncmp(detail, "Duplicate value", 15) == 0)
			reason = "FieldValueDuplicate";
		buf_puts(&causes, "[{\"reason\":");
		buf_json_string(&causes, reason);
		buf_puts(&causes, ",\"message\":");
		buf_json_string(&causes, detail);
		buf_puts(&causes, ",\"field\":");
		buf_json_string(&causes, field);
		buf_puts(&causes, "}]");
	}
	apiserver_render_status_details(&out->body, 422, "Invalid", msg, apiserver_resources[r].group,
					apiserver_resources[r].kind, name ? name : "",
					causes.len ? causes.data : NULL, 0);
	buf_free(&causes);
}

/* Deployments, ReplicaSets and Jobs: checked and defaulted (sim/world/workloads.c). 0, or -1 answered. */
static int admit_workload(const struct resreq *rq, cJSON *o, const cJSON *cur, struct reply *out)
{
	struct errbuf err;
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(o, "metadata"), "name"));
	int code = sim_workloads_admit(rq->res, o, cur, rq->sub && strcmp(rq->sub, "status") == 0,
				       &err);

	if (!code)
		return 0;
	if (code == 422)
		reply_invalid(out, rq->res, name, err.msg);
	else
		apiserver_reply_status(out, code, "InternalError", err.msg,
				       apiserver_resources[rq->res].kind, name ? name : "");
	return -1;
}

/* Stores a new object 'o' (taken) of the request's kind; answers 201 (or the dry run's). */
static void create_from(struct apiserver *s, const struct resreq *rq, cJSON *o, bool dry,
			struct reply *out)
{
	cJSON *meta, *name, *gen;
	const struct apiserver_ver *v;
	struct node_event ev;
	struct errbuf err;
	char nm[300], msg[800];
	bool stored;

	if (apiserver_validate_object(rq, o, out) < 0 || normalize(o, rq, out) < 0) {
		cJSON_Delete(o);
		return;
	}
	if (rq->res == APISERVER_EVENTS_V1 && v1_event_check(o, out) < 0) {
		cJSON_Delete(o);
		return;
	}
	if (rq->res == APISERVER_NAMESPACES && namespace_defaults(o) < 0) {
		cJSON_Delete(o);
		oom(out);
		return;
	}
	if (admit_workload(rq, o, NULL, out) < 0) {
		cJSON_Delete(o);
		return;
	}
	meta = cJSON_GetObjectItemCaseSensitive(o, "metadata");
	name = cJSON_GetObjectItemCaseSensitive(meta, "name");
	gen = cJSON_GetObjectItemCaseSensitive(meta, "generateName");
	apiserver_store_lock(s->store);
	if (namespace_exists(s, rq, out) < 0) {
		apiserver_store_unlock(s->store);
		cJSON_Delete(o);
		return;
	}
	if ((!cJSON_IsString(name) || !name->valuestring[0]) && cJSON_IsString(gen)) {
		pthread_mutex_lock(&s->mu);
		snprintf(nm, sizeof(nm), "%.250s%05llx", gen->valuestring,
			 (unsigned long long)((s->rng = s->rng * 6364136223846793005ULL +
						       1442695040888963407ULL) >> 44));
		pthread_mutex_unlock(&s->mu);
		cJSON_DeleteItemFromObjectCaseSensitive(meta, "name");
		name = cJSON_AddStringToObject(meta, "name", nm);
	}
	if (!cJSON_IsString(name) || !name->valuestring[0]) {
		apiserver_store_unlock(s->store);
		cJSON_Delete(o);
		apiserver_reply_status(out, 422, "Invalid", "metadata.name: Required value: name or generateName is required",
				       apiserver_resources[rq->res].kind, "");
		return;
	}
	if (!k8sname_valid_dns_subdomain(name->valuestring)) {
		snprintf(msg, sizeof(msg), "%s \"%.200s\" is invalid: metadata.name: Invalid value: \"%.200s\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
			 apiserver_resources[rq->res].kind, name->valuestring, name->valuestring);
		snprintf(nm, sizeof(nm), "%s", name->valuestring);
		apiserver_store_unlock(s->store);
		cJSON_Delete(o);
		apiserver_reply_status(out, 422, "Invalid", msg, apiserver_resources[rq->res].kind, nm);
		return;
	}
	if (apiserver_store_get(s->store, rq->res, rq->ns, name->valuestring)) {
		snprintf(msg, sizeof(msg), "%s \"%.250s\" already exists", apiserver_resources[rq->res].name,
			 name->valuestring);
		snprintf(nm, sizeof(nm), "%s", name->valuestring);
		apiserver_store_unlock(s->store);
		cJSON_Delete(o);
		reply_about(out, 409, "AlreadyExists", msg, rq->res,
				       nm);
		return;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "uid");
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "creationTimestamp");
	if (dry) {
		char ts[32];

		apiserver_store_unlock(s->store);
		model_format_time(apiserver_now_wall(), ts, sizeof(ts));
		cJSON_AddStringToObject(meta, "creationTimestamp", ts);
		apiserver_reply_tree(out, 201, o, 0);
		cJSON_Delete(o);
		return;
	}
	if (rq->res == APISERVER_EVENTS_V1 && !(o = v1_event_stored(o))) {
		apiserver_store_unlock(s->store);
		oom(out);
		return;
	}
	memset(&ev, 0, sizeof(ev));
	if (apiserver_storage_of(rq->res) == APISERVER_EVENTS)
		node_event_take(&ev, o);
	stored = apiserver_store_put(s->store, rq->res, o, apiserver_now_wall(), &v, &err) == 0;
	if (!stored)
		apiserver_reply_status(out, 422, "Invalid", err.msg, NULL, NULL);
	else
		reply_object(s, rq, 201, v, out);
	apiserver_store_unlock(s->store);
	node_event_tell(s, &ev, stored);
}

static void create_object(struct apiserver *s, const struct resreq *rq, struct reply *out)
{
	int dry = apiserver_dry_run(rq, "CreateOptions", out);
	cJSON *o;

	if (dry < 0 || !(o = parse_body_object(rq, out)))
		return;
	create_from(s, rq, o, dry, out);
}

/* PUT (update), PATCH, or apply of an object clients own. */
static void change_object(struct apiserver *s, const struct resreq *rq, bool patch,
			  struct reply *out)
{
	cJSON *o = NULL, *meta, *name;
	const struct apiserver_ver *cur, *v;
	struct errbuf err;
	int dry;

	if (patch && apiserver_patch_type(rq->content_type) == APISERVER_PATCH_UNKNOWN) {
		apiserver_unsupported_media(out); /* before the body is read, as the real server */
		return;
	}
	if ((dry = apiserver_dry_run(rq, patch ? "PatchOptions" : "UpdateOptions", out)) < 0)
		return;
	if (!patch && !(o = parse_body_object(rq, out)))
		return;
	apiserver_store_lock(s->store);
	cur = apiserver_store_get(s->store, rq->res, rq->ns, rq->name);
	if (!cur && patch && apiserver_patch_type(rq->content_type) == APISERVER_PATCH_APPLY) {
		/* apply creates what is not there yet */
		apiserver_store_unlock(s->store);
		o = apiserver_patched(rq, NULL, out);
		if (!o)
			return;
		meta = cJSON_GetObjectItemCaseSensitive(o, "metadata");
		name = cJSON_GetObjectItemCaseSensitive(meta, "name");
		if (!cJSON_IsString(name) || strcmp(name->valuestring, rq->name) != 0) {
			cJSON_Delete(o);
			apiserver_reply_status(out, 400, "BadRequest",
					       "the name of the object does not match the name on the URL",
					       NULL, NULL);
			return;
		}
		create_from(s, rq, o, dry, out);
		return;
	}
	if (!cur) {
		apiserver_store_unlock(s->store);
		cJSON_Delete(o);
		not_found(out, rq->res, rq->name);
		return;
	}
	if (patch) {
		cJSON *c = cJSON_ParseWithLength(cur->json, cur->len);
		char rvs[32];

		if (!c) {
			oom(out);
			goto out;
		}
		/* as the client sees it: a JSON patch may test the resourceVersion */
		if (rq->res == APISERVER_EVENTS_V1) {
			/* patched as the client sees it */
			cJSON *v1 = apiserver_event_to_v1(c);

			cJSON_Delete(c);
			if (!(c = v1)) {
				oom(out);
				goto out;
			}
		}
		snprintf(rvs, sizeof(rvs), "%llu", (unsigned long long)cur->rv);
		cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(c, "metadata"),
					"resourceVersion", rvs);
		o = apiserver_patched(rq, c, out);
		if (!o)
			goto out;
	}
	if (apiserver_validate_object(rq, o, out) < 0 ||
	    check_rv(cJSON_GetObjectItemCaseSensitive(o, "metadata"), cur, rq->res, out) < 0)
		goto out;
	if (normalize(o, rq, out) < 0)
		goto out;
	if (rq->res == APISERVER_EVENTS_V1 && v1_event_check(o, out) < 0)
		goto out;
	if (rq->res == APISERVER_DEPLOYMENTS || rq->res == APISERVER_REPLICASETS ||
	    rq->res == APISERVER_JOBS) {
		cJSON *curo = cJSON_ParseWithLength(cur->json, cur->len);
		int rc = admit_workload(rq, o, curo, out);

		cJSON_Delete(curo);
		if (rc < 0)
			goto out;
	}
	meta = cJSON_GetObjectItemCaseSensitive(o, "metadata");
	name = cJSON_GetObjectItemCaseSensitive(meta, "name");
	if (!cJSON_IsString(name) || strcmp(name->valuestring, rq->name) != 0) {
		apiserver_reply_status(out, 400, "BadRequest",
				       "the name of the object does not match the name on the URL", NULL,
				       NULL);
		goto out;
	}
	/* uid and creationTimestamp are the server's */
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "uid");
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "creationTimestamp");
	if (dry) {
		char ts[32];

		cJSON_AddStringToObject(meta, "uid", cur->uid);
		model_format_time(cur->created, ts, sizeof(ts));
		cJSON_AddStringToObject(meta, "creationTimestamp", ts);
		apiserver_reply_tree(out, 200, o, cur->rv);
		goto out;
	}
	if (rq->res == APISERVER_EVENTS_V1 && !(o = v1_event_stored(o))) {
		oom(out);
		goto out;
	}
	if (apiserver_store_put(s->store, rq->res, o, apiserver_now_wall(), &v, &err) < 0)
		apiserver_reply_status(out, 422, "Invalid", err.msg, NULL, NULL);
	else
		reply_object(s, rq, 200, v, out);
	o = NULL;
out:
	apiserver_store_unlock(s->store);
	cJSON_Delete(o);
}

static void delete_object(struct apiserver *s, const struct resreq *rq, struct reply *out)
{
	struct apiserver_ver *last;
	int dry = apiserver_dry_run(rq, "DeleteOptions", out);

	if (dry < 0)
		return;
	apiserver_store_lock(s->store);
	if (dry) {
		const struct apiserver_ver *cur = apiserver_store_get(s->store, rq->res, rq->ns, rq->name);

		if (cur)
			reply_object(s, rq, 200, cur, out);
		else
			not_found(out, rq->res, rq->name);
	} else if (apiserver_store_delete(s->store, rq->res, rq->ns, rq->name, &last) < 0) {
		not_found(out, rq->res, rq->name);
	} else {
		reply_object(s, rq, 200, last, out);
		apiserver_ver_release(last);
	}
	apiserver_store_unlock(s->store);
}

/* ---- pods written by clients, and the workloads' subresources ---- */

static bool is_workload(enum apiserver_resource r)
{
	return r == APISERVER_DEPLOYMENTS || r == APISERVER_REPLICASETS || r == APISERVER_JOBS;
}

/* metadata.generateName: a name with a random suffix. */
static void generate_name(struct apiserver *s, cJSON *meta)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");
	const cJSON *gen = cJSON_GetObjectItemCaseSensitive(meta, "generateName");
	char nm[300];

	if ((cJSON_IsString(name) && name->valuestring[0]) || !cJSON_IsString(gen))
		return;
	pthread_mutex_lock(&s->mu);
	s->rng = s->rng * 6364136223846793005ULL + 1442695040888963407ULL;
	snprintf(nm, sizeof(nm), "%.250s%05llx", gen->valuestring,
		 (unsigned long long)((s->rng >> 44) & 0xfffff));
	pthread_mutex_unlock(&s->mu);
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "name");
	cJSON_AddStringToObject(meta, "name", nm);
}

/* POST pods: a new pod of the simulated cluster (sim/world/workloads.c admits it). */
static void create_pod(struct apiserver *s, const struct resreq *rq, struct reply *out)
{
	int dry = apiserver_dry_run(rq, "CreateOptions", out), code;
	const struct apiserver_ver *v;
	const char *name;
	cJSON *o, *meta;
	struct errbuf err;
	char msg[800];

	if (dry < 0 || !(o = parse_body_object(rq, out)))
		return;
	if (apiserver_validate_object(rq, o, out) < 0 || normalize(o, rq, out) < 0)
		goto out;
	meta = cJSON_GetObjectItemCaseSensitive(o, "metadata");
	generate_name(s, meta);
	name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(meta, "name"));
	if (!name || !name[0]) {
		apiserver_reply_status(out, 422, "Invalid",
				       "Pod \"\" is invalid: metadata.name: Required value: name or generateName is required",
				       "Pod", "");
		goto out;
	}
	if (!k8sname_valid_dns_subdomain(name)) {
		snprintf(msg, sizeof(msg), "Pod \"%.200s\" is invalid: metadata.name: Invalid value: \"%.200s\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
			 name, name);
		apiserver_reply_status(out, 422, "Invalid", msg, "Pod", name);
		goto out;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "uid");
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "creationTimestamp");
	cJSON_DeleteItemFromObjectCaseSensitive(o, "status");
	code = sim_workloads_create_pod(s->wl, o, dry, &err);
	if (code == 404) {
		not_found(out, APISERVER_NAMESPACES, rq->ns);
	} else if (code == 409) {
		reply_about(out, 409, "AlreadyExists", err.msg, APISERVER_PODS, name);
	} else if (code == 422) {
		reply_invalid(out, APISERVER_PODS, name, err.msg);
	} else if (code) {
		apiserver_reply_status(out, code, "InternalError", err.msg, "Pod", name);
	} else if (dry) {
		cJSON *st = cJSON_AddObjectToObject(o, "status");
		char ts[32];

		cJSON_AddStringToObject(st, "phase", "Pending");
		cJSON_AddStringToObject(st, "qosClass", "Burstable");
		model_format_time(apiserver_now_wall(), ts, sizeof(ts));
		cJSON_AddStringToObject(meta, "creationTimestamp", ts);
		apiserver_reply_tree(out, 201, o, 0);
	} else {
		apiserver_store_lock(s->store);
		v = apiserver_store_get(s->store, APISERVER_PODS, rq->ns, name);
		if (v)
			reply_object(s, rq, 201, v, out);
		else
			apiserver_reply_status(out, 500, "InternalError", "the pod was not stored",
					       NULL, NULL);
		apiserver_store_unlock(s->store);
	}
out:
	cJSON_Delete(o);
}

/* A kvlist borrowing the strings of a JSON map of strings (items malloc'ed). */
static int kvs_of(const cJSON *m, struct kvlist *out)
{
	const cJSON *e;
	size_t n = 0;

	out->n = 0;
	out->items = calloc((size_t)cJSON_GetArraySize(m) + 1, sizeof(*out->items));
	if (!out->items)
		return -1;
	cJSON_ArrayForEach(e, m) {
		if (!cJSON_IsString(e))
			continue;
		out->items[n].key = e->string;
		out->items[n].value = e->valuestring;
		n++;
	}
	out->n = n;
	return 0;
}

/* PUT or PATCH of a pod: its labels and annotations may change, its spec may not. */
static void change_pod(struct apiserver *s, const struct resreq *rq, bool patch, struct reply *out)
{
	cJSON *o = NULL, *curo = NULL, *meta;
	const struct apiserver_ver *cur;
	struct kube_status st = {KUBE_OK, "", 0};
	struct kvlist l = {NULL, 0}, a = {NULL, 0};
	uint64_t rv;
	const char *name;
	char msg[900];
	int dry;

	if (patch && apiserver_patch_type(rq->content_type) == APISERVER_PATCH_UNKNOWN) {
		apiserver_unsupported_media(out);
		return;
	}
	if ((dry = apiserver_dry_run(rq, patch ? "PatchOptions" : "UpdateOptions", out)) < 0)
		return;
	if (!patch && !(o = parse_body_object(rq, out)))
		return;
	apiserver_store_lock(s->store);
	cur = apiserver_store_get(s->store, APISERVER_PODS, rq->ns, rq->name);
	if (!cur) {
		apiserver_store_unlock(s->store);
		not_found(out, APISERVER_PODS, rq->name);
		goto out;
	}
	rv = cur->rv;
	curo = cJSON_ParseWithLength(cur->json, cur->len);
	if (!curo) {
		apiserver_store_unlock(s->store);
		oom(out);
		goto out;
	}
	if (patch) {
		cJSON *c = cJSON_Duplicate(curo, 1);
		char rvs[32];

		snprintf(rvs, sizeof(rvs), "%llu", (unsigned long long)rv);
		cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(c, "metadata"),
					"resourceVersion", rvs);
		o = apiserver_patched(rq, c, out);
		if (!o) {
			apiserver_store_unlock(s->store);
			goto out;
		}
	}
	if (check_rv(cJSON_GetObjectItemCaseSensitive(o, "metadata"), cur, APISERVER_PODS, out) < 0) {
		apiserver_store_unlock(s->store);
		goto out;
	}
	apiserver_store_unlock(s->store);
	if (apiserver_validate_object(rq, o, out) < 0 || normalize(o, rq, out) < 0)
		goto out;
	meta = cJSON_GetObjectItemCaseSensitive(o, "metadata");
	name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(meta, "name"));
	if (!name || strcmp(name, rq->name) != 0) {
		apiserver_reply_status(out, 400, "BadRequest",
				       "the name of the object does not match the name on the URL", NULL,
				       NULL);
		goto out;
	}
	if (!cJSON_Compare(cJSON_GetObjectItemCaseSensitive(curo, "spec"),
			   cJSON_GetObjectItemCaseSensitive(o, "spec"), true)) {
		snprintf(msg, sizeof(msg), "Pod \"%.200s\" is invalid: spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
			 rq->name);
		reply_invalid(out, APISERVER_PODS, rq->name, msg);
		goto out;
	}
	if (kvs_of(cJSON_GetObjectItemCaseSensitive(meta, "labels"), &l) < 0 ||
	    kvs_of(cJSON_GetObjectItemCaseSensitive(meta, "annotations"), &a) < 0) {
		oom(out);
		goto out;
	}
	if (dry) {
		cJSON_DeleteItemFromObjectCaseSensitive(o, "status");
		cJSON_AddItemToObject(o, "status",
				      cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(curo, "status"), 1));
		apiserver_reply_tree(out, 200, o, rv);
		goto out;
	}
	if (sim_cluster_set_pod_meta(s->cluster, rq->ns, rq->name, &l, &a, &st) < 0) {
		kube_error(out, APISERVER_PODS, rq->name, &st);
		goto out;
	}
	apiserver_store_lock(s->store);
	cur = apiserver_store_get(s->store, APISERVER_PODS, rq->ns, rq->name);
	if (cur)
		reply_object(s, rq, 200, cur, out);
	else
		not_found(out, APISERVER_PODS, rq->name);
	apiserver_store_unlock(s->store);
out:
	free(l.items);
	free(a.items);
	cJSON_Delete(o);
	cJSON_Delete(curo);
}

/* The autoscaling/v1 Scale of a Deployment or ReplicaSet 'v'. NULL when out of memory. */
static cJSON *scale_of(const struct apiserver_ver *v)
{
	cJSON *o = cJSON_ParseWithLength(v->json, v->len), *sc = cJSON_CreateObject(), *meta;
	cJSON *spec, *status;
	const cJSON *ml, *e;
	char rvs[32], ts[32], sel[1024];
	size_t n = 0;

	if (!o || !sc) {
		cJSON_Delete(o);
		cJSON_Delete(sc);
		return NULL;
	}
	cJSON_AddStringToObject(sc, "kind", "Scale");
	cJSON_AddStringToObject(sc, "apiVersion", "autoscaling/v1");
	meta = cJSON_AddObjectToObject(sc, "metadata");
	cJSON_AddStringToObject(meta, "name", v->name);
	cJSON_AddStringToObject(meta, "namespace", v->ns);
	cJSON_AddStringToObject(meta, "uid", v->uid);
	snprintf(rvs, sizeof(rvs), "%llu", (unsigned long long)v->rv);
	cJSON_AddStringToObject(meta, "resourceVersion", rvs);
	model_format_time(v->created, ts, sizeof(ts));
	cJSON_AddStringToObject(meta, "creationTimestamp", ts);
	spec = cJSON_AddObjectToObject(sc, "spec");
	status = cJSON_AddObjectToObject(sc, "status");
	e = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "spec"), "replicas");
	cJSON_AddNumberToObject(spec, "replicas", cJSON_IsNumber(e) ? e->valuedouble : 1);
	e = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "status"), "replicas");
	cJSON_AddNumberToObject(status, "replicas", cJSON_IsNumber(e) ? e->valuedouble : 0);
	sel[0] = '\0';
	ml = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "spec"), "selector"),
		"matchLabels");
	cJSON_ArrayForEach(e, ml)
		if (cJSON_IsString(e) && n < sizeof(sel))
			n += (size_t)snprintf(sel + n, sizeof(sel) - n, "%s%s=%s", n ? "," : "",
					      e->string, e->valuestring);
	cJSON_AddStringToObject(status, "selector", sel);
	cJSON_Delete(o);
	return sc;
}

/* GET, PUT, PATCH of deployments/scale and replicasets/scale. */
static void do_scale(struct apiserver *s, const struct resreq *rq, struct reply *out)
{
	bool get = strcmp(rq->method, "GET") == 0, patch = strcmp(rq->method, "PATCH") == 0;
	const struct apiserver_ver *cur, *v;
	cJSON *sc = NULL, *o = NULL, *spec;
	const cJSON *r;
	struct errbuf err;
	char msg[400];
	int dry = 0;
	int64_t want;

	if (patch && apiserver_patch_type(rq->content_type) == APISERVER_PATCH_UNKNOWN) {
		apiserver_unsupported_media(out);
		return;
	}
	if (!get && (dry = apiserver_dry_run(rq, patch ? "PatchOptions" : "UpdateOptions", out)) < 0)
		return;
	if (!get && !patch && !(o = parse_body_object(rq, out)))
		return;
	apiserver_store_lock(s->store);
	cur = apiserver_store_get(s->store, rq->res, rq->ns, rq->name);
	if (!cur) {
		not_found(out, rq->res, rq->name);
		goto out;
	}
	sc = scale_of(cur);
	if (!sc) {
		oom(out);
		goto out;
	}
	if (get) {
		apiserver_reply_tree(out, 200, sc, cur->rv);
		goto out;
	}
	if (patch) {
		o = apiserver_patched(rq, sc, out);
		sc = NULL;
		if (!o)
			goto out;
	}
	if (check_rv(cJSON_GetObjectItemCaseSensitive(o, "metadata"), cur, rq->res, out) < 0)
		goto out;
	r = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "spec"), "replicas");
	if (r && (!cJSON_IsNumber(r) || r->valuedouble < 0 ||
		  r->valuedouble != (double)(int64_t)r->valuedouble)) {
		snprintf(msg, sizeof(msg), "Scale.autoscaling \"%.200s\" is invalid: spec.replicas: Invalid value: must be greater than or equal to 0",
			 rq->name);
		reply_invalid(out, rq->res, rq->name, msg);
		goto out;
	}
	want = r ? (int64_t)r->valuedouble : 0;
	cJSON_Delete(o);
	o = cJSON_ParseWithLength(cur->json, cur->len);
	spec = cJSON_GetObjectItemCaseSensitive(o, "spec");
	if (!o || !cJSON_IsObject(spec)) {
		oom(out);
		goto out;
	}
	if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(spec, "replicas")) ||
	    (int64_t)cJSON_GetObjectItemCaseSensitive(spec, "replicas")->valuedouble != want) {
		cJSON *meta = cJSON_GetObjectItemCaseSensitive(o, "metadata");
		const cJSON *g = cJSON_GetObjectItemCaseSensitive(meta, "generation");
		double gen = cJSON_IsNumber(g) ? g->valuedouble + 1 : 2;

		cJSON_DeleteItemFromObjectCaseSensitive(spec, "replicas");
		cJSON_AddNumberToObject(spec, "replicas", (double)want);
		cJSON_DeleteItemFromObjectCaseSensitive(meta, "generation");
		cJSON_AddNumberToObject(meta, "generation", gen);
	}
	if (dry) {
		cJSON_Delete(sc);
		sc = scale_of(cur);
		if (sc) {
			cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(sc, "spec"),
								"replicas");
			cJSON_AddNumberToObject(cJSON_GetObjectItemCaseSensitive(sc, "spec"), "replicas",
						(double)want);
			apiserver_reply_tree(out, 200, sc, cur->rv);
		}
		goto out;
	}
	if (apiserver_store_put(s->store, rq->res, o, apiserver_now_wall(), &v, &err) < 0) {
		o = NULL;
		apiserver_reply_status(out, 422, "Invalid", err.msg, NULL, NULL);
		goto out;
	}
	o = NULL;
	cJSON_Delete(sc);
	sc = scale_of(v);
	if (sc)
		apiserver_reply_tree(out, 200, sc, v->rv);
	else
		oom(out);
out:
	apiserver_store_unlock(s->store);
	cJSON_Delete(sc);
	cJSON_Delete(o);
}

/* Removes a workload (or, 'dry', checks it is there) and answers as the
 * real server does for kinds that do not return the deleted object: a
 * Status Success naming it. */
static void delete_to_status(struct apiserver *s, const struct resreq *rq, bool dry,
			     struct reply *out)
{
	const struct apiserver_resdef *d = &apiserver_resources[rq->res];
	int rc;

	apiserver_store_lock(s->store);
	if (dry)
		rc = apiserver_store_get(s->store, rq->res, rq->ns, rq->name) ? 0 : -1;
	else
		rc = apiserver_store_delete(s->store, rq->res, rq->ns, rq->name, NULL);
	apiserver_store_unlock(s->store);
	if (rc < 0) {
		not_found(out, rq->res, rq->name);
		return;
	}
	buf_free(&out->body);
	out->code = 200;
	apiserver_render_status_details(&out->body, 200, NULL, NULL, d->group, d->name, rq->name,
					NULL, 0);
}

/* DELETE of a Deployment, ReplicaSet or Job, with its propagationPolicy. */
static void delete_workload(struct apiserver *s, const struct resreq *rq, struct reply *out)
{
	const char *pol = apiserver_query(rq, "propagationPolicy");
	cJSON *opts = rq->body_len ? cJSON_ParseWithLength(rq->body, rq->body_len) : NULL;
	const cJSON *bp = cJSON_GetObjectItemCaseSensitive(opts, "propagationPolicy");
	const cJSON *orph = cJSON_GetObjectItemCaseSensitive(opts, "orphanDependents");
	const struct apiserver_ver *cur, *v;
	char policy[32], uid[96], msg[200];
	int dry = apiserver_dry_run(rq, "DeleteOptions", out);

	snprintf(policy, sizeof(policy), "%s", cJSON_IsString(bp) ? bp->valuestring :
		 pol ? pol : cJSON_IsTrue(orph) ? "Orphan" : "Background");
	cJSON_Delete(opts);
	if (dry < 0)
		return;
	if (strcmp(policy, "Background") != 0 && strcmp(policy, "Foreground") != 0 &&
	    strcmp(policy, "Orphan") != 0) {
		snprintf(msg, sizeof(msg), "propagationPolicy: Unsupported value: \"%.40s\": supported values: \"Background\", \"Foreground\", \"Orphan\"",
			 policy);
		apiserver_reply_status(out, 422, "Invalid", msg, NULL, NULL);
		return;
	}
	if (dry || strcmp(policy, "Background") == 0) {
		delete_to_status(s, rq, dry, out);
		return;
	}
	apiserver_store_lock(s->store);
	cur = apiserver_store_get(s->store, rq->res, rq->ns, rq->name);
	snprintf(uid, sizeof(uid), "%s", cur ? cur->uid : "");
	if (!cur) {
		apiserver_store_unlock(s->store);
		not_found(out, rq->res, rq->name);
		return;
	}
	if (strcmp(policy, "Foreground") == 0) {
		cJSON *o = cJSON_ParseWithLength(cur->json, cur->len);
		cJSON *meta = cJSON_GetObjectItemCaseSensitive(o, "metadata"), *fin;
		struct errbuf err;
		char ts[32];

		if (!cJSON_GetObjectItemCaseSensitive(meta, "deletionTimestamp")) {
			model_format_time(apiserver_now_wall(), ts, sizeof(ts));
			cJSON_AddStringToObject(meta, "deletionTimestamp", ts);
			cJSON_AddNumberToObject(meta, "deletionGracePeriodSeconds", 0);
			fin = cJSON_GetObjectItemCaseSensitive(meta, "finalizers");
			if (!cJSON_IsArray(fin)) {
				cJSON_DeleteItemFromObjectCaseSensitive(meta, "finalizers");
				fin = cJSON_AddArrayToObject(meta, "finalizers");
			}
			cJSON_AddItemToArray(fin, cJSON_CreateString("foregroundDeletion"));
		}
		if (o && apiserver_store_put(s->store, rq->res, o, apiserver_now_wall(), &v, &err) == 0)
			reply_object(s, rq, 200, v, out);
		else
			oom(out);
		apiserver_store_unlock(s->store);
		return;
	}
	apiserver_store_unlock(s->store);
	sim_workloads_orphan(s->wl, rq->res, rq->ns, uid);
	delete_to_status(s, rq, false, out);
}

/* ---- dispatch ---- */

static void not_allowed(struct reply *out, const struct resreq *rq)
{
	char msg[200];

	snprintf(msg, sizeof(msg), "%s %s%s%s is not supported by the simulated API server",
		 rq->method, apiserver_resources[rq->res].name, rq->sub ? "/" : "",
		 rq->sub ? rq->sub : "");
	apiserver_reply_status(out, 405, "MethodNotAllowed", msg, NULL, NULL);
}

static void handle(struct apiserver *s, const struct resreq *rq, struct reply *out)
{
	const struct apiserver_resdef *d = &apiserver_resources[rq->res];
	const char *m = rq->method;
	bool watch = rq->watch;

	if (watch && strcmp(m, "GET") == 0 && !rq->sub) {
		do_watch(s, rq, out); /* a named one watches that object */
		return;
	}
	if (!rq->name) {
		if (strcmp(m, "GET") == 0) {
			if (watch)
				do_watch(s, rq, out);
			else
				do_list(s, rq, out);
		} else if (strcmp(m, "POST") == 0 && rq->res == APISERVER_PODS) {
			create_pod(s, rq, out);
		} else if (strcmp(m, "POST") == 0 &&
			   (d->client_owned || rq->res == APISERVER_NAMESPACES)) {
			create_object(s, rq, out); /* namespaces: created, never changed or deleted */
		} else {
			not_allowed(out, rq);
		}
		return;
	}
	if (rq->sub) {
		bool status_sub = strcmp(rq->sub, "status") == 0;
		bool put_patch = strcmp(m, "PUT") == 0 || strcmp(m, "PATCH") == 0;

		if (rq->res == APISERVER_PODS && strcmp(rq->sub, "eviction") == 0 &&
		    strcmp(m, "POST") == 0)
			evict(s, rq, out);
		else if (rq->res == APISERVER_PODS && strcmp(rq->sub, "binding") == 0 &&
			 strcmp(m, "POST") == 0)
			bind_pod(s, rq, out);
		else if (status_sub && strcmp(m, "GET") == 0)
			do_get(s, rq, out);
		else if (status_sub && rq->res == APISERVER_NODES && strcmp(m, "PATCH") == 0)
			patch_node(s, rq, out);
		else if (status_sub && is_workload(rq->res) && put_patch)
			change_object(s, rq, strcmp(m, "PATCH") == 0, out);
		else if (strcmp(rq->sub, "scale") == 0 &&
			 (rq->res == APISERVER_DEPLOYMENTS || rq->res == APISERVER_REPLICASETS) &&
			 (put_patch || strcmp(m, "GET") == 0))
			do_scale(s, rq, out);
		else
			not_allowed(out, rq);
		return;
	}
	if (strcmp(m, "GET") == 0) {
		do_get(s, rq, out);
	} else if (strcmp(m, "PATCH") == 0 && rq->res == APISERVER_NODES) {
		patch_node(s, rq, out);
	} else if ((strcmp(m, "PATCH") == 0 || strcmp(m, "PUT") == 0) && rq->res == APISERVER_PODS) {
		change_pod(s, rq, strcmp(m, "PATCH") == 0, out);
	} else if (strcmp(m, "DELETE") == 0 &&
		   (rq->res == APISERVER_NODES || rq->res == APISERVER_PODS)) {
		delete_sim_object(s, rq, out);
	} else if (strcmp(m, "DELETE") == 0 && is_workload(rq->res)) {
		delete_workload(s, rq, out);
	} else if (d->client_owned && strcmp(m, "PUT") == 0) {
		change_object(s, rq, false, out);
	} else if (d->client_owned && strcmp(m, "PATCH") == 0) {
		change_object(s, rq, true, out);
	} else if (d->client_owned && strcmp(m, "DELETE") == 0) {
		delete_object(s, rq, out);
	} else {
		not_allowed(out, rq);
	}
}

void apiserver_handle_resource(struct apiserver *s, const struct resreq *rq, struct reply *out)
{
	handle(s, rq, out);
	/* a write to a workload or a pod: its controllers act before the next tick */
	if (s->wl && strcmp(rq->method, "GET") != 0 && out->code < 300 &&
	    (is_workload(rq->res) || rq->res == APISERVER_PODS))
		sim_workloads_reconcile(s->wl, apiserver_now_wall());
}

/* ---- from the simulated world into the store ---- */

void apiserver_on_change(void *ud, const struct sim_change *ch)
{
	struct apiserver *s = ud;
	enum apiserver_resource r = ch->kind == SIM_OBJ_NODE ? APISERVER_NODES : APISERVER_PODS;
	struct errbuf err;
	cJSON *o = NULL;

	if (!ch->gone) {
		o = r == APISERVER_NODES ? apiserver_render_node(ch) : apiserver_render_pod(ch);
		if (!o) {
			log_at(s->o.log, LOG_ERROR, apiserver_now_wall(),
			       "sim apiserver: out of memory rendering a %s", r == APISERVER_NODES ?
			       "node" : "pod");
			return;
		}
	}
	if (r == APISERVER_PODS && !ch->gone && (ch->pod->flags & POD_UNSCHEDULABLE))
		sim_reacting_pod(s->reacting, ch->pod->ns, ch->pod->name, clock_now(clock_real()));
	if (r == APISERVER_NODES && s->txn_node && strcmp(s->txn_node, ch->node->name) == 0) {
		/* a patch is changing this node: one event when it is done */
		cJSON_Delete(s->txn_obj);
		s->txn_obj = o;
		if (!ch->gone)
			return;
		s->txn_obj = NULL;
	}
	apiserver_store_lock(s->store);
	if (ch->gone)
		apiserver_events_on_change(s->events, ch); /* while its last state is there */
	if (ch->gone)
		apiserver_store_delete(s->store, r,
				       r == APISERVER_PODS ? ch->pod->ns : NULL,
				       r == APISERVER_PODS ? ch->pod->name : ch->node->name, NULL);
	else if (apiserver_store_put(s->store, r, o, apiserver_now_wall(), NULL, &err) < 0)
		log_at(s->o.log, LOG_ERROR, apiserver_now_wall(), "sim apiserver: %s", err.msg);
	else
		apiserver_events_on_change(s->events, ch);
	apiserver_store_unlock(s->store);
}

static int put_static(struct apiserver *s, enum apiserver_resource r, cJSON *o)
{
	struct errbuf err;

	if (!o)
		return -1;
	if (apiserver_store_put(s->store, r, o, apiserver_now_wall(), NULL, &err) < 0) {
		log_at(s->o.log, LOG_ERROR, apiserver_now_wall(), "sim apiserver: %s", err.msg);
		return -1;
	}
	return 0;
}

#define NODE_LEASE_NS "kube-node-lease"

static bool node_ready(const cJSON *node)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(node, "status"), "conditions")) {
		const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "type"));
		const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "status"));

		if (t && v && strcmp(t, "Ready") == 0)
			return strcmp(v, "True") == 0;
	}
	return false;
}

/*
 * The kubelets' heartbeats: a Lease per Ready node in kube-node-lease,
 * renewed every 'period_s'; a node's Lease goes with it. Store lock held.
 */
static void renew_node_leases(struct apiserver *s, int64_t now, int64_t period_s)
{
	struct apiserver_ver *const *items;
	char **names = NULL, ts[48];
	size_t n, i, k = 0;
	struct tm tm;
	time_t t = (time_t)now;

	gmtime_r(&t, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S.000000Z", &tm);
	items = apiserver_store_list(s->store, APISERVER_NODES, &n);
	names = calloc(n ? n : 1, sizeof(*names));
	if (!names)
		return;
	for (i = 0; i < n; i++) {
		const struct apiserver_ver *l = apiserver_store_get(s->store, APISERVER_LEASES,
								    NODE_LEASE_NS, items[i]->name);
		cJSON *node, *lease, *meta, *spec, *refs, *ref;
		int64_t renewed = 0;

		names[k++] = items[i]->name;
		if (l) {
			cJSON *lo = cJSON_ParseWithLength(l->json, l->len);
			const char *rt = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
				cJSON_GetObjectItemCaseSensitive(lo, "spec"), "renewTime"));

			if (rt)
				model_parse_time(rt, &renewed);
			cJSON_Delete(lo);
			if (renewed > now - period_s)
				continue;
		}
		node = cJSON_ParseWithLength(items[i]->json, items[i]->len);
		if (!node_ready(node)) {
			cJSON_Delete(node);
			continue; /* a kubelet that is not up renews nothing */
		}
		cJSON_Delete(node);
		lease = cJSON_CreateObject();
		meta = lease ? cJSON_AddObjectToObject(lease, "metadata") : NULL;
		spec = lease ? cJSON_AddObjectToObject(lease, "spec") : NULL;
		refs = meta ? cJSON_AddArrayToObject(meta, "ownerReferences") : NULL;
		ref = cJSON_CreateObject();
		if (!lease || !meta || !spec || !refs || !ref) {
			cJSON_Delete(ref);
			cJSON_Delete(lease);
			break;
		}
		cJSON_AddStringToObject(meta, "name", items[i]->name);
		cJSON_AddStringToObject(meta, "namespace", NODE_LEASE_NS);
		cJSON_AddStringToObject(ref, "apiVersion", "v1");
		cJSON_AddStringToObject(ref, "kind", "Node");
		cJSON_AddStringToObject(ref, "name", items[i]->name);
		cJSON_AddStringToObject(ref, "uid", items[i]->uid);
		cJSON_AddItemToArray(refs, ref);
		cJSON_AddStringToObject(lease, "apiVersion", "coordination.k8s.io/v1");
		cJSON_AddStringToObject(lease, "kind", "Lease");
		cJSON_AddStringToObject(spec, "holderIdentity", items[i]->name);
		cJSON_AddNumberToObject(spec, "leaseDurationSeconds", 40);
		cJSON_AddStringToObject(spec, "renewTime", ts);
		put_static(s, APISERVER_LEASES, lease);
	}
	/* leases of nodes that are gone */
	items = apiserver_store_list(s->store, APISERVER_LEASES, &n);
	for (i = n; i-- > 0;) {
		size_t j;
		bool found = false;

		if (strcmp(items[i]->ns, NODE_LEASE_NS) != 0)
			continue;
		for (j = 0; j < k && !found; j++)
			found = strcmp(names[j], items[i]->name) == 0;
		if (!found) {
			apiserver_store_delete(s->store, APISERVER_LEASES, NODE_LEASE_NS, items[i]->name,
					       NULL);
			items = apiserver_store_list(s->store, APISERVER_LEASES, &n);
		}
	}
	free(names);
}

/* The LimitRange "defaults" in namespace default that gives pods without
 * requests the server's default requests (none when they are empty). Store lock held. */
static void seed_limit_range(struct apiserver *s, int64_t now)
{
	cJSON *lr, *meta, *spec, *limits, *item, *dr;

	(void)now;
	if (!s->o.default_cpu[0] && !s->o.default_memory[0])
		return;
	lr = cJSON_CreateObject();
	meta = lr ? cJSON_AddObjectToObject(lr, "metadata") : NULL;
	spec = lr ? cJSON_AddObjectToObject(lr, "spec") : NULL;
	limits = spec ? cJSON_AddArrayToObject(spec, "limits") : NULL;
	item = cJSON_CreateObject();
	if (!meta || !limits || !item) {
		cJSON_Delete(item);
		cJSON_Delete(lr);
		return;
	}
	cJSON_AddStringToObject(meta, "name", "defaults");
	cJSON_AddStringToObject(meta, "namespace", "default");
	cJSON_AddStringToObject(lr, "apiVersion", "v1");
	cJSON_AddStringToObject(lr, "kind", "LimitRange");
	cJSON_AddStringToObject(item, "type", "Container");
	dr = cJSON_AddObjectToObject(item, "defaultRequest");
	if (dr && s->o.default_cpu[0])
		cJSON_AddStringToObject(dr, "cpu", s->o.default_cpu);
	if (dr && s->o.default_memory[0])
		cJSON_AddStringToObject(dr, "memory", s->o.default_memory);
	cJSON_AddItemToArray(limits, item);
	put_static(s, APISERVER_LIMITRANGES, lr);
}

/* The world's claims, their bound volumes and their classes (a store
 * write only when one changed: put_static keeps an equal object). Store
 * lock held. */
static void put_claims(struct apiserver *s, const struct sim_claim_view *claims, size_t n,
		       int64_t now)
{
	const struct apiserver_ver *cur;
	size_t i, j;

	for (i = 0; i < n; i++) {
		const struct sim_claim_view *c = &claims[i];

		cur = apiserver_store_get(s->store, APISERVER_PVCS, c->ns, c->name);
		put_static(s, APISERVER_PVCS, apiserver_render_pvc(c, cur ? cur->created : now));
		if (c->pv) {
			cur = apiserver_store_get(s->store, APISERVER_PVS, NULL, c->pv);
			put_static(s, APISERVER_PVS, apiserver_render_pv(c, cur ? cur->created : now));
		}
		for (j = 0; j < i && strcmp(claims[j].storage_class, c->storage_class) != 0; j++)
			;
		if (j == i) {
			cur = apiserver_store_get(s->store, APISERVER_STORAGE_CLASSES, NULL,
						  c->storage_class);
			put_static(s, APISERVER_STORAGE_CLASSES,
				   apiserver_render_storage_class(c->storage_class,
								  cur ? cur->created : now));
		}
	}
}

void apiserver_sync_static(struct apiserver *s, bool first)
{
	size_t n = sim_cluster_n_pdbs(s->cluster), i, n_specs = 0;
	struct pdb *pdbs = calloc(n ? n : 1, sizeof(*pdbs));
	struct sim_pdb_status *st = calloc(n ? n : 1, sizeof(*st));
	const struct sim_pod_spec **specs = NULL;
	struct sim_spec_counts *counts = NULL;
	struct sim_claim_view *claims = NULL;
	size_t n_claims = 0;
	int64_t now = apiserver_now_wall();
	int got;

	if (!pdbs || !st)
		goto out;
	/* everything from the cluster first: never its lock inside the store's */
	got = sim_cluster_pdbs(s->cluster, pdbs, st, n);
	if (got < 0)
		goto out;
	n_specs = sim_cluster_n_specs(s->cluster);
	specs = calloc(n_specs ? n_specs : 1, sizeof(*specs));
	counts = calloc(n_specs ? n_specs : 1, sizeof(*counts));
	if (!specs || !counts)
		goto out;
	for (i = 0; i < n_specs; i++) {
		specs[i] = sim_cluster_spec(s->cluster, i);
		if (specs[i] && specs[i]->controller == SIM_CTRL_DAEMONSET)
			sim_cluster_spec_counts(s->cluster, i, &counts[i]);
	}
	/* the claims (made as StatefulSet replicas appear, never removed) */
	for (;;) {
		size_t have = sim_cluster_claims(s->cluster, claims, n_claims);
		struct sim_claim_view *more;

		if (have <= n_claims) {
			n_claims = have;
			break;
		}
		more = realloc(claims, have * sizeof(*claims));
		if (!more)
			goto out;
		claims = more;
		n_claims = have;
	}
	apiserver_store_lock(s->store);
	put_claims(s, claims, n_claims, now);
	for (i = 0; i < (size_t)got; i++) {
		const struct apiserver_ver *cur = apiserver_store_get(s->store, APISERVER_PDBS,
								      pdbs[i].ns, pdbs[i].name);

		put_static(s, APISERVER_PDBS,
			   apiserver_render_pdb(&pdbs[i], &st[i], cur ? cur->created : now));
	}
	if (first) {
		static const char *const base_ns[] = {"default", "kube-system", "kube-public",
						      "kube-node-lease"};

		for (i = 0; i < sizeof(base_ns) / sizeof(base_ns[0]); i++)
			put_static(s, APISERVER_NAMESPACES, apiserver_render_namespace(base_ns[i], now));
		for (i = 0; i < (size_t)got; i++)
			if (!apiserver_store_get(s->store, APISERVER_NAMESPACES, NULL, pdbs[i].ns))
				put_static(s, APISERVER_NAMESPACES,
					   apiserver_render_namespace(pdbs[i].ns, now));
		for (i = 0; i < n_specs; i++) {
			if (!specs[i])
				continue;
			if (!apiserver_store_get(s->store, APISERVER_NAMESPACES, NULL, specs[i]->ns))
				put_static(s, APISERVER_NAMESPACES,
					   apiserver_render_namespace(specs[i]->ns, now));
		}
	}
	for (i = 0; i < n_specs; i++) {
		const struct apiserver_ver *cur;

		if (!specs[i] || specs[i]->controller != SIM_CTRL_DAEMONSET)
			continue;
		cur = apiserver_store_get(s->store, APISERVER_DAEMONSETS, specs[i]->ns, specs[i]->name);
		put_static(s, APISERVER_DAEMONSETS,
			   apiserver_render_daemonset(specs[i], &counts[i], cur ? cur->created : now));
	}
	renew_node_leases(s, now, 10);
	if (first)
		seed_limit_range(s, now);
	apiserver_store_unlock(s->store);
	if (s->wl)
		sim_workloads_reconcile(s->wl, now);
out:
	free(claims);
	free(counts);
	free(specs);
	free(pdbs);
	free(st);
}
