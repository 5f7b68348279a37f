/*
 * providers/aws: construction, the groups (config, tag discovery), the
 * Auto Scaling group and fleet listing, and providerID mapping. Launch and
 * terminate are aws_launch.c's; new-node templates aws_template.c's;
 * whether an instance runs its template's image aws_image.c's; one call
 * through the provider's buckets aws_call.c's; the wire awsapi.c's.
 */
#include "providers/aws/aws.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/client.h"
#include "k8sname.h"
#include "providers/aws/aws_internal.h"
#include "providers/aws/aws_pricing.h"
#include "providers/aws/awserr.h"
#include "providers/aws/profile.h"
#include "providers/cloudhttp/cloudhttp.h"
#include "providers/cloudhttp/groupcache.h"
#include "providers/pricing.h"
#include "providers/registry.h"

#define NAMES_PER_CALL 100
#define MAX_PAGES 10000
#define ACTIVITY_WINDOW_S (30 * 60)

void aws_provider_id(const char *zone, const char *id, char *out, size_t len)
{
	snprintf(out, len, "aws:///%s/%s", zone, id);
}

int aws_group_get(struct aws_prov *ap, const char *name, struct aws_group *out)
{
	return groupcache_group(ap->cache, NULL, name, out);
}

/* ---- describing Auto Scaling groups ---- */

/* Frees what one description owns. */
static void asg_clear(struct aws_asg *a)
{
	size_t j;

	for (j = 0; j < a->n_tags; j++) {
		free(a->tags[j].key);
		free(a->tags[j].value);
	}
	free(a->tags);
	free(a->inst);
	a->tags = NULL;
	a->inst = NULL;
	a->n_tags = a->n_inst = 0;
}

void aws_asgs_free(struct aws_asg *a, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		asg_clear(&a[i]);
	free(a);
}

static enum instance_state lifecycle_state(const char *s, bool *warm)
{
	*warm = !strncmp(s, "Warmed:", 7);
	if (!strncmp(s, "Pending", 7))
		return INSTANCE_PENDING;
	if (!strcmp(s, "InService") || !strcmp(s, "Standby") || !strcmp(s, "EnteringStandby"))
		return INSTANCE_RUNNING;
	if (!strcmp(s, "Terminated") || !strcmp(s, "Detached"))
		return INSTANCE_GONE;
	if (!strncmp(s, "Terminating", 11) || !strcmp(s, "Detaching"))
		return INSTANCE_STOPPING;
	return INSTANCE_PENDING; /* a state AWS adds later: there, not ready */
}

static bool ok_id(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);

	if (strncmp(s, prefix, n) || !s[n])
		return false;
	for (s += n; *s; s++)
		if (!isxdigit((unsigned char)*s))
			return false;
	return true;
}

static bool ok_zone_text(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '-')
			return false;
	return true;
}

/* One member of a DescribeAutoScalingGroups answer. -1 with 'st' when malformed. */
static int parse_asg(const struct xmltree_node *m, struct aws_asg *a, struct provider_status *st)
{
	const struct xmltree_node *set, *it;
	int64_t v;
	size_t n;

	memset(a, 0, sizeof(*a));
	if (xmltree_copy(m, "AutoScalingGroupName", a->name, sizeof(a->name)) < 0 || !a->name[0]) {
		cloudcall_status(st, PROVIDER_TRANSIENT, "DescribeAutoScalingGroups: a group without a name (line %d)",
				 m->line);
		return -1;
	}
	if (xmltree_int64(m, "MinSize", &v) < 0 || v < 0 || v > 1000000 || (a->min = (int)v, 0) ||
	    xmltree_int64(m, "MaxSize", &v) < 0 || v < a->min || v > 1000000 || (a->max = (int)v, 0) ||
	    xmltree_int64(m, "DesiredCapacity", &v) < 0 || v < 0 || v > 1000000) {
		cloudcall_status(st, PROVIDER_TRANSIENT,
				 "DescribeAutoScalingGroups: group %.64s: MinSize, MaxSize or DesiredCapacity missing or out of range",
				 a->name);
		return -1;
	}
	a->desired = (int)v;
	set = xmltree_find(m, "Instances");
	n = xmltree_count(set, "member");
	a->inst = n ? calloc(n, sizeof(*a->inst)) : NULL;
	if (n && !a->inst)
		goto oom;
	for (it = xmltree_first(set, "member"); it; it = xmltree_next(it)) {
		struct aws_asg_instance *in = &a->inst[a->n_inst];

		if (xmltree_copy(it, "InstanceId", in->id, sizeof(in->id)) < 0 || !ok_id(in->id, "i-") ||
		    xmltree_copy(it, "AvailabilityZone", in->zone, sizeof(in->zone)) < 0 ||
		    !ok_zone_text(in->zone) ||
		    xmltree_copy(it, "LifecycleState", in->state, sizeof(in->state)) < 0) {
			cloudcall_status(st, PROVIDER_TRANSIENT,
					 "DescribeAutoScalingGroups: group %.64s: an instance without a valid InstanceId, AvailabilityZone or LifecycleState (line %d)",
					 a->name, it->line);
			return -1;
		}
		xmltree_copy(it, "InstanceType", in->type, sizeof(in->type));
		in->st = lifecycle_state(in->state, &in->warm);
		a->n_inst++;
	}
	set = xmltree_find(m, "Tags");
	n = xmltree_count(set, "member");
	a->tags = n ? calloc(n, sizeof(*a->tags)) : NULL;
	if (n && !a->tags)
		goto oom;
	for (it = xmltree_first(set, "member"); it; it = xmltree_next(it)) {
		const char *k, *val;
		size_t kl, vl;

		if (xmltree_trimmed(it, "Key", &k, &kl) < 0)
			continue;
		if (xmltree_trimmed(it, "Value", &val, &vl) < 0) {
			val = "";
			vl = 0;
		}
		a->tags[a->n_tags].key = strndup(k, kl);
		a->tags[a->n_tags].value = strndup(val, vl);
		if (!a->tags[a->n_tags].key || !a->tags[a->n_tags].value) {
			free(a->tags[a->n_tags].key);
			free(a->tags[a->n_tags].value);
			goto oom;
		}
		a->n_tags++;
	}
	for (it = xmltree_first(xmltree_find(m, "AvailabilityZones"), "member");
	     it && a->n_zones < sizeof(a->zones) / sizeof(a->zones[0]); it = xmltree_next(it))
		if (xmltree_copy(it, NULL, a->zones[a->n_zones], sizeof(a->zones[0])) == 0)
			a->n_zones++;
	xmltree_copy(m, "LaunchTemplate/LaunchTemplateId", a->lt_id, sizeof(a->lt_id));
	xmltree_copy(m, "LaunchTemplate/LaunchTemplateName", a->lt_name, sizeof(a->lt_name));
	xmltree_copy(m, "LaunchTemplate/Version", a->lt_version, sizeof(a->lt_version));
	if (!a->lt_id[0] && !a->lt_name[0]) {
		const char *spec = "MixedInstancesPolicy/LaunchTemplate/LaunchTemplateSpecification";
		const struct xmltree_node *s = xmltree_find(m, spec);

		xmltree_copy(s, "LaunchTemplateId", a->lt_id, sizeof(a->lt_id));
		xmltree_copy(s, "LaunchTemplateName", a->lt_name, sizeof(a->lt_name));
		xmltree_copy(s, "Version", a->lt_version, sizeof(a->lt_version));
	}
	a->mixed = xmltree_find(m, "MixedInstancesPolicy") != NULL;
	for (it = xmltree_first(xmltree_find(m, "MixedInstancesPolicy/LaunchTemplate/Overrides"), "member");
	     it; it = xmltree_next(it)) {
		if (!a->override_type[0])
			xmltree_copy(it, "InstanceType", a->override_type, sizeof(a->override_type));
		/* instances of this type launch from another template */
		if (xmltree_find(it, "LaunchTemplateSpecification"))
			a->override_lt = true;
	}
	xmltree_copy(m, "LaunchConfigurationName", a->launch_config, sizeof(a->launch_config));
	return 0;
oom:
	cloudcall_status(st, PROVIDER_TRANSIENT, "out of memory");
	return -1;
}

/* An ASG a listing skipped: the answer described it badly. */
struct bad_asg {
	char name[256];          /* "" when the answer gave it no name */
	char why[512];
};

struct bad_asgs {
	struct bad_asg *v;
	size_t n;
};

/* Appends the members of one answer page to *out; with 'bad', a member
 * parse_asg refuses is noted there and skipped, else it fails the page. */
static int take_page(const struct xmltree_doc *d, struct aws_asg **out, size_t *n, size_t *cap,
		     char *next, size_t next_len, struct bad_asgs *bad, struct provider_status *st)
{
	const struct xmltree_node *res = xmltree_find(xmltree_root(d), "DescribeAutoScalingGroupsResult");
	const struct xmltree_node *it;

	if (!res) {
		cloudcall_status(st, PROVIDER_TRANSIENT, "DescribeAutoScalingGroups: the answer has no DescribeAutoScalingGroupsResult");
		return -1;
	}
	for (it = xmltree_first(xmltree_find(res, "AutoScalingGroups"), "member"); it; it = xmltree_next(it)) {
		if (*n == *cap) {
			size_t nc = *cap ? *cap * 2 : 16;
			struct aws_asg *g = realloc(*out, nc * sizeof(*g));

			if (!g) {
				cloudcall_status(st, PROVIDER_TRANSIENT, "out of memory");
				return -1;
			}
			*out = g;
			*cap = nc;
		}
		if (parse_asg(it, &(*out)[*n], st) < 0) {
			struct bad_asg *nb;

			asg_clear(&(*out)[*n]);
			if (!bad)
				return -1;
			nb = realloc(bad->v, (bad->n + 1) * sizeof(*nb));
			if (!nb) {
				cloudcall_status(st, PROVIDER_TRANSIENT, "out of memory");
				return -1;
			}
			bad->v = nb;
			snprintf(nb[bad->n].name, sizeof(nb[0].name), "%s", (*out)[*n].name);
			snprintf(nb[bad->n].why, sizeof(nb[0].why), "%.*s", (int)sizeof(nb[0].why) - 1, st->message);
			bad->n++;
			memset(st, 0, sizeof(*st));
			continue;
		}
		(*n)++;
	}
	if (xmltree_copy(res, "NextToken", next, next_len) < 0)
		next[0] = '\0';
	return 0;
}

/* aws_describe_asgs, with the members the answer describes badly noted
 * in 'bad' and skipped (NULL: they fail the call). */
static int describe_asgs(struct provider *p, const char *const *names, size_t n_names,
			 struct aws_asg **out, size_t *n_out, struct bad_asgs *bad,
			 struct provider_status *st)
{
	struct aws_prov *ap = AWS_PROV(p);
	struct aws_asg *all = NULL;
	size_t n = 0, cap = 0, from = 0;
	char next[4096];

	*out = NULL;
	*n_out = 0;
	do {
		int pages = 0;

		next[0] = '\0';
		do {
			struct aws_query f;
			struct xmltree_doc *d = NULL;
			size_t i;
			int rc;

			aws_query_init(&f, AWS_SERVICE_AUTOSCALING, "DescribeAutoScalingGroups");
			if (names) {
				for (i = 0; i < NAMES_PER_CALL && from + i < n_names; i++)
					aws_query_addf(&f, names[from + i], "AutoScalingGroupNames.member.%zu", i + 1);
			} else {
				char key[256];

				snprintf(key, sizeof(key), AWS_TAG_CLUSTER_PREFIX "%s", ap->cluster);
				aws_query_add(&f, "Filters.member.1.Name", "tag-key");
				aws_query_add(&f, "Filters.member.1.Values.member.1", AWS_TAG_ENABLED);
				aws_query_add(&f, "Filters.member.2.Name", "tag-key");
				aws_query_add(&f, "Filters.member.2.Values.member.1", key);
			}
			aws_query_add_int(&f, "MaxRecords", 100);
			if (next[0])
				aws_query_add(&f, "NextToken", next);
			rc = aws_do(p, AWS_SERVICE_AUTOSCALING, false, &f, &d, st);
			aws_query_free(&f);
			if (rc == 0)
				rc = take_page(d, &all, &n, &cap, next, sizeof(next), bad, st);
			xmltree_free(d);
			if (rc < 0) {
				aws_asgs_free(all, n);
				return -1;
			}
			if (++pages > MAX_PAGES) {
				aws_asgs_free(all, n);
				cloudcall_status(st, PROVIDER_TRANSIENT, "DescribeAutoScalingGroups: more than %d pages: the NextToken does not end",
						 MAX_PAGES);
				return -1;
			}
		} while (next[0]);
		from += NAMES_PER_CALL;
	} while (names && from < n_names);
	*out = all;
	*n_out = n;
	return 0;
}

int aws_describe_asgs(struct provider *p, const char *const *names, size_t n_names,
		      struct aws_asg **out, size_t *n_out, struct provider_status *st)
{
	return describe_asgs(p, names, n_names, out, n_out, NULL, st);
}

/* ---- the failure of a launch the ASG is still working on ---- */

void aws_failed_activity(struct provider *p, const char *asg, int64_t since,
			 struct provider_status *st)
{
	struct aws_query f;
	struct xmltree_doc *d = NULL;
	const struct xmltree_node *it;
	struct provider_status cst;

	st->code = PROVIDER_OK;
	st->message[0] = '\0';
	aws_query_init(&f, AWS_SERVICE_AUTOSCALING, "DescribeScalingActivities");
	aws_query_add(&f, "AutoScalingGroupName", asg);
	aws_query_add_int(&f, "MaxRecords", 10);
	if (aws_do(p, AWS_SERVICE_AUTOSCALING, false, &f, &d, &cst) < 0) {
		aws_query_free(&f);
		log_at(AWS_PROV(p)->log, LOG_WARN, clock_wall(AWS_PROV(p)->clock),
		       "aws: cannot read the scaling activities of %.128s: %s", asg, cst.message);
		return;
	}
	aws_query_free(&f);
	/* newest first: the first one that started in the window and is over decides */
	for (it = xmltree_first(xmltree_find(xmltree_root(d), "DescribeScalingActivitiesResult/Activities"),
			       "member");
	     it; it = xmltree_next(it)) {
		char status[32], start[64], msg[600];
		int64_t t;

		if (xmltree_copy(it, "StatusCode", status, sizeof(status)) < 0 ||
		    xmltree_copy(it, "StartTime", start, sizeof(start)) < 0 || kube_parse_time(start, &t) < 0)
			continue;
		if (t < since)
			break;
		if (strcmp(status, "Failed") && strcmp(status, "Cancelled") && strcmp(status, "Successful"))
			continue; /* still under way */
		if (!strcmp(status, "Successful"))
			break;
		if (xmltree_copy(it, "StatusMessage", msg, sizeof(msg)) < 0 || !msg[0])
			xmltree_copy(it, "Cause", msg, sizeof(msg));
		cloudcall_status(st, aws_activity_class(msg), "%s", msg[0] ? msg : "a scaling activity failed");
		break;
	}
	xmltree_free(d);
}

/* ---- launch times of ASG instances ---- */

#define LAUNCH_IDS_PER_CALL 200

static int cmp_launched(const void *a, const void *b)
{
	return strcmp(((const struct aws_launched *)a)->id, ((const struct aws_launched *)b)->id);
}

/* An instance's launchTime, imageId and privateDnsName from a
 * DescribeInstances item (what cannot be read stays 0 and ""). */
static void read_facts(const struct xmltree_node *it, struct aws_instance_facts *out)
{
	char when[64];
	int64_t t;

	if (xmltree_copy(it, "launchTime", when, sizeof(when)) == 0 && kube_parse_time(when, &t) == 0 && t > 0)
		out->wall = t;
	if (xmltree_copy(it, "imageId", out->image, sizeof(out->image)) < 0 || !aws_ami_id(out->image))
		out->image[0] = '\0';
	xmltree_copy(it, "privateDnsName", out->dns, sizeof(out->dns));
}

void aws_describe_instances(struct provider *p, const char *const *ids, size_t n, struct aws_instance_facts *out)
{
	struct provider_status st;
	struct aws_query f;
	struct xmltree_doc *d = NULL;
	const struct xmltree_node *r, *it;
	size_t i;

	memset(out, 0, n * sizeof(*out));
	if (!n)
		return;
	aws_query_init(&f, AWS_SERVICE_EC2, "DescribeInstances");
	for (i = 0; i < n; i++)
		aws_query_addf(&f, ids[i], "InstanceId.%zu", i + 1);
	if (aws_do(p, AWS_SERVICE_EC2, false, &f, &d, &st) < 0) {
		aws_query_free(&f);
		log_at(AWS_PROV(p)->log, LOG_WARN, clock_wall(AWS_PROV(p)->clock),
		       "aws: cannot describe %zu instance(s) (launch times, images, DNS names): %s", n, st.message);
		return;
	}
	aws_query_free(&f);
	for (r = xmltree_first(xmltree_find(xmltree_root(d), "reservationSet"), "item"); r; r = xmltree_next(r))
		for (it = xmltree_first(xmltree_find(r, "instancesSet"), "item"); it; it = xmltree_next(it)) {
			const char *id = xmltree_text(it, "instanceId");

			for (i = 0; i < n; i++)
				if (!strcmp(ids[i], id))
					read_facts(it, &out[i]);
		}
	xmltree_free(d);
}

/* EC2's launchTime and imageId of the instances of the ASGs a1[0..n1)
 * and a2[0..n2) (DescribeInstances for the ids not known from an earlier
 * list; best effort: what cannot be read stays 0 and ""), into each
 * instance's launched_wall and image; the cache then holds exactly these
 * instances. */
static void fill_launch_times(struct provider *p, struct aws_asg *a1, size_t n1, struct aws_asg *a2, size_t n2)
{
	struct aws_prov *ap = AWS_PROV(p);
	struct aws_asg_instance **all = NULL;
	struct aws_launched *next = NULL, key, *hit;
	const char **ask = NULL;
	struct aws_instance_facts *got = NULL;
	size_t i, j, total = 0, k = 0, n_ask = 0;

	for (i = 0; i < n1; i++)
		total += a1[i].n_inst;
	for (i = 0; i < n2; i++)
		total += a2[i].n_inst;
	if (!total)
		goto swap;
	all = calloc(total, sizeof(*all));
	next = calloc(total, sizeof(*next));
	ask = calloc(total, sizeof(*ask));
	got = calloc(total, sizeof(*got));
	if (!all || !next || !ask || !got)
		goto out;
	for (i = 0; i < n1; i++)
		for (j = 0; j < a1[i].n_inst; j++)
			all[k++] = &a1[i].inst[j];
	for (i = 0; i < n2; i++)
		for (j = 0; j < a2[i].n_inst; j++)
			all[k++] = &a2[i].inst[j];
	/* what the last list knew (an instance's launch time and image never change) */
	pthread_mutex_lock(&ap->mu);
	for (i = 0; i < total; i++) {
		snprintf(key.id, sizeof(key.id), "%s", all[i]->id);
		hit = ap->n_launched ? bsearch(&key, ap->launched, ap->n_launched, sizeof(*hit), cmp_launched) : NULL;
		if (hit) {
			all[i]->launched_wall = hit->wall;
			snprintf(all[i]->image, sizeof(all[i]->image), "%s", hit->image);
		} else {
			ask[n_ask++] = all[i]->id;
		}
	}
	pthread_mutex_unlock(&ap->mu);
	for (i = 0; i < n_ask; i += LAUNCH_IDS_PER_CALL)
		aws_describe_instances(p, ask + i, n_ask - i < LAUNCH_IDS_PER_CALL ? n_ask - i : LAUNCH_IDS_PER_CALL,
				       got + i);
	for (i = 0, j = 0, k = 0; i < total; i++) {
		if (j < n_ask && ask[j] == all[i]->id) {
			all[i]->launched_wall = got[j].wall;
			snprintf(all[i]->image, sizeof(all[i]->image), "%s", got[j].image);
			j++;
		}
		if (!all[i]->launched_wall)
			continue; /* asked again next time */
		snprintf(next[k].id, sizeof(next[k].id), "%s", all[i]->id);
		snprintf(next[k].image, sizeof(next[k].image), "%s", all[i]->image);
		next[k++].wall = all[i]->launched_wall;
	}
	qsort(next, k, sizeof(*next), cmp_launched);
swap:
	pthread_mutex_lock(&ap->mu);
	free(ap->launched);
	ap->launched = next;
	ap->n_launched = k;
	next = NULL;
	pthread_mutex_unlock(&ap->mu);
out:
	free(all);
	free(next);
	free(ask);
	free(got);
}

/* ---- fleet groups: their instances by tag ---- */

/* One page of DescribeInstances for fleet group g's instances (by its
 * tags, live states), after 'next' ("" first). 0 with *d, or -1 with st. */
static int fleet_page(struct provider *p, const struct aws_group *g, const char *next,
		      struct xmltree_doc **d, struct provider_status *st)
{
	struct aws_prov *ap = AWS_PROV(p);
	struct aws_query f;
	int k = 1, rc;

	aws_query_init(&f, AWS_SERVICE_EC2, "DescribeInstances");
	aws_query_addf(&f, "tag:" AWS_TAG_GROUP, "Filter.%d.Name", k);
	aws_query_addf(&f, g->name, "Filter.%d.Value.1", k++);
	if (ap->cluster[0]) {
		aws_query_addf(&f, "tag:" AWS_TAG_CLUSTER, "Filter.%d.Name", k);
		aws_query_addf(&f, ap->cluster, "Filter.%d.Value.1", k++);
	}
	aws_query_addf(&f, "instance-state-name", "Filter.%d.Name", k);
	aws_query_addf(&f, "pending", "Filter.%d.Value.1", k);
	aws_query_addf(&f, "running", "Filter.%d.Value.2", k);
	aws_query_addf(&f, "stopping", "Filter.%d.Value.3", k);
	aws_query_addf(&f, "shutting-down", "Filter.%d.Value.4", k);
	aws_query_add_int(&f, "MaxResults", 1000);
	if (next[0])
		aws_query_add(&f, "NextToken", next);
	rc = aws_do(p, AWS_SERVICE_EC2, false, &f, d, st);
	aws_query_free(&f);
	return rc;
}

/* The instances of a fleet group as they are read, with their AMIs. */
struct fleet_list {
	struct provider_group *pg;
	char (*images)[64];       /* parallel to pg->instances */
	size_t cap;
};

/* Appends DescribeInstances item 'it' (skipped when malformed). 0, or -1 out of memory. */
static int fleet_instance(struct fleet_list *fl, const struct aws_group *g, const struct xmltree_node *it)
{
	struct provider_group *pg = fl->pg;
	struct provider_instance *in;
	struct aws_instance_facts facts;
	char id[32], zone[64], state[32];

	if (xmltree_copy(it, "instanceId", id, sizeof(id)) < 0 || !ok_id(id, "i-") ||
	    xmltree_copy(it, "placement/availabilityZone", zone, sizeof(zone)) < 0 || !ok_zone_text(zone) ||
	    xmltree_copy(it, "instanceState/name", state, sizeof(state)) < 0)
		return 0;
	if (pg->n_instances == fl->cap) {
		size_t nc = fl->cap ? fl->cap * 2 : 16;
		struct provider_instance *ni = realloc(pg->instances, nc * sizeof(*ni));
		char(*nimg)[64];

		if (!ni)
			return -1;
		pg->instances = ni;
		nimg = realloc(fl->images, nc * sizeof(*nimg));
		if (!nimg)
			return -1;
		fl->images = nimg;
		fl->cap = nc;
	}
	memset(&facts, 0, sizeof(facts));
	read_facts(it, &facts);
	snprintf(fl->images[pg->n_instances], sizeof(fl->images[0]), "%s", facts.image);
	in = &pg->instances[pg->n_instances++];
	memset(in, 0, sizeof(*in));
	snprintf(in->id, sizeof(in->id), "%s", id);
	snprintf(in->group, sizeof(in->group), "%s", g->name);
	aws_provider_id(zone, id, in->provider_id, sizeof(in->provider_id));
	in->state = !strcmp(state, "pending") ? INSTANCE_PENDING :
		    !strcmp(state, "running") ? INSTANCE_RUNNING : INSTANCE_STOPPING;
	in->launched_wall = facts.wall;
	return 0;
}

/* A fleet group's instances (DescribeInstances by its tags) into pg, each
 * judged against the launch template its CreateFleet calls name (the
 * config's). 0, or -1 with st. */
static int describe_fleet(struct provider *p, const struct aws_group *g, struct provider_group *pg,
			  struct provider_status *st)
{
	struct fleet_list fl = {pg, NULL, 0};
	const char *lt = g->cfg ? g->cfg->launch_template : NULL;
	bool by_id = lt && !strncmp(lt, "lt-", 3);
	char next[4096] = "";
	int pages = 0, rc = -1;

	do {
		struct xmltree_doc *d = NULL;
		const struct xmltree_node *r, *it;

		if (fleet_page(p, g, next, &d, st) < 0)
			goto out;
		for (r = xmltree_first(xmltree_find(xmltree_root(d), "reservationSet"), "item"); r; r = xmltree_next(r))
			for (it = xmltree_first(xmltree_find(r, "instancesSet"), "item"); it; it = xmltree_next(it))
				if (fleet_instance(&fl, g, it) < 0) {
					xmltree_free(d);
					cloudcall_status(st, PROVIDER_TRANSIENT, "out of memory");
					goto out;
				}
		if (xmltree_copy(xmltree_root(d), "nextToken", next, sizeof(next)) < 0)
			next[0] = '\0';
		xmltree_free(d);
		if (++pages > MAX_PAGES) {
			cloudcall_status(st, PROVIDER_TRANSIENT, "DescribeInstances: the nextToken does not end");
			goto out;
		}
	} while (next[0]);
	/* a fleet launches the config's list of types: only its image is judged here */
	aws_outdated_judge(p, by_id ? lt : NULL, by_id ? NULL : lt,
			   g->cfg ? g->cfg->launch_template_version : NULL, pg->instances,
			   &(struct aws_running){(const char(*)[64])fl.images, NULL}, pg->n_instances);
	rc = 0;
out:
	free(fl.images);
	return rc;
}

/* ---- list_groups ---- */

/* A node group name for a discovered ASG: lowercase, other characters '-',
 * at most 63; "" when nothing is left. */
static void discovered_name(const char *asg, char *out, size_t len)
{
	size_t i, n = 0;

	for (i = 0; asg[i] && n + 1 < len && n < 63; i++) {
		unsigned char c = (unsigned char)asg[i];

		out[n++] = isalnum(c) ? (char)tolower(c) : (c == '.' ? '.' : '-');
	}
	while (n && !isalnum((unsigned char)out[n - 1]))
		n--;
	out[n] = '\0';
	for (i = 0; out[i] && !isalnum((unsigned char)out[i]); i++)
		;
	if (i)
		memmove(out, out + i, strlen(out + i) + 1);
}

/* Fills pg from an ASG; an instance on another AMI than its launch template
 * launches now is outdated, and so is one of another instance type when
 * the ASG launches only its template's type (no mixed instances policy). */
static int asg_group(struct provider *p, const struct aws_group *g, const struct aws_asg *a,
		     struct provider_group *pg, int64_t now, struct provider_status *st)
{
	char(*images)[64], (*types)[64];
	size_t i, live = 0;

	snprintf(pg->name, sizeof(pg->name), "%s", g->name);
	pg->min = a->min;
	pg->max = a->max;
	pg->cloud_sized = true;
	pg->members_by_id = true;
	pg->target = a->desired;
	pg->instances = a->n_inst ? calloc(a->n_inst, sizeof(*pg->instances)) : NULL;
	images = a->n_inst ? calloc(a->n_inst, sizeof(*images)) : NULL;
	types = a->n_inst ? calloc(a->n_inst, sizeof(*types)) : NULL;
	if (a->n_inst && (!pg->instances || !images || !types)) {
		free(images);
		free(types);
		cloudcall_status(st, PROVIDER_TRANSIENT, "out of memory");
		return -1;
	}
	for (i = 0; i < a->n_inst; i++) {
		const struct aws_asg_instance *in = &a->inst[i];
		struct provider_instance *o;

		if (in->warm)
			continue;
		o = &pg->instances[pg->n_instances++];
		snprintf(o->id, sizeof(o->id), "%s", in->id);
		snprintf(o->group, sizeof(o->group), "%s", g->name);
		aws_provider_id(in->zone, in->id, o->provider_id, sizeof(o->provider_id));
		o->state = in->st;
		o->launched_wall = in->launched_wall;
		snprintf(images[pg->n_instances - 1], sizeof(images[0]), "%s", in->image);
		snprintf(types[pg->n_instances - 1], sizeof(types[0]), "%s", in->type);
		if (in->st == INSTANCE_PENDING || in->st == INSTANCE_RUNNING)
			live++;
	}
	/* a mixed policy whose overrides name other templates: no one image to compare with */
	if (!a->override_lt)
		aws_outdated_judge(p, a->lt_id, a->lt_name, a->lt_version, pg->instances,
				   &(struct aws_running){(const char(*)[64])images,
							 a->mixed ? NULL : (const char(*)[64])types},
				   pg->n_instances);
	free(images);
	free(types);
	if (a->desired > (int)live) {
		struct provider_status as;

		/* instances owed: a failed activity means they are not coming */
		aws_failed_activity(p, a->name, now - ACTIVITY_WINDOW_S, &as);
		if (as.code != PROVIDER_OK) {
			log_at(AWS_PROV(p)->log, LOG_WARN, now,
			       "aws: group %s (ASG %s) wants %d instances and has %d: its last scaling activity failed (%s: %s); counting only the instances that exist",
			       g->name, a->name, a->desired, (int)live, provider_error_str(as.code), as.message);
			pg->target = (int)live;
		}
	}
	if (g->wants_template)
		aws_describe_template(p, g, a, &pg->tmpl);
	else
		aws_template_type(p, g, a, &pg->tmpl);
	return 0;
}

/* Group 'g', whose ASG the answer described badly ('why'): its last good
 * view, stale, into 'pg' (0), or nothing (-1); logged once per reason. */
static int stale_view(struct aws_prov *ap, const struct aws_group *g, const char *why,
		      struct provider_group *pg, int64_t now)
{
	bool changed;
	int rc = groupcache_recall(ap->cache, g->name, why, pg, &changed);

	if (changed)
		log_at(ap->log, LOG_WARN, now,
		       "aws: node group %s: its Auto Scaling group %.128s is skipped: %s; %s", g->name, g->asg, why,
		       rc == 0 ? "it keeps the last view read well, marked stale, until the ASG reads well again"
			       : "no earlier view of it: it is not listed until the ASG reads well");
	return rc;
}

static int aws_list_groups(struct provider *p, struct provider_group **groups, size_t *n,
			   struct provider_status *st)
{
	struct aws_prov *ap = AWS_PROV(p);
	struct aws_asg *named = NULL, *found = NULL;
	size_t n_named = 0, n_found = 0, i, j, k = 0, n_names = 0, cap;
	const char **names = NULL;
	struct provider_group *out = NULL;
	struct aws_group *gs = NULL, *ng;
	struct bad_asgs bad = {NULL, 0};
	size_t n_gs, n_bad_named;
	int64_t now = clock_wall(ap->clock);

	*groups = NULL;
	*n = 0;
	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&ap->mu);
	ap->listing++; /* a launch template read failing is not asked again in this one */
	pthread_mutex_unlock(&ap->mu);
	names = calloc(ap->n_config_groups + 1, sizeof(*names));
	gs = groupcache_groups_copy(ap->cache, ap->n_config_groups, 0);
	if (!names || !gs)
		goto oom;
	for (i = 0; i < ap->n_config_groups; i++)
		if (!gs[i].fleet)
			names[n_names++] = gs[i].asg;
	/* an ASG the answer describes badly is skipped, not the whole list */
	if (n_names && describe_asgs(p, names, n_names, &named, &n_named, &bad, st) < 0)
		goto fail;
	n_bad_named = bad.n;
	if (ap->discovery && describe_asgs(p, NULL, 0, &found, &n_found, &bad, st) < 0)
		goto fail;
	for (i = 0; i < bad.n; i++) {
		struct provider_group none;
		bool changed;

		if (bad.v[i].name[0])
			continue;
		/* nameless: no group to keep a view for; said once */
		groupcache_recall(ap->cache, "", bad.v[i].why, &none, &changed);
		if (changed)
			log_at(ap->log, LOG_WARN, now, "aws: an Auto Scaling group of the answer is skipped: %s",
			       bad.v[i].why);
	}
	/* when each instance was launched: the ASG does not say, EC2 does */
	fill_launch_times(p, named, n_named, found, n_found);

	/* the groups: the config's, then every tagged ASG the config does not name */
	n_gs = ap->n_config_groups;
	ng = realloc(gs, (n_gs + n_found + bad.n + 1) * sizeof(*gs)); /* names[] is done with */
	if (!ng)
		goto oom;
	gs = ng;
	/* the tagged ASGs, and the tagged ones described badly (their groups keep their views) */
	for (i = 0; i < n_found + bad.n - n_bad_named; i++) {
		struct aws_group *g = &gs[n_gs];
		const char *asg = i < n_found ? found[i].name : bad.v[n_bad_named + i - n_found].name;

		if (!asg[0])
			continue;
		for (j = 0; j < n_gs && (gs[j].fleet || strcmp(gs[j].asg, asg)); j++)
			;
		if (j < n_gs)
			continue; /* named in the config (or found twice) */
		memset(g, 0, sizeof(*g));
		discovered_name(asg, g->name, sizeof(g->name));
		for (j = 0; j < n_gs && strcmp(gs[j].name, g->name); j++)
			;
		if (!g->name[0] || !k8sname_valid_dns_subdomain(g->name) || j < n_gs) {
			log_at(ap->log, LOG_WARN, now,
			       "aws: the tagged ASG %.128s is not managed: no node group name can be made of its name that is unique and valid",
			       asg);
			continue;
		}
		snprintf(g->asg, sizeof(g->asg), "%s", asg);
		g->discovered = true;
		g->wants_template = true;
		n_gs++;
	}

	cap = n_gs;
	out = calloc(cap + 1, sizeof(*out));
	if (!out)
		goto oom;
	for (i = 0; i < n_gs; i++) {
		const struct aws_group *g = &gs[i];
		struct provider_group *pg = &out[k];

		if (g->fleet) {
			snprintf(pg->name, sizeof(pg->name), "%s", g->name);
			pg->min = g->cfg_min;
			pg->max = g->cfg_max;
			pg->members_by_id = true;
			if (describe_fleet(p, g, pg, st) < 0) {
				k++;
				goto fail;
			}
			for (j = 0; j < pg->n_instances; j++)
				if (pg->instances[j].state != INSTANCE_STOPPING)
					pg->target++;
			if (g->wants_template)
				aws_describe_template(p, g, NULL, &pg->tmpl);
			else
				aws_template_type(p, g, NULL, &pg->tmpl);
			if (aws_describe_types(p, g, pg) < 0) {
				k++;
				goto oom;
			}
			groupcache_keep(ap->cache, pg, now);
			k++;
			continue;
		}
		{
			const struct aws_asg *a = NULL;
			const struct bad_asg *b = NULL;

			for (j = 0; j < bad.n && !b; j++)
				if (!strcmp(bad.v[j].name, g->asg))
					b = &bad.v[j];
			if (b) {
				if (stale_view(ap, g, b->why, pg, now) == 0)
					k++;
				continue;
			}
			for (j = 0; j < n_named && !a; j++)
				if (!strcmp(named[j].name, g->asg))
					a = &named[j];
			for (j = 0; j < n_found && !a; j++)
				if (!strcmp(found[j].name, g->asg))
					a = &found[j];
			if (!a) {
				log_at(ap->log, LOG_WARN, now,
				       "aws: node group %s: the Auto Scaling group %.128s does not exist (or these credentials may not see it)",
				       g->name, g->asg);
				continue;
			}
			if (asg_group(p, g, a, pg, now, st) < 0) {
				k++;
				goto fail;
			}
			groupcache_keep(ap->cache, pg, now);
			k++;
		}
	}
	/* remember where each instance is, for map_node and interruptions */
	groupcache_keep_instances(ap->cache, out, k);
	groupcache_groups_take(ap->cache, gs, n_gs);
	free(names);
	free(bad.v);
	aws_asgs_free(named, n_named);
	aws_asgs_free(found, n_found);
	*groups = out;
	*n = k;
	return 0;
oom:
	cloudcall_status(st, PROVIDER_TRANSIENT, "out of memory");
fail:
	provider_groups_free(out, k);
	free(gs);
	free(names);
	free(bad.v);
	aws_asgs_free(named, n_named);
	aws_asgs_free(found, n_found);
	return -1;
}

/* ---- map_node ---- */

static int aws_map_node(struct provider *p, const char *provider_id, char *group, size_t group_len,
			char *instance, size_t instance_len)
{
	struct aws_prov *ap = AWS_PROV(p);
	const char *id;

	if (strncmp(provider_id, "aws:///", 7))
		return -1;
	id = strrchr(provider_id + 7, '/');
	if (!id || !ok_id(id + 1, "i-") || strlen(id + 1) > 31 /* far longer than any instance id */ ||
	    groupcache_instance(ap->cache, id + 1, group, group_len, NULL, 0, NULL) < 0)
		return -1;
	snprintf(instance, instance_len, "%s", id + 1);
	return 0;
}

/* ---- life cycle ---- */

static void aws_free(struct provider *p)
{
	struct aws_prov *ap;

	if (!p)
		return;
	ap = p->impl;
	if (ap) {
		pricing_free(ap->pricing); /* after a refresh in flight */
		aws_interrupt_free(ap);
		aws_credchain_free(ap->creds);
		cloudhttp_free(ap->http);
		memo_free(ap->itypes);
		memo_free(ap->lts);
		free(ap->launched);
		free(ap->unavailable);
		groupcache_free(ap->cache);
		provider_turns_free(ap->turns);
		cloudcall_counts_destroy(&ap->calls);
		pthread_mutex_destroy(&ap->mu);
		free(ap);
	}
	cloudcall_buckets_free(p);
	free(p);
}

static const struct provider_ops aws_ops = {
	.kind = "aws",
	.list_groups = aws_list_groups,
	.launch = aws_launch,
	.launch_types = aws_launch_types,
	.terminate = aws_terminate,
	.map_node = aws_map_node,
	.prices = aws_prices,
	.price_failures = aws_price_failures,
	.interruptions = aws_interruptions,
	.free = aws_free,
};

struct provider *aws_provider_new(const struct aws_provider_opts *o, struct errbuf *err)
{
	const struct config *c = o->config;
	struct aws_credchain_opts co;
	struct aws_endpoint_overrides ov;
	struct aws_resolved_endpoints ep;
	struct provider_limits lim;
	struct aws_group *gs;
	struct provider *p = calloc(1, sizeof(*p));
	struct aws_prov *ap = calloc(1, sizeof(*ap));
	const char *from = NULL;
	struct errbuf e;
	size_t i;

	if (!p || !ap) {
		free(p);
		free(ap);
		errbuf_set(err, "aws: out of memory");
		return NULL;
	}
	p->ops = &aws_ops;
	p->impl = ap;
	pthread_mutex_init(&ap->mu, NULL);
	cloudcall_counts_init(&ap->calls);
	ap->clock = o->clock ? o->clock : clock_real();
	ap->turns = provider_turns_new();
	ap->cache = groupcache_new(&(struct groupcache_opts){ .cloud = "aws", .backing = "Auto Scaling group", .log = o->log,
							      .clock = ap->clock, GROUPCACHE_TABLE(struct aws_group) });
	ap->itypes = memo_new(&(struct memo_opts){ .value_size = sizeof(struct aws_itype) });
	ap->lts = memo_new(&(struct memo_opts){ .value_size = sizeof(struct aws_lt_cache) });
	if (!ap->turns || !ap->cache || !ap->itypes || !ap->lts) {
		errbuf_set(err, "aws: out of memory");
		goto fail;
	}
	ap->log = o->log;
	ap->cancel = o->cancel;
	ap->config = c;
	ap->launch_wait_ns = (o->launch_wait_ms > 0 ? o->launch_wait_ms : 5 * 60 * 1000) * CLOCK_NS_PER_MS;
	ap->poll_ns = (o->poll_ms > 0 ? o->poll_ms : 2000) * CLOCK_NS_PER_MS;
	ap->discovery = c->aws.auto_discovery;
	snprintf(ap->cluster, sizeof(ap->cluster), "%s", c->aws.cluster_name ? c->aws.cluster_name : "");

	if (cloudcall_buckets_new(p, ap->clock, c) < 0) {
		provider_limits_from(&lim, c);
		errbuf_set(err, "aws: bad rate limits (qps %.3g burst %d, read_qps %.3g read_burst %d)",
			   lim.mutating_qps, lim.mutating_burst, lim.read_qps, lim.read_burst);
		goto fail;
	}

	ap->http = cloudcall_http_new("aws", ap->clock, o->log, o->ca_file, 5, o->cancel, err);
	if (!ap->http)
		goto fail;

	memset(&ov, 0, sizeof(ov));
	ov.url[AWS_SERVICE_EC2] = c->aws.endpoint_ec2;
	ov.url[AWS_SERVICE_AUTOSCALING] = c->aws.endpoint_autoscaling;
	ov.url[AWS_SERVICE_STS] = c->aws.endpoint_sts;
	ov.url[AWS_SERVICE_SQS] = c->aws.endpoint_sqs;
	memset(&co, 0, sizeof(co));
	co.env = o->env;
	co.home = o->home;
	co.region = c->aws.region && *c->aws.region ? c->aws.region : NULL;
	co.endpoints = &ov;
	co.http = ap->http;
	co.clock = ap->clock;
	co.log = o->log;
	if (aws_region_resolve(&co, ap->api.region, sizeof(ap->api.region), &from, &e) < 0) {
		errbuf_set(err, "aws: no region: %s", e.msg);
		goto fail;
	}
	co.region = ap->api.region;
	if (aws_endpoints_resolve(&co, ap->api.region, &ep, &e) < 0) {
		errbuf_set(err, "aws: %s", e.msg);
		goto fail;
	}
	_Static_assert(sizeof(ap->api.url) == sizeof(ep.url), "one URL per service, alike");
	memcpy(ap->api.url, ep.url, sizeof(ap->api.url));
	ap->creds = aws_credchain_new(&co, &e);
	if (!ap->creds) {
		errbuf_set(err, "aws: no credentials: %s", e.msg);
		goto fail;
	}
	ap->api.http = ap->http;
	ap->api.creds = ap->creds;
	ap->api.clock = ap->clock;
	ap->api.log = o->log;
	if (aws_interrupt_init(ap, c->aws.interruption_queue) < 0) {
		errbuf_set(err, "aws: out of memory");
		goto fail;
	}
	if (aws_pricing_init(p, o->env, &e) < 0) {
		errbuf_set(err, "aws: pricing endpoint: %s", e.msg);
		goto fail;
	}

	gs = calloc(c->n_groups + 1, sizeof(*gs));
	if (!gs) {
		errbuf_set(err, "aws: out of memory");
		goto fail;
	}
	for (i = 0; i < c->n_groups; i++) {
		const struct config_group_extra *x = c->group_extra ? &c->group_extra[i] : NULL;
		struct aws_group *g = &gs[i];

		snprintf(g->name, sizeof(g->name), "%s", c->groups[i].name);
		g->fleet = x && x->aws.fleet;
		snprintf(g->asg, sizeof(g->asg), "%s", x && x->aws.asg ? x->aws.asg : c->groups[i].name);
		g->wants_template = !x || !x->template_set;
		g->cfg_min = c->groups[i].min;
		g->cfg_max = c->groups[i].max;
		g->cfg = x ? &x->aws : NULL;
	}
	groupcache_groups_take(ap->cache, gs, c->n_groups);
	ap->n_config_groups = c->n_groups;
	log_at(o->log, LOG_INFO, clock_wall(ap->clock),
	       "aws: region %s (from %s), credentials from %s, Auto Scaling at %s, EC2 at %s%s%s",
	       ap->api.region, from ? from : "?", aws_credchain_source(ap->creds),
	       ap->api.url[AWS_SERVICE_AUTOSCALING], ap->api.url[AWS_SERVICE_EC2],
	       ap->discovery ? ", finding ASGs tagged for cluster " : "", ap->discovery ? ap->cluster : "");
	if (c->aws.interruption_queue && c->aws.interruption_queue[0])
		log_at(o->log, LOG_INFO, clock_wall(ap->clock),
		       "aws: interruption notices from the SQS queue %s (SQS at %s)",
		       c->aws.interruption_queue, ap->api.url[AWS_SERVICE_SQS]);
	return p;
fail:
	aws_free(p);
	return NULL;
}

/* provider.kind: aws (providers/registry.c) */
static struct provider *make(const struct provider_make_opts *o, struct errbuf *err)
{
	struct aws_provider_opts ao;

	memset(&ao, 0, sizeof(ao));
	ao.config = o->config;
	ao.log = o->log;
	ao.cancel = o->cancel;
	return aws_provider_new(&ao, err);
}

const struct provider_kind provider_kind_aws = {"aws", make};
