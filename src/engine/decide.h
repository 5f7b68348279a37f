/*
 * decide: one decision, the engine's pure core — a snapshot and a loaded
 * policy in; the checked plan, the rejected actions with why, and a word
 * on every node out — and its rendering as text or JSON. No I/O except
 * what the caller does with the rendered text.
 */
#ifndef LUASCALE_DECIDE_H
#define LUASCALE_DECIDE_H

#include <stdbool.h>
#include <stdio.h>

#include "buf.h"
#include "config.h"
#include "engine/safety.h"
#include "model.h"
#include "policy/host.h"
#include "sched.h"

struct node_report {
	const char *name;  /* borrowed from the snapshot */
	const char *group; /* NULL when unmanaged */
	double cpu;        /* requested / allocatable */
	double memory;
	bool removable;
	char *why;
};

struct decision {
	bool ok;                   /* false: the policy failed; no actions */
	char error[ERRBUF_MAX];    /* why it failed */
	struct verdict verdict;    /* accepted and rejected actions */
	struct node_report *nodes; /* one per snapshot node when asked for */
	size_t n_nodes;
	struct policy_stats stats;
	double safety_ms;
};

struct decide_opts {
	const struct safety_limits *limits;
	const struct drain_opts *drain;
	bool node_reports; /* compute nodes[] (costs a drain simulation per node) */
};

/* Fills the safety limits and drain options a config asks for (borrowing
 * the config's protected-pod selector; an empty one protects nothing). */
void decide_limits(const struct config *c, struct safety_limits *lim,
		   struct drain_opts *d);

/*
 * Runs the policy on 's' and checks the plan. A policy failure is not an
 * error of this function: it returns 0 with out->ok false and the message
 * in out->error. Returns -1 only on out of memory. Free with decision_free.
 */
int engine_decide(struct policy *pol, const struct snapshot *s,
		  const struct decide_opts *o, struct decision *out,
		  struct errbuf *err);

void decision_free(struct decision *d);

/* {"actions":[...],"rejected":[{"action":{...},"why":"..."}],"nodes":[...]}
 * plus "error" when the policy failed. */
void decision_to_json(const struct decision *d, struct buf *b);

/* The same for a person, aligned columns. Names, reasons and messages are
 * escaped as the log escapes them (log_escape): one line per entry, no
 * terminal escapes. */
void decision_to_text(const struct decision *d, const struct snapshot *s,
		      struct buf *b);

#endif
