# daemonlib.sh: what the scripts that start `luascale run` and `luascale sim`
# share, on top of lib.sh. Source it after setting TMP; it sources lib.sh.
#   PIDS+=($!)          every process started, ended at exit
#   KILL_AT_EXIT=1      end them with SIGKILL instead of SIGTERM
#   KEEP_TMP=1          keep $TMP (the logs) after the run
#   LOG_TAIL=N          lines of each $TMP/*.log a failed check shows (15)
#   BUDGET=N            no wait runs past N seconds from the script's start
#   until_true SECONDS CMD...   polls CMD every 0.1 s until it holds or
#                       SECONDS (may be fractional, wall time) pass: 1 when
#                       it never did
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# every `luascale run` serves /metrics on a free loopback port, so tests
# running side by side never fight over the default :8080
export LUASCALE_SERVER_LISTEN=127.0.0.1:0

PIDS=()
daemon_cleanup() {
  local p sig=TERM
  [ -n "${KILL_AT_EXIT:-}" ] && sig=KILL
  for p in "${PIDS[@]}"; do kill -"$sig" "$p" 2>/dev/null; done
  # a process that ignores SIGTERM for 10 s is reported and killed, so the
  # script never hangs in its own cleanup
  local t
  for p in "${PIDS[@]}"; do
    for ((t = 0; t < 100; t++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$p" 2>/dev/null; then
      echo "# process $p still ran 10 s after SIG$sig: killed"
      kill -KILL "$p" 2>/dev/null
    fi
    wait "$p" 2>/dev/null
  done
  if [ -n "${KEEP_TMP:-}" ]; then echo "# logs kept in $TMP"; else rm -rf "$TMP"; fi
}
trap daemon_cleanup EXIT

not_ok() {
  local f
  fail=$((fail + 1)); echo "not ok - $1"
  for f in "$TMP"/*.log; do
    [ -f "$f" ] && sed "s|^|#   $(basename "$f"): |" "$f" | tail -"${LOG_TAIL:-15}"
  done
}

# until_true SECONDS CMD...: polls CMD every 0.1 s until it holds, or
# until SECONDS (may be fractional) of wall time have passed: 1 when it
# never held. The deadline is read from the clock, not counted in tries, so
# a slow CMD (kubectl on a loaded machine) cannot stretch a wait. No wait
# runs past the script's BUDGET (seconds from its start, set it below the
# test's CTest TIMEOUT): the script then fails with what it saw instead of
# being killed silently.
now_ms() { local t=${EPOCHREALTIME/./}; echo $((10#${t:0:-3})); }
DAEMONLIB_START_MS=$(now_ms)
until_true() {
  local now deadline budget_end
  now=$(now_ms)
  deadline=$((now + $(awk -v s="$1" 'BEGIN { printf "%d", s * 1000 }')))
  if [ -n "${BUDGET:-}" ]; then
    budget_end=$((DAEMONLIB_START_MS + BUDGET * 1000))
    [ "$budget_end" -lt "$deadline" ] && deadline=$budget_end
  fi
  shift
  until "$@"; do
    now=$(now_ms)
    if [ "$now" -ge "$deadline" ]; then
      [ -n "${budget_end:-}" ] && [ "$now" -ge "$budget_end" ] &&
        echo "# the script's budget of ${BUDGET} s ran out while waiting on: $*"
      return 1
    fi
    sleep 0.1
  done
}
