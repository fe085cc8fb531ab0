#!/usr/bin/env bash
# The macro-benchmark protocol (docs/benchmarks.md, "Application-shaped
# stores"): bloomkv, LevelDB, RocksDB and LMDB (every engine kvbench was
# built with; BENCH_ARGS=--engines=... narrows it) in the same process run, on stores
# settled the way an application leaves them (memtable flushed, background
# compaction finished: level-0 files and several levels), 10 bits per key,
# 8 MiB block cache, one client thread. For each size:
#   main     BENCH_RUNS whole processes (fill is measured once per store per
#            process, so its median is over processes); every lookup phase
#            runs >= 1 s, 3 repetitions per process, engines taking turns;
#   compare  one process, filters on vs off per engine, 3 repetitions that
#            alternate the order of the on and off stores;
#   threads  one process, lookup phases with 1 and then 2 client threads;
#   threads-cached  the same with a block cache that holds the whole store
#            (256 MiB per million entries), so that hits are cached hits,
#            each lookup phase run once untimed first (--warmup) so that no
#            repetition measures the cold cache.
# Writes every JSON report, the printed tables and summary.txt (medians over
# processes, with the min-max over every repetition) to BENCH_OUT.
#
# Environment (defaults in brackets):
#   BENCH_SIZES   entry counts [1000000 10000000]
#   BENCH_RUNS    processes of the main protocol per size [3]
#   BENCH_MODES   which protocols [main compare threads threads-cached]
#   BENCH_OUT     output directory [bench-results/compare]
#   BENCH_BUILD   build directory (Release with -g, for perf) [build/bench]
#   BENCH_ARGS    extra kvbench flags, e.g. --max_open_files=64 or
#                 --settle=compact for the fully compacted shape []
# Wall time on the 2-core machine in docs/benchmarks.md: 22 minutes at 1M
# entries with other work keeping the load average at 9-15 (the cores to
# itself, a fraction of that); 10M takes roughly ten times as long as 1M.
set -euo pipefail
cd "$(dirname "$0")/.."

sizes=(${BENCH_SIZES:-1000000 10000000})
runs="${BENCH_RUNS:-3}"
modes=" ${BENCH_MODES:-main compare threads threads-cached} "
out="${BENCH_OUT:-bench-results/compare}"
build="${BENCH_BUILD:-build/bench}"
extra=(${BENCH_ARGS:-})

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS=-g \
  -DBLOOMKV_BUILD_TESTS=OFF -DBLOOMKV_BUILD_TOOLS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target kvbench >/dev/null
kvbench="$build/bench/kvbench"
mkdir -p "$out"

# Lookup phases draw this many probes and repeat them until 1 s has passed:
# a pass of hits takes about 1 s, so no phase runs much longer than that.
common=(--bits_per_key=10 --cache_mb=8 --min_seconds=1 --repeat=3
  --reads=200000 --benchmarks=fill,readhit,readmiss,mixed "${extra[@]}")

run() { # name, kvbench flags...
  local name="$1"
  shift
  echo "== $name: $kvbench $* (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  local start=$SECONDS
  "$kvbench" "$@" --json="$out/$name.json" >"$out/$name.txt" 2>"$out/$name.log"
  echo "   $((SECONDS - start)) s"
}

start_all=$SECONDS
for num in "${sizes[@]}"; do
  if [[ "$modes" == *" main "* ]]; then
    for ((i = 1; i <= runs; i++)); do
      run "main-$num-run$i" --num="$num" "${common[@]}"
    done
  fi
  if [[ "$modes" == *" compare "* ]]; then
    run "compare-$num" --num="$num" --compare "${common[@]}"
  fi
  if [[ "$modes" == *" threads "* ]]; then
    run "threads-$num" --num="$num" --threads=1,2 "${common[@]}"
  fi
  if [[ "$modes" == *" threads-cached "* ]]; then
    cached=("${common[@]/#--cache_mb=8/--cache_mb=$((num / 1000000 * 256))}")
    run "threads-cached-$num" --num="$num" --threads=1,2 --warmup "${cached[@]}"
  fi
done
echo "total $((SECONDS - start_all)) s"

if ! command -v jq >/dev/null; then
  echo "jq not found: no summary (the JSON reports are in $out)" >&2
  exit 0
fi
# One line per file group, engine, filter setting, phase and thread count:
# the median over the group's processes of each process's median, and the
# min-max over all their repetitions (for fill: over the processes).
summarize() { # group label, json files...
  local label="$1"
  shift
  jq -rs --arg group "$label" '
    def median: sort | .[(length - 1) / 2 | floor];
    def kib: if . == null then "-" else "\(. / 1024 | floor) KiB" end;
    [.[] | .runs[] as $r | $r.phases[] |
      {key: "\($r.engine) \(if $r.filters then "filters" else "nofilter" end) \(.name)/\(.threads)t",
       med: .ops_per_sec, reps: (.repetitions // [.ops_per_sec]),
       cpu: (if .cpu_seconds > 0 then .ops / .cpu_seconds else 0 end),
       shape: (($r.files_per_level | map(tostring) | join(",")) + " -> " +
               ($r.files_per_level_end // [] | map(tostring) | join(","))),
       fds: $r.open_fds, rss: $r.peak_rss,
       mem: $r.filter_summary.filter_bytes_per_million_links,
       memi: $r.filter_summary.filter_and_index_bytes_per_million_links}]
    | group_by(.key)[] |
    "\($group) \(.[0].key): median \(map(.med) | median | floor) ops/s, " +
    "min-max \(map(.reps[]) | min | floor)-\(map(.reps[]) | max | floor), " +
    "processes \(length); per CPU second \(map(.cpu) | median | floor); files/level (reads began -> end) \(map(.shape) | unique | join(" | ")); " +
    "fds \(map(.fds) | max); peak RSS \(map(.rss) | max / 1048576 | floor) MiB; " +
    "per 1M links: filters \(.[0].mem | kib), filters+index \(.[0].memi | kib)"' "$@"
}
# Per process, bloomkv's median over the best peer's median of the same
# phase: the engines took turns in that process, so the ratio holds up
# better than absolute figures when other load comes and goes. Median and
# min-max over the processes.
ratios() { # group label, json files...
  local label="$1"
  shift
  jq -rs --arg group "$label" '
    def median: sort | .[(length - 1) / 2 | floor];
    [.[] | [.runs[] as $r | $r.phases[] |
       {engine: $r.engine, key: "\(if $r.filters then "filters" else "nofilter" end) \(.name)/\(.threads)t",
        v: .ops_per_sec,
        cpu: (if .cpu_seconds > 0 then .ops / .cpu_seconds else 0 end)}]
     | group_by(.key)[]
     | {key: .[0].key, b: (map(select(.engine == "bloomkv").v) | first),
        peer: (map(select(.engine != "bloomkv")) | max_by(.v)),
        c: ((map(select(.engine == "bloomkv").cpu) | first) /
            ([1] + map(select(.engine != "bloomkv").cpu) | max))}
     | select(.b != null and .peer != null)
     | {key, peer: .peer.engine, r: (.b / .peer.v), c}]
    | group_by(.key)[] |
    "\($group) bloomkv / best peer, \(.[0].key): median \(map(.r) | median * 100 | round / 100)x " +
    "(min-max \(map(.r) | min * 100 | round / 100)-\(map(.r) | max * 100 | round / 100); " +
    "best peer: \(map(.peer) | unique | join(","))); per CPU second " +
    "\(map(.c) | median * 100 | round / 100)x of the best peer'"'"'s"' "$@"
}
{
  for num in "${sizes[@]}"; do
    shopt -s nullglob
    files=("$out"/main-"$num"-run*.json)
    if ((${#files[@]})); then
      summarize "main-$num" "${files[@]}"
      ratios "main-$num" "${files[@]}"
    fi
    for mode in compare threads threads-cached; do
      if [[ -f "$out/$mode-$num.json" ]]; then
        summarize "$mode-$num" "$out/$mode-$num.json"
      fi
    done
  done
} | tee "$out/summary.txt"
