import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import pg from 'pg';
import { startEmbeddedDatabase } from '../../src/db/pglite-thread.js';
import { createLogger } from '../../src/log.js';
import { seedEmbeddedDataDir } from '../helpers/pglite-template.js';

async function connections(t: TestContext, n: number): Promise<pg.Client[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'ass-sequences-'));
  await seedEmbeddedDataDir(dataDir);
  const { thread } = await startEmbeddedDatabase({ dataDir, poolMax: 4, log: createLogger('silent') });
  const clients = Array.from(
    { length: n },
    () => new pg.Client({ host: thread.host, port: thread.port, user: 'postgres', database: 'postgres' }),
  );
  // The clients end before the server they talk to (node:test runs after-hooks in the order given).
  t.after(async () => {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
    await thread.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  await Promise.all(clients.map((c) => c.connect()));
  return clients;
}

type Stream = { write(chunk: Uint8Array, ...rest: unknown[]): boolean; destroy(): void };

/**
 * Holds back what the client writes from its next Describe on, as a socket read that ends after
 * a Bind would: resolves once the server answered the Parse and Bind before it (or refused them).
 */
function holdAfterBind(client: pg.Client): { bound: Promise<void>; release(): void } {
  const connection = (client as unknown as { connection: { stream: Stream; once(event: string, fn: () => void): void } }).connection;
  const { stream } = connection;
  const write = stream.write.bind(stream);
  const held: [Uint8Array, unknown[]][] = [];
  let holding = false;
  stream.write = (chunk, ...rest) => {
    if (chunk[0] === 'D'.charCodeAt(0)) holding = true;
    if (!holding) return write(chunk, ...rest);
    held.push([chunk, rest]);
    return true;
  };
  return {
    bound: new Promise((resolve) => {
      connection.once('bindComplete', resolve);
      connection.once('errorMessage', resolve);
    }),
    release() {
      stream.write = write;
      for (const [chunk, rest] of held) write(chunk, ...rest);
    },
  };
}

describe('the embedded database’s extended-protocol sequences', () => {
  it('run whole: another connection’s statement waits for the Sync of one whose Bind arrived alone', async (t) => {
    const [a, b] = await connections(t, 2);
    const hold = holdAfterBind(a!);
    const first = a!.query({ name: 'a', text: 'select $1::text as a', values: ['A'] });
    await hold.bound;
    let secondDone = false;
    const second = b!.query({ name: 'b', text: 'select $1::text as b', values: ['B'] }).then((r) => {
      secondDone = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 300));
    // Interleaved, the second's Sync ended the implicit transaction and with it the first's portal.
    assert.equal(secondDone, false, 'the other connection waits');
    hold.release();
    assert.deepEqual((await first).rows, [{ a: 'A' }]);
    assert.deepEqual((await second).rows, [{ b: 'B' }]);
  });

  for (const [what, text, value] of [
    ['', 'select $1::text as a', 'A'],
    [', even one whose Bind failed', 'select 1 / $1::int as a', 0],
  ] as const) {
    it(`a connection that leaves mid-sequence does not hold the others${what}`, async (t) => {
      const [a, b, c] = await connections(t, 3);
      const hold = holdAfterBind(a!);
      const first = a!.query({ name: 'a', text, values: [value] }).catch((err: Error) => err);
      await hold.bound;
      a!.on('error', () => undefined);
      (a as unknown as { connection: { stream: Stream } }).connection.stream.destroy();
      assert.ok((await first) instanceof Error);
      // A plain query first: a sequence still counted open would then hold everyone for this idle connection.
      assert.deepEqual((await c!.query('select 1 as one')).rows, [{ one: 1 }]);
      assert.deepEqual((await b!.query({ name: 'b', text: 'select $1::text as b', values: ['B'] })).rows, [{ b: 'B' }]);
      assert.deepEqual((await b!.query('select 2 as two')).rows, [{ two: 2 }]);
    });
  }

  it('an error inside a sequence ends with one ReadyForQuery, so the next statement on the connection gets its own rows', async (t) => {
    const [a] = await connections(t, 1);
    // Sent back to back: the driver sends the second on the first ReadyForQuery after the error.
    const failed = a!.query({ name: 'divide', text: 'select 1 / $1::int as q', values: [0] }).catch((err: { code?: string }) => err.code);
    const next = a!.query({ name: 'echo', text: 'select $1::text as said', values: ['next'] });
    assert.equal(await failed, '22012');
    assert.deepEqual((await next).rows, [{ said: 'next' }]);
    assert.deepEqual((await a!.query('select 2 as two')).rows, [{ two: 2 }]);
  });
});
