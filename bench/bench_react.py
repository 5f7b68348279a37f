#!/usr/bin/python3
# bench_react.py: Unschedulable pod -> launch call in `luascale run`, measured
# against `luascale sim` on a scenario with steady arrivals and bursts: a pod
# every second for 40 s and three bursts of 10, each pod needing a node of its
# own. Runs the same world twice, one after the other, with the default
# intervals (batch_idle 1s, batch_max 10s): "after" with batch_new_pod at its
# default (100 ms), "before" with batch_new_pod = batch_idle (no head start
# for new pods). Prints p50/p90/max and the count for each, and the ratio.
# Times are the simulator's (GET /apis/sim.luascale.io/v1/reacting): when a
# pod first became Unschedulable, and when the next launch call arrived.
#
# Usage: bench/bench_react.py [--luascale BIN] [--baseline BIN] [--only after|before]
#   --luascale BIN   the binary to measure (default: build-release/luascale,
#                    else build/luascale, beside this file's source tree)
#   --baseline BIN   also run "before" with another build (e.g. one of an
#                    older commit) at its own defaults, labelled "baseline"
import argparse
import os
import sys
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(SRC, "tests", "cli"))
from simharness import Harness, until  # noqa: E402
import reactlib  # noqa: E402

STEADY = 40     # one pod a second from 5 s
BURSTS = 3      # of BURST pods, at 12 s, 24 s, 36 s
BURST = 10
PODS = STEADY + BURSTS * BURST


def scenario(h):
    path = h.path("react.yaml")
    # the first pod fits the node there; every other one needs a launch
    reactlib.write_scenario(path, [
        reactlib.workload("steady", "5s", STEADY, interval="1s"),
        reactlib.workload("burst", "12s", BURST, every="12s", times=BURSTS),
    ])
    return path


def one_run(h, label, binary, intervals):
    """Starts a simulator and luascale, waits for every pod's launch call,
    returns (latencies in s, launch calls, instances, bound later/earlier)."""
    sim = h.start_sim(label, scenario(h), [], [])
    cfg = h.path(label + "-run.yaml")
    reactlib.write_config(cfg, h.src, sim, intervals)
    run = reactlib.start_run(h, label, cfg, binary)

    def done():
        lat = reactlib.latencies(reactlib.reacting(sim))
        return lat if len(lat) >= PODS - 1 and all(s is not None for _, s in lat) else None

    lat = until(120, done)
    rec = reactlib.reacting(sim)
    if lat is None:
        lat = reactlib.latencies(rec)
        print("# %s: only %d of %d pods had a launch call; log: %s" %
              (label, sum(1 for _, s in lat if s is not None), PODS - 1, run["log"]))
    time.sleep(3)  # let the last nodes register, for the binding count
    later, earlier = reactlib.bound_to_later_launch(sim, rec)
    calls = len(rec["launches"])
    instances = sum(c["count"] for c in rec["launches"])
    for p in (run["proc"], sim["proc"]):
        p.terminate()
        p.wait(30)
    return [s for _, s in lat if s is not None], calls, instances, later, earlier


def line(label, r):
    lat, calls, instances, later, earlier = r
    if not lat:
        return "%-9s no measurements" % label
    return ("%-9s n=%3d  p50 %6.3f s  p90 %6.3f s  max %6.3f s  | %d launch calls, %d instances;"
            " %d pods bound to a node launched after they waited, %d to one on its way" %
            (label, len(lat), reactlib.percentile(lat, 0.5), reactlib.percentile(lat, 0.9),
             max(lat), calls, instances, later, earlier))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--luascale")
    ap.add_argument("--baseline")
    ap.add_argument("--only", choices=["after", "before"])
    a = ap.parse_args()
    binary = a.luascale
    if not binary:
        for d in ("build-release", "build"):
            if os.path.exists(os.path.join(SRC, d, "luascale")):
                binary = os.path.join(SRC, d, "luascale")
                break
    if not binary:
        sys.exit("bench_react: no luascale binary; build it or pass --luascale")
    h = Harness(binary, SRC, "bench_react.")
    results = []
    try:
        print("bench_react: %d pods (a pod a second for %d s, %d bursts of %d), one 4-CPU node "
              "each; batch_idle 1s, batch_max 10s, reconcile 10s; %s" %
              (PODS, STEADY, BURSTS, BURST, binary))
        if a.only != "before":
            results.append(("after", one_run(h, "after", binary,
                                             "{batch_idle: 1s, batch_max: 10s}")))
            print(line(*results[-1]), flush=True)
        if a.only != "after":
            results.append(("before", one_run(h, "before", binary,
                                              "{batch_idle: 1s, batch_max: 10s, batch_new_pod: 1s}")))
            print(line(*results[-1]), flush=True)
        if a.baseline:
            results.append(("baseline", one_run(h, "baseline", a.baseline,
                                                "{batch_idle: 1s, batch_max: 10s}")))
            print(line(*results[-1]), flush=True)
        r = dict(results)
        if "after" in r and "before" in r and r["after"][0] and r["before"][0]:
            print("ratio after/before: p50 %.2f, p90 %.2f" %
                  (reactlib.percentile(r["after"][0], 0.5) / reactlib.percentile(r["before"][0], 0.5),
                   reactlib.percentile(r["after"][0], 0.9) / reactlib.percentile(r["before"][0], 0.9)))
    finally:
        h.cleanup()


if __name__ == "__main__":
    main()
