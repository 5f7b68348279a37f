/*
 * backoff: exponential backoff with jitter — the delay after the n-th
 * consecutive failure — and a per-key tracker that remembers failures and
 * when a key (a node group, a watch) may be tried again.
 */
#ifndef LUASCALE_BACKOFF_H
#define LUASCALE_BACKOFF_H

#include <stdbool.h>
#include <stdint.h>

struct backoff_policy {
	int64_t initial_ns; /* first delay */
	int64_t max_ns;     /* cap */
	double factor;      /* growth per failure, e.g. 2 */
	double jitter;      /* 0..1: the delay is scaled by a random factor in [1 - jitter, 1] */
};

/*
 * Delay after 'failures' consecutive failures (1 = the first): initial *
 * factor^(failures-1), capped at max, then jittered. 'rng' is the caller's
 * random state (deterministic for a seed); NULL means no jitter.
 */
int64_t backoff_delay(const struct backoff_policy *p, int failures, uint64_t *rng);

/* A small deterministic PRNG (splitmix64) for jitter. */
uint64_t backoff_rand(uint64_t *state);

/*
 * The per-key tracker: for each key (a node group, a watch) the number of
 * consecutive failures and the time from which it may be tried again.
 * Thread-safe (one mutex). Keys are copied; an entry is kept (reset) after
 * a success, so memory grows with the number of distinct keys only.
 */
struct backoff_tracker;

/* A tracker with a copy of policy 'p' and jitter seeded by 'seed' (same
 * seed, same sequence of calls: same delays). NULL when out of memory. */
struct backoff_tracker *backoff_tracker_new(const struct backoff_policy *p, uint64_t seed);
void backoff_tracker_free(struct backoff_tracker *t);

/*
 * Records one more consecutive failure of 'key' at 'now_ns'. Returns the
 * time from which the key may be tried again (now_ns + backoff_delay), or
 * -1 when out of memory (nothing recorded).
 */
int64_t backoff_tracker_fail(struct backoff_tracker *t, const char *key, int64_t now_ns);

/* Records a success: the key's failures are forgotten. */
void backoff_tracker_succeed(struct backoff_tracker *t, const char *key);

/* True when 'key' may be tried at 'now_ns' (no failure, or its delay is over). */
bool backoff_tracker_ready(struct backoff_tracker *t, const char *key, int64_t now_ns);

/* Consecutive failures of 'key' (0 when none or after a success). */
int backoff_tracker_failures(struct backoff_tracker *t, const char *key);

#endif
