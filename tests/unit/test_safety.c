/*
 * Safety checks: every plan is held to group min/max, the global cap, the
 * per-round removal limit (NoExecute taints included), protected pods, PDBs
 * over all of a round's removals, managed groups, the groups' selector keys
 * and the per-round action cap, whatever the policy asked for.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_safety_fixture.h"

static void expect_rejected(struct fixture *f, size_t i, const char *needle)
{
	assert_true(i < f->v.n_rejected);
	if (!strstr(f->v.rejected[i].why, needle))
		fail_msg("rejection \"%s\" does not contain \"%s\"", f->v.rejected[i].why, needle);
}

static void test_scale_up_trimmed_to_group_max(void **state)
{
	struct fixture *f = *state;

	add(f, ACTION_SCALE_UP, "workers", 5); /* 4 registered, max 6 */
	check(f);
	assert_int_equal(f->v.accepted.n_actions, 1);
	assert_int_equal(f->v.accepted.actions[0].count, 2);
	assert_int_equal(f->v.n_rejected, 1);
	assert_int_equal(f->v.rejected[0].action.count, 3);
	expect_rejected(f, 0, "at its max of 6");
}

/* A scale_up may name instance types only among its group's: the types
 * stay on the accepted action; an unknown type, or any type for a group
 * of one type, refuses the whole action (the invariant invalid_action). */
static void test_scale_up_instance_types(void **state)
{
	struct fixture *f = *state;
	char *g5[] = {"g5.xlarge"}, *p3[] = {"g4dn.xlarge", "p3.2xlarge"}, *m5[] = {"m5.large"};
	struct action a;

	memset(&a, 0, sizeof(a));
	a.type = ACTION_SCALE_UP;
	a.count = 1;
	a.reason = "test";
	a.where = "";
	a.group = "gpu";
	a.instance_types = g5;
	a.n_instance_types = 1;
	assert_int_equal(plan_add(&f->plan, &a), 0);
	a.instance_types = p3;
	a.n_instance_types = 2;
	assert_int_equal(plan_add(&f->plan, &a), 0);
	a.group = "workers";
	a.instance_types = m5;
	a.n_instance_types = 1;
	assert_int_equal(plan_add(&f->plan, &a), 0);
	check(f);
	assert_int_equal(f->v.accepted.n_actions, 1);
	assert_int_equal(f->v.accepted.actions[0].n_instance_types, 1);
	assert_string_equal(f->v.accepted.actions[0].instance_types[0], "g5.xlarge");
	assert_int_equal(f->v.n_rejected, 2);
	expect_rejected(f, 0, "instance type p3.2xlarge is not one of group gpu's instance types");
	assert_int_equal(f->v.rejected[0].action.count, 1);
	expect_rejected(f, 1, "instance type m5.large named, but group workers launches one type only");
}

/* ---- disruption budgets ---- */

static struct config *budget_config(const char *disruption)
{
	char yaml[2048];
	struct config_opts o = {0};
	struct errbuf err;
	struct config *c;

	snprintf(yaml, sizeof(yaml),
		 "node_groups:\n"
		 "  - {name: workers, max: 6, template: {allocatable: {cpu: 4, memory: 16Gi}}}\n"
		 "  - {name: gpu, max: 2, template: {allocatable: {cpu: 4, memory: 16Gi}}}\n%s",
		 disruption);
	o.flags = CONFIG_OFFLINE;
	c = config_parse_opts(yaml, strlen(yaml), "config.yaml", &o, &err);
	if (!c)
		fail_msg("config: %s\n%s", err.msg, yaml);
	return c;
}

static void add_disruption(struct fixture *f, enum action_type t, const char *node,
			   const char *disruption)
{
	struct action a;

	memset(&a, 0, sizeof(a));
	a.type = t;
	a.node = (char *)node;
	a.reason = "test";
	a.where = "";
	a.disruption = (char *)disruption;
	assert_int_equal(plan_add(&f->plan, &a), 0);
}

/* A budget of one node at once: the first cordon of workers goes, the
 * second is cut, naming the group, the reason (w-4 runs no pod: empty)
 * and the budget; a drain and delete of a node the plan counted already
 * count no more; another group has its own allowance. */
static void test_budget_cuts_the_second_disruption(void **state)
{
	struct fixture *f = *state;
	struct config *c = budget_config("disruption:\n  budgets: [{nodes: \"1\"}]\n");

	f->lim.budgets = c;
	f->lim.max_scale_down_per_round = 10;
	add(f, ACTION_CORDON, "w-3", 0);
	add(f, ACTION_DRAIN, "w-3", 0);
	add(f, ACTION_CORDON, "w-4", 0);
	add(f, ACTION_CORDON, "g-1", 0);
	check(f);
	assert_int_equal(f->v.accepted.n_actions, 3);
	assert_string_equal(f->v.accepted.actions[2].node, "g-1");
	/* an accepted disruption carries its reason on: w-3 runs a pod, g-1 none */
	assert_string_equal(f->v.accepted.actions[0].disruption, "underutilized");
	assert_string_equal(f->v.accepted.actions[1].disruption, "underutilized");
	assert_string_equal(f->v.accepted.actions[2].disruption, "empty");
	assert_int_equal(f->v.n_rejected, 1);
	assert_string_equal(f->v.rejected[0].action.node, "w-4");
	expect_rejected(f, 0, "disruption budget of group workers for empty (nodes 1) allows 1 of its 4 nodes at once, and 1 is being disrupted (0 drained or deleted, 1 by this plan)");
	config_free(c);
}

/* Budgets by reason: drifted may disrupt none, the rest two; a node
 * with pods counts as underutilized; interruptions are never held. */
static void test_budget_reasons(void **state)
{
	struct fixture *f = *state;
	struct config *c = budget_config(
		"disruption:\n  budgets:\n    - {nodes: \"0\", reasons: [drifted]}\n    - {nodes: 50%}\n");

	f->lim.budgets = c;
	f->lim.max_scale_down_per_round = 10;
	add_disruption(f, ACTION_CORDON, "w-4", "drifted");   /* 0 for drifted */
	add_disruption(f, ACTION_CORDON, "w-3", NULL);        /* underutilized: 2 of 4 */
	add_disruption(f, ACTION_CORDON, "w-2", "expired");   /* 2 of 4 */
	add_disruption(f, ACTION_CORDON, "w-1", "empty");     /* a third: cut */
	check(f);
	assert_int_equal(f->v.accepted.n_actions, 2);
	assert_int_equal(f->v.n_rejected, 2);
	expect_rejected(f, 0, "for drifted (nodes 0 for drifted) allows 0");
	expect_rejected(f, 1, "for empty (nodes 50%) allows 2 of its 4 nodes at once, and 2 are being disrupted");
	verdict_free(&f->v);
	plan_free(&f->plan);
	plan_init(&f->plan);
	config_free(c);

	c = budget_config("disruption:\n  budgets: [{nodes: \"0\"}]\n");
	f->lim.budgets = c;
	f->s->nodes[snapshot_find_node(f->s, "w-4")].interruption_kind = "spot_interruption";
	add_disruption(f, ACTION_DRAIN, "w-4", "interrupted");
	add_disruption(f, ACTION_CORDON, "w-3", NULL);
	/* "interrupted" on the policy's word alone waives nothing */
	add_disruption(f, ACTION_DRAIN, "w-2", "interrupted");
	check(f);
	assert_int_equal(f->v.accepted.n_actions, 1);
	assert_string_equal(f->v.accepted.actions[0].node, "w-4");
	assert_string_equal(f->v.accepted.actions[0].disruption, "interrupted");
	expect_rejected(f, 0, "allows 0 of its 4 nodes");
	expect_rejected(f, 1, "disruption \"interrupted\" on node w-2, which has no interruption notice");
	verdict_free(&f->v);
	plan_free(&f->plan);
	plan_init(&f->plan);
	config_free(c);

	/* the per-round cap holds voluntary removals, not the drain of a node
	 * its cloud is taking (which still counts against the others) */
	f->lim.budgets = NULL;
	f->lim.max_scale_down_per_round = 1;
	f->s->nodes[snapshot_find_node(f->s, "w-3")].interruption_kind = "spot_interruption";
	add_disruption(f, ACTION_DRAIN, "w-4", "interrupted");
	add_disruption(f, ACTION_DRAIN, "w-3", "interrupted");
	add_disruption(f, ACTION_DELETE, "g-1", NULL);
	check(f);
	assert_int_equal(f->v.accepted.n_actions, 2);
	assert_string_equal(f->v.accepted.actions[0].node, "w-4");
	assert_string_equal(f->v.accepted.actions[1].node, "w-3");
	expect_rejected(f, 0, "max_scale_down_per_round (1) reached: 2 node(s) already being removed");
}

/* A scheduled budget holds only in its window (the fixture's time is
 * 2023-11-14 22:13 UTC); a group's own list replaces the top level's;
 * with nothing written anywhere every group has the default, nodes 10 %
 * (rounded up: one node of four, one of one). */
static void test_budget_windows_and_lists(void **state)
{
	struct fixture *f = *state;
	struct config *c = budget_config(
		"disruption:\n  budgets: [{nodes: \"0\", schedule: \"0 9 * * *\", duration: 8h}]\n");

	f->lim.budgets = c;
	f->lim.max_scale_down_per_round = 10;
	add(f, ACTION_CORDON, "w-3", 0);
	check(f);
	assert_int_equal(f->v.accepted.n_actions, 1); /* 09:00-17:00 is over */
	config_free(c);
	c = budget_config("disruption:\n  budgets: [{nodes: \"0\", schedule: \"0 20 * * *\", duration: 4h}]\n");
	f->lim.budgets = c;
	check(f);
	assert_int_equal(f->v.accepted.n_actions, 0);
	expect_rejected(f, 0, "schedule");
	config_free(c);

	c = budget_config("");
	f->lim.budgets = c;
	add(f, ACTION_CORDON, "w-4", 0);
	add(f, ACTION_CORDON, "g-1", 0);
	check(f);
	assert_int_equal(f->v.accepted.n_actions, 2);
	assert_string_equal(f->v.accepted.actions[0].node, "w-3");
	assert_string_equal(f->v.accepted.actions[0].budget, "nodes 10%: 1 of 4 nodes at once");
	assert_string_equal(f->v.accepted.actions[1].node, "g-1");
	expect_rejected(f, 0, "disruption budget of group workers for empty (nodes 10%) allows 1 of its 4 nodes at once");
	config_free(c);
}

static void test_scale_up_counts_earlier_actions(void **state)
{
	struct fixture *f = *state;

	add(f, ACTION_SCALE_UP, "gpu", 1);
	add(f, ACTION_SCALE_UP, "gpu", 1);
	add(f, ACTION_SCALE_UP, "gpu", 1); /* 1 registered, max 2 */
	check(f);
	assert_int_equal(f->v.accepted.n_actions, 1);
	assert_int_equal(f->v.n_rejected, 2);
}

static void add_replace(struct fixture *f, const char *node, const char *group)
{
	struct action a;

	memset(&a, 0, sizeof(a));
	a.type = ACTION_REPLACE;
	a.node = (char *)node;
	a.group = (char *)group;
	a.count = 1;
	a.reason = "test";
	a.where = "";
	assert_int_equal(plan_add(&f->plan, &a), 0);
}

static void reset_plan(struct fixture *f)
{
	verdict_free(&f->v);
	plan_free(&f->plan);
	plan_init(&f->plan);
}

/* A replace: its new node counts against the group's max, the old node is
 * a removal (protected pods, PDBs, the per-round cap, the old group's
 * min when the new node is in another group), and nothing else may touch
 * the old node in the same plan. */
static void test_replace(void **state)
{
	struct fixture *f = *state;
	int32_t w3 = snapshot_find_node(f->s, "w-3");

	f->lim.max_scale_down_per_round = 10;
	add_replace(f, "w-1", "workers");  /* a protected pod */
	add_replace(f, "w-2", "workers");  /* a PDB that allows nothing */
	add_replace(f, "w-4", "workers");  /* 4 + 1 of 6 */
	add_replace(f, "w-3", "workers");  /* 6 of 6 */
	add_replace(f, "g-1", "workers");  /* a seventh: over the max */
	add(f, ACTION_DRAIN, "w-4", 0);    /* replaced already in this plan */
	add(f, ACTION_LABEL, "w-4", 0);    /* a label is no disruption */
	f->plan.actions[f->plan.n_actions - 1].key = strdup("tier");
	f->plan.actions[f->plan.n_actions - 1].value = strdup("old");
	check(f);
	assert_int_equal(f->v.accepted.n_actions, 3);
	assert_int_equal(f->v.accepted.actions[0].type, ACTION_REPLACE);
	assert_string_equal(f->v.accepted.actions[0].node, "w-4");
	assert_string_equal(f->v.accepted.actions[0].group, "workers");
	assert_string_equal(f->v.accepted.actions[0].disruption, "empty");
	assert_string_equal(f->v.accepted.actions[1].disruption, "underutilized");
	assert_int_equal(f->v.accepted.actions[2].type, ACTION_LABEL);
	assert_int_equal(f->v.n_rejected, 4);
	expect_rejected(f, 0, "critical");
	expect_rejected(f, 1, "PodDisruptionBudget db/db");
	expect_rejected(f, 2, "its new node does not fit: group workers is at its max of 6");
	expect_rejected(f, 3, "node w-4 is replaced by an earlier action of this plan");

	/* a node being replaced (its new node on its way) takes no removal */
	reset_plan(f);
	f->s->nodes[w3].replacing = true;
	add(f, ACTION_DRAIN, "w-3", 0);
	add_replace(f, "w-3", "workers");
	add(f, ACTION_CORDON, "w-3", 0);
	check(f);
	assert_int_equal(f->v.accepted.n_actions, 0);
	assert_int_equal(f->v.n_rejected, 3);
	expect_rejected(f, 0, "node w-3 is being replaced");
	f->s->nodes[w3].replacing = false;

	/* into another group: the old group's min holds; a cordon first
	 * makes no replace */
	reset_plan(f);
	f->s->groups[0].min = 4;
	add_replace(f, "w-3", "gpu");
	add_replace(f, "w-4", "workers");
	add(f, ACTION_CORDON, "g-1", 0);
	add_replace(f, "g-1", "gpu");
	add_replace(f, "w-3", "nope");
	check(f);
	assert_int_equal(f->v.accepted.n_actions, 2);
	assert_string_equal(f->v.accepted.actions[0].node, "w-4");
	assert_int_equal(f->v.accepted.actions[1].type, ACTION_CORDON);
	assert_int_equal(f->v.n_rejected, 3);
	expect_rejected(f, 0, "group workers would go below its min of 4");
	expect_rejected(f, 1, "node g-1 is cordoned in this plan");
	expect_rejected(f, 2, "no node group named \"nope\"");
	f->s->groups[0].min = 2;
}

/* A replace counts against the disruption budgets, and so do the nodes
 * being replaced from earlier rounds. */
static void test_replace_budgets(void **state)
{
	struct fixture *f = *state;
	struct config *c = budget_config("disruption:\n  budgets: [{nodes: \"1\"}]\n");

	f->lim.budgets = c;
	f->lim.max_scale_down_per_round = 10;
	add_replace(f, "w-4", "workers");
	add(f, ACTION_CORDON, "w-3", 0);
	check(f);
	assert_int_equal(f->v.accepted.n_actions, 1);
	/* the budget that held it, for the Events */
	assert_string_equal(f->v.accepted.actions[0].budget, "nodes 1: 1 of 4 nodes at once");
	expect_rejected(f, 0, "allows 1 of its 4 nodes at once, and 1 is being disrupted (0 drained or deleted, 1 by this plan)");

	reset_plan(f);
	f->s->groups[0].replacing = 1;
	add_replace(f, "w-4", "workers");
	check(f);
	assert_int_equal(f->v.accepted.n_actions, 0);
	expect_rejected(f, 0, "(0 drained or deleted, 1 being replaced, 0 by this plan)");
	assert_int_equal(safety_budget_left(f->s, c, 0, DISRUPTION_EMPTY), 0);
	f->s->groups[0].replacing = 0;
	assert_int_equal(safety_budget_left(f->s, c, 0, DISRUPTION_EMPTY), 1);
	config_free(c);
}

static void test_scale_up_global_cap(void **state)
{
	struct fixture *f = *state;

	f->lim.max_nodes_total = 7; /* 6 nodes registered */
	add(f, ACTION_SCALE_UP, "workers", 2);
	check(f);
	assert_int_equal(f->v.accepted.n_actions, 1);
	assert_int_equal(f->v.accepted.actions[0].count, 1);
	expect_rejected(f, 0, "max_nodes_total is 7");
}

static void test_backed_off_group(void **state)
{
	struct fixture *f = *state;

	f->s->groups[1].backoff_until = f->s->now + 300;
	snprintf(f->s->groups[1].backoff_reason, sizeof(f->s->groups[1].backoff_reason),
		 "InsufficientInstanceCapacity");
	add(f, ACTION_SCALE_UP, "gpu", 1);
	add(f, ACTION_SCALE_UP, "workers", 1);
	check(f);
	assert_int_equal(f->v.accepted.n_actions, 1);
	assert_string_equal(f->v.accepted.actions[0].group, "workers");
	expect_rejected(f, 0, "backed off for 300s more");
	expect_rejected(f, 0, "InsufficientInstanceCapacity");
	/* once the time has passed, it may grow again */
	f->s->groups[1].backoff_until = f->s->now;
	check(f);
	assert_int_equal(f->v.accepted.n_actions, 2);
}

static void test_unknown_group_and_node(void **state)
{
	struct fixture *f = *state;

	add(f, ACTION_SCALE_UP, "nope", 1);
	add(f, ACTION_CORDON, "ghost", 0);
	check(f);
	assert_int_equal(f->v.accepted.n_actions, 0);
	expect_rejected(f, 0, "no node group named \"nope\"");
	expect_rejected(f, 1, "no node named \"ghost\"");
}

static void test_protected_pod_blocks_removal(void **state)
{
	struct fixture *f = *state;

	add(f, ACTION_DRAIN, "w-1", 0);
	add(f, ACTION_DELETE, "w-1", 0);
	check(f);
	assert_int_equal(f->v.accepted.n_actions, 0);
	expect_rejected(f, 0, "hub/hub-0");
	expect_rejected(f, 1, "protected");
}

static void test_pdb_blocks_removal(void **state)
{
	struct fixture *f = *state;

	add(f, ACTION_DELETE, "w-2", 0);
	check(f);
	assert_int_equal(f->v.accepted.n_actions, 0);
	expect_rejected(f, 0, "PodDisruptionBudget db/db");
}

static void test_unmanaged_node(void **state)
{
	struct fixture *f = *state;

	add(f, ACTION_DELETE, "cp-1", 0);
	add(f, ACTION_CORDON, "cp-1", 0);
	check(f);
	assert_int_equal(f->v.accepted.n_actions, 0);
	expect_rejected(f, 0, "not in a managed node group");
	expect_rejected(f, 1, "not in a managed node group");
}

static void test_per_round_limit(void **state)
{
	struct fixture *f = *state;

	add(f, ACTION_DRAIN, "w-3", 0);
	add(f, ACTION_DELETE, "w-3", 0); /* the same node: one removal */
	add(f, ACTION_DELETE, "w-4", 0);
	check(f);
	assert_int_equal(f->v.accepted.n_actions, 2);
	assert_int_equal(f->v.n_rejected, 1);
	assert_string_equal(f->v.rejected[0].action.node, "w-4");
	expect_rejected(f, 0, "max_scale_down_per_round (1)");
}

static void test_group_min(void **state)
{
	struct fixture *f = *state;

	f->lim.max_scale_down_per_round = 5;
	add(f, ACTION_DELETE, "w-3", 0);
	add(f, ACTION_DELETE, "w-4", 0);
	add(f, ACTION_DELETE, "g-1", 0);
	check(f);
	/* workers: 4 nodes, min 2 -> two may go; gpu min 0 -> fine */
	assert_int_equal(f->v.accepted.n_actions, 3);
	plan_free(&f->plan);
	f->s->groups[0].min = 4;
	add(f, ACTION_DELETE, "w-3", 0);
	check(f);
	assert_int_equal(f->v.accepted.n_actions, 0);
	expect_rejected(f, 0, "below its min of 4");
}

static void test_conflicts_and_keys(void **state)
{
	struct fixture *f = *state;
	struct action a;

	add(f, ACTION_CORDON, "w-3", 0);
	add(f, ACTION_UNCORDON, "w-3", 0);
	memset(&a, 0, sizeof(a));
	a.type = ACTION_LABEL;
	a.node = "w-3";
	a.key = "bad key!";
	a.value = "x";
	a.reason = "r";
	plan_add(&f->plan, &a);
	a.key = "example.com/ok";
	a.value = "-starts-with-dash";
	plan_add(&f->plan, &a);
	a.type = ACTION_TAINT;
	a.node = "w-1";
	a.key = "evict";
	a.value = "";
	a.effect = TAINT_NO_EXECUTE;
	plan_add(&f->plan, &a);
	a.node = "w-4";
	plan_add(&f->plan, &a);
	check(f);
	assert_int_equal(f->v.accepted.n_actions, 2); /* cordon w-3, NoExecute on w-4 */
	assert_int_equal(f->v.accepted.actions[0].type, ACTION_CORDON);
	assert_int_equal(f->v.accepted.actions[1].type, ACTION_TAINT);
	expect_rejected(f, 0, "conflicts with an earlier cordon");
	expect_rejected(f, 1, "invalid key");
	expect_rejected(f, 2, "invalid label value");
	expect_rejected(f, 3, "NoExecute taint would evict");
}

static void add_taint(struct fixture *f, const char *node, const char *key, int effect)
{
	struct action a;

	memset(&a, 0, sizeof(a));
	a.type = ACTION_TAINT;
	a.node = (char *)node;
	a.key = (char *)key;
	a.value = "";
	a.effect = effect;
	a.reason = "test";
	a.where = "";
	assert_int_equal(plan_add(&f->plan, &a), 0);
}

static void add_keyed(struct fixture *f, enum action_type t, const char *node, const char *key,
		      const char *value)
{
	struct action a;

	memset(&a, 0, sizeof(a));
	a.type = t;
	a.node = (char *)node;
	a.key = (char *)key;
	a.value = (char *)value;
	a.remove = value == NULL;
	a.reason = "test";
	a.where = "";
	assert_int_equal(plan_add(&f->plan, &a), 0);
}

/* A NoExecute taint evicts like a drain: it counts against the per-round
 * cap with drains and deletes, and of one node it is one removal. */
static void test_noexecute_is_a_removal(void **state)
{
	struct fixture *f = *state;

	add_taint(f, "w-3", "evict", TAINT_NO_EXECUTE);
	add_taint(f, "w-4", "evict", TAINT_NO_EXECUTE);
	add(f, ACTION_DRAIN, "w-4", 0);
	add(f, ACTION_DRAIN, "w-3", 0);  /* the tainted node: still one removal */
	add(f, ACTION_DELETE, "w-3", 0);
	add_taint(f, "w-4", "soft", TAINT_NO_SCHEDULE); /* not a removal */
	check(f);
	assert_int_equal(f->v.accepted.n_actions, 4);
	assert_int_equal(f->v.n_rejected, 2);
	assert_string_equal(f->v.rejected[0].action.node, "w-4");
	expect_rejected(f, 0, "max_scale_down_per_round (1)");
	assert_int_equal(f->v.rejected[1].action.type, ACTION_DRAIN);
	expect_rejected(f, 1, "max_scale_down_per_round (1)");
	/* nor on a node outside the groups or with a protected pod */
	plan_free(&f->plan);
	f->lim.max_scale_down_per_round = 5;
	add_taint(f, "cp-1", "evict", TAINT_NO_EXECUTE);
	add_taint(f, "w-1", "evict", TAINT_NO_EXECUTE);
	check(f);
	assert_int_equal(f->v.accepted.n_actions, 0);
	expect_rejected(f, 0, "not in a managed node group");
	expect_rejected(f, 1, "hub/hub-0 is protected");
}

/* Two nodes whose pods share a PDB that allows one disruption. */
static const char SHARED_PDB[] =
	"{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":["
	NODE("w-1", "workers") "," NODE("w-2", "workers") "," NODE("w-3", "workers") ","
	NODE("w-4", "workers") "," NODE("w-5", "workers") ","
	POD("app", "api-0", "w-1", "{\"app\":\"api\"}") ","
	POD("app", "api-1", "w-2", "{\"app\":\"api\"}") ","
	POD("app", "api-2", "w-3", "{\"app\":\"api\"}") ","
	"{\"kind\":\"PodDisruptionBudget\",\"metadata\":{\"namespace\":\"app\",\"name\":\"api\"},"
	"\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"api\"}}},\"status\":{\"disruptionsAllowed\":1}}"
	"]}";

static void use_shared_pdb(struct fixture *f)
{
	struct node_group g;
	struct kv sel = {"luascale.io/node-group", "workers"};
	struct errbuf err;

	memset(&g, 0, sizeof(g));
	g.name = "workers";
	g.min = 0;
	g.max = 10;
	g.selector.items = &sel;
	g.selector.n = 1;
	g.target = -1;
	snapshot_free(f->s);
	f->s = snapshot_new();
	if (snapshot_add_json(f->s, SHARED_PDB, sizeof(SHARED_PDB) - 1, "cluster", &err) < 0 ||
	    snapshot_set_groups(f->s, &g, 1, &err) < 0 ||
	    snapshot_finish(f->s, 1700000000, &err) < 0)
		fail_msg("fixture: %s", err.msg);
	f->lim.max_scale_down_per_round = 5;
}

/* Each node alone is within the PDB; two removals in one round are not,
 * whether they are NoExecute taints, drains or deletes. */
static void test_pdb_across_the_rounds_removals(void **state)
{
	struct fixture *f = *state;

	use_shared_pdb(f);
	add_taint(f, "w-1", "evict", TAINT_NO_EXECUTE);
	add_taint(f, "w-2", "evict", TAINT_NO_EXECUTE);
	add(f, ACTION_DRAIN, "w-3", 0);
	add(f, ACTION_DELETE, "w-4", 0); /* no api pod: fine */
	add(f, ACTION_DRAIN, "w-1", 0);  /* the tainted node again: counted once */
	check(f);
	assert_int_equal(f->v.accepted.n_actions, 3);
	assert_int_equal(f->v.n_rejected, 2);
	assert_string_equal(f->v.rejected[0].action.node, "w-2");
	expect_rejected(f, 0, "PodDisruptionBudget app/api allows 1 disruption, and this round's removals would cause 2");
	assert_string_equal(f->v.rejected[1].action.node, "w-3");
	expect_rejected(f, 1, "PodDisruptionBudget app/api");

	plan_free(&f->plan);
	add(f, ACTION_DRAIN, "w-2", 0);
	add(f, ACTION_DELETE, "w-3", 0);
	check(f);
	assert_int_equal(f->v.accepted.n_actions, 1);
	expect_rejected(f, 0, "would cause 2 (1 by earlier removals in this plan)");
}

/* No label, annotation or taint may write a key a group selects nodes by. */
static void test_group_selector_keys(void **state)
{
	struct fixture *f = *state;

	add_keyed(f, ACTION_LABEL, "w-3", "luascale.io/node-group", "gpu");
	add_keyed(f, ACTION_LABEL, "w-4", "luascale.io/node-group", NULL);
	add_keyed(f, ACTION_ANNOTATE, "w-3", "luascale.io/node-group", "x");
	add_taint(f, "w-3", "luascale.io/node-group", TAINT_NO_SCHEDULE);
	add_keyed(f, ACTION_LABEL, "w-3", "example.com/role", "batch");
	check(f);
	assert_int_equal(f->v.accepted.n_actions, 1);
	assert_string_equal(f->v.accepted.actions[0].key, "example.com/role");
	assert_int_equal(f->v.n_rejected, 4);
	expect_rejected(f, 0, "label sets key luascale.io/node-group: node group workers selects its nodes by");
	expect_rejected(f, 1, "label removes key luascale.io/node-group: node group workers");
	expect_rejected(f, 2, "annotate sets key luascale.io/node-group");
	expect_rejected(f, 3, "taint sets key luascale.io/node-group");
}

/* A plan over max_actions_per_round is refused whole, saying how many. */
static void test_actions_per_round(void **state)
{
	struct fixture *f = *state;
	struct errbuf err;

	add(f, ACTION_CORDON, "w-3", 0);
	add(f, ACTION_CORDON, "w-4", 0);
	add(f, ACTION_SCALE_UP, "workers", 1);
	f->lim.max_actions_per_round = 3;
	assert_int_equal(safety_plan_size(&f->plan, &f->lim, &err), 0);
	f->lim.max_actions_per_round = 2;
	assert_int_equal(safety_plan_size(&f->plan, &f->lim, &err), -1);
	assert_string_equal(err.msg, "the plan has 3 actions, more than safety.max_actions_per_round (2); the whole plan is refused");
	f->lim.max_actions_per_round = 0; /* no cap */
	assert_int_equal(safety_plan_size(&f->plan, &f->lim, &err), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_scale_up_trimmed_to_group_max, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scale_up_counts_earlier_actions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scale_up_instance_types, setup, teardown),
		cmocka_unit_test_setup_teardown(test_budget_cuts_the_second_disruption, setup, teardown),
		cmocka_unit_test_setup_teardown(test_budget_reasons, setup, teardown),
		cmocka_unit_test_setup_teardown(test_budget_windows_and_lists, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scale_up_global_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replace_budgets, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_group_and_node, setup, teardown),
		cmocka_unit_test_setup_teardown(test_backed_off_group, setup, teardown),
		cmocka_unit_test_setup_teardown(test_protected_pod_blocks_removal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pdb_blocks_removal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unmanaged_node, setup, teardown),
		cmocka_unit_test_setup_teardown(test_per_round_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_group_min, setup, teardown),
		cmocka_unit_test_setup_teardown(test_conflicts_and_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_noexecute_is_a_removal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pdb_across_the_rounds_removals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_group_selector_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_actions_per_round, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
