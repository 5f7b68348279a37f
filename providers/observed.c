/*
 * observed: the forwarding provider; one small record per asynchronous
 * call carries the caller's callbacks and the start time to on_done.
 */
#include "providers/observed.h"

#include <stdlib.h>

struct observed {
	struct provider base;
	struct provider_ops ops;  /* the inner's, with the calls forwarded here */
	struct provider *inner;
	struct clock *clock;
	provider_observe_fn fn;
	void *ctx;
};

struct call {
	struct observed *o;
	const char *op;
	int64_t start;
	provider_instance_cb on_instance;
	provider_done_cb on_done;
	void *ctx;
};

static double since(const struct observed *o, int64_t start)
{
	return (double)(clock_now(o->clock) - start) / CLOCK_NS_PER_S;
}

static int o_list(struct provider *p, struct provider_group **groups, size_t *n,
		  struct provider_status *st)
{
	struct observed *o = p->impl;
	int64_t start = clock_now(o->clock);
	int rc = o->inner->ops->list_groups(o->inner, groups, n, st);

	o->fn(o->ctx, "list_groups", rc < 0 ? st->code : PROVIDER_OK, since(o, start));
	return rc;
}

static void c_instance(void *ctx, const struct provider_instance *inst)
{
	struct call *c = ctx;

	if (c->on_instance)
		c->on_instance(c->ctx, inst);
}

static void c_done(void *ctx, int count, const struct provider_status *st)
{
	struct call *c = ctx;

	c->o->fn(c->o->ctx, c->op, st->code, since(c->o, c->start));
	c->on_done(c->ctx, count, st);
	free(c);
}

static struct call *call_new(struct observed *o, const char *op, provider_instance_cb oi,
			     provider_done_cb od, void *ctx)
{
	struct call *c = malloc(sizeof(*c));

	if (c) {
		c->o = o;
		c->op = op;
		c->start = clock_now(o->clock);
		c->on_instance = oi;
		c->on_done = od;
		c->ctx = ctx;
	}
	return c;
}

static void o_launch(struct provider *p, const char *group, int count,
		     provider_instance_cb on_instance, provider_done_cb on_done, void *ctx)
{
	struct observed *o = p->impl;
	struct call *c = call_new(o, "launch", on_instance, on_done, ctx);

	if (!c) {
		/* unobserved rather than lost */
		o->inner->ops->launch(o->inner, group, count, on_instance, on_done, ctx);
		return;
	}
	o->inner->ops->launch(o->inner, group, count, c_instance, c_done, c);
}

static void o_launch_types(struct provider *p, const char *group, int count,
			   const char *const *types, size_t n_types, provider_instance_cb on_instance,
			   provider_done_cb on_done, void *ctx)
{
	struct observed *o = p->impl;
	struct call *c = call_new(o, "launch", on_instance, on_done, ctx);

	if (!c) {
		o->inner->ops->launch_types(o->inner, group, count, types, n_types, on_instance,
					    on_done, ctx);
		return;
	}
	o->inner->ops->launch_types(o->inner, group, count, types, n_types, c_instance, c_done, c);
}

static void o_terminate(struct provider *p, const char *group, const char *const *ids, size_t n,
			provider_done_cb on_done, void *ctx)
{
	struct observed *o = p->impl;
	struct call *c = call_new(o, "terminate", NULL, on_done, ctx);

	if (!c) {
		o->inner->ops->terminate(o->inner, group, ids, n, on_done, ctx);
		return;
	}
	o->inner->ops->terminate(o->inner, group, ids, n, c_done, c);
}

static int o_map(struct provider *p, const char *provider_id, char *group, size_t group_len,
		 char *instance, size_t instance_len)
{
	struct observed *o = p->impl;

	return o->inner->ops->map_node(o->inner, provider_id, group, group_len, instance,
				       instance_len);
}

static void o_prices(struct provider *p, struct provider_group *groups, size_t n,
		     struct executor *ex)
{
	struct observed *o = p->impl;

	o->inner->ops->prices(o->inner, groups, n, ex);
}

static uint64_t o_price_failures(struct provider *p)
{
	struct observed *o = p->impl;

	return o->inner->ops->price_failures(o->inner);
}

static int o_interruptions(struct provider *p, struct provider_interruption **out, size_t *n,
			   struct provider_status *st)
{
	struct observed *o = p->impl;

	return o->inner->ops->interruptions(o->inner, out, n, st);
}

static void o_free(struct provider *p)
{
	struct observed *o = p->impl;

	provider_free(o->inner);
	free(o);
}

struct provider *provider_observed_new(struct provider *inner, struct clock *clock,
				       provider_observe_fn fn, void *ctx)
{
	struct observed *o;

	if (!inner)
		return NULL;
	o = calloc(1, sizeof(*o));
	if (!o) {
		provider_free(inner);
		return NULL;
	}
	o->inner = inner;
	o->clock = clock ? clock : clock_real();
	o->fn = fn;
	o->ctx = ctx;
	o->base = *inner; /* its rate limiters and executor */
	o->base.impl = o;
	o->ops = *inner->ops; /* its kind, and NULL where it has no such call */
	if (o->ops.list_groups)
		o->ops.list_groups = o_list;
	if (o->ops.launch)
		o->ops.launch = o_launch;
	if (o->ops.launch_types)
		o->ops.launch_types = o_launch_types;
	if (o->ops.terminate)
		o->ops.terminate = o_terminate;
	if (o->ops.map_node)
		o->ops.map_node = o_map;
	if (o->ops.prices)
		o->ops.prices = o_prices;
	if (o->ops.price_failures)
		o->ops.price_failures = o_price_failures;
	if (o->ops.interruptions)
		o->ops.interruptions = o_interruptions;
	o->ops.free = o_free;
	o->base.ops = &o->ops;
	return &o->base;
}
