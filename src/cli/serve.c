/*
 * cli/serve: the registry and its collector (informer, rate limiter and
 * elector counts copied in at scrape time), the three pages, and leader
 * election with its callbacks into the daemon.
 */
#include "cli/serve.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "engine/actuator.h"
#include "engine/batcher.h"
#include "engine/explain.h"
#include "engine/round.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "kube/leader.h"
#include "log.h"
#include "providers/observed.h"
#include "runtime/clock.h"
#include "runtime/executor.h"
#include "runtime/fence.h"
#include "runtime/health.h"
#include "runtime/httpserver.h"

struct serve {
	const struct config *c;
	const struct logger *log;
	struct metrics *m;
	struct instruments ins;
	struct httpserver *http;
	struct kube_client *lease_client;
	struct leader *leader;
	struct fence *fence;        /* borrowed; NULL without election */
	char identity[LEADER_IDENTITY_MAX]; /* the elector's, "" without election */
	bool election_started;

	pthread_mutex_t mu; /* guards the parts below (the pages read them) */
	struct informer_set *infs;
	struct actuator *act;
	struct provider *prov;
	struct kube_client *client;
	struct batcher *batch;
	struct executor *ex;
	struct explainer *explain;

	struct health health;
};

/* /readyz says the cache is stale once an informer has been out of sync this long */
#define READY_STALE_NS (10 * CLOCK_NS_PER_S)

static const char *const limiter_names[] = {"provider_mutating", "provider_read"};

static void collect(void *ctx)
{
	struct serve *sv = ctx;
	struct instruments *ins = &sv->ins;
	int k;

	pthread_mutex_lock(&sv->mu);
	if (sv->infs) {
		for (k = 0; k < INFORMER_KINDS; k++) {
			struct informer *inf = informer_set_get(sv->infs, (enum informer_kind)k);
			const char *res = informer_kind_str((enum informer_kind)k);
			struct informer_stats st;

			if (!inf)
				continue;
			informer_stats(inf, &st);
			metric_set1(ins->watch_restarts, res, st.watches > 1 ? (double)(st.watches - 1) : 0);
			metric_set1(ins->relists, res, (double)st.relists);
			metric_set1(ins->lists, res, (double)st.lists);
			metric_set1(ins->watch_errors, res, (double)st.errors);
			metric_set1(ins->cache_synced, res, st.synced);
			metric_set1(ins->cache_unavailable, res, st.unavailable);
		}
	}
	if (sv->prov) {
		struct ratelimit *rl[2] = {sv->prov->mutating, sv->prov->reads};

		for (k = 0; k < 2; k++) {
			if (!rl[k])
				continue;
			metric_set1(ins->ratelimit_wait, limiter_names[k],
				    (double)ratelimit_waited_ns(rl[k]) / CLOCK_NS_PER_S);
			metric_set1(ins->ratelimit_rate, limiter_names[k], ratelimit_rate(rl[k]));
		}
		if (sv->prov->ops->price_failures)
			metric_set1(ins->price_failures, sv->prov->ops->kind,
				    (double)sv->prov->ops->price_failures(sv->prov));
	}
	if (sv->client)
		metric_set0(ins->kube_writes_waiting, kube_client_writes_waiting(sv->client));
	if (sv->ex) {
		struct executor_stats es;

		executor_stats(sv->ex, &es);
		metric_set0(ins->work_queue_workers, es.workers);
		metric_set0(ins->work_queue_busy, es.busy);
		metric_set0(ins->work_queue_waiting, (double)es.queued);
		metric_set0(ins->work_queue_max, es.max);
	}
	if (sv->act) {
		struct actuator_stats as;

		actuator_get_stats(sv->act, &as);
		metric_set1(ins->evictions, "ok", (double)as.evictions);
		metric_set1(ins->evictions, "pdb_blocked", (double)as.evictions_refused);
		metric_set1(ins->evictions, "throttled", (double)as.evictions_throttled);
		metric_set1(ins->evictions, "failed", (double)as.evictions_failed);
	}
	pthread_mutex_unlock(&sv->mu);
	metric_set0(ins->max_nodes_total, (double)sv->c->max_nodes_total);
	instruments_process(ins, "/proc");
	metric_set0(ins->leader, serve_may_act(sv));
	if (sv->leader)
		metric_set0(ins->leader_transitions, (double)leader_transitions(sv->leader));
	if (sv->fence)
		metric_set0(ins->fenced_writes, (double)fence_refused(sv->fence));
	metric_set0(ins->log_dropped, (double)log_dropped_lines());
	metric_set0(ins->series_dropped, (double)metrics_dropped(sv->m));
}

static int page_metrics(void *ctx, struct buf *body)
{
	struct serve *sv = ctx;

	return metrics_render(sv->m, body) < 0 ? 500 : 200;
}

static int page_healthz(void *ctx, struct buf *body)
{
	return health_live(&((struct serve *)ctx)->health, body);
}

static int page_readyz(void *ctx, struct buf *body)
{
	struct serve *sv = ctx;
	struct health_election e = {false, false, false, "", NULL};
	char holder[LEADER_IDENTITY_MAX] = "";
	char stale[256] = "";

	if (sv->leader) {
		e.on = true;
		e.observed = leader_observed(sv->leader);
		e.leading = leader_is_leading(sv->leader);
		leader_holder(sv->leader, holder, sizeof(holder));
		e.holder = holder;
	}
	pthread_mutex_lock(&sv->mu);
	if (sv->infs && informer_set_stale(sv->infs, clock_now(clock_real()), READY_STALE_NS, stale,
					   sizeof(stale)))
		e.stale = stale;
	pthread_mutex_unlock(&sv->mu);
	return health_ready(&sv->health, &e, body);
}

/* /debug/nodes: the last node explanations (explainer_json). */
static int page_nodes(void *ctx, struct buf *body)
{
	struct serve *sv = ctx;
	struct explainer *e;

	pthread_mutex_lock(&sv->mu);
	e = sv->explain;
	pthread_mutex_unlock(&sv->mu);
	if (!e) {
		buf_puts(body, "{\"error\":\"luascale is starting: no node explanations yet\"}\n");
		return 503;
	}
	return explainer_json(e, body);
}

/* leader_opts.may_renew: a process whose loop is stuck (/healthz would
 * answer 503) does not keep the Lease. On the elector's thread. */
static bool loop_healthy(void *ctx)
{
	struct serve *sv = ctx;
	struct buf why = BUF_INIT;
	int code = health_live(&sv->health, &why);

	if (code != 200)
		log_at(sv->log, LOG_WARN, clock_wall(clock_real()), "leader election: not renewing: %s",
		       why.data ? why.data : "unhealthy");
	buf_free(&why);
	return code == 200;
}

/* On the elector's thread. */
static void on_leadership(void *ctx, bool leading)
{
	struct serve *sv = ctx;

	pthread_mutex_lock(&sv->mu);
	if (leading) {
		if (sv->batch)
			batcher_request(sv->batch); /* a round now, on the synced cache */
	} else if (sv->act) {
		actuator_log_in_flight(sv->act, "leadership lost");
	}
	pthread_mutex_unlock(&sv->mu);
}

struct serve *serve_new(const struct config *c, bool server, const char *no_election,
			const struct kube_config *kc, struct fence *fence, const struct logger *log,
			struct errbuf *err)
{
	struct serve *sv = calloc(1, sizeof(*sv));

	if (!sv) {
		errbuf_set(err, "out of memory");
		return NULL;
	}
	sv->c = c;
	sv->log = log;
	pthread_mutex_init(&sv->mu, NULL);
	health_init(&sv->health, clock_real(),
		    health_limit_ns(c->reconcile_interval_ms, c->policy_timeout_ms));
	sv->m = metrics_new();
	if (!sv->m || instruments_init(&sv->ins, sv->m, LUASCALE_VERSION) < 0 ||
	    metrics_on_collect(sv->m, collect, sv) < 0) {
		errbuf_set(err, "out of memory");
		goto fail;
	}
	if (c->leader_election && no_election) {
		log_at(log, LOG_WARN, clock_wall(clock_real()),
		       "%s takes no part in leader election (it writes no Lease): do not run it "
		       "beside a running replica", no_election);
	} else if (c->leader_election) {
		struct kube_client_opts lo;
		struct leader_opts o;
		char id[LEADER_IDENTITY_MAX];

		if (leader_default_identity(id, sizeof(id), NULL, err) < 0)
			goto fail;
		memset(&lo, 0, sizeof(lo));
		lo.log = log;
		/* a renewal must end (and the next be tried) well before the deadline */
		lo.request_timeout_ms = (long)(c->renew_deadline_ms / 2);
		lo.connect_timeout_ms = lo.request_timeout_ms < 5000 ? lo.request_timeout_ms : 5000;
		lo.on_response = serve_on_response;
		lo.on_response_ctx = sv;
		sv->lease_client = kube_client_new(kc, &lo, err);
		if (!sv->lease_client)
			goto fail;
		memset(&o, 0, sizeof(o));
		o.client = sv->lease_client;
		o.log = log;
		o.ns = c->lease_namespace;
		o.name = c->lease_name;
		o.identity = id;
		snprintf(sv->identity, sizeof(sv->identity), "%s", id);
		o.lease_duration_ns = c->lease_duration_ms * CLOCK_NS_PER_MS;
		o.renew_deadline_ns = c->renew_deadline_ms * CLOCK_NS_PER_MS;
		o.retry_period_ns = c->retry_period_ms * CLOCK_NS_PER_MS;
		o.on_change = on_leadership;
		o.may_renew = loop_healthy;
		o.fence = fence;
		sv->fence = fence;
		o.ctx = sv;
		sv->leader = leader_new(&o, err);
		if (!sv->leader)
			goto fail;
		log_at(log, LOG_INFO, clock_wall(clock_real()),
		       "leader election on the Lease %s/%s as %s (lease %llds, renew deadline %llds, retry %llds)",
		       c->lease_namespace, c->lease_name, id, (long long)(c->lease_duration_ms / 1000),
		       (long long)(c->renew_deadline_ms / 1000), (long long)(c->retry_period_ms / 1000));
	}
	if (server && c->server_enabled) {
		struct httpserver_route r[] = {
			{"/metrics", "text/plain; version=0.0.4; charset=utf-8", page_metrics, sv},
			{"/healthz", "text/plain; charset=utf-8", page_healthz, sv},
			{"/readyz", "text/plain; charset=utf-8", page_readyz, sv},
			{"/debug/nodes", "application/json", page_nodes, sv},
		};

		sv->http = httpserver_start(c->server_listen, r, sizeof(r) / sizeof(r[0]), err);
		if (!sv->http) {
			errbuf_prefix(err, "server.listen");
			goto fail;
		}
		log_at(log, LOG_INFO, clock_wall(clock_real()),
		       "serving /metrics, /healthz, /readyz and /debug/nodes on %s (port %d)",
		       c->server_listen,
		       httpserver_port(sv->http));
	}
	return sv;
fail:
	serve_free(sv);
	return NULL;
}

void serve_free(struct serve *sv)
{
	if (!sv)
		return;
	httpserver_stop(sv->http);
	leader_free(sv->leader);
	kube_client_free(sv->lease_client);
	metrics_free(sv->m);
	pthread_mutex_destroy(&sv->mu);
	free(sv);
}

const struct instruments *serve_instruments(struct serve *sv)
{
	return &sv->ins;
}

void serve_on_response(void *ctx, const char *verb, long status)
{
	struct serve *sv = ctx;
	char code[16];

	snprintf(code, sizeof(code), "%ld", status);
	metric_inc2(sv->ins.api_requests, verb, code);
}

static void on_provider_call(void *ctx, const char *op, enum provider_error code, double seconds)
{
	struct serve *sv = ctx;

	metric_inc2(sv->ins.provider_calls, op, code == PROVIDER_OK ? "ok" : provider_error_str(code));
	metric_observe1(sv->ins.provider_seconds, op, seconds);
	if (code == PROVIDER_THROTTLED)
		metric_inc1(sv->ins.provider_throttles, op);
}

struct provider *serve_wrap_provider(struct serve *sv, struct provider *p)
{
	return p ? provider_observed_new(p, NULL, on_provider_call, sv) : NULL;
}

void serve_attach(struct serve *sv, struct informer_set *infs, struct actuator *act,
		  struct provider *prov, struct kube_client *client, struct batcher *batch)
{
	pthread_mutex_lock(&sv->mu);
	if (infs)
		sv->infs = infs;
	if (act)
		sv->act = act;
	if (prov)
		sv->prov = prov;
	if (client)
		sv->client = client;
	if (batch)
		sv->batch = batch;
	pthread_mutex_unlock(&sv->mu);
}

void serve_attach_executor(struct serve *sv, struct executor *ex)
{
	pthread_mutex_lock(&sv->mu);
	sv->ex = ex;
	pthread_mutex_unlock(&sv->mu);
}

void serve_attach_explainer(struct serve *sv, struct explainer *e)
{
	pthread_mutex_lock(&sv->mu);
	sv->explain = e;
	pthread_mutex_unlock(&sv->mu);
}

const char *serve_identity(const struct serve *sv)
{
	return sv->identity;
}

bool serve_may_act(void *ctx)
{
	struct serve *sv = ctx;

	return !sv->leader || leader_is_leading(sv->leader);
}

bool serve_electing(struct serve *sv)
{
	return sv->leader != NULL;
}

int serve_synced(struct serve *sv, struct errbuf *err)
{
	health_synced(&sv->health);
	if (!sv->leader || sv->election_started)
		return 0;
	if (leader_start(sv->leader, err) < 0)
		return -1;
	sv->election_started = true;
	return 0;
}

void serve_progress(struct serve *sv)
{
	health_progress(&sv->health);
}

void serve_round(struct serve *sv, int rc, const struct round_stats *rs, double seconds,
		 const struct snapshot *s)
{
	const char *outcome = rc < 0 ? "error" : rs->policy_failed ? "policy_error" : "ok";

	metric_inc1(sv->ins.reconciles, outcome);
	metric_observe0(sv->ins.reconcile_seconds, seconds);
	if (rc == 0 && !rs->policy_failed)
		metric_set0(sv->ins.last_success, (double)clock_wall(clock_real()));
	if (s)
		instruments_snapshot(&sv->ins, s);
}

void serve_stop_election(struct serve *sv)
{
	struct errbuf err;

	if (!sv || !sv->leader || !sv->election_started)
		return;
	leader_stop(sv->leader);
	sv->election_started = false;
	if (leader_release(sv->leader, &err) < 0)
		log_at(sv->log, LOG_WARN, clock_wall(clock_real()), "%s", err.msg);
}
