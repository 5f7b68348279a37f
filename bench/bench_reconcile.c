/*
 * bench_reconcile: a 5,000-node, 150,000-pod cluster (30 pods a node, 200
 * pending) through the engine with policies/default.lua. Prints the time
 * to load the recorded List, to build the Lua view, to run the policy, to
 * check the plan, and the peak RSS. Run on demand:
 *   build/bench/bench_reconcile [NODES] [PODS_PER_NODE] [PENDING]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "engine/decide.h"
#include "model.h"
#include "policy/host.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static long peak_rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static unsigned rng = 12345;

static unsigned next_rand(void)
{
	rng = rng * 1103515245u + 12345u;
	return (rng >> 8) & 0xffffff;
}

static const char *GROUPS[3] = {"general", "compute", "memory"};

/* Writes a v1 List shaped like `kubectl get nodes,pods,pdb -A -o json`. */
static void write_cluster(FILE *f, int nodes, int per_node, int pending)
{
	int n, p, first = 1;

	fputs("{\"apiVersion\":\"v1\",\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"\"},\"items\":[\n", f);
	for (n = 0; n < nodes; n++) {
		fprintf(f, "%s{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-%05d\","
			   "\"uid\":\"6a1f0c2e-%08d\",\"resourceVersion\":\"%d\",\"creationTimestamp\":\"2026-11-01T00:00:00Z\","
			   "\"labels\":{\"kubernetes.io/hostname\":\"node-%05d\",\"kubernetes.io/os\":\"linux\","
			   "\"node.kubernetes.io/instance-type\":\"m5.4xlarge\",\"topology.kubernetes.io/zone\":\"eu-west-1%c\","
			   "\"luascale.io/node-group\":\"%s\"},\"annotations\":{\"node.alpha.kubernetes.io/ttl\":\"0\"}},"
			   "\"spec\":{\"providerID\":\"aws:///eu-west-1a/i-%012d\"},"
			   "\"status\":{\"allocatable\":{\"cpu\":\"15890m\",\"memory\":\"63350Mi\",\"pods\":\"110\",\"ephemeral-storage\":\"95551679124\"},"
			   "\"capacity\":{\"cpu\":\"16\",\"memory\":\"64000Mi\",\"pods\":\"110\"},"
			   "\"conditions\":[{\"type\":\"MemoryPressure\",\"status\":\"False\"},{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"KubeletReady\"}],"
			   "\"nodeInfo\":{\"kubeletVersion\":\"v1.30.4\"}}}",
			first ? "" : ",\n", n, n, 1000 + n, n, 'a' + n % 3, GROUPS[n % 3], n);
		first = 0;
	}
	for (n = 0; n < nodes; n++) {
		/* a fifth of the nodes are lightly used */
		int light = n % 5 == 0;

		for (p = 0; p < per_node; p++) {
			int cpu = light ? 20 + (int)(next_rand() % 30) : 200 + (int)(next_rand() % 300);
			int mem = light ? 64 + (int)(next_rand() % 64) : 512 + (int)(next_rand() % 1024);
			int ds = p == 0;

			fprintf(f, ",\n{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s-%05d-%02d\",\"namespace\":\"%s\","
				   "\"uid\":\"0b3c%08d%02d\",\"resourceVersion\":\"%d\",\"creationTimestamp\":\"2026-11-29T10:00:00Z\","
				   "\"labels\":{\"app\":\"app-%d\",\"pod-template-hash\":\"7f9c6d\"},"
				   "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"%s\",\"name\":\"app-%d\",\"uid\":\"u\",\"controller\":true}]},"
				   "\"spec\":{\"nodeName\":\"node-%05d\",\"priority\":0,\"schedulerName\":\"default-scheduler\","
				   "\"containers\":[{\"name\":\"main\",\"image\":\"registry.example/app:1.%d\","
				   "\"resources\":{\"requests\":{\"cpu\":\"%dm\",\"memory\":\"%dMi\"},\"limits\":{\"memory\":\"%dMi\"}}}],"
				   "\"tolerations\":[{\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\",\"effect\":\"NoExecute\",\"tolerationSeconds\":300}]},"
				   "\"status\":{\"phase\":\"Running\",\"qosClass\":\"Burstable\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"True\"},{\"type\":\"Ready\",\"status\":\"True\"}]}}",
				ds ? "ds" : "app", n, p, ds ? "kube-system" : "default", n, p, 5000 + p, p % 50,
				ds ? "DaemonSet" : "ReplicaSet", p % 50, n, p % 7, cpu, mem, mem * 2);
		}
	}
	for (p = 0; p < pending; p++)
		fprintf(f, ",\n{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"pending-%04d\",\"namespace\":\"default\","
			   "\"labels\":{\"app\":\"burst\"},\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"burst\",\"uid\":\"u\",\"controller\":true}],"
			   "\"creationTimestamp\":\"2026-11-30T09:59:00Z\"},"
			   "\"spec\":{\"containers\":[{\"name\":\"main\",\"image\":\"registry.example/burst:1\",\"resources\":{\"requests\":{\"cpu\":\"%dm\",\"memory\":\"%dMi\"}}}]},"
			   "\"status\":{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\",\"message\":\"0/5000 nodes are available\"}]}}",
			/* too big for any node's free room: they need new nodes, and
			 * cluster:place() scans every node for each (its worst case) */
			p, 15000 + (int)(next_rand() % 800), 1024 + (int)(next_rand() % 3072));
	fputs("\n]}\n", f);
}

static const char CONFIG[] =
	"cluster: {kubeconfig: /dev/null, context: bench}\n"
	"node_groups:\n"
	"  - {name: general, min: 1, max: 3000, price_per_hour: 0.768, template: {allocatable: {cpu: 15890m, memory: 63350Mi, pods: 110}}}\n"
	"  - {name: compute, min: 1, max: 3000, price_per_hour: 0.68, template: {allocatable: {cpu: 15890m, memory: 30000Mi, pods: 110}}}\n"
	"  - {name: memory, min: 1, max: 3000, price_per_hour: 1.008, template: {allocatable: {cpu: 15890m, memory: 126000Mi, pods: 110}}}\n"
	"policy: {path: " LUASCALE_SOURCE "/policies/default.lua, params: {unneeded_for: 10m, max_scale_down: 10}}\n"
	"safety: {max_nodes_total: 10000, max_scale_down_per_round: 10}\n";

int main(int argc, char **argv)
{
	int nodes = argc > 1 ? atoi(argv[1]) : 5000;
	int per_node = argc > 2 ? atoi(argv[2]) : 30;
	int pending = argc > 3 ? atoi(argv[3]) : 200;
	char path[] = "/tmp/luascale-bench-XXXXXX";
	struct errbuf err;
	struct config *cfg;
	struct policy *pol;
	struct snapshot *s;
	struct safety_limits lim;
	struct drain_opts dopts;
	struct decision d;
	struct stat st;
	double t0, t_load;
	int fd, round;
	FILE *f;
	int64_t now = 1796032800;

	fd = mkstemp(path);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		perror("bench: temp file");
		return 1;
	}
	write_cluster(f, nodes, per_node, pending);
	fclose(f);
	stat(path, &st);
	printf("cluster: %d nodes, %d pods (%d per node), %d pending; List of %.1f MB\n", nodes,
	       nodes * per_node + pending, per_node, pending, (double)st.st_size / 1e6);
	printf("RSS before load: %.1f MB\n", (double)peak_rss_kb() / 1024.0);

	cfg = config_parse(CONFIG, sizeof(CONFIG) - 1, "bench", NULL, NULL, &err);
	if (!cfg) {
		fprintf(stderr, "bench: config: %s\n", err.msg);
		return 1;
	}
	t0 = now_ms();
	s = snapshot_new();
	if (snapshot_load_file(s, path, &err) < 0 ||
	    snapshot_set_groups(s, cfg->groups, cfg->n_groups, &err) < 0 ||
	    snapshot_finish(s, now, &err) < 0) {
		fprintf(stderr, "bench: %s\n", err.msg);
		return 1;
	}
	t_load = now_ms() - t0;
	unlink(path);
	printf("load: %.0f ms (%.0f MB/s), %zu pods pending\n", t_load,
	       (double)st.st_size / 1e6 / (t_load / 1e3), s->n_pending);

	{
		struct sandbox_limits sl = {cfg->policy_instructions, cfg->policy_memory,
					   cfg->policy_timeout_ms, NULL, false};

		pol = policy_load(cfg->policy_path, NULL, &sl, &cfg->params, &err);
	}
	if (!pol) {
		fprintf(stderr, "bench: policy: %s\n", err.msg);
		return 1;
	}
	decide_limits(cfg, &lim, &dopts);
	/* round 1 sees the cluster for the first time; round 2 is 10 minutes
	 * later, when the lightly used nodes have become scale-down candidates
	 * (pending pods are dropped so the policy is free to scale down) */
	for (round = 1; round <= 3; round++) {
		struct decide_opts o = {&lim, &dopts, false};

		if (round == 2) {
			s->now += 600;
		}
		if (round == 3) {
			s->n_pending = 0;
			s->now += 600; /* past the quiet time after round 2's scale-up */
		}
		t0 = now_ms();
		if (engine_decide(pol, s, &o, &d, &err) < 0 || !d.ok) {
			fprintf(stderr, "bench: decide: %s\n", d.ok ? err.msg : d.error);
			return 1;
		}
		printf("round %d%s: view %.1f ms, policy %.1f ms (%lld instructions), safety %.2f ms; total %.1f ms; %zu actions, %zu rejected; Lua heap %.1f MB\n",
		       round, round == 3 ? " (no pending, scale-down)" : round == 2 ? " (+10m)" : "",
		       d.stats.view_ms, d.stats.call_ms + d.stats.decode_ms,
		       (long long)d.stats.instructions, d.safety_ms, now_ms() - t0,
		       d.verdict.accepted.n_actions, d.verdict.n_rejected,
		       (double)d.stats.memory / 1048576.0);
		decision_free(&d);
	}
	printf("peak RSS: %.1f MB\n", (double)peak_rss_kb() / 1024.0);
	policy_free(pol);
	snapshot_free(s);
	config_free(cfg);
	return 0;
}
