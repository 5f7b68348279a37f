/*
 * bench_load: loading a recorded List the way `luascale decide` does
 * (snapshot_load_file, streamed), against a peer that only reads the same
 * file whole and parses it with cJSON. Each run is its own child process,
 * so each has its own peak RSS; the two alternate, 3 runs each. Run on demand:
 *   build/bench/bench_load [FILE]
 * Without FILE, a 170 MB kubectl-indented List is written to /tmp by
 * bench/gen_list.py and removed afterwards.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_common.h"
#include "model.h"

#define RUNS 3

/* The peer: the whole file read, then one cJSON parse. */
static int peer(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	char *data;
	cJSON *j;
	size_t n;

	if (!f || fstat(fileno(f), &st) < 0)
		return 1;
	data = malloc((size_t)st.st_size + 1);
	if (!data)
		return 1;
	n = fread(data, 1, (size_t)st.st_size, f);
	fclose(f);
	j = cJSON_ParseWithLength(data, n);
	if (!j) {
		fprintf(stderr, "bench_load: cJSON could not parse %s\n", path);
		return 1;
	}
	cJSON_Delete(j);
	free(data);
	return 0;
}

/* What decide does with a --state file. */
static int load(const char *path)
{
	struct snapshot *s = snapshot_new();
	struct errbuf err;

	if (!s || snapshot_load_file(s, path, &err) < 0) {
		fprintf(stderr, "bench_load: %s\n", s ? err.msg : "out of memory");
		return 1;
	}
	if (getenv("BENCH_LOAD_VERBOSE"))
		fprintf(stderr, "loaded %zu nodes, %zu pods\n", s->n_nodes, s->n_pods);
	snapshot_free(s);
	return 0;
}

/* Runs fn(path) in a child: its wall seconds and peak RSS (MB), or -1. */
static double run_child(int (*fn)(const char *), const char *path, double *rss_mb)
{
	struct rusage ru;
	double t0 = bench_now();
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(fn(path));
	if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		return -1;
	*rss_mb = (double)ru.ru_maxrss / 1024.0;
	return bench_now() - t0;
}

int main(int argc, char **argv)
{
	char tmp[] = "/tmp/luascale-bench-load-XXXXXX";
	const char *path = argc > 1 ? argv[1] : NULL;
	double tp[RUNS], tl[RUNS], ratio[RUNS], rss_p = 0, rss_l = 0, r, mb;
	double min, med;
	struct stat st;
	int i;

	if (!path) {
		char cmd[512];
		int fd = mkstemp(tmp);

		if (fd < 0) {
			perror("bench_load: temp file");
			return 1;
		}
		close(fd);
		snprintf(cmd, sizeof(cmd), "/usr/bin/python3 %s/bench/gen_list.py %s 170 >/dev/null",
			 LUASCALE_SOURCE, tmp);
		if (system(cmd) != 0) {
			fprintf(stderr, "bench_load: %s failed\n", cmd);
			unlink(tmp);
			return 1;
		}
		path = tmp;
	}
	if (stat(path, &st) < 0) {
		fprintf(stderr, "bench_load: %s: %s\n", path, strerror(errno));
		return 1;
	}
	mb = (double)st.st_size / 1e6;
	/* warm the page cache once */
	if (run_child(peer, path, &r) < 0) {
		fprintf(stderr, "bench_load: peer failed\n");
		return 1;
	}
	for (i = 0; i < RUNS; i++) {
		tp[i] = run_child(peer, path, &r);
		rss_p = r > rss_p ? r : rss_p;
		tl[i] = run_child(load, path, &r);
		rss_l = r > rss_l ? r : rss_l;
		if (tp[i] < 0 || tl[i] < 0) {
			fprintf(stderr, "bench_load: a run failed\n");
			return 1;
		}
		ratio[i] = tl[i] / tp[i];
	}
	if (path == tmp)
		unlink(tmp);
	printf("file_mb %.1f\n", mb);
	bench_min_median(tp, RUNS, &min, &med);
	printf("peer_read_cjson_ms_min %.0f\npeer_read_cjson_ms_median %.0f\n", min * 1e3, med * 1e3);
	printf("peer_read_cjson_mb_s %.0f\n", mb / med);
	printf("peer_rss_mb %.1f\n", rss_p);
	bench_min_median(tl, RUNS, &min, &med);
	printf("decide_load_ms_min %.0f\ndecide_load_ms_median %.0f\n", min * 1e3, med * 1e3);
	printf("decide_load_mb_s %.0f\n", mb / med);
	printf("decide_load_rss_mb %.1f\n", rss_l);
	bench_min_median(ratio, RUNS, &min, &med);
	printf("ratio_load_to_peer_min %.2f\nratio_load_to_peer_median %.2f\n", min, med);
	return 0;
}
