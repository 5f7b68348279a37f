#!/usr/bin/python3
# run_sim_fence.py: a deposed leader writes nothing. Two `luascale run`
# replicas with leader election (lease 6 s, renew deadline 4 s, retry 1 s)
# against one `luascale sim` run at debug level, whose log names the
# User-Agent of every request: each replica's carries its election
# identity, so the simulator's own record tells whose writes they were.
#   drain: the leader A drains a node of 10 pods under a write rate of
#     0.5/s; A is paused (SIGSTOP) mid-drain until B holds the Lease, then
#     resumed. From B's takeover on, A sends no write at all (no eviction,
#     no cordon, no Event, no status), and B finishes the drain.
#   launch: A's provider bucket grants one call every 30 s; pending pods
#     of two groups need two launches, so the second waits for its token
#     when A is paused and B takes over. A's waiting launch never reaches
#     the cloud after the takeover, and no group gets more instances than
#     its pods need.
#   dryrun: `luascale run --dry-run` (leader election on in its config)
#     plans a scale-up for pending pods and writes nothing: no Event, no
#     status ConfigMap, no Lease, no launch; the plan is in its log.
# Usage: run_sim_fence.py LUASCALE SOURCE_DIR drain|launch|dryrun
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simharness import Harness, kube, until  # noqa: E402

LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/luascale"
which = sys.argv[3] if len(sys.argv) > 3 else "drain"
H = Harness(sys.argv[1], sys.argv[2], "run_sim_fence.")
ok = H.ok

TMPL = "template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}, labels: {pool: %s}}"
DRAIN_POLICY = """local ls = require "luascale"
local P = {}
P.params = {}
function P.reconcile(cluster, params, store)
  local plan = ls.plan()
  for _, node in ipairs(cluster.nodes) do
    if node.group == "victims" then
      plan:drain(node, "the test drains every node of victims")
      plan:delete(node, "drained")
    end
  end
  return plan
end
return P
"""


def write(name, text):
    path = H.path(name)
    with open(path, "w") as f:
        f.write(text)
    return path


def start_sim(scenario):
    out = H.path("sim.log")
    kc = H.path("sim.kubeconfig")
    p = subprocess.Popen([H.luascale, "sim", "--listen", "127.0.0.1:0", "--scenario", scenario,
                          "--kubeconfig-out", kc, "--log-level", "debug"],
                         stdout=open(out, "w"), stderr=subprocess.STDOUT)
    H.procs.append(p)
    if not until(20, lambda: re.search(r"serving .* on http://127\.0\.0\.1:(\d+)", open(out).read())):
        print("not ok - luascale sim did not start:\n" + open(out).read())
        H.finish()
    port = int(re.search(r"serving .* on http://127\.0\.0\.1:(\d+)", open(out).read()).group(1))
    return {"kube": port, "kubeconfig": kc, "log": out, "proc": p}


def start_run(sim, name, config_body, policy, args=()):
    cfg = write(name + ".yaml",
                "cluster: {kubeconfig: %s, context: luascale-sim, write_qps: 0.5, write_burst: 1}\n"
                "policy: {path: %s}\n"
                "intervals: {reconcile: 1s, batch_idle: 200ms, batch_max: 1s}\n"
                # the drained pods select the drained group: they are
                # evicted into Pending on purpose
                "safety: {max_scale_down_per_round: 5, evicted_pods_must_fit: false}\n"
                "leader_election: {enabled: true, lease_duration: 6s, renew_deadline: 4s, retry_period: 1s}\n"
                % (sim["kubeconfig"], policy) + config_body)
    log = H.path(name + "-run.log")
    env = {"PATH": "/usr/bin:/bin", "HOME": H.tmp, "LUASCALE_SERVER_LISTEN": "127.0.0.1:0",
           "POD_NAME": "luascale-" + name}
    p = subprocess.Popen([H.luascale, "run", "--config", cfg] + list(args), env=env,
                         stdout=open(log, "w"), stderr=subprocess.STDOUT)
    H.procs.append(p)
    return {"proc": p, "log": log, "pod": "luascale-" + name}


def holder(sim):
    try:
        return kube(sim, LEASE)["spec"].get("holderIdentity", "")
    except Exception:
        return ""


def writes_by(sim, run):
    """The simulator's record of the writes run's client made (the Lease's
    own client has the default User-Agent: its renewals are not counted)."""
    pat = re.compile(r"sim apiserver: (POST|PUT|PATCH|DELETE) (\S+) -> \d+.* by luascale/\S+ \(%s_"
                     % re.escape(run["pod"]))
    return [m.group(1) + " " + m.group(2) for m in pat.finditer(open(sim["log"]).read())]


def handover(sim, a, b, busy, what):
    """Waits until A leads and is busy (busy() true), pauses A until B
    holds the Lease, resumes A; returns A's writes counted at takeover."""
    ok(until(30, lambda: holder(sim).startswith(a["pod"] + "_")), "replica a takes the Lease",
       a["log"], b["log"])
    ok(until(60, busy), "replica a is %s" % what, a["log"], sim["log"])
    a["proc"].send_signal(signal.SIGSTOP)
    took = until(30, lambda: holder(sim).startswith(b["pod"] + "_"))
    before = writes_by(sim, a)  # a is stopped: nothing of it can arrive now
    ok(took, "replica b takes the Lease while a is paused", b["log"])
    a["proc"].send_signal(signal.SIGCONT)
    return before


if which == "drain":
    scen = write("drain.yaml", """seed: 5
duration: 2h
cloud: {boot_delay: 1s, boot_jitter: 0s, launch_latency: 100ms, shutdown_delay: 500ms}
cluster: {register_delay: 300ms, scheduler_interval: 200ms}
node_groups:
  - {name: keep, min: 1, max: 1, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}, labels: {pool: keep}}}
  - {name: victims, min: 0, max: 1, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}, labels: {pool: victim}}}
initial_nodes: [{group: keep, count: 1}, {group: victims, count: 1}]
workloads:
  - {name: app, controller: replicaset, count: 10, requests: {cpu: 100m, memory: 64Mi}, node_selector: {pool: victim}, grace: 0s}
""")
    sim = start_sim(scen)
    policy = write("drain.lua", DRAIN_POLICY)
    body = ("node_groups:\n"
            "  - {name: keep, min: 1, max: 1, %s}\n"
            "  - {name: victims, min: 0, max: 1, %s}\n" % (TMPL % "keep", TMPL % "victim") +
            "provider: {kind: sim}\n")
    a = start_run(sim, "a", body, policy)
    ok(until(30, lambda: holder(sim).startswith(a["pod"] + "_")), "replica a leads first", a["log"])
    b = start_run(sim, "b", body, policy)

    def evicting():
        return len([w for w in writes_by(sim, a) if w.endswith("/eviction")]) >= 2

    before = handover(sim, a, b, evicting, "evicting the node's pods")
    ok(until(60, lambda: re.search(r"nodes? .*victims.* deleted|delete .*victims.*done|deleted node",
                                    open(b["log"]).read()) or
             not [n for n in kube(sim, "/api/v1/nodes")["items"]
                  if n["metadata"].get("labels", {}).get("pool") == "victim"]),
       "replica b finishes the drain and the node goes", b["log"], sim["log"])
    # a had 20 s after its resume to write; every write of a is in the record
    after = writes_by(sim, a)
    extra = after[len(before):]
    ok(len(before) >= 2, "replica a evicted before its pause (%d writes)" % len(before))
    ok(not extra, "the deposed leader sent no write after the takeover (%d: %s)"
       % (len(extra), ", ".join(extra[:8])), a["log"])
    ok(re.search(r"not sent|not leading any more|stopped leading", open(a["log"]).read()),
       "replica a says it stopped", a["log"])
elif which == "launch":
    scen = write("launch.yaml", """seed: 5
duration: 2h
cloud: {boot_delay: 2s, boot_jitter: 0s, launch_latency: 100ms, shutdown_delay: 500ms}
cluster: {register_delay: 300ms, scheduler_interval: 200ms}
node_groups:
  - {name: one, min: 0, max: 3, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}, labels: {pool: one}}}
  - {name: two, min: 0, max: 3, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}, labels: {pool: two}}}
workloads:
  - {name: p1, at: 3s, count: 1, requests: {cpu: 3, memory: 1Gi}, node_selector: {pool: one}}
  - {name: p2, at: 3s, count: 1, requests: {cpu: 3, memory: 1Gi}, node_selector: {pool: two}}
""")
    sim = start_sim(scen)
    body = ("node_groups:\n"
            "  - {name: one, min: 0, max: 3, %s}\n"
            "  - {name: two, min: 0, max: 3, %s}\n" % (TMPL % "one", TMPL % "two") +
            "provider: {kind: sim, qps: 0.034, burst: 1}\n")
    policy = os.path.join(H.src, "policies/default.lua")
    a = start_run(sim, "a", body, policy)
    ok(until(30, lambda: holder(sim).startswith(a["pod"] + "_")), "replica a leads first", a["log"])
    b = start_run(sim, "b", body, policy)

    def launches(run):
        return [w for w in writes_by(sim, run) if "/sim.luascale.io/" in w and w.startswith("POST")]

    def one_launched_one_waiting():
        return len(launches(a)) == 1 and re.search(r"scale_up \w+ \+1", open(a["log"]).read())

    before = handover(sim, a, b, one_launched_one_waiting, "launching, its second launch waiting")
    before_launches = [w for w in before if "/sim.luascale.io/" in w and w.startswith("POST")]

    def both_running():
        pods = kube(sim, "/api/v1/pods")["items"]
        return len(pods) >= 2 and all(p["status"].get("phase") == "Running" for p in pods)

    ok(until(90, both_running), "both pods run (replica b launched what was missing)", b["log"], sim["log"])

    def a_launches_over():
        return len(re.findall(r"scale_up \w+ \+\d+ (done in|failed after|ended after|not started)",
                              open(a["log"]).read())) >= 2

    # a's second launch had its token reserved 30 s after its first: wait
    # until a says how it ended, so a launch it made would be in the record
    ok(until(60, a_launches_over), "replica a's waiting launch ended", a["log"])
    extra = launches(a)[len(before_launches):]
    ok(not extra, "the deposed leader's waiting launch never reached the cloud (%s)" % ", ".join(extra),
       a["log"])
    groups = kube(sim, "/apis/sim.luascale.io/v1/groups")["items"]
    counts = {g["name"]: len([i for i in g.get("instances", []) if i["state"] != "gone"]) for g in groups}
    ok(counts.get("one") == 1 and counts.get("two") == 1,
       "one instance per group, none launched twice (%s)" % counts, sim["log"])
elif which == "dryrun":
    scen = write("dryrun.yaml", """seed: 5
duration: 2h
cloud: {boot_delay: 1s, boot_jitter: 0s, launch_latency: 100ms, shutdown_delay: 500ms}
cluster: {register_delay: 300ms, scheduler_interval: 200ms}
node_groups:
  - {name: one, min: 0, max: 5, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}, labels: {pool: one}}}
workloads:
  - {name: p1, at: 1s, count: 4, requests: {cpu: 3, memory: 1Gi}, node_selector: {pool: one}}
""")
    sim = start_sim(scen)
    body = "node_groups:\n  - {name: one, min: 0, max: 5, %s}\nprovider: {kind: sim}\n" % (TMPL % "one")
    a = start_run(sim, "a", body, os.path.join(H.src, "policies/default.lua"), ["--dry-run"])

    def planned():
        return len(re.findall(r"plan: scale_up one \+4", open(a["log"]).read())) >= 3

    ok(until(60, planned), "the dry run plans the scale-up, round after round", a["log"])
    text = open(sim["log"]).read()
    writes = re.findall(r"sim apiserver: (POST|PUT|PATCH|DELETE) (\S+) -> \d+.* by luascale/", text)
    ok(not writes, "the dry run made no write (%d: %s)" % (len(writes), writes[:6]), a["log"])
    ok(not [g for g in kube(sim, "/apis/sim.luascale.io/v1/groups")["items"] if g.get("instances")],
       "no instance was launched")
    for path, what in ((LEASE, "Lease"),
                       ("/api/v1/namespaces/kube-system/configmaps/luascale-status", "status ConfigMap")):
        try:
            kube(sim, path)
            ok(False, "no %s exists" % what)
        except Exception:
            ok(True, "no %s exists" % what)
    ok(re.search(r"dry run: the status ConfigMap kube-system/luascale-status would say: .*ScaleUp",
                 open(a["log"]).read()), "the status it would write is in its log", a["log"])
    ok(re.search(r"--dry-run takes no part in leader election", open(a["log"]).read()),
       "the dry run says it takes no part in leader election", a["log"])
H.finish()
