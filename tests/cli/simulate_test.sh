#!/usr/bin/env bash
# End-to-end tests of `luascale simulate` and `luascale demo`: the table,
# the report's files and structure, reproducibility for a seed, errors.
# usage: simulate_test.sh LUASCALE_BINARY SOURCE_DIR
set -u
BIN=$1
SRC=$2
cd "$SRC" || exit 1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. tests/cli/lib.sh
count() { grep -oF -- "$2" "$1" | wc -l; }

SMOKE=examples/scenarios/smoke.yaml

t="simulate prints a row per policy and writes the report"
if run "$t" 0 "$BIN" simulate --scenario $SMOKE --policy policies/default.lua \
     --policy policies/binpack.lua --seed 3 --report "$TMP/r1" &&
   has out "node-hours" && grep -q '^default ' "$TMP/out" && grep -q '^binpack ' "$TMP/out" &&
   has out "report: $TMP/r1/index.html" && [ -s "$TMP/r1/index.html" ] && [ -s "$TMP/r1/series.csv" ]; then
  ok "$t"; else not_ok "$t"; fi

t="the report is one file with four charts per policy and nothing fetched"
H="$TMP/r1/index.html"
if [ "$(count "$H" 'class="chart"')" -eq 8 ] &&
   [ "$(count "$H" 'data-metric="nodes"')" -eq 2 ] && [ "$(count "$H" 'data-metric="pending"')" -eq 2 ] &&
   [ "$(count "$H" 'data-metric="utilization"')" -eq 2 ] && [ "$(count "$H" 'data-metric="cost"')" -eq 2 ] &&
   [ "$(count "$H" 'class="chart" data-metric="nodes" data-policy="default"')" -eq 1 ] &&
   [ "$(count "$H" 'class="chart" data-metric="cost" data-policy="binpack"')" -eq 1 ] &&
   [ "$(count "$H" '<tr data-policy="default"')" -eq 1 ] && [ "$(count "$H" '<tr data-policy="binpack"')" -eq 1 ] &&
   ! grep -q '<script' "$H" && ! grep -o 'https\?://[^"]*' "$H" | grep -qv 'www.w3.org/\(2000/svg\|1999/xhtml\)' &&
   ! grep -qi '<link\|<img\|@import\|url(' "$H"; then
  ok "$t"; else not_ok "$t"; fi

t="the series are reproducible for a seed and differ for another"
"$BIN" simulate --scenario $SMOKE --policy policies/default.lua --seed 3 --report "$TMP/r2" >/dev/null 2>&1
"$BIN" simulate --scenario $SMOKE --policy policies/default.lua --seed 3 --report "$TMP/r3" >/dev/null 2>&1
"$BIN" simulate --scenario $SMOKE --policy policies/default.lua --seed 4 --report "$TMP/r4" >/dev/null 2>&1
if [ -s "$TMP/r2/series.csv" ] && cmp -s "$TMP/r2/series.csv" "$TMP/r3/series.csv" &&
   cmp -s "$TMP/r2/index.html" "$TMP/r3/index.html" && ! cmp -s "$TMP/r2/series.csv" "$TMP/r4/series.csv"; then
  ok "$t"; else not_ok "$t"; fi

t="progress goes to stderr as plain lines when it is not a terminal"
if run "$t" 0 "$BIN" simulate --scenario $SMOKE --policy policies/default.lua &&
   has err "default: 50%" && has err "default: 100%" && ! has out "%)"; then
  ok "$t"; else not_ok "$t"; fi

t="simulate without a policy is a usage error"
if run "$t" 1 "$BIN" simulate --scenario $SMOKE && has err "--policy"; then ok "$t"; else not_ok "$t"; fi

t="a bad seed is a usage error"
if run "$t" 1 "$BIN" simulate --scenario $SMOKE --policy policies/default.lua --seed -1 &&
   has err "--seed"; then ok "$t"; else not_ok "$t"; fi

t="a broken scenario names file:line:col"
printf 'seed: 1\nduration: soon\n' >"$TMP/bad-scenario.yaml"
if run "$t" 2 "$BIN" simulate --scenario "$TMP/bad-scenario.yaml" --policy policies/default.lua &&
   has err "bad-scenario.yaml:2:"; then ok "$t"; else not_ok "$t"; fi

t="a policy that does not load names its file"
printf 'local P = {\n' >"$TMP/syntax.lua"
if run "$t" 2 "$BIN" simulate --scenario $SMOKE --policy "$TMP/syntax.lua" && has err "syntax.lua"; then
  ok "$t"; else not_ok "$t"; fi

t="a policy failing in some rounds: the first errors on stderr, all in --log"
printf 'local P = {}\nfunction P.reconcile(c) if c.now > 1714982400 + 600 then error("boom") end return require("luascale").plan() end\nreturn P\n' >"$TMP/later.lua"
"$BIN" simulate --scenario $SMOKE --policy "$TMP/later.lua" --log "$TMP/later.log" >"$TMP/out" 2>"$TMP/err"
if [ "$(grep -c 'error \[later\] policy failed' "$TMP/err")" -eq 5 ] && has err "more errors not shown" &&
   [ "$(grep -c 'policy failed, no actions this round' "$TMP/later.log")" -eq 299 ] &&
   has out "the policy failed in 299 round(s)"; then ok "$t"; else not_ok "$t"; fi

t="a policy failing in every round from the start is given up, with its error"
printf 'local P = {}\nfunction P.reconcile() error("always") end\nreturn P\n' >"$TMP/always.lua"
if run "$t" 2 "$BIN" simulate --scenario $SMOKE --policy "$TMP/always.lua" &&
   has err "failed in each of the first 30 rounds" && has err 'always.lua:2: error raised: "always"'; then
  ok "$t"; else not_ok "$t"; fi

t="a report directory that cannot be made is an error naming it"
if run "$t" 2 "$BIN" simulate --scenario $SMOKE --policy policies/default.lua --report "$TMP/no/such/dir" &&
   has err "$TMP/no/such/dir"; then ok "$t"; else not_ok "$t"; fi

t="a run that breaks an invariant exits 4 and says which"
cat >"$TMP/over.yaml" <<'YAML'
duration: 10m
node_groups:
  - {name: workers, min: 0, max: 2, price_per_hour: 1, template: {allocatable: {cpu: 4, memory: 16Gi}}}
initial_nodes: [{group: workers, count: 3}]
YAML
if run "$t" 4 "$BIN" simulate --scenario "$TMP/over.yaml" --policy tests/policies/fixtures/idle.lua &&
   has out "invariant violation" && has out "above its max of 2"; then ok "$t"; else not_ok "$t"; fi

t="demo replays the classroom day with two policies and says where the report is"
mkdir -p "$TMP/cwd"
if (cd "$TMP/cwd" && run "$t" 0 "$BIN" demo) && grep -q '^jupyterhub ' "$TMP/out" &&
   grep -q '^default ' "$TMP/out" && has out "report: $TMP/cwd/luascale-report/index.html" &&
   [ "$(count "$TMP/cwd/luascale-report/index.html" 'class="chart"')" -eq 8 ] && has err "Classroom day"; then
  ok "$t"; else not_ok "$t"; fi

t="demo takes --report DIR and refuses stray arguments"
if run "$t" 0 "$BIN" demo --report "$TMP/d2" --seed 9 && [ -s "$TMP/d2/index.html" ] &&
   run "$t" 1 "$BIN" demo extra && has err "unexpected argument"; then ok "$t"; else not_ok "$t"; fi

finish
