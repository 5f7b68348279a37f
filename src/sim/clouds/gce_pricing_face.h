/*
 * sim/gce_pricing_face: the Cloud Billing Catalog API's SKU list of the
 * Compute Engine service (services.skus.list) for the simulated GCE cloud:
 * the Instance Core and Instance Ram SKUs, on-demand and spot, of every
 * machine family the simulated cloud knows, in the regions its MIGs use,
 * among SKUs a pricer must not take (custom, sole-tenant, commitments,
 * egress). The HTTP side is sim/clouds/gce_face.c's.
 */
#ifndef LUASCALE_SIM_GCE_PRICING_FACE_H
#define LUASCALE_SIM_GCE_PRICING_FACE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "sim/clouds/cloud_gce.h"

/* A family's rates in the simulated catalog (USD an hour). */
struct sim_gce_rate {
	const char *family;  /* "e2" */
	double core;         /* per vCPU */
	double ram;          /* per GiB */
};

/* The rate of 'family', or NULL when the catalog has none. Spot is 30% of
 * it, in nanos rounded to the nearest. */
const struct sim_gce_rate *sim_gce_rate_of(const char *family);

/*
 * GET /v1/services/SERVICE/skus with the query's pageToken, pageSize and
 * currencyCode (each may be NULL): the page's answer (cJSON_Delete it) with
 * 200 in *code, or NULL with the HTTP status in *code and Google's message
 * in 'msg' (404 for another service, 400 for a bad page size, page token
 * or currency).
 */
cJSON *gce_pricing_face_skus(const struct sim_gce *gce, const char *service,
			     const char *page_token, const char *page_size, const char *currency,
			     int *code, char *msg, size_t msg_len);

#endif
