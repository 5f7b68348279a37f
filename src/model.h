/*
 * model: the cluster as the engine sees it — nodes, pods, PodDisruptionBudgets
 * and node groups — decoded from Kubernetes JSON into compact C structs that
 * live in one arena per snapshot. Only what decisions need is kept.
 * It does no I/O beyond reading a state file; scheduling math is in sched.c.
 */
#ifndef LUASCALE_MODEL_H
#define LUASCALE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"

struct arena;
struct cJSON;

/* A key/value pair (labels, annotations, nodeSelector). Strings are arena-owned. */
struct kv {
	const char *key;
	const char *value;
};

struct kvlist {
	struct kv *items;
	size_t n;
};

/* Returns the value for 'key' or NULL. */
const char *kvlist_get(const struct kvlist *l, const char *key);

/* ---- resources ---- */

/* An extended or other named resource (nvidia.com/gpu, hugepages-2Mi, ...), in units. */
struct res_ext {
	const char *name;
	int64_t value;
};

/* Amounts of resources. Well-known ones are fields; the rest are in 'ext'. */
struct resources {
	int64_t cpu_m;     /* millicores */
	int64_t memory;    /* bytes */
	int64_t ephemeral; /* bytes (ephemeral-storage) */
	int64_t pods;      /* pod count (allocatable only; a pod requests 1 implicitly) */
	struct res_ext *ext;
	size_t n_ext;
};

/* Returns the amount of a named extended resource, 0 when absent. */
int64_t resources_ext(const struct resources *r, const char *name);

/* ---- taints, tolerations, selectors ---- */

enum taint_effect {
	TAINT_NO_SCHEDULE,
	TAINT_PREFER_NO_SCHEDULE,
	TAINT_NO_EXECUTE,
};

/* Parses "NoSchedule" etc.; returns 0 or -1. */
int taint_effect_parse(const char *s, enum taint_effect *out);
const char *taint_effect_str(enum taint_effect e);

struct taint {
	const char *key;
	const char *value; /* "" when none */
	enum taint_effect effect;
};

enum toleration_op {
	TOLERATION_EQUAL,
	TOLERATION_EXISTS,
};

struct toleration {
	const char *key;   /* NULL or "" with EXISTS tolerates every key */
	const char *value; /* "" when none */
	enum toleration_op op;
	int effect;        /* an enum taint_effect, or -1 for every effect */
};

enum selector_op {
	SELECTOR_IN,
	SELECTOR_NOT_IN,
	SELECTOR_EXISTS,
	SELECTOR_DOES_NOT_EXIST,
	SELECTOR_GT, /* node affinity only: value parsed as an integer */
	SELECTOR_LT,
};

struct selector_req {
	const char *key;
	enum selector_op op;
	const char **values;
	size_t n_values;
};

/* A label selector: all requirements must hold (matchLabels become IN with one value). */
struct label_selector {
	struct selector_req *reqs;
	size_t n;
};

/* Does one requirement hold for a label value ('value' NULL: key absent)?
 * NotIn and DoesNotExist hold for an absent key; Gt/Lt compare integers. */
bool selector_req_holds(const struct selector_req *r, const char *value);

/* Returns true when 'labels' satisfy every requirement (empty selector: true). */
bool label_selector_matches(const struct label_selector *sel,
			    const struct kvlist *labels);

/* A nodeSelectorTerm: matchExpressions on labels, matchFields on metadata.name. */
struct node_selector_term {
	struct selector_req *exprs;
	size_t n_exprs;
	struct selector_req *fields;
	size_t n_fields;
};

/* requiredDuringSchedulingIgnoredDuringExecution: terms are ORed. n_terms == 0: none. */
struct node_affinity {
	struct node_selector_term *terms;
	size_t n_terms;
};

/*
 * Equal field by field, in the same order. Strings compare by their text,
 * and NULL equals only NULL: the predicates tell a missing key from ""
 * (kvlist_get() finds no NULL key, and "" may be a label's key).
 */
bool kvlist_same(const struct kvlist *a, const struct kvlist *b);
bool selector_reqs_same(const struct selector_req *a, size_t na, const struct selector_req *b,
			size_t nb);
bool node_affinity_same(const struct node_affinity *a, const struct node_affinity *b);
bool tolerations_same(const struct toleration *a, size_t na, const struct toleration *b,
		      size_t nb);


/* Does the toleration tolerate the taint (key, value, effect rules)? */
bool toleration_tolerates(const struct toleration *tol, const struct taint *t);

/*
 * Index of the first requirement of 'term' that fails (matchExpressions
 * first, then matchFields numbered after them), or -1 when the term
 * matches. An empty term matches nothing: 0. 'name' is the node's name
 * for matchFields (NULL: none, a template).
 */
long node_term_first_failure(const struct node_selector_term *term, const char *name,
			     const struct kvlist *labels);

/* Do the terms (ORed) match? No terms: true. */
bool node_affinity_matches(const struct node_affinity *a, const char *name,
			   const struct kvlist *labels);

/* ---- nodes ---- */

struct node {
	const char *name;
	const char *provider_id; /* "" when absent */
	const char *internal_ip; /* status.addresses InternalIP; NULL or "" when unknown */
	struct kvlist labels;
	struct kvlist annotations;
	struct taint *taints;
	size_t n_taints;
	struct resources allocatable;
	bool unschedulable;
	bool ready;
	int64_t created; /* unix seconds */

	/* A notice that the cloud takes this node back soon: decoded from
	 * the node's own conditions and taints (GKE, Azure), or set after
	 * snapshot_finish() from the provider's interruption notices (AWS,
	 * the simulator: engine/interruptions.c). 'kind' is a string
	 * constant (NULL: no notice): the provider's
	 * provider_interruption_kind_str() ("spot_interruption", "rebalance",
	 * "scheduled_change", "stopping", "terminated"), or for a node's own
	 * word "shutdown" (GKE graceful node shutdown) and "preempt",
	 * "terminate", "reboot", "redeploy", "freeze" (Azure scheduled
	 * events); 'deadline' is when, unix seconds (0: not known).
	 * The node's own word, as model_decode.c reads it:
	 * - the taint cloud.google.com/impending-node-termination: shutdown;
	 *   the AWS Node Termination Handler's aws-node-termination-handler/
	 *   spot-itn, scheduled-maintenance, rebalance-recommendation:
	 *   spot_interruption, scheduled_change, rebalance;
	 * - condition Ready, status False, message with "node is shutting
	 *   down" (the kubelet's graceful shutdown): shutdown, deadline its
	 *   lastTransitionTime + 30 s;
	 * - conditions PreemptScheduled, TerminateScheduled,
	 *   RedeployScheduled, RebootScheduled, FreezeScheduled with status
	 *   True, or VMEventScheduled True whose message starts with the event
	 *   type (the AKS node-problem-detector): the type, deadline the
	 *   message's RFC 1123 date ("Mon, 02 Mar 2026 10:00:30 GMT");
	 * the strongest wins: preempt, terminate, spot_interruption, shutdown,
	 * redeploy, scheduled_change, reboot, freeze, rebalance. */
	const char *interruption_kind;
	int64_t interruption_deadline;

	/* set by the actuator after snapshot_finish() */
	bool removing;               /* a drain or delete of it is in progress */
	bool replacing;              /* a replace of it is under way: its new node is
				      * launching or booting; the node itself is untouched */

	/* filled by snapshot_finish() */
	int32_t group;               /* index into snapshot groups, -1 when unmanaged */
	struct resources requested;  /* effective requests of bound, unfinished pods */
	uint32_t *pods;              /* indices into snapshot pods bound here */
	size_t n_pods;
};

/* ---- pods: what relates one pod to others and to zones ---- */

/*
 * One required (anti-)affinity term of a pod, as the scheduler reads it:
 * matchLabelKeys / mismatchLabelKeys are folded into 'selector' at decode
 * time (key In / NotIn the pod's own value), as the API server does.
 */
struct pod_term {
	struct label_selector selector;
	bool selector_null;          /* labelSelector absent: matches no pod */
	const char **namespaces;     /* listed namespaces */
	size_t n_namespaces;
	struct label_selector ns_selector;
	bool has_ns_selector;        /* namespaceSelector present ({} matches every namespace) */
	const char *topology_key;
	uint64_t fingerprint;        /* pod_term_fingerprint(), 0 when not computed */
};

/* A hash of the term's topology key, selector keys and namespaces (never 0):
 * equal terms have equal fingerprints. Computed once at decode, so an
 * index over many pods does not hash each pod's term again. */
uint64_t pod_term_fingerprint(const struct pod_term *t);

/* A topologySpreadConstraint with whenUnsatisfiable: DoNotSchedule
 * (ScheduleAnyway ones only score: they are not kept). matchLabelKeys
 * are folded into 'selector' as for pod_term. */
struct spread_constraint {
	int32_t max_skew;
	int32_t min_domains;         /* 1 when absent */
	const char *topology_key;
	struct label_selector selector;
	bool selector_null;          /* labelSelector absent: counts no pod */
	bool honor_affinity;         /* nodeAffinityPolicy: Honor (default) */
	bool honor_taints;           /* nodeTaintsPolicy: Honor (default Ignore) */
};

enum port_protocol { PORT_TCP, PORT_UDP, PORT_SCTP };

/* A container port with a hostPort (NodePorts plugin). */
struct host_port {
	const char *ip;              /* hostIP, "0.0.0.0" when absent */
	int32_t port;
	enum port_protocol protocol;
};

/* ---- pods ---- */

enum pod_phase {
	POD_PENDING,
	POD_RUNNING,
	POD_SUCCEEDED,
	POD_FAILED,
	POD_UNKNOWN,
};

const char *pod_phase_str(enum pod_phase p);

enum pod_flag {
	POD_DAEMONSET = 1u << 0,         /* owned by a DaemonSet */
	POD_MIRROR = 1u << 1,            /* kubernetes.io/config.mirror annotation */
	POD_STATIC = 1u << 2,            /* kubernetes.io/config.source not "api" */
	POD_LOCAL_STORAGE = 1u << 3,     /* has an emptyDir (not Memory) or hostPath volume */
	POD_UNSCHEDULABLE = 1u << 4,     /* PodScheduled=False, reason Unschedulable */
	POD_TERMINATING = 1u << 5,       /* metadata.deletionTimestamp set */
	POD_SAFE_TO_EVICT_FALSE = 1u << 6, /* cluster-autoscaler.kubernetes.io/safe-to-evict: "false" */
	POD_SCHEDULER_ONLY = 1u << 7,    /* what only its scheduler evaluates: a schedulerName
					  * other than default-scheduler, pod (anti-)affinity,
					  * topologySpreadConstraints, a PersistentVolumeClaim or
					  * ephemeral volume, resourceClaims (never bound by luascale) */
	POD_HOST_NETWORK = 1u << 8,      /* spec.hostNetwork: true */
};

struct pod {
	const char *ns;
	const char *name;
	const char *uid;             /* metadata.uid, "" when absent (Events name it) */
	struct kvlist labels;
	struct kvlist annotations;
	const char *controller_kind; /* ownerReferences[controller=true].kind, "" when none */
	const char *controller_name;
	const char *node_name;       /* spec.nodeName, "" when unbound */
	enum pod_phase phase;
	unsigned flags;              /* enum pod_flag */
	struct resources requests;   /* effective requests (Kubernetes' rule), pods = 1 */
	struct kvlist node_selector;
	struct node_affinity affinity;
	struct toleration *tolerations;
	size_t n_tolerations;
	int32_t priority;
	int64_t created;             /* unix seconds */
	const char *local_volume;    /* name of the first local-storage volume, "" when none */
	const char *sched_message;   /* PodScheduled condition message, "" when none */
	struct pod_term *affinity_terms;     /* podAffinity required terms */
	size_t n_affinity_terms;
	struct pod_term *anti_terms;         /* podAntiAffinity required terms */
	size_t n_anti_terms;
	struct spread_constraint *spread;    /* DoNotSchedule constraints */
	size_t n_spread;
	struct host_port *host_ports;
	size_t n_host_ports;
	const char **claims;         /* PersistentVolumeClaim names (ephemeral: pod-volume) */
	size_t n_claims;
	const char *unmodelled;      /* a field whose constraint luascale does not model
				      * ("spec.resourceClaims"): never fits anywhere; NULL none */

	/* filled by snapshot_finish() */
	int32_t node;                /* index into snapshot nodes, -1 when unbound or node unknown */
	/* Where the pod's volumes can be reached: each entry must hold (a
	 * bound PV's node affinity and zone labels, a WaitForFirstConsumer
	 * class's allowedTopologies). */
	struct node_affinity *volume_affinity;
	size_t n_volume_affinity;
	const char *volume_problem;  /* "PersistentVolumeClaim ns/x not found", NULL none */
};

/* Finished pods (Succeeded, Failed) hold no resources. */
bool pod_finished(const struct pod *p);

/* Does one of the pod's tolerations tolerate 't'? */
bool pod_tolerates(const struct pod *p, const struct taint *t);

/* Are all NoSchedule and NoExecute taints of the list tolerated? */
bool pod_tolerates_all(const struct pod *p, const struct taint *taints, size_t n);

/* nodeSelector and required node affinity against a node's labels (and
 * name for matchFields; NULL for a template): the scheduler's
 * requiredNodeAffinity. */
bool pod_node_selection_matches(const struct pod *p, const char *name, const struct kvlist *labels);

/* The pod's relations to other pods and volumes: required (anti-)affinity
 * terms, spread constraints, host ports, claims and 'unmodelled'. */
bool pod_relations_same(const struct pod *a, const struct pod *b);

/* ---- PodDisruptionBudgets ---- */

struct pdb {
	const char *ns;
	const char *name;
	struct label_selector selector;
	bool selects_all;        /* selector {} matches every pod of the namespace */
	bool selects_none;       /* selector absent (null): matches nothing */
	int32_t disruptions_allowed; /* status.disruptionsAllowed */
	const char *min_available;   /* as written, "" when absent (for messages) */
	const char *max_unavailable;
};

/* Returns true when the PDB selects the pod (same namespace and selector). */
bool pdb_matches(const struct pdb *b, const struct pod *p);

/* ---- namespaces and volumes (for namespaceSelector and volume zones) ---- */

struct namespace_obj {
	const char *name;
	struct kvlist labels;
};

/* A PersistentVolumeClaim: where it is bound, or how it will be. */
struct pvc {
	const char *ns;
	const char *name;
	const char *volume_name;     /* spec.volumeName, "" when unbound */
	const char *storage_class;   /* spec.storageClassName, "" when absent */
};

/* A PersistentVolume: the nodes that can reach it. */
struct pv {
	const char *name;
	struct node_affinity node_affinity; /* spec.nodeAffinity.required (n_terms 0: none) */
	struct kvlist labels;        /* the legacy zone / region labels live here too */
};

struct storage_class {
	const char *name;
	bool wait_for_first_consumer; /* volumeBindingMode: WaitForFirstConsumer */
	struct node_affinity allowed_topologies; /* allowedTopologies as node terms (ORed) */
};

/* A DaemonSet, as the pod its template would make on a new node. */
struct daemonset {
	const char *ns;
	const char *name;
	struct pod tmpl;             /* decoded from spec.template (ns, name: the DaemonSet's) */
};

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
 * of: a node.kubernetes.io/instance-type other than the group's
 * instance_type (for a group of several instance types, none of them); the cloud's word that its instance is outdated (the
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

/*
 * Parses a label selector in the kubectl string form:
 * "a=b,c!=d,e,!f,g in (x,y),h notin (z)". Strings go to the arena.
 * Returns 0 or -1 with a message naming the bad part.
 */
int label_selector_parse(struct arena *a, const char *text,
			 struct label_selector *out, struct errbuf *err);

/*
 * Parses an RFC 3339 timestamp ("2024-05-01T10:00:00Z", fractions and
 * offsets allowed) into unix seconds. Returns 0 or -1.
 */
int model_parse_time(const char *text, int64_t *out);

/* Formats unix seconds as RFC 3339 in UTC ("2024-05-01T10:00:00Z") into
 * 'out' ("" when it does not fit; 21 bytes always do). */
void model_format_time(int64_t unix_s, char *out, size_t len);

#endif
