#!/usr/bin/python3
# run_sim_azure.py: `luascale run` with provider.kind azure against `luascale
# sim --azure-port`, the cloud's state read back with Azure's own SDK
# (python3-azure's ComputeManagementClient, its token from the simulator's
# IMDS) and the cluster's with the Kubernetes API:
#   1. pending pods raise the scale set's capacity, its VMs become nodes
#      (azure:/// providerIDs) and run the pods; then the scale-down deletes
#      exactly those VMs and the capacity drops back;
#   2. an AllocationFailed VM is a failed launch: the group backs off;
#   3. a 429 storm loses nothing, and luascale waits out each Retry-After;
#   4. reads throttled from the start, then a restart: no capacity is ever
#      written from a size that was not read;
#   5. a restart in the middle of a scale-up launches nothing twice.
# Usage: run_sim_azure.py LUASCALE SOURCE_DIR. Fails when python3-azure is missing.
import os
import re
import signal
import sys
from datetime import datetime

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simharness import Harness, log_has, nodes, pod, pods_running, read_env_file, stop, until  # noqa: E402

try:
    from azure.identity import ManagedIdentityCredential
    from azure.mgmt.compute import ComputeManagementClient
    from azure.core.exceptions import HttpResponseError
except ImportError as e:  # a missing client is a failure, never a skip
    print("not ok - python3-azure not importable under %s: %s" % (sys.executable, e))
    sys.exit(1)

H = Harness(sys.argv[1], sys.argv[2], "run_sim_azure.")
ok = H.ok
SUB = "6d5a1f3e-2b4c-4d8e-9f10-1a2b3c4d5e6f"
RG = "sim-rg"
HTTP = {"enforce_https": False}

GROUPS = """\
  - {name: workers, min: 0, max: 6, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}, labels: {pool: workers}}}
  - {name: scarce, min: 0, max: 3, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}, labels: {pool: scarce}}}
"""
AZURE = """\
azure:
  subscription_id: %s
  resource_group: %s
  retry_after: %s
  groups:
    workers: {vmss: aks-workers-vmss, vm_size: Standard_D4s_v3, zones: ["1", "2"]}
    scarce: {vmss: aks-scarce-vmss, vm_size: Standard_D4s_v3}
"""
# the config writes each group's template (labels and allocatable); the
# provider reads the rest from the scale set
CONFIG_GROUPS = """\
node_groups:
  - name: workers
    max: 6
    template: {allocatable: {cpu: 3860m, memory: 14Gi, pods: 110}, labels: {pool: workers}}
    azure: {vmss: aks-workers-vmss}
  - name: scarce
    max: 3
    template: {allocatable: {cpu: 3860m, memory: 14Gi, pods: 110}, labels: {pool: scarce}}
    azure: {vmss: aks-scarce-vmss}
"""


def scenario(name, workloads, faults="", boot="2s", retry_after="1s"):
    body = "node_groups:\n" + GROUPS + "workloads:\n" + workloads
    if faults:
        body += "faults:\n" + faults
    body += AZURE % (SUB, RG, retry_after)
    return H.scenario(name, body, boot)


def start_sim(name, scen):
    env_file, tok, ca = H.path(name + ".env"), H.path(name + ".token"), H.path(name + "-ca.pem")
    sim = H.start_sim(name, scen, ["--log-level", "debug", "--azure-port", "0", "--azure-env-out", env_file,
                                   "--azure-token-out", tok, "--azure-ca-out", ca],
                      [r"Azure face .* at http://127\.0\.0\.1:(\d+)"])
    sim["env"] = read_env_file(env_file)
    os.environ["AZURE_POD_IDENTITY_AUTHORITY_HOST"] = sim["env"]["AZURE_POD_IDENTITY_AUTHORITY_HOST"]
    for k in ("AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_FEDERATED_TOKEN_FILE", "AZURE_AUTHORITY_HOST"):
        os.environ.pop(k, None)
    sim["sdk"] = ComputeManagementClient(ManagedIdentityCredential(), SUB,
                                         base_url=sim["env"]["LUASCALE_SIM_AZURE_ARM_ENDPOINT"])
    return sim


def start_run(sim, name, params="{}"):
    # subscription and resource group from the environment, as on AKS
    return H.start_run(sim, name, CONFIG_GROUPS + "provider:\n  kind: azure\n  qps: 20\n  burst: 20\n", sim["env"], params)


def vmss(sim, name):
    """The scale set as the SDK reads it (throttling retried by the SDK), or None."""
    try:
        return sim["sdk"].virtual_machine_scale_sets.get(RG, name, **HTTP)
    except HttpResponseError:
        return None


def vms(sim, name):
    try:
        return list(sim["sdk"].virtual_machine_scale_set_vms.list(RG, name, expand="instanceView", **HTTP))
    except HttpResponseError:
        return []


def live_ids(sim, name):
    return sorted((v.instance_id for v in vms(sim, name) if v.provisioning_state != "Deleting"), key=int)


def capacity_is(sim, name, n):
    v = vmss(sim, name)
    return v if v and v.sku.capacity == n else None


def sim_lines(sim):
    """(unix seconds, text) of every line of the simulator's log."""
    out = []
    for line in open(sim["log"]):
        m = re.match(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ) (.*)$", line)
        if m:
            out.append((datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%SZ").timestamp(), m.group(2)))
    return out


def phase_up_and_down():
    sim = start_sim("updown", scenario("updown", pod("batch", "2s", 3, "workers", "20s")))
    run = start_run(sim, "updown", "{unneeded_for: 3s, scale_down_delay_after_add: 0s}")
    logs = (run["log"], sim["log"])
    ran = until(60, lambda: pods_running(sim, "batch-"))
    ok(ran, "VMSS: pending pods become VMs, nodes and running pods", *logs)
    ids = live_ids(sim, "aks-workers-vmss")
    if ran:
        ns = nodes(sim)
        pids = {ns[p["spec"]["nodeName"]]["spec"].get("providerID", "") for p in ran}
        want = ("azure:///subscriptions/%s/resourceGroups/%s/providers/Microsoft.Compute/virtualMachineScaleSets/aks-workers-vmss/virtualMachines/"
                % (SUB, RG))
        ok(all(x.startswith(want) for x in pids) and {x[len(want):] for x in pids} <= set(ids),
           "VMSS: the pods run on nodes whose azure:/// providerIDs are the scale set's VMs (%s)" % ", ".join(ids), *logs)
        v = vmss(sim, "aks-workers-vmss")
        ok(v and v.sku.capacity == len(ids), "VMSS: capacity %s, %d VMs" % (v and v.sku.capacity, len(ids)), *logs)
    gone = until(90, lambda: capacity_is(sim, "aks-workers-vmss", 0))
    ok(gone, "scale-down: every node goes and the scale set's capacity is 0", *logs)
    posts = len(re.findall(r"POST /subscriptions/.*aks-workers-vmss/delete -> 202", open(sim["log"]).read()))
    ok(gone and not live_ids(sim, "aks-workers-vmss") and posts >= 1,
       "scale-down: the VMs went through POST .../delete (%d calls), none left" % posts, *logs)
    stop(run["proc"])
    stop(sim["proc"])


def phase_allocation_failed():
    sim = start_sim("alloc", scenario("alloc", pod("gpu", "2s", 1, "scarce"),
                                      "  - {kind: launch_error, group: scarce, error: no_capacity}\n"))
    run = start_run(sim, "alloc")
    logs = (run["log"], sim["log"])
    failed = until(60, lambda: log_has(run["log"], r"warn  scale_up scarce \+1 failed after ([0-9.]+)s: .*"
                                                   r"AllocationFailed.*group backed off"))
    ok(failed, "an AllocationFailed VM is a failed launch and backs the group off (%ss after asking)"
       % (failed.group(1) if failed else "?"), *logs)
    ok(not until(3, lambda: len(re.findall(r"scale_up scarce \+1: asking the cloud", open(run["log"]).read())) > 1),
       "the backed-off group is not asked again at once", *logs)
    stop(run["proc"])
    stop(sim["proc"])


def phase_storm():
    # every call of workers throttled from 3s to 9s; Retry-After 3s
    sim = start_sim("storm", scenario("storm", pod("batch", "4s", 3, "workers"),
                                      "  - {kind: throttle, group: workers, from: 3s, until: 9s}\n",
                                      retry_after="3s"))
    run = start_run(sim, "storm")
    logs = (run["log"], sim["log"])
    ran = until(80, lambda: pods_running(sim, "batch-"))
    ok(ran, "after a 429 storm every pod runs", *logs)
    ids = live_ids(sim, "aks-workers-vmss")
    used = {p["spec"]["nodeName"] for p in ran} if ran else set()
    names = {v.os_profile.computer_name for v in vms(sim, "aks-workers-vmss")}
    v = vmss(sim, "aks-workers-vmss")
    ok(ran and used <= names and v and v.sku.capacity == len(ids) == len(names),
       "... on VMs of the scale set, capacity %s = %d VMs: nothing lost, nothing bought twice"
       % (v and v.sku.capacity, len(ids)), *logs)
    ok(log_has(run["log"], r"azure: .* throttled \(HTTP 429"), "the cloud did throttle (429), and luascale said so", *logs)
    # luascale's calls to the scale set: after each 429, none until Retry-After passed
    lines = [(t, x) for t, x in sim_lines(sim) if re.search(r"sim azure: \w+ /subscriptions/.*aks-workers-vmss.* -> \d+$", x)]
    early = []
    for i, (t, x) in enumerate(lines):
        if x.endswith("-> 429") and i + 1 < len(lines) and lines[i + 1][0] - t < 2:
            early.append("%s then %s" % (x, lines[i + 1][1]))
    n429 = sum(1 for _, x in lines if x.endswith("-> 429"))
    ok(n429 >= 1 and not early, "after each of the %d 429s luascale waited out Retry-After: 3 (%s)"
       % (n429, "; ".join(early[:2])), *logs)
    stop(run["proc"])
    stop(sim["proc"])


def phase_throttled_restart():
    # every call of workers throttled for the first 8s, a scale-up wanted at 2s
    sim = start_sim("blind", scenario("blind", pod("batch", "2s", 2, "workers"),
                                      "  - {kind: throttle, group: workers, until: 8s}\n"))
    run = start_run(sim, "blind-1")
    logs = [run["log"], sim["log"]]
    seen = until(10, lambda: log_has(run["log"], r"azure: .* throttled"))
    stop(run["proc"], signal.SIGKILL)
    ok(seen and not log_has(sim["log"], r"(PUT|PATCH) /subscriptions/"),
       "the first luascale's reads were throttled, it wrote nothing, and it was killed", *logs)
    run2 = start_run(sim, "blind-2")
    logs.append(run2["log"])
    ran = until(70, lambda: pods_running(sim, "batch-"))
    ok(ran, "throttled reads, a restart, then every pod runs", *logs)
    lines = sim_lines(sim)
    first_read = next((t for t, x in lines if re.search(r"GET /subscriptions/.*aks-workers-vmss -> 200$", x)), None)
    writes = [(t, x) for t, x in lines if re.search(r"(PUT|PATCH) /subscriptions/.*aks-workers-vmss -> ", x)]
    caps = [int(m.group(1)) for _, x in lines for m in [re.search(r"aks-workers-vmss capacity -> (\d+)", x)] if m]
    ok(writes and first_read is not None and all(t >= first_read for t, _ in writes),
       "no capacity was written before the scale set was read (first read at +%s, %d writes)"
       % (first_read and int(first_read - lines[0][0]), len(writes)), *logs)
    ok(caps and all(c >= 2 for c in caps) and "0" in live_ids(sim, "aks-workers-vmss"),
       "every capacity written counted the VM already there (%s); it was never deleted" % caps, *logs)
    stop(run2["proc"])
    stop(sim["proc"])


def phase_restart():
    sim = start_sim("restart", scenario("restart", pod("batch", "2s", 3, "workers"), boot="8s"))
    run = start_run(sim, "restart-1")
    logs = [run["log"], sim["log"]]
    asked = until(40, lambda: log_has(run["log"], r"scale_up workers \+(\d+): asking the cloud"))
    made = until(20, lambda: len(live_ids(sim, "aks-workers-vmss")) >= 3)
    stop(run["proc"], signal.SIGKILL)
    ok(asked and made and not pods_running(sim, "batch-"),
       "a scale-up made its VMs and luascale was killed before they were nodes", *logs)
    first = live_ids(sim, "aks-workers-vmss")
    run2 = start_run(sim, "restart-2")
    logs.append(run2["log"])
    ran = until(60, lambda: pods_running(sim, "batch-"))
    ok(ran and live_ids(sim, "aks-workers-vmss") == first,
       "after the restart every pod runs on the VMs made before it (%s)" % ", ".join(first), *logs)
    ok(not log_has(run2["log"], r"scale_up workers \+"),
       "the second luascale launched nothing: the capacity counted the VMs on their way", *logs)
    stop(run2["proc"])
    stop(sim["proc"])


try:
    # independent phases, each with its own simulator: at the same time
    H.phases([phase_up_and_down, phase_allocation_failed, phase_storm, phase_throttled_restart, phase_restart], limit=330)
finally:
    H.finish()
