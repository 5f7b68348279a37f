/*
 * sim/azure_face: the simulated cloud served as Azure (libmicrohttpd, a
 * thread per connection, 127.0.0.1 only): the Resource Manager endpoints a
 * VM scale set provider calls, in ARM's JSON shapes and api-versions,
 * behind Bearer tokens that its own IMDS and AAD token endpoint hand out.
 * A thin wire layer over sim/clouds/cloud_azure.c.
 *
 * Served on one port (S the subscription, G the resource group, SS a scale set):
 *   GET   /subscriptions/S/providers/Microsoft.Compute/virtualMachineScaleSets
 *   GET   /subscriptions/S/resourceGroups/G/providers/Microsoft.Compute/virtualMachineScaleSets[/SS]
 *   PUT, PATCH .../virtualMachineScaleSets/SS      sku.capacity (If-Match honoured)
 *   POST  .../virtualMachineScaleSets/SS/delete    {"instanceIds":[..]}
 *   GET   .../virtualMachineScaleSets/SS/virtualMachines[/ID]  ($expand=instanceView,
 *         paged with nextLink; $top lowers the page size)
 *   GET   /subscriptions/S/providers/Microsoft.Compute/locations/L/operations/OP
 *         (Azure-AsyncOperation; with monitor=true, the Location form)
 *   GET   /metadata/identity/oauth2/token, /metadata/instance     (IMDS, Metadata: true)
 *   POST  /TENANT/oauth2/v2.0/token     client_credentials: client_secret or client_assertion
 *   GET   /TENANT/v2.0/.well-known/openid-configuration
 *   GET   /api/retail/prices   the Retail Prices API (no token; sim/clouds/azure_pricing_face.h)
 *   GET   /subscriptions/S/providers/Microsoft.Compute/skus   the Resource SKUs API
 *         (api-version 2021-07-01 or 2019-04-01; $filter=location eq 'L'; nextLink)
 * With an AKS cluster in the scenario (CG its resource group, C its name;
 * G is then its node resource group), Microsoft.ContainerService at its own
 * api-versions (2022-11-01 to 2025-01-01):
 *   GET   /subscriptions/S/resourceGroups/CG/providers/Microsoft.ContainerService/managedClusters/C
 *         (properties.nodeResourceGroup, agentPoolProfiles)
 *   GET   .../managedClusters/C/agentPools[/P]   a pool's count is its scale set's capacity
 *   PUT   .../agentPools/P            properties.count (If-Match honoured; 409 while an
 *         operation runs, 400 while enableAutoScaling), Azure-AsyncOperation
 *   POST  .../agentPools/P/deleteMachines   {"machineNames":[computer names]}, 202
 *   GET   /subscriptions/S/providers/Microsoft.ContainerService/locations/L/operations/OP
 * The AAD endpoints are also served over TLS on a second port (a
 * self-signed certificate for 127.0.0.1), as Azure's libraries refuse an
 * authority that is not https. Every ARM call is charged to the cloud's
 * API limit and throttle faults (429 with Retry-After).
 */
#ifndef LUASCALE_SIM_AZURE_FACE_H
#define LUASCALE_SIM_AZURE_FACE_H

#include <stdint.h>

#include "errbuf.h"
#include "log.h"
#include "sim/clouds/cloud_azure.h"
#include "sim/clouds/sim_cloud_kind.h"

struct azure_face;

/*
 * Azure as the simulator's shared code sees it (in azure_kind.c): its scenario
 * section and its flavour in a world. sim_world_flavour(w, &sim_cloud_azure) is the world's struct sim_azure.
 */
extern const struct sim_cloud_kind sim_cloud_azure;
/* This face as `luascale sim` serves it: its --azure-* options (end of azure_face.c). */
extern const struct sim_cloud_face sim_face_azure;

struct azure_face_opts {
	int port;                 /* 0: a free port */
	int tls_port;             /* the AAD endpoints over TLS; 0: a free port, -1: none */
	int64_t latency_ns;       /* > 0: every answer waits this long first */
	const struct logger *log; /* borrowed; NULL: silent (never logs secrets) */
};

/*
 * Serves 'az' (borrowed; it and its cloud must outlive the face) on
 * 127.0.0.1:o->port, and its AAD endpoints over TLS on o->tls_port with a
 * new self-signed certificate. Makes a federated token (what a projected
 * service-account token would be) for workload identity. NULL with a
 * message (port in use, TLS unavailable, out of memory).
 */
struct azure_face *azure_face_new(struct sim_azure *az, const struct azure_face_opts *o,
				  struct errbuf *err);

/* The ports it listens on (TLS: -1 without). */
int azure_face_port(const struct azure_face *f);
int azure_face_tls_port(const struct azure_face *f);

/* Writes the federated token the token endpoint accepts as a client
 * assertion to 'path', mode 0600. 0, or -1 with a message. */
int azure_face_write_token(const struct azure_face *f, const char *path, struct errbuf *err);

/* Writes the TLS certificate (PEM) to 'path', for a client's CA bundle. 0 or -1. */
int azure_face_write_ca(const struct azure_face *f, const char *path, struct errbuf *err);

/*
 * Writes KEY='value' lines to 'path' (mode 0600):
 * LUASCALE_SIM_AZURE_ARM_ENDPOINT (http://127.0.0.1:PORT/),
 * AZURE_AUTHORITY_HOST (the same), AZURE_POD_IDENTITY_AUTHORITY_HOST
 * (http://127.0.0.1:PORT, the IMDS), ARM_SUBSCRIPTION_ID,
 * ARM_RESOURCE_GROUP, AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET
 * and AZURE_FEDERATED_TOKEN_FILE ('token_path'). 0, or -1 with a message.
 */
int azure_face_write_env(const struct azure_face *f, const char *path, const char *token_path,
			 struct errbuf *err);

/* Stops serving (running requests finish). NULL is ignored. */
void azure_face_free(struct azure_face *f);

/* ---- pieces, exposed for tests ---- */

/* Is 'v' an api-version the face serves for Microsoft.Compute? */
bool azure_api_version_ok(const char *v);

/*
 * Does an If-Match header value ('if_match', NULL: none) allow a write to
 * a resource whose etag is 'etag' (quotes included)? "*" and an equal
 * etag (quoted or not) do.
 */
bool azure_if_match_ok(const char *if_match, const char *etag);

#endif
