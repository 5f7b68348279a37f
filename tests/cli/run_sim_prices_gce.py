#!/usr/bin/python3
# run_sim_prices_gce.py: GCE prices from the cloud, against `luascale sim
# --gce-port`:
#   1. the face's Cloud Billing Catalog (GET v1/services/6F81-5844-456A/skus)
#      answers Google's auth library (an AuthorizedSession with a
#      service-account token for the cloud-billing.readonly scope) in the
#      documented shape: skus[] with name, skuId, description, category
#      (usageType), serviceRegions, pricingInfo[].pricingExpression
#      (usageUnit, tieredRates[].unitPrice {currencyCode, units as an int64
#      string, nanos}), paged by nextPageToken; the same SKUs in pages of 3
#      as in one; Google's error shape for a bad page token, another service,
#      another currency, and no token at all;
#   2. `luascale run` with provider.kind gce shows policies the cloud's price
#      (g.price_source "cloud") of a group whose config sets none: a zonal
#      MIG's e2-standard-4 on demand (4 vCPUs x Instance Core + 16 GiB x
#      Instance Ram, as the catalog's SKUs say), a regional spot MIG's
#      e2-standard-8 at the Preemptible SKUs', an n1-standard-4 group whose
#      config writes its template; the config's price ("config") where it
#      sets one; /metrics counts no failed refresh
#      (luascale_price_refresh_failures_total{provider="gce"} 0);
#   3. provider.pricing.enabled: false asks the catalog nothing.
# Usage: run_sim_prices_gce.py LUASCALE SOURCE_DIR. Fails when google-auth
# or requests is missing.
import os
import re
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simharness import Harness, read_env_file, stop, until  # noqa: E402

try:
    from google.oauth2 import service_account
    import google.auth.transport.requests
except ImportError as e:  # a missing client is a failure, never a skip
    print("not ok - python3-google-auth/python3-requests not importable under %s: %s" % (sys.executable, e))
    sys.exit(1)

H = Harness(sys.argv[1], sys.argv[2], "run_sim_prices_gce.")
ok = H.ok
SERVICE = "6F81-5844-456A"

SCENARIO = """\
node_groups:
  - {name: workers, min: 1, max: 4, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}
  - {name: pinned, min: 0, max: 2, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}
  - {name: spotty, min: 0, max: 4, template: {allocatable: {cpu: 8, memory: 32Gi, pods: 110}}}
  - {name: legacy, min: 0, max: 2, template: {allocatable: {cpu: 4, memory: 15Gi, pods: 110}}}
workloads: []
gce:
  project: sim-project
  groups:
    workers: {zone: us-central1-a, machine_type: e2-standard-4}
    pinned: {zone: us-central1-b, machine_type: n2-standard-4}
    spotty: {region: us-central1, zones: [us-central1-b, us-central1-c], machine_type: e2-standard-8, spot: true}
    legacy: {zone: europe-west1-b, machine_type: n1-standard-4}
"""

CONFIG = """\
node_groups:
  - name: workers
    max: 4
    gce: {zone: us-central1-a}
  - name: pinned
    max: 2
    price_per_hour: 0.5
    gce: {zone: us-central1-b}
  - name: spotty
    max: 4
    gce: {region: us-central1}
  - name: legacy
    max: 2
    template: {allocatable: {cpu: 3920m, memory: 13Gi, pods: 110}, labels: {pool: legacy}}
    gce: {zone: europe-west1-b}
"""

POLICY = """\
local ls = require "luascale"
local P = {}
function P.reconcile(cluster, params, store)
  for _, g in ipairs(cluster.group_list) do
    print(string.format("price %s %.6f %s", g.name, g.price_per_hour, g.price_source))
  end
  return ls.plan()
end
return P
"""


def money(up):
    return int(up.get("units", "0")) + up.get("nanos", 0) / 1e9


def skus(sess, billing, **params):
    """Every SKU, page by page; the pages' sizes."""
    out, sizes, token = [], [], None
    for _ in range(100):
        q = dict(params, currencyCode="USD")
        if token:
            q["pageToken"] = token
        r = sess.get(billing + "v1/services/%s/skus" % SERVICE, params=q, timeout=10)
        r.raise_for_status()
        doc = r.json()
        out += doc.get("skus", [])
        sizes.append(len(doc.get("skus", [])))
        token = doc.get("nextPageToken")
        if not token:
            return out, sizes
    raise AssertionError("nextPageToken never ends")


def shape_errors(s):
    """What in SKU 's' is not as the Catalog API documents a Sku."""
    errs = []
    for k, t in (("name", str), ("skuId", str), ("description", str), ("category", dict),
                 ("serviceRegions", list), ("pricingInfo", list), ("serviceProviderName", str)):
        if not isinstance(s.get(k), t):
            errs.append("%s is not a %s" % (k, t.__name__))
    if errs:
        return errs
    if not s["name"] == "services/%s/skus/%s" % (SERVICE, s["skuId"]):
        errs.append("name is not services/SERVICE/skus/SKU_ID")
    for k in ("serviceDisplayName", "resourceFamily", "resourceGroup", "usageType"):
        if not isinstance(s["category"].get(k), str):
            errs.append("category.%s is not a string" % k)
    for info in s["pricingInfo"]:
        e = info.get("pricingExpression", {})
        if not isinstance(e.get("usageUnit"), str) or not isinstance(e.get("baseUnitConversionFactor"), (int, float)):
            errs.append("pricingExpression.usageUnit/baseUnitConversionFactor")
        if not isinstance(e.get("displayQuantity"), (int, float)):
            errs.append("pricingExpression.displayQuantity is not a number")
        for t in e.get("tieredRates", []):
            up = t.get("unitPrice", {})
            if not (isinstance(t.get("startUsageAmount"), (int, float)) and up.get("currencyCode") == "USD"
                    and isinstance(up.get("units"), str) and re.match(r"^-?\d+$", up["units"])
                    and isinstance(up.get("nanos"), int)):
                errs.append("tieredRates[]: %r" % t)
        if not isinstance(info.get("currencyConversionRate"), (int, float)) or \
                not isinstance(info.get("effectiveTime"), str):
            errs.append("pricingInfo[]: currencyConversionRate/effectiveTime")
    return errs


def rate(all_skus, desc, usage, region):
    hits = [s for s in all_skus if s["description"] == desc and s["category"]["usageType"] == usage
            and region in s["serviceRegions"]]
    if len(hits) != 1:
        return None
    return money(hits[0]["pricingInfo"][-1]["pricingExpression"]["tieredRates"][0]["unitPrice"])


def main():
    scen = H.scenario("prices", SCENARIO)
    env_file, key = H.path("prices.env"), H.path("prices-key.json")
    sim = H.start_sim("prices", scen, ["--gce-port", "0", "--gce-env-out", env_file, "--gce-key-out", key],
                      [r"GCE face .* at http://127\.0\.0\.1:(\d+)"])
    env = read_env_file(env_file)
    billing = env.get("LUASCALE_SIM_GCE_BILLING_ENDPOINT", "")
    logs = (sim["log"],)
    ok(re.match(r"^http://127\.0\.0\.1:\d+/$", billing),
       "the env file names the catalog's root: LUASCALE_SIM_GCE_BILLING_ENDPOINT=%s" % billing, *logs)
    creds = service_account.Credentials.from_service_account_file(
        key, scopes=["https://www.googleapis.com/auth/cloud-billing.readonly"])
    sess = google.auth.transport.requests.AuthorizedSession(creds)

    # ---- the catalog, as Google's auth library calls it ----
    every, sizes = skus(sess, billing)
    bad = {s.get("description", "?"): shape_errors(s) for s in every if shape_errors(s)}
    ok(every and not bad, "services.skus.list: %d SKUs, each in the documented shape %s"
       % (len(every), bad or ""), *logs)
    paged, psizes = skus(sess, billing, pageSize=3)
    ok([s["skuId"] for s in paged] == [s["skuId"] for s in every] and len(psizes) > 2
       and all(n == 3 for n in psizes[:-1]),
       "nextPageToken pages the same SKUs 3 at a time (%s)" % psizes, *logs)
    core = rate(every, "E2 Instance Core running in Americas", "OnDemand", "us-central1")
    ram = rate(every, "E2 Instance Ram running in Americas", "OnDemand", "us-central1")
    score = rate(every, "Spot Preemptible E2 Instance Core running in Americas", "Preemptible", "us-central1")
    sram = rate(every, "Spot Preemptible E2 Instance Ram running in Americas", "Preemptible", "us-central1")
    n1core = rate(every, "N1 Predefined Instance Core running in EMEA", "OnDemand", "europe-west1")
    n1ram = rate(every, "N1 Predefined Instance Ram running in EMEA", "OnDemand", "europe-west1")
    units = {s["description"]: s["pricingInfo"][0]["pricingExpression"]["usageUnit"] for s in every}
    ok(None not in (core, ram, score, sram, n1core, n1ram)
       and units["E2 Instance Core running in Americas"] == "h"
       and units["E2 Instance Ram running in Americas"] == "GiBy.h",
       "E2 and N1 Instance Core (h) and Instance Ram (GiBy.h) SKUs, on demand and Preemptible, "
       "in the MIGs' regions: e2 %s/%s, spot %s/%s" % (core, ram, score, sram), *logs)
    ok(any("Custom" in s["description"] for s in every) and
       any(s["category"]["usageType"] == "Commit1Yr" for s in every),
       "the catalog also lists SKUs a pricer must leave alone (custom, commitments)", *logs)

    def err(params, path="v1/services/%s/skus" % SERVICE, session=sess):
        r = session.get(billing + path, params=params, timeout=10)
        e = r.json().get("error", {}) if r.headers.get("Content-Type", "").startswith("application/json") else {}
        return r.status_code, e.get("status"), e.get("message", "")

    ok(err({"pageToken": "nonsense"})[:2] == (400, "INVALID_ARGUMENT"),
       "a page token the catalog never gave: 400 INVALID_ARGUMENT %s" % (err({"pageToken": "nonsense"}),), *logs)
    ok(err({"currencyCode": "EUR"})[:2] == (400, "INVALID_ARGUMENT"), "a currency other than USD: 400", *logs)
    ok(err({}, "v1/services/0000-0000-0000/skus")[:2] == (404, "NOT_FOUND"), "another service: 404", *logs)
    import requests
    ok(err({}, session=requests.Session())[:2] == (401, "UNAUTHENTICATED"), "no token: 401", *logs)

    # ---- luascale run: the policy sees the catalog's prices ----
    policy = H.path("prices.lua")
    with open(policy, "w") as f:
        f.write(POLICY)
    body = (CONFIG + "provider:\n  kind: gce\n  gce:\n    project: sim-project\n"
            "    credentials_file: %s\n    endpoints: {compute: \"%s\", billing: \"%s\"}\n"
            % (key, env["LUASCALE_SIM_GCE_ENDPOINT"], billing))
    run = H.start_run(sim, "prices", body, {"LUASCALE_POLICY_PATH": policy})
    logs = (run["log"], sim["log"])

    def line(group, price, source):
        pat = r"policy: price %s %s %s" % (group, re.escape("%.6f" % price), source)
        return until(30, lambda: re.search(pat, open(run["log"]).read()))

    e2_4 = round(4 * core + 16 * ram, 6)
    e2_8_spot = round(8 * score + 32 * sram, 6)
    n1_4 = round(4 * n1core + 15 * n1ram, 6)
    ok(line("workers", e2_4, "cloud"),
       "a zonal MIG without a price in the config: e2-standard-4 at 4 x core + 16 GiB x RAM = %.6f" % e2_4, *logs)
    ok(line("spotty", e2_8_spot, "cloud"),
       "a regional MIG whose template makes spot VMs: the Preemptible SKUs' %.6f" % e2_8_spot, *logs)
    ok(line("legacy", n1_4, "cloud"),
       "a group whose config writes its template, in europe-west1: n1-standard-4 at %.6f" % n1_4, *logs)
    ok(line("pinned", 0.5, "config"), "a price in the config overrides the cloud's", *logs)
    text = open(run["log"]).read()
    ok(re.search(r"policy: price workers 0\.000000 none", text),
       "before the first refresh has answered, the price is unknown (none), not made up", *logs)
    ok(not re.search(r"policy: price pinned 0\.(?!5)", text), "the config's price is never replaced", *logs)
    m = re.search(r"serving /metrics.* \(port (\d+)\)", text)
    metrics = ""
    if m:
        metrics = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % m.group(1), timeout=10).read().decode()
    ok(re.search(r'^luascale_price_refresh_failures_total\{provider="gce"\} 0$', metrics, re.M),
       "luascale_price_refresh_failures_total{provider=\"gce\"} is 0", *logs)
    ok(re.search(r"gce: prices refreshed", text), "the refresh is logged", *logs)
    ok(not re.search(r"ya29\.", text), "no access token in the log", *logs)
    H.procs.remove(run["proc"])
    stop(run["proc"])

    # ---- provider.pricing.enabled: false asks the catalog nothing ----
    off = H.start_run(sim, "off", body + "  pricing: {enabled: false}\n", {"LUASCALE_POLICY_PATH": policy})
    rounds = until(30, lambda: len(re.findall(r"policy: price workers ", open(off["log"]).read())) >= 4)
    text = open(off["log"]).read()
    ok(rounds and "price workers 0.000000 none" in text and " cloud" not in text
       and "price pinned 0.500000 config" in text,
       "provider.pricing.enabled false: no cloud price, the config's still", off["log"])
    ok("prices refreshed" not in text and "Cloud Billing" not in text, "and the catalog is not asked",
       off["log"])


try:
    main()
finally:
    H.finish()
