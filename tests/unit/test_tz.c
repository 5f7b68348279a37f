/*
 * Tests for tz: named time zones read from the system's zoneinfo (Debian's
 * tzdata), across daylight-saving changes, past the last stored transition
 * (the footer rule), against glibc's own reading of the same files; bad
 * names, unknown zones and corrupt files in a private $TZDIR-like
 * directory; and ls.local_time as a policy sees it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "model.h"
#include "policy/host.h"
#include "policy/tz.h"
#include "test_policy_files.h"

#define ZONEINFO "/usr/share/zoneinfo"

static struct tz_local at(const char *zone, int64_t t)
{
	struct errbuf err;
	const struct tz_zone *z = tz_get(ZONEINFO, zone, &err);
	struct tz_local l;

	if (!z)
		fail_msg("%s: %s", zone, err.msg);
	tz_lookup(z, t, &l);
	return l;
}

static void expect(const struct tz_local *l, int64_t y, int mo, int d, int h, int mi, int s,
		   int32_t off, bool dst, const char *abbr)
{
	if (l->year != y || l->month != mo || l->day != d || l->hour != h || l->min != mi ||
	    l->sec != s || l->offset != off || l->isdst != dst || strcmp(l->abbr, abbr) != 0)
		fail_msg("got %lld-%02d-%02d %02d:%02d:%02d %+d %s%s, want %lld-%02d-%02d "
			 "%02d:%02d:%02d %+d %s%s",
			 (long long)l->year, l->month, l->day, l->hour, l->min, l->sec, l->offset,
			 l->abbr, l->isdst ? " dst" : "", (long long)y, mo, d, h, mi, s, off, abbr,
			 dst ? " dst" : "");
}

/* 2026-03-29 01:00:00 UTC: Berlin's clocks go from 02:00 CET to 03:00 CEST. */
static void test_berlin_spring_forward(void **state)
{
	const int64_t change = 1774746000; /* 2026-03-29T01:00:00Z */
	struct tz_local l;

	(void)state;
	l = at("Europe/Berlin", change - 1);
	expect(&l, 2026, 3, 29, 1, 59, 59, 3600, false, "CET");
	assert_int_equal(l.wday, 7); /* a Sunday */
	assert_int_equal(l.yday, 88);
	l = at("Europe/Berlin", change);
	expect(&l, 2026, 3, 29, 3, 0, 0, 7200, true, "CEST");
}

/* 2026-11-01 06:00:00 UTC: New York goes from 01:59:59 EDT back to 01:00 EST. */
static void test_new_york_fall_back(void **state)
{
	const int64_t change = 1793512800; /* 2026-11-01T06:00:00Z */
	struct tz_local l;

	(void)state;
	l = at("America/New_York", change - 1);
	expect(&l, 2026, 11, 1, 1, 59, 59, -4 * 3600, true, "EDT");
	l = at("America/New_York", change);
	expect(&l, 2026, 11, 1, 1, 0, 0, -5 * 3600, false, "EST");
}

/* Lord Howe Island moves by half an hour: 02:00 +1030 -> 02:30 +11 on the
 * first Sunday of October (2026-10-04). */
static void test_lord_howe_half_hour(void **state)
{
	const int64_t t = 1791041400;          /* 2026-10-03T15:30:00Z */
	struct tz_local l;

	(void)state;
	l = at("Australia/Lord_Howe", t - 1);
	expect(&l, 2026, 10, 4, 1, 59, 59, 37800, false, "+1030");
	l = at("Australia/Lord_Howe", t);
	expect(&l, 2026, 10, 4, 2, 30, 0, 39600, true, "+11");
}

/* Far past the transitions stored in the file: only the footer's rule
 * knows 2300 (last Sunday of March 2300 is the 25th; 01:00 UTC). */
static void test_footer_rule_far_future(void **state)
{
	const int64_t change = 10420966800LL; /* 2300-03-25T01:00:00Z */
	struct tz_local l;

	(void)state;
	l = at("Europe/Berlin", change - 1);
	expect(&l, 2300, 3, 25, 1, 59, 59, 3600, false, "CET");
	assert_int_equal(l.wday, 7);
	l = at("Europe/Berlin", change);
	expect(&l, 2300, 3, 25, 3, 0, 0, 7200, true, "CEST");
	l = at("America/New_York", 10420966800LL + 200 * 86400); /* October 2300 */
	assert_true(l.isdst);
	assert_string_equal(l.abbr, "EDT");
}

/* Every zone below, every few days from 1850 to 2250, against glibc's
 * localtime_r reading the same file (TZ is set in this test process only). */
static void test_agrees_with_glibc(void **state)
{
	static const char *const zones[] = {
		"Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Australia/Sydney",
		"Asia/Jerusalem", "America/Nuuk", "America/Santiago", "Pacific/Chatham",
		"Europe/Dublin", "Asia/Kolkata", "America/Sao_Paulo", "Africa/Casablanca",
		"Pacific/Apia", "UTC", "America/St_Johns", "Europe/London",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(zones) / sizeof(zones[0]); i++) {
		char tzenv[128];
		int64_t t;

		snprintf(tzenv, sizeof(tzenv), ":" ZONEINFO "/%s", zones[i]);
		setenv("TZ", tzenv, 1);
		tzset();
		for (t = -3786825600LL; t < 8836128000LL; t += 3 * 86400 + 3601) {
			time_t tt = (time_t)t;
			struct tm tm;
			struct tz_local l = at(zones[i], t);

			assert_non_null(localtime_r(&tt, &tm));
			if (l.year != tm.tm_year + 1900 || l.month != tm.tm_mon + 1 ||
			    l.day != tm.tm_mday || l.hour != tm.tm_hour || l.min != tm.tm_min ||
			    l.sec != tm.tm_sec || l.offset != tm.tm_gmtoff ||
			    l.isdst != (tm.tm_isdst > 0) || strcmp(l.abbr, tm.tm_zone) != 0 ||
			    l.yday != tm.tm_yday + 1 || l.wday != (tm.tm_wday + 6) % 7 + 1)
				fail_msg("%s at %lld: got %lld-%02d-%02d %02d:%02d:%02d %+d %s dst=%d, "
					 "glibc %d-%02d-%02d %02d:%02d:%02d %+ld %s dst=%d",
					 zones[i], (long long)t, (long long)l.year, l.month, l.day,
					 l.hour, l.min, l.sec, l.offset, l.abbr, l.isdst,
					 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
					 tm.tm_min, tm.tm_sec, tm.tm_gmtoff, tm.tm_zone, tm.tm_isdst);
		}
	}
	unsetenv("TZ");
	tzset();
}

static void test_cached(void **state)
{
	struct errbuf err;
	const struct tz_zone *a = tz_get(ZONEINFO, "Europe/Paris", &err);

	(void)state;
	assert_non_null(a);
	assert_ptr_equal(a, tz_get(ZONEINFO, "Europe/Paris", &err));
}

static void expect_bad(const char *dir, const char *name, const char *needle)
{
	struct errbuf err;

	err.msg[0] = '\0';
	if (tz_get(dir, name, &err))
		fail_msg("zone \"%s\" in %s was accepted", name, dir ? dir : "(default)");
	if (!strstr(err.msg, needle))
		fail_msg("error \"%s\" for \"%s\" does not contain \"%s\"", err.msg, name, needle);
}

static void test_bad_names(void **state)
{
	(void)state;
	expect_bad(ZONEINFO, "", "empty");
	expect_bad(ZONEINFO, "../../etc/passwd", "Europe/Berlin");
	expect_bad(ZONEINFO, "/etc/passwd", "Europe/Berlin");
	expect_bad(ZONEINFO, "Europe//Berlin", "Europe/Berlin");
	expect_bad(ZONEINFO, "Europe/Berlin/", "Europe/Berlin");
	expect_bad(ZONEINFO, "Europe/Ber lin", "Europe/Berlin");
	expect_bad(ZONEINFO, "Europe/Berlin\n", "Europe/Berlin");
	expect_bad(ZONEINFO, "Europe/Atlantis", "unknown time zone \"Europe/Atlantis\"");
	expect_bad(ZONEINFO, "Europe", "unknown time zone \"Europe\"");
	expect_bad(ZONEINFO, "zone.tab", "Europe/Berlin"); /* '.' is not in a zone name */
}

/* ---- corrupt files in a directory of our own ---- */

static char tmpdir[64];

static void put(const char *name, const void *data, size_t len)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = malloc(TZ_FILE_MAX);
	assert_non_null(f);
	assert_non_null(buf);
	*len = fread(buf, 1, TZ_FILE_MAX, f);
	fclose(f);
	return buf;
}

static void be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

/* A v2 file with no transitions and one type, then 'footer'. */
static size_t footer_only(unsigned char *out, const char *footer)
{
	size_t n = 0, k;
	int part;

	for (part = 0; part < 2; part++) {
		memset(out + n, 0, 44);
		memcpy(out + n, "TZif2", 5);
		be32(out + n + 20, 0);  /* isutcnt */
		be32(out + n + 24, 0);  /* isstdcnt */
		be32(out + n + 28, 0);  /* leapcnt */
		be32(out + n + 32, 0);  /* timecnt */
		be32(out + n + 36, 1);  /* typecnt */
		be32(out + n + 40, 4);  /* charcnt */
		n += 44;
		be32(out + n, (uint32_t)-18000); /* utoff -5h */
		out[n + 4] = 0;                  /* isdst */
		out[n + 5] = 0;                  /* desigidx */
		memcpy(out + n + 6, "EST", 4);
		n += 10;
	}
	k = strlen(footer);
	out[n++] = '\n';
	memcpy(out + n, footer, k);
	n += k;
	out[n++] = '\n';
	return n;
}

static int setup_dir(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/luascale-tz-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_dir(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_corrupt_files(void **state)
{
	size_t len, i;
	unsigned char *berlin = slurp(ZONEINFO "/Europe/Berlin", &len);
	unsigned char *big, buf[512];
	char dir[128];

	(void)state;
	put("Whole", berlin, len);
	put("Truncated", berlin, 100);
	put("Header", berlin, 30);
	put("NoFooter", berlin, len - 10); /* v2 data, footer cut */
	put("Garbage", "this is not a zone\n", 19);
	memcpy(buf, berlin, 44);
	be32(buf + 32, 0x7fffffff); /* timecnt far beyond the file */
	put("Huge", buf, 44);
	memcpy(buf, berlin, 44);
	be32(buf + 36, 0); /* no types */
	put("NoTypes", buf, 44);
	big = calloc(1, TZ_FILE_MAX + 1);
	assert_non_null(big);
	memcpy(big, berlin, len);
	put("TooBig", big, TZ_FILE_MAX + 1);
	free(big);
	put("BadFooter", buf, footer_only(buf, "EST5EDT,M13.1.0,M11.1.0"));
	put("ShortFooter", buf, footer_only(buf, "EST5EDT,M3.2.0"));
	snprintf(dir, sizeof(dir), "%s/Sub", tmpdir);
	assert_int_equal(mkdir(dir, 0700), 0);

	assert_non_null(tz_get(tmpdir, "Whole", NULL));
	expect_bad(tmpdir, "Truncated", "Truncated");
	expect_bad(tmpdir, "Truncated", "truncated");
	expect_bad(tmpdir, "Header", "truncated");
	expect_bad(tmpdir, "NoFooter", "footer");
	expect_bad(tmpdir, "Garbage", "not a TZif file");
	expect_bad(tmpdir, "Huge", "truncated");
	expect_bad(tmpdir, "NoTypes", "no local time types");
	expect_bad(tmpdir, "TooBig", "larger than");
	expect_bad(tmpdir, "BadFooter", "M13.1.0");
	expect_bad(tmpdir, "ShortFooter", "footer");
	expect_bad(tmpdir, "Sub", "unknown time zone \"Sub\"");
	expect_bad(tmpdir, "Europe/Berlin", "unknown time zone");

	/* every cut of a real file is refused, none crashes */
	for (i = 0; i < len; i++) {
		struct errbuf err;
		struct tz_zone *z = tz_parse(berlin, i, "cut", &err);

		if (z)
			fail_msg("Berlin cut to %zu of %zu bytes parsed", i, len);
	}
	free(berlin);
}

/* A file with no transitions: the footer rule holds for all times, with
 * a Julian day rule (J60 is March 1 in every year) and a time past 24h. */
static void test_footer_only_rules(void **state)
{
	unsigned char buf[512];
	struct errbuf err;
	struct tz_zone *z;
	struct tz_local l;

	(void)state;
	z = tz_parse(buf, footer_only(buf, "<-05>5<-04>,J60/0,300/26"), "rule", &err);
	if (!z)
		fail_msg("%s", err.msg);
	tz_lookup(z, 1709269199, &l); /* 2024-03-01T04:59:59Z, a leap year */
	expect(&l, 2024, 2, 29, 23, 59, 59, -18000, false, "-05");
	tz_lookup(z, 1709269200, &l);
	expect(&l, 2024, 3, 1, 1, 0, 0, -14400, true, "-04");
	/* day 300 (zero-based) of 2024 is October 27; 26:00 is 02:00 the 28th */
	tz_lookup(z, 1730095200 - 1, &l); /* 2024-10-28T05:59:59Z */
	expect(&l, 2024, 10, 28, 1, 59, 59, -14400, true, "-04");
	tz_lookup(z, 1730095200, &l);
	expect(&l, 2024, 10, 28, 1, 0, 0, -18000, false, "-05");
	tz_free(z);
}

/* ---- as a policy sees it ---- */

static const char *run_policy(const char *body)
{
	static struct errbuf err;
	static const struct sandbox_limits lim = {20000000, 64LL << 20, 600000, NULL, false};
	char src[1024];
	const char *path;
	struct policy *p;
	struct snapshot *s = empty_snapshot();
	struct drain_opts o;
	struct plan plan;

	snprintf(src, sizeof(src),
		 "local ls = require \"luascale\"\nlocal P = {}\n"
		 "function P.reconcile(cluster, params, store)\n%s\nend\nreturn P\n", body);
	path = write_policy(src);
	p = policy_load(path, SOURCE_DIR "/lua", &lim, NULL, &err);
	unlink(path);
	if (!p)
		fail_msg("load: %s", err.msg);
	drain_opts_default(&o);
	assert_int_equal(policy_reconcile(p, s, &o, &plan, NULL, &err), -1);
	policy_free(p);
	snapshot_free(s);
	return err.msg;
}

static void test_policy_local_time(void **state)
{
	const char *msg;

	(void)state;
	/* the snapshot's now is 1700000000: 2023-11-14T22:13:20Z */
	msg = run_policy("local t = ls.local_time(cluster.now, \"Europe/Berlin\")\n"
			 "error(string.format('%d-%02d-%02d %02d:%02d:%02d %s %d %s %s wday=%d yday=%d %s',"
			 " t.year, t.month, t.day, t.hour, t.min, t.sec, t.abbr, t.offset,"
			 " tostring(t.isdst), t.day_name, t.wday, t.yday, t.zone), 0)");
	if (!strstr(msg, "2023-11-14 23:13:20 CET 3600 false Tue wday=2 yday=318 Europe/Berlin"))
		fail_msg("policy saw \"%s\"", msg);
	msg = run_policy("local t = ls.local_time(1780000000, \"America/New_York\")\n"
			 "error(t.abbr .. ' ' .. t.offset .. ' ' .. tostring(t.isdst), 0)");
	if (!strstr(msg, "EDT -14400 true"))
		fail_msg("policy saw \"%s\"", msg);
	msg = run_policy("ls.local_time(cluster.now, \"Europe/Atlantis\")");
	if (!strstr(msg, ".lua:4: local_time: unknown time zone \"Europe/Atlantis\""))
		fail_msg("error \"%s\" does not name the zone at the policy's line", msg);
	msg = run_policy("ls.local_time(cluster.now, \"../../etc/passwd\")");
	if (!strstr(msg, "../../etc/passwd"))
		fail_msg("error \"%s\" does not name the zone", msg);
	msg = run_policy("ls.local_time(\"noon\", \"UTC\")");
	if (!strstr(msg, "number"))
		fail_msg("error \"%s\" does not say a number is needed", msg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_berlin_spring_forward),
		cmocka_unit_test(test_new_york_fall_back),
		cmocka_unit_test(test_lord_howe_half_hour),
		cmocka_unit_test(test_footer_rule_far_future),
		cmocka_unit_test(test_agrees_with_glibc),
		cmocka_unit_test(test_cached),
		cmocka_unit_test(test_bad_names),
		cmocka_unit_test_setup_teardown(test_corrupt_files, setup_dir, remove_dir),
		cmocka_unit_test(test_footer_only_rules),
		cmocka_unit_test(test_policy_local_time),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
