import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ApiError } from '@agent-session-service/client';
import { startTestApp } from '../helpers/app.js';
import { FAST_WEBHOOKS, startReceiver } from '../webhooks/receiver.js';
import { clientOf, newSession } from './helpers.js';

it('the typed client manages webhooks: create (secret once), test-send, deliveries with attempts, redeliver, rotate, delete', async (t) => {
  const app = await startTestApp(t, { mode: 'pglite', env: FAST_WEBHOOKS });
  const rx = await startReceiver(t);
  const client = clientOf(app);
  const { endpoint, secret } = await client.webhooks.create({ url: rx.url, event_types: ['turn.completed'], description: 'crm' });
  rx.secrets = [secret];
  assert.equal((await client.webhooks.list()).total, 1);
  const queued = await client.webhooks.testSend(endpoint.id);
  await rx.waitFor((all) => all.length === 1);
  assert.deepEqual(rx.received[0]!.verifiedBy, [0]);
  assert.equal(rx.received[0]!.json.type, 'webhook.test');
  // A real turn's completion arrives too.
  const sessionId = await newSession(client);
  await client.sessions.sendAndWait(sessionId, 'hi');
  await rx.waitFor((all) => all.some((r) => r.json.type === 'turn.completed'));
  const page = await client.webhooks.deliveries(endpoint.id, { limit: 10 });
  assert.equal(page.total, 2);
  const detail = await client.webhooks.delivery(endpoint.id, queued.id);
  assert.equal(detail.attempts[0]!.status, 200);
  await client.webhooks.redeliver(endpoint.id, queued.id);
  await rx.waitFor((all) => all.filter((r) => r.id === `msg_${queued.id}`).length === 2);
  const rotated = await client.webhooks.rotateSecret(endpoint.id, { overlap_seconds: 60 });
  assert.notEqual(rotated.secret, secret);
  const off = await client.webhooks.update(endpoint.id, { status: 'disabled' });
  assert.equal(off.status, 'disabled');
  await client.webhooks.remove(endpoint.id);
  await assert.rejects(client.webhooks.get(endpoint.id), (e: unknown) => e instanceof ApiError && e.status === 404);
});
