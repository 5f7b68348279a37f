#!/usr/bin/python3
# run_sim_replace.py: `luascale run` against `luascale sim` with a policy
# that replaces, one at a time, the nodes of group `old` with nodes of
# group `new` (plan:replace), then tries once to replace a `new` node with
# a node of group `stuck`, whose instances never register (a stuck_boot
# fault).
#  1. A replace that succeeds: no `old` node is cordoned before a Ready
#     `new` node stands for it; the ReplicaSet's pods end on `new` nodes,
#     the `old` nodes go; Events LuascaleReplace and LuascaleReplaced on
#     the old nodes name the new node; luascale_replacements_total counts
#     started and replaced, luascale_disruptions_total the replace as
#     drifted.
#  2. A replace whose new node never boots: after max_provision_time the
#     new instance is given up, the `new` node was never cordoned and still
#     runs its pods, an Event LuascaleReplaceFailed says why, and
#     luascale_replacements_total counts it failed.
# Usage: run_sim_replace.py LUASCALE SOURCE_DIR
import os
import re
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simharness import Harness, kube, log_has, nodes, until  # noqa: E402

H = Harness(sys.argv[1], sys.argv[2], "run_sim_replace.")
ok = H.ok


def group(name):
    return ("  - {name: %s, min: 0, max: 3, "
            "template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}, labels: {pool: %s}}}\n" % (name, name))


GROUPS = group("old") + group("new") + group("stuck")
scen = H.path("replace.yaml")
with open(scen, "w") as f:
    f.write("seed: 5\nstart: \"2026-12-01T08:00:00Z\"\nduration: 2h\n"
            "cloud: {boot_delay: 2s, boot_jitter: 200ms, launch_latency: 200ms, terminate_latency: 300ms, shutdown_delay: 1s}\n"
            "cluster: {register_delay: 300ms, scheduler_interval: 200ms}\n"
            "initial_nodes: [{group: old, count: 2}]\n"
            "node_groups:\n" + GROUPS +
            "workloads:\n"
            "  - {name: web, at: 0s, count: 2, controller: replicaset, grace: 1s, requests: {cpu: 1, memory: 1Gi}}\n"
            "faults:\n  - {kind: stuck_boot, group: stuck}\n")
policy = H.path("replace.lua")
with open(policy, "w") as f:
    f.write('''local ls = require "luascale"
local P = {}
function P.reconcile(cluster, params, store)
  local plan = ls.plan()
  for _, n in ipairs(cluster.nodes) do
    if n.replacing or n.removing then return plan end -- one at a time
  end
  for _, n in ipairs(ls.nodes_of(cluster, "old")) do
    if n.ready then
      plan:replace(n, "new", "old hardware", {disruption = "drifted"})
      return plan
    end
  end
  if not store.tried then
    for _, n in ipairs(ls.nodes_of(cluster, "new")) do
      if n.ready and n.pod_count > 0 then
        store.tried = n.name
        plan:replace(n, "stuck", "try the stuck group")
        return plan
      end
    end
  end
  return plan
end
return P
''')
SIM = H.start_sim("replace", scen, [], [])
run = H.start_run(SIM, "run", "node_groups:\n" + GROUPS + "provider: {kind: sim}\n"
                  "disruption: {budgets: [{nodes: \"50%\"}]}\n",
                  {"LUASCALE_PROVISIONING_MAX_PROVISION_TIME": "20s"}, policy=policy)
m = until(20, lambda: log_has(run["log"], r"serving /metrics.* \(port (\d+)\)"))
ok(m, "luascale run says where it serves", run["log"])
PORT = int(m.group(1)) if m else 0


def by_group(ns):
    out = {}
    for name, o in ns.items():
        out.setdefault(o["metadata"].get("labels", {}).get("pool", "?"), []).append(o)
    return out


def ready(o):
    return any(c["type"] == "Ready" and c["status"] == "True" for c in o["status"].get("conditions", []))


# phase 1: watch until no `old` node is left
early, end, last = [], time.monotonic() + 90, {}
while time.monotonic() < end:
    g = by_group(nodes(SIM))
    last = g
    cordoned = [o["metadata"]["name"] for o in g.get("old", []) if o["spec"].get("unschedulable")]
    gone = 2 - len(g.get("old", []))
    new_ready = len([o for o in g.get("new", []) if ready(o)])
    # the k-th old node's removal needs k Ready new nodes
    if cordoned and new_ready < gone + len(cordoned):
        early.append((cordoned, gone, new_ready))
    if not g.get("old") and new_ready == 2:
        break
    time.sleep(0.1)
ok(not last.get("old") and len(last.get("new", [])) == 2,
   "both old nodes were replaced by new ones (%s)" % {k: len(v) for k, v in last.items()},
   run["log"], SIM["log"])
ok(not early, "no old node was cordoned before a Ready new node stood for it (%s)" % early[:3], run["log"])
pods = until(20, lambda: (lambda ps: ps if len(ps) == 2 and all(
    p["status"].get("phase") == "Running" and p["spec"].get("nodeName", "").startswith("new") for p in ps) else None)(
    [p for p in kube(SIM, "/api/v1/pods")["items"] if p["metadata"]["name"].startswith("web")]))
ok(pods, "the ReplicaSet's two pods run on the new nodes", SIM["log"])
ok(log_has(run["log"], r"replace old-\d+: its new node new-\d+ \(group new\) is Ready after \d+s; removing old-\d+"),
   "the log says which new node stands for which old one", run["log"])


def events(reason):
    return [e for e in kube(SIM, "/api/v1/events")["items"] if e.get("reason") == reason]


started = events("LuascaleReplace")
done = events("LuascaleReplaced")
ok(len(started) == 2 and all(e["involvedObject"]["name"].startswith("old") for e in started),
   "an Event LuascaleReplace on each old node (%d)" % len(started))
ok(len(done) == 2 and all(re.search(r"replaced by node new-\d+ of group new, Ready after \d+s: removing it "
                                    r"\(old hardware; disruption: drifted; budget: nodes 50%: 1 of \d nodes? at once\)",
                                    e["message"]) for e in done),
   "an Event LuascaleReplaced names the new node, the reason, the disruption and the budget (%s)"
   % [e["message"] for e in done])


def metrics():
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % PORT, timeout=5) as r:
            return r.read().decode()
    except OSError:
        return ""


def metric(name, labels):
    mm = re.search(r'^%s\{%s\} (\S+)$' % (name, re.escape(labels)), metrics(), re.M)
    return float(mm.group(1)) if mm else None


ok(metric("luascale_replacements_total", 'group="old",outcome="started"') == 2 and
   metric("luascale_replacements_total", 'group="old",outcome="replaced"') == 2,
   "luascale_replacements_total counts two started and two replaced")
ok(metric("luascale_disruptions_total", 'group="old",reason="drifted",action="replace"') == 2,
   "luascale_disruptions_total counts the replaces as drifted")

# phase 2: the stuck group's node never registers
failed = until(60, lambda: events("LuascaleReplaceFailed"))
ok(failed and re.search(r"replace failed: instance \S+ did not become a Ready node in 20s; the node is left as it was",
                        failed[0]["message"]),
   "an Event LuascaleReplaceFailed says the new node did not become Ready (%s)"
   % (failed and failed[0]["message"]), run["log"])
victim = failed[0]["involvedObject"]["name"] if failed else ""
ns = nodes(SIM)
ok(victim in ns and not ns[victim]["spec"].get("unschedulable"),
   "the node it was to replace (%s) is still there, never cordoned" % victim, SIM["log"])
ok(not log_has(run["log"], r"(cordon|drain) %s" % re.escape(victim) if victim else "^$"),
   "luascale never cordoned or drained it", run["log"])
ok(metric("luascale_replacements_total", 'group="new",outcome="failed"') == 1,
   "luascale_replacements_total counts the failed replace")
H.finish()
