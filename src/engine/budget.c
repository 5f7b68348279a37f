/*
 * budget: disruption budgets as Karpenter defines them: parsing nodes,
 * reasons, cron schedules and durations; whether a budget is active at a
 * UTC time; how many nodes a list allows for a reason. Pure: no clock, no
 * I/O, no counting of the nodes being disrupted (the safety check's).
 */

/*
 * The semantics follow kubernetes-sigs/karpenter, pkg/apis/v1/nodepool.go
 * (read, not copied): GetAllowedDisruptionsByReason takes the minimum over
 * the budgets whose Reasons are unset or contain the reason, an inactive
 * budget counting as MaxInt32 (unbounded); Budget.GetAllowedDisruptions
 * scales nodes with intstr.GetScaledValueFromIntOrPercent(..., roundUp
 * true), i.e. ceil(percent * nodes / 100); Budget.IsActive parses the
 * schedule with robfig/cron's standard parser under TZ=UTC and is active
 * when the schedule's next fire after now - duration is not after now.
 * The CRD allows nodes "^((100|[0-9]{1,2})%|[0-9]+)$", durations of hours
 * and minutes only, at most 50 budgets, and defaults the list to
 * [{nodes: "10%"}] when it is left out. Where this file differs, on
 * purpose: a schedule that never fires is refused (robfig's Next gives up
 * and returns the zero time, which IsActive reads as active), and so are
 * a zero duration, one over a leap year, an empty reasons list (Karpenter
 * reads it as no reason at all) and the reason interrupted (never
 * budgeted); expired is a reason here, which Karpenter v1 does not budget.
 */
#include "engine/budget.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "textparse.h"

const struct disruption_budget budget_default = {
	.nodes = 10,
	.percent = true,
};

static const char *const reason_names[DISRUPTION_N_REASONS] = {
	"empty", "underutilized", "drifted", "expired", "interrupted",
};

const char *disruption_reason_name(enum disruption_reason r)
{
	if ((unsigned)r >= DISRUPTION_N_REASONS)
		return "?";
	return reason_names[r];
}

int disruption_reason_parse(const char *name, enum disruption_reason *out)
{
	unsigned i;

	for (i = 0; name && i < DISRUPTION_N_REASONS; i++)
		if (!strcasecmp(name, reason_names[i])) {
			*out = (enum disruption_reason)i;
			return 0;
		}
	return -1;
}

/* Quotes 'text' for a message, cut at about 64 characters, one line. */
static const char *quote(const char *text, char *out, size_t len)
{
	size_t i, o = 0;

	out[o++] = '"';
	for (i = 0; text[i] && o + 5 < len && i < 64; i++)
		out[o++] = (unsigned char)text[i] < 0x20 ? '?' : text[i];
	if (text[i]) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o++] = '"';
	out[o] = '\0';
	return out;
}

/* Reads the decimal digits at *s (at least one) into *out, stopping the
 * value at 'cap' + 1 so it never overflows. Advances *s. 0 or -1. */
static int digits(const char **s, int64_t cap, int64_t *out)
{
	const char *p = *s;
	int64_t v = 0;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++)
		if (v <= cap)
			v = v * 10 + (*p - '0');
	*s = p;
	*out = v > cap ? cap + 1 : v;
	return 0;
}

/* ------------------------------------------------------------------ */
/* nodes, reasons, duration                                            */

int budget_parse_nodes(const char *text, struct disruption_budget *b, struct errbuf *err)
{
	const char *s = text;
	char q[80];
	int64_t v;

	if (!text || !*text)
		return errbuf_set(err, "is empty: want a count such as \"5\" or a percentage such as \"10%%\"");
	if (*s == '-' && s[1] >= '0' && s[1] <= '9')
		return errbuf_set(err, "%s is negative: want a count from 0 or a percentage from 0%% to 100%%",
				  quote(text, q, sizeof(q)));
	if (digits(&s, BUDGET_MAX_NODES, &v) < 0 || (*s && strcmp(s, "%")))
		return errbuf_set(err, "%s: want a count such as \"5\" or a percentage such as \"10%%\" (digits only)",
				  quote(text, q, sizeof(q)));
	if (*s == '%') {
		if (v > 100)
			return errbuf_set(err, "%s: a percentage is at most 100%%", quote(text, q, sizeof(q)));
		b->percent = true;
	} else {
		if (v > BUDGET_MAX_NODES)
			return errbuf_set(err, "%s: a count is at most %d nodes", quote(text, q, sizeof(q)),
					  BUDGET_MAX_NODES);
		b->percent = false;
	}
	b->nodes = v;
	return 0;
}

int budget_parse_reason(const char *name, struct disruption_budget *b, struct errbuf *err)
{
	enum disruption_reason r;
	char q[80];

	if (name && !strcasecmp(name, "any")) {
		b->reasons = DISRUPTION_REASONS_ALL;
		return 0;
	}
	if (!name || disruption_reason_parse(name, &r) < 0)
		return errbuf_set(err, "%s is not a reason: want empty, underutilized, drifted, expired or any",
				  quote(name ? name : "", q, sizeof(q)));
	if (r == DISRUPTION_INTERRUPTED)
		return errbuf_set(err, "interrupted is never budgeted (the cloud takes the node anyway): leave it out");
	b->reasons |= DISRUPTION_REASON_BIT(r);
	return 0;
}

int budget_parse_duration(const char *text, struct disruption_budget *b, struct errbuf *err)
{
	const char *s = text;
	int64_t h = 0, m = 0, v;
	char q[80];

	/* Karpenter's pattern: ^(([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?$ */
	if (!text || digits(&s, BUDGET_MAX_DURATION_S, &v) < 0 || (*s != 'h' && *s != 'm'))
		goto bad;
	if (*s == 'h') {
		h = v;
		s++;
		if (*s >= '0' && *s <= '9' && strcmp(s, "0s")) {
			if (digits(&s, BUDGET_MAX_DURATION_S, &m) < 0 || *s != 'm')
				goto bad;
			s++;
		}
	} else {
		m = v;
		s++;
	}
	if (*s && strcmp(s, "0s"))
		goto bad;
	if (h > BUDGET_MAX_DURATION_S / 3600 || m > BUDGET_MAX_DURATION_S / 60 ||
	    h * 3600 + m * 60 > BUDGET_MAX_DURATION_S)
		return errbuf_set(err, "%s is longer than %lldh", quote(text, q, sizeof(q)),
				  (long long)(BUDGET_MAX_DURATION_S / 3600));
	if (h == 0 && m == 0)
		return errbuf_set(err, "%s: a window of no time is never active", quote(text, q, sizeof(q)));
	b->duration_s = h * 3600 + m * 60;
	return 0;
bad:
	return errbuf_set(err, "%s: want hours and minutes such as \"8h\", \"30m\" or \"1h30m\"",
			  quote(text ? text : "", q, sizeof(q)));
}

/* ------------------------------------------------------------------ */
/* cron                                                                */

struct cron_field {
	const char *what;
	int lo, hi;
	const char *const *names; /* names[i] is value lo + i (NULL: numbers only) */
};

static const char *const month_names[] = {
	"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec", NULL,
};
static const char *const dow_names[] = { "sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL };

static const struct cron_field cron_fields[5] = {
	{ "minute", 0, 59, NULL },
	{ "hour", 0, 23, NULL },
	{ "day of month", 1, 31, NULL },
	{ "month", 1, 12, month_names },
	{ "day of week", 0, 6, dow_names },
};

/* A value of field 'f' between s and e: digits or (months, days of week) a name. */
static int cron_value(const struct cron_field *f, const char *s, const char *e, int *out)
{
	size_t len = (size_t)(e - s), i;
	int64_t v;
	const char *p = s;

	for (i = 0; f->names && f->names[i]; i++)
		if (len == 3 && !strncasecmp(s, f->names[i], 3)) {
			*out = f->lo + (int)i;
			return 0;
		}
	if (digits(&p, 1000000, &v) < 0 || p != e)
		return -1;
	*out = (int)v;
	return 0;
}

/*
 * One field 'f' written as 'text' (a comma-separated list) into *bits,
 * *star set when an item is "*" or "?" without a step above 1. The rules
 * and messages follow the cron parser Karpenter uses: "N/step" runs from N
 * to the field's maximum.
 */
static int cron_parse_field(const struct cron_field *f, const char *text, uint64_t *bits,
			    bool *star, char *why, size_t why_len)
{
	const char *item = text;

	*bits = 0;
	*star = false;
	for (;;) {
		const char *end = strchr(item, ',');
		const char *slash, *dash, *range_end;
		int start, stop, step = 1, v;
		bool any = false;

		if (!end)
			end = item + strlen(item);
		slash = memchr(item, '/', (size_t)(end - item));
		range_end = slash ? slash : end;
		dash = memchr(item, '-', (size_t)(range_end - item));
		if (slash && memchr(slash + 1, '/', (size_t)(end - slash - 1))) {
			snprintf(why, why_len, "too many slashes in \"%.*s\"", (int)(end - item), item);
			return -1;
		}
		if (dash && memchr(dash + 1, '-', (size_t)(range_end - dash - 1))) {
			snprintf(why, why_len, "too many hyphens in \"%.*s\"", (int)(end - item), item);
			return -1;
		}
		if (range_end - item == 1 && (*item == '*' || *item == '?')) {
			start = f->lo;
			stop = f->hi;
			any = true;
		} else {
			if (cron_value(f, item, dash ? dash : range_end, &start) < 0 ||
			    (dash && cron_value(f, dash + 1, range_end, &stop) < 0)) {
				snprintf(why, why_len, "\"%.*s\" is not a number%s", (int)(end - item), item,
					 f->names ? " or a name" : "");
				return -1;
			}
			if (!dash)
				stop = slash ? f->hi : start;
		}
		if (slash) {
			const char *p = slash + 1;
			int64_t s64;

			if (digits(&p, 1000, &s64) < 0 || p != end) {
				snprintf(why, why_len, "the step in \"%.*s\" is not a number",
					 (int)(end - item), item);
				return -1;
			}
			step = (int)s64;
			if (step == 0) {
				snprintf(why, why_len, "the step in \"%.*s\" should be a positive number",
					 (int)(end - item), item);
				return -1;
			}
		}
		if (start < f->lo) {
			snprintf(why, why_len, "beginning of range (%d) below minimum (%d)", start, f->lo);
			return -1;
		}
		if (stop > f->hi) {
			snprintf(why, why_len, "end of range (%d) above maximum (%d)", stop, f->hi);
			return -1;
		}
		if (start > stop) {
			snprintf(why, why_len, "beginning of range (%d) beyond end of range (%d)", start, stop);
			return -1;
		}
		for (v = start; v <= stop; v += step)
			*bits |= 1ULL << v;
		if (any && step == 1)
			*star = true;
		if (!*end)
			return 0;
		item = end + 1;
	}
}

static const struct {
	const char *name, *fields;
} cron_macros[] = {
	{ "@yearly", "0 0 1 1 *" },
	{ "@annually", "0 0 1 1 *" },
	{ "@monthly", "0 0 1 * *" },
	{ "@weekly", "0 0 * * 0" },
	{ "@daily", "0 0 * * *" },
	{ "@midnight", "0 0 * * *" },
	{ "@hourly", "0 * * * *" },
};

static const int month_days[13] = { 0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

/* Whether a cron whose day of month alone restricts the days ever fires:
 * one of its days exists in one of its months (29 February counts). */
static bool cron_some_day(const struct budget_cron *c)
{
	int m, d;

	for (m = 1; m <= 12; m++)
		for (d = 1; (c->months >> m & 1) && d <= month_days[m]; d++)
			if (c->doms >> d & 1)
				return true;
	return false;
}

int budget_parse_schedule(const char *text, struct disruption_budget *b, struct errbuf *err)
{
	char buf[BUDGET_SCHEDULE_MAX], q[80], why[160];
	const char *fields_text = text, *f[5];
	uint64_t bits[5];
	bool star[5];
	size_t i, n = 0, len;
	char *p;

	if (!text || !*text)
		return errbuf_set(err, "is empty: want five fields (minute hour day-of-month month day-of-week) or a macro such as @daily");
	len = strlen(text);
	if (len >= sizeof(buf))
		return errbuf_set(err, "%s is longer than %d characters", quote(text, q, sizeof(q)),
				  BUDGET_SCHEDULE_MAX - 1);
	if (text[0] == '@') {
		for (i = 0; i < sizeof(cron_macros) / sizeof(cron_macros[0]); i++)
			if (!strcmp(text, cron_macros[i].name))
				break;
		if (i == sizeof(cron_macros) / sizeof(cron_macros[0]))
			return errbuf_set(err, "%s is not a macro: want @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly",
					  quote(text, q, sizeof(q)));
		fields_text = cron_macros[i].fields;
	}
	memcpy(buf, fields_text, strlen(fields_text) + 1);
	/* split on blanks, as the cron parser does (strings.Fields) */
	for (p = buf; *p;) {
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\v' || *p == '\f')
			*p++ = '\0';
		if (!*p)
			break;
		if (n < 5)
			f[n] = p;
		n++;
		while (*p && !(*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\v' || *p == '\f'))
			p++;
	}
	if (n != 5)
		return errbuf_set(err, "%s: %zu field%s, want 5 (minute hour day-of-month month day-of-week)",
				  quote(text, q, sizeof(q)), n, n == 1 ? "" : "s");
	for (i = 0; i < 5; i++)
		if (cron_parse_field(&cron_fields[i], f[i], &bits[i], &star[i], why, sizeof(why)) < 0)
			return errbuf_set(err, "%s: %s field \"%s\": %s", quote(text, q, sizeof(q)),
					  cron_fields[i].what, f[i], why);
	memset(&b->cron, 0, sizeof(b->cron));
	b->cron.minutes = bits[0];
	b->cron.hours = (uint32_t)bits[1];
	b->cron.doms = (uint32_t)bits[2];
	b->cron.months = (uint16_t)bits[3];
	b->cron.dows = (uint8_t)bits[4];
	b->cron.dom_star = star[2];
	b->cron.dow_star = star[4];
	if (!b->cron.dom_star && b->cron.dow_star && !cron_some_day(&b->cron))
		return errbuf_set(err, "%s never fires: none of its months has one of its days of the month",
				  quote(text, q, sizeof(q)));
	memcpy(b->schedule, text, len + 1);
	b->scheduled = true;
	return 0;
}

/* ------------------------------------------------------------------ */
/* time                                                                */

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* Year, month (1-12) and day of the proleptic Gregorian calendar of day
 * 'z' after 1970-01-01 (the inverse of textparse_days_from_civil). */
static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	int64_t era, doe, yoe, doy, mp;

	z += 719468;
	era = floor_div(z, 146097);
	doe = z - era * 146097;                                  /* 0 .. 146096 */
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* 0 .. 399 */
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);           /* 0 .. 365, from March 1 */
	mp = (5 * doy + 2) / 153;                                /* 0 = March */
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = era * 400 + yoe + (*m <= 2);
}

/* The smallest set bit of 'bits' at or above 'from', or -1. */
static int next_bit(uint64_t bits, int from)
{
	if (from >= 64)
		return -1;
	bits &= ~0ULL << from;
	return bits ? __builtin_ctzll(bits) : -1;
}

/* 0 = Sunday, of day 'days' after 1970-01-01 (a Thursday). */
static int weekday(int64_t days)
{
	int64_t w = (days + 4) % 7;

	return (int)(w < 0 ? w + 7 : w);
}

static bool day_matches(const struct budget_cron *c, int dom, int dow)
{
	bool a = c->doms >> dom & 1, b = c->dows >> dow & 1;

	return c->dom_star || c->dow_star ? a && b : a || b;
}

/*
 * Whether cron 'c' fires at a whole minute t with from <= t <= to. Walks
 * forward by whole months that do not match, whole days that do not, then
 * to the first matching hour and minute: at most about 13 steps a year
 * plus 3 a day within matching months.
 */
static bool cron_fires_between(const struct budget_cron *c, int64_t from, int64_t to)
{
	int64_t t = floor_div(from + 59, 60) * 60;

	while (t <= to) {
		int64_t days = floor_div(t, 86400), y, sod = t - days * 86400;
		int mo, d, hh = (int)(sod / 3600), mi = (int)(sod % 3600 / 60), h, m;

		civil_from_days(days, &y, &mo, &d);
		if (!(c->months >> mo & 1)) {
			t = (mo == 12 ? textparse_days_from_civil(y + 1, 1, 1) :
					textparse_days_from_civil(y, mo + 1, 1)) * 86400;
			continue;
		}
		if (!day_matches(c, d, weekday(days))) {
			t = (days + 1) * 86400;
			continue;
		}
		h = next_bit(c->hours, hh);
		if (h < 0) {
			t = (days + 1) * 86400;
			continue;
		}
		if (h > hh) {
			t = days * 86400 + h * 3600;
			continue;
		}
		m = next_bit(c->minutes, mi);
		if (m < 0) {
			t = days * 86400 + (hh + 1) * 3600;
			continue;
		}
		return days * 86400 + hh * 3600 + m * 60 <= to;
	}
	return false;
}

/* Times beyond this many seconds from 1970 (about 34,000 years) are not
 * evaluated: a scheduled budget counts as active there (the safe side). */
#define TIME_LIMIT (1LL << 40)

bool budget_active(const struct disruption_budget *b, int64_t now_unix)
{
	if (!b->scheduled)
		return true;
	if (b->duration_s <= 0)
		return false;
	if (now_unix > TIME_LIMIT || now_unix < -TIME_LIMIT)
		return true;
	/* a fire t with now - duration < t <= now: Karpenter's Next(now - duration) <= now */
	return cron_fires_between(&b->cron, now_unix - b->duration_s + 1, now_unix);
}

/* ------------------------------------------------------------------ */
/* allowances                                                          */

int64_t budget_nodes(const struct disruption_budget *b, int64_t total_nodes)
{
	int64_t q, r;

	if (!b->percent)
		return b->nodes;
	if (total_nodes <= 0)
		return 0;
	/* ceil(p * total / 100) without overflow: total = 100 q + r */
	q = total_nodes / 100;
	r = total_nodes % 100;
	return q * b->nodes + (r * b->nodes + 99) / 100;
}

int64_t budget_allowed_which(const struct disruption_budget *budgets, size_t n,
			     enum disruption_reason r, int64_t total_nodes, int64_t now_unix,
			     size_t *which)
{
	int64_t best = BUDGET_UNLIMITED;
	size_t i, at = n;

	if (r != DISRUPTION_INTERRUPTED) {
		for (i = 0; i < n; i++) {
			const struct disruption_budget *b = &budgets[i];
			int64_t v;

			if (b->reasons && !(b->reasons & DISRUPTION_REASON_BIT(r)))
				continue;
			if (!budget_active(b, now_unix))
				continue;
			v = budget_nodes(b, total_nodes);
			if (v < best) {
				best = v;
				at = i;
			}
		}
	}
	if (which)
		*which = at;
	return best;
}

int64_t budget_allowed(const struct disruption_budget *budgets, size_t n,
		       enum disruption_reason r, int64_t total_nodes, int64_t now_unix)
{
	return budget_allowed_which(budgets, n, r, total_nodes, now_unix, NULL);
}

/* "8h", "30m", "1h30m" */
static void fmt_duration(int64_t s, char *out, size_t len)
{
	int64_t h = s / 3600, m = s % 3600 / 60;

	if (h && m)
		snprintf(out, len, "%lldh%lldm", (long long)h, (long long)m);
	else if (h)
		snprintf(out, len, "%lldh", (long long)h);
	else
		snprintf(out, len, "%lldm", (long long)m);
}

const char *budget_describe(const struct disruption_budget *b, char *out, size_t len)
{
	char reasons[96] = "", dur[32];
	size_t used = 0;
	unsigned i;

	if (!len)
		return out;
	if (b->reasons && b->reasons != DISRUPTION_REASONS_ALL) {
		for (i = 0; i < DISRUPTION_N_REASONS; i++) {
			int w;

			if (!(b->reasons & DISRUPTION_REASON_BIT(i)))
				continue;
			w = snprintf(reasons + used, sizeof(reasons) - used, "%s%s",
				     used ? ", " : " for ", reason_names[i]);
			if (w < 0 || (size_t)w >= sizeof(reasons) - used)
				break;
			used += (size_t)w;
		}
	}
	if (b->scheduled) {
		fmt_duration(b->duration_s, dur, sizeof(dur));
		snprintf(out, len, "nodes %lld%s%s, schedule \"%s\" for %s", (long long)b->nodes,
			 b->percent ? "%" : "", reasons, b->schedule, dur);
	} else {
		snprintf(out, len, "nodes %lld%s%s", (long long)b->nodes, b->percent ? "%" : "",
			 reasons);
	}
	return out;
}

int budget_parse(const struct budget_spec *spec, struct disruption_budget *out,
		 struct errbuf *err)
{
	struct disruption_budget b;
	size_t i;

	memset(&b, 0, sizeof(b));
	if (!spec->nodes)
		return errbuf_set(err, "nodes: is required (a count such as \"5\" or a percentage such as \"10%%\")");
	if (budget_parse_nodes(spec->nodes, &b, err) < 0)
		return errbuf_prefix(err, "nodes");
	if (spec->reasons && !spec->n_reasons)
		return errbuf_set(err, "reasons: an empty list: leave reasons out for a budget of every reason");
	for (i = 0; spec->reasons && i < spec->n_reasons; i++)
		if (budget_parse_reason(spec->reasons[i], &b, err) < 0)
			return errbuf_prefix(err, "reasons[%zu]", i);
	if (spec->schedule && !spec->duration)
		return errbuf_set(err, "duration: is required with schedule (how long the budget is active after each fire)");
	if (spec->duration && !spec->schedule)
		return errbuf_set(err, "schedule: is required with duration (when the budget becomes active)");
	if (spec->schedule && budget_parse_schedule(spec->schedule, &b, err) < 0)
		return errbuf_prefix(err, "schedule");
	if (spec->duration && budget_parse_duration(spec->duration, &b, err) < 0)
		return errbuf_prefix(err, "duration");
	*out = b;
	return 0;
}
