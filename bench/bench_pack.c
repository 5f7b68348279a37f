/*
 * bench_pack: first-fit-decreasing packing of pending pods with node
 * selectors, required node affinity, tolerations and a few GPU requests
 * onto 20 node groups in 3 zones (some tainted), the way
 * luascale.packing.cheapest() drives it: every group not used yet packs
 * what is left (counting what the steps before placed), the cheapest per
 * placed pod wins, its unplaced pods go round again. Each size runs twice:
 * plain ("pack_N_...") and with 30 % of the pods in 500 workloads that
 * spread over zones (maxSkew 1) or keep one replica per node (hostname
 * anti-affinity) among their own replicas ("pack_N_related_...").
 * Prints the time for 1,000 and 50,000 pending pods (wall min/median of
 * 3, and the least CPU time, which a shared machine disturbs less), the
 * pod packings a second and the new nodes the chosen steps buy. Run on
 * demand:
 *   build/bench/bench_pack [PODS...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_common.h"
#include "buf.h"
#include "model.h"
#include "runtime/memtune.h"
#include "sched.h"

#define N_GROUPS 20
#define RUNS 3

static unsigned rng;

static unsigned next_rand(void)
{
	rng = rng * 1103515245u + 12345u;
	return (rng >> 8) & 0xffffff;
}

static const char *const ZONES[3] = {"a", "b", "c"};
static const char *const TIERS[4] = {"web", "batch", "memory", "general"};

struct groups {
	struct node_group g[N_GROUPS];
	struct kv labels[N_GROUPS][3];
	char names[N_GROUPS][16];
	struct taint taint[N_GROUPS];
	struct res_ext gpu[N_GROUPS];
};

/* 20 groups: 4 sizes x tiers x zones; "batch" groups carry a taint, two
 * GPU groups carry nvidia.com/gpu and their own taint. */
static void make_groups(struct groups *G)
{
	static const int64_t cpu[4] = {4000, 8000, 16000, 32000};
	static const int64_t mem_gi[4] = {16, 32, 64, 128};
	int i;

	memset(G, 0, sizeof(*G));
	for (i = 0; i < N_GROUPS; i++) {
		struct node_group *g = &G->g[i];

		snprintf(G->names[i], sizeof(G->names[i]), "g%02d", i);
		g->name = G->names[i];
		g->max = 100000;
		g->price_per_hour = 0.1 * (double)cpu[i % 4] / 1000.0 * (1.0 + 0.01 * i);
		G->labels[i][0] = (struct kv){"luascale.io/group", G->names[i]};
		G->labels[i][1] = (struct kv){"tier", TIERS[i % 4]};
		G->labels[i][2] = (struct kv){"zone", ZONES[i % 3]};
		g->selector = (struct kvlist){G->labels[i], 1};
		g->tmpl.labels = (struct kvlist){G->labels[i], 3};
		g->tmpl.allocatable.cpu_m = cpu[i % 4];
		g->tmpl.allocatable.memory = mem_gi[(i / 4 + i) % 4] << 30;
		g->tmpl.allocatable.ephemeral = 100LL << 30;
		g->tmpl.allocatable.pods = 110;
		g->target = -1;
		if (i % 4 == 1) {
			G->taint[i] = (struct taint){"dedicated", "batch", TAINT_NO_SCHEDULE};
			g->tmpl.taints = &G->taint[i];
			g->tmpl.n_taints = 1;
		}
		if (i == 18 || i == 19) {
			G->taint[i] = (struct taint){"nvidia.com/gpu", "present", TAINT_NO_SCHEDULE};
			g->tmpl.taints = &G->taint[i];
			g->tmpl.n_taints = 1;
			G->gpu[i] = (struct res_ext){"nvidia.com/gpu", 4};
			g->tmpl.allocatable.ext = &G->gpu[i];
			g->tmpl.allocatable.n_ext = 1;
		}
	}
}

/* One pending pod: sizes 100m..2 cpu, 128Mi..4Gi; a third select a tier
 * (and tolerate its taint when it is "batch"), a third require zones by
 * affinity, a fifth tolerate the batch taint, one in 33 asks for GPUs. */
static void add_pod(struct buf *b, int i, bool related)
{
	unsigned r = next_rand() % 100;
	const char *tier = TIERS[next_rand() % 4];
	/* 3 in 10 pods belong to one of 500 workloads (all in namespace ns0) */
	int w = related && i % 10 < 3 ? (i / 10 * 3 + i % 10) % 500 : -1;

	if (w >= 0)
		buf_printf(b, "%s{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"ns0\",\"name\":\"p%06d\","
			   "\"labels\":{\"app\":\"w%d\"},"
			   "\"creationTimestamp\":\"2026-11-30T09:00:00Z\",\"ownerReferences\":[{\"kind\":\"ReplicaSet\","
			   "\"name\":\"rs\",\"controller\":true}]},\"spec\":{",
			   i ? "," : "", i, w);
	else
		buf_printf(b, "%s{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"ns%d\",\"name\":\"p%06d\","
			   "\"creationTimestamp\":\"2026-11-30T09:00:00Z\",\"ownerReferences\":[{\"kind\":\"ReplicaSet\","
			   "\"name\":\"rs\",\"controller\":true}]},\"spec\":{",
			   i ? "," : "", i % 7, i);
	if (w >= 0 && w % 2 == 0)
		buf_printf(b, "\"topologySpreadConstraints\":[{\"maxSkew\":1,\"topologyKey\":\"zone\","
			   "\"whenUnsatisfiable\":\"DoNotSchedule\",\"labelSelector\":{\"matchLabels\":{\"app\":\"w%d\"}}}],",
			   w);
	else if (w >= 0)
		buf_printf(b, "\"affinity\":{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
			   "[{\"labelSelector\":{\"matchLabels\":{\"app\":\"w%d\"}},\"topologyKey\":\"kubernetes.io/hostname\"}]}},",
			   w);
	if (w >= 0 && r >= 20 && r < 55)
		r = 60; /* the node affinity below would overwrite the anti-affinity */
	if (r < 33)
		buf_printf(b, "\"nodeSelector\":{\"tier\":\"%s\"},", tier);
	if (r >= 20 && r < 55)
		buf_printf(b, "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
			   "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\","
			   "\"values\":[\"%s\",\"%s\"]},{\"key\":\"tier\",\"operator\":\"NotIn\",\"values\":[\"gpu\"]}]}]}}},",
			   ZONES[next_rand() % 3], ZONES[next_rand() % 3]);
	if ((r >= 50 && r < 70) || (r < 33 && strcmp(tier, "batch") == 0))
		buf_puts(b, "\"tolerations\":[{\"key\":\"dedicated\",\"operator\":\"Equal\",\"value\":\"batch\",\"effect\":\"NoSchedule\"}],");
	if (r >= 97)
		buf_puts(b, "\"tolerations\":[{\"key\":\"nvidia.com/gpu\",\"operator\":\"Exists\"}],");
	buf_printf(b, "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"%um\",\"memory\":\"%uMi\"",
		   100 + next_rand() % 1900, 128 + next_rand() % 3968);
	if (r >= 97)
		buf_printf(b, ",\"nvidia.com/gpu\":\"%u\"", 1 + next_rand() % 2);
	buf_puts(b, "}}}]},\"status\":{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\","
		 "\"status\":\"False\",\"reason\":\"Unschedulable\"}]}}");
}

static struct snapshot *make_cluster(int pods, const struct groups *G, bool related)
{
	struct snapshot *s = snapshot_new();
	struct buf b = BUF_INIT;
	struct errbuf err;
	int i;

	rng = 424242;
	buf_puts(&b, "{\"kind\":\"List\",\"items\":[");
	for (i = 0; i < pods; i++)
		add_pod(&b, i, related);
	buf_puts(&b, "]}");
	if (!s || snapshot_add_json(s, b.data, b.len, "bench", &err) < 0 ||
	    snapshot_set_groups(s, G->g, N_GROUPS, &err) < 0 ||
	    snapshot_finish(s, 1796032800, &err) < 0) {
		fprintf(stderr, "bench_pack: %s\n", err.msg);
		exit(1);
	}
	buf_free(&b);
	return s;
}

/* luascale.packing.cheapest() over every group: pod packings done, new
 * nodes of the chosen steps, pods no group took. */
static void cheapest(const struct snapshot *s, long long *packs, long long *new_nodes,
		     size_t *left_out)
{
	uint32_t *left = malloc(s->n_pending * sizeof(*left));
	/* as a policy's view does: one cache for the round's packings */
	struct sched_cache *cache = sched_cache_new(s);
	bool used[N_GROUPS] = {0};
	size_t n_left = s->n_pending, i, n_prior = 0, n_steps = 0;
	/* what the chosen steps placed, for the next packings (their 'after') */
	struct pack_prior *prior = malloc((s->n_pending ? s->n_pending : 1) * sizeof(*prior));
	struct errbuf err;

	if (!left || !cache || !prior) {
		fprintf(stderr, "bench_pack: out of memory\n");
		exit(1);
	}
	memcpy(left, s->pending, n_left * sizeof(*left));
	*packs = 0;
	*new_nodes = 0;
	while (n_left > 0) {
		struct pack_result best = {0}, r;
		double best_cost = 0;
		int best_g = -1, g;

		for (g = 0; g < N_GROUPS; g++) {
			double cost;

			if (used[g])
				continue;
			if (sched_pack_after(cache, left, n_left, (size_t)g, s->groups[g].max, 0, prior,
					     n_prior, false, &r, &err) < 0) {
				fprintf(stderr, "bench_pack: %s\n", err.msg);
				exit(1);
			}
			*packs += (long long)n_left;
			if (r.n_placed == 0) {
				pack_result_free(&r);
				continue;
			}
			cost = s->groups[g].price_per_hour * r.new_nodes / (double)r.n_placed;
			if (best_g < 0 || cost < best_cost ||
			    (cost == best_cost && r.n_placed > best.n_placed)) {
				pack_result_free(&best);
				best = r;
				best_cost = cost;
				best_g = g;
			} else {
				pack_result_free(&r);
			}
		}
		if (best_g < 0)
			break;
		used[best_g] = true;
		*new_nodes += best.new_nodes;
		n_steps++;
		{
			size_t k = 0;

			for (i = 0; i < n_left; i++) {
				if (best.placement[i] < 0)
					left[k++] = left[i];
				else
					prior[n_prior++] = (struct pack_prior){left[i], (uint32_t)best_g,
									       best.placement[i], 0,
									       (uint32_t)n_steps};
			}
			n_left = k;
		}
		pack_result_free(&best);
	}
	*left_out = n_left;
	sched_cache_free(cache);
	free(prior);
	free(left);
}

int main(int argc, char **argv)
{
	static const int defaults[] = {1000, 50000};
	struct groups G;
	int n_sizes = argc > 1 ? argc - 1 : 2, k, run;

	/* the allocator as the daemon sets it (src/main.c): each packing's
	 * arrays come from memory freed by the one before, not fresh pages */
	memtune_keep_freed();
	make_groups(&G);
	for (k = 0; k < 2 * n_sizes; k++) {
		int pods = argc > 1 ? atoi(argv[k / 2 + 1]) : defaults[k / 2];
		bool related = k % 2 == 1;
		const char *kind = related ? "_related" : "";
		struct snapshot *s = make_cluster(pods, &G, related);
		double t[RUNS], cpu[RUNS], min, med;
		long long packs = 0, nodes = 0;
		size_t left = 0;

		for (run = 0; run < RUNS; run++) {
			double t0 = bench_now();
			clock_t c0 = clock();

			cheapest(s, &packs, &nodes, &left);
			t[run] = bench_now() - t0;
			cpu[run] = (double)(clock() - c0) / CLOCKS_PER_SEC;
		}
		bench_min_median(t, RUNS, &min, &med);
		printf("pack_%d%s_pods_ms_min %.1f\n", pods, kind, min * 1e3);
		printf("pack_%d%s_pods_ms_median %.1f\n", pods, kind, med * 1e3);
		bench_min_median(cpu, RUNS, &min, &med);
		printf("pack_%d%s_pods_cpu_ms_min %.1f\n", pods, kind, min * 1e3);
		bench_min_median(t, RUNS, &min, &med);
		printf("pack_%d%s_pod_packings_per_s %.0f\n", pods, kind, (double)packs / med);
		printf("pack_%d%s_pods_per_s %.0f\n", pods, kind, (double)pods / med);
		printf("pack_%d%s_new_nodes %lld\n", pods, kind, nodes);
		printf("pack_%d%s_pods_unplaced %zu\n", pods, kind, left);
		snapshot_free(s);
	}
	return 0;
}
