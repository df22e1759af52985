#!/usr/bin/env bash
# A Python virtual environment under .cache/python for test/compat/everruns-sdk-python.test.ts:
# Debian's python3 (package python3-venv) with the dependencies the earlier API's Python SDK
# declares (everruns-sdk 0.2.1: httpx>=0.28, httpx-sse>=0.4, pydantic>=2.12), installed from the
# package indexes pip is configured with on this machine, never from the public one.
# Idempotent: a second run only checks the imports. Prints the interpreter's path.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.cache/python"
requirements=("httpx>=0.28" "httpx-sse>=0.4" "pydantic>=2.12")
log() { echo "python-deps: $*" >&2; }

deps_ok() {
  [ -x "$venv/bin/python" ] && "$venv/bin/python" - <<'EOF' 2>/dev/null
import httpx, httpx_sse, pydantic
major, minor = (int(x) for x in pydantic.VERSION.split(".")[:2])
assert (major, minor) >= (2, 12)
assert tuple(int(x) for x in httpx.__version__.split(".")[:2]) >= (0, 28)
EOF
}

if ! deps_ok; then
  if ! /usr/bin/python3 -c 'import ensurepip, venv' 2>/dev/null; then
    log "installing Debian's python3-venv"
    apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >&2
  fi
  rm -rf "$venv" && /usr/bin/python3 -m venv "$venv"
  # The machine's own indexes (pip's configured extra-index-url / find-links) replace the public one,
  # which this machine cannot reach (pip would retry it for minutes).
  indexes="$("$venv/bin/pip" config get global.extra-index-url 2>/dev/null || true)"
  [ -n "$indexes" ] || { log "no package index configured for pip (global.extra-index-url)"; exit 1; }
  read -r -a urls <<<"$indexes"
  args=(--index-url "${urls[0]}")
  for url in "${urls[@]:1}"; do args+=(--extra-index-url "$url"); done
  log "installing ${requirements[*]} into .cache/python from ${urls[*]}"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --retries 0 --timeout 10 "${args[@]}" "${requirements[@]}" >&2
  deps_ok || { log "the installed packages do not import"; exit 1; }
fi
echo "$venv/bin/python"
