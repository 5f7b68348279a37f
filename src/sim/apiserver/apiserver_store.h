/*
 * sim/apiserver_store: the simulated API server's "etcd" — every object it
 * serves as JSON, one sorted table per resource, a global resourceVersion
 * bumped by every change, and a bounded history of watch events. It knows
 * nothing of HTTP or of the simulated world; one mutex guards it all, and
 * watchers wait on its condition variable.
 */
#ifndef LUASCALE_SIM_APISERVER_STORE_H
#define LUASCALE_SIM_APISERVER_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "errbuf.h"
#include "model.h"

struct cJSON;

/* The resources the server knows. */
enum apiserver_resource {
	APISERVER_NODES,
	APISERVER_PODS,
	APISERVER_NAMESPACES,
	APISERVER_EVENTS,
	APISERVER_CONFIGMAPS,
	APISERVER_PDBS,
	APISERVER_LEASES,
	APISERVER_DAEMONSETS,
	/* events.k8s.io/v1 Events: the core Events, in the events.k8s.io shape */
	APISERVER_EVENTS_V1,
	APISERVER_DEPLOYMENTS,
	APISERVER_REPLICASETS,
	APISERVER_JOBS,
	APISERVER_LIMITRANGES,
	/* volumes: the world has none (get list watch), luascale run watches them */
	APISERVER_PVCS,
	APISERVER_PVS,
	APISERVER_STORAGE_CLASSES,
	APISERVER_N_RESOURCES,
};

#define APISERVER_MAX_FIELDS 12

/* A field a fieldSelector may name: its label, where its value is (NULL:
 * the label is the path) and the value when it is absent (NULL: ""). */
struct apiserver_field {
	const char *name;
	const char *path;
	const char *dflt;
};

struct apiserver_resdef {
	const char *name;        /* "pods" */
	const char *group;       /* "" for the core group */
	const char *version;     /* "v1" */
	const char *kind;        /* "Pod" */
	const char *singular;    /* "pod" */
	const char *short_name;  /* "po", or NULL */
	bool namespaced;
	bool client_owned;       /* created and changed by clients (events, configmaps, leases) */
	const char *verbs;       /* space-separated, as discovery lists them */
	/* fields a fieldSelector may name, besides metadata.name and metadata.namespace,
	 * as the real server's field label conversions list them */
	struct apiserver_field fields[APISERVER_MAX_FIELDS];
};

extern const struct apiserver_resdef apiserver_resources[APISERVER_N_RESOURCES];

/* The table a resource's objects live in: itself, but events.k8s.io
 * Events are the core Events (stored in their core shape). */
enum apiserver_resource apiserver_storage_of(enum apiserver_resource r);

/* "apiVersion" of a resource: "v1" or "group/version". */
const char *apiserver_api_version(enum apiserver_resource r);

/*
 * One version of an object, immutable once made, shared (by reference) by
 * the table and the watch history. Its JSON has no resourceVersion:
 * apiserver_ver_write() splices it in.
 */
struct apiserver_ver {
	int refs;                /* under the store's lock */
	uint64_t rv;
	char *json;
	size_t len;
	size_t rv_at;            /* where "resourceVersion":"N", goes */
	char *ns;                /* "" when cluster-scoped */
	char *name;
	char *uid;
	int64_t created;         /* unix seconds */
	int64_t written;         /* when this version was stored (unix s): an Event's time to live counts from it */
	struct kvlist labels;    /* owned */
	char *fields[APISERVER_MAX_FIELDS]; /* values of the resource's fields (their default when absent) */
};

/* Appends the object's JSON with its resourceVersion. */
int apiserver_ver_write(struct buf *b, const struct apiserver_ver *v);

enum apiserver_event_type { APISERVER_ADDED, APISERVER_MODIFIED, APISERVER_DELETED };

const char *apiserver_event_type_str(enum apiserver_event_type t);

struct apiserver_event {
	uint64_t rv;
	int64_t at_wall;             /* when it happened (unix s) */
	enum apiserver_resource res;
	enum apiserver_event_type type;
	struct apiserver_ver *ver;   /* the object after (DELETED: its last state) */
	struct apiserver_ver *prev;  /* before (MODIFIED, DELETED), or NULL */
};

struct apiserver_store;

/* A store keeping 'history' watch events and at most 'max_events' Events.
 * NULL when out of memory. */
struct apiserver_store *apiserver_store_new(size_t history, size_t max_events);
void apiserver_store_free(struct apiserver_store *s);

void apiserver_store_lock(struct apiserver_store *s);
void apiserver_store_unlock(struct apiserver_store *s);

/* Everything below needs the lock. */

/* The latest resourceVersion. */
uint64_t apiserver_store_rv(const struct apiserver_store *s);

/*
 * Stores 'obj' (taken, freed whatever happens) as the new state of the
 * object its metadata names: metadata goes first, uid is kept (or made
 * for a new object), creationTimestamp set when absent, resourceVersion
 * dropped. A change (ADDED or MODIFIED) gets the next resourceVersion and
 * a watch event; an object identical to the stored one changes nothing.
 * *out (may be NULL) is the stored version (borrowed). 0, or -1 with a
 * message (no metadata.name, out of memory).
 */
int apiserver_store_put(struct apiserver_store *s, enum apiserver_resource r, struct cJSON *obj,
			int64_t now_wall, const struct apiserver_ver **out, struct errbuf *err);

/*
 * Removes an object: a DELETED event with the next resourceVersion. *out
 * (may be NULL) gets its last state with that resourceVersion (a reference
 * the caller releases with apiserver_ver_release). -1 when there is none.
 */
int apiserver_store_delete(struct apiserver_store *s, enum apiserver_resource r, const char *ns,
			   const char *name, struct apiserver_ver **out);

/* The stored version of one object, or NULL (borrowed). */
const struct apiserver_ver *apiserver_store_get(const struct apiserver_store *s,
						enum apiserver_resource r, const char *ns,
						const char *name);

/* The objects of 'r', sorted by namespace then name (borrowed). */
struct apiserver_ver *const *apiserver_store_list(const struct apiserver_store *s,
						  enum apiserver_resource r, size_t *n);

/* Index in a list of the first object after (ns, name). */
size_t apiserver_store_after(const struct apiserver_store *s, enum apiserver_resource r,
			     const char *ns, const char *name);

/* Takes a reference on a version (to use it after unlocking) / drops one. */
void apiserver_ver_hold(struct apiserver_ver *v);
void apiserver_ver_release(struct apiserver_ver *v);

/*
 * The first watch event with a resourceVersion above 'rv', or NULL when
 * there is none yet; *expired set when events after 'rv' were dropped
 * from the history already (a watch from there gets 410).
 */
const struct apiserver_event *apiserver_store_next_event(const struct apiserver_store *s,
							 uint64_t rv, bool *expired);

/*
 * Forgets the watch events older than 'window_s' seconds before 'now_wall'
 * (the compaction of a real server's store): a watch from before them gets
 * 410 Expired. window_s <= 0: keeps them (the ring's size still bounds it).
 */
void apiserver_store_compact(struct apiserver_store *s, int64_t now_wall, int64_t window_s);

/*
 * Deletes the Events last written more than 'ttl_s' seconds before
 * 'now_wall' (the real server's --event-ttl: each write of an Event
 * renews its lease), each with a DELETED watch event. Returns how many went.
 */
size_t apiserver_store_expire_events(struct apiserver_store *s, int64_t now_wall, int64_t ttl_s);

/* Oldest resourceVersion a watch or continue may still start from. */
uint64_t apiserver_store_floor(const struct apiserver_store *s);

/* Waits for a change, a broadcast, or 'deadline_ns' on the real clock. */
void apiserver_store_wait(struct apiserver_store *s, int64_t deadline_ns);

/* Wakes every waiter (after a change of what they look at). */
void apiserver_store_broadcast(struct apiserver_store *s);

/* Watches started before this cut themselves off: a generation count. */
uint64_t apiserver_store_drop_gen(const struct apiserver_store *s);
void apiserver_store_drop_watches(struct apiserver_store *s);

/* The server is stopping: every watch ends. */
void apiserver_store_close(struct apiserver_store *s);
bool apiserver_store_closed(const struct apiserver_store *s);

#endif
