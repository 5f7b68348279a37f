/*
 * providers/gce: the GCE provider's prices (gce_pricing.c) — its price
 * cache (providers/pricing.h), fed by the Cloud Billing Catalog API's SKUs
 * of the Compute Engine service: a machine's price an hour is its vCPUs
 * times its family's Instance Core rate plus its memory (GiB) times the
 * family's Instance Ram rate, on-demand or spot (Preemptible). It does not
 * read machine types (gce.c does, and tells it their sizes).
 */
#ifndef LUASCALE_GCE_PRICING_H
#define LUASCALE_GCE_PRICING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "config.h"
#include "errbuf.h"
#include "log.h"
#include "providers/pricing.h"
#include "providers/provider.h"
#include "runtime/clock.h"
#include "runtime/executor.h"

#define GCE_DEFAULT_BILLING "https://cloudbilling.googleapis.com/"
#define GCE_COMPUTE_SERVICE "6F81-5844-456A" /* the Compute Engine service's id in the catalog */
#define GCE_PRICING_MAX_PAGES 100            /* of up to 5000 SKUs each */
/* The OAuth scope the catalog takes (besides cloud-platform and cloud-billing). */
#define GCE_BILLING_SCOPE "https://www.googleapis.com/auth/cloud-billing.readonly"

/* One machine family's rates in one region for one capacity type: what a
 * refresh looks for in the catalog. */
struct gce_rate {
	char family[16];                /* "e2", "n2d", "n1" */
	char region[64];                /* "us-central1" */
	enum pricing_capacity capacity; /* OnDemand, or Preemptible for spot */
	double core;                    /* USD per vCPU an hour; 0 until found */
	double ram;                     /* USD per GiB an hour; 0 until found */
};

/* The machine family of 'machine_type' ("n2d-standard-8" -> "n2d") into
 * 'family'. 0, or -1 when it names none (no "-", not [a-z0-9], too long). */
int gce_pricing_family(const char *machine_type, char *family, size_t len);

/*
 * Is 'machine_type' billed per instance rather than per vCPU and GiB?
 * The shared-core types (f1-micro, g1-small, e2-micro, e2-small,
 * e2-medium): the catalog bills f1/g1 with SKUs of their own and e2's with
 * a fraction of a vCPU that machineTypes.get does not give. They are left
 * unpriced (the config's price_per_hour, else none).
 */
bool gce_pricing_per_instance(const char *machine_type);

/*
 * One page of services.skus.list ('doc', the answer; 'page' counts from 1,
 * for messages): every SKU that is the Instance Core or Instance Ram of a
 * family, region and capacity type in rates[0..n) sets that rate (the
 * highest when two SKUs do). Its nextPageToken goes to 'next' ("" when
 * none). 0, or -1 with 'err' naming the page, the SKU (index, name,
 * description) and the field when the page or a SKU that matches is
 * malformed: a missing or mistyped field, a unit other than "h" (core) or
 * "GiBy.h" (RAM), a currency other than USD, a negative or absurd price
 * (1000 USD an hour or more). Fields absent from a SKU that does not match
 * are proto3 defaults; mistyped ones are errors wherever they are.
 */
int gce_pricing_page(const cJSON *doc, int page, struct gce_rate *rates, size_t n, char *next,
		     size_t next_len, struct errbuf *err);

/* The price an hour of a machine of 'cpus' vCPUs and 'memory_mb' MiB at
 * rate 'r': cpus x core + memory_mb / 1024 x ram; 0 when a rate is missing
 * or the size is not positive. */
double gce_pricing_machine(const struct gce_rate *r, int cpus, int64_t memory_mb);

/*
 * An authorized GET of the absolute URL 'url' through the provider's read
 * bucket and OAuth token: 0 with its JSON answer in *out (cJSON_Delete it),
 * or -1 with 'st' (a malformed answer too).
 */
typedef int (*gce_pricing_get_fn)(void *ctx, const char *url, cJSON **out,
				  struct provider_status *st);

struct gce_pricing_opts {
	const char *billing;          /* the catalog's root URL (GCE_DEFAULT_BILLING when NULL) */
	gce_pricing_get_fn get;
	void *ctx;                    /* get's; borrowed */
	struct clock *clock;          /* borrowed */
	const struct logger *log;     /* may be NULL */
	const struct config *config;  /* provider.pricing TTLs; may be NULL */
};

struct gce_pricing;

/* A price cache over the catalog; NULL with 'err' when out of memory or
 * 'o' lacks get or clock. */
struct gce_pricing *gce_pricing_new(const struct gce_pricing_opts *o, struct errbuf *err);

/* Waits for a refresh in flight, then frees. NULL is a no-op. */
void gce_pricing_free(struct gce_pricing *gp);

/*
 * What machineTypes.get said of 'machine_type': its vCPUs and memory, and
 * whether it has accelerators (their SKUs are not summed: such a type is
 * left unpriced, like a per-instance one). A refresh prices only types
 * told of here.
 */
void gce_pricing_machine_type(struct gce_pricing *gp, const char *machine_type, int cpus,
			      int64_t memory_mb, bool accelerators);

/*
 * Sets tmpl.price_per_hour of each group whose tmpl.instance_type has a
 * price in the cache: its region regions[i] ("" or NULL: unpriced), spot
 * when spot[i] (NULL: as pricing_capacity_of says). Then schedules a
 * refresh on 'ex' when one is due ('ex' NULL: none).
 */
void gce_pricing_groups(struct gce_pricing *gp, struct provider_group *groups, size_t n,
			const char *const *regions, const bool *spot, struct executor *ex);

/* One refresh now, blocking (pricing_refresh). 0, or -1 with 'st'. */
int gce_pricing_refresh(struct gce_pricing *gp, struct provider_status *st);

/* Refreshes that failed so far. */
uint64_t gce_pricing_failures(struct gce_pricing *gp);

#endif
