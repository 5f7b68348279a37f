/*
 * bench_launch: k packings (one scale-up each), every launch call taking L
 * seconds in the simulated cloud, the provider limited to q QPS with burst
 * b. Prints the time until the last launch finished divided by the ideal
 * bound — the earliest each call could start under the token bucket, plus
 * L — for the actuator (parallel launches), next to the same launches made
 * one after another. Runs in virtual time, then once in real time with a
 * small L.
 *   build/bench/bench_launch [k q b L_virtual L_real]
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/actuator.h"
#include "policy/plan.h"
#include "providers/sim/sim.h"
#include "runtime/clock.h"
#include "runtime/executor.h"
#include "sim/cloud.h"

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

int main(int argc, char **argv)
{
	int k = argc > 1 ? atoi(argv[1]) : 50;
	double q = argc > 2 ? atof(argv[2]) : 2;
	int b = argc > 3 ? atoi(argv[3]) : 5;
	double Lv = argc > 4 ? atof(argv[4]) : 2;
	double Lr = argc > 5 ? atof(argv[5]) : 0.2;

	if (k < 1 || k > 1024 || q <= 0 || b < 1 || Lv < 0 || Lr < 0) {
		fprintf(stderr, "usage: bench_launch [k<=1024 q>0 b>=1 L_virtual L_real]\n");
		return 2;
	}
	if (measure(false, k, q, b, Lv))
		return 1;
	/* real time: a faster bucket so the run stays short */
	return measure(true, k, q * 10, b, Lr);
}
