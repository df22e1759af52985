import assert from 'node:assert/strict';
import { it } from 'node:test';
import { startTestApp } from '../../helpers/app.js';
import { createAgent } from '../../turns/helpers.js';

it('sessions: an unknown or invalid model_id on create is 404 Not found (spec 4.2), and nothing is created', async (t) => {
  const app = await startTestApp(t, { mode: 'postgres' });
  const agentId = await createAgent(app);
  // "llmsim" names the built-in model (issue 30 item 18: test/api/llm-models/llmsim-setting.test.ts).
  for (const model_id of ['not-a-uuid', '', '0190e0a0-0000-7000-8000-000000000000', 'x'.repeat(1024)]) {
    const r = await app.request('POST', '/v1/sessions', { body: { agent_id: agentId, model_id } });
    assert.equal(r.status, 404, `${model_id.slice(0, 20)}: ${r.text}`);
    assert.deepEqual(r.body, { error: 'Not found', status: 404 });
  }
  assert.equal(
    (await app.request('POST', '/v1/sessions', { body: { agent_id: agentId, model_id: 42 } })).status,
    400,
    'not a string at all is malformed JSON input',
  );
  assert.equal((await app.request('GET', '/v1/sessions')).body.total, 0);
});
