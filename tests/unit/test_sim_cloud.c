/*
 * Tests for sim/clouds/cloud.c in virtual time: boot delay and seeded jitter,
 * instances appearing one by one over a launch call before it ends,
 * injected faults (launch errors with their provider_error, throttling,
 * stuck and slow boots, slow calls), the group's max, terminate, billing,
 * and a cloud freed while its events are still queued.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/clock.h"
#include "runtime/executor.h"
#include "providers/provider.h"
#include "sim/clouds/cloud.h"

#define S CLOCK_NS_PER_S
#define MS CLOCK_NS_PER_MS

static struct kv workers_sel[] = {{"luascale.io/node-group", "workers"}};
static struct kv gpu_sel[] = {{"luascale.io/node-group", "gpu"}};

static const struct node_group groups[] = {
	{.name = "workers", .min = 0, .max = 30, .price_per_hour = 0.2,
	 .selector = {workers_sel, 1},
	 .tmpl = {.allocatable = {.cpu_m = 4000, .memory = 16LL << 30, .pods = 110},
		  .labels = {workers_sel, 1}}},
	{.name = "gpu", .min = 0, .max = 2, .price_per_hour = 1.5,
	 .selector = {gpu_sel, 1},
	 .tmpl = {.allocatable = {.cpu_m = 8000, .memory = 32LL << 30, .pods = 110},
		  .labels = {gpu_sel, 1}}},
};

struct world {
	struct clock *clk;
	struct executor *ex;
	struct sim_cloud *cloud;
	/* what the callbacks saw */
	int created, done, done_count;
	enum provider_error done_code;
	char done_msg[PROVIDER_MESSAGE_MAX];
	int64_t created_at[64], done_at;
	char log[64][96];
	int n_log;
	int running, stopping, gone;
	int64_t running_at[64];
	bool stuck[64];
};

static void logf_(struct world *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void logf_(struct world *w, const char *fmt, ...)
{
	va_list ap;

	assert_true(w->n_log < 64);
	va_start(ap, fmt);
	vsnprintf(w->log[w->n_log++], sizeof(w->log[0]), fmt, ap);
	va_end(ap);
}

static void observer(void *ud, struct sim_instance *in, enum sim_instance_event ev)
{
	struct world *w = ud;

	switch (ev) {
	case SIM_INSTANCE_RUNNING:
		assert_true(w->running < 64);
		w->stuck[w->running] = in->stuck;
		w->running_at[w->running++] = clock_now(w->clk);
		break;
	case SIM_INSTANCE_STOPPING:
		w->stopping++;
		break;
	case SIM_INSTANCE_GONE:
		w->gone++;
		break;
	case SIM_INSTANCE_INTERRUPTED:
		break;
	}
}

static void on_instance(void *ctx, const struct sim_instance *in)
{
	struct world *w = ctx;

	assert_true(w->created < 64);
	w->created_at[w->created++] = clock_now(w->clk);
	assert_int_equal(in->state, INSTANCE_PENDING);
	logf_(w, "instance %s", in->id);
}

static void on_done(void *ctx, int count, const struct provider_status *st)
{
	struct world *w = ctx;

	w->done++;
	w->done_count = count;
	w->done_code = st->code;
	snprintf(w->done_msg, sizeof(w->done_msg), "%s", st->message);
	w->done_at = clock_now(w->clk);
	logf_(w, "done %d %s", count, provider_error_str(st->code));
}

static struct world *world_new(const struct sim_cloud_opts *o)
{
	struct world *w = calloc(1, sizeof(*w));
	struct errbuf err;

	assert_non_null(w);
	w->clk = vclock_new(1700000000);
	w->ex = executor_new_virtual(w->clk);
	w->cloud = sim_cloud_new(w->ex, groups, 2, o, &err);
	assert_non_null(w->cloud);
	sim_cloud_set_observer(w->cloud, observer, w);
	return w;
}

static void world_free(struct world *w)
{
	executor_shutdown(w->ex, clock_now(w->clk));
	sim_cloud_free(w->cloud);
	vclock_free(w->clk);
	free(w);
}

static void reset_calls(struct world *w)
{
	w->created = w->done = w->done_count = 0;
	w->done_code = PROVIDER_OK;
	w->done_msg[0] = '\0';
	w->n_log = 0;
}

static void opts(struct sim_cloud_opts *o, int64_t boot_s, int64_t jitter_s, int64_t latency_s)
{
	sim_cloud_opts_default(o);
	o->boot_delay_ns = boot_s * S;
	o->boot_jitter_ns = jitter_s * S;
	o->launch_latency_ns = latency_s * S;
}

static void test_boot_delay(void **state)
{
	struct sim_cloud_opts o;
	struct world *w;

	(void)state;
	opts(&o, 60, 0, 0);
	w = world_new(&o);
	assert_int_equal(sim_cloud_launch(w->cloud, "workers", 2, on_instance, on_done, w), 0);
	assert_int_equal(w->created, 0); /* never on the caller's stack */
	executor_run_until(w->ex, 0);
	assert_int_equal(w->created, 2);
	assert_int_equal(w->done, 1);
	assert_int_equal(w->done_count, 2);
	assert_int_equal(w->done_code, PROVIDER_OK);
	assert_int_equal(sim_cloud_target(w->cloud, 0), 2);
	executor_run_until(w->ex, 60 * S - 1);
	assert_int_equal(w->running, 0);
	executor_run_until(w->ex, 60 * S);
	assert_int_equal(w->running, 2);
	assert_int_equal(w->running_at[0], 60 * S);
	world_free(w);
}

/* Boot times of 20 instances launched at once, with jitter. */
static void boot_times(uint64_t seed, int64_t *out)
{
	struct sim_cloud_opts o;
	struct world *w;
	int i;

	opts(&o, 60, 20, 0);
	o.seed = seed;
	w = world_new(&o);
	assert_int_equal(sim_cloud_launch(w->cloud, "workers", 20, on_instance, on_done, w), 0);
	executor_run_all(w->ex);
	assert_int_equal(w->running, 20);
	for (i = 0; i < 20; i++)
		out[i] = w->running_at[i];
	world_free(w);
}

static void test_boot_jitter_seeded(void **state)
{
	int64_t a[20], b[20], c[20];
	bool varied = false;
	int i;

	(void)state;
	boot_times(7, a);
	boot_times(7, b);
	boot_times(8, c);
	for (i = 0; i < 20; i++) {
		assert_true(a[i] >= 60 * S && a[i] < 80 * S);
		if (a[i] != a[0])
			varied = true;
	}
	assert_true(varied);
	assert_memory_equal(a, b, sizeof(a));
	assert_memory_not_equal(a, c, sizeof(a));
}

static void test_instances_appear_during_call(void **state)
{
	struct sim_cloud_opts o;
	struct world *w;

	(void)state;
	opts(&o, 60, 0, 4);
	w = world_new(&o);
	assert_int_equal(sim_cloud_launch(w->cloud, "workers", 4, on_instance, on_done, w), 0);
	executor_run_until(w->ex, 2 * S);
	assert_int_equal(w->created, 2);
	assert_int_equal(w->done, 0);
	executor_run_all(w->ex);
	assert_int_equal(w->created, 4);
	assert_int_equal(w->created_at[0], 1 * S);
	assert_int_equal(w->created_at[3], 4 * S);
	assert_int_equal(w->done_at, 4 * S);
	/* every per-instance callback before the end of the call */
	assert_string_equal(w->log[0], "instance workers-1");
	assert_string_equal(w->log[3], "instance workers-4");
	assert_string_equal(w->log[4], "done 4 ok");
	world_free(w);
}

static void test_launch_error_window(void **state)
{
	struct sim_cloud_opts o;
	struct sim_fault f = {0};
	struct world *w;
	struct errbuf err;

	(void)state;
	opts(&o, 60, 0, 1);
	w = world_new(&o);
	f.kind = SIM_FAULT_LAUNCH_ERROR;
	f.group = "workers";
	f.from_ns = 10 * S;
	f.until_ns = 20 * S;
	f.error = PROVIDER_QUOTA;
	assert_int_equal(sim_cloud_add_fault(w->cloud, &f, &err), 0);

	assert_int_equal(sim_cloud_launch(w->cloud, "workers", 2, on_instance, on_done, w), 0);
	executor_run_until(w->ex, 5 * S);
	assert_int_equal(w->done_count, 2);
	assert_int_equal(w->done_code, PROVIDER_OK);

	reset_calls(w);
	executor_run_until(w->ex, 15 * S);
	assert_int_equal(sim_cloud_launch(w->cloud, "workers", 3, on_instance, on_done, w), 0);
	executor_run_until(w->ex, 17 * S);
	assert_int_equal(w->done, 1);
	assert_int_equal(w->created, 0);
	assert_int_equal(w->done_count, 0);
	assert_int_equal(w->done_code, PROVIDER_QUOTA);
	assert_non_null(strstr(w->done_msg, "3 of 3"));
	assert_true(provider_error_backs_off_group(w->done_code));

	/* another group is not affected */
	reset_calls(w);
	assert_int_equal(sim_cloud_launch(w->cloud, "gpu", 1, on_instance, on_done, w), 0);
	executor_run_until(w->ex, 19 * S);
	assert_int_equal(w->done_code, PROVIDER_OK);
	assert_int_equal(w->done_count, 1);

	reset_calls(w);
	executor_run_until(w->ex, 20 * S);
	assert_int_equal(sim_cloud_launch(w->cloud, "workers", 1, on_instance, on_done, w), 0);
	executor_run_until(w->ex, 22 * S);
	assert_int_equal(w->done_code, PROVIDER_OK);
	assert_int_equal(w->done_count, 1);
	world_free(w);
}

static void test_launch_error_partial_and_count(void **state)
{
	struct sim_cloud_opts o;
	struct sim_fault f = {0};
	struct world *w;
	struct errbuf err;
	struct sim_group_stats gs;

	(void)state;
	opts(&o, 60, 0, 2);
	w = world_new(&o);
	f.kind = SIM_FAULT_LAUNCH_ERROR;
	f.rate = 0.5; /* every group */
	assert_int_equal(sim_cloud_add_fault(w->cloud, &f, &err), 0);
	assert_int_equal(sim_cloud_launch(w->cloud, "workers", 20, on_instance, on_done, w), 0);
	executor_run_until(w->ex, 2 * S);
	assert_int_equal(w->done, 1);
	assert_true(w->done_count > 0 && w->done_count < 20);
	assert_int_equal(w->created, w->done_count);
	assert_int_equal(w->done_code, PROVIDER_NO_CAPACITY); /* the default error */
	assert_non_null(strstr(w->done_msg, "InsufficientInstanceCapacity"));
	sim_cloud_group_stats(w->cloud, 0, &gs);
	assert_int_equal(gs.launched, (uint64_t)w->done_count);
	assert_int_equal(gs.launch_failed, (uint64_t)(20 - w->done_count));
	world_free(w);

	/* explicit: the next two instances fail, then launches work again */
	w = world_new(&o);
	memset(&f, 0, sizeof(f));
	f.kind = SIM_FAULT_LAUNCH_ERROR;
	f.group = "workers";
	f.count = 2;
	f.error = PROVIDER_THROTTLED;
	assert_int_equal(sim_cloud_add_fault(w->cloud, &f, &err), 0);
	assert_int_equal(sim_cloud_launch(w->cloud, "workers", 3, on_instance, on_done, w), 0);
	executor_run_until(w->ex, 2 * S);
	assert_int_equal(w->done_count, 1);
	assert_int_equal(w->done_code, PROVIDER_THROTTLED);
	reset_calls(w);
	assert_int_equal(sim_cloud_launch(w->cloud, "workers", 3, on_instance, on_done, w), 0);
	executor_run_until(w->ex, 4 * S);
	assert_int_equal(w->done_count, 3);
	assert_int_equal(w->done_code, PROVIDER_OK);
	world_free(w);
}

static void test_throttling(void **state)
{
	struct sim_cloud_opts o;
	struct sim_fault f = {0};
	struct provider_status st;
	struct world *w;
	struct errbuf err;

	(void)state;
	opts(&o, 60, 0, 0);
	o.api_qps = 1;
	o.api_burst = 2;
	w = world_new(&o);
	assert_int_equal(sim_cloud_launch(w->cloud, "workers", 1, NULL, on_done, w), 0);
	assert_int_equal(sim_cloud_launch(w->cloud, "workers", 1, NULL, on_done, w), 0);
	assert_int_equal(sim_cloud_launch(w->cloud, "workers", 1, NULL, on_done, w), 0);
	executor_run_until(w->ex, 0);
	assert_int_equal(w->done, 3);
	assert_int_equal(w->done_code, PROVIDER_THROTTLED); /* the third, last done */
	assert_int_equal(sim_cloud_target(w->cloud, 0), 2);
	assert_int_equal(sim_cloud_read_call(w->cloud, NULL, &st), -1);
	assert_int_equal(st.code, PROVIDER_THROTTLED);
	executor_run_until(w->ex, 1 * S);
	assert_int_equal(sim_cloud_read_call(w->cloud, NULL, &st), 0);
	world_free(w);

	/* a throttle fault refuses calls whatever the API limit */
	opts(&o, 60, 0, 0);
	w = world_new(&o);
	f.kind = SIM_FAULT_THROTTLE;
	f.group = "gpu";
	f.until_ns = 30 * S;
	assert_int_equal(sim_cloud_add_fault(w->cloud, &f, &err), 0);
	assert_int_equal(sim_cloud_launch(w->cloud, "gpu", 1, on_instance, on_done, w), 0);
	executor_run_until(w->ex, 1 * S);
	assert_int_equal(w->done_code, PROVIDER_THROTTLED);
	assert_int_equal(w->created, 0);
	assert_false(provider_error_backs_off_group(w->done_code));
	reset_calls(w);
	assert_int_equal(sim_cloud_launch(w->cloud, "workers", 1, on_instance, on_done, w), 0);
	executor_run_until(w->ex, 2 * S);
	assert_int_equal(w->done_code, PROVIDER_OK);
	world_free(w);
}

static void test_max_and_unknown_group(void **state)
{
	struct sim_cloud_opts o;
	struct world *w;

	(void)state;
	opts(&o, 60, 0, 5);
	w = world_new(&o);
	/* two in flight (not created yet) count against max 2 */
	assert_int_equal(sim_cloud_launch(w->cloud, "gpu", 2, on_instance, on_done, w), 0);
	executor_run_until(w->ex, 1 * S);
	assert_int_equal(sim_cloud_launch(w->cloud, "gpu", 1, on_instance, on_done, w), 0);
	executor_run_until(w->ex, 1 * S);
	assert_int_equal(w->done, 1);
	assert_int_equal(w->done_code, PROVIDER_INVALID);
	assert_non_null(strstr(w->done_msg, "above its max 2"));
	executor_run_all(w->ex);
	assert_int_equal(w->done_count, 2);

	reset_calls(w);
	assert_int_equal(sim_cloud_launch(w->cloud, "nope", 1, on_instance, on_done, w), 0);
	executor_run_all(w->ex);
	assert_int_equal(w->done_code, PROVIDER_NOT_FOUND);
	reset_calls(w);
	assert_int_equal(sim_cloud_launch(w->cloud, "workers", 0, on_instance, on_done, w), 0);
	executor_run_all(w->ex);
	assert_int_equal(w->done_code, PROVIDER_INVALID);
	world_free(w);
}

static void test_stuck_slow_boot_slow_call(void **state)
{
	struct sim_cloud_opts o;
	struct sim_fault f = {0};
	struct sim_group_stats gs;
	struct world *w;
	struct errbuf err;

	(void)state;
	opts(&o, 60, 0, 1);
	w = world_new(&o);
	f.kind = SIM_FAULT_STUCK_BOOT;
	f.count = 1;
	assert_int_equal(sim_cloud_add_fault(w->cloud, &f, &err), 0);
	memset(&f, 0, sizeof(f));
	f.kind = SIM_FAULT_SLOW_BOOT;
	f.group = "workers";
	f.delay_ns = 100 * S;
	f.from_ns = 10 * S;
	assert_int_equal(sim_cloud_add_fault(w->cloud, &f, &err), 0);
	memset(&f, 0, sizeof(f));
	f.kind = SIM_FAULT_SLOW_CALL;
	f.group = "gpu";
	f.delay_ns = 30 * S;
	assert_int_equal(sim_cloud_add_fault(w->cloud, &f, &err), 0);

	assert_int_equal(sim_cloud_launch(w->cloud, "workers", 2, on_instance, on_done, w), 0);
	executor_run_until(w->ex, 61 * S);
	assert_int_equal(w->running, 2);
	assert_true(w->stuck[0]);  /* runs, but will never be a node */
	assert_false(w->stuck[1]);
	sim_cloud_group_stats(w->cloud, 0, &gs);
	assert_int_equal(gs.stuck, 1);

	reset_calls(w);
	assert_int_equal(sim_cloud_launch(w->cloud, "workers", 1, on_instance, on_done, w), 0);
	executor_run_until(w->ex, 62 * S + 160 * S - 1);
	assert_int_equal(w->running, 2);
	executor_run_until(w->ex, 62 * S + 160 * S);
	assert_int_equal(w->running, 3);

	reset_calls(w);
	assert_int_equal(sim_cloud_launch(w->cloud, "gpu", 1, on_instance, on_done, w), 0);
	executor_run_until(w->ex, 222 * S + 29 * S);
	assert_int_equal(w->done, 0);
	executor_run_until(w->ex, 222 * S + 30 * S);
	assert_int_equal(w->done, 1);
	assert_int_equal(w->created, 1);
	world_free(w);
}

static void test_terminate_and_billing(void **state)
{
	struct sim_cloud_opts o;
	struct sim_group_stats gs;
	struct world *w;
	const char *ids[] = {"workers-1", "workers-9", "gpu-1"};
	struct sim_instance *in;

	(void)state;
	opts(&o, 10, 0, 0);
	o.terminate_latency_ns = 2 * S;
	o.shutdown_delay_ns = 20 * S;
	w = world_new(&o);
	assert_int_equal(sim_cloud_launch(w->cloud, "workers", 2, NULL, NULL, NULL), 0);
	executor_run_until(w->ex, 100 * S);
	assert_int_equal(w->running, 2);
	assert_int_equal(sim_cloud_terminate(w->cloud, "workers", ids, 3, on_done, w), 0);
	executor_run_until(w->ex, 102 * S);
	assert_int_equal(w->done, 1);
	assert_int_equal(w->done_count, 1);
	assert_int_equal(w->done_code, PROVIDER_NOT_FOUND);
	assert_int_equal(w->stopping, 1);
	assert_int_equal(sim_cloud_target(w->cloud, 0), 1);
	in = sim_cloud_find_instance(w->cloud, "workers-1");
	assert_non_null(in);
	assert_int_equal(in->state, INSTANCE_STOPPING);
	assert_string_equal(in->provider_id, "sim://workers/workers-1");

	/* terminating again is fine */
	reset_calls(w);
	assert_int_equal(sim_cloud_terminate(w->cloud, "workers", ids, 1, on_done, w), 0);
	executor_run_until(w->ex, 121 * S);
	assert_int_equal(w->done_count, 1);
	assert_int_equal(w->done_code, PROVIDER_OK);
	assert_int_equal(w->gone, 0);
	executor_run_until(w->ex, 122 * S);
	assert_int_equal(w->gone, 1);
	assert_int_equal(in->state, INSTANCE_GONE);

	sim_cloud_group_stats(w->cloud, 0, &gs);
	assert_int_equal(gs.live, 1);
	assert_int_equal(gs.peak, 2);
	assert_int_equal(gs.terminated, 1);
	/* gone one: 0..122 s; live one: 0..122 s so far */
	assert_int_equal(gs.instance_ns, 2 * 122 * S);
	world_free(w);
}

static void test_add_running(void **state)
{
	struct sim_cloud_opts o;
	struct world *w;
	struct errbuf err;
	struct sim_instance *const *in;
	size_t n;

	(void)state;
	opts(&o, 60, 0, 0);
	w = world_new(&o);
	assert_int_equal(sim_cloud_add_running(w->cloud, "workers", 3, &err), 0);
	assert_int_equal(w->running, 3); /* at once, no event */
	in = sim_cloud_instances(w->cloud, 0, &n);
	assert_int_equal(n, 3);
	assert_true(in[0]->preexisting);
	assert_string_equal(in[2]->id, "workers-3");
	assert_int_equal(sim_cloud_add_running(w->cloud, "nope", 1, &err), -1);
	assert_non_null(strstr(err.msg, "nope"));
	world_free(w);
}

/* The cloud goes before its events: they end as no-ops, calls as CANCELLED. */
static void test_free_with_events_queued(void **state)
{
	struct sim_cloud_opts o;
	struct world *w;

	(void)state;
	opts(&o, 60, 0, 10);
	w = world_new(&o);
	assert_int_equal(sim_cloud_launch(w->cloud, "workers", 3, on_instance, on_done, w), 0);
	executor_run_until(w->ex, 5 * S);
	assert_int_equal(w->created, 1);
	sim_cloud_free(w->cloud);
	w->cloud = NULL;
	executor_run_all(w->ex);
	assert_int_equal(w->done, 1);
	assert_int_equal(w->done_code, PROVIDER_CANCELLED);
	assert_int_equal(w->done_count, 1);
	assert_int_equal(w->running, 0);
	world_free(w);

	/* and an executor shut down mid-call cancels it */
	w = world_new(&o);
	assert_int_equal(sim_cloud_launch(w->cloud, "workers", 3, on_instance, on_done, w), 0);
	executor_run_until(w->ex, 5 * S);
	executor_shutdown(w->ex, 5 * S);
	w->ex = executor_new_virtual(w->clk);
	assert_int_equal(w->done, 1);
	assert_int_equal(w->done_code, PROVIDER_CANCELLED);
	world_free(w);
}

static void test_bad_options(void **state)
{
	struct sim_cloud_opts o;
	struct clock *clk = vclock_new(0);
	struct executor *ex = executor_new_virtual(clk);
	struct node_group dup[2];
	struct errbuf err;
	struct sim_fault f = {0};
	struct sim_cloud *c;

	(void)state;
	opts(&o, -1, 0, 0);
	assert_null(sim_cloud_new(ex, groups, 2, &o, &err));
	dup[0] = groups[0];
	dup[1] = groups[0];
	assert_null(sim_cloud_new(ex, dup, 2, NULL, &err));
	assert_non_null(strstr(err.msg, "duplicate"));
	c = sim_cloud_new(ex, groups, 2, NULL, &err);
	assert_non_null(c);
	f.group = "nope";
	assert_int_equal(sim_cloud_add_fault(c, &f, &err), -1);
	f.group = NULL;
	f.rate = 2;
	assert_int_equal(sim_cloud_add_fault(c, &f, &err), -1);
	sim_cloud_free(c);
	executor_shutdown(ex, 0);
	vclock_free(clk);
}

static void test_fault_names(void **state)
{
	enum sim_fault_kind k;

	(void)state;
	assert_int_equal(sim_fault_kind_parse("stuck_boot", &k), 0);
	assert_int_equal(k, SIM_FAULT_STUCK_BOOT);
	assert_string_equal(sim_fault_kind_str(SIM_FAULT_SLOW_CALL), "slow_call");
	assert_int_equal(sim_fault_kind_parse("stuck", &k), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_boot_delay),
		cmocka_unit_test(test_boot_jitter_seeded),
		cmocka_unit_test(test_instances_appear_during_call),
		cmocka_unit_test(test_launch_error_window),
		cmocka_unit_test(test_launch_error_partial_and_count),
		cmocka_unit_test(test_throttling),
		cmocka_unit_test(test_max_and_unknown_group),
		cmocka_unit_test(test_stuck_slow_boot_slow_call),
		cmocka_unit_test(test_terminate_and_billing),
		cmocka_unit_test(test_add_running),
		cmocka_unit_test(test_free_with_events_queued),
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_fault_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
