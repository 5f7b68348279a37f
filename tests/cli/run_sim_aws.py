#!/usr/bin/python3
# run_sim_aws.py: `luascale run` with provider.kind aws against `luascale sim
# --aws-port`, the cloud's state read back with AWS's own client (boto3
# under /usr/bin/python3) and the cluster's with the Kubernetes API:
#   1. pending pods become ASG instances, then nodes (aws:/// providerIDs),
#      then running pods; the same through a fleet group (CreateFleet);
#   2. a scale-down terminates exactly the drained node's instance and
#      lowers the ASG's desired capacity (and terminates the fleet's);
#   3. a Failed scaling activity (InsufficientInstanceCapacity) backs the
#      group off at once and gives the desired capacity back; CreateFleet's
#      capacity errors back a fleet group off;
#   4. throttling (RequestLimitExceeded / Throttling) slows the launches and
#      loses none, in both modes;
#   5. a restart in the middle of a scale-up launches nothing twice, in
#      both modes;
#   6. a fleet group of several instance types: pods that fit only larger
#      types are packed as each type, and CreateFleet makes the type the
#      plan names.
# Usage: run_sim_aws.py LUASCALE SOURCE_DIR. Fails when boto3 is missing.
import json
import os
import re
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simharness import Harness, kube, log_has, nodes, pod, pods_running, read_env_file, stop, until  # noqa: E402

try:
    import boto3
    import botocore.config
except ImportError as e:  # a missing client is a failure, never a skip
    print("not ok - boto3 not importable under %s: %s" % (sys.executable, e))
    sys.exit(1)

H = Harness(sys.argv[1], sys.argv[2], "run_sim_aws.")
ok = H.ok

CREDS = {"access_key_id": "AKIASIMULATED0000001",
         "secret_access_key": "c2ltdWxhdGVkLXNlY3JldC1rZXktbm90LXJlYWw"}


def scenario(name, groups, aws_groups, workloads, faults="", boot="2s"):
    body = "node_groups:\n" + groups + "workloads:\n" + workloads
    if faults:
        body += "faults:\n" + faults
    body += ("aws:\n  region: us-east-1\n  cluster: sim\n  asg_retry: 2s\n  credentials:\n"
             "    access_key_id: %s\n    secret_access_key: %s\n  groups:\n%s"
             % (CREDS["access_key_id"], CREDS["secret_access_key"], aws_groups))
    return H.scenario(name, body, boot)


def start_sim(name, scen):
    env_file = H.path(name + ".env")
    sim = H.start_sim(name, scen, ["--aws-port", "0", "--aws-env-out", env_file],
                      [r"AWS face .* at http://127\.0\.0\.1:(\d+)"])
    env = read_env_file(env_file)
    sess = boto3.session.Session(aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
                                 aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
                                 region_name="us-east-1")
    cfg = botocore.config.Config(retries={"max_attempts": 10, "mode": "standard"})
    url = env["AWS_ENDPOINT_URL"]
    sim.update({"env": env, "asg": sess.client("autoscaling", endpoint_url=url, config=cfg),
                "ec2": sess.client("ec2", endpoint_url=url, config=cfg)})
    return sim


CONFIG_GROUPS = """\
node_groups:
  - name: workers
  - name: burst
    max: 6
    template:
      allocatable: {cpu: 4, memory: 16Gi, pods: 110}
      labels: {pool: burst}
    aws:
      mode: fleet
      launch_template: burst
      instance_types: [m5.xlarge]
      placements: [{zone: us-east-1a}, {zone: us-east-1b}]
  - name: scarce
  - name: fleetscarce
    max: 3
    template:
      allocatable: {cpu: 4, memory: 16Gi, pods: 110}
      labels: {pool: fleetscarce}
    aws:
      mode: fleet
      launch_template: fleetscarce
      instance_types: [m5.xlarge]
      placements: [{zone: us-east-1a}]
"""


def start_run(sim, name, params="{}", groups=CONFIG_GROUPS):
    env = {"AWS_EC2_METADATA_DISABLED": "true"}
    for k in ("AWS_ENDPOINT_URL", "AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        env[k] = sim["env"][k]
    return H.start_run(sim, name, groups +
                       "provider:\n  kind: aws\n  qps: 20\n  burst: 20\n  aws: {cluster_name: sim}\n",
                       env, params)


def asg(sim, name):
    return sim["asg"].describe_auto_scaling_groups(AutoScalingGroupNames=[name])["AutoScalingGroups"][0]


def live(group):
    return sorted(i["InstanceId"] for i in group["Instances"]
                  if not i["LifecycleState"].startswith("Terminat"))


GROUPS = """\
  - {name: workers, min: 1, max: 6, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}, labels: {pool: workers}}}
  - {name: burst, min: 0, max: 6, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}, labels: {pool: burst}}}
  - {name: scarce, min: 0, max: 3, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}, labels: {pool: scarce}}}
  - {name: fleetscarce, min: 0, max: 3, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}, labels: {pool: fleetscarce}}}
"""
AWS_GROUPS = """\
    workers:
      zones: [us-east-1a, us-east-1b]
      instance_types: [m5.xlarge]
      tags: {k8s.io/cluster-autoscaler/node-template/label/pool: workers}
    burst:
      mode: fleet
      zones: [us-east-1a, us-east-1b]
      instance_types: [m5.xlarge]
    scarce:
      zones: [us-east-1a]
      instance_types: [m5.xlarge]
      tags: {k8s.io/cluster-autoscaler/node-template/label/pool: scarce}
    fleetscarce:
      mode: fleet
      zones: [us-east-1a]
      instance_types: [m5.xlarge]
"""


def phase_scale_up_and_down():
    sim = start_sim("updown", scenario("updown", GROUPS, AWS_GROUPS,
                                       pod("batch", "2s", 3, "workers", "25s") +
                                       pod("fleetjob", "2s", 2, "burst", "25s")))
    run = start_run(sim, "updown", "{unneeded_for: 3s, scale_down_delay_after_add: 0s}")
    logs = (run["log"], sim["log"])

    ran = until(60, lambda: pods_running(sim, "batch-"))
    ok(ran, "ASG: pending pods become instances, nodes and running pods", *logs)
    # the config writes no template for workers: the pods (nodeSelector
    # pool=workers, 3 CPUs) fit a new node only through the one described
    # from AWS: m5.xlarge's 4 vCPUs less EKS's reserve, and the
    # node-template/label/pool tag
    ok(log_has(run["log"], r"plan: scale_up workers \+\d+: .* fit \d+ new workers node"),
       "ASG: the new-node template comes from the launch template, DescribeInstanceTypes and the tags",
       *logs)
    if ran:
        g = asg(sim, "workers")
        ns = nodes(sim)
        on = {p["spec"]["nodeName"] for p in ran}
        pids = {ns[n]["spec"].get("providerID", "") for n in on}
        ok(all(re.match(r"^aws:///us-east-1[ab]/i-[0-9a-f]{17}$", x) for x in pids) and
           {x.rsplit("/", 1)[1] for x in pids} <= set(live(g)),
           "ASG: the pods run on nodes whose aws:/// providerIDs are the ASG's instances", *logs)
        ok(g["DesiredCapacity"] == len(live(g)) >= 3,
           "ASG: desired capacity %d, %d instances" % (g["DesiredCapacity"], len(live(g))), *logs)
    ran = until(60, lambda: pods_running(sim, "fleetjob-"))
    ok(ran, "fleet: pending pods become CreateFleet instances, nodes and running pods", *logs)
    if ran:
        ns = nodes(sim)
        ids = {ns[p["spec"]["nodeName"]]["spec"]["providerID"].rsplit("/", 1)[1] for p in ran}
        res = sim["ec2"].describe_instances(InstanceIds=sorted(ids))["Reservations"]
        tags = [{t["Key"]: t["Value"] for t in i.get("Tags", [])}
                for r in res for i in r["Instances"]]
        ok(len(tags) == len(ids) and all(t.get("luascale.io/node-group") == "burst" for t in tags),
           "fleet: the instances carry the group's tag", *logs)
    ok(log_has(run["log"], r"aws: launched i-[0-9a-f]{17} in group workers: type m5\.xlarge, "
               r"zone us-east-1[ab], private DNS name ip-"),
       "every launched instance is logged with its id, type, zone and private DNS name", *logs)

    # the jobs end: every node but the ASG's minimum goes, one instance each
    before = asg(sim, "workers")
    m = until(90, lambda: (lambda g: g if g["DesiredCapacity"] == 1 and len(live(g)) == 1 else None)(
        asg(sim, "workers")))
    ok(m, "scale-down: the ASG goes back to its minimum (desired %d -> %s)"
       % (before["DesiredCapacity"], m and m["DesiredCapacity"]), *logs)
    if m:
        deleted = re.findall(r"aws: group workers: terminating (i-[0-9a-f]{17})", open(run["log"]).read())
        gone = set(live(before)) - set(live(m))
        ok(sorted(deleted) == sorted(gone) and len(deleted) == len(set(deleted)),
           "scale-down: exactly the removed nodes' instances were terminated (%s)" % ", ".join(sorted(gone)),
           *logs)
        ns = nodes(sim)
        left = [n for n in ns.values() if n["spec"].get("providerID", "").endswith("/" + live(m)[0])]
        ok(len([n for n in ns.values() if "workers" in json.dumps(n["metadata"].get("labels", {}))]) >= 1
           and left, "scale-down: the remaining node is the ASG's remaining instance", *logs)
    f = until(60, lambda: not sim["ec2"].describe_instances(Filters=[
        {"Name": "tag:luascale.io/node-group", "Values": ["burst"]},
        {"Name": "instance-state-name", "Values": ["pending", "running"]}])["Reservations"])
    ok(f, "scale-down: the fleet group's instances are terminated", *logs)
    stop(run["proc"])
    stop(sim["proc"])


def phase_faults():
    faults = ("  - {kind: launch_error, group: scarce, error: no_capacity}\n"
              "  - {kind: launch_error, group: fleetscarce, error: no_capacity}\n")
    sim = start_sim("faults", scenario("faults", GROUPS, AWS_GROUPS,
                                       pod("gpu", "2s", 1, "scarce") + pod("fgpu", "2s", 1, "fleetscarce"),
                                       faults))
    run = start_run(sim, "faults")
    logs = (run["log"], sim["log"])
    asked = until(40, lambda: log_has(run["log"], r"^(\S+) info  scale_up scarce \+1: asking the cloud"))
    failed = until(40, lambda: log_has(run["log"], r"^(\S+) warn  scale_up scarce \+1 failed after ([0-9.]+)s: "
                                                   r"0 of 1 created; no capacity: .*InsufficientInstanceCapacity.*"
                                                   r"group backed off"))
    ok(asked and failed and float(failed.group(2)) < 15,
       "a Failed scaling activity backs the group off within one round (%ss after asking)"
       % (failed.group(2) if failed else "?"), *logs)
    g = failed and until(20, lambda: (lambda a: a if a["DesiredCapacity"] == 0 else None)(asg(sim, "scarce")))
    ok(g, "the failed launch's desired capacity is given back (ASG scarce back at 0)", *logs)
    failed = until(40, lambda: log_has(run["log"], r"^\S+ warn  scale_up fleetscarce \+1 failed after [0-9.]+s: "
                                                   r"0 of 1 created; no capacity: CreateFleet made 0 of 1 "
                                                   r".*InsufficientInstanceCapacity.*group backed off"))
    ok(failed, "fleet: CreateFleet's capacity errors back the group off at once", *logs)
    stop(run["proc"])
    stop(sim["proc"])


def phase_throttle():
    faults = "  - {kind: throttle, rate: 0.5}\n"
    sim = start_sim("throttle", scenario("throttle", GROUPS, AWS_GROUPS,
                                         pod("batch", "2s", 4, "workers") +
                                         pod("fleetjob", "2s", 2, "burst"), faults))
    run = start_run(sim, "throttle")
    logs = (run["log"], sim["log"])
    ran = until(120, lambda: pods_running(sim, "batch-") and pods_running(sim, "fleetjob-"))
    ran = pods_running(sim, "batch-")
    g = asg(sim, "workers")
    used = len({p["spec"]["nodeName"] for p in ran}) if ran else -1
    ok(ran and g["DesiredCapacity"] == len(live(g)) == used,
       "throttled calls are retried, slower: every batch pod runs and the ASG has just what they use "
       "(desired %d, %d instances, %d used)" % (g["DesiredCapacity"], len(live(g)), used), *logs)
    fleet = pods_running(sim, "fleetjob-")
    ids = sim["ec2"].describe_instances(Filters=[
        {"Name": "tag:luascale.io/node-group", "Values": ["burst"]},
        {"Name": "instance-state-name", "Values": ["pending", "running"]}])["Reservations"]
    n_fleet = sum(len(r["Instances"]) for r in ids)
    ok(fleet and n_fleet == len({p["spec"]["nodeName"] for p in fleet}),
       "under throttling every fleet pod runs, on exactly the instances launched (%d)"
       % n_fleet, *logs)
    throttles = re.findall(r"aws: (\w+) throttled \((RequestLimitExceeded|Throttling)", open(run["log"]).read())
    ok(throttles, "the cloud did throttle, and luascale said so (%d times: %s)"
       % (len(throttles), ", ".join(sorted({a for a, _ in throttles}))), *logs)
    stop(run["proc"])
    stop(sim["proc"])


def all_placed_or_marked(sim, prefix, n):
    """The n pods named prefix* are there, and each runs or is marked
    Unschedulable by the scheduler: a scale-up started now sees them all."""
    pods = [p for p in kube(sim, "/api/v1/pods")["items"] if p["metadata"]["name"].startswith(prefix)]
    return len(pods) == n and all(
        p["status"].get("phase") == "Running"
        or any(c.get("type") == "PodScheduled" and c.get("reason") == "Unschedulable"
               for c in p["status"].get("conditions", []))
        for p in pods)


def phase_restart():
    sim = start_sim("restart", scenario("restart", GROUPS, AWS_GROUPS,
                                        pod("batch", "2s", 3, "workers"), boot="8s"))
    # every pod the scale-up is for is pending and marked before the first
    # luascale starts: it reacts within batch_new_pod, and would otherwise
    # ask for the first pod's node alone, leaving the rest to the second
    until(30, lambda: all_placed_or_marked(sim, "batch-", 3))
    run = start_run(sim, "restart-1")
    logs = [run["log"], sim["log"]]
    up = until(40, lambda: log_has(run["log"], r"ASG workers desired capacity 1 -> (\d+)"))
    stop(run["proc"], signal.SIGKILL)  # in the middle: instances asked for, not yet nodes
    ok(up, "a scale-up started (desired 1 -> %s) and luascale was killed in the middle"
       % (up.group(1) if up else "?"), *logs)
    want = int(up.group(1)) if up else 0
    run2 = start_run(sim, "restart-2")
    logs.append(run2["log"])
    ran = until(60, lambda: pods_running(sim, "batch-"))
    g = asg(sim, "workers")
    ok(ran and g["DesiredCapacity"] == want and len(live(g)) == want,
       "after the restart every pod runs and nothing was launched twice (desired %d, want %d)"
       % (g["DesiredCapacity"], want), *logs)
    ok(not log_has(run2["log"], r"desired capacity \d+ -> "),
       "the second luascale launched nothing: the ASG's desired capacity counted the instances on their way",
       *logs)
    stop(run2["proc"])
    stop(sim["proc"])


def fleet_instances(sim):
    res = sim["ec2"].describe_instances(Filters=[
        {"Name": "tag:luascale.io/node-group", "Values": ["burst"]},
        {"Name": "instance-state-name", "Values": ["pending", "running"]}])["Reservations"]
    return sorted(i["InstanceId"] for r in res for i in r["Instances"])


def phase_restart_fleet():
    sim = start_sim("restartf", scenario("restartf", GROUPS, AWS_GROUPS,
                                         pod("fleetjob", "2s", 2, "burst"), boot="8s"))
    until(30, lambda: all_placed_or_marked(sim, "fleetjob-", 2))
    run = start_run(sim, "restartf-1")
    logs = [run["log"], sim["log"]]
    # killed once the fleet's instances exist and before they are nodes
    made = until(40, lambda: len(fleet_instances(sim)) >= 2)
    stop(run["proc"], signal.SIGKILL)
    ok(made and not pods_running(sim, "fleetjob-"),
       "fleet: CreateFleet made the instances and luascale was killed before they were nodes", *logs)
    first = fleet_instances(sim)
    run2 = start_run(sim, "restartf-2")
    logs.append(run2["log"])
    ran = until(60, lambda: pods_running(sim, "fleetjob-"))
    ok(ran and fleet_instances(sim) == first,
       "fleet: after the restart every pod runs on the instances launched before it (%s)" % ", ".join(first),
       *logs)
    ok(not log_has(run2["log"], r"scale_up burst \+"),
       "fleet: the second luascale launched nothing: the tagged instances counted as on their way", *logs)
    stop(run2["proc"])
    stop(sim["proc"])


TYPES_GROUPS = ("  - {name: workers, min: 1, max: 1, template: {allocatable: {cpu: 1, memory: 2Gi, pods: 110}}}\n"
                "  - {name: mixed, min: 0, max: 4, template: {allocatable: {cpu: 2, memory: 8Gi, pods: 110}}}\n")
TYPES_AWS = """\
    workers:
      zones: [us-east-1a]
      instance_types: [m5.large]
    mixed:
      mode: fleet
      zones: [us-east-1a]
      instance_types: [m5.large, m5.xlarge, m5.2xlarge]
"""
TYPES_CONFIG = """\
node_groups:
  - name: mixed
    max: 4
    aws:
      mode: fleet
      launch_template: mixed
      instance_types: [m5.large, m5.xlarge, m5.2xlarge]
      placements: [{zone: us-east-1a}]
      allocation_strategy: prioritized
"""


def phase_fleet_types():
    """A fleet group of three types, m5.large first in priority, and two
    pending pods of 3 CPUs each: they fit no m5.large; the fewest new nodes
    are one m5.2xlarge, and the plan names the one type that takes both
    pods; CreateFleet makes that type, not its first, and only one: the
    node on its way counts for the pods while it boots."""
    wide = "  - {name: wide, at: 2s, count: 2, requests: {cpu: 3, memory: 1Gi}}\n"
    sim = start_sim("types", scenario("types", TYPES_GROUPS, TYPES_AWS, wide))
    run = start_run(sim, "types", groups=TYPES_CONFIG)
    logs = (run["log"], sim["log"])
    ran = until(60, lambda: pods_running(sim, "wide-"))
    ok(ran, "instance types: the pods that fit no m5.large run", *logs)
    ok(log_has(run["log"], r"plan: scale_up mixed \+1 \(m5\.2xlarge\): 2 pending pod\(s\): 2 fit 1 new mixed "
               r"node\(s\)"),
       "instance types: the plan names the one type that takes the pods of its new node", *logs)
    insts = [i for r in sim["ec2"].describe_instances(Filters=[
        {"Name": "tag:luascale.io/node-group", "Values": ["mixed"]},
        {"Name": "instance-state-name", "Values": ["pending", "running"]}])["Reservations"]
        for i in r["Instances"]]
    ok([i["InstanceType"] for i in insts] == ["m5.2xlarge"],
       "instance types: EC2 shows one m5.2xlarge, no m5.large: %s" % [i["InstanceType"] for i in insts], *logs)
    if ran and insts:
        ns = nodes(sim)
        on = {p["spec"]["nodeName"] for p in ran}
        ok(len(on) == 1 and ns[on.pop()]["spec"]["providerID"].endswith("/" + insts[0]["InstanceId"]),
           "instance types: both pods run on the m5.2xlarge's node", *logs)
    stop(run["proc"])
    stop(sim["proc"])


try:
    # independent phases, each with its own simulator: at the same time
    H.phases([phase_scale_up_and_down, phase_faults, phase_throttle, phase_restart, phase_restart_fleet,
              phase_fleet_types], limit=330)
finally:
    H.finish()
