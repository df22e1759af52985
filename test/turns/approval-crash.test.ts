import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestApp } from '../helpers/app.js';
import { natsServiceEnv } from '../helpers/nats-server.js';
import { assertLogIntegrity, createSession, getSession, listEvents, sendMessage, watch } from './helpers.js';
import { LOCAL_WEB_FETCH, LOCAL_WEB_FETCH_ENV, startSlowServer } from './slow-server.js';
import { spawnWorker, type LogLine } from './worker-process.js';

/**
 * A turn waiting for a tool approval survives its worker's death (decision 0101): the pending
 * call is in the log, the decision is an event, and the restarted worker runs the approved call
 * exactly once (counted by the tool's own HTTP server), in both modes.
 */
const LEASE_MS = '3000';

for (const mode of ['postgres', 'nats'] as const) {
  describe(`tool approval across a worker crash (${mode})`, () => {
    it('ask → SIGKILL the worker → restart → approve → the tool runs exactly once', async (t) => {
      const server = await startSlowServer();
      t.after(() => server.close());
      const lease = { TURN_CLAIM_TIMEOUT_MS: LEASE_MS };
      const api = await startTestApp(t, { mode, env: { ROLE: 'api', ...lease, ...LOCAL_WEB_FETCH_ENV } });
      const env: Record<string, string> = { DATABASE_URL: api.databaseUrl!, ...lease, ...LOCAL_WEB_FETCH_ENV };
      if (mode === 'nats') Object.assign(env, natsServiceEnv(api.natsUrl!));
      const first = spawnWorker('approval-w1', env, t);
      await first.waitForLog((l) => l.msg === 'turn worker started', 120_000);

      const rules = [{ tool: 'fetch_*', policy: 'always_ask' }];
      const { id } = await createSession(api, { capabilities: [LOCAL_WEB_FETCH] }, { tool_approvals: rules });
      const sse = await watch(api, id);
      t.after(() => sse.close());
      assert.equal((await sendMessage(api, id, `@tool fetch_url {"url":"${server.url}/slow?ms=0&id=once"}`)).status, 201);
      const events = await sse.until('tool.approval_requested', 1, 30_000);
      const callId = events.find((e) => e.type === 'tool.approval_requested')!.data['tool_calls'][0].id;
      const deadline = Date.now() + 15_000;
      while ((await getSession(api, id)).status !== 'waiting_for_tool_results') {
        assert.ok(Date.now() < deadline, 'the session never showed it waits');
        await new Promise((r) => setTimeout(r, 25));
      }
      first.kill('SIGKILL');

      const second = spawnWorker('approval-w2', env, t);
      await second.waitForLog((l: LogLine) => l.msg === 'turn worker started', 120_000);
      const r = await api.request('POST', `/v1/sessions/${id}/approvals`, {
        body: { approvals: [{ tool_call_id: callId, approved: true }] },
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.accepted, 1);

      const done = await sse.until('session.idled', 1, 30_000);
      assert.equal(server.hits.get('once'), 1, 'the approved call ran exactly once');
      assert.equal(done.filter((e) => e.type === 'tool.approval_requested').length, 1, 'asked once');
      assert.equal(done.filter((e) => e.type === 'tool.started').length, 1);
      const results = done.filter((e) => e.type === 'tool.completed');
      assert.equal(results.length, 1);
      assert.equal(results[0]!.data['success'], true);
      assert.equal(done.filter((e) => e.type === 'turn.completed').length, 1);
      assert.equal((await getSession(api, id)).status, 'idle');
      assertLogIntegrity(await listEvents(api, id));
    });
  });
}
