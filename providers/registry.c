/*
 * providers/registry: the table of the clouds this build runs on, each
 * made from the same few things (registry.h).
 */
#include "providers/registry.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "providers/aws/aws.h"
#include "providers/azure/azure.h"
#include "providers/gce/gce.h"
#include "providers/simremote/simremote.h"

static struct provider *make_sim(const struct provider_make_opts *o, struct errbuf *err)
{
	return simremote_provider_new(o->client, o->lim, err);
}

static struct provider *make_aws(const struct provider_make_opts *o, struct errbuf *err)
{
	struct aws_provider_opts ao;

	memset(&ao, 0, sizeof(ao));
	ao.config = o->config;
	ao.log = o->log;
	ao.cancel = o->cancel;
	return aws_provider_new(&ao, err);
}

static struct provider *make_gce(const struct provider_make_opts *o, struct errbuf *err)
{
	struct gce_provider_opts go;

	memset(&go, 0, sizeof(go));
	go.config = o->config;
	go.log = o->log;
	go.cancel = o->cancel;
	return gce_provider_new(&go, err);
}

static struct provider *make_azure(const struct provider_make_opts *o, struct errbuf *err)
{
	struct azure_provider_opts zo;

	memset(&zo, 0, sizeof(zo));
	zo.config = o->config;
	zo.log = o->log;
	zo.cancel = o->cancel;
	return azure_provider_new(&zo, err);
}

static const struct provider_kind kinds[] = {
	{"sim", make_sim},
	{"aws", make_aws},
	{"gce", make_gce},
	{"azure", make_azure},
};

#define N_KINDS (sizeof(kinds) / sizeof(kinds[0]))

static const char *names[N_KINDS + 1];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void fill_names(void)
{
	size_t i;

	for (i = 0; i < N_KINDS; i++)
		names[i] = kinds[i].name;
}

const struct provider_kind *provider_kind_find(const char *name)
{
	size_t i;

	for (i = 0; name && i < N_KINDS; i++)
		if (!strcmp(kinds[i].name, name))
			return &kinds[i];
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
		int w = snprintf(out + n, len - n, "%s%s", i ? ", " : "", kinds[i].name);

		if (w < 0)
			break;
		n += (size_t)w;
	}
}
