/**
 * Issue 26 item 2 (docs/decisions/0099-session-snapshots.md): a turn with no cached fold starts
 * from the session's stored snapshot and reads only the events after it, on another instance
 * after a restart, in both modes; a snapshot of another fold version is ignored and rebuilt; a
 * deleted session's snapshot goes. The events a turn read are the metric the test asserts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { FOLD_VERSION, decodeTranscript, encodeTranscript } from '../../actors/session/log/snapshot-codec.js';
import { refreshInterval } from '../../actors/session/log/snapshot-store.js';
import { emptyTranscript, extendTranscript } from '../../actors/session/log/transcript.js';
import { startTestApp, type TestApp, type TestMode } from '../helpers/app.js';
import { seedEmbeddedDataDir } from '../helpers/pglite-template.js';
import { scrape } from '../helpers/prometheus.js';
import { assertLogIntegrity, createSession, getSession, listEvents, sendMessage, typesOf, type StoredEvent } from './helpers.js';

const TOKEN = 'snapshot-metrics-token-0123456789';
/** Large enough that an instance started with it writes no snapshot during the test. */
const NEVER = 1_000_000;

interface Shared {
  mode: TestMode;
  dataDir?: string;
  databaseUrl?: string;
  natsUrl?: string;
}

async function instance(t: { after(fn: () => unknown): void }, s: Shared, interval: number): Promise<TestApp> {
  const env = { METRICS_TOKEN: TOKEN, SESSION_SNAPSHOT_INTERVAL_EVENTS: interval, ...(s.dataDir ? { DATA_DIR: s.dataDir } : {}) };
  const app = await startTestApp(t, {
    mode: s.mode,
    env,
    ...(s.databaseUrl ? { databaseUrl: s.databaseUrl } : {}),
    ...(s.natsUrl ? { natsUrl: s.natsUrl } : {}),
  });
  s.databaseUrl ??= app.databaseUrl;
  s.natsUrl ??= app.natsUrl;
  return app;
}

async function untilStatus(app: TestApp, sessionId: string, status: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while ((await getSession(app, sessionId)).status !== status) {
    assert.ok(Date.now() < deadline, `the session did not become ${status}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function turn(app: TestApp, sessionId: string, text: string): Promise<void> {
  const r = await sendMessage(app, sessionId, text);
  assert.equal(r.status, 201, r.text);
  await untilStatus(app, sessionId, 'idle');
}

const ASK_USER = {
  type: 'client',
  name: 'ask_user',
  description: 'Ask the user.',
  parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
};

interface SnapshotRow {
  version: number;
  sequence: number;
}

async function snapshotOf(app: TestApp, sessionId: string): Promise<SnapshotRow | undefined> {
  const rows = await app.app.services.store.sql<SnapshotRow>('select version, sequence from session_snapshots where session_id = ?', [
    sessionId,
  ]);
  return rows[0];
}

/** Waits until the session's snapshot is at the log's last event (written after the turn settled). */
async function snapshotAtEnd(app: TestApp, sessionId: string): Promise<number> {
  const last = (await listEvents(app, sessionId)).at(-1)!.sequence;
  const deadline = Date.now() + 10_000;
  for (;;) {
    const row = await snapshotOf(app, sessionId);
    if (row?.version === FOLD_VERSION && row.sequence === last) return last;
    assert.ok(Date.now() < deadline, `no snapshot at ${last}: ${JSON.stringify(row)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function metrics(app: TestApp) {
  const s = await scrape(`${app.url}/metrics`, TOKEN);
  return {
    read: s.value('agent_session_turn_log_events_read_total'),
    hit: s.value('agent_session_session_snapshot_loads_total', { result: 'hit' }),
    stale: s.value('agent_session_session_snapshot_loads_total', { result: 'stale' }),
  };
}

const lastSequence = (events: StoredEvent[]) => events.at(-1)!.sequence;

for (const mode of ['pglite', 'nats'] as const) {
  describe(`session snapshots (${mode === 'pglite' ? 'embedded' : 'distributed'})`, () => {
    it('a turn on another instance after a restart reads the snapshot and the tail only; another version is rebuilt; delete removes it', async (t) => {
      const shared: Shared = { mode };
      if (mode === 'pglite') {
        shared.dataDir = mkdtempSync(join(tmpdir(), 'ass-snap-'));
        t.after(() => rmSync(shared.dataDir!, { recursive: true, force: true }));
        await seedEmbeddedDataDir(shared.dataDir);
      }
      // Instance A writes snapshots (every 5 events: at every turn's end).
      const a = await instance(t, shared, 5);
      const { id } = await createSession(a);
      await turn(a, id, 'one');
      await turn(a, id, 'two');
      const snapshotAt = await snapshotAtEnd(a, id);
      await a.app.close();

      // Instance A2 writes none: the log grows past the snapshot by two turns.
      const a2 = await instance(t, shared, NEVER);
      await turn(a2, id, 'three');
      await turn(a2, id, 'four');
      const before = lastSequence(await listEvents(a2, id));
      assert.equal((await snapshotOf(a2, id))?.sequence, snapshotAt, 'A2 wrote no snapshot');
      await a2.app.close();

      // Instance B, cold: its turn starts from the snapshot and reads the tail only.
      const b = await instance(t, shared, NEVER);
      const m0 = await metrics(b);
      await turn(b, id, 'five');
      const m1 = await metrics(b);
      assert.equal(m1.hit - m0.hit, 1, 'the turn used the stored snapshot');
      const tail = before - snapshotAt;
      assert.ok(tail > 0 && tail < before, `tail ${tail} of ${before}`);
      assert.equal(m1.read - m0.read, tail, `events read: the ${tail} after the snapshot, not the ${before} of the log`);
      const events = await listEvents(b, id);
      assert.equal(events.filter((e) => e.type === 'output.message.completed').length, 5, 'five turns answered');

      // A snapshot of another fold version is ignored: the next cold turn folds the log and stores a new one.
      await b.app.services.store.sql('update session_snapshots set version = ? where session_id = ?', [FOLD_VERSION + 1000, id]);
      await b.app.close();
      const c = await instance(t, shared, 5);
      const whole = lastSequence(await listEvents(c, id));
      const c0 = await metrics(c);
      await turn(c, id, 'six');
      const c1 = await metrics(c);
      assert.equal(c1.stale - c0.stale, 1, 'the stale snapshot was seen');
      assert.equal(c1.hit - c0.hit, 0, 'and not used');
      assert.equal(c1.read - c0.read, whole, 'the turn folded the whole log');
      await snapshotAtEnd(c, id);

      // Deleting the session deletes its snapshot.
      const del = await c.request('DELETE', `/v1/sessions/${id}`);
      assert.equal(del.status, 204, del.text);
      assert.equal(await snapshotOf(c, id), undefined);
    });

    it('a turn suspended for a client tool resumes on another instance from the snapshot taken mid-turn', async (t) => {
      const shared: Shared = { mode };
      if (mode === 'pglite') {
        shared.dataDir = mkdtempSync(join(tmpdir(), 'ass-snap-'));
        t.after(() => rmSync(shared.dataDir!, { recursive: true, force: true }));
        await seedEmbeddedDataDir(shared.dataDir);
      }
      const a = await instance(t, shared, 1);
      const { id } = await createSession(a, { client_tools: [ASK_USER] });
      await turn(a, id, 'hello');
      assert.equal((await sendMessage(a, id, '@tool ask_user {"q":"colour?"}')).status, 201);
      await untilStatus(a, id, 'waiting_for_tool_results');
      const snapshotAt = await snapshotAtEnd(a, id);
      const callId = (await listEvents(a, id)).find((e) => e.type === 'tool.call_requested')!.data['tool_calls'][0].id;
      await a.app.close();

      // The resume starts from a snapshot without turn state: the turn's own events are replayed into it.
      const b = await instance(t, shared, NEVER);
      const m0 = await metrics(b);
      const r = await b.request('POST', `/v1/sessions/${id}/tool-results`, {
        body: { tool_results: [{ tool_call_id: callId, result: 'blue' }] },
      });
      assert.equal(r.status, 200, r.text);
      await untilStatus(b, id, 'idle');
      const m1 = await metrics(b);
      assert.equal(m1.hit - m0.hit, 1);
      const events = await listEvents(b, id);
      assertLogIntegrity(events);
      const turnId = events.filter((e) => e.type === 'turn.started').at(-1)!.data['turn_id'];
      const types = typesOf(events, turnId);
      assert.deepEqual(types.slice(-2), ['turn.completed', 'session.idled']);
      assert.equal(types.filter((x) => x === 'turn.started').length, 1, 'one turn, resumed');
      const reply = events.filter((e) => e.type === 'output.message.completed').at(-1)!;
      assert.match(reply.data['message'].content[0].text, /ask_user: "?blue/);
      const firstOfTurn = events.find((e) => e.context['turn_id'] === turnId)!.sequence;
      assert.ok(
        m1.read - m0.read < snapshotAt - firstOfTurn + 2 * (events.length - snapshotAt) + 4,
        `read ${m1.read - m0.read}: the turn's events, not the session's`,
      );
    });
  });
}

describe('snapshot codec', () => {
  it('round-trips a transcript with tool results, keeping keys that look like its tags', () => {
    const ev = (sequence: number, type: string, data: Record<string, unknown>) =>
      ({ id: `e${sequence}`, type, ts: '', session_id: 's', sequence, context: { turn_id: 't' }, data }) as never;
    const t = extendTranscript(emptyTranscript(), [
      ev(1, 'input.message', { message: { role: 'user', content: [{ type: 'text', text: 'hi' }] } }),
      ev(2, 'output.message.completed', {
        message: { role: 'assistant', content: [{ type: 'tool_call', id: 'c1', name: 'x', arguments: { $map: [1], $$set: 'y', k: 1 } }] },
        usage: { input_tokens: 1, output_tokens: 1 },
        metadata: { model: 'm' },
      }),
      ev(3, 'tool.completed', { tool_call_id: 'c1', tool_name: 'x', success: true, result: [{ type: 'text', text: 'ok' }] }),
    ]);
    const back = decodeTranscript(encodeTranscript(t));
    assert.deepEqual(back, t);
    assert.ok((back!.entries[1] as { results: unknown }).results instanceof Map);
    assert.equal(decodeTranscript('not json'), null);
    assert.equal(decodeTranscript('{"entries": 1}'), null);
  });
});

describe('snapshot interval', () => {
  it("grows with the transcript, so a write's share of a turn does not grow with the history", () => {
    const entries = (n: number) => ({ ...emptyTranscript(), entries: Array.from({ length: n }, () => ({}) as never) });
    assert.equal(refreshInterval(200, entries(50)), 200, "the operator's interval for a short history");
    assert.equal(refreshInterval(200, entries(1_300)), 1_300, 'as many events as entries for a long one');
    // A write stores the whole transcript: bytes written per event stay about one entry's share.
    const perEvent = (n: number) => n / refreshInterval(200, entries(n));
    assert.ok(perEvent(5_000) <= perEvent(200), 'entries written per event do not grow');
  });
});
