/*
 * Plan decoding: what a policy's reconcile returns is read strictly — a
 * list instead of a plan, unknown fields, holes, names Kubernetes would
 * refuse, NUL bytes and fields or plans over their size limits are all a
 * malformed plan (no actions, an error naming file:line) — and a giant
 * string shared by many actions is refused before it is copied.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "buf.h"
#include "model.h"
#include "policy/host.h"
#include "sched.h"
#include "test_policy_files.h"

static const struct sandbox_limits limits = { .instructions = 200000000,
					     .memory = 256LL * 1024 * 1024 };

/* "return <expr>" as the whole body of reconcile, defined on line 2. */
#define WRAP(body) "local P = {}\nfunction P.reconcile(cluster)\n" body "\nend\nreturn P\n"

/* Runs one reconcile of 'src'; returns its status, the plan in *plan
 * (caller frees) and the message in 'err'. */
static int run(const char *src, struct plan *plan, struct errbuf *err)
{
	const char *path = write_policy(src);
	struct policy *p = policy_load(path, SOURCE_DIR "/lua", &limits, NULL, err);
	struct snapshot *s = snapshot_new();
	struct errbuf serr;
	struct drain_opts o;
	int rc;

	unlink(path);
	if (!p)
		fail_msg("load failed: %s", err->msg);
	assert_non_null(s);
	assert_int_equal(snapshot_finish(s, 1700000000, &serr), 0);
	drain_opts_default(&o);
	rc = policy_reconcile(p, s, &o, plan, NULL, err);
	policy_free(p);
	snapshot_free(s);
	return rc;
}

static void expect_malformed(const char *src, const char *needle)
{
	struct errbuf err;
	struct plan plan;

	if (run(src, &plan, &err) != -1)
		fail_msg("plan accepted (%zu actions), expected an error with \"%s\"",
			 plan.n_actions, needle);
	assert_int_equal(plan.n_actions, 0);
	if (!strstr(err.msg, "reconcile returned a malformed plan"))
		fail_msg("error \"%s\" does not say the plan is malformed", err.msg);
	if (!strstr(err.msg, needle))
		fail_msg("error \"%s\" does not contain \"%s\"", err.msg, needle);
}

static void expect_plan(const char *src, size_t n_actions, struct plan *plan)
{
	struct errbuf err;

	if (run(src, plan, &err) != 0)
		fail_msg("unexpected error: %s", err.msg);
	assert_int_equal(plan->n_actions, n_actions);
}

static void test_bare_list_is_malformed(void **state)
{
	struct errbuf err;
	struct plan plan;

	(void)state;
	expect_malformed(WRAP("return { {type = 'delete'}, 42 }"), "a list, not a plan");
	expect_malformed(WRAP("return { {type = 'cordon', node = 'n', reason = 'r'} }"),
			 "a list, not a plan");
	/* the message names the policy file and the line reconcile is on */
	assert_int_equal(run(WRAP("return { {type = 'delete'} }"), &plan, &err), -1);
	if (!strstr(err.msg, ".lua:2: reconcile returned a malformed plan"))
		fail_msg("error \"%s\" does not name file:line", err.msg);
	/* a plan with a list part and garbage next to actions */
	expect_malformed(WRAP("return { actions = {}, 1, 2 }"), "a list, not a plan");
	expect_malformed(WRAP("return { actions = {}, action = {{type = 'cordon', node = 'n', reason = 'r'}} }"),
			 "unknown field \"action\"");
	expect_malformed(WRAP("return { actions = {}, [true] = 1 }"), "key of type boolean");
}

static void test_unknown_fields_and_types(void **state)
{
	(void)state;
	expect_malformed(WRAP("return {actions = {{type = 'cordon', node = 'n', reason = 'r', count = 3}}}"),
			 "cordon has no field \"count\"");
	expect_malformed(WRAP("return {actions = {{type = 'scale_up', group = 'g', count = 1, reason = 'r', node = 'n'}}}"),
			 "scale_up has no field \"node\"");
	expect_malformed(WRAP("return {actions = {{type = 'drain', node = 'n', reason = 'r', [1] = 'x'}}}"),
			 "key of type number");
	expect_malformed(WRAP("return {actions = {{type = 'scale_up', group = 'g', count = '3', reason = 'r'}}}"),
			 "positive integer count, got string");
	expect_malformed(WRAP("return {actions = {{type = 'scale_up', group = 'g', count = 2.0, reason = 'r'}}}"),
			 "positive integer count, got 2.0");
	expect_malformed(WRAP("return {actions = {{type = 'cordon', node = 42, reason = 'r'}}}"),
			 "field \"node\" must be a string, got number");
	expect_malformed(WRAP("return {actions = {{type = 'label', node = 'n', key = 'k', value = 'v', remove = 'yes', reason = 'r'}}}"),
			 "field \"remove\" must be a boolean");
	expect_malformed(WRAP("return {actions = {{type = 'label', node = 'n', key = 'k', value = 'v', remove = true, reason = 'r'}}}"),
			 "remove = true takes no value");
	/* holes and named keys in the list: nothing is skipped silently */
	expect_malformed(WRAP("local a = {type = 'cordon', node = 'n', reason = 'r'}\n"
			      "return {actions = {a, nil, a}}"),
			 "without holes");
	expect_malformed(WRAP("return {actions = {x = {type = 'cordon', node = 'n', reason = 'r'}}}"),
			 "must be a list");
	expect_malformed(WRAP("return {actions = {}, messages = {'a', extra = 'b'}}"), "must be a list");
	expect_malformed(WRAP("return {notes = {n = {candidate = true, why = 'w', because = 'x'}}}"),
			 "a field other than candidate and why");
	expect_malformed(WRAP("return {notes = {[1] = {candidate = true}}}"), "must map node names");
}

static void test_names_follow_kubernetes(void **state)
{
	(void)state;
	/* an embedded NUL would act on the name before it */
	expect_malformed(WRAP("return {actions = {{type = 'drain', node = 'workers-1\\0evil', reason = 'r'}}}"),
			 "contains a NUL byte");
	expect_malformed(WRAP("return {actions = {{type = 'label', node = 'n', key = 'k\\0x', value = 'v', reason = 'r'}}}"),
			 "contains a NUL byte");
	expect_malformed(WRAP("return {actions = {{type = 'annotate', node = 'n', key = 'k', value = 'a\\0b', reason = 'r'}}}"),
			 "contains a NUL byte");
	expect_malformed(WRAP("return {actions = {{type = 'cordon', node = 'n', reason = 'ok\\0hidden'}}}"),
			 "contains a NUL byte");
	expect_malformed(WRAP("return {actions = {{type = 'cordon', node = 'n', reason = 'r', where = 'p.lua:1\\n[error] forged'}}}"),
			 "holds a control character");
	expect_malformed(WRAP("return {actions = {{type = 'cordon', node = 'Workers_1', reason = 'r'}}}"),
			 "not a valid node name");
	expect_malformed(WRAP("return {actions = {{type = 'cordon', node = 'w-1\\n2026 fake log line', reason = 'r'}}}"),
			 "not a valid node name");
	expect_malformed(WRAP("return {actions = {{type = 'scale_up', group = 'Big Group', count = 1, reason = 'r'}}}"),
			 "not a valid node group name");
	expect_malformed(WRAP("return {actions = {{type = 'label', node = 'n', key = '-bad', value = 'v', reason = 'r'}}}"),
			 "invalid label key");
	expect_malformed(WRAP("return {actions = {{type = 'label', node = 'n', key = 'k', value = 'a b', reason = 'r'}}}"),
			 "invalid label value");
	expect_malformed(WRAP("return {actions = {{type = 'taint', node = 'n', key = 'a/b/c', value = 'v', effect = 'NoSchedule', reason = 'r'}}}"),
			 "invalid taint key");
	expect_malformed(WRAP("return {actions = {{type = 'taint', node = 'n', key = 'k', value = '\\xff', effect = 'NoSchedule', reason = 'r'}}}"),
			 "invalid taint value \"\\xff\"");
	expect_malformed(WRAP("return {actions = {{type = 'annotate', node = 'n', key = 'k', value = '\\xc3\\x28', reason = 'r'}}}"),
			 "not valid UTF-8");
	/* a note may name a node a state file spelled badly, never with a NUL */
	expect_malformed(WRAP("return {notes = {['a\\0b'] = {candidate = true, why = 'w'}}}"),
			 "contains a NUL byte");
}

static void test_field_limits(void **state)
{
	struct plan plan;

	(void)state;
	/* a node name of 254 bytes, a label value of 64, a key name of 64 */
	expect_malformed(WRAP("return {actions = {{type = 'cordon', node = string.rep('a', 254), reason = 'r'}}}"),
			 "field \"node\" is 254 bytes long, more than the limit of 253");
	expect_malformed(WRAP("return {actions = {{type = 'label', node = 'n', key = 'k', value = string.rep('v', 64), reason = 'r'}}}"),
			 "more than the limit of 63");
	expect_malformed(WRAP("return {actions = {{type = 'label', node = 'n', key = 'example.com/' .. string.rep('k', 64), value = 'v', reason = 'r'}}}"),
			 "key name must be 1-63 characters");
	expect_malformed(WRAP("return {actions = {{type = 'label', node = 'n', key = string.rep('p', 254) .. '/k', value = 'v', reason = 'r'}}}"),
			 "key prefix must be 1-253 characters");
	expect_malformed(WRAP("return {actions = {{type = 'scale_up', group = string.rep('g', 64), count = 1, reason = 'r'}}}"),
			 "field \"group\" is 64 bytes long, more than the limit of 63");
	expect_malformed(WRAP("return {actions = {{type = 'cordon', node = 'n', reason = string.rep('r', 4097)}}}"),
			 "field \"reason\" is 4097 bytes long, more than the limit of 4096");
	expect_malformed(WRAP("return {actions = {{type = 'annotate', node = 'n', key = 'k', value = string.rep('v', 65537), reason = 'r'}}}"),
			 "more than the limit of 65536");
	expect_malformed(WRAP("return {notes = {n = {candidate = true, why = string.rep('w', 4097)}}}"),
			 "field \"why\" is 4097 bytes long");
	expect_malformed(WRAP("local a = {type = 'cordon', node = 'n', reason = 'r'}\n"
			      "local l = {} for i = 1, 100001 do l[i] = a end return {actions = l}"),
			 "plan.actions has 100001 entries, more than the limit of 100000");
	/* at the limits, all is well */
	expect_plan(WRAP("return {actions = {{type = 'label', node = string.rep('a', 253), key = string.rep('p', 253) .. '/' .. string.rep('k', 63), value = string.rep('v', 63), reason = string.rep('r', 4096)}}}"),
		    1, &plan);
	assert_int_equal(strlen(plan.actions[0].reason), 4096);
	plan_free(&plan);
}

/* One 16 MiB string shared by 100 actions is refused before any copy; a
 * plan whose (allowed) fields add up to more than 32 MiB is refused too. */
static void test_shared_giant_strings(void **state)
{
	(void)state;
	expect_malformed(WRAP("local big = string.rep('a', 16 * 1024 * 1024)\n"
			      "local l = {} for i = 1, 100 do l[i] = {type = 'cordon', node = big, reason = 'r'} end\n"
			      "return {actions = l}"),
			 "actions[1]: field \"node\" is 16777216 bytes long, more than the limit of 253");
	expect_malformed(WRAP("local big = string.rep('a', 16 * 1024 * 1024)\n"
			      "local l = {} for i = 1, 100 do l[i] = {type = 'cordon', node = 'n', reason = 'r', where = big} end\n"
			      "return {actions = l}"),
			 "field \"where\" is 16777216 bytes long");
	expect_malformed(WRAP("local v = string.rep('v', 65536)\n"
			      "local l = {} for i = 1, 1000 do l[i] = {type = 'annotate', node = 'n', key = 'k', value = v, reason = 'r'} end\n"
			      "return {actions = l}"),
			 "add up to more than the limit of 33554432 bytes");
}

static void test_where_names_the_line(void **state)
{
	(void)state;
	expect_malformed("local ls = require 'luascale'\nlocal P = {}\nfunction P.reconcile()\n"
			 "  local plan = ls.plan()\n  plan:label('n', 'k', 'a b', 'why')\n"
			 "  return plan\nend\nreturn P\n",
			 ".lua:5): invalid label value");
}

static void test_messages_cut_not_fatal(void **state)
{
	struct plan plan;

	(void)state;
	expect_plan(WRAP("local m = {} for i = 1, 1500 do m[i] = 'm' .. i end\n"
			 "m[1] = string.rep('x', 10000) .. 'tail'\n"
			 "return {actions = {}, messages = m}"),
		    0, &plan);
	assert_int_equal(plan.n_messages, 1001);
	assert_int_equal(strlen(plan.messages[0]), 4096 + 3);
	assert_string_equal(plan.messages[1000], "(500 more messages not kept: at most 1000 per plan)");
	plan_free(&plan);
}

static void test_builder_plans_decode(void **state)
{
	struct plan plan;

	(void)state;
	expect_plan("local ls = require 'luascale'\nlocal P = {}\nfunction P.reconcile()\n"
		    "  local plan = ls.plan()\n"
		    "  plan:scale_up('workers', 2, 'pending')\n  plan:cordon('w-1', 'idle')\n"
		    "  plan:uncordon('w-2', 'needed')\n  plan:drain('w-3', 'empty')\n"
		    "  plan:delete('w-3', 'drained')\n  plan:label('w-1', 'example.com/x', 'y', 'mark')\n"
		    "  plan:label('w-1', 'example.com/x', nil, 'unmark')\n"
		    "  plan:annotate('w-1', 'note', 'caf\\xc3\\xa9 ok', 'note')\n"
		    "  plan:taint('w-1', 'dedicated', 'gpu', 'NoSchedule', 'gpu only')\n"
		    "  plan:untaint('w-1', 'dedicated', 'NoSchedule', 'any')\n"
		    "  plan:explain('w-1', true, 'idle') plan:log('hello %d', 1)\n"
		    "  return plan\nend\nreturn P\n",
		    10, &plan);
	assert_string_equal(plan.actions[0].group, "workers");
	assert_true(plan.actions[6].remove);
	assert_null(plan.actions[6].value);
	assert_string_equal(plan.actions[8].value, "gpu");
	assert_int_equal(plan.n_notes, 1);
	assert_int_equal(plan.n_messages, 1);
	plan_free(&plan);
	/* one action table listed twice is two actions, checked once */
	expect_plan(WRAP("local a = {type = 'cordon', node = 'n', reason = 'r'}\nreturn {actions = {a, a}}"),
		    2, &plan);
	plan_free(&plan);
}

/* ---- instance types ---- */

/* A group "fleet" of three instance types (small: 2 CPUs at 0.1/h,
 * medium: 4 at 0.2/h, large: 8 at 0.5/h), its template the large's, as
 * engine/cloudgroups.c makes one from a fleet group. */
static struct kv type_labels[3][2] = {
	{{"node.kubernetes.io/instance-type", "small"}, {"pool", "fleet"}},
	{{"node.kubernetes.io/instance-type", "medium"}, {"pool", "fleet"}},
	{{"node.kubernetes.io/instance-type", "large"}, {"pool", "fleet"}},
};

static void fleet_group(struct node_group *g, struct node_group types[3])
{
	static const char *const names[] = {"small", "medium", "large"};
	static const double prices[] = {0.1, 0.2, 0.5};
	size_t i;

	memset(g, 0, sizeof(*g));
	g->name = "fleet";
	g->max = 10;
	for (i = 0; i < 3; i++) {
		struct node_group *t = &types[i];

		memset(t, 0, sizeof(*t));
		t->name = "fleet";
		t->max = 10;
		t->instance_type = names[i];
		t->price_per_hour = prices[i];
		t->price_from_cloud = true;
		t->tmpl.allocatable.cpu_m = 2000 << i;
		t->tmpl.allocatable.memory = (8LL << 30) << i;
		t->tmpl.allocatable.pods = 110;
		t->tmpl.labels.items = type_labels[i];
		t->tmpl.labels.n = 2;
	}
	g->tmpl = types[2].tmpl;
	g->selector.items = &type_labels[0][1]; /* pool=fleet */
	g->selector.n = 1;
	g->instance_type = "large";
	g->price_per_hour = 0.5;
	g->types = types;
	g->n_types = 3;
}

#define PENDING(name, cpu) \
	"{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"" name "\",\"namespace\":\"default\"," \
	"\"uid\":\"u-" name "\",\"creationTimestamp\":\"2023-11-14T22:00:00Z\"}," \
	"\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"" cpu "\",\"memory\":\"1Gi\"}}}]}," \
	"\"status\":{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\"," \
	"\"reason\":\"Unschedulable\"}]}}"

/* One reconcile of 'src' on the fleet group and pods 'json' (a List). */
static int run_fleet(const char *src, const char *json, struct plan *plan, struct errbuf *err)
{
	const char *path = write_policy(src);
	struct policy *p = policy_load(path, SOURCE_DIR "/lua", &limits, NULL, err);
	struct snapshot *s = snapshot_new();
	struct node_group g, types[3];
	struct drain_opts o;
	int rc;

	unlink(path);
	if (!p)
		fail_msg("load failed: %s", err->msg);
	fleet_group(&g, types);
	if (snapshot_add_json(s, json, strlen(json), "state", err) < 0 ||
	    snapshot_set_groups(s, &g, 1, err) < 0 || snapshot_finish(s, 1700000000, err) < 0)
		fail_msg("snapshot: %s", err->msg);
	drain_opts_default(&o);
	rc = policy_reconcile(p, s, &o, plan, NULL, err);
	policy_free(p);
	snapshot_free(s);
	return rc;
}

#define FLEET_POLICY(body) \
	"local ls = require 'luascale'\nlocal packing = require 'luascale.packing'\nlocal P = {}\n" \
	"function P.reconcile(cluster)\n  local plan, g = ls.plan(), cluster.groups.fleet\n" body \
	"\n  return plan\nend\nreturn P\n"

/* The view shows a group's types; packing.pack_group packs as each, and
 * the cheapest packing that places most wins (two 1.5-CPU pods: one
 * medium node at 0.2/h beats two small ones at 0.2/h by its node count
 * and one large at 0.5/h by price); the result names the types that take
 * its new node (medium and large, not small), and the scale_up carries
 * them. cluster:pack refuses a type the group does not have. */
static void test_instance_types(void **state)
{
	const char *two = "{\"kind\":\"List\",\"items\":[" PENDING("a", "1500m") "," PENDING("b", "1500m") "]}";
	struct errbuf err;
	struct plan plan;

	(void)state;
	if (run_fleet(FLEET_POLICY(
		"  assert(g.instance_type == 'large' and #g.instance_types == 3)\n"
		"  assert(g.instance_types[1].name == 'small' and g.instance_types[1].price_per_hour == 0.1)\n"
		"  assert(g.instance_types[2].template.allocatable.cpu == 4)\n"
		"  assert(g.instance_types[3].template.labels['node.kubernetes.io/instance-type'] == 'large')\n"
		"  local r = packing.pack_group(cluster, cluster.pending, g, 10)\n"
		"  assert(r.instance_type == 'medium', tostring(r.instance_type))\n"
		"  assert(r.new_nodes == 1 and r.placed == 2 and r.price_per_hour == 0.2)\n"
		"  assert(#r.instance_types == 2, #r.instance_types)\n"
		"  local small = cluster:pack(cluster.pending, g, 10, {instance_type = 'small'})\n"
		"  assert(small.new_nodes == 2 and small.instance_type == 'small')\n"
		"  assert(#small.instance_types == 3)\n"
		"  assert(packing.launch_opts(small, g) == nil)\n"
		"  plan:scale_up(g, r.new_nodes, 'two pods', packing.launch_opts(r, g))"),
		two, &plan, &err) != 0)
		fail_msg("reconcile: %s", err.msg);
	assert_int_equal(plan.n_actions, 1);
	assert_int_equal(plan.actions[0].n_instance_types, 2);
	assert_string_equal(plan.actions[0].instance_types[0], "medium");
	assert_string_equal(plan.actions[0].instance_types[1], "large");
	plan_free(&plan);
	if (run_fleet(FLEET_POLICY("  cluster:pack(cluster.pending, g, 10, {instance_type = 'huge'})"),
		      two, &plan, &err) != -1)
		fail_msg("an unknown type was packed");
	if (!strstr(err.msg, "instance type \"huge\" is not one of group fleet's instance_types"))
		fail_msg("error: %s", err.msg);
}

#define FLEET_NODE(name, type) \
	"{\"kind\":\"Node\",\"metadata\":{\"name\":\"" name "\",\"labels\":{\"pool\":\"fleet\"," \
	"\"node.kubernetes.io/instance-type\":\"" type "\"}},\"status\":{\"allocatable\":{\"cpu\":\"4\"," \
	"\"memory\":\"16Gi\",\"pods\":\"110\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}"

/* A node of a group of several types drifts when its type is none of
 * them, not for being another of them than the group's template. */
static void test_instance_type_drift(void **state)
{
	const char *two = "{\"kind\":\"List\",\"items\":[" FLEET_NODE("m", "medium") "," FLEET_NODE("h", "huge") "]}";
	struct errbuf err;
	struct plan plan;

	(void)state;
	if (run_fleet(FLEET_POLICY(
		"  local m, h = cluster:node('m'), cluster:node('h')\n"
		"  assert(m.group == 'fleet' and h.group == 'fleet')\n"
		"  assert(m.drifted == false and m.drift_reason == nil, tostring(m.drift_reason))\n"
		"  assert(h.drifted == true)\n"
		"  assert(h.drift_reason == \"instance type huge is none of group fleet's\", h.drift_reason)"),
		two, &plan, &err) != 0)
		fail_msg("reconcile: %s", err.msg);
	plan_free(&plan);
}

/* instance_types of a scale_up: a list of 1 to 64 distinct names. */
static void test_instance_types_decode(void **state)
{
	struct plan plan;

	(void)state;
	expect_plan(WRAP("return {actions = {{type = 'scale_up', group = 'g', count = 1, reason = 'r', "
			 "instance_types = {'m5.large', 'Standard_D4s_v5'}}}}"), 1, &plan);
	assert_int_equal(plan.actions[0].n_instance_types, 2);
	assert_string_equal(plan.actions[0].instance_types[1], "Standard_D4s_v5");
	plan_free(&plan);
	expect_malformed(WRAP("return {actions = {{type = 'scale_up', group = 'g', count = 1, reason = 'r', "
			      "instance_types = 'm5.large'}}}"), "must be a list of instance type names");
	expect_malformed(WRAP("return {actions = {{type = 'scale_up', group = 'g', count = 1, reason = 'r', "
			      "instance_types = {}}}}"), "must list 1 to 64 instance types");
	expect_malformed(WRAP("return {actions = {{type = 'scale_up', group = 'g', count = 1, reason = 'r', "
			      "instance_types = {'a', 'a'}}}}"), "lists \"a\" twice");
	expect_malformed(WRAP("return {actions = {{type = 'scale_up', group = 'g', count = 1, reason = 'r', "
			      "instance_types = {'m5 large'}}}}"), "is not an instance type name");
	expect_malformed(WRAP("return {actions = {{type = 'scale_up', group = 'g', count = 1, reason = 'r', "
			      "instance_types = {1}}}}"), "instance_types[1] must be a string");
	expect_malformed(WRAP("return {actions = {{type = 'cordon', node = 'n', reason = 'r', "
			      "instance_types = {'a'}}}}"), "instance_types");
}

/* A disrupting action may say why, for the disruption budgets. */
static void test_disruption_reason(void **state)
{
	struct plan plan;

	(void)state;
	expect_plan("local ls = require 'luascale'\nlocal P = {}\nfunction P.reconcile()\n"
		    "  local plan = ls.plan()\n"
		    "  plan:cordon('w-1', 'old', {disruption = 'expired'})\n"
		    "  plan:drain('w-1', 'old', {disruption = 'expired'})\n"
		    "  plan:delete('w-2', 'idle')\n"
		    "  plan:taint('w-3', 'k', 'v', 'NoExecute', 'spot', {disruption = 'interrupted'})\n"
		    "  return plan\nend\nreturn P\n", 4, &plan);
	assert_string_equal(plan.actions[0].disruption, "expired");
	assert_string_equal(plan.actions[1].disruption, "expired");
	assert_null(plan.actions[2].disruption);
	assert_string_equal(plan.actions[3].disruption, "interrupted");
	plan_free(&plan);
	expect_malformed(WRAP("return {actions = {{type = 'drain', node = 'n', reason = 'r', disruption = 'bored'}}}"),
			 "disruption must be empty, underutilized, drifted, expired or interrupted, got \"bored\"");
	expect_malformed(WRAP("return {actions = {{type = 'uncordon', node = 'n', reason = 'r', disruption = 'empty'}}}"),
			 "disruption");
	expect_malformed(WRAP("return {actions = {{type = 'scale_up', group = 'g', count = 1, reason = 'r', disruption = 'empty'}}}"),
			 "disruption");
	{
		struct errbuf err;

		if (run("local ls = require 'luascale'\nlocal P = {}\nfunction P.reconcile()\n"
			"  ls.plan():drain('w-1', 'x', {disruption = 'whim'})\nend\nreturn P\n", &plan, &err) != -1)
			fail_msg("a bad disruption was taken");
		if (!strstr(err.msg, "plan:drain: disruption must be empty, underutilized, drifted, expired or interrupted, got whim"))
			fail_msg("error: %s", err.msg);
	}
}

/* plan:replace(node, group, reason, opts): the node's own group when
 * none is given; the decoder holds its fields. */
static void test_replace_decode(void **state)
{
	struct plan plan;
	struct buf b = BUF_INIT;
	char desc[256];

	(void)state;
	expect_plan("local ls = require 'luascale'\nlocal P = {}\nfunction P.reconcile()\n"
		    "  local plan = ls.plan()\n"
		    "  plan:replace({name = 'w-1', group = 'big'}, nil, 'one smaller node is enough')\n"
		    "  plan:replace('w-2', {name = 'mixed'}, 'cheaper', {disruption = 'underutilized', instance_types = {'m5.large'}})\n"
		    "  return plan\nend\nreturn P\n", 2, &plan);
	assert_int_equal(plan.actions[0].type, ACTION_REPLACE);
	assert_string_equal(plan.actions[0].node, "w-1");
	assert_string_equal(plan.actions[0].group, "big");
	assert_int_equal(plan.actions[0].count, 1);
	assert_null(plan.actions[0].disruption);
	assert_string_equal(plan.actions[1].group, "mixed");
	assert_string_equal(plan.actions[1].disruption, "underutilized");
	assert_int_equal(plan.actions[1].n_instance_types, 1);
	action_describe(&plan.actions[1], desc, sizeof(desc));
	assert_string_equal(desc, "replace w-2 with a node of mixed (m5.large)");
	action_to_json(&plan.actions[1], &b);
	assert_non_null(strstr(b.data, "\"type\":\"replace\",\"node\":\"w-2\",\"group\":\"mixed\",\"instance_types\":[\"m5.large\"],\"disruption\":\"underutilized\""));
	buf_free(&b);
	plan_free(&plan);
	expect_malformed(WRAP("return {actions = {{type = 'replace', node = 'n', reason = 'r'}}}"),
			 "group");
	expect_malformed(WRAP("return {actions = {{type = 'replace', node = 'n', group = 'G!', reason = 'r'}}}"),
			 "is not a valid node group name");
	expect_malformed(WRAP("return {actions = {{type = 'replace', group = 'g', reason = 'r'}}}"),
			 "node");
	expect_malformed(WRAP("return {actions = {{type = 'replace', node = 'n', group = 'g', reason = 'r', count = 2}}}"),
			 "replace has no field \"count\"");
	{
		struct errbuf err;

		if (run("local ls = require 'luascale'\nlocal P = {}\nfunction P.reconcile()\n"
			"  ls.plan():replace('w-1', nil, 'x')\nend\nreturn P\n", &plan, &err) != -1)
			fail_msg("a replace without a group was taken");
		if (!strstr(err.msg, "plan:replace: group must be given"))
			fail_msg("error: %s", err.msg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bare_list_is_malformed),
		cmocka_unit_test(test_unknown_fields_and_types),
		cmocka_unit_test(test_names_follow_kubernetes),
		cmocka_unit_test(test_field_limits),
		cmocka_unit_test(test_shared_giant_strings),
		cmocka_unit_test(test_where_names_the_line),
		cmocka_unit_test(test_messages_cut_not_fatal),
		cmocka_unit_test(test_builder_plans_decode),
		cmocka_unit_test(test_instance_types),
		cmocka_unit_test(test_instance_types_decode),
		cmocka_unit_test(test_disruption_reason),
		cmocka_unit_test(test_replace_decode),
		cmocka_unit_test(test_instance_type_drift),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
