/*
 * azure_internal: what the Azure provider's two halves share — the
 * provider's state, one ARM call with its retries, throttling windows and
 * token, and the scale set reads both need. azure.c owns groups, listing,
 * deletes and the provider's life; azure_launch.c owns capacity writes
 * and the operations they start. Not for use outside providers/azure/.
 */
#ifndef LUASCALE_AZURE_INTERNAL_H
#define LUASCALE_AZURE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "config.h"
#include "log.h"
#include "providers/azure/azure_arm.h"
#include "providers/azure/azureauth.h"
#include "providers/cloudhttp/cloudcall.h"
#include "providers/cloudhttp/cloudjson.h"
#include "providers/provider.h"
#include "runtime/clock.h"

#define AZURE_TOKEN_WAIT_NS (60 * CLOCK_NS_PER_S) /* longest wait for a bucket's token */
#define AZURE_N_WRITE_LOCKS 64   /* striped by group: one capacity write at a time per scale set */
#define AZURE_N_CLAIMED 4096     /* new VMs already reported by some launch */

struct cloudhttp;
struct groupcache;
struct pricing;
struct azure_sku_region;

/* A node group and its scale set. */
struct az_group {
	char name[64];          /* the engine's */
	char rg[96];
	char vmss[80];
	bool wants_template;
	bool discovered;
	int min, max;           /* the config's or the discovery entry's (-1: unset) */
	int cloud_min, cloud_max; /* the scale set's tags as last read (-1: none) */
	char location[64];      /* the scale set's, as last read ("" before): its prices' region */
	bool spot;              /* its virtualMachineProfile.priority is Spot */
	/* an AKS agent pool (azure.aks): writes go through the agentPools API;
	 * rg and vmss are the pool's scale set in the node resource group,
	 * "" until found (azure_aks.c) */
	bool aks;
	char aks_cluster[64], aks_rg[96], aks_pool[16];
	bool aks_autoscaling;   /* the pool's enableAutoScaling, as last read */
};

/* The provider's state (struct provider's impl). */
struct az_prov {
	struct cloudhttp *http;
	struct azure_auth *auth;
	struct clock *clock;
	const struct logger *log;
	const atomic_bool *cancel;
	const struct config *config;
	char sub[64];
	char arm[512];          /* "https://management.azure.com" (no trailing '/') */
	char default_rg[96];
	int64_t launch_wait_ns, poll_ns;
	pthread_mutex_t mu;     /* windows, counters, warned */
	size_t n_config_groups; /* the config's groups: the first of the cache's table */
	int64_t window_end[2];  /* throttling windows (monotonic ns): reads, writes */
	char warned[16][64];    /* sizes already reported unknown */
	pthread_mutex_t write_locks[AZURE_N_WRITE_LOCKS];
	struct { char group[64]; char id[32]; } *claimed; /* a ring: VMSS instance ids never repeat */
	size_t n_claimed, claimed_head;
	struct cloudcall_counts calls;
	struct groupcache *cache; /* the groups; each one's last good view, for a scale set read badly */
	struct pricing *pricing; /* the Retail Prices API's prices (azure_pricing.c); NULL when off */
	char prices[512];       /* its root, "https://prices.azure.com" (no trailing '/') */
	struct azure_sku_region *sku_regions; /* the Resource SKUs API's sizes (azure_skus.c; under mu) */
	size_t n_sku_regions;
	char warned_unavailable[16][64]; /* groups already reported with a size not available */
};

#define AP(p) ((struct az_prov *)(p)->impl)

/* One ARM answer, as the provider reads it. */
struct arm_resp {
	long status;
	cJSON *json;            /* the body (NULL when empty or not JSON) */
	char etag[160];
	char async[1024];       /* Azure-AsyncOperation */
	char location[1024];    /* Location */
	int64_t retry_after_ms; /* -1: none */
	int attempts;           /* sendings of the call (a conditional write's are all
				 * counted: > 1 says an earlier one may have taken effect) */
	struct azure_error err; /* when not 2xx */
};


/* Counts one call of kind 'what' (azure_provider_calls). */
#define azure_count_call(ap, what) cloudcall_counts_add(&(ap)->calls, (what))

/* Fills 'st' (the message cut to fit): the status every cloud fills alike. */
#define azure_status cloudcall_status

/* The string member 'k' of 'o', borrowed; "" when absent or not a string. */
#define azure_jstr cloudjson_str

/* Frees what an answer holds and zeroes it. */
void azure_resp_free(struct arm_resp *r);

/*
 * One ARM call: 'method' on 'path' ("subscriptions/..." under the ARM
 * root, or an absolute URL from an answer, rebased onto the root), with
 * 'body' (NULL: none) and If-Match 'if_match' (NULL: none), the
 * api-version added when missing. Waits for a token of the reads or
 * writes bucket ('writes'; none when 'no_token': the caller took it),
 * refuses at once during that budget's throttling window, carries the
 * current bearer token, retries 5xx and short throttling, fetches a new
 * token once on 401, and opens a throttling window on a long Retry-After
 * or a TooManyRequests endTime. 0 with a 2xx answer in *r; -1 with 'st'
 * classed and *r holding the refused answer's status and error. 'what'
 * names the call kind for azure_provider_calls(). Free *r either way.
 */
int azure_call_ex(struct provider *p, bool writes, bool no_token, const char *what, const char *method,
		  const char *path, const cJSON *body, const char *if_match, struct arm_resp *r,
		  struct provider_status *st);

/* azure_call_ex() taking its own token. */
int azure_call(struct provider *p, bool writes, const char *what, const char *method, const char *path,
	       const cJSON *body, const char *if_match, struct arm_resp *r, struct provider_status *st);

/* Copies the group named 'name' into *out: 0, or -1 when unknown. */
int azure_group_get(struct az_prov *ap, const char *name, struct az_group *out);

/* Writes the path of the group's scale set, then 'tail' ("", "/delete", ...). */
void azure_vmss_path(const struct az_prov *ap, const struct az_group *g, const char *tail, char *out,
		     size_t len);

/* sku.capacity of a scale set: 0 with it in *out, -1 when absent or not a count. */
int azure_capacity_of(const cJSON *vmss, int *out);

/* Every VM of the group's scale set with its instance view, all pages, as
 * a JSON array in *items (the caller deletes it). 0, or -1 with 'st'. */
int azure_list_vms(struct provider *p, const struct az_group *g, cJSON **items, struct provider_status *st);

/* POST .../delete with 'ids'. 0 when ARM took the request, -1 with 'st'. */
int azure_delete_vms(struct provider *p, const struct az_group *g, const char *const *ids, size_t n,
		     struct provider_status *st);

/* The lock that orders one group's capacity writes (striped by name). */
pthread_mutex_t *azure_write_lock(struct az_prov *ap, const char *group);

/* Claims a new VM for the launch that saw it first: true when no launch had. */
bool azure_claim(struct az_prov *ap, const char *group, const char *id);

/* ---- AKS agent pools (azure_aks.c) ---- */

#define AZURE_AKS_API_VERSION "2024-05-01"

/* An agent pool as read (GET .../agentPools/<pool>). */
struct aks_pool {
	int count;              /* properties.count (-1: absent) */
	char state[32];         /* properties.provisioningState */
	bool autoscaling;       /* properties.enableAutoScaling */
	char etag[160];
	cJSON *props;           /* properties, owned (NULL after aks_pool_free) */
};

void aks_pool_free(struct aks_pool *a);

/*
 * Finds the scale set of an AKS group when it is not known yet: the
 * managed cluster's properties.nodeResourceGroup, and there the scale set
 * tagged aks-managed-poolName (or poolName) = the pool. Fills g->rg and
 * g->vmss. 0, or -1 with 'st' (NOT_FOUND when no scale set is the pool's).
 */
int azure_aks_resolve(struct provider *p, struct az_group *g, struct provider_status *st);

/* GET of the group's agent pool into *out (aks_pool_free it). 0, or -1 with 'st'. */
int azure_aks_read(struct provider *p, const struct az_group *g, struct aks_pool *out, struct provider_status *st);

/* Is an operation running on the pool (a provisioningState other than
 * Succeeded, Failed or Canceled)? */
bool azure_aks_busy(const struct aks_pool *a);

/* The refusal of a write to a pool whose AKS cluster autoscaler is on: 'st' filled, -1. */
int azure_aks_refuse_autoscaling(const struct az_group *g, const char *what, struct provider_status *st);

/*
 * PUT of the pool as read ('a': its properties without the read-only
 * ones) with properties.count 'count', If-Match its etag when it has one;
 * the write token already taken. 0 with ARM's answer in *r (free it), or
 * -1 with 'st' and the refused answer in *r.
 */
int azure_aks_write_count(struct provider *p, const struct az_group *g, const struct aks_pool *a, int count,
			  struct arm_resp *r, struct provider_status *st);

/*
 * POST .../agentPools/<pool>/deleteMachines with the machine names (the
 * VMs' computer names, read from the scale set's VM list) of instance ids
 * 'ids'. Refused, nothing sent, while AKS's autoscaler is on or an
 * operation runs on the pool. 0 when AKS took it, -1 with 'st'.
 */
int azure_aks_delete_machines(struct provider *p, const struct az_group *g, const char *const *ids, size_t n,
			      struct provider_status *st);

/* provider_ops.launch (azure_launch.c). */
void azure_launch(struct provider *p, const char *group, int count, provider_instance_cb on_instance,
		  provider_done_cb on_done, void *ctx);

#endif
