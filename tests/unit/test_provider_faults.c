/*
 * The simulator's terminate_error fault through the plain sim provider, in
 * virtual time: a refused terminate reports the fault's error (AUTH by
 * default; THROTTLED with the fault's delay as retry_after_s) and nothing
 * is terminated, and once the fault is spent the terminate works; every
 * listed instance carries the simulator's launch time (launched_wall); the
 * shared turns and claims: a claim is the first claimer's only.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "providers/provider.h"
#include "providers/sim/sim.h"
#include "runtime/clock.h"
#include "runtime/executor.h"
#include "sim/clouds/cloud.h"

#define S CLOCK_NS_PER_S
#define WALL0 1700000000

static const struct node_group groups[] = {
	{.name = "workers", .min = 0, .max = 100,
	 .tmpl = {.allocatable = {.cpu_m = 4000, .memory = 16LL << 30, .pods = 110}}},
};

struct world {
	struct clock *clk;
	struct executor *ex;
	struct sim_cloud *cloud;
	struct provider *p;
};

static struct world *world_new(void)
{
	struct world *w = calloc(1, sizeof(*w));
	struct sim_cloud_opts o;
	struct errbuf err;

	assert_non_null(w);
	sim_cloud_opts_default(&o);
	o.boot_jitter_ns = 0;
	w->clk = vclock_new(WALL0);
	w->ex = executor_new_virtual(w->clk);
	w->cloud = sim_cloud_new(w->ex, groups, 1, &o, &err);
	assert_non_null(w->cloud);
	w->p = sim_provider_new(w->cloud, NULL, &err);
	assert_non_null(w->p);
	return w;
}

static void world_free(struct world *w)
{
	executor_shutdown(w->ex, clock_now(w->clk));
	provider_free(w->p);
	sim_cloud_free(w->cloud);
	vclock_free(w->clk);
	free(w);
}

struct done {
	int n, count;
	struct provider_status st;
};

static void on_done(void *ctx, int count, const struct provider_status *st)
{
	struct done *d = ctx;

	d->n++;
	d->count = count;
	d->st = *st;
}

static void terminate(struct world *w, const char *id, struct done *d)
{
	const char *ids[1] = {id};

	memset(d, 0, sizeof(*d));
	w->p->ops->terminate(w->p, "workers", ids, 1, on_done, d);
	executor_run_until(w->ex, clock_now(w->clk) + 5 * S);
	assert_int_equal(d->n, 1);
}

static void test_terminate_error_then_works(void **state)
{
	struct world *w = world_new();
	struct sim_fault f = {.kind = SIM_FAULT_TERMINATE_ERROR, .group = "workers", .count = 1};
	struct sim_fault t = {.kind = SIM_FAULT_TERMINATE_ERROR, .group = "workers", .count = 1,
			      .error = PROVIDER_THROTTLED, .delay_ns = 120 * S};
	struct provider_group *gs = NULL;
	struct provider_status st;
	struct errbuf err;
	struct done d;
	char id[128];
	size_t n = 0;

	(void)state;
	assert_int_equal(sim_cloud_add_fault(w->cloud, &f, &err), 0);
	executor_run_until(w->ex, 30 * S);
	assert_int_equal(sim_cloud_add_running(w->cloud, "workers", 2, &err), 0);
	assert_int_equal(w->p->ops->list_groups(w->p, &gs, &n, &st), 0);
	assert_int_equal(gs[0].n_instances, 2);
	assert_int_equal(gs[0].instances[0].launched_wall, WALL0 + 30); /* when the cloud made it */
	snprintf(id, sizeof(id), "%s", gs[0].instances[0].id);
	provider_groups_free(gs, n);

	terminate(w, id, &d);
	assert_int_equal(d.count, 0);
	assert_int_equal(d.st.code, PROVIDER_AUTH);
	assert_int_equal(d.st.retry_after_s, 0);
	assert_non_null(strstr(d.st.message, "terminate_error"));
	assert_int_equal(sim_cloud_target(w->cloud, 0), 2);

	assert_int_equal(sim_cloud_add_fault(w->cloud, &t, &err), 0);
	terminate(w, id, &d);
	assert_int_equal(d.count, 0);
	assert_int_equal(d.st.code, PROVIDER_THROTTLED);
	assert_int_equal(d.st.retry_after_s, 120);

	terminate(w, id, &d);
	assert_int_equal(d.st.code, PROVIDER_OK);
	assert_int_equal(d.count, 1);
	assert_int_equal(sim_cloud_target(w->cloud, 0), 1);
	world_free(w);
}

static void test_claims_and_turns(void **state)
{
	struct provider_turns *t = provider_turns_new();

	(void)state;
	assert_non_null(t);
	assert_true(provider_claim(t, "a", "i-1"));
	assert_false(provider_claim(t, "a", "i-1")); /* claimed: nobody else's */
	assert_true(provider_claim(t, "b", "i-1"));  /* another group's id */
	provider_turn_take(t, "a");
	provider_turn_give(t, "a");
	provider_turns_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_terminate_error_then_works),
		cmocka_unit_test(test_claims_and_turns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
