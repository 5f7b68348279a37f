/*
 * Interruption notices: the AWS provider reading an SQS queue of the
 * simulator's AWS face, in one process on loopback. The four EventBridge
 * events become interruptions with the right instance, group, providerID
 * and deadline; malformed and unknown messages are deleted with a warning
 * and never returned; a message is returned once, and deleted on the next
 * call; an SQS error is kept whole in the status. Then the parser alone
 * against hostile bodies. No sleeps: every call answers at once.
 */
#include <pthread.h>
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
#include "providers/aws/aws_interrupt.h"
#include "providers/provider.h"
#include "runtime/clock.h"
#include "runtime/executor.h"
#include "sim/clouds/aws_face.h"
#include "sim/clouds/cloud.h"
#include "sim/world/scenario.h"
#include "sim/clouds/sqs.h"

#define ACCESS_KEY "AKIATESTSIMULATED001"
#define SECRET_KEY "dGVzdC1zZWNyZXQta2V5LWZvci10aGUtc2ltdWxhdG9y"
#define T0 INT64_C(1796112000) /* 2026-12-01T08:00:00Z */

struct rig {
	struct sim_scenario *sc;
	struct executor *ex;
	struct sim_world *w;
	struct aws_face *face;
	struct config *cfg;
	struct provider *p;
	char url[64];
	struct logger plog;
	struct aws_env env;
	pthread_mutex_t mu;
	char warnings[4096];   /* the provider's warnings, joined */
	int n_warnings;
};

static void prov_write(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct rig *r = ctx;

	(void)wall;
	if (level >= LOG_WARN) {
		pthread_mutex_lock(&r->mu);
		r->n_warnings++;
		snprintf(r->warnings + strlen(r->warnings), sizeof(r->warnings) - strlen(r->warnings),
			 "%s\n", msg);
		pthread_mutex_unlock(&r->mu);
	}
	if (getenv("AWS_TEST_LOG"))
		fprintf(stderr, "provider: %s\n", msg);
}

static const char *env_get(void *ud, const char *name)
{
	struct rig *r = ud;

	if (!strcmp(name, "AWS_ENDPOINT_URL"))
		return r->url;
	if (!strcmp(name, "AWS_REGION"))
		return "us-east-1";
	if (!strcmp(name, "AWS_ACCESS_KEY_ID"))
		return ACCESS_KEY;
	if (!strcmp(name, "AWS_SECRET_ACCESS_KEY"))
		return SECRET_KEY;
	if (!strcmp(name, "AWS_EC2_METADATA_DISABLED"))
		return "true";
	return NULL;
}

/* A world with ASG "workers" (2 instances) and the queue "q"; the
 * provider reads queue 'queue' (NULL: "q"). */
static struct rig *rig_new(const char *queue)
{
	struct rig *r = calloc(1, sizeof(*r));
	struct aws_face_opts fo;
	struct aws_provider_opts po;
	struct config_opts co = {.flags = CONFIG_OFFLINE};
	struct errbuf err;
	char text[4096];

	assert_non_null(r);
	pthread_mutex_init(&r->mu, NULL);
	snprintf(text, sizeof(text),
		 "seed: 5\nstart: \"2026-12-01T08:00:00Z\"\nduration: 1h\n"
		 "node_groups:\n"
		 "  - {name: workers, min: 0, max: 10, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}\n"
		 "cloud: {launch_latency: 50ms, boot_delay: 1h, boot_jitter: 0s}\n"
		 "initial_nodes: [{group: workers, count: 2}]\n"
		 "aws:\n  region: us-east-1\n  cluster: t\n  interruption_queue: q\n  credentials:\n"
		 "    access_key_id: " ACCESS_KEY "\n    secret_access_key: " SECRET_KEY "\n"
		 "  groups:\n    workers: {zones: [us-east-1a], instance_types: [m5.large]}\n");
	r->sc = sim_scenario_parse(text, strlen(text), "t.yaml", &err);
	if (!r->sc)
		fail_msg("scenario: %s", err.msg);
	r->ex = executor_new_pool(2, 1024);
	assert_non_null(r->ex);
	r->w = sim_world_new(r->sc, r->ex, &err);
	if (!r->w)
		fail_msg("world: %s", err.msg);
	memset(&fo, 0, sizeof(fo));
	r->face = aws_face_new(sim_world_flavour(r->w, &sim_cloud_aws), &fo, &err);
	if (!r->face)
		fail_msg("face: %s", err.msg);
	snprintf(r->url, sizeof(r->url), "http://127.0.0.1:%d", aws_face_port(r->face));
	snprintf(text, sizeof(text),
		 "node_groups:\n  - {name: workers, min: 0, max: 10, aws: {asg: workers}}\n"
		 "provider:\n  kind: aws\n  qps: 100\n  burst: 100\n  read_qps: 100\n  read_burst: 100\n"
		 "  aws: {cluster_name: t, interruption_queue: \"%s/123456789012/%s\"}\n",
		 r->url, queue ? queue : "q");
	r->cfg = config_parse_opts(text, strlen(text), "aws.yaml", &co, &err);
	if (!r->cfg)
		fail_msg("config: %s", err.msg);
	r->env.get = env_get;
	r->env.ud = r;
	r->plog = (struct logger){prov_write, r, LOG_DEBUG, NULL};
	memset(&po, 0, sizeof(po));
	po.config = r->cfg;
	po.log = &r->plog;
	po.env = &r->env;
	po.home = "/nonexistent";
	r->p = aws_provider_new(&po, &err);
	if (!r->p)
		fail_msg("provider: %s", err.msg);
	return r;
}

static void rig_free(struct rig *r)
{
	provider_free(r->p);
	config_free(r->cfg);
	aws_face_free(r->face);
	executor_shutdown(r->ex, clock_now(clock_real()) + 2 * CLOCK_NS_PER_S);
	sim_world_free(r->w);
	sim_scenario_free(r->sc);
	pthread_mutex_destroy(&r->mu);
	free(r);
}

/* Lists once, so the provider knows the instances; their ids into ids[2]. */
static void list(struct rig *r, char ids[2][128], char pids[2][256])
{
	struct provider_group *gs = NULL;
	struct provider_status st;
	size_t n = 0;

	if (r->p->ops->list_groups(r->p, &gs, &n, &st) < 0)
		fail_msg("list_groups: %s", st.message);
	assert_int_equal(n, 1);
	assert_int_equal(gs[0].n_instances, 2);
	snprintf(ids[0], 128, "%s", gs[0].instances[0].id);
	snprintf(ids[1], 128, "%s", gs[0].instances[1].id);
	snprintf(pids[0], 256, "%s", gs[0].instances[0].provider_id);
	snprintf(pids[1], 256, "%s", gs[0].instances[1].provider_id);
	provider_groups_free(gs, n);
}

static void send(struct rig *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void send(struct rig *r, const char *fmt, ...)
{
	char body[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(body, sizeof(body), fmt, ap);
	va_end(ap);
	if (sim_sqs_send(sim_aws_sqs(sim_world_flavour(r->w, &sim_cloud_aws)), "q", body, NULL) < 0)
		fail_msg("the queue refused a message");
}

static long depth(struct rig *r)
{
	return sim_sqs_depth(sim_aws_sqs(sim_world_flavour(r->w, &sim_cloud_aws)), "q");
}

#define EC2_EVENT "{\"version\":\"0\",\"id\":\"e-%d\",\"detail-type\":\"%s\",\"source\":\"aws.ec2\"," \
		  "\"account\":\"123456789012\",\"time\":\"2026-12-01T08:00:00Z\",\"region\":\"us-east-1\"," \
		  "\"resources\":[],\"detail\":{\"instance-id\":\"%s\"%s}}"

static const struct provider_interruption *of(const struct provider_interruption *v, size_t n,
					      enum provider_interruption_kind k, const char *id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].kind == k && !strcmp(v[i].instance_id, id))
			return &v[i];
	fail_msg("no %s interruption of %s among %zu", provider_interruption_kind_str(k), id, n);
	return NULL;
}

/* ---- tests ---- */

static void test_four_events(void **state)
{
	struct rig *r = rig_new(NULL);
	struct provider_interruption *v = NULL;
	const struct provider_interruption *pi;
	struct provider_status st;
	char ids[2][128], pids[2][256];
	size_t n = 0;

	(void)state;
	list(r, ids, pids);
	send(r, EC2_EVENT, 1, "EC2 Spot Instance Interruption Warning", ids[0], ",\"instance-action\":\"terminate\"");
	send(r, EC2_EVENT, 2, "EC2 Instance Rebalance Recommendation", ids[1], "");
	send(r, EC2_EVENT, 3, "EC2 Instance State-change Notification", ids[0], ",\"state\":\"stopping\"");
	send(r, EC2_EVENT, 4, "EC2 Instance State-change Notification", ids[1], ",\"state\":\"terminated\"");
	send(r, "{\"version\":\"0\",\"id\":\"e-5\",\"detail-type\":\"AWS Health Event\",\"source\":\"aws.health\","
		"\"time\":\"2026-12-01T08:00:00Z\",\"region\":\"us-east-1\",\"resources\":[\"%s\"],"
		"\"detail\":{\"service\":\"EC2\",\"eventTypeCategory\":\"scheduledChange\","
		"\"eventTypeCode\":\"AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED\","
		"\"startTime\":\"Tue, 01 Dec 2026 09:30:00 GMT\","
		"\"affectedEntities\":[{\"entityValue\":\"%s\"},{\"entityValue\":\"i-00000000000000abc\"}]}}",
	     ids[1], ids[1]);
	if (r->p->ops->interruptions(r->p, &v, &n, &st) < 0)
		fail_msg("interruptions: %s", st.message);
	assert_int_equal(n, 6);
	pi = of(v, n, PROVIDER_INTERRUPT_SPOT_INTERRUPTION, ids[0]);
	assert_string_equal(pi->group, "workers");
	assert_string_equal(pi->provider_id, pids[0]);
	assert_int_equal(pi->deadline_wall, T0 + 120);
	assert_int_equal(pi->received_wall, T0);
	pi = of(v, n, PROVIDER_INTERRUPT_REBALANCE, ids[1]);
	assert_string_equal(pi->group, "workers");
	assert_int_equal(pi->deadline_wall, 0);
	pi = of(v, n, PROVIDER_INTERRUPT_STOPPING, ids[0]);
	assert_string_equal(pi->provider_id, pids[0]);
	pi = of(v, n, PROVIDER_INTERRUPT_TERMINATED, ids[1]);
	assert_string_equal(pi->group, "workers");
	pi = of(v, n, PROVIDER_INTERRUPT_SCHEDULED_CHANGE, ids[1]);
	assert_int_equal(pi->deadline_wall, T0 + 90 * 60);
	assert_string_equal(pi->group, "workers");
	/* an instance the provider does not manage: returned, without a group */
	pi = of(v, n, PROVIDER_INTERRUPT_SCHEDULED_CHANGE, "i-00000000000000abc");
	assert_string_equal(pi->group, "");
	assert_string_equal(pi->provider_id, "");
	free(v);
	assert_int_equal(r->n_warnings, 0);
	rig_free(r);
}

static void test_bad_messages_deleted(void **state)
{
	struct rig *r = rig_new(NULL);
	struct provider_interruption *v = NULL;
	struct provider_status st;
	char ids[2][128], pids[2][256];
	size_t n = 99;

	(void)state;
	list(r, ids, pids);
	send(r, "not json at all");
	send(r, "[1,2,3]");
	send(r, "{\"detail-type\":\"EC2 Spot Instance Interruption Warning\",\"source\":\"aws.ec2\",\"time\":\"2026-12-01T08:00:00Z\",\"detail\":{\"instance-id\":\"i-notHEX\"}}");
	send(r, "{\"detail-type\":\"EC2 Spot Instance Interruption Warning\",\"source\":\"aws.ec2\",\"time\":\"yesterday\",\"detail\":{\"instance-id\":\"%s\"}}",
	     ids[0]);
	send(r, EC2_EVENT, 7, "EC2 Instance Launch Successful", ids[0], "");
	send(r, EC2_EVENT, 8, "EC2 Instance State-change Notification", ids[0], ",\"state\":\"running\"");
	if (r->p->ops->interruptions(r->p, &v, &n, &st) < 0)
		fail_msg("interruptions: %s", st.message);
	assert_int_equal(n, 0);
	free(v);
	/* every one deleted at once, the malformed ones with a warning each */
	assert_int_equal(depth(r), 0);
	assert_int_equal(r->n_warnings, 4);
	assert_non_null(strstr(r->warnings, "not a JSON object"));
	assert_non_null(strstr(r->warnings, "without a valid detail.instance-id"));
	assert_non_null(strstr(r->warnings, "without a valid time"));
	/* the body is never logged */
	assert_null(strstr(r->warnings, "not json at all"));
	rig_free(r);
}

static void test_returned_once(void **state)
{
	struct rig *r = rig_new(NULL);
	struct provider_interruption *v = NULL;
	struct provider_status st;
	char ids[2][128], pids[2][256];
	size_t n = 0;

	(void)state;
	list(r, ids, pids);
	send(r, EC2_EVENT, 1, "EC2 Spot Instance Interruption Warning", ids[0], ",\"instance-action\":\"terminate\"");
	if (r->p->ops->interruptions(r->p, &v, &n, &st) < 0)
		fail_msg("interruptions: %s", st.message);
	assert_int_equal(n, 1);
	free(v);
	/* returned, not yet acknowledged: still on the queue (hidden) */
	assert_int_equal(depth(r), 1);
	v = NULL;
	if (r->p->ops->interruptions(r->p, &v, &n, &st) < 0)
		fail_msg("interruptions: %s", st.message);
	assert_int_equal(n, 0);
	free(v);
	assert_int_equal(depth(r), 0);
	assert_int_equal(r->n_warnings, 0);
	rig_free(r);
}

static void test_queue_error_whole(void **state)
{
	struct rig *r = rig_new("no-such-queue");
	struct provider_interruption *v = NULL;
	struct provider_status st;
	size_t n = 0;

	(void)state;
	assert_int_equal(r->p->ops->interruptions(r->p, &v, &n, &st), -1);
	assert_null(v);
	assert_int_equal(n, 0);
	assert_int_not_equal(st.code, PROVIDER_OK);
	if (strncmp(st.message, "QueueDoesNotExist: The specified queue does not exist.", 54) ||
	    !strstr(st.message, "ReceiveMessage"))
		fail_msg("the status is \"%s\"", st.message);
	rig_free(r);
}

/* ---- the parser alone ---- */

static enum aws_event_verdict parse(const char *body, struct provider_interruption *out, size_t cap,
				    size_t *n)
{
	char why[256];

	return aws_interrupt_parse(body, strlen(body), out, cap, n, why, sizeof(why));
}

static void test_parser_hostile(void **state)
{
	static const char *const malformed[] = {
		"", "{", "null", "\"x\"", "{\"detail-type\":1,\"source\":\"aws.ec2\",\"detail\":{}}",
		"{\"detail-type\":\"EC2 Spot Instance Interruption Warning\",\"source\":\"aws.ec2\",\"detail\":[]}",
		"{\"detail-type\":\"EC2 Spot Instance Interruption Warning\",\"source\":\"aws.ec2\",\"time\":\"2026-12-01T08:00:00Z\",\"detail\":{\"instance-id\":7}}",
		"{\"detail-type\":\"EC2 Spot Instance Interruption Warning\",\"source\":\"aws.ec2\",\"time\":\"2026-12-01T08:00:00Z\",\"detail\":{\"instance-id\":\"i-0123456789abcdef01\"}}",
		"{\"detail-type\":\"EC2 Instance State-change Notification\",\"source\":\"aws.ec2\",\"time\":\"2026-12-01T08:00:00Z\",\"detail\":{\"instance-id\":\"i-0123456789abcdef0\"}}",
		"{\"detail-type\":\"AWS Health Event\",\"source\":\"aws.health\",\"time\":\"2026-12-01T08:00:00Z\",\"detail\":{\"service\":\"EC2\",\"eventTypeCategory\":\"scheduledChange\",\"affectedEntities\":{}}}",
		"{\"detail-type\":\"AWS Health Event\",\"source\":\"aws.health\",\"time\":\"2026-12-01T08:00:00Z\",\"detail\":{\"service\":\"EC2\",\"eventTypeCategory\":\"scheduledChange\",\"startTime\":\"Mon, 99 Foo 2026 99:00:00 GMT\",\"affectedEntities\":[]}}",
	};
	struct provider_interruption out[AWS_EVENT_MAX_INSTANCES];
	size_t i, n;
	char *big;

	(void)state;
	for (i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++)
		if (parse(malformed[i], out, 4, &n) != AWS_EVENT_MALFORMED || n)
			fail_msg("not refused as malformed: %s", malformed[i]);
	/* a spoofed source, another service's Health event: ignored, not malformed */
	assert_int_equal(parse("{\"detail-type\":\"EC2 Spot Instance Interruption Warning\",\"source\":\"my.app\",\"time\":\"2026-12-01T08:00:00Z\",\"detail\":{\"instance-id\":\"i-0123456789abcdef0\"}}",
			       out, 4, &n), AWS_EVENT_IGNORED);
	assert_int_equal(parse("{\"detail-type\":\"AWS Health Event\",\"source\":\"aws.health\",\"time\":\"2026-12-01T08:00:00Z\",\"detail\":{\"service\":\"RDS\",\"eventTypeCategory\":\"scheduledChange\",\"affectedEntities\":[]}}",
			       out, 4, &n), AWS_EVENT_IGNORED);
	/* a Health event naming more instances than there is room for: bounded */
	big = malloc(64 * 1024);
	assert_non_null(big);
	n = (size_t)snprintf(big, 64 * 1024, "{\"detail-type\":\"AWS Health Event\",\"source\":\"aws.health\",\"time\":\"2026-12-01T08:00:00Z\",\"detail\":{\"service\":\"EC2\",\"eventTypeCategory\":\"scheduledChange\",\"startTime\":\"2026-12-01T09:00:00Z\",\"affectedEntities\":[");
	for (i = 0; i < 300; i++)
		n += (size_t)snprintf(big + n, 64 * 1024 - n, "%s{\"entityValue\":\"i-%017zx\"}", i ? "," : "", i);
	snprintf(big + n, 64 * 1024 - n, "]}}");
	assert_int_equal(parse(big, out, AWS_EVENT_MAX_INSTANCES, &n), AWS_EVENT_OK);
	assert_int_equal(n, AWS_EVENT_MAX_INSTANCES);
	assert_int_equal(out[0].deadline_wall, T0 + 3600);
	free(big);
	/* deep nesting and a body over the limit */
	big = malloc(AWS_EVENT_MAX_BODY + 2);
	assert_non_null(big);
	memset(big, '[', AWS_EVENT_MAX_BODY + 1);
	big[AWS_EVENT_MAX_BODY + 1] = '\0';
	assert_int_equal(parse(big, out, 4, &n), AWS_EVENT_MALFORMED);
	big[4000] = '\0';
	assert_int_equal(parse(big, out, 4, &n), AWS_EVENT_MALFORMED);
	free(big);
	assert_string_equal(provider_interruption_kind_str(PROVIDER_INTERRUPT_SCHEDULED_CHANGE), "scheduled_change");
}

/* ---- what the config and the scenario accept ---- */

static void test_config_queue_url(void **state)
{
	static const char *const bad[] = {
		"sqs.us-east-1.amazonaws.com/123456789012/q",          /* no scheme */
		"https://sqs.us-east-1.amazonaws.com/q",               /* no account */
		"https://sqs.us-east-1.amazonaws.com/12345/q",         /* not 12 digits */
		"https://sqs.us-east-1.amazonaws.com/123456789012/",   /* no name */
		"https://sqs.us-east-1.amazonaws.com/123456789012/a b",
		"https://sqs.us-east-1.amazonaws.com/123456789012/q?x=1",
		"https://user@sqs.us-east-1.amazonaws.com/123456789012/q",
	};
	struct config_opts co = {.flags = CONFIG_OFFLINE};
	struct errbuf err;
	struct config *c;
	char text[1024];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text),
			 "node_groups:\n  - {name: w, min: 0, max: 3}\n"
			 "provider:\n  kind: aws\n  aws: {interruption_queue: \"%s\"}\n", bad[i]);
		c = config_parse_opts(text, strlen(text), "c.yaml", &co, &err);
		if (c)
			fail_msg("accepted: %s", bad[i]);
		if (!strstr(err.msg, "interruption_queue") || !strstr(err.msg, "SQS queue URL"))
			fail_msg("unclear error for %s: %s", bad[i], err.msg);
	}
	snprintf(text, sizeof(text),
		 "node_groups:\n  - {name: w, min: 0, max: 3}\n"
		 "provider:\n  kind: aws\n  aws: {interruption_queue: "
		 "\"https://sqs.eu-west-1.amazonaws.com/123456789012/karpenter-int_1.fifo\"}\n");
	c = config_parse_opts(text, strlen(text), "c.yaml", &co, &err);
	if (!c)
		fail_msg("refused: %s", err.msg);
	assert_string_equal(c->aws.interruption_queue,
			    "https://sqs.eu-west-1.amazonaws.com/123456789012/karpenter-int_1.fifo");
	config_free(c);
}

static void test_scenario_interrupt_fault(void **state)
{
	static const struct {
		const char *fault, *says;
	} bad[] = {
		{"{kind: interrupt, group: w, count: 1}", "at"},
		{"{kind: interrupt, group: w, at: 1m}", "one of count"},
		{"{kind: interrupt, group: w, at: 1m, count: 1, fraction: 0.5}", "one of count"},
		{"{kind: interrupt, group: w, at: 1m, fraction: 0}", "fraction"},
		{"{kind: interrupt, group: w, at: 1m, count: 1, from: 2m}", "not from"},
		{"{kind: interrupt, group: nope, at: 1m, count: 1}", "nope"},
		{"{kind: launch_error, group: w, warning: 1m}", "interrupt faults only"},
	};
	struct sim_scenario *sc;
	struct errbuf err;
	char text[1024];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text),
			 "duration: 1h\nnode_groups:\n  - {name: w, min: 0, max: 3, template: {allocatable: {cpu: 2, memory: 4Gi, pods: 10}}}\n"
			 "faults:\n  - %s\n", bad[i].fault);
		sc = sim_scenario_parse(text, strlen(text), "s.yaml", &err);
		if (sc)
			fail_msg("accepted: %s", bad[i].fault);
		if (!strstr(err.msg, bad[i].says))
			fail_msg("%s: the error does not say \"%s\": %s", bad[i].fault, bad[i].says, err.msg);
	}
	snprintf(text, sizeof(text),
		 "duration: 1h\nnode_groups:\n  - {name: w, min: 0, max: 3, template: {allocatable: {cpu: 2, memory: 4Gi, pods: 10}}}\n"
		 "faults:\n  - {kind: interrupt, group: w, at: 10m, fraction: 0.2}\n");
	sc = sim_scenario_parse(text, strlen(text), "s.yaml", &err);
	if (!sc)
		fail_msg("refused: %s", err.msg);
	assert_int_equal(sc->n_faults, 1);
	assert_int_equal(sc->faults[0].kind, SIM_FAULT_INTERRUPT);
	assert_int_equal(sc->faults[0].from_ns, 10 * 60 * CLOCK_NS_PER_S);
	assert_int_equal(sc->faults[0].delay_ns, 2 * 60 * CLOCK_NS_PER_S);
	assert_true(sc->faults[0].rate > 0.19 && sc->faults[0].rate < 0.21);
	sim_scenario_free(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_four_events),
		cmocka_unit_test(test_bad_messages_deleted),
		cmocka_unit_test(test_returned_once),
		cmocka_unit_test(test_queue_error_whole),
		cmocka_unit_test(test_parser_hostile),
		cmocka_unit_test(test_config_queue_url),
		cmocka_unit_test(test_scenario_interrupt_fault),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
