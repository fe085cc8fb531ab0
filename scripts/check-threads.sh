#!/usr/bin/env bash
# The concurrency checks of the test command (scripts/test.sh runs this
# after the suite): builds the library with clang, whose -Wthread-safety
# checks every locking rule the code states (util/mutex.h; a broken rule is
# a build error), with ThreadSanitizer, in build/threads; puts the
# short-link service (tools/shortlink, shortlinkd) through the same
# analysis (compiler front end only, -fsyntax-only); then runs the
# tests whose threads share a database, a cache or a file
# (tests/CMakeLists.txt, CONCURRENCY_TESTS) under it. Any race, lock-order
# inversion or failed test fails the script. Extra arguments go to the test
# binary (e.g. --gtest_filter=DBConcurrency*).
# Needs clang and its sanitizer runtimes: BLOOMKV_WITH_CLANG=1
# scripts/install-deps.sh (scripts/test.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
# -O1 keeps the instrumented tests fast enough and the build short; no
# debug info beyond line tables, which TSan's reports need.
build_dir=$(BLOOMKV_BUILD_DIR=build/threads scripts/configure-release.sh \
  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CXX_FLAGS_RELEASE="-O1 -gline-tables-only" \
  -DBLOOMKV_SANITIZE=thread -DBLOOMKV_BUILD_BENCH=OFF -DBLOOMKV_BUILD_TOOLS=ON)
cmake --build "$build_dir" -j"$(nproc)" --target bloomkv concurrency_tests \
  shortlink_generated
# The short-link service runs no test here: its locking rules only need
# clang's analysis, which runs before code generation, so its files are
# checked with -fsyntax-only (about half of compiling them with TSan).
python3 - "$build_dir" <<'PY'
import json, shlex, subprocess, sys
from concurrent.futures import ThreadPoolExecutor
build_dir = sys.argv[1]
jobs = []
for e in json.load(open(f"{build_dir}/compile_commands.json")):
    args = shlex.split(e["command"])
    out = args[args.index("-o") + 1]
    if not out.startswith(("tools/shortlink/", "tools/shortlinkd/")):
        continue
    kept, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in ("-o", "-MT", "-MF"):
            skip = True
        elif a != "-MD":
            kept.append(a)
    jobs.append((e["directory"], kept + ["-fsyntax-only"], e["file"]))
def check(job):
    d, args, f = job
    r = subprocess.run(args, cwd=d, capture_output=True, text=True)
    return f, r.returncode, r.stderr
failed = 0
with ThreadPoolExecutor() as pool:
    for f, rc, err in pool.map(check, jobs):
        if rc != 0:
            failed += 1
            sys.stderr.write(err)
print(f"thread-safety analysis of {len(jobs)} short-link files: {failed} failed")
sys.exit(1 if failed or not jobs else 0)
PY
built=$SECONDS
# The tests run in one process per core, each taking its share of them
# (GoogleTest's sharding): most of them keep one core busy, and one process
# ran them in 72 s against 40 s in two.
shards=$(nproc)
log_dir=$(mktemp -d)
trap 'rm -rf "$log_dir"' EXIT
pids=()
for ((i = 0; i < shards; i++)); do
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i \
    "$build_dir/tests/concurrency_tests" --gtest_brief=1 "$@" \
    >"$log_dir/$i.log" 2>&1 &
  pids+=($!)
done
failed=0
for ((i = 0; i < shards; i++)); do
  wait "${pids[$i]}" || failed=1
  echo "--- concurrency tests, shard $((i + 1)) of $shards"
  cat "$log_dir/$i.log"
done
[[ $failed -eq 0 ]] || { echo "thread checks: FAILED" >&2; exit 1; }
echo "thread checks: $((built - start)) s to build (clang -Wthread-safety, TSan), $((SECONDS - built)) s of tests"
