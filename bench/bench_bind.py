#!/usr/bin/python3
# bench_bind.py: what provisioning.bind_pods saves from a Ready node to a
# Running pod, against `luascale sim` in real time. For each scheduler
# interval (the sim's scheduler passes at most once per interval: a
# stand-in for a slow or backlogged kube-scheduler), two bursts of pods
# that each need a new node arrive; `luascale run` (default policy, sim
# provider) launches the nodes, with bind_pods off and then on. The bench
# polls the simulated API server every 50 ms and, for every pod placed on a
# node launched during the run, takes the time from the node first seen
# Ready to the pod first seen Running. Prints p50/p90 for off and on and
# the saving, per interval, and how many pods luascale bound (and how many
# of its Bindings lost to the scheduler: 409s).
# Usage: bench_bind.py LUASCALE [--intervals 200ms,2s,5s] [--pods 8] [--batch-idle 200ms]
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "cli"))
from simharness import Harness, kube  # noqa: E402

GROUP = ("  - {name: workers, min: 1, max: 60, "
         "template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}, labels: {pool: workers}}}\n")


def pct(v, q):
    """The q-quantile (nearest rank) of the sorted list v."""
    if not v:
        return float("nan")
    k = max(0, min(len(v) - 1, int(round(q * len(v) + 0.5)) - 1))
    return v[k]


def one_run(luascale, interval, pods, bind, batch_idle):
    """Ready → Running latencies (seconds, sorted) of the pods on new nodes."""
    H = Harness(luascale, os.path.join(HERE, ".."), "bench_bind.")
    try:
        scen = H.path("scen.yaml")
        with open(scen, "w") as f:
            f.write("seed: 7\nstart: \"2026-12-01T08:00:00Z\"\nduration: 2h\n"
                    "cloud: {boot_delay: 3s, boot_jitter: 2s, launch_latency: 300ms, "
                    "terminate_latency: 300ms, shutdown_delay: 1s}\n"
                    "cluster: {register_delay: 500ms, scheduler_interval: %s}\n"
                    "initial_nodes: [{group: workers, count: 1}]\n"
                    "node_groups:\n%s"
                    "workloads:\n"
                    "  - {name: a, at: 3s, count: %d, requests: {cpu: 3, memory: 1Gi}, node_selector: {pool: workers}}\n"
                    "  - {name: b, at: 25s, count: %d, requests: {cpu: 3, memory: 1Gi}, node_selector: {pool: workers}}\n"
                    % (interval, GROUP, pods, pods))
        sim = H.start_sim("bench", scen, [], [])
        env = {"LUASCALE_PROVISIONING_BIND_PODS": "true" if bind else "false",
               "LUASCALE_INTERVALS_BATCH_IDLE": batch_idle}
        run = H.start_run(sim, "run", "node_groups:\n" + GROUP + "provider: {kind: sim}\n", env)
        initial = set()
        ready_at, running_at, node_of = {}, {}, {}
        end = time.monotonic() + 120
        while time.monotonic() < end:
            t = time.monotonic()
            try:
                nodes = kube(sim, "/api/v1/nodes")["items"]
                pl = kube(sim, "/api/v1/pods")["items"]
            except OSError:
                time.sleep(0.05)
                continue
            for n in nodes:
                name = n["metadata"]["name"]
                conds = n.get("status", {}).get("conditions", [])
                if any(c.get("type") == "Ready" and c.get("status") == "True" for c in conds):
                    ready_at.setdefault(name, t)
            if not initial:
                initial = set(ready_at) or initial
            for p in pl:
                name = p["metadata"]["name"]
                if not (name.startswith("a-") or name.startswith("b-")):
                    continue
                if p.get("status", {}).get("phase") == "Running":
                    running_at.setdefault(name, t)
                    node_of[name] = p["spec"].get("nodeName", "")
            if len(running_at) == 2 * pods:
                break
            time.sleep(max(0.0, 0.05 - (time.monotonic() - t)))
        lat = sorted(running_at[p] - ready_at[node_of[p]] for p in running_at
                     if node_of.get(p) in ready_at and node_of[p] not in initial)
        time.sleep(1)  # the last binding's log line
        text = open(run["log"]).read()
        return lat, len(running_at), text.count("bind_pods: bound pod "), text.count("not bound to node")
    finally:
        H.cleanup()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("luascale")
    ap.add_argument("--intervals", default="200ms,2s,5s")
    ap.add_argument("--pods", type=int, default=8)
    ap.add_argument("--batch-idle", default="200ms")
    a = ap.parse_args()
    print("Ready node -> Running pod, pods on new nodes; %d+%d pods of 3 CPU (one node each), "
          "luascale batch_idle %s" % (a.pods, a.pods, a.batch_idle))
    print("%-12s %-4s %6s %8s %8s %9s %9s" % ("sched every", "bind", "pods", "p50 s", "p90 s",
                                            "luascale", "conflict"))
    for iv in a.intervals.split(","):
        res = {}
        for bind in (False, True):
            lat, n, bound, refused = one_run(a.luascale, iv, a.pods, bind, a.batch_idle)
            res[bind] = lat
            print("%-12s %-4s %6d %8.3f %8.3f %9d %9d%s" % (iv, "on" if bind else "off", len(lat),
                                                           pct(lat, 0.5), pct(lat, 0.9), bound, refused,
                                                           "" if n == 2 * a.pods else "  (only %d of %d ran)" % (n, 2 * a.pods)))
            sys.stdout.flush()
        off, on = res[False], res[True]
        print("%-12s saving: p50 %.3f s (%.0f%%), p90 %.3f s (%.0f%%)" % (
            iv, pct(off, 0.5) - pct(on, 0.5), 100 * (1 - pct(on, 0.5) / pct(off, 0.5)) if pct(off, 0.5) else 0,
            pct(off, 0.9) - pct(on, 0.9), 100 * (1 - pct(on, 0.9) / pct(off, 0.9)) if pct(off, 0.9) else 0))


if __name__ == "__main__":
    main()
