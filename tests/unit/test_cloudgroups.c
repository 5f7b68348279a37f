/*
 * Tests for the round's node groups: the config's completed and narrowed
 * by the cloud (limits, template, labels, taints, price), groups only the
 * cloud knows, a size never made up when the cloud did not say, and nodes
 * placed in a group by their providerID.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "engine/cloudgroups.h"
#include "model.h"

static struct kv sel_kv = { "luascale.io/node-group", "workers" };
static struct kv cfg_label = { "team", "ml" };

static struct node_group cfg_group(const char *name)
{
	struct node_group g;

	memset(&g, 0, sizeof(g));
	g.name = name;
	g.max = -1;
	g.target = -1;
	g.selector.items = &sel_kv;
	g.selector.n = 1;
	return g;
}

/* A cloud group with two instances and a described template. */
static void cloud_group(struct provider_group *cg, const char *name)
{
	memset(cg, 0, sizeof(*cg));
	snprintf(cg->name, sizeof(cg->name), "%s", name);
	cg->min = 1;
	cg->max = 10;
	cg->cloud_sized = true;
	cg->members_by_id = true;
	cg->target = 4;
	cg->tmpl.cpu_m = 1930;
	cg->tmpl.memory = 7ll << 30;
	cg->tmpl.pods = 29;
	cg->tmpl.gpus = 1;
	cg->tmpl.price_per_hour = 0.5;
	assert_int_equal(provider_template_label(&cg->tmpl, "node.kubernetes.io/instance-type", "g4dn.xlarge"), 0);
	assert_int_equal(provider_template_label(&cg->tmpl, "team", "cloud"), 0);
	assert_int_equal(provider_template_taint(&cg->tmpl, "gpu", "true", "NoSchedule"), 0);
	assert_int_equal(provider_template_taint(&cg->tmpl, "bad", "x", "Sometimes"), -1);
	assert_int_equal(provider_template_resource(&cg->tmpl, "vpc.amazonaws.com/efa", 1), 0);
	cg->instances = calloc(3, sizeof(*cg->instances));
	assert_non_null(cg->instances);
	snprintf(cg->instances[0].provider_id, sizeof(cg->instances[0].provider_id),
		 "aws:///us-east-1a/i-0aaa");
	snprintf(cg->instances[1].provider_id, sizeof(cg->instances[1].provider_id),
		 "aws:///us-east-1b/i-0bbb");
	cg->instances[1].state = INSTANCE_RUNNING;
	snprintf(cg->instances[2].provider_id, sizeof(cg->instances[2].provider_id),
		 "aws:///us-east-1b/i-0ccc");
	cg->instances[2].state = INSTANCE_GONE;
	cg->n_instances = 3;
}

static const struct node_group *find(const struct node_group *gs, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(gs[i].name, name))
			return &gs[i];
	return NULL;
}

static void test_cloud_completes_config(void **state)
{
	struct node_group cfg[2] = { cfg_group("workers"), cfg_group("narrow") };
	struct config_group_extra extra[2];
	struct provider_group *cloud = calloc(3, sizeof(*cloud));
	struct arena *a = arena_new();
	struct node_group *gs;
	const struct node_group *g;
	struct errbuf err;
	size_t n;

	(void)state;
	memset(extra, 0, sizeof(extra));
	cfg[1].min = 2;
	cfg[1].max = 6;
	cfg[1].price_per_hour = 0.9;
	cfg[1].tmpl.allocatable.cpu_m = 4000;
	cfg[1].tmpl.labels.items = &cfg_label;
	cfg[1].tmpl.labels.n = 1;
	extra[1].min_set = extra[1].max_set = extra[1].template_set = true;
	cloud_group(&cloud[0], "workers");
	cloud_group(&cloud[1], "narrow");
	cloud_group(&cloud[2], "found-by-tags");
	cloud[2].min = 0;
	cloud[2].max = 3;
	assert_int_equal(cloudgroups_build(a, cfg, extra, 2, cloud, 3, 1000, NULL, &gs, &n, &err), 0);
	assert_int_equal(n, 3);

	/* no limits, no template in the config: the cloud's */
	g = find(gs, n, "workers");
	assert_non_null(g);
	assert_int_equal(g->min, 1);
	assert_int_equal(g->max, 10);
	assert_int_equal(g->target, 4);
	assert_int_equal(g->tmpl.allocatable.cpu_m, 1930);
	assert_true(g->tmpl.allocatable.memory == 7ll << 30);
	assert_int_equal(g->tmpl.allocatable.pods, 29);
	assert_int_equal(resources_ext(&g->tmpl.allocatable, "nvidia.com/gpu"), 1);
	assert_int_equal(resources_ext(&g->tmpl.allocatable, "vpc.amazonaws.com/efa"), 1);
	assert_string_equal(kvlist_get(&g->tmpl.labels, "team"), "cloud");
	assert_int_equal(g->tmpl.n_taints, 1);
	assert_int_equal(g->tmpl.taints[0].effect, TAINT_NO_SCHEDULE);
	assert_true(g->price_per_hour == 0.5);
	assert_true(g->price_from_cloud);
	assert_int_equal(g->n_provider_ids, 2); /* the gone one is not a member */

	/* the config narrows the limits, and its template and labels win */
	g = find(gs, n, "narrow");
	assert_int_equal(g->min, 2);
	assert_int_equal(g->max, 6);
	assert_int_equal(g->tmpl.allocatable.cpu_m, 4000);
	assert_string_equal(kvlist_get(&g->tmpl.labels, "team"), "ml");
	assert_string_equal(kvlist_get(&g->tmpl.labels, "node.kubernetes.io/instance-type"), "g4dn.xlarge");
	assert_true(g->price_per_hour == 0.9); /* the config's price overrides the cloud's */
	assert_false(g->price_from_cloud);

	/* a group only the cloud knows */
	g = find(gs, n, "found-by-tags");
	assert_non_null(g);
	assert_true(g->price_per_hour == 0.5 && g->price_from_cloud);
	assert_int_equal(g->max, 3);
	assert_int_equal(g->selector.n, 0);
	assert_int_equal(g->n_provider_ids, 2);

	arena_free(a);
	provider_groups_free(cloud, 3);
}

/* The config's max may never widen the cloud's, nor its min lower it. */
static void test_config_only_narrows(void **state)
{
	struct node_group cfg = cfg_group("workers");
	struct config_group_extra extra;
	struct provider_group *cloud = calloc(1, sizeof(*cloud));
	struct arena *a = arena_new();
	struct node_group *gs;
	struct errbuf err;
	size_t n;

	(void)state;
	memset(&extra, 0, sizeof(extra));
	cfg.min = 0;
	cfg.max = 50;
	extra.min_set = extra.max_set = true;
	cloud_group(cloud, "workers");
	assert_int_equal(cloudgroups_build(a, &cfg, &extra, 1, cloud, 1, 1000, NULL, &gs, &n, &err), 0);
	assert_int_equal(gs[0].min, 1);
	assert_int_equal(gs[0].max, 10);
	/* contradicting limits: no size above the smaller max */
	cfg.min = 12;
	assert_int_equal(cloudgroups_build(a, &cfg, &extra, 1, cloud, 1, 1000, NULL, &gs, &n, &err), 0);
	assert_int_equal(gs[0].max, 10);
	assert_int_equal(gs[0].min, 10);
	arena_free(a);
	provider_groups_free(cloud, 1);
}

/* An ASG whose size the cloud did not report cannot grow: never a made-up size. */
static void test_unknown_size(void **state)
{
	struct node_group cfg = cfg_group("workers");
	struct config_group_extra extra;
	struct arena *a = arena_new();
	struct node_group *gs;
	struct errbuf err;
	size_t n;

	(void)state;
	memset(&extra, 0, sizeof(extra));
	assert_int_equal(cloudgroups_build(a, &cfg, &extra, 1, NULL, 0, 1000, NULL, &gs, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(gs[0].max, 0);
	assert_int_equal(gs[0].backoff_until, 1060);
	assert_non_null(strstr(gs[0].backoff_reason, "unknown"));
	/* a max written in the config stands on its own */
	extra.max_set = true;
	cfg.max = 5;
	assert_int_equal(cloudgroups_build(a, &cfg, &extra, 1, NULL, 0, 1000, NULL, &gs, &n, &err), 0);
	assert_int_equal(gs[0].max, 5);
	assert_int_equal(gs[0].backoff_until, 0);
	arena_free(a);
}

/* A node belongs to the group listing its providerID, whatever its labels,
 * and before any selector match. */
static void test_membership_by_provider_id(void **state)
{
	static struct kv other_kv = { "pool", "b" };
	struct node_group groups[2] = { cfg_group("by-label"), cfg_group("by-id") };
	static const char *const ids[] = { "aws:///us-east-1b/i-0bbb", "AWS:///us-east-1a/i-0AAA" };
	struct snapshot *s = snapshot_new();
	struct node nodes[3];
	struct errbuf err;
	size_t i;

	(void)state;
	groups[0].selector.items = &other_kv;
	groups[1].selector.n = 0;
	groups[1].provider_ids = ids;
	groups[1].n_provider_ids = 2;
	memset(nodes, 0, sizeof(nodes));
	nodes[0].name = "ip-10-0-0-1";
	nodes[0].provider_id = "aws:///us-east-1a/i-0aaa";
	nodes[0].labels.items = &other_kv; /* also matches by-label's selector */
	nodes[0].labels.n = 1;
	nodes[1].name = "ip-10-0-0-2";
	nodes[1].provider_id = "aws:///us-east-1b/i-0bbb";
	nodes[2].name = "ip-10-0-0-3";
	nodes[2].provider_id = "aws:///us-east-1b/i-0ddd";
	nodes[2].labels.items = &other_kv;
	nodes[2].labels.n = 1;
	assert_non_null(s);
	for (i = 0; i < 3; i++)
		assert_int_equal(snapshot_add_node(s, &nodes[i], &err), 0);
	assert_int_equal(snapshot_set_groups(s, groups, 2, &err), 0);
	assert_int_equal(snapshot_finish(s, 1000, &err), 0);
	for (i = 0; i < s->n_nodes; i++) {
		const char *want = !strcmp(s->nodes[i].name, "ip-10-0-0-3") ? "by-label" : "by-id";

		assert_true(s->nodes[i].group >= 0);
		assert_string_equal(s->groups[s->nodes[i].group].name, want);
	}
	assert_int_equal(s->groups[1].current, 2);
	snapshot_free(s);
}

/* A fleet group of several instance types: a group per type, with the
 * type's resources, its labels under the config's and its price; the
 * group's own template is its largest type's, unless the config writes
 * one. A snapshot keeps the types and counts each one's DaemonSets. */
static void test_instance_types(void **state)
{
	static const char *const names[] = {"m5.large", "m5.2xlarge", "m5.xlarge"};
	struct node_group cfg = cfg_group("fleet");
	struct config_group_extra extra;
	struct provider_group *cloud = calloc(1, sizeof(*cloud));
	struct arena *a = arena_new();
	struct node_group *gs;
	struct snapshot *s;
	struct errbuf err;
	size_t n, i;

	(void)state;
	memset(&extra, 0, sizeof(extra));
	cfg.tmpl.labels.items = &cfg_label;
	cfg.tmpl.labels.n = 1;
	snprintf(cloud->name, sizeof(cloud->name), "fleet");
	cloud->max = 10;
	cloud->members_by_id = true;
	snprintf(cloud->tmpl.instance_type, sizeof(cloud->tmpl.instance_type), "m5.large");
	cloud->types = calloc(3, sizeof(*cloud->types));
	assert_non_null(cloud->types);
	cloud->n_types = 3;
	for (i = 0; i < 3; i++) {
		struct provider_template *t = &cloud->types[i];
		int64_t k = i == 0 ? 1 : i == 1 ? 4 : 2;

		snprintf(t->instance_type, sizeof(t->instance_type), "%s", names[i]);
		t->cpu_m = 1930 * k;
		t->memory = (7ll << 30) * k;
		t->pods = 29;
		t->price_per_hour = 0.096 * (double)k;
		assert_int_equal(provider_template_label(t, "node.kubernetes.io/instance-type", names[i]), 0);
		assert_int_equal(provider_template_label(t, "team", "cloud"), 0);
	}
	cloud->tmpl.cpu_m = 1930;
	cloud->tmpl.memory = 7ll << 30;
	assert_int_equal(cloudgroups_build(a, &cfg, &extra, 1, cloud, 1, 1000, NULL, &gs, &n, &err), 0);
	assert_int_equal(gs[0].n_types, 3);
	for (i = 0; i < 3; i++) {
		const struct node_group *t = &gs[0].types[i];

		assert_string_equal(t->instance_type, names[i]);
		assert_string_equal(t->name, "fleet");
		assert_string_equal(kvlist_get(&t->tmpl.labels, "node.kubernetes.io/instance-type"), names[i]);
		assert_string_equal(kvlist_get(&t->tmpl.labels, "team"), "ml"); /* the config's wins */
		assert_int_equal(t->n_types, 0);
		assert_true(t->price_from_cloud);
	}
	assert_int_equal(gs[0].types[1].tmpl.allocatable.cpu_m, 1930 * 4);
	assert_true(gs[0].types[2].price_per_hour > 0.19 && gs[0].types[2].price_per_hour < 0.2);
	/* the largest stands for the group */
	assert_string_equal(gs[0].instance_type, "m5.2xlarge");
	assert_int_equal(gs[0].tmpl.allocatable.cpu_m, 1930 * 4);
	assert_string_equal(kvlist_get(&gs[0].tmpl.labels, "node.kubernetes.io/instance-type"), "m5.2xlarge");
	assert_true(gs[0].price_per_hour > 0.38 && gs[0].price_per_hour < 0.39);

	/* into a snapshot: copied whole, each type's DaemonSet overhead counted */
	s = snapshot_new();
	assert_non_null(s);
	assert_int_equal(snapshot_set_groups(s, gs, n, &err), 0);
	assert_int_equal(snapshot_finish(s, 1000, &err), 0);
	assert_int_equal(s->groups[0].n_types, 3);
	assert_string_equal(s->groups[0].types[2].instance_type, "m5.xlarge");
	assert_int_equal(s->groups[0].types[2].tmpl.allocatable.cpu_m, 1930 * 2);
	snapshot_free(s);

	/* a template the config writes stays the group's */
	extra.template_set = true;
	cfg.tmpl.allocatable.cpu_m = 3000;
	assert_int_equal(cloudgroups_build(a, &cfg, &extra, 1, cloud, 1, 1000, NULL, &gs, &n, &err), 0);
	assert_int_equal(gs[0].tmpl.allocatable.cpu_m, 3000);
	assert_string_equal(gs[0].instance_type, "m5.large");
	assert_int_equal(gs[0].n_types, 3);
	arena_free(a);
	provider_groups_free(cloud, 1);
}

/* Drift reads what the operator wrote and what the cloud says of an
 * instance: a node lacking a label or taint only the cloud's description
 * of the group has (its guess of the kubelet's labels) has not drifted; a
 * node lacking the config's label has, and so has a node whose instance
 * the cloud says is outdated (an older image), with the cloud's words. */
static void test_drift_reads_the_operators_template(void **state)
{
	static struct kv cfg_tier = { "tier", "2" };
	static struct kv node_ok[] = { { "luascale.io/node-group", "workers" }, { "tier", "2" } };
	static struct kv node_old[] = { { "luascale.io/node-group", "workers" }, { "tier", "1" } };
	static struct kv node_type[] = { { "luascale.io/node-group", "workers" }, { "tier", "2" },
					 { "node.kubernetes.io/instance-type", "g4dn.2xlarge" } };
	struct node_group cfg = cfg_group("workers");
	struct config_group_extra extra;
	struct provider_group *cloud = calloc(1, sizeof(*cloud));
	struct arena *a = arena_new();
	struct node_group *gs;
	struct snapshot *s = snapshot_new();
	struct node nodes[4];
	struct errbuf err;
	char why[256];
	size_t n, i;

	(void)state;
	memset(&extra, 0, sizeof(extra));
	cfg.tmpl.labels.items = &cfg_tier;
	cfg.tmpl.labels.n = 1;
	cfg.drift_labels = cfg.tmpl.labels;
	assert_non_null(cloud);
	cloud_group(cloud, "workers");
	assert_int_equal(provider_template_label(&cloud->tmpl, "topology.kubernetes.io/region", "us-east-1"), 0);
	snprintf(cloud->tmpl.instance_type, sizeof(cloud->tmpl.instance_type), "g4dn.xlarge");
	snprintf(cloud->instances[1].outdated, sizeof(cloud->instances[1].outdated),
		 "image ami-1 is not launch template lt-1's ami-2");
	snprintf(cloud->instances[2].outdated, sizeof(cloud->instances[2].outdated), "gone: never read");
	assert_int_equal(cloudgroups_build(a, &cfg, &extra, 1, cloud, 1, 1000, NULL, &gs, &n, &err), 0);
	assert_int_equal(gs[0].n_outdated, 1);
	/* the cloud's label and taint are the template's, for packing */
	assert_string_equal(kvlist_get(&gs[0].tmpl.labels, "topology.kubernetes.io/region"), "us-east-1");
	assert_int_equal(gs[0].tmpl.n_taints, 1);

	memset(nodes, 0, sizeof(nodes));
	nodes[0].name = "current";
	nodes[0].provider_id = "aws:///us-east-1a/i-0aaa";
	nodes[0].labels.items = node_ok;
	nodes[0].labels.n = 2;
	nodes[1].name = "old-image";
	nodes[1].provider_id = "AWS:///us-east-1b/i-0BBB";
	nodes[1].labels.items = node_ok;
	nodes[1].labels.n = 2;
	nodes[2].name = "old-tier";
	nodes[2].labels.items = node_old;
	nodes[2].labels.n = 2;
	nodes[3].name = "other-type";
	nodes[3].labels.items = node_type;
	nodes[3].labels.n = 3;
	assert_non_null(s);
	for (i = 0; i < 4; i++)
		assert_int_equal(snapshot_add_node(s, &nodes[i], &err), 0);
	assert_int_equal(snapshot_set_groups(s, gs, n, &err), 0);
	assert_int_equal(snapshot_finish(s, 1000, &err), 0);
	for (i = 0; i < s->n_nodes; i++) {
		bool drifted = snapshot_node_drift(s, i, why, sizeof(why));

		assert_int_equal(s->nodes[i].group, 0);
		if (!strcmp(s->nodes[i].name, "current")) {
			assert_false(drifted); /* no region label, no gpu taint: the cloud's guesses */
			assert_string_equal(why, "");
		} else if (!strcmp(s->nodes[i].name, "old-image")) {
			assert_true(drifted);
			assert_string_equal(why, "image ami-1 is not launch template lt-1's ami-2");
		} else if (!strcmp(s->nodes[i].name, "other-type")) {
			/* a group's one type may not be all it launches (an ASG's
			 * mixed overrides, attribute-based types): no drift */
			assert_false(drifted);
		} else {
			assert_true(drifted);
			assert_string_equal(why, "label tier is \"1\", the template's is 2");
		}
	}
	snapshot_free(s);
	arena_free(a);
	provider_groups_free(cloud, 1);
}

/* A provider that maps nodes to groups by label, not by providerID (the
 * remote simulator), still says which instances are outdated: the group
 * keeps them, and no membership by id. */
static void test_outdated_without_membership_by_id(void **state)
{
	struct node_group cfg = cfg_group("workers");
	struct config_group_extra extra;
	struct provider_group *cloud = calloc(1, sizeof(*cloud));
	struct arena *a = arena_new();
	struct node_group *gs;
	struct errbuf err;
	size_t n;

	(void)state;
	memset(&extra, 0, sizeof(extra));
	assert_non_null(cloud);
	cloud_group(cloud, "workers");
	cloud->members_by_id = false;
	snprintf(cloud->instances[1].outdated, sizeof(cloud->instances[1].outdated), "image v1 is not group workers's v2");
	assert_int_equal(cloudgroups_build(a, &cfg, &extra, 1, cloud, 1, 1000, NULL, &gs, &n, &err), 0);
	assert_int_equal(gs[0].n_provider_ids, 0);
	assert_int_equal(gs[0].n_outdated, 1);
	assert_string_equal(gs[0].outdated[0].key, cloud->instances[1].provider_id);
	assert_string_equal(gs[0].outdated[0].value, "image v1 is not group workers's v2");
	arena_free(a);
	provider_groups_free(cloud, 1);
}

/* One node-template tag at a time (provider_template_tag), as both AWS's
 * and Azure's tags write them: what each kind sets, and what is refused. */
static void test_template_tags(void **state)
{
	static const struct {
		const char *kind, *key, *value;
		int rc;
	} cases[] = {
		{ "label", "team", "ml", 0 },
		{ "label", "", "ml", -1 },
		{ "taint", "gpu", "true:NoSchedule", 0 },
		{ "taint", "dedicated", ":NoExecute", 0 },
		{ "taint", "gpu", "true", -1 },
		{ "taint", "gpu", "true:Sometimes", -1 },
		{ "resources", "cpu", "3500m", 0 },
		{ "resources", "memory", "16Gi", 0 },
		{ "resources", "pods", "58", 0 },
		{ "resources", "nvidia.com/gpu", "2", 0 },
		{ "resources", "vpc.amazonaws.com/efa", "1", 0 },
		{ "resources", "ephemeral-storage", "100Gi", 0 },
		{ "resources", "memory", "lots", -1 },
		{ "resources", "pods", "-1", -1 },
		{ "autoscaling-options", "scaledownutilizationthreshold", "0.5", 1 },
		{ "labels", "team", "ml", 1 },
	};
	struct provider_template t;
	size_t i;

	(void)state;
	memset(&t, 0, sizeof(t));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (provider_template_tag(&t, cases[i].kind, cases[i].key, cases[i].value) != cases[i].rc)
			fail_msg("%s %s=%s: not %d", cases[i].kind, cases[i].key, cases[i].value, cases[i].rc);
	}
	assert_int_equal(t.n_labels, 1);
	assert_string_equal(t.labels[0].value, "ml");
	assert_int_equal(t.n_taints, 2);
	assert_string_equal(t.taints[0].key, "gpu");
	assert_string_equal(t.taints[0].value, "true");
	assert_string_equal(t.taints[0].effect, "NoSchedule");
	assert_string_equal(t.taints[1].value, "");
	assert_int_equal(t.cpu_m, 3500);
	assert_int_equal(t.memory, 16ll << 30);
	assert_int_equal(t.pods, 58);
	assert_int_equal(t.gpus, 2);
	/* ephemeral-storage is not kept; efa is an extended resource */
	assert_int_equal(t.n_resources, 1);
	assert_string_equal(t.resources[0].name, "vpc.amazonaws.com/efa");
	assert_int_equal(t.resources[0].value, 1);
	provider_template_clear(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_outdated_without_membership_by_id),
		cmocka_unit_test(test_cloud_completes_config),
		cmocka_unit_test(test_config_only_narrows),
		cmocka_unit_test(test_unknown_size),
		cmocka_unit_test(test_membership_by_provider_id),
		cmocka_unit_test(test_instance_types),
		cmocka_unit_test(test_drift_reads_the_operators_template),
		cmocka_unit_test(test_template_tags),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
