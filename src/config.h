/*
 * config: the luascale configuration file (YAML, via libyaml) and its
 * LUASCALE_* environment overrides, validated into struct config.
 * Errors name file:line:column (or the environment variable). It does not
 * read kubeconfigs or policies; it only records where they are.
 */
#ifndef LUASCALE_CONFIG_H
#define LUASCALE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cloud_configs.h" /* generated: each cloud's section structs */
#include "engine/budget.h"
#include "errbuf.h"
#include "model.h"

/* One policy parameter as written in YAML (or an environment variable). */
enum param_type {
	PARAM_STRING,
	PARAM_INT,
	PARAM_NUMBER,
	PARAM_BOOL,
	PARAM_LIST,  /* sequence: items in 'items' */
	PARAM_MAP,   /* mapping: items in 'items', each with a key */
};

struct param {
	const char *key;    /* NULL for list items */
	enum param_type type;
	const char *str;    /* the scalar as written (all scalar types) */
	int64_t i;
	double num;
	bool b;
	struct param *items;
	size_t n_items;
};

/* What a group's config says of itself beyond struct node_group, for the
 * provider that completes it from the cloud. Same index as config.groups. */
struct config_group_extra {
	bool min_set, max_set;           /* written (else the cloud's, for cloud groups;
					  * an unwritten max reads as min offline) */
	bool template_set;               /* a template: was written */
	/* each cloud's section: <cloud>_set when it was written, and
	 * struct config_<cloud>_group <cloud> (its defaults filled for every
	 * group when provider.kind is that cloud) */
#define X(cloud) bool cloud##_set; struct config_##cloud##_group cloud;
	LUASCALE_CLOUDS(X)
#undef X
	/* The group's disruption budgets (docs/configuration.md "Disruption
	 * budgets"): its own disruption.budgets when written (budgets_set),
	 * else the top-level disruption.budgets, else budget_default (nodes:
	 * 10%). n_budgets is 0 when the list in force was written empty: no
	 * budget limits the group then. For budget_allowed(). */
	bool budgets_set;
	const struct disruption_budget *budgets;
	size_t n_budgets;
};

/*
 * An annotation that keeps a node from removal (one entry of
 * safety.do_not_disrupt_annotations): on the node itself, or on a pod
 * running on it. The safety check refuses to drain, delete, cordon or
 * taint NoExecute such a node.
 */
struct config_optout {
	const char *key;
	const char *value;               /* the value that opts out, "true" unless written */
	bool pod;                        /* on a pod running on the node (else on the node) */
};

#define CONFIG_MAX_OPTOUTS 64

struct config {
	struct arena *arena;     /* owns everything below */
	const char *source;      /* file name the config came from */
	uint64_t text_hash;      /* of the text parsed (FNV-1a): a file read again with
				  * the same hash says the same */
	const char *base_dir;    /* directory of the config file: relative paths resolve here */

	/* cluster: kubeconfig + context are required unless in_cluster */
	const char *kubeconfig;  /* "" when unset */
	const char *context;     /* "" when unset */
	bool in_cluster;
	double write_qps;        /* Kubernetes API writes a second, default 10 */
	int64_t write_burst;     /* writes saved up, default 20 */
	int64_t sync_timeout_ms; /* run --once gives up reading the cluster after
				  * this, default 30 s, 1 s to 24 h */

	struct node_group *groups; /* selector defaults to {luascale.io/node-group: NAME} */
	size_t n_groups;
	struct config_group_extra *group_extra; /* n_groups of them (NULL when none) */

	/* policy */
	const char *policy_path;        /* resolved against base_dir */
	struct param params;            /* PARAM_MAP, possibly empty */
	int64_t policy_instructions;    /* instruction budget per call, default 200000000 */
	int64_t policy_memory;          /* bytes, Lua heap cap, default 512Mi */
	int64_t policy_timeout_ms;      /* CPU time per policy call, default 10s, > 0 */

	/* safety */
	int64_t max_nodes_total;        /* 0 = no global cap */
	int64_t max_scale_down_per_round; /* default 1 */
	int64_t max_actions_per_round;  /* default 1000, 1..PLAN_MAX_ACTIONS: a plan over it is refused */
	int64_t max_concurrent_drains;  /* drains running at once, >= 1, default 1 */
	bool evicted_pods_must_fit;     /* a removal is refused when a pod it evicts would
					 * find no room on the nodes that stay (default true) */
	const char *protected_pod_selector; /* kubectl selector string, "" for none */
	struct label_selector protected_pods;
	int64_t max_cache_staleness_ms; /* no scale-down on a cache out of sync
					 * for longer, default 30s */
	const struct config_optout *optouts; /* safety.do_not_disrupt_annotations; default:
					      * nodes scale-down-disabled and do-not-disrupt,
					      * pods do-not-disrupt */
	size_t n_optouts;

	/* disruption: the top-level disruption.budgets, every group's unless
	 * the group writes its own (group_extra[i].budgets is the list in
	 * force); budget_default alone when not written */
	const struct disruption_budget *disruption_budgets;
	size_t n_disruption_budgets;
	bool disruption_budgets_set;    /* the top-level list was written */
	/* disruption.expire_after: how long a node may live before a policy
	 * replaces it, every group's unless the group writes its own
	 * (node_groups[i].expire_after, in seconds, is the one in force);
	 * 0: never (the default) */
	int64_t disruption_expire_after_ms;

	/* provider: which cloud, and its token buckets */
	const char *provider_kind;      /* "" (none), "sim", ... */
	double provider_qps;            /* mutating calls per second, default 5 */
	int64_t provider_burst;         /* default 10 */
	double provider_read_qps;       /* default 20 */
	int64_t provider_read_burst;    /* default 40 */
	/* each cloud's provider.<cloud> section: struct config_<cloud> <cloud> */
#define X(cloud) struct config_##cloud cloud;
	LUASCALE_CLOUDS(X)
#undef X
	bool pricing_enabled;           /* provider.pricing.enabled: ask the cloud for the groups'
					 * prices (the config's price_per_hour still wins), default true */
	int64_t pricing_on_demand_ttl_ms; /* provider.pricing.on_demand_ttl, default 12h */
	int64_t pricing_spot_ttl_ms;    /* provider.pricing.spot_ttl, default 1h */

	/* provisioning, in milliseconds */
	int64_t max_provision_ms;       /* an instance must be a Ready node by then, default 15m */
	int64_t backoff_initial_ms;     /* a group after a failed launch, default 5m, doubling */
	int64_t backoff_max_ms;         /* default 30m */
	int64_t drain_timeout_ms;       /* default 10m */
	bool bind_pods;                 /* provisioning.bind_pods: bind a packing's pods to the
					 * node launched for them once it is Ready; default false */

	/* intervals, in milliseconds */
	int64_t reconcile_interval_ms;  /* periodic resync, default 10s */
	int64_t batch_idle_ms;          /* default 1s */
	int64_t batch_max_ms;           /* default 10s */
	int64_t batch_new_pod_ms;       /* a pod became Unschedulable: a reconcile within, default 100ms */
	int64_t explain_interval_ms;    /* intervals.explain: every node explained at most once per
					 * (/debug/nodes, the status summary), default 1m; 0: never */

	/* operations: log format, status ConfigMap, Events, reload on change */
	bool log_json;                  /* log.format: json (else text) */
	int log_level;                  /* log.level: an enum log_level (default info) */
	bool status_enabled;            /* status.enabled, default true */
	const char *status_namespace;   /* status.namespace, default "kube-system" */
	const char *status_name;        /* status.name, default "luascale-status" */
	int64_t status_interval_ms;     /* status.interval: at most one write per, default 10s */
	bool events_enabled;            /* events.enabled: Events on pending pods, default true */
	bool reload_watch;              /* reload.watch: reload on file change, default true */
	int64_t reload_debounce_ms;     /* reload.debounce: quiet time first, default 1s */
	/* leader_election: a coordination.k8s.io/v1 Lease */
	bool leader_election;           /* enabled; default: in_cluster */
	const char *lease_namespace;    /* default "kube-system" */
	const char *lease_name;         /* default "luascale" */
	int64_t lease_duration_ms;      /* default 15s, whole seconds */
	int64_t renew_deadline_ms;      /* default 10s, < lease_duration */
	int64_t retry_period_ms;        /* default 2s, < renew_deadline */
	/* server: /metrics, /healthz, /readyz */
	const char *server_listen;      /* default ":8080" */
	bool server_enabled;            /* default true (--no-server: false) */
};

/* Environment lookup, injectable for tests (getenv semantics). */
typedef const char *(*config_getenv_fn)(const char *name, void *ud);

/*
 * Parses YAML text into a new config. 'source' names the text in messages
 * and gives base_dir. 'getenv_fn' (NULL: no overrides) supplies LUASCALE_*
 * overrides, applied after the file and validated like it:
 *   LUASCALE_CLUSTER_KUBECONFIG, LUASCALE_CLUSTER_CONTEXT, LUASCALE_CLUSTER_IN_CLUSTER,
 *   LUASCALE_CLUSTER_WRITE_QPS, LUASCALE_CLUSTER_WRITE_BURST,
 *   LUASCALE_SAFETY_MAX_CACHE_STALENESS,
 *   LUASCALE_POLICY_PATH, LUASCALE_POLICY_INSTRUCTIONS, LUASCALE_POLICY_MEMORY,
 *   LUASCALE_POLICY_TIMEOUT,
 *   LUASCALE_POLICY_PARAMS_<KEY> (key lower-cased),
 *   LUASCALE_SAFETY_MAX_NODES_TOTAL, LUASCALE_SAFETY_MAX_SCALE_DOWN_PER_ROUND,
 *   LUASCALE_SAFETY_MAX_ACTIONS_PER_ROUND, LUASCALE_SAFETY_MAX_CONCURRENT_DRAINS,
 *   LUASCALE_SAFETY_PROTECTED_POD_SELECTOR,
 *   LUASCALE_INTERVALS_RECONCILE, LUASCALE_INTERVALS_BATCH_IDLE, LUASCALE_INTERVALS_BATCH_MAX,
 *   LUASCALE_PROVIDER_KIND / _QPS / _BURST / _READ_QPS / _READ_BURST,
 *   LUASCALE_PROVIDER_<CLOUD>_* (each cloud's, in its <cloud>_config.c),
 *   LUASCALE_PROVISIONING_MAX_PROVISION_TIME / _BACKOFF_INITIAL / _BACKOFF_MAX / _DRAIN_TIMEOUT,
 *   LUASCALE_LOG_FORMAT, LUASCALE_STATUS_ENABLED / _NAMESPACE / _NAME / _INTERVAL,
 *   LUASCALE_EVENTS_ENABLED, LUASCALE_RELOAD_WATCH / _DEBOUNCE,
 *   LUASCALE_NODE_GROUPS_<NAME>_MIN / _MAX / _PRICE_PER_HOUR (NAME upper-cased, '-' and '.' as '_'),
 *   LUASCALE_LEADER_ELECTION_ENABLED / _NAMESPACE / _NAME, LUASCALE_SERVER_LISTEN / _ENABLED.
 * Every numeric key has a range (counts at most 1000000, durations at most
 * 168h, and so on: docs/configuration.md); NaN and infinite numbers are
 * refused, in params too.
 * Returns the config (free with config_free) or NULL with "file:line:col:
 * key: message" (or "LUASCALE_X: message") in 'err'.
 */
struct config *config_parse(const char *yaml, size_t len, const char *source,
			    config_getenv_fn getenv_fn, void *ud,
			    struct errbuf *err);

/*
 * Options for config_parse_opts(). Zero-initialize and set what you need.
 * 'envp' is a NULL-terminated array of "NAME=VALUE" strings shaped like
 * environ; when set it is used instead of 'getenv_fn'. Because its names
 * can be listed, LUASCALE_POLICY_PARAMS_<KEY> may add parameters the file
 * does not have, and a LUASCALE_NODE_GROUPS_* variable that names no group
 * (or no setting) is an error, and so is any other LUASCALE_* variable that
 * is neither an override nor one of the few that are not configuration
 * (LUASCALE_CONFIG, LUASCALE_LUA_DIR, ...: env_not_config in config.c); the
 * message names the closest known variable. With only 'getenv_fn', overrides are looked
 * up by name: parameters the file already has, groups the file defines.
 * HOME (for "~/" in paths) comes from the same source; from the process
 * environment when neither is set.
 */
#define CONFIG_OFFLINE 0x1u /* cluster and policy.path are optional (decide, specs, sim) */

struct config_opts {
	config_getenv_fn getenv_fn;
	void *ud;
	const char *const *envp;
	unsigned flags; /* CONFIG_OFFLINE */
};

/* config_parse() with options; same result and errors. 'opts' may be NULL. */
struct config *config_parse_opts(const char *yaml, size_t len,
				 const char *source,
				 const struct config_opts *opts,
				 struct errbuf *err);

/* Config files larger than this are refused. */
#define CONFIG_MAX_SIZE (16u << 20)

/* Reads the regular file 'path' (at most CONFIG_MAX_SIZE; a FIFO or device
 * is refused, see buf_fopen_regular) and parses it with the process
 * environment listed, so an unknown LUASCALE_* variable is an error. */
struct config *config_load(const char *path, struct errbuf *err);

/* config_load() with config_opts flags (CONFIG_OFFLINE for `decide`). */
struct config *config_load_flags(const char *path, unsigned flags, struct errbuf *err);

void config_free(struct config *c);

/* Parses a duration "10s", "1m30s", "250ms", "2h" into milliseconds. 0 or -1. */
int config_parse_duration(const char *text, int64_t *out_ms);

/* Returns the param of map 'm' named 'key' or NULL. */
const struct param *param_get(const struct param *m, const char *key);

/*
 * The disruption budgets in force for the node group named 'group': its
 * config.group_extra entry's (its own list, or the top level's), or, for
 * a group the config does not list (found by a provider's discovery), the
 * top level's disruption_budgets. Sets *n (0: no budget limits the group).
 * Borrowed from 'c'; NULL only when *n is 0.
 */
const struct disruption_budget *config_group_budgets(const struct config *c, const char *group,
						     size_t *n);

#endif
