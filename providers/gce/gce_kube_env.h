/*
 * providers/gce: GKE's kube-env (gce_kube_env.c) — the instance template
 * metadata item GKE writes for its nodes, a YAML map of "KEY: value"
 * lines, read for a new node's labels, taints and kube_reserved:
 * AUTOSCALER_ENV_VARS ("node_labels=a=b,c=d;node_taints=k=v:NoSchedule;
 * kube_reserved=cpu=..,memory=..;evictionHard=memory.available=..;...")
 * or, without it, NODE_LABELS and NODE_TAINTS. It does not read templates.
 */
#ifndef LUASCALE_GCE_KUBE_ENV_H
#define LUASCALE_GCE_KUBE_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "errbuf.h"
#include "providers/provider.h"

#define GCE_KUBE_ENV_MAX (256 * 1024) /* GCE's limit on one metadata value */
#define GCE_KUBE_ENV_MAX_LABELS 256
#define GCE_KUBE_ENV_MAX_TAINTS 64

/* What a kube-env says of a new node. */
struct gce_kube_env {
	struct provider_template t;  /* labels and taints only */
	bool reserved;               /* kube_reserved was given */
	int64_t reserved_cpu_m;      /* its cpu, millicores (0 when not given) */
	int64_t reserved_memory;     /* its memory, bytes (0 when not given) */
	bool eviction;               /* evictionHard gave memory.available */
	int64_t eviction_memory;     /* bytes */
};

/*
 * Parses kube-env 'text' ('len' bytes) into 'out' (zeroed first; free it
 * with gce_kube_env_clear). All or nothing: 0, or -1 with 'err' naming the
 * bad part (the key, the item and why: a label without '=', an invalid key
 * or value, a taint whose effect is not NoSchedule, PreferNoSchedule or
 * NoExecute, a key given twice, a quantity that is not one, text that is
 * not a YAML map, too large, too many labels or taints) and 'out' empty.
 * A kube-env that names no labels, taints or reserve is 0 with 'out' empty.
 */
int gce_kube_env_parse(const char *text, size_t len, struct gce_kube_env *out, struct errbuf *err);

/*
 * The kube-env of an instance template ('properties', its properties
 * object): the value of metadata.items[] whose key is "kube-env" into
 * *text (borrowed from 'properties'; NULL when there is none). 0, or -1
 * with 'err' when metadata is malformed (items not a list, an item without
 * a string key, kube-env twice or not a string).
 */
int gce_kube_env_of(const cJSON *properties, const char **text, struct errbuf *err);

/* Frees what 'e' owns and zeroes it. */
void gce_kube_env_clear(struct gce_kube_env *e);

#endif
