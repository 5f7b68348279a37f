#!/usr/bin/env bash
# The README's reload command with `luascale sim` running beside `luascale
# run`, as in its walk-through: `run --pid-file FILE` says its pid at
# start and writes it to FILE (removed at exit), so
# `kill -HUP "$(cat FILE)"` reloads that process alone; `luascale sim`
# takes a SIGHUP, logs it and keeps serving (it used to die silently).
# Also: `luascale sim --help` documents --default-requests in its usage
# line and every default under its own flag.
# usage: reload_pid_file.sh LUASCALE_BINARY SOURCE_DIR  (KEEP_TMP=1 keeps the logs)
set -u
BIN=$1
SRC=$2
TMP=$(mktemp -d)
# every wait ends before CTest's TIMEOUT for this test
BUDGET=80
# shellcheck source=daemonlib.sh
. "$(dirname "$0")/daemonlib.sh"
need kubectl

# ---- sim --help ----
"$BIN" sim --help >"$TMP/help.log" 2>&1
t="sim --help names --default-requests in its usage line"
if sed -n '1,/^$/p' "$TMP/help.log" | grep -qF -- "--default-requests"; then ok "$t"; else not_ok "$t"; fi
t="sim --help puts each default under its own flag (30m under --watch-timeout)"
# the lines from a flag up to the next flag are that flag's text
flag_text() { awk -v f="$1" '/^  --/ { on = index($0, "  " f " ") == 1 } on' "$TMP/help.log"; }
if flag_text --watch-timeout | grep -qF "(default 30m)" && ! flag_text --default-requests | grep -qF "30m" &&
   flag_text --default-requests | grep -qF "default cpu=500m,memory=512Mi"; then ok "$t"; else
  flag_text --watch-timeout; flag_text --default-requests; not_ok "$t"; fi
t="sim --help says SIGHUP does not stop it"
if grep -q "SIGHUP is logged and" "$TMP/help.log"; then ok "$t"; else not_ok "$t"; fi

printf '%s\n' \
  'seed: 3' \
  'start: "2026-11-30T08:00:00Z"' \
  'duration: 2h' \
  'node_groups:' \
  '  - {name: workers, min: 1, max: 4, price_per_hour: 0.2,' \
  '     template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}' \
  'cloud: {boot_delay: 1s, launch_latency: 200ms}' \
  'cluster: {register_delay: 200ms, scheduler_interval: 200ms}' \
  'initial_nodes: [{group: workers, count: 1}]' \
  >"$TMP/scenario.yaml"

"$BIN" sim --listen 127.0.0.1:0 --scenario "$TMP/scenario.yaml" \
  --kubeconfig-out "$TMP/sim.kubeconfig" >"$TMP/sim.log" 2>&1 &
SIM=$!
PIDS+=($SIM)
until_true 20 grep -qs "serving .* on http://127.0.0.1:" "$TMP/sim.log" || { echo "not ok - the simulator did not start"; exit 1; }

printf '%s\n' \
  "cluster: {kubeconfig: $TMP/sim.kubeconfig, context: luascale-sim}" \
  "node_groups:" \
  "  - {name: workers, min: 1, max: 4, price_per_hour: 0.2," \
  "     template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}" \
  "policy: {path: $SRC/policies/default.lua}" \
  "provider: {kind: sim}" \
  "intervals: {reconcile: 1h}" >"$TMP/config.yaml"

t="run --pid-file in a folder that does not exist fails at start, naming it"
if run "$t" 2 timeout 20 "$BIN" run --config "$TMP/config.yaml" --no-server --pid-file "$TMP/nodir/run.pid" &&
   has err "nodir/run.pid"; then ok "$t"; else not_ok "$t"; fi

"$BIN" run --config "$TMP/config.yaml" --no-server --pid-file "$TMP/run.pid" >"$TMP/run.log" 2>&1 &
RUN=$!
PIDS+=($RUN)

t="run writes its pid to the --pid-file and says it at start"
if until_true 20 grep -qs "cluster state read" "$TMP/run.log" && [ "$(cat "$TMP/run.pid")" = "$RUN" ] &&
   grep -q "starting: pid $RUN, pid file $TMP/run.pid" "$TMP/run.log"; then ok "$t"; else not_ok "$t"; fi

t="kill -HUP \"\$(cat FILE)\" reloads luascale run"
kill -HUP "$(cat "$TMP/run.pid")"
if until_true 20 grep -qs "policy reloaded from" "$TMP/run.log" && kill -0 "$SIM" 2>/dev/null; then ok "$t"; else not_ok "$t"; fi

t="luascale sim logs a SIGHUP and keeps serving"
kill -HUP "$SIM"
if until_true 10 grep -qs "SIGHUP: ignored" "$TMP/sim.log" && kill -0 "$SIM" 2>/dev/null &&
   kubectl --kubeconfig "$TMP/sim.kubeconfig" --request-timeout=10s get --raw /version >/dev/null 2>&1; then ok "$t"; else not_ok "$t"; fi

t="run removes its pid file when it stops"
kill -TERM "$RUN"
if until_true 30 test ! -e "$TMP/run.pid" && wait "$RUN" && grep -q "stopping" "$TMP/run.log"; then ok "$t"; else not_ok "$t"; fi

finish
