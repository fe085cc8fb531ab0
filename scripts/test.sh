#!/usr/bin/env bash
# The whole test suite: installs missing packages, builds everything
# (library, tests, benchmarks, tools) in the RelWithDebInfo tree and in the
# Release tree, and runs every test with CTest in the first.
# Extra arguments are passed to ctest (e.g. -R segment, -L db).
# BLOOMKV_SANITIZE=address,undefined or =thread builds a sanitizer variant in
# its own build directory.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

sanitize="${BLOOMKV_SANITIZE:-}"
build_dir="build/test${sanitize:+-${sanitize//,/-}}"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DBLOOMKV_SANITIZE="$sanitize" >/dev/null
cmake --build "$build_dir" -j"$(nproc)"
if [[ -z "$sanitize" ]]; then
  # The Release tree the README installs from, tests included: GCC warns
  # differently at -O3, and warnings are errors. Built only; the suite runs
  # on the tree above.
  cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release \
    -DBLOOMKV_BUILD_TESTS=ON >/dev/null
  cmake --build build/release -j"$(nproc)"
fi
cd "$build_dir"
ctest --output-on-failure -j"$(nproc)" --timeout 600 "$@"
