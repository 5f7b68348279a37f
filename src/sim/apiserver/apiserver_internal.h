/*
 * sim/apiserver_internal: the server's state, and what apiserver.c (the
 * HTTP server, discovery, faults, the cloud's endpoints) calls in
 * apiserver_objects.c (the Kubernetes resources: list, get, watch, writes)
 * and apiserver_fault.c. Requests and answers are apiserver_request.h's.
 * Not for other modules.
 */
#ifndef LUASCALE_SIM_APISERVER_INTERNAL_H
#define LUASCALE_SIM_APISERVER_INTERNAL_H

#include <pthread.h>
#include <sys/types.h>
#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "engine/kubeops.h"
#include "sim/apiserver/apiserver.h"
#include "sim/apiserver/apiserver_store.h"
#include "sim/apiserver/apiserver_request.h"

struct MHD_Connection;
struct cJSON;
struct MHD_Daemon;
struct watch;
struct apiserver_events;

struct apiserver {
	struct apiserver_opts o;
	struct sim_cluster *cluster;
	struct sim_cloud *cloud;
	struct kubeops kube;
	struct apiserver_store *store;
	struct apiserver_events *events; /* the control plane's Events (under the store's lock) */
	struct sim_workloads *wl;    /* the controllers of what clients write (sim/world/workloads.c) */
	int port;

	pthread_mutex_t mu;          /* the daemon, faults, the ticker's state */
	pthread_cond_t cv;           /* wakes the ticker */
	struct MHD_Daemon *daemon;   /* NULL while down */
	bool stopping;
	pthread_t ticker;
	bool ticker_started;

	/* faults in force (under mu) */
	struct apiserver_fault_rule rules[APISERVER_MAX_RULES];
	size_t n_rules;
	int64_t latency_ns;
	int64_t drop_every_ns, next_drop_ns;
	int expire_watches;
	int64_t down_from_ns, down_until_ns; /* down_until 0: no window */
	bool down;
	uint64_t rng;

	/* a PATCH in progress holds the world's lock and makes one change of
	 * its node out of several (under the world's lock) */
	const char *txn_node;
	struct cJSON *txn_obj;

	struct sim_reacting *reacting; /* Unschedulable pods, launch calls (own lock) */
};

/* Handles a request for a Kubernetes resource (apiserver_objects.c). */
void apiserver_handle_resource(struct apiserver *s, const struct resreq *rq, struct reply *out);

/* The MHD content reader of a watch, its destructor, and whether a watch
 * should start with 410 (a fault). */
ssize_t apiserver_watch_read(void *cls, uint64_t pos, char *buf, size_t max);
void apiserver_watch_free(void *cls);

/* Takes one "expire the next watch" fault if there is one (under s->mu;
 * apiserver_fault.c). */
bool apiserver_take_expire(struct apiserver *s);

/* Seeds the store with the cluster's PDBs, DaemonSets and namespaces, and
 * refreshes PDB status (the ticker calls it). */
void apiserver_sync_static(struct apiserver *s, bool first);

/* The cluster's watcher: renders changes into the store. */
void apiserver_on_change(void *ud, const struct sim_change *ch);


#endif
