#!/usr/bin/env bash
# `luascale sim` taking kubectl's protobuf bodies and serving OpenAPI:
# kubectl create configmap / namespace (typed clients send protobuf),
# kubectl auth can-i (a protobuf review), the objects read back as JSON,
# kubectl explain, create -f and apply -f with kubectl's default
# validation, --validate=strict refusing an unknown field, and every kind
# the simulator serves answered in protobuf to a client that prefers it
# (so the protobuf description, which the OpenAPI schemas come from,
# covers every field served). Fails when kubectl or curl is missing.
# usage: sim_kubectl_proto.sh LUASCALE_BINARY
set -u
BIN=$1
. "$(dirname "$0")/lib.sh"
need kubectl curl
TMP=$(mktemp -d)
SIM_PID=
cleanup() {
  sim_down
  rm -rf "$TMP"
}
trap cleanup EXIT

cat >"$TMP/scenario.yaml" <<'EOF'
seed: 5
duration: 2h
node_groups:
  - name: workers
    min: 0
    max: 3
    template:
      allocatable: {cpu: 2, memory: 8Gi, pods: 110}
cloud: {boot_delay: 1s, boot_jitter: 0s, launch_latency: 0s}
cluster: {register_delay: 200ms, scheduler_interval: 200ms}
initial_nodes:
  - {group: workers, count: 1}
workloads:
  - name: agent
    namespace: kube-system
    controller: daemonset
    requests: {cpu: 100m, memory: 64Mi}
  - name: web
    controller: replicaset
    count: 2
    requests: {cpu: 200m, memory: 256Mi}
    labels: {app: web}
pdbs:
  - name: web
    selector: {app: web}
    min_available: 1
EOF

running() { [ "$(k get pods -A --field-selector=status.phase=Running -o name 2>/dev/null | wc -l)" -eq 3 ]; }
t="luascale sim comes up"
if sim_up && until_true 30 running; then ok "$t"; else
  not_ok "$t"; sim_output; exit 1; fi
URL=$(sed -n 's/^ *server: *//p' "$TMP/kubeconfig")

t="kubectl create configmap sends protobuf and the server takes it"
if run "$t" 0 k create configmap x --from-literal=a=b -v=8 &&
   has err "Content-Type: application/vnd.kubernetes.protobuf" && has out "configmap/x created"; then
  ok "$t"; else not_ok "$t"; fi

t="the configmap reads back as JSON with its data"
if run "$t" 0 k get cm x -o json && has out '"a": "b"' && has out '"name": "x"' &&
   has out '"namespace": "default"'; then ok "$t"; else not_ok "$t"; fi

t="kubectl create namespace (protobuf) makes an Active namespace that takes objects"
if run "$t" 0 k create namespace n && run "$t" 0 k get ns n -o jsonpath='{.status.phase}' &&
   has out "Active" && run "$t" 0 k create configmap y -n n --from-literal=k=v &&
   run "$t" 0 k get cm y -n n -o jsonpath='{.data.k}' && has out "v"; then ok "$t"; else not_ok "$t"; fi

t="a protobuf body for a kind the server cannot read gets 415, a broken one 400 naming the byte (404 first when the path is unknown)"
printf 'k8s\0\n\x0a\n\x02v1\x12\x04Widg' >"$TMP/widget.pb"
printf 'k8s\0\n\x09' >"$TMP/broken.pb"
if run "$t" 0 curl -s -o "$TMP/body" -w '%{http_code}' -X POST \
     -H 'Content-Type: application/vnd.kubernetes.protobuf' --data-binary @"$TMP/widget.pb" \
     "$URL/api/v1/namespaces/default/configmaps" && has out "415" &&
   run "$t" 0 curl -s -o "$TMP/body" -w '%{http_code}' -X POST \
     -H 'Content-Type: application/vnd.kubernetes.protobuf' --data-binary @"$TMP/broken.pb" \
     "$URL/api/v1/namespaces/default/configmaps" && has out "400" &&
   grep -q "length 9 at byte 5" "$TMP/body" &&
   run "$t" 0 curl -s -o "$TMP/body" -w '%{http_code}' -X POST \
     -H 'Content-Type: application/vnd.kubernetes.protobuf' --data-binary @"$TMP/broken.pb" \
     "$URL/api/v1/namespaces/default/widgets" && has out "404"; then ok "$t"; else not_ok "$t"; fi

t="a DELETE with a protobuf DeleteOptions body (dryRun: All) keeps the configmap"
# DeleteOptions{dryRun(5) "All"} = 2a 03 'All'; TypeMeta{"v1", "DeleteOptions"} = 19 bytes
printf 'k8s\0\n\x13\n\x02v1\x12\x0dDeleteOptions\x12\x05\x2a\x03All\x1a\x00\x22\x00' >"$TMP/delopts.pb"
if run "$t" 0 curl -s -o "$TMP/body" -w '%{http_code}' -X DELETE \
     -H 'Content-Type: application/vnd.kubernetes.protobuf' --data-binary @"$TMP/delopts.pb" \
     "$URL/api/v1/namespaces/default/configmaps/x" && has out "200" &&
   run "$t" 0 k get cm x -o jsonpath='{.data.a}' && has out "b"; then ok "$t"; else not_ok "$t"; fi

t="kubectl auth can-i (a protobuf SelfSubjectAccessReview) says yes"
if run "$t" 0 k auth can-i list pods && has out "yes"; then ok "$t"; else not_ok "$t"; fi

t="kubectl explain pods.spec.containers"
if run "$t" 0 k explain pods.spec.containers && has out "KIND:       Pod" &&
   grep -q "name.*<string> -required-" "$TMP/out" && has out "resources" &&
   has out "<ResourceRequirements>"; then ok "$t"; else not_ok "$t"; fi

t="kubectl explain nodes, leases.spec, pdb.status, daemonsets"
if run "$t" 0 k explain nodes && has out "KIND:       Node" && has out "spec" &&
   run "$t" 0 k explain leases.spec && has out "holderIdentity" && has out "GROUP:      coordination.k8s.io" &&
   run "$t" 0 k explain pdb.status && grep -q "disruptionsAllowed.*-required-" "$TMP/out" &&
   run "$t" 0 k explain daemonsets && has out "KIND:       DaemonSet"; then
  ok "$t"; else not_ok "$t"; fi

cat >"$TMP/cm.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: fromfile
data:
  color: blue
EOF
cat >"$TMP/lease.yaml" <<'EOF'
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  name: mylease
spec:
  holderIdentity: me
  leaseDurationSeconds: 15
EOF
cat >"$TMP/bad.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: badfile
data:
  color: blue
colour: red
EOF

t="kubectl create -f validates (its default) and creates"
if run "$t" 0 k create -f "$TMP/cm.yaml" && has out "configmap/fromfile created" &&
   run "$t" 0 k get cm fromfile -o jsonpath='{.data.color}' && has out "blue"; then ok "$t"; else
  not_ok "$t"; fi

t="kubectl apply -f validates, creates, applies again unchanged, then patches a change"
sed 's/holderIdentity: me/holderIdentity: you/' "$TMP/lease.yaml" >"$TMP/lease2.yaml"
if run "$t" 0 k apply -f "$TMP/lease.yaml" && has out "created" &&
   run "$t" 0 k apply -f "$TMP/lease.yaml" && has out "unchanged" &&
   run "$t" 0 k apply -f "$TMP/lease2.yaml" && has out "configured" && ! has err "warning" &&
   run "$t" 0 k get lease mylease -o jsonpath='{.spec.holderIdentity}' && has out "you"; then
  ok "$t"; else not_ok "$t"; fi

t="--validate=strict refuses an unknown field, and nothing is created"
if run "$t" 1 k create -f "$TMP/bad.yaml" --validate=strict && has err 'unknown field "colour"' &&
   run "$t" 1 k get cm badfile; then ok "$t"; else not_ok "$t"; fi

t="the OpenAPI v2 document is JSON, and a protobuf-only Accept gets 406"
if run "$t" 0 k get --raw /openapi/v2 && has out '"swagger":"2.0"' &&
   run "$t" 0 curl -s -o /dev/null -w '%{http_code}' \
     -H 'Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf' "$URL/openapi/v2" &&
   has out "406"; then ok "$t"; else not_ok "$t"; fi

# Every kind served, in protobuf to a client that prefers it: the codec
# falls back to JSON for anything its description lacks, so a JSON answer
# here is a served field missing from proto/k8s (and from the OpenAPI).
t="every served object is answered in protobuf to a client that prefers it"
allpb=1
for path in /api/v1/nodes /api/v1/pods /api/v1/namespaces /api/v1/events /api/v1/configmaps \
  /apis/coordination.k8s.io/v1/leases /api/v1/namespaces/default/configmaps/x \
  /apis/policy/v1/poddisruptionbudgets /apis/apps/v1/daemonsets /api/v1/persistentvolumeclaims \
  /api/v1/persistentvolumes /apis/storage.k8s.io/v1/storageclasses; do
  curl -s -D "$TMP/headers" -o "$TMP/pb" \
    -H 'Accept: application/vnd.kubernetes.protobuf, application/json' "$URL$path"
  if ! grep -qi '^Content-Type: application/vnd.kubernetes.protobuf' "$TMP/headers" ||
     [ "$(head -c 3 "$TMP/pb")" != "k8s" ]; then
    echo "# $path: not protobuf: $(grep -i '^Content-Type' "$TMP/headers")"; allpb=0
  fi
done
if [ "$allpb" = 1 ]; then ok "$t"; else not_ok "$t"; fi

t="kubectl get pods still reads them (as a Table, JSON)"
if run "$t" 0 k get pods && has out "web-1" && has out "Running"; then ok "$t"; else not_ok "$t"; fi

finish
