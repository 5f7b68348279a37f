/*
 * bench_aws: the AWS provider against the simulator's AWS face, in one
 * process on loopback. A launch run (many one-instance fleet launches at
 * once under the provider's mutating token bucket, each CreateFleet taking
 * the simulated cloud's launch latency) timed against the token bucket's
 * ideal, and a list run (list_groups over many ASGs) timed with its calls
 * counted per action. Prints a table and one "name value" line per figure.
 *
 *   build/bench/bench_aws [launch|list|all] [launches qps burst latency_s asgs per_asg reps read_qps]
 *   defaults: all 50 2 5 2 500 10 5 1000
 *
 * Exits 1 when a run went wrong (instances missing, a call failed) or the
 * launch ratio is above 1.1. Takes about 35 s with the defaults.
 *
 * A stockout run (in "all", or alone: "stockout") launches fleet group
 * STOCKOUT (8 instance types over 3 zones, prioritized) while its first
 * type in its first zone is out of capacity: the first scale-up must
 * complete with the other offerings in at most two CreateFleet calls, and
 * the next must not ask for the offering out of capacity (one call, no
 * instance failed). Exits 1 otherwise.
 */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_common.h"
#include "buf.h"
#include "config.h"
#include "log.h"
#include "providers/aws/aws.h"
#include "providers/provider.h"
#include "runtime/clock.h"
#include "runtime/executor.h"
#include "sim/clouds/aws_face.h"
#include "sim/clouds/cloud.h"
#include "sim/world/scenario.h"

#define S CLOCK_NS_PER_S
#define MAX_LAUNCHES BENCH_MAX_LAUNCHES
#define MAX_ASGS 2000
#define MAX_REPS 100
#define FLEET "burst"
#define STOCKOUT "mixed"
#define STOCKOUT_TYPES "[m5.large, m5.xlarge, m5.2xlarge, c5.xlarge, c5.2xlarge, r5.large, r5.xlarge, t3.medium]"
#define STOCKOUT_FIRST 24 /* instances of the first scale-up */

#define ACCESS_KEY "AKIABENCHSIMULATED01"
#define SECRET_KEY "YmVuY2gtc2VjcmV0LWtleS1mb3ItdGhlLXNpbXVsYXRvcg"
#define REGION "us-east-1"

/* ---- what the face was asked, from its request log ---- */

#define MAX_ACTIONS 16
#define MAX_ANSWERS 4096

struct face_log {
	pthread_mutex_t mu;
	char action[MAX_ACTIONS][48];
	uint64_t n[MAX_ACTIONS];
	uint64_t refused[MAX_ACTIONS];  /* answered 4xx or 5xx */
	double fleet_answer[MAX_ANSWERS]; /* when each CreateFleet was answered */
	size_t n_fleet_answers;
};

static struct face_log face_log = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* The face logs every request at debug level as "sim aws: METHOD URL SERVICE ACTION -> CODE". */
static void face_write(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct face_log *fl = ctx;
	char method[16], url[64], svc[32], action[48];
	int code, i;

	(void)wall;
	if (level >= LOG_WARN)
		fprintf(stderr, "face: %s\n", msg);
	if (sscanf(msg, "sim aws: %15s %63s %31s %47s -> %d", method, url, svc, action, &code) != 5)
		return;
	pthread_mutex_lock(&fl->mu);
	for (i = 0; i < MAX_ACTIONS; i++) {
		if (!fl->action[i][0])
			snprintf(fl->action[i], sizeof(fl->action[i]), "%s", action);
		if (!strcmp(fl->action[i], action)) {
			fl->n[i]++;
			if (code >= 400)
				fl->refused[i]++;
			break;
		}
	}
	if (!strcmp(action, "CreateFleet") && code == 200 && fl->n_fleet_answers < MAX_ANSWERS)
		fl->fleet_answer[fl->n_fleet_answers++] = bench_now();
	pthread_mutex_unlock(&fl->mu);
}

static uint64_t face_calls(const char *action, uint64_t *refused)
{
	uint64_t n = 0;
	int i;

	pthread_mutex_lock(&face_log.mu);
	for (i = 0; i < MAX_ACTIONS; i++)
		if (!strcmp(face_log.action[i], action)) {
			n = face_log.n[i];
			if (refused)
				*refused = face_log.refused[i];
		}
	pthread_mutex_unlock(&face_log.mu);
	return n;
}

/* The provider's log: warnings to stderr, launched instances counted. */
static atomic_int launched_lines;

static void prov_write(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	(void)ctx;
	(void)wall;
	if (!strncmp(msg, "aws: launched i-", 16))
		atomic_fetch_add(&launched_lines, 1);
	if (level >= LOG_WARN)
		fprintf(stderr, "provider: %s\n", msg);
}

/* ---- the world ---- */

struct params {
	int launches;
	double qps;
	int burst;
	double latency_s;
	int asgs, per_asg, reps;
	double read_qps;
};

struct world {
	struct bench_world bw;
	struct sim_world *w;
	struct aws_face *face;
	char url[64];
	struct bench_env env;
	struct aws_env aenv;
	struct logger plog;
};

static char *scenario_text(const struct params *pr)
{
	struct buf b = BUF_INIT;
	int i;

	buf_printf(&b, "seed: 7\nstart: \"2026-12-01T08:00:00Z\"\nduration: 24h\nnode_groups:\n"
		       "  - name: " FLEET "\n    min: 0\n    max: %d\n"
		       "    template: {allocatable: {cpu: 2, memory: 8Gi, pods: 110}}\n",
		   pr->launches * 2 + 10);
	buf_puts(&b, "  - name: " STOCKOUT "\n    min: 0\n    max: 200\n"
		     "    template: {allocatable: {cpu: 2, memory: 8Gi, pods: 110}}\n");
	for (i = 0; i < pr->asgs; i++)
		buf_printf(&b, "  - name: asg-%04d\n    min: 0\n    max: %d\n"
			       "    template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}\n",
			   i, pr->per_asg * 2 + 1);
	/* instances stay pending for the run: no node registers, no scheduler work */
	buf_printf(&b, "cloud: {launch_latency: %lldms, boot_delay: 2h, boot_jitter: 0s, "
		       "terminate_latency: 1s, shutdown_delay: 1s}\n",
		   (long long)llround(pr->latency_s * 1000));
	/* the stockout run's group: its first offering is out of capacity */
	buf_puts(&b, "faults:\n  - {kind: launch_error, group: " STOCKOUT ", error: no_capacity, "
		     "instance_type: m5.large, zone: us-east-1a}\n");
	if (pr->asgs && pr->per_asg) {
		buf_puts(&b, "initial_nodes:\n");
		for (i = 0; i < pr->asgs; i++)
			buf_printf(&b, "  - {group: asg-%04d, count: %d}\n", i, pr->per_asg);
	}
	buf_puts(&b, "aws:\n  region: " REGION "\n  cluster: bench\n  credentials:\n"
		     "    access_key_id: " ACCESS_KEY "\n    secret_access_key: " SECRET_KEY "\n"
		     "  groups:\n    " FLEET ": {mode: fleet, zones: [us-east-1a, us-east-1b], "
		     "instance_types: [m5.large]}\n"
		     "    " STOCKOUT ": {mode: fleet, zones: [us-east-1a, us-east-1b, us-east-1c], "
		     "instance_types: " STOCKOUT_TYPES "}\n");
	for (i = 0; i < pr->asgs; i++)
		buf_printf(&b, "    asg-%04d: {zones: [us-east-1a, us-east-1b, us-east-1c], "
			       "instance_types: [m5.xlarge]}\n",
			   i);
	return buf_take(&b);
}

static int world_new(struct world *wd, const struct params *pr)
{
	struct aws_face_opts fo;
	static struct logger flog_store;
	struct logger *flog = &flog_store;
	struct errbuf err;
	char *text = scenario_text(pr);
	int rc;

	memset(wd, 0, sizeof(*wd));
	rc = bench_world_new(&wd->bw, text, "bench_aws scenario");
	free(text);
	if (rc < 0)
		return -1;
	wd->w = wd->bw.w;
	flog->write = face_write;
	flog->ctx = &face_log;
	flog->min_level = LOG_DEBUG;
	memset(&fo, 0, sizeof(fo));
	fo.port = 0;
	fo.log = flog;
	wd->face = aws_face_new(wd->w->aws, &fo, &err);
	if (!wd->face) {
		fprintf(stderr, "bench_aws: %s\n", err.msg);
		return -1;
	}
	snprintf(wd->url, sizeof(wd->url), "http://127.0.0.1:%d", aws_face_port(wd->face));
	bench_env_set(&wd->env, "AWS_ENDPOINT_URL", wd->url);
	bench_env_set(&wd->env, "AWS_REGION", REGION);
	bench_env_set(&wd->env, "AWS_ACCESS_KEY_ID", ACCESS_KEY);
	bench_env_set(&wd->env, "AWS_SECRET_ACCESS_KEY", SECRET_KEY);
	bench_env_set(&wd->env, "AWS_EC2_METADATA_DISABLED", "true");
	wd->aenv.get = bench_env_get;
	wd->aenv.ud = &wd->env;
	wd->plog.write = prov_write;
	wd->plog.min_level = LOG_INFO;
	return 0;
}

static void world_free(struct world *wd)
{
	aws_face_free(wd->face);
	bench_world_free(&wd->bw);
}

static struct provider *provider(struct world *wd, const struct config *c)
{
	struct aws_provider_opts o;
	struct errbuf err;
	struct provider *p;

	memset(&o, 0, sizeof(o));
	o.config = c;
	o.log = &wd->plog;
	o.env = &wd->aenv;
	o.home = "/nonexistent";
	p = aws_provider_new(&o, &err);
	if (!p)
		fprintf(stderr, "bench_aws: %s\n", err.msg);
	return p;
}

/* ---- the launch run ---- */

struct launch_result {
	double probe_s;       /* one CreateFleet launch alone */
	double measured, ideal;
	double min_call, max_call; /* launch() call to on_done, per call */
	double worst_lag;     /* the k-th CreateFleet answer after its ideal time */
	int created, reported, logged, failed;
	uint64_t face_fleet, face_fleet_refused, prov_fleet;
};

static int run_launch(struct world *wd, const struct params *pr, struct launch_result *r)
{
	char cfg[2048];
	struct config *c;
	struct provider *p;
	struct bench_launches bl;
	struct sim_group_stats before, after;
	uint64_t face0, prov0;
	double first, last, *answers;
	size_t i, n_ans, gi = (size_t)sim_cloud_find_group(wd->w->cloud, FLEET);
	int rc = 0;

	memset(r, 0, sizeof(*r));
	snprintf(cfg, sizeof(cfg),
		 "node_groups:\n"
		 "  - name: " FLEET "\n    min: 0\n    max: %d\n"
		 "    template: {allocatable: {cpu: 2, memory: 8Gi, pods: 110}}\n"
		 "    aws:\n      mode: fleet\n      launch_template: " FLEET "\n"
		 "      instance_types: [m5.large]\n"
		 "      placements: [{zone: us-east-1a}, {zone: us-east-1b}]\n"
		 "provider:\n  kind: aws\n  qps: %g\n  burst: %d\n  read_qps: 100\n  read_burst: 100\n"
		 "  aws: {cluster_name: bench}\n",
		 pr->launches * 2 + 10, pr->qps, pr->burst);
	c = bench_parse_config(cfg, "bench_aws config");
	if (!c)
		return -1;
	p = provider(wd, c);
	if (!p) {
		config_free(c);
		return -1;
	}

	/* one launch alone: the face answers CreateFleet after the cloud's latency */
	r->probe_s = bench_launch_one(p, FLEET, "bench_aws");
	if (r->probe_s < 0) {
		rc = -1;
		goto out;
	}
	/* let the bucket fill up again (burst / qps, and some) */
	bench_sleep((double)pr->burst / pr->qps + 0.5);

	sim_cloud_lock(wd->w->cloud);
	sim_cloud_group_stats(wd->w->cloud, gi, &before);
	sim_cloud_unlock(wd->w->cloud);
	face0 = face_calls("CreateFleet", NULL);
	prov0 = aws_provider_calls(p, "CreateFleet");
	atomic_store(&launched_lines, 0);
	pthread_mutex_lock(&face_log.mu);
	face_log.n_fleet_answers = 0;
	pthread_mutex_unlock(&face_log.mu);

	bench_launch_all(p, FLEET, pr->launches, &bl, "bench_aws");
	first = bl.first;
	last = bl.last;
	r->min_call = bl.min_call;
	r->max_call = bl.max_call;
	r->reported = bl.reported;
	r->failed = bl.failed;
	r->measured = last - first;
	r->ideal = bench_bucket_ideal(pr->launches, pr->burst, pr->qps, pr->latency_s);
	sim_cloud_lock(wd->w->cloud);
	sim_cloud_group_stats(wd->w->cloud, gi, &after);
	sim_cloud_unlock(wd->w->cloud);
	r->created = (int)(after.launched - before.launched);
	r->logged = atomic_load(&launched_lines);
	r->face_fleet = face_calls("CreateFleet", &r->face_fleet_refused) - face0;
	r->prov_fleet = aws_provider_calls(p, "CreateFleet") - prov0;

	/* how late each answer came after the bucket's earliest: where time goes */
	pthread_mutex_lock(&face_log.mu);
	n_ans = face_log.n_fleet_answers;
	answers = calloc(n_ans + 1, sizeof(*answers));
	if (answers)
		memcpy(answers, face_log.fleet_answer, n_ans * sizeof(*answers));
	pthread_mutex_unlock(&face_log.mu);
	if (answers) {
		qsort(answers, n_ans, sizeof(*answers), bench_cmp_double);
		for (i = 0; i < n_ans; i++) {
			double k = (double)i + 1 - pr->burst;
			double ideal = first + (k > 0 ? k / pr->qps : 0) + pr->latency_s;

			if (answers[i] - ideal > r->worst_lag)
				r->worst_lag = answers[i] - ideal;
		}
		free(answers);
	}
out:
	provider_free(p);
	config_free(c);
	return rc;
}

/* ---- the stockout run ---- */

struct stockout_result {
	double first_s, second_s;   /* each scale-up, call to on_done */
	int first_made, second_made;
	uint64_t first_calls, second_calls; /* CreateFleet calls of each */
	uint64_t failed_first, failed_second; /* instances the cloud failed in each */
	bool ok;
};

struct one_launch {
	int seen, made;
	struct provider_status st;
};

static void one_instance(void *ctx, const struct provider_instance *pi)
{
	struct one_launch *l = ctx;

	if (pi->state != INSTANCE_GONE)
		l->seen++;
}

static void one_done(void *ctx, int count, const struct provider_status *st)
{
	struct one_launch *l = ctx;

	l->made = count;
	l->st = *st;
}

/* One launch of 'count' on this thread: the instances reported, its time. */
static int stockout_launch(struct provider *p, int count, int *made, double *secs)
{
	struct one_launch l;
	double t0 = bench_now();

	memset(&l, 0, sizeof(l));
	p->ops->launch(p, STOCKOUT, count, one_instance, one_done, &l);
	*secs = bench_now() - t0;
	*made = l.seen;
	if (l.made != count || l.st.code != PROVIDER_OK) {
		fprintf(stderr, "bench_aws stockout: launch of %d made %d: %s: %s\n", count, l.made,
			provider_error_str(l.st.code), l.st.message);
		return -1;
	}
	return 0;
}

static int run_stockout(struct world *wd, struct stockout_result *r)
{
	struct config *c;
	struct provider *p;
	struct provider_group *gs = NULL;
	struct provider_status st;
	struct sim_group_stats s0, s1, s2;
	size_t n_gs = 0, gi = (size_t)sim_cloud_find_group(wd->w->cloud, STOCKOUT);
	uint64_t c0, c1;
	int rc = 0;

	memset(r, 0, sizeof(*r));
	c = bench_parse_config("node_groups:\n"
			       "  - name: " STOCKOUT "\n    min: 0\n    max: 200\n"
			       "    template: {allocatable: {cpu: 2, memory: 8Gi, pods: 110}}\n"
			       "    aws:\n      mode: fleet\n      launch_template: " STOCKOUT "\n"
			       "      instance_types: " STOCKOUT_TYPES "\n"
			       "      placements: [{zone: us-east-1a}, {zone: us-east-1b}, {zone: us-east-1c}]\n"
			       "      allocation_strategy: prioritized\n"
			       "provider:\n  kind: aws\n  qps: 100\n  burst: 100\n  read_qps: 100\n  read_burst: 100\n"
			       "  aws: {cluster_name: bench}\n",
			       "bench_aws stockout config");
	if (!c)
		return -1;
	p = provider(wd, c);
	if (!p) {
		config_free(c);
		return -1;
	}
	if (p->ops->list_groups(p, &gs, &n_gs, &st) < 0) {
		fprintf(stderr, "bench_aws stockout: list_groups: %s\n", st.message);
		rc = -1;
		goto out;
	}
	provider_groups_free(gs, n_gs);
	sim_cloud_lock(wd->w->cloud);
	sim_cloud_group_stats(wd->w->cloud, gi, &s0);
	sim_cloud_unlock(wd->w->cloud);
	c0 = aws_provider_calls(p, "CreateFleet");
	if (stockout_launch(p, STOCKOUT_FIRST, &r->first_made, &r->first_s) < 0)
		rc = -1;
	c1 = aws_provider_calls(p, "CreateFleet");
	sim_cloud_lock(wd->w->cloud);
	sim_cloud_group_stats(wd->w->cloud, gi, &s1);
	sim_cloud_unlock(wd->w->cloud);
	if (stockout_launch(p, STOCKOUT_FIRST / 3, &r->second_made, &r->second_s) < 0)
		rc = -1;
	sim_cloud_lock(wd->w->cloud);
	sim_cloud_group_stats(wd->w->cloud, gi, &s2);
	sim_cloud_unlock(wd->w->cloud);
	r->first_calls = c1 - c0;
	r->second_calls = aws_provider_calls(p, "CreateFleet") - c1;
	r->failed_first = s1.launch_failed - s0.launch_failed;
	r->failed_second = s2.launch_failed - s1.launch_failed;
	r->ok = rc == 0 && r->first_made == STOCKOUT_FIRST && r->second_made == STOCKOUT_FIRST / 3 &&
		r->first_calls >= 1 && r->first_calls <= 2 && r->failed_first > 0 &&
		r->second_calls == 1 && r->failed_second == 0;
out:
	provider_free(p);
	config_free(c);
	return rc;
}

/* ---- the list run ---- */

static const char *const list_actions[] = {
	"DescribeAutoScalingGroups", "DescribeScalingActivities", "DescribeLaunchTemplateVersions",
	"DescribeInstanceTypes", "DescribeInstances",
};
#define N_LIST_ACTIONS (sizeof(list_actions) / sizeof(list_actions[0]))

struct list_result {
	const char *name;
	double t[MAX_REPS];
	double min, median;
	uint64_t first[N_LIST_ACTIONS]; /* calls of the first list_groups */
	uint64_t later[N_LIST_ACTIONS]; /* calls of the last one (caches warm) */
	uint64_t face_dasg;             /* DescribeAutoScalingGroups the face saw, all reps */
	size_t groups, instances;
	int ok;
};

enum list_mode { LIST_NAMED_TEMPLATE, LIST_NAMED, LIST_DISCOVERED };

static char *list_config(const struct params *pr, enum list_mode mode)
{
	struct buf b = BUF_INIT;
	int i;

	if (mode == LIST_DISCOVERED) {
		buf_puts(&b, "node_groups: []\n");
	} else {
		buf_puts(&b, "node_groups:\n");
		for (i = 0; i < pr->asgs; i++) {
			buf_printf(&b, "  - name: asg-%04d\n", i);
			if (mode == LIST_NAMED_TEMPLATE)
				buf_puts(&b, "    template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}\n");
			buf_printf(&b, "    aws: {asg: asg-%04d}\n", i);
		}
	}
	buf_printf(&b, "provider:\n  kind: aws\n  qps: %g\n  burst: %d\n  read_qps: %g\n  read_burst: %d\n"
		       "  aws:\n    cluster_name: bench\n    auto_discovery: %s\n",
		   pr->qps, pr->burst, pr->read_qps, (int)pr->read_qps,
		   mode == LIST_DISCOVERED ? "true" : "false");
	return buf_take(&b);
}

static int run_list(struct world *wd, const struct params *pr, enum list_mode mode,
		    struct list_result *r)
{
	char *text = list_config(pr, mode);
	struct config *c = text ? bench_parse_config(text, "bench_aws config") : NULL;
	struct provider *p = c ? provider(wd, c) : NULL;
	uint64_t face0 = face_calls("DescribeAutoScalingGroups", NULL);
	int rep, rc = 0;
	size_t a;

	free(text);
	if (!p) {
		config_free(c);
		return -1;
	}
	for (rep = 0; rep < pr->reps; rep++) {
		uint64_t before[N_LIST_ACTIONS];
		struct provider_group *gs = NULL;
		struct provider_status st;
		size_t n = 0, i, inst = 0;
		double t0;

		for (a = 0; a < N_LIST_ACTIONS; a++)
			before[a] = aws_provider_calls(p, list_actions[a]);
		t0 = bench_now();
		if (p->ops->list_groups(p, &gs, &n, &st) < 0) {
			fprintf(stderr, "bench_aws: list_groups (%s): %s: %s\n", r->name,
				provider_error_str(st.code), st.message);
			rc = -1;
			break;
		}
		r->t[rep] = bench_now() - t0;
		for (i = 0; i < n; i++)
			inst += gs[i].n_instances;
		provider_groups_free(gs, n);
		r->groups = n;
		r->instances = inst;
		for (a = 0; a < N_LIST_ACTIONS; a++) {
			uint64_t d = aws_provider_calls(p, list_actions[a]) - before[a];

			if (rep == 0)
				r->first[a] = d;
			r->later[a] = d;
		}
	}
	r->face_dasg = face_calls("DescribeAutoScalingGroups", NULL) - face0;
	if (rc == 0) {
		bench_min_median(r->t, pr->reps, &r->min, &r->median);
		r->ok = r->groups == (size_t)pr->asgs &&
			r->instances == (size_t)pr->asgs * (size_t)pr->per_asg;
		if (!r->ok)
			fprintf(stderr, "bench_aws: list_groups (%s) gave %zu groups with %zu instances, want %d with %d\n",
				r->name, r->groups, r->instances, pr->asgs, pr->asgs * pr->per_asg);
	}
	provider_free(p);
	config_free(c);
	return rc;
}

/* ---- main ---- */

static double arg_num(int argc, char **argv, int i, double def)
{
	return argc > i ? atof(argv[i]) : def;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "all";
	struct params pr;
	struct world wd;
	struct launch_result lr;
	static struct list_result lists[3] = {
		{.name = "named, config templates"},
		{.name = "named, templates described"},
		{.name = "found by tags"},
	};
	bool do_launch = !strcmp(what, "launch") || !strcmp(what, "all");
	bool do_list = !strcmp(what, "list") || !strcmp(what, "all");
	bool do_stockout = !strcmp(what, "stockout") || !strcmp(what, "all");
	struct stockout_result sr;
	int bad = 0, m;
	size_t a;

	pr.launches = (int)arg_num(argc, argv, 2, 50);
	pr.qps = arg_num(argc, argv, 3, 2);
	pr.burst = (int)arg_num(argc, argv, 4, 5);
	pr.latency_s = arg_num(argc, argv, 5, 2);
	pr.asgs = (int)arg_num(argc, argv, 6, 500);
	pr.per_asg = (int)arg_num(argc, argv, 7, 10);
	pr.reps = (int)arg_num(argc, argv, 8, 5);
	pr.read_qps = arg_num(argc, argv, 9, 1000);
	if ((!do_launch && !do_list && !do_stockout) || pr.launches < 1 || pr.launches > MAX_LAUNCHES || pr.qps <= 0 ||
	    pr.burst < 1 || pr.latency_s < 0 || pr.asgs < 1 || pr.asgs > MAX_ASGS || pr.per_asg < 0 ||
	    pr.per_asg > 100 || pr.reps < 1 || pr.reps > MAX_REPS || pr.read_qps < 1) {
		fprintf(stderr, "usage: bench_aws [launch|list|stockout|all] [launches<=%d qps>0 burst>=1 latency_s "
				"asgs<=%d per_asg<=100 reps<=%d read_qps>=1]\n",
			MAX_LAUNCHES, MAX_ASGS, MAX_REPS);
		return 2;
	}
	if (!do_list)
		pr.asgs = 1, pr.per_asg = 0;
	signal(SIGPIPE, SIG_IGN);
	if (world_new(&wd, &pr) < 0)
		return 1;
	printf("bench_aws: the simulator's AWS face at %s\n", wd.url);
	fflush(stdout);

	if (do_launch) {
		if (run_launch(&wd, &pr, &lr) < 0)
			bad = 1;
		else {
			bool ok = lr.failed == 0 && lr.created == pr.launches &&
				  lr.reported == pr.launches && lr.logged == pr.launches &&
				  lr.face_fleet == (uint64_t)pr.launches;

			printf("\nlaunch: %d fleet launches of 1 instance at once, qps %g, burst %d, CreateFleet %gs\n",
			       pr.launches, pr.qps, pr.burst, pr.latency_s);
			bench_row_s("one CreateFleet launch alone", lr.probe_s);
			bench_row_s("first call to last on_done (measured)", lr.measured);
			bench_row_s("token-bucket ideal ((n-b)/q + latency)", lr.ideal);
			bench_row_f("ratio (must be <= 1.1)", lr.measured / lr.ideal);
			bench_row_s("worst CreateFleet answer after its ideal", lr.worst_lag);
			bench_row_range("one launch, call to on_done", lr.min_call, lr.max_call);
			bench_row_n("instances created (cloud)", lr.created);
			bench_row_n("instances reported (on_instance)", lr.reported);
			bench_row_n("instances logged (\"aws: launched\")", lr.logged);
			bench_row_n("launches failed", lr.failed);
			printf("  %-44s %10llu (%llu refused)\n", "CreateFleet requests the face saw",
			       (unsigned long long)lr.face_fleet, (unsigned long long)lr.face_fleet_refused);
			printf("  %-44s %10llu\n", "CreateFleet calls the provider made",
			       (unsigned long long)lr.prov_fleet);
			if (!ok)
				bad = 1;
			if (lr.measured / lr.ideal > 1.1)
				bad = 1;
		}
	}
	if (do_stockout) {
		if (run_stockout(&wd, &sr) < 0 || !sr.ok)
			bad = 1;
		printf("\nstockout: fleet group " STOCKOUT ", 8 instance types over 3 zones, m5.large in us-east-1a out of capacity\n");
		printf("  %-44s %10d in %llu CreateFleet call%s (%llu instance%s failed), %.3fs\n",
		       "first scale-up: instances made", sr.first_made, (unsigned long long)sr.first_calls,
		       sr.first_calls == 1 ? "" : "s", (unsigned long long)sr.failed_first,
		       sr.failed_first == 1 ? "" : "s", sr.first_s);
		printf("  %-44s %10d in %llu CreateFleet call%s (%llu instance%s failed), %.3fs\n",
		       "next scale-up: instances made", sr.second_made, (unsigned long long)sr.second_calls,
		       sr.second_calls == 1 ? "" : "s", (unsigned long long)sr.failed_second,
		       sr.failed_second == 1 ? "" : "s", sr.second_s);
		printf("  %-44s %10s\n", "(must be: all made, <= 2 calls, then 1 call, 0 failed)",
		       sr.ok ? "ok" : "NOT MET");
	}
	if (do_list) {
		printf("\nlist: %d ASGs holding %d instances, read qps %g (burst %d), %d repetitions\n",
		       pr.asgs, pr.asgs * pr.per_asg, pr.read_qps, (int)pr.read_qps, pr.reps);
		printf("  %-28s %8s %8s %8s %6s %9s", "groups", "first s", "min s", "median s", "groups",
		       "instances");
		for (a = 0; a < N_LIST_ACTIONS; a++)
			printf(" %s", list_actions[a] + 8); /* without "Describe" */
		printf("  (calls: first list / later lists)\n");
		for (m = 0; m < 3; m++) {
			struct list_result *r = &lists[m];

			if (run_list(&wd, &pr, (enum list_mode)m, r) < 0 || !r->ok) {
				bad = 1;
				continue;
			}
			printf("  %-28s %8.3f %8.3f %8.3f %6zu %9zu", r->name, r->t[0], r->min, r->median,
			       r->groups, r->instances);
			for (a = 0; a < N_LIST_ACTIONS; a++)
				printf(" %llu/%llu", (unsigned long long)r->first[a],
				       (unsigned long long)r->later[a]);
			printf("\n");
		}
		printf("  (the face saw %llu DescribeAutoScalingGroups requests for the %d x 3 lists)\n",
		       (unsigned long long)(lists[0].face_dasg + lists[1].face_dasg + lists[2].face_dasg),
		       pr.reps);
	}

	/* machine-readable, one figure a line */
	printf("\n");
	if (do_launch && lr.ideal > 0) {
		printf("aws_launch_count %d\n", pr.launches);
		printf("aws_launch_probe_seconds %.3f\n", lr.probe_s);
		printf("aws_launch_seconds %.3f\n", lr.measured);
		printf("aws_launch_ideal_seconds %.3f\n", lr.ideal);
		printf("aws_launch_ratio %.3f\n", lr.measured / lr.ideal);
		printf("aws_launch_worst_lag_seconds %.3f\n", lr.worst_lag);
		printf("aws_launch_instances_created %d\n", lr.created);
		printf("aws_launch_instances_reported %d\n", lr.reported);
		printf("aws_launch_createfleet_face_calls %llu\n", (unsigned long long)lr.face_fleet);
		printf("aws_launch_createfleet_provider_calls %llu\n", (unsigned long long)lr.prov_fleet);
	}
	if (do_stockout) {
		printf("aws_stockout_first_instances %d\n", sr.first_made);
		printf("aws_stockout_first_createfleet_calls %llu\n", (unsigned long long)sr.first_calls);
		printf("aws_stockout_first_seconds %.3f\n", sr.first_s);
		printf("aws_stockout_next_instances %d\n", sr.second_made);
		printf("aws_stockout_next_createfleet_calls %llu\n", (unsigned long long)sr.second_calls);
		printf("aws_stockout_next_failed_instances %llu\n", (unsigned long long)sr.failed_second);
	}
	if (do_list) {
		static const char *const tag[3] = {"named", "named_described", "discovered"};

		printf("aws_list_asgs %d\naws_list_instances %d\naws_list_read_qps %g\n", pr.asgs,
		       pr.asgs * pr.per_asg, pr.read_qps);
		for (m = 0; m < 3; m++) {
			const struct list_result *r = &lists[m];

			if (!r->ok)
				continue;
			printf("aws_list_%s_seconds_first %.4f\n", tag[m], r->t[0]);
			printf("aws_list_%s_seconds_min %.4f\n", tag[m], r->min);
			printf("aws_list_%s_seconds_median %.4f\n", tag[m], r->median);
			for (a = 0; a < N_LIST_ACTIONS; a++) {
				printf("aws_list_%s_calls_first_%s %llu\n", tag[m], list_actions[a],
				       (unsigned long long)r->first[a]);
				printf("aws_list_%s_calls_%s %llu\n", tag[m], list_actions[a],
				       (unsigned long long)r->later[a]);
			}
		}
	}
	world_free(&wd);
	return bad;
}
