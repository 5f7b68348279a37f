/*
 * bench_launch: k packings (one scale-up each), every launch call taking L
 * seconds in the simulated cloud, the provider limited to q QPS with burst
 * b. Prints the time until the last launch finished divided by the ideal
 * bound — the earliest each call could start under the token bucket, plus
 * L — for the actuator (parallel launches), next to the same launches made
 * one after another. Runs in virtual time, then once in real time with a
 * small L, then in real time through the remote sim provider against the
 * simulated API server's sim.luascale.io endpoints (what `luascale run`
 * does against `luascale sim`), on the daemon's growing pool and, as the
 * "before", on a fixed pool of 8.
 *   build/bench/bench_launch [k q b L_virtual L_real [k_r q_r b_r L_r]]
 * (remote defaults: 200 launches, 20 calls/s, burst 20, 2 s a call;
 * k_r 0 skips the remote run)
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "engine/actuator.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "policy/plan.h"
#include "providers/sim/sim.h"
#include "providers/simremote/simremote.h"
#include "runtime/clock.h"
#include "runtime/executor.h"
#include "sim/apiserver/apiserver.h"
#include "sim/clouds/cloud.h"
#include "sim/world/scenario.h"

#define S CLOCK_NS_PER_S

/* The earliest the last of k calls can finish: call i may start at
 * max(0, (i - b + 1) / q) under a bucket that starts full. */
static double ideal_bound(int k, double q, int b, double L)
{
	double last = k > b ? (double)(k - b) / q : 0;

	return last + L;
}

static struct node_group *make_groups(int k)
{
	struct node_group *g = calloc((size_t)k, sizeof(*g));
	static char names[1024][16];
	int i;

	for (i = 0; i < k && i < 1024; i++) {
		snprintf(names[i], sizeof(names[i]), "pack-%03d", i);
		g[i].name = names[i];
		g[i].max = 100;
		g[i].target = -1;
		g[i].tmpl.allocatable.cpu_m = 4000;
		g[i].tmpl.allocatable.memory = 16LL << 30;
		g[i].tmpl.allocatable.pods = 110;
	}
	return g;
}

struct world {
	struct node_group *groups; /* the cloud borrows them */
	struct clock *clock;
	struct executor *ex;
	struct sim_cloud *cloud;
	struct provider *prov;
	bool real;
};

static int world_init(struct world *w, bool real, int k, double q, int b, double L)
{
	struct sim_cloud_opts o;
	struct provider_limits lim = {q, b, 0, 0};
	struct node_group *groups = make_groups(k);
	struct errbuf err;

	memset(w, 0, sizeof(*w));
	w->real = real;
	w->clock = real ? clock_real() : vclock_new(1796032800);
	w->ex = real ? executor_new_pool(8, 1024) : executor_new_virtual(w->clock);
	sim_cloud_opts_default(&o);
	o.launch_latency_ns = (int64_t)(L * S);
	o.boot_delay_ns = 60 * S;
	w->groups = groups;
	w->cloud = sim_cloud_new(w->ex, groups, (size_t)k, &o, &err);
	if (!w->cloud) {
		fprintf(stderr, "bench: %s\n", err.msg);
		return -1;
	}
	w->prov = sim_provider_new(w->cloud, &lim, &err);
	if (!w->prov) {
		fprintf(stderr, "bench: %s\n", err.msg);
		return -1;
	}
	return 0;
}

static void world_free(struct world *w)
{
	executor_shutdown(w->ex, clock_now(w->clock));
	provider_free(w->prov);
	sim_cloud_free(w->cloud);
	free(w->groups);
	if (!w->real)
		vclock_free(w->clock);
}

/* ---- the actuator: all k scale-ups in one plan ---- */

static double run_actuator(struct world *w, int k)
{
	struct actuator_config cfg;
	struct actuator_stats st;
	struct actuator *a;
	struct plan p;
	int64_t start = clock_now(w->clock), end;
	int i;

	actuator_config_default(&cfg);
	a = actuator_new(w->ex, w->prov, NULL, &cfg, NULL);
	plan_init(&p);
	for (i = 0; i < k; i++) {
		struct action act;
		char group[16];

		memset(&act, 0, sizeof(act));
		snprintf(group, sizeof(group), "pack-%03d", i);
		act.type = ACTION_SCALE_UP;
		act.group = group;
		act.count = 3;
		act.reason = "bench";
		act.where = "";
		plan_add(&p, &act);
	}
	actuator_execute(a, &p, NULL);
	for (;;) {
		if (w->real) {
			struct timespec ts = {0, 2000000};

			nanosleep(&ts, NULL);
		} else {
			executor_run_until(w->ex, clock_now(w->clock) + S / 100);
		}
		actuator_get_stats(a, &st);
		if (st.busy == 0)
			break;
	}
	end = clock_now(w->clock);
	plan_free(&p);
	executor_shutdown(w->ex, clock_now(w->clock));
	w->ex = w->real ? executor_new_pool(1, 4) : executor_new_virtual(w->clock);
	actuator_free(a);
	return (double)(end - start) / S;
}

/* ---- the same calls one after another ---- */

struct seq {
	struct world *w;
	int k, next;
	bool done;
	pthread_mutex_t mu;
};

static void seq_done(void *ctx, int count, const struct provider_status *st);

static void seq_next(struct seq *s)
{
	char group[16];

	if (s->next == s->k) {
		pthread_mutex_lock(&s->mu);
		s->done = true;
		pthread_mutex_unlock(&s->mu);
		return;
	}
	snprintf(group, sizeof(group), "pack-%03d", s->next++);
	s->w->prov->ops->launch(s->w->prov, group, 3, NULL, seq_done, s);
}

static void seq_instance(void *ctx, const struct provider_instance *inst)
{
	(void)ctx;
	(void)inst;
}

static void seq_done(void *ctx, int count, const struct provider_status *st)
{
	(void)count;
	(void)st;
	seq_next(ctx);
}

static double run_sequential(struct world *w, int k)
{
	struct seq s = {w, k, 0, false, PTHREAD_MUTEX_INITIALIZER};
	int64_t start = clock_now(w->clock);
	bool done = false;

	(void)seq_instance;
	seq_next(&s);
	while (!done) {
		if (w->real) {
			struct timespec ts = {0, 2000000};

			nanosleep(&ts, NULL);
		} else {
			executor_run_until(w->ex, clock_now(w->clock) + S / 100);
		}
		pthread_mutex_lock(&s.mu);
		done = s.done;
		pthread_mutex_unlock(&s.mu);
	}
	return (double)(clock_now(w->clock) - start) / S;
}

static int measure(bool real, int k, double q, int b, double L)
{
	struct world w;
	double t_par, t_seq, ideal = ideal_bound(k, q, b, L);

	if (world_init(&w, real, k, q, b, L) < 0)
		return 1;
	t_par = run_actuator(&w, k);
	world_free(&w);
	if (world_init(&w, real, k, q, b, L) < 0)
		return 1;
	t_seq = run_sequential(&w, k);
	world_free(&w);
	printf("%-7s k=%d q=%g b=%d L=%gs: ideal %.2fs | actuator %.2fs, ratio %.3f | one after another %.2fs, ratio %.3f\n",
	       real ? "real" : "virtual", k, q, b, L, ideal, t_par, t_par / ideal, t_seq, t_seq / ideal);
	return 0;
}

/* ---- real time, over HTTP: the remote sim provider against the simulated
 * API server (in process), the actuator on a given pool ---- */

struct remote {
	struct sim_scenario *sc;
	struct executor *sim_ex; /* the simulated world's clockwork */
	struct sim_world *w;
	struct apiserver *srv;
	struct kube_config *kc;
	struct kube_client *client;
	char kubeconfig[64];
};

static int remote_init(struct remote *r, int k, double L)
{
	struct apiserver_opts o;
	struct errbuf err;
	struct buf y;
	int i, fd;

	memset(r, 0, sizeof(*r));
	y = (struct buf)BUF_INIT;
	buf_printf(&y, "seed: 1\nstart: \"2026-11-30T08:00:00Z\"\nduration: 24h\nnode_groups:\n");
	for (i = 0; i < k; i++)
		buf_printf(&y, "  - {name: pack-%03d, min: 0, max: 10, price_per_hour: 0.2,\n"
			   "     template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}\n", i);
	buf_printf(&y, "cloud: {boot_delay: 1h, launch_latency: %lldms}\n", (long long)(L * 1000));
	r->sc = sim_scenario_parse(y.data, y.len, "bench_launch.yaml", &err);
	buf_free(&y);
	if (!r->sc)
		goto fail;
	r->sim_ex = executor_new_pool(2, 1u << 16);
	r->w = r->sim_ex ? sim_world_new(r->sc, r->sim_ex, &err) : NULL;
	if (!r->w)
		goto fail;
	apiserver_opts_default(&o);
	r->srv = apiserver_new(r->w->cluster, &o, &err);
	if (!r->srv)
		goto fail;
	snprintf(r->kubeconfig, sizeof(r->kubeconfig), "/tmp/luascale-bench-launch-XXXXXX");
	fd = mkstemp(r->kubeconfig);
	if (fd < 0) {
		errbuf_set(&err, "cannot make a temporary kubeconfig");
		goto fail;
	}
	close(fd);
	if (apiserver_write_kubeconfig(r->srv, r->kubeconfig, &err) < 0 ||
	    kubeconfig_load(r->kubeconfig, "luascale-sim", &r->kc, &err) < 0)
		goto fail;
	/* no write limit of the Kubernetes client: the provider's bucket is
	 * the one under test */
	r->client = kube_client_new(r->kc, NULL, &err);
	if (!r->client)
		goto fail;
	return 0;
fail:
	fprintf(stderr, "bench: remote sim: %s\n", err.msg);
	return -1;
}

static void remote_free(struct remote *r)
{
	kube_client_free(r->client);
	kube_config_free(r->kc);
	apiserver_free(r->srv);
	executor_shutdown(r->sim_ex, clock_now(clock_real()) + 5 * S);
	sim_world_free(r->w);
	sim_scenario_free(r->sc);
	if (r->kubeconfig[0])
		unlink(r->kubeconfig);
}

/* k scale-ups of one instance each, in one plan, through a fresh provider
 * (its bucket full) on 'ex'. Returns the seconds until the last was over,
 * or -1; *peak the most pool threads at once, *failed the failed calls. */
static double run_remote(struct remote *r, struct executor *ex, int k, double q, int b,
			 int *peak, unsigned long long *failed)
{
	struct provider_limits lim = {q, b, 100, 100};
	struct actuator_config cfg;
	struct actuator_stats st;
	struct executor_stats es;
	struct actuator *a;
	struct provider *prov;
	struct errbuf err;
	struct plan p;
	int64_t start, end;
	int i;

	prov = simremote_provider_new(r->client, &lim, &err);
	if (!prov) {
		fprintf(stderr, "bench: %s\n", err.msg);
		return -1;
	}
	actuator_config_default(&cfg);
	a = actuator_new(ex, prov, NULL, &cfg, NULL);
	plan_init(&p);
	start = clock_now(clock_real());
	for (i = 0; i < k; i++) {
		struct action act;
		char group[16];

		memset(&act, 0, sizeof(act));
		snprintf(group, sizeof(group), "pack-%03d", i);
		act.type = ACTION_SCALE_UP;
		act.group = group;
		act.count = 1;
		act.reason = "bench";
		act.where = "";
		plan_add(&p, &act);
	}
	actuator_execute(a, &p, NULL);
	for (;;) {
		struct timespec ts = {0, 5000000};

		actuator_get_stats(a, &st);
		if (st.busy == 0)
			break;
		nanosleep(&ts, NULL);
	}
	end = clock_now(clock_real());
	executor_stats(ex, &es);
	*peak = es.peak;
	*failed = (unsigned long long)st.launch_failures;
	executor_shutdown(ex, clock_now(clock_real()) + 5 * S);
	actuator_free(a);
	provider_free(prov);
	plan_free(&p);
	return (double)(end - start) / S;
}

static int measure_remote(int k, double q, int b, double L)
{
	struct provider_limits lim = {q, b, 0, 0};
	struct executor_pool_opts po;
	double ideal = ideal_bound(k, q, b, L), t_grow, t_fixed;
	unsigned long long f_grow, f_fixed;
	int peak_grow, peak_fixed;
	struct remote r;

	if (remote_init(&r, k, L) < 0) {
		remote_free(&r);
		return 1;
	}
	actuator_pool_opts(&po, &lim, 4096);
	t_grow = run_remote(&r, executor_new_pool_opts(&po), k, q, b, &peak_grow, &f_grow);
	t_fixed = t_grow < 0 ? -1 : run_remote(&r, executor_new_pool(8, 4096), k, q, b, &peak_fixed, &f_fixed);
	remote_free(&r);
	if (t_grow < 0 || t_fixed < 0)
		return 1;
	printf("remote  k=%d q=%g b=%d L=%gs over HTTP: ideal %.2fs | growing pool (%d..%d, peak %d) %.2fs, ratio %.3f, %llu failed"
	       " | before: fixed pool of 8 %.2fs, ratio %.3f, %llu failed\n",
	       k, q, b, L, ideal, po.workers, po.max_workers, peak_grow, t_grow, t_grow / ideal, f_grow,
	       t_fixed, t_fixed / ideal, f_fixed);
	(void)peak_fixed;
	return 0;
}

int main(int argc, char **argv)
{
	int k = argc > 1 ? atoi(argv[1]) : 50;
	double q = argc > 2 ? atof(argv[2]) : 2;
	int b = argc > 3 ? atoi(argv[3]) : 5;
	double Lv = argc > 4 ? atof(argv[4]) : 2;
	double Lr = argc > 5 ? atof(argv[5]) : 0.2;
	int kr = argc > 6 ? atoi(argv[6]) : 200;
	double qr = argc > 7 ? atof(argv[7]) : 20;
	int br = argc > 8 ? atoi(argv[8]) : 20;
	double Lrr = argc > 9 ? atof(argv[9]) : 2;

	if (k < 1 || k > 1024 || q <= 0 || b < 1 || Lv < 0 || Lr < 0 || kr < 0 || kr > 1000 ||
	    qr <= 0 || br < 1 || Lrr < 0 || Lrr > 600) {
		fprintf(stderr, "usage: bench_launch [k<=1024 q>0 b>=1 L_virtual L_real"
			" [k_remote<=1000 q_remote>0 b_remote>=1 L_remote<=600]]\n");
		return 2;
	}
	if (measure(false, k, q, b, Lv))
		return 1;
	/* real time: a faster bucket so the run stays short */
	if (measure(true, k, q * 10, b, Lr))
		return 1;
	return kr > 0 ? measure_remote(kr, qr, br, Lrr) : 0;
}
