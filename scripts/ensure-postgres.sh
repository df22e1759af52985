#!/usr/bin/env bash
# Makes sure the PostgreSQL the tests use (TEST_PG_URL, default postgres@127.0.0.1:5432) answers;
# starts the machine's local cluster when it is installed but stopped.
set -euo pipefail
url="${TEST_PG_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
ready() { node -e "const pg=require('pg');const c=new pg.Client({connectionString:process.argv[1]});c.connect().then(()=>c.end()).then(()=>process.exit(0),()=>process.exit(1))" "$url"; }
if ready; then exit 0; fi
if command -v pg_ctlcluster >/dev/null && [ -d /etc/postgresql ]; then
  echo "ensure-postgres: starting the local PostgreSQL cluster" >&2
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
  for _ in $(seq 1 30); do ready && exit 0; sleep 1; done
fi
echo "ensure-postgres: PostgreSQL is not reachable at $url; start it or set TEST_PG_URL" >&2
exit 1
