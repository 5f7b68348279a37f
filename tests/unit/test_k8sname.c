/*
 * Tests for k8sname.c: the Kubernetes rules for qualified names (label,
 * annotation and taint keys), label values, DNS-1123 subdomains and labels,
 * at their length limits and at the edges of their character sets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "k8sname.h"

/* 'n' copies of 'c' followed by 'tail', in 'buf'. */
static const char *repeat(char *buf, size_t buflen, char c, size_t n, const char *tail)
{
	assert_true(n + strlen(tail) < buflen);
	memset(buf, c, n);
	snprintf(buf + n, buflen - n, "%s", tail);
	return buf;
}

static bool key_ok(const char *key)
{
	return k8sname_valid_qualified_name(key, NULL, 0);
}

/* The reason a key is refused; fails the test when it is accepted. */
static const char *key_why(const char *key)
{
	static char why[256];

	why[0] = '\0';
	if (k8sname_valid_qualified_name(key, why, sizeof(why)))
		fail_msg("key \"%s\" was accepted", key);
	assert_true(why[0] != '\0');
	return why;
}

static void test_qualified_name_without_prefix(void **state)
{
	char buf[128];

	(void)state;
	assert_true(key_ok("app"));
	assert_true(key_ok("a"));
	assert_true(key_ok("9"));
	assert_true(key_ok("a_b.c-d"));
	assert_true(key_ok("App.Name_2")); /* the name part may have capitals */
	assert_false(key_ok(""));
	assert_false(key_ok("-x"));
	assert_false(key_ok("x-"));
	assert_false(key_ok("_x"));
	assert_false(key_ok(".x"));
	assert_false(key_ok("x."));
	assert_false(key_ok("bad key"));
	assert_false(key_ok("a:b"));
	assert_false(key_ok("caf\xc3\xa9"));
	assert_true(key_ok(repeat(buf, sizeof(buf), 'a', 63, "")));
	assert_false(key_ok(repeat(buf, sizeof(buf), 'a', 64, "")));
	assert_non_null(strstr(key_why(repeat(buf, sizeof(buf), 'a', 64, "")), "1-63"));
	assert_non_null(strstr(key_why("-x"), "start and end"));
	assert_non_null(strstr(key_why("a b"), "may only contain"));
}

static void test_qualified_name_prefix(void **state)
{
	(void)state;
	assert_true(key_ok("hub.jupyter.org/node-purpose"));
	assert_true(key_ok("kubernetes.io/arch"));
	assert_true(key_ok("example.com/Name"));
	assert_true(key_ok("a/b"));
	assert_true(key_ok("1-2.x-y/z"));
	assert_false(key_ok("/x"));        /* empty prefix */
	assert_false(key_ok("x/"));        /* empty name */
	assert_false(key_ok("a/b/c"));     /* two slashes */
	assert_false(key_ok("Example.com/x")); /* prefix is lowercase only */
	assert_false(key_ok("exAmple.com/x"));
	assert_false(key_ok("example_com/x"));
	assert_false(key_ok("-example.com/x"));
	assert_false(key_ok("example.com-/x"));
	assert_false(key_ok(".example.com/x"));
	assert_false(key_ok("example.com./x"));
	assert_false(key_ok("example..com/x")); /* an empty DNS label */
	assert_false(key_ok("example.-com/x")); /* a DNS label starting with '-' */
	assert_false(key_ok("example-.com/x")); /* a DNS label ending with '-' */
	assert_false(key_ok("example.com/-x"));
	assert_non_null(strstr(key_why("/x"), "1-253"));
	assert_non_null(strstr(key_why("Example.com/x"), "DNS subdomain"));
	assert_non_null(strstr(key_why("a/b/c"), "one '/'"));
	assert_non_null(strstr(key_why("x/"), "1-63"));
}

static void test_qualified_name_prefix_length(void **state)
{
	char buf[512];
	char label63[64];
	int i;

	(void)state;
	/* 253 = 63+1+63+1+63+1+61: four DNS labels */
	repeat(label63, sizeof(label63), 'a', 63, "");
	snprintf(buf, sizeof(buf), "%s.%s.%s.%.61s/name", label63, label63, label63, label63);
	assert_int_equal(strchr(buf, '/') - buf, 253);
	assert_true(key_ok(buf));
	snprintf(buf, sizeof(buf), "%s.%s.%s.%.62s/name", label63, label63, label63, label63);
	assert_int_equal(strchr(buf, '/') - buf, 254);
	assert_false(key_ok(buf));
	assert_non_null(strstr(key_why(buf), "1-253"));
	/* name part limit applies after a prefix too */
	i = snprintf(buf, sizeof(buf), "example.com/");
	repeat(buf + i, sizeof(buf) - (size_t)i, 'n', 63, "");
	assert_true(key_ok(buf));
	repeat(buf + i, sizeof(buf) - (size_t)i, 'n', 64, "");
	assert_false(key_ok(buf));
}

static void test_why_is_optional_and_bounded(void **state)
{
	char why[8];

	(void)state;
	assert_false(k8sname_valid_qualified_name("-x", NULL, 0));
	assert_false(k8sname_valid_qualified_name("-x", why, 0));
	memset(why, 'z', sizeof(why));
	assert_false(k8sname_valid_qualified_name("-x", why, sizeof(why)));
	assert_int_equal(strlen(why), sizeof(why) - 1); /* cut short, terminated */
}

static void test_label_value(void **state)
{
	char buf[128];

	(void)state;
	assert_true(k8sname_valid_label_value(""));
	assert_true(k8sname_valid_label_value("x"));
	assert_true(k8sname_valid_label_value("v1.2_3-Beta"));
	assert_false(k8sname_valid_label_value("a b"));
	assert_false(k8sname_valid_label_value("-a"));
	assert_false(k8sname_valid_label_value("a-"));
	assert_false(k8sname_valid_label_value("a."));
	assert_false(k8sname_valid_label_value("_a"));
	assert_false(k8sname_valid_label_value("a/b"));
	assert_false(k8sname_valid_label_value("b$"));
	assert_true(k8sname_valid_label_value(repeat(buf, sizeof(buf), 'v', 63, "")));
	assert_false(k8sname_valid_label_value(repeat(buf, sizeof(buf), 'v', 64, "")));
}

static void test_dns_subdomain(void **state)
{
	char buf[300];

	(void)state;
	assert_true(k8sname_valid_dns_subdomain("a"));
	assert_true(k8sname_valid_dns_subdomain("example.com"));
	assert_true(k8sname_valid_dns_subdomain("a--b.c0"));
	assert_true(k8sname_valid_dns_subdomain("0.1.2"));
	assert_false(k8sname_valid_dns_subdomain(""));
	assert_false(k8sname_valid_dns_subdomain("Example.com"));
	assert_false(k8sname_valid_dns_subdomain("a_b"));
	assert_false(k8sname_valid_dns_subdomain("a..b"));
	assert_false(k8sname_valid_dns_subdomain(".a"));
	assert_false(k8sname_valid_dns_subdomain("a."));
	assert_false(k8sname_valid_dns_subdomain("-a"));
	assert_false(k8sname_valid_dns_subdomain("a-"));
	assert_false(k8sname_valid_dns_subdomain("a.-b"));
	assert_false(k8sname_valid_dns_subdomain("a-.b"));
	assert_false(k8sname_valid_dns_subdomain("a/b"));
	/* the 253 limit is on the whole name: one long label is allowed */
	assert_true(k8sname_valid_dns_subdomain(repeat(buf, sizeof(buf), 'a', 253, "")));
	assert_false(k8sname_valid_dns_subdomain(repeat(buf, sizeof(buf), 'a', 254, "")));
}

static void test_dns_label(void **state)
{
	char buf[128];

	(void)state;
	assert_true(k8sname_valid_dns_label("a"));
	assert_true(k8sname_valid_dns_label("my-node-1"));
	assert_true(k8sname_valid_dns_label("0a"));
	assert_false(k8sname_valid_dns_label(""));
	assert_false(k8sname_valid_dns_label("a.b"));
	assert_false(k8sname_valid_dns_label("My-node"));
	assert_false(k8sname_valid_dns_label("a_b"));
	assert_false(k8sname_valid_dns_label("-a"));
	assert_false(k8sname_valid_dns_label("a-"));
	assert_true(k8sname_valid_dns_label(repeat(buf, sizeof(buf), 'a', 63, "")));
	assert_false(k8sname_valid_dns_label(repeat(buf, sizeof(buf), 'a', 64, "")));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_qualified_name_without_prefix),
		cmocka_unit_test(test_qualified_name_prefix),
		cmocka_unit_test(test_qualified_name_prefix_length),
		cmocka_unit_test(test_why_is_optional_and_bounded),
		cmocka_unit_test(test_label_value),
		cmocka_unit_test(test_dns_subdomain),
		cmocka_unit_test(test_dns_label),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
