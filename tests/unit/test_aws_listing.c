/*
 * The AWS provider's listing when one Auto Scaling group of the answer is
 * described badly (a field parse_asg refuses): that group is skipped with
 * one warning naming it and what was wrong (once per change, not every
 * round), keeps its last good view marked stale (stale_since), and the
 * other groups stay current; once it reads well again it is current, and
 * that is said once. Then image drift: an instance whose EC2 imageId is
 * not the AMI its group's launch template launches now (ASG and fleet
 * groups) is outdated, with why; an SSM alias left unresolved or a
 * template that cannot be read judges nothing; the instances' images and
 * the template come from the calls and caches the listing already has.
 * Against a loopback fake of Auto Scaling and EC2 (the test's own answers).
 */
#include <time.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "log.h"
#include "providers/aws/aws.h"
#include "providers/aws/endpoints.h"
#include "providers/provider.h"
#include "test_aws_env.h"
#include "test_cloud_server.h"

struct fake {
	struct cs_server cs;
	int desired_a, desired_b;
	bool b_bad;             /* group b's member lacks MinSize */
};

/* One ASG member without instances; 'bad' leaves MinSize out. */
static void member(char *out, size_t len, const char *name, int desired, bool bad)
{
	snprintf(out, len,
		 "<member><AutoScalingGroupName>%s</AutoScalingGroupName>%s<MaxSize>10</MaxSize>"
		 "<DesiredCapacity>%d</DesiredCapacity><Instances/><Tags/>"
		 "<AvailabilityZones><member>us-east-1a</member></AvailabilityZones></member>",
		 name, bad ? "" : "<MinSize>0</MinSize>", desired);
}

static void handler(void *ud, size_t index, const struct cs_req *rq, struct cs_resp *rs)
{
	struct fake *f = ud;
	char a[1024], b[1024];

	(void)index;
	if (rq->body && strstr(rq->body, "Action=DescribeScalingActivities")) {
		/* no activity: the instances owed are on their way */
		snprintf(rs->body, sizeof(rs->body),
			 "<DescribeScalingActivitiesResponse><DescribeScalingActivitiesResult><Activities/>"
			 "</DescribeScalingActivitiesResult></DescribeScalingActivitiesResponse>");
		return;
	}
	if (!rq->body || !strstr(rq->body, "Action=DescribeAutoScalingGroups")) {
		rs->status = 400;
		snprintf(rs->body, sizeof(rs->body),
			 "<ErrorResponse><Error><Type>Sender</Type><Code>InvalidAction</Code>"
			 "<Message>not faked</Message></Error></ErrorResponse>");
		return;
	}
	member(a, sizeof(a), "asg-a", f->desired_a, false);
	member(b, sizeof(b), "asg-b", f->desired_b, f->b_bad);
	snprintf(rs->headers, sizeof(rs->headers), "Content-Type: text/xml\n");
	snprintf(rs->body, sizeof(rs->body),
		 "<DescribeAutoScalingGroupsResponse xmlns=\"http://autoscaling.amazonaws.com/doc/2011-01-01/\">"
		 "<DescribeAutoScalingGroupsResult><AutoScalingGroups>%s%s</AutoScalingGroups>"
		 "</DescribeAutoScalingGroupsResult><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata>"
		 "</DescribeAutoScalingGroupsResponse>",
		 a, b);
}

/* ---- the image fake: one ASG (asg-web, launch template web-lt), a
 * fleet group's instances by tag, DescribeInstances by id and
 * DescribeLaunchTemplateVersions ---- */

struct img_inst {
	const char *id, *image;
	int64_t launched;        /* unix seconds */
	const char *type;        /* its instance type; NULL m5.large */
};

struct ifake {
	struct cs_server cs;
	char lt_image[128];      /* every template's imageId; "" fails the call */
	const char *lt_type;     /* every template's instanceType; NULL m5.large */
	bool mixed;              /* asg-web has a mixed instances policy (m5.large, m5.xlarge) */
	struct img_inst asg[4];
	size_t n_asg;
	struct img_inst fleet[2];
	size_t n_fleet;
	int n_dltv, n_di_ids;    /* DescribeLaunchTemplateVersions, DescribeInstances by id */
	int no_alias;            /* DescribeLaunchTemplateVersions calls without ResolveAlias=true */
	char dltv_body[1024];    /* the last one's body */
};

static void iso(int64_t t, char *out, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(out, len, "%Y-%m-%dT%H:%M:%S.000Z", &tm);
}

/* One DescribeInstances item. */
static void di_item(char *out, size_t len, const struct img_inst *in, const char *extra)
{
	char when[40];

	iso(in->launched, when, sizeof(when));
	snprintf(out, len,
		 "<item><reservationId>r-1</reservationId><instancesSet><item><instanceId>%s</instanceId>"
		 "<imageId>%s</imageId><instanceState><code>16</code><name>running</name></instanceState>"
		 "<launchTime>%s</launchTime><placement><availabilityZone>us-east-1a</availabilityZone>"
		 "</placement>%s</item></instancesSet></item>",
		 in->id, in->image, when, extra);
}

static void image_di(struct ifake *f, const char *body, struct cs_resp *rs)
{
	char items[6000] = "", it[1024];
	size_t i, n;
	bool by_tag = strstr(body, "Filter.1.Name=") != NULL;

	if (!by_tag)
		f->n_di_ids++;
	n = by_tag ? f->n_fleet : f->n_asg;
	for (i = 0; i < n; i++) {
		const struct img_inst *in = by_tag ? &f->fleet[i] : &f->asg[i];

		if (!by_tag && !strstr(body, in->id))
			continue;
		di_item(it, sizeof(it), in, "");
		snprintf(items + strlen(items), sizeof(items) - strlen(items), "%s", it);
	}
	snprintf(rs->body, sizeof(rs->body),
		 "<DescribeInstancesResponse xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\"><requestId>r</requestId>"
		 "<reservationSet>%s</reservationSet></DescribeInstancesResponse>",
		 items);
}

static void image_dltv(struct ifake *f, const char *body, struct cs_resp *rs)
{
	f->n_dltv++;
	f->no_alias += !strstr(body, "ResolveAlias=true");
	snprintf(f->dltv_body, sizeof(f->dltv_body), "%s", body);
	if (!f->lt_image[0]) {
		rs->status = 400;
		snprintf(rs->body, sizeof(rs->body),
			 "<Response><Errors><Error><Code>UnauthorizedOperation</Code><Message>You are not "
			 "authorized to perform this operation.</Message></Error></Errors><RequestID>r</RequestID></Response>");
		return;
	}
	snprintf(rs->body, sizeof(rs->body),
		 "<DescribeLaunchTemplateVersionsResponse xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\">"
		 "<requestId>r</requestId><launchTemplateVersionSet><item>"
		 "<launchTemplateId>lt-0123456789abcdef0</launchTemplateId><launchTemplateName>web-lt</launchTemplateName>"
		 "<versionNumber>3</versionNumber><defaultVersion>true</defaultVersion><launchTemplateData>"
		 "<imageId>%s</imageId><instanceType>%s</instanceType></launchTemplateData></item>"
		 "</launchTemplateVersionSet></DescribeLaunchTemplateVersionsResponse>",
		 f->lt_image, f->lt_type ? f->lt_type : "m5.large");
}

static void image_asgs(struct ifake *f, struct cs_resp *rs)
{
	static const char spec[] = "<LaunchTemplateId>lt-0123456789abcdef0</LaunchTemplateId>"
				   "<LaunchTemplateName>web-lt</LaunchTemplateName><Version>$Default</Version>";
	char inst[2048] = "", lt[1024];
	size_t i;

	for (i = 0; i < f->n_asg; i++)
		snprintf(inst + strlen(inst), sizeof(inst) - strlen(inst),
			 "<member><InstanceId>%s</InstanceId><AvailabilityZone>us-east-1a</AvailabilityZone>"
			 "<LifecycleState>InService</LifecycleState><InstanceType>%s</InstanceType></member>",
			 f->asg[i].id, f->asg[i].type ? f->asg[i].type : "m5.large");
	if (f->mixed)
		snprintf(lt, sizeof(lt),
			 "<MixedInstancesPolicy><LaunchTemplate><LaunchTemplateSpecification>%s"
			 "</LaunchTemplateSpecification><Overrides><member><InstanceType>m5.large</InstanceType>"
			 "</member><member><InstanceType>m5.xlarge</InstanceType></member></Overrides>"
			 "</LaunchTemplate></MixedInstancesPolicy>",
			 spec);
	else
		snprintf(lt, sizeof(lt), "<LaunchTemplate>%s</LaunchTemplate>", spec);
	snprintf(rs->body, sizeof(rs->body),
		 "<DescribeAutoScalingGroupsResponse xmlns=\"http://autoscaling.amazonaws.com/doc/2011-01-01/\">"
		 "<DescribeAutoScalingGroupsResult><AutoScalingGroups><member>"
		 "<AutoScalingGroupName>asg-web</AutoScalingGroupName>%s<MinSize>0</MinSize><MaxSize>10</MaxSize>"
		 "<DesiredCapacity>%zu</DesiredCapacity><Instances>%s</Instances><Tags/>"
		 "<AvailabilityZones><member>us-east-1a</member></AvailabilityZones></member>"
		 "</AutoScalingGroups></DescribeAutoScalingGroupsResult></DescribeAutoScalingGroupsResponse>",
		 lt, f->n_asg, inst);
}

static void image_handler(void *ud, size_t index, const struct cs_req *rq, struct cs_resp *rs)
{
	struct ifake *f = ud;
	const char *body = rq->body ? rq->body : "";

	(void)index;
	snprintf(rs->headers, sizeof(rs->headers), "Content-Type: text/xml\n");
	if (strstr(body, "Action=DescribeAutoScalingGroups")) {
		image_asgs(f, rs);
	} else if (strstr(body, "Action=DescribeInstances&")) {
		image_di(f, body, rs);
	} else if (strstr(body, "Action=DescribeLaunchTemplateVersions")) {
		image_dltv(f, body, rs);
	} else {
		rs->status = 400;
		snprintf(rs->body, sizeof(rs->body),
			 "<Response><Errors><Error><Code>InvalidAction</Code><Message>not faked</Message>"
			 "</Error></Errors><RequestID>r</RequestID></Response>");
	}
}

struct fx {
	struct fake fk;
	struct ifake ik;
	struct config *cfg;
	struct provider *p;
	struct logger logger;
	char log[16384];
	int warnings;
};

static void capture(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct fx *f = ctx;
	size_t n = strlen(f->log);

	(void)wall;
	if (level >= LOG_WARN)
		f->warnings++;
	snprintf(f->log + n, sizeof(f->log) - n, "%s\n", msg);
}

/* The config 'groups' (node_groups lines) with every endpoint at 'url',
 * and a provider on it logging into f. */
static void fx_provider(struct fx *f, const char *groups, const char *url)
{
	struct config_opts co = {.flags = CONFIG_OFFLINE};
	struct aws_provider_opts o;
	static struct aws_env env = {test_aws_env, NULL};
	struct errbuf e = {""};
	char text[4096];

	snprintf(text, sizeof(text),
		 "node_groups:\n%s"
		 "provider:\n  kind: aws\n  read_qps: 1000\n  read_burst: 1000\n"
		 "  aws: {region: us-east-1, cluster_name: test, endpoints: {autoscaling: \"%s\", ec2: \"%s\", sts: \"%s\"}}\n",
		 groups, url, url, url);
	f->cfg = config_parse_opts(text, strlen(text), "aws.yaml", &co, &e);
	if (!f->cfg)
		fail_msg("config: %s", e.msg);
	f->logger = (struct logger){capture, f, LOG_DEBUG, NULL};
	memset(&o, 0, sizeof(o));
	o.config = f->cfg;
	o.log = &f->logger;
	o.env = &env;
	o.home = "/nonexistent";
	f->p = aws_provider_new(&o, &e);
	if (!f->p)
		fail_msg("aws_provider_new: %s", e.msg);
}

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(cs_start(&f->fk.cs, handler, &f->fk, NULL, NULL), 0);
	fx_provider(f,
		    "  - {name: a, aws: {asg: asg-a}, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}\n"
		    "  - {name: b, aws: {asg: asg-b}, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}\n",
		    f->fk.cs.url);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	if (getenv("AWS_TEST_LOG"))
		fputs(f->log, stderr);
	provider_free(f->p);
	config_free(f->cfg);
	cs_stop(&f->fk.cs);
	free(f);
	return 0;
}

static const struct provider_group *find(const struct provider_group *gs, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(gs[i].name, name))
			return &gs[i];
	fail_msg("group %s not listed", name);
	return NULL;
}

static void list(struct fx *f, struct provider_group **gs, size_t *n)
{
	struct provider_status st;

	if (f->p->ops->list_groups(f->p, gs, n, &st) < 0)
		fail_msg("list_groups failed: %s\nlog:\n%s", st.message, f->log);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (; (hay = strstr(hay, needle)); hay++)
		n++;
	return n;
}

static void test_bad_asg_is_skipped_and_kept_stale(void **state)
{
	struct fx *f = *state;
	struct provider_group *gs;
	size_t n;
	const struct provider_group *a, *b;

	/* both read well */
	f->fk.desired_a = 1;
	f->fk.desired_b = 2;
	list(f, &gs, &n);
	assert_int_equal(n, 2);
	assert_int_equal(find(gs, n, "b")->target, 2);
	assert_int_equal(find(gs, n, "b")->stale_since, 0);
	provider_groups_free(gs, n);
	assert_int_equal(f->warnings, 0);

	/* b's MinSize is missing: a is current, b keeps its last view, stale */
	f->fk.desired_a = 3;
	f->fk.desired_b = 5;
	f->fk.b_bad = true;
	list(f, &gs, &n);
	assert_int_equal(n, 2);
	a = find(gs, n, "a");
	b = find(gs, n, "b");
	assert_int_equal(a->target, 3);
	assert_int_equal(a->stale_since, 0);
	assert_int_equal(b->target, 2);
	assert_int_equal(b->max, 10);
	assert_true(b->cloud_sized);
	assert_true(b->stale_since > 0);
	provider_groups_free(gs, n);
	assert_int_equal(f->warnings, 1);
	assert_non_null(strstr(f->log, "aws: node group b: its Auto Scaling group asg-b is skipped: "));
	assert_non_null(strstr(f->log, "group asg-b: MinSize, MaxSize or DesiredCapacity missing or out of range"));

	/* the same fault the next round: no second warning */
	f->fk.desired_a = 4;
	list(f, &gs, &n);
	assert_int_equal(find(gs, n, "a")->target, 4);
	assert_true(find(gs, n, "b")->stale_since > 0);
	provider_groups_free(gs, n);
	assert_int_equal(f->warnings, 1);

	/* read well again: current, and said once */
	f->fk.b_bad = false;
	list(f, &gs, &n);
	b = find(gs, n, "b");
	assert_int_equal(b->target, 5);
	assert_int_equal(b->stale_since, 0);
	provider_groups_free(gs, n);
	assert_int_equal(count(f->log, "aws: node group b: its Auto Scaling group is read well again"), 1);
	assert_int_equal(f->warnings, 1);
}

/* ---- image drift ---- */

#define HOUR_AGO ((int64_t)time(NULL) - 3600)

static int ix_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(cs_start(&f->ik.cs, image_handler, &f->ik, NULL, NULL), 0);
	fx_provider(f,
		    "  - {name: web, aws: {asg: asg-web}, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}\n"
		    "  - name: burst\n    max: 4\n"
		    "    template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}\n"
		    "    aws: {mode: fleet, launch_template: burst-lt, instance_types: [m5.large], "
		    "placements: [{zone: us-east-1a}]}\n",
		    f->ik.cs.url);
	snprintf(f->ik.lt_image, sizeof(f->ik.lt_image), "ami-0bbb");
	f->ik.asg[0] = (struct img_inst){"i-0aaa", "ami-0aaa", HOUR_AGO, NULL};
	f->ik.asg[1] = (struct img_inst){"i-0bbb", "ami-0bbb", HOUR_AGO, NULL};
	f->ik.n_asg = 2;
	*state = f;
	return 0;
}

static int ix_teardown(void **state)
{
	struct fx *f = *state;

	if (getenv("AWS_TEST_LOG"))
		fputs(f->log, stderr);
	provider_free(f->p);
	config_free(f->cfg);
	cs_stop(&f->ik.cs);
	free(f);
	return 0;
}

/* The listed instance 'id' of group 'g'. */
static const struct provider_instance *inst(const struct provider_group *g, const char *id)
{
	size_t i;

	for (i = 0; i < g->n_instances; i++)
		if (!strcmp(g->instances[i].id, id))
			return &g->instances[i];
	fail_msg("instance %s not listed in %s", id, g->name);
	return NULL;
}

/* An instance on the old AMI is outdated, with why; one on the template's
 * is not; in an ASG and a fleet group alike. The template is asked with
 * ResolveAlias=true, once per template; a second listing asks nothing
 * again (the instances' images and the template are cached). */
static void test_image_outdated(void **state)
{
	struct fx *f = *state;
	struct provider_group *gs;
	size_t n, round;

	f->ik.fleet[0] = (struct img_inst){"i-0ddd", "ami-0aaa", HOUR_AGO, NULL};
	f->ik.fleet[1] = (struct img_inst){"i-0eee", "ami-0bbb", HOUR_AGO, NULL};
	f->ik.n_fleet = 2;
	for (round = 0; round < 2; round++) {
		const struct provider_group *web, *burst;

		list(f, &gs, &n);
		web = find(gs, n, "web");
		burst = find(gs, n, "burst");
		assert_string_equal(inst(web, "i-0aaa")->outdated,
				    "image ami-0aaa is not launch template web-lt version $Default's ami-0bbb");
		assert_string_equal(inst(web, "i-0bbb")->outdated, "");
		assert_string_equal(inst(burst, "i-0ddd")->outdated,
				    "image ami-0aaa is not launch template burst-lt version $Default's ami-0bbb");
		assert_string_equal(inst(burst, "i-0eee")->outdated, "");
		provider_groups_free(gs, n);
		assert_int_equal(f->ik.n_dltv, 2); /* web-lt and burst-lt, once */
		assert_int_equal(f->ik.n_di_ids, 1);
	}
	assert_int_equal(f->ik.no_alias, 0);
	assert_int_equal(f->warnings, 0);
}

/* The template changes while its instances are cached: an instance
 * launched after the template was read, on another AMI, has it read again
 * (once) before anything is judged, so the new instance is current and
 * the older ones are outdated against the new AMI. */
static void test_image_newer_instance_reads_again(void **state)
{
	struct fx *f = *state;
	struct provider_group *gs;
	const struct provider_group *web;
	size_t n;

	list(f, &gs, &n);
	assert_string_equal(inst(find(gs, n, "web"), "i-0bbb")->outdated, "");
	provider_groups_free(gs, n);
	assert_int_equal(f->ik.n_dltv, 1);

	snprintf(f->ik.lt_image, sizeof(f->ik.lt_image), "ami-0ccc");
	f->ik.asg[2] = (struct img_inst){"i-0ccc", "ami-0ccc", (int64_t)time(NULL), NULL};
	f->ik.n_asg = 3;
	list(f, &gs, &n);
	web = find(gs, n, "web");
	assert_string_equal(inst(web, "i-0ccc")->outdated, "");
	assert_string_equal(inst(web, "i-0aaa")->outdated,
			    "image ami-0aaa is not launch template web-lt version $Default's ami-0ccc");
	assert_string_equal(inst(web, "i-0bbb")->outdated,
			    "image ami-0bbb is not launch template web-lt version $Default's ami-0ccc");
	provider_groups_free(gs, n);
	assert_int_equal(f->ik.n_dltv, 2);
	assert_int_equal(f->ik.n_di_ids, 2); /* only the new instance */
}

/* An image the cloud left as an SSM alias cannot be compared: nothing is
 * outdated. */
static void test_image_ssm_alias_judges_nothing(void **state)
{
	struct fx *f = *state;
	struct provider_group *gs;
	const struct provider_group *web;
	size_t n;

	snprintf(f->ik.lt_image, sizeof(f->ik.lt_image),
		 "resolve:ssm:/aws/service/eks/optimized-ami/1.29/amazon-linux-2/recommended/image_id");
	list(f, &gs, &n);
	web = find(gs, n, "web");
	assert_string_equal(inst(web, "i-0aaa")->outdated, "");
	assert_string_equal(inst(web, "i-0bbb")->outdated, "");
	assert_string_equal(web->tmpl.instance_type, "m5.large");
	provider_groups_free(gs, n);
	assert_non_null(strstr(f->ik.dltv_body, "ResolveAlias=true"));
	assert_non_null(strstr(f->ik.dltv_body, "LaunchTemplateId=lt-0123456789abcdef0"));
}

/* A template that cannot be read judges nothing; it is asked once a
 * listing (the instance type and the image share the call) and each
 * failure is one warning. */
static void test_image_unreadable_template_judges_nothing(void **state)
{
	struct fx *f = *state;
	struct provider_group *gs;
	const struct provider_group *web;
	size_t n, round;

	f->ik.lt_image[0] = '\0';
	for (round = 1; round <= 2; round++) {
		list(f, &gs, &n);
		web = find(gs, n, "web");
		assert_string_equal(inst(web, "i-0aaa")->outdated, "");
		assert_string_equal(inst(web, "i-0bbb")->outdated, "");
		provider_groups_free(gs, n);
		assert_int_equal(f->ik.n_dltv, (int)round);
		assert_int_equal(count(f->log, "aws: cannot read launch template"), (int)round);
	}
}

/* ---- instance type drift ---- */

/* An ASG without a mixed instances policy launches its template's type
 * only: an instance of another type is outdated, with why; one drifted in
 * both type and image says both. */
static void test_type_outdated_in_one_type_asg(void **state)
{
	struct fx *f = *state;
	struct provider_group *gs;
	const struct provider_group *web;
	size_t n;

	f->ik.lt_type = "m5.xlarge";
	f->ik.asg[2] = (struct img_inst){"i-0ccc", "ami-0bbb", HOUR_AGO, "m5.xlarge"};
	f->ik.n_asg = 3;
	list(f, &gs, &n);
	web = find(gs, n, "web");
	assert_string_equal(inst(web, "i-0bbb")->outdated,
			    "instance type m5.large is not launch template web-lt version $Default's m5.xlarge");
	assert_string_equal(inst(web, "i-0aaa")->outdated,
			    "instance type m5.large is not launch template web-lt version $Default's m5.xlarge; "
			    "image ami-0aaa is not launch template web-lt version $Default's ami-0bbb");
	assert_string_equal(inst(web, "i-0ccc")->outdated, "");
	provider_groups_free(gs, n);
	assert_int_equal(f->ik.n_dltv, 1); /* the type and the image share the read */
}

/* An ASG with a mixed instances policy launches other types than its
 * template names: the type judges nothing, the image still does. */
static void test_type_not_judged_in_mixed_asg(void **state)
{
	struct fx *f = *state;
	struct provider_group *gs;
	const struct provider_group *web;
	size_t n;

	f->ik.mixed = true;
	f->ik.asg[1].type = "m5.xlarge";
	list(f, &gs, &n);
	web = find(gs, n, "web");
	assert_string_equal(inst(web, "i-0bbb")->outdated, "");
	assert_string_equal(inst(web, "i-0aaa")->outdated,
			    "image ami-0aaa is not launch template web-lt version $Default's ami-0bbb");
	provider_groups_free(gs, n);
}

/* A type changed in the template while its instances are cached: an
 * instance of the new type launched after the read has the template read
 * again, so it is current and the older ones are outdated. */
static void test_type_newer_instance_reads_again(void **state)
{
	struct fx *f = *state;
	struct provider_group *gs;
	const struct provider_group *web;
	size_t n;

	f->ik.asg[0].image = "ami-0bbb";
	list(f, &gs, &n);
	assert_string_equal(inst(find(gs, n, "web"), "i-0aaa")->outdated, "");
	provider_groups_free(gs, n);

	f->ik.lt_type = "m6i.large";
	f->ik.asg[2] = (struct img_inst){"i-0ccc", "ami-0bbb", (int64_t)time(NULL), "m6i.large"};
	f->ik.n_asg = 3;
	list(f, &gs, &n);
	web = find(gs, n, "web");
	assert_string_equal(inst(web, "i-0ccc")->outdated, "");
	assert_string_equal(inst(web, "i-0aaa")->outdated,
			    "instance type m5.large is not launch template web-lt version $Default's m6i.large");
	provider_groups_free(gs, n);
	assert_int_equal(f->ik.n_dltv, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_bad_asg_is_skipped_and_kept_stale, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_image_outdated, ix_setup, ix_teardown),
		cmocka_unit_test_setup_teardown(test_image_newer_instance_reads_again, ix_setup, ix_teardown),
		cmocka_unit_test_setup_teardown(test_image_ssm_alias_judges_nothing, ix_setup, ix_teardown),
		cmocka_unit_test_setup_teardown(test_image_unreadable_template_judges_nothing, ix_setup,
						ix_teardown),
		cmocka_unit_test_setup_teardown(test_type_outdated_in_one_type_asg, ix_setup, ix_teardown),
		cmocka_unit_test_setup_teardown(test_type_not_judged_in_mixed_asg, ix_setup, ix_teardown),
		cmocka_unit_test_setup_teardown(test_type_newer_instance_reads_again, ix_setup, ix_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
