/*
 * informer: a local cache of one resource (nodes, pods,
 * PodDisruptionBudgets, namespaces, PersistentVolumeClaims,
 * PersistentVolumes, StorageClasses or DaemonSets, cluster-wide) kept
 * current the way client-go's reflector does it — paginated list, then
 * watch from the list's resourceVersion, relist on 410 (with a backoff once
 * they come in a row), back off and re-watch on failures — on a thread of
 * its own. Each informer says when its cache was last known in sync, for
 * callers that must not act on a stale view. The cache holds the model's
 * decoded structs, never JSON.
 * An informer set groups one of each and builds engine snapshots from them.
 * It knows nothing of reconciles: it calls a hook when the cache changes,
 * saying whether the change matters to scaling (informer_classify).
 * Informers talk to a real server, so they run on the real clock
 * (clock_real()); deadlines below are clock_now(clock_real()) nanoseconds.
 */
#ifndef LUASCALE_KUBE_INFORMER_H
#define LUASCALE_KUBE_INFORMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"
#include "runtime/backoff.h"

struct kube_client;
struct logger;
struct node_group;
struct snapshot;

/*
 * The resources watched. The first three are required: nothing is decided
 * without them. The others are optional (informer_kind_optional): the
 * daemon runs without one the API server refuses (403: RBAC) or does not
 * serve (404), its snapshot flag (volumes_known, namespaces_known,
 * daemonsets_known) false.
 */
enum informer_kind {
	INFORMER_NODES,
	INFORMER_PODS,
	INFORMER_PDBS,
	INFORMER_NAMESPACES,
	INFORMER_PVCS,
	INFORMER_PVS,
	INFORMER_STORAGE_CLASSES,
	INFORMER_DAEMONSETS,
};
#define INFORMER_KINDS 8

/* "nodes", "pods", "poddisruptionbudgets", "namespaces",
 * "persistentvolumeclaims", "persistentvolumes", "storageclasses",
 * "daemonsets" (the resource names RBAC rules use). */
const char *informer_kind_str(enum informer_kind k);

/* True for the kinds the daemon can run without (see enum informer_kind). */
bool informer_kind_optional(enum informer_kind k);

/*
 * What a change to the cache means to scaling, from least to most urgent
 * (a list or a batch of changes is the largest of its parts).
 */
enum informer_change {
	INFORMER_UNCHANGED,     /* no field the model decodes changed */
	INFORMER_CHANGED,       /* a change that scaling decisions may read */
	INFORMER_UNSCHEDULABLE, /* a pod became Unschedulable: it waits for capacity */
};

/* "unchanged", "changed", "unschedulable". */
const char *informer_change_str(enum informer_change c);

/*
 * Classifies one change of one object of 'kind': 'old' is the cached
 * version (NULL: the object is new), 'new' the one replacing it (NULL: it
 * was deleted); both are decoded objects of that kind (struct node, pod,
 * pdb, namespace_obj, pvc, pv, storage_class or daemonset), borrowed. The judgement is made on the decoded structs, so it
 * covers exactly the fields src/model_decode.c reads and nothing else:
 *
 *   INFORMER_UNSCHEDULABLE  a pod that now has PodScheduled=False with
 *                           reason Unschedulable and did not before (or is
 *                           new with it, or replaces a pod of another uid),
 *                           while it is pending as the snapshot counts it:
 *                           unbound, unfinished, not terminating, not a
 *                           DaemonSet's;
 *   INFORMER_CHANGED        added or deleted objects, and any other change
 *                           to a decoded field: a pod bound, its phase,
 *                           labels, annotations, owners, requests, selectors,
 *                           affinity, tolerations, priority, deletion; a node's
 *                           Ready condition, spec.unschedulable (cordon),
 *                           labels, annotations, taints, allocatable,
 *                           providerID; a PDB's selector, bounds or
 *                           status.disruptionsAllowed; a namespace's labels;
 *                           a claim's volumeName or class; a volume's labels
 *                           or node affinity; a class's binding mode or
 *                           allowedTopologies; a DaemonSet's template (any
 *                           field a pod is compared on);
 *   INFORMER_UNCHANGED      everything else: resourceVersion and managedFields
 *                           churn, node heartbeats (condition times, the
 *                           other conditions, images, addresses), pod
 *                           container statuses, IPs, conditions other than
 *                           PodScheduled=False, and a new PodScheduled
 *                           message on a pod that stays Unschedulable (the
 *                           scheduler rewording why: the cause is itself a
 *                           change of nodes or pods, classified there).
 *
 * Pure and thread-safe; never fails.
 */
enum informer_change informer_classify(enum informer_kind kind, const void *old, const void *new);

struct informer_opts {
	struct kube_client *client;   /* borrowed; must outlive the informer */
	const struct logger *log;     /* borrowed; NULL: silent */
	int page_size;                /* list page size; 0: 500 */
	long list_timeout_ms;         /* one list page request; 0: 60 s */
	struct backoff_policy backoff;/* initial_ns 0: 800 ms doubling to 30 s, jitter 0.5 */
	int64_t backoff_reset_ns;     /* failures are forgotten after this long
				       * without one; 0: 2 min */
	int watch_min_s, watch_max_s; /* watch timeoutSeconds drawn from
				       * [min, max); 0: [300, 600) */
	int64_t short_watch_ns;       /* a watch that ends cleanly sooner than
				       * this without one event counts as a
				       * failure (no hot loop); 0: 1 s, < 0: never */
	uint64_t seed;                /* jitter and watch timeouts; 0: from the clock */
	/* Called on the informer's thread after the cache changed (a list
	 * replaced it, an event changed an object), with what the change
	 * means (informer_classify; for a list, the largest over every object
	 * added, changed or gone): a reconcile trigger. Must not call back
	 * into the informer. May be NULL. */
	void (*on_change)(void *ctx, enum informer_kind kind, enum informer_change change);
	void *on_change_ctx;
	/* Called on the informer's thread when a list fails, before its
	 * backoff, with what failed ("list: GET <url, redacted>: <why>", or
	 * the server's answer): for a caller that says at once, and where the
	 * server came from, that the cluster cannot be read. Not called for an
	 * optional kind refused (403, 404). May be NULL. */
	void (*on_list_failed)(void *ctx, enum informer_kind kind, const char *what);
	void *on_list_failed_ctx;
};

/* Counters, for metrics and tests. */
struct informer_stats {
	uint64_t lists;     /* list passes completed (the cache was replaced) */
	uint64_t pages;     /* list page requests sent */
	uint64_t relists;   /* list passes started because a resourceVersion
			     * (410 on the watch) or a continue token expired */
	uint64_t watches;   /* watch requests sent */
	uint64_t events;    /* watch events received of type ADDED, MODIFIED,
			     * DELETED or BOOKMARK (decoded or skipped) */
	uint64_t errors;    /* failed requests and streams, each followed by a backoff */
	uint64_t skipped;   /* objects or events that could not be decoded: logged
			     * (naming the object and field) and left out; on a
			     * bad MODIFIED the last good version stays cached */
	uint64_t unchanged; /* ADDED, MODIFIED or DELETED events stored that changed no
			     * field the model decodes (INFORMER_UNCHANGED) */
	uint64_t objects;   /* objects in the cache now */
	bool synced;        /* the first list has completed */
	bool unavailable;   /* an optional kind the server refuses (403) or does
			     * not serve (404): the last list or watch said so,
			     * logged once; retried quietly with the backoff */
	bool running;       /* the thread has not ended */
	bool live;          /* a watch is open (2xx): the cache follows the server */
	int64_t in_sync_ns; /* clock_now(clock_real()) when the cache was last
			     * known in sync: a list completed, a watch opened,
			     * delivered an event or bookmark, or ended; 0: never */
	int64_t relist_delay_ns; /* the wait before the latest relist after a 410 */
};

struct informer;

/*
 * Returns an informer of 'kind' (not started) or NULL with a message.
 * 'opts' is copied; what it points to is borrowed.
 */
struct informer *informer_new(enum informer_kind kind, const struct informer_opts *opts,
			      struct errbuf *err);

/* Starts the informer's thread. Returns 0, or -1 with a message. Once only. */
int informer_start(struct informer *inf, struct errbuf *err);

/*
 * Asks the thread to end and joins it: an HTTP transfer in progress is
 * abandoned within about a second, a backoff wait at once. Safe to call
 * twice, and on an informer never started. The cache stays readable.
 */
void informer_stop(struct informer *inf);

/* Stops the informer and frees it and its cache. Snapshots built from it
 * stay valid (they hold their own references). NULL is a no-op. */
void informer_free(struct informer *inf);

/* Copies the counters. */
void informer_stats(struct informer *inf, struct informer_stats *out);

/* Copies the last resourceVersion seen (list, event or bookmark) into
 * 'out' ("" before the first list). */
void informer_resource_version(struct informer *inf, char *out, size_t outlen);

/*
 * Blocks until pred(stats, ctx) holds, the informer's thread ends, or
 * 'deadline_ns' passes; the predicate is
 * evaluated under the informer's lock whenever the counters change.
 * Returns 0 when it held, -1 otherwise.
 */
int informer_wait(struct informer *inf,
		  bool (*pred)(const struct informer_stats *st, void *ctx), void *ctx,
		  int64_t deadline_ns);

/*
 * How long the cache of 'inf' has not been known in sync at 'now_ns'
 * (clock_real() nanoseconds): 0 while a watch is open, the time since the
 * last list, watch event or bookmark otherwise, INT64_MAX before the first
 * list. An informer in backoff after errors ages.
 */
int64_t informer_staleness(struct informer *inf, int64_t now_ns);

/* ---- the retry schedule: pure logic on passed-in times ---- */

/*
 * When the informer's thread tries again, as client-go's reflector does:
 * after a failed request an exponential backoff (policy 'p' with jitter)
 * whose count is forgotten after 'reset_ns' without a failure and by a
 * successful list; after a 410 (the resourceVersion expired) a relist at
 * once the first time, then with the same exponential backoff for each
 * further 410 in a row, until 'reset_ns' pass without one.
 */
struct informer_retry {
	struct backoff_policy p;
	int64_t reset_ns;
	uint64_t rng;
	int failures;            /* failed requests in a row */
	int64_t calm_since;      /* end of the last failure's wait */
	int expired;             /* 410s in a row */
	int64_t last_expired;    /* the latest 410 */
};

/* A schedule with policy 'p' (copied; initial_ns > 0), jitter from 'seed'. */
void informer_retry_init(struct informer_retry *r, const struct backoff_policy *p,
			 int64_t reset_ns, uint64_t seed, int64_t now);

/* A request failed at 'now': returns the wait before the next try (> 0). */
int64_t informer_retry_failed(struct informer_retry *r, int64_t now);

/* The wait of a failure ended at 'now' (the calm period starts). */
void informer_retry_waited(struct informer_retry *r, int64_t now);

/* A list completed: the failure count is forgotten. */
void informer_retry_listed(struct informer_retry *r);

/* The resourceVersion expired (410) at 'now': returns the wait before the
 * relist (0 the first time in a row). */
int64_t informer_retry_expired(struct informer_retry *r, int64_t now);

/* ---- the informers the engine needs ---- */

struct informer_set;

/* One informer of each kind, with the same options. NULL with a message. */
struct informer_set *informer_set_new(const struct informer_opts *opts, struct errbuf *err);

/* Starts their threads (all or none). Returns 0, or -1 with a message. */
int informer_set_start(struct informer_set *set, struct errbuf *err);

/* Stops them all (in parallel: they are all asked first). */
void informer_set_stop(struct informer_set *set);

/*
 * Asks them all to stop without waiting for them (any thread, e.g. a
 * signal-handling thread): transfers end within about a second, backoff
 * waits and informer_set_wait_synced() at once. informer_set_stop() or
 * _free() still joins them.
 */
void informer_set_cancel(struct informer_set *set);

/*
 * Which informer has been out of sync the longest at 'now_ns' (clock_real()
 * ns), if longer than 'bound_ns': returns true and describes it in 'why'
 * ("pods: not in sync for 47 s (watch failing, 12 errors so far)"), else
 * false with 'why' "". An optional kind that is unavailable does not
 * count: snapshots say it is unknown instead.
 */
bool informer_set_stale(struct informer_set *set, int64_t now_ns, int64_t bound_ns,
			char *why, size_t whylen);

/* Stops and frees. NULL is a no-op. */
void informer_set_free(struct informer_set *set);

/* One of them, borrowed. */
struct informer *informer_set_get(struct informer_set *set, enum informer_kind kind);

/* True when every informer has completed its first list, or is of an
 * optional kind found unavailable. */
bool informer_set_synced(struct informer_set *set);

/*
 * Waits until informer_set_synced() holds ('deadline_ns' INT64_MAX: for as
 * long as it takes). Returns 0, or -1 when 'deadline_ns' passed, an
 * informer ended first or the set was cancelled (informer_set_cancel),
 * with a message: the last error of the first not synced, then those not
 * synced and their failed attempts.
 */
int informer_set_wait_synced(struct informer_set *set, int64_t deadline_ns,
			     struct errbuf *err);

/*
 * Builds a finished snapshot of the caches with 'groups' (deep-copied,
 * as snapshot_set_groups() takes them) at 'now' (unix seconds). Its
 * namespaces_known and daemonsets_known are set when that informer has
 * listed and is not unavailable, volumes_known when the claims', volumes'
 * and classes' all have. Each cache
 * is read under its lock, one after the other, so each is consistent in
 * itself while the informers keep running. Objects are not copied: the
 * snapshot takes a reference to each and drops them in snapshot_free(), so
 * it may outlive changes to the caches and the set itself. Before the set
 * is synced a cache may still be empty: wait for informer_set_wait_synced()
 * first. Returns the snapshot (the caller's: snapshot_free()) or NULL with
 * a message.
 */
struct snapshot *informer_snapshot(struct informer_set *set, const struct node_group *groups,
				   size_t n_groups, int64_t now, struct errbuf *err);

#endif
