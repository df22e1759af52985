/**
 * Per-statement CPU of the embedded database's transports (issue 15 item 4), in one process,
 * without the service: the whole process's CPU (both threads, `process.cpuUsage`) per statement
 * over N statements, C at a time:
 *
 *   node --import tsx bench/real-path/pglite-transport-micro.ts [N] [C]
 *
 * - `socket`: what the service runs (src/db/pglite-thread.ts): PGlite on a worker thread behind
 *   `@electric-sql/pglite-socket` on a unix socket, `pg` clients (pool of 4) sending simple queries;
 * - `port-wire`: the same `pg` client and protocol bytes, carried by a MessagePort (a Duplex
 *   given to `pg` as its stream) to PGlite's `execProtocolRawStream` on a worker thread;
 * - `port-query`: SQL text by MessagePort to PGlite's own `exec` on a worker thread, rows back by
 *   structured clone (no wire protocol, no `pg`: what a custom driver would do).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Duplex } from 'node:stream';
import { Worker } from 'node:worker_threads';
import pg from 'pg';
import { createLogger } from '../../src/log.js';
import { startPgliteThread } from '../../src/db/pglite-thread.js';

const n = Number(process.argv[2] ?? 4000);
const concurrency = Number(process.argv[3] ?? 8);
const ids = Array.from({ length: 100 }, (_, i) => `00000000-0000-7000-8000-${String(i).padStart(12, '0')}`);
const SETUP = [
  'create table if not exists t (id uuid primary key, n int not null, body jsonb not null)',
  'delete from t',
  ...ids.map((id, i) => `insert into t values ('${id}', ${i}, '{"type":"message","data":{"text":"hello there"}}')`),
];
const select = (i: number) => `select body from t where id = '${ids[i % 100]}'`;
const update = (i: number) => `update t set n = n + 1 where id = '${ids[i % 100]}'`;
/** A turn's typical statements: keyed reads and keyed updates. */
const MIXES: [string, (i: number) => string][] = [
  ['selects', select],
  ['updates', update],
];

type Run = (sql: string) => Promise<unknown>;

async function measure(name: string, run: Run): Promise<void> {
  for (const [mix, statement] of MIXES) await measureMix(`${name}, ${mix}`, run, statement);
}

async function measureMix(name: string, run: Run, statement: (i: number) => string): Promise<void> {
  for (let i = 0; i < 500; i++) await run(statement(i)); // warm-up
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await run(statement(next++));
    }),
  );
  const used = process.cpuUsage(cpu);
  const ms = performance.now() - t0;
  const us = (used.user + used.system) / n;
  console.log(
    `${name.padEnd(20)} ${us.toFixed(1).padStart(7)} µs CPU/statement (user ${(used.user / n).toFixed(1)}, system ${(used.system / n).toFixed(1)}), ${((n / ms) * 1000).toFixed(0)} statements/s`,
  );
}

async function socket(): Promise<() => Promise<void>> {
  const dir = mkdtempSync(join(tmpdir(), 'pglite-micro-'));
  const thread = await startPgliteThread({ dataDir: join(dir, 'pglite'), socketDir: dir, maxConnections: 4, log: createLogger('silent') });
  const pool = new pg.Pool({ host: thread.host, port: thread.port, user: 'postgres', database: 'postgres', max: 4 });
  for (const s of SETUP) await pool.query(s);
  await measure('socket', (sql) => pool.query(sql));
  return async () => {
    await pool.end();
    await thread.close();
    rmSync(dir, { recursive: true, force: true });
  };
}

async function startPortWorker(): Promise<{ worker: Worker; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'pglite-micro-'));
  const worker = new Worker(new URL('./pglite-port-worker.ts', import.meta.url), { workerData: { dataDir: join(dir, 'pglite') } });
  await new Promise((resolve) => worker.once('message', resolve));
  return {
    worker,
    async stop() {
      await worker.terminate();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A Duplex over a worker's port, shaped as the net.Socket `pg` expects. */
function portStream(worker: Worker): Duplex {
  const stream = new Duplex({
    read() {},
    write(chunk: Buffer, _enc, done) {
      worker.postMessage({ kind: 'wire', bytes: chunk });
      done();
    },
  });
  worker.on('message', (reply: Uint8Array) => stream.push(Buffer.from(reply.buffer, reply.byteOffset, reply.byteLength)));
  return Object.assign(stream, {
    setNoDelay() {},
    setKeepAlive() {},
    connect() {
      queueMicrotask(() => stream.emit('connect'));
    },
  });
}

async function portWire(): Promise<() => Promise<void>> {
  const { worker, stop } = await startPortWorker();
  const client = new pg.Client({ stream: () => portStream(worker) as never, user: 'postgres', database: 'postgres' });
  await client.connect();
  for (const s of SETUP) await client.query(s);
  // One connection: pg queues its queries itself (as a pooled client would wait in the pool).
  let last: Promise<unknown> = Promise.resolve();
  await measure('port-wire', (sql) => (last = last.then(() => client.query(sql))));
  return stop;
}

async function portQuery(): Promise<() => Promise<void>> {
  const { worker, stop } = await startPortWorker();
  const waiting = new Map<number, (rows: unknown[]) => void>();
  let id = 0;
  worker.on('message', (m: { id: number; rows: unknown[] }) => {
    waiting.get(m.id)?.(m.rows);
    waiting.delete(m.id);
  });
  const run: Run = (sql) =>
    new Promise((resolve) => {
      waiting.set(++id, resolve);
      worker.postMessage({ kind: 'query', id, sql });
    });
  for (const s of SETUP) await run(s);
  await measure('port-query', run);
  return stop;
}

console.log(`${n} statements, ${concurrency} at a time (keyed selects, then keyed updates)`);
for (const start of [socket, portWire, portQuery]) await (await start())();
