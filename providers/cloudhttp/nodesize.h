/*
 * nodesize: a machine size as the node it becomes — the memory the
 * kubelet keeps back from pods on GKE and AKS (the same tiers; each cloud
 * adds its own eviction threshold) and a new-node template's allocatable
 * CPU, memory, pods and GPUs. The CPU the kubelet keeps is
 * provider_reserved_cpu_m's; what a size is (cores, memory) each cloud's.
 */
#ifndef LUASCALE_NODESIZE_H
#define LUASCALE_NODESIZE_H

#include <stdint.h>

#include "providers/provider.h"

#define NODESIZE_PODS 110 /* the kubelet's default max pods */

/* The memory (bytes) GKE and AKS keep from pods on a node of 'mem' bytes:
 * 25% of the first 4 GiB, 20% of the next 4, 10% of the next 8, 6% of the
 * next 112, 2% above. Without the eviction threshold (the caller adds it). */
int64_t nodesize_reserved_memory(int64_t mem);

/* Fills the size of template 't': instance_type 'type', allocatable CPU
 * (cpus * 1000 - cpu_reserved_m millicores) and memory (mem - mem_reserved
 * bytes), neither below 0, NODESIZE_PODS pods and 'gpus'. Labels are the
 * caller's. */
void nodesize_template(struct provider_template *t, const char *type, int cpus, int64_t mem,
		       int64_t cpu_reserved_m, int64_t mem_reserved, int gpus);

#endif
