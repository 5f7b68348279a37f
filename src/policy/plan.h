/*
 * plan: what a policy asks for — scale-ups and node actions, each with a
 * reason and the policy line that asked — and its notes on nodes. Plain C
 * data owned by the plan; decoding from Lua is in plan_decode.c, checking
 * in engine/safety.c. The size limits below are the decoder's.
 */
#ifndef LUASCALE_PLAN_H
#define LUASCALE_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct buf;

/* What one decoded plan may hold. A plan over any of these is malformed. */
#define PLAN_MAX_ACTIONS 100000          /* hard cap; safety.max_actions_per_round is lower */
#define PLAN_MAX_NOTES 100000
#define PLAN_MAX_BYTES (32 * 1024 * 1024) /* all strings of a plan together */
#define PLAN_MAX_REASON 4096             /* an action's reason, a note's why */
#define PLAN_MAX_WHERE 4096              /* "file:line" */
#define PLAN_MAX_ANNOTATION 65536        /* an annotation value */
#define PLAN_MAX_GROUP 63                /* a node group name (a label value) */
#define PLAN_MAX_INSTANCE_TYPES 64       /* a scale_up's instance_types */
#define PLAN_MAX_INSTANCE_TYPE 63        /* one instance type's name */
/* Messages (plan:log) are diagnostics: beyond these they are cut short or
 * dropped, with a word saying so, rather than failing the plan. */
#define PLAN_MAX_MESSAGES 1000
#define PLAN_MAX_MESSAGE 4096

enum action_type {
	ACTION_SCALE_UP,
	ACTION_CORDON,
	ACTION_UNCORDON,
	ACTION_DRAIN,
	ACTION_DELETE,
	ACTION_LABEL,
	ACTION_TAINT,
	ACTION_ANNOTATE,
	ACTION_REPLACE,
};

#define ACTION_TYPE_COUNT 9

struct action {
	enum action_type type;
	char *group;   /* scale_up; replace: the group of the new node */
	char *node;    /* every other action; replace: the node replaced */
	int64_t count; /* scale_up (replace: 1) */
	char *key;     /* label, taint, annotate */
	char *value;   /* label, taint, annotate; NULL with remove */
	int effect;    /* taint: enum taint_effect */
	bool remove;   /* label, taint, annotate: remove the key */
	char *reason;  /* never NULL */
	char *where;   /* "policy.lua:42", "" when unknown */
	char **instance_types;   /* scale_up, replace: the instance types it accepts, each one of
				  * the group's; NULL: any the group launches */
	size_t n_instance_types;
	char *disruption;        /* cordon, drain, delete, taint, replace: why the node is disrupted,
				  * as the disruption budgets count it ("empty",
				  * "underutilized", "drifted", "expired", "interrupted");
				  * NULL: not said (the safety check tells empty from
				  * underutilized) */
	char *budget;            /* an accepted disruption: the disruption budget it was
				  * held to ("nodes 10% for underutilized: 3 of 30
				  * nodes at once"), for the Events; NULL: none applies */
};

/* Is 's' a disruption reason a plan may name? */
bool plan_disruption_valid(const char *s);

/* A policy's word on a node: is it a scale-down candidate, and why. */
struct node_note {
	char *node;
	int candidate; /* 1 yes, 0 no */
	char *why;
};

struct plan {
	struct action *actions;
	size_t n_actions, cap_actions;
	struct node_note *notes;
	size_t n_notes, cap_notes;
	bool notes_sorted; /* set by plan_sort_notes(): lookups use bsearch */
	char **messages;   /* what the policy logged (plan:log), in order */
	size_t n_messages;
};

void plan_init(struct plan *p);
void plan_free(struct plan *p);

/* Appends a deep copy of 'a'. 0 or -1 (OOM). */
int plan_add(struct plan *p, const struct action *a);

/* Appends a copy of a message the policy logged. 0 or -1 (OOM). */
int plan_message(struct plan *p, const char *text);

/* Appends a note (copies strings). Call plan_sort_notes() when done. */
int plan_note(struct plan *p, const char *node, int candidate, const char *why);

/* Sorts the notes by node name; of several notes for one node the last
 * added wins. */
void plan_sort_notes(struct plan *p);

/* The note for 'node' or NULL (bsearch once sorted, else a scan). */
const struct node_note *plan_find_note(const struct plan *p, const char *node);

/* Deep copy / free of one action. action_copy returns 0 or -1. */
int action_copy(struct action *dst, const struct action *src);
void action_free(struct action *a);

/* Whether 'a' removes its node's pods: a drain, a delete, a replace (once
 * its new node is Ready), or setting a NoExecute taint (taint-based
 * eviction, outside the Eviction API). What the per-round removal cap and
 * the PDB checks count. */
bool action_evicts(const struct action *a);

const char *action_type_str(enum action_type t);
/* Returns 0 and sets *out, or -1 for an unknown name. */
int action_type_parse(const char *s, enum action_type *out);

/* One-line summary: "scale_up workers +2", "taint node-1 k=v:NoSchedule". */
void action_describe(const struct action *a, char *out, size_t len);

/* The fields a structured log line of action 'a' carries: action, node
 * or group, count (scale_up, written into 'count', 24 bytes), key, reason
 * and where. Borrowed from 'a' (and 'count'). Returns how many were
 * written into 'f' (at most ACTION_LOG_FIELDS). */
#define ACTION_LOG_FIELDS 7
struct log_field;
size_t action_log_fields(const struct action *a, struct log_field *f, char count[24]);

/* Appends the action as a JSON object (type, group/node, count, key, value,
 * effect, reason, where). */
void action_to_json(const struct action *a, struct buf *b);

#endif
