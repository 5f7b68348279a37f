/*
 * batcher: when to reconcile. Watch events mark the cluster dirty; a
 * reconcile is due once no event came for 'idle', or 'max' after the first
 * unhandled event at the latest, 'new_pod' after a pod became
 * Unschedulable at the latest, and every 'interval' regardless (the
 * periodic resync). Which event is which is the caller's to say (the
 * informers classify them); changes that matter to no decision are not
 * events. struct batcher_window is the pure logic on times the
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
	int64_t new_pod_ns;  /* after a pod became Unschedulable at the latest; 0: 100 ms,
			      * < 0: none (such a pod waits like any change); capped at idle */
};

/* Why a reconcile is due (BATCH_NONE: it is not). */
enum batcher_reason {
	BATCH_NONE,
	BATCH_REQUESTED, /* batcher_window_request(): at once */
	BATCH_FIRST,     /* nothing has run yet */
	BATCH_MAX,       /* events kept coming for 'max' */
	BATCH_IDLE,      /* events, then quiet for 'idle' */
	BATCH_NEW_POD,   /* 'new_pod' since a pod became Unschedulable */
	BATCH_RESYNC,    /* 'interval' since the last reconcile */
};

/* "requested", "first", "max", "idle", "new_pod", "resync", "none". */
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
	bool new_pod;            /* a pod became Unschedulable since the last reconcile */
	int64_t new_pod_first_ns;/* the first such pod */
};

/* A window with policy 'p' (NULL: defaults; idle is capped at max). The
 * first reconcile is due at once. */
void batcher_window_init(struct batcher_window *w, const struct batcher_policy *p);

/* An event at 'now': the cache changed in a way that matters to scaling.
 * It (re)starts the idle wait. */
void batcher_window_event(struct batcher_window *w, int64_t now);

/* A pod became Unschedulable at 'now' (an event as well): a reconcile is
 * due 'new_pod' after the first such pod since the last reconcile at the
 * latest, whatever else keeps coming. */
void batcher_window_new_pod(struct batcher_window *w, int64_t now);

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

/* A pod became Unschedulable (batcher_window_new_pod), from any thread. */
void batcher_new_pod(struct batcher *b);

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

/* Events seen so far, new pods included (for metrics and tests). */
uint64_t batcher_events(struct batcher *b);

#endif
