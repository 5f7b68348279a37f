#!/usr/bin/env python3
"""Scale-up and scale-down outcomes as data, run through `luascale decide`.

Each file in the directory given holds {"source": ..., "cases": [...]}; a
case describes node groups, nodes and pods in a short form (expanded here
into the Kubernetes objects `kubectl get -o json` prints), runs every
policy it names once, and compares what the plan does:

  "params": {"default.lua": {"name": value}}  policy params for this case
  "expect": {"scale_up": {"group": n, ...}}   exactly these scale-ups
            {"removable": {"node": true|false}}  the policy's verdict per node
            {"log": "text"}                    a line of the plan's log contains it

Usage: decide_cases.py LUASCALE SOURCE_DIR CASES.json [CASES.json ...]
"""
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
    container = {"name": "c", "image": "x",
                 "resources": {"requests": {"cpu": str(p.get("cpu", "100m")),
                                            "memory": str(p.get("memory", "128Mi"))}}}
    if "hostPort" in p:
        container["ports"] = [{"containerPort": p["hostPort"], "hostPort": p["hostPort"],
                               "protocol": p.get("protocol", "TCP")}]
    spec = {"containers": [container]}
    spec.update(copy.deepcopy(p.get("spec", {})))
    obj = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": p["name"], "namespace": ns, "uid": "uid-" + ns + "-" + p["name"],
                     "labels": p.get("labels", {}), "creationTimestamp": CREATED,
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": kind, "name": oname,
                                          "controller": True, "uid": "o-" + oname}]},
        "spec": spec,
        "status": {"phase": "Pending"},
    }
    if p.get("node"):
        obj["spec"]["nodeName"] = p["node"]
        obj["status"]["phase"] = "Running"
        obj["status"]["conditions"] = [{"type": "PodScheduled", "status": "True"}]
    else:
        obj["status"]["conditions"] = [{"type": "PodScheduled", "status": "False",
                                        "reason": "Unschedulable",
                                        "message": "0/1 nodes are available"}]
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
                  "    price_per_hour: %s" % g.get("price", 0.1),
                  "    template:", "      allocatable:",
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
    lines += ["safety:", "  max_nodes_total: 0", "  max_scale_down_per_round: 10"]
    return "\n".join(lines) + "\n"


def run_case(luascale, src, case, tmp):
    objs = [node_obj(n) for n in case.get("nodes", [])]
    objs += [pod_obj(p) for p in expand_pods(case.get("pods", []))]
    objs += case.get("objects", [])
    state = os.path.join(tmp, "state.json")
    with open(state, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": objs}, f)
    failures = []
    for policy in case.get("policies", ["default.lua", "binpack.lua"]):
        cfg = os.path.join(tmp, "config.yaml")
        with open(cfg, "w") as f:
            f.write(config_yaml(case, policy, src))
        r = subprocess.run([luascale, "decide", "--config", cfg, "--state", state,
                            "--output", "json", "--now", NOW],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            failures.append("%s: decide exited %d: %s" % (policy, r.returncode, r.stderr.strip()))
            continue
        out = json.loads(r.stdout)
        exp = case["expect"]
        ups = {}
        for a in out["actions"]:
            if a["type"] == "scale_up":
                ups[a["group"]] = ups.get(a["group"], 0) + a["count"]
        if "scale_up" in exp and ups != exp["scale_up"]:
            failures.append("%s: scale-ups %s, want %s (log: %s)" %
                            (policy, ups, exp["scale_up"], out.get("log")))
        for name, want in exp.get("removable", {}).items():
            got = [n for n in out["nodes"] if n["name"] == name]
            if not got:
                failures.append("%s: node %s not in the output" % (policy, name))
            elif got[0]["removable"] != want:
                failures.append("%s: node %s removable=%s, want %s (%s)" %
                                (policy, name, got[0]["removable"], want, got[0].get("why")))
        for text in ([exp["log"]] if "log" in exp else []):
            if not any(text in line for line in out.get("log", [])):
                failures.append("%s: no log line contains %r (log: %s)" %
                                (policy, text, out.get("log")))
    return failures


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    luascale, src, files = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), sys.argv[3:]
    n_cases = n_failed = 0
    for path in files:
        with open(path) as f:
            doc = json.load(f)
        for case in doc["cases"]:
            if "name" not in case or "expect" not in case or "groups" not in case:
                print("MALFORMED case in %s: %s" % (path, json.dumps(case)[:200]))
                return 1
            n_cases += 1
            with tempfile.TemporaryDirectory() as tmp:
                fails = run_case(luascale, src, case, tmp)
            for msg in fails:
                print("FAIL %s: %s" % (case["name"], msg))
            n_failed += bool(fails)
    print("%d cases, %d failed" % (n_cases, n_failed))
    return 1 if n_failed or n_cases == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
