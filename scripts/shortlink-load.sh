#!/usr/bin/env bash
# Load test of shortlinkd: N links (default 1,000,000), redirects with half
# of the codes never issued, once with bloom filters at 10 bits per key and
# once without (--bits-per-key 0, loaded separately because a segment's
# filter is built when the segment is written). Loopback only, bounded in
# time (two 20 s mixed runs and two 10 s unknown-only runs; about 2-3
# minutes in all on 2 cores). Not part of the test suite.
#
#   BLOOMKV_WITH_LOAD=1 scripts/install-deps.sh   # adds wrk
#   scripts/shortlink-load.sh [--slow-clients S] [N]
# --slow-clients S: S more connections, each sending a request one byte every
# 2 s (reconnecting when the server times it out), run beside wrk; the
# numbers show what slow clients cost everyone else.
# Environment: DURATION (mixed run, default 20s), UNKNOWN_DURATION (10s),
# THREADS (wrk threads, 2), CONNECTIONS (32), KEEP=1 keeps the work dir,
# SHORTLINKD=path runs that binary instead of building one (to compare
# builds).
set -euo pipefail
cd "$(dirname "$0")/.."

slow_clients=0
args=()
while (($#)); do
  case "$1" in
    --slow-clients) slow_clients="$2"; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
links="${args[0]:-1000000}"
duration="${DURATION:-20s}"
unknown_duration="${UNKNOWN_DURATION:-10s}"
wrk_threads="${THREADS:-2}"
connections="${CONNECTIONS:-32}"

command -v wrk >/dev/null || { echo "wrk missing: BLOOMKV_WITH_LOAD=1 scripts/install-deps.sh" >&2; exit 1; }
command -v curl >/dev/null || { echo "curl missing" >&2; exit 1; }

bin="${SHORTLINKD:-}"
if [[ -z "$bin" ]]; then
  build=build/load
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DBLOOMKV_BUILD_TESTS=OFF \
    -DBLOOMKV_BUILD_BENCH=OFF >/dev/null
  cmake --build "$build" -j2 --target shortlinkd >/dev/null
  bin="$build/tools/shortlinkd/shortlinkd"
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/shortlink-load.XXXXXX")"
server_pid=""
slow_pids=()
stop_slow() {
  ((${#slow_pids[@]})) && kill "${slow_pids[@]}" 2>/dev/null || true
  slow_pids=()
}
cleanup() {
  stop_slow
  if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  if [[ "${KEEP:-0}" != 1 ]]; then rm -rf "$work"; else echo "kept $work"; fi
}
trap cleanup EXIT

# One slow client: a request sent a byte every 2 s, again after each close.
slow_client() {
  trap '' PIPE  # a closed socket fails the write instead of killing us
  local request=$'POST /api/links HTTP/1.1\r\nHost: load\r\nContent-Type: application/json\r\n'
  while true; do
    exec 3<>"/dev/tcp/127.0.0.1/$port" || { sleep 1; continue; }
    local i=0
    while printf '%s' "${request:i%${#request}:1}" >&3 2>/dev/null; do
      i=$((i + 1)); sleep 2
    done
    exec 3>&-
  done
}

metrics() { curl -sf "http://127.0.0.1:$port/metrics"; }
# value NAME < metrics-text: the sample whose name (and labels) is NAME.
value() { awk -v n="$1" '$1 == n { print $2; f = 1 } END { if (!f) print 0 }'; }
redirects() { awk '$1 ~ /^shortlinkd_http_requests_total\{route="redirect"/ { s += $2 } END { print s + 0 }'; }

# run LABEL DURATION KNOWN_FRACTION: one wrk run and its store counters.
run() {
  local label="$1" dur="$2" frac="$3" before after out
  before="$(metrics)"
  out="$(wrk -t"$wrk_threads" -c"$connections" -d"$dur" --latency \
    -s scripts/shortlink-load.lua "http://127.0.0.1:$port" -- "$work/known.txt" "$frac")"
  after="$(metrics)"
  local rps p99 reqs blocks bytes neg fp
  rps="$(awk '/^Requests\/sec/ { print $2 }' <<<"$out")"
  p99="$(awk '$1 == "99%" { print $2 }' <<<"$out")"
  reqs=$(( $(redirects <<<"$after") - $(redirects <<<"$before") ))
  blocks=$(( $(value bloomkv_data_blocks_read_total <<<"$after") - $(value bloomkv_data_blocks_read_total <<<"$before") ))
  bytes=$(( $(value bloomkv_bytes_read_total <<<"$after") - $(value bloomkv_bytes_read_total <<<"$before") ))
  neg=$(( $(value bloomkv_filter_negatives_total <<<"$after") - $(value bloomkv_filter_negatives_total <<<"$before") ))
  fp=$(( $(value bloomkv_filter_false_positives_total <<<"$after") - $(value bloomkv_filter_false_positives_total <<<"$before") ))
  printf '%-8s %-13s %10s req/s  p99 %-8s  %9d req  %.4f blocks/req  %7.1f bytes/req  %d filter negatives  %d false positives\n' \
    "$label" "known=$frac" "$rps" "$p99" "$reqs" \
    "$(awk -v b="$blocks" -v r="$reqs" 'BEGIN { print (r ? b / r : 0) }')" \
    "$(awk -v b="$bytes" -v r="$reqs" 'BEGIN { print (r ? b / r : 0) }')" "$neg" "$fp"
}

echo "machine: $(nproc) cores, $(free -h | awk '/^Mem:/ { print $2 }') RAM, $(lscpu | sed -n 's/^Model name: *//p')"
echo "links: $links; wrk -t$wrk_threads -c$connections, mixed runs $duration, unknown-only runs $unknown_duration, slow clients $slow_clients"
for mode in on off; do
  bits=10; [[ "$mode" == off ]] && bits=0
  data="$work/data-$mode"
  "$bin" --data "$data" --bits-per-key "$bits" --preload "$links" --codes-out "$work/codes-$mode.txt" |
    sed "s/^/filters $mode: /"
  shuf -n 100000 "$work/codes-$mode.txt" >"$work/known.txt"
  rm -f "$work/port"
  "$bin" --listen 127.0.0.1:0 --port-file "$work/port" --data "$data" \
    --bits-per-key "$bits" --threads $((connections + 8)) --compact-interval 0 \
    >"$work/server-$mode.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 100); do [[ -s "$work/port" ]] && break; sleep 0.1; done
  port="$(cat "$work/port")"
  for ((i = 0; i < slow_clients; i++)); do
    slow_client 2>/dev/null &
    slow_pids+=($!)
  done
  ((slow_clients)) && sleep 3  # let them connect and start trickling
  run "filt-$mode" "$duration" 0.5
  run "filt-$mode" "$unknown_duration" 0
  stop_slow
  kill "$server_pid"; wait "$server_pid" || true; server_pid=""
done
