/*
 * Tests for providers/aws/awserr.c: AWS error codes and HTTP statuses to
 * provider_error classes, botocore's throttling codes, capacity codes, and
 * the phrases of Failed scaling activities as AWS writes them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "providers/aws/awserr.h"

static void test_codes(void **state)
{
	static const struct {
		const char *code;
		long status;
		enum provider_error want;
	} cases[] = {
		{"RequestLimitExceeded", 503, PROVIDER_THROTTLED},
		{"Throttling", 400, PROVIDER_THROTTLED},
		{"ThrottlingException", 400, PROVIDER_THROTTLED},
		{"EC2ThrottledException", 503, PROVIDER_THROTTLED},
		{"SlowDown", 503, PROVIDER_THROTTLED},
		{NULL, 429, PROVIDER_THROTTLED},
		{"", 509, PROVIDER_THROTTLED},
		{"InsufficientInstanceCapacity", 500, PROVIDER_NO_CAPACITY},
		{"Server.InsufficientInstanceCapacity", 500, PROVIDER_NO_CAPACITY},
		{"UnfulfillableCapacity", 400, PROVIDER_NO_CAPACITY},
		{"InsufficientFreeAddressesInSubnet", 400, PROVIDER_NO_CAPACITY},
		{"VcpuLimitExceeded", 400, PROVIDER_QUOTA},
		{"Client.InstanceLimitExceeded", 400, PROVIDER_QUOTA},
		{"MaxSpotInstanceCountExceeded", 400, PROVIDER_QUOTA},
		{"MaxFleetCountExceeded", 400, PROVIDER_QUOTA},
		{"LimitExceeded", 400, PROVIDER_QUOTA},
		{"UnauthorizedOperation", 403, PROVIDER_AUTH},
		{"AccessDenied", 403, PROVIDER_AUTH},
		{"AuthFailure", 401, PROVIDER_AUTH},
		{"SignatureDoesNotMatch", 403, PROVIDER_AUTH},
		{"RequestExpired", 400, PROVIDER_AUTH},
		{"InvalidClientTokenId", 403, PROVIDER_AUTH},
		{"ExpiredToken", 400, PROVIDER_AUTH},
		{"InvalidIdentityToken", 400, PROVIDER_AUTH},
		{"InvalidInstanceID.NotFound", 400, PROVIDER_NOT_FOUND},
		{"InvalidLaunchTemplateName.NotFoundException", 400, PROVIDER_NOT_FOUND},
		{"InvalidLaunchTemplateId.VersionNotFound", 400, PROVIDER_NOT_FOUND},
		{"InvalidSubnetID.NotFound", 400, PROVIDER_NOT_FOUND},
		{"InternalError", 500, PROVIDER_TRANSIENT},
		{"ServiceUnavailable", 503, PROVIDER_TRANSIENT},
		{"ResourceContention", 400, PROVIDER_TRANSIENT},
		{"ScalingActivityInProgress", 400, PROVIDER_TRANSIENT},
		{NULL, 502, PROVIDER_TRANSIENT},
		{NULL, 0, PROVIDER_TRANSIENT},
		{"SomethingNew", 500, PROVIDER_TRANSIENT},
		{"InvalidParameterValue", 400, PROVIDER_INVALID},
		{"ValidationError", 400, PROVIDER_INVALID},
		{"MissingParameter", 400, PROVIDER_INVALID},
		{NULL, 403, PROVIDER_AUTH},
		{NULL, 404, PROVIDER_NOT_FOUND},
		{NULL, 400, PROVIDER_INVALID},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum provider_error got = aws_error_class(cases[i].code, cases[i].status);

		if (got != cases[i].want)
			fail_msg("%s/%ld: got %s, want %s", cases[i].code ? cases[i].code : "(none)",
				 cases[i].status, provider_error_str(got),
				 provider_error_str(cases[i].want));
	}
}

static void test_validation_error_messages(void **state)
{
	(void)state;
	/* what Auto Scaling answers for an unknown instance or group */
	assert_int_equal(aws_error_class_msg("ValidationError", 400,
					     "Instance Id not found - No managed instance found for "
					     "instance ID: i-0123456789abcdef0"),
			 PROVIDER_NOT_FOUND);
	assert_int_equal(aws_error_class_msg("ValidationError", 400,
					     "AutoScalingGroup name not found - AutoScalingGroup "
					     "'workers' not found"),
			 PROVIDER_NOT_FOUND);
	assert_int_equal(aws_error_class_msg("ValidationError", 400,
					     "New SetDesiredCapacity value 11 is above max value 10 "
					     "for the AutoScalingGroup."),
			 PROVIDER_INVALID);
	assert_int_equal(aws_error_class_msg("ValidationError", 400, NULL), PROVIDER_INVALID);
	/* the message never overrides a code that says more */
	assert_int_equal(aws_error_class_msg("Throttling", 400, "not found"), PROVIDER_THROTTLED);
}

static void test_predicates(void **state)
{
	(void)state;
	assert_true(aws_error_is_throttle("RequestLimitExceeded"));
	assert_true(aws_error_is_throttle("Throttling"));
	assert_true(aws_error_is_throttle("TooManyRequestsException"));
	assert_true(aws_error_is_throttle("PriorRequestNotComplete"));
	assert_false(aws_error_is_throttle("InsufficientInstanceCapacity"));
	assert_false(aws_error_is_throttle("throttling"));
	assert_false(aws_error_is_throttle(""));
	assert_false(aws_error_is_throttle(NULL));
	assert_true(aws_error_is_capacity("InsufficientInstanceCapacity"));
	assert_true(aws_error_is_capacity("UnfulfillableCapacity"));
	assert_true(aws_error_is_capacity("Unsupported"));
	assert_false(aws_error_is_capacity("VcpuLimitExceeded"));
	assert_false(aws_error_is_capacity("InvalidParameterValue"));
	assert_false(aws_error_is_capacity(NULL));
}

static void test_activity_messages(void **state)
{
	static const struct {
		const char *msg;
		enum provider_error want;
	} cases[] = {
		{"We currently do not have sufficient m5.large capacity in the Availability Zone you "
		 "requested (us-east-1a). Our system will be working on provisioning additional "
		 "capacity. Launching EC2 instance failed.", PROVIDER_NO_CAPACITY},
		{"Could not launch On-Demand Instances. InsufficientInstanceCapacity - There is no "
		 "capacity available. Launching EC2 instance failed.", PROVIDER_NO_CAPACITY},
		{"Could not launch Spot Instances. UnfulfillableCapacity - Unable to fulfill capacity "
		 "due to your request configuration. Launching EC2 instance failed.",
		 PROVIDER_NO_CAPACITY},
		{"There is no Spot capacity available that matches your request. Launching EC2 "
		 "instance failed.", PROVIDER_NO_CAPACITY},
		{"Your requested instance type (p4d.24xlarge) is not supported in your requested "
		 "Availability Zone (us-east-1e). Launching EC2 instance failed.",
		 PROVIDER_NO_CAPACITY},
		{"You have requested more instances (1) than your current instance limit of 0 allows "
		 "for the specified instance type. Please visit http://aws.amazon.com/contact-us/"
		 "ec2-request to request an adjustment to this limit. Launching EC2 instance failed.",
		 PROVIDER_QUOTA},
		{"You have requested more vCPU capacity than your current vCPU limit of 32 allows for "
		 "the instance bucket that the specified instance type belongs to. Launching EC2 "
		 "instance failed.", PROVIDER_QUOTA},
		{"Could not launch On-Demand Instances. VcpuLimitExceeded - You have requested more "
		 "vCPU capacity than your current vCPU limit of 64 allows.", PROVIDER_QUOTA},
		{"Could not launch Spot Instances. MaxSpotInstanceCountExceeded - Max spot instance "
		 "count exceeded. Launching EC2 instance failed.", PROVIDER_QUOTA},
		{"You are not authorized to use launch template: lt-0123. Launching EC2 instance "
		 "failed.", PROVIDER_AUTH},
		{"The image id '[ami-0123]' does not exist. Launching EC2 instance failed.",
		 PROVIDER_INVALID},
		{"Invalid IAM Instance Profile name. Launching EC2 instance failed.", PROVIDER_INVALID},
		{"Launching EC2 instance failed.", PROVIDER_NO_CAPACITY},
		{"", PROVIDER_NO_CAPACITY},
		{NULL, PROVIDER_NO_CAPACITY},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum provider_error got = aws_activity_class(cases[i].msg);

		if (got != cases[i].want)
			fail_msg("case %zu: got %s, want %s", i, provider_error_str(got),
				 provider_error_str(cases[i].want));
	}
	/* every class an activity gives backs the group off */
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_true(provider_error_backs_off_group(aws_activity_class(cases[i].msg)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_codes),
		cmocka_unit_test(test_validation_error_messages),
		cmocka_unit_test(test_predicates),
		cmocka_unit_test(test_activity_messages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
