/*
 * batcher: when to reconcile. Watch events mark the cluster dirty; a
 * reconcile is due once no event came for 'idle', or 'max' after the first
 * unhandled event at the latest, and every 'interval' regardless (the
 * periodic resync). struct batcher_window is the pure logic on times the
 * caller passes in (virtual time in tests); struct batcher wraps it for
 * threads: events from the informers, a blocking wait for the daemon's loop.
 * It does not reconcile; it only says when.
 */
#ifndef LUASCALE_ENGINE_BATCHER_H
#define LUASCALE_ENGINE_BATCHER_H

#include <stdbool.h>
#include <stdint.h>

#include "errbuf.h"

struct batcher_policy {
	int64_t idle_ns;     /* quiet time after the last event; 0: 1 s */
	int64_t max_ns;      /* after the first unhandled event at the latest; 0: 10 s */
	int64_t interval_ns; /* periodic resync after the last reconcile; 0: 10 s, < 0: none */
};

/* Why a reconcile is due (BATCH_NONE: it is not). */
enum batcher_reason {
	BATCH_NONE,
	BATCH_REQUESTED, /* batcher_window_request(): at once */
	BATCH_FIRST,     /* nothing has run yet */
	BATCH_MAX,       /* events kept coming for 'max' */
	BATCH_IDLE,      /* events, then quiet for 'idle' */
	BATCH_RESYNC,    /* 'interval' since the last reconcile */
};

/* "requested", "first", "max", "idle", "resync", "none". */
const char *batcher_reason_str(enum batcher_reason r);

/* ---- the window: pure logic, times in nanoseconds on any one clock ---- */

struct batcher_window {
	struct batcher_policy p; /* defaults filled in */
	bool dirty;              /* events since the last reconcile */
	bool ran;                /* a reconcile has run */
	bool requested;
	int64_t first_ns;        /* first unhandled event */
	int64_t last_ns;         /* latest event */
	int64_t last_run_ns;     /* latest reconcile */
};

/* A window with policy 'p' (NULL: defaults; idle is capped at max). The
 * first reconcile is due at once. */
void batcher_window_init(struct batcher_window *w, const struct batcher_policy *p);

/* An event (the cache changed) at 'now'. */
void batcher_window_event(struct batcher_window *w, int64_t now);

/* Asks for a reconcile as soon as possible (a reloaded policy, a signal). */
void batcher_window_request(struct batcher_window *w);

/* Whether a reconcile is due at 'now', and why. */
enum batcher_reason batcher_window_due(const struct batcher_window *w, int64_t now);

/*
 * The earliest time at which a reconcile becomes due if no further event
 * comes: 'now' when it is due already, INT64_MAX when nothing is pending
 * and there is no resync.
 */
int64_t batcher_window_next(const struct batcher_window *w, int64_t now);

/* A reconcile starts at 'now': the events so far are handled by it. */
void batcher_window_ran(struct batcher_window *w, int64_t now);

/* ---- the threaded wrapper, on the real clock (CLOCK_MONOTONIC) ---- */

struct batcher;

/* Returns a batcher with policy 'p' (NULL: defaults), or NULL with a message. */
struct batcher *batcher_new(const struct batcher_policy *p, struct errbuf *err);

/* Stops (waking the waiter) and frees. No call may be in flight. NULL is a no-op. */
void batcher_free(struct batcher *b);

/* An event, from any thread (cheap: wakes the waiter only when it changes
 * the deadline). */
void batcher_event(struct batcher *b);

/* A reconcile as soon as possible, from any thread. */
void batcher_request(struct batcher *b);

/* Makes batcher_wait() return BATCH_NONE, now and from then on. Any thread. */
void batcher_stop(struct batcher *b);

/*
 * Blocks until a reconcile is due, marks it started (the events so far are
 * its) and returns why; returns BATCH_NONE once batcher_stop() was called.
 * One waiting thread at a time.
 */
enum batcher_reason batcher_wait(struct batcher *b);

/* Events seen so far (for metrics and tests). */
uint64_t batcher_events(struct batcher *b);

#endif
