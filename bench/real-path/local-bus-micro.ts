/**
 * The embedded bus's share of a real-path turn, in one process, without HTTP, LLM or load
 * generator: CPU µs (the whole process, both threads: `process.cpuUsage`) and SQL statements
 * per turn of what bench/real-path does to the local bus on PGlite for one conversation — the
 * session's first event, the SSE feed opened at the tail, the message, enqueue and claim, the
 * worker's read of the log, six fenced appends (the claim checked before each), ack:
 *
 *   node --experimental-async-context-frame --import tsx bench/real-path/local-bus-micro.ts [ROOT] [N] [K]
 *
 * ROOT: the checkout to measure (default: this one), e.g. /work/wt/perf-base; K turns at a time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(process.argv[2] ?? resolve(dirname(fileURLToPath(import.meta.url)), '../..'));
const n = Number(process.argv[3] ?? 400);
const k = Number(process.argv[4] ?? 10);
const { createStore } = (await import(`${root}/src/db/index.ts`)) as typeof import('../../src/db/index.js');
const { createBus } = (await import(`${root}/src/bus/index.ts`)) as typeof import('../../src/bus/index.js');
const { createLogger } = (await import(`${root}/src/log.ts`)) as typeof import('../../src/log.js');
const { newId } = (await import(`${root}/src/ids.ts`)) as typeof import('../../src/ids.js');

const log = createLogger('silent');
const dataDir = mkdtempSync(join(tmpdir(), 'bus-micro-'));
const store = await createStore({ dataDir, log });
let statements = 0;
const sql = store.sql.bind(store);
store.sql = ((query: string, params?: unknown[]) => {
  statements++;
  return sql(query, params);
}) as typeof store.sql;
const bus = await createBus({ kind: 'local', store, log });

async function turn(): Promise<void> {
  const sid = newId();
  await bus.events.append(sid, [{ type: 'session.created', data: { title: 'bench' } }]);
  const sub = bus.events.subscribe(sid, { afterSequence: await bus.events.lastSequence(sid) });
  const seen = (async () => {
    for await (const e of sub) if (e.type === 'turn.completed') return;
  })();
  await bus.events.append(sid, [{ type: 'message.user', data: { text: 'what time is it?' } }]);
  await bus.turns.enqueue({ session_id: sid, turn_id: newId(), job: {} });
  const claim = await bus.turns.claim(`w-${sid}`, { waitMs: 5000 });
  if (!claim) throw new Error('no claim');
  await bus.events.read(claim.turn.session_id);
  const steps = ['turn.started', 'reason.completed', 'tool.started', 'tool.completed', 'message.agent', 'turn.completed'];
  for (const type of steps) {
    if (!(await claim.isCurrent())) throw new Error('claim lost');
    await bus.events.append(sid, [{ type, data: { text: 'x'.repeat(200) } }]);
  }
  await claim.ack();
  await seen;
  sub.close();
}

async function run(count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: k }, async () => {
      while (next++ < count) await turn();
    }),
  );
}

await run(100); // warm-up
statements = 0;
const cpu = process.cpuUsage();
const t0 = performance.now();
await run(n);
const used = process.cpuUsage(cpu);
console.log(
  `${root}: ${n} turns, ${k} at a time: ${((used.user + used.system) / n).toFixed(0)} µs CPU per turn, ${(statements / n).toFixed(1)} statements per turn, ${((n / (performance.now() - t0)) * 1000).toFixed(0)} turns/s`,
);
await bus.close();
await store.close();
rmSync(dataDir, { recursive: true, force: true });
