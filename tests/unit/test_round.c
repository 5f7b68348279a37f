/*
 * Tests for the round's hold on removals while the cluster cache is stale:
 * which actions are removals, that every one of them leaves the plan while
 * the rest stays in order, and that the log says why for the round and for
 * each action held.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include <string.h>

#include "buf.h"
#include "engine/round.h"
#include "log.h"
#include "model.h"
#include "policy/plan.h"

static void cap_write(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	(void)level;
	(void)wall;
	buf_puts(ctx, msg);
	buf_puts(ctx, "\n");
}

static void add(struct plan *p, enum action_type type, const char *node, int effect,
		bool remove)
{
	struct action a;

	memset(&a, 0, sizeof(a));
	a.type = type;
	a.node = (char *)node;
	a.group = type == ACTION_SCALE_UP ? (char *)"workers" : NULL;
	a.count = type == ACTION_SCALE_UP ? 2 : 0;
	a.key = type == ACTION_TAINT || type == ACTION_LABEL ? (char *)"k" : NULL;
	a.value = (type == ACTION_TAINT || type == ACTION_LABEL) && !remove ? (char *)"v" : NULL;
	a.effect = effect;
	a.remove = remove;
	a.reason = (char *)"because";
	a.where = (char *)"policy.lua:1";
	assert_int_equal(plan_add(p, &a), 0);
}

static void test_removals_are_held(void **state)
{
	struct buf log_text = BUF_INIT;
	struct logger log = {cap_write, &log_text, LOG_DEBUG, NULL};
	struct plan p;

	(void)state;
	plan_init(&p);
	add(&p, ACTION_SCALE_UP, NULL, 0, false);
	add(&p, ACTION_CORDON, "n1", 0, false);
	add(&p, ACTION_UNCORDON, "n2", 0, false);
	add(&p, ACTION_DRAIN, "n1", 0, false);
	add(&p, ACTION_LABEL, "n3", 0, false);
	add(&p, ACTION_TAINT, "n4", TAINT_NO_EXECUTE, false);
	add(&p, ACTION_TAINT, "n5", TAINT_NO_SCHEDULE, false);
	add(&p, ACTION_TAINT, "n6", TAINT_NO_EXECUTE, true); /* removing one evicts nothing */
	add(&p, ACTION_DELETE, "n1", 0, false);
	assert_int_equal(plan_message(&p, "hello"), 0);

	assert_int_equal(round_hold_removals(&p, "pods: not in sync for 45 s", &log, 0), 4);
	assert_int_equal(p.n_actions, 5);
	assert_int_equal(p.actions[0].type, ACTION_SCALE_UP);
	assert_int_equal(p.actions[1].type, ACTION_UNCORDON);
	assert_int_equal(p.actions[2].type, ACTION_LABEL);
	assert_string_equal(p.actions[3].node, "n5");
	assert_string_equal(p.actions[4].node, "n6");
	assert_int_equal(p.n_messages, 1); /* the rest of the plan stays */
	assert_non_null(log_text.data);
	assert_non_null(strstr(log_text.data,
			       "no scale-down this round: the cluster cache is stale (pods: not "
			       "in sync for 45 s); 4 removal(s) held back, scale-ups go on\n"));
	assert_non_null(strstr(log_text.data, "held: drain n1: the cache is stale (asked: because)"));
	assert_non_null(strstr(log_text.data, "held: delete n1"));
	assert_non_null(strstr(log_text.data, "held: cordon n1"));
	assert_non_null(strstr(log_text.data, "held: taint n4"));
	assert_null(strstr(log_text.data, "n5"));

	/* a plan without removals is left alone, and nothing is logged */
	buf_free(&log_text);
	assert_int_equal(round_hold_removals(&p, "stale", &log, 0), 0);
	assert_int_equal(p.n_actions, 5);
	assert_null(log_text.data);
	plan_free(&p);
}

/* The JSON sink's lines, one per line. */
static void cap_json(void *ctx, const struct log_record *r)
{
	log_json_format(ctx, r, -1);
	buf_puts(ctx, "\n");
}

static void test_held_lines_carry_fields(void **state)
{
	struct buf out = BUF_INIT;
	struct logger log = {NULL, &out, LOG_DEBUG, cap_json};
	struct plan p;
	cJSON *j;
	char *nl, *line;

	(void)state;
	plan_init(&p);
	add(&p, ACTION_SCALE_UP, NULL, 0, false);
	add(&p, ACTION_DRAIN, "n1", 0, false);
	assert_int_equal(round_hold_removals(&p, "stale", &log, 0), 1);
	assert_non_null(out.data);
	/* the round's warning first, then the held drain */
	nl = strchr(out.data, '\n');
	assert_non_null(nl);
	line = nl + 1;
	nl = strchr(line, '\n');
	assert_non_null(nl);
	*nl = '\0';
	j = cJSON_Parse(line);
	assert_non_null(j);
	assert_string_equal(cJSON_GetObjectItem(j, "action")->valuestring, "drain");
	assert_string_equal(cJSON_GetObjectItem(j, "node")->valuestring, "n1");
	assert_string_equal(cJSON_GetObjectItem(j, "reason")->valuestring, "because");
	assert_string_equal(cJSON_GetObjectItem(j, "where")->valuestring, "policy.lua:1");
	assert_string_equal(cJSON_GetObjectItem(j, "outcome")->valuestring, "held");
	assert_string_equal(cJSON_GetObjectItem(j, "msg")->valuestring,
			    "held: drain n1: the cache is stale (asked: because)");
	cJSON_Delete(j);
	buf_free(&out);
	plan_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_removals_are_held),
		cmocka_unit_test(test_held_lines_carry_fields),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
