/*
 * sim/world/scenario_parse: the scenario's walk over its ytree (sw_*), for
 * scenario.c and the clouds' sections (src/sim/clouds/<k>_kind.c): the
 * position and path every message names, typed getters that pop the path
 * again, lists and the node groups. Not for anything else.
 */
#ifndef LUASCALE_SIM_SCENARIO_PARSE_H
#define LUASCALE_SIM_SCENARIO_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "errbuf.h"
#include "model.h"
#include "sim/world/scenario.h"
#include "ytree.h"

/* One walk of a scenario's text. */
struct scenario_walk {
	struct sim_scenario *sc; /* what is being filled */
	struct arena *a;         /* sc's */
	const char *src;         /* the source's name, for messages */
	struct errbuf *err;
	struct ytree_path path;  /* the key being read: "aws.groups.workers" */
	int64_t day_start;       /* midnight UTC of the start's day */
	bool flavoured;          /* a cloud's section places instances in zones */
};

/* Sets the error at n, "src:line:col: path: message"; returns -1. */
int sw_fail(struct scenario_walk *x, const struct ytree_node *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Sets "src: out of memory"; returns -1. */
int sw_oom(struct scenario_walk *x);

/* n is of kind k, else -1 with "expected a mapping, got a list". */
int sw_expect(struct scenario_walk *x, const struct ytree_node *n, enum ytree_kind k);

/* Mapping m has only 'keys' (NULL-terminated), else -1 naming the unknown one. */
int sw_check_keys(struct scenario_walk *x, const struct ytree_node *m, const char *const *keys);

/*
 * m's 'key' (NULL when absent or null), with the key pushed on the path:
 * pop it with ytree_path_pop(&x->path, *old).
 */
const struct ytree_node *sw_field(struct scenario_walk *x, const struct ytree_node *m,
				  const char *key, size_t *old);

/* -1 with "key is required" at m. */
int sw_missing(struct scenario_walk *x, const struct ytree_node *m, const char *key);

/*
 * The getters of m's 'key': absent leaves *out alone (and fails only a
 * required string); a value of the wrong kind or out of range fails. Strings
 * are copied to the arena. 0 or -1.
 */
int sw_get_str(struct scenario_walk *x, const struct ytree_node *m, const char *key,
	       bool required, const char **out);
int sw_get_int(struct scenario_walk *x, const struct ytree_node *m, const char *key, int64_t lo,
	       int64_t hi, int64_t *out);
int sw_get_bool(struct scenario_walk *x, const struct ytree_node *m, const char *key, bool *out);
/* "90s", "1h30m", "250ms" or "0", in ns */
int sw_get_duration(struct scenario_walk *x, const struct ytree_node *m, const char *key,
		    int64_t *out);
/* a mapping of strings (label_keys: each key a qualified name); absent: empty */
int sw_get_kv(struct scenario_walk *x, const struct ytree_node *m, const char *key,
	      bool label_keys, struct kvlist *out);
/* a sequence of names (1 to 31 characters) into an arena array; absent: *n = 0 */
int sw_get_strlist(struct scenario_walk *x, const struct ytree_node *m, const char *key,
		   const char ***out, size_t *n);

/* Parses one item of a list into base[i]; the path points at the item. */
typedef int (*sw_item_fn)(struct scenario_walk *x, const struct ytree_node *n, void *base,
			  size_t i);

/*
 * Parses sequence 's' into a new arena array of 'size'-byte items, one
 * sw_item_fn call each (which may compare with the items before it). Sets
 * *items and *n. 0, or -1 with the error set.
 */
int sw_parse_list(struct scenario_walk *x, const struct ytree_node *s, size_t size, sw_item_fn fn,
		  void **items, size_t *n);

/* The index of the scenario's node group 'name', or -1. */
int sw_find_group(const struct sim_scenario *sc, const char *name);

/*
 * A cloud section's groups: mapping (m's "groups", optional) from the
 * scenario's node group names to their entries. A name that is no node
 * group fails; then fn runs for each node group i in order, with the path
 * at its name: 'entry' is its mapping or NULL (not given, or null: the
 * defaults), 'at' the node a message about it points at (its entry as
 * written, else "groups", else NULL when there is none). 0, or -1 with the
 * error set.
 */
typedef int (*sw_group_fn)(struct scenario_walk *x, const struct ytree_node *entry,
			   const struct ytree_node *at, size_t i, void *ctx);
int sw_each_group(struct scenario_walk *x, const struct ytree_node *m, sw_group_fn fn, void *ctx);

#endif
