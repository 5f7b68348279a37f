/*
 * bench_common: what the cloud benchmark (bench_cloud, for every cloud) shares —
 * a monotonic clock, min/median, an environment table the providers read,
 * the simulated world built from a scenario text, a config parsed offline,
 * many one-instance launches released at once from their own threads, and
 * the rows of the printed table.
 */
#ifndef LUASCALE_BENCH_COMMON_H
#define LUASCALE_BENCH_COMMON_H

#include <stddef.h>

#include "config.h"
#include "providers/provider.h"
#include "runtime/executor.h"
#include "sim/world/scenario.h"

#define BENCH_MAX_LAUNCHES 1000

/* Seconds on the monotonic clock. */
double bench_now(void);

/* Sleeps 's' seconds (the bench's own pauses, never a test's). */
void bench_sleep(double s);

/* qsort comparator of doubles, ascending. */
int bench_cmp_double(const void *a, const void *b);

/* The smallest and the median of t[0..n-1] (n >= 1; t is left as it is). */
void bench_min_median(const double *t, int n, double *min, double *median);

/* The token bucket's ideal for n calls at once, burst b, q a second, each
 * answered 'latency_s' after it went: (n - b) / q + latency. */
double bench_bucket_ideal(int n, int burst, double qps, double latency_s);

/* An environment the providers read instead of the process's. */
struct bench_env {
	const char *names[16];
	const char *values[16];
	size_t n;
};

/* getenv semantics over a struct bench_env (ud). */
const char *bench_env_get(void *ud, const char *name);
/* Adds name=value (both borrowed; at most 16). */
void bench_env_set(struct bench_env *t, const char *name, const char *value);

/* The simulated world a scenario text describes, on a pool of 4 threads. */
struct bench_world {
	struct sim_scenario *sc;
	struct executor *ex;
	struct sim_world *w;
};

/* Builds it; 'who' prefixes messages. 0, or -1 with a message on stderr. */
int bench_world_new(struct bench_world *bw, const char *scenario_text, const char *who);
/* Stops the executor and frees the world (free the cloud's face first). */
void bench_world_free(struct bench_world *bw);

/* A config text parsed offline, or NULL with a message on stderr. */
struct config *bench_parse_config(const char *text, const char *who);

/* What n one-instance launches released at once did. */
struct bench_launches {
	double first, last;       /* the earliest launch() call, the latest on_done */
	double min_call, max_call; /* launch() call to on_done, per launch */
	int reported;             /* on_instance callbacks, all launches */
	int failed;               /* launches that did not make their instance */
};

/*
 * Starts n (1..BENCH_MAX_LAUNCHES) threads that wait at one barrier, then
 * each calls p->ops->launch(p, group, 1, ...) and returns when it is done.
 * Prints each failed launch to stderr. Exits the process when a thread
 * cannot start (the others would wait at the barrier forever).
 */
void bench_launch_all(struct provider *p, const char *group, int n, struct bench_launches *r,
		      const char *who);

/*
 * One launch of 1 instance alone: its seconds, or -1 (printed to stderr)
 * when it did not make its instance.
 */
double bench_launch_one(struct provider *p, const char *group, const char *who);

/* Table rows: "  label  value unit", the label 44 wide. */
void bench_row_s(const char *label, double seconds);
void bench_row_f(const char *label, double value);
void bench_row_n(const char *label, long long n);
void bench_row_range(const char *label, double lo, double hi);

#endif
