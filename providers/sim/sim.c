/*
 * providers/sim: launch, terminate, list and map on the simulated cloud,
 * each mutating call admitted by the provider's token bucket before it
 * reaches the cloud. Translating between the cloud's instances and the
 * provider structs is all it does; the cloud does the rest.
 */
#include "providers/sim/sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROVIDER_ID_PREFIX "sim://"
#define READ_WAIT_NS (30 * CLOCK_NS_PER_S)

struct sim_provider {
	struct sim_cloud *cloud;
};

/* A call waiting for its token. */
struct req {
	struct provider *p;
	bool launch;
	char group[64];
	int count;
	char **ids;
	size_t n_ids;
	provider_instance_cb on_instance;
	provider_done_cb on_done;
	void *ctx;
};

static struct sim_cloud *cloud_of(const struct provider *p)
{
	return ((const struct sim_provider *)p->impl)->cloud;
}

struct sim_cloud *sim_provider_cloud(const struct provider *p)
{
	return cloud_of(p);
}

static void req_free(struct req *r)
{
	size_t i;

	for (i = 0; i < r->n_ids; i++)
		free(r->ids[i]);
	free(r->ids);
	free(r);
}

static void done_now(provider_done_cb on_done, void *ctx, enum provider_error code,
		     const char *msg)
{
	struct provider_status st;

	st.code = code;
	snprintf(st.message, sizeof(st.message), "%s", msg);
	if (on_done)
		on_done(ctx, 0, &st);
}

static void on_cloud_instance(void *ctx, const struct sim_instance *in)
{
	struct req *r = ctx;
	struct provider_instance pi;

	if (!r->on_instance)
		return;
	memset(&pi, 0, sizeof(pi));
	snprintf(pi.id, sizeof(pi.id), "%s", in->id);
	snprintf(pi.provider_id, sizeof(pi.provider_id), "%s", in->provider_id);
	snprintf(pi.group, sizeof(pi.group), "%s", r->group);
	pi.state = in->state;
	pi.launched_wall = in->created_wall;
	r->on_instance(r->ctx, &pi);
}

static void on_cloud_done(void *ctx, int count, const struct provider_status *st)
{
	struct req *r = ctx;

	if (r->on_done)
		r->on_done(r->ctx, count, st);
	req_free(r);
}

/* The token is ours (or the executor is shutting down): make the call. */
static void go(void *arg, bool cancelled)
{
	struct req *r = arg;
	int rc;

	if (cancelled) {
		done_now(r->on_done, r->ctx, PROVIDER_CANCELLED,
			 "cancelled: shut down before the call was made");
		req_free(r);
		return;
	}
	if (r->launch)
		rc = sim_cloud_launch(cloud_of(r->p), r->group, r->count, on_cloud_instance,
				      on_cloud_done, r);
	else
		rc = sim_cloud_terminate(cloud_of(r->p), r->group, (const char *const *)r->ids,
					 r->n_ids, on_cloud_done, r);
	if (rc < 0) {
		done_now(r->on_done, r->ctx, PROVIDER_CANCELLED,
			 "cancelled: the executor refused the call");
		req_free(r);
	}
}

static void submit(struct provider *p, struct req *r)
{
	if (ratelimit_acquire_async(p->mutating, p->ex, INT64_MAX, go, r) < 0) {
		done_now(r->on_done, r->ctx, PROVIDER_CANCELLED,
			 "cancelled: the executor refused the call");
		req_free(r);
	}
}

static struct req *req_new(struct provider *p, const char *group, provider_done_cb on_done,
			   void *ctx)
{
	struct req *r;

	if (!group || strlen(group) >= sizeof(r->group)) {
		done_now(on_done, ctx, PROVIDER_NOT_FOUND, "NotFound: no such node group");
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		done_now(on_done, ctx, PROVIDER_TRANSIENT, "out of memory");
		return NULL;
	}
	r->p = p;
	snprintf(r->group, sizeof(r->group), "%s", group);
	r->on_done = on_done;
	r->ctx = ctx;
	return r;
}

static void sim_launch(struct provider *p, const char *group, int count,
		       provider_instance_cb on_instance, provider_done_cb on_done, void *ctx)
{
	struct req *r = req_new(p, group, on_done, ctx);

	if (!r)
		return;
	r->launch = true;
	r->count = count;
	r->on_instance = on_instance;
	submit(p, r);
}

static void sim_terminate(struct provider *p, const char *group, const char *const *ids, size_t n,
			  provider_done_cb on_done, void *ctx)
{
	struct req *r = req_new(p, group, on_done, ctx);
	size_t i;

	if (!r)
		return;
	r->ids = n ? calloc(n, sizeof(*r->ids)) : NULL;
	if (n && !r->ids)
		goto oom;
	for (i = 0; i < n; i++) {
		r->ids[i] = strdup(ids[i] ? ids[i] : "");
		if (!r->ids[i])
			goto oom;
		r->n_ids = i + 1;
	}
	submit(p, r);
	return;
oom:
	done_now(on_done, ctx, PROVIDER_TRANSIENT, "out of memory");
	req_free(r);
}

static int sim_list_groups(struct provider *p, struct provider_group **groups, size_t *n,
			   struct provider_status *st)
{
	struct sim_cloud *c = cloud_of(p);
	struct provider_group *out;
	size_t ng, i, k;

	*groups = NULL;
	*n = 0;
	if (ratelimit_acquire(p->reads, clock_now(executor_clock(p->ex)) + READ_WAIT_NS) < 0) {
		st->code = PROVIDER_THROTTLED;
		snprintf(st->message, sizeof(st->message),
			 "read rate limit: no token available in time");
		return -1;
	}
	if (sim_cloud_read_call(c, NULL, st) < 0)
		return -1;
	sim_cloud_lock(c);
	ng = sim_cloud_n_groups(c);
	out = calloc(ng ? ng : 1, sizeof(*out));
	if (!out)
		goto oom;
	for (i = 0; i < ng; i++) {
		const struct node_group *g = sim_cloud_group(c, i);
		struct sim_instance *const *in;
		size_t m;

		snprintf(out[i].name, sizeof(out[i].name), "%s", g->name);
		out[i].min = g->min;
		out[i].max = g->max;
		out[i].target = sim_cloud_target(c, i);
		out[i].tmpl.cpu_m = g->tmpl.allocatable.cpu_m;
		out[i].tmpl.memory = g->tmpl.allocatable.memory;
		out[i].tmpl.pods = g->tmpl.allocatable.pods;
		out[i].tmpl.gpus = resources_ext(&g->tmpl.allocatable, "nvidia.com/gpu");
		out[i].tmpl.price_per_hour = g->price_per_hour;
		snprintf(out[i].tmpl.instance_type, sizeof(out[i].tmpl.instance_type), "sim");
		in = sim_cloud_instances(c, i, &m);
		out[i].instances = m ? calloc(m, sizeof(*out[i].instances)) : NULL;
		if (m && !out[i].instances) {
			provider_groups_free(out, ng);
			goto oom;
		}
		for (k = 0; k < m; k++) {
			struct provider_instance *pi = &out[i].instances[k];

			snprintf(pi->id, sizeof(pi->id), "%s", in[k]->id);
			snprintf(pi->provider_id, sizeof(pi->provider_id), "%s", in[k]->provider_id);
			snprintf(pi->group, sizeof(pi->group), "%s", g->name);
			pi->state = in[k]->state;
			pi->launched_wall = in[k]->created_wall;
			/* launched with another image than the group's now */
			sim_cloud_instance_outdated(c, in[k], pi->outdated, sizeof(pi->outdated));
		}
		out[i].n_instances = m;
	}
	sim_cloud_unlock(c);
	*groups = out;
	*n = ng;
	st->code = PROVIDER_OK;
	st->message[0] = '\0';
	return 0;
oom:
	sim_cloud_unlock(c);
	st->code = PROVIDER_TRANSIENT;
	snprintf(st->message, sizeof(st->message), "out of memory");
	return -1;
}

/* "sim://GROUP/INSTANCE", GROUP one of the cloud's groups. */
static int sim_map_node(struct provider *p, const char *provider_id, char *group, size_t group_len,
			char *instance, size_t instance_len)
{
	const size_t plen = sizeof(PROVIDER_ID_PREFIX) - 1;
	const char *g, *slash;
	size_t glen, i, ng;

	if (!provider_id || strncmp(provider_id, PROVIDER_ID_PREFIX, plen) != 0)
		return -1;
	g = provider_id + plen;
	slash = strchr(g, '/');
	if (!slash || slash == g || !slash[1] || strchr(slash + 1, '/'))
		return -1;
	glen = (size_t)(slash - g);
	if (glen >= group_len || strlen(slash + 1) >= instance_len)
		return -1;
	/* the group list never changes: no lock, no call */
	ng = sim_cloud_n_groups(cloud_of(p));
	for (i = 0; i < ng; i++) {
		const char *name = sim_cloud_group(cloud_of(p), i)->name;

		if (strlen(name) == glen && strncmp(name, g, glen) == 0)
			break;
	}
	if (i == ng)
		return -1;
	memcpy(group, g, glen);
	group[glen] = '\0';
	snprintf(instance, instance_len, "%s", slash + 1);
	return 0;
}

/* The interrupt faults' notices the cloud gave since the last call, as
 * spot interruptions (the simulated cloud has no other kind). No token:
 * nothing is consumed that another replica could need. */
static int sim_interruptions(struct provider *p, struct provider_interruption **out, size_t *n,
			     struct provider_status *st)
{
	struct sim_notice *v;
	size_t nv, i;

	*out = NULL;
	*n = 0;
	memset(st, 0, sizeof(*st));
	sim_cloud_take_notices(cloud_of(p), &v, &nv);
	if (!nv) {
		free(v);
		return 0;
	}
	*out = calloc(nv, sizeof(**out));
	if (!*out) {
		free(v);
		st->code = PROVIDER_TRANSIENT;
		snprintf(st->message, sizeof(st->message), "out of memory");
		return -1;
	}
	for (i = 0; i < nv; i++) {
		struct provider_interruption *pi = &(*out)[i];

		snprintf(pi->instance_id, sizeof(pi->instance_id), "%s", v[i].id);
		snprintf(pi->provider_id, sizeof(pi->provider_id), "%s", v[i].provider_id);
		snprintf(pi->group, sizeof(pi->group), "%s", v[i].group);
		pi->kind = PROVIDER_INTERRUPT_SPOT_INTERRUPTION;
		pi->deadline_wall = v[i].deadline_wall;
		pi->received_wall = v[i].at_wall;
	}
	*n = nv;
	free(v);
	return 0;
}

static void sim_free(struct provider *p)
{
	if (!p)
		return;
	ratelimit_free(p->mutating);
	ratelimit_free(p->reads);
	free(p->impl);
	free(p);
}

static const struct provider_ops sim_ops = {
	.kind = "sim",
	.list_groups = sim_list_groups,
	.launch = sim_launch,
	.terminate = sim_terminate,
	.map_node = sim_map_node,
	.interruptions = sim_interruptions,
	.free = sim_free,
};

/* A bucket for 'qps'/'burst'; qps <= 0 means as good as no limit. */
static struct ratelimit *bucket(struct clock *clk, double qps, int burst)
{
	if (qps <= 0)
		return ratelimit_new(clk, 1e9, 1 << 20);
	return ratelimit_new(clk, qps, burst < 1 ? 1 : burst);
}

struct provider *sim_provider_new(struct sim_cloud *cloud, const struct provider_limits *lim,
				  struct errbuf *err)
{
	struct provider_limits none = {0, 0, 0, 0};
	struct provider *p;
	struct clock *clk;

	if (!cloud) {
		errbuf_set(err, "sim provider: no cloud");
		return NULL;
	}
	if (!lim)
		lim = &none;
	p = calloc(1, sizeof(*p));
	if (!p)
		goto oom;
	p->ops = &sim_ops;
	p->ex = sim_cloud_executor(cloud);
	clk = executor_clock(p->ex);
	p->impl = calloc(1, sizeof(struct sim_provider));
	p->mutating = bucket(clk, lim->mutating_qps, lim->mutating_burst);
	p->reads = bucket(clk, lim->read_qps, lim->read_burst);
	if (!p->impl || !p->mutating || !p->reads) {
		sim_free(p);
		goto oom;
	}
	((struct sim_provider *)p->impl)->cloud = cloud;
	return p;
oom:
	errbuf_set(err, "sim provider: out of memory or a bad rate limit");
	return NULL;
}
