import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { SessionEvent } from '../../schemas/events.js';
import { createBus, UnstorableEventError, type Bus } from '../../src/bus/index.js';
import { rawLog } from '../helpers/raw-log.js';
import { createStore } from '../../src/db/index.js';
import { newId } from '../../src/ids.js';
import { createLogger } from '../../src/log.js';
import { asTerminal } from '../../src/turns/turn-errors.js';
import { turnEvents, type TurnRef } from '../../src/turns/turn-events.js';
import { TurnLog } from '../../actors/session/log/turn-log.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { seedEmbeddedDataDir } from '../helpers/pglite-template.js';

/**
 * An append PostgreSQL refuses for what its events hold is refused for good: it must say so at
 * once (not look like an outage that retries and redeliveries wait out), store nothing, and leave
 * the log usable (issue 30: such a refusal kept a session `active` for 22 minutes).
 */
const log = createLogger('silent');

async function localBus(
  t: { after(fn: () => unknown): void },
  database?: { url: string; drop(): Promise<void> },
): Promise<Bus<SessionEvent>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bus-unstorable-'));
  if (!database) await seedEmbeddedDataDir(dataDir);
  const store = await createStore({ dataDir, databaseUrl: database?.url, log });
  const bus = await createBus<SessionEvent>({ kind: 'local', store, log, leaseMs: 1000 });
  t.after(async () => {
    await bus.close();
    await store.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return bus;
}

/** A value JSON.stringify writes as a string with a NUL: what the turn log's repair does not see. */
class Opaque {
  toJSON(): string {
    return 'a\u0000b';
  }
}

for (const mode of ['pglite', 'postgres'] as const) {
  describe(`local event log: content the store refuses (${mode})`, () => {
    it('a NUL or a lone surrogate is refused at once with UnstorableEventError, nothing stored, the log goes on', async (t) => {
      const bus = await localBus(t, mode === 'postgres' ? await createTestDatabase('bus_unstorable') : undefined);
      const session = newId();
      for (const text of ['a\u0000b', 'x\ud800y']) {
        const started = Date.now();
        await assert.rejects(rawLog(bus.events).append(session, [{ id: newId(), type: 'note', data: { text } }]), UnstorableEventError);
        assert.ok(Date.now() - started < 2_000, `refused after ${Date.now() - started} ms`);
      }
      assert.equal(await bus.events.lastSequence(session), 0);
      const ok = await rawLog(bus.events).append(session, [{ id: newId(), type: 'note', data: { text: 'fine' } }], { expectedSequence: 0 });
      assert.ok(ok.ok);
      assert.equal(ok.events[0]!.sequence, 1);
    });

    it("a turn's refused batch is dropped, the failure is no longer sticky, and turn.failed is recorded on what is stored", async (t) => {
      const bus = await localBus(t, mode === 'postgres' ? await createTestDatabase('bus_unstorable_turn') : undefined);
      const sessionId = newId();
      const turn: TurnRef = { turn_id: newId(), input_message_id: newId() };
      const tl = await TurnLog.open({ events: bus.events, claim: { isCurrent: async () => true }, sessionId, turn });
      await tl.commit([turnEvents.turnStarted(turn.turn_id, turn), turnEvents.sessionActivated(newId(), turn)]);
      const reason = turnEvents.reasonStarted(newId(), turn, 1);
      const bad = { ...turnEvents.outputStarted(newId(), turn, 'llmsim', 1), metadata: { opaque: new Opaque() } };
      const refused = await tl.commit([reason, bad]).then(
        () => null,
        (err: unknown) => err,
      );
      assert.ok(refused instanceof UnstorableEventError, String(refused));
      assert.equal(asTerminal(refused)?.errorCode, 'internal_error');
      assert.throws(() => tl.push([turnEvents.reasonStarted(newId(), turn, 2)]), UnstorableEventError, 'sticky until dropped');

      assert.equal(tl.dropUnappended(), true);
      assert.equal(tl.state.steps.length, 0, 'the view is what is stored');
      await tl.commit([turnEvents.turnFailed(newId(), turn, { error: refused.message, error_code: 'internal_error', iterations: 0 })]);
      const stored = await bus.events.read(sessionId);
      assert.deepEqual(
        stored.map((e) => e.type),
        ['turn.started', 'session.activated', 'turn.failed'],
      );
      assert.equal(tl.state.outcome, 'failed');
    });
  });
}
