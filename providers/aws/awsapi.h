/*
 * awsapi: one call of an AWS Query (Auto Scaling, STS) or EC2 API action —
 * the form body, a token of the caller's bucket and a fresh SigV4
 * signature before every attempt, standard retries, and the answer as an
 * XML tree or a classified error — or of an AWS JSON protocol action (SQS,
 * the Price List API), the same way with a JSON body and answer. It
 * knows no action's meaning.
 */
#ifndef LUASCALE_AWS_AWSAPI_H
#define LUASCALE_AWS_AWSAPI_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "errbuf.h"
#include "log.h"
#include "providers/cloudhttp/xmltree.h"
#include "providers/aws/credentials.h"
#include "providers/aws/endpoints.h"
#include "providers/cloudhttp/cloudhttp.h"
#include "providers/provider.h"
#include "runtime/clock.h"
#include "runtime/ratelimit.h"

struct cloudhttp;

struct aws_api {
	struct cloudhttp *http;          /* borrowed */
	struct aws_credchain *creds;     /* borrowed */
	struct clock *clock;             /* borrowed; wall time signs requests */
	const struct logger *log;        /* borrowed; may be NULL */
	char region[64];
	char url[AWS_SERVICE_COUNT][1024];
};

/* A form body being built: "Action=...&Version=..." then parameters. */
struct aws_query {
	struct buf b;
	int oom;
};

/* Starts a form for 'action' of 'svc' (its API version). */
void aws_query_init(struct aws_query *f, enum aws_service svc, const char *action);

/* Adds "key=value", both percent-encoded as the Query protocol wants;
 * aws_query_addf formats the key. Errors are remembered (aws_call fails). */
void aws_query_add(struct aws_query *f, const char *key, const char *value);
void aws_query_addf(struct aws_query *f, const char *value, const char *key_fmt, ...)
	__attribute__((format(printf, 3, 4)));
void aws_query_add_int(struct aws_query *f, const char *key, int64_t v);

void aws_query_free(struct aws_query *f);

/*
 * Calls the action in 'f' on 'svc'. Before every attempt it waits for a
 * token of 'bucket' (NULL: none; at most 60 s, then THROTTLED) and signs
 * anew; a throttling answer slows the bucket (ratelimit_throttled) and is
 * retried with the standard backoff, a success speeds it back up. An
 * expired or unknown token drops the cached credentials and is tried once
 * more. On success returns 0 with the answer in '*doc' (xmltree_free it).
 * Else -1 with 'st': the class of the AWS error code (awserr.h) and
 * "Code: message (likely cause: ...); Action (request id)" as the cloud
 * said it (provider_cloud_message()), or "Action: ..." with TRANSIENT for
 * no answer, AUTH for no credentials (the credential source's error
 * whole). Never puts a secret in 'st' or the log.
 */
int aws_call(struct aws_api *api, enum aws_service svc, struct ratelimit *bucket,
	     struct aws_query *f, struct xmltree_doc **doc, struct provider_status *st);

/* Where an AWS JSON protocol action goes: its endpoint, what it is signed
 * for, its content type (application/x-amz-json-1.0 or 1.1) and target
 * ("AmazonSQS.ReceiveMessage"). */
struct aws_json_target {
	const char *url;
	const char *region, *service;
	const char *content_type;
	const char *target;
};

/*
 * aws_call() for an AWS JSON protocol: sends the JSON text 'body' to
 * 't' ('action' names it in messages) with the same token, signature,
 * retries, credential refresh and errors (the code from "__type", the
 * request id from x-amzn-RequestId). On success 0 with the answer's
 * object in '*out' (cJSON_Delete it; NULL for an empty answer); else -1
 * with 'st'.
 */
int aws_json_call(struct aws_api *api, const struct aws_json_target *t, const char *action,
		  struct ratelimit *bucket, const char *body, cJSON **out, struct provider_status *st);

#endif
