/*
 * nodesize: the kubelet's reserved memory tiers and a template's
 * allocatable resources from a machine size. Pure arithmetic: no I/O, no
 * cloud.
 */
#include "providers/cloudhttp/nodesize.h"

#include <stdio.h>

int64_t nodesize_reserved_memory(int64_t mem)
{
	static const struct { int64_t upto; int pct; } tiers[] = {
		{4ll << 30, 25}, {8ll << 30, 20}, {16ll << 30, 10}, {128ll << 30, 6}, {INT64_MAX, 2},
	};
	int64_t r = 0, prev = 0;
	size_t i;

	for (i = 0; i < sizeof(tiers) / sizeof(tiers[0]) && mem > prev; i++) {
		int64_t part = (mem < tiers[i].upto ? mem : tiers[i].upto) - prev;

		r += part / 100 * tiers[i].pct;
		prev = tiers[i].upto;
	}
	return r;
}

void nodesize_template(struct provider_template *t, const char *type, int cpus, int64_t mem,
		       int64_t cpu_reserved_m, int64_t mem_reserved, int gpus)
{
	int64_t cpu_m = (int64_t)cpus * 1000 - cpu_reserved_m;

	snprintf(t->instance_type, sizeof(t->instance_type), "%s", type);
	t->cpu_m = cpu_m > 0 ? cpu_m : 0;
	t->memory = mem > mem_reserved ? mem - mem_reserved : 0;
	t->pods = NODESIZE_PODS;
	t->gpus = gpus;
}
