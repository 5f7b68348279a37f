/*
 * Tests for the price cache: a lookup never fetches, a refresh fetches
 * only what is missing or past its TTL (spot's shorter than on-demand's),
 * a failed refresh keeps the last prices, is counted and waits before the
 * next, and a refresh is scheduled on the work queue one at a time. The
 * clock is virtual: time is set, never waited for.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "providers/pricing.h"
#include "runtime/clock.h"
#include "runtime/executor.h"

/* A cloud: prices per type ("m5.large" 0.096; spot a third of it), a
 * switch to fail, and what it was asked. */
struct fake {
	int calls;
	size_t asked;
	struct pricing_key last[8];
	bool fail;
	double scale;
};

static int fake_fetch(void *ctx, const struct pricing_key *keys, size_t n, double *prices,
		      struct provider_status *st)
{
	struct fake *f = ctx;
	size_t i;

	f->calls++;
	f->asked = n;
	for (i = 0; i < n && i < 8; i++)
		f->last[i] = keys[i];
	if (f->fail) {
		st->code = PROVIDER_THROTTLED;
		snprintf(st->message, sizeof(st->message), "Throttling: rate exceeded");
		return -1;
	}
	for (i = 0; i < n; i++) {
		double p = !strcmp(keys[i].type, "m5.large") ? 0.096 : 0;

		if (keys[i].capacity == PRICING_SPOT)
			p /= 3;
		prices[i] = p * f->scale;
	}
	return 0;
}

static struct pricing_key key(const char *type, enum pricing_capacity c)
{
	struct pricing_key k;

	memset(&k, 0, sizeof(k));
	snprintf(k.type, sizeof(k.type), "%s", type);
	snprintf(k.location, sizeof(k.location), "us-east-1");
	k.capacity = c;
	return k;
}

static struct pricing *cache(struct fake *f, struct clock *c)
{
	struct pricing_opts o;

	memset(&o, 0, sizeof(o));
	o.provider = "test";
	o.fetch = fake_fetch;
	o.ctx = f;
	o.clock = c;
	return pricing_new(&o);
}

#define H (3600 * CLOCK_NS_PER_S)

static void test_get_never_fetches(void **state)
{
	struct clock *c = vclock_new(1700000000);
	struct fake f = { .scale = 1 };
	struct pricing *pr = cache(&f, c);
	struct pricing_key k = key("m5.large", PRICING_ON_DEMAND);
	struct provider_status st;

	(void)state;
	assert_false(pricing_due(pr));
	assert_true(pricing_get(pr, &k) == 0);
	assert_int_equal(f.calls, 0);
	assert_true(pricing_due(pr));
	assert_int_equal(pricing_refresh(pr, &st), 0);
	assert_int_equal(f.calls, 1);
	assert_int_equal((int)f.asked, 1);
	assert_string_equal(f.last[0].type, "m5.large");
	assert_true(pricing_get(pr, &k) == 0.096);
	assert_false(pricing_due(pr));
	assert_int_equal(f.calls, 1);
	pricing_free(pr);
	vclock_free(c);
}

static void test_ttls(void **state)
{
	struct clock *c = vclock_new(1700000000);
	struct fake f = { .scale = 1 };
	struct pricing *pr = cache(&f, c);
	struct pricing_key od = key("m5.large", PRICING_ON_DEMAND), spot = key("m5.large", PRICING_SPOT);
	struct provider_status st;

	(void)state;
	pricing_get(pr, &od);
	pricing_get(pr, &spot);
	assert_int_equal(pricing_refresh(pr, &st), 0);
	assert_int_equal((int)f.asked, 2);
	assert_true(pricing_get(pr, &spot) == 0.032);
	f.scale = 2;
	vclock_set(c, H - 1);
	assert_false(pricing_due(pr));
	vclock_set(c, H);  /* spot's hour is over, on-demand's 12 are not */
	assert_true(pricing_due(pr));
	assert_int_equal(pricing_refresh(pr, &st), 0);
	assert_int_equal((int)f.asked, 1);
	assert_int_equal(f.last[0].capacity, PRICING_SPOT);
	assert_true(pricing_get(pr, &spot) == 0.064);
	assert_true(pricing_get(pr, &od) == 0.096);
	vclock_set(c, 12 * H);
	assert_int_equal(pricing_refresh(pr, &st), 0);
	assert_int_equal((int)f.asked, 2); /* both: spot's second hour is over too */
	assert_true(pricing_get(pr, &od) == 0.192);
	pricing_free(pr);
	vclock_free(c);
}

static void test_failure_keeps_last_prices(void **state)
{
	struct clock *c = vclock_new(1700000000);
	struct fake f = { .scale = 1 };
	struct pricing *pr = cache(&f, c);
	struct pricing_key k = key("m5.large", PRICING_SPOT);
	struct provider_status st;

	(void)state;
	pricing_get(pr, &k);
	assert_int_equal(pricing_refresh(pr, &st), 0);
	assert_true(pricing_get(pr, &k) == 0.032);
	assert_int_equal((int)pricing_failures(pr), 0);
	vclock_set(c, H);
	f.fail = true;
	assert_int_equal(pricing_refresh(pr, &st), -1);
	assert_int_equal(st.code, PROVIDER_THROTTLED);
	assert_int_equal((int)pricing_failures(pr), 1);
	assert_true(pricing_get(pr, &k) == 0.032); /* the last price stays */
	/* the next try waits the retry interval, not the next round */
	assert_false(pricing_due(pr));
	vclock_set(c, H + PRICING_RETRY_NS);
	assert_true(pricing_due(pr));
	f.fail = false;
	f.scale = 3;
	assert_int_equal(pricing_refresh(pr, &st), 0);
	assert_true(pricing_get(pr, &k) > 0.0959 && pricing_get(pr, &k) < 0.0961);
	assert_int_equal((int)pricing_failures(pr), 1);
	pricing_free(pr);
	vclock_free(c);
}

static void test_unlisted_price_is_not_asked_every_round(void **state)
{
	struct clock *c = vclock_new(1700000000);
	struct fake f = { .scale = 1 };
	struct pricing *pr = cache(&f, c);
	struct pricing_key k = key("x9.huge", PRICING_ON_DEMAND);
	struct provider_status st;

	(void)state;
	pricing_get(pr, &k);
	assert_int_equal(pricing_refresh(pr, &st), 0);
	assert_true(pricing_get(pr, &k) == 0);
	assert_false(pricing_due(pr));
	assert_int_equal(f.calls, 1);
	pricing_free(pr);
	vclock_free(c);
}

static void test_scheduled_on_the_work_queue(void **state)
{
	struct clock *c = vclock_new(1700000000);
	struct executor *ex = executor_new_virtual(c);
	struct fake f = { .scale = 1 };
	struct pricing *pr = cache(&f, c);
	struct provider_group g[3];
	bool spot[3] = { false, true, false };

	(void)state;
	memset(g, 0, sizeof(g));
	snprintf(g[0].tmpl.instance_type, sizeof(g[0].tmpl.instance_type), "m5.large");
	snprintf(g[1].tmpl.instance_type, sizeof(g[1].tmpl.instance_type), "m5.large");
	g[2].tmpl.price_per_hour = 7; /* no instance type: kept */
	pricing_price_groups(pr, "us-east-1", g, 3, spot, ex);
	pricing_price_groups(pr, "us-east-1", g, 3, spot, ex); /* one refresh in flight at most */
	assert_int_equal(f.calls, 0);
	assert_true(g[0].tmpl.price_per_hour == 0);
	executor_run_all(ex);
	assert_int_equal(f.calls, 1);
	pricing_price_groups(pr, "us-east-1", g, 3, spot, ex);
	assert_true(g[0].tmpl.price_per_hour == 0.096);
	assert_true(g[1].tmpl.price_per_hour == 0.032);
	assert_true(g[2].tmpl.price_per_hour == 7);
	executor_run_all(ex);
	assert_int_equal(f.calls, 1);
	pricing_free(pr);
	executor_shutdown(ex, 0);
	vclock_free(c);
}

static void test_capacity_from_labels(void **state)
{
	struct provider_template t;

	(void)state;
	memset(&t, 0, sizeof(t));
	assert_int_equal(pricing_capacity_of(&t), PRICING_ON_DEMAND);
	provider_template_label(&t, "eks.amazonaws.com/capacityType", "ON_DEMAND");
	assert_int_equal(pricing_capacity_of(&t), PRICING_ON_DEMAND);
	provider_template_label(&t, "eks.amazonaws.com/capacityType", "SPOT");
	assert_int_equal(pricing_capacity_of(&t), PRICING_SPOT);
	provider_template_clear(&t);
	provider_template_label(&t, "kubernetes.azure.com/scalesetpriority", "spot");
	assert_int_equal(pricing_capacity_of(&t), PRICING_SPOT);
	provider_template_clear(&t);
	provider_template_label(&t, "cloud.google.com/gke-spot", "true");
	assert_int_equal(pricing_capacity_of(&t), PRICING_SPOT);
	provider_template_clear(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_never_fetches),
		cmocka_unit_test(test_ttls),
		cmocka_unit_test(test_failure_keeps_last_prices),
		cmocka_unit_test(test_unlisted_price_is_not_asked_every_round),
		cmocka_unit_test(test_scheduled_on_the_work_queue),
		cmocka_unit_test(test_capacity_from_labels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
