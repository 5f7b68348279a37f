#!/usr/bin/env bash
# `luascale sim` driven by the real kubectl: get, watch, cordon, uncordon,
# drain and delete against the simulated API server, each checked by exit
# status and output, then a clean stop on SIGTERM. Waits poll conditions
# against deadlines. Fails when kubectl is not installed (scripts/setup.sh
# installs Debian's kubernetes-client when no kubectl is on PATH).
# usage: sim_kubectl.sh LUASCALE_BINARY
set -u
BIN=$1
if ! command -v kubectl >/dev/null 2>&1; then
  echo "not ok - kubectl is not installed (scripts/setup.sh installs kubernetes-client)"
  exit 1
fi
TMP=$(mktemp -d)
SIM_PID=
WATCH_PID=
cleanup() {
  [ -n "$WATCH_PID" ] && kill "$WATCH_PID" 2>/dev/null
  [ -n "$SIM_PID" ] && kill -TERM "$SIM_PID" 2>/dev/null && wait "$SIM_PID" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
not_ok() {
  fail=$((fail + 1)); echo "not ok - $1"
  for f in out err; do [ -f "$TMP/$f" ] && sed "s/^/#   $f: /" "$TMP/$f" | head -20; done
}
# k ARGS...: kubectl on the simulator, its discovery cache kept in $TMP
k() { kubectl --kubeconfig "$TMP/kubeconfig" --cache-dir "$TMP/cache" --request-timeout=20s "$@"; }
# run CMD...: stdout and stderr to $TMP/out and $TMP/err; the exit status
run() { "$@" >"$TMP/out" 2>"$TMP/err"; }
has() { grep -qF -- "$2" "$TMP/$1"; }
# until_true SECONDS CMD...: polls CMD until it succeeds or the deadline passes
until_true() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    [ "$SECONDS" -ge "$deadline" ] && return 1
    sleep 0.1
  done
}

cat >"$TMP/scenario.yaml" <<'EOF'
seed: 11
duration: 2h
node_groups:
  - name: workers
    min: 0
    max: 5
    template:
      allocatable: {cpu: 2, memory: 8Gi, pods: 110}
      labels: {node-role.kubernetes.io/worker: "true"}
cloud: {boot_delay: 1s, boot_jitter: 0s, launch_latency: 0s}
cluster: {register_delay: 200ms, scheduler: least-allocated, scheduler_interval: 200ms}
initial_nodes:
  - {group: workers, count: 3}
workloads:
  - name: agent
    namespace: kube-system
    controller: daemonset
    requests: {cpu: 100m, memory: 64Mi}
    labels: {app: agent}
  - name: web
    controller: replicaset
    count: 3
    requests: {cpu: 500m, memory: 512Mi}
    labels: {app: web}
    grace: 0s
  - name: cache
    controller: statefulset
    count: 2
    requests: {cpu: 200m, memory: 256Mi}
    labels: {app: cache}
    local_storage: true
    grace: 0s
pdbs:
  - name: web
    selector: {app: web}
    max_unavailable: 1
EOF

"$BIN" sim --listen 127.0.0.1:0 --scenario "$TMP/scenario.yaml" --kubeconfig-out "$TMP/kubeconfig" \
  >"$TMP/sim.out" 2>"$TMP/sim.err" &
SIM_PID=$!

t="luascale sim writes its kubeconfig and answers /version"
printed_port() { grep -qs "serving .* on http://127.0.0.1:" "$TMP/sim.out"; }
version_ok() { k get --raw /version 2>/dev/null | grep -q '"major"'; }
if until_true 30 printed_port && [ -s "$TMP/kubeconfig" ] && until_true 30 version_ok &&
   grep -q "current-context: luascale-sim" "$TMP/kubeconfig"; then ok "$t"; else
  not_ok "$t"; sed 's/^/#   sim: /' "$TMP/sim.out" "$TMP/sim.err"; exit 1; fi

running_pods() { [ "$(k get pods -A --field-selector=status.phase=Running -o name 2>/dev/null | wc -l)" -eq 8 ]; }
t="kubectl get nodes,pods -A lists the simulated cluster"
if until_true 30 running_pods && run k get nodes,pods -A && has out "node/workers-1" &&
   has out "node/workers-3" && has out "kube-system" && has out "pod/web-1" && has out "Running" &&
   has out "ROLES" && has out "worker"; then ok "$t"; else not_ok "$t"; fi

t="kubectl get nodes -w prints the change a cordon makes, and kubectl cordon works"
k get nodes -w >"$TMP/watch.out" 2>"$TMP/watch.err" &
WATCH_PID=$!
watch_listed() { grep -q "workers-3" "$TMP/watch.out"; }
watch_saw_cordon() { grep -q "workers-1 .*SchedulingDisabled" "$TMP/watch.out"; }
if until_true 30 watch_listed && run k cordon workers-1 && has out "node/workers-1 cordoned" &&
   until_true 30 watch_saw_cordon &&
   [ "$(k get node workers-1 -o jsonpath='{.spec.unschedulable}')" = "true" ]; then ok "$t"; else
  not_ok "$t"; sed 's/^/#   watch: /' "$TMP/watch.out" "$TMP/watch.err"; fi
kill "$WATCH_PID" 2>/dev/null
wait "$WATCH_PID" 2>/dev/null
WATCH_PID=

t="kubectl uncordon"
if run k uncordon workers-1 && has out "node/workers-1 uncordoned" &&
   [ -z "$(k get node workers-1 -o jsonpath='{.spec.unschedulable}')" ] &&
   run k get node workers-1 && ! has out "SchedulingDisabled"; then ok "$t"; else not_ok "$t"; fi

t="kubectl drain --ignore-daemonsets --delete-emptydir-data empties a node (evictions, PDB honoured)"
only_daemon_left() {
  [ "$(k get pods -A --field-selector=spec.nodeName=workers-2 -o name 2>/dev/null)" = "pod/agent-2" ]
}
# the last line is "node/N drained"; kubectl 1.20 (Debian 12's) says "evicted"
if run k drain workers-2 --ignore-daemonsets --delete-emptydir-data --timeout=90s &&
   { has out "node/workers-2 drained" || has out "node/workers-2 evicted"; } && has err "ignoring DaemonSet-managed Pods" &&
   { has out "evicted" || has err "evicted"; } &&
   until_true 30 only_daemon_left &&
   [ "$(k get node workers-2 -o jsonpath='{.spec.unschedulable}')" = "true" ]; then ok "$t"; else
  not_ok "$t"; fi

t="the drained pods run elsewhere"
if until_true 30 running_pods && run k get pods -o wide && ! has out "workers-2"; then ok "$t"; else
  not_ok "$t"; fi

t="kubectl delete node"
if run k delete node workers-3 && has out "node \"workers-3\" deleted" &&
   ! run k get node workers-3 && has err "NotFound" && run k get nodes && ! has out "workers-3"; then
  ok "$t"; else not_ok "$t"; fi

t="kubectl get pdb shows the budget"
if run k get pdb -A && has out "web" && has out "MAX UNAVAILABLE"; then ok "$t"; else not_ok "$t"; fi

t="kubectl get pvc,pv,storageclass: served, and none (the world has no volumes)"
if run k get pvc,pv,storageclass -A && has err "No resources found"; then ok "$t"; else not_ok "$t"; fi

t="SIGTERM stops luascale sim cleanly"
kill -TERM "$SIM_PID"
wait "$SIM_PID"
status=$?
SIM_PID=
if [ "$status" -eq 0 ] && grep -q "stopped" "$TMP/sim.err"; then ok "$t"; else
  echo "# exit status $status"; sed 's/^/#   sim: /' "$TMP/sim.err" | tail -20; not_ok "$t"; fi

echo "# $pass passed, $fail failed"
[ "$fail" -eq 0 ]
