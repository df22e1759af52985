#!/usr/bin/env bash
# Compiles the service to dist/ (tsc, tsconfig.build.json) so a start runs plain JavaScript
# instead of transpiling every module with tsx (docs/decisions/0065-compiled-start.md), then
# bundles that output into dist/server/ (scripts/bundle.ts), which is what a start runs
# (docs/decisions/0091-one-bundled-file-per-entry.md).
# With --if-stale it does nothing when dist/ is newer than every source file, so the start
# scripts can call it on every start at the cost of one `find`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
stamp=dist/.build-stamp
inputs=(src actors schemas examples console scripts/bundle.ts package.json package-lock.json tsconfig.json tsconfig.build.json)
up_to_date() {
  [ "${1:-}" = "--if-stale" ] && [ -f "$stamp" ] && [ -z "$(find "${inputs[@]}" -newer "$stamp" -print -quit 2>/dev/null)" ]
}
up_to_date "$@" && exit 0
# One build at a time (two test files or two starts at once): the second waits, then finds dist/
# up to date. Taken only to build: the image's dist/ is read-only to the service's user.
mkdir -p dist
exec 9>dist/.build-lock
flock 9
up_to_date "$@" && exit 0
echo "build: compiling to dist/" >&2
# Taken before compiling: a source edited while tsc runs makes the next start build again.
touch dist.stamp.tmp
node node_modules/typescript/bin/tsc -p tsconfig.build.json
node --import tsx scripts/bundle.ts
# The example agents are read from disk next to the code (src/api/agents/example-catalogue.ts).
rm -rf dist/examples && cp -R examples dist/examples
# Likewise the web console's files (src/console/site.ts) and package.json (src/version.ts).
rm -rf dist/console && cp -R console dist/console
cp package.json dist/package.json
mv dist.stamp.tmp "$stamp"
