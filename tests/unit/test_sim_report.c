/*
 * Tests for sim/report.c: the HTML report has one chart per metric and
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
#include "sim/report.h"

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

	series_drop(&f->runs[0].series);
	series_drop(&f->runs[1].series);
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

	assert_int_equal(count(html, "data-policy=\"we&lt;b&gt;&amp;&quot;ird&#39;\""), 4 + 1);
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
	assert_int_equal(count(html, "data-policy=\"p\""), 5);
	assert_int_equal(count(html, "data-policy=\"p (2)\""), 5);
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
