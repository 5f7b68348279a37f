/*
 * test_policy_files.h: what the policy host's unit tests share: a policy
 * written to a temporary file, and an empty snapshot to run it on.
 * Header-only (static inline); include after <cmocka.h>.
 */
#ifndef LUASCALE_TEST_POLICY_FILES_H
#define LUASCALE_TEST_POLICY_FILES_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "model.h"

/* Writes 'src' to a new /tmp/luascale-test-*.lua and returns its path, in
 * a static buffer that the next call overwrites. */
static inline const char *write_policy(const char *src)
{
	static char path[64];
	int fd;
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/luascale-test-XXXXXX.lua");
	fd = mkstemps(path, 4);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(src, f);
	fclose(f);
	return path;
}

/* A finished snapshot with nothing in it, at a fixed time. */
static inline struct snapshot *empty_snapshot(void)
{
	struct snapshot *s = snapshot_new();
	struct errbuf err;

	assert_non_null(s);
	assert_int_equal(snapshot_finish(s, 1700000000, &err), 0);
	return s;
}

#endif
