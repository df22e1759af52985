import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSessionSetupResolver } from '../../../src/api/sessions/setup-resolver.js';
import { createCapabilityRegistry } from '../../../src/capabilities/index.js';
import { startTestApp, type TestMode } from '../../helpers/app.js';

/**
 * Session create may take the agent from the setup resolver's memory; the insert is guarded by
 * the agent row's version, so a session still snapshots the agent as it is at that moment,
 * whoever changed it (this instance's API, or another instance writing the row).
 */
for (const mode of ['postgres', 'pglite'] as TestMode[]) {
  describe(`session create snapshots the agent as it is now, with the agent remembered (${mode})`, () => {
    it('an edit through the API, a write behind the instance, an archive', async (t) => {
      const app = await startTestApp(t, { mode });
      const { store } = app.app.services;
      const agent = (await app.request('POST', '/v1/agents', { body: { name: 'remembered', system_prompt: 'First.' } })).body;
      const promptOf = async (sessionId: string) => {
        const [row] = await store.sql<{ config: { agent: { system_prompt: string } } | string }>(
          'select config from sessions where id = ?',
          [sessionId],
        );
        const config = typeof row!.config === 'string' ? JSON.parse(row!.config) : row!.config;
        return config.agent.system_prompt as string;
      };
      const create = () => app.request('POST', '/v1/sessions', { body: { agent_id: agent.id } });

      const first = await create();
      assert.equal(first.status, 201, first.text);
      assert.equal(await promptOf(first.body.id), 'First.');
      assert.equal(await promptOf((await create()).body.id), 'First.', 'from memory, unchanged');

      assert.equal((await app.request('PATCH', `/v1/agents/${agent.id}`, { body: { system_prompt: 'Second.' } })).status, 200);
      assert.equal(await promptOf((await create()).body.id), 'Second.', 'an API edit is snapshotted by the next session');

      await store.sql(`update agents set system_prompt = 'Third.' where id = ?`, [agent.id]);
      assert.equal(await promptOf((await create()).body.id), 'Third.', "another instance's write is snapshotted too");

      await store.sql(`update agents set status = 'archived' where id = ?`, [agent.id]);
      const archived = await create();
      assert.equal(archived.status, 422, archived.text);
      assert.equal(archived.body.error, 'Agent is archived');
    });
  });
}

it('session creates that miss the remembered agent together share one read of it', async (t) => {
  const app = await startTestApp(t, { mode: 'postgres' });
  const real = app.app.modules.agents.service;
  let reads = 0;
  const agents = { ...real, getActive: (orgId: string, id: string) => (reads++, real.getActive(orgId, id)) };
  const setup = createSessionSetupResolver({
    agents,
    harnesses: app.app.modules.harnesses.service,
    capabilities: createCapabilityRegistry(),
  });
  const agent = (await app.request('POST', '/v1/agents', { body: { name: 'shared', system_prompt: 'Hi.' } })).body;
  const [admin] = await app.app.services.store.sql<{ organization_id: string; id: string }>(
    'select organization_id, id from users limit 1',
  );
  const principal = {
    org_id: admin!.organization_id,
    user_id: admin!.id,
    role: 'admin',
    operator: true,
    via: 'api_key',
    key_id: 'k',
  } as const;
  const all = await Promise.all(Array.from({ length: 20 }, () => setup.resolve(principal, { agent_id: agent.id, guarded: true })));
  assert.ok(all.every((r) => r.config.agent?.system_prompt === 'Hi.' && r.agent_version));
  assert.equal(reads, 1, 'one read for all twenty');
});
