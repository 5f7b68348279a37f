/*
 * sim/workloads: the workloads clients write through the simulated API
 * server — Pods (validated, LimitRange defaults applied), and the
 * controllers of ReplicaSets, Deployments and Jobs that make and remove
 * their pods in sim/world/cluster.c — plus the garbage collector of dependents.
 * The objects themselves live in the API server's store; HTTP is not here.
 */
#ifndef LUASCALE_SIM_WORKLOADS_H
#define LUASCALE_SIM_WORKLOADS_H

#include <stdbool.h>
#include <stdint.h>

#include "errbuf.h"
#include "sim/apiserver/apiserver_store.h"
#include "sim/world/cluster.h"

struct cJSON;
struct sim_workloads;

/* How long a Job's pod runs when its template has no sim.luascale.io/duration. */
#define SIM_WORKLOADS_JOB_DURATION_NS (30LL * 1000000000LL)

/* The annotation that says how long a pod runs once bound ("30s", "5m"). */
#define SIM_WORKLOADS_DURATION_ANNOTATION "sim.luascale.io/duration"

/*
 * Controllers over 'cluster' and 'store' (both borrowed, they outlive it).
 * 'seed' draws the pods' name suffixes. NULL when out of memory.
 */
struct sim_workloads *sim_workloads_new(struct sim_cluster *cluster, struct apiserver_store *store,
					uint64_t seed);

/* Frees the controllers (the specs they registered stay with the cluster). NULL is ignored. */
void sim_workloads_free(struct sim_workloads *w);

/*
 * A client creates pod 'pod' (borrowed; namespace and name set, kind and
 * apiVersion too): validated as a real server does (containers with a
 * name and an image, the namespace exists, the name is free), LimitRange
 * defaults of its namespace written into 'pod', then (unless 'dry') made
 * a pending pod of the cluster, bound at once when it names spec.nodeName.
 * Returns 0, or the HTTP status to answer (404, 409, 422, 500) with the
 * message in 'err'. Takes the world's lock and the store's: hold neither.
 */
int sim_workloads_create_pod(struct sim_workloads *w, struct cJSON *pod, bool dry,
			     struct errbuf *err);

/*
 * Checks and defaults a Deployment, ReplicaSet or Job a client creates
 * ('cur' NULL) or changes ('cur' its stored JSON): selector and template
 * required and matching, spec defaults, generation (1, then bumped when
 * the spec changes), status kept from 'cur' (a client writes it only
 * through /status: 'status_only' keeps everything else from 'cur').
 * 'o' is changed in place. 0, or 422 with the message in 'err'.
 */
int sim_workloads_admit(enum apiserver_resource r, struct cJSON *o, const struct cJSON *cur,
			bool status_only, struct errbuf *err);

/*
 * Before an owner (ns/name, uid) goes with propagationPolicy Orphan: its
 * dependents lose their ownerReference and are no longer its. Hold no lock.
 */
void sim_workloads_orphan(struct sim_workloads *w, enum apiserver_resource r, const char *ns,
			  const char *uid);

/*
 * One pass of every controller, at 'now_wall' (unix s, for timestamps):
 * Deployments roll their ReplicaSets, ReplicaSets and Jobs make or remove
 * pods and write their status, dependents of owners that are gone are
 * deleted, and owners deleted in the foreground go once their dependents
 * are gone. Hold no lock.
 */
void sim_workloads_reconcile(struct sim_workloads *w, int64_t now_wall);

#endif
