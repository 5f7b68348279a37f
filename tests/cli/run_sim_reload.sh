#!/usr/bin/env bash
# `luascale run` against `luascale sim`, its config and policy in one
# mounted ConfigMap, each new version swapped in as the kubelet does it
# (a new timestamped folder, a "..data_tmp" symlink renamed over "..data"):
# a broken YAML, then a policy that fails its trial, are failed reloads in
# luascale_policy_reloads_total and the status ConfigMap's lastPolicyError,
# as a refusal by SIGHUP is; a config that loosens safety values is put in
# place with a warning per value and counted as "loosened". Every wait
# polls a condition against a deadline.
# usage: run_sim_reload.sh LUASCALE_BINARY SOURCE_DIR  (KEEP_TMP=1 keeps the logs)
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
  >"$TMP/scenario.yaml"

"$BIN" sim --listen 127.0.0.1:0 --scenario "$TMP/scenario.yaml" \
  --kubeconfig-out "$TMP/sim.kubeconfig" >"$TMP/sim.log" 2>&1 &
PIDS+=($!)
until_true 20 grep -qs "serving .* on http://127.0.0.1:" "$TMP/sim.log" || { echo "not ok - the simulator did not start"; exit 1; }
KC="$TMP/sim.kubeconfig"

# config_text MAX_NODES_TOTAL MAX_SCALE_DOWN: the config as the ConfigMap holds it
config_text() {
  printf '%s\n' \
    "cluster: {kubeconfig: $KC, context: luascale-sim}" \
    "node_groups:" \
    "  - {name: workers, min: 1, max: 6, price_per_hour: 0.2," \
    "     template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}" \
    "policy: {path: policy.lua}" \
    "safety: {max_nodes_total: $1, max_scale_down_per_round: $2}" \
    "provider: {kind: sim, qps: 20, burst: 5}" \
    "intervals: {reconcile: 1h, batch_idle: 200ms, batch_max: 1s}" \
    "reload: {debounce: 200ms}" \
    "status: {interval: 1s}"
}
# what `luascale status` reads (the cluster settings), outside the ConfigMap
config_text 10 1 >"$TMP/client.yaml"

# A ConfigMap volume as the kubelet lays it out: a timestamped folder per
# version, "..data" pointing at the current one, each key a symlink
# through "..data".
CM="$TMP/cm"
mkdir -p "$CM"
n=0
cm_version() { # CONFIG_FILE POLICY_FILE: a new version, swapped in at once
  local stamp
  n=$((n + 1))
  stamp="..2026_12_01_10_0${n}_00.$n"
  mkdir "$CM/$stamp"
  cp "$1" "$CM/$stamp/config.yaml"
  cp "$2" "$CM/$stamp/policy.lua"
  ln -s "$stamp" "$CM/..data_tmp"
  mv -T "$CM/..data_tmp" "$CM/..data"
}
config_text 10 1 >"$TMP/good.yaml"
cp "$SRC/policies/default.lua" "$TMP/good.lua"
cm_version "$TMP/good.yaml" "$TMP/good.lua"
ln -s ..data/config.yaml "$CM/config.yaml"
ln -s ..data/policy.lua "$CM/policy.lua"

"$BIN" run --config "$CM/config.yaml" >"$TMP/run.log" 2>&1 &
RUN_PID=$!
PIDS+=($RUN_PID)

PORT=
metrics_port() {
  PORT=$(sed -n 's/.*serving \/metrics.* (port \([0-9]*\)).*/\1/p' "$TMP/run.log" | head -1)
  [ -n "$PORT" ]
}
# reloads OUTCOME: the value of luascale_policy_reloads_total{outcome=OUTCOME} (0 when absent)
reloads() {
  curl -fsS "http://127.0.0.1:$PORT/metrics" >"$TMP/metrics.txt" 2>"$TMP/curl.err" || return 1
  awk -v want="luascale_policy_reloads_total{outcome=\"$1\"}" \
    '$1 == want { v = $2 } END { print (v == "" ? 0 : v) }' "$TMP/metrics.txt"
}
reloads_are() { [ "$(reloads "$1")" = "$2" ]; }
# status_error_has TEXT: lastPolicyError of the status ConfigMap holds TEXT (null: no)
status_error_has() {
  "$BIN" status --config "$TMP/client.yaml" --json >"$TMP/status.json" 2>"$TMP/status.err" &&
    $PY - "$TMP/status.json" "$1" <<'EOF'
import json, sys
e = json.load(open(sys.argv[1]))["lastPolicyError"]
sys.exit(0 if e is not None and sys.argv[2] in e["message"] else 1)
EOF
}

t="the daemon starts, watching the config and the policy in the ConfigMap"
if until_true 30 grep -qs "cluster state read; reconciling" "$TMP/run.log" &&
   grep -qs "watching $CM/config.yaml and $CM/policy.lua" "$TMP/run.log" && metrics_port &&
   until_true 20 "$BIN" status --config "$TMP/client.yaml" >/dev/null 2>&1
then ok "$t"; else not_ok "$t"; fi

t="a broken YAML swapped in: a failed reload in the metric and in lastPolicyError; the config in use stays"
printf 'cluster: {kubeconfig: %s\nnode_groups: [\n' "$KC" >"$TMP/broken.yaml"
cm_version "$TMP/broken.yaml" "$TMP/good.lua"
if until_true 20 reloads_are failed 1 && reloads_are ok 0 &&
   until_true 20 status_error_has "config reload failed, the config in use stays: $CM/config.yaml:" &&
   grep -qs "config reload failed, the config in use stays: $CM/config.yaml:" "$TMP/run.log" &&
   kill -0 "$RUN_PID"; then ok "$t"; else not_ok "$t"; fi

t="a valid config whose policy fails its trial, swapped in: failed again, and lastPolicyError says why"
printf '%s\n' 'local P = {}' \
  'function P.reconcile(cluster, params, store) error("the trial says no") end' \
  'return P' >"$TMP/fails.lua"
config_text 10 1 >"$TMP/v3.yaml"
cm_version "$TMP/v3.yaml" "$TMP/fails.lua"
if until_true 20 reloads_are failed 2 && reloads_are ok 0 &&
   until_true 20 status_error_has "the trial says no" &&
   grep -qs "policy reload failed.*the trial says no" "$TMP/run.log"; then ok "$t"; else not_ok "$t"; fi

t="SIGHUP with the same files is the same reload: failed, counted the same way"
kill -HUP "$RUN_PID"
if until_true 20 reloads_are failed 3 && reloads_are ok 0; then ok "$t"; else not_ok "$t"; fi

t="a config loosening safety values is put in place, a warning per value, counted as loosened"
config_text 0 2 >"$TMP/loose.yaml"
cm_version "$TMP/loose.yaml" "$TMP/good.lua"
if until_true 20 reloads_are loosened 1 && reloads_are failed 3 &&
   grep -qs "config reloaded from $CM/config.yaml; policy reloaded from $CM/policy.lua" "$TMP/run.log" &&
   grep -qs "warn.*config reload loosens safety.max_nodes_total: 10 -> 0 (no cap)" "$TMP/run.log" &&
   grep -qs "warn.*config reload loosens safety.max_scale_down_per_round: 1 -> 2" "$TMP/run.log"
then ok "$t"; else not_ok "$t"; fi

t="SIGHUP then reloads what is in place: ok"
kill -HUP "$RUN_PID"
if until_true 20 reloads_are ok 1 && reloads_are loosened 1; then ok "$t"; else not_ok "$t"; fi

kill -TERM "$RUN_PID"
until_true 10 eval '! kill -0 $RUN_PID 2>/dev/null'
finish
