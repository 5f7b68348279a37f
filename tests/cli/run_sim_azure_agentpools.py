#!/usr/bin/python3
# run_sim_azure_agentpools.py: AKS node pools scaled the supported way.
# `luascale run` with provider.kind azure and groups named by their AKS
# agent pool (azure.aks) against `luascale sim --azure-port`, whose
# scenario declares a managed cluster; the cloud read back with Azure's
# own SDK, python3-azure's ContainerServiceClient (and ComputeManagementClient
# for the pool's scale set), tokens from the simulator's IMDS:
#   1. the face as the SDK reads it: the managed cluster (nodeResourceGroup),
#      the agent pools and their counts, a count written with
#      begin_create_or_update and followed to Succeeded;
#   2. pending pods raise the pool's count through the agentPools API (a
#      PUT of the pool, never of the scale set); the VMs become nodes and
#      run the pods; then the scale-down deletes exactly those machines
#      through deleteMachines and the count drops back;
#   3. a pool whose AKS autoscaler is on (enableAutoScaling) is never
#      written, and luascale says why.
# Usage: run_sim_azure_agentpools.py LUASCALE SOURCE_DIR. Fails when python3-azure is missing.
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simharness import Harness, log_has, nodes, pod, pods_running, read_env_file, stop, until  # noqa: E402

try:
    import requests
    from azure.core.exceptions import HttpResponseError
    from azure.identity import ManagedIdentityCredential
    from azure.mgmt.compute import ComputeManagementClient
    from azure.mgmt.containerservice import ContainerServiceClient
except ImportError as e:  # a missing client is a failure, never a skip
    print("not ok - python3-azure (azure-mgmt-containerservice) not importable under %s: %s" % (sys.executable, e))
    sys.exit(1)

H = Harness(sys.argv[1], sys.argv[2], "run_sim_azure_agentpools.")
ok = H.ok
SUB = "6d5a1f3e-2b4c-4d8e-9f10-1a2b3c4d5e6f"
CRG = "sim-rg"                        # the cluster's own resource group
NRG = "MC_sim-rg_sim-aks_eastus"      # its node resource group
HTTP = {"enforce_https": False}
FAST = dict(HTTP, polling_interval=0.2)

SCENARIO = """\
node_groups:
  - {name: workers, min: 0, max: 5, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}, labels: {pool: workers}}}
  - {name: managed, min: 1, max: 3, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}, labels: {pool: managed}}}
workloads:
%s
azure:
  subscription_id: %s
  resource_group: %s
  aks: {cluster: sim-aks, resource_group: %s}
  groups:
    workers: {vmss: aks-workers-12345678-vmss, agent_pool: workers}
    managed: {vmss: aks-managed-12345678-vmss, agent_pool: managed, enable_auto_scaling: true}
"""

CONFIG = """\
node_groups:
  - name: workers
    max: 5
    template: {allocatable: {cpu: 3860m, memory: 14Gi, pods: 110}, labels: {pool: workers}}
    azure: {aks: {cluster: sim-aks, resource_group: sim-rg, pool: workers}}
  - name: managed
    max: 3
    template: {allocatable: {cpu: 3860m, memory: 14Gi, pods: 110}, labels: {pool: managed}}
    azure: {aks: {cluster: sim-aks, resource_group: sim-rg, pool: managed}}
provider:
  kind: azure
  qps: 20
  burst: 20
"""


def start(name, workloads):
    scen = H.scenario(name, SCENARIO % (workloads, SUB, NRG, CRG))
    env_file = H.path(name + ".env")
    sim = H.start_sim(name, scen, ["--log-level", "debug", "--azure-port", "0", "--azure-env-out", env_file,
                                   "--azure-token-out", H.path(name + ".token"), "--azure-ca-out", H.path(name + "-ca.pem")],
                      [r"Azure face .* at http://127\.0\.0\.1:(\d+)"])
    sim["env"] = read_env_file(env_file)
    os.environ["AZURE_POD_IDENTITY_AUTHORITY_HOST"] = sim["env"]["AZURE_POD_IDENTITY_AUTHORITY_HOST"]
    for k in ("AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_FEDERATED_TOKEN_FILE", "AZURE_AUTHORITY_HOST"):
        os.environ.pop(k, None)
    arm = sim["env"]["LUASCALE_SIM_AZURE_ARM_ENDPOINT"]
    cred = sim["cred"] = ManagedIdentityCredential()
    sim["aks"] = ContainerServiceClient(cred, SUB, base_url=arm)
    sim["compute"] = ComputeManagementClient(cred, SUB, base_url=arm)
    return sim


def pool(sim, name):
    try:
        return sim["aks"].agent_pools.get(CRG, "sim-aks", name, **HTTP)
    except HttpResponseError:
        return None


def count_is(sim, name, n):
    p = pool(sim, name)
    return p if p and p.count == n and p.provisioning_state == "Succeeded" else None


def machines(sim, vmss):
    """The computer names of the scale set's live VMs (AKS's machine names)."""
    try:
        return sorted(v.os_profile.computer_name for v in sim["compute"].virtual_machine_scale_set_vms.list(NRG, vmss, **HTTP)
                      if v.provisioning_state != "Deleting")
    except HttpResponseError:
        return None


def sim_calls(sim, pattern):
    return len(re.findall(pattern, open(sim["log"]).read()))


def phase_face():
    sim = start("face", "  []\n")
    c = sim["aks"]
    mc = c.managed_clusters.get(CRG, "sim-aks", **HTTP)
    ok(mc.name == "sim-aks" and mc.node_resource_group == NRG and mc.provisioning_state == "Succeeded"
       and sorted(p.name for p in mc.agent_pool_profiles) == ["managed", "workers"],
       "SDK managed_clusters.get: nodeResourceGroup %s and the two agent pools as profiles" % mc.node_resource_group)
    pools = {p.name: p for p in c.agent_pools.list(CRG, "sim-aks", **HTTP)}
    ok(set(pools) == {"workers", "managed"} and pools["workers"].count == 1 and pools["managed"].count == 1
       and pools["workers"].enable_auto_scaling is False and pools["managed"].enable_auto_scaling is True
       and pools["managed"].min_count == 1 and pools["managed"].max_count == 3
       and pools["workers"].type_properties_type == "VirtualMachineScaleSets" and pools["workers"].mode == "User"
       and pools["workers"].vm_size == "Standard_D4s_v3" and pools["workers"].provisioning_state == "Succeeded",
       "SDK agent_pools.list: both pools, their counts, sizes and enableAutoScaling (%s)"
       % {k: (v.count, v.enable_auto_scaling) for k, v in pools.items()})
    vmss = sim["compute"].virtual_machine_scale_sets.get(NRG, "aks-workers-12345678-vmss", **HTTP)
    ok(vmss.tags.get("aks-managed-poolName") == "workers" and vmss.sku.capacity == 1,
       "the pool's scale set in the node resource group is tagged aks-managed-poolName=workers")
    p = pools["workers"]
    p.count = 2
    res = c.agent_pools.begin_create_or_update(CRG, "sim-aks", "workers", p, **FAST).result()
    ok(res.count == 2 and count_is(sim, "workers", 2), "SDK begin_create_or_update: count 2, the poller ends Succeeded")
    up = until(20, lambda: (lambda m: m if m and len(m) == 2 else None)(machines(sim, "aks-workers-12345678-vmss")))
    ok(up == ["aks-workers-12345678-vmss000000", "aks-workers-12345678-vmss000001"],
       "... and the scale set has 2 VMs, named as AKS names its machines (%s)" % up)
    # deleteMachines (not in this SDK's api-versions): by hand, with the SDK's token
    token = sim["cred"].get_token("https://management.azure.com/.default").token
    url = "%ssubscriptions/%s/resourceGroups/%s/providers/Microsoft.ContainerService/managedClusters/sim-aks/" \
          "agentPools/workers/deleteMachines" % (sim["env"]["LUASCALE_SIM_AZURE_ARM_ENDPOINT"], SUB, CRG)
    r = requests.post(url, params={"api-version": "2024-05-01"}, json={"machineNames": ["aks-workers-12345678-vmss000001"]},
                      headers={"Authorization": "Bearer " + token}, timeout=10)
    left = until(20, lambda: (lambda m: m if m == ["aks-workers-12345678-vmss000000"] else None)(
        machines(sim, "aks-workers-12345678-vmss")))
    ok(r.status_code == 202 and "/providers/Microsoft.ContainerService/locations/" in r.headers.get("Azure-AsyncOperation", "")
       and left and until(20, lambda: count_is(sim, "workers", 1)),
       "deleteMachines (api-version 2024-05-01) takes the named machine; the SDK reads count 1 (%d %s)"
       % (r.status_code, r.text[:200]))
    r = requests.post(url, params={"api-version": "2024-05-01"}, json={"machineNames": ["aks-workers-12345678-vmss000007"]},
                      headers={"Authorization": "Bearer " + token}, timeout=10)
    ok(r.status_code == 400 and r.json().get("error", {}).get("code") == "InvalidParameter",
       "deleteMachines of a machine the pool does not have: 400 InvalidParameter (%d)" % r.status_code)
    try:
        pools["managed"].count = 3
        c.agent_pools.begin_create_or_update(CRG, "sim-aks", "managed", pools["managed"], **FAST).result()
        ok(False, "a count write to a pool whose autoscaler is on is refused")
    except HttpResponseError as e:
        ok(e.status_code == 400 and "autoscaler" in str(e), "a count write to a pool whose autoscaler is on is refused (400)")
    try:
        c.agent_pools.get(CRG, "sim-aks", "nope", **HTTP)
        ok(False, "an unknown pool is 404")
    except HttpResponseError as e:
        ok(e.status_code == 404 and e.error and e.error.code == "NotFound", "an unknown pool is 404 NotFound")
    stop(sim["proc"])


def phase_run():
    sim = start("run", pod("batch", "2s", 3, "workers", "25s") + pod("held", "2s", 2, "managed", "12s"))
    run = H.start_run(sim, "run", CONFIG, sim["env"], "{unneeded_for: 3s, scale_down_delay_after_add: 0s}")
    logs = (run["log"], sim["log"])
    ran = until(60, lambda: pods_running(sim, "batch-"))
    ok(ran, "pending pods on the workers pool run", *logs)
    grown = until(10, lambda: (lambda p: p if p and p.count >= 3 else None)(pool(sim, "workers")))
    puts = sim_calls(sim, r"PUT /subscriptions/[^ ]*/managedClusters/sim-aks/agentPools/workers -> 200")
    vmss_writes = sim_calls(sim, r"(PUT|PATCH|POST) /subscriptions/[^ ]*/virtualMachineScaleSets/[^ ]* -> ")
    ok(grown and puts >= 1 and vmss_writes == 0,
       "the SDK reads the workers pool at count %s, written with %d agentPools PUT(s) and no write to a scale set"
       % (grown and grown.count, puts), *logs)
    if ran:
        ns = nodes(sim)
        want = "azure:///subscriptions/%s/resourceGroups/%s/providers/Microsoft.Compute/virtualMachineScaleSets/aks-workers-12345678-vmss/" % (SUB, NRG)
        ok(all(ns[p["spec"]["nodeName"]]["spec"].get("providerID", "").startswith(want) for p in ran),
           "the pods run on the pool's VMs (azure:/// providerIDs in the node resource group)", *logs)
    gone = until(120, lambda: count_is(sim, "workers", 0))
    dels = sim_calls(sim, r"POST /subscriptions/[^ ]*/agentPools/workers/deleteMachines -> 202")
    ok(gone and dels >= 1 and machines(sim, "aks-workers-12345678-vmss") == []
       and sim_calls(sim, r"POST /subscriptions/[^ ]*/virtualMachineScaleSets/[^ ]*/delete -> ") == 0,
       "scale-down: the SDK reads the workers pool at count 0, its machines gone through deleteMachines (%d calls), "
       "never the scale set's delete" % dels, *logs)
    held = pool(sim, "managed")
    # its node emptied when the held pods ended, its pending pod wanted more: neither wrote to it
    ok(held and held.count == 1 and sim_calls(sim, r"agentPools/managed(/deleteMachines)? -> ") >= 1
       and sim_calls(sim, r"(PUT|POST) /subscriptions/[^ ]*/agentPools/managed") == 0,
       "the pool whose AKS autoscaler is on is read but never written (count %s)" % (held and held.count), *logs)
    ok(log_has(run["log"], r"AKS pool managed of cluster sim-aks has AKS's cluster autoscaler on \(enableAutoScaling: true\)"),
       "luascale says why it leaves that pool alone", *logs)


try:
    phase_face()
    phase_run()
except Exception as e:  # noqa: B902 (a test that raises has failed, never passed)
    import traceback
    ok(False, "the test raised %r" % e)
    print("# " + traceback.format_exc().replace("\n", "\n# "))
finally:
    H.finish()
