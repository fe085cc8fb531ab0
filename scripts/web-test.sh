#!/usr/bin/env bash
# Browser test of shortlinkd's web page (docs/shortlinkd.md, "Web page"):
# builds shortlinkd, starts it on a free loopback port with a scratch data
# directory, and drives the page in headless Chromium with
# scripts/web-test.cjs (puppeteer-core): shorten a URL with the keyboard,
# copy the short link, follow it (302 to the target), see its clicks, look a
# code up, see the server's error for a bad URL and for an unknown code,
# keep an API key in localStorage. Exits non-zero on any failure.
#
#   scripts/web-test.sh
#
# Needs: Debian's chromium (installed with apt-get when missing), Node.js
# 18 or later, and puppeteer-core, installed once with npm into
# ${XDG_CACHE_HOME:-~/.cache}/bloomkv-web-test. With WEB_TEST_OPENAPI=1 the
# served OpenAPI document is also validated against the OpenAPI 3.0 schema
# by @apidevtools/swagger-cli (installed the same way).
# Environment: BUILD_DIR (default build/release, the test command's tree), SHORTLINKD (a prebuilt
# binary: skips the build), CHROMIUM (default: chromium on PATH).
set -euo pipefail
cd "$(dirname "$0")/.."

puppeteer_version=23.11.1  # the last line that runs on Node 18 and 20
swagger_cli_version=4.0.4

if ! command -v chromium >/dev/null && [[ -z "${CHROMIUM:-}" ]]; then
  echo "installing chromium (apt-get)"
  sudo=""
  ((EUID != 0)) && sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium
fi
export CHROMIUM="${CHROMIUM:-$(command -v chromium)}"
command -v node >/dev/null || { echo "web-test: node is required" >&2; exit 1; }

cache="${XDG_CACHE_HOME:-$HOME/.cache}/bloomkv-web-test"
if [[ ! -d "$cache/node_modules/puppeteer-core" ]]; then
  echo "installing puppeteer-core@$puppeteer_version into $cache"
  mkdir -p "$cache"
  npm install --prefix "$cache" --no-audit --no-fund --silent \
    "puppeteer-core@$puppeteer_version"
fi

if [[ -z "${SHORTLINKD:-}" ]]; then
  if [[ -n "${BUILD_DIR:-}" ]]; then
    build_dir="$BUILD_DIR"
    cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
  else
    build_dir=$(scripts/configure-release.sh)
  fi
  cmake --build "$build_dir" -j2 --target shortlinkd
  SHORTLINKD="$build_dir/tools/shortlinkd/shortlinkd"
fi

tmp=$(mktemp -d)
server_pid=""
cleanup() {
  if [[ -n "$server_pid" ]]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

"$SHORTLINKD" --listen 127.0.0.1:0 --port-file "$tmp/port" --data "$tmp/data" \
  --compact-interval 0 --threads 4 >"$tmp/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do
  [[ -s "$tmp/port" ]] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$tmp/server.log"; exit 1; }
  sleep 0.1
done
[[ -s "$tmp/port" ]] || { echo "web-test: shortlinkd did not start" >&2; exit 1; }
base="http://127.0.0.1:$(cat "$tmp/port")"
echo "shortlinkd at $base"

status=0
NODE_PATH="$cache/node_modules" node scripts/web-test.cjs "$base" || status=$?

if [[ "${WEB_TEST_OPENAPI:-0}" == 1 ]]; then
  if [[ ! -x "$cache/node_modules/.bin/swagger-cli" ]]; then
    npm install --prefix "$cache" --no-audit --no-fund --silent \
      "@apidevtools/swagger-cli@$swagger_cli_version"
  fi
  if curl -sf "$base/openapi.json" -o "$tmp/openapi.json"; then
    "$cache/node_modules/.bin/swagger-cli" validate "$tmp/openapi.json" ||
      status=1
  else
    echo "web-test: GET /openapi.json failed" >&2
    status=1
  fi
fi

if ((status != 0)); then
  echo "--- server log"
  cat "$tmp/server.log"
fi
exit "$status"
