#!/usr/bin/env bash
# `luascale run` against `luascale sim` at each log level: log.level debug
# (and LUASCALE_LOG_LEVEL, and --log-level, which wins) adds the watches'
# and the actuator's debug lines; warn leaves out the info lines; a level
# that is not one is refused with the file, line and key. Every wait polls
# a condition against a deadline and fails with the log it saw.
# usage: run_log_level.sh LUASCALE_BINARY SOURCE_DIR
set -u
BIN=$1
SRC=$(cd "$2" && pwd)
TMP=$(mktemp -d)
BUDGET=100
# shellcheck source=daemonlib.sh
. "$(dirname "$0")/daemonlib.sh"

printf '%s\n' 'seed: 3' 'duration: 2h' 'node_groups:' \
  '  - {name: workers, min: 1, max: 3, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}' \
  'initial_nodes: [{group: workers, count: 1}]' >"$TMP/scenario.yaml"
"$BIN" sim --listen 127.0.0.1:0 --scenario "$TMP/scenario.yaml" \
  --kubeconfig-out "$TMP/sim.kubeconfig" >"$TMP/sim.log" 2>&1 &
PIDS+=($!)
until_true 20 grep -q "serving .* on http://127.0.0.1:" "$TMP/sim.log" ||
  { not_ok "the simulator starts"; exit 1; }

write_config() { # NAME LOG_SECTION: its own status ConfigMap, to tell its rounds apart
  printf '%s\n' \
    "cluster: {kubeconfig: $TMP/sim.kubeconfig, context: luascale-sim}" \
    "node_groups:" \
    "  - {name: workers, min: 1, max: 3, template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}" \
    "policy: {path: $SRC/policies/default.lua}" \
    "intervals: {reconcile: 1s}" \
    "status: {name: status-$1, interval: 1s}" \
    "provider: {kind: sim}" "$2" >"$TMP/$1.yaml"
}
K() { kubectl --kubeconfig "$TMP/sim.kubeconfig" --context luascale-sim --request-timeout=10s "$@"; }
# reported NAME: the run NAME has written its status: its rounds happen
reported() { K get configmap -n kube-system "status-$1" >/dev/null 2>&1; }
# start NAME [ARGS...]: `luascale run` on $TMP/NAME.yaml, its log in $TMP/NAME.log
start() {
  local name=$1
  shift
  "$BIN" run --config "$TMP/$name.yaml" --no-server "$@" >"$TMP/$name.log" 2>&1 &
  PIDS+=($!)
  LAST=$!
}
has_line() { grep -qE -- "$2" "$TMP/$1.log"; }
# below NAME LEVELS: a line of one of LEVELS (e.g. "info|debug") in the log
below() { grep -qE "^[0-9T:.-]+Z ($2) " "$TMP/$1.log"; }

write_config debug "log: {level: debug}"
start debug
t="log.level debug: the watches' debug lines"
if until_true 30 has_line debug "debug informer [a-z]+: watching from resourceVersion"; then ok "$t"; else not_ok "$t"; fi
t="log.level debug: the actuator's debug lines"
if until_true 30 has_line debug "debug actuator: [0-9]+ instance\(s\) in flight"; then ok "$t"; else not_ok "$t"; fi
kill -TERM "$LAST"

write_config warn "log: {level: warn}"
start warn
t="log.level warn: rounds run, and no info or debug line is written"
if until_true 30 reported warn && ! below warn "info|debug"; then ok "$t"; else not_ok "$t"; fi
kill -TERM "$LAST"

write_config envlevel "log: {level: warn}"
LUASCALE_LOG_LEVEL=debug "$BIN" run --config "$TMP/envlevel.yaml" --no-server >"$TMP/envlevel.log" 2>&1 &
PIDS+=($!)
ENVPID=$!
t="LUASCALE_LOG_LEVEL=debug wins over the file's warn"
if until_true 30 has_line envlevel "debug informer"; then ok "$t"; else not_ok "$t"; fi
kill -TERM "$ENVPID"

write_config flag "log: {level: debug}"
start flag --log-level error
t="--log-level error wins over the file: rounds run, nothing below error"
if until_true 30 reported flag && ! below flag "info|debug|warn"; then ok "$t"; else not_ok "$t"; fi
kill -TERM "$LAST"

write_config bad "log: {level: loud}"
t="a log.level that is not one is refused with the file, line and what it wants"
if run "$t" 2 "$BIN" run --config "$TMP/bad.yaml" --no-server && has err "bad.yaml:8:" &&
   has err 'a log level, "debug", "info", "warn" or "error"'; then ok "$t"; else not_ok "$t"; fi
t="--log-level that is not one is a usage error"
if run "$t" 1 "$BIN" run --config "$TMP/debug.yaml" --log-level loud && has err "--log-level"; then ok "$t"; else not_ok "$t"; fi

finish
