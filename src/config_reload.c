/*
 * config_reload: the settings of a reread config that need a restart,
 * found by comparing field by field, reported by their YAML keys and put
 * back to the running values; and the safety values it loosens.
 */
#include "config_reload.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"

struct report {
	struct buf b;
	size_t n;
};

static void note(struct report *r, const char *key)
{
	if (r->n++)
		buf_puts(&r->b, ", ");
	buf_puts(&r->b, key);
}

static bool str_differs(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") != 0;
}

#define KEEP_STR(key, f) \
	do { \
		if (str_differs(running->f, next->f)) { \
			note(&r, key); \
			next->f = running->f; \
		} \
	} while (0)
#define KEEP_VAL(key, f) \
	do { \
		if (running->f != next->f) { \
			note(&r, key); \
			next->f = running->f; \
		} \
	} while (0)

/* Whether the node groups differ in what a cloud provider was made from:
 * their names and order, or their provider sections. */
static bool cloud_groups_differ(const struct config *a, const struct config *b)
{
	size_t i;

	if (a->n_groups != b->n_groups)
		return true;
	for (i = 0; i < a->n_groups; i++) {
		const struct config_group_extra *x = a->group_extra ? &a->group_extra[i] : NULL;
		const struct config_group_extra *y = b->group_extra ? &b->group_extra[i] : NULL;

		if (strcmp(a->groups[i].name, b->groups[i].name))
			return true;
		if (!x || !y) {
			if (x != y)
				return true;
			continue;
		}
#define CLOUD_GROUP_DIFFERS(cloud) \
		if (config_##cloud##_group_differs(&x->cloud, &y->cloud)) \
			return true;
		LUASCALE_CLOUDS(CLOUD_GROUP_DIFFERS)
#undef CLOUD_GROUP_DIFFERS
	}
	return false;
}

size_t config_keep_restart_only(const struct config *running, struct config *next,
				char *report, size_t report_len)
{
	struct report r = {BUF_INIT, 0};

	/* the connection to the API server */
	KEEP_STR("cluster.kubeconfig", kubeconfig);
	KEEP_STR("cluster.context", context);
	KEEP_VAL("cluster.in_cluster", in_cluster);
	KEEP_VAL("cluster.write_qps", write_qps);
	KEEP_VAL("cluster.write_burst", write_burst);
	/* the provider and its token buckets */
	KEEP_STR("provider.kind", provider_kind);
	KEEP_VAL("provider.qps", provider_qps);
	KEEP_VAL("provider.burst", provider_burst);
	KEEP_VAL("provider.read_qps", provider_read_qps);
	KEEP_VAL("provider.read_burst", provider_read_burst);
	/* each cloud's provider.<cloud> section */
#define CLOUD_KEEP(cloud) \
	if (config_##cloud##_differs(&running->cloud, &next->cloud)) { \
		note(&r, "provider." #cloud); \
		next->cloud = running->cloud; \
	}
	LUASCALE_CLOUDS(CLOUD_KEEP)
#undef CLOUD_KEEP
	/* a cloud provider was made from the groups it manages */
	if (running->provider_kind[0] && strcmp(running->provider_kind, "sim") != 0 &&
	    cloud_groups_differ(running, next)) {
		note(&r, "node_groups (names or cloud sections, for the cloud provider)");
		next->groups = running->groups;
		next->n_groups = running->n_groups;
		next->group_extra = running->group_extra;
	}
	/* the actuator's settings */
	KEEP_VAL("provisioning.max_provision_time", max_provision_ms);
	KEEP_VAL("provisioning.backoff_initial", backoff_initial_ms);
	KEEP_VAL("provisioning.backoff_max", backoff_max_ms);
	KEEP_VAL("provisioning.drain_timeout", drain_timeout_ms);
	KEEP_VAL("provisioning.bind_pods", bind_pods);
	KEEP_VAL("safety.max_concurrent_drains", max_concurrent_drains);
	if (str_differs(running->protected_pod_selector, next->protected_pod_selector)) {
		/* the plan checks and the drains must agree on what is protected */
		note(&r, "safety.protected_pod_selector");
		next->protected_pod_selector = running->protected_pod_selector;
		next->protected_pods = running->protected_pods;
	}
	/* the loop's */
	KEEP_VAL("intervals.reconcile", reconcile_interval_ms);
	KEEP_VAL("intervals.batch_idle", batch_idle_ms);
	KEEP_VAL("intervals.batch_max", batch_max_ms);
	KEEP_VAL("intervals.batch_new_pod", batch_new_pod_ms);
	KEEP_VAL("log.format", log_json);
	KEEP_VAL("log.level", log_level);
	KEEP_VAL("status.enabled", status_enabled);
	KEEP_STR("status.namespace", status_namespace);
	KEEP_STR("status.name", status_name);
	KEEP_VAL("status.interval", status_interval_ms);
	KEEP_VAL("events.enabled", events_enabled);
	KEEP_VAL("reload.watch", reload_watch);
	KEEP_VAL("reload.debounce", reload_debounce_ms);
	/* the election and the endpoint are set up once, at the start */
	KEEP_VAL("leader_election.enabled", leader_election);
	KEEP_STR("leader_election.namespace", lease_namespace);
	KEEP_STR("leader_election.name", lease_name);
	KEEP_VAL("leader_election.lease_duration", lease_duration_ms);
	KEEP_VAL("leader_election.renew_deadline", renew_deadline_ms);
	KEEP_VAL("leader_election.retry_period", retry_period_ms);
	KEEP_STR("server.listen", server_listen);
	KEEP_VAL("server.enabled", server_enabled);
	if (report && report_len) {
		const char *t = r.b.data && !r.b.oom ? r.b.data : "";

		if (strlen(t) >= report_len && report_len > 4)
			snprintf(report, report_len, "%.*s...", (int)(report_len - 4), t);
		else
			snprintf(report, report_len, "%s", t);
	}
	buf_free(&r.b);
	return r.n;
}

/* The loosened values found so far: the first 'max' written, all counted. */
struct loosening {
	struct config_loosened *out;
	size_t max, n;
};

static struct config_loosened *loosen(struct loosening *l, const char *key, bool restart)
{
	struct config_loosened *e = l->n < l->max ? &l->out[l->n] : NULL;

	l->n++;
	if (e) {
		memset(e, 0, sizeof(*e));
		snprintf(e->key, sizeof(e->key), "%s", key);
		e->restart = restart;
	}
	return e;
}

/* A count that is more when higher: the key, its two values. */
static void loosen_count(struct loosening *l, const char *key, int64_t from, int64_t to,
			 bool restart)
{
	struct config_loosened *e;

	if (to <= from || !(e = loosen(l, key, restart)))
		return;
	snprintf(e->from, sizeof(e->from), "%lld", (long long)from);
	snprintf(e->to, sizeof(e->to), "%lld", (long long)to);
}

/* A duration as the config writes it ("30s", "5m", "1h30m", "250ms"). */
static void fmt_duration(int64_t ms, char *out, size_t len)
{
	int64_t h = ms / 3600000, m = ms % 3600000 / 60000, sec = ms % 60000 / 1000, rest = ms % 1000;
	size_t n = 0;

	out[0] = '\0';
	if (h)
		n += (size_t)snprintf(out + n, len - n, "%lldh", (long long)h);
	if (m && n < len)
		n += (size_t)snprintf(out + n, len - n, "%lldm", (long long)m);
	if (sec && n < len)
		n += (size_t)snprintf(out + n, len - n, "%llds", (long long)sec);
	if ((rest || !ms) && n < len)
		snprintf(out + n, len - n, "%lldms", (long long)rest);
}

static bool optout_in(const struct config_optout *o, const struct config *c)
{
	size_t i;

	for (i = 0; i < c->n_optouts; i++)
		if (c->optouts[i].pod == o->pod && !strcmp(c->optouts[i].key, o->key) &&
		    !strcmp(c->optouts[i].value, o->value))
			return true;
	return false;
}

/* "[node: a, pod: b=yes]": the list as a person reads it (truncated "..."). */
static void fmt_optouts(const struct config *c, char *out, size_t len)
{
	struct buf b = BUF_INIT;
	size_t i;

	buf_puts(&b, "[");
	for (i = 0; i < c->n_optouts; i++) {
		const struct config_optout *o = &c->optouts[i];

		buf_printf(&b, "%s%s: %s", i ? ", " : "", o->pod ? "pod" : "node", o->key);
		if (strcmp(o->value, "true") != 0)
			buf_printf(&b, "=%s", o->value);
	}
	buf_puts(&b, "]");
	if (b.oom || !b.data)
		snprintf(out, len, "(out of memory)");
	else if (b.len >= len && len > 4)
		snprintf(out, len, "%.*s...", (int)(len - 4), b.data);
	else
		snprintf(out, len, "%s", b.data);
	buf_free(&b);
}

size_t config_safety_loosened(const struct config *running, const struct config *next,
			      struct config_loosened *out, size_t max)
{
	struct loosening l = {out, max, 0};
	struct config_loosened *e;
	size_t i;

	if (running->max_nodes_total > 0 &&
	    (next->max_nodes_total == 0 || next->max_nodes_total > running->max_nodes_total) &&
	    (e = loosen(&l, "safety.max_nodes_total", false))) {
		snprintf(e->from, sizeof(e->from), "%lld", (long long)running->max_nodes_total);
		if (next->max_nodes_total == 0)
			snprintf(e->to, sizeof(e->to), "0 (no cap)");
		else
			snprintf(e->to, sizeof(e->to), "%lld", (long long)next->max_nodes_total);
	}
	loosen_count(&l, "safety.max_scale_down_per_round", running->max_scale_down_per_round,
		     next->max_scale_down_per_round, false);
	loosen_count(&l, "safety.max_actions_per_round", running->max_actions_per_round,
		     next->max_actions_per_round, false);
	loosen_count(&l, "safety.max_concurrent_drains", running->max_concurrent_drains,
		     next->max_concurrent_drains, true);
	if (running->evicted_pods_must_fit && !next->evicted_pods_must_fit &&
	    (e = loosen(&l, "safety.evicted_pods_must_fit", false))) {
		snprintf(e->from, sizeof(e->from), "true");
		snprintf(e->to, sizeof(e->to), "false");
	}
	if ((running->protected_pod_selector ? *running->protected_pod_selector : 0) &&
	    str_differs(running->protected_pod_selector, next->protected_pod_selector) &&
	    (e = loosen(&l, "safety.protected_pod_selector", true))) {
		snprintf(e->from, sizeof(e->from), "\"%s\"", running->protected_pod_selector);
		if (next->protected_pod_selector && *next->protected_pod_selector)
			snprintf(e->to, sizeof(e->to), "\"%s\"", next->protected_pod_selector);
		else
			snprintf(e->to, sizeof(e->to), "\"\" (none)");
	}
	if (next->max_cache_staleness_ms > running->max_cache_staleness_ms &&
	    (e = loosen(&l, "safety.max_cache_staleness", false))) {
		fmt_duration(running->max_cache_staleness_ms, e->from, sizeof(e->from));
		fmt_duration(next->max_cache_staleness_ms, e->to, sizeof(e->to));
	}
	for (i = 0; i < running->n_optouts; i++)
		if (!optout_in(&running->optouts[i], next))
			break;
	if (i < running->n_optouts && (e = loosen(&l, "safety.do_not_disrupt_annotations", false))) {
		fmt_optouts(running, e->from, sizeof(e->from));
		fmt_optouts(next, e->to, sizeof(e->to));
	}
	return l.n;
}
