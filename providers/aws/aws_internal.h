/*
 * The AWS provider's shared insides: its state, the Auto Scaling group and
 * instance descriptions its files pass each other. Private to
 * providers/aws/aws*.c.
 */
#ifndef LUASCALE_AWS_INTERNAL_H
#define LUASCALE_AWS_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "log.h"
#include "providers/aws/aws.h"
#include "providers/aws/awsapi.h"
#include "providers/aws/credentials.h"
#include "providers/cloudhttp/cloudcall.h"
#include "providers/cloudhttp/memo.h"
#include "providers/provider.h"

struct groupcache;

#define AWS_TAG_ENABLED "k8s.io/cluster-autoscaler/enabled"
#define AWS_TAG_CLUSTER_PREFIX "k8s.io/cluster-autoscaler/"
#define AWS_TAG_TEMPLATE_PREFIX "k8s.io/cluster-autoscaler/node-template/"
#define AWS_TAG_GROUP "luascale.io/node-group"  /* on fleet instances */
#define AWS_TAG_CLUSTER "luascale.io/cluster"   /* on fleet instances, with a cluster name */

/* One node group as the provider manages it. */
struct aws_group {
	char name[64];           /* the engine's group name */
	char asg[256];           /* ASG mode: the Auto Scaling group's name */
	bool fleet;
	bool discovered;         /* found by tags, not named in the config */
	bool wants_template;     /* the config writes none: describe one */
	int cfg_min, cfg_max;    /* fleet groups: the config's limits */
	const struct config_aws_group *cfg; /* fleet settings; NULL for discovered */
};

struct aws_tag {
	char *key, *value;
};

struct aws_asg_instance {
	char id[32];
	char zone[64];
	char type[64];
	char state[40];          /* LifecycleState as AWS says it */
	enum instance_state st;
	bool warm;               /* in a warm pool: not a node */
	int64_t launched_wall;   /* EC2's LaunchTime (unix seconds), 0 unknown */
	char image[64];          /* EC2's ImageId (an AMI id), "" unknown */
};

/* One DescribeAutoScalingGroups member. */
struct aws_asg {
	char name[256];
	int min, max, desired;
	struct aws_asg_instance *inst;
	size_t n_inst;
	struct aws_tag *tags;
	size_t n_tags;
	char zones[8][64];
	size_t n_zones;
	char lt_id[64], lt_name[128], lt_version[32]; /* LaunchTemplate or the mixed policy's */
	char override_type[64];  /* the mixed instances policy's first instance type */
	bool override_lt;        /* an override names a launch template of its own */
	bool mixed;              /* a MixedInstancesPolicy: it may launch other types than its
				  * template names (overrides, InstanceRequirements) */
	char launch_config[256]; /* a launch configuration name, when that is what it uses */
};

/* What an instance type offers (DescribeInstanceTypes). */
struct aws_itype {
	char name[64];
	int vcpus;
	int64_t memory_mib;
	int gpus;
	int enis, ips_per_eni;
	char arch[16];           /* "amd64" or "arm64" */
};

/* A launch template version as read (aws_lt_read), and its read. */
struct aws_lt_cache {
	char key[256];    /* id or name, '@', version */
	char type[64];    /* its instanceType, "" when it names none */
	char image[64];   /* its imageId (ResolveAlias), "" when it names none */
	int64_t at_ns;    /* read at, on the provider's clock */
	int64_t read_wall;/* the same, unix seconds */
	uint64_t listing; /* the listing that read it */
	bool failed;      /* the read failed (kept for the rest of that listing) */
};

struct aws_prov {
	struct aws_api api;
	struct cloudhttp *http;
	struct aws_credchain *creds;
	struct clock *clock;
	const struct logger *log;
	const atomic_bool *cancel;
	const struct config *config;
	int64_t launch_wait_ns, poll_ns;
	struct pricing *pricing;  /* the cloud's prices (aws_pricing.c); NULL when off */
	char pricing_url[1024];   /* the Price List API */
	char pricing_region[32];  /* its signing region */

	size_t n_config_groups;   /* the config's groups: the first of the cache's table */
	bool discovery;
	char cluster[128];

	pthread_mutex_t mu;       /* the listing count, token sequence, launch facts, offerings left out */
	struct memo *itypes;      /* described instance types (struct aws_itype), kept */
	struct memo *lts;         /* launch template versions read (struct aws_lt_cache) */
	uint64_t listing;         /* listings begun (aws_list_groups), under mu */
	uint64_t seq;             /* ClientTokens */
	struct provider_turns *turns; /* one size write of a group at a time; instance claims */
	struct aws_launched {     /* ASG instances' LaunchTime and ImageId, by id (sorted),
				   * from the last list (neither ever changes) */
		char id[32];
		int64_t wall;
		char image[64];
	} *launched;
	size_t n_launched;
	struct cloudcall_counts calls; /* by action (aws_provider_calls) */
	struct groupcache *cache; /* the groups (the config's, then discovered ones); each one's
				   * last good view, for an ASG described badly */
	struct aws_offering_out { /* offerings out of capacity a moment ago (aws_launch.c; under mu) */
		char type[64];
		char zone[64];
		bool spot;
		int64_t until_ns; /* on the provider's clock */
	} *unavailable;
	size_t n_unavailable;
	struct aws_sqs *sqs;      /* the interruption queue (aws_interrupt.c); NULL: none */
};

#define AWS_PROV(p) ((struct aws_prov *)(p)->impl)

/* Counts a call of 'action' (for aws_provider_calls). */
void aws_count_call(struct aws_prov *ap, const char *action);

/* aws_call with the call counted and the service's bucket of 'p'. */
int aws_do(struct provider *p, enum aws_service svc, bool mutating, struct aws_query *f,
	   struct xmltree_doc **doc, struct provider_status *st);

/* Describes the ASGs named 'names' (any number: 100 a call), or with
 * names NULL, those tagged for discovery. Fills *out (aws_asgs_free).
 * 0, or -1 with 'st'. */
int aws_describe_asgs(struct provider *p, const char *const *names, size_t n_names,
		      struct aws_asg **out, size_t *n_out, struct provider_status *st);
void aws_asgs_free(struct aws_asg *a, size_t n);

/* The newest scaling activity of 'asg' that started at or after 'since'
 * (unix seconds) and is over: when it failed, its class and message in
 * 'st'; else st->code is OK (also when the activities cannot be read). */
void aws_failed_activity(struct provider *p, const char *asg, int64_t since,
			 struct provider_status *st);

/* What DescribeInstances says of an instance and never changes: its
 * launch time, its image, its private DNS name (0 and "" when unread). */
struct aws_instance_facts {
	int64_t wall;
	char image[64];
	char dns[256];
};

/* DescribeInstances of ids[0..n) (at most 1000): their facts into out[]
 * (zeroed first; a failed call is logged and leaves them so). */
void aws_describe_instances(struct provider *p, const char *const *ids, size_t n, struct aws_instance_facts *out);

/* "aws:///<zone>/<id>" into out. */
void aws_provider_id(const char *zone, const char *id, char *out, size_t len);

/* Fills 't' for a new node of group 'g' (an ASG's 'a', or NULL for a
 * fleet group): instance type, resources as allocatable, labels, taints
 * and extended resources from the node-template tags. Best effort: what
 * the cloud does not say stays 0, and a failed describe is logged. */
void aws_describe_template(struct provider *p, const struct aws_group *g, const struct aws_asg *a,
			   struct provider_template *t);

/* A fleet group of several instance types: a template for each into
 * pg->types (DescribeInstanceTypes, cached), in the config's order;
 * nothing for any other group. A type that cannot be described keeps only
 * its name. 0, or -1 out of memory. */
int aws_describe_types(struct provider *p, const struct aws_group *g, struct provider_group *pg);

/* Only the instance type of a new node of group 'g' into t->instance_type
 * (what aws_describe_template finds, without describing the type), for a
 * group whose config writes its template: its price needs the type. */
void aws_template_type(struct provider *p, const struct aws_group *g, const struct aws_asg *a,
		       struct provider_template *t);

/* Launch template 'id' or 'name' (the other "" or NULL) at 'version'
 * ("" or NULL: $Default), as DescribeLaunchTemplateVersions with
 * ResolveAlias=true says it, into *out (type and image "" when it names
 * none): from the cache when read less than 10 minutes ago; 'fresh' reads
 * it again unless this listing did. 1 when the cloud was asked now, 0
 * when the cache answered; a failed read is logged once, kept for the
 * rest of the listing (so the type and the image ask once), and -1. */
int aws_lt_read(struct provider *p, const char *id, const char *name, const char *version,
		bool fresh, struct aws_lt_cache *out);

/* What a group's instances run, for aws_outdated_judge: images[i] is
 * instance i's AMI (EC2's imageId, "" unknown); types[i] its instance type
 * ("" unknown), or types NULL when the group may launch other types than
 * its template names (a mixed instances policy, a fleet's list). */
struct aws_running {
	const char (*images)[64];
	const char (*types)[64];
};

/* Judges instances in[0..n) of a group launched from launch template
 * 'lt_id' or 'lt_name' (either "" or NULL; both: nothing is judged) at
 * 'version' ("" or NULL: $Default), running what 'run' says, launched at
 * in[i].launched_wall: each in[i].outdated gets why it is not what the
 * template launches now ("instance type m5.large is not launch template lt
 * version $Default's m5.xlarge", "image ami-1 is not launch template lt
 * version $Default's ami-2", both joined by "; " when both differ), or ""
 * when it is the same or either side is unknown (a failed read, an
 * unresolved SSM alias, a template naming no type). The template is read
 * (aws_lt_read) only when an instance's AMI or type is known, and again
 * once when an instance running something else was launched after the
 * cached read (the template may have changed). */
void aws_outdated_judge(struct provider *p, const char *lt_id, const char *lt_name,
			const char *version, struct provider_instance *in, const struct aws_running *run,
			size_t n);

/* Is 's' an AMI id ("ami-" and hex digits)? */
bool aws_ami_id(const char *s);


/* Launch and terminate (aws_launch.c). */
void aws_launch(struct provider *p, const char *group, int count, provider_instance_cb on_instance,
		provider_done_cb on_done, void *ctx);
/* aws_launch() on 'types' only (n_types 0: all): each must be one of the
 * fleet group's instance_types; an ASG group takes none. */
void aws_launch_types(struct provider *p, const char *group, int count, const char *const *types,
		      size_t n_types, provider_instance_cb on_instance, provider_done_cb on_done,
		      void *ctx);
void aws_terminate(struct provider *p, const char *group, const char *const *ids, size_t n,
		   provider_done_cb on_done, void *ctx);

/* The group named 'name' (a copy, under mu), or -1. */
int aws_group_get(struct aws_prov *ap, const char *name, struct aws_group *out);

/* Waits 'ns' on the provider's clock; -1 when cancelled first. */
int aws_wait(struct aws_prov *ap, int64_t ns);

/* Interruption notices (aws_interrupt.c). aws_interrupt_init reads
 * 'queue' (an SQS queue URL; NULL or "": none) into ap->sqs: 0, or -1 out
 * of memory. aws_interruptions is the provider's interruptions op: the
 * messages the last call returned are deleted first, then up to 50 are
 * received (ReceiveMessage, no wait); those that are not interruptions
 * are deleted at once with a log line, the rest returned (provider_id and
 * group from the last listing) and deleted on the next call. */
int aws_interrupt_init(struct aws_prov *ap, const char *queue);
void aws_interrupt_free(struct aws_prov *ap);
int aws_interruptions(struct provider *p, struct provider_interruption **out, size_t *n,
		      struct provider_status *st);

#endif
