/*
 * sim/report: turns finished runs into files — index.html (header, the
 * comparison table and inline SVG charts, one column per policy, one row
 * per metric on a shared scale) and series.csv (every sample). It neither
 * runs anything nor prints to the terminal.
 */
#include "sim/runs/report.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "runtime/clock.h"

#define LABEL_MAX 280
#define STR_(x) #x
#define STR(x) STR_(x)
#define SIM_CDF_POINTS_TEXT STR(SIM_CDF_POINTS)

/* Chart geometry, in viewBox units: the plot is inside the margins. */
enum {
	CH_W = 480,
	CH_H = 250,
	CH_L = 54,
	CH_R = 18,
	CH_T = 12,
	CH_B = 38,
};

#define PLOT_W ((double)(CH_W - CH_L - CH_R))
#define PLOT_H ((double)(CH_H - CH_T - CH_B))
#define PLOT_BOTTOM ((double)(CH_H - CH_B))

/* Colors of the node groups, by index, the same in every chart. */
static const char *const group_colors[] = {
	"#0969da", "#e16f24", "#1a7f37", "#8250df", "#cf222e",
	"#0598bc", "#bf8700", "#d6409f", "#6e7781", "#4d2d00",
};
#define N_COLORS (sizeof(group_colors) / sizeof(group_colors[0]))

#define COLOR_CPU "#0969da"
#define COLOR_MEM "#e16f24"
#define COLOR_PENDING "#8250df"
#define COLOR_COST "#1a7f37"
#define COLOR_TOTAL "#24292f"

struct report {
	const struct sim_scenario *sc;
	const struct sim_result *runs;
	size_t n;
	char (*labels)[LABEL_MAX]; /* per run: the policy file's name without ".lua" */
	size_t n_groups;           /* the most any run or the scenario has */
	int64_t span_ns;           /* the x axis: [0, span] */
	struct buf *b;
};

/* A y axis from 0 to ymax in steps of 'step'. */
struct axis {
	double ymax, step;
	int decimals;
};

/* ---- small helpers ---- */

static double fin(double v)
{
	return isfinite(v) ? v : 0.0;
}

/* Appends 's' with the five markup characters as entities and control
 * characters (which XML does not allow) left out. */
static void put_esc(struct buf *b, const char *s)
{
	const unsigned char *p;

	for (p = (const unsigned char *)(s ? s : ""); *p; p++) {
		switch (*p) {
		case '&': buf_puts(b, "&amp;"); break;
		case '<': buf_puts(b, "&lt;"); break;
		case '>': buf_puts(b, "&gt;"); break;
		case '"': buf_puts(b, "&quot;"); break;
		case '\'': buf_puts(b, "&#39;"); break;
		default:
			if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f)
				break;
			buf_append(b, p, 1);
		}
	}
}

/* Appends 's' as one CSV field, quoted when RFC 4180 asks for it. */
static void put_csv(struct buf *b, const char *s)
{
	const char *p;

	if (!s)
		s = "";
	if (!strpbrk(s, ",\"\r\n")) {
		buf_puts(b, s);
		return;
	}
	buf_append(b, "\"", 1);
	for (p = s; *p; p++) {
		if (*p == '"')
			buf_append(b, "\"", 1);
		buf_append(b, p, 1);
	}
	buf_append(b, "\"", 1);
}

static const char *group_name(const struct report *r, size_t g, char *tmp, size_t sz)
{
	if (g < r->sc->n_groups && r->sc->groups[g].name)
		return r->sc->groups[g].name;
	snprintf(tmp, sz, "group %zu", g + 1);
	return tmp;
}

void sim_report_format_wait(char *out, size_t sz, double sec)
{
	long long s, m;

	sec = fin(sec);
	if (sec < 0)
		sec = 0;
	if (sec > 1e12)
		sec = 1e12;
	if (sec < 9.95 && fabs(sec - round(sec)) >= 0.05) {
		snprintf(out, sz, "%.1fs", sec);
		return;
	}
	s = llround(sec);
	if (s < 60) {
		snprintf(out, sz, "%llds", s);
	} else if (s < 3600) {
		snprintf(out, sz, "%lldm%02llds", s / 60, s % 60);
	} else {
		m = (s + 30) / 60;
		snprintf(out, sz, "%lldh%02lldm", m / 60, m % 60);
	}
}

/* A whole span as "1h", "1h30m", "45m" or "2m30s": the parts that are not zero. */
static void fmt_span(char *out, size_t sz, int64_t ns)
{
	long long s = ns > 0 ? (long long)(ns / CLOCK_NS_PER_S) : 0;
	long long part[3] = {s / 3600, s % 3600 / 60, s % 60};
	static const char unit[3] = {'h', 'm', 's'};
	size_t o = 0;
	int i, w;

	out[0] = '\0';
	for (i = 0; i < 3; i++) {
		if (!part[i] || o >= sz)
			continue;
		w = snprintf(out + o, sz - o, "%lld%c", part[i], unit[i]);
		if (w > 0)
			o += (size_t)w;
	}
	if (s == 0)
		snprintf(out, sz, "0s");
}

static void fmt_wall(char *out, size_t sz, int64_t wall, const char *fmt)
{
	time_t t = (time_t)wall;
	struct tm tm;

	if (!gmtime_r(&t, &tm) || strftime(out, sz, fmt, &tm) == 0)
		snprintf(out, sz, "?");
}

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* ---- scales ---- */

static double xpos(const struct report *r, int64_t t_ns)
{
	double f = (double)t_ns / (double)r->span_ns;

	if (!(f > 0))
		f = 0;
	if (f > 1)
		f = 1;
	return CH_L + f * PLOT_W;
}

static double ypos(const struct axis *ax, double v)
{
	double f = fin(v) / ax->ymax;

	if (!(f > 0))
		f = 0;
	if (f > 1)
		f = 1;
	return PLOT_BOTTOM - f * PLOT_H;
}

/* An axis from 0 with 4 to 6 ticks at 1, 2 or 5 x 10^k covering 'max'
 * (at least 1 when 'max' is zero, whole steps when 'integer'). */
static struct axis axis_nice(double max, bool integer)
{
	static const double mult[] = {1, 2, 5, 10};
	struct axis ax;
	double raw, mag;
	size_t i;

	max = fin(max);
	if (max <= 1e-9)
		max = 1;
	if (max > 1e15)
		max = 1e15;
	raw = max / 5;
	mag = pow(10, floor(log10(raw)));
	ax.step = 10 * mag;
	for (i = 0; i < sizeof(mult) / sizeof(mult[0]); i++) {
		if (mult[i] * mag >= raw * (1 - 1e-9)) {
			ax.step = mult[i] * mag;
			break;
		}
	}
	if (integer && ax.step < 1)
		ax.step = 1;
	ax.ymax = ceil(max / ax.step - 1e-9) * ax.step;
	ax.decimals = ax.step >= 1 ? 0 : (int)ceil(-log10(ax.step) - 1e-9);
	return ax;
}

static void fmt_tick(char *out, size_t sz, const struct axis *ax, double v)
{
	if (ax->ymax >= 1e7)
		snprintf(out, sz, "%gM", v / 1e6);
	else if (ax->ymax >= 1e4)
		snprintf(out, sz, "%gk", v / 1e3);
	else
		snprintf(out, sz, "%.*f", ax->decimals, v);
}

/* ---- series access: NULL arrays read as zeros, as do NaN and infinities ---- */

static int s_nodes(const struct sim_series *s, size_t i, size_t g)
{
	int v;

	if (!s->nodes || g >= s->n_groups)
		return 0;
	v = s->nodes[i * s->n_groups + g];
	return v > 0 ? v : 0;
}

static int s_booting(const struct sim_series *s, size_t i, size_t g)
{
	int v;

	if (!s->booting || g >= s->n_groups)
		return 0;
	v = s->booting[i * s->n_groups + g];
	return v > 0 ? v : 0;
}

static int s_pending(const struct sim_series *s, size_t i)
{
	return s->pending && s->pending[i] > 0 ? s->pending[i] : 0;
}

static double s_dbl(const double *a, size_t i)
{
	return a ? fin(a[i]) : 0.0;
}

static int64_t s_t(const struct sim_series *s, size_t i)
{
	return s->t_ns ? s->t_ns[i] : 0;
}

/* ---- the page ---- */

static const char style_css[] =
	"*{box-sizing:border-box}\n"
	"body{font-family:system-ui,-apple-system,\"Segoe UI\",Roboto,\"Helvetica Neue\",Arial,sans-serif;"
	"color:#1f2328;background:#fff;margin:0 auto;max-width:1440px;padding:24px 32px;"
	"line-height:1.45;font-size:14px}\n"
	"h1{font-size:24px;margin:0 0 4px}\n"
	"h2{font-size:18px;margin:28px 0 10px;border-bottom:1px solid #d0d7de;padding-bottom:4px}\n"
	"h3{font-size:15px;margin:18px 0 4px}\n"
	".desc{white-space:pre-line;color:#424a53;max-width:900px;margin:4px 0 10px}\n"
	".facts{display:flex;flex-wrap:wrap;gap:6px 28px;margin:8px 0 0;padding:0;color:#57606a}\n"
	".facts div{display:flex;gap:6px}\n"
	".facts dt{font-weight:600;color:#1f2328}\n"
	".facts dd{margin:0}\n"
	"table.cmp{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}\n"
	".cmp th,.cmp td{padding:5px 8px;border-bottom:1px solid #d8dee4;text-align:right;white-space:nowrap}\n"
	".cmp thead th{font-size:12px;color:#57606a;font-weight:600;vertical-align:bottom;"
	"border-bottom:2px solid #d0d7de;white-space:normal}\n"
	".cmp th.policy{text-align:left}\n"
	".cmp td.best{background:#dafbe1;font-weight:600}\n"
	".cmp td.inv{text-align:left;white-space:normal;max-width:320px}\n"
	".cmp td.ok{color:#1a7f37}\n"
	".cmp td.bad{color:#cf222e;font-weight:600}\n"
	".note{color:#57606a;font-size:12px;margin:6px 0}\n"
	".metric{break-inside:avoid;page-break-inside:avoid}\n"
	".legend{display:flex;flex-wrap:wrap;gap:4px 16px;margin:0 0 6px;font-size:12px;color:#424a53}\n"
	".legend span{display:inline-flex;align-items:center;gap:5px}\n"
	".sw{display:inline-block;width:14px;height:10px;border-radius:2px}\n"
	".sw.dash{height:0;border-top:2px dashed " COLOR_TOTAL ";border-radius:0}\n"
	".charts{display:grid;gap:8px 18px}\n"
	"figure{margin:0;min-width:0}\n"
	"figcaption{font-size:12px;font-weight:600;color:#424a53;text-align:center}\n"
	"svg.chart{display:block;width:100%;height:auto}\n"
	".chart text{font-size:10px;fill:#57606a;font-family:inherit}\n"
	".chart .atitle{font-size:10px;fill:#6e7781}\n"
	".chart .empty{font-size:14px;fill:#8c959f}\n"
	".chart .grid line{stroke:#eaeef2;stroke-width:1}\n"
	".chart .frame{fill:none;stroke:#afb8c1;stroke-width:1}\n"
	".chart .line{fill:none;stroke-width:1.5;stroke-linejoin:round}\n"
	".chart .area{stroke:none;fill-opacity:0.35}\n"
	".chart .total{fill:none;stroke:" COLOR_TOTAL ";stroke-width:1.2;stroke-dasharray:4 3}\n"
	".chart .mark path{stroke:#fff;stroke-width:0.8}\n"
	".chart .mark text{font-size:6px;text-anchor:middle;fill:#1f2328;paint-order:stroke;"
	"stroke:#fff;stroke-width:1.5px}\n"
	".chart .mark text.s{font-size:5px}\n"
	".wbox{display:flex;flex-wrap:wrap;gap:12px 28px;align-items:flex-start}\n"
	".wbox figure{flex:1 1 420px;max-width:720px}\n"
	".wbox table{width:auto}\n"
	".cmp td.policy{text-align:left;white-space:normal;overflow-wrap:anywhere}\n"
	".cmp td.set{font-weight:600}\n"
	".cmp tr.total td,.cmp tr.total th{font-weight:600;border-top:2px solid #d0d7de}\n"
	"code{font-size:12px;overflow-wrap:anywhere}\n"
	"footer{margin-top:28px;color:#8c959f;font-size:12px}\n"
	"@page{size:A4 landscape;margin:12mm}\n"
	"@media print{body{max-width:none;padding:0;font-size:10pt}"
	"h2{break-after:avoid}.cmp{font-size:9pt}}\n";

static void put_header(struct report *r)
{
	const struct sim_scenario *sc = r->sc;
	struct buf *b = r->b;
	const char *title = sc->title, *base;
	char start[64], dur[64];
	size_t g;

	if (!title || !*title) {
		base = sc->source ? strrchr(sc->source, '/') : NULL;
		title = base ? base + 1 : sc->source ? sc->source : "simulation";
	}
	fmt_wall(start, sizeof(start), sc->start_wall, "%Y-%m-%dT%H:%M:%SZ");
	fmt_span(dur, sizeof(dur), sc->duration_ns);

	buf_puts(b, "<!DOCTYPE html>\n"
		    "<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n"
		    "<meta charset=\"utf-8\"/>\n"
		    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
		    "<title>");
	put_esc(b, title);
	buf_puts(b, " - luascale simulation</title>\n<style>\n");
	buf_puts(b, style_css);
	buf_puts(b, "</style>\n</head>\n<body>\n<header>\n<h1>");
	put_esc(b, title);
	buf_puts(b, "</h1>\n");
	if (sc->description && *sc->description) {
		buf_puts(b, "<p class=\"desc\">");
		put_esc(b, sc->description);
		buf_puts(b, "</p>\n");
	}
	buf_puts(b, "<dl class=\"facts\">\n");
	buf_printf(b, "<div><dt>seed</dt><dd>%llu</dd></div>\n", (unsigned long long)sc->seed);
	buf_printf(b, "<div><dt>start</dt><dd>%s</dd></div>\n", start);
	buf_printf(b, "<div><dt>duration</dt><dd>%s</dd></div>\n", dur);
	buf_puts(b, "<div><dt>node groups</dt><dd>");
	for (g = 0; g < sc->n_groups; g++) {
		if (g)
			buf_puts(b, ", ");
		put_esc(b, sc->groups[g].name);
		buf_printf(b, " (%.4g/h)", fin(sc->groups[g].price_per_hour));
	}
	if (!sc->n_groups)
		buf_puts(b, "none");
	buf_puts(b, "</dd></div>\n");
	if (sc->source) {
		/* the file's name; the whole path in a tooltip */
		const char *slash = strrchr(sc->source, '/');

		buf_puts(b, "<div><dt>scenario</dt><dd title=\"");
		put_esc(b, sc->source);
		buf_puts(b, "\">");
		put_esc(b, slash ? slash + 1 : sc->source);
		buf_puts(b, "</dd></div>\n");
	}
	buf_puts(b, "</dl>\n</header>\n");
}

/* ---- the comparison table ---- */

enum col_kind { COL_HOURS, COL_COST, COL_WAIT, COL_INT, COL_U64 };

/* Which way a column is better: lower, or neither (a volume that follows
 * the demand, such as scale actions: fewer is not better in itself). */
enum col_rank { LOWER_BETTER, NO_BEST };

struct column {
	const char *head, *tip;
	enum col_kind kind;
	size_t off;
	enum col_rank rank;
};

#define RES_OFF(field) offsetof(struct sim_result, field)

static const struct column columns[] = {
	{"node-hours", "instance time from launch until gone, in hours", COL_HOURS, RES_OFF(node_hours), LOWER_BETTER},
	{"cost", "instance time x the group's price per hour", COL_COST, RES_OFF(cost), LOWER_BETTER},
	{"wait p50", "median time a pod waited to be bound", COL_WAIT, RES_OFF(wait_p50), LOWER_BETTER},
	{"wait p95", "95th percentile of the time a pod waited to be bound", COL_WAIT, RES_OFF(wait_p95), LOWER_BETTER},
	{"wait max", "longest time a pod waited to be bound", COL_WAIT, RES_OFF(wait_max), LOWER_BETTER},
	{"peak nodes", "most registered nodes at once (follows the demand: no best)", COL_INT, RES_OFF(peak_nodes), NO_BEST},
	{"launches", "instances asked for (follows the demand: no best)", COL_U64, RES_OFF(launches), NO_BEST},
	{"unused", "launched nodes removed without having run a pod (DaemonSet pods aside)", COL_U64, RES_OFF(unused), LOWER_BETTER},
	{"removed", "nodes deleted (follows the demand: no best)", COL_U64, RES_OFF(removed), NO_BEST},
	{"evictions", "evictions accepted by the Eviction API", COL_U64, RES_OFF(evictions), LOWER_BETTER},
	{"killed", "unfinished pods that died without an eviction", COL_U64, RES_OFF(killed), LOWER_BETTER},
	{"lost", "evicted or killed pods that no controller recreates", COL_U64, RES_OFF(lost), LOWER_BETTER},
	{"protected", "protected pods evicted or killed", COL_U64, RES_OFF(protected_killed), LOWER_BETTER},
	{"policy failures", "rounds where the policy failed", COL_U64, RES_OFF(policy_failures), LOWER_BETTER},
	{"rejected", "actions the safety checks refused", COL_U64, RES_OFF(rejected), LOWER_BETTER},
	{"interrupted", "nodes gone whose instance the cloud reclaimed after an interruption notice (follows the scenario: no best)", COL_U64, RES_OFF(interrupted), NO_BEST},
	{"moved", "pods of interrupted nodes evicted before their node went (follows the scenario: no best)", COL_U64, RES_OFF(moved), NO_BEST},
	{"died with node", "pods of interrupted nodes that died with their node (no eviction)", COL_U64, RES_OFF(died), LOWER_BETTER},
};
#define N_COLUMNS (sizeof(columns) / sizeof(columns[0]))

static double col_value(const struct sim_result *res, const struct column *c)
{
	const char *p = (const char *)res + c->off;
	double d;
	int i;
	uint64_t u;

	switch (c->kind) {
	case COL_INT:
		memcpy(&i, p, sizeof(i));
		return i;
	case COL_U64:
		memcpy(&u, p, sizeof(u));
		return (double)u;
	default:
		memcpy(&d, p, sizeof(d));
		return fin(d);
	}
}

static void col_format(char *out, size_t sz, const struct sim_result *res, const struct column *c)
{
	double v = col_value(res, c);
	uint64_t u;

	switch (c->kind) {
	case COL_HOURS: snprintf(out, sz, "%.1f", v); break;
	case COL_COST: snprintf(out, sz, "%.2f", v); break;
	case COL_WAIT: sim_report_format_wait(out, sz, v); break;
	case COL_INT: snprintf(out, sz, "%.0f", v); break;
	case COL_U64:
		memcpy(&u, (const char *)res + c->off, sizeof(u));
		snprintf(out, sz, "%llu", (unsigned long long)u);
		break;
	}
}

static void put_table(struct report *r)
{
	struct buf *b = r->b;
	char best[N_COLUMNS][64], cell[64];
	bool differ[N_COLUMNS];
	size_t i, c;

	/* The lowest value of each column is the best one; it is marked only
	 * when the runs differ in what the table shows. */
	for (c = 0; c < N_COLUMNS; c++) {
		size_t at = 0;

		for (i = 1; i < r->n; i++)
			if (col_value(&r->runs[i], &columns[c]) < col_value(&r->runs[at], &columns[c]))
				at = i;
		best[c][0] = '\0';
		differ[c] = false;
		if (!r->n || columns[c].rank == NO_BEST)
			continue;
		col_format(best[c], sizeof(best[c]), &r->runs[at], &columns[c]);
		for (i = 0; i < r->n; i++) {
			col_format(cell, sizeof(cell), &r->runs[i], &columns[c]);
			if (strcmp(cell, best[c]) != 0)
				differ[c] = true;
		}
	}

	buf_puts(b, "<section>\n<h2>Comparison</h2>\n");
	if (!r->n) {
		buf_puts(b, "<p class=\"note\">No runs.</p>\n</section>\n");
		return;
	}
	buf_puts(b, "<table class=\"cmp\">\n<thead>\n<tr><th class=\"policy\">policy</th>");
	for (c = 0; c < N_COLUMNS; c++)
		buf_printf(b, "<th title=\"%s\">%s</th>", columns[c].tip, columns[c].head);
	buf_puts(b, "<th class=\"policy\" title=\"the safety invariants over the whole run\">"
		    "invariants</th></tr>\n</thead>\n<tbody>\n");
	for (i = 0; i < r->n; i++) {
		const struct sim_result *res = &r->runs[i];
		uint64_t nv = sim_violations_total(&res->v);

		buf_puts(b, "<tr data-policy=\"");
		put_esc(b, r->labels[i]);
		buf_puts(b, "\"><th class=\"policy\" scope=\"row\" title=\"");
		put_esc(b, res->policy);
		buf_puts(b, "\">");
		put_esc(b, r->labels[i]);
		buf_puts(b, "</th>");
		for (c = 0; c < N_COLUMNS; c++) {
			col_format(cell, sizeof(cell), res, &columns[c]);
			buf_printf(b, "<td%s>%s</td>",
				   differ[c] && strcmp(cell, best[c]) == 0 ? " class=\"best\"" : "", cell);
		}
		if (nv == 0) {
			buf_puts(b, "<td class=\"inv ok\">ok</td>");
		} else {
			buf_printf(b, "<td class=\"inv bad\">%llu violation%s", (unsigned long long)nv,
				   nv == 1 ? "" : "s");
			if (res->v.first[0]) {
				buf_puts(b, ": ");
				put_esc(b, res->v.first);
			}
			buf_puts(b, "</td>");
		}
		buf_puts(b, "</tr>\n");
	}
	buf_puts(b, "</tbody>\n</table>\n<p class=\"note\">Lower is better in every column but "
		    "peak nodes, launches and removed, which follow the demand, and interrupted and moved, "
		    "which follow the scenario's interruptions (fewer is not better in "
		    "itself); the best value of the other columns is highlighted when the policies "
		    "differ.</p>\n</section>\n");
}

/* ---- charts ---- */

/* The x ticks: whole minutes or hours of the day (UTC), at most 'max'. */
static int64_t x_tick_step(int64_t span_s, int max)
{
	static const int64_t steps[] = {
		60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200,
		86400, 2 * 86400, 7 * 86400, 30 * 86400, 365 * 86400,
	};
	size_t i;

	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (span_s / steps[i] <= max)
			return steps[i];
	return span_s > 0 ? span_s : 1;
}

static void svg_open(struct report *r, size_t k, const char *metric, const char *what,
		     const char *ylabel, const struct axis *ax)
{
	struct buf *b = r->b;
	int64_t span_s = r->span_ns / CLOCK_NS_PER_S, start = r->sc->start_wall, step, w;
	bool dated = span_s > 86400;
	char lab[64];
	int i, nt;

	buf_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" data-metric=\"%s\" "
		      "data-policy=\"", metric);
	put_esc(b, r->labels[k]);
	buf_printf(b, "\" data-ymax=\"%g\" viewBox=\"0 0 %d %d\" role=\"img\">\n<title>", ax->ymax,
		   CH_W, CH_H);
	buf_puts(b, what);
	buf_puts(b, ": ");
	put_esc(b, r->labels[k]);
	buf_puts(b, " (");
	put_esc(b, r->runs[k].policy);
	buf_puts(b, ")</title>\n");

	/* horizontal gridlines and the y labels */
	nt = (int)llround(ax->ymax / ax->step);
	if (nt > 20)
		nt = 20;
	buf_puts(b, "<g class=\"grid\">");
	for (i = 0; i <= nt; i++) {
		double y = ypos(ax, i * ax->step);

		buf_printf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>", CH_L, y,
			   CH_W - CH_R, y);
	}
	step = x_tick_step(span_s, dated ? 4 : 8);
	for (w = floor_div(start + step - 1, step) * step; w - start <= span_s; w += step) {
		double x = xpos(r, (w - start) * CLOCK_NS_PER_S);

		buf_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\"/>", x, CH_T, x,
			   PLOT_BOTTOM);
	}
	buf_puts(b, "</g>\n<g text-anchor=\"end\">");
	for (i = 0; i <= nt; i++) {
		fmt_tick(lab, sizeof(lab), ax, i * ax->step);
		buf_printf(b, "<text x=\"%d\" y=\"%.1f\">%s</text>", CH_L - 5,
			   ypos(ax, i * ax->step) + 3.5, lab);
	}
	buf_puts(b, "</g>\n<g text-anchor=\"middle\">");
	for (w = floor_div(start + step - 1, step) * step; w - start <= span_s; w += step) {
		fmt_wall(lab, sizeof(lab), w, dated ? "%m-%d %H:%M" : "%H:%M");
		buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\">%s</text>",
			   xpos(r, (w - start) * CLOCK_NS_PER_S), PLOT_BOTTOM + 14, lab);
	}
	buf_puts(b, "</g>\n");
	buf_printf(b, "<text class=\"atitle\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">"
		      "time of day (UTC)</text>\n", CH_L + PLOT_W / 2, CH_H - 4);
	buf_printf(b, "<text class=\"atitle\" transform=\"translate(12,%.1f) rotate(-90)\" "
		      "text-anchor=\"middle\">%s</text>\n", CH_T + PLOT_H / 2, ylabel);
}

static void svg_close(struct report *r, size_t k)
{
	struct buf *b = r->b;

	buf_printf(b, "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%.1f\"/>\n",
		   CH_L, CH_T, PLOT_W, PLOT_H);
	if (r->runs[k].series.n == 0)
		buf_printf(b, "<text class=\"empty\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">"
			      "no samples</text>\n", CH_L + PLOT_W / 2, CH_T + PLOT_H / 2 + 5);
	buf_puts(b, "</svg>\n");
}

/* A value of a sample for a line or an area. */
typedef double (*sample_fn)(const struct report *r, const struct sim_series *s, size_t i,
			    size_t arg);

/* The points of fn over the series, leaving out those in the middle of a
 * level stretch (the same y before and after: the line looks the same). */
static void put_points(const struct report *r, const struct sim_series *s, const struct axis *ax,
		       sample_fn fn, size_t arg, bool backwards)
{
	double prev = 0, y, next = 0;
	size_t j, i;
	bool level;

	if (s->n)
		next = round(ypos(ax, fn(r, s, backwards ? s->n - 1 : 0, arg)) * 10);
	for (j = 0; j < s->n; j++) {
		i = backwards ? s->n - 1 - j : j;
		y = next;
		if (j + 1 < s->n)
			next = round(ypos(ax, fn(r, s, backwards ? i - 1 : i + 1, arg)) * 10);
		level = j > 0 && j + 1 < s->n && y == prev && y == next;
		prev = y;
		if (level)
			continue;
		buf_printf(r->b, "%s%.1f,%.1f", j ? " " : "", xpos(r, s_t(s, i)), y / 10);
	}
}

static void put_line(const struct report *r, const struct sim_series *s, const struct axis *ax,
		     sample_fn fn, size_t arg, const char *cls, const char *color)
{
	if (s->n == 0)
		return;
	buf_printf(r->b, "<polyline class=\"%s\"", cls);
	if (color)
		buf_printf(r->b, " stroke=\"%s\"", color);
	buf_puts(r->b, " points=\"");
	put_points(r, s, ax, fn, arg, false);
	buf_puts(r->b, "\"/>\n");
}

/* The area between fn(arg - 1) (0 when arg is 0) and fn(arg). */
static void put_band(const struct report *r, const struct sim_series *s, const struct axis *ax,
		     sample_fn fn, size_t arg, const char *color)
{
	if (s->n == 0)
		return;
	buf_printf(r->b, "<path class=\"area\" fill=\"%s\" d=\"M", color);
	put_points(r, s, ax, fn, arg, false);
	buf_puts(r->b, " ");
	if (arg == 0)
		buf_printf(r->b, "%.1f,%.1f %.1f,%.1f", xpos(r, s_t(s, s->n - 1)), PLOT_BOTTOM,
			   xpos(r, s_t(s, 0)), PLOT_BOTTOM);
	else
		put_points(r, s, ax, fn, arg - 1, true);
	buf_puts(r->b, "Z\"/>\n");
}

static double f_stack(const struct report *r, const struct sim_series *s, size_t i, size_t g)
{
	double v = 0;
	size_t h;

	(void)r;
	for (h = 0; h <= g; h++)
		v += s_nodes(s, i, h);
	return v;
}

static double f_total(const struct report *r, const struct sim_series *s, size_t i, size_t arg)
{
	double v = 0;
	size_t g;

	(void)arg;
	for (g = 0; g < r->n_groups; g++)
		v += s_nodes(s, i, g) + s_booting(s, i, g);
	return v;
}

static double f_pending(const struct report *r, const struct sim_series *s, size_t i, size_t arg)
{
	(void)r;
	(void)arg;
	return s_pending(s, i);
}

static double pct(double v)
{
	v = fin(v) * 100;
	return v < 0 ? 0 : v > 100 ? 100 : v;
}

static double f_cpu(const struct report *r, const struct sim_series *s, size_t i, size_t arg)
{
	(void)r;
	(void)arg;
	return pct(s_dbl(s->util_cpu, i));
}

static double f_mem(const struct report *r, const struct sim_series *s, size_t i, size_t arg)
{
	(void)r;
	(void)arg;
	return pct(s_dbl(s->util_mem, i));
}

static double f_cost(const struct report *r, const struct sim_series *s, size_t i, size_t arg)
{
	(void)r;
	(void)arg;
	return s_dbl(s->cost, i);
}

static double series_max(const struct report *r, sample_fn fn, size_t arg)
{
	double m = 0;
	size_t k, i;

	for (k = 0; k < r->n; k++)
		for (i = 0; i < r->runs[k].series.n; i++) {
			double v = fn(r, &r->runs[k].series, i, arg);

			if (v > m)
				m = v;
		}
	return m;
}

static void put_swatch(struct buf *b, const char *color, const char *name, bool dashed)
{
	if (dashed)
		buf_puts(b, "<span><i class=\"sw dash\"></i>");
	else
		buf_printf(b, "<span><i class=\"sw\" style=\"background:%s\"></i>", color);
	put_esc(b, name);
	buf_puts(b, "</span>");
}

static void row_open(struct report *r, const char *heading)
{
	buf_printf(r->b, "<div class=\"metric\">\n<h3>%s</h3>\n", heading);
}

static void grid_open(struct report *r)
{
	buf_printf(r->b, "<div class=\"charts\" style=\"grid-template-columns:repeat(%zu,minmax(0,1fr))\">\n",
		   r->n);
}

static void figure_open(struct report *r, size_t k)
{
	buf_puts(r->b, "<figure>\n<figcaption title=\"");
	put_esc(r->b, r->runs[k].policy);
	buf_puts(r->b, "\">");
	put_esc(r->b, r->labels[k]);
	buf_puts(r->b, "</figcaption>\n");
}

/* ---- scale-up and removal markers on the nodes chart ---- */

#define MARK_W 8.0 /* the plot's width in viewBox units taken by one marker's time bucket */
#define COLOR_UP "#116329"
#define COLOR_DOWN "#a40e26"

static int s_event(const int *a, const struct sim_series *s, size_t i, size_t g)
{
	int v;

	if (!a || g >= s->n_groups)
		return 0;
	v = a[i * s->n_groups + g];
	return v > 0 ? v : 0;
}

/* "09:10-09:18" (with the date on a run longer than a day): when a bucket is. */
static void fmt_bucket(const struct report *r, char *out, size_t sz, int64_t t0, int64_t t1)
{
	const char *f = r->span_ns > 86400 * CLOCK_NS_PER_S ? "%m-%d %H:%M" : "%H:%M";
	char a[32], b[32];

	fmt_wall(a, sizeof(a), r->sc->start_wall + t0 / CLOCK_NS_PER_S, f);
	fmt_wall(b, sizeof(b), r->sc->start_wall + t1 / CLOCK_NS_PER_S, f);
	snprintf(out, sz, "%s-%s", a, b);
}

/*
 * One marker for a bucket: a triangle pointing up at the top of the plot
 * (the groups grew) or down at its bottom (nodes left), the count beside
 * it, and in its tooltip when and how many per group.
 */
static void put_mark(struct report *r, bool up, size_t bkt, const int *per_group, int total,
		     int64_t t0, int64_t t1)
{
	struct buf *b = r->b;
	double x = CH_L + ((double)bkt + 0.5) * MARK_W;
	char when[80], tmp[32], label[16];
	const char *size = "";
	double stagger = 0;
	bool first = true;
	size_t g;

	/* the count fits its column: in thousands from four digits; three
	 * characters are smaller, and in every other column a line further in
	 * so that two side by side do not touch */
	if (total >= 1000)
		snprintf(label, sizeof(label), "%dk", total / 1000 > 99 ? 99 : total / 1000);
	else
		snprintf(label, sizeof(label), "%d", total);
	if (strlen(label) >= 3) {
		size = " class=\"s\"";
		stagger = bkt % 2 ? 7.0 : 0.0;
	}
	if (x > CH_L + PLOT_W - 3.5)
		x = CH_L + PLOT_W - 3.5;
	fmt_bucket(r, when, sizeof(when), t0, t1);
	buf_printf(b, "<g class=\"mark %s\" data-t0=\"%lld\" data-t1=\"%lld\" data-count=\"%d\"><title>%s: %d %s (",
		   up ? "up" : "down", (long long)(t0 / CLOCK_NS_PER_S),
		   (long long)(t1 / CLOCK_NS_PER_S), total, when, total,
		   up ? (total == 1 ? "instance launched" : "instances launched")
		      : (total == 1 ? "node removed" : "nodes removed"));
	for (g = 0; g < r->n_groups; g++) {
		if (!per_group[g])
			continue;
		if (!first)
			buf_puts(b, ", ");
		first = false;
		put_esc(b, group_name(r, g, tmp, sizeof(tmp)));
		buf_printf(b, " %d", per_group[g]);
	}
	if (up)
		buf_printf(b, ")</title><path fill=\"%s\" d=\"M%.1f,%.1fl3.5,6h-7z\"/>"
			      "<text%s x=\"%.1f\" y=\"%.1f\">%s</text></g>\n",
			   COLOR_UP, x, CH_T + 1.5, size, x,
			   stagger > 0 ? CH_T + 7.5 + stagger : CH_T - 2.0, label);
	else
		buf_printf(b, ")</title><path fill=\"%s\" d=\"M%.1f,%.1fl3.5,-6h-7z\"/>"
			      "<text%s x=\"%.1f\" y=\"%.1f\">%s</text></g>\n",
			   COLOR_DOWN, x, PLOT_BOTTOM - 1.5, size, x, PLOT_BOTTOM - 9.5 - stagger, label);
}

/*
 * The markers of run k: the samples' scale-ups and removals summed per
 * bucket of MARK_W units of the plot, so however many events there are
 * the chart has at most two markers per bucket.
 */
static void put_marks(struct report *r, const struct sim_series *s)
{
	size_t nb = (size_t)ceil(PLOT_W / MARK_W), ng = r->n_groups ? r->n_groups : 1;
	int *up, *down, *tot_up, *tot_down;
	size_t i, g, k;

	if (!s->n || (!s->launched && !s->removed))
		return;
	up = calloc(nb * ng, sizeof(*up));
	down = calloc(nb * ng, sizeof(*down));
	tot_up = calloc(nb, sizeof(*tot_up));
	tot_down = calloc(nb, sizeof(*tot_down));
	if (!up || !down || !tot_up || !tot_down) {
		r->b->oom = 1;
		goto out;
	}
	for (i = 0; i < s->n; i++) {
		double f = (xpos(r, s_t(s, i)) - CH_L) / MARK_W;

		k = f > 0 ? (size_t)f : 0;
		if (k >= nb)
			k = nb - 1;
		for (g = 0; g < r->n_groups && g < s->n_groups; g++) {
			int u = s_event(s->launched, s, i, g), d = s_event(s->removed, s, i, g);

			/* saturating: a count never wraps, whatever the input */
			up[k * ng + g] = u > INT_MAX - up[k * ng + g] ? INT_MAX : up[k * ng + g] + u;
			down[k * ng + g] = d > INT_MAX - down[k * ng + g] ? INT_MAX : down[k * ng + g] + d;
			tot_up[k] = u > INT_MAX - tot_up[k] ? INT_MAX : tot_up[k] + u;
			tot_down[k] = d > INT_MAX - tot_down[k] ? INT_MAX : tot_down[k] + d;
		}
	}
	buf_puts(r->b, "<g class=\"marks\">\n");
	for (k = 0; k < nb; k++) {
		int64_t t0 = (int64_t)((double)r->span_ns * (double)k * MARK_W / PLOT_W);
		int64_t t1 = (int64_t)((double)r->span_ns * fmin(1.0, (double)(k + 1) * MARK_W / PLOT_W));

		if (tot_up[k])
			put_mark(r, true, k, &up[k * ng], tot_up[k], t0, t1);
		if (tot_down[k])
			put_mark(r, false, k, &down[k * ng], tot_down[k], t0, t1);
	}
	buf_puts(r->b, "</g>\n");
out:
	free(up);
	free(down);
	free(tot_up);
	free(tot_down);
}

static void put_charts(struct report *r)
{
	struct buf *b = r->b;
	struct axis ax;
	char tmp[32];
	size_t k, g;

	buf_puts(b, "<section>\n<h2>Over time</h2>\n");
	if (!r->n) {
		buf_puts(b, "<p class=\"note\">No runs.</p>\n</section>\n");
		return;
	}

	/* nodes: registered nodes stacked by group, and all instances dashed */
	ax = axis_nice(series_max(r, f_total, 0), true);
	row_open(r, "Nodes per group");
	buf_puts(b, "<p class=\"legend\">");
	for (g = 0; g < r->n_groups; g++)
		put_swatch(b, group_colors[g % N_COLORS], group_name(r, g, tmp, sizeof(tmp)), false);
	put_swatch(b, NULL, "all instances, booting included", true);
	buf_puts(b, "<span><b style=\"color:" COLOR_UP "\">\u25b2</b>instances launched "
		    "(the groups grew; how many above)</span>"
		    "<span><b style=\"color:" COLOR_DOWN "\">\u25bc</b>nodes removed "
		    "(how many above)</span></p>\n");
	grid_open(r);
	for (k = 0; k < r->n; k++) {
		const struct sim_series *s = &r->runs[k].series;

		figure_open(r, k);
		svg_open(r, k, "nodes", "Nodes per group", "nodes", &ax);
		for (g = 0; g < r->n_groups; g++)
			put_band(r, s, &ax, f_stack, g, group_colors[g % N_COLORS]);
		for (g = 0; g < r->n_groups; g++)
			put_line(r, s, &ax, f_stack, g, "line", group_colors[g % N_COLORS]);
		put_line(r, s, &ax, f_total, 0, "total", NULL);
		put_marks(r, s);
		svg_close(r, k);
		buf_puts(b, "</figure>\n");
	}
	buf_puts(b, "</div>\n</div>\n");

	/* pending pods */
	ax = axis_nice(series_max(r, f_pending, 0), true);
	row_open(r, "Pending pods");
	grid_open(r);
	for (k = 0; k < r->n; k++) {
		const struct sim_series *s = &r->runs[k].series;

		figure_open(r, k);
		svg_open(r, k, "pending", "Pending pods", "pods", &ax);
		put_band(r, s, &ax, f_pending, 0, COLOR_PENDING);
		put_line(r, s, &ax, f_pending, 0, "line", COLOR_PENDING);
		svg_close(r, k);
		buf_puts(b, "</figure>\n");
	}
	buf_puts(b, "</div>\n</div>\n");

	/* utilization, 0-100 % always */
	ax = axis_nice(100, false);
	row_open(r, "Utilization of Ready nodes (requested / allocatable)");
	buf_puts(b, "<p class=\"legend\">");
	put_swatch(b, COLOR_CPU, "cpu", false);
	put_swatch(b, COLOR_MEM, "memory", false);
	buf_puts(b, "</p>\n");
	grid_open(r);
	for (k = 0; k < r->n; k++) {
		const struct sim_series *s = &r->runs[k].series;

		figure_open(r, k);
		svg_open(r, k, "utilization", "Utilization", "%", &ax);
		put_line(r, s, &ax, f_cpu, 0, "line", COLOR_CPU);
		put_line(r, s, &ax, f_mem, 0, "line", COLOR_MEM);
		svg_close(r, k);
		buf_puts(b, "</figure>\n");
	}
	buf_puts(b, "</div>\n</div>\n");

	/* cumulative cost */
	ax = axis_nice(series_max(r, f_cost, 0), false);
	row_open(r, "Cumulative cost");
	grid_open(r);
	for (k = 0; k < r->n; k++) {
		const struct sim_series *s = &r->runs[k].series;

		figure_open(r, k);
		svg_open(r, k, "cost", "Cumulative cost", "cost", &ax);
		put_band(r, s, &ax, f_cost, 0, COLOR_COST);
		put_line(r, s, &ax, f_cost, 0, "line", COLOR_COST);
		svg_close(r, k);
		buf_puts(b, "</figure>\n");
	}
	buf_puts(b, "</div>\n</div>\n</section>\n");
}

/* ---- pod waits: the distribution of every run in one chart ---- */

/* The wait axis's ticks, in seconds: a log scale from the first to the last used. */
static const double wait_ticks[] = {0.1, 1, 10, 60, 600, 3600, 21600, 86400, 604800};
static const char *const wait_tick_labels[] = {"0.1s", "1s", "10s", "1m", "10m", "1h", "6h", "1d", "7d"};
#define N_WAIT_TICKS (sizeof(wait_ticks) / sizeof(wait_ticks[0]))

struct log_axis {
	double lo, hi; /* seconds at the plot's left and right edges */
	size_t first, last; /* the ticks shown */
};

static double wxpos(const struct log_axis *ax, double w)
{
	double f;

	w = fin(w);
	if (w <= ax->lo)
		return CH_L;
	if (w >= ax->hi)
		return CH_L + PLOT_W;
	f = log(w / ax->lo) / log(ax->hi / ax->lo);
	return CH_L + f * PLOT_W;
}

static double fypos(double frac)
{
	frac = fin(frac);
	if (frac < 0)
		frac = 0;
	if (frac > 1)
		frac = 1;
	return PLOT_BOTTOM - frac * PLOT_H;
}

/* From the shortest wait's tick (0.1 s at least) to the tick above the longest. */
static struct log_axis wait_axis(const struct report *r)
{
	double lo = INFINITY, hi = 0;
	struct log_axis ax;
	size_t k;

	for (k = 0; k < r->n; k++) {
		const struct sim_wait_cdf *c = &r->runs[k].waits;

		if (!c->n || !c->wait_s)
			continue;
		if (fin(c->wait_s[0]) < lo)
			lo = fin(c->wait_s[0]);
		if (fin(c->wait_s[c->n - 1]) > hi)
			hi = fin(c->wait_s[c->n - 1]);
	}
	ax.first = 0;
	while (ax.first + 2 < N_WAIT_TICKS && wait_ticks[ax.first + 1] <= lo)
		ax.first++;
	ax.last = ax.first + 1;
	while (ax.last + 1 < N_WAIT_TICKS && wait_ticks[ax.last] < hi)
		ax.last++;
	ax.lo = wait_ticks[ax.first];
	ax.hi = wait_ticks[ax.last];
	return ax;
}

/* The run's distribution as steps: flat until a wait, then up to its share. */
static void put_cdf_line(struct report *r, size_t k, const struct log_axis *ax)
{
	const struct sim_wait_cdf *c = &r->runs[k].waits;
	struct buf *b = r->b;
	double prev = 0;
	size_t i;

	if (!c->n || !c->wait_s || !c->frac)
		return;
	buf_printf(b, "<polyline class=\"line cdf\" stroke=\"%s\" data-policy=\"",
		   group_colors[k % N_COLORS]);
	put_esc(b, r->labels[k]);
	buf_printf(b, "\" data-points=\"%zu\" points=\"%.1f,%.1f", c->n, (double)CH_L, fypos(0));
	for (i = 0; i < c->n; i++) {
		double x = wxpos(ax, c->wait_s[i]);

		buf_printf(b, " %.1f,%.1f %.1f,%.1f", x, fypos(prev), x, fypos(c->frac[i]));
		prev = c->frac[i];
	}
	buf_printf(b, " %.1f,%.1f\"/>\n", CH_L + PLOT_W, fypos(prev));
}

static void put_waits(struct report *r)
{
	struct buf *b = r->b;
	struct log_axis ax = wait_axis(r);
	char p50[48], p90[48], p99[48], mx[48];
	size_t k, t;
	bool any = false;

	buf_puts(b, "<section>\n<h2>Pod waits</h2>\n");
	for (k = 0; k < r->n; k++)
		any = any || r->runs[k].waits.n;
	if (!any) {
		buf_puts(b, "<p class=\"note\">No pods in any run.</p>\n</section>\n");
		return;
	}
	buf_puts(b, "<div class=\"wbox\">\n<figure>\n");
	buf_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart cdf\" data-metric=\"waits\" "
		      "data-plot=\"%d %d %.0f %.0f\" data-wait-lo=\"%g\" data-wait-hi=\"%g\" "
		      "viewBox=\"0 0 %d %d\" role=\"img\">\n"
		      "<title>Share of pods that waited at most so long to be bound</title>\n",
		   CH_L, CH_T, PLOT_W, PLOT_H, ax.lo, ax.hi, CH_W, CH_H);
	buf_puts(b, "<g class=\"grid\">");
	for (t = 0; t <= 4; t++)
		buf_printf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>", CH_L,
			   fypos(t / 4.0), CH_W - CH_R, fypos(t / 4.0));
	for (t = ax.first; t <= ax.last; t++)
		buf_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\"/>",
			   wxpos(&ax, wait_ticks[t]), CH_T, wxpos(&ax, wait_ticks[t]), PLOT_BOTTOM);
	buf_puts(b, "</g>\n<g text-anchor=\"end\">");
	for (t = 0; t <= 4; t++)
		buf_printf(b, "<text x=\"%d\" y=\"%.1f\">%zu%%</text>", CH_L - 5, fypos(t / 4.0) + 3.5,
			   t * 25);
	buf_puts(b, "</g>\n<g text-anchor=\"middle\">");
	for (t = ax.first; t <= ax.last; t++)
		buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\">%s</text>", wxpos(&ax, wait_ticks[t]),
			   PLOT_BOTTOM + 14, wait_tick_labels[t]);
	buf_puts(b, "</g>\n");
	buf_printf(b, "<text class=\"atitle\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">"
		      "wait until bound (log scale; shorter at the left edge)</text>\n",
		   CH_L + PLOT_W / 2, CH_H - 4);
	buf_printf(b, "<text class=\"atitle\" transform=\"translate(12,%.1f) rotate(-90)\" "
		      "text-anchor=\"middle\">pods</text>\n", CH_T + PLOT_H / 2);
	for (k = 0; k < r->n; k++)
		put_cdf_line(r, k, &ax);
	buf_printf(b, "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%.1f\"/>\n"
		      "</svg>\n</figure>\n", CH_L, CH_T, PLOT_W, PLOT_H);

	buf_puts(b, "<table class=\"cmp pct\">\n<thead>\n<tr><th class=\"policy\">policy</th>"
		    "<th title=\"bound pods, and pods still pending at the end\">pods</th>"
		    "<th>p50</th><th>p90</th><th>p99</th><th>max</th></tr>\n</thead>\n<tbody>\n");
	for (k = 0; k < r->n; k++) {
		const struct sim_result *res = &r->runs[k];

		sim_report_format_wait(p50, sizeof(p50), res->wait_p50);
		sim_report_format_wait(p90, sizeof(p90), res->wait_p90);
		sim_report_format_wait(p99, sizeof(p99), res->wait_p99);
		sim_report_format_wait(mx, sizeof(mx), res->wait_max);
		buf_puts(b, "<tr class=\"waits\" data-policy=\"");
		put_esc(b, r->labels[k]);
		buf_printf(b, "\" data-pods=\"%zu\" data-p50=\"%.3f\" data-p90=\"%.3f\" data-p99=\"%.3f\" "
			      "data-max=\"%.3f\"><th class=\"policy\" scope=\"row\">",
			   res->waits.pods, fin(res->wait_p50), fin(res->wait_p90),
			   fin(res->wait_p99), fin(res->wait_max));
		put_swatch(b, group_colors[k % N_COLORS], r->labels[k], false);
		buf_printf(b, "</th><td>%zu</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
			   res->waits.pods, p50, p90, p99, mx);
	}
	buf_puts(b, "</tbody>\n</table>\n</div>\n<p class=\"note\">The share of pods (bound, and "
		    "those still pending at the end with their wait so far) that waited at most so "
		    "long; the percentiles are exact, the curve passes through at most "
		    SIM_CDF_POINTS_TEXT " points of the exact distribution.</p>\n</section>\n");
}

/* ---- cost by group, per run ---- */

static void put_costs(struct report *r)
{
	struct buf *b = r->b;
	char tmp[32];
	size_t k, g;

	buf_puts(b, "<section>\n<h2>Cost by group</h2>\n");
	if (!r->n) {
		buf_puts(b, "<p class=\"note\">No runs.</p>\n</section>\n");
		return;
	}
	grid_open(r);
	for (k = 0; k < r->n; k++) {
		const struct sim_result *res = &r->runs[k];

		figure_open(r, k);
		if (!res->group_cost) {
			buf_puts(b, "<p class=\"note\">Not recorded.</p>\n</figure>\n");
			continue;
		}
		buf_puts(b, "<table class=\"cmp gcost\" data-policy=\"");
		put_esc(b, r->labels[k]);
		buf_printf(b, "\" data-cost=\"%.17g\">\n<thead>\n<tr><th class=\"policy\">group</th>"
			      "<th>node-hours</th><th>cost</th><th>share</th></tr>\n</thead>\n<tbody>\n",
			   fin(res->cost));
		for (g = 0; g < res->n_group_cost; g++) {
			const struct sim_group_cost *gc = &res->group_cost[g];
			double share = fin(res->cost) > 0 ? fin(gc->cost) / fin(res->cost) * 100 : 0;

			buf_puts(b, "<tr data-group=\"");
			put_esc(b, group_name(r, g, tmp, sizeof(tmp)));
			buf_printf(b, "\" data-node-hours=\"%.17g\" data-cost=\"%.17g\"><th class=\"policy\">",
				   fin(gc->node_hours), fin(gc->cost));
			put_esc(b, group_name(r, g, tmp, sizeof(tmp)));
			buf_printf(b, "</th><td>%.1f</td><td>%.2f</td><td>%.0f%%</td></tr>\n",
				   fin(gc->node_hours), fin(gc->cost), share);
		}
		buf_printf(b, "<tr class=\"total\"><th class=\"policy\">all</th><td>%.1f</td><td>%.2f</td>"
			      "<td></td></tr>\n</tbody>\n</table>\n</figure>\n",
			   fin(res->node_hours), fin(res->cost));
	}
	buf_puts(b, "</div>\n<p class=\"note\">Instance time from launch until gone per group, "
		    "times its price; the groups add up to the run's cost.</p>\n</section>\n");
}

/* ---- the policies and the params each run used ---- */

static void put_params(struct report *r)
{
	struct buf *b = r->b;
	size_t k, i;

	buf_puts(b, "<section>\n<h2>Policies and params</h2>\n");
	if (!r->n) {
		buf_puts(b, "<p class=\"note\">No runs.</p>\n</section>\n");
		return;
	}
	grid_open(r);
	for (k = 0; k < r->n; k++) {
		const struct sim_result *res = &r->runs[k];

		figure_open(r, k);
		buf_puts(b, "<div class=\"params\" data-policy=\"");
		put_esc(b, r->labels[k]);
		buf_puts(b, "\">\n<p class=\"note\">file <code>");
		put_esc(b, res->policy);
		buf_puts(b, "</code>; ");
		if (res->params_from[0]) {
			buf_puts(b, "params set by <code>");
			put_esc(b, res->params_from);
			buf_puts(b, "</code> (policy.params), the others the policy's defaults</p>\n");
		} else {
			buf_puts(b, "the policy's defaults</p>\n");
		}
		if (!res->n_params) {
			buf_puts(b, "<p class=\"note\">No params.</p>\n</div>\n</figure>\n");
			continue;
		}
		buf_puts(b, "<table class=\"cmp prm\">\n<thead>\n<tr><th class=\"policy\">param</th>"
			    "<th class=\"policy\">value</th><th class=\"policy\">the policy's default</th>"
			    "</tr>\n</thead>\n<tbody>\n");
		for (i = 0; i < res->n_params; i++) {
			const struct sim_param *p = &res->params[i];

			buf_puts(b, "<tr data-param=\"");
			put_esc(b, p->key);
			buf_puts(b, "\" data-value=\"");
			put_esc(b, p->value);
			buf_printf(b, "\" data-from=\"%s\"><th class=\"policy\">",
				   p->from_config ? "config" : "default");
			put_esc(b, p->key);
			buf_printf(b, "</th><td class=\"policy%s\">", p->from_config ? " set" : "");
			put_esc(b, p->value);
			buf_puts(b, "</td><td class=\"policy\">");
			if (p->from_config)
				put_esc(b, p->dflt ? p->dflt : "(none)");
			buf_puts(b, "</td></tr>\n");
		}
		buf_puts(b, "</tbody>\n</table>\n</div>\n</figure>\n");
	}
	buf_puts(b, "</div>\n</section>\n");
}

static void put_html(struct report *r)
{
	put_header(r);
	put_table(r);
	put_params(r);
	put_waits(r);
	put_charts(r);
	put_costs(r);
	buf_printf(r->b, "<footer>luascale simulate: %zu polic%s, one report file, nothing fetched.</footer>\n"
			 "</body>\n</html>\n", r->n, r->n == 1 ? "y" : "ies");
}

/* ---- series.csv ---- */

static void put_csv_num(struct buf *b, double v, const char *fmt)
{
	buf_append(b, ",", 1);
	buf_printf(b, fmt, fin(v));
}

static void put_csv_all(struct report *r)
{
	struct buf *b = r->b;
	char tmp[32], when[32];
	size_t k, i, g;

	buf_puts(b, "policy,t_seconds,time,pending,util_cpu,util_mem,cost");
	for (g = 0; g < r->n_groups; g++) {
		const char *gn = group_name(r, g, tmp, sizeof(tmp));
		struct buf col = BUF_INIT;

		buf_printf(&col, "%s_nodes", gn);
		buf_append(b, ",", 1);
		put_csv(b, col.data);
		col.len = 0;
		buf_printf(&col, "%s_booting", gn);
		buf_append(b, ",", 1);
		put_csv(b, col.data);
		if (col.oom)
			b->oom = 1;
		buf_free(&col);
	}
	buf_puts(b, "\r\n");
	for (k = 0; k < r->n; k++) {
		const struct sim_series *s = &r->runs[k].series;

		for (i = 0; i < s->n; i++) {
			int64_t t = s_t(s, i);
			int64_t sec = floor_div(t, CLOCK_NS_PER_S), frac = t - sec * CLOCK_NS_PER_S;

			put_csv(b, r->labels[k]);
			if (frac)
				buf_printf(b, ",%.3f", (double)t / CLOCK_NS_PER_S);
			else
				buf_printf(b, ",%lld", (long long)sec);
			fmt_wall(when, sizeof(when), r->sc->start_wall + sec, "%Y-%m-%dT%H:%M:%SZ");
			buf_printf(b, ",%s,%d", when, s_pending(s, i));
			put_csv_num(b, s_dbl(s->util_cpu, i), "%.4f");
			put_csv_num(b, s_dbl(s->util_mem, i), "%.4f");
			put_csv_num(b, s_dbl(s->cost, i), "%.4f");
			for (g = 0; g < r->n_groups; g++) {
				if (g < s->n_groups)
					buf_printf(b, ",%d,%d", s_nodes(s, i, g), s_booting(s, i, g));
				else
					buf_puts(b, ",,");
			}
			buf_puts(b, "\r\n");
		}
	}
}

/* ---- files ---- */

static int make_dir(const char *dir, struct errbuf *err)
{
	struct stat st;

	if (mkdir(dir, 0777) == 0)
		return 0;
	if (errno != EEXIST)
		return errbuf_set(err, "cannot create report directory '%s': %s", dir, strerror(errno));
	if (stat(dir, &st) != 0)
		return errbuf_set(err, "cannot use report directory '%s': %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return errbuf_set(err, "cannot create report directory '%s': a file of that name exists",
				  dir);
	return 0;
}

/* Writes 'b' to 'dir'/'name' through 'dir'/.'name'.tmp and a rename. */
static int write_file(const char *dir, const char *name, const struct buf *b, struct errbuf *err)
{
	struct buf tmp = BUF_INIT, dst = BUF_INIT;
	FILE *f = NULL;
	bool created = false;
	int rc = -1, e;

	buf_printf(&tmp, "%s/.%s.tmp", dir, name);
	buf_printf(&dst, "%s/%s", dir, name);
	if (tmp.oom || dst.oom) {
		errbuf_set(err, "out of memory writing the report");
		goto out;
	}
	f = fopen(tmp.data, "w");
	if (!f) {
		errbuf_set(err, "cannot write '%s': %s", tmp.data, strerror(errno));
		goto out;
	}
	created = true;
	if (b->len && fwrite(b->data, 1, b->len, f) != b->len) {
		errbuf_set(err, "cannot write '%s': %s", dst.data, strerror(errno));
		goto out;
	}
	if (fflush(f) != 0 || ferror(f)) {
		errbuf_set(err, "cannot write '%s': %s", dst.data, strerror(errno));
		goto out;
	}
	e = fclose(f);
	f = NULL;
	if (e != 0) {
		errbuf_set(err, "cannot write '%s': %s", dst.data, strerror(errno));
		goto out;
	}
	if (rename(tmp.data, dst.data) != 0) {
		errbuf_set(err, "cannot rename '%s' to '%s': %s", tmp.data, dst.data, strerror(errno));
		goto out;
	}
	created = false;
	rc = 0;
out:
	if (f)
		fclose(f);
	if (created)
		unlink(tmp.data);
	buf_free(&tmp);
	buf_free(&dst);
	return rc;
}

/* The file name of a policy path without ".lua"; its length in *len. */
static const char *policy_base(const char *path, size_t *len)
{
	const char *base = strrchr(path, '/');

	base = base && base[1] ? base + 1 : path;
	*len = strnlen(base, LABEL_MAX - 16);
	if (*len > 4 && memcmp(base + *len - 4, ".lua", 4) == 0)
		*len -= 4;
	if (*len == 0) {
		base = "policy";
		*len = 6;
	}
	return base;
}

void sim_report_label(const struct sim_result *runs, size_t k, char *out, size_t len)
{
	const char *base, *other;
	size_t j, blen, olen, same = 1;

	if (!len)
		return;
	base = policy_base(runs[k].policy, &blen);
	for (j = 0; j < k; j++) {
		other = policy_base(runs[j].policy, &olen);
		if (olen == blen && memcmp(other, base, blen) == 0)
			same++;
	}
	if (same > 1)
		snprintf(out, len, "%.*s (%zu)", (int)blen, base, same);
	else
		snprintf(out, len, "%.*s", (int)blen, base);
}

/* The label of each run (sim_report_label). */
static void make_labels(struct report *r)
{
	size_t k;

	for (k = 0; k < r->n; k++)
		sim_report_label(r->runs, k, r->labels[k], LABEL_MAX);
}

int sim_report_write(const char *dir, const struct sim_scenario *sc,
		     const struct sim_result *runs, size_t n, struct errbuf *err)
{
	struct buf html = BUF_INIT, csv = BUF_INIT;
	struct report r;
	int64_t tmax = 0;
	size_t k, i;
	int rc = -1;

	assert(sc);
	assert(runs || n == 0);
	memset(&r, 0, sizeof(r));
	if (!dir || !*dir) {
		errbuf_set(err, "no report directory given");
		goto out;
	}
	r.sc = sc;
	r.runs = runs;
	r.n = n;
	r.n_groups = sc->n_groups;
	r.labels = calloc(n ? n : 1, sizeof(*r.labels));
	if (!r.labels) {
		errbuf_set(err, "out of memory writing the report");
		goto out;
	}
	make_labels(&r);
	for (k = 0; k < n; k++) {
		const struct sim_series *s = &runs[k].series;

		if (s->n_groups > r.n_groups)
			r.n_groups = s->n_groups;
		for (i = 0; i < s->n; i++)
			if (s_t(s, i) > tmax)
				tmax = s_t(s, i);
	}
	r.span_ns = sc->duration_ns > tmax ? sc->duration_ns : tmax;
	if (r.span_ns < CLOCK_NS_PER_S)
		r.span_ns = CLOCK_NS_PER_S;

	r.b = &html;
	put_html(&r);
	r.b = &csv;
	put_csv_all(&r);
	if (html.oom || csv.oom) {
		errbuf_set(err, "out of memory writing the report in '%s'", dir);
		goto out;
	}
	if (make_dir(dir, err) < 0 || write_file(dir, "series.csv", &csv, err) < 0 ||
	    write_file(dir, "index.html", &html, err) < 0)
		goto out;
	rc = 0;
out:
	free(r.labels);
	buf_free(&html);
	buf_free(&csv);
	return rc;
}
