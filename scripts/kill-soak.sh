#!/usr/bin/env bash
# Crash soak: builds tests/soak/kill_soak in the test command's build tree
# (build/release) and runs [cycles] (default 1000) crash-and-recover cycles in
# each mode: SIGKILL of a forked writer process, then a simulated machine
# crash that drops every unsynced byte (--drop-unsynced). Each mode prints
# its seed, the cycles run, the acknowledged sync writes checked and the
# losses; the script exits 1 if either mode lost or garbled anything.
#
#   scripts/kill-soak.sh [cycles]
#   BLOOMKV_SOAK_SEED=1234 scripts/kill-soak.sh 200   # replay a seed
set -euo pipefail
cd "$(dirname "$0")/.."

cycles="${1:-1000}"
build_dir=$(scripts/configure-release.sh)
cmake --build "$build_dir" -j"$(nproc)" --target kill_soak

seed_arg=()
[[ -n "${BLOOMKV_SOAK_SEED:-}" ]] && seed_arg=(--seed="$BLOOMKV_SOAK_SEED")
failed=0
for mode in kill drop-unsynced; do
  mode_arg=()
  [[ "$mode" == drop-unsynced ]] && mode_arg=(--drop-unsynced)
  echo "== $mode: $cycles cycles"
  "$build_dir/tests/kill_soak" --cycles="$cycles" "${seed_arg[@]}" \
    "${mode_arg[@]}" || failed=1
done
exit "$failed"
