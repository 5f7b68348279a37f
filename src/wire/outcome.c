/*
 * outcome: the names of a cloud call's outcomes (wire/outcome.h).
 */
#include "wire/outcome.h"

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
