/*
 * credcache: one cached credential with an expiry, refreshed through a
 * callback, shared by every cloud (AWS keys, GCE and Azure bearer tokens).
 * Owns the cached copy, the refresh windows and the locking; it knows
 * nothing of what the value holds nor of how it is fetched.
 */
#ifndef LUASCALE_CREDCACHE_H
#define LUASCALE_CREDCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"
#include "log.h"
#include "runtime/clock.h"

/* An expiry meaning "never expires" (static keys): never refreshed. */
#define CREDCACHE_NEVER INT64_MAX

/* Refresh windows, in seconds before expiry, as the clouds' SDKs use them. */
#define CREDCACHE_AWS_ADVISORY_S (15 * 60)
#define CREDCACHE_AWS_MANDATORY_S (10 * 60)
#define CREDCACHE_TOKEN_ADVISORY_S (5 * 60)
#define CREDCACHE_TOKEN_MANDATORY_S (5 * 60)

/*
 * Fetches a fresh value into 'value' ('value_size' bytes, zeroed before the
 * call) and its expiry into '*expires_s' (unix seconds, or CREDCACHE_NEVER).
 * Returns 0, or -1 with a message in 'err' that carries no secret. Called
 * without the cache's lock held, never twice at once for one cache.
 */
typedef int (*credcache_refresh_fn)(void *ud, void *value, int64_t *expires_s,
				    struct errbuf *err);

struct credcache_opts {
	const char *name;            /* for log lines: "aws credentials" */
	size_t value_size;           /* bytes of one value (a struct) */
	credcache_refresh_fn refresh;
	void *ud;                    /* handed to 'refresh' */
	/* Within 'advisory_s' of expiry one caller refreshes while the others
	 * keep using the current value; within 'mandatory_s' every caller
	 * waits for the refresh. 0 and 0 take the AWS windows. */
	int64_t advisory_s;
	int64_t mandatory_s;
	/* After a failed refresh, a still-valid value is served without a new
	 * attempt for this long (seconds; 0 takes 30). */
	int64_t retry_s;
	struct clock *clock;         /* all time; NULL: the real clock */
	const struct logger *log;    /* NULL: silent */
};

/* Counters for metrics and tests. */
struct credcache_stats {
	uint64_t refreshes;     /* successful refreshes */
	uint64_t failures;      /* failed refreshes */
	uint64_t waits;         /* callers that waited for another's refresh */
	uint64_t stale_served;  /* values served after a failed refresh */
};

struct credcache;

/* Creates an empty cache (the first credcache_get refreshes). Returns NULL
 * with a message in 'err' when the options are invalid or out of memory. */
struct credcache *credcache_new(const struct credcache_opts *o, struct errbuf *err);

/*
 * Copies a valid value into 'out' (value_size bytes) and its expiry into
 * '*expires_s' (may be NULL), refreshing first when the value is missing
 * or inside a refresh window. A failed refresh keeps serving the current
 * value until it really expires (with a warning in the log); once there is
 * no valid value, returns -1 with the refresh's error in 'err'. Thread-safe.
 */
int credcache_get(struct credcache *c, void *out, int64_t *expires_s, struct errbuf *err);

/* Forgets the cached value (wiped), so the next credcache_get refreshes:
 * for a cloud that refused the credential as expired or revoked. */
void credcache_invalidate(struct credcache *c);

/* Copies the counters. */
void credcache_stats(struct credcache *c, struct credcache_stats *out);

/* Wipes the cached value and frees the cache. NULL is a no-op. No call may
 * be running on it. */
void credcache_free(struct credcache *c);

/* Overwrites 'n' bytes at 'p' with zeros in a way the compiler keeps. */
void credcache_wipe(void *p, size_t n);

#endif
