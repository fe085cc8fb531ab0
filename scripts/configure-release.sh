#!/usr/bin/env bash
# Configures build/release, the one build tree the test command, the demo
# and the README's commands share: Release (the library at -O3, so the suite
# runs on what is installed and GCC's -O3 warnings, which are errors, are
# seen in the one compile; test code at -O1, tests/CMakeLists.txt), tests,
# benchmarks and tools included, Ninja where installed. A tree configured
# with another generator is made anew. Extra arguments go to cmake (e.g.
# -DBLOOMKV_BUILD_BENCH=OFF); BLOOMKV_BUILD_DIR names another tree
# (scripts/check-threads.sh's). Prints the build directory.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${BLOOMKV_BUILD_DIR:-build/release}"
generator="Unix Makefiles"
command -v ninja >/dev/null && generator=Ninja
cache="$build_dir/CMakeCache.txt"
if [[ -f "$cache" ]] && ! grep -qx "CMAKE_GENERATOR:INTERNAL=$generator" "$cache"; then
  rm -rf "$build_dir"
fi
cmake -S . -B "$build_dir" -G "$generator" -DCMAKE_BUILD_TYPE=Release \
  -DBLOOMKV_BUILD_TESTS=ON "$@" >/dev/null
echo "$build_dir"
