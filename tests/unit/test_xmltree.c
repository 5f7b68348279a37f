/*
 * Tests for providers/aws/xmltree.c: the tree of real AWS answer shapes
 * (Auto Scaling members, EC2 item sets, CreateFleet's instance and error
 * sets), both error shapes, strict numbers, and hostile inputs (DOCTYPE,
 * entity bombs, deep nesting, truncation, not XML, huge text).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "buf.h"
#include "providers/aws/awserr.h"
#include "providers/cloudhttp/xmltree.h"

static struct xmltree_doc *parse_ok(const char *xml)
{
	struct errbuf err = {{0}};
	struct xmltree_doc *d = xmltree_parse(xml, strlen(xml), &err);

	if (!d)
		fail_msg("parse failed: %s", err.msg);
	return d;
}

static void parse_fails(const char *xml, size_t len, const char *want)
{
	struct errbuf err = {{0}};
	struct xmltree_doc *d = xmltree_parse(xml, len, &err);

	if (d) {
		xmltree_free(d);
		fail_msg("parsed, expected an error containing '%s'", want);
	}
	if (!strstr(err.msg, want))
		fail_msg("error '%s' lacks '%s'", err.msg, want);
}

static const char asg_xml[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"<DescribeAutoScalingGroupsResponse xmlns=\"http://autoscaling.amazonaws.com/doc/2011-01-01/\">\n"
	"  <DescribeAutoScalingGroupsResult>\n"
	"    <AutoScalingGroups>\n"
	"      <member>\n"
	"        <AutoScalingGroupName>workers-a</AutoScalingGroupName>\n"
	"        <AutoScalingGroupARN>arn:aws:autoscaling:us-east-1:123456789012:autoScalingGroup:9f3a:autoScalingGroupName/workers-a</AutoScalingGroupARN>\n"
	"        <MinSize>1</MinSize>\n"
	"        <MaxSize>10</MaxSize>\n"
	"        <DesiredCapacity>3</DesiredCapacity>\n"
	"        <LaunchTemplate><LaunchTemplateId>lt-0abc</LaunchTemplateId><Version>$Default</Version></LaunchTemplate>\n"
	"        <Instances>\n"
	"          <member><InstanceId>i-0001</InstanceId><AvailabilityZone>us-east-1a</AvailabilityZone>"
	"<LifecycleState>InService</LifecycleState><HealthStatus>Healthy</HealthStatus></member>\n"
	"          <member><InstanceId>i-0002</InstanceId><AvailabilityZone>us-east-1b</AvailabilityZone>"
	"<LifecycleState>Pending</LifecycleState><HealthStatus>Healthy</HealthStatus></member>\n"
	"          <member><InstanceId>i-0003</InstanceId><AvailabilityZone>us-east-1a</AvailabilityZone>"
	"<LifecycleState>Terminating</LifecycleState><HealthStatus>Unhealthy</HealthStatus></member>\n"
	"        </Instances>\n"
	"        <Tags>\n"
	"          <member><Key>k8s.io/cluster-autoscaler/enabled</Key><Value>true</Value>"
	"<ResourceId>workers-a</ResourceId><PropagateAtLaunch>false</PropagateAtLaunch></member>\n"
	"          <member><Key>k8s.io/cluster-autoscaler/node-template/taint/dedicated</Key>"
	"<Value>gpu:NoSchedule</Value><PropagateAtLaunch>true</PropagateAtLaunch></member>\n"
	"        </Tags>\n"
	"      </member>\n"
	"      <member>\n"
	"        <AutoScalingGroupName>workers-b &amp; co</AutoScalingGroupName>\n"
	"        <MinSize>0</MinSize><MaxSize>5</MaxSize><DesiredCapacity>0</DesiredCapacity>\n"
	"        <Instances/>\n"
	"      </member>\n"
	"    </AutoScalingGroups>\n"
	"    <NextToken>  tok+/=123  </NextToken>\n"
	"  </DescribeAutoScalingGroupsResult>\n"
	"  <ResponseMetadata><RequestId>7c6e177f-f082-11e1-ac58-3714bEXAMPLE</RequestId></ResponseMetadata>\n"
	"</DescribeAutoScalingGroupsResponse>\n";

static void test_autoscaling_groups(void **state)
{
	struct xmltree_doc *d = parse_ok(asg_xml);
	const struct xmltree_node *r = xmltree_root(d), *groups, *g, *it;
	const char *names[3] = {0};
	int64_t v = -1;
	size_t k = 0;
	char id[64], tok[64];
	bool b = false;

	(void)state;
	assert_string_equal(r->name, "DescribeAutoScalingGroupsResponse");
	groups = xmltree_find(r, "DescribeAutoScalingGroupsResult/AutoScalingGroups");
	assert_non_null(groups);
	assert_int_equal(xmltree_count(groups, "member"), 2);
	for (g = xmltree_first(groups, "member"); g; g = xmltree_next(g))
		names[k++] = xmltree_text(g, "AutoScalingGroupName");
	assert_int_equal(k, 2);
	assert_string_equal(names[0], "workers-a");
	assert_string_equal(names[1], "workers-b & co"); /* entities decoded */
	g = xmltree_first(groups, "member");
	assert_int_equal(xmltree_int64(g, "MinSize", &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(xmltree_int64(g, "DesiredCapacity", &v), 0);
	assert_int_equal(v, 3);
	assert_string_equal(xmltree_text(g, "LaunchTemplate/Version"), "$Default");
	k = 0;
	for (it = xmltree_first(xmltree_child(g, "Instances"), "member"); it; it = xmltree_next(it)) {
		static const char *const want[] = {"InService", "Pending", "Terminating"};

		assert_string_equal(xmltree_text(it, "LifecycleState"), want[k]);
		k++;
	}
	assert_int_equal(k, 3);
	it = xmltree_find(g, "Tags/member");
	assert_string_equal(xmltree_text(it, "Key"), "k8s.io/cluster-autoscaler/enabled");
	assert_int_equal(xmltree_bool(it, "PropagateAtLaunch", &b), 0);
	assert_false(b);
	assert_int_equal(xmltree_bool(it, "Value", &b), 0);
	assert_true(b);
	assert_int_equal(xmltree_bool(it, "Key", &b), -1);
	/* an empty set has no members; a second group has no launch template */
	g = xmltree_next(g);
	assert_int_equal(xmltree_count(xmltree_child(g, "Instances"), "member"), 0);
	assert_null(xmltree_first(xmltree_child(g, "Instances"), "member"));
	assert_string_equal(xmltree_text(g, "LaunchTemplate/Version"), "");
	/* exact and trimmed text */
	assert_string_equal(xmltree_text(r, "DescribeAutoScalingGroupsResult/NextToken"),
			    "  tok+/=123  ");
	assert_int_equal(xmltree_copy(r, "DescribeAutoScalingGroupsResult/NextToken", tok,
				     sizeof(tok)), 0);
	assert_string_equal(tok, "tok+/=123");
	assert_int_equal(xmltree_copy(r, "DescribeAutoScalingGroupsResult/NextToken", tok, 5), -1);
	assert_string_equal(tok, "");
	assert_string_equal(aws_xml_request_id(d, id, sizeof(id)),
			    "7c6e177f-f082-11e1-ac58-3714bEXAMPLE");
	assert_int_equal(aws_xml_error(d, NULL, 0, NULL, 0), -1);
	/* the parent links and the line of an element */
	assert_ptr_equal(groups->parent->parent, r);
	assert_null(r->parent);
	assert_int_equal(xmltree_find(r, "DescribeAutoScalingGroupsResult")->line, 3);
	xmltree_free(d);
}

static const char instances_xml[] =
	"<DescribeInstancesResponse xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\">\n"
	"  <requestId>8f7724cf-496f-496e-8fe3-example</requestId>\n"
	"  <reservationSet>\n"
	"    <item>\n"
	"      <reservationId>r-1</reservationId>\n"
	"      <ownerId>123456789012</ownerId>\n"
	"      <instancesSet>\n"
	"        <item>\n"
	"          <instanceId>i-1234567890abcdef0</instanceId>\n"
	"          <instanceState><code>16</code><name>running</name></instanceState>\n"
	"          <privateDnsName>ip-10-0-0-157.ec2.internal</privateDnsName>\n"
	"          <instanceType>m5.large</instanceType>\n"
	"          <placement><availabilityZone>us-east-1a</availabilityZone><tenancy>default</tenancy></placement>\n"
	"          <tagSet><item><key>luascale/group</key><value>fleet-a</value></item></tagSet>\n"
	"        </item>\n"
	"        <item>\n"
	"          <instanceId>i-0b</instanceId>\n"
	"          <instanceState><code>0</code><name>pending</name></instanceState>\n"
	"          <placement><availabilityZone>us-east-1b</availabilityZone></placement>\n"
	"        </item>\n"
	"      </instancesSet>\n"
	"    </item>\n"
	"    <item>\n"
	"      <reservationId>r-2</reservationId>\n"
	"      <instancesSet><item><instanceId>i-0c</instanceId>"
	"<instanceState><code>48</code><name>terminated</name></instanceState></item></instancesSet>\n"
	"    </item>\n"
	"  </reservationSet>\n"
	"  <nextToken/>\n"
	"</DescribeInstancesResponse>";

static void test_ec2_instances(void **state)
{
	struct xmltree_doc *d = parse_ok(instances_xml);
	const struct xmltree_node *r = xmltree_root(d), *res, *in;
	const char *ids[4] = {0};
	size_t n = 0;
	int64_t code = -1;
	char rid[64];

	(void)state;
	for (res = xmltree_first(xmltree_child(r, "reservationSet"), "item"); res;
	     res = xmltree_next(res))
		for (in = xmltree_first(xmltree_child(res, "instancesSet"), "item"); in;
		     in = xmltree_next(in)) {
			assert_true(n < 4);
			ids[n++] = xmltree_text(in, "instanceId");
		}
	assert_int_equal(n, 3);
	assert_string_equal(ids[0], "i-1234567890abcdef0");
	assert_string_equal(ids[1], "i-0b");
	assert_string_equal(ids[2], "i-0c");
	in = xmltree_find(r, "reservationSet/item/instancesSet/item");
	assert_string_equal(xmltree_text(in, "instanceState/name"), "running");
	assert_int_equal(xmltree_int64(in, "instanceState/code", &code), 0);
	assert_int_equal(code, 16);
	assert_string_equal(xmltree_text(in, "placement/availabilityZone"), "us-east-1a");
	assert_string_equal(xmltree_text(in, "privateDnsName"), "ip-10-0-0-157.ec2.internal");
	assert_string_equal(xmltree_text(in, "tagSet/item/value"), "fleet-a");
	/* present but empty is not missing; missing is "" too, but not found */
	assert_non_null(xmltree_find(r, "nextToken"));
	assert_string_equal(xmltree_text(r, "nextToken"), "");
	assert_null(xmltree_find(r, "NextToken")); /* names are case-sensitive */
	assert_string_equal(aws_xml_request_id(d, rid, sizeof(rid)), "8f7724cf-496f-496e-8fe3-example");
	xmltree_free(d);
}

static const char fleet_xml[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"<CreateFleetResponse xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\">\n"
	"    <requestId>b0c5f0e5-example</requestId>\n"
	"    <fleetId>fleet-12a34b55-67cd-8ef9-ba9b-9208dEXAMPLE</fleetId>\n"
	"    <errorSet>\n"
	"        <item>\n"
	"            <errorCode>InsufficientInstanceCapacity</errorCode>\n"
	"            <errorMessage>We currently do not have sufficient m5.large capacity in the Availability Zone you requested (us-east-1c).</errorMessage>\n"
	"            <launchTemplateAndOverrides>\n"
	"                <launchTemplateSpecification><launchTemplateId>lt-0abc</launchTemplateId><version>1</version></launchTemplateSpecification>\n"
	"                <overrides><instanceType>m5.large</instanceType><availabilityZone>us-east-1c</availabilityZone><subnetId>subnet-c</subnetId></overrides>\n"
	"            </launchTemplateAndOverrides>\n"
	"            <lifecycle>on-demand</lifecycle>\n"
	"        </item>\n"
	"    </errorSet>\n"
	"    <fleetInstanceSet>\n"
	"        <item>\n"
	"            <instanceIds><item>i-0aaa</item><item>i-0bbb</item></instanceIds>\n"
	"            <instanceType>m5.large</instanceType>\n"
	"            <launchTemplateAndOverrides>\n"
	"                <overrides><instanceType>m5.large</instanceType><availabilityZone>us-east-1a</availabilityZone><priority>1.0</priority></overrides>\n"
	"            </launchTemplateAndOverrides>\n"
	"            <lifecycle>on-demand</lifecycle>\n"
	"        </item>\n"
	"    </fleetInstanceSet>\n"
	"</CreateFleetResponse>";

static void test_create_fleet(void **state)
{
	struct xmltree_doc *d = parse_ok(fleet_xml);
	const struct xmltree_node *r = xmltree_root(d), *set, *id, *e;
	const char *ids[3] = {0};
	size_t n = 0;

	(void)state;
	set = xmltree_find(r, "fleetInstanceSet/item");
	for (id = xmltree_first(xmltree_child(set, "instanceIds"), "item"); id; id = xmltree_next(id)) {
		assert_true(n < 3);
		ids[n++] = id->text;
	}
	assert_int_equal(n, 2);
	assert_string_equal(ids[0], "i-0aaa");
	assert_string_equal(ids[1], "i-0bbb");
	assert_string_equal(xmltree_text(set, "launchTemplateAndOverrides/overrides/availabilityZone"),
			    "us-east-1a");
	e = xmltree_find(r, "errorSet/item");
	assert_string_equal(xmltree_text(e, "errorCode"), "InsufficientInstanceCapacity");
	assert_string_equal(xmltree_text(e, "launchTemplateAndOverrides/overrides/subnetId"),
			    "subnet-c");
	assert_null(xmltree_next(e));
	/* a success answer is not an error answer, even with an errorSet */
	assert_int_equal(aws_xml_error(d, NULL, 0, NULL, 0), -1);
	xmltree_free(d);
}

static void test_ec2_error_shape(void **state)
{
	static const char xml[] =
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<Response><Errors><Error><Code>RequestLimitExceeded</Code>"
		"<Message>Request limit exceeded.</Message></Error></Errors>"
		"<RequestID>d2b8c8a4-example</RequestID></Response>";
	struct xmltree_doc *d = parse_ok(xml);
	char code[64], msg[256], rid[64], small[8];

	(void)state;
	assert_int_equal(aws_xml_error(d, code, sizeof(code), msg, sizeof(msg)), 0);
	assert_string_equal(code, "RequestLimitExceeded");
	assert_string_equal(msg, "Request limit exceeded.");
	assert_string_equal(aws_xml_request_id(d, rid, sizeof(rid)), "d2b8c8a4-example");
	/* truncated to fit */
	assert_int_equal(aws_xml_error(d, small, sizeof(small), NULL, 0), 0);
	assert_string_equal(small, "Request");
	xmltree_free(d);
}

static void test_query_error_shape(void **state)
{
	static const char xml[] =
		"<ErrorResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">\n"
		"  <Error>\n"
		"    <Type>Sender</Type>\n"
		"    <Code>\n      Throttling\n    </Code>\n"
		"    <Message>Rate exceeded</Message>\n"
		"  </Error>\n"
		"  <RequestId>a1b2-example</RequestId>\n"
		"</ErrorResponse>\n";
	struct xmltree_doc *d = parse_ok(xml);
	char code[64], msg[256], rid[64];

	(void)state;
	assert_int_equal(aws_xml_error(d, code, sizeof(code), msg, sizeof(msg)), 0);
	assert_string_equal(code, "Throttling");
	assert_string_equal(msg, "Rate exceeded");
	assert_string_equal(xmltree_text(xmltree_root(d), "Error/Type"), "Sender");
	assert_string_equal(aws_xml_request_id(d, rid, sizeof(rid)), "a1b2-example");
	xmltree_free(d);
	/* an error answer without a code still counts as one */
	d = parse_ok("<ErrorResponse><Error><Message>boom</Message></Error></ErrorResponse>");
	assert_int_equal(aws_xml_error(d, code, sizeof(code), msg, sizeof(msg)), 0);
	assert_string_equal(code, "");
	assert_string_equal(msg, "boom");
	xmltree_free(d);
	/* a <Response> without Errors is not one */
	d = parse_ok("<Response><Other/></Response>");
	assert_int_equal(aws_xml_error(d, code, sizeof(code), msg, sizeof(msg)), -1);
	assert_int_equal(aws_xml_error(NULL, code, sizeof(code), msg, sizeof(msg)), -1);
	xmltree_free(d);
}

static void test_namespace_prefix_cdata(void **state)
{
	struct xmltree_doc *d = parse_ok(
		"<a:Root xmlns:a=\"urn:x\"><a:Name><![CDATA[<raw> & ]]>tail</a:Name>"
		"<b>one<c>x</c>two</b></a:Root>");
	const struct xmltree_node *r = xmltree_root(d);

	(void)state;
	assert_string_equal(r->name, "Root");
	assert_string_equal(xmltree_text(r, "Name"), "<raw> & tail");
	/* an element's own text, not its children's */
	assert_string_equal(xmltree_text(r, "b"), "onetwo");
	assert_string_equal(xmltree_text(r, "b/c"), "x");
	assert_int_equal(xmltree_find(r, "b")->text_len, 6);
	assert_ptr_equal(xmltree_find(r, NULL), r);
	assert_ptr_equal(xmltree_find(r, ""), r);
	assert_null(xmltree_find(NULL, "b"));
	assert_string_equal(xmltree_text(NULL, "b"), "");
	assert_int_equal(xmltree_count(r, NULL), 2);
	assert_string_equal(xmltree_first(r, NULL)->name, "Name");
	xmltree_free(d);
	/* a name ending in ':' has no local part to take: it stays whole */
	d = parse_ok("<a:><b:c:d/></a:>");
	assert_string_equal(xmltree_root(d)->name, "a:");
	assert_string_equal(xmltree_first(xmltree_root(d), NULL)->name, "d");
	xmltree_free(d);
}

static void test_int64_strict(void **state)
{
	struct xmltree_doc *d = parse_ok(
		"<r><a> 42 </a><b>-9223372036854775808</b><c>9223372036854775807</c>"
		"<d>9223372036854775808</d><e>1e3</e><f>12abc</f><g></g><h>+7</h><i>-</i>"
		"<j>0x10</j><k>4 2</k></r>");
	const struct xmltree_node *r = xmltree_root(d);
	int64_t v;

	(void)state;
	assert_int_equal(xmltree_int64(r, "a", &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(xmltree_int64(r, "b", &v), 0);
	assert_true(v == INT64_MIN);
	assert_int_equal(xmltree_int64(r, "c", &v), 0);
	assert_true(v == INT64_MAX);
	assert_int_equal(xmltree_int64(r, "h", &v), 0);
	assert_int_equal(v, 7);
	v = 99;
	assert_int_equal(xmltree_int64(r, "d", &v), -1); /* overflow */
	assert_int_equal(xmltree_int64(r, "e", &v), -1);
	assert_int_equal(xmltree_int64(r, "f", &v), -1);
	assert_int_equal(xmltree_int64(r, "g", &v), -1);
	assert_int_equal(xmltree_int64(r, "i", &v), -1);
	assert_int_equal(xmltree_int64(r, "j", &v), -1);
	assert_int_equal(xmltree_int64(r, "k", &v), -1);
	assert_int_equal(xmltree_int64(r, "missing", &v), -1);
	assert_int_equal(v, 99); /* untouched on failure */
	xmltree_free(d);
}

static void test_doctype_and_entities_refused(void **state)
{
	static const char bomb[] =
		"<?xml version=\"1.0\"?>\n"
		"<!DOCTYPE lolz [\n"
		" <!ENTITY lol \"lol\">\n"
		" <!ENTITY lol2 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">\n"
		" <!ENTITY lol3 \"&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;\">\n"
		"]>\n"
		"<lolz>&lol3;</lolz>";
	static const char external[] =
		"<!DOCTYPE r SYSTEM \"file:///etc/passwd\"><r>&x;</r>";

	(void)state;
	parse_fails(bomb, strlen(bomb), "DOCTYPE");
	parse_fails(bomb, strlen(bomb), "line 2");
	parse_fails(external, strlen(external), "DOCTYPE");
	/* an undeclared entity is an error, not an empty string */
	parse_fails("<r>&x;</r>", 10, "undefined entity");
}

static void test_deep_nesting_refused(void **state)
{
	struct buf b = BUF_INIT;
	struct xmltree_doc *d;
	struct errbuf err = {{0}};
	int i;

	(void)state;
	/* exactly the limit parses */
	for (i = 0; i < XMLTREE_MAX_DEPTH; i++)
		buf_puts(&b, "<a>");
	for (i = 0; i < XMLTREE_MAX_DEPTH; i++)
		buf_puts(&b, "</a>");
	d = xmltree_parse(b.data, b.len, &err);
	assert_non_null(d);
	xmltree_free(d);
	/* one more is refused */
	b.len = 0;
	for (i = 0; i < XMLTREE_MAX_DEPTH + 1; i++)
		buf_puts(&b, "<a>");
	for (i = 0; i < XMLTREE_MAX_DEPTH + 1; i++)
		buf_puts(&b, "</a>");
	parse_fails(b.data, b.len, "nested deeper than 64");
	/* and a very deep document fails fast the same way */
	b.len = 0;
	for (i = 0; i < 100000; i++)
		buf_puts(&b, "<a>");
	parse_fails(b.data, b.len, "nested deeper");
	buf_free(&b);
}

static void test_truncated_and_not_xml(void **state)
{
	size_t cut;

	(void)state;
	/* every prefix of a real answer is refused, none crashes */
	for (cut = 0; cut < sizeof(fleet_xml) - 2; cut += 7) {
		struct errbuf err = {{0}};
		struct xmltree_doc *d = xmltree_parse(fleet_xml, cut, &err);

		if (d)
			fail_msg("a prefix of %zu bytes parsed", cut);
		assert_non_null(strstr(err.msg, "line "));
	}
	parse_fails("", 0, "no element found");
	parse_fails(NULL, 0, "no element found");
	parse_fails("{\"not\":\"xml\"}", 13, "line 1, column 1");
	parse_fails("<html><body>502 Bad Gateway</body>", 34, "no element found");
	parse_fails("<a></b>", 7, "mismatched tag");
	parse_fails("<a/><b/>", 8, "junk after document element");
	parse_fails("<a>\xff\xfe</a>", 9, "invalid token");
	/* a NUL byte inside is not text */
	parse_fails("<a>x\0y</a>", 10, "line 1");
}

static void test_huge_text_and_many_nodes(void **state)
{
	struct buf b = BUF_INIT;
	struct xmltree_doc *d;
	struct errbuf err = {{0}};
	char *fill;
	size_t i;

	(void)state;
	fill = malloc(XMLTREE_MAX_TEXT + 1);
	assert_non_null(fill);
	memset(fill, 'x', XMLTREE_MAX_TEXT + 1);
	/* 1 MiB of text is the limit: it parses whole */
	buf_puts(&b, "<r><t>");
	buf_append(&b, fill, XMLTREE_MAX_TEXT);
	buf_puts(&b, "</t></r>");
	d = xmltree_parse(b.data, b.len, &err);
	assert_non_null(d);
	assert_int_equal(xmltree_find(xmltree_root(d), "t")->text_len, XMLTREE_MAX_TEXT);
	xmltree_free(d);
	/* a byte more is refused */
	b.len = 0;
	buf_puts(&b, "<r><t>");
	buf_append(&b, fill, XMLTREE_MAX_TEXT + 1);
	buf_puts(&b, "</t></r>");
	parse_fails(b.data, b.len, "more than 1 MiB of text");
	free(fill);
	/* more than a million elements is refused */
	b.len = 0;
	buf_puts(&b, "<r>");
	for (i = 0; i < XMLTREE_MAX_NODES; i++)
		buf_puts(&b, "<i/>");
	buf_puts(&b, "</r>");
	assert_false(b.oom);
	parse_fails(b.data, b.len, "more than 1000000 elements");
	buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_autoscaling_groups),
		cmocka_unit_test(test_ec2_instances),
		cmocka_unit_test(test_create_fleet),
		cmocka_unit_test(test_ec2_error_shape),
		cmocka_unit_test(test_query_error_shape),
		cmocka_unit_test(test_namespace_prefix_cdata),
		cmocka_unit_test(test_int64_strict),
		cmocka_unit_test(test_doctype_and_entities_refused),
		cmocka_unit_test(test_deep_nesting_refused),
		cmocka_unit_test(test_truncated_and_not_xml),
		cmocka_unit_test(test_huge_text_and_many_nodes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
