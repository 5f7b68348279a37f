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

#define NODE(name, group) \
	"{\"kind\":\"Node\",\"metadata\":{\"name\":\"" name "\",\"labels\":{\"luascale.io/node-group\":\"" group "\"}}," \
	"\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"16Gi\",\"pods\":\"110\"}," \
	"\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}"

#define POD(ns, name, node, labels) \
	"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"" ns "\",\"name\":\"" name "\",\"labels\":" labels "," \
	"\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"rs\",\"controller\":true}]}," \
	"\"spec\":{\"nodeName\":\"" node "\",\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}]}," \
	"\"status\":{\"phase\":\"Running\"}}"

static const char CLUSTER[] =
	"{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":["
	NODE("w-1", "workers") "," NODE("w-2", "workers") "," NODE("w-3", "workers") ","
	NODE("w-4", "workers") "," NODE("g-1", "gpu") ","
	"{\"kind\":\"Node\",\"metadata\":{\"name\":\"cp-1\",\"labels\":{}},\"status\":{\"allocatable\":{\"cpu\":\"2\",\"memory\":\"4Gi\"}}},"
	POD("hub", "hub-0", "w-1", "{\"critical\":\"true\"}") ","
	POD("db", "db-0", "w-2", "{\"app\":\"db\"}") ","
	POD("web", "web-0", "w-3", "{\"app\":\"web\"}") ","
	"{\"kind\":\"PodDisruptionBudget\",\"metadata\":{\"namespace\":\"db\",\"name\":\"db\"},"
	"\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"db\"}}},\"status\":{\"disruptionsAllowed\":0}}"
	"]}";

struct fixture {
	struct snapshot *s;
	struct arena *a;
	struct label_selector protected_pods;
	struct safety_limits lim;
	struct plan plan;
	struct verdict v;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct node_group groups[2];
	struct kv sel_w = {"luascale.io/node-group", "workers"};
	struct kv sel_g = {"luascale.io/node-group", "gpu"};
	struct errbuf err;

	memset(groups, 0, sizeof(groups));
	groups[0].name = "workers";
	groups[0].min = 2;
	groups[0].max = 6;
	groups[0].selector.items = &sel_w;
	groups[0].selector.n = 1;
	groups[0].target = -1;
	groups[0].tmpl.allocatable.cpu_m = 4000;
	groups[0].tmpl.allocatable.memory = 16LL << 30;
	groups[0].tmpl.allocatable.pods = 110;
	groups[1] = groups[0];
	groups[1].name = "gpu";
	groups[1].min = 0;
	groups[1].max = 2;
	groups[1].selector.items = &sel_g;

	f->s = snapshot_new();
	if (snapshot_add_json(f->s, CLUSTER, sizeof(CLUSTER) - 1, "cluster", &err) < 0 ||
	    snapshot_set_groups(f->s, groups, 2, &err) < 0 ||
	    snapshot_finish(f->s, 1700000000, &err) < 0)
		fail_msg("fixture: %s", err.msg);
	f->a = arena_new();
	if (label_selector_parse(f->a, "critical=true", &f->protected_pods, &err) < 0)
		fail_msg("selector: %s", err.msg);
	f->lim.max_nodes_total = 0;
	f->lim.max_scale_down_per_round = 1;
	f->lim.protected_pods = &f->protected_pods;
	plan_init(&f->plan);
	verdict_init(&f->v);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	plan_free(&f->plan);
	verdict_free(&f->v);
	snapshot_free(f->s);
	arena_free(f->a);
	free(f);
	return 0;
}

static void add(struct fixture *f, enum action_type t, const char *target, int64_t count)
{
	struct action a;

	memset(&a, 0, sizeof(a));
	a.type = t;
	if (t == ACTION_SCALE_UP) {
		a.group = (char *)target;
		a.count = count;
	} else {
		a.node = (char *)target;
	}
	a.reason = "test";
	a.where = "";
	assert_int_equal(plan_add(&f->plan, &a), 0);
}

static void check(struct fixture *f)
{
	struct errbuf err;

	verdict_free(&f->v);
	assert_int_equal(safety_check(f->s, &f->lim, &f->plan, &f->v, &err), 0);
}


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
	struct health_election e = {true, false, false, ""};
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
