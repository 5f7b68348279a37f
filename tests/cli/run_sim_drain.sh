#!/usr/bin/env bash
# `luascale run` against `luascale sim`: a drain planned on a stale pod
# cache never evicts a protected pod. luascale syncs, then every pods
# watch fails (error=1:watch:pods, drop-watches=now), so its cache goes on
# showing an empty node after a protected pod (critical=true) started on
# it. The policy removes the "empty" node; the drain lists the node's pods
# fresh, finds the protected one, evicts nothing, gives the cordon back
# and says why. Then, with every eviction refused (429), a drain is killed
# (SIGKILL) and the next luascale uncordons the node it left behind, and a
# SIGTERM in the middle of a drain uncordons the node before exiting.
# Every wait polls a condition against a deadline. Reads the API with curl
# and decodes JSON with lua5.4.
# usage: run_sim_drain.sh LUASCALE_BINARY SOURCE_DIR
set -u
BIN=$1
SRC=$2
TMP=$(mktemp -d)
LOG_TAIL=25
# shellcheck source=daemonlib.sh
# every wait ends before CTest's TIMEOUT for this test, so a failure shows what it saw
BUDGET=105
. "$(dirname "$0")/daemonlib.sh"

# json PATH LUA_EXPR_ON_doc: prints the expression over the decoded answer
json() {
  curl -sf "$BASE$1" | lua5.4 -e "
    local cjson = require 'cjson'
    local doc = cjson.decode(io.read('a'))
    print((function(doc) $2 end)(doc))" 2>/dev/null || echo "?"
}
stat_of() { json /apis/sim.luascale.io/v1/stats "local v = doc['$1'] return math.tointeger(v) or v"; }
# the node the protected pod runs on, "" while it has none
hub_node() {
  json /api/v1/pods "for _, it in ipairs(doc.items or {}) do
      if it.metadata.labels and it.metadata.labels.critical == 'true' and
         it.status.phase == 'Running' then return it.spec.nodeName or '' end
    end return ''"
}
# whether a node is cordoned, and its luascale.io/cordoned-by annotation
node_state() {
  json "/api/v1/nodes/$1" "local a = doc.metadata.annotations or {}
    return tostring(doc.spec.unschedulable == true) .. ' ' .. tostring(a['luascale.io/cordoned-by'])"
}
fault() {
  curl -sf -X POST -H 'Content-Type: application/json' -d "{\"faults\":[$1]}" \
    "$BASE/apis/sim.luascale.io/v1/faults" >/dev/null
}

printf '%s\n' \
  'seed: 3' \
  'start: "2026-11-30T08:00:00Z"' \
  'duration: 2h' \
  'protected_pods: "critical=true"' \
  'node_groups:' \
  '  - {name: workers, min: 1, max: 4, price_per_hour: 0.2,' \
  '     template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}' \
  'cloud: {boot_delay: 1s, launch_latency: 200ms}' \
  'cluster: {register_delay: 200ms, scheduler: least-allocated, scheduler_interval: 200ms}' \
  'initial_nodes: [{group: workers, count: 2}]' \
  'workloads:' \
  '  - {name: web, controller: replicaset, count: 1, requests: {cpu: 500m, memory: 1Gi}}' \
  '  - {name: hub, controller: statefulset, at: 12s, count: 1, requests: {cpu: 200m, memory: 1Gi}, labels: {critical: "true"}}' \
  >"$TMP/scenario.yaml"
cp "$SRC/policies/default.lua" "$TMP/policy.lua"

"$BIN" sim --listen 127.0.0.1:0 --scenario "$TMP/scenario.yaml" \
  --kubeconfig-out "$TMP/sim.kubeconfig" >"$TMP/sim.log" 2>&1 &
PIDS+=($!)
until_true 20 grep -qs "serving .* on http://127.0.0.1:" "$TMP/sim.log"
BASE=$(grep -o "http://127.0.0.1:[0-9]*" "$TMP/sim.log" | head -1)
until_true 20 curl -sf "$BASE/version" -o /dev/null
printf '%s\n' \
  "cluster: {kubeconfig: $TMP/sim.kubeconfig, context: luascale-sim}" \
  "node_groups:" \
  "  - {name: workers, min: 1, max: 4, price_per_hour: 0.2," \
  "     template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}" \
  "policy: {path: $TMP/policy.lua, params: {unneeded_for: 14s, scale_down_delay_after_add: 1s}}" \
  "safety: {max_scale_down_per_round: 1, protected_pod_selector: critical=true," \
  "         max_cache_staleness: 1h}" \
  "provider: {kind: sim, qps: 20, burst: 5}" \
  "provisioning: {drain_timeout: 30s}" \
  "intervals: {reconcile: 2s, batch_idle: 200ms, batch_max: 1s}" >"$TMP/run.yaml"
# max_cache_staleness is raised so that rounds do plan the drain on the stale
# cache: what is tested is the last line of defence, the check at eviction.
"$BIN" run --config "$TMP/run.yaml" >"$TMP/run.log" 2>&1 &
RUN_PID=$!
PIDS+=($RUN_PID)

has_hub() { [ -n "$(hub_node)" ] && [ "$(hub_node)" != "?" ]; }
t="luascale syncs, then its pods cache goes stale before the protected pod starts"
if until_true 20 grep -q "cluster state read" "$TMP/run.log" &&
   fault '"error=1:watch:pods","drop-watches=now"' &&
   until_true 30 has_hub; then
  HUB_NODE=$(hub_node)
  ok "$t"
else
  HUB_NODE=""
  not_ok "$t"
fi

t="the drain of the protected pod's node gives up before evicting anything, naming the pod and the rule"
gave_up() { grep -q "drain $HUB_NODE gave up: pod default/hub-[0-9]* may not be evicted: pod default/hub-[0-9]* is protected (matches selector critical=true)" "$TMP/run.log"; }
if [ -n "$HUB_NODE" ] && until_true 60 gave_up; then ok "$t"; else not_ok "$t"; fi

t="the protected pod was never evicted"
if [ "$(stat_of protectedDisrupted)" = 0 ] && [ "$(hub_node)" = "$HUB_NODE" ] &&
   ! grep -q "evicted pod default/hub-" "$TMP/run.log"; then ok "$t"; else not_ok "$t"; fi

t="the node luascale cordoned for the drain is uncordoned, its mark removed"
uncordoned() { [ "$(node_state "$HUB_NODE")" = "false nil" ]; }
if grep -q "node $HUB_NODE uncordoned: its drain gave up" "$TMP/run.log" &&
   until_true 20 uncordoned; then ok "$t"; else not_ok "$t"; fi

# ---- cordons left behind: a killed process, a SIGTERM mid-drain ----
kill -TERM "$RUN_PID"
until_true 40 sh -c "! kill -0 $RUN_PID 2>/dev/null"
sed -i -e 's/^initial_nodes: .*/initial_nodes: [{group: workers, count: 2}]/' \
  -e '/name: hub/d' -e 's/count: 1, requests: {cpu: 500m/count: 2, requests: {cpu: 500m/' "$TMP/scenario.yaml"
"$BIN" sim --listen 127.0.0.1:0 --scenario "$TMP/scenario.yaml" \
  --kubeconfig-out "$TMP/sim.kubeconfig" >"$TMP/sim2.log" 2>&1 &
PIDS+=($!)
until_true 20 grep -qs "serving .* on http://127.0.0.1:" "$TMP/sim2.log"
BASE=$(grep -o "http://127.0.0.1:[0-9]*" "$TMP/sim2.log" | head -1)
until_true 20 curl -sf "$BASE/version" -o /dev/null
sed -i 's/unneeded_for: 14s/unneeded_for: 3s/' "$TMP/run.yaml"
fault '"throttle=1:create:pods/eviction"'
mv "$TMP/run.log" "$TMP/run-first.log"
"$BIN" run --config "$TMP/run.yaml" >"$TMP/run.log" 2>&1 &
RUN_PID=$!
PIDS+=($RUN_PID)

t="a luascale killed in the middle of a drain leaves the node cordoned and marked"
drained_node() { grep -o "drain workers-[0-9]*: started" "$TMP/run.log" | head -1 | cut -d' ' -f2 | tr -d :; }
refused() { grep -q "the API server refused evicting" "$TMP/run.log"; }
if until_true 40 refused; then
  NODE=$(drained_node)
  kill -KILL "$RUN_PID"
  until_true 10 sh -c "! kill -0 $RUN_PID 2>/dev/null"
  if [ "$(node_state "$NODE")" = "true luascale" ]; then ok "$t"; else not_ok "$t"; fi
else
  NODE=""
  not_ok "$t"
fi

t="the next luascale uncordons the node the killed one cordoned"
mv "$TMP/run.log" "$TMP/run-killed.log"
"$BIN" run --config "$TMP/run.yaml" >"$TMP/run.log" 2>&1 &
RUN_PID=$!
PIDS+=($RUN_PID)
released() { grep -q "node $NODE uncordoned: no removal of it is running" "$TMP/run.log"; }
if [ -n "$NODE" ] && until_true 30 released; then ok "$t"; else not_ok "$t"; fi

t="SIGTERM in the middle of a drain uncordons the node before exiting"
started() { grep -q "drain workers-[0-9]*: started" "$TMP/run.log"; }
stopped() { ! kill -0 "$RUN_PID" 2>/dev/null; }
if until_true 40 started && until_true 20 refused; then
  NODE=$(drained_node)
  kill -TERM "$RUN_PID"
  if until_true 40 stopped && [ "$(node_state "$NODE")" = "false nil" ] &&
     grep -q "node $NODE uncordoned: its removal was abandoned" "$TMP/run.log"; then
    ok "$t"; else not_ok "$t"; fi
else
  not_ok "$t"
fi

finish
