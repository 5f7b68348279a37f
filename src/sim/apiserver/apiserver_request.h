/*
 * sim/apiserver_request: a request as routed (struct resreq), what a
 * handler answers (struct reply, Status answers), a write's options
 * (dryRun, fieldValidation), its patch by content type, and the schema of
 * the kinds clients write. The layer every handler and codec answers
 * through; it knows no server state and no store.
 */
#ifndef LUASCALE_SIM_APISERVER_REQUEST_H
#define LUASCALE_SIM_APISERVER_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "sim/apiserver/apiserver_store.h"

struct MHD_Connection;
struct cJSON;
struct watch;

/* What a handler answers. */
struct reply {
	int code;
	struct buf body;             /* JSON unless content_type says otherwise */
	const char *content_type;    /* NULL: application/json */
	const char *retry_after;     /* Retry-After header, or NULL */
	char warning[600];           /* Warning header, or "" */
	struct watch *watch;         /* a watch stream instead of a body */
};

/* A request for a resource, as routed. */
struct resreq {
	const char *method;
	enum apiserver_resource res;
	const char *ns;              /* NULL: all namespaces (or cluster-scoped) */
	const char *name;            /* NULL: the collection */
	const char *sub;             /* subresource ("eviction"), or NULL */
	const char *body;            /* the request body ("" when none) */
	size_t body_len;
	const char *content_type;    /* "" when none */
	bool table;                  /* Accept asks for a Table */
	bool watch;                  /* a watch: ?watch= true, or a /watch/ path */
	struct MHD_Connection *conn; /* for query parameters */
};

/* A boolean query parameter as the real server reads one: absent false,
 * "0" and "false" (any case) false, anything else true. */
bool apiserver_param_bool(const char *v);

/* Fills 'out' with a Status answer. */
void apiserver_reply_status(struct reply *out, int code, const char *reason, const char *message,
			    const char *kind, const char *name);

/* A query parameter of the request, or NULL. */
const char *apiserver_query(const struct resreq *rq, const char *key);

/* ---- a write's options, patch and schema ---- */

/* dryRun (query, or a DeleteOptions body for a delete or an eviction): 1
 * when "All", 0 when absent, -1 answered 422 for another value. */
int apiserver_dry_run(const struct resreq *rq, const char *options_kind, struct reply *out);

/* Answers 415 with the patch types the server takes. */
void apiserver_unsupported_media(struct reply *out);

/* 'cur' (taken; NULL: nothing yet, for an apply) with the request's patch
 * applied by its content type: a new tree, or NULL answered (415, 400, 422). */
struct cJSON *apiserver_patched(const struct resreq *rq, struct cJSON *cur, struct reply *out);

/* Answers with 'o' (borrowed) at resourceVersion 'rv' (0: none): a dry run's result. */
void apiserver_reply_tree(struct reply *out, int code, struct cJSON *o, uint64_t rv);

/* Checks an object a client writes against its kind's schema: a wrong
 * type is 400; unknown fields are dropped and, by fieldValidation, a
 * Warning, a 400 (Strict) or nothing. 0, or -1 answered. */
int apiserver_validate_object(const struct resreq *rq, struct cJSON *o, struct reply *out);

/* Real time. */
int64_t apiserver_now_ns(void);
int64_t apiserver_now_wall(void);

#endif
