/*
 * Tests for jsonscan.c: items and kind come out the same whatever the
 * chunking of the input, offsets are absolute, single-object documents
 * are kept whole, and a callback error stops the scan.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
