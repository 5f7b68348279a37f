/*
 * host: a loaded policy — its sandbox, its module table, its parameters and
 * its store — and one reconcile call: view in, plan out. A policy that
 * fails in any way yields no actions and a message naming file:line.
 * Safety checks of the plan are engine/safety.c's.
 */
#ifndef LUASCALE_HOST_H
#define LUASCALE_HOST_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "errbuf.h"
#include "model.h"
#include "policy/plan.h"
#include "policy/sandbox.h"
#include "sched.h"

struct policy;

struct policy_stats {
	double view_ms;      /* building the cluster view */
	double call_ms;      /* running reconcile() */
	double decode_ms;    /* reading the plan back */
	int64_t instructions;
	size_t memory;       /* Lua heap after the call, bytes */
	size_t memory_peak;  /* the largest Lua heap during the call, bytes */
};

/*
 * Loads the policy file at 'path' in a new sandbox ('lib_dir' holds
 * the luascale Lua modules; NULL means the built-in default). The file must return a
 * table with a reconcile function; its 'params' table holds defaults that
 * 'params' (a PARAM_MAP from the config, may be NULL) override. A param the
 * policy does not declare, or of another type than its default, is an
 * error. Returns NULL with a message on failure.
 */
struct policy *policy_load(const char *path, const char *lib_dir,
			   const struct sandbox_limits *lim,
			   const struct param *params, struct errbuf *err);

void policy_free(struct policy *p);

/*
 * Whether the next reconciles' per-node notes (plan:explain) are read:
 * when not (the daemon), the luascale library drops them unbuilt and the
 * plan carries none. On by default (decide, the testing kit).
 */
void policy_set_notes(struct policy *p, bool wanted);

/* The path the policy was loaded from. */
const char *policy_path(const struct policy *p);

/*
 * Pushes onto the policy's Lua state two values: the table reconcile()
 * gets as params (its defaults merged with the config's), then the
 * policy's own params table (nil when it declares none). Returns that
 * state; the caller reads them with raw access only (no policy code runs)
 * and pops both.
 */
struct lua_State *policy_push_params(struct policy *p);

/*
 * Runs reconcile(cluster, params, store) on snapshot 's'. On success fills
 * 'out' (initialised here; free with plan_free) and returns 0. On any
 * failure (error, budget, memory, malformed plan) 'out' is empty and -1 is
 * returned with "file:line: message". The store persists across calls.
 * 'dopts' is what cluster:drainable() uses. 'st' may be NULL.
 */
int policy_reconcile(struct policy *p, const struct snapshot *s,
		     const struct drain_opts *dopts, struct plan *out,
		     struct policy_stats *st, struct errbuf *err);

/*
 * Hot reload: loads 'path' in a fresh sandbox exactly like policy_load(),
 * carries the store of 'cur' over (a deep copy of its data; what cannot be
 * copied is listed in 'dropped', may be NULL), and, when 's' is not NULL,
 * runs one trial reconcile on 's' whose plan is thrown away and whose
 * writes to the store are undone. Returns the new policy for the caller to
 * swap in between two reconciles, or NULL with why ("cannot load ...",
 * "the new policy failed its trial run: ..."). 'cur' is not changed either way and stays
 * usable.
 */
struct policy *policy_reload(struct policy *cur, const char *path,
			     const char *lib_dir, const struct sandbox_limits *lim,
			     const struct param *params, const struct snapshot *s,
			     const struct drain_opts *dopts, char *dropped,
			     size_t dropped_len, struct errbuf *err);

/* The directory of the built-in Lua library. */
const char *policy_default_lib_dir(void);

#endif
