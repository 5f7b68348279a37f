/*
 * observed: a provider that wraps another and reports every call — its
 * operation (list_groups, launch, terminate), outcome and duration — to a
 * callback, for metrics. It changes nothing in what the calls do; the
 * wrapped provider's rate limiters and executor are shared.
 */
#ifndef LUASCALE_PROVIDERS_OBSERVED_H
#define LUASCALE_PROVIDERS_OBSERVED_H

#include "providers/provider.h"
#include "runtime/clock.h"

/* 'op' "list_groups", "launch" or "terminate"; 'seconds' from the call to
 * its end (for launch and terminate: to on_done). Any thread. */
typedef void (*provider_observe_fn)(void *ctx, const char *op, enum provider_error code,
				    double seconds);

/*
 * Returns a provider that forwards to 'inner' (taken: freed with it) and
 * calls 'fn' after each call, or NULL (out of memory; 'inner' is then
 * freed too). 'clock' (NULL: clock_real()) and 'ctx' are borrowed.
 */
struct provider *provider_observed_new(struct provider *inner, struct clock *clock,
				       provider_observe_fn fn, void *ctx);

#endif
