/*
 * azure_sizes: the VM sizes the Azure provider knows without asking the
 * cloud (cores, memory, GPUs of common sizes), for templates of scale sets
 * that have no node yet. A size missing here needs a template in the config
 * or the node-template resource tags.
 */
#ifndef LUASCALE_AZURE_SIZES_H
#define LUASCALE_AZURE_SIZES_H

#include <stddef.h>
#include <stdint.h>

struct azure_vm_size {
	const char *name;       /* "Standard_D4s_v5" */
	int vcpus;
	int64_t memory_mib;
	int gpus;               /* nvidia.com/gpu */
};

/* The size named 'name' (compared case-insensitively, as ARM does), or NULL.
 * The entry is static. */
const struct azure_vm_size *azure_vm_size_find(const char *name);

/* The table itself, for tests and docs: '*n' entries. */
const struct azure_vm_size *azure_vm_sizes(size_t *n);

#endif
