#!/usr/bin/env bash
# Longer fuzzing run: builds the libFuzzer targets of fuzz/ with clang,
# AddressSanitizer and UndefinedBehaviorSanitizer in build/fuzz, then runs
# each target for [seconds] (default 60), one after the other, on a scratch
# copy of its committed corpus (fuzz/corpus/<target>/ is never changed).
#
#   scripts/fuzz.sh [seconds]
#   BLOOMKV_FUZZ_TARGETS="block log_reader" scripts/fuzz.sh 300
#
# Prints per target the executions, the coverage reached (libFuzzer's cov:)
# and the crashes. A crash stops that target; its input is kept in
# build/fuzz/runs/<target>/findings/. To turn it into a regression test,
# copy it into fuzz/corpus/<target>/ (the normal test suite replays every
# file there), then fix the decoder. Exits 1 if any target crashed.
# Needs clang and libFuzzer: BLOOMKV_WITH_FUZZ=1 scripts/install-deps.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
all_targets="segment_reader block log_reader version_edit write_batch http_parser binary_fuse bloom_filter cuckoo_filter"
read -r -a targets <<<"${BLOOMKV_FUZZ_TARGETS:-$all_targets}"
build_dir=build/fuzz

cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER=clang++ -DBLOOMKV_FUZZ=ON -DBLOOMKV_BUILD_TESTS=OFF \
  -DBLOOMKV_BUILD_BENCH=OFF -DBLOOMKV_BUILD_TOOLS=OFF >/dev/null
cmake --build "$build_dir" -j"$(nproc)" --target "${targets[@]/#/fuzz_}"

summary=()
crashed=0
for t in "${targets[@]}"; do
  run="$build_dir/runs/$t"
  rm -rf "$run"
  mkdir -p "$run/corpus" "$run/findings"
  cp fuzz/corpus/"$t"/* "$run/corpus/"
  echo "fuzzing $t for ${seconds}s (log: $run/log)"
  status=0
  "$build_dir/fuzz/fuzz_$t" "$run/corpus" -max_total_time="$seconds" \
    -timeout=10 -print_final_stats=1 -artifact_prefix="$run/findings/" \
    >"$run/log" 2>&1 || status=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$run/log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$run/log" | tail -1 | cut -d' ' -f2)
  crashes=$(find "$run/findings" -type f | wc -l)
  if ((status != 0 && crashes == 0)); then crashes="exit $status"; fi
  [[ "$crashes" != 0 ]] && crashed=1
  summary+=("$(printf '%-16s execs %-10s cov %-6s crashes %s' "$t" \
    "${execs:-?}" "${cov:-?}" "$crashes")")
done
echo
echo "fuzzing summary (${seconds}s per target):"
printf '  %s\n' "${summary[@]}"
if ((crashed)); then
  echo "crash inputs:"
  find "$build_dir/runs" -path '*/findings/*' -type f -printf '  %p\n'
fi
exit "$crashed"
