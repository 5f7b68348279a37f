#!/usr/bin/env bash
# `luascale sim` answering kubectl as a real API server would: the wide node
# and pod columns, server-side dry runs that change nothing (cordon, drain,
# delete), JSON and merge patches, server-side apply, field selectors the
# real server supports, the legacy watch path and a watch of one named
# object, kubelet Leases, events found by `kubectl events --for`, and a
# force delete of a Terminating pod. Fails when kubectl is missing.
# usage: sim_kubectl_fidelity.sh LUASCALE_BINARY
set -u
BIN=$1
. "$(dirname "$0")/lib.sh"
need kubectl
TMP=$(mktemp -d)
SIM_PID=
cleanup() {
  sim_down
  rm -rf "$TMP"
}
trap cleanup EXIT

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
cluster: {register_delay: 200ms, scheduler_interval: 200ms}
initial_nodes:
  - {group: workers, count: 2}
workloads:
  - name: agent
    namespace: kube-system
    controller: daemonset
    requests: {cpu: 100m, memory: 64Mi}
    labels: {app: agent}
  - name: web
    controller: replicaset
    count: 2
    requests: {cpu: 200m, memory: 256Mi}
    labels: {app: web}
    grace: 0s
  - name: slow
    controller: none
    count: 1
    requests: {cpu: 100m, memory: 64Mi}
    labels: {app: slow}
    grace: 10m
EOF

running() { [ "$(k get pods -A --field-selector=status.phase=Running -o name 2>/dev/null | wc -l)" -eq 5 ]; }
t="luascale sim comes up; its kubeconfig says insecure-skip-tls-verify"
if sim_up && until_true 30 running &&
   grep -q "insecure-skip-tls-verify: true" "$TMP/kubeconfig"; then ok "$t"; else
  not_ok "$t"; sim_output; exit 1; fi

t="kubectl get nodes -o wide shows INTERNAL-IP, OS-IMAGE, KERNEL-VERSION, CONTAINER-RUNTIME"
if run "$t" 0 k get nodes -o wide && has out "INTERNAL-IP" && has out "OS-IMAGE" &&
   has out "KERNEL-VERSION" && has out "CONTAINER-RUNTIME" && grep -q "workers-1 .* 10\." "$TMP/out" &&
   has out "containerd://"; then ok "$t"; else not_ok "$t"; fi

t="kubectl get pods -o wide shows each pod's IP"
if run "$t" 0 k get pods -o wide && grep -q "web-1 .* 10\.[0-9]*\.[0-9]*\.[0-9]* *workers-" "$TMP/out"; then
  ok "$t"; else not_ok "$t"; fi

rv_of() { k get node workers-1 -o jsonpath='{.metadata.resourceVersion}'; }
t="kubectl cordon --dry-run=server changes nothing"
before=$(rv_of)
if run "$t" 0 k cordon --dry-run=server workers-1 && has out "(server dry run)" &&
   [ -z "$(k get node workers-1 -o jsonpath='{.spec.unschedulable}')" ] && [ "$(rv_of)" = "$before" ]; then
  ok "$t"; else not_ok "$t"; fi

t="kubectl drain --dry-run=server evicts and cordons nothing"
if run "$t" 0 k drain workers-1 --dry-run=server --ignore-daemonsets --force && has out "(server dry run)" &&
   [ -z "$(k get node workers-1 -o jsonpath='{.spec.unschedulable}')" ] &&
   [ "$(k get pods --field-selector=spec.nodeName=workers-1,status.phase=Running -o name | wc -l)" -ge 1 ]; then
  ok "$t"; else not_ok "$t"; fi

t="kubectl delete --dry-run=server keeps the pod"
if run "$t" 0 k delete pod web-1 --dry-run=server && run "$t" 0 k get pod web-1 && ! has out "Terminating"; then
  ok "$t"; else not_ok "$t"; fi

t="kubectl patch node --type=json (add, test) and --type=merge"
if run "$t" 0 k patch node workers-1 --type=json -p '[{"op":"add","path":"/metadata/labels/tier","value":"gold"}]' &&
   [ "$(k get node workers-1 -o jsonpath='{.metadata.labels.tier}')" = "gold" ] &&
   run "$t" 0 k patch node workers-1 --type=json -p '[{"op":"test","path":"/metadata/labels/tier","value":"gold"},{"op":"add","path":"/spec/unschedulable","value":true}]' &&
   [ "$(k get node workers-1 -o jsonpath='{.spec.unschedulable}')" = "true" ] &&
   run "$t" 0 k patch node workers-1 --type=merge -p '{"spec":{"unschedulable":null},"metadata":{"labels":{"tier":null}}}' &&
   [ -z "$(k get node workers-1 -o jsonpath='{.spec.unschedulable}{.metadata.labels.tier}')" ]; then
  ok "$t"; else not_ok "$t"; fi

t="a JSON patch whose test fails is refused and changes nothing"
if run "$t" 1 k patch node workers-1 --type=json -p '[{"op":"test","path":"/spec/unschedulable","value":true},{"op":"add","path":"/metadata/labels/x","value":"y"}]' &&
   [ -z "$(k get node workers-1 -o jsonpath='{.metadata.labels.x}')" ]; then ok "$t"; else not_ok "$t"; fi

t="kubectl apply --server-side creates, then changes, a ConfigMap"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  namespace: default\ndata:\n  k: v\n' >"$TMP/cm.yaml"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  namespace: default\ndata:\n  k: w\n' >"$TMP/cm2.yaml"
if run "$t" 0 k apply --server-side --validate=false -f "$TMP/cm.yaml" && has out "serverside-applied" &&
   [ "$(k get cm applied -o jsonpath='{.data.k}')" = "v" ] &&
   run "$t" 0 k apply --server-side --validate=false -f "$TMP/cm2.yaml" &&
   [ "$(k get cm applied -o jsonpath='{.data.k}')" = "w" ]; then ok "$t"; else not_ok "$t"; fi

t="field selectors: spec.unschedulable=false, spec.schedulerName, an unsupported one is 400"
if run "$t" 0 k get nodes --field-selector spec.unschedulable=false -o name && has out "node/workers-1" &&
   has out "node/workers-2" &&
   run "$t" 0 k get pods -A --field-selector spec.schedulerName=default-scheduler -o name && has out "pod/web-1" &&
   run "$t" 1 k get pods --field-selector spec.priority=0 && has err "field label not supported: spec.priority"; then
  ok "$t"; else not_ok "$t"; fi

t="the legacy /api/v1/watch/ path and a watch of one named node"
if run "$t" 0 k get --raw '/api/v1/watch/nodes?timeoutSeconds=1' && has out '"type":"ADDED"' &&
   has out '"name":"workers-2"' &&
   run "$t" 0 k get --raw '/api/v1/nodes/workers-1?watch=true&timeoutSeconds=1' && has out '"type":"ADDED"' &&
   ! has out '"name":"workers-2"'; then ok "$t"; else not_ok "$t"; fi

t="every Ready node renews a Lease in kube-node-lease"
if run "$t" 0 k get leases -n kube-node-lease && has out "workers-1" && has out "workers-2"; then ok "$t"; else
  not_ok "$t"; fi

t="kubectl events --for node/NAME finds an Event about the node"
printf '{"apiVersion":"v1","kind":"Event","metadata":{"name":"workers-1.t1","namespace":"default"},"involvedObject":{"apiVersion":"v1","kind":"Node","name":"workers-1"},"reason":"Tested","message":"from the test","type":"Normal","source":{"component":"test"}}' >"$TMP/ev.json"
if run "$t" 0 k create --raw /api/v1/namespaces/default/events -f "$TMP/ev.json" &&
   run "$t" 0 k events --for node/workers-1 && has out "Tested" && has out "from the test"; then ok "$t"; else
  not_ok "$t"; fi

t="kubectl delete --grace-period=0 --force removes a Terminating pod"
if run "$t" 0 k delete pod slow-1 --wait=false && run "$t" 0 k get pod slow-1 && has out "Terminating" &&
   run "$t" 0 k delete pod slow-1 --grace-period=0 --force &&
   run "$t" 1 k get pod slow-1 && has err "NotFound"; then ok "$t"; else not_ok "$t"; fi

finish
