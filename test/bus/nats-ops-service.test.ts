import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Svcm, type ServiceIdentity, type ServiceInfo, type ServiceStats } from '@nats-io/services';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { OPS_SERVICE_NAME, OPS_SUBJECT_PREFIX } from '../../src/bus/nats/ops-service.js';
import type { InstanceStatus } from '../../src/bus/ports.js';
import { startTestApp } from '../helpers/app.js';
import { natsClientOptions, startNatsServer } from '../helpers/nats-server.js';
import { request } from '../helpers/http.js';
import { createSession, listEvents, sendMessage, waitForEvent } from '../turns/helpers.js';

async function all<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/** What an operator's `nats micro stats` shows of one instance: the status endpoint's data. */
function statusOf(stats: ServiceStats): InstanceStatus {
  return stats.endpoints!.find((e) => e.name === 'status')!.data as InstanceStatus;
}

async function ask(nc: NatsConnection, id: string, endpoint: string): Promise<InstanceStatus> {
  const m = await nc.request(`${OPS_SUBJECT_PREFIX}.${id}.${endpoint}`, '', { timeout: 5000 });
  return m.json<InstanceStatus>();
}

describe('NATS micro service (@nats-io/services): nats micro ls / info / stats, drain', () => {
  it('lists api and worker instances with role, version, uptime, turns in flight and SSE connections; drain stops claiming, resume undoes it', async (t) => {
    const server = await startNatsServer({ t });
    const api = await startTestApp(t, { mode: 'nats', natsUrl: server.url, env: { ROLE: 'api', INSTANCE_ID: 'api-1' } });
    const worker = await startTestApp(t, {
      mode: 'nats',
      natsUrl: server.url,
      databaseUrl: api.databaseUrl,
      env: { ROLE: 'worker', INSTANCE_ID: 'worker-1' },
    });
    const nc = await connect(await natsClientOptions(server));
    t.after(() => nc.close());
    const client = new Svcm(nc).client({ strategy: 'stall', maxWait: 1000 });

    // nats micro ls: both instances answer PING under the one service name. A `stall` collection ends
    // 300 ms after the last answer, which a loaded machine can exceed: ask again until both are seen.
    let pings: ServiceIdentity[] = [];
    for (let attempt = 0; attempt < 10 && pings.length < 2; attempt++) {
      pings = (await all(await client.ping(OPS_SERVICE_NAME))) as ServiceIdentity[];
    }
    assert.equal(pings.length, 2);
    assert.deepEqual(pings.map((p) => p.metadata?.['instance_id']).sort(), ['api-1', 'worker-1']);
    assert.ok(pings.every((p) => p.version === '0.1.0'));
    const idOf = (instance: string) => pings.find((p) => p.metadata?.['instance_id'] === instance)!.id;

    // nats micro info: metadata (role, mode, host, pid) and the endpoints with their subjects.
    const infos = (await all(await client.info(OPS_SERVICE_NAME))) as ServiceInfo[];
    const workerInfo = infos.find((i) => i.id === idOf('worker-1'))!;
    assert.equal(workerInfo.metadata?.['role'], 'worker');
    assert.equal(workerInfo.metadata?.['mode'], 'distributed');
    assert.equal(workerInfo.metadata?.['pid'], String(process.pid));
    assert.deepEqual(
      workerInfo.endpoints.map((e) => e.subject).sort(),
      ['drain', 'resume', 'status'].map((e) => `${OPS_SUBJECT_PREFIX}.${workerInfo.id}.${e}`),
    );

    // A running turn and an open SSE stream show in nats micro stats.
    const { id: sessionId } = await createSession(api);
    const sse = await fetch(`${api.url}/v1/sessions/${sessionId}/sse`, { headers: { Authorization: `Bearer ${api.adminKey}` } });
    t.after(() => sse.body?.cancel());
    assert.equal((await sendMessage(api, sessionId, '@tokens 40 delay=50')).status, 201);
    await waitForEvent(api, sessionId, 'output.message.delta');
    const stats = (await all(await client.stats(OPS_SERVICE_NAME))) as ServiceStats[];
    const byInstance = Object.fromEntries(stats.map((s) => [statusOf(s).instance_id, statusOf(s)]));
    assert.equal(byInstance['worker-1']!.role, 'worker');
    assert.equal(byInstance['worker-1']!.turns_in_flight, 1);
    assert.equal(byInstance['api-1']!.role, 'api');
    assert.equal(byInstance['api-1']!.sse_connections, 1);
    assert.equal(byInstance['api-1']!.turns_in_flight, 0);
    assert.ok(byInstance['api-1']!.uptime_s >= 0);
    // One instance's stats by id; the status endpoint answers the same figures.
    const one = (await all(await client.stats(OPS_SERVICE_NAME, idOf('worker-1')))) as ServiceStats[];
    assert.equal(one.length, 1);
    assert.equal((await ask(nc, idOf('api-1'), 'status')).sse_connections, 1);

    // Drain the worker: the running turn finishes, the next one waits; /health says draining.
    const drained = await ask(nc, idOf('worker-1'), 'drain');
    assert.equal(drained.draining, true);
    assert.equal(drained.turns_in_flight, 1);
    await waitForEvent(api, sessionId, 'session.idled', { timeoutMs: 20_000 });
    const health = await request(worker.url, 'GET', '/health');
    assert.equal(health.status, 503);
    assert.equal(health.body.checks.drain, 'draining');
    assert.equal((await request(api.url, 'GET', '/health')).status, 200, 'only the drained instance leaves the pool');
    assert.equal((await sendMessage(api, sessionId, 'second')).status, 201);
    await sleep(1500);
    assert.equal(
      (await listEvents(api, sessionId)).filter((e) => e.type === 'reason.started').length,
      1,
      'a drained worker claims no turn',
    );
    assert.equal((await ask(nc, idOf('worker-1'), 'status')).turns_in_flight, 0);

    const resumed = await ask(nc, idOf('worker-1'), 'resume');
    assert.equal(resumed.draining, false);
    await waitForEvent(api, sessionId, 'session.idled', { n: 2, timeoutMs: 20_000 });
    assert.equal((await request(worker.url, 'GET', '/health')).status, 200);

    // Shutdown deregisters: only the api instance still answers.
    await worker.app.close();
    const after = (await all(await client.ping(OPS_SERVICE_NAME))) as ServiceIdentity[];
    assert.deepEqual(
      after.map((p) => p.metadata?.['instance_id']),
      ['api-1'],
    );
  });
});
