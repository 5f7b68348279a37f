/*
 * sim/gce_face: the simulated cloud served as GCE (libmicrohttpd, a thread
 * per connection, 127.0.0.1 only): the compute v1 endpoints a MIG provider
 * calls, in the discovery document's JSON shapes, behind Bearer tokens that
 * its own OAuth token endpoint (RS256 JWT bearer grant, verified against a
 * service-account key made at start) and metadata server hand out.
 * A thin wire layer over sim/clouds/cloud_gce.c.
 *
 * Served on one port (P the project, L a zones/Z or regions/R location):
 *   GET  /compute/v1/projects/P/L/instanceGroupManagers[/IGM]
 *   GET  /compute/v1/projects/P/aggregated/instanceGroupManagers[?filter=name eq RE]
 *   POST /compute/v1/projects/P/L/instanceGroupManagers/IGM/{listManagedInstances,
 *        createInstances,resize,deleteInstances}   (the regional face:
 *        listManagedInstances also as listManagedInstances on regions/R)
 *   GET  /compute/v1/projects/P/L/operations/OP, POST .../OP/wait
 *   GET  /compute/v1/projects/P/global/instanceTemplates/T, regions/R/instanceTemplates/T
 *   GET  /compute/v1/projects/P/zones/Z/machineTypes/MT
 *   GET  /v1/services/S/skus      the Cloud Billing Catalog (sim/clouds/gce_pricing_face.c)
 *   POST /token                   grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer
 *   GET  /computeMetadata/v1/...  token, email, project-id, zone (Metadata-Flavor: Google)
 * Every compute call is charged to the cloud's API limit and throttle
 * faults (403 rateLimitExceeded, or 429 as the scenario says).
 */
#ifndef LUASCALE_SIM_GCE_FACE_H
#define LUASCALE_SIM_GCE_FACE_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "errbuf.h"
#include "log.h"
#include "sim/clouds/cloud_gce.h"
#include "sim/clouds/sim_cloud_kind.h"

struct gce_face;

/*
 * GCE as the simulator's shared code sees it (in gce_kind.c): its scenario
 * section and its flavour in a world. sim_world_flavour(w, &sim_cloud_gce) is the world's struct sim_gce.
 */
extern const struct sim_cloud_kind sim_cloud_gce;
/* This face as `luascale sim` serves it: its --gce-* options (end of gce_face.c). */
extern const struct sim_cloud_face sim_face_gce;

struct gce_face_opts {
	int port;                 /* 0: a free port */
	int64_t latency_ns;       /* > 0: every answer waits this long first */
	const struct logger *log; /* borrowed; NULL: silent (never logs secrets) */
};

/*
 * Serves 'gce' (borrowed; it and its cloud must outlive the face) on
 * 127.0.0.1:o->port, with a new RSA 2048 service-account key. NULL with a
 * message (port in use, key generation failed, out of memory).
 */
struct gce_face *gce_face_new(struct sim_gce *gce, const struct gce_face_opts *o,
			      struct errbuf *err);

/* The port it listens on. */
int gce_face_port(const struct gce_face *f);

/*
 * Writes the service-account JSON key (type service_account, project_id,
 * private_key_id, private_key PEM, client_email, client_id, token_uri =
 * this face's /token) to 'path', mode 0600. 0, or -1 with a message.
 */
int gce_face_write_key(const struct gce_face *f, const char *path, struct errbuf *err);

/*
 * Writes KEY='value' lines to 'path' (mode 0600): GOOGLE_CLOUD_PROJECT,
 * LUASCALE_SIM_GCE_ENDPOINT (the compute root, .../compute/v1/),
 * LUASCALE_SIM_GCE_TOKEN_URI, LUASCALE_SIM_GCE_BILLING_ENDPOINT (the
 * catalog's root, .../), GCE_METADATA_HOST (127.0.0.1:PORT) and
 * GOOGLE_APPLICATION_CREDENTIALS ('key_path'). 0, or -1 with a message.
 */
int gce_face_write_env(const struct gce_face *f, const char *path, const char *key_path,
		       struct errbuf *err);

/* Stops serving (running requests finish). NULL is ignored. */
void gce_face_free(struct gce_face *f);

/* ---- pieces, exposed for tests ---- */

/* What an assertion must say. */
struct gce_jwt_want {
	const char *aud;          /* the token endpoint's URL */
	const char *iss;          /* the service account's email */
	const char *kid;          /* the key's id: a header kid must match it (NULL: any) */
	int64_t now;              /* unix seconds */
};

/*
 * Verifies a JWT bearer assertion: three base64url parts, header alg
 * RS256, claims iss, aud, iat, exp (iat at most 5 minutes ahead of now,
 * exp after now, exp - iat at most an hour) and the RS256 signature
 * against 'pub'. Copies the scope claim (may be absent: "") into 'scope'.
 * 0, or -1 with why (no secret in it).
 */
int gce_jwt_verify(EVP_PKEY *pub, const char *jwt, const struct gce_jwt_want *w, char *scope,
		   size_t scope_size, struct errbuf *err);

/* Decodes base64url (padding optional) into 'out' (cap bytes). The length, or -1. */
long gce_b64url_decode(const char *in, size_t len, unsigned char *out, size_t cap);

#endif
