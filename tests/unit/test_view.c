/*
 * The cluster view a policy sees: fields and units of nodes, pods and
 * groups, a node's pods built on demand, the C-backed helpers (fits, pack,
 * drainable, node), and that a view does not outlive its reconcile.
 * The checks are Lua assertions inside a policy run through the real host.
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

#include "model.h"
#include "policy/host.h"
#include "sched.h"

static const char CLUSTER[] =
	"{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":["
	"{\"kind\":\"Node\",\"metadata\":{\"name\":\"w-1\",\"creationTimestamp\":\"2023-11-14T22:13:20Z\","
	" \"labels\":{\"luascale.io/node-group\":\"workers\",\"zone\":\"a\"}},"
	" \"spec\":{\"providerID\":\"aws:///a/i-1\"},"
	" \"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"16Gi\",\"pods\":\"110\"},"
	"  \"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}},"
	"{\"kind\":\"Node\",\"metadata\":{\"name\":\"g-1\",\"labels\":{\"luascale.io/node-group\":\"gpu\"}},"
	" \"spec\":{\"taints\":[{\"key\":\"nvidia.com/gpu\",\"value\":\"present\",\"effect\":\"NoSchedule\"}]},"
	" \"status\":{\"allocatable\":{\"cpu\":\"8\",\"memory\":\"32Gi\",\"pods\":\"110\",\"nvidia.com/gpu\":\"1\"},"
	"  \"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}},"
	"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"web\",\"name\":\"a\",\"labels\":{\"app\":\"web\"},"
	" \"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"rs\",\"controller\":true}]},"
	" \"spec\":{\"nodeName\":\"w-1\",\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1500m\",\"memory\":\"4Gi\"}}}]},"
	" \"status\":{\"phase\":\"Running\"}},"
	"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"web\",\"name\":\"done\"},"
	" \"spec\":{\"nodeName\":\"w-1\",\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]},"
	" \"status\":{\"phase\":\"Succeeded\"}},"
	"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"web\",\"name\":\"p\"},"
	" \"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"3\",\"memory\":\"1Gi\"}}}]},"
	" \"status\":{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\",\"message\":\"0/2 nodes\"}]}}"
	"]}";

static struct snapshot *make_snapshot(void)
{
	struct node_group g[3];
	struct kv sw = {"luascale.io/node-group", "workers"}, sg = {"luascale.io/node-group", "gpu"};
	struct kv sf = {"luascale.io/node-group", "free"};
	struct snapshot *s = snapshot_new();
	struct errbuf err;

	memset(g, 0, sizeof(g));
	g[0].name = "workers";
	g[0].max = 5;
	g[0].price_per_hour = 0.25;
	g[0].selector.items = &sw;
	g[0].selector.n = 1;
	g[0].target = 2; /* one node on its way */
	g[0].tmpl.allocatable.cpu_m = 4000;
	g[0].tmpl.allocatable.memory = 16LL << 30;
	g[0].tmpl.allocatable.pods = 110;
	g[1] = g[0];
	g[1].name = "gpu";
	g[1].selector.items = &sg;
	g[1].target = -1;
	g[1].price_per_hour = 0.526;
	g[1].price_from_cloud = true;
	g[2] = g[1];
	g[2].name = "free";
	g[2].selector.items = &sf;
	g[2].price_per_hour = 0;
	g[2].price_from_cloud = false;
	if (snapshot_add_json(s, CLUSTER, sizeof(CLUSTER) - 1, "cluster", &err) < 0 ||
	    snapshot_set_groups(s, g, 3, &err) < 0 || snapshot_finish(s, 1700003600, &err) < 0)
		fail_msg("fixture: %s", err.msg);
	return s;
}

static const char POLICY[] =
	"local P = {}\n"
	"function P.reconcile(cluster, params, store)\n"
	"  store.calls = (store.calls or 0) + 1\n"
	"  if store.calls == 2 then return cluster:drainable(store.old_node) end\n"
	"  assert(cluster.now == 1700003600, 'now')\n"
	"  assert(#cluster.nodes == 2, 'nodes')\n"
	"  local w = cluster.nodes[1]\n"
	"  assert(w.name == 'w-1' and w.group == 'workers' and w.labels.zone == 'a', 'node fields')\n"
	"  assert(w.allocatable.cpu == 4 and w.allocatable.memory == 16 * 2^30 and w.allocatable.pods == 110, 'alloc')\n"
	"  assert(w.requested.cpu == 1.5 and w.requested.memory == 4 * 2^30, 'requested (finished pod excluded)')\n"
	"  assert(w.free.cpu == 2.5, 'free')\n"
	"  assert(math.abs(w.utilization.cpu - 0.375) < 1e-9 and w.utilization.memory == 0.25, 'utilization')\n"
	"  assert(w.ready and not w.unschedulable and w.provider_id == 'aws:///a/i-1', 'flags')\n"
	"  assert(w.age == 3600 and w.pod_count == 1, 'age ' .. w.age .. ' pods ' .. w.pod_count)\n"
	"  local pods = w.pods\n"
	"  assert(#pods == 2 and w.pods == pods, 'pods built once per reconcile')\n"
	"  assert(pods[1].name == 'a' and pods[1].namespace == 'web' and pods[1].requests.cpu == 1.5, 'pod')\n"
	"  assert(pods[1].controller == 'ReplicaSet' and pods[1].labels.app == 'web' and pods[1].node == 'w-1', 'pod meta')\n"
	"  assert(pods[2].finished and pods[2].phase == 'Succeeded', 'finished pod')\n"
	"  local g = cluster.nodes[2]\n"
	"  assert(g.allocatable['nvidia.com/gpu'] == 1 and g.taints[1].effect == 'NoSchedule', 'gpu node')\n"
	"  assert(#cluster.pending == 1, 'pending')\n"
	"  local p = cluster.pending[1]\n"
	"  assert(p.unschedulable and p.scheduler_message == '0/2 nodes' and p.node == nil, 'pending pod')\n"
	"  local grp = cluster.groups.workers\n"
	"  assert(grp.current == 1 and grp.target == 2 and grp.upcoming == 1 and grp.max == 5, 'group')\n"
	"  assert(grp.template.allocatable.cpu == 4 and grp.price_per_hour == 0.25, 'template')\n"
	"  assert(cluster.group_list[1] == grp and cluster.group_list[2].name == 'gpu', 'group_list')\n"
	"  assert(grp.price_source == 'config', 'price from the config')\n"
	"  assert(cluster.groups.gpu.price_per_hour == 0.526 and cluster.groups.gpu.price_source == 'cloud', 'price from the cloud')\n"
	"  assert(cluster.groups.free.price_per_hour == 0 and cluster.groups.free.price_source == 'none', 'no price')\n"
	"  local ok, why = cluster:fits(p, w)\n"
	"  assert(not ok and why:find('insufficient cpu'), 'fits node: ' .. tostring(why))\n"
	"  ok, why = cluster:fits(p, g)\n"
	"  assert(not ok and why:find('nvidia.com/gpu'), 'fits tainted node: ' .. tostring(why))\n"
	"  assert(cluster:fits(p, 'workers') and cluster:fits(p, grp), 'fits template')\n"
	"  local r = cluster:pack(cluster.pending, 'workers')\n"
	"  assert(r.new_nodes == 0 and r.upcoming_used == 1 and r.placed == 1 and r.placement[1] == 1, 'pack uses the upcoming node')\n"
	"  r = cluster:pack({p, p}, grp)\n"
	"  assert(r.new_nodes == 1 and r.placed == 2, 'pack new nodes ' .. r.new_nodes)\n"
	"  r = cluster:pack({p, p}, grp, 0)\n"
	"  assert(r.new_nodes == 0 and #r.unplaced == 1, 'pack max_new')\n"
	"  ok, why = cluster:drainable(w)\n"
	"  assert(not ok and why:find('no room for pod web/a'), 'drainable: ' .. tostring(why))\n"
	"  assert(cluster:drainable('g-1'), 'empty node is drainable')\n"
	"  assert(cluster:node('w-1') == w and cluster:node('nope') == nil, 'node lookup')\n"
	"  assert(not pcall(cluster.fits, cluster, {}, w), 'a table that is not a pod')\n"
	"  assert(select(2, pcall(cluster.fits, cluster, w, w)):find('expected a pod'), 'a node is not a pod')\n"
	"  -- read-only, everywhere\n"
	"  assert(not pcall(function() w.name = 'x' end), 'node field write')\n"
	"  assert(not pcall(function() w.labels.zone = 'b' end), 'label write')\n"
	"  assert(not pcall(function() cluster.nodes[1] = false end), 'nodes write')\n"
	"  assert(not pcall(table.insert, cluster.pending, p), 'pending insert')\n"
	"  assert(not pcall(function() cluster.now = 0 end), 'cluster write')\n"
	"  assert(not pcall(function() grp.template.allocatable.cpu = 100 end), 'template write')\n"
	"  assert(not pcall(rawset, w, 'name', 'x'), 'rawset on a node')\n"
	"  assert(not pcall(setmetatable, w, {}), 'setmetatable on a node')\n"
	"  assert(getmetatable(w) == false and getmetatable(cluster.nodes) == false, 'metatables hidden')\n"
	"  -- but reads, pairs, ipairs, # and tostring work\n"
	"  local seen = {} for k, v in pairs(w) do seen[k] = v end\n"
	"  assert(seen.name == 'w-1' and seen.group == 'workers' and seen.labels == w.labels, 'pairs(node)')\n"
	"  local n = 0 for k, v in pairs(w.labels) do n = n + 1 end assert(n == 2, 'pairs(labels)')\n"
	"  n = 0 for i, node in ipairs(cluster.nodes) do n = n + 1 end assert(n == 2, 'ipairs(nodes)')\n"
	"  assert(tostring(w) == 'node w-1' and tostring(p) == 'pod web/p', 'tostring')\n"
	"  assert(cluster.nodes[1] == w and cluster.pending[1] == p, 'identity')\n"
	"  store.old_node = w\n"
	"  return nil\n"
	"end\n"
	"return P\n";

static void test_view(void **state)
{
	char path[] = "/tmp/luascale-view-XXXXXX.lua";
	struct snapshot *s = make_snapshot();
	struct drain_opts o;
	struct errbuf err;
	struct plan plan;
	struct policy *p;
	int fd = mkstemps(path, 4);
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs(POLICY, f);
	fclose(f);
	p = policy_load(path, NULL, NULL, NULL, &err);
	unlink(path);
	if (!p)
		fail_msg("%s", err.msg);
	drain_opts_default(&o);
	if (policy_reconcile(p, s, &o, &plan, NULL, &err) < 0)
		fail_msg("%s", err.msg);
	plan_free(&plan);
	/* a node table kept in the store is not valid in the next reconcile */
	assert_int_equal(policy_reconcile(p, s, &o, &plan, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "comes from an earlier reconcile"));
	policy_free(p);
	snapshot_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_view),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
