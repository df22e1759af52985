#!/usr/bin/env bash
# Start-to-healthy time: launches the service with the given command (default: the compiled
# output, as `npm start` runs it), polls GET /health every 20 ms and prints the milliseconds
# from spawn to the first 200, and the CPU time (user + system) the process used until then,
# which stays comparable on a busy machine where wall time does not. Each run uses the same data directory, so the first run is a
# cold start (migrations, bootstrap) and the later ones are restarts.
# Usage: bash bench/startup/measure.sh [runs] [-- command...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
runs="${1:-5}"; shift || true
[ "${1:-}" = "--" ] && shift
cmd=("$@")
[ ${#cmd[@]} -gt 0 ] || cmd=(node --experimental-async-context-frame --max-semi-space-size=32 --heap-growing-percent=50 dist/server/main.js)
port="${PORT:-18080}"
data="$(mktemp -d)"
trap 'rm -rf "$data"' EXIT
for i in $(seq 1 "$runs"); do
  start=$(date +%s%N)
  DATA_DIR="$data" PORT="$port" LOG_LEVEL=warn "${cmd[@]}" >/dev/null 2>&1 &
  pid=$!
  until curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1; do
    kill -0 "$pid" 2>/dev/null || { echo "service exited" >&2; exit 1; }
    sleep 0.02
  done
  wall=$(( ($(date +%s%N) - start) / 1000000 ))
  ticks=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  echo "run $i: ${wall} ms wall, $(( ticks * 1000 / $(getconf CLK_TCK) )) ms CPU"
  kill -TERM "$pid"; wait "$pid" || true
done
