#!/usr/bin/python3
# run_sim_bind.py: `luascale run` with provisioning.bind_pods against
# `luascale sim` whose scheduler passes at most once a minute. Three pods of
# 3 CPUs arrive: the scheduler's one pass puts one on the initial node and
# marks two Unschedulable; luascale packs them onto two new nodes (one each)
# and, once each node is Ready, binds its pod through the Binding API. The
# pods run long before the scheduler's next pass could have placed them,
# each on a node launched for it (two distinct new nodes), and
# luascale_pod_bindings_total{outcome="bound"} counts exactly those two.
# Usage: run_sim_bind.py LUASCALE SOURCE_DIR
import os
import re
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simharness import Harness, kube, log_has, pod, until  # noqa: E402

H = Harness(sys.argv[1], sys.argv[2], "run_sim_bind.")
ok = H.ok

GROUP = ("  - {name: workers, min: 1, max: 6, "
         "template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}, labels: {pool: workers}}}\n")
# one scheduler pass a minute (the first when the pods come, once luascale
# watches): within the test's 40 s only luascale can place
# the pods on the new nodes
scen = H.path("bind.yaml")
with open(scen, "w") as f:
    f.write("seed: 5\nstart: \"2026-12-01T08:00:00Z\"\nduration: 2h\n"
            "cloud: {boot_delay: 2s, boot_jitter: 500ms, launch_latency: 300ms, "
            "terminate_latency: 300ms, shutdown_delay: 1s}\n"
            "cluster: {register_delay: 500ms, scheduler_interval: 60s}\n"
            "initial_nodes: [{group: workers, count: 1}]\n"
            "node_groups:\n" + GROUP + "workloads:\n" + pod("web", "8s", 3, "workers"))
SIM = H.start_sim("bind", scen, [], [])
# the key from the environment (the harness writes the provisioning section)
run = H.start_run(SIM, "run", "node_groups:\n" + GROUP + "provider: {kind: sim}\n",
                  {"LUASCALE_PROVISIONING_BIND_PODS": "true"})
m = until(20, lambda: log_has(run["log"], r"serving /metrics.* \(port (\d+)\)"))
ok(m, "luascale run says where it serves", run["log"])
PORT = int(m.group(1)) if m else 0


def web_pods():
    return [p for p in kube(SIM, "/api/v1/pods")["items"] if p["metadata"]["name"].startswith("web-")]


def all_running():
    ps = web_pods()
    return ps if len(ps) == 3 and all(p["status"].get("phase") == "Running" for p in ps) else None


first = until(20, lambda: [n for n in kube(SIM, "/api/v1/nodes")["items"]])
initial = {n["metadata"]["name"] for n in (first or [])}
ok(len(initial) == 1, "one node at the start (%s)" % sorted(initial))
pods = until(40, all_running)
ok(pods, "all three pods run well before the scheduler's next pass", run["log"], SIM["log"])
placed = {p["metadata"]["name"]: p["spec"].get("nodeName", "") for p in (pods or [])}
new = [n for n in placed.values() if n and n not in initial]
ok(len(new) == 2 and len(set(new)) == 2,
   "two pods on two distinct new nodes, one on the initial node (%s)" % placed, run["log"])
for name, node in sorted(placed.items()):
    if node in new:
        ok(log_has(run["log"], r"bind_pods: bound pod default/%s to node %s " % (re.escape(name), re.escape(node))),
           "luascale says it bound %s to %s" % (name, node), run["log"])


def metrics():
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % PORT, timeout=5) as r:
            return r.read().decode()
    except OSError:
        return ""


text = until(10, lambda: (lambda t: t if 'luascale_pod_bindings_total{outcome="bound"}' in t else None)(metrics()))
mm = re.search(r'^luascale_pod_bindings_total\{outcome="bound"\} (\S+)$', text or "", re.M)
ok(mm and float(mm.group(1)) == 2, "luascale_pod_bindings_total{outcome=\"bound\"} is 2 (%s)" % (mm and mm.group(1)))
bad = [(o, float(v)) for o, v in re.findall(
    r'^luascale_pod_bindings_total\{outcome="(conflict|error)"\} (\S+)$', text or "", re.M)]
ok(len(bad) == 2 and all(v == 0 for _, v in bad),
   "no conflict and no error: both series at 0 (%s)" % bad)
H.finish()
