/*
 * awserr: what an AWS error code, an HTTP status or a Failed scaling
 * activity's message means to the engine (providers/provider.h's classes),
 * and the code and request id of an answer already parsed (xmltree). No
 * retry loop.
 */
#ifndef LUASCALE_AWS_AWSERR_H
#define LUASCALE_AWS_AWSERR_H

#include <stdbool.h>

#include "providers/provider.h"

/*
 * The class of an AWS error answer. 'code' is the <Code> (NULL or "" when
 * the answer had none; a "Client." or "Server." prefix is ignored),
 * 'http_status' the status (0: no answer at all, a connection failure).
 * Throttling codes (aws_error_is_throttle) and 429 → THROTTLED; capacity
 * codes (aws_error_is_capacity) → NO_CAPACITY; VcpuLimitExceeded,
 * InstanceLimitExceeded, Max*CountExceeded, LimitExceeded → QUOTA;
 * UnauthorizedOperation, AccessDenied, AuthFailure, SignatureDoesNotMatch,
 * RequestExpired, InvalidClientTokenId, ExpiredToken... → AUTH;
 * *.NotFound, *NotFoundException → NOT_FOUND; InternalError,
 * ServiceUnavailable, ResourceContention, ScalingActivityInProgress, 5xx,
 * no answer → TRANSIENT; any other code → INVALID. A ValidationError is
 * INVALID here: use aws_error_class_msg to see Auto Scaling's "not found".
 */
enum provider_error aws_error_class(const char *code, long http_status);

/* aws_error_class, and also: a ValidationError (Auto Scaling's code for
 * everything) whose 'message' says "not found" or "does not exist" is
 * NOT_FOUND. 'message' may be NULL. */
enum provider_error aws_error_class_msg(const char *code, long http_status, const char *message);

/* Is 'code' one of botocore's throttling codes (retries/standard.py and
 * _retry.json: Throttling, ThrottlingException, RequestLimitExceeded,
 * EC2ThrottledException, SlowDown, ...)? NULL is not. */
bool aws_error_is_throttle(const char *code);

/* Is 'code' EC2's "no capacity for this right now" (InsufficientInstanceCapacity,
 * InsufficientHostCapacity, InsufficientFreeAddressesInSubnet,
 * UnfulfillableCapacity, Unsupported, ...)? A CreateFleet answer is no
 * capacity only when every errorSet code is one. NULL is not. */
bool aws_error_is_capacity(const char *code);

/*
 * The class of a Failed DescribeScalingActivities StatusMessage: a limit
 * ("than your current instance limit", "vCPU limit", VcpuLimitExceeded,
 * InstanceLimitExceeded, MaxSpotInstanceCountExceeded, "quota") → QUOTA;
 * InsufficientInstanceCapacity, "We currently do not have sufficient ...
 * capacity", "no Spot capacity", "not supported" → NO_CAPACITY; "not
 * authorized" → AUTH; an image, profile, template or parameter that "does
 * not exist" / is "not found" / "Invalid" → INVALID; any other failure →
 * NO_CAPACITY (the launch failed: back the group off, as the Cluster
 * Autoscaler does). NULL or "" → NO_CAPACITY.
 */
enum provider_error aws_activity_class(const char *status_message);

struct xmltree_doc;

/*
 * Recognises an AWS error answer: EC2's
 *   <Response><Errors><Error><Code/><Message/></Error></Errors><RequestID/></Response>
 * Query's (Auto Scaling, STS)
 *   <ErrorResponse><Error><Type/><Code/><Message/></Error><RequestId/></ErrorResponse>
 * and a bare <Error><Code/><Message/></Error>. Copies the first error's
 * trimmed code and message (truncated to fit; either buffer may be NULL
 * with size 0). Returns 0 for an error answer (code may be "" when the
 * cloud gave none), -1 when the document is not one ('d' may be NULL).
 */
int aws_xml_error(const struct xmltree_doc *d, char *code, size_t code_len, char *msg,
		 size_t msg_len);

/* The request id of an answer, success or error (requestId, RequestId,
 * RequestID, ResponseMetadata/RequestId), trimmed, into 'out'; "" when none.
 * Returns 'out'. */
const char *aws_xml_request_id(const struct xmltree_doc *d, char *out, size_t outlen);

#endif
