/*
 * Tests for providers/sim in virtual time: launches admitted by the
 * provider's token bucket (never more than qps*t + burst calls by time t),
 * per-instance callbacks before on_done, errors with their provider_error,
 * list_groups and its read bucket, map_node on providerIDs, terminate, and
 * a shutdown mid-launch that leaves no call unanswered.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "providers/sim/sim.h"
#include "runtime/clock.h"
#include "runtime/executor.h"
#include "sim/clouds/cloud.h"

#define S CLOCK_NS_PER_S
#define MS CLOCK_NS_PER_MS

static struct kv workers_sel[] = {{"luascale.io/node-group", "workers"}};

static const struct node_group groups[] = {
	{.name = "workers", .min = 0, .max = 1000, .price_per_hour = 0.2,
	 .selector = {workers_sel, 1},
	 .tmpl = {.allocatable = {.cpu_m = 4000, .memory = 16LL << 30, .pods = 110},
		  .labels = {workers_sel, 1}}},
};

struct world {
	struct clock *clk;
	struct executor *ex;
	struct sim_cloud *cloud;
	struct provider *p;
};

/* One launch's view of its callbacks. */
struct call {
	struct world *w;
	int instances, done, count;
	bool done_before_instance;
	enum provider_error code;
	int64_t done_at;
	struct provider_instance first;
};

static void on_instance(void *ctx, const struct provider_instance *in)
{
	struct call *c = ctx;

	if (c->done)
		c->done_before_instance = true;
	if (!c->instances)
		c->first = *in;
	c->instances++;
}

static void on_done(void *ctx, int count, const struct provider_status *st)
{
	struct call *c = ctx;

	c->done++;
	c->count = count;
	c->code = st->code;
	c->done_at = clock_now(c->w->clk);
}

static struct world *world_new(const struct sim_cloud_opts *co, const struct provider_limits *lim)
{
	struct world *w = calloc(1, sizeof(*w));
	struct errbuf err;

	assert_non_null(w);
	w->clk = vclock_new(1700000000);
	w->ex = executor_new_virtual(w->clk);
	w->cloud = sim_cloud_new(w->ex, groups, 1, co, &err);
	assert_non_null(w->cloud);
	w->p = sim_provider_new(w->cloud, lim, &err);
	assert_non_null(w->p);
	return w;
}

static void world_free(struct world *w)
{
	if (w->ex)
		executor_shutdown(w->ex, clock_now(w->clk));
	provider_free(w->p);
	sim_cloud_free(w->cloud);
	vclock_free(w->clk);
	free(w);
}

static void cloud_opts(struct sim_cloud_opts *o, int64_t latency_ns)
{
	sim_cloud_opts_default(o);
	o->launch_latency_ns = latency_ns;
	o->boot_jitter_ns = 0;
}

/* k launches of L seconds each, the provider at q QPS burst b: call i may
 * start at max(0, (i - b + 1) / q) and ends L later. */
static void test_rate_limited_launches(void **state)
{
	const int k = 50, b = 5;
	const double q = 2;
	const int64_t L = 2 * S;
	struct provider_limits lim = {q, b, 0, 0};
	struct sim_cloud_opts o;
	struct world *w;
	struct call calls[50];
	int i;

	(void)state;
	cloud_opts(&o, L);
	w = world_new(&o, &lim);
	memset(calls, 0, sizeof(calls));
	for (i = 0; i < k; i++) {
		calls[i].w = w;
		w->p->ops->launch(w->p, "workers", 1, on_instance, on_done, &calls[i]);
	}
	executor_run_all(w->ex);
	for (i = 0; i < k; i++) {
		int64_t start = i < b ? 0 : (int64_t)((i - b + 1) * (S / q));

		assert_int_equal(calls[i].done, 1);
		assert_int_equal(calls[i].code, PROVIDER_OK);
		assert_int_equal(calls[i].count, 1);
		assert_int_equal(calls[i].done_at, start + L);
	}
	/* total time against the ideal bound: equal here, nothing is lost */
	assert_int_equal(calls[k - 1].done_at, (int64_t)((k - b) * (S / q)) + L);
	assert_int_equal(ratelimit_granted(w->p->mutating), (uint64_t)k);
	/* in no window did more than qps*t + burst calls reach the cloud */
	for (i = 0; i < k; i++) {
		int j, n = 0;

		for (j = i; j < k; j++)
			if (calls[j].done_at - calls[i].done_at <= 3 * S)
				n++;
		assert_true(n <= (int)(q * 3) + b);
	}
	world_free(w);
}

static void test_callbacks_before_done(void **state)
{
	struct sim_cloud_opts o;
	struct world *w;
	struct call c = {0};
	char group[64], inst[128];

	(void)state;
	cloud_opts(&o, 3 * S);
	w = world_new(&o, NULL);
	c.w = w;
	w->p->ops->launch(w->p, "workers", 3, on_instance, on_done, &c);
	assert_int_equal(c.instances, 0);
	executor_run_until(w->ex, 1 * S);
	assert_int_equal(c.instances, 1); /* as soon as it exists */
	assert_int_equal(c.done, 0);
	executor_run_all(w->ex);
	assert_int_equal(c.instances, 3);
	assert_int_equal(c.done, 1);
	assert_int_equal(c.count, 3);
	assert_false(c.done_before_instance);
	assert_string_equal(c.first.id, "workers-1");
	assert_string_equal(c.first.group, "workers");
	assert_string_equal(c.first.provider_id, "sim://workers/workers-1");
	assert_int_equal(c.first.state, INSTANCE_PENDING);
	assert_int_equal(w->p->ops->map_node(w->p, c.first.provider_id, group, sizeof(group), inst,
					     sizeof(inst)), 0);
	assert_string_equal(group, "workers");
	assert_string_equal(inst, "workers-1");
	assert_string_equal(w->p->ops->kind, "sim");
	world_free(w);
}

static void test_errors(void **state)
{
	struct sim_cloud_opts o;
	struct sim_fault f = {0};
	struct world *w;
	struct call c = {0}, d = {0};
	struct errbuf err;

	(void)state;
	cloud_opts(&o, 1 * S);
	w = world_new(&o, NULL);
	f.kind = SIM_FAULT_LAUNCH_ERROR;
	f.error = PROVIDER_QUOTA;
	f.count = 2;
	assert_int_equal(sim_cloud_add_fault(w->cloud, &f, &err), 0);
	c.w = d.w = w;
	w->p->ops->launch(w->p, "workers", 3, on_instance, on_done, &c);
	w->p->ops->launch(w->p, "nope", 1, on_instance, on_done, &d);
	executor_run_all(w->ex);
	assert_int_equal(c.done, 1);
	assert_int_equal(c.code, PROVIDER_QUOTA);
	assert_int_equal(c.count, 1);
	assert_int_equal(c.instances, 1);
	assert_int_equal(d.done, 1);
	assert_int_equal(d.code, PROVIDER_NOT_FOUND);
	assert_int_equal(d.instances, 0);
	world_free(w);
}

static void test_list_groups_and_reads(void **state)
{
	struct provider_limits lim = {0, 0, 1, 1};
	struct sim_cloud_opts o;
	struct world *w;
	struct provider_group *g;
	struct provider_status st;
	size_t n;

	(void)state;
	cloud_opts(&o, 0);
	w = world_new(&o, &lim);
	w->p->ops->launch(w->p, "workers", 2, NULL, NULL, NULL);
	executor_run_until(w->ex, 10 * S);
	assert_int_equal(w->p->ops->list_groups(w->p, &g, &n, &st), 0);
	assert_int_equal(n, 1);
	assert_string_equal(g[0].name, "workers");
	assert_int_equal(g[0].max, 1000);
	assert_int_equal(g[0].target, 2);
	assert_int_equal(g[0].n_instances, 2);
	assert_string_equal(g[0].instances[1].id, "workers-2");
	assert_int_equal(g[0].instances[1].state, INSTANCE_PENDING);
	/* what a new instance offers, from the group's template */
	assert_true(g[0].tmpl.cpu_m > 0 && g[0].tmpl.memory > 0);
	assert_string_equal(g[0].tmpl.instance_type, "sim");
	provider_groups_free(g, n);
	/* the read bucket is empty now: in virtual time that is a throttle */
	assert_int_equal(w->p->ops->list_groups(w->p, &g, &n, &st), -1);
	assert_int_equal(st.code, PROVIDER_THROTTLED);
	executor_run_until(w->ex, 11 * S);
	assert_int_equal(w->p->ops->list_groups(w->p, &g, &n, &st), 0);
	provider_groups_free(g, n);
	world_free(w);
}

static void test_map_node(void **state)
{
	struct world *w = world_new(NULL, NULL);
	char group[64], inst[128], small[4];

	(void)state;
	assert_int_equal(w->p->ops->map_node(w->p, "sim://workers/workers-7", group, sizeof(group),
					     inst, sizeof(inst)), 0);
	assert_string_equal(inst, "workers-7");
	assert_int_equal(w->p->ops->map_node(w->p, "aws:///us-east-1a/i-0abc", group,
					     sizeof(group), inst, sizeof(inst)), -1);
	assert_int_equal(w->p->ops->map_node(w->p, "sim://other/x-1", group, sizeof(group), inst,
					     sizeof(inst)), -1);
	assert_int_equal(w->p->ops->map_node(w->p, "sim://workers/a/b", group, sizeof(group), inst,
					     sizeof(inst)), -1);
	assert_int_equal(w->p->ops->map_node(w->p, "sim://workers/", group, sizeof(group), inst,
					     sizeof(inst)), -1);
	assert_int_equal(w->p->ops->map_node(w->p, "sim://workers/workers-7", small, sizeof(small),
					     inst, sizeof(inst)), -1);
	assert_int_equal(w->p->ops->map_node(w->p, NULL, group, sizeof(group), inst, sizeof(inst)),
			 -1);
	world_free(w);
}

static void test_terminate(void **state)
{
	struct sim_cloud_opts o;
	struct world *w;
	struct call c = {0};
	const char *ids[] = {"workers-1", "workers-3"};

	(void)state;
	cloud_opts(&o, 0);
	w = world_new(&o, NULL);
	c.w = w;
	w->p->ops->launch(w->p, "workers", 2, NULL, NULL, NULL);
	executor_run_until(w->ex, 100 * S);
	w->p->ops->terminate(w->p, "workers", ids, 2, on_done, &c);
	executor_run_all(w->ex);
	assert_int_equal(c.done, 1);
	assert_int_equal(c.count, 1);
	assert_int_equal(c.code, PROVIDER_NOT_FOUND);
	assert_int_equal(sim_cloud_find_instance(w->cloud, "workers-1")->state, INSTANCE_GONE);
	assert_int_equal(sim_cloud_target(w->cloud, 0), 1);
	world_free(w);
}

/* Shut down with one call in the cloud and one waiting for its token:
 * both hear CANCELLED, once. */
static void test_shutdown_mid_launch(void **state)
{
	struct provider_limits lim = {0.1, 1, 0, 0};
	struct sim_cloud_opts o;
	struct world *w;
	struct call a = {0}, b = {0};

	(void)state;
	cloud_opts(&o, 10 * S);
	w = world_new(&o, &lim);
	a.w = b.w = w;
	w->p->ops->launch(w->p, "workers", 2, on_instance, on_done, &a);
	w->p->ops->launch(w->p, "workers", 2, on_instance, on_done, &b);
	executor_run_until(w->ex, 6 * S);
	assert_int_equal(a.instances, 1);
	executor_shutdown(w->ex, 6 * S);
	w->ex = NULL;
	assert_int_equal(a.done, 1);
	assert_int_equal(a.code, PROVIDER_CANCELLED);
	assert_int_equal(a.count, 1);
	assert_int_equal(b.done, 1);
	assert_int_equal(b.code, PROVIDER_CANCELLED);
	assert_int_equal(b.instances, 0);
	world_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate_limited_launches),
		cmocka_unit_test(test_callbacks_before_done),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_list_groups_and_reads),
		cmocka_unit_test(test_map_node),
		cmocka_unit_test(test_terminate),
		cmocka_unit_test(test_shutdown_mid_launch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
