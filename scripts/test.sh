#!/usr/bin/env bash
# The whole test suite: installs missing packages, builds everything
# (library, tests, benchmarks, tools) and runs every test with CTest.
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
cd "$build_dir"
ctest --output-on-failure -j"$(nproc)" --timeout 600 "$@"
