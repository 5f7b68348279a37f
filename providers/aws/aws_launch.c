/*
 * providers/aws: launching and terminating. An Auto Scaling group grows by
 * SetDesiredCapacity computed from the size it reports in the group's
 * turn (its size writes never interleave), its new instances claimed and
 * reported as they appear (a Failed scaling activity ends the launch early
 * and gives back the capacity not made); a fleet group launches with
 * CreateFleet Type=instant and a ClientToken a call, leaving out for a few
 * minutes each offering (instance type, zone, capacity type) that just
 * answered with a capacity error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "providers/aws/aws_internal.h"
#include "providers/aws/awserr.h"
#include "providers/cloudhttp/groupcache.h"

#define TERMINATE_BATCH 1000
#define MAX_OVERRIDES 300
#define MAX_UNAVAILABLE 4096 /* offerings left out at once, at most */

/* Logs one launched instance with what an operator looks for. */
static void log_launched(struct aws_prov *ap, const char *group, const char *id, const char *type,
			 const char *zone, const char *dns)
{
	log_at(ap->log, LOG_INFO, clock_wall(ap->clock),
	       "aws: launched %s in group %s: type %s, zone %s, private DNS name %s", id, group,
	       type && *type ? type : "?", zone, dns && *dns ? dns : "(not yet known)");
}

/* Reports the instances of new[0..n) and logs each with its DNS name. */
static void report(struct provider *p, const char *group, struct aws_asg_instance *const *inst,
		   size_t n, provider_instance_cb on_instance, void *ctx)
{
	const char **ids = calloc(n + 1, sizeof(*ids));
	struct aws_instance_facts *facts = calloc(n + 1, sizeof(*facts));
	size_t i;

	for (i = 0; i < n; i++) {
		char pid[256]; /* as provider_instance.provider_id */

		aws_provider_id(inst[i]->zone, inst[i]->id, pid, sizeof(pid));
		groupcache_report(on_instance, ctx, inst[i]->id, group, pid, inst[i]->st);
		if (ids)
			ids[i] = inst[i]->id;
	}
	if (ids && facts)
		aws_describe_instances(p, ids, n, facts);
	for (i = 0; i < n; i++)
		log_launched(AWS_PROV(p), group, inst[i]->id, inst[i]->type, inst[i]->zone,
			     facts ? facts[i].dns : "");
	free(ids);
	free(facts);
}

static int describe_one(struct provider *p, const char *asg, struct aws_asg **a, size_t *n,
			struct provider_status *st)
{
	const char *names[1] = {asg};

	if (aws_describe_asgs(p, names, 1, a, n, st) < 0)
		return -1;
	if (*n != 1 || strcmp((*a)[0].name, asg)) {
		aws_asgs_free(*a, *n);
		*a = NULL;
		*n = 0;
		cloudcall_status(st, PROVIDER_NOT_FOUND, "the Auto Scaling group %.128s does not exist", asg);
		return -1;
	}
	return 0;
}

static bool known(const struct aws_asg *a, const char *id)
{
	size_t i;

	for (i = 0; i < a->n_inst; i++)
		if (!strcmp(a->inst[i].id, id))
			return true;
	return false;
}

static int set_desired(struct provider *p, const char *asg, int desired, struct provider_status *st)
{
	struct aws_query f;
	struct xmltree_doc *d = NULL;
	int rc;

	aws_query_init(&f, AWS_SERVICE_AUTOSCALING, "SetDesiredCapacity");
	aws_query_add(&f, "AutoScalingGroupName", asg);
	aws_query_add_int(&f, "DesiredCapacity", desired);
	aws_query_add(&f, "HonorCooldown", "false");
	rc = aws_do(p, AWS_SERVICE_AUTOSCALING, true, &f, &d, st);
	aws_query_free(&f);
	xmltree_free(d);
	return rc;
}

/* Pending or running instances of an ASG (not in a warm pool). */
static int live_count(const struct aws_asg *a)
{
	size_t i;
	int n = 0;

	for (i = 0; i < a->n_inst; i++)
		if (!a->inst[i].warm && (a->inst[i].st == INSTANCE_PENDING || a->inst[i].st == INSTANCE_RUNNING))
			n++;
	return n;
}

/*
 * A launch that failed gives back what it did not make, so the ASG stops
 * retrying it: in the group's turn, from the size read then, never below
 * the instances that exist (the ASG would terminate one) nor the minimum.
 */
static void give_back(struct provider *p, const struct aws_group *g, int owed, const struct provider_status *why)
{
	struct aws_prov *ap = AWS_PROV(p);
	struct provider_status st;
	struct aws_asg *c = NULL;
	size_t nc = 0;
	int back;

	provider_turn_take(ap->turns, g->name);
	if (describe_one(p, g->asg, &c, &nc, &st) == 0) {
		back = c->desired - owed;
		if (back < c->min)
			back = c->min;
		if (back < live_count(c))
			back = live_count(c);
		if (back < c->desired && set_desired(p, g->asg, back, &st) == 0)
			log_at(ap->log, LOG_WARN, clock_wall(ap->clock),
			       "aws: group %s: the launch failed (%s: %s); ASG %.128s desired capacity %d -> %d",
			       g->name, provider_error_str(why->code), why->message, g->asg, c->desired, back);
	}
	provider_turn_give(ap->turns, g->name);
	aws_asgs_free(c, nc);
}

/*
 * An ASG launch: in the group's turn (no other size write of the group
 * runs meanwhile), the size is read and the size plus 'count' written, so
 * a launch never writes a size below the one it read, and two launches
 * add up. New instances are claimed one by one: each is reported by the
 * first launch that sees it and by no other.
 */
static void launch_asg(struct provider *p, const struct aws_group *g, int count,
		       provider_instance_cb on_instance, provider_done_cb on_done, void *ctx)
{
	struct aws_prov *ap = AWS_PROV(p);
	struct provider_status st;
	struct aws_asg *a = NULL, *b = NULL;
	size_t na = 0, nb = 0, i;
	struct aws_asg_instance **fresh = NULL;
	int done = 0, desired;
	int64_t start = clock_wall(ap->clock), deadline;

	memset(&st, 0, sizeof(st));
	provider_turn_take(ap->turns, g->name);
	/* a size read in this turn: never one computed from an unknown or an old one */
	if (describe_one(p, g->asg, &a, &na, &st) < 0) {
		provider_turn_give(ap->turns, g->name);
		goto out;
	}
	desired = a->desired + count;
	if (desired > a->max) {
		provider_turn_give(ap->turns, g->name);
		cloudcall_status(&st, PROVIDER_INVALID,
				 "the ASG %.128s would go to %d instances, above its MaxSize %d (desired now %d)",
				 g->asg, desired, a->max, a->desired);
		goto out;
	}
	if (set_desired(p, g->asg, desired, &st) < 0) {
		provider_turn_give(ap->turns, g->name);
		goto out;
	}
	provider_turn_give(ap->turns, g->name);
	deadline = clock_now(ap->clock) + ap->launch_wait_ns;
	log_at(ap->log, LOG_INFO, clock_wall(ap->clock),
	       "aws: group %s: ASG %.128s desired capacity %d -> %d", g->name, g->asg, a->desired, desired);
	while (done < count) {
		size_t nf = 0;

		if (aws_wait(ap, ap->poll_ns) < 0) {
			cloudcall_status(&st, PROVIDER_CANCELLED,
					 "stopped waiting for the ASG's instances: luascale is stopping (the ASG still launches them)");
			goto out;
		}
		aws_asgs_free(b, nb);
		b = NULL;
		if (describe_one(p, g->asg, &b, &nb, &st) < 0) {
			log_at(ap->log, LOG_WARN, clock_wall(ap->clock),
			       "aws: group %s: cannot follow the launch: %s", g->name, st.message);
			memset(&st, 0, sizeof(st));
		} else {
			free(fresh);
			fresh = calloc(b->n_inst + 1, sizeof(*fresh));
			for (i = 0; fresh && i < b->n_inst && done + (int)nf < count; i++) {
				struct aws_asg_instance *in = &b->inst[i];

				if (known(a, in->id) || in->warm ||
				    (in->st != INSTANCE_PENDING && in->st != INSTANCE_RUNNING))
					continue;
				/* ours once claimed; one claimed before (by this
				 * launch or another) is not ours to report */
				if (!provider_claim(ap->turns, g->name, in->id))
					continue;
				fresh[nf++] = in;
			}
			if (nf) {
				report(p, g->name, fresh, nf, on_instance, ctx);
				done += (int)nf;
			}
			if (done >= count)
				break;
			aws_failed_activity(p, g->asg, start - 5, &st);
			if (st.code != PROVIDER_OK) {
				give_back(p, g, count - done, &st);
				goto out;
			}
		}
		if (clock_now(ap->clock) >= deadline) {
			cloudcall_status(&st, PROVIDER_TRANSIENT,
					 "%d of %d instances not listed by the ASG after %llds; its desired capacity still counts them",
					 count - done, count, (long long)(ap->launch_wait_ns / CLOCK_NS_PER_S));
			goto out;
		}
	}
	memset(&st, 0, sizeof(st));
out:
	free(fresh);
	aws_asgs_free(a, na);
	aws_asgs_free(b, nb);
	on_done(ctx, done, &st);
}

/* A ClientToken: unique per request, at most 64 ASCII characters. */
static void client_token(struct aws_prov *ap, const char *group, char *out, size_t len)
{
	uint64_t seq;

	pthread_mutex_lock(&ap->mu);
	seq = ++ap->seq;
	pthread_mutex_unlock(&ap->mu);
	snprintf(out, len, "luascale-%.24s-%llx-%llx", group, (unsigned long long)clock_wall(ap->clock),
		 (unsigned long long)seq);
}

/* ---- fleet launches and the offerings out of capacity ---- */

/* Is (type, zone, spot) out of capacity a moment ago? Drops expired entries. */
static bool offering_out(struct aws_prov *ap, const char *type, const char *zone, bool spot)
{
	int64_t now = clock_now(ap->clock);
	bool out = false;
	size_t i, k = 0;

	pthread_mutex_lock(&ap->mu);
	for (i = 0; i < ap->n_unavailable; i++) {
		struct aws_offering_out *o = &ap->unavailable[i];

		if (o->until_ns <= now)
			continue;
		if (!strcmp(o->type, type) && !strcmp(o->zone, zone) && o->spot == spot)
			out = true;
		ap->unavailable[k++] = *o;
	}
	ap->n_unavailable = k;
	pthread_mutex_unlock(&ap->mu);
	return out;
}

/* Leaves (type, zone, spot) out of fleet launches for AWS_UNAVAILABLE_TTL_NS.
 * Returns true when it was not out already. */
static bool offering_mark_out(struct aws_prov *ap, const char *group, const char *type,
			      const char *zone, bool spot, const char *code)
{
	int64_t until = clock_now(ap->clock) + AWS_UNAVAILABLE_TTL_NS;
	struct aws_offering_out *o = NULL;
	bool fresh = false;
	size_t i;

	pthread_mutex_lock(&ap->mu);
	for (i = 0; i < ap->n_unavailable && !o; i++)
		if (!strcmp(ap->unavailable[i].type, type) && !strcmp(ap->unavailable[i].zone, zone) &&
		    ap->unavailable[i].spot == spot)
			o = &ap->unavailable[i];
	if (!o && ap->n_unavailable < MAX_UNAVAILABLE) {
		struct aws_offering_out *n = realloc(ap->unavailable,
						     (ap->n_unavailable + 1) * sizeof(*n));

		if (n) {
			ap->unavailable = n;
			o = &n[ap->n_unavailable++];
			snprintf(o->type, sizeof(o->type), "%s", type);
			snprintf(o->zone, sizeof(o->zone), "%s", zone);
			o->spot = spot;
			o->until_ns = 0;
		}
	}
	if (o) {
		fresh = o->until_ns <= clock_now(ap->clock);
		o->until_ns = until;
	}
	pthread_mutex_unlock(&ap->mu);
	if (fresh)
		log_at(ap->log, LOG_WARN, clock_wall(ap->clock),
		       "aws: group %s: %s in %s (%s) is out of capacity (%s): left out of launches for %llds",
		       group, type, zone, spot ? "spot" : "on-demand", code,
		       (long long)(AWS_UNAVAILABLE_TTL_NS / CLOCK_NS_PER_S));
	return fresh;
}

/* What one CreateFleet call gave. */
struct fleet_call {
	struct aws_asg_instance *made; /* grows over the calls of a launch */
	size_t n_made, cap;
	int n_errors;
	bool all_capacity;             /* every error was a capacity error */
	int n_marked;                  /* offerings newly left out */
	char first_code[128], first_msg[200];
	const char *const *only;       /* the instance types the launch may use; NULL: all */
	size_t n_only;
};

/* May a launch limited to fc->only use instance type 'type'? */
static bool type_allowed(const struct fleet_call *fc, const char *type)
{
	size_t i;

	if (!fc->only)
		return true;
	for (i = 0; i < fc->n_only; i++)
		if (!strcmp(fc->only[i], type))
			return true;
	return false;
}

/* The zone of a placement's subnet, from the config (NULL when unknown). */
static const char *subnet_zone(const struct config_aws_group *c, const char *subnet)
{
	size_t i;

	for (i = 0; subnet && *subnet && i < c->n_placements; i++)
		if (!strcmp(c->subnets[i], subnet))
			return c->zones[i];
	return NULL;
}

/*
 * One CreateFleet Type=instant for 'count' instances of capacity type
 * 'spot' over every override (instance type x placement) not out of
 * capacity, with a ClientToken of its own. The instances it made are added
 * to fc->made; each capacity error that names its offering leaves that
 * offering out. Returns the overrides sent (0: every offering is out, no
 * call made), or -1 with 'st' when the call failed whole.
 */
static int create_fleet(struct provider *p, const struct aws_group *g, bool spot, int count,
			struct fleet_call *fc, struct provider_status *st)
{
	struct aws_prov *ap = AWS_PROV(p);
	const struct config_aws_group *c = g->cfg;
	struct aws_query f;
	struct xmltree_doc *d = NULL;
	const struct xmltree_node *it, *id;
	const char *lt = c->launch_template;
	char token[80];
	size_t ti, pi, k = 0, before = fc->n_made;

	aws_query_init(&f, AWS_SERVICE_EC2, "CreateFleet");
	/* every override names its zone, so each instance's zone is known */
	for (ti = 0; ti < c->n_instance_types; ti++)
		for (pi = 0; pi < c->n_placements && k < MAX_OVERRIDES; pi++) {
			if (!type_allowed(fc, c->instance_types[ti]) ||
			    offering_out(ap, c->instance_types[ti], c->zones[pi], spot))
				continue;
			k++;
			aws_query_addf(&f, c->instance_types[ti], "LaunchTemplateConfigs.1.Overrides.%zu.InstanceType", k);
			aws_query_addf(&f, c->zones[pi], "LaunchTemplateConfigs.1.Overrides.%zu.AvailabilityZone", k);
			if (c->subnets[pi][0])
				aws_query_addf(&f, c->subnets[pi], "LaunchTemplateConfigs.1.Overrides.%zu.SubnetId", k);
			if (c->prioritized) {
				char prio[24];

				snprintf(prio, sizeof(prio), "%zu", ti);
				aws_query_addf(&f, prio, "LaunchTemplateConfigs.1.Overrides.%zu.Priority", k);
			}
		}
	if (!k) {
		aws_query_free(&f);
		return 0;
	}
	client_token(ap, g->name, token, sizeof(token));
	aws_query_add(&f, "Type", "instant");
	aws_query_add(&f, "ClientToken", token);
	aws_query_add(&f, !strncmp(lt, "lt-", 3) ? "LaunchTemplateConfigs.1.LaunchTemplateSpecification.LaunchTemplateId"
						 : "LaunchTemplateConfigs.1.LaunchTemplateSpecification.LaunchTemplateName",
		     lt);
	aws_query_add(&f, "LaunchTemplateConfigs.1.LaunchTemplateSpecification.Version",
		     c->launch_template_version);
	aws_query_add_int(&f, "TargetCapacitySpecification.TotalTargetCapacity", count);
	aws_query_add(&f, "TargetCapacitySpecification.DefaultTargetCapacityType", spot ? "spot" : "on-demand");
	if (spot)
		aws_query_add(&f, "SpotOptions.AllocationStrategy",
			     c->prioritized ? "capacity-optimized-prioritized" : "price-capacity-optimized");
	else
		aws_query_add(&f, "OnDemandOptions.AllocationStrategy", c->prioritized ? "prioritized" : "lowest-price");
	aws_query_add(&f, "TagSpecification.1.ResourceType", "instance");
	aws_query_add(&f, "TagSpecification.1.Tag.1.Key", AWS_TAG_GROUP);
	aws_query_add(&f, "TagSpecification.1.Tag.1.Value", g->name);
	if (ap->cluster[0]) {
		aws_query_add(&f, "TagSpecification.1.Tag.2.Key", AWS_TAG_CLUSTER);
		aws_query_add(&f, "TagSpecification.1.Tag.2.Value", ap->cluster);
	}
	if (aws_do(p, AWS_SERVICE_EC2, true, &f, &d, st) < 0) {
		aws_query_free(&f);
		return -1;
	}
	aws_query_free(&f);
	for (it = xmltree_first(xmltree_find(xmltree_root(d), "fleetInstanceSet"), "item"); it; it = xmltree_next(it)) {
		const struct xmltree_node *ov = xmltree_find(it, "launchTemplateAndOverrides/overrides");

		for (id = xmltree_first(xmltree_find(it, "instanceIds"), "item"); id; id = xmltree_next(id)) {
			struct aws_asg_instance *in;

			if (fc->n_made - before >= (size_t)count)
				break; /* never more than asked are reported */
			if (fc->n_made == fc->cap) {
				size_t nc = fc->cap ? fc->cap * 2 : 16;
				struct aws_asg_instance *nm = realloc(fc->made, nc * sizeof(*nm));

				if (!nm)
					break;
				fc->made = nm;
				fc->cap = nc;
			}
			in = &fc->made[fc->n_made];
			memset(in, 0, sizeof(*in));
			if (xmltree_copy(id, NULL, in->id, sizeof(in->id)) < 0 || strncmp(in->id, "i-", 2) ||
			    xmltree_copy(ov, "availabilityZone", in->zone, sizeof(in->zone)) < 0 || !in->zone[0])
				continue;
			if (xmltree_copy(it, "instanceType", in->type, sizeof(in->type)) < 0)
				xmltree_copy(ov, "instanceType", in->type, sizeof(in->type));
			in->st = INSTANCE_PENDING;
			fc->n_made++;
		}
	}
	for (it = xmltree_first(xmltree_find(xmltree_root(d), "errorSet"), "item"); it; it = xmltree_next(it)) {
		const struct xmltree_node *ov = xmltree_find(it, "launchTemplateAndOverrides/overrides");
		const char *code = xmltree_text(it, "errorCode");
		const char *type = xmltree_text(ov, "instanceType");
		const char *zone = xmltree_text(ov, "availabilityZone");
		bool capacity = aws_error_is_capacity(code);

		if (!*zone)
			zone = subnet_zone(c, xmltree_text(ov, "subnetId"));
		fc->n_errors++;
		if (!capacity)
			fc->all_capacity = false;
		else if (*type && zone && *zone && offering_mark_out(ap, g->name, type, zone, spot, code))
			fc->n_marked++;
		if (!fc->first_code[0] || (!capacity && aws_error_is_capacity(fc->first_code))) {
			snprintf(fc->first_code, sizeof(fc->first_code), "%s", code);
			snprintf(fc->first_msg, sizeof(fc->first_msg), "%s", xmltree_text(it, "errorMessage"));
		}
	}
	xmltree_free(d);
	return (int)k;
}

/*
 * A fleet launch: CreateFleet for the capacity type the group asks first,
 * over the offerings not out of capacity; when capacity errors leave some
 * short and left offerings out, once more over the rest; then, for a group
 * with capacity_type [spot, on-demand], the same on-demand for what spot
 * did not give. Each instance is reported when its call answers.
 */
static void launch_fleet(struct provider *p, const struct aws_group *g, int count,
			 const char *const *types, size_t n_types,
			 provider_instance_cb on_instance, provider_done_cb on_done, void *ctx)
{
	struct aws_prov *ap = AWS_PROV(p);
	const struct config_aws_group *c = g->cfg;
	struct provider_status st;
	struct fleet_call fc;
	bool caps[2];
	size_t n_caps = 0, ci, reported = 0, i;
	int n_calls = 0;

	memset(&st, 0, sizeof(st));
	memset(&fc, 0, sizeof(fc));
	fc.all_capacity = true;
	fc.only = n_types ? types : NULL;
	fc.n_only = n_types;
	caps[n_caps++] = c->spot;
	if (c->spot && c->on_demand_fallback)
		caps[n_caps++] = false;
	for (ci = 0; ci < n_caps && (int)fc.n_made < count; ci++) {
		int attempt;

		for (attempt = 0; attempt < 2 && (int)fc.n_made < count; attempt++) {
			int marked = fc.n_marked, sent;

			sent = create_fleet(p, g, caps[ci], count - (int)fc.n_made, &fc, &st);
			if (sent > 0)
				n_calls++;
			if (fc.n_made > reported) {
				struct aws_asg_instance **ptrs = calloc(fc.n_made - reported, sizeof(*ptrs));

				for (i = 0; ptrs && i < fc.n_made - reported; i++)
					ptrs[i] = &fc.made[reported + i];
				if (ptrs)
					report(p, g->name, ptrs, fc.n_made - reported, on_instance, ctx);
				free(ptrs);
				reported = fc.n_made;
			}
			if (sent < 0)
				goto done; /* the call failed whole: 'st' says why */
			if (sent == 0) {
				log_at(ap->log, LOG_INFO, clock_wall(ap->clock),
				       "aws: group %s: every %s offering%s is out of capacity (left out for up to %llds)%s",
				       g->name, caps[ci] ? "spot" : "on-demand",
				       fc.only ? " of the plan's instance types" : "",
				       (long long)(AWS_UNAVAILABLE_TTL_NS / CLOCK_NS_PER_S),
				       ci + 1 < n_caps ? ": on-demand instead" : "");
				break;
			}
			/* once more only when capacity errors left offerings out */
			if (!fc.all_capacity || fc.n_marked == marked)
				break;
		}
		if (!fc.all_capacity)
			break; /* not a capacity problem: another capacity type would not help */
		if ((int)fc.n_made < count && ci + 1 < n_caps)
			log_at(ap->log, LOG_INFO, clock_wall(ap->clock),
			       "aws: group %s: spot gave %zu of %d: on-demand for the rest", g->name,
			       fc.n_made, count);
	}
	if ((int)fc.n_made < count) {
		enum provider_error cls = !fc.n_errors || fc.all_capacity ? PROVIDER_NO_CAPACITY
									   : aws_error_class(fc.first_code, 400);

		if (cls == PROVIDER_OK)
			cls = PROVIDER_NO_CAPACITY;
		if (cls == PROVIDER_NOT_FOUND)
			cls = PROVIDER_INVALID; /* a launch template or subnet that is not there: fix the config */
		if (!n_calls)
			cloudcall_status(&st, PROVIDER_NO_CAPACITY,
					 "every offering of the group%s is out of capacity (each left out for %llds after a capacity error)",
					 fc.only ? " of the plan's instance types" : "",
					 (long long)(AWS_UNAVAILABLE_TTL_NS / CLOCK_NS_PER_S));
		else
			cloudcall_status(&st, cls, "CreateFleet made %zu of %d in %d call%s (%d error%s%s%s%s%s)",
					 fc.n_made, count, n_calls, n_calls == 1 ? "" : "s", fc.n_errors,
					 fc.n_errors == 1 ? "" : "s", fc.first_code[0] ? ", " : "", fc.first_code,
					 fc.first_msg[0] ? ": " : "", fc.first_msg);
	}
done:
	free(fc.made);
	on_done(ctx, (int)fc.n_made, &st);
}

void aws_launch_types(struct provider *p, const char *group, int count, const char *const *types,
		      size_t n_types, provider_instance_cb on_instance, provider_done_cb on_done,
		      void *ctx)
{
	struct aws_group g;
	struct provider_status st;
	size_t i, j;

	if (count <= 0) {
		cloudcall_status(&st, PROVIDER_INVALID, "launch of %d instances", count);
		on_done(ctx, 0, &st);
		return;
	}
	if (aws_group_get(AWS_PROV(p), group, &g) < 0) {
		cloudcall_status(&st, PROVIDER_NOT_FOUND, "no node group %s in the cloud", group);
		on_done(ctx, 0, &st);
		return;
	}
	if (n_types && !(g.fleet && g.cfg)) {
		cloudcall_status(&st, PROVIDER_INVALID,
				 "group %s is an Auto Scaling group: a launch cannot choose its instance types", group);
		on_done(ctx, 0, &st);
		return;
	}
	for (i = 0; i < n_types; i++) {
		for (j = 0; j < g.cfg->n_instance_types && strcmp(g.cfg->instance_types[j], types[i]); j++)
			;
		if (j == g.cfg->n_instance_types) {
			cloudcall_status(&st, PROVIDER_INVALID, "instance type %.64s is not one of group %s's instance_types",
					 types[i], group);
			on_done(ctx, 0, &st);
			return;
		}
	}
	if (g.fleet)
		launch_fleet(p, &g, count, types, n_types, on_instance, on_done, ctx);
	else
		launch_asg(p, &g, count, on_instance, on_done, ctx);
}

void aws_launch(struct provider *p, const char *group, int count, provider_instance_cb on_instance,
		provider_done_cb on_done, void *ctx)
{
	aws_launch_types(p, group, count, NULL, 0, on_instance, on_done, ctx);
}

/* ---- terminate ---- */

static void terminate_asg(struct provider *p, const struct aws_group *g, const char *const *ids,
			  size_t n, provider_done_cb on_done, void *ctx)
{
	struct aws_prov *ap = AWS_PROV(p);
	struct provider_status st, first;
	struct aws_asg *a = NULL;
	size_t na = 0, i, j;
	int done = 0;

	memset(&first, 0, sizeof(first));
	/* each call lowers the desired capacity: in the group's turn, so a
	 * launch never writes a size read before it */
	provider_turn_take(ap->turns, g->name);
	if (describe_one(p, g->asg, &a, &na, &st) < 0) {
		provider_turn_give(ap->turns, g->name);
		on_done(ctx, 0, &st);
		return;
	}
	for (i = 0; i < n; i++) {
		const struct aws_asg_instance *in = NULL;
		struct aws_query f;
		struct xmltree_doc *d = NULL;

		for (j = 0; j < a->n_inst && !in; j++)
			if (!strcmp(a->inst[j].id, ids[i]))
				in = &a->inst[j];
		if (!in) {
			if (first.code == PROVIDER_OK)
				cloudcall_status(&first, PROVIDER_NOT_FOUND, "%s is not an instance of the ASG %.128s",
						 ids[i], g->asg);
			continue;
		}
		if (in->st == INSTANCE_STOPPING || in->st == INSTANCE_GONE) {
			done++; /* already on its way out: nothing to ask */
			continue;
		}
		aws_query_init(&f, AWS_SERVICE_AUTOSCALING, "TerminateInstanceInAutoScalingGroup");
		aws_query_add(&f, "InstanceId", ids[i]);
		aws_query_add(&f, "ShouldDecrementDesiredCapacity", "true");
		if (aws_do(p, AWS_SERVICE_AUTOSCALING, true, &f, &d, &st) == 0) {
			done++;
			log_at(ap->log, LOG_INFO, clock_wall(ap->clock),
			       "aws: group %s: terminating %s (zone %s), ASG %.128s desired capacity lowered by one",
			       g->name, ids[i], in->zone, g->asg);
		} else if (first.code == PROVIDER_OK) {
			first = st;
		}
		aws_query_free(&f);
		xmltree_free(d);
	}
	provider_turn_give(ap->turns, g->name);
	aws_asgs_free(a, na);
	on_done(ctx, done, &first);
}

static void terminate_fleet(struct provider *p, const struct aws_group *g, const char *const *ids,
			    size_t n, provider_done_cb on_done, void *ctx)
{
	struct aws_prov *ap = AWS_PROV(p);
	struct provider_status st, first;
	size_t from, i;
	int done = 0;

	memset(&first, 0, sizeof(first));
	for (from = 0; from < n; from += TERMINATE_BATCH) {
		struct aws_query f;
		struct xmltree_doc *d = NULL;
		const struct xmltree_node *it;

		aws_query_init(&f, AWS_SERVICE_EC2, "TerminateInstances");
		for (i = 0; i < TERMINATE_BATCH && from + i < n; i++)
			aws_query_addf(&f, ids[from + i], "InstanceId.%zu", i + 1);
		if (aws_do(p, AWS_SERVICE_EC2, true, &f, &d, &st) == 0) {
			for (it = xmltree_first(xmltree_find(xmltree_root(d), "instancesSet"), "item"); it;
			     it = xmltree_next(it)) {
				done++;
				log_at(ap->log, LOG_INFO, clock_wall(ap->clock), "aws: group %s: terminating %s (%s)",
				       g->name, xmltree_text(it, "instanceId"), xmltree_text(it, "currentState/name"));
			}
		} else if (first.code == PROVIDER_OK) {
			first = st;
		}
		aws_query_free(&f);
		xmltree_free(d);
	}
	on_done(ctx, done, &first);
}

void aws_terminate(struct provider *p, const char *group, const char *const *ids, size_t n,
		   provider_done_cb on_done, void *ctx)
{
	struct aws_group g;
	struct provider_status st;

	if (aws_group_get(AWS_PROV(p), group, &g) < 0) {
		cloudcall_status(&st, PROVIDER_NOT_FOUND, "no node group %s in the cloud", group);
		on_done(ctx, 0, &st);
		return;
	}
	if (g.fleet)
		terminate_fleet(p, &g, ids, n, on_done, ctx);
	else
		terminate_asg(p, &g, ids, n, on_done, ctx);
}
