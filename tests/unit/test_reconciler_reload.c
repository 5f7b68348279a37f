/*
 * Tests for the one reload path: a config and its policy in a folder laid
 * out as the kubelet lays out a mounted ConfigMap (a timestamped folder,
 * "..data" pointing at it, each file a symlink through "..data"), each
 * new version swapped in through a "..data_tmp" symlink renamed over
 * "..data". Whatever asks for the reload (the file watcher or SIGHUP: both
 * reconciler_request_reload), the round after it reports it the same way:
 * luascale_policy_reloads_total by outcome, the status board's last policy
 * error, and the log — a broken YAML and a policy that fails its trial
 * are failed reloads, the config in use stays; loosened safety values are
 * named one by one and counted as "loosened".
 */
#define _XOPEN_SOURCE 700
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "config.h"
#include "engine/actuator.h"
#include "engine/instruments.h"
#include "engine/reconciler.h"
#include "engine/round.h"
#include "engine/status.h"
#include "runtime/clock.h"
#include "runtime/executor.h"
#include "runtime/metrics.h"
#include "test_policy_files.h"

#define CONFIG \
	"cluster: {kubeconfig: /dev/null, context: test}\n" \
	"node_groups: [{name: a, min: 0, max: 3, template: {allocatable: {cpu: 1, memory: 1Gi}}}]\n" \
	"policy: {path: policy.lua, params: {mode: %s}}\n" \
	"safety: {max_nodes_total: %d, max_scale_down_per_round: %d}\n"

#define POLICY \
	"local P = {params = {mode = 'ok'}}\n" \
	"function P.reconcile(cluster, params, store)\n" \
	"  if params.mode == 'boom' then error('mode boom') end\n" \
	"  return {}\n" \
	"end\n" \
	"return P\n"

struct rig {
	char dir[64];
	char config_path[96];
	int version;
	struct config *first;
	struct reconciler *rec;
	struct metrics *m;
	struct instruments ins;
	struct status_board *board;
	struct clock *clock;
	struct executor *ex;
	struct kubeops kops;
	struct actuator *act;
	struct buf log_text;
	struct logger log;
	struct buf status_json;
};

static void capture(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct rig *r = ctx;

	(void)wall;
	buf_printf(&r->log_text, "%s %s\n", log_level_str(level), msg);
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		fail_msg("path too long: %s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A new version of the ConfigMap, swapped in as the kubelet does it. */
static void cm_version(struct rig *r, const char *config, const char *policy)
{
	char vdir[PATH_MAX], name[32], tmp[PATH_MAX], data[PATH_MAX];

	snprintf(name, sizeof(name), "..2026_12_01_10_%02d_00.%d", r->version, r->version);
	r->version++;
	snprintf(vdir, sizeof(vdir), "%s/%s", r->dir, name);
	assert_int_equal(mkdir(vdir, 0755), 0);
	write_file(vdir, "config.yaml", config);
	write_file(vdir, "policy.lua", policy);
	snprintf(tmp, sizeof(tmp), "%s/..data_tmp", r->dir);
	snprintf(data, sizeof(data), "%s/..data", r->dir);
	assert_int_equal(symlink(name, tmp), 0);
	assert_int_equal(rename(tmp, data), 0);
}

static const char *config_text(const char *mode, int max_nodes, int max_down)
{
	static char text[1024];

	snprintf(text, sizeof(text), CONFIG, mode, max_nodes, max_down);
	return text;
}

static void observe(void *ctx, const struct snapshot *s, const struct round_view *v)
{
	struct rig *r = ctx;
	struct buf text = BUF_INIT;

	status_board_round(r->board, s, v);
	buf_free(&r->status_json);
	assert_int_equal(status_board_render(r->board, s, &text, &r->status_json), 0);
	buf_free(&text);
}

static int setup(void **state)
{
	struct rig *r = calloc(1, sizeof(*r));
	struct actuator_config acfg;
	char link[PATH_MAX];
	struct errbuf err;

	snprintf(r->dir, sizeof(r->dir), "/tmp/luascale-cm-XXXXXX");
	assert_non_null(mkdtemp(r->dir));
	cm_version(r, config_text("ok", 10, 1), POLICY);
	snprintf(link, sizeof(link), "%s/config.yaml", r->dir);
	assert_int_equal(symlink("..data/config.yaml", link), 0);
	snprintf(link, sizeof(link), "%s/policy.lua", r->dir);
	assert_int_equal(symlink("..data/policy.lua", link), 0);
	snprintf(r->config_path, sizeof(r->config_path), "%s/config.yaml", r->dir);
	r->first = config_load(r->config_path, &err);
	if (!r->first)
		fail_msg("config: %s", err.msg);
	r->rec = reconciler_new(r->first, NULL, &err);
	if (!r->rec)
		fail_msg("policy: %s", err.msg);
	assert_int_equal(reconciler_follow_config(r->rec, r->config_path, &err), 0);
	r->m = metrics_new();
	assert_non_null(r->m);
	assert_int_equal(instruments_init(&r->ins, r->m, "test"), 0);
	r->board = status_board_new();
	r->log.write = capture;
	r->log.ctx = r;
	r->log.min_level = LOG_INFO;
	r->clock = vclock_new(1700000000LL * CLOCK_NS_PER_S);
	r->ex = executor_new_virtual(r->clock);
	actuator_config_default(&acfg);
	r->act = actuator_new(r->ex, NULL, &r->kops, &acfg, &r->log);
	assert_non_null(r->act);
	*state = r;
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void rm_tree(const char *dir)
{
	assert_int_equal(nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS), 0);
}

static int teardown(void **state)
{
	struct rig *r = *state;

	executor_shutdown(r->ex, clock_now(r->clock));
	actuator_free(r->act);
	reconciler_free(r->rec);
	config_free(r->first);
	status_board_free(r->board);
	metrics_free(r->m);
	vclock_free(r->clock);
	buf_free(&r->log_text);
	buf_free(&r->status_json);
	rm_tree(r->dir);
	free(r);
	return 0;
}

/* A round as the daemon runs it: the pending reload (run_ops does it
 * before the round's snapshot), then the round that reports it. */
static void run_round(struct rig *r)
{
	struct snapshot *s = empty_snapshot();
	struct round_opts ro;
	struct round_stats st;
	struct errbuf err;

	memset(&ro, 0, sizeof(ro));
	ro.ins = &r->ins;
	ro.observe = observe;
	ro.observe_ctx = r;
	buf_free(&r->log_text);
	reconciler_reload_pending(r->rec, s);
	assert_int_equal(round_run_opts(r->rec, r->act, s, &ro, &r->log, &st, &err), 0);
	snapshot_free(s);
}

static double reloads(struct rig *r, const char *outcome)
{
	const char *v[] = {outcome};

	return metric_value(r->ins.policy_reloads, v);
}

static void expect_log(struct rig *r, const char *needle)
{
	if (!r->log_text.data || !strstr(r->log_text.data, needle))
		fail_msg("the log does not contain \"%s\":\n%s", needle,
			 r->log_text.data ? r->log_text.data : "(nothing)");
}

static void expect_status_error(struct rig *r, const char *needle)
{
	const char *e = r->status_json.data ? strstr(r->status_json.data, "\"lastPolicyError\":") : NULL;

	if (!e || strncmp(e, "\"lastPolicyError\":null", 22) == 0 || !strstr(e, needle))
		fail_msg("lastPolicyError does not say \"%s\": %s", needle,
			 r->status_json.data ? r->status_json.data : "(nothing)");
}

static void test_broken_yaml_then_failed_trial_by_data_swap(void **state)
{
	struct rig *r = *state;

	/* a broken YAML arrives: a failed reload, seen everywhere */
	cm_version(r, "cluster: {kubeconfig: /dev/null\nnode_groups: [\n", POLICY);
	reconciler_request_reload(r->rec); /* what the file watcher does */
	run_round(r);
	assert_true(reloads(r, "failed") == 1);
	assert_true(reloads(r, "ok") == 0);
	expect_log(r, "error config reload failed, the config in use stays: ");
	expect_log(r, "config.yaml:");
	expect_status_error(r, "config reload failed, the config in use stays: ");
	expect_status_error(r, "config.yaml:");
	assert_ptr_equal(reconciler_config(r->rec), r->first);

	/* a valid config whose policy fails its trial: failed too */
	cm_version(r, config_text("boom", 10, 1), POLICY);
	reconciler_request_reload(r->rec);
	run_round(r);
	assert_true(reloads(r, "failed") == 2);
	expect_log(r, "policy reload failed");
	expect_log(r, "mode boom");
	expect_status_error(r, "mode boom");
	assert_ptr_equal(reconciler_config(r->rec), r->first);

	/* a round without a reload reports none */
	run_round(r);
	assert_true(reloads(r, "failed") == 2);

	/* a good version: in place, counted ok */
	cm_version(r, config_text("ok", 10, 1), "-- version 4\n" POLICY);
	reconciler_request_reload(r->rec);
	run_round(r);
	assert_true(reloads(r, "ok") == 1);
	expect_log(r, "info policy reloaded from ");
}

static void test_sighup_is_the_same_reload(void **state)
{
	struct rig *r = *state;

	/* nothing changed: a SIGHUP reloads the policy with the config in use */
	reconciler_request_reload(r->rec); /* what the signal thread does */
	run_round(r);
	assert_true(reloads(r, "ok") == 1);
	expect_log(r, "info policy reloaded from ");
	assert_null(strstr(r->log_text.data, "config reloaded"));
	assert_ptr_equal(reconciler_config(r->rec), r->first);
	/* a policy failing its trial through SIGHUP: counted and shown as the file change's */
	cm_version(r, config_text("boom", 10, 1), POLICY);
	reconciler_request_reload(r->rec);
	run_round(r);
	assert_true(reloads(r, "failed") == 1);
	expect_status_error(r, "mode boom");
	/* two requests before one round are one reload */
	cm_version(r, config_text("ok", 10, 1), POLICY);
	reconciler_request_reload(r->rec);
	reconciler_request_reload(r->rec);
	run_round(r);
	run_round(r);
	assert_true(reloads(r, "ok") == 2);
}

static void test_loosened_safety_is_named_and_counted(void **state)
{
	struct rig *r = *state;

	cm_version(r, config_text("ok", 0, 3), POLICY);
	reconciler_request_reload(r->rec);
	run_round(r);
	assert_true(reloads(r, "loosened") == 1);
	assert_true(reloads(r, "ok") == 0);
	expect_log(r, "info config reloaded from ");
	expect_log(r, "warn config reload loosens safety.max_nodes_total: 10 -> 0 (no cap)\n");
	expect_log(r, "warn config reload loosens safety.max_scale_down_per_round: 1 -> 3\n");
	assert_int_equal(reconciler_config(r->rec)->max_nodes_total, 0);
	/* tightened again: no warning, ok */
	cm_version(r, config_text("ok", 5, 1), POLICY);
	reconciler_request_reload(r->rec);
	run_round(r);
	assert_true(reloads(r, "ok") == 1);
	assert_null(strstr(r->log_text.data, "loosens"));
	assert_int_equal(reconciler_config(r->rec)->max_nodes_total, 5);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_broken_yaml_then_failed_trial_by_data_swap),
		T(test_sighup_is_the_same_reload),
		T(test_loosened_safety_is_named_and_counted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
