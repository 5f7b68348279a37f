#!/usr/bin/python3
# run_sim_gke_env.py: GKE node pools scaled from zero by their kube-env,
# `luascale run` with provider.kind gce against `luascale sim --gce-port`:
#   1. the face serves a MIG's instance template with GKE's kube-env as a
#      metadata item, read back with Google's auth library;
#   2. a group whose config writes no template gets the kube-env's labels
#      and taint: a pending pod that selects a GKE label and tolerates the
#      taint scales the group up from zero and runs there; a pod that
#      selects the same label but does not tolerate the taint gets no
#      node (the group is not grown for it);
#   3. a malformed kube-env is one warning naming the template and the bad
#      part; the group is still described from its machine type.
# Usage: run_sim_gke_env.py LUASCALE SOURCE_DIR. Fails when google-auth is missing.
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simharness import Harness, kube, log_has, pods_running, read_env_file, until  # noqa: E402

try:
    from google.oauth2 import service_account
    import google.auth.transport.requests
except ImportError as e:  # a missing client is a failure, never a skip
    print("not ok - python3-google-auth/python3-requests not importable under %s: %s" % (sys.executable, e))
    sys.exit(1)

H = Harness(sys.argv[1], sys.argv[2], "run_sim_gke_env.")
ok = H.ok

KUBE_ENV = ("AUTOSCALER_ENV_VARS: kube_reserved=cpu=100m,memory=1Gi;"
            "node_labels=cloud.google.com/gke-nodepool=ml-pool,team=ml;"
            "node_taints=dedicated=ml:NoSchedule;os=linux;os_distribution=cos\\n"
            "CLUSTER_NAME: sim\\n")

SCENARIO = """\
node_groups:
  - {name: workers, min: 1, max: 2, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}, labels: {pool: workers}}}
  - name: ml
    min: 0
    max: 3
    template:
      allocatable: {cpu: 4, memory: 16Gi, pods: 110}
      labels: {team: ml, cloud.google.com/gke-nodepool: ml-pool}
      taints: [{key: dedicated, value: ml, effect: NoSchedule}]
  - {name: broken, min: 0, max: 2, template: {allocatable: {cpu: 2, memory: 8Gi, pods: 110}}}
workloads:
  - {name: tolerant, at: 2s, count: 1, requests: {cpu: 1, memory: 1Gi}, node_selector: {team: ml},
     tolerations: [{key: dedicated, operator: Equal, value: ml, effect: NoSchedule}]}
  - {name: intolerant, at: 2s, count: 1, requests: {cpu: 1, memory: 1Gi}, node_selector: {team: ml}}
gce:
  project: sim-project
  groups:
    workers: {zone: us-central1-a, machine_type: e2-standard-4}
    ml: {zone: us-central1-b, machine_type: e2-standard-4, kube_env: "%s"}
    broken: {zone: us-central1-c, machine_type: e2-standard-2, kube_env: "NODE_LABELS: team=ml\\nNODE_TAINTS: k=v:Sometimes\\n"}
""" % KUBE_ENV

CONFIG = """\
node_groups:
  - name: workers
    max: 2
    template: {allocatable: {cpu: 3920m, memory: 14Gi, pods: 110}, labels: {pool: workers}}
    gce: {zone: us-central1-a}
  - name: ml
    max: 3
    gce: {zone: us-central1-b}
  - name: broken
    max: 2
    gce: {zone: us-central1-c}
"""


def pod_phase(sim, prefix):
    ps = [p for p in kube(sim, "/api/v1/pods")["items"] if p["metadata"]["name"].startswith(prefix)]
    return [p["status"].get("phase") for p in ps]


def main():
    scen = H.scenario("gke", SCENARIO)
    env_file, key = H.path("gke.env"), H.path("gke-key.json")
    sim = H.start_sim("gke", scen, ["--gce-port", "0", "--gce-env-out", env_file, "--gce-key-out", key],
                      [r"GCE face .* at http://127\.0\.0\.1:(\d+)"])
    env = read_env_file(env_file)
    creds = service_account.Credentials.from_service_account_file(
        key, scopes=["https://www.googleapis.com/auth/compute.readonly"])
    sess = google.auth.transport.requests.AuthorizedSession(creds)
    base = env["LUASCALE_SIM_GCE_ENDPOINT"] + "projects/sim-project/"

    # ---- the template, as Google's auth library reads it ----
    mig = sess.get(base + "zones/us-central1-b/instanceGroupManagers/ml", timeout=10).json()
    tpl = sess.get(base + "global/instanceTemplates/" + mig["instanceTemplate"].rsplit("/", 1)[1],
                   timeout=10).json()
    items = tpl.get("properties", {}).get("metadata", {}).get("items", [])
    ok([i["key"] for i in items] == ["kube-env"] and "node_taints=dedicated=ml:NoSchedule" in items[0]["value"],
       "the ml MIG's instance template carries GKE's kube-env as a metadata item", sim["log"])

    # ---- luascale run: scale from zero by the kube-env ----
    body = (CONFIG + "provider:\n  kind: gce\n  pricing: {enabled: false}\n  gce:\n    project: sim-project\n"
            "    credentials_file: %s\n    endpoints: {compute: \"%s\"}\n" % (key, env["LUASCALE_SIM_GCE_ENDPOINT"]))
    run = H.start_run(sim, "gke", body, {})
    logs = (run["log"], sim["log"])
    ran = until(60, lambda: pods_running(sim, "tolerant-"))
    ok(ran, "a pod that selects team=ml and tolerates dedicated=ml:NoSchedule runs", *logs)
    if ran:
        node = kube(sim, "/api/v1/nodes/" + ran[0]["spec"]["nodeName"])
        ok(node["spec"].get("providerID", "").startswith("gce://sim-project/us-central1-b/ml-"),
           "on a new node of the ml MIG (%s)" % node["spec"].get("providerID"), *logs)
    ok(log_has(run["log"], r"scale_up ml \+1"), "the ml group was scaled up from zero by one", *logs)
    # the intolerant pod: several rounds after, still pending and never the reason of a scale-up
    rounds = until(30, lambda: len(re.findall(r"fit no node group", open(run["log"]).read())) >= 3)
    text = open(run["log"]).read()
    ok(rounds and re.search(r"fit no node group: .*intolerant", text),
       "a pod that does not tolerate the kube-env's taint fits no node group (said each round)", *logs)
    ups = re.findall(r"scale_up ml \+(\d+): asking the cloud", text)
    m = sess.get(base + "zones/us-central1-b/instanceGroupManagers/ml", timeout=10).json()
    ok(ups == ["1"] and m.get("targetSize") == 1 and pod_phase(sim, "intolerant-") == ["Pending"],
       "no node is added for it: ml stays at 1 (scale-ups %s, targetSize %s), the pod Pending"
       % (ups, m.get("targetSize")), *logs)
    ok(log_has(run["log"], r"gce: group broken: instance template broken-template: kube-env: NODE_TAINTS: "
                           r"taint k=v: effect \"Sometimes\" is not NoSchedule"),
       "a malformed kube-env is a warning naming the template and the bad part", *logs)
    ok(len(re.findall(r"instance template broken-template: kube-env", text)) == 1,
       "said once, not every round", *logs)
    ok(not re.search(r"scale_up broken", text),
       "the broken template's labels are not used: the team=ml pods never pick that group", *logs)


try:
    main()
finally:
    H.finish()
