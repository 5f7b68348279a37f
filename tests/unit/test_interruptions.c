/*
 * Tests for interruption notices: what model_decode.c reads from a node's
 * own conditions and taints (GKE's graceful shutdown, the AKS
 * node-problem-detector's scheduled events; tests/data/node-interruptions.json)
 * and engine/interruptions.c, which keeps the provider's notices (AWS, the
 * simulator) and marks them on a round's nodes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/interruptions.h"
#include "log.h"
#include "model.h"

static struct snapshot *load_data(const char *name)
{
	char path[512];
	struct errbuf err = {{0}};
	struct snapshot *s = snapshot_new();

	assert_non_null(s);
	snprintf(path, sizeof(path), "%s/%s", TEST_DATA_DIR, name);
	if (snapshot_load_file(s, path, &err) != 0)
		fail_msg("loading %s: %s", path, err.msg);
	return s;
}

static const struct node *node_named(const struct snapshot *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->n_nodes; i++)
		if (strcmp(s->nodes[i].name, name) == 0)
			return &s->nodes[i];
	fail_msg("no node %s", name);
	return NULL;
}

static int64_t at(const char *rfc3339)
{
	int64_t t;

	assert_int_equal(model_parse_time(rfc3339, &t), 0);
	return t;
}

static void expect_kind(const struct snapshot *s, const char *name, const char *kind,
			int64_t deadline)
{
	const struct node *n = node_named(s, name);

	if (!kind) {
		if (n->interruption_kind)
			fail_msg("%s: no interruption expected, got %s", name, n->interruption_kind);
		return;
	}
	if (!n->interruption_kind)
		fail_msg("%s: expected %s, got none", name, kind);
	assert_string_equal(n->interruption_kind, kind);
	assert_int_equal(n->interruption_deadline, deadline);
}

static void test_decoded_from_the_node(void **state)
{
	struct snapshot *s = load_data("node-interruptions.json");

	(void)state;
	/* GKE: the kubelet's graceful shutdown, 30 s after Ready turned False */
	expect_kind(s, "gke-spot-a", "shutdown", at("2026-03-02T10:00:00Z") + 30);
	assert_false(node_named(s, "gke-spot-a")->ready);
	/* GKE's termination handlers' taint: no deadline */
	expect_kind(s, "gke-gpu-b", "shutdown", 0);
	/* NotReady for another reason is no interruption */
	expect_kind(s, "gke-notready-c", NULL, 0);
	/* AKS node-problem-detector, one condition per event type (False ones ignored) */
	expect_kind(s, "aks-spot-00000a", "preempt", at("2026-03-02T10:00:30Z"));
	/* the consolidated VMEventScheduled, a one-digit day */
	expect_kind(s, "aks-user-00000b", "reboot", at("2026-03-02T10:15:00Z"));
	expect_kind(s, "aks-user-00000c", NULL, 0);
	/* two events: the stronger wins; one in progress has no date */
	expect_kind(s, "aks-user-00000d", "terminate", 0);
	expect_kind(s, "aks-user-00000e", "freeze", 0);
	expect_kind(s, "ip-10-0-1-5.ec2.internal", NULL, 0);
	/* the AWS Node Termination Handler's taints; the stronger of two wins */
	expect_kind(s, "ip-10-0-2-7.ec2.internal", "spot_interruption", 0);
	expect_kind(s, "ip-10-0-2-8.ec2.internal", "scheduled_change", 0);
	snapshot_free(s);
}

/* Log lines captured. */
struct lines {
	char text[16][512];
	size_t n;
};

static void capture(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct lines *l = ctx;

	(void)level;
	(void)wall;
	if (l->n < 16)
		snprintf(l->text[l->n++], sizeof(l->text[0]), "%s", msg);
}

static struct provider_interruption notice(const char *id, const char *pid,
					   enum provider_interruption_kind k, int64_t deadline,
					   int64_t received)
{
	struct provider_interruption v;

	memset(&v, 0, sizeof(v));
	snprintf(v.instance_id, sizeof(v.instance_id), "%s", id);
	snprintf(v.provider_id, sizeof(v.provider_id), "%s", pid);
	v.kind = k;
	v.deadline_wall = deadline;
	v.received_wall = received;
	return v;
}

/* A snapshot of AWS nodes (and the decoded ones), at 'now'. */
static struct snapshot *aws_nodes(int64_t now)
{
	struct snapshot *s = load_data("node-interruptions.json");
	struct errbuf err = {{0}};

	if (snapshot_finish(s, now, &err) != 0)
		fail_msg("%s", err.msg);
	return s;
}

static void test_provider_notices_marked(void **state)
{
	int64_t t0 = at("2026-03-02T10:00:00Z");
	struct interruptions *t = interruptions_new();
	struct lines lines = {0};
	struct logger log = {capture, &lines, LOG_DEBUG, NULL};
	struct provider_interruption v[3];
	struct snapshot *s;

	(void)state;
	assert_non_null(t);
	/* no providerID known (an instance the last listing did not see): the
	 * instance id at the end of the node's providerID finds it */
	v[0] = notice("i-0123456789abcdef0", "", PROVIDER_INTERRUPT_REBALANCE, 0, t0);
	v[1] = notice("i-0fffffffffffffff0", "", PROVIDER_INTERRUPT_SPOT_INTERRUPTION, t0 + 120, t0);
	assert_int_equal(interruptions_add(t, v, 2), 2);
	s = aws_nodes(t0 + 5);
	assert_int_equal(interruptions_mark(t, s, &log, NULL), 1);
	expect_kind(s, "ip-10-0-1-5.ec2.internal", "rebalance", 0);
	assert_int_equal(lines.n, 2);
	assert_non_null(strstr(lines.text[0], "instance i-0123456789abcdef0, node ip-10-0-1-5.ec2.internal"));
	assert_non_null(strstr(lines.text[0], "rebalance, deadline not known"));
	assert_non_null(strstr(lines.text[1], "i-0fffffffffffffff0, node (none in the cluster)"));
	/* a node's own notice is not overwritten (the decoded ones stay) */
	expect_kind(s, "aks-spot-00000a", "preempt", at("2026-03-02T10:00:30Z"));
	snapshot_free(s);

	/* the same notice again: nothing new, nothing logged */
	assert_int_equal(interruptions_add(t, v, 1), 0);
	/* a stronger kind wins, with its deadline, and is logged once */
	v[2] = notice("i-0123456789abcdef0", "aws:///us-east-1a/i-0123456789abcdef0",
		      PROVIDER_INTERRUPT_SPOT_INTERRUPTION, t0 + 130, t0 + 10);
	assert_int_equal(interruptions_add(t, &v[2], 1), 1);
	s = aws_nodes(t0 + 15);
	lines.n = 0;
	interruptions_mark(t, s, &log, NULL);
	expect_kind(s, "ip-10-0-1-5.ec2.internal", "spot_interruption", t0 + 130);
	assert_int_equal(lines.n, 1);
	assert_non_null(strstr(lines.text[0], "spot_interruption, deadline 2026-03-02T10:02:10Z"));
	/* a weaker one does not take its place */
	v[0] = notice("i-0123456789abcdef0", "", PROVIDER_INTERRUPT_SCHEDULED_CHANGE, t0 + 9999, t0);
	assert_int_equal(interruptions_add(t, v, 1), 0);
	lines.n = 0;
	interruptions_mark(t, s, &log, NULL);
	assert_int_equal(lines.n, 0); /* logged once */
	snapshot_free(s);
	assert_int_equal(interruptions_count(t), 2);

	/* the node is gone: its notice is forgotten; the one never seen
	 * stays until it is old */
	s = aws_nodes(t0 + 200);
	s->n_nodes = 0;
	interruptions_mark(t, s, &log, NULL);
	assert_int_equal(interruptions_count(t), 1);
	s->now = t0 + 120 + INTERRUPTIONS_KEEP_S;
	interruptions_mark(t, s, &log, NULL);
	assert_int_equal(interruptions_count(t), 1);
	s->now = t0 + 121 + INTERRUPTIONS_KEEP_S;
	interruptions_mark(t, s, &log, NULL);
	assert_int_equal(interruptions_count(t), 0);
	snapshot_free(s);
	interruptions_free(t);
}

static void test_kind_order(void **state)
{
	(void)state;
	assert_true(interruptions_kind_rank(PROVIDER_INTERRUPT_TERMINATED) >
		    interruptions_kind_rank(PROVIDER_INTERRUPT_STOPPING));
	assert_true(interruptions_kind_rank(PROVIDER_INTERRUPT_STOPPING) >
		    interruptions_kind_rank(PROVIDER_INTERRUPT_SPOT_INTERRUPTION));
	assert_true(interruptions_kind_rank(PROVIDER_INTERRUPT_SPOT_INTERRUPTION) >
		    interruptions_kind_rank(PROVIDER_INTERRUPT_SCHEDULED_CHANGE));
	assert_true(interruptions_kind_rank(PROVIDER_INTERRUPT_SCHEDULED_CHANGE) >
		    interruptions_kind_rank(PROVIDER_INTERRUPT_REBALANCE));
}

static void test_bounded(void **state)
{
	struct interruptions *t = interruptions_new();
	struct provider_interruption v;
	size_t i;

	(void)state;
	for (i = 0; i < INTERRUPTIONS_MAX + 10; i++) {
		char id[32];

		snprintf(id, sizeof(id), "i-%016zx", i);
		v = notice(id, "", PROVIDER_INTERRUPT_REBALANCE, 0, (int64_t)(1000 + i));
		assert_int_equal(interruptions_add(t, &v, 1), 1);
	}
	assert_int_equal(interruptions_count(t), INTERRUPTIONS_MAX);
	interruptions_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decoded_from_the_node),
		cmocka_unit_test(test_provider_notices_marked),
		cmocka_unit_test(test_kind_order),
		cmocka_unit_test(test_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
