#!/usr/bin/env bash
# Builds the benchmarks in release mode and runs them pinned to one CPU, with the malloc interposer preloaded so
# that allocations are counted.
# Usage: Benchmarks/run.sh [--rounds N] [--only write|observe|yield|cycles|backtoback|policies|memory|cache|isolated|storage]
# BENCH_SCRATCH_PATH=DIR builds in DIR (e.g. .build-bench, beside another build of the package); default: .build.
set -euo pipefail
cd "$(dirname "$0")"
scratch=()
[ -n "${BENCH_SCRATCH_PATH:-}" ] && scratch=(--scratch-path "$BENCH_SCRATCH_PATH")
swift build -c release "${scratch[@]}" --product ProcessedBenchmarks
bin="$(swift build -c release "${scratch[@]}" --show-bin-path)"
interposer="$(find "$bin" -maxdepth 1 -name 'libMallocInterposerSwift.so' -o -maxdepth 1 -name 'libMallocInterposerSwift.dylib' | head -n 1)"
pin=()
command -v taskset >/dev/null 2>&1 && pin=(taskset -c 0)
if [ -n "$interposer" ] && [ "$(uname)" = "Linux" ]; then
  LD_PRELOAD="$interposer" "${pin[@]}" "$bin/ProcessedBenchmarks" "$@"
elif [ -n "$interposer" ]; then
  DYLD_INSERT_LIBRARIES="$interposer" "$bin/ProcessedBenchmarks" "$@"
else
  "${pin[@]}" "$bin/ProcessedBenchmarks" "$@"
fi
