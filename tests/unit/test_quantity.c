/*
 * Tests for quantity.c: the Kubernetes quantity grammar, exact rounding,
 * int64 overflow, and canonical formatting.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "quantity.h"

static int64_t ok(const char *text, enum quantity_unit unit)
{
	struct errbuf err = {{0}};
	int64_t v = 12345;
	int rc = quantity_parse(text, unit, &v, &err);

	if (rc != 0)
		fail_msg("quantity_parse(\"%s\") failed: %s", text, err.msg);
	return v;
}

#define MILLI(text, want) assert_int_equal(ok(text, QUANTITY_MILLI), want)
#define UNIT(text, want) assert_int_equal(ok(text, QUANTITY_UNIT), want)

/* Expects a parse failure whose message contains 'needle'. */
static void bad(const char *text, enum quantity_unit unit, const char *needle)
{
	struct errbuf err = {{0}};
	int64_t v = 777;

	if (quantity_parse(text, unit, &v, &err) == 0)
		fail_msg("quantity_parse(\"%s\") accepted, got %lld", text ? text : "(null)",
			 (long long)v);
	assert_int_equal(v, 777); /* output untouched on error */
	if (!strstr(err.msg, needle))
		fail_msg("message for \"%s\" is \"%s\", want \"%s\" in it",
			 text ? text : "(null)", err.msg, needle);
}

static void test_plain_numbers(void **state)
{
	(void)state;
	MILLI("1", 1000);
	MILLI("0", 0);
	MILLI("-0", 0);
	MILLI("+0.0", 0);
	MILLI("1.5", 1500);
	MILLI("1.", 1000);
	MILLI(".5", 500);
	MILLI("+2", 2000);
	MILLI("-2", -2000);
	MILLI("-.5", -500);
	MILLI("100m", 100);
	MILLI("0.1", 100);
	UNIT("128974848", 128974848);
	UNIT("007", 7);
	UNIT("0000000000000000000000001", 1);
	UNIT("000000000000000000000000100000000000000000", 100000000000000000LL);
}

static void test_suffixes(void **state)
{
	(void)state;
	UNIT("1Ki", 1024);
	UNIT("1Mi", 1024 * 1024);
	UNIT("1Gi", 1024LL * 1024 * 1024);
	UNIT("1Ti", 1024LL * 1024 * 1024 * 1024);
	UNIT("1Pi", 1024LL * 1024 * 1024 * 1024 * 1024);
	UNIT("1Ei", 1024LL * 1024 * 1024 * 1024 * 1024 * 1024);
	UNIT("1k", 1000);
	UNIT("1M", 1000000);
	UNIT("1G", 1000000000LL);
	UNIT("1T", 1000000000000LL);
	UNIT("1P", 1000000000000000LL);
	UNIT("1E", 1000000000000000000LL);
	UNIT("129M", 129000000);
	UNIT("123Mi", 123 * 1048576LL);
	UNIT("1.5Gi", 1610612736LL);
	UNIT("0.5Ki", 512);
	UNIT("1.G", 1000000000LL);
	MILLI("1Ki", 1024000);
	MILLI("250m", 250);
	MILLI("1000000n", 1);
	MILLI("1000u", 1);
	MILLI("1500000u", 1500);
	MILLI("2k", 2000000);
}

static void test_exponents(void **state)
{
	(void)state;
	UNIT("1e3", 1000);
	UNIT("1E3", 1000);
	UNIT("1e+3", 1000);
	UNIT("1e03", 1000);
	UNIT("12e-1", 2);       /* 1.2 rounds up */
	UNIT("129e6", 129000000);
	UNIT("1.5e2", 150);
	UNIT("5e-0", 5);
	MILLI("1e-3", 1);
	MILLI("1E-3", 1);
	MILLI("25e-3", 25);
	UNIT("0e400", 0);
	UNIT("0e99999999999999999999999999", 0);
	UNIT("1e18", 1000000000000000000LL);
	UNIT("9.223372036854775807e18", INT64_MAX);
}

static void test_rounding_up(void **state)
{
	(void)state;
	MILLI("1u", 1);
	MILLI("1n", 1);
	MILLI("1.5m", 2);
	MILLI("1.0001m", 2);
	MILLI("1.000m", 1);
	MILLI("-1u", -1);
	MILLI("-1.5m", -2);
	MILLI("0.0001", 1);
	UNIT("0.1", 1);
	UNIT("0.9", 1);
	UNIT("1.1", 2);
	UNIT("-0.1", -1);
	UNIT("1.0000000000000000000000001", 2);
	UNIT("0.0000000000000000000000000001", 1);
	UNIT("0.0000000000000000000000000001Ei", 1);
	UNIT("1e-400", 1);
	UNIT("-1e-400", -1);
	UNIT("1e-99999999999999999999", 1);
	MILLI("1e-400", 1);
	/* binary suffix on a fraction: 0.001Ki = 1.024 -> 2; 0.0009765625Ki = 1 exactly */
	UNIT("0.001Ki", 2);
	UNIT("0.0009765625Ki", 1);
	UNIT("0.00048828125Ki", 1); /* 0.5 -> 1 */
	UNIT("1.0009765625Ki", 1025);
	/* many fractional digits but exact */
	UNIT("1.00000000000000000000000000000000000000000000000000Ki", 1024);
	UNIT("0.00000000000000000000000000000000000000000000000001E", 1);
}

static void test_syntax_errors(void **state)
{
	(void)state;
	bad("", QUANTITY_UNIT, "empty");
	bad(NULL, QUANTITY_UNIT, "empty");
	bad("1Kb", QUANTITY_UNIT, "invalid quantity \"1Kb\": unknown suffix \"Kb\"");
	bad("1 Gi", QUANTITY_UNIT, "unknown suffix \" Gi\"");
	bad("Gi", QUANTITY_UNIT, "invalid quantity \"Gi\": expected a number");
	bad("1.2.3", QUANTITY_UNIT, "unknown suffix \".3\"");
	bad("--1", QUANTITY_UNIT, "expected a number");
	bad("+-1", QUANTITY_UNIT, "expected a number");
	bad("-", QUANTITY_UNIT, "expected a number");
	bad(".", QUANTITY_UNIT, "expected a number");
	bad("1e", QUANTITY_UNIT, "exponent \"e\" has no digits");
	bad("1e+", QUANTITY_UNIT, "exponent \"e+\" has no digits");
	bad("1E-", QUANTITY_UNIT, "has no digits");
	bad("1e3x", QUANTITY_UNIT, "invalid exponent \"e3x\"");
	bad("1e3.5", QUANTITY_UNIT, "invalid exponent");
	bad("0x10", QUANTITY_UNIT, "unknown suffix \"x10\"");
	bad(" 1", QUANTITY_UNIT, "expected a number");
	bad("1 ", QUANTITY_UNIT, "unknown suffix \" \"");
	bad("1\n", QUANTITY_UNIT, "unknown suffix \"?\"");
	bad("1m ", QUANTITY_MILLI, "unknown suffix \"m \"");
	bad("1ki", QUANTITY_UNIT, "unknown suffix \"ki\"");
	bad("1K", QUANTITY_UNIT, "unknown suffix \"K\"");
	bad("1Gib", QUANTITY_UNIT, "unknown suffix \"Gib\"");
	bad("1mi", QUANTITY_UNIT, "unknown suffix \"mi\"");
	bad("1Mi3", QUANTITY_UNIT, "unknown suffix");
	bad("abc", QUANTITY_MILLI, "invalid quantity \"abc\"");
	bad("1,5", QUANTITY_UNIT, "unknown suffix \",5\"");
	bad("∞", QUANTITY_UNIT, "expected a number");
}

static void test_overflow(void **state)
{
	(void)state;
	UNIT("9223372036854775807", INT64_MAX);
	UNIT("-9223372036854775808", INT64_MIN);
	UNIT("7Ei", 7 * (INT64_C(1) << 60));
	UNIT("-8Ei", INT64_MIN);
	UNIT("9223372036854775806.5", INT64_MAX); /* rounds up to the max exactly */
	MILLI("9223372036854775.807", INT64_MAX);
	bad("9223372036854775808", QUANTITY_UNIT, "quantity \"9223372036854775808\" is too large");
	bad("9223372036854775807.1", QUANTITY_UNIT, "too large");
	bad("-9223372036854775809", QUANTITY_UNIT, "too large");
	bad("9Ei", QUANTITY_UNIT, "quantity \"9Ei\" is too large");
	bad("8Ei", QUANTITY_UNIT, "too large");
	bad("16Ei", QUANTITY_UNIT, "quantity \"16Ei\" is too large");
	bad("10E", QUANTITY_MILLI, "too large");
	bad("9223372036854775.808", QUANTITY_MILLI, "too large");
	bad("1e19", QUANTITY_UNIT, "too large");
	bad("1e400", QUANTITY_UNIT, "too large");
	bad("1e99999999999999999999999999999", QUANTITY_UNIT, "too large");
	bad("100000000000000000000000000000000000000000", QUANTITY_UNIT, "too large");
	bad("99999999999999999999", QUANTITY_UNIT, "too large");
	bad("8589934592Gi", QUANTITY_UNIT, "too large"); /* 2^63 */
	UNIT("8589934591Gi", 8589934591LL * 1073741824LL);
}

static void test_long_inputs(void **state)
{
	char buf[4096];

	(void)state;
	/* 3000 leading zeros, then 42 */
	memset(buf, '0', 3000);
	memcpy(buf + 3000, "42", 3);
	UNIT(buf, 42);
	/* "0." then 3000 zeros then 1: tiny, rounds up to one */
	memcpy(buf, "0.", 2);
	memset(buf + 2, '0', 3000);
	memcpy(buf + 3002, "1", 2);
	UNIT(buf, 1);
	MILLI(buf, 1);
	/* long error text is shortened in the message */
	memset(buf, 'x', 3000);
	buf[3000] = '\0';
	bad(buf, QUANTITY_UNIT, "...");
}

static const char *fmt(int64_t v, enum quantity_unit unit)
{
	static char out[64];

	return quantity_format(v, unit, out, sizeof(out));
}

static void test_format(void **state)
{
	(void)state;
	assert_string_equal(fmt(0, QUANTITY_UNIT), "0");
	assert_string_equal(fmt(0, QUANTITY_MILLI), "0");
	assert_string_equal(fmt(2000, QUANTITY_MILLI), "2");
	assert_string_equal(fmt(1500, QUANTITY_MILLI), "1500m");
	assert_string_equal(fmt(1, QUANTITY_MILLI), "1m");
	assert_string_equal(fmt(-250, QUANTITY_MILLI), "-250m");
	assert_string_equal(fmt(-3000, QUANTITY_MILLI), "-3");
	assert_string_equal(fmt(1000, QUANTITY_UNIT), "1k");
	assert_string_equal(fmt(1500000, QUANTITY_UNIT), "1500k");
	assert_string_equal(fmt(2000000, QUANTITY_UNIT), "2M");
	assert_string_equal(fmt(1024, QUANTITY_UNIT), "1Ki");
	assert_string_equal(fmt(1024000, QUANTITY_UNIT), "1000Ki");
	assert_string_equal(fmt(1610612736LL, QUANTITY_UNIT), "1536Mi");
	assert_string_equal(fmt(-1610612736LL, QUANTITY_UNIT), "-1536Mi");
	assert_string_equal(fmt(7, QUANTITY_UNIT), "7");
	assert_string_equal(fmt(1023, QUANTITY_UNIT), "1023");
	assert_string_equal(fmt(INT64_C(1) << 60, QUANTITY_UNIT), "1Ei");
	assert_string_equal(fmt(INT64_C(1) << 62, QUANTITY_UNIT), "4Ei");
	assert_string_equal(fmt(1000000000000000000LL, QUANTITY_UNIT), "1E");
	/* multiples of 1024 that read shorter in decimal */
	assert_string_equal(fmt(10000000000LL, QUANTITY_UNIT), "10G");
	assert_string_equal(fmt(1000000000000LL, QUANTITY_UNIT), "1T");
	assert_string_equal(fmt(16331404LL * 1024, QUANTITY_UNIT), "16331404Ki");
	assert_string_equal(fmt(2048000, QUANTITY_UNIT), "2000Ki"); /* tie: binary */
	assert_string_equal(fmt(INT64_MAX, QUANTITY_UNIT), "9223372036854775807");
	assert_string_equal(fmt(INT64_MIN, QUANTITY_UNIT), "-8Ei");
	assert_string_equal(fmt(INT64_MAX, QUANTITY_MILLI), "9223372036854775807m");
	assert_string_equal(fmt(INT64_MIN, QUANTITY_MILLI), "-9223372036854775808m");
	{
		char small[4];

		assert_string_equal(quantity_format(123456, QUANTITY_UNIT, small,
						    sizeof(small)), "123");
	}
}

/* Parse -> format -> parse gives the same value, and the canonical text. */
static void round_trip(const char *text, enum quantity_unit unit, const char *canon)
{
	char out[64];
	int64_t v = ok(text, unit);

	quantity_format(v, unit, out, sizeof(out));
	if (strcmp(out, canon) != 0)
		fail_msg("\"%s\" formats as \"%s\", want \"%s\"", text, out, canon);
	assert_int_equal(ok(out, unit), v);
}

static void test_round_trip(void **state)
{
	static const int64_t edge[] = {
		0, 1, -1, 999, 1000, 1023, 1024, 1025, 1000000, 1048576,
		INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1,
		INT64_C(1) << 62, -(INT64_C(1) << 62), 999999999999999999LL,
	};
	size_t i;

	(void)state;
	round_trip("1.5", QUANTITY_MILLI, "1500m");
	round_trip("2", QUANTITY_MILLI, "2");
	round_trip("0.5", QUANTITY_MILLI, "500m");
	round_trip("1.5Gi", QUANTITY_UNIT, "1536Mi");
	round_trip("2", QUANTITY_UNIT, "2");
	round_trip("1000", QUANTITY_UNIT, "1k");
	round_trip("0", QUANTITY_UNIT, "0");
	round_trip("-1.5Gi", QUANTITY_UNIT, "-1536Mi");
	round_trip("-1.5", QUANTITY_MILLI, "-1500m");
	round_trip("1e3", QUANTITY_UNIT, "1k");
	round_trip("4096Mi", QUANTITY_UNIT, "4Gi");
	for (i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
		char out[64];

		quantity_format(edge[i], QUANTITY_UNIT, out, sizeof(out));
		assert_int_equal(ok(out, QUANTITY_UNIT), edge[i]);
		quantity_format(edge[i], QUANTITY_MILLI, out, sizeof(out));
		assert_int_equal(ok(out, QUANTITY_MILLI), edge[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_numbers),
		cmocka_unit_test(test_suffixes),
		cmocka_unit_test(test_exponents),
		cmocka_unit_test(test_rounding_up),
		cmocka_unit_test(test_syntax_errors),
		cmocka_unit_test(test_overflow),
		cmocka_unit_test(test_long_inputs),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
