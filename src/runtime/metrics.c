/*
 * metrics: the registry (families, their series under one mutex) and its
 * rendering in the Prometheus text format. Names are checked once, when a
 * family is registered; label values are escaped when rendered.
 */
#include "runtime/metrics.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

#define MAX_COLLECTORS 8

const double metrics_buckets_seconds[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
					  2.5, 5, 10, 30, 60, 120, 300, 600};
const size_t metrics_n_buckets_seconds =
	sizeof(metrics_buckets_seconds) / sizeof(metrics_buckets_seconds[0]);

struct series {
	char *values[METRICS_MAX_LABELS];
	double v;                               /* counter, gauge; histogram: sum */
	uint64_t count;                         /* histogram */
	uint64_t buckets[METRICS_MAX_BUCKETS];  /* histogram, not cumulative */
	struct series *next;
};

struct metric {
	struct metrics *m;
	enum metric_type type;
	char *name;
	char *help;
	char *labels[METRICS_MAX_LABELS];
	size_t n_labels;
	double bounds[METRICS_MAX_BUCKETS];
	size_t n_bounds;
	struct series *head, **tail;
	size_t n_series;
	struct metric *next;
};

struct collector {
	void (*fn)(void *ctx);
	void *ctx;
};

struct metrics {
	pthread_mutex_t mu;
	struct metric *head, **tail;
	uint64_t dropped;
	struct collector collectors[MAX_COLLECTORS];
	size_t n_collectors;
};

struct metrics *metrics_new(void)
{
	struct metrics *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	pthread_mutex_init(&m->mu, NULL);
	m->tail = &m->head;
	return m;
}

static void series_free(struct series *s)
{
	size_t i;

	for (i = 0; i < METRICS_MAX_LABELS; i++)
		free(s->values[i]);
	free(s);
}

static void family_free(struct metric *f)
{
	struct series *s, *n;
	size_t i;

	for (s = f->head; s; s = n) {
		n = s->next;
		series_free(s);
	}
	for (i = 0; i < f->n_labels; i++)
		free(f->labels[i]);
	free(f->name);
	free(f->help);
	free(f);
}

void metrics_free(struct metrics *m)
{
	struct metric *f, *n;

	if (!m)
		return;
	for (f = m->head; f; f = n) {
		n = f->next;
		family_free(f);
	}
	pthread_mutex_destroy(&m->mu);
	free(m);
}

/* [a-zA-Z_:][a-zA-Z0-9_:]* for metric names; labels without ':' and not
 * starting with "__" (reserved). */
static bool valid_name(const char *s, size_t n, bool label)
{
	size_t i;

	if (n == 0)
		return false;
	if (label && n >= 2 && s[0] == '_' && s[1] == '_')
		return false;
	for (i = 0; i < n; i++) {
		char c = s[i];
		bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
			     (!label && c == ':');

		if (!alpha && !(i > 0 && c >= '0' && c <= '9'))
			return false;
	}
	return true;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

static struct metric *family_new(struct metrics *m, enum metric_type type, const char *name,
				 const char *help, const char *labels, const double *bounds,
				 size_t n_bounds)
{
	struct metric *f, *g;
	const char *p;
	size_t i;

	if (!m || !name || !valid_name(name, strlen(name), false))
		return NULL;
	if (type == METRIC_COUNTER && !ends_with(name, "_total"))
		return NULL;
	if (type != METRIC_COUNTER && ends_with(name, "_total"))
		return NULL;
	if (type == METRIC_HISTOGRAM) {
		if (n_bounds == 0 || n_bounds > METRICS_MAX_BUCKETS)
			return NULL;
		for (i = 0; i < n_bounds; i++)
			if (!isfinite(bounds[i]) || (i > 0 && bounds[i] <= bounds[i - 1]))
				return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->m = m;
	f->type = type;
	f->name = strdup(name);
	f->help = strdup(help ? help : "");
	f->tail = &f->head;
	if (!f->name || !f->help)
		goto fail;
	for (p = labels; p && *p;) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (f->n_labels == METRICS_MAX_LABELS || !valid_name(p, n, true) ||
		    (n == 2 && !memcmp(p, "le", 2) && type == METRIC_HISTOGRAM))
			goto fail;
		f->labels[f->n_labels] = strndup(p, n);
		if (!f->labels[f->n_labels++])
			goto fail;
		p = e ? e + 1 : p + n;
	}
	if (type == METRIC_HISTOGRAM) {
		memcpy(f->bounds, bounds, n_bounds * sizeof(double));
		f->n_bounds = n_bounds;
	}
	pthread_mutex_lock(&m->mu);
	for (g = m->head; g; g = g->next) {
		if (strcmp(g->name, name) == 0) {
			pthread_mutex_unlock(&m->mu);
			goto fail;
		}
	}
	*m->tail = f;
	m->tail = &f->next;
	pthread_mutex_unlock(&m->mu);
	return f;
fail:
	family_free(f);
	return NULL;
}

struct metric *metrics_counter(struct metrics *m, const char *name, const char *help,
			       const char *labels)
{
	return family_new(m, METRIC_COUNTER, name, help, labels, NULL, 0);
}

struct metric *metrics_gauge(struct metrics *m, const char *name, const char *help,
			     const char *labels)
{
	return family_new(m, METRIC_GAUGE, name, help, labels, NULL, 0);
}

struct metric *metrics_histogram(struct metrics *m, const char *name, const char *help,
				 const char *labels, const double *bounds, size_t n)
{
	return family_new(m, METRIC_HISTOGRAM, name, help, labels, bounds, n);
}

/* The series of 'values' in 'f', made when 'make' and missing. Lock held. */
static struct series *series_get(struct metric *f, const char *const *values, bool make)
{
	struct series *s;
	size_t i;

	for (s = f->head; s; s = s->next) {
		for (i = 0; i < f->n_labels; i++) {
			const char *v = values && values[i] ? values[i] : "";

			if (strcmp(s->values[i], v) != 0)
				break;
		}
		if (i == f->n_labels)
			return s;
	}
	if (!make)
		return NULL;
	if (f->n_series >= METRICS_MAX_SERIES) {
		f->m->dropped++;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	for (i = 0; i < f->n_labels; i++) {
		s->values[i] = strdup(values && values[i] ? values[i] : "");
		if (!s->values[i]) {
			series_free(s);
			return NULL;
		}
	}
	*f->tail = s;
	f->tail = &s->next;
	f->n_series++;
	return s;
}

enum op { OP_ADD, OP_SET, OP_OBSERVE };

static void update(struct metric *f, const char *const *values, double v, enum op op)
{
	struct series *s;
	size_t i;

	if (!f || isnan(v))
		return;
	if (op == OP_OBSERVE && f->type != METRIC_HISTOGRAM)
		return;
	if (op != OP_OBSERVE && f->type == METRIC_HISTOGRAM)
		return;
	if (op == OP_ADD && f->type == METRIC_COUNTER && v < 0)
		return;
	pthread_mutex_lock(&f->m->mu);
	s = series_get(f, values, true);
	if (s) {
		switch (op) {
		case OP_ADD: s->v += v; break;
		case OP_SET: s->v = v; break;
		case OP_OBSERVE:
			s->v += v;
			s->count++;
			for (i = 0; i < f->n_bounds && v > f->bounds[i]; i++)
				;
			if (i < f->n_bounds)
				s->buckets[i]++;
			break;
		}
	}
	pthread_mutex_unlock(&f->m->mu);
}

void metric_add(struct metric *f, const char *const *values, double v)
{
	update(f, values, v, OP_ADD);
}

void metric_set(struct metric *f, const char *const *values, double v)
{
	update(f, values, v, OP_SET);
}

void metric_observe(struct metric *f, const char *const *values, double v)
{
	update(f, values, v, OP_OBSERVE);
}

void metric_inc(struct metric *f)
{
	update(f, NULL, 1, OP_ADD);
}

void metric_inc1(struct metric *f, const char *v1)
{
	const char *v[1] = {v1};

	update(f, v, 1, OP_ADD);
}

void metric_inc2(struct metric *f, const char *v1, const char *v2)
{
	const char *v[2] = {v1, v2};

	update(f, v, 1, OP_ADD);
}

void metric_set0(struct metric *f, double v)
{
	update(f, NULL, v, OP_SET);
}

void metric_set1(struct metric *f, const char *v1, double v)
{
	const char *vv[1] = {v1};

	update(f, vv, v, OP_SET);
}

void metric_observe0(struct metric *f, double v)
{
	update(f, NULL, v, OP_OBSERVE);
}

void metric_observe1(struct metric *f, const char *v1, double v)
{
	const char *vv[1] = {v1};

	update(f, vv, v, OP_OBSERVE);
}

double metric_value(struct metric *f, const char *const *values)
{
	struct series *s;
	double v = 0;

	if (!f)
		return 0;
	pthread_mutex_lock(&f->m->mu);
	s = series_get(f, values, false);
	if (s)
		v = f->type == METRIC_HISTOGRAM ? (double)s->count : s->v;
	pthread_mutex_unlock(&f->m->mu);
	return v;
}

int metrics_on_collect(struct metrics *m, void (*fn)(void *ctx), void *ctx)
{
	int rc = -1;

	if (!m)
		return -1;
	pthread_mutex_lock(&m->mu);
	if (m->n_collectors < MAX_COLLECTORS) {
		m->collectors[m->n_collectors].fn = fn;
		m->collectors[m->n_collectors].ctx = ctx;
		m->n_collectors++;
		rc = 0;
	}
	pthread_mutex_unlock(&m->mu);
	return rc;
}

uint64_t metrics_dropped(struct metrics *m)
{
	uint64_t n;

	pthread_mutex_lock(&m->mu);
	n = m->dropped;
	pthread_mutex_unlock(&m->mu);
	return n;
}

/* A sample value as Prometheus reads it (Go's ParseFloat). */
static void put_value(struct buf *b, double v)
{
	if (isnan(v))
		buf_puts(b, "NaN");
	else if (isinf(v))
		buf_puts(b, v > 0 ? "+Inf" : "-Inf");
	else if (v == floor(v) && fabs(v) < 1e15)
		buf_printf(b, "%.0f", v);
	else
		buf_printf(b, "%.15g", v);
}

/* HELP text: backslash and newline escaped. */
static void put_help(struct buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			buf_puts(b, "\\\\");
		else if (*s == '\n')
			buf_puts(b, "\\n");
		else
			buf_append(b, s, 1);
	}
}

/* A label value: backslash, double quote and newline escaped. */
static void put_label_value(struct buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			buf_puts(b, "\\\\");
		else if (*s == '"')
			buf_puts(b, "\\\"");
		else if (*s == '\n')
			buf_puts(b, "\\n");
		else
			buf_append(b, s, 1);
	}
}

/* name{labels[,le="x"]} value */
static void put_sample(struct buf *b, const struct metric *f, const struct series *s,
		       const char *suffix, const char *le, double v)
{
	size_t i;

	buf_puts(b, f->name);
	buf_puts(b, suffix);
	if (f->n_labels || le) {
		buf_puts(b, "{");
		for (i = 0; i < f->n_labels; i++) {
			buf_printf(b, "%s%s=\"", i ? "," : "", f->labels[i]);
			put_label_value(b, s->values[i]);
			buf_puts(b, "\"");
		}
		if (le)
			buf_printf(b, "%sle=\"%s\"", f->n_labels ? "," : "", le);
		buf_puts(b, "}");
	}
	buf_puts(b, " ");
	put_value(b, v);
	buf_puts(b, "\n");
}

static const char *type_str(enum metric_type t)
{
	switch (t) {
	case METRIC_COUNTER: return "counter";
	case METRIC_GAUGE: return "gauge";
	case METRIC_HISTOGRAM: return "histogram";
	}
	return "untyped";
}

int metrics_render(struct metrics *m, struct buf *out)
{
	struct collector cs[MAX_COLLECTORS];
	const struct metric *f;
	const struct series *s;
	size_t i, n;

	pthread_mutex_lock(&m->mu);
	n = m->n_collectors;
	memcpy(cs, m->collectors, sizeof(cs));
	pthread_mutex_unlock(&m->mu);
	for (i = 0; i < n; i++)
		cs[i].fn(cs[i].ctx);
	pthread_mutex_lock(&m->mu);
	for (f = m->head; f; f = f->next) {
		buf_printf(out, "# HELP %s ", f->name);
		put_help(out, f->help);
		buf_printf(out, "\n# TYPE %s %s\n", f->name, type_str(f->type));
		for (s = f->head; s; s = s->next) {
			uint64_t cum = 0;
			char le[64];

			if (f->type != METRIC_HISTOGRAM) {
				put_sample(out, f, s, "", NULL, s->v);
				continue;
			}
			for (i = 0; i < f->n_bounds; i++) {
				struct buf lb = BUF_INIT;

				cum += s->buckets[i];
				put_value(&lb, f->bounds[i]);
				snprintf(le, sizeof(le), "%s", lb.data ? lb.data : "0");
				buf_free(&lb);
				put_sample(out, f, s, "_bucket", le, (double)cum);
			}
			put_sample(out, f, s, "_bucket", "+Inf", (double)s->count);
			put_sample(out, f, s, "_sum", NULL, s->v);
			put_sample(out, f, s, "_count", NULL, (double)s->count);
		}
	}
	pthread_mutex_unlock(&m->mu);
	return out->oom ? -1 : 0;
}
