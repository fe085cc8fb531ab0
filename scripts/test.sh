#!/usr/bin/env bash
# The whole test suite: installs missing packages, builds everything
# (library, tests, benchmarks, tools) once, in the Release tree the README
# installs from (scripts/configure-release.sh), and runs every test with
# CTest there. Extra arguments are passed to ctest (e.g. -R segment, -L db).
# Then the thread checks (scripts/check-threads.sh): the library built with
# clang -Wthread-safety and ThreadSanitizer, and the concurrency tests under
# it. BLOOMKV_SANITIZE=address,undefined or =thread builds a sanitizer
# variant of the whole suite (RelWithDebInfo) in its own build directory
# instead of both.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
sanitize="${BLOOMKV_SANITIZE:-}"
if [[ -n "$sanitize" ]]; then
  scripts/install-deps.sh
else
  BLOOMKV_WITH_CLANG=1 scripts/install-deps.sh
fi

if [[ -n "$sanitize" ]]; then
  build_dir="build/test-${sanitize//,/-}"
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DBLOOMKV_SANITIZE="$sanitize" >/dev/null
else
  build_dir=$(scripts/configure-release.sh)
fi
cmake --build "$build_dir" -j"$(nproc)"
built=$SECONDS
# Two tests per core: at one per core the cores idle for about 30% of the
# suite (its tests wait for fsync), and more tests at once also vary the
# timing of their background threads. On the 2-core Xeon VM, 2026-12-03:
# 60-72 s at -j4 against 84-90 s at -j2.
(cd "$build_dir" && ctest --output-on-failure -j"$((2 * $(nproc)))" \
  --timeout 600 "$@")
echo "suite: $((built - start)) s to install and build, $((SECONDS - built)) s of tests"
[[ -n "$sanitize" ]] || scripts/check-threads.sh
echo "test command: $((SECONDS - start)) s in all"
