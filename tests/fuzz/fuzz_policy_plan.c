/*
 * fuzz_policy_plan: hostile Lua text against the policy sandbox. Each input
 * becomes the body of a policy's reconcile (load(input)(cluster, params,
 * store, luascale)), run on a tiny fixed cluster under small limits, and
 * whatever it returns is decoded as a plan; then run again, and hot-reloaded
 * when it touches the store. Lua errors, budget and memory failures are
 * expected; a crash or a sanitizer report is a bug.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "model.h"
#include "policy/host.h"
#include "sched.h"

#define NOW 1714550400

/* One node of group "workers" with a running pod, a pending pod and a PDB. */
static const char cluster_json[] =
	"{\"kind\":\"List\",\"apiVersion\":\"v1\",\"items\":["
	"{\"kind\":\"Node\",\"metadata\":{\"name\":\"w-1\",\"labels\":{\"luascale.io/group\":\"workers\"},"
	"\"creationTimestamp\":\"2024-05-01T07:00:00Z\"},\"spec\":{\"providerID\":\"aws:///a/i-1\"},"
	"\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"16Gi\",\"pods\":\"110\"},"
	"\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}},"
	"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"default\",\"name\":\"web-1\",\"labels\":{\"app\":\"web\"},"
	"\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"web\",\"controller\":true}]},"
	"\"spec\":{\"nodeName\":\"w-1\",\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"500m\",\"memory\":\"1Gi\"}}}]},"
	"\"status\":{\"phase\":\"Running\"}},"
	"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"default\",\"name\":\"web-2\",\"labels\":{\"app\":\"web\"},"
	"\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"web\",\"controller\":true}]},"
	"\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"3\",\"memory\":\"8Gi\"}}}]},"
	"\"status\":{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\","
	"\"reason\":\"Unschedulable\",\"message\":\"0/1 nodes are available\"}]}},"
	"{\"kind\":\"PodDisruptionBudget\",\"apiVersion\":\"policy/v1\",\"metadata\":{\"namespace\":\"default\",\"name\":\"web\"},"
	"\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"web\"}},\"minAvailable\":1},"
	"\"status\":{\"disruptionsAllowed\":0}}]}";

static struct snapshot *cluster;
static char dir[64];
static int verbose; /* FUZZ_VERBOSE set: say what became of each input */

/* Builds the fixed cluster and the scratch folder once per process. */
static int setup(void)
{
	static struct kv sel[] = {{"luascale.io/group", "workers"}};
	struct node_group g;
	struct errbuf err = {{0}};

	snprintf(dir, sizeof(dir), "/tmp/luascale-fuzz-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	memset(&g, 0, sizeof(g));
	g.name = "workers";
	g.max = 5;
	g.selector = (struct kvlist){sel, 1};
	g.tmpl.labels = g.selector;
	g.tmpl.allocatable.cpu_m = 4000;
	g.tmpl.allocatable.memory = 16LL << 30;
	g.tmpl.allocatable.pods = 110;
	g.target = -1;
	cluster = snapshot_new();
	if (!cluster ||
	    snapshot_add_json(cluster, cluster_json, sizeof(cluster_json) - 1, "fixed", &err) ||
	    snapshot_set_groups(cluster, &g, 1, &err) ||
	    snapshot_finish(cluster, NOW, &err)) {
		fprintf(stderr, "fuzz_policy_plan: fixed cluster: %s\n", err.msg);
		abort();
	}
	return 0;
}

/* The shortest "]=*]" that does not occur in the input closes its long string. */
static int long_bracket_level(const uint8_t *data, size_t size)
{
	int level;

	for (level = 0;; level++) {
		size_t i;
		int found = 0;

		for (i = 0; i + (size_t)level + 1 < size && !found; i++) {
			int k;

			if (data[i] != ']')
				continue;
			for (k = 1; k <= level && data[i + k] == '='; k++)
				;
			found = k == level + 1 && data[i + k] == ']';
		}
		if (!found)
			return level;
	}
}

static void put_level(FILE *f, int level)
{
	while (level-- > 0)
		fputc('=', f);
}

/* Writes the wrapper policy with the input as the long string 'src'. The
 * newline after the opening bracket is not part of the string (Lua); the
 * one after the input is, and the policy cuts it off. */
static int write_policy(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	int level = long_bracket_level(data, size);
	int ok;

	if (!f)
		return -1;
	fputs("local ls = require \"luascale\"\nlocal src = [", f);
	put_level(f, level);
	fputs("[\n", f);
	fwrite(data, 1, size, f);
	fputs("\n]", f); /* a ']' ending the input must not close the string */
	put_level(f, level);
	fputs("]\n", f);
	fputs("return { reconcile = function(cluster, params, store)\n"
	      "  return assert(load(src:sub(1, -2), \"=fuzz\", \"t\"))(cluster, params, store, ls)\n"
	      "end }\n", f);
	ok = !ferror(f);
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* One reconcile; what it gave is checked and, with FUZZ_VERBOSE, told. */
static void reconcile(struct policy *p, const char *what)
{
	struct errbuf err = {{0}};
	struct drain_opts o;
	struct plan plan;

	drain_opts_default(&o);
	if (policy_reconcile(p, cluster, &o, &plan, NULL, &err) == 0) {
		if (verbose)
			fprintf(stderr, "  %s: %zu action(s)\n", what, plan.n_actions);
		plan_free(&plan);
	} else {
		if (verbose)
			fprintf(stderr, "  %s: %s\n", what, err.msg);
		if (plan.n_actions != 0)
			abort(); /* a failed call yields no actions */
	}
}

/*
 * Loads the input's policy and reconciles twice (globals and the store
 * carry objects of the first call into the second). An input that uses the
 * store is also hot-reloaded: its store copied into a fresh sandbox, a trial
 * run, and a reconcile of the new policy.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct sandbox_limits lim = {2000000, 32LL * 1024 * 1024, 500, NULL, false};
	struct errbuf err = {{0}};
	struct drain_opts o;
	struct policy *p, *q;
	char path[128], dropped[256];

	if (!cluster) {
		if (setup() < 0)
			return 0;
		verbose = getenv("FUZZ_VERBOSE") != NULL;
	}
	snprintf(path, sizeof(path), "%s/policy.lua", dir);
	if (write_policy(path, data, size) < 0)
		return 0;
	p = policy_load(path, SOURCE_DIR "/lua", &lim, NULL, &err);
	if (!p) {
		if (verbose)
			fprintf(stderr, "  load: %s\n", err.msg);
		goto out;
	}
	reconcile(p, "call 1");
	reconcile(p, "call 2");
	if (memmem(data, size, "store", 5)) {
		drain_opts_default(&o);
		q = policy_reload(p, path, SOURCE_DIR "/lua", &lim, NULL, cluster, &o,
				  dropped, sizeof(dropped), &err);
		if (verbose)
			fprintf(stderr, "  reload: %s\n", q ? "ok" : err.msg);
		if (q) {
			reconcile(q, "reloaded");
			policy_free(q);
		}
		reconcile(p, "old after reload");
	}
	policy_free(p);
out:
	unlink(path);
	return 0;
}
