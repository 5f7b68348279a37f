#!/usr/bin/python3
# run_sim_azure_skus.py: VM sizes from the Resource SKUs API, against `luascale
# sim --azure-port`:
#   1. the face's GET /subscriptions/S/providers/Microsoft.Compute/skus,
#      read with python3-azure (ComputeManagementClient(...).resource_skus
#      .list(filter="location eq 'eastus'"), paged by nextLink): VM sizes
#      with capabilities vCPUs, MemoryGB, GPUs, MaxResourceVolumeMB, a size
#      restricted NotAvailableForSubscription, a disk SKU;
#   2. `luascale run` with no template in the config: a group whose size
#      (Standard_D4ls_v6) is missing from the provider's static table gets
#      its template from the SKUs API (4 vCPUs, 8 GiB) and grows for a pod
#      that fits it, the log saying where the sizes came from;
#   3. a group whose size the subscription may not use in the region does
#      not grow, and the log says why.
# Usage: run_sim_azure_skus.py LUASCALE SOURCE_DIR. Fails when python3-azure is missing.
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simharness import Harness, kube, log_has, read_env_file, until  # noqa: E402

try:
    from azure.identity import ManagedIdentityCredential
    from azure.mgmt.compute import ComputeManagementClient
except ImportError as e:  # a missing client is a failure, never a skip
    print("not ok - python3-azure not importable under %s: %s" % (sys.executable, e))
    sys.exit(1)

H = Harness(sys.argv[1], sys.argv[2], "run_sim_azure_skus.")
ok = H.ok
SUB = "6d5a1f3e-2b4c-4d8e-9f10-1a2b3c4d5e6f"
RG = "sim-rg"

SCENARIO = """\
node_groups:
  - {name: workers, min: 1, max: 3, template: {allocatable: {cpu: 3860m, memory: 12Gi, pods: 110}, labels: {node.kubernetes.io/instance-type: Standard_D4s_v3}}}
  - {name: v6, min: 0, max: 3, template: {allocatable: {cpu: 3860m, memory: 5Gi, pods: 110}, labels: {node.kubernetes.io/instance-type: Standard_D4ls_v6}}}
  - {name: denied, min: 0, max: 3, template: {allocatable: {cpu: 7800m, memory: 12Gi, pods: 110}, labels: {node.kubernetes.io/instance-type: Standard_D8ls_v6}}}
workloads:
  - {name: fits, at: 2s, count: 1, requests: {cpu: 3, memory: 4Gi}, node_selector: {node.kubernetes.io/instance-type: Standard_D4ls_v6}}
  - {name: big, at: 2s, count: 1, requests: {cpu: 6, memory: 4Gi}, node_selector: {node.kubernetes.io/instance-type: Standard_D8ls_v6}}
azure:
  subscription_id: %s
  resource_group: %s
  location: eastus
  page_size: 3
  groups:
    workers: {vmss: workers-vmss, vm_size: Standard_D4s_v3, tags: {min: "1", max: "3"}}
    v6: {vmss: v6-vmss, vm_size: Standard_D4ls_v6, tags: {min: "0", max: "3"}}
    denied: {vmss: denied-vmss, vm_size: Standard_D8ls_v6, tags: {min: "0", max: "3"}}
""" % (SUB, RG)

CONFIG = """\
node_groups:
  - name: workers
    azure: {vmss: workers-vmss}
  - name: v6
    azure: {vmss: v6-vmss}
  - name: denied
    azure: {vmss: denied-vmss}
provider:
  kind: azure
  qps: 20
  burst: 20
  pricing: {enabled: false}
"""


def caps(sku):
    return {c.name: c.value for c in sku.capabilities or []}


def main():
    scen = H.scenario("skus", SCENARIO)
    env_file = H.path("skus.env")
    sim = H.start_sim("skus", scen, ["--log-level", "debug", "--azure-port", "0", "--azure-env-out", env_file,
                                     "--azure-token-out", H.path("skus.token"), "--azure-ca-out", H.path("skus-ca.pem")],
                      [r"Azure face .* at http://127\.0\.0\.1:(\d+)"])
    env = read_env_file(env_file)
    os.environ["AZURE_POD_IDENTITY_AUTHORITY_HOST"] = env["AZURE_POD_IDENTITY_AUTHORITY_HOST"]
    for k in ("AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_FEDERATED_TOKEN_FILE", "AZURE_AUTHORITY_HOST"):
        os.environ.pop(k, None)
    sdk = ComputeManagementClient(ManagedIdentityCredential(), SUB, base_url=env["LUASCALE_SIM_AZURE_ARM_ENDPOINT"])
    logs = (sim["log"],)

    # ---- the face, as the SDK reads it ----
    skus = list(sdk.resource_skus.list(filter="location eq 'eastus'", enforce_https=False))
    pages = len(re.findall(r"GET /subscriptions/[^ ]*/skus -> 200", open(sim["log"]).read()))
    vms = {s.name: s for s in skus if s.resource_type == "virtualMachines"}
    ok(len(skus) == 10 and len(vms) == 9 and pages == 4,
       "resource_skus.list: 9 VM sizes and a disk SKU, 3 a page through nextLink (%d SKUs, %d pages)"
       % (len(skus), pages), *logs)
    v6 = vms.get("Standard_D4ls_v6")
    ok(v6 and caps(v6).get("vCPUs") == "4" and caps(v6).get("MemoryGB") == "8" and v6.locations == ["eastus"]
       and v6.family == "standardDLSv6Family" and not v6.restrictions
       and v6.location_info[0].zones == ["1", "2", "3"],
       "Standard_D4ls_v6: vCPUs 4, MemoryGB 8, eastus, zones 1-3, no restriction (%s)" % (v6 and caps(v6)), *logs)
    nc = vms.get("Standard_NC6s_v3")
    ok(nc and caps(nc).get("GPUs") == "1" and caps(nc).get("MaxResourceVolumeMB") == "344064",
       "Standard_NC6s_v3: one GPU and its resource disk", *logs)
    d8 = vms.get("Standard_D8ls_v6")
    r = d8.restrictions[0] if d8 and d8.restrictions else None
    ok(r and r.reason_code == "NotAvailableForSubscription" and r.type == "Location"
       and r.restriction_info.locations == ["eastus"],
       "Standard_D8ls_v6 is restricted: NotAvailableForSubscription in eastus", *logs)
    ok(list(sdk.resource_skus.list(filter="location eq 'westeurope'", enforce_https=False)) == [],
       "another location's list is empty", *logs)
    pages = len(re.findall(r"GET /subscriptions/[^ ]*/skus -> 200", open(sim["log"]).read()))

    # ---- luascale run: templates from the SKUs API ----
    run = H.start_run(sim, "skus", CONFIG, env)
    logs = (run["log"], sim["log"])

    def running(prefix):
        for p in kube(sim, "/api/v1/pods")["items"]:
            if p["metadata"]["name"].startswith(prefix) and p["status"].get("phase") == "Running":
                return p
        return None

    ok(until(30, lambda: log_has(run["log"], r"azure: VM sizes in eastus from the Resource SKUs API \(9 sizes")),
       "the log says the sizes come from the Resource SKUs API", *logs)
    ran = until(60, lambda: running("fits-"))
    ok(ran and ran["spec"]["nodeName"].startswith("v6-vmss"),
       "a group of a size missing from the static table gets its template from /skus and grows for a pod "
       "of 3 CPUs and 4Gi (on %s)" % (ran and ran["spec"]["nodeName"]), *logs)
    ok(not log_has(run["log"], r"Standard_D4ls_v6 is not in the provider's table"),
       "no warning of an unknown size", *logs)
    ok(log_has(run["log"], r"group denied: VM size Standard_D8ls_v6 is not available to this subscription in eastus"),
       "the restricted size is reported once", *logs)
    v = sdk.virtual_machine_scale_sets.get(RG, "denied-vmss", enforce_https=False)
    ok(v.sku.capacity == 0 and not running("big-") and not log_has(run["log"], r"scale_up denied"),
       "the group of the restricted size does not grow (capacity %s)" % v.sku.capacity, *logs)
    calls = len(re.findall(r"GET /subscriptions/[^ ]*/skus -> 200", open(sim["log"]).read())) - pages
    ok(calls == 4, "luascale read the list once, every page (%d pages)" % calls, *logs)


try:
    main()
except Exception as e:  # noqa: B902 (a test that raises has failed, never passed)
    ok(False, "the test raised %r" % e)
finally:
    H.finish()
