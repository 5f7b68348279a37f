/*
 * bench_gce: the GCE provider against the simulator's GCE face, in one
 * process on loopback. A launch run (many one-instance createInstances
 * launches of a zonal MIG at once under the provider's mutating token
 * bucket, each instance created by the simulated cloud after its launch
 * latency) timed against the token bucket's ideal, and a list run
 * (list_groups over many MIGs) timed with its calls counted per action.
 * Prints a table and one "name value" line per figure.
 *
 *   build/bench/bench_gce [launch|list|all] [launches qps burst latency_s migs per_mig reps read_qps poll_ms]
 *   defaults: all 50 2 5 2 200 10 5 1000 50
 *
 * Exits 1 when a run went wrong (instances missing, a call failed) or the
 * launch ratio is above 1.1. Takes about 35 s with the defaults.
 */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_common.h"
#include "buf.h"
#include "config.h"
#include "log.h"
#include "providers/gce/gce.h"
#include "providers/provider.h"
#include "sim/clouds/cloud.h"
#include "sim/clouds/gce_face.h"
#include "sim/world/scenario.h"

#define MAX_MIGS 2000
#define MAX_REPS 100
#define GROUP "burst"
#define ZONE "us-central1-a"
#define PROJECT "sim-project"

/* ---- what the face was asked, from its request log ---- */

/* The face's requests by kind: the compute method a path stands for. */
enum face_kind {
	FK_MIG_GET, FK_AGGREGATED, FK_LIST_MANAGED, FK_CREATE, FK_DELETE, FK_RESIZE,
	FK_OPERATION, FK_TEMPLATE, FK_MACHINE_TYPE, FK_TOKEN, FK_OTHER, N_FK
};

static const char *const face_kind_name[N_FK] = {
	"instanceGroupManagers.get", "aggregated.instanceGroupManagers", "listManagedInstances",
	"createInstances", "deleteInstances", "resize", "operations", "instanceTemplates.get",
	"machineTypes.get", "token", "other",
};

#define MAX_ANSWERS 4096

struct face_log {
	pthread_mutex_t mu;
	uint64_t n[N_FK];
	uint64_t refused[N_FK];             /* answered 4xx or 5xx */
	double create_answer[MAX_ANSWERS];  /* when each createInstances was answered */
	size_t n_create_answers;
};

static struct face_log face_log = {.mu = PTHREAD_MUTEX_INITIALIZER};

static enum face_kind kind_of(const char *method, const char *url)
{
	if (strstr(url, "/createInstances"))
		return FK_CREATE;
	if (strstr(url, "/listManagedInstances"))
		return FK_LIST_MANAGED;
	if (strstr(url, "/deleteInstances"))
		return FK_DELETE;
	if (strstr(url, "/resize"))
		return FK_RESIZE;
	if (strstr(url, "/aggregated/instanceGroupManagers"))
		return FK_AGGREGATED;
	if (strstr(url, "/operations/"))
		return FK_OPERATION;
	if (strstr(url, "/instanceTemplates/"))
		return FK_TEMPLATE;
	if (strstr(url, "/machineTypes/"))
		return FK_MACHINE_TYPE;
	if (!strcmp(method, "GET") && strstr(url, "/instanceGroupManagers/"))
		return FK_MIG_GET;
	if (!strncmp(url, "/token", 6))
		return FK_TOKEN;
	return FK_OTHER;
}

/* The face logs every request at debug level as "sim gce: METHOD URL -> CODE". */
static void face_write(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct face_log *fl = ctx;
	char method[16], url[512];
	enum face_kind k;
	int code;

	(void)wall;
	if (level >= LOG_WARN)
		fprintf(stderr, "face: %s\n", msg);
	if (sscanf(msg, "sim gce: %15s %511s -> %d", method, url, &code) != 3)
		return;
	k = kind_of(method, url);
	pthread_mutex_lock(&fl->mu);
	fl->n[k]++;
	if (code >= 400)
		fl->refused[k]++;
	if (k == FK_CREATE && code == 200 && fl->n_create_answers < MAX_ANSWERS)
		fl->create_answer[fl->n_create_answers++] = bench_now();
	pthread_mutex_unlock(&fl->mu);
}

static void face_calls(uint64_t n[N_FK], uint64_t refused[N_FK])
{
	pthread_mutex_lock(&face_log.mu);
	memcpy(n, face_log.n, sizeof(face_log.n));
	if (refused)
		memcpy(refused, face_log.refused, sizeof(face_log.refused));
	pthread_mutex_unlock(&face_log.mu);
}

/* The provider's log: warnings to stderr, launched instances counted. */
static atomic_int launched_lines;

static void prov_write(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	(void)ctx;
	(void)wall;
	if (!strncmp(msg, "gce: launched ", 14))
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
	int migs, per_mig, reps;
	double read_qps;
	int poll_ms;
};

struct world {
	struct bench_world bw;
	struct sim_world *w;
	struct gce_face *face;
	char compute[96];
	char dir[64], key[96];
	struct bench_env env; /* empty: nothing from the process's environment */
	struct logger plog;
};

static char *scenario_text(const struct params *pr)
{
	struct buf b = BUF_INIT;
	int i;

	buf_printf(&b, "seed: 7\nstart: \"2026-12-01T08:00:00Z\"\nduration: 24h\nnode_groups:\n"
		       "  - name: " GROUP "\n    min: 0\n    max: %d\n"
		       "    template: {allocatable: {cpu: 2, memory: 8Gi, pods: 110}}\n",
		   pr->launches * 2 + 10);
	for (i = 0; i < pr->migs; i++)
		buf_printf(&b, "  - name: mig-%04d\n    min: 0\n    max: %d\n"
			       "    template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}\n",
			   i, pr->per_mig * 2 + 1);
	/* an instance runs as soon as the cloud made it: a launch is done
	 * launch_latency after its createInstances; no pods, no scheduler work */
	buf_printf(&b, "cloud: {launch_latency: %lldms, boot_delay: 0s, boot_jitter: 0s, "
		       "terminate_latency: 1s, shutdown_delay: 1s}\n",
		   (long long)llround(pr->latency_s * 1000));
	if (pr->migs && pr->per_mig) {
		buf_puts(&b, "initial_nodes:\n");
		for (i = 0; i < pr->migs; i++)
			buf_printf(&b, "  - {group: mig-%04d, count: %d}\n", i, pr->per_mig);
	}
	buf_puts(&b, "gce:\n  project: " PROJECT "\n  groups:\n    " GROUP ": {zone: " ZONE
		     ", machine_type: e2-standard-2}\n");
	for (i = 0; i < pr->migs; i++)
		buf_printf(&b, "    mig-%04d: {zone: " ZONE ", machine_type: e2-standard-4}\n", i);
	return buf_take(&b);
}

static int world_new(struct world *wd, const struct params *pr)
{
	struct gce_face_opts fo;
	static struct logger flog_store;
	struct logger *flog = &flog_store;
	struct errbuf err;
	char *text = scenario_text(pr);
	int rc;

	memset(wd, 0, sizeof(*wd));
	rc = bench_world_new(&wd->bw, text, "bench_gce scenario");
	free(text);
	if (rc < 0)
		return -1;
	wd->w = wd->bw.w;
	if (!wd->w->gce) {
		fprintf(stderr, "bench_gce: the world has no GCE flavour\n");
		return -1;
	}
	flog->write = face_write;
	flog->ctx = &face_log;
	flog->min_level = LOG_DEBUG;
	memset(&fo, 0, sizeof(fo));
	fo.port = 0;
	fo.log = flog;
	wd->face = gce_face_new(wd->w->gce, &fo, &err);
	if (!wd->face) {
		fprintf(stderr, "bench_gce: %s\n", err.msg);
		return -1;
	}
	snprintf(wd->compute, sizeof(wd->compute), "http://127.0.0.1:%d/compute/v1/", gce_face_port(wd->face));
	snprintf(wd->dir, sizeof(wd->dir), "/tmp/bench_gce.XXXXXX");
	if (!mkdtemp(wd->dir)) {
		fprintf(stderr, "bench_gce: cannot make a directory for the key\n");
		wd->dir[0] = '\0';
		return -1;
	}
	snprintf(wd->key, sizeof(wd->key), "%s/key.json", wd->dir);
	if (gce_face_write_key(wd->face, wd->key, &err) < 0) {
		fprintf(stderr, "bench_gce: %s\n", err.msg);
		return -1;
	}
	wd->plog.write = prov_write;
	wd->plog.min_level = LOG_INFO;
	return 0;
}

static void world_free(struct world *wd)
{
	gce_face_free(wd->face);
	if (wd->key[0])
		unlink(wd->key);
	if (wd->dir[0])
		rmdir(wd->dir);
	bench_world_free(&wd->bw);
}

/* The provider: section every run shares. */
static void provider_section(struct buf *b, const struct world *wd, double qps, int burst, double read_qps)
{
	buf_printf(b, "provider:\n  kind: gce\n  qps: %g\n  burst: %d\n  read_qps: %g\n  read_burst: %d\n"
		      "  gce:\n    project: " PROJECT "\n    credentials_file: %s\n"
		      "    endpoints: {compute: \"%s\"}\n",
		   qps, burst, read_qps, (int)read_qps, wd->key, wd->compute);
}

static struct provider *provider(struct world *wd, const struct config *c, const struct params *pr)
{
	struct gce_provider_opts o;
	struct errbuf err;
	struct provider *p;

	memset(&o, 0, sizeof(o));
	o.config = c;
	o.log = &wd->plog;
	o.env.get = bench_env_get;
	o.env.ud = &wd->env;
	/* long enough for the last launch's bucket wait and its creation */
	o.launch_wait_ms = 120000;
	o.poll_ms = pr->poll_ms;
	p = gce_provider_new(&o, &err);
	if (!p)
		fprintf(stderr, "bench_gce: %s\n", err.msg);
	return p;
}

/* ---- the launch run ---- */

static const char *const launch_calls[] = {"instanceGroupManagers", "createInstances", "listManagedInstances",
					   "wait", "deleteInstances", "resize"};
#define N_LAUNCH_CALLS (sizeof(launch_calls) / sizeof(launch_calls[0]))

struct launch_result {
	double probe_s;       /* one launch alone */
	double measured, ideal;
	double min_call, max_call; /* launch() call to on_done, per call */
	double last_create;   /* first launch() call to the last createInstances answer */
	double create_ideal;  /* (n-b)/q */
	double worst_lag;     /* the k-th createInstances answer after its ideal time */
	int created, reported, logged, failed;
	uint64_t face[N_FK], face_refused[N_FK];
	uint64_t prov[N_LAUNCH_CALLS];
};

static int run_launch(struct world *wd, const struct params *pr, struct launch_result *r)
{
	struct buf cfg = BUF_INIT;
	struct config *c;
	struct provider *p;
	struct bench_launches bl;
	struct sim_group_stats before, after;
	uint64_t face0[N_FK], ref0[N_FK], prov0[N_LAUNCH_CALLS];
	double *answers;
	size_t i, n_ans, gi = (size_t)sim_cloud_find_group(wd->w->cloud, GROUP);
	int rc = 0;

	memset(r, 0, sizeof(*r));
	buf_printf(&cfg, "node_groups:\n  - name: " GROUP "\n    min: 0\n    max: %d\n"
			 "    template: {allocatable: {cpu: 2, memory: 8Gi, pods: 110}}\n"
			 "    gce: {zone: " ZONE "}\n",
		   pr->launches * 2 + 10);
	provider_section(&cfg, wd, pr->qps, pr->burst, pr->read_qps);
	c = cfg.data ? bench_parse_config(cfg.data, "bench_gce config") : NULL;
	buf_free(&cfg);
	if (!c)
		return -1;
	p = provider(wd, c, pr);
	if (!p) {
		config_free(c);
		return -1;
	}

	/* one launch alone: createInstances, then the instance runs after the cloud's latency */
	r->probe_s = bench_launch_one(p, GROUP, "bench_gce");
	if (r->probe_s < 0) {
		rc = -1;
		goto out;
	}
	/* let the bucket fill up again (burst / qps, and some) */
	bench_sleep((double)pr->burst / pr->qps + 0.5);

	sim_cloud_lock(wd->w->cloud);
	sim_cloud_group_stats(wd->w->cloud, gi, &before);
	sim_cloud_unlock(wd->w->cloud);
	face_calls(face0, ref0);
	for (i = 0; i < N_LAUNCH_CALLS; i++)
		prov0[i] = gce_provider_calls(p, launch_calls[i]);
	atomic_store(&launched_lines, 0);
	pthread_mutex_lock(&face_log.mu);
	face_log.n_create_answers = 0;
	pthread_mutex_unlock(&face_log.mu);

	bench_launch_all(p, GROUP, pr->launches, &bl, "bench_gce");
	r->min_call = bl.min_call;
	r->max_call = bl.max_call;
	r->reported = bl.reported;
	r->failed = bl.failed;
	r->measured = bl.last - bl.first;
	r->ideal = bench_bucket_ideal(pr->launches, pr->burst, pr->qps, pr->latency_s);
	r->create_ideal = bench_bucket_ideal(pr->launches, pr->burst, pr->qps, 0);
	sim_cloud_lock(wd->w->cloud);
	sim_cloud_group_stats(wd->w->cloud, gi, &after);
	sim_cloud_unlock(wd->w->cloud);
	r->created = (int)(after.launched - before.launched);
	r->logged = atomic_load(&launched_lines);
	face_calls(r->face, r->face_refused);
	for (i = 0; i < N_FK; i++) {
		r->face[i] -= face0[i];
		r->face_refused[i] -= ref0[i];
	}
	for (i = 0; i < N_LAUNCH_CALLS; i++)
		r->prov[i] = gce_provider_calls(p, launch_calls[i]) - prov0[i];

	/* how late each createInstances answer came after the bucket's earliest */
	pthread_mutex_lock(&face_log.mu);
	n_ans = face_log.n_create_answers;
	answers = calloc(n_ans + 1, sizeof(*answers));
	if (answers)
		memcpy(answers, face_log.create_answer, n_ans * sizeof(*answers));
	pthread_mutex_unlock(&face_log.mu);
	if (answers) {
		qsort(answers, n_ans, sizeof(*answers), bench_cmp_double);
		for (i = 0; i < n_ans; i++) {
			double k = (double)i + 1 - pr->burst;
			double ideal = bl.first + (k > 0 ? k / pr->qps : 0);

			if (answers[i] - ideal > r->worst_lag)
				r->worst_lag = answers[i] - ideal;
		}
		if (n_ans)
			r->last_create = answers[n_ans - 1] - bl.first;
		free(answers);
	}
out:
	provider_free(p);
	config_free(c);
	return rc;
}

/* ---- the list run ---- */

static const enum face_kind list_kinds[] = {FK_MIG_GET, FK_AGGREGATED, FK_LIST_MANAGED, FK_TEMPLATE,
					    FK_MACHINE_TYPE};
#define N_LIST_KINDS (sizeof(list_kinds) / sizeof(list_kinds[0]))

struct list_result {
	const char *name;
	double t[MAX_REPS];
	double min, median;
	uint64_t first[N_LIST_KINDS]; /* requests of the first list_groups */
	uint64_t later[N_LIST_KINDS]; /* of the last one (caches warm) */
	uint64_t refused;             /* answered 4xx/5xx, all reps */
	size_t groups, instances;
	int ok;
};

enum list_mode { LIST_NAMED_TEMPLATE, LIST_NAMED, LIST_DISCOVERED };

static char *list_config(const struct world *wd, const struct params *pr, enum list_mode mode)
{
	struct buf b = BUF_INIT;
	int i;

	if (mode == LIST_DISCOVERED) {
		buf_puts(&b, "node_groups: []\n");
	} else {
		buf_puts(&b, "node_groups:\n");
		for (i = 0; i < pr->migs; i++) {
			buf_printf(&b, "  - name: mig-%04d\n    min: 0\n    max: %d\n", i, pr->per_mig * 2 + 1);
			if (mode == LIST_NAMED_TEMPLATE)
				buf_puts(&b, "    template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}\n");
			buf_puts(&b, "    gce: {zone: " ZONE "}\n");
		}
	}
	provider_section(&b, wd, pr->qps, pr->burst, pr->read_qps);
	if (mode == LIST_DISCOVERED)
		buf_printf(&b, "    discovery:\n      - {prefix: mig-, min: 0, max: %d}\n", pr->per_mig * 2 + 1);
	return buf_take(&b);
}

static uint64_t sum_refused(void)
{
	uint64_t n[N_FK], ref[N_FK], s = 0;
	size_t k;

	face_calls(n, ref);
	for (k = 0; k < N_FK; k++)
		s += ref[k];
	return s;
}

static int run_list(struct world *wd, const struct params *pr, enum list_mode mode, struct list_result *r)
{
	char *text = list_config(wd, pr, mode);
	struct config *c = text ? bench_parse_config(text, "bench_gce config") : NULL;
	struct provider *p = c ? provider(wd, c, pr) : NULL;
	uint64_t ref0 = sum_refused();
	int rep, rc = 0;
	size_t a;

	free(text);
	if (!p) {
		config_free(c);
		return -1;
	}
	for (rep = 0; rep < pr->reps; rep++) {
		uint64_t before[N_FK], now[N_FK];
		struct provider_group *gs = NULL;
		struct provider_status st;
		size_t n = 0, i, inst = 0;
		double t0;

		face_calls(before, NULL);
		t0 = bench_now();
		if (p->ops->list_groups(p, &gs, &n, &st) < 0) {
			fprintf(stderr, "bench_gce: list_groups (%s): %s: %s\n", r->name, provider_error_str(st.code),
				st.message);
			rc = -1;
			break;
		}
		r->t[rep] = bench_now() - t0;
		for (i = 0; i < n; i++)
			inst += gs[i].n_instances;
		provider_groups_free(gs, n);
		r->groups = n;
		r->instances = inst;
		face_calls(now, NULL);
		for (a = 0; a < N_LIST_KINDS; a++) {
			uint64_t d = now[list_kinds[a]] - before[list_kinds[a]];

			if (rep == 0)
				r->first[a] = d;
			r->later[a] = d;
		}
	}
	r->refused = sum_refused() - ref0;
	if (rc == 0) {
		bench_min_median(r->t, pr->reps, &r->min, &r->median);
		r->ok = r->groups == (size_t)pr->migs && r->instances == (size_t)pr->migs * (size_t)pr->per_mig &&
			r->refused == 0;
		if (!r->ok)
			fprintf(stderr,
				"bench_gce: list_groups (%s) gave %zu groups with %zu instances (%llu refused), "
				"want %d with %d\n",
				r->name, r->groups, r->instances, (unsigned long long)r->refused, pr->migs,
				pr->migs * pr->per_mig);
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
		{.name = "found by name prefix"},
	};
	bool do_launch = !strcmp(what, "launch") || !strcmp(what, "all");
	bool do_list = !strcmp(what, "list") || !strcmp(what, "all");
	int bad = 0, m;
	size_t a;

	pr.launches = (int)arg_num(argc, argv, 2, 50);
	pr.qps = arg_num(argc, argv, 3, 2);
	pr.burst = (int)arg_num(argc, argv, 4, 5);
	pr.latency_s = arg_num(argc, argv, 5, 2);
	pr.migs = (int)arg_num(argc, argv, 6, 200);
	pr.per_mig = (int)arg_num(argc, argv, 7, 10);
	pr.reps = (int)arg_num(argc, argv, 8, 5);
	pr.read_qps = arg_num(argc, argv, 9, 1000);
	pr.poll_ms = (int)arg_num(argc, argv, 10, 50);
	if ((!do_launch && !do_list) || pr.launches < 1 || pr.launches > BENCH_MAX_LAUNCHES || pr.qps <= 0 ||
	    pr.burst < 1 || pr.latency_s < 0 || pr.migs < 1 || pr.migs > MAX_MIGS || pr.per_mig < 0 ||
	    pr.per_mig > 100 || pr.reps < 1 || pr.reps > MAX_REPS || pr.read_qps < 1 || pr.poll_ms < 1) {
		fprintf(stderr,
			"usage: bench_gce [launch|list|all] [launches<=%d qps>0 burst>=1 latency_s "
			"migs<=%d per_mig<=100 reps<=%d read_qps>=1 poll_ms>=1]\n",
			BENCH_MAX_LAUNCHES, MAX_MIGS, MAX_REPS);
		return 2;
	}
	if (!do_list)
		pr.migs = 1, pr.per_mig = 0;
	signal(SIGPIPE, SIG_IGN);
	if (world_new(&wd, &pr) < 0) {
		world_free(&wd);
		return 1;
	}
	printf("bench_gce: the simulator's GCE face at %s\n", wd.compute);
	fflush(stdout);

	if (do_launch) {
		if (run_launch(&wd, &pr, &lr) < 0)
			bad = 1;
		else {
			bool ok = lr.failed == 0 && lr.created == pr.launches && lr.reported == pr.launches &&
				  lr.logged == pr.launches && lr.face[FK_CREATE] == (uint64_t)pr.launches &&
				  lr.face_refused[FK_CREATE] == 0;

			printf("\nlaunch: %d launches of 1 instance at once into zonal MIG " GROUP
			       ", qps %g, burst %d (reads: qps %g, burst %d), launch latency %gs, poll %d ms\n",
			       pr.launches, pr.qps, pr.burst, pr.read_qps, (int)pr.read_qps, pr.latency_s, pr.poll_ms);
			printf("  a launch: MIG get (read bucket), createInstances (mutating bucket, answered at once\n"
			       "  with a DONE operation), then the group's listManagedInstances, one a poll shared by\n"
			       "  every launch of the group, until the instance is RUNNING with currentAction NONE,\n"
			       "  which the cloud makes launch_latency after createInstances. 'done' is that on_done.\n");
			bench_row_s("one launch alone (MIG get to RUNNING)", lr.probe_s);
			bench_row_s("first call to last on_done (measured)", lr.measured);
			bench_row_s("token-bucket ideal ((n-b)/q + latency)", lr.ideal);
			bench_row_f("ratio (must be <= 1.1)", lr.measured / lr.ideal);
			bench_row_s("first call to last createInstances answer", lr.last_create);
			bench_row_s("its ideal ((n-b)/q)", lr.create_ideal);
			bench_row_s("worst createInstances answer after ideal", lr.worst_lag);
			bench_row_range("one launch, call to on_done", lr.min_call, lr.max_call);
			bench_row_n("instances created (cloud)", lr.created);
			bench_row_n("instances reported (on_instance)", lr.reported);
			bench_row_n("instances logged (\"gce: launched\")", lr.logged);
			bench_row_n("launches failed", lr.failed);
			printf("  %-44s %10s %10s %8s\n", "calls per action", "provider", "face", "refused");
			{
				static const enum face_kind fk[N_LAUNCH_CALLS] = {FK_MIG_GET,   FK_CREATE, FK_LIST_MANAGED,
										  FK_OPERATION, FK_DELETE, FK_RESIZE};

				for (a = 0; a < N_LAUNCH_CALLS; a++)
					printf("  %-44s %10llu %10llu %8llu\n", face_kind_name[fk[a]],
					       (unsigned long long)lr.prov[a], (unsigned long long)lr.face[fk[a]],
					       (unsigned long long)lr.face_refused[fk[a]]);
				printf("  %-44s %10s %10llu %8llu\n", "token", "-", (unsigned long long)lr.face[FK_TOKEN],
				       (unsigned long long)lr.face_refused[FK_TOKEN]);
			}
			bench_row_f("listManagedInstances per launch", (double)lr.prov[2] / pr.launches);
			bench_row_n("poll intervals in the run (measured / poll)",
				    (int)ceil(lr.measured * 1000 / pr.poll_ms));
			if (!ok)
				bad = 1;
			if (lr.measured / lr.ideal > 1.1)
				bad = 1;
		}
	}
	if (do_list) {
		printf("\nlist: %d zonal MIGs holding %d instances, read qps %g (burst %d), %d repetitions\n", pr.migs,
		       pr.migs * pr.per_mig, pr.read_qps, (int)pr.read_qps, pr.reps);
		printf("  %-28s %8s %8s %8s %6s %9s", "groups", "first s", "min s", "median s", "groups", "instances");
		for (a = 0; a < N_LIST_KINDS; a++)
			printf(" %s", face_kind_name[list_kinds[a]]);
		printf("  (requests the face saw: first list / later lists)\n");
		for (m = 0; m < 3; m++) {
			struct list_result *r = &lists[m];

			if (run_list(&wd, &pr, (enum list_mode)m, r) < 0 || !r->ok) {
				bad = 1;
				continue;
			}
			printf("  %-28s %8.3f %8.3f %8.3f %6zu %9zu", r->name, r->t[0], r->min, r->median, r->groups,
			       r->instances);
			for (a = 0; a < N_LIST_KINDS; a++)
				printf(" %llu/%llu", (unsigned long long)r->first[a], (unsigned long long)r->later[a]);
			printf("\n");
		}
	}

	/* machine-readable, one figure a line */
	printf("\n");
	if (do_launch && lr.ideal > 0) {
		static const char *const tag[N_LAUNCH_CALLS] = {"mig_get", "createinstances", "listmanagedinstances",
								"operation_wait", "deleteinstances", "resize"};

		printf("gce_launch_count %d\n", pr.launches);
		printf("gce_launch_probe_seconds %.3f\n", lr.probe_s);
		printf("gce_launch_seconds %.3f\n", lr.measured);
		printf("gce_launch_ideal_seconds %.3f\n", lr.ideal);
		printf("gce_launch_ratio %.3f\n", lr.measured / lr.ideal);
		printf("gce_launch_last_create_seconds %.3f\n", lr.last_create);
		printf("gce_launch_create_ideal_seconds %.3f\n", lr.create_ideal);
		printf("gce_launch_worst_lag_seconds %.3f\n", lr.worst_lag);
		printf("gce_launch_instances_created %d\n", lr.created);
		printf("gce_launch_instances_reported %d\n", lr.reported);
		printf("gce_launch_qps %g\ngce_launch_burst %d\ngce_launch_read_qps %g\n", pr.qps, pr.burst,
		       pr.read_qps);
		for (a = 0; a < N_LAUNCH_CALLS; a++)
			printf("gce_launch_%s_provider_calls %llu\n", tag[a], (unsigned long long)lr.prov[a]);
		printf("gce_launch_createinstances_face_calls %llu\n", (unsigned long long)lr.face[FK_CREATE]);
		printf("gce_launch_listmanagedinstances_per_launch %.2f\n", (double)lr.prov[2] / pr.launches);
		printf("gce_launch_poll_intervals %d\n", (int)ceil(lr.measured * 1000 / pr.poll_ms));
	}
	if (do_list) {
		static const char *const tag[3] = {"named", "named_described", "discovered"};

		printf("gce_list_migs %d\ngce_list_instances %d\ngce_list_read_qps %g\n", pr.migs, pr.migs * pr.per_mig,
		       pr.read_qps);
		for (m = 0; m < 3; m++) {
			const struct list_result *r = &lists[m];

			if (!r->ok)
				continue;
			printf("gce_list_%s_seconds_first %.4f\n", tag[m], r->t[0]);
			printf("gce_list_%s_seconds_min %.4f\n", tag[m], r->min);
			printf("gce_list_%s_seconds_median %.4f\n", tag[m], r->median);
			for (a = 0; a < N_LIST_KINDS; a++) {
				printf("gce_list_%s_calls_first_%s %llu\n", tag[m], face_kind_name[list_kinds[a]],
				       (unsigned long long)r->first[a]);
				printf("gce_list_%s_calls_%s %llu\n", tag[m], face_kind_name[list_kinds[a]],
				       (unsigned long long)r->later[a]);
			}
		}
	}
	world_free(&wd);
	return bad;
}
