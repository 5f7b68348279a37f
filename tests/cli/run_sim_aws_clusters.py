#!/usr/bin/python3
# run_sim_aws_clusters.py: two clusters in one AWS account and region, each
# with a fleet group named "burst", against one `luascale sim --aws-port`:
#   1. a config with a fleet group and no provider.aws.cluster_name is
#      refused by `luascale check`, naming the group and what to set;
#   2. the other cluster's fleet instances (made with boto3's CreateFleet,
#      tagged luascale.io/node-group=burst and luascale.io/cluster=blue)
#      are not counted by the luascale of cluster "sim": it launches for
#      its pending pod, and tags its instance luascale.io/cluster=sim;
#   3. each luascale counts only its own (luascale_node_group_target_size
#      of burst: 1 for "sim", 2 for "blue", whose luascale runs too and
#      launches nothing: its own 2 are on their way for the pod), and EC2's
#      DescribeInstances tag filters, through boto3, tell them apart.
# Usage: run_sim_aws_clusters.py LUASCALE SOURCE_DIR. Fails when boto3 is missing.
import os
import re
import subprocess
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simharness import Harness, log_has, pod, read_env_file, stop, until  # noqa: E402

try:
    import boto3
    import botocore.config
except ImportError as e:  # a missing client is a failure, never a skip
    print("not ok - boto3 not importable under %s: %s" % (sys.executable, e))
    sys.exit(1)

H = Harness(sys.argv[1], sys.argv[2], "run_sim_aws_clusters.")
ok = H.ok

CREDS = {"access_key_id": "AKIASIMULATED0000001",
         "secret_access_key": "c2ltdWxhdGVkLXNlY3JldC1rZXktbm90LXJlYWw"}

GROUPS = """\
  - {name: workers, min: 1, max: 6, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}, labels: {pool: workers}}}
  - {name: burst, min: 0, max: 6, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}, labels: {pool: burst}}}
"""
AWS_GROUPS = """\
    workers:
      zones: [us-east-1a]
      instance_types: [m5.xlarge]
    burst:
      mode: fleet
      zones: [us-east-1a, us-east-1b]
      instance_types: [m5.xlarge]
"""


def config_groups(cluster):
    cluster_line = "  aws: {cluster_name: %s}\n" % cluster if cluster else ""
    return ("node_groups:\n"
            "  - name: workers\n"
            "  - name: burst\n"
            "    max: 6\n"
            "    template:\n"
            "      allocatable: {cpu: 4, memory: 16Gi, pods: 110}\n"
            "      labels: {pool: burst}\n"
            "    aws:\n"
            "      mode: fleet\n"
            "      launch_template: burst\n"
            "      instance_types: [m5.xlarge]\n"
            "      placements: [{zone: us-east-1a}, {zone: us-east-1b}]\n"
            "provider:\n  kind: aws\n  qps: 20\n  burst: 20\n" + cluster_line)


def start_sim(name):
    # instances boot slowly: none is a node while the test looks, so a
    # scale-up can only come from what luascale counts as on its way
    body = ("node_groups:\n" + GROUPS + "workloads:\n" + pod("fleetjob", "3s", 1, "burst") +
            "aws:\n  region: us-east-1\n  cluster: sim\n  credentials:\n"
            "    access_key_id: %s\n    secret_access_key: %s\n  groups:\n%s"
            % (CREDS["access_key_id"], CREDS["secret_access_key"], AWS_GROUPS))
    scen = H.scenario(name, body, boot="120s")
    env_file = H.path(name + ".env")
    sim = H.start_sim(name, scen, ["--aws-port", "0", "--aws-env-out", env_file],
                      [r"AWS face .* at http://127\.0\.0\.1:(\d+)"])
    env = read_env_file(env_file)
    sess = boto3.session.Session(aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
                                 aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
                                 region_name="us-east-1")
    cfg = botocore.config.Config(retries={"max_attempts": 10, "mode": "standard"})
    sim.update({"env": env, "ec2": sess.client("ec2", endpoint_url=env["AWS_ENDPOINT_URL"], config=cfg)})
    return sim


def aws_env(sim):
    env = {"AWS_EC2_METADATA_DISABLED": "true"}
    for k in ("AWS_ENDPOINT_URL", "AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        env[k] = sim["env"][k]
    return env


def fleet_ids(sim, cluster=None):
    filters = [{"Name": "tag:luascale.io/node-group", "Values": ["burst"]},
               {"Name": "instance-state-name", "Values": ["pending", "running"]}]
    if cluster:
        filters.append({"Name": "tag:luascale.io/cluster", "Values": [cluster]})
    res = sim["ec2"].describe_instances(Filters=filters)["Reservations"]
    return sorted(i["InstanceId"] for r in res for i in r["Instances"])


def target_size(run, group):
    """luascale_node_group_target_size of 'group' from the run's /metrics, or None."""
    m = log_has(run["log"], r"serving /metrics.* \(port (\d+)\)")
    if not m:
        return None
    try:
        with urllib.request.urlopen("http://127.0.0.1:%s/metrics" % m.group(1), timeout=5) as r:
            text = r.read().decode()
    except OSError:
        return None
    v = re.search(r'^luascale_node_group_target_size\{group="%s"\} (\S+)$' % group, text, re.M)
    return float(v.group(1)) if v else None


def phase_refused_without_cluster():
    cfg = H.path("nocluster.yaml")
    with open(cfg, "w") as f:
        f.write("cluster: {kubeconfig: /nonexistent, context: x}\n")
        f.write("policy: {path: %s}\n" % os.path.join(H.src, "policies/default.lua"))
        f.write(config_groups(None))
    p = subprocess.run([H.luascale, "check", "--config", cfg], capture_output=True, text=True, timeout=60)
    out = p.stdout + p.stderr
    ok(p.returncode != 0 and re.search(r"nocluster\.yaml:\d+:\d+: node_groups\[1\]\.aws: node group \"burst\" "
                                       r"is a fleet group \(mode: fleet\): set provider\.aws\.cluster_name", out),
       "a fleet group without provider.aws.cluster_name is refused, naming the group and the key to set "
       "(exit %d: %s)" % (p.returncode, out.strip()[-400:]))


def phase_two_clusters():
    sim = start_sim("two")
    # the other cluster's two instances of its own group "burst"
    made = sim["ec2"].create_fleet(
        Type="instant",
        LaunchTemplateConfigs=[{"LaunchTemplateSpecification": {"LaunchTemplateName": "burst", "Version": "$Default"},
                                "Overrides": [{"InstanceType": "m5.xlarge", "AvailabilityZone": "us-east-1a"}]}],
        TargetCapacitySpecification={"TotalTargetCapacity": 2, "DefaultTargetCapacityType": "on-demand"},
        TagSpecifications=[{"ResourceType": "instance",
                            "Tags": [{"Key": "luascale.io/node-group", "Value": "burst"},
                                     {"Key": "luascale.io/cluster", "Value": "blue"}]}])
    blue = sorted(i for f in made.get("Instances", []) for i in f.get("InstanceIds", []))
    ok(len(blue) == 2 and fleet_ids(sim, "blue") == blue,
       "the other cluster's fleet made 2 instances, found by the tag:luascale.io/cluster filter (%s)"
       % ", ".join(blue), sim["log"])

    run = H.start_run(sim, "two-sim", config_groups("sim"), aws_env(sim))
    other = H.start_run(sim, "two-blue", config_groups("blue"), aws_env(sim))
    logs = (run["log"], other["log"], sim["log"])

    up = until(40, lambda: log_has(run["log"], r"scale_up burst \+(\d+)"))
    ok(up and up.group(1) == "1",
       "cluster sim does not count cluster blue's instances: it launches for its pending pod (+%s)"
       % (up.group(1) if up else "?"), *logs)
    mine = until(30, lambda: fleet_ids(sim, "sim"))
    ok(mine and len(mine) == 1 and not set(mine) & set(blue),
       "its instance carries luascale.io/cluster=sim (%s)" % ", ".join(mine or []), *logs)
    ok(fleet_ids(sim, "blue") == blue and sorted(fleet_ids(sim)) == sorted(blue + (mine or [])),
       "DescribeInstances with both tags tells the clusters apart; the group tag alone finds all 3", *logs)
    t_sim = until(30, lambda: target_size(run, "burst") == 1.0)
    t_blue = until(30, lambda: target_size(other, "burst") == 2.0)
    ok(t_sim and t_blue,
       "each luascale counts only its own fleet instances (burst's target size: sim %s, blue %s)"
       % (target_size(run, "burst"), target_size(other, "burst")), *logs)
    ok(not log_has(other["log"], r"scale_up burst"),
       "cluster blue counts its own 2 instances as on their way for the pod: no scale-up", *logs)
    stop(run["proc"])
    stop(other["proc"])
    stop(sim["proc"])


try:
    H.phases([phase_refused_without_cluster, phase_two_clusters], limit=200)
finally:
    H.finish()
