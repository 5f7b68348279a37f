/*
 * status: what the status ConfigMap says — cluster and group health, sizes,
 * backoff, the last scale-up and scale-down, the last policy error, the
 * node explanations' summary — kept from round to round, rendered as text
 * and JSON. Pure: no I/O.
 */
#ifndef LUASCALE_STATUS_H
#define LUASCALE_STATUS_H

#include <stdint.h>

#include "buf.h"
#include "engine/explain.h"
#include "engine/round.h"
#include "model.h"

/* The ConfigMap's keys: people's text, and the same as JSON. */
#define STATUS_KEY_TEXT "status"
#define STATUS_KEY_JSON "status.json"

struct status_board;

/* A board with nothing seen yet. NULL when out of memory. */
struct status_board *status_board_new(void);
void status_board_free(struct status_board *b);

/* Takes in one round: the last scale-up (a scale_up accepted) and
 * scale-down (a drain, delete or cordon accepted), a policy failure or a
 * failed reload as the last policy error. */
void status_board_round(struct status_board *b, const struct snapshot *s,
			const struct round_view *v);

/*
 * The node explanations' summary (copied; explainer_summary), shown from
 * now on: the text's "Nodes:" lines and the JSON's "nodes" object, with
 * the counts by state and the most common reasons. Before it is first
 * given, neither is rendered.
 */
void status_board_nodes(struct status_board *b, const struct explain_summary *sum);

/*
 * Renders the status for snapshot 's' (its groups, nodes and pending pods)
 * as of s->now with what the board has seen: the text into 'text', the
 * JSON object into 'json' (both appended). A cluster or group is
 * "Unhealthy" when more than 3 of its registered nodes and more than 45%
 * of them are not Ready, a group "Backoff" while launches are refused,
 * else "Healthy". Returns 0, or -1 when out of memory.
 */
int status_board_render(const struct status_board *b, const struct snapshot *s,
			struct buf *text, struct buf *json);

#endif
