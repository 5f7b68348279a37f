#!/usr/bin/env bash
# `luascale run` against an API server that does not answer (a closed
# loopback port): the first failed list is said at once at WARN, naming
# the server (its credentials redacted), the context and the kubeconfig
# file that gave the server (the second of two files); --once gives up
# after cluster.sync_timeout (set to 2 s here) with an error naming the
# same and the cause; the daemon keeps retrying past that time and stops
# cleanly on SIGTERM; cluster.sync_timeout is validated. Every wait polls
# a condition against a deadline and fails with the log it saw.
# usage: run_unreachable.sh LUASCALE_BINARY SOURCE_DIR
set -u
BIN=$1
SRC=$2
TMP=$(mktemp -d)
BUDGET=100
# shellcheck source=daemonlib.sh
. "$(dirname "$0")/daemonlib.sh"

# a loopback port nobody listens on: bound once by the kernel's choice, then let go
PORT=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf '%s\n' 'apiVersion: v1' 'kind: Config' 'clusters: []' 'contexts: []' 'users: []' >"$TMP/first.kubeconfig"
printf '%s\n' 'apiVersion: v1' 'kind: Config' 'clusters:' '- name: far' \
  "  cluster: {server: \"https://admin:hunter2pass@127.0.0.1:$PORT\"}" \
  'contexts:' '- name: far-away' '  context: {cluster: far, user: u}' \
  'users:' '- name: u' '  user: {token: s3cr3t-token-value}' >"$TMP/second.kubeconfig"
cp "$SRC/policies/default.lua" "$TMP/policy.lua"
write_config() { # NAME SYNC_TIMEOUT
  printf '%s\n' \
    "cluster: {kubeconfig: \"$TMP/first.kubeconfig:$TMP/second.kubeconfig\", context: far-away, sync_timeout: $2}" \
    "node_groups:" \
    "  - {name: workers, min: 1, max: 6, price_per_hour: 0.2," \
    "     template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}}" \
    "policy: {path: $TMP/policy.lua}" \
    "provider: {kind: sim}" >"$TMP/$1.yaml"
}
ended() { ! kill -0 "$1" 2>/dev/null; }
logged() { grep -qF -- "$2" "$TMP/$1"; }
SERVER="https://<redacted>@127.0.0.1:$PORT"
ORIGIN="(context \"far-away\" of kubeconfig $TMP/second.kubeconfig)"
FIRST="warn  cannot read the cluster from the API server $SERVER $ORIGIN:"

# ---- --once gives up after cluster.sync_timeout ----
write_config once 2s
"$BIN" run --config "$TMP/once.yaml" --once >"$TMP/once.log" 2>&1 &
ONCE=$!
PIDS+=($ONCE)
t="run --once against a closed port ends within its sync_timeout (2 s), not 120 s"
if until_true 30 ended "$ONCE"; then ok "$t"; else not_ok "$t"; fi
wait "$ONCE"
st=$?
t="... with a failure status"
if [ "$st" -ne 0 ]; then ok "$t"; else echo "# status $st"; not_ok "$t"; fi
t="the first failed list is a WARN naming the server, context and kubeconfig file"
if logged once.log "$FIRST" && grep -F -- "$FIRST" "$TMP/once.log" | grep -q "Couldn't connect"; then ok "$t"; else not_ok "$t"; fi
t="... which says how long it retries"
if logged once.log "retrying for 2 s at most (cluster.sync_timeout)"; then ok "$t"; else not_ok "$t"; fi
t="... said once, before the error"
if [ "$(grep -cF -- "$FIRST" "$TMP/once.log")" = 1 ] &&
  [ "$(grep -nF -- "$FIRST" "$TMP/once.log" | cut -d: -f1)" -lt "$(grep -n ' error ' "$TMP/once.log" | head -1 | cut -d: -f1)" ]; then
  ok "$t"
else not_ok "$t"; fi
ERR="error cannot read the cluster within 2 s (cluster.sync_timeout) from the API server $SERVER $ORIGIN:"
t="the error names the timeout, the server, context and kubeconfig file, and the cause"
if logged once.log "$ERR" && grep -F -- "$ERR" "$TMP/once.log" | grep -q "Couldn't connect.*; not synced: nodes"; then ok "$t"; else not_ok "$t"; fi
t="neither the password nor the token is logged"
if ! grep -q "hunter2pass\|s3cr3t-token-value" "$TMP/once.log"; then ok "$t"; else not_ok "$t"; fi

# ---- the daemon says so at once and keeps retrying ----
write_config daemon 1s
"$BIN" run --config "$TMP/daemon.yaml" >"$TMP/daemon.log" 2>&1 &
DAEMON=$!
PIDS+=($DAEMON)
t="the daemon says the first failure at once, with the server, context and file"
if until_true 10 logged daemon.log "$FIRST" && logged daemon.log "retrying until it answers"; then ok "$t"; else not_ok "$t"; fi
t="the daemon retries past cluster.sync_timeout (a fourth failure of nodes)"
if until_true 30 grep -q "informer nodes: .*(failure 4 in a row)" "$TMP/daemon.log"; then ok "$t"; else not_ok "$t"; fi
t="... and is still running, without an error"
if kill -0 "$DAEMON" 2>/dev/null && ! grep -q " error " "$TMP/daemon.log"; then ok "$t"; else not_ok "$t"; fi
kill -TERM "$DAEMON"
t="SIGTERM ends the wait: exit 0, stopped before the cluster state was read"
if until_true 10 ended "$DAEMON" && wait "$DAEMON" && logged daemon.log "stopped before the cluster state was read"; then ok "$t"; else not_ok "$t"; fi

# ---- cluster.sync_timeout is validated ----
write_config zero 0s
t="cluster.sync_timeout: 0s is refused, naming the key and the range"
if run "$t" 2 "$BIN" check --config "$TMP/zero.yaml" && has err "cluster.sync_timeout: must be from 1s to 24h"; then ok "$t"; else not_ok "$t"; fi
write_config unitless 30
t="cluster.sync_timeout without a unit is refused"
if run "$t" 2 "$BIN" check --config "$TMP/unitless.yaml" && has err "cluster.sync_timeout: expected a duration"; then ok "$t"; else not_ok "$t"; fi
t="LUASCALE_CLUSTER_SYNC_TIMEOUT is read and validated"
if LUASCALE_CLUSTER_SYNC_TIMEOUT=25h run "$t" 2 "$BIN" check --config "$TMP/once.yaml" &&
  has err "LUASCALE_CLUSTER_SYNC_TIMEOUT: must be from 1s to 24h"; then ok "$t"; else not_ok "$t"; fi

finish
