#!/usr/bin/python3
# run_sim_react.py: `luascale run` against `luascale sim` reacts to a pod
# the scheduler cannot place within intervals.batch_new_pod, not after the
# batching window: with batch_idle 5s and batch_max 10s, every launch call
# for a new Unschedulable pod must reach the simulated cloud well before 5 s
# (a loose bound: 2.5 s; the default batch_new_pod is 100 ms). Times come
# from the simulator's own record (GET /apis/sim.luascale.io/v1/reacting),
# so nothing here times anything itself.
# Usage: run_sim_react.py LUASCALE SOURCE_DIR
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simharness import Harness, until  # noqa: E402
import reactlib  # noqa: E402

BOUND_S = 2.5
H = Harness(sys.argv[1], sys.argv[2], "run_sim_react.")

scen = H.path("react.yaml")
# the first pod of the first wave fits the node there; the others need one
# each. The waves come well after luascale has synced and made its first round.
reactlib.write_scenario(scen, [
    reactlib.workload("first", "10s", 2),
    reactlib.workload("second", "16s", 1),
])
sim = H.start_sim("react", scen, [], [])
cfg = H.path("react-run.yaml")
reactlib.write_config(cfg, H.src, sim, "{reconcile: 1h, batch_idle: 5s, batch_max: 10s}")
run = reactlib.start_run(H, "react", cfg)

def measured():
    """The latencies once both pods that need a node have had their launch."""
    lat = reactlib.latencies(reactlib.reacting(sim))
    return lat if len(lat) == 2 and all(s is not None for _, s in lat) else None


lat = until(60, measured)
if not H.ok(lat is not None, "both pods that need a node became Unschedulable and got a launch call",
            run["log"], sim["log"]):
    print("# record: %s" % reactlib.reacting(sim))
    H.finish()
for name, s in lat:
    H.ok(s < BOUND_S, "%s: launch call %.3f s after it became Unschedulable (bound %.1f s, "
         "batch_idle 5 s)" % (name, s, BOUND_S), run["log"])
rec = reactlib.reacting(sim)
H.ok(sum(c["count"] for c in rec["launches"]) == 2,
     "one instance launched per pod that needed one (%s)" % [c["count"] for c in rec["launches"]],
     run["log"])
H.ok(run["proc"].poll() is None, "luascale run is still running", run["log"])
H.finish()
