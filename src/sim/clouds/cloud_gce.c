/*
 * sim/cloud_gce: the GCE flavour of the simulated cloud — GCE-style names
 * and placement for every instance (the cloud's namer), MIGs whose managed
 * instances converge to targetSize and keep a failed creation's error on
 * lastAttempt while retrying, machine types and operations.
 */
#include "sim/clouds/cloud_gce.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/backoff.h"
#include "runtime/clock.h"

#define DEFAULT_RETRY_NS (10 * CLOCK_NS_PER_S)
#define MAX_TARGET 1000

static const struct sim_gce_mtype builtin_mtypes[] = {
	{"e2-standard-2", 2, 8192, 0, NULL},
	{"e2-standard-4", 4, 16384, 0, NULL},
	{"e2-standard-8", 8, 32768, 0, NULL},
	{"n2-standard-4", 4, 16384, 0, NULL},
	{"n1-standard-4", 4, 15360, 0, NULL},
	{"a2-highgpu-1g", 12, 87040, 1, "nvidia-tesla-a100"},
};
#define N_MTYPES (sizeof(builtin_mtypes) / sizeof(builtin_mtypes[0]))

struct mig {
	int target;
	struct sim_gce_mi *mi;
	size_t n, cap;
	bool retry_queued;
};

struct sim_gce {
	_Atomic int refs;          /* the owner + every creation in flight */
	_Atomic bool dead;
	struct sim_cloud *c;
	const struct sim_gce_conf *conf;
	struct sim_life *life;
	struct mig *m;
	size_t n_groups;
	uint64_t rng;
	uint32_t ip_next;
	uint64_t op_seq;
	struct sim_gce_op *ops;
	size_t n_ops, cap_ops;
};

/* One creation attempt, for its callbacks. */
struct attempt {
	struct sim_gce *g;
	size_t gi;
	char name[64];
};

static void gce_put(struct sim_gce *g)
{
	size_t i;

	if (atomic_fetch_sub(&g->refs, 1) != 1)
		return;
	for (i = 0; i < g->n_groups; i++)
		free(g->m[i].mi);
	free(g->m);
	free(g->ops);
	free(g);
}

const struct sim_gce_mtype *sim_gce_find_mtype(const char *name)
{
	size_t i;

	for (i = 0; name && i < N_MTYPES; i++)
		if (strcmp(builtin_mtypes[i].name, name) == 0)
			return &builtin_mtypes[i];
	return NULL;
}

const struct sim_gce_mtype *sim_gce_mtype_at(size_t i)
{
	return i < N_MTYPES ? &builtin_mtypes[i] : NULL;
}

bool sim_gce_valid_name(const char *name)
{
	size_t n = name ? strlen(name) : 0, i;

	if (n < 1 || n > 63 || name[0] < 'a' || name[0] > 'z' || name[n - 1] == '-')
		return false;
	for (i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') ||
		      name[i] == '-'))
			return false;
	return true;
}

void sim_gce_failure(enum provider_error e, const char *zone, char *code, size_t code_size,
		     char *msg, size_t msg_size)
{
	switch (e) {
	case PROVIDER_QUOTA:
	case PROVIDER_INVALID: /* above the simulated group's max: a quota, as GCE has no max */
		snprintf(code, code_size, "QUOTA_EXCEEDED");
		snprintf(msg, msg_size, "Instance could not be created: Quota 'CPUS' exceeded.  Limit: 24.0 in region %s.",
			 zone);
		break;
	case PROVIDER_NO_CAPACITY:
		snprintf(code, code_size, "ZONE_RESOURCE_POOL_EXHAUSTED");
		snprintf(msg, msg_size, "The zone '%s' does not have enough resources available to fulfill the request.  Try a different zone, or try again later.",
			 zone);
		break;
	case PROVIDER_THROTTLED:
		snprintf(code, code_size, "RATE_LIMIT_EXCEEDED");
		snprintf(msg, msg_size, "Rate Limit Exceeded");
		break;
	default:
		snprintf(code, code_size, "INTERNAL_ERROR");
		snprintf(msg, msg_size, "Internal error. Please try again or contact Google Support.");
		break;
	}
}

/* ---- names ---- */

static bool name_taken(const struct sim_gce *g, const char *name)
{
	size_t i, k;

	if (sim_cloud_find_instance(g->c, name))
		return true;
	for (i = 0; i < g->n_groups; i++)
		for (k = 0; k < g->m[i].n; k++)
			if (strcmp(g->m[i].mi[k].name, name) == 0)
				return true;
	return false;
}

void sim_gce_new_name(struct sim_gce *g, size_t i, char *out, size_t size)
{
	static const char alnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	char suffix[5];
	int k;

	do {
		uint64_t r = backoff_rand(&g->rng);

		for (k = 0; k < 4; k++) {
			suffix[k] = alnum[r % 36];
			r /= 36;
		}
		suffix[4] = '\0';
		snprintf(out, size, "%.58s-%s", g->conf->groups[i].base_name, suffix);
	} while (name_taken(g, out));
}

/* The group's zone with the fewest managed instances (the first on a tie). */
static const char *spread_zone(const struct sim_gce *g, size_t gi)
{
	const struct sim_gce_group *sg = &g->conf->groups[gi];
	const struct mig *m = &g->m[gi];
	size_t z, k, best = 0;
	int best_n = -1;

	for (z = 0; z < sg->n_zones; z++) {
		int count = 0;

		for (k = 0; k < m->n; k++)
			if (m->mi[k].action != SIM_GCE_DELETING &&
			    strcmp(m->mi[k].zone, sg->zones[z]) == 0)
				count++;
		if (best_n < 0 || count < best_n) {
			best_n = count;
			best = z;
		}
	}
	return sg->zones[best];
}

static struct sim_gce_mi *mi_add(struct sim_gce *g, size_t gi, const char *name, const char *zone)
{
	struct mig *m = &g->m[gi];
	struct sim_gce_mi *mi;

	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 16;
		struct sim_gce_mi *nm = realloc(m->mi, cap * sizeof(*nm));

		if (!nm)
			return NULL;
		m->mi = nm;
		m->cap = cap;
	}
	mi = &m->mi[m->n++];
	memset(mi, 0, sizeof(*mi));
	snprintf(mi->name, sizeof(mi->name), "%.63s", name);
	snprintf(mi->zone, sizeof(mi->zone), "%.31s", zone);
	mi->action = SIM_GCE_CREATING;
	return mi;
}

static struct sim_gce_mi *mi_find(struct sim_gce *g, size_t gi, const char *name)
{
	size_t k;

	for (k = 0; k < g->m[gi].n; k++)
		if (strcmp(g->m[gi].mi[k].name, name) == 0)
			return &g->m[gi].mi[k];
	return NULL;
}

static void mi_remove(struct sim_gce *g, size_t gi, size_t k)
{
	struct mig *m = &g->m[gi];

	memmove(&m->mi[k], &m->mi[k + 1], (m->n - k - 1) * sizeof(*m->mi));
	m->n--;
}

static int namer(void *ud, struct sim_cloud *c, size_t gi, const struct sim_launch_spec *spec,
		 struct sim_instance *in)
{
	struct sim_gce *g = ud;
	const struct sim_gce_group *sg = &g->conf->groups[gi];
	const char *name = spec ? spec->arg : NULL;
	const char *zone = spec && spec->zone ? spec->zone : spread_zone(g, gi);
	uint32_t n;

	(void)c;
	if (name)
		snprintf(in->id, sizeof(in->id), "%s", name);
	else
		sim_gce_new_name(g, gi, in->id, sizeof(in->id));
	if (sim_cloud_find_instance(g->c, in->id))
		return -1;
	do {
		n = g->ip_next++;
	} while ((n & 255) < 2 || (n & 255) == 255);
	snprintf(in->private_ip, sizeof(in->private_ip), "10.128.%u.%u", (n >> 8) & 255, n & 255);
	snprintf(in->node_name, sizeof(in->node_name), "%s", in->id);
	snprintf(in->zone, sizeof(in->zone), "%s", zone);
	snprintf(in->instance_type, sizeof(in->instance_type), "%s", sg->machine_type);
	snprintf(in->provider_id, sizeof(in->provider_id), "gce://%s/%s/%s", g->conf->project, zone,
		 in->id);
	return 0;
}

/* ---- construction ---- */

struct sim_gce *sim_gce_new(struct sim_cloud *cloud, const struct sim_gce_conf *conf,
			    uint64_t seed, struct errbuf *err)
{
	struct sim_gce *g;
	size_t i;

	if (conf->n_groups != sim_cloud_n_groups(cloud)) {
		errbuf_set(err, "gce: %zu GCE groups for %zu node groups", conf->n_groups,
			   sim_cloud_n_groups(cloud));
		return NULL;
	}
	for (i = 0; i < conf->n_groups; i++) {
		const struct sim_gce_group *sg = &conf->groups[i];

		if (!sg->n_zones || !sg->mig || !sg->base_name || !sg->machine_type) {
			errbuf_set(err, "gce: node group %s needs a zone, a MIG and a machine type",
				   sim_cloud_group(cloud, i)->name);
			return NULL;
		}
		if (!sim_gce_find_mtype(sg->machine_type)) {
			errbuf_set(err, "gce: node group %s: unknown machine type \"%s\"",
				   sim_cloud_group(cloud, i)->name, sg->machine_type);
			return NULL;
		}
		if (!sim_gce_valid_name(sg->mig) || strlen(sg->base_name) > 58 ||
		    !sim_gce_valid_name(sg->base_name)) {
			errbuf_set(err, "gce: node group %s: MIG \"%s\" and baseInstanceName \"%s\" must be RFC 1035 names (the base at most 58 characters)",
				   sim_cloud_group(cloud, i)->name, sg->mig, sg->base_name);
			return NULL;
		}
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		goto oom;
	atomic_init(&g->refs, 1);
	atomic_init(&g->dead, false);
	g->c = cloud;
	g->conf = conf;
	g->rng = seed ^ 0x6a09e667f3bcc908ULL;
	g->ip_next = (1u << 8) | 2;
	g->op_seq = 1000000 + (seed % 1000000);
	g->m = conf->n_groups ? calloc(conf->n_groups, sizeof(*g->m)) : NULL;
	g->life = sim_life_new(g);
	if ((conf->n_groups && !g->m) || !g->life) {
		sim_life_end(g->life);
		g->life = NULL;
		gce_put(g);
		goto oom;
	}
	g->n_groups = conf->n_groups;
	sim_cloud_set_namer(cloud, namer, g);
	return g;
oom:
	errbuf_set(err, "out of memory");
	return NULL;
}

void sim_gce_free(struct sim_gce *g)
{
	if (!g)
		return;
	atomic_store(&g->dead, true);
	sim_life_end(g->life);
	gce_put(g);
}

const struct sim_gce_conf *sim_gce_conf(const struct sim_gce *g)
{
	return g->conf;
}

struct sim_cloud *sim_gce_cloud(const struct sim_gce *g)
{
	return g->c;
}

const struct sim_gce_group *sim_gce_group(const struct sim_gce *g, size_t i)
{
	return &g->conf->groups[i];
}

int sim_gce_find_mig(const struct sim_gce *g, const char *where, bool regional, const char *mig)
{
	size_t i;

	for (i = 0; where && mig && i < g->n_groups; i++) {
		const struct sim_gce_group *sg = &g->conf->groups[i];

		if (sg->regional != regional || strcmp(sg->mig, mig) != 0)
			continue;
		if (strcmp(regional ? sg->region : sg->zones[0], where) == 0)
			return (int)i;
	}
	return -1;
}

int sim_gce_find_template(const struct sim_gce *g, const char *name)
{
	size_t i;

	for (i = 0; name && i < g->n_groups; i++)
		if (strcmp(g->conf->groups[i].template_name, name) == 0)
			return (int)i;
	for (i = 0; name && i < g->n_groups; i++) {
		char t[256];

		sim_gce_template_of(g, i, NULL, t, sizeof(t));
		if (strcmp(t, name) == 0)
			return (int)i;
	}
	return -1;
}

void sim_gce_template_of(const struct sim_gce *g, size_t i, const char *image, char *out, size_t len)
{
	const char *t = g->conf->groups[i].template_name;

	if (!image || !image[0])
		image = sim_cloud_group_image(g->c, i);
	if (strcmp(image, SIM_IMAGE_DEFAULT) == 0)
		snprintf(out, len, "%s", t);
	else
		snprintf(out, len, "%s-%s", t, image);
}

int sim_gce_target_size(const struct sim_gce *g, size_t i)
{
	return g->m[i].target;
}

/* ---- creation ---- */

static void launch_mi(struct sim_gce *g, size_t gi, struct sim_gce_mi *mi);

static void retry_fn(void *owner, void *data, uint64_t id, bool alive)
{
	struct sim_gce *g = owner;
	size_t gi = (size_t)id, k;

	(void)data;
	if (!alive)
		return;
	sim_cloud_lock(g->c);
	g->m[gi].retry_queued = false;
	for (k = 0; k < g->m[gi].n; k++) {
		struct sim_gce_mi *mi = &g->m[gi].mi[k];

		if (mi->action == SIM_GCE_CREATING && !mi->in && !mi->launching)
			launch_mi(g, gi, mi);
	}
	sim_cloud_unlock(g->c);
}

static void attempt_instance(void *ctx, const struct sim_instance *copy)
{
	struct attempt *a = ctx;
	struct sim_gce *g = a->g;
	struct sim_gce_mi *mi;

	if (atomic_load(&g->dead))
		return;
	sim_cloud_lock(g->c);
	mi = mi_find(g, a->gi, a->name);
	if (mi) {
		mi->in = sim_cloud_find_instance(g->c, copy->id);
		mi->error_code[0] = '\0';
		mi->error_message[0] = '\0';
	} else {
		/* deleted while being created: it goes at once */
		struct sim_instance *in = sim_cloud_find_instance(g->c, copy->id);

		if (in)
			sim_cloud_terminate_instance(g->c, in);
	}
	sim_cloud_unlock(g->c);
}

static void attempt_done(void *ctx, int count, const struct provider_status *st)
{
	struct attempt *a = ctx;
	struct sim_gce *g = a->g;
	struct sim_gce_mi *mi;

	if (atomic_load(&g->dead) || !st || st->code == PROVIDER_CANCELLED) {
		free(a);
		gce_put(g);
		return;
	}
	sim_cloud_lock(g->c);
	mi = mi_find(g, a->gi, a->name);
	if (mi)
		mi->launching = false;
	if (mi && count < 1) {
		char where[96];

		snprintf(where, sizeof(where), "projects/%s/zones/%s", g->conf->project, mi->zone);
		sim_gce_failure(st->code, where, mi->error_code, sizeof(mi->error_code),
				mi->error_message, sizeof(mi->error_message));
		sim_cloud_tracef(g->c, "gce: MIG %s: creating %s failed: %s",
				 g->conf->groups[a->gi].mig, mi->name, mi->error_code);
		if (!g->m[a->gi].retry_queued &&
		    sim_after(sim_cloud_executor(g->c), g->life,
			      g->conf->retry_ns > 0 ? g->conf->retry_ns : DEFAULT_RETRY_NS, retry_fn,
			      NULL, a->gi) == 0)
			g->m[a->gi].retry_queued = true;
	}
	sim_cloud_unlock(g->c);
	free(a);
	gce_put(g);
}

static void launch_mi(struct sim_gce *g, size_t gi, struct sim_gce_mi *mi)
{
	struct attempt *a = calloc(1, sizeof(*a));
	struct sim_launch_spec spec;

	if (!a)
		return;
	a->g = g;
	a->gi = gi;
	snprintf(a->name, sizeof(a->name), "%s", mi->name);
	memset(&spec, 0, sizeof(spec));
	spec.zone = mi->zone;
	spec.admitted = true;
	spec.arg = a->name;
	atomic_fetch_add(&g->refs, 1);
	mi->launching = true;
	if (sim_cloud_launch_spec(g->c, sim_cloud_group(g->c, gi)->name, 1, &spec, attempt_instance,
				  attempt_done, a) < 0) {
		mi->launching = false;
		atomic_fetch_sub(&g->refs, 1);
		free(a);
	}
}

/* Brings the records up to date with their instances: DELETING ones whose
 * machine is gone leave; one that died otherwise (its node deleted) is
 * replaced by a new one, as a MIG recreates; actions follow the states. */
static void refresh(struct sim_gce *g, size_t gi)
{
	struct mig *m = &g->m[gi];
	size_t k = 0;

	while (k < m->n) {
		struct sim_gce_mi *mi = &m->mi[k];

		if (mi->in && mi->in->state == INSTANCE_GONE && mi->action == SIM_GCE_DELETING) {
			mi_remove(g, gi, k);
			continue;
		}
		if (mi->in && mi->action != SIM_GCE_DELETING &&
		    (mi->in->state == INSTANCE_STOPPING || mi->in->state == INSTANCE_GONE)) {
			char name[64], zone[32];
			struct sim_gce_mi *nm;

			snprintf(zone, sizeof(zone), "%s", mi->zone);
			mi_remove(g, gi, k);
			sim_gce_new_name(g, gi, name, sizeof(name));
			nm = mi_add(g, gi, name, zone);
			if (nm)
				launch_mi(g, gi, nm);
			continue;
		}
		if (mi->in && mi->action == SIM_GCE_CREATING && mi->in->state == INSTANCE_RUNNING)
			mi->action = SIM_GCE_NONE;
		k++;
	}
}

const struct sim_gce_mi *sim_gce_managed(struct sim_gce *g, size_t i, size_t *n)
{
	refresh(g, i);
	*n = g->m[i].n;
	return g->m[i].mi;
}

void sim_gce_actions(struct sim_gce *g, size_t i, int *none, int *creating, int *deleting)
{
	size_t k, n;
	const struct sim_gce_mi *mi = sim_gce_managed(g, i, &n);

	*none = *creating = *deleting = 0;
	for (k = 0; k < n; k++) {
		if (mi[k].action == SIM_GCE_NONE)
			(*none)++;
		else if (mi[k].action == SIM_GCE_CREATING)
			(*creating)++;
		else
			(*deleting)++;
	}
}

/* Takes managed instance k of MIG gi out: its machine stops. */
static void mi_delete(struct sim_gce *g, size_t gi, size_t k)
{
	struct sim_gce_mi *mi = &g->m[gi].mi[k];

	if (!mi->in) {
		/* never made (or still being made: attempt_instance stops it) */
		mi_remove(g, gi, k);
		return;
	}
	mi->action = SIM_GCE_DELETING;
	sim_cloud_terminate_instance(g->c, mi->in);
}

/* Live (not deleting) managed instances of MIG gi. */
static int live_count(const struct sim_gce *g, size_t gi)
{
	size_t k;
	int n = 0;

	for (k = 0; k < g->m[gi].n; k++)
		if (g->m[gi].mi[k].action != SIM_GCE_DELETING)
			n++;
	return n;
}

int sim_gce_resize(struct sim_gce *g, size_t i, int size, struct errbuf *err)
{
	int live, old = g->m[i].target;

	if (size < 0 || size > MAX_TARGET)
		return errbuf_set(err, "Invalid value for field 'size': '%d'. Must be greater than or equal to 0 and at most %d.",
				  size, MAX_TARGET);
	refresh(g, i);
	g->m[i].target = size;
	live = live_count(g, i);
	while (live < size) {
		char name[64];
		struct sim_gce_mi *mi;

		sim_gce_new_name(g, i, name, sizeof(name));
		mi = mi_add(g, i, name, spread_zone(g, i));
		if (!mi)
			return errbuf_set(err, "out of memory");
		launch_mi(g, i, mi);
		live++;
	}
	while (live > size) {
		size_t k = g->m[i].n;

		while (k > 0 && g->m[i].mi[k - 1].action == SIM_GCE_DELETING)
			k--;
		if (k == 0)
			break;
		mi_delete(g, i, k - 1);
		live--;
	}
	sim_cloud_tracef(g->c, "gce: MIG %s targetSize %d -> %d", g->conf->groups[i].mig, old, size);
	return 0;
}

int sim_gce_create(struct sim_gce *g, size_t i, const char *const *names, size_t n,
		   struct errbuf *err)
{
	size_t k, j;

	if (n == 0 || n > MAX_TARGET)
		return errbuf_set(err, "Invalid value for field 'resource.instances': %zu instances. Must be between 1 and %d.",
				  n, MAX_TARGET);
	if (g->m[i].target + (int)n > MAX_TARGET)
		return errbuf_set(err, "Invalid value for field 'resource.instances': the target size would exceed %d.",
				  MAX_TARGET);
	for (k = 0; k < n; k++) {
		if (!sim_gce_valid_name(names[k]))
			return errbuf_set(err, "Invalid value for field 'resource.instances[%zu].name': '%s'. Must be a match of regex '[a-z]([-a-z0-9]*[a-z0-9])?'",
					  k, names[k] ? names[k] : "");
		if (name_taken(g, names[k]))
			return errbuf_set(err, "The resource 'projects/%s/zones/%s/instances/%s' already exists",
					  g->conf->project, g->conf->groups[i].zones[0], names[k]);
		for (j = 0; j < k; j++)
			if (strcmp(names[j], names[k]) == 0)
				return errbuf_set(err, "Invalid value for field 'resource.instances[%zu].name': '%s'. Duplicate instance name.",
						  k, names[k]);
	}
	refresh(g, i);
	for (k = 0; k < n; k++) {
		struct sim_gce_mi *mi = mi_add(g, i, names[k], spread_zone(g, i));

		if (!mi)
			return errbuf_set(err, "out of memory");
		g->m[i].target++;
		launch_mi(g, i, mi);
	}
	sim_cloud_tracef(g->c, "gce: MIG %s createInstances %zu -> targetSize %d",
			 g->conf->groups[i].mig, n, g->m[i].target);
	return 0;
}

int sim_gce_delete(struct sim_gce *g, size_t i, const char *const *names, size_t n, bool skip,
		   struct errbuf *err)
{
	size_t k, j;
	int done = 0;

	refresh(g, i);
	for (k = 0; k < n && !skip; k++) {
		struct sim_gce_mi *mi = mi_find(g, i, names[k]);

		if (!mi || mi->action == SIM_GCE_DELETING)
			return errbuf_set(err, "The instance 'projects/%s/zones/%s/instances/%s' is not a member of the instance group manager %s",
					  g->conf->project, g->conf->groups[i].zones[0], names[k],
					  g->conf->groups[i].mig);
	}
	for (k = 0; k < n; k++) {
		for (j = 0; j < g->m[i].n; j++)
			if (strcmp(g->m[i].mi[j].name, names[k]) == 0 &&
			    g->m[i].mi[j].action != SIM_GCE_DELETING)
				break;
		if (j == g->m[i].n)
			continue;
		mi_delete(g, i, j);
		if (g->m[i].target > 0)
			g->m[i].target--;
		done++;
	}
	sim_cloud_tracef(g->c, "gce: MIG %s deleteInstances %d -> targetSize %d",
			 g->conf->groups[i].mig, done, g->m[i].target);
	return done;
}

void sim_gce_start(struct sim_gce *g)
{
	size_t i, k, n;

	sim_cloud_lock(g->c);
	for (i = 0; i < g->n_groups; i++) {
		struct sim_instance *const *inst = sim_cloud_instances(g->c, i, &n);
		int min = sim_cloud_group(g->c, i)->min;
		struct errbuf err;

		for (k = 0; k < n; k++) {
			struct sim_gce_mi *mi = mi_add(g, i, inst[k]->id, inst[k]->zone);

			if (!mi)
				break;
			mi->in = inst[k];
			mi->action = inst[k]->state == INSTANCE_RUNNING ? SIM_GCE_NONE
								       : SIM_GCE_CREATING;
		}
		g->m[i].target = (int)g->m[i].n;
		if (g->m[i].target < min)
			sim_gce_resize(g, i, min, &err);
	}
	sim_cloud_unlock(g->c);
}

/* ---- operations ---- */

#define REQUEST_ID_WINDOW_NS (60 * 60 * CLOCK_NS_PER_S)

void sim_gce_op_new(struct sim_gce *g, size_t i, const char *kind, const char *request_id,
		    struct sim_gce_op *out, bool *dup)
{
	struct sim_gce_op *op;
	int64_t delay;
	size_t k;

	*dup = false;
	for (k = 0; request_id && request_id[0] && k < g->n_ops; k++) {
		/* GCE keeps a requestId for at least 60 minutes */
		if (g->ops[k].group == i && strcmp(g->ops[k].request_id, request_id) == 0 &&
		    sim_cloud_now(g->c) - g->ops[k].start_ns < REQUEST_ID_WINDOW_NS) {
			*out = g->ops[k];
			*dup = true;
			return;
		}
	}
	memset(out, 0, sizeof(*out));
	out->group = i;
	snprintf(out->kind, sizeof(out->kind), "%s", kind);
	snprintf(out->request_id, sizeof(out->request_id), "%s", request_id ? request_id : "");
	out->start_ns = sim_cloud_now(g->c);
	out->start_wall = clock_wall(executor_clock(sim_cloud_executor(g->c)));
	delay = sim_cloud_call_delay(g->c, sim_cloud_group(g->c, i)->name);
	out->done_ns = out->start_ns + (delay >= 0 ? delay : g->conf->operation_ns);
	g->op_seq++;
	snprintf(out->id, sizeof(out->id), "%llu",
		 (unsigned long long)(4000000000000000000ULL + g->op_seq));
	snprintf(out->name, sizeof(out->name), "operation-%lld-%012llx",
		 (long long)out->start_wall * 1000,
		 (unsigned long long)(backoff_rand(&g->rng) & 0xffffffffffffULL));
	if (g->n_ops == g->cap_ops) {
		size_t cap = g->cap_ops ? g->cap_ops * 2 : 64;
		struct sim_gce_op *no = realloc(g->ops, cap * sizeof(*no));

		if (!no)
			return; /* served once, not found later */
		g->ops = no;
		g->cap_ops = cap;
	}
	op = &g->ops[g->n_ops++];
	*op = *out;
}

bool sim_gce_op_get(struct sim_gce *g, const char *name, struct sim_gce_op *out)
{
	size_t k;

	for (k = 0; name && k < g->n_ops; k++) {
		if (strcmp(g->ops[k].name, name) == 0) {
			*out = g->ops[k];
			return true;
		}
	}
	return false;
}

enum sim_gce_op_status sim_gce_op_status(const struct sim_gce *g, const struct sim_gce_op *op)
{
	return sim_cloud_now(g->c) >= op->done_ns ? SIM_GCE_DONE : SIM_GCE_RUNNING;
}
