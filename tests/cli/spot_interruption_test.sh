#!/usr/bin/env bash
# examples/scenarios/spot-interruption.yaml: two of ten spot nodes get a
# spot interruption notice with two minutes of warning. default.lua moves
# their pods before the nodes go (evicted, recreated by their ReplicaSet)
# and no pod dies with its node; batch.lua, which does not answer
# interruptions, loses them with the machines. The figures come from the
# table's interruptions line and its killed column, and the HTML report's
# columns.
# usage: spot_interruption_test.sh LUASCALE_BINARY SOURCE_DIR
set -u
BIN=$1
SRC=$2
cd "$SRC" || exit 1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. tests/cli/lib.sh

SC=examples/scenarios/spot-interruption.yaml
# "<policy>: interruptions: N node(s) reclaimed after a notice; M pod(s) moved off them before they went, K died with them"
figures() {
  sed -n "s|^policies/$1: interruptions: \([0-9]*\) node(s) reclaimed after a notice; \([0-9]*\) pod(s) moved off them before they went, \([0-9]*\) died with them$|\1 \2 \3|p" "$TMP/out"
}
# the killed column: the fourth from the end (killed, lost, protected, rejected)
killed() { awk -v p="$1" '$1 == "policy" && $(NF - 3) != "killed" { print "bad header" } $1 == p { print $(NF - 3) }' "$TMP/out"; }

t="default.lua moves the interrupted nodes' pods before the nodes go; none dies with its node"
if run "$t" 0 "$BIN" simulate --scenario $SC --policy policies/default.lua --policy policies/batch.lua \
     --report "$TMP/r"; then
  read -r nodes moved died <<<"$(figures default.lua)"
  killed=$(killed default)
  if [ "${nodes:-}" = 2 ] && [ "${moved:-0}" -gt 0 ] && [ "${died:-}" = 0 ] && [ "$killed" = 0 ]; then
    ok "$t"; else echo "# nodes ${nodes:-?} moved ${moved:-?} died ${died:-?} killed ${killed:-?}"; not_ok "$t"; fi

  t="a policy that ignores interruptions loses the pods with the machines"
  read -r bnodes bmoved bdied <<<"$(figures batch.lua)"
  if [ "${bnodes:-}" = 2 ] && [ "${bmoved:-}" = 0 ] && [ "${bdied:-0}" = "$moved" ] && [ "$(killed batch)" = "$moved" ]; then
    ok "$t"; else echo "# batch: nodes ${bnodes:-?} moved ${bmoved:-?} died ${bdied:-?}"; not_ok "$t"; fi

  t="the report has the interrupted, moved and died-with-node columns"
  if grep -q '>interrupted<\|>interrupted </\|interrupted</th>' "$TMP/r/index.html" &&
     grep -q 'died with node' "$TMP/r/index.html"; then
    ok "$t"; else not_ok "$t"; fi
else not_ok "$t"; fi

finish
