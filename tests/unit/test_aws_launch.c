/*
 * The AWS provider against the simulator's AWS face, in one process on
 * loopback (a real-time world: the face's delays are real): overlapping
 * launches of one Auto Scaling group while SetDesiredCapacity is slow
 * (a slow_resize fault) add up, never lower the size and never claim an
 * instance twice; list_groups carries each instance's LaunchTime; a
 * terminate refused with AccessDenied / UnauthorizedOperation (a
 * terminate_error fault) reports PROVIDER_AUTH and works once the fault
 * is over; a CreateFleet whose answer is lost (a lost_answer fault) is
 * retried with its ClientToken and launches nothing twice; a fleet
 * offering out of capacity is left out of launches for a while, and spot
 * falls back to on-demand. Waits are joins of the launching threads,
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
#include "providers/aws/aws.h"
#include "providers/aws/endpoints.h"
#include "providers/provider.h"
#include "runtime/clock.h"
#include "runtime/executor.h"
#include "sim/clouds/aws_face.h"
#include "sim/clouds/cloud.h"
#include "sim/world/scenario.h"

#define ACCESS_KEY "AKIATESTSIMULATED001"
#define SECRET_KEY "dGVzdC1zZWNyZXQta2V5LWZvci10aGUtc2ltdWxhdG9y"

/* The secret the provider is given, when not SECRET_KEY (a wrong one). */
static const char *given_secret;

/* The fleet group "burst": the simulated cloud's and the config's, when not
 * the defaults (one type, one zone). */
static const char *burst_sim, *burst_cfg;

/* ---- a clock that runs 'skip' ahead of the real one ---- */

struct skew_clock {
	struct clock base;
	_Atomic int64_t skip_ns;
};

static int64_t skew_now(const struct clock *c)
{
	const struct skew_clock *k = (const struct skew_clock *)c;

	return clock_now(clock_real()) + k->skip_ns;
}

static int64_t skew_wall(const struct clock *c)
{
	const struct skew_clock *k = (const struct skew_clock *)c;

	return clock_wall(clock_real()) + k->skip_ns / CLOCK_NS_PER_S;
}

static int skew_sleep(struct clock *c, int64_t t)
{
	struct skew_clock *k = (struct skew_clock *)c;

	return clock_real()->ops->sleep_until(clock_real(), t - k->skip_ns);
}

static const struct clock_ops skew_ops = {skew_now, skew_wall, skew_sleep};

/* ---- the world, the face and the provider ---- */

struct rig {
	struct sim_scenario *sc;
	struct executor *ex;
	struct sim_world *w;
	struct aws_face *face;
	struct config *cfg;
	struct provider *p;
	char url[64];
	struct logger flog, plog;
	struct aws_env env;     /* what the provider reads instead of the process's */
	struct skew_clock clock; /* the provider's: a test moves it ahead */
	pthread_mutex_t mu;
	int sizes[64];          /* each SetDesiredCapacity value of "workers", in order */
	int n_sizes;
	int lost;               /* answers the face dropped */
};

static void face_write(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct rig *r = ctx;
	int v;

	(void)level;
	(void)wall;
	pthread_mutex_lock(&r->mu);
	if (sscanf(msg, "sim aws: SetDesiredCapacity workers = %d", &v) == 1 && r->n_sizes < 64)
		r->sizes[r->n_sizes++] = v;
	if (strstr(msg, "answer lost (fault)"))
		r->lost++;
	pthread_mutex_unlock(&r->mu);
	if (getenv("AWS_TEST_LOG"))
		fprintf(stderr, "face: %s\n", msg);
}

static void prov_write(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	(void)ctx;
	(void)level;
	(void)wall;
	if (getenv("AWS_TEST_LOG"))
		fprintf(stderr, "provider: %s\n", msg);
}

static const char *env_get(void *ud, const char *name)
{
	struct rig *r = ud;

	if (!strcmp(name, "AWS_ENDPOINT_URL"))
		return r->url;
	if (!strcmp(name, "AWS_REGION"))
		return "us-east-1";
	if (!strcmp(name, "AWS_ACCESS_KEY_ID"))
		return ACCESS_KEY;
	if (!strcmp(name, "AWS_SECRET_ACCESS_KEY"))
		return given_secret ? given_secret : SECRET_KEY;
	if (!strcmp(name, "AWS_EC2_METADATA_DISABLED"))
		return "true";
	return NULL;
}

static struct rig *rig_new(const char *faults)
{
	struct rig *r = calloc(1, sizeof(*r));
	struct aws_face_opts fo;
	struct aws_provider_opts po;
	struct config_opts co = {.flags = CONFIG_OFFLINE};
	struct errbuf err;
	char text[4096];

	assert_non_null(r);
	pthread_mutex_init(&r->mu, NULL);
	snprintf(text, sizeof(text),
		 "seed: 5\nstart: \"2026-12-01T08:00:00Z\"\nduration: 1h\n"
		 "node_groups:\n"
		 "  - {name: workers, min: 0, max: 10, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}\n"
		 "  - {name: burst, min: 0, max: 10, template: {allocatable: {cpu: 2, memory: 8Gi, pods: 110}}}\n"
		 "cloud: {launch_latency: 50ms, boot_delay: 1h, boot_jitter: 0s, terminate_latency: 10ms, shutdown_delay: 10ms}\n"
		 "initial_nodes: [{group: workers, count: 1}]\n"
		 "%s"
		 "aws:\n  region: us-east-1\n  cluster: t\n  credentials:\n"
		 "    access_key_id: " ACCESS_KEY "\n    secret_access_key: " SECRET_KEY "\n"
		 "  groups:\n"
		 "    workers: {zones: [us-east-1a, us-east-1b], instance_types: [m5.large]}\n"
		 "    burst: %s\n",
		 faults ? faults : "",
		 burst_sim ? burst_sim : "{mode: fleet, zones: [us-east-1a], instance_types: [m5.large]}");
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
	r->face = aws_face_new(sim_world_flavour(r->w, &sim_cloud_aws), &fo, &err);
	if (!r->face)
		fail_msg("face: %s", err.msg);
	snprintf(r->url, sizeof(r->url), "http://127.0.0.1:%d", aws_face_port(r->face));
	snprintf(text, sizeof(text),
		 "node_groups:\n"
		 "  - {name: workers, min: 0, max: 10, aws: {asg: workers}}\n"
		 "  - name: burst\n    min: 0\n    max: 10\n"
		 "    aws: %s\n"
		 "provider:\n  kind: aws\n  qps: 100\n  burst: 100\n  read_qps: 100\n  read_burst: 100\n"
		 "  aws: {cluster_name: t}\n",
		 burst_cfg ? burst_cfg :
		 "{mode: fleet, launch_template: burst, instance_types: [m5.large], placements: [{zone: us-east-1a}]}");
	r->cfg = config_parse_opts(text, strlen(text), "aws.yaml", &co, &err);
	if (!r->cfg)
		fail_msg("config: %s", err.msg);
	r->env.get = env_get;
	r->env.ud = r;
	memset(&po, 0, sizeof(po));
	po.config = r->cfg;
	po.log = &r->plog;
	po.env = &r->env;
	po.home = "/nonexistent";
	r->clock.base.ops = &skew_ops;
	po.clock = &r->clock.base;
	po.poll_ms = 50;
	po.launch_wait_ms = 60000;
	r->p = aws_provider_new(&po, &err);
	if (!r->p)
		fail_msg("provider: %s", err.msg);
	return r;
}

static void rig_free(struct rig *r)
{
	provider_free(r->p);
	config_free(r->cfg);
	aws_face_free(r->face);
	executor_shutdown(r->ex, clock_now(clock_real()) + 2 * CLOCK_NS_PER_S);
	sim_world_free(r->w);
	sim_scenario_free(r->sc);
	pthread_mutex_destroy(&r->mu);
	free(r);
}

/* ---- launches from threads ---- */

struct launch {
	struct rig *r;
	const char *group;
	int count;
	pthread_barrier_t *go;
	pthread_mutex_t mu;
	struct provider_instance seen[16];
	int n_seen, made, n_done;
	struct provider_status st;
	const char *const *types; /* launch_types() on these, when n_types */
	size_t n_types;
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
	if (l->n_types)
		l->r->p->ops->launch_types(l->r->p, l->group, l->count, l->types, l->n_types,
					   on_instance, on_done, l);
	else
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

/* Lists once (the groups must be known before a launch). */
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

/* ---- tests ---- */

/* SetDesiredCapacity answers 2 s late: two launches at once (2 and 1)
 * still end at 1 + 2 + 1, every size written is at least the one before,
 * and the three new instances go one to each claim. */
static void test_overlapping_launches_add_up(void **state)
{
	struct rig *r = rig_new("faults: [{kind: slow_resize, group: workers, delay: 2s}]\n");
	struct provider_group *gs = NULL;
	pthread_barrier_t go;
	pthread_t th[2];
	struct launch l[2];
	size_t n = 0;
	int i, j, k;

	(void)state;
	list(r, &gs, &n);
	assert_int_equal(group_of(gs, n, "workers")->target, 1);
	provider_groups_free(gs, n);
	pthread_barrier_init(&go, NULL, 2);
	launch_init(&l[0], r, "workers", 2, &go);
	launch_init(&l[1], r, "workers", 1, &go);
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
	/* the sum, in the cloud */
	sim_cloud_lock(r->w->cloud);
	assert_int_equal(sim_aws_desired(sim_world_flavour(r->w, &sim_cloud_aws), 0), 4);
	sim_cloud_unlock(r->w->cloud);
	/* no write lowered the size */
	assert_int_equal(r->n_sizes, 2);
	for (k = 1; k < r->n_sizes; k++)
		if (r->sizes[k] < r->sizes[k - 1])
			fail_msg("SetDesiredCapacity %d after %d", r->sizes[k], r->sizes[k - 1]);
	/* each instance claimed once */
	for (i = 0; i < 2; i++)
		for (j = 0; j < l[i].n_seen; j++) {
			int a, b;

			for (a = 0; a < 2; a++)
				for (b = 0; b < l[a].n_seen; b++)
					if ((a != i || b != j) && !strcmp(l[a].seen[b].id, l[i].seen[j].id))
						fail_msg("%s reported by two launches", l[i].seen[j].id);
		}
	/* the launch times, as EC2 says them */
	list(r, &gs, &n);
	{
		const struct provider_group *g = group_of(gs, n, "workers");

		assert_int_equal(g->n_instances, 4);
		for (k = 0; k < (int)g->n_instances; k++) {
			struct sim_instance *in;

			sim_cloud_lock(r->w->cloud);
			in = sim_cloud_find_instance(r->w->cloud, g->instances[k].id);
			assert_non_null(in);
			if (g->instances[k].launched_wall < in->created_wall - 1 ||
			    g->instances[k].launched_wall > in->created_wall + 1)
				fail_msg("%s launched at %lld, the cloud made it at %lld", in->id,
					 (long long)g->instances[k].launched_wall, (long long)in->created_wall);
			sim_cloud_unlock(r->w->cloud);
		}
	}
	provider_groups_free(gs, n);
	/* known launch times are not asked again: a list makes one
	 * DescribeInstances, the fleet group's */
	{
		uint64_t before = aws_provider_calls(r->p, "DescribeInstances");

		list(r, &gs, &n);
		provider_groups_free(gs, n);
		assert_int_equal(aws_provider_calls(r->p, "DescribeInstances"), before + 1);
	}
	for (i = 0; i < 2; i++)
		pthread_mutex_destroy(&l[i].mu);
	rig_free(r);
}

struct term {
	pthread_mutex_t mu;
	int count, n_done;
	struct provider_status st;
};

static void on_term(void *ctx, int count, const struct provider_status *st)
{
	struct term *t = ctx;

	pthread_mutex_lock(&t->mu);
	t->count = count;
	t->st = *st;
	t->n_done++;
	pthread_mutex_unlock(&t->mu);
}

static void terminate(struct rig *r, const char *group, const char *id, struct term *t)
{
	const char *ids[1] = {id};

	memset(t, 0, sizeof(*t));
	pthread_mutex_init(&t->mu, NULL);
	r->p->ops->terminate(r->p, group, ids, 1, on_term, t);
	assert_int_equal(t->n_done, 1);
	pthread_mutex_destroy(&t->mu);
}

/* A terminate refused with the cloud's 403 reports AUTH; once the fault is
 * spent the same terminate works. ASG and fleet groups alike. */
static void test_terminate_refused_then_works(void **state)
{
	struct rig *r = rig_new("faults:\n"
				"  - {kind: terminate_error, group: workers, count: 1, error: auth}\n"
				"  - {kind: terminate_error, group: burst, count: 1, error: auth}\n");
	struct provider_group *gs = NULL;
	struct launch l;
	struct term t;
	char id[128];
	size_t n = 0;

	(void)state;
	list(r, &gs, &n);
	snprintf(id, sizeof(id), "%s", group_of(gs, n, "workers")->instances[0].id);
	provider_groups_free(gs, n);
	terminate(r, "workers", id, &t);
	assert_int_equal(t.count, 0);
	assert_int_equal(t.st.code, PROVIDER_AUTH);
	assert_non_null(strstr(t.st.message, "AccessDenied"));
	terminate(r, "workers", id, &t);
	if (t.st.code != PROVIDER_OK)
		fail_msg("terminate: %s", t.st.message);
	assert_int_equal(t.count, 1);

	launch_init(&l, r, "burst", 1, NULL);
	launch_thread(&l);
	if (l.st.code != PROVIDER_OK)
		fail_msg("launch: %s", l.st.message);
	assert_int_equal(l.n_seen, 1);
	terminate(r, "burst", l.seen[0].id, &t);
	assert_int_equal(t.count, 0);
	assert_int_equal(t.st.code, PROVIDER_AUTH);
	assert_non_null(strstr(t.st.message, "UnauthorizedOperation"));
	terminate(r, "burst", l.seen[0].id, &t);
	if (t.st.code != PROVIDER_OK)
		fail_msg("terminate: %s", t.st.message);
	assert_int_equal(t.count, 1);
	pthread_mutex_destroy(&l.mu);
	rig_free(r);
}

/* CreateFleet takes effect and its answer is lost: the retry carries the
 * same ClientToken, gets the same fleet, and nothing is launched twice. */
static void test_lost_fleet_answer(void **state)
{
	struct rig *r = rig_new("faults: [{kind: lost_answer, group: burst, count: 1}]\n");
	struct provider_group *gs = NULL;
	struct sim_group_stats gst;
	struct launch l;
	size_t n = 0;

	(void)state;
	list(r, &gs, &n);
	provider_groups_free(gs, n);
	launch_init(&l, r, "burst", 2, NULL);
	launch_thread(&l);
	if (l.st.code != PROVIDER_OK)
		fail_msg("launch: %s", l.st.message);
	assert_int_equal(l.made, 2);
	assert_int_equal(r->lost, 1);
	sim_cloud_group_stats(r->w->cloud, 1, &gst);
	assert_int_equal(gst.launched, 2);
	assert_int_equal(aws_provider_calls(r->p, "CreateFleet"), 1); /* one call, retried underneath */
	pthread_mutex_destroy(&l.mu);
	rig_free(r);
}

#define FLEET_SIM "{mode: fleet, zones: [us-east-1a, us-east-1b], instance_types: [m5.large, m5.xlarge]}"
#define FLEET_CFG(cap) "{mode: fleet, launch_template: burst, instance_types: [m5.large, m5.xlarge], " \
	"placements: [{zone: us-east-1a}, {zone: us-east-1b}], allocation_strategy: prioritized, capacity_type: " cap "}"

/* Launches 'count' of "burst" on this thread; fails the test unless it made them all. */
static void launch_burst(struct rig *r, int count)
{
	struct launch l;

	launch_init(&l, r, "burst", count, NULL);
	launch_thread(&l);
	if (l.st.code != PROVIDER_OK)
		fail_msg("launch of %d: %s", count, l.st.message);
	assert_int_equal(l.made, count);
	assert_int_equal(l.n_seen, count);
	pthread_mutex_destroy(&l.mu);
}

/* m5.large in us-east-1a is out of capacity: the first launch gets its
 * instances elsewhere in one call and leaves that offering out; the next
 * launch does not ask for it (it fails no more instances); three minutes
 * later (the provider's clock) it is asked for again. */
static void test_fleet_offering_left_out(void **state)
{
	struct provider_group *gs = NULL;
	struct sim_group_stats gst;
	struct rig *r;
	size_t n = 0;

	(void)state;
	burst_sim = FLEET_SIM;
	burst_cfg = FLEET_CFG("on-demand");
	r = rig_new("faults: [{kind: launch_error, group: burst, error: no_capacity, instance_type: m5.large, zone: us-east-1a}]\n");
	list(r, &gs, &n);
	provider_groups_free(gs, n);
	launch_burst(r, 2);
	assert_int_equal(aws_provider_calls(r->p, "CreateFleet"), 1);
	sim_cloud_group_stats(r->w->cloud, 1, &gst);
	assert_int_equal(gst.launched, 2);
	assert_true(gst.launch_failed > 0);
	{
		uint64_t failed = gst.launch_failed;

		launch_burst(r, 1);
		sim_cloud_group_stats(r->w->cloud, 1, &gst);
		assert_int_equal(gst.launch_failed, failed); /* not asked for */
		assert_int_equal(aws_provider_calls(r->p, "CreateFleet"), 2);
		r->clock.skip_ns = AWS_UNAVAILABLE_TTL_NS + CLOCK_NS_PER_S;
		launch_burst(r, 1);
		sim_cloud_group_stats(r->w->cloud, 1, &gst);
		assert_true(gst.launch_failed > failed); /* asked for again */
	}
	assert_int_equal(gst.launched, 4);
	rig_free(r);
	burst_sim = burst_cfg = NULL;
}

/* capacity_type [spot, on-demand] with no spot capacity anywhere: the spot
 * call fails every offering, leaves them out, and on-demand gives the
 * instances in one call more. With capacity_type spot alone the launch
 * fails as out of capacity, and the next one makes no call at all. */
static void test_fleet_spot_falls_back(void **state)
{
	struct provider_group *gs = NULL;
	struct sim_group_stats gst;
	struct launch l;
	struct rig *r;
	size_t n = 0;

	(void)state;
	burst_sim = FLEET_SIM;
	burst_cfg = FLEET_CFG("[spot, on-demand]");
	r = rig_new("faults: [{kind: launch_error, group: burst, error: no_capacity, capacity_type: spot}]\n");
	list(r, &gs, &n);
	provider_groups_free(gs, n);
	launch_burst(r, 3);
	assert_int_equal(aws_provider_calls(r->p, "CreateFleet"), 2);
	sim_cloud_group_stats(r->w->cloud, 1, &gst);
	assert_int_equal(gst.launched, 3);
	/* spot is still out: straight to on-demand, one call */
	launch_burst(r, 1);
	assert_int_equal(aws_provider_calls(r->p, "CreateFleet"), 3);
	rig_free(r);

	burst_cfg = FLEET_CFG("spot");
	r = rig_new("faults: [{kind: launch_error, group: burst, error: no_capacity, capacity_type: spot}]\n");
	list(r, &gs, &n);
	provider_groups_free(gs, n);
	launch_init(&l, r, "burst", 2, NULL);
	launch_thread(&l);
	assert_int_equal(l.made, 0);
	assert_int_equal(l.st.code, PROVIDER_NO_CAPACITY);
	if (!strstr(l.st.message, "InsufficientInstanceCapacity"))
		fail_msg("status: %s", l.st.message);
	pthread_mutex_destroy(&l.mu);
	assert_int_equal(aws_provider_calls(r->p, "CreateFleet"), 1);
	launch_init(&l, r, "burst", 1, NULL);
	launch_thread(&l);
	assert_int_equal(l.made, 0);
	assert_int_equal(l.st.code, PROVIDER_NO_CAPACITY);
	if (!strstr(l.st.message, "every offering of the group is out of capacity"))
		fail_msg("status: %s", l.st.message);
	pthread_mutex_destroy(&l.mu);
	assert_int_equal(aws_provider_calls(r->p, "CreateFleet"), 1); /* none asked */
	rig_free(r);
	burst_sim = burst_cfg = NULL;
}

/* The instance type the simulated cloud gave instance 'id'. */
static void type_of(struct rig *r, const char *id, char *out, size_t len)
{
	struct sim_instance *in;

	sim_cloud_lock(r->w->cloud);
	in = sim_cloud_find_instance(r->w->cloud, id);
	snprintf(out, len, "%s", in ? in->instance_type : "(no such instance)");
	sim_cloud_unlock(r->w->cloud);
}

/* A fleet group of three instance types: list_groups gives a template for
 * each (DescribeInstanceTypes: vCPUs, memory, the instance-type label);
 * a launch limited to some types makes instances of those only, though
 * the fleet's priorities put another first; a type the group does not
 * list, or any type for an Auto Scaling group, is refused unasked. */
static void test_fleet_launch_types(void **state)
{
	static const char *const big[] = {"m5.2xlarge"}, *const other[] = {"c5.xlarge"};
	struct provider_group *gs = NULL;
	const struct provider_group *g;
	struct launch l;
	struct rig *r;
	size_t n = 0, i;
	char type[32];

	(void)state;
	burst_sim = "{mode: fleet, zones: [us-east-1a, us-east-1b], instance_types: [m5.large, m5.xlarge, m5.2xlarge]}";
	burst_cfg = "{mode: fleet, launch_template: burst, instance_types: [m5.large, m5.xlarge, m5.2xlarge], "
		    "placements: [{zone: us-east-1a}, {zone: us-east-1b}], allocation_strategy: prioritized}";
	r = rig_new(NULL);
	list(r, &gs, &n);
	g = group_of(gs, n, "burst");
	assert_non_null(g);
	assert_int_equal(g->n_types, 3);
	assert_string_equal(g->tmpl.instance_type, "m5.large");
	assert_string_equal(g->types[0].instance_type, "m5.large");
	assert_string_equal(g->types[1].instance_type, "m5.xlarge");
	assert_string_equal(g->types[2].instance_type, "m5.2xlarge");
	/* 8 vCPUs less EKS's reserve (6% + 1% + 0.5% x 2 + 0.25% x 4 of a core) */
	assert_int_equal(g->types[2].cpu_m, 8000 - 90);
	assert_int_equal(g->types[0].cpu_m, 2000 - 70);
	assert_true(g->types[2].memory > g->types[1].memory && g->types[1].memory > g->types[0].memory);
	for (i = 0; i < g->types[2].n_labels; i++)
		if (!strcmp(g->types[2].labels[i].key, "node.kubernetes.io/instance-type"))
			assert_string_equal(g->types[2].labels[i].value, "m5.2xlarge");
	assert_int_equal(group_of(gs, n, "workers")->n_types, 0);
	provider_groups_free(gs, n);

	launch_init(&l, r, "burst", 2, NULL);
	l.types = big;
	l.n_types = 1;
	launch_thread(&l);
	if (l.st.code != PROVIDER_OK)
		fail_msg("launch: %s", l.st.message);
	assert_int_equal(l.made, 2);
	assert_int_equal(l.n_seen, 2);
	for (i = 0; i < 2; i++) {
		type_of(r, l.seen[i].id, type, sizeof(type));
		assert_string_equal(type, "m5.2xlarge");
	}
	pthread_mutex_destroy(&l.mu);
	/* without a limit the fleet's first priority wins */
	launch_init(&l, r, "burst", 1, NULL);
	launch_thread(&l);
	assert_int_equal(l.made, 1);
	type_of(r, l.seen[0].id, type, sizeof(type));
	assert_string_equal(type, "m5.large");
	pthread_mutex_destroy(&l.mu);
	assert_int_equal(aws_provider_calls(r->p, "CreateFleet"), 2);

	launch_init(&l, r, "burst", 1, NULL);
	l.types = other;
	l.n_types = 1;
	launch_thread(&l);
	assert_int_equal(l.made, 0);
	assert_int_equal(l.st.code, PROVIDER_INVALID);
	assert_non_null(strstr(l.st.message, "c5.xlarge is not one of group burst's instance_types"));
	pthread_mutex_destroy(&l.mu);
	launch_init(&l, r, "workers", 1, NULL);
	l.types = big;
	l.n_types = 1;
	launch_thread(&l);
	assert_int_equal(l.made, 0);
	assert_int_equal(l.st.code, PROVIDER_INVALID);
	pthread_mutex_destroy(&l.mu);
	assert_int_equal(aws_provider_calls(r->p, "CreateFleet"), 2);
	rig_free(r);
	burst_sim = burst_cfg = NULL;
}

/* A wrong secret: the face answers SignatureDoesNotMatch; the status
 * starts with that code and its message, says the likely cause, names the
 * action, and holds no secret. */
static void test_wrong_secret_names_the_code(void **state)
{
	struct provider_group *gs = NULL;
	struct provider_status st;
	struct rig *r;
	size_t n = 0;

	(void)state;
	given_secret = "d3JvbmctYnV0LXdlbGwtZm9ybWVkLXNlY3JldC1rZXkxMjM0";
	r = rig_new(NULL);
	assert_int_equal(r->p->ops->list_groups(r->p, &gs, &n, &st), -1);
	given_secret = NULL;
	assert_int_equal(st.code, PROVIDER_AUTH);
	if (strncmp(st.message, "SignatureDoesNotMatch: The request signature we calculated", 58))
		fail_msg("message: %s", st.message);
	assert_non_null(strstr(st.message, "(likely cause: wrong key or secret"));
	assert_non_null(strstr(st.message, "; DescribeAutoScalingGroups (request "));
	assert_null(strstr(st.message, "d3JvbmctYnV0"));
	assert_null(strstr(st.message, SECRET_KEY));
	rig_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_overlapping_launches_add_up),
		cmocka_unit_test(test_terminate_refused_then_works),
		cmocka_unit_test(test_lost_fleet_answer),
		cmocka_unit_test(test_wrong_secret_names_the_code),
		cmocka_unit_test(test_fleet_offering_left_out),
		cmocka_unit_test(test_fleet_spot_falls_back),
		cmocka_unit_test(test_fleet_launch_types),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
