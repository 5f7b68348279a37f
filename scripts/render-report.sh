#!/usr/bin/env bash
# render-report.sh: renders a simulation report (the index.html that
# `luascale simulate --report DIR` or `luascale demo` writes) to a PNG in
# headless Chromium, e.g. for docs/demo-report.png:
#
#   apt-get install -y chromium          # Debian's package; once
#   ./build/luascale demo --report /tmp/demo
#   ./scripts/render-report.sh /tmp/demo/index.html docs/demo-report.png
#
# usage: render-report.sh REPORT.html OUT.png [WIDTHxHEIGHT]   (default 1400x2200)
#
# Chromium runs without network access of any kind (the report fetches
# nothing; these flags make sure Chromium itself does not either), without
# a GPU, and with a throwaway profile that is removed afterwards.
set -euo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "usage: $0 REPORT.html OUT.png [WIDTHxHEIGHT]" >&2
  exit 1
fi
in=$1
out=$2
size=${3:-1400x2200}
if [ ! -r "$in" ]; then
  echo "$0: cannot read $in" >&2
  exit 2
fi
case "$size" in
  [0-9]*x[0-9]*) ;;
  *) echo "$0: size must look like 1400x2200, not $size" >&2; exit 1 ;;
esac
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "$0: chromium is not installed (apt-get install -y chromium)" >&2
  exit 2
fi

abs_in=$(cd "$(dirname "$in")" && pwd)/$(basename "$in")
case "$out" in /*) abs_out=$out ;; *) abs_out=$(pwd)/$out ;; esac
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT

"$browser" --headless --no-sandbox --disable-gpu --disable-software-rasterizer \
  --disable-background-networking --disable-component-update --disable-default-apps \
  --disable-extensions --disable-sync --disable-translate --no-first-run \
  --no-default-browser-check --metrics-recording-only --mute-audio --hide-scrollbars \
  --user-data-dir="$profile" --window-size="${size/x/,}" \
  --screenshot="$abs_out" "file://$abs_in" >"$profile/chromium.log" 2>&1 || {
  echo "$0: chromium failed:" >&2
  tail -20 "$profile/chromium.log" >&2
  exit 3
}
if [ ! -s "$abs_out" ]; then
  echo "$0: chromium wrote no screenshot to $abs_out" >&2
  tail -20 "$profile/chromium.log" >&2
  exit 3
fi
echo "wrote $abs_out"
