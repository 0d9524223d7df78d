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
#                                                    secured, ordered, table) against a
#                                                    running floe
#
# A scenario prints PASS/FAIL lines and exits non-zero when any check failed.
# FLOE_JAVA_CHECK=<text> runs only the checks whose names contain <text>.
# tests/java_client.rs runs each scenario against a floe of its own.
set -euo pipefail
cd "$(dirname "$0")/.."

cache=$HOME/.cache/floe-java
jars=$cache/kafka-clients-3.9.1
classes=$cache/classes
wanted=(kafka-clients slf4j-api lz4-java snappy-java zstd-jni)

# Installing and compiling happen under a lock: the integration tests run scenarios at once.
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9

# The jars: one pip download of the wheel (about 90 MB), then only the five jars are kept.
if ! ls "$jars"/kafka-clients*.jar >/dev/null 2>&1; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  python3 -m pip download -q --disable-pip-version-check --no-deps -d "$tmp" \
    'shigawire-apache-flink-libraries==2.0.0.post1'
  rm -rf "$jars.partial"
  mkdir -p "$jars.partial"
  # Names may carry a version (kafka-clients-3.9.1.jar): matched by prefix.
  python3 - "$tmp" "$jars.partial" "${wanted[@]}" <<'PY'
import glob, os, sys, zipfile
tmp, out, wanted = sys.argv[1], sys.argv[2], sys.argv[3:]
with zipfile.ZipFile(glob.glob(os.path.join(tmp, "*.whl"))[0]) as wheel:
    for name in wheel.namelist():
        base = os.path.basename(name)
        if name.startswith("pyflink/lib/") and base.endswith(".jar") and any(base.startswith(w) for w in wanted):
            with open(os.path.join(out, base), "wb") as jar:
                jar.write(wheel.read(name))
PY
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
# Released before a scenario runs, so that scenarios run side by side.
flock -u 9
exec 9>&-

case "${1:-}" in
  run)
    shift
    exec java -cp "$classpath" Main "$@"
    ;;
esac
