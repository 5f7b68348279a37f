/*
 * actuator: turns a checked plan into work — launches through the provider
 * (in parallel, each instance recorded the moment it exists), node actions
 * through kubeops (cordon, label, taint, drain by eviction, delete after the
 * drain) — and keeps what is in flight between reconciles: instances that
 * have not become nodes yet count as upcoming capacity, instances that do
 * not become Ready nodes in max_provision_time are terminated and their
 * group backed off. Every outcome is logged with its reason and duration.
 * A drain re-checks every pod as fetched at that moment before it evicts
 * anything, and gives back (uncordons) a node it cordoned when the removal
 * does not finish; the cordons it makes carry an annotation so that a
 * later process gives back the ones left behind. Nodes it deleted are
 * remembered until the cluster cache shows them gone, so a stale cache
 * never gets them acted on twice.
 * All work runs on an executor; the actuator does not know whether it is
 * real or virtual time.
 */
#ifndef LUASCALE_ACTUATOR_H
#define LUASCALE_ACTUATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/instruments.h"
#include "engine/kubeops.h"
#include "log.h"
#include "model.h"
#include "policy/plan.h"
#include "providers/provider.h"
#include "runtime/backoff.h"
#include "runtime/executor.h"

/* The annotations on a node luascale cordoned for a removal: who, and when
 * (RFC 3339). Set in the same write as the cordon, removed with the uncordon. */
#define ACTUATOR_CORDON_MARK "luascale.io/cordoned-by"
#define ACTUATOR_CORDON_MARK_VALUE "luascale"
#define ACTUATOR_CORDON_TIME "luascale.io/cordoned-at"

/*
 * Told of every scale-up as it starts, of each instance it creates and of
 * its end: how what follows a launch (engine/binder.h: binding the pods
 * of its packing to its nodes) learns which instance came of which
 * launch. 'planned' runs on the caller of actuator_execute() with the
 * plan's snapshot and returns a token (NULL: this launch is not
 * followed); 'instance' and 'done' may run on any thread, 'done' exactly
 * once per token, last.
 */
struct actuator_launch_hooks {
	void *(*planned)(void *ctx, const char *group, int count, const struct snapshot *s);
	void (*instance)(void *ctx, void *token, const struct provider_instance *inst);
	void (*done)(void *ctx, void *token);
	void *ctx;
};

struct actuator_config {
	int64_t max_provision_s;  /* an instance must be a Ready node by then (default 900) */
	struct backoff_policy group_backoff; /* after a failed launch (5m, x2, 30m) */
	int64_t drain_timeout_s;  /* give up a drain after this (default 600) */
	int64_t eviction_retry_s; /* retry an eviction a PDB refused after this (default 5) */
	int64_t drain_poll_s;     /* look again at a draining node after this (default 2) */
	int64_t eviction_grace_s; /* grace period for evictions, -1: the pod's own (default -1) */
	int64_t max_concurrent_drains; /* drains at once (default 1); a removal beyond it
				   * is not started this round (logged) and left to a later one */
	const struct label_selector *protected_pods; /* pods a drain never evicts (NULL:
				   * none); borrowed, must outlive the actuator */
	bool dry_run;             /* log what would be done, do nothing */
	uint64_t seed;            /* for backoff jitter */
	/* Whether this process may act now (a leader); asked before every
	 * launch call and every node job step. While false, nothing new is
	 * started: a launch not yet asked for is dropped, a node job ends at
	 * its next step without another write (no give-back either: a
	 * cordon of luascale's is given back by whoever leads next). NULL:
	 * always. */
	bool (*may_act)(void *ctx);
	void *may_act_ctx;
	const struct instruments *ins; /* metrics; NULL: none. Borrowed */
	const struct actuator_launch_hooks *hooks; /* NULL: none. Borrowed */
};

/* Fills the defaults named above. */
void actuator_config_default(struct actuator_config *c);

struct config;

/* The defaults, with what the config's provisioning section sets. */
void actuator_config_from(struct actuator_config *out, const struct config *c);

/* The base of the daemon's work queue: node jobs and Kubernetes writes. */
#define ACTUATOR_BASE_WORKERS 8

/*
 * The work queue an actuator on a real cloud needs ('queue_cap' tasks at
 * most): ACTUATOR_BASE_WORKERS threads, growing while launches and other
 * tasks wait to as many as the provider's mutating bucket ('lim') can keep
 * busy with calls that each block for up to EXECUTOR_CALL_LATENCY_NS
 * (executor_workers_for_rate), so that the bucket, not the thread count,
 * sets the launch rate. Extra threads exit after 30 s idle. 'lim' NULL or
 * a qps <= 0: no limit is known, the largest pool.
 */
void actuator_pool_opts(struct executor_pool_opts *o, const struct provider_limits *lim,
			size_t queue_cap);

struct actuator_stats {
	uint64_t launch_requests;     /* provider launch calls */
	uint64_t instances_created;   /* per-instance callbacks */
	uint64_t launch_failures;     /* launch calls that ended with an error */
	uint64_t instances_registered;/* became Ready nodes */
	uint64_t instances_timed_out; /* terminated after max_provision_s */
	uint64_t orphans_found;       /* instances of a managed group without a node past
				       * max_provision_s by the cloud's launch time */
	uint64_t terminate_failures;  /* terminate calls that failed (each is retried) */
	size_t terminating;           /* instances without a node being terminated (retried until gone) */
	uint64_t node_actions;        /* cordon, uncordon, label, annotate, taint done */
	uint64_t evictions;           /* pods evicted */
	uint64_t evictions_refused;   /* 429s from PodDisruptionBudgets */
	uint64_t evictions_throttled; /* 429s from the API server's own limits */
	uint64_t evictions_failed;    /* other errors (tried again on the next pass) */
	uint64_t drains_done, drains_failed;
	uint64_t drains_deferred;     /* removals not started: max_concurrent_drains reached */
	uint64_t uncordoned;          /* cordons luascale made, given back (removal not finished) */
	uint64_t actions_dropped;     /* actions on nodes already deleted (a stale cache) */
	uint64_t nodes_deleted;
	uint64_t actions_failed;
	uint64_t actions_abandoned;   /* cancelled by shutdown */
	uint64_t replaces_started;    /* replaces whose new node was asked for */
	uint64_t replaces_done;       /* ... whose new node was Ready: the old node's removal started */
	uint64_t replaces_failed;     /* ... whose new node failed (the old node left as it was) */
	size_t replacing;             /* replaces under way */
	size_t in_flight_instances;   /* created, not yet nodes */
	size_t in_flight_requested;   /* asked for, not yet created or failed */
	size_t busy;                  /* launches and node jobs still running */
};

struct actuator;

/* 'ex', 'prov', 'kube' and 'log' are borrowed and must outlive it.
 * 'prov' or 'kube' may be NULL: actions needing them then fail, logged. */
struct actuator *actuator_new(struct executor *ex, struct provider *prov,
			      const struct kubeops *kube, const struct actuator_config *cfg,
			      const struct logger *log);

/* Frees the actuator. Call after the executor has shut down (no task of
 * the actuator may run any more); what was still in flight is logged. */
void actuator_free(struct actuator *a);

/*
 * Before a reconcile: matches in-flight instances to the snapshot's nodes
 * (by providerID: a Ready node ends the instance's flight), terminates and
 * backs off those older than max_provision_s (once per launch request),
 * sweeps the cloud's instances without nodes (actuator_cloud_instances),
 * tries again the terminations that failed (10 s doubling to 5 min, or
 * the cloud's Retry-After, which holds every launch and terminate), and
 * writes each group's target (registered + in flight, less the instances
 * being terminated) and backoff into 's'. Nodes being
 * removed, and nodes this actuator deleted that the cache still shows, are
 * marked removing. A node that carries luascale's cordon mark but has no
 * removal running here (left by a failed uncordon or an earlier process)
 * is uncordoned, in the background.
 */
void actuator_observe(struct actuator *a, struct snapshot *s);

/*
 * Starts carrying out an accepted plan made on 's' (may be NULL when the
 * plan has no node actions) and returns at once. Launches remember the
 * unschedulable pods of 's' they were made for (for the log).
 * Scale-ups start in parallel; the actions of one node run in plan order,
 * nodes in parallel. A delete drains first and happens only when the
 * drain finished. Actions on a node this actuator already deleted are
 * dropped (logged); a removal beyond max_concurrent_drains is not started
 * (the node's actions are left for a later round, logged).
 * Returns 0, or -1 when nothing could be queued (logged).
 */
int actuator_execute(struct actuator *a, const struct plan *p, const struct snapshot *s);

/*
 * Shutdown begins: from now on every node job ends at its next step
 * without doing more (a drain evicts nothing more), gives back the cordon
 * it made and is counted abandoned. Launches already asked for go on.
 * Call before executor_shutdown(), whose deadline bounds the give-backs.
 */
void actuator_stop(struct actuator *a);

void actuator_get_stats(struct actuator *a, struct actuator_stats *out);

/*
 * Logs, one warning each, every cloud call still in flight (launches
 * asked for and not answered, terminations) and every drain still
 * running, with 'why' (e.g. "leadership lost"); and the instances booting.
 * Returns how many calls and drains it named.
 */
size_t actuator_log_in_flight(struct actuator *a, const char *why);

/*
 * What the cloud lists now ('groups' from list_groups, copied), for the
 * next actuator_observe()'s sweep: an instance of a managed group (one in
 * the snapshot's groups) that no node maps to, launched longer than
 * max_provision_s ago by the cloud's own launch time (launched_wall), is
 * terminated — whoever launched it, this process before a restart
 * included — and no longer counts as upcoming; its group is backed off
 * once. At most half of a group's listed instances (above 2) are taken at
 * once: more looks like a cache or providerID fault and is only logged.
 * Call after every successful list_groups.
 */
void actuator_cloud_instances(struct actuator *a, const struct provider_group *groups, size_t n);

/* Calls fn for every instance in flight (created, not yet a node). */
void actuator_each_in_flight(struct actuator *a,
			     void (*fn)(void *ctx, const char *group, const char *id,
					const char *provider_id, int64_t launched),
			     void *ctx);

#endif
