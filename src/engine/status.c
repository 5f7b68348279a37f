/*
 * status: the board of what happened last, and its two renderings. The
 * health rule follows the Cluster Autoscaler's (at most 3 unready nodes,
 * or at most 45%, is healthy).
 */
#include "engine/status.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

#define UNREADY_OK_COUNT 3
#define UNREADY_OK_PERCENT 45

struct last_up {
	int64_t at; /* 0: never */
	char group[128];
	int64_t count;
	char reason[512];
	char where[128];
};

struct last_down {
	int64_t at;
	char node[256];
	char action[16];
	char reason[512];
	char where[128];
};

struct status_board {
	struct last_up up;
	struct last_down down;
	int64_t error_at;
	char error[1024];
	bool error_reload;     /* the error is a refused reload (else a failed round) */
	int64_t resolved_at;   /* when it was over (a clean round, a reload that took), 0: not yet */
	int64_t round_at;
	bool has_nodes;        /* 'nodes' was given */
	struct explain_summary nodes;
};

struct status_board *status_board_new(void)
{
	return calloc(1, sizeof(struct status_board));
}

void status_board_free(struct status_board *b)
{
	free(b);
}

static void copy(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

void status_board_round(struct status_board *b, const struct snapshot *s,
			const struct round_view *v)
{
	size_t i;

	b->round_at = s->now;
	for (i = 0; v->accepted && i < v->accepted->n_actions; i++) {
		const struct action *a = &v->accepted->actions[i];

		if (a->type == ACTION_SCALE_UP) {
			b->up.at = s->now;
			copy(b->up.group, sizeof(b->up.group), a->group);
			b->up.count = a->count;
			copy(b->up.reason, sizeof(b->up.reason), a->reason);
			copy(b->up.where, sizeof(b->up.where), a->where);
		} else if (a->type == ACTION_DRAIN || a->type == ACTION_DELETE ||
			   a->type == ACTION_CORDON || a->type == ACTION_REPLACE) {
			b->down.at = s->now;
			copy(b->down.node, sizeof(b->down.node), a->node);
			copy(b->down.action, sizeof(b->down.action), action_type_str(a->type));
			copy(b->down.reason, sizeof(b->down.reason), a->reason);
			copy(b->down.where, sizeof(b->down.where), a->where);
		}
	}
	/* an error stays shown after it is over, stamped with when it ended:
	 * a failed round ends with a clean one, a refused reload with one
	 * that took */
	if (b->error_at && !b->resolved_at && !v->policy_error &&
	    (b->error_reload ? v->reload && v->reload->ok : v->accepted != NULL))
		b->resolved_at = s->now;
	if (v->policy_error) {
		b->error_at = s->now;
		b->error_reload = false;
		b->resolved_at = 0;
		copy(b->error, sizeof(b->error), v->policy_error);
	}
	if (v->reload && !v->reload->ok) {
		b->error_at = s->now;
		b->error_reload = true;
		b->resolved_at = 0;
		snprintf(b->error, sizeof(b->error), "%s: %s",
			 v->reload->config_failed ? "config reload failed, the config in use stays"
			 : v->reload->config_changed ? "reload failed, the config and policy in use stay"
			 : "reload failed, the policy in place stays",
			 v->reload->message);
	}
}

void status_board_nodes(struct status_board *b, const struct explain_summary *sum)
{
	b->nodes = *sum;
	b->has_nodes = true;
}

struct counts {
	int registered, ready;
};

static bool unhealthy(const struct counts *c)
{
	int unready = c->registered - c->ready;

	return unready > UNREADY_OK_COUNT && unready * 100 > c->registered * UNREADY_OK_PERCENT;
}

static void time_str(int64_t t, char *out, size_t len)
{
	model_format_time(t, out, len);
}

static void json_time_or_null(struct buf *j, int64_t t)
{
	char ts[32];

	if (!t) {
		buf_puts(j, "null");
		return;
	}
	time_str(t, ts, sizeof(ts));
	buf_json_string(j, ts);
}

/* The text lines of the last scale-up and scale-down. */
static void text_last(const struct status_board *b, struct buf *t)
{
	char ts[32];

	if (b->up.at) {
		time_str(b->up.at, ts, sizeof(ts));
		buf_printf(t, "  ScaleUp:      %s: %s +%lld: %s\n", ts, b->up.group,
			   (long long)b->up.count, b->up.reason);
	} else {
		buf_puts(t, "  ScaleUp:      none yet\n");
	}
	if (b->down.at) {
		time_str(b->down.at, ts, sizeof(ts));
		buf_printf(t, "  ScaleDown:    %s: %s %s: %s\n", ts, b->down.action, b->down.node,
			   b->down.reason);
	} else {
		buf_puts(t, "  ScaleDown:    none yet\n");
	}
	if (b->error_at) {
		time_str(b->error_at, ts, sizeof(ts));
		buf_printf(t, "  PolicyError:  %s: %s", ts, b->error);
		if (b->resolved_at) {
			time_str(b->resolved_at, ts, sizeof(ts));
			buf_printf(t, " (over since %s: %s)", ts,
				   b->error_reload ? "a reload took" : "the policy ran cleanly");
		}
		buf_puts(t, "\n");
	} else {
		buf_puts(t, "  PolicyError:  none\n");
	}
}

/* An interval in whole seconds as a person writes it: "1m", "90s", "2h". */
static void interval_str(int64_t ms, char *out, size_t len)
{
	int64_t sec = ms / 1000;

	if (ms % 1000)
		snprintf(out, len, "%lldms", (long long)ms);
	else if (sec % 3600 == 0)
		snprintf(out, len, "%lldh", (long long)(sec / 3600));
	else if (sec % 60 == 0)
		snprintf(out, len, "%lldm", (long long)(sec / 60));
	else
		snprintf(out, len, "%llds", (long long)sec);
}

/* The text's "Nodes:" lines. Reasons and names come from the policy and
 * the cluster: escaped as the log escapes them, one line each. */
static void text_nodes(const struct explain_summary *n, struct buf *t)
{
	char ts[32], every[32];
	size_t k;

	interval_str(n->interval_ms, every, sizeof(every));
	if (!n->interval_ms) {
		buf_puts(t, "  Nodes:        not explained (intervals.explain is 0)\n");
		return;
	}
	if (!n->built_at) {
		buf_printf(t, "  Nodes:        not explained yet (every %s)\n", every);
		return;
	}
	time_str(n->built_at, ts, sizeof(ts));
	buf_printf(t, "  Nodes:        %zu explained at %s (every %s): kept=%zu candidate=%zu "
		   "removing=%zu\n", n->nodes, ts, every, n->by_state[EXPLAIN_KEPT],
		   n->by_state[EXPLAIN_CANDIDATE], n->by_state[EXPLAIN_REMOVING]);
	for (k = 0; k < n->n_top; k++) {
		const struct explain_reason *r = &n->top[k];

		buf_printf(t, "    %zu %s: ", r->count, explain_state_str(r->state));
		log_buf_escaped(t, r->reason, strlen(r->reason));
		buf_puts(t, " (e.g. ");
		log_buf_escaped(t, r->example, strlen(r->example));
		buf_puts(t, ")\n");
	}
	if (n->more_reasons)
		buf_printf(t, "    (%zu more reasons: every node at /debug/nodes)\n", n->more_reasons);
}

static void json_nodes(const struct explain_summary *n, struct buf *j)
{
	size_t k;

	buf_printf(j, ",\"nodes\":{\"intervalSeconds\":%.15g,\"time\":",
		   (double)n->interval_ms / 1000);
	json_time_or_null(j, n->built_at);
	buf_printf(j, ",\"total\":%zu", n->nodes);
	for (k = 0; k < EXPLAIN_STATES; k++)
		buf_printf(j, ",\"%s\":%zu", explain_state_str((enum explain_state)k), n->by_state[k]);
	buf_puts(j, ",\"reasons\":[");
	for (k = 0; k < n->n_top; k++) {
		const struct explain_reason *r = &n->top[k];

		buf_printf(j, "%s{\"state\":\"%s\",\"count\":%zu,\"reason\":", k ? "," : "",
			   explain_state_str(r->state), r->count);
		buf_json_string(j, r->reason);
		buf_puts(j, ",\"example\":");
		buf_json_string(j, r->example);
		buf_puts(j, "}");
	}
	buf_printf(j, "],\"moreReasons\":%zu}", n->more_reasons);
}

static void json_last(const struct status_board *b, struct buf *j)
{
	buf_puts(j, ",\"lastScaleUp\":");
	if (b->up.at) {
		buf_puts(j, "{\"time\":");
		json_time_or_null(j, b->up.at);
		buf_puts(j, ",\"group\":");
		buf_json_string(j, b->up.group);
		buf_printf(j, ",\"count\":%lld,\"reason\":", (long long)b->up.count);
		buf_json_string(j, b->up.reason);
		buf_puts(j, ",\"where\":");
		buf_json_string(j, b->up.where);
		buf_puts(j, "}");
	} else {
		buf_puts(j, "null");
	}
	buf_puts(j, ",\"lastScaleDown\":");
	if (b->down.at) {
		buf_puts(j, "{\"time\":");
		json_time_or_null(j, b->down.at);
		buf_puts(j, ",\"action\":");
		buf_json_string(j, b->down.action);
		buf_puts(j, ",\"node\":");
		buf_json_string(j, b->down.node);
		buf_puts(j, ",\"reason\":");
		buf_json_string(j, b->down.reason);
		buf_puts(j, ",\"where\":");
		buf_json_string(j, b->down.where);
		buf_puts(j, "}");
	} else {
		buf_puts(j, "null");
	}
	buf_puts(j, ",\"lastPolicyError\":");
	if (b->error_at) {
		buf_puts(j, "{\"time\":");
		json_time_or_null(j, b->error_at);
		buf_puts(j, ",\"message\":");
		buf_json_string(j, b->error);
		buf_puts(j, ",\"resolvedAt\":");
		if (b->resolved_at)
			json_time_or_null(j, b->resolved_at);
		else
			buf_puts(j, "null");
		buf_puts(j, "}");
	} else {
		buf_puts(j, "null");
	}
}

int status_board_render(const struct status_board *b, const struct snapshot *s,
			struct buf *text, struct buf *json)
{
	struct counts all = {0, 0}, *per = calloc(s->n_groups + 1, sizeof(*per));
	size_t i, unschedulable = 0;
	char ts[32];

	if (!per)
		return -1;
	for (i = 0; i < s->n_nodes; i++) {
		const struct node *n = &s->nodes[i];

		all.registered++;
		all.ready += n->ready;
		if (n->group >= 0 && (size_t)n->group < s->n_groups) {
			per[n->group].registered++;
			per[n->group].ready += n->ready;
		}
	}
	for (i = 0; i < s->n_pending; i++)
		unschedulable += (s->pods[s->pending[i]].flags & POD_UNSCHEDULABLE) != 0;
	time_str(s->now, ts, sizeof(ts));

	buf_printf(text, "luascale status at %s:\nCluster-wide:\n", ts);
	buf_printf(text, "  Health:       %s (ready=%d unready=%d registered=%d)\n",
		   unhealthy(&all) ? "Unhealthy" : "Healthy", all.ready, all.registered - all.ready,
		   all.registered);
	buf_printf(text, "  Pending:      %zu pod(s), %zu unschedulable\n", s->n_pending, unschedulable);
	text_last(b, text);
	if (b->has_nodes)
		text_nodes(&b->nodes, text);
	buf_puts(text, "\nNodeGroups:\n");

	buf_puts(json, "{\"time\":");
	buf_json_string(json, ts);
	buf_printf(json, ",\"cluster\":{\"health\":\"%s\",\"registered\":%d,\"ready\":%d,"
		   "\"unready\":%d,\"pendingPods\":%zu,\"unschedulablePods\":%zu}",
		   unhealthy(&all) ? "Unhealthy" : "Healthy", all.registered, all.ready,
		   all.registered - all.ready, s->n_pending, unschedulable);
	json_last(b, json);
	if (b->has_nodes)
		json_nodes(&b->nodes, json);
	buf_puts(json, ",\"groups\":[");
	for (i = 0; i < s->n_groups; i++) {
		const struct node_group *g = &s->groups[i];
		bool backoff = g->backoff_until > s->now;
		const char *health = backoff ? "Backoff" : unhealthy(&per[i]) ? "Unhealthy" : "Healthy";
		int upcoming = g->target > g->current ? g->target - g->current : 0;

		buf_printf(text, "  Name:         %s\n", g->name);
		buf_printf(text, "  Health:       %s (ready=%d unready=%d registered=%d upcoming=%d "
			   "target=%d min=%d max=%d)\n", health, per[i].ready,
			   per[i].registered - per[i].ready, per[i].registered, upcoming, g->target,
			   g->min, g->max);
		if (backoff) {
			char until[32];

			time_str(g->backoff_until, until, sizeof(until));
			buf_printf(text, "  Backoff:      until %s: %s\n", until, g->backoff_reason);
		} else {
			buf_puts(text, "  Backoff:      none\n");
		}
		buf_puts(text, "\n");

		buf_puts(json, i ? ",{\"name\":" : "{\"name\":");
		buf_json_string(json, g->name);
		buf_printf(json, ",\"health\":\"%s\",\"min\":%d,\"max\":%d,\"target\":%d,"
			   "\"registered\":%d,\"ready\":%d,\"upcoming\":%d,\"removing\":%d,"
			   "\"backoffUntil\":", health, g->min, g->max, g->target, per[i].registered,
			   per[i].ready, upcoming, g->removing);
		json_time_or_null(json, backoff ? g->backoff_until : 0);
		buf_puts(json, ",\"backoffReason\":");
		buf_json_string(json, backoff ? g->backoff_reason : "");
		buf_puts(json, "}");
	}
	buf_puts(json, "]}");
	free(per);
	return text->oom || json->oom ? -1 : 0;
}
