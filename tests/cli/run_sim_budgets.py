#!/usr/bin/python3
# run_sim_budgets.py: `luascale run` against `luascale sim` with a
# disruption budget of two nodes at once (in a window that is open all the
# time: it opens every minute for an hour). Six idle nodes are to go; the
# default policy asks for more removals a round than the budget allows, and
# the safety check cuts the third: never more than two nodes of the group
# are cordoned or on their way out at once, the cut is logged naming the
# budget and counted as luascale_rejections_total{invariant=
# "disruption_budget"}, and the nodes still all go, two at a time, as
# removals finish. luascale_disruptions_total counts each drain and delete
# under its reason, and luascale_disruption_budget_remaining what is left.
# Usage: run_sim_budgets.py LUASCALE SOURCE_DIR
import os
import re
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simharness import Harness, log_has, nodes, until  # noqa: E402

H = Harness(sys.argv[1], sys.argv[2], "run_sim_budgets.")
ok = H.ok

GROUP = ("  - {name: workers, min: 0, max: 8, "
         "template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}, labels: {pool: workers}}}\n")
scen = H.path("budgets.yaml")
with open(scen, "w") as f:
    f.write("seed: 5\nstart: \"2026-12-01T08:00:00Z\"\nduration: 2h\n"
            "cloud: {boot_delay: 1s, launch_latency: 200ms, terminate_latency: 300ms, shutdown_delay: 1s}\n"
            "cluster: {register_delay: 300ms, scheduler_interval: 200ms}\n"
            "initial_nodes: [{group: workers, count: 6}]\n"
            "node_groups:\n" + GROUP + "workloads: []\n")
SIM = H.start_sim("budgets", scen, [], [])
run = H.start_run(SIM, "run", "node_groups:\n" + GROUP + "provider: {kind: sim}\n"
                  "disruption:\n  budgets:\n"
                  "    - {nodes: \"2\", schedule: \"* * * * *\", duration: 1h}\n",
                  {}, "{unneeded_for: 2s, scale_down_delay_after_add: 0s, max_scale_down: 6}")
m = until(20, lambda: log_has(run["log"], r"serving /metrics.* \(port (\d+)\)"))
ok(m, "luascale run says where it serves", run["log"])
PORT = int(m.group(1)) if m else 0

first = until(20, lambda: nodes(SIM))
ok(first and len(first) == 6, "six nodes at the start (%d)" % len(first or {}), SIM["log"])

# watch the group until it is empty: how many nodes are cordoned at once
most, seen, end = 0, [], time.monotonic() + 90
while time.monotonic() < end:
    ns = nodes(SIM)
    out = sorted(n for n, o in ns.items() if o["spec"].get("unschedulable"))
    most = max(most, len(out))
    if out and (not seen or seen[-1] != out):
        seen.append(out)
    if not ns:
        break
    time.sleep(0.1)
left = nodes(SIM)
ok(not left, "every idle node went (%d left)" % len(left), run["log"], SIM["log"])
ok(most == 2, "never more than two nodes disrupted at once, and two at times (at most %d: %s)" % (most, seen),
   run["log"])
ok(log_has(run["log"], r"rejected: drain workers-\d: disruption budget of group workers for empty "
           r"\(nodes 2, schedule \"\* \* \* \* \*\" for 1h\) allows 2 of its \d+ nodes at once, and 2 are being disrupted"),
   "the cut names the group, the reason and the budget", run["log"])


def metrics():
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % PORT, timeout=5) as r:
            return r.read().decode()
    except OSError:
        return ""


text = metrics()
mm = re.search(r'^luascale_rejections_total\{invariant="disruption_budget"\} (\S+)$', text, re.M)
ok(mm and float(mm.group(1)) >= 1,
   "luascale_rejections_total{invariant=\"disruption_budget\"} counts the cuts (%s)" % (mm and mm.group(1)))
counts = {a: float(v) for a, v in re.findall(
    r'^luascale_disruptions_total\{group="workers",reason="empty",action="(drain|delete)"\} (\S+)$', text, re.M)}
ok(counts == {"drain": 6, "delete": 6},
   "luascale_disruptions_total counts each node's drain and delete once, as empty (%s)" % counts)


def budget_left():
    return re.findall(r'^luascale_disruption_budget_remaining\{group="workers",reason="(\w+)"\} (\S+)$',
                      metrics(), re.M)


# a round after the last removal ended: nothing is being disrupted
left = until(10, lambda: (lambda v: v if v and all(x == "2" for _, x in v) else None)(budget_left())) or budget_left()
ok(sorted(r for r, _ in left) == ["drifted", "empty", "expired", "underutilized"] and
   all(v == "2" for _, v in left),
   "luascale_disruption_budget_remaining shows the budget left for each reason, 2 once the group is empty (%s)" % left)
H.finish()
