/*
 * providers/registry: the table of the clouds this build runs on, each
 * made from the same few things (registry.h): "sim", and every cloud
 * CMakeLists.txt found a folder of (generated/luascale_clouds.h), whose
 * provider_kind_<cloud> its folder defines.
 */
#include "providers/registry.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "luascale_clouds.h"
#include "providers/simremote/simremote.h"

static struct provider *make_sim(const struct provider_make_opts *o, struct errbuf *err)
{
	return simremote_provider_new(o->client, o->lim, err);
}

static const struct provider_kind kind_sim = {"sim", make_sim};

/* Each cloud's, defined in its folder: provider_kind_<cloud>. */
#define KIND_DECL(cloud) extern const struct provider_kind provider_kind_##cloud;
LUASCALE_CLOUDS(KIND_DECL)
#undef KIND_DECL

#define KIND_ENTRY(cloud) &provider_kind_##cloud,
static const struct provider_kind *const kinds[] = {&kind_sim, LUASCALE_CLOUDS(KIND_ENTRY)};
#undef KIND_ENTRY

#define N_KINDS (sizeof(kinds) / sizeof(kinds[0]))

static const char *names[N_KINDS + 1];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void fill_names(void)
{
	size_t i;

	for (i = 0; i < N_KINDS; i++)
		names[i] = kinds[i]->name;
}

const struct provider_kind *provider_kind_find(const char *name)
{
	size_t i;

	for (i = 0; name && i < N_KINDS; i++)
		if (!strcmp(kinds[i]->name, name))
			return kinds[i];
	return NULL;
}

const char *const *provider_kind_names(void)
{
	pthread_once(&names_once, fill_names);
	return names;
}

void provider_kind_list(char *out, size_t len)
{
	size_t i, n = 0;

	if (len)
		out[0] = '\0';
	for (i = 0; i < N_KINDS && n < len; i++) {
		int w = snprintf(out + n, len - n, "%s%s", i ? ", " : "", kinds[i]->name);

		if (w < 0)
			break;
		n += (size_t)w;
	}
}
