#!/usr/bin/env bash
# Sets up luascale on a Debian 12 machine: installs the Debian packages it
# needs (when missing; needs root), configures and builds into ./build.
#
#   scripts/setup.sh                    # release build with debug info
#   LUASCALE_SANITIZE=ON scripts/setup.sh   # AddressSanitizer + UBSan
#   LUASCALE_TSAN=ON BUILD_DIR=build-tsan scripts/setup.sh   # ThreadSanitizer
#   BUILD_DIR=out scripts/setup.sh      # another build directory
set -euo pipefail

cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential cmake pkg-config   # toolchain
  lua5.4 liblua5.4-dev               # the policy language
  libcjson-dev                       # JSON in C (Kubernetes objects)
  libyaml-dev                        # config and kubeconfig
  libcurl4-openssl-dev               # HTTP to the API server and clouds
  libmicrohttpd-dev                  # the simulated API server (luascale sim), /metrics of luascale run
  protobuf-c-compiler libprotobuf-c-dev  # protobuf bodies of the simulated API server (protoc-c at build time)
  libexpat1-dev                      # XML of the AWS APIs
  libssl-dev                         # libcrypto: SHA-256 and HMAC for AWS SigV4
  lua-cjson lua-busted               # policy specs
  libcmocka-dev                      # C unit tests
  tzdata                             # named time zones (ls.local_time) and their tests
  curl                               # the daemon's end-to-end tests read the simulated API
  awscli python3-boto3               # AWS's own clients check the simulator's AWS face
  python3-botocore                   # the SigV4 test's independent signer (under /usr/bin/python3)
  python3-google-auth python3-cryptography python3-requests  # Google's auth library: verifies our JWTs, talks to the simulator's GCE face
  python3-azure                      # azure-mgmt-compute and azure-identity check the simulator's Azure face
  prometheus                         # promtool checks /metrics; a real Prometheus scrapes luascale run
  python3-kubernetes                 # the official Python client drives luascale sim (typed models, watches)
  python3-yaml                       # the deploy test parses the rendered manifests (under /usr/bin/python3)
  mmdebstrap                         # the image test builds the Dockerfile's runtime stage from Debian's archive
)

# kubectl, to test luascale sim with the real client: Debian's
# kubernetes-client unless a kubectl is already installed
command -v kubectl >/dev/null 2>&1 || PACKAGES+=(kubernetes-client)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    SUDO=sudo
  else
    SUDO=
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

BUILD_DIR=${BUILD_DIR:-build}
SANITIZE=${LUASCALE_SANITIZE:-OFF}
TSAN=${LUASCALE_TSAN:-OFF}
cmake -S . -B "$BUILD_DIR" -DLUASCALE_SANITIZE="$SANITIZE" -DLUASCALE_TSAN="$TSAN" >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)"
echo "setup: built $BUILD_DIR/luascale (address/undefined sanitizers: $SANITIZE, thread sanitizer: $TSAN)"
