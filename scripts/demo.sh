#!/usr/bin/env bash
# The demo: installs missing packages, builds bloomkv in Release mode and runs
# the micro-benchmarks (filter build and probe, block seek, segment lookups).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

build_dir=build/release
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DBLOOMKV_BUILD_TESTS=OFF >/dev/null
cmake --build "$build_dir" -j"$(nproc)"
for bench in "$build_dir"/bench/*_bench; do
  echo "== $(basename "$bench")"
  "$bench" --benchmark_min_time=0.2
done
