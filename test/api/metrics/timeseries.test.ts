import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../../helpers/app.js';
import { startNatsServer } from '../../helpers/nats-server.js';
import { createTestDatabase } from '../../helpers/postgres.js';
import { createSession, sendMessage, waitForEvent } from '../../turns/helpers.js';

const PATH = '/v1/durable/metrics/timeseries';

interface Point {
  instance_id: string;
  timestamp: string;
  count: number;
}

const total = (points: Point[], instance?: string) =>
  points.filter((p) => !instance || p.instance_id === instance).reduce((n, p) => n + p.count, 0);

/** Polls the timeseries until `done` holds (distributed counts arrive with the next flush). */
async function until(app: TestApp, done: (body: any) => boolean, query = ''): Promise<any> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const r = await app.request('GET', PATH + query);
    assert.equal(r.status, 200, r.text);
    if (done(r.body)) return r.body;
    if (Date.now() > deadline) throw new Error(`timeseries never matched: ${r.text.slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Every instance has one point per interval, ascending, aligned and contiguous; the last one holds `now`. */
function assertShape(points: Point[], instances: string[], intervalS: number, buckets: number): void {
  assert.equal(points.length, instances.length * buckets);
  for (const id of instances) {
    const own = points.filter((p) => p.instance_id === id);
    assert.equal(own.length, buckets, id);
    const times = own.map((p) => Date.parse(p.timestamp));
    for (const [i, t] of times.entries()) {
      assert.equal(t % (intervalS * 1000), 0, `aligned: ${own[i]!.timestamp}`);
      if (i > 0) assert.equal(t - times[i - 1]!, intervalS * 1000, 'contiguous');
    }
    const last = times.at(-1)!;
    assert.ok(Date.now() >= last && Date.now() < last + intervalS * 1000 + 5000, 'the last point is the interval in progress');
    for (const p of own) assert.ok(Number.isInteger(p.count) && p.count >= 0);
  }
}

describe('GET /v1/durable/metrics/timeseries', () => {
  it('single instance - 1-minute points over 60 minutes by default, no instance_count; a turn shows as claimed and completed', async (t) => {
    const app = await startTestApp(t, { mode: 'postgres', env: { INSTANCE_ID: 'solo' } });
    const empty = await app.request('GET', PATH);
    assert.equal(empty.status, 200, empty.text);
    assert.deepEqual(Object.keys(empty.body), ['metrics']);
    assert.deepEqual(Object.keys(empty.body.metrics).sort(), ['task_claimed', 'task_completed']);
    assertShape(empty.body.metrics.task_claimed, ['solo'], 60, 60);
    assertShape(empty.body.metrics.task_completed, ['solo'], 60, 60);
    assert.equal(total(empty.body.metrics.task_claimed), 0);

    const { id } = await createSession(app);
    assert.equal((await sendMessage(app, id, 'hello')).status, 201);
    await waitForEvent(app, id, 'session.idled');
    const body = await until(app, (b) => total(b.metrics.task_completed) === 1);
    assert.equal(total(body.metrics.task_claimed), 1);
    assert.equal(body.metrics.task_claimed.at(-1).count + body.metrics.task_claimed.at(-2).count, 1, 'counted in the last minute or two');

    const wide = await app.request('GET', `${PATH}?interval_seconds=300&window_seconds=86400`);
    assert.equal(wide.status, 200, wide.text);
    assertShape(wide.body.metrics.task_claimed, ['solo'], 300, 288);
    assert.equal(total(wide.body.metrics.task_completed), 1);
  });

  it('query - 400 for intervals and windows that are not whole minutes, too long, or do not divide', async (t) => {
    const app = await startTestApp(t, { mode: 'postgres' });
    for (const q of [
      'interval_seconds=90',
      'interval_seconds=0',
      'interval_seconds=7200',
      'window_seconds=30',
      'window_seconds=90000',
      'interval_seconds=120&window_seconds=180',
      'interval_seconds=600&window_seconds=300',
      'interval_seconds=abc',
      'bucket=1',
    ]) {
      const r = await app.request('GET', `${PATH}?${q}`);
      assert.equal(r.status, 400, `${q}: ${r.text}`);
      assert.match(r.body.error, /^Invalid request/);
    }
    const ok = await app.request('GET', `${PATH}?interval_seconds=3600&window_seconds=3600`);
    assert.equal(ok.status, 200);
    assert.equal(ok.body.metrics.task_claimed.length, 1);
  });

  it('distributed, 3 instances - any instance answers for all live ones; a stopped instance drops out', async (t) => {
    const nats = await startNatsServer();
    t.after(() => nats.stop());
    const db = await createTestDatabase('timeseries');
    t.after(() => db.drop());
    const env = (name: string) => ({ INSTANCE_ID: name, TIMESERIES_FLUSH_MS: 200, EXPECTED_INSTANCES: 3 });
    const a = await startTestApp(t, { mode: 'nats', databaseUrl: db.url, natsUrl: nats.url, env: env('node-a') });
    const b = await startTestApp(t, { mode: 'nats', databaseUrl: db.url, natsUrl: nats.url, env: env('node-b') });
    const c = await startTestApp(t, { mode: 'nats', databaseUrl: db.url, natsUrl: nats.url, env: env('node-c') });
    const ids = ['node-a', 'node-b', 'node-c'];

    const sessions = await Promise.all([createSession(a), createSession(a), createSession(a), createSession(a)]);
    for (const { id } of sessions) assert.equal((await sendMessage(a, id, 'hi')).status, 201);
    for (const { id } of sessions) await waitForEvent(a, id, 'session.idled');

    // Asked through b: every instance is there, and all 4 turns (claimed by whichever worker got them).
    const body = await until(b, (x) => x.instance_count === 3 && total(x.metrics.task_completed) === 4);
    assert.deepEqual(Object.keys(body).sort(), ['instance_count', 'metrics']);
    assertShape(body.metrics.task_claimed, ids, 60, 60);
    assertShape(body.metrics.task_completed, ids, 60, 60);
    assert.equal(total(body.metrics.task_claimed), 4);
    const perInstance = ids.map((id) => total(body.metrics.task_claimed, id));
    t.diagnostic(`turns claimed per instance: ${perInstance.join(', ')}`);

    // c answers the same counts (its own from memory, the others from the database).
    const fromC = await until(c, (x) => x.instance_count === 3 && total(x.metrics.task_completed) === 4);
    assert.deepEqual(
      ids.map((id) => total(fromC.metrics.task_claimed, id)),
      perInstance,
    );

    await c.app.close();
    const after = await until(a, (x) => x.instance_count === 2);
    assert.deepEqual([...new Set(after.metrics.task_claimed.map((p: Point) => p.instance_id))], ['node-a', 'node-b']);
    assert.equal(total(after.metrics.task_claimed), perInstance[0]! + perInstance[1]!);
  });
});
