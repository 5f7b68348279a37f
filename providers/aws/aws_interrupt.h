/*
 * providers/aws: interruption notices from an SQS queue that EventBridge
 * feeds (provider.aws.interruption_queue) — the four EventBridge events
 * read, each parsed into provider_interruptions. The queue calls are
 * aws_interrupt.c's; what the engine does with a notice is not.
 */
#ifndef LUASCALE_AWS_INTERRUPT_H
#define LUASCALE_AWS_INTERRUPT_H

#include <stddef.h>
#include <stdint.h>

#include "providers/provider.h"

/* The largest message body read (SQS's own limit, 256 KiB). */
#define AWS_EVENT_MAX_BODY (256u * 1024u)

/* The most instances one event names that are read (a Health event may
 * name many; the rest are left out with a warning). */
#define AWS_EVENT_MAX_INSTANCES 100

enum aws_event_verdict {
	AWS_EVENT_OK = 0,   /* an interruption: *n >= 1 */
	AWS_EVENT_IGNORED,  /* one of the four events, of a state or category luascale
			     * does not act on (an instance "running", a Health event
			     * of another service); or an event of another kind */
	AWS_EVENT_MALFORMED,/* not JSON, not an EventBridge event, a field missing or
			     * of the wrong type */
};

/*
 * Parses one EventBridge event (a message body, 'len' bytes, any bytes)
 * into out[0..cap) and *n: instance_id, kind, deadline_wall (spot: the
 * event's time + 2 min; a scheduled change: its startTime; else 0) and
 * received_wall (the event's time); provider_id and group are left "".
 * The events read (source / detail-type):
 *   aws.ec2    "EC2 Spot Instance Interruption Warning" (detail.instance-id)
 *   aws.ec2    "EC2 Instance Rebalance Recommendation" (detail.instance-id)
 *   aws.health "AWS Health Event", detail.service "EC2" and
 *              detail.eventTypeCategory "scheduledChange"
 *              (detail.affectedEntities[].entityValue, detail.startTime)
 *   aws.ec2    "EC2 Instance State-change Notification" (detail.instance-id,
 *              detail.state stopping|stopped → STOPPING,
 *              shutting-down|terminated → TERMINATED)
 * Returns the verdict; for IGNORED and MALFORMED 'why' ('why_len' bytes)
 * says why, in words that quote nothing of the body but its field names
 * and its detail-type (bounded).
 */
enum aws_event_verdict aws_interrupt_parse(const char *body, size_t len,
					   struct provider_interruption *out, size_t cap,
					   size_t *n, char *why, size_t why_len);

#endif
