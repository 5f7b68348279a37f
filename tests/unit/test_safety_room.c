/*
 * safety.evicted_pods_must_fit: whatever the policy planned, a drain,
 * delete or NoExecute taint is refused when a pod it evicts would find no
 * room on the nodes that stay, under every scheduling rule (resources,
 * required anti-affinity, host ports), counting the pods of the plan's
 * earlier removals; with the setting off such removals pass.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/instruments.h"
#include "engine/safety.h"
#include "model.h"

#define NODE(name) \
	"{\"kind\":\"Node\",\"metadata\":{\"name\":\"" name "\",\"labels\":{\"pool\":\"workers\"," \
	"\"kubernetes.io/hostname\":\"" name "\"}},\"status\":{\"allocatable\":{\"cpu\":\"4\"," \
	"\"memory\":\"16Gi\",\"pods\":\"110\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}"

/* a ReplicaSet's pod of 'cpu' on 'node', with 'extra' spec members and
 * 'ports' container members (each "" or ending in a comma) */
#define POD(name, node, labels, cpu, extra, ports) \
	"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"prod\",\"name\":\"" name "\",\"labels\":" labels "," \
	"\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"rs\",\"controller\":true}]}," \
	"\"spec\":{\"nodeName\":\"" node "\"" extra ",\"containers\":[{\"name\":\"c\"," ports \
	"\"resources\":{\"requests\":{\"cpu\":\"" cpu "\",\"memory\":\"1Gi\"}}}]}," \
	"\"status\":{\"phase\":\"Running\"}}"

#define ANTI ",\"affinity\":{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":" \
	"[{\"labelSelector\":{\"matchLabels\":{\"app\":\"db\"}},\"topologyKey\":\"kubernetes.io/hostname\"}]}}"
#define HOSTPORT "\"ports\":[{\"containerPort\":80,\"hostPort\":80}],"

/* two replicas with required hostname anti-affinity, one per node */
static const char ANTI_CLUSTER[] =
	"{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[" NODE("w-1") "," NODE("w-2") ","
	POD("db-0", "w-1", "{\"app\":\"db\"}", "1", ANTI, "") ","
	POD("db-1", "w-2", "{\"app\":\"db\"}", "1", ANTI, "")
	"]}";

/* two 3-CPU pods on w-1 and w-2, and an empty w-3: room for one of them */
static const char ROOM_CLUSTER[] =
	"{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[" NODE("w-1") "," NODE("w-2") "," NODE("w-3") ","
	POD("big-1", "w-1", "{\"app\":\"big\"}", "3", "", "") ","
	POD("big-2", "w-2", "{\"app\":\"big\"}", "3", "", "")
	"]}";

/* two pods holding host port 80, one per node */
static const char PORT_CLUSTER[] =
	"{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[" NODE("w-1") "," NODE("w-2") ","
	POD("ing-1", "w-1", "{\"app\":\"ing\"}", "100m", "", HOSTPORT) ","
	POD("ing-2", "w-2", "{\"app\":\"ing\"}", "100m", "", HOSTPORT)
	"]}";

struct fx {
	struct snapshot *s;
	struct safety_limits lim;
	struct plan plan;
	struct verdict v;
};

static void load(struct fx *f, const char *json)
{
	struct node_group g;
	struct kv sel = {"pool", "workers"};
	struct errbuf err;

	memset(f, 0, sizeof(*f));
	memset(&g, 0, sizeof(g));
	g.name = "workers";
	g.min = 0;
	g.max = 10;
	g.selector.items = &sel;
	g.selector.n = 1;
	g.target = -1;
	g.tmpl.allocatable.cpu_m = 4000;
	g.tmpl.allocatable.memory = 16LL << 30;
	g.tmpl.allocatable.pods = 110;
	f->s = snapshot_new();
	if (snapshot_add_json(f->s, json, strlen(json), "cluster", &err) < 0 ||
	    snapshot_set_groups(f->s, &g, 1, &err) < 0 || snapshot_finish(f->s, 1700000000, &err) < 0)
		fail_msg("fixture: %s", err.msg);
	f->lim.max_scale_down_per_round = 5;
	f->lim.evicted_pods_must_fit = true;
	plan_init(&f->plan);
	verdict_init(&f->v);
}

static void unload(struct fx *f)
{
	plan_free(&f->plan);
	verdict_free(&f->v);
	snapshot_free(f->s);
}

static void add(struct fx *f, enum action_type t, const char *node)
{
	struct action a;

	memset(&a, 0, sizeof(a));
	a.type = t;
	a.node = (char *)node;
	if (t == ACTION_TAINT) {
		a.key = "drain";
		a.value = "now";
		a.effect = TAINT_NO_EXECUTE;
	}
	a.reason = "test";
	a.where = "";
	assert_int_equal(plan_add(&f->plan, &a), 0);
}

static void check(struct fx *f)
{
	struct errbuf err;

	verdict_free(&f->v);
	assert_int_equal(safety_check(f->s, &f->lim, &f->plan, &f->v, &err), 0);
}

static void expect_rejected(struct fx *f, size_t i, const char *node, const char *needle)
{
	assert_true(i < f->v.n_rejected);
	assert_string_equal(f->v.rejected[i].action.node, node);
	if (!strstr(f->v.rejected[i].why, needle))
		fail_msg("rejection \"%s\" does not contain \"%s\"", f->v.rejected[i].why, needle);
}

static void test_anti_affinity_keeps_the_node(void **state)
{
	struct fx f;

	(void)state;
	load(&f, ANTI_CLUSTER);
	add(&f, ACTION_DRAIN, "w-1");
	add(&f, ACTION_DELETE, "w-1");
	add(&f, ACTION_TAINT, "w-1");
	check(&f);
	assert_int_equal(f.v.accepted.n_actions, 0);
	assert_int_equal(f.v.n_rejected, 3);
	expect_rejected(&f, 0, "w-1", "prod/db-0");
	expect_rejected(&f, 0, "w-1", "(safety.evicted_pods_must_fit)");
	expect_rejected(&f, 2, "w-1", "a NoExecute taint would evict pods: ");
	assert_string_equal(instruments_invariant(f.v.rejected[0].why), "no_room");

	/* off: the policy may evict into Pending */
	f.lim.evicted_pods_must_fit = false;
	check(&f);
	assert_int_equal(f.v.n_rejected, 0);
	assert_int_equal(f.v.accepted.n_actions, 3);
	unload(&f);
}

static void test_earlier_removals_take_the_room(void **state)
{
	struct fx f;

	(void)state;
	load(&f, ROOM_CLUSTER);
	add(&f, ACTION_DELETE, "w-1"); /* big-1 goes to w-3 */
	add(&f, ACTION_DELETE, "w-2"); /* big-2 would need w-3 too */
	check(&f);
	assert_int_equal(f.v.accepted.n_actions, 1);
	assert_string_equal(f.v.accepted.actions[0].node, "w-1");
	assert_int_equal(f.v.n_rejected, 1);
	expect_rejected(&f, 0, "w-2", "with the pods of this plan's earlier removals");

	/* each alone is fine */
	plan_free(&f.plan);
	add(&f, ACTION_DELETE, "w-2");
	check(&f);
	assert_int_equal(f.v.accepted.n_actions, 1);
	assert_int_equal(f.v.n_rejected, 0);

	/* a refused removal takes no room: the next one may still go */
	plan_free(&f.plan);
	add(&f, ACTION_DELETE, "w-3"); /* empty: fine, and w-3 is gone for the others */
	add(&f, ACTION_DELETE, "w-1"); /* big-1 has nowhere to go now */
	add(&f, ACTION_DELETE, "w-2");
	check(&f);
	assert_int_equal(f.v.accepted.n_actions, 1);
	assert_string_equal(f.v.accepted.actions[0].node, "w-3");
	assert_int_equal(f.v.n_rejected, 2);
	unload(&f);
}

static void test_host_port_keeps_the_node(void **state)
{
	struct fx f;

	(void)state;
	load(&f, PORT_CLUSTER);
	add(&f, ACTION_DELETE, "w-2");
	check(&f);
	assert_int_equal(f.v.accepted.n_actions, 0);
	expect_rejected(&f, 0, "w-2", "prod/ing-2");
	unload(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_anti_affinity_keeps_the_node),
		cmocka_unit_test(test_earlier_removals_take_the_room),
		cmocka_unit_test(test_host_port_keeps_the_node),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
