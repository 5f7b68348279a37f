/*
 * recorder: Events on pods, aggregated as client-go's correlator does (a
 * repeat is a count, similar ones are combined, a bucket per pod), sent from
 * a thread of their own so that nobody waits. What they say is the caller's.
 */
#ifndef LUASCALE_RECORDER_H
#define LUASCALE_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"
#include "kube/client.h"
#include "log.h"
#include "runtime/clock.h"

#define RECORDER_MESSAGE_MAX 1024 /* bytes of a message kept (cut on a character) */

struct recorder_opts {
	struct kube_client *client;  /* borrowed, outlives the recorder */
	const char *component;       /* source.component, default "luascale" */
	const struct logger *log;    /* failures, at most one line a minute */
	struct clock *clock;         /* NULL: the real clock (wall seconds for timestamps) */
	size_t cache_size;           /* Events remembered, least recently used out, default 4096 */
	size_t queue_max;            /* writes waiting, more are dropped, default 1024 */
	int spam_burst;              /* Events a pod may get at once, default 25 */
	int64_t spam_refill_s;       /* one more every, default 300 */
	int aggregate_max;           /* distinct messages of one pod and reason in ... */
	int64_t aggregate_window_s;  /* ... this long before they are combined: 10, 600 */
	double qps;                  /* the thread's writes a second, default 2 ... */
	int burst;                   /* ... with up to this many at once, default 10; it
				      * also lets the client's other writes (cordons,
				      * evictions) waiting for the write rate limit go first */
	bool no_thread;              /* tests: nothing is sent until recorder_flush() */
};

struct recorder;

/* A recorder (its thread started unless no_thread), active from the
 * start. NULL with why. */
struct recorder *recorder_new(const struct recorder_opts *o, struct errbuf *err);

/* Stops the thread and frees; writes still queued are dropped. NULL ok. */
void recorder_free(struct recorder *r);

enum recorder_outcome {
	RECORDER_QUEUED,     /* a new Event, or the count of an earlier one, to be written */
	RECORDER_SPAM,       /* the pod's bucket is empty: dropped */
	RECORDER_FULL,       /* the queue is full: dropped */
	RECORDER_INACTIVE,   /* not the process that acts: dropped */
	RECORDER_INVALID,    /* no namespace, name or reason */
};

/*
 * Records an Event of 'type' ("Normal" or "Warning"), 'reason' and
 * 'message' on pod 'ns'/'name' ('uid' may be NULL or "", but kubectl
 * describe finds Events by uid). Never blocks on the network: the write
 * is queued. Any thread.
 */
enum recorder_outcome recorder_pod_event(struct recorder *r, const char *ns, const char *name,
					 const char *uid, const char *type, const char *reason,
					 const char *message);

/* Sends every queued write on the calling thread; returns how many were
 * sent (tests, with no_thread). */
size_t recorder_flush(struct recorder *r);

/* Whether this process records (the one that acts). Any thread. */
void recorder_set_active(struct recorder *r, bool active);

struct recorder_stats {
	uint64_t created;      /* POSTs that succeeded */
	uint64_t patched;      /* count updates that succeeded */
	uint64_t failed;       /* writes the API server refused or did not answer */
	uint64_t spam;         /* dropped by a pod's bucket */
	uint64_t full;         /* dropped on a full queue */
	uint64_t aggregated;   /* recorded as a combined Event */
};

void recorder_get_stats(struct recorder *r, struct recorder_stats *st);

#endif
