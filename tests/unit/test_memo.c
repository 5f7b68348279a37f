/*
 * Tests for memo, a provider's table of what it described once: values
 * copied in and out (never a pointer into the table), a key kept once and
 * replaced, values that own memory copied deep and released when replaced
 * or freed, and two threads using one table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <pthread.h>

#include "providers/cloudhttp/memo.h"

struct size {
	int cpus;
	int64_t memory_mb;
};

static void test_copied_in_and_out(void **state)
{
	struct memo *m = memo_new(&(struct memo_opts){ .value_size = sizeof(struct size) });
	struct size v = { 4, 16384 }, out = { -1, -1 };

	(void)state;
	assert_non_null(m);
	assert_false(memo_get(m, "us-central1-a/n2-standard-4", &out));
	assert_int_equal(out.cpus, -1); /* untouched when there is none */
	assert_int_equal(memo_put(m, "us-central1-a/n2-standard-4", &v), 0);
	v.cpus = 99; /* the table holds its own copy */
	assert_true(memo_get(m, "us-central1-a/n2-standard-4", &out));
	assert_int_equal(out.cpus, 4);
	assert_int_equal(out.memory_mb, 16384);
	/* a key is kept once: a second put replaces */
	v.cpus = 8;
	assert_int_equal(memo_put(m, "us-central1-a/n2-standard-4", &v), 0);
	assert_int_equal(memo_put(m, "us-central1-b/n2-standard-4", &(struct size){ 2, 8192 }), 0);
	assert_true(memo_get(m, "us-central1-a/n2-standard-4", &out));
	assert_int_equal(out.cpus, 8);
	assert_true(memo_get(m, "us-central1-b/n2-standard-4", &out));
	assert_int_equal(out.cpus, 2);
	assert_false(memo_get(m, "us-central1-a", &out)); /* whole keys only */
	memo_free(m);
	memo_free(NULL);
	assert_null(memo_new(&(struct memo_opts){ .value_size = 0 }));
}

/* A value that owns memory: a label list, as an instance template's kube-env. */
struct owned {
	char *labels;
	int n;
};

static int released;
static bool copy_fails; /* as out of memory would */

static int owned_copy(void *dst, const void *src)
{
	const struct owned *s = src;
	struct owned *d = dst;

	if (copy_fails)
		return -1;
	*d = *s;
	d->labels = s->labels ? strdup(s->labels) : NULL;
	return s->labels && !d->labels ? -1 : 0;
}

static void owned_release(void *v)
{
	struct owned *o = v;

	if (o->labels)
		released++;
	free(o->labels);
}

static void test_deep_copies(void **state)
{
	struct memo *m = memo_new(&(struct memo_opts){ .value_size = sizeof(struct owned), .copy = owned_copy,
						       .release = owned_release });
	char labels[] = "cloud.google.com/gke-nodepool=pool-1";
	struct owned v = { labels, 1 }, out;

	(void)state;
	released = 0;
	assert_int_equal(memo_put(m, "tmpl-1", &v), 0);
	labels[0] = 'X'; /* the caller's memory is not the table's */
	memset(&out, 0, sizeof(out));
	assert_true(memo_get(m, "tmpl-1", &out));
	assert_string_equal(out.labels, "cloud.google.com/gke-nodepool=pool-1");
	out.labels[0] = 'Y'; /* nor is a copy handed out */
	owned_release(&out);
	assert_true(memo_get(m, "tmpl-1", &out));
	assert_string_equal(out.labels, "cloud.google.com/gke-nodepool=pool-1");
	owned_release(&out);
	assert_int_equal(released, 2);
	/* a copy that fails: not found, and nothing half-copied handed out */
	copy_fails = true;
	out.n = 7;
	assert_false(memo_get(m, "tmpl-1", &out));
	assert_null(out.labels);
	assert_int_equal(out.n, 0);
	assert_int_equal(memo_put(m, "tmpl-1", &v), -1);
	copy_fails = false;
	assert_true(memo_get(m, "tmpl-1", &out)); /* the kept value is as it was */
	assert_string_equal(out.labels, "cloud.google.com/gke-nodepool=pool-1");
	owned_release(&out);
	assert_int_equal(released, 3);
	/* replacing releases the old value; freeing releases the rest */
	assert_int_equal(memo_put(m, "tmpl-1", &(struct owned){ "a=b", 1 }), 0);
	assert_int_equal(released, 4);
	assert_int_equal(memo_put(m, "tmpl-2", &(struct owned){ "c=d", 1 }), 0);
	memo_free(m);
	assert_int_equal(released, 6);
}

static void *writer(void *arg)
{
	struct memo *m = arg;
	char key[32];
	int i;

	for (i = 0; i < 2000; i++) {
		snprintf(key, sizeof(key), "type-%d", i % 50);
		memo_put(m, key, &(struct size){ i % 50, (i % 50) * 1024 });
	}
	return NULL;
}

static void test_two_threads(void **state)
{
	struct memo *m = memo_new(&(struct memo_opts){ .value_size = sizeof(struct size) });
	pthread_t th;
	struct size out;
	char key[32];
	int i;

	(void)state;
	assert_int_equal(pthread_create(&th, NULL, writer, m), 0);
	for (i = 0; i < 2000; i++) {
		snprintf(key, sizeof(key), "type-%d", i % 50);
		if (memo_get(m, key, &out)) /* never half of one put and half of another */
			assert_int_equal(out.memory_mb, (int64_t)out.cpus * 1024);
	}
	pthread_join(th, NULL);
	for (i = 0; i < 50; i++) {
		snprintf(key, sizeof(key), "type-%d", i);
		assert_true(memo_get(m, key, &out));
		assert_int_equal(out.cpus, i);
	}
	memo_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copied_in_and_out),
		cmocka_unit_test(test_deep_copies),
		cmocka_unit_test(test_two_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
