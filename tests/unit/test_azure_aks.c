/*
 * Tests for the labels and taints the Azure provider predicts for a new
 * node of an AKS node pool (azure_aks_template): the pool from
 * aks-managed-poolName or the legacy poolName, mode, role, cluster,
 * storage profile and tier, NVIDIA accelerator, and for a Spot scale set
 * the scalesetpriority label and NoSchedule taint; node-template tags win
 * over the prediction; a scale set that is no AKS pool gets none of it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <cjson/cJSON.h>

#include "providers/azure/azure_arm.h"

static const char *label(const struct provider_template *t, const char *k)
{
	size_t i;

	for (i = 0; i < t->n_labels; i++)
		if (!strcmp(t->labels[i].key, k))
			return t->labels[i].value;
	return NULL;
}

static void test_spot_pool(void **state)
{
	const char *json =
		"{\"name\":\"aks-spot-1234-vmss\",\"location\":\"eastus\",\"sku\":{\"name\":\"Standard_NC6s_v3\"},"
		"\"tags\":{\"aks-managed-poolName\":\"spot\",\"poolName\":\"old\","
		"\"k8s.io_cluster-autoscaler_node-template_label_kubernetes.azure.com_mode\":\"system\","
		"\"k8s.io_cluster-autoscaler_node-template_taint_dedicated\":\"gpu:NoExecute\"},"
		"\"properties\":{\"virtualMachineProfile\":{\"priority\":\"Spot\",\"storageProfile\":{\"osDisk\":"
		"{\"diffDiskSettings\":{\"option\":\"Local\"},\"managedDisk\":{\"storageAccountType\":\"Standard_LRS\"}}}}}}";
	cJSON *vmss = cJSON_Parse(json);
	struct provider_template t;
	char bad[64];
	size_t i;
	bool spot_taint = false, gpu_taint = false;

	(void)state;
	memset(&t, 0, sizeof(t));
	assert_non_null(vmss);
	assert_string_equal(azure_aks_pool(vmss), "spot"); /* the new tag before the legacy one */
	azure_aks_template(vmss, azure_aks_pool(vmss), "MC_rg_aks_eastus", 1, &t);
	assert_string_equal(label(&t, "kubernetes.azure.com/agentpool"), "spot");
	assert_string_equal(label(&t, "agentpool"), "spot");
	assert_string_equal(label(&t, "kubernetes.azure.com/mode"), "user");
	assert_string_equal(label(&t, "kubernetes.azure.com/role"), "agent");
	assert_string_equal(label(&t, "kubernetes.azure.com/cluster"), "MC_rg_aks_eastus");
	assert_string_equal(label(&t, "kubernetes.azure.com/storageprofile"), "ephemeral");
	assert_string_equal(label(&t, "storagetier"), "Standard_LRS");
	assert_string_equal(label(&t, "kubernetes.azure.com/accelerator"), "nvidia");
	assert_string_equal(label(&t, "kubernetes.azure.com/scalesetpriority"), "spot");
	/* the scale set's node-template tags come after and win */
	assert_int_equal(azure_template_tags(cJSON_GetObjectItemCaseSensitive(vmss, "tags"), &t, bad, sizeof(bad)), 0);
	assert_string_equal(label(&t, "kubernetes.azure.com/mode"), "system");
	for (i = 0; i < t.n_taints; i++) {
		if (!strcmp(t.taints[i].key, "kubernetes.azure.com/scalesetpriority") &&
		    !strcmp(t.taints[i].value, "spot") && !strcmp(t.taints[i].effect, "NoSchedule"))
			spot_taint = true;
		if (!strcmp(t.taints[i].key, "dedicated") && !strcmp(t.taints[i].effect, "NoExecute"))
			gpu_taint = true;
	}
	assert_true(spot_taint);
	assert_true(gpu_taint);
	provider_template_clear(&t);
	cJSON_Delete(vmss);
}

static void test_regular_and_legacy_pool(void **state)
{
	cJSON *vmss = cJSON_Parse("{\"tags\":{\"poolName\":\"nodepool1\"},\"properties\":{\"virtualMachineProfile\":"
				  "{\"storageProfile\":{\"osDisk\":{\"managedDisk\":{\"storageAccountType\":\"Premium_LRS\"}}}}}}");
	cJSON *plain = cJSON_Parse("{\"tags\":{\"aks-managed-poolName\":\"\"},\"properties\":{\"virtualMachineProfile\":{\"priority\":\"Spot\"}}}");
	struct provider_template t;

	(void)state;
	memset(&t, 0, sizeof(t));
	assert_string_equal(azure_aks_pool(vmss), "nodepool1");
	azure_aks_template(vmss, azure_aks_pool(vmss), "", 0, &t);
	assert_string_equal(label(&t, "agentpool"), "nodepool1");
	assert_string_equal(label(&t, "kubernetes.azure.com/storageprofile"), "managed");
	assert_string_equal(label(&t, "kubernetes.azure.com/storagetier"), "Premium_LRS");
	assert_null(label(&t, "kubernetes.azure.com/cluster"));
	assert_null(label(&t, "kubernetes.azure.com/scalesetpriority"));
	assert_null(label(&t, "accelerator"));
	assert_int_equal((int)t.n_taints, 0);
	provider_template_clear(&t);
	/* no pool tag (or an empty one): not an AKS pool */
	assert_null(azure_aks_pool(plain));
	assert_null(azure_aks_pool(NULL));
	cJSON_Delete(vmss);
	cJSON_Delete(plain);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spot_pool),
		cmocka_unit_test(test_regular_and_legacy_pool),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
