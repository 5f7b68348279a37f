#!/usr/bin/python3
# run_sim_interrupt.py: `luascale run` with provider.kind aws and
# provider.aws.interruption_queue against `luascale sim --aws-port`. An
# `interrupt` fault sends one of the two workers instances an EC2 Spot
# Instance Interruption Warning through the simulator's SQS queue; luascale
# reads it (only while it leads: here it always does), logs the notice once
# with the instance, its node, group, kind and deadline, counts it in
# luascale_interruptions_total, and default.lua cordons, drains and deletes
# that node as an "interrupted" disruption and launches one in its place,
# well before the cloud reclaims the instance.
# Usage: run_sim_interrupt.py LUASCALE SOURCE_DIR. Fails when boto3 is missing.
import os
import re
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simharness import Harness, log_has, nodes, read_env_file, until  # noqa: E402

H = Harness(sys.argv[1], sys.argv[2], "run_sim_interrupt.")
ok = H.ok

scen = H.path("interrupt.yaml")
with open(scen, "w") as f:
    f.write("seed: 5\nstart: \"2026-12-01T08:00:00Z\"\nduration: 2h\n"
            "cloud: {boot_delay: 2s, boot_jitter: 500ms, launch_latency: 300ms, "
            "terminate_latency: 300ms, shutdown_delay: 1s}\n"
            "cluster: {register_delay: 500ms, scheduler_interval: 200ms}\n"
            "initial_nodes: [{group: workers, count: 2}]\n"
            "node_groups:\n"
            "  - {name: workers, min: 0, max: 4, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}, "
            "labels: {pool: workers}}}\n"
            "workloads:\n"
            "  - {name: web, namespace: shop, controller: replicaset, count: 2, "
            "requests: {cpu: 1, memory: 1Gi}}\n"
            "faults:\n"
            "  - {kind: interrupt, group: workers, at: 8s, count: 1, warning: 60s}\n"
            "aws:\n  region: us-east-1\n  cluster: sim\n  interruption_queue: luascale-interruptions\n"
            "  credentials:\n    access_key_id: AKIASIMULATED0000001\n"
            "    secret_access_key: c2ltdWxhdGVkLXNlY3JldC1rZXktbm90LXJlYWw\n"
            "  groups:\n    workers:\n      zones: [us-east-1a]\n      instance_types: [m5.xlarge]\n"
            "      tags: {k8s.io/cluster-autoscaler/node-template/label/pool: workers}\n")
env_file = H.path("interrupt.env")
SIM = H.start_sim("interrupt", scen, ["--aws-port", "0", "--aws-env-out", env_file],
                  [r"AWS face .* at http://127\.0\.0\.1:(\d+)"])
senv = read_env_file(env_file)
env = {"AWS_EC2_METADATA_DISABLED": "true"}
for k in ("AWS_ENDPOINT_URL", "AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
    env[k] = senv[k]
run = H.start_run(SIM, "run", "node_groups:\n  - name: workers\n"
                  "provider:\n  kind: aws\n  qps: 20\n  burst: 20\n"
                  "  aws:\n    cluster_name: sim\n"
                  "    interruption_queue: https://sqs.us-east-1.amazonaws.com/123456789012/luascale-interruptions\n",
                  env, "{unneeded_for: 10m}")

m = until(20, lambda: log_has(run["log"], r"serving /metrics.* \(port (\d+)\)"))
ok(m, "luascale run says where it serves", run["log"])
PORT = int(m.group(1)) if m else 0
first = until(20, lambda: nodes(SIM) if len(nodes(SIM)) == 2 else None)
ok(first, "two workers nodes at the start", SIM["log"])

NOTICE = (r"interruption notice: instance (i-[0-9a-f]{17}), node (\S+), group workers: "
          r"spot_interruption, deadline \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
m = until(40, lambda: log_has(run["log"], NOTICE))
ok(m, "the spot warning from the queue is logged with its instance, node, group, kind and deadline",
   run["log"], SIM["log"])
iid, node = (m.group(1), m.group(2)) if m else ("?", "?")
ok(first and node in first and first[node]["spec"].get("providerID", "").endswith("/" + iid),
   "the notice's node is the instance's (%s, %s)" % (node, iid))

DRAIN = r"plan: drain %s: interrupted: spot_interruption, the cloud takes it at " % re.escape(node)
ok(until(20, lambda: log_has(run["log"], DRAIN)), "default.lua drains the node at once", run["log"])
ok(log_has(run["log"], r"plan: scale_up workers \+1: in place of %s \(interrupted" % re.escape(node)),
   "and asks for one node in its place", run["log"])
gone = until(40, lambda: node not in nodes(SIM))
ok(gone, "the interrupted node is deleted", run["log"], SIM["log"])
ok(log_has(run["log"], r"delete %s done" % re.escape(node)) or
   log_has(run["log"], r"delete %s.*done" % re.escape(node)),
   "by luascale, ahead of the reclaim", run["log"])
ok(len(re.findall(NOTICE, open(run["log"]).read())) == 1, "the notice is logged once", run["log"])


def metric():
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % PORT, timeout=5) as r:
            text = r.read().decode()
    except OSError:
        return None
    mm = re.search(r'^luascale_interruptions_total\{group="workers",kind="spot_interruption"\} (\S+)$',
                   text, re.M)
    return mm and float(mm.group(1))


ok(metric() == 1, "luascale_interruptions_total{group=\"workers\",kind=\"spot_interruption\"} is 1 (%s)"
   % metric())
H.finish()
