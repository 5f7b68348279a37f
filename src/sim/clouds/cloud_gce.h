/*
 * sim/cloud_gce: the GCE flavour of the simulated cloud — instances named
 * from a managed instance group's baseInstanceName, gce:// providerIDs,
 * zonal and regional MIGs converging to their targetSize with each managed
 * instance's currentAction and lastAttempt, machine types, instance
 * templates and operations. The wire (JSON, OAuth) is sim/clouds/gce_face.c's.
 */
#ifndef LUASCALE_SIM_CLOUD_GCE_H
#define LUASCALE_SIM_CLOUD_GCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"
#include "sim/clouds/cloud.h"

/* A machine type (machineTypes.get). */
struct sim_gce_mtype {
	const char *name;             /* "e2-standard-4" */
	int cpus;                     /* guestCpus */
	int64_t memory_mb;            /* memoryMb */
	int gpus;                     /* accelerators[].guestAcceleratorCount; 0: none */
	const char *gpu_type;         /* accelerators[].guestAcceleratorType, "nvidia-tesla-a100" */
};

struct sim_gce_label {
	const char *key;
	const char *value;
};

/* The GCE side of one node group (parallel to the scenario's groups). */
struct sim_gce_group {
	const char *region;           /* regional MIG: its region; zonal: the zone's */
	bool regional;
	const char **zones;           /* zonal: one; regional: the zones it spreads over */
	size_t n_zones;
	const char *mig;              /* the MIG's name, default "<group>" */
	const char *base_name;        /* baseInstanceName, default the MIG's name */
	const char *template_name;    /* the instance template, default "<mig>-template" */
	const char *machine_type;     /* default "e2-standard-4" */
	struct sim_gce_label *labels; /* the template's properties.labels */
	size_t n_labels;
	bool refuse_create;           /* createInstances answers 400 (a MIG that takes no named
				       * instances); resize still works */
	bool spot;                    /* the template's scheduling.provisioningModel is SPOT */
	const char *kube_env;         /* the template's metadata item kube-env (GKE's), or NULL */
};

/* The scenario's `gce:` section. Strings are borrowed (the scenario's arena). */
struct sim_gce_conf {
	const char *project;          /* default "sim-project" */
	const char *project_number;   /* default "123456789012" */
	const char *service_account;  /* client_email, default "luascale@<project>.iam.gserviceaccount.com" */
	int64_t token_ttl_s;          /* expires_in of handed-out tokens, default 3600 */
	int64_t retry_ns;             /* a failed creation retries after, default 10s */
	int64_t operation_ns;         /* an operation stays RUNNING this long, default 0 */
	int64_t wait_ns;              /* operations.wait returns after at most, default 2m */
	int throttle_status;          /* 403 (rateLimitExceeded, default) or 429 */
	struct sim_gce_group *groups; /* one per node group, in order */
	size_t n_groups;
};

enum sim_gce_action {
	SIM_GCE_NONE,                 /* running */
	SIM_GCE_CREATING,             /* being created, or retrying after a failed attempt */
	SIM_GCE_DELETING,
};

/* A managed instance of a MIG (listManagedInstances). */
struct sim_gce_mi {
	char name[64];
	char zone[32];
	struct sim_instance *in;      /* NULL until the cloud made it */
	enum sim_gce_action action;
	bool launching;               /* a creation attempt is in flight */
	char error_code[48];          /* lastAttempt.errors.errors[0].code; "" none */
	char error_message[320];
};

enum sim_gce_op_status { SIM_GCE_PENDING, SIM_GCE_RUNNING, SIM_GCE_DONE };

/* An operation (zoneOperations / regionOperations). */
struct sim_gce_op {
	char name[48];                /* "operation-<ms>-<hex>" */
	char id[24];                  /* decimal */
	size_t group;
	char kind[64];                /* operationType: "compute.instanceGroupManagers.resize" */
	char request_id[40];          /* the request's requestId, "" none */
	int64_t start_ns, done_ns;    /* on the cloud's clock */
	int64_t start_wall;           /* unix seconds */
	char error_code[48];          /* "" none */
	char error_message[200];
};

struct sim_gce;

/*
 * The GCE flavour over 'cloud' (borrowed; its groups match conf->groups
 * in order): sets itself as the cloud's namer, so create it before any
 * instance exists. 'conf' is borrowed and must outlive it. NULL with a
 * message (a bad machine type, too long a name, out of memory).
 */
struct sim_gce *sim_gce_new(struct sim_cloud *cloud, const struct sim_gce_conf *conf,
			    uint64_t seed, struct errbuf *err);

/* Records the starting instances as managed ones, sets each MIG's
 * targetSize to max(min, them) and creates up to it. Call once. */
void sim_gce_start(struct sim_gce *g);

/* Frees it; creations in flight finish without it. NULL is ignored. */
void sim_gce_free(struct sim_gce *g);

const struct sim_gce_conf *sim_gce_conf(const struct sim_gce *g);
struct sim_cloud *sim_gce_cloud(const struct sim_gce *g);

/* The built-in machine type named 'name', or NULL; the i-th (NULL past the end). */
const struct sim_gce_mtype *sim_gce_find_mtype(const char *name);
const struct sim_gce_mtype *sim_gce_mtype_at(size_t i);

/* Is 'name' an RFC 1035 label (1-63 of [a-z0-9-], a letter first, no '-' last)? */
bool sim_gce_valid_name(const char *name);

/* How GCE names a failure of kind 'e' on lastAttempt: a code and a message. */
void sim_gce_failure(enum provider_error e, const char *zone, char *code, size_t code_size,
		     char *msg, size_t msg_size);

/* ---- under the cloud's lock (sim_cloud_lock) ---- */

/* Group i's GCE side. */
const struct sim_gce_group *sim_gce_group(const struct sim_gce *g, size_t i);
/* The group whose MIG is 'mig' in zone or region 'where' (regional when
 * 'regional'), or -1. */
int sim_gce_find_mig(const struct sim_gce *g, const char *where, bool regional, const char *mig);
/* The group whose template is 'name' (its template_name, or one it rolled
 * to: see sim_gce_template_of), or -1. */
int sim_gce_find_template(const struct sim_gce *g, const char *name);
/* The instance template group i launches 'image' from, into out (len bytes):
 * its template_name for SIM_IMAGE_DEFAULT (a group that never rolled), else
 * "<template_name>-<image>" (an image fault rolls the MIG to a new
 * template). NULL or "" image: the group's image now. Lock held. */
void sim_gce_template_of(const struct sim_gce *g, size_t i, const char *image, char *out, size_t len);

/* MIG i's targetSize. */
int sim_gce_target_size(const struct sim_gce *g, size_t i);
/* MIG i's managed instances (DELETING ones included until gone): *n of
 * them, borrowed until the lock is released. */
const struct sim_gce_mi *sim_gce_managed(struct sim_gce *g, size_t i, size_t *n);
/* Counts of MIG i's managed instances by action (for currentActions). */
void sim_gce_actions(struct sim_gce *g, size_t i, int *none, int *creating, int *deleting);

/*
 * resize: targetSize becomes 'size' (0..1000): new managed instances get
 * names baseInstanceName-xxxx, the newest go when it shrinks.
 */
int sim_gce_resize(struct sim_gce *g, size_t i, int size, struct errbuf *err);

/*
 * createInstances: one managed instance per name (RFC 1035, not taken in
 * the project), targetSize up by n. All or nothing: -1 with GCE's message
 * and nothing done on a bad or taken name.
 */
int sim_gce_create(struct sim_gce *g, size_t i, const char *const *names, size_t n,
		   struct errbuf *err);

/*
 * deleteInstances by instance name: each one's instance stops and
 * targetSize drops by one. Names not in the MIG are skipped when 'skip'
 * (skipInstancesOnValidationError), else -1 and nothing is done.
 * Returns how many were deleted.
 */
int sim_gce_delete(struct sim_gce *g, size_t i, const char *const *names, size_t n, bool skip,
		   struct errbuf *err);

/* A new operation of MIG i (RUNNING for the scenario's operation time, or a
 * slow_call fault's delay), copied into 'out'. A requestId seen before
 * returns that operation instead, with true in *dup. */
void sim_gce_op_new(struct sim_gce *g, size_t i, const char *kind, const char *request_id,
		    struct sim_gce_op *out, bool *dup);
/* Fills 'out' with the operation named 'name'; false when unknown. */
bool sim_gce_op_get(struct sim_gce *g, const char *name, struct sim_gce_op *out);
/* The status of 'op' now. */
enum sim_gce_op_status sim_gce_op_status(const struct sim_gce *g, const struct sim_gce_op *op);

/* A fresh instance name baseInstanceName-xxxx for MIG i (not taken). */
void sim_gce_new_name(struct sim_gce *g, size_t i, char *out, size_t size);

#endif
