/*
 * model_decode: Kubernetes JSON objects (Node, Pod, PodDisruptionBudget,
 * Namespace, PersistentVolumeClaim, PersistentVolume, StorageClass,
 * DaemonSet) decoded and validated into the structs of objects.h. Private
 * to model.c and its tests; other modules go through snapshot_add_object().
 * It knows no snapshot: model.c appends what it decodes.
 */
#ifndef LUASCALE_MODEL_DECODE_H
#define LUASCALE_MODEL_DECODE_H

#include <stddef.h>

#include "errbuf.h"
#include "objects.h"

struct arena;
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

/* One decoded object: 'kind' says which member of 'u' holds it. */
struct model_object {
	enum model_kind kind;
	union {
		struct node node;
		struct pod pod;
		struct pdb pdb;
		struct namespace_obj ns;
		struct pvc pvc;
		struct pv pv;
		struct storage_class sc;
		struct daemonset ds;
	} u;
};

/*
 * Decodes 'obj' as 'kind' into 'out'. Strings go to arena 'a', repeated
 * ones through 'in' when it is not NULL. MODEL_KIND_OTHER decodes nothing.
 * On an error 'who' receives "Pod ns/name" (or as much as is known) for
 * the message; it is formatted only then and left alone on success.
 * Returns 0, or -1 with "field.path: problem" in 'err' (without 'who').
 */
int model_decode_object(struct arena *a, struct intern *in, const struct cJSON *obj,
			enum model_kind kind, struct model_object *out, char *who,
			size_t wholen, struct errbuf *err);

#endif
