/*
 * cloudgroups: the node groups of one round — the config's, completed and
 * narrowed by what the cloud reports of them (size limits, the new-node
 * template, which instances are whose), plus the groups the provider found
 * that the config does not name. Pure: no I/O, no provider calls.
 */
#ifndef LUASCALE_ENGINE_CLOUDGROUPS_H
#define LUASCALE_ENGINE_CLOUDGROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "errbuf.h"
#include "log.h"
#include "model.h"
#include "providers/provider.h"

struct arena;

/*
 * Builds the round's groups into '*out' (allocated in 'a', which must
 * outlive their use; strings may be borrowed from 'cfg' and 'cloud').
 * 'cfg' and 'extra' are the config's groups (extra may be NULL: every key
 * written); 'cloud' what list_groups returned (NULL with n_cloud 0 when the
 * cloud could not be read). For a config group the cloud reports:
 *   - target: the larger of the config's and the cloud's;
 *   - min/max, when the cloud sizes the group: the cloud's, narrowed by the
 *     ones the config writes (the larger min, the smaller max);
 *   - the template: the cloud's resources where the config writes no
 *     template; labels are the cloud's overlaid by the config's; taints
 *     the config's, else the cloud's; the price the config's, else the cloud's;
 *   - membership: the instances' providerIDs when the cloud lists them.
 * A config group without a max whose size the cloud did not report gets
 * min 0, max 0 and a backoff until 'now' + 60 s saying so (never a size
 * made up). Cloud groups no config group names are appended as they are.
 * Warnings ('log', may be NULL) name the group. Returns 0, or -1 (out of
 * memory) with a message.
 */
int cloudgroups_build(struct arena *a, const struct node_group *cfg,
		      const struct config_group_extra *extra, size_t n_cfg,
		      const struct provider_group *cloud, size_t n_cloud, int64_t now,
		      const struct logger *log, struct node_group **out, size_t *n_out,
		      struct errbuf *err);

#endif
