/*
 * model: the cluster as the engine sees it — a snapshot of nodes, pods,
 * PodDisruptionBudgets, volumes and DaemonSets (the structs of objects.h,
 * decoded from Kubernetes JSON by model_decode.c) and node groups, in one
 * arena per snapshot. Only what decisions need is kept. It does no I/O
 * beyond reading a state file; scheduling math is in sched.c.
 */
#ifndef LUASCALE_MODEL_H
#define LUASCALE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"
#include "objects.h"
#include "selector.h"

struct arena;
struct cJSON;

/* ---- node groups ---- */

struct node_template {
	struct resources allocatable;
	struct kvlist labels;
	struct taint *taints;
	size_t n_taints;
};

/* A node not Ready this long after it was created no longer counts as
 * starting (the Cluster Autoscaler's max node startup time). */
#define MODEL_NODE_STARTUP_S (15 * 60)

struct node_group {
	const char *name;
	int min;
	int max;
	double price_per_hour;
	bool price_from_cloud;    /* price_per_hour is the cloud's (the config gave none) */
	int64_t expire_after;     /* seconds a node of the group may live before a policy
				   * replaces it (config disruption.expire_after); 0: never */
	struct kvlist selector;   /* node labels that place a node in this group */
	struct node_template tmpl;
	/* The cloud's instances of the group, as Node spec.providerID: a node
	 * whose providerID is here is in the group whatever its labels (the
	 * selector places the others). Sorted by strcasecmp, or none. */
	const char *const *provider_ids;
	size_t n_provider_ids;
	/* Of those instances, the ones the cloud says are no longer what the
	 * group launches now (an older image or launch template version):
	 * key the providerID, value why. Sorted by key (strcasecmp), or none. */
	const struct kv *outdated;
	size_t n_outdated;
	/* What the operator wrote in the group's template (the config's or a
	 * scenario's labels and taints, the selector's labels aside): drift
	 * compares a node with these alone, never with what the cloud's
	 * description of the group added (derived labels such as the region
	 * are its guess of what the kubelet will write, not a promise). */
	struct kvlist drift_labels;
	const struct taint *drift_taints;
	size_t n_drift_taints;

	/* filled by snapshot_finish() */
	int current;  /* registered nodes of this group in the snapshot, less the starting ones */
	int starting; /* registered, not Ready yet, created less than MODEL_NODE_STARTUP_S ago:
		       * still on their way, so part of the upcoming, not of current */
	int target;   /* size the cloud converges to; at least current + starting. upcoming = target - current */

	/* filled by snapshot_finish(): what the DaemonSets that would run on
	 * a new node of the group request (their node selectors, affinity and
	 * tolerations against the template); a new node's room for other
	 * pods is the template's allocatable less that */
	struct resources daemonset_requests;
	int n_daemonsets;
	/* those DaemonSets, one pod each standing for the pod the controller
	 * would make there (its host ports; ns and controller_name name the
	 * DaemonSet), in the snapshot's arena; NULL when none */
	const struct pod *const *daemonset_pods;

	/* The instance type of the template ("" or NULL: not known), and for
	 * a group that launches one of several types (an AWS fleet group):
	 * a group per type, each with that type's template, price and
	 * DaemonSet overhead, its name the group's; n_types 0 otherwise.
	 * The group's own template is its first type's. */
	const char *instance_type;
	struct node_group *types;
	size_t n_types;

	/* set by the actuator after snapshot_finish(): launches refused until then */
	int removing;               /* registered nodes being drained or deleted */
	int replacing;              /* nodes of it being replaced (their new node on its way) */
	int64_t backoff_until;      /* unix seconds, 0 when not backed off */
	char backoff_reason[160];
};

/*
 * Why node 'n' of finished snapshot 's' is no longer what its group would
 * launch now, written into 'out' ("" and false when it is not), the first
 * of: for a group of several instance types, a node.kubernetes.io/instance-type
 * none of them is (a group's one instance_type is not compared: an Auto
 * Scaling group's mixed policy or attribute-based types launch others); the cloud's word that its instance is outdated (the
 * group's 'outdated': an older image or launch template version); a label
 * the operator wrote in the group's template (drift_labels) it lacks or has
 * another value of (but the hostname, the zone, the keys of the group's
 * selector, and for a group of several instance types the labels its types
 * do not share); a taint the operator wrote there (drift_taints) it lacks.
 * Labels and taints the cloud's description added never count.
 * A node of no group never drifts. Returns whether it drifted.
 */
struct snapshot;
bool snapshot_node_drift(const struct snapshot *s, size_t n, char *out, size_t len);

/* ---- snapshot ---- */

/*
 * An immutable picture of the cluster at 'now'. Everything it points to
 * lives in its arena. Built with snapshot_new(), snapshot_add_*(),
 * snapshot_set_groups(), then snapshot_finish(); read-only afterwards.
 */
struct snapshot {
	struct arena *arena;
	int64_t now; /* unix seconds */
	struct node *nodes;
	size_t n_nodes;
	struct pod *pods;
	size_t n_pods;
	struct pdb *pdbs;
	size_t n_pdbs;
	struct node_group *groups;
	size_t n_groups;
	uint32_t *pending; /* unbound, unfinished, not terminating, not DaemonSet pods */
	size_t n_pending;
	struct namespace_obj *namespaces;
	size_t n_namespaces;
	struct pvc *pvcs;
	size_t n_pvcs;
	struct pv *pvs;
	size_t n_pvs;
	struct storage_class *storage_classes;
	size_t n_storage_classes;
	struct daemonset *daemonsets;
	size_t n_daemonsets;
	/* The source lists these kinds (informers watch them, or a state file
	 * holds some): a claim or namespace not found is really absent. When
	 * false, a pod's claims and namespaceSelectors are judged on what is
	 * known, never refused for a missing object. */
	bool volumes_known;
	bool namespaces_known;
	bool daemonsets_known;

	size_t n_anti_pods; /* bound, unfinished pods with required anti-affinity terms */
	/* bound, unfinished pods with required anti-affinity terms or host
	 * ports (what can refuse another pod), in snapshot order */
	uint32_t *reaching;
	size_t n_reaching;
	/* sched.c's index of pod relations (struct topo), built on first use
	 * and freed with the snapshot through 'relations_free' */
	void *relations;
	void (*relations_free)(void *relations);

	/* private to model.c */
	size_t cap_nodes, cap_pods, cap_pdbs;
	size_t cap_namespaces, cap_pvcs, cap_pvs, cap_storage_classes, cap_daemonsets;
	bool finished;
	uint32_t *node_slots; /* node name index (open addressing), after finish */
	size_t node_mask;
	void (*on_free)(void *ctx); /* snapshot_on_free() */
	void *on_free_ctx;
};

/* Returns an empty snapshot or NULL when out of memory. */
struct snapshot *snapshot_new(void);

/* Frees the snapshot and everything it owns. NULL is a no-op. */
void snapshot_free(struct snapshot *s);

/*
 * Decodes one object (a Node, Pod, PodDisruptionBudget, Namespace,
 * PersistentVolumeClaim, PersistentVolume, StorageClass or apps/v1
 * DaemonSet as the API server serves it) and adds it; one of the last five
 * also sets the snapshot's flag for its kind (volumes_known,
 * namespaces_known, daemonsets_known). Objects of other kinds are ignored
 * (returns 0).
 * 'kind' may be NULL to take it from the object's "kind" field.
 * Unknown fields are ignored. On a malformed object returns -1 with a
 * message naming the object (kind namespace/name) and the bad field.
 */
int snapshot_add_object(struct snapshot *s, const struct cJSON *obj,
			const char *kind, struct errbuf *err);

/*
 * Decodes a JSON document: a v1 List (what `kubectl get nodes,pods,pdb -A
 * -o json` prints), a typed List (NodeList, PodList, ..., DaemonSetList), or
 * a single object, of the kinds snapshot_add_object() takes. An object of
 * the last five kinds, or a typed List of one even without items, sets the
 * flag for its kind. 'source' names the input in messages ("state.json").
 * Large lists are decoded item by item so memory stays close to the model's.
 * Returns 0 or -1 with a message naming the source, item index and object.
 */
int snapshot_add_json(struct snapshot *s, const char *json, size_t len,
		      const char *source, struct errbuf *err);

/* Reads a file and calls snapshot_add_json(). */
int snapshot_load_file(struct snapshot *s, const char *path, struct errbuf *err);

/*
 * Building without JSON (the simulator, 60,000 pods a round): each call
 * appends a copy of the struct itself, nothing deeper. The strings and
 * arrays it points to are borrowed, not copied: they must stay unchanged
 * and alive as long as the snapshot lives (the simulator keeps them in an
 * arena that outlives its snapshots). The fields snapshot_finish() fills
 * (node group, requested, pods; pod node) are reset. Returns 0, or -1 when
 * out of memory or when the snapshot is finished.
 */
int snapshot_add_node(struct snapshot *s, const struct node *n, struct errbuf *err);
int snapshot_add_pod(struct snapshot *s, const struct pod *p, struct errbuf *err);
int snapshot_add_pdb(struct snapshot *s, const struct pdb *b, struct errbuf *err);
/* The same for the other kinds (a DaemonSet's template pod node is reset).
 * They leave the *_known flags alone: the builder sets them. */
int snapshot_add_namespace(struct snapshot *s, const struct namespace_obj *ns,
			   struct errbuf *err);
int snapshot_add_pvc(struct snapshot *s, const struct pvc *c, struct errbuf *err);
int snapshot_add_pv(struct snapshot *s, const struct pv *v, struct errbuf *err);
int snapshot_add_storage_class(struct snapshot *s, const struct storage_class *c,
			       struct errbuf *err);
int snapshot_add_daemonset(struct snapshot *s, const struct daemonset *ds, struct errbuf *err);

/*
 * Registers 'fn', called with 'ctx' by snapshot_free() before it frees
 * anything: how a builder that lent the snapshot its strings and arrays
 * (snapshot_add_node() and friends) learns they are no longer borrowed.
 * One hook per snapshot: returns 0, or -1 when one is already set.
 */
int snapshot_on_free(struct snapshot *s, void (*fn)(void *ctx), void *ctx,
		     struct errbuf *err);

/*
 * Deep copies of one object into a single heap block that starts with the
 * struct itself, so that free() of the returned pointer releases the copy
 * and everything it points to (the informers' cache keeps objects this
 * way). The fields snapshot_finish() fills (node group, requested, pods,
 * removing; pod node) are reset. Returns NULL when out of memory.
 */
struct node *node_clone(const struct node *n);
struct pod *pod_clone(const struct pod *p);
struct pdb *pdb_clone(const struct pdb *b);
struct namespace_obj *namespace_clone(const struct namespace_obj *ns);
struct pvc *pvc_clone(const struct pvc *c);
struct pv *pv_clone(const struct pv *v);
struct storage_class *storage_class_clone(const struct storage_class *c);
struct daemonset *daemonset_clone(const struct daemonset *ds);

/* Makes room for that many more nodes, pods and PDBs so the adds above do
 * not grow the arrays one doubling at a time. Returns 0, or -1 (OOM). */
int snapshot_reserve(struct snapshot *s, size_t nodes, size_t pods, size_t pdbs,
		     struct errbuf *err);

/*
 * Copies the node groups (deep copy into the arena; provider_ids are sorted
 * in the copy). Must be called before snapshot_finish(). 'groups' targets may be preset (>= 0) to say how many
 * nodes the cloud is bringing up; -1 means "same as registered".
 */
int snapshot_set_groups(struct snapshot *s, const struct node_group *groups,
			size_t n, struct errbuf *err);

/*
 * Indexes the snapshot: binds pods to nodes, assigns nodes to groups (first
 * group whose selector matches the node's labels), sums requests per node,
 * counts group sizes, builds the pending list, sets 'now'.
 * Returns 0, or -1 on out of memory, on a duplicate node name or pod
 * namespace/name (it would be counted twice), or when already finished.
 */
int snapshot_finish(struct snapshot *s, int64_t now, struct errbuf *err);

/* Index of the node named 'name', or -1. Valid after snapshot_finish(). */
int32_t snapshot_find_node(const struct snapshot *s, const char *name);

/* Index of the group named 'name', or -1. */
int32_t snapshot_find_group(const struct snapshot *s, const char *name);

#endif
