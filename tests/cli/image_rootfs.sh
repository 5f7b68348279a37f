#!/usr/bin/env bash
# The Dockerfile's runtime stage, without a container runtime: mmdebstrap
# builds its root file system from Debian's archive with exactly the
# packages the stage installs (parsed from the Dockerfile, so the two
# cannot drift apart), the stage's COPY lines are carried out with the
# built binary, and the ENTRYPOINT runs in a chroot as the stage's USER:
# `--version`, then `check` on the deploy base's and each overlay's config
# mounted as their ConfigMap is (config.yaml beside default.lua), outside a
# pod and with a service account as a pod has one.
# The build directory's binary was configured for the source tree: the
# Lua library is pointed at where the stage copies it (LUASCALE_LUA_DIR).
# usage: image_rootfs.sh LUASCALE_BINARY SOURCE_DIR CACHE_DIR
# CACHE_DIR keeps the downloaded packages between runs. Needs root,
# mmdebstrap and the Debian archive (the machine's apt sources).
set -u
BIN=$1
SRC=$2
CACHE=$3
cd "$SRC" || exit 1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. tests/cli/lib.sh
need mmdebstrap chroot awk

if [ "$(id -u)" -ne 0 ]; then
  echo "not ok - the root file system is built and entered as root (mmdebstrap --mode=root, chroot)"
  exit 1
fi

# stage_packages FILE: the words of each `apt-get install` command of the
# stage in FILE up to its first `&&`, less the options, one a line.
stage_packages() {
  awk '
    /^RUN / { run = 1; cmd = "" }
    run { line = $0; sub(/\\$/, "", line); cmd = cmd " " line; if ($0 !~ /\\$/) { run = 0; print cmd } }
  ' "$1" | awk '{
    for (i = 1; i <= NF; i++) if ($i == "install") { on = 1; continue } else if (on && $i == "&&") { on = 0 } else if (on && $i !~ /^-/) print $i
  }'
}

# The build stage: what CMakeLists.txt requires (its pkg-config modules and
# programs) comes from these Debian packages on this machine, and the
# stage must install each.
awk '/^FROM /{n++} n == 1' Dockerfile >"$TMP/build-stage"
stage_packages "$TMP/build-stage" >"$TMP/build-pkgs"
t="the build stage installs every package CMakeLists.txt requires"
missing= n=0
for m in $(sed -n 's/^ *pkg_check_modules([A-Z_]* REQUIRED IMPORTED_TARGET \([^ )]*\).*/\1/p' CMakeLists.txt); do
  f=$(pkg-config --variable=pcfiledir "$m")/$m.pc
  owner=$(dpkg -S "$(readlink -f "$f")" 2>/dev/null | head -1 | cut -d: -f1)
  grep -qx "${owner:-?}" "$TMP/build-pkgs" || missing="$missing $m(${owner:-no package})"
  n=$((n + 1))
done
for prog in $(sed -n 's/^ *find_program([A-Z_]* NAMES \([^ )]*\) REQUIRED).*/\1/p' CMakeLists.txt); do
  owner=$(dpkg -S "$(readlink -f "$(command -v "$prog")")" 2>/dev/null | head -1 | cut -d: -f1)
  grep -qx "${owner:-?}" "$TMP/build-pkgs" || missing="$missing $prog(${owner:-no package})"
done
if [ "$n" -gt 0 ] && [ -z "$missing" ]; then ok "$t ($n pkg-config modules)"; else
  echo "# pkg-config modules found in CMakeLists.txt: $n; not installed by the build stage:$missing"; not_ok "$t"; fi

# The runtime stage: from the last FROM to the end.
awk '/^FROM /{buf=""} {buf = buf $0 "\n"} END {printf "%s", buf}' Dockerfile >"$TMP/stage"
PKGS=$(stage_packages "$TMP/stage" | paste -sd, -)
USERSPEC=$(awk '$1 == "USER" { print $2 }' "$TMP/stage" | tail -1)
ENTRY=$(sed -n 's/^ENTRYPOINT \["\([^"]*\)".*/\1/p' "$TMP/stage")

t="the runtime stage names its packages, user and entrypoint"
if [ -n "$PKGS" ] && [ -n "$USERSPEC" ] && [ -n "$ENTRY" ]; then ok "$t"; else
  echo "# packages \"$PKGS\", user \"$USERSPEC\", entrypoint \"$ENTRY\""; not_ok "$t"; exit 1; fi
echo "# runtime packages: $PKGS"

# The machine's apt sources (the archive the image's own apt-get reads).
SOURCES=
for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list; do
  [ -s "$f" ] && grep -q '^[^#]' "$f" && SOURCES="$SOURCES $f"
done
ROOT="$TMP/root"
mkdir -p "$CACHE"
t="mmdebstrap builds the runtime stage's root file system from Debian's archive"
start=$SECONDS
# shellcheck disable=SC2086
if timeout 240 mmdebstrap --mode=root --variant=apt --format=directory --include="$PKGS" \
    --skip=download/empty --skip=essential/unlink \
    --setup-hook='mkdir -p "$1"/var/cache/apt/archives/' \
    --setup-hook="sync-in $CACHE /var/cache/apt/archives/" \
    --customize-hook="sync-out /var/cache/apt/archives $CACHE" \
    bookworm "$ROOT" $SOURCES >"$TMP/out" 2>"$TMP/err"; then
  ok "$t ($((SECONDS - start)) s)"
else
  echo "# mmdebstrap failed or took over 240 s (is the archive reachable? sources:$SOURCES)"
  tail -n 20 "$TMP/err" | sed 's/^/#   /'
  fail=$((fail + 1)); echo "not ok - $t"; finish; exit 1
fi

# The stage's COPY lines: --from=build copies the build's binary, the
# others copy from the source tree.
while read -r -a w; do
  [ "${w[0]}" = COPY ] || continue
  if [ "${w[1]#--from=}" != "${w[1]}" ]; then from=$BIN; dest=${w[3]}; else from=${w[1]}; dest=${w[2]}; fi
  mkdir -p "$ROOT$(dirname "${dest%/}")"
  if [ -d "$from" ]; then cp -a "${from%/}/." "$ROOT${dest%/}/"; else cp "$from" "$ROOT$dest"; fi
  echo "# COPY $from -> $dest"
done <"$TMP/stage"

# A sanitizer build (CI's) needs the sanitizer runtimes, which are no part
# of the image: those alone are copied from this machine, named here.
for lib in $(ldd "$BIN" | awk '$1 ~ /^lib(asan|ubsan|lsan|tsan)\.so/ { print $3 }'); do
  cp "$lib" "$ROOT/usr/lib/x86_64-linux-gnu/" && echo "# sanitizer runtime $lib copied in (not part of the image)"
done

in_image() { # ENV... -- ARGS...: the entrypoint with ARGS, in the chroot, as USER
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  # its own mount and pid namespaces with /proc, as a container has them
  timeout 60 unshare --pid --fork --mount-proc="$ROOT/proc" \
    chroot --userspec="$USERSPEC" "$ROOT" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin \
    LUASCALE_LUA_DIR=/usr/share/luascale/lua "${envs[@]}" "$ENTRY" "$@"
}

t="luascale --version runs in the image with nothing else installed"
if run "$t" 0 in_image -- --version && has out "luascale "; then ok "$t"; else not_ok "$t"; fi

# The service account a pod has, for the in-pod checks, written from
# inside the root (its /var/run is a link to /run: followed from outside,
# it would lead to this machine's).
SA=/var/run/secrets/kubernetes.io/serviceaccount
chroot "$ROOT" /bin/sh -c "mkdir -p $SA && printf 'eyJhbGciOiJSUzI1NiJ9.e30.c2ln' >$SA/token &&
  printf kube-system >$SA/namespace && cp /etc/ssl/certs/ca-certificates.crt $SA/ca.crt &&
  chmod -R a+rX /var/run/secrets"

for d in deploy/base deploy/overlays/*; do
  name=${d#deploy/}
  rm -rf "$ROOT/etc/luascale"
  mkdir -p "$ROOT/etc/luascale"
  cp deploy/base/default.lua "$d/config.yaml" "$ROOT/etc/luascale/"
  chmod -R a+rX "$ROOT/etc/luascale"
  t="luascale check on the $name ConfigMap in the image"
  if run "$t" 0 in_image -- check --config /etc/luascale/config.yaml &&
     has out "policy /etc/luascale/default.lua: ok"; then ok "$t"; else not_ok "$t"; fi
  t="luascale check on the $name ConfigMap in the image, in a pod"
  if run "$t" 0 in_image KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT=443 -- \
       check --config /etc/luascale/config.yaml &&
     has out "service account" && has out "policy /etc/luascale/default.lua: ok"; then ok "$t"; else not_ok "$t"; fi
done
finish
