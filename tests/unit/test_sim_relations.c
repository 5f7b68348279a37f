/*
 * Tests for the simulated scheduler's pod relations (sim/world/cluster.c over
 * topology.c) and volumes (sim/world/volumes.c): it refuses what the
 * kube-scheduler refuses — hostname anti-affinity (both directions), zone
 * spread, pod affinity, a taken hostPort, a volume in another zone — with
 * the kube-scheduler's words, tries a refused pod again when a node comes
 * or another pod binds, the snapshot carries the claims and volumes so
 * the engine sees the same zones, and a served pod shows its relations.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "runtime/clock.h"
#include "runtime/executor.h"
#include "sched.h"
#include "sim/clouds/cloud.h"
#include "sim/apiserver/apiserver_render.h"
#include "sim/world/cluster.h"

#define S CLOCK_NS_PER_S
#define GI (1LL << 30)
#define WALL0 1700000000
#define ZONE "topology.kubernetes.io/zone"

static struct kv za[] = {{ZONE, "a"}, {"luascale.io/node-group", "zone-a"}};
static struct kv zb[] = {{ZONE, "b"}, {"luascale.io/node-group", "zone-b"}};
static struct kv zc[] = {{ZONE, "c"}, {"luascale.io/node-group", "zone-c"}};

#define ZONE_GROUP(n, l)                                                                 \
	{.name = n, .min = 0, .max = 10, .price_per_hour = 0.2, .selector = {&l[1], 1},  \
	 .tmpl = {.allocatable = {.cpu_m = 4000, .memory = 16 * GI, .pods = 110},         \
		  .labels = {l, 2}}}

static const struct node_group groups[] = {ZONE_GROUP("zone-a", za), ZONE_GROUP("zone-b", zb),
					   ZONE_GROUP("zone-c", zc)};

static struct kv app_coord[] = {{"app", "coord"}};
static struct kv app_api[] = {{"app", "api"}};
static struct kv app_db[] = {{"app", "db"}};
static const char *coord_v[] = {"coord"};
static const char *db_v[] = {"db"};
static const char *api_v[] = {"api"};
static struct selector_req coord_req[] = {{"app", SELECTOR_IN, coord_v, 1}};
static struct selector_req db_req[] = {{"app", SELECTOR_IN, db_v, 1}};
static struct selector_req api_req[] = {{"app", SELECTOR_IN, api_v, 1}};
static struct pod_term coord_anti[] = {
	{.selector = {coord_req, 1}, .topology_key = "kubernetes.io/hostname"}};
static struct pod_term near_db[] = {{.selector = {db_req, 1}, .topology_key = ZONE}};
static struct spread_constraint api_spread[] = {
	{.max_skew = 1, .min_domains = 1, .topology_key = ZONE, .selector = {api_req, 1},
	 .honor_affinity = true}};
static struct host_port port_443[] = {{"0.0.0.0", 443, PORT_TCP}};
static struct host_port port_80[] = {{"0.0.0.0", 80, PORT_TCP}};
static struct kv sel_nowhere[] = {{"nowhere", "true"}};

struct world {
	struct clock *clk;
	struct executor *ex;
	struct sim_cloud *cloud;
	struct sim_cluster *cl;
	struct kubeops kube;
	struct sim_pod_spec specs[8];
	int n_specs;
};

static struct world *world_new(enum sim_sched_mode mode)
{
	struct world *w = calloc(1, sizeof(*w));
	struct sim_cloud_opts o;
	struct sim_cluster_opts co;
	struct errbuf err;

	assert_non_null(w);
	sim_cloud_opts_default(&o);
	o.boot_delay_ns = 60 * S;
	o.boot_jitter_ns = 0;
	o.launch_latency_ns = 0;
	sim_cluster_opts_default(&co);
	co.sched = mode;
	w->clk = vclock_new(WALL0);
	w->ex = executor_new_virtual(w->clk);
	w->cloud = sim_cloud_new(w->ex, groups, 3, &o, &err);
	assert_non_null(w->cloud);
	w->cl = sim_cluster_new(w->cloud, &co, &err);
	assert_non_null(w->cl);
	sim_cluster_kubeops(w->cl, &w->kube);
	return w;
}

static void world_free(struct world *w)
{
	executor_shutdown(w->ex, clock_now(w->clk));
	sim_cluster_free(w->cl);
	sim_cloud_free(w->cloud);
	vclock_free(w->clk);
	free(w);
}

static void run_to(struct world *w, int64_t t_s)
{
	executor_run_until(w->ex, t_s * S);
}

/* A spec the caller fills in, then registers with reg(). */
static struct sim_pod_spec *spec(struct world *w, const char *name, int64_t cpu_m,
				 struct kv *labels, enum sim_controller ctrl)
{
	struct sim_pod_spec *sp;

	assert_true(w->n_specs < 8);
	sp = &w->specs[w->n_specs++];
	memset(sp, 0, sizeof(*sp));
	sp->name = name;
	sp->ns = "default";
	sp->requests.cpu_m = cpu_m;
	sp->requests.memory = GI;
	sp->controller = ctrl;
	sp->grace_ns = 30 * S;
	if (labels) {
		sp->labels.items = labels;
		sp->labels.n = 1;
	}
	return sp;
}

static int reg(struct world *w, struct sim_pod_spec *sp)
{
	struct errbuf err;
	int h = sim_cluster_add_spec(w->cl, sp, &err);

	if (h < 0)
		fail_msg("%s", err.msg);
	return h;
}

static void create(struct world *w, int h, int count)
{
	struct errbuf err;

	assert_int_equal(sim_cluster_create_pods(w->cl, h, count, 0, &err), 0);
}

static void nodes(struct world *w, const char *group, int n)
{
	struct errbuf err;

	assert_int_equal(sim_cluster_add_nodes(w->cl, group, n, &err), 0);
}

static struct sim_pod_info pod(struct world *w, const char *name)
{
	struct sim_pod_info info;

	memset(&info, 0, sizeof(info));
	if (sim_cluster_pod(w->cl, "default", name, &info) < 0)
		fail_msg("no pod %s", name);
	return info;
}

static void cordon(struct world *w, const char *node, bool on)
{
	struct kube_status st;

	assert_int_equal(w->kube.ops->cordon(w->kube.ctx, node, on, &st), 0);
}

/* A pod of the same workload never lands beside its sibling, and a pod
 * matching its term is refused beside it too (the symmetry rule). */
static void test_hostname_anti_affinity(void **state)
{
	struct world *w = world_new(SIM_SCHED_FIRST_FIT);
	struct sim_pod_spec *sp;
	struct sim_pod_info p;
	int coord, plain;

	(void)state;
	nodes(w, "zone-a", 2);
	sp = spec(w, "coord", 100, app_coord, SIM_CTRL_STATEFULSET);
	sp->anti_terms = coord_anti;
	sp->n_anti_terms = 1;
	coord = reg(w, sp);
	plain = reg(w, spec(w, "plain", 100, app_coord, SIM_CTRL_REPLICASET));
	create(w, coord, 3);
	run_to(w, 1);
	assert_string_equal(pod(w, "coord-1").node, "zone-a-1");
	assert_string_equal(pod(w, "coord-2").node, "zone-a-2");
	p = pod(w, "coord-3");
	assert_string_equal(p.node, "");
	assert_true(p.unschedulable);
	assert_string_equal(p.message,
			    "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules.");

	/* no anti-affinity of its own, but it matches theirs */
	create(w, plain, 1);
	run_to(w, 2);
	p = pod(w, "plain-1");
	assert_true(p.unschedulable);
	assert_string_equal(p.message,
			    "0/2 nodes are available: 2 node(s) didn't satisfy existing pods anti-affinity rules.");

	/* a third node: the pending member goes there, alone */
	nodes(w, "zone-b", 1);
	run_to(w, 3);
	assert_string_equal(pod(w, "coord-3").node, "zone-b-1");
	assert_true(pod(w, "plain-1").unschedulable);
	world_free(w);
}

/* A zone-spread pod waits for a node in a zone that keeps the skew, not
 * for any node; a pod bound elsewhere can let it in without room freed. */
static void test_zone_spread(void **state)
{
	struct world *w = world_new(SIM_SCHED_FIRST_FIT);
	struct sim_pod_spec *sp, *other;
	struct sim_pod_info p;
	struct kube_status st;
	int api, filler, marker;

	(void)state;
	nodes(w, "zone-a", 1);
	nodes(w, "zone-b", 1);
	/* zone b's node is full */
	sp = spec(w, "filler", 4000, NULL, SIM_CTRL_REPLICASET);
	sp->node_selector.items = &zb[0];
	sp->node_selector.n = 1;
	filler = reg(w, sp);
	create(w, filler, 1);
	run_to(w, 1);
	assert_string_equal(pod(w, "filler-1").node, "zone-b-1");

	sp = spec(w, "api", 500, app_api, SIM_CTRL_REPLICASET);
	sp->spread = api_spread;
	sp->n_spread = 1;
	api = reg(w, sp);
	create(w, api, 2);
	run_to(w, 6);
	/* one in zone a; the second would make a 2 and b 0 */
	assert_string_equal(pod(w, "api-1").node, "zone-a-1");
	p = pod(w, "api-2");
	assert_true(p.unschedulable);
	assert_string_equal(p.message,
			    "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match pod topology spread constraints.");
	/* another node in zone a does not help */
	nodes(w, "zone-a", 1);
	run_to(w, 7);
	assert_true(pod(w, "api-2").unschedulable);
	assert_string_equal(pod(w, "api-2").message,
			    "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match pod topology spread constraints.");
	/* a pod the spread counts is bound in zone b (the Binding API, no
	 * room freed anywhere): zone a may take one more now */
	other = spec(w, "marker", 0, app_api, SIM_CTRL_REPLICASET);
	other->requests.memory = 0;
	other->node_selector.items = sel_nowhere;
	other->node_selector.n = 1;
	marker = reg(w, other);
	create(w, marker, 1);
	run_to(w, 8);
	assert_int_equal(sim_cluster_bind_pod(w->cl, "default", "marker-1", "zone-b-1", &st), 0);
	run_to(w, 9);
	p = pod(w, "api-2");
	assert_false(p.unschedulable);
	assert_string_equal(p.node, "zone-a-1");

	/* a third one must go to zone c: none yet */
	create(w, api, 1);
	run_to(w, 10);
	assert_true(pod(w, "api-3").unschedulable);
	nodes(w, "zone-c", 1);
	run_to(w, 11);
	assert_string_equal(pod(w, "api-3").node, "zone-c-1");
	world_free(w);
}

/* A node without the spread's label is refused with the scheduler's
 * "(missing required label)". */
static void test_spread_missing_label(void **state)
{
	static struct spread_constraint rack[] = {
		{.max_skew = 1, .min_domains = 1, .topology_key = "example.com/rack",
		 .selector = {api_req, 1}, .honor_affinity = true}};
	struct world *w = world_new(SIM_SCHED_FIRST_FIT);
	struct sim_pod_spec *sp;
	int api;

	(void)state;
	nodes(w, "zone-a", 1);
	sp = spec(w, "api", 100, app_api, SIM_CTRL_REPLICASET);
	sp->spread = rack;
	sp->n_spread = 1;
	api = reg(w, sp);
	create(w, api, 1);
	run_to(w, 1);
	assert_string_equal(pod(w, "api-1").message,
			    "0/1 nodes are available: 1 node(s) didn't match pod topology spread constraints (missing required label).");
	world_free(w);
}

/* Required pod affinity: nowhere until a pod it must be near runs, then in
 * that pod's zone only. */
static void test_pod_affinity(void **state)
{
	struct world *w = world_new(SIM_SCHED_LEAST_ALLOCATED);
	struct sim_pod_spec *sp;
	int web, db;

	(void)state;
	nodes(w, "zone-a", 1);
	nodes(w, "zone-b", 1);
	sp = spec(w, "web", 100, NULL, SIM_CTRL_REPLICASET);
	sp->affinity_terms = near_db;
	sp->n_affinity_terms = 1;
	web = reg(w, sp);
	sp = spec(w, "db", 100, app_db, SIM_CTRL_REPLICASET);
	sp->node_selector.items = &zb[0];
	sp->node_selector.n = 1;
	db = reg(w, sp);
	create(w, web, 2);
	run_to(w, 1);
	assert_string_equal(pod(w, "web-1").message,
			    "0/2 nodes are available: 2 node(s) didn't match pod affinity rules.");
	create(w, db, 1);
	run_to(w, 2);
	assert_string_equal(pod(w, "db-1").node, "zone-b-1");
	/* the db bound in the pass: the web pods follow at the next one */
	run_to(w, 3);
	assert_string_equal(pod(w, "web-1").node, "zone-b-1");
	assert_string_equal(pod(w, "web-2").node, "zone-b-1");
	world_free(w);
}

/* One pod per node on a fixed hostPort; another port is free. */
static void test_host_port_clash(void **state)
{
	struct world *w = world_new(SIM_SCHED_FIRST_FIT);
	struct sim_pod_spec *sp;
	struct kube_status st;
	int ing, web;

	(void)state;
	nodes(w, "zone-a", 2);
	sp = spec(w, "ingress", 100, NULL, SIM_CTRL_REPLICASET);
	sp->host_ports = port_443;
	sp->n_host_ports = 1;
	ing = reg(w, sp);
	sp = spec(w, "web", 100, NULL, SIM_CTRL_REPLICASET);
	sp->host_ports = port_80;
	sp->n_host_ports = 1;
	web = reg(w, sp);
	create(w, ing, 3);
	create(w, web, 1);
	run_to(w, 1);
	assert_string_equal(pod(w, "ingress-1").node, "zone-a-1");
	assert_string_equal(pod(w, "ingress-2").node, "zone-a-2");
	assert_string_equal(pod(w, "ingress-3").message,
			    "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports.");
	assert_string_equal(pod(w, "web-1").node, "zone-a-1");
	/* the port is free again once its pod is gone */
	assert_int_equal(w->kube.ops->evict(w->kube.ctx, "default", "ingress-1", 0, &st), 0);
	run_to(w, 2);
	assert_string_equal(pod(w, "ingress-3").node, "zone-a-1");
	world_free(w);
}

/* A replica whose volume is in zone b runs in zone b only; one whose
 * volume is made where it first runs comes back there. */
static void test_volume_zone(void **state)
{
	static const char *const only_b[] = {"b"};
	static const struct sim_volume fixed = {"data", "zonal", ZONE, only_b, 1};
	static const struct sim_volume wffc = {"data", "zonal", ZONE, NULL, 0};
	struct world *w = world_new(SIM_SCHED_FIRST_FIT);
	struct sim_pod_spec *sp;
	struct sim_pod_info p;
	struct kube_status st;
	struct snapshot *s;
	struct errbuf err;
	int db, cache;
	size_t i;

	(void)state;
	nodes(w, "zone-a", 1);
	sp = spec(w, "db", 100, app_db, SIM_CTRL_STATEFULSET);
	sp->volume = &fixed;
	db = reg(w, sp);
	sp = spec(w, "cache", 100, NULL, SIM_CTRL_STATEFULSET);
	sp->volume = &wffc;
	cache = reg(w, sp);
	create(w, db, 1);
	create(w, cache, 1);
	run_to(w, 1);
	p = pod(w, "db-1");
	assert_true(p.unschedulable);
	assert_string_equal(p.message,
			    "0/1 nodes are available: 1 node(s) had volume node affinity conflict.");
	assert_string_equal(pod(w, "cache-1").node, "zone-a-1");

	/* the engine sees the same: claims, volumes, the class */
	assert_int_equal(sim_cluster_snapshot(w->cl, false, &s, &err), 0);
	assert_true(s->volumes_known);
	assert_int_equal(s->n_pvcs, 2);
	assert_int_equal(s->n_pvs, 2);
	assert_int_equal(s->n_storage_classes, 1);
	for (i = 0; i < s->n_pods; i++) {
		const struct pod *q = &s->pods[i];

		assert_int_equal(q->n_claims, 1);
		assert_null(q->volume_problem);
		assert_int_equal(q->n_volume_affinity, 1);
		if (strcmp(q->name, "db-1") == 0) {
			assert_string_equal(q->claims[0], "data-db-1");
			assert_int_equal(sched_fits_labels(q, "n", &s->nodes[0].labels, NULL, 0, false,
							   NULL, 0),
					 SCHED_VOLUME_ZONE);
		} else {
			assert_string_equal(q->claims[0], "data-cache-1");
			assert_int_equal(sched_fits_labels(q, "n", &s->nodes[0].labels, NULL, 0, false,
							   NULL, 0),
					 SCHED_FITS);
		}
	}
	snapshot_free(s);

	nodes(w, "zone-b", 1);
	run_to(w, 2);
	assert_string_equal(pod(w, "db-1").node, "zone-b-1");

	/* cache-1's volume is in zone a now: evicted, it waits for zone a */
	cordon(w, "zone-a-1", true);
	assert_int_equal(w->kube.ops->evict(w->kube.ctx, "default", "cache-1", 0, &st), 0);
	run_to(w, 3);
	p = pod(w, "cache-1");
	assert_true(p.unschedulable);
	assert_string_equal(p.message,
			    "0/2 nodes are available: 1 node(s) had volume node affinity conflict, 1 node(s) were unschedulable.");
	cordon(w, "zone-a-1", false);
	run_to(w, 4);
	assert_string_equal(pod(w, "cache-1").node, "zone-a-1");
	world_free(w);
}

/* A StatefulSet's new pod takes the lowest number no listed pod has, and
 * with it the replica's claim. */
static void test_statefulset_numbers(void **state)
{
	static const struct sim_volume wffc = {"data", "zonal", ZONE, NULL, 0};
	struct world *w = world_new(SIM_SCHED_FIRST_FIT);
	struct sim_pod_spec *sp;
	struct snapshot *s;
	struct errbuf err;
	int db;

	(void)state;
	nodes(w, "zone-a", 1);
	sp = spec(w, "db", 100, app_db, SIM_CTRL_STATEFULSET);
	sp->volume = &wffc;
	sp->duration_ns = 10 * S;
	db = reg(w, sp);
	create(w, db, 2);
	run_to(w, 1);
	assert_string_equal(pod(w, "db-2").node, "zone-a-1");
	/* finished pods stay listed 5 minutes: their numbers are taken */
	run_to(w, 20);
	create(w, db, 1);
	run_to(w, 21);
	assert_string_equal(pod(w, "db-3").node, "zone-a-1");
	run_to(w, 400);
	create(w, db, 2);
	run_to(w, 401);
	assert_string_equal(pod(w, "db-1").node, "zone-a-1");
	assert_string_equal(pod(w, "db-2").node, "zone-a-1");
	assert_int_equal(sim_cluster_snapshot(w->cl, false, &s, &err), 0);
	assert_int_equal(s->n_pvcs, 3); /* data-db-1, -2, -3: kept */
	snapshot_free(s);
	world_free(w);
}

static void test_bad_volume_spec(void **state)
{
	static const struct sim_volume wffc = {"data", "zonal", ZONE, NULL, 0};
	struct world *w = world_new(SIM_SCHED_FIRST_FIT);
	struct sim_pod_spec *sp;
	struct errbuf err;

	(void)state;
	sp = spec(w, "web", 100, NULL, SIM_CTRL_REPLICASET);
	sp->volume = &wffc;
	assert_int_equal(sim_cluster_add_spec(w->cl, sp, &err), -1);
	assert_non_null(strstr(err.msg, "a volume per replica needs a StatefulSet"));
	world_free(w);
}

/* What `luascale sim` serves of a scenario pod decodes to the relations
 * its scheduler holds it to, so the daemon sees what the world enforces. */
static void test_served_pod_has_its_relations(void **state)
{
	static struct spread_constraint spread[] = {
		{.max_skew = 2, .min_domains = 3, .topology_key = ZONE, .selector = {api_req, 1},
		 .honor_affinity = true}};
	struct pod p;
	struct sim_change ch;
	struct snapshot *s = snapshot_new();
	struct errbuf err;
	const struct pod *q;
	cJSON *o;

	(void)state;
	memset(&p, 0, sizeof(p));
	p.ns = "default";
	p.name = "api-1";
	p.node_name = "";
	p.labels.items = app_api;
	p.labels.n = 1;
	p.anti_terms = coord_anti;
	p.n_anti_terms = 1;
	p.affinity_terms = near_db;
	p.n_affinity_terms = 1;
	p.spread = spread;
	p.n_spread = 1;
	p.host_ports = port_443;
	p.n_host_ports = 1;
	p.requests.cpu_m = 100;
	memset(&ch, 0, sizeof(ch));
	ch.kind = SIM_OBJ_POD;
	ch.pod = &p;
	ch.started_wall = ch.deleted_wall = -1;
	o = apiserver_render_pod(&ch);
	assert_non_null(o);
	assert_non_null(s);
	if (snapshot_add_object(s, o, "Pod", &err) < 0)
		fail_msg("%s", err.msg);
	cJSON_Delete(o);
	assert_int_equal(s->n_pods, 1);
	q = &s->pods[0];
	assert_true(q->flags & POD_SCHEDULER_ONLY);
	assert_int_equal(q->n_anti_terms, 1);
	assert_string_equal(q->anti_terms[0].topology_key, "kubernetes.io/hostname");
	assert_true(label_selector_matches(&q->anti_terms[0].selector, &(struct kvlist){app_coord, 1}));
	assert_false(label_selector_matches(&q->anti_terms[0].selector, &(struct kvlist){app_api, 1}));
	assert_int_equal(q->n_affinity_terms, 1);
	assert_string_equal(q->affinity_terms[0].topology_key, ZONE);
	assert_int_equal(q->n_spread, 1);
	assert_int_equal(q->spread[0].max_skew, 2);
	assert_int_equal(q->spread[0].min_domains, 3);
	assert_true(q->spread[0].honor_affinity);
	assert_false(q->spread[0].honor_taints);
	assert_true(label_selector_matches(&q->spread[0].selector, &(struct kvlist){app_api, 1}));
	assert_int_equal(q->n_host_ports, 1);
	assert_int_equal(q->host_ports[0].port, 443);
	assert_int_equal(q->host_ports[0].protocol, PORT_TCP);
	snapshot_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostname_anti_affinity),
		cmocka_unit_test(test_zone_spread),
		cmocka_unit_test(test_spread_missing_label),
		cmocka_unit_test(test_pod_affinity),
		cmocka_unit_test(test_host_port_clash),
		cmocka_unit_test(test_volume_zone),
		cmocka_unit_test(test_statefulset_numbers),
		cmocka_unit_test(test_bad_volume_spec),
		cmocka_unit_test(test_served_pod_has_its_relations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
