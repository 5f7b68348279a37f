/*
 * azure_arm: what the Azure provider reads out of ARM's answers, without
 * I/O — error bodies and their classes (throttling windows, no capacity,
 * quota), scale set VMs and their provisioning state, providerIDs, and the
 * node-template tags. The calls themselves are azure.c's.
 */
#ifndef LUASCALE_AZURE_ARM_H
#define LUASCALE_AZURE_ARM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "providers/provider.h"

#define AZURE_COMPUTE_API_VERSION "2024-11-01"

struct azure_error {
	long status;              /* HTTP status */
	char code[64];            /* error.code: "AllocationFailed", "OperationNotAllowed" */
	char detail_code[64];     /* the first details[].code: "TooManyRequests" */
	char message[1024];       /* error.message, cut at 1 KiB */
	int64_t window_end_s;     /* a throttling detail's endTime (unix s), 0 when none */
};

/*
 * Reads an ARM error body {"error":{"code","message","details":[...]}}
 * (also a bare {"code","message"}, as long-running operations write it).
 * A detail whose message is the throttling JSON {"endTime": ...} gives
 * window_end_s. Fields stay empty when the body is not such JSON. Never
 * fails: 'out' is always filled (status from 'status').
 */
void azure_error_parse(const char *body, size_t len, long status, struct azure_error *out);

/* An error object already parsed (an operation's "error"), into 'out'. */
void azure_error_from_json(const cJSON *e, long status, struct azure_error *out);

/* True for a 429, and for OperationNotAllowed (or any code) whose details
 * say TooManyRequests: ARM's subscription throttling. */
bool azure_error_throttled(const struct azure_error *e);

/*
 * The class of an error: throttled as above; AllocationFailed,
 * ZonalAllocationFailed, OverconstrainedAllocationRequest,
 * OverconstrainedZonalAllocationRequest, SkuNotAvailable → no capacity;
 * QuotaExceeded, or OperationNotAllowed with "quota" in the message →
 * quota; 401/403 auth; 404 not found; another 409 (a conflicting
 * operation), 5xx (and 0) transient; else invalid.
 */
enum provider_error azure_error_class(const struct azure_error *e);

/* A VM of a scale set, as the provider needs it. */
struct azure_vm {
	char instance_id[32];     /* "3" (digits: what terminate and providerIDs use) */
	char name[96];            /* "pool_3" */
	enum instance_state state;
	bool failed;              /* provisioningState Failed and not running: a failed launch */
	int64_t created_wall;     /* properties.timeCreated (unix seconds), 0 when absent */
	struct azure_error why;   /* for a failed one: the instance view's code
				   * (ProvisioningState/failed/<code>) and message */
};

/* Reads one item of a virtualMachines list (with $expand=instanceView).
 * Returns 0, or -1 when it has no valid instanceId (digits, at most 10). */
int azure_vm_parse(const cJSON *vm, struct azure_vm *out);

/* The parts of an Azure VMSS providerID. */
struct azure_resource_id {
	char subscription[64];
	char resource_group[96];
	char vmss[80];
	char instance[32];
};

/*
 * Splits "azure:///subscriptions/S/resourceGroups/RG/providers/
 * Microsoft.Compute/virtualMachineScaleSets/SS/virtualMachines/N" (every
 * fixed segment compared case-insensitively; "azure://" with the path's
 * leading slash). Returns 0, or -1 when it is not one.
 */
int azure_parse_provider_id(const char *provider_id, struct azure_resource_id *out);

/* Writes the providerID of instance 'n' of scale set 'vmss'. */
void azure_format_provider_id(const char *sub, const char *rg, const char *vmss, const char *n,
			      char *out, size_t len);

/*
 * Adds the node-template tags of a scale set ('tags' a JSON object of
 * strings) to 't': label_<k> and taint_<k> ("value:Effect"), where "_" in
 * <k> stands for "/" and "~2" for "_", and resources_<name> (cpu, memory,
 * pods, nvidia.com/gpu, others as extended resources) as quantities.
 * Returns how many template tags were refused (the first one's name in
 * 'bad', cut to 'blen').
 */
int azure_template_tags(const cJSON *tags, struct provider_template *t, char *bad, size_t blen);

/* The AKS node pool a scale set is (its tag aks-managed-poolName, else the
 * legacy poolName), borrowed from 'vmss'; NULL when it is none. */
const char *azure_aks_pool(const cJSON *vmss);

/*
 * Adds to 't' what AKS puts on a new node of the node pool 'pool' (see
 * azure_aks_pool) whose scale set is 'vmss' in resource group 'rg' (the
 * node resource group, MC_...), as the Cluster Autoscaler predicts it:
 * kubernetes.azure.com/agentpool and agentpool (the pool),
 * kubernetes.azure.com/mode (user: a scale set does not say it is a system
 * pool; a node-template label tag does), kubernetes.azure.com/role=agent,
 * kubernetes.azure.com/cluster (rg), kubernetes.azure.com/storageprofile
 * and storageprofile (ephemeral for a local OS disk, else managed),
 * kubernetes.azure.com/storagetier and storagetier (the OS disk's account
 * type), accelerator and kubernetes.azure.com/accelerator=nvidia when
 * 'gpus' > 0, and for a Spot scale set (virtualMachineProfile.priority)
 * kubernetes.azure.com/scalesetpriority=spot with the taint
 * kubernetes.azure.com/scalesetpriority=spot:NoSchedule. The scale set's
 * node-template tags (azure_template_tags) come after and win.
 */
void azure_aks_template(const cJSON *vmss, const char *pool, const char *rg, int gpus,
			struct provider_template *t);

/* The integer tag 'name' (the "min" and "max" tags): 0 with it in *out,
 * 1 when absent, -1 when not a number from 0 to 1000000. */
int azure_tag_int(const cJSON *tags, const char *name, int *out);

#endif
