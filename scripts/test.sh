#!/usr/bin/env bash
# Sets up the toolchain, dependencies and database access, then runs the typecheck and the full
# test suite. Tests spawn their own nats-server processes and create their own databases.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
eval "$(bash scripts/bootstrap.sh)"
npm ci --no-audit --no-fund
bash scripts/ensure-postgres.sh
# test/compat/everruns-sdk-python.test.ts: Debian's python3 with the earlier API's Python SDK
# dependencies in .cache/python (from the machine's pip index; a second run only checks them).
bash scripts/python-deps.sh >/dev/null
# The console and CORS tests (test/console/) drive Debian's chromium through playwright-core.
if [ ! -x /usr/bin/chromium ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
# The static checks at once (each its own process; a failing one fails the run after all ended):
# the typecheck; what npm start and scripts/start.sh run (the compiled output must build); Biome;
# the import boundaries; the Kubernetes manifests in deploy/k8s against the Kubernetes schemas
# (kubernetes-models, from npm) and the service's rules; the OpenAPI document
# (packages/client/openapi.json, kept equal to the served one by test/client/openapi-document.test.ts)
# through redocly lint with 0 errors; no source file over 400 lines (scripts/check-file-size.ts).
checks=("npx tsc --noEmit" "npm run build" "npm run lint" "npm run check:boundaries" "npm run check:size"
  "node --import tsx scripts/validate-k8s.ts" "npm run lint:openapi")
pids=()
for check in "${checks[@]}"; do
  bash -c "$check" &
  pids+=($!)
done
failed=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || { echo "static check failed: ${checks[$i]}" >&2; failed=1; }
done
[ "$failed" = 0 ]
# Includes test/bus/nats-secure*.test.ts: the distributed suite once more against nats-servers that
# require TLS client certificates and a password.
npm test
