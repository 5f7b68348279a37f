/*
 * sim/reacting: when pods first became Unschedulable and when launch calls
 * reached the cloud (with the nodes each made), on one clock, so a client
 * can time an autoscaler's reaction from outside. It only records.
 */
#ifndef LUASCALE_SIM_REACTING_H
#define LUASCALE_SIM_REACTING_H

#include <stddef.h>
#include <stdint.h>

struct buf;
struct sim_reacting;

/* A recorder keeping at most 'cap' pods and 'cap' launch calls (later ones
 * are counted as dropped). NULL when out of memory. */
struct sim_reacting *sim_reacting_new(size_t cap);

/* Frees it. NULL is a no-op. */
void sim_reacting_free(struct sim_reacting *r);

/* Pod ns/name (copied) is Unschedulable at 'at_ns': recorded the first time
 * only. Thread-safe. */
void sim_reacting_pod(struct sim_reacting *r, const char *ns, const char *name, int64_t at_ns);

/* A launch call of 'count' instances of 'group' (copied) arrived at
 * 'at_ns'. Returns its index for sim_reacting_node(), or -1 when not kept.
 * Thread-safe. */
long sim_reacting_launch(struct sim_reacting *r, const char *group, int count, int64_t at_ns);

/* Launch call 'call' (from sim_reacting_launch; -1 is ignored) made the
 * instance whose node registers as 'node' (copied). Thread-safe. */
void sim_reacting_node(struct sim_reacting *r, long call, const char *node);

/*
 * Appends the record as JSON to 'out':
 *   {"nowNs":N,"pods":[{"namespace","name","unschedulableNs"}],
 *    "launches":[{"group","count","arrivedNs","nodes":[...]}],"dropped":N}
 * Times are CLOCK_MONOTONIC nanoseconds. Thread-safe.
 */
void sim_reacting_json(struct sim_reacting *r, int64_t now_ns, struct buf *out);

#endif
