/*
 * ratelimit: a token bucket (qps tokens a second, at most 'burst' saved),
 * fair across callers: each acquire reserves the next free token slot in
 * the order the calls arrive, so no caller starves. Blocking acquire for
 * real-time worker threads; asynchronous acquire for code that must not
 * block (virtual time). Time comes from a struct clock.
 */
#ifndef LUASCALE_RATELIMIT_H
#define LUASCALE_RATELIMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/clock.h"
#include "runtime/executor.h"

struct ratelimit;

/* A bucket that starts full. qps > 0, burst >= 1. NULL on bad values/OOM. */
struct ratelimit *ratelimit_new(struct clock *c, double qps, int burst);
void ratelimit_free(struct ratelimit *rl);

/*
 * Reserves a token. Returns the time (clock ns) from which the caller may
 * go ahead — now when a token is saved — or -1 when that would be later
 * than 'deadline_ns' (nothing is reserved then).
 */
int64_t ratelimit_reserve(struct ratelimit *rl, int64_t deadline_ns);

struct fence;

/*
 * Puts the bucket behind a write fence (runtime/fence.h; borrowed, NULL
 * none): from then on a token is granted only while the fence holds —
 * asked before the reservation and again when the wait ends, and a wait
 * ends at once when the fence closes or lapses. Set before the bucket is
 * shared between threads.
 */
void ratelimit_set_fence(struct ratelimit *rl, struct fence *f);

/* ratelimit_acquire()'s answer when the bucket's fence does not hold. */
#define RATELIMIT_FENCED (-2)

/*
 * Blocking acquire: reserves and sleeps on the clock until the reserved
 * time. Returns 0, -1 when the deadline would pass first (no token
 * taken, returns at once), or RATELIMIT_FENCED when the bucket's fence
 * does not hold or stops holding during the wait. Real clocks only
 * (without a fence).
 */
int ratelimit_acquire(struct ratelimit *rl, int64_t deadline_ns);

/*
 * Asynchronous acquire: reserves and runs fn(arg, false) on 'ex' at the
 * reserved time. When the deadline would pass first, or the bucket's fence
 * does not hold at the reserved time, fn runs with cancelled = true. Returns 0, or -1 when 'ex' refused the task (fn not
 * called).
 */
int ratelimit_acquire_async(struct ratelimit *rl, struct executor *ex, int64_t deadline_ns,
			    task_fn fn, void *arg);

/*
 * Feedback from the server the bucket protects. ratelimit_throttled(): a
 * call was refused for its rate (RequestLimitExceeded, 429): the rate in
 * force halves, down to 1/16 of the configured one, and the tokens saved
 * up are dropped, so the retry and every caller queued behind it slow
 * down. ratelimit_succeeded(): a call went through: the rate climbs back by
 * a tenth of the configured one, never above it. Reservations already made
 * keep their times.
 */
void ratelimit_throttled(struct ratelimit *rl);
void ratelimit_succeeded(struct ratelimit *rl);

/* The rate in force, tokens a second (the configured one unless throttled). */
double ratelimit_rate(struct ratelimit *rl);

/* Calls granted so far (for metrics and tests). */
uint64_t ratelimit_granted(const struct ratelimit *rl);

/* Nanoseconds that granted reservations had to wait for their token, in
 * total (a reservation given back still counts; for metrics). */
int64_t ratelimit_waited_ns(const struct ratelimit *rl);

#endif
