/*
 * instruments: the metric families luascale exports, registered in one
 * place, and helpers that record a snapshot's and a rejection's worth.
 * Labels are bounded (types, groups, invariants, outcomes; never node or
 * pod names). Where the values come from is the callers'. */
#ifndef LUASCALE_INSTRUMENTS_H
#define LUASCALE_INSTRUMENTS_H

#include "runtime/metrics.h"

struct snapshot;
struct verdict;

struct instruments {
	struct metrics *m;
	struct metric *build_info;
	struct metric *reconciles, *reconcile_seconds, *last_success;
	struct metric *policy_seconds, *policy_instructions, *policy_reloads;
	struct metric *planned, *executed, *failed, *rejections;
	struct metric *launches, *launched, *terminations;
	struct metric *pending_to_launch, *launch_to_ready;
	struct metric *group_min, *group_max, *group_target, *group_ready, *group_upcoming;
	struct metric *group_backoff, *group_backoff_until;
	struct metric *pending_pods, *unschedulable_pods;
	struct metric *provider_calls, *provider_seconds, *provider_throttles;
	struct metric *ratelimit_wait, *ratelimit_rate, *kube_writes_waiting;
	struct metric *work_queue_workers, *work_queue_busy, *work_queue_waiting, *work_queue_max;
	struct metric *api_requests, *watch_restarts, *relists, *lists, *watch_errors, *cache_synced;
	struct metric *cache_unavailable;
	struct metric *leader, *leader_transitions, *series_dropped;
	struct metric *fenced_writes, *log_dropped;
	struct metric *bindings;
	struct metric *unneeded_nodes, *evictions, *max_nodes_total;
	struct metric *cluster_cpu, *cluster_memory;
	struct metric *process_cpu, *process_rss, *process_fds, *process_max_fds, *process_start;
	struct metric *nodes_removed, *removal_seconds, *unremovable_nodes;
	struct metric *price_failures;
	struct metric *interruptions;
	struct metric *disruptions, *budget_remaining;
	struct metric *replacements; /* luascale_replacements_total{group,outcome} */
};

/*
 * Registers every family in 'm' (borrowed, must outlive 'ins'), sets build
 * info for 'version', and makes every series of a counter whose labels are
 * known in advance (outcomes, action types, invariants, eviction results)
 * at 0, so that an alert can compare with 0 instead of testing for absence.
 * Returns 0, or -1 (out of memory: the families that failed stay NULL and
 * record nothing).
 */
int instruments_init(struct instruments *ins, struct metrics *m, const char *version);

/*
 * The invariant a safety rejection's reason names, as a bounded label:
 * max_size, max_nodes_total, min_size, backoff, drain_blocked, pdb,
 * max_scale_down_per_round, unmanaged_node, unknown_target, conflict,
 * invalid_action, other.
 */
const char *instruments_invariant(const char *why);

/* Per-group sizes, backoff and nodes being removed (the launch and
 * termination counters of each group made at 0 with outcome "ok"), pending
 * and unschedulable pods, the cluster's CPU and memory (allocatable and
 * requested, over every node), from a snapshot the actuator has observed.
 * 'ins' may be NULL. */
void instruments_snapshot(const struct instruments *ins, const struct snapshot *s);

/*
 * From a round's verdict: the nodes whose drain or delete the safety checks
 * refused, each once (under its first refusal's invariant), by invariant
 * (every invariant's series set, 0 when none). 'ins' may be NULL.
 */
void instruments_verdict(const struct instruments *ins, const struct verdict *v);

/*
 * For every group of 's' that 'c' writes disruption budgets for, what they
 * leave now for each budgeted reason (empty, underutilized, drifted,
 * expired) into luascale_disruption_budget_remaining: +Inf while no active
 * budget limits the reason. (luascale_disruptions_total is the actuator's:
 * it counts what it did.) 'ins' may be NULL.
 */
struct config;
void instruments_budgets(const struct instruments *ins, const struct snapshot *s,
			 const struct config *c);

/*
 * The reason class of a removal from the reason the policy gave: empty
 * ("empty", "no pods"), underutilized ("utilization", "underutilized"),
 * drifted ("drift"), or policy (anything else).
 */
const char *instruments_removal_reason(const char *reason);

/*
 * A node of 'group' ("" or NULL: unknown) removed (its Node deleted) for
 * 'reason' (the policy's text, classed by instruments_removal_reason),
 * 'seconds' after its drain started (negative: not observed). 'ins' may
 * be NULL. Any thread.
 */
void instruments_removed(const struct instruments *ins, const char *group, const char *reason,
			 double seconds);

/*
 * The process_* families read from 'proc' (a procfs mount, "/proc" but in
 * tests): CPU time and start time from self/stat (start time by the boot
 * time in stat), resident memory from self/statm, open descriptors by
 * counting self/fd, the descriptor limit from self/limits. What cannot be
 * read is left as it was. 'ins' may be NULL.
 */
void instruments_process(const struct instruments *ins, const char *proc);

#endif
