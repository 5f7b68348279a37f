#!/usr/bin/python3
# run_sim_orphans.py: no instance is ever left billed without a node, on
# each cloud `luascale sim` serves (the plain simulator through provider
# kind sim, and the AWS, GCE and Azure faces), the cloud's state read back
# from the face itself and compared with the Nodes' providerIDs:
#   terminate: an empty node is scaled down while the cloud refuses its
#     terminate (terminate_error auth until 30s): the Node stays while the
#     terminate fails; once the fault ends the instance is terminated, and
#     only then is the Node deleted; there is never a moment with the Node
#     gone and its instance still live, and no orphan at the end;
#   throttled (azure): the same with 429 TooManyRequests and Retry-After:
#     no delete is sent again before the Retry-After has passed;
#   stuck: a pending pod, the first instance launched for it never becomes
#     a node (stuck_boot count 1); luascale is killed with SIGKILL once the
#     instance exists; a new luascale with max_provision_time 20s sweeps
#     the instance by the cloud's own launch time, terminates it, launches
#     again, and the pod runs; no orphan at the end.
# Usage: run_sim_orphans.py LUASCALE SOURCE_DIR sim|aws|gce|azure PART[,PART...]
# with PART terminate, throttled or stuck; several parts run at the same
# time, each with its own simulator.
# KEEP_TMP=1 keeps the logs.
import os
import re
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simharness import Harness, kube, log_has, nodes, read_env_file, stop, until  # noqa: E402

if len(sys.argv) != 5 or sys.argv[3] not in ("sim", "aws", "gce", "azure") or \
        not set(sys.argv[4].split(",")) <= {"terminate", "throttled", "stuck"}:
    print("usage: run_sim_orphans.py LUASCALE SOURCE_DIR sim|aws|gce|azure terminate|throttled|stuck[,...]")
    sys.exit(2)
CLOUD, PARTS = sys.argv[3], sys.argv[4].split(",")
H = Harness(sys.argv[1], sys.argv[2], "run_sim_orphans.")
ok = H.ok

FAULT_END = 30  # seconds from the simulator's start: terminate_error's until
TEMPLATE = "{allocatable: {cpu: 4, memory: 16Gi, pods: 110}, labels: {pool: workers}}"


# ---- the clouds: how each is started, configured and read back ----

class Sim:
    """The plain simulator: provider kind sim, through the API server."""
    args = ["--log-level", "debug"]
    ready = []

    def section(self):
        return ""

    def setup(self, sim):
        pass

    def config(self, sim):
        return ("node_groups:\n  - {name: workers, min: %d, max: 4, template: %s}\n"
                "provider: {kind: sim, qps: 20, burst: 20}\n" % (MIN, TEMPLATE), {})

    def live(self, sim):
        """The group's instances that are pending or running: {id: providerID}."""
        for g in kube(sim, "/apis/sim.luascale.io/v1/groups")["items"]:
            if g["name"] == "workers":
                return {i["id"]: i["providerID"] for i in g.get("instances", [])
                        if i["state"] in ("pending", "running")}
        return {}


class Aws:
    args = ["--aws-port", "0"]
    ready = [r"AWS face .* at http://127\.0\.0\.1:(\d+)"]
    KEY, SECRET = "AKIASIMULATED0000001", "c2ltdWxhdGVkLXNlY3JldC1rZXktbm90LXJlYWw"

    def __init__(self):
        import boto3
        import botocore.config
        self.boto3, self.botocfg = boto3, botocore.config

    def section(self):
        return ("aws:\n  region: us-east-1\n  cluster: sim\n  asg_retry: 2s\n  credentials:\n"
                "    access_key_id: %s\n    secret_access_key: %s\n  groups:\n"
                "    workers:\n      zones: [us-east-1a]\n      instance_types: [m5.xlarge]\n"
                "      tags: {k8s.io/cluster-autoscaler/node-template/label/pool: workers}\n"
                % (self.KEY, self.SECRET))

    def setup(self, sim):
        env = read_env_file(sim["env_file"])
        sess = self.boto3.session.Session(aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
                                          aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
                                          region_name="us-east-1")
        cfg = self.botocfg.Config(retries={"max_attempts": 10, "mode": "standard"})
        sim["env"] = env
        sim["asg"] = sess.client("autoscaling", endpoint_url=env["AWS_ENDPOINT_URL"], config=cfg)

    def config(self, sim):
        env = {"AWS_EC2_METADATA_DISABLED": "true"}
        for k in ("AWS_ENDPOINT_URL", "AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
            env[k] = sim["env"][k]
        return ("node_groups:\n  - name: workers\n"
                "provider:\n  kind: aws\n  qps: 20\n  burst: 20\n  aws: {cluster_name: sim}\n", env)

    def live(self, sim):
        g = sim["asg"].describe_auto_scaling_groups(AutoScalingGroupNames=["workers"])["AutoScalingGroups"][0]
        return {i["InstanceId"]: i["InstanceId"] for i in g["Instances"]
                if not i["LifecycleState"].startswith("Terminat")}


class Gce:
    args = ["--gce-port", "0"]
    ready = [r"GCE face .* at http://127\.0\.0\.1:(\d+)"]

    def __init__(self):
        from google.oauth2 import service_account
        import google.auth.transport.requests
        import requests
        self.sa, self.transport, self.requests = service_account, google.auth.transport.requests, requests

    def section(self):
        return ("gce:\n  project: sim-project\n  retry: 2s\n  groups:\n"
                "    workers: {zone: us-central1-a, machine_type: e2-standard-4}\n")

    def setup(self, sim):
        sim["env"] = read_env_file(sim["env_file"])
        creds = self.sa.Credentials.from_service_account_file(
            sim["key"], scopes=["https://www.googleapis.com/auth/compute"])
        creds.refresh(self.transport.Request())
        sim["http"] = self.requests.Session()
        sim["http"].headers["Authorization"] = "Bearer " + creds.token
        sim["base"] = sim["env"]["LUASCALE_SIM_GCE_ENDPOINT"] + "projects/sim-project/"

    def config(self, sim):
        return ("node_groups:\n  - name: workers\n    min: %d\n    max: 4\n"
                "    template: {allocatable: {cpu: 3920m, memory: 14Gi, pods: 110}, labels: {pool: workers}}\n"
                "    gce: {zone: us-central1-a}\n"
                "provider:\n  kind: gce\n  qps: 20\n  burst: 20\n  gce:\n    project: sim-project\n"
                "    credentials_file: %s\n    endpoints: {compute: \"%s\"}\n"
                % (MIN, sim["key"], sim["env"]["LUASCALE_SIM_GCE_ENDPOINT"]), {})

    def live(self, sim):
        url = sim["base"] + "zones/us-central1-a/instanceGroupManagers/workers/listManagedInstances"
        for _ in range(40):  # the cloud's own throttling, retried as a client does
            r = sim["http"].post(url)
            if r.status_code == 200:
                return {m["name"]: m["name"] for m in r.json().get("managedInstances", [])
                        if m.get("currentAction") != "DELETING"}
            time.sleep(0.25)
        raise RuntimeError("listManagedInstances: %d %s" % (r.status_code, r.text[:200]))


class Azure:
    SUB = "6d5a1f3e-2b4c-4d8e-9f10-1a2b3c4d5e6f"
    RG = "sim-rg"
    ready = [r"Azure face .* at http://127\.0\.0\.1:(\d+)"]

    def __init__(self):
        from azure.identity import ManagedIdentityCredential
        from azure.mgmt.compute import ComputeManagementClient
        self.cred, self.client = ManagedIdentityCredential, ComputeManagementClient
        self.args = ["--log-level", "debug", "--azure-port", "0"]

    def section(self):
        return ("azure:\n  subscription_id: %s\n  resource_group: %s\n  retry_after: 1s\n  groups:\n"
                "    workers: {vmss: aks-workers-vmss, vm_size: Standard_D4s_v3}\n" % (self.SUB, self.RG))

    def setup(self, sim):
        sim["env"] = read_env_file(sim["env_file"])
        os.environ["AZURE_POD_IDENTITY_AUTHORITY_HOST"] = sim["env"]["AZURE_POD_IDENTITY_AUTHORITY_HOST"]
        for k in ("AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_FEDERATED_TOKEN_FILE", "AZURE_AUTHORITY_HOST"):
            os.environ.pop(k, None)
        sim["sdk"] = self.client(self.cred(), self.SUB, base_url=sim["env"]["LUASCALE_SIM_AZURE_ARM_ENDPOINT"])

    def config(self, sim):
        return ("node_groups:\n  - name: workers\n    min: %d\n    max: 4\n"
                "    template: {allocatable: {cpu: 3860m, memory: 14Gi, pods: 110}, labels: {pool: workers}}\n"
                "    azure: {vmss: aks-workers-vmss}\n"
                "provider:\n  kind: azure\n  qps: 20\n  burst: 20\n" % MIN, sim["env"])

    def live(self, sim):
        vms = sim["sdk"].virtual_machine_scale_set_vms.list(self.RG, "aks-workers-vmss", enforce_https=False)
        return {v.instance_id: v.instance_id for v in vms if v.provisioning_state != "Deleting"}


try:
    FACE = {"sim": Sim, "aws": Aws, "gce": Gce, "azure": Azure}[CLOUD]()
except ImportError as e:  # a missing client is a failure, never a skip
    print("not ok - the %s client is not importable under %s: %s" % (CLOUD, sys.executable, e))
    sys.exit(1)
MIN = 1  # the group's minimum: 0 for the stuck part, which starts empty


def scenario(name, initial, workloads, faults):
    path = H.path(name + ".yaml")
    with open(path, "w") as f:
        f.write("seed: 5\nstart: \"2026-12-01T08:00:00Z\"\nduration: 2h\n"
                "cloud: {boot_delay: 2s, boot_jitter: 500ms, launch_latency: 300ms, "
                "terminate_latency: 300ms, shutdown_delay: 1s}\n"
                "cluster: {register_delay: 500ms, scheduler_interval: 200ms}\n")
        if initial:
            f.write("initial_nodes: [{group: workers, count: %d}]\n" % initial)
        f.write("node_groups:\n  - {name: workers, min: %d, max: 4, template: %s}\n" % (MIN, TEMPLATE))
        f.write("workloads:\n" + workloads + "faults:\n" + faults + FACE.section())
    return path


def start_sim(name, scen):
    args = list(FACE.args)
    extra = {"env_file": H.path(name + ".env")}
    if CLOUD == "aws":
        args += ["--aws-env-out", extra["env_file"]]
    elif CLOUD == "gce":
        extra["key"] = H.path(name + "-key.json")
        args += ["--gce-env-out", extra["env_file"], "--gce-key-out", extra["key"]]
    elif CLOUD == "azure":
        args += ["--azure-env-out", extra["env_file"], "--azure-token-out", H.path(name + ".token"),
                 "--azure-ca-out", H.path(name + "-ca.pem")]
    sim = H.start_sim(name, scen, args, FACE.ready)
    sim["t0"] = time.monotonic()  # at most this long after the simulator's start
    sim.update(extra)
    FACE.setup(sim)
    return sim


def start_run(sim, name, params, env=None):
    body, e = FACE.config(sim)
    e = dict(e)
    e.update(env or {})
    return H.start_run(sim, name, body, e, params)


def node_ids(sim):
    """{instance id: node name} of the Nodes, by the last part of their providerID
    (the whole providerID for the plain simulator)."""
    out = {}
    for name, n in nodes(sim).items():
        pid = n["spec"].get("providerID", "")
        out[pid if CLOUD == "sim" else pid.rsplit("/", 1)[-1]] = name
    return out


def live_ids(sim):
    """{instance id: providerID-or-id}: the key the Nodes are compared by."""
    v = FACE.live(sim)
    return {(pid if CLOUD == "sim" else i): i for i, pid in v.items()}


def no_orphans(sim):
    """(true when every live instance has a Node and every Node an instance, what was seen)."""
    live, ns = live_ids(sim), node_ids(sim)
    return set(live) == set(ns), "instances %s, nodes %s" % (sorted(live.values()), sorted(ns.values()))


# ---- part 1: a scale-down while the cloud refuses terminates ----

def part_terminate(error):
    # two nodes: one runs a 3-CPU pod (75 %: kept), the other is empty
    if error == "auth":
        fault = "  - {kind: terminate_error, group: workers, until: %ds, error: auth}\n" % FAULT_END
    else:
        fault = ("  - {kind: terminate_error, group: workers, until: %ds, error: throttled, delay: 15s}\n"
                 % FAULT_END)
    name = "down-" + error
    sim = start_sim(name, scenario(name, 2, "  - {name: busy, at: 0s, count: 1, requests: "
                                                "{cpu: 3, memory: 1Gi}, node_selector: {pool: workers}}\n",
                                     fault))
    run = start_run(sim, name, "{unneeded_for: 3s, scale_down_delay_after_add: 0s}")
    logs = (run["log"], sim["log"])
    text = lambda: open(run["log"]).read()  # noqa: E731
    before = live_ids(sim)
    ok(len(before) == 2, "the group starts with two instances (%s)" % sorted(before.values()), *logs)
    busy = until(30, lambda: [p["spec"].get("nodeName") for p in kube(sim, "/api/v1/pods")["items"]
                              if p["metadata"]["name"].startswith("busy-") and p["spec"].get("nodeName")])
    empty = [(k, n) for k, n in node_ids(sim).items() if n not in (busy or [])]
    ok(busy and len(empty) == 1, "one node runs the busy pod (%s), the other is empty (%s)"
       % (busy, [n for _, n in empty]), *logs)
    if not (busy and len(empty) == 1):
        return
    key, node = empty[0]
    inst = before.get(key, key)
    fail_re = r"delete %s: terminating instance %s failed \(attempt (\d+)\)" % (re.escape(node), re.escape(inst))
    done_re = r"instance %s of node %s terminated" % (re.escape(inst), re.escape(node))

    # from now until the Node and its instance are gone: the Node is there
    # at every look until luascale says the instance is terminated, and
    # there is never a look with the Node gone and its instance still live
    seen = {"looks": 0, "node_gone_early": [], "orphaned": []}

    def look():
        has_node = node in nodes(sim)
        live = key in live_ids(sim)
        seen["looks"] += 1
        if not has_node and live:
            seen["orphaned"].append(seen["looks"])
        if not has_node and not seen["node_gone_early"] and not re.search(done_re, text()):
            # the daemon's log is written by a thread of its own: give it a moment
            if not until(3, lambda: re.search(done_re, text())):
                seen["node_gone_early"].append(seen["looks"])
        return not has_node and not live

    ended = until(FAULT_END + 60 - (time.monotonic() - sim["t0"]), look)
    ok(log_has(run["log"], r"delete %s: terminating its instance %s of group workers first"
               % (re.escape(node), re.escape(inst))),
       "the empty node's delete terminates its instance %s first" % inst, *logs)
    attempts = [int(a) for a in re.findall(fail_re, text())]
    if error == "auth":
        ok(len(attempts) >= 2 and attempts == list(range(1, len(attempts) + 1)),
           "the cloud refused the terminate, and luascale tried again (attempts %s)" % attempts, *logs)
        ev = [e for e in kube(sim, "/api/v1/events")["items"]
              if e.get("reason") == "LuascaleTerminateFailed" and e["involvedObject"].get("name") == node]
        ok(ev and "terminating instance %s failed" % inst in ev[0].get("message", ""),
           "the Node's LuascaleTerminateFailed Event says why (%s)" % (ev and ev[0].get("message", "")[:80]),
           *logs)
    else:
        retry_throttled(sim, run, fail_re)
    ok(seen["looks"] > 20 and not seen["node_gone_early"],
       "the Node %s stayed while its instance's terminate failed (%d looks; gone without a terminate at %s)"
       % (node, seen["looks"], seen["node_gone_early"]), *logs)
    orph = seen["orphaned"]
    ok(not orph, "never was the Node gone and its instance %s still live (%s)"
       % (inst, "%d looks of %d, from look %d" % (len(orph), seen["looks"], orph[0]) if orph else "none"), *logs)
    ok(ended, "after the fault the instance %s was terminated, and then the Node %s deleted" % (inst, node), *logs)
    t = text()
    d, g = re.search(done_re, t), re.search(r"delete %s done" % re.escape(node), t)
    ok(d and g and d.start() < g.start(), "the log says so in that order: terminated, then deleted", *logs)
    ok(not log_has(run["log"], r"delete %s: .*only the node object is removed" % re.escape(node)),
       "the Node was never deleted without its instance", *logs)
    clean = until(10, lambda: no_orphans(sim)[0])
    ok(clean, "no instance without a Node, no Node without an instance (%s)" % no_orphans(sim)[1], *logs)
    stop(run["proc"])
    stop(sim["proc"])


def retry_throttled(sim, run, fail_re):
    """Azure: each 429 carried Retry-After: 15, and luascale waited it out,
    whether the provider retried the call itself or the engine did."""
    waits = [int(w) for w in re.findall(fail_re + r".*?retrying in (\d+)s", open(run["log"]).read())]
    ok(all(w >= 15 for w in waits), "each retry the engine made waited the Retry-After of 15 s (%s)" % waits,
       run["log"])
    stamps = []
    for line in open(sim["log"]):
        mm = re.match(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\S* .*POST /subscriptions/.*aks-workers-vmss/delete"
                      r"\S* -> (\d+)", line)
        if mm:
            stamps.append((time.mktime(time.strptime(mm.group(1), "%Y-%m-%dT%H:%M:%S")), mm.group(2)))
    early = ["%s then %s after %ds" % (a[1], b[1], b[0] - a[0])
             for a, b in zip(stamps, stamps[1:]) if a[1] == "429" and b[0] - a[0] < 14]
    ok([s for _, s in stamps].count("429") >= 2 and stamps[-1][1] == "202" and not early,
       "the cloud answered the deletes 429 until the fault ended, and none was sent again "
       "before its Retry-After passed (%s; %s)"
       % (", ".join(s for _, s in stamps), "; ".join(early)), run["log"], sim["log"])


# ---- part 2: killed after launching an instance that never boots ----

def part_stuck():
    global MIN
    MIN = 0
    sim = start_sim("stuck", scenario("stuck", 0, "  - {name: job, at: 2s, count: 1, requests: "
                                                  "{cpu: 3, memory: 1Gi}, node_selector: {pool: workers}}\n",
                                      "  - {kind: stuck_boot, group: workers, count: 1}\n"))
    run = start_run(sim, "stuck-1", "{}")
    logs = [run["log"], sim["log"]]
    made = until(40, lambda: live_ids(sim))
    stop(run["proc"], signal.SIGKILL)
    ok(len(made or {}) == 1, "the first luascale launched an instance (%s) and was killed with SIGKILL"
       % sorted((made or {}).values()), *logs)
    if not made:
        return
    key, stuck = next(iter(made.items()))
    # the new luascale starts once the instance is 10 s old, so a sweep
    # that counted from its own first sight would come 20 s after its
    # start, one by the cloud's launch time 10 s after it
    seen = time.monotonic()
    became = until(15, lambda: key in node_ids(sim) or time.monotonic() - seen >= 10 and "old")
    ok(became == "old", "the instance %s has no node 10 s after it appeared" % stuck, *logs)
    run2 = start_run(sim, "stuck-2", "{}", {"LUASCALE_PROVISIONING_MAX_PROVISION_TIME": "20s",
                                            "LUASCALE_PROVISIONING_BACKOFF_INITIAL": "5s"})
    started = time.monotonic() - 1  # start_run returns a second after the start
    logs.append(run2["log"])
    sweep_re = (r"instance %s of group workers has no node (\d+)s after its launch \(by the cloud's "
                r"launch time\): terminating it" % re.escape(stuck))
    swept = until(40, lambda: log_has(run2["log"], sweep_re))
    after = time.monotonic() - started
    ok(swept and int(swept.group(1)) >= 20 and after < 17,
       "the new luascale's sweep found the instance without a node %ss after its launch, by the cloud's "
       "launch time (%.0fs after the new luascale started)" % (swept.group(1) if swept else "?", after), *logs)
    # the cloud may show the instance gone a moment before luascale logs
    # that its terminate returned: wait for both
    term_re = r"instance %s of group workers terminated" % re.escape(stuck)
    gone = until(30, lambda: key not in live_ids(sim) and log_has(run2["log"], term_re))
    ok(gone, "the stuck instance %s was terminated (gone from the cloud: %s; logged: %s)"
       % (stuck, key not in live_ids(sim), bool(log_has(run2["log"], term_re))), *logs)
    ran = until(40, lambda: (lambda p: p if p and p[0]["status"].get("phase") == "Running" else None)(
        [p for p in kube(sim, "/api/v1/pods")["items"] if p["metadata"]["name"].startswith("job-")]))
    ok(ran, "the pending pod runs, on a new instance", *logs)
    if ran:
        on = {v: k for k, v in node_ids(sim).items()}.get(ran[0]["spec"]["nodeName"])
        ok(on and on != key and on in live_ids(sim),
           "... not the stuck one: on %s, an instance of the group" % on, *logs)
    t = open(run2["log"]).read()
    s, u = re.search(sweep_re, t), re.search(r"scale_up workers \+1: asking the cloud", t)
    ok(s and u and s.start() < u.start(),
       "the new luascale launched only after the sweep: the stuck instance counted as on its way until then",
       *logs)
    clean = until(10, lambda: no_orphans(sim)[0])
    ok(clean, "no instance without a Node, no Node without an instance (%s)" % no_orphans(sim)[1], *logs)
    stop(run2["proc"])
    stop(sim["proc"])


def part_terminate_auth():
    part_terminate("auth")


def part_terminate_throttled():
    part_terminate("throttled")


try:
    H.phases([{"terminate": part_terminate_auth, "throttled": part_terminate_throttled,
               "stuck": part_stuck}[p] for p in PARTS], limit=240)
finally:
    H.finish()
