/*
 * interruptions: the cloud's interruption notices (AWS's EventBridge queue,
 * the simulated cloud's) kept from round to round and marked on each
 * round's nodes as node.interruption. It reads the provider's notices and
 * decides nothing about them: what to do is the policy's. Notices a node
 * carries itself (GKE, Azure) are model_decode.c's.
 */
#ifndef LUASCALE_ENGINE_INTERRUPTIONS_H
#define LUASCALE_ENGINE_INTERRUPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "log.h"
#include "model.h"
#include "providers/provider.h"

struct instruments;

/* A notice is forgotten this long after its deadline (or after it was
 * received, when that is later or there is no deadline), whether or not a
 * node ever had it; a notice whose node was marked is forgotten as soon as
 * that node is gone. */
#define INTERRUPTIONS_KEEP_S 3600
/* At most this many notices are kept; past it the oldest received goes. */
#define INTERRUPTIONS_MAX 4096

struct interruptions;

/* NULL when out of memory. */
struct interruptions *interruptions_new(void);
/* NULL is a no-op. */
void interruptions_free(struct interruptions *t);

/*
 * How strong a kind is: terminated > stopping > spot_interruption >
 * scheduled_change > rebalance (the instance is going or gone, it is
 * stopping, it goes at a deadline, maintenance at a date, only a risk).
 */
int interruptions_kind_rank(enum provider_interruption_kind k);

/*
 * Takes notices 'v' (copied). A notice of an instance already known
 * replaces the kept one only when its kind is stronger (it is then logged
 * again by interruptions_mark); a weaker or equal one is dropped. Returns
 * how many were new or stronger, or -1 when out of memory (what fitted is
 * kept).
 */
int interruptions_add(struct interruptions *t, const struct provider_interruption *v, size_t n);

/*
 * Asks provider 'p' for its notices (its optional op interruptions; none:
 * 0) and adds them. A failed call is logged as a warning at 'now' and
 * returns -1 (the notices kept stay); else the number of notices the
 * provider returned. Call it only while this process leads: reading the
 * queue consumes it (the provider takes a mutating token).
 */
int interruptions_poll(struct interruptions *t, struct provider *p, const struct logger *log,
		       int64_t now);

/*
 * Marks the nodes of 's' (finished) that a kept notice names: a node whose
 * providerID is the notice's, or whose providerID ends in "/" and the
 * notice's instance id (AWS "aws:///zone/i-...", the simulator's
 * "sim://group/id"), gets interruption_kind (provider_interruption_kind_str)
 * and interruption_deadline, unless it carries a notice of its own already
 * (decoded from its conditions and taints). Then forgets the notices whose
 * node was marked before and is gone, and those older than
 * INTERRUPTIONS_KEEP_S (at s->now). Each notice (and each stronger kind of
 * it) is logged once at INFO with its instance, node, group, kind and
 * deadline, and counted in luascale_interruptions_total{group,kind} ('ins'
 * may be NULL). Returns how many nodes were marked.
 */
size_t interruptions_mark(struct interruptions *t, struct snapshot *s, const struct logger *log,
			  const struct instruments *ins);

/* How many notices are kept (for tests and status). */
size_t interruptions_count(const struct interruptions *t);

#endif
