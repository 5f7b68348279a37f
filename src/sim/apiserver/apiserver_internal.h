/*
 * sim/apiserver_internal: what apiserver.c (the HTTP server, discovery,
 * faults, the cloud's endpoints) and apiserver_objects.c (the Kubernetes
 * resources: list, get, watch, writes) share. Not for other modules.
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

/* What a handler answers. */
struct reply {
	int code;
	struct buf body;             /* JSON unless content_type says otherwise */
	const char *content_type;    /* NULL: application/json */
	const char *retry_after;     /* Retry-After header, or NULL */
	char warning[600];           /* Warning header, or "" */
	struct watch *watch;         /* a watch stream instead of a body */
};

/* A request for a resource, as routed. */
struct resreq {
	const char *method;
	enum apiserver_resource res;
	const char *ns;              /* NULL: all namespaces (or cluster-scoped) */
	const char *name;            /* NULL: the collection */
	const char *sub;             /* subresource ("eviction"), or NULL */
	const char *body;            /* the request body ("" when none) */
	size_t body_len;
	const char *content_type;    /* "" when none */
	bool table;                  /* Accept asks for a Table */
	bool watch;                  /* a watch: ?watch= true, or a /watch/ path */
	struct MHD_Connection *conn; /* for query parameters */
};

/* A boolean query parameter as the real server reads one: absent false,
 * "0" and "false" (any case) false, anything else true. */
bool apiserver_param_bool(const char *v);

/* Fills 'out' with a Status answer. */
void apiserver_reply_status(struct reply *out, int code, const char *reason, const char *message,
			    const char *kind, const char *name);

/* A query parameter of the request, or NULL (apiserver_objects.c). */
const char *apiserver_query(const struct resreq *rq, const char *key);

/* ---- apiserver_request.c: a write's options, patch and schema ---- */

/* dryRun (query, or a DeleteOptions body for a delete or an eviction): 1
 * when "All", 0 when absent, -1 answered 422 for another value. */
int apiserver_dry_run(const struct resreq *rq, const char *options_kind, struct reply *out);

/* Answers 415 with the patch types the server takes. */
void apiserver_unsupported_media(struct reply *out);

/* 'cur' (taken; NULL: nothing yet, for an apply) with the request's patch
 * applied by its content type: a new tree, or NULL answered (415, 400, 422). */
struct cJSON *apiserver_patched(const struct resreq *rq, struct cJSON *cur, struct reply *out);

/* Answers with 'o' (borrowed) at resourceVersion 'rv' (0: none): a dry run's result. */
void apiserver_reply_tree(struct reply *out, int code, struct cJSON *o, uint64_t rv);

/* Checks an object a client writes against its kind's schema: a wrong
 * type is 400; unknown fields are dropped and, by fieldValidation, a
 * Warning, a 400 (Strict) or nothing. 0, or -1 answered. */
int apiserver_validate_object(const struct resreq *rq, struct cJSON *o, struct reply *out);

/* Handles a request for a Kubernetes resource (apiserver_objects.c). */
void apiserver_handle_resource(struct apiserver *s, const struct resreq *rq, struct reply *out);

/* The MHD content reader of a watch, its destructor, and whether a watch
 * should start with 410 (a fault). */
ssize_t apiserver_watch_read(void *cls, uint64_t pos, char *buf, size_t max);
void apiserver_watch_free(void *cls);

/* Takes one "expire the next watch" fault if there is one (under s->mu). */
bool apiserver_take_expire(struct apiserver *s);

/* Seeds the store with the cluster's PDBs, DaemonSets and namespaces, and
 * refreshes PDB status (the ticker calls it). */
void apiserver_sync_static(struct apiserver *s, bool first);

/* The cluster's watcher: renders changes into the store. */
void apiserver_on_change(void *ud, const struct sim_change *ch);

/* Real time. */
int64_t apiserver_now_ns(void);
int64_t apiserver_now_wall(void);

#endif
