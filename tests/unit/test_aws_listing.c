/*
 * The AWS provider's listing when one Auto Scaling group of the answer is
 * described badly (a field parse_asg refuses): that group is skipped with
 * one warning naming it and what was wrong (once per change, not every
 * round), keeps its last good view marked stale (stale_since), and the
 * other groups stay current; once it reads well again it is current, and
 * that is said once. Against a loopback fake of Auto Scaling (the test's
 * own DescribeAutoScalingGroups answers).
 */
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

struct fx {
	struct fake fk;
	struct config *cfg;
	struct provider *p;
	struct logger logger;
	char log[16384];
	int warnings;
};

static const char *env_get(void *ud, const char *name)
{
	(void)ud;
	if (!strcmp(name, "AWS_ACCESS_KEY_ID"))
		return "AKIDEXAMPLE";
	if (!strcmp(name, "AWS_SECRET_ACCESS_KEY"))
		return "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
	if (!strcmp(name, "AWS_REGION"))
		return "us-east-1";
	if (!strcmp(name, "AWS_EC2_METADATA_DISABLED"))
		return "true";
	return NULL;
}

static void capture(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct fx *f = ctx;
	size_t n = strlen(f->log);

	(void)wall;
	if (level >= LOG_WARN)
		f->warnings++;
	snprintf(f->log + n, sizeof(f->log) - n, "%s\n", msg);
}

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct config_opts co = {.flags = CONFIG_OFFLINE};
	struct aws_provider_opts o;
	static struct aws_env env = {env_get, NULL};
	struct errbuf e = {""};
	char text[2048];

	assert_non_null(f);
	assert_int_equal(cs_start(&f->fk.cs, handler, &f->fk, NULL, NULL), 0);
	snprintf(text, sizeof(text),
		 "node_groups:\n"
		 "  - {name: a, aws: {asg: asg-a}, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}\n"
		 "  - {name: b, aws: {asg: asg-b}, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}\n"
		 "provider:\n  kind: aws\n  read_qps: 1000\n  read_burst: 1000\n"
		 "  aws: {region: us-east-1, endpoints: {autoscaling: \"%s\", ec2: \"%s\", sts: \"%s\"}}\n",
		 f->fk.cs.url, f->fk.cs.url, f->fk.cs.url);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_bad_asg_is_skipped_and_kept_stale, fx_setup, fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
