/*
 * groupcache: what a cloud provider keeps of its node groups between two
 * listings, alike in every cloud — the table of its groups (its own record
 * of each: the config's, then those discovery found), each group's last
 * good view (a group its cloud describes badly keeps it, marked stale,
 * instead of failing the whole list; a group gone from the cloud is
 * skipped), and an index of the instances last listed (their group and
 * providerID, for providerID mapping and interruption notices, and when
 * each was made). Also reports one instance
 * to a launch's callback. It reads no cloud: the provider lists, this
 * keeps. Thread-safe.
 */
#ifndef LUASCALE_GROUPCACHE_H
#define LUASCALE_GROUPCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "providers/provider.h"

struct clock;
struct logger;
struct groupcache;

struct groupcache_opts {
	const char *cloud;        /* the log lines' prefix: "gce", "azure" */
	const char *backing;      /* what backs a group in the cloud: "MIG", "scale set" */
	const struct logger *log; /* borrowed; NULL: silent */
	struct clock *clock;      /* borrowed: its wall time stamps the views kept */
	size_t group_size;        /* the provider's record of a group (0: no table), */
	size_t group_name_at;     /* its name a string at this offset */
};

/* The table's fields of the opts for records of 'type', named by its 'name'. */
#define GROUPCACHE_TABLE(type) .group_size = sizeof(type), .group_name_at = offsetof(type, name)

/* NULL when out of memory. The strings of 'o' are borrowed for its life. */
struct groupcache *groupcache_new(const struct groupcache_opts *o);
/* NULL is a no-op. */
void groupcache_free(struct groupcache *gc);

/* A provider's answer for one group described badly by its cloud (a size
 * that is not a count...): the group is skipped, not the whole list. */
#define GROUPCACHE_MALFORMED (-2)

/* What a listing does with one group's answer (groupcache_settle). */
enum groupcache_verdict {
	GROUPCACHE_LISTED,  /* *pg is in the list */
	GROUPCACHE_SKIPPED, /* *pg is not (zeroed); the list goes on */
	GROUPCACHE_FAILED,  /* the whole listing fails with 'st' */
};

/*
 * Settles the answer 'rc' of reading group 'name' into *pg:
 *   0: *pg read well is kept as the group's last good view (a group
 *      skipped before is said to read well again): LISTED.
 *   GROUPCACHE_MALFORMED: *pg is freed and replaced by the group's last
 *      good view, marked stale (LISTED), or zeroed when there is none
 *      (SKIPPED); st->message says why, logged once per reason; 'st' is
 *      cleared.
 *   -1 with st->code PROVIDER_NOT_FOUND: logged, *pg freed and zeroed,
 *      'st' cleared: SKIPPED.
 *   any other -1: FAILED, *pg and 'st' as they are (the caller frees *pg).
 */
enum groupcache_verdict groupcache_settle(struct groupcache *gc, const char *name, int rc, struct provider_group *pg,
					  struct provider_status *st);

/* groupcache_settle() of out[*k], a listing's next group: *k counts it
 * when it is LISTED. 0, or -1 when the listing FAILED: out[0..*k] and
 * the array freed. */
int groupcache_add(struct groupcache *gc, const char *name, int rc, struct provider_group *out, size_t *k,
		   struct provider_status *st);

/* Keeps *pg, read well at 'wall' (unix seconds), as the group's last good
 * view, saying once that a group skipped before is read well again. */
void groupcache_keep(struct groupcache *gc, const struct provider_group *pg, int64_t wall);

/* provider_lastgood_recall() on the views kept: group 'name' was not read
 * well because of 'why', for a provider that words its log line itself. */
int groupcache_recall(struct groupcache *gc, const char *name, const char *why, struct provider_group *out,
		      bool *changed);

/* Takes 'groups' (n records, malloc'd) as the table of groups, and frees
 * the one before. */
void groupcache_groups_take(struct groupcache *gc, void *groups, size_t n);

/* A copy of the first 'first' groups of the table (fewer when it holds
 * fewer), with 'extra' more records zeroed after them: free() it. NULL
 * when out of memory. */
void *groupcache_groups_copy(struct groupcache *gc, size_t first, size_t extra);

/* Copies into *out the first group of the table that match(group, ctx)
 * takes (NULL: the one named 'ctx'). 0, or -1 when none is. */
int groupcache_group(struct groupcache *gc, bool (*match)(const void *group, const void *ctx), const void *ctx,
		     void *out);

/* Replaces the index of instances by those of 'groups' (a listing's n
 * groups). On out of memory the old index stays. */
void groupcache_keep_instances(struct groupcache *gc, const struct provider_group *groups, size_t n);

/* Instance 'id' as last kept: its group into 'group', its providerID into
 * 'provider_id' and when it was made (unix seconds, 0 when the cloud did
 * not say) into *launched_wall (each may be NULL). 0, or -1 when it was
 * not listed. */
int groupcache_instance(struct groupcache *gc, const char *id, char *group, size_t group_len,
			char *provider_id, size_t pid_len, int64_t *launched_wall);

/* Reports instance 'id' of 'group' in 'state' to on_instance (NULL: none),
 * with 'provider_id' ("" or NULL: not known yet). */
void groupcache_report(provider_instance_cb on_instance, void *ctx, const char *id, const char *group,
		       const char *provider_id, enum instance_state state);

#endif
