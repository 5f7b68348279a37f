#!/usr/bin/env python3
"""Scale-up and scale-down outcomes as data, run through `luascale decide`.

Each file in the directory given holds {"source": ..., "cases": [...]}; a
case describes node groups, nodes and pods in a short form (expanded here
into the Kubernetes objects `kubectl get -o json` prints), runs every
policy it names once, and compares what the plan does:

  "params": {"default.lua": {"name": value}}  policy params for this case
  "safety": {"max_nodes_total": n}            the config's safety section (else no cap)
  "expect": {"scale_up": {"group": n, ...}}   exactly these scale-ups
            {"scale_up_total": n}              n new nodes over all groups, wherever
            {"scale_up_counts": [n, ...]}      the groups grown, by count, in any order
                                               (a spread's "pods per zone" when each
                                               pod needs a node of its own)
            {"removable": {"node": true|false}}  the policy's verdict per node
            {"rejected": {"node": "text"}}     an action on the node was refused by the
                                               safety checks, its why containing text
            {"log": "text"}                    a line of the plan's log contains it
  "from", "note"                              for the reader: where the case comes from
                                               (repository@commit:file) and how its setup
                                               was translated
  "known_gap": "why"                          luascale is believed to differ from the
                                               source here: the case is run and what
                                               luascale did is printed as KNOWN GAP,
                                               but it does not fail the run (an
                                               expectation it now meets is reported
                                               as FIXED, so the note can go)

Groups: name, min, max, price, cpu, memory, pods, extended, labels, taints,
target (the size the cloud converges to: target - registered nodes are on
their way). Nodes: name, group, cpu, memory, pods, extended, labels,
taints, ready, unschedulable, created, annotations. Pods: name, ns, replicas
(names name-0..), nodes (bound, by replica), owner ("Kind/name"), labels,
annotations, cpu and
memory (null: no request), extended (requested and limited), hostPort,
protocol, nodeSelector, tolerations, phase, terminating, unschedulable
(false: pending without the scheduler's Unschedulable condition, not yet
tried), and spec (merged over the generated pod spec).

Usage: decide_cases.py LUASCALE SOURCE_DIR CASES.json [CASES.json ...]
"""
import concurrent.futures
import copy
import json
import os
import subprocess
import sys
import tempfile

NOW = "2026-06-01T12:00:00Z"
CREATED = "2026-06-01T10:00:00Z"


def node_obj(n):
    labels = {"kubernetes.io/hostname": n["name"]}
    labels.update(n.get("labels", {}))
    if n.get("group"):
        labels["luascale.io/node-group"] = n["group"]
    alloc = {"cpu": str(n.get("cpu", "4")), "memory": str(n.get("memory", "16Gi")),
             "pods": str(n.get("pods", 110))}
    alloc.update(n.get("extended", {}))
    ready = n.get("ready", True)
    obj = {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": n["name"], "labels": labels,
                     "annotations": dict(n.get("annotations", {})),
                     "creationTimestamp": n.get("created", CREATED)},
        "spec": {"taints": n.get("taints", [])},
        "status": {"allocatable": alloc, "capacity": alloc,
                   "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }
    if n.get("unschedulable"):
        obj["spec"]["unschedulable"] = True
    return obj


def pod_obj(p):
    ns = p.get("ns", "default")
    owner = p.get("owner", "ReplicaSet/" + p["name"].rsplit("-", 1)[0])
    kind, oname = owner.split("/", 1)
    requests = {}
    for res, default in (("cpu", "100m"), ("memory", "128Mi")):
        if p.get(res, default) is not None:
            requests[res] = str(p.get(res, default))
    resources = {"requests": requests}
    if p.get("extended"):
        requests.update({k: str(v) for k, v in p["extended"].items()})
        resources["limits"] = {k: str(v) for k, v in p["extended"].items()}
    container = {"name": "c", "image": "x", "resources": resources}
    if "hostPort" in p:
        container["ports"] = [{"containerPort": p["hostPort"], "hostPort": p["hostPort"],
                               "protocol": p.get("protocol", "TCP")}]
    spec = {"containers": [container]}
    if "nodeSelector" in p:
        spec["nodeSelector"] = dict(p["nodeSelector"])
    if "tolerations" in p:
        spec["tolerations"] = copy.deepcopy(p["tolerations"])
    spec.update(copy.deepcopy(p.get("spec", {})))
    obj = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": p["name"], "namespace": ns, "uid": "uid-" + ns + "-" + p["name"],
                     "labels": p.get("labels", {}), "creationTimestamp": CREATED,
                     "annotations": dict(p.get("annotations", {})),
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": kind, "name": oname,
                                          "controller": True, "uid": "o-" + oname}]},
        "spec": spec,
        "status": {"phase": "Pending"},
    }
    if p.get("node"):
        obj["spec"]["nodeName"] = p["node"]
        obj["status"]["phase"] = "Running"
        obj["status"]["conditions"] = [{"type": "PodScheduled", "status": "True"}]
    elif p.get("unschedulable", True):
        obj["status"]["conditions"] = [{"type": "PodScheduled", "status": "False",
                                        "reason": "Unschedulable",
                                        "message": "0/1 nodes are available"}]
    if "phase" in p:
        obj["status"]["phase"] = p["phase"]
    if p.get("terminating"):
        obj["metadata"]["deletionTimestamp"] = NOW
    return obj


def expand_pods(pods):
    out = []
    for p in pods:
        for i in range(p.get("replicas", 0)) if "replicas" in p else [None]:
            q = dict(p)
            if i is not None:
                q["name"] = "%s-%d" % (p["name"], i)
                if "nodes" in p:
                    q["node"] = p["nodes"][i] if i < len(p["nodes"]) else None
            out.append(q)
    return out


def config_yaml(case, policy, src):
    lines = ["node_groups:"]
    for g in case["groups"]:
        lines += ["  - name: %s" % g["name"], "    min: %d" % g.get("min", 0),
                  "    max: %d" % g.get("max", 10),
                  "    price_per_hour: %s" % g.get("price", 0.1)]
        if "target" in g:
            lines.append("    target: %d" % g["target"])
        lines += ["    template:", "      allocatable:",
                  "        cpu: \"%s\"" % g.get("cpu", "4"),
                  "        memory: %s" % g.get("memory", "16Gi"),
                  "        pods: %d" % g.get("pods", 110)]
        for k, v in g.get("extended", {}).items():
            lines.append("        %s: \"%s\"" % (k, v))
        if g.get("labels"):
            lines.append("      labels:")
            for k, v in g["labels"].items():
                lines.append("        %s: \"%s\"" % (k, v))
        if g.get("taints"):
            lines.append("      taints:")
            for t in g["taints"]:
                lines.append("        - {key: %s, value: \"%s\", effect: %s}" %
                             (t["key"], t.get("value", ""), t["effect"]))
    params = {"default.lua": ["unneeded_for: \"0s\"", "scale_down_delay_after_add: \"0s\""],
              "binpack.lua": ["min_node_age: \"0s\""]}.get(policy, [])
    params += ["%s: %s" % (k, json.dumps(v)) for k, v in case.get("params", {}).get(policy, {}).items()]
    lines += ["policy:", "  path: %s" % os.path.join(src, "policies", policy), "  params:"]
    lines += ["    " + x for x in params] or ["    {}"]
    lines += ["safety:", "  max_nodes_total: %d" % case.get("safety", {}).get("max_nodes_total", 0),
              "  max_scale_down_per_round: 10"]
    return "\n".join(lines) + "\n"


def run_case(luascale, src, case, tmp):
    objs = [node_obj(n) for n in case.get("nodes", [])]
    objs += [pod_obj(p) for p in expand_pods(case.get("pods", []))]
    objs += case.get("objects", [])
    state = os.path.join(tmp, "state.json")
    with open(state, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": objs}, f)
    failures, did, broken = [], [], []
    for policy in case.get("policies", ["default.lua", "binpack.lua"]):
        cfg = os.path.join(tmp, "config.yaml")
        with open(cfg, "w") as f:
            f.write(config_yaml(case, policy, src))
        r = subprocess.run([luascale, "decide", "--config", cfg, "--state", state,
                            "--output", "json", "--now", NOW],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            broken.append("%s: decide exited %d: %s" % (policy, r.returncode, r.stderr.strip()))
            continue
        out = json.loads(r.stdout)
        exp = case["expect"]
        ups = {}
        for a in out["actions"]:
            if a["type"] == "scale_up":
                ups[a["group"]] = ups.get(a["group"], 0) + a["count"]
        did.append("%s: scale-ups %s" % (policy, ups))
        if "scale_up" in exp and ups != exp["scale_up"]:
            failures.append("%s: scale-ups %s, want %s (log: %s)" %
                            (policy, ups, exp["scale_up"], out.get("log")))
        if "scale_up_total" in exp and sum(ups.values()) != exp["scale_up_total"]:
            failures.append("%s: scale-ups %s, want %d new nodes in all (log: %s)" %
                            (policy, ups, exp["scale_up_total"], out.get("log")))
        counts = sorted((n for n in ups.values() if n), reverse=True)
        if "scale_up_counts" in exp and counts != sorted(exp["scale_up_counts"], reverse=True):
            failures.append("%s: scale-ups %s, want groups grown by %s in any order (log: %s)" %
                            (policy, ups, exp["scale_up_counts"], out.get("log")))
        for name, want in exp.get("removable", {}).items():
            got = [n for n in out["nodes"] if n["name"] == name]
            if not got:
                failures.append("%s: node %s not in the output" % (policy, name))
            elif got[0]["removable"] != want:
                failures.append("%s: node %s removable=%s, want %s (%s)" %
                                (policy, name, got[0]["removable"], want, got[0].get("why")))
        for name, text in exp.get("rejected", {}).items():
            whys = [r["why"] for r in out["rejected"] if r["action"].get("node") == name]
            if not any(text in w for w in whys):
                failures.append("%s: no action on %s was rejected with %r (rejected: %s)" %
                                (policy, name, text, whys))
        for text in ([exp["log"]] if "log" in exp else []):
            if not any(text in line for line in out.get("log", [])):
                failures.append("%s: no log line contains %r (log: %s)" %
                                (policy, text, out.get("log")))
    return failures, did, broken


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    luascale, src, files = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), sys.argv[3:]
    n_cases = n_failed = n_gaps = n_fixed = 0
    cases = []
    for path in files:
        with open(path) as f:
            doc = json.load(f)
        names = set()
        for case in doc["cases"]:
            if "name" not in case or "expect" not in case or "groups" not in case:
                print("MALFORMED case in %s: %s" % (path, json.dumps(case)[:200]))
                return 1
            if case["name"] in names:
                print("MALFORMED %s: two cases named %r" % (path, case["name"]))
                return 1
            names.add(case["name"])
            cases.append(case)

    def one(case):
        with tempfile.TemporaryDirectory() as tmp:
            return run_case(luascale, src, case, tmp)

    # each case is its own `luascale decide` processes: one case per core at
    # a time, the verdicts printed in the files' order
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        results = pool.map(one, cases)
        for case, (fails, did, broken) in zip(cases, results):
            n_cases += 1
            gap = case.get("known_gap")
            if broken:  # a known gap is about the plan, not a run that breaks
                for msg in broken + fails:
                    print("FAIL %s: %s" % (case["name"], msg))
                n_failed += 1
                continue
            if gap and fails:
                n_gaps += 1
                print("KNOWN GAP %s: %s\n  luascale did: %s\n  %s" %
                      (case["name"], gap, "; ".join(did), "\n  ".join(fails)))
                continue
            if gap:
                n_fixed += 1
                print("FIXED %s: meets the source's expectation now (%s); drop its known_gap" %
                      (case["name"], "; ".join(did)))
                continue
            for msg in fails:
                print("FAIL %s: %s" % (case["name"], msg))
            n_failed += bool(fails)
    print("%d cases, %d failed, %d known gaps, %d known gaps fixed" %
          (n_cases, n_failed, n_gaps, n_fixed))
    return 1 if n_failed or n_cases == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
