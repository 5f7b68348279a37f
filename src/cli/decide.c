/*
 * cli/decide: `luascale check` and `luascale decide` — the offline front
 * end: a config and a recorded cluster in, the checked plan printed.
 * Nothing is executed.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "arena.h"
#include "buf.h"
#include "cli/cli.h"
#include "cli/kustomize.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
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

/* Do 'a' and 'b' name one file? */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/*
 * Which policy file `check` and `decide` load: NULL for the config's.
 * --policy FILE ('override') replaces the config's policy: unless it is the
 * same file, the config's params (which are that policy's) are dropped,
 * with one note on stderr. Without it, a policy the config names beside
 * itself that is not there is looked up in the kustomize ConfigMap the
 * config is a file of (deploy/overlays/<cloud>/config.yaml: default.lua
 * comes from deploy/base), said on stdout when 'say_found'. 'buf' holds
 * the path found. -1 when a kustomization cannot be read (said).
 */
static int choose_policy(struct config *c, const char *config_path, const char *override,
			 bool say_found, char *buf, size_t len, const char **out)
{
	char cm[256], where[4096];
	const char *name;
	size_t dl = strlen(c->base_dir), i;
	struct errbuf err;
	struct stat st;
	int found;

	*out = NULL;
	if (override) {
		*out = override;
		if (!*c->policy_path || same_file(override, c->policy_path) || c->params.n_items == 0)
			return 0;
		fprintf(stderr, "luascale: note: --policy %s replaces the config's policy %s: its params from the config (",
			override, c->policy_path);
		for (i = 0; i < c->params.n_items; i++)
			fprintf(stderr, "%s%s", i ? ", " : "", c->params.items[i].key);
		fprintf(stderr, ") are not applied\n");
		c->params.n_items = 0;
		return 0;
	}
	if (!*c->policy_path)
		return 0;
	if (stat(c->policy_path, &st) == 0)
		return 0; /* there: loaded (or refused) as it is */
	/* only a policy named beside the config, as a ConfigMap mounts it */
	if (strcmp(c->base_dir, ".") == 0)
		name = strchr(c->policy_path, '/') ? NULL : c->policy_path;
	else if (strncmp(c->policy_path, c->base_dir, dl) == 0 && c->policy_path[dl] == '/' &&
		 !strchr(c->policy_path + dl + 1, '/'))
		name = c->policy_path + dl + 1;
	else
		name = NULL;
	if (!name)
		return 0;
	found = kustomize_configmap_file(config_path, name, buf, len, cm, sizeof(cm), where,
					 sizeof(where), &err);
	if (found < 0) {
		say("", err.msg);
		return -1;
	}
	if (found == 0)
		return 0;
	*out = buf;
	if (say_found)
		printf("policy %s: not beside %s here; the ConfigMap %s mounts %s as %s (%s)\n", name,
		       config_path, cm, buf, name, where);
	return 0;
}

static void check_usage(FILE *f)
{
	fputs("usage: luascale check --config FILE [--policy FILE]\n"
	      "\n"
	      "Checks what `luascale run` needs before it starts: the config; the\n"
	      "cluster's kubeconfig and its context, the token file, certificates and\n"
	      "CA it names (read, nothing contacted; in a pod, its service account);\n"
	      "the policy, loaded and tried as a reload tries it, on a small cluster\n"
	      "made from the configured node groups, then called once on an empty one.\n"
	      "A policy named beside a config of a kustomize ConfigMap\n"
	      "(deploy/overlays/<cloud>/config.yaml) is taken from the ConfigMap's\n"
	      "files. --policy FILE checks another policy (the config's params,\n"
	      "which are its own policy's, are then not applied).\n"
	      "\n"
	      "exit status: 0 all is well, 1 usage, 2 bad config or cluster settings,\n"
	      "3 policy failed\n",
	      f);
}

/* Reads the token file as the client will: one line of printable text. */
static int check_token_file(const char *path, struct errbuf *err)
{
	struct buf b = BUF_INIT;
	struct errbuf why;
	bool bad;
	size_t n;

	if (buf_read_file(&b, path, 1u << 20, &why) < 0)
		return errbuf_set(err, "token file: %s", why.msg);
	n = b.len;
	while (n > 0 && (b.data[n - 1] == '\n' || b.data[n - 1] == '\r' || b.data[n - 1] == ' ' ||
			 b.data[n - 1] == '\t'))
		b.data[--n] = '\0';
	bad = n == 0 || kube_token_check(b.data) >= 0;
	if (b.data)
		memset(b.data, 0, b.len);
	buf_free(&b);
	if (bad)
		return errbuf_set(err, "token file: %s: empty, or not one line of printable text", path);
	return 0;
}

/*
 * The cluster settings as `run` reads them before its first request: the
 * kubeconfig's context, or the pod's service account; then the files the
 * client opens (CA, client certificate and key) and the token file.
 * Prints what was checked; -1 with why.
 */
static int check_cluster(const struct config *c, struct errbuf *err)
{
	struct kube_config *kc = NULL;
	struct kube_client *client = NULL;
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	int rc = -1;

	if (c->in_cluster && (!host || !*host)) {
		printf("cluster: in-cluster: not checked here (no KUBERNETES_SERVICE_HOST: in the pod, "
		       "check reads its service account)\n");
		return 0;
	}
	if (c->in_cluster) {
		if (kube_config_incluster(NULL, &kc, err) < 0) {
			errbuf_prefix(err, "cluster (in-cluster)");
			goto out;
		}
	} else if (kubeconfig_load(c->kubeconfig, c->context, &kc, err) < 0) {
		errbuf_prefix(err, "cluster");
		goto out;
	}
	client = kube_client_new(kc, NULL, err);
	if (!client) {
		errbuf_prefix(err, "cluster: context \"%s\"", kc->context);
		goto out;
	}
	if (kc->token_file && check_token_file(kc->token_file, err) < 0) {
		errbuf_prefix(err, "cluster: context \"%s\"", kc->context);
		goto out;
	}
	if (c->in_cluster)
		printf("cluster: in-cluster, server %s, the pod's service account (token %s, CA %s): "
		       "readable\n", kube_client_server(client), kc->token_file, kc->ca_file);
	else
		printf("cluster: context \"%s\" of %s, server %s: credentials readable%s\n", kc->context,
		       c->kubeconfig, kube_client_server(client),
		       kc->exec ? " (its exec plugin is run by `run` only)" : "");
	rc = 0;
out:
	kube_client_free(client);
	kube_config_free(kc);
	return rc;
}

/*
 * A small cluster made from the config's node groups, for the policy's
 * trial: in each group, one Ready node from the
 * group's template running a pod that requests a quarter of it; and one
 * pod pending as Unschedulable. Its strings and arrays live in 'a'.
 */
static struct snapshot *trial_cluster(const struct config *c, struct arena *a, int64_t now,
				      size_t *nodes, size_t *pods, struct errbuf *err)
{
	struct snapshot *s = snapshot_new();
	size_t i;

	*nodes = *pods = 0;
	if (!s) {
		errbuf_set(err, "out of memory");
		return NULL;
	}
	for (i = 0; i < c->n_groups; i++) {
		const struct node_group *g = &c->groups[i];
		struct node n;
		struct pod p;
		char name[320];

		memset(&n, 0, sizeof(n));
		snprintf(name, sizeof(name), "check-%s-0", g->name);
		n.name = arena_strdup(a, name);
		n.provider_id = "";
		n.labels = g->tmpl.labels;
		n.taints = g->tmpl.taints;
		n.n_taints = g->tmpl.n_taints;
		n.allocatable = g->tmpl.allocatable;
		n.ready = true;
		n.created = now - 3600;
		memset(&p, 0, sizeof(p));
		p.ns = "default";
		snprintf(name, sizeof(name), "check-%s-0-pod", g->name);
		p.name = arena_strdup(a, name);
		p.uid = p.controller_name = p.local_volume = p.sched_message = "";
		p.controller_kind = "ReplicaSet";
		p.controller_name = "check";
		p.node_name = n.name;
		p.phase = POD_RUNNING;
		p.requests.cpu_m = g->tmpl.allocatable.cpu_m / 4;
		p.requests.memory = g->tmpl.allocatable.memory / 4;
		p.requests.pods = 1;
		p.created = now - 3000;
		if (!n.name || !p.name || snapshot_add_node(s, &n, err) < 0 ||
		    snapshot_add_pod(s, &p, err) < 0)
			goto fail;
		*nodes += 1;
		*pods += 1;
	}
	{
		struct pod p;

		memset(&p, 0, sizeof(p));
		p.ns = "default";
		p.name = "check-pending";
		p.uid = p.node_name = p.local_volume = "";
		p.controller_kind = "ReplicaSet";
		p.controller_name = "check";
		p.sched_message = "0/1 nodes are available: 1 Insufficient cpu.";
		p.phase = POD_PENDING;
		p.flags = POD_UNSCHEDULABLE;
		p.requests.cpu_m = 100;
		p.requests.memory = 128 << 20;
		p.requests.pods = 1;
		p.created = now - 60;
		if (snapshot_add_pod(s, &p, err) < 0)
			goto fail;
		*pods += 1;
	}
	if (snapshot_set_groups(s, c->groups, c->n_groups, err) < 0 ||
	    snapshot_finish(s, now, err) < 0)
		goto fail;
	return s;
fail:
	snapshot_free(s);
	return NULL;
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
	const char *policy = NULL;
	char found[4096];
	struct config *c = NULL;
	struct reconciler *pol = NULL;
	struct snapshot *s = NULL, *trial = NULL;
	struct arena *ta = NULL;
	struct decision d;
	struct errbuf err;
	size_t tn = 0, tp = 0;
	int64_t now = (int64_t)time(NULL);
	int opt, rc = EXIT_INPUT, cluster_rc = EXIT_OK;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "c:p:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'c': config_path = optarg; break;
		case 'p': policy_override = optarg; break;
		case 'h': check_usage(stdout); return EXIT_OK;
		default: check_usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "luascale check: unexpected argument \"%s\"\n", argv[optind]);
		return EXIT_USAGE;
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
	fflush(stdout);
	/* every problem is said; the cluster's decides the status unless the
	 * policy fails too */
	if (check_cluster(c, &err) < 0) {
		say("", err.msg);
		cluster_rc = EXIT_INPUT;
	}
	fflush(stdout);
	if (choose_policy(c, config_path, policy_override, true, found, sizeof(found), &policy) < 0)
		goto out;
	pol = load_policy(c, policy);
	if (!pol) {
		rc = EXIT_POLICY;
		goto out;
	}
	/* the trial a reload makes, on a small cluster of the config's groups */
	ta = arena_new();
	trial = ta ? trial_cluster(c, ta, now, &tn, &tp, &err) : NULL;
	if (!trial) {
		say("", ta ? err.msg : "out of memory");
		goto out;
	}
	if (reconciler_reload(pol, NULL, trial, NULL, 0, &err) < 0) {
		char head[1400];

		snprintf(head, sizeof(head),
			 "policy %s, tried as a reload tries it on a cluster of the config's groups (%zu node%s, %zu pod%s): ",
			 reconciler_policy_path(pol), tn, tn == 1 ? "" : "s", tp, tp == 1 ? "" : "s");
		say(head, err.msg);
		rc = EXIT_POLICY;
		goto out;
	}
	s = snapshot_new();
	if (!s || snapshot_set_groups(s, c->groups, c->n_groups, &err) < 0 ||
	    snapshot_finish(s, now, &err) < 0) {
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
		printf("policy %s: ok (tried on a cluster of the config's groups: %zu node%s, %zu pod%s; "
		       "one call on an empty cluster: %zu action%s, %s, %.1f ms)\n",
		       reconciler_policy_path(pol), tn, tn == 1 ? "" : "s", tp, tp == 1 ? "" : "s",
		       d.verdict.accepted.n_actions, d.verdict.accepted.n_actions == 1 ? "" : "s",
		       instr, d.stats.call_ms);
		rc = cluster_rc;
	}
	decision_free(&d);
out:
	snapshot_free(s);
	snapshot_free(trial);
	arena_free(ta);
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
	      "  --policy FILE  use this policy instead of the config's (the config's\n"
	      "                 params, its own policy's, are then not applied)\n"
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
	const char *states[MAX_STATES], *policy = NULL;
	char found[4096];
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
	if (choose_policy(c, config_path, policy_override, false, found, sizeof(found), &policy) < 0)
		goto out;
	pol = load_policy(c, policy);
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
