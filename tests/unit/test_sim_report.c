/*
 * Tests for sim/runs/report.c: the HTML report has one chart per metric and
 * policy, balanced markup, nothing fetched, escaped text and a shared y
 * scale per row; series.csv has a row per sample with quoted fields; empty
 * and non-finite series, a missing parent directory, a full disk and a
 * rerun behave.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/clock.h"
#include "sim/runs/report.h"

#define S CLOCK_NS_PER_S
#define SMOKE SOURCE_DIR "/examples/scenarios/smoke.yaml"
#define START 1714982400 /* 2024-05-06T08:00:00Z */

static const char *const metrics[] = {"nodes", "pending", "utilization", "cost"};

/* ---- fixtures ---- */

struct fixture {
	char dir[64];
	struct node_group groups[2];
	struct sim_scenario sc;
	struct sim_result runs[2];
};

/* 'n' samples a minute apart of 'ng' groups: group g has i + g nodes and
 * one booting, pending and cost grow with i, scaled by 'scale'. */
static void series_fill(struct sim_series *s, size_t n, size_t ng, double scale)
{
	size_t i, g;

	memset(s, 0, sizeof(*s));
	s->n = s->cap = n;
	s->n_groups = ng;
	if (n == 0)
		return;
	s->t_ns = calloc(n, sizeof(*s->t_ns));
	s->nodes = calloc(n * ng, sizeof(int));
	s->booting = calloc(n * ng, sizeof(int));
	s->pending = calloc(n, sizeof(int));
	s->util_cpu = calloc(n, sizeof(double));
	s->util_mem = calloc(n, sizeof(double));
	s->cost = calloc(n, sizeof(double));
	assert_true(s->t_ns && s->nodes && s->booting && s->pending && s->util_cpu &&
		    s->util_mem && s->cost);
	for (i = 0; i < n; i++) {
		s->t_ns[i] = (int64_t)i * 60 * S;
		for (g = 0; g < ng; g++) {
			s->nodes[i * ng + g] = (int)(scale * (double)(i + g));
			s->booting[i * ng + g] = 1;
		}
		s->pending[i] = (int)(scale * 5.0 * (double)i);
		s->util_cpu[i] = 0.25 * (double)i;
		s->util_mem[i] = 0.1 * (double)i;
		s->cost[i] = scale * (double)i;
	}
}

/* What a run records besides the levels, scaled by 'scale': scale-ups in
 * sample 1 (workers 2, gpu 1) and a removal in sample 2 (workers) when
 * there are samples, a wait curve, the groups' costs and two params. */
static void record_fill(struct sim_result *r, double scale)
{
	static const double w[] = {0.05, 0.6, 75, 380, 537};
	static const double fr[] = {0.3, 0.31, 0.6, 0.9, 1.0};
	struct sim_series *s = &r->series;
	size_t i, ng = s->n_groups;

	if (s->n >= 3 && ng >= 2) {
		s->launched = calloc(s->n * ng, sizeof(int));
		s->removed = calloc(s->n * ng, sizeof(int));
		assert_true(s->launched && s->removed);
		s->launched[1 * ng + 0] = 2;
		s->launched[1 * ng + 1] = 1;
		s->removed[2 * ng + 0] = 1;
	}
	r->waits.pods = 51;
	r->waits.n = 5;
	r->waits.wait_s = malloc(sizeof(w));
	r->waits.frac = malloc(sizeof(fr));
	assert_true(r->waits.wait_s && r->waits.frac);
	for (i = 0; i < 5; i++) {
		r->waits.wait_s[i] = w[i] * scale;
		r->waits.frac[i] = fr[i];
	}
	r->wait_p50 = 60 * scale;
	r->wait_p90 = 380 * scale;
	r->wait_p95 = 400 * scale;
	r->wait_p99 = 537 * scale;
	r->wait_max = 537 * scale;
	r->group_cost = calloc(2, sizeof(*r->group_cost));
	assert_non_null(r->group_cost);
	r->n_group_cost = 2;
	r->group_cost[0].node_hours = 2.5 * scale;
	r->group_cost[0].cost = 2.5 * scale * 0.192;
	r->group_cost[1].node_hours = 1 * scale;
	r->group_cost[1].cost = 1 * scale * 2.5;
	r->node_hours = r->group_cost[0].node_hours + r->group_cost[1].node_hours;
	r->cost = r->group_cost[0].cost + r->group_cost[1].cost;
	r->params = calloc(2, sizeof(*r->params));
	assert_non_null(r->params);
	r->n_params = 2;
	r->params[0].key = strdup("ratio");
	r->params[0].value = strdup("0.5");
	r->params[0].dflt = strdup("0.5");
	r->params[1].key = strdup("unneeded_for");
	r->params[1].value = strdup("3m");
	r->params[1].dflt = strdup("10m");
	r->params[1].from_config = true;
	snprintf(r->params_from, sizeof(r->params_from), "/cfg/config.yaml");
	for (i = 0; i < 2; i++)
		assert_true(r->params[i].key && r->params[i].value && r->params[i].dflt);
}

static void series_drop(struct sim_series *s)
{
	struct sim_result r;

	memset(&r, 0, sizeof(r));
	r.series = *s;
	sim_result_free(&r);
	memset(s, 0, sizeof(*s));
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_sim_report.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	f->groups[0].name = "workers";
	f->groups[0].price_per_hour = 0.192;
	f->groups[1].name = "gpu";
	f->groups[1].price_per_hour = 2.5;
	f->sc.source = "/somewhere/day.yaml";
	f->sc.title = "A test day";
	f->sc.description = "Two groups.";
	f->sc.seed = 7;
	f->sc.start_wall = START;
	f->sc.duration_ns = 3600 * S;
	f->sc.groups = f->groups;
	f->sc.n_groups = 2;
	snprintf(f->runs[0].policy, sizeof(f->runs[0].policy), "/policies/alpha.lua");
	snprintf(f->runs[1].policy, sizeof(f->runs[1].policy), "policies/beta.lua");
	series_fill(&f->runs[0].series, 3, 2, 1);
	series_fill(&f->runs[1].series, 3, 2, 1);
	record_fill(&f->runs[0], 1);
	record_fill(&f->runs[1], 2);
	*state = f;
	return 0;
}

static void remove_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[512];

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		remove_tree(path);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	sim_result_free(&f->runs[0]);
	sim_result_free(&f->runs[1]);
	remove_tree(f->dir);
	free(f);
	return 0;
}

/* ---- reading what was written ---- */

static char *slurp(const char *dir, const char *name)
{
	char path[512];
	FILE *fp;
	long len;
	char *s;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "rb");
	if (!fp)
		fail_msg("cannot read %s: %s", path, strerror(errno));
	assert_int_equal(fseek(fp, 0, SEEK_END), 0);
	len = ftell(fp);
	assert_true(len >= 0);
	rewind(fp);
	s = malloc((size_t)len + 1);
	assert_non_null(s);
	assert_int_equal(fread(s, 1, (size_t)len, fp), (size_t)len);
	s[len] = '\0';
	fclose(fp);
	return s;
}

static char *write_and_read(struct fixture *f, size_t n)
{
	struct errbuf err;

	if (sim_report_write(f->dir, &f->sc, f->runs, n, &err) != 0)
		fail_msg("%s", err.msg);
	return slurp(f->dir, "index.html");
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0, len = strlen(needle);

	while ((hay = strstr(hay, needle))) {
		n++;
		hay += len;
	}
	return n;
}

/* The <svg> of a metric and policy, as a new string (fails when there is not exactly one). */
static char *chart(const char *html, const char *metric, const char *policy)
{
	char key[256];
	const char *at, *end;
	char *out;

	snprintf(key, sizeof(key), "data-metric=\"%s\" data-policy=\"%s\"", metric, policy);
	if (count(html, key) != 1)
		fail_msg("%zu charts with %s", count(html, key), key);
	at = strstr(html, key);
	end = strstr(at, "</svg>");
	assert_non_null(end);
	out = strndup(at, (size_t)(end - at));
	assert_non_null(out);
	return out;
}

static void attr(const char *svg, const char *name, char *out, size_t sz)
{
	char key[64];
	const char *p, *q;

	snprintf(key, sizeof(key), " %s=\"", name);
	p = strstr(svg, key);
	assert_non_null(p);
	p += strlen(key);
	q = strchr(p, '"');
	assert_non_null(q);
	snprintf(out, sz, "%.*s", (int)(q - p), p);
}

/* The table row of a policy, as a new string. */
static char *table_row(const char *html, const char *policy)
{
	char key[256];
	const char *at, *end;
	char *out;

	snprintf(key, sizeof(key), "<tr data-policy=\"%s\">", policy);
	at = strstr(html, key);
	if (!at)
		fail_msg("no row %s", key);
	end = strstr(at, "</tr>");
	assert_non_null(end);
	out = strndup(at, (size_t)(end - at));
	assert_non_null(out);
	return out;
}

/*
 * Checks that every tag is closed in order (or self-closed), attribute
 * values are quoted, no '<' sits inside a tag and every '&' starts an
 * entity. Returns NULL or what is wrong.
 */
static const char *markup_problem(const char *s, char *why, size_t sz)
{
	const char *stack[512];
	size_t lens[512], depth = 0, len;
	const char *p = s, *end, *q, *name;
	int quoted, closing;

	for (q = s; (q = strchr(q, '&')); q++) {
		if (strncmp(q, "&amp;", 5) && strncmp(q, "&lt;", 4) && strncmp(q, "&gt;", 4) &&
		    strncmp(q, "&quot;", 6) && strncmp(q, "&#39;", 5)) {
			snprintf(why, sz, "bare '&' at: %.40s", q);
			return why;
		}
	}
	while ((p = strchr(p, '<'))) {
		end = strchr(p, '>');
		if (!end) {
			snprintf(why, sz, "unterminated tag at: %.40s", p);
			return why;
		}
		if (!strncmp(p, "<!DOCTYPE", 9)) {
			p = end + 1;
			continue;
		}
		if (memchr(p + 1, '<', (size_t)(end - p - 1))) {
			snprintf(why, sz, "'<' inside a tag at: %.40s", p);
			return why;
		}
		quoted = 0;
		for (q = p + 1; q < end; q++) {
			if (*q == '"')
				quoted = !quoted;
			else if (*q == '=' && !quoted && q[1] != '"') {
				snprintf(why, sz, "unquoted attribute at: %.40s", p);
				return why;
			}
		}
		closing = p[1] == '/';
		name = p + 1 + closing;
		len = strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:-");
		if (len == 0) {
			snprintf(why, sz, "not a tag at: %.40s", p);
			return why;
		}
		if (closing) {
			if (depth == 0 || lens[depth - 1] != len || strncmp(stack[depth - 1], name, len)) {
				snprintf(why, sz, "</%.*s> closes %.*s", (int)len, name,
					 depth ? (int)lens[depth - 1] : 4, depth ? stack[depth - 1] : "none");
				return why;
			}
			depth--;
		} else if (end[-1] != '/') {
			if (depth == 512) {
				snprintf(why, sz, "too deep");
				return why;
			}
			stack[depth] = name;
			lens[depth++] = len;
		}
		p = end + 1;
	}
	if (depth) {
		snprintf(why, sz, "<%.*s> not closed", (int)lens[depth - 1], stack[depth - 1]);
		return why;
	}
	return NULL;
}

static void assert_markup_ok(const char *html)
{
	char why[160];

	if (markup_problem(html, why, sizeof(why)))
		fail_msg("%s", why);
}

/* Nothing fetched: no script, no links; "http" only as an xmlns value. */
static void assert_self_contained(const char *html)
{
	const char *p;

	assert_null(strstr(html, "<script"));
	assert_null(strstr(html, "url("));
	assert_null(strstr(html, "@import"));
	assert_null(strstr(html, "href="));
	assert_null(strstr(html, "src="));
	for (p = html; (p = strstr(p, "http")); p++) {
		if (p - html < 7 || strncmp(p - 7, "xmlns=\"", 7))
			fail_msg("'http' outside an xmlns: %.60s", p);
	}
}

/* Parses RFC 4180 CSV: the number of records, and fails unless each has 'fields'. */
static size_t csv_records(const char *s, size_t fields)
{
	size_t records = 0, nf = 1;
	int quoted = 0;

	for (; *s; s++) {
		if (quoted) {
			if (*s == '"' && s[1] == '"')
				s++;
			else if (*s == '"')
				quoted = 0;
		} else if (*s == '"') {
			quoted = 1;
		} else if (*s == ',') {
			nf++;
		} else if (*s == '\r' && s[1] == '\n') {
			s++;
			if (nf != fields)
				fail_msg("record %zu has %zu fields, not %zu", records + 1, nf, fields);
			records++;
			nf = 1;
		} else if (*s == '\n') {
			fail_msg("bare LF in record %zu", records + 1);
		}
	}
	assert_false(quoted);
	return records;
}

static double min_y(const char *svg, const char *elem)
{
	const char *p = strstr(svg, elem), *pts;
	double x, y, m = INFINITY;
	int used;

	assert_non_null(p);
	pts = strstr(p, "points=\"");
	assert_non_null(pts);
	pts += 8;
	while (sscanf(pts, "%lf,%lf%n", &x, &y, &used) == 2) {
		if (y < m)
			m = y;
		pts += used;
	}
	return m;
}

/* ---- tests ---- */

static void test_two_runs(void **state)
{
	struct fixture *f = *state;
	char *html = write_and_read(f, 2), *csv, *svg, tmp[128];
	size_t m;

	assert_int_equal(count(html, "class=\"chart\""), 8);
	for (m = 0; m < 4; m++) {
		svg = chart(html, metrics[m], "alpha");
		assert_non_null(strstr(svg, "viewBox=\""));
		assert_non_null(strstr(svg, "<title>"));
		assert_true(strstr(svg, "<polyline") || strstr(svg, "<path"));
		free(svg);
		svg = chart(html, metrics[m], "beta");
		assert_non_null(strstr(svg, "policies/beta.lua"));
		free(svg);
	}
	assert_markup_ok(html);
	assert_self_contained(html);
	assert_non_null(strstr(html, "<h1>A test day</h1>"));
	assert_non_null(strstr(html, "2024-05-06T08:00:00Z"));
	assert_non_null(strstr(html, "<dd>7</dd>"));
	assert_non_null(strstr(html, "<dd>1h</dd>"));
	/* both groups in the legend, each in its own color in the charts */
	assert_non_null(strstr(html, "workers</span>"));
	assert_non_null(strstr(html, "gpu</span>"));
	svg = chart(html, "nodes", "alpha");
	assert_non_null(strstr(svg, "#0969da"));
	assert_non_null(strstr(svg, "#e16f24"));
	free(svg);

	csv = slurp(f->dir, "series.csv");
	assert_int_equal(strncmp(csv, "policy,t_seconds,time,pending,util_cpu,util_mem,cost,"
				      "workers_nodes,workers_booting,gpu_nodes,gpu_booting\r\n", 89), 0);
	assert_int_equal(csv_records(csv, 11), 1 + 2 * 3);
	assert_non_null(strstr(csv, "\r\nalpha,120,2024-05-06T08:02:00Z,10,0.5000,0.2000,2.0000,2,1,3,1\r\n"));
	assert_non_null(strstr(csv, "\r\nbeta,0,2024-05-06T08:00:00Z,"));

	snprintf(tmp, sizeof(tmp), "%s/.index.html.tmp", f->dir);
	assert_int_equal(access(tmp, F_OK), -1);
	free(csv);
	free(html);
}

static void test_escaping(void **state)
{
	struct fixture *f = *state;
	char *html, *csv;

	snprintf(f->runs[0].policy, sizeof(f->runs[0].policy), "/p/we<b>&\"ird'.lua");
	f->sc.title = "Tom & <Jerry>";
	f->sc.description = "<script>alert(1)</script>";
	f->groups[1].name = "a,\"b\"<c>";
	html = write_and_read(f, 2);

	assert_int_equal(count(html, "data-policy=\"we&lt;b&gt;&amp;&quot;ird&#39;\""), 4 + 5);
	assert_null(strstr(html, "<b>"));
	assert_non_null(strstr(html, "<h1>Tom &amp; &lt;Jerry&gt;</h1>"));
	assert_non_null(strstr(html, "&lt;script&gt;alert(1)&lt;/script&gt;"));
	assert_non_null(strstr(html, "a,&quot;b&quot;&lt;c&gt;</span>"));
	assert_markup_ok(html);
	assert_self_contained(html);

	csv = slurp(f->dir, "series.csv");
	assert_non_null(strstr(csv, ",\"a,\"\"b\"\"<c>_nodes\",\"a,\"\"b\"\"<c>_booting\"\r\n"));
	assert_non_null(strstr(csv, "\r\n\"we<b>&\"\"ird'\",0,"));
	assert_int_equal(csv_records(csv, 11), 7);
	free(csv);
	free(html);
}

static void test_shared_y_scale(void **state)
{
	struct fixture *f = *state;
	char *html, *a, *b;
	char ya[32], yb[32];
	size_t m;

	series_drop(&f->runs[1].series);
	series_fill(&f->runs[1].series, 3, 2, 0.3);
	html = write_and_read(f, 2);
	for (m = 0; m < 4; m++) {
		a = chart(html, metrics[m], "alpha");
		b = chart(html, metrics[m], "beta");
		attr(a, "data-ymax", ya, sizeof(ya));
		attr(b, "data-ymax", yb, sizeof(yb));
		assert_string_equal(ya, yb);
		free(a);
		free(b);
	}
	/* alpha: pending up to 10, cost up to 2, nodes 2+3 and 2 booting */
	a = chart(html, "pending", "alpha");
	b = chart(html, "pending", "beta");
	attr(a, "data-ymax", ya, sizeof(ya));
	assert_string_equal(ya, "10");
	/* beta peaks at 3 of 10: its line stays lower (larger y) than alpha's */
	assert_true(min_y(a, "<polyline") < min_y(b, "<polyline") - 50);
	free(a);
	free(b);
	a = chart(html, "cost", "alpha");
	attr(a, "data-ymax", ya, sizeof(ya));
	assert_string_equal(ya, "2");
	free(a);
	a = chart(html, "nodes", "beta");
	attr(a, "data-ymax", ya, sizeof(ya));
	assert_string_equal(ya, "8"); /* 7 at most, to the next tick of 2 */
	free(a);
	a = chart(html, "utilization", "beta");
	attr(a, "data-ymax", ya, sizeof(ya));
	assert_string_equal(ya, "100");
	assert_non_null(strstr(a, ">80<"));
	free(a);
	free(html);
}

static void test_empty_and_non_finite(void **state)
{
	struct fixture *f = *state;
	struct sim_series *s = &f->runs[1].series;
	char *html, *csv, *svg;
	char y[32];
	size_t m;

	series_drop(&f->runs[0].series);
	series_drop(s);
	series_fill(s, 2, 2, 0);
	s->util_cpu[1] = NAN;
	s->util_mem[1] = INFINITY;
	s->cost[0] = -INFINITY;
	s->cost[1] = NAN;
	for (m = 0; m < 4; m++)
		s->booting[m] = 0;
	html = write_and_read(f, 2);

	assert_int_equal(count(html, "no samples"), 4);
	for (m = 0; m < 4; m++) {
		svg = chart(html, metrics[m], "alpha");
		assert_non_null(strstr(svg, "no samples"));
		free(svg);
		svg = chart(html, metrics[m], "beta");
		assert_null(strstr(svg, "no samples"));
		attr(svg, "data-ymax", y, sizeof(y));
		assert_true(strtod(y, NULL) >= 1);
		free(svg);
	}
	assert_null(strstr(html, "nan"));
	assert_null(strstr(html, "inf"));
	assert_markup_ok(html);

	csv = slurp(f->dir, "series.csv");
	assert_int_equal(csv_records(csv, 11), 1 + 2);
	assert_null(strstr(csv, "nan"));
	assert_null(strstr(csv, "inf"));
	free(csv);
	free(html);
}

static void test_table(void **state)
{
	struct fixture *f = *state;
	struct sim_result *a = &f->runs[0], *b = &f->runs[1];
	char *html, *row;

	a->node_hours = 3.04;
	a->cost = 1.5;
	a->wait_p50 = 45;
	a->wait_p95 = 190;
	a->wait_max = 3720;
	a->peak_nodes = 4;
	b->node_hours = 3.01; /* shows as 3.0, the same as alpha */
	b->cost = 2;
	b->wait_p50 = 50;
	b->wait_p95 = 200;
	b->wait_max = 4000;
	b->peak_nodes = 4;
	b->killed = 3;
	b->v.over_max = 2;
	snprintf(b->v.first, sizeof(b->v.first), "group gpu at 3 > max 2");
	html = write_and_read(f, 2);

	row = table_row(html, "alpha");
	assert_non_null(strstr(row, "<td class=\"best\">1.50</td>"));
	assert_non_null(strstr(row, "<td class=\"best\">45s</td>"));
	assert_non_null(strstr(row, "<td class=\"best\">3m10s</td>"));
	assert_non_null(strstr(row, "<td class=\"best\">1h02m</td>"));
	assert_non_null(strstr(row, "<td>3.0</td>"));
	assert_non_null(strstr(row, ">ok</td>"));
	assert_int_equal(count(row, "class=\"best\""), 5); /* cost, 3 waits, killed */
	free(row);
	row = table_row(html, "beta");
	assert_int_equal(count(row, "class=\"best\""), 0);
	assert_non_null(strstr(row, "2 violations: group gpu at 3 &gt; max 2</td>"));
	assert_non_null(strstr(row, "title=\"policies/beta.lua\""));
	free(row);
	assert_markup_ok(html);
	free(html);
}


/* ---- the parts beyond the charts over time ---- */

/* The text from 'start' (which must be in 'html') to 'end', as a new string. */
static char *between(const char *html, const char *start, const char *end)
{
	const char *a = strstr(html, start), *b;
	char *out;

	if (!a)
		fail_msg("no %s", start);
	b = strstr(a, end);
	assert_non_null(b);
	out = strndup(a, (size_t)(b - a));
	assert_non_null(out);
	return out;
}

static double attr_num(const char *elem, const char *name)
{
	char v[64];

	attr(elem, name, v, sizeof(v));
	return strtod(v, NULL);
}

/* The polyline of a run's wait curve, mapped back from the chart's
 * coordinates to (seconds, share) with the chart's stated plot box and
 * log axis: fills w and f, returns how many vertices. */
static size_t cdf_vertices(const char *html, const char *policy, double *w, double *f, size_t max)
{
	char key[128], plot[64];
	const char *pl, *pts;
	char *svg = between(html, "data-metric=\"waits\"", "</svg>");
	double px, py, pw, ph, lo = attr_num(svg, "data-wait-lo"), hi = attr_num(svg, "data-wait-hi");
	double x, y;
	size_t n = 0;
	int used;

	attr(svg, "data-plot", plot, sizeof(plot));
	assert_int_equal(sscanf(plot, "%lf %lf %lf %lf", &px, &py, &pw, &ph), 4);
	snprintf(key, sizeof(key), "<polyline class=\"line cdf\"");
	pl = svg;
	for (;;) {
		pl = strstr(pl, key);
		if (!pl)
			fail_msg("no curve for %s", policy);
		snprintf(plot, sizeof(plot), "data-policy=\"%s\"", policy);
		if (strstr(pl, plot) && strstr(pl, plot) < strchr(pl, '>'))
			break;
		pl++;
	}
	pts = strstr(pl, " points=\"") + 9;
	while (n < max && sscanf(pts, "%lf,%lf%n", &x, &y, &used) == 2) {
		w[n] = lo * pow(hi / lo, (x - px) / pw);
		f[n] = (py + ph - y) / ph;
		n++;
		pts += used;
	}
	free(svg);
	return n;
}

static void assert_near(double got, double want, double rel, double abs_tol)
{
	if (fabs(got - want) > abs_tol + rel * fabs(want))
		fail_msg("%g is not %g", got, want);
}

static void test_wait_curves(void **state)
{
	struct fixture *f = *state;
	char *html = write_and_read(f, 2), *svg, *row;
	double w[64], fr[64];
	size_t n, i, k;

	/* one chart for all runs, a curve each */
	assert_int_equal(count(html, "data-metric=\"waits\""), 1);
	svg = between(html, "data-metric=\"waits\"", "</svg>");
	assert_int_equal(count(svg, "<polyline class=\"line cdf\""), 2);
	assert_non_null(strstr(svg, ">pods</text>"));
	assert_non_null(strstr(svg, "wait until bound"));
	assert_non_null(strstr(svg, ">0.1s</text>"));
	assert_non_null(strstr(svg, ">10m</text>")); /* beta's longest, 1074 s, is within 1h */
	assert_non_null(strstr(svg, ">1h</text>"));
	assert_null(strstr(svg, ">6h</text>"));
	free(svg);
	/* the vertices are the runs' points as steps: from 0 at the left,
	 * along to each wait, up to its share, along to the right edge */
	for (k = 0; k < 2; k++) {
		const struct sim_wait_cdf *c = &f->runs[k].waits;

		n = cdf_vertices(html, k ? "beta" : "alpha", w, fr, 64);
		assert_int_equal(n, 2 + 2 * c->n);
		assert_near(fr[0], 0, 0, 0.003);
		for (i = 0; i < c->n; i++) {
			double want = c->wait_s[i] < 0.1 ? 0.1 : c->wait_s[i];

			assert_near(w[1 + 2 * i], want, 0.01, 0);
			assert_near(w[2 + 2 * i], want, 0.01, 0);
			assert_near(fr[1 + 2 * i], i ? c->frac[i - 1] : 0, 0, 0.003);
			assert_near(fr[2 + 2 * i], c->frac[i], 0, 0.003);
		}
		assert_near(fr[n - 1], 1, 0, 0.003);
	}
	/* the percentiles, exact, beside it */
	row = between(html, "<tr class=\"waits\" data-policy=\"alpha\" data-pods=", "</tr>");
	assert_non_null(strstr(row, "data-pods=\"51\""));
	assert_non_null(strstr(row, "data-p50=\"60.000\" data-p90=\"380.000\" data-p99=\"537.000\" data-max=\"537.000\""));
	assert_non_null(strstr(row, "<td>51</td><td>1m00s</td><td>6m20s</td><td>8m57s</td><td>8m57s</td>"));
	free(row);
	row = between(html, "<tr class=\"waits\" data-policy=\"beta\" data-pods=", "</tr>");
	assert_non_null(strstr(row, "<td>2m00s</td><td>12m40s</td><td>17m54s</td><td>17m54s</td>"));
	free(row);
	assert_markup_ok(html);
	assert_self_contained(html);
	free(html);
}

static void test_wait_curves_absent(void **state)
{
	struct fixture *f = *state;
	char *html;
	size_t k;

	for (k = 0; k < 2; k++) {
		free(f->runs[k].waits.wait_s);
		free(f->runs[k].waits.frac);
		memset(&f->runs[k].waits, 0, sizeof(f->runs[k].waits));
	}
	html = write_and_read(f, 2);
	assert_int_equal(count(html, "data-metric=\"waits\""), 0);
	assert_non_null(strstr(html, "No pods in any run."));
	assert_markup_ok(html);
	free(html);
}

static long sum_counts(const char *svg, const char *cls, size_t *marks)
{
	char key[64];
	const char *p = svg;
	long sum = 0;

	snprintf(key, sizeof(key), "<g class=\"mark %s\"", cls);
	*marks = 0;
	while ((p = strstr(p, key))) {
		char *end = strndup(p, (size_t)(strchr(p, '>') - p));

		sum += (long)attr_num(end, "data-count");
		free(end);
		(*marks)++;
		p++;
	}
	return sum;
}

static void test_event_marks(void **state)
{
	struct fixture *f = *state;
	char *html = write_and_read(f, 2), *svg, *mark;
	size_t marks;

	svg = chart(html, "nodes", "alpha");
	/* the scale-ups of sample 1 (60 s) and the removal of sample 2
	 * (120 s) fall in the first two buckets of 3600 s / 51 */
	mark = between(svg, "<g class=\"mark up\"", "</g>");
	assert_non_null(strstr(mark, "data-t0=\"0\""));
	assert_non_null(strstr(mark, "data-count=\"3\""));
	assert_non_null(strstr(mark, "<title>08:00-08:01: 3 instances launched (workers 2, gpu 1)</title>"));
	assert_non_null(strstr(mark, ">3</text>"));
	free(mark);
	mark = between(svg, "<g class=\"mark down\"", "</g>");
	assert_non_null(strstr(mark, "data-t0=\"70\""));
	assert_non_null(strstr(mark, "data-count=\"1\""));
	assert_non_null(strstr(mark, "1 node removed (workers 1)</title>"));
	free(mark);
	assert_int_equal(sum_counts(svg, "up", &marks), 3);
	assert_int_equal(marks, 1);
	assert_int_equal(sum_counts(svg, "down", &marks), 1);
	assert_int_equal(marks, 1);
	free(svg);
	/* the legend tells them apart */
	assert_non_null(strstr(html, "instances launched (the groups grew"));
	assert_non_null(strstr(html, "nodes removed (how many above)"));
	/* only the nodes chart has them */
	svg = chart(html, "pending", "alpha");
	assert_null(strstr(svg, "class=\"mark"));
	free(svg);
	assert_markup_ok(html);
	free(html);
}

static void test_many_events_stay_small(void **state)
{
	struct fixture *f = *state;
	struct sim_series *s = &f->runs[0].series;
	char *html, *svg;
	size_t i, marks, n = 1441;

	/* a day sampled every minute, each sample with events in both groups */
	f->sc.duration_ns = 24 * 3600 * S;
	series_drop(s);
	series_fill(s, n, 2, 1);
	s->launched = calloc(n * 2, sizeof(int));
	s->removed = calloc(n * 2, sizeof(int));
	assert_true(s->launched && s->removed);
	for (i = 0; i < n * 2; i++) {
		s->launched[i] = 2;
		s->removed[i] = 40;
	}
	html = write_and_read(f, 2);
	svg = chart(html, "nodes", "alpha");
	assert_int_equal(sum_counts(svg, "up", &marks), (long)n * 4);
	assert_true(marks <= 51);
	assert_int_equal(sum_counts(svg, "down", &marks), (long)n * 80);
	assert_true(marks <= 51);
	/* a column holds 28 or 29 samples: three digits go smaller, thousands as k */
	assert_non_null(strstr(svg, "<text class=\"s\" x=\""));
	assert_non_null(strstr(svg, "\">112</text>"));
	assert_non_null(strstr(svg, "\">2k</text>"));
	free(svg);
	svg = between(html, "<g class=\"marks\">", "</svg>");
	assert_true(strlen(svg) < 24 * 1024);
	free(svg);
	assert_markup_ok(html);
	free(html);
}

static void test_cost_by_group(void **state)
{
	struct fixture *f = *state;
	char *html, *table, *row, cell[64];
	const char *p;
	double sum = 0;
	size_t rows = 0;

	f->groups[1].name = "g<p>u&\"";
	html = write_and_read(f, 2);
	table = between(html, "<table class=\"cmp gcost\" data-policy=\"beta\"", "</table>");
	for (p = table; (p = strstr(p, "<tr data-group=\"")); p++) {
		char *tr = strndup(p, (size_t)(strchr(p, '>') - p));

		sum += attr_num(tr, "data-cost");
		free(tr);
		rows++;
	}
	assert_int_equal(rows, 2);
	/* the groups add up to the run's total, shown in the table and the comparison */
	assert_near(sum, f->runs[1].cost, 1e-12, 0);
	assert_near(attr_num(table, "data-cost"), f->runs[1].cost, 1e-12, 0);
	snprintf(cell, sizeof(cell), "<td>%.2f</td>", f->runs[1].cost);
	row = between(table, "<tr class=\"total\">", "</tr>");
	assert_non_null(strstr(row, cell));
	free(row);
	row = table_row(html, "beta");
	assert_non_null(strstr(row, cell));
	free(row);
	assert_non_null(strstr(table, "<tr data-group=\"g&lt;p&gt;u&amp;&quot;\""));
	assert_non_null(strstr(table, ">g&lt;p&gt;u&amp;&quot;</th><td>2.0</td><td>5.00</td><td>84%</td>"));
	free(table);
	assert_null(strstr(html, "<p>u"));
	assert_markup_ok(html);
	free(html);
}

static void test_params_shown(void **state)
{
	struct fixture *f = *state;
	struct sim_param *hostile = &f->runs[0].params[0];
	char *html, *div;

	free(hostile->key);
	free(hostile->value);
	hostile->key = strdup("we<ird\"&'key");
	hostile->value = strdup("</td><script>x()</script>");
	assert_true(hostile->key && hostile->value);
	snprintf(f->runs[0].params_from, sizeof(f->runs[0].params_from), "/c/<cfg>.yaml");
	html = write_and_read(f, 2);
	div = between(html, "<div class=\"params\" data-policy=\"alpha\"", "</div>");
	assert_non_null(strstr(div, "file <code>/policies/alpha.lua</code>"));
	assert_non_null(strstr(div, "params set by <code>/c/&lt;cfg&gt;.yaml</code>"));
	assert_non_null(strstr(div, "<tr data-param=\"we&lt;ird&quot;&amp;&#39;key\" "
				    "data-value=\"&lt;/td&gt;&lt;script&gt;x()&lt;/script&gt;\" data-from=\"default\">"));
	/* a param the config set shows the policy's default beside it */
	assert_non_null(strstr(div, "<tr data-param=\"unneeded_for\" data-value=\"3m\" data-from=\"config\">"
				    "<th class=\"policy\">unneeded_for</th><td class=\"policy set\">3m</td>"
				    "<td class=\"policy\">10m</td></tr>"));
	free(div);
	div = between(html, "<div class=\"params\" data-policy=\"beta\"", "</div>");
	assert_non_null(strstr(div, "data-value=\"0.5\" data-from=\"default\">"));
	free(div);
	assert_null(strstr(html, "<script"));
	assert_markup_ok(html);
	free(html);
}

/* The n-th cell (0: the first column after the policy) of a table row. */
static void nth_cell(const char *row, size_t n, char *out, size_t sz)
{
	const char *p = row, *end;
	size_t i;

	for (i = 0; i <= n; i++) {
		p = strstr(p, "<td");
		assert_non_null(p);
		if (i < n)
			p++;
	}
	end = strstr(p, "</td>");
	assert_non_null(end);
	snprintf(out, sz, "%.*s", (int)(end - p), p);
}

static void test_no_best_for_volumes(void **state)
{
	struct fixture *f = *state;
	struct sim_result *a = &f->runs[0], *b = &f->runs[1];
	char *html, *row, cell[128];

	a->cost = b->cost = 1;
	a->node_hours = b->node_hours = 1;
	a->wait_p50 = b->wait_p50 = 1;
	a->wait_p95 = b->wait_p95 = 1;
	a->wait_max = b->wait_max = 1;
	a->peak_nodes = 3;
	b->peak_nodes = 9;
	a->launches = 2;
	b->launches = 12;
	a->removed = 1;
	b->removed = 5;
	a->evictions = 4;
	b->evictions = 6;
	a->rejected = 0;
	b->rejected = 7;
	html = write_and_read(f, 2);
	row = table_row(html, "alpha");
	nth_cell(row, 5, cell, sizeof(cell)); /* peak nodes */
	assert_string_equal(cell, "<td>3");
	nth_cell(row, 6, cell, sizeof(cell)); /* launches */
	assert_string_equal(cell, "<td>2");
	nth_cell(row, 8, cell, sizeof(cell)); /* removed */
	assert_string_equal(cell, "<td>1");
	nth_cell(row, 9, cell, sizeof(cell)); /* evictions: lower is better */
	assert_string_equal(cell, "<td class=\"best\">4");
	nth_cell(row, 14, cell, sizeof(cell)); /* rejected */
	assert_string_equal(cell, "<td class=\"best\">0");
	assert_int_equal(count(row, "class=\"best\""), 2);
	free(row);
	assert_non_null(strstr(html, "but peak nodes, launches and removed, which follow the demand, and interrupted and moved"));
	free(html);
}

static void test_time_axis(void **state)
{
	struct fixture *f = *state;
	char *html, *svg;

	html = write_and_read(f, 2);
	svg = chart(html, "pending", "alpha");
	assert_non_null(strstr(svg, ">08:10</text>"));
	assert_non_null(strstr(svg, ">08:50</text>"));
	free(svg);
	free(html);

	f->sc.duration_ns = 24 * 3600 * S;
	html = write_and_read(f, 2);
	svg = chart(html, "pending", "alpha");
	assert_non_null(strstr(svg, ">09:00</text>"));
	assert_non_null(strstr(svg, ">12:00</text>"));
	assert_null(strstr(svg, ">10:00</text>"));
	assert_null(strstr(svg, ">08:10</text>"));
	assert_non_null(strstr(html, "<dd>24h</dd>"));
	free(svg);
	free(html);
}

static void test_same_policy_names(void **state)
{
	struct fixture *f = *state;
	char *html;

	snprintf(f->runs[0].policy, sizeof(f->runs[0].policy), "a/p.lua");
	snprintf(f->runs[1].policy, sizeof(f->runs[1].policy), "b/p.lua");
	html = write_and_read(f, 2);
	/* four charts, the rows of the comparison and of the waits, the wait
	 * curve, the params and the cost tables */
	assert_int_equal(count(html, "data-policy=\"p\""), 4 + 5);
	assert_int_equal(count(html, "data-policy=\"p (2)\""), 4 + 5);
	free(html);
}

static void test_missing_parent(void **state)
{
	struct fixture *f = *state;
	struct errbuf err;
	char dir[128];

	snprintf(dir, sizeof(dir), "%s/no/such", f->dir);
	assert_int_equal(sim_report_write(dir, &f->sc, f->runs, 2, &err), -1);
	assert_non_null(strstr(err.msg, dir));
	assert_non_null(strstr(err.msg, strerror(ENOENT)));
}

static void test_rerun_overwrites(void **state)
{
	struct fixture *f = *state;
	char *html, dir[128];
	DIR *d;
	struct dirent *e;
	int files = 0;

	/* into a directory that does not exist yet */
	snprintf(dir, sizeof(dir), "%s/out", f->dir);
	assert_true(strlen(dir) < sizeof(f->dir));
	memcpy(f->dir, dir, strlen(dir) + 1);
	f->sc.title = "first title";
	html = write_and_read(f, 2);
	assert_non_null(strstr(html, "first title"));
	free(html);
	f->sc.title = "second title";
	html = write_and_read(f, 1);
	assert_non_null(strstr(html, "second title"));
	assert_null(strstr(html, "first title"));
	assert_int_equal(count(html, "class=\"chart\""), 4);
	free(html);

	d = opendir(dir);
	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' || (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")))
			files++;
	closedir(d);
	assert_int_equal(files, 2);
	/* the fixture's teardown removes 'out'; its parent goes here */
	*strrchr(f->dir, '/') = '\0';
}

static void test_full_disk(void **state)
{
	struct fixture *f = *state;
	struct errbuf err;
	char link[128], dst[128];

	if (access("/dev/full", W_OK) != 0)
		skip();
	snprintf(link, sizeof(link), "%s/.index.html.tmp", f->dir);
	snprintf(dst, sizeof(dst), "%s/index.html", f->dir);
	assert_int_equal(symlink("/dev/full", link), 0);
	assert_int_equal(sim_report_write(f->dir, &f->sc, f->runs, 2, &err), -1);
	assert_non_null(strstr(err.msg, "index.html"));
	assert_non_null(strstr(err.msg, strerror(ENOSPC)));
	assert_int_equal(access(dst, F_OK), -1);
	assert_int_equal(access(link, F_OK), -1);
}

static void test_smoke_scenario(void **state)
{
	struct fixture *f = *state;
	struct errbuf err;
	struct sim_scenario *sc = sim_scenario_load(SMOKE, &err);
	char *html, *csv;

	if (!sc)
		fail_msg("%s", err.msg);
	series_drop(&f->runs[0].series);
	series_fill(&f->runs[0].series, 5, 1, 1);
	if (sim_report_write(f->dir, sc, f->runs, 1, &err) != 0)
		fail_msg("%s", err.msg);
	html = slurp(f->dir, "index.html");
	if (!sc->title)
		assert_non_null(strstr(html, "<h1>smoke.yaml</h1>"));
	assert_non_null(strstr(html, "<dd>42</dd>"));
	assert_non_null(strstr(html, "<dd>2024-05-06T08:00:00Z</dd>"));
	assert_int_equal(count(html, "class=\"chart\""), 4);
	assert_markup_ok(html);
	assert_self_contained(html);
	csv = slurp(f->dir, "series.csv");
	assert_int_equal(csv_records(csv, 9), 1 + 5);
	free(csv);
	free(html);
	sim_scenario_free(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_two_runs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_escaping, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shared_y_scale, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_and_non_finite, setup, teardown),
		cmocka_unit_test_setup_teardown(test_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_time_axis, setup, teardown),
		cmocka_unit_test_setup_teardown(test_same_policy_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_parent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rerun_overwrites, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_disk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_smoke_scenario, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wait_curves, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wait_curves_absent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_event_marks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_events_stay_small, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cost_by_group, setup, teardown),
		cmocka_unit_test_setup_teardown(test_params_shown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_best_for_volumes, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
