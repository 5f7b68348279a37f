/*
 * Tests for groupcache: a listing's answer for one group settled against
 * its last good view (kept, recalled stale, skipped, failing the list),
 * each said once per reason; the table of groups and a listing counted
 * group by group; the index of the instances last listed; and one
 * instance reported to a launch's callback. Virtual clock.
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
#include "providers/cloudhttp/groupcache.h"
#include "runtime/clock.h"

#define T0 1800000000LL

struct lines {
	int n;
	char last[512];
};

static void capture(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct lines *l = ctx;

	(void)level;
	(void)wall;
	l->n++;
	snprintf(l->last, sizeof(l->last), "%s", msg);
}

struct fixture {
	struct clock *clk;
	struct lines lines;
	struct logger log;
	struct groupcache *gc;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct groupcache_opts o;

	assert_non_null(f);
	f->clk = vclock_new(T0);
	f->log.write = capture;
	f->log.ctx = &f->lines;
	f->log.min_level = LOG_DEBUG;
	memset(&o, 0, sizeof(o));
	o.cloud = "gce";
	o.backing = "MIG";
	o.log = &f->log;
	o.clock = f->clk;
	f->gc = groupcache_new(&o);
	assert_non_null(f->gc);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	groupcache_free(f->gc);
	vclock_free(f->clk);
	free(f);
	return 0;
}

/* A group 'name' of 'n' instances named <name>-<i>, read well. */
static void group_of(struct provider_group *pg, const char *name, size_t n)
{
	size_t i;

	memset(pg, 0, sizeof(*pg));
	snprintf(pg->name, sizeof(pg->name), "%s", name);
	pg->target = (int)n;
	pg->max = 10;
	pg->instances = calloc(n + 1, sizeof(*pg->instances));
	assert_non_null(pg->instances);
	for (i = 0; i < n; i++) {
		snprintf(pg->instances[i].id, sizeof(pg->instances[i].id), "%s-%zu", name, i);
		snprintf(pg->instances[i].group, sizeof(pg->instances[i].group), "%s", name);
		pg->instances[i].launched_wall = T0 - 100 + (int64_t)i;
	}
	pg->n_instances = n;
}

/* Frees what one group holds (not the group). */
static void group_free(struct provider_group *pg)
{
	provider_template_clear(&pg->tmpl);
	free(pg->instances);
	memset(pg, 0, sizeof(*pg));
}

static void malformed(struct provider_status *st, const char *why)
{
	memset(st, 0, sizeof(*st));
	st->code = PROVIDER_TRANSIENT;
	snprintf(st->message, sizeof(st->message), "%s", why);
}

static void test_read_well_is_listed_and_kept(void **state)
{
	struct fixture *f = *state;
	struct provider_group pg, again;
	struct provider_status st;

	memset(&st, 0, sizeof(st));
	group_of(&pg, "web", 2);
	assert_int_equal(groupcache_settle(f->gc, "web", 0, &pg, &st), GROUPCACHE_LISTED);
	assert_int_equal(f->lines.n, 0);
	/* the next round reads it badly: the view kept comes back, stale */
	vclock_set(f->clk, 30 * CLOCK_NS_PER_S);
	memset(&again, 0, sizeof(again));
	malformed(&st, "MIG web has no targetSize");
	assert_int_equal(groupcache_settle(f->gc, "web", GROUPCACHE_MALFORMED, &again, &st), GROUPCACHE_LISTED);
	assert_int_equal(st.code, PROVIDER_OK);
	assert_string_equal(st.message, "");
	assert_string_equal(again.name, "web");
	assert_int_equal(again.n_instances, 2);
	assert_int_equal(again.target, 2);
	assert_int_equal(again.stale_since, T0);
	assert_int_equal(f->lines.n, 1);
	assert_string_equal(f->lines.last, "gce: node group web is skipped: MIG web has no targetSize; it keeps the last "
					   "view read well, marked stale, until the MIG reads well again");
	group_free(&again);
	/* the same reason again is not said again */
	memset(&again, 0, sizeof(again));
	malformed(&st, "MIG web has no targetSize");
	assert_int_equal(groupcache_settle(f->gc, "web", GROUPCACHE_MALFORMED, &again, &st), GROUPCACHE_LISTED);
	assert_int_equal(f->lines.n, 1);
	group_free(&again);
	/* read well again: said once */
	memset(&st, 0, sizeof(st));
	assert_int_equal(groupcache_settle(f->gc, "web", 0, &pg, &st), GROUPCACHE_LISTED);
	assert_int_equal(f->lines.n, 2);
	assert_string_equal(f->lines.last, "gce: node group web: its MIG is read well again");
	group_free(&pg);
}

static void test_malformed_without_a_view_is_skipped(void **state)
{
	struct fixture *f = *state;
	struct provider_group pg;
	struct provider_status st;

	group_of(&pg, "new", 1); /* partly filled before the answer was found bad */
	malformed(&st, "MIG new has no targetSize");
	assert_int_equal(groupcache_settle(f->gc, "new", GROUPCACHE_MALFORMED, &pg, &st), GROUPCACHE_SKIPPED);
	assert_null(pg.instances);
	assert_int_equal(pg.n_instances, 0);
	assert_int_equal(st.code, PROVIDER_OK);
	assert_int_equal(f->lines.n, 1);
	assert_string_equal(f->lines.last, "gce: node group new is skipped: MIG new has no targetSize; no earlier view "
					   "of it: it is not listed until the MIG reads well");
}

static void test_not_found_is_skipped_other_errors_fail(void **state)
{
	struct fixture *f = *state;
	struct provider_group pg;
	struct provider_status st;

	memset(&pg, 0, sizeof(pg));
	memset(&st, 0, sizeof(st));
	st.code = PROVIDER_NOT_FOUND;
	snprintf(st.message, sizeof(st.message), "GET x: HTTP 404");
	assert_int_equal(groupcache_settle(f->gc, "gone", -1, &pg, &st), GROUPCACHE_SKIPPED);
	assert_int_equal(st.code, PROVIDER_OK);
	assert_int_equal(f->lines.n, 1);
	assert_string_equal(f->lines.last, "gce: node group gone: GET x: HTTP 404");

	st.code = PROVIDER_AUTH;
	snprintf(st.message, sizeof(st.message), "GET x: HTTP 403");
	assert_int_equal(groupcache_settle(f->gc, "web", -1, &pg, &st), GROUPCACHE_FAILED);
	assert_int_equal(st.code, PROVIDER_AUTH);
	assert_string_equal(st.message, "GET x: HTTP 403");
	assert_int_equal(f->lines.n, 1);
}

static void test_instances_index(void **state)
{
	struct fixture *f = *state;
	struct provider_group gs[2];
	char group[64], pid[256];
	int64_t wall = -1;

	assert_int_equal(groupcache_instance(f->gc, "web-0", group, sizeof(group), NULL, 0, &wall), -1);
	group_of(&gs[0], "web", 3);
	group_of(&gs[1], "batch", 1);
	gs[1].instances[0].launched_wall = 0; /* the cloud did not say */
	snprintf(gs[0].instances[2].provider_id, sizeof(gs[0].instances[2].provider_id), "gce://p/z/web-2");
	groupcache_keep_instances(f->gc, gs, 2);
	assert_int_equal(groupcache_instance(f->gc, "web-2", group, sizeof(group), NULL, 0, &wall), 0);
	assert_string_equal(group, "web");
	assert_int_equal(wall, T0 - 98);
	/* its providerID as listed (for the interruption notices) */
	assert_int_equal(groupcache_instance(f->gc, "web-2", NULL, 0, pid, sizeof(pid), NULL), 0);
	assert_string_equal(pid, "gce://p/z/web-2");
	assert_int_equal(groupcache_instance(f->gc, "web-1", NULL, 0, pid, sizeof(pid), NULL), 0);
	assert_string_equal(pid, "");
	assert_int_equal(groupcache_instance(f->gc, "batch-0", group, sizeof(group), NULL, 0, &wall), 0);
	assert_string_equal(group, "batch");
	assert_int_equal(wall, 0);
	assert_int_equal(groupcache_instance(f->gc, "web-0", NULL, 0, NULL, 0, NULL), 0);
	assert_int_equal(groupcache_instance(f->gc, "web-3", group, sizeof(group), NULL, 0, &wall), -1);
	/* the next listing replaces the index */
	groupcache_keep_instances(f->gc, &gs[1], 1);
	assert_int_equal(groupcache_instance(f->gc, "web-0", group, sizeof(group), NULL, 0, &wall), -1);
	assert_int_equal(groupcache_instance(f->gc, "batch-0", group, sizeof(group), NULL, 0, &wall), 0);
	group_free(&gs[0]);
	group_free(&gs[1]);
}

struct reported {
	int n;
	struct provider_instance last;
};

static void on_instance(void *ctx, const struct provider_instance *pi)
{
	struct reported *r = ctx;

	r->n++;
	r->last = *pi;
}

static void test_report(void **state)
{
	struct reported r;

	(void)state;
	memset(&r, 0, sizeof(r));
	groupcache_report(on_instance, &r, "web-x1", "web", "gce://p/z/web-x1", INSTANCE_PENDING);
	assert_int_equal(r.n, 1);
	assert_string_equal(r.last.id, "web-x1");
	assert_string_equal(r.last.group, "web");
	assert_string_equal(r.last.provider_id, "gce://p/z/web-x1");
	assert_int_equal(r.last.state, INSTANCE_PENDING);
	groupcache_report(on_instance, &r, "7", "pool", NULL, INSTANCE_GONE);
	assert_int_equal(r.n, 2);
	assert_string_equal(r.last.provider_id, "");
	assert_int_equal(r.last.state, INSTANCE_GONE);
	groupcache_report(NULL, &r, "8", "pool", NULL, INSTANCE_GONE); /* no callback: nothing */
	assert_int_equal(r.n, 2);
}

/* A provider's own record of a group, as a table keeps it. */
struct rec {
	int zone;
	char name[16];
};

static bool in_zone(const void *g, const void *ctx)
{
	return ((const struct rec *)g)->zone == *(const int *)ctx;
}

/* The table of groups: taken, copied with room for more, a group found by
 * its name or by what the provider matches; then a listing's answers
 * counted group by group (groupcache_add) and a view recalled. */
static void test_groups_table_and_listing(void **state)
{
	struct fixture *f = *state;
	struct groupcache *gc = groupcache_new(&(struct groupcache_opts){
		.cloud = "gce", .backing = "MIG", .clock = f->clk, GROUPCACHE_TABLE(struct rec) });
	struct rec *gs = calloc(2, sizeof(*gs)), *copy, got;
	struct provider_group *out = calloc(3, sizeof(*out)), pg;
	struct provider_status st;
	size_t k = 0;
	int zone = 1;
	bool changed;

	assert_non_null(gc);
	assert_non_null(gs);
	assert_non_null(out);
	gs[0] = (struct rec){ 1, "web" };
	gs[1] = (struct rec){ 2, "db" };
	assert_int_equal(groupcache_group(gc, NULL, "web", &got), -1); /* no table yet */
	groupcache_groups_take(gc, gs, 2);
	assert_int_equal(groupcache_group(gc, NULL, "db", &got), 0);
	assert_int_equal(got.zone, 2);
	assert_int_equal(groupcache_group(gc, NULL, "cache", &got), -1);
	assert_int_equal(groupcache_group(gc, in_zone, &zone, &got), 0);
	assert_string_equal(got.name, "web");
	copy = groupcache_groups_copy(gc, 1, 2);
	assert_non_null(copy);
	assert_string_equal(copy[0].name, "web");
	assert_int_equal(copy[1].zone, 0);
	assert_int_equal(copy[2].name[0], '\0');
	free(copy);

	memset(&st, 0, sizeof(st));
	group_of(&out[0], "web", 1);
	assert_int_equal(groupcache_add(gc, "web", 0, out, &k, &st), 0);
	assert_int_equal(k, 1);
	group_of(&out[1], "db", 1);
	st.code = PROVIDER_NOT_FOUND;
	assert_int_equal(groupcache_add(gc, "db", -1, out, &k, &st), 0); /* gone: skipped */
	assert_int_equal(k, 1);
	assert_int_equal(out[1].n_instances, 0);
	assert_int_equal(groupcache_recall(gc, "web", "a bad answer", &pg, &changed), 0);
	assert_true(changed);
	assert_int_equal(pg.stale_since, T0);
	group_free(&pg);
	group_of(&out[1], "db", 1);
	st.code = PROVIDER_TRANSIENT;
	assert_int_equal(groupcache_add(gc, "db", -1, out, &k, &st), -1); /* the list fails: out freed */
	groupcache_free(gc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_read_well_is_listed_and_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed_without_a_view_is_skipped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_found_is_skipped_other_errors_fail, setup, teardown),
		cmocka_unit_test_setup_teardown(test_instances_index, setup, teardown),
		cmocka_unit_test(test_report),
		cmocka_unit_test_setup_teardown(test_groups_table_and_listing, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
