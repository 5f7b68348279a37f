# lib.sh: what the command-line test scripts share. Its functions use TMP
# (a scratch directory), to be set before they run; each check then reads
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

# need CMD...: the script fails (not skips) when one of the tools is missing
need() {
  local c
  for c in "$@"; do
    command -v "$c" >/dev/null 2>&1 && continue
    echo "not ok - $c is not installed (scripts/setup.sh installs it)"
    exit 1
  done
}

# sim_up [ARGS...]: `$BIN sim` serving $TMP/scenario.yaml on a free
# port, its kubeconfig in $TMP/kubeconfig, its output in $TMP/sim.out and
# $TMP/sim.err, its PID in SIM_PID. Returns once it answers /version (1,
# with its output shown, when it does not within 30 s).
sim_up() {
  "$BIN" sim --listen 127.0.0.1:0 --scenario "$TMP/scenario.yaml" --kubeconfig-out "$TMP/kubeconfig" \
    "$@" >"$TMP/sim.out" 2>"$TMP/sim.err" &
  SIM_PID=$!
  until_true 30 sim_answers && return 0
  sim_output
  return 1
}
sim_answers() { k get --raw /version >/dev/null 2>&1; }
sim_output() { sed 's/^/#   sim: /' "$TMP/sim.out" "$TMP/sim.err"; }

# sim_down: SIGTERM to the simulator sim_up started, and waits for it
sim_down() {
  [ -n "${SIM_PID:-}" ] && kill -TERM "$SIM_PID" 2>/dev/null && wait "$SIM_PID" 2>/dev/null
  SIM_PID=
}
