#!/usr/bin/python3
# run_sim_gce.py: `luascale run` with provider.kind gce against `luascale sim
# --gce-port`, the cloud's state read back with Google's own auth library
# (python3-google-auth, a service-account token) over the compute v1 API,
# and the cluster's with the Kubernetes API:
#   1. pending pods become MIG instances (createInstances, names known at
#      once), then nodes (gce:// providerIDs), then running pods; then the
#      scale-down deletes exactly those instances and lowers targetSize;
#   2. a stockout (ZONE_RESOURCE_POOL_EXHAUSTED, seen only on lastAttempt)
#      backs the group off and gives the instances back (no longer
#      upcoming);
#   3. throttling (403 rateLimitExceeded) loses nothing;
#   4. a restart in the middle of a scale-up launches nothing twice;
#   5. a regional MIG scales up; so does one that refuses createInstances
#      (resize with a requestId instead) and has no template in the config
#      (it is read from the instance template, the zone from the MIG's
#      distributionPolicy).
# Usage: run_sim_gce.py LUASCALE SOURCE_DIR. Fails when google-auth is missing.
import os
import re
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simharness import Harness, log_has, nodes, pod, pods_running, read_env_file, stop, until  # noqa: E402

try:
    from google.oauth2 import service_account
    import google.auth.transport.requests
    import requests
except ImportError as e:  # a missing client is a failure, never a skip
    print("not ok - python3-google-auth/python3-requests not importable under %s: %s" % (sys.executable, e))
    sys.exit(1)

H = Harness(sys.argv[1], sys.argv[2], "run_sim_gce.")
ok = H.ok

GROUPS = """\
  - {name: workers, min: 0, max: 6, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}, labels: {pool: workers}}}
  - {name: scarce, min: 0, max: 3, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}, labels: {pool: scarce}}}
  - {name: spread, min: 0, max: 6, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}, labels: {pool: spread}}}
  - {name: bulk, min: 0, max: 4, template: {allocatable: {cpu: 8, memory: 32Gi, pods: 110}, labels: {pool: bulk, node.kubernetes.io/instance-type: e2-standard-8}}}
"""
GCE_GROUPS = """\
    workers: {zone: us-central1-a, machine_type: e2-standard-4}
    scarce: {zone: us-central1-b, machine_type: e2-standard-4}
    spread: {region: us-central1, zones: [us-central1-a, us-central1-b, us-central1-c], machine_type: e2-standard-4}
    bulk: {region: us-central1, zones: [us-central1-b, us-central1-c], machine_type: e2-standard-8, refuse_create: true}
"""
# the config writes each group's labels (GCE has no node-template tags);
# its resources come from the instance template and the machine type
CONFIG_GROUPS = """\
node_groups:
  - name: workers
    max: 6
    template: {allocatable: {cpu: 3920m, memory: 14Gi, pods: 110}, labels: {pool: workers}}
    gce: {zone: us-central1-a}
  - name: scarce
    max: 3
    template: {allocatable: {cpu: 3920m, memory: 14Gi, pods: 110}, labels: {pool: scarce}}
    gce: {zone: us-central1-b}
  - name: spread
    max: 6
    template: {allocatable: {cpu: 3920m, memory: 14Gi, pods: 110}, labels: {pool: spread}}
    gce: {region: us-central1}
  - name: bulk
    max: 4
    gce: {region: us-central1}
"""


def scenario(name, workloads, faults="", boot="2s"):
    body = "node_groups:\n" + GROUPS + "workloads:\n" + workloads
    if faults:
        body += "faults:\n" + faults
    body += "gce:\n  project: sim-project\n  retry: 2s\n  groups:\n" + GCE_GROUPS
    return H.scenario(name, body, boot)


def start_sim(name, scen):
    env_file, key = H.path(name + ".env"), H.path(name + "-key.json")
    sim = H.start_sim(name, scen, ["--gce-port", "0", "--gce-env-out", env_file, "--gce-key-out", key],
                      [r"GCE face .* at http://127\.0\.0\.1:(\d+)"])
    sim["env"] = read_env_file(env_file)
    sim["key"] = key
    creds = service_account.Credentials.from_service_account_file(
        key, scopes=["https://www.googleapis.com/auth/compute"])
    creds.refresh(google.auth.transport.requests.Request())
    sim["http"] = requests.Session()
    sim["http"].headers["Authorization"] = "Bearer " + creds.token
    sim["base"] = sim["env"]["LUASCALE_SIM_GCE_ENDPOINT"] + "projects/sim-project/"
    return sim


def start_run(sim, name, params="{}"):
    return H.start_run(sim, name, CONFIG_GROUPS +
                       "provider:\n  kind: gce\n  qps: 20\n  burst: 20\n  gce:\n    project: sim-project\n"
                       "    credentials_file: %s\n    endpoints: {compute: \"%s\"}\n"
                       % (sim["key"], sim["env"]["LUASCALE_SIM_GCE_ENDPOINT"]),
                       {}, params)


def compute(sim, method, path):
    """One compute call as a client makes it: throttling (429, 403
    rateLimitExceeded) retried, the answer's JSON or None."""
    for _ in range(40):
        r = sim["http"].request(method, sim["base"] + path)
        if r.status_code == 200:
            return r.json()
        if r.status_code not in (403, 429) or "rateLimitExceeded" not in r.text and r.status_code == 403:
            return None
        time.sleep(0.25)
    return None


def mig(sim, scope, name):
    return compute(sim, "GET", "%s/instanceGroupManagers/%s" % (scope, name))


def managed(sim, scope, name):
    doc = compute(sim, "POST", "%s/instanceGroupManagers/%s/listManagedInstances" % (scope, name))
    return doc.get("managedInstances", []) if doc else []


def live_names(sim, scope, name):
    return sorted(m["name"] for m in managed(sim, scope, name) if m.get("currentAction") != "DELETING")


def phase_up_and_down():
    sim = start_sim("updown", scenario("updown", pod("batch", "2s", 3, "workers", "20s")))
    run = start_run(sim, "updown", "{unneeded_for: 3s, scale_down_delay_after_add: 0s}")
    logs = (run["log"], sim["log"])
    ran = until(60, lambda: pods_running(sim, "batch-"))
    ok(ran, "MIG: pending pods become instances, nodes and running pods", *logs)
    if ran:
        ns = nodes(sim)
        pids = {ns[p["spec"]["nodeName"]]["spec"].get("providerID", "") for p in ran}
        names = live_names(sim, "zones/us-central1-a", "workers")
        ok(all(re.match(r"^gce://sim-project/us-central1-a/workers-[a-z0-9]{4}$", x) for x in pids) and
           {x.rsplit("/", 1)[1] for x in pids} <= set(names),
           "MIG: the pods run on nodes whose gce:// providerIDs are the MIG's instances (%s)" % ", ".join(names),
           *logs)
        m = mig(sim, "zones/us-central1-a", "workers")
        ok(m and m.get("targetSize") == len(names), "MIG: targetSize %s, %d instances"
           % (m and m.get("targetSize"), len(names)), *logs)
    ok(log_has(run["log"], r"instance workers-[a-z0-9]{4} of group workers exists, 0\.\ds after the request"),
       "createInstances: each instance is reported the moment its name is chosen", *logs)
    before = live_names(sim, "zones/us-central1-a", "workers")
    gone = until(90, lambda: (lambda m: m if m and m.get("targetSize") == 0 else None)(
        mig(sim, "zones/us-central1-a", "workers")))
    ok(gone, "scale-down: every node goes and the MIG's targetSize is 0", *logs)
    # the MIG shrinks when an instance is terminated; its Node's delete
    # (and the log line saying so) comes after
    done = until(20, lambda: sorted(re.findall(r"delete (workers-[a-z0-9]{4}) done",
                                               open(run["log"]).read())) == before)
    deleted = re.findall(r"delete (workers-[a-z0-9]{4}) done", open(run["log"]).read())
    ok(done and sorted(deleted) == before and not live_names(sim, "zones/us-central1-a", "workers"),
       "scale-down: exactly the removed nodes' instances were deleted (%s)" % ", ".join(sorted(deleted)), *logs)
    stop(run["proc"])
    stop(sim["proc"])


def phase_faults():
    faults = ("  - {kind: launch_error, group: scarce, error: no_capacity}\n"
              "  - {kind: throttle, group: workers, rate: 0.5}\n")
    sim = start_sim("faults", scenario("faults", pod("gpu", "2s", 1, "scarce") + pod("batch", "2s", 3, "workers"),
                                       faults))
    run = start_run(sim, "faults")
    logs = (run["log"], sim["log"])
    failed = until(60, lambda: log_has(run["log"], r"^\S+ warn  scale_up scarce \+1 failed after ([0-9.]+)s: "
                                                   r".*no capacity: ZONE_RESOURCE_POOL_EXHAUSTED.*group backed off"))
    ok(failed, "a stockout on lastAttempt backs the group off (%ss after asking)"
       % (failed.group(1) if failed else "?"), *logs)
    back = until(20, lambda: (lambda m: m if m and m.get("targetSize") == 0 else None)(
        mig(sim, "zones/us-central1-b", "scarce")))
    ok(back, "the instance that could not be made is deleted: MIG scarce back at targetSize 0", *logs)
    ok(log_has(run["log"], r"instance scarce-[a-z0-9]{4} of group scarce was given back by the cloud; "
                           r"no longer upcoming"),
       "the instance reported by name, then given back, is no longer counted as upcoming", *logs)
    ran = until(90, lambda: pods_running(sim, "batch-"))
    names = live_names(sim, "zones/us-central1-a", "workers")
    used = {p["spec"]["nodeName"] for p in ran} if ran else set()
    ok(ran and set(names) == used, "under throttling every pod runs, on exactly the instances launched (%s)"
       % ", ".join(names), *logs)
    ok(log_has(run["log"], r"gce: .* throttled \(HTTP 403 rateLimitExceeded\)"),
       "the cloud did throttle (403 rateLimitExceeded), and luascale said so", *logs)
    stop(run["proc"])
    stop(sim["proc"])


def phase_restart():
    sim = start_sim("restart", scenario("restart", pod("batch", "2s", 3, "workers"), boot="8s"))
    run = start_run(sim, "restart-1")
    logs = [run["log"], sim["log"]]
    asked = until(40, lambda: log_has(run["log"], r"scale_up workers \+(\d+): asking the cloud"))
    made = until(20, lambda: len(live_names(sim, "zones/us-central1-a", "workers")) >= 3)
    stop(run["proc"], signal.SIGKILL)
    ok(asked and made and not pods_running(sim, "batch-"),
       "a scale-up made its instances and luascale was killed before they were nodes", *logs)
    first = live_names(sim, "zones/us-central1-a", "workers")
    run2 = start_run(sim, "restart-2")
    logs.append(run2["log"])
    ran = until(60, lambda: pods_running(sim, "batch-"))
    ok(ran and live_names(sim, "zones/us-central1-a", "workers") == first,
       "after the restart every pod runs on the instances made before it (%s)" % ", ".join(first), *logs)
    ok(not log_has(run2["log"], r"scale_up workers \+"),
       "the second luascale launched nothing: the MIG's targetSize counted the instances on their way", *logs)
    stop(run2["proc"])
    stop(sim["proc"])


def phase_regional():
    big = ("  - {name: big, at: 2s, count: 2, requests: {cpu: 6, memory: 1Gi}, "
           "node_selector: {node.kubernetes.io/instance-type: e2-standard-8}}\n")
    sim = start_sim("regional", scenario("regional", pod("wide", "2s", 3, "spread") + big))
    run = start_run(sim, "regional")
    logs = (run["log"], sim["log"])
    ran = until(60, lambda: pods_running(sim, "wide-"))
    ok(ran, "regional MIG: pending pods become instances, nodes and running pods", *logs)
    if ran:
        ns = nodes(sim)
        zones = {ns[p["spec"]["nodeName"]]["spec"].get("providerID", "").split("/")[3] for p in ran}
        m = mig(sim, "regions/us-central1", "spread")
        ok(zones <= {"us-central1-a", "us-central1-b", "us-central1-c"} and m and m.get("targetSize") == 3,
           "regional MIG: instances in the region's zones (%s), targetSize %s"
           % (", ".join(sorted(zones)), m and m.get("targetSize")), *logs)
    ok(log_has(run["log"], r"instance spread-[a-z0-9]{4} of group spread exists") and
       not log_has(run["log"], r"group spread: createInstances refused"),
       "regional MIG: named instances are reported once the MIG placed them in a zone", *logs)
    big_ran = until(60, lambda: pods_running(sim, "big-"))
    ok(big_ran, "a regional MIG without a config template: its template (8 CPUs) is read from the cloud and "
       "the pods that need it run", *logs)
    ok(log_has(run["log"], r"gce: group bulk: createInstances refused .*; resizing instead") and
       log_has(run["log"], r"gce: group bulk: MIG bulk resized 0 -> 2"),
       "a MIG that refuses createInstances is resized instead (0 -> 2)", *logs)
    if big_ran:
        ns = nodes(sim)
        pids = sorted(ns[p["spec"]["nodeName"]]["spec"].get("providerID", "") for p in big_ran)
        m = mig(sim, "regions/us-central1", "bulk")
        ok(len(set(pids)) == 2 and all(re.match(r"^gce://sim-project/us-central1-[bc]/bulk-[a-z0-9]{4}$", x)
                                       for x in pids) and m and m.get("targetSize") == 2,
           "resize: the instances the MIG named are the nodes (%s), targetSize %s"
           % (", ".join(pids), m and m.get("targetSize")), *logs)
    stop(run["proc"])
    stop(sim["proc"])


try:
    # independent phases, each with its own simulator: at the same time
    H.phases([phase_up_and_down, phase_faults, phase_restart, phase_regional], limit=330)
finally:
    H.finish()
