/*
 * The Azure provider against the simulator's Azure face, in one process on
 * loopback (a real-time world: the face's delays are real): overlapping
 * launches of one scale set while its capacity writes are slow (a
 * slow_resize fault) add up, never write a smaller capacity and never
 * claim a VM twice; a capacity PUT whose answer is lost (a lost_answer
 * fault) is not written twice when its retry meets the new etag; the VM
 * list carries each VM's timeCreated; a delete answered 429 with
 * Retry-After: 120 (a terminate_error fault) reports PROVIDER_THROTTLED
 * with retry_after_s 120, and works once the window and the fault are over
 * (the provider on a virtual clock that its waits move). Waits are joins,
 * never sleeps.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "log.h"
#include "providers/azure/azure.h"
#include "providers/provider.h"
#include "runtime/clock.h"
#include "runtime/executor.h"
#include "sim/clouds/azure_face.h"
#include "sim/clouds/cloud.h"
#include "sim/clouds/cloud_azure.h"
#include "sim/world/scenario.h"
#include "test_azure_clock.h"

#define SUB "0a1b2c3d-0000-4000-8000-00000000abcd"
#define RG "rg-test"
#define T0 1800000000LL

struct rig {
	struct sim_scenario *sc;
	struct executor *ex;
	struct sim_world *w;
	struct azure_face *face;
	struct config *cfg;
	struct provider *p;
	struct step_clock *clk;  /* the provider's, when virtual */
	char url[64], arm[80];
	struct logger flog, plog;
	pthread_mutex_t mu;
	int caps[64];           /* each capacity written to "workers", in order */
	int n_caps;
	int lost;
};

static const char *env_get(void *ud, const char *name)
{
	struct rig *r = ud;

	if (!strcmp(name, "ARM_SUBSCRIPTION_ID"))
		return SUB;
	if (!strcmp(name, "ARM_RESOURCE_GROUP"))
		return RG;
	if (!strcmp(name, "LUASCALE_SIM_AZURE_ARM_ENDPOINT"))
		return r->arm;
	if (!strcmp(name, "AZURE_POD_IDENTITY_AUTHORITY_HOST"))
		return r->url;
	return NULL;
}

static void face_write(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct rig *r = ctx;
	int v;

	(void)level;
	(void)wall;
	pthread_mutex_lock(&r->mu);
	if (sscanf(msg, "sim azure: scale set workers-vmss capacity -> %d", &v) == 1 && r->n_caps < 64)
		r->caps[r->n_caps++] = v;
	if (strstr(msg, "answer lost (fault)"))
		r->lost++;
	pthread_mutex_unlock(&r->mu);
	if (getenv("AZURE_TEST_LOG"))
		fprintf(stderr, "face: %s\n", msg);
}

static void prov_write(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	(void)ctx;
	(void)level;
	(void)wall;
	if (getenv("AZURE_TEST_LOG"))
		fprintf(stderr, "provider: %s\n", msg);
}

static struct rig *rig_new(const char *faults, bool virtual_clock)
{
	struct rig *r = calloc(1, sizeof(*r));
	struct azure_face_opts fo;
	struct azure_provider_opts po;
	struct config_opts co = {.flags = CONFIG_OFFLINE};
	struct errbuf err;
	char text[4096];

	assert_non_null(r);
	pthread_mutex_init(&r->mu, NULL);
	snprintf(text, sizeof(text),
		 "seed: 5\nstart: \"2026-12-01T08:00:00Z\"\nduration: 1h\n"
		 "node_groups:\n"
		 "  - {name: workers, min: 0, max: 10, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}\n"
		 "cloud: {launch_latency: 50ms, boot_delay: 0s, boot_jitter: 0s, terminate_latency: 10ms, shutdown_delay: 10ms}\n"
		 "initial_nodes: [{group: workers, count: 1}]\n"
		 "%s"
		 "azure:\n  subscription_id: " SUB "\n  resource_group: " RG "\n  operation_time: 100ms\n"
		 "  retry_after: 1s\n"
		 "  groups:\n    workers: {vmss: workers-vmss, vm_size: Standard_D4s_v3}\n",
		 faults ? faults : "");
	r->sc = sim_scenario_parse(text, strlen(text), "t.yaml", &err);
	if (!r->sc)
		fail_msg("scenario: %s", err.msg);
	r->ex = executor_new_pool(4, 1024);
	assert_non_null(r->ex);
	r->w = sim_world_new(r->sc, r->ex, &err);
	if (!r->w)
		fail_msg("world: %s", err.msg);
	r->flog = (struct logger){face_write, r, LOG_DEBUG, NULL};
	r->plog = (struct logger){prov_write, r, LOG_DEBUG, NULL};
	memset(&fo, 0, sizeof(fo));
	fo.tls_port = -1;
	fo.log = &r->flog;
	r->face = azure_face_new(sim_world_flavour(r->w, &sim_cloud_azure), &fo, &err);
	if (!r->face)
		fail_msg("face: %s", err.msg);
	snprintf(r->url, sizeof(r->url), "http://127.0.0.1:%d", azure_face_port(r->face));
	snprintf(r->arm, sizeof(r->arm), "%s/", r->url);
	snprintf(text, sizeof(text),
		 "node_groups:\n  - {name: workers, min: 0, max: 10, azure: {vmss: workers-vmss}}\n"
		 "provider:\n  kind: azure\n  qps: 100\n  burst: 100\n  read_qps: 100\n  read_burst: 100\n");
	r->cfg = config_parse_opts(text, strlen(text), "azure.yaml", &co, &err);
	if (!r->cfg)
		fail_msg("config: %s", err.msg);
	memset(&po, 0, sizeof(po));
	if (virtual_clock) {
		r->clk = sc_new(T0);
		po.clock = &r->clk->base;
	}
	po.config = r->cfg;
	po.log = &r->plog;
	po.env.get = env_get;
	po.env.ud = r;
	po.poll_ms = 50;
	po.launch_wait_ms = 60000;
	po.max_attempts = 3;
	r->p = azure_provider_new(&po, &err);
	if (!r->p)
		fail_msg("provider: %s", err.msg);
	return r;
}

static void rig_free(struct rig *r)
{
	provider_free(r->p);
	config_free(r->cfg);
	azure_face_free(r->face);
	executor_shutdown(r->ex, clock_now(clock_real()) + 2 * CLOCK_NS_PER_S);
	sim_world_free(r->w);
	sim_scenario_free(r->sc);
	sc_free(r->clk);
	pthread_mutex_destroy(&r->mu);
	free(r);
}

struct launch {
	struct rig *r;
	int count;
	pthread_barrier_t *go;
	pthread_mutex_t mu;
	struct provider_instance seen[16];
	int n_seen, made, n_done;
	struct provider_status st;
};

static void on_instance(void *ctx, const struct provider_instance *pi)
{
	struct launch *l = ctx;

	pthread_mutex_lock(&l->mu);
	if (pi->state != INSTANCE_GONE && l->n_seen < 16)
		l->seen[l->n_seen++] = *pi;
	pthread_mutex_unlock(&l->mu);
}

static void on_done(void *ctx, int count, const struct provider_status *st)
{
	struct launch *l = ctx;

	pthread_mutex_lock(&l->mu);
	l->made = count;
	l->st = *st;
	l->n_done++;
	pthread_mutex_unlock(&l->mu);
}

static void *launch_thread(void *arg)
{
	struct launch *l = arg;

	if (l->go)
		pthread_barrier_wait(l->go);
	l->r->p->ops->launch(l->r->p, "workers", l->count, on_instance, on_done, l);
	return NULL;
}

static void launch_init(struct launch *l, struct rig *r, int count, pthread_barrier_t *go)
{
	memset(l, 0, sizeof(*l));
	l->r = r;
	l->count = count;
	l->go = go;
	pthread_mutex_init(&l->mu, NULL);
}

static void list(struct rig *r, struct provider_group **gs, size_t *n)
{
	struct provider_status st;

	if (r->p->ops->list_groups(r->p, gs, n, &st) < 0)
		fail_msg("list_groups: %s", st.message);
	assert_int_equal(*n, 1);
}

static int capacity(struct rig *r)
{
	int c;

	sim_cloud_lock(r->w->cloud);
	c = sim_azure_capacity(sim_world_flavour(r->w, &sim_cloud_azure), 0);
	sim_cloud_unlock(r->w->cloud);
	return c;
}

/* Capacity writes land 2 s late: two launches at once (2 and 1) end at
 * 1 + 2 + 1, each written capacity is above the one before, no VM twice;
 * the list carries each VM's timeCreated. */
static void test_overlapping_launches_add_up(void **state)
{
	struct rig *r = rig_new("faults: [{kind: slow_resize, group: workers, delay: 2s}]\n", false);
	struct provider_group *gs = NULL;
	pthread_barrier_t go;
	pthread_t th[2];
	struct launch l[2];
	size_t n = 0, k;
	int i, j, a, b;

	(void)state;
	list(r, &gs, &n);
	provider_groups_free(gs, n);
	pthread_barrier_init(&go, NULL, 2);
	launch_init(&l[0], r, 2, &go);
	launch_init(&l[1], r, 1, &go);
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, launch_thread, &l[i]), 0);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&go);
	for (i = 0; i < 2; i++) {
		assert_int_equal(l[i].n_done, 1);
		if (l[i].st.code != PROVIDER_OK)
			fail_msg("launch %d: %s", i, l[i].st.message);
		assert_int_equal(l[i].made, l[i].count);
		assert_int_equal(l[i].n_seen, l[i].count);
	}
	assert_int_equal(capacity(r), 4);
	assert_int_equal(r->n_caps, 2);
	assert_true(r->caps[1] > r->caps[0]);
	for (i = 0; i < 2; i++)
		for (j = 0; j < l[i].n_seen; j++)
			for (a = 0; a < 2; a++)
				for (b = 0; b < l[a].n_seen; b++)
					if ((a != i || b != j) && !strcmp(l[a].seen[b].id, l[i].seen[j].id))
						fail_msg("VM %s reported twice", l[i].seen[j].id);
	list(r, &gs, &n);
	assert_int_equal(gs[0].n_instances, 4);
	for (k = 0; k < gs[0].n_instances; k++) {
		const struct sim_azure_vm *vm;
		size_t m, q;
		int64_t want = -1;

		sim_cloud_lock(r->w->cloud);
		vm = sim_azure_vms(sim_world_flavour(r->w, &sim_cloud_azure), 0, &m);
		for (q = 0; q < m; q++)
			if (vm[q].instance_id == atoi(gs[0].instances[k].id) && vm[q].in)
				want = vm[q].in->created_wall;
		sim_cloud_unlock(r->w->cloud);
		assert_int_equal(gs[0].instances[k].launched_wall, want);
	}
	provider_groups_free(gs, n);
	for (i = 0; i < 2; i++)
		pthread_mutex_destroy(&l[i].mu);
	rig_free(r);
}

/* The capacity PUT takes effect and its answer is lost: the retry meets
 * the new etag (412), and the provider sees its own write there instead
 * of raising the capacity again. */
static void test_lost_put_answer(void **state)
{
	struct rig *r = rig_new("faults: [{kind: lost_answer, group: workers, count: 1}]\n", false);
	struct provider_group *gs = NULL;
	struct launch l;
	size_t n = 0;

	(void)state;
	list(r, &gs, &n);
	provider_groups_free(gs, n);
	launch_init(&l, r, 2, NULL);
	launch_thread(&l);
	if (l.st.code != PROVIDER_OK)
		fail_msg("launch: %s", l.st.message);
	assert_int_equal(r->lost, 1);
	assert_int_equal(l.made, 2);
	assert_int_equal(capacity(r), 3);
	pthread_mutex_destroy(&l.mu);
	rig_free(r);
}

struct term {
	int count, n_done;
	struct provider_status st;
};

static void on_term(void *ctx, int count, const struct provider_status *st)
{
	struct term *t = ctx;

	t->count = count;
	t->st = *st;
	t->n_done++;
}

/* A delete answered 429 Retry-After: 120 is THROTTLED with retry_after_s
 * 120; after the window (and the fault) the delete goes through. */
static void test_delete_throttled_then_works(void **state)
{
	struct rig *r = rig_new("faults: [{kind: terminate_error, group: workers, count: 1, error: throttled, delay: 120s}]\n",
				true);
	struct provider_group *gs = NULL;
	struct term t;
	const char *ids[1];
	char id[128];
	size_t n = 0;

	(void)state;
	list(r, &gs, &n);
	snprintf(id, sizeof(id), "%s", gs[0].instances[0].id);
	provider_groups_free(gs, n);
	ids[0] = id;
	memset(&t, 0, sizeof(t));
	r->p->ops->terminate(r->p, "workers", ids, 1, on_term, &t);
	assert_int_equal(t.n_done, 1);
	assert_int_equal(t.count, 0);
	assert_int_equal(t.st.code, PROVIDER_THROTTLED);
	assert_int_equal(t.st.retry_after_s, 120);
	/* within the window, nothing is sent and the wait left is said */
	memset(&t, 0, sizeof(t));
	r->p->ops->terminate(r->p, "workers", ids, 1, on_term, &t);
	assert_int_equal(t.st.code, PROVIDER_THROTTLED);
	assert_true(t.st.retry_after_s > 0 && t.st.retry_after_s <= 120);
	vclock_set(r->clk->v, clock_now(r->clk->v) + 121 * CLOCK_NS_PER_S);
	memset(&t, 0, sizeof(t));
	r->p->ops->terminate(r->p, "workers", ids, 1, on_term, &t);
	if (t.st.code != PROVIDER_OK)
		fail_msg("terminate: %s", t.st.message);
	assert_int_equal(t.count, 1);
	rig_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_overlapping_launches_add_up),
		cmocka_unit_test(test_lost_put_answer),
		cmocka_unit_test(test_delete_throttled_then_works),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
