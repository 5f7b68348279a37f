/*
 * The GCE provider against the simulator's GCE face, in one process on
 * loopback (a real-time world: the face's delays are real): overlapping
 * launches of a MIG that takes no named instances while resize is slow (a
 * slow_resize fault) add up, never write a smaller targetSize and never
 * claim an instance twice; a createInstances whose answer is lost (a
 * lost_answer fault) is retried with the same requestId and is the same
 * operation (no alreadyExists, no fallback resize, nothing made twice);
 * list_groups carries each instance's creationTimestamp; a deleteInstances
 * refused with 403 (a terminate_error fault) reports PROVIDER_AUTH and
 * works once the fault is over. Waits are joins, never sleeps.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "log.h"
#include "providers/gce/gce.h"
#include "providers/provider.h"
#include "runtime/clock.h"
#include "runtime/executor.h"
#include "sim/clouds/cloud.h"
#include "sim/clouds/cloud_gce.h"
#include "sim/clouds/gce_face.h"
#include "sim/world/scenario.h"

#define PROJECT "test-project"
#define ZONE "us-central1-a"

struct rig {
	struct sim_scenario *sc;
	struct executor *ex;
	struct sim_world *w;
	struct gce_face *face;
	struct config *cfg;
	struct provider *p;
	char dir[64], key[96];
	struct logger flog, plog;
	pthread_mutex_t mu;
	int sizes[64];          /* each resize?size= of "bulk" that was answered 200, in order */
	int n_sizes;
	int creates_ok, creates_conflict, lost;
};

static const char *no_env(void *ud, const char *name)
{
	(void)ud;
	(void)name;
	return NULL;
}

/* The face logs "sim gce: METHOD URL -> CODE"; its resize sizes come from
 * the provider's log of the query it sent. */
static void face_write(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct rig *r = ctx;

	(void)level;
	(void)wall;
	pthread_mutex_lock(&r->mu);
	if (strstr(msg, "/createInstances -> 200"))
		r->creates_ok++;
	if (strstr(msg, "/createInstances -> 409"))
		r->creates_conflict++;
	if (strstr(msg, "answer lost (fault)"))
		r->lost++;
	pthread_mutex_unlock(&r->mu);
	if (getenv("GCE_TEST_LOG"))
		fprintf(stderr, "face: %s\n", msg);
}

static void prov_write(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct rig *r = ctx;
	int from, to;

	(void)level;
	(void)wall;
	pthread_mutex_lock(&r->mu);
	if (sscanf(msg, "gce: group bulk: MIG bulk resized %d -> %d", &from, &to) == 2 && r->n_sizes < 64)
		r->sizes[r->n_sizes++] = to;
	pthread_mutex_unlock(&r->mu);
	if (getenv("GCE_TEST_LOG"))
		fprintf(stderr, "provider: %s\n", msg);
}

static struct rig *rig_new(const char *faults)
{
	struct rig *r = calloc(1, sizeof(*r));
	struct gce_face_opts fo;
	struct gce_provider_opts po;
	struct config_opts co = {.flags = CONFIG_OFFLINE};
	struct errbuf err;
	char text[4096];

	assert_non_null(r);
	pthread_mutex_init(&r->mu, NULL);
	snprintf(text, sizeof(text),
		 "seed: 5\nstart: \"2026-12-01T08:00:00Z\"\nduration: 1h\n"
		 "node_groups:\n"
		 "  - {name: workers, min: 0, max: 10, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}\n"
		 "  - {name: bulk, min: 0, max: 10, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}\n"
		 "cloud: {launch_latency: 50ms, boot_delay: 0s, boot_jitter: 0s, terminate_latency: 10ms, shutdown_delay: 10ms}\n"
		 "initial_nodes: [{group: workers, count: 1}, {group: bulk, count: 1}]\n"
		 "%s"
		 "gce:\n  project: " PROJECT "\n  operation_time: 100ms\n  groups:\n"
		 "    workers: {zone: " ZONE ", machine_type: e2-standard-4}\n"
		 "    bulk: {zone: " ZONE ", machine_type: e2-standard-4, refuse_create: true}\n",
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
	fo.log = &r->flog;
	r->face = gce_face_new(sim_world_flavour(r->w, &sim_cloud_gce), &fo, &err);
	if (!r->face)
		fail_msg("face: %s", err.msg);
	snprintf(r->dir, sizeof(r->dir), "/tmp/test_gce_launch.XXXXXX");
	assert_non_null(mkdtemp(r->dir));
	snprintf(r->key, sizeof(r->key), "%s/key.json", r->dir);
	if (gce_face_write_key(r->face, r->key, &err) < 0)
		fail_msg("key: %s", err.msg);
	snprintf(text, sizeof(text),
		 "node_groups:\n"
		 "  - {name: workers, min: 0, max: 10, gce: {zone: " ZONE "}}\n"
		 "  - {name: bulk, min: 0, max: 10, gce: {zone: " ZONE "}}\n"
		 "provider:\n  kind: gce\n  qps: 100\n  burst: 100\n  read_qps: 100\n  read_burst: 100\n"
		 "  gce:\n    project: " PROJECT "\n    credentials_file: %s\n"
		 "    endpoints: {compute: \"http://127.0.0.1:%d/compute/v1/\"}\n",
		 r->key, gce_face_port(r->face));
	r->cfg = config_parse_opts(text, strlen(text), "gce.yaml", &co, &err);
	if (!r->cfg)
		fail_msg("config: %s", err.msg);
	memset(&po, 0, sizeof(po));
	po.config = r->cfg;
	po.log = &r->plog;
	po.env.get = no_env;
	po.poll_ms = 50;
	po.launch_wait_ms = 60000;
	r->p = gce_provider_new(&po, &err);
	if (!r->p)
		fail_msg("provider: %s", err.msg);
	return r;
}

static void rig_free(struct rig *r)
{
	provider_free(r->p);
	config_free(r->cfg);
	gce_face_free(r->face);
	executor_shutdown(r->ex, clock_now(clock_real()) + 2 * CLOCK_NS_PER_S);
	sim_world_free(r->w);
	sim_scenario_free(r->sc);
	unlink(r->key);
	rmdir(r->dir);
	pthread_mutex_destroy(&r->mu);
	free(r);
}

struct launch {
	struct rig *r;
	const char *group;
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
	l->r->p->ops->launch(l->r->p, l->group, l->count, on_instance, on_done, l);
	return NULL;
}

static void launch_init(struct launch *l, struct rig *r, const char *group, int count, pthread_barrier_t *go)
{
	memset(l, 0, sizeof(*l));
	l->r = r;
	l->group = group;
	l->count = count;
	l->go = go;
	pthread_mutex_init(&l->mu, NULL);
}

static void list(struct rig *r, struct provider_group **gs, size_t *n)
{
	struct provider_status st;

	if (r->p->ops->list_groups(r->p, gs, n, &st) < 0)
		fail_msg("list_groups: %s", st.message);
}

static const struct provider_group *group_of(const struct provider_group *gs, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(gs[i].name, name))
			return &gs[i];
	fail_msg("no group %s listed", name);
	return NULL;
}

static int target_of(struct rig *r, const char *group)
{
	int t;

	sim_cloud_lock(r->w->cloud);
	t = sim_gce_target_size(sim_world_flavour(r->w, &sim_cloud_gce),
				(size_t)sim_cloud_find_group(r->w->cloud, group));
	sim_cloud_unlock(r->w->cloud);
	return t;
}

/* resize answers 2 s late: two launches at once (2 and 1) on a MIG that
 * takes no named instances end at 1 + 2 + 1, each resize writes more than
 * the one before, every instance is reported by one launch only, and each
 * launch reports its own count. */
static void test_overlapping_resizes_add_up(void **state)
{
	struct rig *r = rig_new("faults: [{kind: slow_resize, group: bulk, delay: 2s}]\n");
	struct provider_group *gs = NULL;
	pthread_barrier_t go;
	pthread_t th[2];
	struct launch l[2];
	size_t n = 0;
	int i, j, a, b, k;

	(void)state;
	list(r, &gs, &n);
	provider_groups_free(gs, n);
	assert_int_equal(target_of(r, "bulk"), 1);
	pthread_barrier_init(&go, NULL, 2);
	launch_init(&l[0], r, "bulk", 2, &go);
	launch_init(&l[1], r, "bulk", 1, &go);
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
	assert_int_equal(target_of(r, "bulk"), 4);
	assert_int_equal(r->n_sizes, 2);
	for (k = 1; k < r->n_sizes; k++)
		if (r->sizes[k] <= r->sizes[k - 1])
			fail_msg("resize to %d after %d", r->sizes[k], r->sizes[k - 1]);
	for (i = 0; i < 2; i++)
		for (j = 0; j < l[i].n_seen; j++)
			for (a = 0; a < 2; a++)
				for (b = 0; b < l[a].n_seen; b++)
					if ((a != i || b != j) && !strcmp(l[a].seen[b].id, l[i].seen[j].id))
						fail_msg("%s reported twice", l[i].seen[j].id);
	for (i = 0; i < 2; i++)
		pthread_mutex_destroy(&l[i].mu);
	rig_free(r);
}

/* createInstances takes effect and its answer is lost: the retry carries
 * the same requestId and gets the same operation. */
static void test_lost_create_answer(void **state)
{
	struct rig *r = rig_new("faults: [{kind: lost_answer, group: workers, count: 1}]\n");
	struct provider_group *gs = NULL;
	struct sim_group_stats before, after;
	struct launch l;
	size_t n = 0;
	int gi;

	(void)state;
	list(r, &gs, &n);
	provider_groups_free(gs, n);
	gi = sim_cloud_find_group(r->w->cloud, "workers");
	sim_cloud_group_stats(r->w->cloud, (size_t)gi, &before);
	launch_init(&l, r, "workers", 2, NULL);
	launch_thread(&l);
	if (l.st.code != PROVIDER_OK)
		fail_msg("launch: %s", l.st.message);
	assert_int_equal(l.made, 2);
	assert_int_equal(l.n_seen, 2);
	assert_int_equal(r->lost, 1);
	assert_int_equal(r->creates_ok, 2);      /* the lost one and its retry */
	assert_int_equal(r->creates_conflict, 0); /* the retry was not a second create */
	assert_int_equal(gce_provider_calls(r->p, "resize"), 0);
	sim_cloud_group_stats(r->w->cloud, (size_t)gi, &after);
	assert_int_equal(after.launched - before.launched, 2);
	assert_int_equal(target_of(r, "workers"), 3);
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

/* creationTimestamp in the listing; a deleteInstances refused with 403
 * reports AUTH, and works once the fault is spent. */
static void test_created_and_refused_delete(void **state)
{
	struct rig *r = rig_new("faults: [{kind: terminate_error, group: workers, count: 1, error: auth}]\n");
	struct provider_group *gs = NULL;
	const struct provider_group *g;
	const struct sim_instance *in;
	struct term t;
	const char *ids[1];
	char id[128];
	size_t n = 0;
	uint64_t gets;

	(void)state;
	list(r, &gs, &n);
	g = group_of(gs, n, "workers");
	assert_int_equal(g->n_instances, 1);
	snprintf(id, sizeof(id), "%s", g->instances[0].id);
	sim_cloud_lock(r->w->cloud);
	in = sim_cloud_find_instance(r->w->cloud, id);
	assert_non_null(in);
	assert_int_equal(g->instances[0].launched_wall, in->created_wall);
	sim_cloud_unlock(r->w->cloud);
	provider_groups_free(gs, n);
	/* a known creation time is not asked again */
	gets = gce_provider_calls(r->p, id);
	assert_int_equal(gets, 1);
	list(r, &gs, &n);
	provider_groups_free(gs, n);
	assert_int_equal(gce_provider_calls(r->p, id), 1);

	ids[0] = id;
	memset(&t, 0, sizeof(t));
	r->p->ops->terminate(r->p, "workers", ids, 1, on_term, &t);
	assert_int_equal(t.n_done, 1);
	assert_int_equal(t.count, 0);
	assert_int_equal(t.st.code, PROVIDER_AUTH);
	assert_non_null(strstr(t.st.message, "compute.instances.delete"));
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
		cmocka_unit_test(test_overlapping_resizes_add_up),
		cmocka_unit_test(test_lost_create_answer),
		cmocka_unit_test(test_created_and_refused_delete),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
