/*
 * cli/sim: `luascale sim` — a scenario's simulated world run in real time
 * and served as a Kubernetes API on 127.0.0.1 (sim/apiserver/apiserver.h), with a
 * kubeconfig written for kubectl, and each registered cloud's face on its
 * own options (--<cloud>-port, ...: sim/clouds/sim_cloud_kind.h). Runs until
 * SIGINT or SIGTERM; SIGHUP is logged and ignored.
 */
#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "config.h"
#include "log.h"
#include "luascale_clouds.h"
#include "quantity.h"
#include "runtime/clock.h"
#include "runtime/executor.h"
#include "sim/apiserver/apiserver.h"
#include "sim/clouds/sim_cloud_kind.h"
#include "sim/world/scenario.h"

#define DEFAULT_KUBECONFIG "./luascale-sim.kubeconfig"
#define MAX_FAULTS 32

/* the clouds of this build; each adds its options (sim_cloud_kind.h) */
#define X(k) +1
enum { N_SIM_CLOUDS = 0 LUASCALE_SIM_CLOUDS(X) };
#undef X
#define CLOUD_OPT_BASE 256 /* getopt's value of a cloud's option: this + its index */
#define MAX_CLOUD_OPTS (N_SIM_CLOUDS * SIM_CLOUD_MAX_OPTS)

/* A cloud as `luascale sim` runs it: its options' values and its face, once served. */
struct cloud_face {
	const struct sim_cloud_face *def; /* its options and serving */
	struct sim_face_args args;
	void *face;
};

/* The clouds by rank, and their options as getopt sees them: --<cloud>-<suffix>. */
struct cloud_opts {
	struct cloud_face clouds[N_SIM_CLOUDS + 1];
	size_t n_clouds;
	struct {
		size_t cloud, opt;
		char name[64];
	} opts[MAX_CLOUD_OPTS + 1];
	size_t n_opts;
};

/* The clouds by rank with their options' defaults. */
static void cloud_opts_init(struct cloud_opts *co)
{
	const struct sim_cloud_face *k;

	memset(co, 0, sizeof(*co));
	for (k = sim_cloud_face_next(NULL); k && co->n_clouds < N_SIM_CLOUDS; k = sim_cloud_face_next(k)) {
		struct cloud_face *cf = &co->clouds[co->n_clouds];
		size_t j;

		assert(k->n_opts >= 1 && k->n_opts <= SIM_CLOUD_MAX_OPTS && k->opts[0].port);
		cf->def = k;
		for (j = 0; j < k->n_opts && j < SIM_CLOUD_MAX_OPTS; j++) {
			if (k->opts[j].port)
				cf->args.port[j] = k->opts[j].dflt_port;
			else
				cf->args.path[j] = k->opts[j].dflt;
			co->opts[co->n_opts].cloud = co->n_clouds;
			co->opts[co->n_opts].opt = j;
			snprintf(co->opts[co->n_opts].name, sizeof(co->opts[co->n_opts].name), "%s-%s",
				 k->kind->name, k->opts[j].suffix);
			co->n_opts++;
		}
		co->n_clouds++;
	}
}

static void sim_usage(FILE *f)
{
	const struct sim_cloud_face *k;

	fputs("usage: luascale sim --listen 127.0.0.1:PORT --scenario FILE\n"
	      "                    [--kubeconfig-out FILE] [--fault SPEC]... [--log-level LEVEL]\n"
	      "                    [--watch-timeout DUR] [--default-requests cpu=Q,memory=Q|none]\n",
	      f);
	for (k = sim_cloud_face_next(NULL); k; k = sim_cloud_face_next(k))
		fputs(k->synopsis, f);
	fputs("\n"
	      "Runs the scenario's simulated world in real time and serves it as a\n"
	      "Kubernetes API (nodes, pods, evictions, PDBs, events, leases, configmaps)\n"
	      "on 127.0.0.1 only, for kubectl and `luascale run`. PORT 0 picks a free one.\n"
	      "Writes a kubeconfig (default " DEFAULT_KUBECONFIG ", context\n"
	      "\"luascale-sim\") and runs until SIGINT or SIGTERM. SIGHUP is logged and\n"
	      "ignored (a `kill -HUP` meant for `luascale run` does not stop it).\n"
	      "\n"
	      "faults (repeat --fault; also at run time: POST /apis/sim.luascale.io/v1/faults):\n"
	      "  drop-watches=DUR            cut every open watch every DUR\n"
	      "  expire-watches=N            the next N watches get an in-stream 410 Expired\n"
	      "  throttle=R[:VERB[:RES]]     429 on matching requests, R a probability\n"
	      "                              (0.3) or a count of next requests (3x)\n"
	      "  error=R[:VERB[:RES[:CODE]]] a 5xx (default 500) on matching requests\n"
	      "  latency=DUR                 every answer waits DUR\n"
	      "  down=DUR[@AFTER]            connection refused for DUR, AFTER from the start\n"
	      "  kubelet-down=NODE           the node's kubelet stops reporting (NotReady)\n"
	      "  kubelet-up=NODE             it reports again (Ready)\n"
	      "e.g. --fault throttle=0.5:create:pods/eviction --fault down=20s@2m\n"
	      "\n"
	      "  --log-level debug|info|warn|error   (default info; debug logs every request)\n"
	      "  --watch-timeout DUR                 a watch without timeoutSeconds ends after DUR\n"
	      "                                      (default 30m)\n"
	      "  --default-requests cpu=Q,memory=Q   the LimitRange \"defaults\" of namespace default:\n"
	      "                                      requests of containers that name none\n"
	      "                                      (default cpu=500m,memory=512Mi; \"none\": no LimitRange)\n",
	      f);
	for (k = sim_cloud_face_next(NULL); k; k = sim_cloud_face_next(k)) {
		fputs("\n", f);
		fputs(k->usage, f);
	}
}

static int parse_listen(const char *text, int *port)
{
	const char *p = text;
	char *end;
	long v;

	if (strncmp(p, "127.0.0.1:", 10) == 0)
		p += 10;
	else if (strncmp(p, "localhost:", 10) == 0)
		p += 10;
	else if (strchr(p, ':'))
		return -1;
	v = strtol(p, &end, 10);
	if (end == p || *end || v < 0 || v > 65535)
		return -1;
	*port = (int)v;
	return 0;
}

static int parse_level(const char *s, enum log_level *out)
{
	static const char *const names[] = {"debug", "info", "warn", "error"};
	int i;

	for (i = 0; i < 4; i++) {
		if (strcmp(s, names[i]) == 0) {
			*out = (enum log_level)i;
			return 0;
		}
	}
	return -1;
}

/* --default-requests "cpu=500m,memory=512Mi" or "none". 0, or -1 reported. */
static int parse_default_requests(const char *text, struct apiserver_opts *ao)
{
	char buf[128], *p, *next;

	ao->default_cpu[0] = ao->default_memory[0] = '\0';
	if (strcmp(text, "none") == 0)
		return 0;
	if (snprintf(buf, sizeof(buf), "%s", text) >= (int)sizeof(buf))
		goto bad;
	for (p = buf; p && *p; p = next) {
		char *eq = strchr(p, '=');
		struct errbuf err;
		int64_t q;

		next = strchr(p, ',');
		if (next)
			*next++ = '\0';
		if (!eq)
			goto bad;
		*eq = '\0';
		if (quantity_parse(eq + 1, strcmp(p, "cpu") == 0 ? QUANTITY_MILLI : QUANTITY_UNIT, &q,
				   &err) < 0 || q < 0 || strlen(eq + 1) >= sizeof(ao->default_cpu))
			goto bad;
		if (strcmp(p, "cpu") == 0)
			snprintf(ao->default_cpu, sizeof(ao->default_cpu), "%s", eq + 1);
		else if (strcmp(p, "memory") == 0)
			snprintf(ao->default_memory, sizeof(ao->default_memory), "%s", eq + 1);
		else
			goto bad;
	}
	return 0;
bad:
	fprintf(stderr, "luascale sim: --default-requests \"%s\": cpu=QUANTITY,memory=QUANTITY or none\n",
		text);
	return -1;
}

int cli_sim(int argc, char **argv)
{
	static const struct option own[] = {
		{"listen", required_argument, NULL, 'l'},
		{"scenario", required_argument, NULL, 's'},
		{"kubeconfig-out", required_argument, NULL, 'k'},
		{"fault", required_argument, NULL, 'f'},
		{"log-level", required_argument, NULL, 'L'},
		{"watch-timeout", required_argument, NULL, 'W'},
		{"default-requests", required_argument, NULL, 'R'},
		{"help", no_argument, NULL, 'h'},
	};
	struct option opts[sizeof(own) / sizeof(own[0]) + MAX_CLOUD_OPTS + 1];
	struct cloud_opts co;
	const char *listen = NULL, *scenario = NULL, *kubeconfig = DEFAULT_KUBECONFIG;
	const char *default_requests = NULL;
	const char *faults[MAX_FAULTS];
	size_t n_faults = 0, i;
	enum log_level level = LOG_INFO;
	struct apiserver_faults fs;
	struct apiserver_opts ao;
	struct sim_scenario *sc = NULL;
	struct executor *ex = NULL;
	struct sim_world *w = NULL;
	struct apiserver *srv = NULL;
	struct logger log;
	struct errbuf err;
	sigset_t sigs;
	int opt, port = 0, sig = 0, rc = EXIT_INPUT;
	int64_t watch_ms = 0;

	cloud_opts_init(&co);
	memcpy(opts, own, sizeof(own));
	for (i = 0; i < co.n_opts; i++) {
		struct option *o = &opts[sizeof(own) / sizeof(own[0]) + i];

		o->name = co.opts[i].name;
		o->has_arg = required_argument;
		o->flag = NULL;
		o->val = CLOUD_OPT_BASE + (int)i;
	}
	memset(&opts[sizeof(own) / sizeof(own[0]) + co.n_opts], 0, sizeof(opts[0]));

	optind = 1;
	while ((opt = getopt_long(argc, argv, "l:s:k:f:L:W:h", opts, NULL)) != -1) {
		if (opt >= CLOUD_OPT_BASE && opt < CLOUD_OPT_BASE + (int)co.n_opts) {
			size_t at = (size_t)(opt - CLOUD_OPT_BASE);
			struct cloud_face *cf = &co.clouds[co.opts[at].cloud];
			size_t j = co.opts[at].opt;

			if (!cf->def->opts[j].port) {
				cf->args.path[j] = optarg;
			} else if (parse_listen(optarg, &cf->args.port[j]) < 0) {
				fprintf(stderr, "luascale sim: --%s \"%s\": a port 0-65535 (127.0.0.1 only)\n",
					co.opts[at].name, optarg);
				return EXIT_USAGE;
			}
			continue;
		}
		switch (opt) {
		case 'l': listen = optarg; break;
		case 's': scenario = optarg; break;
		case 'k': kubeconfig = optarg; break;
		case 'f':
			if (n_faults == MAX_FAULTS) {
				fprintf(stderr, "luascale sim: at most %d --fault\n", MAX_FAULTS);
				return EXIT_USAGE;
			}
			faults[n_faults++] = optarg;
			break;
		case 'L':
			if (parse_level(optarg, &level) < 0) {
				fprintf(stderr, "luascale sim: --log-level: debug, info, warn or error\n");
				return EXIT_USAGE;
			}
			break;
		case 'W':
			if (config_parse_duration(optarg, &watch_ms) < 0 || watch_ms <= 0) {
				fprintf(stderr, "luascale sim: --watch-timeout \"%s\": a duration such as 30m\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'R': default_requests = optarg; break;
		case 'h': sim_usage(stdout); return EXIT_OK;
		default: sim_usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "luascale sim: unexpected argument \"%s\"\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (!listen || !scenario) {
		fprintf(stderr, "luascale sim: --listen 127.0.0.1:PORT and --scenario FILE are required\n");
		return EXIT_USAGE;
	}
	if (parse_listen(listen, &port) < 0) {
		fprintf(stderr, "luascale sim: --listen \"%s\": the simulator serves 127.0.0.1:PORT only\n",
			listen);
		return EXIT_USAGE;
	}
	memset(&fs, 0, sizeof(fs));
	for (i = 0; i < n_faults; i++) {
		if (apiserver_faults_parse(&fs, faults[i], &err) < 0) {
			fprintf(stderr, "luascale sim: --fault: %s\n", err.msg);
			return EXIT_USAGE;
		}
	}
	log = log_stderr(level);

	/* every thread started from here on leaves the signals to sigwait() */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP); /* taken and ignored: see the loop below */
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	sc = sim_scenario_load(scenario, &err);
	if (!sc) {
		fprintf(stderr, "luascale sim: %s\n", err.msg);
		goto out;
	}
	ex = executor_new_pool(4, 1u << 16);
	if (!ex) {
		fprintf(stderr, "luascale sim: cannot start the executor\n");
		goto out;
	}
	w = sim_world_new(sc, ex, &err);
	if (!w) {
		fprintf(stderr, "luascale sim: %s\n", err.msg);
		goto out;
	}
	apiserver_opts_default(&ao);
	ao.port = port;
	ao.seed = sc->seed;
	ao.log = &log;
	if (watch_ms > 0)
		ao.max_watch_ns = watch_ms * CLOCK_NS_PER_MS;
	if (default_requests && parse_default_requests(default_requests, &ao) < 0)
		goto out;
	srv = apiserver_new(w->cluster, &ao, &err);
	if (!srv) {
		fprintf(stderr, "luascale sim: %s\n", err.msg);
		goto out;
	}
	if (n_faults) {
		apiserver_inject(srv, &fs);
		for (i = 0; i < n_faults; i++)
			log_at(&log, LOG_INFO, clock_wall(clock_real()), "fault in force: %s", faults[i]);
	}
	if (apiserver_write_kubeconfig(srv, kubeconfig, &err) < 0) {
		fprintf(stderr, "luascale sim: kubeconfig: %s\n", err.msg);
		goto out;
	}
	for (i = 0; i < co.n_clouds; i++) {
		struct cloud_face *cf = &co.clouds[i];
		void *flavour;

		if (cf->args.port[0] < 0)
			continue; /* its face's port was not given */
		flavour = sim_world_flavour(w, cf->def->kind);
		if (!flavour) {
			fprintf(stderr, "luascale sim: --%s-%s: %s has no %s: section\n", cf->def->kind->name,
				cf->def->opts[0].suffix, scenario, cf->def->kind->name);
			goto out;
		}
		cf->args.latency_ns = fs.latency_ns;
		cf->args.log = &log;
		cf->face = cf->def->face_serve(flavour, &cf->args, &err);
		if (!cf->face) {
			fprintf(stderr, "luascale sim: %s\n", err.msg);
			goto out;
		}
	}
	printf("luascale sim: serving %s on http://127.0.0.1:%d\n"
	       "kubeconfig written to %s (context \"luascale-sim\"); try:\n"
	       "  kubectl --kubeconfig %s get nodes,pods -A\n"
	       "  kubectl --kubeconfig %s get nodes -w\n"
	       "SIGINT (Ctrl-C) or SIGTERM stops it; SIGHUP is ignored.\n",
	       scenario, apiserver_port(srv), kubeconfig, kubeconfig, kubeconfig);
	for (i = 0; i < co.n_clouds; i++)
		if (co.clouds[i].face)
			co.clouds[i].def->face_announce(co.clouds[i].face, &co.clouds[i].args, stdout);
	fflush(stdout);

	/* a SIGHUP (`kill -HUP` meant for `luascale run`) does not stop it */
	for (;;) {
		if (sigwait(&sigs, &sig) != 0)
			continue;
		if (sig != SIGHUP)
			break;
		log_at(&log, LOG_INFO, clock_wall(clock_real()),
		       "SIGHUP: ignored (the simulator has nothing to reload; SIGINT or SIGTERM stops it)");
	}
	log_at(&log, LOG_INFO, clock_wall(clock_real()), "%s: stopping",
	       sig == SIGINT ? "SIGINT" : "SIGTERM");
	rc = EXIT_OK;
out:
	for (i = co.n_clouds; i-- > 0;)
		if (co.clouds[i].face)
			co.clouds[i].def->face_free(co.clouds[i].face);
	apiserver_free(srv);
	if (ex) {
		size_t cancelled = executor_shutdown(ex, clock_now(clock_real()) + 5 * CLOCK_NS_PER_S);

		if (cancelled)
			log_at(&log, LOG_DEBUG, clock_wall(clock_real()),
			       "%zu simulated event(s) left unrun", cancelled);
	}
	sim_world_free(w);
	sim_scenario_free(sc);
	if (rc == EXIT_OK)
		log_at(&log, LOG_INFO, clock_wall(clock_real()), "stopped");
	return rc;
}
