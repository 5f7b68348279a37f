#!/usr/bin/python3
# deploy_manifest.py: the manifests operators apply are the ones tested.
# Renders deploy/base with `kubectl kustomize` (fails without kubectl or
# python3-yaml), checks the Deployment's security, probes, annotations,
# priority, RBAC (no create in kube-system: the Lease and the status
# ConfigMap are in the manifests), PDB, Service and the NetworkPolicy of
# the metrics port, then runs THE DEPLOYMENT'S OWN command,
# arguments, environment (POD_NAME from the downward API resolved to a fake
# pod name) and mounted files (the rendered ConfigMap written out in the
# kubelet's `..data` layout) against `luascale sim`. What the test changes,
# and only that:
#   * the mount root: /etc/luascale becomes TMP/etc/luascale (in the
#     arguments; the config's policy path is relative, so the files are
#     byte for byte the ConfigMap's);
#   * the command's /usr/local/bin/luascale (the image's, checked against
#     the Dockerfile) is the binary under test;
#   * the cluster connection: luascale reads the service account only from
#     the fixed /var/run/secrets/... paths, so the environment adds
#     LUASCALE_CLUSTER_IN_CLUSTER=false with the simulator's kubeconfig and
#     context;
#   * the listen address: the config's :8080 (checked to be the container
#     port the probes name) becomes a free loopback port, since tests run
#     side by side.
# The simulator gets the manifests' Lease and status ConfigMap first, and
# refuses every create of a Lease or a ConfigMap, as the Role would.
# Then: it leads (the Lease kube-system/luascale holds the pod name),
# /readyz is 200 and /metrics served, logs are JSON, the status ConfigMap
# appears, a pending pod brings a scale-up; every metric the Grafana
# dashboard uses is in the live scrape; each overlay renders with its
# cloud's identity annotations and provider.
# Usage: deploy_manifest.py LUASCALE SOURCE_DIR
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simharness import Harness, kube, log_has, pod, pods_running, until  # noqa: E402

H = Harness(sys.argv[1], sys.argv[2], "deploy_manifest.")
ok = H.ok
SRC = H.src
FAKE_POD = "luascale-6d5f7c9b8-x7k2q"

try:
    import yaml
except ImportError:
    print("not ok - python3-yaml is missing under /usr/bin/python3 (scripts/setup.sh installs it)")
    H.cleanup()
    sys.exit(1)
if not shutil.which("kubectl"):
    print("not ok - kubectl is missing (scripts/setup.sh installs kubernetes-client)")
    H.cleanup()
    sys.exit(1)


def render(path):
    p = subprocess.run(["kubectl", "kustomize", os.path.join(SRC, path)], capture_output=True, timeout=60)
    if p.returncode != 0:
        return None, p.stderr.decode()
    return [d for d in yaml.safe_load_all(p.stdout) if d], ""


def one(docs, kind, name=None):
    found = [d for d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]
    return found[0] if len(found) == 1 else None


def get(port, path):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError:
        return None, ""


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# ---- the rendered base ----

docs, why = render("deploy/base")
if not ok(docs is not None, "kubectl kustomize deploy/base renders: %s" % why[:300]):
    H.finish()
kinds = sorted(d["kind"] for d in docs)
ok(kinds == sorted(["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
                    "ConfigMap", "ConfigMap", "Lease", "Deployment", "PodDisruptionBudget", "Service",
                    "NetworkPolicy"]),
   "the base holds SA, RBAC, Lease, two ConfigMaps, Deployment, PDB, Service, NetworkPolicy: %s" % kinds)
ok(all(d["metadata"].get("namespace") == "kube-system" for d in docs
       if d["kind"] not in ("ClusterRole", "ClusterRoleBinding")), "namespaced objects are in kube-system")

dep = one(docs, "Deployment", "luascale")
tpl = dep["spec"]["template"]
spec = tpl["spec"]
ctr = spec["containers"][0]
psc, csc = spec.get("securityContext", {}), ctr.get("securityContext", {})
ok(dep["spec"]["replicas"] == 2 and len(spec["containers"]) == 1, "2 replicas, one container")
ok(psc.get("runAsNonRoot") is True and psc.get("runAsUser") == 65532 and
   psc.get("seccompProfile", {}).get("type") == "RuntimeDefault",
   "pod: runAsNonRoot, runAsUser 65532, seccomp RuntimeDefault: %s" % psc)
ok(csc.get("readOnlyRootFilesystem") is True and csc.get("allowPrivilegeEscalation") is False and
   csc.get("capabilities", {}).get("drop") == ["ALL"] and csc.get("runAsNonRoot") is True,
   "container: read-only root, no privilege escalation, capabilities drop ALL: %s" % csc)
ok(spec.get("priorityClassName") == "system-cluster-critical", "priorityClassName system-cluster-critical")
ok(tpl["metadata"].get("annotations", {}).get("cluster-autoscaler.kubernetes.io/safe-to-evict") == "false",
   "the pod carries safe-to-evict: \"false\"")
ok(spec.get("serviceAccountName") == "luascale", "runs as the ServiceAccount luascale")
# luascale's shutdown lets writes finish for up to 20 s, then releases the Lease
ok(20 < spec.get("terminationGracePeriodSeconds", 30) <= 60,
   "terminationGracePeriodSeconds covers the 20 s write grace: %s" % spec.get("terminationGracePeriodSeconds"))
sel = dep["spec"]["selector"]["matchLabels"]
spread = [t for t in spec.get("topologySpreadConstraints", []) if t["topologyKey"] == "kubernetes.io/hostname"
          and t["labelSelector"]["matchLabels"] == sel]
anti = [t for t in spec.get("affinity", {}).get("podAntiAffinity", {})
        .get("requiredDuringSchedulingIgnoredDuringExecution", [])
        if t["topologyKey"] == "kubernetes.io/hostname" and t["labelSelector"]["matchLabels"] == sel]
ok(spread and anti, "the replicas are spread over nodes (topology spread and anti-affinity on the host name)")
res = ctr.get("resources", {})
ok(res.get("requests", {}).get("cpu") and res.get("requests", {}).get("memory") and
   res.get("limits", {}).get("memory"), "resources: requests and a memory limit: %s" % res)

ports = {p["name"]: p["containerPort"] for p in ctr.get("ports", [])}
live, ready = ctr.get("livenessProbe", {}).get("httpGet", {}), ctr.get("readinessProbe", {}).get("httpGet", {})
ok(live.get("path") == "/healthz" and ready.get("path") == "/readyz", "liveness /healthz, readiness /readyz")
probe_port = ports.get(live.get("port")) if isinstance(live.get("port"), str) else live.get("port")
ok(probe_port == 8080 and ready.get("port") == live.get("port") and "metrics" in ports,
   "both probes on the container port \"metrics\", 8080: %s" % ports)

env = {}
for e in ctr.get("env", []):
    if "value" in e:
        env[e["name"]] = e["value"]
    elif e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "metadata.name":
        env[e["name"]] = FAKE_POD
    else:
        ok(False, "env %s: only values and the pod name are understood by this test" % e["name"])
ok(env.get("POD_NAME") == FAKE_POD, "POD_NAME comes from the downward API (metadata.name)")

args = ctr.get("args", [])
ok(args[:3] == ["run", "--config", "/etc/luascale/config.yaml"] and
   args[args.index("--log-format") + 1] == "json" if "--log-format" in args else False,
   "args: run --config /etc/luascale/config.yaml --log-format json: %s" % args)

vols = {v["name"]: v for v in spec.get("volumes", [])}
cm_mounts = [m for m in ctr.get("volumeMounts", []) if "configMap" in vols.get(m["name"], {})]
ok(len(cm_mounts) == 1 and "subPath" not in cm_mounts[0],
   "the config is one ConfigMap mounted as a directory (no subPath: the ..data swap reaches it)")
mount = cm_mounts[0] if cm_mounts else {"mountPath": "/etc/luascale", "name": ""}
cm = one(docs, "ConfigMap", vols.get(mount["name"], {}).get("configMap", {}).get("name"))
ok(cm is not None and set(cm["data"]) == {"config.yaml", "default.lua"},
   "the mounted ConfigMap is the rendered one, with config.yaml and default.lua")
if cm is None:
    H.finish()
policy = open(os.path.join(SRC, "policies/default.lua")).read()
ok(open(os.path.join(SRC, "deploy/base/default.lua")).read() == policy and cm["data"]["default.lua"] == policy,
   "deploy/base/default.lua (and the ConfigMap's) is identical to policies/default.lua")
cfg = yaml.safe_load(cm["data"]["config.yaml"])
ok(cfg["cluster"].get("in_cluster") is True and cfg["leader_election"].get("enabled") is True,
   "the config runs in-cluster with leader election")
ok(re.fullmatch(r"[^:]*:(\d+)", cfg.get("server", {}).get("listen", ":8080")).group(1) == str(probe_port),
   "the config's server.listen port is the probes' container port")

docker = open(os.path.join(SRC, "Dockerfile")).read()
m = re.search(r'^ENTRYPOINT \["([^"]+)"\]', docker, re.M)
ok(m and ctr.get("command") == [m.group(1)], "the container's command is the image's ENTRYPOINT")
ok(re.search(r"^USER 65532(:65532)?$", docker, re.M) and
   len(re.findall(r"^FROM debian:bookworm-slim\$\{BOOKWORM_SLIM_DIGEST:\+@\$\{BOOKWORM_SLIM_DIGEST\}\}( |$)",
                  docker, re.M)) == 2 and
   re.search(r"^ARG BOOKWORM_SLIM_DIGEST=", docker, re.M) and
   len(re.findall(r"^FROM ", docker, re.M)) == 2,
   "the Dockerfile is two bookworm-slim stages, pinned by the BOOKWORM_SLIM_DIGEST argument, and runs as 65532")

cr = one(docs, "ClusterRole", "luascale")
rules = sorted((tuple(r["apiGroups"]), tuple(r["resources"]), tuple(sorted(r["verbs"]))) for r in cr["rules"])
ok(rules == sorted([(("",), ("nodes",), ("delete", "get", "list", "patch", "watch")),
                    (("",), ("pods",), ("list", "watch")),
                    (("",), ("pods/eviction",), ("create",)),
                    (("policy",), ("poddisruptionbudgets",), ("list", "watch")),
                    (("",), ("namespaces", "persistentvolumeclaims", "persistentvolumes"),
                     ("list", "watch")),
                    (("storage.k8s.io",), ("storageclasses",), ("list", "watch")),
                    (("apps",), ("daemonsets",), ("list", "watch")),
                    (("",), ("events",), ("create", "patch"))]),
   "the ClusterRole grants exactly what luascale does: %s" % rules)
role = one(docs, "Role", "luascale")
rr = sorted((tuple(r["apiGroups"]), tuple(r["resources"]), tuple(r.get("resourceNames", [])),
             tuple(sorted(r["verbs"]))) for r in role["rules"])
ok(rr == sorted([(("coordination.k8s.io",), ("leases",), ("luascale",), ("get", "update")),
                 (("",), ("configmaps",), ("luascale-status",), ("get", "update"))]),
   "the kube-system Role: get and update of its Lease and status ConfigMap by name, no create: %s" % rr)
creates = [(d["kind"], r["resources"]) for d in docs if d["kind"] in ("Role", "ClusterRole")
           for r in d["rules"] if set(r["resources"]) & {"leases", "configmaps", "*"}
           and set(r["verbs"]) & {"create", "*"}]
ok(not creates, "no Role or ClusterRole may create Leases or ConfigMaps: %s" % creates)
for kind, ref in (("ClusterRoleBinding", "ClusterRole"), ("RoleBinding", "Role")):
    b = one(docs, kind, "luascale")
    ok(b["roleRef"]["kind"] == ref and b["subjects"] == [{"kind": "ServiceAccount", "name": "luascale",
                                                          "namespace": "kube-system"}],
       "%s binds the ServiceAccount kube-system/luascale" % kind)
pdb = one(docs, "PodDisruptionBudget")
ok(pdb["spec"].get("maxUnavailable") == 1 and pdb["spec"]["selector"]["matchLabels"] == sel,
   "the PDB: maxUnavailable 1 over the Deployment's pods")
svc = one(docs, "Service")
sp = svc["spec"]["ports"][0]
ok(svc["spec"]["selector"] == sel and sp["port"] == 8080 and ports.get(sp["targetPort"]) == 8080 and
   svc["metadata"].get("annotations", {}).get("prometheus.io/scrape") == "true",
   "the metrics Service: port 8080 to the container's, with the scrape annotation")

# the objects the Role may not create are in the manifests, named as the
# config names them, with nothing for luascale to lose on a re-apply
le_cfg, st_cfg = cfg.get("leader_election", {}), cfg.get("status", {})
lease_doc = one(docs, "Lease", le_cfg.get("name", "luascale"))
status_doc = one(docs, "ConfigMap", st_cfg.get("name", "luascale-status"))
ok(lease_doc is not None and lease_doc["apiVersion"] == "coordination.k8s.io/v1" and
   lease_doc["metadata"]["namespace"] == le_cfg.get("namespace", "kube-system") and "spec" not in lease_doc and
   ("luascale",) == tuple(next(r for r in role["rules"] if r["resources"] == ["leases"])["resourceNames"]) and
   lease_doc["metadata"]["name"] == "luascale",
   "the Lease %s/%s is in the manifests, without a spec, the one the Role names: %s" %
   (le_cfg.get("namespace"), le_cfg.get("name"), lease_doc))
ok(status_doc is not None and status_doc["metadata"]["namespace"] == st_cfg.get("namespace", "kube-system") and
   "data" not in status_doc and status_doc["metadata"]["name"] == "luascale-status",
   "the status ConfigMap %s/%s is in the manifests, without data: %s" %
   (st_cfg.get("namespace"), st_cfg.get("name"), status_doc))

# the metrics port: only the scrapers' namespaces (a label) reach it
npol = one(docs, "NetworkPolicy", "luascale")
ing = (npol or {}).get("spec", {}).get("ingress", [])
peers = [p for rule in ing for p in rule.get("from", [])]
ok(npol is not None and npol["spec"]["podSelector"].get("matchLabels") == sel and
   "Ingress" in npol["spec"].get("policyTypes", []) and len(ing) >= 1 and
   all(rule.get("from") for rule in ing) and
   all(set(p) == {"namespaceSelector"} and
       p["namespaceSelector"] == {"matchLabels": {"luascale.io/metrics-scraper": "true"}} for p in peers) and
   all(ports.get(pp["port"], pp["port"]) == 8080 for rule in ing for pp in rule.get("ports", [{"port": 0}])),
   "the NetworkPolicy admits to port 8080 of luascale's pods only namespaces labelled "
   "luascale.io/metrics-scraper=true: %s" % npol)

# ---- the overlays ----

for cloud, ann in (("aws", "eks.amazonaws.com/role-arn"), ("gce", "iam.gke.io/gcp-service-account"),
                   ("azure", "azure.workload.identity/client-id")):
    od, why = render("deploy/overlays/" + cloud)
    if not ok(od is not None, "kubectl kustomize deploy/overlays/%s renders: %s" % (cloud, why[:300])):
        continue
    sa = one(od, "ServiceAccount", "luascale")
    odep = one(od, "Deployment", "luascale")
    ocm = one(od, "ConfigMap", odep["spec"]["template"]["spec"]["volumes"][0]["configMap"]["name"])
    ocfg = yaml.safe_load(ocm["data"]["config.yaml"])
    ok(sa["metadata"].get("annotations", {}).get(ann) and ocfg["provider"]["kind"] == cloud and
       ocfg["cluster"]["in_cluster"] is True and ocm["data"]["default.lua"] == policy and
       odep["spec"]["template"]["spec"]["volumes"][0]["configMap"]["name"] == ocm["metadata"]["name"],
       "%s: the ServiceAccount has %s, the config provider.kind %s, the policy kept" % (cloud, ann, cloud))
    if cloud == "azure":
        ok(odep["spec"]["template"]["metadata"]["labels"].get("azure.workload.identity/use") == "true",
           "azure: the pod is labelled azure.workload.identity/use: \"true\"")
    d = os.path.join(H.tmp, "overlay-" + cloud)
    os.makedirs(d)
    for k, v in ocm["data"].items():
        with open(os.path.join(d, k), "w") as f:
            f.write(v)
    p = subprocess.run([H.luascale, "check", "--config", os.path.join(d, "config.yaml")],
                       capture_output=True, timeout=60, env={"PATH": "/usr/bin:/bin", "HOME": H.tmp})
    ok(p.returncode == 0, "%s: luascale check accepts the overlay's config: %s" % (cloud, p.stderr.decode()[-300:]))

# ---- the Deployment's own command line against luascale sim ----

GROUP = ("  - {name: workers, min: 1, max: 10, "
         "template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}, labels: {pool: workers}}}\n")
scen = H.scenario("deploy", "node_groups:\n" + GROUP + "workloads:\n" + pod("web", "8s", 2, "workers"))
SIM = H.start_sim("deploy", scen, [], [])


def post(path, body):
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (SIM["kube"], path), data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


# what `kubectl apply -k` makes before the pods start; then a create of
# either kind is refused, as the Role does
ok(post("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases", lease_doc) == 201 and
   post("/api/v1/namespaces/kube-system/configmaps", status_doc) == 201,
   "the manifests' Lease and status ConfigMap are made in the simulator")
ok(post("/apis/sim.luascale.io/v1/faults",
        {"faults": ["error=1.0:create:leases:503", "error=1.0:create:configmaps:503"]}) == 200,
   "the simulator refuses every create of a Lease or a ConfigMap from now on")

# the kubelet's layout: a timestamped directory, ..data pointing at it,
# each key a symlink through ..data
root = H.tmp + mount["mountPath"]
stamp = os.path.join(root, "..2026_12_01_08_00_00.000000001")
os.makedirs(stamp)
for k, v in cm["data"].items():
    with open(os.path.join(stamp, k), "w") as f:
        f.write(v)
os.symlink(os.path.basename(stamp), os.path.join(root, "..data"))
for k in cm["data"]:
    os.symlink(os.path.join("..data", k), os.path.join(root, k))

argv = [H.luascale] + [H.tmp + a if a.startswith(mount["mountPath"] + "/") else a for a in args]
port = free_port()
run_env = {"PATH": "/usr/bin:/bin", "HOME": H.tmp}
run_env.update(env)
run_env.update({"LUASCALE_CLUSTER_IN_CLUSTER": "false", "LUASCALE_CLUSTER_KUBECONFIG": SIM["kubeconfig"],
                "LUASCALE_CLUSTER_CONTEXT": "luascale-sim", "LUASCALE_SERVER_LISTEN": "127.0.0.1:%d" % port})
log = H.path("deploy-run.log")
proc = subprocess.Popen(argv, env=run_env, stdout=open(log, "w"), stderr=subprocess.STDOUT)
H.procs.append(proc)


def lease():
    try:
        return kube(SIM, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/luascale")["spec"]
    except Exception:
        return None


ls = until(30, lambda: (lease() or {}).get("holderIdentity", "").startswith(FAKE_POD) and lease())
ok(ls, "it leads: the Lease kube-system/luascale is held by %s (%s)" % (FAKE_POD, ls), log)
ok(until(30, lambda: get(port, "/readyz")[0] == 200 and "leading" in get(port, "/readyz")[1]),
   "/readyz is 200 (leading) on the probe port", log)
ok(get(port, "/healthz")[0] == 200, "/healthz is 200", log)


def status_cm():
    try:
        return kube(SIM, "/api/v1/namespaces/kube-system/configmaps/luascale-status")
    except Exception:
        return None


ok(until(30, lambda: (status_cm() or {}).get("data")),
   "the status ConfigMap kube-system/luascale-status is written (the manifests' one: no create)", log)
ok(until(45, lambda: pods_running(SIM, "web-")), "the pending pods bring a scale-up and run", log)
ok(until(20, lambda: log_has(log, r'^\{"time":"[^"]+","level":"info","msg":"[^"]*leading on kube-system/luascale')), "the log is JSON (--log-format json)", log)
lines = [ln for ln in open(log).read().splitlines() if ln.strip()]
bad = []
for ln in lines:
    try:
        json.loads(ln)
    except ValueError:
        bad.append(ln)
ok(lines and not bad, "every log line is one JSON object (%d lines; not: %s)" % (len(lines), bad[:2]))

code, text = get(port, "/metrics")
ok(code == 200 and re.search(r'^luascale_actions_executed_total\{type="scale_up"\} [1-9]', text, re.M),
   "/metrics is served and counts the scale-up", log)

# the kubelet's update of a ConfigMap: a new timestamped directory, then
# ..data renamed over in one step; luascale reloads the config
stamp2 = os.path.join(root, "..2026_12_01_08_05_00.000000002")
os.makedirs(stamp2)
for k, v in cm["data"].items():
    with open(os.path.join(stamp2, k), "w") as f:
        f.write(v.replace("max_nodes_total: 50", "max_nodes_total: 40") if k == "config.yaml" else v)
os.symlink(os.path.basename(stamp2), os.path.join(root, "..data_tmp"))
os.rename(os.path.join(root, "..data_tmp"), os.path.join(root, "..data"))
shutil.rmtree(stamp)


def reloaded():
    return log_has(log, r'"msg":"config reloaded from %s' % re.escape(os.path.join(root, "config.yaml")))


ok(until(20, reloaded), "the ConfigMap's ..data swap reloads the config", log)

# ---- the dashboard ----

dash = json.load(open(os.path.join(SRC, "deploy/dashboards/luascale.json")))
ok(dash.get("schemaVersion", 0) >= 36 and
   any(v.get("type") == "datasource" and v.get("query") == "prometheus"
       for v in dash.get("templating", {}).get("list", [])),
   "the dashboard: schemaVersion >= 36, a Prometheus datasource variable")
exprs = [t["expr"] for p in dash.get("panels", []) for t in p.get("targets", [])]
used = sorted(set(n for e in exprs for n in re.findall(r"\bluascale_[a-z_]+", e)))
families = set(re.findall(r"^# TYPE (\S+) ", text, re.M))


def exported(name):
    if name in families:
        return True
    base = re.sub(r"_(bucket|sum|count)$", "", name)
    return base != name and base in families


missing = [n for n in used if not exported(n)]
ok(len(used) >= 12 and not missing,
   "every metric the dashboard uses (%d) is in the live scrape (missing: %s)" % (len(used), missing))

H.finish()
