# daemonlib.sh: what the scripts that start `luascale run` and `luascale sim`
# share, on top of lib.sh. Source it after setting TMP; it sources lib.sh.
#   PIDS+=($!)          every process started, ended at exit
#   KILL_AT_EXIT=1      end them with SIGKILL instead of SIGTERM
#   KEEP_TMP=1          keep $TMP (the logs) after the run
#   LOG_TAIL=N          lines of each $TMP/*.log a failed check shows (15)
#   until_true SECONDS CMD...   polls CMD every 0.1 s until it holds or
#                       SECONDS (may be fractional) pass: 1 when it never did
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
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
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

# until_true SECONDS CMD...: lib.sh's, for fractional SECONDS too: counts
# SECONDS × 10 tries 0.1 s apart
until_true() {
  local ticks
  ticks=$(awk -v s="$1" 'BEGIN { printf "%d", s * 10 }')
  shift
  until "$@"; do
    [ "$ticks" -le 0 ] && return 1
    ticks=$((ticks - 1))
    sleep 0.1
  done
}
