/*
 * fuzz_state: a cluster state document (what `kubectl get nodes,pods,pdb
 * -A -o json` prints, or an API list) decoded into a snapshot with two
 * fixed node groups, then run through the scheduling math: a drain
 * simulation of every node, fits of pending pods on nodes, and packing of
 * the pending pods onto each group — with the results' invariants checked,
 * and the cached packing (a view's) checked against the plain one.
 * The decoding is also checked against itself: the JSON scanner fed in
 * small chunks must see what it sees in one (and in parse mode, its trees
 * must be what cJSON makes of each item), and snapshot_load_file() (a
 * file, its own buffering and second pass) must agree with
 * snapshot_add_json().
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arena.h"
#include "fuzz.h"
#include "jsonscan.h"
#include "model.h"
#include "sched.h"

#define NOW 1714550400 /* 2024-05-01T08:00:00Z */

/* Bound the quadratic fit checks so one input stays fast. */
#define MAX_FIT_CHECKS 4096

static void check(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "invariant broken: %s\n", what);
		abort();
	}
}

static int set_groups(struct snapshot *s, struct errbuf *err)
{
	static struct kv workers_sel[] = {{"luascale.io/group", "workers"}};
	static struct kv gpu_sel[] = {{"luascale.io/group", "gpu"}};
	static struct res_ext gpu_ext[] = {{"nvidia.com/gpu", 4}};
	static struct taint gpu_taint[] = {
		{"nvidia.com/gpu", "present", TAINT_NO_SCHEDULE},
	};
	struct node_group g[2];

	memset(g, 0, sizeof(g));
	g[0].name = "workers";
	g[0].min = 1;
	g[0].max = 10;
	g[0].price_per_hour = 0.2;
	g[0].selector = (struct kvlist){workers_sel, 1};
	g[0].tmpl.labels = g[0].selector;
	g[0].tmpl.allocatable.cpu_m = 4000;
	g[0].tmpl.allocatable.memory = 16LL << 30;
	g[0].tmpl.allocatable.ephemeral = 100LL << 30;
	g[0].tmpl.allocatable.pods = 110;
	g[0].target = -1;
	g[1].name = "gpu";
	g[1].max = 4;
	g[1].price_per_hour = 2.5;
	g[1].selector = (struct kvlist){gpu_sel, 1};
	g[1].tmpl.labels = g[1].selector;
	g[1].tmpl.allocatable.cpu_m = 8000;
	g[1].tmpl.allocatable.memory = 64LL << 30;
	g[1].tmpl.allocatable.pods = 110;
	g[1].tmpl.allocatable.ext = gpu_ext;
	g[1].tmpl.allocatable.n_ext = 1;
	g[1].tmpl.taints = gpu_taint;
	g[1].tmpl.n_taints = 1;
	g[1].target = 3; /* nodes on their way: upcoming bins */
	return snapshot_set_groups(s, g, 2, err);
}

/* sched_pack_cached() of 'pods' must put every pod where sched_pack_upcoming()
 * does: the cache's classes, ranks and kept orders change no placement. */
static void pack_cached_agrees(struct sched_cache *cache, const struct snapshot *s,
			       const uint32_t *pods, size_t n, size_t g, int cap)
{
	struct errbuf err = {{0}};
	struct pack_result want, got;
	size_t i;

	if (sched_pack_upcoming(s, pods, n, g, cap, -1, &want, &err) != 0)
		return; /* out of memory only */
	if (sched_pack_cached(cache, pods, n, g, cap, -1, &got, &err) != 0) {
		pack_result_free(&want);
		return;
	}
	check(got.n_placed == want.n_placed && got.new_nodes == want.new_nodes,
	      "cached pack: same counts");
	for (i = 0; i < n; i++)
		check(got.placement[i] == want.placement[i], "cached pack: same bins");
	pack_result_free(&want);
	pack_result_free(&got);
}

static void pack_all(const struct snapshot *s)
{
	static const int caps[] = {-1, 2};
	struct errbuf err = {{0}};
	struct sched_cache *cache = sched_cache_new(s);
	uint32_t *some = malloc((s->n_pending + 1) * sizeof(*some));
	size_t g, c, i, n_some = 0;

	/* two thirds of the pending pods, as a round of cheapest() leaves
	 * them (its packings walk the orders the full lists kept), and one
	 * of them listed twice */
	for (i = 0; some && i < s->n_pending; i++)
		if (i % 3 != 1)
			some[n_some++] = s->pending[i];
	for (g = 0; cache && some && g < s->n_groups; g++)
		for (c = 0; c < 2; c++)
			pack_cached_agrees(cache, s, s->pending, s->n_pending, g, caps[c]);
	for (g = 0; cache && some && g < s->n_groups; g++) {
		for (c = 0; c < 2; c++)
			pack_cached_agrees(cache, s, some, n_some, g, caps[c]);
		if (n_some) {
			some[n_some] = some[n_some / 2];
			pack_cached_agrees(cache, s, some, n_some + 1, g, -1);
		}
	}
	sched_cache_free(cache);
	free(some);

	for (g = 0; g < s->n_groups; g++) {
		for (c = 0; c < 2; c++) {
			struct pack_result r;
			int bins;

			if (sched_pack(s, s->pending, s->n_pending, g, caps[c], &r, &err) != 0)
				continue; /* out of memory only */
			check(r.n_pods == s->n_pending, "pack n_pods");
			check(r.n_placed + r.n_unplaced == r.n_pods, "pack placed + unplaced");
			check(r.upcoming >= 0 && r.upcoming_used <= r.upcoming, "pack upcoming");
			check(r.new_nodes >= 0, "pack new_nodes >= 0");
			check(caps[c] < 0 || r.new_nodes <= caps[c], "pack max_new");
			check(r.waste_cpu >= 0 && r.waste_cpu <= 1, "pack waste cpu in [0,1]");
			check(r.waste_memory >= 0 && r.waste_memory <= 1, "pack waste memory in [0,1]");
			bins = r.upcoming + r.new_nodes;
			for (i = 0; i < r.n_pods; i++)
				check(r.placement[i] >= -1 && r.placement[i] < bins,
				      "pack placement in range");
			pack_result_free(&r);
		}
	}
}

/* ---- the scanner, in one chunk and in many ---- */

/* What a scan delivered: a digest of every item, in order. */
struct scan_log {
	uint64_t digest;
	size_t n_items;
};

static uint64_t mix(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 1099511628211ULL;
	}
	return h;
}

static int on_scan_item(void *ctx, const char *data, size_t len, size_t index,
			uint64_t offset, struct errbuf *err)
{
	struct scan_log *log = ctx;

	(void)err;
	log->digest = mix(log->digest, &index, sizeof(index));
	log->digest = mix(log->digest, &offset, sizeof(offset));
	log->digest = mix(log->digest, &len, sizeof(len));
	log->digest = mix(log->digest, data, len);
	log->n_items++;
	return 0;
}

/* Scans 'data' in chunks of 'chunk' bytes (0: one chunk); fills 'log' and
 * 'err' and returns a digest of the outcome (status, kind, list, whole). */
static uint64_t scan(const uint8_t *data, size_t size, size_t chunk,
		     struct scan_log *log, struct errbuf *err)
{
	struct jsonscan *sc = jsonscan_new(on_scan_item, log, true);
	uint64_t h = 14695981039346656037ULL;
	const char *kind, *whole;
	size_t off = 0, whole_len = 0;
	int rc = 0;

	memset(log, 0, sizeof(*log));
	log->digest = h;
	err->msg[0] = '\0';
	if (!sc)
		abort();
	do {
		size_t n = chunk && size - off > chunk ? chunk : size - off;

		rc = jsonscan_feed(sc, (const char *)data + off, n, err);
		off += n;
	} while (rc == 0 && off < size);
	if (rc == 0)
		rc = jsonscan_end(sc, err);
	h = mix(h, &rc, sizeof(rc));
	kind = jsonscan_kind(sc);
	if (kind)
		h = mix(h, kind, strlen(kind) + 1);
	h = mix(h, &(int){jsonscan_is_list(sc)}, sizeof(int));
	whole = jsonscan_whole(sc, &whole_len);
	if (whole) {
		check(whole_len == size && memcmp(whole, data, size) == 0,
		      "jsonscan_whole() is the document");
		check(whole[whole_len] == '\0', "jsonscan_whole() is NUL-terminated");
	}
	jsonscan_free(sc);
	return h;
}

static void check_chunking(const uint8_t *data, size_t size)
{
	struct scan_log one, many;
	struct errbuf err_one, err_many;
	uint64_t h_one, h_many;
	size_t chunks[2];
	size_t i;

	/* byte by byte is thorough but slow on big documents */
	chunks[0] = size <= 4096 ? 1 : 7;
	chunks[1] = size ? 2 + data[size - 1] % 61 : 3;
	h_one = scan(data, size, 0, &one, &err_one);
	for (i = 0; i < 2; i++) {
		h_many = scan(data, size, chunks[i], &many, &err_many);
		if (h_one != h_many || one.digest != many.digest ||
		    one.n_items != many.n_items ||
		    strcmp(err_one.msg, err_many.msg) != 0) {
			fprintf(stderr, "jsonscan: one chunk (%zu items, \"%s\") and chunks "
				"of %zu (%zu items, \"%s\") disagree\n", one.n_items,
				err_one.msg, chunks[i], many.n_items, err_many.msg);
			abort();
		}
	}
}

/* ---- parse mode: trees as cJSON makes them, whatever the chunking ---- */

struct parse_log {
	struct jsonscan *sc;
	uint64_t digest;
	size_t n_items;
};

static int on_parsed_item(void *ctx, const char *data, size_t len, size_t index,
			  uint64_t offset, struct errbuf *err)
{
	struct parse_log *log = ctx;
	const cJSON *t = jsonscan_item_tree(log->sc);
	cJSON *ref = cJSON_ParseWithLength(data, len);
	char *a, *b;

	(void)err;
	check(t != NULL, "parse mode hands a tree to the callback");
	check(ref != NULL, "cJSON parses every item parse mode accepted");
	a = cJSON_PrintUnformatted(t);
	b = cJSON_PrintUnformatted(ref);
	if (a && b)
		check(strcmp(a, b) == 0, "parse mode's tree is cJSON's");
	log->digest = mix(log->digest, &index, sizeof(index));
	log->digest = mix(log->digest, &offset, sizeof(offset));
	log->digest = mix(log->digest, data, len);
	if (a)
		log->digest = mix(log->digest, a, strlen(a));
	free(a);
	free(b);
	cJSON_Delete(ref);
	log->n_items++;
	return 0;
}

static uint64_t scan_parsed(const uint8_t *data, size_t size, size_t chunk,
			    struct parse_log *log, struct errbuf *err)
{
	uint64_t h = 14695981039346656037ULL;
	size_t off = 0;
	int rc = 0;

	memset(log, 0, sizeof(*log));
	log->digest = h;
	err->msg[0] = '\0';
	log->sc = jsonscan_new(on_parsed_item, log, false);
	if (!log->sc)
		abort();
	jsonscan_set_parse(log->sc, true);
	do {
		size_t n = chunk && size - off > chunk ? chunk : size - off;

		rc = jsonscan_feed(log->sc, (const char *)data + off, n, err);
		off += n;
	} while (rc == 0 && off < size);
	if (rc == 0)
		rc = jsonscan_end(log->sc, err);
	h = mix(h, &rc, sizeof(rc));
	jsonscan_free(log->sc);
	return h;
}

static void check_parse_mode(const uint8_t *data, size_t size)
{
	struct parse_log one, many;
	struct errbuf err_one, err_many;
	uint64_t h_one, h_many;
	size_t chunk = size <= 4096 ? 1 : 2 + (size ? data[0] % 61 : 0);

	h_one = scan_parsed(data, size, 0, &one, &err_one);
	h_many = scan_parsed(data, size, chunk, &many, &err_many);
	if (h_one != h_many || one.digest != many.digest || one.n_items != many.n_items ||
	    strcmp(err_one.msg, err_many.msg) != 0) {
		fprintf(stderr, "jsonscan parse mode: one chunk (%zu items, \"%s\") and chunks "
			"of %zu (%zu items, \"%s\") disagree\n", one.n_items, err_one.msg,
			chunk, many.n_items, err_many.msg);
		abort();
	}
}

/* ---- snapshot_load_file() against snapshot_add_json() ---- */

static char state_file[64];

static void check_load_file(const uint8_t *data, size_t size,
			    const struct snapshot *mem, int mem_rc,
			    const struct errbuf *mem_err)
{
	struct snapshot *s;
	struct errbuf err = {{0}};
	FILE *f;
	int rc;

	if (!state_file[0]) {
		int fd;

		snprintf(state_file, sizeof(state_file), "/tmp/luascale-fuzz-XXXXXX");
		fd = mkstemp(state_file);
		if (fd < 0)
			abort();
		close(fd);
	}
	f = fopen(state_file, "wb");
	if (!f)
		abort();
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	if (fclose(f) != 0)
		abort();
	s = snapshot_new();
	if (!s)
		return;
	rc = snapshot_load_file(s, state_file, &err);
	if (rc != mem_rc || (rc == 0 && (s->n_nodes != mem->n_nodes ||
					 s->n_pods != mem->n_pods ||
					 s->n_pdbs != mem->n_pdbs ||
					 s->n_namespaces != mem->n_namespaces ||
					 s->n_pvcs != mem->n_pvcs || s->n_pvs != mem->n_pvs ||
					 s->n_storage_classes != mem->n_storage_classes ||
					 s->n_daemonsets != mem->n_daemonsets ||
					 s->volumes_known != mem->volumes_known ||
					 s->namespaces_known != mem->namespaces_known ||
					 s->daemonsets_known != mem->daemonsets_known))) {
		fprintf(stderr, "snapshot_load_file (%d: %s; %zu nodes, %zu pods, %zu pdbs) and "
			"snapshot_add_json (%d: %s; %zu nodes, %zu pods, %zu pdbs) disagree\n",
			rc, err.msg, s->n_nodes, s->n_pods, s->n_pdbs, mem_rc,
			mem_err->msg, mem->n_nodes, mem->n_pods, mem->n_pdbs);
		abort();
	}
	snapshot_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snapshot *s = snapshot_new();
	struct label_selector protect;
	struct drain_opts o;
	struct errbuf err = {{0}};
	uint8_t *excluded = NULL;
	size_t i, j, fits = 0;
	char why[256];
	int rc;

	if (!s)
		return 0;
	check_chunking(data, size);
	check_parse_mode(data, size);
	rc = snapshot_add_json(s, (const char *)data, size, "fuzz.json", &err);
	check(rc == 0 || err.msg[0] != '\0', "a decode failure says why");
	check_load_file(data, size, s, rc, &err);
	if (rc != 0)
		goto out;
	if (set_groups(s, &err) != 0 || snapshot_finish(s, NOW, &err) != 0)
		goto out;

	for (i = 0; i < s->n_pods; i++)
		check(s->pods[i].node >= -1 && s->pods[i].node < (int32_t)s->n_nodes,
		      "pod node index");
	for (i = 0; i < s->n_nodes; i++)
		check(s->nodes[i].group >= -1 && s->nodes[i].group < (int32_t)s->n_groups,
		      "node group index");
	for (i = 0; i < s->n_pending; i++)
		check(s->pending[i] < s->n_pods, "pending index");

	/* the input's size picks the drain options, so both ways get run */
	drain_opts_default(&o);
	if (label_selector_parse(s->arena, "app in (critical,db),!canary", &protect, &err) == 0)
		o.protected_pods = &protect;
	o.kube_system_needs_pdb = size & 1;
	o.local_storage_blocks = !(size & 2);
	if ((size & 4) && s->n_nodes) {
		excluded = calloc(s->n_nodes, 1);
		if (excluded)
			excluded[0] = 1;
		o.excluded = excluded;
	}
	for (i = 0; i < s->n_nodes; i++) {
		why[0] = '\0';
		if (!sched_drainable(s, i, &o, why, sizeof(why)))
			check(why[0] != '\0', "a node that cannot drain says why");
	}

	for (i = 0; i < s->n_pending; i++) {
		const struct pod *p = &s->pods[s->pending[i]];

		for (j = 0; j < s->n_nodes && fits < MAX_FIT_CHECKS; j++, fits++)
			(void)sched_fits_node(s, p, j, why, sizeof(why));
		for (j = 0; j < s->n_groups; j++)
			(void)sched_fits_template(p, &s->groups[j], why, sizeof(why));
	}
	pack_all(s);
out:
	free(excluded);
	snapshot_free(s);
	return 0;
}
