#!/usr/bin/env bash
# `luascale run` against `luascale sim` over HTTP, with the sim provider:
# pending pods become nodes and the pods run; --dry-run changes nothing;
# SIGHUP swaps in a good policy and keeps the running one when the new one
# is broken; dropped watches, expired resourceVersions (410) and the API
# server down for 20 s are survived, and the cluster is still served
# afterwards; SIGTERM stops it cleanly. Every wait polls a condition
# against a deadline. Reads the API with curl and decodes JSON with lua5.4.
# usage: run_sim.sh LUASCALE_BINARY SOURCE_DIR
set -u
BIN=$1
SRC=$2
TMP=$(mktemp -d)
# shellcheck source=daemonlib.sh
# every wait ends before CTest's TIMEOUT for this test, so a failure shows what it saw
BUDGET=380
. "$(dirname "$0")/daemonlib.sh"

# count_json PATH LUA_PREDICATE_ON_it: how many items of a list satisfy it
count_json() {
  curl -sf "$BASE$1" | lua5.4 -e "
    local cjson = require 'cjson'
    local doc = cjson.decode(io.read('a'))
    local n = 0
    for _, it in ipairs(doc.items or {}) do
      if (function(it) return $2 end)(it) then n = n + 1 end
    end
    print(n)" 2>/dev/null || echo -1
}
nodes_ready() { count_json /api/v1/nodes "true"; }
pods_running() { count_json /api/v1/pods "it.status.phase == 'Running' and it.metadata.namespace == 'default'"; }
pods_pending() { count_json /api/v1/pods "it.status.phase == 'Pending'"; }
eq() { [ "$("$1")" = "$2" ]; }

# start_sim NAME: a simulator on a free port; sets BASE and KC
start_sim() {
  "$BIN" sim --listen 127.0.0.1:0 --scenario "$TMP/scenario.yaml" \
    --kubeconfig-out "$TMP/$1.kubeconfig" >"$TMP/$1-sim.log" 2>&1 &
  PIDS+=($!)
  until_true 20 grep -q "serving .* on http://127.0.0.1:" "$TMP/$1-sim.log" || return 1
  BASE=$(grep -o "http://127.0.0.1:[0-9]*" "$TMP/$1-sim.log" | head -1)
  KC="$TMP/$1.kubeconfig"
  until_true 20 curl -sf "$BASE/version" -o /dev/null
}

# write_config NAME [PARAMS [SAFETY]]: a config on the simulator's
# kubeconfig and our policy copy (PARAMS, SAFETY: YAML flow mappings)
write_config() {
  printf '%s\n' \
    "cluster: {kubeconfig: $KC, context: luascale-sim}" \
    "node_groups:" \
    "  - {name: workers, min: 1, max: 6, price_per_hour: 0.2," \
    "     template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}" \
    "policy: {path: $TMP/policy.lua, params: ${2:-{\}}}" \
    "safety: ${3:-{\}}" \
    "provider: {kind: sim, qps: 20, burst: 5}" \
    "intervals: {reconcile: 2s, batch_idle: 200ms, batch_max: 1s}" >"$TMP/$1.yaml"
}

start_run() { # NAME [FLAGS...]
  local name=$1
  shift
  "$BIN" run --config "$TMP/$name.yaml" "$@" >"$TMP/$name-run.log" 2>&1 &
  RUN_PID=$!
  PIDS+=($RUN_PID)
}

printf '%s\n' \
  'seed: 5' \
  'start: "2026-11-30T08:00:00Z"' \
  'duration: 2h' \
  'node_groups:' \
  '  - {name: workers, min: 1, max: 6, price_per_hour: 0.2,' \
  '     template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}' \
  'cloud: {boot_delay: 1s, boot_jitter: 500ms, launch_latency: 200ms}' \
  'cluster: {register_delay: 200ms, scheduler_interval: 200ms}' \
  'initial_nodes: [{group: workers, count: 1}]' \
  'workloads:' \
  '  - {name: web, controller: replicaset, count: 3, requests: {cpu: "3", memory: 1Gi}}' \
  >"$TMP/scenario.yaml"
cp "$SRC/policies/default.lua" "$TMP/policy.lua"

# ---- scale up ----
t="pending pods become nodes and run"
if start_sim up && write_config up && start_run up &&
   until_true 60 eq pods_running 3 && eq nodes_ready 3 && eq pods_pending 0; then ok "$t"; else not_ok "$t"; fi

t="no node is launched twice for the same pods"
if until_true 10 grep -q "fit the nodes as they are now\|scale_up workers +2 done" "$TMP/up-run.log"; then :; fi
sleep 3
if eq nodes_ready 3; then ok "$t"; else not_ok "$t"; fi

# ---- hot reload ----
t="SIGHUP with a broken policy keeps the running one"
printf 'local P = {\n' >"$TMP/policy.lua"
kill -HUP "$RUN_PID"
if until_true 20 grep -q "policy reload failed" "$TMP/up-run.log" && kill -0 "$RUN_PID"; then ok "$t"; else not_ok "$t"; fi

t="SIGHUP with a good policy swaps it in"
cp "$SRC/policies/default.lua" "$TMP/policy.lua"
kill -HUP "$RUN_PID"
if until_true 20 grep -q "policy reloaded from" "$TMP/up-run.log"; then ok "$t"; else not_ok "$t"; fi

# ---- faults ----
t="dropped watches and an expired resourceVersion are survived"
LISTS_BEFORE=$(grep -c "listed .* objects" "$TMP/up-run.log")
curl -sf -X POST -H 'Content-Type: application/json' \
  -d '{"faults":["expire-watches=3","drop-watches=now"]}' "$BASE/apis/sim.luascale.io/v1/faults" >/dev/null
relisted() { [ "$(grep -c "listed .* objects" "$TMP/up-run.log")" -gt "$LISTS_BEFORE" ]; }
if until_true 40 relisted && kill -0 "$RUN_PID"; then ok "$t"; else not_ok "$t"; fi

t="the API server down for 20 s: luascale waits and comes back"
curl -sf -X POST -H 'Content-Type: application/json' \
  -d '{"faults":["down=20s"]}' "$BASE/apis/sim.luascale.io/v1/faults" >/dev/null
sleep 2
if until_true 60 curl -sf "$BASE/version" -o /dev/null && kill -0 "$RUN_PID" &&
   until_true 60 eq nodes_ready 3 && eq pods_running 3; then ok "$t"; else not_ok "$t"; fi

t="SIGTERM stops it cleanly"
kill -TERM "$RUN_PID"
stopped() { ! kill -0 "$RUN_PID" 2>/dev/null; }
if until_true 40 stopped && grep -q "stopping" "$TMP/up-run.log"; then ok "$t"; else not_ok "$t"; fi

# ---- dry run ----
t="--dry-run logs what it would do and changes nothing"
if start_sim dry && write_config dry && start_run dry --dry-run &&
   until_true 30 grep -q "dry-run: would scale_up workers" "$TMP/dry-run.log"; then
  sleep 3
  if eq nodes_ready 1 && [ "$(pods_pending)" -ge 1 ]; then ok "$t"; else not_ok "$t"; fi
else
  not_ok "$t"
fi

# ---- a restart in the middle of a scale-up ----
t="a restart while instances boot does not launch them again"
sed -i 's/^cloud: .*/cloud: {boot_delay: 6s, launch_latency: 200ms}/' "$TMP/scenario.yaml"
if start_sim restart && write_config restart && start_run restart &&
   until_true 30 grep -q "scale_up workers +2 done" "$TMP/restart-run.log"; then
  kill -TERM "$RUN_PID"
  until_true 40 sh -c "! kill -0 $RUN_PID 2>/dev/null"
  mv "$TMP/restart-run.log" "$TMP/restart-first-run.log"
  start_run restart
  if until_true 60 eq pods_running 3 && sleep 3 && eq nodes_ready 3 &&
     ! grep -q "plan: scale_up" "$TMP/restart-run.log"; then ok "$t"; else not_ok "$t"; fi
  kill -TERM "$RUN_PID"
else
  not_ok "$t"
fi

# ---- scale down, through evictions a 429 refuses at first ----
printf '%s\n' \
  'seed: 9' \
  'start: "2026-11-30T08:00:00Z"' \
  'duration: 2h' \
  'protected_pods: "critical=true"' \
  'node_groups:' \
  '  - {name: workers, min: 1, max: 6, price_per_hour: 0.2,' \
  '     template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}' \
  'cloud: {boot_delay: 1s, launch_latency: 200ms}' \
  'cluster: {register_delay: 200ms, scheduler: least-allocated, scheduler_interval: 200ms}' \
  'initial_nodes: [{group: workers, count: 3}]' \
  'workloads:' \
  '  - {name: hub, controller: statefulset, count: 1, requests: {cpu: 200m, memory: 1Gi}, labels: {critical: "true"}}' \
  '  - {name: web, controller: replicaset, count: 2, requests: {cpu: 500m, memory: 1Gi}, grace: 1s}' \
  >"$TMP/scenario.yaml"
stat_of() { # an integer counter of the simulator's stats
  curl -sf "$BASE/apis/sim.luascale.io/v1/stats" |
    lua5.4 -e "local v = require('cjson').decode(io.read('a'))['$1'] print(math.tointeger(v) or v)"
}

t="idle nodes are drained through evictions (429s retried) and deleted, never the protected pod's"
if start_sim down &&
   write_config down "{unneeded_for: 3s, scale_down_delay_after_add: 3s}" \
     "{max_scale_down_per_round: 1, protected_pod_selector: critical=true}"; then
  curl -sf -X POST -H 'Content-Type: application/json' \
    -d '{"faults":["throttle=3x:create:pods/eviction"]}' "$BASE/apis/sim.luascale.io/v1/faults" >/dev/null
  start_run down
  if until_true 90 eq nodes_ready 1 && eq pods_running 3 &&
     grep -q "refused evicting" "$TMP/down-run.log" &&
     [ "$(stat_of evictions)" -ge 1 ] && [ "$(stat_of protectedDisrupted)" = 0 ]; then
    ok "$t"; else not_ok "$t"; fi
else
  not_ok "$t"
fi

finish
