/*
 * cloudcall: what every cloud provider does alike around one call of its
 * API — the status a refused or failed call fills, the calls counted by
 * kind (what gce_provider_calls and azure_provider_calls answer), the two
 * token buckets calls take from, the HTTP client calls go through, and
 * the waits between calls that end as soon as luascale stops, and what a
 * call with an OAuth bearer token (GCE, Azure) does alike before it is
 * sent and with each answer. The wire format, the signing and where the
 * token comes from stay each provider's; HTTP is cloudhttp's.
 */
#ifndef LUASCALE_CLOUDCALL_H
#define LUASCALE_CLOUDCALL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "providers/cloudhttp/cloudhttp.h"
#include "providers/provider.h"

struct clock;
struct config;
struct errbuf;
struct logger;
struct oauth_source;

/* Sets st->code to 'code' and st->message to the formatted text, cut to
 * fit; the other fields of 'st' are left as they are. */
void cloudcall_status(struct provider_status *st, enum provider_error code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define CLOUDCALL_KINDS 32    /* kinds counted; a kind beyond them is not */
#define CLOUDCALL_KIND_MAX 40 /* a kind's name, cut to 39 characters */

/* Calls counted by kind ("vms.list", "listManagedInstances"). Thread-safe
 * between cloudcall_counts_init and cloudcall_counts_destroy. */
struct cloudcall_counts {
	pthread_mutex_t mu;
	struct {
		char what[CLOUDCALL_KIND_MAX];
		uint64_t n;
	} v[CLOUDCALL_KINDS];
};

/* An empty count (every kind at 0). */
void cloudcall_counts_init(struct cloudcall_counts *c);
void cloudcall_counts_destroy(struct cloudcall_counts *c);

/* Counts one call of kind 'what'. */
void cloudcall_counts_add(struct cloudcall_counts *c, const char *what);

/* How many calls of kind 'what' were counted (0 for a kind never seen). */
uint64_t cloudcall_counts_get(struct cloudcall_counts *c, const char *what);

/* Gives 'p' its two token buckets, p->mutating (launches, terminations)
 * and p->reads (listings), at the config's limits (provider_limits_from)
 * on 'clock'. 0, or -1 when a limit is not usable; either way
 * cloudcall_buckets_free frees what was made. */
int cloudcall_buckets_new(struct provider *p, struct clock *clock, const struct config *c);

/* Frees p's two token buckets. */
void cloudcall_buckets_free(struct provider *p);

/* The HTTP client of provider 'cloud' ("gce"), as every provider makes it:
 * 'max_attempts' a call, 30 s an attempt (a list runs on the reconcile
 * thread); 'clock', 'log', 'ca_file' (NULL: the system store) and 'cancel'
 * borrowed. NULL with "<cloud>: <why>" in 'err'. */
struct cloudhttp *cloudcall_http_new(const char *cloud, struct clock *clock, const struct logger *log,
				     const char *ca_file, int max_attempts, const atomic_bool *cancel,
				     struct errbuf *err);

/* Sleeps on 'clock' until its monotonic time is 'end_ns', in steps of at
 * most 200 ms that notice 'cancel' (NULL: never cancelled). 0, or -1 when
 * cancelled or the clock cannot sleep. */
int cloudcall_wait_until(struct clock *clock, const atomic_bool *cancel, int64_t end_ns);

/* ---- calls with a bearer token ---- */

/* One call's bucket and bearer, which its prepare and classify hooks
 * share (a provider's call context holds one). */
struct cloudcall_bearer {
	const char *cloud;             /* leads log lines: "gce" */
	const char *what;              /* the call in log lines: "GET .../instanceGroupManagers/pool" */
	struct ratelimit *bucket;      /* NULL: none */
	bool token_taken;              /* the caller took the bucket's token already */
	struct oauth_source *auth;     /* NULL: a public API (no Authorization) */
	struct clock *clock;
	const struct logger *log;
	struct provider_status *st;    /* the call's: a refusal's code and message */
	bool auth_retried;             /* a 401 dropped the token once already */
};

/*
 * A prepare hook's body: a token of the bucket (waiting until 'wait_ns'
 * from now), then "Authorization: Bearer ...". 0, or -1 with 'err' and
 * c->st: the bucket's refusal, or PROVIDER_AUTH with the token endpoint's
 * whole message ("no access token: ..." in 'err').
 */
int cloudcall_bearer_prepare(struct cloudcall_bearer *c, int64_t wait_ns, struct cloudhttp_headers *extra,
			     struct errbuf *err);

/*
 * A classify hook's body, once the cloud has read its answer 'r'
 * ('throttled': the cloud's throttling; 'code' its error code, "" when
 * none): a 2xx is done and speeds the bucket up; a throttled answer slows
 * it, is logged ("CLOUD: WHAT throttled (HTTP 429 CODE); retrying, calls
 * now at R a second") and retried; the first 401 drops the token and
 * retries; a 5xx retries; anything else is done.
 */
enum cloudhttp_verdict cloudcall_bearer_verdict(struct cloudcall_bearer *c, const struct cloudhttp_response *r,
						bool throttled, const char *code);

#endif
