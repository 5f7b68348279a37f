/*
 * replay: a main() for the fuzz targets outside libFuzzer. Runs every file
 * named on the command line, or in a directory named there (sorted, so a
 * failure names the same file each time), through LLVMFuzzerTestOneInput.
 * Each input gets a heap buffer of exactly its size, as libFuzzer gives.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

/* Reads 'path' into an exactly sized buffer; NULL on error (reported). */
static uint8_t *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	long size;

	if (!f) {
		perror(path);
		return NULL;
	}
	if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0)
		goto out;
	/* malloc(0) may return NULL: keep one byte but report size 0 */
	data = malloc(size > 0 ? (size_t)size : 1);
	if (!data)
		goto out;
	if (size > 0 && fread(data, 1, (size_t)size, f) != (size_t)size) {
		free(data);
		data = NULL;
		goto out;
	}
	*len = (size_t)size;
out:
	if (!data)
		fprintf(stderr, "%s: cannot read\n", path);
	fclose(f);
	return data;
}

static int run_file(const char *path)
{
	size_t len = 0;
	uint8_t *data = read_all(path, &len);

	if (!data)
		return -1;
	fprintf(stderr, "replay %s (%zu bytes)\n", path, len);
	LLVMFuzzerTestOneInput(data, len);
	free(data);
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every regular file of 'dir' in name order; returns the count or -1. */
static int run_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	int rc = 0;

	if (!d) {
		perror(dir);
		return -1;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **grown;

			cap = cap ? cap * 2 : 64;
			grown = realloc(names, cap * sizeof(*names));
			if (!grown) {
				rc = -1;
				break;
			}
			names = grown;
		}
		names[n] = strdup(e->d_name);
		if (!names[n]) {
			rc = -1;
			break;
		}
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	for (i = 0; i < n; i++) {
		char path[4096];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (rc >= 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			if (run_file(path) < 0)
				rc = -1;
			else
				rc++;
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	int i, total = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (i = 1; i < argc; i++) {
		struct stat st;
		int n;

		if (stat(argv[i], &st) != 0) {
			perror(argv[i]);
			return 1;
		}
		n = S_ISDIR(st.st_mode) ? run_dir(argv[i]) : run_file(argv[i]) < 0 ? -1 : 1;
		if (n < 0)
			return 1;
		total += n;
	}
	if (total == 0) {
		fprintf(stderr, "no inputs\n");
		return 1;
	}
	fprintf(stderr, "%d input(s) ran\n", total);
	return 0;
}
