#!/usr/bin/env bash
# End-to-end tests of the luascale command line: exit statuses, messages
# and output of `check` and `decide` on the example config and cluster.
# usage: cli_test.sh LUASCALE_BINARY SOURCE_DIR
set -u
BIN=$1
SRC=$2
cd "$SRC" || exit 1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. tests/cli/lib.sh
json_check() { # LUA_EXPR over decoded stdout as `r`
  lua5.4 -e "local cjson = require 'cjson'; local f = io.open('$TMP/out'); local r = cjson.decode(f:read('a')); f:close(); assert($1)" 2>>"$TMP/err"
}

CFG=examples/config.yaml
STATE=examples/cluster.json
NOW=2026-11-30T10:00:00Z

t="decide prints the plan, the reasons and every node"
if run "$t" 0 "$BIN" decide --config $CFG --state $STATE --now $NOW && has out "scale_up workers +3" &&
   has out "pending pod(s)" && has out "[policies/default.lua:" && has out "workers-4" &&
   has out "not in a managed node group" && has out "ml/big-train-0"; then ok "$t"; else not_ok "$t"; fi

t="decide --output json has the documented shape"
if run "$t" 0 "$BIN" decide --config $CFG --state $STATE --now $NOW --output json &&
   json_check "r.actions[1].type == 'scale_up' and r.actions[1].group == 'workers' and r.actions[1].count == 3 and #r.actions[1].reason > 0" &&
   json_check "#r.nodes == 6 and r.nodes[1].utilization.cpu > 0 and type(r.nodes[1].removable) == 'boolean' and #r.nodes[1].why > 0" &&
   json_check "type(r.rejected) == 'table' and r.error == nil"; then ok "$t"; else not_ok "$t"; fi

t="decide reads separate NodeList and PodList files"
lua5.4 -e "
  local cjson = require 'cjson'
  local f = io.open('$STATE'); local doc = cjson.decode(f:read('a')); f:close()
  local nodes, pods = {}, {}
  for _, it in ipairs(doc.items) do
    if it.kind == 'Node' then it.kind = nil; nodes[#nodes+1] = it elseif it.kind == 'Pod' then it.kind = nil; pods[#pods+1] = it end
  end
  io.open('$TMP/nodes.json', 'w'):write(cjson.encode({kind='NodeList', apiVersion='v1', items=nodes}))
  io.open('$TMP/pods.json', 'w'):write(cjson.encode({kind='PodList', apiVersion='v1', items=pods}))"
if run "$t" 0 "$BIN" decide --config $CFG --state "$TMP/nodes.json" --state "$TMP/pods.json" --now $NOW &&
   has out "scale_up workers +3"; then ok "$t"; else not_ok "$t"; fi

t="an environment variable overrides the config (max_nodes_total) and the C check trims the scale-up"
if LUASCALE_SAFETY_MAX_NODES_TOTAL=6 run "$t" 0 "$BIN" decide --config $CFG --state $STATE --now $NOW &&
   has out "max_nodes_total is 6" && has out "plan: 0 actions"; then ok "$t"; else not_ok "$t"; fi

t="check validates the example config, its cluster settings and policy"
# a home whose ~/.kube/config has the example's context (classroom-prod)
mkdir -p "$TMP/home/.kube"
printf 'tok\n' >"$TMP/home/.kube/token"
printf 'clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]\nusers: [{name: u, user: {tokenFile: token}}]\ncontexts: [{name: classroom-prod, context: {cluster: c, user: u}}]\n' >"$TMP/home/.kube/config"
if HOME=$TMP/home run "$t" 0 "$BIN" check --config $CFG && has out 'cluster: context "classroom-prod"' &&
   has out "policy policies/default.lua: ok"; then ok "$t"; else not_ok "$t"; fi

t="check fails when the config's kubeconfig is not there"
if HOME=$TMP/nohome run "$t" 2 "$BIN" check --config $CFG && has err "nohome/.kube/config"; then ok "$t"; else not_ok "$t"; fi

# The README's "--policy FILE tries another policy", with every bundled
# policy: the example config's params are default.lua's and are dropped
# with one note when another policy replaces it.
for p in default binpack batch jupyterhub; do
  t="decide --policy policies/$p.lua with the example config computes a plan"
  if run "$t" 0 "$BIN" decide --config $CFG --state $STATE --now $NOW --policy policies/$p.lua &&
     has out "plan:"; then
    if [ $p = default ]; then
      # the config's own policy: its params apply, no note
      if ! has err "note"; then ok "$t (the config's params kept)"; else not_ok "$t"; fi
    elif [ "$(grep -c "note: --policy policies/$p.lua replaces" "$TMP/err")" = 1 ] &&
         has err "scale_down_utilization, unneeded_for) are not applied"; then ok "$t"; else not_ok "$t"; fi
  else not_ok "$t"; fi
done

t="check --policy with another policy drops the config's params too"
if HOME=$TMP/home run "$t" 0 "$BIN" check --config $CFG --policy policies/binpack.lua &&
   has err "are not applied" && has out "policy policies/binpack.lua: ok"; then ok "$t"; else not_ok "$t"; fi

t="missing --state is a usage error"
if run "$t" 1 "$BIN" decide --config $CFG && has err "--state FILE"; then ok "$t"; else not_ok "$t"; fi

t="a bad --now is a usage error"
if run "$t" 1 "$BIN" decide --config $CFG --state $STATE --now yesterday && has err "--now"; then ok "$t"; else not_ok "$t"; fi

t="an unknown command is a usage error"
if run "$t" 1 "$BIN" frobnicate && has err "unknown command"; then ok "$t"; else not_ok "$t"; fi

t="a missing config file names the file"
if run "$t" 2 "$BIN" decide --config "$TMP/nope.yaml" --state $STATE && has err "nope.yaml"; then ok "$t"; else not_ok "$t"; fi

t="a config error names file:line:column"
printf 'cluster:\n  kubeconfig: /dev/null\n  context: x\npolicy:\n  path: %s/policies/default.lua\nsafety:\n  max_nodes_total: ten\n' "$SRC" > "$TMP/bad.yaml"
if run "$t" 2 "$BIN" decide --config "$TMP/bad.yaml" --state $STATE && has err "bad.yaml:7:20"; then ok "$t"; else not_ok "$t"; fi

t="a config without a context is refused (no current-context fallback)"
printf 'cluster:\n  kubeconfig: /dev/null\npolicy:\n  path: %s/policies/default.lua\n' "$SRC" > "$TMP/noctx.yaml"
if run "$t" 2 "$BIN" check --config "$TMP/noctx.yaml" && has err "context"; then ok "$t"; else not_ok "$t"; fi

t="malformed state names the file"
printf '{"kind":"List","items":[{"kind":"Pod","metadata":{"name":"x"' > "$TMP/broken.json"
if run "$t" 2 "$BIN" decide --config $CFG --state "$TMP/broken.json" && has err "broken.json"; then ok "$t"; else not_ok "$t"; fi

t="a malformed object names the object"
printf '{"kind":"List","items":[{"kind":"Node","metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"lots"}}}]}' > "$TMP/badnode.json"
if run "$t" 2 "$BIN" decide --config $CFG --state "$TMP/badnode.json" && has err "n1" && has err "lots"; then ok "$t"; else not_ok "$t"; fi

t="a failing policy gives exit 3, file:line, and no actions"
printf 'local P = {}\nfunction P.reconcile(cluster)\n  return cluster.nodes[1].missing.field\nend\nreturn P\n' > "$TMP/broken.lua"
if run "$t" 3 "$BIN" decide --config $CFG --state $STATE --policy "$TMP/broken.lua" --output json &&
   has err "broken.lua:3:" && json_check "#r.actions == 0 and r.error:find('broken.lua:3:')"; then ok "$t"; else not_ok "$t"; fi

t="a policy in an endless loop is stopped by its budget"
printf 'local P = {}\nfunction P.reconcile() while true do end end\nreturn P\n' > "$TMP/loop.lua"
if LUASCALE_POLICY_INSTRUCTIONS=5000000 run "$t" 3 "$BIN" decide --config $CFG --state $STATE --policy "$TMP/loop.lua" &&
   has err "instruction budget"; then ok "$t"; else not_ok "$t"; fi

t="one string.find that would run far past the deadline fails at its line with exit 3 and no plan"
printf 'local P = {}\nfunction P.reconcile()\n  local r = string.rep("a", 2^17):find("[" .. string.rep("b", 2^17) .. "]")\n  return {}\nend\nreturn P\n' > "$TMP/find.lua"
if run "$t" 3 "$BIN" decide --config $CFG --state $STATE --policy "$TMP/find.lua" --output json &&
   has err "find.lua:3: string.find: pattern" && json_check "#r.actions == 0 and r.error:find('find.lua:3: string.find', 1, true)"; then ok "$t"; else not_ok "$t"; fi

t="a policy that does not load is refused by check"
printf 'local P = {\n' > "$TMP/syntax.lua"
if run "$t" 3 "$BIN" check --config $CFG --policy "$TMP/syntax.lua" && has err "syntax.lua"; then ok "$t"; else not_ok "$t"; fi

# ---- inputs from outside: variables, files, text, time ----

t="a misspelled LUASCALE_ variable is an error naming the closest known one"
if LUASCALE_SAFETY_MAX_NODE_TOTAL=1 run "$t" 2 "$BIN" decide --config $CFG --state $STATE --now $NOW &&
   has err "LUASCALE_SAFETY_MAX_NODE_TOTAL: unknown variable (did you mean LUASCALE_SAFETY_MAX_NODES_TOTAL?)"; then ok "$t"; else not_ok "$t"; fi

t="a config key out of its range names file:line:col and the key"
printf 'policy:\n  path: %s/policies/default.lua\n  memory: 1\n' "$SRC" > "$TMP/mem.yaml"
if run "$t" 2 "$BIN" decide --config "$TMP/mem.yaml" --state $STATE --now $NOW &&
   has err "mem.yaml:3:11: policy.memory: must be from 1Mi to 1024Gi"; then ok "$t"; else not_ok "$t"; fi

t="the minimal offline config of docs/configuration.md works with decide"
awk '/^## Offline use/{f=1} f&&/^```json/{g=1;next} g&&/^```/{exit} g' docs/configuration.md > "$TMP/offline.json"
if [ -s "$TMP/offline.json" ] && run "$t" 0 "$BIN" decide --config "$TMP/offline.json" --policy policies/default.lua --state $STATE --now $NOW &&
   has out "plan:"; then ok "$t"; else echo "# snippet: $(cat "$TMP/offline.json")"; not_ok "$t"; fi

t="a FIFO without a writer as --config, --state or policy.path is refused at once"
mkfifo "$TMP/fifo"
printf 'policy:\n  path: %s\n' "$TMP/fifo" > "$TMP/fifopolicy.yaml"
if run "$t" 2 timeout 20 "$BIN" decide --config "$TMP/fifo" --state $STATE --now $NOW && has err "a pipe or FIFO, not a regular file" &&
   run "$t" 2 timeout 20 "$BIN" decide --config $CFG --state "$TMP/fifo" --now $NOW && has err "fifo: a pipe or FIFO" &&
   run "$t" 3 timeout 20 "$BIN" decide --config "$TMP/fifopolicy.yaml" --state $STATE --now $NOW && has err "a pipe or FIFO"; then ok "$t"; else not_ok "$t"; fi

t="a policy that requires a FIFO in its folder is refused, not blocked"
mkdir -p "$TMP/pol"
mkfifo "$TMP/pol/helper.lua"
printf 'local h = require "helper"\nlocal P = {}\nfunction P.reconcile() return {} end\nreturn P\n' > "$TMP/pol/main.lua"
if run "$t" 3 timeout 20 "$BIN" decide --config $CFG --state $STATE --now $NOW --policy "$TMP/pol/main.lua" &&
   has err "a pipe or FIFO"; then ok "$t"; else not_ok "$t"; fi

t="--now outside 1970..9999 is a usage error, not 'cluster at :'"
if run "$t" 1 "$BIN" decide --config $CFG --state $STATE --now 99999999999999 && has err "--now: 99999999999999 is outside" &&
   run "$t" 1 "$BIN" decide --config $CFG --state $STATE --now 0000-01-01T00:00:00Z && has err "outside" &&
   run "$t" 0 "$BIN" decide --config $CFG --state $STATE --now 253402300799 && has out "cluster at 9999-12-31T23:59:59Z:"; then ok "$t"; else not_ok "$t"; fi

t="a node name that is not UTF-8 still gives valid JSON"
printf '{"kind":"List","items":[{"kind":"Node","metadata":{"name":"w\xff\xfe-\xc3"},"status":{"allocatable":{"cpu":"4","memory":"16Gi","pods":"110"}}}]}' > "$TMP/badutf8.json"
if run "$t" 0 "$BIN" decide --config $CFG --state "$TMP/badutf8.json" --now $NOW --output json &&
   lua5.4 -e "local f = io.open('$TMP/out'); local s = f:read('a'); f:close(); assert(utf8.len(s), 'not UTF-8')" 2>>"$TMP/err" &&
   json_check "r.nodes[1].name == 'w\u{fffd}\u{fffd}-\u{fffd}'"; then ok "$t"; else not_ok "$t"; fi

t="decide's text output escapes names, reasons and policy messages: no forged lines, no terminal escapes"
printf '{"kind":"List","items":[{"kind":"Node","metadata":{"name":"w\\u001b[2J\\nnodes: forged\xff"},"status":{"allocatable":{"cpu":"4","memory":"16Gi","pods":"110"}}}]}' > "$TMP/ctl.json"
printf 'local P = {}\nfunction P.reconcile()\n  return {actions = {{type = "scale_up", group = "workers", count = 1, reason = "more\\27[31m\\nplan: 9 actions"}},\n          messages = {"note\\r\\nrejected: 9 actions\\27]0;title\\7"}}\nend\nreturn P\n' > "$TMP/ctl.lua"
if run "$t" 0 "$BIN" decide --config $CFG --state "$TMP/ctl.json" --now $NOW --policy "$TMP/ctl.lua" &&
   has out 'w\x1b[2J\nnodes: forged\xff  -' && has out 'scale_up workers +1  more\x1b[31m\nplan: 9 actions' &&
   has out '  note\r\nrejected: 9 actions\x1b]0;title\x07' &&
   [ "$(grep -c '^plan: \|^rejected: \|^nodes:' "$TMP/out")" -eq 3 ] &&
   ! grep -q "$(printf '[\033\r\a]')" "$TMP/out" &&
   lua5.4 -e "local f = io.open('$TMP/out'); local s = f:read('a'); f:close(); assert(utf8.len(s), 'not UTF-8')" 2>>"$TMP/err"
then ok "$t"; else not_ok "$t"; fi

t="\\u0000 in a name is refused, naming the item"
printf '{"kind":"List","items":[{"kind":"Node","metadata":{"name":"workers-1\\u0000evil"},"status":{"allocatable":{"cpu":"4","memory":"16Gi"}}}]}' > "$TMP/nul.json"
if run "$t" 2 "$BIN" decide --config $CFG --state "$TMP/nul.json" --now $NOW &&
   has err "nul.json: items[0] (at byte" && has err "\\u0000 (NUL)"; then ok "$t"; else not_ok "$t"; fi

t="one object over 64 MiB in a state file is refused, naming the item"
lua5.4 -e "
  local f = io.open('$TMP/huge.json', 'w')
  f:write('{\"kind\":\"List\",\"items\":[{\"kind\":\"Node\",\"metadata\":{\"name\":\"a\"},\"status\":{\"allocatable\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}},')
  f:write('{\"kind\":\"Node\",\"metadata\":{\"name\":\"b\",\"annotations\":{\"x\":\"', string.rep('x', 65 * 1024 * 1024), '\"}}}]}')
  f:close()"
if run "$t" 2 "$BIN" decide --config $CFG --state "$TMP/huge.json" --now $NOW &&
   has err "huge.json: items[1] (at byte" && has err "larger than 64 MiB"; then ok "$t"; else not_ok "$t"; fi
rm -f "$TMP/huge.json"

t="a policy's print cannot forge log lines or send terminal escapes"
printf 'local P = {}\nfunction P.reconcile()\n  print("one\\n2026-11-30T10:00:00Z info  forged", "\\27[2J")\n  return {}\nend\nreturn P\n' > "$TMP/print.lua"
if run "$t" 0 "$BIN" decide --config $CFG --state $STATE --now $NOW --policy "$TMP/print.lua" &&
   has err 'policy: one\n2026-11-30T10:00:00Z info  forged	\x1b[2J' && ! grep -q '^2026-11-30T10:00:00Z info  forged' "$TMP/err" &&
   ! grep -q "$(printf '\033')" "$TMP/err"; then ok "$t"; else not_ok "$t"; fi

t="a policy's error message reaches stderr on one line"
printf 'local P = {}\nfunction P.reconcile()\n  error("bad\\nluascale: forged\\27[31m")\nend\nreturn P\n' > "$TMP/err.lua"
if run "$t" 3 "$BIN" decide --config $CFG --state $STATE --now $NOW --policy "$TMP/err.lua" &&
   has err 'bad\nluascale: forged\x1b[31m' && ! grep -q '^luascale: forged' "$TMP/err"; then ok "$t"; else not_ok "$t"; fi

t="luascale test without a path runs the project's tests/policies"
mkdir -p "$TMP/proj/tests/policies" "$TMP/empty"
printf 'describe("project", function() it("is found", function() assert.is_true(true) end) end)\n' > "$TMP/proj/tests/policies/x_spec.lua"
if (cd "$TMP/proj" && run "$t" 0 "$BIN" test -o TAP) && has out "ok 1 - project is found"; then ok "$t"; else not_ok "$t"; fi

t="luascale test without a path or specs says what to pass"
if (cd "$TMP/empty" && run "$t" 1 "$BIN" test) && has err "luascale test PATH"; then ok "$t"; else not_ok "$t"; fi

finish
