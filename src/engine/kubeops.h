/*
 * kubeops: the Kubernetes writes the actuator needs, as an interface — the
 * real client (src/kube/) and the simulated cluster (src/sim/) implement it.
 * Calls are synchronous from the caller's point of view and report typed
 * outcomes; an eviction refused by a PodDisruptionBudget is its own code.
 */
#ifndef LUASCALE_KUBEOPS_H
#define LUASCALE_KUBEOPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

enum kube_result {
	KUBE_OK = 0,
	KUBE_PDB_BLOCKED, /* eviction: 429, a PodDisruptionBudget says not now */
	KUBE_NOT_FOUND,   /* already gone: for evictions and deletes, that is success */
	KUBE_CONFLICT,    /* 409 after retries */
	KUBE_THROTTLED,   /* 429 from the API server's own limits */
	KUBE_ERROR,       /* anything else; message says what */
};

struct kube_status {
	enum kube_result code;
	char message[256];
};

/* A pod still on a node being drained. */
struct kube_pod_ref {
	char ns[64];
	char name[256];
	bool evictable;   /* must leave before the node goes: not DaemonSet, mirror
			   * or static, not finished */
	bool terminating; /* already being deleted (deletionTimestamp): wait, do not evict again */
};

struct kubeops_ops {
	int (*cordon)(void *ctx, const char *node, bool unschedulable, struct kube_status *st);
	/* value NULL removes the key */
	int (*label)(void *ctx, const char *node, const char *key, const char *value,
		     struct kube_status *st);
	int (*annotate)(void *ctx, const char *node, const char *key, const char *value,
			struct kube_status *st);
	int (*taint)(void *ctx, const char *node, const char *key, const char *value,
		     enum taint_effect effect, bool remove, struct kube_status *st);
	/* Eviction API; grace_s < 0: the pod's own grace period. */
	int (*evict)(void *ctx, const char *ns, const char *pod, int64_t grace_s,
		     struct kube_status *st);
	int (*delete_node)(void *ctx, const char *node, struct kube_status *st);
	/* The unfinished pods bound to 'node' (caller frees *pods). */
	int (*node_pods)(void *ctx, const char *node, struct kube_pod_ref **pods, size_t *n,
			 struct kube_status *st);
	/* A Kubernetes Event on the node: type "Normal" or "Warning". */
	int (*event)(void *ctx, const char *node, const char *type, const char *reason,
		     const char *message);
};

struct kubeops {
	const struct kubeops_ops *ops;
	void *ctx;
};

#endif
