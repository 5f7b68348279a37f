/*
 * sim/apiserver: the simulated world served over HTTP as a subset of the
 * Kubernetes API (libmicrohttpd, a thread per connection), so kubectl and
 * luascale's own client can talk to it. It owns the HTTP side, the object
 * store with its resourceVersions and watch history (apiserver_store.c),
 * the JSON it renders (apiserver_render.c) and the faults it injects
 * (apiserver_fault.c); the world itself stays in sim/world/cluster.c and
 * sim/clouds/cloud.c. Only 127.0.0.1 is served; there is no authentication.
 *
 * Served (JSON bodies; Accept "as=Table" gets a meta.k8s.io/v1 Table);
 * docs/simulation.md has the whole list and the fidelity rule (do what a
 * real server does, or answer as it answers an unsupported request):
 *   GET  /version /healthz /readyz /livez
 *   GET  /api /api/v1 /apis /apis/GROUP /apis/GROUP/VERSION   plain discovery
 *        (aggregated discovery is never offered: plain JSON answers it)
 *   nodes                  get list watch patch delete; nodes/status get patch
 *   pods                   get list watch create update patch delete (created
 *                          pods join the simulated cluster: sim/world/workloads.c);
 *                          pods/status get;
 *                          pods/eviction create (PDBs honoured: 429);
 *                          pods/binding create
 *   namespaces             get list watch
 *   events (v1)            get list watch create update patch delete; the
 *                          control plane's own (sim/apiserver/apiserver_events.c)
 *   events.k8s.io/v1 events  the same Events in that shape, same verbs
 *   configmaps             get list watch create update patch delete
 *   policy/v1 poddisruptionbudgets   get list watch
 *   coordination.k8s.io/v1 leases    get list watch create update patch delete
 *                          (and the kubelets' in kube-node-lease)
 *   apps/v1 daemonsets     get list watch (the scenario's DaemonSets)
 *   persistentvolumeclaims, persistentvolumes, storage.k8s.io/v1
 *   storageclasses         get list watch (empty: the world has no volumes)
 *   apps/v1 deployments, replicasets, batch/v1 jobs   get list watch create
 *                          update patch delete, /status, /scale (not jobs);
 *                          their controllers are sim/world/workloads.c's
 *   limitranges            get list watch create update patch delete (their
 *                          Container defaults applied to new pods)
 *   authorization.k8s.io/v1 selfsubjectaccessreviews, selfsubjectrulesreviews
 *                          create (everything is allowed)
 * Lists take labelSelector, fieldSelector (the real server's fields per
 * kind, = == !=), limit and continue; watches (?watch=, /watch/ paths, a
 * named object) take resourceVersion, allowWatchBookmarks, timeoutSeconds
 * and sendInitialEvents. Patches: JSON Patch, merge, strategic merge and
 * apply; on nodes the fields that change are metadata.labels,
 * metadata.annotations, spec.unschedulable and spec.taints. dryRun=All on
 * every write.
 *
 * The cloud, for a remote sim provider (group sim.luascale.io/v1, JSON):
 *   GET  /apis/sim.luascale.io/v1/groups
 *        -> {"kind":"NodeGroupList","items":[{"name","min","max","target",
 *            "pricePerHour","instances":[{"id","providerID","state",
 *            "launched","outdated"}]}]} ("outdated": why the instance is not
 *            what its group launches now, absent when it is)
 *   POST /apis/sim.luascale.io/v1/launch     {"group":"g","count":N}
 *        -> once the cloud's call is over: {"group","requested","launched":
 *            [{"id","providerID"}],"error":"","message":""} (error, when
 *            fewer were made: Throttled NoCapacity Quota NotFound Invalid
 *            Transient Auth Cancelled, as enum provider_error)
 *   POST /apis/sim.luascale.io/v1/terminate  {"group":"g","ids":["g-3",...]}
 *        -> {"group","requested","terminated":N,"error":"","message":""}
 *   POST /apis/sim.luascale.io/v1/faults     {"faults":["down=20s",...]}
 *        -> 200 {"applied":N} or 400 (see apiserver_faults_parse)
 *   GET  /apis/sim.luascale.io/v1/stats      the cluster's counters
 *   GET  /apis/sim.luascale.io/v1/reacting   when pods first became Unschedulable
 *        and when launch calls arrived, with their nodes (sim/world/reacting.h)
 * A launch or terminate answers 200 whatever the cloud said (the error is
 * in the body); 400 on a malformed request.
 */
#ifndef LUASCALE_SIM_APISERVER_H
#define LUASCALE_SIM_APISERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"
#include "log.h"
#include "sim/world/cluster.h"

struct apiserver;

struct apiserver_opts {
	int port;                   /* 0: a free port (see apiserver_port) */
	size_t history;             /* watch events kept, default 10000 */
	int64_t history_window_s;   /* and for at most this long (s), default 300 */
	int64_t bookmark_ns;        /* BOOKMARK period on watches that ask, default 60s */
	int64_t pdb_sync_ns;        /* PDB status recomputed this often, default 1s */
	int64_t max_watch_ns;       /* a watch without timeoutSeconds ends after, default 30m */
	size_t max_events;          /* Event objects kept (oldest go), default 5000 */
	int64_t event_ttl_s;        /* an Event goes this long after its last write, default 3600 */
	uint64_t seed;              /* fault draws */
	/* the LimitRange "defaults" in namespace default: the requests a pod's
	 * containers get when they name none (default 500m, 512Mi; both "": none) */
	char default_cpu[32], default_memory[32];
	const struct logger *log;   /* borrowed; NULL: silent */
};

void apiserver_opts_default(struct apiserver_opts *o);

/* ---- faults ---- */

/* A request rule: matching requests fail with 'code' (429 or 5xx). */
struct apiserver_fault_rule {
	int code;           /* 429: TooManyRequests (Retry-After: 1); 500, 503, ... */
	double rate;        /* probability per matching request (0 with count: always) */
	int count;          /* > 0: only the next 'count' matching requests */
	char verb[16];      /* get list watch create update patch delete; "" any */
	char resource[64];  /* "pods/eviction", "nodes", ...; "" any */
};

#define APISERVER_MAX_RULES 16

struct apiserver_faults {
	bool clear;                 /* remove every fault in force first */
	bool drop_watches_now;      /* cut every open watch once */
	int64_t drop_watches_ns;    /* > 0: cut every open watch this often (0: keep) */
	int expire_watches;         /* the next N watches start with an ERROR 410 Expired */
	int64_t latency_ns;         /* > 0: every answer waits this long first */
	int64_t down_for_ns;        /* > 0: connection refused for this long, */
	int64_t down_after_ns;      /*   starting this long after it is applied */
	struct apiserver_fault_rule rules[APISERVER_MAX_RULES];
	size_t n_rules;
	/* kubelets that stop (or start again) reporting, applied once */
	struct {
		char node[254];
		bool up;
	} kubelets[APISERVER_MAX_RULES];
	size_t n_kubelets;
};

/*
 * Adds one fault spec to 'f' (zero it first):
 *   drop-watches=DUR        every open watch is cut (connection closed
 *                           mid-stream) every DUR; "drop-watches=now": once
 *   expire-watches=N        the next N watches get an in-stream ERROR
 *                           event: Status 410 Expired (HTTP 200)
 *   throttle=R[:VERB[:RES]] 429 TooManyRequests on matching requests;
 *   error=R[:VERB[:RES[:CODE]]]  a 5xx (default 500); R is a probability
 *                           ("0.3") or a count of next requests ("3x");
 *                           VERB or RES "*" or empty: any
 *   latency=DUR             every answer is delayed by DUR
 *   down=DUR[@AFTER]        the listening socket is closed (connection
 *                           refused) for DUR, from AFTER from now (default
 *                           at once); open watches are cut
 *   kubelet-down=NODE       the node's kubelet stops reporting: the node
 *                           goes NotReady (Ready Unknown), its Lease is no
 *                           longer renewed, nothing is scheduled on it
 *   kubelet-up=NODE         it reports again: Ready
 *   clear                   no faults
 * DUR as in the config ("500ms", "20s", "1m"). 0, or -1 with a message.
 */
int apiserver_faults_parse(struct apiserver_faults *f, const char *spec, struct errbuf *err);

/*
 * Applies 'f' now: clear first when asked, scalars that are set replace
 * the ones in force, rules are added (at most APISERVER_MAX_RULES in force;
 * the oldest go). Thread-safe.
 */
void apiserver_inject(struct apiserver *s, const struct apiserver_faults *f);

/* ---- life cycle ---- */

/*
 * Serves 'cluster' (borrowed; it and its cloud must outlive the server) on
 * 127.0.0.1:o->port, from now until apiserver_free(). Registers itself as
 * the cluster's watcher. NULL with a message (port in use, out of memory).
 */
struct apiserver *apiserver_new(struct sim_cluster *cluster, const struct apiserver_opts *o,
				struct errbuf *err);

/* The port it listens on. */
int apiserver_port(const struct apiserver *s);

/* The current (latest) resourceVersion. */
uint64_t apiserver_resource_version(struct apiserver *s);

/*
 * Writes a kubeconfig for this server to 'path' (mode 0600): cluster,
 * user (a token the server does not check) and context all named
 * "luascale-sim", current-context set. The cluster says
 * insecure-skip-tls-verify: the server is plain HTTP on loopback, and
 * clients that insist on a TLS setting for a cluster accept that one. 0, or -1 with a message.
 */
int apiserver_write_kubeconfig(const struct apiserver *s, const char *path, struct errbuf *err);

/*
 * Stops serving: open watches end, running requests finish, the cluster
 * loses its watcher. NULL is ignored.
 */
void apiserver_free(struct apiserver *s);

#endif
