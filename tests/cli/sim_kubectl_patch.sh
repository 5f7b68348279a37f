#!/usr/bin/env bash
# kubectl's strategic merge patches against `luascale sim`, merged as the
# real API server merges them: set image keeps a container's resources,
# env and ports and the other containers; set resources and set env change
# one container; label keeps the other labels; apply removes a container
# and an env var by their names (the merge keys its OpenAPI gives
# kubectl); a patch element without its merge key is refused; the rollout
# after set image makes pods with the container's requests. Fails when
# kubectl is missing.
# usage: sim_kubectl_patch.sh LUASCALE_BINARY
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
check() { # NAME CMD...: ok when CMD succeeds
  local t=$1
  shift
  if "$@" >"$TMP/out" 2>"$TMP/err"; then ok "$t"; else not_ok "$t"; fi
}
# is WANT CMD...: CMD prints WANT, trailing spaces aside (its output in $TMP/out)
is() { "${@:2}" >"$TMP/out" 2>"$TMP/err"; [ "$(sed 's/ *$//' "$TMP/out")" = "$1" ] || { echo "# want: $1" >>"$TMP/err"; return 1; }; }
jp() { k get "$1" -o jsonpath="$2"; }

cat >"$TMP/scenario.yaml" <<'EOF'
seed: 3
duration: 2h
node_groups:
  - {name: big, min: 2, max: 2, price_per_hour: 1,
     template: {allocatable: {cpu: 32, memory: 128Gi, pods: 200}}}
cluster: {register_delay: 100ms, scheduler_interval: 100ms}
initial_nodes: [{group: big, count: 2}]
EOF
sim_up || { not_ok "sim starts"; exit 1; }
until_true 20 k get nodes -o name >/dev/null 2>&1

cat >"$TMP/api.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, labels: {app: api}}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      terminationGracePeriodSeconds: 1
      volumes: [{name: data, emptyDir: {}}]
      containers:
        - name: api
          image: api:1
          env: [{name: A, value: "1"}, {name: B, value: "2"}]
          ports: [{containerPort: 8080, name: http}]
          volumeMounts: [{name: data, mountPath: /data}]
          resources: {requests: {cpu: 750m, memory: 1Gi}, limits: {memory: 2Gi}}
        - name: side
          image: side:1
          resources: {requests: {cpu: 100m, memory: 64Mi}}
EOF
check "kubectl create -f a Deployment of two containers" k create -f "$TMP/api.yaml"
check "its pods run" until_true 30 is 2 sh -c "kubectl --kubeconfig $TMP/kubeconfig get pods -l app=api --field-selector=status.phase=Running --no-headers | wc -l"
C='.spec.template.spec.containers'

# ---- kubectl set image ----
check "kubectl set image deployment/api api=api:2" k set image deployment/api api=api:2
check "the container has the new image" is api:2 jp deployment/api "{$C[0].image}"
check "... and keeps its requests" is "750m 1Gi" jp deployment/api "{$C[0].resources.requests.cpu} {$C[0].resources.requests.memory}"
check "... its limits" is 2Gi jp deployment/api "{$C[0].resources.limits.memory}"
check "... its env" is "A=1 B=2" jp deployment/api "{range $C[0].env[*]}{.name}={.value} {end}"
check "... its port and mount" is "8080 /data" jp deployment/api "{$C[0].ports[0].containerPort} {$C[0].volumeMounts[0].mountPath}"
check "the other container stays as it was" is "side side:1 100m" jp deployment/api "{$C[1].name} {$C[1].image} {$C[1].resources.requests.cpu}"
check "the volume stays" is data jp deployment/api '{.spec.template.spec.volumes[0].name}'
check "rollout status after set image" k rollout status deployment/api --timeout=60s
check "the new pods carry the container's requests" until_true 20 is "750m 750m" sh -c "kubectl --kubeconfig $TMP/kubeconfig get pods -l app=api --field-selector=status.phase=Running -o jsonpath='{range .items[*]}{.spec.containers[?(@.image==\"api:2\")].resources.requests.cpu} {end}' | sed 's/ \$//'"

# ---- kubectl set resources ----
check "kubectl set resources -c side" k set resources deployment/api -c side --requests=cpu=200m,memory=128Mi
check "the side container has the new requests" is "200m 128Mi" jp deployment/api "{$C[1].resources.requests.cpu} {$C[1].resources.requests.memory}"
check "... and keeps its image" is side:1 jp deployment/api "{$C[1].image}"
check "the api container is untouched" is "api:2 750m" jp deployment/api "{$C[0].image} {$C[0].resources.requests.cpu}"

# ---- kubectl set env ----
check "kubectl set env -c api A=9 B- C=3" k set env deployment/api -c api A=9 B- C=3
check "env merged by name, B gone, C after A" is "A=9 C=3" jp deployment/api "{range $C[0].env[*]}{.name}={.value} {end}"
check "... the container keeps the rest" is "api:2 750m 8080" jp deployment/api "{$C[0].image} {$C[0].resources.requests.cpu} {$C[0].ports[0].containerPort}"
check "the side container has no env" is "" jp deployment/api "{$C[1].env}"

# ---- kubectl label ----
check "kubectl label deployment/api tier=gold" k label deployment/api tier=gold
check "the labels merged" is "api gold" jp deployment/api '{.metadata.labels.app} {.metadata.labels.tier}'
check "kubectl label deployment/api tier-" k label deployment/api tier-
check "the label is gone, the other stays" is "api" jp deployment/api '{.metadata.labels.app} {.metadata.labels.tier}'
POD=$(k get pods -l app=api -o name | head -1)
check "kubectl label on a pod" k label "$POD" extra=yes
check "the pod keeps its app label" is "api yes" jp "$POD" '{.metadata.labels.app} {.metadata.labels.extra}'

# ---- kubectl apply: removals by merge key ----
cat >"$TMP/web.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
        - {name: a, image: a:1, env: [{name: X, value: "1"}, {name: Y, value: "2"}]}
        - {name: b, image: b:1}
EOF
check "kubectl apply -f two containers" k apply -f "$TMP/web.yaml"
sed -i -e '/name: b, image: b:1/d' -e 's/, {name: Y, value: "2"}//' "$TMP/web.yaml"
check "kubectl apply -f without container b and env Y" k apply -f "$TMP/web.yaml"
check "container b is gone" is a jp deployment/web "{range $C[*]}{.name}{end}"
check "env Y is gone, X stays" is "X=1" jp deployment/web "{range $C[0].env[*]}{.name}={.value}{end}"
check "the OpenAPI gives kubectl the merge key" \
  sh -c "kubectl --kubeconfig $TMP/kubeconfig get --raw /openapi/v2 | grep -q '\"x-kubernetes-patch-merge-key\":\"name\"'"

# ---- what the real server refuses ----
check "a container without its merge key is refused" \
  sh -c "! kubectl --kubeconfig $TMP/kubeconfig patch deployment/web -p '{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"image\":\"z\"}]}}}}' 2>$TMP/err && grep -q 'does not contain declared merge key: name' $TMP/err"
check "and nothing changed" is a:1 jp deployment/web "{$C[0].image}"
check "tolerations are replaced whole" \
  sh -c "kubectl --kubeconfig $TMP/kubeconfig patch deployment/web -p '{\"spec\":{\"template\":{\"spec\":{\"tolerations\":[{\"key\":\"k1\",\"operator\":\"Exists\"}]}}}}' >/dev/null && kubectl --kubeconfig $TMP/kubeconfig patch deployment/web -p '{\"spec\":{\"template\":{\"spec\":{\"tolerations\":[{\"key\":\"k2\",\"operator\":\"Exists\"}]}}}}' >/dev/null"
check "... only the second one is left" is k2 jp deployment/web '{range .spec.template.spec.tolerations[*]}{.key}{end}'

finish
