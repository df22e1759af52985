/**
 * An MCP header naming the session creator's connection (`{{secret:connection:<provider>}}`):
 * the turn lists the server's tools with it and calls them with it, for the creator. The listing
 * at the turn's start once read the secrets without the turn's user, so the connection was
 * withheld there and the server's tools were never offered.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestApp } from '../../helpers/app.js';
import { createSession, sendMessage, watch } from '../../turns/helpers.js';
import { startDemoServer } from './mcp-server.js';

const KEY = 'conn-key-5e1d7a9b3c2f4086';

describe('mcp tools: a header from the creator’s connection (pglite)', () => {
  it('the listing and the call carry the connection’s value; the result shows its name only', async (t) => {
    const demo = await startDemoServer(t);
    const app = await startTestApp(t, { mode: 'pglite', env: { MCP_ALLOWED_PRIVATE_HOSTS: '127.0.0.1' } });
    assert.equal((await app.request('POST', '/v1/user/connections/mcpdemo', { body: { api_key: KEY } })).status, 201);
    const config = { servers: [{ name: 'demo', url: demo.url, headers: { Authorization: 'Bearer {{secret:connection:mcpdemo}}' } }] };
    const { id } = await createSession(app, { capabilities: [{ ref: 'mcp', config }] });
    // A provider the service knows no hosts for: its creator binds the value to the server's host.
    const bind = await app.request('PUT', `/v1/sessions/${id}/storage/secrets`, {
      body: { secrets: { 'connection:mcpdemo': { value: KEY, allowed_hosts: ['127.0.0.1'] } } },
    });
    assert.equal(bind.status, 200, bind.text);
    const sse = await watch(app, id);
    t.after(() => sse.close());
    assert.equal((await sendMessage(app, id, '@tool demo__echo {"text":"hi"}')).status, 201);
    const events = await sse.until('session.idled', 1, 30_000);
    const done = events.find((e) => e.type === 'tool.completed')!.data;
    assert.equal(done['success'], true, JSON.stringify(done));
    assert.deepEqual(done['result'], [{ type: 'text', text: 'echo: hi; auth=Bearer [secret:connection:mcpdemo]' }]);
    assert.equal(demo.authorizations.at(-1), `Bearer ${KEY}`, 'the server received the real value');
    assert.ok(!JSON.stringify(events).includes(KEY));
  });
});
