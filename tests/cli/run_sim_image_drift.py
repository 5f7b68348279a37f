#!/usr/bin/python3
# run_sim_image_drift.py: image drift on AWS, end to end. `luascale sim
# --aws-port` runs three workers nodes of an Auto Scaling group launched
# from version 1 of its launch template (the simulator's AMI). AWS's own
# client (boto3 under /usr/bin/python3) makes version 2 with another
# ImageId (CreateLaunchTemplateVersion) and the default
# (ModifyLaunchTemplate). Then `luascale run` with the AWS provider and
# default.lua (replace_drifted = true, a disruption budget of one node):
#   1. every old node is replaced, one at a time (never two old nodes
#      cordoned at once, never fewer than three Ready nodes): the ASG ends
#      with three instances on the new AMI per DescribeInstances, and the
#      old instances are terminated;
#   2. an Event LuascaleReplace on each old node gives the image reason as
#      the provider words it ("image ami-... is not launch template workers
#      version $Default's ami-...");
#   3. no pod is lost: the ReplicaSet's pods run on the new nodes, none
#      was killed (they were evicted).
# Before that, the face refuses what AWS refuses (a malformed AMI, an
# unknown version) with AWS's codes; and `luascale simulate` of a plain
# scenario with an `image` fault shows the drift and rolls the group,
# while an aws: scenario's image fault must name an AMI id.
# Waits are bounded and fail with what they saw; nothing sleeps for time
# to pass. Usage: run_sim_image_drift.py LUASCALE SOURCE_DIR. Fails when
# boto3 is missing.
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simharness import Harness, kube, nodes, read_env_file, until  # noqa: E402

try:
    import boto3
    import botocore.config
    import botocore.exceptions
except ImportError as e:  # a missing client is a failure, never a skip
    print("not ok - boto3 not importable under %s: %s" % (sys.executable, e))
    sys.exit(1)

H = Harness(sys.argv[1], sys.argv[2], "run_sim_image_drift.")
ok = H.ok
OLD_AMI = "ami-0123456789abcdef0"  # the simulator's, version 1's
NEW_AMI = "ami-0fedcba9876543210"

scen = H.path("image.yaml")
with open(scen, "w") as f:
    f.write("seed: 5\nstart: \"2026-12-01T08:00:00Z\"\nduration: 2h\n"
            "cloud: {boot_delay: 2s, boot_jitter: 500ms, launch_latency: 300ms, "
            "terminate_latency: 300ms, shutdown_delay: 1s}\n"
            "cluster: {register_delay: 500ms, scheduler_interval: 200ms}\n"
            "initial_nodes: [{group: workers, count: 3}]\n"
            "node_groups:\n"
            "  - {name: workers, min: 1, max: 6, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}, "
            "labels: {pool: workers}}}\n"
            "workloads:\n"
            "  - {name: web, namespace: shop, controller: replicaset, count: 3, grace: 1s, "
            "requests: {cpu: 1, memory: 1Gi}}\n"
            "aws:\n  region: us-east-1\n  cluster: sim\n"
            "  credentials:\n    access_key_id: AKIASIMULATED0000001\n"
            "    secret_access_key: c2ltdWxhdGVkLXNlY3JldC1rZXktbm90LXJlYWw\n"
            "  groups:\n    workers:\n      zones: [us-east-1a, us-east-1b]\n      instance_types: [m5.xlarge]\n"
            "      tags: {k8s.io/cluster-autoscaler/node-template/label/pool: workers}\n")
env_file = H.path("image.env")
SIM = H.start_sim("image", scen, ["--aws-port", "0", "--aws-env-out", env_file],
                  [r"AWS face .* at http://127\.0\.0\.1:(\d+)"])
senv = read_env_file(env_file)
sess = boto3.session.Session(aws_access_key_id=senv["AWS_ACCESS_KEY_ID"],
                             aws_secret_access_key=senv["AWS_SECRET_ACCESS_KEY"], region_name="us-east-1")
cfg = botocore.config.Config(retries={"max_attempts": 10, "mode": "standard"})
ec2 = sess.client("ec2", endpoint_url=senv["AWS_ENDPOINT_URL"], config=cfg)
asg = sess.client("autoscaling", endpoint_url=senv["AWS_ENDPOINT_URL"], config=cfg)


def live_ids():
    g = asg.describe_auto_scaling_groups(AutoScalingGroupNames=["workers"])["AutoScalingGroups"][0]
    return sorted(i["InstanceId"] for i in g["Instances"] if not i["LifecycleState"].startswith("Terminat"))


def images(ids):
    """{instance id: (ImageId, state)} as DescribeInstances says."""
    if not ids:
        return {}
    res = ec2.describe_instances(InstanceIds=list(ids))["Reservations"]
    return {i["InstanceId"]: (i.get("ImageId"), i["State"]["Name"]) for r in res for i in r["Instances"]}


def ready(o):
    return any(c["type"] == "Ready" and c["status"] == "True" for c in o["status"].get("conditions", []))


# ---- the cluster as it starts: three nodes on version 1's AMI ----
old = until(20, lambda: (lambda ids: ids if len(ids) == 3 else None)(live_ids()))
ok(old, "the ASG has its three starting instances (%s)" % old, SIM["log"])
old = old or []
ok(old and all(v == (OLD_AMI, "running") for v in images(old).values()),
   "DescribeInstances: each runs %s (%s)" % (OLD_AMI, images(old)))

# ---- roll the AMI with AWS's client: version 2, made the default ----
v1 = ec2.describe_launch_template_versions(LaunchTemplateName="workers", Versions=["$Default"])
v1 = v1["LaunchTemplateVersions"][0]
ok(v1["VersionNumber"] == 1 and v1["LaunchTemplateData"].get("ImageId") == OLD_AMI and v1["DefaultVersion"],
   "version 1 is the default, with %s" % OLD_AMI, v1)
v2 = ec2.create_launch_template_version(LaunchTemplateName="workers", SourceVersion="1",
                                        VersionDescription="new AMI",
                                        LaunchTemplateData={"ImageId": NEW_AMI})["LaunchTemplateVersion"]
ok(v2["VersionNumber"] == 2 and v2["LaunchTemplateData"].get("ImageId") == NEW_AMI and
   v2["LaunchTemplateData"].get("InstanceType") == "m5.xlarge" and not v2["DefaultVersion"],
   "CreateLaunchTemplateVersion: version 2, with %s and version 1's instance type, not the default" % NEW_AMI, v2)
lt = ec2.modify_launch_template(LaunchTemplateId=v2["LaunchTemplateId"], DefaultVersion="2")["LaunchTemplate"]
ok(lt["DefaultVersionNumber"] == 2 and lt["LatestVersionNumber"] == 2,
   "ModifyLaunchTemplate: version 2 is the default", lt)
d = ec2.describe_launch_template_versions(LaunchTemplateName="workers", Versions=["$Default", "1"])
d = {v["VersionNumber"]: v for v in d["LaunchTemplateVersions"]}
ok(sorted(d) == [1, 2] and d[2]["DefaultVersion"] and d[2]["LaunchTemplateData"]["ImageId"] == NEW_AMI and
   not d[1]["DefaultVersion"], "DescribeLaunchTemplateVersions: $Default is version 2", d)



def error_code(fn):
    try:
        fn()
    except botocore.exceptions.ClientError as e:
        return e.response["Error"]["Code"]
    return None


# what AWS refuses, the face refuses with AWS's codes, and changes nothing
for code, call in (
        ("InvalidAMIID.Malformed", lambda: ec2.create_launch_template_version(
            LaunchTemplateName="workers", LaunchTemplateData={"ImageId": "ami-xyz"})),
        ("InvalidLaunchTemplateId.VersionNotFound", lambda: ec2.create_launch_template_version(
            LaunchTemplateName="workers", SourceVersion="7", LaunchTemplateData={"ImageId": NEW_AMI})),
        ("InvalidLaunchTemplateName.NotFoundException", lambda: ec2.create_launch_template_version(
            LaunchTemplateName="nosuch", LaunchTemplateData={"ImageId": NEW_AMI})),
        ("InvalidLaunchTemplateId.VersionNotFound", lambda: ec2.modify_launch_template(
            LaunchTemplateName="workers", DefaultVersion="9")),
        ("InvalidLaunchTemplateId.VersionNotFound", lambda: ec2.describe_launch_template_versions(
            LaunchTemplateName="workers", Versions=["3"])),
        ("DryRunOperation", lambda: ec2.modify_launch_template(
            LaunchTemplateName="workers", DefaultVersion="2", DryRun=True))):
    got = error_code(call)
    ok(got == code, "refused with %s (%s)" % (code, got))
ok(len(ec2.describe_launch_template_versions(LaunchTemplateName="workers")["LaunchTemplateVersions"]) == 2,
   "the refused calls made no version")

# ---- luascale run replaces the old nodes ----
env = {"AWS_EC2_METADATA_DISABLED": "true"}
for k in ("AWS_ENDPOINT_URL", "AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
    env[k] = senv[k]
run = H.start_run(SIM, "run", "node_groups:\n  - name: workers\n"
                  "disruption: {budgets: [{nodes: 1}]}\n"
                  "provider:\n  kind: aws\n  qps: 20\n  burst: 20\n  aws: {cluster_name: sim}\n",
                  env, "{replace_drifted: true}")
logs = (run["log"], SIM["log"])
old_nodes = {n: o for n, o in nodes(SIM).items() if o["spec"].get("providerID", "").rsplit("/", 1)[-1] in old}
ok(len(old_nodes) == 3, "the three old instances are nodes (%s)" % sorted(old_nodes), SIM["log"])

seen, end, last = [], time.monotonic() + 90, {}
while time.monotonic() < end:
    ns = nodes(SIM)
    cordoned = sorted(n for n, o in ns.items() if o["spec"].get("unschedulable"))
    n_ready = len([o for o in ns.values() if ready(o) and not o["spec"].get("unschedulable")])
    if len(cordoned) > 1 or n_ready < 2 or (cordoned and n_ready < 3):
        seen.append((cordoned, n_ready))
    ids = live_ids()
    last = images(ids)
    if not set(ids) & set(old) and len(ids) == 3 and all(v[0] == NEW_AMI for v in last.values()):
        break
    time.sleep(0.2)
ok(len(last) == 3 and all(v[0] == NEW_AMI for v in last.values()) and not set(last) & set(old),
   "the ASG ends with three instances on %s, none of the old ones (%s)" % (NEW_AMI, last), *logs)
ok(not seen, "one node at a time: never two cordoned, never fewer than three Ready while one is (%s)"
   % seen[:5], run["log"])
gone = until(20, lambda: (lambda im: im if all(s in ("shutting-down", "terminated") for _, s in im.values())
                          else None)(images(old)))
ok(gone, "DescribeInstances: the old instances are terminated (%s)" % images(old), *logs)
ok(until(20, lambda: not set(old_nodes) & set(nodes(SIM))), "their nodes are gone", *logs)


def events(reason):
    return [e for e in kube(SIM, "/api/v1/events")["items"] if e.get("reason") == reason]


WHY = r"image %s is not launch template workers version \$Default's %s" % (OLD_AMI, NEW_AMI)
started = events("LuascaleReplace")
ok(len(started) == 3 and {e["involvedObject"]["name"] for e in started} == set(old_nodes) and
   all(re.search(WHY, e["message"]) for e in started),
   "an Event LuascaleReplace on each old node gives the image reason (%s)" % [e["message"] for e in started])
ok(len(events("LuascaleReplaced")) == 3, "and LuascaleReplaced on each once its new node was Ready")

pods = until(20, lambda: (lambda ps: ps if len(ps) == 3 and all(
    p["status"].get("phase") == "Running" and p["spec"].get("nodeName") not in old_nodes for p in ps) else None)(
    [p for p in kube(SIM, "/api/v1/namespaces/shop/pods")["items"] if not p["metadata"].get("deletionTimestamp")]))
ok(pods, "the ReplicaSet's three pods run on the new nodes", *logs)
st = kube(SIM, "/apis/sim.luascale.io/v1/stats")
ok(st["podsKilled"] == 0 and st["barePodsLost"] == 0 and st["evictions"] >= 1,
   "no pod was lost: none killed, every move an eviction (%s)"
   % {k: st[k] for k in ("podsKilled", "barePodsLost", "evictions")})


# ---- luascale simulate: an image fault in the plain simulator ----
def simulate(name, body):
    path = H.path(name + ".yaml")
    with open(path, "w") as f:
        f.write(body)
    log = H.path(name + ".log")
    p = subprocess.run([H.luascale, "simulate", "--scenario", path, "--policy",
                        os.path.join(H.src, "policies/default.lua"), "--log", log],
                       capture_output=True, text=True, timeout=120)
    return p, (open(log).read() if os.path.exists(log) else "")


PLAIN = ("seed: 3\nduration: 1h\ncloud: {boot_delay: 30s, boot_jitter: 5s}\n"
         "initial_nodes: [{group: web, count: 3}]\nnode_groups:\n"
         "  - {name: web, min: 1, max: 6, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}\n"
         "workloads:\n  - {name: site, count: 4, controller: replicaset, requests: {cpu: 1, memory: 1Gi}}\n"
         "faults:\n  - {kind: image, at: 10m, group: web, image: ami-0new}\n")
p, log = simulate("plain", PLAIN)
ok(p.returncode == 0 and re.search(r"replaces: 3 started, 3 done", p.stdout) and
   re.search(r"plan: replace web-1 with a node of web: drifted: image %s is not group web's ami-0new" % OLD_AMI, log)
   and not re.search(r"plan: replace web-[4-9]", log),
   "simulate: the image fault drifts the three nodes, each replaced once by a node on the new image",
   H.path("plain.log"))
p, _ = simulate("bad", PLAIN.replace("image: ami-0new", "image: \"two words\""))
ok(p.returncode == 2 and "expected an image name" in p.stderr, "simulate: a bad image is refused (%s)" % p.stderr.strip())
p, _ = simulate("badaws", PLAIN + "aws:\n  credentials: {access_key_id: AKIASIMULATED0000001, "
                "secret_access_key: c2ltdWxhdGVkLXNlY3JldC1rZXktbm90LXJlYWw}\n")
ok(p.returncode == 2 and "image \"ami-0new\" is not an AMI id" in p.stderr,
   "simulate: an aws: scenario's image fault must name an AMI id (%s)" % p.stderr.strip())
H.finish()
