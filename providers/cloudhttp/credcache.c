/*
 * credcache: a cached credential with expiry, refresh windows and one
 * refresh at a time. The value is opaque bytes: the caller's callback
 * fills it; this file only copies, times and wipes it.
 */
#include "providers/cloudhttp/credcache.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define DEFAULT_RETRY_S 30

struct credcache {
	char name[64];
	size_t value_size;
	credcache_refresh_fn refresh;
	void *ud;
	int64_t advisory_s;
	int64_t mandatory_s;
	int64_t retry_s;
	struct clock *clock;
	const struct logger *log;

	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned char *value;     /* value_size bytes, valid when 'have' */
	unsigned char *scratch;   /* where a refresh writes, value_size bytes */
	bool have;
	int64_t expires_s;
	bool refreshing;          /* a caller is inside refresh() */
	uint64_t generation;      /* bumped when a refresh ends */
	bool last_failed;         /* the refresh that ended last failed */
	struct errbuf last_err;   /* its message */
	int64_t next_try_s;       /* no new attempt before this while valid */
	struct credcache_stats stats;
};

void credcache_wipe(void *p, size_t n)
{
	volatile unsigned char *v = p;

	while (n--)
		*v++ = 0;
}

struct credcache *credcache_new(const struct credcache_opts *o, struct errbuf *err)
{
	struct credcache *c;

	if (!o || !o->refresh || o->value_size == 0) {
		errbuf_set(err, "credential cache: a refresh function and a value size are required");
		return NULL;
	}
	if (o->advisory_s < 0 || o->mandatory_s < 0 || o->retry_s < 0 ||
	    o->mandatory_s > (o->advisory_s ? o->advisory_s : CREDCACHE_AWS_ADVISORY_S)) {
		errbuf_set(err, "credential cache %s: refresh windows must be >= 0 and the "
			   "mandatory window no longer than the advisory one",
			   o->name ? o->name : "");
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		goto oom;
	c->value = calloc(1, o->value_size);
	c->scratch = calloc(1, o->value_size);
	if (!c->value || !c->scratch)
		goto oom;
	snprintf(c->name, sizeof(c->name), "%s", o->name ? o->name : "credential");
	c->value_size = o->value_size;
	c->refresh = o->refresh;
	c->ud = o->ud;
	if (o->advisory_s == 0 && o->mandatory_s == 0) {
		c->advisory_s = CREDCACHE_AWS_ADVISORY_S;
		c->mandatory_s = CREDCACHE_AWS_MANDATORY_S;
	} else {
		c->advisory_s = o->advisory_s;
		c->mandatory_s = o->mandatory_s;
	}
	c->retry_s = o->retry_s ? o->retry_s : DEFAULT_RETRY_S;
	c->clock = o->clock ? o->clock : clock_real();
	c->log = o->log;
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	return c;
oom:
	if (c) {
		free(c->value);
		free(c->scratch);
		free(c);
	}
	errbuf_set(err, "credential cache: out of memory");
	return NULL;
}

/* True when 'now' is inside the last 'window' seconds before the expiry. */
static bool within(const struct credcache *c, int64_t now, int64_t window)
{
	if (c->expires_s == CREDCACHE_NEVER)
		return false;
	return now >= c->expires_s - window;
}

static void serve(struct credcache *c, void *out, int64_t *expires_s)
{
	memcpy(out, c->value, c->value_size);
	if (expires_s)
		*expires_s = c->expires_s;
}

static void format_expiry(int64_t expires_s, char *ts, size_t len)
{
	if (expires_s == CREDCACHE_NEVER)
		snprintf(ts, len, "never");
	else
		model_format_time(expires_s, ts, len);
}

/*
 * Runs one refresh with the lock held on entry and on return (released
 * around the callback). Returns 0 when a new value is stored.
 */
static int run_refresh(struct credcache *c, int64_t now, bool mandatory)
{
	struct errbuf e = { "" };
	int64_t exp = 0;
	int rc;
	char ts[40];

	c->refreshing = true;
	pthread_mutex_unlock(&c->mu);
	credcache_wipe(c->scratch, c->value_size);
	rc = c->refresh(c->ud, c->scratch, &exp, &e);
	if (rc == 0 && exp != CREDCACHE_NEVER && exp <= clock_wall(c->clock)) {
		model_format_time(exp, ts, sizeof(ts));
		errbuf_set(&e, "the refreshed value expired already (at %s)", ts);
		rc = -1;
	}
	pthread_mutex_lock(&c->mu);
	c->refreshing = false;
	c->generation++;
	if (rc == 0) {
		memcpy(c->value, c->scratch, c->value_size);
		c->have = true;
		c->expires_s = exp;
		c->last_failed = false;
		c->next_try_s = 0;
		c->stats.refreshes++;
		format_expiry(exp, ts, sizeof(ts));
		log_at(c->log, LOG_DEBUG, clock_wall(c->clock), "%s: refreshed, expires %s", c->name,
		       ts);
	} else {
		if (!e.msg[0])
			snprintf(e.msg, sizeof(e.msg), "refresh failed");
		c->last_failed = true;
		c->last_err = e;
		c->next_try_s = now + c->retry_s;
		c->stats.failures++;
		if (c->have && now < c->expires_s) {
			format_expiry(c->expires_s, ts, sizeof(ts));
			log_at(c->log, LOG_WARN, clock_wall(c->clock),
			       "%s: refresh failed in the %s window (%s); the current value stays in use "
			       "until it expires at %s",
			       c->name, mandatory ? "mandatory" : "advisory", e.msg, ts);
		}
	}
	credcache_wipe(c->scratch, c->value_size);
	pthread_cond_broadcast(&c->cv);
	return rc;
}

int credcache_get(struct credcache *c, void *out, int64_t *expires_s, struct errbuf *err)
{
	uint64_t waited_for = 0;
	bool waited = false;
	int rc = -1;

	pthread_mutex_lock(&c->mu);
	for (;;) {
		int64_t now = clock_wall(c->clock);
		bool valid = c->have && (c->expires_s == CREDCACHE_NEVER || now < c->expires_s);

		if (valid && !within(c, now, c->advisory_s)) {
			serve(c, out, expires_s);
			rc = 0;
			break;
		}
		if (c->refreshing) {
			/* someone else refreshes: the current value is good
			 * enough outside the mandatory window */
			if (valid && !within(c, now, c->mandatory_s)) {
				serve(c, out, expires_s);
				rc = 0;
				break;
			}
			c->stats.waits++;
			waited = true;
			waited_for = c->generation;
			while (c->refreshing)
				pthread_cond_wait(&c->cv, &c->mu);
			continue;
		}
		if (waited && c->generation != waited_for && c->last_failed && !valid) {
			/* the refresh we waited for failed: its error is ours */
			errbuf_set(err, "%s: %s", c->name, c->last_err.msg);
			break;
		}
		if (valid && now < c->next_try_s) {
			/* a refresh failed a moment ago: do not hammer the source */
			c->stats.stale_served++;
			serve(c, out, expires_s);
			rc = 0;
			break;
		}
		if (run_refresh(c, now, valid && within(c, now, c->mandatory_s)) == 0) {
			serve(c, out, expires_s);
			rc = 0;
			break;
		}
		now = clock_wall(c->clock);
		if (c->have && (c->expires_s == CREDCACHE_NEVER || now < c->expires_s)) {
			c->stats.stale_served++;
			serve(c, out, expires_s);
			rc = 0;
			break;
		}
		errbuf_set(err, "%s: %s", c->name, c->last_err.msg);
		break;
	}
	pthread_mutex_unlock(&c->mu);
	return rc;
}

void credcache_invalidate(struct credcache *c)
{
	pthread_mutex_lock(&c->mu);
	credcache_wipe(c->value, c->value_size);
	c->have = false;
	c->expires_s = 0;
	c->next_try_s = 0;
	pthread_mutex_unlock(&c->mu);
}

void credcache_stats(struct credcache *c, struct credcache_stats *out)
{
	pthread_mutex_lock(&c->mu);
	*out = c->stats;
	pthread_mutex_unlock(&c->mu);
}

void credcache_free(struct credcache *c)
{
	if (!c)
		return;
	credcache_wipe(c->value, c->value_size);
	credcache_wipe(c->scratch, c->value_size);
	free(c->value);
	free(c->scratch);
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->mu);
	free(c);
}
