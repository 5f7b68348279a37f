/*
 * sim/cloud_gce: the GCE flavour of the simulated cloud — GCE-style names
 * and placement for every instance (the cloud's namer), MIGs whose managed
 * instances converge to targetSize and keep a failed creation's error on
 * lastAttempt while retrying, machine types and operations.
 */
#include "sim/clouds/cloud_gce.h"

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

struct sim_gce {
	struct sim_cloud *c;
	const struct sim_gce_conf *conf;
	struct sim_managed *ms;    /* the MIGs' managed instances */
	struct sim_gce_mi **view;  /* per MIG: its managed instances as sim_gce_managed gives them */
	size_t *view_cap;
	size_t n_groups;
	uint64_t rng;
	uint32_t ip_next;
	uint64_t op_seq;
	struct sim_gce_op *ops;
	size_t n_ops, cap_ops;
};

/* Frees it once the last creation in flight is over (the members' destroy). */
static void gce_destroy(void *ud)
{
	struct sim_gce *g = ud;
	size_t i;

	for (i = 0; g->view && i < g->n_groups; i++)
		free(g->view[i]);
	free(g->view);
	free(g->view_cap);
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

static bool name_taken(struct sim_gce *g, const char *name)
{
	size_t i;

	if (sim_cloud_find_instance(g->c, name))
		return true;
	for (i = 0; i < g->n_groups; i++)
		if (sim_managed_find(g->ms, i, name))
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

static int namer(void *ud, struct sim_cloud *c, size_t gi, const struct sim_launch_spec *spec,
		 struct sim_instance *in)
{
	struct sim_gce *g = ud;
	const struct sim_gce_group *sg = &g->conf->groups[gi];
	const char *name = spec ? spec->arg : NULL;
	const char *zone = spec && spec->zone ? spec->zone : sim_managed_spread_zone(g->ms, gi);
	uint32_t n;

	(void)c;
	if (name)
		snprintf(in->id, sizeof(in->id), "%s", name);
	else
		sim_gce_new_name(g, gi, in->id, sizeof(in->id));
	if (sim_cloud_find_instance(g->c, in->id))
		return -1;
	n = sim_cloud_next_ip(&g->ip_next, 2);
	snprintf(in->private_ip, sizeof(in->private_ip), "10.128.%u.%u", (n >> 8) & 255, n & 255);
	snprintf(in->node_name, sizeof(in->node_name), "%s", in->id);
	snprintf(in->zone, sizeof(in->zone), "%s", zone);
	snprintf(in->instance_type, sizeof(in->instance_type), "%s", sg->machine_type);
	snprintf(in->provider_id, sizeof(in->provider_id), "gce://%s/%s/%s", g->conf->project, zone,
		 in->id);
	return 0;
}

/* ---- the MIGs' managed instances (sim/clouds/cloud.h's members) ---- */

static void member_name(void *ud, size_t gi, struct sim_member *m)
{
	char name[64];

	/* made apart: the member is in the group, a name in it is taken */
	sim_gce_new_name(ud, gi, name, sizeof(name));
	snprintf(m->name, sizeof(m->name), "%s", name);
}

/* A failed creation stays on lastAttempt while the MIG retries it. */
static void member_failed(void *ud, size_t gi, struct sim_member *m, enum provider_error e)
{
	struct sim_gce *g = ud;
	char where[96];

	snprintf(where, sizeof(where), "projects/%s/zones/%s", g->conf->project, m->zone);
	sim_gce_failure(e, where, m->error_code, sizeof(m->error_code), m->error_message,
			sizeof(m->error_message));
	sim_cloud_tracef(g->c, "gce: MIG %s: creating %s failed: %s", g->conf->groups[gi].mig,
			 m->name, m->error_code);
}

/* One that died otherwise (its node deleted) is replaced by a new one, as a
 * MIG recreates. */
static void member_lost(void *ud, size_t gi, const struct sim_member *m)
{
	struct sim_gce *g = ud;
	char name[64];
	struct sim_member *nm;

	sim_gce_new_name(g, gi, name, sizeof(name));
	nm = sim_managed_add(g->ms, gi, name, m->zone);
	if (nm)
		sim_managed_launch(g->ms, gi, nm);
}

/* ---- construction ---- */

struct sim_gce *sim_gce_new(struct sim_cloud *cloud, const struct sim_gce_conf *conf,
			    uint64_t seed, struct errbuf *err)
{
	static const struct sim_managed_ops mops = {member_name, member_failed, member_lost,
						    gce_destroy};
	struct sim_managed_opts mo = {conf->retry_ns > 0 ? conf->retry_ns : DEFAULT_RETRY_NS, true};
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
	g->c = cloud;
	g->conf = conf;
	g->rng = seed ^ 0x6a09e667f3bcc908ULL;
	g->ip_next = (1u << 8) | 2;
	g->op_seq = 1000000 + (seed % 1000000);
	g->n_groups = conf->n_groups;
	g->view = conf->n_groups ? calloc(conf->n_groups, sizeof(*g->view)) : NULL;
	g->view_cap = conf->n_groups ? calloc(conf->n_groups, sizeof(*g->view_cap)) : NULL;
	if (conf->n_groups && (!g->view || !g->view_cap)) {
		gce_destroy(g);
		goto oom;
	}
	g->ms = sim_managed_new(cloud, &mops, &mo, g);
	if (!g->ms) {
		gce_destroy(g);
		goto oom;
	}
	for (i = 0; i < conf->n_groups; i++)
		sim_managed_set_zones(g->ms, i, conf->groups[i].zones, conf->groups[i].n_zones);
	sim_cloud_set_namer(cloud, namer, g);
	return g;
oom:
	errbuf_set(err, "out of memory");
	return NULL;
}

void sim_gce_free(struct sim_gce *g)
{
	if (g)
		sim_managed_free(g->ms);
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
	return sim_managed_target(g->ms, i);
}

/* ---- the MIGs ---- */

static enum sim_gce_action action_of(enum sim_member_state st)
{
	switch (st) {
	case SIM_MEMBER_RUNNING: return SIM_GCE_NONE;
	case SIM_MEMBER_DELETING: return SIM_GCE_DELETING;
	default: return SIM_GCE_CREATING; /* a MIG retries a failed creation */
	}
}

const struct sim_gce_mi *sim_gce_managed(struct sim_gce *g, size_t i, size_t *n)
{
	const struct sim_member *m;
	size_t k;

	sim_managed_refresh(g->ms, i);
	m = sim_managed_members(g->ms, i, n);
	if (*n > g->view_cap[i]) {
		struct sim_gce_mi *nv = realloc(g->view[i], *n * sizeof(*nv));

		if (!nv) {
			*n = 0;
			return g->view[i];
		}
		g->view[i] = nv;
		g->view_cap[i] = *n;
	}
	for (k = 0; k < *n; k++) {
		struct sim_gce_mi *mi = &g->view[i][k];

		memset(mi, 0, sizeof(*mi));
		snprintf(mi->name, sizeof(mi->name), "%.63s", m[k].name);
		snprintf(mi->zone, sizeof(mi->zone), "%s", m[k].zone);
		mi->in = m[k].in;
		mi->action = action_of(m[k].state);
		mi->launching = m[k].launching;
		snprintf(mi->error_code, sizeof(mi->error_code), "%s", m[k].error_code);
		snprintf(mi->error_message, sizeof(mi->error_message), "%s", m[k].error_message);
	}
	return g->view[i];
}

void sim_gce_actions(struct sim_gce *g, size_t i, int *none, int *creating, int *deleting)
{
	size_t k, n;
	const struct sim_member *m;

	sim_managed_refresh(g->ms, i);
	m = sim_managed_members(g->ms, i, &n);
	*none = *creating = *deleting = 0;
	for (k = 0; k < n; k++) {
		enum sim_gce_action a = action_of(m[k].state);

		if (a == SIM_GCE_NONE)
			(*none)++;
		else if (a == SIM_GCE_CREATING)
			(*creating)++;
		else
			(*deleting)++;
	}
}

int sim_gce_resize(struct sim_gce *g, size_t i, int size, struct errbuf *err)
{
	int old = sim_managed_target(g->ms, i);

	if (size < 0 || size > MAX_TARGET)
		return errbuf_set(err, "Invalid value for field 'size': '%d'. Must be greater than or equal to 0 and at most %d.",
				  size, MAX_TARGET);
	sim_managed_refresh(g->ms, i);
	if (sim_managed_resize(g->ms, i, size, 0) < 0)
		return errbuf_set(err, "out of memory");
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
	if (sim_managed_target(g->ms, i) + (int)n > MAX_TARGET)
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
	sim_managed_refresh(g->ms, i);
	for (k = 0; k < n; k++) {
		struct sim_member *m = sim_managed_add(g->ms, i, names[k],
						       sim_managed_spread_zone(g->ms, i));

		if (!m)
			return errbuf_set(err, "out of memory");
		sim_managed_set_target(g->ms, i, sim_managed_target(g->ms, i) + 1);
		sim_managed_launch(g->ms, i, m);
	}
	sim_cloud_tracef(g->c, "gce: MIG %s createInstances %zu -> targetSize %d",
			 g->conf->groups[i].mig, n, sim_managed_target(g->ms, i));
	return 0;
}

/* MIG i's managed instance 'name' when it is not being deleted, or NULL. */
static struct sim_member *live_member(struct sim_gce *g, size_t i, const char *name)
{
	struct sim_member *m = sim_managed_find(g->ms, i, name);

	return m && m->state != SIM_MEMBER_DELETING ? m : NULL;
}

int sim_gce_delete(struct sim_gce *g, size_t i, const char *const *names, size_t n, bool skip,
		   struct errbuf *err)
{
	size_t k;
	int done = 0, target;

	sim_managed_refresh(g->ms, i);
	for (k = 0; k < n && !skip; k++)
		if (!live_member(g, i, names[k]))
			return errbuf_set(err, "The instance 'projects/%s/zones/%s/instances/%s' is not a member of the instance group manager %s",
					  g->conf->project, g->conf->groups[i].zones[0], names[k],
					  g->conf->groups[i].mig);
	for (k = 0; k < n; k++) {
		struct sim_member *m = live_member(g, i, names[k]);

		if (!m)
			continue;
		sim_managed_delete(g->ms, i, m, 0);
		target = sim_managed_target(g->ms, i);
		if (target > 0)
			sim_managed_set_target(g->ms, i, target - 1);
		done++;
	}
	sim_cloud_tracef(g->c, "gce: MIG %s deleteInstances %d -> targetSize %d",
			 g->conf->groups[i].mig, done, sim_managed_target(g->ms, i));
	return done;
}

void sim_gce_start(struct sim_gce *g)
{
	size_t i;

	sim_cloud_lock(g->c);
	for (i = 0; i < g->n_groups; i++) {
		int min = sim_cloud_group(g->c, i)->min;
		struct errbuf err;

		sim_managed_adopt(g->ms, i);
		if (sim_managed_target(g->ms, i) < min)
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
	sim_managed_op_times(g->ms, i, g->conf->operation_ns, &out->start_ns, &out->start_wall,
			     &out->done_ns);
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
