#!/usr/bin/python3
# alerts_test.py: the alerts shipped in deploy/ are the ones tested.
#   * `promtool check rules` passes on deploy/prometheus/luascale-rules.yaml;
#   * `promtool test rules` passes on luascale-rules_test.yaml, and that
#     file has, for every alert, a case where it fires and one where it
#     stays quiet;
#   * the PrometheusRule of deploy/components/monitoring holds the same
#     groups as the rule file;
#   * `kubectl kustomize` renders the base with the component: the
#     ServiceMonitor selects the rendered metrics Service by its labels and
#     port name, in its namespace, and the rendered PrometheusRule still
#     holds the rule file's groups;
#   * every luascale_ metric an alert reads is in docs/operations.md's table.
# Fails when promtool, kubectl or python3-yaml is missing.
# Usage: alerts_test.py SOURCE_DIR
import os
import re
import shutil
import subprocess
import sys
import tempfile

SRC = os.path.abspath(sys.argv[1])
count = fails = 0


def ok(cond, name, detail=""):
    global count, fails
    count += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", count, name))
    if not cond:
        fails += 1
        for line in str(detail).splitlines()[-30:]:
            print("#   " + line)
    return cond


try:
    import yaml
except ImportError:
    print("not ok - python3-yaml is missing under /usr/bin/python3 (scripts/setup.sh installs it)")
    sys.exit(1)
for tool in ("promtool", "kubectl"):
    if not shutil.which(tool, path="/usr/bin:/bin:/usr/local/bin"):
        print("not ok - %s is missing (scripts/setup.sh installs it)" % tool)
        sys.exit(1)

PROM = os.path.join(SRC, "deploy", "prometheus")
RULES = os.path.join(PROM, "luascale-rules.yaml")
TESTS = os.path.join(PROM, "luascale-rules_test.yaml")
COMPONENT = os.path.join(SRC, "deploy", "components", "monitoring")

with open(RULES) as f:
    rules = yaml.safe_load(f)
alerts = [r["alert"] for g in rules["groups"] for r in g["rules"] if "alert" in r]
ok(len(alerts) >= 6, "the rule file has the guide's alerts (%s)" % alerts)

p = subprocess.run(["promtool", "check", "rules", RULES], capture_output=True, text=True)
ok(p.returncode == 0 and ("SUCCESS: %d rules found" % len(alerts)) in p.stdout,
   "promtool check rules passes", p.stdout + p.stderr)

p = subprocess.run(["promtool", "test", "rules", os.path.basename(TESTS)], cwd=PROM,
                   capture_output=True, text=True)
ok(p.returncode == 0, "promtool test rules passes", p.stdout + p.stderr)

with open(TESTS) as f:
    tests = yaml.safe_load(f)
fired, quiet = set(), set()
for t in tests["tests"]:
    for c in t.get("alert_rule_test", []):
        (fired if c.get("exp_alerts") else quiet).add(c["alertname"])
ok(set(alerts) <= fired, "every alert has a case where it fires (none: %s)" % sorted(set(alerts) - fired))
ok(set(alerts) <= quiet, "every alert has a case where it stays quiet (none: %s)" % sorted(set(alerts) - quiet))

with open(os.path.join(COMPONENT, "prometheusrule.yaml")) as f:
    pr = yaml.safe_load(f)
ok(pr["kind"] == "PrometheusRule" and pr["spec"]["groups"] == rules["groups"],
   "the component's PrometheusRule holds the rule file's groups, unchanged")

tmp = tempfile.mkdtemp(prefix="alerts_test.")
try:
    rel = os.path.relpath(os.path.join(SRC, "deploy"), tmp)
    with open(os.path.join(tmp, "kustomization.yaml"), "w") as f:
        f.write("resources: [%s/base]\ncomponents: [%s/components/monitoring]\n" % (rel, rel))
    p = subprocess.run(["kubectl", "kustomize", tmp], capture_output=True, text=True)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
ok(p.returncode == 0, "kubectl kustomize renders the base with the monitoring component", p.stderr)
docs = list(yaml.safe_load_all(p.stdout)) if p.returncode == 0 else []
by_kind = {}
for d in docs:
    if d:
        by_kind.setdefault(d["kind"], []).append(d)
sm = (by_kind.get("ServiceMonitor") or [None])[0]
svc = [s for s in by_kind.get("Service", []) if s["metadata"]["name"] == "luascale-metrics"]
if ok(sm is not None and len(svc) == 1, "one ServiceMonitor, and the metrics Service"):
    svc = svc[0]
    labels = svc["metadata"].get("labels", {})
    sel = sm["spec"]["selector"]["matchLabels"]
    ports = [pt.get("name") for pt in svc["spec"]["ports"]]
    ok(all(labels.get(k) == v for k, v in sel.items()) and sel,
       "the ServiceMonitor's selector %s matches the Service's labels %s" % (sel, labels))
    ok(sm["metadata"].get("namespace") == svc["metadata"].get("namespace"),
       "the ServiceMonitor is in the Service's namespace (%s)" % sm["metadata"].get("namespace"))
    ok(all(e.get("port") in ports and e.get("path") == "/metrics" for e in sm["spec"]["endpoints"]),
       "its endpoints name the Service's port %s and /metrics" % ports)
rendered = (by_kind.get("PrometheusRule") or [{}])[0]
ok(rendered.get("spec", {}).get("groups") == rules["groups"],
   "the rendered PrometheusRule holds the rule file's groups")

with open(os.path.join(SRC, "docs", "operations.md")) as f:
    guide = f.read()
used = set()
for g in rules["groups"]:
    for r in g["rules"]:
        used |= set(re.findall(r"\bluascale_[a-z_]+", r["expr"]))
missing = sorted(m for m in used if "| `%s`" % m not in guide and "`%s`," % m not in guide)
ok(used and not missing, "every metric the alerts read is in the guide's table (missing: %s)" % missing)

print("1..%d" % count)
sys.exit(1 if fails else 0)
