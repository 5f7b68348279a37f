/*
 * binder: the opt-in binding of a packing's pods to the node launched for
 * them (provisioning.bind_pods). It follows launches through the
 * actuator's launch hooks (which pods were packed onto which new instance),
 * and once that instance's node is Ready and open to the pods, binds those
 * of them still unbound that still fit it, through the Binding API (never
 * a pod with constraints only its scheduler evaluates: POD_SCHEDULER_ONLY). It
 * owns those associations (bounded, dropped when bound, when the node goes
 * or when they time out); it does not decide what to launch.
 */
#ifndef LUASCALE_BINDER_H
#define LUASCALE_BINDER_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/actuator.h"
#include "engine/instruments.h"
#include "engine/kubeops.h"
#include "log.h"
#include "model.h"
#include "runtime/executor.h"

/* Pods followed at once, over every launch: a packing beyond is not
 * followed (logged), so the binder's memory stays bounded. */
#define BINDER_MAX_PODS 50000

struct binder_config {
	bool enabled;          /* provisioning.bind_pods; false: the binder does nothing */
	int64_t max_wait_s;    /* a packing waits this long for its node to be Ready and
				* open to its pods, from the launch (default 15m) */
	bool (*may_act)(void *ctx); /* a leader: asked before every bind; NULL: always */
	void *may_act_ctx;
	const struct instruments *ins; /* luascale_pod_bindings_total; NULL: none */
};

struct binder_stats {
	uint64_t bound;      /* pods bound by luascale */
	uint64_t conflicts;  /* 409: bound by someone else (the scheduler) first */
	uint64_t skipped;    /* not bound: bound already, gone, no longer fitting, or the
			      * node never became ready for them in time */
	uint64_t errors;     /* other failures (logged; left to the scheduler) */
	size_t followed;     /* pods followed now (in a packing not yet bound) */
};

/* Fills the defaults named above (enabled false). */
void binder_config_default(struct binder_config *c);

struct binder;

/* 'ex', 'kube' and 'log' are borrowed and must outlive it. Returns NULL
 * when out of memory. A kubeops without a bind op makes it do nothing
 * (logged once when enabled). */
struct binder *binder_new(struct executor *ex, const struct kubeops *kube,
			  const struct binder_config *cfg, const struct logger *log);

/* Frees it; call after the executor has shut down. NULL is a no-op. */
void binder_free(struct binder *b);

/* The hooks to give the actuator (actuator_config.hooks); they live as
 * long as the binder. NULL when the binder is disabled. */
const struct actuator_launch_hooks *binder_hooks(struct binder *b);

/*
 * Each round, on the round's snapshot (after actuator_observe): for every
 * followed instance whose node is now Ready, schedulable, not being
 * removed and without a NoSchedule/NoExecute taint its group's template
 * does not have, takes the pods of its packing that are still pending
 * (same uid) and still fit the node as it is (sched.c's predicates, its
 * bound pods' requests included, taking room pod by pod), and binds them
 * in the background; the rest is left to the scheduler (counted skipped).
 * Followed instances whose node went away or whose time ran out are
 * dropped. Does nothing when disabled.
 */
void binder_observe(struct binder *b, const struct snapshot *s);

void binder_get_stats(struct binder *b, struct binder_stats *out);

#endif
