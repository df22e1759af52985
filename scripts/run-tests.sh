#!/usr/bin/env bash
# The test suite: every test/**/*.test.ts file, four files at a time (each file is its own
# process with its own databases, nats-servers and ports), then the files that assert a
# latency bound (the event loop; the SSE cycle's quiet gap; /health while a NATS node dies; the embedded database thread; answers while a NATS node dies; the accept-once waits; a tool during a database outage; the SIGTERM handover; /health while a NATS node is frozen; /health while hostile greps run; SSE heartbeats and cycles on the timer wheel; the grep pool's time budget; /health during a burst of logins; /health during a runaway sandboxed SQL statement) alone, so that a neighbour's CPU
# does not count against them.
# Four at a time on 2 cores: the files mostly wait (turns, timers, child processes, start-ups);
# two at a time kept the cores about half busy (the parallel part's CPU time, measured, is about
# half of 2 cores x its length).
# TEST_CONCURRENCY overrides the parallel part (1 = everything in series).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
serial=(test/security/event-loop.test.ts test/security/hostile-patterns.test.ts
  test/compat/everruns-sdk-reads.test.ts test/bus/nats-leader-loss.test.ts test/db/pglite-thread.test.ts
  test/http/nats-node-loss.test.ts test/turns/accept-once.test.ts test/turns/secret-check-outage.test.ts
  test/turns/sigterm-handover.test.ts test/bus/nats-frozen-node.test.ts test/security/grep-limits.test.ts
  test/http/sse-stream.test.ts test/offthread/grep-pool.test.ts test/api/auth/unauthenticated-cpu.test.ts
  test/capabilities/sql/sql-sandbox.test.ts test/offthread/parse-pool.test.ts test/offthread/fair-share.test.ts
  test/bus/nats-leader-get.test.ts)
mapfile -t all < <(find test -name '*.test.ts' | sort)
parallel=()
for f in "${all[@]}"; do
  [[ " ${serial[*]} " == *" $f "* ]] || parallel+=("$f")
done
# Node's spec output, then the slowest files of the part (scripts/slowest-test-files.ts).
run() {
  node --experimental-async-context-frame --import tsx --test --test-timeout=300000 \
    --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=./scripts/slowest-test-files.ts --test-reporter-destination=stdout "$@"
}
status=0
run --test-concurrency="${TEST_CONCURRENCY:-4}" "${parallel[@]}" || status=1
run --test-concurrency=1 "${serial[@]}" || status=1
exit $status
