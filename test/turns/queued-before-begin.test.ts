/**
 * A message queued (`on_busy: enqueue`) while the running turn is accepted but not yet begun by
 * its worker: the turn's first events carry ids minted when it was accepted, and the SQL log
 * keeps ids increasing, so an `input.queued` stored before them had them refused and the turn
 * failed for good. The queue event now waits for the running turn's `turn.started`; both turns
 * run once. The worker's claims are slowed so the window is wide. Embedded mode (PGlite) and
 * PostgreSQL, the two SQL logs.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import type { SessionEvent } from '../../schemas/events.js';
import type { Bus, ClaimOptions, TurnClaim, TurnQueue } from '../../src/bus/ports.js';
import { startTestApp } from '../helpers/app.js';
import { assertLogIntegrity, createSession, listEvents, sendMessage, waitForEvent } from './helpers.js';

/** How long each claim is held before the worker sees it: the accepted turn waits that long to begin. */
const CLAIM_DELAY_MS = 1_000;

function slowClaims(bus: Bus<SessionEvent>): Bus<SessionEvent> {
  const queue = bus.turns;
  const claim = async (workerId: string, opts?: ClaimOptions): Promise<TurnClaim | null> => {
    const c = await queue.claim(workerId, opts);
    if (c) await sleep(CLAIM_DELAY_MS);
    return c;
  };
  return { ...bus, turns: Object.assign(Object.create(queue) as TurnQueue, { claim }) };
}

for (const mode of ['pglite', 'postgres'] as const) {
  describe(`messages queued before the running turn began (${mode})`, () => {
    it('enqueue right after a 201: the first turn still runs, then the queued one; nothing fails', async (t) => {
      const app = await startTestApp(t, { mode, appOptions: { wrapBus: slowClaims } });
      const { id } = await createSession(app);
      assert.equal((await sendMessage(app, id, 'first')).status, 201);
      const queued = await app.request('POST', `/v1/sessions/${id}/messages`, {
        body: { message: { content: [{ type: 'text', text: 'second' }] }, on_busy: 'enqueue' },
      });
      assert.equal(queued.status, 202, queued.text);
      await waitForEvent(app, id, 'session.idled', { n: 2, timeoutMs: 60_000 });
      const events = await listEvents(app, id);
      assert.equal(events.filter((e) => e.type === 'turn.failed').length, 0, JSON.stringify(events.find((e) => e.type === 'turn.failed')));
      assert.equal(events.filter((e) => e.type === 'turn.completed').length, 2);
      const queuedAt = events.findIndex((e) => e.type === 'input.queued');
      const firstStarted = events.findIndex((e) => e.type === 'turn.started');
      assert.ok(queuedAt > firstStarted, 'input.queued is stored after the running turn’s first events');
      assertLogIntegrity(events);
    });
  });
}
