/*
 * sim/apiserver_openapi: the simulated API server's OpenAPI documents —
 * /openapi/v2 (Swagger 2.0, JSON) and /openapi/v3 (its index and one
 * document per group-version) — made from the same protobuf description
 * the codec reads (apiserver_proto.h) and the resource table the server
 * routes by, so the schemas name exactly the fields it serves.
 */
#ifndef LUASCALE_SIM_APISERVER_OPENAPI_H
#define LUASCALE_SIM_APISERVER_OPENAPI_H

#include "buf.h"

struct reply;

/* The OpenAPI v2 document. 0, or -1 out of memory. */
int apiserver_openapi_v2(struct buf *b);

/* The OpenAPI v3 index: every served group-version with its
 * serverRelativeURL (carrying a hash of its document). 0, or -1. */
int apiserver_openapi_v3_index(struct buf *b);

/* The OpenAPI v3 document of "api/v1" or "apis/GROUP/v1". 0, -1 when
 * the server does not serve that group-version (or out of memory). */
int apiserver_openapi_v3(const char *gv, struct buf *b);

/*
 * Answers GET /openapi/...: 'segs' (n of them) follow "openapi". JSON
 * only: an Accept that takes only the protobuf forms gets 406, as from a
 * real server asked for a type it does not have.
 */
void apiserver_openapi_route(const char *accept, char **segs, int n, struct reply *out);

#endif
