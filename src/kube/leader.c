/*
 * leader: the Lease record on the wire (GET, create, optimistic update,
 * release), the observer's clock (a record is taken over only once it has
 * not changed for its own leaseDurationSeconds since this process first
 * saw it so), and the leading/standby state with its renew deadline.
 */
#include "kube/leader.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "k8sname.h"
#include "kube/client.h"
#include "log.h"
#include "runtime/clock.h"
#include "runtime/fence.h"

/* The spec fields that make a record (compared as one string, as client-go
 * compares the raw record). */
struct record {
	char holder[LEADER_IDENTITY_MAX];
	int64_t duration_s;
	char acquire[80], renew[80];
	int64_t transitions;
};

struct leader {
	struct leader_opts o;
	char ns[64], name[254], id[LEADER_IDENTITY_MAX];
	char path[512];       /* the Lease's path */
	char coll[512];       /* the namespace's leases */

	/* the elector's own (leader_step's thread) */
	cJSON *obj;           /* the Lease as last read or written, or NULL */
	struct record seen;   /* its record */
	char raw[768];        /* the record as compared */
	int64_t observed_ns;  /* when 'raw' last changed, by our clock */
	bool have_seen;

	pthread_mutex_t mu;   /* guards what other threads read: */
	bool leading;
	int64_t renewed_ns;   /* clock_now at the start of the last successful renew */
	bool observed;
	char holder[LEADER_IDENTITY_MAX];
	uint64_t transitions;
	int64_t expires_ns;   /* when another holder's record may be taken, 0: n/a */

	pthread_t thread;
	bool started, stopping;
	pthread_cond_t cv;
};

#define LOG_L(l, lvl, ...) log_at((l)->o.log, (lvl), clock_wall((l)->o.clock), __VA_ARGS__)

struct leader *leader_new(const struct leader_opts *opts, struct errbuf *err)
{
	struct leader *l;
	struct buf b = BUF_INIT;
	pthread_condattr_t ca;

	if (!opts->client) {
		errbuf_set(err, "leader election: no API client");
		return NULL;
	}
	if (!(opts->retry_period_ns > 0 && opts->renew_deadline_ns > opts->retry_period_ns &&
	      opts->lease_duration_ns > opts->renew_deadline_ns)) {
		errbuf_set(err, "leader election: want lease_duration > renew_deadline > retry_period > 0");
		return NULL;
	}
	if (opts->lease_duration_ns < CLOCK_NS_PER_S || opts->lease_duration_ns % CLOCK_NS_PER_S) {
		errbuf_set(err, "leader election: lease_duration must be whole seconds (the Lease counts seconds)");
		return NULL;
	}
	if (!opts->ns || !*opts->ns || strlen(opts->ns) >= 64 || !opts->name || !*opts->name ||
	    strlen(opts->name) >= 254 || !opts->identity || !*opts->identity ||
	    strlen(opts->identity) >= LEADER_IDENTITY_MAX) {
		errbuf_set(err, "leader election: the namespace, name and identity must be set and short");
		return NULL;
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		errbuf_set(err, "out of memory");
		return NULL;
	}
	l->o = *opts;
	if (!l->o.clock)
		l->o.clock = clock_real();
	snprintf(l->ns, sizeof(l->ns), "%s", opts->ns);
	snprintf(l->name, sizeof(l->name), "%s", opts->name);
	snprintf(l->id, sizeof(l->id), "%s", opts->identity);
	l->o.ns = l->ns;
	l->o.name = l->name;
	l->o.identity = l->id;
	buf_puts(&b, "/apis/coordination.k8s.io/v1/namespaces/");
	kube_escape(&b, l->ns);
	buf_puts(&b, "/leases");
	snprintf(l->coll, sizeof(l->coll), "%s", b.data ? b.data : "");
	buf_puts(&b, "/");
	kube_escape(&b, l->name);
	snprintf(l->path, sizeof(l->path), "%s", b.data ? b.data : "");
	buf_free(&b);
	pthread_mutex_init(&l->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l->cv, &ca);
	pthread_condattr_destroy(&ca);
	return l;
}

void leader_free(struct leader *l)
{
	if (!l)
		return;
	leader_stop(l);
	cJSON_Delete(l->obj);
	pthread_cond_destroy(&l->cv);
	pthread_mutex_destroy(&l->mu);
	free(l);
}

/* MicroTime at the clock's wall time: "2026-12-01T08:00:00.123456Z". */
static void micro_time(struct leader *l, char *out, size_t len)
{
	int64_t s, us;
	struct tm tm;
	time_t t;

	if (l->o.clock == clock_real()) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		s = ts.tv_sec;
		us = ts.tv_nsec / 1000;
	} else {
		/* a virtual clock's wall time moves with its monotonic time */
		s = clock_wall(l->o.clock);
		us = (clock_now(l->o.clock) % CLOCK_NS_PER_S) / 1000;
	}
	t = (time_t)s;
	gmtime_r(&t, &tm);
	snprintf(out, len, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)us);
}

static void raw_of(const struct record *r, char *out, size_t len)
{
	snprintf(out, len, "%s|%lld|%s|%s|%lld", r->holder, (long long)r->duration_s, r->acquire,
		 r->renew, (long long)r->transitions);
}

static const char *str_at(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The record of a Lease object; -1 when it is not one (a message). */
static int decode(const cJSON *obj, struct record *r, struct errbuf *err)
{
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	const cJSON *v;
	const char *s;

	memset(r, 0, sizeof(*r));
	if (!cJSON_IsObject(meta) || !str_at(meta, "resourceVersion"))
		return errbuf_set(err, "the Lease has no metadata.resourceVersion");
	if (spec && !cJSON_IsObject(spec))
		return errbuf_set(err, "the Lease's spec is not an object");
	if ((s = str_at(spec, "holderIdentity"))) {
		if (strlen(s) >= sizeof(r->holder))
			return errbuf_set(err, "the Lease's spec.holderIdentity is too long");
		snprintf(r->holder, sizeof(r->holder), "%s", s);
	}
	v = cJSON_GetObjectItemCaseSensitive(spec, "leaseDurationSeconds");
	if (v) {
		if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 1e6)
			return errbuf_set(err, "the Lease's spec.leaseDurationSeconds is not a small positive integer");
		r->duration_s = (int64_t)v->valuedouble;
	}
	v = cJSON_GetObjectItemCaseSensitive(spec, "leaseTransitions");
	if (v) {
		if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 2147483647.0)
			return errbuf_set(err, "the Lease's spec.leaseTransitions is not a count");
		r->transitions = (int64_t)v->valuedouble;
	}
	if ((s = str_at(spec, "acquireTime")))
		snprintf(r->acquire, sizeof(r->acquire), "%s", s);
	if ((s = str_at(spec, "renewTime")))
		snprintf(r->renew, sizeof(r->renew), "%s", s);
	return 0;
}

/* Notes 'obj' (taken) as the Lease, its record as seen now when it changed. */
static void remember(struct leader *l, cJSON *obj, const struct record *r, int64_t now)
{
	char raw[sizeof(l->raw)];

	cJSON_Delete(l->obj);
	l->obj = obj;
	raw_of(r, raw, sizeof(raw));
	if (!l->have_seen || strcmp(raw, l->raw) != 0) {
		snprintf(l->raw, sizeof(l->raw), "%s", raw);
		l->observed_ns = now;
	}
	l->seen = *r;
	l->have_seen = true;
}

static bool valid_at(const struct leader *l, int64_t now)
{
	return l->have_seen && l->observed_ns + l->seen.duration_s * CLOCK_NS_PER_S > now;
}

/* Writes 'r' into the spec of a copy of the last object (or a new one). */
static char *body_of(struct leader *l, const struct record *r, bool with_meta)
{
	cJSON *o = with_meta && l->obj ? cJSON_Duplicate(l->obj, 1) : cJSON_CreateObject();
	cJSON *spec, *meta;
	char *out = NULL;

	if (!o)
		return NULL;
	if (!with_meta || !l->obj) {
		cJSON_AddStringToObject(o, "apiVersion", "coordination.k8s.io/v1");
		cJSON_AddStringToObject(o, "kind", "Lease");
		meta = cJSON_AddObjectToObject(o, "metadata");
		if (meta) {
			cJSON_AddStringToObject(meta, "name", l->name);
			cJSON_AddStringToObject(meta, "namespace", l->ns);
		}
	}
	cJSON_DeleteItemFromObjectCaseSensitive(o, "status");
	cJSON_DeleteItemFromObjectCaseSensitive(o, "spec");
	spec = cJSON_AddObjectToObject(o, "spec");
	if (spec) {
		if (r->holder[0])
			cJSON_AddStringToObject(spec, "holderIdentity", r->holder);
		cJSON_AddNumberToObject(spec, "leaseDurationSeconds", (double)r->duration_s);
		cJSON_AddStringToObject(spec, "acquireTime", r->acquire);
		cJSON_AddStringToObject(spec, "renewTime", r->renew);
		cJSON_AddNumberToObject(spec, "leaseTransitions", (double)r->transitions);
		out = cJSON_PrintUnformatted(o);
	}
	cJSON_Delete(o);
	return out;
}

/* POST (create) or PUT (update) 'r'. 1 when written (the answer becomes
 * the object), 0 when refused or failed (logged at 'lvl'). */
static int write_record(struct leader *l, bool create, const struct record *r, int64_t now,
			enum log_level lvl)
{
	struct kube_response resp;
	struct errbuf err;
	char *body = body_of(l, r, !create);
	cJSON *obj;
	struct record got;
	int rc = 0;

	if (!body)
		return 0;
	if (kube_request(l->o.client, create ? "POST" : "PUT", create ? l->coll : l->path,
			 KUBE_CT_JSON, body, strlen(body), &resp, &err) < 0) {
		LOG_L(l, lvl, "leader election: %s the Lease %s/%s: %s", create ? "creating" : "updating",
		      l->ns, l->name, err.msg);
		goto out;
	}
	if (resp.status != 200 && resp.status != 201) {
		LOG_L(l, resp.status == 409 ? LOG_DEBUG : lvl,
		      "leader election: %s the Lease %s/%s: HTTP %ld %s: %s",
		      create ? "creating" : "updating", l->ns, l->name, resp.status, resp.reason,
		      resp.message);
		goto out;
	}
	obj = cJSON_Parse(resp.body ? resp.body : "");
	if (!obj || decode(obj, &got, &err) < 0) {
		LOG_L(l, LOG_WARN, "leader election: the answer to the Lease %s of %s/%s: %s",
		      create ? "create" : "update", l->ns, l->name, obj ? err.msg : "not JSON");
		cJSON_Delete(obj);
		goto out;
	}
	/* what we wrote is the record (the server keeps it as sent) */
	remember(l, obj, r, now);
	rc = 1;
out:
	free(body);
	kube_response_free(&resp);
	return rc;
}

/* client-go's tryAcquireOrRenew: 1 when this process holds the Lease now. */
static int try_acquire_or_renew(struct leader *l, int64_t now, bool *reached)
{
	struct kube_response resp;
	struct errbuf err;
	struct record r, old;
	cJSON *obj;
	char ts[80];

	*reached = false;
	micro_time(l, ts, sizeof(ts));
	memset(&r, 0, sizeof(r));
	snprintf(r.holder, sizeof(r.holder), "%s", l->id);
	r.duration_s = l->o.lease_duration_ns / CLOCK_NS_PER_S;
	snprintf(r.acquire, sizeof(r.acquire), "%s", ts);
	snprintf(r.renew, sizeof(r.renew), "%s", ts);

	/* the fast path: our record is current, update it on its resourceVersion */
	if (l->obj && strcmp(l->seen.holder, l->id) == 0 && valid_at(l, now)) {
		snprintf(r.acquire, sizeof(r.acquire), "%s", l->seen.acquire);
		r.transitions = l->seen.transitions;
		if (write_record(l, false, &r, now, LOG_DEBUG)) {
			*reached = true;
			return 1;
		}
	}
	if (kube_request(l->o.client, "GET", l->path, NULL, NULL, 0, &resp, &err) < 0) {
		LOG_L(l, LOG_WARN, "leader election: reading the Lease %s/%s: %s", l->ns, l->name, err.msg);
		kube_response_free(&resp);
		return 0;
	}
	*reached = true;
	if (resp.status == 404) {
		kube_response_free(&resp);
		cJSON_Delete(l->obj);
		l->obj = NULL;
		return write_record(l, true, &r, now, LOG_WARN);
	}
	if (resp.status != 200) {
		LOG_L(l, LOG_WARN, "leader election: reading the Lease %s/%s: HTTP %ld %s: %s", l->ns,
		      l->name, resp.status, resp.reason, resp.message);
		kube_response_free(&resp);
		return 0;
	}
	obj = cJSON_Parse(resp.body ? resp.body : "");
	kube_response_free(&resp);
	if (!obj || decode(obj, &old, &err) < 0) {
		LOG_L(l, LOG_WARN, "leader election: the Lease %s/%s: %s", l->ns, l->name,
		      obj ? err.msg : "not JSON");
		cJSON_Delete(obj);
		return 0;
	}
	remember(l, obj, &old, now);
	if (old.holder[0] && strcmp(old.holder, l->id) != 0 && valid_at(l, now))
		return 0; /* held by another, and not expired by our clock */
	if (strcmp(old.holder, l->id) == 0) {
		snprintf(r.acquire, sizeof(r.acquire), "%s", old.acquire);
		r.transitions = old.transitions;
	} else {
		r.transitions = old.transitions + 1;
	}
	return write_record(l, false, &r, now, LOG_WARN);
}

/* Closes the write fence, if the elector has one. Without the lock. */
static void fence_close_if(struct leader *l)
{
	if (l->o.fence)
		fence_close(l->o.fence);
}

/* Leading ends: state, log, callback. Called without the lock. */
static void step_down(struct leader *l, const char *why)
{
	LOG_L(l, LOG_WARN, "leader election: stopped leading on %s/%s: %s; back to standby",
	      l->ns, l->name, why);
	if (l->o.on_change)
		l->o.on_change(l->o.ctx, false);
}

int leader_step(struct leader *l)
{
	int64_t now = clock_now(l->o.clock), after;
	bool reached, was, lapsed, got, lost = false, won = false, stuck = false;
	char why[LEADER_IDENTITY_MAX + 64] = "";
	int ok;

	pthread_mutex_lock(&l->mu);
	was = l->leading;
	lapsed = was && now - l->renewed_ns >= l->o.renew_deadline_ns;
	if (lapsed) {
		l->leading = false;
		l->transitions++;
	}
	pthread_mutex_unlock(&l->mu);
	if (lapsed) {
		fence_close_if(l);
		step_down(l, "the Lease was not renewed within the renew deadline");
	}
	if (l->o.may_renew && !l->o.may_renew(l->o.ctx)) {
		/* a wedged process must not keep the Lease (and keep others
		 * from acting): no renewal, no acquisition */
		ok = 0;
		reached = false;
		stuck = true;
	} else {
		ok = try_acquire_or_renew(l, now, &reached);
	}
	after = clock_now(l->o.clock);
	pthread_mutex_lock(&l->mu);
	l->observed = l->observed || reached;
	snprintf(l->holder, sizeof(l->holder), "%s", l->have_seen ? l->seen.holder : "");
	l->expires_ns = 0;
	if (l->have_seen && l->seen.holder[0] && strcmp(l->seen.holder, l->id) != 0)
		l->expires_ns = l->observed_ns + l->seen.duration_s * CLOCK_NS_PER_S;
	got = ok == 1;
	if (got) {
		l->renewed_ns = now;
		/* writes may go out until the renew deadline, counted from
		 * before this renewal was sent */
		if (l->o.fence)
			fence_open_until(l->o.fence, now + l->o.renew_deadline_ns);
		if (!l->leading) {
			l->leading = true;
			l->transitions++;
			won = true;
		}
	} else if (l->leading) {
		if (stuck) {
			snprintf(why, sizeof(why), "the process is not healthy (no reconcile within the "
				 "health limit): the Lease is not renewed");
			lost = true;
		} else if (l->have_seen && l->seen.holder[0] && strcmp(l->seen.holder, l->id) != 0) {
			snprintf(why, sizeof(why), "the Lease is held by %s", l->seen.holder);
			lost = true;
		} else if (after - l->renewed_ns >= l->o.renew_deadline_ns) {
			snprintf(why, sizeof(why), "the Lease was not renewed within the renew deadline");
			lost = true;
		}
		if (lost) {
			l->leading = false;
			l->transitions++;
		}
	}
	pthread_mutex_unlock(&l->mu);
	if (won) {
		LOG_L(l, LOG_INFO, "leader election: leading on %s/%s as %s (transitions %lld)", l->ns,
		      l->name, l->id, (long long)l->seen.transitions);
		if (l->o.on_change)
			l->o.on_change(l->o.ctx, true);
	} else if (lost) {
		fence_close_if(l);
		step_down(l, why);
	} else if (!was && !lapsed && !got && reached && l->have_seen && l->seen.holder[0] &&
		   strcmp(l->seen.holder, l->id) != 0) {
		LOG_L(l, LOG_DEBUG, "leader election: %s leads on %s/%s", l->seen.holder, l->ns, l->name);
	}
	return got;
}

bool leader_is_leading(struct leader *l)
{
	bool yes;

	if (!l)
		return true;
	pthread_mutex_lock(&l->mu);
	yes = l->leading && clock_now(l->o.clock) - l->renewed_ns < l->o.renew_deadline_ns;
	pthread_mutex_unlock(&l->mu);
	return yes;
}

bool leader_observed(struct leader *l)
{
	bool yes;

	pthread_mutex_lock(&l->mu);
	yes = l->observed;
	pthread_mutex_unlock(&l->mu);
	return yes;
}

void leader_holder(struct leader *l, char *out, size_t outlen)
{
	pthread_mutex_lock(&l->mu);
	snprintf(out, outlen, "%s", l->holder);
	pthread_mutex_unlock(&l->mu);
}

uint64_t leader_transitions(struct leader *l)
{
	uint64_t n;

	pthread_mutex_lock(&l->mu);
	n = l->transitions;
	pthread_mutex_unlock(&l->mu);
	return n;
}

static void *elector_thread(void *arg)
{
	struct leader *l = arg;

	pthread_mutex_lock(&l->mu);
	while (!l->stopping) {
		int64_t now, next;
		struct timespec ts;

		pthread_mutex_unlock(&l->mu);
		leader_step(l);
		pthread_mutex_lock(&l->mu);
		now = clock_now(l->o.clock);
		next = now + l->o.retry_period_ns;
		/* a standby tries again the moment the holder's record expires */
		if (l->expires_ns > now && l->expires_ns < next)
			next = l->expires_ns;
		ts.tv_sec = (time_t)(next / CLOCK_NS_PER_S);
		ts.tv_nsec = (long)(next % CLOCK_NS_PER_S);
		while (!l->stopping && clock_now(l->o.clock) < next)
			if (pthread_cond_timedwait(&l->cv, &l->mu, &ts) == ETIMEDOUT)
				break;
	}
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

int leader_start(struct leader *l, struct errbuf *err)
{
	if (l->started)
		return errbuf_set(err, "leader election: already started");
	if (pthread_create(&l->thread, NULL, elector_thread, l) != 0)
		return errbuf_set(err, "leader election: cannot create its thread");
	l->started = true;
	return 0;
}

void leader_stop(struct leader *l)
{
	if (!l->started)
		return;
	pthread_mutex_lock(&l->mu);
	l->stopping = true;
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mu);
	pthread_join(l->thread, NULL);
	l->started = false;
}

int leader_release(struct leader *l, struct errbuf *err)
{
	struct record r;
	char ts[80];
	bool was;

	pthread_mutex_lock(&l->mu);
	was = l->leading;
	l->leading = false;
	if (was)
		l->transitions++;
	pthread_mutex_unlock(&l->mu);
	fence_close_if(l);
	if (!l->obj || strcmp(l->seen.holder, l->id) != 0)
		return 0;
	micro_time(l, ts, sizeof(ts));
	memset(&r, 0, sizeof(r));
	r.duration_s = 1;
	snprintf(r.acquire, sizeof(r.acquire), "%s", ts);
	snprintf(r.renew, sizeof(r.renew), "%s", ts);
	r.transitions = l->seen.transitions;
	if (!write_record(l, false, &r, clock_now(l->o.clock), LOG_WARN))
		return errbuf_set(err, "leader election: the Lease %s/%s could not be released (it "
				  "expires by itself)", l->ns, l->name);
	LOG_L(l, LOG_INFO, "leader election: released the Lease %s/%s", l->ns, l->name);
	return 0;
}

int leader_default_identity(char *out, size_t outlen, const char *(*getenv_fn)(const char *),
			    struct errbuf *err)
{
	const char *pod = getenv_fn ? getenv_fn("POD_NAME") : getenv("POD_NAME");
	char host[256] = "";
	unsigned char rnd[8];
	int fd;
	ssize_t n = -1;

	if (pod && *pod) {
		if (strlen(pod) > 253 || !k8sname_valid_dns_subdomain(pod))
			return errbuf_set(err, "POD_NAME \"%.64s\" is not a pod name (a DNS subdomain)", pod);
		snprintf(host, sizeof(host), "%s", pod);
	} else if (gethostname(host, sizeof(host) - 1) < 0 || !host[0]) {
		return errbuf_set(err, "leader election: no POD_NAME and no host name for the identity");
	}
	fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, rnd, sizeof(rnd));
		close(fd);
	}
	if (n != (ssize_t)sizeof(rnd))
		return errbuf_set(err, "leader election: cannot read /dev/urandom for the identity");
	if ((size_t)snprintf(out, outlen, "%s_%02x%02x%02x%02x%02x%02x%02x%02x", host, rnd[0], rnd[1],
			     rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]) >= outlen)
		return errbuf_set(err, "leader election: the identity is too long");
	return 0;
}
