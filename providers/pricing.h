/*
 * pricing: a provider's cache of its cloud's prices, per hour of one
 * instance, keyed by (instance type, location, capacity type). Lookups
 * never call the cloud: a price missing or older than its TTL is fetched
 * by one refresh at a time on the work queue, through the cloud's fetch
 * function; a failed refresh keeps the last prices and is counted. It
 * knows no cloud's wire format (providers/<cloud>/<cloud>_pricing.c do).
 */
#ifndef LUASCALE_PRICING_H
#define LUASCALE_PRICING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "log.h"
#include "providers/provider.h"
#include "runtime/clock.h"
#include "runtime/executor.h"

enum pricing_capacity {
	PRICING_ON_DEMAND,
	PRICING_SPOT,
};

/* "on-demand" or "spot". */
const char *pricing_capacity_str(enum pricing_capacity c);

struct pricing_key {
	char type[64];      /* an instance type, VM size or machine type */
	char location[64];  /* a region */
	enum pricing_capacity capacity;
};

/*
 * A cloud's fetch: the price per hour of keys[i] into prices[i] (> 0), or
 * 0 when the cloud lists none for it. Blocks (it runs on a worker of the
 * work queue). Returns 0, or -1 with 'st' when the refresh failed as a
 * whole (nothing of it is kept).
 */
typedef int (*pricing_fetch_fn)(void *ctx, const struct pricing_key *keys, size_t n,
				double *prices, struct provider_status *st);

#define PRICING_ON_DEMAND_TTL_NS (12 * 3600 * CLOCK_NS_PER_S)
#define PRICING_SPOT_TTL_NS (3600 * CLOCK_NS_PER_S)
#define PRICING_RETRY_NS (5 * 60 * CLOCK_NS_PER_S)

struct pricing_opts {
	const char *provider;     /* "aws", ...: for the log and the metric */
	pricing_fetch_fn fetch;
	void *ctx;                /* fetch's; borrowed */
	struct clock *clock;      /* monotonic time of the TTLs; borrowed */
	const struct logger *log; /* may be NULL */
	int64_t on_demand_ttl_ns; /* <= 0: PRICING_ON_DEMAND_TTL_NS */
	int64_t spot_ttl_ns;      /* <= 0: PRICING_SPOT_TTL_NS */
	int64_t retry_ns;         /* after a failed refresh; <= 0: PRICING_RETRY_NS */
};

struct pricing;

/* A cache with nothing in it; NULL when out of memory or 'o' lacks a fetch or clock. */
struct pricing *pricing_new(const struct pricing_opts *o);

struct config;

/*
 * pricing_new() as a cloud provider's config sets it: for 'provider'
 * ("aws": its log lines and its metric), fed by 'fetch' (with 'ctx',
 * borrowed) on 'clock', logging to 'log' (may be NULL), its TTLs c's
 * provider.pricing.on_demand_ttl and spot_ttl (c NULL: the defaults).
 */
struct pricing *pricing_from_config(const char *provider, pricing_fetch_fn fetch, void *ctx,
				    struct clock *clock, const struct logger *log,
				    const struct config *c);

/* Waits for a refresh in flight to end, then frees. NULL is a no-op. */
void pricing_free(struct pricing *pr);

/*
 * The last price fetched for 'k' (per hour), or 0 when none is known.
 * Remembers 'k' as wanted, so the next refresh fetches it when it has no
 * price or its price is older than its capacity type's TTL.
 */
double pricing_get(struct pricing *pr, const struct pricing_key *k);

/* True when a refresh would fetch something now: a wanted key is missing
 * or expired, no refresh is in flight, and no failed one asks to wait. */
bool pricing_due(struct pricing *pr);

/*
 * One refresh, blocking: fetches every wanted key that is missing or
 * expired in one call of the cloud's fetch. On failure keeps every price,
 * counts the failure, logs it, and waits the retry interval before the
 * next refresh is due. Returns 0 (also when nothing was due, or another
 * refresh is in flight: this one then does nothing), or -1 with 'st'.
 */
int pricing_refresh(struct pricing *pr, struct provider_status *st);

/* Runs pricing_refresh on 'ex' when one is due (at most one at a time).
 * 'ex' NULL: nothing. */
void pricing_schedule(struct pricing *pr, struct executor *ex);

/* Refreshes that failed so far. */
uint64_t pricing_failures(struct pricing *pr);

/*
 * The capacity type of new nodes as their labels say it:
 * karpenter.sh/capacity-type=spot, eks.amazonaws.com/capacityType=SPOT,
 * cloud.google.com/gke-spot=true, cloud.google.com/gke-preemptible=true,
 * kubernetes.azure.com/scalesetpriority=spot, node.kubernetes.io/lifecycle=spot
 * are spot; anything else is on-demand.
 */
enum pricing_capacity pricing_capacity_of(const struct provider_template *t);

/*
 * Sets tmpl.price_per_hour of each group with an instance type from 'pr'
 * (key: its instance type, 'location', and spot[i] when given, else
 * pricing_capacity_of), and each of its types' (provider_group.types)
 * the same way, then schedules a refresh on 'ex' when one is due. A
 * template without an instance type keeps its price.
 */
void pricing_price_groups(struct pricing *pr, const char *location, struct provider_group *groups,
			  size_t n, const bool *spot, struct executor *ex);

#endif
