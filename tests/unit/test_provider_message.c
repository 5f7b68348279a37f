/*
 * A cloud's error as luascale says it (provider_cloud_message): the cloud's
 * code first, then its message, the likely cause (clock skew, a wrong key
 * or secret, a missing role) and where it happened; at most 2 KiB, cut at
 * the tail, never before the code. The bodies are the clouds' own error
 * shapes: a GCE token endpoint's invalid_grant, an Entra AADSTS answer,
 * AWS Query/EC2 XML errors, ARM and Google API errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "providers/provider.h"

#define CLOCK_HINT "(likely cause: clock skew"
#define KEY_HINT "(likely cause: wrong key or secret"
#define ROLE_HINT "(likely cause: missing role or permission"

static const char *msg(const char *code, const char *message, const char *context)
{
	static char out[PROVIDER_MESSAGE_MAX];

	provider_cloud_message(out, sizeof(out), code, message, context);
	return out;
}

static void assert_prefix(const char *s, const char *prefix)
{
	if (strncmp(s, prefix, strlen(prefix)) != 0)
		fail_msg("\"%s\" does not start with \"%s\"", s, prefix);
}

static void assert_has(const char *s, const char *part)
{
	if (!strstr(s, part))
		fail_msg("\"%s\" does not hold \"%s\"", s, part);
}

/* A service-account key path of about 1 KiB: what ate the old 256 bytes. */
static void long_where(char *out, size_t len)
{
	size_t n;

	n = (size_t)snprintf(out, len, "service account key /etc/luascale/");
	while (n + 12 < len - 80)
		n += (size_t)snprintf(out + n, len - n, "deep-folder/");
	snprintf(out + n, len - n, "key.json: token endpoint https://oauth2.googleapis.com/token: HTTP 400");
}

static void test_gce_invalid_grant_clock(void **state)
{
	char where[1100];
	const char *m;

	(void)state;
	long_where(where, sizeof(where));
	m = msg("invalid_grant",
		"Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable "
		"timeframe. Check your iat and exp values in the JWT claim.", where);
	assert_prefix(m, "invalid_grant: Invalid JWT: Token must be a short-lived token (60 "
			 "minutes) and in a reasonable timeframe. Check your iat and exp values in "
			 "the JWT claim. " CLOCK_HINT);
	/* the long path follows, whole here (2 KiB hold it) */
	assert_has(m, "; service account key /etc/luascale/deep-folder/");
	assert_has(m, "key.json: token endpoint https://oauth2.googleapis.com/token: HTTP 400");
	assert_true(strlen(m) < PROVIDER_MESSAGE_MAX);
}

static void test_gce_invalid_grant_signature_is_a_wrong_key(void **state)
{
	(void)state;
	assert_prefix(msg("invalid_grant", "Invalid JWT Signature.", "service account key k.json"),
		      "invalid_grant: Invalid JWT Signature. " KEY_HINT);
	/* an invalid_grant that says neither: no guess */
	assert_null(strstr(msg("invalid_grant", "Bad Request", NULL), "likely cause"));
	assert_string_equal(msg("invalid_grant", "Bad Request", NULL), "invalid_grant: Bad Request");
}

static void test_entra_aadsts(void **state)
{
	static const char desc[] =
		"AADSTS7000215: Invalid client secret provided. Ensure the secret being sent in the "
		"request is the client secret value, not the client secret ID, for a secret added to "
		"app '00001111-aaaa-2222-bbbb-3333cccc4444'.\r\nTrace ID: "
		"0000aaaa-11bb-cccc-dd33-eeeeee333333\r\nCorrelation ID: "
		"aaaa0000-bb11-2222-33cc-444444dddddd\r\nTimestamp: 2026-01-09 02:02:12Z";
	const char *m;

	(void)state;
	/* the AADSTS code leads (named once), the description whole, on one line */
	m = msg("AADSTS7000215", desc, "client-secret: token endpoint "
		"https://login.microsoftonline.com/t/oauth2/v2.0/token: HTTP 401 invalid_client");
	assert_prefix(m, "AADSTS7000215: Invalid client secret provided. Ensure the secret");
	assert_null(strstr(m + 1, "AADSTS7000215"));
	assert_has(m, "'00001111-aaaa-2222-bbbb-3333cccc4444'. Trace ID: "
		      "0000aaaa-11bb-cccc-dd33-eeeeee333333 Correlation ID:");
	assert_has(m, "Timestamp: 2026-01-09 02:02:12Z " KEY_HINT);
	assert_has(m, "; client-secret: token endpoint");
	assert_null(strchr(m, '\r'));
	assert_null(strchr(m, '\n'));
	/* the OAuth code alone still finds Entra's in the description */
	assert_int_equal(provider_error_cause("invalid_client", desc), PROVIDER_CAUSE_KEY);
	assert_int_equal(provider_error_cause("invalid_client",
					      "AADSTS700024: Client assertion is not within its "
					      "valid time range."), PROVIDER_CAUSE_CLOCK);
	assert_int_equal(provider_error_cause("AADSTS7000222", "The provided client secret keys "
					      "for app are expired."), PROVIDER_CAUSE_KEY);
	assert_int_equal(provider_error_cause("AADSTS700016", NULL), PROVIDER_CAUSE_KEY);
	assert_int_equal(provider_error_cause("AADSTS70021", NULL), PROVIDER_CAUSE_KEY);
}

static void test_aws_codes(void **state)
{
	(void)state;
	assert_prefix(msg("RequestExpired", "Request has expired.", "DescribeInstances (request r-1)"),
		      "RequestExpired: Request has expired. " CLOCK_HINT);
	/* SignatureDoesNotMatch: clock skew only when it says the signature expired */
	assert_prefix(msg("SignatureDoesNotMatch", "Signature expired: 20191029T154623Z is now "
			  "earlier than 20191029T163344Z (20191029T164844Z - 15 min.)", NULL),
		      "SignatureDoesNotMatch: Signature expired: 20191029T154623Z is now earlier "
		      "than 20191029T163344Z (20191029T164844Z - 15 min.) " CLOCK_HINT);
	assert_prefix(msg("SignatureDoesNotMatch", "The request signature we calculated does not "
			  "match the signature you provided. Check your AWS Secret Access Key and "
			  "signing method.", "DescribeAutoScalingGroups"),
		      "SignatureDoesNotMatch: The request signature we calculated does not match");
	assert_has(msg("SignatureDoesNotMatch", "The request signature we calculated does not "
		       "match the signature you provided.", NULL), KEY_HINT);
	assert_int_equal(provider_error_cause("AuthFailure", "AWS was not able to validate the "
					      "provided access credentials"), PROVIDER_CAUSE_KEY);
	assert_int_equal(provider_error_cause("InvalidClientTokenId", "The security token included "
					      "in the request is invalid."), PROVIDER_CAUSE_KEY);
	assert_int_equal(provider_error_cause("RequestTimeTooSkewed", NULL), PROVIDER_CAUSE_CLOCK);
	assert_prefix(msg("UnauthorizedOperation", "You are not authorized to perform this "
			  "operation.", "TerminateInstances (request r-2)"),
		      "UnauthorizedOperation: You are not authorized to perform this operation. "
		      ROLE_HINT);
	assert_int_equal(provider_error_cause("Client.UnauthorizedOperation", NULL), PROVIDER_CAUSE_ROLE);
	assert_int_equal(provider_error_cause("AccessDenied", "User: arn:aws:sts::1:assumed-role/x "
					      "is not authorized to perform: autoscaling:Describe"),
			 PROVIDER_CAUSE_ROLE);
	/* no guess where the code says nothing about credentials */
	assert_int_equal(provider_error_cause("InsufficientInstanceCapacity", "We currently do not "
					      "have sufficient m5.large capacity"), PROVIDER_CAUSE_NONE);
	assert_null(strstr(msg("ValidationError", "not valid", NULL), "likely cause"));
}

static void test_arm_and_google_roles(void **state)
{
	(void)state;
	assert_prefix(msg("AuthorizationFailed", "The client 'c' with object id 'o' does not have "
			  "authorization to perform action 'Microsoft.Compute/virtualMachineScaleSets/"
			  "read' over scope '/subscriptions/s' or the scope is invalid.",
			  "GET virtualMachineScaleSets/pool1: HTTP 403"),
		      "AuthorizationFailed: The client 'c' with object id 'o' does not have");
	assert_has(msg("AuthorizationFailed", "x", NULL), ROLE_HINT);
	assert_has(msg("PERMISSION_DENIED", "Required 'compute.instanceGroupManagers.get' "
		       "permission for 'projects/p/zones/z/instanceGroupManagers/g'",
		       "GET zones/z/instanceGroupManagers/g: HTTP 403 forbidden"), ROLE_HINT);
	assert_int_equal(provider_error_cause("forbidden", NULL), PROVIDER_CAUSE_ROLE);
	assert_int_equal(provider_error_cause("ACCESS_TOKEN_SCOPE_INSUFFICIENT", NULL),
			 PROVIDER_CAUSE_ROLE);
	assert_int_equal(provider_error_cause("ZONE_RESOURCE_POOL_EXHAUSTED", NULL),
			 PROVIDER_CAUSE_NONE);
	assert_int_equal(provider_error_cause(NULL, NULL), PROVIDER_CAUSE_NONE);
	assert_string_equal(provider_cause_hint(PROVIDER_CAUSE_NONE), "");
}

/* A message longer than the bound: cut at its tail; the code, the hint and
 * the head of the context stay; the whole is at most 2 KiB. */
static void test_cut_at_the_tail_never_the_code(void **state)
{
	char big[6000], where[1100];
	const char *m;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(big) - 1; i++)
		big[i] = (char)('a' + i % 26);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "Signature expired: ", 19);
	long_where(where, sizeof(where));
	m = msg("SignatureDoesNotMatch", big, where);
	assert_true(strlen(m) <= PROVIDER_MESSAGE_MAX - 1);
	assert_true(strlen(m) > PROVIDER_MESSAGE_MAX - 40);
	assert_prefix(m, "SignatureDoesNotMatch: Signature expired: ");
	assert_has(m, "... " CLOCK_HINT);
	assert_has(m, "; service account key /etc/luascale/deep-folder/");
	/* the context is what gave way: not all of it fits */
	assert_null(strstr(m, "HTTP 400"));

	/* a long context alone is cut at its tail too, the code first */
	m = msg("AccessDenied", "no", big);
	assert_prefix(m, "AccessDenied: no " ROLE_HINT);
	assert_int_equal(strlen(m), PROVIDER_MESSAGE_MAX - 1);

	/* a small buffer keeps the code */
	{
		char small[256];

		provider_cloud_message(small, sizeof(small), "AADSTS7000215", big, where);
		assert_prefix(small, "AADSTS7000215: Signature expired: ");
		assert_true(strlen(small) < sizeof(small));
	}
}

/* No code: the message comes first; control characters become spaces; a
 * status can be rebuilt from its own message (the auth paths do). */
static void test_no_code_and_aliasing(void **state)
{
	struct provider_status st;

	(void)state;
	assert_string_equal(msg(NULL, "line one\n\tline two  ", "GET x"), "line one line two; GET x");
	assert_string_equal(msg("", NULL, "POST https://sts/: HTTP 503"), "POST https://sts/: HTTP 503");
	memset(&st, 0, sizeof(st));
	snprintf(st.message, sizeof(st.message), "invalid_grant: Invalid JWT Signature. %s); key k",
		 KEY_HINT ": x");
	provider_status_cloud(&st, PROVIDER_AUTH, NULL, st.message, "%s not sent", "GET zones/z");
	assert_int_equal(st.code, PROVIDER_AUTH);
	assert_prefix(st.message, "invalid_grant: Invalid JWT Signature. " KEY_HINT);
	assert_has(st.message, "; key k; GET zones/z not sent");
	/* the hint is not said twice */
	assert_null(strstr(strstr(st.message, "likely cause") + 1, "likely cause"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gce_invalid_grant_clock),
		cmocka_unit_test(test_gce_invalid_grant_signature_is_a_wrong_key),
		cmocka_unit_test(test_entra_aadsts),
		cmocka_unit_test(test_aws_codes),
		cmocka_unit_test(test_arm_and_google_roles),
		cmocka_unit_test(test_cut_at_the_tail_never_the_code),
		cmocka_unit_test(test_no_code_and_aliasing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
