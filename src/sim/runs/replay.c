/*
 * sim/replay: one scenario, one policy, virtual time. Builds the world,
 * the reconciler and the actuator on one discrete-event executor, runs a
 * round every reconcile interval, samples the series, watches the
 * invariants, and sums the run up. Owns no output: see cli/simulate and
 * sim/report.
 */
#include "sim/runs/replay.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "engine/actuator.h"
#include "engine/budget.h"
#include "engine/interruptions.h"
#include "engine/reconciler.h"
#include "engine/round.h"
#include "log.h"
#include "policy/host.h"
#include "policy/param_text.h"
#include "providers/sim/sim.h"
#include "runtime/clock.h"
#include "runtime/executor.h"
#include "sched.h"
#include "sim/clouds/cloud.h"

#define DEFAULT_SAMPLES 1440
#define DEFAULT_SETTLE_NS (30 * 60 * CLOCK_NS_PER_S)
#define FAILING_ROUNDS_MAX 30     /* failed from the start this often: give up */

/* Everything one run holds; freed in one place. */
struct run {
	const struct sim_replay_opts *o;
	const struct sim_scenario *sc;
	const struct config *cfg;
	struct config *own_cfg;
	struct config cfg_copy;  /* the scenario's config without its params */
	struct clock *clock;
	struct executor *ex;
	struct sim_world *w;
	struct provider *prov;
	struct reconciler *rec;
	struct actuator *act;
	struct interruptions *intr; /* the cloud's notices, as the daemon keeps them */
	struct sim_result *out;
	int *registered;         /* per group: registered nodes at the last check */
	int *size;               /* per group: instances at the last check */
	uint64_t *launched_seen; /* per group: instances created at the last sample */
	int *removed_since;      /* per group: nodes gone since the last sample */
	int *disrupting;         /* per snapshot group: nodes being disrupted at the last round */
	size_t n_disrupting;
};

static void violation(struct run *r, uint64_t *counter, int64_t t_ns, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Counts one violation; the first is kept in words with its simulated
 * time of day ("at 14:05:20: ..."). */
static void violation(struct run *r, uint64_t *counter, int64_t t_ns, const char *fmt, ...)
{
	struct sim_violations *v = &r->out->v;
	time_t wall = (time_t)(r->sc->start_wall + t_ns / CLOCK_NS_PER_S);
	struct tm tm;
	va_list ap;
	int n;

	(*counter)++;
	if (v->first[0])
		return;
	gmtime_r(&wall, &tm);
	n = (int)strftime(v->first, sizeof(v->first), "at %H:%M:%S: ", &tm);
	if (n <= 0)
		return;
	va_start(ap, fmt);
	vsnprintf(v->first + n, sizeof(v->first) - (size_t)n, fmt, ap);
	va_end(ap);
}

uint64_t sim_violations_total(const struct sim_violations *v)
{
	return v->over_max + v->over_total + v->under_min + v->over_removals + v->over_budget +
	       v->protected_hit + v->extra_instances + v->stuck_pending + v->over_wait;
}

/*
 * The disruption budgets, as they held in what happened: no group has
 * more nodes being disrupted (drained, deleted or replaced, as the
 * actuator marks them at a round's start; nodes under an interruption
 * notice aside, which no budget holds) than the most any of its budgets
 * allows now for a budgeted reason, once that count has grown since the
 * last round (a window that closes over disruptions already running is
 * no breach, as with Karpenter).
 */
static void check_budgets(struct run *r, const struct snapshot *s, int64_t at_ns)
{
	static const enum disruption_reason reasons[] = {DISRUPTION_EMPTY, DISRUPTION_UNDERUTILIZED,
							 DISRUPTION_DRIFTED, DISRUPTION_EXPIRED};
	size_t g, i;

	if (r->n_disrupting < s->n_groups) {
		int *n = realloc(r->disrupting, (s->n_groups + 1) * sizeof(*n));

		if (!n)
			return;
		memset(n + r->n_disrupting, 0, (s->n_groups - r->n_disrupting) * sizeof(*n));
		r->disrupting = n;
		r->n_disrupting = s->n_groups;
	}
	for (g = 0; g < s->n_groups; g++) {
		const struct node_group *grp = &s->groups[g];
		const struct disruption_budget *list;
		int64_t most = 0;
		size_t nb, k;
		int busy = 0, prev = r->disrupting[g];

		for (i = 0; i < s->n_nodes; i++)
			busy += s->nodes[i].group == (int32_t)g && !s->nodes[i].interruption_kind &&
				(s->nodes[i].removing || s->nodes[i].replacing);
		r->disrupting[g] = busy;
		if (busy <= prev)
			continue;
		list = config_group_budgets(r->cfg, grp->name, &nb);
		for (k = 0; k < sizeof(reasons) / sizeof(reasons[0]); k++) {
			int64_t a = budget_allowed(list, nb, reasons[k], grp->current, s->now);

			if (a > most)
				most = a;
		}
		if (most != BUDGET_UNLIMITED && busy > most)
			violation(r, &r->out->v.over_budget, at_ns,
				  "group %s has %d node(s) being disrupted, its disruption budgets allow %lld of its %d now",
				  grp->name, busy, (long long)most, grp->current);
	}
}

/* The config the run uses: the scenario's (params only for its own
 * policy), or the defaults with the scenario's protected pods and safety
 * limits (borrowed from the scenario, which outlives the run). */
static int run_config(struct run *r, struct errbuf *err)
{
	const struct sim_scenario *sc = r->sc;
	struct config_opts co;
	struct config *c;

	if (sc->config) {
		char *a = realpath(sc->config->policy_path, NULL);
		char *b = realpath(r->o->policy_path, NULL);
		bool same = a && b && strcmp(a, b) == 0;

		free(a);
		free(b);
		if (same) {
			r->cfg = sc->config;
		} else {
			r->cfg_copy = *sc->config;
			r->cfg_copy.params.items = NULL;
			r->cfg_copy.params.n_items = 0;
			r->cfg = &r->cfg_copy;
		}
		return 0;
	}
	memset(&co, 0, sizeof(co));
	co.flags = CONFIG_OFFLINE;
	c = config_parse_opts("", 0, sc->source, &co, err);
	if (!c)
		return -1;
	c->policy_path = r->o->policy_path;
	if (sc->protected_pods) {
		c->protected_pods = *sc->protected_pods;
		c->protected_pod_selector = sc->protected_text;
	}
	if (sc->max_nodes_total > 0)
		c->max_nodes_total = sc->max_nodes_total;
	if (sc->max_scale_down_per_round > 0)
		c->max_scale_down_per_round = sc->max_scale_down_per_round;
	r->own_cfg = c;
	r->cfg = c;
	return 0;
}

static int series_grow(struct sim_series *s)
{
	size_t cap = s->cap ? s->cap * 2 : 256, g = s->n_groups ? s->n_groups : 1;
	void *p;

#define GROW(field, per)                                                   \
	do {                                                               \
		p = realloc(s->field, cap * (per) * sizeof(*s->field));    \
		if (!p)                                                    \
			return -1;                                         \
		s->field = p;                                              \
	} while (0)
	GROW(t_ns, 1);
	GROW(nodes, g);
	GROW(booting, g);
	GROW(pending, 1);
	GROW(util_cpu, 1);
	GROW(util_mem, 1);
	GROW(cost, 1);
	GROW(launched, g);
	GROW(removed, g);
#undef GROW
	s->cap = cap;
	return 0;
}

/* Cost and node-hours so far, from the cloud's billable instance time;
 * each group's share in 'per' when not NULL (n_groups of them), summed in
 * the same order so the shares add up to the totals exactly. */
static void cost_now(struct run *r, double *cost, double *hours, struct sim_group_cost *per)
{
	size_t g;

	*cost = *hours = 0;
	for (g = 0; g < r->sc->n_groups; g++) {
		struct sim_group_stats gs;
		double h, c;

		sim_cloud_group_stats(r->w->cloud, g, &gs);
		h = (double)gs.instance_ns / 3600e9;
		c = h * r->sc->groups[g].price_per_hour;
		*hours += h;
		*cost += c;
		if (per) {
			per[g].node_hours = h;
			per[g].cost = c;
		}
	}
}

static int sample(struct run *r, int64_t t_ns, const struct sim_counts *c)
{
	struct sim_series *s = &r->out->series;
	double hours;
	size_t g, i;

	if (s->n == s->cap && series_grow(s) < 0)
		return -1;
	i = s->n++;
	s->t_ns[i] = t_ns;
	for (g = 0; g < s->n_groups; g++) {
		int64_t ns;
		int reg = sim_cluster_group_nodes(r->w->cluster, g, &ns);
		int target = sim_cloud_target(r->w->cloud, g);

		struct sim_group_stats gs;

		s->nodes[i * s->n_groups + g] = reg;
		s->booting[i * s->n_groups + g] = target > reg ? target - reg : 0;
		sim_cloud_group_stats(r->w->cloud, g, &gs);
		s->launched[i * s->n_groups + g] =
			gs.launched > r->launched_seen[g] ? (int)(gs.launched - r->launched_seen[g]) : 0;
		r->launched_seen[g] = gs.launched;
		s->removed[i * s->n_groups + g] = r->removed_since[g];
		r->removed_since[g] = 0;
	}
	s->pending[i] = c->pods_pending;
	s->util_cpu[i] = c->cpu_alloc_m > 0 ? (double)c->cpu_req_m / (double)c->cpu_alloc_m : 0;
	s->util_mem[i] = c->mem_alloc > 0 ? (double)c->mem_req / (double)c->mem_alloc : 0;
	cost_now(r, &s->cost[i], &hours, NULL);
	return 0;
}

/* Limits on instances and removals, checked between rounds. */
static void check_groups(struct run *r, int64_t t_ns)
{
	struct sim_violations *v = &r->out->v;
	int64_t total = 0;
	size_t g;

	for (g = 0; g < r->sc->n_groups; g++) {
		const struct node_group *ng = &r->sc->groups[g];
		int target = sim_cloud_target(r->w->cloud, g);
		int64_t ns;
		int reg = sim_cluster_group_nodes(r->w->cluster, g, &ns);

		total += target;
		if (target > ng->max)
			violation(r, &v->over_max, t_ns, "group %s has %d instances, above its max of %d",
				  ng->name, target, ng->max);
		/* the group's size (instances, booting ones too) shrank below min
		 * as a node went away; an instance that never booted and was
		 * given up is not a removal */
		if (target < ng->min && target < r->size[g] && reg < r->registered[g])
			violation(r, &v->under_min, t_ns,
				  "group %s went from %d to %d instances as a node was removed, below its min of %d",
				  ng->name, r->size[g], target, ng->min);
		r->registered[g] = reg;
		r->size[g] = target;
	}
	if (r->cfg->max_nodes_total > 0 && total > r->cfg->max_nodes_total)
		violation(r, &v->over_total, t_ns, "%lld instances, above max_nodes_total %lld",
			  (long long)total, (long long)r->cfg->max_nodes_total);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static double percentile(const int64_t *v, size_t n, double p)
{
	if (n == 0)
		return 0;
	return (double)v[(size_t)(p * (double)(n - 1) + 0.5)] / (double)CLOCK_NS_PER_S;
}

/*
 * The points of the waits' distribution from the sorted 'v' (n > 0): at
 * most SIM_CDF_POINTS, each at the last of equal waits so its share is
 * exact, the longest wait last.
 */
static int wait_cdf(struct sim_wait_cdf *cdf, const int64_t *v, size_t n)
{
	size_t j, idx, last = SIZE_MAX, k = n < SIM_CDF_POINTS ? n : SIM_CDF_POINTS;

	cdf->pods = n;
	if (n == 0)
		return 0;
	cdf->wait_s = malloc(k * sizeof(*cdf->wait_s));
	cdf->frac = malloc(k * sizeof(*cdf->frac));
	if (!cdf->wait_s || !cdf->frac)
		return -1;
	for (j = 1; j <= k; j++) {
		idx = (j * n + k - 1) / k - 1; /* ceil(j n / k) - 1 */
		while (idx + 1 < n && v[idx + 1] == v[idx])
			idx++;
		if (last != SIZE_MAX && idx <= last)
			continue;
		cdf->wait_s[cdf->n] = (double)v[idx] / (double)CLOCK_NS_PER_S;
		cdf->frac[cdf->n] = (double)(idx + 1) / (double)n;
		cdf->n++;
		last = idx;
	}
	return 0;
}

/* Does any group with room left take pod 'p' on an empty node? */
static bool fits_some_group(struct run *r, const struct pod *p)
{
	size_t g;

	for (g = 0; g < r->sc->n_groups; g++)
		if (sim_cloud_target(r->w->cloud, g) < r->sc->groups[g].max &&
		    sched_fits_template(p, &r->sc->groups[g], NULL, 0) == SCHED_FITS)
			return true;
	return false;
}

/* "45m10s", "2h05m", "50s", to the nearest second (minute) as the table shows it. */
static void format_wait(char *out, size_t len, int64_t ns)
{
	int64_t sec = (ns + CLOCK_NS_PER_S / 2) / CLOCK_NS_PER_S;

	if (sec >= 3600)
		snprintf(out, len, "%lldh%02lldm", (long long)((sec + 30) / 3600),
			 (long long)((sec + 30) / 60 % 60));
	else if (sec >= 60)
		snprintf(out, len, "%lldm%02llds", (long long)(sec / 60), (long long)(sec % 60));
	else
		snprintf(out, len, "%llds", (long long)sec);
}

/*
 * The scenario's expect.max_pending: every pod that waited longer to be
 * bound, or still waits at the end, is a violation; the first names the
 * one that waited longest. 'longest' is the pending pod that waited
 * longest ("" none) and 'longest_ns' its wait so far.
 */
static void check_waits(struct run *r, const struct sim_stats *ss, const char *longest,
			int64_t longest_ns, uint64_t pending_over, int64_t t_ns)
{
	struct sim_violations *v = &r->out->v;
	int64_t bound = r->sc->expect_max_pending_ns;
	uint64_t over = pending_over;
	char waited[32], limit[32];
	size_t i;

	if (bound <= 0)
		return;
	for (i = 0; i < ss->n_pending_ns; i++)
		if (ss->pending_ns[i] > bound)
			over++;
	if (!over)
		return;
	format_wait(limit, sizeof(limit), bound);
	if (ss->pending_ns_max >= longest_ns && ss->pending_ns_max > bound) {
		format_wait(waited, sizeof(waited), ss->pending_ns_max);
		violation(r, &v->over_wait, ss->pending_max_bound_ns - r->w->t0,
			  "pod %s was bound after waiting %s, the scenario expects at most %s (expect.max_pending); %llu pod(s) waited longer than that",
			  ss->pending_max_pod, waited, limit, (unsigned long long)over);
	} else {
		format_wait(waited, sizeof(waited), longest_ns);
		violation(r, &v->over_wait, t_ns,
			  "pod %s is still pending after %s, the scenario expects at most %s (expect.max_pending); %llu pod(s) waited longer than that",
			  longest, waited, limit, (unsigned long long)over);
	}
	v->over_wait += over - 1;
}

/*
 * The end: waits (pods still pending count with what they waited so far),
 * pods stuck though a group could take them, pods that waited longer than
 * the scenario expects, totals.
 */
static int finish(struct run *r, int64_t t_ns, struct errbuf *err)
{
	struct sim_result *out = r->out;
	struct sim_violations *v = &out->v;
	struct snapshot *s = NULL;
	struct sim_stats ss;
	struct sim_group_stats gs;
	struct actuator_stats ast;
	int64_t *waits, settle = r->o->settle_ns ? r->o->settle_ns : DEFAULT_SETTLE_NS;
	int64_t longest_ns = -1;
	char longest[512] = "";
	size_t n = 0, i, g;
	uint64_t created = 0, pending_over = 0;
	int cdf_rc;

	if (sim_cluster_snapshot(r->w->cluster, false, &s, err) < 0)
		return -1;
	sim_cluster_get_stats(r->w->cluster, &ss);
	waits = malloc((ss.n_pending_ns + s->n_pending + 1) * sizeof(*waits));
	if (!waits) {
		snapshot_free(s);
		return errbuf_set(err, "out of memory");
	}
	if (ss.n_pending_ns)
		memcpy(waits, ss.pending_ns, ss.n_pending_ns * sizeof(*waits));
	n = ss.n_pending_ns;
	out->wait_max = (double)ss.pending_ns_max / (double)CLOCK_NS_PER_S;
	for (i = 0; i < s->n_pending; i++) {
		const struct pod *p = &s->pods[s->pending[i]];
		int64_t waited = (s->now - p->created) * CLOCK_NS_PER_S;

		if (p->flags & POD_TERMINATING)
			continue;
		if (waited < 0)
			waited = 0;
		waits[n++] = waited;
		if ((double)waited / (double)CLOCK_NS_PER_S > out->wait_max)
			out->wait_max = (double)waited / (double)CLOCK_NS_PER_S;
		if (r->sc->expect_max_pending_ns > 0 && waited > r->sc->expect_max_pending_ns)
			pending_over++;
		if (waited > longest_ns) {
			longest_ns = waited;
			snprintf(longest, sizeof(longest), "%s/%s", p->ns, p->name);
		}
		if (waited > settle && fits_some_group(r, p))
			violation(r, &v->stuck_pending, t_ns,
				  "pod %s/%s pending for %llds (%lldh%02lldm) at the end, though a group with room fits it",
				  p->ns, p->name, (long long)(waited / CLOCK_NS_PER_S),
				  (long long)(waited / CLOCK_NS_PER_S / 3600),
				  (long long)(waited / CLOCK_NS_PER_S / 60 % 60));
	}
	check_waits(r, &ss, longest, longest_ns, pending_over, t_ns);
	qsort(waits, n, sizeof(*waits), cmp_i64);
	out->wait_p50 = percentile(waits, n, 0.50);
	out->wait_p90 = percentile(waits, n, 0.90);
	out->wait_p95 = percentile(waits, n, 0.95);
	out->wait_p99 = percentile(waits, n, 0.99);
	cdf_rc = wait_cdf(&out->waits, waits, n);
	free(waits);
	snapshot_free(s);
	if (cdf_rc < 0)
		return errbuf_set(err, "out of memory");

	out->group_cost = calloc(r->sc->n_groups + 1, sizeof(*out->group_cost));
	if (!out->group_cost)
		return errbuf_set(err, "out of memory");
	out->n_group_cost = r->sc->n_groups;
	cost_now(r, &out->cost, &out->node_hours, out->group_cost);
	out->evictions = ss.evictions;
	out->killed = ss.pods_killed;
	out->interrupted = ss.interrupted_nodes;
	out->moved = ss.interrupted_moved;
	out->died = ss.interrupted_killed;
	out->lost = ss.bare_pods_lost;
	out->unused = ss.nodes_unused;
	out->protected_killed = ss.protected_disrupted;
	if (ss.protected_disrupted)
		violation(r, &v->protected_hit, t_ns, "%llu protected pod(s) evicted or killed",
			  (unsigned long long)ss.protected_disrupted);
	for (g = 0; g < r->sc->n_groups; g++) {
		sim_cloud_group_stats(r->w->cloud, g, &gs);
		created += gs.launched;
	}
	if (created > out->launches)
		violation(r, &v->extra_instances, t_ns,
			  "the cloud created %llu instances, the accepted plans asked for %llu",
			  (unsigned long long)created, (unsigned long long)out->launches);
	actuator_get_stats(r->act, &ast);
	out->removed = ast.nodes_deleted;
	out->replaces = ast.replaces_started;
	out->replaced = ast.replaces_done;
	out->replace_failed = ast.replaces_failed;
	return 0;
}

/* The cluster's changes: counts the nodes of each group that leave it. */
static void on_change(void *ud, const struct sim_change *ch)
{
	struct run *r = ud;
	size_t g;

	if (ch->kind != SIM_OBJ_NODE || !ch->gone || !ch->group)
		return;
	for (g = 0; g < r->sc->n_groups; g++)
		if (r->sc->groups[g].name && strcmp(r->sc->groups[g].name, ch->group) == 0) {
			r->removed_since[g]++;
			return;
		}
}

/*
 * The params the run's policy gets, as text for the report: the policy
 * loaded once more with the run's config (the reconciler's own copy is
 * not reachable from here), read and freed.
 */
static int run_params(struct run *r, struct errbuf *err)
{
	struct sim_result *out = r->out;
	const struct param *cp = &r->cfg->params;
	struct sandbox_limits lim;
	struct param_text *pt = NULL;
	struct policy *p;
	ssize_t n;
	size_t i, j;

	memset(&lim, 0, sizeof(lim));
	lim.instructions = r->cfg->policy_instructions;
	lim.memory = r->cfg->policy_memory;
	lim.cpu_ms = r->cfg->policy_timeout_ms;
	p = policy_load(r->o->policy_path, NULL, &lim, cp, err);
	if (!p)
		return -1;
	n = param_text_list(p, &pt);
	policy_free(p);
	if (n < 0)
		return errbuf_set(err, "out of memory");
	out->params = calloc((size_t)n + 1, sizeof(*out->params));
	if (!out->params) {
		param_text_free(pt, (size_t)n);
		return errbuf_set(err, "out of memory");
	}
	for (i = 0; i < (size_t)n; i++) {
		struct sim_param *sp = &out->params[i];

		sp->key = pt[i].key;
		sp->value = pt[i].value;
		sp->dflt = pt[i].dflt;
		for (j = 0; j < cp->n_items; j++)
			if (cp->items[j].key && strcmp(cp->items[j].key, sp->key) == 0)
				sp->from_config = true;
	}
	out->n_params = (size_t)n;
	free(pt); /* the strings are out->params' now */
	if (cp->n_items && r->cfg->source)
		snprintf(out->params_from, sizeof(out->params_from), "%s", r->cfg->source);
	return 0;
}

static int run_rounds(struct run *r, struct errbuf *err)
{
	const struct sim_scenario *sc = r->sc;
	struct sim_result *out = r->out;
	struct logger err_log = log_stderr(LOG_ERROR);
	const struct logger *log = r->o->log ? r->o->log : &err_log;
	struct sim_counts counts;
	int64_t step = r->cfg->reconcile_interval_ms * CLOCK_NS_PER_MS;
	int64_t t0 = clock_now(r->clock), t, rounds, every;
	size_t max = r->o->max_samples ? r->o->max_samples : DEFAULT_SAMPLES;
	uint64_t k = 0;

	if (step <= 0)
		return errbuf_set(err, "the reconcile interval must be positive");
	rounds = (sc->duration_ns + step - 1) / step;
	every = (rounds + (int64_t)max - 1) / (int64_t)max;
	if (every < 1)
		every = 1;
	for (t = t0; t < t0 + sc->duration_ns; t += step, k++) {
		struct snapshot *s = NULL;
		struct round_stats rs;

		executor_run_until(r->ex, t);
		check_groups(r, t - t0);
		if (sim_cluster_snapshot(r->w->cluster, false, &s, err) < 0)
			return -1;
		/* the interrupt faults' notices reach the policy as the daemon's do */
		interruptions_poll(r->intr, r->prov, log, s->now);
		interruptions_mark(r->intr, s, log, NULL);
		if (round_run(r->rec, r->act, s, log, &rs, err) < 0) {
			snapshot_free(s);
			return -1;
		}
		check_budgets(r, s, t - t0);
		snapshot_free(s);
		out->rounds++;
		out->policy_failures += rs.policy_failed;
		/* a policy that has failed every round from the start cannot be
		 * compared; stop rather than burn its budget all day */
		if (rs.policy_failed && out->policy_failures == out->rounds &&
		    out->rounds >= FAILING_ROUNDS_MAX)
			return errbuf_set(err, "the policy failed in each of the first %llu rounds; the last time: %s",
					  (unsigned long long)out->rounds, rs.error);
		out->rejected += rs.rejected;
		out->policy_ms += rs.policy_ms;
		out->launches += (uint64_t)rs.instances;
		if ((int64_t)rs.removals > r->cfg->max_scale_down_per_round)
			violation(r, &out->v.over_removals, t - t0,
				  "one round removes %zu nodes, max_scale_down_per_round is %lld",
				  rs.removals, (long long)r->cfg->max_scale_down_per_round);
		sim_cluster_counts(r->w->cluster, &counts);
		if (counts.nodes > out->peak_nodes)
			out->peak_nodes = counts.nodes;
		if ((int64_t)k % every == 0 && sample(r, t - t0, &counts) < 0)
			return errbuf_set(err, "out of memory");
		if (r->o->progress)
			r->o->progress(r->o->progress_ud,
				       (double)(t + step - t0) / (double)sc->duration_ns, &counts);
	}
	executor_run_until(r->ex, t0 + sc->duration_ns);
	check_groups(r, sc->duration_ns);
	sim_cluster_counts(r->w->cluster, &counts);
	if (sample(r, sc->duration_ns, &counts) < 0)
		return errbuf_set(err, "out of memory");
	return finish(r, sc->duration_ns, err);
}

int sim_replay(const struct sim_replay_opts *o, struct sim_result *out, struct errbuf *err)
{
	const struct sim_scenario *sc = o->sc;
	struct logger err_log = log_stderr(LOG_ERROR);
	const struct logger *log = o->log ? o->log : &err_log;
	struct provider_limits lim;
	struct actuator_config acfg;
	struct kubeops kops;
	struct run r;
	size_t g;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	memset(&r, 0, sizeof(r));
	snprintf(out->policy, sizeof(out->policy), "%s", o->policy_path);
	out->series.n_groups = sc->n_groups;
	r.o = o;
	r.sc = sc;
	r.out = out;
	r.registered = calloc(sc->n_groups + 1, sizeof(*r.registered));
	r.size = calloc(sc->n_groups + 1, sizeof(*r.size));
	r.launched_seen = calloc(sc->n_groups + 1, sizeof(*r.launched_seen));
	r.removed_since = calloc(sc->n_groups + 1, sizeof(*r.removed_since));
	if (!r.registered || !r.size || !r.launched_seen || !r.removed_since) {
		errbuf_set(err, "out of memory");
		goto out;
	}
	if (run_config(&r, err) < 0)
		goto out;
	r.rec = reconciler_new(r.cfg, o->policy_path, err);
	if (!r.rec || run_params(&r, err) < 0)
		goto out;
	r.clock = vclock_new(sc->start_wall);
	r.ex = r.clock ? executor_new_virtual(r.clock) : NULL;
	if (!r.ex) {
		errbuf_set(err, "out of memory");
		goto out;
	}
	r.w = sim_world_new(sc, r.ex, err);
	if (!r.w)
		goto out;
	/* what the world starts with is neither a scale-up nor a removal */
	for (g = 0; g < sc->n_groups; g++) {
		struct sim_group_stats gs;

		sim_cloud_group_stats(r.w->cloud, g, &gs);
		r.launched_seen[g] = gs.launched;
	}
	sim_cluster_set_watch(r.w->cluster, on_change, &r);
	provider_limits_from(&lim, r.cfg);
	r.prov = sim_provider_new(r.w->cloud, &lim, err);
	if (!r.prov)
		goto out;
	r.intr = interruptions_new();
	if (!r.intr) {
		errbuf_set(err, "out of memory");
		goto out;
	}
	sim_cluster_kubeops(r.w->cluster, &kops);
	actuator_config_from(&acfg, r.cfg);
	acfg.seed = sc->seed;
	r.act = actuator_new(r.ex, r.prov, &kops, &acfg, log);
	if (!r.act) {
		errbuf_set(err, "out of memory");
		goto out;
	}
	rc = run_rounds(&r, err);
out:
	if (r.ex)
		executor_shutdown(r.ex, clock_now(r.clock));
	actuator_free(r.act);
	interruptions_free(r.intr);
	provider_free(r.prov);
	if (r.w)
		sim_cluster_set_watch(r.w->cluster, NULL, NULL);
	sim_world_free(r.w);
	reconciler_free(r.rec);
	config_free(r.own_cfg);
	if (r.clock)
		vclock_free(r.clock);
	free(r.registered);
	free(r.size);
	free(r.launched_seen);
	free(r.removed_since);
	free(r.disrupting);
	if (rc < 0)
		sim_result_free(out);
	return rc;
}

void sim_result_free(struct sim_result *r)
{
	struct sim_series *s = &r->series;
	size_t i;

	for (i = 0; r->params && i < r->n_params; i++) {
		free(r->params[i].key);
		free(r->params[i].value);
		free(r->params[i].dflt);
	}
	free(r->params);
	r->params = NULL;
	r->n_params = 0;
	free(r->group_cost);
	r->group_cost = NULL;
	r->n_group_cost = 0;
	free(r->waits.wait_s);
	free(r->waits.frac);
	memset(&r->waits, 0, sizeof(r->waits));

	free(s->t_ns);
	free(s->nodes);
	free(s->booting);
	free(s->pending);
	free(s->util_cpu);
	free(s->util_mem);
	free(s->cost);
	free(s->launched);
	free(s->removed);
	memset(s, 0, sizeof(*s));
}
