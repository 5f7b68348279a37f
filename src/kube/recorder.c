/*
 * recorder: three bounded LRU caches (a pod's token bucket, the distinct
 * messages of a pod and reason, the Events written), the queue of writes
 * they make, and the thread that sends them (POST, or PATCH of a count).
 */
#include "kube/recorder.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "model.h"

#define FAILURE_LOG_EVERY_S 60
#define AGGREGATE_CAP 64 /* most distinct messages remembered per pod and reason */
#define COMBINED "(combined from similar events): "

/* ---- a string-keyed LRU cache ---- */

struct entry {
	char *key;
	uint64_t hash;
	struct entry *chain;       /* the bucket's next */
	struct entry *newer, *older;
	/* the spam cache's */
	double tokens;
	int64_t refilled;
	/* the aggregate cache's */
	uint64_t msgs[AGGREGATE_CAP];
	int n_msgs;
	int64_t last;
	/* the written Events' */
	int64_t count;
	int64_t first;
	char name[256];
};

struct lru {
	struct entry **buckets;
	size_t n_buckets, n, max;
	struct entry *newest, *oldest;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static int lru_init(struct lru *l, size_t max)
{
	l->max = max;
	l->n_buckets = 1;
	while (l->n_buckets < max * 2)
		l->n_buckets <<= 1;
	l->buckets = calloc(l->n_buckets, sizeof(*l->buckets));
	return l->buckets ? 0 : -1;
}

static void unlink_age(struct lru *l, struct entry *e)
{
	if (e->newer)
		e->newer->older = e->older;
	else
		l->newest = e->older;
	if (e->older)
		e->older->newer = e->newer;
	else
		l->oldest = e->newer;
	e->newer = e->older = NULL;
}

static void push_newest(struct lru *l, struct entry *e)
{
	e->older = l->newest;
	e->newer = NULL;
	if (l->newest)
		l->newest->newer = e;
	l->newest = e;
	if (!l->oldest)
		l->oldest = e;
}

static void lru_drop(struct lru *l, struct entry *e)
{
	struct entry **p = &l->buckets[e->hash & (l->n_buckets - 1)];

	while (*p && *p != e)
		p = &(*p)->chain;
	if (*p)
		*p = e->chain;
	unlink_age(l, e);
	l->n--;
	free(e->key);
	free(e);
}

/* The entry of 'key', made (zeroed) when missing, now the newest; the
 * oldest goes when the cache is full. NULL when out of memory. */
static struct entry *lru_get(struct lru *l, const char *key, bool *made)
{
	uint64_t h = hash_str(key);
	struct entry *e;

	*made = false;
	for (e = l->buckets[h & (l->n_buckets - 1)]; e; e = e->chain)
		if (e->hash == h && strcmp(e->key, key) == 0) {
			unlink_age(l, e);
			push_newest(l, e);
			return e;
		}
	if (l->n >= l->max && l->oldest)
		lru_drop(l, l->oldest);
	e = calloc(1, sizeof(*e));
	if (!e || !(e->key = strdup(key))) {
		free(e);
		return NULL;
	}
	e->hash = h;
	e->chain = l->buckets[h & (l->n_buckets - 1)];
	l->buckets[h & (l->n_buckets - 1)] = e;
	push_newest(l, e);
	l->n++;
	*made = true;
	return e;
}

static void lru_free(struct lru *l)
{
	while (l->oldest)
		lru_drop(l, l->oldest);
	free(l->buckets);
}

/* ---- the recorder ---- */

struct write {
	struct write *next;
	bool patch;
	char *ns, *name;
	char *body;      /* the Event (POST), or the patch */
	char *full;      /* for a patch: the whole Event, if it has to be made again */
};

struct recorder {
	struct kube_client *client;
	char *component;
	const struct logger *log;
	struct clock *clock;
	int spam_burst;
	int64_t spam_refill_s;
	int aggregate_max;
	int64_t aggregate_window_s;
	size_t queue_max;
	double qps, tokens;
	int burst;
	int64_t tokens_at;         /* clock_now() of the last refill */

	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool active, stop, threaded;
	pthread_t thread;
	struct lru spam, aggregate, written;
	struct write *head, *tail;
	size_t queued;
	uint64_t seq;
	struct recorder_stats st;
	uint64_t failed_quiet;
	int64_t failure_logged_at;
};

static void write_free(struct write *w)
{
	if (!w)
		return;
	free(w->ns);
	free(w->name);
	free(w->body);
	free(w->full);
	free(w);
}

/* Cuts 'msg' at RECORDER_MESSAGE_MAX bytes, on a character boundary. */
static void cut_message(const char *msg, char *out, size_t outlen)
{
	size_t n = strlen(msg);

	if (n > RECORDER_MESSAGE_MAX) {
		n = RECORDER_MESSAGE_MAX;
		while (n > 0 && ((unsigned char)msg[n] & 0xc0) == 0x80)
			n--;
	}
	snprintf(out, outlen, "%.*s", (int)n, msg);
}

static void event_body(struct buf *b, const struct recorder *r, const char *ns, const char *name,
		       const char *uid, const char *type, const char *reason, const char *msg,
		       const struct entry *e, int64_t now)
{
	char first[32], last[32];

	model_format_time(e->first, first, sizeof(first));
	model_format_time(now, last, sizeof(last));
	buf_puts(b, "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":");
	buf_json_string(b, e->name);
	buf_puts(b, ",\"namespace\":");
	buf_json_string(b, ns);
	buf_puts(b, "},\"involvedObject\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"namespace\":");
	buf_json_string(b, ns);
	buf_puts(b, ",\"name\":");
	buf_json_string(b, name);
	if (uid && *uid) {
		buf_puts(b, ",\"uid\":");
		buf_json_string(b, uid);
	}
	buf_puts(b, "},\"reason\":");
	buf_json_string(b, reason);
	buf_puts(b, ",\"message\":");
	buf_json_string(b, msg);
	buf_puts(b, ",\"type\":");
	buf_json_string(b, type);
	buf_puts(b, ",\"source\":{\"component\":");
	buf_json_string(b, r->component);
	buf_puts(b, "},\"reportingComponent\":");
	buf_json_string(b, r->component);
	buf_printf(b, ",\"firstTimestamp\":\"%s\",\"lastTimestamp\":\"%s\",\"count\":%lld}", first,
		   last, (long long)e->count);
}

static void *recorder_thread(void *arg);

struct recorder *recorder_new(const struct recorder_opts *o, struct errbuf *err)
{
	struct recorder *r = calloc(1, sizeof(*r));
	size_t cache = o->cache_size ? o->cache_size : 4096;

	if (!r) {
		errbuf_set(err, "out of memory");
		return NULL;
	}
	r->client = o->client;
	/* the names' counter starts anywhere: two processes (a restart, a
	 * standby taking over) writing for one object in the same second do
	 * not collide */
	if (getrandom(&r->seq, sizeof(r->seq), GRND_NONBLOCK) != (ssize_t)sizeof(r->seq))
		r->seq = (uint64_t)getpid() * 0x9e3779b97f4a7c15ULL;
	r->component = strdup(o->component && *o->component ? o->component : "luascale");
	r->log = o->log;
	r->clock = o->clock ? o->clock : clock_real();
	r->spam_burst = o->spam_burst > 0 ? o->spam_burst : 25;
	r->spam_refill_s = o->spam_refill_s > 0 ? o->spam_refill_s : 300;
	r->aggregate_max = o->aggregate_max > 0 ? o->aggregate_max : 10;
	if (r->aggregate_max > AGGREGATE_CAP)
		r->aggregate_max = AGGREGATE_CAP;
	r->aggregate_window_s = o->aggregate_window_s > 0 ? o->aggregate_window_s : 600;
	r->queue_max = o->queue_max ? o->queue_max : 1024;
	r->qps = o->qps > 0 ? o->qps : 2;
	r->burst = o->burst > 0 ? o->burst : 10;
	r->tokens = r->burst;
	r->tokens_at = clock_now(clock_real());
	r->active = true;
	pthread_mutex_init(&r->mu, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&r->cv, &ca);
		pthread_condattr_destroy(&ca);
	}
	if (!r->component || lru_init(&r->spam, cache) < 0 || lru_init(&r->aggregate, cache) < 0 ||
	    lru_init(&r->written, cache) < 0) {
		errbuf_set(err, "out of memory");
		recorder_free(r);
		return NULL;
	}
	if (!o->no_thread) {
		if (pthread_create(&r->thread, NULL, recorder_thread, r) != 0) {
			errbuf_set(err, "cannot start the Event recorder's thread");
			recorder_free(r);
			return NULL;
		}
		r->threaded = true;
	}
	return r;
}

void recorder_free(struct recorder *r)
{
	if (!r)
		return;
	if (r->threaded) {
		pthread_mutex_lock(&r->mu);
		r->stop = true;
		pthread_cond_signal(&r->cv);
		pthread_mutex_unlock(&r->mu);
		pthread_join(r->thread, NULL);
	}
	while (r->head) {
		struct write *w = r->head;

		r->head = w->next;
		write_free(w);
	}
	if (r->spam.buckets)
		lru_free(&r->spam);
	if (r->aggregate.buckets)
		lru_free(&r->aggregate);
	if (r->written.buckets)
		lru_free(&r->written);
	pthread_cond_destroy(&r->cv);
	pthread_mutex_destroy(&r->mu);
	free(r->component);
	free(r);
}

/* The pod's bucket: whether one more Event may go. Under r->mu. */
static bool spam_allows(struct recorder *r, const char *key, int64_t now)
{
	bool made;
	struct entry *e = lru_get(&r->spam, key, &made);

	if (!e)
		return false;
	if (made) {
		e->tokens = r->spam_burst;
		e->refilled = now;
	} else if (now > e->refilled) {
		e->tokens += (double)(now - e->refilled) / (double)r->spam_refill_s;
		if (e->tokens > r->spam_burst)
			e->tokens = r->spam_burst;
		e->refilled = now;
	}
	if (e->tokens < 1)
		return false;
	e->tokens -= 1;
	return true;
}

/* Whether messages of this pod and reason are to be combined now (the
 * aggregate_max-th distinct one in the window has come). Under r->mu. */
static bool aggregate(struct recorder *r, const char *key, const char *msg, int64_t now)
{
	bool made;
	struct entry *e = lru_get(&r->aggregate, key, &made);
	uint64_t h = hash_str(msg);
	int i;

	if (!e)
		return false;
	if (!made && now - e->last > r->aggregate_window_s)
		e->n_msgs = 0; /* the window passed: start again */
	e->last = now;
	for (i = 0; i < e->n_msgs; i++)
		if (e->msgs[i] == h)
			break;
	if (i == e->n_msgs && e->n_msgs < AGGREGATE_CAP)
		e->msgs[e->n_msgs++] = h;
	return e->n_msgs >= r->aggregate_max;
}

enum recorder_outcome recorder_pod_event(struct recorder *r, const char *ns, const char *name,
					 const char *uid, const char *type, const char *reason,
					 const char *message)
{
	char msg[RECORDER_MESSAGE_MAX + sizeof(COMBINED) + 1];
	struct buf okey = BUF_INIT, akey = BUF_INIT, dkey = BUF_INIT, body = BUF_INIT, full = BUF_INIT;
	struct write *w = NULL;
	enum recorder_outcome out = RECORDER_QUEUED;
	int64_t now = clock_wall(r->clock);
	struct entry *e;
	bool made, combined;

	if (!ns || !*ns || !name || !*name || !reason || !*reason)
		return RECORDER_INVALID;
	type = type && *type ? type : "Normal";
	uid = uid ? uid : "";
	cut_message(message ? message : "", msg, sizeof(msg));
	/* the keys: the object; the object, type and reason; the Event */
	buf_printf(&okey, "%s\x1fPod\x1f%s\x1f%s\x1f%s", r->component, ns, name, uid);
	buf_printf(&akey, "%s\x1f%s\x1f%s", okey.data ? okey.data : "", type, reason);
	pthread_mutex_lock(&r->mu);
	if (!r->active) {
		out = RECORDER_INACTIVE;
		goto out;
	}
	if (okey.oom || akey.oom || !spam_allows(r, okey.data, now)) {
		r->st.spam++;
		out = RECORDER_SPAM;
		goto out;
	}
	if (r->queued >= r->queue_max) {
		r->st.full++;
		out = RECORDER_FULL;
		goto out;
	}
	combined = aggregate(r, akey.data, msg, now);
	if (combined) {
		/* one Event for all of them, its message the latest */
		char tmp[sizeof(msg) + sizeof(COMBINED)];

		snprintf(tmp, sizeof(tmp), "%s%s", COMBINED, msg);
		cut_message(tmp, msg, sizeof(msg));
		buf_printf(&dkey, "%s\x1f" "combined", akey.data);
		r->st.aggregated++;
	} else {
		buf_printf(&dkey, "%s\x1f%s", akey.data, msg);
	}
	e = dkey.oom ? NULL : lru_get(&r->written, dkey.data, &made);
	w = calloc(1, sizeof(*w));
	if (!e || !w) {
		r->st.full++;
		out = RECORDER_FULL;
		goto out;
	}
	if (made || e->count == 0) {
		/* as client-go names them: the object, then the time in hex */
		e->count = 1;
		e->first = now;
		snprintf(e->name, sizeof(e->name), "%.200s.%llx%04llx", name,
			 (unsigned long long)now, (unsigned long long)(r->seq++ & 0xffff));
	} else {
		char ts[32];

		e->count++;
		w->patch = true;
		model_format_time(now, ts, sizeof(ts));
		buf_printf(&body, "{\"count\":%lld,\"lastTimestamp\":\"%s\",\"message\":",
			   (long long)e->count, ts);
		buf_json_string(&body, msg);
		buf_puts(&body, "}");
	}
	event_body(w->patch ? &full : &body, r, ns, name, uid, type, reason, msg, e, now);
	w->ns = strdup(ns);
	w->name = strdup(e->name);
	w->body = buf_take(&body);
	w->full = w->patch ? buf_take(&full) : NULL;
	if (!w->ns || !w->name || !w->body || (w->patch && !w->full)) {
		r->st.full++;
		out = RECORDER_FULL;
		goto out;
	}
	if (r->tail)
		r->tail->next = w;
	else
		r->head = w;
	r->tail = w;
	r->queued++;
	w = NULL;
	pthread_cond_signal(&r->cv);
out:
	pthread_mutex_unlock(&r->mu);
	write_free(w);
	buf_free(&okey);
	buf_free(&akey);
	buf_free(&dkey);
	buf_free(&body);
	buf_free(&full);
	return out;
}

/* Sends one write (no lock held). 0 or -1 with why. */
static int send_write(struct recorder *r, const struct write *w, bool *patched, struct errbuf *err)
{
	struct buf path = BUF_INIT;
	struct kube_response resp;
	int rc;

	*patched = false;
	buf_puts(&path, "/api/v1/namespaces/");
	kube_escape(&path, w->ns);
	buf_puts(&path, "/events");
	if (w->patch) {
		size_t coll = path.len;

		buf_puts(&path, "/");
		kube_escape(&path, w->name);
		if (path.oom) {
			buf_free(&path);
			return errbuf_set(err, "out of memory");
		}
		rc = kube_request(r->client, "PATCH", path.data, KUBE_CT_MERGE_PATCH, w->body,
				  strlen(w->body), &resp, err);
		if (rc == 0 && resp.status >= 200 && resp.status < 300) {
			*patched = true;
			goto out;
		}
		if (rc == 0 && resp.status != 404)
			goto status;
		if (rc < 0)
			goto out;
		/* the Event is gone (expired, deleted): made again, same name */
		kube_response_free(&resp);
		path.len = coll;
		path.data[coll] = '\0';
	}
	if (path.oom) {
		buf_free(&path);
		return errbuf_set(err, "out of memory");
	}
	rc = kube_request(r->client, "POST", path.data, KUBE_CT_JSON, w->patch ? w->full : w->body,
			  strlen(w->patch ? w->full : w->body), &resp, err);
	if (rc == 0 && resp.status >= 200 && resp.status < 300)
		goto out;
	if (rc < 0)
		goto out;
status:
	rc = errbuf_set(err, "Event %s/%s: HTTP %ld %s: %s", w->ns, w->name, resp.status,
			resp.reason, resp.message);
out:
	kube_response_free(&resp);
	buf_free(&path);
	return rc;
}

/* Takes the oldest write off the queue, sends it and counts; false when
 * there was none. Called with r->mu held; returns with it held. */
static bool send_one(struct recorder *r)
{
	struct write *w = r->head;
	struct errbuf err;
	bool patched;
	int rc;

	if (!w)
		return false;
	r->head = w->next;
	if (!r->head)
		r->tail = NULL;
	r->queued--;
	pthread_mutex_unlock(&r->mu);
	rc = send_write(r, w, &patched, &err);
	pthread_mutex_lock(&r->mu);
	if (rc == 0 && patched) {
		r->st.patched++;
	} else if (rc == 0) {
		r->st.created++;
	} else {
		int64_t now = clock_wall(r->clock);

		r->st.failed++;
		if (!r->failure_logged_at || now - r->failure_logged_at >= FAILURE_LOG_EVERY_S) {
			log_at(r->log, LOG_WARN, now, "cannot write an Event: %s%s", err.msg,
			       r->failed_quiet ? " (earlier failures not logged)" : "");
			r->failure_logged_at = now ? now : 1;
			r->failed_quiet = 0;
		} else {
			r->failed_quiet++;
		}
	}
	write_free(w);
	return true;
}

/* Waits on r->cv (held) for at most 'ns' of the real clock. */
static void wait_for(struct recorder *r, int64_t ns)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)(ns / CLOCK_NS_PER_S);
	ts.tv_nsec += (long)(ns % CLOCK_NS_PER_S);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&r->cv, &r->mu, &ts);
}

/* How long until the thread may send (0: now, a token taken). Under r->mu. */
static int64_t pace(struct recorder *r)
{
	int64_t now = clock_now(clock_real());

	r->tokens += (double)(now - r->tokens_at) / CLOCK_NS_PER_S * r->qps;
	if (r->tokens > r->burst)
		r->tokens = r->burst;
	r->tokens_at = now;
	if (r->tokens < 1)
		return (int64_t)((1 - r->tokens) / r->qps * CLOCK_NS_PER_S) + 1;
	/* the actuator's writes waiting for the client's rate limit go first */
	if (kube_client_writes_waiting(r->client) > 0)
		return 100 * CLOCK_NS_PER_MS;
	r->tokens -= 1;
	return 0;
}

static void *recorder_thread(void *arg)
{
	struct recorder *r = arg;

	pthread_mutex_lock(&r->mu);
	while (!r->stop) {
		int64_t wait;

		if (!r->head) {
			pthread_cond_wait(&r->cv, &r->mu);
			continue;
		}
		wait = pace(r);
		if (wait > 0) {
			wait_for(r, wait);
			continue;
		}
		send_one(r);
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

size_t recorder_flush(struct recorder *r)
{
	size_t n = 0;

	pthread_mutex_lock(&r->mu);
	while (send_one(r))
		n++;
	pthread_mutex_unlock(&r->mu);
	return n;
}

void recorder_set_active(struct recorder *r, bool active)
{
	pthread_mutex_lock(&r->mu);
	r->active = active;
	if (!active) {
		/* a standby sends nothing, what was queued included */
		while (r->head) {
			struct write *w = r->head;

			r->head = w->next;
			write_free(w);
		}
		r->tail = NULL;
		r->queued = 0;
	}
	pthread_mutex_unlock(&r->mu);
}

void recorder_get_stats(struct recorder *r, struct recorder_stats *st)
{
	pthread_mutex_lock(&r->mu);
	*st = r->st;
	pthread_mutex_unlock(&r->mu);
}
