// A child process of the conformance suite: appends to one session through its own bus,
// racing a sibling process. Env: BUS_KIND (local|nats), BUS_DATABASE_URL or BUS_NATS_URL,
// BUS_NATS_AUTH (JSON, TLS files and the like), BUS_NATS_SHARDS, SESSION_ID, WORKER, COUNT, CONCURRENCY. Prints "ready", waits for a line on stdin ("go"),
// appends, then prints one JSON line {worker, appended, ms} and exits.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createBus, type Bus, type LoggedEvent } from '../../src/bus/index.js';
import type { NatsAuthOptions } from '../../src/bus/nats/connect-options.js';
import { createLogger } from '../../src/log.js';
import { createStore } from '../../src/db/index.js';

const env = process.env;
const log = createLogger('silent');
const sessionId = env['SESSION_ID']!;
const worker = env['WORKER']!;
const count = Number(env['COUNT']);
const concurrency = Number(env['CONCURRENCY'] ?? 1);
const dataDir = mkdtempSync(join(tmpdir(), 'bus-child-'));

async function open(): Promise<{ bus: Bus<LoggedEvent>; close(): Promise<void> }> {
  if (env['BUS_KIND'] === 'nats') {
    const bus = await createBus({
      kind: 'nats',
      url: env['BUS_NATS_URL']!,
      auth: JSON.parse(env['BUS_NATS_AUTH'] ?? '{}') as NatsAuthOptions,
      log,
      ackWaitMs: 2000,
      shards: Number(env['BUS_NATS_SHARDS'] ?? 1),
    });
    return { bus, close: () => bus.close() };
  }
  const store = await createStore({ dataDir, databaseUrl: env['BUS_DATABASE_URL']!, log, poolMax: concurrency + 1 });
  const bus = await createBus({ kind: 'local', store, log });
  return { bus, close: async () => (await bus.close(), await store.close()) };
}

const { bus, close } = await open();
process.stdout.write('ready\n');
await once(process.stdin, 'data');
const started = performance.now();
let next = 0;
// `concurrency` writers inside this process share the per-session chain; the sibling process
// has its own, so cross-process races are settled by the log's optimistic concurrency alone.
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < count) {
      const i = next++;
      const r = await bus.events.append(sessionId, [{ type: 'test.appended', data: { worker, i } }]);
      if (!r.ok) throw new Error('append without expectedSequence reported a conflict');
    }
  }),
);
const ms = performance.now() - started;
process.stdout.write(JSON.stringify({ worker, appended: count, ms }) + '\n');
await close();
rmSync(dataDir, { recursive: true, force: true });
process.exit(0);
