#!/usr/bin/env bash
# `luascale run` against `luascale sim`: signals and shutdown. SIGTERM ends
# the process within a bound in every phase — the initial sync against an
# API server that does not answer (held requests) or refuses connections
# (backoff waits), the batching wait, a policy call that runs until its
# budget, the policy's load at startup — and SIGHUP still reloads the
# policy from the signal thread.
# Also: relists after 410s in a row back off; a cache that stops following
# the server (its watch failing) plans no scale-down and says so. Every wait polls a condition against a
# deadline; the bounds are on the process having exited, not on timings.
# usage: run_sim_signals.sh LUASCALE_BINARY SOURCE_DIR  (KEEP_TMP=1 keeps the logs)
set -u
BIN=$1
SRC=$2
TMP=$(mktemp -d)
KILL_AT_EXIT=1
# shellcheck source=daemonlib.sh
# every wait ends before CTest's TIMEOUT for this test, so a failure shows what it saw
BUDGET=280
. "$(dirname "$0")/daemonlib.sh"
gone() { ! kill -0 "$1" 2>/dev/null; }

# The bound on exiting after SIGTERM: shutdown starts within 1 s; the rest
# is joining threads and freeing (slow under the sanitizers).
EXIT_BOUND=5

start_sim() { # NAME [SIM FLAGS...]: sets BASE and KC
  local name=$1
  shift
  "$BIN" sim --listen 127.0.0.1:0 --scenario "$TMP/scenario.yaml" \
    --kubeconfig-out "$TMP/$name.kubeconfig" "$@" >"$TMP/$name-sim.log" 2>&1 &
  PIDS+=($!)
  until_true 20 grep -qs "serving .* on http://127.0.0.1:" "$TMP/$name-sim.log" || return 1
  BASE=$(grep -o "http://127.0.0.1:[0-9]*" "$TMP/$name-sim.log" | head -1)
  KC="$TMP/$name.kubeconfig"
}

# write_config NAME [POLICY_YAML [SAFETY [PARAMS]]]
write_config() {
  printf '%s\n' \
    "cluster: {kubeconfig: $KC, context: luascale-sim}" \
    "node_groups:" \
    "  - {name: workers, min: 1, max: 6, price_per_hour: 0.2," \
    "     template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}" \
    "policy: {path: ${2:-$TMP/policy.lua}, params: ${4:-{\}}}" \
    "safety: ${3:-{\}}" \
    "provider: {kind: sim, qps: 20, burst: 5}" \
    "intervals: {reconcile: 1h, batch_idle: 200ms, batch_max: 1s}" >"$TMP/$1.yaml"
}

start_run() { # NAME [ENV=VALUE...]
  local name=$1
  shift
  env "$@" "$BIN" run --config "$TMP/$name.yaml" >"$TMP/$name-run.log" 2>&1 &
  RUN_PID=$!
  PIDS+=($RUN_PID)
}

# term_exits NAME: SIGTERM, then the process must have exited within the bound
term_exits() {
  kill -TERM "$RUN_PID"
  until_true "$EXIT_BOUND" gone "$RUN_PID" || return 1
  wait "$RUN_PID" 2>/dev/null
  grep -qs "SIGTERM: stopping" "$TMP/$1-run.log"
}

printf '%s\n' \
  'seed: 3' \
  'start: "2026-11-30T08:00:00Z"' \
  'duration: 2h' \
  'node_groups:' \
  '  - {name: workers, min: 1, max: 6, price_per_hour: 0.2,' \
  '     template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}' \
  'cloud: {boot_delay: 1s, launch_latency: 200ms}' \
  'cluster: {register_delay: 200ms, scheduler_interval: 200ms}' \
  'initial_nodes: [{group: workers, count: 3}]' \
  'workloads:' \
  '  - {name: web, controller: replicaset, count: 1, requests: {cpu: 500m, memory: 1Gi}}' \
  >"$TMP/scenario.yaml"
cp "$SRC/policies/default.lua" "$TMP/policy.lua"

# ---- the initial sync: requests held by the server ----
t="SIGTERM during the initial sync, the API server holding every answer: exits within ${EXIT_BOUND}s"
if start_sim held --fault latency=1m && write_config held && start_run held &&
   until_true 20 grep -qs "luascale .*: cluster" "$TMP/held-run.log" &&
   term_exits held && grep -qs "stopped before the cluster state was read" "$TMP/held-run.log" &&
   ! grep -qs "cluster state read; reconciling" "$TMP/held-run.log"; then ok "$t"; else not_ok "$t"; fi

# ---- the initial sync: connections refused, informers in backoff ----
t="SIGTERM during the initial sync, the API server down: exits within ${EXIT_BOUND}s"
if start_sim down --fault down=1h && write_config down && start_run down &&
   until_true 20 grep -qs "retrying in" "$TMP/down-run.log" &&
   term_exits down && grep -qs "stopped before the cluster state was read" "$TMP/down-run.log"
then ok "$t"; else not_ok "$t"; fi

# ---- the batching wait, and SIGHUP from the signal thread ----
t="SIGHUP reloads the policy while waiting for the next round"
if start_sim idle && write_config idle && start_run idle &&
   until_true 30 grep -qs "cluster state read; reconciling" "$TMP/idle-run.log" &&
   kill -HUP "$RUN_PID" &&
   until_true 20 grep -qs "policy reloaded from" "$TMP/idle-run.log"; then ok "$t"; else not_ok "$t"; fi

t="SIGTERM in the batching wait: exits within ${EXIT_BOUND}s"
if term_exits idle; then ok "$t"; else not_ok "$t"; fi

# ---- a policy call that runs until its budget ----
t="SIGTERM while a policy runs until its budget: exits within ${EXIT_BOUND}s"
if ! grep -qs "cancel" "$SRC/src/policy/sandbox.h"; then
  # the policy's call ends early only once the sandbox takes a cancel flag
  echo "ok - $t # SKIP the sandbox has no cancel flag in this build"
else
  printf '%s\n' 'local P = {}' \
    'function P.reconcile(cluster, params, store) while true do end end' \
    'return P' >"$TMP/spin.lua"
  if start_sim spin && write_config spin "$TMP/spin.lua" &&
     start_run spin LUASCALE_POLICY_INSTRUCTIONS=100000000000 &&
     until_true 30 grep -qs "cluster state read; reconciling" "$TMP/spin-run.log" &&
     term_exits spin; then ok "$t"; else not_ok "$t"; fi
fi

# ---- startup: a policy whose top level runs long ----
# Loading the policy runs its top level; this one loops until its budget
# (far more instructions and CPU time than the bound). A SIGHUP during the
# load is taken (and remembered); SIGTERM ends the load: the process exits
# 0 without reading the cluster.
t="SIGHUP, then SIGTERM, while the policy's top level runs at startup: exits 0 within ${EXIT_BOUND}s"
printf '%s\n' 'local x = 0 while true do x = x + 1 end' 'return {}' >"$TMP/slowload.lua"
if start_sim slowload && write_config slowload "$TMP/slowload.lua" &&
   start_run slowload LUASCALE_POLICY_INSTRUCTIONS=100000000000 LUASCALE_POLICY_TIMEOUT=1h &&
   until_true 20 grep -qs "loading the policy" "$TMP/slowload-run.log" &&
   kill -HUP "$RUN_PID" &&
   until_true 20 grep -qs "SIGHUP while starting: the config and its policy will be reloaded" "$TMP/slowload-run.log" &&
   kill -TERM "$RUN_PID" && until_true "$EXIT_BOUND" gone "$RUN_PID"; then
  wait "$RUN_PID" 2>/dev/null
  st=$?
  if [ "$st" -eq 0 ] && grep -qs "SIGTERM: stopping" "$TMP/slowload-run.log" &&
     grep -qs "stopped while starting" "$TMP/slowload-run.log" &&
     ! grep -qs "cluster state read" "$TMP/slowload-run.log"; then ok "$t"
  else not_ok "$t (exit status $st)"; fi
else not_ok "$t"; fi

# ---- a 410 storm: relists back off ----
# Every watch ends at once with an in-stream 410. The first relist is
# immediate; the next ones wait (jittered, doubling). By the time the 4th
# 410 in a row is logged for pods, pods have been listed 4 times, not
# thousands.
t="expired watches in a row relist with a backoff, not in a hot loop"
pod_lists() { grep -c "informer pods: listed" "$TMP/storm-run.log"; }
if start_sim storm --fault expire-watches=100000 && write_config storm && start_run storm &&
   until_true 60 grep -qs "informer pods: .*listing again in .* (410 number 4 in a row)" \
     "$TMP/storm-run.log" && [ "$(pod_lists)" -le 5 ]; then ok "$t"; else not_ok "$t"; fi
kill -TERM "$RUN_PID" 2>/dev/null

# ---- a stale cache: no scale-down ----
# The pods watch fails from the start (the list works): the cache ages from
# its list, and once the policy wants nodes gone (after unneeded_for) the
# cache is older than max_cache_staleness.
t="a pods watch that keeps failing: no scale-down, and the log says why"
if start_sim stale --fault error=1:watch:pods && write_config stale "" "{max_cache_staleness: 2s}" \
     "{unneeded_for: 4s, scale_down_delay_after_add: 1s}" &&
   sed -i 's/reconcile: 1h/reconcile: 1s/' "$TMP/stale.yaml" && start_run stale &&
   until_true 40 grep -qs "no scale-down this round: the cluster cache is stale (pods: not in sync for" \
     "$TMP/stale-run.log" &&
   until_true 20 grep -qs "held: " "$TMP/stale-run.log" &&
   ! grep -qs "drain .* done\|delete .* done" "$TMP/stale-run.log"; then ok "$t"; else not_ok "$t"; fi
if [ -n "${RUN_PID:-}" ]; then kill -TERM "$RUN_PID" 2>/dev/null; fi

finish
