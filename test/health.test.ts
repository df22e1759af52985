import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestApp } from './helpers/app.js';
import { startNatsServer } from './helpers/nats-server.js';
import { request } from './helpers/http.js';

describe('GET /health', () => {
  it('is 200 with every check ok, without credentials (embedded mode)', async (t) => {
    const { url } = await startTestApp(t, { mode: 'pglite' });
    const res = await request(url, 'GET', '/health');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { status: 'ok', checks: { database: 'ok', bus: 'ok' } });
  });

  it('turns 503 naming the bus while NATS is down and 200 again after it restarts, without restarting the service', async (t) => {
    const nats = await startNatsServer();
    t.after(() => nats.stop());
    const { url } = await startTestApp(t, { mode: 'nats', natsUrl: nats.url });
    assert.equal((await request(url, 'GET', '/health')).status, 200);
    await nats.stop();
    let down = await request(url, 'GET', '/health');
    for (let i = 0; i < 20 && down.status !== 503; i++) down = await request(url, 'GET', '/health');
    assert.equal(down.status, 503);
    assert.deepEqual(down.body, { status: 'unhealthy', checks: { database: 'ok', bus: 'unreachable' } });
    await nats.restart();
    let up = down;
    for (let i = 0; i < 50 && up.status !== 200; i++) {
      await sleep(200);
      up = await request(url, 'GET', '/health');
    }
    assert.equal(up.status, 200);
    assert.equal(up.body.checks.bus, 'ok');
  });
});
