/*
 * Tests for buf.c's file reading: whole files, the size cap, regular files
 * only (a FIFO without a writer must not block, /dev/zero must not be
 * read), clear errors that leave the buffer as it was; and JSON strings
 * that stay valid JSON whatever bytes they are given.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "buf.h"

static void write_temp(char *path, const char *text, size_t len)
{
	int fd = mkstemp(path);
	FILE *f;

	assert_true(fd >= 0);
	f = fdopen(fd, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void test_reads_whole_file(void **state)
{
	char path[] = "/tmp/test_buf.XXXXXX";
	struct buf b = BUF_INIT;
	struct errbuf err;
	char *big = malloc(100000);
	size_t i;

	(void)state;
	assert_non_null(big);
	for (i = 0; i < 100000; i++)
		big[i] = (char)('a' + i % 26);
	write_temp(path, big, 100000);
	buf_puts(&b, "x");
	assert_int_equal(buf_read_file(&b, path, 100000, &err), 0);
	assert_int_equal(b.len, 100001);
	assert_memory_equal(b.data + 1, big, 100000);
	assert_int_equal(b.data[b.len], '\0');
	unlink(path);
	free(big);
	buf_free(&b);
}

static void test_cap_refuses_larger(void **state)
{
	char path[] = "/tmp/test_buf.XXXXXX";
	struct buf b = BUF_INIT;
	struct errbuf err;

	(void)state;
	write_temp(path, "0123456789", 10);
	buf_puts(&b, "keep");
	assert_int_equal(buf_read_file(&b, path, 9, &err), -1);
	assert_non_null(strstr(err.msg, "larger than 9 bytes"));
	assert_non_null(strstr(err.msg, path));
	assert_string_equal(b.data, "keep"); /* as it was */
	unlink(path);

	/* an endless device is not a file: refused before reading */
	assert_int_equal(buf_read_file(&b, "/dev/zero", 1 << 20, &err), -1);
	assert_string_equal(err.msg, "cannot read /dev/zero: a character device, not a regular file; give the path of a file");
	assert_int_equal(b.len, 4);
	buf_free(&b);
}

static void test_errors_name_the_path(void **state)
{
	struct buf b = BUF_INIT;
	struct errbuf err;

	(void)state;
	assert_int_equal(buf_read_file(&b, "/nonexistent/x.yaml", 100, &err), -1);
	assert_string_equal(err.msg, "cannot read /nonexistent/x.yaml: No such file or directory");
	assert_int_equal(buf_read_file(&b, "/tmp", 100, &err), -1);
	assert_string_equal(err.msg, "cannot read /tmp: a directory, not a regular file; give the path of a file");
	assert_int_equal(b.len, 0);
	buf_free(&b);
}

/* A FIFO nobody writes to: opening it for reading would wait forever. */
static void test_fifo_refused_without_blocking(void **state)
{
	char dir[] = "/tmp/test_buf_fifo.XXXXXX", path[64];
	struct buf b = BUF_INIT;
	struct errbuf err;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/state.json", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(buf_read_file(&b, path, 100, &err), -1);
	assert_non_null(strstr(err.msg, "a pipe or FIFO, not a regular file"));
	assert_non_null(strstr(err.msg, path));
	f = buf_fopen_regular(path, &err);
	assert_null(f);
	assert_non_null(strstr(err.msg, "a pipe or FIFO"));
	assert_int_equal(b.len, 0);
	unlink(path);
	rmdir(dir);
	buf_free(&b);
}

static void test_json_string_always_valid(void **state)
{
	struct buf b = BUF_INIT;

	(void)state;
	/* a stray byte, a truncated sequence, an overlong '/', a surrogate */
	buf_json_string(&b, "w\xff-1\xc3-\xc0\xaf-\xed\xa0\x80-\x1b[31m-\x7f");
	assert_string_equal(b.data, "\"w\\ufffd-1\\ufffd-\\ufffd\\ufffd-\\ufffd\\ufffd\\ufffd-\\u001b[31m-\\u007f\"");
	b.len = 0;
	/* well-formed UTF-8 passes as it is */
	buf_json_string(&b, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	assert_string_equal(b.data, "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
	assert_int_equal(buf_utf8_seq("\xf0\x9f\x98\x80"), 4);
	assert_int_equal(buf_utf8_seq("\xf4\x90\x80\x80"), 0); /* past U+10FFFF */
	buf_free(&b);
}

/* Only the unreserved characters stay bare; every other byte is %XX. */
static void test_percent_encode(void **state)
{
	struct buf b = BUF_INIT;

	(void)state;
	assert_int_equal(buf_percent_encode(&b, "aZ09-._~ /=&+%\xc3\xa9"), 0);
	assert_string_equal(b.data, "aZ09-._~%20%2F%3D%26%2B%25%C3%A9");
	buf_free(&b);
	assert_int_equal(buf_percent_encode(&b, NULL), 0);
	assert_non_null(b.data);
	assert_string_equal(b.data, "");
	buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reads_whole_file),
		cmocka_unit_test(test_cap_refuses_larger),
		cmocka_unit_test(test_errors_name_the_path),
		cmocka_unit_test(test_fifo_refused_without_blocking),
		cmocka_unit_test(test_json_string_always_valid),
		cmocka_unit_test(test_percent_encode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
