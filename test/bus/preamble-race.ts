import assert from 'node:assert/strict';
import type { Bus, NewLoggedEvent, LoggedEvent } from '../../src/bus/ports.js';
import { newId } from '../../src/ids.js';

/**
 * One session: an event, then a turn's preamble appended by two writers at once (the API and a
 * worker re-sending it), after `prepare` (which may stage its ids); both must see each event once,
 * numbered 2..5, and the log must hold exactly that.
 */
export async function racePreamble(
  [a, b]: readonly [Bus<LoggedEvent>, Bus<LoggedEvent>],
  prepare: (sessionId: string, batch: readonly Required<Pick<NewLoggedEvent, 'id'>>[]) => Promise<void> = async () => {},
): Promise<void> {
  const sid = newId();
  assert.ok((await a.events.append(sid, [{ type: 'before' }])).ok);
  const batch = ['input.message', 'session.started', 'turn.started', 'session.activated'].map((type) => ({ id: newId(), type }));
  await prepare(sid, batch);
  const [ra, rb] = await Promise.all([a.events.append(sid, batch), b.events.append(sid, batch)]);
  for (const r of [ra, rb]) {
    assert.ok(r.ok);
    assert.deepEqual(
      r.events.map((e) => [e.id, e.sequence]),
      batch.map((e, i) => [e.id, i + 2]),
    );
  }
  assert.deepEqual(
    (await b.events.read(sid)).map((e) => [e.type, e.sequence]),
    [['before', 1], ...batch.map((e, i) => [e.type, i + 2])],
  );
}
