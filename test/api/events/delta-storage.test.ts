import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SessionEvent } from '../../../schemas/events.js';
import { withAccumulatedDeltas } from '../../../src/events/accumulating-log.js';
import { sharedTestApp, startTestApp, type TestApp } from '../../helpers/app.js';
import { openSse } from '../../helpers/sse-client.js';
import { createSession, sendMessage, waitForEvent, watch, type StoredEvent } from '../../turns/helpers.js';
import { dataOf } from '../../helpers/raw-log.js';

/** ~4,000 filler tokens, one per ms: about 40 delta batches of a ~24 KB reply. */
const LONG_REPLY = '@tokens 4000 delay=1';
/**
 * How long a long reply may take: 4,000 timer wake-ups, ~10 s with the suite's files beside it,
 * over a minute on a machine loaded ten times over. A guard, not a bound under test.
 */
const LONG_REPLY_WAIT_MS = 180_000;
const isDelta = (e: { type: string }) => e.type === 'output.message.delta';

/** Every delta's `accumulated` is the concatenation of the deltas of its message so far, and the last one is the completed text. */
function assertAccumulated(events: readonly StoredEvent[]): void {
  let text = '';
  for (const e of events) {
    if (e.type === 'output.message.started') text = '';
    if (!isDelta(e)) continue;
    text += e.data['delta'];
    assert.equal(e.data['accumulated'], text, `accumulated of delta #${e.sequence}`);
  }
  const completed = events.find((e) => e.type === 'output.message.completed')!;
  assert.equal(completed.data['message'].content[0].text, text);
}

/** The session's events as the bus stores them (not as served). */
async function stored(app: TestApp, sessionId: string): Promise<SessionEvent[]> {
  return app.app.services.bus.events.read(sessionId, { afterSequence: 0, limit: 100_000 });
}

async function longTurn(app: TestApp): Promise<{ id: string; events: StoredEvent[] }> {
  const { id } = await createSession(app);
  assert.equal((await sendMessage(app, id, LONG_REPLY)).status, 201);
  return { id, events: await waitForEvent(app, id, 'session.idled', { timeoutMs: LONG_REPLY_WAIT_MS }) };
}

for (const mode of ['postgres', 'nats'] as const) {
  describe(`events: long replies (${mode})`, () => {
    const shared = sharedTestApp({ mode });
    it('a long reply stores its deltas in linear space: no `accumulated` stored, a few times the reply in all', async () => {
      const app = shared();
      const { id, events } = await longTurn(app);
      const deltas = (await stored(app, id)).filter(isDelta);
      assert.ok(deltas.length >= 10, `expected many delta batches, got ${deltas.length}`);
      for (const d of deltas) assert.equal('accumulated' in d.data, false, 'a stored delta carries no accumulated');
      const reply = events.find((e) => e.type === 'output.message.completed')!.data['message'].content[0].text as string;
      const storedBytes = deltas.reduce((n, d) => n + Buffer.byteLength(JSON.stringify(d)), 0);
      // Each batch: its text plus ~400 bytes of envelope. Storing the text so far in each made this ~deltas/2 times the reply.
      assert.ok(
        storedBytes < 2 * reply.length + deltas.length * 600,
        `stored ${storedBytes} bytes of deltas for a ${reply.length}-char reply`,
      );
      assertAccumulated(events);
    });

    it('SSE serves every delta with its accumulated text, live and when resumed mid-message', async (t) => {
      const app = shared();
      const { id } = await createSession(app);
      const live = await watch(app, id);
      t.after(() => live.close());
      assert.equal((await sendMessage(app, id, LONG_REPLY)).status, 201);
      const all = await live.until('session.idled', 1, LONG_REPLY_WAIT_MS);
      assertAccumulated(all);
      const deltas = all.filter(isDelta);
      const middle = deltas[Math.floor(deltas.length / 2)]!;
      // A second client from the middle of the message: the first delta it gets carries all text before it.
      const conn = await openSse(`${app.url}/v1/sessions/${id}/sse?since_id=${middle.id}`, { key: app.adminKey });
      t.after(() => conn.close());
      await conn.waitFor((e) => e.event === 'session.idled', 1, LONG_REPLY_WAIT_MS);
      const fromMiddle = conn.events
        .filter((e) => e.event !== 'connected' && e.event !== 'disconnecting')
        .map((e) => JSON.parse(e.data) as StoredEvent);
      const expected = all.filter((e) => e.sequence > middle.sequence);
      assert.deepEqual(
        fromMiddle.map((e) => [e.id, e.data['accumulated']]),
        expected.map((e) => [e.id, e.data['accumulated']]),
      );
    });
  });
}

describe('events: accumulated derived on read', () => {
  it('a reader that starts mid-message (no text seen before) reads the message back to its start', async (t) => {
    const app = await startTestApp(t, { mode: 'postgres' });
    const { id, events } = await longTurn(app);
    const deltas = events.filter(isDelta);
    const last = deltas.at(-1)!;
    // A fresh reader knows no text of the session: its first page starts at the last delta.
    const fresh = withAccumulatedDeltas(app.app.services.bus.events);
    const [served] = await fresh.read(id, { afterSequence: last.sequence - 1, limit: 1 });
    assert.equal(dataOf(served)['accumulated'], last.data['accumulated']);
    assert.equal(dataOf(served)['accumulated'], deltas.map((d) => d.data['delta']).join(''));
    const found = await withAccumulatedDeltas(app.app.services.bus.events).findById(id, deltas[3]!.id);
    assert.equal(dataOf(found)['accumulated'], deltas[3]!.data['accumulated']);
  });
});

describe('events: listing bounded by bytes', () => {
  it('GET events stops a page at EVENTS_LIST_MAX_BYTES with has_more; paging with since_id yields every event', async (t) => {
    const maxBytes = 65_536;
    const app = await startTestApp(t, { mode: 'postgres', env: { EVENTS_LIST_MAX_BYTES: maxBytes } });
    const { id, events } = await longTurn(app);
    const total = events.reduce((n, e) => n + Buffer.byteLength(JSON.stringify(e)), 0);
    assert.ok(total > 4 * maxBytes, `the session's events take ${total} bytes`);

    const paged: StoredEvent[] = [];
    let pages = 0;
    for (;;) {
      const since = paged.at(-1)?.id;
      const r = await app.request('GET', `/v1/sessions/${id}/events${since ? `?since_id=${since}` : ''}`);
      assert.equal(r.status, 200, r.text);
      pages++;
      // One event may exceed the bound alone (a page has at least one); here none does.
      assert.ok(Buffer.byteLength(r.text) <= maxBytes + 64, `page ${pages} answered ${Buffer.byteLength(r.text)} bytes`);
      paged.push(...r.body.data);
      if (!r.body.has_more) break;
      assert.ok(r.body.data.length > 0);
    }
    assert.ok(pages > 4, `${pages} pages`);
    assert.deepEqual(
      paged.map((e) => e.id),
      events.map((e) => e.id),
    );
    assertAccumulated(paged);

    // Newest first: the page is the newest events that fit, and before_sequence goes on from there.
    const desc = await app.request('GET', `/v1/sessions/${id}/events?order_desc=true`);
    assert.equal(desc.body.has_more, true);
    assert.ok(Buffer.byteLength(desc.text) <= maxBytes + 64);
    assert.equal(desc.body.data[0].id, events.at(-1)!.id);
  });
});
