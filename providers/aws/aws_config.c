/*
 * providers/aws/aws_config: reads provider.aws, each group's aws: section
 * and the LUASCALE_PROVIDER_AWS_* variables into the config
 * (docs/providers/aws.md, docs/configuration.md), and checks them once
 * the whole config is read. Only src/config_parse.h's readers: whatever
 * reads a config links this file, never the AWS provider.
 */
#include "providers/aws/aws_config.h"

#include <string.h>

#include "arena.h"
#include "config_parse.h"

/* Where provider.aws.auto_discovery was set (the file or the environment),
 * for the check that needs the cluster's name. */
struct scratch {
	struct config_loc discovery;
};

static bool ok_zone(const char *s) { return cfg_chars_ok(s, "-", true) && s[0] != '-'; }
static bool ok_region(const char *s) { return ok_zone(s) && strchr(s, '-'); }
static bool ok_subnet(const char *s)
{
	return !strncmp(s, "subnet-", 7) && s[7] && cfg_chars_ok(s + 7, "", true);
}
static bool ok_instance_type(const char *s)
{
	const char *dot = strchr(s, '.');

	return dot && dot != s && dot[1] && !strchr(dot + 1, '.') && cfg_chars_ok(s, "-.", true);
}
static bool ok_template(const char *s) { return cfg_chars_ok(s, "().-/_", false); }
static bool ok_template_version(const char *s)
{
	return !strcmp(s, "$Default") || !strcmp(s, "$Latest") ||
	       (s[0] >= '1' && s[0] <= '9' && cfg_chars_ok(s, "", true) && !strpbrk(s, "abcdefghijklmnopqrstuvwxyz"));
}
static bool ok_cluster_name(const char *s) { return cfg_chars_ok(s, "-_", false) && s[0] != '-' && s[0] != '_'; }

static const struct config_str_rule rule_asg = { cfg_ok_printable, 255, "an Auto Scaling group name (1 to 255 printable characters)" };
static const struct config_str_rule rule_zone = { ok_zone, 64, "an availability zone (like \"us-east-1a\")" };
static const struct config_str_rule rule_region = { ok_region, 32, "an AWS region (like \"us-east-1\")" };
static const struct config_str_rule rule_subnet = { ok_subnet, 32, "a subnet id (like \"subnet-0123456789abcdef0\")" };
static const struct config_str_rule rule_itype = { ok_instance_type, 64, "an EC2 instance type (like \"m5.large\")" };
static const struct config_str_rule rule_template = { ok_template, 128, "a launch template name or id (letters, digits and ().-/_, up to 128)" };
static const struct config_str_rule rule_template_version = { ok_template_version, 20, "a launch template version: \"$Default\", \"$Latest\" or a number" };
static const struct config_str_rule rule_cluster = { ok_cluster_name, 100, "a cluster name (letters, digits, '-' and '_', up to 100)" };

/* placements: [{zone: us-east-1a, subnet: subnet-...}, ...] */
static int parse_placements(struct config_ctx *x, const struct ytree_node *m, struct config_aws_group *a)
{
	static const char *const keys[] = { "zone", "subnet", NULL };
	const struct ytree_node *l = cfg_map_get(m, "placements"), *c;
	const char **zones, **subnets;
	size_t old, i = 0, j;
	int rc = 0;

	if (!l)
		return 0;
	old = ytree_path_push_key(cfg_path(x), "placements");
	if (cfg_expect_kind(x, l, YTREE_SEQ)) {
		ytree_path_pop(cfg_path(x), old);
		return -1;
	}
	zones = arena_calloc(cfg_arena(x), l->n + 1, sizeof(*zones));
	subnets = arena_calloc(cfg_arena(x), l->n + 1, sizeof(*subnets));
	if (!zones || !subnets) {
		ytree_path_pop(cfg_path(x), old);
		return cfg_oom(x);
	}
	for (c = l->first; c && !rc; c = c->next, i++) {
		size_t o2 = ytree_path_push_index(cfg_path(x), i);

		zones[i] = NULL;
		subnets[i] = "";
		rc = cfg_expect_kind(x, c, YTREE_MAP) || cfg_check_keys(x, c, keys) ||
		     cfg_field(x, c, "zone", cfg_dec_checked, &zones[i], &rule_zone, NULL) ||
		     cfg_field(x, c, "subnet", cfg_dec_checked, &subnets[i], &rule_subnet, NULL) ? -1 : 0;
		if (!rc && !zones[i])
			rc = cfg_fail_node(x, c, "zone is required: every placement names its availability zone, so each instance's zone is known");
		for (j = 0; !rc && j < i; j++)
			if (!strcmp(zones[j], zones[i]) && !strcmp(subnets[j], subnets[i]))
				rc = cfg_fail_node(x, c, "the same placement is listed twice");
		ytree_path_pop(cfg_path(x), o2);
	}
	ytree_path_pop(cfg_path(x), old);
	a->zones = zones;
	a->subnets = subnets;
	a->n_placements = i;
	return rc;
}

/* capacity_type: on-demand, spot, or [spot, on-demand] (spot first, on-demand
 * for what spot cannot give). */
static int parse_capacity_type(struct config_ctx *x, const struct ytree_node *m, struct config_aws_group *a)
{
	static const char *const capacity[] = { "on-demand", "spot", NULL };
	const struct ytree_node *l = cfg_map_get(m, "capacity_type"), *c;
	int cap[2] = { 0, 0 };
	size_t old, i = 0;
	int rc = 0;

	if (!l || l->kind != YTREE_SEQ) {
		rc = cfg_field(x, m, "capacity_type", cfg_dec_choice, &cap[0], capacity, NULL);
		a->spot = cap[0] == 1;
		return rc;
	}
	old = ytree_path_push_key(cfg_path(x), "capacity_type");
	if (l->n < 1 || l->n > 2)
		rc = cfg_fail_node(x, l, "capacity_type lists 1 or 2 capacity types (spot, on-demand), got %zu",
				   (size_t)l->n);
	for (c = l->first; c && !rc; c = c->next, i++) {
		size_t o2 = ytree_path_push_index(cfg_path(x), i);
		struct config_val v = cfg_val_of_node(x, c);

		rc = cfg_dec_choice(x, &v, &cap[i], capacity);
		if (!rc && i == 1 && cap[1] == cap[0])
			rc = cfg_fail_node(x, c, "\"%s\" is listed twice", capacity[cap[1]]);
		if (!rc && i == 1 && cap[0] == 0)
			rc = cfg_fail_node(x, c,
					   "[on-demand, spot] is not supported: on-demand never falls back to spot; write [spot, on-demand] for spot with on-demand for what spot cannot give");
		ytree_path_pop(cfg_path(x), o2);
	}
	ytree_path_pop(cfg_path(x), old);
	a->spot = cap[0] == 1;
	a->on_demand_fallback = !rc && i == 2;
	return rc;
}

static int parse_group(struct config_ctx *x, const struct ytree_node *m, const struct node_group *g,
		       struct config_group_extra *e)
{
	struct config_aws_group *a = &e->aws;

	static const char *const keys[] = { "mode", "asg", "launch_template", "launch_template_version",
					    "instance_types", "placements", "allocation_strategy",
					    "capacity_type", NULL };
	static const char *const modes[] = { "asg", "fleet", NULL };
	static const char *const strategies[] = { "lowest-price", "prioritized", NULL };
	int mode = 0, strategy = 0;

	e->aws_set = true;
	if (cfg_expect_kind(x, m, YTREE_MAP) || cfg_check_keys(x, m, keys))
		return -1;
	a->asg = g->name;
	a->launch_template_version = "$Default";
	if (cfg_field(x, m, "mode", cfg_dec_choice, &mode, modes, NULL) ||
	    cfg_field(x, m, "asg", cfg_dec_checked, &a->asg, &rule_asg, NULL) ||
	    cfg_field(x, m, "launch_template", cfg_dec_checked, &a->launch_template, &rule_template, NULL) ||
	    cfg_field(x, m, "launch_template_version", cfg_dec_checked, &a->launch_template_version,
		      &rule_template_version, NULL) ||
	    cfg_field(x, m, "allocation_strategy", cfg_dec_choice, &strategy, strategies, NULL) ||
	    parse_capacity_type(x, m, a) ||
	    cfg_parse_checked_list(x, m, "instance_types", &rule_itype, &a->instance_types,
				   &a->n_instance_types) ||
	    parse_placements(x, m, a))
		return -1;
	a->fleet = mode == 1;
	a->prioritized = strategy == 1;
	if (a->fleet) {
		if (cfg_map_get(m, "asg"))
			return cfg_fail_node(x, cfg_map_get(m, "asg"),
					     "asg names an Auto Scaling group: a fleet group (mode: fleet) has none");
		if (!a->launch_template)
			return cfg_fail_node(x, m, "launch_template is required for a fleet group (mode: fleet)");
		if (!a->n_instance_types)
			return cfg_fail_node(x, m, "instance_types is required for a fleet group: at least one EC2 instance type");
		if (!a->n_placements)
			return cfg_fail_node(x, m, "placements is required for a fleet group: at least one {zone, subnet}");
	} else {
		static const char *const fleet_only[] = { "launch_template", "launch_template_version",
							  "instance_types", "placements",
							  "allocation_strategy", "capacity_type", NULL };
		const char *const *k;

		for (k = fleet_only; *k; k++)
			if (cfg_map_get(m, *k))
				return cfg_fail_node(x, cfg_map_get(m, *k),
						     "%s is for fleet groups (mode: fleet); an Auto Scaling group takes its launch settings from the cloud",
						     *k);
	}
	return 0;
}

/* An SQS queue URL: an endpoint (cfg_ok_endpoint) whose path is
 * /<12-digit account>/<queue name: 1-80 of letters, digits, '-', '_',
 * a FIFO queue's ending in ".fifo">. */
static bool ok_sqs_queue(const char *s)
{
	const char *host = !strncmp(s, "https://", 8) ? s + 8 : s + 7, *path, *name;
	size_t n;

	if (!cfg_ok_endpoint(s) || !(path = strchr(host, '/')))
		return false;
	if (strspn(path + 1, "0123456789") != 12 || path[13] != '/')
		return false;
	name = path + 14;
	n = strlen(name);
	if (n > 5 && !strcmp(name + n - 5, ".fifo"))
		n -= 5;
	return n >= 1 && n <= 80 &&
	       strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") == n &&
	       strlen(name) <= 80;
}

static const struct config_str_rule rule_sqs_queue = { ok_sqs_queue, 512,
	"an SQS queue URL: https://sqs.<region>.amazonaws.com/<12-digit account>/<queue name>" };

static int parse_aws_endpoints(struct config_ctx *x, const struct ytree_node *m)
{
	static const char *const keys[] = { "ec2", "autoscaling", "sts", "sqs", NULL };
	struct config_aws *a = &cfg_config(x)->aws;

	if (cfg_expect_kind(x, m, YTREE_MAP) || cfg_check_keys(x, m, keys))
		return -1;
	return cfg_field(x, m, "ec2", cfg_dec_checked, &a->endpoint_ec2, &cfg_rule_endpoint, NULL) ||
	       cfg_field(x, m, "autoscaling", cfg_dec_checked, &a->endpoint_autoscaling, &cfg_rule_endpoint, NULL) ||
	       cfg_field(x, m, "sts", cfg_dec_checked, &a->endpoint_sts, &cfg_rule_endpoint, NULL) ||
	       cfg_field(x, m, "sqs", cfg_dec_checked, &a->endpoint_sqs, &cfg_rule_endpoint, NULL) ? -1 : 0;
}

static int parse_section(struct config_ctx *x, const struct ytree_node *m)
{
	struct scratch *sc = cfg_scratch(x, &config_cloud_aws, sizeof(*sc));

	static const char *const keys[] = { "region", "cluster_name", "auto_discovery", "endpoints",
					    "interruption_queue", NULL };
	struct config_aws *a = &cfg_config(x)->aws;

	if (!sc)
		return cfg_oom(x);
	if (cfg_expect_kind(x, m, YTREE_MAP) || cfg_check_keys(x, m, keys))
		return -1;
	return cfg_field(x, m, "region", cfg_dec_checked, &a->region, &rule_region, NULL) ||
	       cfg_field(x, m, "interruption_queue", cfg_dec_checked, &a->interruption_queue, &rule_sqs_queue,
			 NULL) ||
	       cfg_field(x, m, "cluster_name", cfg_dec_checked, &a->cluster_name, &rule_cluster, NULL) ||
	       cfg_field(x, m, "auto_discovery", cfg_dec_bool, &a->auto_discovery, NULL, &sc->discovery) ||
	       cfg_section(x, m, "endpoints", parse_aws_endpoints) ? -1 : 0;
}


static int env(struct config_ctx *x)
{
	struct config *c = cfg_config(x);
	struct scratch *sc = cfg_scratch(x, &config_cloud_aws, sizeof(*sc));

	if (!sc)
		return cfg_oom(x);
	return cfg_env_field(x, "LUASCALE_PROVIDER_AWS_REGION", cfg_dec_checked, &c->aws.region, &rule_region, NULL) ||
	       cfg_env_field(x, "LUASCALE_PROVIDER_AWS_CLUSTER_NAME", cfg_dec_checked, &c->aws.cluster_name,
			     &rule_cluster, NULL) ||
	       cfg_env_field(x, "LUASCALE_PROVIDER_AWS_AUTO_DISCOVERY", cfg_dec_bool, &c->aws.auto_discovery, NULL,
			     &sc->discovery) ||
	       cfg_env_field(x, "LUASCALE_PROVIDER_AWS_INTERRUPTION_QUEUE", cfg_dec_checked,
			     &c->aws.interruption_queue, &rule_sqs_queue, NULL) ? -1 : 0;
}

/* provider.kind is aws: auto_discovery has the cluster's name; a group
 * without an aws: section is an ASG of its name; a fleet group's instances
 * are told apart by the cluster's name; no two groups are one ASG. */
static int check(struct config_ctx *x)
{
	struct config *c = cfg_config(x);
	struct scratch *sc = cfg_scratch(x, &config_cloud_aws, sizeof(*sc));
	size_t i, j;

	if (!sc)
		return cfg_oom(x);
	if (c->aws.auto_discovery && !c->aws.cluster_name)
		return cfg_fail_loc(x, &sc->discovery,
				    "auto_discovery needs provider.aws.cluster_name: the ASGs tagged k8s.io/cluster-autoscaler/<cluster_name> are found");
	for (i = 0; i < c->n_groups; i++) {
		struct config_aws_group *a = &c->group_extra[i].aws;

		if (!c->group_extra[i].aws_set) {
			a->asg = c->groups[i].name; /* an ASG of the group's name */
			a->launch_template_version = "$Default";
		}
		if (a->fleet && !c->aws.cluster_name)
			return cfg_fail_loc(x, cfg_group_section_loc(x, i),
					    "node group \"%s\" is a fleet group (mode: fleet): set provider.aws.cluster_name "
					    "(or LUASCALE_PROVIDER_AWS_CLUSTER_NAME); its instances are tagged luascale.io/cluster=<cluster_name> "
					    "and only those are its own, so a cluster with a group of the same name in this account and region "
					    "is not counted",
					    c->groups[i].name);
		for (j = 0; !a->fleet && j < i; j++)
			if (!c->group_extra[j].aws.fleet && !strcmp(c->group_extra[j].aws.asg, a->asg))
				return cfg_fail_loc(x, cfg_group_section_loc(x, i),
						    "node groups \"%s\" and \"%s\" are the same Auto Scaling group \"%s\"",
						    c->groups[j].name, c->groups[i].name, a->asg);
	}
	return 0;
}

/* An Auto Scaling group says its own max; a fleet group does not. */
static bool max_from_cloud(const struct config_group_extra *e)
{
	return !e->aws.fleet;
}

static bool str_differs(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") != 0;
}

static bool list_differs(const char *const *a, const char *const *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (str_differs(a[i], b[i]))
			return true;
	return false;
}

bool config_aws_differs(const struct config_aws *a, const struct config_aws *b)
{
	return str_differs(a->region, b->region) || str_differs(a->cluster_name, b->cluster_name) ||
	       a->auto_discovery != b->auto_discovery || str_differs(a->endpoint_ec2, b->endpoint_ec2) ||
	       str_differs(a->endpoint_autoscaling, b->endpoint_autoscaling) ||
	       str_differs(a->endpoint_sts, b->endpoint_sts) || str_differs(a->endpoint_sqs, b->endpoint_sqs) ||
	       str_differs(a->interruption_queue, b->interruption_queue);
}

bool config_aws_group_differs(const struct config_aws_group *a, const struct config_aws_group *b)
{
	return a->fleet != b->fleet || str_differs(a->asg, b->asg) ||
	       str_differs(a->launch_template, b->launch_template) ||
	       str_differs(a->launch_template_version, b->launch_template_version) ||
	       a->n_instance_types != b->n_instance_types ||
	       list_differs(a->instance_types, b->instance_types, a->n_instance_types) ||
	       a->n_placements != b->n_placements || list_differs(a->zones, b->zones, a->n_placements) ||
	       list_differs(a->subnets, b->subnets, a->n_placements) || a->prioritized != b->prioritized ||
	       a->spot != b->spot || a->on_demand_fallback != b->on_demand_fallback;
}

/* EC2's launch calls are limited far below the generic default:
 * CreateFleet and RunInstances at about 2 a second, 5 saved up. */
const struct config_cloud config_cloud_aws = {
	.kind = "aws",
	.parse_section = parse_section,
	.parse_group = parse_group,
	.env = env,
	.check = check,
	.max_from_cloud = max_from_cloud,
	.default_qps = 2,
	.default_burst = 5,
};
