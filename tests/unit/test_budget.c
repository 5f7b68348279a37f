/*
 * Tests for budget: disruption budgets' arithmetic. Percentages rounded up
 * as Karpenter rounds them; cron windows across midnight, the week end,
 * month ends and leap days; the day-of-month / day-of-week rule; steps,
 * ranges, names and macros; several budgets at once (the smallest active
 * one wins), reasons, interruptions never budgeted, the 10 % default;
 * parse errors. Karpenter's own budget cases (pkg/apis/v1/
 * nodepool_budgets_test.go) are transcribed as data. Every time is a fixed
 * UTC time; a brute-force minute scan checks budget_active() on schedules
 * drawn from a fixed seed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "engine/budget.h"
#include "textparse.h"

/* Seconds since 1970 of a UTC time. */
static int64_t utc(int64_t y, int mo, int d, int h, int mi)
{
	return textparse_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60;
}

/* A budget from its fields (reasons: a comma-separated list, or NULL); fails the test on error. */
static struct disruption_budget mk(const char *nodes, const char *schedule, const char *duration,
				   const char *reasons)
{
	struct budget_spec spec = { nodes, NULL, 0, schedule, duration };
	const char *names[8];
	char buf[128];
	struct disruption_budget b;
	struct errbuf err;

	if (reasons) {
		char *p = buf, *comma;

		snprintf(buf, sizeof(buf), "%s", reasons);
		for (;;) {
			names[spec.n_reasons++] = p;
			comma = strchr(p, ',');
			if (!comma)
				break;
			*comma = '\0';
			p = comma + 1;
		}
		spec.reasons = names;
	}
	if (budget_parse(&spec, &b, &err) < 0)
		fail_msg("budget nodes %s schedule %s duration %s: %s", nodes,
			 schedule ? schedule : "-", duration ? duration : "-", err.msg);
	return b;
}

static bool active(const char *schedule, const char *duration, int64_t now)
{
	struct disruption_budget b = mk("0", schedule, duration, NULL);

	return budget_active(&b, now);
}

#define ACTIVE(s, d, t) \
	do { if (!active(s, d, t)) fail_msg("%s for %s: inactive at %lld, want active", s, d, (long long)(t)); } while (0)
#define INACTIVE(s, d, t) \
	do { if (active(s, d, t)) fail_msg("%s for %s: active at %lld, want inactive", s, d, (long long)(t)); } while (0)

/* ---- percentages ---- */

static void test_percent_rounding(void **state)
{
	/* ceil(p * total / 100): intstr.GetScaledValueFromIntOrPercent(.., roundUp true) */
	static const int64_t totals[] = { 0, 1, 3, 9, 10, 11, 19 };
	static const struct {
		const char *nodes;
		int64_t want[7];
	} rows[] = {
		{ "10%",  { 0, 1, 1, 1, 1, 2, 2 } },
		{ "33%",  { 0, 1, 1, 3, 4, 4, 7 } },
		{ "50%",  { 0, 1, 2, 5, 5, 6, 10 } },
		{ "100%", { 0, 1, 3, 9, 10, 11, 19 } },
		{ "0%",   { 0, 0, 0, 0, 0, 0, 0 } },
		{ "20%",  { 0, 1, 1, 2, 2, 3, 4 } }, /* the blueprint's: 20% of 19 nodes is 4 */
		{ "5",    { 5, 5, 5, 5, 5, 5, 5 } }, /* a count is a count, whatever the size */
	};
	size_t r, t;

	(void)state;
	for (r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		struct disruption_budget b = mk(rows[r].nodes, NULL, NULL, NULL);

		for (t = 0; t < 7; t++)
			if (budget_nodes(&b, totals[t]) != rows[r].want[t])
				fail_msg("%s of %lld nodes: %lld, want %lld", rows[r].nodes,
					 (long long)totals[t], (long long)budget_nodes(&b, totals[t]),
					 (long long)rows[r].want[t]);
	}
	/* large groups: no overflow, still rounded up */
	{
		struct disruption_budget b = mk("33%", NULL, NULL, NULL);

		assert_int_equal(budget_nodes(&b, 1000000), 330000);
		assert_int_equal(budget_nodes(&b, 1000001), 330001);
		assert_int_equal(budget_nodes(&b, INT64_MAX), INT64_MAX / 100 * 33 + (7 * 33 + 99) / 100);
		assert_int_equal(budget_nodes(&b, -3), 0);
	}
	/* the default: 10% of the group */
	assert_true(budget_default.percent);
	assert_int_equal(budget_default.nodes, 10);
	assert_int_equal(budget_default.reasons, 0);
	assert_false(budget_default.scheduled);
	assert_int_equal(budget_allowed(&budget_default, 1, DISRUPTION_DRIFTED, 25, 0), 3);
	assert_int_equal(budget_allowed(&budget_default, 1, DISRUPTION_EMPTY, 0, 0), 0);
}

/* ---- Karpenter's cases ---- */

/* The six budgets of Karpenter's budget tests, at its clock: 2000-06-15 12:30:30 UTC. */
static void karpenter_budgets(struct disruption_budget b[6])
{
	b[0] = mk("10", "* * * * *", "1h", NULL);
	b[1] = mk("100", "* * * * *", "1h", NULL);
	b[2] = mk("100%", "* * * * *", "1h", NULL);
	b[3] = mk("15", "* * * * *", "1h", "drifted,underutilized");
	b[4] = mk("5", "* * * * *", "1h", "drifted");
	b[5] = mk("0", "@weekly", "1h", "underutilized,drifted,empty");
}

static const enum disruption_reason known[] = { DISRUPTION_EMPTY, DISRUPTION_UNDERUTILIZED,
						DISRUPTION_DRIFTED };

static void test_karpenter_allowed_by_reason(void **state)
{
	int64_t now = utc(2000, 6, 15, 12, 30) + 30;
	struct disruption_budget b[7], yearly = mk("0", "@yearly", "1h", NULL);
	size_t i, which;

	(void)state;
	/* a budget of 0 active for every reason: 0 for all */
	karpenter_budgets(b);
	b[5] = mk("0", "* * * * *", "1h", "underutilized,drifted,empty");
	for (i = 0; i < 3; i++)
		assert_int_equal(budget_allowed(b, 6, known[i], 100, now), 0);
	/* no active budget: unbounded */
	karpenter_budgets(b);
	for (i = 0; i < 6; i++) {
		b[i].cron = yearly.cron;
		memcpy(b[i].schedule, "@yearly", 8);
	}
	for (i = 0; i < 3; i++)
		assert_true(budget_allowed(b, 6, known[i], 100, now) == BUDGET_UNLIMITED);
	/* reason budgets inactive: the all-reasons budget of 10 */
	karpenter_budgets(b);
	b[3].cron = yearly.cron;
	b[4].cron = yearly.cron;
	for (i = 0; i < 3; i++)
		assert_int_equal(budget_allowed(b, 6, known[i], 100, now), 10);
	/* one budget without reasons: every reason */
	karpenter_budgets(b);
	for (i = 0; i < 3; i++)
		assert_int_equal(budget_allowed(b, 1, known[i], 100, now), 10);
	/* the minimum for each reason; the all-reasons budget caps the reasoned ones */
	karpenter_budgets(b);
	b[6] = mk("4", "* * * * *", "1h", "empty");
	assert_int_equal(budget_allowed_which(b, 7, DISRUPTION_EMPTY, 100, now, &which), 4);
	assert_int_equal(which, 6);
	assert_int_equal(budget_allowed_which(b, 7, DISRUPTION_DRIFTED, 100, now, &which), 5);
	assert_int_equal(which, 4);
	assert_int_equal(budget_allowed_which(b, 7, DISRUPTION_UNDERUTILIZED, 100, now, &which), 10);
	assert_int_equal(which, 0);
	/* one budget: its count when active, 100% of 100, unbounded when inactive */
	assert_int_equal(budget_allowed(&b[0], 1, DISRUPTION_EMPTY, 100, now), 10);
	assert_int_equal(budget_allowed(&b[2], 1, DISRUPTION_EMPTY, 100, now), 100);
	b[0].cron = yearly.cron;
	assert_true(budget_allowed_which(&b[0], 1, DISRUPTION_EMPTY, 100, now, &which) == BUDGET_UNLIMITED);
	assert_int_equal(which, 1);
}

static void test_karpenter_is_active(void **state)
{
	struct disruption_budget b = mk("10", NULL, NULL, NULL);

	(void)state;
	/* no schedule: always */
	assert_true(budget_active(&b, utc(2000, 6, 15, 12, 30) + 30));
	assert_true(budget_active(&b, utc(1000, 1, 1, 0, 0)));
	ACTIVE("* * * * *", "1h", utc(2000, 6, 15, 12, 30) + 30);
	INACTIVE("@yearly", "1h", utc(2000, 6, 15, 12, 30) + 30);
	/* UTC: midnight of 31 May in a zone one hour ahead is 23:00 UTC the day before */
	INACTIVE("@daily", "30m", utc(2000, 5, 30, 23, 0));
	assert_int_equal(utc(2000, 5, 30, 23, 0), 959727600);
	/* the hit in the middle of the window, in the year 1000 */
	ACTIVE("@yearly", "24h", utc(1000, 1, 1, 12, 0));
	/* a duration longer than the recurrence */
	ACTIVE("@daily", "48h", utc(2024, 1, 7, 0, 0));
	/* the last hit (Sunday 06:30 a week before) ended long ago */
	INACTIVE("30 6 * * SUN", "6h", utc(2024, 1, 7, 0, 0));
}

/* ---- windows ---- */

static void test_window_across_midnight(void **state)
{
	(void)state;
	INACTIVE("0 22 * * *", "4h", utc(2026, 12, 4, 21, 59));
	ACTIVE("0 22 * * *", "4h", utc(2026, 12, 4, 22, 0));
	ACTIVE("0 22 * * *", "4h", utc(2026, 12, 4, 23, 59) + 59);
	ACTIVE("0 22 * * *", "4h", utc(2026, 12, 5, 0, 0));
	ACTIVE("0 22 * * *", "4h", utc(2026, 12, 5, 1, 30));
	ACTIVE("0 22 * * *", "4h", utc(2026, 12, 5, 1, 59) + 59);
	INACTIVE("0 22 * * *", "4h", utc(2026, 12, 5, 2, 0)); /* the window is [22:00, 02:00) */
	INACTIVE("0 22 * * *", "4h", utc(2026, 12, 5, 12, 0));
	/* across the year end */
	ACTIVE("0 22 31 12 *", "4h", utc(2027, 1, 1, 1, 30));
	INACTIVE("0 22 31 12 *", "4h", utc(2027, 1, 1, 2, 0));
	INACTIVE("0 22 31 12 *", "4h", utc(2027, 12, 31, 21, 59));
}

static void test_window_over_week_end(void **state)
{
	(void)state;
	/* Friday 2026-12-04 20:00 for 60h: until Monday 08:00 */
	INACTIVE("0 20 * * fri", "60h", utc(2026, 12, 4, 19, 59));
	ACTIVE("0 20 * * fri", "60h", utc(2026, 12, 4, 20, 0));
	ACTIVE("0 20 * * fri", "60h", utc(2026, 12, 5, 12, 0));  /* Saturday */
	ACTIVE("0 20 * * fri", "60h", utc(2026, 12, 6, 12, 0));  /* Sunday noon */
	ACTIVE("0 20 * * fri", "60h", utc(2026, 12, 7, 7, 59));  /* Monday */
	INACTIVE("0 20 * * fri", "60h", utc(2026, 12, 7, 8, 0));
	INACTIVE("0 20 * * fri", "60h", utc(2026, 12, 7, 9, 0)); /* Monday 09:00 */
	INACTIVE("0 20 * * 5", "60h", utc(2026, 12, 10, 12, 0)); /* Thursday */
	/* across a year end: Friday 2027-12-31 */
	ACTIVE("0 20 * * fri", "60h", utc(2028, 1, 2, 12, 0));
	INACTIVE("0 20 * * fri", "60h", utc(2028, 1, 3, 9, 0));
	/* "no disruption on weekdays 09:00-17:00" */
	ACTIVE("0 9 * * mon-fri", "8h", utc(2026, 12, 7, 9, 0));
	ACTIVE("0 9 * * mon-fri", "8h", utc(2026, 12, 4, 16, 59));
	INACTIVE("0 9 * * mon-fri", "8h", utc(2026, 12, 4, 17, 0));
	INACTIVE("0 9 * * mon-fri", "8h", utc(2026, 12, 7, 8, 59));
	INACTIVE("0 9 * * mon-fri", "8h", utc(2026, 12, 5, 12, 0)); /* Saturday */
	INACTIVE("0 9 * * mon-fri", "8h", utc(2026, 12, 6, 12, 0)); /* Sunday */
}

static void test_month_end_and_leap_day(void **state)
{
	(void)state;
	ACTIVE("0 0 29 2 *", "24h", utc(2024, 2, 29, 12, 0));
	INACTIVE("0 0 29 2 *", "24h", utc(2024, 3, 1, 0, 0));
	INACTIVE("0 0 29 2 *", "24h", utc(2025, 2, 28, 12, 0));
	INACTIVE("0 0 29 2 *", "24h", utc(2025, 3, 1, 0, 30));
	ACTIVE("0 0 29 2 *", "24h", utc(2028, 2, 29, 23, 59));
	INACTIVE("0 0 29 2 *", "24h", utc(2100, 2, 28, 12, 0)); /* 2100 is no leap year */
	/* the longest window, a leap year long, after a leap day */
	ACTIVE("0 0 29 2 *", "8784h", utc(2025, 2, 28, 23, 59));
	INACTIVE("0 0 29 2 *", "8784h", utc(2025, 3, 1, 0, 0));
	INACTIVE("0 0 29 2 *", "8784h", utc(2027, 6, 1, 0, 0));
	/* the 31st: months without one are skipped */
	ACTIVE("0 0 31 * *", "48h", utc(2027, 1, 1, 12, 0));
	ACTIVE("0 0 31 * *", "48h", utc(2027, 4, 1, 12, 0));
	INACTIVE("0 0 31 * *", "48h", utc(2027, 5, 1, 12, 0)); /* no 30 April fire */
	ACTIVE("0 0 31 * *", "48h", utc(2027, 6, 1, 12, 0));
	/* the last day of February, leap or not, through a range */
	ACTIVE("0 0 28-29 2 *", "24h", utc(2025, 2, 28, 23, 0));
	ACTIVE("@monthly", "1h", utc(2027, 3, 1, 0, 30));
	INACTIVE("@monthly", "1h", utc(2027, 2, 28, 23, 30));
}

static void test_day_of_month_or_day_of_week(void **state)
{
	(void)state;
	/* both restricted: a day matches either (the 13th, or a Friday) */
	ACTIVE("0 0 13 * fri", "24h", utc(2026, 4, 13, 12, 0));   /* Monday the 13th */
	ACTIVE("0 0 13 * fri", "24h", utc(2026, 4, 17, 12, 0));   /* Friday the 17th */
	INACTIVE("0 0 13 * fri", "24h", utc(2026, 4, 15, 12, 0)); /* Wednesday the 15th */
	/* one of them "*": both (Fridays only; "*" alone, or "?") */
	INACTIVE("0 0 * * fri", "24h", utc(2026, 4, 13, 12, 0));
	ACTIVE("0 0 ? * fri", "24h", utc(2026, 4, 17, 12, 0));
	INACTIVE("0 0 13 * *", "24h", utc(2026, 4, 17, 12, 0));
	INACTIVE("0 0 */1 * fri", "24h", utc(2026, 4, 15, 12, 0));
	/* a day of month with a step is restricted, as the cron parser reads it:
	 * odd days or Fridays */
	ACTIVE("0 0 */2 * fri", "1h", utc(2026, 4, 15, 0, 30));   /* Wednesday the 15th */
	INACTIVE("0 0 */2 * fri", "1h", utc(2026, 4, 14, 0, 30)); /* Tuesday the 14th */
	ACTIVE("0 0 */2 * fri", "1h", utc(2026, 4, 10, 0, 30));   /* Friday the 10th */
	/* 1-31 is restricted too: every day */
	ACTIVE("0 0 1-31 * fri", "1h", utc(2026, 4, 14, 0, 30));
	/* a day no month has, with a weekday: fires on the weekday */
	ACTIVE("0 0 30 2 mon", "1h", utc(2027, 2, 1, 0, 30));
}

static void test_steps_ranges_names(void **state)
{
	(void)state;
	/* every 15 minutes from 09:00 to 17:45 on weekdays, 5 minutes each */
	ACTIVE("*/15 9-17 * * mon-fri", "5m", utc(2026, 12, 8, 9, 3));
	INACTIVE("*/15 9-17 * * mon-fri", "5m", utc(2026, 12, 8, 9, 7));
	ACTIVE("*/15 9-17 * * mon-fri", "5m", utc(2026, 12, 8, 9, 15));
	ACTIVE("*/15 9-17 * * mon-fri", "5m", utc(2026, 12, 8, 17, 49));
	INACTIVE("*/15 9-17 * * mon-fri", "5m", utc(2026, 12, 8, 18, 2));
	INACTIVE("*/15 9-17 * * mon-fri", "5m", utc(2026, 12, 8, 8, 59));
	INACTIVE("*/15 9-17 * * mon-fri", "5m", utc(2026, 12, 12, 9, 3)); /* Saturday */
	/* "N/step" runs from N to the end: 5, 25, 45 */
	ACTIVE("5/20 * * * *", "1m", utc(2026, 12, 8, 10, 25));
	INACTIVE("5/20 * * * *", "1m", utc(2026, 12, 8, 10, 15));
	ACTIVE("5/20 * * * *", "1m", utc(2026, 12, 8, 10, 45));
	INACTIVE("5/20 * * * *", "1m", utc(2026, 12, 8, 10, 46));
	/* a range with a step: 9, 13, 17 */
	ACTIVE("0 9-17/4 * * *", "30m", utc(2026, 12, 8, 13, 10));
	INACTIVE("0 9-17/4 * * *", "30m", utc(2026, 12, 8, 11, 10));
	ACTIVE("0 9-17/4 * * *", "30m", utc(2026, 12, 8, 17, 29));
	/* lists and names, any case */
	ACTIVE("0 0 1 jan,JUL *", "1h", utc(2027, 7, 1, 0, 30));
	INACTIVE("0 0 1 jan,JUL *", "1h", utc(2027, 6, 1, 0, 30));
	ACTIVE("0 0 1 Jan-Mar *", "1h", utc(2027, 2, 1, 0, 30));
	ACTIVE("0,30 12 * * Sat,sun", "10m", utc(2026, 12, 6, 12, 35));
	INACTIVE("0,30 12 * * Sat,sun", "10m", utc(2026, 12, 7, 12, 35));
	/* the window starts at the fire, to the second */
	ACTIVE("30 6 * * *", "1m", utc(2026, 12, 8, 6, 30));
	INACTIVE("30 6 * * *", "1m", utc(2026, 12, 8, 6, 30) - 1);
	ACTIVE("30 6 * * *", "1m", utc(2026, 12, 8, 6, 30) + 59);
	INACTIVE("30 6 * * *", "1m", utc(2026, 12, 8, 6, 31));
	/* before 1970 too */
	ACTIVE("0 22 * * *", "4h", utc(1969, 12, 31, 23, 0));
	ACTIVE("0 22 * * *", "4h", utc(1970, 1, 1, 1, 0));
	INACTIVE("0 9 * * mon-fri", "8h", utc(1969, 12, 28, 12, 0)); /* a Sunday */
	ACTIVE("0 9 * * mon-fri", "8h", utc(1969, 12, 29, 12, 0));   /* a Monday */
}

static void test_macros(void **state)
{
	(void)state;
	ACTIVE("@hourly", "10m", utc(2026, 12, 8, 13, 5));
	INACTIVE("@hourly", "10m", utc(2026, 12, 8, 13, 15));
	ACTIVE("@daily", "1h", utc(2026, 12, 8, 0, 30));
	INACTIVE("@daily", "1h", utc(2026, 12, 8, 1, 0));
	ACTIVE("@midnight", "1h", utc(2026, 12, 8, 0, 59));
	ACTIVE("@weekly", "1h", utc(2026, 12, 6, 0, 30));   /* Sunday */
	INACTIVE("@weekly", "1h", utc(2026, 12, 7, 0, 30)); /* Monday */
	ACTIVE("@monthly", "2h", utc(2026, 12, 1, 1, 0));
	INACTIVE("@monthly", "2h", utc(2026, 12, 2, 1, 0));
	ACTIVE("@yearly", "24h", utc(2027, 1, 1, 23, 0));
	ACTIVE("@annually", "24h", utc(2027, 1, 1, 23, 0));
	INACTIVE("@annually", "24h", utc(2027, 1, 2, 0, 0));
}

/* The schedule's fields of UTC time 't', by the C library (not budget.c's calendar). */
static bool naive_fires(const struct budget_cron *c, int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;
	bool dom, dow;

	if (t % 60 || !gmtime_r(&tt, &tm))
		return false;
	dom = c->doms >> tm.tm_mday & 1;
	dow = c->dows >> tm.tm_wday & 1;
	return (c->minutes >> tm.tm_min & 1) && (c->hours >> tm.tm_hour & 1) &&
	       (c->months >> (tm.tm_mon + 1) & 1) &&
	       (c->dom_star || c->dow_star ? dom && dow : dom || dow);
}

static uint64_t rng = 0x2545F4914F6CDD1DULL;

static unsigned next_rand(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

/* budget_active() against a scan of every minute of the window, on
 * schedules built from a fixed seed, at times over several years. */
static void test_against_minute_scan(void **state)
{
	static const char *const minute[] = { "*", "0", "*/15", "5/20", "0,30", "59", "10-20" };
	static const char *const hour[] = { "*", "0", "22", "9-17", "*/6", "23", "0,12" };
	static const char *const dom[] = { "*", "1", "13", "29", "31", "*/2", "28-31", "?" };
	static const char *const month[] = { "*", "2", "jan,jul", "*/3", "dec", "2-3" };
	static const char *const dow[] = { "*", "fri", "mon-fri", "0", "sat,sun", "?", "*/2" };
	static const char *const dur[] = { "1m", "30m", "1h", "4h", "24h", "60h", "49h30m" };
	int cases = 0, i;

	(void)state;
	for (i = 0; i < 400; i++) {
		char sched[96];
		struct disruption_budget b;
		struct budget_spec spec = { "0", NULL, 0, sched, dur[next_rand(7)] };
		struct errbuf err;
		int64_t now, t;
		bool want = false;

		snprintf(sched, sizeof(sched), "%s %s %s %s %s", minute[next_rand(7)], hour[next_rand(7)],
			 dom[next_rand(8)], month[next_rand(6)], dow[next_rand(7)]);
		if (budget_parse(&spec, &b, &err) < 0) {
			if (!strstr(err.msg, "never fires"))
				fail_msg("%s: %s", sched, err.msg);
			continue;
		}
		now = utc(2023, 1, 1, 0, 0) + (int64_t)next_rand(5u * 365 * 86400);
		for (t = now - now % 60; t > now - b.duration_s && !want; t -= 60)
			want = naive_fires(&b.cron, t);
		if (budget_active(&b, now) != want)
			fail_msg("\"%s\" for %s at %lld: %s, want %s", sched, spec.duration,
				 (long long)now, want ? "inactive" : "active", want ? "active" : "inactive");
		cases++;
	}
	assert_true(cases > 300);
}

/* ---- several budgets, reasons ---- */

static void test_several_budgets(void **state)
{
	/* 10% always; none on weekdays 09:00-17:00 for consolidation; 3 for drift */
	struct disruption_budget b[3];
	int64_t tue_noon = utc(2026, 12, 8, 12, 0), tue_night = utc(2026, 12, 8, 22, 0);
	size_t which;

	(void)state;
	b[0] = mk("10%", NULL, NULL, NULL);
	b[1] = mk("0", "0 9 * * mon-fri", "8h", "underutilized,empty");
	b[2] = mk("3", NULL, NULL, "drifted");
	assert_int_equal(budget_allowed(b, 3, DISRUPTION_UNDERUTILIZED, 50, tue_noon), 0);
	assert_int_equal(budget_allowed(b, 3, DISRUPTION_EMPTY, 50, tue_noon), 0);
	assert_int_equal(budget_allowed(b, 3, DISRUPTION_UNDERUTILIZED, 50, tue_night), 5);
	assert_int_equal(budget_allowed_which(b, 3, DISRUPTION_DRIFTED, 50, tue_noon, &which), 3);
	assert_int_equal(which, 2);
	assert_int_equal(budget_allowed_which(b, 3, DISRUPTION_DRIFTED, 20, tue_noon, &which), 2);
	assert_int_equal(which, 0); /* 10% of 20 is under 3 */
	assert_int_equal(budget_allowed(b, 3, DISRUPTION_EXPIRED, 50, tue_noon), 5);
	/* equal budgets: the first gives the answer */
	b[2] = mk("5", NULL, NULL, NULL);
	assert_int_equal(budget_allowed_which(b, 3, DISRUPTION_EXPIRED, 50, tue_night, &which), 5);
	assert_int_equal(which, 0);
}

static void test_reasons_and_interruptions(void **state)
{
	struct disruption_budget b[2];
	int64_t now = utc(2026, 12, 8, 12, 0);
	unsigned r;

	(void)state;
	/* a budget of 0 for every reason never holds back an interruption */
	b[0] = mk("0", NULL, NULL, NULL);
	assert_true(budget_allowed(b, 1, DISRUPTION_INTERRUPTED, 10, now) == BUDGET_UNLIMITED);
	b[0] = mk("0", NULL, NULL, "any");
	assert_int_equal(b[0].reasons, DISRUPTION_REASONS_ALL);
	assert_true(budget_allowed(b, 1, DISRUPTION_INTERRUPTED, 10, now) == BUDGET_UNLIMITED);
	for (r = 0; r < DISRUPTION_INTERRUPTED; r++)
		assert_int_equal(budget_allowed(b, 1, (enum disruption_reason)r, 10, now), 0);
	/* budgets that name reasons leave the others unlimited (the operator's list) */
	b[0] = mk("1", NULL, NULL, "drifted");
	b[1] = mk("2", NULL, NULL, "expired,Empty");
	assert_int_equal(budget_allowed(b, 2, DISRUPTION_DRIFTED, 10, now), 1);
	assert_int_equal(budget_allowed(b, 2, DISRUPTION_EXPIRED, 10, now), 2);
	assert_int_equal(budget_allowed(b, 2, DISRUPTION_EMPTY, 10, now), 2);
	assert_true(budget_allowed(b, 2, DISRUPTION_UNDERUTILIZED, 10, now) == BUDGET_UNLIMITED);
	/* a list written empty: no limit from budgets */
	assert_true(budget_allowed(b, 0, DISRUPTION_DRIFTED, 10, now) == BUDGET_UNLIMITED);
	/* names */
	for (r = 0; r < DISRUPTION_N_REASONS; r++) {
		enum disruption_reason back;

		assert_int_equal(disruption_reason_parse(disruption_reason_name((enum disruption_reason)r),
							 &back), 0);
		assert_int_equal(back, r);
	}
	{
		enum disruption_reason back = DISRUPTION_EMPTY;

		assert_int_equal(disruption_reason_parse("Underutilized", &back), 0);
		assert_int_equal(back, DISRUPTION_UNDERUTILIZED);
		assert_int_equal(disruption_reason_parse("any", &back), -1);
		assert_int_equal(disruption_reason_parse("consolidation", &back), -1);
		assert_string_equal(disruption_reason_name(DISRUPTION_N_REASONS), "?");
	}
}

static void test_describe(void **state)
{
	struct disruption_budget b = mk("0", "0 9 * * mon-fri", "8h", "underutilized,empty");
	char out[160];

	(void)state;
	assert_string_equal(budget_describe(&b, out, sizeof(out)),
			    "nodes 0 for empty, underutilized, schedule \"0 9 * * mon-fri\" for 8h");
	b = mk("10%", NULL, NULL, NULL);
	assert_string_equal(budget_describe(&b, out, sizeof(out)), "nodes 10%");
	b = mk("3", "@hourly", "1h30m0s", "any");
	assert_string_equal(budget_describe(&b, out, sizeof(out)),
			    "nodes 3, schedule \"@hourly\" for 1h30m");
}

/* ---- parse errors ---- */

static void expect_error(const char *nodes, const char *schedule, const char *duration,
			 const char *reason, const char *msg)
{
	struct budget_spec spec = { nodes, NULL, 0, schedule, duration };
	const char *names[1] = { reason };
	struct disruption_budget b;
	struct errbuf err;

	if (reason) {
		spec.reasons = names;
		spec.n_reasons = 1;
	}
	if (budget_parse(&spec, &b, &err) == 0)
		fail_msg("accepted nodes %s schedule %s duration %s reason %s", nodes ? nodes : "-",
			 schedule ? schedule : "-", duration ? duration : "-", reason ? reason : "-");
	if (!strstr(err.msg, msg))
		fail_msg("error \"%s\" does not contain \"%s\"", err.msg, msg);
}

static void test_parse_errors(void **state)
{
	struct budget_spec spec = { "1", NULL, 0, NULL, NULL };
	const char *none[1] = { NULL };
	struct disruption_budget b;
	struct errbuf err;

	(void)state;
	/* nodes */
	expect_error(NULL, NULL, NULL, NULL, "nodes: is required");
	expect_error("", NULL, NULL, NULL, "nodes: is empty");
	expect_error("-1", NULL, NULL, NULL, "nodes: \"-1\" is negative");
	expect_error("-10%", NULL, NULL, NULL, "is negative");
	expect_error("101%", NULL, NULL, NULL, "nodes: \"101%\": a percentage is at most 100%");
	expect_error("1000a%", NULL, NULL, NULL, "nodes: \"1000a%\": want a count");
	expect_error("abc", NULL, NULL, NULL, "want a count");
	expect_error("5.5", NULL, NULL, NULL, "want a count");
	expect_error(" 5", NULL, NULL, NULL, "want a count");
	expect_error("10%%", NULL, NULL, NULL, "want a count");
	expect_error("1000001", NULL, NULL, NULL, "a count is at most 1000000 nodes");
	expect_error("99999999999999999999999", NULL, NULL, NULL, "a count is at most");
	/* schedule and duration together */
	expect_error("0", "0 9 * * *", NULL, NULL, "duration: is required with schedule");
	expect_error("0", NULL, "8h", NULL, "schedule: is required with duration");
	/* schedules */
	expect_error("0", "0 9 * * mon-fri x", "8h", NULL,
		     "schedule: \"0 9 * * mon-fri x\": 6 fields, want 5");
	expect_error("0", "0 9 * *", "8h", NULL, "4 fields, want 5");
	expect_error("0", "", "8h", NULL, "schedule: is empty");
	expect_error("0", "0 0 * * tue-mon", "6h", NULL,
		     "day of week field \"tue-mon\": beginning of range (2) beyond end of range (1)");
	expect_error("0", "60 * * * *", "1h", NULL, "minute field \"60\": end of range (60) above maximum (59)");
	expect_error("0", "0 24 * * *", "1h", NULL, "above maximum (23)");
	expect_error("0", "0 0 0 * *", "1h", NULL, "day of month field \"0\": beginning of range (0) below minimum (1)");
	expect_error("0", "0 0 * 13 *", "1h", NULL, "above maximum (12)");
	expect_error("0", "0 0 * * 7", "1h", NULL, "end of range (7) above maximum (6)");
	expect_error("0", "*/0 * * * *", "1h", NULL, "should be a positive number");
	expect_error("0", "*/x * * * *", "1h", NULL, "the step in \"*/x\" is not a number");
	expect_error("0", "1-2-3 * * * *", "1h", NULL, "too many hyphens");
	expect_error("0", "1/2/3 * * * *", "1h", NULL, "too many slashes");
	expect_error("0", "0 0 * * monday", "1h", NULL, "\"monday\" is not a number or a name");
	expect_error("0", "0 0 1,,2 * *", "1h", NULL, "is not a number");
	expect_error("0", "0 0 * jan-feb mon-x", "1h", NULL, "is not a number or a name");
	expect_error("0", "@wrongly", "1h", NULL, "\"@wrongly\" is not a macro");
	expect_error("0", "@every 1h", "1h", NULL, "is not a macro");
	expect_error("0", "@DAILY", "1h", NULL, "is not a macro");
	expect_error("0", "0 0 30 2 *", "1h", NULL, "\"0 0 30 2 *\" never fires");
	expect_error("0", "0 0 31 4,6,9,11 *", "1h", NULL, "never fires");
	expect_error("0", "TZ=UTC 0 0 * * *", "1h", NULL, "6 fields, want 5");
	expect_error("0", "0 0 * * * 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 "
		     "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0", "1h", NULL, "longer than 127 characters");
	/* durations: hours and minutes as Karpenter takes them */
	expect_error("0", "@daily", "90s", NULL, "duration: \"90s\": want hours and minutes");
	expect_error("0", "@daily", "1.5h", NULL, "want hours and minutes");
	expect_error("0", "@daily", "1h30", NULL, "want hours and minutes");
	expect_error("0", "@daily", "30m1h", NULL, "want hours and minutes");
	expect_error("0", "@daily", "1d", NULL, "want hours and minutes");
	expect_error("0", "@daily", "", NULL, "want hours and minutes");
	expect_error("0", "@daily", "-1h", NULL, "want hours and minutes");
	expect_error("0", "@daily", "0h", NULL, "a window of no time is never active");
	expect_error("0", "@daily", "0m0s", NULL, "never active");
	expect_error("0", "@daily", "8785h", NULL, "\"8785h\" is longer than 8784h");
	expect_error("0", "@daily", "8784h1m", NULL, "is longer than 8784h");
	expect_error("0", "@daily", "99999999999999999999h", NULL, "is longer than 8784h");
	/* reasons */
	expect_error("0", NULL, NULL, "interrupted", "reasons[0]: interrupted is never budgeted");
	expect_error("0", NULL, NULL, "consolidation", "reasons[0]: \"consolidation\" is not a reason");
	spec.reasons = none;
	spec.n_reasons = 0;
	assert_int_equal(budget_parse(&spec, &b, &err), -1);
	assert_non_null(strstr(err.msg, "reasons: an empty list"));
	/* what Karpenter's patterns accept */
	b = mk("0", "@daily", "8h0m0s", NULL);
	assert_int_equal(b.duration_s, 8 * 3600);
	b = mk("0", "@daily", "30m0s", NULL);
	assert_int_equal(b.duration_s, 1800);
	b = mk("0", "@daily", "1h90m", NULL);
	assert_int_equal(b.duration_s, 9000);
	b = mk("0", "@daily", "8784h", NULL);
	assert_int_equal(b.duration_s, 8784 * 3600);
	b = mk("05%", NULL, NULL, NULL);
	assert_true(b.percent);
	assert_int_equal(b.nodes, 5);
	b = mk("007", "  0\t9 *  * mon-fri ", "8h", "Drifted,UNDERUTILIZED");
	assert_false(b.percent);
	assert_int_equal(b.nodes, 7);
	assert_int_equal(b.reasons, DISRUPTION_REASON_BIT(DISRUPTION_DRIFTED) |
			 DISRUPTION_REASON_BIT(DISRUPTION_UNDERUTILIZED));
	assert_int_equal(b.cron.hours, 1u << 9);
	assert_int_equal(b.cron.dows, 0x3e);
	assert_true(b.cron.dom_star);
	assert_false(b.cron.dow_star);
	assert_string_equal(b.schedule, "  0\t9 *  * mon-fri ");
}

/* Karpenter's validation cases for budgets (pkg/apis/v1/
 * nodepool_validation_cel_test.go), as data. Durations appear as Go
 * prints them ("20m0s") and as written. One difference: "expired" is a
 * reason here (issue 27), which Karpenter's v1 enum refuses. */
static void test_karpenter_validation(void **state)
{
	static const struct {
		const char *nodes, *schedule, *duration, *reason;
		bool ok;
	} cases[] = {
		{ "10", "*", "20m", NULL, false },              /* an invalid cron */
		{ "10", "* * * * ", "20m", NULL, false },       /* fewer than 5 entries */
		{ "10", "* * * * *", "-20m", NULL, false },     /* a negative duration */
		{ "10", "* * * * *", "30s", NULL, false },      /* a duration in seconds */
		{ "-10", NULL, NULL, NULL, false },             /* a negative count */
		{ "-10%", NULL, NULL, NULL, false },            /* a negative percentage */
		{ "1000%", NULL, NULL, NULL, false },           /* a percentage over 100 */
		{ "10", "* * * * *", NULL, NULL, false },       /* a cron, no duration */
		{ "10", NULL, "20m", NULL, false },             /* a duration, no cron */
		{ "10", "* * * * *", "20m", "invalid", false },
		{ "10", "* * * * *", "20m", "", false },
		{ "10", "* * * * *", "20m", NULL, true },
		{ "10", "* * * * *", "20m0s", NULL, true },
		{ "10", "* * * * *", "2h20m", NULL, true },
		{ "10", "* * * * *", "2h20m0s", NULL, true },
		{ "10", NULL, NULL, NULL, true },
		{ "10", "@annually", "20m", NULL, true },
		{ "10", "* * * * *", "20m", "Drifted", true },
		{ "10", "* * * * *", "20m", "Underutilized", true },
		{ "10", "* * * * *", "20m", "Empty", true },
		{ "10", "* * * * *", "20m", "expired", true },  /* luascale's, not Karpenter's */
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *names[1] = { cases[i].reason };
		struct budget_spec spec = { cases[i].nodes, cases[i].reason ? names : NULL,
					    cases[i].reason ? 1 : 0, cases[i].schedule, cases[i].duration };
		struct disruption_budget b;
		struct errbuf err;
		int rc = budget_parse(&spec, &b, &err);

		if ((rc == 0) != cases[i].ok)
			fail_msg("case %zu (nodes %s schedule %s duration %s reason %s): %s", i,
				 cases[i].nodes, cases[i].schedule ? cases[i].schedule : "-",
				 cases[i].duration ? cases[i].duration : "-",
				 cases[i].reason ? cases[i].reason : "-", rc ? err.msg : "accepted");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_percent_rounding),
		cmocka_unit_test(test_karpenter_allowed_by_reason),
		cmocka_unit_test(test_karpenter_is_active),
		cmocka_unit_test(test_window_across_midnight),
		cmocka_unit_test(test_window_over_week_end),
		cmocka_unit_test(test_month_end_and_leap_day),
		cmocka_unit_test(test_day_of_month_or_day_of_week),
		cmocka_unit_test(test_steps_ranges_names),
		cmocka_unit_test(test_macros),
		cmocka_unit_test(test_against_minute_scan),
		cmocka_unit_test(test_several_budgets),
		cmocka_unit_test(test_reasons_and_interruptions),
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_karpenter_validation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
