#!/usr/bin/python3
# sim_sqs.py: the SQS queues of `luascale sim --aws-port` checked by boto3's
# own SQS client under /usr/bin/python3, in both protocols SQS speaks: the
# Query protocol of Debian's botocore model, and AWS JSON 1.0 (the same
# model switched to "json" with target prefix AmazonSQS, as current SDKs
# ship it). CreateQueue, GetQueueUrl, SendMessage, ReceiveMessage (the MD5s
# of the bodies checked), visibility, DeleteMessage, errors; then an
# `interrupt` fault's EventBridge-shaped messages in the scenario's queue
# and its instances reclaimed after the warning.
# Usage: sim_sqs.py LUASCALE SOURCE_DIR. Fails when boto3 is missing.
import copy
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

try:
    import boto3
    import botocore.config
    import botocore.exceptions
    import botocore.loaders
    import botocore.session
except ImportError as e:  # a missing client is a failure, never a skip
    print("not ok - boto3/botocore not importable under %s: %s" % (sys.executable, e))
    sys.exit(1)

LUASCALE = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="sim_sqs.")
procs = []
fails = 0
count = 0

SCENARIO = """
seed: 3
start: "2026-12-01T08:00:00Z"
duration: 1h
node_groups:
  - {name: spot, min: 0, max: 10, template: {allocatable: {cpu: 2, memory: 8Gi, pods: 110}}}
cloud: {boot_delay: 1s, boot_jitter: 0s, launch_latency: 100ms, terminate_latency: 100ms, shutdown_delay: 1s}
cluster: {register_delay: 200ms}
initial_nodes: [{group: spot, count: 4}]
faults:
  - {kind: interrupt, group: spot, at: 4s, count: 2, warning: 4s}
aws:
  region: eu-west-1
  account: "210987654321"
  cluster: t
  interruption_queue: luascale-interruptions
  credentials:
    access_key_id: AKIATESTSIMULATED001
    secret_access_key: dGVzdC1zZWNyZXQta2V5LWZvci10aGUtc2ltdWxhdG9y
  groups:
    spot: {zones: [eu-west-1a], instance_types: [m5.large]}
"""


def ok(cond, name, detail=""):
    global fails, count
    count += 1
    if cond:
        print("ok %d - %s" % (count, name))
    else:
        fails += 1
        print("not ok %d - %s" % (count, name))
        for line in str(detail).splitlines()[:20]:
            print("#   " + line)
    return cond


def until(seconds, fn):
    end = time.monotonic() + seconds
    while True:
        v = fn()
        if v or time.monotonic() > end:
            return v
        time.sleep(0.1)


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


def start_sim():
    scen = os.path.join(TMP, "s.yaml")
    with open(scen, "w") as f:
        f.write(SCENARIO)
    out = os.path.join(TMP, "sim.out")
    env_file = os.path.join(TMP, "aws.env")
    p = subprocess.Popen([LUASCALE, "sim", "--listen", "127.0.0.1:0", "--scenario", scen,
                          "--kubeconfig-out", os.path.join(TMP, "kc"), "--aws-port", "0",
                          "--aws-env-out", env_file, "--log-level", "debug"],
                         stdout=open(out, "w"), stderr=subprocess.STDOUT)
    procs.append(p)

    def ready():
        text = open(out).read()
        return re.search(r"AWS face .* at http://127\.0\.0\.1:(\d+)", text) and os.path.exists(env_file)

    if not until(20, ready):
        print("not ok - luascale sim did not start:\n%s" % open(out).read())
        cleanup()
        sys.exit(1)
    env = {}
    for line in open(env_file):
        m = re.match(r"^([A-Z0-9_]+)='(.*)'$", line.strip())
        if m:
            env[m.group(1)] = m.group(2)
    return env, out


def json_session():
    """A botocore session whose SQS model speaks AWS JSON 1.0 (what botocore
    ships since SQS moved to it): Debian's model with its protocol switched."""
    base = botocore.loaders.Loader()
    model = copy.deepcopy(base.load_service_model("sqs", "service-2"))
    model["metadata"].update({"protocol": "json", "jsonVersion": "1.0", "targetPrefix": "AmazonSQS",
                              "protocols": ["json"]})

    def unxml(o):  # the JSON model names members as they are: no XML names
        if isinstance(o, dict):
            for k in ("locationName", "flattened", "resultWrapper", "xmlNamespace"):
                o.pop(k, None)
            for v in o.values():
                unxml(v)
        elif isinstance(o, list):
            for v in o:
                unxml(v)
    unxml(model["shapes"])
    unxml(model["operations"])
    d = os.path.join(TMP, "models", "sqs", model["metadata"]["apiVersion"])
    os.makedirs(d)
    with open(os.path.join(d, "service-2.json"), "w") as f:
        json.dump(model, f)
    for extra in ("endpoint-rule-set-1", "paginators-1"):
        try:
            with open(os.path.join(d, extra + ".json"), "w") as f:
                json.dump(base.load_service_model("sqs", extra), f)
        except Exception:  # noqa: B902 (an optional file)
            pass
    s = botocore.session.Session()
    s.get_component("data_loader").search_paths.insert(0, os.path.join(TMP, "models"))
    return boto3.session.Session(botocore_session=s)


def client(env, session=None):
    return (session or boto3.session.Session()).client(
        "sqs", endpoint_url=env["AWS_ENDPOINT_URL"], region_name=env["AWS_REGION"],
        aws_access_key_id=env["AWS_ACCESS_KEY_ID"], aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
        config=botocore.config.Config(retries={"total_max_attempts": 1, "mode": "standard"}))


def error_code(fn):
    try:
        fn()
    except botocore.exceptions.ClientError as e:
        return e.response["Error"]["Code"]
    return None


def exercise(sqs, proto, queue_name):
    seen = []
    sqs.meta.events.register("before-send", lambda request, **kw: seen.append(dict(request.headers)))
    url = sqs.create_queue(QueueName=queue_name)["QueueUrl"]
    ok(url.endswith("/210987654321/" + queue_name), "%s: CreateQueue answers the queue's URL" % proto, url)
    ok(sqs.get_queue_url(QueueName=queue_name)["QueueUrl"] == url, "%s: GetQueueUrl finds it" % proto)
    target = seen[-1].get("X-Amz-Target", b"")
    ok((proto == "json") == bool(target), "%s: the client spoke %s" % (proto, proto), seen[-1])
    code = error_code(lambda: sqs.get_queue_url(QueueName="no-such-queue"))
    ok(code in ("AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist"),
       "%s: an unknown queue is NonExistentQueue" % proto, code)
    body = '{"hello": "wörld <&>"}'
    sent = sqs.send_message(QueueUrl=url, MessageBody=body)  # botocore checks MD5OfMessageBody
    md5 = hashlib.md5(body.encode()).hexdigest()
    ok(len(sent["MessageId"]) == 36 and sent["MD5OfMessageBody"] == md5,
       "%s: SendMessage answers a MessageId and the body's MD5" % proto, sent)
    got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0, VisibilityTimeout=60,
                              AttributeNames=["All"]).get("Messages", [])
    ok(len(got) == 1 and got[0]["Body"] == body and got[0]["MessageId"] == sent["MessageId"] and
       got[0]["MD5OfBody"] == md5 and got[0]["Attributes"]["ApproximateReceiveCount"] == "1",
       "%s: ReceiveMessage gives the body back whole, with its MD5 and attributes" % proto, got)
    again = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
    ok(again == [], "%s: a received message is invisible for its VisibilityTimeout" % proto, again)
    code = error_code(lambda: sqs.delete_message(QueueUrl=url, ReceiptHandle="not-a-handle"))
    ok(code == "ReceiptHandleIsInvalid", "%s: a wrong receipt handle is ReceiptHandleIsInvalid" % proto, code)
    if got:
        sqs.delete_message(QueueUrl=url, ReceiptHandle=got[0]["ReceiptHandle"])
    code = error_code(lambda: sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=11))
    ok(code is not None, "%s: MaxNumberOfMessages 11 is refused" % proto, code)


def main():
    env, out = start_sim()
    exercise(client(env), "query", "q-query")
    exercise(client(env, json_session()), "json", "q-json")

    # the interrupt fault: two of the four running instances get a spot warning,
    # then their instances are reclaimed (state-change events follow)
    sqs = client(env)
    url = sqs.get_queue_url(QueueName="luascale-interruptions")["QueueUrl"]
    events = []

    def collect(kind, want):
        for m in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=0).get("Messages", []):
            ev = json.loads(m["Body"])
            if not any(e["id"] == ev["id"] for e in events):
                events.append(ev)
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
        return len([e for e in events if e["detail-type"] == kind]) >= want

    warn = "EC2 Spot Instance Interruption Warning"
    ok(until(30, lambda: collect(warn, 2)), "the interrupt fault's two spot warnings reach the queue",
       json.dumps(events)[:2000] + "\n" + open(out).read()[-3000:])
    warnings = [e for e in events if e["detail-type"] == warn]
    shape = all(e["source"] == "aws.ec2" and e["version"] == "0" and e["account"] == "210987654321" and
                e["region"] == "eu-west-1" and re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", e["time"]) and
                e["detail"]["instance-action"] == "terminate" and
                re.match(r"^i-[0-9a-f]{17}$", e["detail"]["instance-id"]) and
                e["resources"] == ["arn:aws:ec2:eu-west-1:210987654321:instance/" + e["detail"]["instance-id"]]
                for e in warnings)
    ok(shape and len({e["detail"]["instance-id"] for e in warnings}) == 2,
       "each warning is an EventBridge event naming one distinct instance", json.dumps(warnings))
    change = "EC2 Instance State-change Notification"
    ok(until(30, lambda: collect(change, 2)), "after the warning both instances are reclaimed (state-change events)",
       json.dumps(events)[:2000])
    ids = {e["detail"]["instance-id"] for e in warnings}
    changed = {e["detail"]["instance-id"] for e in events if e["detail-type"] == change}
    ok(changed == ids and all(e["detail"]["state"] == "shutting-down" for e in events if e["detail-type"] == change),
       "the reclaimed instances are the warned ones, shutting down", json.dumps(events))
    ec2 = boto3.session.Session().client(
        "ec2", endpoint_url=env["AWS_ENDPOINT_URL"], region_name=env["AWS_REGION"],
        aws_access_key_id=env["AWS_ACCESS_KEY_ID"], aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"])

    def states():
        r = ec2.describe_instances(InstanceIds=sorted(ids))
        return {i["InstanceId"]: i["State"]["Name"] for res in r["Reservations"] for i in res["Instances"]}

    st = until(30, lambda: (lambda s: s if all(v in ("shutting-down", "terminated") for v in s.values()) and s else None)(states()))
    ok(st, "EC2 says the warned instances are going or gone", states())


try:
    main()
finally:
    cleanup()
print("1..%d" % count)
sys.exit(1 if fails else 0)
