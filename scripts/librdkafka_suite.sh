#!/usr/bin/env bash
# librdkafka's own integration suite (its tests/ directory) against a real floe process: an
# external judge of floe's Kafka compatibility. Builds the suite's test runner from the
# librdkafka sources vendored by the npm package @confluentinc/kafka-javascript (cached under
# ~/.cache by scripts/librdkafka_build.sh), starts `floe serve --default-partitions 4` (the suite's default scenario; a
# second one without auto-creation for its noautocreate scenario), and runs every test of
# tests/librdkafka/allowlist.txt in its own process. Each test not in the
# allowlist is listed with its reason in tests/librdkafka/excluded.txt.
#
#   scripts/librdkafka_suite.sh                 the allowlist
#   scripts/librdkafka_suite.sh 0001 0017 ...   only these tests (exploring)
#
# An entry is a test number, or `NNNN:Name` to run only that test's subtests whose names
# contain `Name` (the runner's SUBTESTS), for a test some of whose subtests need what floe
# does not build yet; `NNNN@noautocreate` runs the test's variants of the suite's
# noautocreate scenario, against a second floe that does not create topics on first use.
#
# Needs: build-essential pkg-config libssl-dev zlib1g-dev libzstd-dev rapidjson-dev, npm
# (the README test command installs them). FLOE_RDK_PARALLEL tests run at once (default 2);
# FLOE_RDK_SERVE_ARGS adds flags to both `floe serve`s (e.g. "--broker-ids-per-agent 4").
# FLOE_RDK_TEST_TIMEOUT ends a test's process after that many seconds (default 600; 0113's
# subtests take about 610 together, most of it waits of their own, so it runs by subtest).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/floe-target}
src=$(scripts/librdkafka_build.sh)

if [ $# -gt 0 ]; then
  tests=("$@")
else
  mapfile -t tests < <(grep -Eo '^[0-9]{4}(:[A-Za-z_:]+|@noautocreate)?' tests/librdkafka/allowlist.txt)
fi

# FLOE_BIN runs that floe binary instead of building one (a loop of runs beside other builds).
floe=${FLOE_BIN:-$CARGO_TARGET_DIR/release/floe}
[ -n "${FLOE_BIN:-}" ] || cargo build -q --release --bin floe # a no-op when the test command built it already
work=$(mktemp -d)
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# The suite's default scenario (auto-creation, 4 partitions), and its noautocreate one.
pids=()
start_floe() { # name, extra flags...
  local name=$1 port
  shift
  port=$(free_port)
  # Jobs look at their partitions every 2 s (10 s by default): 0077 waits a fixed 20 s for
  # compaction after its last produce, and a cleaning pass comes at the next round.
  # Retention never runs during the suite: 0052 stamps its CreateTime records in January 1970
  # (it adds 24 hours in milliseconds to a time in seconds), older than any retention.ms, so a
  # retention pass (every 5 minutes, as Kafka checks) between its produce and its consume
  # takes them; Kafka would too.
  "$floe" serve --data-dir "$work/$name-data" --kafka-addr "127.0.0.1:$port" --admin-addr off \
    --default-partitions 4 --compaction-interval 2s --collection-interval 24h \
    ${FLOE_RDK_SERVE_ARGS:-} "$@" >"$work/$name.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.1
  done
  printf 'bootstrap.servers=127.0.0.1:%s\ntest.timeout.multiplier=2\n' "$port" >"$work/$name.conf"
  # Where Kafka's tools (kafka-topics.sh) are pointed, for the tests that shell out to them.
  echo "127.0.0.1:$port" >"$work/$name.brokers"
}
stop() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap stop EXIT
# The default scenario enforces ACLs, with Kafka's allow.everyone.if.no.acl.found: a resource
# without ACLs is open, as the suite expects, and the ACL tests' deny ACLs bite.
start_floe default --authorizer acl --allow-everyone-if-no-acl-found true
start_floe noautocreate --auto-create-topics false
# The share consumer's tests (0170-0185) run as librdkafka's CI runs them: against three
# brokers (here one agent shown as three, each partition led by one of them, so the client
# reads one broker's partitions at a time), share locks allowed down to 1 s (its tests set
# a group's to 3 s).
start_floe share --broker-ids-per-agent 3 --group-share-min-record-lock-duration 1s

# Kafka's command-line tools some tests shell out to ($KAFKA_PATH/bin): a stand-in over Apache
# Kafka's Java client (scripts/java_client.sh installs it and compiles tests/java/).
# kafka-run-class.sh runs librdkafka's own Java programs (its tests/java/: a transactional
# producer), compiled by its Makefile against libs/kafka-clients-*.jar; kafka-acls.sh and
# kafka-topics.sh are tests/java/KafkaAcls.java and KafkaTopics.java: Kafka's AclCommand and
# TopicCommand for the flags the suite passes, over the same Admin calls (any other flag fails
# the test).
scripts/java_client.sh
java_jars=$HOME/.cache/floe-java/kafka-clients-3.9.1
java_classes=$HOME/.cache/floe-java/classes
export KAFKA_PATH=$work/kafka
mkdir -p "$KAFKA_PATH/bin" "$KAFKA_PATH/libs"
for jar in "$java_jars"/*.jar; do ln -s "$jar" "$KAFKA_PATH/libs/"; done
# The client with its version in the name, as a Kafka release's libs/ has it.
mv "$KAFKA_PATH/libs/kafka-clients.jar" "$KAFKA_PATH/libs/kafka-clients-3.9.1.jar"
cat >"$KAFKA_PATH/bin/kafka-run-class.sh" <<EOF_RUN
#!/usr/bin/env bash
exec java -cp "\${CLASSPATH:+\$CLASSPATH:}$KAFKA_PATH/libs/*" "\$@"
EOF_RUN
cat >"$KAFKA_PATH/bin/kafka-acls.sh" <<EOF_ACLS
#!/usr/bin/env bash
exec java -cp "$java_classes:$KAFKA_PATH/libs/*" KafkaAcls "\$@"
EOF_ACLS
cat >"$KAFKA_PATH/bin/kafka-topics.sh" <<EOF_TOPICS
#!/usr/bin/env bash
exec java -cp "$java_classes:$KAFKA_PATH/libs/*" KafkaTopics "\$@"
EOF_TOPICS
chmod +x "$KAFKA_PATH/bin/"*.sh

# One process per test.
run_one() {
  local n=$1 number=${1%%[:@]*} subtests= scenario=default floe=default
  [[ $1 == *:* ]] && subtests=${1#*:}
  [[ $1 == *@* ]] && scenario=${1#*@} floe=${1#*@}
  # The broker version the suite gates tests on: Kafka 4.0's protocol, and 4.2 for the share
  # consumer's tests (share groups, KIP-932), which floe serves at Kafka 4.1's versions.
  local version=4.0.0
  ((10#$number >= 170 && 10#$number <= 185)) && version=4.2.0 floe=share
  # 0174 declares 1500 s for itself (test_timeout_set): its twenty concurrency subtests take
  # about 400 s alone, more beside other tests.
  local cap=${FLOE_RDK_TEST_TIMEOUT:-600}
  [[ $number == 0174 ]] && cap=${FLOE_RDK_TEST_TIMEOUT:-1500}
  if (cd "$src/tests" && env -u CI LD_LIBRARY_PATH=../src:../src-cpp \
    RDKAFKA_TEST_CONF="$work/$floe.conf" BROKERS="$(cat "$work/$floe.brokers")" \
    TESTS="$number" SUBTESTS="$subtests" \
    TEST_SCENARIO="$scenario" TEST_KAFKA_VERSION="$version" \
    timeout "$cap" stdbuf -oL ./test-runner -L -p1 >"$work/$n.log" 2>&1); then
    # A test the runner skipped (its broker version gate, a missing feature) says so.
    if ! grep -q 'PASSED' "$work/$n.log"; then
      echo "PASS $n (nothing ran: $(grep -m1 -o 'SKIPPED.*' "$work/$n.log"))"
    else
      echo "PASS $n"
    fi
  else
    echo "FAIL $n (exit $?)"
    grep -E '^### Test|FAILED|failed at' "$work/$n.log" | head -5 | sed 's/^/    /'
    # Where it stood (the subtest and its last steps), in the output a CI run keeps: a
    # test that ran out of time names no failing check.
    grep -E '\[ [a-z_0-9]+:[0-9]+' "$work/$n.log" | tail -3 | sed 's/^/    | /'
    tail -n 25 "$work/$n.log" | sed 's/^/    | /'
    cp "$work/$n.log" "${FLOE_RDK_LOGS:-/tmp}/librdkafka-$n.log" 2>/dev/null || true
    # floe's log up to now, for the server's side of the failure (FLOE_LOG sets its detail).
    cp "$work/$floe.log" "${FLOE_RDK_LOGS:-/tmp}/librdkafka-$n-floe.log" 2>/dev/null || true
  fi
}
export -f run_one
export src work
printf '%s\n' "${tests[@]}" | xargs -P "${FLOE_RDK_PARALLEL:-2}" -I{} bash -c 'run_one {}' \
  | tee "$work/results"
results=$(cat "$work/results")
passed=$(grep -c '^PASS' <<<"$results" || true)
failed=$(grep -c '^FAIL' <<<"$results" || true)
excluded=$(grep -cE '^[0-9]{4}' tests/librdkafka/excluded.txt || true)
echo "librdkafka suite: ${#tests[@]} run, $passed passed, $failed failed; $excluded excluded (tests/librdkafka/excluded.txt)"
[ "$failed" -eq 0 ]
