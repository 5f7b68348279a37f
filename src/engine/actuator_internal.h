/*
 * actuator_internal: the actuator's state, shared by its four files —
 * actuator.c (life cycle, executing a plan, stats), actuator_launch.c
 * (launches and their callbacks), actuator_nodes.c (node jobs: cordon,
 * drain, delete, give back, replace; and the memos of what the cache does
 * not show yet) and actuator_observe.c (between reconciles: replaces
 * settling, in-flight instances, the orphan sweep, doomed instances).
 * Private to src/engine/actuator*.c.
 */
#ifndef LUASCALE_ACTUATOR_INTERNAL_H
#define LUASCALE_ACTUATOR_INTERNAL_H

#include "engine/actuator.h"
#include "sched.h"

#include <pthread.h>

/* An instance the cloud created that is not a Ready node yet. */
struct flight {
	char group[64];
	char id[128];
	char provider_id[256];
	char pods[256];    /* the pods it was launched for (as the plan saw them) */
	int64_t launched;  /* wall seconds */
	uint64_t launch_seq; /* the launch request that made it */
	struct actuator *a;  /* on the doomed list: its actuator */
	bool terminating;  /* given up: being terminated, no longer capacity */
	/* on the doomed list (an instance to terminate that has no node) */
	int attempts;      /* terminate calls that failed */
	int64_t next_try_ns; /* no call before this (backoff, Retry-After) */
	bool in_call;      /* a terminate call is out */
	bool orphan;       /* found by the sweep, not launched by this process */
	char why[420];     /* why it is terminated */
	char replace_of[256]; /* the node it replaces (a replace's new node), "" none */
	struct flight *next;
};

/* What the actuator knows of a node group. */
struct gstate {
	char name[64];
	int failures;          /* consecutive failed launches */
	int64_t backoff_until; /* wall seconds */
	uint64_t backed_off_seq; /* the launch request it was last backed off for: one
				  * request backs off once, however many of its
				  * instances fail */
	char reason[160];
	int requested;         /* asked for by running launches, not created yet */
	struct gstate *next;
};

struct launch {
	struct actuator *a;
	char group[64];
	int count;
	int created;
	int given_back; /* reported, then given back by the cloud (INSTANCE_GONE) */
	int64_t start_ns;
	char reason[256];
	char pods[256]; /* unschedulable pods when the plan was made: "ns/a, ns/b and 3 more" */
	int64_t oldest_pod;   /* wall seconds: the oldest of them was created, 0: none */
	int64_t call_start_ns;/* the cloud was asked, 0: not yet */
	void *hook;           /* the launch hooks' token, NULL: none */
	uint64_t seq;         /* this request's number (from 1) */
	char **types;         /* the instance types the plan accepts; NULL: any */
	size_t n_types;
	char replace_of[256]; /* a replace's launch: the node it replaces; "" none */
};

struct node_job {
	struct actuator *a;
	char node[256];
	char provider_id[256];
	char group[64];        /* its instance's group, once a delete maps it */
	char node_group[64];   /* its node's group in the plan's snapshot, "" when none */
	struct action *actions;
	size_t n, next;
	bool removal;          /* it drains or deletes the node */
	bool release;          /* it only gives back a cordon luascale left behind */
	bool holds_slot;       /* counts against max_concurrent_drains */
	bool was_cordoned;     /* unschedulable in the snapshot the plan was made on */
	bool marked;           /* ... and carrying luascale's cordon mark */
	bool ours;             /* cordoned by luascale (with the mark): give it back
				* if the removal does not finish */
	bool deleted;          /* the node object is gone */
	bool drained;          /* a drain of this job finished */
	bool drain_failed;
	bool draining;
	int64_t drain_start_ns;
	int64_t last_evict_ns;
	int64_t hold_until_ns; /* no eviction before this (a 429's retryAfterSeconds) */
	uint64_t evicted;
	int64_t step_start_ns;
	bool terminating;      /* its delete asked the cloud to terminate the instance */
	int term_attempts;     /* terminate calls that failed */
	char term_id[128];     /* the instance being terminated */
};

/* An instance as the cloud last listed it. */
struct cloud_inst {
	char group[64];
	char id[128];
	int64_t launched_wall;
	enum instance_state state;
};

/* A failed terminate is tried again after 10 s, doubling up to 5 min (or
 * when the cloud's Retry-After says). */
#define TERM_RETRY_INITIAL_NS (10 * CLOCK_NS_PER_S)
#define TERM_RETRY_MAX_NS (5 * 60 * CLOCK_NS_PER_S)

/* The sweep never terminates more than this share of a group's listed
 * instances at once (above 2): that many nodes missing at once looks like
 * a cache or mapping fault, not orphans. */
#define SWEEP_MAX_SHARE 0.5

/* A removal not started for want of a drain slot: logged once when it
 * starts waiting, not every round. */
struct deferred {
	char name[256];
	bool seen;               /* deferred again in this round */
	struct deferred *next;
};

/* A node with a job running (its actions of an earlier plan). */
struct busy_node {
	char name[256];
	bool removing; /* the job drains or deletes it */
	struct busy_node *next;
};

/*
 * A replace under way. The new node is asked for (REP_ASKED), then its
 * instance exists (REP_BOOTING); once it is a Ready node (REP_READY) the
 * old node's removal (cordon, drain, delete) starts as a node job, and
 * the replace is over. Until then the old node is untouched. A launch
 * that fails or an instance not Ready in max_provision_s ends it
 * (REP_FAILED); so does the old node going away (REP_GONE).
 */
enum rep_state { REP_ASKED, REP_BOOTING, REP_READY, REP_FAILED, REP_GONE };

struct replacement {
	char node[256];        /* the node replaced */
	char node_group[64];   /* its group (the snapshot's) */
	struct action act;     /* the plan's replace (owned) */
	char inst[128];        /* the new instance, once it exists */
	char new_node[256];    /* the new node, once Ready */
	enum rep_state state;
	char why[420];         /* REP_FAILED: why */
	int64_t started;       /* wall seconds */
	struct replacement *next;
};

/* What the cache may not show yet: a node deleted, or a cordon given back. */
enum memo_kind {
	MEMO_REMOVED,  /* deleted (and its instance terminated): never act on it again */
	MEMO_RELEASED, /* uncordoned and unmarked: do not give it back again */
};

struct memo {
	enum memo_kind kind;
	char name[256];
	char provider_id[256];
	int64_t at; /* wall seconds */
	struct memo *next;
};

struct actuator {
	pthread_mutex_t mu;
	struct busy_node *busy_nodes;
	struct executor *ex;
	struct clock *clock;
	struct provider *prov;
	const struct kubeops *kube;
	struct actuator_config cfg;
	const struct logger *log;
	struct flight *flights;
	struct flight *doomed;      /* instances without a node to terminate, retried until gone */
	struct flight *gone;        /* terminated: not swept again while the cloud still lists them */
	struct cloud_inst *cloud;   /* the instances the cloud last listed (the orphan sweep) */
	size_t n_cloud;
	bool cloud_known;
	int64_t cloud_hold_ns;      /* the cloud said Retry-After: no write to it before this */
	struct gstate *groups;
	struct deferred *deferred;  /* removals waiting for a drain slot (logged once) */
	uint64_t launch_seq;        /* launch requests made (their numbers) */
	struct memo *memos;
	struct replacement *replacements; /* replaces under way */
	int64_t drains;            /* jobs holding a drain slot */
	bool stopping;             /* actuator_stop(): node jobs end at their next step */
	struct drain_opts evict_opts; /* what every eviction is checked against */
	struct actuator_stats st;
	uint64_t rng;
};

#define LOG(a, lvl, ...) log_at((a)->log, (lvl), clock_wall((a)->clock), __VA_ARGS__)
/* A line with an action's fields (log_fields): 'f' an array of them. */
#define LOGF(a, lvl, f, ...) \
	log_fields((a)->log, (lvl), clock_wall((a)->clock), (f), sizeof(f) / sizeof((f)[0]), __VA_ARGS__)

/* The functions one file defines and another calls (each is documented
 * where it is defined). */
/* ---- actuator.c ---- */
bool act_launch_failure_backs_off(enum provider_error e);
double act_secs_since(struct actuator *a, int64_t start_ns);
int64_t act_back_off(struct actuator *a, struct gstate *g, const char *reason);
struct gstate *act_group_state(struct actuator *a, const char *name);
struct replacement *act_rep_find(struct actuator *a, const char *node);
void act_launch_free(struct launch *l);
void act_rep_fail(struct actuator *a, const char *node, const char *why);
void act_rep_free(struct replacement *r);

/* ---- actuator_launch.c ---- */
int act_start_launch(struct actuator *a, const struct action *act, const char *pods, int64_t
		oldest_pod, const struct snapshot *s, const char *replace_of);

/* ---- actuator_nodes.c ---- */
int act_start_node_job(struct actuator *a, const struct plan *p, const struct snapshot *s, const
		char *node);
int act_start_replace(struct actuator *a, const struct action *act, const struct snapshot *s);
int64_t act_term_retry_at(struct actuator *a, int attempts, const struct provider_status *st,
		int64_t now);
struct busy_node *act_busy_find(struct actuator *a, const char *node);
struct memo *act_memo_find(struct actuator *a, const char *node);
void act_count(struct actuator *a, uint64_t *field);
void act_count_termination(struct actuator *a, const char *group, const struct provider_status
		*st);
void act_deferred_round(struct actuator *a, bool begin);
void act_node_event(struct actuator *a, const char *node, const char *type, const char *reason,
		const char *msg);
void act_start_release(struct actuator *a, const char *node, const char *provider_id, const char
		*since);

/* ---- actuator_observe.c ---- */
void act_sweep(struct actuator *a, struct snapshot *s, char (*ids)[128], size_t n_ids, int64_t
		now, int64_t now_ns);

#endif
