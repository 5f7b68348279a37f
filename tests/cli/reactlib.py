# reactlib.py: how fast `luascale run` reacts to a pod the scheduler cannot
# place, measured from outside against `luascale sim` — shared by the CTest
# check (run_sim_react.py) and the bench (bench/bench_react.py). The
# simulator records, on one clock, when each pod first became Unschedulable
# and when each launch call reached its cloud
# (GET /apis/sim.luascale.io/v1/reacting); a pod's reaction time is the
# time from the first to the next launch call that arrived after it.
import math
import os
import subprocess

from simharness import kube

GROUP = ("  - {name: workers, min: 1, max: 300, price_per_hour: 0.2,\n"
         "     template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}\n")


def workload(name, at, count, interval=None, every=None, times=None):
    """Pods of 3 CPUs (one per 4-CPU node, so each needs a launch) that run
    until the end."""
    extra = ""
    if interval:
        extra += ", interval: %s" % interval
    if every:
        extra += ", every: %s, times: %d" % (every, times)
    return ("  - {name: %s, at: %s, count: %d%s, requests: {cpu: 3, memory: 1Gi}}\n"
            % (name, at, count, extra))


def write_scenario(path, workloads, boot="2s"):
    """A world of one node group ('workers', one node at the start) with the
    given workload lines."""
    with open(path, "w") as f:
        f.write("seed: 7\nstart: \"2026-12-01T08:00:00Z\"\nduration: 2h\n")
        f.write("node_groups:\n" + GROUP)
        f.write("cloud: {boot_delay: %s, boot_jitter: 0s, launch_latency: 200ms, "
                "terminate_latency: 200ms, shutdown_delay: 1s}\n" % boot)
        f.write("cluster: {register_delay: 500ms, scheduler_interval: 200ms}\n")
        f.write("initial_nodes: [{group: workers, count: 1}]\n")
        f.write("workloads:\n" + "".join(workloads))


def write_config(path, src, sim, intervals):
    """A `luascale run` config on the simulator's cluster and cloud, with the
    default policy, 'intervals' (a YAML flow mapping) and a token bucket
    that never holds a launch back."""
    with open(path, "w") as f:
        f.write("cluster: {kubeconfig: %s, context: luascale-sim}\n" % sim["kubeconfig"])
        f.write("policy: {path: %s}\n" % os.path.join(src, "policies/default.lua"))
        f.write("node_groups:\n" + GROUP)
        f.write("provider: {kind: sim, qps: 100, burst: 100}\n")
        f.write("intervals: %s\n" % intervals)


def start_run(h, name, cfg, binary=None):
    """Starts `luascale run --config cfg` (the harness's binary unless
    'binary'), as the harness starts its processes. Returns {proc, log}."""
    log = h.path(name + "-run.log")
    env = {"PATH": "/usr/bin:/bin", "HOME": h.tmp, "LUASCALE_SERVER_LISTEN": "127.0.0.1:0"}
    p = subprocess.Popen([binary or h.luascale, "run", "--config", cfg], env=env,
                         stdout=open(log, "w"), stderr=subprocess.STDOUT)
    h.procs.append(p)
    return {"proc": p, "log": log}


def reacting(sim):
    """The simulator's record: {nowNs, pods: [...], launches: [...], dropped}."""
    return kube(sim, "/apis/sim.luascale.io/v1/reacting")


def latencies(rec):
    """Per pod that became Unschedulable, seconds until the next launch call
    arrived (None when none has arrived yet), in the order they became
    Unschedulable."""
    calls = sorted(c["arrivedNs"] for c in rec["launches"])
    out = []
    for p in sorted(rec["pods"], key=lambda p: p["unschedulableNs"]):
        u = p["unschedulableNs"]
        nxt = next((c for c in calls if c >= u), None)
        out.append((p["namespace"] + "/" + p["name"], None if nxt is None else (nxt - u) / 1e9))
    return out


def bound_to_later_launch(sim, rec):
    """How many Unschedulable pods ended on a node whose launch call came
    after they became Unschedulable (capacity bought for them), and how many
    on one already on its way."""
    launched_at = {}
    for c in rec["launches"]:
        for n in c["nodes"]:
            launched_at[n] = c["arrivedNs"]
    pods = {p["metadata"]["namespace"] + "/" + p["metadata"]["name"]: p
            for p in kube(sim, "/api/v1/pods")["items"]}
    later = earlier = 0
    for p in rec["pods"]:
        obj = pods.get(p["namespace"] + "/" + p["name"])
        node = obj and obj["spec"].get("nodeName")
        if node in launched_at:
            if launched_at[node] >= p["unschedulableNs"]:
                later += 1
            else:
                earlier += 1
    return later, earlier


def percentile(xs, q):
    """The q-quantile (0..1) of a non-empty list, nearest rank."""
    s = sorted(xs)
    k = max(0, min(len(s) - 1, math.ceil(q * len(s)) - 1))
    return s[k]
