#!/usr/bin/python3
# run_sim_prices_azure.py: Azure prices from the cloud, against `luascale sim
# --azure-port`:
#   1. the face's Retail Prices API (GET /api/retail/prices, no token), read
#      with plain requests, answers in the documented shape: Items with
#      retailPrice, unitOfMeasure, armSkuName, armRegionName, skuName,
#      productName, type, isPrimaryMeterRegion, currencyCode; the scenario's
#      price_per_hour as the Linux pay-as-you-go meter, and the meters a
#      client must tell apart (Spot, Low Priority, Windows, DevTestConsumption,
#      Reservation, a non-primary region's copy); $filter on the documented
#      fields with and, or and parentheses; NextPageLink pages; bad filters
#      and api-versions refused;
#   2. `luascale run` with provider.kind azure shows policies the cloud's
#      price (g.price_source "cloud") of a scale set whose config sets none,
#      on demand for a Regular one and spot for a Spot one (its
#      virtualMachineProfile.priority), the config's ("config") where it
#      sets one, and nothing made up before the first refresh; it follows
#      NextPageLink; /metrics counts no failed refresh.
# Usage: run_sim_prices_azure.py LUASCALE SOURCE_DIR. Fails when requests is missing.
import os
import re
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simharness import Harness, read_env_file, until  # noqa: E402

try:
    import requests
except ImportError as e:  # a missing client is a failure, never a skip
    print("not ok - python3-requests not importable under %s: %s" % (sys.executable, e))
    sys.exit(1)

H = Harness(sys.argv[1], sys.argv[2], "run_sim_prices_azure.")
ok = H.ok
SUB = "6d5a1f3e-2b4c-4d8e-9f10-1a2b3c4d5e6f"
RG = "sim-rg"
API = "2023-01-01-preview"

SCENARIO = """\
node_groups:
  - {name: workers, min: 1, max: 4, price_per_hour: 0.192, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}
  - {name: pinned, min: 0, max: 2, price_per_hour: 0.096, template: {allocatable: {cpu: 2, memory: 8Gi, pods: 110}}}
  - {name: spotty, min: 0, max: 4, price_per_hour: 0.384, template: {allocatable: {cpu: 8, memory: 32Gi, pods: 110}}}
workloads: []
azure:
  subscription_id: %s
  resource_group: %s
  location: eastus
  page_size: 5
  groups:
    workers: {vmss: aks-workers-vmss, vm_size: Standard_D4s_v3, zones: ["1", "2"]}
    pinned: {vmss: aks-pinned-vmss, vm_size: Standard_D2s_v3}
    spotty: {vmss: aks-spotty-vmss, vm_size: Standard_D8s_v3, priority: Spot}
""" % (SUB, RG)

CONFIG = """\
node_groups:
  - name: workers
    max: 4
    azure: {vmss: aks-workers-vmss}
  - name: pinned
    max: 2
    price_per_hour: 0.5
    azure: {vmss: aks-pinned-vmss}
  - name: spotty
    max: 4
    azure: {vmss: aks-spotty-vmss}
provider:
  kind: azure
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

FIELDS = {"retailPrice": float, "unitPrice": float, "armSkuName": str, "armRegionName": str, "skuName": str,
          "productName": str, "type": str, "isPrimaryMeterRegion": bool, "currencyCode": str,
          "unitOfMeasure": str, "meterName": str, "serviceName": str, "location": str, "meterId": str,
          "effectiveStartDate": str}
PROVIDER_FILTER = ("serviceName eq 'Virtual Machines' and armRegionName eq 'eastus' and priceType eq 'Consumption'"
                   " and (armSkuName eq 'Standard_D4s_v3' or armSkuName eq 'Standard_D8s_v3')")


def get(base, params):
    return requests.get(base + "api/retail/prices", params=params, timeout=10)


def every_page(base, flt):
    """Every item of a query, following NextPageLink; and how many pages."""
    r = get(base, {"api-version": API, "$filter": flt})
    items, pages = [], 0
    while True:
        pages += 1
        d = r.json()
        items += d["Items"]
        if d.get("Count") != len(d["Items"]) or pages > 50:
            return None, pages
        if not d.get("NextPageLink"):
            return items, pages
        r = requests.get(d["NextPageLink"], timeout=10)


def shaped(item):
    return all(isinstance(item.get(k), t) if t is not float else isinstance(item.get(k), (int, float))
               for k, t in FIELDS.items())


def face(base, logs):
    items, pages = every_page(base, PROVIDER_FILTER)
    ok(items is not None and pages == 3 and len(items) == 12,
       "the provider's query: 12 Consumption meters of the two sizes in eastus, 5 a page through NextPageLink (%s pages)"
       % pages, *logs)
    items = items or []
    ok(items and all(shaped(i) for i in items) and all(i["unitOfMeasure"] == "1 Hour" and i["currencyCode"] == "USD"
                                                       and i["type"] == "Consumption" and i["armRegionName"] == "eastus"
                                                       for i in items),
       "every item has the documented fields and types, 1 Hour, USD, Consumption, eastus", *logs)

    def price(sku, name, windows=False, primary=True):
        return [i["retailPrice"] for i in items if i["armSkuName"] == sku and i["skuName"] == name
                and ("Windows" in i["productName"]) == windows and i["isPrimaryMeterRegion"] == primary]

    ok(price("Standard_D4s_v3", "D4s v3") == [0.192], "Linux pay as you go: the scenario's 0.192 (%s)"
       % price("Standard_D4s_v3", "D4s v3"), *logs)
    ok(price("Standard_D8s_v3", "D8s v3 Spot") == [0.0768], "the Spot meter: 20%% of it (%s)"
       % price("Standard_D8s_v3", "D8s v3 Spot"), *logs)
    ok(len(price("Standard_D4s_v3", "D4s v3 Low Priority")) == 1 and len(price("Standard_D4s_v3", "D4s v3", True)) == 1
       and len(price("Standard_D4s_v3", "D4s v3", False, False)) == 1,
       "the Low Priority, Windows and non-primary meters are there too, for a client to leave out", *logs)
    every, _ = every_page(base, "serviceName eq 'Virtual Machines'")
    types = sorted({i["type"] for i in every or []})
    ok(every and len(every) == 48 and types == ["Consumption", "DevTestConsumption", "Reservation"]
       and all(i.get("reservationTerm") == "1 Year" for i in every if i["type"] == "Reservation")
       and len({i["meterId"] for i in every}) == 48,
       "without priceType: DevTestConsumption and one-year Reservation meters too, each meter once over the pages (%d, %s)"
       % (len(every or []), types), *logs)
    west, _ = every_page(base, "armRegionName eq 'westus2' and skuName eq 'D4s v3' and priceType eq 'Consumption'")
    got = sorted((i["productName"], round(i["retailPrice"], 6), i["isPrimaryMeterRegion"]) for i in west or [])
    ok(got == sorted([("Virtual Machines DSv3 Series", 0.24, True),
                      ("Virtual Machines DSv3 Series Windows", round(0.24 * 1.8, 6), True),
                      ("Virtual Machines DSv3 Series", round(0.24 * 3, 6), False)]),
       "armRegionName and skuName select: westus2 costs a quarter more (%s)" % got, *logs)
    none, _ = every_page(base, "serviceName eq 'virtual machines'")
    ok(none == [], "filter values are case-sensitive, as in 2023-01-01-preview", *logs)
    r = get(base, {"api-version": API, "$filter": "vmSize eq 'x'"})
    ok(r.status_code == 400 and r.json().get("Error", {}).get("Code") == "InvalidFilter",
       "a filter on a field the API does not know: 400 InvalidFilter (%s)" % r.text[:120], *logs)
    r = get(base, {"api-version": API, "$filter": "(armSkuName eq 'x'"})
    ok(r.status_code == 400, "an unbalanced filter: 400 (%s)" % r.text[:120], *logs)
    r = get(base, {"api-version": "2019-01-01"})
    ok(r.status_code == 400, "an api-version the API does not serve: 400", *logs)


def main():
    scen = H.scenario("prices", SCENARIO)
    env_file = H.path("prices.env")
    sim = H.start_sim("prices", scen, ["--log-level", "debug", "--azure-port", "0", "--azure-env-out", env_file,
                                       "--azure-token-out", H.path("prices.token"), "--azure-ca-out", H.path("prices-ca.pem")],
                      [r"Azure face .* at http://127\.0\.0\.1:(\d+)"])
    env = read_env_file(env_file)
    base = env["LUASCALE_SIM_AZURE_ARM_ENDPOINT"]
    face(base, (sim["log"],))

    # ---- luascale run: the policy sees the cloud's prices ----
    policy = H.path("prices.lua")
    with open(policy, "w") as f:
        f.write(POLICY)
    run_env = dict(env)
    run_env["LUASCALE_POLICY_PATH"] = policy
    calls_before = len(re.findall(r"GET /api/retail/prices -> 200", open(sim["log"]).read()))
    run = H.start_run(sim, "prices", CONFIG, run_env)
    logs = (run["log"], sim["log"])

    def line(group, price, source):
        pat = r"policy: price %s %s %s" % (group, re.escape(price), source)
        return until(30, lambda: re.search(pat, open(run["log"]).read()))

    ok(line("workers", "0.1920", "cloud"),
       "a Regular scale set without a price in the config: the cloud's Linux pay-as-you-go price", *logs)
    ok(line("spotty", "0.0768", "cloud"),
       "a Spot scale set (virtualMachineProfile.priority) without a price in the config: the Spot meter's", *logs)
    ok(line("pinned", "0.5000", "config"), "a price in the config overrides the cloud's", *logs)
    text = open(run["log"]).read()
    ok(re.search(r"policy: price workers 0\.0000 none", text),
       "before the first refresh has answered, the price is unknown (none), not made up", *logs)
    ok(not re.search(r"policy: price (pinned 0\.0960|workers 0\.(2400|0480|0384|3456))", text),
       "the config's price is never replaced, and no other meter or region is taken", *logs)
    calls = len(re.findall(r"GET /api/retail/prices -> 200", open(sim["log"]).read())) - calls_before
    ok(calls >= 3, "the provider followed NextPageLink: %d pages asked" % calls, *logs)
    m = re.search(r"serving /metrics.* \(port (\d+)\)", text)
    metrics = ""
    if m:
        metrics = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % m.group(1), timeout=10).read().decode()
    ok(re.search(r'^luascale_price_refresh_failures_total\{provider="azure"\} 0$', metrics, re.M),
       "luascale_price_refresh_failures_total{provider=\"azure\"} is 0", *logs)
    ok(re.search(r"azure: prices refreshed", text), "the refresh is logged", *logs)


try:
    main()
except Exception as e:  # noqa: B902 (a test that raises has failed, never passed)
    ok(False, "the test raised %r" % e)
finally:
    H.finish()
