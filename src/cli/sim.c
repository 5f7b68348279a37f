/*
 * cli/sim: `luascale sim` — a scenario's simulated world run in real time
 * and served as a Kubernetes API on 127.0.0.1 (sim/apiserver/apiserver.h), with a
 * kubeconfig written for kubectl. Runs until SIGINT or SIGTERM; SIGHUP is
 * logged and ignored.
 */
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
#include "quantity.h"
#include "runtime/clock.h"
#include "runtime/executor.h"
#include "sim/apiserver/apiserver.h"
#include "sim/clouds/aws_face.h"
#include "sim/clouds/azure_face.h"
#include "sim/clouds/gce_face.h"
#include "sim/world/scenario.h"

#define DEFAULT_KUBECONFIG "./luascale-sim.kubeconfig"
#define DEFAULT_AWS_ENV "./luascale-sim.aws.env"
#define DEFAULT_GCE_ENV "./luascale-sim.gce.env"
#define DEFAULT_GCE_KEY "./luascale-sim.gce-key.json"
#define DEFAULT_AZURE_ENV "./luascale-sim.azure.env"
#define DEFAULT_AZURE_TOKEN "./luascale-sim.azure-token"
#define DEFAULT_AZURE_CA "./luascale-sim.azure-ca.pem"
#define MAX_FAULTS 32

static void sim_usage(FILE *f)
{
	fputs("usage: luascale sim --listen 127.0.0.1:PORT --scenario FILE\n"
	      "                    [--kubeconfig-out FILE] [--fault SPEC]... [--log-level LEVEL]\n"
	      "                    [--watch-timeout DUR] [--default-requests cpu=Q,memory=Q|none]\n"
	      "                    [--aws-port PORT [--aws-env-out FILE]]\n"
	      "                    [--gce-port PORT [--gce-env-out FILE] [--gce-key-out FILE]]\n"
	      "                    [--azure-port PORT [--azure-env-out FILE] [--azure-token-out FILE]\n"
	      "                     [--azure-tls-port PORT] [--azure-ca-out FILE]]\n"
	      "\n"
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
	      "                                      (default cpu=500m,memory=512Mi; \"none\": no LimitRange)\n"
	      "\n"
	      "AWS (a scenario with an aws: section): --aws-port PORT (0: a free one) also\n"
	      "serves the EC2, Auto Scaling and STS APIs, IMDSv2 and container credentials\n"
	      "on http://127.0.0.1:PORT, and writes the endpoint, region and credentials\n"
	      "to --aws-env-out (default " DEFAULT_AWS_ENV "). latency=DUR applies to it too.\n"
	      "\n"
	      "GCE (a scenario with a gce: section): --gce-port PORT (0: a free one) also\n"
	      "serves compute v1 (MIGs, templates, machine types, operations), an OAuth\n"
	      "token endpoint and a metadata server on http://127.0.0.1:PORT; writes a\n"
	      "service-account key to --gce-key-out (default " DEFAULT_GCE_KEY ")\n"
	      "and the endpoints to --gce-env-out (default " DEFAULT_GCE_ENV ").\n"
	      "\n"
	      "Azure (a scenario with an azure: section): --azure-port PORT (0: a free one)\n"
	      "also serves Resource Manager (scale sets, their VMs, operations), IMDS and\n"
	      "the AAD token endpoint on http://127.0.0.1:PORT, and the AAD endpoints over\n"
	      "TLS on --azure-tls-port (default a free one) with a self-signed certificate\n"
	      "written to --azure-ca-out (default " DEFAULT_AZURE_CA "); writes the\n"
	      "federated token to --azure-token-out (default " DEFAULT_AZURE_TOKEN ")\n"
	      "and the endpoints and credentials to --azure-env-out (default\n"
	      "" DEFAULT_AZURE_ENV ").\n",
	      f);
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
	static const struct option opts[] = {
		{"listen", required_argument, NULL, 'l'},
		{"scenario", required_argument, NULL, 's'},
		{"kubeconfig-out", required_argument, NULL, 'k'},
		{"fault", required_argument, NULL, 'f'},
		{"log-level", required_argument, NULL, 'L'},
		{"aws-port", required_argument, NULL, 'A'},
		{"aws-env-out", required_argument, NULL, 'E'},
		{"gce-port", required_argument, NULL, 'G'},
		{"gce-env-out", required_argument, NULL, 'g'},
		{"gce-key-out", required_argument, NULL, 'K'},
		{"azure-port", required_argument, NULL, 'Z'},
		{"azure-env-out", required_argument, NULL, 'z'},
		{"azure-token-out", required_argument, NULL, 'T'},
		{"azure-tls-port", required_argument, NULL, 'S'},
		{"azure-ca-out", required_argument, NULL, 'C'},
		{"watch-timeout", required_argument, NULL, 'W'},
		{"default-requests", required_argument, NULL, 'R'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *listen = NULL, *scenario = NULL, *kubeconfig = DEFAULT_KUBECONFIG;
	const char *default_requests = NULL;
	const char *aws_env = DEFAULT_AWS_ENV;
	const char *gce_env = DEFAULT_GCE_ENV, *gce_key = DEFAULT_GCE_KEY;
	const char *az_env = DEFAULT_AZURE_ENV, *az_token = DEFAULT_AZURE_TOKEN;
	const char *az_ca = DEFAULT_AZURE_CA;
	int aws_port = -1, gce_port = -1, az_port = -1, az_tls_port = 0;
	struct aws_face *face = NULL;
	struct gce_face *gface = NULL;
	struct azure_face *zface = NULL;
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

	optind = 1;
	while ((opt = getopt_long(argc, argv, "l:s:k:f:L:A:E:G:g:K:Z:z:T:S:C:W:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'A':
			if (parse_listen(optarg, &aws_port) < 0) {
				fprintf(stderr, "luascale sim: --aws-port \"%s\": a port 0-65535 (127.0.0.1 only)\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'E': aws_env = optarg; break;
		case 'G':
			if (parse_listen(optarg, &gce_port) < 0) {
				fprintf(stderr, "luascale sim: --gce-port \"%s\": a port 0-65535 (127.0.0.1 only)\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'g': gce_env = optarg; break;
		case 'K': gce_key = optarg; break;
		case 'Z':
		case 'S':
			if (parse_listen(optarg, opt == 'Z' ? &az_port : &az_tls_port) < 0) {
				fprintf(stderr, "luascale sim: --%s \"%s\": a port 0-65535 (127.0.0.1 only)\n",
					opt == 'Z' ? "azure-port" : "azure-tls-port", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'z': az_env = optarg; break;
		case 'T': az_token = optarg; break;
		case 'C': az_ca = optarg; break;
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
	if (aws_port >= 0) {
		struct aws_face_opts fo;

		if (!w->aws) {
			fprintf(stderr, "luascale sim: --aws-port: %s has no aws: section\n", scenario);
			goto out;
		}
		memset(&fo, 0, sizeof(fo));
		fo.port = aws_port;
		fo.latency_ns = fs.latency_ns;
		fo.log = &log;
		face = aws_face_new(w->aws, &fo, &err);
		if (!face) {
			fprintf(stderr, "luascale sim: %s\n", err.msg);
			goto out;
		}
		if (aws_face_write_env(face, aws_env, &err) < 0) {
			fprintf(stderr, "luascale sim: aws env: %s\n", err.msg);
			goto out;
		}
	}
	if (gce_port >= 0) {
		struct gce_face_opts go;

		if (!w->gce) {
			fprintf(stderr, "luascale sim: --gce-port: %s has no gce: section\n", scenario);
			goto out;
		}
		memset(&go, 0, sizeof(go));
		go.port = gce_port;
		go.latency_ns = fs.latency_ns;
		go.log = &log;
		gface = gce_face_new(w->gce, &go, &err);
		if (!gface) {
			fprintf(stderr, "luascale sim: %s\n", err.msg);
			goto out;
		}
		if (gce_face_write_key(gface, gce_key, &err) < 0 ||
		    gce_face_write_env(gface, gce_env, gce_key, &err) < 0) {
			fprintf(stderr, "luascale sim: gce: %s\n", err.msg);
			goto out;
		}
	}
	if (az_port >= 0) {
		struct azure_face_opts zo;

		if (!w->azure) {
			fprintf(stderr, "luascale sim: --azure-port: %s has no azure: section\n", scenario);
			goto out;
		}
		memset(&zo, 0, sizeof(zo));
		zo.port = az_port;
		zo.tls_port = az_tls_port;
		zo.latency_ns = fs.latency_ns;
		zo.log = &log;
		zface = azure_face_new(w->azure, &zo, &err);
		if (!zface) {
			fprintf(stderr, "luascale sim: %s\n", err.msg);
			goto out;
		}
		if (azure_face_write_token(zface, az_token, &err) < 0 ||
		    azure_face_write_ca(zface, az_ca, &err) < 0 ||
		    azure_face_write_env(zface, az_env, az_token, &err) < 0) {
			fprintf(stderr, "luascale sim: azure: %s\n", err.msg);
			goto out;
		}
	}
	printf("luascale sim: serving %s on http://127.0.0.1:%d\n"
	       "kubeconfig written to %s (context \"luascale-sim\"); try:\n"
	       "  kubectl --kubeconfig %s get nodes,pods -A\n"
	       "  kubectl --kubeconfig %s get nodes -w\n"
	       "SIGINT (Ctrl-C) or SIGTERM stops it; SIGHUP is ignored.\n",
	       scenario, apiserver_port(srv), kubeconfig, kubeconfig, kubeconfig);
	if (face)
		printf("luascale sim: AWS face (EC2, Auto Scaling, STS, IMDS) at http://127.0.0.1:%d\n"
		       "AWS endpoint, region and credentials written to %s; try:\n"
		       "  (set -a; . %s; aws --endpoint-url $AWS_ENDPOINT_URL autoscaling describe-auto-scaling-groups)\n",
		       aws_face_port(face), aws_env, aws_env);
	if (gface)
		printf("luascale sim: GCE face (compute v1, token endpoint, metadata) at http://127.0.0.1:%d\n"
		       "service-account key written to %s, endpoints to %s\n",
		       gce_face_port(gface), gce_key, gce_env);
	if (zface)
		printf("luascale sim: Azure face (ARM, IMDS, AAD token endpoint) at http://127.0.0.1:%d\n"
		       "luascale sim: Azure AAD endpoints over TLS at https://127.0.0.1:%d (CA %s)\n"
		       "endpoints and credentials written to %s, federated token to %s\n",
		       azure_face_port(zface), azure_face_tls_port(zface), az_ca, az_env, az_token);
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
	azure_face_free(zface);
	gce_face_free(gface);
	aws_face_free(face);
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
