import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { SessionEvent } from '../../../schemas/events.js';
import { waitForChildTurn } from '../../../src/api/sub-agents/index.js';
import { createBus } from '../../../src/bus/index.js';
import { createStore } from '../../../src/db/index.js';
import { newId } from '../../../src/ids.js';
import { createLogger } from '../../../src/log.js';
import { createTestDatabase } from '../../helpers/postgres.js';

/**
 * A caller that continues a session (a sub-agent's parent, an MCP client) sends its next message
 * as soon as it has the answer: the answer waits for the session to idle after the turn, or that
 * message could be refused as busy (seen once in CI: "Session is busy" on an MCP call that
 * continued a session right after the previous one's answer).
 */
test('waitForChildTurn answers a finished turn once the session has idled after it', async (t) => {
  const db = await createTestDatabase('child_turn');
  const dataDir = mkdtempSync(join(tmpdir(), 'child-turn-'));
  const log = createLogger('silent');
  const store = await createStore({ dataDir, databaseUrl: db.url, log });
  const bus = await createBus<SessionEvent>({ kind: 'local', store, log, leaseMs: 1000 });
  t.after(async () => {
    await bus.close();
    await store.close();
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const sessionId = newId();
  const context = { turn_id: 't1', input_message_id: 'm1' };
  const usage = { input_tokens: 3, output_tokens: 2, cache_read_tokens: 0 };
  const append = (type: string, data: Record<string, unknown>) =>
    bus.events.append(sessionId, [{ type, context, data } as unknown as SessionEvent]);

  let answered = false;
  const answer = waitForChildTurn(bus.events, sessionId, 't1', AbortSignal.timeout(30_000)).then((end) => {
    answered = true;
    return end;
  });
  await append('output.message.completed', { message: { id: 'a1', role: 'agent', content: [{ type: 'text', text: 'done' }] } });
  await append('turn.completed', { iterations: 1, duration_ms: 5, usage });
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(answered, false, 'turn.completed alone: the session is not idle yet');
  await append('session.idled', { turn_id: 't1', iterations: 1, usage });
  assert.deepEqual(await answer, { status: 'completed', text: 'done', usage });
});
