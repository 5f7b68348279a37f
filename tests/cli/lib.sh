# lib.sh: what the command-line test scripts share. Source it after
# setting TMP (a scratch directory); each check then reads
#   t="what it shows"
#   if run "$t" STATUS CMD... && has out "text"; then ok "$t"; else not_ok "$t"; fi
# and the script ends with `finish`.
pass=0
fail=0

ok() { pass=$((pass + 1)); echo "ok - $1"; }
not_ok() { fail=$((fail + 1)); echo "not ok - $1"; sed 's/^/#   /' "$TMP/out" "$TMP/err" | head -20; }

# run NAME EXPECTED_STATUS CMD... : runs, captures stdout/stderr in
# $TMP/out and $TMP/err, checks the exit status
run() {
  local name=$1 want=$2
  shift 2
  "$@" >"$TMP/out" 2>"$TMP/err"
  local got=$?
  if [ "$got" -eq "$want" ]; then return 0; fi
  echo "# $name: exit status $got, expected $want"
  return 1
}

# has out|err TEXT: the captured output contains TEXT
has() { grep -qF -- "$2" "$TMP/$1"; }

# prints the tally; the script's exit status is 0 when nothing failed
finish() {
  echo "$pass passed, $fail failed"
  [ "$fail" -eq 0 ]
}

# until_true SECONDS CMD...: runs CMD every 0.1 s until it succeeds (0) or
# SECONDS (whole seconds, wall time) have passed (1)
until_true() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    [ "$SECONDS" -ge "$deadline" ] && return 1
    sleep 0.1
  done
}

# k ARGS...: kubectl against the kubeconfig a test's `luascale sim` wrote to
# $TMP/kubeconfig
k() { kubectl --kubeconfig "$TMP/kubeconfig" --cache-dir "$TMP/cache" --request-timeout=20s "$@"; }
