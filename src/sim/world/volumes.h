/*
 * sim/volumes: the simulated world's PersistentVolumeClaims, the
 * PersistentVolumes bound to them and their StorageClasses — one claim per
 * StatefulSet replica whose workload has a volume, kept when the replica
 * goes (a StatefulSet's claims outlive its pods). A claim is bound from
 * the start to a volume in a fixed zone, or, with a WaitForFirstConsumer
 * class, when its pod first lands, to a volume made in that node's zone.
 * Which pod has which claim, and scheduling, are sim/world/cluster.c's.
 */
#ifndef LUASCALE_SIM_VOLUMES_H
#define LUASCALE_SIM_VOLUMES_H

#include <stddef.h>

#include "errbuf.h"
#include "model.h"

/* A workload's volume per replica (a StatefulSet's volumeClaimTemplate). */
struct sim_volume {
	const char *claim;           /* the template's name: pod P's claim is "<claim>-<P>" */
	const char *storage_class;   /* WaitForFirstConsumer, no allowedTopologies */
	const char *zone_key;        /* the node label a volume's zone is read from and
				      * its node affinity names (topology.kubernetes.io/zone) */
	const char *const *zones;    /* n_zones > 0: replica i's volume is in
				      * zones[(i - 1) % n_zones] from the start */
	size_t n_zones;
};

struct sim_volumes;

/* An empty set; NULL when out of memory. */
struct sim_volumes *sim_volumes_new(void);

/* Frees the set and every string and array it lent out. NULL is ignored. */
void sim_volumes_free(struct sim_volumes *v);

/*
 * The claim of pod 'pod' (namespace 'ns') of a workload with volume 'vol'
 * (borrowed; it must outlive the set), replica number 'ordinal' (>= 1):
 * found when it exists, else made, bound at once when 'vol' lists zones.
 * Returns its handle (>= 0), or -1 when out of memory.
 */
long sim_volumes_claim(struct sim_volumes *v, const char *ns, const char *pod,
		       const struct sim_volume *vol, long ordinal);

/* A pod's list of claim names (one: the claim's), for struct pod's
 * 'claims'; valid while the set lives. */
const char **sim_volumes_claim_list(const struct sim_volumes *v, long claim);

/* Where the claim's volume can be reached (one node affinity, for struct
 * pod's 'volume_affinity'), or NULL while it is not bound (anywhere). */
struct node_affinity *sim_volumes_affinity(const struct sim_volumes *v, long claim);

/*
 * The claim's pod was bound to node 'node' with 'labels': an unbound claim
 * gets a volume there (in the node's zone, or on the node itself when it
 * has no zone label). A bound one is left alone. 0, or -1 when out of
 * memory.
 */
int sim_volumes_bind(struct sim_volumes *v, long claim, const char *node,
		     const struct kvlist *labels);

/* What the API server shows of one claim (strings borrowed from the set). */
struct sim_claim_view {
	const char *ns;
	const char *name;
	const char *storage_class;
	const char *pv;              /* its volume's name, NULL while unbound */
	const char *place_key;       /* the volume's node affinity "place_key In (place)": */
	const char *place;           /* a zone, or a node's hostname; NULL while unbound */
};

/* How many claims the set has. */
size_t sim_volumes_count(const struct sim_volumes *v);

/* Claim number 'i' (< sim_volumes_count()) as the API server shows it. */
void sim_volumes_view(const struct sim_volumes *v, size_t i, struct sim_claim_view *out);

/*
 * Adds every claim, bound volume and class to 's' (not finished; it
 * borrows the strings and arrays, so free it before the set) and marks
 * the volumes known: a claim the set does not have is really absent.
 * 0, or -1 with a message.
 */
int sim_volumes_snapshot(const struct sim_volumes *v, struct snapshot *s, struct errbuf *err);

#endif
