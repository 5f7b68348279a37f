/*
 * Tests for pricing_from_config(): a provider's price cache made as its config says —
 * the config's spot and on-demand TTLs in force (the defaults without a
 * config), the provider's name in the cache's log lines, and the fetch
 * called with its context. The clock is virtual: time is set, never waited for.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "config.h"
#include "providers/pricing.h"
#include "runtime/clock.h"

#define MIN (60 * CLOCK_NS_PER_S)

struct fake {
	int calls;
	size_t asked;  /* keys of the last fetch */
	char log[1024];
};

/* Every type costs 0.5 an hour. */
static int fetch(void *ctx, const struct pricing_key *keys, size_t n, double *prices,
		 struct provider_status *st)
{
	struct fake *f = ctx;
	size_t i;

	(void)keys;
	(void)st;
	f->calls++;
	f->asked = n;
	for (i = 0; i < n; i++)
		prices[i] = 0.5;
	return 0;
}

static void capture(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct fake *f = ctx;
	size_t n = strlen(f->log);

	(void)level;
	(void)wall;
	snprintf(f->log + n, sizeof(f->log) - n, "%s\n", msg);
}

/* Fetches both keys once, then says at which minutes a refresh is due
 * again: true at minute 'due', false the minute before. */
static void assert_due_at(struct pricing *pr, struct clock *c, struct fake *f, int64_t due)
{
	struct pricing_key od = {.type = "Standard_D4s_v5", .location = "eastus", .capacity = PRICING_ON_DEMAND};
	struct pricing_key spot = {.type = "Standard_D4s_v5", .location = "eastus", .capacity = PRICING_SPOT};
	struct provider_status st;

	pricing_get(pr, &od);
	pricing_get(pr, &spot);
	assert_int_equal(pricing_refresh(pr, &st), 0);
	assert_int_equal(f->calls, 1);
	assert_true(pricing_get(pr, &od) == 0.5 && pricing_get(pr, &spot) == 0.5);
	vclock_set(c, (due - 1) * MIN);
	assert_false(pricing_due(pr));
	vclock_set(c, due * MIN);
	assert_true(pricing_due(pr));
}

static void test_ttls_from_the_config(void **state)
{
	struct clock *c = vclock_new(1700000000);
	struct fake f;
	struct logger log = {capture, &f, LOG_DEBUG, NULL};
	struct config cfg;
	struct provider_status st;
	struct pricing *pr;

	(void)state;
	memset(&f, 0, sizeof(f));
	memset(&cfg, 0, sizeof(cfg));
	cfg.pricing_on_demand_ttl_ms = 30 * 60 * 1000;
	cfg.pricing_spot_ttl_ms = 10 * 60 * 1000;
	pr = pricing_from_config("azure", fetch, &f, c, &log, &cfg);
	assert_non_null(pr);
	assert_due_at(pr, c, &f, 10); /* spot's 10 minutes */
	assert_non_null(strstr(f.log, "azure: prices refreshed (2 asked)"));
	assert_int_equal(pricing_refresh(pr, &st), 0);
	assert_int_equal((int)f.asked, 1); /* spot alone */
	vclock_set(c, 30 * MIN);           /* on-demand's 30 minutes */
	assert_int_equal(pricing_refresh(pr, &st), 0);
	assert_int_equal((int)f.asked, 2);
	pricing_free(pr);
	vclock_free(c);
}

static void test_defaults_without_a_config(void **state)
{
	struct clock *c = vclock_new(1700000000);
	struct fake f;
	struct pricing *pr;

	(void)state;
	memset(&f, 0, sizeof(f));
	pr = pricing_from_config("gce", fetch, &f, c, NULL, NULL);
	assert_non_null(pr);
	assert_due_at(pr, c, &f, PRICING_SPOT_TTL_NS / MIN); /* an hour */
	pricing_free(pr);
	vclock_free(c);
}

static void test_needs_a_fetch_and_a_clock(void **state)
{
	struct clock *c = vclock_new(1700000000);

	(void)state;
	assert_null(pricing_from_config("aws", NULL, NULL, c, NULL, NULL));
	assert_null(pricing_from_config("aws", fetch, NULL, NULL, NULL, NULL));
	vclock_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ttls_from_the_config),
		cmocka_unit_test(test_defaults_without_a_config),
		cmocka_unit_test(test_needs_a_fetch_and_a_clock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
