/*
 * informer_classify: what one change to a cached object means to scaling
 * (nothing, a change, a pod newly Unschedulable), judged on the decoded
 * structs of model.h: the fields compared are the ones decisions read.
 */
#include "kube/informer.h"

#include <string.h>

#include "model.h"

const char *informer_change_str(enum informer_change c)
{
	switch (c) {
	case INFORMER_UNCHANGED:
		return "unchanged";
	case INFORMER_CHANGED:
		return "changed";
	case INFORMER_UNSCHEDULABLE:
		return "unschedulable";
	}
	return "?";
}

static bool str_eq(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

/* The same pairs, in any order (keys are unique within a list). */
static bool kvlist_eq(const struct kvlist *a, const struct kvlist *b)
{
	size_t i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++) {
		const struct kv *x = &a->items[i];

		/* the server writes maps in one order: try the same place first */
		if (str_eq(x->key, b->items[i].key)) {
			if (!str_eq(x->value, b->items[i].value))
				return false;
		} else {
			const char *v = kvlist_get(b, x->key);

			if (!v || !str_eq(x->value, v))
				return false;
		}
	}
	return true;
}

static bool resources_eq(const struct resources *a, const struct resources *b)
{
	size_t i;

	if (a->cpu_m != b->cpu_m || a->memory != b->memory || a->ephemeral != b->ephemeral ||
	    a->pods != b->pods || a->n_ext != b->n_ext)
		return false;
	for (i = 0; i < a->n_ext; i++) {
		size_t j;

		for (j = 0; j < b->n_ext; j++)
			if (str_eq(a->ext[i].name, b->ext[j].name))
				break;
		if (j == b->n_ext || a->ext[i].value != b->ext[j].value)
			return false;
	}
	return true;
}

static bool taints_eq(const struct taint *a, size_t na, const struct taint *b, size_t nb)
{
	size_t i;

	if (na != nb)
		return false;
	for (i = 0; i < na; i++)
		if (!str_eq(a[i].key, b[i].key) || !str_eq(a[i].value, b[i].value) ||
		    a[i].effect != b[i].effect)
			return false;
	return true;
}

static bool node_eq(const struct node *a, const struct node *b)
{
	return str_eq(a->name, b->name) && str_eq(a->provider_id, b->provider_id) &&
	       a->unschedulable == b->unschedulable && a->ready == b->ready &&
	       a->created == b->created && kvlist_eq(&a->labels, &b->labels) &&
	       kvlist_eq(&a->annotations, &b->annotations) &&
	       taints_eq(a->taints, a->n_taints, b->taints, b->n_taints) &&
	       resources_eq(&a->allocatable, &b->allocatable);
}

/* Every decoded field but the PodScheduled message (see informer.h). */
static bool pod_eq(const struct pod *a, const struct pod *b)
{
	return str_eq(a->ns, b->ns) && str_eq(a->name, b->name) && str_eq(a->uid, b->uid) &&
	       str_eq(a->node_name, b->node_name) && a->phase == b->phase &&
	       a->flags == b->flags && a->priority == b->priority && a->created == b->created &&
	       str_eq(a->controller_kind, b->controller_kind) &&
	       str_eq(a->controller_name, b->controller_name) &&
	       str_eq(a->local_volume, b->local_volume) && kvlist_eq(&a->labels, &b->labels) &&
	       kvlist_eq(&a->annotations, &b->annotations) &&
	       kvlist_eq(&a->node_selector, &b->node_selector) &&
	       resources_eq(&a->requests, &b->requests) &&
	       node_affinity_same(&a->affinity, &b->affinity) &&
	       tolerations_same(a->tolerations, a->n_tolerations, b->tolerations, b->n_tolerations) &&
	       pod_relations_same(a, b);
}

static bool pdb_eq(const struct pdb *a, const struct pdb *b)
{
	return str_eq(a->ns, b->ns) && str_eq(a->name, b->name) &&
	       a->selects_all == b->selects_all && a->selects_none == b->selects_none &&
	       a->disruptions_allowed == b->disruptions_allowed &&
	       str_eq(a->min_available, b->min_available) &&
	       str_eq(a->max_unavailable, b->max_unavailable) &&
	       selector_reqs_same(a->selector.reqs, a->selector.n, b->selector.reqs, b->selector.n);
}

static bool namespace_eq(const struct namespace_obj *a, const struct namespace_obj *b)
{
	return str_eq(a->name, b->name) && kvlist_eq(&a->labels, &b->labels);
}

static bool pvc_eq(const struct pvc *a, const struct pvc *b)
{
	return str_eq(a->ns, b->ns) && str_eq(a->name, b->name) &&
	       str_eq(a->volume_name, b->volume_name) && str_eq(a->storage_class, b->storage_class);
}

static bool pv_eq(const struct pv *a, const struct pv *b)
{
	return str_eq(a->name, b->name) && kvlist_eq(&a->labels, &b->labels) &&
	       node_affinity_same(&a->node_affinity, &b->node_affinity);
}

static bool storage_class_eq(const struct storage_class *a, const struct storage_class *b)
{
	return str_eq(a->name, b->name) &&
	       a->wait_for_first_consumer == b->wait_for_first_consumer &&
	       node_affinity_same(&a->allowed_topologies, &b->allowed_topologies);
}

/* The template as the pod it makes: every field pod_eq() compares. */
static bool daemonset_eq(const struct daemonset *a, const struct daemonset *b)
{
	return str_eq(a->ns, b->ns) && str_eq(a->name, b->name) && pod_eq(&a->tmpl, &b->tmpl);
}

/* A pod the engine would count as pending, that the scheduler found no node for. */
static bool unschedulable_pending(const struct pod *p)
{
	return (p->flags & POD_UNSCHEDULABLE) && !(p->flags & (POD_TERMINATING | POD_DAEMONSET)) &&
	       (!p->node_name || !p->node_name[0]) && !pod_finished(p);
}

static enum informer_change classify_pod(const struct pod *old, const struct pod *new)
{
	if (!new)
		return INFORMER_CHANGED;
	/* another uid under the same name is another pod (a StatefulSet's) */
	if (old && !str_eq(old->uid, new->uid))
		old = NULL;
	if (unschedulable_pending(new) && (!old || !(old->flags & POD_UNSCHEDULABLE)))
		return INFORMER_UNSCHEDULABLE;
	if (!old)
		return INFORMER_CHANGED;
	return pod_eq(old, new) ? INFORMER_UNCHANGED : INFORMER_CHANGED;
}

enum informer_change informer_classify(enum informer_kind kind, const void *old, const void *new)
{
	if (kind == INFORMER_PODS)
		return classify_pod(old, new);
	if (!old || !new)
		return old || new ? INFORMER_CHANGED : INFORMER_UNCHANGED;
	if (kind == INFORMER_NODES)
		return node_eq(old, new) ? INFORMER_UNCHANGED : INFORMER_CHANGED;
	if (kind == INFORMER_PDBS)
		return pdb_eq(old, new) ? INFORMER_UNCHANGED : INFORMER_CHANGED;
	if (kind == INFORMER_NAMESPACES)
		return namespace_eq(old, new) ? INFORMER_UNCHANGED : INFORMER_CHANGED;
	if (kind == INFORMER_PVCS)
		return pvc_eq(old, new) ? INFORMER_UNCHANGED : INFORMER_CHANGED;
	if (kind == INFORMER_PVS)
		return pv_eq(old, new) ? INFORMER_UNCHANGED : INFORMER_CHANGED;
	if (kind == INFORMER_STORAGE_CLASSES)
		return storage_class_eq(old, new) ? INFORMER_UNCHANGED : INFORMER_CHANGED;
	if (kind == INFORMER_DAEMONSETS)
		return daemonset_eq(old, new) ? INFORMER_UNCHANGED : INFORMER_CHANGED;
	return INFORMER_CHANGED;
}
