#!/usr/bin/env bash
# Builds librdkafka and its test runner from the sources vendored by the npm package
# @confluentinc/kafka-javascript, once (cached under ~/.cache), and prints the source
# directory: its src/ holds librdkafka.so and rdkafka.h, its tests/ the suite's test-runner.
# Used by scripts/librdkafka_suite.sh and scripts/produce_bench.py.
#
# The fixes in tests/librdkafka/patches/ are applied first, each a bug of the client itself
# that its header explains (none changes what the client sends); the cache is keyed by them.
#
# Needs: a C toolchain, make, pkg-config, libssl-dev zlib1g-dev libzstd-dev rapidjson-dev,
# npm (the README test command installs them).
set -euo pipefail
version=1.10.1 # @confluentinc/kafka-javascript 1.10.1 vendors librdkafka 2.15.1
patches=("$(cd "$(dirname "$0")/.." && pwd)"/tests/librdkafka/patches/*.patch)
cache=$HOME/.cache/floe-librdkafka/$version-$(cat "${patches[@]}" | sha256sum | cut -c1-12)
src=$cache/package/deps/librdkafka
if [ ! -x "$src/tests/test-runner" ]; then
  echo "building librdkafka and its test runner (once; cached in $cache)" >&2
  rm -rf "$cache" && mkdir -p "$cache"
  (cd "$cache" && npm pack -s "@confluentinc/kafka-javascript@$version" >/dev/null \
    && tar xzf "confluentinc-kafka-javascript-$version.tgz")
  for patch in "${patches[@]}"; do patch -s -d "$src" -p1 <"$patch"; done
  # No downloads, no Kerberos (Cyrus SASL), no libcurl (only OIDC's test uses it), the
  # bundled lz4; PLAIN, SCRAM and OAUTHBEARER are built in regardless.
  (cd "$src" && ./configure --no-download --disable-gssapi --disable-curl --disable-lz4-ext \
    --disable-debug-symbols >"$cache/configure.log" 2>&1 \
    && make -j"$(nproc)" libs >"$cache/build.log" 2>&1 \
    && make -j"$(nproc)" -C tests test-runner >>"$cache/build.log" 2>&1) \
    || { tail -30 "$cache/build.log" "$cache/configure.log" >&2; exit 1; }
fi
echo "$src"
