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
#include <cjson/cJSON.h>

#include "buf.h"
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
	struct logger l = { capture, &s, LOG_DEBUG, NULL};

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
	struct logger l = { capture, &s, LOG_DEBUG, NULL};

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

/* A structured sink keeping the last line as the JSON sink writes it. */
struct jsink {
	char *last;
	int lines;
};

static void jcapture(void *ctx, const struct log_record *r)
{
	struct jsink *s = ctx;
	struct buf b = BUF_INIT;

	/* 1764496800123 ms is 2025-11-30T10:00:00.123Z */
	assert_int_equal(log_json_format(&b, r, 1764496800123LL), 0);
	free(s->last);
	s->last = buf_take(&b);
	s->lines++;
}

static cJSON *parse_line(const char *line)
{
	cJSON *j;

	assert_non_null(line);
	assert_null(strchr(line, '\n'));
	j = cJSON_Parse(line);
	assert_non_null(j);
	assert_true(cJSON_IsObject(j));
	return j;
}

static const char *jstr(const cJSON *j, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);

	assert_true(cJSON_IsString(v));
	return v->valuestring;
}

static void test_json_fields(void **state)
{
	struct jsink s = { NULL, 0 };
	struct logger l = { NULL, &s, LOG_INFO, jcapture };
	struct log_field f[] = {
		{"action", "cordon"}, {"node", "workers-1"}, {"group", "workers"},
		{"reason", "underutilized \"12m\""}, {"where", "policy.lua:42"},
		{"empty", ""}, {"unset", NULL}, {"msg", "a field called msg"},
	};
	cJSON *j;

	(void)state;
	log_fields(&l, LOG_WARN, 1764496800, f, sizeof(f) / sizeof(f[0]), "cordon %s: %s", "workers-1",
		   "underutilized");
	log_fields(&l, LOG_DEBUG, 1764496800, f, 1, "below the level: dropped");
	assert_int_equal(s.lines, 1);
	j = parse_line(s.last);
	assert_string_equal(jstr(j, "time"), "2025-11-30T10:00:00.123Z");
	assert_string_equal(jstr(j, "level"), "warn");
	assert_string_equal(jstr(j, "msg"), "cordon workers-1: underutilized");
	assert_string_equal(jstr(j, "action"), "cordon");
	assert_string_equal(jstr(j, "node"), "workers-1");
	assert_string_equal(jstr(j, "group"), "workers");
	assert_string_equal(jstr(j, "reason"), "underutilized \"12m\"");
	assert_string_equal(jstr(j, "where"), "policy.lua:42");
	assert_string_equal(jstr(j, "field.msg"), "a field called msg");
	assert_null(cJSON_GetObjectItemCaseSensitive(j, "empty"));
	assert_null(cJSON_GetObjectItemCaseSensitive(j, "unset"));
	cJSON_Delete(j);
	/* a line stamped by another clock (virtual time) gets .000 */
	log_at(&l, LOG_INFO, 1000, "virtual");
	j = parse_line(s.last);
	assert_string_equal(jstr(j, "time"), "1970-01-01T00:16:40.000Z");
	cJSON_Delete(j);
	free(s.last);
}

static void test_json_any_byte(void **state)
{
	struct jsink s = { NULL, 0 };
	struct logger l = { NULL, &s, LOG_DEBUG, jcapture };
	struct log_field f[] = { {"node", "n\x01\xff\n"} };
	cJSON *j;

	(void)state;
	/* control characters, a quote, a backslash, DEL, an ESC sequence,
	 * invalid UTF-8 and valid UTF-8 */
	log_fields(&l, LOG_INFO, 0, f, 1, "a\"b\\c\n\r\t\x1b[2J\x7f caf\xc3\xa9 \xff\xfe \xed\xa0\x80 end");
	j = parse_line(s.last);
	assert_string_equal(jstr(j, "msg"),
			    "a\"b\\c\n\r\t\x1b[2J\x7f caf\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd "
			    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd end");
	assert_string_equal(jstr(j, "node"), "n\x01\xef\xbf\xbd\n");
	/* the raw line itself holds no control byte */
	for (const char *p = s.last; *p; p++)
		assert_true((unsigned char)*p >= 0x20 && *p != 0x7f);
	cJSON_Delete(j);
	free(s.last);
}

static void test_long_message_kept(void **state)
{
	char big[5000];
	struct sink ts = { "", 0 };
	struct logger text = { capture, &ts, LOG_DEBUG, NULL };
	struct jsink js = { NULL, 0 };
	struct logger json = { NULL, &js, LOG_DEBUG, jcapture };
	cJSON *j;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(big) - 1; i++)
		big[i] = (char)('a' + i % 26);
	big[sizeof(big) - 1] = '\0';
	log_at(&text, LOG_INFO, 0, "start %s end", big);
	assert_int_equal(strlen(ts.last), strlen(big) + 10);
	assert_memory_equal(ts.last + 6, big, strlen(big));
	assert_string_equal(ts.last + 6 + strlen(big), " end");
	log_at(&json, LOG_INFO, 0, "start %s end", big);
	j = parse_line(js.last);
	assert_int_equal(strlen(jstr(j, "msg")), strlen(big) + 10);
	assert_string_equal(jstr(j, "msg") + 6 + strlen(big), " end");
	cJSON_Delete(j);
	free(js.last);
}

static void test_format_parse(void **state)
{
	enum log_format f = LOG_FORMAT_TEXT;

	(void)state;
	assert_int_equal(log_format_parse("json", &f), 0);
	assert_int_equal(f, LOG_FORMAT_JSON);
	assert_int_equal(log_format_parse("text", &f), 0);
	assert_int_equal(f, LOG_FORMAT_TEXT);
	assert_int_equal(log_format_parse("JSON", &f), -1);
	assert_int_equal(log_format_parse(NULL, &f), -1);
}

static void test_json_sink_writes_lines(void **state)
{
	char *data = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&data, &len);
	struct logger l = log_json(LOG_INFO, f);
	struct log_field fld[] = { {"group", "workers"} };
	cJSON *j;
	char *nl, *data2;

	(void)state;
	assert_non_null(f);
	log_fields(&l, LOG_INFO, 1764496800, fld, 1, "scale_up workers +2");
	log_at(&l, LOG_ERROR, 1764496800, "second");
	fclose(f);
	nl = strchr(data, '\n');
	assert_non_null(nl);
	*nl = '\0';
	j = parse_line(data);
	assert_string_equal(jstr(j, "group"), "workers");
	assert_string_equal(jstr(j, "level"), "info");
	cJSON_Delete(j);
	data2 = nl + 1;
	nl = strchr(data2, '\n');
	assert_non_null(nl);
	assert_string_equal(nl, "\n"); /* two lines, each ended */
	*nl = '\0';
	j = parse_line(data2);
	assert_string_equal(jstr(j, "msg"), "second");
	assert_string_equal(jstr(j, "level"), "error");
	cJSON_Delete(j);
	free(data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forged_line_is_escaped),
		cmocka_unit_test(test_utf8_kept_invalid_escaped),
		cmocka_unit_test(test_escape_bounds),
		cmocka_unit_test(test_json_fields),
		cmocka_unit_test(test_json_any_byte),
		cmocka_unit_test(test_long_message_kept),
		cmocka_unit_test(test_format_parse),
		cmocka_unit_test(test_json_sink_writes_lines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
