/*
 * providers/aws/aws_config: the AWS parts of the luascale config, as the
 * config holds them (struct config's aws member, each group's
 * config_group_extra.aws): provider.aws, a group's aws: section and the
 * LUASCALE_PROVIDER_AWS_* variables. Read by aws_config.c through
 * src/config_parse.h; it knows nothing else of the AWS provider, so what
 * reads a config does not link it.
 */
#ifndef LUASCALE_PROVIDERS_AWS_CONFIG_H
#define LUASCALE_PROVIDERS_AWS_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

/* A node group's settings for the AWS provider (the group's "aws:" section). */
struct config_aws_group {
	bool fleet;                      /* mode: fleet (EC2 CreateFleet); else an Auto Scaling group */
	const char *asg;                 /* asg mode: the ASG's name, default the group's name */
	const char *launch_template;     /* fleet: a launch template name, or its id "lt-..." */
	const char *launch_template_version; /* fleet: "$Default" (default), "$Latest" or a number */
	const char *const *instance_types;   /* fleet: in priority order, at least one */
	size_t n_instance_types;
	const char *const *zones;        /* fleet: placements, at least one: a zone each ... */
	const char *const *subnets;      /* ... and its subnet id, or "" (the template's) */
	size_t n_placements;
	bool prioritized;                /* allocation_strategy: prioritized (else lowest-price) */
	bool spot;                       /* capacity_type: spot first (else on-demand) */
	bool on_demand_fallback;         /* capacity_type: [spot, on-demand]: on-demand for
					  * what spot cannot give */
};

/* The provider.aws section. NULL strings when unset. */
struct config_aws {
	const char *region;              /* "": AWS_REGION, the profile or the instance's */
	const char *cluster_name;        /* the k8s.io/cluster-autoscaler/<cluster> tag's */
	bool auto_discovery;             /* also manage every ASG tagged for the cluster */
	const char *endpoint_ec2;        /* endpoint overrides (VPC endpoints, FIPS, the simulator) */
	const char *endpoint_autoscaling;
	const char *endpoint_sts;
	const char *endpoint_sqs;
	const char *interruption_queue;  /* an SQS queue URL EventBridge feeds interruption
					  * events into; NULL: none read */
};

struct config_cloud;
extern const struct config_cloud config_cloud_aws;

/* Whether a reread config's provider.aws, or a group's aws: section,
 * differs from the running one's in what the provider was made from. */
bool config_aws_differs(const struct config_aws *a, const struct config_aws *b);
bool config_aws_group_differs(const struct config_aws_group *a, const struct config_aws_group *b);

#endif
