/*
 * sim/aws_face: the simulated cloud served as AWS (libmicrohttpd, a thread
 * per connection, 127.0.0.1 only): the EC2 (2016-11-15), Auto Scaling
 * (2011-01-01) and STS (2011-06-15) Query APIs an AWS node-group provider
 * calls, SigV4-checked against the scenario's credentials, plus IMDSv2 and
 * container credentials. A thin wire layer over sim/clouds/cloud_aws.c.
 *
 * Served on one port:
 *   POST /                    Action=..&Version=.. (x-www-form-urlencoded),
 *                             dispatched by the service of the signature's
 *                             credential scope (ec2, autoscaling, sts):
 *     autoscaling  DescribeAutoScalingGroups SetDesiredCapacity
 *                  TerminateInstanceInAutoScalingGroup DescribeScalingActivities
 *     ec2          DescribeInstances CreateFleet (Type=instant) TerminateInstances
 *                  DescribeInstanceTypes DescribeLaunchTemplateVersions
 *     sts          GetCallerIdentity, AssumeRoleWithWebIdentity (unsigned)
 *     ec2          DescribeSpotPriceHistory (sim/clouds/aws_pricing_face.h's prices)
 *   POST /                    X-Amz-Target: AWSPriceListService.GetProducts
 *                             (JSON 1.1, signed for pricing in us-east-1)
 *   PUT  /latest/api/token    IMDSv2 session token
 *   GET  /latest/meta-data/iam/security-credentials/[ROLE]
 *   GET  /latest/meta-data/placement/availability-zone | /placement/region
 *   GET  /latest/meta-data/instance-id
 *   GET  /v1/credentials      container credentials (Authorization: the
 *                             scenario's container_token)
 * Every API call is charged to the cloud's API limit and throttle faults
 * (RequestLimitExceeded 503 for EC2, Throttling 400 for Auto Scaling).
 */
#ifndef LUASCALE_SIM_AWS_FACE_H
#define LUASCALE_SIM_AWS_FACE_H

#include <stdint.h>

#include "errbuf.h"
#include "log.h"
#include "sim/clouds/cloud_aws.h"
#include "sim/clouds/sim_cloud_kind.h"

struct aws_face;

/*
 * AWS as the simulator's shared code sees it (in aws_kind.c): its scenario
 * section and its flavour in a world. sim_world_flavour(w, &sim_cloud_aws) is the world's struct sim_aws.
 */
extern const struct sim_cloud_kind sim_cloud_aws;
/* This face as `luascale sim` serves it: its --aws-* options (end of aws_face.c). */
extern const struct sim_cloud_face sim_face_aws;

struct aws_face_opts {
	int port;                 /* 0: a free port */
	int64_t latency_ns;       /* > 0: every answer waits this long first */
	const struct logger *log; /* borrowed; NULL: silent (never logs secrets) */
};

/*
 * Serves 'aws' (borrowed; it and its cloud must outlive the face) on
 * 127.0.0.1:o->port. NULL with a message (port in use, out of memory).
 */
struct aws_face *aws_face_new(struct sim_aws *aws, const struct aws_face_opts *o,
			      struct errbuf *err);

/* The port it listens on. */
int aws_face_port(const struct aws_face *f);

/*
 * Writes what a client needs to 'path' (mode 0600), one KEY='value' a line
 * for a shell's `.` or `set -a`: AWS_ENDPOINT_URL, AWS_REGION,
 * AWS_DEFAULT_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
 * AWS_SESSION_TOKEN (when the scenario has one), LUASCALE_SIM_AWS_IMDS
 * (the IMDS base URL, for AWS_EC2_METADATA_SERVICE_ENDPOINT) and, with a
 * container token, LUASCALE_SIM_AWS_CONTAINER_URI and _TOKEN.
 * 0, or -1 with a message.
 */
int aws_face_write_env(const struct aws_face *f, const char *path, struct errbuf *err);

/* Stops serving (running requests finish). NULL is ignored. */
void aws_face_free(struct aws_face *f);

/* ---- pieces, exposed for tests ---- */

/* A decoded x-www-form-urlencoded body. */
struct aws_form {
	char **keys;
	char **values;
	size_t n;
};

/* Decodes 'len' bytes ('+' is a space, %XX a byte). 0, or -1 with a
 * message on a bad escape, a key without '=' handling aside (an empty
 * value), a NUL byte or out of memory. Free with aws_form_free. */
int aws_form_parse(struct aws_form *f, const char *body, size_t len, struct errbuf *err);
void aws_form_free(struct aws_form *f);
/* The value of 'key' (the last one when repeated), or NULL. */
const char *aws_form_get(const struct aws_form *f, const char *key);

/* A strict decimal integer in [lo, hi]: 0, or -1. */
int aws_parse_int(const char *s, long long lo, long long hi, long long *out);

#endif
