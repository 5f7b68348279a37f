#!/usr/bin/python3
# run_sim_remote_drift.py: image drift through the remote sim provider.
# `luascale sim` runs two nodes of group `workers`; an `image` fault makes
# the group launch image v2 three seconds in. Then:
#   1. the simulator's cloud API (GET /apis/sim.luascale.io/v1/groups)
#      gives each old instance "outdated": why ("image ... is not group
#      workers's v2"), and no such field for a current one;
#   2. `luascale run --provider sim` (provider kind sim: it reads that API)
#      with default.lua (replace_drifted, a budget of one node) replaces
#      both old nodes one at a time: the group ends with two instances none
#      of which is outdated, the old nodes are gone, an Event
#      LuascaleReplace on each gives the image reason, and no pod was lost.
# Waits are bounded and fail with what they saw.
# Usage: run_sim_remote_drift.py LUASCALE SOURCE_DIR
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simharness import Harness, kube, nodes, until  # noqa: E402

H = Harness(sys.argv[1], sys.argv[2], "run_sim_remote_drift.")
ok = H.ok
GROUPS = ("  - {name: workers, min: 1, max: 4, "
          "template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}, labels: {pool: workers}}}\n")
scen = H.path("drift.yaml")
with open(scen, "w") as f:
    f.write("seed: 7\nstart: \"2026-12-01T08:00:00Z\"\nduration: 2h\n"
            "cloud: {boot_delay: 1s, boot_jitter: 200ms, launch_latency: 200ms, terminate_latency: 300ms, "
            "shutdown_delay: 1s}\n"
            "cluster: {register_delay: 300ms, scheduler_interval: 200ms}\n"
            "initial_nodes: [{group: workers, count: 2}]\n"
            "node_groups:\n" + GROUPS +
            "workloads:\n"
            "  - {name: web, at: 0s, count: 2, controller: replicaset, grace: 1s, "
            "requests: {cpu: 1, memory: 1Gi}}\n"
            "faults:\n  - {kind: image, at: 3s, group: workers, image: v2}\n")
SIM = H.start_sim("drift", scen, [], [])


def groups():
    return {g["name"]: g for g in kube(SIM, "/apis/sim.luascale.io/v1/groups")["items"]}


def live(g):
    return [i for i in g["instances"] if i["state"] in ("pending", "running")]


WHY = r"^image (\S+) is not group workers's v2$"
old = until(20, lambda: (lambda ins: ins if len(ins) == 2 and all("outdated" in i for i in ins) else None)(
    live(groups()["workers"])))
ok(old, "after the image fault, the API gives both old instances 'outdated' (%s)" % groups().get("workers"),
   SIM["log"])
old = old or []
ok(all(re.match(WHY, i["outdated"]) for i in old), "with why (%s)" % [i.get("outdated") for i in old])
old_ids = {i["providerID"] for i in old}
old_nodes = {n for n, o in nodes(SIM).items() if o["spec"].get("providerID") in old_ids}
ok(len(old_nodes) == 2, "the old instances are nodes (%s)" % sorted(old_nodes), SIM["log"])

run = H.start_run(SIM, "run", "node_groups:\n" + GROUPS + "provider: {kind: sim}\n"
                  "disruption: {budgets: [{nodes: 1}]}\n", {}, "{replace_drifted: true}")
logs = (run["log"], SIM["log"])
end, last, two_cordoned = time.monotonic() + 90, [], []
while time.monotonic() < end:
    ns = nodes(SIM)
    cordoned = sorted(n for n, o in ns.items() if o["spec"].get("unschedulable"))
    if len(cordoned) > 1:
        two_cordoned.append(cordoned)
    last = live(groups()["workers"])
    if len(last) == 2 and not {i["providerID"] for i in last} & old_ids and not any("outdated" in i for i in last):
        break
    time.sleep(0.2)
ok(len(last) == 2 and not {i["providerID"] for i in last} & old_ids and not any("outdated" in i for i in last),
   "the group ends with two current instances, none of the old ones (%s)" % last, *logs)
ok(not two_cordoned, "one node at a time (%s)" % two_cordoned[:3], run["log"])
ok(until(20, lambda: not old_nodes & set(nodes(SIM))), "the old nodes are gone", *logs)
started = [e for e in kube(SIM, "/api/v1/events")["items"] if e.get("reason") == "LuascaleReplace"]
ok(len(started) == 2 and {e["involvedObject"]["name"] for e in started} == old_nodes and
   all(re.search(r"image \S+ is not group workers's v2", e["message"]) for e in started),
   "an Event LuascaleReplace on each old node gives the image reason (%s)" % [e["message"] for e in started])
pods = until(20, lambda: (lambda ps: ps if len(ps) == 2 and all(
    p["status"].get("phase") == "Running" and p["spec"].get("nodeName") not in old_nodes for p in ps) else None)(
    [p for p in kube(SIM, "/api/v1/pods")["items"]
     if p["metadata"]["name"].startswith("web") and not p["metadata"].get("deletionTimestamp")]))
ok(pods, "the ReplicaSet's two pods run on the new nodes", *logs)
st = kube(SIM, "/apis/sim.luascale.io/v1/stats")
ok(st["podsKilled"] == 0 and st["barePodsLost"] == 0,
   "no pod was lost (%s)" % {k: st[k] for k in ("podsKilled", "barePodsLost", "evictions")})
H.finish()
