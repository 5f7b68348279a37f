/*
 * Tests for the Azure provider against a loopback fake of ARM (one scale
 * set with its VMs, etags, long-running operations, throttling) and of the
 * metadata service, on a virtual clock whose waits move time at once:
 * listing with nextLink, templates from the size table and the tags,
 * If-Match and the single re-read on 412, no write after a failed read,
 * operations followed through Azure-AsyncOperation and Location at the
 * times Retry-After names, failed VMs as failed launches, throttling
 * windows, deletes, discovery, providerIDs and the parsers underneath.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "providers/azure/azure.h"
#include "providers/azure/azure_arm.h"
#include "providers/azure/azure_sizes.h"
#include "test_azure_clock.h"
#include "test_cloud_server.h"

#define T0 1800000000LL
#define SUB "0a1b2c3d-0000-4000-8000-00000000abcd"
#define RG "rg-Prod"
#define SS "pool1"
#define SS_PATH "/subscriptions/" SUB "/resourceGroups/" RG "/providers/Microsoft.Compute/virtualMachineScaleSets/" SS
#define API "api-version=2024-11-01"

/* ---- the fake ---- */

struct vm {
	int id;
	char prov[16];          /* Creating, Succeeded, Failed, Deleting */
	bool running;
	char fail[48];
	const char *latest;     /* latestModelApplied: "true", "false", NULL absent */
};

struct fake {
	struct cs_server cs;
	struct step_clock *clk;
	int capacity;
	int etag;
	char tags[2048];
	const char *sku;
	struct vm vms[32];
	int n_vms, next_id;
	int page;               /* VMs per page of the list */
	int op_polls;           /* InProgress answers before the end */
	int op_seen;
	bool op_fail;           /* the operation fails with op_code */
	const char *op_code, *op_msg;
	int fail_vm;            /* the index (among the new VMs) that fails; -1 none */
	bool location_mode;     /* PUT answers 202 + Location, not Azure-AsyncOperation */
	int put_retry_after, poll_retry_after;
	int put_412;            /* this many PUTs answer 412 ... */
	int bump_412;           /* ... after another writer added this many */
	int get_fail;           /* this many VMSS GETs answer get_status */
	int get_status;
	const char *get_retry_after;
	const char *get_error;
	bool no_capacity;       /* the VMSS answer lacks sku.capacity */
	bool flexible;          /* the scale set is in Flexible orchestration mode */
	int unauth;             /* this many ARM calls answer 401 (a revoked token) */
	int imds_calls;
	int vms_fail;           /* this many VM lists answer 409 OperationNotAllowed/TooManyRequests */
	int64_t vms_window_s;   /* its endTime, seconds after the request */
	int64_t t[CS_MAX_REQS]; /* the clock (ns) at each request */
	char deleted[256];
};

static bool path_is(const char *target, const char *path)
{
	size_t n = strlen(path);

	return !strncmp(target, path, n) && (target[n] == '?' || !target[n]);
}

static void vm_json(struct fake *f, const struct vm *v, char *out, size_t len)
{
	char st[400], latest[48] = "";

	if (v->latest)
		snprintf(latest, sizeof(latest), "\"latestModelApplied\":%s,", v->latest);
	if (!strcmp(v->prov, "Failed"))
		snprintf(st, sizeof(st), "{\"code\":\"ProvisioningState/failed/%s\",\"level\":\"Error\","
			 "\"displayStatus\":\"Provisioning failed\",\"message\":\"Allocation failed. We do not have "
			 "sufficient capacity for the requested VM size in this region.\"}", v->fail);
	else
		snprintf(st, sizeof(st), "{\"code\":\"ProvisioningState/%s\"},{\"code\":\"PowerState/%s\"}",
			 !strcmp(v->prov, "Succeeded") ? "succeeded" : "creating", v->running ? "running" : "starting");
	(void)f;
	snprintf(out, len, "{\"instanceId\":\"%d\",\"name\":\"%s_%d\",\"id\":\"%s/virtualMachines/%d\","
		 "\"properties\":{%s\"provisioningState\":\"%s\",\"instanceView\":{\"statuses\":[%s]}}}",
		 v->id, SS, v->id, SS_PATH, v->id, latest, v->prov, st);
}

static void vmss_json(struct fake *f, char *out, size_t len)
{
	char cap[32] = "";

	if (!f->no_capacity)
		snprintf(cap, sizeof(cap), ",\"capacity\":%d", f->capacity);
	snprintf(out, len,
		 "{\"name\":\"%s\",\"id\":\"%s\",\"type\":\"Microsoft.Compute/virtualMachineScaleSets\","
		 "\"location\":\"westeurope\",\"zones\":[\"2\"],\"etag\":\"\\\"%d\\\"\",\"tags\":{%s},"
		 "\"sku\":{\"name\":\"%s\",\"tier\":\"Standard\"%s},"
		 "\"properties\":{\"provisioningState\":\"Succeeded\",\"orchestrationMode\":\"%s\","
		 "\"virtualMachineProfile\":{\"osProfile\":{\"linuxConfiguration\":{}}}}}",
		 SS, SS_PATH, f->etag, f->tags, f->sku, cap, f->flexible ? "Flexible" : "Uniform");
}

/* The operation ends: the new VMs come up, or one of them fails. */
static void settle(struct fake *f)
{
	int i, k = 0;

	for (i = 0; i < f->n_vms; i++) {
		if (strcmp(f->vms[i].prov, "Creating"))
			continue;
		if (k++ == f->fail_vm) {
			snprintf(f->vms[i].prov, sizeof(f->vms[i].prov), "Failed");
			snprintf(f->vms[i].fail, sizeof(f->vms[i].fail), "%s", f->op_code ? f->op_code : "AllocationFailed");
		} else {
			snprintf(f->vms[i].prov, sizeof(f->vms[i].prov), "Succeeded");
			f->vms[i].running = true;
		}
	}
}

static void add_vms(struct fake *f, int n)
{
	while (n-- > 0 && f->n_vms < 32) {
		struct vm *v = &f->vms[f->n_vms++];

		memset(v, 0, sizeof(*v));
		v->id = f->next_id++;
		snprintf(v->prov, sizeof(v->prov), "Creating");
	}
}

static void handler(void *ud, size_t index, const struct cs_req *rq, struct cs_resp *rs)
{
	struct fake *f = ud;
	char vmss[4096];
	const char *t = rq->target;

	if (index < CS_MAX_REQS)
		f->t[index] = clock_now(&f->clk->base);
	snprintf(rs->headers, sizeof(rs->headers), "Content-Type: application/json; charset=utf-8\n");
	if (!strncmp(t, "/metadata/identity/oauth2/token?", 32)) {
		const char *md = cs_header(rq, "Metadata");

		if (!md || strcmp(md, "true")) {
			rs->status = 400;
			return;
		}
		f->imds_calls++;
		snprintf(rs->body, sizeof(rs->body), "{\"access_token\":\"eyJ.ARM-S3KR1T\",\"expires_in\":\"86399\","
			 "\"resource\":\"https://management.azure.com/\",\"token_type\":\"Bearer\"}");
		return;
	}
	if (strstr(t, "/providers/Microsoft.Compute/skus?")) {
		/* no Resource SKUs API here: the provider's table serves the sizes */
		rs->status = 404;
		snprintf(rs->body, sizeof(rs->body), "{\"error\":{\"code\":\"NotFound\",\"message\":\"no skus\"}}");
		return;
	}
	if (strcmp(cs_header(rq, "Authorization") ? cs_header(rq, "Authorization") : "", "Bearer eyJ.ARM-S3KR1T") ||
	    !strstr(t, API) || (f->unauth > 0 && f->unauth--)) {
		rs->status = 401;
		snprintf(rs->body, sizeof(rs->body), "{\"error\":{\"code\":\"InvalidAuthenticationToken\",\"message\":\"no\"}}");
		return;
	}
	if (path_is(t, SS_PATH) && !strcmp(rq->method, "GET")) {
		if (f->get_fail > 0) {
			f->get_fail--;
			rs->status = f->get_status;
			if (f->get_retry_after) {
				size_t n = strlen(rs->headers);

				snprintf(rs->headers + n, sizeof(rs->headers) - n, "Retry-After: %s\n", f->get_retry_after);
			}
			snprintf(rs->body, sizeof(rs->body), "%s", f->get_error ? f->get_error :
				 "{\"error\":{\"code\":\"TooManyRequests\",\"message\":\"slow down\"}}");
			return;
		}
		vmss_json(f, rs->body, sizeof(rs->body));
		{
			size_t n = strlen(rs->headers);

			snprintf(rs->headers + n, sizeof(rs->headers) - n, "ETag: \"%d\"\n", f->etag);
		}
		return;
	}
	if (path_is(t, SS_PATH) && !strcmp(rq->method, "PUT")) {
		char want[32];
		const char *im = cs_header(rq, "If-Match");
		cJSON *b = cJSON_Parse(rq->body);
		const cJSON *cap = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(b, "sku"), "capacity");
		size_t n;

		if (f->put_412 > 0) {
			/* another writer got there first */
			f->put_412--;
			f->capacity += f->bump_412;
			add_vms(f, f->bump_412);
			settle(f);
			f->etag++;
		}
		snprintf(want, sizeof(want), "\"%d\"", f->etag);
		if (!im || strcmp(im, want)) {
			cJSON_Delete(b);
			rs->status = 412;
			snprintf(rs->body, sizeof(rs->body), "{\"error\":{\"code\":\"PreconditionFailed\",\"message\":\"The "
				 "etag does not match\"}}");
			return;
		}
		if (!cJSON_IsNumber(cap) || strcmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, "location")) ?
						       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, "location")) : "",
						       "westeurope")) {
			cJSON_Delete(b);
			rs->status = 400;
			return;
		}
		add_vms(f, (int)cap->valuedouble - f->capacity);
		f->capacity = (int)cap->valuedouble;
		f->etag++;
		f->op_seen = 0;
		cJSON_Delete(b);
		n = strlen(rs->headers);
		if (f->location_mode) {
			rs->status = 202;
			snprintf(rs->headers + n, sizeof(rs->headers) - n,
				 "Location: %s/subscriptions/%s/providers/Microsoft.Compute/locations/westeurope/"
				 "operations/op-1?monitor=true&" API "\nRetry-After: %d\n", f->cs.url, SUB, f->put_retry_after);
			rs->body[0] = '\0';
		} else {
			snprintf(rs->headers + n, sizeof(rs->headers) - n,
				 "Azure-AsyncOperation: https://management.azure.com/subscriptions/%s/providers/"
				 "Microsoft.Compute/locations/westeurope/operations/op-1?" API "\nRetry-After: %d\n", SUB,
				 f->put_retry_after);
			vmss_json(f, rs->body, sizeof(rs->body));
		}
		return;
	}
	if (path_is(t, "/subscriptions/" SUB "/providers/Microsoft.Compute/locations/westeurope/operations/op-1")) {
		size_t n = strlen(rs->headers);
		bool end = ++f->op_seen > f->op_polls;

		if (end)
			settle(f);
		if (f->location_mode) {
			if (!end) {
				rs->status = 202;
				snprintf(rs->headers + n, sizeof(rs->headers) - n, "Retry-After: %d\n", f->poll_retry_after);
			} else if (f->op_fail) {
				rs->status = 409;
				snprintf(rs->body, sizeof(rs->body), "{\"error\":{\"code\":\"%s\",\"message\":\"%s\"}}",
					 f->op_code, f->op_msg);
			}
			return;
		}
		if (!end) {
			snprintf(rs->headers + n, sizeof(rs->headers) - n, "Retry-After: %d\n", f->poll_retry_after);
			snprintf(rs->body, sizeof(rs->body), "{\"startTime\":\"2027-01-15T08:00:00Z\",\"status\":\"InProgress\",\"name\":\"op-1\"}");
		} else if (f->op_fail) {
			snprintf(rs->body, sizeof(rs->body), "{\"status\":\"Failed\",\"name\":\"op-1\",\"error\":{\"code\":\"%s\","
				 "\"message\":\"%s\"}}", f->op_code, f->op_msg);
		} else {
			snprintf(rs->body, sizeof(rs->body), "{\"status\":\"Succeeded\",\"name\":\"op-1\"}");
		}
		return;
	}
	if (path_is(t, SS_PATH "/virtualMachines")) {
		const char *sk = strstr(t, "skiptoken=");
		int start = sk ? atoi(sk + 10) : 0, i, k = 0;
		size_t n;

		if (f->vms_fail > 0) {
			char end[40];

			f->vms_fail--;
			model_format_time(clock_wall(&f->clk->base) + f->vms_window_s, end, sizeof(end));
			rs->status = 409;
			snprintf(rs->body, sizeof(rs->body),
				 "{\"error\":{\"code\":\"OperationNotAllowed\",\"message\":\"The server rejected the request "
				 "because too many requests have been received for this subscription.\",\"details\":[{\"code\":"
				 "\"TooManyRequests\",\"target\":\"VMScaleSetVMViews3Min\",\"message\":\"{\\\"operationGroup\\\":"
				 "\\\"VMScaleSetVMViews3Min\\\",\\\"startTime\\\":\\\"2027-01-15T08:00:00.5836669+00:00\\\","
				 "\\\"endTime\\\":\\\"%s\\\",\\\"allowedRequestCount\\\":900,\\\"measuredRequestCount\\\":1260}\"}]}}",
				 end);
			return;
		}
		if (!strstr(t, "$expand=instanceView")) {
			rs->status = 400;
			return;
		}
		snprintf(rs->body, sizeof(rs->body), "{\"value\":[");
		for (i = start; i < f->n_vms && k < f->page; i++, k++) {
			char one[1024];

			vm_json(f, &f->vms[i], one, sizeof(one));
			n = strlen(rs->body);
			snprintf(rs->body + n, sizeof(rs->body) - n, "%s%s", k ? "," : "", one);
		}
		n = strlen(rs->body);
		if (i < f->n_vms)
			snprintf(rs->body + n, sizeof(rs->body) - n, "],\"nextLink\":\"https://management.azure.com%s"
				 "/virtualMachines?$expand=instanceView&" API "&$skiptoken=%d\"}", SS_PATH, i);
		else
			snprintf(rs->body + n, sizeof(rs->body) - n, "]}");
		return;
	}
	if (path_is(t, SS_PATH "/delete") && !strcmp(rq->method, "POST")) {
		cJSON *b = cJSON_Parse(rq->body), *id;
		size_t n = strlen(rs->headers);
		int i;

		f->deleted[0] = '\0';
		cJSON_ArrayForEach(id, cJSON_GetObjectItemCaseSensitive(b, "instanceIds")) {
			size_t l = strlen(f->deleted);

			snprintf(f->deleted + l, sizeof(f->deleted) - l, "%s%s", l ? "," : "", id->valuestring);
			for (i = 0; i < f->n_vms; i++)
				if (f->vms[i].id == atoi(id->valuestring)) {
					f->vms[i] = f->vms[--f->n_vms];
					f->capacity--;
					break;
				}
		}
		cJSON_Delete(b);
		rs->status = 202;
		snprintf(rs->headers + n, sizeof(rs->headers) - n, "Location: %s/subscriptions/%s/providers/"
			 "Microsoft.Compute/locations/westeurope/operations/del-1?" API "\n", f->cs.url, SUB);
		return;
	}
	if (path_is(t, "/subscriptions/" SUB "/resourceGroups/" RG "/providers/Microsoft.Compute/virtualMachineScaleSets")) {
		char other[1024];

		vmss_json(f, vmss, sizeof(vmss));
		snprintf(other, sizeof(other), "{\"name\":\"other\",\"id\":\"/subscriptions/%s/resourceGroups/%s/providers/"
			 "Microsoft.Compute/virtualMachineScaleSets/other\",\"location\":\"westeurope\",\"tags\":{},"
			 "\"sku\":{\"name\":\"Standard_D2s_v5\",\"capacity\":1}}", SUB, RG);
		snprintf(rs->body, sizeof(rs->body), "{\"value\":[%s,%s]}", other, vmss);
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
	char url[64];
	char env[6][256];
	struct config *cfg;
	struct provider *p;
	/* what a launch or terminate reported */
	struct provider_instance seen[16];
	int n_seen;
	int done_count, n_done;
	struct provider_status done;
};

static const char *fx_getenv(void *ud, const char *name)
{
	struct fx *f = ud;
	size_t i, n = strlen(name);

	for (i = 0; i < 6; i++)
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

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->clk = sc_new(T0);
	f->fk.clk = f->clk;
	f->fk.capacity = 0;
	f->fk.etag = 1;
	f->fk.sku = "Standard_D4s_v5";
	f->fk.page = 2;
	f->fk.fail_vm = -1;
	f->fk.put_retry_after = 7;
	f->fk.poll_retry_after = 11;
	f->fk.op_polls = 2;
	snprintf(f->fk.tags, sizeof(f->fk.tags), "\"min\":\"1\",\"max\":\"10\"");
	assert_int_equal(cs_start(&f->fk.cs, handler, &f->fk, NULL, NULL), 0);
	snprintf(f->url, sizeof(f->url), "%s", f->fk.cs.url);
	snprintf(f->env[0], sizeof(f->env[0]), "ARM_SUBSCRIPTION_ID=%s", SUB);
	snprintf(f->env[1], sizeof(f->env[1]), "LUASCALE_SIM_AZURE_ARM_ENDPOINT=%s/", f->url);
	snprintf(f->env[2], sizeof(f->env[2]), "AZURE_POD_IDENTITY_AUTHORITY_HOST=%s", f->url);
	snprintf(f->env[3], sizeof(f->env[3]), "ARM_RESOURCE_GROUP=%s", RG);
	f->logger = (struct logger){ capture, f, LOG_DEBUG, NULL };
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

static void make(struct fx *f, const char *yaml)
{
	struct errbuf e = { "" };
	struct azure_provider_opts o;
	char text[2048];

	snprintf(text, sizeof(text), "%s", yaml ? yaml :
		 "node_groups:\n  - name: workers\n    azure: {vmss: " SS "}\nprovider:\n  kind: azure\n"
		 "  read_qps: 1000\n  read_burst: 1000\n  qps: 1000\n  burst: 1000\n");
	{
		struct config_opts co = { .flags = CONFIG_OFFLINE };

		f->cfg = config_parse_opts(text, strlen(text), "azure.yaml", &co, &e);
	}
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
		fail_msg("azure_provider_new: %s", e.msg);
}

static pthread_mutex_t cb_mu = PTHREAD_MUTEX_INITIALIZER;

static void on_instance(void *ctx, const struct provider_instance *pi)
{
	struct fx *f = ctx;

	pthread_mutex_lock(&cb_mu);
	if (f->n_seen < 16)
		f->seen[f->n_seen++] = *pi;
	pthread_mutex_unlock(&cb_mu);
}

static void on_done(void *ctx, int count, const struct provider_status *st)
{
	struct fx *f = ctx;

	pthread_mutex_lock(&cb_mu);
	f->done_count = count;
	if (st->code != PROVIDER_OK || f->done.code == PROVIDER_OK)
		f->done = *st;
	f->n_done++;
	pthread_mutex_unlock(&cb_mu);
}

/* How many requests so far had 'method' and a target starting with 'prefix'. */
static int reqs(struct fx *f, const char *method, const char *prefix)
{
	size_t i, n = cs_count(&f->fk.cs);
	int k = 0;

	for (i = 0; i < n && i < CS_MAX_REQS; i++)
		if (!strcmp(f->fk.cs.reqs[i].method, method) && !strncmp(f->fk.cs.reqs[i].target, prefix, strlen(prefix)))
			k++;
	return k;
}

/* The index of the n-th (0-based) such request, or -1. */
static int req_at(struct fx *f, const char *method, const char *prefix, int nth)
{
	size_t i, n = cs_count(&f->fk.cs);

	for (i = 0; i < n && i < CS_MAX_REQS; i++)
		if (!strcmp(f->fk.cs.reqs[i].method, method) && !strncmp(f->fk.cs.reqs[i].target, prefix, strlen(prefix)) &&
		    nth-- == 0)
			return (int)i;
	return -1;
}

#define OPS "/subscriptions/" SUB "/providers/Microsoft.Compute/locations/westeurope/operations/op-1"

/* ---- listing ---- */

static void test_list_groups_nextlink_and_template(void **state)
{
	struct fx *f = *state;
	struct provider_group *gs = NULL;
	struct provider_status st;
	char group[64], inst[32];
	size_t n = 0, i;
	const struct provider_template *t;
	bool zone = false, role = false;

	snprintf(f->fk.tags, sizeof(f->fk.tags),
		 "\"min\":\"1\",\"max\":\"10\",\"aks-managed-poolName\":\"pool1\","
		 "\"k8s.io_cluster-autoscaler_node-template_label_k8s.io_role\":\"batch\","
		 "\"k8s.io_cluster-autoscaler_node-template_label_cpu~2arch\":\"x86\","
		 "\"k8s.io_cluster-autoscaler_node-template_taint_dedicated\":\"ml:NoSchedule\","
		 "\"k8s.io_cluster-autoscaler_node-template_resources_example.com_dongle\":\"2\","
		 "\"k8s.io_cluster-autoscaler_node-template_taint_broken\":\"no-effect\"");
	f->fk.capacity = 3;
	add_vms(&f->fk, 3);
	settle(&f->fk);
	f->fk.fail_vm = 0;
	add_vms(&f->fk, 1);
	settle(&f->fk); /* the fourth VM failed to provision */
	f->fk.capacity = 4;
	make(f, NULL);
	if (f->p->ops->list_groups(f->p, &gs, &n, &st) < 0)
		fail_msg("list_groups: %s", st.message);
	assert_int_equal(n, 1);
	assert_string_equal(gs[0].name, "workers");
	assert_true(gs[0].cloud_sized);
	assert_true(gs[0].members_by_id);
	assert_int_equal(gs[0].min, 1);
	assert_int_equal(gs[0].max, 10);
	assert_int_equal(gs[0].target, 3); /* 4, less the VM that failed */
	assert_int_equal(gs[0].n_instances, 4);
	assert_string_equal(gs[0].instances[0].id, "0");
	assert_string_equal(gs[0].instances[0].provider_id, "azure://" SS_PATH "/virtualMachines/0");
	assert_int_equal(gs[0].instances[0].state, INSTANCE_RUNNING);
	assert_int_equal(gs[0].instances[3].state, INSTANCE_PENDING);
	/* two pages: the nextLink was followed, with the instance view */
	assert_int_equal(reqs(f, "GET", SS_PATH "/virtualMachines?"), 2);
	assert_non_null(strstr(f->fk.cs.reqs[req_at(f, "GET", SS_PATH "/virtualMachines?", 1)].target, "$skiptoken=2"));
	assert_int_equal(azure_provider_calls(f->p, "vms.list"), 2);
	assert_int_equal(azure_provider_calls(f->p, "vmss.get"), 1);
	/* the template: Standard_D4s_v5 (4 vCPU, 16 GiB) less what AKS keeps, from
	 * the provider's table while the Resource SKUs API cannot be read */
	assert_non_null(strstr(f->log, "VM sizes in westeurope: the Resource SKUs API cannot be read ("));
	assert_non_null(strstr(f->log, "using the provider's table of sizes"));
	t = &gs[0].tmpl;
	assert_string_equal(t->instance_type, "Standard_D4s_v5");
	assert_int_equal(t->cpu_m, 4000 - 80);
	assert_int_equal(t->memory, 16384ll * 1024 * 1024 - (4294967296ll / 100 * 25 + 4294967296ll / 100 * 20 +
							       8589934592ll / 100 * 10 + 750ll * 1024 * 1024));
	assert_int_equal(t->pods, 110);
	for (i = 0; i < t->n_labels; i++) {
		if (!strcmp(t->labels[i].key, "topology.kubernetes.io/zone"))
			zone = !strcmp(t->labels[i].value, "westeurope-2");
		if (!strcmp(t->labels[i].key, "k8s.io/role"))
			role = !strcmp(t->labels[i].value, "batch");
	}
	assert_true(zone);
	assert_true(role);
	assert_int_equal(t->n_taints, 1);
	assert_string_equal(t->taints[0].key, "dedicated");
	assert_string_equal(t->taints[0].value, "ml");
	assert_string_equal(t->taints[0].effect, "NoSchedule");
	assert_int_equal(t->n_resources, 1);
	assert_string_equal(t->resources[0].name, "example.com/dongle");
	assert_non_null(strstr(f->log, "1 node-template tag(s) ignored, the first k8s.io_cluster-autoscaler_node-template_taint_broken"));
	assert_non_null(strstr(f->log, "1 VM(s) failed to provision (AllocationFailed"));
	/* map_node: the kubelet's providerID, whatever its case */
	assert_int_equal(f->p->ops->map_node(f->p, "azure:///subscriptions/" SUB "/resourcegroups/rg-prod/providers/"
					     "microsoft.compute/virtualmachinescalesets/POOL1/virtualmachines/2",
					     group, sizeof(group), inst, sizeof(inst)), 0);
	assert_string_equal(group, "workers");
	assert_string_equal(inst, "2");
	assert_int_equal(f->p->ops->map_node(f->p, "azure:///subscriptions/1a1b2c3d-0000-4000-8000-00000000abcd/"
					     "resourceGroups/rg-prod/providers/Microsoft.Compute/"
					     "virtualMachineScaleSets/pool1/virtualMachines/2",
					     group, sizeof(group), inst, sizeof(inst)), -1);
	assert_int_equal(f->p->ops->map_node(f->p, "azure://" SS_PATH "/virtualMachines/x2", group, sizeof(group),
					     inst, sizeof(inst)), -1);
	assert_int_equal(f->p->ops->map_node(f->p, "gce://p/us-central1-a/pool1-2", group, sizeof(group), inst,
					     sizeof(inst)), -1);
	provider_groups_free(gs, n);
}

/* ---- launch ---- */

static void test_launch_follows_async_operation(void **state)
{
	struct fx *f = *state;
	int put, op0, op1, op2;
	cJSON *body;

	f->fk.capacity = 2;
	add_vms(&f->fk, 2);
	settle(&f->fk);
	make(f, NULL);
	f->p->ops->launch(f->p, "workers", 2, on_instance, on_done, f);
	assert_int_equal(f->n_done, 1);
	if (f->done.code != PROVIDER_OK)
		fail_msg("launch: %s", f->done.message);
	assert_int_equal(f->done_count, 2);
	/* each new VM reported, with its providerID */
	assert_int_equal(f->n_seen, 2);
	assert_string_equal(f->seen[0].id, "2");
	assert_string_equal(f->seen[1].id, "3");
	assert_string_equal(f->seen[1].provider_id, "azure://" SS_PATH "/virtualMachines/3");
	assert_string_equal(f->seen[1].group, "workers");
	/* one PUT of the sparse body, under the etag read this round */
	assert_int_equal(reqs(f, "PUT", SS_PATH), 1);
	put = req_at(f, "PUT", SS_PATH, 0);
	assert_string_equal(cs_header(&f->fk.cs.reqs[put], "If-Match"), "\"1\"");
	body = cJSON_Parse(f->fk.cs.reqs[put].body);
	assert_non_null(body);
	assert_int_equal(cJSON_GetArraySize(body), 2);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(body, "location")->valuestring, "westeurope");
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(body, "sku"), "capacity")->valueint, 4);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(body, "sku"), "name")->valuestring,
			    "Standard_D4s_v5");
	cJSON_Delete(body);
	assert_true(req_at(f, "GET", SS_PATH "?", 0) < put);
	assert_true(req_at(f, "GET", SS_PATH "/virtualMachines?", 0) < put);
	/* the operation polled (its absolute URL rebased onto the configured root)
	 * at the times Retry-After named: 7 s after the PUT, then 11 s apart */
	assert_int_equal(reqs(f, "GET", OPS), 3);
	op0 = req_at(f, "GET", OPS, 0);
	op1 = req_at(f, "GET", OPS, 1);
	op2 = req_at(f, "GET", OPS, 2);
	assert_int_equal(f->fk.t[op0] - f->fk.t[put], 7 * CLOCK_NS_PER_S);
	assert_int_equal(f->fk.t[op1] - f->fk.t[op0], 11 * CLOCK_NS_PER_S);
	assert_int_equal(f->fk.t[op2] - f->fk.t[op1], 11 * CLOCK_NS_PER_S);
	assert_int_equal(f->fk.capacity, 4);
}

static void *launch_one(void *arg)
{
	struct fx *f = arg;

	f->p->ops->launch(f->p, "workers", 1, on_instance, on_done, f);
	return NULL;
}

/* Launches of one group at once: their writes take turns, each from the
 * size the previous one left, and no VM is reported twice. */
static void test_concurrent_launches_of_one_group(void **state)
{
	struct fx *f = *state;
	pthread_t th[3];
	int i, j;

	f->fk.op_polls = 1;
	make(f, NULL);
	for (i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&th[i], NULL, launch_one, f), 0);
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(f->n_done, 3);
	if (f->done.code != PROVIDER_OK)
		fail_msg("launch: %s", f->done.message);
	assert_int_equal(f->fk.capacity, 3);
	assert_int_equal(reqs(f, "PUT", SS_PATH), 3); /* no 412: the writes never raced */
	assert_int_equal(f->n_seen, 3);
	for (i = 0; i < 3; i++)
		for (j = 0; j < i; j++)
			assert_string_not_equal(f->seen[i].id, f->seen[j].id);
}

static void test_launch_follows_location(void **state)
{
	struct fx *f = *state;
	int put, op0, op1;

	f->fk.location_mode = true;
	f->fk.put_retry_after = 3;
	f->fk.poll_retry_after = 4;
	f->fk.op_polls = 1;
	make(f, NULL);
	f->p->ops->launch(f->p, "workers", 1, on_instance, on_done, f);
	if (f->done.code != PROVIDER_OK)
		fail_msg("launch: %s", f->done.message);
	assert_int_equal(f->n_seen, 1);
	assert_string_equal(f->seen[0].id, "0");
	put = req_at(f, "PUT", SS_PATH, 0);
	op0 = req_at(f, "GET", OPS, 0);
	op1 = req_at(f, "GET", OPS, 1);
	assert_true(op0 > put && op1 > op0);
	assert_int_equal(req_at(f, "GET", OPS, 2), -1); /* 200 ends it */
	assert_non_null(strstr(f->fk.cs.reqs[op0].target, "monitor=true"));
	assert_int_equal(f->fk.t[op0] - f->fk.t[put], 3 * CLOCK_NS_PER_S);
	assert_int_equal(f->fk.t[op1] - f->fk.t[op0], 4 * CLOCK_NS_PER_S);
}

static void test_launch_412_reads_again_once(void **state)
{
	struct fx *f = *state;
	cJSON *body;
	int put2;

	f->fk.capacity = 2;
	add_vms(&f->fk, 2);
	settle(&f->fk);
	f->fk.put_412 = 1;
	f->fk.bump_412 = 3; /* another writer went to 5 meanwhile */
	f->fk.op_polls = 0;
	make(f, NULL);
	f->p->ops->launch(f->p, "workers", 1, on_instance, on_done, f);
	if (f->done.code != PROVIDER_OK)
		fail_msg("launch: %s", f->done.message);
	assert_int_equal(reqs(f, "PUT", SS_PATH), 2);
	assert_int_equal(reqs(f, "GET", SS_PATH "?"), 2);
	put2 = req_at(f, "PUT", SS_PATH, 1);
	assert_string_equal(cs_header(&f->fk.cs.reqs[put2], "If-Match"), "\"2\"");
	body = cJSON_Parse(f->fk.cs.reqs[put2].body);
	/* from the size read again (5), not the first (2) */
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(body, "sku"), "capacity")->valueint, 6);
	cJSON_Delete(body);
	assert_int_equal(f->fk.capacity, 6);
	/* the other writer's VMs are not ours */
	assert_int_equal(f->n_seen, 1);
	assert_string_equal(f->seen[0].id, "5");
	/* twice: nothing more is written */
	provider_free(f->p);
	f->p = NULL;
	config_free(f->cfg);
	f->cfg = NULL;
	f->fk.put_412 = 2;
	f->fk.bump_412 = 1;
	f->n_done = f->n_seen = 0;
	make(f, NULL);
	f->p->ops->launch(f->p, "workers", 1, on_instance, on_done, f);
	assert_int_equal(f->done.code, PROVIDER_TRANSIENT);
	assert_non_null(strstr(f->done.message, "HTTP 412 twice"));
	assert_int_equal(reqs(f, "PUT", SS_PATH), 4);
	assert_int_equal(f->n_seen, 0);
}

static void test_no_write_after_a_failed_read(void **state)
{
	struct fx *f = *state;
	int64_t until;
	size_t before;

	f->fk.capacity = 200;
	snprintf(f->fk.tags, sizeof(f->fk.tags), "\"max\":\"500\"");
	/* a throttled read: ARM asks for two minutes */
	f->fk.get_fail = 1;
	f->fk.get_status = 429;
	f->fk.get_retry_after = "120";
	make(f, NULL);
	f->p->ops->launch(f->p, "workers", 3, on_instance, on_done, f);
	assert_int_equal(f->done.code, PROVIDER_THROTTLED);
	assert_int_equal(reqs(f, "PUT", SS_PATH), 0);
	until = azure_provider_throttled_until(f->p, false);
	assert_int_equal(until, clock_now(&f->clk->base) + 120 * CLOCK_NS_PER_S);
	/* during the window nothing is sent at all */
	before = cs_count(&f->fk.cs);
	f->p->ops->launch(f->p, "workers", 3, on_instance, on_done, f);
	assert_int_equal(f->done.code, PROVIDER_THROTTLED);
	if (!strstr(f->done.message, "ARM throttles this subscription's reads for 120 s more"))
		fail_msg("%s", f->done.message);
	assert_int_equal(cs_count(&f->fk.cs), before);
	/* an answer without a capacity: no write either */
	sc_set_wall(f->clk, T0, T0 + 121);
	f->fk.no_capacity = true;
	f->p->ops->launch(f->p, "workers", 3, on_instance, on_done, f);
	assert_int_equal(f->done.code, PROVIDER_TRANSIENT);
	assert_non_null(strstr(f->done.message, "nothing written"));
	/* nor after server errors that outlast the retries */
	f->fk.no_capacity = false;
	f->fk.get_fail = 3;
	f->fk.get_status = 500;
	f->fk.get_retry_after = NULL;
	f->fk.get_error = "{\"error\":{\"code\":\"InternalExecutionError\",\"message\":\"oops\"}}";
	f->p->ops->launch(f->p, "workers", 3, on_instance, on_done, f);
	assert_int_equal(f->done.code, PROVIDER_TRANSIENT);
	assert_int_equal(reqs(f, "PUT", SS_PATH), 0);
	assert_int_equal(f->fk.capacity, 200);
	assert_int_equal(f->n_seen, 0);
	/* and the max is the scale set's */
	f->p->ops->launch(f->p, "workers", 301, on_instance, on_done, f);
	assert_int_equal(f->done.code, PROVIDER_INVALID);
	assert_non_null(strstr(f->done.message, "above the group's max 500"));
	assert_int_equal(reqs(f, "PUT", SS_PATH), 0);
}

static void test_failed_vm_is_a_failed_launch(void **state)
{
	struct fx *f = *state;

	f->fk.fail_vm = 1;
	f->fk.op_fail = true;
	f->fk.op_code = "AllocationFailed";
	f->fk.op_msg = "Allocation failed. Please try a different VM size.";
	make(f, NULL);
	f->p->ops->launch(f->p, "workers", 2, on_instance, on_done, f);
	assert_int_equal(f->n_done, 1);
	assert_int_equal(f->done.code, PROVIDER_NO_CAPACITY);
	assert_true(provider_error_backs_off_group(f->done.code));
	assert_non_null(strstr(f->done.message, "AllocationFailed"));
	assert_int_equal(f->done_count, 1);
	{
		int told = 0, gone = 0, i;

		/* reported while Creating, it is given back (INSTANCE_GONE) once Failed */
		for (i = 0; i < f->n_seen; i++)
			if (!strcmp(f->seen[i].id, "1")) {
				if (f->seen[i].state == INSTANCE_GONE)
					gone++;
				else
					told++;
			}
		assert_int_equal(told, 1);
		assert_int_equal(gone, 1);
	}
	/* the failed VM is given back */
	assert_int_equal(reqs(f, "POST", SS_PATH "/delete"), 1);
	assert_string_equal(f->fk.deleted, "1");
	assert_int_equal(f->fk.capacity, 1);
}

static void test_quota_error_is_quota(void **state)
{
	struct fx *f = *state;

	f->fk.location_mode = true;
	f->fk.op_fail = true;
	f->fk.op_polls = 0;
	f->fk.fail_vm = 0;
	f->fk.op_code = "OperationNotAllowed";
	f->fk.op_msg = "Operation could not be completed as it results in exceeding approved standardDSv5Family Cores quota.";
	make(f, NULL);
	f->p->ops->launch(f->p, "workers", 1, on_instance, on_done, f);
	assert_int_equal(f->done.code, PROVIDER_QUOTA);
	assert_non_null(strstr(f->done.message, "quota"));
}

/* ---- throttling ---- */

static void test_throttling_windows(void **state)
{
	struct fx *f = *state;
	struct provider_group *gs = NULL;
	struct provider_status st;
	size_t n = 0, before;
	int64_t now;

	make(f, NULL);
	/* OperationNotAllowed with TooManyRequests details: the window's endTime rules */
	f->fk.vms_fail = 1;
	f->fk.vms_window_s = 600;
	now = clock_now(&f->clk->base);
	assert_int_equal(f->p->ops->list_groups(f->p, &gs, &n, &st), -1);
	assert_int_equal(st.code, PROVIDER_THROTTLED);
	assert_int_equal(azure_provider_throttled_until(f->p, false), now + 600 * CLOCK_NS_PER_S);
	assert_int_equal(azure_provider_throttled_until(f->p, true), 0);
	assert_true(ratelimit_rate(f->p->reads) < 1000);
	before = cs_count(&f->fk.cs);
	assert_int_equal(f->p->ops->list_groups(f->p, &gs, &n, &st), -1);
	assert_int_equal(cs_count(&f->fk.cs), before);
	/* writes are another budget: a delete still goes */
	f->p->ops->terminate(f->p, "workers", (const char *const[]){ "0" }, 1, on_done, f);
	assert_int_equal(f->done.code, PROVIDER_OK);
	/* once the window ends, calls go again */
	sc_set_wall(f->clk, T0, T0 + 601);
	if (f->p->ops->list_groups(f->p, &gs, &n, &st) < 0)
		fail_msg("list_groups: %s", st.message);
	provider_groups_free(gs, n);
	/* a short Retry-After is waited inside the call */
	f->fk.get_fail = 1;
	f->fk.get_status = 429;
	f->fk.get_retry_after = "2";
	now = clock_now(&f->clk->base);
	if (f->p->ops->list_groups(f->p, &gs, &n, &st) < 0)
		fail_msg("list_groups: %s", st.message);
	assert_true(clock_now(&f->clk->base) - now >= 2 * CLOCK_NS_PER_S);
	assert_true(clock_now(&f->clk->base) - now <= 20 * CLOCK_NS_PER_S);
	provider_groups_free(gs, n);
}

/* A Flexible scale set is left out, with a warning; the others are listed. */
static void test_flexible_scale_set_left_out(void **state)
{
	struct fx *f = *state;
	struct provider_group *gs = NULL;
	struct provider_status st;
	size_t n = 9;

	f->fk.flexible = true;
	make(f, NULL);
	if (f->p->ops->list_groups(f->p, &gs, &n, &st) < 0)
		fail_msg("list_groups: %s", st.message);
	assert_int_equal(n, 0);
	assert_non_null(strstr(f->log, "scale set pool1 is in Flexible orchestration mode"));
	provider_groups_free(gs, n);
}

/* A VM that says latestModelApplied false no longer runs its scale set's
 * model: that is its drift; true, or not said (Flexible, older answers),
 * judges nothing. */
static void test_latest_model_applied_is_drift(void **state)
{
	struct fx *f = *state;
	struct provider_group *gs = NULL;
	struct provider_status st;
	size_t n = 0;

	f->fk.capacity = 3;
	add_vms(&f->fk, 3);
	settle(&f->fk);
	f->fk.vms[0].latest = "false";
	f->fk.vms[1].latest = "true";
	make(f, NULL);
	if (f->p->ops->list_groups(f->p, &gs, &n, &st) < 0)
		fail_msg("list_groups: %s", st.message);
	assert_int_equal(n, 1);
	assert_int_equal(gs[0].n_instances, 3);
	assert_string_equal(gs[0].instances[0].outdated,
			    "scale set pool1's model has changed since the VM was made (latestModelApplied false)");
	assert_string_equal(gs[0].instances[1].outdated, "");
	assert_string_equal(gs[0].instances[2].outdated, "");
	provider_groups_free(gs, n);
}

/* A scale set without sku.capacity is skipped, not the whole list: its
 * group keeps its last good view, marked stale, with one warning naming
 * it (not one a round); read well again, it is current and said once. */
static void test_scale_set_without_capacity_kept_stale(void **state)
{
	struct fx *f = *state;
	struct provider_group *gs = NULL;
	struct provider_status st;
	size_t n = 0;
	int round;

	f->fk.capacity = 2;
	add_vms(&f->fk, 2);
	settle(&f->fk);
	make(f, NULL);
	if (f->p->ops->list_groups(f->p, &gs, &n, &st) < 0)
		fail_msg("list_groups: %s", st.message);
	assert_int_equal(n, 1);
	assert_int_equal(gs[0].stale_since, 0);
	provider_groups_free(gs, n);
	f->fk.no_capacity = true;
	for (round = 0; round < 2; round++) {
		if (f->p->ops->list_groups(f->p, &gs, &n, &st) < 0)
			fail_msg("list_groups round %d: %s", round, st.message);
		assert_int_equal(n, 1);
		assert_string_equal(gs[0].name, "workers");
		assert_int_equal(gs[0].target, 2);
		assert_int_equal(gs[0].n_instances, 2);
		assert_int_equal(gs[0].stale_since, T0);
		provider_groups_free(gs, n);
	}
	{
		const char *w = strstr(f->log, "azure: node group workers is skipped: scale set pool1 has no sku.capacity");

		assert_non_null(w);
		assert_null(strstr(w + 1, "azure: node group workers is skipped"));
	}
	f->fk.no_capacity = false;
	f->fk.capacity = 3;
	if (f->p->ops->list_groups(f->p, &gs, &n, &st) < 0)
		fail_msg("list_groups: %s", st.message);
	assert_int_equal(gs[0].target, 3);
	assert_int_equal(gs[0].stale_since, 0);
	provider_groups_free(gs, n);
	assert_non_null(strstr(f->log, "azure: node group workers: its scale set is read well again"));
}

/* A 401 drops the token and fetches another once; a second 401 is an auth error. */
static void test_401_fetches_a_new_token_once(void **state)
{
	struct fx *f = *state;
	struct provider_group *gs = NULL;
	struct provider_status st;
	size_t n = 0;

	f->fk.unauth = 1;
	make(f, NULL);
	if (f->p->ops->list_groups(f->p, &gs, &n, &st) < 0)
		fail_msg("list_groups: %s", st.message);
	provider_groups_free(gs, n);
	assert_int_equal(f->fk.imds_calls, 2);
	f->fk.unauth = 2;
	assert_int_equal(f->p->ops->list_groups(f->p, &gs, &n, &st), -1);
	assert_int_equal(st.code, PROVIDER_AUTH);
	/* ARM's code first, then its message, then the call */
	assert_int_equal(strncmp(st.message, "InvalidAuthenticationToken: ", 28), 0);
	assert_non_null(strstr(st.message, ": HTTP 401"));
	assert_int_equal(f->fk.imds_calls, 3);
}

/* What the provider needs is named at start, before any call. */
static void test_settings_named_at_start(void **state)
{
	struct fx *f = *state;
	struct errbuf e = { "" };
	struct azure_provider_opts o;
	struct config_opts co = { .flags = CONFIG_OFFLINE };
	static const char yaml[] = "node_groups:\n  - name: workers\nprovider: {kind: azure}\n";

	f->cfg = config_parse_opts(yaml, strlen(yaml), "azure.yaml", &co, &e);
	assert_non_null(f->cfg);
	memset(&o, 0, sizeof(o));
	o.config = f->cfg;
	o.clock = &f->clk->base;
	o.log = &f->logger;
	o.env.get = fx_getenv;
	o.env.ud = f;
	/* no resource group anywhere */
	f->env[3][0] = '\0';
	assert_null(azure_provider_new(&o, &e));
	assert_non_null(strstr(e.msg, "node group workers has no resource group: set its azure.resource_group, "
			       "provider.azure.resource_group or ARM_RESOURCE_GROUP"));
	/* the simulator's endpoint is for a loopback simulator only */
	snprintf(f->env[3], sizeof(f->env[3]), "ARM_RESOURCE_GROUP=%s", RG);
	snprintf(f->env[1], sizeof(f->env[1]), "LUASCALE_SIM_AZURE_ARM_ENDPOINT=http://10.1.2.3/");
	assert_null(azure_provider_new(&o, &e));
	assert_non_null(strstr(e.msg, "LUASCALE_SIM_AZURE_ARM_ENDPOINT must be http:// to a loopback simulator"));
	/* a cloud the provider does not know */
	snprintf(f->env[1], sizeof(f->env[1]), "ARM_CLOUD=AzureGermanCloud");
	assert_null(azure_provider_new(&o, &e));
	assert_non_null(strstr(e.msg, "cloud \"AzureGermanCloud\" (ARM_CLOUD) is not public, china or usgov"));
	/* no subscription */
	f->env[1][0] = '\0';
	f->env[0][0] = '\0';
	assert_null(azure_provider_new(&o, &e));
	assert_non_null(strstr(e.msg, "no subscription: set provider.azure.subscription_id or ARM_SUBSCRIPTION_ID"));
	assert_int_equal(cs_count(&f->fk.cs), 0);
}

/* ---- terminate, discovery ---- */

static void test_terminate(void **state)
{
	struct fx *f = *state;
	size_t before;

	f->fk.capacity = 3;
	add_vms(&f->fk, 3);
	settle(&f->fk);
	make(f, NULL);
	f->p->ops->terminate(f->p, "workers", (const char *const[]){ "0", "2" }, 2, on_done, f);
	assert_int_equal(f->done.code, PROVIDER_OK);
	assert_int_equal(f->done_count, 2);
	assert_string_equal(f->fk.deleted, "0,2");
	assert_int_equal(f->fk.capacity, 1);
	before = cs_count(&f->fk.cs);
	f->p->ops->terminate(f->p, "workers", (const char *const[]){ "1/../x" }, 1, on_done, f);
	assert_int_equal(f->done.code, PROVIDER_INVALID);
	f->p->ops->terminate(f->p, "nope", (const char *const[]){ "1" }, 1, on_done, f);
	assert_int_equal(f->done.code, PROVIDER_NOT_FOUND);
	assert_int_equal(cs_count(&f->fk.cs), before);
}

static void test_discovery_by_tags(void **state)
{
	struct fx *f = *state;
	struct provider_group *gs = NULL;
	struct provider_status st;
	char group[64], inst[32];
	size_t n = 0;

	snprintf(f->fk.tags, sizeof(f->fk.tags), "\"k8s.io_cluster-autoscaler_enabled\":\"true\","
		 "\"k8s.io_cluster-autoscaler_prod\":\"owned\",\"min\":\"2\"");
	f->fk.capacity = 2;
	add_vms(&f->fk, 2);
	settle(&f->fk);
	make(f, "provider:\n  kind: azure\n  azure:\n    discovery:\n"
		"      - tags: {k8s.io_cluster-autoscaler_enabled: \"true\", k8s.io_cluster-autoscaler_prod: \"\"}\n"
		"        max: 8\n");
	if (f->p->ops->list_groups(f->p, &gs, &n, &st) < 0)
		fail_msg("list_groups: %s", st.message);
	assert_int_equal(n, 1);
	assert_string_equal(gs[0].name, "pool1");
	assert_true(gs[0].cloud_sized);
	assert_int_equal(gs[0].min, 2);
	assert_int_equal(gs[0].max, 8);
	assert_int_equal(gs[0].n_instances, 2);
	assert_string_equal(gs[0].tmpl.instance_type, "Standard_D4s_v5");
	/* the listing had the scale set: it is not read again */
	assert_int_equal(azure_provider_calls(f->p, "vmss.get"), 0);
	assert_int_equal(azure_provider_calls(f->p, "vmss.list"), 1);
	assert_int_equal(f->p->ops->map_node(f->p, "azure://" SS_PATH "/virtualMachines/1", group, sizeof(group),
					     inst, sizeof(inst)), 0);
	assert_string_equal(group, "pool1");
	provider_groups_free(gs, n);
}

/* ---- the parsers ---- */

static void test_errors_and_ids(void **state)
{
	struct azure_error e;
	struct azure_resource_id id;
	size_t n, i;
	const struct azure_vm_size *sz = azure_vm_sizes(&n);
	static const struct { long status; const char *body; enum provider_error want; } cases[] = {
		{ 409, "{\"error\":{\"code\":\"AllocationFailed\",\"message\":\"x\"}}", PROVIDER_NO_CAPACITY },
		{ 200, "{\"code\":\"ZonalAllocationFailed\",\"message\":\"x\"}", PROVIDER_NO_CAPACITY },
		{ 409, "{\"error\":{\"code\":\"SkuNotAvailable\"}}", PROVIDER_NO_CAPACITY },
		{ 409, "{\"error\":{\"code\":\"OperationNotAllowed\",\"message\":\"exceeding approved Total Regional Cores quota\"}}", PROVIDER_QUOTA },
		{ 409, "{\"error\":{\"code\":\"OperationNotAllowed\",\"message\":\"busy\",\"details\":[{\"code\":\"TooManyRequests\"}]}}", PROVIDER_THROTTLED },
		{ 429, "", PROVIDER_THROTTLED },
		{ 409, "{\"error\":{\"code\":\"OperationNotAllowed\",\"message\":\"another operation\"}}", PROVIDER_TRANSIENT },
		{ 403, "{\"error\":{\"code\":\"AuthorizationFailed\"}}", PROVIDER_AUTH },
		{ 404, "{\"error\":{\"code\":\"ResourceNotFound\"}}", PROVIDER_NOT_FOUND },
		{ 503, "<html>", PROVIDER_TRANSIENT },
		{ 400, "{\"error\":{\"code\":\"InvalidParameter\",\"message\":\"bad\\nline\"}}", PROVIDER_INVALID },
	};

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		azure_error_parse(cases[i].body, strlen(cases[i].body), cases[i].status, &e);
		if (azure_error_class(&e) != cases[i].want)
			fail_msg("case %zu (%s): class %d, want %d", i, cases[i].body, azure_error_class(&e), cases[i].want);
	}
	assert_null(strchr(e.message, '\n')); /* a cloud's text cannot forge a log line */
	/* the penalty window's end, fractions and offsets allowed */
	{
		static const char body[] =
			"{\"error\":{\"code\":\"OperationNotAllowed\",\"details\":[{\"code\":\"TooManyRequests\","
			"\"message\":\"{\\\"startTime\\\":\\\"2020-01-27T19:44:37.5836669+00:00\\\",\\\"endTime\\\":"
			"\\\"2020-01-27T20:00:00+00:00\\\"}\"}]}}";

		azure_error_parse(body, strlen(body), 409, &e);
	}
	assert_string_equal(e.detail_code, "TooManyRequests");
	assert_int_equal(e.window_end_s, 1580155200);
	/* providerIDs */
	assert_int_equal(azure_parse_provider_id("azure://" SS_PATH "/virtualMachines/17", &id), 0);
	assert_string_equal(id.subscription, SUB);
	assert_string_equal(id.resource_group, RG);
	assert_string_equal(id.vmss, SS);
	assert_string_equal(id.instance, "17");
	assert_int_equal(azure_parse_provider_id("AZURE:///SUBSCRIPTIONS/s/RESOURCEGROUPS/r/PROVIDERS/MICROSOFT.COMPUTE/"
						 "VIRTUALMACHINESCALESETS/v/VIRTUALMACHINES/1", &id), 0);
	assert_int_equal(azure_parse_provider_id("azure://" SS_PATH "/virtualMachines/17/extra", &id), -1);
	assert_int_equal(azure_parse_provider_id("azure://" SS_PATH "/virtualMachines/", &id), -1);
	assert_int_equal(azure_parse_provider_id("azure:///subscriptions/s/resourceGroups/r/providers/Microsoft.Compute/"
						 "virtualMachines/vm1", &id), -1);
	assert_int_equal(azure_parse_provider_id("azure:///subscriptions/s/resourceGroups/r%2f/providers/Microsoft.Compute/"
						 "virtualMachineScaleSets/v/virtualMachines/1", &id), -1);
	/* the size table: sorted (bsearch), found whatever the case */
	for (i = 1; i < n; i++)
		assert_true(strcasecmp(sz[i - 1].name, sz[i].name) < 0);
	assert_non_null(azure_vm_size_find("standard_nc24ads_a100_v4"));
	assert_int_equal(azure_vm_size_find("standard_nc24ads_a100_v4")->gpus, 1);
	assert_int_equal(azure_vm_size_find("Standard_E64s_v3")->memory_mib, 432 * 1024);
	assert_null(azure_vm_size_find("Standard_Imaginary_v9"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
		T(test_list_groups_nextlink_and_template),
		T(test_launch_follows_async_operation),
		T(test_launch_follows_location),
		T(test_concurrent_launches_of_one_group),
		T(test_launch_412_reads_again_once),
		T(test_no_write_after_a_failed_read),
		T(test_failed_vm_is_a_failed_launch),
		T(test_quota_error_is_quota),
		T(test_throttling_windows),
		T(test_flexible_scale_set_left_out),
		T(test_latest_model_applied_is_drift),
		T(test_scale_set_without_capacity_kept_stale),
		T(test_401_fetches_a_new_token_once),
		T(test_settings_named_at_start),
		T(test_terminate),
		T(test_discovery_by_tags),
		cmocka_unit_test(test_errors_and_ids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
