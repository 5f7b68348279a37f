#!/usr/bin/python3
# run_sim_relations.py: `luascale run` against `luascale sim` on the
# workloads that relate pods to each other and to zones, over the API as
# a real cluster would serve them:
#   * a database StatefulSet whose replicas' volumes are in zones a, b and
#     c (PersistentVolumeClaims bound to PersistentVolumes with zonal node
#     affinity, which the simulator serves as a cluster's CSI driver would);
#   * a quorum with required hostname anti-affinity;
#   * a ReplicaSet spread over zones (DoNotSchedule).
# Only zone a has a node at the start. luascale reads the claims, volumes
# and classes through its informers and buys nodes in zones b and c; every
# pod ends up Running, each database replica in its volume's zone, no two
# quorum members on one node. The simulator answers the pods, claims and
# volumes in protobuf too (their affinity, spread and volume fields are
# described), and kubectl lists the volumes with their columns.
# Usage: run_sim_relations.py LUASCALE SOURCE_DIR
import os
import subprocess
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simharness import Harness, kube, until  # noqa: E402

H = Harness(sys.argv[1], sys.argv[2], "run_sim_relations.")
ok = H.ok

GROUPS = "".join(
    "  - {name: zone-%s, min: 0, max: 4, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}, "
    "labels: {topology.kubernetes.io/zone: %s, role: app}}}\n" % (z, z) for z in "abc")
WORKLOADS = """\
  - {name: db, namespace: platform, controller: statefulset, count: 3, at: 3s,
     requests: {cpu: 2500m, memory: 4Gi}, labels: {app: db},
     volume: {claim: data, zones: [a, b, c]}}
  - {name: quorum, namespace: platform, controller: statefulset, count: 2, at: 3s,
     requests: {cpu: 100m, memory: 128Mi}, labels: {app: quorum}, anti_affinity: hostname}
  - {name: web, namespace: shop, controller: replicaset, count: 3, at: 3s,
     requests: {cpu: 500m, memory: 512Mi}, labels: {app: web},
     topology_spread: {topology: zone, max_skew: 1}}
"""
scen = H.scenario("rel", "node_groups:\n" + GROUPS + "workloads:\n" + WORKLOADS)
# the harness's scenario starts one workers node: this one starts one in zone a
with open(scen) as f:
    text = f.read().replace("initial_nodes: [{group: workers, count: 1}]",
                            "initial_nodes: [{group: zone-a, count: 1}]")
with open(scen, "w") as f:
    f.write(text)
SIM = H.start_sim("rel", scen, [], [])
logs = [SIM["log"]]

# the world's claims, volumes and classes, as a cluster serves them
claims = until(20, lambda: [c for c in kube(SIM, "/api/v1/persistentvolumeclaims")["items"]
                            if c["metadata"]["name"].startswith("data-db-")])
ok(claims and len(claims) == 3 and all(c["status"]["phase"] == "Bound" and c["spec"].get("volumeName")
                                       for c in claims),
   "the three database claims are served, each Bound to a volume (%s)"
   % [(c["metadata"]["name"], c["status"].get("phase")) for c in claims or []], *logs)
zone_of = {}
for v in kube(SIM, "/api/v1/persistentvolumes")["items"]:
    term = v["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]
    zone_of[v["spec"]["claimRef"]["name"]] = term["values"][0] \
        if term["key"] == "topology.kubernetes.io/zone" else None
ok(sorted(zone_of.get("data-db-%d" % i) or "?" for i in (1, 2, 3)) == ["a", "b", "c"],
   "their volumes are in zones a, b and c, by their node affinity (%s)" % zone_of, *logs)
classes = kube(SIM, "/apis/storage.k8s.io/v1/storageclasses")["items"]
ok([c.get("volumeBindingMode") for c in classes] == ["WaitForFirstConsumer"],
   "their class is served (%s)" % [(c["metadata"]["name"], c.get("volumeBindingMode")) for c in classes],
   *logs)

run = H.start_run(SIM, "rel", "node_groups:\n" + GROUPS + "provider: {kind: sim, qps: 20, burst: 20}\n", {})
logs.append(run["log"])


def pods():
    return [p for p in kube(SIM, "/api/v1/pods")["items"]
            if p["metadata"]["namespace"] in ("platform", "shop")]


def all_running():
    ps = pods()
    return ps if len(ps) == 8 and all(p["status"].get("phase") == "Running" for p in ps) else None


done = until(90, all_running)
ok(done, "every pod runs: %s" % sorted((p["metadata"]["name"], p["status"].get("phase"),
                                         p["spec"].get("nodeName")) for p in pods()), *logs)
nodes = {n["metadata"]["name"]: n["metadata"]["labels"].get("topology.kubernetes.io/zone")
         for n in kube(SIM, "/api/v1/nodes")["items"]}
placed = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in (done or [])}
wrong = ["%s on %s (zone %s), its volume in %s" % (n, placed.get(n), nodes.get(placed.get(n)),
                                                    zone_of.get("data-" + n))
         for n in ("db-1", "db-2", "db-3") if nodes.get(placed.get(n)) != zone_of.get("data-" + n)]
ok(done and not wrong, "each database replica runs in its volume's zone (%s)" % "; ".join(wrong), *logs)
ok(done and placed.get("quorum-1") != placed.get("quorum-2"),
   "the quorum's two members are on two nodes (%s, %s)" % (placed.get("quorum-1"), placed.get("quorum-2")),
   *logs)
# (the web replicas arrive while only zone a has a node: the scheduler
# counts only the zones of nodes that exist, so all may go there)
spec = {p["metadata"]["name"]: p["spec"] for p in (done or [])}
ok(done and spec["web-1"].get("topologySpreadConstraints", [{}])[0].get("topologyKey") ==
   "topology.kubernetes.io/zone" and
   spec["quorum-1"].get("affinity", {}).get("podAntiAffinity") and
   spec["db-1"].get("volumes", [{}])[0].get("persistentVolumeClaim", {}).get("claimName") == "data-db-1",
   "the pods are served with their spread, anti-affinity and claim (%s)"
   % {n: spec[n] for n in ("web-1", "quorum-1", "db-1") if n in spec}, *logs)
missing = [line.strip() for line in open(run["log"])
           if "not modelled" in line or "not found" in line and ("PersistentVolume" in line or "volume" in line)]
ok(not missing, "luascale found every claim and volume it needed (%s)" % missing[:3], *logs)

# protobuf, as Go clients ask for it
for path in ("/api/v1/namespaces/platform/pods", "/api/v1/persistentvolumes",
             "/api/v1/persistentvolumeclaims"):
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (SIM["kube"], path),
                                 headers={"Accept": "application/vnd.kubernetes.protobuf"})
    with urllib.request.urlopen(req, timeout=10) as r:
        body, ctype = r.read(), r.headers.get("Content-Type")
    ok(ctype == "application/vnd.kubernetes.protobuf" and body[:4] == b"k8s\x00",
       "%s is answered in protobuf (%s, %d bytes)" % (path, ctype, len(body)))

env = dict(os.environ, KUBECONFIG=SIM["kubeconfig"])
out = subprocess.run(["kubectl", "get", "pv", "--no-headers"], capture_output=True, text=True, env=env)
rows = [line.split() for line in out.stdout.splitlines()]
ok(out.returncode == 0 and len(rows) == 3 and all(r[1] == "1Gi" and r[2] == "RWO" and r[4] == "Bound"
                                                  and r[5].startswith("platform/data-db-") for r in rows),
   "kubectl get pv shows capacity, access modes, status and claim (%s%s)"
   % (out.stdout.strip().replace("\n", "; "), out.stderr.strip()))

H.finish()
