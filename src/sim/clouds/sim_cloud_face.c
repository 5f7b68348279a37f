/*
 * sim/clouds/sim_cloud_face: the table of the simulated clouds' faces as
 * `luascale sim` serves them, one sim_face_<k> per X(k) of the generated
 * LUASCALE_SIM_CLOUDS, walked in their clouds' order. Apart from
 * sim_cloud_kind.c: a world that serves no face links none.
 */
#include "sim/clouds/sim_cloud_kind.h"

#include "luascale_clouds.h"

#define X(k) extern const struct sim_cloud_face sim_face_##k;
LUASCALE_SIM_CLOUDS(X)
#undef X

static const struct sim_cloud_face *const faces[] = {
#define X(k) &sim_face_##k,
	LUASCALE_SIM_CLOUDS(X)
#undef X
	NULL,
};

const struct sim_cloud_face *sim_cloud_face_next(const struct sim_cloud_face *prev)
{
	const struct sim_cloud_kind *k = prev ? prev->kind : NULL;
	size_t i;

	/* the clouds' own order (sim_cloud_kind_next): a cloud without a face is passed over */
	while ((k = sim_cloud_kind_next(k)))
		for (i = 0; faces[i]; i++)
			if (faces[i]->kind == k)
				return faces[i];
	return NULL;
}
