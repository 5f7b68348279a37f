/*
 * cli/serve: what `luascale run` needs beside another replica — metrics and
 * their collector, the HTTP endpoint, leader election on a Lease — and the
 * glue to the daemon's parts (the actuator's gate, a round when leadership
 * is won, the in-flight log when lost). The loop itself stays in run.c. */
#ifndef LUASCALE_CLI_SERVE_H
#define LUASCALE_CLI_SERVE_H

#include <stdbool.h>

#include "config.h"
#include "engine/instruments.h"
#include "errbuf.h"

struct actuator;
struct batcher;
struct informer_set;
struct kube_client;
struct kube_config;
struct logger;
struct provider;
struct round_stats;
struct snapshot;

struct serve;

/*
 * Makes the registry and, unless 'server' is false or the config turns it
 * off, binds server.listen and starts serving; with leader election on
 * (and 'no_election' NULL; else it names why not, e.g. "--once"), makes the elector with its own API client for 'kc'
 * (not started: serve_start_election), which opens 'fence' (the write
 * fence of every other client and provider bucket) while it leads and
 * closes it when it stops, and stops renewing when the loop is stuck
 * (/healthz 503). 'c', 'log', 'fence' are borrowed and must outlive it.
 * NULL with a message (the address is taken, a bad POD_NAME).
 */
struct fence;
struct serve *serve_new(const struct config *c, bool server, const char *no_election,
			const struct kube_config *kc, struct fence *fence, const struct logger *log,
			struct errbuf *err);

/* Stops the server and the elector (without releasing: see
 * serve_stop_election) and frees. Call before the parts given to
 * serve_attach are freed. NULL is a no-op. */
void serve_free(struct serve *sv);

/* The instruments, for the round and the actuator. Borrowed. */
const struct instruments *serve_instruments(struct serve *sv);

/* For kube_client_opts.on_response: counts API requests by verb and code. */
void serve_on_response(void *sv, const char *verb, long status);

/* Wraps 'p' (taken) so that its calls are counted; NULL stays NULL. */
struct provider *serve_wrap_provider(struct serve *sv, struct provider *p);

/* The daemon's parts the pages and the elector read or poke (each may be
 * NULL; borrowed until serve_free). */
void serve_attach(struct serve *sv, struct informer_set *infs, struct actuator *act,
		  struct provider *prov, struct kube_client *client, struct batcher *batch);

struct executor;

/* The work queue whose size /metrics shows (luascale_work_queue_*); NULL
 * detaches it, which must be done before it is shut down. */
void serve_attach_executor(struct serve *sv, struct executor *ex);

struct explainer;

/* The node explanations /debug/nodes shows (NULL: none yet, a 503);
 * borrowed until serve_free. */
void serve_attach_explainer(struct serve *sv, struct explainer *e);

/* Whether this process may act: no election, or it leads now. For
 * actuator_config.may_act (ctx: the serve). Any thread. */
bool serve_may_act(void *sv);

/* The leader-election identity ("" without election): the API client's
 * User-Agent carries it, so audit logs tell the replicas apart. */
const char *serve_identity(const struct serve *sv);

/* Whether leader election is on. */
bool serve_electing(struct serve *sv);

/* The caches are synced: readiness may follow, and the elector starts
 * (when on). Returns 0, or -1 with a message. */
int serve_synced(struct serve *sv, struct errbuf *err);

/* The loop came round (a round run, or skipped on standby): /healthz. */
void serve_progress(struct serve *sv);

/* One round's outcome: rc from round_run_opts, its stats and duration,
 * the snapshot it ran on (sizes, backoff, pending pods). */
void serve_round(struct serve *sv, int rc, const struct round_stats *rs, double seconds,
		 const struct snapshot *s);

/* Shutdown, once no write of ours is in flight any more: the elector
 * stops and the Lease is released (the other replica takes over at its
 * next try). Idempotent. */
void serve_stop_election(struct serve *sv);

#endif
