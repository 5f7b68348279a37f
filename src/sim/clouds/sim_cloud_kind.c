/*
 * sim/clouds/sim_cloud_kind: the table of the simulated clouds, one entry
 * per X(k) of the generated LUASCALE_SIM_CLOUDS (a src/sim/clouds/<k>_face.c
 * each), walked in rank order. Knows no cloud by name.
 */
#include "sim/clouds/sim_cloud_kind.h"

#include <string.h>

#include "luascale_clouds.h"

/* each <k>_face.h declares the same; no per-cloud #include is needed here */
#define X(k) extern const struct sim_cloud_kind sim_cloud_##k;
LUASCALE_SIM_CLOUDS(X)
#undef X

static const struct sim_cloud_kind *const kinds[] = {
#define X(k) &sim_cloud_##k,
	LUASCALE_SIM_CLOUDS(X)
#undef X
	NULL,
};

const struct sim_cloud_kind *sim_cloud_kind_next(const struct sim_cloud_kind *prev)
{
	const struct sim_cloud_kind *best = NULL;
	size_t i;

	for (i = 0; kinds[i]; i++)
		if ((!prev || kinds[i]->rank > prev->rank) && (!best || kinds[i]->rank < best->rank))
			best = kinds[i];
	return best;
}

const struct sim_cloud_kind *sim_cloud_kind_find(const char *name)
{
	size_t i;

	for (i = 0; kinds[i]; i++)
		if (strcmp(kinds[i]->name, name) == 0)
			return kinds[i];
	return NULL;
}
