#!/usr/bin/env bash
# Sets up the toolchain, dependencies and database access, then runs the typecheck and the full
# test suite. Tests spawn their own nats-server processes and create their own databases.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
eval "$(bash scripts/bootstrap.sh)"
npm ci --no-audit --no-fund
bash scripts/ensure-postgres.sh
npx tsc --noEmit
npm run lint
npm run check:boundaries
npm test
# The distributed suite once more against nats-servers that require TLS client certificates and a password.
npm run test:nats-secure
