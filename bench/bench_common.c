/*
 * bench_common: the pieces the cloud benchmarks share (bench_common.h):
 * timing, the world, offline configs, the barrier of launch threads and
 * the table's rows.
 */
#include "bench_common.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "errbuf.h"
#include "runtime/clock.h"

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void bench_sleep(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};

	if (s > 0)
		nanosleep(&ts, NULL);
}

int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void bench_min_median(const double *t, int n, double *min, double *median)
{
	double *s = calloc((size_t)n, sizeof(*s));

	if (!s || n < 1) {
		free(s);
		*min = *median = n >= 1 ? t[0] : 0;
		return;
	}
	memcpy(s, t, (size_t)n * sizeof(*s));
	qsort(s, (size_t)n, sizeof(*s), bench_cmp_double);
	*min = s[0];
	*median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
}

double bench_bucket_ideal(int n, int burst, double qps, double latency_s)
{
	return (n > burst ? (double)(n - burst) / qps : 0) + latency_s;
}

const char *bench_env_get(void *ud, const char *name)
{
	const struct bench_env *t = ud;
	size_t i;

	for (i = 0; i < t->n; i++)
		if (!strcmp(t->names[i], name))
			return t->values[i];
	return NULL;
}

void bench_env_set(struct bench_env *t, const char *name, const char *value)
{
	if (t->n >= sizeof(t->names) / sizeof(t->names[0]))
		return;
	t->names[t->n] = name;
	t->values[t->n++] = value;
}

int bench_world_new(struct bench_world *bw, const char *text, const char *who)
{
	struct errbuf err;

	memset(bw, 0, sizeof(*bw));
	if (!text) {
		fprintf(stderr, "%s: out of memory\n", who);
		return -1;
	}
	bw->sc = sim_scenario_parse(text, strlen(text), who, &err);
	if (!bw->sc) {
		fprintf(stderr, "%s: %s\n", who, err.msg);
		return -1;
	}
	bw->ex = executor_new_pool(4, 1u << 16);
	if (!bw->ex) {
		fprintf(stderr, "%s: cannot start the executor\n", who);
		return -1;
	}
	bw->w = sim_world_new(bw->sc, bw->ex, &err);
	if (!bw->w) {
		fprintf(stderr, "%s: %s\n", who, err.msg);
		return -1;
	}
	return 0;
}

void bench_world_free(struct bench_world *bw)
{
	if (bw->ex)
		executor_shutdown(bw->ex, clock_now(clock_real()) + 2 * CLOCK_NS_PER_S);
	sim_world_free(bw->w);
	sim_scenario_free(bw->sc);
}

struct config *bench_parse_config(const char *text, const char *who)
{
	struct config_opts co;
	struct errbuf err;
	struct config *c;

	memset(&co, 0, sizeof(co));
	co.flags = CONFIG_OFFLINE;
	c = config_parse_opts(text, strlen(text), who, &co, &err);
	if (!c)
		fprintf(stderr, "%s: config: %s\n", who, err.msg);
	return c;
}

/* ---- launches ---- */

struct launch {
	struct provider *p;
	const char *group;
	pthread_barrier_t *gate;
	double start, end;
	int made, seen;
	struct provider_status st;
};

static void on_instance(void *ctx, const struct provider_instance *inst)
{
	struct launch *l = ctx;

	(void)inst;
	l->seen++;
}

static void on_done(void *ctx, int count, const struct provider_status *st)
{
	struct launch *l = ctx;

	l->end = bench_now();
	l->made = count;
	l->st = *st;
}

static void *launch_thread(void *arg)
{
	struct launch *l = arg;

	pthread_barrier_wait(l->gate);
	l->start = bench_now();
	l->p->ops->launch(l->p, l->group, 1, on_instance, on_done, l);
	return NULL;
}

double bench_launch_one(struct provider *p, const char *group, const char *who)
{
	struct launch l;

	memset(&l, 0, sizeof(l));
	l.p = p;
	l.group = group;
	l.start = bench_now();
	p->ops->launch(p, group, 1, on_instance, on_done, &l);
	if (l.made != 1) {
		fprintf(stderr, "%s: the probe launch made %d: %s\n", who, l.made, l.st.message);
		return -1;
	}
	return l.end - l.start;
}

void bench_launch_all(struct provider *p, const char *group, int n, struct bench_launches *r,
		      const char *who)
{
	static struct launch ls[BENCH_MAX_LAUNCHES];
	static pthread_t th[BENCH_MAX_LAUNCHES];
	pthread_barrier_t gate;
	size_t i;

	memset(r, 0, sizeof(*r));
	if (n < 1 || n > BENCH_MAX_LAUNCHES) {
		fprintf(stderr, "%s: %d launches (1 to %d)\n", who, n, BENCH_MAX_LAUNCHES);
		r->failed = n;
		return;
	}
	pthread_barrier_init(&gate, NULL, (unsigned)n);
	for (i = 0; i < (size_t)n; i++) {
		memset(&ls[i], 0, sizeof(ls[i]));
		ls[i].p = p;
		ls[i].group = group;
		ls[i].gate = &gate;
		if (pthread_create(&th[i], NULL, launch_thread, &ls[i]) != 0) {
			fprintf(stderr, "%s: cannot start thread %zu\n", who, i);
			exit(1); /* the others wait at the gate forever */
		}
	}
	for (i = 0; i < (size_t)n; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&gate);

	r->first = ls[0].start;
	r->last = ls[0].end;
	r->min_call = 1e9;
	for (i = 0; i < (size_t)n; i++) {
		double d = ls[i].end - ls[i].start;

		if (ls[i].start < r->first)
			r->first = ls[i].start;
		if (ls[i].end > r->last)
			r->last = ls[i].end;
		if (d < r->min_call)
			r->min_call = d;
		if (d > r->max_call)
			r->max_call = d;
		r->reported += ls[i].seen;
		if (ls[i].made != 1) {
			r->failed++;
			fprintf(stderr, "%s: launch %zu made %d: %s: %s\n", who, i, ls[i].made,
				provider_error_str(ls[i].st.code), ls[i].st.message);
		}
	}
}

/* ---- the table ---- */

void bench_row_s(const char *label, double seconds)
{
	printf("  %-44s %10.3f s\n", label, seconds);
}

void bench_row_f(const char *label, double value)
{
	printf("  %-44s %10.3f\n", label, value);
}

void bench_row_n(const char *label, long long n)
{
	printf("  %-44s %10lld\n", label, n);
}

void bench_row_range(const char *label, double lo, double hi)
{
	printf("  %-44s %6.3f .. %.3f s\n", label, lo, hi);
}
