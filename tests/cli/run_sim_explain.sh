#!/usr/bin/env bash
# `luascale run` against `luascale sim`: why a node stays. The daemon
# explains every node each intervals.explain: /debug/nodes (on the metrics
# port) names a node the default policy keeps, with its reason and since
# when, as valid JSON; `luascale status --nodes` prints the status
# ConfigMap's summary and, with --url, every node; a dry run serves the same
# and logs the summary with the status it would write. Errors name what
# failed. Every wait polls a condition against a deadline.
# usage: run_sim_explain.sh LUASCALE_BINARY SOURCE_DIR  (KEEP_TMP=1 keeps the logs)
set -u
BIN=$1
SRC=$2
TMP=$(mktemp -d)
# every wait ends before CTest's TIMEOUT for this test, so a failure shows what it saw
BUDGET=100
# shellcheck source=daemonlib.sh
. "$(dirname "$0")/daemonlib.sh"
PY=/usr/bin/python3
need curl kubectl

# one node of 4 cpu, 3 of them asked for: utilization 0.75, kept
printf '%s\n' \
  'seed: 7' \
  'start: "2026-11-30T08:00:00Z"' \
  'duration: 2h' \
  'node_groups:' \
  '  - {name: workers, min: 0, max: 4, price_per_hour: 0.2,' \
  '     template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}' \
  'cloud: {boot_delay: 1s, launch_latency: 200ms}' \
  'cluster: {register_delay: 200ms, scheduler_interval: 200ms}' \
  'initial_nodes: [{group: workers, count: 1}]' \
  'workloads:' \
  '  - {name: web, controller: replicaset, count: 1, requests: {cpu: "3", memory: 1Gi}}' \
  >"$TMP/scenario.yaml"

"$BIN" sim --listen 127.0.0.1:0 --scenario "$TMP/scenario.yaml" \
  --kubeconfig-out "$TMP/sim.kubeconfig" >"$TMP/sim.log" 2>&1 &
PIDS+=($!)
until_true 20 grep -qs "serving .* on http://127.0.0.1:" "$TMP/sim.log" || { echo "not ok - the simulator did not start"; exit 1; }
KC="$TMP/sim.kubeconfig"

# explained every round (a round every 2 s)
printf '%s\n' \
  "cluster: {kubeconfig: $KC, context: luascale-sim}" \
  "node_groups:" \
  "  - {name: workers, min: 0, max: 4, price_per_hour: 0.2," \
  "     template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}" \
  "policy: {path: $SRC/policies/default.lua}" \
  "provider: {kind: sim}" \
  "intervals: {reconcile: 2s, batch_idle: 200ms, batch_max: 1s, explain: 1s}" \
  "status: {interval: 1s}" >"$TMP/run.yaml"
"$BIN" run --config "$TMP/run.yaml" >"$TMP/run.log" 2>&1 &
RUN_PID=$!
PIDS+=($RUN_PID)

port_of() { # LOG: the port its daemon serves /metrics and /debug/nodes on
  sed -n 's/.*serving \/metrics.* (port \([0-9]*\)).*/\1/p' "$1" | head -1
}
t="the daemon serves /debug/nodes beside /metrics"
if until_true 30 grep -qs "serving /metrics, /healthz, /readyz and /debug/nodes on" "$TMP/run.log"; then
  ok "$t"; else not_ok "$t"; fi
PORT=$(port_of "$TMP/run.log")
NODE=$(kubectl --kubeconfig "$KC" --context luascale-sim get nodes -o name 2>/dev/null | head -1 | cut -d/ -f2)

# kept_in FILE PORT: /debug/nodes answers 200 with valid JSON that names
# $NODE kept with the default policy's reason, and since when
kept_in() {
  curl -s -o "$1" -w '%{http_code}' "http://127.0.0.1:$2/debug/nodes" >"$1.code" 2>/dev/null &&
    [ "$(cat "$1.code")" = 200 ] && $PY - "$1" "$NODE" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["intervalSeconds"] == 1, d
assert d["time"].endswith("Z") and d["passes"] >= 1, d
n = [x for x in d["nodes"] if x["name"] == sys.argv[2]]
assert len(n) == 1, d
n = n[0]
assert n["group"] == "workers", n
assert n["state"] == "kept", n
assert n["reason"] == "utilization 0.75 is not below 0.50", n
assert n["since"].endswith("Z") and n["since"] <= d["time"], n
assert d["counts"]["kept"] == len(d["nodes"]), d
EOF
}
t="GET /debug/nodes names the kept node, its reason and since when (JSON)"
if [ -n "$PORT" ] && [ -n "$NODE" ] && until_true 40 kept_in "$TMP/nodes.json" "$PORT"; then
  ok "$t"; else not_ok "$t"; cat "$TMP/nodes.json" 2>/dev/null | head -c 2000; echo; fi

status_nodes() {
  "$BIN" status --config "$TMP/run.yaml" --nodes >"$TMP/out" 2>"$TMP/err" &&
    grep -qs "kept" "$TMP/out" && grep -qsF "utilization # is not below #" "$TMP/out"
}
t="luascale status --nodes prints the ConfigMap's summary: the counts, the reason and a node"
if until_true 30 status_nodes && has out "1 nodes: 1 kept, 0 candidate, 0 removing" &&
   grep -qsE "^ +1  kept +$NODE +utilization # is not below #$" "$TMP/out"; then
  ok "$t"; else not_ok "$t"; fi

t="luascale status --nodes --json is the summary's JSON"
if run "$t" 0 "$BIN" status --config "$TMP/run.yaml" --nodes --json &&
   $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["total"] == 1 and d["kept"] == 1 and d["reasons"][0]["example"] == sys.argv[2], d' "$TMP/out" "$NODE"
then ok "$t"; else not_ok "$t"; fi

t="luascale status --nodes --url lists every node: name, group, state, since, reason"
if run "$t" 0 "$BIN" status --nodes --url "http://127.0.0.1:$PORT" &&
   grep -qsE "^$NODE +workers +kept +20[0-9-]+T[0-9:]+Z +utilization 0.75 is not below 0.50$" "$TMP/out"
then ok "$t"; else not_ok "$t"; fi

t="luascale status --nodes --url on a port nobody serves names the URL and exits 2"
if run "$t" 2 "$BIN" status --nodes --url "http://127.0.0.1:1/" &&
   has err "luascale status: GET http://127.0.0.1:1/debug/nodes: "; then ok "$t"; else not_ok "$t"; fi

t="luascale status --url without --nodes is a usage error"
if run "$t" 1 "$BIN" status --url "http://127.0.0.1:$PORT" && has err "--url goes with --nodes"
then ok "$t"; else not_ok "$t"; fi

# ---- a dry run beside it: it only reads, and explains the same ----
LUASCALE_SERVER_LISTEN=127.0.0.1:0 "$BIN" run --config "$TMP/run.yaml" --dry-run >"$TMP/dry.log" 2>&1 &
PIDS+=($!)
t="a dry run serves /debug/nodes the same, and logs the summary with its status"
if until_true 30 grep -qs "serving /metrics, /healthz, /readyz and /debug/nodes on" "$TMP/dry.log" &&
   DRY_PORT=$(port_of "$TMP/dry.log") && [ -n "$DRY_PORT" ] &&
   until_true 30 kept_in "$TMP/dry.json" "$DRY_PORT" &&
   until_true 20 grep -qs "would say: .*Nodes:        1 explained at .*1 kept: utilization # is not below # (e.g. $NODE)" "$TMP/dry.log"
then ok "$t"; else not_ok "$t"; fi

kill -TERM "$RUN_PID"
until_true 10 eval '! kill -0 $RUN_PID 2>/dev/null'
finish
