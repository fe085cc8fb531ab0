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
# of the run's own (on tmpfs where there is room, see below), which must be
# empty when they end.
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

# Where the tests make their directories: a directory of the suite's own,
# on tmpfs (/dev/shm) where there is one with 4 GiB free, else under
# $TMPDIR or /tmp; BLOOMKV_TEST_TMPDIR names another base. On an ext4
# without a journal each file created within 30 s of a deletion is
# allocated past every inode deleted meanwhile, and the suite creates and
# deletes about 100,000 small files: its release tests took 145 s in /tmp
# against 67 s on /dev/shm (EPYC VM, 2026-12-07). The few tests that need
# a disk's page cache (readahead, large folios) get a directory under the
# disk base instead (BLOOMKV_TEST_DISK_TMPDIR, test::TempDir::OnDisk).
# Whatever a test leaves in either fails the suite.
disk_base="${TMPDIR:-/tmp}"
base="${BLOOMKV_TEST_TMPDIR:-}"
if [[ -z "$base" ]]; then
  base=$disk_base
  if [[ "$(stat -f -c %T /dev/shm 2>/dev/null)" == tmpfs && -w /dev/shm ]] &&
     (($(df --output=avail -B1 /dev/shm | tail -1) >= 4 << 30)); then
    base=/dev/shm
  fi
fi
scratch=$(mktemp -d "$base/bloomkv-suite.XXXXXX")
disk_scratch=$(mktemp -d "$disk_base/bloomkv-suite-disk.XXXXXX")
export TMPDIR=$scratch BLOOMKV_TEST_DISK_TMPDIR=$disk_scratch
# BLOOMKV_KEEP_TEMP=1 keeps every test's directory (test::TempDir), and
# so the scratch directories.
keep_temp=0
[[ -n "${BLOOMKV_KEEP_TEMP:-}" && "$BLOOMKV_KEEP_TEMP" != 0 ]] && keep_temp=1
if ((keep_temp)); then
  echo "the tests' directories are kept in $scratch and $disk_scratch"
else
  trap 'rm -rf "$scratch" "$disk_scratch"' EXIT
fi
left_behind() {
  ((keep_temp)) && return 0
  local left
  left=$(find "$scratch" "$disk_scratch" -mindepth 1 -maxdepth 1 | sort)
  [[ -z "$left" ]] && return 0
  echo "the tests left these behind ($1):" >&2
  echo "$left" | head -40 >&2
  return 1
}
# Two tests per core: at one per core the cores idle for part of the suite
# (its tests wait for their background threads and, on a disk, for fsync),
# and more tests at once also vary the timing of those threads. On tmpfs,
# EPYC VM, 2026-12-07: 65 s at -j4 against 78 s at -j2.
(cd "$build_dir" && ctest --output-on-failure -j"$((2 * $(nproc)))" \
  --timeout 600 "$@")
echo "suite: $((built - start)) s to install and build, $((SECONDS - built)) s of tests"
left_behind "the suite"
if [[ -z "$sanitize" ]]; then
  scripts/check-threads.sh
  left_behind "the thread checks"
fi
echo "test command: $((SECONDS - start)) s in all"
