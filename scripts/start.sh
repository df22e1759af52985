#!/usr/bin/env bash
# Sets up the toolchain and dependencies, compiles the service when dist/ is missing or older
# than the sources, then starts it (embedded mode by default: PGlite under ./data, in-process
# bus, no configuration needed). Node only: the service needs no local nats-server (distributed
# mode connects to NATS_URL), so nothing else is downloaded.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
eval "$(bash scripts/bootstrap.sh --node-only)"
[ -d node_modules ] && [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund
bash scripts/build.sh --if-stale
# Node flags: see docs/decisions/0008-runtime-node-flags.md.
exec node --experimental-async-context-frame --max-semi-space-size=32 --heap-growing-percent=50 dist/server/main.js
