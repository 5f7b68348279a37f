/*
 * sim/cloud_aws: the AWS flavour of the simulated cloud — instance ids,
 * zones, private addresses and providerIDs as EC2 gives them, Auto Scaling
 * groups that converge to a desired capacity and record scaling
 * activities, fleet groups, instance types and launch templates. The wire
 * (XML, signatures) is sim/clouds/aws_face.c's; the machines stay sim/clouds/cloud.c's.
 */
#ifndef LUASCALE_SIM_CLOUD_AWS_H
#define LUASCALE_SIM_CLOUD_AWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"
#include "sim/clouds/cloud.h"
#include "sim/clouds/sqs.h"

enum sim_aws_mode {
	SIM_AWS_ASG,   /* an Auto Scaling group: SetDesiredCapacity, scaling activities */
	SIM_AWS_FLEET, /* a launch template launched with CreateFleet Type=instant */
};

/* An instance type (DescribeInstanceTypes). */
struct sim_aws_type {
	const char *name;             /* "m5.large" */
	int vcpus;
	int64_t memory_mib;
	int gpus;                     /* 0: none */
	const char *gpu_name;         /* "T4" */
	const char *gpu_manufacturer; /* "NVIDIA" */
	int64_t gpu_memory_mib;       /* per GPU */
	const char *arch;             /* "x86_64" (default) or "arm64" */
};

struct sim_aws_tag {
	const char *key;
	const char *value;
};

/* The AWS side of one node group (parallel to the scenario's groups). */
struct sim_aws_group {
	enum sim_aws_mode mode;
	const char **zones;           /* default: the region + "a" */
	size_t n_zones;
	const char **types;           /* instance types; default: the first known type */
	size_t n_types;
	const char *launch_template;  /* its name; default "<group>" */
	const char *image;            /* its version 1's AMI id; default SIM_IMAGE_DEFAULT */
	struct sim_aws_tag *tags;     /* extra ASG tags (e.g. node-template ones) */
	size_t n_tags;
};

/* The scenario's `aws:` section. Strings are borrowed (the scenario's arena). */
struct sim_aws_conf {
	const char *region;            /* default "us-east-1" */
	const char *account;           /* 12 digits, default "123456789012" */
	const char *cluster;           /* for the k8s.io/cluster-autoscaler/<cluster> tag; default "sim" */
	const char *access_key_id;     /* the accepted credentials (required) */
	const char *secret_access_key;
	const char *session_token;     /* NULL: requests carry none */
	const char *role;              /* the IMDS role name; default "luascale-node" */
	const char *container_token;   /* container credentials' Authorization; NULL: not served */
	bool imds_v2_only;             /* IMDSv1 GETs get 401 */
	int64_t credential_ttl_s;      /* Expiration of handed-out credentials, default 3600 */
	int64_t asg_retry_ns;          /* an ASG below its desired capacity retries after, default 10s */
	struct sim_aws_type *types;    /* extra instance types (the built-in table is always there) */
	size_t n_types;
	struct sim_aws_group *groups;  /* one per node group, in order */
	size_t n_groups;
	const char *interruption_queue;/* an SQS queue made at the start that gets the
					* interrupt faults' EventBridge events; NULL: none */
};

/* One scaling activity of an ASG. */
struct sim_aws_activity {
	char id[40];                  /* a UUID */
	size_t group;
	int64_t start_wall, end_wall; /* unix seconds; end -1 while in progress */
	const char *status;           /* "Successful", "Failed", "InProgress" */
	char description[160];
	char cause[400];
	char message[600];            /* "" unless failed */
};

struct sim_aws;

/*
 * The AWS flavour over 'cloud' (borrowed; its groups match conf->groups in
 * order): sets itself as the cloud's namer, so create it before any
 * instance exists. 'conf' is borrowed and must outlive it. NULL with a
 * message (a bad zone or type name, out of memory).
 */
struct sim_aws *sim_aws_new(struct sim_cloud *cloud, const struct sim_aws_conf *conf,
			    uint64_t seed, struct errbuf *err);

/* Starts each ASG's desired capacity at max(min, its instances now) and
 * launches up to it. Call once the starting nodes are added. */
void sim_aws_start(struct sim_aws *a);

/* Frees it; launches still in flight finish without it. NULL is ignored. */
void sim_aws_free(struct sim_aws *a);

const struct sim_aws_conf *sim_aws_conf(const struct sim_aws *a);

/* The account's SQS queues (sim/clouds/sqs.h; the AWS face serves them). */
struct sim_sqs *sim_aws_sqs(const struct sim_aws *a);
struct sim_cloud *sim_aws_cloud(const struct sim_aws *a);

/* ---- under the cloud's lock (sim_cloud_lock) ---- */

/* Group i's AWS side. */
const struct sim_aws_group *sim_aws_group(const struct sim_aws *a, size_t i);

/* The instance type named 'name', or NULL. */
const struct sim_aws_type *sim_aws_find_type(const struct sim_aws *a, const char *name);
/* Every known type (built-in then the scenario's): *n of them. */
const struct sim_aws_type *sim_aws_type_at(const struct sim_aws *a, size_t i, size_t *n);

/* The launch template's id ("lt-" + 17 hex) of group i. */
const char *sim_aws_template_id(const struct sim_aws *a, size_t i);
/* The group whose launch template is named 'name' or has id 'id' (either
 * may be NULL), or -1. */
int sim_aws_find_template(const struct sim_aws *a, const char *name, const char *id);

/* One version of a group's launch template. */
struct sim_aws_lt_version {
	char image[SIM_IMAGE_MAX];    /* its ImageId; "" when it names none */
	char description[256];        /* its VersionDescription */
	char token[129];              /* the ClientToken that made it, or "" */
	int64_t created_wall;         /* unix seconds */
};

/* Group i's launch template versions: *n of them (version k is
 * versions[k - 1]), the default's number in *dflt. Borrowed until the
 * lock is released. */
const struct sim_aws_lt_version *sim_aws_lt_versions(const struct sim_aws *a, size_t i, size_t *n,
						     size_t *dflt);

/* The version of group i's template that 'version' names ("$Default",
 * "$Latest" or a number; NULL or "": $Default), or 0 when there is none. */
size_t sim_aws_lt_version_find(const struct sim_aws *a, size_t i, const char *version);

/*
 * CreateLaunchTemplateVersion on group i's template: a new latest version
 * (its number in *number), a copy of version 'source' (0: none) with
 * 'image' (NULL: the source's), 'description' and ClientToken 'token'
 * (NULL: none). -1 with AWS's message when the template has as many
 * versions as it may hold.
 */
int sim_aws_lt_version_create(struct sim_aws *a, size_t i, size_t source, const char *image,
			      const char *description, const char *token, size_t *number,
			      struct errbuf *err);

/* The version of group i's template ClientToken 'token' made, or 0. */
size_t sim_aws_lt_version_by_token(const struct sim_aws *a, size_t i, const char *token);

/* ModifyLaunchTemplate SetDefaultVersion: version 'number' (one that
 * exists) is group i's default, and what its ASG launches from now on. */
void sim_aws_lt_set_default(struct sim_aws *a, size_t i, size_t number);

/* The launch template version instance 'in' was launched from (0: unknown). */
size_t sim_aws_instance_version(const struct sim_instance *in);

/* The subnet id of 'zone' ("subnet-" + 17 hex, the same for a zone always). */
void sim_aws_subnet(const char *zone, char *out, size_t size);
/* The zone of a subnet id among group i's zones, or NULL. */
const char *sim_aws_subnet_zone(const struct sim_aws *a, size_t i, const char *subnet);

/* ASG i's desired capacity (-1 for a fleet group). */
int sim_aws_desired(const struct sim_aws *a, size_t i);

/* Extra tags of instance 'in' (set at launch: the fleet's, the request's). */
const struct sim_aws_tag *sim_aws_instance_tags(const struct sim_instance *in, size_t *n);
/* The fleet id an instance came from, or NULL. */
const char *sim_aws_instance_fleet(const struct sim_instance *in);

/*
 * SetDesiredCapacity: 0, or -1 with AWS's ValidationError message (out of
 * the group's min and max, not an ASG). The group converges: launches or
 * terminates to reach it.
 */
int sim_aws_set_desired(struct sim_aws *a, size_t i, int desired, struct errbuf *err);

/*
 * TerminateInstanceInAutoScalingGroup: the instance stops now; desired
 * drops by one when 'decrement' (the group's min allowing), else a
 * replacement launches. Fills 'out' with the activity. 0, or -1 with
 * AWS's message (unknown instance, not in an ASG, below min).
 */
int sim_aws_terminate_in_asg(struct sim_aws *a, const char *id, bool decrement,
			     struct sim_aws_activity *out, struct errbuf *err);

/*
 * TerminateInstances of one instance: it stops now; an ASG's desired
 * capacity stays, so the group launches a replacement (as AWS does).
 * False when it was stopping or gone already.
 */
bool sim_aws_terminate(struct sim_aws *a, struct sim_instance *in);

/* ASG i's scaling activities, oldest first: *n of them, borrowed until the
 * lock is released. */
const struct sim_aws_activity *sim_aws_activities(const struct sim_aws *a, size_t i, size_t *n);

/* ---- a fleet launch ---- */

/* What CreateFleet passes to the namer through sim_launch_spec.arg. */
struct sim_aws_launch {
	const char *fleet_id;          /* "fleet-..." */
	const struct sim_aws_tag *tags;/* TagSpecification tags for instances */
	size_t n_tags;
	bool spot;                     /* DefaultTargetCapacityType spot */
	size_t version;                /* the launch template version it names (0: $Default) */
};

/* A new "fleet-" id (UUID-like) into 'out'. */
void sim_aws_new_fleet_id(struct sim_aws *a, char *out, size_t size);

/* A new request id / activity id (a UUID) into 'out' (37 bytes). */
void sim_aws_uuid(struct sim_aws *a, char out[37]);

#endif
