/*
 * config_reload: the settings of a reread config that need a restart,
 * found by comparing field by field, reported by their YAML keys and put
 * back to the running values.
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
		if (x->aws_set != y->aws_set || x->gce_set != y->gce_set ||
		    str_differs(x->aws.asg, y->aws.asg) || x->aws.fleet != y->aws.fleet ||
		    str_differs(x->aws.launch_template, y->aws.launch_template) ||
		    x->aws.n_instance_types != y->aws.n_instance_types ||
		    x->aws.n_placements != y->aws.n_placements || x->aws.spot != y->aws.spot ||
		    str_differs(x->gce.mig, y->gce.mig) || str_differs(x->gce.zone, y->gce.zone) ||
		    str_differs(x->gce.region, y->gce.region))
			return true;
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
	if (str_differs(running->aws.region, next->aws.region) ||
	    str_differs(running->aws.cluster_name, next->aws.cluster_name) ||
	    running->aws.auto_discovery != next->aws.auto_discovery ||
	    str_differs(running->aws.endpoint_ec2, next->aws.endpoint_ec2) ||
	    str_differs(running->aws.endpoint_autoscaling, next->aws.endpoint_autoscaling) ||
	    str_differs(running->aws.endpoint_sts, next->aws.endpoint_sts)) {
		note(&r, "provider.aws");
		next->aws = running->aws;
	}
	if (str_differs(running->gce.project, next->gce.project) ||
	    str_differs(running->gce.credentials_file, next->gce.credentials_file) ||
	    str_differs(running->gce.endpoint_compute, next->gce.endpoint_compute) ||
	    str_differs(running->gce.endpoint_token, next->gce.endpoint_token) ||
	    str_differs(running->gce.metadata_host, next->gce.metadata_host) ||
	    running->gce.n_discovery != next->gce.n_discovery) {
		note(&r, "provider.gce");
		next->gce = running->gce;
	}
	if (str_differs(running->azure.cloud, next->azure.cloud) ||
	    str_differs(running->azure.subscription_id, next->azure.subscription_id) ||
	    str_differs(running->azure.resource_group, next->azure.resource_group) ||
	    str_differs(running->azure.tenant_id, next->azure.tenant_id) ||
	    str_differs(running->azure.client_id, next->azure.client_id) ||
	    str_differs(running->azure.auth, next->azure.auth) ||
	    str_differs(running->azure.client_secret_file, next->azure.client_secret_file) ||
	    str_differs(running->azure.federated_token_file, next->azure.federated_token_file) ||
	    str_differs(running->azure.identity_client_id, next->azure.identity_client_id) ||
	    str_differs(running->azure.endpoint_resource_manager, next->azure.endpoint_resource_manager) ||
	    str_differs(running->azure.endpoint_authority, next->azure.endpoint_authority) ||
	    str_differs(running->azure.endpoint_imds, next->azure.endpoint_imds) ||
	    running->azure.n_discovery != next->azure.n_discovery) {
		note(&r, "provider.azure");
		next->azure = running->azure;
	}
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
