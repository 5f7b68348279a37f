/*
 * cli/decide: `luascale check` and `luascale decide` — the offline front
 * end: a config and a recorded cluster in, the checked plan printed.
 * Nothing is executed.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "cli/cli.h"
#include "log.h"
#include "engine/decide.h"
#include "model.h"
#include "engine/reconciler.h"

#define MAX_STATES 16

int cli_parse_now(const char *text, int64_t *out)
{
	const char *p;
	int64_t v = 0;

	if (!text || !*text)
		return -1;
	for (p = text; *p >= '0' && *p <= '9'; p++) {
		if (v > (CLI_NOW_MAX - (*p - '0')) / 10)
			return -2;
		v = v * 10 + (*p - '0');
	}
	if (*p && model_parse_time(text, &v) < 0)
		return -1;
	if (v < 0 || v > CLI_NOW_MAX)
		return -2;
	*out = v;
	return 0;
}

/* Prints "luascale: " 'what' 'msg' on one line: a message may quote a
 * policy's error or a name from the state, escaped as the log does. */
static void say(const char *what, const char *msg)
{
	fprintf(stderr, "luascale: %s", what);
	log_fwrite_escaped(stderr, msg, strlen(msg));
	fputc('\n', stderr);
}

static struct config *load_config(const char *path, unsigned flags)
{
	struct errbuf err;
	struct config *c = config_load_flags(path, flags, &err);

	if (!c)
		say("", err.msg);
	return c;
}

static struct reconciler *load_policy(const struct config *c, const char *override)
{
	struct errbuf err;
	struct reconciler *r = reconciler_new(c, override, &err);

	if (!r)
		say("policy: ", err.msg);
	return r;
}

static void check_usage(FILE *f)
{
	fputs("usage: luascale check --config FILE [--policy FILE]\n"
	      "\n"
	      "Validates the config, loads the policy and calls it once on an empty\n"
	      "cluster with the configured node groups. Exit 0 when all is well.\n",
	      f);
}

int cli_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"policy", required_argument, NULL, 'p'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *config_path = getenv("LUASCALE_CONFIG"), *policy_override = NULL;
	struct config *c = NULL;
	struct reconciler *pol = NULL;
	struct snapshot *s = NULL;
	struct decision d;
	struct errbuf err;
	int opt, rc = EXIT_INPUT;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "c:p:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'c': config_path = optarg; break;
		case 'p': policy_override = optarg; break;
		case 'h': check_usage(stdout); return EXIT_OK;
		default: check_usage(stderr); return EXIT_USAGE;
		}
	}
	if (!config_path || !*config_path) {
		fprintf(stderr, "luascale check: --config FILE is required\n");
		return EXIT_USAGE;
	}
	c = load_config(config_path, 0);
	if (!c)
		goto out;
	printf("config %s: ok (%zu node group%s, context \"%s\")\n", config_path, c->n_groups,
	       c->n_groups == 1 ? "" : "s", c->in_cluster ? "(in-cluster)" : c->context);
	pol = load_policy(c, policy_override);
	if (!pol) {
		rc = EXIT_POLICY;
		goto out;
	}
	s = snapshot_new();
	if (!s || snapshot_set_groups(s, c->groups, c->n_groups, &err) < 0 ||
	    snapshot_finish(s, (int64_t)time(NULL), &err) < 0) {
		say("", s ? err.msg : "out of memory");
		goto out;
	}
	if (reconciler_run(pol, s, false, &d, NULL, &err) < 0) {
		say("", err.msg);
		goto out;
	}
	if (!d.ok) {
		char head[1200];

		snprintf(head, sizeof(head), "policy %s failed on an empty cluster: ",
			 reconciler_policy_path(pol));
		say(head, d.error);
		rc = EXIT_POLICY;
	} else {
		char instr[64];

		if (d.stats.instructions < 1000)
			snprintf(instr, sizeof(instr), "under 1000 instructions");
		else
			snprintf(instr, sizeof(instr), "about %lld instructions",
				 (long long)d.stats.instructions);
		printf("policy %s: ok (one call on an empty cluster: %zu action%s, %s, %.1f ms)\n",
		       reconciler_policy_path(pol), d.verdict.accepted.n_actions,
		       d.verdict.accepted.n_actions == 1 ? "" : "s", instr, d.stats.call_ms);
		rc = EXIT_OK;
	}
	decision_free(&d);
out:
	snapshot_free(s);
	reconciler_free(pol);
	config_free(c);
	return rc;
}

static void decide_usage(FILE *f)
{
	fputs("usage: luascale decide --config FILE --state FILE [--state FILE ...]\n"
	      "                       [--policy FILE] [--output text|json] [--now TIME]\n"
	      "\n"
	      "Runs the policy once on a recorded cluster and prints the plan with each\n"
	      "action's reason, the actions the safety checks rejected and why, and for\n"
	      "every node its request utilization and whether it could be removed.\n"
	      "Nothing is executed, and no cluster is reached: the config's cluster\n"
	      "section is optional here.\n"
	      "\n"
	      "  --state FILE   what `kubectl get nodes,pods,pdb -A -o json` prints, or\n"
	      "                 NodeList / PodList / PodDisruptionBudgetList files; add\n"
	      "                 namespaces,pvc,pv,storageclasses,daemonsets (or their\n"
	      "                 List files) so that namespaceSelectors, volume zones and\n"
	      "                 DaemonSet pods are judged as the cluster has them\n"
	      "  --policy FILE  use this policy instead of the config's\n"
	      "  --output FMT   text (default) or json\n"
	      "  --now TIME     the time of the decision (RFC 3339 or unix seconds,\n"
	      "                 1970 to 9999; default: now)\n"
	      "\n"
	      "exit status: 0 plan computed, 1 usage, 2 bad config or state, 3 policy failed\n",
	      f);
}

int cli_decide(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"state", required_argument, NULL, 's'},
		{"policy", required_argument, NULL, 'p'},
		{"output", required_argument, NULL, 'o'},
		{"now", required_argument, NULL, 'n'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *config_path = getenv("LUASCALE_CONFIG"), *policy_override = NULL;
	const char *states[MAX_STATES];
	size_t n_states = 0, i;
	bool json = false;
	int64_t now = (int64_t)time(NULL);
	struct config *c = NULL;
	struct reconciler *pol = NULL;
	struct snapshot *s = NULL;
	struct decision d;
	struct errbuf err;
	struct buf out = BUF_INIT;
	int opt, rc = EXIT_INPUT;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "c:s:p:o:n:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'c': config_path = optarg; break;
		case 's':
			if (n_states == MAX_STATES) {
				fprintf(stderr, "luascale decide: at most %d --state files\n", MAX_STATES);
				return EXIT_USAGE;
			}
			states[n_states++] = optarg;
			break;
		case 'p': policy_override = optarg; break;
		case 'o':
			if (strcmp(optarg, "json") == 0) {
				json = true;
			} else if (strcmp(optarg, "text") != 0) {
				fprintf(stderr, "luascale decide: --output must be text or json, not \"%s\"\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'n':
			switch (cli_parse_now(optarg, &now)) {
			case 0:
				break;
			case -2:
				fprintf(stderr, "luascale decide: --now: %s is outside 1970-01-01T00:00:00Z .. 9999-12-31T23:59:59Z (unix seconds 0 .. %lld)\n",
					optarg, (long long)CLI_NOW_MAX);
				return EXIT_USAGE;
			default:
				fprintf(stderr, "luascale decide: --now: \"%s\" is neither RFC 3339 (2026-11-30T10:00:00Z) nor unix seconds\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h': decide_usage(stdout); return EXIT_OK;
		default: decide_usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "luascale decide: unexpected argument \"%s\"\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (!config_path || !*config_path || n_states == 0) {
		fprintf(stderr, "luascale decide: --config FILE and --state FILE are required\n");
		decide_usage(stderr);
		return EXIT_USAGE;
	}
	/* decide reaches no cluster: the cluster section is optional */
	c = load_config(config_path, CONFIG_OFFLINE);
	if (!c)
		goto out;
	if (!*c->policy_path && !policy_override) {
		fprintf(stderr, "luascale decide: %s names no policy (policy.path): give --policy FILE\n",
			config_path);
		goto out;
	}
	s = snapshot_new();
	if (!s) {
		fprintf(stderr, "luascale: out of memory\n");
		goto out;
	}
	for (i = 0; i < n_states; i++) {
		if (snapshot_load_file(s, states[i], &err) < 0) {
			say("", err.msg);
			goto out;
		}
	}
	if (snapshot_set_groups(s, c->groups, c->n_groups, &err) < 0 ||
	    snapshot_finish(s, now, &err) < 0) {
		say("", err.msg);
		goto out;
	}
	pol = load_policy(c, policy_override);
	if (!pol) {
		rc = EXIT_POLICY;
		goto out;
	}
	if (reconciler_run(pol, s, true, &d, NULL, &err) < 0) {
		say("", err.msg);
		goto out;
	}
	if (json)
		decision_to_json(&d, &out);
	else
		decision_to_text(&d, s, &out);
	fwrite(out.data ? out.data : "", 1, out.len, stdout);
	if (!d.ok) {
		say("policy failed: ", d.error);
		rc = EXIT_POLICY;
	} else {
		rc = EXIT_OK;
	}
	decision_free(&d);
out:
	buf_free(&out);
	snapshot_free(s);
	reconciler_free(pol);
	config_free(c);
	return rc;
}
