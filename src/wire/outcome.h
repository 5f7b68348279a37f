/*
 * outcome: the words a cloud's client (providers/) and its simulated face
 * (src/sim/clouds/) share about a call and an instance: the classes of a
 * cloud's errors the engine acts on, a call's status, an instance's life.
 * Owns no code of either side; imports nothing of the project.
 */
#ifndef LUASCALE_WIRE_OUTCOME_H
#define LUASCALE_WIRE_OUTCOME_H

#include <stdint.h>

enum provider_error {
	PROVIDER_OK = 0,
	PROVIDER_THROTTLED,    /* RequestLimitExceeded, 429: slow down, retry later */
	PROVIDER_NO_CAPACITY,  /* InsufficientInstanceCapacity, ZONE_RESOURCE_POOL_EXHAUSTED: back off the group */
	PROVIDER_QUOTA,        /* a quota is exhausted: back off the group */
	PROVIDER_NOT_FOUND,    /* no such group or instance */
	PROVIDER_INVALID,      /* the request was wrong (config, parameters): do not retry as is */
	PROVIDER_TRANSIENT,    /* 5xx, timeout, connection: retry with backoff */
	PROVIDER_AUTH,         /* credentials refused */
	PROVIDER_CANCELLED,    /* shutdown before the call was made */
};

const char *provider_error_str(enum provider_error e);

/* The longest status message, NUL included: a cloud's error code and its
 * whole message, the likely cause and where it happened. */
#define PROVIDER_MESSAGE_MAX 2048

struct provider_status {
	enum provider_error code;
	char message[PROVIDER_MESSAGE_MAX]; /* what the cloud said, for logs and
					     * Events (never for metric labels);
					     * never a secret */
	int64_t retry_after_s; /* the cloud's Retry-After in seconds (Azure's 429 header,
				* GCE's or AWS's where given); 0 when it said none */
};

enum instance_state {
	INSTANCE_PENDING,  /* requested, not running yet */
	INSTANCE_RUNNING,  /* running (its node may not be registered yet) */
	INSTANCE_STOPPING, /* being terminated */
	INSTANCE_GONE,
};

#endif
