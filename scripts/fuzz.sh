#!/usr/bin/env bash
# Runs every fuzz target (fuzz/fuzz_targets) for a bounded time: what the test command runs,
# and, with a longer time, a campaign.
#
#   scripts/fuzz.sh                 each target for FLOE_FUZZ_SECONDS (default 20) seconds,
#                                   FLOE_FUZZ_JOBS (default: the cores) at a time
#   FLOE_FUZZ_SECONDS=600 scripts/fuzz.sh
#   scripts/fuzz.sh --keep          also add the new inputs libFuzzer finds to fuzz/corpus
#   scripts/fuzz.sh --build         only install cargo-fuzz and build the targets
#
# libFuzzer through cargo-fuzz (installed if missing); on a stable toolchain RUSTC_BOOTSTRAP
# lets it use the unstable flags it needs. No sanitizer: floe forbids unsafe code, so
# libFuzzer's own checks (panics, aborts, timeouts, memory over -rss_limit_mb) are what
# matter, at full speed. A crash leaves its input in fuzz/artifacts/<target>/ and fails.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
export CARGO_TARGET_DIR=${FLOE_FUZZ_TARGET_DIR:-$HOME/.cache/floe-fuzz-target}
export RUSTC_BOOTSTRAP=1
seconds=${FLOE_FUZZ_SECONDS:-20}
mode=${1:-} # --keep, --build or nothing

if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install -q cargo-fuzz --version 0.13.2 --locked
fi
cargo fuzz build -s none >/dev/null 2>&1 || cargo fuzz build -s none
if [ "$mode" = "--build" ]; then exit 0; fi

# One target: its kept corpus, new inputs to a scratch directory first (the kept corpus is
# read, not written) unless --keep.
fuzz_one() {
  local target=$1 scratch log runs
  mkdir -p "corpus/$target"
  scratch=$(mktemp -d)
  local dirs=("$scratch" "corpus/$target")
  if [ "$mode" = "--keep" ]; then dirs=("corpus/$target"); fi
  log="$scratch.log"
  if ! cargo fuzz run -s none "$target" "${dirs[@]}" -- \
      -max_total_time="$seconds" -rss_limit_mb=4096 -max_len=65536 -print_final_stats=1 >"$log" 2>&1; then
    tail -40 "$log" >&2
    echo "fuzz: $target failed (input in fuzz/artifacts/$target/)" >&2
    return 1
  fi
  runs=$(grep -oE 'stat::number_of_executed_units: [0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
  echo "fuzz: $target: $runs runs in ${seconds}s, no crash"
  rm -rf "$scratch" "$log"
}
export -f fuzz_one
export seconds mode
# A fuzzer keeps one core busy: as many targets at once as there are cores
# (FLOE_FUZZ_JOBS). xargs fails when any target does.
cargo fuzz list | xargs -P "${FLOE_FUZZ_JOBS:-$(nproc)}" -I{} bash -c 'fuzz_one {}'
