/*
 * Tests for engine/instruments and runtime/health: every family registers
 * under a valid name; real safety rejections map to their invariant label
 * (the messages come from safety_check, so a changed message that the map
 * no longer knows fails here); a snapshot's group gauges; the liveness
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
	assert_string_equal(instruments_invariant("something new"), "other");
	assert_string_equal(instruments_invariant(NULL), "other");
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

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_rejections_map_to_invariants),
		T(test_min_size_and_conflicts),
		T(test_families_and_snapshot_gauges),
		cmocka_unit_test(test_health),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
