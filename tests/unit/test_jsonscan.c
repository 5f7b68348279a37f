/*
 * Tests for jsonscan.c: items and kind come out the same whatever the
 * chunking of the input, offsets are absolute, single-object documents
 * are kept whole, and a callback error stops the scan. In parse mode each
 * item's tree is what cJSON makes of its text, and errors name the item.
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
#include "jsonscan.h"

#ifndef TEST_DATA_DIR
#define TEST_DATA_DIR "tests/data"
#endif

#define MAX_ITEMS 64

/* What the callback saw. */
struct seen {
	size_t n;
	struct buf text[MAX_ITEMS];
	uint64_t offset[MAX_ITEMS];
	int fail_at; /* index whose callback fails, -1 for none */
};

static int record(void *ctx, const char *data, size_t len, size_t index,
		  uint64_t offset, struct errbuf *err)
{
	struct seen *s = ctx;

	assert_int_equal(index, s->n);
	assert_true(s->n < MAX_ITEMS);
	if ((int)index == s->fail_at)
		return errbuf_set(err, "item %zu refused", index);
	buf_append(&s->text[s->n], data, len);
	s->offset[s->n++] = offset;
	return 0;
}

static void seen_free(struct seen *s)
{
	size_t i;

	for (i = 0; i < MAX_ITEMS; i++)
		buf_free(&s->text[i]);
}

/* Scans 'doc' fed in chunks of 'chunk' bytes; returns the scan result. */
static int scan(const char *doc, size_t len, size_t chunk, bool keep_whole,
		struct seen *s, struct jsonscan **out, struct errbuf *err)
{
	struct jsonscan *sc = jsonscan_new(record, s, keep_whole);
	size_t off;

	assert_non_null(sc);
	*out = sc;
	for (off = 0; off < len; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk;

		if (jsonscan_feed(sc, doc + off, n, err) < 0)
			return -1;
	}
	return jsonscan_end(sc, err);
}

static char *read_data(const char *name, size_t *len)
{
	char path[512];
	FILE *f;
	char *data;
	long n;

	snprintf(path, sizeof(path), "%s/%s", TEST_DATA_DIR, name);
	f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	data = malloc((size_t)n + 1);
	assert_non_null(data);
	assert_int_equal(fread(data, 1, (size_t)n, f), (size_t)n);
	data[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return data;
}

static void test_chunking_does_not_matter(void **state)
{
	static const size_t chunks[] = {1, 2, 3, 7, 64, 1000, 4096};
	size_t len, i, k;
	char *doc = read_data("cluster-small.json", &len);
	struct seen whole = {.fail_at = -1};
	struct jsonscan *sc;
	struct errbuf err;

	(void)state;
	assert_int_equal(scan(doc, len, len, false, &whole, &sc, &err), 0);
	assert_true(jsonscan_is_list(sc));
	assert_string_equal(jsonscan_kind(sc), "List");
	jsonscan_free(sc);
	assert_int_equal(whole.n, 4 + 17 + 2);
	for (i = 0; i < whole.n; i++) {
		/* the span is exactly one object at its offset */
		assert_int_equal(whole.text[i].data[0], '{');
		assert_int_equal(whole.text[i].data[whole.text[i].len - 1], '}');
		assert_memory_equal(doc + whole.offset[i], whole.text[i].data,
				    whole.text[i].len);
	}
	for (k = 0; k < sizeof(chunks) / sizeof(chunks[0]); k++) {
		struct seen s = {.fail_at = -1};

		if (scan(doc, len, chunks[k], true, &s, &sc, &err) != 0)
			fail_msg("chunk %zu: %s", chunks[k], err.msg);
		assert_string_equal(jsonscan_kind(sc), "List");
		assert_null(jsonscan_whole(sc, &i)); /* a list is not kept */
		jsonscan_free(sc);
		assert_int_equal(s.n, whole.n);
		for (i = 0; i < s.n; i++) {
			assert_int_equal(s.offset[i], whole.offset[i]);
			assert_int_equal(s.text[i].len, whole.text[i].len);
			assert_memory_equal(s.text[i].data, whole.text[i].data,
					    s.text[i].len);
		}
		seen_free(&s);
	}
	seen_free(&whole);
	free(doc);
}

static void test_scalar_and_string_items(void **state)
{
	static const char doc[] = "{\"items\" : [ 12 , \"a]\\\"b\" ,-3e5,null,[1,[2]],{} ] ,\"kind\":\"X\\\"\"}";
	static const char *const want[] = {"12", "\"a]\\\"b\"", "-3e5", "null", "[1,[2]]", "{}"};
	size_t chunk, i;

	(void)state;
	for (chunk = 1; chunk <= sizeof(doc); chunk++) {
		struct seen s = {.fail_at = -1};
		struct jsonscan *sc;
		struct errbuf err;

		if (scan(doc, sizeof(doc) - 1, chunk, false, &s, &sc, &err) != 0)
			fail_msg("chunk %zu: %s", chunk, err.msg);
		assert_int_equal(s.n, 6);
		for (i = 0; i < s.n; i++) {
			assert_int_equal(s.text[i].len, strlen(want[i]));
			assert_memory_equal(s.text[i].data, want[i], strlen(want[i]));
			assert_memory_equal(doc + s.offset[i], want[i], strlen(want[i]));
		}
		assert_string_equal(jsonscan_kind(sc), "X\\\""); /* raw, escapes kept */
		jsonscan_free(sc);
		seen_free(&s);
	}
}

static void test_single_object_kept(void **state)
{
	static const char doc[] = " {\"kind\":\"Pod\",\"metadata\":{\"items\":[1]},\"spec\":{}}\n";
	struct seen s = {.fail_at = -1};
	struct jsonscan *sc;
	struct errbuf err;
	const char *whole;
	size_t len;

	(void)state;
	assert_int_equal(scan(doc, sizeof(doc) - 1, 5, true, &s, &sc, &err), 0);
	assert_false(jsonscan_is_list(sc));
	assert_int_equal(s.n, 0); /* nested "items" are not the list's */
	whole = jsonscan_whole(sc, &len);
	assert_non_null(whole);
	assert_int_equal(len, sizeof(doc) - 1);
	assert_string_equal(whole, doc);
	assert_string_equal(jsonscan_kind(sc), "Pod");
	jsonscan_free(sc);

	/* without keep_whole there is nothing to give back */
	assert_int_equal(scan(doc, sizeof(doc) - 1, 5, false, &s, &sc, &err), 0);
	assert_null(jsonscan_whole(sc, &len));
	jsonscan_free(sc);
	seen_free(&s);
}

static void test_callback_error_stops(void **state)
{
	static const char doc[] = "{\"items\":[{},{},{}]}";
	struct seen s = {.fail_at = 1};
	struct jsonscan *sc;
	struct errbuf err;

	(void)state;
	assert_int_equal(scan(doc, sizeof(doc) - 1, 3, false, &s, &sc, &err), -1);
	assert_string_equal(err.msg, "item 1 refused");
	assert_int_equal(s.n, 1);
	assert_int_equal(jsonscan_feed(sc, "x", 1, &err), -1);
	assert_string_equal(err.msg, "scanner used after an error");
	assert_int_equal(jsonscan_end(sc, &err), -1);
	jsonscan_free(sc);
	seen_free(&s);
	jsonscan_free(NULL);
}

static void test_deep_nesting(void **state)
{
	struct buf b = BUF_INIT;
	struct seen s = {.fail_at = -1};
	struct jsonscan *sc;
	struct errbuf err;
	int i;

	(void)state;
	buf_puts(&b, "{\"metadata\":");
	for (i = 0; i < 2000; i++)
		buf_puts(&b, "[");
	assert_int_equal(scan(b.data, b.len, 100, false, &s, &sc, &err), -1);
	assert_non_null(strstr(err.msg, "nesting too deep"));
	jsonscan_free(sc);
	buf_free(&b);
	seen_free(&s);
}

/* Like scan(), with the caps set first. */
static int scan_capped(const char *doc, size_t len, size_t chunk, bool keep_whole,
		       size_t max_item, uint64_t max_total, struct seen *s,
		       struct errbuf *err)
{
	struct jsonscan *sc = jsonscan_new(record, s, keep_whole);
	size_t off;
	int rc = 0;

	assert_non_null(sc);
	jsonscan_set_limits(sc, max_item, max_total);
	for (off = 0; off < len && rc == 0; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk;

		rc = jsonscan_feed(sc, doc + off, n, err);
	}
	if (rc == 0)
		rc = jsonscan_end(sc, err);
	jsonscan_free(sc);
	return rc;
}

/* One item past the cap is refused by index, whether it comes in one
 * chunk or spread over many; the items before it were delivered. */
static void test_item_cap(void **state)
{
	static const char doc[] = "{\"kind\":\"List\",\"items\":[{\"a\":1},"
				  "{\"metadata\":{\"name\":\"big\",\"x\":\"0123456789012345678901234567890123456789\"}},{}]}";
	static const size_t chunks[] = { 1, 7, 4096 };
	size_t i;

	(void)state;
	assert_int_equal(JSONSCAN_MAX_ITEM, (size_t)64 << 20); /* the informer's cap */
	for (i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		struct seen s = {.fail_at = -1};
		struct errbuf err;

		assert_int_equal(scan_capped(doc, sizeof(doc) - 1, chunks[i], false, 40, 0, &s, &err), -1);
		assert_string_equal(err.msg, "items[1] (at byte 32): larger than 40 bytes, the most one object may be");
		assert_int_equal(s.n, 1);
		seen_free(&s);
	}
	/* at the cap is fine */
	{
		struct seen s = {.fail_at = -1};
		struct errbuf err;

		assert_int_equal(scan_capped(doc, sizeof(doc) - 1, 5, false, 80, 0, &s, &err), 0);
		assert_int_equal(s.n, 3);
		seen_free(&s);
	}
}

static void test_whole_and_total_caps(void **state)
{
	static const char one[] = "{\"kind\":\"Node\",\"metadata\":{\"name\":\"0123456789012345678901234567890123456789\"}}";
	static const char list[] = "{\"items\":[{},{},{},{},{},{},{},{},{},{},{},{},{},{}]}";
	struct seen s = {.fail_at = -1};
	struct errbuf err;

	(void)state;
	/* a single object kept whole is an object: the same cap */
	assert_int_equal(scan_capped(one, sizeof(one) - 1, 16, true, 32, 0, &s, &err), -1);
	assert_string_equal(err.msg, "larger than 32 bytes before any \"items\" array: a single object may be at most that");
	seen_free(&s);
	memset(&s, 0, sizeof(s));
	s.fail_at = -1;
	assert_int_equal(scan_capped(list, sizeof(list) - 1, 8, false, 0, 40, &s, &err), -1);
	assert_string_equal(err.msg, "larger than 40 bytes in all, the most one state document may be");
	seen_free(&s);
}

/* cJSON would decode \u0000 and every C string would end there:
 * "workers-1\u0000evil" would act on workers-1. */
static void test_nul_escape_refused(void **state)
{
	static const char item[] = "{\"items\":[{},{\"metadata\":{\"name\":\"workers-1\\u0000evil\"}}]}";
	static const char whole[] = "{\"kind\":\"Node\",\"metadata\":{\"labels\":{\"a\\u0000b\":\"x\"}}}";
	static const char fine[] = "{\"items\":[{\"n\":\"a\\\\u0000\",\"m\":\"\\u0001\",\"o\":\"\\u0100\",\"p\":\"\\\"\\u0041\"}]}";
	static const size_t chunks[] = { 1, 3, 4096 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		struct seen s = {.fail_at = -1};
		struct errbuf err;

		assert_int_equal(scan_capped(item, sizeof(item) - 1, chunks[i], false, 0, 0, &s, &err), -1);
		assert_string_equal(err.msg, "items[1] (at byte 43): a string holds \\u0000 (NUL), which no "
				    "name, label or key can hold: cut at it, it would name another object");
		seen_free(&s);
		memset(&s, 0, sizeof(s));
		s.fail_at = -1;
		assert_int_equal(scan_capped(whole, sizeof(whole) - 1, chunks[i], true, 0, 0, &s, &err), -1);
		assert_non_null(strstr(err.msg, "at byte 39: a string holds \\u0000 (NUL)"));
		seen_free(&s);
		memset(&s, 0, sizeof(s));
		s.fail_at = -1;
		/* an escaped backslash before "u0000", and other \u escapes, are not NUL */
		if (scan_capped(fine, sizeof(fine) - 1, chunks[i], false, 0, 0, &s, &err))
			fail_msg("%s", err.msg);
		seen_free(&s);
	}
}

/* ---- parse mode ---- */

/* What the parse-mode callback saw: each item's tree printed, and text. */
struct parsed {
	struct jsonscan *sc;
	size_t n;
	struct buf printed[MAX_ITEMS];
	struct buf text[MAX_ITEMS];
	uint64_t offset[MAX_ITEMS];
};

static int record_tree(void *ctx, const char *data, size_t len, size_t index,
		       uint64_t offset, struct errbuf *err)
{
	struct parsed *s = ctx;
	const cJSON *t = jsonscan_item_tree(s->sc);
	char *p;

	(void)err;
	assert_int_equal(index, s->n);
	assert_true(s->n < MAX_ITEMS);
	assert_non_null(t);
	p = cJSON_PrintUnformatted(t);
	assert_non_null(p);
	buf_puts(&s->printed[s->n], p);
	free(p);
	buf_append(&s->text[s->n], data, len);
	s->offset[s->n++] = offset;
	return 0;
}

static void parsed_free(struct parsed *s)
{
	size_t i;

	for (i = 0; i < MAX_ITEMS; i++) {
		buf_free(&s->printed[i]);
		buf_free(&s->text[i]);
	}
}

/* Scans 'doc' in parse mode, 'chunk' bytes at a time. */
static int scan_parsed(const char *doc, size_t len, size_t chunk, size_t max_item,
		       struct parsed *s, struct errbuf *err)
{
	size_t off;
	int rc = 0;

	memset(s, 0, sizeof(*s));
	s->sc = jsonscan_new(record_tree, s, false);
	assert_non_null(s->sc);
	jsonscan_set_parse(s->sc, true);
	jsonscan_set_limits(s->sc, max_item, 0);
	for (off = 0; off < len && rc == 0; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk;

		rc = jsonscan_feed(s->sc, doc + off, n, err);
	}
	if (rc == 0)
		rc = jsonscan_end(s->sc, err);
	assert_null(jsonscan_item_tree(s->sc)); /* only during a callback */
	jsonscan_free(s->sc);
	s->sc = NULL;
	return rc;
}

/* Each item's tree is what cJSON makes of its text, whatever the chunking;
 * the text and offsets are those plain mode gives. */
static void check_parsed_like_cjson(const char *doc, size_t len, size_t n_items)
{
	static const size_t chunks[] = {1, 2, 3, 7, 64, 1000, 4096, 1 << 20};
	struct seen plain = {.fail_at = -1};
	struct jsonscan *sc;
	struct errbuf err;
	size_t k, i;

	assert_int_equal(scan(doc, len, len, false, &plain, &sc, &err), 0);
	jsonscan_free(sc);
	assert_int_equal(plain.n, n_items);
	for (k = 0; k < sizeof(chunks) / sizeof(chunks[0]); k++) {
		struct parsed s;

		if (scan_parsed(doc, len, chunks[k], 0, &s, &err) != 0)
			fail_msg("chunk %zu: %s", chunks[k], err.msg);
		assert_int_equal(s.n, n_items);
		for (i = 0; i < s.n; i++) {
			cJSON *want = cJSON_ParseWithLength(plain.text[i].data, plain.text[i].len);
			char *w;

			assert_non_null(want);
			w = cJSON_PrintUnformatted(want);
			assert_string_equal(s.printed[i].data, w);
			free(w);
			cJSON_Delete(want);
			assert_int_equal(s.offset[i], plain.offset[i]);
			assert_int_equal(s.text[i].len, plain.text[i].len);
			assert_memory_equal(s.text[i].data, plain.text[i].data, s.text[i].len);
		}
		parsed_free(&s);
	}
	seen_free(&plain);
}

static void test_parse_mode_like_cjson(void **state)
{
	static const char doc[] =
		"{\"kind\": \"List\", \"items\": [\n"
		"    {\"a\": \"\\\"q\\\\ \\/ \\b\\f\\n\\r\\t \\u00e9 \\u20ac \\ud83d\\ude00\", \"b\": [1, -2, 3.25, 1e3, -0.5E-2, 12345678901234567890,"
		" 2147483648, -2147483649, 0], \"c\": {\"d\": [true, false, null, {}, []]}, \"\": \"\", \"dup\": 1, \"dup\": 2},\n"
		"    12,\n    \"str]}\",\n    [[[]]],\n    {\"raw\": \"w\xff\xfe-\xc3\"}\n]}\n";
	size_t len;
	char *cluster = read_data("cluster-small.json", &len);

	(void)state;
	check_parsed_like_cjson(doc, sizeof(doc) - 1, 5);
	check_parsed_like_cjson(cluster, len, 4 + 17 + 2);
	free(cluster);
}

/* A string far longer than a chunk, and an item far longer than one. */
static void test_parse_mode_large_item(void **state)
{
	struct buf doc = BUF_INIT;
	struct parsed s;
	struct errbuf err;
	size_t i;

	(void)state;
	buf_puts(&doc, "{\"items\":[{\"s\":\"");
	for (i = 0; i < 300000; i++)
		buf_puts(&doc, i % 1000 == 0 ? "\\n" : "x");
	buf_puts(&doc, "\",\"n\":[");
	for (i = 0; i < 20000; i++)
		buf_printf(&doc, "%s%zu", i ? "," : "", i);
	buf_puts(&doc, "]},{}]}");
	assert_int_equal(doc.oom, 0);
	check_parsed_like_cjson(doc.data, doc.len, 2);
	/* past the item cap: refused by index, in one chunk or many */
	assert_int_equal(scan_parsed(doc.data, doc.len, 4096, 100000, &s, &err), -1);
	assert_string_equal(err.msg, "items[0] (at byte 10): larger than 100000 bytes, the most one object may be");
	parsed_free(&s);
	assert_int_equal(scan_parsed(doc.data, doc.len, doc.len, 100000, &s, &err), -1);
	assert_non_null(strstr(err.msg, "items[0] (at byte 10): larger than 100000 bytes"));
	parsed_free(&s);
	buf_free(&doc);
}

/* Errors name the item and the byte, whatever the chunking. */
static void test_parse_mode_errors(void **state)
{
	static const struct {
		const char *doc, *msg;
	} cases[] = {
		{"{\"items\":[{\"a\":tru}]}", "items[0]: invalid JSON at byte 15: expected a value"},
		{"{\"items\":[{},{\"a\":\"\\x\"}]}", "items[1]: invalid JSON at byte 19: invalid escape"},
		{"{\"items\":[{\"a\":\"\\u12g4\"}]}", "items[0]: invalid JSON at byte 16: invalid \\u escape"},
		{"{\"items\":[{\"a\":\"\\udc00\"}]}", "items[0]: invalid JSON at byte 16: a \\u escape holds a lone low surrogate"},
		{"{\"items\":[{\"a\":\"\\ud800x\"}]}", "items[0]: invalid JSON at byte 16: a \\u escape holds a high surrogate without its low half"},
		{"{\"items\":[{\"a\":\"\\u0000\"}]}", "items[0] (at byte 16): a string holds \\u0000 (NUL)"},
		{"{\"items\":[{\"a\":\"x\ty\"}]}", "invalid JSON at byte 17: control character in a string, found 0x09"},
		{"{\"items\":[{]}", "invalid JSON at byte 11: expected '}', found ']'"},
		{"{\"items\":[[1}]}", "invalid JSON at byte 12: expected ']', found '}'"},
		{"{\"items\":[{\"a\":1]}", "invalid JSON at byte 16: expected '}', found ']'"},
		{"{\"items\":[{\"a\" 1}]}", "items[0]: invalid JSON at byte 15: expected ':'"},
		{"{\"items\":[{\"a\":1,}]}", "items[0]: invalid JSON at byte 17: expected a key"},
		{"{\"items\":[[1,]]}", "items[0]: invalid JSON at byte 13: expected a value"},
		{"{\"items\":[{\"a\":1 \"b\":2}]}", "items[0]: invalid JSON at byte 17: expected ',' or '}'"},
		{"{\"items\":[{\"a\":1.2.3}]}", "items[0]: invalid JSON at byte 18: invalid number"},
		{"{\"items\":[{\"a\":-}]}", "items[0]: invalid JSON at byte 15: invalid number"},
		{"{\"items\":[x]}", "items[0]: invalid JSON at byte 10: expected a value"},
		{"{\"items\":[}]}", "invalid JSON at byte 10: expected an item, found '}'"},
		{"{\"items\":[{} {}]}", "invalid JSON at byte 13: expected ',' or ']' after an item"},
		{"{\"items\":[{\"a\":\"b", "unexpected end of input at byte 17 (truncated inside items[0])"},
		{"{\"items\":[{},{\"a\":[1,2", "unexpected end of input at byte 22 (truncated inside items[1])"},
		{"{\"items\":[{\"a\":1}", "unexpected end of input at byte 17 (truncated inside items[1])"},
	};
	static const size_t chunks[] = {1, 2, 5, 4096};
	size_t i, k;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (k = 0; k < sizeof(chunks) / sizeof(chunks[0]); k++) {
			struct parsed s;
			struct errbuf err = {{0}};

			if (scan_parsed(cases[i].doc, strlen(cases[i].doc), chunks[k], 0, &s, &err) != -1)
				fail_msg("accepted: %s", cases[i].doc);
			if (!strstr(err.msg, cases[i].msg))
				fail_msg("%s (chunk %zu): \"%s\", want \"%s\"", cases[i].doc, chunks[k],
					 err.msg, cases[i].msg);
			parsed_free(&s);
		}
	}
}

/* Nesting: 1000 levels in an item parse (cJSON's limit), 1001 do not, and
 * a hostile depth far past that is refused without exhausting the stack. */
static void test_parse_mode_depth(void **state)
{
	static const size_t depths[] = {1000, 1001, 200000};
	size_t d, i;

	(void)state;
	for (d = 0; d < sizeof(depths) / sizeof(depths[0]); d++) {
		struct buf doc = BUF_INIT;
		struct parsed s;
		struct errbuf err;
		int rc;

		buf_puts(&doc, "{\"items\":[");
		for (i = 0; i < depths[d]; i++)
			buf_puts(&doc, "[");
		for (i = 0; i < depths[d]; i++)
			buf_puts(&doc, "]");
		buf_puts(&doc, "]}");
		rc = scan_parsed(doc.data, doc.len, 4096, 0, &s, &err);
		if (depths[d] <= 1000) {
			if (rc)
				fail_msg("depth %zu: %s", depths[d], err.msg);
			assert_int_equal(s.n, 1);
		} else {
			assert_int_equal(rc, -1);
			assert_string_equal(err.msg, "items[0]: invalid JSON at byte 1010: nesting too deep");
		}
		parsed_free(&s);
		buf_free(&doc);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chunking_does_not_matter),
		cmocka_unit_test(test_scalar_and_string_items),
		cmocka_unit_test(test_single_object_kept),
		cmocka_unit_test(test_callback_error_stops),
		cmocka_unit_test(test_deep_nesting),
		cmocka_unit_test(test_item_cap),
		cmocka_unit_test(test_whole_and_total_caps),
		cmocka_unit_test(test_nul_escape_refused),
		cmocka_unit_test(test_parse_mode_like_cjson),
		cmocka_unit_test(test_parse_mode_large_item),
		cmocka_unit_test(test_parse_mode_errors),
		cmocka_unit_test(test_parse_mode_depth),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
