/*
 * sched: scheduling arithmetic over a snapshot — does a pod fit a node or a
 * group's template, how many template nodes does a set of pending pods need
 * (first-fit decreasing), and can a node's pods move elsewhere. Pure
 * functions over struct snapshot; no I/O, no Lua.
 */
#ifndef LUASCALE_SCHED_H
#define LUASCALE_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"
#include "model.h"

/* Why a pod does not fit. SCHED_FITS (0) means it fits. */
enum sched_fit {
	SCHED_FITS = 0,
	SCHED_NO_CPU,
	SCHED_NO_MEMORY,
	SCHED_NO_EPHEMERAL,
	SCHED_NO_PODS,
	SCHED_NO_EXTENDED,      /* an extended resource (name in the detail) */
	SCHED_NODE_SELECTOR,
	SCHED_NODE_AFFINITY,
	SCHED_TAINT,            /* an untolerated NoSchedule/NoExecute taint */
	SCHED_UNSCHEDULABLE,    /* node cordoned */
	SCHED_HOST_PORTS,       /* a hostPort already taken there (NodePorts) */
	SCHED_POD_AFFINITY,     /* required pod affinity not met (InterPodAffinity) */
	SCHED_POD_ANTI_AFFINITY, /* the pod's required anti-affinity matches a pod there */
	SCHED_EXISTING_ANTI_AFFINITY, /* a pod there has anti-affinity against this one */
	SCHED_TOPOLOGY_SPREAD,  /* a DoNotSchedule spread constraint (PodTopologySpread) */
	SCHED_VOLUME_ZONE,      /* a volume's node affinity or zone excludes the node
				 * (VolumeZone, VolumeBinding) */
	SCHED_VOLUME_MISSING,   /* a PersistentVolumeClaim (or its volume, class) not found */
	SCHED_NOT_MODELLED,     /* a constraint luascale does not model: never fits */
};

/* Short text for a result: "insufficient cpu", "node selector mismatch", ... */
const char *sched_fit_str(enum sched_fit f);

/*
 * Free room: what is left to place pods on. Owns 'ext' (malloc); release
 * with room_free(). Negative values are possible (overcommitted node).
 */
struct room {
	int64_t cpu_m;
	int64_t memory;
	int64_t ephemeral;
	int64_t pods;
	struct res_ext *ext; /* names borrowed from the snapshot */
	size_t n_ext;
};

/* Free room of node 'node' (allocatable minus requested). 0 or -1 (OOM). */
int room_of_node(const struct snapshot *s, size_t node, struct room *out);

/* Free room of an empty node of group 'g' (its template allocatable). */
int room_of_template(const struct node_group *g, struct room *out);

void room_free(struct room *r);

/* Resources only: does 'req' (a pod's requests, 1 pod) fit in 'r'? */
enum sched_fit room_fits(const struct room *r, const struct resources *req,
			 char *detail, size_t detail_len);

/* Subtracts a pod's requests from the room (after a placement). */
void room_take(struct room *r, const struct resources *req);

/*
 * Everything but resources: cordon, nodeSelector, required node affinity,
 * NoSchedule/NoExecute taints against tolerations. 'name' is the node's
 * name for matchFields (metadata.name); NULL for a template.
 * 'detail' (may be NULL) gets e.g. "taint dedicated=gpu:NoSchedule".
 */
enum sched_fit sched_fits_labels(const struct pod *p, const char *name,
				 const struct kvlist *labels,
				 const struct taint *taints, size_t n_taints,
				 bool unschedulable, char *detail,
				 size_t detail_len);

/*
 * Host ports, required inter-pod affinity and anti-affinity (both
 * directions) and topology spread (DoNotSchedule) of pod 'p' on node
 * 'node', the cluster as it is: the pods bound to its nodes (a pod bound
 * to 'node' already is judged as if it were not there yet). 'detail'
 * names the constraint and the other side, e.g. "anti-affinity with
 * prod/db-0 on node w-1 (kubernetes.io/hostname=w-1)".
 */
enum sched_fit sched_fits_relations(const struct snapshot *s, const struct pod *p, size_t node,
				    char *detail, size_t detail_len);

/* Does pod 'p' fit on node 'node' as it is now (free room and the pod
 * relations included)? */
enum sched_fit sched_fits_node(const struct snapshot *s, const struct pod *p,
			       size_t node, char *detail, size_t detail_len);

/* Does pod 'p' fit on an empty node of group 'g'? */
enum sched_fit sched_fits_template(const struct pod *p,
				   const struct node_group *g, char *detail,
				   size_t detail_len);

/*
 * Which of group 'g''s instance types (node_group.types) take a packing's
 * new nodes: ok[t] is true when, for every bin from 'first_bin' on, the
 * pods placed there (pods[i] with placement[i] == bin; -1: unplaced) pass
 * type t's labels and taints and fit one empty node of it together,
 * DaemonSets counted. 'ok' has n_types entries. 0, or -1 out of memory.
 */
int sched_types_taking(const struct snapshot *s, size_t g, const uint32_t *pods, size_t n,
		       const int32_t *placement, int32_t first_bin, bool *ok);

/*
 * sched_fits_template(), then the pod's relations on a new node of the
 * group as the cluster is (its zone's pods, the spread over the zones of
 * the groups that can grow): could a node bought for it take it?
 */
enum sched_fit sched_fits_group(const struct snapshot *s, const struct pod *p, size_t group,
				char *detail, size_t detail_len);

/*
 * Result of packing pending pods onto a group. Bins 0..upcoming-1 are the
 * group's upcoming nodes (target - current, empty template nodes already
 * on their way), bins upcoming.. are new nodes.
 */
struct pack_result {
	int upcoming;          /* upcoming nodes that were available as bins */
	int upcoming_used;     /* of those, how many received a pod */
	int new_nodes;         /* new template nodes needed */
	size_t n_pods;         /* number of input pods */
	int32_t *placement;    /* per input pod (input order): bin index, -1 fits no node */
	size_t n_placed;
	size_t n_unplaced;     /* pods that fit no empty template node */
	/* fraction of the new nodes' cpu and memory left unrequested, 0..1 */
	double waste_cpu;
	double waste_memory;
	/* sched_pack_groups(): per bin, its group (snapshot index); NULL otherwise */
	int32_t *bin_group;
	size_t n_bins;
	/* with 'existing': per input pod, the existing node (snapshot index)
	 * it goes to once the planned nodes are up, or -1; NULL when none
	 * did. Those pods count in n_placed, with placement -1. */
	int32_t *on_node;
	size_t existing_tries; /* existing nodes tried for those pods (the work) */
};

/*
 * First-fit decreasing of 'pods' (indices into s->pods) onto group 'group':
 * pods sorted by size (the larger of their cpu and memory share of the
 * template, ties by name), each placed on the first bin with room, upcoming
 * nodes first, then new template nodes. Pods that do not fit an empty
 * template node (resources, selectors, affinity, taints) are unplaced.
 * 'max_new' caps new nodes (-1: no cap); pods beyond it are unplaced.
 * Returns 0 with *out filled (free with pack_result_free), -1 on OOM.
 */
int sched_pack(const struct snapshot *s, const uint32_t *pods, size_t n,
	       size_t group, int max_new, struct pack_result *out,
	       struct errbuf *err);

/* sched_pack() with 'upcoming_nodes' empty template nodes on their way
 * instead of the group's target - current (-1: the group's own), e.g. 0
 * once other pods have been placed on those nodes. */
int sched_pack_upcoming(const struct snapshot *s, const uint32_t *pods, size_t n,
			size_t group, int max_new, int upcoming_nodes,
			struct pack_result *out, struct errbuf *err);

/* The node behind upcoming bin 'bin' of a packing onto 'group': the
 * group's starting nodes (registered, not Ready yet) are its first
 * upcoming bins, in snapshot order. Their snapshot index, or -1 when the
 * bin is an instance that is no node yet (or not an upcoming bin). */
int32_t sched_upcoming_node(const struct snapshot *s, size_t group, int32_t bin);

/*
 * What the packings of one snapshot share, for callers that pack the same
 * pods many times (luascale.packing.cheapest() packs what is left onto
 * every group, round after round): each pod's class of node selector,
 * affinity and tolerations, with the class's verdict per group, the
 * order of the pending pods' names, and each group's packing order,
 * which a later packing of a subset walks instead of sorting. Results
 * are those of sched_pack_upcoming(). Used by one thread at a time; the
 * snapshot must outlive it. NULL when out of memory.
 */
struct sched_cache;
struct sched_cache *sched_cache_new(const struct snapshot *s);
void sched_cache_free(struct sched_cache *c);
int sched_pack_cached(struct sched_cache *c, const uint32_t *pods, size_t n, size_t group,
		      int max_new, int upcoming_nodes, struct pack_result *out,
		      struct errbuf *err);

/*
 * A pod an earlier packing of the same round placed: on bin 'bin' of
 * group 'group' in packing 'step', whose first 'upcoming' bins were nodes
 * on their way (as in struct pack_result). A later packing counts it on that planned node
 * for topology spread and inter-pod affinity, so packings of one round
 * spread the way the scheduler will.
 */
struct pack_prior {
	uint32_t pod;
	uint32_t group; /* SCHED_PRIOR_NODE: on existing node 'bin' (its snapshot index) */
	int32_t bin;
	int32_t upcoming;
	uint32_t step;  /* which earlier packing: the same bin of two is two nodes */
};

/* pack_prior.group of a pod placed on an existing node (cluster:place, or
 * a packing's on_node): it takes that node's room and counts there. */
#define SCHED_PRIOR_NODE UINT32_MAX

/*
 * sched_pack_cached() after earlier packings placed 'prior' (n_prior of
 * them; 0: none). With 'existing', a pod with a topology spread or
 * required pod affinity that no bin takes may go to an existing node
 * (Ready, schedulable, not being removed, with the room the priors on it
 * left) that its relations take once the planned nodes count: a spread
 * with minDomains whose domains now exist, a least count that rose, an
 * affinity now met there. The scheduler places it there once the new
 * nodes are up (the Cluster Autoscaler's estimator does the same), so no
 * node is bought for it (out->on_node). -1 with a message for a prior
 * naming no pod, group, node or bin, as for out of memory.
 */
int sched_pack_after(struct sched_cache *c, const uint32_t *pods, size_t n, size_t group,
		     int max_new, int upcoming_nodes, const struct pack_prior *prior,
		     size_t n_prior, bool existing, struct pack_result *out, struct errbuf *err);

/*
 * First-fit decreasing onto new nodes of several groups at once: similar
 * groups (luascale.packing.similar), one zone each in the usual setup,
 * each new node with its own group's room (allocatable less DaemonSets).
 * Each new node opens in the smallest group (the larger of its target and
 * current, plus the new nodes opened in it; ties by name) whose template
 * (and the pod's relations: spread, anti-affinity) takes the pod, so the
 * groups grow towards even sizes whatever their order (the Cluster
 * Autoscaler's --balance-similar-node-groups) and a zone spread is met in
 * one packing. 'max_new' per group (-1: no cap). No upcoming nodes.
 * out->bin_group names each bin's group. -1 with a message on a bad
 * group, as for the others.
 */
int sched_pack_groups(struct sched_cache *c, const uint32_t *pods, size_t n,
		      const uint32_t *groups, size_t n_groups, const int *max_new,
		      const struct pack_prior *prior, size_t n_prior, bool existing,
		      struct pack_result *out, struct errbuf *err);

/*
 * First-fit decreasing onto several groups at once, in the order given,
 * whose new nodes may differ in room: with 'upcoming', each group's nodes
 * on their way first (group after group, as sched_pack_upcoming() counts
 * a group's), then new nodes, each opened in the first group of the list
 * whose template and relations take the pod and whose 'max_new' (-1: no
 * cap) allows one more. One packing over every node on its way, or a
 * spread whose domains are the groups themselves (capacity types, a
 * custom label): a group the spread refuses now takes pods again once the
 * others have some. out->bin_group names each bin's group; the first
 * out->upcoming bins are the nodes on their way.
 */
int sched_pack_together(struct sched_cache *c, const uint32_t *pods, size_t n,
			const uint32_t *groups, size_t n_groups, const int *max_new, bool upcoming,
			const struct pack_prior *prior, size_t n_prior, bool existing,
			struct pack_result *out, struct errbuf *err);

void pack_result_free(struct pack_result *r);

/*
 * Where the scheduler could put 'pods' on the nodes as they are, in the
 * order given (cluster:place sorts them largest first): each on the first
 * Ready, schedulable node not being removed, in snapshot order, whose free
 * room (less what the pods placed before it took) and labels, affinity and
 * taints take it. dest[i] is that node's index or -1; *n_placed counts the
 * placed. A max tree over the nodes' free room skips the nodes too full,
 * so a pod no node has room for costs no walk of the cluster. 0, or -1
 * (out of memory, a bad pod index) with every dest[i] -1.
 */
int sched_place(const struct snapshot *s, const uint32_t *pods, size_t n, int32_t *dest,
		size_t *n_placed, struct errbuf *err);

/* Options for sched_drainable(). */
struct drain_opts {
	const struct label_selector *protected_pods; /* NULL: none */
	const uint8_t *excluded;  /* per node: 1 = cannot receive pods (also removed); may be NULL */
	bool move_excluded;       /* the evictable pods of excluded nodes must find room too
				   * (they are being removed in the same round); default false */
	bool local_storage_blocks;   /* pods with emptyDir/hostPath block (default true) */
	bool unreplicated_blocks;    /* pods without a controller block (default true) */
	bool kube_system_needs_pdb;  /* kube-system pods without a PDB block (default false) */
};

/* Fills 'o' with the defaults named above. */
void drain_opts_default(struct drain_opts *o);

/*
 * Whether a pod on a node would be evicted by a drain: not DaemonSet, not
 * mirror/static, not finished.
 */
bool sched_pod_evictable(const struct pod *p);

/*
 * The rules of sched_node_blockers() for one pod, without the PDB budget
 * count: protected (matches o->protected_pods; a DaemonSet or mirror pod
 * too), safe-to-evict "false", local storage, no controller, kube-system
 * without a PDB, as 'o' says. The same predicate at plan time and when a
 * drain is about to evict, so both agree. 's' supplies the PDBs for
 * kube_system_needs_pdb and may be NULL (no PDB known). Returns true with
 * 'why' ("pod ns/x is protected (matches selector critical=true)") when
 * the pod keeps its node, false otherwise.
 */
bool sched_pod_blocks_drain(const struct snapshot *s, const struct pod *p,
			    const struct drain_opts *o, char *why, size_t why_len);

/*
 * Checks that do not depend on room: a protected pod, a pod whose PDB does
 * not allow as many disruptions as the drain would cause, safe-to-evict
 * "false", local storage, unreplicated pods (as 'o' says). Returns true when
 * none blocks; else false with 'why' like "pod ns/x uses local storage
 * (volume data)" or "pod ns/y: PodDisruptionBudget ns/pdb allows 0 disruptions".
 */
bool sched_node_blockers(const struct snapshot *s, size_t node,
			 const struct drain_opts *o, char *why, size_t why_len);

/*
 * Can node 'node' be emptied? sched_node_blockers(), then every evictable
 * pod is placed first-fit (largest first) on the other nodes that are
 * Ready, schedulable and not excluded, taking room as it goes. With
 * o->move_excluded, the evictable pods of the excluded nodes are placed in
 * the same pass, so several removals in one round are checked together. Returns
 * true, or false with 'why' ("no room for pod ns/y (needs cpu 2, memory
 * 4Gi)").
 */
bool sched_drainable(const struct snapshot *s, size_t node,
		     const struct drain_opts *o, char *why, size_t why_len);

#endif
