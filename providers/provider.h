/*
 * provider: the one interface every cloud implements — node groups, launch,
 * terminate, and mapping a Node's providerID to its group and instance.
 * Each provider owns two token buckets (mutating calls, reads; qps and
 * burst from config) and reports failures with a type the engine can act
 * on (throttled: slow down; no capacity or quota: back off the group).
 * Providers never see Lua, plans or Kubernetes objects.
 */
#ifndef LUASCALE_PROVIDER_H
#define LUASCALE_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/executor.h"
#include "wire/outcome.h"
#include "runtime/ratelimit.h"

/* Should the group be backed off after this error? */
bool provider_error_backs_off_group(enum provider_error e);

/* What most likely made a cloud refuse a call, from its error code and message. */
enum provider_cause {
	PROVIDER_CAUSE_NONE = 0,  /* nothing the code or message says for sure */
	PROVIDER_CAUSE_CLOCK,     /* this machine's clock is off (clock skew) */
	PROVIDER_CAUSE_KEY,       /* a wrong, rotated or expired key or secret */
	PROVIDER_CAUSE_ROLE,      /* authenticated, but a role or permission is missing */
};

/*
 * The likely cause of a cloud's error: 'code' as the cloud spells it (an
 * AWS <Code>, an OAuth "error" or an Entra "AADSTSnnn", a Google status or
 * reason, an ARM error code; NULL or "" when none) and its 'message' (may
 * be NULL). Only codes the clouds document are read (see provider.c).
 */
enum provider_cause provider_error_cause(const char *code, const char *message);

/* One line saying what to check for 'c' ("" for PROVIDER_CAUSE_NONE). Static. */
const char *provider_cause_hint(enum provider_cause c);

/*
 * Writes a cloud's error into 'out' ('len' bytes, NUL included; at least
 * 256): "CODE: MESSAGE (likely cause: HINT); CONTEXT", the cloud's code
 * first, then its message, the hint when provider_error_cause() finds one,
 * then 'context' (which call, which file or endpoint; may be NULL). When it
 * does not fit, the tail goes first: the context is cut, then the message
 * (ending in "..."); the code and the hint are never cut. Control
 * characters of the cloud's text become spaces, so a message is one line;
 * 'message' may be 'out' itself (it is read before anything is written).
 * 'code' may be NULL or "" (the message then comes first). Pass only the
 * fields of the cloud's error answer: never a token, key or signature.
 * Returns the length written.
 */
size_t provider_cloud_message(char *out, size_t len, const char *code, const char *message,
			      const char *context);

/* provider_cloud_message() into st->message, with st->code = 'cls' and the
 * context formatted from 'fmt' (NULL: none). */
void provider_status_cloud(struct provider_status *st, enum provider_error cls, const char *code,
			   const char *message, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));


struct provider_instance {
	char id[128];           /* the cloud's instance id, e.g. i-0abc */
	char provider_id[256];  /* as the kubelet writes Node.spec.providerID */
	char group[64];
	enum instance_state state;
	int64_t launched_wall;  /* when the cloud says it launched the instance, unix
				 * seconds (AWS LaunchTime, GCE creationTimestamp, Azure
				 * timeCreated); 0 when the cloud does not say */
	char outdated[192];     /* why the instance is no longer what its group launches
				 * now, as its cloud says ("image ami-1 is not launch
				 * template lt-1's ami-2"): a drift; "" when it is, or
				 * when the cloud does not say. Never a secret */
};

/* A label, taint or extended resource of a new node, as the cloud describes
 * it (strings owned by the template: provider_groups_free frees them). */
struct provider_label {
	char *key, *value;
};

struct provider_taint {
	char *key, *value;      /* value "" when none */
	char effect[24];        /* NoSchedule, PreferNoSchedule or NoExecute */
};

struct provider_resource {
	char *name;             /* "nvidia.com/gpu", "vpc.amazonaws.com/efa", ... */
	int64_t value;
};

/* What one new instance of a group offers, as the cloud describes it
 * (fields 0 when the cloud does not say; the config's template then rules).
 * Resources are what the node will offer pods (allocatable), not the
 * machine's capacity. */
struct provider_template {
	int64_t cpu_m;          /* millicores */
	int64_t memory;         /* bytes */
	int64_t pods;
	int64_t gpus;           /* nvidia.com/gpu */
	double price_per_hour;
	char instance_type[64];
	struct provider_label *labels;   /* the node's labels (instance type, zone, tags') */
	size_t n_labels;
	struct provider_taint *taints;
	size_t n_taints;
	struct provider_resource *resources; /* extended resources other than gpus */
	size_t n_resources;
};

/* Add to a template (copies the strings); a key already there is replaced.
 * Return 0, or -1 when out of memory or the taint effect is unknown. */
int provider_template_label(struct provider_template *t, const char *key, const char *value);
int provider_template_taint(struct provider_template *t, const char *key, const char *value,
			    const char *effect);
int provider_template_resource(struct provider_template *t, const char *name, int64_t value);

/*
 * One entry of a node template as the Cluster Autoscaler's tags write it
 * (".../node-template/<kind>/<key>" on AWS, "..._node-template_<kind>_<key>"
 * on Azure): kind "label" sets label 'key' to 'value'; "taint" adds taint
 * 'key' from "value:Effect"; "resources" reads 'value' as a quantity (cpu,
 * memory, pods and nvidia.com/gpu set the template's own fields,
 * ephemeral-storage is not kept, another name is an extended resource).
 * 0; 1 when 'kind' is another (no template entry); -1 when 'key' is empty,
 * the value is malformed or memory ran out.
 */
int provider_template_tag(struct provider_template *t, const char *kind, const char *key,
			  const char *value);

/* The CPU (millicores) the kubelet keeps for itself on a node of 'cpus'
 * cores, as EKS and GKE both reserve it: 6% of the first core, 1% of the
 * second, 0.5% of the third and fourth, 0.25% of every other. */
int64_t provider_reserved_cpu_m(int cpus);

/* A deep copy of 'src' into 'dst' (zeroed first; on failure what was
 * copied stays for provider_template_clear). 0, or -1 out of memory. */
int provider_template_copy(struct provider_template *dst, const struct provider_template *src);

/* Frees what a template owns and zeroes its lists. */
void provider_template_clear(struct provider_template *t);

struct provider_group {
	char name[64];          /* the node group's name (a config group's, or one the
				 * provider found, valid as a node group name) */
	int min, max;
	bool cloud_sized;       /* min and max are the cloud's (an Auto Scaling group's);
				 * else the provider repeats the config's */
	bool members_by_id;     /* its nodes are the instances' providerIDs below (the
				 * engine then needs no label to place a node in it) */
	int target;             /* the size the cloud is converging to */
	int64_t stale_since;    /* 0: read by this listing; else the cloud described the
				 * group badly this time and this is its last good view,
				 * read at stale_since (unix seconds) */
	struct provider_template tmpl;
	/* A group that launches one of several instance types (an AWS fleet
	 * group): a template per type, in the group's order, tmpl being the
	 * first's; n_types 0 otherwise. Owned by the array holder. */
	struct provider_template *types;
	size_t n_types;
	struct provider_instance *instances; /* owned by the array holder */
	size_t n_instances;
};

/* Called once per instance, from any thread, as soon as the cloud reports
 * it exists — before the rest of the request is done. Called a second time
 * for the same instance, with state INSTANCE_GONE, when the request gave it
 * back (a stockout or quota seen after its name was known): it will never
 * be a node, and nothing should wait for it. */
typedef void (*provider_instance_cb)(void *ctx, const struct provider_instance *inst);

/* Called once when a request is over: how many instances it made (launch)
 * or removed (terminate), and the error for the rest (code OK when none). */
typedef void (*provider_done_cb)(void *ctx, int count, const struct provider_status *st);

/* What a cloud says is about to happen to an instance (an interruption
 * notice: AWS's EventBridge events read from an SQS queue). */
enum provider_interruption_kind {
	PROVIDER_INTERRUPT_SPOT_INTERRUPTION, /* spot capacity reclaimed: the instance goes at the deadline */
	PROVIDER_INTERRUPT_REBALANCE,         /* at elevated risk of a spot interruption (no deadline) */
	PROVIDER_INTERRUPT_SCHEDULED_CHANGE,  /* scheduled maintenance or retirement (deadline: its start) */
	PROVIDER_INTERRUPT_STOPPING,          /* the instance is stopping or stopped */
	PROVIDER_INTERRUPT_TERMINATED,        /* the instance is shutting down or terminated */
};

/* "spot_interruption", "rebalance", "scheduled_change", "stopping",
 * "terminated" (static; "unknown" for a value out of range). */
const char *provider_interruption_kind_str(enum provider_interruption_kind k);

struct provider_interruption {
	char instance_id[128];   /* the cloud's instance id */
	char provider_id[256];   /* as Node.spec.providerID says it, when known; else "" */
	char group[64];          /* its node group, when known; else "" */
	enum provider_interruption_kind kind;
	int64_t deadline_wall;   /* unix seconds the instance goes; 0 unknown */
	int64_t received_wall;   /* unix seconds the cloud sent the notice (its event time;
				  * when it gives none, when the provider read it) */
};

struct provider;

struct provider_ops {
	const char *kind; /* "sim", "aws", ... */

	/*
	 * Lists the node groups with their instances (a read: takes a token of
	 * the read bucket). On success fills *groups (caller frees with
	 * provider_groups_free) and returns 0; else -1 with 'st'.
	 */
	int (*list_groups)(struct provider *p, struct provider_group **groups, size_t *n,
			   struct provider_status *st);

	/*
	 * Asks for 'count' new instances in 'group' (one request may create
	 * many). Takes a token of the mutating bucket first. on_instance runs
	 * for each instance the moment it exists; on_done exactly once at the
	 * end, also on failure. May return before the callbacks run (virtual
	 * time, asynchronous clouds) or after (blocking HTTP on a worker).
	 */
	void (*launch)(struct provider *p, const char *group, int count,
		       provider_instance_cb on_instance, provider_done_cb on_done, void *ctx);

	/*
	 * Optional: launch() limited to the instance types 'types' (n_types >
	 * 0), each one of the group's types (provider_group.types). NULL: the
	 * provider launches every type it would anyway, and a plan naming
	 * types is refused for its groups.
	 */
	void (*launch_types)(struct provider *p, const char *group, int count,
			     const char *const *types, size_t n_types,
			     provider_instance_cb on_instance, provider_done_cb on_done, void *ctx);

	/* Terminates instances (ids) of 'group'; on_done once with how many. */
	void (*terminate)(struct provider *p, const char *group, const char *const *ids, size_t n,
			  provider_done_cb on_done, void *ctx);

	/*
	 * Maps a Node's spec.providerID to its group and instance id. Returns
	 * 0, or -1 when the providerID is not one of this provider's groups.
	 * Must not call the cloud (works from what list_groups last saw).
	 */
	int (*map_node)(struct provider *p, const char *provider_id, char *group, size_t group_len,
			char *instance, size_t instance_len);

	/*
	 * Optional: the cloud's prices. Sets tmpl.price_per_hour of each of
	 * 'groups' (as list_groups made them) to the cloud's price of one new
	 * instance an hour, from the provider's price cache (providers/pricing.h);
	 * a group whose price is not known keeps what it has. Never waits for
	 * the cloud: a price missing or older than its TTL is fetched by a task
	 * on 'ex' (NULL: nothing is fetched) and shows in a later call.
	 */
	void (*prices)(struct provider *p, struct provider_group *groups, size_t n,
		       struct executor *ex);

	/* Optional, with prices: the price refreshes that failed so far. */
	uint64_t (*price_failures)(struct provider *p);

	/*
	 * Optional: interruption notices the cloud sent since the last call
	 * (each once; the provider acknowledges/deletes them only after it has
	 * returned them). Returns 0 with *out (caller frees with free()) and *n,
	 * or -1 with 'st'.
	 */
	int (*interruptions)(struct provider *p, struct provider_interruption **out, size_t *n,
			     struct provider_status *st);

	void (*free)(struct provider *p);
};

struct provider {
	const struct provider_ops *ops;
	struct ratelimit *mutating; /* launch, terminate */
	struct ratelimit *reads;    /* list_groups */
	struct executor *ex;        /* where the provider schedules its own work */
	void *impl;
};

struct provider_limits {
	double mutating_qps;
	int mutating_burst;
	double read_qps;
	int read_burst;
};

/*
 * Takes a token of 'rl' before a call (ratelimit_acquire, waiting at most
 * until 'deadline_ns'). Returns 0, or -1 with 'st' saying why:
 * PROVIDER_CANCELLED "not sent: this process does not hold the leader
 * Lease" when the bucket's write fence refused it (nothing goes out, and
 * nothing is to be backed off), else PROVIDER_THROTTLED "no token of the
 * provider's rate limit within N s".
 */
int provider_take_token(struct ratelimit *rl, int64_t deadline_ns, struct clock *c,
			struct provider_status *st);

struct config;

/* The token-bucket settings of the config's provider section. */
void provider_limits_from(struct provider_limits *out, const struct config *c);

/*
 * Turns and claims: what a provider needs so that launches of one group
 * never race. A group's size writes take turns (provider_turn_take/give,
 * striped by the group's name: two groups may share a turn, one group
 * never has two), so a size is read and written in one turn and never
 * computed from a size another launch is about to change. A new instance
 * seen in a group is claimed by the first launch that sees it and by no
 * other (claims are remembered for the last PROVIDER_CLAIMS_MAX ids).
 * Thread-safe; borrowed strings are copied.
 */
#define PROVIDER_TURNS 64
#define PROVIDER_CLAIMS_MAX 4096

struct provider_turns;

/* NULL when out of memory. */
struct provider_turns *provider_turns_new(void);
/* No turn may be held. NULL is a no-op. */
void provider_turns_free(struct provider_turns *t);
/* Blocks until the group's turn is the caller's. */
void provider_turn_take(struct provider_turns *t, const char *group);
/* Ends the caller's turn of the group. */
void provider_turn_give(struct provider_turns *t, const char *group);
/* True when no launch claimed instance 'id' of 'group' before (it is now
 * the caller's); false when another did. */
bool provider_claim(struct provider_turns *t, const char *group, const char *id);

/* Frees an array from list_groups, with what its templates own. */
void provider_groups_free(struct provider_group *groups, size_t n);

static inline void provider_free(struct provider *p)
{
	if (p)
		p->ops->free(p);
}

#endif
