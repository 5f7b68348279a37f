/*
 * Tests for engine/instruments and runtime/health: every family registers
 * under a valid name; real safety rejections map to their invariant label
 * (the messages come from safety_check, so a changed message that the map
 * no longer knows fails here); a snapshot's group gauges, nodes being
 * removed and the cluster's CPU and memory; counters with known labels
 * present at 0; process_* from a procfs laid out in a temporary directory;
 * the liveness
 * limit and readiness rules on a virtual clock.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arena.h"
#include "buf.h"
#include "engine/instruments.h"
#include "engine/safety.h"
#include "model.h"
#include "runtime/clock.h"
#include "runtime/health.h"

#include "test_safety_fixture.h"


/* The invariant of the rejection of the action on 'target'. */
static const char *invariant_of(struct fixture *f, const char *target)
{
	size_t i;

	for (i = 0; i < f->v.n_rejected; i++) {
		const struct action *a = &f->v.rejected[i].action;
		const char *t = a->type == ACTION_SCALE_UP ? a->group : a->node;

		if (t && strcmp(t, target) == 0)
			return instruments_invariant(f->v.rejected[i].why);
	}
	fail_msg("no rejection for %s", target);
	return NULL;
}

static void test_rejections_map_to_invariants(void **state)
{
	struct fixture *f = *state;

	add(f, ACTION_SCALE_UP, "workers", 10); /* 4 of 6: trimmed */
	add(f, ACTION_SCALE_UP, "nope", 1);
	add(f, ACTION_DRAIN, "w-1", 0);          /* the protected hub */
	add(f, ACTION_DRAIN, "w-2", 0);          /* a PDB allowing 0 */
	add(f, ACTION_DRAIN, "cp-1", 0);         /* not in a group */
	add(f, ACTION_DRAIN, "ghost", 0);
	add(f, ACTION_DELETE, "w-4", 0);         /* empty: allowed */
	add(f, ACTION_DELETE, "g-1", 0);         /* over max_scale_down_per_round */
	check(f);
	assert_string_equal(invariant_of(f, "workers"), "max_size");
	assert_string_equal(invariant_of(f, "nope"), "unknown_target");
	assert_string_equal(invariant_of(f, "w-1"), "drain_blocked");
	assert_string_equal(invariant_of(f, "w-2"), "pdb");
	assert_string_equal(invariant_of(f, "cp-1"), "unmanaged_node");
	assert_string_equal(invariant_of(f, "ghost"), "unknown_target");
	assert_string_equal(invariant_of(f, "g-1"), "max_scale_down_per_round");
	assert_string_equal(instruments_invariant("instance type p3.2xlarge is not one of group gpu's instance types"),
			    "invalid_action");
	assert_string_equal(instruments_invariant("instance type m5.large named, but group workers launches one type only: name none"),
			    "invalid_action");
	assert_string_equal(instruments_invariant("something new"), "other");
	assert_string_equal(instruments_invariant(NULL), "other");
}

/* The nodes whose removal was refused, once each, by invariant. */
static void test_unremovable_nodes(void **state)
{
	struct fixture *f = *state;
	struct metrics *m = metrics_new();
	struct instruments ins;
	struct buf b = BUF_INIT;

	add(f, ACTION_DRAIN, "w-1", 0);  /* the protected hub */
	add(f, ACTION_DELETE, "w-1", 0); /* the same node: counted once */
	add(f, ACTION_DRAIN, "w-2", 0);  /* a PDB allowing 0 */
	add(f, ACTION_DRAIN, "cp-1", 0); /* not in a group */
	add(f, ACTION_DELETE, "w-4", 0); /* empty: allowed */
	add(f, ACTION_SCALE_UP, "nope", 1); /* refused, but no removal */
	check(f);
	assert_int_equal(instruments_init(&ins, m, "1"), 0);
	instruments_verdict(&ins, &f->v);
	instruments_verdict(NULL, &f->v);
	assert_int_equal(metrics_render(m, &b), 0);
	assert_non_null(strstr(b.data, "\nluascale_unremovable_nodes{reason=\"drain_blocked\"} 1\n"));
	assert_non_null(strstr(b.data, "\nluascale_unremovable_nodes{reason=\"pdb\"} 1\n"));
	assert_non_null(strstr(b.data, "\nluascale_unremovable_nodes{reason=\"unmanaged_node\"} 1\n"));
	assert_non_null(strstr(b.data, "\nluascale_unremovable_nodes{reason=\"unknown_target\"} 0\n"));
	buf_free(&b);
	/* the next round without refusals sets them back to 0 */
	verdict_free(&f->v);
	verdict_init(&f->v);
	instruments_verdict(&ins, &f->v);
	assert_int_equal(metrics_render(m, &b), 0);
	assert_non_null(strstr(b.data, "\nluascale_unremovable_nodes{reason=\"pdb\"} 0\n"));
	buf_free(&b);
	metrics_free(m);
}

static void test_min_size_and_conflicts(void **state)
{
	struct fixture *f = *state;

	f->lim.max_scale_down_per_round = 5;
	f->s->groups[0].min = 3;
	add(f, ACTION_DELETE, "w-4", 0);
	add(f, ACTION_DELETE, "w-3", 0); /* workers would go below min 3 */
	add(f, ACTION_CORDON, "g-1", 0);
	add(f, ACTION_CORDON, "g-1", 0); /* a duplicate */
	check(f);
	assert_string_equal(invariant_of(f, "w-3"), "min_size");
	assert_string_equal(invariant_of(f, "g-1"), "conflict");
}

static void test_families_and_snapshot_gauges(void **state)
{
	struct fixture *f = *state;
	struct metrics *m = metrics_new();
	struct instruments ins;
	struct buf b = BUF_INIT;

	assert_int_equal(instruments_init(&ins, m, "1.2.3"), 0);
	instruments_snapshot(&ins, f->s);
	instruments_snapshot(NULL, f->s);
	assert_int_equal(metrics_render(m, &b), 0);
	assert_non_null(strstr(b.data, "\nluascale_build_info{version=\"1.2.3\"} 1\n"));
	assert_non_null(strstr(b.data, "\nluascale_node_group_ready_nodes{group=\"workers\"} 4\n"));
	assert_non_null(strstr(b.data, "\nluascale_node_group_min_size{group=\"workers\"} 2\n"));
	assert_non_null(strstr(b.data, "\nluascale_node_group_max_size{group=\"gpu\"} 2\n"));
	assert_non_null(strstr(b.data, "\nluascale_node_group_backoff{group=\"gpu\"} 0\n"));
	assert_non_null(strstr(b.data, "\nluascale_pending_pods 0\n"));
	assert_null(strstr(b.data, "w-1")); /* no node names */
	buf_free(&b);
	/* registering twice fails: names are unique */
	assert_int_equal(instruments_init(&ins, m, "x"), -1);
	metrics_free(m);
	(void)state;
}

static void test_health(void **state)
{
	struct clock *c = vclock_new(1700000000);
	struct health h;
	struct health_election e = {true, false, false, "", NULL};
	struct buf b = BUF_INIT;
	int64_t limit = health_limit_ns(10000, 10000);

	(void)state;
	assert_true(limit == 40 * CLOCK_NS_PER_S); /* 3 x 10 s + 10 s */
	assert_true(health_limit_ns(1000, 5000) == 35 * CLOCK_NS_PER_S); /* at least 30 s */
	assert_true(health_limit_ns(60000, 10000) == 190 * CLOCK_NS_PER_S);
	health_init(&h, c, limit);
	vclock_set(c, 100 * CLOCK_NS_PER_S);
	assert_int_equal(health_live(&h, &b), 200); /* starting */
	assert_int_equal(health_ready(&h, NULL, &b), 503);
	assert_non_null(strstr(b.data, "not synced"));
	health_synced(&h);
	health_progress(&h);
	vclock_set(c, 140 * CLOCK_NS_PER_S);
	assert_int_equal(health_live(&h, &b), 200);
	vclock_set(c, 140 * CLOCK_NS_PER_S + 1);
	b.len = 0;
	assert_int_equal(health_live(&h, &b), 503);
	assert_non_null(strstr(b.data, "has not come round for 40.0s"));
	health_progress(&h);
	assert_int_equal(health_live(&h, &b), 200);
	assert_int_equal(health_ready(&h, NULL, &b), 200);
	b.len = 0;
	assert_int_equal(health_ready(&h, &e, &b), 503);
	assert_non_null(strstr(b.data, "Lease has not been read"));
	e.observed = true;
	e.holder = "pod-a_1";
	b.len = 0;
	assert_int_equal(health_ready(&h, &e, &b), 200);
	assert_non_null(strstr(b.data, "standby, synced (leader: pod-a_1)"));
	e.leading = true;
	b.len = 0;
	assert_int_equal(health_ready(&h, &e, &b), 200);
	assert_non_null(strstr(b.data, "leading"));
	/* an API outage: still ready, but it says how stale the cache is */
	e.stale = "pods: not in sync for 47 s (watch failing, 12 errors so far)";
	b.len = 0;
	assert_int_equal(health_ready(&h, &e, &b), 200);
	assert_non_null(strstr(b.data, "ok: leading, but the cache is stale: pods: not in sync for 47 s"));
	assert_null(strstr(b.data, "synced"));
	buf_free(&b);
	vclock_free(c);
}

static void test_known_labels_start_at_zero(void **state)
{
	struct metrics *m = metrics_new();
	struct instruments ins;
	struct buf b = BUF_INIT;
	static const char *const want[] = {
		"luascale_reconciles_total{outcome=\"error\"} 0",
		"luascale_reconciles_total{outcome=\"policy_error\"} 0",
		"luascale_policy_reloads_total{outcome=\"loosened\"} 0",
		"luascale_policy_reloads_total{outcome=\"failed\"} 0",
		"luascale_actions_failed_total{type=\"drain\"} 0",
		"luascale_actions_failed_total{type=\"terminate\"} 0",
		"luascale_actions_executed_total{type=\"scale_up\"} 0",
		"luascale_actions_planned_total{type=\"annotate\"} 0",
		"luascale_rejections_total{invariant=\"pdb\"} 0",
		"luascale_rejections_total{invariant=\"other\"} 0",
		"luascale_pod_bindings_total{outcome=\"error\"} 0",
		"luascale_evictions_total{result=\"ok\"} 0",
		"luascale_evictions_total{result=\"pdb_blocked\"} 0",
		"luascale_evictions_total{result=\"throttled\"} 0",
		"luascale_evictions_total{result=\"failed\"} 0",
	};
	size_t i;

	assert_int_equal(instruments_init(&ins, m, "1"), 0);
	assert_int_equal(metrics_render(m, &b), 0);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char line[160];

		snprintf(line, sizeof(line), "\n%s\n", want[i]);
		if (!strstr(b.data, line))
			fail_msg("missing: %s", want[i]);
	}
	buf_free(&b);
	metrics_free(m);
	(void)state;
}

static void test_removing_and_cluster_resources(void **state)
{
	struct fixture *f = *state;
	struct metrics *m = metrics_new();
	struct instruments ins;
	struct buf b = BUF_INIT;
	size_t i;

	for (i = 0; i < f->s->n_nodes; i++)
		if (!strcmp(f->s->nodes[i].name, "w-2") || !strcmp(f->s->nodes[i].name, "w-4"))
			f->s->nodes[i].removing = true;
	assert_int_equal(instruments_init(&ins, m, "1"), 0);
	instruments_snapshot(&ins, f->s);
	assert_int_equal(metrics_render(m, &b), 0);
	assert_non_null(strstr(b.data, "\nluascale_unneeded_nodes{group=\"workers\"} 2\n"));
	assert_non_null(strstr(b.data, "\nluascale_unneeded_nodes{group=\"gpu\"} 0\n"));
	/* five nodes of 4 CPU and 16Gi, one of 2 and 4Gi; three pods of 1 and 1Gi */
	assert_non_null(strstr(b.data, "\nluascale_cluster_cpu_cores{kind=\"capacity\"} 22\n"));
	assert_non_null(strstr(b.data, "\nluascale_cluster_cpu_cores{kind=\"requested\"} 3\n"));
	assert_non_null(strstr(b.data, "\nluascale_cluster_memory_bytes{kind=\"capacity\"} 90194313216\n"));
	assert_non_null(strstr(b.data, "\nluascale_cluster_memory_bytes{kind=\"requested\"} 3221225472\n"));
	/* each group's launch and termination counters exist */
	assert_non_null(strstr(b.data, "\nluascale_launches_total{group=\"gpu\",outcome=\"ok\"} 0\n"));
	assert_non_null(strstr(b.data, "\nluascale_terminations_total{group=\"workers\",outcome=\"ok\"} 0\n"));
	assert_non_null(strstr(b.data, "\nluascale_launched_instances_total{group=\"gpu\"} 0\n"));
	buf_free(&b);
	metrics_free(m);
}

static void test_removals_by_reason(void **state)
{
	struct fixture *f = *state;
	struct metrics *m = metrics_new();
	struct instruments ins;
	struct buf b = BUF_INIT;

	assert_string_equal(instruments_removal_reason("utilization 0.12 below 0.50 for 10m0s; drained"),
			    "underutilized");
	assert_string_equal(instruments_removal_reason("empty for 5m"), "empty");
	assert_string_equal(instruments_removal_reason("node has no pods"), "empty");
	assert_string_equal(instruments_removal_reason("template drifted: image changed"), "drifted");
	assert_string_equal(instruments_removal_reason("spot rebalance"), "policy");
	assert_string_equal(instruments_removal_reason(NULL), "policy");
	assert_int_equal(instruments_init(&ins, m, "1"), 0);
	instruments_snapshot(&ins, f->s);
	instruments_removed(&ins, "workers", "utilization 0.10 below 0.50 for 10m0s; drained", 42);
	instruments_removed(&ins, "workers", "utilization 0.20 below 0.50 for 10m0s; drained", 700);
	instruments_removed(&ins, "", "drift", -1); /* no drain seen: no latency */
	instruments_removed(NULL, "workers", "x", 1);
	assert_int_equal(metrics_render(m, &b), 0);
	assert_non_null(strstr(b.data, "\nluascale_nodes_removed_total{group=\"workers\",reason=\"underutilized\"} 2\n"));
	assert_non_null(strstr(b.data, "\nluascale_nodes_removed_total{group=\"gpu\",reason=\"empty\"} 0\n"));
	assert_non_null(strstr(b.data, "\nluascale_nodes_removed_total{group=\"unknown\",reason=\"drifted\"} 1\n"));
	assert_non_null(strstr(b.data, "\nluascale_node_removal_duration_seconds_count 2\n"));
	assert_non_null(strstr(b.data, "\nluascale_node_removal_duration_seconds_sum 742\n"));
	assert_non_null(strstr(b.data, "\nluascale_node_removal_duration_seconds_bucket{le=\"60\"} 1\n"));
	assert_non_null(strstr(b.data, "\nluascale_node_removal_duration_seconds_bucket{le=\"900\"} 2\n"));
	buf_free(&b);
	metrics_free(m);
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void test_process_metrics(void **state)
{
	char dir[] = "/tmp/test_instruments.XXXXXX", path[512], want[160];
	struct metrics *m = metrics_new();
	struct instruments ins;
	struct buf b = BUF_INIT;
	long ticks = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	int i;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/self", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/self/fd", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	put(dir, "self/fd/0", "");
	put(dir, "self/fd/1", "");
	put(dir, "self/fd/7", "");
	put(dir, "stat", "cpu  1 2 3\nbtime 1700000000\nprocesses 9\n");
	/* a command with ") " in it: fields count from the last ')' */
	snprintf(want, sizeof(want), "42 (a) b) S 1 42 42 0 -1 4194560 10 0 0 0 %ld %ld 0 0 20 0 1 0 %ld 1000 ",
		 3 * ticks, 2 * ticks, 100 * ticks);
	put(dir, "self/stat", want);
	put(dir, "self/statm", "5000 300 10 1 0 200 0\n");
	put(dir, "self/limits", "Limit                     Soft Limit           Hard Limit           Units\n"
				 "Max processes             63432                63432                processes\n"
				 "Max open files            1024                 524288               files\n");
	assert_int_equal(instruments_init(&ins, m, "1"), 0);
	instruments_process(&ins, dir);
	instruments_process(NULL, dir);
	assert_int_equal(metrics_render(m, &b), 0);
	assert_non_null(strstr(b.data, "\nprocess_cpu_seconds_total 5\n"));
	assert_non_null(strstr(b.data, "\nprocess_start_time_seconds 1700000100\n"));
	snprintf(want, sizeof(want), "\nprocess_resident_memory_bytes %ld\n", 300 * page);
	assert_non_null(strstr(b.data, want));
	assert_non_null(strstr(b.data, "\nprocess_open_fds 3\n"));
	assert_non_null(strstr(b.data, "\nprocess_max_fds 1024\n"));
	buf_free(&b);
	/* what cannot be read leaves the value as it was */
	instruments_process(&ins, "/nonexistent");
	assert_int_equal(metrics_render(m, &b), 0);
	assert_non_null(strstr(b.data, "\nprocess_open_fds 3\n"));
	buf_free(&b);
	metrics_free(m);
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/self/fd/%c", dir, "017"[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/self/fd", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/self/stat", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/self/statm", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/self/limits", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/self", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/stat", dir);
	unlink(path);
	rmdir(dir);
	(void)state;
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_rejections_map_to_invariants),
		T(test_min_size_and_conflicts),
		T(test_unremovable_nodes),
		T(test_families_and_snapshot_gauges),
		cmocka_unit_test(test_known_labels_start_at_zero),
		T(test_removing_and_cluster_resources),
		T(test_removals_by_reason),
		cmocka_unit_test(test_process_metrics),
		cmocka_unit_test(test_health),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
