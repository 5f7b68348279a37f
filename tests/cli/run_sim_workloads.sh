#!/usr/bin/env bash
# End to end: `luascale sim` + `luascale run` (examples/sim-run.yaml's
# settings), and work added with plain kubectl as the README shows it:
# `kubectl create deployment web --image=x --replicas=40` makes luascale
# grow the simulated cloud until all 40 pods run (the LimitRange gives
# them requests), and `kubectl scale deployment web --replicas=0` makes it
# remove the nodes again, down to the group's minimum. Every wait polls a
# condition against a deadline.
# usage: run_sim_workloads.sh LUASCALE_BINARY SOURCE_DIR
set -u
BIN=$1
SRC=$(cd "$2" && pwd)
TMP=$(mktemp -d)
# shellcheck source=daemonlib.sh
# every wait ends before CTest's TIMEOUT for this test, so a failure shows what it saw
BUDGET=220
. "$(dirname "$0")/daemonlib.sh"
command -v kubectl >/dev/null || { echo "not ok - kubectl is not installed"; exit 1; }

printf '%s\n' \
  'seed: 3' \
  'duration: 2h' \
  'node_groups:' \
  '  - {name: workers, min: 1, max: 20, price_per_hour: 0.2,' \
  '     template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}' \
  'cloud: {boot_delay: 1s, boot_jitter: 500ms, launch_latency: 200ms, shutdown_delay: 1s}' \
  'cluster: {register_delay: 300ms, scheduler_interval: 200ms}' \
  'initial_nodes: [{group: workers, count: 1}]' >"$TMP/scenario.yaml"

"$BIN" sim --listen 127.0.0.1:0 --scenario "$TMP/scenario.yaml" \
  --kubeconfig-out "$TMP/sim.kubeconfig" >"$TMP/sim.log" 2>&1 &
PIDS+=($!)
until_true 20 grep -q "serving .* on http://127.0.0.1:" "$TMP/sim.log" ||
  { not_ok "the simulator starts"; exit 1; }
K() { kubectl --kubeconfig "$TMP/sim.kubeconfig" --context luascale-sim --request-timeout=10s "$@"; }

# the example config, on this simulator's kubeconfig and the repository's policy
sed -e "s|kubeconfig: /tmp/sim.kubeconfig|kubeconfig: $TMP/sim.kubeconfig|" \
    -e "s|path: ../policies/default.lua|path: $SRC/policies/default.lua|" \
    "$SRC/examples/sim-run.yaml" >"$TMP/run.yaml"
grep -q "$TMP/sim.kubeconfig" "$TMP/run.yaml" || { not_ok "examples/sim-run.yaml names /tmp/sim.kubeconfig"; exit 1; }
"$BIN" run --config "$TMP/run.yaml" >"$TMP/run.log" 2>&1 &
PIDS+=($!)

nodes() { K get nodes --no-headers 2>/dev/null | wc -l; }
web_running() { K get pods -l app=web --field-selector=status.phase=Running --no-headers 2>/dev/null | wc -l; }
ge() { [ "$("$1")" -ge "$2" ]; }
eq() { [ "$("$1")" -eq "$2" ]; }

t="kubectl create deployment web --image=x --replicas=40"
if K create deployment web --image=x --replicas=40 >"$TMP/kubectl.out" 2>&1; then ok "$t"; else not_ok "$t"; cat "$TMP/kubectl.out"; fi

t="its pods get the LimitRange's default requests"
req=$(K get pods -l app=web -o jsonpath='{.items[0].spec.containers[0].resources.requests.cpu}' 2>&1)
if [ "$req" = "500m" ]; then ok "$t"; else not_ok "$t (got '$req')"; fi

t="luascale scales the simulated cloud up until all 40 pods run"
if until_true 90 eq web_running 40 && ge nodes 5; then ok "$t"; else not_ok "$t ($(web_running) running, $(nodes) nodes)"; fi

t="the Deployment reports 40 available replicas"
web_available() { K get deployment web -o jsonpath='{.status.availableReplicas}' 2>/dev/null; }
if until_true 10 eq web_available 40; then ok "$t"; else not_ok "$t"; fi

t="kubectl scale deployment web --replicas=0"
web_replicas() { K get deployment web -o jsonpath='{.status.replicas}' 2>/dev/null; }
if K scale deployment web --replicas=0 >"$TMP/kubectl.out" 2>&1 && until_true 10 eq web_replicas 0; then ok "$t"; else not_ok "$t"; fi

t="luascale scales the simulated cloud back down to the group's minimum"
if until_true 150 eq nodes 1; then ok "$t"; else not_ok "$t ($(nodes) nodes)"; fi

finish
