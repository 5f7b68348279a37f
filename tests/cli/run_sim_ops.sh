#!/usr/bin/env bash
# `luascale run` against `luascale sim`, what an operator sees of it:
# reloads when the policy (laid out as a mounted ConfigMap, swapped through
# its "..data" symlink) or the config file changes, a broken policy or
# config rejected and the running one kept, settings that need a restart
# named; JSON log lines. Every wait polls a condition against a deadline.
# usage: run_sim_ops.sh LUASCALE_BINARY SOURCE_DIR  (KEEP_TMP=1 keeps the logs)
set -u
BIN=$1
SRC=$2
TMP=$(mktemp -d)
# shellcheck source=daemonlib.sh
# every wait ends before CTest's TIMEOUT for this test, so a failure shows what it saw
BUDGET=105
. "$(dirname "$0")/daemonlib.sh"
PY=/usr/bin/python3

printf '%s\n' \
  'seed: 5' \
  'start: "2026-11-30T08:00:00Z"' \
  'duration: 2h' \
  'node_groups:' \
  '  - {name: workers, min: 1, max: 6, price_per_hour: 0.2,' \
  '     template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}' \
  'cloud: {boot_delay: 1s, launch_latency: 200ms}' \
  'cluster: {register_delay: 200ms, scheduler_interval: 200ms}' \
  'initial_nodes: [{group: workers, count: 1}]' \
  'workloads:' \
  '  - {name: web, controller: replicaset, count: 1, requests: {cpu: 500m, memory: 1Gi}}' \
  '  - {name: batch, controller: replicaset, count: 4, requests: {cpu: "3", memory: 1Gi}}' \
  '  - {name: gpu, controller: replicaset, count: 1, requests: {cpu: 100m, nvidia.com/gpu: 1}}' \
  >"$TMP/scenario.yaml"

"$BIN" sim --listen 127.0.0.1:0 --scenario "$TMP/scenario.yaml" \
  --kubeconfig-out "$TMP/sim.kubeconfig" >"$TMP/sim.log" 2>&1 &
PIDS+=($!)
until_true 20 grep -qs "serving .* on http://127.0.0.1:" "$TMP/sim.log" || { echo "not ok - the simulator did not start"; exit 1; }
KC="$TMP/sim.kubeconfig"

# A ConfigMap volume as the kubelet lays it out: a timestamped folder,
# "..data" pointing at it, the key a symlink through "..data".
CM="$TMP/cm"
mkdir -p "$CM"
cm_version() { # STAMP FILE: a new version of policy.lua, swapped in at once
  mkdir "$CM/..$1"
  cp "$2" "$CM/..$1/policy.lua"
  ln -s "..$1" "$CM/..data_tmp"
  mv -T "$CM/..data_tmp" "$CM/..data"
}
cp "$SRC/policies/default.lua" "$TMP/good.lua"
cm_version 2026_12_01_10_00_00.1 "$TMP/good.lua"
ln -s ..data/policy.lua "$CM/policy.lua"

# write_config CONTEXT PARAM: the config, written in place
write_config() {
  printf '%s\n' \
    "cluster: {kubeconfig: $KC, context: $1}" \
    "node_groups:" \
    "  - {name: workers, min: 1, max: 6, price_per_hour: 0.2," \
    "     template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}" \
    "policy: {path: $CM/policy.lua, params: {scale_down_utilization: $2}}" \
    "provider: {kind: sim, qps: 20, burst: 5}" \
    "intervals: {reconcile: 1h, batch_idle: 200ms, batch_max: 1s}" \
    "reload: {debounce: 200ms}" \
    "status: {interval: 1s}" \
    "log: {format: json}" >"$TMP/run.yaml"
}
write_config luascale-sim 0.5
"$BIN" run --config "$TMP/run.yaml" >"$TMP/run.log" 2>&1 &
RUN_PID=$!
PIDS+=($RUN_PID)

# count_of TEXT: how many lines of the run's log hold TEXT
count_of() { grep -cF -- "$1" "$TMP/run.log"; }
# more_than TEXT N: more than N lines hold TEXT
more_than() { [ "$(count_of "$1")" -gt "$2" ]; }

t="the daemon starts, watching the config and the policy"
if until_true 30 grep -qs "cluster state read; reconciling" "$TMP/run.log" &&
   grep -qs "watching $TMP/run.yaml and $CM/policy.lua" "$TMP/run.log"; then ok "$t"; else not_ok "$t"; fi

# ---- the status ConfigMap and `luascale status` ----
K() { kubectl --kubeconfig "$KC" --context luascale-sim "$@"; }
status_has_scale_up() {
  "$BIN" status --config "$TMP/run.yaml" >"$TMP/out" 2>"$TMP/err" && grep -qs "ScaleUp:      20" "$TMP/out"
}
t="luascale status prints the status ConfigMap: health, group sizes, the last scale-up"
if until_true 30 status_has_scale_up && grep -qs "^  Name:         workers" "$TMP/out" &&
   grep -qs "^  Health:       Healthy (ready=" "$TMP/out" &&
   grep -qs "PolicyError:  none" "$TMP/out"; then ok "$t"; else not_ok "$t"; fi

t="luascale status --json is the machine-readable form, read back by kubectl too"
if "$BIN" status --config "$TMP/run.yaml" --json >"$TMP/status.json" 2>"$TMP/err" &&
   K get configmap -n kube-system luascale-status -o 'jsonpath={.data.status\.json}' >"$TMP/kubectl.json" &&
   $PY - "$TMP/status.json" "$TMP/kubectl.json" <<'EOF'
import json, sys
a = json.load(open(sys.argv[1]))
b = json.load(open(sys.argv[2]))
assert a["groups"][0]["name"] == b["groups"][0]["name"], (a, b)
g = a["groups"][0]
assert g["name"] == "workers" and g["min"] == 1 and g["max"] == 6, g
assert g["health"] in ("Healthy", "Backoff"), g
assert a["lastScaleUp"]["group"] == "workers" and a["lastScaleUp"]["count"] >= 1, a
assert a["cluster"]["health"] == "Healthy", a
assert a["lastPolicyError"] is None, a
EOF
then ok "$t"; else not_ok "$t"; fi

t="luascale status on a missing ConfigMap says so and exits 2"
if run "$t" 2 "$BIN" status --config "$TMP/run.yaml" --name no-such-status &&
   has err "ConfigMap kube-system/no-such-status not found"; then ok "$t"; else not_ok "$t"; fi

# ---- Events on pods ----
gpu_pod=$(K get pods -o name | grep /gpu | head -1 | cut -d/ -f2)
described() { K describe pod "$1" >"$TMP/out" 2>"$TMP/err" && grep -qs "$2" "$TMP/out"; }
t="kubectl describe pod: a pod no group fits says why (NotTriggerScaleUp)"
if [ -n "$gpu_pod" ] && until_true 20 described "$gpu_pod" "NotTriggerScaleUp" &&
   grep -qs "fits no group: needs nvidia.com/gpu" "$TMP/out"; then ok "$t"; else not_ok "$t"; fi

# the batch pod that a scale-up was for (the first one fits the first node)
triggered_pod() {
  batch_pod=$(K get events -o json 2>/dev/null | $PY -c '
import json, sys
for e in json.load(sys.stdin)["items"]:
    if e["reason"] == "TriggeredScaleUp" and e["involvedObject"]["name"].startswith("batch"):
        print(e["involvedObject"]["name"]); break')
  [ -n "$batch_pod" ]
}
t="kubectl describe pod: a pod that a scale-up is for names the group (TriggeredScaleUp)"
if until_true 20 triggered_pod && described "$batch_pod" "TriggeredScaleUp" &&
   grep -qs "pod triggered scale-up: workers" "$TMP/out"; then ok "$t"; else not_ok "$t"; fi

# each round tells the gpu pod again: one Event whose count rises
gpu_events() {
  K get events -o json >"$TMP/events.json" 2>"$TMP/err" && $PY - "$TMP/events.json" "$gpu_pod" <<'EOF'
import json, sys
evs = [e for e in json.load(open(sys.argv[1]))["items"]
       if e["involvedObject"]["name"] == sys.argv[2] and e["reason"] == "NotTriggerScaleUp"]
assert len(evs) == 1, len(evs)
assert evs[0]["count"] >= 3, evs[0]["count"]
assert evs[0]["involvedObject"]["uid"], evs[0]
EOF
}
# hup_round: SIGHUP, and wait for the reload (a round) it causes
hup_round() {
  local before
  before=$(count_of "policy reloaded from")
  kill -HUP "$RUN_PID" && until_true 20 more_than "policy reloaded from" "$before"
}
t="the same Event again is one Event with a rising count, not a new one"
if hup_round && hup_round && hup_round && until_true 20 gpu_events; then ok "$t"; else not_ok "$t"; fi

# ---- the policy, through the ConfigMap's ..data swap ----
t="a ConfigMap ..data swap reloads the policy, as SIGHUP does"
before=$(count_of "policy reloaded from")
{ cat "$TMP/good.lua"; echo "-- version 2"; } >"$TMP/v2.lua"
cm_version 2026_12_01_10_05_00.2 "$TMP/v2.lua"
if until_true 20 more_than "policy reloaded from" "$before" &&
   grep -qs "the policy $CM/policy.lua changed" "$TMP/run.log"; then ok "$t"; else not_ok "$t"; fi

t="a broken policy swapped in is refused and the running one stays"
printf 'local P = {}\nfunction P.reconcile(\n' >"$TMP/broken.lua"
cm_version 2026_12_01_10_10_00.3 "$TMP/broken.lua"
if until_true 20 more_than "policy reload failed" 0 && kill -0 "$RUN_PID"; then ok "$t"; else not_ok "$t"; fi

t="a complete policy after the broken one is loaded"
before=$(count_of "policy reloaded from")
cm_version 2026_12_01_10_15_00.4 "$TMP/good.lua"
if until_true 20 more_than "policy reloaded from" "$before"; then ok "$t"; else not_ok "$t"; fi

# ---- the config ----
t="a broken config is refused with its line and the config in use stays"
printf 'cluster: {kubeconfig: %s\nnode_groups: [\n' "$KC" >"$TMP/run.yaml"
if until_true 20 more_than "config reload failed, the config in use stays" 0 &&
   grep "config reload failed" "$TMP/run.log" | grep -qs "run.yaml:" && kill -0 "$RUN_PID"
then ok "$t"; else not_ok "$t"; fi

t="a valid config is put in place; a setting that needs a restart is named and not applied"
write_config another-context 0.4
if until_true 20 more_than "config reloaded from $TMP/run.yaml" 0 &&
   grep "need a restart" "$TMP/run.log" | grep -qs "cluster.context" &&
   kill -0 "$RUN_PID"; then ok "$t"; else not_ok "$t"; fi

t="SIGHUP still reloads after the config changed"
before=$(count_of "policy reloaded from")
kill -HUP "$RUN_PID"
if until_true 20 more_than "policy reloaded from" "$before"; then ok "$t"; else not_ok "$t"; fi

# ---- JSON logs ----
t="with log.format json every line is one JSON object with time, level and msg"
if $PY - "$TMP/run.log" <<'EOF'
import json, re, sys
n = 0
for line in open(sys.argv[1], encoding="utf-8"):
    o = json.loads(line)
    assert isinstance(o, dict), line
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", o["time"]), o
    assert o["level"] in ("debug", "info", "warn", "error"), o
    assert isinstance(o["msg"], str)
    n += 1
assert n > 5, n
EOF
then ok "$t"; else not_ok "$t"; fi

kill -TERM "$RUN_PID"
until_true 10 eval '! kill -0 $RUN_PID 2>/dev/null'
finish
