/*
 * fence: whether this process may write now. The holder of a lease (the
 * leader elector) opens the fence until a deadline on the process's own
 * monotonic clock — the start of its last successful renewal plus the
 * renew deadline — and closes it when it steps down. Every write to the
 * cluster or a cloud asks the fence right before it goes out; waits for a
 * rate-limit token end at once when the fence closes or lapses. Because
 * the deadline is read from the clock at each ask, a process that was
 * paused (SIGSTOP, a stalled VM) finds its fence lapsed before its next
 * write, whatever its other threads have noticed yet.
 * Thread-safe. A NULL fence always holds (no leader election).
 */
#ifndef LUASCALE_FENCE_H
#define LUASCALE_FENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/clock.h"

struct fence;

/* A closed fence on 'c' (borrowed). NULL when out of memory. */
struct fence *fence_new(struct clock *c);
void fence_free(struct fence *f);

/* Opens the fence until 'until_ns' (clock time). A deadline earlier than
 * the one in force is taken too (a later renewal that started earlier
 * cannot happen: callers pass start-of-renewal times in order). */
void fence_open_until(struct fence *f, int64_t until_ns);

/* Closes the fence and wakes every waiter. */
void fence_close(struct fence *f);

/* Whether a write may go out now. */
bool fence_holds(const struct fence *f);

/* Why a write was refused, for the caller's error message: "this process
 * does not lead (the fence closed)" or "... its lease lapsed N.N s ago". */
void fence_why(const struct fence *f, char *out, size_t outlen);

/* The clock time until which the fence holds (INT64_MIN when closed). */
int64_t fence_deadline(const struct fence *f);

/* Calls fn(ctx) from fence_close() (on the closing thread, no lock held),
 * so a caller waiting on its own condition variable wakes up. At most
 * FENCE_MAX_LISTENERS; returns 0, or -1 when full. */
#define FENCE_MAX_LISTENERS 8
int fence_listen(struct fence *f, void (*fn)(void *ctx), void *ctx);

/* Removes a listener (no-op when it is not one); after it returns, fn is
 * not running and will not run for it. */
void fence_unlisten(struct fence *f, void (*fn)(void *ctx), void *ctx);

/*
 * Waits until the clock reaches 'at_ns'. Returns 0 then, or -1 at once
 * when the fence closes or lapses first (also when it does not hold on
 * entry). A NULL fence waits on the clock alone. Real clocks sleep;
 * virtual clocks are looked at every 10 ms of real time.
 */
int fence_sleep_until(struct fence *f, struct clock *c, int64_t at_ns);

/* Writes refused so far (for metrics and tests). */
uint64_t fence_refused(const struct fence *f);

/* Counts one refused write. */
void fence_count_refusal(struct fence *f);

#endif
