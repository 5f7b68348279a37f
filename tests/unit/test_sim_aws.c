/*
 * Tests for the simulator's AWS flavour (sim/clouds/cloud_aws.c) and the AWS
 * face's parameter parsing (sim/clouds/aws_face.c): form decoding, strict
 * integers, the scenario's aws: section and its errors, ASGs converging to
 * their desired capacity with EC2 names and providerIDs, Failed scaling
 * activities under a no-capacity fault, and terminating in an ASG.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/clock.h"
#include "runtime/executor.h"
#include "sim/clouds/aws_face.h"
#include "sim/world/scenario.h"
#include "test_sim_cloud.h"

#define S CLOCK_NS_PER_S
#define EXAMPLE SOURCE_DIR "/examples/scenarios/aws.yaml"

static void test_form(void **state)
{
	struct aws_form f;
	struct errbuf err;
	const char *body = "Action=DescribeInstances&Version=2016-11-15&Filter.1.Name=tag%3Ateam"
			   "&Filter.1.Value.1=a+b%20c&&Empty=&Bare&X=1&X=2";

	(void)state;
	assert_int_equal(aws_form_parse(&f, body, strlen(body), &err), 0);
	assert_string_equal(aws_form_get(&f, "Action"), "DescribeInstances");
	assert_string_equal(aws_form_get(&f, "Filter.1.Name"), "tag:team");
	assert_string_equal(aws_form_get(&f, "Filter.1.Value.1"), "a b c");
	assert_string_equal(aws_form_get(&f, "Empty"), "");
	assert_string_equal(aws_form_get(&f, "Bare"), "");
	assert_string_equal(aws_form_get(&f, "X"), "2"); /* the last one */
	assert_null(aws_form_get(&f, "Missing"));
	aws_form_free(&f);

	assert_int_equal(aws_form_parse(&f, "A=%4", 4, &err), -1);
	assert_non_null(strstr(err.msg, "truncated"));
	assert_int_equal(aws_form_parse(&f, "A=%zz", 5, &err), -1);
	assert_non_null(strstr(err.msg, "bad %-escape"));
	assert_int_equal(aws_form_parse(&f, "A=%00", 5, &err), -1);
	assert_int_equal(aws_form_parse(&f, "A=b\0c", 5, &err), -1);
	assert_non_null(strstr(err.msg, "NUL"));
	assert_int_equal(aws_form_parse(&f, "", 0, &err), 0);
	assert_int_equal(f.n, 0);
	aws_form_free(&f);
}

static void test_parse_int(void **state)
{
	long long v = 7;

	(void)state;
	assert_int_equal(aws_parse_int("100", 1, 100, &v), 0);
	assert_int_equal(v, 100);
	assert_int_equal(aws_parse_int("101", 1, 100, &v), -1);
	assert_int_equal(aws_parse_int("0", 1, 100, &v), -1);
	assert_int_equal(aws_parse_int("-3", -5, 5, &v), 0);
	assert_int_equal(v, -3);
	assert_int_equal(v, -3);
	assert_int_equal(aws_parse_int("4x", 0, 100, &v), -1);
	assert_int_equal(aws_parse_int(" 4", 0, 100, &v), -1);
	assert_int_equal(aws_parse_int("", 0, 100, &v), -1);
	assert_int_equal(aws_parse_int("-", 0, 100, &v), -1);
	assert_int_equal(aws_parse_int("99999999999999999999", 0, 100, &v), -1);
	assert_int_equal(v, -3); /* untouched on failure */
}

static void test_example_parses(void **state)
{
	struct errbuf err;
	struct sim_scenario *sc = sim_scenario_load(EXAMPLE, &err);
	const struct sim_aws_conf *a;

	(void)state;
	if (!sc)
		fail_msg("%s", err.msg);
	a = sim_scenario_cloud(sc, &sim_cloud_aws);
	assert_non_null(a);
	assert_string_equal(a->region, "us-east-1");
	assert_string_equal(a->account, "123456789012");
	assert_string_equal(a->access_key_id, "AKIASIMULATED0000001");
	assert_null(a->session_token);
	assert_string_equal(a->container_token, "sim-container-token");
	assert_int_equal(a->credential_ttl_s, 3600);
	assert_int_equal(a->n_groups, 3);
	assert_int_equal(a->groups[0].mode, SIM_AWS_ASG);
	assert_int_equal(a->groups[0].n_zones, 3);
	assert_string_equal(a->groups[1].types[1], "p3.2xlarge");
	assert_int_equal(a->groups[1].n_tags, 3);
	assert_int_equal(a->groups[2].mode, SIM_AWS_FLEET);
	assert_string_equal(a->groups[2].launch_template, "burst");
	sim_scenario_free(sc);

	/* the scenarios without aws: stay the plain simulator */
	sc = sim_scenario_load(SOURCE_DIR "/examples/scenarios/smoke.yaml", &err);
	if (!sc)
		fail_msg("%s", err.msg);
	assert_null(sim_scenario_cloud(sc, &sim_cloud_aws));
	sim_scenario_free(sc);
}

#define GROUPS SIM_TEST_GROUPS("4")

static void expect_error(const char *aws, const char *want)
{
	sim_test_expect_error(GROUPS, "aws", aws, want);
}

static void test_parse_errors(void **state)
{
	(void)state;
	expect_error("  region: us-east-1\n", "credentials is required");
	expect_error("  credentials: {access_key_id: A}\n", "secret_access_key is required");
	expect_error("  credentials: {access_key_id: A, secret_access_key: B}\n"
		     "  groups: {workers: {mode: spot}}\n",
		     "aws.groups.workers.mode: expected asg or fleet, got \"spot\"");
	expect_error("  credentials: {access_key_id: A, secret_access_key: B}\n"
		     "  groups: {nosuch: {mode: asg}}\n", "no node group \"nosuch\"");
	expect_error("  credentials: {access_key_id: A, secret_access_key: B}\n"
		     "  groups: {workers: {zones: [eu-west-1a]}}\n",
		     "zone \"eu-west-1a\" is not in region us-east-1");
	expect_error("  credentials: {access_key_id: A, secret_access_key: B}\n"
		     "  account: \"12345\"\n", "account must be 12 digits");
	expect_error("  credentials: {access_key_id: A, secret_access_key: B}\n"
		     "  colour: blue\n", "unknown key \"colour\"");
	expect_error("  credentials: {access_key_id: A, secret_access_key: B}\n"
		     "  instance_types: [{name: x1.big, vcpus: 0, memory_mib: 1}]\n",
		     "out of range");
}

/* The world's AWS flavour. */
static struct sim_aws *aws_of(const struct run *r)
{
	return sim_world_flavour(r->w, &sim_cloud_aws);
}

static void run_start(struct run *r, const char *extra)
{
	char text[4096];

	snprintf(text, sizeof(text),
		 GROUPS
		 "cloud: {boot_delay: 10s, boot_jitter: 0s, launch_latency: 1s, shutdown_delay: 5s}\n"
		 "cluster: {register_delay: 1s}\n"
		 "initial_nodes: [{group: workers, count: 1}]\n"
		 "%s"
		 "aws:\n"
		 "  region: eu-west-1\n"
		 "  credentials: {access_key_id: A, secret_access_key: B}\n"
		 "  asg_retry: 5s\n"
		 "  groups:\n"
		 "    workers: {zones: [eu-west-1a, eu-west-1b], instance_types: [m5.large]}\n"
		 "    gpu: {zones: [eu-west-1c], instance_types: [g4dn.xlarge]}\n",
		 extra);
	sim_test_run_text(r, text);
}

static void test_asg_converges(void **state)
{
	struct run r;
	struct sim_cloud *c;
	struct sim_instance *const *inst;
	struct sim_node_info info;
	struct errbuf err;
	size_t n, k;
	int za = 0, zb = 0;

	(void)state;
	run_start(&r, "");
	c = r.w->cloud;
	executor_run_until(r.ex, 0);
	assert_int_equal(sim_aws_desired(aws_of(&r), 0), 1); /* max(min 1, 1 node) */
	assert_int_equal(sim_aws_desired(aws_of(&r), 1), 0);

	sim_cloud_lock(c);
	assert_int_equal(sim_aws_set_desired(aws_of(&r), 0, 5, &err), -1);
	assert_string_equal(err.msg, "New SetDesiredCapacity value 5 is above max value 4 for the AutoScalingGroup.");
	assert_int_equal(sim_aws_set_desired(aws_of(&r), 0, 0, &err), -1);
	assert_non_null(strstr(err.msg, "below min value 1"));
	assert_int_equal(sim_aws_set_desired(aws_of(&r), 0, 4, &err), 0);
	sim_cloud_unlock(c);

	executor_run_until(r.ex, 30 * S);
	inst = sim_cloud_instances(c, 0, &n);
	assert_int_equal(n, 4);
	for (k = 0; k < n; k++) {
		char want[160];

		assert_int_equal(inst[k]->state, INSTANCE_RUNNING);
		assert_int_equal(strlen(inst[k]->id), 19);
		assert_memory_equal(inst[k]->id, "i-", 2);
		snprintf(want, sizeof(want), "aws:///%s/%s", inst[k]->zone, inst[k]->id);
		assert_string_equal(inst[k]->provider_id, want);
		assert_string_equal(inst[k]->instance_type, "m5.large");
		assert_memory_equal(inst[k]->node_name, "ip-10-0-1-", 10);
		assert_non_null(strstr(inst[k]->node_name, ".eu-west-1.compute.internal"));
		za += strcmp(inst[k]->zone, "eu-west-1a") == 0;
		zb += strcmp(inst[k]->zone, "eu-west-1b") == 0;
		/* the node registered under the private DNS name */
		assert_int_equal(sim_cluster_node(r.w->cluster, inst[k]->node_name, &info), 0);
		assert_true(info.ready);
	}
	assert_int_equal(za, 2); /* spread over the zones */
	assert_int_equal(zb, 2);

	/* desired lowered while a launch is in flight: the group shrinks back
	 * once the launch is over */
	sim_cloud_lock(c);
	assert_int_equal(sim_aws_set_desired(aws_of(&r), 0, 1, &err), 0);
	assert_int_equal(sim_aws_set_desired(aws_of(&r), 0, 3, &err), 0);
	sim_cloud_unlock(c);
	executor_run_until(r.ex, 30 * S + 100 * CLOCK_NS_PER_MS);
	sim_cloud_lock(c);
	assert_int_equal(sim_aws_set_desired(aws_of(&r), 0, 2, &err), 0);
	sim_cloud_unlock(c);
	executor_run_until(r.ex, 60 * S);
	assert_int_equal(sim_cloud_target(c, 0), 2);
	sim_cloud_lock(c);
	assert_int_equal(sim_aws_set_desired(aws_of(&r), 0, 4, &err), 0);
	sim_cloud_unlock(c);
	executor_run_until(r.ex, 90 * S);
	assert_int_equal(sim_cloud_target(c, 0), 4);

	/* lowering desired terminates down to it */
	sim_cloud_lock(c);
	assert_int_equal(sim_aws_set_desired(aws_of(&r), 0, 2, &err), 0);
	sim_cloud_unlock(c);
	assert_int_equal(sim_cloud_target(c, 0), 2);

	/* terminate with decrement: desired follows; at min it is refused */
	sim_cloud_lock(c);
	{
		struct sim_aws_activity act;
		char id[96];
		int live = 0;

		inst = sim_cloud_instances(c, 0, &n);
		for (k = 0; k < n; k++) {
			if (inst[k]->state == INSTANCE_RUNNING) {
				if (!live++)
					snprintf(id, sizeof(id), "%s", inst[k]->id);
			}
		}
		assert_int_equal(live, 2);
		assert_int_equal(sim_aws_terminate_in_asg(aws_of(&r), id, true, &act, &err), 0);
		assert_string_equal(act.status, "InProgress");
		assert_non_null(strstr(act.cause, "shrinking the capacity from 2 to 1"));
		assert_int_equal(sim_aws_desired(aws_of(&r), 0), 1);
		for (k = 0; k < n; k++)
			if (inst[k]->state == INSTANCE_RUNNING)
				snprintf(id, sizeof(id), "%s", inst[k]->id);
		assert_int_equal(sim_aws_terminate_in_asg(aws_of(&r), id, true, &act, &err), -1);
		assert_non_null(strstr(err.msg, "desiredSize equals minSize (1)"));
		assert_int_equal(sim_aws_terminate_in_asg(aws_of(&r), "i-0000000000000000f", true, &act,
							  &err), -1);
		assert_non_null(strstr(err.msg, "No managed instance found"));
	}
	sim_cloud_unlock(c);
	run_end(&r);
}

static void test_no_capacity_activities(void **state)
{
	struct run r;
	struct sim_cloud *c;
	const struct sim_aws_activity *acts;
	struct errbuf err;
	size_t n, k, failed = 0;

	(void)state;
	run_start(&r, "faults: [{kind: launch_error, group: gpu, until: 12s, rate: 1, error: no_capacity}]\n");
	c = r.w->cloud;
	executor_run_until(r.ex, 0);
	sim_cloud_lock(c);
	assert_int_equal(sim_aws_set_desired(aws_of(&r), 1, 1, &err), 0); /* accepted all the same */
	sim_cloud_unlock(c);
	executor_run_until(r.ex, 3 * S);
	sim_cloud_lock(c);
	assert_int_equal(sim_aws_desired(aws_of(&r), 1), 1);
	assert_int_equal(sim_cloud_target(c, 1), 0);
	acts = sim_aws_activities(aws_of(&r), 1, &n);
	assert_int_equal(n, 1);
	assert_string_equal(acts[0].status, "Failed");
	assert_non_null(strstr(acts[0].message, "InsufficientInstanceCapacity - We currently do not have sufficient g4dn.xlarge capacity in the Availability Zone you requested (eu-west-1c)"));
	sim_cloud_unlock(c);
	/* the ASG retries every asg_retry; once the fault is over it launches */
	executor_run_until(r.ex, 40 * S);
	sim_cloud_lock(c);
	acts = sim_aws_activities(aws_of(&r), 1, &n);
	for (k = 0; k < n; k++)
		failed += strcmp(acts[k].status, "Failed") == 0;
	assert_true(failed >= 2);
	assert_string_equal(acts[n - 1].status, "Successful");
	assert_memory_equal(acts[n - 1].description, "Launching a new EC2 instance: i-", 32);
	assert_int_equal(sim_cloud_target(c, 1), 1);
	sim_cloud_unlock(c);
	run_end(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_form),
		cmocka_unit_test(test_parse_int),
		cmocka_unit_test(test_example_parses),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_asg_converges),
		cmocka_unit_test(test_no_capacity_activities),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
