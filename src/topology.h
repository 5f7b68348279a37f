/*
 * topology: the predicates that relate a pod to other pods and to
 * topology domains — required inter-pod affinity and anti-affinity (both
 * directions), topology spread (DoNotSchedule) and host ports — over a
 * set of sites: the snapshot's nodes, nodes a packing plans, and the
 * groups' templates (spread domains while planning). Pods are indexed by
 * (namespace, labels) class and counted per topology domain, so a check
 * never walks the pods. Volume zones, selectors, taints and resources are
 * sched.c's; this module never reads a room.
 */
#ifndef LUASCALE_TOPOLOGY_H
#define LUASCALE_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"
#include "sched.h"

struct topo;

enum topo_site_kind {
	TOPO_NODE,     /* a node of the snapshot */
	TOPO_PLANNED,  /* a node a packing plans: takes pods, is a domain */
	TOPO_TEMPLATE, /* a group's template: a spread domain while planning, never takes pods */
};

/*
 * An index over a finished snapshot: one site per node (site i is node i),
 * and every pod bound to a known node that has not finished (those of
 * s->reaching at once, the others the first time a constraint counts
 * pods). The snapshot
 * must outlive it (labels, taints and pods are borrowed). NULL when out
 * of memory.
 */
struct topo *topo_new(const struct snapshot *s);

/* An empty index: no sites, no pods. 'ns' (may be NULL) lists the
 * namespaces' labels for namespaceSelectors, borrowed; a namespace not
 * listed has only its kubernetes.io/metadata.name label. */
struct topo *topo_new_empty(const struct namespace_obj *ns, size_t n_ns);

void topo_free(struct topo *t);

/*
 * Adds a site; 'name', 'labels' and 'taints' are borrowed. Returns its
 * index, or -1 when out of memory.
 */
long topo_add_site(struct topo *t, enum topo_site_kind kind, const char *name,
		   const struct kvlist *labels, const struct taint *taints, size_t n_taints);

/*
 * A planned node of a template: its labels are those of template site
 * 'twin' (TOPO_TEMPLATE) with its own kubernetes.io/hostname, so for every
 * spread constraint not on the hostname (and not reading it) it counts
 * where its twin counts: a packing opens thousands of them without
 * touching each constraint. 'twin' -1: none (all its own). -1 on OOM or
 * when 'twin' is not a template site.
 */
long topo_add_planned(struct topo *t, const char *name, const struct kvlist *labels,
		      const struct taint *taints, size_t n_taints, long twin);

/*
 * Planned site 'site' will run 'pods' (n of them, borrowed: the DaemonSet
 * pods of its group's new nodes, ns and controller_name naming each
 * DaemonSet): their host ports are taken there, and a pod asking for one
 * is refused ("host port TCP/80 in use by DaemonSet ns/name on node x").
 * They are not counted for anything else. Set once, right after
 * topo_add_planned(); it goes with the site when a rollback drops it.
 */
void topo_hold_ports(struct topo *t, size_t site, const struct pod *const *pods, size_t n);

size_t topo_sites(const struct topo *t);

/*
 * Site 'site' is going away (its node drained and deleted): it is no
 * longer a topology domain. Its pods stay counted until removed. Undone
 * by a rollback. Returns 0, or -1 when out of memory.
 */
int topo_disable_site(struct topo *t, size_t site);

/*
 * Counts pod 'p' (borrowed; it must outlive the index or be removed) on
 * site 'site' (not a template). Returns 0, or -1 when out of memory (the
 * pod is then not counted).
 */
int topo_add_pod(struct topo *t, size_t site, const struct pod *p);

/* Stops counting 'p' on 'site'. Returns 0, or -1 when it was not there. */
int topo_remove_pod(struct topo *t, size_t site, const struct pod *p);

/*
 * Would the scheduler let pod 'p' onto site 'site' as far as host ports,
 * inter-pod affinity, anti-affinity and topology spread go? Returns
 * SCHED_FITS, or the first constraint that fails with a 'detail' naming
 * it and the other side ("anti-affinity with prod/db-0 on node w-1",
 * "topology spread on topology.kubernetes.io/zone: skew would be 2 > 1").
 * 'p' need not be counted anywhere; when it is, it is not counted against
 * itself. SCHED_NOT_MODELLED when out of memory (never "fits" by mistake).
 */
enum sched_fit topo_check(struct topo *t, const struct pod *p, size_t site, char *detail,
			  size_t detail_len);

/*
 * Whether topo_check() can refuse 'p' anywhere: it has host ports,
 * required (anti-)affinity or spread constraints, or some counted pod has
 * anti-affinity terms that match it. When false every check is
 * SCHED_FITS (until such a pod is counted).
 */
bool topo_relevant(struct topo *t, const struct pod *p);

/* How many distinct anti-affinity terms counted pods have had (it never
 * shrinks): with none, a pod without relations of its own is never
 * refused; while it stays the same, topo_relevant()'s answer for such a
 * pod stays the same. */
size_t topo_owner_groups(const struct topo *t);

/*
 * With 'on', template sites count as topology spread domains (a packing
 * plans for the groups' zones even before they have a node); off by
 * default, as the scheduler sees only nodes.
 */
void topo_set_planning(struct topo *t, bool on);

/*
 * The pods a packing has yet to place: base[ix[i]] for i < n, borrowed
 * until the next call; n 0 (or NULL) clears it. A pod whose required
 * affinity terms no counted pod matches may go anywhere as the first of
 * its kind when it matches them itself (the scheduler's rule), but not
 * while one of these pods, without required affinity of its own, matches
 * them all: the scheduler may well place that one first, so the pod is
 * refused everywhere until it lands ("pod affinity: waits for pending pod
 * ns/name, ..."). The packing places such pods after the others.
 */
void topo_set_waiting(struct topo *t, const struct pod *base, const uint32_t *ix, size_t n);

/*
 * A mark of the index's state, and a return to it: pods added since are
 * removed, pods removed since are added back, sites added since are
 * dropped. Marks nest (a rollback to an earlier mark undoes the later).
 * topo_rollback() returns 0, or -1 when out of memory (the index is then
 * unusable: free it).
 */
size_t topo_mark(const struct topo *t);
/* Forgets the journal: the state now is what every rollback returns to. */
void topo_commit(struct topo *t);
int topo_rollback(struct topo *t, size_t mark);

/*
 * The topology key of the last refusal by topo_check(), or NULL when it
 * was not about a domain (host ports) or nothing was refused. A packing
 * reads it to know that every planned node sharing the site's value of
 * that key (a zone of one template) would be refused as well.
 */
const char *topo_refusal_key(const struct topo *t);

#endif
