#!/usr/bin/env bash
# `luascale check` fails on what `luascale run` would fail on before it
# acts: a context missing from the kubeconfig, a kubeconfig, token file or
# CA that cannot be read, a service account missing in a pod, a policy that
# loads but throws on its first reconcile of a real cluster. And the
# README's command works on every overlay of deploy/: the policy the
# overlay's config names comes from the ConfigMap kustomize builds.
# usage: check_test.sh LUASCALE_BINARY SOURCE_DIR
set -u
BIN=$1
SRC=$2
cd "$SRC" || exit 1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. tests/cli/lib.sh

TOKEN=tok-$RANDOM$RANDOM-secret
printf '%s\n' "$TOKEN" >"$TMP/token"
printf -- '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n' >"$TMP/ca.pem"

# kubeconfig CTX TOKENFILE CAFILE: a kubeconfig with the one context CTX
kubeconfig() {
  cat <<EOF
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443", certificate-authority: "$3"}
users:
- name: u
  user: {tokenFile: "$2"}
contexts:
- name: $1
  context: {cluster: c, user: u}
EOF
}
# config KUBECONFIG CONTEXT [POLICY]: a config of one group
config() {
  cat <<EOF
cluster: {kubeconfig: "$1", context: "$2"}
node_groups:
  - name: workers
    min: 1
    max: 5
    template: {allocatable: {cpu: 4, memory: 16Gi, pods: 110}}
policy: {path: "${3:-$SRC/policies/default.lua}"}
EOF
}

kubeconfig prod "$TMP/token" "$TMP/ca.pem" >"$TMP/kubeconfig"

t="check accepts a readable kubeconfig, context, token file and CA, and never prints the token"
config "$TMP/kubeconfig" prod >"$TMP/ok.yaml"
if run "$t" 0 "$BIN" check --config "$TMP/ok.yaml" && has out 'cluster: context "prod"' &&
   has out "credentials readable" && has out "policy $SRC/policies/default.lua: ok" &&
   ! grep -qF "$TOKEN" "$TMP/out" "$TMP/err"; then ok "$t"; else not_ok "$t"; fi

t="check fails on a context the kubeconfig does not have"
config "$TMP/kubeconfig" staging >"$TMP/noctx.yaml"
if run "$t" 2 "$BIN" check --config "$TMP/noctx.yaml" && has err "staging"; then ok "$t"; else not_ok "$t"; fi

t="check fails on a kubeconfig it cannot read"
config "$TMP/nope.kubeconfig" prod >"$TMP/nokc.yaml"
if run "$t" 2 "$BIN" check --config "$TMP/nokc.yaml" && has err "nope.kubeconfig"; then ok "$t"; else not_ok "$t"; fi

t="check fails on a token file it cannot read"
kubeconfig prod "$TMP/gone-token" "$TMP/ca.pem" >"$TMP/kc-notoken"
config "$TMP/kc-notoken" prod >"$TMP/notoken.yaml"
if run "$t" 2 "$BIN" check --config "$TMP/notoken.yaml" && has err "gone-token"; then ok "$t"; else not_ok "$t"; fi

t="check fails on an empty token file"
: >"$TMP/empty-token"
kubeconfig prod "$TMP/empty-token" "$TMP/ca.pem" >"$TMP/kc-empty"
config "$TMP/kc-empty" prod >"$TMP/emptytoken.yaml"
if run "$t" 2 "$BIN" check --config "$TMP/emptytoken.yaml" && has err "empty-token"; then ok "$t"; else not_ok "$t"; fi

t="check fails on a CA file it cannot read"
kubeconfig prod "$TMP/token" "$TMP/gone-ca.pem" >"$TMP/kc-noca"
config "$TMP/kc-noca" prod >"$TMP/noca.yaml"
if run "$t" 2 "$BIN" check --config "$TMP/noca.yaml" && has err "gone-ca.pem"; then ok "$t"; else not_ok "$t"; fi

t="in a pod (KUBERNETES_SERVICE_HOST set), check fails without a readable service-account token"
if [ -e /var/run/secrets/kubernetes.io/serviceaccount/token ]; then
  ok "$t (skipped: this machine has a service account)"
else
  printf 'cluster: {in_cluster: true}\nnode_groups: [{name: w, min: 1, max: 3, template: {allocatable: {cpu: 2, memory: 8Gi}}}]\npolicy: {path: "%s/policies/default.lua"}\n' "$SRC" >"$TMP/incluster.yaml"
  if KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT=6443 run "$t" 2 "$BIN" check --config "$TMP/incluster.yaml" &&
     has err "service-account token"; then ok "$t"; else not_ok "$t"; fi
  t="outside a pod, check says the in-cluster service account is not checked there"
  if env -u KUBERNETES_SERVICE_HOST "$BIN" check --config "$TMP/incluster.yaml" >"$TMP/out" 2>"$TMP/err" &&
     has out "in-cluster: not checked here"; then ok "$t"; else not_ok "$t"; fi
fi

t="check fails on a policy that loads but throws on its first reconcile of a cluster with nodes"
printf 'local P = {}\nfunction P.reconcile(cluster)\n  local first = cluster.nodes[1]\n  if first then return first.missing.field end\n  return {}\nend\nreturn P\n' >"$TMP/throws.lua"
config "$TMP/kubeconfig" prod "$TMP/throws.lua" >"$TMP/throws.yaml"
if run "$t" 3 "$BIN" check --config "$TMP/throws.yaml" && has err "throws.lua:4:" &&
   has err "tried as a reload tries it"; then ok "$t"; else not_ok "$t"; fi

t="check fails on a policy that throws on a pending pod"
printf 'local P = {}\nfunction P.reconcile(cluster)\n  for _, p in ipairs(cluster.pending) do error("cannot place " .. p.name) end\n  return {}\nend\nreturn P\n' >"$TMP/pending.lua"
config "$TMP/kubeconfig" prod "$TMP/pending.lua" >"$TMP/pending.yaml"
if run "$t" 3 "$BIN" check --config "$TMP/pending.yaml" && has err "pending.lua:3:" && has err "cannot place check-pending"; then ok "$t"; else not_ok "$t"; fi

t="a cluster problem and a policy problem are both said; the policy's status wins"
config "$TMP/kubeconfig" staging "$TMP/throws.lua" >"$TMP/both.yaml"
if run "$t" 3 "$BIN" check --config "$TMP/both.yaml" && has err "staging" && has err "throws.lua:4:"; then ok "$t"; else not_ok "$t"; fi

# ---- the README's command on every overlay of deploy/ ----
for d in deploy/overlays/*/; do
  cloud=$(basename "$d")
  t="luascale check --config deploy/overlays/$cloud/config.yaml checks the ConfigMap's policy (deploy/base/default.lua)"
  if run "$t" 0 env -u KUBERNETES_SERVICE_HOST "$BIN" check --config "deploy/overlays/$cloud/config.yaml" &&
     has out "policy deploy/base/default.lua: ok" && has out "ConfigMap luascale-config"; then ok "$t"; else not_ok "$t"; fi
done

t="the ConfigMap's files are looked up as kustomize merges them: the overlay's own default.lua wins"
mkdir -p "$TMP/kz/base" "$TMP/kz/overlay"
cp deploy/base/config.yaml deploy/base/default.lua "$TMP/kz/base/"
printf 'resources: [../base]\nconfigMapGenerator:\n  - name: luascale-config\n' >"$TMP/kz/overlay/kustomization.yaml"
printf '    behavior: merge\n    files: [config.yaml, default.lua=mine.lua]\n' >>"$TMP/kz/overlay/kustomization.yaml"
printf 'configMapGenerator:\n  - name: luascale-config\n    files: [config.yaml, default.lua]\n' >"$TMP/kz/base/kustomization.yaml"
cp deploy/overlays/aws/config.yaml "$TMP/kz/overlay/"
cp "$TMP/throws.lua" "$TMP/kz/overlay/mine.lua"
if run "$t" 3 env -u KUBERNETES_SERVICE_HOST "$BIN" check --config "$TMP/kz/overlay/config.yaml" &&
   has err "mine.lua:4:"; then ok "$t"; else not_ok "$t"; fi

t="a policy named beside a config that no kustomization puts there is still a missing file"
mkdir -p "$TMP/alone"
cp deploy/overlays/aws/config.yaml "$TMP/alone/"
if run "$t" 3 env -u KUBERNETES_SERVICE_HOST "$BIN" check --config "$TMP/alone/config.yaml" &&
   has err "cannot read $TMP/alone/default.lua"; then ok "$t"; else not_ok "$t"; fi

finish
