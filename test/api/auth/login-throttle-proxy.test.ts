import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request, startTestApp, type TestApp } from '../../helpers/app.js';
import { uniqueEmail } from './helpers.js';

const attemptFrom = (app: TestApp, forwardedFor: string) =>
  request(app.url, 'POST', '/v1/auth/login', {
    key: null,
    headers: { 'x-forwarded-for': forwardedFor },
    body: { email: uniqueEmail('proxy'), password: 'spray-password' },
  });

const THROTTLE = { LOGIN_MAX_ATTEMPTS_PER_IP: 4, LOGIN_THROTTLE_WINDOW_S: 60 };

test('login throttling per IP behind a trusted proxy (TRUST_PROXY=loopback) - each X-Forwarded-For client has its own budget', async (t) => {
  // The test client connects over loopback, so it plays the load balancer here.
  const app = await startTestApp(t, { mode: 'postgres', env: { ...THROTTLE, TRUST_PROXY: 'loopback' } });
  for (let i = 0; i < 4; i++) assert.equal((await attemptFrom(app, '203.0.113.1')).status, 401);
  assert.equal((await attemptFrom(app, '203.0.113.1')).status, 429, 'the client behind the proxy is cut off');
  assert.equal((await attemptFrom(app, '203.0.113.2')).status, 401, 'another client behind the same proxy is not');
  // A client that prepends its own X-Forwarded-For entry is still keyed by what the proxy appended.
  assert.equal((await attemptFrom(app, '198.51.100.77, 203.0.113.1')).status, 429);
});

test('login throttling per IP - an untrusted peer cannot escape the throttle by rotating X-Forwarded-For', async (t) => {
  const app = await startTestApp(t, { mode: 'postgres', env: { ...THROTTLE, TRUST_PROXY: '10.0.0.0/8' } });
  for (let i = 0; i < 4; i++) assert.equal((await attemptFrom(app, `203.0.113.${10 + i}`)).status, 401);
  assert.equal((await attemptFrom(app, '203.0.113.99')).status, 429, 'keyed by the socket peer, the header ignored');
});
