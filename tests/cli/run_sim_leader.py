#!/usr/bin/python3
# run_sim_leader.py: two `luascale run` replicas with leader election (at
# client-go's default durations: lease 15 s, renew deadline 10 s, retry
# 2 s) against one `luascale sim`. Times are the Lease's own (acquireTime,
# renewTime, written by the replicas) against the moment the test acted.
#   handover: exactly one replica acts (every pod gets one node: the sim's
#     count of registered nodes and cloud instances has no launch twice),
#     the standby's caches stay synced (/readyz) and it makes no cloud call;
#     SIGTERM hands the Lease over in under 3 s; kill -9 of the leader hands
#     it over within lease duration + retry period (+1 s for the standby's
#     own request and polling);
#   outage: the API server goes away (the sim's down fault); the leader
#     stops leading (its luascale_leader gauge drops to 0) before the
#     Lease, last renewed at R, could be taken by anyone (R + 15 s), and
#     after the outage exactly one replica leads again.
# Usage: run_sim_leader.py LUASCALE SOURCE_DIR handover|outage
import datetime
import json
import os
import re
import signal
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simharness import Harness, kube, log_has, pod, until  # noqa: E402

LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/luascale"
LEASE_S, RETRY_S = 15, 2

which = sys.argv[3] if len(sys.argv) > 3 else "handover"
H = Harness(sys.argv[1], sys.argv[2], "run_sim_leader.")
ok = H.ok

GROUP = ("  - {name: workers, min: 1, max: 10, "
         "template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}, labels: {pool: workers}}}\n")
CONFIG = ("node_groups:\n" + GROUP + "provider: {kind: sim}\n"
          "leader_election: {enabled: true}\n")


def micro(ts):
    """A Lease MicroTime as unix seconds."""
    d = datetime.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ")
    return d.replace(tzinfo=datetime.timezone.utc).timestamp()


def lease(sim):
    try:
        return kube(sim, LEASE)["spec"]
    except Exception:
        return None


def holder(sim):
    s = lease(sim)
    return (s or {}).get("holderIdentity", "")


def port_of(run):
    m = until(20, lambda: log_has(run["log"], r"serving /metrics.* \(port (\d+)\)"))
    return int(m.group(1)) if m else None


def get(port, path):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except Exception:
        return None, ""


def gauge(port, name):
    code, text = get(port, "/metrics")
    m = re.search(r"^%s (\S+)$" % name, text, re.M) if code == 200 else None
    return float(m.group(1)) if m else None


def start(sim, name, pod_name):
    r = H.start_run(sim, name, CONFIG, {"POD_NAME": pod_name})
    r["port"] = port_of(r)
    r["pod"] = pod_name
    return r


def leads(run):
    return lambda: (holder(SIM) or "").startswith(run["pod"] + "_")


def running(prefix, n):
    def f():
        pods = [p for p in kube(SIM, "/api/v1/pods")["items"] if p["metadata"]["name"].startswith(prefix)]
        return len(pods) == n and all(p["status"].get("phase") == "Running" for p in pods)
    return f


def instances():
    g = kube(SIM, "/apis/sim.luascale.io/v1/groups")["items"]
    return sum(len(x.get("instances", [])) for x in g)


if which == "handover":
    scen = H.scenario("handover", "node_groups:\n" + GROUP + "workloads:\n" +
                      pod("w1", "6s", 2, "workers") + pod("w2", "22s", 2, "workers") +
                      pod("w3", "40s", 2, "workers"))
    SIM = H.start_sim("handover", scen, [], [])
    a = start(SIM, "a", "luascale-a")
    b = start(SIM, "b", "luascale-b")
    ok(a["port"] and b["port"], "both replicas serve /metrics", a["log"], b["log"])
    ok(until(15, leads(a)), "the first replica takes the Lease", a["log"], b["log"])
    ok(until(10, lambda: get(b["port"], "/readyz")[0] == 200 and "standby" in get(b["port"], "/readyz")[1]),
       "the standby is ready: caches synced, the Lease read", b["log"])
    ok(gauge(a["port"], "luascale_leader") == 1 and gauge(b["port"], "luascale_leader") == 0,
       "luascale_leader: 1 on the leader, 0 on the standby")
    ok(until(40, running("w1-", 2)), "the leader scales up for the first pods", a["log"])
    ok(not log_has(b["log"], r"asking the cloud"), "the standby made no cloud call", b["log"])

    # SIGTERM: the Lease is released and taken at once
    t_term = time.time()
    a["proc"].send_signal(signal.SIGTERM)
    ok(until(5, leads(b)), "after SIGTERM the standby leads", a["log"], b["log"])
    spec = lease(SIM) or {}
    took = micro(spec.get("acquireTime", "1970-01-01T00:00:00.000000Z")) - t_term
    ok(took < 3, "SIGTERM hands over in under 3 s (%.2f s)" % took, a["log"], b["log"])
    ok(a["proc"].wait(25) == 0 and log_has(a["log"], r"released the Lease"),
       "the old leader released the Lease and exited 0", a["log"])
    ok(spec.get("leaseTransitions") == 1, "leaseTransitions counts the handover (%s)" % spec.get("leaseTransitions"))

    a2 = start(SIM, "a2", "luascale-a")
    ok(until(10, lambda: get(a2["port"], "/readyz")[0] == 200), "the restarted replica is a ready standby", a2["log"])
    ok(until(40, running("w2-", 2)), "the new leader scales up for the next pods", b["log"])
    code, text = get(b["port"], "/metrics")
    lists = re.findall(r'^luascale_cache_lists_total\{resource="(\w+)"\} (\S+)$', text, re.M)
    ok(sorted(r for r, _ in lists) == sorted(["nodes", "pods", "poddisruptionbudgets", "namespaces",
                                             "persistentvolumeclaims", "persistentvolumes",
                                             "storageclasses", "daemonsets"]) and
       all(float(v) == 1 for _, v in lists),
       "the new leader acted on the caches it kept as standby: one list each, no relist (%s)" % lists)

    # kill -9: nothing is released; the standby waits out the lease
    ok(until(5, lambda: (lease(SIM) or {}).get("renewTime")), "the leader renews")
    t_kill = time.time()
    b["proc"].send_signal(signal.SIGKILL)
    b["proc"].wait(10)
    ok(until(LEASE_S + RETRY_S + 6, leads(a2)), "after kill -9 the standby leads", a2["log"])
    spec = lease(SIM) or {}
    took = micro(spec.get("acquireTime", "1970-01-01T00:00:00.000000Z")) - t_kill
    ok(took <= LEASE_S + RETRY_S + 1,
       "kill -9 hands over within lease duration + retry period (%.2f s)" % took, a2["log"])
    ok(took >= LEASE_S - RETRY_S - 1, "... and not before the lease could expire (%.2f s)" % took, a2["log"])
    ok(until(40, running("w3-", 2)), "the third leader scales up for the last pods", a2["log"])

    # no launch doubled: one node per pod (6 pods, the first fits the initial node)
    st = kube(SIM, "/apis/sim.luascale.io/v1/stats")
    ok(st["nodesRegistered"] == 6, "exactly one node per pod: 6 registered (%d)" % st["nodesRegistered"],
       a["log"], b["log"], a2["log"])
    ok(instances() == 6, "the cloud holds 6 instances (%d)" % instances())
    H.finish()

else:  # outage
    scen = H.scenario("outage", "node_groups:\n" + GROUP + "workloads:\n" + pod("w1", "4s", 2, "workers"))
    SIM = H.start_sim("outage", scen, [], [])
    a = start(SIM, "a", "luascale-a")
    b = start(SIM, "b", "luascale-b")
    ok(until(15, leads(a)), "the first replica takes the Lease", a["log"], b["log"])
    ok(until(30, running("w1-", 2)), "it scales up", a["log"])
    ok(until(5, lambda: gauge(a["port"], "luascale_leader") == 1), "luascale_leader is 1 on the leader")
    spec = lease(SIM)
    renewed = micro(spec["renewTime"])
    req = urllib.request.Request("http://127.0.0.1:%d/apis/sim.luascale.io/v1/faults" % SIM["kube"],
                                 data=json.dumps({"faults": ["down=16s@300ms"]}).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    urllib.request.urlopen(req, timeout=5).read()
    down = until(LEASE_S + 2, lambda: gauge(a["port"], "luascale_leader") == 0)
    t_down = time.time()
    ok(down, "the leader stops leading while the API server is away", a["log"])
    ok(t_down < renewed + LEASE_S,
       "... %.2f s after its last renewal, before the Lease could be taken (%d s)" % (t_down - renewed, LEASE_S),
       a["log"])
    ok(log_has(a["log"], r"stopped leading .*renew deadline"), "it says why, and goes back to standby", a["log"])
    ok(gauge(b["port"], "luascale_leader") == 0, "the standby did not lead meanwhile", b["log"])
    ok(until(40, lambda: holder(SIM) and (gauge(a["port"], "luascale_leader") or 0) +
             (gauge(b["port"], "luascale_leader") or 0) == 1),
       "after the outage exactly one replica leads", a["log"], b["log"])
    both = [gauge(r["port"], "luascale_leader") for r in (a, b)]
    ok(both.count(1) == 1, "and only one (%s)" % both)
    H.finish()
