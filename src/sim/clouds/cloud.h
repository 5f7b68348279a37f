/*
 * sim/cloud: a simulated cloud on an executor — node groups, instances that
 * appear over a launch call and boot after a seeded, jittered delay, and
 * faults injected per group and time window, and the managed groups the
 * GCE and Azure flavours share (sim_managed). No Kubernetes here (the
 * cluster follows instances through an observer), no provider interface.
 */
#ifndef LUASCALE_SIM_CLOUD_H
#define LUASCALE_SIM_CLOUD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"
#include "model.h"
#include "wire/outcome.h"
#include "runtime/executor.h"

struct sim_cloud;

struct sim_cloud_opts {
	uint64_t seed;               /* jitter and fault draws */
	int64_t launch_latency_ns;   /* a launch call lasts this long; its instances appear spread over it */
	int64_t terminate_latency_ns;/* until a terminate call returns (instances stopping) */
	int64_t boot_delay_ns;       /* created -> running */
	int64_t boot_jitter_ns;      /* + uniform in [0, jitter) */
	int64_t shutdown_delay_ns;   /* stopping -> gone */
	double api_qps;              /* the cloud's own API limit for launch, terminate and */
	int api_burst;               /*   list (0: none): calls beyond it are THROTTLED */
};

/* Defaults: launch 1s, terminate 1s, boot 60s + [0, 20s), shutdown 20s, no API limit. */
void sim_cloud_opts_default(struct sim_cloud_opts *o);

enum sim_fault_kind {
	SIM_FAULT_LAUNCH_ERROR, /* each instance asked for fails with 'error', probability 'rate' */
	SIM_FAULT_THROTTLE,     /* each API call is refused THROTTLED, probability 'rate' */
	SIM_FAULT_STUCK_BOOT,   /* each instance runs but never becomes a node, probability 'rate' */
	SIM_FAULT_SLOW_BOOT,    /* boots take 'delay_ns' longer */
	SIM_FAULT_SLOW_CALL,    /* launch calls take 'delay_ns' instead of launch_latency */
	SIM_FAULT_SLOW_RESIZE,  /* a size write (SetDesiredCapacity, a MIG resize, a scale
				 * set's capacity) takes effect and is answered 'delay_ns'
				 * after it came */
	SIM_FAULT_TERMINATE_ERROR, /* terminate calls are refused with 'error' (AUTH when
				 * unset); THROTTLED answers carry Retry-After 'delay_ns' */
	SIM_FAULT_LOST_ANSWER,  /* a mutating call of a cloud face takes effect, then its
				 * connection closes without an answer */
	SIM_FAULT_INTERRUPT,    /* at from_ns, 'count' (or the fraction 'rate', rounded
				 * up) of the group's running instances get a spot
				 * interruption notice and are reclaimed 'delay_ns' later */
	SIM_FAULT_IMAGE,        /* at from_ns, the group (every group when none) launches
				 * 'image' from then on: the instances it has are outdated */
};

/* Parses "launch_error", "throttle", "stuck_boot", "slow_boot", "slow_call",
 * "slow_resize", "terminate_error", "lost_answer", "interrupt", "image". 0 or -1. */
int sim_fault_kind_parse(const char *s, enum sim_fault_kind *out);
const char *sim_fault_kind_str(enum sim_fault_kind k);

/* A launch's capacity type, as a fault names it. */
enum sim_capacity {
	SIM_CAPACITY_ANY,
	SIM_CAPACITY_ON_DEMAND,
	SIM_CAPACITY_SPOT,
};

struct sim_fault {
	enum sim_fault_kind kind;
	const char *group;    /* NULL or "": every group */
	int64_t from_ns;      /* active while from_ns <= now < until_ns, on the executor's clock */
	int64_t until_ns;     /* <= 0: no end */
	double rate;          /* probability per instance (per call for THROTTLE); 0 means 1 */
	int count;            /* > 0: fires at most this many times (explicit failures) */
	enum provider_error error; /* LAUNCH_ERROR: NO_CAPACITY (default when OK), QUOTA, THROTTLED, ...;
				    * TERMINATE_ERROR: AUTH (default when OK), THROTTLED, ... */
	int64_t delay_ns;     /* SLOW_BOOT, SLOW_CALL, SLOW_RESIZE; TERMINATE_ERROR: the
			       * Retry-After of a THROTTLED answer (0: the face's own) */
	const char *instance_type; /* LAUNCH_ERROR: only launches of this type (NULL: any) */
	const char *zone;     /* LAUNCH_ERROR: only launches into this zone (NULL: any) */
	enum sim_capacity capacity; /* LAUNCH_ERROR: only launches of this capacity type */
	const char *image;    /* IMAGE: the image launched from then on (copied) */
};

/* The image every group launches until told otherwise (the AWS face's AMI
 * id; an image names at most SIM_IMAGE_MAX - 1 characters). */
#define SIM_IMAGE_DEFAULT "ami-0123456789abcdef0"
#define SIM_IMAGE_MAX 64

/* One instance. Owned by the cloud; the pointer stays valid until sim_cloud_free(). */
struct sim_instance {
	char id[96];          /* "<group>-<n>" (a namer may choose another, e.g. "i-0123...") */
	char provider_id[256];/* "sim://<group>/<id>" (or the namer's: Azure's are long) */
	char node_name[96];   /* the name its node registers under: the id, or the namer's */
	char zone[32];        /* "" unless a namer placed it */
	char instance_type[32];
	char private_ip[16];
	char image[SIM_IMAGE_MAX]; /* the image it was launched with (its group's then,
				    * or the namer's: an AWS launch template version's) */
	int64_t cpu_m, memory; /* its node's allocatable CPU (millicores) and memory
				* (bytes) when a namer sizes it by its type; 0: the
				* group template's */
	void *flavour;        /* the namer's own data about it (it frees it), or NULL */
	size_t group;         /* index into the cloud's groups */
	enum instance_state state;
	bool stuck;           /* running, but its node never registers */
	bool preexisting;     /* there from the start (sim_cloud_add_running) */
	int64_t created_ns, running_ns, stopping_ns, gone_ns; /* -1 until then */
	int64_t created_wall; /* unix seconds on the executor's clock when it was made */
	int64_t interrupted_wall; /* an interrupt fault's notice: when it goes (unix
				   * seconds on the executor's clock); 0 none */
	void *user;           /* for the observer (the cluster keeps its node here) */
};

enum sim_instance_event {
	SIM_INSTANCE_RUNNING,  /* booted (or added running) */
	SIM_INSTANCE_STOPPING, /* terminate accepted */
	SIM_INSTANCE_GONE,     /* terminated: the machine is no more */
	SIM_INSTANCE_INTERRUPTED, /* an interrupt fault's notice (interrupted_wall set):
				   * reclaimed at the end of its warning */
};

/* Told of every instance state change, under the cloud's lock. */
typedef void (*sim_cloud_observer_fn)(void *ud, struct sim_instance *inst,
				      enum sim_instance_event ev);

/* Receives one line per thing that happened (for traces and determinism tests). */
typedef void (*sim_trace_fn)(void *ud, int64_t now_ns, const char *line);

/* A launch's per-instance callback: a copy of the instance as it was created. */
typedef void (*sim_instance_fn)(void *ctx, const struct sim_instance *inst);

/* A call is over: instances made (launch) or terminated, and the error for the rest. */
typedef void (*sim_done_fn)(void *ctx, int count, const struct provider_status *st);

/*
 * A cloud with 'n' node groups (borrowed: they must outlive the cloud;
 * name, min, max, price and template are used) on executor 'ex'
 * (borrowed). 'o' NULL: defaults. Returns NULL with a message on a bad
 * option, a duplicate group name or out of memory.
 */
struct sim_cloud *sim_cloud_new(struct executor *ex, const struct node_group *groups, size_t n,
				const struct sim_cloud_opts *o, struct errbuf *err);

/*
 * Frees the cloud and its instances. Events of the cloud still queued on
 * the executor become no-ops (they only release themselves), so the cloud
 * may go before or after the executor shuts down.
 */
void sim_cloud_free(struct sim_cloud *c);

/* Adds a fault (copied; its group must exist). Returns 0 or -1 with a message. */
int sim_cloud_add_fault(struct sim_cloud *c, const struct sim_fault *f, struct errbuf *err);

/*
 * Where and what a launch asks for (any field NULL/false: the default).
 * 'admitted': the caller already charged the call to the API limit (a
 * cloud face answering a request), so the launch is not throttled again.
 */
struct sim_launch_spec {
	const char *zone;
	const char *instance_type;
	bool spot;            /* a spot launch (a fault may name its capacity type) */
	bool admitted;
	const void *arg;      /* for the namer; borrowed until the launch's on_done */
};

/*
 * Names and places a new instance (a cloud flavour, e.g. AWS's): called
 * under the cloud's lock with id, provider_id and node_name filled as the
 * plain simulator would; it may rewrite them and fill zone, instance_type
 * and private_ip. 'spec' is the launch's (NULL for instances added
 * running). The id it leaves must be unique in the cloud
 * (sim_cloud_find_instance). Returns 0, or -1 to fail the instance.
 */
typedef int (*sim_cloud_namer_fn)(void *ud, struct sim_cloud *c, size_t group,
				  const struct sim_launch_spec *spec, struct sim_instance *in);

/* An interrupt fault's steps for one instance: the notice (the instance
 * goes 'warning_ns' from now), then the reclaim. */
enum sim_interrupt_step {
	SIM_INTERRUPT_NOTICE,
	SIM_INTERRUPT_RECLAIM,
};

/*
 * Told of an interrupt fault's steps (a cloud flavour posts the cloud's
 * notice, e.g. AWS's EventBridge events), under the cloud's lock. At
 * SIM_INTERRUPT_RECLAIM it returns true when it terminated the instance
 * itself (an ASG then replaces it); false: the cloud stops it.
 */
typedef bool (*sim_cloud_interrupt_fn)(void *ud, struct sim_instance *in,
				       enum sim_interrupt_step step, int64_t warning_ns);

/* The interrupt listener (one; NULL: none, instances are only reclaimed). */
void sim_cloud_set_interrupter(struct sim_cloud *c, sim_cloud_interrupt_fn fn, void *ud);

/*
 * Told when an image fault fires for group 'group' (a cloud flavour makes
 * the image its own way, e.g. AWS's new default launch template version),
 * under the cloud's lock: true when it took it (and set the group's image
 * with sim_cloud_set_image); false: the cloud sets it.
 */
typedef bool (*sim_cloud_image_fn)(void *ud, size_t group, const char *image);

/* The image listener (one; NULL: none). */
void sim_cloud_set_imager(struct sim_cloud *c, sim_cloud_image_fn fn, void *ud);

/* The image group 'i' launches now (SIM_IMAGE_DEFAULT until set). Lock held. */
const char *sim_cloud_group_image(const struct sim_cloud *c, size_t i);

/*
 * Group 'i' launches 'image' from now on (new instances take it before the
 * namer sees them); its instances on another image become outdated
 * (sim_cloud_group's 'outdated'). 0, or -1 with a message (an empty or too
 * long image, out of memory). Takes the lock.
 */
int sim_cloud_set_image(struct sim_cloud *c, size_t i, const char *image, struct errbuf *err);

/*
 * Why instance 'in' is not what its group launches now, into 'out' ("image
 * ami-1 is not group web's ami-2"): true, or false with "" when it runs the
 * group's image (or either is unknown). Lock held.
 */
bool sim_cloud_instance_outdated(const struct sim_cloud *c, const struct sim_instance *in, char *out,
				 size_t len);

/* An interrupt fault's notice, as the cloud itself keeps it for the
 * in-process provider (providers/sim): whatever the cloud's flavour posts
 * too (AWS's EventBridge events), the plain simulator's notices are these. */
struct sim_notice {
	char id[96];            /* the instance */
	char provider_id[256];
	char group[64];
	int64_t deadline_wall;  /* when it is reclaimed, unix seconds */
	int64_t at_wall;        /* when the notice was given */
};

/* At most this many notices wait to be taken; more are dropped (traced). */
#define SIM_NOTICES_MAX 4096

/*
 * Takes the notices given since the last call: *out (caller frees with
 * free(); NULL when none) and *n. Thread-safe. Returns 0.
 */
int sim_cloud_take_notices(struct sim_cloud *c, struct sim_notice **out, size_t *n);

/* Is a flavour (a namer) set? A flavoured cloud is a real cloud's double:
 * deleting a node leaves its machine running, as EC2 does. */
bool sim_cloud_flavoured(const struct sim_cloud *c);

/* The namer (one; NULL: plain ids). Set before any instance exists. */
void sim_cloud_set_namer(struct sim_cloud *c, sim_cloud_namer_fn fn, void *ud);

/* sim_cloud_launch with a spec (NULL: as sim_cloud_launch); 'spec' is copied. */
int sim_cloud_launch_spec(struct sim_cloud *c, const char *group, int count,
			  const struct sim_launch_spec *spec, sim_instance_fn on_instance,
			  sim_done_fn on_done, void *ctx);

/*
 * Asks for 'count' instances of 'group'. Returns at once: on_instance
 * (may be NULL) runs from an executor task as each instance comes into
 * existence, spread over the call's latency, then on_done (may be NULL)
 * once with how many were made and why the rest failed. Nothing is made
 * when the call is throttled, the group unknown (NOT_FOUND), or 'count'
 * would take it above its max (INVALID). Callbacks run without the cloud's
 * lock held. Returns 0, or -1 when the executor refused the work (no
 * callback will run).
 */
int sim_cloud_launch(struct sim_cloud *c, const char *group, int count,
		     sim_instance_fn on_instance, sim_done_fn on_done, void *ctx);

/*
 * Terminates instances (ids) of 'group'. After terminate_latency they are
 * stopping, gone shutdown_delay later. Already stopping or gone instances
 * count as terminated (like a cloud's idempotent terminate); unknown ids
 * or ids of another group are NOT_FOUND for the rest. on_done (may be
 * NULL) once, from an executor task. 'ids' is copied. Returns as launch.
 */
int sim_cloud_terminate(struct sim_cloud *c, const char *group, const char *const *ids, size_t n,
			sim_done_fn on_done, void *ctx);

/* Terminates one instance now, bypassing API limits and faults (what a node
 * deletion does to its machine). No-op when already stopping or gone. */
void sim_cloud_terminate_instance(struct sim_cloud *c, struct sim_instance *inst);

/*
 * Adds 'n' instances of 'group' that are running already (the cluster's
 * starting nodes): the observer hears RUNNING at once, with preexisting set.
 * Does not count against the API or the group's max. 0 or -1 with a message.
 */
int sim_cloud_add_running(struct sim_cloud *c, const char *group, int n, struct errbuf *err);

/*
 * Charges one API call of 'group' (NULL: any) to the cloud's API limit
 * and throttle faults, as a cloud face does for every request it is
 * asked: true when it may go, false when it is throttled (counted in the
 * group's stats).
 */
bool sim_cloud_admit(struct sim_cloud *c, const char *group);

/*
 * A slow_call fault's delay for a call of 'group' (NULL: any) now, the
 * fault firing as a launch's would, or -1 when none is active (an
 * operation of a cloud face that stays running).
 */
int64_t sim_cloud_call_delay(struct sim_cloud *c, const char *group);

/*
 * The delay of a slow_resize fault firing now for a size write of 'group'
 * (NULL: any), or 0 when none does. The caller waits it (without the
 * cloud's lock) before the write takes effect.
 */
int64_t sim_cloud_resize_delay(struct sim_cloud *c, const char *group);

/*
 * Does a terminate_error fault fire now for a terminate call of 'group'
 * (NULL: any)? When it does: true, with the error in *error and the
 * Retry-After it names in *retry_after_ns (0: none given). Counted as it
 * fires. Both outputs may be NULL.
 */
bool sim_cloud_terminate_fault(struct sim_cloud *c, const char *group, enum provider_error *error,
			       int64_t *retry_after_ns);

/*
 * Does a lost_answer fault fire now for a mutating call of 'group' (NULL:
 * any)? A cloud face asks after the call took effect and, when true,
 * closes the connection without answering.
 */
bool sim_cloud_lose_answer(struct sim_cloud *c, const char *group);

/*
 * Does a launch_error fault with error 'error' fire now for 'group' (NULL:
 * any)? Drawn and counted as a launch's would be, under the cloud's lock:
 * what a cloud face checks before it accepts a request it would refuse
 * whole (Azure refuses a capacity over quota on the PUT itself).
 */
bool sim_cloud_launch_fault(struct sim_cloud *c, const char *group, enum provider_error error);

/*
 * An API read (provider list_groups): -1 with THROTTLED in 'st' when the
 * cloud's API limit or a throttle fault says so (group NULL: any group's
 * faults apply), else 0.
 */
int sim_cloud_read_call(struct sim_cloud *c, const char *group, struct provider_status *st);

/* ---- reading the state (take the lock when other threads may act) ---- */

size_t sim_cloud_n_groups(const struct sim_cloud *c);
/* Group i as it was given (which instances are outdated is
 * sim_cloud_instance_outdated()'s, asked when needed). */
const struct node_group *sim_cloud_group(const struct sim_cloud *c, size_t i);
/* Index of the group named 'name', or -1. */
int sim_cloud_find_group(const struct sim_cloud *c, const char *name);

/* The live (pending, running, stopping) instances of group 'i', oldest first.
 * Borrowed: valid until the cloud changes. */
struct sim_instance *const *sim_cloud_instances(const struct sim_cloud *c, size_t i, size_t *n);

/* Pending or running instances of group 'i': the size the group converges to. */
int sim_cloud_target(const struct sim_cloud *c, size_t i);

/* Every instance the cloud ever made, gone ones too, oldest first: the
 * i-th (i < sim_cloud_n_all()). Borrowed, valid until sim_cloud_free(). */
size_t sim_cloud_n_all(const struct sim_cloud *c);
struct sim_instance *sim_cloud_all_at(const struct sim_cloud *c, size_t i);

/* The instance with id 'id', live or not, or NULL. */
struct sim_instance *sim_cloud_find_instance(const struct sim_cloud *c, const char *id);

struct sim_group_stats {
	uint64_t launch_calls;     /* launch calls accepted by the API */
	uint64_t launched;         /* instances created */
	uint64_t launch_failed;    /* instances asked for and not created */
	uint64_t throttled;        /* calls refused THROTTLED */
	uint64_t terminated;       /* instances that went stopping */
	uint64_t stuck;            /* instances that will never become nodes */
	int64_t instance_ns;       /* billable time: created until gone, live ones until now */
	int live;                  /* pending + running + stopping now */
	int peak;                  /* most live at once */
};

/* Fills 'out' for group 'i'. */
void sim_cloud_group_stats(struct sim_cloud *c, size_t i, struct sim_group_stats *out);

/* ---- plumbing shared with the cluster and the provider ---- */

struct executor *sim_cloud_executor(const struct sim_cloud *c);
int64_t sim_cloud_now(const struct sim_cloud *c);

/* One recursive lock for the whole simulated world (cloud and cluster):
 * the executor may be a thread pool. */
void sim_cloud_lock(struct sim_cloud *c);
void sim_cloud_unlock(struct sim_cloud *c);

/* The observer (one; the cluster). Set before anything happens. */
void sim_cloud_set_observer(struct sim_cloud *c, sim_cloud_observer_fn fn, void *ud);

/* Where trace lines go (NULL: nowhere). */
void sim_cloud_set_trace(struct sim_cloud *c, sim_trace_fn fn, void *ud);

/* Is a trace set? (skip formatting when not) */
bool sim_cloud_tracing(const struct sim_cloud *c);

/* Writes a trace line (printf format) when a trace is set. */
void sim_cloud_tracef(struct sim_cloud *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A draw in [0, 1) from the cloud's seeded generator (under the lock). */
double sim_cloud_rand(struct sim_cloud *c);

/*
 * Events that outlive their owner safely. An owner (the cloud, the
 * cluster) holds a life; every event it queues holds a reference to it.
 * When the owner is freed it ends its life, and its events still queued
 * then run with alive = false and owner NULL: they only release 'data'.
 * The same happens to events the executor cancels at shutdown.
 */
struct sim_life;

/* NULL when out of memory. */
struct sim_life *sim_life_new(void *owner);

/* The owner is going away: drops its reference (frees the life when no
 * event holds it any more). */
void sim_life_end(struct sim_life *l);

typedef void (*sim_event_fn)(void *owner, void *data, uint64_t id, bool alive);

/* Runs fn(owner, data, id, true) 'delay_ns' from now on 'ex', or
 * fn(NULL, data, id, false) as described above. Returns 0, or -1 when the
 * executor refused it (fn is not called; 'data' is still the caller's). */
int sim_after(struct executor *ex, struct sim_life *l, int64_t delay_ns, sim_event_fn fn,
	      void *data, uint64_t id);

/* ---- managed groups: the members a cloud flavour keeps for its machines ----
 *
 * A GCE MIG's managed instances and an Azure scale set's VMs are one thing:
 * the members a group wants (its target size), each made by a one-instance
 * launch (admitted: the face charged the call), named by the flavour's
 * namer, followed to its machine, and dropped once that machine is gone.
 * The flavour words them its own way (currentAction, provisioningState).
 * Everything below runs under the cloud's lock unless it says otherwise.
 */

enum sim_member_state {
	SIM_MEMBER_CREATING,  /* being made, or waiting to retry a failed creation */
	SIM_MEMBER_RUNNING,   /* its machine runs */
	SIM_MEMBER_FAILED,    /* its creation failed and is not retried: kept until deleted */
	SIM_MEMBER_DELETING,  /* its machine stops; it leaves once that is gone */
};

struct sim_member {
	char name[96];            /* its machine's id (sim_instance.id), unique in the cloud */
	char zone[32];            /* where it goes, "" anywhere */
	int number;               /* the flavour's (a scale set's instance id) */
	uint64_t op;              /* the flavour's: the operation that made or deletes it */
	struct sim_instance *in;  /* its machine; NULL until made (and when making it failed) */
	enum sim_member_state state;
	bool launching;           /* a creation is in flight */
	char error_code[48];      /* the last failed creation's, as the flavour words it; "" none */
	char error_message[320];
};

struct sim_managed;

/* What the flavour adds (each called under the cloud's lock but destroy). */
struct sim_managed_ops {
	/* Names new member 'm' of group gi (its name, number) as it grows. */
	void (*name)(void *ud, size_t gi, struct sim_member *m);
	/* Making 'm' failed with 'e': its error_code and error_message. */
	void (*failed)(void *ud, size_t gi, struct sim_member *m, enum provider_error e);
	/* The machine of 'm' (a copy: it has left the group) stopped while
	 * it was not being deleted (its node was deleted). May be NULL. */
	void (*lost)(void *ud, size_t gi, const struct sim_member *m);
	/* The last creation in flight is over after sim_managed_free: frees
	 * the flavour. Called without the lock. */
	void (*destroy)(void *ud);
};

struct sim_managed_opts {
	int64_t retry_ns;         /* > 0: a failed member stays CREATING and its group's
				   * are tried again this long after; 0: it is FAILED */
	bool place;               /* launches name the member's zone (faults may match it) */
};

/*
 * The members of every group of 'c' (borrowed), for the flavour 'ud' with
 * 'ops' (copied). NULL when out of memory.
 */
struct sim_managed *sim_managed_new(struct sim_cloud *c, const struct sim_managed_ops *ops,
				    const struct sim_managed_opts *o, void *ud);

/* The flavour goes: creations in flight finish without it, and the last
 * one over calls ops->destroy (at once when none is). NULL is ignored. */
void sim_managed_free(struct sim_managed *m);

/* The zones group gi spreads its members over (borrowed; none: ""). */
void sim_managed_set_zones(struct sim_managed *m, size_t gi, const char *const *zones, size_t n);

/* The size group gi converges to (a MIG's targetSize, a scale set's capacity). */
int sim_managed_target(const struct sim_managed *m, size_t gi);
void sim_managed_set_target(struct sim_managed *m, size_t gi, int target);

/*
 * Brings group gi's members up to date with their machines: DELETING ones
 * whose machine is gone leave, a member whose machine stopped otherwise
 * leaves and is told to ops->lost, CREATING ones whose machine runs are
 * RUNNING.
 */
void sim_managed_refresh(struct sim_managed *m, size_t gi);

/* Group gi's members as they are (refresh first for news of their
 * machines): *n of them, borrowed until the next change. */
struct sim_member *sim_managed_members(struct sim_managed *m, size_t gi, size_t *n);

/* Group gi's member named 'name' (any state, not refreshed), or NULL. */
struct sim_member *sim_managed_find(struct sim_managed *m, size_t gi, const char *name);

/* Members of group gi not DELETING. */
int sim_managed_live(const struct sim_managed *m, size_t gi);

/* The zone of group gi with the fewest live members (the first on a tie; "" none). */
const char *sim_managed_spread_zone(const struct sim_managed *m, size_t gi);

/* A new CREATING member of group gi named 'name' in 'zone', last; NULL when
 * out of memory. Pointers to the group's members may move. */
struct sim_member *sim_managed_add(struct sim_managed *m, size_t gi, const char *name,
				   const char *zone);

/* Launches member 'mem' of group gi (one instance, its name the launch's
 * sim_launch_spec.arg for the namer). Nothing when the executor refuses. */
void sim_managed_launch(struct sim_managed *m, size_t gi, struct sim_member *mem);

/* Takes member 'mem' of group gi out by operation 'op': its machine stops
 * (DELETING), or it leaves at once when it has none yet. */
void sim_managed_delete(struct sim_managed *m, size_t gi, struct sim_member *mem, uint64_t op);

/*
 * Target of group gi becomes 'size': new members (named by ops->name, zones
 * spread, operation 'op') are launched, the newest live ones deleted when
 * it shrinks. 0, or -1 when out of memory. Refresh first.
 */
int sim_managed_resize(struct sim_managed *m, size_t gi, int size, uint64_t op);

/* The instances group gi has now become its members (RUNNING, or CREATING
 * while they boot) and its target their number: what a flavour does at its
 * start. Takes no lock. */
void sim_managed_adopt(struct sim_managed *m, size_t gi);

/* An operation of group gi starting now: its start on the cloud's clock
 * and in unix seconds, and when it is over (a slow_call fault's delay, else
 * 'default_ns' from now). */
void sim_managed_op_times(const struct sim_managed *m, size_t gi, int64_t default_ns,
			  int64_t *start_ns, int64_t *start_wall, int64_t *done_ns);

/* The next private address after *next whose last byte is in [lowest, 254]
 * (as a subnet leaves .0, the gateway's and .255), *next moved past it. */
uint32_t sim_cloud_next_ip(uint32_t *next, unsigned lowest);

#endif
