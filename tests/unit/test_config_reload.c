/*
 * Tests for a config read again while running: the settings that need a
 * restart are named and keep their running values (config_reload.c), and
 * reconciler_apply_config() puts a new config and its policy in place only
 * when the policy loads and passes its trial, keeping the old ones else.
 * Also the operations keys of the config (log, status, events, reload).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "config_reload.h"
#include "engine/reconciler.h"
#include "test_policy_files.h"

/* a group's template, which groups without a cloud need */
#define T "template: {allocatable: {cpu: 1, memory: 1Gi}}"

static struct config *parse(const char *yaml)
{
	struct errbuf err;
	struct config_opts o = {0};
	struct config *c;

	o.flags = CONFIG_OFFLINE;
	c = config_parse_opts(yaml, strlen(yaml), "config.yaml", &o, &err);
	if (!c)
		fail_msg("config: %s", err.msg);
	return c;
}

static void test_restart_only_settings_kept(void **state)
{
	struct config *run = parse("cluster: {kubeconfig: /k, context: prod}\n"
				   "provider: {kind: sim, qps: 5, burst: 10}\n"
				   "node_groups: [{name: a, min: 0, max: 3, " T "}]\n"
				   "safety: {max_nodes_total: 10, protected_pod_selector: \"app=hub\"}\n"
				   "log: {format: text, level: info}\n");
	struct config *next = parse("cluster: {kubeconfig: /other, context: staging}\n"
				    "provider: {kind: aws, qps: 7, burst: 10}\n"
				    "node_groups: [{name: a, min: 0, max: 5, " T "}, {name: b, min: 0, max: 2, " T "}]\n"
				    "safety: {max_nodes_total: 20, protected_pod_selector: \"app=x\"}\n"
				    "log: {format: json, level: debug}\n");
	char report[512];
	size_t n;

	(void)state;
	n = config_keep_restart_only(run, next, report, sizeof(report));
	assert_int_equal(n, 7);
	assert_string_equal(report, "cluster.kubeconfig, cluster.context, provider.kind, provider.qps, "
				    "safety.protected_pod_selector, log.format, log.level");
	/* kept as they run */
	assert_string_equal(next->kubeconfig, "/k");
	assert_string_equal(next->context, "prod");
	assert_string_equal(next->provider_kind, "sim");
	assert_true(next->provider_qps == 5);
	assert_string_equal(next->protected_pod_selector, "app=hub");
	assert_false(next->log_json);
	assert_int_equal(next->log_level, LOG_INFO);
	/* applied: groups (the sim provider reads them each round), safety */
	assert_int_equal(next->n_groups, 2);
	assert_int_equal(next->groups[0].max, 5);
	assert_int_equal(next->max_nodes_total, 20);
	/* the same config again: nothing to report */
	assert_int_equal(config_keep_restart_only(run, run, report, sizeof(report)), 0);
	assert_string_equal(report, "");
	config_free(next);
	config_free(run);
}

static void test_cloud_groups_need_restart(void **state)
{
	struct config *run = parse("provider: {kind: aws}\nnode_groups: [{name: a, min: 0, max: 3}]\n");
	struct config *next = parse("provider: {kind: aws}\n"
				    "node_groups: [{name: a, min: 0, max: 3}, {name: b, min: 0, max: 1}]\n");
	struct config *resized = parse("provider: {kind: aws}\nnode_groups: [{name: a, min: 1, max: 9}]\n");
	char report[512];

	(void)state;
	assert_int_equal(config_keep_restart_only(run, next, report, sizeof(report)), 1);
	assert_non_null(strstr(report, "node_groups"));
	assert_int_equal(next->n_groups, 1);
	/* the same groups with other sizes: applied */
	assert_int_equal(config_keep_restart_only(run, resized, report, sizeof(report)), 0);
	assert_int_equal(resized->groups[0].max, 9);
	config_free(resized);
	config_free(next);
	config_free(run);
}

/* Each cloud's sections are compared whole: a setting the provider was
 * made from, even inside a list, needs a restart, and is kept. */
static void expect_restart(const char *run_yaml, const char *next_yaml, const char *report_want)
{
	struct config *run = parse(run_yaml), *same = parse(run_yaml), *next = parse(next_yaml);
	char report[512];

	assert_int_equal(config_keep_restart_only(run, same, report, sizeof(report)), 0);
	assert_int_equal(config_keep_restart_only(run, next, report, sizeof(report)), 1);
	assert_string_equal(report, report_want);
	/* what was kept is the running config's: nothing left to report */
	assert_int_equal(config_keep_restart_only(run, next, report, sizeof(report)), 0);
	config_free(next);
	config_free(same);
	config_free(run);
}

#define FLEET(types) \
	"provider: {kind: aws, aws: {cluster_name: c}}\n" \
	"node_groups: [{name: a, min: 0, max: 3, aws: {mode: fleet, launch_template: lt, " \
	"instance_types: " types ", placements: [{zone: us-east-1a}]}}]\n"
#define AZURE(value) \
	"provider: {kind: azure, azure: {discovery: [{tags: {pool: " value "}, min: 0, max: 3}]}}\n"

static void test_cloud_sections_compared_whole(void **state)
{
	(void)state;
	expect_restart("provider: {kind: aws, aws: {interruption_queue: "
		       "\"https://sqs.us-east-1.amazonaws.com/123456789012/q\"}}\n",
		       "provider: {kind: aws, aws: {interruption_queue: "
		       "\"https://sqs.us-east-1.amazonaws.com/123456789012/other\"}}\n",
		       "provider.aws");
	expect_restart("provider: {kind: aws, aws: {endpoints: {sqs: \"http://127.0.0.1:1\"}}}\n",
		       "provider: {kind: aws, aws: {endpoints: {sqs: \"http://127.0.0.1:2\"}}}\n",
		       "provider.aws");
	expect_restart(FLEET("[m5.large, m5.xlarge]"), FLEET("[m5.xlarge, m5.large]"),
		       "node_groups (names or cloud sections, for the cloud provider)");
	expect_restart("provider: {kind: gce, gce: {discovery: [{prefix: web, max: 3}]}}\n",
		       "provider: {kind: gce, gce: {discovery: [{prefix: api, max: 3}]}}\n", "provider.gce");
	expect_restart(AZURE("web"), AZURE("api"), "provider.azure");
}

/* The loosened entry for 'key', or NULL. */
static const struct config_loosened *loosened(const struct config_loosened *l, size_t n,
					      const char *key)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(l[i].key, key) == 0)
			return &l[i];
	return NULL;
}

static void expect_loosened(const struct config_loosened *l, size_t n, const char *key,
			    const char *from, const char *to, bool restart)
{
	const struct config_loosened *e = loosened(l, n, key);

	if (!e)
		fail_msg("%s is not reported as loosened", key);
	assert_string_equal(e->from, from);
	assert_string_equal(e->to, to);
	assert_int_equal(e->restart, restart);
}

static void test_safety_loosened(void **state)
{
	struct config *run = parse("safety: {max_nodes_total: 10, max_scale_down_per_round: 1,\n"
				   "  max_actions_per_round: 100, max_concurrent_drains: 1,\n"
				   "  protected_pod_selector: \"app=hub\", max_cache_staleness: 30s,\n"
				   "  do_not_disrupt_annotations: [{node: a}, {pod: b}]}\n");
	struct config *loose = parse("safety: {max_nodes_total: 0, max_scale_down_per_round: 3,\n"
				     "  max_actions_per_round: 500, max_concurrent_drains: 4,\n"
				     "  max_cache_staleness: 5m, evicted_pods_must_fit: false,\n"
				     "  do_not_disrupt_annotations: [{pod: b}]}\n");
	struct config *tight = parse("safety: {max_nodes_total: 8, max_scale_down_per_round: 0,\n"
				     "  max_actions_per_round: 50, max_concurrent_drains: 1,\n"
				     "  protected_pod_selector: \"app=hub\", max_cache_staleness: 10s,\n"
				     "  do_not_disrupt_annotations: [{node: a}, {pod: b}, {pod: c}]}\n");
	struct config *capped = parse("safety: {max_nodes_total: 20}\n");
	struct config_loosened l[CONFIG_LOOSENED_MAX];
	size_t n;

	(void)state;
	n = config_safety_loosened(run, loose, l, CONFIG_LOOSENED_MAX);
	assert_int_equal(n, 8);
	expect_loosened(l, n, "safety.max_nodes_total", "10", "0 (no cap)", false);
	expect_loosened(l, n, "safety.max_scale_down_per_round", "1", "3", false);
	expect_loosened(l, n, "safety.max_actions_per_round", "100", "500", false);
	expect_loosened(l, n, "safety.max_concurrent_drains", "1", "4", true);
	expect_loosened(l, n, "safety.protected_pod_selector", "\"app=hub\"", "\"\" (none)", true);
	expect_loosened(l, n, "safety.max_cache_staleness", "30s", "5m", false);
	expect_loosened(l, n, "safety.do_not_disrupt_annotations", "[node: a, pod: b]", "[pod: b]", false);
	expect_loosened(l, n, "safety.evicted_pods_must_fit", "true", "false", false);
	/* only the first 'max' are written, all are counted */
	assert_int_equal(config_safety_loosened(run, loose, l, 2), 8);
	/* tighter everywhere, or the same: nothing */
	assert_int_equal(config_safety_loosened(run, tight, l, CONFIG_LOOSENED_MAX), 0);
	assert_int_equal(config_safety_loosened(run, run, l, CONFIG_LOOSENED_MAX), 0);
	/* a higher cap loosens; from no cap to a cap does not */
	n = config_safety_loosened(run, capped, l, CONFIG_LOOSENED_MAX);
	expect_loosened(l, n, "safety.max_nodes_total", "10", "20", false);
	assert_null(loosened(l, n, "safety.max_scale_down_per_round"));
	n = config_safety_loosened(loose, capped, l, CONFIG_LOOSENED_MAX);
	assert_null(loosened(l, n, "safety.max_nodes_total"));
	/* another selector may protect other pods: it loosens too */
	{
		struct config *other = parse("safety: {protected_pod_selector: \"tier=db\"}\n");

		n = config_safety_loosened(run, other, l, CONFIG_LOOSENED_MAX);
		expect_loosened(l, n, "safety.protected_pod_selector", "\"app=hub\"", "\"tier=db\"", true);
		config_free(other);
	}
	/* the defaults, then the opt-outs turned off */
	{
		struct config *def = parse("");
		struct config *none = parse("safety: {do_not_disrupt_annotations: []}\n");

		n = config_safety_loosened(def, none, l, CONFIG_LOOSENED_MAX);
		assert_int_equal(n, 1);
		expect_loosened(l, n, "safety.do_not_disrupt_annotations",
				"[node: cluster-autoscaler.kubernetes.io/scale-down-disabled, "
				"node: karpenter.sh/do-not-disrupt, pod: karpenter.sh/do-not-disrupt]",
				"[]", false);
		config_free(none);
		config_free(def);
	}
	config_free(capped);
	config_free(tight);
	config_free(loose);
	config_free(run);
}

static struct config *with_policy(const char *policy_path, const char *params)
{
	char yaml[512];

	snprintf(yaml, sizeof(yaml), "policy: {path: \"%s\", params: {%s}}\n"
		 "node_groups: [{name: a, min: 0, max: 3, " T "}]\n", policy_path, params);
	return parse(yaml);
}

#define POLICY \
	"local P = {params = {mode = 'ok'}}\n" \
	"function P.reconcile(cluster, params, store)\n" \
	"  if params.mode == 'boom' then error('mode boom') end\n" \
	"  store.mode = params.mode\n" \
	"  return {}\n" \
	"end\n" \
	"return P\n"

static void test_apply_config(void **state)
{
	char policy[64];
	struct config *c1, *c2, *c3;
	struct reconciler *r;
	struct snapshot *s = empty_snapshot();
	struct errbuf err;
	struct decision d;
	char dropped[256];

	(void)state;
	snprintf(policy, sizeof(policy), "%s", write_policy(POLICY));
	c1 = with_policy(policy, "mode: ok");
	r = reconciler_new(c1, NULL, &err);
	if (!r)
		fail_msg("policy: %s", err.msg);
	/* a policy that fails its trial with the new params: nothing changes */
	c2 = with_policy(policy, "mode: boom");
	assert_int_equal(reconciler_apply_config(r, c2, s, dropped, sizeof(dropped), &err), -1);
	assert_non_null(strstr(err.msg, "mode boom"));
	assert_int_equal(reconciler_run(r, s, false, &d, NULL, &err), 0);
	assert_true(d.ok);
	decision_free(&d);
	config_free(c2);
	/* a broken policy file: nothing changes either */
	{
		FILE *f = fopen(policy, "w");

		assert_non_null(f);
		fputs("return {reconcile = ", f);
		fclose(f);
	}
	c3 = with_policy(policy, "mode: other");
	assert_int_equal(reconciler_apply_config(r, c3, s, dropped, sizeof(dropped), &err), -1);
	assert_int_equal(reconciler_run(r, s, false, &d, NULL, &err), 0);
	assert_true(d.ok);
	decision_free(&d);
	/* the file complete again: the new config is in place */
	{
		FILE *f = fopen(policy, "w");

		assert_non_null(f);
		fputs(POLICY, f);
		fclose(f);
	}
	assert_int_equal(reconciler_apply_config(r, c3, s, dropped, sizeof(dropped), &err), 0);
	assert_int_equal(reconciler_run(r, s, false, &d, NULL, &err), 0);
	assert_true(d.ok);
	decision_free(&d);
	reconciler_free(r);
	config_free(c3);
	config_free(c1);
	snapshot_free(s);
	unlink(policy);
}

static void test_operations_keys(void **state)
{
	struct config *c = parse("");
	struct config_opts o = {0};
	struct errbuf err;
	const char *bad = "log: {format: xml}\n";
	const char *env[] = { "LUASCALE_LOG_FORMAT=json", "LUASCALE_STATUS_NAME=my-status", NULL };

	(void)state;
	/* the defaults */
	assert_false(c->log_json);
	assert_true(c->status_enabled);
	assert_string_equal(c->status_namespace, "kube-system");
	assert_string_equal(c->status_name, "luascale-status");
	assert_int_equal(c->status_interval_ms, 10000);
	assert_true(c->events_enabled);
	assert_true(c->reload_watch);
	assert_int_equal(c->reload_debounce_ms, 1000);
	config_free(c);
	c = parse("log: {format: json}\nstatus: {namespace: ops, name: as-status, interval: 30s, "
		  "enabled: false}\nevents: {enabled: false}\nreload: {watch: false, debounce: 250ms}\n");
	assert_true(c->log_json);
	assert_false(c->status_enabled);
	assert_string_equal(c->status_namespace, "ops");
	assert_string_equal(c->status_name, "as-status");
	assert_int_equal(c->status_interval_ms, 30000);
	assert_false(c->events_enabled);
	assert_false(c->reload_watch);
	assert_int_equal(c->reload_debounce_ms, 250);
	config_free(c);
	o.flags = CONFIG_OFFLINE;
	assert_null(config_parse_opts(bad, strlen(bad), "config.yaml", &o, &err));
	assert_non_null(strstr(err.msg, "config.yaml:1:15"));
	assert_non_null(strstr(err.msg, "\"text\" or \"json\""));
	bad = "status: {namespace: Kube_System}\n";
	assert_null(config_parse_opts(bad, strlen(bad), "config.yaml", &o, &err));
	assert_non_null(strstr(err.msg, "namespace"));
	bad = "status: {interval: 10ms}\n";
	assert_null(config_parse_opts(bad, strlen(bad), "config.yaml", &o, &err));
	/* from the environment */
	o.envp = env;
	c = config_parse_opts("", 0, "config.yaml", &o, &err);
	if (!c)
		fail_msg("config: %s", err.msg);
	assert_true(c->log_json);
	assert_string_equal(c->status_name, "my-status");
	config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_restart_only_settings_kept),
		cmocka_unit_test(test_cloud_groups_need_restart),
		cmocka_unit_test(test_cloud_sections_compared_whole),
		cmocka_unit_test(test_safety_loosened),
		cmocka_unit_test(test_apply_config),
		cmocka_unit_test(test_operations_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
