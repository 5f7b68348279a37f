/*
 * providers/aws: interruption notices — SQS ReceiveMessage and
 * DeleteMessage in the AWS JSON 1.0 protocol (X-Amz-Target
 * AmazonSQS.*), SigV4-signed for "sqs", and the EventBridge events of the
 * queue parsed into provider_interruptions. It decides nothing about a
 * notice; the engine and the policy do.
 */
#include "providers/aws/aws_interrupt.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "kube/client.h"
#include "providers/aws/aws_internal.h"
#include "providers/aws/awserr.h"
#include "providers/cloudhttp/cloudhttp.h"
#include "providers/cloudhttp/groupcache.h"

#define SQS_JSON "application/x-amz-json-1.0"
#define SPOT_WARNING_S 120      /* a spot instance goes two minutes after its warning */
#define MAX_BATCHES 5           /* ReceiveMessage calls per round, of 10 messages each */
#define VISIBILITY_S 60         /* a message received stays hidden this long */
#define MAX_HANDLE 8192         /* a receipt handle longer than this is refused */
#define MAX_MESSAGE_ID 128
#define SEEN_IDS 1024           /* message ids returned, remembered against redelivery */

/* The queue's state (under mu: one call at a time). */
struct aws_sqs {
	pthread_mutex_t mu;
	char queue[512];
	char **pending;           /* receipt handles of the messages returned last time */
	size_t n_pending, cap_pending;
	char (*seen)[MAX_MESSAGE_ID]; /* a ring of message ids returned */
	size_t seen_next;
};

/* ---- parsing an EventBridge event ---- */

static void why_set(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void why_set(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!why || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

/* A string member of 'o', or NULL. */
static const char *str_of(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsString(v) && v->valuestring ? v->valuestring : NULL;
}

/* An EC2 instance id: "i-" and 8 to 17 lower-case hex digits. */
static bool ok_instance_id(const char *s)
{
	size_t n;

	if (!s || strncmp(s, "i-", 2))
		return false;
	n = strspn(s + 2, "0123456789abcdef");
	return n >= 8 && n <= 17 && !s[2 + n];
}

/* A detail-type quoted in a message: printable ASCII, at most 64 bytes. */
static void quote_type(const char *s, char *out, size_t len)
{
	size_t i, k = 0;

	for (i = 0; s[i] && k + 1 < len && i < 64; i++)
		out[k++] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	out[k] = '\0';
}

/* A time as AWS writes one in an event: RFC 3339, or an IMF-fixdate. */
static int parse_event_time(const char *s, int64_t *out)
{
	if (!s || !*s || strlen(s) > 64)
		return -1;
	if (kube_parse_time(s, out) == 0)
		return 0;
	return cloudhttp_parse_http_date(s, out); /* AWS Health's "Sat, 05 Jun 2021 15:10:09 GMT" */
}

/* One interruption of instance 'id' into out[*n], when there is room. */
static void add(struct provider_interruption *out, size_t cap, size_t *n, const char *id,
		enum provider_interruption_kind kind, int64_t deadline, int64_t received)
{
	struct provider_interruption *pi;

	if (*n >= cap)
		return;
	pi = &out[(*n)++];
	memset(pi, 0, sizeof(*pi));
	snprintf(pi->instance_id, sizeof(pi->instance_id), "%s", id);
	pi->kind = kind;
	pi->deadline_wall = deadline;
	pi->received_wall = received;
}

/* "scheduledChange" Health events of EC2: every affected instance. */
static enum aws_event_verdict parse_health(const cJSON *detail, int64_t at,
					   struct provider_interruption *out, size_t cap, size_t *n,
					   char *why, size_t why_len)
{
	const char *service = str_of(detail, "service"), *cat = str_of(detail, "eventTypeCategory");
	const char *start = str_of(detail, "startTime");
	const cJSON *ents = cJSON_GetObjectItemCaseSensitive(detail, "affectedEntities"), *e;
	int64_t deadline = 0;
	size_t bad = 0;

	if (!service || !cat) {
		why_set(why, why_len, "an AWS Health Event without detail.service or detail.eventTypeCategory");
		return AWS_EVENT_MALFORMED;
	}
	if (strcmp(service, "EC2") || strcmp(cat, "scheduledChange")) {
		why_set(why, why_len, "an AWS Health Event that is not an EC2 scheduledChange");
		return AWS_EVENT_IGNORED;
	}
	if (!cJSON_IsArray(ents)) {
		why_set(why, why_len, "an AWS Health scheduledChange without detail.affectedEntities");
		return AWS_EVENT_MALFORMED;
	}
	if (start && parse_event_time(start, &deadline) < 0) {
		why_set(why, why_len, "an AWS Health scheduledChange whose detail.startTime is not a time");
		return AWS_EVENT_MALFORMED;
	}
	cJSON_ArrayForEach(e, ents) {
		const char *id = str_of(e, "entityValue");

		if (ok_instance_id(id))
			add(out, cap, n, id, PROVIDER_INTERRUPT_SCHEDULED_CHANGE, deadline, at);
		else
			bad++;
	}
	if (!*n) {
		why_set(why, why_len, "an AWS Health scheduledChange that names no instance id (%zu entities)",
			bad);
		return AWS_EVENT_IGNORED;
	}
	return AWS_EVENT_OK;
}

enum aws_event_verdict aws_interrupt_parse(const char *body, size_t len,
					   struct provider_interruption *out, size_t cap,
					   size_t *n, char *why, size_t why_len)
{
	enum aws_event_verdict v = AWS_EVENT_MALFORMED;
	const char *type, *source, *tm, *id;
	const cJSON *detail;
	cJSON *doc = NULL;
	char quoted[80];
	int64_t at;

	*n = 0;
	why_set(why, why_len, "?");
	if (!body || len > AWS_EVENT_MAX_BODY) {
		why_set(why, why_len, "a body of %zu bytes (at most %u are read)", len, AWS_EVENT_MAX_BODY);
		return AWS_EVENT_MALFORMED;
	}
	doc = cJSON_ParseWithLength(body, len);
	if (!cJSON_IsObject(doc)) {
		why_set(why, why_len, "not a JSON object");
		goto out;
	}
	type = str_of(doc, "detail-type");
	source = str_of(doc, "source");
	tm = str_of(doc, "time");
	detail = cJSON_GetObjectItemCaseSensitive(doc, "detail");
	if (!type || !source || !cJSON_IsObject(detail)) {
		why_set(why, why_len, "not an EventBridge event (no detail-type, source or detail)");
		goto out;
	}
	quote_type(type, quoted, sizeof(quoted));
	if (parse_event_time(tm, &at) < 0) {
		why_set(why, why_len, "a \"%s\" event without a valid time", quoted);
		goto out;
	}
	if (!strcmp(source, "aws.health") && !strcmp(type, "AWS Health Event")) {
		v = parse_health(detail, at, out, cap, n, why, why_len);
		goto out;
	}
	if (strcmp(source, "aws.ec2")) {
		why_set(why, why_len, "a \"%s\" event from a source other than aws.ec2 and aws.health", quoted);
		v = AWS_EVENT_IGNORED;
		goto out;
	}
	id = str_of(detail, "instance-id");
	if (!strcmp(type, "EC2 Spot Instance Interruption Warning") ||
	    !strcmp(type, "EC2 Instance Rebalance Recommendation") ||
	    !strcmp(type, "EC2 Instance State-change Notification")) {
		if (!ok_instance_id(id)) {
			why_set(why, why_len, "a \"%s\" event without a valid detail.instance-id", quoted);
			goto out;
		}
	}
	if (!strcmp(type, "EC2 Spot Instance Interruption Warning")) {
		add(out, cap, n, id, PROVIDER_INTERRUPT_SPOT_INTERRUPTION, at + SPOT_WARNING_S, at);
	} else if (!strcmp(type, "EC2 Instance Rebalance Recommendation")) {
		add(out, cap, n, id, PROVIDER_INTERRUPT_REBALANCE, 0, at);
	} else if (!strcmp(type, "EC2 Instance State-change Notification")) {
		const char *state = str_of(detail, "state");

		if (!state) {
			why_set(why, why_len, "a \"%s\" event without detail.state", quoted);
			goto out;
		}
		if (!strcmp(state, "stopping") || !strcmp(state, "stopped")) {
			add(out, cap, n, id, PROVIDER_INTERRUPT_STOPPING, 0, at);
		} else if (!strcmp(state, "shutting-down") || !strcmp(state, "terminated")) {
			add(out, cap, n, id, PROVIDER_INTERRUPT_TERMINATED, 0, at);
		} else {
			why_set(why, why_len, "an instance state change to a state not acted on");
			v = AWS_EVENT_IGNORED;
			goto out;
		}
	} else {
		why_set(why, why_len, "a \"%s\" event, not one of the four read", quoted);
		v = AWS_EVENT_IGNORED;
		goto out;
	}
	v = *n ? AWS_EVENT_OK : AWS_EVENT_IGNORED;
out:
	cJSON_Delete(doc);
	return v;
}

/* ---- the queue ---- */

/* Calls AmazonSQS.<action> with JSON 'body'; the answer's document in *out
 * (an object; NULL for an empty answer). 0, or -1 with 'st': the AWS code
 * and message whole. */
static int sqs_call(struct provider *p, const char *action, const cJSON *body, cJSON **out,
		    struct provider_status *st)
{
	struct aws_prov *ap = AWS_PROV(p);
	char target[64], *text;
	struct aws_json_target t = { ap->api.url[AWS_SERVICE_SQS], ap->api.region, "sqs", SQS_JSON, target };
	int rc;

	*out = NULL;
	memset(st, 0, sizeof(*st));
	snprintf(target, sizeof(target), "AmazonSQS.%s", action);
	aws_count_call(ap, action);
	if (ap->cancel && atomic_load(ap->cancel)) {
		cloudcall_status(st, PROVIDER_CANCELLED, "%s not sent: luascale is stopping", action);
		return -1;
	}
	if (!(text = cJSON_PrintUnformatted(body))) {
		cloudcall_status(st, PROVIDER_TRANSIENT, "%s: out of memory", action);
		return -1;
	}
	/* consuming the queue is a write: a replica that does not lead never takes
	 * a notice from the one that does */
	rc = aws_json_call(&ap->api, &t, action, p->mutating, text, out, st);
	cJSON_free(text);
	return rc;
}

/* DeleteMessage of one receipt handle. 0, or -1 with 'st'. */
static int delete_message(struct provider *p, const char *queue, const char *handle,
			  struct provider_status *st)
{
	cJSON *req = cJSON_CreateObject(), *doc = NULL;
	int rc = -1;

	if (!req || !cJSON_AddStringToObject(req, "QueueUrl", queue) ||
	    !cJSON_AddStringToObject(req, "ReceiptHandle", handle)) {
		cloudcall_status(st, PROVIDER_TRANSIENT, "DeleteMessage: out of memory");
		goto out;
	}
	rc = sqs_call(p, "DeleteMessage", req, &doc, st);
out:
	cJSON_Delete(doc);
	cJSON_Delete(req);
	return rc;
}

int aws_interrupt_init(struct aws_prov *ap, const char *queue)
{
	struct aws_sqs *q;

	if (!queue || !*queue)
		return 0;
	q = calloc(1, sizeof(*q));
	if (!q || !(q->seen = calloc(SEEN_IDS, sizeof(*q->seen)))) {
		free(q);
		return -1;
	}
	pthread_mutex_init(&q->mu, NULL);
	snprintf(q->queue, sizeof(q->queue), "%s", queue);
	ap->sqs = q;
	return 0;
}

void aws_interrupt_free(struct aws_prov *ap)
{
	struct aws_sqs *q = ap->sqs;
	size_t i;

	if (!q)
		return;
	for (i = 0; i < q->n_pending; i++)
		free(q->pending[i]);
	free(q->pending);
	free(q->seen);
	pthread_mutex_destroy(&q->mu);
	free(q);
	ap->sqs = NULL;
}

static bool seen_has(const struct aws_sqs *q, const char *id)
{
	size_t i;

	for (i = 0; i < SEEN_IDS; i++)
		if (q->seen[i][0] && !strcmp(q->seen[i], id))
			return true;
	return false;
}

static void seen_put(struct aws_sqs *q, const char *id)
{
	snprintf(q->seen[q->seen_next], sizeof(q->seen[0]), "%s", id);
	q->seen_next = (q->seen_next + 1) % SEEN_IDS;
}

static int pending_put(struct aws_sqs *q, const char *handle)
{
	char *h;

	if (q->n_pending == q->cap_pending) {
		size_t cap = q->cap_pending ? q->cap_pending * 2 : 16;
		char **np = realloc(q->pending, cap * sizeof(*np));

		if (!np)
			return -1;
		q->pending = np;
		q->cap_pending = cap;
	}
	h = strdup(handle);
	if (!h)
		return -1;
	q->pending[q->n_pending++] = h;
	return 0;
}

/* Deletes one message now (not returned: ignored, malformed, a repeat),
 * saying why at 'level'. */
static void drop(struct provider *p, const char *handle, const char *mid, enum log_level level,
		 const char *why)
{
	struct aws_prov *ap = AWS_PROV(p);
	struct provider_status st;

	log_at(ap->log, level, clock_wall(ap->clock), "aws: interruption queue: message %.64s deleted: %s",
	       mid, why);
	if (delete_message(p, ap->sqs->queue, handle, &st) < 0)
		log_at(ap->log, LOG_WARN, clock_wall(ap->clock),
		       "aws: interruption queue: message %.64s could not be deleted (it comes back later): %s",
		       mid, st.message);
}

/* Fills provider_id and group of each interruption from the last listing. */
static void map_instances(struct aws_prov *ap, struct provider_interruption *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		groupcache_instance(ap->cache, v[i].instance_id, v[i].group, sizeof(v[i].group),
				    v[i].provider_id, sizeof(v[i].provider_id), NULL);
}

/* One ReceiveMessage: its messages parsed into *v (grown), those not
 * returned deleted. *got: how many messages came. 0, or -1 with 'st'. */
static int receive_batch(struct provider *p, struct provider_interruption **v, size_t *n,
			 size_t *cap, int *got, struct provider_status *st)
{
	struct aws_prov *ap = AWS_PROV(p);
	struct aws_sqs *q = ap->sqs;
	cJSON *req = cJSON_CreateObject(), *doc = NULL;
	const cJSON *msgs, *m;
	int rc = -1;

	*got = 0;
	if (!req || !cJSON_AddStringToObject(req, "QueueUrl", q->queue) ||
	    !cJSON_AddNumberToObject(req, "MaxNumberOfMessages", 10) ||
	    !cJSON_AddNumberToObject(req, "WaitTimeSeconds", 0) ||
	    !cJSON_AddNumberToObject(req, "VisibilityTimeout", VISIBILITY_S)) {
		cloudcall_status(st, PROVIDER_TRANSIENT, "ReceiveMessage: out of memory");
		goto out;
	}
	if (sqs_call(p, "ReceiveMessage", req, &doc, st) < 0)
		goto out;
	msgs = cJSON_GetObjectItemCaseSensitive(doc, "Messages");
	if (msgs && !cJSON_IsArray(msgs)) {
		cloudcall_status(st, PROVIDER_TRANSIENT, "ReceiveMessage: Messages is not a list");
		goto out;
	}
	cJSON_ArrayForEach(m, msgs) {
		const char *mid = str_of(m, "MessageId"), *handle = str_of(m, "ReceiptHandle");
		const char *body = str_of(m, "Body");
		struct provider_interruption got_v[AWS_EVENT_MAX_INSTANCES];
		enum aws_event_verdict verdict;
		char why[256], midq[MAX_MESSAGE_ID];
		size_t k = 0, i;

		(*got)++;
		if (!handle || !handle[0] || strlen(handle) > MAX_HANDLE) {
			log_at(ap->log, LOG_WARN, clock_wall(ap->clock),
			       "aws: interruption queue: a message without a usable ReceiptHandle is skipped");
			continue;
		}
		quote_type(mid && strlen(mid) < MAX_MESSAGE_ID ? mid : "?", midq, sizeof(midq));
		if (mid && seen_has(q, midq)) {
			drop(p, handle, midq, LOG_DEBUG, "returned once already");
			continue;
		}
		verdict = body ? aws_interrupt_parse(body, strlen(body), got_v, AWS_EVENT_MAX_INSTANCES,
						     &k, why, sizeof(why))
			       : AWS_EVENT_MALFORMED;
		if (!body)
			snprintf(why, sizeof(why), "no Body");
		if (verdict != AWS_EVENT_OK) {
			drop(p, handle, midq, verdict == AWS_EVENT_MALFORMED ? LOG_WARN : LOG_INFO, why);
			continue;
		}
		if (*n + k > *cap) {
			size_t nc = (*n + k) * 2;
			struct provider_interruption *nv = realloc(*v, nc * sizeof(*nv));

			if (!nv) {
				cloudcall_status(st, PROVIDER_TRANSIENT, "ReceiveMessage: out of memory");
				goto out;
			}
			*v = nv;
			*cap = nc;
		}
		if (pending_put(q, handle) < 0) {
			cloudcall_status(st, PROVIDER_TRANSIENT, "ReceiveMessage: out of memory");
			goto out;
		}
		for (i = 0; i < k; i++)
			(*v)[(*n)++] = got_v[i];
		if (mid)
			seen_put(q, midq);
	}
	rc = 0;
out:
	cJSON_Delete(doc);
	cJSON_Delete(req);
	return rc;
}

int aws_interruptions(struct provider *p, struct provider_interruption **out, size_t *n,
		      struct provider_status *st)
{
	struct aws_prov *ap = AWS_PROV(p);
	struct aws_sqs *q = ap->sqs;
	struct provider_interruption *v = NULL;
	size_t nv = 0, cap = 0, i;
	int batch, rc = 0;

	*out = NULL;
	*n = 0;
	memset(st, 0, sizeof(*st));
	if (!q)
		return 0;
	pthread_mutex_lock(&q->mu);
	/* what the last call returned has been seen: acknowledge it now */
	for (i = 0; i < q->n_pending; i++) {
		struct provider_status dst;

		if (delete_message(p, q->queue, q->pending[i], &dst) < 0)
			log_at(ap->log, LOG_WARN, clock_wall(ap->clock),
			       "aws: interruption queue: a message returned before could not be deleted (it comes back, and is not returned again): %s",
			       dst.message);
		free(q->pending[i]);
	}
	q->n_pending = 0;
	for (batch = 0; batch < MAX_BATCHES; batch++) {
		int got;

		if (receive_batch(p, &v, &nv, &cap, &got, st) < 0) {
			if (nv) { /* what came before is returned; the error is said */
				log_at(ap->log, LOG_WARN, clock_wall(ap->clock),
				       "aws: interruption queue: %s", st->message);
				memset(st, 0, sizeof(*st));
				break;
			}
			rc = -1;
			break;
		}
		if (got < 10)
			break;
	}
	pthread_mutex_unlock(&q->mu);
	if (rc < 0) {
		free(v);
		return -1;
	}
	map_instances(ap, v, nv);
	*out = v;
	*n = nv;
	return 0;
}
