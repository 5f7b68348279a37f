#!/usr/bin/env bash
# Workloads written with kubectl into `luascale sim`, its controllers
# making and removing the pods: kubectl run, create deployment (a
# protobuf body), scale, annotate and label a pod (a scenario's too), a
# pod update that changes its spec refused (422), create job and wait for
# Complete, apply -f a Deployment YAML, rollout status, set image (a
# rolling update to a new ReplicaSet), delete with --cascade background,
# orphan and foreground, --dry-run=server changing nothing, create -f a
# Pod (kubectl's validation against the OpenAPI), a LimitRange giving pods
# their default requests, and the fidelity rule for what is not served.
# Fails when kubectl is missing.
# usage: sim_kubectl_workloads.sh LUASCALE_BINARY
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
  if "$@" >"$TMP/out" 2>&1; then ok "$t"; else not_ok "$t"; sed 's/^/#   /' "$TMP/out" | tail -5; fi
}
count() { k get "$@" --no-headers 2>/dev/null | wc -l; }
is() { [ "$("${@:2}")" = "$1" ]; }

cat >"$TMP/scenario.yaml" <<'EOF2'
seed: 5
duration: 2h
node_groups:
  - {name: big, min: 3, max: 3, price_per_hour: 1,
     template: {allocatable: {cpu: 32, memory: 128Gi, pods: 200}}}
cluster: {register_delay: 100ms, scheduler_interval: 100ms}
initial_nodes: [{group: big, count: 3}]
workloads:
  - {name: scen, controller: replicaset, count: 1, requests: {cpu: 100m, memory: 64Mi}}
EOF2
sim_up || { not_ok "sim starts"; exit 1; }
until_true 20 k get nodes -o name >/dev/null 2>&1

# ---- pods ----
check "kubectl run makes a pod that the simulated scheduler binds" k run solo --image=nginx
phase() { k get pod "$1" -o jsonpath='{.status.phase}' 2>/dev/null; }
check "the pod runs on a node" until_true 20 is Running phase solo
check "its container is the one kubectl sent" is nginx k get pod solo -o jsonpath='{.spec.containers[0].image}'
check "LimitRange defaults: requests cpu 500m" is 500m k get pod solo -o jsonpath='{.spec.containers[0].resources.requests.cpu}'
check "LimitRange defaults: requests memory 512Mi" is 512Mi k get pod solo -o jsonpath='{.spec.containers[0].resources.requests.memory}'
check "the LimitRange is served" is 1 count limitranges -n default
check "kubectl annotate pod" k annotate pod solo note=hello
check "the annotation is on the pod" is hello k get pod solo -o jsonpath='{.metadata.annotations.note}'
check "kubectl label pod" k label pod solo tier=front
check "the label selects the pod" is 1 count pods -l tier=front
SCEN=$(k get pods -n default -o name | grep scen- | head -1)
check "kubectl label on a scenario's pod" k label "$SCEN" extra=yes
check "the scenario's pod carries it" is 1 count pods -l extra=yes
check "a pod update that changes its spec is refused (422)" \
  sh -c "! kubectl --kubeconfig $TMP/kubeconfig patch pod solo --type=merge -p '{\"spec\":{\"nodeSelector\":{\"a\":\"b\"}}}' 2>$TMP/err && grep -q 'Forbidden: pod updates may not change' $TMP/err"
check "a pod without an image is refused (422)" \
  sh -c "! echo '{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"noimg\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}' | kubectl --kubeconfig $TMP/kubeconfig create --validate=false -f - 2>$TMP/err && grep -q 'spec.containers\[0\].image: Required value' $TMP/err"
check "a pod in a namespace that does not exist is refused (404)" \
  sh -c "! kubectl --kubeconfig $TMP/kubeconfig run x --image=y -n nowhere 2>$TMP/err && grep -q 'namespaces \"nowhere\" not found' $TMP/err"
cat >"$TMP/pod.yaml" <<'EOF2'
apiVersion: v1
kind: Pod
metadata:
  name: fromfile
  annotations: {sim.luascale.io/duration: 1s}
spec:
  restartPolicy: Never
  containers:
    - name: c
      image: busybox
      resources: {requests: {cpu: 250m, memory: 100Mi}}
EOF2
check "create -f a Pod, validated against the OpenAPI" k create -f "$TMP/pod.yaml"
check "its own requests stand" is 250m k get pod fromfile -o jsonpath='{.spec.containers[0].resources.requests.cpu}'
check "a pod with a duration succeeds and stays listed" until_true 20 is Succeeded phase fromfile
check "kubectl delete pod --force" k delete pod solo --grace-period=0 --force
check "the pod is gone" until_true 10 is 0 count pods --field-selector=metadata.name=solo

# ---- deployments ----
check "kubectl create deployment (a protobuf body)" k create deployment web --image=nginx --replicas=3
check "its ReplicaSet, owned by it" until_true 10 is Deployment k get rs -l app=web -o jsonpath='{.items[0].metadata.ownerReferences[0].kind}'
check "three pods run" until_true 20 is 3 count pods -l app=web --field-selector=status.phase=Running
check "the pods are owned by the ReplicaSet" is ReplicaSet k get pods -l app=web -o jsonpath='{.items[0].metadata.ownerReferences[0].kind}'
check "kubectl get deployment shows READY 3/3" until_true 20 sh -c "kubectl --kubeconfig $TMP/kubeconfig get deployment web --no-headers | grep -q ' 3/3 '"
check "kubectl scale deployment --replicas=5" k scale deployment web --replicas=5
check "five pods run" until_true 20 is 5 count pods -l app=web --field-selector=status.phase=Running
check "kubectl scale deployment --replicas=1" k scale deployment web --replicas=1
check "one pod is left (the others terminating)" until_true 20 is 1 k get deployment web -o jsonpath='{.status.replicas}'
check "a deleted pod of the ReplicaSet is replaced" sh -c "kubectl --kubeconfig $TMP/kubeconfig delete \$(kubectl --kubeconfig $TMP/kubeconfig get pods -l app=web -o name | head -1) --wait=false"
check "rollout status after the replacement" k rollout status deployment web --timeout=30s
check "the Deployment's Available condition" is True k get deployment web -o jsonpath='{.status.conditions[?(@.type=="Available")].status}'
cat >"$TMP/deploy.yaml" <<'EOF2'
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, labels: {app: api}}
spec:
  replicas: 4
  selector: {matchLabels: {app: api}}
  strategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 1}}
  template:
    metadata: {labels: {app: api}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
        - name: api
          image: api:1
          resources: {requests: {cpu: "1", memory: 1Gi}}
EOF2
check "kubectl apply -f a Deployment" k apply -f "$TMP/deploy.yaml"
check "kubectl rollout status finishes" k rollout status deployment api --timeout=40s
check "kubectl explain deployment.spec" sh -c "kubectl --kubeconfig $TMP/kubeconfig explain deployment.spec | grep -q DeploymentSpec"
check "kubectl set image rolls to a new ReplicaSet" k set image deployment/api api=api:2
check "rollout status after set image" k rollout status deployment api --timeout=60s
check "two ReplicaSets, the old one at 0" is "0 4" sh -c "kubectl --kubeconfig $TMP/kubeconfig get rs -l app=api -o jsonpath='{range .items[*]}{.spec.replicas} {end}' | tr ' ' '\n' | sort -n | tr '\n' ' ' | sed 's/ \$//'"
check "every running pod has the new image" until_true 20 is "api:2 api:2 api:2 api:2" sh -c "kubectl --kubeconfig $TMP/kubeconfig get pods -l app=api --field-selector=status.phase=Running -o jsonpath='{range .items[*]}{.spec.containers[0].image} {end}' | sed 's/ \$//'"
check "kubectl apply -f again changes nothing" sh -c "kubectl --kubeconfig $TMP/kubeconfig apply -f $TMP/deploy.yaml | grep -q configured"

# ---- dry runs ----
check "create deployment --dry-run=server" k create deployment dry --image=x --replicas=2 --dry-run=server
check "... made no Deployment" is 0 count deployments --field-selector=metadata.name=dry
check "... and no pods" is 0 count pods -l app=dry
check "scale --dry-run=server" k scale deployment web --replicas=7 --dry-run=server
check "... left the replicas as they were" is 1 k get deployment web -o jsonpath='{.spec.replicas}'
check "run --dry-run=server makes no pod" k run drypod --image=x --dry-run=server
check "... none" is 0 count pods --field-selector=metadata.name=drypod

# ---- jobs ----
check "kubectl create job" k create job once --image=busybox
cat >"$TMP/job.yaml" <<'EOF2'
apiVersion: batch/v1
kind: Job
metadata: {name: batch3}
spec:
  completions: 3
  parallelism: 2
  template:
    metadata:
      annotations: {sim.luascale.io/duration: 1s}
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
EOF2
check "kubectl apply -f a Job" k apply -f "$TMP/job.yaml"
check "kubectl wait --for=condition=Complete" k wait --for=condition=Complete job/batch3 --timeout=30s
check "three completions" is 3 k get job batch3 -o jsonpath='{.status.succeeded}'
check "its pods keep the Job's restartPolicy" is "Never Never Never" \
  sh -c "kubectl --kubeconfig $TMP/kubeconfig get pods -l job-name=batch3 -o jsonpath='{.items[*].spec.restartPolicy}'"
check "its pods stay, Succeeded" is 3 count pods -l job-name=batch3 --field-selector=status.phase=Succeeded

# ---- field validation: unknown fields are refused under Strict (kubectl's
# default), and what the server renders is taken back without a word ----
cat >"$TMP/typo-deploy.yaml" <<'EOF2'
apiVersion: apps/v1
kind: Deployment
metadata: {name: typo}
spec:
  replica: 2
  selector: {matchLabels: {app: typo}}
  template:
    metadata: {labels: {app: typo}}
    spec:
      containers: [{name: c, image: busybox}]
EOF2
check "a misspelt Deployment field is refused (strict)" \
  sh -c "! kubectl --kubeconfig $TMP/kubeconfig apply -f $TMP/typo-deploy.yaml >$TMP/typo.out 2>&1 && grep -q 'unknown field \"spec.replica\"' $TMP/typo.out"
check "and nothing was made" is 0 count deployments --field-selector=metadata.name=typo
cat >"$TMP/typo-pod.yaml" <<'EOF2'
apiVersion: v1
kind: Pod
metadata: {name: typo}
spec:
  containers: [{name: c, image: busybox, imagePullPolicy: Always, imagee: x}]
EOF2
check "a misspelt container field is refused (strict)" \
  sh -c "! kubectl --kubeconfig $TMP/kubeconfig create -f $TMP/typo-pod.yaml >$TMP/typo.out 2>&1 && grep -q 'spec.containers\[0\].imagee' $TMP/typo.out"
check "--validate=warn keeps the pod and warns" \
  sh -c "kubectl --kubeconfig $TMP/kubeconfig create --validate=warn -f $TMP/typo-pod.yaml 2>&1 | grep -qi 'unknown field'"
for obj in deployment/web "$(k get pods -l app=web -o name | head -1)" "$(k get rs -l app=web -o name | head -1)" job/batch3; do
  check "$obj read back and replaced: no unknown field" \
    sh -c "kubectl --kubeconfig $TMP/kubeconfig get $obj -o json | kubectl --kubeconfig $TMP/kubeconfig replace -f - >$TMP/rt.out 2>&1; grep -q replaced $TMP/rt.out && ! grep -qi 'unknown field' $TMP/rt.out"
done

# ---- what the controllers do not do is refused, not ignored ----
check "kubectl rollout pause is refused (422), not ignored" \
  sh -c "! kubectl --kubeconfig $TMP/kubeconfig rollout pause deployment/web >$TMP/pause.out 2>&1 && grep -q 'spec.paused: Unsupported value' $TMP/pause.out"
check "the Deployment is not paused" is "" k get deployment web -o jsonpath='{.spec.paused}'
cat >"$TMP/ttl-job.yaml" <<'EOF2'
apiVersion: batch/v1
kind: Job
metadata: {name: ttl}
spec:
  ttlSecondsAfterFinished: 60
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
EOF2
check "a Job with ttlSecondsAfterFinished is refused (422)" \
  sh -c "! kubectl --kubeconfig $TMP/kubeconfig apply -f $TMP/ttl-job.yaml >$TMP/ttl.out 2>&1 && grep -q 'spec.ttlSecondsAfterFinished: Unsupported value' $TMP/ttl.out"
check "a suspended Job is refused (422)" \
  sh -c "! kubectl --kubeconfig $TMP/kubeconfig patch job batch3 --type=merge -p '{\"spec\":{\"suspend\":true}}' >$TMP/susp.out 2>&1 && grep -q 'spec.suspend: Unsupported value' $TMP/susp.out"

# ---- deletion and garbage collection ----
check "kubectl delete deployment (background)" k delete deployment web
check "its ReplicaSet goes" until_true 10 is 0 count rs -l app=web
check "its pods go" until_true 40 is 0 count pods -l app=web
check "kubectl delete deployment --cascade=orphan" k delete deployment api --cascade=orphan
check "the ReplicaSet stays" is 2 count rs -l app=api
check "the ReplicaSet has no owner now" is "" k get rs -l app=api -o jsonpath='{.items[0].metadata.ownerReferences}'
RS=$(k get rs -l app=api -o jsonpath='{.items[?(@.spec.replicas==4)].metadata.name}')
check "kubectl delete rs --cascade=foreground" k delete rs "$RS" --cascade=foreground
check "its pods went with it" until_true 20 is 0 count pods -l app=api
check "and it went after them" until_true 20 is 1 count rs -l app=api
check "kubectl delete job" k delete job batch3
check "its pods are collected" until_true 20 is 0 count pods -l job-name=batch3

# ---- the fidelity rule ----
check "an unserved kind is 404 with a Status" \
  sh -c "kubectl --kubeconfig $TMP/kubeconfig get --raw /apis/apps/v1/namespaces/default/statefulsets 2>&1 | grep -q NotFound"
check "an unsupported verb is 405 with a Status" \
  sh -c "kubectl --kubeconfig $TMP/kubeconfig create --raw /api/v1/namespaces/default/pods/x/exec -f /dev/null 2>&1 | grep -qi 'MethodNotAllowed\|not supported\|405'"

finish
