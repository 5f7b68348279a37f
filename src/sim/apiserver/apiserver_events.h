/*
 * sim/apiserver_events: the Events the simulated scheduler, kubelets and
 * node controller report, written into the store as core v1 Events the way
 * their recorders write and fold them, expired after the event TTL.
 */
#ifndef LUASCALE_SIM_APISERVER_EVENTS_H
#define LUASCALE_SIM_APISERVER_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/clock.h"
#include "sim/apiserver/apiserver_store.h"
#include "sim/world/cluster.h"

/* The real server's default --event-ttl. */
#define APISERVER_EVENT_TTL_S 3600

/* The events.k8s.io recorder (the scheduler's) folds a repeat into a
 * series for this long after the last one. */
#define APISERVER_EVENT_SERIES_S 360

struct apiserver_events;

/* One Event as a component reports it. */
struct apiserver_event_report {
	const char *component;   /* reportingComponent: "kubelet", "default-scheduler", ... */
	const char *instance;    /* reportingInstance, "" none */
	const char *host;        /* source.host (a kubelet's node), NULL none */
	bool series;             /* the events.k8s.io recorder: eventTime, action, series, no
				  * source; else the core recorder: source, first/lastTimestamp, count */
	const char *action;      /* series recorders: what was being done ("Scheduling") */
	const char *type;        /* "Normal" or "Warning" */
	const char *reason;
	const char *message;
	/* involvedObject */
	const char *kind;        /* "Pod", "Node" */
	const char *ns;          /* "" for a cluster-scoped object (its Events go in "default") */
	const char *name;
	const char *uid;
	uint64_t rv;             /* its resourceVersion then, 0: none */
};

/*
 * A recorder writing into 'store' (borrowed), stamping with 'clk'
 * (borrowed; a virtual clock in tests), Events living 'ttl_s' seconds
 * after their last write (<= 0: APISERVER_EVENT_TTL_S). NULL when out of memory.
 */
struct apiserver_events *apiserver_events_new(struct apiserver_store *store,
					      const struct clock *clk, int64_t ttl_s);
void apiserver_events_free(struct apiserver_events *ev);

/*
 * Records one report (store lock held): a new Event named
 * "<object>.<hex unix ns>", or, when the same component already reported
 * the same type, reason and message about the same object, that Event
 * again — count and lastTimestamp for the core recorder, series.count and
 * series.lastObservedTime within APISERVER_EVENT_SERIES_S for the series
 * one. 0, or -1 when out of memory.
 */
int apiserver_events_record(struct apiserver_events *ev, const struct apiserver_event_report *r);

/*
 * The Events a change of the simulated world makes (store lock held; the
 * store holds the object's new state, or for a removal still its last):
 * nodes registering, becoming Ready, losing it, going; pods found
 * unschedulable, bound, terminating.
 */
void apiserver_events_on_change(struct apiserver_events *ev, const struct sim_change *ch);

/* Deletes the Events whose time to live is over (store lock held); how many went. */
size_t apiserver_events_expire(struct apiserver_events *ev);

/* ---- events.k8s.io/v1: the same Events in another shape ---- */

struct cJSON;
struct buf;

/* A core v1 Event as events.k8s.io/v1 shows it (involvedObject as
 * regarding, message as note, reportingComponent as reportingController,
 * source, firstTimestamp, lastTimestamp and count as deprecated*): a new
 * tree, or NULL when out of memory. */
struct cJSON *apiserver_event_to_v1(const struct cJSON *core);

/* The other way: an events.k8s.io/v1 Event as it is stored (core v1). */
struct cJSON *apiserver_event_from_v1(const struct cJSON *v1);

/* Appends a stored Event in the events.k8s.io shape, with its resourceVersion. */
int apiserver_event_v1_write(struct buf *b, const struct apiserver_ver *v);

/* What the real server requires of an events.k8s.io/v1 Event a client
 * writes (eventTime, reportingController, reportingInstance, action,
 * reason, a type of Normal or Warning): 0, or -1 with the 422 message and
 * its causes (a JSON array appended to 'causes'). */
int apiserver_event_v1_check(const struct cJSON *o, char *msg, size_t len, struct buf *causes);

#endif
