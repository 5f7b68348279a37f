/*
 * cli/status: `luascale status` — reads the status ConfigMap that the
 * running autoscaler writes and prints it (its text, or its JSON). The
 * cluster comes from the config as for `luascale run`.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "config.h"
#include "engine/status.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "kube/statuswriter.h"

static void status_usage(FILE *f)
{
	fputs("usage: luascale status --config FILE [--context NAME] [--json]\n"
	      "                       [--namespace NS] [--name NAME]\n"
	      "\n"
	      "Prints the status the running autoscaler keeps in its ConfigMap\n"
	      "(status.namespace/status.name in the config, default\n"
	      "kube-system/luascale-status): the cluster's and each group's health,\n"
	      "sizes and backoff, the last scale-up and scale-down, the last policy error.\n"
	      "\n"
	      "  --config FILE     the autoscaler's config: its cluster section says where\n"
	      "  --context NAME    the kubeconfig context (overrides cluster.context)\n"
	      "  --json            print the machine-readable form (key status.json)\n"
	      "  --namespace NS    the ConfigMap's namespace (overrides status.namespace)\n"
	      "  --name NAME       the ConfigMap's name (overrides status.name)\n"
	      "\n"
	      "exit status: 0 printed, 2 the ConfigMap is missing or cannot be read.\n",
	      f);
}

int cli_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"context", required_argument, NULL, 'x'},
		{"json", no_argument, NULL, 'j'},
		{"namespace", required_argument, NULL, 'n'},
		{"name", required_argument, NULL, 'N'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *config_path = getenv("LUASCALE_CONFIG"), *context = NULL;
	const char *ns = NULL, *name = NULL;
	bool json = false;
	struct config *c = NULL;
	struct kube_config *kc = NULL;
	struct kube_client *client = NULL;
	struct kube_client_opts copts;
	struct errbuf err;
	char *text = NULL;
	int opt, rc = EXIT_INPUT;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "c:x:jn:N:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'c': config_path = optarg; break;
		case 'x': context = optarg; break;
		case 'j': json = true; break;
		case 'n': ns = optarg; break;
		case 'N': name = optarg; break;
		case 'h': status_usage(stdout); return EXIT_OK;
		default: status_usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "luascale status: unexpected argument \"%s\"\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (!config_path || !*config_path) {
		fprintf(stderr, "luascale status: --config FILE is required\n");
		return EXIT_USAGE;
	}
	c = config_load_flags(config_path, CONFIG_OFFLINE, &err);
	if (!c) {
		fprintf(stderr, "luascale: %s\n", err.msg);
		return EXIT_INPUT;
	}
	if (c->in_cluster) {
		struct kube_incluster_env env;

		memset(&env, 0, sizeof(env));
		if (kube_config_incluster(&env, &kc, &err) < 0) {
			fprintf(stderr, "luascale: in-cluster config: %s\n", err.msg);
			goto out;
		}
	} else if (!c->kubeconfig[0]) {
		fprintf(stderr, "luascale: %s: cluster.kubeconfig (or cluster.in_cluster) is required "
			"to read the status\n", config_path);
		goto out;
	} else if (kubeconfig_load(c->kubeconfig, context ? context : c->context, &kc, &err) < 0) {
		fprintf(stderr, "luascale: %s\n", err.msg);
		goto out;
	}
	memset(&copts, 0, sizeof(copts));
	client = kube_client_new(kc, &copts, &err);
	if (!client) {
		fprintf(stderr, "luascale: %s\n", err.msg);
		goto out;
	}
	if (kube_configmap_get_key(client, ns ? ns : c->status_namespace,
				   name ? name : c->status_name,
				   json ? STATUS_KEY_JSON : STATUS_KEY_TEXT, &text, &err) != 0) {
		fprintf(stderr, "luascale status: %s\n", err.msg);
		goto out;
	}
	fputs(text, stdout);
	if (!*text || text[strlen(text) - 1] != '\n')
		fputc('\n', stdout);
	rc = EXIT_OK;
out:
	free(text);
	kube_client_free(client);
	kube_config_free(kc);
	config_free(c);
	return rc;
}
