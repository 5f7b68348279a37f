/*
 * Node groups that are AKS agent pools (azure.aks), against a loopback fake
 * of ARM with a managed cluster, its agent pool and the pool's scale set
 * in the node resource group, on a virtual clock whose waits move time at
 * once: the scale set found from the pool, a scale-up as a PUT of the
 * pool with its count raised (the pool as read, read-only fields left
 * out), chosen machines deleted through deleteMachines by their machine
 * names, a pool busy with an operation waited for (never a second
 * operation on top), an ARM error kept whole, a pool whose AKS autoscaler
 * is on never written; and the config's checks of azure.aks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <cjson/cJSON.h>

#include "config.h"
#include "providers/azure/azure.h"
#include "test_azure_clock.h"
#include "test_cloud_server.h"

#define T0 1800000000LL
#define SUB "0a1b2c3d-0000-4000-8000-00000000abcd"
#define CRG "rg-aks"
#define NRG "MC_rg-aks_prod_westeurope"
#define SS "aks-user1-12345678-vmss"
#define CLUSTER_PATH "/subscriptions/" SUB "/resourceGroups/" CRG "/providers/Microsoft.ContainerService/managedClusters/prod"
#define POOL_PATH CLUSTER_PATH "/agentPools/user1"
#define SS_LIST "/subscriptions/" SUB "/resourceGroups/" NRG "/providers/Microsoft.Compute/virtualMachineScaleSets"
#define SS_PATH SS_LIST "/" SS
#define AKS_API "api-version=2024-05-01"
#define OPS "/subscriptions/" SUB "/providers/Microsoft.ContainerService/locations/westeurope/operations/op-1"

/* ---- the fake ---- */

struct fake {
	struct cs_server cs;
	struct step_clock *clk;
	int count;              /* the pool's count = the scale set's capacity */
	int vm_ids[32], n_vms, next_id;
	bool creating;          /* the last write's VMs are not up yet */
	bool autoscaling;
	int busy;               /* this many pool GETs answer provisioningState Scaling */
	int op_polls;           /* InProgress answers before the end */
	int op_seen;
	int put_status;         /* the PUT's answer when not 0 (with put_error) */
	const char *put_error;
};

static bool path_is(const char *target, const char *path)
{
	size_t n = strlen(path);

	return !strncmp(target, path, n) && (target[n] == '?' || !target[n]);
}

static void add_header(struct cs_resp *rs, const char *fmt, const char *a)
{
	size_t n = strlen(rs->headers);

	snprintf(rs->headers + n, sizeof(rs->headers) - n, fmt, a);
}

static void pool_json(struct fake *f, const char *state, char *out, size_t len)
{
	snprintf(out, len,
		 "{\"id\":\"%s\",\"name\":\"user1\",\"type\":\"Microsoft.ContainerService/managedClusters/agentPools\","
		 "\"properties\":{\"count\":%d,\"vmSize\":\"Standard_D4s_v5\",\"osType\":\"Linux\",\"mode\":\"User\","
		 "\"type\":\"VirtualMachineScaleSets\",\"enableAutoScaling\":%s%s,\"orchestratorVersion\":\"1.29\","
		 "\"currentOrchestratorVersion\":\"1.29.7\",\"nodeImageVersion\":\"AKSUbuntu-2204gen2containerd-202410.15.0\","
		 "\"provisioningState\":\"%s\",\"eTag\":\"e-%d\",\"nodeLabels\":{\"team\":\"ml\"},"
		 "\"nodeTaints\":[\"dedicated=ml:NoSchedule\"],\"powerState\":{\"code\":\"Running\"}}}",
		 POOL_PATH, f->count, f->autoscaling ? "true" : "false",
		 f->autoscaling ? ",\"minCount\":1,\"maxCount\":5" : "", state, f->count);
}

static void vmss_json(struct fake *f, char *out, size_t len)
{
	snprintf(out, len,
		 "{\"name\":\"%s\",\"id\":\"%s\",\"location\":\"westeurope\",\"etag\":\"\\\"%d\\\"\","
		 "\"tags\":{\"aks-managed-poolName\":\"user1\",\"aks-managed-orchestrator\":\"Kubernetes:1.29.7\"},"
		 "\"sku\":{\"name\":\"Standard_D4s_v5\",\"tier\":\"Standard\",\"capacity\":%d},"
		 "\"properties\":{\"provisioningState\":\"Succeeded\",\"orchestrationMode\":\"Uniform\","
		 "\"virtualMachineProfile\":{\"osProfile\":{\"computerNamePrefix\":\"aks-user1-12345678-vmss\","
		 "\"linuxConfiguration\":{}}}}}",
		 SS, SS_PATH, f->count, f->count);
}

static void handler(void *ud, size_t index, const struct cs_req *rq, struct cs_resp *rs)
{
	struct fake *f = ud;
	const char *t = rq->target;
	char one[4096];

	(void)index;
	snprintf(rs->headers, sizeof(rs->headers), "Content-Type: application/json; charset=utf-8\n");
	if (!strncmp(t, "/metadata/identity/oauth2/token?", 32)) {
		snprintf(rs->body, sizeof(rs->body), "{\"access_token\":\"eyJ.ARM-S3KR1T\",\"expires_in\":\"86399\","
			 "\"resource\":\"https://management.azure.com/\",\"token_type\":\"Bearer\"}");
		return;
	}
	if (strstr(t, "/providers/Microsoft.Compute/skus?")) {
		rs->status = 404;
		snprintf(rs->body, sizeof(rs->body), "{\"error\":{\"code\":\"NotFound\",\"message\":\"no skus\"}}");
		return;
	}
	if (!strstr(t, "api-version=")) {
		rs->status = 400;
		snprintf(rs->body, sizeof(rs->body), "{\"error\":{\"code\":\"MissingApiVersionParameter\",\"message\":\"-\"}}");
		return;
	}
	if (path_is(t, CLUSTER_PATH) && !strcmp(rq->method, "GET") && strstr(t, AKS_API)) {
		snprintf(rs->body, sizeof(rs->body), "{\"name\":\"prod\",\"location\":\"westeurope\",\"properties\":"
			 "{\"provisioningState\":\"Succeeded\",\"nodeResourceGroup\":\"" NRG "\"}}");
		return;
	}
	if ((path_is(t, SS_LIST) || path_is(t, "/subscriptions/" SUB "/providers/Microsoft.Compute/virtualMachineScaleSets")) &&
	    !strcmp(rq->method, "GET")) {
		vmss_json(f, one, sizeof(one));
		snprintf(rs->body, sizeof(rs->body), "{\"value\":[{\"name\":\"aks-system-12345678-vmss\",\"tags\":"
			 "{\"aks-managed-poolName\":\"system\"},\"sku\":{\"capacity\":1}},%s]}", one);
		return;
	}
	if (path_is(t, SS_PATH) && !strcmp(rq->method, "GET")) {
		vmss_json(f, rs->body, sizeof(rs->body));
		return;
	}
	if (path_is(t, SS_PATH "/virtualMachines")) {
		int i;
		size_t n;

		snprintf(rs->body, sizeof(rs->body), "{\"value\":[");
		for (i = 0; i < f->n_vms; i++) {
			bool up = !f->creating || i < f->n_vms - 1;

			n = strlen(rs->body);
			snprintf(rs->body + n, sizeof(rs->body) - n,
				 "%s{\"instanceId\":\"%d\",\"name\":\"%s_%d\",\"properties\":{\"provisioningState\":\"%s\","
				 "\"osProfile\":{\"computerName\":\"aks-user1-12345678-vmss%06d\"},\"instanceView\":"
				 "{\"statuses\":[{\"code\":\"PowerState/%s\"}]}}}",
				 i ? "," : "", f->vm_ids[i], SS, f->vm_ids[i], up ? "Succeeded" : "Creating", f->vm_ids[i],
				 up ? "running" : "starting");
		}
		n = strlen(rs->body);
		snprintf(rs->body + n, sizeof(rs->body) - n, "]}");
		return;
	}
	if (path_is(t, POOL_PATH) && !strcmp(rq->method, "GET") && strstr(t, AKS_API)) {
		pool_json(f, f->busy > 0 ? "Scaling" : "Succeeded", rs->body, sizeof(rs->body));
		if (f->busy > 0)
			f->busy--;
		return;
	}
	if (path_is(t, POOL_PATH) && !strcmp(rq->method, "PUT") && strstr(t, AKS_API)) {
		cJSON *b = cJSON_Parse(rq->body);
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(b, "properties"), "count");

		if (f->put_status) {
			cJSON_Delete(b);
			rs->status = f->put_status;
			snprintf(rs->body, sizeof(rs->body), "%s", f->put_error);
			return;
		}
		if (!cJSON_IsNumber(c)) {
			cJSON_Delete(b);
			rs->status = 400;
			snprintf(rs->body, sizeof(rs->body), "{\"error\":{\"code\":\"InvalidParameter\",\"message\":\"count\"}}");
			return;
		}
		while (f->n_vms < c->valueint && f->n_vms < 32)
			f->vm_ids[f->n_vms++] = f->next_id++;
		f->count = c->valueint;
		f->creating = true;
		f->op_seen = 0;
		cJSON_Delete(b);
		add_header(rs, "Azure-AsyncOperation: https://management.azure.com%s?" AKS_API "\nRetry-After: 3\n", OPS);
		pool_json(f, "Scaling", rs->body, sizeof(rs->body));
		return;
	}
	if (path_is(t, OPS) && !strcmp(rq->method, "GET")) {
		if (++f->op_seen > f->op_polls) {
			f->creating = false;
			snprintf(rs->body, sizeof(rs->body), "{\"name\":\"op-1\",\"status\":\"Succeeded\"}");
		} else {
			add_header(rs, "Retry-After: %s\n", "4");
			snprintf(rs->body, sizeof(rs->body), "{\"name\":\"op-1\",\"status\":\"InProgress\"}");
		}
		return;
	}
	if (path_is(t, POOL_PATH "/deleteMachines") && !strcmp(rq->method, "POST") && strstr(t, AKS_API)) {
		rs->status = 202;
		add_header(rs, "Location: https://management.azure.com%s?" AKS_API "\n", OPS);
		return;
	}
	rs->status = 404;
	snprintf(rs->body, sizeof(rs->body), "{\"error\":{\"code\":\"ResourceNotFound\",\"message\":\"%.200s\"}}", t);
}

/* ---- the fixture ---- */

struct fx {
	struct step_clock *clk;
	struct fake fk;
	char log[65536];
	struct logger logger;
	char env[4][256];
	struct config *cfg;
	struct provider *p;
	struct provider_instance seen[16];
	int n_seen;
	int done_count, n_done;
	struct provider_status done;
};

static const char *fx_getenv(void *ud, const char *name)
{
	struct fx *f = ud;
	size_t i, n = strlen(name);

	for (i = 0; i < 4; i++)
		if (!strncmp(f->env[i], name, n) && f->env[i][n] == '=')
			return f->env[i] + n + 1;
	return NULL;
}

static void capture(void *ctx, enum log_level level, int64_t wall, const char *msg)
{
	struct fx *f = ctx;
	size_t n = strlen(f->log);

	(void)level;
	(void)wall;
	snprintf(f->log + n, sizeof(f->log) - n, "%s\n", msg);
}

#define AKS_GROUP \
	"node_groups:\n  - name: user1\n    max: 6\n" \
	"    azure: {aks: {cluster: prod, resource_group: " CRG ", pool: user1}}\n" \
	"provider:\n  kind: azure\n  read_qps: 1000\n  read_burst: 1000\n  qps: 1000\n  burst: 1000\n"

/* (Re)makes the provider from 'yaml'. */
static void make(struct fx *f, const char *yaml)
{
	struct errbuf e = { "" };
	struct azure_provider_opts o;
	struct config_opts co = { .flags = CONFIG_OFFLINE };

	provider_free(f->p);
	config_free(f->cfg);
	f->cfg = config_parse_opts(yaml, strlen(yaml), "azure.yaml", &co, &e);
	if (!f->cfg)
		fail_msg("config: %s", e.msg);
	memset(&o, 0, sizeof(o));
	o.config = f->cfg;
	o.clock = &f->clk->base;
	o.log = &f->logger;
	o.env.get = fx_getenv;
	o.env.ud = f;
	o.poll_ms = 5000;
	o.launch_wait_ms = 600000;
	o.max_attempts = 3;
	f->p = azure_provider_new(&o, &e);
	if (!f->p)
		fail_msg("azure_provider_new (no ARM_RESOURCE_GROUP: an AKS group needs none): %s", e.msg);
}

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->clk = sc_new(T0);
	f->fk.clk = f->clk;
	f->fk.count = 2;
	f->fk.vm_ids[0] = 0;
	f->fk.vm_ids[1] = 1;
	f->fk.n_vms = f->fk.next_id = 2;
	f->fk.op_polls = 1;
	assert_int_equal(cs_start(&f->fk.cs, handler, &f->fk, NULL, NULL), 0);
	snprintf(f->env[0], sizeof(f->env[0]), "ARM_SUBSCRIPTION_ID=%s", SUB);
	snprintf(f->env[1], sizeof(f->env[1]), "LUASCALE_SIM_AZURE_ARM_ENDPOINT=%s/", f->fk.cs.url);
	snprintf(f->env[2], sizeof(f->env[2]), "AZURE_POD_IDENTITY_AUTHORITY_HOST=%s", f->fk.cs.url);
	f->logger = (struct logger){ capture, f, LOG_DEBUG, NULL };
	make(f, AKS_GROUP);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	if (getenv("AZURE_TEST_LOG"))
		fputs(f->log, stderr);
	assert_null(strstr(f->log, "S3KR1T"));
	provider_free(f->p);
	config_free(f->cfg);
	cs_stop(&f->fk.cs);
	sc_free(f->clk);
	free(f);
	return 0;
}

static void on_instance(void *ctx, const struct provider_instance *pi)
{
	struct fx *f = ctx;

	if (f->n_seen < 16)
		f->seen[f->n_seen++] = *pi;
}

static void on_done(void *ctx, int count, const struct provider_status *st)
{
	struct fx *f = ctx;

	f->done_count = count;
	f->done = *st;
	f->n_done++;
}

static int reqs(struct fx *f, const char *method, const char *prefix)
{
	size_t i, n = cs_count(&f->fk.cs);
	int k = 0;

	for (i = 0; i < n && i < CS_MAX_REQS; i++)
		if (!strcmp(f->fk.cs.reqs[i].method, method) && path_is(f->fk.cs.reqs[i].target, prefix))
			k++;
	return k;
}

static int req_at(struct fx *f, const char *method, const char *prefix, int nth)
{
	size_t i, n = cs_count(&f->fk.cs);

	for (i = 0; i < n && i < CS_MAX_REQS; i++)
		if (!strcmp(f->fk.cs.reqs[i].method, method) && path_is(f->fk.cs.reqs[i].target, prefix) && nth-- == 0)
			return (int)i;
	return -1;
}

static void list(struct fx *f, struct provider_group **gs, size_t *n)
{
	struct provider_status st;

	if (f->p->ops->list_groups(f->p, gs, n, &st) < 0)
		fail_msg("list_groups: %s\n%s", st.message, f->log);
	assert_int_equal(*n, 1);
}

static const char *label(const struct provider_template *t, const char *key)
{
	size_t i;

	for (i = 0; i < t->n_labels; i++)
		if (!strcmp(t->labels[i].key, key))
			return t->labels[i].value;
	return NULL;
}

/* ---- tests ---- */

/* The pool's scale set is found once, from the cluster's node resource
 * group and the aks-managed-poolName tag; reads come from it. */
static void test_scale_set_found_from_the_pool(void **state)
{
	struct fx *f = *state;
	struct provider_group *gs;
	size_t n;
	char group[64], inst[32];

	list(f, &gs, &n);
	assert_string_equal(gs[0].name, "user1");
	assert_int_equal(gs[0].target, 2);
	assert_int_equal(gs[0].max, 6);
	assert_int_equal(gs[0].n_instances, 2);
	assert_string_equal(gs[0].instances[1].provider_id, "azure://" SS_PATH "/virtualMachines/1");
	assert_string_equal(label(&gs[0].tmpl, "kubernetes.azure.com/agentpool"), "user1");
	assert_non_null(strstr(f->log, "its scale set is " SS " in " NRG));
	provider_groups_free(gs, n);
	list(f, &gs, &n);
	provider_groups_free(gs, n);
	assert_int_equal(reqs(f, "GET", CLUSTER_PATH), 1);
	assert_int_equal(reqs(f, "GET", SS_LIST), 1);
	assert_int_equal(reqs(f, "GET", POOL_PATH), 2); /* the pool every round: its autoscaler switch */
	assert_int_equal(f->p->ops->map_node(f->p, "azure:///subscriptions/" SUB "/resourceGroups/mc_rg-aks_prod_westeurope/"
					     "providers/Microsoft.Compute/virtualMachineScaleSets/" SS "/virtualMachines/1",
					     group, sizeof(group), inst, sizeof(inst)), 0);
	assert_string_equal(group, "user1");
}

/* A scale-up is a PUT of the pool with its count raised: the pool as read
 * (its labels, taints, size stay), read-only fields left out; never a
 * write to the scale set. */
static void test_scale_up_puts_the_pool(void **state)
{
	struct fx *f = *state;
	struct provider_group *gs;
	size_t n;
	int put;
	cJSON *b, *props;

	list(f, &gs, &n);
	provider_groups_free(gs, n);
	f->p->ops->launch(f->p, "user1", 2, on_instance, on_done, f);
	assert_int_equal(f->n_done, 1);
	if (f->done.code != PROVIDER_OK)
		fail_msg("launch: %s\n%s", f->done.message, f->log);
	assert_int_equal(f->done_count, 2);
	assert_int_equal(f->n_seen, 2);
	assert_string_equal(f->seen[0].provider_id, "azure://" SS_PATH "/virtualMachines/2");
	assert_string_equal(f->seen[1].id, "3");
	assert_int_equal(reqs(f, "PUT", POOL_PATH), 1);
	assert_int_equal(reqs(f, "PUT", SS_PATH), 0);
	put = req_at(f, "PUT", POOL_PATH, 0);
	assert_non_null(strstr(f->fk.cs.reqs[put].target, AKS_API));
	assert_string_equal(cs_header(&f->fk.cs.reqs[put], "If-Match"), "e-2");
	b = cJSON_Parse(f->fk.cs.reqs[put].body);
	assert_non_null(b);
	assert_int_equal(cJSON_GetArraySize(b), 1); /* properties only: no id, name, type */
	props = cJSON_GetObjectItemCaseSensitive(b, "properties");
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(props, "count")->valueint, 4);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(props, "vmSize")->valuestring, "Standard_D4s_v5");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(props, "nodeLabels"),
							     "team")->valuestring, "ml");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(props, "nodeTaints")), 1);
	assert_false(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(props, "enableAutoScaling")));
	assert_null(cJSON_GetObjectItemCaseSensitive(props, "provisioningState"));
	assert_null(cJSON_GetObjectItemCaseSensitive(props, "currentOrchestratorVersion"));
	assert_null(cJSON_GetObjectItemCaseSensitive(props, "nodeImageVersion"));
	assert_null(cJSON_GetObjectItemCaseSensitive(props, "eTag"));
	cJSON_Delete(b);
	/* the pool read in the launch, before its write; the operation followed
	 * at the times Retry-After named (3 s after the PUT, then 4 s) */
	assert_true(req_at(f, "GET", POOL_PATH, 1) < put);
	assert_int_equal(reqs(f, "GET", OPS), 2);
	assert_int_equal(f->fk.count, 4);
	assert_non_null(strstr(f->log, "AKS pool user1 (cluster prod) count 2 -> 4"));
}

/* Chosen machines go through deleteMachines by their machine names (the
 * VMs' computer names), never the scale set's delete. */
static void test_delete_machines_by_name(void **state)
{
	struct fx *f = *state;
	struct provider_group *gs;
	size_t n;
	int post;
	cJSON *b, *names;

	list(f, &gs, &n);
	provider_groups_free(gs, n);
	f->p->ops->terminate(f->p, "user1", (const char *const[]){ "1", "0" }, 2, on_done, f);
	if (f->done.code != PROVIDER_OK)
		fail_msg("terminate: %s", f->done.message);
	assert_int_equal(f->done_count, 2);
	assert_int_equal(reqs(f, "POST", SS_PATH "/delete"), 0);
	assert_int_equal(reqs(f, "POST", POOL_PATH "/deleteMachines"), 1);
	post = req_at(f, "POST", POOL_PATH "/deleteMachines", 0);
	assert_non_null(strstr(f->fk.cs.reqs[post].target, AKS_API));
	b = cJSON_Parse(f->fk.cs.reqs[post].body);
	assert_non_null(b);
	assert_int_equal(cJSON_GetArraySize(b), 1);
	names = cJSON_GetObjectItemCaseSensitive(b, "machineNames");
	assert_int_equal(cJSON_GetArraySize(names), 2);
	assert_string_equal(cJSON_GetArrayItem(names, 0)->valuestring, "aks-user1-12345678-vmss000001");
	assert_string_equal(cJSON_GetArrayItem(names, 1)->valuestring, "aks-user1-12345678-vmss000000");
	cJSON_Delete(b);
	/* an instance the scale set does not have: nothing sent */
	f->p->ops->terminate(f->p, "user1", (const char *const[]){ "9" }, 1, on_done, f);
	assert_int_equal(f->done.code, PROVIDER_NOT_FOUND);
	assert_non_null(strstr(f->done.message, "instance 9"));
	assert_int_equal(reqs(f, "POST", POOL_PATH "/deleteMachines"), 1);
}

/* A pool busy with an operation (Scaling) is waited for, poll_ms apart,
 * then written once; one that stays busy is not written this round. */
static void test_operation_in_progress_waited_for(void **state)
{
	struct fx *f = *state;
	struct provider_group *gs;
	size_t n;
	int64_t before;

	list(f, &gs, &n);
	provider_groups_free(gs, n);
	f->fk.busy = 2;
	before = f->clk->slept;
	f->p->ops->launch(f->p, "user1", 1, on_instance, on_done, f);
	if (f->done.code != PROVIDER_OK)
		fail_msg("launch: %s\n%s", f->done.message, f->log);
	assert_int_equal(reqs(f, "PUT", POOL_PATH), 1);
	assert_true(f->clk->slept - before >= 2 * 5 * CLOCK_NS_PER_S);
	assert_non_null(strstr(f->log, "AKS pool user1 is Scaling (an operation in progress): waiting"));
	assert_int_equal(f->fk.count, 3);
	/* busy through every look: nothing written */
	f->fk.busy = 100;
	f->p->ops->launch(f->p, "user1", 1, on_instance, on_done, f);
	assert_int_equal(f->done.code, PROVIDER_TRANSIENT);
	assert_non_null(strstr(f->done.message, "still Scaling (an operation in progress) after 3 looks: nothing written"));
	assert_int_equal(reqs(f, "PUT", POOL_PATH), 1);
	/* and a delete of machines is not sent on top of it */
	f->p->ops->terminate(f->p, "user1", (const char *const[]){ "0" }, 1, on_done, f);
	assert_int_equal(f->done.code, PROVIDER_TRANSIENT);
	assert_non_null(strstr(f->done.message, "deleteMachines not sent"));
	assert_int_equal(reqs(f, "POST", POOL_PATH "/deleteMachines"), 0);
}

/* ARM's refusal is kept whole: its code first, then its whole message. */
static void test_arm_error_kept_whole(void **state)
{
	static const char msg[] =
		"Preflight validation check for resource(s) for container service prod in resource group " NRG
		" failed. Message: Operation could not be completed as it results in exceeding approved standardDSv5Family "
		"Cores quota. Additional details - Deployment Model: Resource Manager, Location: westeurope, Current Limit: 20, "
		"Current Usage: 16, Additional Required: 8, (Minimum) New Limit Required: 24. Submit a request for Quota "
		"increase at https://aka.ms/ProdportalCRP/#blade/Microsoft_Azure_Capacity/UsageAndQuota.ReactView/Parameters/"
		"%7B%22subscriptionId%22:%22" SUB "%22,%22command%22:%22openQuotaApprovalBlade%22%7D by specifying "
		"parameters listed in the 'Details' section for deployment to succeed. Please read more about quota limits at "
		"https://docs.microsoft.com/en-us/azure/azure-supportability/per-vm-quota-requests.";
	struct fx *f = *state;
	struct provider_group *gs;
	size_t n;
	char body[4096];

	list(f, &gs, &n);
	provider_groups_free(gs, n);
	snprintf(body, sizeof(body), "{\"code\":\"QuotaExceeded\",\"message\":\"%s\"}", msg);
	f->fk.put_status = 400;
	f->fk.put_error = body;
	f->p->ops->launch(f->p, "user1", 2, on_instance, on_done, f);
	assert_int_equal(f->done.code, PROVIDER_QUOTA);
	assert_int_equal(strncmp(f->done.message, "QuotaExceeded: Preflight validation check", 41), 0);
	if (!strstr(f->done.message, msg))
		fail_msg("not whole: %s", f->done.message);
	assert_non_null(strstr(f->done.message, "PUT prod/agentPools/user1: HTTP 400"));
	assert_int_equal(f->n_seen, 0);
	assert_int_equal(f->fk.count, 2);
}

/* A pool whose AKS cluster autoscaler is on: listed at its size (min =
 * max = target), said once; never written, its launches and deletes
 * refused with the reason. */
static void test_autoscaling_pool_never_written(void **state)
{
	struct fx *f = *state;
	struct provider_group *gs;
	size_t n;

	f->fk.autoscaling = true;
	list(f, &gs, &n);
	assert_int_equal(gs[0].target, 2);
	assert_int_equal(gs[0].min, 2);
	assert_int_equal(gs[0].max, 2);
	provider_groups_free(gs, n);
	list(f, &gs, &n);
	provider_groups_free(gs, n);
	assert_non_null(strstr(f->log, "has AKS's cluster autoscaler on (enableAutoScaling: true): luascale holds it"));
	assert_null(strstr(strstr(f->log, "enableAutoScaling: true): luascale holds it") + 1,
			   "enableAutoScaling: true): luascale holds it"));
	f->p->ops->launch(f->p, "user1", 1, on_instance, on_done, f);
	assert_int_equal(f->done.code, PROVIDER_INVALID);
	assert_non_null(strstr(f->done.message, "enableAutoScaling: true"));
	assert_non_null(strstr(f->done.message, "two autoscalers"));
	f->p->ops->terminate(f->p, "user1", (const char *const[]){ "0" }, 1, on_done, f);
	assert_int_equal(f->done.code, PROVIDER_INVALID);
	assert_int_equal(reqs(f, "PUT", POOL_PATH), 0);
	assert_int_equal(reqs(f, "POST", POOL_PATH "/deleteMachines"), 0);
	/* handed over: luascale scales it again */
	f->fk.autoscaling = false;
	list(f, &gs, &n);
	assert_int_equal(gs[0].max, 6);
	provider_groups_free(gs, n);
	assert_non_null(strstr(f->log, "has AKS's cluster autoscaler off: luascale scales it"));
}

/* Discovery by tags finds the pool's scale set too: it stays the pool's
 * group (written through AKS), never a second group of its own. */
static void test_discovery_does_not_double_the_pool(void **state)
{
	struct fx *f = *state;
	struct provider_group *gs;
	size_t n;

	make(f, AKS_GROUP "  azure:\n    discovery:\n      - {tags: {aks-managed-poolName: \"\"}, max: 5}\n");
	list(f, &gs, &n);
	assert_string_equal(gs[0].name, "user1");
	assert_int_equal(gs[0].max, 6);
	provider_groups_free(gs, n);
}

/* The config's checks of azure.aks name the group and the key. */
static void test_config_checks(void **state)
{
	static const struct {
		const char *groups, *want;
	} cases[] = {
		{ "  - {name: a, max: 2, azure: {vmss: x, aks: {cluster: c, resource_group: r, pool: p}}}\n",
		  "node group \"a\" is either a scale set (vmss, resource_group) or an AKS agent pool (aks), not both" },
		{ "  - {name: a, max: 2, azure: {aks: {cluster: c, resource_group: r}}}\n", "pool is missing" },
		{ "  - {name: a, max: 2, azure: {aks: {cluster: c, pool: p}}}\n",
		  "resource_group (the cluster's own, not its MC_ node resource group)" },
		{ "  - {name: a, max: 2, azure: {aks: {cluster: c, resource_group: r, pool: User-1}}}\n",
		  "node_groups[0].azure.aks.pool" },
		{ "  - {name: a, max: 2, azure: {aks: {cluster: -c, resource_group: r, pool: p}}}\n",
		  "node_groups[0].azure.aks.cluster" },
		{ "  - {name: a, max: 2, azure: {aks: {cluster: c, resource_group: r, pool: p, vmss: x}}}\n",
		  "vmss" },
		{ "  - {name: a, max: 2, azure: {aks: {cluster: c, resource_group: r, pool: p}}}\n"
		  "  - {name: b, max: 2, azure: {aks: {cluster: C, resource_group: r, pool: p}}}\n",
		  "node groups \"a\" and \"b\" are the same AKS agent pool \"p\"" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct config_opts co = { .flags = CONFIG_OFFLINE };
		struct errbuf e = { "" };
		char yaml[1024];
		struct config *c;

		snprintf(yaml, sizeof(yaml), "node_groups:\n%sprovider:\n  kind: azure\n", cases[i].groups);
		c = config_parse_opts(yaml, strlen(yaml), "azure.yaml", &co, &e);
		if (c || !strstr(e.msg, cases[i].want))
			fail_msg("case %zu: want an error with \"%s\", got %s", i, cases[i].want, c ? "none" : e.msg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
		T(test_scale_set_found_from_the_pool),
		T(test_scale_up_puts_the_pool),
		T(test_delete_machines_by_name),
		T(test_operation_in_progress_waited_for),
		T(test_arm_error_kept_whole),
		T(test_autoscaling_pool_never_written),
		T(test_discovery_does_not_double_the_pool),
		cmocka_unit_test(test_config_checks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
