/*
 * Tests for filewatch.c on a temporary folder, its quiet time driven by
 * explicit times: a file written in place is reported once closed (not
 * while half-written), a rename over it and a ConfigMap volume's "..data"
 * symlink swap are reported once, a burst is one change, other files of
 * the folder are ignored.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errbuf.h"
#include "runtime/filewatch.h"

#define MS 1000000LL
#define DEBOUNCE (500 * MS)

struct fx {
	char dir[64];
	char path[128];
	struct filewatch *w;
};

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void join(char *out, size_t len, const char *dir, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct errbuf err;

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/luascale-fw-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	join(f->path, sizeof(f->path), f->dir, "policy.lua");
	put(f->path, "return 1\n");
	f->w = filewatch_new(DEBOUNCE, &err);
	assert_non_null(f->w);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[160];

	filewatch_free(f->w);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* Reads the events waiting at 'now'; returns how many concerned a file. */
static int drain(struct fx *f, int64_t now)
{
	struct errbuf err;
	int n = filewatch_read(f->w, now, &err);

	assert_true(n >= 0);
	return n;
}

static void test_write_in_place_waits_for_close(void **state)
{
	struct fx *f = *state;
	struct errbuf err;
	int fd;

	assert_int_equal(filewatch_add(f->w, f->path, 3, &err), 0);
	assert_string_equal(filewatch_path(f->w, 3), f->path);
	fd = open(f->path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "return {rec", 11), 11);
	/* half-written: no event that counts, nothing due however late */
	assert_int_equal(drain(f, 0), 0);
	assert_int_equal(filewatch_deadline(f->w), -1);
	assert_int_equal(filewatch_due(f->w, 3600 * 1000 * MS), 0);
	assert_int_equal(write(fd, "oncile = 1}\n", 12), 12);
	assert_int_equal(close(fd), 0);
	assert_true(drain(f, 1000 * MS) >= 1);
	assert_int_equal(filewatch_deadline(f->w), 1000 * MS + DEBOUNCE);
	/* before the quiet time is over: nothing yet */
	assert_int_equal(filewatch_due(f->w, 1000 * MS + DEBOUNCE - 1), 0);
	assert_int_equal(filewatch_due(f->w, 1000 * MS + DEBOUNCE), 1u << 3);
	/* reported once */
	assert_int_equal(filewatch_due(f->w, 5000 * MS), 0);
}

static void test_burst_is_one_change(void **state)
{
	struct fx *f = *state;
	struct errbuf err;
	int64_t t = 0;
	int i;

	assert_int_equal(filewatch_add(f->w, f->path, 0, &err), 0);
	for (i = 0; i < 5; i++) {
		char text[32];

		snprintf(text, sizeof(text), "return %d\n", i);
		put(f->path, text);
		assert_true(drain(f, t) >= 1);
		/* each event starts the quiet time again */
		assert_int_equal(filewatch_due(f->w, t + DEBOUNCE - MS), 0);
		t += DEBOUNCE - MS;
	}
	assert_int_equal(filewatch_due(f->w, t - (DEBOUNCE - MS) + DEBOUNCE), 1u);
	assert_int_equal(filewatch_due(f->w, t + 10 * DEBOUNCE), 0);
}

static void test_rename_over_and_other_files(void **state)
{
	struct fx *f = *state;
	struct errbuf err;
	char tmp[160], other[160];

	assert_int_equal(filewatch_add(f->w, f->path, 1, &err), 0);
	/* another file of the folder: not ours */
	join(other, sizeof(other), f->dir, "notes.txt");
	put(other, "hello\n");
	assert_int_equal(drain(f, 0), 0);
	assert_int_equal(filewatch_due(f->w, 10 * DEBOUNCE), 0);
	/* an editor's save: a new file renamed over the old one */
	join(tmp, sizeof(tmp), f->dir, ".policy.lua.swp");
	put(tmp, "return 2\n");
	assert_int_equal(rename(tmp, f->path), 0);
	assert_true(drain(f, 0) >= 1);
	assert_int_equal(filewatch_due(f->w, DEBOUNCE), 1u << 1);
	/* removed: not reported; written again: reported */
	assert_int_equal(unlink(f->path), 0);
	assert_true(drain(f, 0) >= 1);
	assert_int_equal(filewatch_due(f->w, DEBOUNCE), 0);
	put(f->path, "return 3\n");
	assert_true(drain(f, DEBOUNCE) >= 1);
	assert_int_equal(filewatch_due(f->w, 2 * DEBOUNCE), 1u << 1);
}

/* Lays out a ConfigMap volume as the kubelet does: a timestamped folder,
 * "..data" pointing at it, and each key a symlink through "..data". */
static void configmap_version(struct fx *f, const char *stamp, const char *text)
{
	char d[160], p[200], tmp[160], data[160];

	join(d, sizeof(d), f->dir, stamp);
	assert_int_equal(mkdir(d, 0755), 0);
	join(p, sizeof(p), d, "policy.lua");
	put(p, text);
	join(tmp, sizeof(tmp), f->dir, "..data_tmp");
	join(data, sizeof(data), f->dir, "..data");
	assert_int_equal(symlink(stamp, tmp), 0);
	assert_int_equal(rename(tmp, data), 0); /* the atomic swap */
}

static void test_configmap_data_swap(void **state)
{
	struct fx *f = *state;
	struct errbuf err;
	char cmd[200];

	/* the volume's first version, before the watch */
	assert_int_equal(unlink(f->path), 0);
	configmap_version(f, "..2026_12_01_10_00_00.1", "return 1\n");
	assert_int_equal(symlink("..data/policy.lua", f->path), 0);
	assert_int_equal(filewatch_add(f->w, f->path, 2, &err), 0);

	/* the ConfigMap changes: a new folder, the swap, the old folder removed */
	configmap_version(f, "..2026_12_01_10_05_00.2", "return 2\n");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/..2026_12_01_10_00_00.1'", f->dir);
	assert_int_equal(system(cmd), 0);
	assert_true(drain(f, 0) >= 1);
	assert_int_equal(filewatch_due(f->w, DEBOUNCE), 1u << 2);
	assert_int_equal(filewatch_due(f->w, 2 * DEBOUNCE), 0);

	/* a swap to a version whose file did not change still is a new file
	 * (another inode): reported, and the reload finds the same text */
	configmap_version(f, "..2026_12_01_10_10_00.3", "return 2\n");
	assert_true(drain(f, 0) >= 1);
	assert_int_equal(filewatch_due(f->w, DEBOUNCE), 1u << 2);
}

static void test_add_errors(void **state)
{
	struct fx *f = *state;
	struct errbuf err;

	assert_int_equal(filewatch_add(f->w, "/nonexistent-luascale-dir/x.lua", 0, &err), -1);
	assert_non_null(strstr(err.msg, "/nonexistent-luascale-dir"));
	assert_int_equal(filewatch_add(f->w, f->path, FILEWATCH_MAX, &err), -1);
	assert_int_equal(filewatch_add(f->w, f->path, 4, &err), 0);
	assert_int_equal(filewatch_add(f->w, f->path, 4, &err), -1);
	assert_non_null(strstr(err.msg, "taken"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_write_in_place_waits_for_close, setup, teardown),
		cmocka_unit_test_setup_teardown(test_burst_is_one_change, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rename_over_and_other_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_configmap_data_swap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_add_errors, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
