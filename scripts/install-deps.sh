#!/usr/bin/env bash
# Installs the Debian 12 packages bloomkv needs to build, test and benchmark,
# skipping the ones already installed. Run as root (or with sudo).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  liblz4-dev libzstd-dev libxxhash-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev libcpp-httplib-dev
  libssl-dev
  python3 python3-cffi
)
# LevelDB, RocksDB and LMDB, for kvbench's peer comparison (scripts/demo.sh turns
# this on unless BLOOMKV_WITH_PEERS=0 is given).
if [[ "${BLOOMKV_WITH_PEERS:-0}" == 1 ]]; then
  # LevelDB's CMake package links snappy.
  packages+=(libleveldb-dev libsnappy-dev librocksdb-dev liblmdb-dev)
fi
# gnuplot, for kvbench's charts (bench/plot.sh; scripts/demo.sh turns this
# on). Not needed to build or test: it and the libraries it pulls in (cairo,
# pango, gd) are left out of the test command's install.
if [[ "${BLOOMKV_WITH_PLOTS:-0}" == 1 ]]; then
  packages+=(gnuplot-nox)
fi
# The HTTP load generator for scripts/shortlink-load.sh.
if [[ "${BLOOMKV_WITH_LOAD:-0}" == 1 ]]; then
  packages+=(wrk curl)
fi
# clang and its sanitizer runtimes (libFuzzer among them): for the thread
# checks of scripts/test.sh (scripts/check-threads.sh) and scripts/fuzz.sh.
if [[ "${BLOOMKV_WITH_CLANG:-0}" == 1 || "${BLOOMKV_WITH_FUZZ:-0}" == 1 ]]; then
  packages+=(clang libclang-rt-14-dev)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
    missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
