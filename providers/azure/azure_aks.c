/*
 * azure_aks: node groups that are AKS agent pools — the calls that go to
 * Microsoft.ContainerService instead of the pool's scale set: finding the
 * scale set from the pool (the cluster's node resource group, the
 * aks-managed-poolName tag), reading the pool, writing its count and
 * deleting chosen machines. Reads of VMs and templates stay azure.c's;
 * the launch that follows the operation is azure_launch.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "providers/azure/azure_internal.h"

#define MAX_PAGES 1000

void aks_pool_free(struct aks_pool *a)
{
	cJSON_Delete(a->props);
	a->props = NULL;
}

/* The path of the group's agent pool, then 'tail' ("", "/deleteMachines"),
 * with the agentPools api-version. */
static void aks_path(const struct az_prov *ap, const struct az_group *g, const char *tail, char *out, size_t len)
{
	snprintf(out, len, "subscriptions/%s/resourceGroups/%s/providers/Microsoft.ContainerService/managedClusters/%s/"
		 "agentPools/%s%s?api-version=" AZURE_AKS_API_VERSION, ap->sub, g->aks_rg, g->aks_cluster, g->aks_pool,
		 tail);
}

/* The pool a scale set's tags say it is (aks-managed-poolName, else poolName). */
static bool is_pool(const cJSON *vmss, const char *pool)
{
	const char *p = azure_aks_pool(vmss);

	return p && !strcmp(p, pool);
}

int azure_aks_resolve(struct provider *p, struct az_group *g, struct provider_status *st)
{
	struct az_prov *ap = AP(p);
	struct arm_resp r;
	char path[1024], nrg[96] = "";
	int pages = 0;

	if (g->vmss[0])
		return 0;
	snprintf(path, sizeof(path), "subscriptions/%s/resourceGroups/%s/providers/Microsoft.ContainerService/"
		 "managedClusters/%s?api-version=" AZURE_AKS_API_VERSION, ap->sub, g->aks_rg, g->aks_cluster);
	if (azure_call(p, false, "aks.cluster.get", "GET", path, NULL, NULL, &r, st) < 0) {
		azure_resp_free(&r);
		return -1;
	}
	snprintf(nrg, sizeof(nrg), "%s",
		 azure_jstr(cJSON_GetObjectItemCaseSensitive(r.json, "properties"), "nodeResourceGroup"));
	azure_resp_free(&r);
	if (!nrg[0] || strpbrk(nrg, "/?#%& ")) {
		azure_status(st, PROVIDER_INVALID, "AKS cluster %s (resource group %s) names no properties.nodeResourceGroup: "
			     "the scale set of pool %s cannot be found", g->aks_cluster, g->aks_rg, g->aks_pool);
		return -1;
	}
	snprintf(path, sizeof(path), "subscriptions/%s/resourceGroups/%s/providers/Microsoft.Compute/virtualMachineScaleSets",
		 ap->sub, nrg);
	for (;;) {
		const cJSON *v;

		if (azure_call(p, false, "vmss.list", "GET", path, NULL, NULL, &r, st) < 0) {
			azure_resp_free(&r);
			return -1;
		}
		cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(r.json, "value")) {
			const char *name = azure_jstr(v, "name");

			if (is_pool(v, g->aks_pool) && name[0] && strlen(name) < sizeof(g->vmss)) {
				snprintf(g->rg, sizeof(g->rg), "%s", nrg);
				snprintf(g->vmss, sizeof(g->vmss), "%s", name);
				break;
			}
		}
		snprintf(path, sizeof(path), "%s", g->vmss[0] ? "" : azure_jstr(r.json, "nextLink"));
		azure_resp_free(&r);
		if (!path[0] || ++pages > MAX_PAGES)
			break;
	}
	if (!g->vmss[0]) {
		azure_status(st, PROVIDER_NOT_FOUND, "AKS pool %s of cluster %s: no scale set in its node resource group %s "
			     "is tagged aks-managed-poolName=%s (only VirtualMachineScaleSets pools are managed)",
			     g->aks_pool, g->aks_cluster, nrg, g->aks_pool);
		return -1;
	}
	log_at(ap->log, LOG_INFO, clock_wall(ap->clock),
	       "azure: node group %s is AKS pool %s of cluster %s (resource group %s); its scale set is %s in %s",
	       g->name, g->aks_pool, g->aks_cluster, g->aks_rg, g->vmss, g->rg);
	return 0;
}

int azure_aks_read(struct provider *p, const struct az_group *g, struct aks_pool *out, struct provider_status *st)
{
	struct az_prov *ap = AP(p);
	struct arm_resp r;
	const cJSON *props, *count, *as;
	char path[1024];

	memset(out, 0, sizeof(*out));
	out->count = -1;
	aks_path(ap, g, "", path, sizeof(path));
	if (azure_call(p, false, "aks.pool.get", "GET", path, NULL, NULL, &r, st) < 0) {
		azure_resp_free(&r);
		return -1;
	}
	props = cJSON_GetObjectItemCaseSensitive(r.json, "properties");
	count = cJSON_GetObjectItemCaseSensitive(props, "count");
	as = cJSON_GetObjectItemCaseSensitive(props, "enableAutoScaling");
	if (!cJSON_IsObject(props) || !cJSON_IsNumber(count) || count->valuedouble < 0 || count->valuedouble > 1000 ||
	    count->valuedouble != (double)(int)count->valuedouble) {
		/* never a count computed from one unknown */
		azure_status(st, PROVIDER_TRANSIENT, "AKS pool %s of cluster %s: the answer has no properties.count "
			     "(a count from 0 to 1000): nothing written", g->aks_pool, g->aks_cluster);
		azure_resp_free(&r);
		return -1;
	}
	out->count = (int)count->valuedouble;
	out->autoscaling = cJSON_IsTrue(as);
	snprintf(out->state, sizeof(out->state), "%s", azure_jstr(props, "provisioningState"));
	/* the etag: the header's, the resource's, else properties.eTag */
	snprintf(out->etag, sizeof(out->etag), "%s", r.etag[0] ? r.etag : azure_jstr(props, "eTag"));
	out->props = cJSON_DetachItemFromObjectCaseSensitive(r.json, "properties");
	azure_resp_free(&r);
	return 0;
}

bool azure_aks_busy(const struct aks_pool *a)
{
	return a->state[0] && strcasecmp(a->state, "Succeeded") && strcasecmp(a->state, "Failed") &&
	       strcasecmp(a->state, "Canceled");
}

int azure_aks_refuse_autoscaling(const struct az_group *g, const char *what, struct provider_status *st)
{
	azure_status(st, PROVIDER_INVALID,
		     "AKS pool %s of cluster %s has AKS's cluster autoscaler on (enableAutoScaling: true): luascale does not "
		     "%s it, two autoscalers would fight over its size; turn it off (az aks nodepool update "
		     "--disable-cluster-autoscaler) or leave the group out of the config", g->aks_pool, g->aks_cluster, what);
	return -1;
}

int azure_aks_write_count(struct provider *p, const struct az_group *g, const struct aks_pool *a, int count,
			  struct arm_resp *r, struct provider_status *st)
{
	static const char *const read_only[] = { "provisioningState", "currentOrchestratorVersion", "nodeImageVersion",
						 "eTag", "status", NULL };
	struct az_prov *ap = AP(p);
	cJSON *body = cJSON_CreateObject(), *props = a->props ? cJSON_Duplicate(a->props, true) : cJSON_CreateObject();
	const char *const *k;
	char path[1024];
	int rc;

	memset(r, 0, sizeof(*r));
	if (!body || !props) {
		cJSON_Delete(body);
		cJSON_Delete(props);
		azure_status(st, PROVIDER_TRANSIENT, "out of memory");
		return -1;
	}
	/* the pool as read, so nothing else of it changes; what the API
	 * computes itself left out */
	for (k = read_only; *k; k++)
		cJSON_DeleteItemFromObjectCaseSensitive(props, *k);
	cJSON_DeleteItemFromObjectCaseSensitive(props, "count");
	cJSON_AddItemToObject(body, "properties", props);
	if (!cJSON_AddNumberToObject(props, "count", count)) {
		cJSON_Delete(body);
		azure_status(st, PROVIDER_TRANSIENT, "out of memory");
		return -1;
	}
	aks_path(ap, g, "", path, sizeof(path));
	rc = azure_call_ex(p, true, true, "aks.pool.put", "PUT", path, body, a->etag[0] ? a->etag : NULL, r, st);
	cJSON_Delete(body);
	return rc;
}

int azure_aks_delete_machines(struct provider *p, const struct az_group *g, const char *const *ids, size_t n,
			      struct provider_status *st)
{
	struct az_prov *ap = AP(p);
	struct aks_pool pool;
	struct arm_resp r;
	cJSON *vms = NULL, *body = NULL, *names;
	char path[1024];
	size_t i;
	int rc = -1;

	memset(&r, 0, sizeof(r));
	if (azure_aks_read(p, g, &pool, st) < 0)
		return -1;
	if (pool.autoscaling) {
		azure_aks_refuse_autoscaling(g, "delete machines of", st);
		goto out;
	}
	if (azure_aks_busy(&pool)) {
		/* AKS takes one operation on a pool at a time: ask again next round */
		azure_status(st, PROVIDER_TRANSIENT, "AKS pool %s of cluster %s is %s (an operation in progress): "
			     "deleteMachines not sent", g->aks_pool, g->aks_cluster, pool.state);
		goto out;
	}
	/* machine names, as AKS names a VMSS pool's machines: the computer names */
	if (azure_list_vms(p, g, &vms, st) < 0)
		goto out;
	body = cJSON_CreateObject();
	names = body ? cJSON_AddArrayToObject(body, "machineNames") : NULL;
	if (!names) {
		azure_status(st, PROVIDER_TRANSIENT, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		const cJSON *it;
		const char *name = NULL;

		cJSON_ArrayForEach(it, vms) {
			const cJSON *os = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(it, "properties"),
									   "osProfile");

			if (!strcmp(azure_jstr(it, "instanceId"), ids[i])) {
				name = azure_jstr(os, "computerName");
				break;
			}
		}
		if (!name || !name[0]) {
			azure_status(st, PROVIDER_NOT_FOUND, "AKS pool %s: instance %.16s of scale set %s %s: deleteMachines not sent",
				     g->aks_pool, ids[i], g->vmss, name ? "has no computer name" : "is not in its VM list");
			goto out;
		}
		cJSON_AddItemToArray(names, cJSON_CreateString(name));
	}
	aks_path(ap, g, "/deleteMachines", path, sizeof(path));
	rc = azure_call(p, true, "aks.delete_machines", "POST", path, body, NULL, &r, st);
out:
	azure_resp_free(&r);
	cJSON_Delete(body);
	cJSON_Delete(vms);
	aks_pool_free(&pool);
	return rc;
}
