/*
 * awserr: the tables of AWS error codes by class (from botocore's retry
 * rules, EC2's and Auto Scaling's error lists and Karpenter's choices) and
 * the phrases of failed scaling activities, and AWS's error answers read
 * from an XML tree (aws_xml_error, aws_xml_request_id). Owns no state.
 */
#include "providers/aws/awserr.h"

#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "providers/cloudhttp/xmltree.h"

static bool in_list(const char *code, const char *const *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(code, list[i]) == 0)
			return true;
	return false;
}

#define IN(code, list) in_list((code), (list), sizeof(list) / sizeof((list)[0]))

/* "Client.InstanceLimitExceeded" → "InstanceLimitExceeded" */
static const char *bare(const char *code)
{
	if (!code)
		return "";
	if (strncmp(code, "Client.", 7) == 0)
		return code + 7;
	if (strncmp(code, "Server.", 7) == 0)
		return code + 7;
	return code;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Case-insensitive substring search. */
static bool has(const char *haystack, const char *needle)
{
	size_t n = strlen(needle);
	const char *p;

	for (p = haystack; *p; p++)
		if (strncasecmp(p, needle, n) == 0)
			return true;
	return false;
}

/* botocore retries/standard.py _THROTTLED_ERROR_CODES and _retry.json */
static const char *const throttle_codes[] = {
	"Throttling",
	"ThrottlingException",
	"ThrottledException",
	"RequestThrottledException",
	"TooManyRequestsException",
	"ProvisionedThroughputExceededException",
	"TransactionInProgressException",
	"RequestLimitExceeded",
	"BandwidthLimitExceeded",
	"LimitExceededException",
	"RequestThrottled",
	"SlowDown",
	"PriorRequestNotComplete",
	"EC2ThrottledException",
};

bool aws_error_is_throttle(const char *code)
{
	return code && *code && IN(bare(code), throttle_codes);
}

static const char *const capacity_codes[] = {
	"InsufficientInstanceCapacity",
	"InsufficientHostCapacity",
	"InsufficientReservedInstanceCapacity",
	"InsufficientCapacity",
	"InsufficientCapacityOnHost",
	"InsufficientFreeAddressesInSubnet",
	"UnfulfillableCapacity",
	"Unsupported",            /* this type not offered in this zone now (Karpenter: unfulfillable) */
	"SpotMaxPriceTooLow",
	"capacity-not-available", /* a Spot Fleet / EC2 Fleet errorSet code */
};

bool aws_error_is_capacity(const char *code)
{
	return code && *code && IN(bare(code), capacity_codes);
}

static const char *const quota_codes[] = {
	"VcpuLimitExceeded",
	"InstanceLimitExceeded",
	"MaxSpotInstanceCountExceeded",
	"MaxFleetCountExceeded",
	"MaxSpotFleetRequestCountExceeded",
	"MaxIOPSLimitExceeded",
	"VolumeLimitExceeded",
	"AddressLimitExceeded",
	"ResourceLimitExceeded",
	"ReservationCapacityExceeded",
	"LimitExceeded",          /* Auto Scaling: too many groups, configurations, ... */
	"ServiceQuotaExceededException",
};

static const char *const auth_codes[] = {
	"UnauthorizedOperation",
	"AccessDenied",
	"AccessDeniedException",
	"AuthFailure",
	"SignatureDoesNotMatch",
	"RequestExpired",          /* the clock is more than 15 minutes off */
	"InvalidClientTokenId",
	"MissingAuthenticationToken",
	"IncompleteSignature",
	"ExpiredToken",
	"ExpiredTokenException",
	"InvalidToken",
	"InvalidAccessKeyId",
	"UnrecognizedClientException",
	"NotAuthorized",
	"OptInRequired",
	"Blocked",
	"PendingVerification",
	"InvalidIdentityToken",    /* STS AssumeRoleWithWebIdentity */
	"IDPRejectedClaim",
};

static const char *const transient_codes[] = {
	"InternalError",
	"InternalFailure",
	"InternalServiceError",
	"ServiceUnavailable",
	"ServiceUnavailableException",
	"Unavailable",
	"RequestTimeout",
	"RequestTimeoutException",
	"ResourceContention",
	"ResourceInUse",             /* Auto Scaling: another update of the group is going on */
	"ScalingActivityInProgress", /* Auto Scaling: it is busy with the group */
	"IDPCommunicationError",     /* STS: the identity provider did not answer */
	"ConcurrentTagAccess",
};

static bool is_not_found(const char *code)
{
	return ends_with(code, ".NotFound") || ends_with(code, "NotFoundException") ||
	       strcmp(code, "NotFound") == 0 ||
	       strcmp(code, "NoSuchEntity") == 0 || ends_with(code, ".VersionNotFound");
}

enum provider_error aws_error_class_msg(const char *code, long http_status, const char *message)
{
	const char *c = bare(code);

	if (aws_error_is_throttle(c) || http_status == 429 || http_status == 509)
		return PROVIDER_THROTTLED;
	if (aws_error_is_capacity(c))
		return PROVIDER_NO_CAPACITY;
	if (*c && IN(c, quota_codes))
		return PROVIDER_QUOTA;
	if (*c && IN(c, auth_codes))
		return PROVIDER_AUTH;
	if (*c && is_not_found(c))
		return PROVIDER_NOT_FOUND;
	if (*c && IN(c, transient_codes))
		return PROVIDER_TRANSIENT;
	if (strcmp(c, "ValidationError") == 0 && message &&
	    (has(message, "not found") || has(message, "does not exist")))
		return PROVIDER_NOT_FOUND;
	if (http_status == 0 || http_status >= 500)
		return PROVIDER_TRANSIENT;
	if (*c)
		return PROVIDER_INVALID;
	if (http_status == 401 || http_status == 403)
		return PROVIDER_AUTH;
	if (http_status == 404)
		return PROVIDER_NOT_FOUND;
	return PROVIDER_INVALID;
}

enum provider_error aws_error_class(const char *code, long http_status)
{
	return aws_error_class_msg(code, http_status, NULL);
}

enum provider_error aws_activity_class(const char *m)
{
	if (!m || !*m)
		return PROVIDER_NO_CAPACITY;
	/* limits first: "more vCPU capacity than your current vCPU limit" names capacity too */
	if (has(m, "than your current instance limit") || has(m, "vCPU limit") ||
	    has(m, "VcpuLimitExceeded") || has(m, "InstanceLimitExceeded") ||
	    has(m, "MaxSpotInstanceCountExceeded") || has(m, "Max spot instance count exceeded") ||
	    has(m, "quota") || (has(m, "LimitExceeded") && !has(m, "RequestLimitExceeded")))
		return PROVIDER_QUOTA;
	if (has(m, "InsufficientInstanceCapacity") || has(m, "InsufficientHostCapacity") ||
	    has(m, "InsufficientFreeAddressesInSubnet") || has(m, "UnfulfillableCapacity") ||
	    has(m, "sufficient capacity") || has(m, "do not have sufficient") ||
	    has(m, "no Spot capacity") || has(m, "capacity-not-available") ||
	    has(m, "is not supported") || has(m, "not currently supported") ||
	    has(m, "currently not supported"))
		return PROVIDER_NO_CAPACITY;
	if (has(m, "not authorized") || has(m, "UnauthorizedOperation") ||
	    has(m, "AccessDenied") || has(m, "AuthFailure"))
		return PROVIDER_AUTH;
	if (has(m, "does not exist") || has(m, "not found") || has(m, "Invalid") ||
	    has(m, "NotFound"))
		return PROVIDER_INVALID;
	return PROVIDER_NO_CAPACITY;
}

/* ---- error answers in XML ---- */

/* Copies the trimmed text, truncated to fit. */
static void copy_trunc(const struct xmltree_node *n, const char *path, char *out, size_t outlen)
{
	const char *s;
	size_t len;

	if (!out || !outlen)
		return;
	xmltree_trimmed(n, path, &s, &len);
	if (len >= outlen)
		len = outlen - 1;
	memcpy(out, s, len);
	out[len] = '\0';
}

int aws_xml_error(const struct xmltree_doc *d, char *code, size_t code_len, char *msg,
		 size_t msg_len)
{
	const struct xmltree_node *r = xmltree_root(d), *e = NULL;

	if (code && code_len)
		code[0] = '\0';
	if (msg && msg_len)
		msg[0] = '\0';
	if (!r)
		return -1;
	if (strcmp(r->name, "Response") == 0)
		e = xmltree_find(r, "Errors/Error");
	else if (strcmp(r->name, "ErrorResponse") == 0)
		e = xmltree_child(r, "Error");
	else if (strcmp(r->name, "Error") == 0)
		e = r;
	if (!e)
		return -1;
	copy_trunc(e, "Code", code, code_len);
	copy_trunc(e, "Message", msg, msg_len);
	return 0;
}

const char *aws_xml_request_id(const struct xmltree_doc *d, char *out, size_t outlen)
{
	static const char *const paths[] = {"requestId", "RequestId", "RequestID",
					    "ResponseMetadata/RequestId", NULL};
	const struct xmltree_node *r = xmltree_root(d);
	int i;

	if (outlen)
		out[0] = '\0';
	for (i = 0; r && paths[i]; i++)
		if (xmltree_find(r, paths[i])) {
			copy_trunc(r, paths[i], out, outlen);
			break;
		}
	return out;
}
