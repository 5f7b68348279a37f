#!/usr/bin/python3
# run_sim_azure_aks.py: scale from zero on an AKS spot node pool, `luascale
# run` with provider.kind azure against `luascale sim --azure-port`. The
# config writes no template: the provider predicts the labels and taints
# AKS puts on the pool's nodes from the scale set alone (its
# aks-managed-poolName tag, its Spot priority):
#   1. a pod that selects the pool and tolerates
#      kubernetes.azure.com/scalesetpriority=spot:NoSchedule gets a node of
#      the pool from zero, and runs there;
#   2. a pod that selects the pool but does not tolerate the taint gets no
#      node: the pool's capacity stays at what the first pod needed, and
#      luascale says why;
#   3. the scale set read back with python3-azure's ComputeManagementClient
#      is the Spot one, its capacity what luascale wrote.
# Usage: run_sim_azure_aks.py LUASCALE SOURCE_DIR. Fails when python3-azure is missing.
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simharness import Harness, kube, log_has, nodes, read_env_file, until  # noqa: E402

try:
    from azure.identity import ManagedIdentityCredential
    from azure.mgmt.compute import ComputeManagementClient
except ImportError as e:  # a missing client is a failure, never a skip
    print("not ok - python3-azure not importable under %s: %s" % (sys.executable, e))
    sys.exit(1)

H = Harness(sys.argv[1], sys.argv[2], "run_sim_azure_aks.")
ok = H.ok
SUB = "6d5a1f3e-2b4c-4d8e-9f10-1a2b3c4d5e6f"
RG = "MC_sim-rg_sim-aks_eastus"
POOL_LABELS = "{kubernetes.azure.com/agentpool: spotpool, agentpool: spotpool, kubernetes.azure.com/scalesetpriority: spot}"
TAINT = "[{key: kubernetes.azure.com/scalesetpriority, value: spot, effect: NoSchedule}]"
TOLERATE = "[{key: kubernetes.azure.com/scalesetpriority, operator: Equal, value: spot, effect: NoSchedule}]"

SCENARIO = """\
node_groups:
  - {name: workers, min: 1, max: 3, template: {allocatable: {cpu: 3860m, memory: 12Gi, pods: 110}, labels: {kubernetes.azure.com/agentpool: workers}}}
  - {name: spotpool, min: 0, max: 3, template: {allocatable: {cpu: 3860m, memory: 12Gi, pods: 110}, labels: %s, taints: %s}}
workloads:
  - {name: tolerant, at: 2s, count: 1, requests: {cpu: 1, memory: 1Gi}, node_selector: {kubernetes.azure.com/agentpool: spotpool}, tolerations: %s}
  - {name: intolerant, at: 2s, count: 1, requests: {cpu: 1, memory: 1Gi}, node_selector: {kubernetes.azure.com/agentpool: spotpool}}
azure:
  subscription_id: %s
  resource_group: %s
  location: eastus
  groups:
    workers: {vmss: aks-workers-12345678-vmss, vm_size: Standard_D4s_v3, tags: {aks-managed-poolName: workers, min: "1", max: "3"}}
    spotpool: {vmss: aks-spotpool-12345678-vmss, vm_size: Standard_D4s_v3, priority: Spot, tags: {aks-managed-poolName: spotpool, min: "0", max: "3"}}
""" % (POOL_LABELS, TAINT, TOLERATE, SUB, RG)

CONFIG = """\
node_groups:
  - name: workers
    azure: {vmss: aks-workers-12345678-vmss}
  - name: spotpool
    azure: {vmss: aks-spotpool-12345678-vmss}
provider:
  kind: azure
  qps: 20
  burst: 20
"""


def pod(name_prefix):
    for p in kube(H.sim, "/api/v1/pods")["items"]:
        if p["metadata"]["name"].startswith(name_prefix):
            return p
    return None


def main():
    scen = H.scenario("aks", SCENARIO)
    env_file = H.path("aks.env")
    sim = H.start_sim("aks", scen, ["--log-level", "debug", "--azure-port", "0", "--azure-env-out", env_file,
                                    "--azure-token-out", H.path("aks.token"), "--azure-ca-out", H.path("aks-ca.pem")],
                      [r"Azure face .* at http://127\.0\.0\.1:(\d+)"])
    H.sim = sim
    env = read_env_file(env_file)
    os.environ["AZURE_POD_IDENTITY_AUTHORITY_HOST"] = env["AZURE_POD_IDENTITY_AUTHORITY_HOST"]
    for k in ("AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_FEDERATED_TOKEN_FILE", "AZURE_AUTHORITY_HOST"):
        os.environ.pop(k, None)
    sdk = ComputeManagementClient(ManagedIdentityCredential(), SUB, base_url=env["LUASCALE_SIM_AZURE_ARM_ENDPOINT"])
    run = H.start_run(sim, "aks", CONFIG, env, "{scale_down_delay_after_add: 1h}")
    logs = (run["log"], sim["log"])

    def tolerant_running():
        p = pod("tolerant-")
        return p if p and p["status"].get("phase") == "Running" else None

    ran = until(60, tolerant_running)
    ok(ran, "a pod that tolerates the spot taint gets a node of the spot pool from zero", *logs)
    if ran:
        n = nodes(sim).get(ran["spec"]["nodeName"], {})
        ok("/virtualMachineScaleSets/aks-spotpool-12345678-vmss/" in n.get("spec", {}).get("providerID", ""),
           "... and runs on a VM of the spot pool's scale set (%s)" % n.get("spec", {}).get("providerID"), *logs)
    # the other pod: several more rounds, no node for it
    rounds = len(re.findall(r"scale_up|reconcile", open(run["log"]).read()))
    until(8, lambda: len(re.findall(r"scale_up|reconcile", open(run["log"]).read())) > rounds + 5)
    p = pod("intolerant-")
    v = sdk.virtual_machine_scale_sets.get(RG, "aks-spotpool-12345678-vmss", enforce_https=False)
    ups = re.findall(r"scale_up spotpool \+(\d+)", open(run["log"]).read())
    ok(p and p["status"].get("phase") == "Pending" and not p["spec"].get("nodeName"),
       "a pod that does not tolerate the spot taint stays Pending", *logs)
    ok(v.sku.capacity == 1 and ups and sum(int(u) for u in set(ups)) == 1,
       "the spot pool grew by one node only, for the pod that tolerates its taint (capacity %s, scale-ups %s)"
       % (v.sku.capacity, ups), *logs)
    ok(v.virtual_machine_profile.priority == "Spot" and v.tags.get("aks-managed-poolName") == "spotpool",
       "the SDK reads the scale set as an AKS Spot pool", *logs)
    ok(log_has(run["log"], r"intolerant.*(taint|scalesetpriority)"),
       "luascale says why the other pod fits nowhere: the taint", *logs)


try:
    main()
except Exception as e:  # noqa: B902 (a test that raises has failed, never passed)
    ok(False, "the test raised %r" % e)
finally:
    H.finish()
