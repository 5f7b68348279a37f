#!/usr/bin/env bash
# `luascale sim` reporting the Events a real control plane reports, read
# with kubectl: FailedScheduling for pods that do not fit (the real
# scheduler's "0/N nodes are available" message), Scheduled once a node
# is added, the kubelet's and the node controller's node events
# (RegisteredNode, NodeReady, NodeNotReady, RemovingNode), Killing when a
# pod is deleted
# — through `kubectl get events --field-selector`, `kubectl events` (and
# --for, and -w, which watches in protobuf), `kubectl describe pod/node`,
# and events.k8s.io/v1. A protobuf watch is also read by tests/cli/proto_watch.py,
# which decodes the frames from the wire format alone. Fails when kubectl,
# curl or python3 is missing.
# usage: sim_kubectl_events.sh LUASCALE_BINARY
set -u
BIN=$1
PY=/usr/bin/python3
. "$(dirname "$0")/lib.sh"
need kubectl curl $PY
TMP=$(mktemp -d)
SIM_PID=
W_PID=
cleanup() {
  [ -n "$W_PID" ] && kill -TERM "$W_PID" 2>/dev/null && wait "$W_PID" 2>/dev/null
  sim_down
  rm -rf "$TMP"
}
trap cleanup EXIT
PROTO_WATCH="$(dirname "$0")/proto_watch.py"

# one node of 2 CPUs: two web pods fit, two wait for a second node, and
# "huge" never fits
cat >"$TMP/scenario.yaml" <<'EOF'
seed: 5
duration: 2h
node_groups:
  - name: workers
    min: 0
    max: 3
    template:
      allocatable: {cpu: 2, memory: 8Gi, pods: 110}
cloud: {boot_delay: 500ms, boot_jitter: 0s, launch_latency: 0s, terminate_latency: 0s, shutdown_delay: 200ms}
cluster: {register_delay: 200ms, scheduler_interval: 200ms}
initial_nodes:
  - {group: workers, count: 1}
workloads:
  - name: web
    controller: replicaset
    count: 4
    requests: {cpu: 900m, memory: 256Mi}
    labels: {app: web}
    grace: 0s
  - name: huge
    controller: none
    count: 1
    requests: {cpu: "64", memory: 1Gi}
EOF

pending() { [ "$(k get pods --field-selector=status.phase=Pending -o name 2>/dev/null | wc -l)" -eq 3 ]; }
t="luascale sim comes up with three pods pending"
if sim_up && until_true 30 pending; then ok "$t"; else
  not_ok "$t"; sim_output; exit 1; fi
URL=$(sed -n 's/^ *server: *//p' "$TMP/kubeconfig")
failed_for() { k get events -A --field-selector "reason=FailedScheduling,involvedObject.name=$1" -o name 2>/dev/null | grep -q .; }
until_true 20 failed_for huge-1

t="kubectl get events -A --field-selector reason=FailedScheduling: the scheduler's message for each pending pod"
if run "$t" 0 k get events -A --field-selector reason=FailedScheduling &&
   has out "pod/huge-1" && has out "pod/web-3" && has out "pod/web-4" &&
   has out "0/1 nodes are available: 1 Insufficient cpu." && ! has out "pod/web-1" &&
   ! has out "Scheduled"; then ok "$t"; else not_ok "$t"; fi

t="a FailedScheduling Event names the scheduler and the pod as a real one does"
if run "$t" 0 k get events --field-selector reason=FailedScheduling,involvedObject.name=huge-1 -o json &&
   uid=$(k get pod huge-1 -o jsonpath='{.metadata.uid}') &&
   has out '"reportingComponent": "default-scheduler"' && has out '"type": "Warning"' &&
   has out '"kind": "Pod"' && has out "\"uid\": \"$uid\"" && has out '"apiVersion": "v1"' &&
   has out '"resourceVersion"' && has out '"eventTime": "' && has out '"action": "Scheduling"' &&
   has out '"reportingInstance": "default-scheduler-'; then ok "$t"; else not_ok "$t"; fi

t="kubectl events --for pod/web-3 shows that pod's Events only"
if run "$t" 0 k events --for pod/web-3 && has out "FailedScheduling" && has out "Pod/web-3" &&
   ! has out "web-4" && ! has out "huge-1"; then ok "$t"; else not_ok "$t"; fi

t="kubectl describe pod shows its Events, from default-scheduler"
if run "$t" 0 k describe pod huge-1 && grep -A4 '^Events:' "$TMP/out" >"$TMP/ev" &&
   grep -q "Warning  FailedScheduling .* default-scheduler  0/1 nodes are available: 1 Insufficient cpu." "$TMP/ev"; then
  ok "$t"; else not_ok "$t"; grep -A4 '^Events:' "$TMP/out"; fi

t="kubectl describe node shows the node controller's and the kubelet's Events"
if run "$t" 0 k describe node workers-1 && sed -n '/^Events:/,$p' "$TMP/out" >"$TMP/ev" &&
   grep -q "RegisteredNode .* node-controller  Node workers-1 event: Registered Node workers-1 in Controller" "$TMP/ev" &&
   grep -q "NodeReady .* kubelet .*Node workers-1 status is now: NodeReady" "$TMP/ev" &&
   grep -q "Starting .* kubelet .*Starting kubelet." "$TMP/ev"; then ok "$t"; else not_ok "$t"; cat "$TMP/ev"; fi

# kubectl events -w watches in protobuf from here on
k events -w -v=8 >"$TMP/w.out" 2>"$TMP/w.err" &
W_PID=$!
watching() { grep -q "Content-Type: application/vnd.kubernetes.protobuf;stream=watch" "$TMP/w.err"; }
until_true 20 watching

t="a node added: its registration, NodeReady, and the pending web pods Scheduled on it"
curl -s -X POST -H 'Content-Type: application/json' -d '{"group":"workers","count":1}' \
  "$URL/apis/sim.luascale.io/v1/launch" >"$TMP/launch.out"
scheduled() { k get events --field-selector reason=Scheduled,involvedObject.name=web-4 -o name 2>/dev/null | grep -q .; }
if until_true 30 scheduled && run "$t" 0 k events &&
   grep -q "Normal .*RegisteredNode .*Node/workers-2" "$TMP/out" &&
   grep -q "Normal .*NodeReady .*Node/workers-2 .*Node workers-2 status is now: NodeReady" "$TMP/out" &&
   has out "Successfully assigned default/web-3 to workers-2" &&
   has out "Successfully assigned default/web-4 to workers-2"; then ok "$t"; else not_ok "$t"; cat "$TMP/launch.out"; fi

t="huge-1's next attempt reports the new count of nodes"
again() { k get events --field-selector reason=FailedScheduling,involvedObject.name=huge-1 2>/dev/null | grep -q "0/2 nodes are available: 2 Insufficient cpu."; }
if until_true 20 again; then ok "$t"; else not_ok "$t"; fi

t="a deleted pod: the kubelet's Killing, seen by kubectl events -w over a protobuf watch"
k delete pod web-1 --wait=false >/dev/null 2>&1
killing() { grep -q "Normal .*Killing .*Pod/web-1 .*Stopping container main" "$TMP/w.out"; }
if until_true 20 killing && grep -q "Accept: application/vnd.kubernetes.protobuf" "$TMP/w.err" &&
   run "$t" 0 k get events --field-selector reason=Killing -o json &&
   has out '"component": "kubelet"' && has out '"host": "workers-1"'; then
  ok "$t"; else not_ok "$t"; tail -5 "$TMP/w.out"; fi
kill -TERM "$W_PID" 2>/dev/null; wait "$W_PID" 2>/dev/null; W_PID=

t="a node removed: the node controller's RemovingNode"
curl -s -X POST -H 'Content-Type: application/json' -d '{"group":"workers","ids":["workers-2"]}' \
  "$URL/apis/sim.luascale.io/v1/terminate" >"$TMP/term.out"
removing() { k get events --field-selector reason=RemovingNode -o name 2>/dev/null | grep -q .; }
if until_true 30 removing && run "$t" 0 k get events --field-selector reason=RemovingNode &&
   has out "Node workers-2 event: Removing Node workers-2 from Controller"; then ok "$t"; else
  not_ok "$t"; cat "$TMP/term.out"; fi

t="a kubelet that stops reporting: the node controller's NodeNotReady; back: NodeReady again, folded (count 2)"
curl -s -X POST -H 'Content-Type: application/json' -d '{"faults":["kubelet-down=workers-1"]}' \
  "$URL/apis/sim.luascale.io/v1/faults" >"$TMP/fault.out"
notready() { k get events --field-selector reason=NodeNotReady,involvedObject.name=workers-1 -o name 2>/dev/null | grep -q .; }
ready2() { [ "$(k get events --field-selector reason=NodeReady,involvedObject.name=workers-1 -o jsonpath='{.items[*].count}' 2>/dev/null)" = "2" ]; }
if until_true 30 notready &&
   run "$t" 0 k get events --field-selector reason=NodeNotReady,involvedObject.name=workers-1 -o json &&
   has out '"component": "node-controller"' && has out "Node workers-1 status is now: NodeNotReady" &&
   curl -s -X POST -H 'Content-Type: application/json' -d '{"faults":["kubelet-up=workers-1"]}' \
     "$URL/apis/sim.luascale.io/v1/faults" >"$TMP/fault.out" && until_true 30 ready2; then
  ok "$t"; else not_ok "$t"; cat "$TMP/fault.out"; tail -40 "$TMP/sim.err"; fi

t="events.k8s.io/v1: discovered, and the same Events in its shape (regarding, note, reportingController)"
if run "$t" 0 k api-resources --api-group=events.k8s.io && has out "events.k8s.io/v1" &&
   run "$t" 0 k get --raw "/apis/events.k8s.io/v1/namespaces/default/events?fieldSelector=regarding.name%3Dhuge-1,reportingController%3Ddefault-scheduler" &&
   has out '"apiVersion":"events.k8s.io/v1"' && has out '"regarding":{"kind":"Pod"' &&
   has out '"note":"0/1 nodes are available: 1 Insufficient cpu."' &&
   has out '"reportingController":"default-scheduler"' && ! has out '"involvedObject"' &&
   run "$t" 0 k get events.events.k8s.io -A && has out "FailedScheduling"; then ok "$t"; else not_ok "$t"; fi

t="kubectl create -f of an events.k8s.io Event; read back through core v1"
cat >"$TMP/ev.yaml" <<'EOF'
apiVersion: events.k8s.io/v1
kind: Event
metadata:
  name: mine
eventTime: "2026-01-01T00:00:00.000000Z"
reportingController: example.com/tool
reportingInstance: tool-1
action: Checking
reason: Checked
note: all good
type: Normal
regarding: {kind: Node, name: workers-1, apiVersion: v1}
EOF
if run "$t" 0 k create -f "$TMP/ev.yaml" && run "$t" 0 k get events mine -o json &&
   has out '"message": "all good"' && has out '"reportingComponent": "example.com/tool"' &&
   has out '"name": "workers-1"'; then ok "$t"; else not_ok "$t"; fi

t="an events.k8s.io Event without eventTime is refused as a real server refuses it"
sed '/^eventTime/d; s/name: mine/name: mine2/' "$TMP/ev.yaml" >"$TMP/ev2.yaml"
if run "$t" 1 k create -f "$TMP/ev2.yaml" && has err "eventTime: Required value"; then ok "$t"; else not_ok "$t"; fi

t="a protobuf watch (Accept stream=watch) decoded from the wire: length-framed WatchEvents holding enveloped Events"
if run "$t" 0 $PY "$PROTO_WATCH" "$URL/api/v1/namespaces/default/events?watch=true&fieldSelector=reason%3DFailedScheduling" \
     "application/vnd.kubernetes.protobuf;stream=watch" 2 5 &&
   has out "Content-Type: application/vnd.kubernetes.protobuf;stream=watch" &&
   grep -q "^ADDED v1 Event default/huge-1\.[0-9a-f]* [0-9][0-9]* reason=FailedScheduling$" "$TMP/out"; then
  ok "$t"; else not_ok "$t"; fi

t="protobuf first with JSON as the fallback: protobuf frames for events.k8s.io Events and Pods, a bookmark too"
if run "$t" 0 $PY "$PROTO_WATCH" "$URL/apis/events.k8s.io/v1/events?watch=1&fieldSelector=reason%3DScheduled" \
     "application/vnd.kubernetes.protobuf, application/json" 1 5 &&
   grep -q "^ADDED events.k8s.io/v1 Event default/web-[0-9]*\.[0-9a-f]* [0-9]* reason=Scheduled$" "$TMP/out" &&
   run "$t" 0 $PY "$PROTO_WATCH" "$URL/api/v1/pods?watch=1&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&fieldSelector=metadata.name%3Dhuge-1" \
     "application/vnd.kubernetes.protobuf" 2 5 &&
   has out "ADDED v1 Pod default/huge-1 " && has out "BOOKMARK v1 Pod /"; then ok "$t"; else not_ok "$t"; fi

t="JSON first: a JSON watch"
if run "$t" 0 $PY "$PROTO_WATCH" "$URL/api/v1/nodes?watch=1" \
     "application/json, application/vnd.kubernetes.protobuf;q=0.5" 1 5 &&
   has out "Content-Type: application/json" && has out "JSON ADDED Node /workers-1"; then ok "$t"; else not_ok "$t"; fi

finish
