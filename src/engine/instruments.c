/*
 * instruments: the families (one table of names and help texts) and the
 * few helpers that turn engine structs into samples.
 */
#include "engine/instruments.h"

#include <stdbool.h>
#include <string.h>

#include "model.h"

static const double instruction_buckets[] = {1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
static const double latency_buckets[] = {1, 5, 10, 30, 60, 120, 300, 600, 900, 1800, 3600};

/* 'f', noting in *bad when registering it failed. */
static struct metric *ok(bool *bad, struct metric *f)
{
	if (!f)
		*bad = true;
	return f;
}

int instruments_init(struct instruments *ins, struct metrics *m, const char *version)
{
	const double *sb = metrics_buckets_seconds;
	size_t sn = metrics_n_buckets_seconds;
	bool bad = false;

	memset(ins, 0, sizeof(*ins));
	ins->m = m;
	ins->build_info = ok(&bad, metrics_gauge(m, "luascale_build_info", "Always 1; the version luascale was built as.", "version"));
	ins->reconciles = ok(&bad, metrics_counter(m, "luascale_reconciles_total", "Reconcile rounds run by the leader, by outcome (ok, policy_error, error).", "outcome"));
	ins->reconcile_seconds = ok(&bad, metrics_histogram(m, "luascale_reconcile_duration_seconds", "Time of one reconcile round: cloud refresh, snapshot, policy, safety checks, handing the plan over.", NULL, sb, sn));
	ins->last_success = ok(&bad, metrics_gauge(m, "luascale_last_successful_reconcile_timestamp_seconds", "Unix time of the last round whose policy call succeeded.", NULL));
	ins->policy_seconds = ok(&bad, metrics_histogram(m, "luascale_policy_call_duration_seconds", "Time in the policy per round: building its view, reconcile(), reading the plan back.", NULL, sb, sn));
	ins->policy_instructions = ok(&bad, metrics_histogram(m, "luascale_policy_instructions", "Lua instructions one policy call used.", NULL, instruction_buckets, sizeof(instruction_buckets) / sizeof(instruction_buckets[0])));
	ins->policy_reloads = ok(&bad, metrics_counter(m, "luascale_policy_reloads_total", "Reloads of the config and policy, by SIGHUP or a file change, by outcome (ok; loosened: in place, and a safety value loosened; failed: the previous config and policy stay).", "outcome"));
	ins->planned = ok(&bad, metrics_counter(m, "luascale_actions_planned_total", "Actions the safety checks accepted, by type.", "type"));
	ins->executed = ok(&bad, metrics_counter(m, "luascale_actions_executed_total", "Actions carried out, by type.", "type"));
	ins->failed = ok(&bad, metrics_counter(m, "luascale_actions_failed_total", "Actions that failed or were abandoned, by type.", "type"));
	ins->rejections = ok(&bad, metrics_counter(m, "luascale_rejections_total", "Planned actions the safety checks refused, by the invariant they would break.", "invariant"));
	ins->launches = ok(&bad, metrics_counter(m, "luascale_launches_total", "Launch requests to the cloud, by group and outcome (ok, or the error class).", "group,outcome"));
	ins->launched = ok(&bad, metrics_counter(m, "luascale_launched_instances_total", "Instances the cloud created, by group.", "group"));
	ins->terminations = ok(&bad, metrics_counter(m, "luascale_terminations_total", "Terminate requests to the cloud, by group and outcome.", "group,outcome"));
	ins->pending_to_launch = ok(&bad, metrics_histogram(m, "luascale_pending_to_launch_seconds", "From the oldest unschedulable pod a scale-up was made for being created to the launch call.", NULL, latency_buckets, sizeof(latency_buckets) / sizeof(latency_buckets[0])));
	ins->launch_to_ready = ok(&bad, metrics_histogram(m, "luascale_launch_to_ready_seconds", "From an instance existing to its node being Ready, by group.", "group", latency_buckets, sizeof(latency_buckets) / sizeof(latency_buckets[0])));
	ins->group_min = ok(&bad, metrics_gauge(m, "luascale_node_group_min_size", "A node group's minimum size.", "group"));
	ins->group_max = ok(&bad, metrics_gauge(m, "luascale_node_group_max_size", "A node group's maximum size.", "group"));
	ins->group_target = ok(&bad, metrics_gauge(m, "luascale_node_group_target_size", "The size a node group converges to (registered plus upcoming).", "group"));
	ins->group_ready = ok(&bad, metrics_gauge(m, "luascale_node_group_ready_nodes", "Ready nodes of a node group.", "group"));
	ins->group_upcoming = ok(&bad, metrics_gauge(m, "luascale_node_group_upcoming_nodes", "Instances of a node group asked for or booting, not yet nodes.", "group"));
	ins->group_backoff = ok(&bad, metrics_gauge(m, "luascale_node_group_backoff", "1 while a node group is backed off after a failed launch.", "group"));
	ins->group_backoff_until = ok(&bad, metrics_gauge(m, "luascale_node_group_backoff_until_timestamp_seconds", "Unix time a node group's backoff ends, 0 when none.", "group"));
	ins->pending_pods = ok(&bad, metrics_gauge(m, "luascale_pending_pods", "Pods waiting for a node (unbound, unfinished, not DaemonSet pods).", NULL));
	ins->unschedulable_pods = ok(&bad, metrics_gauge(m, "luascale_unschedulable_pods", "Pending pods the scheduler marked Unschedulable.", NULL));
	ins->provider_calls = ok(&bad, metrics_counter(m, "luascale_provider_calls_total", "Calls to the cloud provider, by operation and outcome.", "operation,outcome"));
	ins->provider_seconds = ok(&bad, metrics_histogram(m, "luascale_provider_call_duration_seconds", "Time of calls to the cloud provider, by operation.", "operation", sb, sn));
	ins->provider_throttles = ok(&bad, metrics_counter(m, "luascale_provider_throttles_total", "Provider calls that ended throttled by the cloud, by operation.", "operation"));
	ins->ratelimit_wait = ok(&bad, metrics_counter(m, "luascale_rate_limiter_wait_seconds_total", "Time calls waited for a token of a rate limiter, by limiter.", "limiter"));
	ins->ratelimit_rate = ok(&bad, metrics_gauge(m, "luascale_rate_limiter_rate", "Tokens a second a rate limiter grants now (lowered after throttling).", "limiter"));
	ins->kube_writes_waiting = ok(&bad, metrics_gauge(m, "luascale_kube_writes_waiting", "Kubernetes API writes waiting for a token of the write limit.", NULL));
	ins->work_queue_workers = ok(&bad, metrics_gauge(m, "luascale_work_queue_workers", "Worker threads of the work queue (cloud calls, node jobs) now; more than the base while tasks wait behind slow calls.", NULL));
	ins->work_queue_busy = ok(&bad, metrics_gauge(m, "luascale_work_queue_busy_workers", "Worker threads running a task (a cloud call, a node job) now.", NULL));
	ins->work_queue_waiting = ok(&bad, metrics_gauge(m, "luascale_work_queue_waiting_tasks", "Tasks waiting for a worker thread now.", NULL));
	ins->work_queue_max = ok(&bad, metrics_gauge(m, "luascale_work_queue_max_workers", "The most worker threads the work queue may grow to.", NULL));
	ins->api_requests = ok(&bad, metrics_counter(m, "luascale_kube_api_requests_total", "Requests to the Kubernetes API, by verb and HTTP code (0: no answer).", "verb,code"));
	ins->watch_restarts = ok(&bad, metrics_counter(m, "luascale_watch_restarts_total", "Watches started again after the first, by resource.", "resource"));
	ins->relists = ok(&bad, metrics_counter(m, "luascale_relists_total", "Lists started again because a resourceVersion expired (410), by resource.", "resource"));
	ins->lists = ok(&bad, metrics_counter(m, "luascale_cache_lists_total", "Complete lists of a resource (the first, and every relist), by resource.", "resource"));
	ins->watch_errors = ok(&bad, metrics_counter(m, "luascale_watch_errors_total", "Failed list or watch requests (each followed by a backoff), by resource.", "resource"));
	ins->cache_synced = ok(&bad, metrics_gauge(m, "luascale_cache_synced", "1 once a resource's cache has been listed.", "resource"));
	ins->cache_unavailable = ok(&bad, metrics_gauge(m, "luascale_cache_unavailable", "1 while the API server refuses (403) or does not serve (404) an optional resource: luascale runs without it.", "resource"));
	ins->leader = ok(&bad, metrics_gauge(m, "luascale_leader", "1 while this process leads (may act), 0 on standby.", NULL));
	ins->leader_transitions = ok(&bad, metrics_counter(m, "luascale_leader_transitions_total", "Times this process started or stopped leading.", NULL));
	ins->log_dropped = ok(&bad, metrics_counter(m, "luascale_log_lines_dropped_total", "Log lines dropped because the log sink (stderr) did not take them in time.", NULL));
	ins->fenced_writes = ok(&bad, metrics_counter(m, "luascale_fenced_writes_total", "Writes to the cluster or a cloud not sent because this process did not hold a valid leader Lease at that moment.", NULL));
	ins->series_dropped = ok(&bad, metrics_counter(m, "luascale_metrics_series_dropped_total", "Samples dropped because a metric had too many label sets.", NULL));
	ins->bindings = ok(&bad, metrics_counter(m, "luascale_pod_bindings_total", "Pods of a packing bound by luascale to the node launched for them (provisioning.bind_pods), by outcome (bound; conflict: bound by the scheduler first; skipped: no longer pending or fitting, or the node not ready in time; error).", "outcome"));
	metric_set1(ins->build_info, version, 1);
	return bad ? -1 : 0;
}

static const struct {
	const char *text, *invariant;
} invariants[] = {
	{"(safety.do_not_disrupt_annotations)", "do_not_disrupt"},
	{"max_scale_down_per_round", "max_scale_down_per_round"},
	{"max_nodes_total", "max_nodes_total"},
	{"is at its max", "max_size"},
	{"above its max", "max_size"},
	{"below its min", "min_size"},
	{"backed off", "backoff"},
	{"PodDisruptionBudget ", "pdb"},
	{"is protected", "drain_blocked"},
	{"safe-to-evict", "drain_blocked"},
	{"local storage", "drain_blocked"},
	{"not managed by a controller", "drain_blocked"},
	{"no PodDisruptionBudget", "drain_blocked"},
	{"not in a managed node group", "unmanaged_node"},
	{"no node named", "unknown_target"},
	{"no node group named", "unknown_target"},
	{"already being", "conflict"},
	{"conflicts with", "conflict"},
	{"duplicate", "conflict"},
	{"in this plan", "conflict"},
	{"invalid", "invalid_action"},
	{"selects its nodes by that label key", "invalid_action"},
	{"larger than", "invalid_action"},
};

const char *instruments_invariant(const char *why)
{
	size_t i;

	if (!why)
		return "other";
	/* "no PodDisruptionBudget" is a drain blocker, not a PDB refusal */
	if (strstr(why, "no PodDisruptionBudget"))
		return "drain_blocked";
	for (i = 0; i < sizeof(invariants) / sizeof(invariants[0]); i++)
		if (strstr(why, invariants[i].text))
			return invariants[i].invariant;
	return "other";
}

void instruments_snapshot(const struct instruments *ins, const struct snapshot *s)
{
	size_t i, unsched = 0;

	if (!ins)
		return;
	for (i = 0; i < s->n_groups; i++) {
		const struct node_group *g = &s->groups[i];
		int upcoming = g->target > g->current ? g->target - g->current : 0;
		bool backoff = g->backoff_until > s->now;
		size_t k, ready = 0;

		for (k = 0; k < s->n_nodes; k++)
			ready += s->nodes[k].group == (int32_t)i && s->nodes[k].ready;
		metric_set1(ins->group_min, g->name, g->min);
		metric_set1(ins->group_max, g->name, g->max);
		metric_set1(ins->group_target, g->name, g->target);
		metric_set1(ins->group_ready, g->name, (double)ready);
		metric_set1(ins->group_upcoming, g->name, upcoming);
		metric_set1(ins->group_backoff, g->name, backoff);
		metric_set1(ins->group_backoff_until, g->name, backoff ? (double)g->backoff_until : 0);
	}
	for (i = 0; i < s->n_pending; i++)
		unsched += (s->pods[s->pending[i]].flags & POD_UNSCHEDULABLE) != 0;
	metric_set0(ins->pending_pods, (double)s->n_pending);
	metric_set0(ins->unschedulable_pods, (double)unsched);
}
