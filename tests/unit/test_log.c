/*
 * Tests for log.c: a log line is always one line. Newlines, ANSI escapes,
 * other control characters and bytes that are not UTF-8 in a message (a
 * node name, a reason, a policy's print) are escaped before a sink sees it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "log.h"

struct sink {
	char last[8192];
	int lines;
};

static void capture(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct sink *s = ctx;

	(void)level;
	(void)wall;
	snprintf(s->last, sizeof(s->last), "%s", msg);
	s->lines++;
}

static void test_forged_line_is_escaped(void **state)
{
	struct sink s = { "", 0 };
	struct logger l = { capture, &s, LOG_DEBUG };

	(void)state;
	log_at(&l, LOG_INFO, 0, "cordon %s: %s", "workers-1\n2026-11-30T10:00:00Z info  delete workers-9 done",
	       "\x1b[2J\x1b[31mred\r\x7f\x01");
	assert_int_equal(s.lines, 1);
	assert_null(strchr(s.last, '\n'));
	assert_null(strchr(s.last, '\x1b'));
	assert_string_equal(s.last, "cordon workers-1\\n2026-11-30T10:00:00Z info  delete workers-9 done: "
				    "\\x1b[2J\\x1b[31mred\\r\\x7f\\x01");
}

static void test_utf8_kept_invalid_escaped(void **state)
{
	struct sink s = { "", 0 };
	struct logger l = { capture, &s, LOG_DEBUG };

	(void)state;
	log_at(&l, LOG_WARN, 0, "node %s", "caf\xc3\xa9-\xe2\x82\xac-\xff\xfe-\xc2\x9b" "1m-\xed\xa0\x80");
	/* é and € pass; 0xff 0xfe, the C1 CSI (U+009B) and a surrogate do not */
	assert_string_equal(s.last, "node caf\xc3\xa9-\xe2\x82\xac-\\xff\\xfe-\\xc2\\x9b" "1m-\\xed\\xa0\\x80");
	/* a tab and a backslash stay readable */
	log_at(&l, LOG_WARN, 0, "a\tb\\c");
	assert_string_equal(s.last, "a\\tb\\c");
}

static void test_escape_bounds(void **state)
{
	char out[8];

	(void)state;
	/* stops before an escape that does not fit, always terminated */
	assert_int_equal(log_escape("ab\n\n\n", 5, out, sizeof(out)), 6);
	assert_string_equal(out, "ab\\n\\n");
	assert_int_equal(log_escape("x\0y", 3, out, sizeof(out)), 6);
	assert_string_equal(out, "x\\x00y");
	/* a sequence cut short at the end of the input is not UTF-8 */
	assert_int_equal(log_escape("\xe2\x82", 2, out, sizeof(out)), 4);
	assert_string_equal(out, "\\xe2");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forged_line_is_escaped),
		cmocka_unit_test(test_utf8_kept_invalid_escaped),
		cmocka_unit_test(test_escape_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
