/*
 * Tests for the simulator's Azure flavour (sim/clouds/cloud_azure.c) and the
 * Azure face's pieces (sim/clouds/azure_face.c), on a virtual clock: the
 * scenario's azure: section and its errors, AKS computer names and
 * azure:/// providerIDs, capacity changes and their operations from
 * InProgress to Succeeded or Failed, etags changing with every write,
 * AllocationFailed VMs, quota refusals, deletes, slow operations, If-Match,
 * image faults turning the older VMs' latestModelApplied false.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/clock.h"
#include "runtime/executor.h"
#include "sim/clouds/aws_face.h"
#include "sim/clouds/azure_face.h"
#include "sim/clouds/gce_face.h"
#include "sim/world/scenario.h"
#include "test_sim_cloud.h"

#define S CLOCK_NS_PER_S
#define EXAMPLE SOURCE_DIR "/examples/scenarios/azure.yaml"
#define SUB "6d5a1f3e-2b4c-4d8e-9f10-1a2b3c4d5e6f"

#define GROUPS SIM_TEST_GROUPS("6")

static void expect_error(const char *azure, const char *want)
{
	sim_test_expect_error(GROUPS, "azure", azure, want);
}

static void test_parse(void **state)
{
	struct errbuf err;
	struct sim_scenario *sc = sim_scenario_load(EXAMPLE, &err);
	const struct sim_azure_conf *a;

	(void)state;
	if (!sc)
		fail_msg("%s", err.msg);
	a = sim_scenario_cloud(sc, &sim_cloud_azure);
	assert_non_null(a);
	assert_null(sim_scenario_cloud(sc, &sim_cloud_aws));
	assert_null(sim_scenario_cloud(sc, &sim_cloud_gce));
	assert_string_equal(a->subscription, SUB);
	assert_string_equal(a->resource_group, "MC_sim-rg_sim-aks_eastus");
	assert_int_equal(a->n_groups, 3);
	assert_string_equal(a->groups[0].vmss, "aks-workers-12345678-vmss");
	assert_string_equal(a->groups[0].computer_prefix, "aks-workers-12345678-vmss");
	assert_int_equal(a->groups[0].n_zones, 3);
	assert_int_equal(a->groups[0].n_tags, 5);
	assert_int_equal(a->groups[1].n_zones, 0);
	assert_string_equal(a->groups[2].vm_size, "Standard_NC6s_v3");
	assert_int_equal(a->retry_after_s, 1);
	assert_int_equal(a->page_size, 50);
	assert_int_equal(a->throttle, SIM_AZURE_TOO_MANY_REQUESTS);
	sim_scenario_free(sc);

	/* the other clouds' scenarios stay as they were */
	sc = sim_scenario_load(SOURCE_DIR "/examples/scenarios/gce.yaml", &err);
	if (!sc)
		fail_msg("%s", err.msg);
	assert_null(sim_scenario_cloud(sc, &sim_cloud_azure));
	sim_scenario_free(sc);

	expect_error("  groups: {workers: {vm_size: e2-standard-4}}\n", "unknown VM size \"e2-standard-4\"");
	expect_error("  groups: {workers: {zones: [\"4\"]}}\n", "zone \"4\"");
	expect_error("  groups: {workers: {vmss: \"bad name\"}}\n", "vmss \"bad name\"");
	expect_error("  groups: {workers: {computer_name_prefix: AKS}}\n", "computer_name_prefix \"AKS\"");
	expect_error("  groups: {nosuch: {}}\n", "no node group \"nosuch\"");
	expect_error("  subscription_id: not-a-guid\n", "must be GUIDs");
	expect_error("  location: East US\n", "location \"East US\"");
	expect_error("  throttle: sometimes\n", "throttle: too_many_requests or operation_not_allowed");
	expect_error("  retry_after: 100ms\n", "retry_after at least 1s");
	expect_error("  groups: {workers: {vmss: same}, gpu: {vmss: SAME}}\n", "name one scale set");
}

static void test_names(void **state)
{
	char out[80], code[48], msg[320];

	(void)state;
	sim_azure_computer_name("aks-nodepool1-12345678-vmss", 0, out, sizeof(out));
	assert_string_equal(out, "aks-nodepool1-12345678-vmss000000");
	sim_azure_computer_name("aks-nodepool1-12345678-vmss", 35, out, sizeof(out));
	assert_string_equal(out, "aks-nodepool1-12345678-vmss00000z");
	sim_azure_computer_name("p", 36, out, sizeof(out));
	assert_string_equal(out, "p000010");
	assert_true(sim_azure_valid_guid("72f988bf-86f1-41af-91ab-2d7cd011db47"));
	assert_false(sim_azure_valid_guid("72f988bf86f141af91ab2d7cd011db47"));
	assert_false(sim_azure_valid_guid("72f988bf-86f1-41af-91ab-2d7cd011db4g"));
	sim_azure_failure(PROVIDER_NO_CAPACITY, "Standard_D4s_v3", true, code, sizeof(code), msg, sizeof(msg));
	assert_string_equal(code, "ZonalAllocationFailed");
	sim_azure_failure(PROVIDER_NO_CAPACITY, "Standard_D4s_v3", false, code, sizeof(code), msg, sizeof(msg));
	assert_string_equal(code, "AllocationFailed");
	assert_non_null(strstr(msg, "Standard_D4s_v3"));
	assert_non_null(sim_azure_find_vmsize("standard_d4s_v3"));
	assert_int_equal(sim_azure_find_vmsize("Standard_NC6s_v3")->gpus, 1);
	assert_null(sim_azure_find_vmsize("m5.large"));
	/* the face's pieces */
	assert_true(azure_api_version_ok("2024-11-01"));
	assert_true(azure_api_version_ok("2022-08-01"));
	assert_false(azure_api_version_ok("2099-01-01"));
	assert_false(azure_api_version_ok(NULL));
	assert_true(azure_if_match_ok(NULL, "\"3\""));
	assert_true(azure_if_match_ok("*", "\"3\""));
	assert_true(azure_if_match_ok("\"3\"", "\"3\""));
	assert_true(azure_if_match_ok("3", "\"3\""));
	assert_false(azure_if_match_ok("\"2\"", "\"3\""));
	assert_false(azure_if_match_ok("", "\"3\""));
}

/* The world's Azure flavour. */
static struct sim_azure *azure_of(const struct run *r)
{
	return sim_world_flavour(r->w, &sim_cloud_azure);
}

static void run_start(struct run *r, const char *faults)
{
	char text[4096];

	snprintf(text, sizeof(text),
		 GROUPS
		 "cloud: {boot_delay: 10s, boot_jitter: 0s, launch_latency: 1s, shutdown_delay: 5s}\n"
		 "cluster: {register_delay: 1s}\n"
		 "initial_nodes: [{group: workers, count: 1}]\n"
		 "%s"
		 "azure:\n"
		 "  subscription_id: " SUB "\n"
		 "  resource_group: unit-rg\n"
		 "  operation_time: 3s\n"
		 "  groups:\n"
		 "    workers: {vmss: aks-pool-vmss, zones: [\"1\", \"2\"]}\n"
		 "    gpu: {vmss: aks-gpu-vmss, vm_size: Standard_NC6s_v3}\n",
		 faults);
	sim_test_run_text(r, text);
}

static enum sim_azure_op_status status_of(struct sim_azure *g, const char *id, char *code,
					  size_t size)
{
	struct sim_azure_op op;
	char msg[320];

	assert_true(sim_azure_op_get(g, id, &op));
	return sim_azure_op_status(g, &op, code, size, msg, sizeof(msg));
}

static void test_capacity_and_operations(void **state)
{
	struct run r;
	struct sim_cloud *c;
	struct sim_azure *g;
	const struct sim_azure_vm *vm;
	struct sim_azure_op op, del;
	struct sim_node_info info;
	struct errbuf err;
	char code[48], etag0[32], etag1[32], etag2[32];
	const char *ids[] = {"2"}, *bad[] = {"2", "9"};
	size_t n, k;
	int zone1 = 0;

	(void)state;
	run_start(&r, "");
	c = r.w->cloud;
	g = azure_of(&r);
	executor_run_until(r.ex, 0);
	sim_cloud_lock(c);
	assert_int_equal(sim_azure_capacity(g, 0), 1); /* the starting node */
	assert_int_equal(sim_azure_capacity(g, 1), 0);
	assert_int_equal(sim_azure_find_vmss(g, "AKS-POOL-VMSS"), 0); /* as ARM: any case */
	assert_int_equal(sim_azure_find_vmss(g, "nope"), -1);
	sim_azure_etag(g, 0, etag0, sizeof(etag0));
	assert_int_equal(sim_azure_set_capacity(g, 0, 4, &op, code, sizeof(code), &err), 0);
	sim_azure_etag(g, 0, etag1, sizeof(etag1));
	assert_string_not_equal(etag0, etag1);
	assert_int_equal(sim_azure_capacity(g, 0), 4);
	assert_int_equal(status_of(g, op.id, code, sizeof(code)), SIM_AZURE_IN_PROGRESS);
	assert_true(sim_azure_updating(g, 0));
	vm = sim_azure_vms(g, 0, &n);
	assert_int_equal(n, 4);
	assert_int_equal(vm[0].state, SIM_AZURE_SUCCEEDED);
	for (k = 1; k < n; k++)
		assert_int_equal(vm[k].state, SIM_AZURE_CREATING);
	sim_cloud_unlock(c);

	/* the operation_time passes and the VMs exist: Succeeded */
	executor_run_until(r.ex, 4 * S);
	sim_cloud_lock(c);
	assert_int_equal(status_of(g, op.id, code, sizeof(code)), SIM_AZURE_OP_SUCCEEDED);
	assert_false(sim_azure_updating(g, 0));
	sim_cloud_unlock(c);

	executor_run_until(r.ex, 30 * S);
	sim_cloud_lock(c);
	vm = sim_azure_vms(g, 0, &n);
	assert_int_equal(n, 4);
	for (k = 0; k < n; k++) {
		char want[300], computer[80];

		assert_int_equal(vm[k].instance_id, (int)k);
		assert_int_equal(vm[k].state, SIM_AZURE_SUCCEEDED);
		assert_non_null(vm[k].in);
		sim_azure_computer_name("aks-pool-vmss", (int)k, computer, sizeof(computer));
		assert_string_equal(vm[k].computer, computer);
		assert_string_equal(vm[k].in->node_name, computer);
		snprintf(want, sizeof(want),
			 "azure:///subscriptions/" SUB "/resourceGroups/unit-rg/providers/Microsoft.Compute/virtualMachineScaleSets/aks-pool-vmss/virtualMachines/%zu",
			 k);
		assert_string_equal(vm[k].in->provider_id, want);
		assert_string_equal(vm[k].in->instance_type, "Standard_D4s_v3");
		zone1 += strcmp(vm[k].zone, "1") == 0;
		assert_int_equal(sim_cluster_node(r.w->cluster, computer, &info), 0);
		assert_true(info.ready);
	}
	assert_int_equal(zone1, 2); /* spread over the two zones */
	assert_non_null(sim_azure_find_vm(g, 0, "3"));
	assert_null(sim_azure_find_vm(g, 0, "4"));

	/* delete: all or nothing, capacity down by each */
	assert_int_equal(sim_azure_delete(g, 0, bad, 2, &del, &err), -1);
	assert_non_null(strstr(err.msg, "instanceId 9 is not an active"));
	assert_int_equal(sim_azure_capacity(g, 0), 4);
	assert_int_equal(sim_azure_delete(g, 0, ids, 1, &del, &err), 0);
	assert_int_equal(sim_azure_capacity(g, 0), 3);
	sim_azure_etag(g, 0, etag2, sizeof(etag2));
	assert_string_not_equal(etag1, etag2);
	assert_int_equal(sim_azure_find_vm(g, 0, "2")->state, SIM_AZURE_DELETING);
	assert_int_equal(sim_azure_delete(g, 0, ids, 1, &del, &err), -1); /* already going */
	/* shrinking takes the newest; a new VM never reuses an instance id */
	assert_int_equal(sim_azure_set_capacity(g, 0, 2, &op, code, sizeof(code), &err), 0);
	assert_int_equal(sim_azure_find_vm(g, 0, "3")->state, SIM_AZURE_DELETING);
	assert_int_equal(sim_azure_set_capacity(g, 0, 1001, &op, code, sizeof(code), &err), -1);
	assert_string_equal(code, "InvalidParameter");
	sim_cloud_unlock(c);
	executor_run_until(r.ex, 60 * S);
	sim_cloud_lock(c);
	vm = sim_azure_vms(g, 0, &n);
	assert_int_equal(n, 2);
	assert_true(vm[0].in->preexisting); /* the oldest stay */
	assert_int_equal(vm[1].instance_id, 1);
	assert_int_equal(sim_azure_set_capacity(g, 0, 3, &op, code, sizeof(code), &err), 0);
	vm = sim_azure_vms(g, 0, &n);
	assert_int_equal(vm[2].instance_id, 4);
	sim_cloud_unlock(c);
	run_end(&r);
}

/* A scale set whose VM array grows (past its first 16) while launches are
 * on their way: each instance still gets its own VM's name and computer. */
static void test_growth_while_launching(void **state)
{
	static const char text[] =
		"node_groups:\n"
		"  - name: workers\n"
		"    min: 0\n"
		"    max: 64\n"
		"    template: {allocatable: {cpu: 2, memory: 8Gi}}\n"
		"cloud: {boot_delay: 10s, boot_jitter: 0s, launch_latency: 2s, shutdown_delay: 5s}\n"
		"cluster: {register_delay: 1s}\n"
		"azure:\n"
		"  subscription_id: " SUB "\n"
		"  resource_group: unit-rg\n"
		"  groups:\n"
		"    workers: {vmss: aks-grow-vmss}\n";
	struct run r;
	struct errbuf err;
	struct sim_azure_op op;
	const struct sim_azure_vm *vm;
	char code[48];
	size_t n, k;
	int target;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.sc = sim_scenario_parse(text, strlen(text), "t.yaml", &err);
	if (!r.sc)
		fail_msg("%s", err.msg);
	r.clk = vclock_new(r.sc->start_wall);
	r.ex = executor_new_virtual(r.clk);
	r.w = sim_world_new(r.sc, r.ex, &err);
	if (!r.w)
		fail_msg("%s", err.msg);
	executor_run_until(r.ex, 0);
	/* 4 at a time, faster than they are made: the array reallocates */
	for (target = 4; target <= 40; target += 4) {
		sim_cloud_lock(r.w->cloud);
		assert_int_equal(sim_azure_set_capacity(azure_of(&r), 0, target, &op, code, sizeof(code), &err), 0);
		sim_cloud_unlock(r.w->cloud);
		executor_run_until(r.ex, clock_now(r.clk) + S / 2);
	}
	executor_run_until(r.ex, clock_now(r.clk) + 60 * S);
	sim_cloud_lock(r.w->cloud);
	vm = sim_azure_vms(azure_of(&r), 0, &n);
	assert_int_equal(n, 40);
	for (k = 0; k < n; k++) {
		char computer[80];

		assert_int_equal(vm[k].state, SIM_AZURE_SUCCEEDED);
		assert_non_null(vm[k].in);
		sim_azure_computer_name("aks-grow-vmss", vm[k].instance_id, computer, sizeof(computer));
		assert_string_equal(vm[k].in->node_name, computer);
		assert_string_equal(vm[k].in->id, vm[k].name);
	}
	sim_cloud_unlock(r.w->cloud);
	run_end(&r);
}

static void test_faults(void **state)
{
	struct run r;
	struct sim_cloud *c;
	struct sim_azure *g;
	const struct sim_azure_vm *vm;
	struct sim_azure_op op, slow;
	struct errbuf err;
	char code[48];
	size_t n;

	(void)state;
	run_start(&r, "faults:\n"
		      "  - {kind: launch_error, group: gpu, until: 20s, rate: 1, error: no_capacity}\n"
		      "  - {kind: launch_error, group: workers, from: 100s, until: 110s, rate: 1, error: quota}\n"
		      "  - {kind: slow_call, group: workers, from: 200s, until: 210s, delay: 1h}\n");
	c = r.w->cloud;
	g = azure_of(&r);
	executor_run_until(r.ex, 0);

	/* no capacity: the VM is Failed, the operation Failed with its error, no retry */
	sim_cloud_lock(c);
	assert_int_equal(sim_azure_set_capacity(g, 1, 1, &op, code, sizeof(code), &err), 0);
	sim_cloud_unlock(c);
	executor_run_until(r.ex, 2 * S);
	sim_cloud_lock(c);
	assert_int_equal(status_of(g, op.id, code, sizeof(code)), SIM_AZURE_IN_PROGRESS); /* 3s */
	sim_cloud_unlock(c);
	executor_run_until(r.ex, 4 * S);
	sim_cloud_lock(c);
	assert_int_equal(status_of(g, op.id, code, sizeof(code)), SIM_AZURE_OP_FAILED);
	assert_string_equal(code, "AllocationFailed");
	vm = sim_azure_vms(g, 1, &n);
	assert_int_equal(n, 1);
	assert_int_equal(vm[0].state, SIM_AZURE_FAILED);
	assert_null(vm[0].in);
	assert_string_equal(vm[0].error_code, "AllocationFailed");
	assert_int_equal(sim_azure_capacity(g, 1), 1); /* the failed VM still counts */
	sim_cloud_unlock(c);
	executor_run_until(r.ex, 60 * S);
	sim_cloud_lock(c);
	vm = sim_azure_vms(g, 1, &n);
	assert_int_equal(n, 1);
	assert_int_equal(vm[0].state, SIM_AZURE_FAILED); /* Azure does not retry it */
	{
		const char *id[] = {"0"};
		struct sim_azure_op del;

		assert_int_equal(sim_azure_delete(g, 1, id, 1, &del, &err), 0);
		vm = sim_azure_vms(g, 1, &n);
		assert_int_equal(n, 0); /* never made: gone at once */
		assert_int_equal(sim_azure_capacity(g, 1), 0);
	}
	/* above the group's max: a quota refusal on the write itself */
	assert_int_equal(sim_azure_set_capacity(g, 1, 3, &op, code, sizeof(code), &err), -1);
	assert_string_equal(code, "OperationNotAllowed");
	assert_non_null(strstr(err.msg, "standardNCSv3Family Cores quota"));
	assert_int_equal(sim_azure_capacity(g, 1), 0);
	sim_cloud_unlock(c);

	/* a quota fault: refused whole while it lasts; shrinking is not refused */
	executor_run_until(r.ex, 105 * S);
	sim_cloud_lock(c);
	assert_int_equal(sim_azure_set_capacity(g, 0, 3, &op, code, sizeof(code), &err), -1);
	assert_string_equal(code, "OperationNotAllowed");
	assert_non_null(strstr(err.msg, "QuotaExceeded"));
	assert_int_equal(sim_azure_capacity(g, 0), 1);
	sim_cloud_unlock(c);
	executor_run_until(r.ex, 111 * S);
	sim_cloud_lock(c);
	assert_int_equal(sim_azure_set_capacity(g, 0, 2, &op, code, sizeof(code), &err), 0);
	sim_cloud_unlock(c);

	/* a slow call keeps the operation InProgress for its delay */
	executor_run_until(r.ex, 205 * S);
	sim_cloud_lock(c);
	assert_int_equal(sim_azure_set_capacity(g, 0, 3, &slow, code, sizeof(code), &err), 0);
	sim_cloud_unlock(c);
	executor_run_until(r.ex, 600 * S);
	sim_cloud_lock(c);
	assert_int_equal(status_of(g, slow.id, code, sizeof(code)), SIM_AZURE_IN_PROGRESS);
	assert_true(sim_azure_updating(g, 0));
	vm = sim_azure_vms(g, 0, &n);
	assert_int_equal(n, 3); /* the new VM is slow too: its creation is the same call */
	assert_int_equal(vm[2].state, SIM_AZURE_CREATING);
	sim_cloud_unlock(c);
	executor_run_until(r.ex, 205 * S + 3700 * S);
	sim_cloud_lock(c);
	assert_int_equal(status_of(g, slow.id, code, sizeof(code)), SIM_AZURE_OP_SUCCEEDED);
	vm = sim_azure_vms(g, 0, &n);
	assert_int_equal(vm[2].state, SIM_AZURE_SUCCEEDED);
	sim_cloud_unlock(c);
	run_end(&r);
}

/* An image fault rolls the scale set's model: the VMs made before it say
 * latestModelApplied false, the ones made after it true. */
static void test_image_fault_rolls_the_model(void **state)
{
	struct run r;
	struct sim_cloud *c;
	struct sim_azure *g;
	const struct sim_azure_vm *vm;
	struct sim_azure_op op;
	struct errbuf err;
	char code[48];
	size_t n;

	(void)state;
	run_start(&r, "faults:\n"
		      "  - {kind: image, group: workers, at: 30s, image: ubuntu-2204-202612}\n");
	c = r.w->cloud;
	g = azure_of(&r);
	executor_run_until(r.ex, 20 * S);
	sim_cloud_lock(c);
	vm = sim_azure_vms(g, 0, &n);
	assert_int_equal(n, 1);
	assert_non_null(vm[0].in);
	assert_true(sim_azure_latest_model(g, &vm[0]));
	sim_cloud_unlock(c);
	executor_run_until(r.ex, 40 * S);
	sim_cloud_lock(c);
	assert_string_equal(sim_cloud_group_image(c, 0), "ubuntu-2204-202612");
	vm = sim_azure_vms(g, 0, &n);
	assert_false(sim_azure_latest_model(g, &vm[0]));
	assert_int_equal(sim_azure_set_capacity(g, 0, 2, &op, code, sizeof(code), &err), 0);
	sim_cloud_unlock(c);
	executor_run_until(r.ex, 80 * S);
	sim_cloud_lock(c);
	vm = sim_azure_vms(g, 0, &n);
	assert_int_equal(n, 2);
	assert_non_null(vm[1].in);
	assert_false(sim_azure_latest_model(g, &vm[0]));
	assert_true(sim_azure_latest_model(g, &vm[1]));
	sim_cloud_unlock(c);
	run_end(&r);
}

/* A VM whose machine dies under it (its node deleted, then the machine
 * terminated) leaves the scale set and takes one off the capacity. */
static void test_machine_gone(void **state)
{
	struct run r;
	struct sim_cloud *c;
	struct sim_azure *g;
	const struct sim_azure_vm *vm;
	char e0[32], e1[32];
	size_t n;

	(void)state;
	run_start(&r, "");
	c = r.w->cloud;
	g = azure_of(&r);
	executor_run_until(r.ex, 0);
	sim_cloud_lock(c);
	vm = sim_azure_vms(g, 0, &n);
	assert_int_equal(n, 1);
	sim_azure_etag(g, 0, e0, sizeof(e0));
	sim_cloud_terminate_instance(c, vm[0].in);
	vm = sim_azure_vms(g, 0, &n);
	assert_int_equal(n, 0);
	assert_int_equal(sim_azure_capacity(g, 0), 0);
	sim_azure_etag(g, 0, e1, sizeof(e1));
	assert_string_not_equal(e0, e1);
	sim_cloud_unlock(c);
	run_end(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_capacity_and_operations),
		cmocka_unit_test(test_growth_while_launching),
		cmocka_unit_test(test_faults),
		cmocka_unit_test(test_machine_gone),
		cmocka_unit_test(test_image_fault_rolls_the_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
