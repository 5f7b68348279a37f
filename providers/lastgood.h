/*
 * lastgood: each node group's last good view from the cloud, so that a
 * listing can skip one group the cloud describes badly (a field its parser
 * refuses) and still answer for the others: the skipped group keeps the
 * view it had, marked stale. Also says when a group's reason to be skipped
 * changed, so it is logged once per change and not every round. Shared by
 * the AWS, GCE and Azure providers; thread-safe.
 */
#ifndef LUASCALE_PROVIDERS_LASTGOOD_H
#define LUASCALE_PROVIDERS_LASTGOOD_H

#include <stdbool.h>
#include <stdint.h>

#include "providers/provider.h"

struct provider_lastgood;

/* NULL when out of memory. */
struct provider_lastgood *provider_lastgood_new(void);
/* NULL is a no-op. */
void provider_lastgood_free(struct provider_lastgood *k);

/*
 * Keeps a copy of 'g' (read well at 'wall', unix seconds) as the last good
 * view of group g->name, replacing the one before. Returns 1 when the group
 * had been skipped before (it recovered: the caller may say so once), 0
 * otherwise, -1 when out of memory (the old view stays).
 */
int provider_lastgood_keep(struct provider_lastgood *k, const struct provider_group *g, int64_t wall);

/*
 * Group 'name' could not be read this time, because of 'why'. Fills *out
 * with a copy of its last good view, stale_since set to when it was read
 * (free with provider_groups_free, as the listing's array) and returns 0;
 * returns -1 when there is none (or out of memory), *out zeroed. *changed
 * is true when 'why' is not the reason recorded the last time (or the
 * group was not skipped then): the caller logs it.
 */
int provider_lastgood_recall(struct provider_lastgood *k, const char *name, const char *why,
			     struct provider_group *out, bool *changed);

#endif
