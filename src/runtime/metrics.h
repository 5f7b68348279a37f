/*
 * metrics: a thread-safe registry of counters, gauges and histograms with
 * fixed label names and bounded series, rendered in the Prometheus text
 * format 0.0.4. What is measured is its callers'; HTTP is httpserver.c's.
 */
#ifndef LUASCALE_METRICS_H
#define LUASCALE_METRICS_H

#include <stddef.h>
#include <stdint.h>

struct buf;
struct metrics;
struct metric;

#define METRICS_MAX_LABELS 4
#define METRICS_MAX_BUCKETS 24
#define METRICS_MAX_SERIES 256

enum metric_type {
	METRIC_COUNTER,
	METRIC_GAUGE,
	METRIC_HISTOGRAM,
};

/* An empty registry, or NULL (out of memory). */
struct metrics *metrics_new(void);

/* Frees the registry and every family in it. NULL is a no-op. */
void metrics_free(struct metrics *m);

/*
 * Registers a family and returns it (owned by the registry), or NULL when
 * 'name' or a label name is not a valid Prometheus name, a counter's name
 * does not end in "_total", the name is taken, 'labels' has more than
 * METRICS_MAX_LABELS names, or memory runs out. 'labels' is a
 * comma-separated list of label names ("verb,code"; NULL or "" for none).
 * 'help' is copied. A NULL registry returns NULL (and every metric_*
 * call on NULL does nothing), so instrumented code need not check.
 */
struct metric *metrics_counter(struct metrics *m, const char *name, const char *help,
			       const char *labels);
struct metric *metrics_gauge(struct metrics *m, const char *name, const char *help,
			     const char *labels);

/* A histogram with 'n' upper bounds in increasing order (at most
 * METRICS_MAX_BUCKETS; +Inf is implied and must not be given). */
struct metric *metrics_histogram(struct metrics *m, const char *name, const char *help,
				 const char *labels, const double *bounds, size_t n);

/* Buckets for durations in seconds, from 5 ms to 10 min. */
extern const double metrics_buckets_seconds[];
extern const size_t metrics_n_buckets_seconds;

/*
 * Updates the series named by 'values' (one string per label of the family,
 * in order; NULL when it has none; a NULL value reads as ""). The series is
 * made on first use. Counters only go up: a negative 'v' is ignored.
 * metric_set on a counter sets it (for counts kept elsewhere, e.g. copied
 * from a module's stats at scrape time); metric_observe is for histograms.
 * Any thread.
 */
void metric_add(struct metric *f, const char *const *values, double v);
void metric_set(struct metric *f, const char *const *values, double v);
void metric_observe(struct metric *f, const char *const *values, double v);

/* The convenience forms for families with zero, one or two labels. */
void metric_inc(struct metric *f);
void metric_inc1(struct metric *f, const char *v1);
void metric_inc2(struct metric *f, const char *v1, const char *v2);
void metric_set0(struct metric *f, double v);
void metric_set1(struct metric *f, const char *v1, double v);
void metric_observe0(struct metric *f, double v);
void metric_observe1(struct metric *f, const char *v1, double v);

/* The value of a series (a histogram's: its count), or 0 when it does not
 * exist. For tests and health checks. */
double metric_value(struct metric *f, const char *const *values);

/*
 * Registers 'fn' to be called (without the registry's lock) at the start of
 * every metrics_render(), to copy values kept elsewhere into the registry.
 * At most 8 of them. Returns 0, or -1 when full.
 */
int metrics_on_collect(struct metrics *m, void (*fn)(void *ctx), void *ctx);

/*
 * Appends the whole registry to 'out' in the text format 0.0.4: families in
 * the order registered, each with # HELP and # TYPE, series in the order
 * made, label values escaped (backslash, quote, newline), histograms as
 * cumulative _bucket{le=...} series ending with le="+Inf", then _sum and
 * _count. Values for series beyond the cardinality bound were never kept
 * (metrics_dropped() counts them). Returns 0, or -1 when out of memory.
 */
int metrics_render(struct metrics *m, struct buf *out);

/* Series dropped so far because a family was full. */
uint64_t metrics_dropped(struct metrics *m);

#endif
