/*
 * Tests for config: the YAML schema, error positions (file:line:col),
 * defaults, JSON input, environment overrides, policy parameter types,
 * path resolution and durations.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"

#ifndef SOURCE_DIR
#define SOURCE_DIR "."
#endif

/* A valid cluster and policy: five lines, so the text under test starts at line 6. */
#define HEAD                                                                 \
	"cluster:\n"                                                         \
	"  kubeconfig: /etc/kube/config\n"                                   \
	"  context: prod\n"                                                  \
	"policy:\n"                                                          \
	"  path: /policies/p.lua\n"

/* One minimal group, for tests about something else. */
#define GROUP_W                                                              \
	"node_groups:\n"                                                     \
	"  - name: w\n"                                                      \
	"    max: 5\n"                                                       \
	"    template:\n"                                                    \
	"      allocatable: {cpu: 4, memory: 16Gi}\n"

static struct config *parse(const char *yaml, struct errbuf *err)
{
	return config_parse(yaml, strlen(yaml), "config.yaml", NULL, NULL, err);
}

static struct config *parse_envp(const char *yaml, const char *const *envp,
				 struct errbuf *err)
{
	struct config_opts o = { .envp = envp };

	return config_parse_opts(yaml, strlen(yaml), "config.yaml", &o, err);
}

/* getenv hook over a NULL-terminated "NAME=VALUE" array. */
static const char *fake_getenv(const char *name, void *ud)
{
	const char *const *p;
	size_t n = strlen(name);

	for (p = ud; *p; p++)
		if (!strncmp(*p, name, n) && (*p)[n] == '=')
			return *p + n + 1;
	return NULL;
}

static struct config *parse_hook(const char *yaml, const char *source,
				 const char *const *env, struct errbuf *err)
{
	return config_parse(yaml, strlen(yaml), source, fake_getenv, (void *)env, err);
}

static void expect_error(const char *yaml, const char *msg)
{
	struct errbuf err = { "" };
	struct config *c = parse(yaml, &err);

	if (c)
		fail_msg("parsed, expected error: %s", msg);
	assert_string_equal(err.msg, msg);
}

/* For messages whose tail comes from another module (quantity, selector). */
static void expect_error_prefix(const char *yaml, const char *prefix)
{
	struct errbuf err = { "" };
	struct config *c = parse(yaml, &err);

	if (c)
		fail_msg("parsed, expected error: %s", prefix);
	if (strncmp(err.msg, prefix, strlen(prefix)))
		fail_msg("got \"%s\", expected it to start with \"%s\"", err.msg, prefix);
}

static void expect_env_error(const char *yaml, const char *const *envp, const char *msg)
{
	struct errbuf err = { "" };
	struct config *c = parse_envp(yaml, envp, &err);

	if (c)
		fail_msg("parsed, expected error: %s", msg);
	assert_string_equal(err.msg, msg);
}

static const char *kv(const struct kvlist *l, const char *key)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->items[i].key, key))
			return l->items[i].value;
	return NULL;
}

/* ---- valid input ---- */

static const char full_yaml[] =
	"# every key\n"
	"cluster:\n"
	"  kubeconfig: /home/u/.kube/config\n"
	"  context: classroom\n"
	"  in_cluster: false\n"
	"node_groups:\n"
	"  - name: workers\n"
	"    min: 1\n"
	"    max: 20\n"
	"    price_per_hour: 0.192\n"
	"    target: 3\n"
	"    template:\n"
	"      allocatable:\n"
	"        cpu: \"4\"\n"
	"        memory: 16Gi\n"
	"        pods: 110\n"
	"        ephemeral-storage: 100Gi\n"
	"      labels:\n"
	"        tier: general\n"
	"  - name: gpu\n"
	"    max: 4\n"
	"    price_per_hour: 1.20\n"
	"    selector:\n"
	"      pool: gpu\n"
	"    template:\n"
	"      allocatable:\n"
	"        cpu: 7500m\n"
	"        memory: 32Gi\n"
	"        nvidia.com/gpu: 1\n"
	"      taints:\n"
	"        - key: nvidia.com/gpu\n"
	"          value: present\n"
	"          effect: NoSchedule\n"
	"        - {key: dedicated, effect: NoExecute}\n"
	"policy:\n"
	"  path: /srv/policies/default.lua\n"
	"  instructions: 1000000\n"
	"  memory: 64Mi\n"
	"  params:\n"
	"    scale_down_utilization: 0.5\n"
	"    unneeded_for: 10m\n"
	"safety:\n"
	"  max_nodes_total: 30\n"
	"  max_scale_down_per_round: 2\n"
	"  protected_pod_selector: hub.jupyter.org/autoscaler-critical\n"
	"intervals:\n"
	"  reconcile: 30s\n"
	"  batch_idle: 2s\n"
	"  batch_max: 1m\n";

static void test_full(void **state)
{
	struct errbuf err = { "" };
	struct config *c = parse(full_yaml, &err);
	const struct node_group *w, *g;
	const struct param *p;

	(void)state;
	if (!c)
		fail_msg("%s", err.msg);
	assert_string_equal(c->source, "config.yaml");
	assert_string_equal(c->base_dir, ".");
	assert_string_equal(c->kubeconfig, "/home/u/.kube/config");
	assert_string_equal(c->context, "classroom");
	assert_false(c->in_cluster);

	assert_int_equal(c->n_groups, 2);
	w = &c->groups[0];
	assert_string_equal(w->name, "workers");
	assert_int_equal(w->min, 1);
	assert_int_equal(w->max, 20);
	assert_true(w->price_per_hour == 0.192);
	assert_int_equal(w->target, 3);
	assert_int_equal(w->selector.n, 1);
	assert_string_equal(kv(&w->selector, "luascale.io/node-group"), "workers");
	assert_int_equal(w->tmpl.allocatable.cpu_m, 4000);
	assert_int_equal(w->tmpl.allocatable.memory, 16LL << 30);
	assert_int_equal(w->tmpl.allocatable.pods, 110);
	assert_int_equal(w->tmpl.allocatable.ephemeral, 100LL << 30);
	assert_int_equal(w->tmpl.allocatable.n_ext, 0);
	assert_int_equal(w->tmpl.labels.n, 2);
	assert_string_equal(kv(&w->tmpl.labels, "tier"), "general");
	assert_string_equal(kv(&w->tmpl.labels, "luascale.io/node-group"), "workers");
	assert_int_equal(w->tmpl.n_taints, 0);

	g = &c->groups[1];
	assert_string_equal(g->name, "gpu");
	assert_int_equal(g->min, 0);
	assert_int_equal(g->max, 4);
	assert_true(g->price_per_hour == 1.20);
	assert_int_equal(g->target, -1);
	assert_int_equal(g->selector.n, 1);
	assert_string_equal(kv(&g->selector, "pool"), "gpu");
	assert_null(kv(&g->selector, "luascale.io/node-group"));
	assert_int_equal(g->tmpl.allocatable.cpu_m, 7500);
	assert_int_equal(g->tmpl.allocatable.memory, 32LL << 30);
	assert_int_equal(g->tmpl.allocatable.pods, 110);
	assert_int_equal(g->tmpl.allocatable.n_ext, 1);
	assert_string_equal(g->tmpl.allocatable.ext[0].name, "nvidia.com/gpu");
	assert_int_equal(g->tmpl.allocatable.ext[0].value, 1);
	assert_int_equal(g->tmpl.labels.n, 1);
	assert_string_equal(kv(&g->tmpl.labels, "pool"), "gpu");
	assert_int_equal(g->tmpl.n_taints, 2);
	assert_string_equal(g->tmpl.taints[0].key, "nvidia.com/gpu");
	assert_string_equal(g->tmpl.taints[0].value, "present");
	assert_int_equal(g->tmpl.taints[0].effect, TAINT_NO_SCHEDULE);
	assert_string_equal(g->tmpl.taints[1].key, "dedicated");
	assert_string_equal(g->tmpl.taints[1].value, "");
	assert_int_equal(g->tmpl.taints[1].effect, TAINT_NO_EXECUTE);

	assert_string_equal(c->policy_path, "/srv/policies/default.lua");
	assert_int_equal(c->policy_instructions, 1000000);
	assert_int_equal(c->policy_memory, 64LL << 20);
	assert_int_equal(c->params.type, PARAM_MAP);
	assert_int_equal(c->params.n_items, 2);
	p = param_get(&c->params, "scale_down_utilization");
	assert_non_null(p);
	assert_int_equal(p->type, PARAM_NUMBER);
	assert_true(p->num == 0.5);
	p = param_get(&c->params, "unneeded_for");
	assert_non_null(p);
	assert_int_equal(p->type, PARAM_STRING);
	assert_string_equal(p->str, "10m");

	assert_int_equal(c->max_nodes_total, 30);
	assert_int_equal(c->max_scale_down_per_round, 2);
	assert_string_equal(c->protected_pod_selector, "hub.jupyter.org/autoscaler-critical");
	assert_int_equal(c->protected_pods.n, 1);
	assert_string_equal(c->protected_pods.reqs[0].key, "hub.jupyter.org/autoscaler-critical");
	assert_int_equal(c->protected_pods.reqs[0].op, SELECTOR_EXISTS);

	assert_int_equal(c->reconcile_interval_ms, 30000);
	assert_int_equal(c->batch_idle_ms, 2000);
	assert_int_equal(c->batch_max_ms, 60000);
	config_free(c);
}

/* intervals.batch_new_pod: a duration up to batch_idle; the default
 * follows a shorter batch_idle, a value set above it is refused. */
static void test_batch_new_pod(void **state)
{
	static const char *const envp[] = {"LUASCALE_INTERVALS_BATCH_NEW_POD=0s", NULL};
	struct errbuf err = { "" };
	struct config *c;

	(void)state;
	c = parse(HEAD "intervals: {batch_new_pod: 250ms}\n", &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_int_equal(c->batch_new_pod_ms, 250);
	config_free(c);
	c = parse(HEAD "intervals: {batch_idle: 50ms}\n", &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_int_equal(c->batch_new_pod_ms, 50);
	config_free(c);
	/* as long as batch_idle: no head start, the window alone */
	c = parse(HEAD "intervals: {batch_idle: 1s, batch_new_pod: 1s}\n", &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_int_equal(c->batch_new_pod_ms, 1000);
	config_free(c);
	c = parse_envp(HEAD "intervals: {batch_new_pod: 300ms}\n", envp, &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_int_equal(c->batch_new_pod_ms, 0);
	config_free(c);
	expect_error(HEAD "intervals:\n  batch_new_pod: 2s\n",
		     "config.yaml:7:18: intervals.batch_new_pod: batch_new_pod (2000ms) is longer "
		     "than batch_idle (1000ms)");
	expect_error(HEAD "intervals:\n  batch_new_pod: 25h\n",
		     "config.yaml:7:18: intervals.batch_new_pod: must be from 0ms to 24h, got \"25h\"");
	expect_error(HEAD "intervals:\n  batch_new_pod: soon\n",
		     "config.yaml:7:18: intervals.batch_new_pod: expected a duration such as "
		     "\"10s\", \"1m30s\" or \"250ms\", got \"soon\"");
}

static void test_defaults(void **state)
{
	struct errbuf err = { "" };
	struct config *c = parse(HEAD GROUP_W, &err);
	const struct node_group *g;

	(void)state;
	if (!c)
		fail_msg("%s", err.msg);
	assert_false(c->in_cluster);
	assert_int_equal(c->params.type, PARAM_MAP);
	assert_int_equal(c->params.n_items, 0);
	assert_null(param_get(&c->params, "x"));
	assert_int_equal(c->policy_instructions, 200000000);
	assert_int_equal(c->policy_memory, 512LL << 20);
	assert_int_equal(c->max_nodes_total, 0);
	assert_int_equal(c->max_scale_down_per_round, 1);
	assert_string_equal(c->protected_pod_selector, "");
	assert_int_equal(c->protected_pods.n, 0);
	assert_int_equal(c->reconcile_interval_ms, 10000);
	assert_int_equal(c->batch_idle_ms, 1000);
	assert_int_equal(c->batch_max_ms, 10000);
	assert_int_equal(c->batch_new_pod_ms, 100);

	assert_int_equal(c->n_groups, 1);
	g = &c->groups[0];
	assert_int_equal(g->min, 0);
	assert_true(g->price_per_hour == 0);
	assert_int_equal(g->target, -1);
	assert_int_equal(g->tmpl.allocatable.pods, 110);
	assert_int_equal(g->tmpl.allocatable.ephemeral, 0);
	assert_int_equal(g->selector.n, 1);
	assert_string_equal(kv(&g->selector, "luascale.io/node-group"), "w");
	/* the template carries the selector's labels */
	assert_int_equal(g->tmpl.labels.n, 1);
	assert_string_equal(kv(&g->tmpl.labels, "luascale.io/node-group"), "w");
	config_free(c);

	/* in_cluster needs neither kubeconfig nor context; groups may be absent */
	c = parse("cluster: {in_cluster: true}\npolicy: {path: p.lua}\n", &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_true(c->in_cluster);
	assert_string_equal(c->kubeconfig, "");
	assert_string_equal(c->context, "");
	assert_int_equal(c->n_groups, 0);
	assert_null(c->groups);
	assert_string_equal(c->policy_path, "p.lua");
	config_free(c);
}

static void test_json(void **state)
{
	static const char kit[] =
		"{\"node_groups\":[{\"name\":\"w\",\"min\":0,\"max\":5,"
		"\"template\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"16Gi\",\"pods\":110}}}]}";
	static const char full[] =
		"{\n"
		"\t\"cluster\": {\"kubeconfig\": \"/k\", \"context\": \"c\"},\n"
		"\t\"policy\": {\"path\": \"/p.lua\", \"params\": {\"f\": 0.25, \"s\": \"10m\","
		" \"n\": 3, \"q\": \"3\", \"b\": true, \"l\": [1, \"x\"], \"m\": {}}},\n"
		"\t\"safety\": {\"max_nodes_total\": 10}\n"
		"}\n";
	struct config_opts offline = { .flags = CONFIG_OFFLINE };
	struct errbuf err = { "" };
	const struct param *p;
	struct config *c;

	(void)state;
	c = config_parse_opts(kit, strlen(kit), "<kit>", &offline, &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_int_equal(c->n_groups, 1);
	assert_string_equal(c->groups[0].name, "w");
	assert_int_equal(c->groups[0].max, 5);
	assert_int_equal(c->groups[0].tmpl.allocatable.cpu_m, 4000);
	assert_int_equal(c->groups[0].tmpl.allocatable.memory, 16LL << 30);
	assert_int_equal(c->groups[0].tmpl.allocatable.pods, 110);
	assert_string_equal(c->policy_path, "");
	assert_string_equal(c->context, "");
	config_free(c);

	/* not offline: the cluster must be named */
	c = config_parse(kit, strlen(kit), "<kit>", NULL, NULL, &err);
	assert_null(c);
	assert_string_equal(err.msg,
		"<kit>:1:1: cluster.kubeconfig is required unless in_cluster is true; "
		"luascale never falls back to a kubeconfig's current-context, on purpose: "
		"acting on the wrong cluster cannot be undone (set it here or with "
		"LUASCALE_CLUSTER_KUBECONFIG)");

	c = parse(full, &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_string_equal(c->kubeconfig, "/k");
	assert_string_equal(c->context, "c");
	assert_int_equal(c->max_nodes_total, 10);
	assert_int_equal(c->params.n_items, 7);
	assert_int_equal(param_get(&c->params, "f")->type, PARAM_NUMBER);
	assert_int_equal(param_get(&c->params, "s")->type, PARAM_STRING);
	assert_int_equal(param_get(&c->params, "n")->type, PARAM_INT);
	assert_int_equal(param_get(&c->params, "q")->type, PARAM_STRING);
	assert_int_equal(param_get(&c->params, "b")->type, PARAM_BOOL);
	p = param_get(&c->params, "l");
	assert_int_equal(p->type, PARAM_LIST);
	assert_int_equal(p->n_items, 2);
	assert_int_equal(p->items[0].type, PARAM_INT);
	assert_int_equal(p->items[1].type, PARAM_STRING);
	p = param_get(&c->params, "m");
	assert_int_equal(p->type, PARAM_MAP);
	assert_int_equal(p->n_items, 0);
	config_free(c);

	/* a JSON error has a position too */
	expect_error("{\"cluster\": {\"context\": \"c\" \"kubeconfig\": \"/k\"}}",
		     "config.yaml:1:29: YAML syntax error: did not find expected ',' or '}' "
		     "(while parsing a flow mapping at 1:13)");
}

static void test_params(void **state)
{
	static const char yaml[] = HEAD
		"  params:\n"
		"    i: 42\n"
		"    neg: -7\n"
		"    hex: 0x1F\n"
		"    oct: 0o17\n"
		"    f: 1.5e3\n"
		"    inf: 1e300\n"
		"    t: true\n"
		"    no: no\n"
		"    s: hello world\n"
		"    qi: \"42\"\n"
		"    qb: 'true'\n"
		"    tagged: !!str 12\n"
		"    dur: 10m\n"
		"    nested:\n"
		"      list: [1, two, {three: 3}]\n"
		"      empty: []\n";
	struct errbuf err = { "" };
	struct config *c = parse(yaml, &err);
	const struct param *p, *n, *l;

	(void)state;
	if (!c)
		fail_msg("%s", err.msg);
	p = &c->params;
	assert_int_equal(p->n_items, 14);
	assert_string_equal(p->items[0].key, "i"); /* document order */
	assert_int_equal(param_get(p, "i")->type, PARAM_INT);
	assert_int_equal(param_get(p, "i")->i, 42);
	assert_true(param_get(p, "i")->num == 42.0);
	assert_string_equal(param_get(p, "i")->str, "42");
	assert_int_equal(param_get(p, "neg")->i, -7);
	assert_int_equal(param_get(p, "hex")->i, 31);
	assert_int_equal(param_get(p, "oct")->i, 15);
	assert_int_equal(param_get(p, "f")->type, PARAM_NUMBER);
	assert_true(param_get(p, "f")->num == 1500.0);
	assert_int_equal(param_get(p, "inf")->type, PARAM_NUMBER);
	assert_true(param_get(p, "inf")->num == 1e300);
	assert_int_equal(param_get(p, "t")->type, PARAM_BOOL);
	assert_true(param_get(p, "t")->b);
	/* YAML 1.2: "no" is a string, not a boolean */
	assert_int_equal(param_get(p, "no")->type, PARAM_STRING);
	assert_string_equal(param_get(p, "s")->str, "hello world");
	assert_int_equal(param_get(p, "qi")->type, PARAM_STRING);
	assert_int_equal(param_get(p, "qb")->type, PARAM_STRING);
	assert_int_equal(param_get(p, "tagged")->type, PARAM_STRING);
	assert_string_equal(param_get(p, "dur")->str, "10m");
	n = param_get(p, "nested");
	assert_int_equal(n->type, PARAM_MAP);
	l = param_get(n, "list");
	assert_int_equal(l->type, PARAM_LIST);
	assert_int_equal(l->n_items, 3);
	assert_null(l->items[0].key);
	assert_int_equal(l->items[0].i, 1);
	assert_string_equal(l->items[1].str, "two");
	assert_int_equal(l->items[2].type, PARAM_MAP);
	assert_int_equal(param_get(&l->items[2], "three")->i, 3);
	assert_null(param_get(l, "three")); /* a list has no keys */
	assert_int_equal(param_get(n, "empty")->type, PARAM_LIST);
	assert_int_equal(param_get(n, "empty")->n_items, 0);
	config_free(c);

	expect_error(HEAD "  params:\n    x:\n",
		     "config.yaml:7:7: policy.params.x: null is not a parameter value; "
		     "write \"\" for an empty string, or leave the parameter out");
	expect_error(HEAD "  params:\n    big: 99999999999999999999\n",
		     "config.yaml:7:10: policy.params.big: integer 99999999999999999999 "
		     "does not fit in 64 bits");
	expect_error(HEAD "  params: [1]\n",
		     "config.yaml:6:11: policy.params: expected a mapping, got a list");
}

static void test_paths(void **state)
{
	static const char *const env[] = { "HOME=/home/ada", NULL };
	static const char *const noenv[] = { NULL };
	static const char yaml[] =
		"cluster: {kubeconfig: ~/.kube/config, context: c}\n"
		"policy: {path: ../policies/default.lua}\n";
	struct errbuf err = { "" };
	struct config *c;

	(void)state;
	c = parse_hook(yaml, "/etc/luascale/config.yaml", env, &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_string_equal(c->base_dir, "/etc/luascale");
	assert_string_equal(c->kubeconfig, "/home/ada/.kube/config");
	assert_string_equal(c->policy_path, "/etc/luascale/../policies/default.lua");
	config_free(c);

	/* relative to a relative file's directory; absolute stays */
	c = parse_hook("cluster: {kubeconfig: kube.conf, context: c}\n"
		       "policy: {path: /abs/p.lua}\n", "examples/config.yaml", env, &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_string_equal(c->base_dir, "examples");
	assert_string_equal(c->kubeconfig, "examples/kube.conf");
	assert_string_equal(c->policy_path, "/abs/p.lua");
	config_free(c);

	/* a file in the working directory: paths stay as written */
	c = parse_hook(yaml, "config.yaml", env, &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_string_equal(c->policy_path, "../policies/default.lua");
	config_free(c);

	/* a file in / */
	c = parse_hook(yaml, "/config.yaml", env, &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_string_equal(c->base_dir, "/");
	assert_string_equal(c->policy_path, "/../policies/default.lua");
	config_free(c);

	c = parse_hook(yaml, "config.yaml", noenv, &err);
	assert_null(c);
	assert_string_equal(err.msg, "config.yaml:1:23: cluster.kubeconfig: cannot expand \"~\" "
				     "in \"~/.kube/config\": HOME is not set");
}

/* ---- errors, with their positions ---- */

static void test_error_types(void **state)
{
	(void)state;
	expect_error(HEAD "safety:\n  max_nodes_total: ten\n",
		     "config.yaml:7:20: safety.max_nodes_total: expected a non-negative "
		     "integer, got \"ten\"");
	expect_error(HEAD "safety:\n  max_nodes_total: -1\n",
		     "config.yaml:7:20: safety.max_nodes_total: expected a non-negative "
		     "integer, got \"-1\"");
	expect_error(HEAD "safety:\n  max_scale_down_per_round: {a: 1}\n",
		     "config.yaml:7:29: safety.max_scale_down_per_round: expected a "
		     "non-negative integer, got a mapping");
	expect_error(HEAD "cluster2: 1\n",
		     "config.yaml:6:1: unknown key \"cluster2\" (did you mean \"cluster\"?)");
	expect_error("cluster: {in_cluster: yes}\npolicy: {path: p}\n",
		     "config.yaml:1:23: cluster.in_cluster: expected true or false, got \"yes\"");
	expect_error(HEAD "node_groups: {w: 1}\n",
		     "config.yaml:6:14: node_groups: expected a list, got a mapping");
	expect_error("- a\n- b\n", "config.yaml:1:1: expected a mapping, got a list");
	expect_error(HEAD "intervals:\n  reconcile: 10\n",
		     "config.yaml:7:14: intervals.reconcile: expected a duration such as "
		     "\"10s\", \"1m30s\" or \"250ms\", got \"10\"");
	expect_error(HEAD "intervals:\n  reconcile: 0s\n",
		     "config.yaml:7:14: intervals.reconcile: must be from 100ms to 24h, got \"0s\"");
	expect_error(HEAD "intervals:\n  batch_idle: 20s\n",
		     "config.yaml:7:15: intervals.batch_idle: batch_idle (20000ms) is longer "
		     "than batch_max (10000ms)");
	expect_error(HEAD "  instructions: 0\n",
		     "config.yaml:6:17: policy.instructions: 0 is too small (at least 1000)");
	expect_error(HEAD "  memory: lots\n",
		     "config.yaml:6:11: policy.memory: invalid quantity \"lots\": expected a number");
	expect_error_prefix(HEAD "safety:\n  protected_pod_selector: \"a in (\"\n",
			    "config.yaml:7:27: safety.protected_pod_selector: ");
}

static void test_error_keys(void **state)
{
	(void)state;
	expect_error(HEAD "safety:\n  max_node_total: 3\n",
		     "config.yaml:7:3: safety: unknown key \"max_node_total\" "
		     "(did you mean \"max_nodes_total\"?)");
	expect_error(HEAD "safety:\n  color: blue\n",
		     "config.yaml:7:3: safety: unknown key \"color\" (known keys: "
		     "max_nodes_total, max_scale_down_per_round, max_actions_per_round, "
		     "max_concurrent_drains, protected_pod_selector, max_cache_staleness, do_not_disrupt_annotations, evicted_pods_must_fit)");
	expect_error(HEAD "safety:\n  max_nodes_total: 3\n  max_nodes_total: 4\n",
		     "config.yaml:8:3: safety: duplicate key \"max_nodes_total\" (first at line 7)");
	/* duplicates are found in every mapping, params included */
	expect_error(HEAD "  params: {a: 1, b: 2, a: 3}\n",
		     "config.yaml:6:24: policy.params: duplicate key \"a\" (first at line 6)");
	expect_error(HEAD "x: &a {b: 1}\n",
		     "config.yaml:6:4: x: anchors (&a) and aliases are not supported; write "
		     "the value out in full");
	expect_error(HEAD "safety: !!map {}\n",
		     "config.yaml:6:9: safety: unsupported tag tag:yaml.org,2002:map (only !!str "
		     "is understood)");
	expect_error(HEAD "---\nsafety: {}\n", "config.yaml:6:1: only one YAML document is allowed");
	expect_error(HEAD "{a: 1}: 2\n",
		     "config.yaml:6:1: mapping keys must be plain strings, not mappings");
}

static void test_error_syntax(void **state)
{
	(void)state;
	expect_error(HEAD "safety:\n  max_nodes_total: 3\n bad: 1\n",
		     "config.yaml:8:2: YAML syntax error: did not find expected key "
		     "(while parsing a block mapping at 1:1)");
	expect_error(HEAD "safety:\n\tmax_nodes_total: 3\n",
		     "config.yaml:7:1: YAML syntax error: found character that cannot start "
		     "any token (while scanning for the next token at 7:1)");
	expect_error("a: \"\xff\"\n", "config.yaml:1:5: invalid text: invalid leading UTF-8 octet");
}

static void test_error_cluster(void **state)
{
	(void)state;
	expect_error("cluster:\n  kubeconfig: /k\npolicy: {path: p}\n",
		     "config.yaml:2:3: cluster: context is required unless in_cluster is true; "
		     "luascale never falls back to a kubeconfig's current-context, on purpose: "
		     "acting on the wrong cluster cannot be undone (set it here or with "
		     "LUASCALE_CLUSTER_CONTEXT)");
	expect_error("policy: {path: p}\n",
		     "config.yaml:1:1: cluster.kubeconfig is required unless in_cluster is true; "
		     "luascale never falls back to a kubeconfig's current-context, on purpose: "
		     "acting on the wrong cluster cannot be undone (set it here or with "
		     "LUASCALE_CLUSTER_KUBECONFIG)");
	expect_error("",
		     "config.yaml:1:1: cluster.kubeconfig is required unless in_cluster is true; "
		     "luascale never falls back to a kubeconfig's current-context, on purpose: "
		     "acting on the wrong cluster cannot be undone (set it here or with "
		     "LUASCALE_CLUSTER_KUBECONFIG)");
	expect_error("cluster: {in_cluster: true, context: prod}\npolicy: {path: p}\n",
		     "config.yaml:1:38: cluster.context: in_cluster is true, so kubeconfig and "
		     "context must not be set: choose one way to reach the cluster");
	expect_error("cluster: {in_cluster: true}\n",
		     "config.yaml:1:1: policy.path is required: the Lua policy to run (or set "
		     "LUASCALE_POLICY_PATH)");
	expect_error("cluster: {in_cluster: true}\npolicy:\n  memory: 1Gi\n",
		     "config.yaml:3:3: policy: path is required: the Lua policy to run (or set "
		     "LUASCALE_POLICY_PATH)");
}

static void test_error_groups(void **state)
{
	(void)state;
	expect_error(HEAD "node_groups:\n  - name: w\n    min: 3\n    max: 2\n"
		     "    template: {allocatable: {cpu: 1, memory: 1Gi}}\n",
		     "config.yaml:9:10: node_groups[0].max: max (2) is less than min (3) for "
		     "node group \"w\"");
	expect_error(HEAD "node_groups:\n  - name: w\n"
		     "    template: {allocatable: {cpu: 1, memory: 1Gi}}\n",
		     "config.yaml:7:5: node_groups[0]: max is required (the largest number of "
		     "nodes of group \"w\")");
	expect_error(HEAD "node_groups:\n  - max: 2\n",
		     "config.yaml:7:5: node_groups[0]: name is required");
	expect_error(HEAD "node_groups:\n  - {name: Workers, max: 2}\n",
		     "config.yaml:7:12: node_groups[0].name: invalid node group name \"Workers\": "
		     "up to 63 lowercase letters, digits, '-' and '.', starting and ending with "
		     "a letter or digit");
	expect_error(HEAD GROUP_W "  - name: w\n    max: 1\n"
		     "    template: {allocatable: {cpu: 1, memory: 1Gi}}\n",
		     "config.yaml:11:11: node_groups[1].name: duplicate node group name \"w\" "
		     "(first at line 7)");
	expect_error(HEAD "node_groups:\n  - {name: w, max: 2}\n",
		     "config.yaml:7:5: node_groups[0]: template is required (the allocatable "
		     "resources of a new node of group \"w\")");
	expect_error_prefix(HEAD "node_groups:\n  - name: w\n    max: 5\n    template:\n"
			    "      allocatable:\n        cpu: 4\n        memory: 16Gx\n",
			    "config.yaml:12:17: node_groups[0].template.allocatable.memory: "
			    "invalid quantity \"16Gx\"");
	expect_error(HEAD "node_groups:\n  - name: w\n    max: 5\n    template:\n"
		     "      allocatable:\n        cpu: -1\n        memory: 1Gi\n",
		     "config.yaml:11:14: node_groups[0].template.allocatable.cpu: must be zero "
		     "or more, got \"-1\"");
	expect_error(HEAD "node_groups:\n  - name: w\n    max: 5\n    template:\n"
		     "      allocatable:\n        cpu: 4\n",
		     "config.yaml:11:9: node_groups[0].template.allocatable: memory is required");
	expect_error(HEAD "node_groups:\n  - name: w\n    max: 5\n    template:\n"
		     "      allocatable:\n        cpu: 4\n        memroy: 1Gi\n",
		     "config.yaml:12:9: node_groups[0].template.allocatable.memroy: unknown "
		     "resource \"memroy\" (did you mean \"memory\"?): extended resources need a "
		     "domain prefix, like \"nvidia.com/gpu\"");
	expect_error(HEAD "node_groups:\n  - name: w\n    max: 5\n    template:\n"
		     "      allocatable: {cpu: 4, memory: 1Gi, gpu: 1}\n",
		     "config.yaml:10:42: node_groups[0].template.allocatable.gpu: unknown resource "
		     "\"gpu\" (did you mean \"cpu\"?): extended resources need a domain prefix, like \"nvidia.com/gpu\"");
	expect_error(HEAD GROUP_W "      taints:\n        - key: k\n          effect: noschedule\n",
		     "config.yaml:13:19: node_groups[0].template.taints[0].effect: unknown taint "
		     "effect \"noschedule\" (did you mean \"NoSchedule\"?)");
	expect_error(HEAD GROUP_W "      taints:\n        - key: k\n          effect: Never\n",
		     "config.yaml:13:19: node_groups[0].template.taints[0].effect: unknown taint "
		     "effect \"Never\": expected NoSchedule, PreferNoSchedule or NoExecute");
	expect_error(HEAD GROUP_W "      taints:\n        - {key: k}\n",
		     "config.yaml:12:11: node_groups[0].template.taints[0]: effect is required "
		     "(NoSchedule, PreferNoSchedule or NoExecute)");
	expect_error(HEAD GROUP_W "      labels:\n        luascale.io/node-group: other\n",
		     "config.yaml:12:33: node_groups[0].template.labels[\"luascale.io/node-group\"]: "
		     "is \"other\" but the group's selector requires \"w\": a new node would not "
		     "belong to its group");
	expect_error(HEAD GROUP_W "    selector: {}\n",
		     "config.yaml:11:15: node_groups[0].selector: an empty selector would claim "
		     "every node; leave it out for the default {luascale.io/node-group: w}");
	expect_error(HEAD GROUP_W "    selector: {\"bad key!\": x}\n",
		     "config.yaml:11:16: node_groups[0].selector[\"bad key!\"]: invalid label key "
		     "\"bad key!\": expected [prefix/]name, name up to 63 characters of letters, "
		     "digits, '-', '_' and '.'");
	expect_error(HEAD GROUP_W "    price_per_hour: -0.5\n",
		     "config.yaml:11:21: node_groups[0].price_per_hour: expected a non-negative "
		     "number, got \"-0.5\"");
	expect_error(HEAD GROUP_W "    min: 3000000000\n",
		     "config.yaml:11:10: node_groups[0].min: 3000000000 is too large (at most "
		     "1000000)");
	expect_error(HEAD GROUP_W "    colour: red\n",
		     "config.yaml:11:5: node_groups[0]: unknown key \"colour\" (known keys: name, "
		     "min, max, price_per_hour, selector, target, template, aws, azure, gce, disruption)");
	expect_error(HEAD GROUP_W "    min: 2\nsafety: {max_nodes_total: 1}\n",
		     "config.yaml:12:27: safety.max_nodes_total: the node groups' minimums add up "
		     "to 2, more than max_nodes_total (1)");
}

/* ---- environment ---- */

static void test_env(void **state)
{
	static const char yaml[] =
		"cluster:\n  kubeconfig: /k\n"
		"policy:\n  path: p.lua\n  params:\n    scale_down_utilization: 0.5\n"
		"node_groups:\n"
		"  - name: gpu-a100.x\n    max: 4\n"
		"    template: {allocatable: {cpu: 1, memory: 1Gi}}\n";
	static const char *const envp[] = {
		"PATH=/bin",
		"LUASCALE_CLUSTER_CONTEXT=staging",
		"LUASCALE_POLICY_PATH=mine.lua",
		"LUASCALE_POLICY_INSTRUCTIONS=5000",
		"LUASCALE_POLICY_MEMORY=1Gi",
		"LUASCALE_POLICY_PARAMS_SCALE_DOWN_UTILIZATION=0.7",
		"LUASCALE_POLICY_PARAMS_UNNEEDED_FOR=5m",
		"LUASCALE_POLICY_PARAMS_DRY=true",
		"LUASCALE_SAFETY_MAX_NODES_TOTAL=50",
		"LUASCALE_SAFETY_MAX_SCALE_DOWN_PER_ROUND=0",
		"LUASCALE_SAFETY_PROTECTED_POD_SELECTOR=critical=true",
		"LUASCALE_INTERVALS_RECONCILE=1m30s",
		"LUASCALE_INTERVALS_BATCH_IDLE=500ms",
		"LUASCALE_INTERVALS_BATCH_MAX=2s",
		"LUASCALE_NODE_GROUPS_GPU_A100_X_MIN=1",
		"LUASCALE_NODE_GROUPS_GPU_A100_X_MAX=8",
		"LUASCALE_NODE_GROUPS_GPU_A100_X_PRICE_PER_HOUR=3.5",
		"LUASCALE_LUA_DIR=/not/config", /* read by the Lua host, not a setting */
		NULL,
	};
	struct errbuf err = { "" };
	struct config *c = parse_envp(yaml, envp, &err);
	const struct param *p;

	(void)state;
	if (!c)
		fail_msg("%s", err.msg);
	assert_string_equal(c->context, "staging");
	assert_string_equal(c->policy_path, "mine.lua");
	assert_int_equal(c->policy_instructions, 5000);
	assert_int_equal(c->policy_memory, 1LL << 30);
	assert_int_equal(c->params.n_items, 3);
	p = param_get(&c->params, "scale_down_utilization");
	assert_int_equal(p->type, PARAM_NUMBER);
	assert_true(p->num == 0.7);
	assert_string_equal(param_get(&c->params, "unneeded_for")->str, "5m");
	assert_int_equal(param_get(&c->params, "dry")->type, PARAM_BOOL);
	assert_int_equal(c->max_nodes_total, 50);
	assert_int_equal(c->max_scale_down_per_round, 0);
	assert_int_equal(c->protected_pods.n, 1);
	assert_int_equal(c->reconcile_interval_ms, 90000);
	assert_int_equal(c->batch_idle_ms, 500);
	assert_int_equal(c->batch_max_ms, 2000);
	assert_int_equal(c->groups[0].min, 1);
	assert_int_equal(c->groups[0].max, 8);
	assert_true(c->groups[0].price_per_hour == 3.5);
	config_free(c);
}

static void test_env_hook(void **state)
{
	/* a getenv hook can only be asked by name: the file's params and groups */
	static const char *const env[] = {
		"LUASCALE_CLUSTER_IN_CLUSTER=true",
		"LUASCALE_CLUSTER_KUBECONFIG=",
		"LUASCALE_CLUSTER_CONTEXT=",
		"LUASCALE_POLICY_PARAMS_MAXNODES=7",
		"LUASCALE_POLICY_PARAMS_NEW=1",
		"LUASCALE_NODE_GROUPS_W_MAX=9",
		"LUASCALE_NODE_GROUPS_NOPE_MAX=9",
		NULL,
	};
	struct errbuf err = { "" };
	struct config *c = parse_hook(HEAD "  params: {maxNodes: 3}\n" GROUP_W,
				      "config.yaml", env, &err);

	(void)state;
	if (!c)
		fail_msg("%s", err.msg);
	assert_true(c->in_cluster);
	assert_string_equal(c->kubeconfig, "");
	assert_int_equal(c->params.n_items, 1);
	assert_string_equal(c->params.items[0].key, "maxNodes"); /* file's spelling kept */
	assert_int_equal(c->params.items[0].i, 7);
	assert_int_equal(c->groups[0].max, 9);
	config_free(c);
}

static void test_env_errors(void **state)
{
	static const char *const bad_int[] = { "LUASCALE_SAFETY_MAX_NODES_TOTAL=x", NULL };
	static const char *const bad_bool[] = { "LUASCALE_CLUSTER_IN_CLUSTER=1", NULL };
	static const char *const bad_dur[] = { "LUASCALE_INTERVALS_BATCH_MAX=5", NULL };
	static const char *const no_group[] = { "LUASCALE_NODE_GROUPS_GPU_MAX=3", NULL };
	static const char *const no_setting[] = { "LUASCALE_NODE_GROUPS_W_MAXIMUM=3", NULL };
	static const char *const bad_max[] = { "LUASCALE_NODE_GROUPS_W_MAX=-2", NULL };
	static const char *const min_gt_max[] = { "LUASCALE_NODE_GROUPS_W_MIN=6", NULL };
	static const char *const idle_gt_max[] = { "LUASCALE_INTERVALS_BATCH_IDLE=1m", NULL };
	static const char *const bad_sel[] = { "LUASCALE_SAFETY_PROTECTED_POD_SELECTOR=a in (", NULL };
	static const char *const null_param[] = { "LUASCALE_POLICY_PARAMS_X=", NULL };
	static const char *const no_key[] = { "LUASCALE_POLICY_PARAMS_=1", NULL };
	static const char *const context[] = { "LUASCALE_CLUSTER_CONTEXT=dev", NULL };
	struct errbuf err = { "" };
	struct config *c;

	(void)state;
	expect_env_error(HEAD, bad_int,
			 "LUASCALE_SAFETY_MAX_NODES_TOTAL: expected a non-negative integer, got \"x\"");
	expect_env_error(HEAD, bad_bool,
			 "LUASCALE_CLUSTER_IN_CLUSTER: expected true or false, got \"1\"");
	expect_env_error(HEAD, bad_dur,
			 "LUASCALE_INTERVALS_BATCH_MAX: expected a duration such as \"10s\", "
			 "\"1m30s\" or \"250ms\", got \"5\"");
	expect_env_error(HEAD GROUP_W, no_group,
			 "LUASCALE_NODE_GROUPS_GPU_MAX: there is no node group named GPU "
			 "(node groups: w)");
	expect_env_error(HEAD, no_group,
			 "LUASCALE_NODE_GROUPS_GPU_MAX: there is no node group named GPU "
			 "(node groups: none)");
	expect_env_error(HEAD GROUP_W, no_setting,
			 "LUASCALE_NODE_GROUPS_W_MAXIMUM: unknown node group setting; expected "
			 "LUASCALE_NODE_GROUPS_<NAME>_MIN, _MAX or _PRICE_PER_HOUR");
	expect_env_error(HEAD GROUP_W, bad_max,
			 "LUASCALE_NODE_GROUPS_W_MAX: expected a non-negative integer, got \"-2\"");
	expect_env_error(HEAD GROUP_W, min_gt_max,
			 "LUASCALE_NODE_GROUPS_W_MIN: max (5) is less than min (6) for node group \"w\"");
	expect_env_error(HEAD, idle_gt_max,
			 "LUASCALE_INTERVALS_BATCH_IDLE: batch_idle (60000ms) is longer than "
			 "batch_max (10000ms)");
	expect_env_error(HEAD, null_param,
			 "LUASCALE_POLICY_PARAMS_X: null is not a parameter value; write \"\" for an "
			 "empty string, or leave the parameter out");
	expect_env_error(HEAD, no_key,
			 "LUASCALE_POLICY_PARAMS_: the parameter name is missing "
			 "(LUASCALE_POLICY_PARAMS_<KEY>)");

	c = parse_envp(HEAD, bad_sel, &err);
	assert_null(c);
	assert_true(!strncmp(err.msg, "LUASCALE_SAFETY_PROTECTED_POD_SELECTOR: ",
			     strlen("LUASCALE_SAFETY_PROTECTED_POD_SELECTOR: ")));

	/* the environment may supply what the file leaves out */
	c = parse_envp("cluster: {kubeconfig: /k}\npolicy: {path: p}\n", context, &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_string_equal(c->context, "dev");
	config_free(c);
}

static void test_ambiguous_group_env(void **state)
{
	static const char *const envp[] = { "LUASCALE_NODE_GROUPS_A_B_MAX=3", NULL };

	(void)state;
	expect_env_error(HEAD "node_groups:\n"
			 "  - {name: a-b, max: 1, template: {allocatable: {cpu: 1, memory: 1}}}\n"
			 "  - {name: a.b, max: 1, template: {allocatable: {cpu: 1, memory: 1}}}\n",
			 envp,
			 "LUASCALE_NODE_GROUPS_A_B_MAX: ambiguous: both node groups \"a-b\" and "
			 "\"a.b\" have this name in the environment");
}

/* ---- durations ---- */

static void test_provider_and_provisioning(void **state)
{
	static const char *const envp[] = {
		"LUASCALE_PROVIDER_QPS=7.5",
		"LUASCALE_PROVISIONING_DRAIN_TIMEOUT=20m",
		NULL,
	};
	struct errbuf err;
	struct config *c;

	(void)state;
	c = parse(HEAD, &err);
	assert_non_null(c);
	assert_string_equal(c->provider_kind, "");
	assert_true(c->provider_qps == 5 && c->provider_burst == 10);
	assert_true(c->provider_read_qps == 20 && c->provider_read_burst == 40);
	assert_int_equal(c->max_provision_ms, 15 * 60 * 1000);
	assert_int_equal(c->backoff_initial_ms, 5 * 60 * 1000);
	assert_int_equal(c->backoff_max_ms, 30 * 60 * 1000);
	assert_int_equal(c->drain_timeout_ms, 10 * 60 * 1000);
	config_free(c);

	c = parse_envp(HEAD "provider: {kind: sim, qps: 2, burst: 5, read_qps: 10, read_burst: 20}\n"
		       "provisioning: {max_provision_time: 20m, backoff_initial: 1m, backoff_max: 10m}\n",
		       envp, &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_string_equal(c->provider_kind, "sim");
	assert_true(c->provider_qps == 7.5); /* the environment wins */
	assert_int_equal(c->provider_burst, 5);
	assert_true(c->provider_read_qps == 10 && c->provider_read_burst == 20);
	assert_int_equal(c->max_provision_ms, 20 * 60 * 1000);
	assert_int_equal(c->backoff_initial_ms, 60 * 1000);
	assert_int_equal(c->backoff_max_ms, 10 * 60 * 1000);
	assert_int_equal(c->drain_timeout_ms, 20 * 60 * 1000);
	config_free(c);

	expect_error_prefix(HEAD "provider: {qps: 0}\n", "config.yaml:6:17: provider.qps: ");
	expect_error_prefix(HEAD "provider: {burst: 0}\n", "config.yaml:6:19: provider.burst: ");
	expect_error(HEAD "provider: {qsp: 1}\n",
		     "config.yaml:6:12: provider: unknown key \"qsp\" (did you mean \"qps\"?)");
	expect_error_prefix(HEAD "provisioning: {max_provision_time: 15}\n",
			    "config.yaml:6:36: provisioning.max_provision_time: ");
}

static void test_pricing(void **state)
{
	struct errbuf err;
	struct config *c;

	(void)state;
	c = parse(HEAD, &err);
	assert_non_null(c);
	assert_true(c->pricing_enabled);
	assert_int_equal(c->pricing_on_demand_ttl_ms, 12 * 3600 * 1000);
	assert_int_equal(c->pricing_spot_ttl_ms, 3600 * 1000);
	config_free(c);

	c = parse(HEAD "provider: {kind: aws, pricing: {enabled: false, on_demand_ttl: 6h, spot_ttl: 10m}}\n",
		  &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_false(c->pricing_enabled);
	assert_int_equal(c->pricing_on_demand_ttl_ms, 6 * 3600 * 1000);
	assert_int_equal(c->pricing_spot_ttl_ms, 10 * 60 * 1000);
	config_free(c);

	expect_error_prefix(HEAD "provider: {pricing: {spot_ttl: 10s}}\n",
			    "config.yaml:6:32: provider.pricing.spot_ttl: ");
	expect_error(HEAD "provider: {pricing: {ttl: 1h}}\n",
		     "config.yaml:6:22: provider.pricing: unknown key \"ttl\" (known keys: enabled, on_demand_ttl, spot_ttl)");
}

static void test_duration(void **state)
{
	static const struct {
		const char *text;
		int64_t ms;
	} good[] = {
		{"250ms", 250}, {"10s", 10000}, {"1m30s", 90000}, {"2h", 7200000},
		{"1h2m3s", 3723000}, {"0s", 0}, {"1.5s", 1500}, {"1.5h", 5400000},
		{"1m1ms", 60001}, {".5s", 500}, {"9223372036854775807ms", INT64_MAX},
	};
	static const char *const bad[] = {
		"", "10", "-5s", "+5s", " 5s", "5s ", "5 s", "5x", "s", "1.s", ".s", "5s.",
		"0.5ms", "1.0001s", "9223372036854775808ms", "9999999999999999h",
		"5000000000000000s5000000000000000s", "1d", "5S",
	};
	size_t i;
	int64_t ms;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		ms = -1;
		if (config_parse_duration(good[i].text, &ms))
			fail_msg("rejected \"%s\"", good[i].text);
		assert_int_equal(ms, good[i].ms);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (!config_parse_duration(bad[i], &ms))
			fail_msg("accepted \"%s\"", bad[i]);
	assert_int_equal(config_parse_duration(NULL, &ms), -1);
}

/* ---- files ---- */

static void test_load(void **state)
{
	struct errbuf err = { "" };
	struct config *c;

	(void)state;
	c = config_load("/nonexistent/luascale/config.yaml", &err);
	assert_null(c);
	assert_string_equal(err.msg,
			    "cannot read /nonexistent/luascale/config.yaml: No such file or directory");

	c = config_load("/", &err);
	assert_null(c);
	assert_string_equal(err.msg, "cannot read /: a directory, not a regular file; give the path of a file");
}

/* The example in examples/ must stay valid. */
static void test_example(void **state)
{
	static const char *const env[] = { "HOME=/home/ada", NULL };
	const char *path = SOURCE_DIR "/examples/config.yaml";
	struct errbuf err = { "" };
	struct config *c;
	char *text;
	long n;
	FILE *f;

	(void)state;
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	text = malloc((size_t)n);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	c = config_parse(text, (size_t)n, path, fake_getenv, (void *)env, &err);
	free(text);
	if (!c)
		fail_msg("%s", err.msg);
	assert_int_equal(c->n_groups, 2);
	assert_string_equal(c->groups[0].name, "workers");
	assert_int_equal(c->groups[0].tmpl.allocatable.cpu_m, 4000);
	assert_int_equal(c->groups[0].tmpl.allocatable.memory, 16LL << 30);
	assert_int_equal(c->groups[0].tmpl.allocatable.pods, 110);
	assert_true(c->groups[0].price_per_hour == 0.192);
	assert_int_equal(c->groups[0].min, 1);
	assert_int_equal(c->groups[0].max, 20);
	assert_string_equal(c->groups[1].name, "gpu");
	assert_int_equal(c->groups[1].tmpl.allocatable.cpu_m, 8000);
	assert_int_equal(c->groups[1].tmpl.allocatable.memory, 32LL << 30);
	assert_int_equal(resources_ext(&c->groups[1].tmpl.allocatable, "nvidia.com/gpu"), 1);
	assert_int_equal(c->groups[1].tmpl.n_taints, 1);
	assert_string_equal(c->groups[1].tmpl.taints[0].key, "nvidia.com/gpu");
	assert_string_equal(c->groups[1].tmpl.taints[0].value, "present");
	assert_int_equal(c->groups[1].tmpl.taints[0].effect, TAINT_NO_SCHEDULE);
	assert_true(c->groups[1].price_per_hour == 1.20);
	assert_int_equal(c->groups[1].min, 0);
	assert_int_equal(c->groups[1].max, 4);
	assert_string_equal(c->policy_path, SOURCE_DIR "/examples/../policies/default.lua");
	assert_true(param_get(&c->params, "scale_down_utilization")->num == 0.5);
	assert_string_equal(param_get(&c->params, "unneeded_for")->str, "10m");
	assert_string_equal(c->kubeconfig, "/home/ada/.kube/config");
	config_free(c);
}

/* safety.max_actions_per_round: default 1000, at least 1, at most the
 * decoder's own limit, from the file or the environment */
static void test_max_actions_per_round(void **state)
{
	static const char *const envp[] = { "LUASCALE_SAFETY_MAX_ACTIONS_PER_ROUND=50", NULL };
	static const char *const bad_env[] = { "LUASCALE_SAFETY_MAX_ACTIONS_PER_ROUND=0", NULL };
	struct errbuf err = { "" };
	struct config *c;

	(void)state;
	c = parse(HEAD, &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_int_equal(c->max_actions_per_round, 1000);
	config_free(c);
	c = parse(HEAD "safety:\n  max_actions_per_round: 7\n", &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_int_equal(c->max_actions_per_round, 7);
	config_free(c);
	c = parse_envp(HEAD "safety:\n  max_actions_per_round: 7\n", envp, &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_int_equal(c->max_actions_per_round, 50);
	config_free(c);
	expect_error_prefix(HEAD "safety:\n  max_actions_per_round: 0\n",
			    "config.yaml:7:26: safety.max_actions_per_round: ");
	expect_error_prefix(HEAD "safety:\n  max_actions_per_round: 100001\n",
			    "config.yaml:7:26: safety.max_actions_per_round: ");
	assert_null(parse_envp(HEAD, bad_env, &err));
	assert_non_null(strstr(err.msg, "LUASCALE_SAFETY_MAX_ACTIONS_PER_ROUND"));
}

/* safety.max_concurrent_drains: 1 unless set, at least 1, from the file or
 * the environment. */
static void test_max_concurrent_drains(void **state)
{
	static const char *const env[] = { "LUASCALE_SAFETY_MAX_CONCURRENT_DRAINS=2", NULL };
	static const char *const zero[] = { "LUASCALE_SAFETY_MAX_CONCURRENT_DRAINS=0", NULL };
	struct errbuf err = { "" };
	struct config *c;

	(void)state;
	c = parse(HEAD, &err);
	assert_non_null(c);
	assert_int_equal(c->max_concurrent_drains, 1);
	config_free(c);
	c = parse(HEAD "safety:\n  max_concurrent_drains: 3\n", &err);
	assert_non_null(c);
	assert_int_equal(c->max_concurrent_drains, 3);
	config_free(c);
	c = parse_envp(HEAD "safety:\n  max_concurrent_drains: 3\n", env, &err);
	assert_non_null(c);
	assert_int_equal(c->max_concurrent_drains, 2);
	config_free(c);
	expect_error_prefix(HEAD "safety:\n  max_concurrent_drains: 0\n",
			    "config.yaml:7:26: safety.max_concurrent_drains: ");
	expect_env_error(HEAD, zero, "LUASCALE_SAFETY_MAX_CONCURRENT_DRAINS: expected a positive integer, got \"0\"");
}

/* safety.evicted_pods_must_fit: on by default, off from the file or the
 * environment, a non-boolean refused. */
static void test_evicted_pods_must_fit(void **state)
{
	static const char *const env[] = { "LUASCALE_SAFETY_EVICTED_PODS_MUST_FIT=false", NULL };
	struct errbuf err = { "" };
	struct config *c;

	(void)state;
	c = parse(HEAD, &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_true(c->evicted_pods_must_fit);
	config_free(c);
	c = parse(HEAD "safety: {evicted_pods_must_fit: false}\n", &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_false(c->evicted_pods_must_fit);
	config_free(c);
	c = parse_envp(HEAD, env, &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_false(c->evicted_pods_must_fit);
	config_free(c);
	expect_error_prefix(HEAD "safety: {evicted_pods_must_fit: sometimes}\n",
			    "config.yaml:6:33: safety.evicted_pods_must_fit: ");
}

/* cluster.write_qps / write_burst and safety.max_cache_staleness: defaults,
 * the file, the environment, and values refused. */
static void test_write_limit_and_staleness(void **state)
{
	static const char *const env[] = { "LUASCALE_CLUSTER_WRITE_QPS=2.5",
					   "LUASCALE_CLUSTER_WRITE_BURST=7",
					   "LUASCALE_SAFETY_MAX_CACHE_STALENESS=2m", NULL };
	static const char *const tiny[] = { "LUASCALE_CLUSTER_WRITE_QPS=1e-320", NULL };
	static const char *const zero[] = { "LUASCALE_SAFETY_MAX_CACHE_STALENESS=0s", NULL };
	struct errbuf err = { "" };
	struct config *c;

	(void)state;
	c = parse(HEAD, &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_true(c->write_qps == 10);
	assert_int_equal(c->write_burst, 20);
	assert_int_equal(c->max_cache_staleness_ms, 30000);
	config_free(c);
	c = parse("cluster: {kubeconfig: /k, context: x, write_qps: 0.5, write_burst: 3}\n"
		  "policy: {path: /p.lua}\n"
		  "safety: {max_cache_staleness: 45s}\n", &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_true(c->write_qps == 0.5);
	assert_int_equal(c->write_burst, 3);
	assert_int_equal(c->max_cache_staleness_ms, 45000);
	config_free(c);
	c = parse_envp(HEAD, env, &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_true(c->write_qps == 2.5);
	assert_int_equal(c->write_burst, 7);
	assert_int_equal(c->max_cache_staleness_ms, 120000);
	config_free(c);
	expect_error(HEAD "safety: {max_cache_staleness: 0s}\n",
		     "config.yaml:6:31: safety.max_cache_staleness: must be from 1s to 24h, got \"0s\"");
	expect_error(HEAD "safety: {max_cache_staleness: 25h}\n",
		     "config.yaml:6:31: safety.max_cache_staleness: must be from 1s to 24h, got \"25h\"");
	expect_error_prefix("cluster: {kubeconfig: /k, context: x, write_qps: 1e-320}\n",
			    "config.yaml:1:50: cluster.write_qps: expected a number of writes per "
			    "second from 0.001 to 1000000");
	expect_error_prefix("cluster: {kubeconfig: /k, context: x, write_qps: .nan}\n",
			    "config.yaml:1:50: cluster.write_qps: expected");
	expect_error_prefix("cluster: {kubeconfig: /k, context: x, write_qps: 0}\n",
			    "config.yaml:1:50: cluster.write_qps: expected a number of writes");
	expect_error_prefix("cluster: {kubeconfig: /k, context: x, write_burst: 0}\n",
			    "config.yaml:1:52: cluster.write_burst: expected");
	expect_env_error(HEAD, tiny, "LUASCALE_CLUSTER_WRITE_QPS: expected a number of writes per "
			 "second from 0.001 to 1000000, got \"1e-320\"");
	expect_env_error(HEAD, zero, "LUASCALE_SAFETY_MAX_CACHE_STALENESS: must be from 1s to 24h, "
			 "got \"0s\"");
}

/* ---- unknown LUASCALE_* variables ---- */

static void test_env_unknown_variable(void **state)
{
	static const char *const typo[] = { "LUASCALE_SAFETY_MAX_NODE_TOTAL=1", NULL };
	static const char *const group_typo[] = { "LUASCALE_NODE_GROUP_W_MAX=3", NULL };
	static const char *const param_typo[] = { "LUASCALE_POLICY_PARAM_X=3", NULL };
	static const char *const lower[] = { "luascale_policy_memory=1Gi", NULL };
	static const char *const stranger[] = { "LUASCALE_FROBNICATOR_LEVEL=9", NULL };
	static const char *const not_config[] = {
		"LUASCALE_CONFIG=/etc/luascale.yaml", "LUASCALE_SANITIZE=ON",
		"LUASCALE_TSAN=ON", "LUASCALE_SOURCE_DIR=/src", "LUASCALE_SHARE_DIR=/usr/share",
		"LUASCALE_NODE_GROUPS_W_MAX=4", "LUASCALE_POLICY_PARAMS_NEW=1",
		"LUASCALE_PROVISIONING_DRAIN_TIMEOUT=20m", NULL,
	};
	struct errbuf err = { "" };
	struct config *c;

	(void)state;
	expect_env_error(HEAD GROUP_W, typo,
			 "LUASCALE_SAFETY_MAX_NODE_TOTAL: unknown variable (did you mean "
			 "LUASCALE_SAFETY_MAX_NODES_TOTAL?); luascale refuses LUASCALE_* variables "
			 "it does not know, so that a typo cannot leave a setting at its default");
	expect_env_error(HEAD GROUP_W, group_typo,
			 "LUASCALE_NODE_GROUP_W_MAX: unknown variable (did you mean "
			 "LUASCALE_NODE_GROUPS_W_MAX?); luascale refuses LUASCALE_* variables "
			 "it does not know, so that a typo cannot leave a setting at its default");
	expect_env_error(HEAD, param_typo,
			 "LUASCALE_POLICY_PARAM_X: unknown variable (did you mean "
			 "LUASCALE_POLICY_PARAMS_X?); luascale refuses LUASCALE_* variables "
			 "it does not know, so that a typo cannot leave a setting at its default");
	expect_env_error(HEAD, lower,
			 "luascale_policy_memory: unknown variable (did you mean "
			 "LUASCALE_POLICY_MEMORY?); luascale refuses LUASCALE_* variables "
			 "it does not know, so that a typo cannot leave a setting at its default");
	expect_env_error(HEAD, stranger,
			 "LUASCALE_FROBNICATOR_LEVEL: unknown variable; luascale refuses LUASCALE_* "
			 "variables it does not know (the settings are listed in docs/configuration.md)");

	/* the build's, the tests' and the command line's own variables pass */
	c = parse_envp(HEAD GROUP_W, not_config, &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_int_equal(c->groups[0].max, 4);
	assert_int_equal(c->drain_timeout_ms, 20 * 60 * 1000);
	config_free(c);

	/* a getenv hook cannot be listed: nothing to check, nothing refused */
	c = parse_hook(HEAD, "config.yaml", typo, &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_int_equal(c->max_nodes_total, 0);
	config_free(c);
}

/* ---- ranges of numeric keys and checks across them ---- */

static void test_numeric_ranges(void **state)
{
	static const char *const env_qps[] = { "LUASCALE_PROVIDER_QPS=1e-320", NULL };
	static const char *const env_mem[] = { "LUASCALE_POLICY_MEMORY=1", NULL };
	static const char *const env_nan[] = { "LUASCALE_POLICY_PARAMS_X=.nan", NULL };
	static const char *const env_backoff[] = { "LUASCALE_PROVISIONING_BACKOFF_INITIAL=1h", NULL };

	(void)state;
	expect_error(HEAD "safety: {}\nprovisioning:\n  max_provision_time: 0s\n",
		     "config.yaml:8:23: provisioning.max_provision_time: must be from 1s to 168h, "
		     "got \"0s\"");
	expect_error(HEAD "provisioning:\n  backoff_initial: 1h\n  backoff_max: 30m\n",
		     "config.yaml:7:20: provisioning.backoff_initial: backoff_initial (1h) is longer "
		     "than backoff_max (30m): the backoff doubles from the first up to the second");
	expect_error(HEAD "provisioning:\n  drain_timeout: 800h\n",
		     "config.yaml:7:18: provisioning.drain_timeout: must be from 1s to 168h, got \"800h\"");
	expect_error(HEAD "provider:\n  qps: 1e-320\n",
		     "config.yaml:7:8: provider.qps: expected a number of calls per second from "
		     "0.001 to 1000000, got \"1e-320\"");
	expect_error(HEAD "provider:\n  read_qps: .nan\n",
		     "config.yaml:7:13: provider.read_qps: expected a non-negative number, got \".nan\"");
	expect_error(HEAD GROUP_W "    price_per_hour: .inf\n",
		     "config.yaml:11:21: node_groups[0].price_per_hour: expected a non-negative "
		     "number, got \".inf\"");
	expect_error(HEAD GROUP_W "    price_per_hour: 1e300\n",
		     "config.yaml:11:21: node_groups[0].price_per_hour: expected a number from 0 to "
		     "1000000, got \"1e300\"");
	expect_error(HEAD "safety:\n  max_nodes_total: 1e9\n",
		     "config.yaml:7:20: safety.max_nodes_total: expected a non-negative integer, got \"1e9\"");
	expect_error(HEAD "safety:\n  max_scale_down_per_round: 5000000\n",
		     "config.yaml:7:29: safety.max_scale_down_per_round: 5000000 is too large (at most 1000000)");
	expect_error(HEAD "intervals:\n  batch_max: 30h\n",
		     "config.yaml:7:14: intervals.batch_max: must be from 0ms to 24h, got \"30h\"");
	expect_error("cluster: {kubeconfig: /k, context: c}\npolicy:\n  path: p\n  memory: 1\n",
		     "config.yaml:4:11: policy.memory: must be from 1Mi to 1024Gi, got \"1\"");
	expect_error("cluster: {kubeconfig: /k, context: c}\npolicy:\n  path: p\n  instructions: 10\n",
		     "config.yaml:4:17: policy.instructions: 10 is too small (at least 1000)");
	expect_error("cluster: {kubeconfig: /k, context: c}\npolicy:\n  path: p\n  params: {x: .nan}\n",
		     "config.yaml:4:15: policy.params.x: .nan is not a usable parameter value: a policy "
		     "compares NaN and infinity false or true with every number; write a finite number");
	expect_error("cluster: {kubeconfig: /k, context: c}\npolicy:\n  path: p\n  params: {l: [1, -.inf]}\n",
		     "config.yaml:4:19: policy.params.l[1]: -.inf is not a usable parameter value: a policy "
		     "compares NaN and infinity false or true with every number; write a finite number");

	expect_env_error(HEAD, env_qps,
			 "LUASCALE_PROVIDER_QPS: expected a number of calls per second from 0.001 to "
			 "1000000, got \"1e-320\"");
	expect_env_error(HEAD, env_mem,
			 "LUASCALE_POLICY_MEMORY: must be from 1Mi to 1024Gi, got \"1\"");
	expect_env_error(HEAD, env_nan,
			 "LUASCALE_POLICY_PARAMS_X: .nan is not a usable parameter value: a policy "
			 "compares NaN and infinity false or true with every number; write a finite number");
	expect_env_error(HEAD, env_backoff,
			 "LUASCALE_PROVISIONING_BACKOFF_INITIAL: backoff_initial (1h) is longer than "
			 "backoff_max (30m): the backoff doubles from the first up to the second");
}

/* policy.timeout: the CPU time of one policy call, default 10s, above zero. */
static void test_policy_timeout(void **state)
{
	static const char *const env[] = { "LUASCALE_POLICY_TIMEOUT=2500ms", NULL };
	static const char *const zero_env[] = { "LUASCALE_POLICY_TIMEOUT=0s", NULL };
	struct errbuf err = { "" };
	struct config *c;

	(void)state;
	c = parse(HEAD GROUP_W, &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_int_equal(c->policy_timeout_ms, 10000);
	config_free(c);
	c = parse(HEAD "  timeout: 30s\n" GROUP_W, &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_int_equal(c->policy_timeout_ms, 30000);
	config_free(c);
	c = parse_envp(HEAD "  timeout: 30s\n" GROUP_W, env, &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_int_equal(c->policy_timeout_ms, 2500);
	config_free(c);
	expect_error(HEAD "  timeout: 0s\n" GROUP_W,
		     "config.yaml:6:12: policy.timeout: must be from 1ms to 24h, got \"0s\"");
	expect_error(HEAD "  timeout: 25h\n" GROUP_W,
		     "config.yaml:6:12: policy.timeout: must be from 1ms to 24h, got \"25h\"");
	expect_error_prefix(HEAD "  timeout: ten\n" GROUP_W, "config.yaml:6:12: policy.timeout:");
	expect_env_error(HEAD GROUP_W, zero_env,
			 "LUASCALE_POLICY_TIMEOUT: must be from 1ms to 24h, got \"0s\"");
}

/* provider.aws and a group's aws: section: ASG groups take max and the
 * template from the cloud, fleet groups need theirs; every value checked. */
static void test_provider_aws(void **state)
{
	static const char *const env[] = { "LUASCALE_PROVIDER_AWS_REGION=eu-west-1",
					   "LUASCALE_PROVIDER_AWS_AUTO_DISCOVERY=false", NULL };
	const struct config_aws_group *a;
	struct config *c;
	struct errbuf err;

	(void)state;
	c = parse(HEAD
		  "node_groups:\n"
		  "  - name: workers\n"
		  "    aws: {asg: eks-Workers-2024}\n"
		  "  - name: plain\n"
		  "    min: 1\n"
		  "  - name: gpu\n"
		  "    max: 8\n"
		  "    aws:\n"
		  "      mode: fleet\n"
		  "      launch_template: gpu-nodes\n"
		  "      instance_types: [g5.xlarge, g5.2xlarge]\n"
		  "      placements:\n"
		  "        - {zone: us-east-1a, subnet: subnet-0abc}\n"
		  "        - {zone: us-east-1b}\n"
		  "      allocation_strategy: prioritized\n"
		  "      capacity_type: spot\n"
		  "provider:\n"
		  "  kind: aws\n"
		  "  aws:\n"
		  "    region: us-east-1\n"
		  "    cluster_name: prod\n"
		  "    auto_discovery: true\n"
		  "    endpoints: {ec2: \"https://vpce-1.ec2.us-east-1.vpce.amazonaws.com\", autoscaling: \"http://127.0.0.1:8080\"}\n",
		  &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_string_equal(c->aws.region, "us-east-1");
	assert_string_equal(c->aws.cluster_name, "prod");
	assert_true(c->aws.auto_discovery);
	assert_true(c->provider_qps == 2 && c->provider_burst == 5); /* EC2's launch limits */
	assert_string_equal(c->aws.endpoint_ec2, "https://vpce-1.ec2.us-east-1.vpce.amazonaws.com");
	assert_string_equal(c->aws.endpoint_autoscaling, "http://127.0.0.1:8080");
	assert_null(c->aws.endpoint_sts);
	assert_non_null(c->group_extra);
	a = &c->group_extra[0].aws;
	assert_false(a->fleet);
	assert_string_equal(a->asg, "eks-Workers-2024");
	assert_false(c->group_extra[0].max_set || c->group_extra[0].template_set);
	assert_string_equal(c->group_extra[1].aws.asg, "plain"); /* the group's own name */
	assert_true(c->group_extra[1].min_set);
	a = &c->group_extra[2].aws;
	assert_true(a->fleet && a->prioritized && a->spot);
	assert_string_equal(a->launch_template, "gpu-nodes");
	assert_string_equal(a->launch_template_version, "$Default");
	assert_int_equal(a->n_instance_types, 2);
	assert_string_equal(a->instance_types[1], "g5.2xlarge");
	assert_int_equal(a->n_placements, 2);
	assert_string_equal(a->zones[1], "us-east-1b");
	assert_string_equal(a->subnets[0], "subnet-0abc");
	assert_string_equal(a->subnets[1], "");
	config_free(c);

	c = parse_envp(HEAD "node_groups:\n  - name: w\nprovider: {kind: aws, aws: {region: us-east-1, cluster_name: x}}\n",
		       env, &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_string_equal(c->aws.region, "eu-west-1");
	assert_false(c->aws.auto_discovery);
	config_free(c);
	c = parse(HEAD "provider: {kind: aws, qps: 4, burst: 1}\n", &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_true(c->provider_qps == 4 && c->provider_burst == 1); /* written: kept */
	config_free(c);

	/* a fleet group's instances are the cluster's by its tag: the name is required */
	expect_error(HEAD "node_groups:\n  - name: f\n    max: 3\n    aws: {mode: fleet, launch_template: t, instance_types: [m5.large], placements: [{zone: us-east-1a}]}\nprovider: {kind: aws}\n",
		     "config.yaml:9:10: node_groups[0].aws: node group \"f\" is a fleet group (mode: fleet): set provider.aws.cluster_name "
		     "(or LUASCALE_PROVIDER_AWS_CLUSTER_NAME); its instances are tagged luascale.io/cluster=<cluster_name> "
		     "and only those are its own, so a cluster with a group of the same name in this account and region "
		     "is not counted");
	{
		static const char *const cenv[] = { "LUASCALE_PROVIDER_AWS_CLUSTER_NAME=blue", NULL };

		c = parse_envp(HEAD "node_groups:\n  - name: f\n    max: 3\n    aws: {mode: fleet, launch_template: t, instance_types: [m5.large], placements: [{zone: us-east-1a}]}\nprovider: {kind: aws}\n",
			       cenv, &err);
		if (!c)
			fail_msg("%s", err.msg);
		assert_string_equal(c->aws.cluster_name, "blue");
		config_free(c);
	}
	/* fleet groups say their own size and launch settings */
	expect_error(HEAD "node_groups:\n  - name: f\n    aws: {mode: fleet, launch_template: t, instance_types: [m5.large], placements: [{zone: us-east-1a}]}\nprovider: {kind: aws, aws: {cluster_name: t}}\n",
		     "config.yaml:7:5: node_groups[0]: max is required (the largest number of nodes of group \"f\")");
	expect_error(HEAD "node_groups:\n  - name: f\n    max: 3\n    aws: {mode: fleet, instance_types: [m5.large], placements: [{zone: us-east-1a}]}\nprovider: {kind: aws}\n",
		     "config.yaml:9:10: node_groups[0].aws: launch_template is required for a fleet group (mode: fleet)");
	expect_error(HEAD "node_groups:\n  - name: f\n    max: 3\n    aws: {mode: fleet, launch_template: t, instance_types: [m5.large], placements: [{subnet: subnet-1}]}\nprovider: {kind: aws}\n",
		     "config.yaml:9:85: node_groups[0].aws.placements[0]: zone is required: every placement names its availability zone, so each instance's zone is known");
	expect_error(HEAD "node_groups:\n  - name: a\n    aws: {instance_types: [m5.large]}\nprovider: {kind: aws}\n",
		     "config.yaml:8:27: node_groups[0].aws: instance_types is for fleet groups (mode: fleet); an Auto Scaling group takes its launch settings from the cloud");
	expect_error(HEAD "node_groups:\n  - name: f\n    max: 3\n    aws: {mode: fleet, launch_template: t, instance_types: [m5large], placements: [{zone: us-east-1a}]}\nprovider: {kind: aws}\n",
		     "config.yaml:9:61: node_groups[0].aws.instance_types[0]: \"m5large\" is not an EC2 instance type (like \"m5.large\")");
	expect_error(HEAD "node_groups:\n  - name: a\n  - name: b\n    aws: {asg: a}\nprovider: {kind: aws}\n",
		     "config.yaml:9:10: node_groups[1].aws: node groups \"a\" and \"b\" are the same Auto Scaling group \"a\"");
	/* capacity_type: one, or spot then on-demand for what spot cannot give */
	{
#define FLEET_CAP(v) HEAD "node_groups:\n  - name: f\n    max: 3\n    aws: {mode: fleet, launch_template: t, instance_types: [m5.large], placements: [{zone: us-east-1a}], capacity_type: " v "}\nprovider: {kind: aws, aws: {cluster_name: t}}\n"
		c = parse(FLEET_CAP("[spot, on-demand]"), &err);
		if (!c)
			fail_msg("%s", err.msg);
		assert_true(c->group_extra[0].aws.spot && c->group_extra[0].aws.on_demand_fallback);
		config_free(c);
		c = parse(FLEET_CAP("[spot]"), &err);
		if (!c)
			fail_msg("%s", err.msg);
		assert_true(c->group_extra[0].aws.spot && !c->group_extra[0].aws.on_demand_fallback);
		config_free(c);
		c = parse(FLEET_CAP("on-demand"), &err);
		if (!c)
			fail_msg("%s", err.msg);
		assert_true(!c->group_extra[0].aws.spot && !c->group_extra[0].aws.on_demand_fallback);
		config_free(c);
		expect_error(FLEET_CAP("[on-demand, spot]"),
			     "config.yaml:9:133: node_groups[0].aws.capacity_type[1]: [on-demand, spot] is not supported: on-demand never falls back to spot; write [spot, on-demand] for spot with on-demand for what spot cannot give");
		expect_error(FLEET_CAP("[spot, spot]"),
			     "config.yaml:9:128: node_groups[0].aws.capacity_type[1]: \"spot\" is listed twice");
		expect_error(FLEET_CAP("[spot, reserved]"),
			     "config.yaml:9:128: node_groups[0].aws.capacity_type[1]: \"reserved\" is not one of \"on-demand\", \"spot\"");
		expect_error(FLEET_CAP("[]"),
			     "config.yaml:9:121: node_groups[0].aws.capacity_type: capacity_type lists 1 or 2 capacity types (spot, on-demand), got 0");
#undef FLEET_CAP
	}
	expect_error(HEAD "node_groups:\n  - name: a\n    aws: {mode: spot}\nprovider: {kind: aws}\n",
		     "config.yaml:8:17: node_groups[0].aws.mode: \"spot\" is not one of \"asg\", \"fleet\"");
	/* without the aws provider, a template and max are required, and aws sections refused */
	expect_error(HEAD "node_groups:\n  - name: w\n    max: 2\n",
		     "config.yaml:7:5: node_groups[0]: template is required (the allocatable resources of a new node of group \"w\")");
	expect_error(HEAD GROUP_W "    aws: {asg: x}\nprovider: {kind: sim}\n",
		     "config.yaml:11:10: node_groups[0].aws: an aws: section needs provider.kind: aws");
	expect_error(HEAD "provider: {kind: sim, aws: {region: us-east-1}}\n",
		     "config.yaml:6:28: provider.aws: provider.aws is set, but provider.kind is \"sim\": set kind: aws, or remove the section");
	expect_error(HEAD "provider: {kind: aww}\n",
		     "config.yaml:6:18: provider.kind: provider.kind \"aww\" is not a provider of this build (known: sim, aws, azure, gce); did you mean \"aws\"?");
	expect_error(HEAD "provider: {kind: aws, aws: {auto_discovery: true}}\n",
		     "config.yaml:6:45: provider.aws.auto_discovery: auto_discovery needs provider.aws.cluster_name: the ASGs tagged k8s.io/cluster-autoscaler/<cluster_name> are found");
	expect_error(HEAD "provider: {kind: aws, aws: {region: US-East-1}}\n",
		     "config.yaml:6:37: provider.aws.region: \"US-East-1\" is not an AWS region (like \"us-east-1\")");
	expect_error(HEAD "provider: {kind: aws, aws: {endpoints: {ec2: \"https://u:p@ec2.example\"}}}\n",
		     "config.yaml:6:46: provider.aws.endpoints.ec2: \"https://u:p@ec2.example\" is not an endpoint URL: http:// or https://, a host, no user, query or fragment");
	expect_error(HEAD "provider: {kind: aws, aws: {endpoints: {ecs: \"https://x\"}}}\n",
		     "config.yaml:6:41: provider.aws.endpoints: unknown key \"ecs\" (did you mean \"ec2\"?)");
}

/* examples/aws.yaml is valid and says what its comments say. */
static void test_example_aws(void **state)
{
	struct errbuf err = { "" };
	struct config *c;

	(void)state;
	c = config_load_flags(SOURCE_DIR "/examples/aws.yaml", 0, &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_string_equal(c->provider_kind, "aws");
	assert_int_equal(c->n_groups, 3);
	assert_false(c->group_extra[0].aws.fleet);
	assert_string_equal(c->group_extra[0].aws.asg, "workers");
	assert_false(c->group_extra[0].max_set);
	assert_true(c->group_extra[1].max_set && c->group_extra[1].min_set);
	assert_true(c->group_extra[2].aws.fleet && c->group_extra[2].aws.prioritized);
	assert_int_equal(c->group_extra[2].aws.n_placements, 2);
	assert_true(c->aws.auto_discovery);
	assert_string_equal(c->aws.cluster_name, "prod");
	config_free(c);
}

/* provider.gce and a group's gce: section: a MIG's zone or region, max
 * required, discovery by prefix with its own limits. */
static void test_provider_gce(void **state)
{
	struct config *c;
	struct errbuf err;

	(void)state;
	c = parse(HEAD
		  "node_groups:\n"
		  "  - name: workers\n"
		  "    max: 10\n"
		  "    gce: {zone: us-central1-a}\n"
		  "  - name: wide\n"
		  "    max: 30\n"
		  "    gce: {mig: wide-mig, region: us-central1}\n"
		  "provider:\n"
		  "  kind: gce\n"
		  "  gce:\n"
		  "    project: my-proj\n"
		  "    credentials_file: /etc/luascale/key.json\n"
		  "    endpoints: {compute: \"http://127.0.0.1:9/compute/v1/\", metadata: \"127.0.0.1:8\",\n"
		  "                billing: \"http://127.0.0.1:7/\"}\n"
		  "    discovery: [{prefix: gke-prod-, min: 1, max: 20}]\n",
		  &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_string_equal(c->gce.project, "my-proj");
	assert_string_equal(c->gce.credentials_file, "/etc/luascale/key.json");
	assert_string_equal(c->gce.endpoint_compute, "http://127.0.0.1:9/compute/v1/");
	assert_string_equal(c->gce.endpoint_billing, "http://127.0.0.1:7/");
	assert_string_equal(c->gce.metadata_host, "127.0.0.1:8");
	assert_int_equal(c->gce.n_discovery, 1);
	assert_string_equal(c->gce.discovery[0].prefix, "gke-prod-");
	assert_int_equal(c->gce.discovery[0].max, 20);
	assert_string_equal(c->group_extra[0].gce.mig, "workers");
	assert_string_equal(c->group_extra[0].gce.zone, "us-central1-a");
	assert_null(c->group_extra[0].gce.region);
	assert_string_equal(c->group_extra[1].gce.mig, "wide-mig");
	assert_string_equal(c->group_extra[1].gce.region, "us-central1");
	config_free(c);

	expect_error(HEAD "node_groups:\n  - name: w\n    gce: {zone: us-central1-a}\nprovider: {kind: gce}\n",
		     "config.yaml:7:5: node_groups[0]: max is required (the largest number of nodes of group \"w\")");
	expect_error(HEAD "node_groups:\n  - name: w\n    max: 3\nprovider: {kind: gce}\n",
		     "config.yaml:7:5: node_groups[0]: node group \"w\" needs a gce: section with its MIG's zone or region (provider.kind is gce)");
	expect_error_prefix(HEAD "node_groups:\n  - name: w\n    max: 3\n    gce: {zone: a, region: b-c}\nprovider: {kind: gce}\n",
			    "config.yaml:9:");
	expect_error(HEAD "node_groups:\n  - name: w\n    max: 3\n    gce: {}\nprovider: {kind: gce}\n",
		     "config.yaml:9:10: node_groups[0].gce: give the MIG's zone (a zonal MIG) or its region (a regional one): exactly one of zone and region");
	expect_error(HEAD "node_groups:\n  - name: w\n    max: 3\n    gce: {mig: Bad_Name, zone: us-central1-a}\nprovider: {kind: gce}\n",
		     "config.yaml:9:16: node_groups[0].gce.mig: \"Bad_Name\" is not a managed instance group name (lowercase letters, digits and '-', starting with a letter, up to 63)");
	expect_error(HEAD "provider: {kind: aws, gce: {project: p-1}}\n",
		     "config.yaml:6:28: provider.gce: provider.gce is set, but provider.kind is \"aws\": set kind: gce, or remove the section");
	expect_error(HEAD "provider: {kind: gce, gce: {discovery: [{prefix: gke-}]}}\n",
		     "config.yaml:6:41: provider.gce.discovery[0]: max is required: a MIG has no size limits of its own");
	expect_error(HEAD "provider: {kind: gce, gce: {endpoints: {metadata: \"http://x\"}}}\n",
		     "config.yaml:6:51: provider.gce.endpoints.metadata: \"http://x\" is not a host[:port] (no scheme, no path)");
}

/* provider.azure and a group's azure: section: scale sets by name (the
 * group's by default) or by tags, min and max from the cloud when unwritten,
 * ids checked, the section only with kind azure. */
static void test_provider_azure(void **state)
{
	static const char *const env[] = { "LUASCALE_PROVIDER_AZURE_RESOURCE_GROUP=rg-env",
					   "LUASCALE_PROVIDER_AZURE_AUTH=managed_identity",
					   "LUASCALE_SIM_AZURE_ARM_ENDPOINT=http://127.0.0.1:9/", NULL };
	static const char *const bad_env[] = { "LUASCALE_PROVIDER_AZURE_SUBSCRIPTON_ID=x", NULL };
	struct config *c;
	struct errbuf err;

	(void)state;
	c = parse(HEAD
		  "node_groups:\n"
		  "  - name: workers\n"
		  "  - name: gpu\n"
		  "    max: 4\n"
		  "    azure: {vmss: aks-gpu-12345678-vmss, resource_group: MC_rg_aks_westeurope}\n"
		  "provider:\n"
		  "  kind: azure\n"
		  "  azure:\n"
		  "    cloud: usgov\n"
		  "    subscription_id: 0a1b2c3d-0000-4000-8000-00000000abcd\n"
		  "    resource_group: rg-main\n"
		  "    tenant_id: contoso.onmicrosoft.com\n"
		  "    auth: workload_identity\n"
		  "    federated_token_file: /var/run/secrets/azure/tokens/azure-identity-token\n"
		  "    endpoints: {resource_manager: \"http://127.0.0.1:9/\", imds: \"http://127.0.0.1:8\"}\n"
		  "    discovery:\n"
		  "      - tags: {k8s.io_cluster-autoscaler_enabled: \"true\", k8s.io_cluster-autoscaler_prod: \"\"}\n"
		  "        max: 20\n",
		  &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_string_equal(c->azure.cloud, "usgov");
	assert_string_equal(c->azure.subscription_id, "0a1b2c3d-0000-4000-8000-00000000abcd");
	assert_string_equal(c->azure.resource_group, "rg-main");
	assert_string_equal(c->azure.tenant_id, "contoso.onmicrosoft.com");
	assert_string_equal(c->azure.auth, "workload_identity");
	assert_string_equal(c->azure.federated_token_file, "/var/run/secrets/azure/tokens/azure-identity-token");
	assert_string_equal(c->azure.endpoint_resource_manager, "http://127.0.0.1:9/");
	assert_string_equal(c->azure.endpoint_imds, "http://127.0.0.1:8");
	assert_null(c->azure.endpoint_authority);
	assert_int_equal(c->azure.n_discovery, 1);
	assert_int_equal(c->azure.discovery[0].n_tags, 2);
	assert_string_equal(c->azure.discovery[0].tags[0].key, "k8s.io_cluster-autoscaler_enabled");
	assert_string_equal(c->azure.discovery[0].tags[0].value, "true");
	assert_string_equal(c->azure.discovery[0].tags[1].value, "");
	assert_int_equal(c->azure.discovery[0].min, -1);
	assert_int_equal(c->azure.discovery[0].max, 20);
	/* no azure: section: the group's name, the provider's resource group */
	assert_false(c->group_extra[0].azure_set);
	assert_string_equal(c->group_extra[0].azure.vmss, "workers");
	assert_null(c->group_extra[0].azure.resource_group);
	assert_false(c->group_extra[0].max_set); /* the scale set's max tag rules */
	assert_true(c->group_extra[1].azure_set);
	assert_string_equal(c->group_extra[1].azure.vmss, "aks-gpu-12345678-vmss");
	assert_string_equal(c->group_extra[1].azure.resource_group, "MC_rg_aks_westeurope");
	config_free(c);

	/* the environment overrides; the simulator's ARM root is not a setting but is allowed */
	c = parse_envp(HEAD "provider: {kind: azure, azure: {resource_group: rg-file}}\n", env, &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_string_equal(c->azure.resource_group, "rg-env");
	assert_string_equal(c->azure.auth, "managed_identity");
	config_free(c);
	expect_env_error(HEAD "provider: {kind: azure}\n", bad_env,
			 "LUASCALE_PROVIDER_AZURE_SUBSCRIPTON_ID: unknown variable (did you mean LUASCALE_PROVIDER_AZURE_SUBSCRIPTION_ID?); luascale refuses LUASCALE_* variables it does not know, so that a typo cannot leave a setting at its default");

	expect_error(HEAD "provider: {kind: azure, azure: {subscription_id: not-a-guid}}\n",
		     "config.yaml:6:50: provider.azure.subscription_id: \"not-a-guid\" is not a GUID (like \"00000000-0000-0000-0000-000000000000\")");
	expect_error(HEAD "provider: {kind: azure, azure: {cloud: mars}}\n",
		     "config.yaml:6:40: provider.azure.cloud: \"mars\" is not an Azure cloud: public, china or usgov");
	expect_error(HEAD "provider: {kind: azure, azure: {auth: password}}\n",
		     "config.yaml:6:39: provider.azure.auth: \"password\" is not an Azure credential: auto, client_secret, workload_identity or managed_identity");
	expect_error(HEAD "provider: {kind: azure, azure: {endpoints: {authority: \"ftp://x\"}}}\n",
		     "config.yaml:6:56: provider.azure.endpoints.authority: \"ftp://x\" is not an endpoint URL: http:// or https://, a host, no user, query or fragment");
	expect_error(HEAD "provider: {kind: azure, azure: {discovery: [{max: 3}]}}\n",
		     "config.yaml:6:45: provider.azure.discovery[0]: tags is required: the scale sets that carry every one of them are managed");
	expect_error(HEAD "provider: {kind: azure, azure: {discovery: [{tags: {}}]}}\n",
		     "config.yaml:6:52: provider.azure.discovery[0].tags: at least one tag is needed: an empty list would claim every scale set");
	expect_error(HEAD "provider: {kind: azure, azure: {discovery: [{tags: {\"a/b\": x}}]}}\n",
		     "config.yaml:6:53: provider.azure.discovery[0].tags[\"a/b\"]: invalid tag name \"a/b\": up to 512 printable characters, none of <>%&\\?/");
	expect_error(HEAD "provider: {kind: azure, azure: {discovery: [{tags: {a: b}, min: 5, max: 2}]}}\n",
		     "config.yaml:6:45: provider.azure.discovery[0]: max (2) is less than min (5)");
	expect_error(HEAD "provider: {kind: gce, azure: {resource_group: rg}}\n",
		     "config.yaml:6:30: provider.azure: provider.azure is set, but provider.kind is \"gce\": set kind: azure, or remove the section");
	expect_error(HEAD "node_groups:\n  - name: w\n    max: 3\n    azure: {vmss: w}\n    template:\n      allocatable: {cpu: 4, memory: 16Gi}\n",
		     "config.yaml:9:12: node_groups[0].azure: an azure: section needs provider.kind: azure");
	expect_error(HEAD "node_groups:\n  - name: w\n    azure: {vmss: \"-bad\"}\nprovider: {kind: azure}\n",
		     "config.yaml:8:19: node_groups[0].azure.vmss: \"-bad\" is not a scale set name (letters, digits, '-', '_' and '.', up to 64, starting with a letter or digit)");
	expect_error(HEAD "node_groups:\n  - name: w\n    azure: {resource_group: \"rg.\"}\nprovider: {kind: azure}\n",
		     "config.yaml:8:29: node_groups[0].azure.resource_group: \"rg.\" is not a resource group name (letters, digits, '-', '_', '.', '(' and ')', up to 90, not ending in '.')");
	expect_error(HEAD "node_groups:\n  - name: a\n    azure: {vmss: Pool1}\n  - name: b\n    azure: {vmss: pool1}\nprovider: {kind: azure}\n",
		     "config.yaml:10:12: node_groups[1].azure: node groups \"a\" and \"b\" are the same scale set \"pool1\"");
}

/* leader_election and server: defaults (election on only in the cluster),
 * every key, the environment, and the orderings that are refused. */
static void test_incluster(void **state)
{
	static const char *const env[] = {"LUASCALE_LEADER_ELECTION_ENABLED=false",
					   "LUASCALE_LEADER_ELECTION_NAME=other",
					   "LUASCALE_SERVER_LISTEN=127.0.0.1:0", NULL};
	struct errbuf err = { "" };
	struct config *c = parse(HEAD, &err);

	(void)state;
	if (!c)
		fail_msg("%s", err.msg);
	assert_false(c->leader_election);
	assert_string_equal(c->lease_namespace, "kube-system");
	assert_string_equal(c->lease_name, "luascale");
	assert_int_equal(c->lease_duration_ms, 15000);
	assert_int_equal(c->renew_deadline_ms, 10000);
	assert_int_equal(c->retry_period_ms, 2000);
	assert_string_equal(c->server_listen, ":8080");
	assert_true(c->server_enabled);
	config_free(c);

	c = parse("cluster: {in_cluster: true}\npolicy: {path: p.lua}\n", &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_true(c->leader_election);
	config_free(c);

	c = parse(HEAD "leader_election: {enabled: true, namespace: ops, name: ls.a, lease_duration: 30s,"
		  " renew_deadline: 20s, retry_period: 4s}\nserver: {listen: \"[::1]:9090\", enabled: false}\n",
		  &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_true(c->leader_election);
	assert_string_equal(c->lease_namespace, "ops");
	assert_string_equal(c->lease_name, "ls.a");
	assert_int_equal(c->lease_duration_ms, 30000);
	assert_int_equal(c->renew_deadline_ms, 20000);
	assert_int_equal(c->retry_period_ms, 4000);
	assert_string_equal(c->server_listen, "[::1]:9090");
	assert_false(c->server_enabled);
	config_free(c);

	c = parse_hook("cluster: {in_cluster: true}\npolicy: {path: p.lua}\n", "config.yaml", env, &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_false(c->leader_election);
	assert_string_equal(c->lease_name, "other");
	assert_string_equal(c->server_listen, "127.0.0.1:0");
	config_free(c);

	expect_error(HEAD "leader_election: {renew_deadline: 15s}\n",
		     "config.yaml:6:35: leader_election.renew_deadline: renew_deadline (15000ms) must be shorter than lease_duration (15000ms): a leader must stop acting before its Lease can be taken");
	expect_error(HEAD "leader_election: {retry_period: 10s}\n",
		     "config.yaml:6:33: leader_election.retry_period: retry_period (10000ms) must be shorter than renew_deadline (10000ms)");
	expect_error(HEAD "leader_election: {lease_duration: 15500ms}\n",
		     "config.yaml:6:35: leader_election.lease_duration: lease_duration must be whole seconds (a Lease counts seconds)");
	expect_error(HEAD "leader_election: {namespace: Kube_System}\n",
		     "config.yaml:6:30: leader_election.namespace: leader_election.namespace \"Kube_System\" is not a namespace name (a DNS label)");
	expect_error(HEAD "leader_election: {sideways: 1}\n",
		     "config.yaml:6:19: leader_election: unknown key \"sideways\" (known keys: enabled, namespace, name, lease_duration, renew_deadline, retry_period)");
	expect_error(HEAD "server: {listen: \"8080\"}\n",
		     "config.yaml:6:18: server.listen: server.listen \"8080\": want HOST:PORT, :PORT or [IPV6]:PORT (port 0-65535)");
	expect_error(HEAD "server: {listen: \":99999\"}\n",
		     "config.yaml:6:18: server.listen: server.listen \":99999\": want HOST:PORT, :PORT or [IPV6]:PORT (port 0-65535)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_incluster),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_batch_new_pod),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_params),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_error_types),
		cmocka_unit_test(test_error_keys),
		cmocka_unit_test(test_error_syntax),
		cmocka_unit_test(test_error_cluster),
		cmocka_unit_test(test_error_groups),
		cmocka_unit_test(test_env),
		cmocka_unit_test(test_env_hook),
		cmocka_unit_test(test_env_errors),
		cmocka_unit_test(test_ambiguous_group_env),
		cmocka_unit_test(test_provider_and_provisioning),
		cmocka_unit_test(test_pricing),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_example),
		cmocka_unit_test(test_max_actions_per_round),
		cmocka_unit_test(test_max_concurrent_drains),
		cmocka_unit_test(test_write_limit_and_staleness),
		cmocka_unit_test(test_evicted_pods_must_fit),
		cmocka_unit_test(test_env_unknown_variable),
		cmocka_unit_test(test_numeric_ranges),
		cmocka_unit_test(test_policy_timeout),
		cmocka_unit_test(test_provider_aws),
		cmocka_unit_test(test_example_aws),
		cmocka_unit_test(test_provider_gce),
		cmocka_unit_test(test_provider_azure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
