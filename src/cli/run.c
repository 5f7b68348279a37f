/*
 * cli/run: `luascale run`, the daemon — informers on the API server, the
 * reconcile loop (batched on watch events, with a periodic resync), the
 * policy with hot reload on SIGHUP, and the actuator with the provider and
 * the Kubernetes writes. Signals are blocked in every thread and taken by
 * one thread of their own (sigwait), which calls into the rest as any
 * thread may; it starts as soon as the config is read. SIGTERM/SIGINT
 * stop it within a second in every phase, the policy's first load
 * included: in-flight writes get a deadline to finish; what is left is
 * logged as abandoned.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"
#include "cli/cli.h"
#include "cli/run_ops.h"
#include "cli/serve.h"
#include "config.h"
#include "engine/actuator.h"
#include "engine/binder.h"
#include "engine/cloudgroups.h"
#include "engine/interruptions.h"
#include "engine/batcher.h"
#include "engine/explain.h"
#include "engine/reconciler.h"
#include "engine/round.h"
#include "kube/client.h"
#include "kube/leader.h"
#include "runtime/fence.h"
#include "runtime/ratelimit.h"
#include "kube/informer.h"
#include "kube/kubeconfig.h"
#include "kube/kubeops_http.h"
#include "log.h"
#include "providers/provider.h"
#include "providers/registry.h"
#include "runtime/clock.h"
#include "runtime/executor.h"

/* In-flight writes get this long after SIGTERM, then every request is cut:
 * the whole shutdown stays inside Kubernetes' default 30 s grace period. */
#define SHUTDOWN_GRACE_S 20
#define ONCE_TIMEOUT_S 600

/*
 * Reading the cluster at the start: the first failed list is said at once,
 * with where the server's address came from; --once gives up after
 * cluster.sync_timeout, the daemon retries for as long as it takes.
 */
struct sync_report {
	const struct logger *log;
	const char *server;     /* the client's URL, redacted */
	char origin[1200];      /* context "x" of kubeconfig FILE, or in-cluster */
	bool once;
	int64_t timeout_ms;
	atomic_int state;       /* 0 reading, 1 a failure said, 2 read */
};

/* informer_opts.on_list_failed: says the first failure before the cluster
 * was read, once. */
static void sync_list_failed(void *ctx, enum informer_kind kind, const char *what)
{
	struct sync_report *r = ctx;
	int reading = 0;
	char next[96];

	if (!atomic_compare_exchange_strong(&r->state, &reading, 1))
		return;
	if (r->once)
		snprintf(next, sizeof(next), "retrying for %g s at most (cluster.sync_timeout)",
			 (double)r->timeout_ms / 1000);
	else
		snprintf(next, sizeof(next), "retrying until it answers");
	log_at(r->log, LOG_WARN, clock_wall(clock_real()),
	       "cannot read the cluster from the API server %s (%s): %s: %s; %s", r->server,
	       r->origin, informer_kind_str(kind), what, next);
}

/*
 * The signal thread's view of the daemon. The thread starts before the
 * daemon's parts exist: the main thread publishes each one under 'mu' once
 * it is made (sigctx_publish), the thread reads them under 'mu' and skips
 * those still NULL. Everything published is freed only after the thread is
 * joined.
 */
struct sigctx {
	sigset_t set;               /* SIGHUP, SIGTERM, SIGINT: blocked everywhere */
	pthread_t thread;
	bool started;
	atomic_bool stop;           /* SIGTERM or SIGINT came */
	atomic_bool done;           /* the thread is to end */
	_Atomic int64_t stop_at;    /* clock_real() ns of the stop request */
	/* set by the stop path; the reconciler's policy calls, and the policy's
	 * first load, end on it */
	atomic_bool policy_cancel;
	const struct logger *log;   /* set before the thread starts */
	pthread_mutex_t mu;         /* guards the pointers and flag below */
	struct reconciler *rec;
	struct batcher *batch;
	struct informer_set *infs;
	struct kube_client *client;
	bool reload_pending;        /* a SIGHUP came before the reconciler existed */
};

/* The parts that begin_stop() reaches, under sc->mu; each may be NULL. */
static void stop_parts_locked(struct sigctx *sc, enum kube_cancel level)
{
	if (sc->batch)
		batcher_stop(sc->batch);
	if (sc->infs)
		informer_set_cancel(sc->infs);
	if (sc->client)
		kube_client_cancel(sc->client, level);
}

/* The stop path, from the signal thread: every wait of the main thread and
 * the informers ends now; reads in flight end within a second. */
static void begin_stop(struct sigctx *sc, int sig)
{
	struct clock *clock = clock_real();

	if (atomic_exchange(&sc->stop, true)) {
		log_at(sc->log, LOG_INFO, clock_wall(clock), "%s: already stopping",
		       sig == SIGINT ? "SIGINT" : "SIGTERM");
		return;
	}
	atomic_store(&sc->stop_at, clock_now(clock));
	log_at(sc->log, LOG_INFO, clock_wall(clock), "%s: stopping",
	       sig == SIGINT ? "SIGINT" : "SIGTERM");
	atomic_store(&sc->policy_cancel, true);
	pthread_mutex_lock(&sc->mu);
	stop_parts_locked(sc, KUBE_CANCEL_READS);
	pthread_mutex_unlock(&sc->mu);
}

/*
 * Called by the main thread once it has made a part (each argument may be
 * NULL: not published by this call): from now on a stop reaches it. A part
 * published after the stop came is stopped at once (the main thread also
 * checks sc->stop after each step). A reconciler published after a SIGHUP
 * gets that reload requested.
 */
static void sigctx_publish(struct sigctx *sc, struct reconciler *rec, struct batcher *batch,
			   struct informer_set *infs, struct kube_client *client)
{
	pthread_mutex_lock(&sc->mu);
	if (rec)
		sc->rec = rec;
	if (batch)
		sc->batch = batch;
	if (infs)
		sc->infs = infs;
	if (client)
		sc->client = client;
	if (rec && sc->reload_pending) {
		reconciler_request_reload(rec);
		sc->reload_pending = false;
	}
	if (atomic_load(&sc->stop))
		stop_parts_locked(sc, KUBE_CANCEL_READS);
	pthread_mutex_unlock(&sc->mu);
}

/* SIGHUP: the reload happens before the next round; before the policy is
 * loaded it is remembered (the file may have changed after it was read). */
static void on_hup(struct sigctx *sc)
{
	pthread_mutex_lock(&sc->mu);
	if (sc->rec) {
		log_at(sc->log, LOG_INFO, clock_wall(clock_real()),
		       "SIGHUP: the config and its policy will be reloaded before the next round");
		reconciler_request_reload(sc->rec);
		if (sc->batch)
			batcher_request(sc->batch);
	} else {
		log_at(sc->log, LOG_INFO, clock_wall(clock_real()),
		       "SIGHUP while starting: the config and its policy will be reloaded before the first round");
		sc->reload_pending = true;
	}
	pthread_mutex_unlock(&sc->mu);
}

static void *signal_thread(void *arg)
{
	struct sigctx *sc = arg;
	bool cut = false;

	while (!atomic_load(&sc->done)) {
		int sig = 0;

		if (atomic_load(&sc->stop) && !cut) {
			/* the grace period of in-flight writes: then cut them */
			int64_t end = atomic_load(&sc->stop_at) + SHUTDOWN_GRACE_S * CLOCK_NS_PER_S;
			int64_t left = end - clock_now(clock_real());
			struct timespec ts;

			if (left <= 0) {
				log_at(sc->log, LOG_WARN, clock_wall(clock_real()),
				       "the %d s grace period is over: ending every request in flight",
				       SHUTDOWN_GRACE_S);
				pthread_mutex_lock(&sc->mu);
				if (sc->client)
					kube_client_cancel(sc->client, KUBE_CANCEL_ALL);
				pthread_mutex_unlock(&sc->mu);
				cut = true;
				continue;
			}
			ts.tv_sec = (time_t)(left / CLOCK_NS_PER_S);
			ts.tv_nsec = (long)(left % CLOCK_NS_PER_S);
			sig = sigtimedwait(&sc->set, NULL, &ts);
			if (sig < 0)
				continue; /* EAGAIN (time is up) or EINTR */
		} else if (sigwait(&sc->set, &sig) != 0) {
			continue;
		}
		if (atomic_load(&sc->done))
			break;
		if (sig == SIGHUP) {
			on_hup(sc);
		} else if (sig == SIGTERM || sig == SIGINT) {
			begin_stop(sc, sig);
		}
	}
	return NULL;
}

static void on_change(void *ctx, enum informer_kind kind, enum informer_change change)
{
	(void)kind;
	if (change == INFORMER_UNSCHEDULABLE)
		batcher_new_pod(ctx);
	else if (change == INFORMER_CHANGED)
		batcher_event(ctx);
	/* INFORMER_UNCHANGED: nothing a decision reads; the window goes on */
}

/*
 * What the cloud last said of the node groups. Each round asks again; when
 * it cannot answer, the last answer still places nodes in their groups and
 * gives the limits (a launch reads the size afresh anyway).
 */
struct cloud_view {
	struct provider_group *groups;
	size_t n;
	bool known;
	char failed[PROVIDER_MESSAGE_MAX + 32]; /* why the last ask failed ("kind: message"),
						 * "" when it did not */
};

static void cloud_view_refresh(struct cloud_view *v, struct provider *prov, struct actuator *act,
			       struct executor *ex, int64_t now, const struct logger *log)
{
	struct provider_group *groups;
	struct provider_status st;
	size_t n;

	if (!prov || !prov->ops->list_groups)
		return;
	v->failed[0] = '\0';
	if (prov->ops->list_groups(prov, &groups, &n, &st) < 0) {
		snprintf(v->failed, sizeof(v->failed), "%s: %s", provider_error_str(st.code), st.message);
		log_at(log, LOG_WARN, now, "cannot read the node groups from the cloud (%s: %s); %s",
		       provider_error_str(st.code), st.message,
		       v->known ? "using what it said last time, and counting only what this "
				  "process launched as upcoming"
				: "groups whose size only the cloud knows cannot grow this round");
		return;
	}
	/* the cloud's prices, from the provider's cache (refreshed on the work queue) */
	if (prov->ops->prices)
		prov->ops->prices(prov, groups, n, ex);
	provider_groups_free(v->groups, v->n);
	v->groups = groups;
	v->n = n;
	v->known = true;
	/* the instances without nodes the actuator sweeps (only from a fresh list) */
	if (act)
		actuator_cloud_instances(act, groups, n);
}

/*
 * The round's snapshot: the cluster as the informers have it, with the
 * config's groups completed by the cloud (instances launched before a
 * restart, not yet nodes, count as capacity on its way).
 */
static struct snapshot *round_snapshot(struct informer_set *infs, const struct config *c,
				       const struct cloud_view *v, int64_t now,
				       const struct logger *log, struct errbuf *err)
{
	struct arena *a = arena_new();
	struct node_group *groups;
	struct snapshot *s = NULL;
	size_t n;

	if (!a) {
		errbuf_set(err, "out of memory");
		return NULL;
	}
	if (cloudgroups_build(a, c->groups, c->group_extra, c->n_groups,
			      v->known ? v->groups : NULL, v->known ? v->n : 0, now, log,
			      &groups, &n, err) == 0)
		s = informer_snapshot(infs, groups, n, now, err);
	arena_free(a);
	return s;
}

/* Writes this process's id and a newline to 'path' (replacing it), for
 * `kill -HUP "$(cat path)"`. 0, or -1 with why. */
static int write_pid_file(const char *path, struct errbuf *err)
{
	FILE *f = fopen(path, "w");
	int bad;

	if (!f)
		return errbuf_set(err, "cannot write %s: %s", path, strerror(errno));
	bad = fprintf(f, "%d\n", (int)getpid()) < 0;
	bad |= fclose(f) != 0;
	if (bad) {
		unlink(path);
		return errbuf_set(err, "cannot write %s: %s", path, strerror(errno));
	}
	return 0;
}

static void run_usage(FILE *f)
{
	fputs("usage: luascale run --config FILE [--dry-run] [--once] [--context NAME] [--no-server]\n"
	      "                    [--log-format text|json] [--log-level LEVEL] [--pid-file FILE]\n"
	      "\n"
	      "The autoscaler: watches the cluster named in the config, runs the\n"
	      "policy on every change (batched) and periodically, and carries out\n"
	      "what the safety checks accept.\n"
	      "\n"
	      "  --dry-run       execute nothing; log every action that would be taken\n"
	      "  --once          one reconcile, wait for its actions, exit (for cron)\n"
	      "  --context NAME  the kubeconfig context (overrides cluster.context)\n"
	      "  --log-format F  text (default) or json: one object a line (log.format)\n"
	      "  --log-level L   debug, info (default), warn or error (log.level; debug adds\n"
	      "                  the watches' and the actuator's detail)\n"
	      "  --no-server     no HTTP endpoint (/metrics, /healthz, /readyz, /debug/nodes;\n"
	      "                  server.listen)\n"
	      "  --pid-file FILE write the process id to FILE (removed at exit), for\n"
	      "                  kill -HUP \"$(cat FILE)\"\n"
	      "\n"
	      "signals: SIGHUP reloads the config and its policy (the running ones stay if\n"
	      "the new ones fail); SIGTERM and SIGINT stop within a second, giving writes in\n"
	      "flight 20s.\n"
	      "A change to the config or policy file reloads it too (reload.watch).\n"
	      "\n"
	      "exit status: 0 stopped (or --once done), 1 usage, 2 bad config, or the cluster\n"
	      "or the provider cannot be reached at start, 3 the policy cannot be loaded,\n"
	      "5 --once: the cloud's node groups cannot be read (credentials refused or\n"
	      "missing, metadata endpoint down); nothing is decided.\n",
	      f);
}

static struct provider *make_provider(const struct config *c, struct kube_client *client,
				      const struct logger *log, const atomic_bool *stop)
{
	const struct provider_kind *kind = provider_kind_find(c->provider_kind);
	struct provider_make_opts o;
	struct provider_limits lim;
	struct errbuf err;
	struct provider *p;

	if (!c->provider_kind[0]) {
		log_at(log, LOG_WARN, clock_wall(clock_real()),
		       "no provider configured (provider.kind): scale-ups will fail");
		return NULL;
	}
	if (!kind) {
		char known[128];

		provider_kind_list(known, sizeof(known));
		log_at(log, LOG_ERROR, clock_wall(clock_real()),
		       "provider kind \"%s\" is not available in this build (available: %s)", c->provider_kind,
		       known);
		return NULL;
	}
	provider_limits_from(&lim, c);
	o = (struct provider_make_opts){c, log, stop, client, &lim};
	p = kind->make(&o, &err);
	if (!p)
		log_at(log, LOG_ERROR, clock_wall(clock_real()), "provider %s: %s", kind->name, err.msg);
	return p;
}

int cli_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"dry-run", no_argument, NULL, 'd'},
		{"once", no_argument, NULL, '1'},
		{"context", required_argument, NULL, 'x'},
		{"log-format", required_argument, NULL, 'L'},
		{"log-level", required_argument, NULL, 'V'},
		{"no-server", no_argument, NULL, 'S'},
		{"pid-file", required_argument, NULL, 'P'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *config_path = getenv("LUASCALE_CONFIG"), *context = NULL, *pid_file = NULL;
	bool pid_written = false;
	bool dry_run = false, once = false, log_format_set = false, no_server = false;
	int log_level = -1; /* --log-level; -1: the config's log.level */
	enum log_format log_format = LOG_FORMAT_TEXT;
	struct run_ops *ops = NULL;
	const struct config *cur;
	struct serve *sv = NULL;
	struct explainer *explain = NULL;
	int64_t round_start;
	int round_rc;
	struct logger log = log_stderr(LOG_INFO);
	struct clock *clock = clock_real();
	struct config *c = NULL;
	struct kube_config *kc = NULL;
	struct kube_client *client = NULL;
	struct fence *fence = NULL;
	char user_agent[LEADER_IDENTITY_MAX + 64];
	struct kube_client_opts copts;
	struct kubeops_http *kh = NULL;
	struct kubeops kops;
	struct provider *prov = NULL;
	struct interruptions *intr = NULL;
	struct executor *ex = NULL;
	struct actuator *act = NULL;
	struct actuator_config acfg;
	struct binder_config bcfg;
	struct binder *binder = NULL;
	struct reconciler *rec = NULL;
	struct informer_set *infs = NULL;
	struct informer_opts iopts;
	struct sync_report sr;
	struct batcher *batch = NULL;
	struct batcher_policy bp;
	struct sigctx sc;
	struct cloud_view cloud = { NULL, 0, false, "" };
	struct errbuf err;
	int opt, rc = EXIT_INPUT;
	int64_t stop_at;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "c:d1x:L:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'c': config_path = optarg; break;
		case 'd': dry_run = true; break;
		case '1': once = true; break;
		case 'x': context = optarg; break;
		case 'L':
			if (log_format_parse(optarg, &log_format) < 0) {
				fprintf(stderr, "luascale run: --log-format: expected text or json, got \"%s\"\n", optarg);
				return EXIT_USAGE;
			}
			log_format_set = true;
			break;
		case 'V': {
			static const char *const levels[] = { "debug", "info", "warn", "error" };
			static const enum log_level values[] = { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };
			size_t k;

			for (k = 0; k < 4 && strcmp(optarg, levels[k]) != 0; k++)
				;
			if (k == 4) {
				fprintf(stderr, "luascale run: --log-level: expected debug, info, warn or error, got \"%s\"\n", optarg);
				return EXIT_USAGE;
			}
			log_level = (int)values[k];
			break;
		}
		case 'S': no_server = true; break;
		case 'P': pid_file = optarg; break;
		case 'h': run_usage(stdout); return EXIT_OK;
		default: run_usage(stderr); return EXIT_USAGE;
		}
	}
	if (!config_path || !*config_path) {
		fprintf(stderr, "luascale run: --config FILE is required\n");
		return EXIT_USAGE;
	}
	/* before any thread exists (curl's resolver, the pool, the informers):
	 * every thread inherits the mask, and only the signal thread takes them */
	memset(&sc, 0, sizeof(sc));
	atomic_init(&sc.stop, false);
	atomic_init(&sc.done, false);
	atomic_init(&sc.stop_at, 0);
	atomic_init(&sc.policy_cancel, false);
	pthread_mutex_init(&sc.mu, NULL);
	sc.log = &log;
	sigemptyset(&sc.set);
	sigaddset(&sc.set, SIGHUP);
	sigaddset(&sc.set, SIGTERM);
	sigaddset(&sc.set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sc.set, NULL);
	signal(SIGPIPE, SIG_IGN);
	c = config_load(config_path, &err);
	if (!c) {
		fprintf(stderr, "luascale: %s\n", err.msg);
		pthread_mutex_destroy(&sc.mu);
		return EXIT_INPUT;
	}
	if (!log_format_set)
		log_format = c->log_json ? LOG_FORMAT_JSON : LOG_FORMAT_TEXT;
	log = log_for_format(log_format,
			     (enum log_level)(log_level >= 0 ? log_level : c->log_level));
	ops = run_ops_new(config_path, c, &log);
	if (!ops) {
		fprintf(stderr, "luascale: cannot start: out of memory\n");
		config_free(c);
		pthread_mutex_destroy(&sc.mu);
		return EXIT_INPUT;
	}
	log_at(&log, LOG_INFO, clock_wall(clock), "luascale %s starting: pid %d%s%s", LUASCALE_VERSION,
	       (int)getpid(), pid_file ? ", pid file " : "", pid_file ? pid_file : "");
	if (pid_file) {
		if (write_pid_file(pid_file, &err) < 0) {
			fprintf(stderr, "luascale: --pid-file: %s\n", err.msg);
			goto out;
		}
		pid_written = true;
	}
	/* from here on a SIGTERM is taken at once, while the rest is made (a
	 * policy whose top level runs long is cancelled): after each step the
	 * main thread checks sc.stop */
	if (pthread_create(&sc.thread, NULL, signal_thread, &sc) != 0) {
		fprintf(stderr, "luascale: cannot start: cannot create the signal thread\n");
		goto out;
	}
	sc.started = true;
	if (c->in_cluster) {
		struct kube_incluster_env env;

		memset(&env, 0, sizeof(env));
		if (kube_config_incluster(&env, &kc, &err) < 0) {
			fprintf(stderr, "luascale: in-cluster config: %s\n", err.msg);
			goto out;
		}
	} else if (kubeconfig_load(c->kubeconfig, context ? context : c->context, &kc, &err) < 0) {
		fprintf(stderr, "luascale: %s\n", err.msg);
		goto out;
	}
	if (atomic_load(&sc.stop))
		goto stopped_starting;
	/* with leader election, every write of this process (API server and
	 * cloud) goes out only while its Lease is valid by its own clock */
	/* (a dry run's fence is never opened: its cloud calls are refused too) */
	if (((c->leader_election && !once) || dry_run) && !(fence = fence_new(clock_real()))) {
		fprintf(stderr, "luascale: out of memory\n");
		goto out;
	}
	sv = serve_new(c, !no_server, once ? "--once" : dry_run ? "--dry-run" : NULL, kc,
		       dry_run ? NULL : fence, &log, &err);
	if (!sv) {
		fprintf(stderr, "luascale: %s\n", err.msg);
		goto out;
	}
	/* why each node stays: /debug/nodes and the status, every intervals.explain */
	explain = explainer_new(c->explain_interval_ms * CLOCK_NS_PER_MS);
	if (!explain) {
		fprintf(stderr, "luascale: out of memory\n");
		goto out;
	}
	serve_attach_explainer(sv, explain);
	run_ops_explain(ops, explain, clock);
	memset(&copts, 0, sizeof(copts));
	copts.log = &log;
	copts.on_response = serve_on_response;
	copts.on_response_ctx = sv;
	copts.write_qps = c->write_qps;
	copts.write_burst = (int)c->write_burst;
	copts.fence = fence;
	copts.read_only = dry_run; /* a dry run writes nothing at all, whatever asks */
	if (serve_identity(sv)[0]) {
		snprintf(user_agent, sizeof(user_agent), "luascale/%s (%s)", LUASCALE_VERSION,
			 serve_identity(sv));
		copts.user_agent = user_agent;
	}
	client = kube_client_new(kc, &copts, &err);
	if (!client) {
		fprintf(stderr, "luascale: %s\n", err.msg);
		goto out;
	}
	sigctx_publish(&sc, NULL, NULL, NULL, client);
	if (atomic_load(&sc.stop))
		goto stopped_starting;
	log_at(&log, LOG_INFO, clock_wall(clock), "loading the policy %s", c->policy_path);
	rec = reconciler_new_cancellable(c, NULL, &sc.policy_cancel, &err);
	if (!rec && atomic_load(&sc.stop))
		goto stopped_starting; /* the load was cancelled, not refused */
	if (!rec) {
		fprintf(stderr, "luascale: policy: %s\n", err.msg);
		rc = EXIT_POLICY;
		goto out;
	}
	sigctx_publish(&sc, rec, NULL, NULL, NULL);
	if (atomic_load(&sc.stop))
		goto stopped_starting;
	kh = kubeops_http_new(client, NULL);
	kubeops_http_bind(kh, &kops);
	prov = make_provider(c, client, &log, &sc.stop);
	if (prov && prov->mutating)
		ratelimit_set_fence(prov->mutating, fence); /* every cloud write takes its token */
	prov = serve_wrap_provider(sv, prov);
	if (!prov && *c->provider_kind) {
		/* a cloud that is configured but cannot be reached is no dry run */
		fprintf(stderr, "luascale: the %s provider cannot start (see above)\n", c->provider_kind);
		goto out;
	}
	{
		/* provider calls block their worker: the pool grows to what the
		 * provider's bucket can keep busy, not a fixed 8 */
		struct provider_limits lim;
		struct executor_pool_opts po;

		provider_limits_from(&lim, c);
		actuator_pool_opts(&po, &lim, 4096);
		ex = executor_new_pool_opts(&po);
		if (!ex) {
			fprintf(stderr, "luascale: cannot start: cannot make the work queue\n");
			goto out;
		}
		log_at(&log, LOG_INFO, clock_wall(clock),
		       "work queue: %d worker threads, growing to %d while tasks wait behind slow calls",
		       po.workers, po.max_workers);
		serve_attach_executor(sv, ex);
	}
	actuator_config_from(&acfg, c);
	acfg.dry_run = dry_run;
	acfg.may_act = serve_may_act;
	acfg.may_act_ctx = sv;
	acfg.ins = serve_instruments(sv);
	binder_config_default(&bcfg);
	bcfg.enabled = c->bind_pods && !dry_run;
	bcfg.max_wait_s = c->max_provision_ms / 1000;
	bcfg.may_act = serve_may_act;
	bcfg.may_act_ctx = sv;
	bcfg.ins = acfg.ins;
	binder = ex ? binder_new(ex, &kops, &bcfg, &log) : NULL;
	acfg.hooks = binder_hooks(binder);
	act = actuator_new(ex, prov, &kops, &acfg, &log);
	memset(&bp, 0, sizeof(bp));
	/* a 0 ms window is "at once": 1 ns, since 0 asks the batcher for its default */
	bp.idle_ns = c->batch_idle_ms > 0 ? c->batch_idle_ms * CLOCK_NS_PER_MS : 1;
	bp.max_ns = c->batch_max_ms > 0 ? c->batch_max_ms * CLOCK_NS_PER_MS : 1;
	bp.new_pod_ns = c->batch_new_pod_ms > 0 ? c->batch_new_pod_ms * CLOCK_NS_PER_MS : 1;
	bp.interval_ns = c->reconcile_interval_ms * CLOCK_NS_PER_MS;
	batch = batcher_new(&bp, &err);
	memset(&sr, 0, sizeof(sr));
	sr.log = &log;
	sr.server = kube_client_server(client);
	if (c->in_cluster)
		snprintf(sr.origin, sizeof(sr.origin), "in-cluster, the pod's service account");
	else
		snprintf(sr.origin, sizeof(sr.origin), "context \"%s\" of kubeconfig %s", kc->context,
			 kc->source ? kc->source : c->kubeconfig);
	sr.once = once;
	sr.timeout_ms = c->sync_timeout_ms;
	atomic_init(&sr.state, 0);
	memset(&iopts, 0, sizeof(iopts));
	iopts.client = client;
	iopts.log = &log;
	iopts.on_change = on_change;
	iopts.on_change_ctx = batch;
	iopts.on_list_failed = sync_list_failed;
	iopts.on_list_failed_ctx = &sr;
	infs = batch ? informer_set_new(&iopts, &err) : NULL;
	intr = interruptions_new();
	if (!intr)
		errbuf_set(&err, "out of memory");
	if (!kh || !ex || !binder || !act || !batch || !infs || !intr) {
		fprintf(stderr, "luascale: cannot start: %s\n", err.msg);
		goto out;
	}
	sigctx_publish(&sc, NULL, batch, infs, NULL);
	serve_attach(sv, infs, act, prov, client, batch);
	if (atomic_load(&sc.stop))
		goto stopped_starting;
	if (!once && run_ops_watch(ops, rec, batch, &err) < 0)
		log_at(&log, LOG_WARN, clock_wall(clock), "file changes do not reload (SIGHUP does): %s",
		       err.msg);

	log_at(&log, LOG_INFO, clock_wall(clock), "luascale %s: cluster %s (context %s), policy %s%s",
	       LUASCALE_VERSION, kube_client_server(client), c->in_cluster ? "in-cluster" : (context ? context : c->context),
	       reconciler_policy_path(rec), dry_run ? ", dry run: nothing will be executed" : "");
	if (informer_set_start(infs, &err) < 0) {
		log_at(&log, LOG_ERROR, clock_wall(clock), "cannot read the cluster: %s", err.msg);
		goto stop;
	}
	/* --once gives up after cluster.sync_timeout; the daemon waits for as
	 * long as it takes (a SIGTERM ends the wait) */
	if (informer_set_wait_synced(infs, once ? clock_now(clock) + c->sync_timeout_ms * CLOCK_NS_PER_MS
					       : INT64_MAX, &err) < 0) {
		if (atomic_load(&sc.stop)) {
			log_at(&log, LOG_INFO, clock_wall(clock),
			       "stopped before the cluster state was read");
			rc = EXIT_OK;
		} else if (once) {
			log_at(&log, LOG_ERROR, clock_wall(clock),
			       "cannot read the cluster within %g s (cluster.sync_timeout) from the API "
			       "server %s (%s): %s", (double)c->sync_timeout_ms / 1000, sr.server,
			       sr.origin, err.msg);
		} else {
			log_at(&log, LOG_ERROR, clock_wall(clock),
			       "cannot read the cluster from the API server %s (%s): %s", sr.server,
			       sr.origin, err.msg);
		}
		goto stop;
	}
	atomic_store(&sr.state, 2);
	if (serve_synced(sv, &err) < 0) {
		log_at(&log, LOG_ERROR, clock_wall(clock), "cannot start: %s", err.msg);
		goto stop;
	}
	log_at(&log, LOG_INFO, clock_wall(clock), serve_electing(sv)
	       ? "cluster state read; reconciling whenever this process leads"
	       : "cluster state read; reconciling");
	if (dry_run) {
		log_at(&log, LOG_INFO, clock_wall(clock),
		       "dry run: no Events, no status ConfigMap, no Lease, no node mark and no cloud "
		       "call are written; the plans and the status are logged");
		if (run_ops_report_dry(ops, &err) < 0)
			log_at(&log, LOG_WARN, clock_wall(clock), "no status: %s", err.msg);
	} else if (run_ops_report(ops, client, &err) < 0)
		log_at(&log, LOG_WARN, clock_wall(clock), "no status ConfigMap nor Events: %s", err.msg);

	while (!atomic_load(&sc.stop)) {
		enum batcher_reason why = once ? BATCH_FIRST : batcher_wait(batch);
		struct snapshot *s;
		struct round_stats rs;
		struct round_opts ro;
		char stale[512];

		if (why == BATCH_NONE || atomic_load(&sc.stop))
			break;
		serve_progress(sv);
		if (!serve_may_act(sv)) {
			run_ops_set_active(ops, false); /* no status, no Events */
			continue; /* standby: the caches follow, nothing is decided */
		}
		run_ops_set_active(ops, true);
		memset(&ro, 0, sizeof(ro));
		run_ops_round_opts(ops, &ro);
		round_start = clock_now(clock);
		ro.ins = serve_instruments(sv);
		ro.binder = binder;
		cloud_view_refresh(&cloud, prov, act, ex, clock_wall(clock), &log);
		/* the cloud's interruption notices (reading them consumes the
		 * queue: only the leader, and never in a dry run) */
		if (!dry_run)
			interruptions_poll(intr, prov, &log, clock_wall(clock));
		cur = run_ops_config(ops);
		if (once && cloud.failed[0]) {
			/* no earlier answer to fall back on, and a cron job must see it:
			 * nothing is decided without the cloud's groups */
			log_at(&log, LOG_ERROR, clock_wall(clock),
			       "cannot read the node groups from the %s provider (%s); --once decides "
			       "nothing without them (exit status %d)", c->provider_kind, cloud.failed,
			       EXIT_CLOUD);
			rc = EXIT_CLOUD;
			goto stop;
		}
		s = round_snapshot(infs, cur, &cloud, clock_wall(clock), &log, &err);
		if (s && run_ops_apply_config(ops, rec, s, clock_wall(clock))) {
			/* a config put in place: this round sees its groups */
			snapshot_free(s);
			cur = run_ops_config(ops);
			s = round_snapshot(infs, cur, &cloud, clock_wall(clock), &log, &err);
		}
		if (!s) {
			log_at(&log, LOG_ERROR, clock_wall(clock), "snapshot failed: %s", err.msg);
			continue;
		}
		interruptions_mark(intr, s, &log, serve_instruments(sv));
		/* a cache that has not followed the server for too long may miss
		 * pods that a removal would evict: no scale-down on it */
		if (informer_set_stale(infs, clock_now(clock), cur->max_cache_staleness_ms * CLOCK_NS_PER_MS,
				       stale, sizeof(stale)))
			ro.stale = stale;
		round_rc = round_run_opts(rec, act, s, &ro, &log, &rs, &err);
		serve_round(sv, round_rc, &rs, (double)(clock_now(clock) - round_start) / CLOCK_NS_PER_S, s);
		if (round_rc < 0)
			log_at(&log, LOG_ERROR, clock_wall(clock), "reconcile failed: %s", err.msg);
		else
			log_at(&log, LOG_DEBUG, clock_wall(clock),
			       "reconcile (%s): %zu action(s), %zu rejected, policy %.1f ms",
			       batcher_reason_str(why), rs.actions, rs.rejected, rs.policy_ms);
		snapshot_free(s);
		if (once) {
			struct actuator_stats st;
			int64_t deadline = clock_now(clock) + ONCE_TIMEOUT_S * CLOCK_NS_PER_S;

			/* wait for this round's actions (a condition with a deadline) */
			for (;;) {
				struct timespec ts = {0, 50 * 1000 * 1000};

				actuator_get_stats(act, &st);
				if (st.busy == 0 || atomic_load(&sc.stop) || clock_now(clock) > deadline)
					break;
				nanosleep(&ts, NULL);
			}
			break;
		}
	}
	rc = EXIT_OK;
stop:
	run_ops_set_active(ops, false); /* nothing more reported once stopping */
	stop_at = atomic_load(&sc.stop) ? atomic_load(&sc.stop_at) : clock_now(clock);
	log_at(&log, LOG_INFO, clock_wall(clock), "stopping: giving in-flight actions until %d s after the stop",
	       SHUTDOWN_GRACE_S);
	informer_set_stop(infs);
	actuator_stop(act); /* drains stop and give their cordons back */
	serve_attach_executor(sv, NULL);
	{
		size_t cancelled = executor_shutdown(ex, stop_at + SHUTDOWN_GRACE_S * CLOCK_NS_PER_S);

		ex = NULL;
		if (cancelled)
			log_at(&log, LOG_WARN, clock_wall(clock), "%zu queued task(s) abandoned at shutdown", cancelled);
	}
	/* nothing of ours is in flight any more: the other replica may act */
	serve_stop_election(sv);
	goto out;
stopped_starting:
	/* nothing has run yet: no action in flight, nothing to give back */
	log_at(&log, LOG_INFO, clock_wall(clock), "stopped while starting");
	rc = EXIT_OK;
out:
	if (sc.started) {
		atomic_store(&sc.done, true);
		pthread_kill(sc.thread, SIGHUP);
		pthread_join(sc.thread, NULL);
	}
	if (pid_written && unlink(pid_file) < 0 && errno != ENOENT)
		log_at(&log, LOG_WARN, clock_wall(clock), "cannot remove the pid file %s: %s", pid_file,
		       strerror(errno));
	run_ops_stop(ops);
	if (sv)
		serve_attach_executor(sv, NULL);
	if (ex)
		executor_shutdown(ex, clock_now(clock));
	serve_free(sv);
	actuator_free(act);
	binder_free(binder);
	informer_set_free(infs);
	batcher_free(batch);
	provider_groups_free(cloud.groups, cloud.n);
	interruptions_free(intr);
	provider_free(prov);
	kubeops_http_free(kh);
	reconciler_free(rec);
	run_ops_free(ops);
	explainer_free(explain); /* after the server and the reporting that read it */
	kube_client_free(client);
	fence_free(fence);
	kube_config_free(kc);
	config_free(c);
	pthread_mutex_destroy(&sc.mu);
	return rc;
}
