/*
 * providers/gce: managed instance groups over the compute v1 JSON API —
 * listing (MIG get + listManagedInstances), launching (createInstances with
 * chosen names, resize with a requestId as the fallback), the stockouts and
 * quota errors that show only on each managed instance's lastAttempt,
 * deleting, templates from instance templates and machine types, drift
 * (an instance's template vs what its MIG launches now), and providerID
 * mapping. Auth is gceauth's; HTTP, the JSON request, the groups' table,
 * last good views and instance index, and the node arithmetic are cloudhttp/'s.
 */
#include "providers/gce/gce.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "kube/client.h"
#include "providers/cloudhttp/cloudcall.h"
#include "providers/cloudhttp/cloudhttp.h"
#include "providers/cloudhttp/cloudjson.h"
#include "providers/cloudhttp/groupcache.h"
#include "providers/cloudhttp/memo.h"
#include "providers/cloudhttp/nodesize.h"
#include "providers/gce/gce_kube_env.h"
#include "providers/gce/gce_pricing.h"
#include "providers/registry.h"

#define TOKEN_WAIT_NS (60 * CLOCK_NS_PER_S)
#define MAX_PAGES 10000
#define PAGE_SIZE 500
#define NAME_SUFFIX 4
#define MIB (1024ll * 1024)

struct gce_group {
	char name[64];          /* the engine's */
	char mig[64];
	char scope[80];         /* "zones/us-central1-a" or "regions/us-central1" */
	bool regional;
	bool wants_template;
	int min, max;
};

struct gce_mt {
	int cpus;
	int64_t memory_mb;
};

struct gce_tpl {
	char machine_type[64];
	int gpus;
	bool spot;              /* scheduling: provisioningModel SPOT, or preemptible */
	struct gce_kube_env kenv; /* GKE's labels, taints, reserve (empty: none) */
};

struct gce_pfact {
	char region[64];
	bool spot;
};

struct gce_prov {
	struct cloudhttp *http;
	struct gce_auth *auth;
	struct clock *clock;
	const struct logger *log;
	const atomic_bool *cancel;
	const struct config *config;
	char project[128];
	char base[512];         /* ".../compute/v1/" */
	int64_t launch_wait_ns, poll_ns;
	pthread_mutex_t mu;     /* rng, polls */
	size_t n_config_groups; /* the config's groups: the first of the cache's table */
	struct memo *mts;       /* machine types' sizes (struct gce_mt) by zone/machineType */
	struct memo *tpls;      /* instance templates read (struct gce_tpl) by URL: immutable in GCE */
	uint64_t rng;
	struct cloudcall_counts calls;
	struct provider_turns *turns; /* one size write of a group at a time; instance claims */
	struct gce_poll *polls; /* the groups launches are following now (under mu) */
	struct groupcache *cache; /* the groups; last good views; the instances last listed, their group and creationTimestamp */
	pthread_cond_t poll_cv; /* a shared list came back */
	struct gce_pricing *pricing; /* the cloud's prices (gce_pricing.c); NULL when off */
	struct memo *pfacts;    /* what pricing needs of each group listed (struct gce_pfact) */
};

/* The managed instances of one group, listed once per poll interval for
 * every launch of the group that follows its instances. */
struct gce_poll {
	struct gce_poll *next;
	char group[64];
	int users;              /* launches following the group */
	bool busy;              /* one of them is listing now */
	uint64_t gen;           /* lists made so far: the answer's number */
	cJSON *items;           /* the last answer, NULL before the first */
	int64_t at_ns;          /* when that list was asked for */
};

#define GP(p) ((struct gce_prov *)(p)->impl)

/* Counts a call by the resource of its path (gce_provider_calls). */
static void count(struct gce_prov *gp, const char *path)
{
	const char *q = strchr(path, '?'), *slash;
	char what[CLOUDCALL_KIND_MAX];
	size_t n = q ? (size_t)(q - path) : strlen(path);

	for (slash = path + n; slash > path && slash[-1] != '/'; slash--)
		;
	snprintf(what, sizeof(what), "%.*s", (int)(path + n - slash), slash);
	/* "zones/z/instanceGroupManagers/NAME": count the resource, not the name */
	if (slash - path > 22 && !strncmp(slash - 22, "instanceGroupManagers/", 22))
		snprintf(what, sizeof(what), "instanceGroupManagers");
	cloudcall_counts_add(&gp->calls, what);
}

uint64_t gce_provider_calls(const struct provider *p, const char *what)
{
	return cloudcall_counts_get(&GP(p)->calls, what);
}

/* ---- one call ---- */

struct call {
	struct cloudcall_bearer b;
	char what[192];
};

static int prepare(void *ctx, const struct cloudhttp_request *req, struct cloudhttp_headers *extra,
		   struct errbuf *err)
{
	(void)req;
	return cloudcall_bearer_prepare(&((struct call *)ctx)->b, TOKEN_WAIT_NS, extra, err);
}

/* The first error reason of a Google error answer ("" when none), its
 * message and its status (PERMISSION_DENIED; 'status' may be NULL). */
static void error_of(const char *body, size_t len, char *reason, size_t rlen, char *msg, size_t mlen,
		     char *status, size_t slen)
{
	cJSON *doc = cJSON_ParseWithLength(body ? body : "", len);
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(doc, "error"), *errs, *r, *m;

	reason[0] = msg[0] = '\0';
	if (status) {
		const cJSON *s = cJSON_GetObjectItemCaseSensitive(e, "status");

		snprintf(status, slen, "%s", cJSON_IsString(s) ? s->valuestring : "");
	}
	errs = cJSON_GetObjectItemCaseSensitive(e, "errors");
	r = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(errs, 0), "reason");
	m = cJSON_GetObjectItemCaseSensitive(e, "message");
	if (cJSON_IsString(r))
		snprintf(reason, rlen, "%s", r->valuestring);
	if (cJSON_IsString(m))
		snprintf(msg, mlen, "%s", m->valuestring);
	cJSON_Delete(doc);
}

static bool throttle_reason(const char *r)
{
	return !strcmp(r, "rateLimitExceeded") || !strcmp(r, "userRateLimitExceeded") ||
	       !strcmp(r, "RATE_LIMIT_EXCEEDED");
}

static enum cloudhttp_verdict classify(void *ctx, const struct cloudhttp_response *r)
{
	char reason[64] = "", msg[8];

	if (r->status < 200 || r->status >= 300)
		error_of(r->body, r->body_len, reason, sizeof(reason), msg, sizeof(msg), NULL, 0);
	return cloudcall_bearer_verdict(&((struct call *)ctx)->b, r,
					r->status == 429 || (r->status == 403 && throttle_reason(reason)), reason);
}

static enum provider_error class_of(long status, const char *reason)
{
	if (status == 429 || throttle_reason(reason))
		return PROVIDER_THROTTLED;
	if (strstr(reason, "uota") || strstr(reason, "QUOTA"))
		return PROVIDER_QUOTA;
	if (status == 401 || status == 403)
		return PROVIDER_AUTH;
	if (status == 404)
		return PROVIDER_NOT_FOUND;
	if (status >= 500 || status == 0)
		return PROVIDER_TRANSIENT;
	return PROVIDER_INVALID;
}

/* 'method' 'path' (relative to the compute base, or an absolute URL) with
 * 'body' (NULL: none). 0 with the answer in *out (cJSON_Delete it), or -1;
 * the HTTP status (0: no answer) and the first error reason go to 'http'
 * and 'why' when not NULL. */
static int call_ex(struct provider *p, bool mutating, const char *method, const char *path,
		   const cJSON *body, cJSON **out, struct provider_status *st, long *http, char *why,
		   size_t why_len)
{
	struct gce_prov *gp = GP(p);
	struct cloudhttp_response resp;
	struct cloudjson_request req;
	struct call c;
	char url[2048], reason[64], msg[PROVIDER_MESSAGE_MAX], gstatus[64];
	int rc = -1;

	*out = NULL;
	if (http)
		*http = 0;
	if (why && why_len)
		why[0] = '\0';
	memset(st, 0, sizeof(*st));
	memset(&resp, 0, sizeof(resp));
	memset(&c, 0, sizeof(c));
	c.b = (struct cloudcall_bearer){ .cloud = "gce", .what = c.what, .bucket = mutating ? p->mutating : p->reads,
					 .auth = gce_auth_bearer(gp->auth), .clock = gp->clock, .log = gp->log, .st = st };
	snprintf(c.what, sizeof(c.what), "%s %.*s", method, (int)strcspn(path, "?"), path);
	count(gp, path);
	if (gp->cancel && atomic_load(gp->cancel)) {
		cloudcall_status(st, PROVIDER_CANCELLED, "%s not sent: luascale is stopping", c.what);
		return -1;
	}
	if (!strncmp(path, "http://", 7) || !strncmp(path, "https://", 8)) {
		/* links in answers (selfLink, instanceTemplate) name Google's
		 * own root: keep the configured endpoint (a private one, the
		 * simulator) for everything under compute/v1 */
		const char *v1 = strstr(path, "/compute/v1/");

		if (v1)
			snprintf(url, sizeof(url), "%s%s", gp->base, v1 + 12);
		else
			snprintf(url, sizeof(url), "%s", path);
	} else {
		snprintf(url, sizeof(url), "%s%s", gp->base, path);
	}
	memset(&req, 0, sizeof(req));
	req.what = c.what;
	req.method = method;
	req.url = url;
	req.body = body;
	req.prepare = prepare;
	req.classify = classify;
	req.ctx = &c;
	if (cloudjson_send(gp->http, &req, &resp, st) < 0)
		goto out;
	if (resp.status >= 200 && resp.status < 300) {
		*out = cJSON_ParseWithLength(resp.body ? resp.body : "", resp.body_len);
		if (!*out) {
			cloudcall_status(st, PROVIDER_TRANSIENT, "%s: HTTP %ld with malformed JSON", c.what, resp.status);
			goto out;
		}
		rc = 0;
		goto out;
	}
	error_of(resp.body, resp.body_len, reason, sizeof(reason), msg, sizeof(msg), gstatus, sizeof(gstatus));
	/* the code first (PERMISSION_DENIED, else the reason), then the message */
	provider_status_cloud(st, resp.throttled ? PROVIDER_THROTTLED : class_of(resp.status, reason),
			      gstatus[0] ? gstatus : reason, msg[0] ? msg : "no message", "%s: HTTP %ld%s%s",
			      c.what, resp.status, reason[0] ? " " : "", reason);
	if (resp.retry_after_ms > 0)
		st->retry_after_s = (resp.retry_after_ms + 999) / 1000;
	if (why)
		snprintf(why, why_len, "%s", reason);
out:
	if (http)
		*http = resp.status;
	cloudhttp_response_free(&resp);
	return rc;
}

static int call(struct provider *p, bool mutating, const char *method, const char *path, const cJSON *body,
		cJSON **out, struct provider_status *st)
{
	return call_ex(p, mutating, method, path, body, out, st, NULL, NULL, 0);
}

/* The last segment of a URL ("…/zones/us-central1-a" -> "us-central1-a"). */
static const char *last_seg(const char *url)
{
	const char *s = strrchr(url, '/');

	return s ? s + 1 : url;
}

/* The zone of an instance URL ("…/zones/Z/instances/N"), into out. */
static int url_zone(const char *url, char *out, size_t len)
{
	const char *z = strstr(url, "/zones/"), *e;

	if (!z)
		return -1;
	z += 7;
	e = strchr(z, '/');
	if (!e || e == z || (size_t)(e - z) >= len)
		return -1;
	snprintf(out, len, "%.*s", (int)(e - z), z);
	return 0;
}

static bool ok_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 63 || !islower((unsigned char)s[0]) || s[n - 1] == '-')
		return false;
	for (; *s; s++)
		if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '-')
			return false;
	return true;
}

/* ---- waiting ---- */

/* Follows an operation with POST .../wait until DONE or the deadline.
 * 0 when it finished without error, -1 with 'st' otherwise. */
static int wait_operation(struct provider *p, cJSON *op, int64_t deadline_ns, struct provider_status *st)
{
	struct gce_prov *gp = GP(p);
	char path[1024];
	cJSON *cur = op, *next = NULL;
	int rc = -1;

	for (;;) {
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(cur, "error");
		const char *s = cloudjson_str(cur, "status"), *self = cloudjson_str(cur, "selfLink");

		if (!strcmp(s, "DONE")) {
			const cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(e, "errors"), 0);

			if (first) {
				const char *code = cloudjson_str(first, "code");

				cloudcall_status(st, strstr(code, "QUOTA") ? PROVIDER_QUOTA :
						     strstr(code, "RESOURCE_POOL_EXHAUSTED") ? PROVIDER_NO_CAPACITY : PROVIDER_INVALID,
						 "operation %s: %s: %s", cloudjson_str(cur, "name"), code, cloudjson_str(first, "message"));
				break;
			}
			rc = 0;
			break;
		}
		if (clock_now(gp->clock) >= deadline_ns) {
			cloudcall_status(st, PROVIDER_TRANSIENT, "operation %s still %s at the deadline",
					 cloudjson_str(cur, "name"),
					 s[0] ? s : "unknown");
			break;
		}
		if (!self[0]) {
			cloudcall_status(st, PROVIDER_TRANSIENT, "an operation without a selfLink");
			break;
		}
		snprintf(path, sizeof(path), "%s/wait", self);
		if (next)
			cJSON_Delete(next);
		next = NULL;
		if (call(p, false, "POST", path, NULL, &next, st) < 0)
			break;
		cur = next;
	}
	if (next)
		cJSON_Delete(next);
	return rc;
}

/* ---- groups ---- */

static enum instance_state mi_state(const cJSON *mi)
{
	const char *a = cloudjson_str(mi, "currentAction"), *s = cloudjson_str(mi, "instanceStatus");

	if (!strcmp(a, "DELETING") || !strcmp(a, "ABANDONING") || !strcmp(s, "STOPPING") ||
	    !strcmp(s, "TERMINATED") || !strcmp(s, "SUSPENDED"))
		return INSTANCE_STOPPING;
	if (!strcmp(a, "NONE") && !strcmp(s, "RUNNING"))
		return INSTANCE_RUNNING;
	return INSTANCE_PENDING; /* CREATING, RECREATING, VERIFYING, REFRESHING ... */
}

/* The class of a managed instance's lastAttempt error (OK when none). */
static enum provider_error attempt_error(const cJSON *mi, char *msg, size_t len)
{
	const cJSON *errs = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(mi, "lastAttempt"), "errors"),
		"errors");
	const cJSON *e = cJSON_GetArrayItem(errs, 0);
	const char *code;

	if (!e)
		return PROVIDER_OK;
	code = cloudjson_str(e, "code");
	snprintf(msg, len, "%s: %s", code, cloudjson_str(e, "message"));
	if (strstr(code, "QUOTA"))
		return PROVIDER_QUOTA;
	if (strstr(code, "RESOURCE_POOL_EXHAUSTED") || strstr(code, "INSUFFICIENT_CAPACITY") ||
	    strstr(code, "STOCKOUT"))
		return PROVIDER_NO_CAPACITY;
	return PROVIDER_INVALID;
}

/* Every managed instance of a MIG (listManagedInstances, all pages). */
static int managed_instances(struct provider *p, const struct gce_group *g, cJSON **items,
			     struct provider_status *st)
{
	struct gce_prov *gp = GP(p);
	char path[1024], token[2048] = "";
	cJSON *all = cJSON_CreateArray();
	int pages = 0;

	*items = NULL;
	if (!all) {
		cloudcall_status(st, PROVIDER_TRANSIENT, "out of memory");
		return -1;
	}
	do {
		cJSON *doc, *list, *it;
		struct buf q = BUF_INIT;

		if (token[0] && (buf_puts(&q, "&pageToken=") < 0 || cloudhttp_escape(&q, token) < 0)) {
			buf_free(&q);
			cJSON_Delete(all);
			cloudcall_status(st, PROVIDER_TRANSIENT, "out of memory");
			return -1;
		}
		snprintf(path, sizeof(path), "projects/%s/%s/instanceGroupManagers/%s/listManagedInstances?maxResults=%d%s",
			 gp->project, g->scope, g->mig, PAGE_SIZE, q.data ? q.data : "");
		buf_free(&q);
		if (call(p, false, "POST", path, NULL, &doc, st) < 0) {
			cJSON_Delete(all);
			return -1;
		}
		list = cJSON_DetachItemFromObjectCaseSensitive(doc, "managedInstances");
		while (list && (it = cJSON_DetachItemFromArray(list, 0)))
			cJSON_AddItemToArray(all, it);
		cJSON_Delete(list);
		snprintf(token, sizeof(token), "%s", cloudjson_str(doc, "nextPageToken"));
		cJSON_Delete(doc);
		if (++pages > MAX_PAGES) {
			cJSON_Delete(all);
			cloudcall_status(st, PROVIDER_TRANSIENT, "listManagedInstances: the nextPageToken does not end");
			return -1;
		}
	} while (token[0]);
	*items = all;
	return 0;
}

/* ---- one list per group per interval for the launches following it ---- */

/* The group's shared poll, joined (users + 1); NULL when out of memory. */
static struct gce_poll *poll_join(struct gce_prov *gp, const char *group)
{
	struct gce_poll *e;

	pthread_mutex_lock(&gp->mu);
	for (e = gp->polls; e && strcmp(e->group, group); e = e->next)
		;
	if (!e && (e = calloc(1, sizeof(*e)))) {
		snprintf(e->group, sizeof(e->group), "%s", group);
		e->next = gp->polls;
		gp->polls = e;
	}
	if (e)
		e->users++;
	pthread_mutex_unlock(&gp->mu);
	return e;
}

/* Leaves the group's shared poll; the last launch to leave frees it. */
static void poll_leave(struct gce_prov *gp, struct gce_poll *e)
{
	struct gce_poll **pp;

	if (!e)
		return;
	pthread_mutex_lock(&gp->mu);
	if (--e->users == 0) {
		for (pp = &gp->polls; *pp != e; pp = &(*pp)->next)
			;
		*pp = e->next;
		cJSON_Delete(e->items);
		free(e);
	}
	pthread_mutex_unlock(&gp->mu);
}

/*
 * The managed instances of 'g' for a launch following them ('e' joined):
 * a list newer than the one numbered '*gen' the caller saw last (0: none)
 * and asked for less than a poll interval ago, the same list for every
 * launch of the group. The first launch to find none lists the MIG; the
 * others wait for its answer. Fills *items (the caller's copy), *gen and
 * *at_ns (when the list was asked for: the next is due a poll interval
 * later). 0, or -1 with 'st' when this caller's own list failed.
 */
static int poll_shared(struct provider *p, struct gce_poll *e, const struct gce_group *g, cJSON **items,
		       uint64_t *gen, int64_t *at_ns, struct provider_status *st)
{
	struct gce_prov *gp = GP(p);
	cJSON *got = NULL;
	int64_t start;
	int rc;

	*items = NULL;
	pthread_mutex_lock(&gp->mu);
	for (;;) {
		if (e->items && e->gen > *gen && clock_now(gp->clock) - e->at_ns < gp->poll_ns) {
			*items = cJSON_Duplicate(e->items, 1);
			*gen = e->gen;
			*at_ns = e->at_ns;
			pthread_mutex_unlock(&gp->mu);
			if (!*items) {
				cloudcall_status(st, PROVIDER_TRANSIENT, "out of memory");
				return -1;
			}
			return 0;
		}
		if (!e->busy)
			break;
		pthread_cond_wait(&gp->poll_cv, &gp->mu); /* its answer is newer than any seen */
	}
	e->busy = true;
	start = clock_now(gp->clock);
	pthread_mutex_unlock(&gp->mu);
	rc = managed_instances(p, g, &got, st);
	pthread_mutex_lock(&gp->mu);
	e->busy = false;
	if (rc == 0) {
		cJSON_Delete(e->items);
		e->items = got;
		e->at_ns = start;
		*gen = ++e->gen;
		*at_ns = start;
		*items = cJSON_Duplicate(got, 1);
	}
	pthread_cond_broadcast(&gp->poll_cv);
	pthread_mutex_unlock(&gp->mu);
	if (rc == 0 && !*items) {
		cloudcall_status(st, PROVIDER_TRANSIENT, "out of memory");
		return -1;
	}
	return rc;
}

static void provider_id(const struct gce_prov *gp, const char *zone, const char *name, char *out, size_t len)
{
	snprintf(out, len, "gce://%s/%s/%s", gp->project, zone, name);
}

/* memo's copy and release of a struct gce_tpl (its kube-env's template). */
static int tpl_copy(void *dst, const void *src)
{
	struct gce_tpl *d = dst;

	*d = *(const struct gce_tpl *)src;
	if (provider_template_copy(&d->kenv.t, &((const struct gce_tpl *)src)->kenv.t) == 0)
		return 0;
	gce_kube_env_clear(&d->kenv);
	return -1;
}

static void tpl_release(void *v)
{
	gce_kube_env_clear(&((struct gce_tpl *)v)->kenv);
}

static bool has_label(const struct provider_template *t, const char *key)
{
	size_t i;

	for (i = 0; i < t->n_labels; i++)
		if (!strcmp(t->labels[i].key, key))
			return true;
	return false;
}

/* GKE's kube-env of instance template 'url' ('props' its properties) into
 * 'out' (empty when it has none, or when it is malformed: then a warning
 * names the template and the bad part, and the template is described
 * without it). */
static void read_kube_env(struct gce_prov *gp, const struct gce_group *g, const char *url, const cJSON *props,
			  struct gce_kube_env *out)
{
	const char *text = NULL;
	struct errbuf e;

	if (gce_kube_env_of(props, &text, &e) < 0 ||
	    (text && gce_kube_env_parse(text, strlen(text), out, &e) < 0)) {
		log_at(gp->log, LOG_WARN, clock_wall(gp->clock),
		       "gce: group %s: instance template %s: kube-env: %s; its labels, taints and reserve are not used",
		       g->name, last_seg(url), e.msg);
		gce_kube_env_clear(out);
	}
}

/* The new-node template of a MIG: its instance template's machine type and
 * accelerators, the machine type's CPUs and memory. Best effort. Only the
 * machine type (for its price) when not 'fill'; *spot says whether the
 * instance template makes spot (or preemptible) VMs. */
static void describe_template(struct provider *p, const struct gce_group *g, const cJSON *mig,
			      struct provider_template *t, bool fill, bool *spot)
{
	struct gce_prov *gp = GP(p);
	struct provider_status st;
	const char *tmpl = cloudjson_str(mig, "instanceTemplate"), *mt;
	const cJSON *a, *props, *sch;
	cJSON *it = NULL, *m = NULL;
	char zone[64], path[1024], key[192];
	struct gce_tpl tp;
	struct gce_mt size = { 0, 0 };

	*spot = false;
	memset(&tp, 0, sizeof(tp));
	if (!tmpl[0])
		return;
	/* an instance template never changes (a MIG moves to a new one):
	 * each is read once */
	if (!memo_get(gp->tpls, tmpl, &tp)) {
		if (call(p, false, "GET", tmpl, NULL, &it, &st) < 0) {
			log_at(gp->log, LOG_WARN, clock_wall(gp->clock), "gce: group %s: cannot read its instance template: %s",
			       g->name, st.message);
			return;
		}
		props = cJSON_GetObjectItemCaseSensitive(it, "properties");
		snprintf(tp.machine_type, sizeof(tp.machine_type), "%s", last_seg(cloudjson_str(props, "machineType")));
		cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(props, "guestAccelerators")) {
			const cJSON *n = cJSON_GetObjectItemCaseSensitive(a, "acceleratorCount");

			if (cJSON_IsNumber(n) && n->valuedouble > 0 && n->valuedouble < 64)
				tp.gpus += (int)n->valuedouble;
		}
		sch = cJSON_GetObjectItemCaseSensitive(props, "scheduling");
		tp.spot = !strcmp(cloudjson_str(sch, "provisioningModel"), "SPOT") ||
			  cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(sch, "preemptible"));
		read_kube_env(gp, g, tmpl, props, &tp.kenv);
		if (tp.machine_type[0])
			memo_put(gp->tpls, tmpl, &tp);
	}
	*spot = tp.spot;
	mt = tp.machine_type;
	/* a regional MIG's machine type is the same in each of its zones: use the first */
	if (g->regional) {
		const cJSON *zs = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(mig, "distributionPolicy"), "zones");

		snprintf(zone, sizeof(zone), "%s", last_seg(cloudjson_str(cJSON_GetArrayItem(zs, 0), "zone")));
	} else {
		snprintf(zone, sizeof(zone), "%s", g->scope + 6);
	}
	snprintf(key, sizeof(key), "%s/%s", zone, mt);
	if (!memo_get(gp->mts, key, &size) && mt[0] && zone[0]) {
		snprintf(path, sizeof(path), "projects/%s/zones/%s/machineTypes/%s", gp->project, zone, mt);
		if (call(p, false, "GET", path, NULL, &m, &st) == 0) {
			const cJSON *c = cJSON_GetObjectItemCaseSensitive(m, "guestCpus");
			const cJSON *mm = cJSON_GetObjectItemCaseSensitive(m, "memoryMb");

			if (cJSON_IsNumber(c) && cJSON_IsNumber(mm) && c->valuedouble >= 1 &&
			    c->valuedouble < 100000 && mm->valuedouble >= 1 && mm->valuedouble < 1e9) {
				size.cpus = (int)c->valuedouble;
				size.memory_mb = (int64_t)mm->valuedouble;
				memo_put(gp->mts, key, &size);
			}
			cJSON_Delete(m);
		} else {
			log_at(gp->log, LOG_WARN, clock_wall(gp->clock), "gce: group %s: cannot read machine type %s: %s",
			       g->name, mt, st.message);
		}
	}
	if (size.cpus)
		gce_pricing_machine_type(gp->pricing, mt, size.cpus, size.memory_mb, tp.gpus > 0);
	if (size.cpus && !fill) {
		snprintf(t->instance_type, sizeof(t->instance_type), "%s", mt);
	} else if (size.cpus) {
		/* GKE's reserve: its tiers and 100Mi for eviction */
		int64_t mem = size.memory_mb * MIB, reserved = nodesize_reserved_memory(mem) + 100 * MIB;
		int64_t cpu_reserved = provider_reserved_cpu_m(size.cpus);

		if (tp.kenv.reserved) {
			/* GKE's own numbers: kube_reserved, and the eviction threshold */
			cpu_reserved = tp.kenv.reserved_cpu_m;
			reserved = tp.kenv.reserved_memory + (tp.kenv.eviction ? tp.kenv.eviction_memory : 100 * MIB);
		}
		nodesize_template(t, mt, size.cpus, mem, cpu_reserved, reserved, tp.gpus);
		provider_template_label(t, "node.kubernetes.io/instance-type", mt);
	}
	if (fill) {
		size_t k;

		/* GKE's labels and taints; the well-known labels below win */
		for (k = 0; k < tp.kenv.t.n_labels; k++)
			if (!has_label(t, tp.kenv.t.labels[k].key))
				provider_template_label(t, tp.kenv.t.labels[k].key, tp.kenv.t.labels[k].value);
		for (k = 0; k < tp.kenv.t.n_taints; k++)
			provider_template_taint(t, tp.kenv.t.taints[k].key, tp.kenv.t.taints[k].value, tp.kenv.t.taints[k].effect);
		provider_template_label(t, "kubernetes.io/os", "linux");
		if (!g->regional)
			provider_template_label(t, "topology.kubernetes.io/zone", g->scope + 6);
	}
	gce_kube_env_clear(&tp.kenv);
	cJSON_Delete(it);
}

#define CREATED_GETS_PER_LIST 100

/* The creationTimestamp of instance 'name' in 'zone' as the last list knew
 * it, else from instances.get while '*budget' lasts; 0 when unknown. */
static int64_t created_wall(struct provider *p, const char *zone, const char *name, int *budget)
{
	struct gce_prov *gp = GP(p);
	struct provider_status st;
	char path[512];
	cJSON *doc = NULL;
	int64_t t = 0;

	if (groupcache_instance(gp->cache, name, NULL, 0, NULL, 0, &t) < 0)
		t = 0;
	if (t || *budget <= 0)
		return t;
	(*budget)--;
	snprintf(path, sizeof(path), "projects/%s/zones/%s/instances/%s", gp->project, zone, name);
	if (call(p, false, "GET", path, NULL, &doc, &st) < 0) {
		log_at(gp->log, LOG_DEBUG, clock_wall(gp->clock), "gce: cannot read when %s was created: %s", name,
		       st.message);
		return 0;
	}
	if (kube_parse_time(cloudjson_str(doc, "creationTimestamp"), &t) < 0 || t < 0)
		t = 0;
	cJSON_Delete(doc);
	return t;
}

/* The region of a group's scope ("zones/us-central1-a" -> "us-central1"). */
static void scope_region(const struct gce_group *g, char *out, size_t len)
{
	const char *loc = strchr(g->scope, '/') ? strchr(g->scope, '/') + 1 : g->scope;
	const char *dash = strrchr(loc, '-');

	if (!g->regional && dash)
		snprintf(out, len, "%.*s", (int)(dash - loc), loc);
	else
		snprintf(out, len, "%.63s", loc);
}

/* Remembers what pricing needs of group 'g': its region, whether it is spot. */
static void keep_pfact(struct gce_prov *gp, const struct gce_group *g, bool spot)
{
	struct gce_pfact f = { .spot = spot };

	scope_region(g, f.region, sizeof(f.region));
	memo_put(gp->pfacts, g->name, &f);
}

/* Why managed instance mi of MIG 'mig' (named 'name') is no longer what
 * the MIG launches now, into out: "" when it is, or when either side is
 * unknown (no version on the instance; a MIG naming no template, or a
 * version without one). What it launches now is its instanceTemplate, or in
 * a canary rollout any template of its versions[]. Templates are compared
 * by name (the links' last segment: links name Google's host). */
static void outdated_of(const cJSON *mig, const cJSON *mi, const char *name, char *out, size_t len)
{
	const cJSON *vs = cJSON_GetObjectItemCaseSensitive(mig, "versions"), *v;
	const char *had = last_seg(cloudjson_str(cJSON_GetObjectItemCaseSensitive(mi, "version"), "instanceTemplate"));
	const char *now = last_seg(cloudjson_str(mig, "instanceTemplate"));

	out[0] = '\0';
	if (!had[0])
		return;
	if (cJSON_IsArray(vs) && cJSON_GetArraySize(vs) > 0) {
		cJSON_ArrayForEach(v, vs) {
			const char *t = last_seg(cloudjson_str(v, "instanceTemplate"));

			if (!t[0] || !strcmp(t, had))
				return;
			if (!now[0])
				now = t;
		}
	} else if (!now[0] || !strcmp(now, had)) {
		return;
	}
	snprintf(out, len, "instance template %s is not instance group %s's %s", had, name, now);
}

/* One group's MIG and instances into pg ('budget': instances.get calls
 * left): 0, GROUPCACHE_MALFORMED or -1 with 'st'. */
static int list_one(struct provider *p, const struct gce_group *g, struct provider_group *pg, int *budget,
		    struct provider_status *st)
{
	struct gce_prov *gp = GP(p);
	char path[1024];
	cJSON *mig = NULL, *items = NULL, *mi;
	int live = 0, failing = 0;
	const cJSON *ts;
	char why[256] = "";
	enum provider_error fail = PROVIDER_OK;

	snprintf(path, sizeof(path), "projects/%s/%s/instanceGroupManagers/%s", gp->project, g->scope, g->mig);
	if (call(p, false, "GET", path, NULL, &mig, st) < 0)
		return -1;
	ts = cJSON_GetObjectItemCaseSensitive(mig, "targetSize");
	if (!cJSON_IsNumber(ts) || ts->valuedouble < 0 || ts->valuedouble >= 1e6 ||
	    ts->valuedouble != (double)(int)ts->valuedouble) {
		/* never a size made up */
		cloudcall_status(st, PROVIDER_TRANSIENT, "MIG %s has no targetSize (a count from 0 to 999999)", g->mig);
		cJSON_Delete(mig);
		return GROUPCACHE_MALFORMED;
	}
	if (managed_instances(p, g, &items, st) < 0) {
		cJSON_Delete(mig);
		return -1;
	}
	snprintf(pg->name, sizeof(pg->name), "%s", g->name);
	pg->min = g->min;
	pg->max = g->max;
	pg->members_by_id = true;
	pg->target = (int)ts->valuedouble;
	pg->instances = calloc((size_t)cJSON_GetArraySize(items) + 1, sizeof(*pg->instances));
	if (!pg->instances) {
		cJSON_Delete(mig);
		cJSON_Delete(items);
		cloudcall_status(st, PROVIDER_TRANSIENT, "out of memory");
		return -1;
	}
	cJSON_ArrayForEach(mi, items) {
		struct provider_instance *o = &pg->instances[pg->n_instances];
		const char *url = cloudjson_str(mi, "instance");
		const char *name = last_seg(url);
		char zone[64], m[256];
		enum provider_error e;

		if (!ok_name(name) || url_zone(url, zone, sizeof(zone)) < 0)
			continue;
		snprintf(o->id, sizeof(o->id), "%s", name);
		snprintf(o->group, sizeof(o->group), "%s", g->name);
		provider_id(gp, zone, name, o->provider_id, sizeof(o->provider_id));
		o->state = mi_state(mi);
		outdated_of(mig, mi, g->mig, o->outdated, sizeof(o->outdated));
		/* the managed instance does not say when it was made; the instance does */
		o->launched_wall = created_wall(p, zone, name, budget);
		pg->n_instances++;
		e = attempt_error(mi, m, sizeof(m));
		if (e != PROVIDER_OK && o->state == INSTANCE_PENDING) {
			failing++;
			if (fail == PROVIDER_OK) {
				fail = e;
				snprintf(why, sizeof(why), "%s", m);
			}
		} else if (o->state != INSTANCE_STOPPING) {
			live++;
		}
	}
	if (failing) {
		/* instances the MIG cannot make (a stockout, a quota) are not coming */
		log_at(gp->log, LOG_WARN, clock_wall(gp->clock),
		       "gce: group %s (MIG %s): %d instance(s) cannot be created (%s: %s); counting only the %d that exist",
		       g->name, g->mig, failing, provider_error_str(fail), why, live);
		pg->target = live;
	}
	/* a group whose config writes its template is read for its price */
	if (g->wants_template || gp->pricing) {
		bool spot;

		describe_template(p, g, mig, &pg->tmpl, g->wants_template, &spot);
		keep_pfact(gp, g, spot);
	}
	cJSON_Delete(mig);
	cJSON_Delete(items);
	return 0;
}

/* MIGs whose names start with a discovery prefix (aggregated list). */
static int discover(struct provider *p, struct gce_group **out, size_t *n_out, struct provider_status *st)
{
	struct gce_prov *gp = GP(p);
	const struct config_gce *c = &gp->config->gce;
	struct gce_group *gs = NULL;
	size_t n = 0, cap = 0, d;
	char path[1024], token[2048];

	*out = NULL;
	*n_out = 0;
	for (d = 0; d < c->n_discovery; d++) {
		int pages = 0;

		token[0] = '\0';
		do {
			struct buf q = BUF_INIT;
			char filter[160];
			cJSON *doc, *scope;

			snprintf(filter, sizeof(filter), "name eq \"%s.*\"", c->discovery[d].prefix);
			if (cloudhttp_escape(&q, filter) < 0 ||
			    (token[0] && (buf_puts(&q, "&pageToken=") < 0 || cloudhttp_escape(&q, token) < 0))) {
				buf_free(&q);
				free(gs);
				cloudcall_status(st, PROVIDER_TRANSIENT, "out of memory");
				return -1;
			}
			snprintf(path, sizeof(path), "projects/%s/aggregated/instanceGroupManagers?filter=%s",
				 gp->project, q.data);
			buf_free(&q);
			if (call(p, false, "GET", path, NULL, &doc, st) < 0) {
				free(gs);
				return -1;
			}
			cJSON_ArrayForEach(scope, cJSON_GetObjectItemCaseSensitive(doc, "items")) {
				const cJSON *m;

				cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(scope, "instanceGroupManagers")) {
					const char *name = cloudjson_str(m, "name"), *zone = cloudjson_str(m, "zone"), *region = cloudjson_str(m, "region");
					struct gce_group *g;

					if (!ok_name(name) || strncmp(name, c->discovery[d].prefix, strlen(c->discovery[d].prefix)) ||
					    (!zone[0] && !region[0]))
						continue;
					if (n == cap) {
						struct gce_group *ng = realloc(gs, (cap ? cap * 2 : 8) * sizeof(*ng));

						if (!ng)
							continue;
						gs = ng;
						cap = cap ? cap * 2 : 8;
					}
					g = &gs[n++];
					memset(g, 0, sizeof(*g));
					snprintf(g->name, sizeof(g->name), "%s", name);
					snprintf(g->mig, sizeof(g->mig), "%s", name);
					g->regional = !zone[0];
					snprintf(g->scope, sizeof(g->scope), "%s/%s", zone[0] ? "zones" : "regions",
						 last_seg(zone[0] ? zone : region));
					g->wants_template = true;
					g->min = c->discovery[d].min;
					g->max = c->discovery[d].max;
				}
			}
			snprintf(token, sizeof(token), "%s", cloudjson_str(doc, "nextPageToken"));
			cJSON_Delete(doc);
		} while (token[0] && ++pages < MAX_PAGES);
	}
	*out = gs;
	*n_out = n;
	return 0;
}

static int gce_list_groups(struct provider *p, struct provider_group **groups, size_t *n,
			   struct provider_status *st)
{
	struct gce_prov *gp = GP(p);
	struct gce_group *found = NULL, *gs;
	struct provider_group *out;
	size_t n_found = 0, n_gs, i, j, k = 0;
	int budget = CREATED_GETS_PER_LIST;

	*groups = NULL;
	*n = 0;
	memset(st, 0, sizeof(*st));
	if (gp->config->gce.n_discovery && discover(p, &found, &n_found, st) < 0)
		return -1;
	gs = groupcache_groups_copy(gp->cache, gp->n_config_groups, n_found);
	out = calloc(gp->n_config_groups + n_found + 1, sizeof(*out));
	if (!gs || !out) {
		free(gs);
		free(out);
		free(found);
		cloudcall_status(st, PROVIDER_TRANSIENT, "out of memory");
		return -1;
	}
	n_gs = gp->n_config_groups;
	for (i = 0; i < n_found; i++) {
		for (j = 0; j < n_gs && (strcmp(gs[j].mig, found[i].mig) || strcmp(gs[j].scope, found[i].scope)) &&
			    strcmp(gs[j].name, found[i].name); j++)
			;
		if (j == n_gs)
			gs[n_gs++] = found[i];
	}
	free(found);
	for (i = 0; i < n_gs; i++)
		if (groupcache_add(gp->cache, gs[i].name, list_one(p, &gs[i], &out[k], &budget, st), out, &k, st) < 0) {
			free(gs);
			return -1;
		}
	groupcache_keep_instances(gp->cache, out, k);
	groupcache_groups_take(gp->cache, gs, n_gs);
	*groups = out;
	*n = k;
	return 0;
}

/* ---- launch ---- */

static uint64_t next_rand(struct gce_prov *gp)
{
	uint64_t x;

	pthread_mutex_lock(&gp->mu);
	gp->rng ^= gp->rng << 13;
	gp->rng ^= gp->rng >> 7;
	gp->rng ^= gp->rng << 17;
	x = gp->rng;
	pthread_mutex_unlock(&gp->mu);
	return x;
}

static void request_id(struct gce_prov *gp, char *out, size_t len)
{
	uint64_t a = next_rand(gp), b = next_rand(gp);

	snprintf(out, len, "%08x-%04x-4%03x-%04x-%012llx", (unsigned)(a >> 32), (unsigned)(a >> 16) & 0xffff,
		 (unsigned)a & 0xfff, 0x8000 | ((unsigned)(b >> 48) & 0x3fff),
		 (unsigned long long)(b & 0xffffffffffffull));
}

/* Reports instance 'name' of 'g' in 'zone' (NULL: not known) to on_instance with 'state'. */
static void tell(const struct gce_prov *gp, const struct gce_group *g, const char *name, const char *zone,
		 enum instance_state state, provider_instance_cb on_instance, void *ctx)
{
	char pid[256] = "";

	if (zone && zone[0])
		provider_id(gp, zone, name, pid, sizeof(pid));
	groupcache_report(on_instance, ctx, name, g->name, pid, state);
}

/* Is 'name' among the managed instances 'items'? */
static bool listed(const cJSON *items, const char *name)
{
	const cJSON *mi;

	cJSON_ArrayForEach(mi, items)
		if (!strcmp(last_seg(cloudjson_str(mi, "instance")), name))
			return true;
	return false;
}

/* deleteInstances of 'urls' (a JSON array, taken) with a requestId: 0 when
 * GCE took it, -1 with 'st'. */
static int delete_instances(struct provider *p, const struct gce_group *g, cJSON *urls, struct provider_status *st)
{
	struct gce_prov *gp = GP(p);
	cJSON *body = cJSON_CreateObject(), *op = NULL;
	char path[1024], rid[40];
	int rc;

	if (!body) {
		cJSON_Delete(urls);
		cloudcall_status(st, PROVIDER_TRANSIENT, "out of memory");
		return -1;
	}
	cJSON_AddItemToObject(body, "instances", urls);
	cJSON_AddBoolToObject(body, "skipInstancesOnValidationError", 1);
	request_id(gp, rid, sizeof(rid));
	snprintf(path, sizeof(path), "projects/%s/%s/instanceGroupManagers/%s/deleteInstances?requestId=%s",
		 gp->project, g->scope, g->mig, rid);
	rc = call(p, true, "POST", path, body, &op, st);
	cJSON_Delete(op);
	cJSON_Delete(body);
	return rc;
}

/*
 * A launch on a MIG. In the group's turn (no other size write of the group
 * runs meanwhile) the targetSize is read, then createInstances adds named
 * instances, or, for a MIG that takes no named instances, resize writes
 * the size read plus 'count' (so a launch never writes a size below the
 * one it read, and two launches add up). Every mutating call carries a
 * requestId, the same on each retry of the call: a retry after a lost
 * answer is the same operation. An alreadyExists answer to our own new
 * names means an earlier attempt made them: they are ours. A resize's
 * instances are claimed as they appear, each by one launch. Launches of
 * one group follow their instances on one shared listManagedInstances a
 * poll interval (poll_shared), however many they are.
 */
static void gce_launch(struct provider *p, const char *group, int count, provider_instance_cb on_instance,
		       provider_done_cb on_done, void *ctx)
{
	struct gce_prov *gp = GP(p);
	struct provider_status st;
	struct gce_group g;
	char path[1024], (*names)[64] = NULL, base[64], zone[64], rid[40], why[64];
	bool *reported = NULL, resized = false, turn = false;
	cJSON *mig = NULL, *body = NULL, *arr, *op = NULL, *items = NULL, *before = NULL;
	struct gce_poll *poll = NULL;
	uint64_t poll_gen = 0;
	int64_t poll_at = 0;
	int i, made = 0, target, n_names = 0;
	int64_t deadline = clock_now(gp->clock) + gp->launch_wait_ns;
	const cJSON *ts;
	long http = 0;

	memset(&st, 0, sizeof(st));
	if (count <= 0 || count > 1000) {
		cloudcall_status(&st, PROVIDER_INVALID, "launch of %d instances (1 to 1000 a call)", count);
		on_done(ctx, 0, &st);
		return;
	}
	if (groupcache_group(gp->cache, NULL, group, &g) < 0) {
		cloudcall_status(&st, PROVIDER_NOT_FOUND, "no node group %s in the cloud", group);
		on_done(ctx, 0, &st);
		return;
	}
	names = calloc((size_t)count, sizeof(*names));
	reported = calloc((size_t)count, sizeof(*reported));
	body = cJSON_CreateObject();
	arr = body ? cJSON_AddArrayToObject(body, "instances") : NULL;
	if (!names || !reported || !arr) {
		cloudcall_status(&st, PROVIDER_TRANSIENT, "out of memory");
		goto out;
	}
	provider_turn_take(gp->turns, g.name);
	turn = true;
	/* the size this turn reads, never one remembered */
	snprintf(path, sizeof(path), "projects/%s/%s/instanceGroupManagers/%s", gp->project, g.scope, g.mig);
	if (call(p, false, "GET", path, NULL, &mig, &st) < 0)
		goto out;
	ts = cJSON_GetObjectItemCaseSensitive(mig, "targetSize");
	if (!cJSON_IsNumber(ts) || ts->valuedouble < 0) {
		cloudcall_status(&st, PROVIDER_TRANSIENT, "MIG %s has no targetSize", g.mig);
		goto out;
	}
	target = (int)ts->valuedouble;
	if (target + count > g.max) {
		cloudcall_status(&st, PROVIDER_INVALID, "MIG %s would go to %d, above the group's max %d", g.mig, target + count, g.max);
		goto out;
	}
	snprintf(base, sizeof(base), "%.50s", cloudjson_str(mig, "baseInstanceName")[0] ? cloudjson_str(mig, "baseInstanceName") : g.mig);
	for (i = 0; i < count; i++) {
		static const char alnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";
		uint64_t r = next_rand(gp);
		cJSON *o = cJSON_CreateObject();
		int k;

		snprintf(names[i], sizeof(names[i]), "%.50s-", base);
		for (k = 0; k < NAME_SUFFIX; k++, r /= 36) {
			size_t l = strlen(names[i]);

			names[i][l] = alnum[r % 36];
			names[i][l + 1] = '\0';
		}
		if (!o || !cJSON_AddStringToObject(o, "name", names[i])) {
			cJSON_Delete(o);
			cloudcall_status(&st, PROVIDER_TRANSIENT, "out of memory");
			goto out;
		}
		cJSON_AddItemToArray(arr, o);
	}
	request_id(gp, rid, sizeof(rid));
	snprintf(path, sizeof(path), "projects/%s/%s/instanceGroupManagers/%s/createInstances?requestId=%s",
		 gp->project, g.scope, g.mig, rid);
	if (call_ex(p, true, "POST", path, body, &op, &st, &http, why, sizeof(why)) == 0) {
		n_names = count;
	} else if (http == 409 && !strcmp(why, "alreadyExists")) {
		/* our names are new: an earlier attempt of this call made them */
		log_at(gp->log, LOG_INFO, clock_wall(gp->clock),
		       "gce: group %s: createInstances answered alreadyExists for the new names: an earlier attempt made them",
		       g.name);
		memset(&st, 0, sizeof(st));
		n_names = count;
	} else if (http == 400 && st.code == PROVIDER_INVALID) {
		/* a MIG that refuses named instances: resize, idempotent by requestId */
		log_at(gp->log, LOG_WARN, clock_wall(gp->clock),
		       "gce: group %s: createInstances refused (%s); resizing instead", g.name, st.message);
		if (managed_instances(p, &g, &before, &st) < 0)
			goto out;
		request_id(gp, rid, sizeof(rid));
		snprintf(path, sizeof(path), "projects/%s/%s/instanceGroupManagers/%s/resize?size=%d&requestId=%s",
			 gp->project, g.scope, g.mig, target + count, rid);
		if (call(p, true, "POST", path, NULL, &op, &st) < 0)
			goto out;
		if (wait_operation(p, op, deadline, &st) < 0)
			goto out;
		log_at(gp->log, LOG_INFO, clock_wall(gp->clock), "gce: group %s: MIG %s resized %d -> %d", g.name,
		       g.mig, target, target + count);
		resized = true;
	} else {
		goto out;
	}
	provider_turn_give(gp->turns, g.name);
	turn = false;
	/* named instances: each one's providerID is known before it exists */
	for (i = 0; i < n_names; i++) {
		if (g.regional)
			continue;
		snprintf(zone, sizeof(zone), "%.63s", g.scope + 6);
		tell(gp, &g, names[i], zone, INSTANCE_PENDING, on_instance, ctx);
		reported[i] = on_instance != NULL;
	}
	if (op && !resized && wait_operation(p, op, deadline, &st) < 0 && st.code != PROVIDER_TRANSIENT)
		goto out;
	memset(&st, 0, sizeof(st));
	/* stockouts and quota show on each managed instance's lastAttempt; the
	 * group's list is shared by every launch following it */
	poll = poll_join(gp, g.name);
	if (!poll) {
		cloudcall_status(&st, PROVIDER_TRANSIENT, "out of memory");
		made = n_names;
		goto out;
	}
	while (clock_now(gp->clock) < deadline) {
		int ok = 0, failed = 0;
		char fwhy[256] = "";
		enum provider_error fail = PROVIDER_OK;
		int64_t next;
		cJSON *mi;

		cJSON_Delete(items);
		items = NULL;
		if (poll_shared(p, poll, &g, &items, &poll_gen, &poll_at, &st) < 0)
			break;
		cJSON_ArrayForEach(mi, items) {
			const char *name = last_seg(cloudjson_str(mi, "instance"));
			char m[256];
			enum provider_error e;

			for (i = 0; i < n_names && strcmp(names[i], name); i++)
				;
			if (i == n_names) {
				/* a resize's new instance: the first launch to claim it */
				if (!resized || n_names == count || !ok_name(name) || listed(before, name) ||
				    !provider_claim(gp->turns, g.name, name))
					continue;
				snprintf(names[n_names++], sizeof(names[0]), "%s", name);
			}
			if (!reported[i] && url_zone(cloudjson_str(mi, "instance"), zone, sizeof(zone)) == 0 && on_instance) {
				/* a regional MIG picks the zone: report once it did */
				tell(gp, &g, names[i], zone, INSTANCE_PENDING, on_instance, ctx);
				reported[i] = true;
			}
			e = attempt_error(mi, m, sizeof(m));
			if (e != PROVIDER_OK) {
				failed++;
				if (fail == PROVIDER_OK) {
					fail = e;
					snprintf(fwhy, sizeof(fwhy), "%s", m);
				}
			} else if (mi_state(mi) == INSTANCE_RUNNING) {
				ok++;
			}
		}
		if (failed) {
			cJSON *urls = cJSON_CreateArray();
			struct provider_status ds;

			/* give back what cannot be made, so the MIG stops retrying,
			 * and tell the caller not to wait for what it was told of */
			cJSON_ArrayForEach(mi, items) {
				const char *name = last_seg(cloudjson_str(mi, "instance"));
				char m[8];

				for (i = 0; i < n_names && strcmp(names[i], name); i++)
					;
				if (i == n_names || attempt_error(mi, m, sizeof(m)) == PROVIDER_OK)
					continue;
				if (urls)
					cJSON_AddItemToArray(urls, cJSON_CreateString(cloudjson_str(mi, "instance")));
				if (reported[i]) {
					tell(gp, &g, names[i], NULL, INSTANCE_GONE, on_instance, ctx);
					reported[i] = false;
				}
			}
			provider_turn_take(gp->turns, g.name);
			if (urls && delete_instances(p, &g, urls, &ds) == 0)
				log_at(gp->log, LOG_WARN, clock_wall(gp->clock),
				       "gce: group %s: %d instance(s) cannot be created (%s); deleted from MIG %s",
				       g.name, failed, fwhy, g.mig);
			provider_turn_give(gp->turns, g.name);
			made = n_names - failed;
			cloudcall_status(&st, fail, "%s", fwhy);
			goto out;
		}
		if (n_names == count && ok >= count) {
			made = count;
			break;
		}
		/* the next list is due a poll interval after this one was asked
		 * for (every launch of the group wakes for the same one), and
		 * never sooner than half an interval from now */
		next = poll_at + gp->poll_ns - clock_now(gp->clock);
		if (cloudcall_wait_until(gp->clock, gp->cancel,
					 clock_now(gp->clock) + (next > gp->poll_ns / 2 ? next : gp->poll_ns / 2)) < 0) {
			cloudcall_status(&st, PROVIDER_CANCELLED, "stopped following the launch: luascale is stopping");
			made = n_names;
			goto out;
		}
	}
	if (n_names < count) {
		made = n_names;
		cloudcall_status(&st, PROVIDER_TRANSIENT,
				 "%d of %d instances not listed by MIG %s after %llds; its targetSize still counts them",
				 count - n_names, count, g.mig, (long long)(gp->launch_wait_ns / CLOCK_NS_PER_S));
		goto out;
	}
	made = count;
	for (i = 0; i < count; i++)
		log_at(gp->log, LOG_INFO, clock_wall(gp->clock), "gce: launched %s in group %s (MIG %s, %s)", names[i],
		       g.name, g.mig, g.scope);
out:
	if (turn)
		provider_turn_give(gp->turns, g.name);
	poll_leave(gp, poll);
	free(names);
	free(reported);
	cJSON_Delete(mig);
	cJSON_Delete(body);
	cJSON_Delete(op);
	cJSON_Delete(items);
	cJSON_Delete(before);
	on_done(ctx, made, &st);
}

/* ---- terminate ---- */

static void gce_terminate(struct provider *p, const char *group, const char *const *ids, size_t n,
			  provider_done_cb on_done, void *ctx)
{
	struct gce_prov *gp = GP(p);
	struct provider_status st;
	struct gce_group g;
	cJSON *urls, *items = NULL, *mi;
	size_t i;
	int done = 0;

	memset(&st, 0, sizeof(st));
	if (groupcache_group(gp->cache, NULL, group, &g) < 0) {
		cloudcall_status(&st, PROVIDER_NOT_FOUND, "no node group %s in the cloud", group);
		on_done(ctx, 0, &st);
		return;
	}
	/* the instances' URLs, as the MIG names them (a regional MIG's zones differ) */
	if (managed_instances(p, &g, &items, &st) < 0) {
		on_done(ctx, 0, &st);
		return;
	}
	urls = cJSON_CreateArray();
	for (i = 0; urls && i < n; i++) {
		bool found = false;

		cJSON_ArrayForEach(mi, items)
			if (!strcmp(last_seg(cloudjson_str(mi, "instance")), ids[i])) {
				if (mi_state(mi) == INSTANCE_STOPPING)
					done++; /* already going */
				else
					cJSON_AddItemToArray(urls, cJSON_CreateString(cloudjson_str(mi, "instance")));
				found = true;
				break;
			}
		if (!found && st.code == PROVIDER_OK)
			cloudcall_status(&st, PROVIDER_NOT_FOUND, "%s is not an instance of MIG %s", ids[i], g.mig);
	}
	if (urls && cJSON_GetArraySize(urls) > 0) {
		struct provider_status cs;
		int k = cJSON_GetArraySize(urls);

		/* it lowers targetSize: in the group's turn, so a resize never
		 * writes a size read before it */
		provider_turn_take(gp->turns, g.name);
		if (delete_instances(p, &g, urls, &cs) == 0) {
			done += k;
			log_at(gp->log, LOG_INFO, clock_wall(gp->clock), "gce: group %s: deleting %d instance(s) from MIG %s",
			       g.name, k, g.mig);
		} else {
			st = cs;
		}
		provider_turn_give(gp->turns, g.name);
	} else {
		cJSON_Delete(urls);
	}
	cJSON_Delete(items);
	on_done(ctx, done, &st);
}

/* ---- map_node ---- */

static int gce_map_node(struct provider *p, const char *provider_id, char *group, size_t group_len,
			char *instance, size_t instance_len)
{
	const char *name;

	if (strncmp(provider_id, "gce://", 6) || !(name = strrchr(provider_id + 6, '/')) ||
	    !ok_name(name + 1) ||
	    groupcache_instance(GP(p)->cache, name + 1, group, group_len, NULL, 0, NULL) < 0)
		return -1;
	snprintf(instance, instance_len, "%s", name + 1);
	return 0;
}

/* ---- prices ---- */

/* provider_ops.prices: each group at its region's price, spot when its
 * instance template makes spot VMs or its labels say so. */
static void gce_prices(struct provider *p, struct provider_group *groups, size_t n, struct executor *ex)
{
	struct gce_prov *gp = GP(p);
	char (*regions)[64] = calloc(n + 1, sizeof(*regions));
	const char **rp = calloc(n + 1, sizeof(*rp));
	bool *spot = calloc(n + 1, sizeof(*spot));
	size_t i;

	if (!gp->pricing || !regions || !rp || !spot)
		goto out;
	for (i = 0; i < n; i++) {
		struct gce_pfact f = { "", false };

		memo_get(gp->pfacts, groups[i].name, &f);
		snprintf(regions[i], sizeof(regions[i]), "%s", f.region);
		spot[i] = f.spot || pricing_capacity_of(&groups[i].tmpl) == PRICING_SPOT;
		rp[i] = regions[i];
	}
	gce_pricing_groups(gp->pricing, groups, n, rp, spot, ex);
out:
	free(regions);
	free(rp);
	free(spot);
}

static uint64_t gce_price_failures(struct provider *p)
{
	return gce_pricing_failures(GP(p)->pricing);
}

/* gce_pricing_get_fn: a catalog read through the read bucket and the token. */
static int billing_get(void *ctx, const char *url, cJSON **out, struct provider_status *st)
{
	return call(ctx, false, "GET", url, NULL, out, st);
}

/* ---- life cycle ---- */

static void gce_free(struct provider *p)
{
	struct gce_prov *gp;

	if (!p)
		return;
	gp = p->impl;
	if (gp) {
		gce_pricing_free(gp->pricing); /* after a refresh in flight */
		gce_auth_free(gp->auth);
		cloudhttp_free(gp->http);
		memo_free(gp->mts);
		memo_free(gp->tpls);
		memo_free(gp->pfacts);
		provider_turns_free(gp->turns);
		groupcache_free(gp->cache);
		cloudcall_counts_destroy(&gp->calls);
		pthread_cond_destroy(&gp->poll_cv);
		pthread_mutex_destroy(&gp->mu);
		free(gp);
	}
	cloudcall_buckets_free(p);
	free(p);
}

static const struct provider_ops gce_ops = {
	.kind = "gce",
	.list_groups = gce_list_groups,
	.launch = gce_launch,
	.terminate = gce_terminate,
	.map_node = gce_map_node,
	.prices = gce_prices,
	.price_failures = gce_price_failures,
	.free = gce_free,
};

struct provider *gce_provider_new(const struct gce_provider_opts *o, struct errbuf *err)
{
	const struct config *c = o->config;
	struct provider *p = calloc(1, sizeof(*p));
	struct gce_prov *gp = calloc(1, sizeof(*gp));
	struct gce_auth_opts ao;
	struct gce_group *gs;
	struct errbuf e;
	size_t i;

	if (!p || !gp) {
		free(p);
		free(gp);
		errbuf_set(err, "gce: out of memory");
		return NULL;
	}
	p->ops = &gce_ops;
	p->impl = gp;
	pthread_mutex_init(&gp->mu, NULL);
	pthread_cond_init(&gp->poll_cv, NULL);
	cloudcall_counts_init(&gp->calls);
	gp->clock = o->clock ? o->clock : clock_real();
	gp->log = o->log;
	gp->cancel = o->cancel;
	gp->config = c;
	gp->launch_wait_ns = (o->launch_wait_ms > 0 ? o->launch_wait_ms : 2 * 60 * 1000) * CLOCK_NS_PER_MS;
	gp->poll_ns = (o->poll_ms > 0 ? o->poll_ms : 2000) * CLOCK_NS_PER_MS;
	gp->rng = (uint64_t)clock_wall(gp->clock) * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)gp;
	if (!gp->rng)
		gp->rng = 1;
	gp->turns = provider_turns_new();
	gp->cache = groupcache_new(&(struct groupcache_opts){ .cloud = "gce", .backing = "MIG", .log = o->log,
							      .clock = gp->clock, GROUPCACHE_TABLE(struct gce_group) });
	gp->mts = memo_new(&(struct memo_opts){ .value_size = sizeof(struct gce_mt) });
	gp->tpls = memo_new(&(struct memo_opts){ .value_size = sizeof(struct gce_tpl), .copy = tpl_copy,
						 .release = tpl_release });
	gp->pfacts = memo_new(&(struct memo_opts){ .value_size = sizeof(struct gce_pfact) });
	if (!gp->turns || !gp->cache || !gp->mts || !gp->tpls || !gp->pfacts) {
		errbuf_set(err, "gce: out of memory");
		goto fail;
	}
	if (cloudcall_buckets_new(p, gp->clock, c) < 0) {
		errbuf_set(err, "gce: bad rate limits");
		goto fail;
	}
	if (!(gp->http = cloudcall_http_new("gce", gp->clock, o->log, o->ca_file, 5, o->cancel, err)))
		goto fail;
	memset(&ao, 0, sizeof(ao));
	ao.env = o->env;
	ao.credentials_file = c->gce.credentials_file;
	ao.token_url = c->gce.endpoint_token;
	ao.metadata_host = c->gce.metadata_host;
	/* the catalog asks for a billing scope (or cloud-platform) */
	ao.scope = c->pricing_enabled ? GCE_AUTH_DEFAULT_SCOPE " " GCE_BILLING_SCOPE : NULL;
	ao.http = gp->http;
	ao.clock = gp->clock;
	ao.log = o->log;
	if (!(gp->auth = gce_auth_new(&ao, &e))) {
		errbuf_set(err, "gce: %s", e.msg);
		goto fail;
	}
	if (c->gce.project) {
		snprintf(gp->project, sizeof(gp->project), "%s", c->gce.project);
	} else {
		char zone[64];

		if (gce_metadata_project_zone(&ao, gp->project, sizeof(gp->project), zone, sizeof(zone), &e) < 0) {
			errbuf_set(err, "gce: no project: set provider.gce.project (the metadata server: %s)", e.msg);
			goto fail;
		}
	}
	snprintf(gp->base, sizeof(gp->base), "%s%s", c->gce.endpoint_compute ? c->gce.endpoint_compute : GCE_DEFAULT_COMPUTE,
		 c->gce.endpoint_compute && c->gce.endpoint_compute[strlen(c->gce.endpoint_compute) - 1] != '/' ? "/" : "");
	if (c->pricing_enabled) {
		struct gce_pricing_opts po;

		memset(&po, 0, sizeof(po));
		po.billing = c->gce.endpoint_billing;
		po.get = billing_get;
		po.ctx = p;
		po.clock = gp->clock;
		po.log = o->log;
		po.config = c;
		if (!(gp->pricing = gce_pricing_new(&po, &e))) {
			errbuf_set(err, "gce: %s", e.msg);
			goto fail;
		}
	}
	gs = calloc(c->n_groups + 1, sizeof(*gs));
	if (!gs) {
		errbuf_set(err, "gce: out of memory");
		goto fail;
	}
	for (i = 0; i < c->n_groups; i++) {
		const struct config_group_extra *x = &c->group_extra[i];
		struct gce_group *g = &gs[i];

		snprintf(g->name, sizeof(g->name), "%s", c->groups[i].name);
		snprintf(g->mig, sizeof(g->mig), "%s", x->gce.mig);
		g->regional = x->gce.region != NULL;
		snprintf(g->scope, sizeof(g->scope), "%s/%s", g->regional ? "regions" : "zones",
			 g->regional ? x->gce.region : x->gce.zone);
		g->wants_template = !x->template_set;
		g->min = c->groups[i].min;
		g->max = c->groups[i].max;
	}
	groupcache_groups_take(gp->cache, gs, c->n_groups);
	gp->n_config_groups = c->n_groups;
	{
		char account[256];

		gce_auth_account(gp->auth, account, sizeof(account));
		log_at(o->log, LOG_INFO, clock_wall(gp->clock), "gce: project %s, token from %s (%s), compute at %s",
		       gp->project, gce_auth_source(gp->auth), account, gp->base);
	}
	return p;
fail:
	gce_free(p);
	return NULL;
}

/* provider.kind: gce (providers/registry.c) */
static struct provider *make(const struct provider_make_opts *o, struct errbuf *err)
{
	struct gce_provider_opts go;

	memset(&go, 0, sizeof(go));
	go.config = o->config;
	go.log = o->log;
	go.cancel = o->cancel;
	return gce_provider_new(&go, err);
}

const struct provider_kind provider_kind_gce = {"gce", make};
