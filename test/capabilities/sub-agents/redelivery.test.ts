/**
 * One child per tool call: the sub-agent port run twice for the same tool call (a redelivered
 * parent turn) finds the child the first run made and its turn, and queues no second turn; a
 * parallel burst of distinct calls never exceeds the per-turn fan-out (real database and bus).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSubAgentRunner } from '../../../src/api/sub-agents/index.js';
import type { SubAgentCall } from '../../../src/capabilities/index.js';
import { newId } from '../../../src/ids.js';
import { startTestApp } from '../../helpers/app.js';
import { listEvents } from '../../turns/helpers.js';

for (const mode of ['pglite', 'nats'] as const) {
  describe(`sub-agent port (${mode})`, () => {
    it('a second run of the same tool call reuses its child and its turn; the fan-out holds under a burst', async (t) => {
      const app = await startTestApp(t, { mode });
      const kid = await app.request('POST', '/v1/agents', { body: { name: 'kid', system_prompt: 'You help.' } });
      const boss = await app.request('POST', '/v1/agents', { body: { name: 'boss', system_prompt: 'You lead.' } });
      const parent = await app.request('POST', '/v1/sessions', { body: { agent_id: boss.body.id } });
      assert.equal(parent.status, 201, parent.text);
      const { store, bus, log } = app.app.services;
      const { sessions, turns } = app.app.modules;
      const port = createSubAgentRunner(
        { store, bus, log, sessions: sessions.service, turns: turns.service },
        { maxDepth: 2, maxChildrenPerTurn: 3, maxIterations: 5 },
      );
      const [info] = await port.agents(parent.body.organization_id, ['kid']);
      assert.equal(info?.id, kid.body.id);
      const turnId = newId();
      const call = (toolCallId: string, reports: unknown[] = []): SubAgentCall => ({
        org_id: parent.body.organization_id,
        parent_session_id: parent.body.id,
        parent_turn_id: turnId,
        parent_tool_call_id: toolCallId,
        agent: info!,
        message: 'hello child',
        signal: AbortSignal.timeout(60_000),
        report: async (start) => void reports.push(start),
      });

      const reports: unknown[] = [];
      const first = await port.run(call('call_1', reports));
      assert.equal(first.status, 'completed');
      assert.equal((first as { text: string }).text, 'hello child');
      const again = await port.run(call('call_1'));
      assert.equal(again.child_session_id, first.child_session_id, 'the same child');
      assert.deepEqual(again, first, 'the same outcome, read from the same turn');
      const childEvents = await listEvents(app, first.child_session_id);
      assert.equal(childEvents.filter((e) => e.type === 'turn.started').length, 1, 'one turn only');
      assert.equal(reports.length, 1);

      // Two more distinct calls fit the fan-out of 3 (call_1 counts); a burst of four more gets none.
      const burst = await Promise.allSettled(['a', 'b', 'c', 'd', 'e'].map((id) => port.run(call(`call_${id}`))));
      const ok = burst.filter((r) => r.status === 'fulfilled');
      assert.equal(ok.length, 2, JSON.stringify(burst.map((r) => r.status === 'rejected' && String(r.reason))));
      for (const r of burst.filter((x) => x.status === 'rejected'))
        assert.match(String((r as PromiseRejectedResult).reason), /at most 3 sub-agent sessions \(SUBAGENT_MAX_CHILDREN_PER_TURN\)/);
      const list = (await app.request('GET', '/v1/sessions?limit=100')).body.data;
      assert.equal(list.filter((s: { parent_session_id: string | null }) => s.parent_session_id === parent.body.id).length, 3);
    });
  });
}
