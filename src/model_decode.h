/*
 * model_decode: Kubernetes JSON objects (Node, Pod, PodDisruptionBudget,
 * Namespace, PersistentVolumeClaim, PersistentVolume, StorageClass,
 * DaemonSet) decoded and validated into the structs of model.h. Private
 * to model.c and its tests; other modules go through snapshot_add_object().
 */
#ifndef LUASCALE_MODEL_DECODE_H
#define LUASCALE_MODEL_DECODE_H

#include <stddef.h>

#include "errbuf.h"
#include "model.h"

struct cJSON;
struct intern;

/* The kinds the model keeps. */
enum model_kind {
	MODEL_KIND_OTHER,
	MODEL_KIND_NODE,
	MODEL_KIND_POD,
	MODEL_KIND_PDB,
	MODEL_KIND_NAMESPACE,
	MODEL_KIND_PVC,
	MODEL_KIND_PV,
	MODEL_KIND_STORAGE_CLASS,
	MODEL_KIND_DAEMONSET,
};

/* Maps "Node", "Pod", "PodDisruptionBudget", "Namespace",
 * "PersistentVolumeClaim", "PersistentVolume", "StorageClass", "DaemonSet"
 * (and their "...List" forms when 'list' is true) to a kind; anything else
 * is MODEL_KIND_OTHER. */
enum model_kind model_kind_of(const char *kind, int list);

/*
 * Records that the source lists objects of 'kind', so that one not found
 * is really absent: a PersistentVolumeClaim, PersistentVolume or
 * StorageClass sets s->volumes_known, a Namespace s->namespaces_known, a
 * DaemonSet s->daemonsets_known; other kinds change nothing. Never fails.
 */
void model_mark_known(struct snapshot *s, enum model_kind kind);

/*
 * Decodes 'obj' as 'kind' and appends it to the snapshot, marking the kind
 * known (model_mark_known) on success. Strings go to the snapshot's arena,
 * repeated ones through 'in' when it is not NULL.
 * On an error 'who' receives "Pod ns/name" (or as much as is known) for
 * the message; it is formatted only then and left alone on success.
 * Returns 0, or -1 with "field.path: problem" in 'err' (without 'who').
 */
int model_decode_object(struct snapshot *s, const struct cJSON *obj,
			enum model_kind kind, struct intern *in, char *who,
			size_t wholen, struct errbuf *err);

#endif
