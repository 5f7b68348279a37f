#!/usr/bin/python3
# run_sim_prices.py: prices from the cloud, against `luascale sim --aws-port`:
#   1. the face's Price List API answers boto3's pricing client (GetProducts
#      with TERM_MATCH filters, PriceList items as JSON strings, paging) with
#      the scenario's price_per_hour, and EC2's DescribeSpotPriceHistory
#      answers boto3's EC2 client with 30% of it in each zone;
#   2. `luascale run` with provider.kind aws shows policies the cloud's price
#      (g.price_source "cloud") of a group whose config sets none, on demand
#      for an Auto Scaling group and spot for a spot fleet group, and the
#      config's ("config") where it sets one; /metrics counts no failed
#      price refresh (luascale_price_refresh_failures_total{provider="aws"} 0);
#   3. provider.pricing.enabled: false leaves the price to the config.
# Usage: run_sim_prices.py LUASCALE SOURCE_DIR. Fails when boto3 is missing.
import json
import os
import re
import sys
import urllib.request
from datetime import datetime, timezone

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simharness import Harness, read_env_file, until  # noqa: E402

try:
    import boto3
    import botocore.config
except ImportError as e:  # a missing client is a failure, never a skip
    print("not ok - boto3 not importable under %s: %s" % (sys.executable, e))
    sys.exit(1)

H = Harness(sys.argv[1], sys.argv[2], "run_sim_prices.")
ok = H.ok

SCENARIO = """\
node_groups:
  - {name: workers, min: 1, max: 4, price_per_hour: 0.192, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}
  - {name: pinned, min: 0, max: 2, price_per_hour: 0.096, template: {allocatable: {cpu: 2, memory: 8Gi, pods: 110}}}
  - {name: burst, min: 0, max: 4, price_per_hour: 0.384, template: {allocatable: {cpu: 8, memory: 32Gi, pods: 110}}}
workloads: []
aws:
  region: us-east-1
  cluster: sim
  credentials:
    access_key_id: AKIASIMULATED0000001
    secret_access_key: c2ltdWxhdGVkLXNlY3JldC1rZXktbm90LXJlYWw
  groups:
    workers:
      zones: [us-east-1a, us-east-1b, us-east-1c]
      instance_types: [m5.xlarge]
    pinned:
      zones: [us-east-1a]
      instance_types: [m5.large]
    burst:
      mode: fleet
      zones: [us-east-1a, us-east-1b, us-east-1c]
      instance_types: [m5.2xlarge]
"""

CONFIG = """\
node_groups:
  - name: workers
  - name: pinned
    price_per_hour: 0.5
  - name: burst
    max: 4
    template:
      allocatable: {cpu: 8, memory: 32Gi, pods: 110}
      labels: {pool: burst}
    aws:
      mode: fleet
      launch_template: burst
      instance_types: [m5.2xlarge]
      placements: [{zone: us-east-1a}, {zone: us-east-1b}]
      capacity_type: spot
provider:
  kind: aws
  aws: {cluster_name: sim}
"""

POLICY = """\
local ls = require "luascale"
local P = {}
function P.reconcile(cluster, params, store)
  for _, g in ipairs(cluster.group_list) do
    print(string.format("price %s %.4f %s", g.name, g.price_per_hour, g.price_source))
  end
  return ls.plan()
end
return P
"""


def products(pricing, **kw):
    out, token = [], None
    while True:
        args = dict(kw)
        if token:
            args["NextToken"] = token
        r = pricing.get_products(**args)
        out += [json.loads(s) for s in r["PriceList"]]
        token = r.get("NextToken")
        if not token:
            return out


def usd(item):
    for term in item["terms"]["OnDemand"].values():
        for dim in term["priceDimensions"].values():
            return float(dim["pricePerUnit"]["USD"])
    return None


def main():
    scen = H.scenario("prices", SCENARIO)
    env_file = H.path("prices.env")
    sim = H.start_sim("prices", scen, ["--aws-port", "0", "--aws-env-out", env_file],
                      [r"AWS face .* at http://127\.0\.0\.1:(\d+)"])
    env = read_env_file(env_file)
    sess = boto3.session.Session(aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
                                 aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
                                 region_name="us-east-1")
    cfg = botocore.config.Config(retries={"max_attempts": 1})
    url = env["AWS_ENDPOINT_URL"]
    pricing = sess.client("pricing", endpoint_url=url, config=cfg)
    ec2 = sess.client("ec2", endpoint_url=url, config=cfg)
    logs = (sim["log"],)

    # ---- the Price List API, as boto3 calls it ----
    filters = [{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in (
        ("instanceType", "m5.xlarge"), ("regionCode", "us-east-1"), ("operatingSystem", "Linux"),
        ("tenancy", "Shared"), ("preInstalledSw", "NA"), ("capacitystatus", "Used"),
        ("marketoption", "OnDemand"))]
    got = products(pricing, ServiceCode="AmazonEC2", Filters=filters, MaxResults=100)
    ok(len(got) == 1 and got[0]["product"]["attributes"]["instanceType"] == "m5.xlarge"
       and usd(got[0]) == 0.192,
       "GetProducts: m5.xlarge in us-east-1 costs the scenario's 0.192 USD an hour (%s)"
       % [usd(g) for g in got], *logs)
    every = products(pricing, ServiceCode="AmazonEC2", MaxResults=1,
                     Filters=[{"Type": "TERM_MATCH", "Field": "regionCode", "Value": "us-east-1"}])
    types = sorted(g["product"]["attributes"]["instanceType"] for g in every)
    ok(types == ["m5.2xlarge", "m5.large", "m5.xlarge"],
       "GetProducts pages one product at a time through NextToken: %s" % types, *logs)
    ok(products(pricing, ServiceCode="AmazonEC2", Filters=[
        {"Type": "TERM_MATCH", "Field": "instanceType", "Value": "c5.large"}]) == [],
       "GetProducts: a type no group launches has no product", *logs)
    try:
        pricing.get_products(ServiceCode="AmazonEC2", MaxResults=500)
        ok(False, "GetProducts refuses MaxResults 500", *logs)
    except Exception as e:  # botocore validates first: either way it is refused
        ok("MaxResults" in str(e) or "Invalid" in str(e), "GetProducts refuses MaxResults 500: %s" % e)

    # ---- spot prices, as boto3's EC2 client asks ----
    h = ec2.describe_spot_price_history(InstanceTypes=["m5.2xlarge", "m5.xlarge"],
                                        ProductDescriptions=["Linux/UNIX"],
                                        StartTime=datetime.now(timezone.utc))["SpotPriceHistory"]
    seen = sorted((x["InstanceType"], x["AvailabilityZone"], x["SpotPrice"]) for x in h)
    ok(seen == [("m5.2xlarge", z, "0.115200") for z in ("us-east-1a", "us-east-1b", "us-east-1c")] +
       [("m5.xlarge", z, "0.057600") for z in ("us-east-1a", "us-east-1b", "us-east-1c")]
       and all(x["ProductDescription"] == "Linux/UNIX" and x["Timestamp"] for x in h),
       "DescribeSpotPriceHistory: 30%% of the on-demand price in each zone: %s" % seen, *logs)
    pages = list(ec2.get_paginator("describe_spot_price_history").paginate(
        InstanceTypes=["m5.2xlarge", "m5.xlarge"], ProductDescriptions=["Linux/UNIX"],
        PaginationConfig={"PageSize": 5}))
    ok([len(p["SpotPriceHistory"]) for p in pages] == [5, 1],
       "DescribeSpotPriceHistory pages through NextToken: %s" % [len(p["SpotPriceHistory"]) for p in pages],
       *logs)
    one = ec2.describe_spot_price_history(InstanceTypes=["m5.xlarge"],
                                          AvailabilityZone="us-east-1b")["SpotPriceHistory"]
    ok([x["AvailabilityZone"] for x in one] == ["us-east-1b"],
       "DescribeSpotPriceHistory keeps to the zone asked for", *logs)

    # ---- luascale run: the policy sees the cloud's prices ----
    policy = H.path("prices.lua")
    with open(policy, "w") as f:
        f.write(POLICY)
    run_env = {"AWS_EC2_METADATA_DISABLED": "true", "LUASCALE_POLICY_PATH": policy}
    for k in ("AWS_ENDPOINT_URL", "AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        run_env[k] = env[k]
    run = H.start_run(sim, "prices", CONFIG, run_env)
    logs = (run["log"], sim["log"])

    def line(group, price, source):
        pat = r"policy: price %s %s %s" % (group, re.escape(price), source)
        return until(30, lambda: re.search(pat, open(run["log"]).read()))

    ok(line("workers", "0.1920", "cloud"),
       "an Auto Scaling group without a price in the config: the cloud's on-demand price", *logs)
    ok(line("burst", "0.1152", "cloud"),
       "a spot fleet group without a price in the config: the cloud's spot price", *logs)
    ok(line("pinned", "0.5000", "config"), "a price in the config overrides the cloud's", *logs)
    text = open(run["log"]).read()
    ok(re.search(r"policy: price workers 0\.0000 none", text),
       "before the first refresh has answered, the price is unknown (none), not made up", *logs)
    ok(not re.search(r"policy: price pinned 0\.0960", text), "the config's price is never replaced",
       *logs)
    m = re.search(r"serving /metrics.* \(port (\d+)\)", text)
    metrics = ""
    if m:
        metrics = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % m.group(1), timeout=10).read().decode()
    ok(re.search(r'^luascale_price_refresh_failures_total\{provider="aws"\} 0$', metrics, re.M),
       "luascale_price_refresh_failures_total{provider=\"aws\"} is 0", *logs)
    ok(re.search(r"aws: prices refreshed", text), "the refresh is logged", *logs)
    H.procs.remove(run["proc"])
    run["proc"].terminate()
    run["proc"].wait(20)

    # ---- provider.pricing.enabled: false asks the cloud for nothing ----
    off = H.start_run(sim, "off", CONFIG + "  pricing: {enabled: false}\n", run_env)
    rounds = until(30, lambda: len(re.findall(r"policy: price workers ", open(off["log"]).read())) >= 4)
    text = open(off["log"]).read()
    ok(rounds and "price workers 0.0000 none" in text and " cloud" not in text
       and "price pinned 0.5000 config" in text,
       "provider.pricing.enabled false: no cloud price, the config's still", off["log"])


try:
    main()
finally:
    H.finish()
