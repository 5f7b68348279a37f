/*
 * statuswriter: create-or-update of a ConfigMap, the read of one key, and
 * the writer thread (a latest-wins slot, a minimum interval between
 * writes, an active flag the leader sets).
 */
#include "kube/statuswriter.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "model.h"
#include "runtime/clock.h"

#define PUT_ATTEMPTS 5
#define FAILURE_LOG_EVERY_S 60

static void cm_path(struct buf *p, const char *ns, const char *name)
{
	buf_puts(p, "/api/v1/namespaces/");
	kube_escape(p, ns);
	buf_puts(p, "/configmaps");
	if (name) {
		buf_puts(p, "/");
		kube_escape(p, name);
	}
}

static void cm_body(struct buf *b, const char *ns, const char *name, const char *rv,
		    const char *const *keys, const char *const *values, size_t n, int64_t now)
{
	char ts[32];
	size_t i;

	model_format_time(now, ts, sizeof(ts));
	buf_puts(b, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":");
	buf_json_string(b, name);
	buf_puts(b, ",\"namespace\":");
	buf_json_string(b, ns);
	if (rv) {
		buf_puts(b, ",\"resourceVersion\":");
		buf_json_string(b, rv);
	}
	buf_puts(b, ",\"labels\":{\"app.kubernetes.io/managed-by\":\"luascale\"},"
		    "\"annotations\":{\"luascale.io/last-updated\":");
	buf_json_string(b, ts);
	buf_puts(b, "}},\"data\":{");
	for (i = 0; i < n; i++) {
		if (i)
			buf_puts(b, ",");
		buf_json_string(b, keys[i]);
		buf_puts(b, ":");
		buf_json_string(b, values[i]);
	}
	buf_puts(b, "}}");
}

/* The resourceVersion of the object in 'body' into 'out', or -1. */
static int resource_version(const char *body, char *out, size_t len)
{
	cJSON *doc = cJSON_Parse(body);
	const cJSON *rv = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(doc, "metadata"), "resourceVersion");
	int rc = -1;

	if (cJSON_IsString(rv) && rv->valuestring[0] && strlen(rv->valuestring) < len) {
		snprintf(out, len, "%s", rv->valuestring);
		rc = 0;
	}
	cJSON_Delete(doc);
	return rc;
}

int kube_configmap_put(struct kube_client *c, const char *ns, const char *name,
		       const char *const *keys, const char *const *values, size_t n,
		       int64_t now, struct errbuf *err)
{
	struct buf path = BUF_INIT, coll = BUF_INIT;
	struct kube_response r;
	int attempt, rc = -1;

	cm_path(&path, ns, name);
	cm_path(&coll, ns, NULL);
	memset(&r, 0, sizeof(r));
	if (path.oom || coll.oom) {
		errbuf_set(err, "out of memory");
		goto out;
	}
	for (attempt = 0; attempt < PUT_ATTEMPTS; attempt++) {
		struct buf body = BUF_INIT;
		char rv[128];
		bool create = false;
		int sent;

		kube_response_free(&r);
		if (kube_request(c, "GET", path.data, NULL, NULL, 0, &r, err) < 0) {
			errbuf_prefix(err, "ConfigMap %s/%s", ns, name);
			goto out;
		}
		if (r.status == 404) {
			create = true;
			cm_body(&body, ns, name, NULL, keys, values, n, now);
			kube_response_free(&r);
			sent = body.oom ? -1 : kube_request(c, "POST", coll.data, KUBE_CT_JSON, body.data,
							   body.len, &r, err);
		} else if (r.status == 200) {
			if (resource_version(r.body ? r.body : "", rv, sizeof(rv)) < 0) {
				errbuf_set(err, "ConfigMap %s/%s: the API server's answer has no resourceVersion",
					   ns, name);
				goto out;
			}
			cm_body(&body, ns, name, rv, keys, values, n, now);
			kube_response_free(&r);
			sent = body.oom ? -1 : kube_request(c, "PUT", path.data, KUBE_CT_JSON, body.data,
							   body.len, &r, err);
		} else {
			errbuf_set(err, "ConfigMap %s/%s: reading it: HTTP %ld %s: %s", ns, name, r.status,
				   r.reason, r.message);
			goto out;
		}
		if (body.oom && sent < 0)
			errbuf_set(err, "out of memory");
		buf_free(&body);
		if (sent < 0) {
			errbuf_prefix(err, "ConfigMap %s/%s", ns, name);
			goto out;
		}
		if (r.status >= 200 && r.status < 300) {
			rc = 0;
			goto out;
		}
		/* 409: written (or created) by someone else in between; 404 on
		 * the PUT: deleted in between. Read it again. */
		if (r.status != 409 && (r.status != 404 || create)) {
			errbuf_set(err, "ConfigMap %s/%s: writing it: HTTP %ld %s: %s", ns, name,
				   r.status, r.reason, r.message);
			goto out;
		}
	}
	errbuf_set(err, "ConfigMap %s/%s: still in conflict after %d attempts (another writer?)",
		   ns, name, PUT_ATTEMPTS);
out:
	kube_response_free(&r);
	buf_free(&path);
	buf_free(&coll);
	return rc;
}

int kube_configmap_get_key(struct kube_client *c, const char *ns, const char *name,
			   const char *key, char **out, struct errbuf *err)
{
	struct buf path = BUF_INIT;
	struct kube_response r;
	cJSON *doc = NULL;
	const cJSON *v;
	int rc = -1;

	*out = NULL;
	cm_path(&path, ns, name);
	if (path.oom)
		return errbuf_set(err, "out of memory");
	if (kube_request(c, "GET", path.data, NULL, NULL, 0, &r, err) < 0) {
		errbuf_prefix(err, "ConfigMap %s/%s", ns, name);
		goto out;
	}
	if (r.status == 404) {
		errbuf_set(err, "ConfigMap %s/%s not found: luascale writes it once it runs and leads "
			   "(status.enabled, status.namespace and status.name in its config)", ns, name);
		rc = 1;
		goto out;
	}
	if (r.status != 200) {
		errbuf_set(err, "ConfigMap %s/%s: HTTP %ld %s: %s", ns, name, r.status, r.reason,
			   r.message);
		goto out;
	}
	doc = cJSON_Parse(r.body ? r.body : "");
	v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "data"), key);
	if (!doc) {
		errbuf_set(err, "ConfigMap %s/%s: the answer is not JSON", ns, name);
		goto out;
	}
	if (!cJSON_IsString(v)) {
		errbuf_set(err, "ConfigMap %s/%s has no key \"%s\" (not written by luascale?)", ns, name,
			   key);
		goto out;
	}
	*out = strdup(v->valuestring);
	rc = *out ? 0 : errbuf_set(err, "out of memory");
out:
	cJSON_Delete(doc);
	kube_response_free(&r);
	buf_free(&path);
	return rc;
}

/* ---- the writer thread ---- */

struct statuswriter {
	struct kube_client *client;
	char *ns, *name;
	int64_t interval_ns;
	const struct logger *log;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;           /* CLOCK_MONOTONIC */
	bool stop, active;
	char *text, *json;           /* the latest handed, not yet written; NULL when none */
	int64_t next_at;             /* clock_now() of the earliest next write */
	uint64_t written, failed, failed_quiet;
	int64_t failure_logged_at;   /* clock_now() */
};

static void *writer_thread(void *arg)
{
	struct statuswriter *w = arg;
	struct clock *clock = clock_real();

	pthread_mutex_lock(&w->mu);
	while (!w->stop) {
		int64_t now = clock_now(clock);
		const char *keys[] = {"status", "status.json"};
		const char *vals[2];
		char *text, *json;
		struct errbuf err;
		int rc;

		if (!w->text || !w->active || now < w->next_at) {
			if (w->text && w->active) {
				struct timespec ts;

				clock_gettime(CLOCK_MONOTONIC, &ts);
				ts.tv_sec += (time_t)((w->next_at - now) / CLOCK_NS_PER_S);
				ts.tv_nsec += (long)((w->next_at - now) % CLOCK_NS_PER_S);
				if (ts.tv_nsec >= 1000000000L) {
					ts.tv_sec++;
					ts.tv_nsec -= 1000000000L;
				}
				pthread_cond_timedwait(&w->cv, &w->mu, &ts);
			} else {
				pthread_cond_wait(&w->cv, &w->mu);
			}
			continue;
		}
		text = w->text;
		json = w->json;
		w->text = w->json = NULL;
		w->next_at = now + w->interval_ns;
		pthread_mutex_unlock(&w->mu);
		vals[0] = text;
		vals[1] = json;
		rc = kube_configmap_put(w->client, w->ns, w->name, keys, vals, 2,
					clock_wall(clock), &err);
		pthread_mutex_lock(&w->mu);
		if (rc == 0) {
			w->written++;
		} else {
			w->failed++;
			/* at most one line a minute, saying how many were not logged */
			if (!w->failure_logged_at ||
			    now - w->failure_logged_at >= FAILURE_LOG_EVERY_S * CLOCK_NS_PER_S) {
				log_at(w->log, LOG_WARN, clock_wall(clock),
				       "cannot write the status: %s%s", err.msg,
				       w->failed_quiet ? " (earlier failures not logged)" : "");
				w->failure_logged_at = now ? now : 1;
				w->failed_quiet = 0;
			} else {
				w->failed_quiet++;
			}
		}
		free(text);
		free(json);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

struct statuswriter *statuswriter_new(const struct statuswriter_opts *o, struct errbuf *err)
{
	struct statuswriter *w = calloc(1, sizeof(*w));
	pthread_condattr_t ca;

	if (!w || !(w->ns = strdup(o->ns)) || !(w->name = strdup(o->name))) {
		if (w)
			free(w->ns);
		free(w);
		errbuf_set(err, "out of memory");
		return NULL;
	}
	w->client = o->client;
	w->interval_ns = o->interval_ns > 0 ? o->interval_ns : 10 * CLOCK_NS_PER_S;
	w->log = o->log;
	w->active = true;
	pthread_mutex_init(&w->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&w->thread, NULL, writer_thread, w) != 0) {
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mu);
		free(w->ns);
		free(w->name);
		free(w);
		errbuf_set(err, "cannot start the status writer thread");
		return NULL;
	}
	return w;
}

void statuswriter_free(struct statuswriter *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free(w->text);
	free(w->json);
	free(w->ns);
	free(w->name);
	free(w);
}

void statuswriter_submit(struct statuswriter *w, const char *text, const char *json)
{
	char *t = strdup(text ? text : ""), *j = strdup(json ? json : "{}");

	if (!t || !j) {
		free(t);
		free(j);
		return;
	}
	pthread_mutex_lock(&w->mu);
	free(w->text);
	free(w->json);
	w->text = t;
	w->json = j;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

void statuswriter_set_active(struct statuswriter *w, bool active)
{
	pthread_mutex_lock(&w->mu);
	w->active = active;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

void statuswriter_counts(struct statuswriter *w, uint64_t *written, uint64_t *failed)
{
	pthread_mutex_lock(&w->mu);
	*written = w->written;
	*failed = w->failed;
	pthread_mutex_unlock(&w->mu);
}
