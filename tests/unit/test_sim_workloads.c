/*
 * Tests for sim/world/workloads.c in virtual time: pods written by a client
 * (validation, LimitRange defaults), the ReplicaSet controller scaling up
 * and down (pending pods first), a Deployment's rollout to a new
 * ReplicaSet, garbage collection of the dependents of a deleted owner,
 * and a Job running to completion. The store is the API server's; the
 * controllers are driven pass by pass, the clock by the virtual executor.
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
#include "sim/apiserver/apiserver_store.h"
#include "sim/clouds/cloud.h"
#include "sim/world/cluster.h"
#include "sim/world/workloads.h"

#define S CLOCK_NS_PER_S
#define GI (1LL << 30)
#define WALL0 1700000000

static struct kv workers_labels[] = {{"luascale.io/node-group", "workers"}};

static const struct node_group groups[] = {
	{.name = "workers", .min = 0, .max = 20, .price_per_hour = 0.2,
	 .selector = {workers_labels, 1},
	 .tmpl = {.allocatable = {.cpu_m = 4000, .memory = 16 * GI, .pods = 110},
		  .labels = {workers_labels, 1}}},
};

struct world {
	struct clock *clk;
	struct executor *ex;
	struct sim_cloud *cloud;
	struct sim_cluster *cl;
	struct apiserver_store *st;
	struct sim_workloads *wl;
	int64_t t;
};

static void put(struct world *w, enum apiserver_resource r, const char *json)
{
	cJSON *o = cJSON_Parse(json);
	struct errbuf err;

	assert_non_null(o);
	assert_int_equal(sim_workloads_admit(r, o, NULL, false, &err), 0);
	apiserver_store_lock(w->st);
	assert_int_equal(apiserver_store_put(w->st, r, o, WALL0, NULL, &err), 0);
	apiserver_store_unlock(w->st);
}

/* A client's update of a stored object, admitted as the server does. */
static void update(struct world *w, enum apiserver_resource r, const char *name, const char *json)
{
	cJSON *o = cJSON_Parse(json), *cur;
	const struct apiserver_ver *v;
	struct errbuf err;

	assert_non_null(o);
	apiserver_store_lock(w->st);
	v = apiserver_store_get(w->st, r, "default", name);
	assert_non_null(v);
	cur = cJSON_ParseWithLength(v->json, v->len);
	assert_int_equal(sim_workloads_admit(r, o, cur, false, &err), 0);
	cJSON_Delete(cur);
	assert_int_equal(apiserver_store_put(w->st, r, o, WALL0, NULL, &err), 0);
	apiserver_store_unlock(w->st);
}

static struct world *world_new(int nodes)
{
	struct world *w = calloc(1, sizeof(*w));
	struct sim_cloud_opts o;
	struct errbuf err;

	assert_non_null(w);
	sim_cloud_opts_default(&o);
	o.boot_delay_ns = 10 * S;
	o.boot_jitter_ns = 0;
	o.launch_latency_ns = 0;
	w->clk = vclock_new(WALL0);
	w->ex = executor_new_virtual(w->clk);
	w->cloud = sim_cloud_new(w->ex, groups, 1, &o, &err);
	assert_non_null(w->cloud);
	w->cl = sim_cluster_new(w->cloud, NULL, &err);
	assert_non_null(w->cl);
	if (nodes)
		assert_int_equal(sim_cluster_add_nodes(w->cl, "workers", nodes, &err), 0);
	w->st = apiserver_store_new(1000, 100);
	assert_non_null(w->st);
	w->wl = sim_workloads_new(w->cl, w->st, 7);
	assert_non_null(w->wl);
	apiserver_store_lock(w->st);
	assert_int_equal(apiserver_store_put(w->st, APISERVER_NAMESPACES,
					     cJSON_Parse("{\"metadata\":{\"name\":\"default\"}}"),
					     WALL0, NULL, &err), 0);
	apiserver_store_unlock(w->st);
	return w;
}

static void world_free(struct world *w)
{
	sim_workloads_free(w->wl);
	executor_shutdown(w->ex, clock_now(w->clk));
	sim_cluster_free(w->cl);
	sim_cloud_free(w->cloud);
	apiserver_store_free(w->st);
	vclock_free(w->clk);
	free(w);
}

/* 'n' controller passes, 'step_s' of virtual time after each. */
static void passes(struct world *w, int n, int64_t step_s)
{
	int i;

	for (i = 0; i < n; i++) {
		sim_workloads_reconcile(w->wl, WALL0 + w->t);
		w->t += step_s;
		executor_run_until(w->ex, w->t * S);
	}
}

/* A stored object's number at a.b (-1 when absent). */
static int64_t num(struct world *w, enum apiserver_resource r, const char *name, const char *a,
		   const char *b)
{
	const struct apiserver_ver *v;
	const cJSON *x;
	cJSON *o;
	int64_t n = -1;

	apiserver_store_lock(w->st);
	v = apiserver_store_get(w->st, r, "default", name);
	o = v ? cJSON_ParseWithLength(v->json, v->len) : NULL;
	apiserver_store_unlock(w->st);
	x = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, a), b);
	if (cJSON_IsNumber(x))
		n = (int64_t)x->valuedouble;
	cJSON_Delete(o);
	return n;
}

static size_t count(struct world *w, enum apiserver_resource r)
{
	size_t n;

	apiserver_store_lock(w->st);
	apiserver_store_list(w->st, r, &n);
	apiserver_store_unlock(w->st);
	return n;
}

/* The name of the only (or first) object of 'r'. */
static void first_name(struct world *w, enum apiserver_resource r, char *out, size_t len)
{
	struct apiserver_ver *const *items;
	size_t n;

	apiserver_store_lock(w->st);
	items = apiserver_store_list(w->st, r, &n);
	snprintf(out, len, "%s", n ? items[0]->name : "");
	apiserver_store_unlock(w->st);
}

struct pod_count {
	int running, pending, terminating, succeeded;
};

/* Pods of the cluster by state. */
static struct pod_count pods(struct world *w)
{
	struct pod_count c = {0, 0, 0, 0};
	struct snapshot *snap;
	struct errbuf err;
	size_t i;

	assert_int_equal(sim_cluster_snapshot(w->cl, false, &snap, &err), 0);
	for (i = 0; i < snap->n_pods; i++) {
		const struct pod *p = &snap->pods[i];

		if (p->flags & POD_TERMINATING)
			c.terminating++;
		else if (p->phase == POD_RUNNING)
			c.running++;
		else if (p->phase == POD_PENDING)
			c.pending++;
		else if (p->phase == POD_SUCCEEDED)
			c.succeeded++;
	}
	snapshot_free(snap);
	return c;
}

#define DEPLOY(replicas, image) \
	"{\"metadata\":{\"name\":\"web\",\"namespace\":\"default\"},\"spec\":{\"replicas\":" #replicas "," \
	"\"selector\":{\"matchLabels\":{\"app\":\"web\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\"}}," \
	"\"spec\":{\"terminationGracePeriodSeconds\":5,\"containers\":[{\"name\":\"web\",\"image\":\"" image "\"," \
	"\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}]}}}}"

/* A client's pod: validated, given the LimitRange's defaults, made a pending pod. */
static void test_pod_create_and_limitrange(void **state)
{
	struct world *w = world_new(1);
	struct errbuf err;
	cJSON *p;
	struct sim_pod_info info;
	const char *cpu;

	(void)state;
	put(w, APISERVER_LIMITRANGES,
	    "{\"metadata\":{\"name\":\"d\",\"namespace\":\"default\"},\"spec\":{\"limits\":[{\"type\":\"Container\","
	    "\"defaultRequest\":{\"cpu\":\"700m\",\"memory\":\"300Mi\"}}]}}");
	p = cJSON_Parse("{\"metadata\":{\"name\":\"a\",\"namespace\":\"default\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}");
	assert_int_equal(sim_workloads_create_pod(w->wl, p, false, &err), 0);
	cpu = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p, "spec"), "containers"), 0),
		"resources"), "requests"), "cpu"));
	assert_non_null(cpu);
	assert_string_equal(cpu, "700m");
	assert_int_equal(sim_cluster_pod(w->cl, "default", "a", &info), 0);
	assert_int_equal(info.phase, POD_PENDING);
	/* the same name again: 409; without an image: 422; elsewhere: 404 */
	assert_int_equal(sim_workloads_create_pod(w->wl, p, false, &err), 409);
	cJSON_Delete(p);
	p = cJSON_Parse("{\"metadata\":{\"name\":\"b\",\"namespace\":\"default\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}");
	assert_int_equal(sim_workloads_create_pod(w->wl, p, false, &err), 422);
	assert_non_null(strstr(err.msg, "spec.containers[0].image: Required value"));
	cJSON_Delete(p);
	p = cJSON_Parse("{\"metadata\":{\"name\":\"b\",\"namespace\":\"nope\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}");
	assert_int_equal(sim_workloads_create_pod(w->wl, p, false, &err), 404);
	cJSON_Delete(p);
	/* 0.7 cpu of 4: it runs once scheduled */
	executor_run_until(w->ex, 5 * S);
	assert_int_equal(sim_cluster_pod(w->cl, "default", "a", &info), 0);
	assert_int_equal(info.phase, POD_RUNNING);
	world_free(w);
}

/* A Deployment makes its ReplicaSet and pods; scaling down removes pending pods first. */
static void test_deployment_scale(void **state)
{
	struct world *w = world_new(2);
	char rs[300];
	struct pod_count c;
	struct errbuf err;

	(void)state;
	put(w, APISERVER_DEPLOYMENTS, DEPLOY(10, "web:1"));
	passes(w, 3, 2);
	assert_int_equal(count(w, APISERVER_REPLICASETS), 1);
	first_name(w, APISERVER_REPLICASETS, rs, sizeof(rs));
	assert_int_equal(num(w, APISERVER_REPLICASETS, rs, "spec", "replicas"), 10);
	/* 2 nodes of 4 cores: 8 run, 2 wait */
	c = pods(w);
	assert_int_equal(c.running, 8);
	assert_int_equal(c.pending, 2);
	assert_int_equal(num(w, APISERVER_DEPLOYMENTS, "web", "status", "readyReplicas"), 8);
	assert_int_equal(num(w, APISERVER_DEPLOYMENTS, "web", "status", "replicas"), 10);
	/* down to 7: the two pending go first, then the newest running one */
	update(w, APISERVER_DEPLOYMENTS, "web", DEPLOY(7, "web:1"));
	passes(w, 2, 1);
	c = pods(w);
	assert_int_equal(c.pending, 0);
	assert_int_equal(c.running, 7);
	assert_int_equal(c.terminating, 1);
	assert_int_equal(num(w, APISERVER_REPLICASETS, rs, "status", "replicas"), 7);
	/* a pod that goes is replaced */
	{
		struct snapshot *snap;
		struct kube_status ks;
		char name[300];

		assert_int_equal(sim_cluster_snapshot(w->cl, false, &snap, &err), 0);
		snprintf(name, sizeof(name), "%s", snap->pods[0].name);
		snapshot_free(snap);
		assert_int_equal(sim_cluster_delete_pod(w->cl, "default", name, 0, &ks), 0);
		passes(w, 30, 1);
		c = pods(w);
		assert_int_equal(c.running, 7);
	}
	world_free(w);
}

/* A new template rolls the pods to a new ReplicaSet; the old one ends at 0. */
static void test_rollout(void **state)
{
	struct world *w = world_new(3);
	struct apiserver_ver *const *items;
	size_t n, i;
	int64_t total_new = -1, total_old = -1;

	(void)state;
	put(w, APISERVER_DEPLOYMENTS, DEPLOY(4, "web:1"));
	passes(w, 4, 2);
	assert_int_equal(num(w, APISERVER_DEPLOYMENTS, "web", "status", "availableReplicas"), 4);
	update(w, APISERVER_DEPLOYMENTS, "web", DEPLOY(4, "web:2"));
	assert_int_equal(num(w, APISERVER_DEPLOYMENTS, "web", "metadata", "generation"), 2);
	passes(w, 40, 2);
	assert_int_equal(count(w, APISERVER_REPLICASETS), 2);
	apiserver_store_lock(w->st);
	items = apiserver_store_list(w->st, APISERVER_REPLICASETS, &n);
	for (i = 0; i < n; i++) {
		cJSON *rs = cJSON_ParseWithLength(items[i]->json, items[i]->len);
		const char *img = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(
			cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
				cJSON_GetObjectItemCaseSensitive(rs, "spec"), "template"), "spec"), "containers"), 0), "image"));
		int64_t r = (int64_t)cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rs, "spec"),
								      "replicas")->valuedouble;

		if (strcmp(img, "web:2") == 0)
			total_new = r;
		else
			total_old = r;
		cJSON_Delete(rs);
	}
	apiserver_store_unlock(w->st);
	assert_int_equal(total_new, 4);
	assert_int_equal(total_old, 0);
	assert_int_equal(num(w, APISERVER_DEPLOYMENTS, "web", "status", "updatedReplicas"), 4);
	assert_int_equal(num(w, APISERVER_DEPLOYMENTS, "web", "status", "observedGeneration"), 2);
	assert_int_equal(pods(w).running, 4);
	world_free(w);
}

/* Deleting the Deployment takes its ReplicaSet and pods with it. */
static void test_garbage_collection(void **state)
{
	struct world *w = world_new(2);
	struct pod_count c;

	(void)state;
	put(w, APISERVER_DEPLOYMENTS, DEPLOY(3, "web:1"));
	passes(w, 3, 2);
	assert_int_equal(pods(w).running, 3);
	apiserver_store_lock(w->st);
	assert_int_equal(apiserver_store_delete(w->st, APISERVER_DEPLOYMENTS, "default", "web", NULL), 0);
	apiserver_store_unlock(w->st);
	passes(w, 1, 1);
	assert_int_equal(count(w, APISERVER_REPLICASETS), 0);
	c = pods(w);
	assert_int_equal(c.running, 0);
	assert_int_equal(c.terminating, 3);
	passes(w, 10, 1); /* their grace is 5 s */
	assert_int_equal(sim_cluster_n_pods(w->cl), 0);
	world_free(w);
}

/* A Job runs 'completions' pods, 'parallelism' at a time, then is Complete. */
static void test_job_completion(void **state)
{
	struct world *w = world_new(1);
	const struct apiserver_ver *v;
	cJSON *o;
	const cJSON *c;
	bool complete = false;

	(void)state;
	put(w, APISERVER_JOBS,
	    "{\"metadata\":{\"name\":\"j\",\"namespace\":\"default\"},\"spec\":{\"completions\":3,\"parallelism\":2,"
	    "\"template\":{\"metadata\":{\"annotations\":{\"sim.luascale.io/duration\":\"10s\"}},"
	    "\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\",\"image\":\"x\","
	    "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}}");
	passes(w, 1, 5);
	assert_int_equal(pods(w).running, 2); /* two at a time */
	passes(w, 2, 5);                      /* 10 s: two done, the third starts */
	assert_int_equal(num(w, APISERVER_JOBS, "j", "status", "succeeded"), 2);
	assert_int_equal(num(w, APISERVER_JOBS, "j", "status", "active"), 1);
	passes(w, 4, 5);
	assert_int_equal(num(w, APISERVER_JOBS, "j", "status", "succeeded"), 3);
	assert_int_equal(num(w, APISERVER_JOBS, "j", "status", "active"), 0);
	assert_int_equal(pods(w).succeeded, 3); /* completed pods stay listed */
	apiserver_store_lock(w->st);
	v = apiserver_store_get(w->st, APISERVER_JOBS, "default", "j");
	o = cJSON_ParseWithLength(v->json, v->len);
	apiserver_store_unlock(w->st);
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "status"), "conditions"))
		if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "type")), "Complete") == 0)
			complete = strcmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "status")), "True") == 0;
	cJSON_Delete(o);
	assert_true(complete);
	world_free(w);
}

/* Admission: a selector that does not match the template is 422; defaults are set. */
static void test_admit(void **state)
{
	struct errbuf err;
	cJSON *o = cJSON_Parse("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"selector\":{\"matchLabels\":{\"a\":\"b\"}},"
			       "\"template\":{\"metadata\":{\"labels\":{\"a\":\"c\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}}}");

	(void)state;
	assert_int_equal(sim_workloads_admit(APISERVER_DEPLOYMENTS, o, NULL, false, &err), 422);
	assert_non_null(strstr(err.msg, "selector"));
	cJSON_Delete(o);
	o = cJSON_Parse("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"selector\":{\"matchLabels\":{\"a\":\"b\"}},"
			"\"template\":{\"metadata\":{\"labels\":{\"a\":\"b\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}}}");
	assert_int_equal(sim_workloads_admit(APISERVER_DEPLOYMENTS, o, NULL, false, &err), 0);
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "spec"), "replicas")->valuedouble, 1);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
				    cJSON_GetObjectItemCaseSensitive(o, "spec"), "strategy"), "type")), "RollingUpdate");
	cJSON_Delete(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pod_create_and_limitrange),
		cmocka_unit_test(test_deployment_scale),
		cmocka_unit_test(test_rollout),
		cmocka_unit_test(test_garbage_collection),
		cmocka_unit_test(test_job_completion),
		cmocka_unit_test(test_admit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
