/*
 * sim/sqs: SQS queues of the simulated account and the answers to the SQS
 * actions in the Query (XML) and JSON 1.0 protocols. No HTTP, no
 * signatures (sim/clouds/aws_face.c's), no cloud (what posts interruption events
 * is sim/clouds/cloud_aws.c).
 */
#include "sim/clouds/sqs.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "runtime/backoff.h"

#define NS_SQS "http://queue.amazonaws.com/doc/2012-11-05/"
#define DEFAULT_VISIBILITY_S 30

struct msg {
	char id[37];
	char handle[80];          /* the latest receipt handle ("" until received) */
	char md5[33];
	char *body;
	int64_t sent_wall_ms;
	int64_t visible_ns;       /* hidden until then (received, not deleted) */
	int receives;
};

struct queue {
	char name[81];
	struct msg *m;
	size_t n, cap;
};

struct sim_sqs {
	pthread_mutex_t mu;
	struct clock *clock;
	char region[32];
	char account[16];
	uint64_t rng;
	struct queue q[SIM_SQS_MAX_QUEUES];
	size_t n;
};

struct sim_sqs *sim_sqs_new(struct clock *clock, const char *region, const char *account)
{
	struct sim_sqs *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	pthread_mutex_init(&q->mu, NULL);
	q->clock = clock;
	snprintf(q->region, sizeof(q->region), "%s", region);
	snprintf(q->account, sizeof(q->account), "%s", account);
	q->rng = 0x5153515351535153ULL; /* ids and handles the same every run */
	return q;
}

void sim_sqs_free(struct sim_sqs *q)
{
	size_t i, k;

	if (!q)
		return;
	for (i = 0; i < q->n; i++) {
		for (k = 0; k < q->q[i].n; k++)
			free(q->q[i].m[k].body);
		free(q->q[i].m);
	}
	pthread_mutex_destroy(&q->mu);
	free(q);
}

static bool ok_name(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	return n >= 1 && n <= 80 &&
	       strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") == n;
}

static struct queue *find(struct sim_sqs *q, const char *name)
{
	size_t i;

	for (i = 0; name && i < q->n; i++)
		if (!strcmp(q->q[i].name, name))
			return &q->q[i];
	return NULL;
}

static int create_locked(struct sim_sqs *q, const char *name)
{
	if (!ok_name(name))
		return -1;
	if (find(q, name))
		return 0;
	if (q->n == SIM_SQS_MAX_QUEUES)
		return -1;
	memset(&q->q[q->n], 0, sizeof(q->q[0]));
	snprintf(q->q[q->n].name, sizeof(q->q[0].name), "%s", name);
	q->n++;
	return 0;
}

int sim_sqs_create(struct sim_sqs *q, const char *name)
{
	int rc;

	pthread_mutex_lock(&q->mu);
	rc = create_locked(q, name);
	pthread_mutex_unlock(&q->mu);
	return rc;
}

static void uuid(struct sim_sqs *q, char out[37])
{
	uint64_t x = backoff_rand(&q->rng), y = backoff_rand(&q->rng);

	snprintf(out, 37, "%08llx-%04llx-4%03llx-%04llx-%012llx", (unsigned long long)(x >> 32),
		 (unsigned long long)((x >> 16) & 0xffff), (unsigned long long)(x & 0xfff),
		 (unsigned long long)(0x8000 | ((y >> 48) & 0x3fff)),
		 (unsigned long long)(y & 0xffffffffffffULL));
}

static void md5_hex(const char *s, char out[33])
{
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;

	out[0] = '\0';
	if (EVP_Digest(s, strlen(s), d, &n, EVP_md5(), NULL) != 1 || n != 16)
		return;
	for (i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* A message body SQS takes: 1 to 256 KiB of #x9 #xA #xD and >= #x20 (UTF-8 unchecked). */
static bool ok_body(const char *s)
{
	size_t n = s ? strlen(s) : 0, i;

	if (n < 1 || n > SIM_SQS_MAX_BODY)
		return false;
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r')
			return false;
	}
	return true;
}

static int send_locked(struct sim_sqs *q, struct queue *qu, const char *body, char *id)
{
	struct msg *m;

	if (!ok_body(body) || qu->n >= SIM_SQS_MAX_MESSAGES)
		return -1;
	if (qu->n == qu->cap) {
		size_t cap = qu->cap ? qu->cap * 2 : 16;
		struct msg *nm = realloc(qu->m, cap * sizeof(*nm));

		if (!nm)
			return -1;
		qu->m = nm;
		qu->cap = cap;
	}
	m = &qu->m[qu->n];
	memset(m, 0, sizeof(*m));
	m->body = strdup(body);
	if (!m->body)
		return -1;
	uuid(q, m->id);
	md5_hex(body, m->md5);
	m->sent_wall_ms = clock_wall(q->clock) * 1000;
	m->visible_ns = 0;
	qu->n++;
	if (id)
		snprintf(id, 37, "%s", m->id);
	return 0;
}

int sim_sqs_send(struct sim_sqs *q, const char *name, const char *body, char *id)
{
	struct queue *qu;
	int rc = -1;

	pthread_mutex_lock(&q->mu);
	qu = find(q, name);
	if (qu)
		rc = send_locked(q, qu, body, id);
	pthread_mutex_unlock(&q->mu);
	return rc;
}

long sim_sqs_depth(struct sim_sqs *q, const char *name)
{
	struct queue *qu;
	long n = -1;

	pthread_mutex_lock(&q->mu);
	qu = find(q, name);
	if (qu)
		n = (long)qu->n;
	pthread_mutex_unlock(&q->mu);
	return n;
}

/* ---- answers ---- */

struct ctx {
	struct sim_sqs *q;
	bool json;
	const char *action;
	sim_sqs_param_fn get;
	void *ud;
	const char *base;
	const char *rid;
	struct buf *out;
	struct sim_sqs_answer *ans;
};

static void x_esc(struct buf *b, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': buf_puts(b, "&lt;"); break;
		case '>': buf_puts(b, "&gt;"); break;
		case '&': buf_puts(b, "&amp;"); break;
		case '"': buf_puts(b, "&quot;"); break;
		case '\r': buf_puts(b, "&#xD;"); break;
		default: buf_append(b, s, 1);
		}
	}
}

static void x_tag(struct buf *b, const char *name, const char *text)
{
	buf_printf(b, "<%s>", name);
	x_esc(b, text);
	buf_printf(b, "</%s>", name);
}

static void fail(struct ctx *c, int http, const char *json_code, const char *query_code,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* An error in the protocol's shape: JSON's __type names the modelled error,
 * Query's Code (and JSON's x-amzn-query-error) the legacy one. */
static void fail(struct ctx *c, int http, const char *json_code, const char *query_code,
		 const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	buf_free(c->out);
	c->ans->status = http;
	if (c->json) {
		c->ans->content_type = "application/x-amz-json-1.0";
		buf_printf(c->out, "{\"__type\":\"com.amazonaws.sqs#%s\",\"message\":", json_code);
		buf_json_string(c->out, msg);
		buf_puts(c->out, "}");
		snprintf(c->ans->query_error, sizeof(c->ans->query_error), "%s;%s", query_code,
			 http >= 500 ? "Receiver" : "Sender");
		return;
	}
	c->ans->content_type = "text/xml";
	buf_printf(c->out, "<?xml version=\"1.0\"?><ErrorResponse xmlns=\"%s\"><Error><Type>%s</Type>", NS_SQS,
		   http >= 500 ? "Receiver" : "Sender");
	x_tag(c->out, "Code", query_code);
	x_tag(c->out, "Message", msg);
	buf_puts(c->out, "<Detail/></Error>");
	x_tag(c->out, "RequestId", c->rid);
	buf_puts(c->out, "</ErrorResponse>");
}

static void begin(struct ctx *c)
{
	c->ans->status = 200;
	if (c->json) {
		c->ans->content_type = "application/x-amz-json-1.0";
		buf_puts(c->out, "{");
		return;
	}
	c->ans->content_type = "text/xml";
	buf_printf(c->out, "<?xml version=\"1.0\"?><%sResponse xmlns=\"%s\"><%sResult>", c->action, NS_SQS,
		   c->action);
}

static void end(struct ctx *c, bool result)
{
	if (c->json) {
		buf_puts(c->out, "}");
		return;
	}
	if (result)
		buf_printf(c->out, "</%sResult>", c->action);
	buf_puts(c->out, "<ResponseMetadata>");
	x_tag(c->out, "RequestId", c->rid);
	buf_printf(c->out, "</ResponseMetadata></%sResponse>", c->action);
}

/* Starts an answer with no result (DeleteMessage, PurgeQueue). */
static void bare(struct ctx *c)
{
	c->ans->status = 200;
	if (c->json) {
		c->ans->content_type = "application/x-amz-json-1.0";
		buf_puts(c->out, "{}");
		return;
	}
	c->ans->content_type = "text/xml";
	buf_printf(c->out, "<?xml version=\"1.0\"?><%sResponse xmlns=\"%s\">", c->action, NS_SQS);
	end(c, false);
}

/* A string field of the answer (JSON: "k":"v" with 'comma' first). */
static void field(struct ctx *c, const char *name, const char *value, bool comma)
{
	if (c->json) {
		buf_printf(c->out, "%s\"%s\":", comma ? "," : "", name);
		buf_json_string(c->out, value);
	} else {
		x_tag(c->out, name, value);
	}
}

static void queue_url(struct ctx *c, const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s/%s/%s", c->base, c->q->account, name);
}

static const char *need(struct ctx *c, const char *name)
{
	const char *v = c->get(c->ud, name);

	if (!v)
		fail(c, 400, "MissingRequiredParameterException", "MissingParameter",
		     "The request must contain the parameter %s.", name);
	return v;
}

/* The queue a QueueUrl names (by its path "/ACCOUNT/NAME"), or NULL answered. */
static struct queue *queue_of(struct ctx *c)
{
	const char *url = need(c, "QueueUrl"), *p, *name;
	struct queue *qu;

	if (!url)
		return NULL;
	p = strstr(url, "://");
	p = p ? strchr(p + 3, '/') : NULL;
	name = p ? strrchr(p, '/') : NULL;
	if (!p || !name || (size_t)(name - p) != 13 || strncmp(p + 1, c->q->account, 12) ||
	    !(qu = find(c->q, name + 1))) {
		fail(c, 400, "QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue",
		     "The specified queue does not exist.");
		return NULL;
	}
	return qu;
}

/* An optional integer parameter in [lo, hi]: 0 (set or kept), -1 answered. */
static int int_param(struct ctx *c, const char *name, long lo, long hi, long *out)
{
	const char *v = c->get(c->ud, name);
	char *end;
	long x;

	if (!v)
		return 0;
	x = strtol(v, &end, 10);
	if (end == v || *end || x < lo || x > hi) {
		fail(c, 400, "InvalidParameterValueException", "InvalidParameterValue",
		     "Value %.32s for parameter %s is invalid. Reason: Must be between %ld and %ld.", v,
		     name, lo, hi);
		return -1;
	}
	*out = x;
	return 0;
}

static void create_queue(struct ctx *c)
{
	const char *name = need(c, "QueueName");
	char url[256];

	if (!name)
		return;
	if (!ok_name(name)) {
		fail(c, 400, "InvalidParameterValueException", "InvalidParameterValue",
		     "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length");
		return;
	}
	if (create_locked(c->q, name) < 0) {
		fail(c, 400, "OverLimit", "OverLimit", "The simulator holds at most %d queues",
		     SIM_SQS_MAX_QUEUES);
		return;
	}
	queue_url(c, name, url, sizeof(url));
	begin(c);
	field(c, "QueueUrl", url, false);
	end(c, true);
}

static void get_queue_url(struct ctx *c)
{
	const char *name = need(c, "QueueName");
	char url[256];

	if (!name)
		return;
	if (!find(c->q, name)) {
		fail(c, 400, "QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue",
		     "The specified queue does not exist.");
		return;
	}
	queue_url(c, name, url, sizeof(url));
	begin(c);
	field(c, "QueueUrl", url, false);
	end(c, true);
}

static void list_queues(struct ctx *c)
{
	const char *prefix = c->get(c->ud, "QueueNamePrefix");
	char url[256];
	size_t i, k = 0;

	begin(c);
	if (c->json)
		buf_puts(c->out, "\"QueueUrls\":[");
	for (i = 0; i < c->q->n; i++) {
		if (prefix && strncmp(c->q->q[i].name, prefix, strlen(prefix)))
			continue;
		queue_url(c, c->q->q[i].name, url, sizeof(url));
		if (c->json) {
			if (k)
				buf_puts(c->out, ",");
			buf_json_string(c->out, url);
		} else {
			x_tag(c->out, "QueueUrl", url);
		}
		k++;
	}
	if (c->json)
		buf_puts(c->out, "]");
	end(c, true);
}

static void send_message(struct ctx *c)
{
	struct queue *qu = queue_of(c);
	const char *body;
	char id[37];
	long delay = 0;

	if (!qu || !(body = need(c, "MessageBody")) || int_param(c, "DelaySeconds", 0, 900, &delay) < 0)
		return;
	if (!ok_body(body)) {
		fail(c, 400, "InvalidMessageContents", "InvalidMessageContents",
		     "Invalid characters or size (1 to %u bytes) in the message body", SIM_SQS_MAX_BODY);
		return;
	}
	if (send_locked(c->q, qu, body, id) < 0) {
		fail(c, 400, "OverLimit", "OverLimit", "The queue holds %d messages, the simulator's most",
		     SIM_SQS_MAX_MESSAGES);
		return;
	}
	if (delay > 0)
		qu->m[qu->n - 1].visible_ns = clock_now(c->q->clock) + delay * CLOCK_NS_PER_S;
	begin(c);
	field(c, "MD5OfMessageBody", qu->m[qu->n - 1].md5, false);
	field(c, "MessageId", id, true);
	end(c, true);
}

static void receive_message(struct ctx *c)
{
	struct queue *qu = queue_of(c);
	long max = 1, vis = DEFAULT_VISIBILITY_S, wait = 0;
	int64_t now;
	size_t i;
	long k = 0;

	if (!qu || int_param(c, "MaxNumberOfMessages", 1, 10, &max) < 0 ||
	    int_param(c, "VisibilityTimeout", 0, 43200, &vis) < 0 ||
	    int_param(c, "WaitTimeSeconds", 0, 20, &wait) < 0)
		return;
	now = clock_now(c->q->clock);
	begin(c);
	for (i = 0; i < qu->n && k < max; i++) {
		struct msg *m = &qu->m[i];
		char ts[32];

		if (m->visible_ns > now)
			continue;
		m->visible_ns = now + vis * CLOCK_NS_PER_S;
		m->receives++;
		{
			uint64_t x = backoff_rand(&c->q->rng), y = backoff_rand(&c->q->rng);

			snprintf(m->handle, sizeof(m->handle), "AQEB%016llx%016llx%s", (unsigned long long)x,
				 (unsigned long long)y, m->id);
		}
		snprintf(ts, sizeof(ts), "%lld", (long long)m->sent_wall_ms);
		if (c->json) {
			buf_puts(c->out, k ? ",{" : "\"Messages\":[{");
			field(c, "MessageId", m->id, false);
			field(c, "ReceiptHandle", m->handle, true);
			field(c, "MD5OfBody", m->md5, true);
			field(c, "Body", m->body, true);
			buf_puts(c->out, ",\"Attributes\":{");
			field(c, "SentTimestamp", ts, false);
			buf_printf(c->out, ",\"ApproximateReceiveCount\":\"%d\"}}", m->receives);
		} else {
			buf_puts(c->out, "<Message>");
			field(c, "MessageId", m->id, false);
			field(c, "ReceiptHandle", m->handle, false);
			field(c, "MD5OfBody", m->md5, false);
			field(c, "Body", m->body, false);
			buf_puts(c->out, "<Attribute><Name>SentTimestamp</Name>");
			x_tag(c->out, "Value", ts);
			buf_printf(c->out, "</Attribute><Attribute><Name>ApproximateReceiveCount</Name><Value>%d</Value></Attribute></Message>",
				   m->receives);
		}
		k++;
	}
	if (c->json && k)
		buf_puts(c->out, "]");
	end(c, true);
}

static void delete_message(struct ctx *c)
{
	struct queue *qu = queue_of(c);
	const char *h;
	size_t i;

	if (!qu || !(h = need(c, "ReceiptHandle")))
		return;
	for (i = 0; i < qu->n; i++) {
		if (!qu->m[i].handle[0] || strcmp(qu->m[i].handle, h))
			continue;
		free(qu->m[i].body);
		memmove(&qu->m[i], &qu->m[i + 1], (qu->n - i - 1) * sizeof(*qu->m));
		qu->n--;
		bare(c);
		return;
	}
	fail(c, 400, "ReceiptHandleIsInvalid", "ReceiptHandleIsInvalid",
	     "The input receipt handle \"%.100s\" is not a valid receipt handle.", h);
}

static void purge_queue(struct ctx *c)
{
	struct queue *qu = queue_of(c);
	size_t i;

	if (!qu)
		return;
	for (i = 0; i < qu->n; i++)
		free(qu->m[i].body);
	qu->n = 0;
	bare(c);
}

void sim_sqs_answer(struct sim_sqs *q, bool json, const char *action, sim_sqs_param_fn get,
		    void *ud, const char *base_url, const char *rid, struct buf *out,
		    struct sim_sqs_answer *ans)
{
	static const struct {
		const char *name;
		void (*fn)(struct ctx *c);
	} actions[] = {
		{"CreateQueue", create_queue},   {"GetQueueUrl", get_queue_url},
		{"ListQueues", list_queues},     {"SendMessage", send_message},
		{"ReceiveMessage", receive_message}, {"DeleteMessage", delete_message},
		{"PurgeQueue", purge_queue},
	};
	struct ctx c = {q, json, action ? action : "", get, ud, base_url, rid, out, ans};
	size_t i;

	memset(ans, 0, sizeof(*ans));
	snprintf(ans->action, sizeof(ans->action), "%.47s", action ? action : "");
	pthread_mutex_lock(&q->mu);
	for (i = 0; i < sizeof(actions) / sizeof(actions[0]); i++) {
		if (action && !strcmp(action, actions[i].name)) {
			actions[i].fn(&c);
			pthread_mutex_unlock(&q->mu);
			return;
		}
	}
	pthread_mutex_unlock(&q->mu);
	c.action = "Unknown";
	fail(&c, 400, "InvalidAction", "InvalidAction", "The action %.64s is not valid for this endpoint.",
	     action ? action : "(none)");
}
