#!/usr/bin/env bash
# The concurrency checks of the test command (scripts/test.sh runs this
# after the suite): builds the library and the short-link service
# (tools/shortlink, shortlinkd) with clang, whose -Wthread-safety checks
# every locking rule the code states (util/mutex.h; a broken rule is a
# build error), with ThreadSanitizer, in build/threads; then runs the
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
  shortlink_lib shortlinkd
built=$SECONDS
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
  "$build_dir/tests/concurrency_tests" --gtest_brief=1 "$@"
echo "thread checks: $((built - start)) s to build (clang -Wthread-safety, TSan), $((SECONDS - built)) s of tests"
