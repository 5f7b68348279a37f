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

#endif
