#!/usr/bin/env bash
# The demo: installs what is missing (LevelDB and RocksDB too, unless
# BLOOMKV_WITH_PEERS=0), builds bloomkv in Release mode and runs the macro
# benchmark on a fresh directory: 1,000,000 short-code -> URL entries, then
# lookups of real codes, of never-issued codes, and short-link traffic with
# 50% never-issued codes (a cache-penetration flood) and Zipf popularity,
# each with filters on and off on identical data, against bloomkv, LevelDB
# and RocksDB at 10 bits per key, on stores left as background compaction
# leaves them. Every lookup phase runs at least 1 s, 3 times per store (the
# stores taking turns); the median is shown. Prints the comparison and writes
# the JSON and charts to bench-results/. About 3 minutes on 2 cores, plus the
# build. The full protocol (3 processes, 1M and 10M entries, threads) is
# scripts/bench-compare.sh.
# The micro-benchmarks are built and run separately (README, "Benchmarks").
set -euo pipefail
cd "$(dirname "$0")/.."
BLOOMKV_WITH_PEERS="${BLOOMKV_WITH_PEERS:-1}" BLOOMKV_WITH_PLOTS=1 scripts/install-deps.sh

# The tree the test command builds: after it, kvbench is already up to date.
build_dir=$(scripts/configure-release.sh)
cmake --build "$build_dir" -j"$(nproc)" --target kvbench

out=bench-results
mkdir -p "$out"
"$build_dir"/bench/kvbench --compare --num=1000000 --reads=200000 \
  --min_seconds=1 --repeat=3 \
  --benchmarks=fill,readhit,readmiss,mixed --miss_ratio=0.5 --zipf=0.99 \
  --bits_per_key=10 --fp_sweep=1,2,4,6,8,10,12,16 \
  --json="$out/kvbench.json" --plot_dir="$out" | tee "$out/kvbench.txt"
bench/plot.sh "$out"
echo "results: $out/kvbench.txt, $out/kvbench.json, charts: $out/*.png"
