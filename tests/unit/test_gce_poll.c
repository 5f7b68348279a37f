/*
 * The GCE provider's launches of one MIG share its listManagedInstances:
 * two launches at once follow their instances on one list a poll
 * interval, not one each. The provider runs against the simulator's GCE
 * face on loopback; the world and the provider share one virtual clock
 * that moves only when the test moves it, and the provider's waits block
 * until it does (a gate clock), so the count of lists per interval is
 * exact. Waits for the provider's threads are bounded and fail with what
 * they saw.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "log.h"
#include "providers/gce/gce.h"
#include "providers/provider.h"
#include "runtime/clock.h"
#include "runtime/executor.h"
#include "sim/clouds/cloud.h"
#include "sim/clouds/gce_face.h"
#include "sim/world/scenario.h"

#define PROJECT "test-project"
#define ZONE "us-central1-a"
#define POLL_MS 50

/* ---- a virtual clock whose sleep_until blocks until the test moves it ---- */

struct gate_clock {
	struct clock base;      /* first */
	struct clock *v;        /* the world's virtual clock */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int sleepers;           /* threads blocked in sleep_until now */
	bool open;              /* stopping: every sleep returns -1 */
};

static int64_t gate_now(const struct clock *c)
{
	return clock_now(((const struct gate_clock *)c)->v);
}

static int64_t gate_wall(const struct clock *c)
{
	return clock_wall(((const struct gate_clock *)c)->v);
}

static int gate_sleep(struct clock *c, int64_t t)
{
	struct gate_clock *g = (struct gate_clock *)c;
	int rc = 0;

	pthread_mutex_lock(&g->mu);
	g->sleepers++;
	pthread_cond_broadcast(&g->cv);
	while (clock_now(g->v) < t && !g->open)
		pthread_cond_wait(&g->cv, &g->mu);
	if (clock_now(g->v) < t)
		rc = -1;
	g->sleepers--;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
	return rc;
}

static const struct clock_ops gate_ops = {gate_now, gate_wall, gate_sleep};

/* Waits (10 s of real time at most) until 'n' threads sleep on the gate. */
static int gate_wait_sleepers(struct gate_clock *g, int n)
{
	struct timespec until;
	int rc = 0, seen;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	pthread_mutex_lock(&g->mu);
	while (g->sleepers != n && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&g->cv, &g->mu, &until);
	seen = g->sleepers;
	pthread_mutex_unlock(&g->mu);
	return seen;
}

/* ---- the rig ---- */

struct rig {
	struct gate_clock gate;
	struct sim_scenario *sc;
	struct executor *ex;
	struct sim_world *w;
	struct gce_face *face;
	struct config *cfg;
	struct provider *p;
	char dir[64], key[96];
	struct logger flog, plog;
};

static const char *no_env(void *ud, const char *name)
{
	(void)ud;
	(void)name;
	return NULL;
}

static void quiet(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	(void)ctx;
	(void)wall;
	if (getenv("GCE_TEST_LOG") || level >= LOG_ERROR)
		fprintf(stderr, "%s\n", msg);
}

static struct rig *rig_new(void)
{
	struct rig *r = calloc(1, sizeof(*r));
	struct gce_face_opts fo;
	struct gce_provider_opts po;
	struct config_opts co = {.flags = CONFIG_OFFLINE};
	struct errbuf err;
	char text[4096], start[32];
	time_t now = time(NULL);
	struct tm tm;

	assert_non_null(r);
	/* the face checks the token's JWT against the real time: start there */
	gmtime_r(&now, &tm);
	strftime(start, sizeof(start), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(text, sizeof(text),
		 "seed: 5\nstart: \"%s\"\nduration: 1h\n"
		 "node_groups:\n"
		 "  - {name: workers, min: 0, max: 10, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}\n"
		 "cloud: {launch_latency: 10ms, boot_delay: 0s, boot_jitter: 0s, terminate_latency: 10ms, shutdown_delay: 10ms}\n"
		 "gce:\n  project: " PROJECT "\n  groups:\n"
		 "    workers: {zone: " ZONE ", machine_type: e2-standard-4}\n",
		 start);
	r->sc = sim_scenario_parse(text, strlen(text), "t.yaml", &err);
	if (!r->sc)
		fail_msg("scenario: %s", err.msg);
	r->gate.base.ops = &gate_ops;
	r->gate.v = vclock_new(r->sc->start_wall);
	pthread_mutex_init(&r->gate.mu, NULL);
	pthread_cond_init(&r->gate.cv, NULL);
	r->ex = executor_new_virtual(r->gate.v);
	assert_non_null(r->ex);
	r->w = sim_world_new(r->sc, r->ex, &err);
	if (!r->w)
		fail_msg("world: %s", err.msg);
	executor_run_until(r->ex, 0);
	r->flog = (struct logger){quiet, r, LOG_DEBUG, NULL};
	r->plog = (struct logger){quiet, r, LOG_DEBUG, NULL};
	memset(&fo, 0, sizeof(fo));
	fo.log = &r->flog;
	r->face = gce_face_new(sim_world_flavour(r->w, &sim_cloud_gce), &fo, &err);
	if (!r->face)
		fail_msg("face: %s", err.msg);
	snprintf(r->dir, sizeof(r->dir), "/tmp/test_gce_poll.XXXXXX");
	assert_non_null(mkdtemp(r->dir));
	snprintf(r->key, sizeof(r->key), "%s/key.json", r->dir);
	if (gce_face_write_key(r->face, r->key, &err) < 0)
		fail_msg("key: %s", err.msg);
	snprintf(text, sizeof(text),
		 "node_groups:\n"
		 "  - {name: workers, min: 0, max: 10, gce: {zone: " ZONE "}}\n"
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
	po.clock = &r->gate.base;
	po.poll_ms = POLL_MS;
	po.launch_wait_ms = 60000;
	r->p = gce_provider_new(&po, &err);
	if (!r->p)
		fail_msg("provider: %s", err.msg);
	return r;
}

/* Moves the world and the provider's clock to 't' and wakes the sleepers. */
static void rig_move(struct rig *r, int64_t t)
{
	pthread_mutex_lock(&r->gate.mu);
	executor_run_until(r->ex, t);
	pthread_cond_broadcast(&r->gate.cv);
	pthread_mutex_unlock(&r->gate.mu);
}

static void rig_free(struct rig *r)
{
	pthread_mutex_lock(&r->gate.mu);
	r->gate.open = true;
	pthread_cond_broadcast(&r->gate.cv);
	pthread_mutex_unlock(&r->gate.mu);
	provider_free(r->p);
	config_free(r->cfg);
	gce_face_free(r->face);
	executor_shutdown(r->ex, clock_now(r->gate.v));
	sim_world_free(r->w);
	sim_scenario_free(r->sc);
	vclock_free(r->gate.v);
	pthread_cond_destroy(&r->gate.cv);
	pthread_mutex_destroy(&r->gate.mu);
	unlink(r->key);
	rmdir(r->dir);
	free(r);
}

/* Joins 't' within 10 s of real time; else opens the gate (every wait
 * of the provider ends), joins, and fails saying so. */
static void join_or_fail(struct rig *r, pthread_t t, const char *what)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	if (pthread_timedjoin_np(t, NULL, &until) == 0)
		return;
	pthread_mutex_lock(&r->gate.mu);
	r->gate.open = true;
	pthread_cond_broadcast(&r->gate.cv);
	pthread_mutex_unlock(&r->gate.mu);
	pthread_join(t, NULL);
	fail_msg("%s did not end within 10 s (listManagedInstances %llu)", what,
		 (unsigned long long)gce_provider_calls(r->p, "listManagedInstances"));
}

struct launch {
	struct rig *r;
	int made, n_done;
	struct provider_status st;
};

static void on_done(void *ctx, int count, const struct provider_status *st)
{
	struct launch *l = ctx;

	l->made = count;
	l->st = *st;
	l->n_done++;
}

static void *launch_thread(void *arg)
{
	struct launch *l = arg;

	l->r->p->ops->launch(l->r->p, "workers", 1, NULL, on_done, l);
	return NULL;
}

/* Two launches of one MIG at once: while their instances are on their
 * way, one listManagedInstances a poll interval serves both; once the
 * cloud made them, one more list ends both launches. */
static void test_launches_share_polls(void **state)
{
	struct rig *r = rig_new();
	struct launch a = {.r = r}, b = {.r = r};
	pthread_t ta, tb;
	int seen;

	(void)state;
	assert_int_equal(pthread_create(&ta, NULL, launch_thread, &a), 0);
	assert_int_equal(pthread_create(&tb, NULL, launch_thread, &b), 0);
	/* both created their instance and listed the MIG once (the cloud
	 * makes instances only when the test moves time): both wait now */
	seen = gate_wait_sleepers(&r->gate, 2);
	if (seen != 2)
		fail_msg("expected both launches waiting for the next poll, saw %d waiting (createInstances %llu, "
			 "listManagedInstances %llu)",
			 seen, (unsigned long long)gce_provider_calls(r->p, "createInstances"),
			 (unsigned long long)gce_provider_calls(r->p, "listManagedInstances"));
	assert_int_equal(gce_provider_calls(r->p, "createInstances"), 2);
	assert_int_equal(gce_provider_calls(r->p, "listManagedInstances"), 1);

	/* a poll interval later both instances run: one list for both */
	rig_move(r, POLL_MS * CLOCK_NS_PER_MS);
	join_or_fail(r, ta, "launch a");
	join_or_fail(r, tb, "launch b");
	assert_int_equal(a.n_done, 1);
	assert_int_equal(b.n_done, 1);
	if (a.st.code != PROVIDER_OK || b.st.code != PROVIDER_OK)
		fail_msg("launches: %s / %s", a.st.message, b.st.message);
	assert_int_equal(a.made, 1);
	assert_int_equal(b.made, 1);
	assert_int_equal(gce_provider_calls(r->p, "listManagedInstances"), 2);
	rig_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_launches_share_polls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
