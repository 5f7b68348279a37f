/*
 * budget: disruption budgets, the arithmetic. How many nodes of a group
 * may be disrupted at once for a reason, from a list of budgets (a count
 * or a percentage, the reasons they cover, an optional cron schedule with
 * a duration, evaluated in UTC). It parses the budgets' fields and answers
 * questions about a given time; it neither reads the clock nor counts the
 * nodes being disrupted (the safety check does both).
 */
#ifndef LUASCALE_ENGINE_BUDGET_H
#define LUASCALE_ENGINE_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"

/* Why a node is disrupted. Budgets count against the reason of each action. */
enum disruption_reason {
	DISRUPTION_EMPTY,          /* no pod but DaemonSets' left */
	DISRUPTION_UNDERUTILIZED,  /* its pods fit elsewhere: consolidation */
	DISRUPTION_DRIFTED,        /* no longer what its group's template says */
	DISRUPTION_EXPIRED,        /* older than its group allows */
	DISRUPTION_INTERRUPTED,    /* the cloud takes it (spot, maintenance): never budgeted */
	DISRUPTION_N_REASONS
};

/* A set of reasons: bit (1u << reason). */
#define DISRUPTION_REASON_BIT(r) (1u << (unsigned)(r))
#define DISRUPTION_REASONS_ALL ((1u << DISRUPTION_N_REASONS) - 1u)

/* "empty", "underutilized", "drifted", "expired", "interrupted"; "?" when out of range. */
const char *disruption_reason_name(enum disruption_reason r);

/*
 * The reason named 'name', case-insensitively ("drifted" or Karpenter's
 * "Drifted"). Returns 0 and sets *out, or -1 when no reason has that name
 * ("any" is not a reason: budget_parse_reason() reads it).
 */
int disruption_reason_parse(const char *name, enum disruption_reason *out);

/* No limit: what budget_allowed() returns when no active budget covers a reason. */
#define BUDGET_UNLIMITED INT64_MAX

/* The most budgets in one list, and the most nodes a count may name. */
#define BUDGET_MAX_PER_LIST 50
#define BUDGET_MAX_NODES 1000000
/* The longest duration: a window of a year (a leap year) after a fire. */
#define BUDGET_MAX_DURATION_S (366LL * 24 * 3600)
/* The longest schedule text kept. */
#define BUDGET_SCHEDULE_MAX 128

/*
 * A 5-field cron schedule, one bit per value that fires. dom_star and
 * dow_star say the field was written "*" or "?" (without a step above 1):
 * when both day fields are restricted a day matches either of them,
 * otherwise both (cron's rule, as the Go cron parser Karpenter uses reads it).
 */
struct budget_cron {
	uint64_t minutes;        /* bits 0-59 */
	uint32_t hours;          /* bits 0-23 */
	uint32_t doms;           /* bits 1-31 */
	uint16_t months;         /* bits 1-12 */
	uint8_t dows;            /* bits 0-6, 0 = Sunday */
	bool dom_star, dow_star;
};

/* One budget. Zero-initialized plus nodes is "always active, every reason". */
struct disruption_budget {
	int64_t nodes;           /* a count (0-BUDGET_MAX_NODES), or a percentage 0-100 */
	bool percent;            /* nodes is a percentage of the group's nodes */
	unsigned reasons;        /* DISRUPTION_REASON_BIT set; 0 means every reason */
	bool scheduled;          /* has a schedule (and then a duration); else always active */
	struct budget_cron cron;
	int64_t duration_s;      /* seconds, 60 to BUDGET_MAX_DURATION_S, minutes whole */
	char schedule[BUDGET_SCHEDULE_MAX]; /* as written, for messages ("" when none) */
};

/* The budget that applies when none is configured: nodes: 10%, every reason. */
extern const struct disruption_budget budget_default;

/*
 * Parses a budget's nodes: a count "5" (0 to BUDGET_MAX_NODES) or a
 * percentage "20%" (0% to 100%), digits only. Sets b->nodes and b->percent.
 * Returns 0, or -1 with a message (the text quoted, what is wrong) in 'err'.
 */
int budget_parse_nodes(const char *text, struct disruption_budget *b, struct errbuf *err);

/*
 * Parses a budget's schedule: five fields (minute hour day-of-month month
 * day-of-week) with "*", "?", lists, ranges, steps ("9-17/2"; "5/10" is
 * "5-max/10"; a star with a step, every 15 minutes) and names (jan-dec,
 * sun-sat, any case), or one of @yearly, @annually, @monthly, @weekly,
 * @daily, @midnight, @hourly (as written, lower case). Day of week is 0-6
 * (0 is Sunday). A schedule that never fires (a day of the month none of
 * its months has, "0 0 30 2 *") is refused. Sets b->cron, b->schedule and
 * b->scheduled (the duration is budget_parse_duration()'s).
 * Returns 0, or -1 with a message in 'err' ("\"0 9 * * mon-fri x\": 6
 * fields, want 5").
 */
int budget_parse_schedule(const char *text, struct disruption_budget *b, struct errbuf *err);

/*
 * Parses a budget's duration as Karpenter writes it: hours and minutes,
 * "8h", "30m", "1h30m", optionally ending in "0s" ("8h0m0s"), more than
 * zero and at most BUDGET_MAX_DURATION_S (8784h). Sets b->duration_s.
 * Returns 0, or -1 with a message in 'err'.
 */
int budget_parse_duration(const char *text, struct disruption_budget *b, struct errbuf *err);

/*
 * Adds the reason named 'name' to b->reasons: a reason name, or "any"
 * (every reason). "interrupted" is refused: interruptions are never
 * budgeted. Returns 0, or -1 with a message in 'err'.
 */
int budget_parse_reason(const char *name, struct disruption_budget *b, struct errbuf *err);

/* A budget as written, field by field; NULL for a field left out. */
struct budget_spec {
	const char *nodes;               /* required */
	const char *const *reasons;      /* n_reasons names; NULL (left out): every reason */
	size_t n_reasons;
	const char *schedule;            /* schedule and duration: both or neither */
	const char *duration;
};

/*
 * Parses a whole budget with the functions above. Returns 0 (*out filled),
 * or -1 with "FIELD: message" in 'err' ("schedule: \"...\": 6 fields,
 * want 5", "duration: is required with schedule").
 */
int budget_parse(const struct budget_spec *spec, struct disruption_budget *out,
		 struct errbuf *err);

/*
 * Whether 'b' is active at 'now_unix' (seconds, UTC): always when it has
 * no schedule; otherwise when the schedule fired at some whole minute t
 * with t <= now < t + duration (Karpenter's rule: a fire within the last
 * duration). The search walks forward from now - duration by months, days,
 * hours and minutes that match, so it costs at most a few hundred steps
 * whatever the duration.
 */
bool budget_active(const struct disruption_budget *b, int64_t now_unix);

/*
 * The nodes budget 'b' allows out of 'total_nodes' when active: the
 * count, or the percentage of total_nodes rounded up (ceil(p * total /
 * 100), as Kubernetes rounds a PDB's maxUnavailable), so 10% of 1 to 10
 * nodes is 1 and 10% of 0 is 0. A negative total counts as 0.
 */
int64_t budget_nodes(const struct disruption_budget *b, int64_t total_nodes);

/*
 * How many nodes of a group of 'total_nodes' may be disrupted at once for
 * reason 'r' at 'now_unix', under the list 'budgets' (n of them, may be 0):
 * the smallest budget_nodes() over the budgets active at now whose reasons
 * include r (reasons 0 covers every reason). BUDGET_UNLIMITED when no
 * active budget covers r, when n is 0 (a list written empty), and always
 * for DISRUPTION_INTERRUPTED. The list a group has when none is written is
 * budget_default (the config fills it in, not this function).
 * 'which', when not NULL, is set to the index of the budget that gave the
 * result, or to n when the result is BUDGET_UNLIMITED.
 */
int64_t budget_allowed(const struct disruption_budget *budgets, size_t n,
		       enum disruption_reason r, int64_t total_nodes, int64_t now_unix);
int64_t budget_allowed_which(const struct disruption_budget *budgets, size_t n,
			     enum disruption_reason r, int64_t total_nodes, int64_t now_unix,
			     size_t *which);

/*
 * Writes a budget for a log line: "nodes 10%", "nodes 0 for underutilized,
 * empty, schedule \"0 9 * * mon-fri\" for 8h". Returns 'out'.
 */
const char *budget_describe(const struct disruption_budget *b, char *out, size_t len);

#endif
