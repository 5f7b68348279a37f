/*
 * The view's per-node aggregates (node.live_requests, node.protected,
 * cluster:pods_matching), ls.utilization, cluster:sort_by_utilization and
 * cluster:sum equal what a policy computes pod by pod or node by node in
 * Lua, on randomized clusters; they are charged to the budget; a
 * plan's notes are built only when they are read.
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

static unsigned rng;

static unsigned next_rand(void)
{
	rng = rng * 1103515245u + 12345u;
	return (rng >> 8) & 0xffffff;
}

static const char *const KEYS[4] = {"k1", "k2", "k3", "hub.jupyter.org/autoscaler-critical"};
static const char *const VALUES[2] = {"a", "b"};
static const char *const NAMES[40] = {
	"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9",
	"n10", "n11", "n12", "n13", "n14", "n15", "n16", "n17", "n18", "n19",
	"n20", "n21", "n22", "n23", "n24", "n25", "n26", "n27", "n28", "n29",
	"n30", "n31", "n32", "n33", "n34", "n35", "n36", "n37", "n38", "n39",
};

/* Borrowed strings and arrays of one snapshot. */
struct world {
	struct arena *a;
	struct snapshot *s;
	struct label_selector protected_pods;
};

/* 'nodes' nodes with 0..24 pods each: random phases, kinds, labels,
 * requests and an extended resource now and then. */
static void build(struct world *w, unsigned seed, int nodes)
{
	struct errbuf err;
	int n, p, k;

	rng = seed;
	w->a = arena_new();
	w->s = snapshot_new();
	assert_non_null(w->a);
	assert_non_null(w->s);
	assert_int_equal(label_selector_parse(w->a, "k1=a", &w->protected_pods, &err), 0);
	for (n = 0; n < nodes; n++) {
		struct node nd;

		memset(&nd, 0, sizeof(nd));
		nd.name = NAMES[n];
		nd.provider_id = "";
		nd.allocatable = (struct resources){8000 + (int64_t)(next_rand() % 8000),
						    (int64_t)(16 + next_rand() % 48) << 30, 100LL << 30, 110,
						    NULL, 0};
		nd.ready = true;
		assert_int_equal(snapshot_add_node(w->s, &nd, &err), 0);
	}
	for (n = 0; n < nodes; n++) {
		int pods = (int)(next_rand() % 25);

		for (p = 0; p < pods; p++) {
			struct pod pd;
			struct kv *labels = arena_calloc(w->a, 4, sizeof(*labels));
			char name[32];
			unsigned kind = next_rand() % 10;

			memset(&pd, 0, sizeof(pd));
			snprintf(name, sizeof(name), "p-%d-%d", n, p);
			pd.ns = next_rand() % 3 ? "default" : "kube-system";
			pd.name = arena_strdup(w->a, name);
			for (k = 0; k < 4; k++)
				if (next_rand() % 2)
					labels[pd.labels.n++] = (struct kv){KEYS[k], VALUES[next_rand() % 2]};
			pd.labels.items = labels;
			pd.controller_kind = "";
			pd.controller_name = "";
			pd.node_name = NAMES[n];
			pd.phase = kind == 0 ? POD_SUCCEEDED : kind == 1 ? POD_FAILED : POD_RUNNING;
			pd.flags = kind == 2 ? POD_DAEMONSET : kind == 3 ? POD_MIRROR : kind == 4 ? POD_STATIC : 0;
			pd.requests.cpu_m = (int64_t)(next_rand() % 2000);
			pd.requests.memory = (int64_t)(next_rand() % 4096) << 20;
			pd.requests.ephemeral = (int64_t)(next_rand() % 3) << 30;
			pd.requests.pods = 1;
			if (next_rand() % 4 == 0) {
				struct res_ext *e = arena_calloc(w->a, 1, sizeof(*e));

				e->name = "nvidia.com/gpu";
				e->value = 1 + (int64_t)(next_rand() % 2);
				pd.requests.ext = e;
				pd.requests.n_ext = 1;
			}
			pd.local_volume = "";
			pd.sched_message = "";
			assert_int_equal(snapshot_add_pod(w->s, &pd, &err), 0);
		}
	}
	assert_int_equal(snapshot_finish(w->s, 1700000000, &err), 0);
}

/* Loads a policy from its source text (the file is removed at once). */
static struct policy *load_src(const char *src)
{
	const char *path = write_policy(src);
	struct errbuf err;
	struct policy *p = policy_load(path, NULL, NULL, NULL, &err);

	unlink(path);
	if (!p)
		fail_msg("%s", err.msg);
	return p;
}

static void world_free(struct world *w)
{
	snapshot_free(w->s);
	arena_free(w->a);
}

/* Each aggregate against the pod-by-pod computation; an assertion error
 * names the node and the figure. */
static const char COMPARE[] =
	"local ls = require 'luascale'\n"
	"local P = {}\n"
	"local function live(pod) return not pod.finished and not pod.daemonset and not pod.mirror and not pod.static end\n"
	"local function matches(pod, sel)\n"
	"  for k, v in pairs(sel) do\n"
	"    local have = pod.labels[k]\n"
	"    if v == true then if have == nil then return false end\n"
	"    elseif v == false then if have ~= nil then return false end\n"
	"    elseif have ~= v then return false end\n"
	"  end\n"
	"  return true\n"
	"end\n"
	"local selectors = { {}, { k1 = 'a' }, { k2 = true }, { k3 = false, k1 = 'b' },\n"
	"  { ['hub.jupyter.org/autoscaler-critical'] = true }, { k1 = 'a', k2 = 'b', k3 = true } }\n"
	"function P.reconcile(cluster)\n"
	"  for _, node in ipairs(cluster.nodes) do\n"
	"    local want = { cpu = 0, memory = 0, ['ephemeral-storage'] = 0, pods = 0 }\n"
	"    local prot = false\n"
	"    for _, pod in ipairs(node.pods) do\n"
	"      if live(pod) then\n"
	"        for k, v in pairs(pod.requests) do if k ~= 'pods' then want[k] = (want[k] or 0) + v end end\n"
	"        want.pods = want.pods + 1\n"
	"      end\n"
	"      if not pod.finished and pod.labels.k1 == 'a' then prot = true end\n"
	"    end\n"
	"    local got = node.live_requests\n"
	"    for k, v in pairs(want) do\n"
	"      local g = got[k] or 0\n"
	"      assert(math.abs(g - v) <= 1e-9 * math.max(1, math.abs(v)),\n"
	"        string.format('%s live_requests.%s: %s, pod by pod %s', node.name, k, tostring(g), tostring(v)))\n"
	"    end\n"
	"    for k in pairs(got) do assert(want[k] ~= nil, node.name .. ' live_requests has ' .. k) end\n"
	"    assert(node.protected == prot, node.name .. ' protected')\n"
	"    for i, sel in ipairs(selectors) do\n"
	"      local n, first = 0, nil\n"
	"      for _, pod in ipairs(node.pods) do\n"
	"        if not pod.finished and matches(pod, sel) then n = n + 1; first = first or pod end\n"
	"      end\n"
	"      local cn, cfirst = cluster:pods_matching(node, sel)\n"
	"      assert(cn == n, string.format('%s selector %d: %d pods, pod by pod %d', node.name, i, cn, n))\n"
	"      assert(cfirst == first, string.format('%s selector %d: first pod differs', node.name, i))\n"
	"    end\n"
	"    local u = node.utilization\n"
	"    assert(ls.utilization(node) == math.max(u.cpu, u.memory), node.name .. ' utilization')\n"
	"  end\n"
	"  assert(ls.utilization({ utilization = { cpu = 0.25, memory = 0.5 } }) == 0.5, 'utilization of a table')\n"
	"  local list, want = {}, {}\n"
	"  for i, n in ipairs(cluster.nodes) do list[i] = n; want[i] = n end\n"
	"  for _, desc in ipairs({ false, true }) do\n"
	"    table.sort(want, function(a, b)\n"
	"      local ua, ub = ls.utilization(a), ls.utilization(b)\n"
	"      if ua ~= ub then if desc then return ua > ub end return ua < ub end\n"
	"      return a.name < b.name\n"
	"    end)\n"
	"    assert(cluster:sort_by_utilization(list, desc and 'desc' or nil) == list, 'sorted in place')\n"
	"    for i = 1, #want do assert(list[i] == want[i], string.format('sort %s: %d', tostring(desc), i)) end\n"
	"  end\n"
	"  for _, field in ipairs({ 'requested', 'allocatable' }) do\n"
	"    local cpu, mem, eph, pods = 0, 0, 0, 0\n"
	"    for _, n in ipairs(list) do\n"
	"      local r = n[field]\n"
	"      cpu, mem, eph, pods = cpu + r.cpu, mem + r.memory, eph + r['ephemeral-storage'], pods + r.pods\n"
	"    end\n"
	"    local got = cluster:sum(list, field)\n"
	"    assert(got.cpu == cpu and got.memory == mem and got['ephemeral-storage'] == eph and got.pods == pods,\n"
	"      string.format('sum of %s: %s vs %s', field, tostring(got.cpu), tostring(cpu)))\n"
	"  end\n"
	"  return ls.plan()\n"
	"end\n"
	"return P\n";

static void test_aggregates_equal_pod_by_pod(void **state)
{
	unsigned seed;

	(void)state;
	for (seed = 1; seed <= 12; seed++) {
		struct world w;
		struct drain_opts o;
		struct errbuf err;
		struct plan plan;
		struct policy *p;

		build(&w, seed, 5 + (int)(seed * 3 % 35));
		p = load_src(COMPARE);
		drain_opts_default(&o);
		o.protected_pods = &w.protected_pods;
		if (policy_reconcile(p, w.s, &o, &plan, NULL, &err) < 0)
			fail_msg("seed %u: %s", seed, err.msg);
		plan_free(&plan);
		policy_free(p);
		world_free(&w);
	}
}

/* No protected selector configured: no node is protected. */
static void test_protected_needs_a_selector(void **state)
{
	static const char src[] =
		"local P = {}\n"
		"function P.reconcile(cluster)\n"
		"  for _, n in ipairs(cluster.nodes) do assert(n.protected == false, n.name) end\n"
		"  return require('luascale').plan()\n"
		"end\n"
		"return P\n";
	struct world w;
	struct drain_opts o;
	struct errbuf err;
	struct plan plan;
	struct policy *p;

	(void)state;
	build(&w, 7, 20);
	p = load_src(src);
	drain_opts_default(&o);
	if (policy_reconcile(p, w.s, &o, &plan, NULL, &err) < 0)
		fail_msg("%s", err.msg);
	plan_free(&plan);
	policy_free(p);
	world_free(&w);
}

/* pods_matching is charged by its work: a node's pods, each pod's labels
 * times the selector's keys. 2,000 calls on the busiest node cost at
 * least 2,000 times its pods. A bad selector is an error naming it. */
static void test_pods_matching_charged_and_checked(void **state)
{
	static const char src[] =
		"local P = {}\n"
		"function P.reconcile(cluster, params, store)\n"
		"  local busiest\n"
		"  for _, n in ipairs(cluster.nodes) do\n"
		"    if not busiest or #n.pods > #busiest.pods then busiest = n end\n"
		"  end\n"
		"  store.pods = #busiest.pods\n"
		"  if store.bad then cluster:pods_matching(busiest, { k1 = 3 }) end\n"
		"  local sel = { k1 = 'a', k2 = true }\n"
		"  for i = 1, 2000 do cluster:pods_matching(busiest, sel) end\n"
		"  return require('luascale').plan()\n"
		"end\n"
		"return P\n";
	static const char bad[] =
		"local P = {}\n"
		"function P.reconcile(cluster)\n"
		"  cluster:pods_matching(cluster.nodes[1], { k1 = 3 })\n"
		"end\n"
		"return P\n";
	struct world w;
	struct drain_opts o;
	struct errbuf err;
	struct plan plan;
	struct policy_stats st;
	struct policy *p;

	(void)state;
	build(&w, 3, 30);
	drain_opts_default(&o);
	p = load_src(src);
	if (policy_reconcile(p, w.s, &o, &plan, &st, &err) < 0)
		fail_msg("%s", err.msg);
	plan_free(&plan);
	{
		size_t i, most = 0;

		for (i = 0; i < w.s->n_nodes; i++)
			if (w.s->nodes[i].n_pods > most)
				most = w.s->nodes[i].n_pods;
		assert_true(most >= 10);
		assert_true(st.instructions >= (int64_t)(2000 * most));
	}
	policy_free(p);

	p = load_src(bad);
	assert_int_equal(policy_reconcile(p, w.s, &o, &plan, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "selector[\"k1\"] must be a label value"));
	policy_free(p);
	world_free(&w);
}

/* plan:explain with format arguments formats them; a reconcile whose
 * notes nobody reads gets a plan that records none, and says so. */
static void test_notes_only_when_read(void **state)
{
	static const char src[] =
		"local ls = require 'luascale'\n"
		"local P = {}\n"
		"function P.reconcile(cluster, params, store)\n"
		"  local plan = ls.plan()\n"
		"  store.explaining = plan:explaining()\n"
		"  for _, n in ipairs(cluster.nodes) do\n"
		"    plan:explain(n, false, 'utilization %.2f of %s (100%%)', ls.utilization(n), n.name)\n"
		"  end\n"
		"  plan:explain(cluster.nodes[1], true, 'a literal 100% stays')\n"
		"  return plan\n"
		"end\n"
		"return P\n";
	struct world w;
	struct drain_opts o;
	struct errbuf err;
	struct plan plan;
	struct policy *p;
	const struct node_note *note;
	char want[64];

	(void)state;
	build(&w, 5, 10);
	drain_opts_default(&o);
	p = load_src(src);
	if (policy_reconcile(p, w.s, &o, &plan, NULL, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(plan.n_notes, 10);
	note = plan_find_note(&plan, "n1");
	assert_non_null(note);
	{
		const struct node *n = &w.s->nodes[1];
		double cpu = (double)n->requested.cpu_m / (double)n->allocatable.cpu_m;
		double mem = (double)n->requested.memory / (double)n->allocatable.memory;

		snprintf(want, sizeof(want), "utilization %.2f of n1 (100%%)", mem > cpu ? mem : cpu);
	}
	assert_string_equal(note->why, want);
	note = plan_find_note(&plan, "n0");
	assert_non_null(note);
	assert_string_equal(note->why, "a literal 100% stays");
	assert_int_equal(note->candidate, 1);
	plan_free(&plan);

	policy_set_notes(p, false);
	if (policy_reconcile(p, w.s, &o, &plan, NULL, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(plan.n_notes, 0);
	plan_free(&plan);
	policy_free(p);
	world_free(&w);
}

/* Labels read in place: a value, an absent key, pairs over every entry,
 * read-only, and not valid in a later reconcile. */
static void test_labels_in_place(void **state)
{
	static const char src[] =
		"local P = {}\n"
		"function P.reconcile(cluster, params, store)\n"
		"  if store.kept then local _ = store.kept.k1 end\n"
		"  for _, n in ipairs(cluster.nodes) do\n"
		"    for _, pod in ipairs(n.pods) do\n"
		"      local l, seen = pod.labels, 0\n"
		"      assert(l == pod.labels, 'the same proxy each read')\n"
		"      for k, v in pairs(l) do seen = seen + 1; assert(l[k] == v, k) end\n"
		"      assert(l.nosuchkey == nil and l[1] == nil and #l == 0, 'absent keys')\n"
		"      assert(not pcall(function() l.k1 = 'x' end), 'read-only')\n"
		"      store.count = (store.count or 0) + seen\n"
		"      store.kept = l\n"
		"    end\n"
		"  end\n"
		"  return require('luascale').plan()\n"
		"end\n"
		"return P\n";
	struct world w;
	struct drain_opts o;
	struct errbuf err;
	struct plan plan;
	struct policy *p;

	(void)state;
	build(&w, 9, 12);
	drain_opts_default(&o);
	p = load_src(src);
	if (policy_reconcile(p, w.s, &o, &plan, NULL, &err) < 0)
		fail_msg("%s", err.msg);
	plan_free(&plan);
	assert_int_equal(policy_reconcile(p, w.s, &o, &plan, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "come from an earlier reconcile"));
	policy_free(p);
	world_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_aggregates_equal_pod_by_pod),
		cmocka_unit_test(test_protected_needs_a_selector),
		cmocka_unit_test(test_pods_matching_charged_and_checked),
		cmocka_unit_test(test_notes_only_when_read),
		cmocka_unit_test(test_labels_in_place),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
