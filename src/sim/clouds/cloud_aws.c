/*
 * sim/cloud_aws: the AWS flavour of the simulated cloud — EC2-style names
 * and placement for every instance (the cloud's namer), ASGs converging to
 * their desired capacity with scaling activities as AWS words them, and the
 * instance types and launch templates the AWS face describes.
 */
#include "sim/clouds/cloud_aws.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/backoff.h"
#include "runtime/clock.h"

#define DEFAULT_RETRY_NS (10 * CLOCK_NS_PER_S)
#define MAX_LT_VERSIONS 10000 /* EC2's quota per launch template */

/* The instance types every AWS scenario knows (vCPUs, MiB, GPUs as EC2 says). */
static const struct sim_aws_type builtin_types[] = {
	{"t3.medium", 2, 4096, 0, NULL, NULL, 0, "x86_64"},
	{"m5.large", 2, 8192, 0, NULL, NULL, 0, "x86_64"},
	{"m5.xlarge", 4, 16384, 0, NULL, NULL, 0, "x86_64"},
	{"m5.2xlarge", 8, 32768, 0, NULL, NULL, 0, "x86_64"},
	{"m5.4xlarge", 16, 65536, 0, NULL, NULL, 0, "x86_64"},
	{"c5.xlarge", 4, 8192, 0, NULL, NULL, 0, "x86_64"},
	{"c5.2xlarge", 8, 16384, 0, NULL, NULL, 0, "x86_64"},
	{"r5.large", 2, 16384, 0, NULL, NULL, 0, "x86_64"},
	{"r5.xlarge", 4, 32768, 0, NULL, NULL, 0, "x86_64"},
	{"m6g.large", 2, 8192, 0, NULL, NULL, 0, "arm64"},
	{"g4dn.xlarge", 4, 16384, 1, "T4", "NVIDIA", 16384, "x86_64"},
	{"p3.2xlarge", 8, 62464, 1, "V100", "NVIDIA", 16384, "x86_64"},
};
#define N_BUILTIN (sizeof(builtin_types) / sizeof(builtin_types[0]))

/* What the flavour keeps about one instance (sim_instance.flavour). */
struct meta {
	size_t version;           /* the launch template version it was launched from */
	char fleet[64];
	struct sim_aws_tag *tags; /* keys and values owned */
	size_t n_tags;
};

struct asg {
	int desired;               /* -1: a fleet group */
	int inflight;              /* instances asked for by launches not over yet */
	bool retry_queued;
	char lt_id[24];
	struct sim_aws_lt_version *versions; /* version k is versions[k - 1] */
	size_t n_versions, default_version;
	struct sim_aws_activity *acts;
	size_t n_acts, cap_acts;
};

struct sim_aws {
	_Atomic int refs;          /* the owner + every launch in flight */
	_Atomic bool dead;
	struct sim_cloud *c;
	const struct sim_aws_conf *conf;
	struct sim_life *life;     /* retry events */
	struct asg *g;
	size_t n_groups;
	struct sim_aws_type *types;/* built-in, then the scenario's */
	size_t n_types;
	uint64_t rng;
	uint32_t ip_next;
	struct meta **metas;
	size_t n_metas, cap_metas;
	struct sim_sqs *sqs;       /* the account's queues */
};

/* A launch of an ASG, for its callbacks. */
struct asg_launch {
	struct sim_aws *a;
	size_t gi;
	int n;
	char cause[400];
};

static void aws_put(struct sim_aws *a)
{
	size_t i, k;

	if (atomic_fetch_sub(&a->refs, 1) != 1)
		return;
	for (i = 0; i < a->n_metas; i++) {
		for (k = 0; k < a->metas[i]->n_tags; k++) {
			free((char *)a->metas[i]->tags[k].key);
			free((char *)a->metas[i]->tags[k].value);
		}
		free(a->metas[i]->tags);
		free(a->metas[i]);
	}
	free(a->metas);
	sim_sqs_free(a->sqs);
	for (i = 0; i < a->n_groups; i++) {
		free(a->g[i].acts);
		free(a->g[i].versions);
	}
	free(a->g);
	free(a->types);
	free(a);
}

static uint64_t next_rand(struct sim_aws *a)
{
	return backoff_rand(&a->rng);
}

void sim_aws_uuid(struct sim_aws *a, char out[37])
{
	uint64_t x = next_rand(a), y = next_rand(a);

	snprintf(out, 37, "%08llx-%04llx-4%03llx-%04llx-%012llx",
		 (unsigned long long)(x >> 32), (unsigned long long)((x >> 16) & 0xffff),
		 (unsigned long long)(x & 0xfff), (unsigned long long)(0x8000 | ((y >> 48) & 0x3fff)),
		 (unsigned long long)(y & 0xffffffffffffULL));
}

void sim_aws_new_fleet_id(struct sim_aws *a, char *out, size_t size)
{
	char u[37];

	sim_aws_uuid(a, u);
	snprintf(out, size, "fleet-%s", u);
}

static uint64_t fnv(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

void sim_aws_subnet(const char *zone, char *out, size_t size)
{
	snprintf(out, size, "subnet-0%016llx", (unsigned long long)fnv(zone));
}

const char *sim_aws_subnet_zone(const struct sim_aws *a, size_t i, const char *subnet)
{
	const struct sim_aws_group *g = &a->conf->groups[i];
	char s[40];
	size_t k;

	for (k = 0; subnet && k < g->n_zones; k++) {
		sim_aws_subnet(g->zones[k], s, sizeof(s));
		if (strcmp(s, subnet) == 0)
			return g->zones[k];
	}
	return NULL;
}

static int64_t wall_now(const struct sim_aws *a)
{
	return clock_wall(executor_clock(sim_cloud_executor(a->c)));
}

static void iso_time(int64_t wall, char *out, size_t size)
{
	time_t t = (time_t)wall;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ---- the namer ---- */

static bool group_has_zone(const struct sim_aws_group *g, const char *zone)
{
	size_t k;

	for (k = 0; k < g->n_zones; k++)
		if (strcmp(g->zones[k], zone) == 0)
			return true;
	return false;
}

/* The group's zone with the fewest pending or running instances (the first on a tie). */
static const char *spread_zone(struct sim_aws *a, size_t gi)
{
	const struct sim_aws_group *g = &a->conf->groups[gi];
	struct sim_instance *const *inst;
	size_t n, k, z, best = 0;
	int best_n = -1;

	inst = sim_cloud_instances(a->c, gi, &n);
	for (z = 0; z < g->n_zones; z++) {
		int count = 0;

		for (k = 0; k < n; k++)
			if ((inst[k]->state == INSTANCE_PENDING || inst[k]->state == INSTANCE_RUNNING) &&
			    strcmp(inst[k]->zone, g->zones[z]) == 0)
				count++;
		if (best_n < 0 || count < best_n) {
			best_n = count;
			best = z;
		}
	}
	return g->zones[best];
}

/* A new meta, kept for freeing with the flavour, or NULL. */
static struct meta *meta_new(struct sim_aws *a)
{
	struct meta *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	if (a->n_metas == a->cap_metas) {
		size_t cap = a->cap_metas ? a->cap_metas * 2 : 64;
		struct meta **nm = realloc(a->metas, cap * sizeof(*nm));

		if (!nm) {
			free(m);
			return NULL;
		}
		a->metas = nm;
		a->cap_metas = cap;
	}
	a->metas[a->n_metas++] = m;
	return m;
}

/* What instance 'in' of group gi keeps: the launch template version it
 * comes from (the fleet request's, else the default) and that version's
 * image, and a fleet launch's id and tags. 0, or -1. */
static int instance_meta(struct sim_aws *a, size_t gi, const struct sim_aws_launch *l,
			 struct sim_instance *in)
{
	const struct asg *s = &a->g[gi];
	struct meta *m = meta_new(a);
	size_t i;

	if (!m)
		return -1;
	in->flavour = m;
	m->version = l && l->version ? l->version : s->default_version;
	if (m->version >= 1 && m->version <= s->n_versions)
		snprintf(in->image, sizeof(in->image), "%s", s->versions[m->version - 1].image);
	if (!l)
		return 0;
	snprintf(m->fleet, sizeof(m->fleet), "%s", l->fleet_id ? l->fleet_id : "");
	m->tags = l->n_tags ? calloc(l->n_tags, sizeof(*m->tags)) : NULL;
	if (l->n_tags && !m->tags)
		return -1;
	for (i = 0; i < l->n_tags; i++) {
		m->tags[i].key = strdup(l->tags[i].key);
		m->tags[i].value = strdup(l->tags[i].value ? l->tags[i].value : "");
		m->n_tags = i + 1;
		if (!m->tags[i].key || !m->tags[i].value)
			return -1;
	}
	return 0;
}

static int namer(void *ud, struct sim_cloud *c, size_t gi, const struct sim_launch_spec *spec,
		 struct sim_instance *in)
{
	struct sim_aws *a = ud;
	const struct sim_aws_group *g = &a->conf->groups[gi];
	const struct sim_aws_launch *l = spec ? spec->arg : NULL;
	const char *zone = spec && spec->zone ? spec->zone : spread_zone(a, gi);
	const char *type = spec && spec->instance_type ? spec->instance_type : g->types[0];
	uint32_t n;
	char dash[16];
	size_t i;

	if (!group_has_zone(g, zone) || !sim_aws_find_type(a, type))
		return -1;
	do {
		snprintf(in->id, sizeof(in->id), "i-0%016llx", (unsigned long long)next_rand(a));
	} while (sim_cloud_find_instance(c, in->id));
	/* 10.0.1.2 on: skip .0, .1 and .255 as a VPC subnet does */
	n = sim_cloud_next_ip(&a->ip_next, 2);
	snprintf(in->private_ip, sizeof(in->private_ip), "10.%u.%u.%u", (n >> 16) & 255,
		 (n >> 8) & 255, n & 255);
	snprintf(dash, sizeof(dash), "%s", in->private_ip);
	for (i = 0; dash[i]; i++)
		if (dash[i] == '.')
			dash[i] = '-';
	snprintf(in->node_name, sizeof(in->node_name), "ip-%s.%s.compute.internal", dash,
		 a->conf->region);
	snprintf(in->zone, sizeof(in->zone), "%s", zone);
	snprintf(in->instance_type, sizeof(in->instance_type), "%s", type);
	snprintf(in->provider_id, sizeof(in->provider_id), "aws:///%s/%s", zone, in->id);
	/* a group of several types makes nodes of each type's size (its
	 * vCPUs and memory, all allocatable); a group of one type keeps
	 * the scenario template's */
	if (g->n_types > 1) {
		const struct sim_aws_type *t = sim_aws_find_type(a, type);

		in->cpu_m = (int64_t)t->vcpus * 1000;
		in->memory = t->memory_mib * 1024 * 1024;
	}
	return instance_meta(a, gi, l, in);
}

const struct sim_aws_tag *sim_aws_instance_tags(const struct sim_instance *in, size_t *n)
{
	const struct meta *m = in->flavour;

	*n = m ? m->n_tags : 0;
	return m ? m->tags : NULL;
}

const char *sim_aws_instance_fleet(const struct sim_instance *in)
{
	const struct meta *m = in->flavour;

	return m && m->fleet[0] ? m->fleet : NULL;
}

size_t sim_aws_instance_version(const struct sim_instance *in)
{
	const struct meta *m = in->flavour;

	return m ? m->version : 0;
}

/* ---- launch template versions ---- */

const struct sim_aws_lt_version *sim_aws_lt_versions(const struct sim_aws *a, size_t i, size_t *n,
						     size_t *dflt)
{
	*n = a->g[i].n_versions;
	*dflt = a->g[i].default_version;
	return a->g[i].versions;
}

size_t sim_aws_lt_version_find(const struct sim_aws *a, size_t i, const char *version)
{
	const struct asg *s = &a->g[i];
	char *end;
	unsigned long long v;

	if (!version || !*version || !strcmp(version, "$Default"))
		return s->default_version;
	if (!strcmp(version, "$Latest"))
		return s->n_versions;
	if (*version < '1' || *version > '9')
		return 0;
	v = strtoull(version, &end, 10);
	return *end || v > s->n_versions ? 0 : (size_t)v;
}

size_t sim_aws_lt_version_by_token(const struct sim_aws *a, size_t i, const char *token)
{
	size_t k;

	for (k = 0; token && *token && k < a->g[i].n_versions; k++)
		if (!strcmp(a->g[i].versions[k].token, token))
			return k + 1;
	return 0;
}

int sim_aws_lt_version_create(struct sim_aws *a, size_t i, size_t source, const char *image,
			      const char *description, const char *token, size_t *number,
			      struct errbuf *err)
{
	struct asg *s = &a->g[i];
	struct sim_aws_lt_version *nv, *v;

	if (s->n_versions >= MAX_LT_VERSIONS)
		return errbuf_set(err, "Launch template %s has %d versions, as many as it may hold.",
				  s->lt_id, MAX_LT_VERSIONS);
	nv = realloc(s->versions, (s->n_versions + 1) * sizeof(*nv));
	if (!nv)
		return errbuf_set(err, "out of memory");
	s->versions = nv;
	v = &nv[s->n_versions];
	memset(v, 0, sizeof(*v));
	if (source >= 1 && source <= s->n_versions)
		*v = nv[source - 1];
	if (image)
		snprintf(v->image, sizeof(v->image), "%s", image);
	snprintf(v->description, sizeof(v->description), "%s", description ? description : "");
	snprintf(v->token, sizeof(v->token), "%s", token ? token : "");
	v->created_wall = wall_now(a);
	*number = ++s->n_versions;
	sim_cloud_tracef(a->c, "aws: launch template %s: version %zu (image %s)", s->lt_id, *number,
			 v->image[0] ? v->image : "none");
	return 0;
}

void sim_aws_lt_set_default(struct sim_aws *a, size_t i, size_t number)
{
	struct asg *s = &a->g[i];
	struct errbuf err;

	if (number < 1 || number > s->n_versions)
		return;
	s->default_version = number;
	sim_cloud_tracef(a->c, "aws: launch template %s: default version %zu", s->lt_id, number);
	/* what the group launches now, for the cloud's outdated instances */
	if (s->versions[number - 1].image[0] &&
	    sim_cloud_set_image(a->c, i, s->versions[number - 1].image, &err) < 0)
		sim_cloud_tracef(a->c, "aws: launch template %s: %s", s->lt_id, err.msg);
}

/* An image fault on group gi: a new version of its template with the
 * image, made the default (what someone rolling an AMI does). */
static bool imager(void *ud, size_t gi, const char *image)
{
	struct sim_aws *a = ud;
	struct errbuf err;
	size_t number;

	if (sim_aws_lt_version_create(a, gi, a->g[gi].default_version, image, "image fault", NULL, &number,
				      &err) < 0) {
		sim_cloud_tracef(a->c, "aws: image fault on %s: %s", sim_cloud_group(a->c, gi)->name,
				 err.msg);
		return true;
	}
	sim_aws_lt_set_default(a, gi, number);
	return true;
}

/* ---- interruptions: EventBridge events into the scenario's queue ---- */

/* Posts one EC2 event about instance 'in' (detail: the instance id and
 * 'detail_more', a JSON fragment starting with ','). Lock held. */
static void post_event(struct sim_aws *a, const struct sim_instance *in, const char *type,
		       const char *detail_more)
{
	const struct sim_aws_conf *c = a->conf;
	char id[37], now[32], *body;
	size_t len;

	if (!c->interruption_queue)
		return;
	sim_aws_uuid(a, id);
	iso_time(wall_now(a), now, sizeof(now));
	len = strlen(type) + strlen(detail_more) + 4 * strlen(in->id) + 512;
	body = malloc(len);
	if (!body)
		return;
	snprintf(body, len,
		 "{\"version\":\"0\",\"id\":\"%s\",\"detail-type\":\"%s\",\"source\":\"aws.ec2\","
		 "\"account\":\"%s\",\"time\":\"%s\",\"region\":\"%s\","
		 "\"resources\":[\"arn:aws:ec2:%s:%s:instance/%s\"],"
		 "\"detail\":{\"instance-id\":\"%s\"%s}}",
		 id, type, c->account, now, c->region, c->region, c->account, in->id, in->id, detail_more);
	if (sim_sqs_send(a->sqs, c->interruption_queue, body, NULL) < 0)
		sim_cloud_tracef(a->c, "aws: the event \"%s\" about %s did not fit the queue", type, in->id);
	else
		sim_cloud_tracef(a->c, "aws: \"%s\" about %s sent to queue %s", type, in->id,
				 c->interruption_queue);
	free(body);
}

static bool interrupter(void *ud, struct sim_instance *in, enum sim_interrupt_step step,
			int64_t warning_ns)
{
	struct sim_aws *a = ud;

	(void)warning_ns;
	if (step == SIM_INTERRUPT_NOTICE) {
		/* AWS says two minutes whatever the fault's warning is */
		post_event(a, in, "EC2 Spot Instance Interruption Warning",
			   ",\"instance-action\":\"terminate\"");
		return false;
	}
	post_event(a, in, "EC2 Instance State-change Notification", ",\"state\":\"shutting-down\"");
	/* reclaimed as TerminateInstances does it: an ASG launches a replacement */
	return sim_aws_terminate(a, in);
}

struct sim_sqs *sim_aws_sqs(const struct sim_aws *a)
{
	return a->sqs;
}

/* ---- construction ---- */

/* Group i's launch template: version 1, the default, with the scenario's
 * image, which the cloud's group launches. 0, or -1 with a message. */
static int lt_start(struct sim_aws *a, size_t i, struct errbuf *err)
{
	const char *image = a->conf->groups[i].image ? a->conf->groups[i].image : SIM_IMAGE_DEFAULT;
	size_t one;

	/* the template is older than the clock's start, as the ASG is */
	if (sim_aws_lt_version_create(a, i, 0, image, NULL, NULL, &one, err) < 0 ||
	    sim_cloud_set_image(a->c, i, image, err) < 0)
		return -1;
	a->g[i].versions[0].created_wall = wall_now(a) - 86400;
	a->g[i].default_version = one;
	return 0;
}

struct sim_aws *sim_aws_new(struct sim_cloud *cloud, const struct sim_aws_conf *conf,
			    uint64_t seed, struct errbuf *err)
{
	struct sim_aws *a;
	size_t i, k;

	if (conf->n_groups != sim_cloud_n_groups(cloud)) {
		errbuf_set(err, "aws: %zu AWS groups for %zu node groups", conf->n_groups,
			   sim_cloud_n_groups(cloud));
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		goto oom;
	atomic_init(&a->refs, 1);
	atomic_init(&a->dead, false);
	a->c = cloud;
	a->conf = conf;
	a->rng = seed ^ 0x2545f4914f6cdd1dULL;
	a->ip_next = (1u << 8) | 2; /* 10.0.1.2 */
	a->n_types = N_BUILTIN + conf->n_types;
	a->types = calloc(a->n_types, sizeof(*a->types));
	a->g = conf->n_groups ? calloc(conf->n_groups, sizeof(*a->g)) : NULL;
	a->life = sim_life_new(a);
	if (!a->types || (conf->n_groups && !a->g) || !a->life) {
		sim_life_end(a->life);
		a->life = NULL;
		aws_put(a);
		goto oom;
	}
	a->n_groups = conf->n_groups;
	memcpy(a->types, builtin_types, sizeof(builtin_types));
	{
		size_t w = N_BUILTIN;

		/* the scenario's types replace built-in ones of the same name */
		for (i = 0; i < conf->n_types; i++) {
			for (k = 0; k < N_BUILTIN; k++)
				if (strcmp(builtin_types[k].name, conf->types[i].name) == 0)
					break;
			if (k < N_BUILTIN)
				a->types[k] = conf->types[i];
			else
				a->types[w++] = conf->types[i];
		}
		a->n_types = w;
	}
	for (i = 0; i < conf->n_groups; i++) {
		const struct sim_aws_group *g = &conf->groups[i];

		if (!g->n_zones || !g->n_types) {
			errbuf_set(err, "aws: node group %s needs a zone and an instance type",
				   sim_cloud_group(cloud, i)->name);
			goto fail;
		}
		for (k = 0; k < g->n_types; k++) {
			if (!sim_aws_find_type(a, g->types[k])) {
				errbuf_set(err, "aws: node group %s: unknown instance type \"%s\"",
					   sim_cloud_group(cloud, i)->name, g->types[k]);
				goto fail;
			}
		}
		a->g[i].desired = g->mode == SIM_AWS_ASG ? 0 : -1;
		snprintf(a->g[i].lt_id, sizeof(a->g[i].lt_id), "lt-0%016llx",
			 (unsigned long long)next_rand(a));
		if (lt_start(a, i, err) < 0)
			goto fail;
	}
	a->sqs = sim_sqs_new(executor_clock(sim_cloud_executor(cloud)), conf->region, conf->account);
	if (!a->sqs)
		goto oom_fail;
	if (conf->interruption_queue && sim_sqs_create(a->sqs, conf->interruption_queue) < 0) {
		errbuf_set(err, "aws: interruption_queue \"%s\" is not a queue name", conf->interruption_queue);
		goto fail;
	}
	sim_cloud_set_namer(cloud, namer, a);
	sim_cloud_set_interrupter(cloud, interrupter, a);
	sim_cloud_set_imager(cloud, imager, a);
	return a;
oom_fail:
	errbuf_set(err, "out of memory");
fail:
	sim_life_end(a->life);
	a->life = NULL;
	aws_put(a);
	return NULL;
oom:
	errbuf_set(err, "out of memory");
	return NULL;
}

void sim_aws_free(struct sim_aws *a)
{
	if (!a)
		return;
	atomic_store(&a->dead, true);
	sim_life_end(a->life);
	aws_put(a);
}

const struct sim_aws_conf *sim_aws_conf(const struct sim_aws *a)
{
	return a->conf;
}

struct sim_cloud *sim_aws_cloud(const struct sim_aws *a)
{
	return a->c;
}

const struct sim_aws_group *sim_aws_group(const struct sim_aws *a, size_t i)
{
	return &a->conf->groups[i];
}

const struct sim_aws_type *sim_aws_find_type(const struct sim_aws *a, const char *name)
{
	size_t i;

	for (i = 0; name && i < a->n_types; i++)
		if (strcmp(a->types[i].name, name) == 0)
			return &a->types[i];
	return NULL;
}

const struct sim_aws_type *sim_aws_type_at(const struct sim_aws *a, size_t i, size_t *n)
{
	*n = a->n_types;
	return i < a->n_types ? &a->types[i] : NULL;
}

const char *sim_aws_template_id(const struct sim_aws *a, size_t i)
{
	return a->g[i].lt_id;
}

int sim_aws_find_template(const struct sim_aws *a, const char *name, const char *id)
{
	size_t i;

	for (i = 0; i < a->n_groups; i++) {
		if (name && strcmp(a->conf->groups[i].launch_template, name) != 0)
			continue;
		if (id && strcmp(a->g[i].lt_id, id) != 0)
			continue;
		if (name || id)
			return (int)i;
	}
	return -1;
}

int sim_aws_desired(const struct sim_aws *a, size_t i)
{
	return a->g[i].desired;
}

const struct sim_aws_activity *sim_aws_activities(const struct sim_aws *a, size_t i, size_t *n)
{
	*n = a->g[i].n_acts;
	return a->g[i].acts;
}

/* ---- ASGs ---- */

/* Appends an activity to group gi (dropped when out of memory). */
static struct sim_aws_activity *activity_add(struct sim_aws *a, size_t gi, const char *status)
{
	struct asg *s = &a->g[gi];
	struct sim_aws_activity *act;

	if (s->n_acts == s->cap_acts) {
		size_t cap = s->cap_acts ? s->cap_acts * 2 : 16;
		struct sim_aws_activity *na = realloc(s->acts, cap * sizeof(*na));

		if (!na)
			return NULL;
		s->acts = na;
		s->cap_acts = cap;
	}
	act = &s->acts[s->n_acts++];
	memset(act, 0, sizeof(*act));
	sim_aws_uuid(a, act->id);
	act->group = gi;
	act->status = status;
	act->start_wall = wall_now(a);
	act->end_wall = act->start_wall;
	return act;
}

static void converge(struct sim_aws *a, size_t gi, const char *cause);

static void retry_fn(void *owner, void *data, uint64_t id, bool alive)
{
	struct sim_aws *a = owner;
	size_t gi = (size_t)id;

	(void)data;
	if (!alive)
		return;
	sim_cloud_lock(a->c);
	a->g[gi].retry_queued = false;
	converge(a, gi, NULL);
	sim_cloud_unlock(a->c);
}

static void asg_instance(void *ctx, const struct sim_instance *in)
{
	struct asg_launch *l = ctx;
	struct sim_aws *a = l->a;
	struct sim_aws_activity *act;

	if (atomic_load(&a->dead))
		return;
	sim_cloud_lock(a->c);
	act = activity_add(a, l->gi, "Successful");
	if (act) {
		snprintf(act->description, sizeof(act->description),
			 "Launching a new EC2 instance: %s", in->id);
		snprintf(act->cause, sizeof(act->cause), "%s", l->cause);
	}
	sim_cloud_unlock(a->c);
}

/* How AWS words a launch that failed with 'e' (a scaling activity's StatusMessage). */
static void failure_words(enum provider_error e, const char *type, const char *zone,
			  char *out, size_t size)
{
	switch (e) {
	case PROVIDER_QUOTA:
		snprintf(out, size,
			 "Could not launch On-Demand Instances. VcpuLimitExceeded - You have requested more vCPU capacity than your current vCPU limit of 32 allows for the instance bucket that the specified instance type belongs to. Please visit http://aws.amazon.com/contact-us/ec2-request to request an adjustment to this limit. Launching EC2 instance failed.");
		break;
	case PROVIDER_THROTTLED:
		snprintf(out, size,
			 "Could not launch On-Demand Instances. RequestLimitExceeded - Request limit exceeded. Launching EC2 instance failed.");
		break;
	case PROVIDER_NO_CAPACITY:
		snprintf(out, size,
			 "Could not launch On-Demand Instances. InsufficientInstanceCapacity - We currently do not have sufficient %s capacity in the Availability Zone you requested (%s). Our system will be working on provisioning additional capacity. You can currently get %s capacity by not specifying an Availability Zone in your request or choosing other Availability Zones. Launching EC2 instance failed.",
			 type, zone, type);
		break;
	default:
		snprintf(out, size,
			 "Could not launch On-Demand Instances. InternalError - An internal error has occurred. Launching EC2 instance failed.");
		break;
	}
}

static void asg_done(void *ctx, int count, const struct provider_status *st)
{
	struct asg_launch *l = ctx;
	struct sim_aws *a = l->a;

	if (atomic_load(&a->dead) || !st || st->code == PROVIDER_CANCELLED) {
		free(l);
		aws_put(a);
		return;
	}
	sim_cloud_lock(a->c);
	a->g[l->gi].inflight -= l->n;
	if (count < l->n) {
		const struct sim_aws_group *g = &a->conf->groups[l->gi];
		struct sim_aws_activity *act = activity_add(a, l->gi, "Failed");

		if (act) {
			failure_words(st->code, g->types[0], g->zones[0], act->message,
				      sizeof(act->message));
			snprintf(act->description, sizeof(act->description),
				 "Launching a new EC2 instance.  Status Reason: %.100s", act->message);
			snprintf(act->cause, sizeof(act->cause), "%s", l->cause);
		}
		sim_cloud_tracef(a->c, "aws: ASG %s: %d of %d launches failed",
				 sim_cloud_group(a->c, l->gi)->name, l->n - count, l->n);
		if (!a->g[l->gi].retry_queued &&
		    sim_after(sim_cloud_executor(a->c), a->life,
			      a->conf->asg_retry_ns > 0 ? a->conf->asg_retry_ns : DEFAULT_RETRY_NS,
			      retry_fn, NULL, l->gi) == 0)
			a->g[l->gi].retry_queued = true;
	} else {
		/* desired may have dropped while this launch was in flight */
		converge(a, l->gi, NULL);
	}
	sim_cloud_unlock(a->c);
	free(l);
	aws_put(a);
}

/* The instance to take out when ASG gi shrinks: the newest in its most
 * populated zone (AWS balances zones first). */
static struct sim_instance *pick_victim(struct sim_aws *a, size_t gi)
{
	const struct sim_aws_group *g = &a->conf->groups[gi];
	struct sim_instance *const *inst, *best = NULL;
	size_t n, k, z;
	int most = -1;

	inst = sim_cloud_instances(a->c, gi, &n);
	for (z = 0; z < g->n_zones; z++) {
		struct sim_instance *newest = NULL;
		int count = 0;

		for (k = 0; k < n; k++) {
			if ((inst[k]->state != INSTANCE_PENDING && inst[k]->state != INSTANCE_RUNNING) ||
			    strcmp(inst[k]->zone, g->zones[z]) != 0)
				continue;
			count++;
			newest = inst[k];
		}
		if (count > most && newest) {
			most = count;
			best = newest;
		}
	}
	return best;
}

/* Launches or terminates ASG gi towards its desired capacity. Lock held. */
static void converge(struct sim_aws *a, size_t gi, const char *cause)
{
	struct asg *s = &a->g[gi];
	int have, before;
	char now[32];

	if (s->desired < 0)
		return;
	have = sim_cloud_target(a->c, gi) + s->inflight;
	before = have;
	iso_time(wall_now(a), now, sizeof(now));
	if (s->desired > have) {
		struct asg_launch *l = calloc(1, sizeof(*l));
		struct sim_launch_spec spec;
		int n = s->desired - have;

		if (!l)
			return;
		l->a = a;
		l->gi = gi;
		l->n = n;
		snprintf(l->cause, sizeof(l->cause),
			 "%s%sAt %s an instance was started in response to a difference between desired and actual capacity, increasing the capacity from %d to %d.",
			 cause ? cause : "", cause ? "  " : "", now, before, s->desired);
		memset(&spec, 0, sizeof(spec));
		spec.admitted = true;
		atomic_fetch_add(&a->refs, 1);
		s->inflight += n;
		if (sim_cloud_launch_spec(a->c, sim_cloud_group(a->c, gi)->name, n, &spec,
					  asg_instance, asg_done, l) < 0) {
			s->inflight -= n;
			atomic_fetch_sub(&a->refs, 1);
			free(l);
		}
		return;
	}
	while (s->desired < have && s->inflight == 0) {
		struct sim_instance *v = pick_victim(a, gi);
		struct sim_aws_activity *act;

		if (!v)
			break;
		act = activity_add(a, gi, "Successful");
		if (act) {
			snprintf(act->description, sizeof(act->description),
				 "Terminating EC2 instance: %s", v->id);
			snprintf(act->cause, sizeof(act->cause),
				 "%s%sAt %s an instance was taken out of service in response to a difference between desired and actual capacity, shrinking the capacity from %d to %d.  At %s instance %s was selected for termination.",
				 cause ? cause : "", cause ? "  " : "", now, before, s->desired, now,
				 v->id);
		}
		sim_cloud_terminate_instance(a->c, v);
		have--;
	}
}

void sim_aws_start(struct sim_aws *a)
{
	size_t i;

	sim_cloud_lock(a->c);
	for (i = 0; i < a->n_groups; i++) {
		int min = sim_cloud_group(a->c, i)->min, have = sim_cloud_target(a->c, i);

		if (a->g[i].desired < 0)
			continue;
		a->g[i].desired = have > min ? have : min;
		converge(a, i, NULL);
	}
	sim_cloud_unlock(a->c);
}

int sim_aws_set_desired(struct sim_aws *a, size_t i, int desired, struct errbuf *err)
{
	const struct node_group *g = sim_cloud_group(a->c, i);
	char now[32], cause[200];
	int old;

	if (a->g[i].desired < 0)
		return errbuf_set(err, "AutoScalingGroup name not found - AutoScalingGroup %s not found",
				  g->name);
	if (desired > g->max)
		return errbuf_set(err, "New SetDesiredCapacity value %d is above max value %d for the AutoScalingGroup.",
				  desired, g->max);
	if (desired < g->min)
		return errbuf_set(err, "New SetDesiredCapacity value %d is below min value %d for the AutoScalingGroup.",
				  desired, g->min);
	old = a->g[i].desired;
	a->g[i].desired = desired;
	iso_time(wall_now(a), now, sizeof(now));
	snprintf(cause, sizeof(cause),
		 "At %s a user request explicitly set group desired capacity changing the desired capacity from %d to %d.",
		 now, old, desired);
	sim_cloud_tracef(a->c, "aws: ASG %s desired %d -> %d", g->name, old, desired);
	converge(a, i, old != desired ? cause : NULL);
	return 0;
}

int sim_aws_terminate_in_asg(struct sim_aws *a, const char *id, bool decrement,
			     struct sim_aws_activity *out, struct errbuf *err)
{
	struct sim_instance *in = sim_cloud_find_instance(a->c, id);
	const struct node_group *g;
	struct sim_aws_activity *act;
	struct asg *s;
	char now[32];
	int before;

	if (!in || in->state == INSTANCE_GONE || a->g[in->group].desired < 0)
		return errbuf_set(err, "Instance Id not found - No managed instance found for instance ID: %s",
				  id);
	s = &a->g[in->group];
	g = sim_cloud_group(a->c, in->group);
	before = s->desired;
	if (in->state == INSTANCE_STOPPING)
		decrement = false; /* already on its way out: nothing changes twice */
	else if (decrement && s->desired - 1 < g->min)
		return errbuf_set(err, "Currently, desiredSize equals minSize (%d). Terminating instance without replacement will violate group's min size constraint. Either set shouldDecrementDesiredCapacity flag to false or lower group's min size.",
				  g->min);
	iso_time(wall_now(a), now, sizeof(now));
	act = activity_add(a, in->group, "InProgress");
	if (!act)
		return errbuf_set(err, "out of memory");
	act->end_wall = -1;
	snprintf(act->description, sizeof(act->description), "Terminating EC2 instance: %s", id);
	if (decrement) {
		s->desired--;
		snprintf(act->cause, sizeof(act->cause),
			 "At %s instance %s was taken out of service in response to a user request, shrinking the capacity from %d to %d.",
			 now, id, before, s->desired);
	} else {
		snprintf(act->cause, sizeof(act->cause),
			 "At %s instance %s was taken out of service in response to a user request.",
			 now, id);
	}
	*out = *act;
	/* the stored one is over once the instance stops (at once here) */
	act->status = "Successful";
	act->end_wall = act->start_wall;
	if (in->state != INSTANCE_STOPPING) {
		sim_cloud_tracef(a->c, "aws: ASG %s: terminate %s%s", g->name, id,
				 decrement ? " (desired decremented)" : "");
		sim_cloud_terminate_instance(a->c, in);
	}
	if (!decrement)
		converge(a, in->group, NULL);
	return 0;
}

bool sim_aws_terminate(struct sim_aws *a, struct sim_instance *in)
{
	if (in->state != INSTANCE_PENDING && in->state != INSTANCE_RUNNING)
		return false;
	sim_cloud_terminate_instance(a->c, in);
	if (a->g[in->group].desired >= 0)
		converge(a, in->group, NULL);
	return true;
}
