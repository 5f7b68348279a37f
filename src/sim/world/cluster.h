/*
 * sim/cluster: a simulated Kubernetes cluster on the simulated cloud — nodes,
 * a scheduler (sched.c's predicates), pods with durations, controllers, PDBs;
 * kubeops on it, snapshots of it, and the counters a report needs. When
 * workloads arrive is the scenario's business (sim/world/scenario.c).
 */
#ifndef LUASCALE_SIM_CLUSTER_H
#define LUASCALE_SIM_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/kubeops.h"
#include "errbuf.h"
#include "model.h"
#include "sim/clouds/cloud.h"
#include "sim/world/volumes.h"

struct sim_cluster;

/* What owns a pod, and so what happens when it is evicted or lost. */
enum sim_controller {
	SIM_CTRL_NONE,        /* a bare pod: gone for good */
	SIM_CTRL_REPLICASET,  /* replaced at once (new name), runs for what was left of its duration */
	SIM_CTRL_STATEFULSET, /* replaced once the old one is gone (same name), what was left */
	SIM_CTRL_JOB,         /* replaced at once (new name), runs its whole duration again */
	SIM_CTRL_DAEMONSET,   /* one pod on every node it fits; never pending, never replaced */
};

/* Parses "none", "replicaset", "statefulset", "job", "daemonset". 0 or -1.
 * A StatefulSet's pods are "<name>-<i>", i the lowest number (from 1) no
 * listed pod of it has, as a StatefulSet's ordinals. */
int sim_controller_parse(const char *s, enum sim_controller *out);
/* The ownerReference kind: "", "ReplicaSet", "StatefulSet", "Job", "DaemonSet". */
const char *sim_controller_kind(enum sim_controller c);

/*
 * What the pods of one workload look like. Borrowed by the cluster: it and
 * everything it points to must outlive the cluster and its snapshots.
 */
struct sim_pod_spec {
	const char *name;            /* the controller's name; pods are "<name>-<n>" */
	const char *ns;
	struct kvlist labels;
	struct kvlist annotations;
	struct kvlist node_selector;
	struct toleration *tolerations;
	size_t n_tolerations;
	struct node_affinity affinity;
	struct resources requests;   /* effective requests; 'pods' is ignored (a pod counts 1) */
	int32_t priority;
	int64_t duration_ns;         /* runs this long once bound; <= 0: until removed */
	int64_t grace_ns;            /* termination grace period when evicted */
	enum sim_controller controller;
	bool local_storage;          /* has an emptyDir volume (named "data") */
	bool safe_to_evict_false;    /* cluster-autoscaler.kubernetes.io/safe-to-evict: "false" */
	/* what relates its pods to other pods, as struct pod has it (the
	 * scheduler refuses a node as the kube-scheduler would: topology.h) */
	struct pod_term *affinity_terms;     /* required pod affinity */
	size_t n_affinity_terms;
	struct pod_term *anti_terms;         /* required pod anti-affinity */
	size_t n_anti_terms;
	struct spread_constraint *spread;    /* DoNotSchedule topology spread */
	size_t n_spread;
	struct host_port *host_ports;
	size_t n_host_ports;
	/* a volume per replica (StatefulSet only), NULL: none */
	const struct sim_volume *volume;
	/* pods written through the API server (NULL for scenario workloads): */
	const char *owner_kind;      /* with controller NONE: the ownerReference the pods carry */
	const char *owner_name;      /*   ("ReplicaSet", "Job"), or NULL: none */
	const char *owner_uid;
	const char *containers_json; /* the pods' spec.containers as JSON, NULL: one "main" */
	const char *restart_policy;  /* the pods' spec.restartPolicy, NULL: by the controller */
};

enum sim_sched_mode {
	SIM_SCHED_FIRST_FIT,       /* the first node (in registration order) with room */
	SIM_SCHED_LEAST_ALLOCATED, /* the node with most room left (cpu and memory), ties by order */
};

struct sim_cluster_opts {
	int64_t register_delay_ns;  /* instance running -> node Ready (kubelet), default 10s */
	int64_t sched_interval_ns;  /* at most one scheduler pass per interval, default 1s */
	enum sim_sched_mode sched;  /* default first fit */
	int64_t finished_ttl_ns;    /* finished pods stay listed this long, default 5m */
	/* The taint (NoSchedule) a node gets when its instance has an
	 * interrupt fault's notice, as its cloud's node handlers write one
	 * (GKE's "cloud.google.com/impending-node-termination"); NULL: none */
	const char *interruption_taint;
};

void sim_cluster_opts_default(struct sim_cluster_opts *o);

/*
 * A cluster on 'cloud' (borrowed; it must outlive the cluster), which it
 * observes: one cluster per cloud. 'o' NULL: defaults. NULL with a message
 * when out of memory.
 */
struct sim_cluster *sim_cluster_new(struct sim_cloud *cloud, const struct sim_cluster_opts *o,
				    struct errbuf *err);

/* Frees the cluster. Its events still queued become no-ops. NULL is ignored. */
void sim_cluster_free(struct sim_cluster *c);

/* Pods matching 'sel' (borrowed; NULL: none) are counted as protected in the stats. */
void sim_cluster_set_protected(struct sim_cluster *c, const struct label_selector *sel);

/*
 * Registers a workload's pod spec (borrowed, see above). Returns its handle
 * (>= 0), or -1 with a message when another spec has the same namespace
 * and name or out of memory. A DaemonSet spec puts a pod on every node
 * that registers from then on (and on the nodes there already).
 */
int sim_cluster_add_spec(struct sim_cluster *c, const struct sim_pod_spec *spec,
			 struct errbuf *err);

/*
 * Creates 'count' pending pods of spec 'spec' now. 'run_ns' > 0 overrides
 * the spec's duration (a per-pod draw), 0 means the spec's, < 0 forever.
 * Returns 0 or -1 with a message (a DaemonSet spec, out of memory).
 */
int sim_cluster_create_pods(struct sim_cluster *c, int spec, int count, int64_t run_ns,
			    struct errbuf *err);

/*
 * Adds a PodDisruptionBudget: ns, name, selector (borrowed), selects_all /
 * selects_none, and exactly one of min_available / max_unavailable ("2",
 * "50%"). disruptions_allowed is computed from the pods. -1 with a message
 * on a bad value.
 */
int sim_cluster_add_pdb(struct sim_cluster *c, const struct pdb *b, struct errbuf *err);

/* Adds 'n' nodes of 'group' that are there from the start (running
 * instances, registered Ready at once). 0 or -1 with a message. */
int sim_cluster_add_nodes(struct sim_cluster *c, const char *group, int n, struct errbuf *err);

/* Fills 'out' with the kubeops interface of this cluster (ctx = c). */
void sim_cluster_kubeops(struct sim_cluster *c, struct kubeops *out);

/*
 * The cluster as the engine sees it, now: Ready and NotReady nodes with
 * their providerIDs, every pod (finished ones while listed), PDBs with
 * disruptionsAllowed, the cloud's node groups. Pending pods the scheduler
 * tried carry PodScheduled=False/Unschedulable and its message. Group
 * targets are the cloud's pending + running instances when 'cloud_targets',
 * else -1 (registered nodes; the actuator adds what it has in flight).
 * The snapshot borrows strings from the cluster and the specs: free it
 * before the cluster. Returns 0, or -1 with a message.
 */
int sim_cluster_snapshot(struct sim_cluster *c, bool cloud_targets, struct snapshot **out,
			 struct errbuf *err);

/* ---- what the report needs ---- */

struct sim_stats {
	uint64_t pods_created, pods_bound, pods_succeeded, pods_recreated;
	uint64_t evictions;           /* accepted by the Eviction API */
	uint64_t evictions_blocked;   /* refused by a PodDisruptionBudget */
	uint64_t pods_killed;         /* unfinished pods that died without an eviction:
				       * node deleted or gone, NoExecute taint */
	uint64_t bare_pods_lost;      /* evicted or killed pods without a controller */
	uint64_t protected_disrupted; /* evicted or killed pods the protected selector matches */
	/* nodes whose instance got an interrupt fault's notice (sim_instance
	 * interrupted_wall), once gone; of their pods (DaemonSets' aside), those
	 * evicted before the node went (moved) and those that died with it */
	uint64_t interrupted_nodes, interrupted_moved, interrupted_killed;
	uint64_t nodes_registered, nodes_removed;
	uint64_t nodes_unused;        /* launched during the run, then removed without
				       * having run a pod (DaemonSet pods aside) */
	/* kubeops calls that were carried out */
	uint64_t cordons, uncordons, labels, annotations, taints, node_deletes, events;
	int64_t pending_ns_max;       /* longest time a pod waited to be bound */
	const char *pending_max_pod;  /* that pod, "namespace/name" ("" none; valid while
				       * the cluster lives) */
	int64_t pending_max_bound_ns; /* when it was bound, on the cluster's clock */
	const int64_t *pending_ns;    /* per bound pod: created (or requeued) until bound;
				       * borrowed, valid until the cluster changes */
	size_t n_pending_ns;
};

/* Copies the counters into 'out' (see pending_ns). */
void sim_cluster_get_stats(struct sim_cluster *c, struct sim_stats *out);

struct sim_counts {
	int nodes, nodes_ready, nodes_cordoned;
	int pods_pending, pods_unschedulable, pods_running, pods_terminating, pods_finished;
	int64_t cpu_alloc_m, cpu_req_m;  /* over Ready nodes: allocatable, requested */
	int64_t mem_alloc, mem_req;
	int64_t oldest_pending_ns;       /* how long the longest-waiting pending pod has waited */
};

/* The state now, for time series. */
void sim_cluster_counts(struct sim_cluster *c, struct sim_counts *out);

/* Registered nodes of group 'i' now, and node-seconds (ns) they have been
 * registered so far (nodes gone included). */
int sim_cluster_group_nodes(struct sim_cluster *c, size_t i, int64_t *node_ns);

/* ---- looking at one object (tests, debugging) ---- */

struct sim_pod_info {
	enum pod_phase phase;
	const char *node;          /* "" when unbound */
	bool terminating;
	bool unschedulable;        /* the scheduler tried and found no node */
	const char *message;       /* its message, "" when none */
	int64_t created_ns, bound_ns; /* bound_ns -1 when never bound */
};

/* 0 with 'out' filled (strings valid while the cluster lives), -1 when
 * there is no such pod. */
int sim_cluster_pod(struct sim_cluster *c, const char *ns, const char *name,
		    struct sim_pod_info *out);

struct sim_node_info {
	bool ready, unschedulable;
	const char *group;
	size_t n_pods;             /* bound pods, finished ones while listed */
	int64_t free_cpu_m, free_memory; /* allocatable minus what bound pods hold */
};

int sim_cluster_node(struct sim_cluster *c, const char *name, struct sim_node_info *out);

/* Number of pods (any phase) listed now. */
size_t sim_cluster_n_pods(struct sim_cluster *c);

/* ---- what the simulated API server needs ---- */

enum sim_obj_kind { SIM_OBJ_NODE, SIM_OBJ_POD };

/*
 * One change to a node or a pod, as a watcher hears it. Everything it
 * points to is borrowed for the duration of the call only.
 */
struct sim_change {
	enum sim_obj_kind kind;
	bool gone;                 /* removed: this is its last state */
	const struct node *node;   /* NODE (group is -1; 'ready' as the kubelet reports it) */
	const char *group;         /* NODE: its node group */
	const struct pod *pod;     /* POD */
	int64_t started_wall;      /* POD: bound at (unix s), -1 when never bound */
	int64_t deleted_wall;      /* POD: termination began (unix s), -1 when not terminating */
	int64_t grace_s;           /* POD: its termination grace period (s) */
	bool kubelet_starting;     /* NODE, not ready: registered, not Ready yet (else: lost) */
	int64_t transition_wall;   /* NODE: Ready last changed (unix s), 0: at creation */
	int64_t heartbeat_wall;    /* NODE: the kubelet last reported (unix s), 0: at creation */
	const struct sim_pod_spec *spec; /* POD: its workload's spec */
	const char *host_ip;       /* POD, bound: its node's InternalIP when the node has
				    * one (a cloud's instance); else NULL */
};

/*
 * Called under the world's lock (sim_cloud_lock) after a node or pod was
 * added or changed, and before one is removed: registration, Ready lost,
 * cordon, label, annotation, taint, removal; pod created, unschedulable
 * (when its message changes), bound, succeeded, terminating, removed. It
 * must not call back into the cluster.
 */
typedef void (*sim_cluster_watch_fn)(void *ud, const struct sim_change *ch);

/*
 * Sets the watcher (one; NULL removes it). It hears at once every node and
 * pod there is now (as changes, gone = false), then every change.
 */
void sim_cluster_set_watch(struct sim_cluster *c, sim_cluster_watch_fn fn, void *ud);

/*
 * Deletes a pod (no PodDisruptionBudget asked): a bound pod terminates over
 * 'grace_s' (< 0: its spec's), a pending one is gone at once; its
 * controller replaces it. A terminating pod deleted with grace 0 (a force
 * delete) is gone at once. A running pod counts as killed in the stats.
 * 0, or -1 with KUBE_NOT_FOUND.
 */
int sim_cluster_delete_pod(struct sim_cluster *c, const char *ns, const char *name,
			   int64_t grace_s, struct kube_status *st);

/*
 * Binds a pending pod to a node (the Binding API), whether it fits or not.
 * 0, or -1 with KUBE_NOT_FOUND (pod, node) or KUBE_CONFLICT (bound already
 * or not pending).
 */
int sim_cluster_bind_pod(struct sim_cluster *c, const char *ns, const char *name,
			 const char *node, struct kube_status *st);

/* A PodDisruptionBudget's status now. */
struct sim_pdb_status {
	int32_t disruptions_allowed;
	int64_t expected_pods, current_healthy, desired_healthy;
};

/*
 * The world's PersistentVolumeClaims (with their volumes and classes):
 * copies up to 'cap' into 'out' (strings borrowed from the cluster, valid
 * while it lives). Returns how many it has in all, which may be more than
 * 'cap'.
 */
size_t sim_cluster_claims(struct sim_cluster *c, struct sim_claim_view *out, size_t cap);

size_t sim_cluster_n_pdbs(struct sim_cluster *c);

/*
 * Copies up to 'cap' PDBs (strings borrowed from the cluster, valid while
 * it lives) with disruptions_allowed set, and their status into
 * 'status_out' (may be NULL). Returns how many, or -1 when out of memory.
 */
int sim_cluster_pdbs(struct sim_cluster *c, struct pdb *pdbs, struct sim_pdb_status *status_out,
		     size_t cap);

/* The workload specs registered (borrowed, in the order they were added). */
size_t sim_cluster_n_specs(struct sim_cluster *c);
const struct sim_pod_spec *sim_cluster_spec(struct sim_cluster *c, size_t i);

/* The unfinished pods of spec 'i' now: bound to a node, running among
 * those (not terminating), and pending. */
struct sim_spec_counts {
	int scheduled, ready, pending;
};

/* 0 with 'out' filled, -1 when there is no spec 'i'. */
int sim_cluster_spec_counts(struct sim_cluster *c, size_t i, struct sim_spec_counts *out);

/*
 * A node's kubelet stops reporting (up false: the node goes NotReady and
 * nothing is scheduled on it; its pods keep running) or reports again (up
 * true: Ready, when its instance still runs). 0, or -1 when there is no
 * such node.
 */
int sim_cluster_set_kubelet(struct sim_cluster *c, const char *node, bool up);

/* ---- what the workload controllers need (sim/world/workloads.c) ---- */

/*
 * Creates one pending pod of spec 'spec' named 'name' now (the spec's
 * controller must not be a DaemonSet). 'run_ns' as in
 * sim_cluster_create_pods. 0, or -1 with a message (a pod of that
 * namespace and name exists, no such spec, out of memory).
 */
int sim_cluster_create_named_pod(struct sim_cluster *c, int spec, const char *name,
				 int64_t run_ns, struct errbuf *err);

/* One pod of a spec, as a controller counts it. */
struct sim_spec_pod {
	const char *name;          /* borrowed: valid until the cluster changes */
	enum pod_phase phase;
	bool terminating;
	bool bound;
	int64_t created_ns;        /* on the cluster's clock */
};

/*
 * Copies the listed pods of spec 'spec' (finished ones while listed) into
 * 'out' (up to 'cap'), oldest first. Returns how many there are (may be
 * more than cap), or -1 when there is no such spec. Take the world's lock
 * (sim_cloud_lock) around the call and the use of the names.
 */
int sim_cluster_spec_pods(struct sim_cluster *c, int spec, struct sim_spec_pod *out, size_t cap);

/*
 * Replaces a pod's labels and annotations (copied; either NULL: kept),
 * as a client's update of its metadata. 0, or -1 with KUBE_NOT_FOUND.
 */
int sim_cluster_set_pod_meta(struct sim_cluster *c, const char *ns, const char *name,
			     const struct kvlist *labels, const struct kvlist *annotations,
			     struct kube_status *st);

/*
 * Makes a pod a bare one (its owner is deleted with propagation Orphan):
 * its ownerReference goes. 0, or -1 with KUBE_NOT_FOUND.
 */
int sim_cluster_orphan_pod(struct sim_cluster *c, const char *ns, const char *name,
			   struct kube_status *st);

/*
 * The cluster frees 'mem' with 'free_fn' when it is freed itself (after
 * everything that may point into it): how a spec registered at run time
 * outlives its pods and the snapshots. 0, or -1 when out of memory (then
 * 'mem' is the caller's still).
 */
int sim_cluster_adopt(struct sim_cluster *c, void *mem, void (*free_fn)(void *));

/* The index of the spec of pod ns/name, or -1 when there is none. */
int sim_cluster_pod_spec(struct sim_cluster *c, const char *ns, const char *name);

/* The cloud under the cluster. */
struct sim_cloud *sim_cluster_cloud(const struct sim_cluster *c);

#endif
