/*
 * The remote sim provider (what `luascale run` uses against `luascale sim`)
 * against the real simulated API server on 127.0.0.1: list groups, launch
 * with every instance reported, terminate, map providerIDs, and errors
 * typed from the cloud's answer. Real time; waits are conditions with
 * deadlines.
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

#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "providers/simremote/simremote.h"
#include "runtime/clock.h"
#include "runtime/executor.h"
#include "sim/apiserver/apiserver.h"
#include "sim/world/scenario.h"

static const char scenario[] =
	"seed: 3\nstart: \"2026-11-30T08:00:00Z\"\nduration: 1h\n"
	"node_groups:\n"
	"  - {name: workers, min: 0, max: 5, price_per_hour: 0.2,\n"
	"     template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}\n"
	"cloud: {boot_delay: 1s, launch_latency: 100ms}\n"
	"initial_nodes: [{group: workers, count: 1}]\n";

struct rig {
	struct sim_scenario *sc;
	struct executor *ex;
	struct sim_world *w;
	struct apiserver *srv;
	struct kube_config *kc;
	struct kube_client *client;
	struct provider *prov;
	char kubeconfig[64];
};

static struct rig *rig_new(void)
{
	struct rig *r = calloc(1, sizeof(*r));
	struct apiserver_opts o;
	struct provider_limits lim = {50, 10, 50, 10};
	struct errbuf err;
	int fd;

	r->sc = sim_scenario_parse(scenario, sizeof(scenario) - 1, "test.yaml", &err);
	if (!r->sc)
		fail_msg("%s", err.msg);
	r->ex = executor_new_pool(2, 1024);
	r->w = sim_world_new(r->sc, r->ex, &err);
	if (!r->w)
		fail_msg("%s", err.msg);
	apiserver_opts_default(&o);
	r->srv = apiserver_new(r->w->cluster, &o, &err);
	if (!r->srv)
		fail_msg("%s", err.msg);
	snprintf(r->kubeconfig, sizeof(r->kubeconfig), "/tmp/luascale-simremote-XXXXXX");
	fd = mkstemp(r->kubeconfig);
	assert_true(fd >= 0);
	close(fd);
	if (apiserver_write_kubeconfig(r->srv, r->kubeconfig, &err) < 0 ||
	    kubeconfig_load(r->kubeconfig, "luascale-sim", &r->kc, &err) < 0)
		fail_msg("%s", err.msg);
	r->client = kube_client_new(r->kc, NULL, &err);
	if (!r->client)
		fail_msg("%s", err.msg);
	r->prov = simremote_provider_new(r->client, &lim, &err);
	if (!r->prov)
		fail_msg("%s", err.msg);
	return r;
}

static void rig_free(struct rig *r)
{
	provider_free(r->prov);
	kube_client_free(r->client);
	kube_config_free(r->kc);
	apiserver_free(r->srv);
	executor_shutdown(r->ex, clock_now(clock_real()) + 5 * CLOCK_NS_PER_S);
	sim_world_free(r->w);
	sim_scenario_free(r->sc);
	unlink(r->kubeconfig);
	free(r);
}

struct outcome {
	int instances;
	char ids[8][128];
	char pids[8][256];
	int done;
	int count;
	struct provider_status st;
};

static void on_instance(void *ctx, const struct provider_instance *in)
{
	struct outcome *o = ctx;

	snprintf(o->ids[o->instances], sizeof(o->ids[0]), "%s", in->id);
	snprintf(o->pids[o->instances], sizeof(o->pids[0]), "%s", in->provider_id);
	o->instances++;
}

static void on_done(void *ctx, int count, const struct provider_status *st)
{
	struct outcome *o = ctx;

	assert_int_equal(o->done, 0); /* exactly once */
	o->done++;
	o->count = count;
	o->st = *st;
}

static void test_launch_list_terminate(void **state)
{
	struct rig *r = rig_new();
	struct outcome o;
	struct provider_group *g;
	struct provider_status st;
	char group[64], id[128];
	size_t n;
	const char *ids[1];

	(void)state;
	memset(&o, 0, sizeof(o));
	r->prov->ops->launch(r->prov, "workers", 2, on_instance, on_done, &o);
	assert_int_equal(o.done, 1); /* the call blocks until the cloud answered */
	assert_int_equal(o.st.code, PROVIDER_OK);
	assert_int_equal(o.count, 2);
	assert_int_equal(o.instances, 2);
	assert_int_equal(r->prov->ops->map_node(r->prov, o.pids[0], group, sizeof(group), id, sizeof(id)), 0);
	assert_string_equal(group, "workers");
	assert_string_equal(id, o.ids[0]);
	assert_int_equal(r->prov->ops->map_node(r->prov, "aws:///x/i-1", group, sizeof(group), id, sizeof(id)), -1);

	assert_int_equal(r->prov->ops->list_groups(r->prov, &g, &n, &st), 0);
	assert_int_equal(n, 1);
	assert_string_equal(g[0].name, "workers");
	assert_int_equal(g[0].max, 5);
	assert_int_equal(g[0].n_instances, 3);
	provider_groups_free(g, n);

	/* above the group's max: the cloud refuses, typed */
	memset(&o, 0, sizeof(o));
	r->prov->ops->launch(r->prov, "workers", 10, on_instance, on_done, &o);
	assert_int_equal(o.done, 1);
	assert_int_equal(o.instances, 0);
	assert_int_not_equal(o.st.code, PROVIDER_OK);

	memset(&o, 0, sizeof(o));
	ids[0] = id;
	r->prov->ops->terminate(r->prov, "workers", ids, 1, on_done, &o);
	assert_int_equal(o.done, 1);
	assert_int_equal(o.st.code, PROVIDER_OK);
	assert_int_equal(o.count, 1);

	/* an unknown group */
	memset(&o, 0, sizeof(o));
	r->prov->ops->launch(r->prov, "nope", 1, on_instance, on_done, &o);
	assert_int_equal(o.done, 1);
	assert_int_not_equal(o.st.code, PROVIDER_OK);
	rig_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_launch_list_terminate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
