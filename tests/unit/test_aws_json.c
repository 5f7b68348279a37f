/*
 * AWS JSON protocol calls (awsapi.c aws_json_call, as SQS's ReceiveMessage
 * makes them for the interruption queue) against a loopback fake that
 * answers from a script: the call carries X-Amz-Target and the JSON
 * content type and is signed; a throttling answer ("__type"
 * "...#ThrottlingException") is retried and logged as the query protocol's
 * are; an expired token drops the credentials and is sent once more; an
 * error is kept whole, its code without the namespace, with the
 * x-amzn-RequestId; a success that is not a JSON object is refused.
 * Reading the queue consumes it, a write: behind a closed write fence (a
 * replica that does not lead, and every --dry-run) no call goes out.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "log.h"
#include "providers/aws/aws.h"
#include "providers/provider.h"
#include "runtime/clock.h"
#include "runtime/fence.h"
#include "runtime/ratelimit.h"
#include "test_aws_env.h"
#include "test_cloud_server.h"

/* One scripted answer. */
struct answer {
	int status;
	const char *headers;
	const char *body;
};

struct fx {
	struct cs_server cs;
	const struct answer *script;
	size_t n_script;
	size_t n_calls;
	char target[128];        /* the last call's X-Amz-Target */
	char content_type[128];
	bool signed_ok;          /* every call had an Authorization header */
	struct config *cfg;
	struct provider *p;
	struct logger logger;
	char log[8192];
};

static const char *hdr(const struct cs_req *rq, const char *name)
{
	size_t i;

	for (i = 0; i < rq->n_hdrs; i++)
		if (!strcasecmp(rq->hdr_name[i], name))
			return rq->hdr_value[i];
	return NULL;
}

static void handler(void *ud, size_t index, const struct cs_req *rq, struct cs_resp *rs)
{
	struct fx *f = ud;
	const struct answer *a = &f->script[index < f->n_script ? index : f->n_script - 1];
	const char *t = hdr(rq, "X-Amz-Target"), *ct = hdr(rq, "Content-Type");

	f->n_calls++;
	snprintf(f->target, sizeof(f->target), "%s", t ? t : "");
	snprintf(f->content_type, sizeof(f->content_type), "%s", ct ? ct : "");
	if (!hdr(rq, "Authorization"))
		f->signed_ok = false;
	rs->status = a->status;
	snprintf(rs->headers, sizeof(rs->headers), "%s", a->headers ? a->headers : "");
	snprintf(rs->body, sizeof(rs->body), "%s", a->body);
}

static void capture(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct fx *f = ctx;
	size_t n = strlen(f->log);

	(void)wall;
	(void)level;
	snprintf(f->log + n, sizeof(f->log) - n, "%s\n", msg);
}

/* A provider reading the queue of the fake, which answers 'script'. */
static struct fx *fx_new(const struct answer *script, size_t n)
{
	struct config_opts co = {.flags = CONFIG_OFFLINE};
	static struct aws_env env = {test_aws_env, NULL};
	struct aws_provider_opts o;
	struct errbuf e = {""};
	struct fx *f = calloc(1, sizeof(*f));
	char text[2048];

	assert_non_null(f);
	f->script = script;
	f->n_script = n;
	f->signed_ok = true;
	assert_int_equal(cs_start(&f->cs, handler, f, NULL, NULL), 0);
	snprintf(text, sizeof(text),
		 "node_groups:\n  - {name: a, aws: {asg: asg-a}}\n"
		 "provider:\n  kind: aws\n"
		 "  aws: {region: us-east-1, interruption_queue: \"%s/123456789012/q\", "
		 "endpoints: {sqs: \"%s\", autoscaling: \"%s\", ec2: \"%s\", sts: \"%s\"}}\n",
		 f->cs.url, f->cs.url, f->cs.url, f->cs.url, f->cs.url);
	f->cfg = config_parse_opts(text, strlen(text), "aws.yaml", &co, &e);
	if (!f->cfg)
		fail_msg("config: %s", e.msg);
	f->logger = (struct logger){capture, f, LOG_DEBUG, NULL};
	memset(&o, 0, sizeof(o));
	o.config = f->cfg;
	o.log = &f->logger;
	o.env = &env;
	o.home = "/nonexistent";
	f->p = aws_provider_new(&o, &e);
	if (!f->p)
		fail_msg("aws_provider_new: %s", e.msg);
	return f;
}

static void fx_free(struct fx *f)
{
	if (getenv("AWS_TEST_LOG"))
		fputs(f->log, stderr);
	provider_free(f->p);
	config_free(f->cfg);
	cs_stop(&f->cs);
	free(f);
}

/* Reads the queue once: the provider's answer, and its status in 'st'. */
static int receive(struct fx *f, size_t *n, struct provider_status *st)
{
	struct provider_interruption *v = NULL;
	int rc = f->p->ops->interruptions(f->p, &v, n, st);

	free(v);
	return rc;
}

#define EMPTY "{\"Messages\":[]}"

static void test_throttled_then_answered(void **state)
{
	static const struct answer script[] = {
		{400, "Retry-After: 0\n", "{\"__type\":\"com.amazonaws.sqs#ThrottlingException\",\"message\":\"slow down\"}"},
		{200, NULL, EMPTY},
	};
	struct fx *f = fx_new(script, 2);
	struct provider_status st;
	size_t n = 9;

	(void)state;
	if (receive(f, &n, &st) < 0)
		fail_msg("interruptions failed: %s\n%s", st.message, f->log);
	assert_int_equal(n, 0);
	assert_int_equal(f->n_calls, 2);
	assert_string_equal(f->target, "AmazonSQS.ReceiveMessage");
	assert_string_equal(f->content_type, "application/x-amz-json-1.0");
	assert_true(f->signed_ok);
	if (!strstr(f->log, "aws: ReceiveMessage throttled (ThrottlingException, HTTP 400)"))
		fail_msg("no throttling line in the log:\n%s", f->log);
	fx_free(f);
}

static void test_expired_token_sent_again(void **state)
{
	static const struct answer script[] = {
		{400, NULL, "{\"__type\":\"com.amazon.coral.service#ExpiredTokenException\"}"},
		{400, NULL, "{\"__type\":\"ExpiredToken\",\"message\":\"The security token included in the request is expired\"}"},
		{200, NULL, EMPTY},
	};
	struct fx *f = fx_new(script, 3);
	struct provider_status st;
	size_t n = 0;

	(void)state;
	/* the first answer's code is not one that refreshes: kept whole, not retried */
	assert_int_equal(receive(f, &n, &st), -1);
	assert_int_equal(f->n_calls, 1);
	if (strncmp(st.message, "ExpiredTokenException", 21) || !strstr(st.message, "ReceiveMessage"))
		fail_msg("the status is \"%s\"", st.message);
	/* ExpiredToken: the credentials are fetched anew and the call sent once more */
	if (receive(f, &n, &st) < 0)
		fail_msg("interruptions failed: %s\n%s", st.message, f->log);
	assert_int_equal(f->n_calls, 3);
	fx_free(f);
}

static void test_error_whole(void **state)
{
	static const struct answer script[] = {
		{403, "x-amzn-RequestId: 5b1f-req\n",
		 "{\"__type\":\"com.amazonaws.sqs#AccessDenied\",\"message\":\"Access to the resource is denied.\"}"},
	};
	struct fx *f = fx_new(script, 1);
	struct provider_status st;
	size_t n = 0;

	(void)state;
	assert_int_equal(receive(f, &n, &st), -1);
	assert_int_equal(f->n_calls, 1);
	assert_int_equal(st.code, PROVIDER_AUTH);
	if (strncmp(st.message, "AccessDenied: Access to the resource is denied.", 47) ||
	    !strstr(st.message, "ReceiveMessage (request 5b1f-req)"))
		fail_msg("the status is \"%s\"", st.message);
	fx_free(f);
}

static void test_malformed_success(void **state)
{
	static const struct answer script[] = {{200, NULL, "[1, 2"}};
	struct fx *f = fx_new(script, 1);
	struct provider_status st;
	size_t n = 0;

	(void)state;
	assert_int_equal(receive(f, &n, &st), -1);
	assert_int_equal(st.code, PROVIDER_TRANSIENT);
	if (!strstr(st.message, "ReceiveMessage: sqs answered 200 with malformed JSON"))
		fail_msg("the status is \"%s\"", st.message);
	fx_free(f);
}

static void test_fenced_queue_not_read(void **state)
{
	static const struct answer script[] = {{200, NULL, EMPTY}};
	struct fx *f = fx_new(script, 1);
	struct fence *fence = fence_new(clock_real());
	struct provider_status st;
	size_t n = 0;

	(void)state;
	assert_non_null(fence);
	ratelimit_set_fence(f->p->mutating, fence);
	/* never opened, as under --dry-run, or closed when the Lease is lost */
	assert_int_equal(receive(f, &n, &st), -1);
	assert_int_equal(st.code, PROVIDER_CANCELLED);
	if (!strstr(st.message, "leader Lease"))
		fail_msg("the status is \"%s\"", st.message);
	assert_int_equal(f->n_calls, 0);
	/* while the Lease holds, the queue is read */
	fence_open_until(fence, clock_now(clock_real()) + 60 * CLOCK_NS_PER_S);
	if (receive(f, &n, &st) < 0)
		fail_msg("interruptions failed: %s\n%s", st.message, f->log);
	assert_int_equal(f->n_calls, 1);
	fence_close(fence);
	assert_int_equal(receive(f, &n, &st), -1);
	assert_int_equal(f->n_calls, 1);
	fx_free(f);
	fence_free(fence);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_throttled_then_answered),
		cmocka_unit_test(test_expired_token_sent_again),
		cmocka_unit_test(test_error_whole),
		cmocka_unit_test(test_malformed_success),
		cmocka_unit_test(test_fenced_queue_not_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
