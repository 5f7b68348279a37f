/*
 * The bundled policies plan the same actions whether their notes are read
 * (decide, the testing kit) or not (the daemon, simulate), where they skip
 * the notes' work and stop looking at candidates once none can go: over
 * rounds of a cluster with many idle nodes, with and without pending pods,
 * at several per-round limits (default.lua's max_scale_down,
 * jupyterhub.lua's max_cordon_per_round), with nodes cordoned for
 * scale-down that still run pods or are empty.
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
#include "config.h"
#include "model.h"
#include "policy/host.h"

#define NODES 40
#define T0 1700000000

/*
 * NODES nodes of group "general" (min 5), 8 cpu each: the first ten busy
 * (7 cpu), the others holding 0..3 one-cpu pods, one of them cordoned by
 * an admin and three cordoned for scale-down (annotated; one runs a
 * DaemonSet pod before its others, one is empty); 'pending' unschedulable
 * pods of 2 cpu. Strings live in 'a'.
 */
static struct snapshot *cluster_at(struct arena *a, int64_t now, int pending, int gone)
{
	static struct kv group_label = {"group", "general"};
	static struct kv marked = {"luascale.io/cordoned-for-scale-down", "1699990000"};
	struct snapshot *s = snapshot_new();
	struct node_group g;
	struct errbuf err;
	int n, p;

	assert_non_null(s);
	for (n = gone; n < NODES; n++) {
		struct node nd;
		char name[16];
		int pods = n < 10 ? 1 : n % 4;

		memset(&nd, 0, sizeof(nd));
		snprintf(name, sizeof(name), "node-%02d", n);
		nd.name = arena_strdup(a, name);
		nd.provider_id = "";
		nd.labels = (struct kvlist){&group_label, 1};
		nd.allocatable = (struct resources){8000, 32LL << 30, 100LL << 30, 110, NULL, 0};
		nd.ready = true;
		nd.unschedulable = n == 17 || (n >= 30 && n <= 32);
		if (n >= 30 && n <= 32)
			nd.annotations = (struct kvlist){&marked, 1};
		nd.created = T0 - 3600;
		assert_int_equal(snapshot_add_node(s, &nd, &err), 0);
		for (p = 0; p < pods; p++) {
			struct pod pd;
			char pname[32];
			bool agent = n == 31 && p == 0;

			memset(&pd, 0, sizeof(pd));
			snprintf(pname, sizeof(pname), "work-%02d-%d", n, p);
			pd.ns = "default";
			pd.name = arena_strdup(a, pname);
			pd.controller_kind = agent ? "DaemonSet" : "ReplicaSet";
			pd.controller_name = agent ? "agent" : "work";
			if (agent)
				pd.flags = POD_DAEMONSET;
			pd.node_name = nd.name;
			pd.phase = POD_RUNNING;
			pd.requests = (struct resources){n < 10 ? 7000 : 1000, 1LL << 30, 0, 1, NULL, 0};
			pd.local_volume = "";
			pd.sched_message = "";
			assert_int_equal(snapshot_add_pod(s, &pd, &err), 0);
		}
	}
	for (p = 0; p < pending; p++) {
		struct pod pd;
		char pname[32];

		memset(&pd, 0, sizeof(pd));
		snprintf(pname, sizeof(pname), "pending-%d", p);
		pd.ns = "default";
		pd.name = arena_strdup(a, pname);
		pd.controller_kind = "ReplicaSet";
		pd.controller_name = "big";
		pd.node_name = "";
		pd.phase = POD_PENDING;
		pd.flags = POD_UNSCHEDULABLE;
		pd.requests = (struct resources){7500, 1LL << 30, 0, 1, NULL, 0};
		pd.local_volume = "";
		pd.sched_message = "0/40 nodes are available: insufficient cpu";
		pd.created = now - 30;
		assert_int_equal(snapshot_add_pod(s, &pd, &err), 0);
	}
	memset(&g, 0, sizeof(g));
	g.name = "general";
	g.min = 5;
	g.max = 100;
	g.price_per_hour = 0.4;
	g.selector = (struct kvlist){&group_label, 1};
	g.tmpl.allocatable = (struct resources){8000, 32LL << 30, 100LL << 30, 110, NULL, 0};
	g.tmpl.labels = (struct kvlist){&group_label, 1};
	g.target = -1;
	assert_int_equal(snapshot_set_groups(s, &g, 1, &err), 0);
	assert_int_equal(snapshot_finish(s, now, &err), 0);
	return s;
}

static struct policy *load_policy(const char *path, const char *key, int limit)
{
	struct param item, map;
	struct errbuf err;
	struct policy *p;
	char text[16];

	snprintf(text, sizeof(text), "%d", limit);
	memset(&item, 0, sizeof(item));
	item.key = key;
	item.type = PARAM_INT;
	item.str = text;
	item.i = limit;
	memset(&map, 0, sizeof(map));
	map.type = PARAM_MAP;
	map.items = &item;
	map.n_items = 1;
	p = policy_load(path, NULL, NULL, &map, &err);
	if (!p)
		fail_msg("%s", err.msg);
	return p;
}

/* "type node count" of every action, one a line. */
static void actions_text(const struct plan *pl, char *out, size_t len)
{
	size_t i, used = 0;

	out[0] = '\0';
	for (i = 0; i < pl->n_actions && used < len; i++) {
		const struct action *a = &pl->actions[i];
		int w = snprintf(out + used, len - used, "%d %s %s %lld | %s\n", (int)a->type,
				 a->group ? a->group : "", a->node ? a->node : "",
				 (long long)a->count, a->reason);

		if (w < 0)
			break;
		used += (size_t)w;
	}
}

/* Twelve rounds through both instances; 'changes' counts the actions of
 * type 'acting' (delete, cordon) the rounds made, which must be some when
 * 'limit' allows them. */
static void check_rounds(const char *path, const char *key, int limit, enum action_type acting)
{
	struct policy *loud = load_policy(path, key, limit), *quiet = load_policy(path, key, limit);
	struct drain_opts o;
	struct errbuf err;
	int round, changes = 0;

	drain_opts_default(&o);
	policy_set_notes(quiet, false);
	for (round = 0; round < 12; round++) {
		/* pending pods in rounds 3 and 4; a node goes every round after 6 */
		int pending = round == 3 || round == 4 ? 2 : 0;
		int gone = round > 6 ? round - 6 : 0;
		struct arena *a = arena_new();
		struct snapshot *s;
		struct plan pl, pq;
		char tl[8192], tq[8192];
		size_t i, deletes;

		assert_non_null(a);
		s = cluster_at(a, T0 + round * 6 * 60, pending, gone);
		if (policy_reconcile(loud, s, &o, &pl, NULL, &err) < 0)
			fail_msg("round %d, notes read: %s", round, err.msg);
		if (policy_reconcile(quiet, s, &o, &pq, NULL, &err) < 0)
			fail_msg("round %d, notes not read: %s", round, err.msg);
		actions_text(&pl, tl, sizeof(tl));
		actions_text(&pq, tq, sizeof(tq));
		if (strcmp(tl, tq) != 0)
			fail_msg("%s, %s %d, round %d: notes read planned\n%s\nnot read:\n%s",
				 path, key, limit, round, tl, tq);
		/* every node has its note when they are read (but a node the
		 * plan deletes: its actions say why), none otherwise */
		for (i = 0, deletes = 0; i < pl.n_actions; i++)
			deletes += pl.actions[i].type == ACTION_DELETE;
		assert_true(pl.n_notes <= s->n_nodes && pl.n_notes + deletes >= s->n_nodes);
		assert_int_equal(pq.n_notes, 0);
		for (i = 0; i < pl.n_actions; i++)
			changes += pl.actions[i].type == acting;
		plan_free(&pl);
		plan_free(&pq);
		snapshot_free(s);
		arena_free(a);
	}
	/* the rounds did reach scale-down */
	if (limit > 0)
		assert_true(changes > 0);
	else
		assert_int_equal(changes, 0);
	policy_free(loud);
	policy_free(quiet);
}

#define DEFAULT_LUA SOURCE_DIR "/policies/default.lua"
#define JUPYTERHUB_LUA SOURCE_DIR "/policies/jupyterhub.lua"

static void test_default_one_a_round(void **state)
{
	(void)state;
	check_rounds(DEFAULT_LUA, "max_scale_down", 1, ACTION_DELETE);
}

static void test_default_several_a_round(void **state)
{
	(void)state;
	check_rounds(DEFAULT_LUA, "max_scale_down", 3, ACTION_DELETE);
}

static void test_default_none_a_round(void **state)
{
	(void)state;
	check_rounds(DEFAULT_LUA, "max_scale_down", 0, ACTION_DELETE);
}

static void test_jupyterhub_one_a_round(void **state)
{
	(void)state;
	check_rounds(JUPYTERHUB_LUA, "max_cordon_per_round", 1, ACTION_CORDON);
}

static void test_jupyterhub_several_a_round(void **state)
{
	(void)state;
	check_rounds(JUPYTERHUB_LUA, "max_cordon_per_round", 4, ACTION_CORDON);
}

static void test_jupyterhub_none_a_round(void **state)
{
	(void)state;
	check_rounds(JUPYTERHUB_LUA, "max_cordon_per_round", 0, ACTION_CORDON);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_one_a_round),
		cmocka_unit_test(test_default_several_a_round),
		cmocka_unit_test(test_default_none_a_round),
		cmocka_unit_test(test_jupyterhub_one_a_round),
		cmocka_unit_test(test_jupyterhub_several_a_round),
		cmocka_unit_test(test_jupyterhub_none_a_round),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
