/*
 * sim/sqs: the simulated account's SQS queues — messages, receipt handles
 * and visibility timeouts on the simulated clock — and the SQS actions'
 * answers in both protocols SQS speaks (AWS Query 2012-11-05 in XML, which
 * Debian's botocore uses, and AWS JSON 1.0, X-Amz-Target AmazonSQS.*, which
 * current SDKs and the AWS provider use). Signatures and HTTP are
 * sim/clouds/aws_face.c's.
 */
#ifndef LUASCALE_SIM_SQS_H
#define LUASCALE_SIM_SQS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "runtime/clock.h"

/* The largest message body a queue takes (SQS's limit). */
#define SIM_SQS_MAX_BODY (256u * 1024u)
/* The most queues and the most messages a queue holds (beyond: refused). */
#define SIM_SQS_MAX_QUEUES 64
#define SIM_SQS_MAX_MESSAGES 10000

struct sim_sqs;

/* The queues of 'account' (12 digits) in 'region', on 'clock' (borrowed:
 * visibility timeouts count on it). NULL when out of memory. */
struct sim_sqs *sim_sqs_new(struct clock *clock, const char *region, const char *account);

/* NULL is ignored. */
void sim_sqs_free(struct sim_sqs *q);

/* Makes queue 'name' (1-80 of letters, digits, '-', '_'); one that exists
 * is kept. 0, or -1 (a bad name, too many queues, out of memory). */
int sim_sqs_create(struct sim_sqs *q, const char *name);

/* Puts a message of 'body' (1 to SIM_SQS_MAX_BODY bytes) on queue 'name',
 * visible at once; its MessageId into 'id' (37 bytes; may be NULL).
 * 0, or -1 when there is no such queue or the body or the queue is too
 * big. Thread-safe (as every function here). */
int sim_sqs_send(struct sim_sqs *q, const char *name, const char *body, char *id);

/* Messages on queue 'name' that are not deleted (visible or not), or -1. */
long sim_sqs_depth(struct sim_sqs *q, const char *name);

/* A request's parameters, as the face decoded them (a form's values, or a
 * JSON object's strings and numbers as text): the value of 'name', or NULL. */
typedef const char *(*sim_sqs_param_fn)(void *ud, const char *name);

/* What an answer is. */
struct sim_sqs_answer {
	int status;                 /* HTTP status */
	const char *content_type;   /* static */
	char query_error[128];      /* JSON errors: x-amzn-query-error ("Code;Sender"), else "" */
	char action[48];            /* the action answered ("" when none was named) */
};

/*
 * Answers the SQS action 'action' (CreateQueue, GetQueueUrl, ListQueues,
 * SendMessage, ReceiveMessage, DeleteMessage, PurgeQueue) with the parameters 'get' gives, in
 * JSON ('json') or Query XML, into 'out'. Queue URLs are 'base_url' (the
 * face's "http://127.0.0.1:PORT") + "/ACCOUNT/NAME"; a QueueUrl of any
 * host is read by its path. 'rid' is the request id to put in the answer.
 * Errors are SQS's own (QueueDoesNotExist / AWS.SimpleQueueService.
 * NonExistentQueue, ReceiptHandleIsInvalid, InvalidParameterValue,
 * MissingParameter, ...).
 */
void sim_sqs_answer(struct sim_sqs *q, bool json, const char *action, sim_sqs_param_fn get,
		    void *ud, const char *base_url, const char *rid, struct buf *out,
		    struct sim_sqs_answer *ans);

#endif
