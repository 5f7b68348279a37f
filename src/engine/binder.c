/*
 * binder: launch → instance → node, and the pods packed for it. A launch
 * is packed when it starts (first-fit decreasing of the snapshot's
 * unschedulable pods not followed already, onto that many new nodes of its
 * group); each instance it creates takes the next bin. The state is under
 * one mutex, never held while calling out (kubeops, logger).
 */
#include "engine/binder.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

/* A pod of a packing: its namespace, name and uid, in one block. */
struct bpod {
	char *ns, *name, *uid;
};

struct bin {
	struct bpod *pods;
	size_t n;
};

/* A launch being followed: its bins not yet given to an instance. */
struct order {
	struct binder *b;
	char group[64];
	int64_t planned;   /* wall seconds */
	struct bin *bins;
	size_t n_bins, next;
	struct order *next_order;
};

/* An instance and the pods packed for it. */
struct assoc {
	char group[64];
	char provider_id[256];
	char node[256];    /* "" until its node registered */
	int64_t planned;   /* wall seconds: its launch started */
	char why[160];     /* why it was dropped (for the log) */
	struct bpod *pods;
	size_t n;
	struct assoc *next;
};

struct binder {
	pthread_mutex_t mu;
	struct executor *ex;
	struct clock *clock;
	const struct kubeops *kube;
	struct binder_config cfg;
	const struct logger *log;
	struct actuator_launch_hooks hooks;
	struct order *orders;
	struct assoc *assocs;
	size_t followed;   /* pods in orders' free bins and in assocs */
	bool told_no_op;   /* "kubeops cannot bind" logged */
	struct binder_stats st;
};

/* A bind pass for one node, run on the executor. */
struct bind_job {
	struct binder *b;
	char node[256];
	char group[64];
	int64_t ready_s;   /* seconds from the launch to this pass */
	struct bpod *pods; /* owned */
	size_t n;
};

#define LOG(b, lvl, ...) log_at((b)->log, (lvl), clock_wall((b)->clock), __VA_ARGS__)

void binder_config_default(struct binder_config *c)
{
	memset(c, 0, sizeof(*c));
	c->max_wait_s = 15 * 60;
}

static void bpod_free(struct bpod *p)
{
	free(p->ns); /* name and uid live in the same block */
}

static void bpods_free(struct bpod *v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++)
		bpod_free(&v[i]);
	free(v);
}

/* Copies a snapshot pod's identity. 0 or -1 (OOM). */
static int bpod_set(struct bpod *out, const struct pod *p)
{
	size_t ln = strlen(p->ns) + 1, lm = strlen(p->name) + 1;
	size_t lu = (p->uid ? strlen(p->uid) : 0) + 1;
	char *blk = malloc(ln + lm + lu);

	if (!blk)
		return -1;
	memcpy(blk, p->ns, ln);
	memcpy(blk + ln, p->name, lm);
	memcpy(blk + ln + lm, p->uid ? p->uid : "", lu);
	out->ns = blk;
	out->name = blk + ln;
	out->uid = blk + ln + lm;
	return 0;
}

static void order_free(struct order *o)
{
	size_t i;

	for (i = 0; i < o->n_bins; i++)
		bpods_free(o->bins[i].pods, o->bins[i].n);
	free(o->bins);
	free(o);
}

static void assoc_free(struct assoc *a)
{
	bpods_free(a->pods, a->n);
	free(a);
}

static void count_outcome(struct binder *b, const char *outcome, uint64_t n)
{
	uint64_t i;

	if (!b->cfg.ins)
		return;
	for (i = 0; i < n; i++)
		metric_inc1(b->cfg.ins->bindings, outcome);
}

/* ---- which pods are followed already ---- */

struct key {
	const char *ns, *name;
};

static int key_cmp(const void *x, const void *y)
{
	const struct key *a = x, *b = y;
	int c = strcmp(a->ns, b->ns);

	return c ? c : strcmp(a->name, b->name);
}

/* The pods followed now, sorted (caller frees). Lock held. NULL with
 * *n == 0 when none; NULL with *n != 0 when out of memory. */
static struct key *followed_keys(struct binder *b, size_t *n)
{
	struct key *k;
	struct order *o;
	struct assoc *a;
	size_t m = 0, i, j;

	*n = b->followed;
	if (!b->followed)
		return NULL;
	k = calloc(b->followed, sizeof(*k));
	if (!k)
		return NULL;
	for (o = b->orders; o; o = o->next_order)
		for (i = o->next; i < o->n_bins; i++)
			for (j = 0; j < o->bins[i].n && m < b->followed; j++)
				k[m++] = (struct key){o->bins[i].pods[j].ns, o->bins[i].pods[j].name};
	for (a = b->assocs; a; a = a->next)
		for (j = 0; j < a->n && m < b->followed; j++)
			k[m++] = (struct key){a->pods[j].ns, a->pods[j].name};
	*n = m;
	qsort(k, m, sizeof(*k), key_cmp);
	return k;
}

/* ---- the launch hooks ---- */

static void *hook_planned(void *ctx, const char *group, int count, const struct snapshot *s)
{
	struct binder *b = ctx;
	struct pack_result pr;
	struct errbuf err;
	struct order *o = NULL;
	uint32_t *cand = NULL;
	struct key *keys = NULL;
	size_t i, n_cand = 0, n_keys = 0, n_packed = 0, n_sched_only = 0;
	int32_t g = snapshot_find_group(s, group);

	if (g < 0 || count <= 0)
		return NULL;
	memset(&pr, 0, sizeof(pr));
	cand = calloc(s->n_pending ? s->n_pending : 1, sizeof(*cand));
	if (!cand)
		goto oom;
	/* the pods the scheduler could not place, not in an earlier packing;
	 * under the lock: the keys borrow strings a launch's end frees */
	pthread_mutex_lock(&b->mu);
	keys = followed_keys(b, &n_keys);
	if (!keys && n_keys) {
		pthread_mutex_unlock(&b->mu);
		goto oom;
	}
	for (i = 0; i < s->n_pending; i++) {
		const struct pod *p = &s->pods[s->pending[i]];
		struct key k = {p->ns, p->name};

		if (!(p->flags & POD_UNSCHEDULABLE))
			continue;
		if (p->flags & POD_SCHEDULER_ONLY) {
			n_sched_only++; /* the scheduler's alone: never bound here */
			continue;
		}
		if (n_keys && bsearch(&k, keys, n_keys, sizeof(*keys), key_cmp))
			continue;
		cand[n_cand++] = s->pending[i];
	}
	pthread_mutex_unlock(&b->mu);
	free(keys);
	keys = NULL;
	if (n_sched_only)
		LOG(b, LOG_DEBUG, "bind_pods: %zu unschedulable pod(s) use what only their scheduler evaluates (another schedulerName, pod affinity, topology spread, volume claims): never bound by luascale",
		    n_sched_only);
	if (!n_cand) {
		free(cand);
		return NULL;
	}
	if (sched_pack_upcoming(s, cand, n_cand, (size_t)g, count, 0, &pr, &err) < 0)
		goto oom;
	o = calloc(1, sizeof(*o));
	if (!o || !(o->bins = calloc((size_t)count, sizeof(*o->bins))))
		goto oom;
	o->b = b;
	o->n_bins = (size_t)count;
	snprintf(o->group, sizeof(o->group), "%s", group);
	o->planned = clock_wall(b->clock);
	for (i = 0; i < pr.n_pods; i++) {
		int32_t bin = pr.placement[i];
		struct bin *bn;
		struct bpod *grown;

		if (bin < 0 || bin >= count)
			continue;
		bn = &o->bins[bin];
		grown = realloc(bn->pods, (bn->n + 1) * sizeof(*bn->pods));
		if (!grown)
			goto oom;
		bn->pods = grown;
		if (bpod_set(&bn->pods[bn->n], &s->pods[cand[i]]) < 0)
			goto oom;
		bn->n++;
		n_packed++;
	}
	pack_result_free(&pr);
	free(cand);
	if (!n_packed) {
		order_free(o);
		return NULL;
	}
	pthread_mutex_lock(&b->mu);
	if (b->followed + n_packed > BINDER_MAX_PODS) {
		size_t followed = b->followed;

		pthread_mutex_unlock(&b->mu);
		LOG(b, LOG_WARN, "bind_pods: %zu pods are followed already (at most %d): the %zu pod(s) of scale_up %s +%d are left to the scheduler",
		    followed, BINDER_MAX_PODS, n_packed, group, count);
		order_free(o);
		return NULL;
	}
	b->followed += n_packed;
	o->next_order = b->orders;
	b->orders = o;
	pthread_mutex_unlock(&b->mu);
	LOG(b, LOG_DEBUG, "bind_pods: scale_up %s +%d carries %zu pod(s); they are bound to its nodes once Ready, if still unbound and fitting",
	    group, count, n_packed);
	return o;
oom:
	free(keys);
	free(cand);
	pack_result_free(&pr);
	if (o)
		order_free(o);
	LOG(b, LOG_WARN, "bind_pods: out of memory: the pods of scale_up %s +%d will be left to the scheduler",
	    group, count);
	return NULL;
}

static void hook_instance(void *ctx, void *token, const struct provider_instance *inst)
{
	struct binder *b = ctx;
	struct order *o = token;
	struct assoc *a;
	struct bin *bn;

	if (!inst->provider_id[0])
		return;
	a = calloc(1, sizeof(*a));
	pthread_mutex_lock(&b->mu);
	/* skip bins that carry nothing; an instance takes the next one that does */
	while (o->next < o->n_bins && o->bins[o->next].n == 0)
		o->next++;
	if (!a || o->next >= o->n_bins) {
		pthread_mutex_unlock(&b->mu);
		free(a);
		return;
	}
	bn = &o->bins[o->next++];
	snprintf(a->group, sizeof(a->group), "%s", o->group);
	snprintf(a->provider_id, sizeof(a->provider_id), "%s", inst->provider_id);
	a->planned = o->planned;
	a->pods = bn->pods;
	a->n = bn->n;
	bn->pods = NULL;
	bn->n = 0;
	a->next = b->assocs;
	b->assocs = a;
	pthread_mutex_unlock(&b->mu);
}

static void hook_done(void *ctx, void *token)
{
	struct binder *b = ctx;
	struct order *o = token, **pp;
	size_t i, left = 0;

	pthread_mutex_lock(&b->mu);
	for (pp = &b->orders; *pp; pp = &(*pp)->next_order)
		if (*pp == o) {
			*pp = o->next_order;
			break;
		}
	for (i = o->next; i < o->n_bins; i++)
		left += o->bins[i].n;
	b->followed -= left <= b->followed ? left : b->followed;
	b->st.skipped += left;
	pthread_mutex_unlock(&b->mu);
	if (left) {
		count_outcome(b, "skipped", left);
		LOG(b, LOG_INFO, "bind_pods: scale_up %s created fewer instances than packed: %zu pod(s) left to the scheduler",
		    o->group, left);
	}
	order_free(o);
}

/* ---- lifecycle ---- */

struct binder *binder_new(struct executor *ex, const struct kubeops *kube,
			  const struct binder_config *cfg, const struct logger *log)
{
	struct binder *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	pthread_mutex_init(&b->mu, NULL);
	b->ex = ex;
	b->clock = executor_clock(ex);
	b->kube = kube;
	if (cfg)
		b->cfg = *cfg;
	else
		binder_config_default(&b->cfg);
	if (b->cfg.max_wait_s <= 0)
		b->cfg.max_wait_s = 15 * 60;
	b->log = log;
	b->hooks.planned = hook_planned;
	b->hooks.instance = hook_instance;
	b->hooks.done = hook_done;
	b->hooks.ctx = b;
	if (b->cfg.enabled && (!kube || !kube->ops->bind)) {
		LOG(b, LOG_WARN, "provisioning.bind_pods: this Kubernetes client cannot bind pods; binding is off");
		b->cfg.enabled = false;
	}
	return b;
}

void binder_free(struct binder *b)
{
	if (!b)
		return;
	while (b->orders) {
		struct order *o = b->orders;

		b->orders = o->next_order;
		order_free(o);
	}
	while (b->assocs) {
		struct assoc *a = b->assocs;

		b->assocs = a->next;
		assoc_free(a);
	}
	pthread_mutex_destroy(&b->mu);
	free(b);
}

const struct actuator_launch_hooks *binder_hooks(struct binder *b)
{
	return b && b->cfg.enabled ? &b->hooks : NULL;
}

void binder_get_stats(struct binder *b, struct binder_stats *out)
{
	pthread_mutex_lock(&b->mu);
	*out = b->st;
	out->followed = b->followed;
	pthread_mutex_unlock(&b->mu);
}

/* ---- binding ---- */

static void bind_task(void *arg, bool cancelled)
{
	struct bind_job *j = arg;
	struct binder *b = j->b;
	uint64_t bound = 0, conflicts = 0, skipped = 0, errors = 0;
	size_t i;

	for (i = 0; i < j->n; i++) {
		const struct bpod *p = &j->pods[i];
		struct kube_status st = {KUBE_OK, "", 0};

		if (cancelled || (b->cfg.may_act && !b->cfg.may_act(b->cfg.may_act_ctx))) {
			LOG(b, LOG_INFO, "bind_pods: node %s: %s; %zu pod(s) of its packing left to the scheduler",
			    j->node, cancelled ? "shutting down" : "this process no longer leads", j->n - i);
			skipped += j->n - i;
			break;
		}
		b->kube->ops->bind(b->kube->ctx, p->ns, p->name, p->uid, j->node, &st);
		if (st.code == KUBE_OK) {
			bound++;
			LOG(b, LOG_INFO, "bind_pods: bound pod %s/%s to node %s (packed for it at the scale_up of %s, %llds before)",
			    p->ns, p->name, j->node, j->group, (long long)j->ready_s);
		} else if (st.code == KUBE_CONFLICT) {
			conflicts++;
			LOG(b, LOG_INFO, "bind_pods: pod %s/%s not bound to node %s: %s; left to the scheduler",
			    p->ns, p->name, j->node, st.message[0] ? st.message : "conflict");
		} else if (st.code == KUBE_NOT_FOUND) {
			skipped++;
			LOG(b, LOG_DEBUG, "bind_pods: pod %s/%s not bound to node %s: %s", p->ns, p->name,
			    j->node, st.message[0] ? st.message : "not found");
		} else {
			/* throttled, forbidden, the server failing: nothing more
			 * this pass, nothing retried; the scheduler places them */
			errors++;
			LOG(b, LOG_WARN, "bind_pods: binding pod %s/%s to node %s failed: %s; this pod and the %zu after it are left to the scheduler",
			    p->ns, p->name, j->node, st.message[0] ? st.message : "error", j->n - i - 1);
			skipped += j->n - i - 1;
			break;
		}
	}
	pthread_mutex_lock(&b->mu);
	b->st.bound += bound;
	b->st.conflicts += conflicts;
	b->st.skipped += skipped;
	b->st.errors += errors;
	pthread_mutex_unlock(&b->mu);
	count_outcome(b, "bound", bound);
	count_outcome(b, "conflict", conflicts);
	count_outcome(b, "skipped", skipped);
	count_outcome(b, "error", errors);
	bpods_free(j->pods, j->n);
	free(j);
}

/* Whether node 'nd' is open to its packing: Ready, schedulable, not
 * being removed, no NoSchedule/NoExecute taint beyond its group's
 * template (startup taints: not-ready, uninitialized, an agent's). */
static bool node_open(const struct snapshot *s, const struct node *nd, const char *group,
		      char *why, size_t why_len)
{
	int32_t g = snapshot_find_group(s, group);
	const struct node_template *t = g >= 0 ? &s->groups[g].tmpl : NULL;
	size_t i, k;

	if (!nd->ready)
		return snprintf(why, why_len, "not Ready"), false;
	if (nd->unschedulable)
		return snprintf(why, why_len, "cordoned"), false;
	if (nd->removing)
		return snprintf(why, why_len, "being removed"), false;
	for (i = 0; i < nd->n_taints; i++) {
		const struct taint *tn = &nd->taints[i];
		bool expected = false;

		if (tn->effect == TAINT_PREFER_NO_SCHEDULE)
			continue;
		for (k = 0; t && k < t->n_taints && !expected; k++)
			expected = t->taints[k].effect == tn->effect &&
				   strcmp(t->taints[k].key, tn->key) == 0;
		if (!expected) {
			snprintf(why, why_len, "tainted %s:%s", tn->key, taint_effect_str(tn->effect));
			return false;
		}
	}
	return true;
}

struct pidx {
	const char *ns, *name;
	uint32_t pod;
};

static int pidx_cmp(const void *x, const void *y)
{
	const struct pidx *a = x, *b = y;
	int c = strcmp(a->ns, b->ns);

	return c ? c : strcmp(a->name, b->name);
}

static int nidx_cmp(const void *x, const void *y)
{
	const struct node *const *a = x, *const *b = y;

	return strcmp((*a)->provider_id, (*b)->provider_id);
}

/*
 * One pass on the Ready node 'nd' (index 'ni') for 'a': which pods still
 * pend with the same uid and still fit (room taken pod by pod); queues
 * their binding. 'pend' is the snapshot's pending pods sorted by name.
 * Frees 'a'.
 */
static void bind_pass(struct binder *b, const struct snapshot *s, size_t ni, struct assoc *a,
		      const struct pidx *pend, size_t n_pend, int64_t now)
{
	const struct node *nd = &s->nodes[ni];
	struct bind_job *j = calloc(1, sizeof(*j));
	struct room room;
	uint64_t skipped = 0;
	size_t i;

	if (!j || room_of_node(s, ni, &room) < 0) {
		free(j);
		LOG(b, LOG_WARN, "bind_pods: node %s: out of memory; its %zu pod(s) are left to the scheduler",
		    nd->name, a->n);
		skipped = a->n;
		goto out;
	}
	j->pods = calloc(a->n ? a->n : 1, sizeof(*j->pods));
	if (!j->pods) {
		room_free(&room);
		free(j);
		skipped = a->n;
		goto out;
	}
	j->b = b;
	snprintf(j->node, sizeof(j->node), "%s", nd->name);
	snprintf(j->group, sizeof(j->group), "%s", a->group);
	j->ready_s = now - a->planned;
	for (i = 0; i < a->n; i++) {
		struct bpod *bp = &a->pods[i];
		struct pidx k = {bp->ns, bp->name, 0};
		const struct pidx *hit = n_pend ? bsearch(&k, pend, n_pend, sizeof(*pend), pidx_cmp) : NULL;
		const struct pod *p = hit ? &s->pods[hit->pod] : NULL;
		char detail[160] = "";
		enum sched_fit f;

		if (!p) {
			skipped++;
			LOG(b, LOG_DEBUG, "bind_pods: pod %s/%s no longer pending (bound, finished or gone): not bound to node %s",
			    bp->ns, bp->name, nd->name);
			continue;
		}
		if (p->flags & POD_SCHEDULER_ONLY) {
			skipped++;
			continue;
		}
		if (bp->uid[0] && p->uid && p->uid[0] && strcmp(bp->uid, p->uid) != 0) {
			skipped++;
			LOG(b, LOG_DEBUG, "bind_pods: pod %s/%s was recreated since it was packed: not bound to node %s",
			    bp->ns, bp->name, nd->name);
			continue;
		}
		f = sched_fits_labels(p, nd->name, &nd->labels, nd->taints, nd->n_taints,
				      nd->unschedulable, detail, sizeof(detail));
		if (f == SCHED_FITS)
			f = room_fits(&room, &p->requests, detail, sizeof(detail));
		/* host ports, and the anti-affinity of pods that landed there since
		 * (the packing kept this pass's pods apart already) */
		if (f == SCHED_FITS)
			f = sched_fits_relations(s, p, ni, detail, sizeof(detail));
		if (f != SCHED_FITS) {
			skipped++;
			LOG(b, LOG_INFO, "bind_pods: pod %s/%s no longer fits node %s (%s): left to the scheduler",
			    bp->ns, bp->name, nd->name, detail[0] ? detail : sched_fit_str(f));
			continue;
		}
		room_take(&room, &p->requests);
		j->pods[j->n++] = *bp;
		bp->ns = NULL; /* moved to the job */
	}
	room_free(&room);
	if (j->n) {
		LOG(b, LOG_INFO, "bind_pods: node %s is Ready: binding %zu pod(s) of the packing launched for it (%zu of %zu skipped)",
		    nd->name, j->n, (size_t)skipped, a->n);
		if (executor_submit(b->ex, bind_task, j) < 0) {
			LOG(b, LOG_WARN, "bind_pods: node %s: the work queue is full or shutting down; %zu pod(s) left to the scheduler",
			    nd->name, j->n);
			skipped += j->n;
			bpods_free(j->pods, j->n);
			free(j);
		}
	} else {
		LOG(b, LOG_DEBUG, "bind_pods: node %s is Ready: none of the %zu pod(s) of its packing is left to bind",
		    nd->name, a->n);
		free(j->pods);
		free(j);
	}
out:
	if (skipped) {
		pthread_mutex_lock(&b->mu);
		b->st.skipped += skipped;
		pthread_mutex_unlock(&b->mu);
		count_outcome(b, "skipped", skipped);
	}
	for (i = 0; i < a->n; i++)
		if (a->pods[i].ns)
			bpod_free(&a->pods[i]);
	free(a->pods);
	free(a);
}

void binder_observe(struct binder *b, const struct snapshot *s)
{
	struct assoc **pp, *a, *ready = NULL, *dropped = NULL;
	const struct node **byid = NULL;
	struct pidx *pend = NULL;
	size_t i, n_byid = 0, n_ready = 0;
	int64_t now = clock_wall(b->clock);

	if (!b || !b->cfg.enabled)
		return;
	pthread_mutex_lock(&b->mu);
	if (!b->assocs) {
		pthread_mutex_unlock(&b->mu);
		return;
	}
	byid = calloc(s->n_nodes ? s->n_nodes : 1, sizeof(*byid));
	if (!byid) {
		pthread_mutex_unlock(&b->mu);
		return; /* next round */
	}
	for (i = 0; i < s->n_nodes; i++)
		if (s->nodes[i].provider_id[0])
			byid[n_byid++] = &s->nodes[i];
	qsort(byid, n_byid, sizeof(*byid), nidx_cmp);
	pp = &b->assocs;
	while ((a = *pp)) {
		struct node key, *kp = &key;
		const struct node **hit;
		char why[160] = "";

		key.provider_id = a->provider_id;
		hit = n_byid ? bsearch(&kp, byid, n_byid, sizeof(*byid), nidx_cmp) : NULL;
		if (hit && node_open(s, *hit, a->group, why, sizeof(why))) {
			snprintf(a->node, sizeof(a->node), "%s", (*hit)->name);
			*pp = a->next;
			a->next = ready;
			ready = a;
			n_ready++;
			b->followed -= a->n <= b->followed ? a->n : b->followed;
			continue;
		}
		if (hit)
			snprintf(a->node, sizeof(a->node), "%s", (*hit)->name);
		if ((!hit && a->node[0]) || now - a->planned >= b->cfg.max_wait_s) {
			/* its node went away, or never opened to the pods in time */
			snprintf(a->why, sizeof(a->why), "%s", why[0] ? why : a->node[0] && !hit ? "gone" : "not registered");
			*pp = a->next;
			a->next = dropped;
			dropped = a;
			b->followed -= a->n <= b->followed ? a->n : b->followed;
			b->st.skipped += a->n;
			continue;
		}
		pp = &a->next;
	}
	pthread_mutex_unlock(&b->mu);
	while (dropped) {
		a = dropped;
		dropped = a->next;
		log_at(b->log, LOG_INFO, now, "bind_pods: %s%s (instance %s) %s %llds after its launch: its %zu pod(s) are left to the scheduler",
		       a->node[0] ? "node " : "", a->node[0] ? a->node : "the node", a->provider_id,
		       a->why, (long long)(now - a->planned), a->n);
		count_outcome(b, "skipped", a->n);
		assoc_free(a);
	}
	if (n_ready) {
		size_t n_pend = 0;

		pend = calloc(s->n_pending ? s->n_pending : 1, sizeof(*pend));
		for (i = 0; pend && i < s->n_pending; i++) {
			const struct pod *p = &s->pods[s->pending[i]];

			pend[n_pend++] = (struct pidx){p->ns, p->name, s->pending[i]};
		}
		if (pend)
			qsort(pend, n_pend, sizeof(*pend), pidx_cmp);
		while (ready) {
			int32_t ni;

			a = ready;
			ready = a->next;
			ni = snapshot_find_node(s, a->node);
			if (ni < 0 || !pend) {
				/* cannot happen but on OOM: nothing is bound */
				pthread_mutex_lock(&b->mu);
				b->st.skipped += a->n;
				pthread_mutex_unlock(&b->mu);
				count_outcome(b, "skipped", a->n);
				assoc_free(a);
				continue;
			}
			bind_pass(b, s, (size_t)ni, a, pend, n_pend, now);
		}
	}
	free(pend);
	free(byid);
}
