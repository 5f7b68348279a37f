/*
 * health: what /healthz and /readyz answer, from a few facts the daemon
 * reports (the loop came round, the caches synced, the election's state),
 * judged on an injected clock. It owns the rules and the page texts, not
 * the HTTP nor the facts' sources.
 */
#ifndef LUASCALE_HEALTH_H
#define LUASCALE_HEALTH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct buf;
struct clock;

struct health {
	struct clock *clock;      /* borrowed */
	int64_t limit_ns;         /* the loop may go this long without coming round */
	atomic_bool looping;      /* it has come round once */
	_Atomic int64_t progress_ns;
	atomic_bool synced;
};

/* The limit for a reconcile interval and a policy time limit (ms):
 * 3 intervals, at least 30 s, plus one policy call's limit. */
int64_t health_limit_ns(int64_t reconcile_ms, int64_t policy_timeout_ms);

/* Starts 'h' on 'clock' (borrowed) with 'limit_ns'. */
void health_init(struct health *h, struct clock *clock, int64_t limit_ns);

/* The loop came round now. Any thread. */
void health_progress(struct health *h);

/* The caches are synced. Any thread. */
void health_synced(struct health *h);

/*
 * /healthz: 200 while starting (the loop has not come round yet: the first
 * sync has its own time limit) and while the loop came round within the
 * limit; 503 after. Appends the reason to 'body'.
 */
int health_live(struct health *h, struct buf *body);

/* The election as /readyz sees it. */
struct health_election {
	bool on;          /* leader election is enabled */
	bool observed;    /* the Lease has been read at least once */
	bool leading;
	const char *holder; /* "" unknown */
	const char *stale;  /* the cache out of sync now (the informers' own words), or NULL/"" */
};

/*
 * /readyz: 503 until the caches are synced and (with election on) the
 * Lease has been read; then 200, leading or a synced standby. 'e' may be
 * NULL (no election). Appends the reason to 'body'.
 */
int health_ready(struct health *h, const struct health_election *e, struct buf *body);

#endif
