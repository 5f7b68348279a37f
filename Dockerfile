# The luascale image: built on Debian bookworm with the packages of
# scripts/setup.sh's build section, run as the non-root user 65532 with
# only the runtime libraries, the binary, lua/ and policies/.
#   docker build -t registry.example.com/luascale:0.1.0 .
#
# Both stages come from one base image, pinned by digest when
# BOOKWORM_SLIM_DIGEST is given. Take the digest of the image you have
# reviewed (the multi-platform index's, so each platform gets its own):
#   docker buildx imagetools inspect debian:bookworm-slim   # its "Digest:" line
# and build with
#   docker build --build-arg BOOKWORM_SLIM_DIGEST=sha256:<64 hex> -t ... .
# Left empty, the tag debian:bookworm-slim is used as it is that day.
ARG BOOKWORM_SLIM_DIGEST=

FROM debian:bookworm-slim${BOOKWORM_SLIM_DIGEST:+@${BOOKWORM_SLIM_DIGEST}} AS build
RUN apt-get update -q \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      build-essential cmake pkg-config \
      lua5.4 liblua5.4-dev \
      libcjson-dev libyaml-dev libcurl4-openssl-dev libmicrohttpd-dev \
      protobuf-c-compiler libprotobuf-c-dev \
      libexpat1-dev libssl-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# the Lua library and the policies are looked up where the runtime stage
# puts them
RUN cmake -S . -B /build -DCMAKE_BUILD_TYPE=Release \
      -DLUASCALE_LUA_DIR=/usr/share/luascale/lua \
      -DLUASCALE_SHARE_DIR=/usr/share/luascale -DLUASCALE_TESTS=OFF \
 && cmake --build /build -j "$(nproc)" --target luascale \
 && /build/luascale --version

FROM debian:bookworm-slim${BOOKWORM_SLIM_DIGEST:+@${BOOKWORM_SLIM_DIGEST}}
RUN apt-get update -q \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      ca-certificates liblua5.4-0 libcjson1 libyaml-0-2 libcurl4 \
      libmicrohttpd12 libprotobuf-c1 libexpat1 libssl3 tzdata \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /build/luascale /usr/local/bin/luascale
COPY lua/ /usr/share/luascale/lua/
COPY policies/ /usr/share/luascale/policies/
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/luascale"]
CMD ["run", "--config", "/etc/luascale/config.yaml"]
