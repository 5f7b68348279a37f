#!/usr/bin/env bash
# End-to-end tests of what `luascale simulate` reports beyond the
# comparison: the text table's rejected column and each run's params, and
# in the HTML report the wait curves, the scale-up and removal markers, the
# cost by group adding up, the params (escaped: they come from files).
# usage: simulate_report_test.sh LUASCALE_BINARY SOURCE_DIR
set -u
BIN=$1
SRC=$2
cd "$SRC" || exit 1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. tests/cli/lib.sh
count() { grep -oF -- "$2" "$1" | wc -l; }

SMOKE=examples/scenarios/smoke.yaml

t="the text table's last column is rejected: the actions the safety checks refused"
if run "$t" 0 "$BIN" simulate --scenario $SMOKE --policy tests/policies/fixtures/reckless.lua \
     --policy policies/default.lua --report "$TMP/r1"; then
  header=$(grep '^policy ' "$TMP/out" | awk '{print $NF}')
  reckless=$(awk '$1 == "reckless" {print $NF}' "$TMP/out")
  default=$(awk '$1 == "default" {print $NF}' "$TMP/out")
  refused=$(sed -n 's/^.*reckless.lua: .*the safety checks refused \([0-9]*\) action(s)$/\1/p' "$TMP/out")
  if [ "$header" = rejected ] && [ -n "$refused" ] && [ "$refused" -gt 0 ] &&
     [ "$reckless" = "$refused" ] && [ "$default" = 0 ] && has out "rejected: actions of the policy's plans"; then
    ok "$t"; else echo "# header $header, reckless $reckless, default $default, refused $refused"; not_ok "$t"; fi
else not_ok "$t"; fi

H="$TMP/r1/index.html"
t="the report has one wait chart with a curve and the percentiles per run"
if [ "$(count "$H" 'data-metric="waits"')" -eq 1 ] &&
   [ "$(count "$H" '<polyline class="line cdf"')" -eq 2 ] &&
   grep -q '<tr class="waits" data-policy="reckless" data-pods="[1-9][0-9]*" data-p50="[0-9.]*" data-p90="[0-9.]*" data-p99="[0-9.]*" data-max="[0-9.]*">' "$H" &&
   grep -q '<tr class="waits" data-policy="default" data-pods="[1-9][0-9]*" data-p50=' "$H"; then
  ok "$t"; else not_ok "$t"; fi

t="the wait curve's max is the table's wait max"
max=$(sed -n 's/.*<tr class="waits" data-policy="default" data-pods="[0-9]*" .* data-max="\([0-9.]*\)".*/\1/p' "$H")
shown=$(awk '$1 == "default" {print $6}' "$TMP/out")
if [ -n "$max" ] && [ "$(awk -v s="$max" 'BEGIN { s = int(s + 0.5); printf "%dm%02ds", s / 60, s % 60 }')" = "$shown" ]; then
  ok "$t"; else echo "# max $max, table $shown"; not_ok "$t"; fi

t="the nodes charts mark scale-ups and removals, their counts the runs'"
ups=$(sed -n '/data-metric="nodes" data-policy="default"/,/<\/svg>/p' "$H" |
      grep -o '<g class="mark up" [^>]*data-count="[0-9]*"' | sed 's/.*data-count="//; s/"//' | awk '{s += $1} END {print s + 0}')
downs=$(sed -n '/data-metric="nodes" data-policy="default"/,/<\/svg>/p' "$H" |
      grep -o '<g class="mark down" [^>]*data-count="[0-9]*"' | sed 's/.*data-count="//; s/"//' | awk '{s += $1} END {print s + 0}')
removed=$(awk '$1 == "default" {print $10}' "$TMP/out")
launches=$(awk '$1 == "default" {print $8}' "$TMP/out")
if [ "$downs" = "$removed" ] && [ "$ups" -gt 0 ] && [ "$ups" -le "$launches" ]; then
  ok "$t"; else echo "# up $ups (launches $launches), down $downs (removed $removed)"; not_ok "$t"; fi

t="the cost by group adds up to each run's cost in the table"
good=1
for p in reckless default; do
  table=$(sed -n "/<table class=\"cmp gcost\" data-policy=\"$p\"/,/<\/table>/p" "$H")
  sum=$(printf '%s\n' "$table" | grep -o '<tr data-group="[^"]*" data-node-hours="[^"]*" data-cost="[^"]*"' |
        sed 's/.*data-cost="//; s/"//' | awk '{s += $1} END {printf "%.2f", s}')
  cost=$(awk -v p="$p" '$1 == p {print $3}' "$TMP/out")
  [ -n "$table" ] && [ "$sum" = "$cost" ] || { good=0; echo "# $p: groups $sum, table $cost"; }
done
if [ "$good" = 1 ]; then ok "$t"; else not_ok "$t"; fi

# a config naming its policy with params; one param a string that would be markup
mkdir -p "$TMP/day"
cat >"$TMP/day/noted.lua" <<'LUA'
-- does nothing; its params are to be shown
local P = {}
P.params = { note = "plain", limit = 3, unneeded_for = "10m" }
function P.reconcile() return require("luascale").plan() end
return P
LUA
cat >"$TMP/day/config.yaml" <<'YAML'
node_groups:
  - {name: workers, min: 1, max: 3, price_per_hour: 0.2, template: {allocatable: {cpu: 4, memory: 16Gi}}}
policy:
  path: noted.lua
  params:
    note: "</td><script>alert(1)</script>&'\""
    unneeded_for: 3m
YAML
printf 'duration: 10m\nconfig: config.yaml\ninitial_nodes: [{group: workers, count: 1}]\n' >"$TMP/day/day.yaml"

t="each run's params are printed, the config's with the policy's default"
if run "$t" 0 "$BIN" simulate --scenario "$TMP/day/day.yaml" --policy "$TMP/day/noted.lua" \
     --policy policies/default.lua --report "$TMP/r2" &&
   has out "noted: $TMP/day/noted.lua, policy.params from $TMP/day/config.yaml" &&
   has out "  limit=3, note=</td><script>alert(1)</script>&'\" (default plain), unneeded_for=3m (default 10m)" &&
   has out "default: policies/default.lua, the policy's defaults" &&
   has out "scale_down_utilization=0.5, unneeded_for=10m"; then
  ok "$t"; else not_ok "$t"; fi

H="$TMP/r2/index.html"
t="the report shows the params, escaped"
if grep -qF '<tr data-param="note" data-value="&lt;/td&gt;&lt;script&gt;alert(1)&lt;/script&gt;&amp;&#39;&quot;" data-from="config">' "$H" &&
   grep -qF '<tr data-param="unneeded_for" data-value="3m" data-from="config"><th class="policy">unneeded_for</th><td class="policy set">3m</td><td class="policy">10m</td></tr>' "$H" &&
   grep -qF '<tr data-param="limit" data-value="3" data-from="default">' "$H" &&
   grep -qF "params set by <code>$TMP/day/config.yaml</code>" "$H" &&
   ! grep -q '<script' "$H"; then
  ok "$t"; else not_ok "$t"; fi

finish
