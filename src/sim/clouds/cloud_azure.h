/*
 * sim/cloud_azure: the Azure flavour of the simulated cloud — VM scale sets
 * whose VMs (instance ids 0, 1, ..., computer names <prefix>00000X as AKS
 * has them, azure:/// providerIDs) follow sku.capacity, an etag that
 * changes with every write, VMs left Failed by an allocation failure, and
 * long-running operations. The wire (ARM JSON, tokens) is sim/clouds/azure_face.c's.
 */
#ifndef LUASCALE_SIM_CLOUD_AZURE_H
#define LUASCALE_SIM_CLOUD_AZURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"
#include "sim/clouds/cloud.h"

/* A VM size (the resource SKUs API's capabilities). */
struct sim_azure_vmsize {
	const char *name;             /* "Standard_D4s_v3" */
	const char *family;           /* quota family, "standardDSv3Family" */
	int cpus;                     /* vCPUs */
	int64_t memory_mb;            /* MemoryGB * 1024 */
	int gpus;                     /* 0: none */
	int64_t resource_disk_mb;     /* MaxResourceVolumeMB (0: no temporary disk) */
	bool not_available;           /* restricted for the subscription in every location
				       * (NotAvailableForSubscription) */
};

struct sim_azure_tag {
	const char *key;
	const char *value;
};

/* The Azure side of one node group (parallel to the scenario's groups). */
struct sim_azure_group {
	const char *vmss;             /* the scale set's name, default "<group>" */
	const char *computer_prefix;  /* computerNamePrefix, default "<vmss>" */
	const char *vm_size;          /* sku.name, default "Standard_D4s_v3" */
	const char *priority;         /* virtualMachineProfile.priority: NULL (Regular), "Spot", "Low" */
	const char **zones;           /* "1", "2", "3"; none: a regional scale set */
	size_t n_zones;
	struct sim_azure_tag *tags;   /* the scale set's tags (CA's, node templates) */
	size_t n_tags;
	const char *agent_pool;       /* the AKS agent pool it is (conf->aks_cluster's), NULL: none;
				       * the scale set then carries aks-managed-poolName */
	bool enable_auto_scaling;     /* the pool's enableAutoScaling (AKS's autoscaler on) */
	bool system_mode;             /* the pool's mode: System, else User */
};

enum sim_azure_throttle {
	SIM_AZURE_TOO_MANY_REQUESTS,  /* 429 {"code":"TooManyRequests"} */
	SIM_AZURE_NOT_ALLOWED,        /* 429 OperationNotAllowed, details TooManyRequests */
};

/* The scenario's `azure:` section. Strings are borrowed (the scenario's arena). */
struct sim_azure_conf {
	const char *subscription;     /* a GUID, default 00000000-0000-4000-8000-00000000a2e1 */
	const char *resource_group;   /* default "sim-rg" */
	const char *location;         /* default "eastus" */
	const char *tenant;           /* a GUID */
	const char *client_id;        /* the service principal / identity's GUID */
	const char *client_secret;    /* the secret the token endpoint accepts */
	int64_t token_ttl_s;          /* expires_in of handed-out tokens, default 3600 */
	int64_t operation_ns;         /* an operation stays InProgress at least this long, default 0 */
	int64_t retry_after_s;        /* Retry-After of throttled answers and polls, default 1 */
	enum sim_azure_throttle throttle;
	int page_size;                /* VMs per list page (a $top may lower it), default 50 */
	struct sim_azure_group *groups; /* one per node group, in order */
	size_t n_groups;
	const char *aks_cluster;      /* an AKS managed cluster whose node resource group is
				       * resource_group (NULL: none); its agent pools are the
				       * groups with an agent_pool */
	const char *aks_resource_group; /* the cluster's own resource group */
};

enum sim_azure_vm_state {
	SIM_AZURE_CREATING,
	SIM_AZURE_SUCCEEDED,
	SIM_AZURE_FAILED,             /* its allocation failed: it stays so until deleted */
	SIM_AZURE_DELETING,
};

/* A VM of a scale set. */
struct sim_azure_vm {
	int instance_id;              /* 0, 1, ...: never reused in the scale set */
	char name[96];                /* "<vmss>_<id>" (the cloud's instance id too) */
	char computer[80];            /* "<prefix>" + 6 base-36 digits, lowercase */
	char zone[8];                 /* "" regional */
	struct sim_instance *in;      /* NULL until made (and when its making failed) */
	enum sim_azure_vm_state state;
	bool launching;               /* its creation is in flight */
	uint64_t op;                  /* the operation that made or deletes it */
	char error_code[48];          /* Failed: "AllocationFailed", ... */
	char error_message[320];
};

enum sim_azure_op_status { SIM_AZURE_IN_PROGRESS, SIM_AZURE_OP_SUCCEEDED, SIM_AZURE_OP_FAILED };

/* A long-running operation (the Azure-AsyncOperation resource). */
struct sim_azure_op {
	uint64_t seq;                 /* its number, VMs point at it */
	char id[40];                  /* a GUID, the URL's operation id */
	size_t group;
	bool delete;                  /* deleting instances; else a capacity change */
	int64_t start_ns, done_ns;    /* on the cloud's clock: InProgress until done_ns at least */
	int64_t start_wall;           /* unix seconds */
};

struct sim_azure;

/*
 * The Azure flavour over 'cloud' (borrowed; its groups match conf->groups
 * in order): sets itself as the cloud's namer, so create it before any
 * instance exists. 'conf' is borrowed and must outlive it. NULL with a
 * message (an unknown VM size, a name ARM refuses, out of memory).
 */
struct sim_azure *sim_azure_new(struct sim_cloud *cloud, const struct sim_azure_conf *conf,
				uint64_t seed, struct errbuf *err);

/* Records the starting instances as VMs, sets each capacity to max(min,
 * them) and creates up to it. Call once. */
void sim_azure_start(struct sim_azure *g);

/* Frees it; creations in flight finish without it. NULL is ignored. */
void sim_azure_free(struct sim_azure *g);

const struct sim_azure_conf *sim_azure_conf(const struct sim_azure *g);
struct sim_cloud *sim_azure_cloud(const struct sim_azure *g);

/* The built-in VM size named 'name' (case-insensitive), or NULL; the i-th. */
const struct sim_azure_vmsize *sim_azure_find_vmsize(const char *name);
const struct sim_azure_vmsize *sim_azure_vmsize_at(size_t i);

/* Is 's' a GUID (8-4-4-4-12 hex digits)? */
bool sim_azure_valid_guid(const char *s);

/* The computer name of instance 'id' under 'prefix' ("<prefix>" + 6 base-36 digits). */
void sim_azure_computer_name(const char *prefix, int id, char *out, size_t size);

/* How Azure names an instance's failure of kind 'e': a code and a message. */
void sim_azure_failure(enum provider_error e, const char *vm_size, bool zonal, char *code,
		       size_t code_size, char *msg, size_t msg_size);

/* ---- under the cloud's lock (sim_cloud_lock) ---- */

const struct sim_azure_group *sim_azure_group(const struct sim_azure *g, size_t i);
/* The group whose scale set is 'name' (case-insensitive, as ARM), or -1. */
int sim_azure_find_vmss(const struct sim_azure *g, const char *name);

/* The group whose scale set is AKS agent pool 'name' (case-sensitive, as
 * AKS), or -1. */
int sim_azure_find_pool(const struct sim_azure *g, const char *name);

/* The instance id of scale set i's VM whose computer name (AKS's machine
 * name) is 'computer', Deleting ones left out; -1 when none. */
int sim_azure_find_computer(struct sim_azure *g, size_t i, const char *computer);

/* Scale set i's sku.capacity. */
int sim_azure_capacity(const struct sim_azure *g, size_t i);
/* Scale set i's etag, quotes included ("\"3\""): it changes with every write. */
void sim_azure_etag(const struct sim_azure *g, size_t i, char *out, size_t size);
/* Is an operation of scale set i still in progress (provisioningState Updating)? */
bool sim_azure_updating(struct sim_azure *g, size_t i);

/* Scale set i's VMs, Deleting ones included until gone: *n of them,
 * borrowed until the lock is released. */
const struct sim_azure_vm *sim_azure_vms(struct sim_azure *g, size_t i, size_t *n);
/* The VM with instance id 'id' (decimal text) of scale set i, or NULL. */
const struct sim_azure_vm *sim_azure_find_vm(struct sim_azure *g, size_t i, const char *id);
/* Does 'vm' run its scale set's model now (latestModelApplied)? false
 * once an image fault rolled the group's image past the VM's; true for a
 * VM not made yet or when either image is unknown. */
bool sim_azure_latest_model(const struct sim_azure *g, const struct sim_azure_vm *vm);

/*
 * sku.capacity of scale set i becomes 'capacity': new VMs (the next
 * instance ids, spread over the zones) are created, the newest go when it
 * shrinks. Refused whole, nothing changed, when it is above 1000 or the
 * node group's max, or a quota fault fires: -1, with Azure's code in 'code'
 * ("QuotaExceeded", "OperationNotAllowed" or "InvalidParameter") and its
 * message in 'err'. Otherwise 0 and the operation in 'op'.
 */
int sim_azure_set_capacity(struct sim_azure *g, size_t i, int capacity, struct sim_azure_op *op,
			   char *code, size_t code_size, struct errbuf *err);

/*
 * POST .../delete: the VMs with these instance ids (decimal text) stop and
 * capacity drops by each. All or nothing: an id that is no VM of the scale
 * set (or already deleting) is -1 with Azure's message and nothing done.
 */
int sim_azure_delete(struct sim_azure *g, size_t i, const char *const *ids, size_t n,
		     struct sim_azure_op *op, struct errbuf *err);

/* Fills 'out' with the operation whose id is 'id'; false when unknown. */
bool sim_azure_op_get(struct sim_azure *g, const char *id, struct sim_azure_op *out);

/*
 * The status of 'op' now: InProgress before its done time and while a VM
 * it creates is being made; then Failed when one of them failed (its code
 * and message copied out), else Succeeded.
 */
enum sim_azure_op_status sim_azure_op_status(struct sim_azure *g, const struct sim_azure_op *op,
					     char *code, size_t code_size, char *msg,
					     size_t msg_size);

#endif
