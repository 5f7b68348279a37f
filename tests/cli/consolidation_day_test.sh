#!/usr/bin/env bash
# examples/scenarios/consolidation-day.yaml with binpack.lua, consolidation
# on (its default) and off (a copy of binpack.lua whose `consolidation`
# param defaults to false): with it on the day costs at least 20 % less,
# no protected pod is disrupted and no safety invariant breaks (simulate
# exits 0: no group above its max or below its min, no round over
# max_scale_down_per_round). Every figure is read from simulate's table,
# by its column's name.
# usage: consolidation_day_test.sh LUASCALE_BINARY SOURCE_DIR
set -u
BIN=$1
SRC=$2
cd "$SRC" || exit 1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

fail() { echo "FAIL: $*"; [ -s "$TMP/out" ] && sed 's/^/  | /' "$TMP/out"; exit 1; }

OFF="$TMP/binpack-no-consolidation.lua"
sed 's/^  consolidation = true, /  consolidation = false,/' policies/binpack.lua > "$OFF"
[ "$(grep -c '^  consolidation = false,' "$OFF")" -eq 1 ] ||
  fail "policies/binpack.lua has no line '  consolidation = true, ' to turn consolidation off with"

"$BIN" simulate --scenario examples/scenarios/consolidation-day.yaml \
  --policy policies/binpack.lua --policy "$OFF" > "$TMP/out" 2> "$TMP/err"
rc=$?
[ $rc -eq 0 ] || { cat "$TMP/err"; fail "simulate exited $rc (4: a run broke a safety invariant)"; }

# column NAME of the row of POLICY, by the header's column names
col() {
  awk -v pol="$1" -v name="$2" '
    $1 == "policy" && !h { for (i = 1; i <= NF; i++) if ($i == name) c = i; h = 1; next }
    h && c && $1 == pol { print $c; exit }
    /^$/ && h { exit }' "$TMP/out"
}
# "wait p50" and friends are two words: the header has more fields than
# the rows; count the columns from the right instead
rcol() {
  awk -v pol="$1" -v name="$2" '
    $1 == "policy" && !h { for (i = 1; i <= NF; i++) if ($i == name) c = NF - i; h = 1; next }
    h && c != "" && $1 == pol { print $(NF - c); exit }' "$TMP/out"
}

on_cost=$(col binpack cost)
off_cost=$(col binpack-no-consolidation cost)
on_prot=$(rcol binpack protected)
off_prot=$(rcol binpack-no-consolidation protected)
[ -n "$on_cost" ] && [ -n "$off_cost" ] && [ -n "$on_prot" ] && [ -n "$off_prot" ] ||
  fail "could not read cost and protected from the table"
grep -q "invariant violation" "$TMP/out" && fail "a run reports invariant violations"
grep -q "^binpack: policies/binpack.lua" "$TMP/out" && grep -q "consolidation=true" "$TMP/out" &&
  grep -q "consolidation=false" "$TMP/out" || fail "the params do not show consolidation on and off"

saving=$(awk -v a="$on_cost" -v b="$off_cost" 'BEGIN { printf "%.1f", (b - a) / b * 100 }')
echo "consolidation-day: binpack with consolidation $on_cost, without $off_cost: ${saving}% less;" \
     "protected pods disrupted: $on_prot and $off_prot"
awk -v s="$saving" 'BEGIN { exit !(s >= 20) }' || fail "consolidation saves ${saving}%, not 20% or more"
[ "$on_prot" -eq 0 ] && [ "$off_prot" -eq 0 ] || fail "protected pods were disrupted"
echo "ok"
