/*
 * Tests for buf.c's file reading: whole files and pipes, the size cap that
 * keeps /dev/zero from taking the memory, clear errors that leave the
 * buffer as it was.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

	/* an endless device stops at the cap instead of eating the memory */
	assert_int_equal(buf_read_file(&b, "/dev/zero", 1 << 20, &err), -1);
	assert_non_null(strstr(err.msg, "/dev/zero: larger than 1048576 bytes"));
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
	assert_string_equal(err.msg, "cannot read /tmp: Is a directory");
	assert_int_equal(b.len, 0);
	buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reads_whole_file),
		cmocka_unit_test(test_cap_refuses_larger),
		cmocka_unit_test(test_errors_name_the_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
