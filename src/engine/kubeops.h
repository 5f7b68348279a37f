/*
 * kubeops: the Kubernetes writes the actuator needs, as an interface — the
 * real client (src/kube/) and the simulated cluster (src/sim/) implement it.
 * Calls are synchronous from the caller's point of view and report typed
 * outcomes; an eviction refused by a PodDisruptionBudget is its own code,
 * told apart from the API server's own 429s by what the server said.
 */
#ifndef LUASCALE_KUBEOPS_H
#define LUASCALE_KUBEOPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "model.h"

enum kube_result {
	KUBE_OK = 0,
	KUBE_PDB_BLOCKED, /* eviction: 429 whose Status names a disruption budget: not now */
	KUBE_NOT_FOUND,   /* already gone: for evictions and deletes, that is success */
	KUBE_CONFLICT,    /* 409 after retries */
	KUBE_THROTTLED,   /* 429 from the API server's own limits */
	KUBE_ERROR,       /* anything else; message says what */
};

struct kube_status {
	enum kube_result code;
	char message[256];        /* what the server said (Status reason and message) */
	int64_t retry_after_s;    /* a 429's Status details.retryAfterSeconds, 0 when absent */
};

/* A pod still on a node being drained. */
struct kube_pod_ref {
	char ns[64];
	char name[256];
	bool evictable;   /* must leave before the node goes: not DaemonSet, mirror
			   * or static, not finished */
	bool terminating; /* already being deleted (deletionTimestamp): wait, do not evict again */
	struct pod *pod;  /* the pod as fetched, decoded by the model (a pod_clone()
			   * block owned by the list), so an eviction is checked
			   * against the pod as it is now; NULL when not known,
			   * and then a drain evicts nothing: it cannot check it */
};

/* Frees a node_pods() list and the pods it owns. NULL is a no-op. */
static inline void kube_pod_refs_free(struct kube_pod_ref *v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++)
		free(v[i].pod);
	free(v);
}

struct kubeops_ops {
	int (*cordon)(void *ctx, const char *node, bool unschedulable, struct kube_status *st);
	/* Optional (NULL: the caller annotates, then cordons): cordons or
	 * uncordons and sets the annotations 'marks' (value NULL removes the
	 * key) in one write, so the mark and the cordon never part. */
	int (*cordon_mark)(void *ctx, const char *node, bool unschedulable, const struct kv *marks,
			   size_t n_marks, struct kube_status *st);
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
	/* The unfinished pods bound to 'node' (caller frees with kube_pod_refs_free). */
	int (*node_pods)(void *ctx, const char *node, struct kube_pod_ref **pods, size_t *n,
			 struct kube_status *st);
	/* A Kubernetes Event on the node: type "Normal" or "Warning". */
	int (*event)(void *ctx, const char *node, const char *type, const char *reason,
		     const char *message);
	/* Optional (NULL: binding is not offered): binds pending pod ns/pod
	 * to 'node' through the Binding subresource, as a scheduler does.
	 * 'uid' (may be NULL or "": none) is the pod's metadata.uid, a
	 * precondition: a pod recreated under the same name is not bound.
	 * KUBE_CONFLICT when the pod is bound already (or the uid differs),
	 * KUBE_NOT_FOUND when the pod or the node is gone. */
	int (*bind)(void *ctx, const char *ns, const char *pod, const char *uid,
		    const char *node, struct kube_status *st);
};

struct kubeops {
	const struct kubeops_ops *ops;
	void *ctx;
};

#endif
