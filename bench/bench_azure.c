/*
 * bench_azure: the Azure provider against the simulator's Azure face, in
 * one process on loopback. A launch run (many one-instance launches of one
 * scale set at once under the provider's mutating token bucket; each takes
 * its turn to read the capacity and write it with If-Match, then follows
 * its operation and reports its VM) timed against the token bucket's
 * ideal, and a list run (list_groups over many scale sets, named in the
 * config or found by their tags) timed with its calls counted per kind.
 * Prints a table and one "name value" line per figure.
 *
 *   build/bench/bench_azure [launch|list|all] [launches qps burst latency_s sets per_set reps read_qps]
 *   defaults: all 50 2 5 2 100 10 5 1000
 *
 * Exits 1 when a run went wrong (VMs missing, a call failed) or the launch
 * ratio is above 1.1. Takes about 40 s with the defaults.
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
#include "providers/azure/azure.h"
#include "providers/provider.h"
#include "sim/clouds/azure_face.h"
#include "sim/clouds/cloud.h"
#include "sim/world/scenario.h"

#define MAX_SETS 1000
#define MAX_REPS 100
#define GROUP "burst"
#define SUB "6d5a1f3e-2b4c-4d8e-9f10-1a2b3c4d5e6f"
#define RG "bench-rg"

/* ---- what the face was asked, from its request log ---- */

enum face_kind { FK_VMSS_GET, FK_VMSS_LIST, FK_VMSS_PUT, FK_VMS, FK_DELETE, FK_OPERATION, FK_TOKEN, FK_OTHER, N_FK };

static const char *const face_kind_name[N_FK] = {
	"virtualMachineScaleSets get", "virtualMachineScaleSets list", "virtualMachineScaleSets put",
	"virtualMachines list", "delete", "operations", "token", "other",
};

struct face_log {
	pthread_mutex_t mu;
	uint64_t n[N_FK];
	uint64_t refused[N_FK];
};

static struct face_log face_log = {.mu = PTHREAD_MUTEX_INITIALIZER};

static enum face_kind kind_of(const char *method, const char *url)
{
	const char *q = strchr(url, '?');
	size_t n = q ? (size_t)(q - url) : strlen(url);

	if (strstr(url, "/oauth2/"))
		return FK_TOKEN;
	if (strstr(url, "/operations/"))
		return FK_OPERATION;
	if (strstr(url, "/virtualMachines"))
		return FK_VMS;
	if (n > 7 && !strncmp(url + n - 7, "/delete", 7))
		return FK_DELETE;
	if (n > 23 && !strncmp(url + n - 23, "virtualMachineScaleSets", 23))
		return FK_VMSS_LIST;
	if (strstr(url, "/virtualMachineScaleSets/"))
		return !strcmp(method, "GET") ? FK_VMSS_GET : FK_VMSS_PUT;
	return FK_OTHER;
}

/* The face logs every request at debug level as "sim azure: METHOD URL -> CODE". */
static void face_write(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct face_log *fl = ctx;
	char method[16], url[1024];
	enum face_kind k;
	int code;

	(void)wall;
	if (level >= LOG_WARN)
		fprintf(stderr, "face: %s\n", msg);
	if (sscanf(msg, "sim azure: %15s %1023s -> %d", method, url, &code) != 3)
		return;
	k = kind_of(method, url);
	pthread_mutex_lock(&fl->mu);
	fl->n[k]++;
	if (code >= 400)
		fl->refused[k]++;
	pthread_mutex_unlock(&fl->mu);
}

static void face_calls(uint64_t n[N_FK], uint64_t refused[N_FK])
{
	pthread_mutex_lock(&face_log.mu);
	memcpy(n, face_log.n, sizeof(face_log.n));
	memcpy(refused, face_log.refused, sizeof(face_log.refused));
	pthread_mutex_unlock(&face_log.mu);
}

static void prov_write(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	(void)ctx;
	(void)wall;
	if (level >= LOG_WARN)
		fprintf(stderr, "provider: %s\n", msg);
}

/* ---- the world ---- */

struct params {
	int launches;
	double qps;
	int burst;
	double latency_s;
	int sets, per_set, reps;
	double read_qps;
};

struct world {
	struct bench_world bw;
	struct azure_face *face;
	char arm[64], imds[64];
	struct bench_env env;
	struct logger plog;
};

/*
 * VMs the burst scale set starts with: enough that the simulator's VM
 * array (16, doubling) already has room for every launch's VM, as it
 * hands the cloud pointers into that array while launches are in flight.
 */
static int burst_start(const struct params *pr)
{
	int n0;

	for (n0 = 1;; n0++) {
		int cap = 16;

		while (cap < n0)
			cap *= 2;
		if (cap >= n0 + pr->launches + 1)
			return n0;
	}
}

static char *scenario_text(const struct params *pr)
{
	struct buf b = BUF_INIT;
	int i;

	buf_printf(&b, "seed: 7\nstart: \"2026-12-01T08:00:00Z\"\nduration: 24h\nnode_groups:\n"
		       "  - name: " GROUP "\n    min: 0\n    max: %d\n"
		       "    template: {allocatable: {cpu: 2, memory: 8Gi, pods: 110}}\n",
		   burst_start(pr) + pr->launches * 2 + 10);
	for (i = 0; i < pr->sets; i++)
		buf_printf(&b, "  - name: set-%04d\n    min: 0\n    max: %d\n"
			       "    template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}\n",
			   i, pr->per_set * 2 + 1);
	buf_printf(&b, "cloud: {launch_latency: %lldms, boot_delay: 0s, boot_jitter: 0s, "
		       "terminate_latency: 1s, shutdown_delay: 1s}\n",
		   (long long)llround(pr->latency_s * 1000));
	buf_printf(&b, "initial_nodes:\n  - {group: " GROUP ", count: %d}\n", burst_start(pr));
	if (pr->sets && pr->per_set) {
		for (i = 0; i < pr->sets; i++)
			buf_printf(&b, "  - {group: set-%04d, count: %d}\n", i, pr->per_set);
	}
	buf_puts(&b, "azure:\n  subscription_id: " SUB "\n  resource_group: " RG "\n  retry_after: 1s\n"
		     "  page_size: 50\n  groups:\n    " GROUP ": {vmss: " GROUP ", vm_size: Standard_D2s_v3}\n");
	for (i = 0; i < pr->sets; i++)
		buf_printf(&b, "    set-%04d: {vmss: set-%04d, vm_size: Standard_D4s_v3, tags: "
			       "{\"k8s.io_cluster-autoscaler_enabled\": \"true\", \"min\": \"0\", \"max\": \"%d\"}}\n",
			   i, i, pr->per_set * 2 + 1);
	return buf_take(&b);
}

static int world_new(struct world *wd, const struct params *pr)
{
	struct azure_face_opts fo;
	static struct logger flog;
	struct errbuf err;
	char *text = scenario_text(pr);
	int rc;

	memset(wd, 0, sizeof(*wd));
	rc = bench_world_new(&wd->bw, text, "bench_azure scenario");
	free(text);
	if (rc < 0)
		return -1;
	if (!wd->bw.w->azure) {
		fprintf(stderr, "bench_azure: the world has no Azure flavour\n");
		return -1;
	}
	flog.write = face_write;
	flog.ctx = &face_log;
	flog.min_level = LOG_DEBUG;
	memset(&fo, 0, sizeof(fo));
	fo.tls_port = -1;
	fo.log = &flog;
	wd->face = azure_face_new(wd->bw.w->azure, &fo, &err);
	if (!wd->face) {
		fprintf(stderr, "bench_azure: %s\n", err.msg);
		return -1;
	}
	snprintf(wd->arm, sizeof(wd->arm), "http://127.0.0.1:%d/", azure_face_port(wd->face));
	snprintf(wd->imds, sizeof(wd->imds), "http://127.0.0.1:%d", azure_face_port(wd->face));
	/* the managed identity of the simulator's IMDS; nothing from the process */
	bench_env_set(&wd->env, "ARM_SUBSCRIPTION_ID", SUB);
	bench_env_set(&wd->env, "ARM_RESOURCE_GROUP", RG);
	bench_env_set(&wd->env, "LUASCALE_SIM_AZURE_ARM_ENDPOINT", wd->arm);
	bench_env_set(&wd->env, "AZURE_POD_IDENTITY_AUTHORITY_HOST", wd->imds);
	wd->plog.write = prov_write;
	wd->plog.min_level = LOG_INFO;
	return 0;
}

static void world_free(struct world *wd)
{
	azure_face_free(wd->face);
	bench_world_free(&wd->bw);
}

static struct provider *provider(struct world *wd, const struct config *c)
{
	struct azure_provider_opts o;
	struct errbuf err;
	struct provider *p;

	memset(&o, 0, sizeof(o));
	o.config = c;
	o.log = &wd->plog;
	o.env.get = bench_env_get;
	o.env.ud = &wd->env;
	o.launch_wait_ms = 120000;
	p = azure_provider_new(&o, &err);
	if (!p)
		fprintf(stderr, "bench_azure: %s\n", err.msg);
	return p;
}

/* ---- the launch run ---- */

struct launch_result {
	double probe_s, measured, ideal, min_call, max_call;
	int created, reported, failed;
	uint64_t face[N_FK], refused[N_FK];
};

static int run_launch(struct world *wd, const struct params *pr, struct launch_result *r)
{
	struct buf cfg = BUF_INIT;
	struct config *c;
	struct provider *p;
	struct bench_launches bl;
	struct sim_group_stats before, after;
	uint64_t f0[N_FK], r0[N_FK];
	size_t i, gi = (size_t)sim_cloud_find_group(wd->bw.w->cloud, GROUP);
	int rc = 0;

	memset(r, 0, sizeof(*r));
	buf_printf(&cfg, "node_groups:\n  - name: " GROUP "\n    min: 0\n    max: %d\n"
			 "    template: {allocatable: {cpu: 2, memory: 8Gi, pods: 110}}\n"
			 "provider:\n  kind: azure\n  qps: %g\n  burst: %d\n  read_qps: %g\n  read_burst: %d\n",
		   burst_start(pr) + pr->launches * 2 + 10, pr->qps, pr->burst, pr->read_qps, (int)pr->read_qps);
	c = cfg.data ? bench_parse_config(cfg.data, "bench_azure config") : NULL;
	buf_free(&cfg);
	if (!c)
		return -1;
	p = provider(wd, c);
	if (!p) {
		config_free(c);
		return -1;
	}
	r->probe_s = bench_launch_one(p, GROUP, "bench_azure");
	if (r->probe_s < 0) {
		rc = -1;
		goto out;
	}
	bench_sleep((double)pr->burst / pr->qps + 0.5);
	sim_cloud_lock(wd->bw.w->cloud);
	sim_cloud_group_stats(wd->bw.w->cloud, gi, &before);
	sim_cloud_unlock(wd->bw.w->cloud);
	face_calls(f0, r0);
	bench_launch_all(p, GROUP, pr->launches, &bl, "bench_azure");
	r->min_call = bl.min_call;
	r->max_call = bl.max_call;
	r->reported = bl.reported;
	r->failed = bl.failed;
	r->measured = bl.last - bl.first;
	r->ideal = bench_bucket_ideal(pr->launches, pr->burst, pr->qps, pr->latency_s);
	sim_cloud_lock(wd->bw.w->cloud);
	sim_cloud_group_stats(wd->bw.w->cloud, gi, &after);
	sim_cloud_unlock(wd->bw.w->cloud);
	r->created = (int)(after.launched - before.launched);
	face_calls(r->face, r->refused);
	for (i = 0; i < N_FK; i++) {
		r->face[i] -= f0[i];
		r->refused[i] -= r0[i];
	}
out:
	provider_free(p);
	config_free(c);
	return rc;
}

/* ---- the list run ---- */

struct list_result {
	const char *name;
	double t[MAX_REPS], min, median;
	uint64_t calls[N_FK], refused;
	size_t groups, instances;
	int ok;
};

static int run_list(struct world *wd, const struct params *pr, bool discovered, struct list_result *r)
{
	struct buf cfg = BUF_INIT;
	struct config *c;
	struct provider *p;
	uint64_t f0[N_FK], r0[N_FK], f1[N_FK], r1[N_FK];
	int i, k;

	if (discovered) {
		buf_puts(&cfg, "provider:\n  kind: azure\n  azure:\n    discovery:\n"
			       "      - tags: {k8s.io_cluster-autoscaler_enabled: \"true\"}\n");
	} else {
		buf_puts(&cfg, "node_groups:\n");
		for (i = 0; i < pr->sets; i++)
			buf_printf(&cfg, "  - name: set-%04d\n", i);
		buf_puts(&cfg, "provider:\n  kind: azure\n");
	}
	buf_printf(&cfg, "  read_qps: %g\n  read_burst: %d\n", pr->read_qps, (int)pr->read_qps);
	c = cfg.data ? bench_parse_config(cfg.data, "bench_azure config") : NULL;
	buf_free(&cfg);
	if (!c)
		return -1;
	p = provider(wd, c);
	if (!p) {
		config_free(c);
		return -1;
	}
	r->ok = 1;
	for (k = 0; k < pr->reps; k++) {
		struct provider_group *gs = NULL;
		struct provider_status st;
		size_t n = 0, j;
		double t0;

		face_calls(f0, r0);
		t0 = bench_now();
		if (p->ops->list_groups(p, &gs, &n, &st) < 0) {
			fprintf(stderr, "bench_azure: list_groups: %s\n", st.message);
			r->ok = 0;
			break;
		}
		r->t[k] = bench_now() - t0;
		face_calls(f1, r1);
		r->groups = n;
		r->instances = 0;
		for (j = 0; j < n; j++)
			r->instances += gs[j].n_instances;
		for (j = 0; j < N_FK; j++) {
			r->calls[j] = f1[j] - f0[j];
			r->refused += r1[j] - r0[j];
		}
		provider_groups_free(gs, n);
	}
	if (r->ok)
		bench_min_median(r->t, pr->reps, &r->min, &r->median);
	provider_free(p);
	config_free(c);
	return r->ok ? 0 : -1;
}

static double arg_num(int argc, char **argv, int i, double dflt)
{
	return argc > i ? atof(argv[i]) : dflt;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "all";
	struct params pr;
	struct world wd;
	struct launch_result lr;
	static struct list_result lists[2] = {{.name = "named in the config"}, {.name = "found by tags"}};
	bool do_launch = !strcmp(what, "launch") || !strcmp(what, "all");
	bool do_list = !strcmp(what, "list") || !strcmp(what, "all");
	int bad = 0, m;
	size_t a;

	pr.launches = (int)arg_num(argc, argv, 2, 50);
	pr.qps = arg_num(argc, argv, 3, 2);
	pr.burst = (int)arg_num(argc, argv, 4, 5);
	pr.latency_s = arg_num(argc, argv, 5, 2);
	pr.sets = (int)arg_num(argc, argv, 6, 100);
	pr.per_set = (int)arg_num(argc, argv, 7, 10);
	pr.reps = (int)arg_num(argc, argv, 8, 5);
	pr.read_qps = arg_num(argc, argv, 9, 1000);
	if ((!do_launch && !do_list) || pr.launches < 1 || pr.launches > BENCH_MAX_LAUNCHES || pr.qps <= 0 ||
	    pr.burst < 1 || pr.latency_s < 0 || pr.sets < 1 || pr.sets > MAX_SETS || pr.per_set < 0 ||
	    pr.per_set > 100 || pr.reps < 1 || pr.reps > MAX_REPS || pr.read_qps < 1) {
		fprintf(stderr, "usage: bench_azure [launch|list|all] [launches<=%d qps>0 burst>=1 latency_s "
				"sets<=%d per_set<=100 reps<=%d read_qps>=1]\n",
			BENCH_MAX_LAUNCHES, MAX_SETS, MAX_REPS);
		return 2;
	}
	if (!do_list)
		pr.sets = 1, pr.per_set = 0;
	signal(SIGPIPE, SIG_IGN);
	if (world_new(&wd, &pr) < 0) {
		world_free(&wd);
		return 1;
	}
	printf("bench_azure: the simulator's Azure face at %s\n", wd.arm);
	fflush(stdout);
	if (do_launch) {
		if (run_launch(&wd, &pr, &lr) < 0) {
			bad = 1;
		} else {
			bool ok = lr.failed == 0 && lr.created == pr.launches && lr.reported == pr.launches &&
				  lr.face[FK_VMSS_PUT] == (uint64_t)pr.launches && lr.refused[FK_VMSS_PUT] == 0;

			printf("\nlaunch: %d launches of 1 VM at once into scale set " GROUP
			       ", qps %g, burst %d (reads: qps %g), launch latency %gs\n",
			       pr.launches, pr.qps, pr.burst, pr.read_qps, pr.latency_s);
			printf("  a launch: its turn of the group's writes (the write token, VMSS get, VM list, PUT\n"
			       "  sku.capacity with If-Match), then the operation polled at its Retry-After and the VM\n"
			       "  list read until the new VM shows; 'done' is on_done after the operation ended.\n");
			bench_row_s("one launch alone (get to operation done)", lr.probe_s);
			bench_row_s("first call to last on_done (measured)", lr.measured);
			bench_row_s("token-bucket ideal ((n-b)/q + latency)", lr.ideal);
			bench_row_f("ratio (must be <= 1.1)", lr.measured / lr.ideal);
			bench_row_range("one launch, call to on_done", lr.min_call, lr.max_call);
			bench_row_n("VMs created (cloud)", lr.created);
			bench_row_n("VMs reported (on_instance)", lr.reported);
			bench_row_n("launches failed", lr.failed);
			printf("  %-44s %10s %8s\n", "calls the face served", "calls", "refused");
			for (a = 0; a < N_FK; a++)
				printf("  %-44s %10llu %8llu\n", face_kind_name[a], (unsigned long long)lr.face[a],
				       (unsigned long long)lr.refused[a]);
			printf("launch_measured_s %.3f\nlaunch_ideal_s %.3f\nlaunch_ratio %.3f\n", lr.measured, lr.ideal,
			       lr.measured / lr.ideal);
			if (!ok || lr.measured / lr.ideal > 1.1) {
				fprintf(stderr, "bench_azure: the launch run went wrong\n");
				bad = 1;
			}
		}
	}
	if (do_list) {
		printf("\nlist: %d scale sets of %d VMs, %d runs each\n", pr.sets, pr.per_set, pr.reps);
		for (m = 0; m < 2; m++) {
			struct list_result *l = &lists[m];

			if (run_list(&wd, &pr, m == 1, l) < 0 || l->groups != (size_t)pr.sets ||
			    l->instances != (size_t)(pr.sets * pr.per_set)) {
				fprintf(stderr, "bench_azure: the list run (%s) went wrong: %zu groups, %zu VMs\n", l->name,
					l->groups, l->instances);
				bad = 1;
				continue;
			}
			printf("  %s:\n", l->name);
			bench_row_s("  list_groups, fastest", l->min);
			bench_row_s("  list_groups, median", l->median);
			for (a = 0; a < N_FK; a++)
				if (l->calls[a])
					bench_row_n(face_kind_name[a], (long long)l->calls[a]);
			printf("list_%s_median_s %.4f\n", m ? "discovered" : "named", l->median);
		}
	}
	world_free(&wd);
	return bad;
}
