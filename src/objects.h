/*
 * objects: the Kubernetes objects the model keeps (Node, Pod,
 * PodDisruptionBudget, Namespace, PersistentVolumeClaim, PersistentVolume,
 * StorageClass, DaemonSet) as compact C structs, and the accessors that
 * read them: labels, resources, taints and tolerations, node affinity,
 * selectors, pod relations, timestamps. No snapshot, no I/O: model.h
 * holds the snapshot and node groups, model_decode.c fills these structs
 * from JSON, selector.c parses label selectors.
 */
#ifndef LUASCALE_OBJECTS_H
#define LUASCALE_OBJECTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/*
 * Parses an RFC 3339 timestamp ("2024-05-01T10:00:00Z", fractions and
 * offsets allowed) into unix seconds. Returns 0 or -1.
 */
int model_parse_time(const char *text, int64_t *out);

/* Formats unix seconds as RFC 3339 in UTC ("2024-05-01T10:00:00Z") into
 * 'out' ("" when it does not fit; 21 bytes always do). */
void model_format_time(int64_t unix_s, char *out, size_t len);

#endif
