import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createKeyring, createRotationSources, envelopeKeyId, rotateSecrets } from '../../src/crypto/index.js';
import { startTestApp } from '../helpers/app.js';
import { keySpec } from '../crypto/keys.js';
import { FAST_WEBHOOKS, startReceiver } from './receiver.js';

it('rotate-keys re-wraps webhook signing secrets (current and previous); deliveries are still signed with them after', async (t) => {
  const k1 = keySpec('kek-1');
  const k2 = keySpec('kek-2');
  const rx = await startReceiver(t);
  const first = await startTestApp(t, { env: { ...FAST_WEBHOOKS, SECRETS_ENCRYPTION_KEY: k1 } });
  const created = await first.request('POST', '/v1/webhooks', { body: { url: rx.url, event_types: ['turn.failed'] } });
  assert.equal(created.status, 201, created.text);
  const id = created.body.endpoint.id as string;
  const rotated = await first.request('POST', `/v1/webhooks/${id}/rotate-secret`, { body: { overlap_seconds: 3600 } });
  assert.equal(rotated.status, 200, rotated.text);
  rx.secrets = [created.body.secret, rotated.body.secret];
  await first.app.close();

  const during = await startTestApp(t, {
    databaseUrl: first.databaseUrl,
    env: { ...FAST_WEBHOOKS, SECRETS_ENCRYPTION_KEY: k2, SECRETS_ENCRYPTION_KEY_PREVIOUS: k1 },
  });
  const reports = await rotateSecrets(createKeyring({ current: k2, previous: k1 }), createRotationSources(during.app.services.store));
  for (const name of ['webhook_endpoints.secret', 'webhook_endpoints.previous_secret']) {
    const r = reports.find((x) => x.source === name)!;
    assert.deepEqual({ rewrapped: r.rewrapped, failed: r.failed }, { rewrapped: 1, failed: [] }, name);
  }
  const [row] = await during.app.services.store.sql<{ a: string; b: string }>(
    'select secret_encrypted as a, previous_secret_encrypted as b from webhook_endpoints where id = ?',
    [id],
  );
  assert.deepEqual([envelopeKeyId(row!.a), envelopeKeyId(row!.b)], ['kek-2', 'kek-2']);
  await during.app.close();

  const after = await startTestApp(t, { databaseUrl: first.databaseUrl, env: { ...FAST_WEBHOOKS, SECRETS_ENCRYPTION_KEY: k2 } });
  assert.equal((await after.request('POST', `/v1/webhooks/${id}/test`)).status, 202);
  const [got] = await rx.waitFor((all) => all.length === 1);
  assert.deepEqual(got!.verifiedBy, [0, 1], 'both secrets still sign');
});
