/*
 * cluster:replacement_for(): which group, or instance type of a group of
 * several, takes every pod a drain would move off a set of nodes on the
 * fewest and cheapest new nodes, what the nodes cost now, whether their
 * pods fit on the other nodes instead, and what keeps a node. Each case
 * is a policy whose Lua asserts say the answer.
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

#include "arena.h"
#include "model.h"
#include "policy/host.h"
#include "sched.h"
#include "test_policy_files.h"

static const struct sandbox_limits limits = { .instructions = 200000000,
					     .memory = 256LL * 1024 * 1024 };

/* A node of group 'pool' ("fleet" or "big"), of instance type 'type', with
 * 'cpu' cores and 4 GiB a core. */
#define NODE(name, pool, type, cpu) \
	"{\"kind\":\"Node\",\"metadata\":{\"name\":\"" name "\",\"labels\":{\"pool\":\"" pool "\"," \
	"\"node.kubernetes.io/instance-type\":\"" type "\",\"kubernetes.io/hostname\":\"" name "\"}}," \
	"\"spec\":{\"providerID\":\"mock:///" name "\"}," \
	"\"status\":{\"allocatable\":{\"cpu\":\"" cpu "\",\"memory\":\"" cpu "0Gi\",\"pods\":\"110\"}," \
	"\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}"

/* A pod of a ReplicaSet (or of 'kind'), bound to 'node', with labels. */
#define POD_OF(kind, name, node, cpu, labels) \
	"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"apps\",\"name\":\"" name "\"," \
	"\"labels\":" labels ",\"creationTimestamp\":\"2023-11-14T20:00:00Z\"," \
	"\"ownerReferences\":[{\"kind\":\"" kind "\",\"name\":\"owner\",\"controller\":true}]}," \
	"\"spec\":{\"nodeName\":\"" node "\",\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":" \
	"{\"cpu\":\"" cpu "\",\"memory\":\"1Gi\"}}}]},\"status\":{\"phase\":\"Running\"}}"
#define POD(name, node, cpu) POD_OF("ReplicaSet", name, node, cpu, "{}")

#define LIST(items) "{\"kind\":\"List\",\"items\":[" items "]}"

/* Group "fleet" of three types (small: 2 cores at 0.1/h, medium: 4 at
 * 0.2/h, large: 8 at 0.5/h; its template the large's), group "big" (16
 * cores at 0.6/h) and group "dear" (4 cores at 5/h, no room: max 1). */
static struct kv type_labels[3][2] = {
	{{"node.kubernetes.io/instance-type", "small"}, {"pool", "fleet"}},
	{{"node.kubernetes.io/instance-type", "medium"}, {"pool", "fleet"}},
	{{"node.kubernetes.io/instance-type", "large"}, {"pool", "fleet"}},
};
static struct kv big_labels[1] = {{"pool", "big"}};
static struct kv dear_labels[1] = {{"pool", "dear"}};

static void make_groups(struct node_group g[3], struct node_group types[3], double big_price)
{
	static const char *const names[] = {"small", "medium", "large"};
	static const double prices[] = {0.1, 0.2, 0.5};
	size_t i;

	memset(g, 0, 3 * sizeof(*g));
	for (i = 0; i < 3; i++) {
		struct node_group *t = &types[i];

		memset(t, 0, sizeof(*t));
		t->name = "fleet";
		t->max = 10;
		t->instance_type = names[i];
		t->price_per_hour = prices[i];
		t->tmpl.allocatable.cpu_m = 2000 << i;
		t->tmpl.allocatable.memory = (8LL << 30) << i;
		t->tmpl.allocatable.pods = 110;
		t->tmpl.labels.items = type_labels[i];
		t->tmpl.labels.n = 2;
	}
	g[0].name = "fleet";
	g[0].max = 10;
	g[0].tmpl = types[2].tmpl;
	g[0].selector.items = &type_labels[0][1];
	g[0].selector.n = 1;
	g[0].instance_type = "large";
	g[0].price_per_hour = 0.5;
	g[0].types = types;
	g[0].n_types = 3;

	g[1].name = "big";
	g[1].max = 10;
	g[1].price_per_hour = big_price;
	g[1].tmpl.allocatable.cpu_m = 16000;
	g[1].tmpl.allocatable.memory = 64LL << 30;
	g[1].tmpl.allocatable.pods = 110;
	g[1].tmpl.labels.items = big_labels;
	g[1].tmpl.labels.n = 1;
	g[1].selector = g[1].tmpl.labels;

	g[2].name = "dear";
	g[2].max = 1;
	g[2].price_per_hour = 5;
	g[2].tmpl.allocatable.cpu_m = 4000;
	g[2].tmpl.allocatable.memory = 16LL << 30;
	g[2].tmpl.allocatable.pods = 110;
	g[2].tmpl.labels.items = dear_labels;
	g[2].tmpl.labels.n = 1;
	g[2].selector = g[2].tmpl.labels;
}

#define POLICY(body) \
	"local P = {}\nfunction P.reconcile(cluster)\n" \
	"  local n = function(name) return cluster:node(name) end\n" body "\nend\nreturn P\n"

/* One reconcile of 'src' on the groups and the objects of 'json' (a List),
 * pods labelled critical=true protected; 0, or -1 with the policy's
 * error (a failed assert names what it saw) in 'err'. */
static int run_with(const char *src, const char *json, double big_price, int64_t instructions,
		    struct errbuf *err)
{
	const char *path = write_policy(src);
	struct sandbox_limits lim = limits;
	struct policy *p;
	struct snapshot *s = snapshot_new();
	struct node_group g[3], types[3];
	struct arena *a = arena_new();
	struct label_selector critical;
	struct drain_opts o;
	struct plan plan;
	int rc;

	if (instructions)
		lim.instructions = instructions;
	p = policy_load(path, SOURCE_DIR "/lua", &lim, NULL, err);
	unlink(path);
	if (!p)
		fail_msg("load failed: %s", err->msg);
	make_groups(g, types, big_price);
	if (snapshot_add_json(s, json, strlen(json), "state", err) < 0 ||
	    snapshot_set_groups(s, g, 3, err) < 0 || snapshot_finish(s, 1700000000, err) < 0)
		fail_msg("snapshot: %s", err->msg);
	assert_int_equal(label_selector_parse(a, "critical=true", &critical, err), 0);
	drain_opts_default(&o);
	o.protected_pods = &critical;
	rc = policy_reconcile(p, s, &o, &plan, NULL, err);
	if (rc == 0)
		plan_free(&plan);
	policy_free(p);
	snapshot_free(s);
	arena_free(a);
	return rc;
}

static void expect_ok(const char *src, const char *json)
{
	struct errbuf err;

	if (run_with(src, json, 0.6, 0, &err) != 0)
		fail_msg("%s", err.msg);
}

/* Two large nodes (0.5/h each), half full; a medium one full. */
static const char *const two_large = LIST(
	NODE("l-1", "fleet", "large", "8") "," NODE("l-2", "fleet", "large", "8") ","
	NODE("m-1", "fleet", "medium", "4") ","
	POD("a1", "l-1", "1500m") "," POD("a2", "l-1", "1500m") ","
	POD("b1", "l-2", "1") "," POD("b2", "l-2", "1") "," POD("b3", "l-2", "1") ","
	POD("full", "m-1", "4") ","
	POD_OF("DaemonSet", "agent-1", "l-1", "100m", "{}"));

/* One node: its two 1.5-core pods fit a medium node (0.2/h), the
 * cheapest type that takes both (two small ones cost as much, in more
 * nodes); the DaemonSet pod does not move; the large node costs 0.5/h.
 * The pods also fit on l-2. */
static void test_one_node(void **state)
{
	(void)state;
	expect_ok(POLICY(
		"  local r = cluster:replacement_for(n('l-1'))\n"
		"  assert(r.nodes == 1 and r.pods == 2, r.pods)\n"
		"  assert(r.price_per_hour == 0.5 and r.price_known)\n"
		"  assert(r.group == 'fleet' and r.instance_type == 'medium', tostring(r.instance_type))\n"
		"  assert(r.new_nodes == 1 and math.abs(r.new_price_per_hour - 0.2) < 1e-9)\n"
		"  assert(math.abs(r.savings - 0.3) < 1e-9, r.savings)\n"
		"  assert(#r.instance_types == 1 and r.instance_types[1] == 'medium')\n"
		"  assert(r.fits_elsewhere == true and r.why == nil, r.why)\n"
		"  assert(r.blocked == nil and r.no_replacement == nil)\n"
		"  -- a name works as the node; a list of one too\n"
		"  assert(cluster:replacement_for('l-1').instance_type == 'medium')\n"
		"  assert(cluster:replacement_for({n('l-1')}).instance_type == 'medium')\n"),
		two_large);
}

/* Two nodes together: 6 cores of pods. On one new node: a large (0.5/h)
 * is cheaper than big (0.6/h); with two allowed, two mediums (0.4/h)
 * win. Their pods no longer fit elsewhere (m-1 is full), and why says
 * which pod found no room. Only the groups listed are tried. */
static void test_several_nodes(void **state)
{
	(void)state;
	expect_ok(POLICY(
		"  local r = cluster:replacement_for({n('l-1'), n('l-2')}, {max_new = 1})\n"
		"  assert(r.nodes == 2 and r.pods == 5 and r.price_per_hour == 1.0)\n"
		"  assert(r.group == 'fleet' and r.instance_type == 'large' and r.new_nodes == 1)\n"
		"  assert(math.abs(r.savings - 0.5) < 1e-9)\n"
		"  assert(r.fits_elsewhere == false and r.why:find('no room for pod apps/'), r.why)\n"
		"  r = cluster:replacement_for({n('l-1'), n('l-2')})\n"
		"  assert(r.instance_type == 'medium' and r.new_nodes == 2, r.instance_type)\n"
		"  assert(math.abs(r.new_price_per_hour - 0.4) < 1e-9)\n"
		"  r = cluster:replacement_for({n('l-1'), n('l-2')}, {max_new = 1, groups = {'big'}})\n"
		"  assert(r.group == 'big' and r.instance_type == nil and r.instance_types == nil)\n"
		"  assert(math.abs(r.savings - 0.4) < 1e-9)\n"
		"  r = cluster:replacement_for({n('l-1'), n('l-2')}, {max_new = 1, groups = {'dear'}})\n"
		"  assert(r.group == nil and r.no_replacement:find('5 pod'), r.no_replacement)\n"
		"  -- without the elsewhere check, fits_elsewhere is not said\n"
		"  r = cluster:replacement_for({n('l-1'), n('l-2')}, {elsewhere = false})\n"
		"  assert(r.fits_elsewhere == nil and r.why == nil and r.group == 'fleet')\n"),
		two_large);
}

/* 'exclude': a node already chosen for removal receives nothing, and its
 * pods need room as well: l-1's pods fit on l-2, but not once l-2 goes. */
static void test_exclude(void **state)
{
	(void)state;
	expect_ok(POLICY(
		"  assert(cluster:replacement_for(n('l-1')).fits_elsewhere)\n"
		"  local r = cluster:replacement_for(n('l-1'), {exclude = {n('l-2')}})\n"
		"  assert(r.fits_elsewhere == false, 'fits')\n"),
		two_large);
}

/* A protected pod keeps its node: 'blocked' names it, and no replacement
 * is looked for. A node of only DaemonSet pods is empty: 0 new nodes,
 * all its price saved. */
static void test_blocked_and_empty(void **state)
{
	(void)state;
	expect_ok(POLICY(
		"  local r = cluster:replacement_for({n('l-1'), n('l-2')})\n"
		"  assert(r.blocked and r.blocked:find('apps/hub'), r.blocked)\n"
		"  assert(r.fits_elsewhere == false and r.group == nil and r.new_nodes == nil)\n"
		"  r = cluster:replacement_for(n('l-3'))\n"
		"  assert(r.pods == 0 and r.new_nodes == 0 and r.savings == 0.5 and r.fits_elsewhere)\n"),
		LIST(NODE("l-1", "fleet", "large", "8") "," NODE("l-2", "fleet", "large", "8") ","
		     NODE("l-3", "fleet", "large", "8") ","
		     POD("a1", "l-1", "1") "," POD_OF("ReplicaSet", "hub", "l-2", "1", "{\"critical\":\"true\"}") ","
		     POD_OF("DaemonSet", "agent-3", "l-3", "100m", "{}")));
}

/* The fit rules are the packing's: two replicas with hostname
 * anti-affinity take two new nodes (two smalls at 0.2/h beat a large at
 * 0.5); a node of unknown price (group big at 0) is never a replacement,
 * and a node in it makes the set's price unknown. */
static void test_relations_and_prices(void **state)
{
	struct errbuf err;
	const char *anti = "{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
			   "[{\"labelSelector\":{\"matchLabels\":{\"app\":\"db\"}},"
			   "\"topologyKey\":\"kubernetes.io/hostname\"}]}}";
	char json[4096];

	(void)state;
	snprintf(json, sizeof(json), LIST(
		NODE("l-1", "fleet", "large", "8") "," NODE("b-1", "big", "big", "16") ","
		"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"apps\",\"name\":\"db-1\",\"labels\":{\"app\":\"db\"},"
		"\"ownerReferences\":[{\"kind\":\"StatefulSet\",\"name\":\"db\",\"controller\":true}]},"
		"\"spec\":{\"nodeName\":\"l-1\",\"affinity\":%s,\"containers\":[{\"name\":\"c\",\"resources\":"
		"{\"requests\":{\"cpu\":\"500m\",\"memory\":\"1Gi\"}}}]},\"status\":{\"phase\":\"Running\"}},"
		"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"apps\",\"name\":\"db-2\",\"labels\":{\"app\":\"db\"},"
		"\"ownerReferences\":[{\"kind\":\"StatefulSet\",\"name\":\"db\",\"controller\":true}]},"
		"\"spec\":{\"nodeName\":\"b-1\",\"affinity\":%s,\"containers\":[{\"name\":\"c\",\"resources\":"
		"{\"requests\":{\"cpu\":\"500m\",\"memory\":\"1Gi\"}}}]},\"status\":{\"phase\":\"Running\"}}"),
		anti, anti);
	if (run_with(POLICY(
		"  local r = cluster:replacement_for({n('l-1'), n('b-1')})\n"
		"  assert(r.pods == 2 and r.price_known == false and r.price_per_hour == 0.5)\n"
		"  assert(r.group == 'fleet' and r.instance_type == 'small', tostring(r.instance_type))\n"
		"  assert(r.new_nodes == 2, r.new_nodes)\n"
		"  r = cluster:replacement_for({n('l-1'), n('b-1')}, {max_new = 1})\n"
		"  assert(r.group == nil and r.no_replacement, r.group)\n"),
		json, 0, 0, &err) != 0)
		fail_msg("%s", err.msg);
}

/* The work is charged: a budget that the loop alone never exhausts runs
 * out when the loop calls replacement_for, and says so. (Whether the last
 * instruction is counted inside the call or by the loop's own hook is not
 * fixed: it differs between builds.) */
static void test_charged(void **state)
{
	struct errbuf err;
	char big[1 << 16];
	size_t off = 0;
	int i;

	(void)state;
	off += (size_t)snprintf(big + off, sizeof(big) - off, "{\"kind\":\"List\",\"items\":["
				NODE("l-1", "fleet", "large", "8"));
	for (i = 0; i < 100; i++)
		off += (size_t)snprintf(big + off, sizeof(big) - off, "," POD("p%d", "l-1", "10m"), i);
	snprintf(big + off, sizeof(big) - off, "]}");
	if (run_with(POLICY(
		"  local x = 0\n  for i = 1, 1000 do x = x + (n('l-1') and 1 or 0) end\n"),
		big, 0.6, 1000000, &err) != 0)
		fail_msg("the loop alone exhausted the budget: %s", err.msg);
	assert_int_equal(run_with(POLICY(
		"  for i = 1, 1000 do cluster:replacement_for(n('l-1')) end\n"),
		big, 0.6, 1000000, &err), -1);
	if (!strstr(err.msg, "instruction budget"))
		fail_msg("expected the budget to run out: %s", err.msg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_node),
		cmocka_unit_test(test_several_nodes),
		cmocka_unit_test(test_exclude),
		cmocka_unit_test(test_blocked_and_empty),
		cmocka_unit_test(test_relations_and_prices),
		cmocka_unit_test(test_charged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
