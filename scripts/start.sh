#!/usr/bin/env bash
# Sets up the toolchain and dependencies, then starts the service (embedded mode by default:
# PGlite under ./data, in-process bus, no configuration needed).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
eval "$(bash scripts/bootstrap.sh)"
[ -d node_modules ] && [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund
exec node --import tsx src/main.ts
