import assert from 'node:assert/strict';
import { it } from 'node:test';
import { startTestApp } from '../../helpers/app.js';
import { addCaller, adminOrgId } from '../agents/helpers.js';
import { createSession } from '../../turns/helpers.js';

it('events: the owner of a session this instance created is known without reading its row; a delete here forgets it', async (t) => {
  const app = await startTestApp(t, { mode: 'postgres' });
  const { store } = app.app.services;
  const { id } = await createSession(app);
  const member = await addCaller(app, { role: 'member', orgId: await adminOrgId(app) });
  assert.equal((await member.request('GET', `/v1/sessions/${id}/events`)).status, 403, 'a known owner still refuses another member');

  // The row goes away behind this instance's back (another instance's delete): for the owner
  // window (docs/decisions/0078-session-owners-and-guarded-agent-insert.md) this instance answers from what session create told it.
  const { id: other } = await createSession(app);
  await store.sql('delete from sessions where id = ?', [other]);
  assert.equal((await app.request('GET', `/v1/sessions/${other}/events`)).status, 200, 'answered from the owner this instance remembered');

  assert.equal((await app.request('DELETE', `/v1/sessions/${id}`)).status, 204);
  assert.equal((await app.request('GET', `/v1/sessions/${id}/events`)).status, 404, 'a delete on this instance is seen at once');
  assert.equal((await app.request('GET', `/v1/sessions/${id}/messages`)).status, 404);
});
