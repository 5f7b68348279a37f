/*
 * sim/cluster: the simulated cluster — nodes that follow the cloud's
 * instances, pods and their life cycle, a scheduler using sched.c's
 * predicates and topology.c's pod relations, controllers that replace lost
 * pods, PDB arithmetic for evictions, the kubeops implementation and the
 * snapshot builder. Volumes are sim/world/volumes.c's. Everything happens under
 * the cloud's lock, as events on its executor.
 *
 * Lock order: the cloud's lock, then the API server's store (its change
 * hooks publish under the cloud's lock), then the server's mutex; the
 * kubeops calls here take the cloud's lock, so the API server makes them
 * without its store's lock held (the rule is at the top of
 * src/sim/apiserver/apiserver_objects.c).
 */
#include "sim/world/cluster.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "intern.h"
#include "sched.h"
#include "topology.h"

#define DEFAULT_GRACE_NS (30 * CLOCK_NS_PER_S)
#define NOT_PENDING SIZE_MAX

enum spod_state { SP_PENDING, SP_RUNNING, SP_TERMINATING, SP_DONE };

/* Why a node was refused, for the scheduler's message: enum sched_fit,
 * then the reasons it has no code for. */
#define REASON_NOT_READY (SCHED_NOT_MODELLED + 1)
#define REASON_SPREAD_LABEL (SCHED_NOT_MODELLED + 2) /* no label for a spread's key */
enum { N_REASONS = SCHED_NOT_MODELLED + 3 };

/* One number of a StatefulSet: taken by a listed pod, and its claim. */
struct ordinal {
	bool used;
	long claim;              /* -1 none yet */
};

struct snode;

struct spod {
	struct pod p;            /* as the engine sees it, kept current */
	uint64_t seq;
	uint64_t hash;           /* of ns/name, for the index */
	int spec;
	enum spod_state st;
	struct snode *node;      /* bound node, or NULL */
	bool holds;              /* its requests are taken from the node's room */
	size_t at;               /* index in c->pods */
	size_t node_at;          /* index in node->pods */
	size_t pend_at;          /* index in c->pending, NOT_PENDING when not there */
	int64_t created_ns, queued_ns, started_ns, run_ns;
	int64_t started_wall;    /* bound at (unix s), -1 when never (for watchers) */
	int64_t deleted_wall;    /* termination began (unix s), -1 when not terminating */
	int64_t grace_ns;        /* the grace period of its termination */
	uint64_t tried_gen;      /* capacity generation it last failed at (0: never tried) */
	uint64_t tried_rel;      /* relation generation then (spread, affinity) */
	long ordinal;            /* StatefulSet: its number, 0 otherwise */
	long claim;              /* its volume claim (sim/volumes), -1 none */
	bool relabelled;         /* its labels are not its spec's any more (a client's update) */
};

struct snode {
	struct node n;           /* strings and arrays in the cluster's arena */
	size_t group;
	struct sim_instance *inst;
	struct room room;        /* allocatable minus what bound pods hold */
	struct spod **pods;
	size_t n_pods, cap_pods;
	int64_t registered_ns;
	int64_t ready_wall;      /* Ready last changed (unix s) */
	bool starting;           /* registered, its kubelet not Ready yet */
	bool used;               /* ran a pod other than a DaemonSet's */
};

struct spec_state {
	const struct sim_pod_spec *spec;
	struct pod tmpl;         /* the pod every one of its pods starts as */
	uint64_t next_n;
	uint64_t fail_pass;      /* scheduler pass in which one of its pods found no node */
	uint64_t fail_rel;       /* the relation generation then */
	const char *fail_msg;
	int fail_reasons[N_REASONS]; /* the counts fail_msg says */
	size_t fail_nodes;
	size_t *pdbs;            /* indices of the PDBs that select its pods */
	size_t n_pdbs;
	bool related;            /* its pods have host ports, pod (anti-)affinity or spread */
	bool counted;            /* its pods go into the index of pod relations: related,
				  * or a related spec's selector matches its labels */
	bool grows;              /* pod affinity or spread: a pod bound elsewhere may let
				  * one of its pods in where it was refused */
	struct ordinal *ords;    /* StatefulSet: per number, whether a pod has it */
	size_t cap_ords;
};

struct spdb {
	struct pdb b;
	bool max_unavailable;    /* else min_available */
	bool percent;
	int32_t value;
};

struct sim_cluster {
	struct sim_cloud *cloud;
	struct executor *ex;
	struct clock *clock;
	struct sim_cluster_opts o;
	struct sim_life *life;
	struct arena *arena;     /* names, labels, messages: live as long as the cluster */
	struct intern strings;
	const struct label_selector *protected_sel;

	struct snode **nodes;    /* registered, in registration order */
	size_t n_nodes, cap_nodes;

	struct spod **pods;      /* every listed pod */
	size_t n_pods, cap_pods;
	struct spod **by_seq;    /* index seq -> pod (NULL when gone) */
	size_t cap_seq;
	uint64_t next_seq;
	struct spod **tab;       /* ns/name index, open addressing */
	size_t tab_cap, tab_n;

	struct spod **pending;   /* sorted by priority, queue time; NULL holes */
	size_t n_pending, cap_pending, pending_live;
	bool pending_sorted;

	struct spec_state *specs;
	size_t n_specs;
	struct spdb *pdbs;
	size_t n_pdbs;

	/* scheduler */
	uint64_t cap_gen;        /* bumped whenever room may have appeared */
	uint64_t rel_gen;        /* bumped when a pod binds, a node goes or labels change:
				  * spread and pod affinity may let a pod in then */
	size_t n_related;        /* listed, unfinished pods of related specs: while 0 the
				  * scheduler needs no index of pod relations */
	size_t n_grows_specs;    /* specs whose pods a bind elsewhere may let in */
	struct topo *topo;       /* that index, during a pass (NULL: not built) */
	struct sim_volumes *vols;
	uint64_t pass_no;
	bool pass_queued;
	int64_t last_pass_ns;

	int n_state[4];          /* pods per spod_state */
	int64_t *group_node_ns;  /* node-seconds of removed nodes, per group */
	int *group_nodes;

	sim_cluster_watch_fn watch;  /* told of every node and pod change, or NULL */
	void *watch_ud;

	struct {
		void *mem;
		void (*free_fn)(void *);
	} *adopted;              /* memory the cluster frees last (specs written through the API) */
	size_t n_adopted;

	struct sim_stats st;
	int64_t *pending_ns;
	size_t n_pending_ns, cap_pending_ns;
};

/* ---- small helpers ---- */

static int64_t now_ns(const struct sim_cluster *c)
{
	return clock_now(c->clock);
}

static int64_t wall_s(const struct sim_cluster *c)
{
	return clock_wall(c->clock);
}

static int push_ptr(void ***arr, size_t *n, size_t *cap, void *p)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		void **na = realloc(*arr, ncap * sizeof(*na));

		if (!na)
			return -1;
		*arr = na;
		*cap = ncap;
	}
	(*arr)[(*n)++] = p;
	return 0;
}

static const char *keep(struct sim_cluster *c, const char *s)
{
	return intern_strn(&c->strings, s, strlen(s));
}

static const char *group_name(const struct sim_cluster *c, size_t group)
{
	return sim_cloud_group(c->cloud, group)->name;
}

/* Tells the watcher (if any) that pod 'p' changed, or is about to be freed. */
static void notify_pod(struct sim_cluster *c, const struct spod *p, bool gone)
{
	struct sim_change ch;

	if (!c->watch)
		return;
	memset(&ch, 0, sizeof(ch));
	ch.kind = SIM_OBJ_POD;
	ch.gone = gone;
	ch.pod = &p->p;
	ch.started_wall = p->started_wall;
	ch.deleted_wall = p->deleted_wall;
	ch.grace_s = p->grace_ns / CLOCK_NS_PER_S;
	ch.spec = c->specs[p->spec].spec;
	ch.host_ip = p->node ? p->node->n.internal_ip : NULL;
	c->watch(c->watch_ud, &ch);
}

/* Tells the watcher (if any) that node 'n' changed, or is about to be freed. */
static void notify_node(struct sim_cluster *c, const struct snode *n, bool gone)
{
	struct sim_change ch;

	if (!c->watch)
		return;
	memset(&ch, 0, sizeof(ch));
	ch.kind = SIM_OBJ_NODE;
	ch.gone = gone;
	ch.node = &n->n;
	ch.group = group_name(c, n->group);
	ch.started_wall = ch.deleted_wall = -1;
	ch.kubelet_starting = n->starting;
	ch.transition_wall = n->ready_wall;
	ch.heartbeat_wall = n->ready_wall;
	c->watch(c->watch_ud, &ch);
}

static bool is_protected(const struct sim_cluster *c, const struct spod *p)
{
	return c->protected_sel && c->protected_sel->n &&
	       label_selector_matches(c->protected_sel, &p->p.labels);
}

static uint64_t hash_pod(const char *ns, const char *name)
{
	uint64_t h = 14695981039346656037ULL;
	const char *s;

	for (s = ns; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	h = (h ^ '/') * 1099511628211ULL;
	for (s = name; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* ---- the ns/name index ---- */

static struct spod **tab_find(struct sim_cluster *c, const char *ns, const char *name)
{
	size_t j, mask;

	if (!c->tab_cap)
		return NULL;
	mask = c->tab_cap - 1;
	for (j = hash_pod(ns, name) & mask; c->tab[j]; j = (j + 1) & mask)
		if (strcmp(c->tab[j]->p.name, name) == 0 && strcmp(c->tab[j]->p.ns, ns) == 0)
			return &c->tab[j];
	return NULL;
}

static void tab_insert(struct spod **tab, size_t cap, struct spod *p)
{
	size_t j;

	for (j = p->hash & (cap - 1); tab[j]; j = (j + 1) & (cap - 1))
		;
	tab[j] = p;
}

static int tab_put(struct sim_cluster *c, struct spod *p)
{
	if ((c->tab_n + 1) * 2 > c->tab_cap) {
		size_t cap = c->tab_cap ? c->tab_cap * 2 : 256, i;
		struct spod **nt = calloc(cap, sizeof(*nt));

		if (!nt)
			return -1;
		for (i = 0; i < c->tab_cap; i++)
			if (c->tab[i])
				tab_insert(nt, cap, c->tab[i]);
		free(c->tab);
		c->tab = nt;
		c->tab_cap = cap;
	}
	tab_insert(c->tab, c->tab_cap, p);
	c->tab_n++;
	return 0;
}

/* Removes 'p' by shifting the entries after it back (linear probing). */
static void tab_del(struct sim_cluster *c, struct spod *p)
{
	size_t mask = c->tab_cap - 1, i, j, k;

	for (i = p->hash & mask; c->tab[i] != p; i = (i + 1) & mask)
		assert(c->tab[i]);
	for (j = i;;) {
		j = (j + 1) & mask;
		if (!c->tab[j])
			break;
		k = c->tab[j]->hash & mask;
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		c->tab[i] = c->tab[j];
		i = j;
	}
	c->tab[i] = NULL;
	c->tab_n--;
}

/* ---- names ---- */

static const char *const ctrl_names[] = {
	[SIM_CTRL_NONE] = "none",
	[SIM_CTRL_REPLICASET] = "replicaset",
	[SIM_CTRL_STATEFULSET] = "statefulset",
	[SIM_CTRL_JOB] = "job",
	[SIM_CTRL_DAEMONSET] = "daemonset",
};

int sim_controller_parse(const char *s, enum sim_controller *out)
{
	size_t i;

	for (i = 0; i < sizeof(ctrl_names) / sizeof(ctrl_names[0]); i++) {
		if (strcmp(s, ctrl_names[i]) == 0) {
			*out = (enum sim_controller)i;
			return 0;
		}
	}
	return -1;
}

const char *sim_controller_kind(enum sim_controller k)
{
	switch (k) {
	case SIM_CTRL_NONE: return "";
	case SIM_CTRL_REPLICASET: return "ReplicaSet";
	case SIM_CTRL_STATEFULSET: return "StatefulSet";
	case SIM_CTRL_JOB: return "Job";
	case SIM_CTRL_DAEMONSET: return "DaemonSet";
	}
	return "";
}

void sim_cluster_opts_default(struct sim_cluster_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->register_delay_ns = 10 * CLOCK_NS_PER_S;
	o->sched_interval_ns = 1 * CLOCK_NS_PER_S;
	o->sched = SIM_SCHED_FIRST_FIT;
	o->finished_ttl_ns = 300 * CLOCK_NS_PER_S;
}

/* ---- room ---- */

static int room_init(struct room *r, const struct resources *a)
{
	memset(r, 0, sizeof(*r));
	r->cpu_m = a->cpu_m;
	r->memory = a->memory;
	r->ephemeral = a->ephemeral;
	r->pods = a->pods;
	if (!a->n_ext)
		return 0;
	r->ext = malloc(a->n_ext * sizeof(*r->ext));
	if (!r->ext)
		return -1;
	memcpy(r->ext, a->ext, a->n_ext * sizeof(*r->ext));
	r->n_ext = a->n_ext;
	return 0;
}

static void room_give(struct room *r, const struct resources *req)
{
	size_t i, j;

	r->cpu_m += req->cpu_m;
	r->memory += req->memory;
	r->ephemeral += req->ephemeral;
	r->pods += 1;
	for (i = 0; i < req->n_ext; i++) {
		if (!req->ext[i].name)
			continue;
		for (j = 0; j < r->n_ext; j++) {
			if (strcmp(r->ext[j].name, req->ext[i].name) == 0) {
				r->ext[j].value += req->ext[i].value;
				break;
			}
		}
	}
}

/* ---- the scheduler's queue ---- */

static void kick(struct sim_cluster *c);

/* Priority first, then who waited longest, then creation order. */
static int pending_cmp(const struct spod *a, const struct spod *b)
{
	if (a->p.priority != b->p.priority)
		return a->p.priority > b->p.priority ? -1 : 1;
	if (a->queued_ns != b->queued_ns)
		return a->queued_ns < b->queued_ns ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int pending_qsort_cmp(const void *a, const void *b)
{
	return pending_cmp(*(struct spod *const *)a, *(struct spod *const *)b);
}

static int pending_add(struct sim_cluster *c, struct spod *p)
{
	size_t i = c->n_pending;

	while (i > 0 && !c->pending[i - 1])
		i--; /* the last live entry decides whether order holds */
	if (push_ptr((void ***)&c->pending, &c->n_pending, &c->cap_pending, p) < 0)
		return -1;
	if (i > 0 && pending_cmp(c->pending[i - 1], p) > 0)
		c->pending_sorted = false;
	p->pend_at = c->n_pending - 1;
	c->pending_live++;
	return 0;
}

static void pending_remove(struct sim_cluster *c, struct spod *p)
{
	if (p->pend_at == NOT_PENDING)
		return;
	c->pending[p->pend_at] = NULL;
	p->pend_at = NOT_PENDING;
	c->pending_live--;
}

/* Drops the holes, keeping the order. */
static void pending_compact(struct sim_cluster *c)
{
	size_t i, n = 0;

	for (i = 0; i < c->n_pending; i++) {
		if (c->pending[i]) {
			c->pending[n] = c->pending[i];
			c->pending[n]->pend_at = n;
			n++;
		}
	}
	c->n_pending = n;
}

/* ---- pods ---- */

static void set_state(struct sim_cluster *c, struct spod *p, enum spod_state st)
{
	if (st == SP_DONE && p->st != SP_DONE && c->specs[p->spec].related)
		c->n_related--;
	c->n_state[p->st]--;
	p->st = st;
	c->n_state[st]++;
}

static int seq_put(struct sim_cluster *c, struct spod *p)
{
	if (p->seq >= c->cap_seq) {
		size_t cap = c->cap_seq ? c->cap_seq * 2 : 1024;
		struct spod **ns;

		while (cap <= p->seq)
			cap *= 2;
		ns = realloc(c->by_seq, cap * sizeof(*ns));
		if (!ns)
			return -1;
		memset(ns + c->cap_seq, 0, (cap - c->cap_seq) * sizeof(*ns));
		c->by_seq = ns;
		c->cap_seq = cap;
	}
	c->by_seq[p->seq] = p;
	return 0;
}

/* Number 'ord' of StatefulSet 'ss', the array grown to hold it; NULL on OOM. */
static struct ordinal *ordinal_at(struct spec_state *ss, long ord)
{
	if ((size_t)ord >= ss->cap_ords) {
		size_t cap = ss->cap_ords ? ss->cap_ords * 2 : 16, i;
		struct ordinal *no;

		while (cap <= (size_t)ord)
			cap *= 2;
		no = realloc(ss->ords, cap * sizeof(*no));
		if (!no)
			return NULL;
		for (i = ss->cap_ords; i < cap; i++)
			no[i] = (struct ordinal){false, -1};
		ss->ords = no;
		ss->cap_ords = cap;
	}
	return &ss->ords[ord];
}

/* The lowest number from 1 no listed pod of StatefulSet 'ss' has. */
static long ordinal_free(const struct spec_state *ss)
{
	size_t i;

	for (i = 1; i < ss->cap_ords && ss->ords[i].used; i++)
		;
	return (long)i;
}

/*
 * Pod 'p' of spec 'ss' takes number 'ord' (StatefulSet), and with a volume
 * the claim that goes with it, bound or not. -1 when out of memory.
 */
static int take_ordinal(struct sim_cluster *c, struct spec_state *ss, struct spod *p, long ord)
{
	struct ordinal *o = ordinal_at(ss, ord);
	const struct sim_volume *vol = ss->spec->volume;

	if (!o)
		return -1;
	if (vol && o->claim < 0) {
		o->claim = sim_volumes_claim(c->vols, p->p.ns, p->p.name, vol, ord);
		if (o->claim < 0)
			return -1;
	}
	o->used = true;
	p->ordinal = ord;
	p->claim = o->claim;
	if (p->claim >= 0) {
		p->p.claims = sim_volumes_claim_list(c->vols, p->claim);
		p->p.n_claims = 1;
		p->p.volume_affinity = sim_volumes_affinity(c->vols, p->claim);
		p->p.n_volume_affinity = p->p.volume_affinity ? 1 : 0;
	}
	return 0;
}

/*
 * A new pod of spec 'si' named 'name' (NULL: the next "<spec>-<n>"; a
 * StatefulSet's lowest free number), pending unless bound by the caller.
 * 'ord': a StatefulSet pod's number when 'name' is given (0: none).
 * 'run_ns': how long it runs once bound (<= 0 forever). NULL when out of
 * memory.
 */
static struct spod *pod_new_ord(struct sim_cluster *c, int si, const char *name, long ord,
				int64_t run_ns)
{
	struct spec_state *ss = &c->specs[si];
	bool sts = ss->spec->controller == SIM_CTRL_STATEFULSET;
	char buf[320];
	struct spod *p;

	if (!name && sts) {
		ord = ordinal_free(ss);
		snprintf(buf, sizeof(buf), "%s-%ld", ss->spec->name, ord);
		name = buf;
	} else if (!name) {
		snprintf(buf, sizeof(buf), "%s-%llu", ss->spec->name,
			 (unsigned long long)ss->next_n++);
		name = buf;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->p = ss->tmpl;
	p->claim = -1;
	p->p.name = arena_strdup(c->arena, name);
	p->p.created = wall_s(c);
	p->seq = c->next_seq++;
	p->spec = si;
	p->st = SP_PENDING;
	p->pend_at = NOT_PENDING;
	p->created_ns = p->queued_ns = now_ns(c);
	p->started_ns = -1;
	p->started_wall = -1;
	p->deleted_wall = -1;
	p->grace_ns = c->specs[si].spec->grace_ns;
	p->run_ns = run_ns;
	p->hash = hash_pod(p->p.ns, p->p.name);
	if (!p->p.name || (sts && ord > 0 && take_ordinal(c, ss, p, ord) < 0) || seq_put(c, p) < 0)
		goto fail_ord;
	if (push_ptr((void ***)&c->pods, &c->n_pods, &c->cap_pods, p) < 0)
		goto fail_seq;
	p->at = c->n_pods - 1;
	if (tab_put(c, p) < 0) {
		c->n_pods--;
		goto fail_seq;
	}
	c->n_state[SP_PENDING]++;
	if (ss->related)
		c->n_related++;
	c->st.pods_created++;
	notify_pod(c, p, false);
	return p;
fail_seq:
	c->by_seq[p->seq] = NULL;
fail_ord:
	if (p->ordinal > 0)
		ss->ords[p->ordinal].used = false;
	free(p);
	return NULL;
}

static struct spod *pod_new(struct sim_cluster *c, int si, const char *name, int64_t run_ns)
{
	return pod_new_ord(c, si, name, 0, run_ns);
}

/* Gives back the room a pod holds on its node. */
static void release(struct sim_cluster *c, struct spod *p)
{
	if (!p->holds)
		return;
	room_give(&p->node->room, &p->p.requests);
	p->holds = false;
	c->cap_gen++;
}

static void node_detach(struct spod *p)
{
	struct snode *n = p->node;

	if (!n)
		return;
	n->pods[p->node_at] = n->pods[--n->n_pods];
	n->pods[p->node_at]->node_at = p->node_at;
	p->node = NULL;
}

/* Unlists and frees a pod. */
static void pod_remove(struct sim_cluster *c, struct spod *p)
{
	notify_pod(c, p, true);
	release(c, p);
	node_detach(p);
	pending_remove(c, p);
	tab_del(c, p);
	c->pods[p->at] = c->pods[--c->n_pods];
	c->pods[p->at]->at = p->at;
	c->by_seq[p->seq] = NULL;
	c->n_state[p->st]--;
	if (p->st != SP_DONE && c->specs[p->spec].related)
		c->n_related--;
	if (p->ordinal > 0)
		c->specs[p->spec].ords[p->ordinal].used = false;
	free(p);
}

static int queue_pod(struct sim_cluster *c, struct spod *p)
{
	if (pending_add(c, p) < 0)
		return -1;
	kick(c);
	return 0;
}

/*
 * The controller of a pod that is going away makes its replacement.
 * 'same_name': the old one is unlisted already (StatefulSet).
 */
static void replace(struct sim_cluster *c, const struct spod *old, bool same_name)
{
	const struct sim_pod_spec *spec = c->specs[old->spec].spec;
	int64_t run = old->run_ns;
	struct spod *p;

	if (old->st == SP_DONE)
		return;
	switch (spec->controller) {
	case SIM_CTRL_NONE:
		c->st.bare_pods_lost++;
		return;
	case SIM_CTRL_DAEMONSET:
		return;
	case SIM_CTRL_JOB:
		break; /* the work starts over */
	case SIM_CTRL_REPLICASET:
	case SIM_CTRL_STATEFULSET:
		if (run > 0 && old->started_ns >= 0) {
			run -= now_ns(c) - old->started_ns;
			if (run <= 0)
				return; /* it was due to end anyway */
		}
		break;
	}
	p = pod_new_ord(c, old->spec, same_name ? old->p.name : NULL,
			same_name ? old->ordinal : 0, run);
	if (!p || queue_pod(c, p) < 0) {
		if (p)
			pod_remove(c, p);
		sim_cloud_tracef(c->cloud, "pod %s/%s: out of memory replacing it", old->p.ns,
				 old->p.name);
		return;
	}
	c->st.pods_recreated++;
	sim_cloud_tracef(c->cloud, "pod %s/%s replaces %s", p->p.ns, p->p.name, old->p.name);
}

static void gc_event(void *owner, void *data, uint64_t id, bool alive)
{
	struct sim_cluster *c = owner;
	struct spod *p;

	(void)data;
	if (!alive)
		return;
	sim_cloud_lock(c->cloud);
	p = id < c->cap_seq ? c->by_seq[id] : NULL;
	if (p && p->st == SP_DONE)
		pod_remove(c, p);
	sim_cloud_unlock(c->cloud);
}

static void complete_event(void *owner, void *data, uint64_t id, bool alive)
{
	struct sim_cluster *c = owner;
	struct spod *p;

	(void)data;
	if (!alive)
		return;
	sim_cloud_lock(c->cloud);
	p = id < c->cap_seq ? c->by_seq[id] : NULL;
	if (p && p->st == SP_RUNNING) {
		set_state(c, p, SP_DONE);
		p->p.phase = POD_SUCCEEDED;
		release(c, p);
		c->st.pods_succeeded++;
		notify_pod(c, p, false);
		sim_cloud_tracef(c->cloud, "pod %s/%s succeeded on %s", p->p.ns, p->p.name,
				 p->node ? p->node->n.name : "?");
		if (sim_after(c->ex, c->life, c->o.finished_ttl_ns, gc_event, NULL, p->seq) < 0)
			pod_remove(c, p);
		kick(c);
	}
	sim_cloud_unlock(c->cloud);
}

static int record_pending(struct sim_cluster *c, const struct spod *p, int64_t waited)
{
	if (c->n_pending_ns == c->cap_pending_ns) {
		size_t cap = c->cap_pending_ns ? c->cap_pending_ns * 2 : 1024;
		int64_t *na = realloc(c->pending_ns, cap * sizeof(*na));

		if (!na)
			return -1;
		c->pending_ns = na;
		c->cap_pending_ns = cap;
	}
	c->pending_ns[c->n_pending_ns++] = waited;
	if (waited > c->st.pending_ns_max) {
		char buf[512];

		snprintf(buf, sizeof(buf), "%s/%s", p->p.ns, p->p.name);
		c->st.pending_ns_max = waited;
		c->st.pending_max_pod = keep(c, buf);
		c->st.pending_max_bound_ns = now_ns(c);
	}
	return 0;
}

/* Binds 'p' to 'n': it holds room there and runs. */
static int bind(struct sim_cluster *c, struct spod *p, struct snode *n)
{
	if (n->n_pods == n->cap_pods) {
		size_t cap = n->cap_pods ? n->cap_pods * 2 : 16;
		struct spod **np = realloc(n->pods, cap * sizeof(*np));

		if (!np)
			return -1;
		n->pods = np;
		n->cap_pods = cap;
	}
	/* a WaitForFirstConsumer claim gets its volume where the pod lands */
	if (p->claim >= 0 && !p->p.volume_affinity) {
		if (sim_volumes_bind(c->vols, p->claim, n->n.name, &n->n.labels) < 0)
			return -1;
		p->p.volume_affinity = sim_volumes_affinity(c->vols, p->claim);
		p->p.n_volume_affinity = 1;
		sim_cloud_tracef(c->cloud, "claim %s of pod %s/%s bound to a volume where %s is",
				 p->p.claims[0], p->p.ns, p->p.name, n->n.name);
	}
	pending_remove(c, p);
	n->pods[n->n_pods] = p;
	p->node_at = n->n_pods++;
	p->node = n;
	room_take(&n->room, &p->p.requests);
	p->holds = true;
	p->p.node_name = n->n.name;
	p->p.phase = POD_RUNNING;
	p->p.flags &= ~POD_UNSCHEDULABLE;
	p->p.sched_message = "";
	p->started_ns = now_ns(c);
	p->started_wall = wall_s(c);
	set_state(c, p, SP_RUNNING);
	notify_pod(c, p, false);
	c->st.pods_bound++;
	c->rel_gen++;
	if (!(p->p.flags & POD_DAEMONSET)) {
		record_pending(c, p, p->started_ns - p->queued_ns);
		n->used = true;
	}
	sim_cloud_tracef(c->cloud, "pod %s/%s bound to %s", p->p.ns, p->p.name, n->n.name);
	if (p->run_ns > 0 &&
	    sim_after(c->ex, c->life, p->run_ns, complete_event, NULL, p->seq) < 0)
		sim_cloud_tracef(c->cloud, "pod %s/%s: executor refused its end", p->p.ns,
				 p->p.name);
	return 0;
}

/* Whether pod 'p' is bound to a node whose instance got an interrupt
 * fault's notice. */
static bool on_interrupted(const struct spod *p)
{
	return p->node && p->node->inst && p->node->inst->interrupted_wall > 0;
}

/* A pod dies without an eviction (its node went away): unlisted at once,
 * its controller replaces it. */
static void kill_pod(struct sim_cluster *c, struct spod *p, const char *why)
{
	struct spod old = *p;
	enum sim_controller ctrl = c->specs[p->spec].spec->controller;

	if (p->st == SP_RUNNING && ctrl != SIM_CTRL_DAEMONSET) {
		c->st.pods_killed++;
		if (on_interrupted(p))
			c->st.interrupted_killed++;
		if (is_protected(c, p))
			c->st.protected_disrupted++;
		sim_cloud_tracef(c->cloud, "pod %s/%s killed: %s", p->p.ns, p->p.name, why);
	}
	pod_remove(c, p);
	if (old.st == SP_TERMINATING) {
		/* a ReplicaSet's or Job's replacement exists already */
		if (ctrl == SIM_CTRL_STATEFULSET)
			replace(c, &old, true);
	} else {
		replace(c, &old, ctrl == SIM_CTRL_STATEFULSET);
	}
}

/* A terminating pod is gone: its controller puts back what it owns. */
static void terminated(struct sim_cluster *c, struct spod *p, const char *how)
{
	enum sim_controller ctrl = c->specs[p->spec].spec->controller;
	struct snode *n = p->node;
	struct spod old = *p;

	sim_cloud_tracef(c->cloud, "pod %s/%s %s", p->p.ns, p->p.name, how);
	pod_remove(c, p);
	if (ctrl == SIM_CTRL_STATEFULSET) {
		replace(c, &old, true);
	} else if (ctrl == SIM_CTRL_DAEMONSET && n) {
		/* the DaemonSet puts its pod back on the node */
		struct spod *np = pod_new(c, old.spec, NULL, -1);

		if (np && bind(c, np, n) < 0)
			pod_remove(c, np);
	}
	kick(c);
}

static void terminated_event(void *owner, void *data, uint64_t id, bool alive)
{
	struct sim_cluster *c = owner;
	struct spod *p;

	(void)data;
	if (!alive)
		return;
	sim_cloud_lock(c->cloud);
	p = id < c->cap_seq ? c->by_seq[id] : NULL;
	if (p && p->st == SP_TERMINATING)
		terminated(c, p, "terminated");
	sim_cloud_unlock(c->cloud);
}

/* ---- the scheduler ---- */

/* The kube-scheduler's words for each reason ("node(s) ..." counted per node). */
static const char *reason_text(int r)
{
	switch (r) {
	case SCHED_NO_CPU: return "Insufficient cpu";
	case SCHED_NO_MEMORY: return "Insufficient memory";
	case SCHED_NO_EPHEMERAL: return "Insufficient ephemeral-storage";
	case SCHED_NO_PODS: return "Too many pods";
	case SCHED_NO_EXTENDED: return "Insufficient extended resources";
	case SCHED_NODE_SELECTOR:
	case SCHED_NODE_AFFINITY: return "node(s) didn't match Pod's node affinity/selector";
	case SCHED_TAINT: return "node(s) had untolerated taint";
	case SCHED_UNSCHEDULABLE: return "node(s) were unschedulable";
	case SCHED_HOST_PORTS: return "node(s) didn't have free ports for the requested pod ports";
	case SCHED_POD_AFFINITY: return "node(s) didn't match pod affinity rules";
	case SCHED_POD_ANTI_AFFINITY: return "node(s) didn't match pod anti-affinity rules";
	case SCHED_EXISTING_ANTI_AFFINITY:
		return "node(s) didn't satisfy existing pods anti-affinity rules";
	case SCHED_TOPOLOGY_SPREAD: return "node(s) didn't match pod topology spread constraints";
	case REASON_SPREAD_LABEL:
		return "node(s) didn't match pod topology spread constraints (missing required label)";
	case SCHED_VOLUME_ZONE: return "node(s) had volume node affinity conflict";
	case SCHED_VOLUME_MISSING: return "node(s) didn't find available persistent volumes to bind";
	case SCHED_NOT_MODELLED: return "node(s) had a constraint luascale does not model";
	case REASON_NOT_READY: return "node(s) were not ready";
	}
	return "unknown";
}

/* Does 'p' fit on 'n' now, as far as room, labels, taints and volumes go?
 * Cheap checks first. */
static enum sched_fit fits(const struct spod *p, const struct snode *n)
{
	const struct resources *r = &p->p.requests;
	size_t i;

	if (n->room.pods < 1)
		return SCHED_NO_PODS;
	if (r->cpu_m > 0 && r->cpu_m > n->room.cpu_m)
		return SCHED_NO_CPU;
	if (r->memory > 0 && r->memory > n->room.memory)
		return SCHED_NO_MEMORY;
	if (r->ephemeral > 0 && r->ephemeral > n->room.ephemeral)
		return SCHED_NO_EPHEMERAL;
	for (i = 0; i < r->n_ext; i++) {
		int64_t have = 0;
		size_t j;

		if (r->ext[i].value <= 0)
			continue;
		for (j = 0; j < n->room.n_ext; j++) {
			if (strcmp(n->room.ext[j].name, r->ext[i].name) == 0) {
				have = n->room.ext[j].value;
				break;
			}
		}
		if (r->ext[i].value > have)
			return SCHED_NO_EXTENDED;
	}
	return sched_fits_labels(&p->p, n->n.name, &n->n.labels, n->n.taints, n->n.n_taints,
				 n->n.unschedulable, NULL, 0);
}

/*
 * The index of pod relations over the nodes as they are and the pods
 * bound to them that a check can count (site i is c->nodes[i]), built in
 * a pass when the first pod that needs it is tried: pods bound in the
 * pass are added as they bind. A pod no related spec's selector matches
 * and that has no relations of its own is left out (no check counts it)
 * and needs no check (no anti-affinity term matches it). NULL when out of
 * memory.
 */
static bool counted(const struct sim_cluster *c, const struct spod *p)
{
	return c->specs[p->spec].counted || p->relabelled;
}

static struct topo *topo_build(struct sim_cluster *c)
{
	struct topo *t = topo_new_empty(NULL, 0);
	size_t i, k;

	if (!t)
		return NULL;
	for (i = 0; i < c->n_nodes; i++) {
		const struct node *n = &c->nodes[i]->n;

		if (topo_add_site(t, TOPO_NODE, n->name, &n->labels, n->taints, n->n_taints) < 0)
			goto oom;
	}
	for (i = 0; i < c->n_nodes; i++) {
		const struct snode *n = c->nodes[i];

		for (k = 0; k < n->n_pods; k++)
			if (n->pods[k]->st != SP_DONE && counted(c, n->pods[k]) &&
			    topo_add_pod(t, i, &n->pods[k]->p) < 0)
				goto oom;
	}
	return t;
oom:
	topo_free(t);
	return NULL;
}

/* Host ports, pod (anti-)affinity and spread of 'p' on node 'i'. */
static int relation_fit(struct topo *t, const struct spod *p, const struct snode *n, size_t i)
{
	enum sched_fit f = topo_check(t, &p->p, i, NULL, 0);
	size_t k;

	if (f == SCHED_TOPOLOGY_SPREAD)
		for (k = 0; k < p->p.n_spread; k++)
			if (!kvlist_get(&n->n.labels, p->p.spread[k].topology_key))
				return REASON_SPREAD_LABEL;
	return (int)f;
}

/* Room left after placing 'p', as a share of the node (least-allocated score). */
static double score(const struct spod *p, const struct snode *n)
{
	double cpu = n->n.allocatable.cpu_m > 0 ?
		(double)(n->room.cpu_m - p->p.requests.cpu_m) / (double)n->n.allocatable.cpu_m : 0;
	double mem = n->n.allocatable.memory > 0 ?
		(double)(n->room.memory - p->p.requests.memory) / (double)n->n.allocatable.memory : 0;

	return (cpu + mem) / 2;
}

/*
 * The node 'p' goes to (its index), or -1 with each refusal counted in
 * 'reasons'. 't' is the index of pod relations, NULL when no pod has any.
 */
static long find_node(struct sim_cluster *c, const struct spod *p, struct topo *t, int *reasons)
{
	bool related = t && topo_relevant(t, &p->p);
	double best_score = 0;
	long best = -1;
	size_t i;

	for (i = 0; i < c->n_nodes; i++) {
		struct snode *n = c->nodes[i];
		int f;

		if (!n->n.ready) {
			reasons[REASON_NOT_READY]++;
			continue;
		}
		f = (int)fits(p, n);
		if (f == SCHED_FITS && related)
			f = relation_fit(t, p, n, i);
		if (f != SCHED_FITS) {
			reasons[f]++;
			continue;
		}
		if (c->o.sched == SIM_SCHED_FIRST_FIT)
			return (long)i;
		if (best < 0 || score(p, n) > best_score) {
			best = (long)i;
			best_score = score(p, n);
		}
	}
	return best;
}

/* "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint." */
static const char *fail_message(struct sim_cluster *c, const int *reasons)
{
	char buf[1024];
	int order[N_REASONS], n = 0, i, j;
	size_t len;

	for (i = 1; i < N_REASONS; i++)
		if (reasons[i])
			order[n++] = i;
	/* the scheduler sorts the reasons by their text */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && strcmp(reason_text(order[j - 1]), reason_text(order[j])) > 0; j--) {
			int t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	len = (size_t)snprintf(buf, sizeof(buf), "0/%zu nodes are available", c->n_nodes);
	for (i = 0; i < n && len < sizeof(buf); i++) {
		int k = order[i];
		int cnt = reasons[k];
		bool first = i == 0;

		/* reasons that share a text (selector and affinity) are one */
		while (i + 1 < n && strcmp(reason_text(k), reason_text(order[i + 1])) == 0)
			cnt += reasons[order[++i]];
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s %d %s", first ? ":" : ",",
					cnt, reason_text(k));
	}
	if (len < sizeof(buf))
		snprintf(buf + len, sizeof(buf) - len, ".");
	return keep(c, buf);
}

static void unschedulable(struct sim_cluster *c, struct spod *p, const char *msg)
{
	bool changed = !(p->p.flags & POD_UNSCHEDULABLE) ||
		       strcmp(p->p.sched_message, msg ? msg : "") != 0;

	if (!(p->p.flags & POD_UNSCHEDULABLE))
		sim_cloud_tracef(c->cloud, "pod %s/%s unschedulable: %s", p->p.ns, p->p.name, msg);
	p->p.flags |= POD_UNSCHEDULABLE;
	p->p.sched_message = msg ? msg : "";
	p->tried_gen = c->cap_gen;
	p->tried_rel = c->rel_gen;
	if (changed)
		notify_pod(c, p, false);
}

/*
 * Whether 'p' found no node and nothing changed since that could give it
 * one: no room freed, no node, label or taint; for a pod with pod affinity
 * or spread constraints, no pod bound either (one bound elsewhere may
 * raise the least domain's count, or be the pod it must be near).
 */
static bool nothing_changed(const struct sim_cluster *c, const struct spod *p)
{
	return p->tried_gen == c->cap_gen &&
	       (!c->specs[p->spec].grows || p->tried_rel == c->rel_gen);
}

static void schedule_pass(struct sim_cluster *c)
{
	uint64_t rel_at_start = c->rel_gen;
	size_t i;

	c->pass_no++;
	c->last_pass_ns = now_ns(c);
	pending_compact(c);
	if (!c->pending_sorted) {
		qsort(c->pending, c->n_pending, sizeof(*c->pending), pending_qsort_cmp);
		for (i = 0; i < c->n_pending; i++)
			c->pending[i]->pend_at = i;
		c->pending_sorted = true;
	}
	for (i = 0; i < c->n_pending; i++) {
		struct spod *p = c->pending[i];
		struct spec_state *ss;
		bool rel;
		long at;
		int reasons[N_REASONS] = {0};

		if (!p || nothing_changed(c, p))
			continue;
		ss = &c->specs[p->spec];
		/* a pod of the same workload found no node in this pass, and
		 * nothing since could help this one (pods with a claim each go
		 * where their own volume is) */
		if (ss->fail_pass == c->pass_no && p->claim < 0 &&
		    (!ss->grows || ss->fail_rel == c->rel_gen)) {
			unschedulable(c, p, ss->fail_msg);
			continue;
		}
		/* a pod no related spec's selector matches, with no relations
		 * of its own, fits wherever its room and labels let it */
		rel = c->n_related && counted(c, p);
		if (rel && !c->topo && !(c->topo = topo_build(c))) {
			/* never "fits" for want of the index: the next pass tries again */
			sim_cloud_tracef(c->cloud, "scheduler: out of memory indexing pod relations");
			kick(c);
			break;
		}
		at = find_node(c, p, rel ? c->topo : NULL, reasons);
		if (at >= 0 && bind(c, p, c->nodes[at]) == 0) {
			if (c->topo && counted(c, p) && topo_add_pod(c->topo, (size_t)at, &p->p) < 0) {
				topo_free(c->topo); /* rebuilt for the next pod */
				c->topo = NULL;
			}
			continue;
		}
		ss->fail_pass = c->pass_no;
		ss->fail_rel = c->rel_gen;
		if (!ss->fail_msg || ss->fail_nodes != c->n_nodes ||
		    memcmp(ss->fail_reasons, reasons, sizeof(reasons)) != 0) {
			ss->fail_msg = fail_message(c, reasons);
			ss->fail_nodes = c->n_nodes;
			memcpy(ss->fail_reasons, reasons, sizeof(reasons));
		}
		unschedulable(c, p, ss->fail_msg);
	}
	topo_free(c->topo);
	c->topo = NULL;
	pending_compact(c);
	/* a pod refused for its spread or affinity before others bound (in
	 * this pass or before it) is tried again at the next one */
	if (c->rel_gen != rel_at_start && c->n_grows_specs) {
		for (i = 0; i < c->n_pending; i++) {
			const struct spod *p = c->pending[i];

			if (p && c->specs[p->spec].grows && !nothing_changed(c, p)) {
				kick(c);
				break;
			}
		}
	}
}

static void pass_event(void *owner, void *data, uint64_t id, bool alive)
{
	struct sim_cluster *c = owner;

	(void)data;
	(void)id;
	if (!alive)
		return;
	sim_cloud_lock(c->cloud);
	c->pass_queued = false;
	schedule_pass(c);
	sim_cloud_unlock(c->cloud);
}

/* Something changed: a pass at the next interval boundary, unless one is queued. */
static void kick(struct sim_cluster *c)
{
	int64_t delay;

	if (c->pass_queued || c->pending_live == 0)
		return;
	delay = c->last_pass_ns + c->o.sched_interval_ns - now_ns(c);
	if (sim_after(c->ex, c->life, delay > 0 ? delay : 0, pass_event, NULL, 0) == 0)
		c->pass_queued = true;
}

/* ---- nodes ---- */

static struct snode *find_snode(const struct sim_cluster *c, const char *name, size_t *at)
{
	size_t i;

	if (!name)
		return NULL;
	for (i = 0; i < c->n_nodes; i++) {
		if (strcmp(c->nodes[i]->n.name, name) == 0) {
			if (at)
				*at = i;
			return c->nodes[i];
		}
	}
	return NULL;
}

/* The DaemonSets' pods for a new node. */
static void place_daemons(struct sim_cluster *c, struct snode *n)
{
	size_t i;

	for (i = 0; i < c->n_specs; i++) {
		struct spec_state *ss = &c->specs[i];
		struct spod *p;

		if (ss->spec->controller != SIM_CTRL_DAEMONSET)
			continue;
		if (sched_fits_labels(&ss->tmpl, n->n.name, &n->n.labels, n->n.taints,
				      n->n.n_taints, false, NULL, 0) != SCHED_FITS)
			continue;
		p = pod_new(c, (int)i, NULL, -1);
		if (!p || bind(c, p, n) < 0) {
			if (p)
				pod_remove(c, p);
			sim_cloud_tracef(c->cloud, "node %s: out of memory placing %s", n->n.name,
					 ss->spec->name);
		}
	}
}

static int register_node(struct sim_cluster *c, struct sim_instance *in)
{
	const struct node_group *g = sim_cloud_group(c->cloud, in->group);
	struct snode *n = calloc(1, sizeof(*n));
	struct kv *labels;

	if (!n)
		return -1;
	n->group = in->group;
	n->inst = in;
	n->n.name = keep(c, in->node_name[0] ? in->node_name : in->id);
	n->n.provider_id = keep(c, in->provider_id);
	/* a cloud's instance: its node's InternalIP is its private address */
	n->n.internal_ip = in->private_ip[0] ? keep(c, in->private_ip) : NULL;
	labels = arena_calloc(c->arena, g->tmpl.labels.n + 3, sizeof(*labels));
	if (!n->n.name || !n->n.provider_id || !labels)
		goto fail;
	if (g->tmpl.labels.n)
		memcpy(labels, g->tmpl.labels.items, g->tmpl.labels.n * sizeof(*labels));
	n->n.labels.n = g->tmpl.labels.n;
	labels[n->n.labels.n].key = "kubernetes.io/hostname";
	labels[n->n.labels.n++].value = n->n.name;
	/* a placed instance (a cloud flavour's) carries the well-known labels
	 * its kubelet would set, unless the template sets them */
	if (in->zone[0] && !kvlist_get(&g->tmpl.labels, "topology.kubernetes.io/zone")) {
		labels[n->n.labels.n].key = "topology.kubernetes.io/zone";
		labels[n->n.labels.n].value = keep(c, in->zone);
		if (!labels[n->n.labels.n++].value)
			goto fail;
	}
	if (in->instance_type[0] &&
	    !kvlist_get(&g->tmpl.labels, "node.kubernetes.io/instance-type")) {
		labels[n->n.labels.n].key = "node.kubernetes.io/instance-type";
		labels[n->n.labels.n].value = keep(c, in->instance_type);
		if (!labels[n->n.labels.n++].value)
			goto fail;
	}
	n->n.labels.items = labels;
	n->n.taints = g->tmpl.taints;
	n->n.n_taints = g->tmpl.n_taints;
	n->n.allocatable = g->tmpl.allocatable;
	if (in->cpu_m > 0)
		n->n.allocatable.cpu_m = in->cpu_m;
	if (in->memory > 0)
		n->n.allocatable.memory = in->memory;
	if (n->n.allocatable.pods <= 0)
		n->n.allocatable.pods = 110;
	/* a kubelet registers its node NotReady and reports Ready once it is up */
	n->n.ready = false;
	n->starting = true;
	n->n.created = wall_s(c);
	n->ready_wall = n->n.created;
	n->n.group = -1;
	n->registered_ns = now_ns(c);
	if (room_init(&n->room, &n->n.allocatable) < 0)
		goto fail;
	if (push_ptr((void ***)&c->nodes, &c->n_nodes, &c->cap_nodes, n) < 0) {
		room_free(&n->room);
		goto fail;
	}
	in->user = n;
	c->group_nodes[n->group]++;
	c->st.nodes_registered++;
	notify_node(c, n, false);
	n->n.ready = true;
	n->starting = false;
	sim_cloud_tracef(c->cloud, "node %s registered Ready", n->n.name);
	notify_node(c, n, false);
	place_daemons(c, n);
	c->cap_gen++;
	kick(c);
	return 0;
fail:
	free(n);
	return -1;
}

static void register_event(void *owner, void *data, uint64_t id, bool alive)
{
	struct sim_cluster *c = owner;
	struct sim_instance *in = data;

	(void)id;
	if (!alive)
		return;
	sim_cloud_lock(c->cloud);
	if (in->state == INSTANCE_RUNNING && !in->user && register_node(c, in) < 0)
		sim_cloud_tracef(c->cloud, "node %s: out of memory registering", in->id);
	sim_cloud_unlock(c->cloud);
}

/* Unlists a node; its pods die with it (controllers replace theirs). */
static void remove_node(struct sim_cluster *c, struct snode *n, const char *why)
{
	size_t at;

	if (!find_snode(c, n->n.name, &at))
		return;
	memmove(&c->nodes[at], &c->nodes[at + 1], (c->n_nodes - at - 1) * sizeof(*c->nodes));
	c->n_nodes--;
	sim_cloud_tracef(c->cloud, "node %s removed: %s", n->n.name, why);
	while (n->n_pods)
		kill_pod(c, n->pods[n->n_pods - 1], why);
	notify_node(c, n, true);
	c->group_nodes[n->group]--;
	c->group_node_ns[n->group] += now_ns(c) - n->registered_ns;
	c->rel_gen++; /* a spread domain may be gone with it */
	c->st.nodes_removed++;
	if (n->inst && n->inst->interrupted_wall > 0)
		c->st.interrupted_nodes++;
	if (!n->used && n->inst && !n->inst->preexisting)
		c->st.nodes_unused++;
	if (n->inst)
		n->inst->user = NULL;
	room_free(&n->room);
	free(n->pods);
	free(n);
	kick(c);
}

static int set_taint(struct sim_cluster *c, struct snode *n, const char *key, const char *value,
		     enum taint_effect effect, bool remove);

static void observe(void *ud, struct sim_instance *in, enum sim_instance_event ev)
{
	struct sim_cluster *c = ud;
	struct snode *n = in->user;

	switch (ev) {
	case SIM_INSTANCE_RUNNING:
		if (in->stuck)
			return;
		if (in->preexisting) {
			if (register_node(c, in) < 0)
				sim_cloud_tracef(c->cloud, "node %s: out of memory registering", in->id);
			return;
		}
		if (sim_after(c->ex, c->life, c->o.register_delay_ns, register_event, in, 0) < 0)
			sim_cloud_tracef(c->cloud, "node %s: executor refused its registration", in->id);
		return;
	case SIM_INSTANCE_STOPPING:
		if (n && n->n.ready) {
			n->n.ready = false;
			n->ready_wall = wall_s(c);
			sim_cloud_tracef(c->cloud, "node %s NotReady (instance stopping)", n->n.name);
			notify_node(c, n, false);
		}
		return;
	case SIM_INSTANCE_GONE:
		if (n)
			remove_node(c, n, "its instance is gone");
		return;
	case SIM_INSTANCE_INTERRUPTED:
		if (n && c->o.interruption_taint &&
		    set_taint(c, n, c->o.interruption_taint, "", TAINT_NO_SCHEDULE, false) < 0)
			sim_cloud_tracef(c->cloud, "node %s: out of memory tainting it", n->n.name);
		return;
	}
}

/* ---- life cycle ---- */

struct sim_cluster *sim_cluster_new(struct sim_cloud *cloud, const struct sim_cluster_opts *o,
				    struct errbuf *err)
{
	struct sim_cluster *c = calloc(1, sizeof(*c));
	size_t ng = sim_cloud_n_groups(cloud);

	if (!c)
		goto oom;
	if (o)
		c->o = *o;
	else
		sim_cluster_opts_default(&c->o);
	if (c->o.register_delay_ns < 0 || c->o.sched_interval_ns < 0 || c->o.finished_ttl_ns < 0) {
		free(c);
		errbuf_set(err, "sim cluster: delays must not be negative");
		return NULL;
	}
	c->cloud = cloud;
	c->ex = sim_cloud_executor(cloud);
	c->clock = executor_clock(c->ex);
	c->life = sim_life_new(c);
	c->arena = arena_new();
	c->vols = sim_volumes_new();
	c->group_node_ns = calloc(ng ? ng : 1, sizeof(*c->group_node_ns));
	c->group_nodes = calloc(ng ? ng : 1, sizeof(*c->group_nodes));
	if (!c->life || !c->arena || !c->vols || !c->group_node_ns || !c->group_nodes) {
		sim_cluster_free(c);
		goto oom;
	}
	intern_init(&c->strings, c->arena);
	c->next_seq = 1;
	c->cap_gen = 1;
	c->pending_sorted = true;
	c->last_pass_ns = INT64_MIN / 2;
	sim_cloud_set_observer(cloud, observe, c);
	return c;
oom:
	errbuf_set(err, "out of memory");
	return NULL;
}

void sim_cluster_free(struct sim_cluster *c)
{
	size_t i;

	if (!c)
		return;
	if (c->cloud)
		sim_cloud_set_observer(c->cloud, NULL, NULL);
	sim_life_end(c->life);
	for (i = 0; i < c->n_nodes; i++) {
		if (c->nodes[i]->inst)
			c->nodes[i]->inst->user = NULL;
		room_free(&c->nodes[i]->room);
		free(c->nodes[i]->pods);
		free(c->nodes[i]);
	}
	for (i = 0; i < c->n_pods; i++)
		free(c->pods[i]);
	for (i = 0; i < c->n_specs; i++) {
		free(c->specs[i].pdbs);
		free(c->specs[i].ords);
	}
	topo_free(c->topo);
	sim_volumes_free(c->vols);
	for (i = 0; i < c->n_adopted; i++)
		c->adopted[i].free_fn(c->adopted[i].mem);
	free(c->adopted);
	free(c->nodes);
	free(c->pods);
	free(c->by_seq);
	free(c->tab);
	free(c->pending);
	free(c->specs);
	free(c->pdbs);
	free(c->group_node_ns);
	free(c->group_nodes);
	free(c->pending_ns);
	if (c->arena) {
		intern_free(&c->strings);
		arena_free(c->arena);
	}
	free(c);
}

void sim_cluster_set_protected(struct sim_cluster *c, const struct label_selector *sel)
{
	c->protected_sel = sel;
}

/* Could a selector of related spec 'rel' (its terms', its spread's) match
 * a pod with 'labels'? Namespaces aside: a pod it might count is indexed. */
static bool selects(const struct sim_pod_spec *rel, const struct kvlist *labels)
{
	size_t i;

	for (i = 0; i < rel->n_affinity_terms; i++)
		if (!rel->affinity_terms[i].selector_null &&
		    label_selector_matches(&rel->affinity_terms[i].selector, labels))
			return true;
	for (i = 0; i < rel->n_anti_terms; i++)
		if (!rel->anti_terms[i].selector_null &&
		    label_selector_matches(&rel->anti_terms[i].selector, labels))
			return true;
	for (i = 0; i < rel->n_spread; i++)
		if (!rel->spread[i].selector_null &&
		    label_selector_matches(&rel->spread[i].selector, labels))
			return true;
	return false;
}

/* Spec 'si' was added: which specs' pods the index of relations counts now. */
static void mark_counted(struct sim_cluster *c, size_t si)
{
	struct spec_state *ss = &c->specs[si];
	size_t j;

	ss->counted = ss->related;
	for (j = 0; j < c->n_specs; j++) {
		struct spec_state *o = &c->specs[j];

		if (o->related && selects(o->spec, &ss->spec->labels))
			ss->counted = true;
		if (ss->related && selects(ss->spec, &o->spec->labels))
			o->counted = true;
	}
}

/* Does PDB 'b' select the pods of spec 'ss'? (they share namespace and labels) */
static bool pdb_selects(const struct spdb *b, const struct spec_state *ss)
{
	return pdb_matches(&b->b, &ss->tmpl);
}

static int link_pdb(struct spec_state *ss, size_t bi)
{
	size_t *np = realloc(ss->pdbs, (ss->n_pdbs + 1) * sizeof(*np));

	if (!np)
		return -1;
	ss->pdbs = np;
	np[ss->n_pdbs++] = bi;
	return 0;
}

int sim_cluster_add_spec(struct sim_cluster *c, const struct sim_pod_spec *spec,
			 struct errbuf *err)
{
	struct spec_state *ns, *ss;
	struct pod *t;
	size_t i;
	int rc = -1;

	if (!spec->name || !spec->name[0] || !spec->ns || !spec->ns[0])
		return errbuf_set(err, "a pod spec needs a name and a namespace");
	if ((unsigned)spec->controller > SIM_CTRL_DAEMONSET)
		return errbuf_set(err, "pod spec %s/%s: unknown controller", spec->ns, spec->name);
	if (spec->volume && spec->controller != SIM_CTRL_STATEFULSET)
		return errbuf_set(err, "pod spec %s/%s: a volume per replica needs a StatefulSet",
				  spec->ns, spec->name);
	if (spec->volume && (!spec->volume->claim || !spec->volume->storage_class ||
			     !spec->volume->zone_key))
		return errbuf_set(err, "pod spec %s/%s: its volume needs a claim name, a class and a zone key",
				  spec->ns, spec->name);
	sim_cloud_lock(c->cloud);
	for (i = 0; i < c->n_specs; i++) {
		if (strcmp(c->specs[i].spec->name, spec->name) == 0 &&
		    strcmp(c->specs[i].spec->ns, spec->ns) == 0) {
			errbuf_set(err, "two workloads named %s/%s: their pods would clash",
				   spec->ns, spec->name);
			goto out;
		}
	}
	ns = realloc(c->specs, (c->n_specs + 1) * sizeof(*ns));
	if (!ns) {
		errbuf_set(err, "out of memory");
		goto out;
	}
	c->specs = ns;
	ss = &ns[c->n_specs];
	memset(ss, 0, sizeof(*ss));
	ss->spec = spec;
	ss->next_n = 1;
	t = &ss->tmpl;
	t->ns = spec->ns;
	t->name = spec->name;
	t->labels = spec->labels;
	t->annotations = spec->annotations;
	t->controller_kind = sim_controller_kind(spec->controller);
	t->controller_name = spec->controller == SIM_CTRL_NONE ? "" : spec->name;
	if (spec->controller == SIM_CTRL_NONE && spec->owner_kind && spec->owner_name) {
		t->controller_kind = spec->owner_kind;
		t->controller_name = spec->owner_name;
	}
	t->node_name = "";
	t->phase = POD_PENDING;
	t->requests = spec->requests;
	t->requests.pods = 1;
	t->node_selector = spec->node_selector;
	t->affinity = spec->affinity;
	t->tolerations = spec->tolerations;
	t->n_tolerations = spec->n_tolerations;
	t->priority = spec->priority;
	t->affinity_terms = spec->affinity_terms;
	t->n_affinity_terms = spec->n_affinity_terms;
	t->anti_terms = spec->anti_terms;
	t->n_anti_terms = spec->n_anti_terms;
	t->spread = spec->spread;
	t->n_spread = spec->n_spread;
	t->host_ports = spec->host_ports;
	t->n_host_ports = spec->n_host_ports;
	ss->related = spec->n_host_ports || spec->n_affinity_terms || spec->n_anti_terms ||
		      spec->n_spread;
	ss->grows = spec->n_affinity_terms || spec->n_spread;
	/* as the decoder marks what only the kube-scheduler evaluates */
	if (spec->n_affinity_terms || spec->n_anti_terms || spec->n_spread || spec->volume)
		t->flags |= POD_SCHEDULER_ONLY;
	t->local_volume = spec->local_storage ? "data" : "";
	t->sched_message = "";
	t->node = -1;
	if (spec->local_storage)
		t->flags |= POD_LOCAL_STORAGE;
	if (spec->safe_to_evict_false)
		t->flags |= POD_SAFE_TO_EVICT_FALSE;
	if (spec->controller == SIM_CTRL_DAEMONSET)
		t->flags |= POD_DAEMONSET;
	for (i = 0; i < c->n_pdbs; i++) {
		if (pdb_selects(&c->pdbs[i], ss) && link_pdb(ss, i) < 0) {
			free(ss->pdbs);
			errbuf_set(err, "out of memory");
			goto out;
		}
	}
	rc = (int)c->n_specs++;
	c->n_grows_specs += ss->grows;
	mark_counted(c, (size_t)rc);
	if (spec->controller == SIM_CTRL_DAEMONSET) {
		for (i = 0; i < c->n_nodes; i++) {
			struct snode *n = c->nodes[i];
			struct spod *p;

			if (sched_fits_labels(t, n->n.name, &n->n.labels, n->n.taints,
					      n->n.n_taints, false, NULL, 0) != SCHED_FITS)
				continue;
			p = pod_new(c, rc, NULL, -1);
			if (!p || bind(c, p, n) < 0) {
				if (p)
					pod_remove(c, p);
				errbuf_set(err, "out of memory");
				rc = -1;
				goto out;
			}
		}
	}
out:
	sim_cloud_unlock(c->cloud);
	return rc;
}

int sim_cluster_create_pods(struct sim_cluster *c, int spec, int count, int64_t run_ns,
			    struct errbuf *err)
{
	int i, rc = 0;

	sim_cloud_lock(c->cloud);
	if (spec < 0 || (size_t)spec >= c->n_specs) {
		rc = errbuf_set(err, "no pod spec %d", spec);
		goto out;
	}
	if (c->specs[spec].spec->controller == SIM_CTRL_DAEMONSET) {
		rc = errbuf_set(err, "%s is a DaemonSet: its pods come with the nodes",
				c->specs[spec].spec->name);
		goto out;
	}
	if (run_ns == 0)
		run_ns = c->specs[spec].spec->duration_ns;
	for (i = 0; i < count; i++) {
		struct spod *p = pod_new(c, spec, NULL, run_ns);

		if (!p) {
			rc = errbuf_set(err, "out of memory");
			goto out;
		}
		if (pending_add(c, p) < 0) {
			pod_remove(c, p);
			rc = errbuf_set(err, "out of memory");
			goto out;
		}
		sim_cloud_tracef(c->cloud, "pod %s/%s created", p->p.ns, p->p.name);
	}
	kick(c);
out:
	sim_cloud_unlock(c->cloud);
	return rc;
}

/* "3" or "50%" into value and percent. */
static int parse_int_or_percent(const char *s, int32_t *value, bool *percent)
{
	char *end;
	long v;

	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	v = strtol(s, &end, 10);
	if (end == s || v > INT32_MAX)
		return -1;
	*percent = *end == '%';
	if (*percent)
		end++;
	if (*end || (*percent && v > 100))
		return -1;
	*value = (int32_t)v;
	return 0;
}

int sim_cluster_add_pdb(struct sim_cluster *c, const struct pdb *b, struct errbuf *err)
{
	const char *min = b->min_available ? b->min_available : "";
	const char *max = b->max_unavailable ? b->max_unavailable : "";
	struct spdb d, *np;
	size_t i;
	int rc = -1;

	memset(&d, 0, sizeof(d));
	d.b = *b;
	if (!b->ns || !b->name)
		return errbuf_set(err, "a PodDisruptionBudget needs a namespace and a name");
	if (!!min[0] == !!max[0])
		return errbuf_set(err, "PodDisruptionBudget %s/%s: exactly one of minAvailable and maxUnavailable",
				  b->ns, b->name);
	d.max_unavailable = max[0] != '\0';
	if (parse_int_or_percent(d.max_unavailable ? max : min, &d.value, &d.percent) < 0)
		return errbuf_set(err, "PodDisruptionBudget %s/%s: %s \"%s\" is not a count or a percentage",
				  b->ns, b->name, d.max_unavailable ? "maxUnavailable" : "minAvailable",
				  d.max_unavailable ? max : min);
	d.b.min_available = min;
	d.b.max_unavailable = max;
	sim_cloud_lock(c->cloud);
	np = realloc(c->pdbs, (c->n_pdbs + 1) * sizeof(*np));
	if (!np) {
		errbuf_set(err, "out of memory");
		goto out;
	}
	c->pdbs = np;
	np[c->n_pdbs] = d;
	for (i = 0; i < c->n_specs; i++) {
		if (pdb_selects(&d, &c->specs[i]) && link_pdb(&c->specs[i], c->n_pdbs) < 0) {
			errbuf_set(err, "out of memory");
			goto out;
		}
	}
	c->n_pdbs++;
	rc = 0;
out:
	sim_cloud_unlock(c->cloud);
	return rc;
}

int sim_cluster_add_nodes(struct sim_cluster *c, const char *group, int n, struct errbuf *err)
{
	return sim_cloud_add_running(c->cloud, group, n, err);
}

/* ---- PodDisruptionBudgets ---- */

/* disruptionsAllowed of every PDB, from the pods now, into 'out'; when
 * 'counts' is not NULL, the pods each expects and the healthy ones too. */
static void pdb_status_all(struct sim_cluster *c, int32_t *out, struct sim_pdb_status *counts)
{
	int64_t *expected = NULL, *healthy = NULL;
	size_t i, k;

	if (!c->n_pdbs)
		return;
	expected = calloc(c->n_pdbs * 2, sizeof(*expected));
	if (!expected) {
		for (i = 0; i < c->n_pdbs; i++)
			out[i] = 0; /* cannot count: allow nothing */
		return;
	}
	healthy = expected + c->n_pdbs;
	for (i = 0; i < c->n_pods; i++) {
		const struct spod *p = c->pods[i];
		const struct spec_state *ss = &c->specs[p->spec];

		if (!ss->n_pdbs || p->st == SP_DONE || p->st == SP_TERMINATING)
			continue;
		for (k = 0; k < ss->n_pdbs; k++) {
			expected[ss->pdbs[k]]++;
			if (p->st == SP_RUNNING)
				healthy[ss->pdbs[k]]++;
		}
	}
	for (i = 0; i < c->n_pdbs; i++) {
		const struct spdb *b = &c->pdbs[i];
		int64_t want, n = expected[i];

		if (b->percent) {
			int64_t share = (n * b->value + 99) / 100; /* rounded up, as Kubernetes does */

			want = b->max_unavailable ? n - share : share;
		} else {
			want = b->max_unavailable ? n - b->value : b->value;
		}
		want = healthy[i] - want;
		out[i] = want < 0 ? 0 : want > INT32_MAX ? INT32_MAX : (int32_t)want;
		if (counts) {
			counts[i].disruptions_allowed = out[i];
			counts[i].expected_pods = n;
			counts[i].current_healthy = healthy[i];
			counts[i].desired_healthy = healthy[i] - want;
		}
	}
	free(expected);
}

static void pdb_allowed_all(struct sim_cluster *c, int32_t *out)
{
	pdb_status_all(c, out, NULL);
}

/* ---- kubeops ---- */

static void status(struct kube_status *st, enum kube_result code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void status(struct kube_status *st, enum kube_result code, const char *fmt, ...)
{
	va_list ap;

	if (!st)
		return;
	st->code = code;
	va_start(ap, fmt);
	vsnprintf(st->message, sizeof(st->message), fmt, ap);
	va_end(ap);
}

static int ok(struct kube_status *st)
{
	status(st, KUBE_OK, "ok");
	return 0;
}

static int node_not_found(struct kube_status *st, const char *node)
{
	status(st, KUBE_NOT_FOUND, "nodes \"%s\" not found", node ? node : "");
	return -1;
}

static int op_cordon(void *ctx, const char *node, bool unschedulable, struct kube_status *st)
{
	struct sim_cluster *c = ctx;
	struct snode *n;

	sim_cloud_lock(c->cloud);
	n = find_snode(c, node, NULL);
	if (!n) {
		sim_cloud_unlock(c->cloud);
		return node_not_found(st, node);
	}
	if (n->n.unschedulable != unschedulable) {
		n->n.unschedulable = unschedulable;
		if (unschedulable) {
			c->st.cordons++;
		} else {
			c->st.uncordons++;
			c->cap_gen++;
			kick(c);
		}
		sim_cloud_tracef(c->cloud, "node %s %s", node, unschedulable ? "cordoned" : "uncordoned");
		notify_node(c, n, false);
	}
	sim_cloud_unlock(c->cloud);
	return ok(st);
}

/* Sets or removes (value NULL) a key in a copy of 'l' made in the arena. */
static int kv_set(struct sim_cluster *c, struct kvlist *l, const char *key, const char *value)
{
	struct kv *items;
	size_t i, n = 0;

	items = arena_calloc(c->arena, l->n + 1, sizeof(*items));
	if (!items)
		return -1;
	for (i = 0; i < l->n; i++)
		if (strcmp(l->items[i].key, key) != 0)
			items[n++] = l->items[i];
	if (value) {
		items[n].key = keep(c, key);
		items[n].value = keep(c, value);
		if (!items[n].key || !items[n].value)
			return -1;
		n++;
	}
	l->items = items;
	l->n = n;
	return 0;
}

static int op_kv(struct sim_cluster *c, const char *node, const char *key, const char *value,
		 bool label, struct kube_status *st)
{
	struct snode *n;

	if (!key || !key[0]) {
		status(st, KUBE_ERROR, "empty %s key", label ? "label" : "annotation");
		return -1;
	}
	sim_cloud_lock(c->cloud);
	n = find_snode(c, node, NULL);
	if (!n) {
		sim_cloud_unlock(c->cloud);
		return node_not_found(st, node);
	}
	if (kv_set(c, label ? &n->n.labels : &n->n.annotations, key, value) < 0) {
		sim_cloud_unlock(c->cloud);
		status(st, KUBE_ERROR, "out of memory");
		return -1;
	}
	if (label) {
		c->st.labels++;
		c->cap_gen++; /* a selector may match now */
		kick(c);
	} else {
		c->st.annotations++;
	}
	sim_cloud_tracef(c->cloud, "node %s %s %s%s%s", node, label ? "label" : "annotation", key,
			 value ? "=" : " removed", value ? value : "");
	notify_node(c, n, false);
	sim_cloud_unlock(c->cloud);
	return ok(st);
}

static int op_label(void *ctx, const char *node, const char *key, const char *value,
		    struct kube_status *st)
{
	return op_kv(ctx, node, key, value, true, st);
}

static int op_annotate(void *ctx, const char *node, const char *key, const char *value,
		       struct kube_status *st)
{
	return op_kv(ctx, node, key, value, false, st);
}

/* Starts a pod's termination: its grace period, then gone. */
static void terminate_pod(struct sim_cluster *c, struct spod *p, int64_t grace)
{
	enum sim_controller ctrl = c->specs[p->spec].spec->controller;

	if (p->st == SP_PENDING || p->st == SP_DONE || !p->node) {
		/* nothing runs: deleted at once */
		struct spod old = *p;

		if (old.st != SP_DONE && ctrl != SIM_CTRL_STATEFULSET)
			replace(c, &old, false);
		pod_remove(c, p);
		if (old.st != SP_DONE && ctrl == SIM_CTRL_STATEFULSET)
			replace(c, &old, true);
		return;
	}
	set_state(c, p, SP_TERMINATING);
	p->p.flags |= POD_TERMINATING;
	p->deleted_wall = wall_s(c);
	p->grace_ns = grace > 0 ? grace : 0;
	notify_pod(c, p, false);
	if (ctrl != SIM_CTRL_STATEFULSET)
		replace(c, p, false);
	if (sim_after(c->ex, c->life, grace > 0 ? grace : 0, terminated_event, NULL, p->seq) < 0) {
		struct spod old = *p;

		pod_remove(c, p);
		if (ctrl == SIM_CTRL_STATEFULSET)
			replace(c, &old, true);
	}
}

static int op_evict(void *ctx, const char *ns, const char *pod, int64_t grace_s,
		    struct kube_status *st)
{
	struct sim_cluster *c = ctx;
	struct spod **slot, *p;
	const struct spec_state *ss;
	int32_t *allowed = NULL;
	int64_t grace;
	size_t k;

	sim_cloud_lock(c->cloud);
	slot = tab_find(c, ns ? ns : "", pod ? pod : "");
	if (!slot) {
		sim_cloud_unlock(c->cloud);
		status(st, KUBE_NOT_FOUND, "pods \"%s\" not found", pod ? pod : "");
		return -1;
	}
	p = *slot;
	if (p->st == SP_TERMINATING) {
		sim_cloud_unlock(c->cloud);
		return ok(st); /* being evicted already */
	}
	ss = &c->specs[p->spec];
	if (p->st == SP_RUNNING && ss->n_pdbs) {
		allowed = calloc(c->n_pdbs, sizeof(*allowed));
		if (!allowed) {
			sim_cloud_unlock(c->cloud);
			status(st, KUBE_ERROR, "out of memory");
			return -1;
		}
		pdb_allowed_all(c, allowed);
		for (k = 0; k < ss->n_pdbs; k++) {
			const struct spdb *b = &c->pdbs[ss->pdbs[k]];

			if (allowed[ss->pdbs[k]] > 0)
				continue;
			c->st.evictions_blocked++;
			status(st, KUBE_PDB_BLOCKED,
			       "Cannot evict pod as it would violate the pod's disruption budget %s/%s (%s %s)",
			       b->b.ns, b->b.name, b->max_unavailable ? "maxUnavailable" : "minAvailable",
			       b->max_unavailable ? b->b.max_unavailable : b->b.min_available);
			sim_cloud_tracef(c->cloud, "eviction of %s/%s refused by PDB %s", p->p.ns,
					 p->p.name, b->b.name);
			free(allowed);
			sim_cloud_unlock(c->cloud);
			return -1;
		}
		free(allowed);
	}
	grace = grace_s >= 0 ? grace_s * CLOCK_NS_PER_S : ss->spec->grace_ns;
	if (p->st != SP_DONE) {
		c->st.evictions++;
		if (on_interrupted(p) && !(p->p.flags & POD_DAEMONSET))
			c->st.interrupted_moved++;
		if (is_protected(c, p))
			c->st.protected_disrupted++;
	}
	sim_cloud_tracef(c->cloud, "pod %s/%s evicted (grace %.0fs)", p->p.ns, p->p.name,
			 (double)grace / CLOCK_NS_PER_S);
	terminate_pod(c, p, grace);
	sim_cloud_unlock(c->cloud);
	return ok(st);
}

/* NoExecute: pods that do not tolerate the taint are deleted. */
static void no_execute(struct sim_cluster *c, struct snode *n, const struct taint *t)
{
	size_t i = 0;

	while (i < n->n_pods) {
		struct spod *p = n->pods[i];

		struct pod bare = p->p;

		/* only the taint matters: a running pod's selectors are ignored */
		bare.node_selector.n = 0;
		bare.affinity.n_terms = 0;
		if (p->st == SP_DONE || p->st == SP_TERMINATING ||
		    sched_fits_labels(&bare, NULL, NULL, t, 1, false, NULL, 0) != SCHED_TAINT) {
			i++;
			continue;
		}
		/* (the pod list changes under us: start over) */
		if (p->st == SP_RUNNING && !(p->p.flags & POD_DAEMONSET)) {
			c->st.pods_killed++;
			if (is_protected(c, p))
				c->st.protected_disrupted++;
		}
		sim_cloud_tracef(c->cloud, "pod %s/%s deleted: NoExecute taint %s", p->p.ns,
				 p->p.name, t->key);
		terminate_pod(c, p, c->specs[p->spec].spec->grace_ns);
		i = 0;
	}
}

/* Adds (or removes) taint key:effect on node 'n', as a taint write does.
 * Lock held. 0, or -1 when out of memory. */
static int set_taint(struct sim_cluster *c, struct snode *n, const char *key, const char *value,
		     enum taint_effect effect, bool remove)
{
	struct taint *ts;
	size_t i, k = 0;

	ts = arena_calloc(c->arena, n->n.n_taints + 1, sizeof(*ts));
	if (!ts)
		return -1;
	for (i = 0; i < n->n.n_taints; i++)
		if (strcmp(n->n.taints[i].key, key) != 0 || n->n.taints[i].effect != effect)
			ts[k++] = n->n.taints[i];
	if (!remove) {
		ts[k].key = keep(c, key);
		ts[k].value = keep(c, value ? value : "");
		ts[k].effect = effect;
		if (!ts[k].key || !ts[k].value)
			return -1;
		k++;
	}
	n->n.taints = ts;
	n->n.n_taints = k;
	c->st.taints++;
	sim_cloud_tracef(c->cloud, "node %s taint %s:%s %s", n->n.name, key,
			 taint_effect_str(effect), remove ? "removed" : "added");
	notify_node(c, n, false);
	if (remove) {
		c->cap_gen++;
		kick(c);
	} else if (effect == TAINT_NO_EXECUTE) {
		no_execute(c, n, &ts[k - 1]);
	}
	return 0;
}

static int op_taint(void *ctx, const char *node, const char *key, const char *value,
		    enum taint_effect effect, bool remove, struct kube_status *st)
{
	struct sim_cluster *c = ctx;
	struct snode *n;

	if (!key || !key[0]) {
		status(st, KUBE_ERROR, "empty taint key");
		return -1;
	}
	sim_cloud_lock(c->cloud);
	n = find_snode(c, node, NULL);
	if (!n) {
		sim_cloud_unlock(c->cloud);
		return node_not_found(st, node);
	}
	if (set_taint(c, n, key, value, effect, remove) < 0) {
		sim_cloud_unlock(c->cloud);
		status(st, KUBE_ERROR, "out of memory");
		return -1;
	}
	sim_cloud_unlock(c->cloud);
	return ok(st);
}

static int op_delete_node(void *ctx, const char *node, struct kube_status *st)
{
	struct sim_cluster *c = ctx;
	struct snode *n;
	struct sim_instance *in;

	sim_cloud_lock(c->cloud);
	n = find_snode(c, node, NULL);
	if (!n) {
		sim_cloud_unlock(c->cloud);
		return node_not_found(st, node);
	}
	in = n->inst;
	c->st.node_deletes++;
	remove_node(c, n, "node deleted");
	/* the plain cloud ends a deleted node's machine; EC2 does not: its
	 * ASG or fleet holds it until the provider terminates it */
	if (in && !sim_cloud_flavoured(c->cloud))
		sim_cloud_terminate_instance(c->cloud, in);
	sim_cloud_unlock(c->cloud);
	return ok(st);
}

static int op_node_pods(void *ctx, const char *node, struct kube_pod_ref **pods, size_t *n_out,
			struct kube_status *st)
{
	struct sim_cluster *c = ctx;
	struct kube_pod_ref *out;
	struct snode *n;
	size_t i, k = 0;

	*pods = NULL;
	*n_out = 0;
	sim_cloud_lock(c->cloud);
	n = find_snode(c, node, NULL);
	if (!n) {
		sim_cloud_unlock(c->cloud);
		return node_not_found(st, node);
	}
	out = calloc(n->n_pods ? n->n_pods : 1, sizeof(*out));
	if (!out) {
		sim_cloud_unlock(c->cloud);
		status(st, KUBE_ERROR, "out of memory");
		return -1;
	}
	for (i = 0; i < n->n_pods; i++) {
		const struct spod *p = n->pods[i];

		if (p->st == SP_DONE)
			continue;
		out[k].pod = pod_clone(&p->p);
		if (!out[k].pod) {
			sim_cloud_unlock(c->cloud);
			kube_pod_refs_free(out, k);
			status(st, KUBE_ERROR, "out of memory");
			return -1;
		}
		snprintf(out[k].ns, sizeof(out[k].ns), "%s", p->p.ns);
		snprintf(out[k].name, sizeof(out[k].name), "%s", p->p.name);
		/* a terminating pod still has to leave before the node may go */
		out[k].terminating = (p->p.flags & POD_TERMINATING) != 0;
		out[k].evictable = out[k].terminating ||
				   sched_pod_evictable(&p->p);
		k++;
	}
	sim_cloud_unlock(c->cloud);
	*pods = out;
	*n_out = k;
	return ok(st);
}

static int op_event(void *ctx, const char *node, const char *type, const char *reason,
		    const char *message)
{
	struct sim_cluster *c = ctx;

	sim_cloud_lock(c->cloud);
	c->st.events++;
	sim_cloud_tracef(c->cloud, "event %s %s on %s: %s", type ? type : "", reason ? reason : "",
			 node ? node : "", message ? message : "");
	sim_cloud_unlock(c->cloud);
	return 0;
}

/* The Binding API through kubeops, with the uid precondition. */
static int op_bind(void *ctx, const char *ns, const char *name, const char *uid,
		   const char *node, struct kube_status *st)
{
	struct sim_cluster *c = ctx;
	struct spod **slot;
	bool differs = false;

	if (uid && uid[0]) {
		sim_cloud_lock(c->cloud);
		slot = tab_find(c, ns ? ns : "", name ? name : "");
		differs = slot && (*slot)->p.uid && strcmp((*slot)->p.uid, uid) != 0;
		sim_cloud_unlock(c->cloud);
	}
	if (differs) {
		status(st, KUBE_CONFLICT, "pod %s: the uid in the precondition does not match", name);
		return -1;
	}
	return sim_cluster_bind_pod(c, ns, name, node, st);
}

static const struct kubeops_ops sim_kubeops = {
	.cordon = op_cordon,
	.label = op_label,
	.annotate = op_annotate,
	.taint = op_taint,
	.evict = op_evict,
	.delete_node = op_delete_node,
	.node_pods = op_node_pods,
	.event = op_event,
	.bind = op_bind,
};

void sim_cluster_kubeops(struct sim_cluster *c, struct kubeops *out)
{
	out->ops = &sim_kubeops;
	out->ctx = c;
}

/* ---- the snapshot ---- */

/* Group i's live instances on another image than the group launches now
 * (the cloud's word, as a provider says it) into g->outdated, the reasons
 * in arena 'a' (snapshot_set_groups copies them). 0, or -1 out of memory.
 * The cloud's lock held. */
static int group_outdated(struct sim_cluster *c, size_t i, struct arena *a, struct node_group *g)
{
	size_t k, n, m = 0;
	struct sim_instance *const *in = sim_cloud_instances(c->cloud, i, &n);
	struct kv *kv;
	char why[192];

	g->outdated = NULL;
	g->n_outdated = 0;
	for (k = 0; k < n; k++)
		m += sim_cloud_instance_outdated(c->cloud, in[k], why, sizeof(why));
	if (!m)
		return 0;
	kv = arena_calloc(a, m, sizeof(*kv));
	if (!kv)
		return -1;
	for (k = m = 0; k < n; k++)
		if (sim_cloud_instance_outdated(c->cloud, in[k], why, sizeof(why))) {
			kv[m].key = in[k]->provider_id;
			if (!(kv[m].value = arena_strdup(a, why)))
				return -1;
			m++;
		}
	g->outdated = kv;
	g->n_outdated = m;
	return 0;
}

int sim_cluster_snapshot(struct sim_cluster *c, bool cloud_targets, struct snapshot **out,
			 struct errbuf *err)
{
	struct snapshot *s;
	struct node_group *groups = NULL;
	int32_t *allowed = NULL;
	size_t i, ng;
	int rc = -1;

	*out = NULL;
	s = snapshot_new();
	if (!s)
		return errbuf_set(err, "out of memory");
	sim_cloud_lock(c->cloud);
	ng = sim_cloud_n_groups(c->cloud);
	if (snapshot_reserve(s, c->n_nodes, c->n_pods, c->n_pdbs, err) < 0)
		goto out;
	for (i = 0; i < c->n_nodes; i++)
		if (snapshot_add_node(s, &c->nodes[i]->n, err) < 0)
			goto out;
	for (i = 0; i < c->n_pods; i++)
		if (snapshot_add_pod(s, &c->pods[i]->p, err) < 0)
			goto out;
	if (c->n_pdbs) {
		allowed = calloc(c->n_pdbs, sizeof(*allowed));
		if (!allowed) {
			errbuf_set(err, "out of memory");
			goto out;
		}
		pdb_allowed_all(c, allowed);
		for (i = 0; i < c->n_pdbs; i++) {
			struct pdb b = c->pdbs[i].b;

			b.disruptions_allowed = allowed[i];
			if (snapshot_add_pdb(s, &b, err) < 0)
				goto out;
		}
	}
	if (ng) {
		groups = calloc(ng, sizeof(*groups));
		if (!groups) {
			errbuf_set(err, "out of memory");
			goto out;
		}
		for (i = 0; i < ng; i++) {
			groups[i] = *sim_cloud_group(c->cloud, i);
			groups[i].target = cloud_targets ? sim_cloud_target(c->cloud, i) : -1;
			if (group_outdated(c, i, s->arena, &groups[i]) < 0) {
				errbuf_set(err, "out of memory");
				goto out;
			}
		}
		if (snapshot_set_groups(s, groups, ng, err) < 0)
			goto out;
	}
	if (sim_volumes_snapshot(c->vols, s, err) < 0)
		goto out;
	if (snapshot_finish(s, wall_s(c), err) < 0)
		goto out;
	rc = 0;
out:
	sim_cloud_unlock(c->cloud);
	free(groups);
	free(allowed);
	if (rc < 0) {
		errbuf_prefix(err, "simulated cluster snapshot");
		snapshot_free(s);
	} else {
		*out = s;
	}
	return rc;
}

/* ---- reading ---- */

void sim_cluster_get_stats(struct sim_cluster *c, struct sim_stats *out)
{
	sim_cloud_lock(c->cloud);
	*out = c->st;
	out->pending_ns = c->pending_ns;
	out->n_pending_ns = c->n_pending_ns;
	sim_cloud_unlock(c->cloud);
}

void sim_cluster_counts(struct sim_cluster *c, struct sim_counts *out)
{
	int64_t now;
	size_t i;

	memset(out, 0, sizeof(*out));
	sim_cloud_lock(c->cloud);
	now = now_ns(c);
	out->nodes = (int)c->n_nodes;
	for (i = 0; i < c->n_nodes; i++) {
		const struct snode *n = c->nodes[i];

		if (n->n.unschedulable)
			out->nodes_cordoned++;
		if (!n->n.ready)
			continue;
		out->nodes_ready++;
		out->cpu_alloc_m += n->n.allocatable.cpu_m;
		out->cpu_req_m += n->n.allocatable.cpu_m - n->room.cpu_m;
		out->mem_alloc += n->n.allocatable.memory;
		out->mem_req += n->n.allocatable.memory - n->room.memory;
	}
	out->pods_pending = c->n_state[SP_PENDING];
	out->pods_running = c->n_state[SP_RUNNING];
	out->pods_terminating = c->n_state[SP_TERMINATING];
	out->pods_finished = c->n_state[SP_DONE];
	for (i = 0; i < c->n_pending; i++) {
		const struct spod *p = c->pending[i];

		if (!p)
			continue;
		if (p->p.flags & POD_UNSCHEDULABLE)
			out->pods_unschedulable++;
		if (now - p->queued_ns > out->oldest_pending_ns)
			out->oldest_pending_ns = now - p->queued_ns;
	}
	sim_cloud_unlock(c->cloud);
}

int sim_cluster_group_nodes(struct sim_cluster *c, size_t gi, int64_t *node_ns)
{
	int64_t now, total;
	size_t i;
	int n;

	sim_cloud_lock(c->cloud);
	assert(gi < sim_cloud_n_groups(c->cloud));
	now = now_ns(c);
	n = c->group_nodes[gi];
	total = c->group_node_ns[gi];
	for (i = 0; i < c->n_nodes; i++)
		if (c->nodes[i]->group == gi)
			total += now - c->nodes[i]->registered_ns;
	sim_cloud_unlock(c->cloud);
	if (node_ns)
		*node_ns = total;
	return n;
}

int sim_cluster_pod(struct sim_cluster *c, const char *ns, const char *name,
		    struct sim_pod_info *out)
{
	struct spod **slot;
	const struct spod *p;

	sim_cloud_lock(c->cloud);
	slot = tab_find(c, ns ? ns : "", name ? name : "");
	if (!slot) {
		sim_cloud_unlock(c->cloud);
		return -1;
	}
	p = *slot;
	out->phase = p->p.phase;
	out->node = p->p.node_name;
	out->terminating = p->st == SP_TERMINATING;
	out->unschedulable = p->p.flags & POD_UNSCHEDULABLE;
	out->message = p->p.sched_message;
	out->created_ns = p->created_ns;
	out->bound_ns = p->started_ns;
	sim_cloud_unlock(c->cloud);
	return 0;
}

int sim_cluster_node(struct sim_cluster *c, const char *name, struct sim_node_info *out)
{
	const struct snode *n;

	sim_cloud_lock(c->cloud);
	n = find_snode(c, name, NULL);
	if (!n) {
		sim_cloud_unlock(c->cloud);
		return -1;
	}
	out->ready = n->n.ready;
	out->unschedulable = n->n.unschedulable;
	out->group = sim_cloud_group(c->cloud, n->group)->name;
	out->n_pods = n->n_pods;
	out->free_cpu_m = n->room.cpu_m;
	out->free_memory = n->room.memory;
	sim_cloud_unlock(c->cloud);
	return 0;
}

size_t sim_cluster_n_pods(struct sim_cluster *c)
{
	size_t n;

	sim_cloud_lock(c->cloud);
	n = c->n_pods;
	sim_cloud_unlock(c->cloud);
	return n;
}

/* ---- what the simulated API server needs ---- */

void sim_cluster_set_watch(struct sim_cluster *c, sim_cluster_watch_fn fn, void *ud)
{
	size_t i;

	sim_cloud_lock(c->cloud);
	c->watch = fn;
	c->watch_ud = ud;
	if (fn) {
		for (i = 0; i < c->n_nodes; i++)
			notify_node(c, c->nodes[i], false);
		for (i = 0; i < c->n_pods; i++)
			notify_pod(c, c->pods[i], false);
	}
	sim_cloud_unlock(c->cloud);
}

int sim_cluster_delete_pod(struct sim_cluster *c, const char *ns, const char *name,
			   int64_t grace_s, struct kube_status *st)
{
	struct spod **slot, *p;

	sim_cloud_lock(c->cloud);
	slot = tab_find(c, ns ? ns : "", name ? name : "");
	if (!slot) {
		sim_cloud_unlock(c->cloud);
		status(st, KUBE_NOT_FOUND, "pods \"%s\" not found", name ? name : "");
		return -1;
	}
	p = *slot;
	if (p->st == SP_TERMINATING) {
		if (grace_s == 0)
			terminated(c, p, "force-deleted"); /* gone now, not at the end of its grace */
		sim_cloud_unlock(c->cloud);
		return ok(st); /* being deleted already */
	}
	if (p->st == SP_RUNNING && !(p->p.flags & POD_DAEMONSET)) {
		c->st.pods_killed++;
		if (is_protected(c, p))
			c->st.protected_disrupted++;
	}
	sim_cloud_tracef(c->cloud, "pod %s/%s deleted", p->p.ns, p->p.name);
	terminate_pod(c, p, grace_s >= 0 ? grace_s * CLOCK_NS_PER_S : c->specs[p->spec].spec->grace_ns);
	sim_cloud_unlock(c->cloud);
	return ok(st);
}

int sim_cluster_bind_pod(struct sim_cluster *c, const char *ns, const char *name,
			 const char *node, struct kube_status *st)
{
	struct spod **slot, *p;
	struct snode *n;
	int rc = -1;

	sim_cloud_lock(c->cloud);
	slot = tab_find(c, ns ? ns : "", name ? name : "");
	if (!slot) {
		status(st, KUBE_NOT_FOUND, "pods \"%s\" not found", name ? name : "");
		goto out;
	}
	p = *slot;
	if (p->node || p->st != SP_PENDING) {
		status(st, KUBE_CONFLICT, "pod %s is already assigned to node \"%s\"", p->p.name,
		       p->p.node_name);
		goto out;
	}
	n = find_snode(c, node, NULL);
	if (!n) {
		node_not_found(st, node);
		goto out;
	}
	if (bind(c, p, n) < 0) {
		status(st, KUBE_ERROR, "out of memory");
		goto out;
	}
	kick(c);
	rc = ok(st);
out:
	sim_cloud_unlock(c->cloud);
	return rc;
}

size_t sim_cluster_n_pdbs(struct sim_cluster *c)
{
	size_t n;

	sim_cloud_lock(c->cloud);
	n = c->n_pdbs;
	sim_cloud_unlock(c->cloud);
	return n;
}

size_t sim_cluster_claims(struct sim_cluster *c, struct sim_claim_view *out, size_t cap)
{
	size_t n, i;

	sim_cloud_lock(c->cloud);
	n = sim_volumes_count(c->vols);
	for (i = 0; i < n && i < cap; i++)
		sim_volumes_view(c->vols, i, &out[i]);
	sim_cloud_unlock(c->cloud);
	return n;
}

int sim_cluster_pdbs(struct sim_cluster *c, struct pdb *pdbs, struct sim_pdb_status *status_out,
		     size_t cap)
{
	int32_t *allowed;
	size_t i, n;

	sim_cloud_lock(c->cloud);
	n = c->n_pdbs < cap ? c->n_pdbs : cap;
	allowed = calloc(c->n_pdbs ? c->n_pdbs : 1, sizeof(*allowed));
	if (!allowed) {
		sim_cloud_unlock(c->cloud);
		return -1;
	}
	if (status_out && n == c->n_pdbs) {
		pdb_status_all(c, allowed, status_out);
	} else if (status_out) {
		struct sim_pdb_status *all = calloc(c->n_pdbs, sizeof(*all));

		if (!all) {
			free(allowed);
			sim_cloud_unlock(c->cloud);
			return -1;
		}
		pdb_status_all(c, allowed, all);
		memcpy(status_out, all, n * sizeof(*all));
		free(all);
	}
	for (i = 0; i < n; i++) {
		pdbs[i] = c->pdbs[i].b;
		pdbs[i].disruptions_allowed = status_out ? status_out[i].disruptions_allowed : 0;
	}
	free(allowed);
	sim_cloud_unlock(c->cloud);
	return (int)n;
}

size_t sim_cluster_n_specs(struct sim_cluster *c)
{
	size_t n;

	sim_cloud_lock(c->cloud);
	n = c->n_specs;
	sim_cloud_unlock(c->cloud);
	return n;
}

const struct sim_pod_spec *sim_cluster_spec(struct sim_cluster *c, size_t i)
{
	const struct sim_pod_spec *s = NULL;

	sim_cloud_lock(c->cloud);
	if (i < c->n_specs)
		s = c->specs[i].spec;
	sim_cloud_unlock(c->cloud);
	return s;
}

struct sim_cloud *sim_cluster_cloud(const struct sim_cluster *c)
{
	return c->cloud;
}

int sim_cluster_spec_counts(struct sim_cluster *c, size_t i, struct sim_spec_counts *out)
{
	size_t k;

	memset(out, 0, sizeof(*out));
	sim_cloud_lock(c->cloud);
	if (i >= c->n_specs) {
		sim_cloud_unlock(c->cloud);
		return -1;
	}
	for (k = 0; k < c->n_pods; k++) {
		const struct spod *p = c->pods[k];

		if ((size_t)p->spec != i || p->st == SP_DONE)
			continue;
		if (p->node) {
			out->scheduled++;
			if (p->st == SP_RUNNING)
				out->ready++;
		} else {
			out->pending++;
		}
	}
	sim_cloud_unlock(c->cloud);
	return 0;
}

int sim_cluster_set_kubelet(struct sim_cluster *c, const char *node, bool up)
{
	struct snode *n;

	sim_cloud_lock(c->cloud);
	n = find_snode(c, node, NULL);
	if (!n) {
		sim_cloud_unlock(c->cloud);
		return -1;
	}
	if (up && n->inst && n->inst->state != INSTANCE_RUNNING)
		up = false; /* a stopping instance's kubelet does not come back */
	if (n->n.ready != up) {
		n->n.ready = up;
		n->starting = false;
		n->ready_wall = wall_s(c);
		sim_cloud_tracef(c->cloud, "node %s %s (kubelet %s)", n->n.name, up ? "Ready" : "NotReady",
				 up ? "reporting again" : "stopped reporting");
		notify_node(c, n, false);
		c->cap_gen++;
		kick(c);
	}
	sim_cloud_unlock(c->cloud);
	return 0;
}

/* ---- what the workload controllers need ---- */

int sim_cluster_create_named_pod(struct sim_cluster *c, int spec, const char *name,
				 int64_t run_ns, struct errbuf *err)
{
	struct spod *p;
	int rc = -1;

	sim_cloud_lock(c->cloud);
	if (spec < 0 || (size_t)spec >= c->n_specs) {
		errbuf_set(err, "no pod spec %d", spec);
		goto out;
	}
	if (c->specs[spec].spec->controller == SIM_CTRL_DAEMONSET) {
		errbuf_set(err, "%s is a DaemonSet: its pods come with the nodes",
			   c->specs[spec].spec->name);
		goto out;
	}
	if (!name || !name[0] || tab_find(c, c->specs[spec].spec->ns, name)) {
		errbuf_set(err, "pods \"%s\" already exists", name ? name : "");
		goto out;
	}
	if (run_ns == 0)
		run_ns = c->specs[spec].spec->duration_ns;
	p = pod_new(c, spec, name, run_ns);
	if (!p) {
		errbuf_set(err, "out of memory");
		goto out;
	}
	if (pending_add(c, p) < 0) {
		pod_remove(c, p);
		errbuf_set(err, "out of memory");
		goto out;
	}
	sim_cloud_tracef(c->cloud, "pod %s/%s created", p->p.ns, p->p.name);
	kick(c);
	rc = 0;
out:
	sim_cloud_unlock(c->cloud);
	return rc;
}

static int spec_pod_cmp(const void *a, const void *b)
{
	const struct sim_spec_pod *x = a, *y = b;

	return (x->created_ns > y->created_ns) - (x->created_ns < y->created_ns);
}

int sim_cluster_spec_pods(struct sim_cluster *c, int spec, struct sim_spec_pod *out, size_t cap)
{
	size_t k, n = 0;

	sim_cloud_lock(c->cloud);
	if (spec < 0 || (size_t)spec >= c->n_specs) {
		sim_cloud_unlock(c->cloud);
		return -1;
	}
	for (k = 0; k < c->n_pods; k++) {
		const struct spod *p = c->pods[k];

		if (p->spec != spec)
			continue;
		if (n < cap) {
			out[n].name = p->p.name;
			out[n].phase = p->p.phase;
			out[n].terminating = p->st == SP_TERMINATING;
			out[n].bound = p->node != NULL;
			out[n].created_ns = p->created_ns;
		}
		n++;
	}
	if (out && cap)
		qsort(out, n < cap ? n : cap, sizeof(*out), spec_pod_cmp);
	sim_cloud_unlock(c->cloud);
	return (int)n;
}

/* A copy of 'in' in the cluster's arena; -1 when out of memory. */
static int kvs_keep(struct sim_cluster *c, const struct kvlist *in, struct kvlist *out)
{
	size_t i;

	out->n = 0;
	out->items = in->n ? arena_calloc(c->arena, in->n, sizeof(*out->items)) : NULL;
	if (in->n && !out->items)
		return -1;
	for (i = 0; i < in->n; i++) {
		out->items[i].key = keep(c, in->items[i].key);
		out->items[i].value = keep(c, in->items[i].value ? in->items[i].value : "");
		if (!out->items[i].key || !out->items[i].value)
			return -1;
	}
	out->n = in->n;
	return 0;
}

int sim_cluster_set_pod_meta(struct sim_cluster *c, const char *ns, const char *name,
			     const struct kvlist *labels, const struct kvlist *annotations,
			     struct kube_status *st)
{
	struct spod **slot;
	struct kvlist l, a;
	int rc = -1;

	sim_cloud_lock(c->cloud);
	slot = tab_find(c, ns ? ns : "", name ? name : "");
	if (!slot) {
		status(st, KUBE_NOT_FOUND, "pods \"%s\" not found", name ? name : "");
		goto out;
	}
	l = (*slot)->p.labels;
	a = (*slot)->p.annotations;
	if ((labels && kvs_keep(c, labels, &l) < 0) ||
	    (annotations && kvs_keep(c, annotations, &a) < 0)) {
		status(st, KUBE_ERROR, "out of memory");
		goto out;
	}
	(*slot)->p.labels = l;
	(*slot)->p.annotations = a;
	if (labels) {
		(*slot)->relabelled = true;
		/* another pod's affinity, anti-affinity or spread may read them */
		c->cap_gen++;
		c->rel_gen++;
		kick(c);
	}
	notify_pod(c, *slot, false);
	rc = ok(st);
out:
	sim_cloud_unlock(c->cloud);
	return rc;
}

int sim_cluster_orphan_pod(struct sim_cluster *c, const char *ns, const char *name,
			   struct kube_status *st)
{
	struct spod **slot;

	sim_cloud_lock(c->cloud);
	slot = tab_find(c, ns ? ns : "", name ? name : "");
	if (!slot) {
		sim_cloud_unlock(c->cloud);
		status(st, KUBE_NOT_FOUND, "pods \"%s\" not found", name ? name : "");
		return -1;
	}
	(*slot)->p.controller_kind = "";
	(*slot)->p.controller_name = "";
	notify_pod(c, *slot, false);
	sim_cloud_unlock(c->cloud);
	return ok(st);
}

int sim_cluster_pod_spec(struct sim_cluster *c, const char *ns, const char *name)
{
	struct spod **slot;
	int rc;

	sim_cloud_lock(c->cloud);
	slot = tab_find(c, ns ? ns : "", name ? name : "");
	rc = slot ? (*slot)->spec : -1;
	sim_cloud_unlock(c->cloud);
	return rc;
}

int sim_cluster_adopt(struct sim_cluster *c, void *mem, void (*free_fn)(void *))
{
	void *na;

	sim_cloud_lock(c->cloud);
	na = realloc(c->adopted, (c->n_adopted + 1) * sizeof(*c->adopted));
	if (!na) {
		sim_cloud_unlock(c->cloud);
		return -1;
	}
	c->adopted = na;
	c->adopted[c->n_adopted].mem = mem;
	c->adopted[c->n_adopted].free_fn = free_fn;
	c->n_adopted++;
	sim_cloud_unlock(c->cloud);
	return 0;
}
