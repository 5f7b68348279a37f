/*
 * config_parse: what a cloud's config sections are read with. config.c
 * walks the file; a cloud (providers/<cloud>/<cloud>_config.c) reads its
 * provider.<cloud> section, each group's <cloud>: section and its
 * LUASCALE_PROVIDER_<CLOUD>_* variables with these readers, so that its
 * errors name file:line:column and the key path (or the variable) exactly
 * as the rest of the config's do. Only config.c and the clouds' config
 * files include this header; a cloud's config file includes nothing else
 * of its cloud (whatever reads a config links it, not the cloud).
 *
 * A cloud is found by its folder (CMakeLists.txt generates the list); it
 * defines `const struct config_cloud config_cloud_<cloud>` and, in its
 * header, struct config_<cloud> (provider.<cloud>) and struct
 * config_<cloud>_group (a group's section), which struct config and struct
 * config_group_extra then hold as members named <cloud> (and <cloud>_set).
 */
#ifndef LUASCALE_CONFIG_PARSE_H
#define LUASCALE_CONFIG_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "ytree.h"

/* The walk in progress (config.c's). */
struct config_ctx;
struct config_cloud;

/* Where a value came from: a file position (and its schema path), or an
 * environment variable. */
struct config_loc {
	int line, col;
	const char *path;
	const char *var;
};

/* A scalar or collection to decode, from the file or the environment. */
struct config_val {
	enum ytree_kind kind;
	const char *text; /* scalars */
	bool plain;
	struct config_loc loc;
};

/* An integer's range, inclusive. */
struct config_range {
	int64_t lo, hi;
};

/* A string checked by 'ok', at most 'max' bytes; 'what' explains it. */
struct config_str_rule {
	bool (*ok)(const char *s);
	size_t max;
	const char *what;
};

/* Decodes 'v' into 'out'; 'arg' is the decoder's (a range, a rule, ...). 0 or -1. */
typedef int (*cfg_decode_fn)(struct config_ctx *x, const struct config_val *v, void *out,
			     const void *arg);

/* The config being filled, its arena (what the config keeps), and the key
 * path of the node being read (ytree_path_push_key / _index / _pop). */
struct config *cfg_config(struct config_ctx *x);
struct arena *cfg_arena(struct config_ctx *x);
struct ytree_path *cfg_path(struct config_ctx *x);

/* Errors: each sets the message and returns -1. */
int cfg_fail_loc(struct config_ctx *x, const struct config_loc *l, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* At node 'n', naming the current path. */
int cfg_fail_node(struct config_ctx *x, const struct ytree_node *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int cfg_oom(struct config_ctx *x);
/* "expected <what>, got <v as written>" */
int cfg_bad(struct config_ctx *x, const struct config_val *v, const char *what);
/* 'text' quoted for a message: at most ~48 characters, one line. */
const char *cfg_quoted(const char *text, char *out, size_t outlen);

/* Locations: one that outlives the current path; whether one was recorded. */
struct config_loc cfg_node_loc(struct config_ctx *x, const struct ytree_node *n);
bool cfg_loc_set(const struct config_loc *l);
struct config_val cfg_val_of_node(struct config_ctx *x, const struct ytree_node *n);
bool cfg_val_is_null(const struct config_val *v);

/* Mappings: the value of 'key' (NULL when absent or null); every key of 'm'
 * in 'known' (NULL-terminated), else "unknown key" with the closest one;
 * 'n' of the kind. */
const struct ytree_node *cfg_map_get(const struct ytree_node *m, const char *key);
int cfg_check_keys(struct config_ctx *x, const struct ytree_node *m, const char *const *known);
int cfg_expect_kind(struct config_ctx *x, const struct ytree_node *n, enum ytree_kind kind);

/* Decodes 'key' of mapping 'm' when present (and not null), leaving *out
 * unchanged otherwise; 'where' (may be NULL) records the position. */
int cfg_field(struct config_ctx *x, const struct ytree_node *m, const char *key,
	      cfg_decode_fn dec, void *out, const void *arg, struct config_loc *where);
/* The same decoder on environment variable 'var' when set. */
int cfg_env_field(struct config_ctx *x, const char *var, cfg_decode_fn dec, void *out,
		  const void *arg, struct config_loc *where);
/* parse(x, the value of 'key') when present, with the path pushed. */
int cfg_section(struct config_ctx *x, const struct ytree_node *m, const char *key,
		int (*parse)(struct config_ctx *, const struct ytree_node *));

/* Decoders. dec_int: an int64_t in a struct config_range; dec_bool: a bool;
 * dec_string: any scalar, copied; dec_checked: a string a struct
 * config_str_rule accepts; dec_choice: one of the NULL-terminated strings
 * 'arg', its index into an int. */
int cfg_dec_int(struct config_ctx *x, const struct config_val *v, void *out, const void *arg);
int cfg_dec_bool(struct config_ctx *x, const struct config_val *v, void *out, const void *arg);
int cfg_dec_string(struct config_ctx *x, const struct config_val *v, void *out, const void *arg);
int cfg_dec_checked(struct config_ctx *x, const struct config_val *v, void *out, const void *arg);
int cfg_dec_choice(struct config_ctx *x, const struct config_val *v, void *out, const void *arg);

/* A list of strings under 'key', each checked by 'rule', none twice. */
int cfg_parse_checked_list(struct config_ctx *x, const struct ytree_node *m, const char *key,
			   const struct config_str_rule *rule, const char *const **out, size_t *n_out);

/* A path as written: "~/" expanded, a relative one joined to the config
 * file's directory when 'from_file'. NULL (with the error) on failure. */
const char *cfg_resolve_path(struct config_ctx *x, const char *p, bool from_file,
			     const struct config_loc *l);

/* String checks: every byte alphanumeric or in 'set' ('lower': no
 * uppercase); no control byte; an http(s) endpoint URL (no user, query or
 * fragment). */
bool cfg_chars_ok(const char *s, const char *set, bool lower);
bool cfg_ok_printable(const char *s);
bool cfg_ok_endpoint(const char *s);
extern const struct config_str_rule cfg_rule_endpoint;
/* A group's size: 0 to 1000000. */
extern const struct config_range cfg_range_group_size;

/* Node group i's mapping, and its section of the cloud being checked
 * (the group's mapping when the section is not written). */
const struct config_loc *cfg_group_loc(struct config_ctx *x, size_t i);
const struct config_loc *cfg_group_section_loc(struct config_ctx *x, size_t i);

/* 'size' zeroed bytes that 'cloud's readers share while this config is
 * read (locations its check reports, say); the same block at every call.
 * NULL when out of memory. */
void *cfg_scratch(struct config_ctx *x, const struct config_cloud *cloud, size_t size);

/* A cloud's part of the config. A cloud describes its groups' new nodes
 * (their template may be left out of the config); the provider says how. */
struct config_cloud {
	const char *kind;            /* provider.kind, and the name of its sections */
	/* provider.<kind>, into the config's <kind> member */
	int (*parse_section)(struct config_ctx *x, const struct ytree_node *m);
	/* node group g's <kind>: section (written), into e-><kind>; sets e-><kind>_set */
	int (*parse_group)(struct config_ctx *x, const struct ytree_node *m,
			   const struct node_group *g, struct config_group_extra *e);
	/* its LUASCALE_PROVIDER_<KIND>_* variables, read whatever the kind */
	int (*env)(struct config_ctx *x);
	/* when provider.kind is this cloud, after the file and the environment:
	 * the groups' defaults and the checks across groups; NULL: none */
	int (*check)(struct config_ctx *x);
	/* does group e take its max from the cloud (so the config may leave it
	 * out)? NULL: never */
	bool (*max_from_cloud)(const struct config_group_extra *e);
	/* the provider's token buckets when provider.qps and burst are not
	 * written (0: the generic 5 and 10) */
	double default_qps;
	int64_t default_burst;
};

#endif
