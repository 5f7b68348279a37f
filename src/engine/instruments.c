/*
 * instruments: the families (one table of names and help texts) and the
 * few helpers that turn engine structs into samples.
 */
#include "engine/instruments.h"

#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/safety.h"
#include "model.h"
#include "policy/plan.h"

static const double instruction_buckets[] = {1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
static const double latency_buckets[] = {1, 5, 10, 30, 60, 120, 300, 600, 900, 1800, 3600};

/* 'f', noting in *bad when registering it failed. */
static struct metric *ok(bool *bad, struct metric *f)
{
	if (!f)
		*bad = true;
	return f;
}

static const char *const round_outcomes[] = {"ok", "policy_error", "error"};
static const char *const reload_outcomes[] = {"ok", "loosened", "failed"};
static const char *const binding_outcomes[] = {"bound", "conflict", "skipped", "error"};
static const char *const eviction_results[] = {"ok", "pdb_blocked", "throttled", "failed"};
static const char *const removal_reasons[] = {"empty", "underutilized", "drifted", "policy"};
static const char *const invariant_labels[] = {
	"max_size", "max_nodes_total", "min_size", "backoff", "drain_blocked", "do_not_disrupt", "pdb",
	"max_scale_down_per_round", "no_room", "unmanaged_node", "unknown_target", "conflict", "invalid_action",
	"disruption_budget", "other",
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Adds 0 to each of 'n' series of a one-label family: they exist, at 0. */
static void zero1(struct metric *f, const char *const *values, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		metric_add(f, &values[i], 0);
}

static void zero_known_labels(struct instruments *ins)
{
	int t;

	zero1(ins->reconciles, round_outcomes, N(round_outcomes));
	zero1(ins->policy_reloads, reload_outcomes, N(reload_outcomes));
	zero1(ins->bindings, binding_outcomes, N(binding_outcomes));
	zero1(ins->evictions, eviction_results, N(eviction_results));
	zero1(ins->rejections, invariant_labels, N(invariant_labels));
	zero1(ins->unremovable_nodes, invariant_labels, N(invariant_labels));
	for (t = 0; t < ACTION_TYPE_COUNT; t++) {
		const char *v[1] = {action_type_str((enum action_type)t)};

		metric_add(ins->planned, v, 0);
		metric_add(ins->executed, v, 0);
		metric_add(ins->failed, v, 0);
	}
	/* a termination that failed after its node's delete */
	metric_add(ins->failed, (const char *const[]){"terminate"}, 0);
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
	ins->unneeded_nodes = ok(&bad, metrics_gauge(m, "luascale_unneeded_nodes", "Nodes of a node group being removed: a drain or delete of them accepted and not finished.", "group"));
	ins->evictions = ok(&bad, metrics_counter(m, "luascale_evictions_total", "Pod evictions asked for by drains, by result (ok; pdb_blocked: refused by a PodDisruptionBudget; throttled: refused by the API server's own limits; failed: any other error), each tried again later.", "result"));
	ins->max_nodes_total = ok(&bad, metrics_gauge(m, "luascale_max_nodes", "The safety cap on nodes in managed groups (safety.max_nodes_total) luascale started with, 0 for none.", NULL));
	ins->cluster_cpu = ok(&bad, metrics_gauge(m, "luascale_cluster_cpu_cores", "CPU of every node, by kind (capacity: allocatable; requested: by the pods bound there).", "kind"));
	ins->cluster_memory = ok(&bad, metrics_gauge(m, "luascale_cluster_memory_bytes", "Memory of every node, by kind (capacity: allocatable; requested: by the pods bound there).", "kind"));
	ins->process_cpu = ok(&bad, metrics_counter(m, "process_cpu_seconds_total", "User and system CPU time the process used.", NULL));
	ins->process_rss = ok(&bad, metrics_gauge(m, "process_resident_memory_bytes", "Resident memory of the process.", NULL));
	ins->process_fds = ok(&bad, metrics_gauge(m, "process_open_fds", "File descriptors the process has open.", NULL));
	ins->process_max_fds = ok(&bad, metrics_gauge(m, "process_max_fds", "The process's limit on open file descriptors (soft).", NULL));
	ins->process_start = ok(&bad, metrics_gauge(m, "process_start_time_seconds", "Unix time the process started.", NULL));
	ins->nodes_removed = ok(&bad, metrics_counter(m, "luascale_nodes_removed_total", "Nodes removed (their Node deleted), by group and reason class (empty, underutilized, drifted, policy).", "group,reason"));
	ins->removal_seconds = ok(&bad, metrics_histogram(m, "luascale_node_removal_duration_seconds", "From the start of a node's drain to its Node deleted (its instance terminated first).", NULL, latency_buckets, sizeof(latency_buckets) / sizeof(latency_buckets[0])));
	ins->disruptions = ok(&bad, metrics_counter(m, "luascale_disruptions_total", "Disruptions done: cordons of nodes not cordoned yet, drains, deletes, NoExecute taints and replaces (counted when the old node's removal starts), by group, disruption reason (empty, underutilized, drifted, expired, interrupted) and action.", "group,reason,action"));
	ins->replacements = ok(&bad, metrics_counter(m, "luascale_replacements_total", "Replaces (plan:replace) by the old node's group and outcome: started (the new node is asked for), replaced (the new node is Ready and the old one's removal started), failed (the new node did not launch or was not Ready in max_provision_time: the old node is left as it was), gone (the old node went away first).", "group,outcome"));
	ins->budget_remaining = ok(&bad, metrics_gauge(m, "luascale_disruption_budget_remaining", "Nodes of a group the disruption budgets (the group's, the top level's, else the default of 10 %) let be disrupted now for a reason, less those being drained, deleted or replaced; +Inf while no active budget limits the reason.", "group,reason"));
	ins->interruptions = ok(&bad, metrics_counter(m, "luascale_interruptions_total", "Interruption notices from the cloud (AWS's interruption queue, the simulator's), each counted once by its node group (empty when no managed group has the instance) and kind (spot_interruption, rebalance, scheduled_change, stopping, terminated; a stronger kind for the same instance counts again).", "group,kind"));
	ins->price_failures = ok(&bad, metrics_counter(m, "luascale_price_refresh_failures_total", "Refreshes of the cloud's prices that failed (the last prices stay in use), by provider.", "provider"));
	ins->unremovable_nodes = ok(&bad, metrics_gauge(m, "luascale_unremovable_nodes", "Nodes whose drain or delete the safety checks refused in the last round, by the invariant it would break.", "reason"));
	metric_set1(ins->build_info, version, 1);
	zero_known_labels(ins);
	return bad ? -1 : 0;
}

static const struct {
	const char *text, *invariant;
} invariants[] = {
	{"(safety.do_not_disrupt_annotations)", "do_not_disrupt"},
	{"(safety.evicted_pods_must_fit)", "no_room"},
	{"disruption budget of group", "disruption_budget"},
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
	{"is not one of group", "invalid_action"},
	{"launches one type only", "invalid_action"},
	{"has no interruption notice", "invalid_action"},
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

/* Nodes of group 'g' a drain or delete of which is in progress. */
static size_t removing_in(const struct snapshot *s, int32_t g)
{
	size_t k, n = 0;

	for (k = 0; k < s->n_nodes; k++)
		n += s->nodes[k].group == g && s->nodes[k].removing;
	return n;
}

void instruments_snapshot(const struct instruments *ins, const struct snapshot *s)
{
	size_t i, unsched = 0;
	double cpu_cap = 0, cpu_req = 0, mem_cap = 0, mem_req = 0;

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
		metric_set1(ins->unneeded_nodes, g->name, (double)removing_in(s, (int32_t)i));
		metric_add(ins->launched, (const char *const[]){g->name}, 0);
		metric_add(ins->launches, (const char *const[]){g->name, "ok"}, 0);
		metric_add(ins->terminations, (const char *const[]){g->name, "ok"}, 0);
		for (k = 0; k < N(removal_reasons); k++)
			metric_add(ins->nodes_removed, (const char *const[]){g->name, removal_reasons[k]}, 0);
	}
	for (i = 0; i < s->n_nodes; i++) {
		cpu_cap += (double)s->nodes[i].allocatable.cpu_m;
		cpu_req += (double)s->nodes[i].requested.cpu_m;
		mem_cap += (double)s->nodes[i].allocatable.memory;
		mem_req += (double)s->nodes[i].requested.memory;
	}
	metric_set1(ins->cluster_cpu, "capacity", cpu_cap / 1000);
	metric_set1(ins->cluster_cpu, "requested", cpu_req / 1000);
	metric_set1(ins->cluster_memory, "capacity", mem_cap);
	metric_set1(ins->cluster_memory, "requested", mem_req);
	for (i = 0; i < s->n_pending; i++)
		unsched += (s->pods[s->pending[i]].flags & POD_UNSCHEDULABLE) != 0;
	metric_set0(ins->pending_pods, (double)s->n_pending);
	metric_set0(ins->unschedulable_pods, (double)unsched);
}

/* Whether rejection 'i' refuses a node's removal that no earlier one did. */
static bool first_removal_refused(const struct verdict *v, size_t i)
{
	const struct action *a = &v->rejected[i].action;
	size_t k;

	if ((a->type != ACTION_DRAIN && a->type != ACTION_DELETE && a->type != ACTION_REPLACE) ||
	    !a->node)
		return false;
	for (k = 0; k < i; k++) {
		const struct action *b = &v->rejected[k].action;

		if ((b->type == ACTION_DRAIN || b->type == ACTION_DELETE ||
		     b->type == ACTION_REPLACE) && b->node &&
		    strcmp(a->node, b->node) == 0)
			return false;
	}
	return true;
}

void instruments_verdict(const struct instruments *ins, const struct verdict *v)
{
	double n[N(invariant_labels)] = {0};
	size_t i, k;

	if (!ins)
		return;
	for (i = 0; i < v->n_rejected; i++) {
		const char *inv;

		if (!first_removal_refused(v, i))
			continue;
		inv = instruments_invariant(v->rejected[i].why);
		for (k = 0; k < N(invariant_labels); k++)
			if (strcmp(inv, invariant_labels[k]) == 0)
				n[k]++;
	}
	for (k = 0; k < N(invariant_labels); k++)
		metric_set1(ins->unremovable_nodes, invariant_labels[k], n[k]);
}

const char *instruments_removal_reason(const char *reason)
{
	if (!reason)
		return "policy";
	if (strstr(reason, "empty") || strstr(reason, "no pods"))
		return "empty";
	if (strstr(reason, "utilization") || strstr(reason, "underutilized"))
		return "underutilized";
	if (strstr(reason, "drift"))
		return "drifted";
	return "policy";
}

void instruments_budgets(const struct instruments *ins, const struct snapshot *s,
			 const struct config *c)
{
	static const enum disruption_reason budgeted[] = {DISRUPTION_EMPTY, DISRUPTION_UNDERUTILIZED,
							  DISRUPTION_DRIFTED, DISRUPTION_EXPIRED};
	size_t i, k;

	if (!ins)
		return;
	for (i = 0; c && i < s->n_groups; i++) {
		size_t nb;

		/* every group: the budgets written for it, else the default */
		config_group_budgets(c, s->groups[i].name, &nb);
		if (!nb)
			continue;
		for (k = 0; k < N(budgeted); k++) {
			const char *v[2] = {s->groups[i].name, disruption_reason_name(budgeted[k])};
			int64_t left = safety_budget_left(s, c, i, budgeted[k]);

			metric_set(ins->budget_remaining, v, left < 0 ? INFINITY : (double)left);
		}
	}
}

void instruments_removed(const struct instruments *ins, const char *group, const char *reason,
			 double seconds)
{
	if (!ins)
		return;
	metric_inc2(ins->nodes_removed, group && group[0] ? group : "unknown",
		    instruments_removal_reason(reason));
	if (seconds >= 0)
		metric_observe0(ins->removal_seconds, seconds);
}

/* Reads 'proc'/'name' into 'buf' (NUL-terminated, cut at 'size' - 1).
 * Returns the length, or -1. */
static ssize_t read_proc(const char *proc, const char *name, char *buf, size_t size)
{
	char path[512];
	ssize_t n, got = 0;
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", proc, name) >= (int)sizeof(path))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while ((size_t)got < size - 1 && (n = read(fd, buf + got, size - 1 - (size_t)got)) > 0)
		got += n;
	close(fd);
	buf[got] = '\0';
	return got;
}

/* The boot time (unix seconds) from 'proc'/stat, or -1. */
static double boot_time(const char *proc)
{
	char buf[8192];
	const char *p;

	if (read_proc(proc, "stat", buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, "\nbtime ");
	return p ? strtod(p + 7, NULL) : -1;
}

void instruments_process(const struct instruments *ins, const char *proc)
{
	char buf[4096], path[512];
	long ticks = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	const char *p;
	DIR *d;

	if (!ins)
		return;
	/* after the command's closing parenthesis: state is field 3, utime
	 * 14, stime 15, starttime 22 */
	if (read_proc(proc, "self/stat", buf, sizeof(buf)) > 0 && (p = strrchr(buf, ')')) && ticks > 0) {
		double f[20];
		char *end;
		int i;

		p += 2; /* ") " */
		p = strchr(p, ' '); /* past the state */
		for (i = 0; p && i < 20; i++) {
			f[i] = strtod(p, &end);
			if (end == p)
				break;
			p = end;
		}
		if (i == 20) {
			double bt = boot_time(proc);

			metric_set0(ins->process_cpu, (f[10] + f[11]) / (double)ticks);
			if (bt >= 0)
				metric_set0(ins->process_start, bt + f[18] / (double)ticks);
		}
	}
	if (read_proc(proc, "self/statm", buf, sizeof(buf)) > 0 && page > 0) {
		char *end;

		strtod(buf, &end); /* size */
		if (end != buf)
			metric_set0(ins->process_rss, strtod(end, NULL) * (double)page);
	}
	if (snprintf(path, sizeof(path), "%s/self/fd", proc) < (int)sizeof(path) && (d = opendir(path))) {
		struct dirent *e;
		size_t n = 0;

		while ((e = readdir(d)))
			n += e->d_name[0] != '.';
		closedir(d);
		metric_set0(ins->process_fds, (double)n);
	}
	if (read_proc(proc, "self/limits", buf, sizeof(buf)) > 0 && (p = strstr(buf, "Max open files"))) {
		char *end;
		double soft = strtod(p + 14, &end);

		if (end != p + 14)
			metric_set0(ins->process_max_fds, soft);
	}
}
