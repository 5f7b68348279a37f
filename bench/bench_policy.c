/*
 * bench_policy: one reconcile of the bundled policies on a large cluster
 * built in memory (no JSON): the round's time and Lua heap for
 * policies/default.lua and policies/jupyterhub.lua, their ratio, what the
 * instruction hook costs (the same policy with and without it, rounds
 * interleaved in one run) and what the per-node notes cost (read, as
 * `luascale decide` does, or not, as the daemon does). Two rounds: with
 * the pending pods (scale-up) and without them (steady, scale-down).
 * Times are the thread's CPU time, so neighbours on a shared machine
 * count less. With RELATED (0 or 1), a fifth of the workloads relate
 * their replicas: half with required hostname anti-affinity, half spread
 * over zones (maxSkew 1), as the scheduler left them. The process's peak
 * RSS is printed last. Then binpack.lua's steady round, its consolidation
 * (cluster:replacement_for over its candidates) on and off: as it is (a
 * light node is removed, so no replacement is looked for) and with
 * max_removals_per_round 0, so every round looks for one, against the
 * default instruction budget of 200 million. Run on demand:
 *   build/bench/bench_policy [NODES] [PODS_PER_NODE] [PENDING] [ROUNDS] [RELATED]
 */
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_common.h"
#include "config.h"
#include "engine/decide.h"
#include "policy/plan.h"
#include "model.h"
#include "policy/host.h"
#include "topology.h"

/* ---- the cluster ---- */

static unsigned rng = 12345;

static unsigned next_rand(void)
{
	rng = rng * 1103515245u + 12345u;
	return (rng >> 8) & 0xffffff;
}

static const char *const GROUPS[3] = {"general", "compute", "memory"};
static const char *const ZONES[3] = {"eu-west-1a", "eu-west-1b", "eu-west-1c"};
#define MARK "luascale.io/cordoned-for-scale-down"
#define CRITICAL "hub.jupyter.org/autoscaler-critical"

/* Strings and arrays the snapshot borrows: freed after it. */
struct pool {
	void **blocks;
	size_t n, cap;
};

static void *pool_alloc(struct pool *p, size_t size)
{
	void *b = calloc(1, size ? size : 1);

	if (!b || (p->n == p->cap && !(p->blocks = realloc(p->blocks, (p->cap = p->cap * 2 + 64) *
								     sizeof(void *))))) {
		fprintf(stderr, "bench_policy: out of memory\n");
		exit(1);
	}
	p->blocks[p->n++] = b;
	return b;
}

static const char *pool_fmt(struct pool *p, const char *fmt, int a, int b)
{
	char tmp[128];
	int n = snprintf(tmp, sizeof(tmp), fmt, a, b);
	char *s = pool_alloc(p, (size_t)n + 1);

	memcpy(s, tmp, (size_t)n + 1);
	return s;
}

static void pool_free(struct pool *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		free(p->blocks[i]);
	free(p->blocks);
}

/*
 * 'nodes' nodes of three groups, 'per_node' pods on each (the first a
 * DaemonSet pod in kube-system, a fifth of the nodes lightly used, one
 * node in 50 running a critical pod, one in 100 cordoned for scale-down),
 * and 'pending' pods too big for any node's free room.
 */
/* The relations of workload app-<a> (a fifth of the 50 are related). */
static struct pod_term anti_term[50];
static struct spread_constraint spread_sc[50];
static struct selector_req app_req[50];
static const char *app_val[50];

static void relate(struct pool *pl, struct pod *pd, int app)
{
	if (app % 5 > 1)
		return;
	if (!app_val[app]) {
		app_val[app] = pool_fmt(pl, "app-%d", app, 0);
		app_req[app] = (struct selector_req){"app", SELECTOR_IN, &app_val[app], 1};
		anti_term[app] = (struct pod_term){{&app_req[app], 1}, false, NULL, 0, {NULL, 0}, false,
						   "kubernetes.io/hostname", 0};
		/* as the decoder leaves it */
		anti_term[app].fingerprint = pod_term_fingerprint(&anti_term[app]);
		spread_sc[app] = (struct spread_constraint){1, 1, "topology.kubernetes.io/zone",
							    {&app_req[app], 1}, false, true, false};
	}
	if (app % 5 == 0) {
		pd->anti_terms = &anti_term[app];
		pd->n_anti_terms = 1;
	} else {
		pd->spread = &spread_sc[app];
		pd->n_spread = 1;
	}
}

static struct snapshot *build_cluster(struct pool *pl, int nodes, int per_node, int pending,
				      const struct config *cfg, int64_t now, bool related)
{
	struct snapshot *s = snapshot_new();
	struct errbuf err;
	int n, p;

	if (!s || snapshot_reserve(s, (size_t)nodes, (size_t)nodes * (size_t)per_node + (size_t)pending,
				   0, &err) < 0)
		goto fail;
	for (n = 0; n < nodes; n++) {
		struct node nd;
		struct kv *labels = pool_alloc(pl, 5 * sizeof(*labels));
		struct kv *ann = pool_alloc(pl, 2 * sizeof(*ann));

		memset(&nd, 0, sizeof(nd));
		nd.name = pool_fmt(pl, "node-%05d", n, 0);
		nd.provider_id = pool_fmt(pl, "aws:///eu-west-1a/i-%012d", n, 0);
		labels[0] = (struct kv){"kubernetes.io/hostname", nd.name};
		labels[1] = (struct kv){"kubernetes.io/os", "linux"};
		labels[2] = (struct kv){"node.kubernetes.io/instance-type", "m5.4xlarge"};
		labels[3] = (struct kv){"topology.kubernetes.io/zone", ZONES[n % 3]};
		labels[4] = (struct kv){"luascale.io/node-group", GROUPS[n % 3]};
		nd.labels = (struct kvlist){labels, 5};
		ann[0] = (struct kv){"node.alpha.kubernetes.io/ttl", "0"};
		nd.annotations = (struct kvlist){ann, 1};
		if (n % 100 == 7) {
			ann[1] = (struct kv){MARK, "1796030000"};
			nd.annotations.n = 2;
			nd.unschedulable = true;
		}
		nd.allocatable = (struct resources){15890, 63350LL << 20, 95551679124LL, 110, NULL, 0};
		nd.ready = true;
		nd.created = now - 30 * 86400;
		if (snapshot_add_node(s, &nd, &err) < 0)
			goto fail;
	}
	for (n = 0; n < nodes; n++) {
		int light = n % 5 == 0;

		for (p = 0; p < per_node; p++) {
			struct pod pd;
			struct kv *labels = pool_alloc(pl, 3 * sizeof(*labels));
			int cpu = light ? 20 + (int)(next_rand() % 30) : 200 + (int)(next_rand() % 300);
			int mem = light ? 64 + (int)(next_rand() % 64) : 512 + (int)(next_rand() % 1024);
			int ds = p == 0;

			memset(&pd, 0, sizeof(pd));
			pd.ns = ds ? "kube-system" : "default";
			pd.name = pool_fmt(pl, ds ? "ds-%05d-%02d" : "app-%05d-%02d", n, p);
			labels[0] = (struct kv){"app", pool_fmt(pl, "app-%d", p % 50, 0)};
			labels[1] = (struct kv){"pod-template-hash", "7f9c6d"};
			pd.labels = (struct kvlist){labels, 2};
			if (p == 1 && n % 50 == 3) {
				labels[2] = (struct kv){CRITICAL, "true"};
				pd.labels.n = 3;
			}
			pd.controller_kind = ds ? "DaemonSet" : "ReplicaSet";
			pd.controller_name = pool_fmt(pl, "app-%d", p % 50, 0);
			pd.node_name = s->nodes[n].name;
			pd.phase = POD_RUNNING;
			pd.flags = ds ? POD_DAEMONSET : 0;
			pd.requests = (struct resources){cpu, (int64_t)mem << 20, 0, 1, NULL, 0};
			pd.created = now - 3600;
			pd.local_volume = "";
			pd.sched_message = "";
			if (related && !ds)
				relate(pl, &pd, p % 50);
			if (snapshot_add_pod(s, &pd, &err) < 0)
				goto fail;
		}
	}
	for (p = 0; p < pending; p++) {
		struct pod pd;
		struct kv *labels = pool_alloc(pl, sizeof(*labels));

		memset(&pd, 0, sizeof(pd));
		pd.ns = "default";
		pd.name = pool_fmt(pl, "pending-%04d", p, 0);
		labels[0] = (struct kv){"app", "burst"};
		pd.labels = (struct kvlist){labels, 1};
		pd.controller_kind = "ReplicaSet";
		pd.controller_name = "burst";
		pd.node_name = "";
		pd.phase = POD_PENDING;
		pd.flags = POD_UNSCHEDULABLE;
		pd.requests = (struct resources){15000 + (int)(next_rand() % 800),
						 (int64_t)(1024 + (int)(next_rand() % 3072)) << 20, 0, 1, NULL, 0};
		pd.created = now - 60;
		pd.local_volume = "";
		pd.sched_message = "0/5000 nodes are available";
		if (snapshot_add_pod(s, &pd, &err) < 0)
			goto fail;
	}
	if (snapshot_set_groups(s, cfg->groups, cfg->n_groups, &err) < 0 ||
	    snapshot_finish(s, now, &err) < 0)
		goto fail;
	return s;
fail:
	fprintf(stderr, "bench_policy: building the cluster: %s\n", s ? err.msg : "out of memory");
	exit(1);
}

static const char CONFIG[] =
	"cluster: {kubeconfig: /dev/null, context: bench}\n"
	"node_groups:\n"
	"  - {name: general, min: 1, max: 30000, price_per_hour: 0.768, template: {allocatable: {cpu: 15890m, memory: 63350Mi, pods: 110}}}\n"
	"  - {name: compute, min: 1, max: 30000, price_per_hour: 0.68, template: {allocatable: {cpu: 15890m, memory: 30000Mi, pods: 110}}}\n"
	"  - {name: memory, min: 1, max: 30000, price_per_hour: 1.008, template: {allocatable: {cpu: 15890m, memory: 126000Mi, pods: 110}}}\n"
	"safety: {max_nodes_total: 100000, max_scale_down_per_round: 10, protected_pod_selector: \"" CRITICAL "\"}\n";

/* binpack.lua's params for the consolidation rows: as shipped, and with
 * no removals, so that every round looks for a replacement */
static const char *const BINPACK_PARAMS[4] = {
	"",
	"policy: {params: {consolidation: false}}\n",
	"policy: {params: {max_removals_per_round: 0}}\n",
	"policy: {params: {max_removals_per_round: 0, consolidation: false}}\n",
};
static const char *const BINPACK_NAMES[4] = {
	"binpack", "binpack consolidation off", "binpack no removals", "binpack no removals, consolidation off",
};

/* ---- the runs ---- */

enum variant { V_PLAIN, V_UNCOUNTED, V_NOTES, N_VARIANTS };

struct run {
	const char *name;
	struct policy *pol[N_VARIANTS];
	double total[N_VARIANTS][64]; /* engine_decide, ms */
	double call[N_VARIANTS][64];  /* the policy's call alone */
	double view[64];
	double heap_mb, peak_mb;
	long long instructions;
	size_t actions;
};

static struct policy *load(const char *file, const struct config *cfg, bool uncounted)
{
	char path[4096];
	struct sandbox_limits sl;
	struct errbuf err;
	struct policy *p;

	memset(&sl, 0, sizeof(sl));
	sl.instructions = 2000000000LL;
	sl.memory = 2048LL << 20; /* the figure is what it needs, not the cap */
	sl.cpu_ms = 600000;
	sl.uncounted = uncounted;
	snprintf(path, sizeof(path), "%s/policies/%s", LUASCALE_SOURCE, file);
	p = policy_load(path, NULL, &sl, &cfg->params, &err);
	if (!p) {
		fprintf(stderr, "bench_policy: %s: %s\n", file, err.msg);
		exit(1);
	}
	return p;
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One policy_reconcile (view, call, plan read back; the safety checks
 * are a fraction of a millisecond): its CPU time in ms. */
static double decide_once(struct run *r, enum variant v, const struct snapshot *s,
			  const struct drain_opts *dopts, int k)
{
	struct policy_stats st;
	struct plan plan;
	struct errbuf err;
	double t0, t, wall;

	policy_set_notes(r->pol[v], v == V_NOTES);
	t0 = cpu_now();
	wall = bench_now();
	if (policy_reconcile(r->pol[v], s, dopts, &plan, &st, &err) < 0) {
		fprintf(stderr, "bench_policy: %s: %s\n", r->name, err.msg);
		exit(1);
	}
	t = (cpu_now() - t0) * 1e3;
	wall = (bench_now() - wall) * 1e3;
	r->total[v][k] = t;
	/* the call's share of the wall time, applied to the CPU time */
	r->call[v][k] = wall > 0 ? t * (st.call_ms + st.decode_ms) / wall : 0;
	if (v == V_PLAIN) {
		r->view[k] = wall > 0 ? t * st.view_ms / wall : 0;
		r->heap_mb = (double)st.memory / 1048576.0;
		if ((double)st.memory_peak / 1048576.0 > r->peak_mb)
			r->peak_mb = (double)st.memory_peak / 1048576.0;
		r->instructions = (long long)st.instructions;
		r->actions = plan.n_actions;
	}
	plan_free(&plan);
	return t;
}

static double median(const double *t, int n)
{
	double min, med;

	bench_min_median(t, n, &min, &med);
	return med;
}

static double minimum(const double *t, int n)
{
	double min, med;

	bench_min_median(t, n, &min, &med);
	return min;
}

/* Prints the figures of one scenario, each row named "<policy> <scenario> ...". */
static void report(struct run *runs, int rounds, const char *scn)
{
	char label[160];
	int i;

	printf("%s:\n", scn);
	for (i = 0; i < 2; i++) {
		struct run *r = &runs[i];

		snprintf(label, sizeof(label), "%s %s policy cpu ms (min)", r->name, scn);
		bench_row_f(label, minimum(r->total[V_PLAIN], rounds));
		snprintf(label, sizeof(label), "%s %s policy cpu ms (median)", r->name, scn);
		bench_row_f(label, median(r->total[V_PLAIN], rounds));
		snprintf(label, sizeof(label), "%s %s view ms (median)", r->name, scn);
		bench_row_f(label, median(r->view, rounds));
		snprintf(label, sizeof(label), "%s %s call+decode ms (median)", r->name, scn);
		bench_row_f(label, median(r->call[V_PLAIN], rounds));
		snprintf(label, sizeof(label), "%s %s Lua heap after MB", r->name, scn);
		bench_row_f(label, r->heap_mb);
		snprintf(label, sizeof(label), "%s %s Lua heap peak MB", r->name, scn);
		bench_row_f(label, r->peak_mb);
		snprintf(label, sizeof(label), "%s %s instructions", r->name, scn);
		bench_row_n(label, r->instructions);
		snprintf(label, sizeof(label), "%s %s actions", r->name, scn);
		bench_row_n(label, (long long)r->actions);
		snprintf(label, sizeof(label), "%s %s hook on/off (call)", r->name, scn);
		bench_row_f(label, median(r->call[V_PLAIN], rounds) / median(r->call[V_UNCOUNTED], rounds));
		snprintf(label, sizeof(label), "%s %s hook on/off (policy)", r->name, scn);
		bench_row_f(label, median(r->total[V_PLAIN], rounds) / median(r->total[V_UNCOUNTED], rounds));
		snprintf(label, sizeof(label), "%s %s notes read/unread (policy)", r->name, scn);
		bench_row_f(label, median(r->total[V_NOTES], rounds) / median(r->total[V_PLAIN], rounds));
	}
	snprintf(label, sizeof(label), "jupyterhub/default %s round (median)", scn);
	bench_row_f(label, median(runs[1].total[V_PLAIN], rounds) / median(runs[0].total[V_PLAIN], rounds));
}

int main(int argc, char **argv)
{
	int nodes = argc > 1 ? atoi(argv[1]) : 5000;
	int per_node = argc > 2 ? atoi(argv[2]) : 30;
	int pending = argc > 3 ? atoi(argv[3]) : 200;
	int rounds = argc > 4 ? atoi(argv[4]) : 5;
	bool related = argc > 5 && atoi(argv[5]) != 0;
	struct rusage ru;
	struct run runs[2] = {{.name = "default"}, {.name = "jupyterhub"}};
	const char *files[2] = {"default.lua", "jupyterhub.lua"};
	struct safety_limits lim;
	struct drain_opts dopts;
	struct pool pl = {0};
	struct config *cfg;
	struct snapshot *s;
	int64_t now = 1796032800;
	double t0;
	int i, k, v, sc;

	if (nodes < 1 || per_node < 0 || pending < 0 || rounds < 1 || rounds > 64) {
		fprintf(stderr, "usage: bench_policy [NODES] [PODS_PER_NODE] [PENDING] [ROUNDS 1..64] [RELATED 0|1]\n");
		return 2;
	}
	cfg = bench_parse_config(CONFIG, "bench_policy");
	if (!cfg)
		return 1;
	t0 = bench_now();
	s = build_cluster(&pl, nodes, per_node, pending, cfg, now, related);
	printf("bench_policy: %d nodes, %zu pods (%d a node), %zu pending%s; built in %.0f ms; %d rounds each\n",
	       nodes, s->n_pods, per_node, s->n_pending,
	       related ? ", a fifth of the workloads with anti-affinity or zone spread" : "",
	       (bench_now() - t0) * 1e3, rounds);
	{
		/* what a round pays once per snapshot when pods relate: the
		 * relations index (topology.c) over every node and bound pod */
		double t1 = bench_now();
		clock_t c1 = clock();
		struct topo *t = topo_new(s);
		int again = getenv("BENCH_INDEX_REPEAT") ? atoi(getenv("BENCH_INDEX_REPEAT")) : 0;

		while (t && again-- > 0) { /* for a profiler's sake */
			topo_free(t);
			t = topo_new(s);
		}
		if (!t) {
			fprintf(stderr, "bench_policy: out of memory\n");
			return 1;
		}
		bench_row_f("relations index build ms (wall)", (bench_now() - t1) * 1e3);
		bench_row_f("relations index build cpu ms", (double)(clock() - c1) * 1e3 / CLOCKS_PER_SEC);
		topo_free(t);
	}
	decide_limits(cfg, &lim, &dopts);
	for (i = 0; i < 2; i++) {
		runs[i].pol[V_PLAIN] = load(files[i], cfg, false);
		runs[i].pol[V_UNCOUNTED] = load(files[i], cfg, true);
		runs[i].pol[V_NOTES] = load(files[i], cfg, false);
	}
	for (sc = 0; sc < 2; sc++) {
		if (sc == 1)
			s->n_pending = 0; /* steady: nothing to scale up for */
		for (i = 0; i < 2; i++) {
			memset(runs[i].total, 0, sizeof(runs[i].total));
			runs[i].peak_mb = 0;
		}
		/* interleaved, so a neighbour's load falls on every variant alike */
		for (k = 0; k < rounds; k++)
			for (i = 0; i < 2; i++)
				for (v = 0; v < N_VARIANTS; v++)
					decide_once(&runs[i], (enum variant)v, s, &dopts, k);
		report(runs, rounds, sc ? "steady" : "scale-up");
	}
	for (i = 0; i < 2; i++)
		for (v = 0; v < N_VARIANTS; v++)
			policy_free(runs[i].pol[v]);
	/* binpack's consolidation, steady (nothing pending) */
	printf("steady, binpack.lua's consolidation:\n");
	for (i = 0; i < 4; i++) {
		char text[4096], label[160];
		struct config *bc;
		struct run br = {.name = BINPACK_NAMES[i]};

		snprintf(text, sizeof(text), "%s%s", CONFIG, BINPACK_PARAMS[i]);
		if (!(bc = bench_parse_config(text, "bench_policy")))
			return 1;
		br.pol[V_PLAIN] = load("binpack.lua", bc, false);
		for (k = 0; k < rounds; k++)
			decide_once(&br, V_PLAIN, s, &dopts, k);
		snprintf(label, sizeof(label), "%s policy cpu ms (median)", br.name);
		bench_row_f(label, median(br.total[V_PLAIN], rounds));
		snprintf(label, sizeof(label), "%s instructions", br.name);
		bench_row_n(label, br.instructions);
		snprintf(label, sizeof(label), "%s Lua heap peak MB", br.name);
		bench_row_f(label, br.peak_mb);
		snprintf(label, sizeof(label), "%s actions", br.name);
		bench_row_n(label, (long long)br.actions);
		policy_free(br.pol[V_PLAIN]);
		config_free(bc);
	}
	snapshot_free(s);
	pool_free(&pl);
	config_free(cfg);
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		bench_row_f("peak RSS MB", (double)ru.ru_maxrss / 1024.0);
	return 0;
}

