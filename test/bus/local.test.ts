import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { test } from 'node:test';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBus, type Bus } from '../../src/bus/index.js';
import { ConflictError } from '../../src/errors.js';
import { newId } from '../../src/ids.js';
import { createLogger } from '../../src/log.js';
import { createStore } from '../../src/store/index.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { CASES, runBusConformance, type BusHarness } from './conformance.js';

const LEASE_MS = 1000;
const log = createLogger('silent');

/** Local buses sharing one store: PGlite when databaseUrl is absent, else that PostgreSQL. */
async function localHarness(database?: { url: string; drop(): Promise<void> }): Promise<BusHarness> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bus-local-'));
  const store = await createStore({ dataDir, databaseUrl: database?.url, log });
  const buses: Bus[] = [];
  return {
    leaseMs: LEASE_MS,
    childEnv: database ? { BUS_KIND: 'local', BUS_DATABASE_URL: database.url } : undefined,
    async connect() {
      const bus = await createBus({ kind: 'local', store, log, leaseMs: LEASE_MS });
      buses.push(bus);
      return bus;
    },
    async close() {
      for (const bus of buses) await bus.close();
      await store.close();
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

runBusConformance({
  name: 'local on PGlite',
  create: () => localHarness(),
  skip: { cases: [CASES.multiProcessAppend], reason: 'PGlite is an embedded, single-process database; the PostgreSQL run covers it' },
});

runBusConformance({
  name: 'local on PostgreSQL',
  create: async () => localHarness(await createTestDatabase('bus')),
});

test('local - an event id stored in another session is refused with ConflictError', async (t) => {
  const harness = await localHarness(await createTestDatabase('bus_ids'));
  t.after(() => harness.close());
  const bus = await harness.connect();
  const id = newId();
  assert.ok((await bus.events.append(newId(), [{ id, type: 'a' }])).ok);
  await assert.rejects(bus.events.append(newId(), [{ id, type: 'a' }]), ConflictError);
});
