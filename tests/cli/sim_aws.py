#!/usr/bin/python3
# sim_aws.py: `luascale sim --aws-port` checked by AWS's own clients — awscli
# (/usr/bin/aws) and boto3/botocore under /usr/bin/python3: Auto Scaling
# groups (names, tag filters, pagination), SetDesiredCapacity until instances
# are nodes with aws:/// providerIDs, a Failed scaling activity under an
# InsufficientInstanceCapacity fault, instance types, launch templates,
# CreateFleet with an errorSet entry and an idempotent ClientToken,
# terminating both ways, STS, IMDSv2 and container credentials, a wrong
# secret (SignatureDoesNotMatch), throttling (retries off) and latency.
# Usage: sim_aws.py LUASCALE SOURCE_DIR. Fails when a client is missing.
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

try:
    import boto3
    import botocore.auth
    import botocore.awsrequest
    import botocore.config
    import botocore.credentials
    import botocore.exceptions
    import botocore.utils
except ImportError as e:  # a missing client is a failure, never a skip
    print("not ok - boto3/botocore not importable under %s: %s" % (sys.executable, e))
    sys.exit(1)

AWS = "/usr/bin/aws"
if not os.access(AWS, os.X_OK):
    print("not ok - awscli (%s) is missing: install Debian's awscli" % AWS)
    sys.exit(1)

LUASCALE, SRC = sys.argv[1], sys.argv[2]
SCENARIO = os.path.join(SRC, "tests/cli/sim_aws.yaml")
TMP = tempfile.mkdtemp(prefix="sim_aws.")
procs = []
fails = 0
count = 0


def ok(cond, name, detail=""):
    global fails, count
    count += 1
    if cond:
        print("ok %d - %s" % (count, name))
    else:
        fails += 1
        print("not ok %d - %s" % (count, name))
        if detail:
            for line in str(detail).splitlines()[:20]:
                print("#   " + line)
    return cond


def until(seconds, fn):
    end = time.monotonic() + seconds
    while True:
        v = fn()
        if v:
            return v
        if time.monotonic() > end:
            return v
        time.sleep(0.1)


def start_sim(name, scenario, extra=()):
    out = os.path.join(TMP, name + ".out")
    env_file = os.path.join(TMP, name + ".env")
    log = open(out, "w")
    p = subprocess.Popen([LUASCALE, "sim", "--listen", "127.0.0.1:0", "--scenario", scenario,
                          "--kubeconfig-out", os.path.join(TMP, name + ".kubeconfig"),
                          "--aws-port", "0", "--aws-env-out", env_file] + list(extra),
                         stdout=log, stderr=subprocess.STDOUT)
    procs.append(p)

    def ready():
        try:
            text = open(out).read()
        except OSError:
            return None
        m = re.search(r"serving .* on http://127\.0\.0\.1:(\d+)", text)
        a = re.search(r"AWS face .* at http://127\.0\.0\.1:(\d+)", text)
        return (int(m.group(1)), int(a.group(1))) if m and a else None

    ports = until(20, ready)
    if not ports:
        print("not ok - luascale sim %s did not start:\n%s" % (name, open(out).read()))
        sys.exit(1)
    env = {}
    for line in open(env_file):
        m = re.match(r"^([A-Z0-9_]+)='(.*)'$", line.strip())
        if m:
            env[m.group(1)] = m.group(2)
    return {"kube": ports[0], "aws": ports[1], "env": env, "out": out}


def cleanup():
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
    shutil.rmtree(TMP, ignore_errors=True)


def aws_cli(sim, *args, env_over=None):
    env = {"PATH": "/usr/bin:/bin", "HOME": TMP, "AWS_CONFIG_FILE": "/dev/null",
           "AWS_SHARED_CREDENTIALS_FILE": "/dev/null", "AWS_MAX_ATTEMPTS": "1",
           "AWS_RETRY_MODE": "standard", "AWS_PAGER": "", "AWS_EC2_METADATA_DISABLED": "true"}
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
              "AWS_DEFAULT_REGION"):
        if k in sim["env"]:
            env[k] = sim["env"][k]
    env.update(env_over or {})
    r = subprocess.run([AWS, "--endpoint-url", sim["env"]["AWS_ENDPOINT_URL"],
                        "--region", sim["env"]["AWS_REGION"], "--output", "json"] + list(args),
                       env=env, capture_output=True, text=True, timeout=60)
    data = None
    if r.returncode == 0 and r.stdout.strip():
        data = json.loads(r.stdout)
    return r.returncode, data, r.stderr


def client(sim, service, secret=None, attempts=1):
    e = sim["env"]
    return boto3.session.Session().client(
        service, endpoint_url=e["AWS_ENDPOINT_URL"], region_name=e["AWS_REGION"],
        aws_access_key_id=e["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=secret or e["AWS_SECRET_ACCESS_KEY"],
        aws_session_token=e.get("AWS_SESSION_TOKEN"),
        config=botocore.config.Config(retries={"total_max_attempts": attempts, "mode": "standard"}))


def error_code(fn):
    try:
        fn()
    except botocore.exceptions.ClientError as e:
        return e.response["Error"]["Code"], e.response["ResponseMetadata"]["HTTPStatusCode"]
    return None, 200


def raw(sim, service, params):
    """A request signed by botocore's SigV4Auth, sent as is: (status, body)."""
    e = sim["env"]
    url = e["AWS_ENDPOINT_URL"] + "/"
    body = "&".join("%s=%s" % (k, urllib.parse.quote(str(v), safe="-_.~")) for k, v in params)
    req = botocore.awsrequest.AWSRequest(method="POST", url=url, data=body, headers={
        "Content-Type": "application/x-www-form-urlencoded; charset=utf-8"})
    creds = botocore.credentials.Credentials(e["AWS_ACCESS_KEY_ID"], e["AWS_SECRET_ACCESS_KEY"],
                                             e.get("AWS_SESSION_TOKEN"))
    botocore.auth.SigV4Auth(creds, service, e["AWS_REGION"]).add_auth(req)
    prepared = req.prepare()
    r = urllib.request.Request(url, data=body.encode(), method="POST",
                               headers=dict(prepared.headers.items()))
    try:
        with urllib.request.urlopen(r, timeout=30) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def kube_nodes(sim):
    with urllib.request.urlopen("http://127.0.0.1:%d/api/v1/nodes" % sim["kube"], timeout=10) as r:
        return json.load(r)["items"]


def asg(sim, name):
    groups = client(sim, "autoscaling").describe_auto_scaling_groups(
        AutoScalingGroupNames=[name])["AutoScalingGroups"]
    return groups[0] if groups else None


def main():
    sim = start_sim("main", SCENARIO)
    e = sim["env"]
    ok(e.get("AWS_REGION") == "eu-west-1" and e.get("AWS_ENDPOINT_URL", "").startswith("http://127.0.0.1:"),
       "the env file names the endpoint, the region and the credentials", e)
    asc = client(sim, "autoscaling")
    ec2 = client(sim, "ec2")

    # --- ASGs: names, tag filters, pagination ---
    rc, data, err = aws_cli(sim, "autoscaling", "describe-auto-scaling-groups")
    names = [g["AutoScalingGroupName"] for g in data["AutoScalingGroups"]] if rc == 0 else []
    ok(rc == 0 and names == ["batch", "gpu", "workers"],
       "awscli describe-auto-scaling-groups lists the three ASGs by name (not the fleet group)",
       "%s %s %s" % (rc, names, err))
    w = asg(sim, "workers")
    ok(w and w["MinSize"] == 1 and w["MaxSize"] == 8 and w["DesiredCapacity"] == 2 and
       len(w["Instances"]) == 2 and all(i["LifecycleState"] == "InService" for i in w["Instances"]) and
       w["LaunchTemplate"]["LaunchTemplateName"] == "workers" and
       any(t["Key"] == "k8s.io/cluster-autoscaler/testcluster" and t["Value"] == "owned" for t in w["Tags"]) and
       any(t["Key"] == "k8s.io/cluster-autoscaler/enabled" and t["Value"] == "true" for t in w["Tags"]),
       "workers: min, max, desired 2, two InService instances, its launch template, the CA tags", w)
    rc, data, err = aws_cli(sim, "autoscaling", "describe-auto-scaling-groups", "--filters",
                            "Name=tag:team,Values=web", "Name=tag-key,Values=k8s.io/cluster-autoscaler/enabled")
    ok(rc == 0 and [g["AutoScalingGroupName"] for g in data["AutoScalingGroups"]] == ["workers"],
       "tag:team=web and tag-key filters find workers alone", "%s %s" % (data, err))
    rc, data, err = aws_cli(sim, "autoscaling", "describe-auto-scaling-groups", "--filters",
                            "Name=tag-key,Values=k8s.io/cluster-autoscaler/testcluster")
    ok(rc == 0 and len(data["AutoScalingGroups"]) == 3, "tag-key discovery finds every ASG", err)
    pages = list(asc.get_paginator("describe_auto_scaling_groups").paginate(
        PaginationConfig={"PageSize": 1}))
    ok(len(pages) == 3 and [p["AutoScalingGroups"][0]["AutoScalingGroupName"] for p in pages] ==
       ["batch", "gpu", "workers"] and "NextToken" in pages[0] and "NextToken" not in pages[-1],
       "MaxRecords=1 pages through the ASGs with NextToken", pages)
    ok(error_code(lambda: asc.describe_auto_scaling_groups(MaxRecords=101))[0] == "ValidationError",
       "MaxRecords=101 is a ValidationError")
    status, body = raw(sim, "autoscaling", [("Action", "DescribeAutoScalingGroups"),
                                            ("Version", "2011-01-01"), ("NextToken", "bogus")])
    ok(status == 400 and "<Code>InvalidNextToken</Code>" in body, "a bad NextToken is InvalidNextToken", body)

    # --- scale up: instances, then nodes ---
    rc, _, err = aws_cli(sim, "autoscaling", "set-desired-capacity", "--auto-scaling-group-name",
                         "workers", "--desired-capacity", "4", "--no-honor-cooldown")
    ok(rc == 0, "awscli set-desired-capacity workers 4", err)
    w = until(20, lambda: (lambda g: g if g and sum(i["LifecycleState"] == "InService"
                                                     for i in g["Instances"]) == 4 else None)(asg(sim, "workers")))
    ok(w and w["DesiredCapacity"] == 4, "four workers instances InService", w)
    ids = sorted(i["InstanceId"] for i in w["Instances"]) if w else []
    ok(all(re.match(r"^i-[0-9a-f]{17}$", i) for i in ids) and len(ids) == 4,
       "instance ids are i- and 17 hex digits", ids)
    zones = sorted({i["AvailabilityZone"] for i in w["Instances"]}) if w else []
    ok(zones == ["eu-west-1a", "eu-west-1b"], "the instances spread over the ASG's zones", zones)
    res = ec2.describe_instances(Filters=[{"Name": "tag:aws:autoscaling:groupName", "Values": ["workers"]},
                                          {"Name": "instance-state-name", "Values": ["running"]}])
    insts = [i for r in res["Reservations"] for i in r["Instances"]]
    ok(sorted(i["InstanceId"] for i in insts) == ids and
       all(i["PrivateDnsName"] == "ip-%s.eu-west-1.compute.internal" % i["PrivateIpAddress"].replace(".", "-")
           for i in insts) and all(i["State"]["Name"] == "running" and i["InstanceType"] == "m5.xlarge" for i in insts),
       "DescribeInstances by tag and state shows them running with private DNS names", insts)

    def nodes_for_ids():
        try:
            nodes = kube_nodes(sim)
        except OSError:
            return None
        by_id = {n["spec"].get("providerID", "").rsplit("/", 1)[-1]: n for n in nodes}
        return by_id if all(i in by_id for i in ids) else None
    by_id = until(20, nodes_for_ids)
    ok(by_id is not None, "every instance became a node", by_id and list(by_id))
    if by_id:
        dns = {i["InstanceId"]: (i["PrivateDnsName"], i["Placement"]["AvailabilityZone"]) for i in insts}
        ok(all(by_id[i]["spec"]["providerID"] == "aws:///%s/%s" % (dns[i][1], i) and
               by_id[i]["metadata"]["name"] == dns[i][0] and
               by_id[i]["metadata"]["labels"].get("topology.kubernetes.io/zone") == dns[i][1] for i in ids),
           "nodes are named by private DNS, with providerID aws:///zone/i-... and the zone label",
           [(n["metadata"]["name"], n["spec"]["providerID"]) for n in by_id.values()])
        ips = {i["InstanceId"]: i["PrivateIpAddress"] for i in insts}
        ok(all([a["address"] for a in by_id[i]["status"]["addresses"] if a["type"] == "InternalIP"] ==
               [ips[i]] for i in ids),
           "each node's InternalIP is its instance's private IP address",
           [(i, ips[i], by_id[i]["status"]["addresses"]) for i in ids])
        ok(not any("luascale.io/node-group" in n["metadata"]["labels"] for n in by_id.values()),
           "the nodes carry no luascale.io/node-group label, as EC2's do not",
           [n["metadata"]["labels"] for n in by_id.values()])
    pages = list(ec2.get_paginator("describe_instances").paginate(PaginationConfig={"PageSize": 5}))
    ok(len(pages) >= 1 and sum(len(p["Reservations"]) for p in pages) == 4 and
       len(pages[0]["Reservations"]) <= 5, "DescribeInstances paginates with MaxResults", pages)
    ok(error_code(lambda: ec2.describe_instances(InstanceIds=["i-0123456789abcdef0"]))[0] ==
       "InvalidInstanceID.NotFound", "an unknown instance id is InvalidInstanceID.NotFound")
    ok(error_code(lambda: ec2.describe_instances(Filters=[{"Name": "bogus", "Values": ["x"]}]))[0] ==
       "InvalidParameterValue", "an unknown filter is InvalidParameterValue")

    # --- no capacity: a Failed scaling activity, desired stays ---
    rc, _, err = aws_cli(sim, "autoscaling", "set-desired-capacity", "--auto-scaling-group-name",
                         "gpu", "--desired-capacity", "1")
    ok(rc == 0, "SetDesiredCapacity succeeds without capacity", err)

    def failed_activity():
        acts = asc.describe_scaling_activities(AutoScalingGroupName="gpu")["Activities"]
        return [a for a in acts if a["StatusCode"] == "Failed"] or None
    rc, data, err = aws_cli(sim, "autoscaling", "describe-scaling-activities",
                            "--auto-scaling-group-name", "gpu")
    ok(rc == 0 and isinstance(data["Activities"], list), "awscli describe-scaling-activities parses", err)
    failed = until(15, failed_activity)
    ok(failed and "InsufficientInstanceCapacity" in failed[0].get("StatusMessage", "") and
       "g4dn.xlarge" in failed[0]["StatusMessage"] and failed[0]["AutoScalingGroupName"] == "gpu",
       "describe-scaling-activities shows a Failed activity with InsufficientInstanceCapacity", failed)
    g = asg(sim, "gpu")
    ok(g and g["DesiredCapacity"] == 1 and g["Instances"] == [],
       "the gpu ASG keeps desired 1 above its 0 instances", g)
    retried = until(10, lambda: (lambda f: f if f and len(f) >= 2 else None)(failed_activity()))
    ok(retried, "the ASG retries the launch (a second Failed activity)", retried)
    acts = asc.describe_scaling_activities(AutoScalingGroupName="workers", MaxRecords=1)
    ok(len(acts["Activities"]) == 1 and "NextToken" in acts and
       acts["Activities"][0]["Description"].startswith("Launching a new EC2 instance: i-"),
       "workers' activities page with MaxRecords=1, newest first", acts)
    ok(error_code(lambda: asc.set_desired_capacity(AutoScalingGroupName="workers", DesiredCapacity=9))[0] ==
       "ValidationError", "a desired capacity above max is a ValidationError")
    ok(error_code(lambda: asc.set_desired_capacity(AutoScalingGroupName="nosuch", DesiredCapacity=1))[0] ==
       "ValidationError", "an unknown ASG is a ValidationError")
    status, body = raw(sim, "autoscaling", [("Action", "SetDesiredCapacity"), ("Version", "2011-01-01"),
                                            ("AutoScalingGroupName", "workers"), ("DesiredCapacity", "4x")])
    ok(status == 400 and "<Code>ValidationError</Code>" in body and "<Type>Sender</Type>" in body,
       "DesiredCapacity=4x is a ValidationError in the Query error shape", body)
    status, body = raw(sim, "ec2", [("Action", "Frobnicate"), ("Version", "2016-11-15")])
    ok(status == 400 and "<Response><Errors><Error><Code>InvalidAction</Code>" in body and "<RequestID>" in body,
       "an unknown EC2 action is InvalidAction in the EC2 error shape", body)

    # --- instance types and launch templates ---
    rc, data, err = aws_cli(sim, "ec2", "describe-instance-types", "--instance-types", "g4dn.xlarge", "m5.large")
    types = {t["InstanceType"]: t for t in data["InstanceTypes"]} if rc == 0 else {}
    ok(rc == 0 and types["g4dn.xlarge"]["VCpuInfo"]["DefaultVCpus"] == 4 and
       types["g4dn.xlarge"]["MemoryInfo"]["SizeInMiB"] == 16384 and
       types["g4dn.xlarge"]["GpuInfo"]["Gpus"][0]["Count"] == 1 and
       types["m5.large"]["VCpuInfo"]["DefaultVCpus"] == 2 and "GpuInfo" not in types["m5.large"],
       "awscli describe-instance-types: vCPUs, memory and GPUs", "%s %s" % (types, err))
    ok(error_code(lambda: ec2.describe_instance_types(InstanceTypes=["x1.nope"]))[0] == "InvalidInstanceType",
       "an unknown instance type is InvalidInstanceType")
    rc, data, err = aws_cli(sim, "ec2", "describe-launch-template-versions", "--launch-template-name",
                            "workers", "--versions", "$Default")
    v = data["LaunchTemplateVersions"][0] if rc == 0 else {}
    ok(rc == 0 and v.get("LaunchTemplateData", {}).get("InstanceType") == "m5.xlarge" and
       v.get("DefaultVersion") is True and v.get("LaunchTemplateId", "").startswith("lt-"),
       "awscli describe-launch-template-versions $Default gives the template's instance type", "%s %s" % (data, err))
    v2 = ec2.describe_launch_template_versions(LaunchTemplateId=v.get("LaunchTemplateId", "lt-x"),
                                               Versions=["$Latest"]) if v else {}
    ok(v2 and v2["LaunchTemplateVersions"][0]["LaunchTemplateName"] == "workers",
       "the same template by id and $Latest", v2)
    ok(error_code(lambda: ec2.describe_launch_template_versions(LaunchTemplateName="nosuch"))[0] ==
       "InvalidLaunchTemplateName.NotFoundException", "an unknown launch template is NotFound")

    # --- CreateFleet: ids at once, an errorSet entry, idempotent ClientToken ---
    fleet_args = dict(
        Type="instant", ClientToken="fleet-token-1",
        LaunchTemplateConfigs=[{"LaunchTemplateSpecification": {"LaunchTemplateName": "burst", "Version": "$Default"},
                                "Overrides": [{"InstanceType": "m5.large", "AvailabilityZone": "eu-west-1b", "Priority": 1},
                                              {"InstanceType": "c5.xlarge", "AvailabilityZone": "eu-west-1a", "Priority": 2}]}],
        TargetCapacitySpecification={"TotalTargetCapacity": 2, "DefaultTargetCapacityType": "on-demand"},
        OnDemandOptions={"AllocationStrategy": "prioritized"},
        TagSpecifications=[{"ResourceType": "instance", "Tags": [{"Key": "karpenter.sh/nodepool", "Value": "default"}]}])
    f1 = ec2.create_fleet(**fleet_args)
    fids = [i for it in f1["Instances"] for i in it["InstanceIds"]]
    ok(len(fids) == 2 and f1["FleetId"].startswith("fleet-") and len(f1["Errors"]) == 1 and
       f1["Errors"][0]["ErrorCode"] == "InsufficientInstanceCapacity" and
       f1["Errors"][0]["LaunchTemplateAndOverrides"]["Overrides"]["InstanceType"] == "m5.large",
       "CreateFleet gives two ids, and an InsufficientInstanceCapacity errorSet entry for the pool that ran out", f1)
    ok({(it["InstanceType"], it["LaunchTemplateAndOverrides"]["Overrides"]["AvailabilityZone"]) for it in f1["Instances"]} ==
       {("m5.large", "eu-west-1b"), ("c5.xlarge", "eu-west-1a")},
       "the fleet's instances are in the zones of their overrides", f1["Instances"])
    f2 = ec2.create_fleet(**fleet_args)
    ok(f2["FleetId"] == f1["FleetId"] and [i for it in f2["Instances"] for i in it["InstanceIds"]] == fids,
       "the same ClientToken answers the same fleet", f2)
    res = ec2.describe_instances(Filters=[{"Name": "tag:karpenter.sh/nodepool", "Values": ["default"]}])
    tagged = sorted(i["InstanceId"] for r in res["Reservations"] for i in r["Instances"])
    ok(tagged == sorted(fids), "nothing was launched twice; the request's tags are on the instances", tagged)
    other = dict(fleet_args, TargetCapacitySpecification={"TotalTargetCapacity": 3,
                                                          "DefaultTargetCapacityType": "on-demand"})
    ok(error_code(lambda: ec2.create_fleet(**other))[0] == "IdempotentParameterMismatch",
       "the token with other parameters is IdempotentParameterMismatch")
    rc, data, err = aws_cli(sim, "ec2", "create-fleet", "--type", "instant", "--client-token", "cli-token",
                            "--launch-template-configs",
                            "LaunchTemplateSpecification={LaunchTemplateName=burst,Version=$Default},Overrides=[{InstanceType=c5.xlarge,SubnetId=%s}]"
                            % insts[0]["SubnetId"] if insts else "x",
                            "--target-capacity-specification", "TotalTargetCapacity=1,DefaultTargetCapacityType=on-demand")
    ok(rc == 0 and len(data["Instances"][0]["InstanceIds"]) == 1 and data["Errors"] == [],
       "awscli create-fleet by subnet launches one", "%s %s" % (data, err))

    # --- terminate both ways ---
    victim = ids[0] if ids else "i-0"
    rc, data, err = aws_cli(sim, "autoscaling", "terminate-instance-in-auto-scaling-group", "--instance-id",
                            victim, "--should-decrement-desired-capacity")
    ok(rc == 0 and data["Activity"]["Description"] == "Terminating EC2 instance: %s" % victim,
       "awscli terminate-instance-in-auto-scaling-group answers its activity", "%s %s" % (data, err))
    w = asg(sim, "workers")
    ok(w and w["DesiredCapacity"] == 3 and
       [i["LifecycleState"] for i in w["Instances"] if i["InstanceId"] == victim] in (["Terminating"], []),
       "desired drops to 3 and the instance is terminating", w)
    ok(error_code(lambda: asc.terminate_instance_in_auto_scaling_group(
        InstanceId="i-0123456789abcdef0", ShouldDecrementDesiredCapacity=True))[0] == "ValidationError",
       "an unknown instance is a ValidationError")
    rc, data, err = aws_cli(sim, "ec2", "terminate-instances", "--instance-ids", *fids)
    ok(rc == 0 and sorted(i["InstanceId"] for i in data["TerminatingInstances"]) == sorted(fids) and
       all(i["CurrentState"]["Name"] == "shutting-down" and i["PreviousState"]["Name"] in ("pending", "running")
           for i in data["TerminatingInstances"]),
       "awscli terminate-instances: running -> shutting-down", "%s %s" % (data, err))
    gone = until(10, lambda: all(i["State"]["Name"] == "terminated" for r in ec2.describe_instances(
        InstanceIds=fids)["Reservations"] for i in r["Instances"]))
    ok(gone, "the fleet's instances end terminated")

    # --- signatures ---
    rc, _, err = aws_cli(sim, "ec2", "describe-instances", env_over={"AWS_SECRET_ACCESS_KEY": "wrong"})
    ok(rc != 0 and "SignatureDoesNotMatch" in err, "awscli with a wrong secret: SignatureDoesNotMatch", err)
    ok(error_code(lambda: client(sim, "autoscaling", secret="wrong").describe_auto_scaling_groups()) ==
       ("SignatureDoesNotMatch", 403), "boto3 with a wrong secret: SignatureDoesNotMatch, 403")
    rc, _, err = aws_cli(sim, "ec2", "describe-instances", env_over={"AWS_SESSION_TOKEN": "other"})
    ok(rc != 0 and "AuthFailure" in err, "a wrong session token is refused (AuthFailure)", err)

    # --- STS ---
    rc, data, err = aws_cli(sim, "sts", "get-caller-identity")
    ok(rc == 0 and data["Account"] == "210987654321", "awscli sts get-caller-identity", "%s %s" % (data, err))
    rc, data, err = aws_cli(sim, "sts", "assume-role-with-web-identity", "--role-arn",
                            "arn:aws:iam::210987654321:role/luascale", "--role-session-name", "test",
                            "--web-identity-token", "eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl",
                            env_over={"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": ""})
    ok(rc == 0 and data["Credentials"]["AccessKeyId"] == e["AWS_ACCESS_KEY_ID"] and
       "Expiration" in data["Credentials"] and data["AssumedRoleUser"]["Arn"].endswith(":assumed-role/luascale/test"),
       "unsigned assume-role-with-web-identity gives the scenario's credentials with an Expiration",
       "%s %s" % (data, err))
    rc, data, err = aws_cli(sim, "sts", "assume-role-with-web-identity", "--role-arn",
                            "arn:aws:iam::210987654321:role/luascale", "--role-session-name", "test",
                            "--web-identity-token", "not-a-jwt",
                            env_over={"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": ""})
    ok(rc != 0 and "InvalidIdentityToken" in err, "a token that is no JWT is InvalidIdentityToken", err)

    # --- IMDS and container credentials, through botocore's own fetchers ---
    base = e["LUASCALE_SIM_AWS_IMDS"]
    fetcher = botocore.utils.InstanceMetadataFetcher(
        timeout=5, num_attempts=1, base_url=base + "/")
    creds = fetcher.retrieve_iam_role_credentials()
    ok(creds.get("role_name") == "test-node-role" and creds.get("access_key") == e["AWS_ACCESS_KEY_ID"] and
       creds.get("token") == e["AWS_SESSION_TOKEN"] and creds.get("expiry_time"),
       "botocore's IMDS fetcher gets the role's credentials (IMDSv2)", {k: v for k, v in creds.items()
                                                                       if k in ("role_name", "expiry_time")})
    region = botocore.utils.InstanceMetadataRegionFetcher(
        timeout=5, num_attempts=1, base_url=base + "/").retrieve_region()
    ok(region == "eu-west-1", "botocore's IMDS region fetcher reads the region", region)
    with urllib.request.urlopen(base + "/latest/meta-data/placement/availability-zone", timeout=5) as r:
        ok(r.status == 200 and r.read().decode() == "eu-west-1a", "IMDSv1 GET is allowed by default")
    bad = urllib.request.Request(base + "/latest/meta-data/iam/security-credentials/",
                                 headers={"X-aws-ec2-metadata-token": "bogus"})
    try:
        urllib.request.urlopen(bad, timeout=5)
        code = 200
    except urllib.error.HTTPError as err:
        code = err.code
    ok(code == 401, "a wrong IMDSv2 token is 401", code)
    cp = botocore.credentials.ContainerProvider(environ={
        "AWS_CONTAINER_CREDENTIALS_FULL_URI": e["LUASCALE_SIM_AWS_CONTAINER_URI"],
        "AWS_CONTAINER_AUTHORIZATION_TOKEN": e["LUASCALE_SIM_AWS_CONTAINER_TOKEN"]})
    c = cp.load()
    fc = c.get_frozen_credentials() if c else None
    ok(fc and fc.access_key == e["AWS_ACCESS_KEY_ID"] and fc.token == e["AWS_SESSION_TOKEN"],
       "botocore's container provider gets credentials with the token")
    cp = botocore.credentials.ContainerProvider(environ={
        "AWS_CONTAINER_CREDENTIALS_FULL_URI": e["LUASCALE_SIM_AWS_CONTAINER_URI"],
        "AWS_CONTAINER_AUTHORIZATION_TOKEN": "wrong"})
    try:
        cp.load().get_frozen_credentials()
        refused = False
    except Exception:
        refused = True
    ok(refused, "container credentials with a wrong token are refused")

    # --- a second world: an API limit, IMDS v2 only, latency ---
    text = open(SCENARIO).read()
    text = text.replace("  shutdown_delay: 2s\n", "  shutdown_delay: 2s\n  api_qps: 0.01\n  api_burst: 2\n")
    text = text.replace("    role: test-node-role\n", "    role: test-node-role\n    v2_only: true\n")
    limited = os.path.join(TMP, "limited.yaml")
    open(limited, "w").write(text)
    sim2 = start_sim("limited", limited, ["--fault", "latency=300ms"])
    t0 = time.monotonic()
    rc1, _, err1 = aws_cli(sim2, "ec2", "describe-instances")
    took = time.monotonic() - t0
    rc2, _, err2 = aws_cli(sim2, "autoscaling", "describe-auto-scaling-groups")
    ok(rc1 == 0 and rc2 == 0, "the first two calls fit the API's burst", err1 + err2)
    ok(took >= 0.3, "latency=300ms delays the answer", took)
    rc, _, err = aws_cli(sim2, "ec2", "describe-instances")
    ok(rc != 0 and "RequestLimitExceeded" in err, "past the burst EC2 answers RequestLimitExceeded (no retries)", err)
    ok(error_code(lambda: client(sim2, "ec2").describe_instances()) == ("RequestLimitExceeded", 503),
       "boto3 sees RequestLimitExceeded with HTTP 503")
    ok(error_code(lambda: client(sim2, "autoscaling").describe_auto_scaling_groups()) == ("Throttling", 400),
       "boto3 sees Auto Scaling's Throttling with HTTP 400")
    rc, _, err = aws_cli(sim2, "autoscaling", "set-desired-capacity", "--auto-scaling-group-name", "workers",
                         "--desired-capacity", "3")
    ok(rc != 0 and "Throttling" in err, "awscli set-desired-capacity throttled: Throttling", err)
    try:
        urllib.request.urlopen(sim2["env"]["LUASCALE_SIM_AWS_IMDS"] + "/latest/meta-data/placement/region", timeout=5)
        code = 200
    except urllib.error.HTTPError as err:
        code = err.code
    ok(code == 401, "with imds.v2_only an IMDSv1 GET is 401", code)
    creds = botocore.utils.InstanceMetadataFetcher(
        timeout=5, num_attempts=1,
        base_url=sim2["env"]["LUASCALE_SIM_AWS_IMDS"] + "/"
    ).retrieve_iam_role_credentials()
    ok(creds.get("role_name") == "test-node-role", "with imds.v2_only the token flow still works")

    r = subprocess.run([LUASCALE, "sim", "--listen", "127.0.0.1:0", "--scenario",
                        os.path.join(SRC, "examples/scenarios/smoke.yaml"), "--kubeconfig-out",
                        os.path.join(TMP, "plain.kubeconfig"), "--aws-port", "0"],
                       capture_output=True, text=True, timeout=30)
    ok(r.returncode != 0 and "has no aws: section" in r.stderr,
       "--aws-port with a scenario that has no aws: section is refused", r.stderr)

    for p in procs:
        ok(p.poll() is None, "luascale sim is still running")


try:
    main()
except Exception as ex:  # an unexpected answer is a failure with its story
    import traceback
    fails += 1
    print("not ok - unexpected: %s" % ex)
    for line in traceback.format_exc().splitlines():
        print("#   " + line)
finally:
    if fails:
        for name in ("main", "limited"):
            path = os.path.join(TMP, name + ".out")
            if os.path.exists(path):
                for line in open(path).read().splitlines()[-15:]:
                    print("#   %s: %s" % (name, line))
    cleanup()
print("1..%d" % count)
sys.exit(1 if fails else 0)
