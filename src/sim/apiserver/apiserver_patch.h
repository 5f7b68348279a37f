/*
 * sim/apiserver_patch: the patch formats the simulated API server takes —
 * JSON Patch (RFC 6902), JSON merge patch (RFC 7386), strategic merge
 * patch for the fields it serves, and server-side apply's body (YAML or
 * JSON). Pure functions on cJSON trees: no HTTP, no store.
 */
#ifndef LUASCALE_SIM_APISERVER_PATCH_H
#define LUASCALE_SIM_APISERVER_PATCH_H

#include <stdbool.h>
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

/* What apiserver_strategic_merge returns when the patch does not apply,
 * and the status the real server answers with. */
#define APISERVER_SMP_BAD (-1)     /* a malformed directive: 400 BadRequest */
#define APISERVER_SMP_INVALID (-2) /* lists of lists: 422 */
#define APISERVER_SMP_FAILED (-3)  /* an element without its merge key, ...: 500 */

/*
 * Applies strategic merge patch 'patch' to object 'target' in place, as
 * the Kubernetes API server does for the kind 'kind' of 'api_version'
 * ("v1", "apps/v1"; either NULL: a kind not described, whose metadata is
 * still an ObjectMeta): maps merge, null removes, and a list merges by the
 * patch strategy and merge key the Kubernetes types declare for it
 * (containers by name, env by name, ports by containerPort, volumeMounts
 * by mountPath, conditions by type, ...; finalizers as a set) or, without
 * one, is replaced whole (tolerations, taints). The directives: "$patch"
 * delete / replace on a map or a list element, "$retainKeys",
 * "$setElementOrder/<list>" and "$deleteFromPrimitiveList/<list>", with the
 * server's order of merged lists. Returns 0, or one of APISERVER_SMP_*
 * with the server's message; 'target' may then be partly changed.
 */
int apiserver_strategic_merge(struct cJSON *target, const struct cJSON *patch, const char *api_version,
			      const char *kind, struct errbuf *err);

/*
 * The patch strategy ("merge", "merge,retainKeys", "retainKeys",
 * "replace") and merge key (NULL: none) the Kubernetes types declare for
 * field 'field' of message 'type' ("k8s.io.api.core.v1.PodSpec"), as the
 * OpenAPI's x-kubernetes-patch-strategy and -merge-key say; false when
 * they declare none.
 */
bool apiserver_patch_meta(const char *type, const char *field, const char **strategy, const char **key);

/*
 * Parses a server-side apply body: JSON, or one YAML document (its
 * scalars typed by the YAML 1.2 core schema). A new tree the caller
 * frees, or NULL with a message.
 */
struct cJSON *apiserver_parse_apply(const char *body, size_t len, struct errbuf *err);

#endif
