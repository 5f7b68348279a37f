/*
 * provider: what all providers share — error names and the group array.
 */
#include "providers/provider.h"

#include <stdlib.h>

#include "config.h"

const char *provider_error_str(enum provider_error e)
{
	switch (e) {
	case PROVIDER_OK: return "ok";
	case PROVIDER_THROTTLED: return "throttled";
	case PROVIDER_NO_CAPACITY: return "no capacity";
	case PROVIDER_QUOTA: return "quota exceeded";
	case PROVIDER_NOT_FOUND: return "not found";
	case PROVIDER_INVALID: return "invalid request";
	case PROVIDER_TRANSIENT: return "transient error";
	case PROVIDER_AUTH: return "authentication failed";
	case PROVIDER_CANCELLED: return "cancelled";
	}
	return "unknown error";
}

bool provider_error_backs_off_group(enum provider_error e)
{
	return e == PROVIDER_NO_CAPACITY || e == PROVIDER_QUOTA || e == PROVIDER_INVALID ||
	       e == PROVIDER_AUTH;
}

void provider_groups_free(struct provider_group *groups, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(groups[i].instances);
	free(groups);
}

void provider_limits_from(struct provider_limits *out, const struct config *c)
{
	out->mutating_qps = c->provider_qps;
	out->mutating_burst = (int)c->provider_burst;
	out->read_qps = c->provider_read_qps;
	out->read_burst = (int)c->provider_read_burst;
}
