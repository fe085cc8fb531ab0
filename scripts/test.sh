#!/usr/bin/env bash
# The whole test suite: installs missing packages, builds everything
# (library, tests, benchmarks, tools) once, in the Release tree the README
# installs from (scripts/configure-release.sh), and runs every test with
# CTest there. Extra arguments are passed to ctest (e.g. -R segment, -L db).
# Then the thread checks (scripts/check-threads.sh): the library built with
# clang -Wthread-safety and ThreadSanitizer, and the concurrency tests under
# it. BLOOMKV_SANITIZE=address,undefined or =thread builds a sanitizer
# variant of the whole suite (RelWithDebInfo) in its own build directory
# instead of both. The tests' directories are made in a scratch directory
# of the run's own, which must be empty when they end.
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

# The tests make their directories in a directory of the run's own, under
# $TMPDIR or /tmp; whatever a test leaves there fails the suite.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/bloomkv-suite.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
export TMPDIR=$scratch
left_behind() {
  [[ -n "${BLOOMKV_KEEP_TEMP:-}" && "${BLOOMKV_KEEP_TEMP}" != 0 ]] && return 0
  local left
  left=$(find "$scratch" -mindepth 1 -maxdepth 1 | sort)
  [[ -z "$left" ]] && return 0
  echo "the tests left these behind ($1):" >&2
  echo "$left" | head -40 >&2
  return 1
}
# Two tests per core: at one per core the cores idle for part of the suite
# (its tests wait for fsync), and more tests at once also vary the
# timing of their background threads. On the 2-core Xeon VM, 2026-12-03:
# 60-72 s at -j4 against 84-90 s at -j2.
(cd "$build_dir" && ctest --output-on-failure -j"$((2 * $(nproc)))" \
  --timeout 600 "$@")
echo "suite: $((built - start)) s to install and build, $((SECONDS - built)) s of tests"
left_behind "the suite"
if [[ -z "$sanitize" ]]; then
  scripts/check-threads.sh
  left_behind "the thread checks"
fi
echo "test command: $((SECONDS - start)) s in all"
