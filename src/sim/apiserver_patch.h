/*
 * sim/apiserver_patch: the patch formats the simulated API server takes —
 * JSON Patch (RFC 6902), JSON merge patch (RFC 7386), strategic merge
 * patch for the fields it serves, and server-side apply's body (YAML or
 * JSON). Pure functions on cJSON trees: no HTTP, no store.
 */
#ifndef LUASCALE_SIM_APISERVER_PATCH_H
#define LUASCALE_SIM_APISERVER_PATCH_H

#include <stddef.h>

#include "errbuf.h"

struct cJSON;

enum apiserver_patch_type {
	APISERVER_PATCH_UNKNOWN,
	APISERVER_PATCH_JSON,      /* application/json-patch+json */
	APISERVER_PATCH_MERGE,     /* application/merge-patch+json */
	APISERVER_PATCH_STRATEGIC, /* application/strategic-merge-patch+json */
	APISERVER_PATCH_APPLY,     /* application/apply-patch+yaml */
};

/* The patch type a Content-Type names (parameters such as "; charset="
 * ignored), UNKNOWN for any other. */
enum apiserver_patch_type apiserver_patch_type(const char *content_type);

/*
 * Applies the RFC 6902 operations 'ops' (an array) to *doc in place; *doc
 * may be replaced (an operation on the root). Returns 0; -1 when 'ops' is
 * not a well-formed patch (a bad request); -2 when an operation does not
 * apply (a missing path, a failed test); both with a message. On error
 * *doc may be partly changed: apply to a copy.
 */
int apiserver_json_patch(struct cJSON **doc, const struct cJSON *ops, struct errbuf *err);

/*
 * Applies a strategic merge patch to 'target' in place and returns it (a
 * new root when 'patch' is not an object). Like a merge patch, plus the
 * directives: "$patch": "delete" / "replace" on a map, "$retainKeys",
 * "$setElementOrder/..." (ignored), metadata.finalizers merged as a set
 * with "$deleteFromPrimitiveList/finalizers", metadata.ownerReferences
 * merged by uid. Every other list is replaced, as the served kinds
 * declare them. NULL when out of memory.
 */
struct cJSON *apiserver_strategic_merge(struct cJSON *target, const struct cJSON *patch);

/*
 * Parses a server-side apply body: JSON, or one YAML document (its
 * scalars typed by the YAML 1.2 core schema). A new tree the caller
 * frees, or NULL with a message.
 */
struct cJSON *apiserver_parse_apply(const char *body, size_t len, struct errbuf *err);

#endif
