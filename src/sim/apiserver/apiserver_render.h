/*
 * sim/apiserver_render: the simulated world as Kubernetes JSON — Nodes,
 * Pods, PodDisruptionBudgets, DaemonSets, Namespaces and the claims,
 * volumes and classes of its StatefulSets built from the C structs, Status bodies, server-side Tables for kubectl, and the JSON
 * merge patch (RFC 7386). No I/O and no locking: callers hold what they read.
 */
#ifndef LUASCALE_SIM_APISERVER_RENDER_H
#define LUASCALE_SIM_APISERVER_RENDER_H

#include <stdint.h>

#include "buf.h"
#include "sim/apiserver/apiserver_store.h"
#include "sim/world/cluster.h"

struct cJSON;

/* The kubelet version nodes report. */
#define APISERVER_KUBELET_VERSION "v1.32.0-luascale-sim"
#define APISERVER_KERNEL_VERSION "6.1.0-luascale-sim"
#define APISERVER_OS_IMAGE "luascale simulated node"
#define APISERVER_RUNTIME_VERSION "containerd://1.7.0-luascale-sim"

/* Objects (metadata first, no uid or resourceVersion: the store sets
 * them). NULL when out of memory. */
struct cJSON *apiserver_render_node(const struct sim_change *ch);
struct cJSON *apiserver_render_pod(const struct sim_change *ch);
struct cJSON *apiserver_render_pdb(const struct pdb *b, const struct sim_pdb_status *st,
				   int64_t created);
struct cJSON *apiserver_render_daemonset(const struct sim_pod_spec *spec,
					 const struct sim_spec_counts *counts, int64_t created);
struct cJSON *apiserver_render_namespace(const char *name, int64_t created);
/* A world's claim, its bound volume (NULL while it is unbound) and a
 * class (WaitForFirstConsumer, the simulated CSI driver's). */
struct cJSON *apiserver_render_pvc(const struct sim_claim_view *c, int64_t created);
struct cJSON *apiserver_render_pv(const struct sim_claim_view *c, int64_t created);
struct cJSON *apiserver_render_storage_class(const char *name, int64_t created);

/* A node's InternalIP and a pod's IP: stable, made from their names
 * (out: at least 16 bytes). */
void apiserver_node_ip(const char *node, char *out, size_t len);
void apiserver_pod_ip(const char *ns, const char *name, char *out, size_t len);

/* A deterministic uid for an object the simulation owns ("kind/ns/name"). */
void apiserver_uid_for(const char *kind, const char *ns, const char *name, char *out,
		       size_t len);

/* kubectl's age: "45s", "3m20s", "5h", "12d" (out: at least 32 bytes). */
void apiserver_human_age(int64_t seconds, char *out, size_t len);

/*
 * A metav1 Status. 'reason' e.g. "NotFound"; 'kind'/'name' fill details
 * when not NULL. Appends to 'b'.
 */
int apiserver_render_status(struct buf *b, int code, const char *reason, const char *message,
			    const char *kind, const char *name);

/* The same with details: group (NULL or "": none), kind, name, causes (a
 * JSON array, or NULL) and retryAfterSeconds (0: none). */
int apiserver_render_status_details(struct buf *b, int code, const char *reason,
				    const char *message, const char *group, const char *kind,
				    const char *name, const char *causes_json, int retry_after);

/*
 * A meta.k8s.io/v1 Table of 'r'. Write the head (with columnDefinitions
 * unless 'no_headers'), then rows separated by commas, then the tail.
 * Rows carry a PartialObjectMetadata. 'now' (unix s) dates the AGE cells.
 */
int apiserver_table_head(struct buf *b, enum apiserver_resource r, bool no_headers,
			 uint64_t rv, const char *cont, long remaining);
int apiserver_table_row(struct buf *b, enum apiserver_resource r, const struct apiserver_ver *v,
			int64_t now);
int apiserver_table_tail(struct buf *b);

/* Applies a JSON merge patch to 'target' (changed in place). 'patch' is
 * borrowed. Returns 'target', or NULL when out of memory. */
struct cJSON *apiserver_merge_patch(struct cJSON *target, const struct cJSON *patch);

#endif
