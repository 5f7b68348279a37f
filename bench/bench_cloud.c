/*
 * bench_cloud: one cloud's provider (AWS, GCE or Azure) against the
 * simulator's face of that cloud, in one process on loopback. A launch run
 * (many one-instance launches of one group at once under the provider's
 * mutating token bucket, each instance made by the simulated cloud after its
 * launch latency) timed against the token bucket's ideal, and a list run
 * (list_groups over many groups, named in the config or discovered) timed
 * with its calls counted per kind. AWS adds a stockout run. Prints a table
 * and one "name value" line per figure. What differs by cloud (the face,
 * the provider's options, the scenario's and config's groups, the table)
 * is the table 'clouds' at the end of the file; the runs are shared.
 *
 *   build/bench/bench_cloud --cloud aws   [launch|list|stockout|all] [launches qps burst latency_s asgs per_asg reps read_qps]
 *   build/bench/bench_cloud --cloud gce   [launch|list|all] [launches qps burst latency_s migs per_mig reps read_qps poll_ms]
 *   build/bench/bench_cloud --cloud azure [launch|list|all] [launches qps burst latency_s sets per_set reps read_qps]
 *   defaults: all 50 2 5 2 G 10 5 1000 (poll_ms 50); G: 500 ASGs, 200 MIGs, 100 scale sets
 *
 * Exits 1 when a run went wrong (instances missing, a call failed) or the
 * launch ratio is above 1.1, 2 on a wrong command line (a missing or
 * unknown --cloud included). Takes about 35 to 40 s with the defaults.
 *
 * The AWS stockout run (in "all", or alone: "stockout") launches fleet group
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
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_common.h"
#include "buf.h"
#include "config.h"
#include "log.h"
#include "providers/aws/aws.h"
#include "providers/azure/azure.h"
#include "providers/gce/gce.h"
#include "providers/provider.h"
#include "sim/clouds/aws_face.h"
#include "sim/clouds/azure_face.h"
#include "sim/clouds/cloud.h"
#include "sim/clouds/gce_face.h"
#include "sim/world/scenario.h"

#define MAX_REPS 100
#define MAX_KINDS 16
#define MAX_CALLS 8
#define MAX_MODES 3
#define MAX_ANSWERS 4096
#define GROUP "burst"

struct params {
	int launches;
	double qps;
	int burst;
	double latency_s;
	int groups, per_group, reps; /* the list run's groups, instances in each */
	double read_qps;
	int poll_ms;                 /* GCE only */
};

struct world;

/* What the launch run measured. */
struct launch_result {
	double probe_s;            /* one launch alone */
	double measured, ideal;
	double min_call, max_call; /* launch() call to on_done, per call */
	double last_create;        /* first launch() call to the last timed answer */
	double create_ideal;       /* (n-b)/q */
	double worst_lag;          /* the k-th timed answer after its ideal time */
	int created, reported, logged, failed;
	uint64_t face[MAX_KINDS], face_refused[MAX_KINDS];
	uint64_t prov[MAX_CALLS]; /* the cloud's launch_calls the provider made */
};

/* What one list mode measured. */
struct list_result {
	double t[MAX_REPS];
	double min, median;
	uint64_t first[MAX_KINDS]; /* calls of the first list_groups, per column */
	uint64_t later[MAX_KINDS]; /* of the last one (caches warm) */
	uint64_t face[MAX_KINDS];  /* the face's requests, all reps */
	uint64_t refused;          /* answered 4xx/5xx, all reps */
	size_t groups, instances;
	int ok;
};

/* One cloud: its face, provider, scenario, configs and table. */
struct cloud {
	const char *name, *title;   /* "aws", "AWS" */
	const char *usage;          /* its sub-commands and numbers */
	const char *prefix;         /* the list run's groups: "<prefix>-0000" */
	int groups, max_groups;     /* their default and largest number */
	bool stockout, poll;        /* has the stockout run; takes poll_ms */
	bool prefill;               /* GROUP starts with burst_start() instances */
	const char *boot_delay;     /* the scenario's cloud boot_delay */
	const char *more_groups;    /* scenario groups after GROUP, or NULL */
	const char *faults;         /* the scenario's faults, or NULL */
	const char *launched;       /* the provider's line for each launched instance, or NULL */
	/* the face's requests: their kinds, and which is the launch's one write */
	const char *const *kinds;
	int (*kind_of)(const char *msg, int *code); /* a kind, or -1: not a request */
	int write_kind;
	bool timed;                 /* write_kind's answers are timed against the bucket */
	bool lag_latency;           /* ... and each is due 'latency' after its token */
	/* the provider's own counts, where it keeps them */
	uint64_t (*calls)(const struct provider *p, const char *what);
	const char *const *launch_calls;
	int n_launch_calls;
	/* the list run's modes and columns: provider calls, or face kinds */
	const char *const *modes;
	int n_modes;
	const char *const *list_calls;
	const int *list_kinds;
	int n_list;
	bool list_refused_fails;
	int (*face_new)(struct world *wd, const struct logger *flog, struct errbuf *err);
	void (*face_free)(struct world *wd);
	void (*scenario_section)(struct buf *b, const struct params *pr);
	struct provider *(*provider_new)(struct world *wd, const struct config *c, const struct params *pr,
					 struct errbuf *err);
	void (*launch_config)(struct buf *b, const struct world *wd, const struct params *pr);
	void (*list_config)(struct buf *b, const struct world *wd, const struct params *pr, int mode);
	void (*print_launch)(const struct params *pr, const struct launch_result *lr);
	void (*print_list)(const struct cloud *cl, const struct params *pr, int mode, const struct list_result *r);
	void (*print_figures)(const struct cloud *cl, const struct params *pr, const struct launch_result *lr,
			      const struct list_result *lists);
	const char *groups_title;   /* the list table's header: "ASGs" */
	const char *groups_key;     /* its figures: "asgs" */
	const char *list_legend;    /* after the list table's columns */
};

struct world {
	const struct cloud *cl;
	char who[32];               /* "bench_cloud aws": prefixes messages */
	struct bench_world bw;
	struct sim_world *w;
	void *face;
	char url[96];               /* the face, as the header prints it */
	char arm[64], imds[64];     /* Azure */
	char dir[64], key[96];      /* GCE: the service account key */
	struct bench_env env;       /* what the provider reads as its environment */
	struct aws_env aenv;
	struct logger plog, flog;
};

/* ---- what the face was asked, from its request log ---- */

struct face_log {
	pthread_mutex_t mu;
	const struct cloud *cl;
	uint64_t n[MAX_KINDS];
	uint64_t refused[MAX_KINDS]; /* answered 4xx or 5xx */
	double answer[MAX_ANSWERS];  /* when each timed request was answered */
	size_t n_answers;
};

static struct face_log face_log = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void face_write(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct face_log *fl = ctx;
	int code, k;

	(void)wall;
	if (level >= LOG_WARN)
		fprintf(stderr, "face: %s\n", msg);
	k = fl->cl->kind_of(msg, &code);
	if (k < 0)
		return;
	pthread_mutex_lock(&fl->mu);
	fl->n[k]++;
	if (code >= 400)
		fl->refused[k]++;
	if (fl->cl->timed && k == fl->cl->write_kind && code == 200 && fl->n_answers < MAX_ANSWERS)
		fl->answer[fl->n_answers++] = bench_now();
	pthread_mutex_unlock(&fl->mu);
}

static void face_calls(uint64_t n[MAX_KINDS], uint64_t refused[MAX_KINDS])
{
	pthread_mutex_lock(&face_log.mu);
	memcpy(n, face_log.n, sizeof(face_log.n));
	memcpy(refused, face_log.refused, sizeof(face_log.refused));
	pthread_mutex_unlock(&face_log.mu);
}

/* The provider's log: warnings to stderr, launched instances counted. */
static atomic_int launched_lines;

static void prov_write(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	const struct cloud *cl = ctx;

	(void)wall;
	if (cl->launched && !strncmp(msg, cl->launched, strlen(cl->launched)))
		atomic_fetch_add(&launched_lines, 1);
	if (level >= LOG_WARN)
		fprintf(stderr, "provider: %s\n", msg);
}

/* ---- the world ---- */

/*
 * Instances GROUP starts with where the cloud's VM array (16, doubling)
 * must already have room for every launch's VM: the Azure simulator hands
 * the cloud pointers into that array while launches are in flight.
 */
static int burst_start(const struct cloud *cl, const struct params *pr)
{
	int n0;

	if (!cl->prefill)
		return 0;
	for (n0 = 1;; n0++) {
		int cap = 16;

		while (cap < n0)
			cap *= 2;
		if (cap >= n0 + pr->launches + 1)
			return n0;
	}
}

static char *scenario_text(const struct cloud *cl, const struct params *pr)
{
	struct buf b = BUF_INIT;
	int i, n0 = burst_start(cl, pr);

	buf_printf(&b, "seed: 7\nstart: \"2026-12-01T08:00:00Z\"\nduration: 24h\nnode_groups:\n"
		       "  - name: " GROUP "\n    min: 0\n    max: %d\n"
		       "    template: {allocatable: {cpu: 2, memory: 8Gi, pods: 110}}\n",
		   n0 + pr->launches * 2 + 10);
	if (cl->more_groups)
		buf_puts(&b, cl->more_groups);
	for (i = 0; i < pr->groups; i++)
		buf_printf(&b, "  - name: %s-%04d\n    min: 0\n    max: %d\n"
			       "    template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}\n",
			   cl->prefix, i, pr->per_group * 2 + 1);
	/* no pods, no scheduler work; a launch is done launch_latency after its call */
	buf_printf(&b, "cloud: {launch_latency: %lldms, boot_delay: %s, boot_jitter: 0s, "
		       "terminate_latency: 1s, shutdown_delay: 1s}\n",
		   (long long)llround(pr->latency_s * 1000), cl->boot_delay);
	if (cl->faults)
		buf_puts(&b, cl->faults);
	if (n0 || (pr->groups && pr->per_group))
		buf_puts(&b, "initial_nodes:\n");
	if (n0)
		buf_printf(&b, "  - {group: " GROUP ", count: %d}\n", n0);
	if (pr->groups && pr->per_group)
		for (i = 0; i < pr->groups; i++)
			buf_printf(&b, "  - {group: %s-%04d, count: %d}\n", cl->prefix, i, pr->per_group);
	cl->scenario_section(&b, pr);
	return buf_take(&b);
}

static void world_free(struct world *wd)
{
	if (wd->cl)
		wd->cl->face_free(wd);
	bench_world_free(&wd->bw);
}

static int world_new(struct world *wd, const struct cloud *cl, const struct params *pr)
{
	struct errbuf err;
	char *text = scenario_text(cl, pr);
	char who[48];
	int rc;

	memset(wd, 0, sizeof(*wd));
	wd->cl = cl;
	snprintf(wd->who, sizeof(wd->who), "bench_cloud %s", cl->name);
	snprintf(who, sizeof(who), "%s scenario", wd->who);
	rc = bench_world_new(&wd->bw, text, who);
	free(text);
	if (rc < 0)
		return -1;
	wd->w = wd->bw.w;
	face_log.cl = cl;
	wd->flog.write = face_write;
	wd->flog.ctx = &face_log;
	wd->flog.min_level = LOG_DEBUG;
	if (cl->face_new(wd, &wd->flog, &err) < 0) {
		fprintf(stderr, "%s: %s\n", wd->who, err.msg);
		return -1;
	}
	wd->plog.write = prov_write;
	wd->plog.ctx = (void *)cl;
	wd->plog.min_level = LOG_INFO;
	return 0;
}

static struct provider *provider(struct world *wd, const struct config *c, const struct params *pr)
{
	struct errbuf err;
	struct provider *p = wd->cl->provider_new(wd, c, pr, &err);

	if (!p)
		fprintf(stderr, "%s: %s\n", wd->who, err.msg);
	return p;
}

/* The config a cloud's function writes into b, parsed (NULL: said on stderr). */
static struct config *parse_built(struct buf *b, const struct world *wd)
{
	char who[48];
	struct config *c;

	snprintf(who, sizeof(who), "%s config", wd->who);
	c = b->data ? bench_parse_config(b->data, who) : NULL;
	buf_free(b);
	return c;
}

static void group_stats(struct world *wd, size_t gi, struct sim_group_stats *s)
{
	sim_cloud_lock(wd->w->cloud);
	sim_cloud_group_stats(wd->w->cloud, gi, s);
	sim_cloud_unlock(wd->w->cloud);
}

/* ---- the launch run ---- */

static int run_launch(struct world *wd, const struct params *pr, struct launch_result *r)
{
	const struct cloud *cl = wd->cl;
	struct buf cfg = BUF_INIT;
	struct config *c;
	struct provider *p;
	struct bench_launches bl;
	struct sim_group_stats before, after;
	uint64_t face0[MAX_KINDS], ref0[MAX_KINDS], prov0[MAX_CALLS];
	double *answers;
	size_t i, n_ans, gi = (size_t)sim_cloud_find_group(wd->w->cloud, GROUP);
	int k, rc = 0;

	memset(r, 0, sizeof(*r));
	cl->launch_config(&cfg, wd, pr);
	c = parse_built(&cfg, wd);
	if (!c)
		return -1;
	p = provider(wd, c, pr);
	if (!p) {
		config_free(c);
		return -1;
	}

	/* one launch alone: its call, then the instance after the cloud's latency */
	r->probe_s = bench_launch_one(p, GROUP, wd->who);
	if (r->probe_s < 0) {
		rc = -1;
		goto out;
	}
	/* let the bucket fill up again (burst / qps, and some) */
	bench_sleep((double)pr->burst / pr->qps + 0.5);

	group_stats(wd, gi, &before);
	face_calls(face0, ref0);
	for (k = 0; k < cl->n_launch_calls; k++)
		prov0[k] = cl->calls(p, cl->launch_calls[k]);
	atomic_store(&launched_lines, 0);
	pthread_mutex_lock(&face_log.mu);
	face_log.n_answers = 0;
	pthread_mutex_unlock(&face_log.mu);

	bench_launch_all(p, GROUP, pr->launches, &bl, wd->who);
	r->min_call = bl.min_call;
	r->max_call = bl.max_call;
	r->reported = bl.reported;
	r->failed = bl.failed;
	r->measured = bl.last - bl.first;
	r->ideal = bench_bucket_ideal(pr->launches, pr->burst, pr->qps, pr->latency_s);
	r->create_ideal = bench_bucket_ideal(pr->launches, pr->burst, pr->qps, 0);
	group_stats(wd, gi, &after);
	r->created = (int)(after.launched - before.launched);
	r->logged = atomic_load(&launched_lines);
	face_calls(r->face, r->face_refused);
	for (i = 0; i < MAX_KINDS; i++) {
		r->face[i] -= face0[i];
		r->face_refused[i] -= ref0[i];
	}
	for (k = 0; k < cl->n_launch_calls; k++)
		r->prov[k] = cl->calls(p, cl->launch_calls[k]) - prov0[k];

	/* how late each timed answer came after the bucket's earliest: where time goes */
	pthread_mutex_lock(&face_log.mu);
	n_ans = face_log.n_answers;
	answers = calloc(n_ans + 1, sizeof(*answers));
	if (answers)
		memcpy(answers, face_log.answer, n_ans * sizeof(*answers));
	pthread_mutex_unlock(&face_log.mu);
	if (answers) {
		qsort(answers, n_ans, sizeof(*answers), bench_cmp_double);
		for (i = 0; i < n_ans; i++) {
			double kth = (double)i + 1 - pr->burst;
			double ideal = bl.first + (kth > 0 ? kth / pr->qps : 0) +
				       (cl->lag_latency ? pr->latency_s : 0);

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

/* Every instance made, reported and logged, one write each, none refused. */
static bool launch_ok(const struct cloud *cl, const struct params *pr, const struct launch_result *lr)
{
	return lr->failed == 0 && lr->created == pr->launches && lr->reported == pr->launches &&
	       (!cl->launched || lr->logged == pr->launches) &&
	       lr->face[cl->write_kind] == (uint64_t)pr->launches && lr->face_refused[cl->write_kind] == 0;
}

/* The rows each cloud's launch table opens with. */
static void print_launch_head(const char *probe_label, const struct launch_result *lr)
{
	bench_row_s(probe_label, lr->probe_s);
	bench_row_s("first call to last on_done (measured)", lr->measured);
	bench_row_s("token-bucket ideal ((n-b)/q + latency)", lr->ideal);
	bench_row_f("ratio (must be <= 1.1)", lr->measured / lr->ideal);
}

/* The figures each cloud's launch lines open with. */
static void print_launch_figures_head(const char *cloud, const struct params *pr, const struct launch_result *lr)
{
	printf("%s_launch_count %d\n", cloud, pr->launches);
	printf("%s_launch_probe_seconds %.3f\n", cloud, lr->probe_s);
	printf("%s_launch_seconds %.3f\n", cloud, lr->measured);
	printf("%s_launch_ideal_seconds %.3f\n", cloud, lr->ideal);
	printf("%s_launch_ratio %.3f\n", cloud, lr->measured / lr->ideal);
}

/* ---- the list run ---- */

static uint64_t list_count(const struct cloud *cl, const struct provider *p, const uint64_t face[MAX_KINDS],
			   int a)
{
	return cl->list_calls ? cl->calls(p, cl->list_calls[a]) : face[cl->list_kinds[a]];
}

static const char *list_column(const struct cloud *cl, int a)
{
	return cl->list_calls ? cl->list_calls[a] : cl->kinds[cl->list_kinds[a]];
}

static int run_list(struct world *wd, const struct params *pr, int mode, struct list_result *r)
{
	const struct cloud *cl = wd->cl;
	struct buf cfg = BUF_INIT;
	struct config *c;
	struct provider *p;
	uint64_t face0[MAX_KINDS], ref0[MAX_KINDS], face1[MAX_KINDS], ref1[MAX_KINDS];
	int rep, a, rc = 0;
	size_t k;

	memset(r, 0, sizeof(*r));
	cl->list_config(&cfg, wd, pr, mode);
	c = parse_built(&cfg, wd);
	p = c ? provider(wd, c, pr) : NULL;
	if (!p) {
		config_free(c);
		return -1;
	}
	face_calls(face0, ref0);
	for (rep = 0; rep < pr->reps; rep++) {
		uint64_t before[MAX_KINDS], now[MAX_KINDS], ref[MAX_KINDS];
		struct provider_group *gs = NULL;
		struct provider_status st;
		size_t n = 0, i, inst = 0;
		double t0;

		face_calls(now, ref);
		for (a = 0; a < cl->n_list; a++)
			before[a] = list_count(cl, p, now, a);
		t0 = bench_now();
		if (p->ops->list_groups(p, &gs, &n, &st) < 0) {
			fprintf(stderr, "%s: list_groups (%s): %s: %s\n", wd->who, cl->modes[mode],
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
		face_calls(now, ref);
		for (a = 0; a < cl->n_list; a++) {
			uint64_t d = list_count(cl, p, now, a) - before[a];

			if (rep == 0)
				r->first[a] = d;
			r->later[a] = d;
		}
	}
	face_calls(face1, ref1);
	for (k = 0; k < MAX_KINDS; k++) {
		r->face[k] = face1[k] - face0[k];
		r->refused += ref1[k] - ref0[k];
	}
	if (rc == 0) {
		bench_min_median(r->t, pr->reps, &r->min, &r->median);
		r->ok = r->groups == (size_t)pr->groups &&
			r->instances == (size_t)pr->groups * (size_t)pr->per_group &&
			(!cl->list_refused_fails || r->refused == 0);
		if (!r->ok)
			fprintf(stderr,
				"%s: list_groups (%s) gave %zu groups with %zu instances (%llu refused), "
				"want %d with %d\n",
				wd->who, cl->modes[mode], r->groups, r->instances, (unsigned long long)r->refused,
				pr->groups, pr->groups * pr->per_group);
	}
	provider_free(p);
	config_free(c);
	return rc;
}

/* AWS's and GCE's list table: a row a mode, calls first / later per column. */
static void print_list_table(const struct cloud *cl, const struct params *pr, int mode, const struct list_result *r)
{
	int a;

	if (mode >= cl->n_modes)
		return;
	if (mode < 0) {
		printf("\nlist: %d %s holding %d instances, read qps %g (burst %d), %d repetitions\n", pr->groups,
		       cl->groups_title, pr->groups * pr->per_group, pr->read_qps, (int)pr->read_qps, pr->reps);
		printf("  %-28s %8s %8s %8s %6s %9s", "groups", "first s", "min s", "median s", "groups", "instances");
		for (a = 0; a < cl->n_list; a++) /* AWS's without "Describe" */
			printf(" %s", list_column(cl, a) + (cl->list_calls ? 8 : 0));
		printf("  %s\n", cl->list_legend);
		return;
	}
	printf("  %-28s %8.3f %8.3f %8.3f %6zu %9zu", cl->modes[mode], r->t[0], r->min, r->median, r->groups,
	       r->instances);
	for (a = 0; a < cl->n_list; a++)
		printf(" %llu/%llu", (unsigned long long)r->first[a], (unsigned long long)r->later[a]);
	printf("\n");
}

/* AWS's and GCE's list figures. */
static void print_list_figures(const struct cloud *cl, const struct params *pr, const struct list_result *lists)
{
	static const char *const tag[MAX_MODES] = {"named", "named_described", "discovered"};
	int m, a;

	printf("%s_list_%s %d\n%s_list_instances %d\n%s_list_read_qps %g\n", cl->name, cl->groups_key, pr->groups,
	       cl->name, pr->groups * pr->per_group, cl->name, pr->read_qps);
	for (m = 0; m < cl->n_modes; m++) {
		const struct list_result *r = &lists[m];

		if (!r->ok)
			continue;
		printf("%s_list_%s_seconds_first %.4f\n", cl->name, tag[m], r->t[0]);
		printf("%s_list_%s_seconds_min %.4f\n", cl->name, tag[m], r->min);
		printf("%s_list_%s_seconds_median %.4f\n", cl->name, tag[m], r->median);
		for (a = 0; a < cl->n_list; a++) {
			printf("%s_list_%s_calls_first_%s %llu\n", cl->name, tag[m], list_column(cl, a),
			       (unsigned long long)r->first[a]);
			printf("%s_list_%s_calls_%s %llu\n", cl->name, tag[m], list_column(cl, a),
			       (unsigned long long)r->later[a]);
		}
	}
}

/* ==== AWS: fleets and ASGs over EC2 and Auto Scaling ==== */

#define STOCKOUT "mixed"
#define STOCKOUT_TYPES "[m5.large, m5.xlarge, m5.2xlarge, c5.xlarge, c5.2xlarge, r5.large, r5.xlarge, t3.medium]"
#define STOCKOUT_FIRST 24 /* instances of the first scale-up */
#define ACCESS_KEY "AKIABENCHSIMULATED01"
#define SECRET_KEY "YmVuY2gtc2VjcmV0LWtleS1mb3ItdGhlLXNpbXVsYXRvcg"
#define REGION "us-east-1"

enum { AK_CREATE_FLEET, AK_DASG, AK_OTHER, N_AK };

static const char *const aws_kinds[N_AK] = {"CreateFleet", "DescribeAutoScalingGroups", "other"};

/* "sim aws: METHOD URL SERVICE ACTION -> CODE" */
static int aws_kind_of(const char *msg, int *code)
{
	char method[16], url[64], svc[32], action[48];

	if (sscanf(msg, "sim aws: %15s %63s %31s %47s -> %d", method, url, svc, action, code) != 5)
		return -1;
	if (!strcmp(action, "CreateFleet"))
		return AK_CREATE_FLEET;
	return !strcmp(action, "DescribeAutoScalingGroups") ? AK_DASG : AK_OTHER;
}

static int aws_face_start(struct world *wd, const struct logger *flog, struct errbuf *err)
{
	struct aws_face_opts fo;

	memset(&fo, 0, sizeof(fo));
	fo.log = flog;
	wd->face = aws_face_new(sim_world_flavour(wd->w, &sim_cloud_aws), &fo, err);
	if (!wd->face)
		return -1;
	snprintf(wd->url, sizeof(wd->url), "http://127.0.0.1:%d", aws_face_port(wd->face));
	bench_env_set(&wd->env, "AWS_ENDPOINT_URL", wd->url);
	bench_env_set(&wd->env, "AWS_REGION", REGION);
	bench_env_set(&wd->env, "AWS_ACCESS_KEY_ID", ACCESS_KEY);
	bench_env_set(&wd->env, "AWS_SECRET_ACCESS_KEY", SECRET_KEY);
	bench_env_set(&wd->env, "AWS_EC2_METADATA_DISABLED", "true");
	wd->aenv.get = bench_env_get;
	wd->aenv.ud = &wd->env;
	return 0;
}

static void aws_face_stop(struct world *wd)
{
	aws_face_free(wd->face);
}

static void aws_scenario(struct buf *b, const struct params *pr)
{
	int i;

	buf_puts(b, "aws:\n  region: " REGION "\n  cluster: bench\n  credentials:\n"
		    "    access_key_id: " ACCESS_KEY "\n    secret_access_key: " SECRET_KEY "\n"
		    "  groups:\n    " GROUP ": {mode: fleet, zones: [us-east-1a, us-east-1b], "
		    "instance_types: [m5.large]}\n"
		    "    " STOCKOUT ": {mode: fleet, zones: [us-east-1a, us-east-1b, us-east-1c], "
		    "instance_types: " STOCKOUT_TYPES "}\n");
	for (i = 0; i < pr->groups; i++)
		buf_printf(b, "    asg-%04d: {zones: [us-east-1a, us-east-1b, us-east-1c], "
			      "instance_types: [m5.xlarge]}\n",
			   i);
}

static struct provider *aws_provider(struct world *wd, const struct config *c, const struct params *pr,
				     struct errbuf *err)
{
	struct aws_provider_opts o;

	(void)pr;
	memset(&o, 0, sizeof(o));
	o.config = c;
	o.log = &wd->plog;
	o.env = &wd->aenv;
	o.home = "/nonexistent";
	return aws_provider_new(&o, err);
}

static void aws_launch_config(struct buf *b, const struct world *wd, const struct params *pr)
{
	(void)wd;
	buf_printf(b, "node_groups:\n"
		      "  - name: " GROUP "\n    min: 0\n    max: %d\n"
		      "    template: {allocatable: {cpu: 2, memory: 8Gi, pods: 110}}\n"
		      "    aws:\n      mode: fleet\n      launch_template: " GROUP "\n"
		      "      instance_types: [m5.large]\n"
		      "      placements: [{zone: us-east-1a}, {zone: us-east-1b}]\n"
		      "provider:\n  kind: aws\n  qps: %g\n  burst: %d\n  read_qps: 100\n  read_burst: 100\n"
		      "  aws: {cluster_name: bench}\n",
		   pr->launches * 2 + 10, pr->qps, pr->burst);
}

/* modes: named with config templates, named with templates described, found by tags */
static void aws_list_config(struct buf *b, const struct world *wd, const struct params *pr, int mode)
{
	int i;

	(void)wd;
	if (mode == 2) {
		buf_puts(b, "node_groups: []\n");
	} else {
		buf_puts(b, "node_groups:\n");
		for (i = 0; i < pr->groups; i++) {
			buf_printf(b, "  - name: asg-%04d\n", i);
			if (mode == 0)
				buf_puts(b, "    template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}\n");
			buf_printf(b, "    aws: {asg: asg-%04d}\n", i);
		}
	}
	buf_printf(b, "provider:\n  kind: aws\n  qps: %g\n  burst: %d\n  read_qps: %g\n  read_burst: %d\n"
		      "  aws:\n    cluster_name: bench\n    auto_discovery: %s\n",
		   pr->qps, pr->burst, pr->read_qps, (int)pr->read_qps, mode == 2 ? "true" : "false");
}

static void aws_print_launch(const struct params *pr, const struct launch_result *lr)
{
	printf("\nlaunch: %d fleet launches of 1 instance at once, qps %g, burst %d, CreateFleet %gs\n", pr->launches,
	       pr->qps, pr->burst, pr->latency_s);
	print_launch_head("one CreateFleet launch alone", lr);
	bench_row_s("worst CreateFleet answer after its ideal", lr->worst_lag);
	bench_row_range("one launch, call to on_done", lr->min_call, lr->max_call);
	bench_row_n("instances created (cloud)", lr->created);
	bench_row_n("instances reported (on_instance)", lr->reported);
	bench_row_n("instances logged (\"aws: launched\")", lr->logged);
	bench_row_n("launches failed", lr->failed);
	printf("  %-44s %10llu (%llu refused)\n", "CreateFleet requests the face saw",
	       (unsigned long long)lr->face[AK_CREATE_FLEET], (unsigned long long)lr->face_refused[AK_CREATE_FLEET]);
	printf("  %-44s %10llu\n", "CreateFleet calls the provider made", (unsigned long long)lr->prov[0]);
}

static void aws_print_list(const struct cloud *cl, const struct params *pr, int mode, const struct list_result *r)
{
	uint64_t n = 0;
	int m;

	if (mode < cl->n_modes) {
		print_list_table(cl, pr, mode, r);
		return;
	}
	for (m = 0; m < cl->n_modes; m++)
		n += r[m].face[AK_DASG];
	printf("  (the face saw %llu DescribeAutoScalingGroups requests for the %d x 3 lists)\n",
	       (unsigned long long)n, pr->reps);
}

/* --- the stockout run (AWS only) --- */

struct stockout_result {
	double first_s, second_s;             /* each scale-up, call to on_done */
	int first_made, second_made;
	uint64_t first_calls, second_calls;   /* CreateFleet calls of each */
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
		fprintf(stderr, "bench_cloud aws stockout: launch of %d made %d: %s: %s\n", count, l.made,
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
			       "bench_cloud aws stockout config");
	if (!c)
		return -1;
	p = provider(wd, c, NULL);
	if (!p) {
		config_free(c);
		return -1;
	}
	if (p->ops->list_groups(p, &gs, &n_gs, &st) < 0) {
		fprintf(stderr, "bench_cloud aws stockout: list_groups: %s\n", st.message);
		rc = -1;
		goto out;
	}
	provider_groups_free(gs, n_gs);
	group_stats(wd, gi, &s0);
	c0 = aws_provider_calls(p, "CreateFleet");
	if (stockout_launch(p, STOCKOUT_FIRST, &r->first_made, &r->first_s) < 0)
		rc = -1;
	c1 = aws_provider_calls(p, "CreateFleet");
	group_stats(wd, gi, &s1);
	if (stockout_launch(p, STOCKOUT_FIRST / 3, &r->second_made, &r->second_s) < 0)
		rc = -1;
	group_stats(wd, gi, &s2);
	r->first_calls = c1 - c0;
	r->second_calls = aws_provider_calls(p, "CreateFleet") - c1;
	r->failed_first = s1.launch_failed - s0.launch_failed;
	r->failed_second = s2.launch_failed - s1.launch_failed;
	r->ok = rc == 0 && r->first_made == STOCKOUT_FIRST && r->second_made == STOCKOUT_FIRST / 3 &&
		r->first_calls >= 1 && r->first_calls <= 2 && r->failed_first > 0 && r->second_calls == 1 &&
		r->failed_second == 0;
out:
	provider_free(p);
	config_free(c);
	return rc;
}

static void print_stockout(const struct stockout_result *sr)
{
	printf("\nstockout: fleet group " STOCKOUT ", 8 instance types over 3 zones, m5.large in us-east-1a out of capacity\n");
	printf("  %-44s %10d in %llu CreateFleet call%s (%llu instance%s failed), %.3fs\n",
	       "first scale-up: instances made", sr->first_made, (unsigned long long)sr->first_calls,
	       sr->first_calls == 1 ? "" : "s", (unsigned long long)sr->failed_first, sr->failed_first == 1 ? "" : "s",
	       sr->first_s);
	printf("  %-44s %10d in %llu CreateFleet call%s (%llu instance%s failed), %.3fs\n",
	       "next scale-up: instances made", sr->second_made, (unsigned long long)sr->second_calls,
	       sr->second_calls == 1 ? "" : "s", (unsigned long long)sr->failed_second,
	       sr->failed_second == 1 ? "" : "s", sr->second_s);
	printf("  %-44s %10s\n", "(must be: all made, <= 2 calls, then 1 call, 0 failed)", sr->ok ? "ok" : "NOT MET");
}

static void print_stockout_figures(const struct stockout_result *sr)
{
	printf("aws_stockout_first_instances %d\n", sr->first_made);
	printf("aws_stockout_first_createfleet_calls %llu\n", (unsigned long long)sr->first_calls);
	printf("aws_stockout_first_seconds %.3f\n", sr->first_s);
	printf("aws_stockout_next_instances %d\n", sr->second_made);
	printf("aws_stockout_next_createfleet_calls %llu\n", (unsigned long long)sr->second_calls);
	printf("aws_stockout_next_failed_instances %llu\n", (unsigned long long)sr->failed_second);
}

static void aws_print_figures(const struct cloud *cl, const struct params *pr, const struct launch_result *lr,
			      const struct list_result *lists)
{
	if (lr) {
		print_launch_figures_head("aws", pr, lr);
		printf("aws_launch_worst_lag_seconds %.3f\n", lr->worst_lag);
		printf("aws_launch_instances_created %d\n", lr->created);
		printf("aws_launch_instances_reported %d\n", lr->reported);
		printf("aws_launch_createfleet_face_calls %llu\n", (unsigned long long)lr->face[AK_CREATE_FLEET]);
		printf("aws_launch_createfleet_provider_calls %llu\n", (unsigned long long)lr->prov[0]);
	}
	if (lists)
		print_list_figures(cl, pr, lists);
}

/* ==== GCE: zonal MIGs over Compute Engine ==== */

#define ZONE "us-central1-a"
#define PROJECT "sim-project"

/* The face's requests by kind: the compute method a path stands for. */
enum {
	GK_MIG_GET, GK_AGGREGATED, GK_LIST_MANAGED, GK_CREATE, GK_DELETE, GK_RESIZE,
	GK_OPERATION, GK_TEMPLATE, GK_MACHINE_TYPE, GK_TOKEN, GK_OTHER, N_GK
};

static const char *const gce_kinds[N_GK] = {
	"instanceGroupManagers.get", "aggregated.instanceGroupManagers", "listManagedInstances",
	"createInstances", "deleteInstances", "resize", "operations", "instanceTemplates.get",
	"machineTypes.get", "token", "other",
};

/* The compute method a path stands for: the first of these parts it holds. */
static const struct {
	const char *part;
	int kind;
} gce_paths[] = {
	{"/createInstances", GK_CREATE},     {"/listManagedInstances", GK_LIST_MANAGED},
	{"/deleteInstances", GK_DELETE},     {"/resize", GK_RESIZE},
	{"/aggregated/instanceGroupManagers", GK_AGGREGATED},
	{"/operations/", GK_OPERATION},      {"/instanceTemplates/", GK_TEMPLATE},
	{"/machineTypes/", GK_MACHINE_TYPE},
};

/* "sim gce: METHOD URL -> CODE" */
static int gce_kind_of(const char *msg, int *code)
{
	char method[16], url[512];
	size_t i;

	if (sscanf(msg, "sim gce: %15s %511s -> %d", method, url, code) != 3)
		return -1;
	for (i = 0; i < sizeof(gce_paths) / sizeof(gce_paths[0]); i++)
		if (strstr(url, gce_paths[i].part))
			return gce_paths[i].kind;
	if (!strcmp(method, "GET") && strstr(url, "/instanceGroupManagers/"))
		return GK_MIG_GET;
	return !strncmp(url, "/token", 6) ? GK_TOKEN : GK_OTHER;
}

static int gce_face_start(struct world *wd, const struct logger *flog, struct errbuf *err)
{
	struct gce_face_opts fo;

	if (!sim_world_flavour(wd->w, &sim_cloud_gce)) {
		errbuf_set(err, "the world has no GCE flavour");
		return -1;
	}
	memset(&fo, 0, sizeof(fo));
	fo.log = flog;
	wd->face = gce_face_new(sim_world_flavour(wd->w, &sim_cloud_gce), &fo, err);
	if (!wd->face)
		return -1;
	snprintf(wd->url, sizeof(wd->url), "http://127.0.0.1:%d/compute/v1/", gce_face_port(wd->face));
	snprintf(wd->dir, sizeof(wd->dir), "/tmp/bench_cloud.XXXXXX");
	if (!mkdtemp(wd->dir)) {
		wd->dir[0] = '\0';
		errbuf_set(err, "cannot make a directory for the key");
		return -1;
	}
	snprintf(wd->key, sizeof(wd->key), "%s/key.json", wd->dir);
	return gce_face_write_key(wd->face, wd->key, err);
}

static void gce_face_stop(struct world *wd)
{
	gce_face_free(wd->face);
	if (wd->key[0])
		unlink(wd->key);
	if (wd->dir[0])
		rmdir(wd->dir);
}

static void gce_scenario(struct buf *b, const struct params *pr)
{
	int i;

	buf_puts(b, "gce:\n  project: " PROJECT "\n  groups:\n    " GROUP ": {zone: " ZONE
		    ", machine_type: e2-standard-2}\n");
	for (i = 0; i < pr->groups; i++)
		buf_printf(b, "    mig-%04d: {zone: " ZONE ", machine_type: e2-standard-4}\n", i);
}

static struct provider *gce_provider(struct world *wd, const struct config *c, const struct params *pr,
				     struct errbuf *err)
{
	struct gce_provider_opts o;

	memset(&o, 0, sizeof(o));
	o.config = c;
	o.log = &wd->plog;
	o.env.get = bench_env_get;
	o.env.ud = &wd->env; /* empty: nothing from the process's environment */
	/* long enough for the last launch's bucket wait and its creation */
	o.launch_wait_ms = 120000;
	o.poll_ms = pr->poll_ms;
	return gce_provider_new(&o, err);
}

/* The provider: section every GCE run shares. */
static void gce_provider_section(struct buf *b, const struct world *wd, const struct params *pr)
{
	buf_printf(b, "provider:\n  kind: gce\n  qps: %g\n  burst: %d\n  read_qps: %g\n  read_burst: %d\n"
		      "  gce:\n    project: " PROJECT "\n    credentials_file: %s\n"
		      "    endpoints: {compute: \"%s\"}\n",
		   pr->qps, pr->burst, pr->read_qps, (int)pr->read_qps, wd->key, wd->url);
}

static void gce_launch_config(struct buf *b, const struct world *wd, const struct params *pr)
{
	buf_printf(b, "node_groups:\n  - name: " GROUP "\n    min: 0\n    max: %d\n"
		      "    template: {allocatable: {cpu: 2, memory: 8Gi, pods: 110}}\n"
		      "    gce: {zone: " ZONE "}\n",
		   pr->launches * 2 + 10);
	gce_provider_section(b, wd, pr);
}

/* modes: named with config templates, named with templates described, found by name prefix */
static void gce_list_config(struct buf *b, const struct world *wd, const struct params *pr, int mode)
{
	int i;

	if (mode == 2) {
		buf_puts(b, "node_groups: []\n");
	} else {
		buf_puts(b, "node_groups:\n");
		for (i = 0; i < pr->groups; i++) {
			buf_printf(b, "  - name: mig-%04d\n    min: 0\n    max: %d\n", i, pr->per_group * 2 + 1);
			if (mode == 0)
				buf_puts(b, "    template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}\n");
			buf_puts(b, "    gce: {zone: " ZONE "}\n");
		}
	}
	gce_provider_section(b, wd, pr);
	if (mode == 2)
		buf_printf(b, "    discovery:\n      - {prefix: mig-, min: 0, max: %d}\n", pr->per_group * 2 + 1);
}

static const char *const gce_launch_calls[] = {"instanceGroupManagers", "createInstances", "listManagedInstances",
					       "wait", "deleteInstances", "resize"};
#define N_GCE_LAUNCH_CALLS 6
/* the face's kind of each of gce_launch_calls, and its figure's name */
static const int gce_launch_kinds[N_GCE_LAUNCH_CALLS] = {GK_MIG_GET,   GK_CREATE, GK_LIST_MANAGED,
							 GK_OPERATION, GK_DELETE, GK_RESIZE};
static const char *const gce_launch_tags[N_GCE_LAUNCH_CALLS] = {
	"mig_get", "createinstances", "listmanagedinstances", "operation_wait", "deleteinstances", "resize"};

static void gce_print_launch(const struct params *pr, const struct launch_result *lr)
{
	int a;

	printf("\nlaunch: %d launches of 1 instance at once into zonal MIG " GROUP
	       ", qps %g, burst %d (reads: qps %g, burst %d), launch latency %gs, poll %d ms\n",
	       pr->launches, pr->qps, pr->burst, pr->read_qps, (int)pr->read_qps, pr->latency_s, pr->poll_ms);
	printf("  a launch: MIG get (read bucket), createInstances (mutating bucket, answered at once\n"
	       "  with a DONE operation), then the group's listManagedInstances, one a poll shared by\n"
	       "  every launch of the group, until the instance is RUNNING with currentAction NONE,\n"
	       "  which the cloud makes launch_latency after createInstances. 'done' is that on_done.\n");
	print_launch_head("one launch alone (MIG get to RUNNING)", lr);
	bench_row_s("first call to last createInstances answer", lr->last_create);
	bench_row_s("its ideal ((n-b)/q)", lr->create_ideal);
	bench_row_s("worst createInstances answer after ideal", lr->worst_lag);
	bench_row_range("one launch, call to on_done", lr->min_call, lr->max_call);
	bench_row_n("instances created (cloud)", lr->created);
	bench_row_n("instances reported (on_instance)", lr->reported);
	bench_row_n("instances logged (\"gce: launched\")", lr->logged);
	bench_row_n("launches failed", lr->failed);
	printf("  %-44s %10s %10s %8s\n", "calls per action", "provider", "face", "refused");
	for (a = 0; a < N_GCE_LAUNCH_CALLS; a++)
		printf("  %-44s %10llu %10llu %8llu\n", gce_kinds[gce_launch_kinds[a]], (unsigned long long)lr->prov[a],
		       (unsigned long long)lr->face[gce_launch_kinds[a]],
		       (unsigned long long)lr->face_refused[gce_launch_kinds[a]]);
	printf("  %-44s %10s %10llu %8llu\n", "token", "-", (unsigned long long)lr->face[GK_TOKEN],
	       (unsigned long long)lr->face_refused[GK_TOKEN]);
	bench_row_f("listManagedInstances per launch", (double)lr->prov[2] / pr->launches);
	bench_row_n("poll intervals in the run (measured / poll)", (int)ceil(lr->measured * 1000 / pr->poll_ms));
}

static void gce_print_figures(const struct cloud *cl, const struct params *pr, const struct launch_result *lr,
			      const struct list_result *lists)
{
	int a;

	if (lr) {
		print_launch_figures_head("gce", pr, lr);
		printf("gce_launch_last_create_seconds %.3f\n", lr->last_create);
		printf("gce_launch_create_ideal_seconds %.3f\n", lr->create_ideal);
		printf("gce_launch_worst_lag_seconds %.3f\n", lr->worst_lag);
		printf("gce_launch_instances_created %d\n", lr->created);
		printf("gce_launch_instances_reported %d\n", lr->reported);
		printf("gce_launch_qps %g\ngce_launch_burst %d\ngce_launch_read_qps %g\n", pr->qps, pr->burst,
		       pr->read_qps);
		for (a = 0; a < N_GCE_LAUNCH_CALLS; a++)
			printf("gce_launch_%s_provider_calls %llu\n", gce_launch_tags[a], (unsigned long long)lr->prov[a]);
		printf("gce_launch_createinstances_face_calls %llu\n", (unsigned long long)lr->face[GK_CREATE]);
		printf("gce_launch_listmanagedinstances_per_launch %.2f\n", (double)lr->prov[2] / pr->launches);
		printf("gce_launch_poll_intervals %d\n", (int)ceil(lr->measured * 1000 / pr->poll_ms));
	}
	if (lists)
		print_list_figures(cl, pr, lists);
}

/* ==== Azure: scale sets over ARM ==== */

#define SUB "6d5a1f3e-2b4c-4d8e-9f10-1a2b3c4d5e6f"
#define RG "bench-rg"

enum { ZK_VMSS_GET, ZK_VMSS_LIST, ZK_VMSS_PUT, ZK_VMS, ZK_DELETE, ZK_OPERATION, ZK_TOKEN, ZK_OTHER, N_ZK };

static const char *const azure_kinds[N_ZK] = {
	"virtualMachineScaleSets get", "virtualMachineScaleSets list", "virtualMachineScaleSets put",
	"virtualMachines list", "delete", "operations", "token", "other",
};

static const int azure_list_kinds[N_ZK] = {0, 1, 2, 3, 4, 5, 6, 7};

/* "sim azure: METHOD URL -> CODE" */
static int azure_kind_of(const char *msg, int *code)
{
	char method[16], url[1024];
	const char *q;
	size_t n;

	if (sscanf(msg, "sim azure: %15s %1023s -> %d", method, url, code) != 3)
		return -1;
	q = strchr(url, '?');
	n = q ? (size_t)(q - url) : strlen(url);
	if (strstr(url, "/oauth2/"))
		return ZK_TOKEN;
	if (strstr(url, "/operations/"))
		return ZK_OPERATION;
	if (strstr(url, "/virtualMachines"))
		return ZK_VMS;
	if (n > 7 && !strncmp(url + n - 7, "/delete", 7))
		return ZK_DELETE;
	if (n > 23 && !strncmp(url + n - 23, "virtualMachineScaleSets", 23))
		return ZK_VMSS_LIST;
	if (strstr(url, "/virtualMachineScaleSets/"))
		return !strcmp(method, "GET") ? ZK_VMSS_GET : ZK_VMSS_PUT;
	return ZK_OTHER;
}

static int azure_face_start(struct world *wd, const struct logger *flog, struct errbuf *err)
{
	struct azure_face_opts fo;

	if (!sim_world_flavour(wd->w, &sim_cloud_azure)) {
		errbuf_set(err, "the world has no Azure flavour");
		return -1;
	}
	memset(&fo, 0, sizeof(fo));
	fo.tls_port = -1;
	fo.log = flog;
	wd->face = azure_face_new(sim_world_flavour(wd->w, &sim_cloud_azure), &fo, err);
	if (!wd->face)
		return -1;
	snprintf(wd->arm, sizeof(wd->arm), "http://127.0.0.1:%d/", azure_face_port(wd->face));
	snprintf(wd->imds, sizeof(wd->imds), "http://127.0.0.1:%d", azure_face_port(wd->face));
	snprintf(wd->url, sizeof(wd->url), "%s", wd->arm);
	/* the managed identity of the simulator's IMDS; nothing from the process */
	bench_env_set(&wd->env, "ARM_SUBSCRIPTION_ID", SUB);
	bench_env_set(&wd->env, "ARM_RESOURCE_GROUP", RG);
	bench_env_set(&wd->env, "LUASCALE_SIM_AZURE_ARM_ENDPOINT", wd->arm);
	bench_env_set(&wd->env, "AZURE_POD_IDENTITY_AUTHORITY_HOST", wd->imds);
	return 0;
}

static void azure_face_stop(struct world *wd)
{
	azure_face_free(wd->face);
}

static void azure_scenario(struct buf *b, const struct params *pr)
{
	int i;

	buf_puts(b, "azure:\n  subscription_id: " SUB "\n  resource_group: " RG "\n  retry_after: 1s\n"
		    "  page_size: 50\n  groups:\n    " GROUP ": {vmss: " GROUP ", vm_size: Standard_D2s_v3}\n");
	for (i = 0; i < pr->groups; i++)
		buf_printf(b, "    set-%04d: {vmss: set-%04d, vm_size: Standard_D4s_v3, tags: "
			      "{\"k8s.io_cluster-autoscaler_enabled\": \"true\", \"min\": \"0\", \"max\": \"%d\"}}\n",
			   i, i, pr->per_group * 2 + 1);
}

static struct provider *azure_provider(struct world *wd, const struct config *c, const struct params *pr,
				       struct errbuf *err)
{
	struct azure_provider_opts o;

	(void)pr;
	memset(&o, 0, sizeof(o));
	o.config = c;
	o.log = &wd->plog;
	o.env.get = bench_env_get;
	o.env.ud = &wd->env;
	o.launch_wait_ms = 120000;
	return azure_provider_new(&o, err);
}

static void azure_launch_config(struct buf *b, const struct world *wd, const struct params *pr)
{
	buf_printf(b, "node_groups:\n  - name: " GROUP "\n    min: 0\n    max: %d\n"
		      "    template: {allocatable: {cpu: 2, memory: 8Gi, pods: 110}}\n"
		      "provider:\n  kind: azure\n  qps: %g\n  burst: %d\n  read_qps: %g\n  read_burst: %d\n",
		   burst_start(wd->cl, pr) + pr->launches * 2 + 10, pr->qps, pr->burst, pr->read_qps,
		   (int)pr->read_qps);
}

/* modes: named in the config, found by tags */
static void azure_list_config(struct buf *b, const struct world *wd, const struct params *pr, int mode)
{
	int i;

	(void)wd;
	if (mode == 1) {
		buf_puts(b, "provider:\n  kind: azure\n  azure:\n    discovery:\n"
			    "      - tags: {k8s.io_cluster-autoscaler_enabled: \"true\"}\n");
	} else {
		buf_puts(b, "node_groups:\n");
		for (i = 0; i < pr->groups; i++)
			buf_printf(b, "  - name: set-%04d\n", i);
		buf_puts(b, "provider:\n  kind: azure\n");
	}
	buf_printf(b, "  read_qps: %g\n  read_burst: %d\n", pr->read_qps, (int)pr->read_qps);
}

static void azure_print_launch(const struct params *pr, const struct launch_result *lr)
{
	int a;

	printf("\nlaunch: %d launches of 1 VM at once into scale set " GROUP
	       ", qps %g, burst %d (reads: qps %g), launch latency %gs\n",
	       pr->launches, pr->qps, pr->burst, pr->read_qps, pr->latency_s);
	printf("  a launch: its turn of the group's writes (the write token, VMSS get, VM list, PUT\n"
	       "  sku.capacity with If-Match), then the operation polled at its Retry-After and the VM\n"
	       "  list read until the new VM shows; 'done' is on_done after the operation ended.\n");
	print_launch_head("one launch alone (get to operation done)", lr);
	bench_row_range("one launch, call to on_done", lr->min_call, lr->max_call);
	bench_row_n("VMs created (cloud)", lr->created);
	bench_row_n("VMs reported (on_instance)", lr->reported);
	bench_row_n("launches failed", lr->failed);
	printf("  %-44s %10s %8s\n", "calls the face served", "calls", "refused");
	for (a = 0; a < N_ZK; a++)
		printf("  %-44s %10llu %8llu\n", azure_kinds[a], (unsigned long long)lr->face[a],
		       (unsigned long long)lr->face_refused[a]);
	printf("launch_measured_s %.3f\nlaunch_ideal_s %.3f\nlaunch_ratio %.3f\n", lr->measured, lr->ideal,
	       lr->measured / lr->ideal);
}

static void azure_print_list(const struct cloud *cl, const struct params *pr, int mode, const struct list_result *r)
{
	int a;

	if (mode >= cl->n_modes)
		return;
	if (mode < 0) {
		printf("\nlist: %d scale sets of %d VMs, %d runs each\n", pr->groups, pr->per_group, pr->reps);
		return;
	}
	printf("  %s:\n", cl->modes[mode]);
	bench_row_s("  list_groups, fastest", r->min);
	bench_row_s("  list_groups, median", r->median);
	for (a = 0; a < N_ZK; a++)
		if (r->later[a])
			bench_row_n(azure_kinds[a], (long long)r->later[a]);
	printf("list_%s_median_s %.4f\n", mode ? "discovered" : "named", r->median);
}

/* ---- the clouds ---- */

static const char *const aws_list_calls[] = {
	"DescribeAutoScalingGroups", "DescribeScalingActivities", "DescribeLaunchTemplateVersions",
	"DescribeInstanceTypes", "DescribeInstances",
};
static const char *const aws_launch_calls[] = {"CreateFleet"};
static const char *const aws_modes[] = {"named, config templates", "named, templates described", "found by tags"};
static const char *const gce_modes[] = {"named, config templates", "named, templates described",
					"found by name prefix"};
static const int gce_list_kinds[] = {GK_MIG_GET, GK_AGGREGATED, GK_LIST_MANAGED, GK_TEMPLATE, GK_MACHINE_TYPE};
static const char *const azure_modes[] = {"named in the config", "found by tags"};

static const struct cloud clouds[] = {
	{
		.name = "aws", .title = "AWS",
		.usage = "[launch|list|stockout|all] [launches<=1000 qps>0 burst>=1 latency_s asgs<=2000 "
			 "per_asg<=100 reps<=100 read_qps>=1]\n      defaults: all 50 2 5 2 500 10 5 1000",
		.prefix = "asg", .groups = 500, .max_groups = 2000, .stockout = true,
		.boot_delay = "2h", /* instances stay pending for the run: no node registers */
		.more_groups = "  - name: " STOCKOUT "\n    min: 0\n    max: 200\n"
			       "    template: {allocatable: {cpu: 2, memory: 8Gi, pods: 110}}\n",
		/* the stockout run's group: its first offering is out of capacity */
		.faults = "faults:\n  - {kind: launch_error, group: " STOCKOUT ", error: no_capacity, "
			  "instance_type: m5.large, zone: us-east-1a}\n",
		.launched = "aws: launched i-",
		.kinds = aws_kinds, .kind_of = aws_kind_of,
		.write_kind = AK_CREATE_FLEET, .timed = true, .lag_latency = true,
		.calls = aws_provider_calls, .launch_calls = aws_launch_calls, .n_launch_calls = 1,
		.modes = aws_modes, .n_modes = 3, .list_calls = aws_list_calls, .n_list = 5,
		.face_new = aws_face_start, .face_free = aws_face_stop, .scenario_section = aws_scenario,
		.provider_new = aws_provider, .launch_config = aws_launch_config, .list_config = aws_list_config,
		.print_launch = aws_print_launch, .print_list = aws_print_list, .print_figures = aws_print_figures,
		.groups_title = "ASGs", .groups_key = "asgs", .list_legend = "(calls: first list / later lists)",
	},
	{
		.name = "gce", .title = "GCE",
		.usage = "[launch|list|all] [launches<=1000 qps>0 burst>=1 latency_s migs<=2000 per_mig<=100 "
			 "reps<=100 read_qps>=1 poll_ms>=1]\n      defaults: all 50 2 5 2 200 10 5 1000 50",
		.prefix = "mig", .groups = 200, .max_groups = 2000, .poll = true,
		.boot_delay = "0s", /* an instance runs as soon as the cloud made it */
		.launched = "gce: launched ",
		.kinds = gce_kinds, .kind_of = gce_kind_of,
		.write_kind = GK_CREATE, .timed = true,
		.calls = gce_provider_calls, .launch_calls = gce_launch_calls, .n_launch_calls = N_GCE_LAUNCH_CALLS,
		.modes = gce_modes, .n_modes = 3, .list_kinds = gce_list_kinds, .n_list = 5,
		.list_refused_fails = true,
		.face_new = gce_face_start, .face_free = gce_face_stop, .scenario_section = gce_scenario,
		.provider_new = gce_provider, .launch_config = gce_launch_config, .list_config = gce_list_config,
		.print_launch = gce_print_launch, .print_list = print_list_table, .print_figures = gce_print_figures,
		.groups_title = "zonal MIGs", .groups_key = "migs",
		.list_legend = "(requests the face saw: first list / later lists)",
	},
	{
		.name = "azure", .title = "Azure",
		.usage = "[launch|list|all] [launches<=1000 qps>0 burst>=1 latency_s sets<=1000 per_set<=100 "
			 "reps<=100 read_qps>=1]\n      defaults: all 50 2 5 2 100 10 5 1000",
		.prefix = "set", .groups = 100, .max_groups = 1000, .prefill = true, .boot_delay = "0s",
		.kinds = azure_kinds, .kind_of = azure_kind_of, .write_kind = ZK_VMSS_PUT,
		.modes = azure_modes, .n_modes = 2, .list_kinds = azure_list_kinds, .n_list = N_ZK,
		.face_new = azure_face_start, .face_free = azure_face_stop, .scenario_section = azure_scenario,
		.provider_new = azure_provider, .launch_config = azure_launch_config,
		.list_config = azure_list_config, .print_launch = azure_print_launch,
		.print_list = azure_print_list,
	},
};
#define N_CLOUDS (sizeof(clouds) / sizeof(clouds[0]))

/* ---- main ---- */

static int usage(void)
{
	size_t i;

	fprintf(stderr, "usage:\n");
	for (i = 0; i < N_CLOUDS; i++)
		fprintf(stderr, "  bench_cloud --cloud %-5s %s\n", clouds[i].name, clouds[i].usage);
	return 2;
}

static double arg_num(int argc, char **argv, int i, double def)
{
	return argc > i ? atof(argv[i]) : def;
}

int main(int argc, char **argv)
{
	const struct cloud *cl = NULL;
	char *args[16];
	int n = 0, i, m, bad = 0;
	const char *what;
	struct params pr;
	struct world wd;
	static struct launch_result lr;
	static struct list_result lists[MAX_MODES];
	struct stockout_result sr;
	bool do_launch, do_list, do_stockout, launched = false;
	size_t c;

	args[n++] = argv[0];
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--cloud") && i + 1 < argc) {
			for (c = 0; c < N_CLOUDS; c++)
				if (!strcmp(argv[i + 1], clouds[c].name))
					cl = &clouds[c];
			if (!cl)
				return usage();
			i++;
		} else if (n < (int)(sizeof(args) / sizeof(args[0]))) {
			args[n++] = argv[i];
		} else {
			return usage();
		}
	}
	if (!cl)
		return usage();
	what = n > 1 ? args[1] : "all";
	do_launch = !strcmp(what, "launch") || !strcmp(what, "all");
	do_list = !strcmp(what, "list") || !strcmp(what, "all");
	do_stockout = cl->stockout && (!strcmp(what, "stockout") || !strcmp(what, "all"));
	pr.launches = (int)arg_num(n, args, 2, 50);
	pr.qps = arg_num(n, args, 3, 2);
	pr.burst = (int)arg_num(n, args, 4, 5);
	pr.latency_s = arg_num(n, args, 5, 2);
	pr.groups = (int)arg_num(n, args, 6, cl->groups);
	pr.per_group = (int)arg_num(n, args, 7, 10);
	pr.reps = (int)arg_num(n, args, 8, 5);
	pr.read_qps = arg_num(n, args, 9, 1000);
	pr.poll_ms = (int)arg_num(n, args, 10, 50);
	if ((!do_launch && !do_list && !do_stockout) || pr.launches < 1 || pr.launches > BENCH_MAX_LAUNCHES ||
	    pr.qps <= 0 || pr.burst < 1 || pr.latency_s < 0 || pr.groups < 1 || pr.groups > cl->max_groups ||
	    pr.per_group < 0 || pr.per_group > 100 || pr.reps < 1 || pr.reps > MAX_REPS || pr.read_qps < 1 ||
	    (cl->poll && pr.poll_ms < 1))
		return usage();
	if (!do_list)
		pr.groups = 1, pr.per_group = 0;
	signal(SIGPIPE, SIG_IGN);
	if (world_new(&wd, cl, &pr) < 0) {
		world_free(&wd);
		return 1;
	}
	printf("bench_cloud: the simulator's %s face at %s\n", cl->title, wd.url);
	fflush(stdout);

	if (do_launch) {
		if (run_launch(&wd, &pr, &lr) < 0) {
			bad = 1;
		} else {
			launched = true;
			cl->print_launch(&pr, &lr);
			if (!launch_ok(cl, &pr, &lr) || lr.measured / lr.ideal > 1.1) {
				fprintf(stderr, "%s: the launch run went wrong\n", wd.who);
				bad = 1;
			}
		}
	}
	if (do_stockout) {
		if (run_stockout(&wd, &sr) < 0 || !sr.ok)
			bad = 1;
		print_stockout(&sr);
	}
	if (do_list) {
		cl->print_list(cl, &pr, -1, NULL);
		for (m = 0; m < cl->n_modes; m++) {
			struct list_result *r = &lists[m];

			if (run_list(&wd, &pr, m, r) < 0 || !r->ok) {
				bad = 1;
				continue;
			}
			cl->print_list(cl, &pr, m, r);
		}
		cl->print_list(cl, &pr, cl->n_modes, lists);
	}

	/* machine-readable, one figure a line */
	if (cl->print_figures) {
		printf("\n");
		cl->print_figures(cl, &pr, launched ? &lr : NULL, NULL);
		if (do_stockout)
			print_stockout_figures(&sr);
		if (do_list)
			cl->print_figures(cl, &pr, NULL, lists);
	}
	world_free(&wd);
	return bad;
}
