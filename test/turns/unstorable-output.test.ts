import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestApp } from '../helpers/app.js';
import { createSession, getSession, listEvents, sendMessage, waitForEvent } from './helpers.js';

for (const mode of ['pglite', 'postgres'] as const) {
  describe(`turns: model output and tool results that PostgreSQL cannot store as is (${mode})`, () => {
    it('a NUL in tool-call arguments is stored as U+FFFD: the turn ends, the session is idle and takes the next message', async (t) => {
      const app = await startTestApp(t, { mode });
      const { id } = await createSession(app, { capabilities: ['session_storage'] });
      const started = Date.now();
      const sent = await sendMessage(app, id, '@tool kv_store {"operation":"set","key":"k","value":"a\\u0000b"}');
      assert.equal(sent.status, 201, sent.text);
      const events = await waitForEvent(app, id, 'session.idled', { timeoutMs: 20_000 });
      console.log(Date.now() - started, events.map((e) => e.type));
      assert.equal((await getSession(app, id)).status, 'idle');
      assert.equal((await sendMessage(app, id, 'hello again')).status, 201);
    });
  });
}
