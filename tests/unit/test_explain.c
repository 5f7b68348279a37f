/*
 * Tests for the node explanations (engine/explain): rounds every 10 s of a
 * virtual clock explain every node only once per interval, and only those
 * rounds read the policy's notes; 'since' stays while a node's state and
 * reason stay, starts again when either changes, and a node that went
 * away is forgotten; the states from the plan, the actuator and the safety
 * checks; /debug/nodes' JSON whatever a policy writes in a note, reasons
 * cut to a bound; the answers before the first pass and when off; the
 * status summary (reasons grouped, a bounded top) and its size at 5,000
 * nodes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arena.h"
#include "buf.h"
#include "config.h"
#include "engine/actuator.h"
#include "engine/explain.h"
#include "engine/reconciler.h"
#include "engine/round.h"
#include "engine/status.h"
#include "runtime/clock.h"
#include "runtime/executor.h"
#include "test_policy_files.h"

#define T0 1700000000LL

/* ---- a cluster: nodes of group "a" ---- */

static struct kv group_label = {"group", "a"};

/* A finished snapshot at 'now' with nodes 'names' (NULL-terminated) in
 * group "a" (min 0), each with one small pod; strings live in 'ar'. */
static struct snapshot *cluster(struct arena *ar, int64_t now, const char *const *names)
{
	struct snapshot *s = snapshot_new();
	struct node_group g;
	struct errbuf err;
	size_t i;

	assert_non_null(s);
	for (i = 0; names[i]; i++) {
		struct node nd;
		struct pod pd;
		char pname[300];

		memset(&nd, 0, sizeof(nd));
		nd.name = arena_strdup(ar, names[i]);
		nd.provider_id = "";
		nd.labels = (struct kvlist){&group_label, 1};
		nd.allocatable = (struct resources){4000, 16LL << 30, 100LL << 30, 110, NULL, 0};
		nd.ready = true;
		nd.created = T0 - 3600;
		if (snapshot_add_node(s, &nd, &err) < 0)
			fail_msg("%s", err.msg);
		memset(&pd, 0, sizeof(pd));
		snprintf(pname, sizeof(pname), "work-%zu", i);
		pd.ns = "default";
		pd.name = arena_strdup(ar, pname);
		pd.controller_kind = "ReplicaSet";
		pd.controller_name = "work";
		pd.node_name = nd.name;
		pd.phase = POD_RUNNING;
		pd.requests = (struct resources){500, 1LL << 30, 0, 1, NULL, 0};
		pd.local_volume = "";
		pd.sched_message = "";
		if (snapshot_add_pod(s, &pd, &err) < 0)
			fail_msg("%s", err.msg);
	}
	memset(&g, 0, sizeof(g));
	g.name = "a";
	g.min = 0;
	g.max = 10;
	g.selector = (struct kvlist){&group_label, 1};
	g.tmpl.allocatable = (struct resources){4000, 16LL << 30, 100LL << 30, 110, NULL, 0};
	g.tmpl.labels = (struct kvlist){&group_label, 1};
	g.target = -1;
	assert_int_equal(snapshot_set_groups(s, &g, 1, &err), 0);
	if (snapshot_finish(s, now, &err) < 0)
		fail_msg("%s", err.msg);
	return s;
}

/* ---- a round as the daemon runs it, on a virtual clock ---- */

/* Notes each node; logs whether this reconcile's notes are read. */
#define POLICY \
	"local ls = require 'luascale'\n" \
	"local P = {params = {}}\n" \
	"function P.reconcile(cluster, params, store)\n" \
	"  local plan = ls.plan()\n" \
	"  plan:log(plan:explaining() and 'notes read' or 'notes not read')\n" \
	"  for _, n in ipairs(cluster.nodes) do\n" \
	"    plan:explain(n, false, 'kept by the test policy')\n" \
	"  end\n" \
	"  return plan\n" \
	"end\n" \
	"return P\n"

struct rig {
	struct config *cfg;
	struct reconciler *rec;
	struct clock *clock;
	struct executor *ex;
	struct kubeops kops;
	struct actuator *act;
	struct explainer *explain;
	struct buf log_text;
	struct logger log;
	int explained_views; /* rounds whose view carried node reports */
	char policy_path[64];
};

static void capture(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct rig *r = ctx;

	(void)level;
	(void)wall;
	buf_printf(&r->log_text, "%s\n", msg);
}

static void observe(void *ctx, const struct snapshot *s, const struct round_view *v)
{
	struct rig *r = ctx;

	r->explained_views += v->nodes != NULL;
	assert_int_equal(explainer_record(r->explain, s, v, clock_now(r->clock)), 0);
}

static int setup(void **state)
{
	struct rig *r = calloc(1, sizeof(*r));
	struct actuator_config acfg;
	struct errbuf err;
	char yaml[512];

	assert_non_null(r);
	snprintf(r->policy_path, sizeof(r->policy_path), "%s", write_policy(POLICY));
	snprintf(yaml, sizeof(yaml),
		 "cluster: {kubeconfig: /dev/null, context: test}\n"
		 "node_groups: [{name: a, min: 0, max: 10, template: {allocatable: {cpu: 4, memory: 16Gi}}}]\n"
		 "policy: {path: %s}\n"
		 "intervals: {explain: 1m}\n", r->policy_path);
	r->cfg = config_parse(yaml, strlen(yaml), "config.yaml", NULL, NULL, &err);
	if (!r->cfg)
		fail_msg("config: %s", err.msg);
	assert_int_equal(r->cfg->explain_interval_ms, 60000);
	r->rec = reconciler_new(r->cfg, NULL, &err);
	if (!r->rec)
		fail_msg("policy: %s", err.msg);
	r->log.write = capture;
	r->log.ctx = r;
	r->log.min_level = LOG_INFO;
	r->clock = vclock_new(T0);
	r->ex = executor_new_virtual(r->clock);
	actuator_config_default(&acfg);
	r->act = actuator_new(r->ex, NULL, &r->kops, &acfg, &r->log);
	assert_non_null(r->act);
	r->explain = explainer_new(r->cfg->explain_interval_ms * CLOCK_NS_PER_MS);
	assert_non_null(r->explain);
	*state = r;
	return 0;
}

static int teardown(void **state)
{
	struct rig *r = *state;

	executor_shutdown(r->ex, clock_now(r->clock));
	actuator_free(r->act);
	reconciler_free(r->rec);
	config_free(r->cfg);
	explainer_free(r->explain);
	vclock_free(r->clock);
	buf_free(&r->log_text);
	unlink(r->policy_path);
	free(r);
	return 0;
}

/* One round at virtual time 'at_s' (seconds from the start): it explains
 * when the explainer says it is due, as the daemon asks. */
static void run_round(struct rig *r, int64_t at_s)
{
	static const char *const names[] = {"node-1", "node-2", NULL};
	struct arena *ar = arena_new();
	struct snapshot *s;
	struct round_opts ro;
	struct round_stats st;
	struct errbuf err;

	vclock_set(r->clock, at_s * CLOCK_NS_PER_S);
	s = cluster(ar, T0 + at_s, names);
	memset(&ro, 0, sizeof(ro));
	ro.observe = observe;
	ro.observe_ctx = r;
	ro.explain = explainer_due(r->explain, clock_now(r->clock));
	assert_int_equal(round_run_opts(r->rec, r->act, s, &ro, &r->log, &st, &err), 0);
	snapshot_free(s);
	arena_free(ar);
}

static size_t count_lines(const char *text, const char *needle)
{
	size_t n = 0;
	const char *p = text;

	while (p && (p = strstr(p, needle))) {
		n++;
		p += strlen(needle);
	}
	return n;
}

/* Rounds every 10 s for 130 s with a 1m interval: passes at 0, 60 and 120 s
 * only, and only those rounds read the policy's notes. */
static void test_passes_per_interval(void **state)
{
	struct rig *r = *state;
	struct buf body = BUF_INIT;
	int64_t t;
	cJSON *j, *nodes;

	for (t = 0; t <= 130; t += 10)
		run_round(r, t);
	assert_int_equal(explainer_passes(r->explain), 3);
	assert_int_equal(r->explained_views, 3);
	assert_non_null(r->log_text.data);
	assert_int_equal(count_lines(r->log_text.data, "policy: notes read\n"), 3);
	assert_int_equal(count_lines(r->log_text.data, "policy: notes not read\n"), 11);

	/* the last pass, at 120 s, with the policy's note on each node */
	assert_int_equal(explainer_json(r->explain, &body), 200);
	j = cJSON_Parse(body.data);
	assert_non_null(j);
	assert_string_equal(cJSON_GetObjectItem(j, "time")->valuestring, "2023-11-14T22:15:20Z");
	assert_true(cJSON_GetObjectItem(j, "intervalSeconds")->valuedouble == 60);
	nodes = cJSON_GetObjectItem(j, "nodes");
	assert_int_equal(cJSON_GetArraySize(nodes), 2);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(nodes, 0), "name")->valuestring,
			    "node-1");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(nodes, 0), "state")->valuestring,
			    "kept");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(nodes, 0), "reason")->valuestring,
			    "kept by the test policy");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(nodes, 0), "group")->valuestring,
			    "a");
	/* the same state and reason since the first pass */
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(nodes, 1), "since")->valuestring,
			    "2023-11-14T22:13:20Z");
	cJSON_Delete(j);
	buf_free(&body);
}

/* A longer interval set while running (a config reload) moves the next
 * pass; 0 turns them off. */
static void test_interval_changes(void **state)
{
	struct rig *r = *state;

	run_round(r, 0);
	explainer_set_interval(r->explain, 120 * CLOCK_NS_PER_S);
	run_round(r, 60);
	run_round(r, 110);
	assert_int_equal(explainer_passes(r->explain), 1);
	run_round(r, 120);
	assert_int_equal(explainer_passes(r->explain), 2);
	explainer_set_interval(r->explain, 0);
	run_round(r, 1000);
	assert_int_equal(explainer_passes(r->explain), 2);
	assert_false(explainer_due(r->explain, 100000 * CLOCK_NS_PER_S));
}

/* ---- explainer_record on hand-made views ---- */

/* A view of 's' in which node i has report why[i] (removable when
 * removable[i]) and the plan and verdict given. */
struct view {
	struct node_report reports[8];
	struct plan accepted;
	struct verdict verdict;
	struct round_view v;
};

static void view_init(struct view *w, const struct snapshot *s, const char *const *why,
		      const bool *removable)
{
	size_t i;

	memset(w, 0, sizeof(*w));
	assert_true(s->n_nodes <= 8);
	for (i = 0; i < s->n_nodes; i++) {
		w->reports[i].name = s->nodes[i].name;
		w->reports[i].group = "a";
		w->reports[i].removable = removable ? removable[i] : false;
		w->reports[i].why = (char *)why[i];
	}
	plan_init(&w->accepted);
	verdict_init(&w->verdict);
	w->v.accepted = &w->accepted;
	w->v.verdict = &w->verdict;
	w->v.nodes = w->reports;
	w->v.n_nodes = s->n_nodes;
}

static void view_free(struct view *w)
{
	plan_free(&w->accepted);
	verdict_free(&w->verdict);
}

static void add_action(struct plan *p, enum action_type type, const char *node, const char *reason)
{
	struct action a;

	memset(&a, 0, sizeof(a));
	a.type = type;
	a.node = (char *)node;
	a.reason = (char *)reason;
	a.where = (char *)"policy.lua:9";
	assert_int_equal(plan_add(p, &a), 0);
}

/* Records one pass over nodes 'names' at T0 + at_s with reasons 'why'. */
static void pass(struct explainer *e, int64_t at_s, const char *const *names,
		 const char *const *why, const bool *removable)
{
	struct arena *ar = arena_new();
	struct snapshot *s = cluster(ar, T0 + at_s, names);
	struct view w;

	view_init(&w, s, why, removable);
	assert_int_equal(explainer_record(e, s, &w.v, at_s * CLOCK_NS_PER_S), 0);
	view_free(&w);
	snapshot_free(s);
	arena_free(ar);
}

/* The JSON of 'e' parsed (200 expected); cJSON_Delete it. */
static cJSON *debug_nodes(struct explainer *e)
{
	struct buf body = BUF_INIT;
	cJSON *j;

	assert_int_equal(explainer_json(e, &body), 200);
	j = cJSON_Parse(body.data);
	if (!j)
		fail_msg("not JSON: %s", body.data);
	buf_free(&body);
	return j;
}

/* The entry of node 'name' in the JSON, or NULL. */
static const cJSON *entry(const cJSON *j, const char *name)
{
	const cJSON *n;

	cJSON_ArrayForEach(n, cJSON_GetObjectItem(j, "nodes"))
		if (strcmp(cJSON_GetObjectItem(n, "name")->valuestring, name) == 0)
			return n;
	return NULL;
}

static const char *field(const cJSON *j, const char *name, const char *key)
{
	const cJSON *n = entry(j, name);

	if (!n)
		fail_msg("node %s is not in the JSON", name);
	return cJSON_GetObjectItem(n, key)->valuestring;
}

static void test_since(void **state)
{
	struct explainer *e = explainer_new(60 * CLOCK_NS_PER_S);
	static const char *const two[] = {"n1", "n2", NULL};
	static const char *const three[] = {"n1", "n2", "n3", NULL};
	static const char *const n2_only[] = {"n2", NULL};
	static const char *const back[] = {"n1", "n2", NULL};
	cJSON *j;

	(void)state;
	pass(e, 0, two, (const char *const[]){"reason A", "reason B"}, NULL);
	j = debug_nodes(e);
	assert_string_equal(field(j, "n1", "since"), "2023-11-14T22:13:20Z");
	cJSON_Delete(j);

	/* n1 the same: since stays; n2's reason changed: since starts again;
	 * n3 is new */
	pass(e, 60, three, (const char *const[]){"reason A", "reason C", "reason A"}, NULL);
	j = debug_nodes(e);
	assert_string_equal(field(j, "n1", "since"), "2023-11-14T22:13:20Z");
	assert_string_equal(field(j, "n2", "since"), "2023-11-14T22:14:20Z");
	assert_string_equal(field(j, "n2", "reason"), "reason C");
	assert_string_equal(field(j, "n3", "since"), "2023-11-14T22:14:20Z");
	cJSON_Delete(j);

	/* n2's state changes with the same reason: since starts again; n1 and
	 * n3 are gone and forgotten */
	pass(e, 120, n2_only, (const char *const[]){"reason C"}, (const bool[]){true});
	j = debug_nodes(e);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "nodes")), 1);
	assert_string_equal(field(j, "n2", "state"), "candidate");
	assert_string_equal(field(j, "n2", "since"), "2023-11-14T22:15:20Z");
	assert_null(entry(j, "n1"));
	cJSON_Delete(j);

	/* n1 comes back with its old reason: it starts afresh */
	pass(e, 180, back, (const char *const[]){"reason A", "reason C"}, (const bool[]){false, true});
	j = debug_nodes(e);
	assert_string_equal(field(j, "n1", "since"), "2023-11-14T22:16:20Z");
	assert_string_equal(field(j, "n2", "since"), "2023-11-14T22:15:20Z");
	assert_int_equal(cJSON_GetObjectItem(j, "passes")->valueint, 4);
	cJSON_Delete(j);
	explainer_free(e);
}

/* What the plan, the actuator and the safety checks say of a node. */
static void test_states(void **state)
{
	static const char *const names[] = {"drained", "busy", "refused", "held", "wanted", "kept",
					    "quiet", NULL};
	static const char *const why[] = {"being removed (drain): idle", "a note", "idle 20m",
					  "idle 30m", "idle 40m", "utilization 0.90 is not below 0.50",
					  ""};
	static const bool removable[] = {true, false, true, true, true, false, false};
	struct explainer *e = explainer_new(60 * CLOCK_NS_PER_S);
	struct arena *ar = arena_new();
	struct snapshot *s = cluster(ar, T0, names);
	struct view w;
	struct rejection *rj;
	cJSON *j;

	(void)state;
	view_init(&w, s, why, removable);
	add_action(&w.accepted, ACTION_DRAIN, "drained", "idle");
	s->nodes[1].removing = true; /* the actuator drains it */
	w.verdict.rejected = rj = calloc(1, sizeof(*rj));
	assert_non_null(rj);
	w.verdict.n_rejected = w.verdict.cap_rejected = 1;
	rj->action.type = ACTION_DELETE;
	rj->action.node = strdup("refused");
	rj->action.reason = strdup("idle 20m");
	rj->action.where = strdup("policy.lua:3");
	rj->why = strdup("max_scale_down_per_round (1) reached");
	assert_int_equal(explainer_record(e, s, &w.v, 0), 0);
	j = debug_nodes(e);
	assert_string_equal(field(j, "drained", "state"), "removing");
	assert_string_equal(field(j, "drained", "reason"), "being removed (drain): idle");
	assert_string_equal(field(j, "busy", "state"), "removing");
	assert_string_equal(field(j, "busy", "reason"), "a drain or delete by luascale is in progress");
	assert_string_equal(field(j, "refused", "state"), "kept");
	assert_string_equal(field(j, "refused", "reason"),
			    "refused by the safety checks: max_scale_down_per_round (1) reached "
			    "(the policy asked to delete: idle 20m)");
	assert_string_equal(field(j, "held", "state"), "candidate");
	assert_string_equal(field(j, "wanted", "state"), "candidate");
	assert_string_equal(field(j, "wanted", "reason"), "idle 40m");
	assert_string_equal(field(j, "kept", "state"), "kept");
	assert_string_equal(field(j, "kept", "reason"), "utilization 0.90 is not below 0.50");
	assert_string_equal(field(j, "quiet", "reason"), "no policy note");
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "counts"), "removing")->valueint, 2);
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "counts"), "candidate")->valueint, 2);
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "counts"), "kept")->valueint, 3);
	cJSON_Delete(j);

	/* the cache is stale: the removals were held, the node is a candidate */
	w.v.held = "pods: not in sync for 45 s";
	assert_int_equal(explainer_record(e, s, &w.v, 60 * CLOCK_NS_PER_S), 0);
	j = debug_nodes(e);
	assert_string_equal(field(j, "held", "state"), "candidate");
	assert_string_equal(field(j, "held", "reason"),
			    "no removal while the cluster cache is stale (pods: not in sync for "
			    "45 s); idle 30m");
	cJSON_Delete(j);
	view_free(&w);
	snapshot_free(s);
	arena_free(ar);
	explainer_free(e);
}

/* Whatever a policy writes, the answer is JSON and a reason is bounded. */
static void test_json_escaping(void **state)
{
	static const char *const names[] = {"n\"1", "n2", "n3", NULL};
	struct explainer *e = explainer_new(60 * CLOCK_NS_PER_S);
	struct buf nasty = BUF_INIT, long_reason = BUF_INIT;
	const char *why[3];
	const char *r;
	cJSON *j;
	int i;

	(void)state;
	buf_puts(&nasty, "quote \" backslash \\ newline \n tab \t bell \x07 esc \x1b[31m "
			 "bad \xff\xfe utf-8 \xc3\xa9 end");
	for (i = 0; i < 3000; i++)
		buf_puts(&long_reason, "\xc3\xa9"); /* é: two bytes each */
	why[0] = nasty.data;
	why[1] = long_reason.data;
	why[2] = "plain";
	pass(e, 0, names, why, NULL);
	j = debug_nodes(e);
	assert_string_equal(field(j, "n\"1", "reason"),
			    "quote \" backslash \\ newline \n tab \t bell \x07 esc \x1b[31m "
			    "bad \xef\xbf\xbd\xef\xbf\xbd utf-8 \xc3\xa9 end");
	r = field(j, "n2", "reason");
	assert_true(strlen(r) <= EXPLAIN_REASON_MAX);
	assert_true(strlen(r) > EXPLAIN_REASON_MAX - 8);
	assert_string_equal(r + strlen(r) - 3, "...");
	/* cut between characters: all é but the dots */
	for (i = 0; r[i] != '.'; i += 2)
		assert_memory_equal(r + i, "\xc3\xa9", 2);
	cJSON_Delete(j);
	buf_free(&nasty);
	buf_free(&long_reason);
	explainer_free(e);
}

/* Before the first pass: 503 saying when it comes; off: 404. A policy
 * that fails in the explaining round is shown and the nodes stay. */
static void test_before_first_pass_and_off(void **state)
{
	static const char *const names[] = {"n1", NULL};
	struct explainer *e = explainer_new(60 * CLOCK_NS_PER_S);
	struct arena *ar = arena_new();
	struct snapshot *s = cluster(ar, T0 + 300, names);
	struct buf body = BUF_INIT;
	struct view w;
	cJSON *j;

	(void)state;
	assert_true(explainer_due(e, 0));
	assert_int_equal(explainer_json(e, &body), 503);
	j = cJSON_Parse(body.data);
	assert_non_null(j);
	assert_non_null(strstr(cJSON_GetObjectItem(j, "error")->valuestring,
			       "the first pass comes with the first round"));
	assert_true(cJSON_GetObjectItem(j, "intervalSeconds")->valuedouble == 60);
	cJSON_Delete(j);
	buf_free(&body);

	/* a round that did not explain is no pass */
	view_init(&w, s, (const char *const[]){"x"}, NULL);
	w.v.nodes = NULL;
	assert_int_equal(explainer_record(e, s, &w.v, 0), 0);
	assert_int_equal(explainer_passes(e), 0);
	assert_true(explainer_due(e, 0));

	/* the policy failed in the explaining round: shown; tried again an
	 * interval later */
	w.v.nodes = w.reports;
	w.v.policy_error = "policy.lua:3: boom";
	assert_int_equal(explainer_record(e, s, &w.v, 0), 0);
	assert_false(explainer_due(e, 59 * CLOCK_NS_PER_S));
	assert_true(explainer_due(e, 60 * CLOCK_NS_PER_S));
	assert_int_equal(explainer_json(e, &body), 503);
	j = cJSON_Parse(body.data);
	assert_non_null(j);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "policyError"), "message")->valuestring,
			    "policy.lua:3: boom");
	cJSON_Delete(j);
	buf_free(&body);

	/* a pass, then a failure: the nodes stay, the failure is shown */
	w.v.policy_error = NULL;
	assert_int_equal(explainer_record(e, s, &w.v, 60 * CLOCK_NS_PER_S), 0);
	w.v.policy_error = "policy.lua:3: boom again";
	assert_int_equal(explainer_record(e, s, &w.v, 120 * CLOCK_NS_PER_S), 0);
	j = debug_nodes(e);
	assert_string_equal(field(j, "n1", "reason"), "x");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "policyError"), "message")->valuestring,
			    "policy.lua:3: boom again");
	cJSON_Delete(j);
	view_free(&w);

	explainer_set_interval(e, 0);
	assert_false(explainer_due(e, 1000 * CLOCK_NS_PER_S));
	assert_int_equal(explainer_json(e, &body), 404);
	j = cJSON_Parse(body.data);
	assert_non_null(j);
	assert_string_equal(cJSON_GetObjectItem(j, "error")->valuestring,
			    "node explanations are off (intervals.explain is 0)");
	cJSON_Delete(j);
	buf_free(&body);
	snapshot_free(s);
	arena_free(ar);
	explainer_free(e);
}

/* Reasons alike but for their numbers count together; a bounded top. */
static void test_summary(void **state)
{
	struct explainer *e = explainer_new(60 * CLOCK_NS_PER_S);
	struct explain_summary sum;
	struct status_board *b = status_board_new();
	struct buf text = BUF_INIT, json = BUF_INIT;
	struct arena *ar = arena_new();
	struct snapshot *s;
	struct view w;
	const char *names[9];
	const char *why[8];
	char nbuf[8][16], wbuf[8][96];
	cJSON *j, *nodes, *top;
	int i;

	(void)state;
	/* 5 alike (utilization differs), 3 others of their own */
	for (i = 0; i < 8; i++) {
		snprintf(nbuf[i], sizeof(nbuf[i]), "node-%d", i);
		names[i] = nbuf[i];
		if (i < 5)
			snprintf(wbuf[i], sizeof(wbuf[i]), "utilization 0.%d%d is not below 0.50", 6 + i, i);
		else
			snprintf(wbuf[i], sizeof(wbuf[i]), "runs pod kube-system/dns-%c", 'a' + i);
		why[i] = wbuf[i];
	}
	names[8] = NULL;
	s = cluster(ar, T0, names);
	view_init(&w, s, why, NULL);
	assert_int_equal(explainer_record(e, s, &w.v, 0), 0);
	explainer_summary(e, &sum);
	assert_int_equal(sum.nodes, 8);
	assert_int_equal(sum.by_state[EXPLAIN_KEPT], 8);
	assert_int_equal(sum.n_top, 4);
	assert_int_equal(sum.top[0].count, 5);
	assert_string_equal(sum.top[0].reason, "utilization # is not below #");
	assert_string_equal(sum.top[0].example, "node-0");
	assert_int_equal(sum.more_reasons, 0);

	/* in the status: text and JSON */
	status_board_nodes(b, &sum);
	assert_int_equal(status_board_render(b, s, &text, &json), 0);
	assert_non_null(strstr(text.data, "  Nodes:        8 explained at 2023-11-14T22:13:20Z (every "
					  "1m): kept=8 candidate=0 removing=0\n"
					  "    5 kept: utilization # is not below # (e.g. node-0)\n"));
	j = cJSON_Parse(json.data);
	assert_non_null(j);
	nodes = cJSON_GetObjectItem(j, "nodes");
	assert_non_null(nodes);
	assert_int_equal(cJSON_GetObjectItem(nodes, "total")->valueint, 8);
	assert_int_equal(cJSON_GetObjectItem(nodes, "kept")->valueint, 8);
	assert_int_equal(cJSON_GetObjectItem(nodes, "intervalSeconds")->valueint, 60);
	top = cJSON_GetArrayItem(cJSON_GetObjectItem(nodes, "reasons"), 0);
	assert_string_equal(cJSON_GetObjectItem(top, "reason")->valuestring,
			    "utilization # is not below #");
	assert_int_equal(cJSON_GetObjectItem(top, "count")->valueint, 5);
	cJSON_Delete(j);
	view_free(&w);
	snapshot_free(s);
	arena_free(ar);
	buf_free(&text);
	buf_free(&json);
	status_board_free(b);
	explainer_free(e);
}

/* 5,000 nodes, each with a long reason of its own: /debug/nodes has them
 * all; the status ConfigMap's text and JSON stay far below 1 MiB. */
static void test_summary_bounded(void **state)
{
	enum { N = 5000 };
	struct explainer *e = explainer_new(60 * CLOCK_NS_PER_S);
	struct status_board *b = status_board_new();
	struct buf text = BUF_INIT, json = BUF_INIT, body = BUF_INIT;
	struct explain_summary sum;
	struct snapshot *s = snapshot_new();
	struct node_report *reports = calloc(N, sizeof(*reports));
	struct arena *ar = arena_new();
	struct round_view v;
	struct plan accepted;
	struct verdict verdict;
	struct errbuf err;
	cJSON *j;
	int i;

	(void)state;
	assert_non_null(reports);
	for (i = 0; i < N; i++) {
		struct node nd;
		char name[32], why[700];

		snprintf(name, sizeof(name), "ip-10-0-%d-%d.ec2.internal", i / 256, i % 256);
		memset(&nd, 0, sizeof(nd));
		nd.name = arena_strdup(ar, name);
		nd.provider_id = "";
		nd.allocatable = (struct resources){4000, 16LL << 30, 0, 110, NULL, 0};
		assert_int_equal(snapshot_add_node(s, &nd, &err), 0);
		/* distinct even with numbers as # */
		snprintf(why, sizeof(why), "runs pod team-%c%c%c/x %.*s", 'a' + i % 26,
			 'a' + (i / 26) % 26, 'a' + (i / 676) % 26, 600,
			 "................................................................................"
			 "................................................................................"
			 "................................................................................"
			 "................................................................................"
			 "................................................................................"
			 "................................................................................"
			 "................................................................................"
			 "................................................................................");
		reports[i].why = arena_strdup(ar, why);
	}
	assert_int_equal(snapshot_finish(s, T0, &err), 0);
	for (i = 0; i < N; i++)
		reports[i].name = s->nodes[i].name;
	plan_init(&accepted);
	verdict_init(&verdict);
	memset(&v, 0, sizeof(v));
	v.accepted = &accepted;
	v.verdict = &verdict;
	v.nodes = reports;
	v.n_nodes = N;
	assert_int_equal(explainer_record(e, s, &v, 0), 0);
	assert_int_equal(explainer_json(e, &body), 200);
	j = cJSON_Parse(body.data);
	assert_non_null(j);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "nodes")), N);
	cJSON_Delete(j);
	explainer_summary(e, &sum);
	assert_int_equal(sum.n_top, EXPLAIN_TOP);
	assert_true(sum.more_reasons > 0);
	status_board_nodes(b, &sum);
	assert_int_equal(status_board_render(b, s, &text, &json), 0);
	print_message("# /debug/nodes: %zu bytes; status text %zu, JSON %zu bytes at %d nodes\n",
		      body.len, text.len, json.len, N);
	assert_true(text.len + json.len < 64 * 1024);
	assert_non_null(strstr(text.data, "more reasons: every node at /debug/nodes"));
	plan_free(&accepted);
	verdict_free(&verdict);
	buf_free(&text);
	buf_free(&json);
	buf_free(&body);
	free(reports);
	snapshot_free(s);
	arena_free(ar);
	status_board_free(b);
	explainer_free(e);
}

/* The interval as people write numbers, whatever its length: an hour is
 * 3600 (not 3.6e+03), half a second 0.5 (not 0), in the page and in the
 * status. */
static void test_interval_numbers(void **state)
{
	static const char *const names[] = {"n1", NULL};
	struct explainer *e = explainer_new(3600 * CLOCK_NS_PER_S);
	struct status_board *b = status_board_new();
	struct buf body = BUF_INIT, text = BUF_INIT, json = BUF_INIT;
	struct explain_summary sum;
	struct arena *ar = arena_new();
	struct snapshot *s = cluster(ar, T0, names);

	(void)state;
	assert_int_equal(explainer_json(e, &body), 503);
	assert_non_null(strstr(body.data, "\"intervalSeconds\":3600}"));
	buf_free(&body);
	pass(e, 0, names, (const char *const[]){"x"}, NULL);
	assert_int_equal(explainer_json(e, &body), 200);
	assert_non_null(strstr(body.data, "\"intervalSeconds\":3600,"));
	explainer_set_interval(e, 500 * CLOCK_NS_PER_MS);
	explainer_summary(e, &sum);
	status_board_nodes(b, &sum);
	assert_int_equal(status_board_render(b, s, &text, &json), 0);
	assert_non_null(strstr(json.data, "\"nodes\":{\"intervalSeconds\":0.5,"));
	assert_non_null(strstr(text.data, "(every 500ms)"));
	buf_free(&body);
	buf_free(&text);
	buf_free(&json);
	snapshot_free(s);
	arena_free(ar);
	status_board_free(b);
	explainer_free(e);
}

/* intervals.explain: 1m by default, 0 turns it off, a day at most. */
static void test_config_key(void **state)
{
	static const char head[] = "cluster: {kubeconfig: /dev/null, context: test}\n"
				   "policy: {path: /p.lua}\n";
	struct errbuf err;
	struct config *c;
	char yaml[256];

	(void)state;
	c = config_parse(head, strlen(head), "config.yaml", NULL, NULL, &err);
	assert_non_null(c);
	assert_int_equal(c->explain_interval_ms, 60000);
	config_free(c);
	snprintf(yaml, sizeof(yaml), "%sintervals: {explain: 0s}\n", head);
	c = config_parse(yaml, strlen(yaml), "config.yaml", NULL, NULL, &err);
	assert_non_null(c);
	assert_int_equal(c->explain_interval_ms, 0);
	config_free(c);
	snprintf(yaml, sizeof(yaml), "%sintervals: {explain: 25h}\n", head);
	assert_null(config_parse(yaml, strlen(yaml), "config.yaml", NULL, NULL, &err));
	assert_string_equal(err.msg, "config.yaml:3:22: intervals.explain: must be from 0ms to 24h, "
				     "got \"25h\"");
	snprintf(yaml, sizeof(yaml), "%sintervals: {explain: often}\n", head);
	assert_null(config_parse(yaml, strlen(yaml), "config.yaml", NULL, NULL, &err));
	assert_non_null(strstr(err.msg, "intervals.explain: expected a duration"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_passes_per_interval, setup, teardown),
		cmocka_unit_test_setup_teardown(test_interval_changes, setup, teardown),
		cmocka_unit_test(test_since),
		cmocka_unit_test(test_states),
		cmocka_unit_test(test_json_escaping),
		cmocka_unit_test(test_before_first_pass_and_off),
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_summary_bounded),
		cmocka_unit_test(test_interval_numbers),
		cmocka_unit_test(test_config_key),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
