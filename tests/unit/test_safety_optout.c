/*
 * Safety checks and the opt-out annotations operators already use
 * (safety.do_not_disrupt_annotations): a node annotated
 * cluster-autoscaler.kubernetes.io/scale-down-disabled or
 * karpenter.sh/do-not-disrupt, or running a pod annotated
 * karpenter.sh/do-not-disrupt, is never drained, deleted, cordoned or
 * tainted NoExecute, whatever the plan says; the refusal names the
 * annotation and the object, and the rest of the plan goes through.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "engine/instruments.h"
#include "engine/safety.h"
#include "model.h"

#define NOW 1700000000 /* 2023-11-14T22:13:20Z */

#define NODE(name, annotations) \
	"{\"kind\":\"Node\",\"metadata\":{\"name\":\"" name "\",\"labels\":{\"luascale.io/node-group\":\"workers\"}," \
	"\"annotations\":" annotations "}," \
	"\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"16Gi\",\"pods\":\"110\"}," \
	"\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}"

#define POD(name, node, annotations, created, phase) \
	"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"apps\",\"name\":\"" name "\"," \
	"\"creationTimestamp\":\"" created "\",\"annotations\":" annotations "," \
	"\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"rs\",\"controller\":true}]}," \
	"\"spec\":{\"nodeName\":\"" node "\",\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}]}," \
	"\"status\":{\"phase\":\"" phase "\"}}"

#define DND "\"karpenter.sh/do-not-disrupt\""

static const char CLUSTER[] =
	"{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":["
	NODE("ca-off", "{\"cluster-autoscaler.kubernetes.io/scale-down-disabled\":\"true\"}") ","
	NODE("karp-off", "{" DND ":\"true\"}") ","
	NODE("pinned", "{}") ","
	NODE("done", "{}") ","
	NODE("plain", "{\"cluster-autoscaler.kubernetes.io/scale-down-disabled\":\"false\"}") ","
	NODE("young", "{}") ","
	NODE("old", "{}") ","
	NODE("no-evict", "{}") ","
	NODE("spare", "{}") ","
	POD("job-0", "pinned", "{" DND ":\"true\"}", "2023-11-14T20:00:00Z", "Running") ","
	POD("job-1", "done", "{" DND ":\"true\"}", "2023-11-14T20:00:00Z", "Succeeded") ","
	/* do-not-disrupt for an hour from the pod's creation: 30 minutes old, then 3 hours */
	POD("warm-0", "young", "{" DND ":\"1h\"}", "2023-11-14T21:43:20Z", "Running") ","
	POD("warm-1", "old", "{" DND ":\"1h\"}", "2023-11-14T19:13:20Z", "Running") ","
	POD("db-0", "no-evict", "{\"cluster-autoscaler.kubernetes.io/safe-to-evict\":\"false\"}",
	    "2023-11-14T20:00:00Z", "Running")
	"]}";

struct fixture {
	struct snapshot *s;
	struct config *cfg;
	struct safety_limits lim;
	struct plan plan;
	struct verdict v;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct node_group g;
	struct kv sel = {"luascale.io/node-group", "workers"};
	struct config_opts o = {0};
	struct errbuf err;

	memset(&g, 0, sizeof(g));
	g.name = "workers";
	g.min = 0;
	g.max = 20;
	g.selector.items = &sel;
	g.selector.n = 1;
	g.target = -1;
	g.tmpl.allocatable.cpu_m = 4000;
	g.tmpl.allocatable.memory = 16LL << 30;
	g.tmpl.allocatable.pods = 110;
	f->s = snapshot_new();
	if (snapshot_add_json(f->s, CLUSTER, sizeof(CLUSTER) - 1, "cluster", &err) < 0 ||
	    snapshot_set_groups(f->s, &g, 1, &err) < 0 || snapshot_finish(f->s, NOW, &err) < 0)
		fail_msg("fixture: %s", err.msg);
	/* the defaults, as a config without the key has them */
	o.flags = CONFIG_OFFLINE;
	f->cfg = config_parse_opts("", 0, "config.yaml", &o, &err);
	if (!f->cfg)
		fail_msg("config: %s", err.msg);
	f->lim.max_scale_down_per_round = 100;
	f->lim.optouts = f->cfg->optouts;
	f->lim.n_optouts = f->cfg->n_optouts;
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
	config_free(f->cfg);
	free(f);
	return 0;
}

static void add(struct fixture *f, enum action_type t, const char *target)
{
	struct action a;

	memset(&a, 0, sizeof(a));
	a.type = t;
	if (t == ACTION_SCALE_UP) {
		a.group = (char *)target;
		a.count = 1;
	} else {
		a.node = (char *)target;
	}
	a.reason = "test";
	a.where = "";
	assert_int_equal(plan_add(&f->plan, &a), 0);
}

static void add_taint(struct fixture *f, const char *node, enum taint_effect effect)
{
	struct action a;

	memset(&a, 0, sizeof(a));
	a.type = ACTION_TAINT;
	a.node = (char *)node;
	a.key = "example.com/leaving";
	a.value = "yes";
	a.effect = (int)effect;
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

/* The rejection of action 'type' on 'node'; fails when there is none. */
static const char *why_of(struct fixture *f, enum action_type type, const char *node)
{
	size_t i;

	for (i = 0; i < f->v.n_rejected; i++)
		if (f->v.rejected[i].action.type == type && f->v.rejected[i].action.node &&
		    strcmp(f->v.rejected[i].action.node, node) == 0)
			return f->v.rejected[i].why;
	fail_msg("no %s of %s was rejected", action_type_str(type), node);
	return NULL;
}

static bool accepted(struct fixture *f, enum action_type type, const char *node)
{
	size_t i;

	for (i = 0; i < f->v.accepted.n_actions; i++)
		if (f->v.accepted.actions[i].type == type && f->v.accepted.actions[i].node &&
		    strcmp(f->v.accepted.actions[i].node, node) == 0)
			return true;
	return false;
}

static void expect_why(const char *why, const char *needle)
{
	if (!strstr(why, needle))
		fail_msg("rejection \"%s\" does not contain \"%s\"", why, needle);
}

static void test_node_annotations_refuse_removal(void **state)
{
	struct fixture *f = *state;
	const char *why;

	add(f, ACTION_SCALE_UP, "workers");
	add(f, ACTION_DRAIN, "ca-off");
	add(f, ACTION_DELETE, "ca-off");
	add(f, ACTION_CORDON, "karp-off");
	add(f, ACTION_DRAIN, "karp-off");
	add(f, ACTION_DRAIN, "plain");
	add(f, ACTION_DELETE, "plain");
	check(f);
	why = why_of(f, ACTION_DRAIN, "ca-off");
	expect_why(why, "node ca-off");
	expect_why(why, "cluster-autoscaler.kubernetes.io/scale-down-disabled: \"true\"");
	expect_why(why, "safety.do_not_disrupt_annotations");
	expect_why(why_of(f, ACTION_DELETE, "ca-off"), "scale-down-disabled");
	why = why_of(f, ACTION_CORDON, "karp-off");
	expect_why(why, "node karp-off");
	expect_why(why, "karpenter.sh/do-not-disrupt: \"true\"");
	expect_why(why_of(f, ACTION_DRAIN, "karp-off"), "karpenter.sh/do-not-disrupt");
	/* the rest of the plan goes through: "false" opts nothing out */
	assert_int_equal(f->v.accepted.actions[0].type, ACTION_SCALE_UP);
	assert_true(accepted(f, ACTION_DRAIN, "plain"));
	assert_true(accepted(f, ACTION_DELETE, "plain"));
	assert_int_equal(f->v.accepted.n_actions, 3);
	assert_int_equal(f->v.n_rejected, 4);
	/* a refusal is counted under its own invariant */
	assert_string_equal(instruments_invariant(why), "do_not_disrupt");
}

/* The opt-outs keep a node from every voluntary disruption, a replace
 * and an expiry included, but not from the answer to an interruption
 * notice: the cloud takes the node anyway (Karpenter's reading). */
static void test_optouts_and_interruptions(void **state)
{
	struct fixture *f = *state;
	struct action a;

	memset(&a, 0, sizeof(a));
	a.type = ACTION_REPLACE;
	a.node = "karp-off";
	a.group = "workers";
	a.count = 1;
	a.reason = "cheaper";
	a.where = "";
	a.disruption = "underutilized";
	assert_int_equal(plan_add(&f->plan, &a), 0);
	a.node = "pinned";
	a.disruption = "expired";
	assert_int_equal(plan_add(&f->plan, &a), 0);
	memset(&a, 0, sizeof(a));
	a.reason = "spot interruption";
	a.where = "";
	a.disruption = "interrupted";
	a.node = "ca-off";
	a.type = ACTION_CORDON;
	assert_int_equal(plan_add(&f->plan, &a), 0);
	a.type = ACTION_DRAIN;
	assert_int_equal(plan_add(&f->plan, &a), 0);
	a.node = "karp-off";
	assert_int_equal(plan_add(&f->plan, &a), 0);
	/* without a notice, "interrupted" is the policy's word only */
	a.node = "pinned";
	assert_int_equal(plan_add(&f->plan, &a), 0);
	f->s->nodes[snapshot_find_node(f->s, "ca-off")].interruption_kind = "spot_interruption";
	f->s->nodes[snapshot_find_node(f->s, "karp-off")].interruption_kind = "rebalance";
	check(f);
	expect_why(why_of(f, ACTION_REPLACE, "karp-off"), "karpenter.sh/do-not-disrupt: \"true\"");
	expect_why(why_of(f, ACTION_REPLACE, "pinned"), "pod apps/job-0 on node pinned");
	expect_why(why_of(f, ACTION_DRAIN, "pinned"), "on node pinned, which has no interruption notice");
	assert_string_equal(instruments_invariant(why_of(f, ACTION_DRAIN, "pinned")), "invalid_action");
	assert_true(accepted(f, ACTION_CORDON, "ca-off"));
	assert_true(accepted(f, ACTION_DRAIN, "ca-off"));
	assert_true(accepted(f, ACTION_DRAIN, "karp-off"));
	assert_int_equal(f->v.n_rejected, 3);
}

static void test_pod_annotation_refuses_removal(void **state)
{
	struct fixture *f = *state;
	const char *why;

	add(f, ACTION_DRAIN, "pinned");
	add(f, ACTION_CORDON, "pinned");
	add(f, ACTION_DRAIN, "done"); /* the pod there has finished: it opts nothing out */
	check(f);
	why = why_of(f, ACTION_DRAIN, "pinned");
	expect_why(why, "pod apps/job-0 on node pinned");
	expect_why(why, "karpenter.sh/do-not-disrupt: \"true\"");
	expect_why(why_of(f, ACTION_CORDON, "pinned"), "pod apps/job-0");
	assert_true(accepted(f, ACTION_DRAIN, "done"));
	assert_int_equal(f->v.n_rejected, 2);
}

static void test_noexecute_taint_is_refused(void **state)
{
	struct fixture *f = *state;

	add_taint(f, "ca-off", TAINT_NO_EXECUTE);
	add_taint(f, "pinned", TAINT_NO_EXECUTE);
	add_taint(f, "karp-off", TAINT_NO_SCHEDULE); /* evicts nothing: not a removal */
	add(f, ACTION_UNCORDON, "ca-off");
	check(f);
	expect_why(why_of(f, ACTION_TAINT, "ca-off"), "scale-down-disabled");
	expect_why(why_of(f, ACTION_TAINT, "pinned"), "pod apps/job-0");
	assert_true(accepted(f, ACTION_TAINT, "karp-off"));
	assert_true(accepted(f, ACTION_UNCORDON, "ca-off"));
	assert_int_equal(f->v.n_rejected, 2);
}

static void test_duration_from_pod_creation(void **state)
{
	struct fixture *f = *state;
	const char *why;

	add(f, ACTION_DRAIN, "young");
	add(f, ACTION_DRAIN, "old");
	check(f);
	why = why_of(f, ACTION_DRAIN, "young");
	expect_why(why, "pod apps/warm-0 on node young");
	expect_why(why, "karpenter.sh/do-not-disrupt: \"1h\" (30m more)");
	assert_true(accepted(f, ACTION_DRAIN, "old"));
	assert_int_equal(f->v.n_rejected, 1);
}

static void test_safe_to_evict_false_as_before(void **state)
{
	struct fixture *f = *state;
	const char *why;

	add(f, ACTION_DRAIN, "no-evict");
	add(f, ACTION_CORDON, "no-evict"); /* a cordon evicts nothing: not refused for it */
	check(f);
	why = why_of(f, ACTION_DRAIN, "no-evict");
	expect_why(why, "pod apps/db-0 has safe-to-evict=false");
	assert_string_equal(instruments_invariant(why), "drain_blocked");
	assert_true(accepted(f, ACTION_CORDON, "no-evict"));
}

static void test_configured_list(void **state)
{
	struct fixture *f = *state;
	static const struct config_optout mine[] = {
		{"example.com/keep", "yes", false},
		{"karpenter.sh/do-not-disrupt", "true", true},
	};
	const char *why;

	/* only what the list names: the node annotations are no longer read */
	f->lim.optouts = mine;
	f->lim.n_optouts = 2;
	add(f, ACTION_DRAIN, "ca-off");
	add(f, ACTION_DRAIN, "karp-off");
	add(f, ACTION_DRAIN, "pinned");
	check(f);
	assert_true(accepted(f, ACTION_DRAIN, "ca-off"));
	assert_true(accepted(f, ACTION_DRAIN, "karp-off"));
	expect_why(why_of(f, ACTION_DRAIN, "pinned"), "pod apps/job-0");
	/* an annotation of the operator's own, with its value */
	plan_free(&f->plan);
	plan_init(&f->plan);
	{
		struct node *n = &f->s->nodes[snapshot_find_node(f->s, "spare")];
		static struct kv keep[] = {{"example.com/keep", "yes"}};

		n->annotations.items = keep;
		n->annotations.n = 1;
	}
	add(f, ACTION_DELETE, "spare");
	check(f);
	why = why_of(f, ACTION_DELETE, "spare");
	expect_why(why, "node spare");
	expect_why(why, "example.com/keep: \"yes\"");
	/* none at all: nothing is refused for an annotation */
	f->lim.optouts = NULL;
	f->lim.n_optouts = 0;
	plan_free(&f->plan);
	plan_init(&f->plan);
	add(f, ACTION_DRAIN, "ca-off");
	add(f, ACTION_DRAIN, "pinned");
	add(f, ACTION_DELETE, "spare");
	check(f);
	assert_int_equal(f->v.n_rejected, 0);
}

static void test_node_opted_out(void **state)
{
	struct fixture *f = *state;
	char why[512];

	assert_true(safety_node_opted_out(f->s, &f->lim, (size_t)snapshot_find_node(f->s, "ca-off"),
					  why, sizeof(why)));
	expect_why(why, "node ca-off");
	assert_true(safety_node_opted_out(f->s, &f->lim, (size_t)snapshot_find_node(f->s, "pinned"),
					  why, sizeof(why)));
	expect_why(why, "pod apps/job-0");
	assert_false(safety_node_opted_out(f->s, &f->lim, (size_t)snapshot_find_node(f->s, "plain"),
					   why, sizeof(why)));
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_node_annotations_refuse_removal),
		T(test_pod_annotation_refuses_removal),
		T(test_noexecute_taint_is_refused),
		T(test_duration_from_pod_creation),
		T(test_safe_to_evict_false_as_before),
		T(test_configured_list),
		T(test_node_opted_out),
		T(test_optouts_and_interruptions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
