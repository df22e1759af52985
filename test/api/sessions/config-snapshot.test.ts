import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sessionConfigBackfillSql } from '../../../src/db/migrations/0010-session-config.js';
import { sharedTestApp, type TestApp } from '../../helpers/app.js';
import { createAgent, getSession, sendMessage, waitForEvent, type StoredEvent } from '../../turns/helpers.js';

/** A prompt llmsim counts as 1,000 input tokens (it counts words). */
const LONG_PROMPT = Array.from({ length: 1000 }, (_, i) => `rule${i}`).join(' ');
const TOOLS_MESSAGE = '@tool kv_store {"operation":"list"}\n@tool get_current_time {}';

/** Runs one turn calling kv_store and get_current_time; returns that turn's tool results by name and its prompt size. */
async function runToolTurn(app: TestApp, sessionId: string, n: number) {
  assert.equal((await sendMessage(app, sessionId, TOOLS_MESSAGE)).status, 201);
  const events = await waitForEvent(app, sessionId, 'session.idled', { n });
  const turnId = events.filter((e) => e.type === 'turn.started')[n - 1]!.data['turn_id'];
  const ofTurn = (type: string) => events.filter((e) => e.type === type && e.context['turn_id'] === turnId);
  const results = new Map(ofTurn('tool.completed').map((e: StoredEvent) => [e.data['tool_name'] as string, e.data]));
  const inputTokens = ofTurn('llm.generation')[0]!.metadata!['usage'].input_tokens as number;
  return { results, inputTokens };
}

for (const mode of ['postgres', 'pglite'] as const) {
  describe(`sessions: configuration snapshot (${mode})`, () => {
    const shared = sharedTestApp({ mode });
    it('editing the agent does not change an existing session; switching agent_id applies the new agent from the next turn', async () => {
      const app = shared();
      const agentA = await createAgent(app, { system_prompt: 'Short.', capabilities: ['current_time'] });
      const created = await app.request('POST', '/v1/sessions', { body: { agent_id: agentA } });
      assert.equal(created.status, 201, created.text);
      const id = created.body.id as string;
      const features = created.body.features as string[];
      assert.ok(!features.includes('key_value'));

      const edited = await app.request('PATCH', `/v1/agents/${agentA}`, {
        body: { system_prompt: LONG_PROMPT, capabilities: ['current_time', 'session_storage'] },
      });
      assert.equal(edited.status, 200, edited.text);
      assert.deepEqual((await getSession(app, id)).features, features, 'features unchanged by the agent edit');
      assert.equal((await app.request('GET', `/v1/sessions/${id}/storage/keys`)).status, 404, 'no key/value storage either');

      const first = await runToolTurn(app, id, 1);
      assert.equal(first.results.get('kv_store')?.['error'], 'Unknown tool: kv_store', 'the added capability is not offered');
      assert.equal(first.results.get('get_current_time')?.['success'], true);
      assert.ok(first.inputTokens < 200, `the old prompt was used (${first.inputTokens} input tokens)`);

      // A new session of the edited agent gets the new configuration (spec 3.4 rule 3).
      const fresh = await app.request('POST', '/v1/sessions', { body: { agent_id: agentA } });
      assert.ok(fresh.body.features.includes('key_value'), JSON.stringify(fresh.body.features));

      const agentB = await createAgent(app, { system_prompt: LONG_PROMPT, capabilities: ['current_time', 'session_storage'] });
      const switched = await app.request('PATCH', `/v1/sessions/${id}`, { body: { agent_id: agentB } });
      assert.equal(switched.status, 200, switched.text);
      assert.ok(switched.body.features.includes('key_value'), 'features describe the new agent');
      // Editing B after the switch changes nothing either: the switch took the snapshot.
      assert.equal(
        (await app.request('PATCH', `/v1/agents/${agentB}`, { body: { system_prompt: 'Tiny.', capabilities: ['current_time'] } })).status,
        200,
      );
      assert.deepEqual((await getSession(app, id)).features, switched.body.features);

      const second = await runToolTurn(app, id, 2);
      assert.equal(second.results.get('kv_store')?.['success'], true, JSON.stringify(second.results.get('kv_store')));
      assert.ok(second.inputTokens > 1000, `the new agent's prompt was used (${second.inputTokens} input tokens)`);
    });

    it('the harness is fixed at creation: editing it later, even before an agent switch, does not reach the session', async () => {
      const app = shared();
      const h = await app.request('POST', '/v1/harnesses', {
        body: { name: 'base', system_prompt: 'Base.', capabilities: ['current_time'] },
      });
      assert.equal(h.status, 201, h.text);
      const agentA = await createAgent(app);
      const created = await app.request('POST', '/v1/sessions', { body: { harness_id: h.body.id, agent_id: agentA } });
      assert.equal(created.status, 201, created.text);
      assert.equal(
        (await app.request('PATCH', `/v1/harnesses/${h.body.id}`, { body: { capabilities: ['current_time', 'session_storage'] } })).status,
        200,
      );
      const agentB = await createAgent(app, { capabilities: ['session_file_system'] });
      const switched = await app.request('PATCH', `/v1/sessions/${created.body.id}`, { body: { agent_id: agentB } });
      assert.equal(switched.status, 200, switched.text);
      assert.deepEqual(switched.body.features, ['file_system'], 'the new agent applies, the edited harness does not');
      const turn = await runToolTurn(app, created.body.id, 1);
      assert.equal(turn.results.get('kv_store')?.['error'], 'Unknown tool: kv_store');
      assert.equal(turn.results.get('get_current_time')?.['success'], true, 'the harness as created still applies');
    });

    it('a session without a snapshot (pre-0010 row) is backfilled with the live agent and its features recomputed', async () => {
      const app = shared();
      const sql = app.app.services.store.sql.bind(app.app.services.store);
      const agent = await createAgent(app, { capabilities: ['current_time'] });
      const created = await app.request('POST', '/v1/sessions', { body: { agent_id: agent } });
      const id = created.body.id as string;
      assert.equal(
        (
          await app.request('PATCH', `/v1/agents/${agent}`, {
            body: { capabilities: ['session_storage', { ref: 'session_file_system', config: { max_file_size_mb: 1 } }] },
          })
        ).status,
        200,
      );
      await sql(`update sessions set config = null where id = ?`, [id]);

      await sql(sessionConfigBackfillSql());
      const session = await getSession(app, id);
      assert.deepEqual([...session.features].sort(), ['file_system', 'key_value', 'secrets']);
      const [row] = await sql<{ config: any }>(`select config from sessions where id = ?`, [id]);
      assert.deepEqual(row!.config.agent.capabilities, [
        'session_storage',
        { ref: 'session_file_system', config: { max_file_size_mb: 1 } },
      ]);
      assert.match(row!.config.harness.system_prompt, /You are an AI agent/, 'the generic harness prompt');

      // From now on the agent's edits stay out of the session.
      assert.equal((await app.request('PATCH', `/v1/agents/${agent}`, { body: { capabilities: ['current_time'] } })).status, 200);
      const turn = await runToolTurn(app, id, 1);
      assert.equal(turn.results.get('kv_store')?.['success'], true);
      assert.equal(turn.results.get('get_current_time')?.['error'], 'Unknown tool: get_current_time');

      // A row written without a copy after the migration (a pre-0010 instance in a rolling
      // upgrade) runs with the live rows, and its first turn stores the copy and its features.
      const late = (await app.request('POST', '/v1/sessions', { body: { agent_id: agent } })).body.id as string;
      await sql(`update sessions set config = null, features = '[]' where id = ?`, [late]);
      assert.equal(
        (await app.request('PATCH', `/v1/agents/${agent}`, { body: { capabilities: ['current_time', 'session_storage'] } })).status,
        200,
      );
      const lateTurn = await runToolTurn(app, late, 1);
      assert.equal(lateTurn.results.get('kv_store')?.['success'], true);
      const [stored] = await sql<{ config: any }>(`select config from sessions where id = ?`, [late]);
      assert.deepEqual(stored!.config.agent.capabilities, ['current_time', 'session_storage']);
      assert.deepEqual([...(await getSession(app, late)).features].sort(), ['key_value', 'secrets']);
    });
  });
}
