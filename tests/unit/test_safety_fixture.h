/*
 * The plan-checking fixture that test_safety.c and test_instruments.c share:
 * a small cluster (workers, gpu, an unmanaged control-plane node, a critical
 * pod, a PDB that allows nothing), its groups and limits, and helpers that
 * add actions and run safety_check. Include after cmocka.h.
 */
#ifndef LUASCALE_TEST_SAFETY_FIXTURE_H
#define LUASCALE_TEST_SAFETY_FIXTURE_H

#include "arena.h"
#include "engine/safety.h"
#include "model.h"

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
	/* gpu launches one of two instance types */
	{
		static struct node_group gpu_types[2];

		gpu_types[0] = groups[1];
		gpu_types[0].instance_type = "g4dn.xlarge";
		gpu_types[1] = groups[1];
		gpu_types[1].instance_type = "g5.xlarge";
		groups[1].instance_type = "g5.xlarge";
		groups[1].types = gpu_types;
		groups[1].n_types = 2;
	}

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

#endif
